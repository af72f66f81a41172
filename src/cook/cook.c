/* Cooking: sections of a generated terrain, zstd-compressed into one *.terrain.bin payload. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/checked.h"
#include "runtime/payload_format.h"
#include "terrane/cook.h"

#define TEXT_MAX 65535u

typedef struct cook_section {
    char id[4];
    bool required;
    trn_pbuf raw;
    uint8_t *packed;
    size_t packed_size;
    const void *view; /* when set, the raw bytes (raw.size of them) are these, not raw.data's */
    size_t code;      /* pack_one's: 0, 1 (out of memory) or a zstd error code */
    uint64_t raw_hash, packed_hash;
} cook_section;

static trn_status bad(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s", what);
}

static bool text_fits(const char *s)
{
    return !s || strlen(s) <= TEXT_MAX;
}

/* ---- digests: every field that changes what a payload holds ---- */

static void dig_bytes(XXH64_state_t *st, const void *p, size_t n)
{
    XXH64_update(st, p, n);
}

static void dig_text(XXH64_state_t *st, const char *s)
{
    /* A length first, so ("ab", "c") and ("a", "bc") differ; NULL differs from "". */
    uint64_t n = s ? (uint64_t)strlen(s) : UINT64_MAX;
    dig_bytes(st, &n, sizeof n);
    if (s) dig_bytes(st, s, (size_t)n);
}

static void dig_f64(XXH64_state_t *st, double v)
{
    dig_bytes(st, &v, sizeof v);
}

static void dig_u64(XXH64_state_t *st, uint64_t v)
{
    dig_bytes(st, &v, sizeof v);
}

static void dig_band(XXH64_state_t *st, const trn_scatter_band *b)
{
    dig_u64(st, b->has);
    dig_f64(st, b->has ? b->lo : 0.0);
    dig_f64(st, b->has ? b->hi : 0.0);
}

uint64_t trn_cook_palette_digest(const trn_palette *p)
{
    if (!p) return 0;
    XXH64_state_t *st = XXH64_createState();
    if (!st) return 0;
    XXH64_reset(st, 0);
    dig_text(st, "palette");
    dig_text(st, p->name);
    dig_text(st, p->material_set);
    dig_f64(st, p->art_density);
    dig_f64(st, p->grass_density);
    dig_f64(st, p->tree_density);
    dig_f64(st, p->rock_density);
    dig_u64(st, p->rule_count);
    for (uint32_t r = 0; r < p->rule_count; r++) {
        const trn_scatter_rule *rule = &p->rules[r];
        dig_text(st, rule->id);
        dig_text(st, rule->model);
        dig_text(st, rule->prefab);
        dig_u64(st, (uint64_t)rule->category);
        dig_f64(st, rule->density);
        dig_f64(st, rule->candidate_spacing);
        dig_f64(st, rule->spacing);
        dig_f64(st, rule->scale[0]);
        dig_f64(st, rule->scale[1]);
        dig_f64(st, rule->yaw[0]);
        dig_f64(st, rule->yaw[1]);
        dig_u64(st, rule->biome_count);
        for (uint32_t b = 0; b < rule->biome_count; b++)
            dig_text(st, rule->biomes[b]);
        dig_band(st, &rule->slope);
        dig_band(st, &rule->moisture);
        dig_band(st, &rule->water_distance);
        dig_f64(st, rule->cluster_size);
        dig_f64(st, rule->cluster_strength);
        dig_u64(st, (uint64_t)rule->collision);
    }
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h ? h : 1u; /* 0 means "no palette" */
}

