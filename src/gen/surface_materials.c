/* Surface materials: each sample's material by precedence (explicit biome material, role binding,
 * biome tint) and engine-safe names for them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "terrane/roles.h"

/* Candidate keys: explicit material of biome b, then the binding of role r, then the tint of
 * biome b; their order is the listing order of the names. */
#define SM_BIOMES 256u
#define SM_KEYS (SM_BIOMES + TRN_ROLE_COUNT + SM_BIOMES)

const char *trn_surface_source_name(trn_surface_source source)
{
    switch (source) {
    case TRN_SURFACE_EXPLICIT:
        return "explicit";
    case TRN_SURFACE_ROLE:
        return "role";
    case TRN_SURFACE_TINT:
        return "biome";
    }
    return "unknown";
}

void trn_surface_materials_dispose(trn_surface_materials *m)
{
    if (!m) return;
    trn_labels_dispose(&m->labels);
    memset(m, 0, sizeof *m);
}

static const char *explicit_material(const trn_surface_materials_input *in, uint32_t biome)
{
    if (!in->recipe_biomes || biome >= in->recipe_biome_count) return NULL;
    const char *id = in->recipe_biomes[biome].material;
    return id && id[0] ? id : NULL;
}

/* The candidate key of sample k (its biome label is a named one). */
static uint32_t sample_key(const trn_surface_materials_input *in, size_t k, uint8_t biome,
                           uint8_t *fallback_role)
{
    *fallback_role = TRN_ROLE_NONE;
    if (explicit_material(in, biome)) return biome;
    const uint8_t role = in->roles ? in->roles[k] : (uint8_t)TRN_ROLE_NONE;
    if (role < TRN_ROLE_COUNT && in->set && in->set->roles[role] && in->set->roles[role][0])
        return SM_BIOMES + role;
    *fallback_role = role < TRN_ROLE_COUNT ? role : (uint8_t)TRN_ROLE_NONE;
    return SM_BIOMES + TRN_ROLE_COUNT + biome;
}

static const char *key_name(const trn_surface_materials_input *in, uint32_t key)
{
    if (key < SM_BIOMES) return explicit_material(in, key);
    if (key < SM_BIOMES + TRN_ROLE_COUNT) return in->set->roles[key - SM_BIOMES];
    return in->biomes->names[key - SM_BIOMES - TRN_ROLE_COUNT];
}

