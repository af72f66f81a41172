/* Legacy Torque Game Engine .ter files (versions 1-6), converted to layers as Torque3D does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "ter_internal.h"

/* Take n bytes or report the truncated section (offset = where the missing item starts). */
static const uint8_t *take_section(trn_cursor *c, size_t n, const char *path, const char *section,
                                   trn_error *err)
{
    size_t at = c->pos;
    const uint8_t *p = trn_cursor_take(c, n);
    if (!p)
        trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                      "%s: expected %zu bytes at offset %zu, the file ends at offset %zu", section,
                      n, at, c->size);
    return p;
}

/* A u8-length string (TGE's readSTString); *len_out is its stored length. */
static trn_status read_short_string(trn_cursor *c, const char *path, const char *section,
                                    char **out, size_t *len_out, trn_error *err)
{
    size_t at = c->pos;
    uint8_t len;
    if (!trn_cursor_u8(c, &len))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                             "%s: expected a length byte at offset %zu, the file ends there",
                             section, at);
    const uint8_t *p = take_section(c, len, path, section, err);
    if (!p) return TRN_ERR_TRUNCATED;
    *out = trn_ter_priv_strndup(p, len);
    if (!*out) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    if (len_out) *len_out = len;
    return TRN_OK;
}

/* A u32-length script (texture or heightfield script, version 3 on). */
static trn_status read_script(trn_cursor *c, const char *path, const char *section, char **out,
                              trn_error *err)
{
    size_t at = c->pos;
    uint32_t len;
    if (!trn_cursor_u32le(c, &len))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                             "%s: expected a 4-byte length at offset %zu, the file ends at "
                             "offset %zu",
                             section, at, c->size);
    const uint8_t *p = take_section(c, len, path, section, err);
    if (!p) return TRN_ERR_TRUNCATED;
    *out = trn_ter_priv_strndup(p, len);
    if (!*out) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    return TRN_OK;
}

static uint8_t *copy_bytes(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n);
    if (d) memcpy(d, p, n);
    return d;
}

/* Layer of each sample: the first largest alpha (strictly greater wins, all-zero gives 0),
 * clamped to the last material; version 1 has no alpha maps and uses the material group. With
 * no names the engine's clamp (count - 1, unsigned) does not bite, so nothing is clamped. */
static void compute_layers(trn_ter *t, const uint8_t *const alpha[TRN_TER_LEGACY_SLOTS],
                           uint32_t named)
{
    unsigned clamp = named ? named - 1 : 255u;
    for (size_t i = 0; i < TRN_TER_LEGACY_SAMPLES; i++) {
        unsigned layer = 0;
        if (t->version == 1) {
            layer = t->legacy_material_map[i] & 0x7u;
        } else {
            unsigned best = 0;
            for (uint32_t k = 0; k < named; k++) {
                if (alpha[k][i] > best) {
                    best = alpha[k][i];
                    layer = k;
                }
            }
        }
        t->layers[i] = (uint8_t)(layer < clamp ? layer : clamp);
    }
}

trn_status trn_ter_priv_parse_legacy(const uint8_t *data, size_t size, const char *path, trn_ter *t,
                                     trn_error *err)
{
    const size_t n = TRN_TER_LEGACY_SAMPLES;
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    c.pos = 1;
    t->version = data[0];
    t->layout = TRN_TER_LAYOUT_LEGACY;
    t->size = TRN_TER_LEGACY_SIZE;

    const uint8_t *p = take_section(&c, n * 2, path, "heights", err);
    if (!p) return TRN_ERR_TRUNCATED;
    t->heights = malloc(n * 2);
    if (!t->heights) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    for (size_t i = 0; i < n; i++)
        t->heights[i] = (uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));

    p = take_section(&c, n, path, "material map", err);
    if (!p) return TRN_ERR_TRUNCATED;
    t->legacy_material_map = copy_bytes(p, n);
    if (!t->legacy_material_map)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");

    /* Eight slots; an empty name is an unused slot and gets no alpha map. */
    unsigned slot_of[TRN_TER_LEGACY_SLOTS];
    size_t slot_len[TRN_TER_LEGACY_SLOTS];
    uint32_t named = 0;
    for (unsigned slot = 0; slot < TRN_TER_LEGACY_SLOTS; slot++) {
        char section[32];
        snprintf(section, sizeof section, "material name %u", slot);
        trn_status st =
            read_short_string(&c, path, section, &t->legacy_names[slot], &slot_len[slot], err);
        if (st) return st;
        if (slot_len[slot]) slot_of[named++] = slot;
    }
    t->materials = calloc(named ? named : 1, sizeof *t->materials);
    t->material_lengths = calloc(named ? named : 1, sizeof *t->material_lengths);
    if (!t->materials || !t->material_lengths)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    for (uint32_t k = 0; k < named; k++) {
        unsigned slot = slot_of[k];
        t->materials[k] =
            trn_ter_priv_strndup((const uint8_t *)t->legacy_names[slot], slot_len[slot]);
        if (!t->materials[k])
            return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
        t->material_lengths[k] = (uint32_t)slot_len[slot];
        t->material_count = k + 1;
    }

    const uint8_t *alpha[TRN_TER_LEGACY_SLOTS] = {NULL};
    if (t->version >= 2) {
        for (uint32_t k = 0; k < named; k++) {
            char section[64];
            snprintf(section, sizeof section, "alpha map %u", k);
            p = take_section(&c, n, path, section, err);
            if (!p) return TRN_ERR_TRUNCATED;
            t->legacy_alpha[slot_of[k]] = copy_bytes(p, n);
            if (!t->legacy_alpha[slot_of[k]])
                return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
            alpha[k] = t->legacy_alpha[slot_of[k]];
        }
    }
    trn_status st;
    const char *last = t->version >= 2 && named ? "last alpha map" : "material names";
    if (t->version >= 3) {
        st = read_script(&c, path, "texture script", &t->texture_script, err);
        if (!st) st = read_script(&c, path, "heightfield script", &t->heightfield_script, err);
        if (st) return st;
        last = "heightfield script";
    }
    if (t->version >= 5) {
        st = read_short_string(&c, path, "edge terrain path 0", &t->edge_paths[0], NULL, err);
        if (!st)
            st = read_short_string(&c, path, "edge terrain path 1", &t->edge_paths[1], NULL, err);
        if (st) return st;
        last = "edge terrain paths";
    }
    if (c.pos != size)
        return trn_error_set(err, TRN_ERR_TRAILING_DATA, path, (int64_t)c.pos,
                             "%zu bytes after the %s (at offset %zu), expected the end of a "
                             "version %u file",
                             size - c.pos, last, c.pos, t->version);

    t->layers = malloc(n);
    if (!t->layers) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    compute_layers(t, alpha, named);
    /* Layers are derived, so warnings about them point at no byte of the file. */
    return trn_ter_priv_check_layers(t, trn_ter_priv_layers_max(t->layers, n, 0), -1, -1, err);
}