uint64_t trn_cook_material_set_digest(const trn_material_set *set)
{
    if (!set) return 0;
    XXH64_state_t *st = XXH64_createState();
    if (!st) return 0;
    XXH64_reset(st, 0);
    dig_text(st, "material_set");
    dig_text(st, set->name);
    for (int r = 0; r < TRN_ROLE_COUNT; r++)
        dig_text(st, set->roles[r]);
    const trn_material_mapping *m = &set->mapping;
    if (m->present) { /* absent: the digest of a set written before mappings existed */
        dig_text(st, "mapping");
        dig_u64(st, (uint64_t)m->texture_arrays | (uint64_t)m->triplanar << 1 |
                        (uint64_t)m->height_blend << 2);
        dig_f64(st, m->triplanar_slope);
        dig_f64(st, m->triplanar_sharpness);
        dig_f64(st, m->height_blend_contrast);
        dig_f64(st, m->macro_variation);
        dig_f64(st, m->macro_scale);
    }
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h ? h : 1u;
}

/* A map's path relative to its Material's project ("" for none): real paths inside it. */
static const char *map_in_project(const trn_material *m, int k)
{
    const char *path = m->paths[k];
    if (!path) return "";
    const size_t n = m->project ? strlen(m->project) : 0;
    return n && strncmp(path, m->project, n) == 0 && path[n] == '/' ? path + n + 1 : path;
}

uint64_t trn_cook_materials_digest(const trn_material_set *set, const trn_material *materials,
                                   uint32_t count)
{
    const uint64_t base = trn_cook_material_set_digest(set);
    if (!count || !materials) return base;
    XXH64_state_t *st = XXH64_createState();
    if (!st) return 0;
    XXH64_reset(st, 0);
    dig_u64(st, base);
    dig_text(st, "material documents");
    for (uint32_t k = 0; k < count; k++) {
        dig_text(st, materials[k].id);
        dig_f64(st, materials[k].texture_scale);
        for (int q = 0; q < TRN_MAP_COUNT; q++) dig_text(st, map_in_project(&materials[k], q));
    }
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h ? h : 1u;
}

/* ---- sections ---- */

static void put_biomes(trn_pbuf *w, const trn_generated *gen, const trn_recipe *recipe, size_t n)
{
    trn_pbuf_u32(w, gen->biomes.name_count);
    for (uint32_t b = 0; b < gen->biomes.name_count; b++) {
        const char *name = gen->biomes.names[b];
        trn_pbuf_text(w, name);
        const int idx = trn_recipe_find_biome(recipe, name);
        for (int c = 0; c < 4; c++)
            trn_pbuf_f32(w, idx >= 0 ? recipe->biomes[idx].color[c] : 0.0f);
    }
    trn_pbuf_bytes(w, gen->biomes.values, n);
}

/* BMAT: what a renderer needs per biome besides its colour, in BIOM's order. */
static void put_biome_materials(trn_pbuf *w, const trn_generated *gen, const trn_recipe *recipe)
{
    trn_pbuf_u32(w, gen->biomes.name_count);
    for (uint32_t b = 0; b < gen->biomes.name_count; b++) {
        const int idx = trn_recipe_find_biome(recipe, gen->biomes.names[b]);
        const trn_biome *bi = idx >= 0 ? &recipe->biomes[idx] : NULL;
        trn_pbuf_text(w, bi && bi->material ? bi->material : "");
        trn_pbuf_f64(w, bi && bi->texture_scale > 0.0 ? bi->texture_scale : 1.0);
    }
}

/* LDGR: every erosion node's ledger, in graph document order. */
static uint32_t ledger_count(const trn_generated *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->node_count; k++)
        n += g->nodes[k].has_ledger;
    return n;
}

static void put_ledgers(trn_pbuf *w, const trn_generated *g)
{
    trn_pbuf_u32(w, ledger_count(g));
    for (uint32_t k = 0; k < g->node_count; k++) {
        const trn_node_report *n = &g->nodes[k];
        if (!n->has_ledger) continue;
        trn_pbuf_text(w, n->id);
        trn_pbuf_f64(w, n->ledger.eroded);
        trn_pbuf_f64(w, n->ledger.deposited);
        trn_pbuf_f64(w, n->ledger.exported);
        trn_pbuf_f64(w, n->ledger.suspended);
        trn_pbuf_u64(w, n->ledger.droplets);
        trn_pbuf_u64(w, n->ledger.steps);
    }
}