trn_status trn_surface_materials_assign(const trn_surface_materials_input *in,
                                        trn_surface_materials *out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface materials: no output");
    memset(out, 0, sizeof *out);
    if (!in || !in->biomes || !in->biomes->values)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface materials: expected a biome label map, found none");
    const trn_labels *bl = in->biomes;
    const size_t n = ((size_t)bl->cells_x + 1u) * ((size_t)bl->cells_z + 1u);
    if (in->roles && in->role_count != n)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "surface materials: %zu roles for %zu samples (%u x %u cells)",
                             in->role_count, n, bl->cells_x, bl->cells_z);
    if (in->recipe_biomes && in->recipe_biome_count != bl->name_count)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "surface materials: %u recipe biomes for a map naming %u biomes",
                             in->recipe_biome_count, bl->name_count);

    /* First pass: samples per candidate, and the fallbacks. */
    uint64_t *count = calloc(SM_KEYS, sizeof *count);
    if (!count) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    trn_surface_materials m;
    memset(&m, 0, sizeof m);
    for (size_t k = 0; k < n; k++) {
        const uint8_t biome = bl->values[k];
        if (biome == TRN_LABEL_NONE) {
            m.holes++;
            continue;
        }
        if (biome >= bl->name_count) {
            free(count);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "surface materials: sample %zu: biome label %u, but the map "
                                 "names %u biome%s",
                                 k, biome, bl->name_count, bl->name_count == 1 ? "" : "s");
        }
        uint8_t fallback;
        const uint32_t key = sample_key(in, k, biome, &fallback);
        count[key]++;
        if (key >= SM_BIOMES + TRN_ROLE_COUNT) {
            if (fallback < TRN_ROLE_COUNT)
                m.unbound[fallback]++;
            else
                m.no_role++;
        }
    }

    /* The names, in key order, each once. */
    uint8_t map[SM_KEYS];
    memset(map, TRN_LABEL_NONE, sizeof map);
    trn_status st = trn_labels_init(&m.labels, bl->cells_x, bl->cells_z, err);
    for (uint32_t key = 0; !st && key < SM_KEYS; key++) {
        if (!count[key]) continue;
        const char *name = key_name(in, key);
        uint32_t found = m.labels.name_count;
        for (uint32_t j = 0; j < m.labels.name_count && found == m.labels.name_count; j++)
            if (strcmp(m.labels.names[j], name) == 0) found = j;
        if (found == m.labels.name_count) {
            if (found == TRN_SURFACE_MATERIALS_MAX) {
                st = trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                                   "surface materials: more than %u materials ('%s' is one too "
                                   "many)",
                                   TRN_SURFACE_MATERIALS_MAX, name);
                break;
            }
            if ((st = trn_labels_add_name(&m.labels, name, strlen(name), err))) break;
            trn_surface_material *mat = &m.materials[found];
            if (key < SM_BIOMES) {
                *mat = (trn_surface_material){TRN_SURFACE_EXPLICIT, TRN_ROLE_NONE, (uint8_t)key, 0};
            } else if (key < SM_BIOMES + TRN_ROLE_COUNT) {
                *mat = (trn_surface_material){TRN_SURFACE_ROLE, (uint8_t)(key - SM_BIOMES),
                                              TRN_LABEL_NONE, 0};
            } else {
                *mat = (trn_surface_material){TRN_SURFACE_TINT, TRN_ROLE_NONE,
                                              (uint8_t)(key - SM_BIOMES - TRN_ROLE_COUNT), 0};
            }
        }
        m.materials[found].samples += count[key];
        map[key] = (uint8_t)found;
    }
    free(count);
    if (st) {
        trn_surface_materials_dispose(&m);
        return st;
    }

    /* Second pass: each sample's material index. */
    for (size_t k = 0; k < n; k++) {
        const uint8_t biome = bl->values[k];
        uint8_t fallback;
        m.labels.values[k] = biome == TRN_LABEL_NONE ? (uint8_t)TRN_LABEL_NONE
                                                     : map[sample_key(in, k, biome, &fallback)];
    }
    *out = m;
    return TRN_OK;
}

/* Is name taken by one of names[0..count), ignoring case? */
static int name_taken(char (*names)[TRN_SURFACE_NAME_MAX], const uint8_t *named, uint32_t count,
                      const char *name)
{
    for (uint32_t j = 0; j < count; j++)
        if (named[j] && strcasecmp(names[j], name) == 0) return 1;
    return 0;
}

trn_status trn_surface_materials_engine_names(const trn_surface_materials *m,
                                              char (*names)[TRN_SURFACE_NAME_MAX], trn_error *err)
{
    if (!m || !names)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface material names: expected an assignment and an output");
    const uint32_t count = m->labels.name_count;
    uint8_t named[TRN_SURFACE_MATERIALS_MAX];
    memset(named, 0, sizeof named);
    /* Biome tints keep their names: the exports have always named biome materials so. */
    for (uint32_t k = 0; k < count; k++)
        if (m->materials[k].source == TRN_SURFACE_TINT) {
            snprintf(names[k], TRN_SURFACE_NAME_MAX, "%s", m->labels.names[k]);
            named[k] = 1;
        }
    for (uint32_t k = 0; k < count; k++) {
        if (named[k]) continue;
        const char *id = m->labels.names[k];
        const char *slash = strrchr(id, '/');
        const char *part = slash ? slash + 1 : id;
        char base[57];
        size_t len = 0;
        for (; part[len] && len < sizeof base - 1; len++) {
            const char c = part[len];
            const int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '_';
            base[len] = ok ? c : '_';
        }
        base[len] = '\0';
        if (!len) snprintf(base, sizeof base, "material");
        snprintf(names[k], TRN_SURFACE_NAME_MAX, "%s", base);
        /* A taken name: the first free "_N" suffix, N from 2. */
        for (uint32_t suffix = 2; name_taken(names, named, count, names[k]); suffix++)
            snprintf(names[k], TRN_SURFACE_NAME_MAX, "%s_%u", base, suffix);
        named[k] = 1;
    }
    return TRN_OK;
}