static void put_scatter(trn_pbuf *w, const trn_palette *p, const trn_instances *inst)
{
    trn_pbuf_u32(w, p->rule_count);
    for (uint32_t r = 0; r < p->rule_count; r++) {
        const trn_scatter_rule *rule = &p->rules[r];
        trn_pbuf_text(w, rule->id);
        trn_pbuf_u8(w, (uint8_t)(rule->model ? 0u : 1u));
        trn_pbuf_text(w, rule->model ? rule->model : rule->prefab);
        trn_pbuf_u8(w, (uint8_t)rule->collision);
        trn_pbuf_u8(w, (uint8_t)rule->category);
    }
    const size_t count = inst ? inst->count : 0;
    trn_pbuf_u64(w, (uint64_t)count);
    for (size_t k = 0; k < count; k++) {
        const trn_instance *in = &inst->items[k];
        trn_pbuf_u32(w, in->rule);
        trn_pbuf_u64(w, (uint64_t)in->cx);
        trn_pbuf_u64(w, (uint64_t)in->cz);
        trn_pbuf_f64(w, in->x);
        trn_pbuf_f64(w, in->y);
        trn_pbuf_f64(w, in->z);
        trn_pbuf_f64(w, in->yaw);
        trn_pbuf_f64(w, in->scale);
    }
}

static void put_roles(trn_pbuf *w, const uint8_t *roles, size_t n, const trn_material_set *set)
{
    trn_pbuf_bytes(w, roles, n);
    trn_pbuf_u8(w, (uint8_t)(set ? 1u : 0u));
    if (!set) return;
    trn_pbuf_text(w, set->name);
    for (int r = 0; r < TRN_ROLE_COUNT; r++)
        trn_pbuf_text(w, set->roles[r]);
}

/* MAPM: the material set's mapping (written only when the set has one). */
static void put_mapping(trn_pbuf *w, const trn_material_mapping *m)
{
    trn_pbuf_u8(w, (uint8_t)((m->texture_arrays ? 1u : 0u) | (m->triplanar ? 2u : 0u) |
                             (m->height_blend ? 4u : 0u)));
    trn_pbuf_f64(w, m->triplanar_slope);
    trn_pbuf_f64(w, m->triplanar_sharpness);
    trn_pbuf_f64(w, m->height_blend_contrast);
    trn_pbuf_f64(w, m->macro_variation);
    trn_pbuf_f64(w, m->macro_scale);
}

/* MATD: the Material documents: count, then each one's id, texture scale and five map paths
 * (relative to its project; empty: none). */
static void put_material_docs(trn_pbuf *w, const trn_material *m, uint32_t count)
{
    trn_pbuf_u32(w, count);
    for (uint32_t k = 0; k < count; k++) {
        trn_pbuf_text(w, m[k].id ? m[k].id : "");
        trn_pbuf_f64(w, m[k].texture_scale);
        for (int q = 0; q < TRN_MAP_COUNT; q++) trn_pbuf_text(w, map_in_project(&m[k], q));
    }
}

static const char *section_label(const char *id)
{
    static const char *const names[][2] = {
        {TRN_SEC_HEIGHTS, "heights"},     {TRN_SEC_BIOMES, "biomes"},
        {TRN_SEC_BIOME_MATERIALS, "biome materials"}, {TRN_SEC_LEDGERS, "erosion ledgers"},
        {TRN_SEC_EXCLUSION, "exclusion"}, {TRN_SEC_WATER, "water"},
        {TRN_SEC_SCATTER, "scatter"},     {TRN_SEC_ROLES, "surface roles"},
        {TRN_SEC_RECIPE, "recipe"},       {TRN_SEC_MANIFEST, "manifest"},
        {TRN_SEC_MAPPING, "material mapping"}, {TRN_SEC_MATERIAL_DOCS, "material documents"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (memcmp(names[k][0], id, 4) == 0) return names[k][1];
    return "unknown";
}

/* JSON string body for text we wrote ourselves (ids may hold quotes or controls). */
static void put_json_text(trn_pbuf *w, const char *s)
{
    trn_pbuf_u8(w, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            trn_pbuf_u8(w, '\\');
            trn_pbuf_u8(w, *p);
        } else if (*p < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            trn_pbuf_bytes(w, esc, 6);
        } else {
            trn_pbuf_u8(w, *p);
        }
    }
    trn_pbuf_u8(w, '"');
}

/* The manifest: a JSON list of the other sections, for tools that only want to look. */
static void put_manifest(trn_pbuf *w, const cook_section *secs, size_t count, const char *id)
{
    char line[256];
    trn_pbuf_bytes(w, "{\"format\": \"terrane payload\", \"terrain_id\": ", 44);
    put_json_text(w, id);
    trn_pbuf_bytes(w, ", \"sections\": [", 15);
    for (size_t k = 0; k < count; k++) {
        const int n = snprintf(line, sizeof line,
                               "%s{\"id\": \"%.4s\", \"name\": \"%s\", \"required\": %s, "
                               "\"raw_size\": %zu}",
                               k ? ", " : "", secs[k].id, section_label(secs[k].id),
                               secs[k].required ? "true" : "false", secs[k].raw.size);
        trn_pbuf_bytes(w, line, (size_t)n);
    }
    trn_pbuf_bytes(w, "]}\n", 3);
}

static trn_status check_input(const trn_cook_input *in, size_t *samples, trn_error *err)
{
    if (!in || !in->generated || !in->recipe || !in->terrain_id)
        return bad(err, "trn_cook_encode: generated, recipe and terrain_id are required");
    const trn_generated *g = in->generated;
    *samples = trn_field_sample_count(&g->field);
    if (!g->field.heights || *samples == 0)
        return bad(err, "trn_cook_encode: the generated terrain has no heights");
    if (!g->biomes.values || g->biomes.cells_x != g->field.cells_x ||
        g->biomes.cells_z != g->field.cells_z)
        return bad(err, "trn_cook_encode: the biome labels are not on the height grid");
    if (g->biomes.name_count == 0 || g->biomes.name_count > TRN_PAYLOAD_MAX_BIOMES)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_cook_encode: %u biome names; a payload holds 1 to 255",
                             g->biomes.name_count);
    for (uint32_t b = 0; b < g->biomes.name_count; b++)
        if (!text_fits(g->biomes.names[b]))
            return bad(err, "trn_cook_encode: a biome name is over 65535 bytes");
    if (!text_fits(in->terrain_id) || !*in->terrain_id)
        return bad(err, "trn_cook_encode: terrain_id must be 1 to 65535 bytes");
    if (g->has_water &&
        (g->water.cells_x != g->field.cells_x || g->water.cells_z != g->field.cells_z ||
         g->water.size_x != g->field.size_x || g->water.size_z != g->field.size_z))
        return bad(err, "trn_cook_encode: the water is not on the height grid");
    if (in->instances && !in->palette)
        return bad(err, "trn_cook_encode: instances need the palette they came from");
    if (in->material_set && !in->roles)
        return bad(err, "trn_cook_encode: a material set binds roles: give the roles");
    if (in->palette) {
        for (uint32_t r = 0; r < in->palette->rule_count; r++) {
            const trn_scatter_rule *rule = &in->palette->rules[r];
            if (!text_fits(rule->id) || (!rule->model && !rule->prefab) ||
                !text_fits(rule->model ? rule->model : rule->prefab))
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "trn_cook_encode: palette rule %u has no model or prefab, "
                                     "or a text over 65535 bytes",
                                     r);
        }
        for (size_t k = 0; in->instances && k < in->instances->count; k++)
            if (in->instances->items[k].rule >= in->palette->rule_count)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "trn_cook_encode: instance %zu names rule %u; the palette "
                                     "has %u",
                                     k, in->instances->items[k].rule, in->palette->rule_count);
    }
    if (in->material_set) {
        if (!text_fits(in->material_set->name))
            return bad(err, "trn_cook_encode: the material set's name is over 65535 bytes");
        for (int r = 0; r < TRN_ROLE_COUNT; r++)
            if (!text_fits(in->material_set->roles[r]))
                return bad(err, "trn_cook_encode: a material id is over 65535 bytes");
    }
    return TRN_OK;
}

/* The next section's buffer, its id and flag set. */
static trn_pbuf *add_section(cook_section *secs, size_t *count, const char *id, bool required)
{
    cook_section *s = &secs[(*count)++];
    memcpy(s->id, id, 4);
    s->required = required;
    return &s->raw;
}

static void sections_free(cook_section *secs, size_t count)
{
    for (size_t k = 0; k < count; k++) {
        free(secs[k].raw.data);
        free(secs[k].packed);
    }
}

/* One section into sec->packed with cctx, and the hash of its packed bytes; the outcome in
 * sec->code: 0, the zstd error code, or 1 when out of memory. */
static void pack_one(ZSTD_CCtx *cctx, cook_section *sec)
{
    if (!cctx) {
        sec->code = 1;
        return;
    }
    const void *raw = sec->view ? sec->view : sec->raw.data ? sec->raw.data : (const void *)"";
    const size_t bound = ZSTD_compressBound(sec->raw.size);
    sec->packed = malloc(bound ? bound : 1u);
    if (!sec->packed) {
        sec->code = 1;
        return;
    }
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_only);
    const size_t got = ZSTD_compress2(cctx, sec->packed, bound, raw, sec->raw.size);
    if (ZSTD_isError(got)) {
        sec->code = got;
        return;
    }
    sec->packed_size = got;
    sec->packed_hash = XXH64(sec->packed, got, 0);
    sec->code = 0;
}

/* The hash of a section's raw bytes: a task of its own, beside the compression that reads the
 * same bytes (for the heights, the two together are most of the encoding's time). */
static void hash_raw(cook_section *sec)
{
    const void *raw = sec->view ? sec->view : sec->raw.data ? sec->raw.data : (const void *)"";
    sec->raw_hash = XXH64(raw, sec->raw.size, 0);
}

static ZSTD_CCtx *cook_cctx(void)
{
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    if (!cctx) return NULL;
    /* One zstd thread, a fixed level, the content size recorded: the same bytes every time. */
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, TRN_COOK_ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
    return cctx;
}

/* The compression context of the thread running this (made on its first use): each section
 * is compressed alone by one context, so the bytes do not depend on the thread count or on
 * which thread takes which section. ctx holds one slot a thread. */
static ZSTD_CCtx *thread_cctx(ZSTD_CCtx **ctx)
{
#ifdef _OPENMP
    const int t = omp_get_thread_num();
#else
    const int t = 0;
#endif
    if (!ctx[t]) ctx[t] = cook_cctx();
    return ctx[t];
}

/* The heights section: little-endian floats; on a little-endian host the field's own bytes,
 * read where they are (no copy). */
static void put_heights(cook_section *sec, const float *h, size_t n)
{
    if (trn_host_little_endian()) {
        sec->view = h;
        sec->raw.size = n * sizeof(float);
        return;
    }
    if (!trn_pbuf_room(&sec->raw, n * sizeof(float))) return;
    sec->raw.size = 0;
    for (size_t k = 0; k < n; k++)
        trn_pbuf_f32(&sec->raw, h[k]);
}

trn_status trn_cook_encode(const trn_cook_input *in, uint8_t **data, size_t *size, trn_error *err)
{
    trn_error_clear(err);
    if (!data || !size) return bad(err, "trn_cook_encode: data and size are required");
    *data = NULL;
    *size = 0;
    size_t n = 0;
    trn_status st = check_input(in, &n, err);
    if (st) return st;
    const trn_generated *g = in->generated;
    char *recipe_json = NULL;
    size_t recipe_size = 0;
    if ((st = trn_recipe_canonical_json(in->recipe, &recipe_json, &recipe_size, err))) return st;

    cook_section secs[13]; /* 12 at most */
    memset(secs, 0, sizeof secs);
    size_t count = 0;
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    ZSTD_CCtx **ctx = calloc((size_t)threads, sizeof *ctx);
    if (!ctx) {
        free(recipe_json);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for zstd");
    }
    /* One thread builds the sections in order and hands each to the threads to compress and
     * hash as soon as it is built: the heights, the largest by far, are compressed while the
     * others are built. */
#define ADD(tag, req) add_section(secs, &count, tag, req)
#ifdef _OPENMP
#define PACK_LAST()                                                                                \
    do {                                                                                           \
        cook_section *sec_ = &secs[count - 1u];                                                    \
        _Pragma("omp task firstprivate(sec_)") pack_one(thread_cctx(ctx), sec_);                   \
        _Pragma("omp task firstprivate(sec_)") hash_raw(sec_);                                     \
    } while (0)
#else
#define PACK_LAST() (pack_one(thread_cctx(ctx), &secs[count - 1u]), hash_raw(&secs[count - 1u]))
#endif
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#pragma omp single
#endif
    {
        ADD(TRN_SEC_HEIGHTS, true);
        put_heights(&secs[count - 1u], g->field.heights, n);
        PACK_LAST();
        put_biomes(ADD(TRN_SEC_BIOMES, true), g, in->recipe, n);
        PACK_LAST();
        put_biome_materials(ADD(TRN_SEC_BIOME_MATERIALS, false), g, in->recipe);
        PACK_LAST();
        if (ledger_count(g)) {
            put_ledgers(ADD(TRN_SEC_LEDGERS, false), g);
            PACK_LAST();
        }
        if (g->exclusion) {
            trn_pbuf_bytes(ADD(TRN_SEC_EXCLUSION, false), g->exclusion, n);
            PACK_LAST();
        }
        if (g->has_water) {
            trn_pbuf *w = ADD(TRN_SEC_WATER, false);
            st = trn_water_encode(&g->water, &w->data, &w->size, err);
            w->capacity = w->size;
            if (!st) PACK_LAST();
        }
        if (!st && in->palette) {
            put_scatter(ADD(TRN_SEC_SCATTER, false), in->palette, in->instances);
            PACK_LAST();
        }
        if (!st && in->roles) {
            put_roles(ADD(TRN_SEC_ROLES, false), in->roles, n, in->material_set);
            PACK_LAST();
        }
        if (!st && in->roles && in->material_set && in->material_set->mapping.present) {
            put_mapping(ADD(TRN_SEC_MAPPING, false), &in->material_set->mapping);
            PACK_LAST();
        }
        if (!st && in->material_set && in->materials && in->material_count) {
            put_material_docs(ADD(TRN_SEC_MATERIAL_DOCS, false), in->materials,
                              in->material_count);
            PACK_LAST();
        }
        if (!st) {
            trn_pbuf_bytes(ADD(TRN_SEC_RECIPE, true), recipe_json, recipe_size);
            PACK_LAST();
        }
        if (!st) {
            put_manifest(ADD(TRN_SEC_MANIFEST, false), secs, count - 1u, in->terrain_id);
            PACK_LAST();
        }
    } /* every task has run here (the single's barrier) */
#undef PACK_LAST
#undef ADD
    for (int t = 0; t < threads; t++)
        ZSTD_freeCCtx(ctx[t]);
    free(ctx);
    free(recipe_json);
    for (size_t k = 0; k < count && !st; k++)
        if (secs[k].raw.failed)
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "out of memory building section '%.4s'", secs[k].id);
    for (size_t k = 0; k < count && !st; k++) {
        if (secs[k].code == 1)
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "out of memory compressing section '%.4s'", secs[k].id);
        else if (secs[k].code)
            st = trn_error_set(err, TRN_ERR_IO, NULL, -1, "zstd failed on section '%.4s': %s",
                               secs[k].id, ZSTD_getErrorName(secs[k].code));
    }

    trn_pbuf out = {NULL, 0, 0, false};
    if (!st) {
        const char *generator = "terrane " TRN_VERSION_STRING;
        const size_t header_size = TRN_PAYLOAD_FIXED_HEADER + strlen(generator) +
                                   strlen(in->terrain_id) + TRN_PAYLOAD_ENTRY_SIZE * count + 8u;
        size_t total = header_size; /* the payload's size: one allocation, no regrowth */
        for (size_t k = 0; k < count; k++)
            if (!trn_add_size(total, secs[k].packed_size, &total)) out.failed = true;
        if (trn_pbuf_room(&out, total)) out.size = 0;
        trn_pbuf_bytes(&out, trn_payload_magic, 8);
        trn_pbuf_u32(&out, TRN_PAYLOAD_FORMAT_VERSION);
        trn_pbuf_u32(&out, (uint32_t)header_size);
        trn_pbuf_u32(&out, TRN_GENERATOR_VERSION);
        trn_pbuf_u32(&out, (uint32_t)count);
        trn_pbuf_u64(&out, g->cache_key);
        trn_pbuf_u64(&out, trn_cook_palette_digest(in->palette));
        trn_pbuf_u64(&out, trn_cook_materials_digest(in->material_set,
                                                     in->material_set ? in->materials : NULL,
                                                     in->material_set ? in->material_count : 0));
        trn_pbuf_u32(&out, g->field.cells_x);
        trn_pbuf_u32(&out, g->field.cells_z);
        trn_pbuf_f64(&out, g->field.size_x);
        trn_pbuf_f64(&out, g->field.size_z);
        trn_pbuf_f64(&out, g->sea_level);
        trn_pbuf_u16(&out, (uint16_t)strlen(generator));
        trn_pbuf_u16(&out, (uint16_t)strlen(in->terrain_id));
        trn_pbuf_bytes(&out, generator, strlen(generator));
        trn_pbuf_bytes(&out, in->terrain_id, strlen(in->terrain_id));
        uint64_t offset = header_size;
        for (size_t k = 0; k < count; k++) {
            trn_pbuf_bytes(&out, secs[k].id, 4);
            trn_pbuf_u32(&out, secs[k].required ? TRN_PAYLOAD_FLAG_REQUIRED : 0u);
            trn_pbuf_u64(&out, offset);
            trn_pbuf_u64(&out, secs[k].packed_size);
            trn_pbuf_u64(&out, secs[k].raw.size);
            trn_pbuf_u64(&out, secs[k].raw_hash);
            trn_pbuf_u64(&out, secs[k].packed_hash);
            offset += secs[k].packed_size;
        }
        if (!out.failed) trn_pbuf_u64(&out, XXH64(out.data, out.size, 0));
        for (size_t k = 0; k < count; k++)
            trn_pbuf_bytes(&out, secs[k].packed, secs[k].packed_size);
        if (out.failed)
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the payload");
    }
    sections_free(secs, count);
    if (st) {
        free(out.data);
        return st;
    }
    *data = out.data;
    *size = out.size;
    return TRN_OK;
}

trn_status trn_cook_write(const trn_cook_input *in, const char *path, trn_error *err)
{
    if (!path) return bad(err, "trn_cook_write: path is required");
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_cook_encode(in, &data, &size, err);
    if (!st) st = trn_file_write_atomic(path, data, size, err);
    if (st && err && !err->file[0]) snprintf(err->file, sizeof err->file, "%s", path);
    free(data);
    return st;
}
