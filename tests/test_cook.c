/* Cook tests: a generated terrain cooked and opened again, determinism, and every corruption. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/cook.h"
#include "terrane/generate.h"
#include "terrane/roles.h"
#include "terrane/runtime.h"
#include "terrane/scatter.h"
#include "test.h"

/* 64 x 64 cells over 64 m: a square bowl at 0 m in flat ground at 10 m, holding a lake at 5 m,
 * with an inline palette of shrubs (as tests/test_cli_scatter.c). */
static const char recipe_format[] =
    "{\"size\": [%d, %d], \"resolution\": [%d, %d], \"seed\": 3, \"sea_level\": -100,\n"
    " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
    " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, 1], \"material\": "
    "\"asset://materials/meadow\", \"texture_scale\": 2.5}},\n"
    " \"palette\": {\"format_version\": 3, \"name\": \"Shrubs\", \"placements\": {\"shrub\": "
    "{\"prefab\": \"prefab://shrub\", \"density\": 0.25, \"candidate_spacing\": 2, \"spacing\": "
    "4}, \"stone\": {\"model\": \"asset://models/stone\", \"collision\": \"none\", \"category\": "
    "\"rock\", \"density\": 0.05}}},\n"
    " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
    "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
    "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
    "  {\"id\": \"sq\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[%d, %d], [%d, %d], "
    "[%d, %d], [%d, %d]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": \"rim\"}}},\n"
    "  {\"id\": \"bowl\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
    "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": \"sq\"}}},\n"
    "  {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"level\": 5, \"center\": [%d, "
    "%d], \"radius\": 100, \"flow_speed\": 0.5}, \"inputs\": {\"field\": {\"node\": \"bowl\"}}},\n"
    "  {\"id\": \"bio\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": \"lake\", "
    "\"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}},\n"
    "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"bio\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}}]}}\n";

/* The recipe over a square of `size` units and cells, the bowl from size / 4 to 3 size / 4. */
static const char *recipe_text(int size)
{
    static char text[4096];
    const int lo = size / 4, hi = 3 * size / 4, mid = size / 2;
    snprintf(text, sizeof text, recipe_format, size, size, size, size, lo, lo, hi, lo, hi, hi, lo,
             hi, mid, mid);
    return text;
}

typedef struct cooked {
    trn_recipe recipe;
    trn_generated gen;
    trn_palette palette;
    const trn_instances *inst; /* the generated ones */
    const uint8_t *roles;
    trn_material_set set;
    uint8_t *bytes;
    size_t size;
} cooked;

static bool cook_sized(cooked *c, int threads, int size)
{
    memset(c, 0, sizeof *c);
    trn_error e;
    const char *text = recipe_text(size);
    if (trn_recipe_parse(text, strlen(text), "bowl.json", &c->recipe, NULL, &e)) {
        fprintf(stderr, "recipe: %s\n", e.message);
        return false;
    }
    CHECK_OK(trn_palette_parse(c->recipe.palette_json, strlen(c->recipe.palette_json), "bowl.json",
                               &c->palette, &e));
    /* The palette is placed and the roles classified by generation itself. */
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.threads = threads;
    go.quality = TRN_EROSION_FINAL;
    go.palette = &c->palette;
    go.roles = true;
    CHECK_OK(trn_recipe_generate(&c->recipe, &go, &c->gen, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&c->gen.field);
    /* An exclusion mask of our own: the recipe paints none. */
    c->gen.exclusion = malloc(n);
    for (size_t k = 0; k < n; k++)
        c->gen.exclusion[k] = (uint8_t)(k * 7u);
    c->inst = &c->gen.instances;
    c->roles = c->gen.roles;
    c->set.name = (char *)"Ground set";
    c->set.roles[TRN_ROLE_GRASS] = (char *)"asset://materials/grass";
    c->set.roles[TRN_ROLE_UNDERWATER] = (char *)"asset://materials/mud";
    trn_cook_input ci = {&c->gen,  &c->recipe, "asset://terrain/bowl", &c->palette, c->inst,
                         c->roles, &c->set, NULL, 0};
    CHECK_OK(trn_cook_encode(&ci, &c->bytes, &c->size, &e));
    return c->bytes != NULL;
}

static bool cook(cooked *c, int threads)
{
    return cook_sized(c, threads, 64);
}

static void cooked_dispose(cooked *c)
{
    free(c->bytes);
    trn_palette_dispose(&c->palette);
    trn_generated_dispose(&c->gen);
    trn_recipe_dispose(&c->recipe);
}

static cooked base; /* threads 1, shared by the tests */

static trn_status open_bytes(const uint8_t *data, size_t size, const trn_payload_limits *lim,
                             trn_error *e)
{
    trn_payload *p = NULL;
    trn_status st = trn_payload_open_memory(data, size, "bowl.terrain.bin", lim, &p, e);
    CHECK((st == TRN_OK) == (p != NULL));
    trn_payload_free(p);
    return st;
}

static void test_round_trip(void)
{
    char dir[512], path[700];
    snprintf(path, sizeof path, "%s/bowl.terrain.bin", trn_test_tmpdir(dir, sizeof dir));
    CHECK(trn_test_write_file(path, base.bytes, base.size));
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open(path, NULL, &p, &e));
    if (!p) return;
    const trn_generated *g = &base.gen;
    const size_t n = trn_field_sample_count(&g->field);
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    CHECK(info.cache_key == g->cache_key && info.cells_x == 64 && info.size_z == 64.0);
    CHECK(info.sea_level == g->sea_level && info.generator_version == TRN_GENERATOR_VERSION);
    CHECK(strcmp(info.terrain_id, "asset://terrain/bowl") == 0);
    CHECK(strcmp(info.generator, "terrane " TRN_VERSION_STRING) == 0);
    CHECK(info.palette_digest == trn_cook_palette_digest(&base.palette) && info.palette_digest);
    CHECK(info.material_digest == trn_cook_material_set_digest(&base.set));
    CHECK(info.format_version == TRN_PAYLOAD_FORMAT_VERSION && info.section_count == 9);
    /* Heights bit for bit, biomes, exclusion, roles and the material set. */
    const trn_field *f = trn_payload_field(p);
    CHECK(memcmp(f->heights, g->field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(trn_payload_biomes(p), g->biomes.values, n) == 0);
    CHECK(trn_payload_biome_count(p) == g->biomes.name_count);
    CHECK(strcmp(trn_payload_biome_name(p, 0), "meadow") == 0);
    float rgba[4];
    CHECK(trn_payload_biome_color(p, 0, rgba) && rgba[0] == 0.4f && rgba[1] == 0.6f);
    /* The biome's material and texture scale travel in their own section. */
    CHECK(trn_payload_biome_material(p, 0) &&
          strcmp(trn_payload_biome_material(p, 0), "asset://materials/meadow") == 0);
    CHECK(trn_payload_biome_texture_scale(p, 0) == 2.5);
    CHECK(trn_payload_biome_material(p, 1) == NULL);
    CHECK(isnan(trn_payload_biome_texture_scale(p, 1)));
    CHECK(trn_payload_biome_material(NULL, 0) == NULL);
    CHECK(memcmp(trn_payload_exclusion(p), g->exclusion, n) == 0);
    CHECK(memcmp(trn_payload_roles(p), base.roles, n) == 0);
    const trn_material_set *set = trn_payload_material_set(p);
    CHECK(set && strcmp(set->name, "Ground set") == 0);
    CHECK(set && strcmp(set->roles[TRN_ROLE_UNDERWATER], "asset://materials/mud") == 0);
    CHECK(set && set->roles[TRN_ROLE_ROCK] == NULL);
    /* The edit checkpoint is the canonical recipe. */
    char *canon = NULL;
    size_t canon_size = 0;
    CHECK_OK(trn_recipe_canonical_json(&base.recipe, &canon, &canon_size, &e));
    size_t rs;
    const char *rj = trn_payload_recipe_json(p, &rs);
    CHECK(rs == canon_size && memcmp(rj, canon, rs) == 0);
    free(canon);
    /* Scatter rules and instances. */
    CHECK_EQ_INT(trn_payload_rule_count(p), 2);
    trn_payload_rule r0, r1;
    CHECK(trn_payload_rule_at(p, 0, &r0) && trn_payload_rule_at(p, 1, &r1));
    CHECK(!trn_payload_rule_at(p, 2, &r1));
    for (uint32_t k = 0; k < 2; k++) {
        trn_payload_rule r;
        trn_payload_rule_at(p, k, &r);
        const trn_scatter_rule *src = &base.palette.rules[k];
        CHECK(strcmp(r.id, src->id) == 0 && r.collision == src->collision &&
              r.category == src->category);
        CHECK((r.model && src->model && strcmp(r.model, src->model) == 0 && !r.prefab) ||
              (r.prefab && src->prefab && strcmp(r.prefab, src->prefab) == 0 && !r.model));
    }
    size_t count = 0;
    const trn_instance *inst = trn_payload_instances(p, &count);
    CHECK(count == base.inst->count && count > 0);
    for (size_t k = 0; k < count && k < base.inst->count; k++) {
        const trn_instance *a = &inst[k], *b = &base.inst->items[k];
        CHECK(a->rule == b->rule && a->cx == b->cx && a->cz == b->cz && a->x == b->x &&
              a->y == b->y && a->z == b->z && a->yaw == b->yaw && a->scale == b->scale);
    }
    /* Every query answers as the generated terrain does. */
    int wet_seen = 0;
    for (int zi = 0; zi <= 80; zi++)
        for (int xi = 0; xi <= 80; xi++) {
            const double x = xi * 0.8 + 0.013, z = zi * 0.8 + 0.007;
            const double hp = trn_payload_height_at(p, x, z),
                         hg = trn_field_height_at(&g->field, x, z);
            if (x <= 64.0 && z <= 64.0) {
                CHECK(hp == hg);
            } else {
                CHECK(isnan(hp));
            }
            for (int yi = 0; yi < 3; yi++) {
                const double y = yi * 4.0;
                trn_water_sample a, b;
                const bool wa = trn_payload_water_at(p, x, y, z, &a);
                const bool wb = trn_water_query(&g->water, &g->field, x, y, z, &b);
                CHECK(wa == wb);
                if (!wa || !wb) continue;
                wet_seen++;
                CHECK(a.body == b.body && strcmp(a.body_id, b.body_id) == 0 && a.kind == b.kind);
                CHECK(memcmp(a.surface, b.surface, sizeof a.surface) == 0);
                CHECK(memcmp(a.normal, b.normal, sizeof a.normal) == 0 && a.depth == b.depth);
                CHECK(memcmp(a.column_up, b.column_up, sizeof a.column_up) == 0);
                CHECK(memcmp(a.flow_velocity, b.flow_velocity, sizeof a.flow_velocity) == 0);
                CHECK(a.underwater == b.underwater);
            }
        }
    CHECK(wet_seen > 1000);
    trn_payload_free(p);
}

/* Terrain3D.scatter_exclusions at runtime: a placement leaves out exactly its listed keys,
 * another placement of the same payload keeps everything, unknown keys are ignored and the list
 * survives a payload replaced by its regeneration. */
static void test_runtime_exclusions(void)
{
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open_memory(base.bytes, base.size, "bowl.terrain.bin", NULL, &p, &e));
    if (!p) return;
    trn_world *w = NULL;
    CHECK_OK(trn_world_new(&w, &e));
    CHECK_OK(trn_world_place(w, "a", p, NULL, &e));
    CHECK_OK(trn_world_place(w, "b", p, NULL, &e));
    size_t count = 0;
    const trn_instance *inst = trn_payload_instances(p, &count);
    CHECK(count > 4);
    if (count <= 4) return;
    char k0[160], k3[160];
    trn_payload_rule r0, r3;
    CHECK(trn_payload_rule_at(p, inst[0].rule, &r0) && trn_payload_rule_at(p, inst[3].rule, &r3));
    snprintf(k0, sizeof k0, "%s/%lld_%lld", r0.id, (long long)inst[0].cx, (long long)inst[0].cz);
    snprintf(k3, sizeof k3, "%s/%lld_%lld", r3.id, (long long)inst[3].cx, (long long)inst[3].cz);
    const char *keys[] = {k3, "nothing/1_1", k0};
    CHECK_OK(trn_world_set_scatter_exclusions(w, "a", keys, 3, &e));
    size_t *idx = malloc(count * sizeof *idx), kept = 0;
    CHECK_OK(trn_world_instances(w, "a", idx, count, &kept, &e));
    CHECK(kept == count - 2 && idx[0] == 1 && idx[1] == 2 && idx[2] == 4);
    CHECK_OK(trn_world_instances(w, "b", NULL, 0, &kept, &e));
    CHECK(kept == count);
    /* Room for fewer than kept: refused, with the number needed. */
    CHECK(trn_world_instances(w, "a", idx, count - 3, &kept, &e) == TRN_ERR_LIMIT);
    CHECK(kept == count - 2);
    CHECK_OK(trn_world_set_payload(w, "a", p, &e));
    CHECK_OK(trn_world_instances(w, "a", NULL, 0, &kept, &e));
    CHECK(kept == count - 2);
    /* Bad lists leave the old one in place. */
    const char *dup[] = {k0, k0};
    CHECK(trn_world_set_scatter_exclusions(w, "a", dup, 2, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "is listed twice");
    const char *empty[] = {k0, ""};
    CHECK(trn_world_set_scatter_exclusions(w, "a", empty, 2, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "scatter_exclusions[1]: expected a nonempty placement key");
    CHECK(trn_world_set_scatter_exclusions(w, "zz", keys, 3, &e) == TRN_ERR_NOT_FOUND);
    CHECK_OK(trn_world_instances(w, "a", NULL, 0, &kept, &e));
    CHECK(kept == count - 2);
    /* Cleared. */
    CHECK_OK(trn_world_set_scatter_exclusions(w, "a", NULL, 0, &e));
    CHECK_OK(trn_world_instances(w, "a", NULL, 0, &kept, &e));
    CHECK(kept == count);
    free(idx);
    trn_world_free(w);
    trn_payload_free(p);
}

/* The sections are compressed side by side on the threads: the same bytes on 1 and 3. */
static void test_compress_threads(void)
{
#ifdef _OPENMP
    trn_cook_input ci = {&base.gen,  &base.recipe, "asset://terrain/bowl", &base.palette,
                         base.inst, base.roles,   &base.set, NULL, 0};
    const int saved = omp_get_max_threads();
    for (int t = 1; t <= 3; t += 2) {
        omp_set_num_threads(t);
        uint8_t *data = NULL;
        size_t size = 0;
        trn_error e;
        CHECK_OK(trn_cook_encode(&ci, &data, &size, &e));
        CHECK(size == base.size && data && memcmp(data, base.bytes, size) == 0);
        free(data);
    }
    omp_set_num_threads(saved);
#endif
}

static void test_deterministic(void)
{
    cooked again, two;
    if (!cook(&again, 1) || !cook(&two, 2)) return;
    CHECK(again.size == base.size && memcmp(again.bytes, base.bytes, base.size) == 0);
    CHECK(two.size == base.size && memcmp(two.bytes, base.bytes, base.size) == 0);
    /* Without the optional inputs: only the required sections and the manifest. */
    trn_cook_input ci = {&base.gen, &base.recipe, "bowl", NULL, NULL, NULL, NULL, NULL, 0};
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    uint8_t *saved = base.gen.exclusion;
    base.gen.exclusion = NULL;
    const bool water = base.gen.has_water;
    base.gen.has_water = false;
    CHECK_OK(trn_cook_encode(&ci, &data, &size, &e));
    base.gen.exclusion = saved;
    base.gen.has_water = water;
    trn_payload *p = NULL;
    CHECK_OK(trn_payload_open_memory(data, size, "small", NULL, &p, &e));
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    CHECK(info.section_count == 5 && info.palette_digest == 0 && info.material_digest == 0);
    CHECK(trn_payload_water(p) == NULL && trn_payload_roles(p) == NULL);
    CHECK(trn_payload_exclusion(p) == NULL && trn_payload_rule_count(p) == 0);
    trn_water_sample ws;
    CHECK(!trn_payload_water_at(p, 32, 0, 32, &ws) && ws.body == -1);
    CHECK_EQ_INT(trn_payload_role_at(p, 32, 32), -1);
    trn_payload_free(p);
    free(data);
    /* Inconsistent inputs are refused. */
    trn_cook_input bad1 = {&base.gen, &base.recipe, "bowl", NULL, base.inst, NULL, NULL, NULL, 0};
    CHECK_STATUS(trn_cook_encode(&bad1, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_cook_input bad2 = {&base.gen, &base.recipe, "bowl", NULL, NULL, NULL, &base.set, NULL, 0};
    CHECK_STATUS(trn_cook_encode(&bad2, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_cook_input bad3 = {&base.gen, &base.recipe, "", NULL, NULL, NULL, NULL, NULL, 0};
    CHECK_STATUS(trn_cook_encode(&bad3, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    cooked_dispose(&again);
    cooked_dispose(&two);
}

/* The section table entry k's fields, read back from the bytes. */
static uint64_t u64_at(const uint8_t *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static size_t table_at(const uint8_t *d)
{
    return 84u + (size_t)(d[80] | d[81] << 8) + (size_t)(d[82] | d[83] << 8);
}

static void reseal_header(uint8_t *d)
{
    const size_t hs = u32_at(d + 12) - 8u;
    const uint64_t h = XXH64(d, hs, 0);
    for (int k = 0; k < 8; k++)
        d[hs + (size_t)k] = (uint8_t)(h >> (8 * k));
}

/* base's bytes with section id's raw content replaced by edit(raw, &size) (which may
 * reallocate it), compressed again, every later offset moved and every checksum resealed: a
 * payload whose framing is sound, so only the content checks can refuse it. */
typedef uint8_t *(*raw_edit)(uint8_t *raw, size_t *size);

static uint8_t *with_section(const char id[4], raw_edit edit, size_t *out_size)
{
    const size_t table = table_at(base.bytes), count = u32_at(base.bytes + 20);
    for (size_t k = 0; k < count; k++) {
        const uint8_t *entry = base.bytes + table + 48u * k;
        if (memcmp(entry, id, 4) != 0) continue;
        const uint64_t off = u64_at(entry + 8), csize = u64_at(entry + 16), rsize = u64_at(entry + 24);
        size_t n = (size_t)rsize;
        uint8_t *raw = malloc(n ? n : 1);
        if (!raw || ZSTD_decompress(raw, n, base.bytes + off, (size_t)csize) != n) {
            free(raw);
            return NULL;
        }
        raw = edit(raw, &n);
        const size_t bound = ZSTD_compressBound(n);
        uint8_t *comp = malloc(bound);
        const size_t cn = comp ? ZSTD_compress(comp, bound, raw, n, 3) : 0;
        uint8_t *d = comp && !ZSTD_isError(cn) ? malloc(base.size - (size_t)csize + cn) : NULL;
        if (!d) {
            free(raw), free(comp);
            return NULL;
        }
        memcpy(d, base.bytes, (size_t)off);
        memcpy(d + off, comp, cn);
        memcpy(d + off + cn, base.bytes + off + csize, base.size - (size_t)(off + csize));
        const int64_t delta = (int64_t)cn - (int64_t)csize;
        for (size_t j = 0; j < count; j++) {
            uint8_t *e = d + table + 48u * j;
            uint64_t v = u64_at(e + 8);
            if (v > off) v = (uint64_t)((int64_t)v + delta);
            uint64_t put[4] = {v, u64_at(e + 16), u64_at(e + 24), u64_at(e + 32)};
            uint64_t comp_hash = u64_at(e + 40);
            if (j == k) {
                put[1] = cn;
                put[2] = n;
                put[3] = XXH64(raw, n, 0);
                comp_hash = XXH64(comp, cn, 0);
            }
            for (int b = 0; b < 8; b++) {
                for (int f = 0; f < 4; f++)
                    e[8 + 8 * f + b] = (uint8_t)(put[f] >> (8 * b));
                e[40 + b] = (uint8_t)(comp_hash >> (8 * b));
            }
        }
        reseal_header(d);
        free(raw), free(comp);
        *out_size = base.size - (size_t)csize + cn;
        return d;
    }
    return NULL;
}

static size_t edit_index; /* the instance an edit changes */
static double edit_value;

/* Instance k's bytes within the scatter section (instances end it, 60 bytes each). */
static uint8_t *instance_bytes(uint8_t *raw, size_t size, size_t k)
{
    return raw + size - (base.inst->count - k) * 60u;
}

static uint8_t *set_scale(uint8_t *raw, size_t *size)
{
    memcpy(instance_bytes(raw, *size, edit_index) + 52, &edit_value, 8); /* little-endian host */
    return raw;
}

static uint8_t *copy_previous(uint8_t *raw, size_t *size)
{
    memcpy(instance_bytes(raw, *size, edit_index), instance_bytes(raw, *size, edit_index - 1), 60);
    return raw;
}

static uint8_t *swap_with_previous(uint8_t *raw, size_t *size)
{
    uint8_t t[60];
    uint8_t *a = instance_bytes(raw, *size, edit_index - 1), *b = instance_bytes(raw, *size, edit_index);
    memcpy(t, a, 60);
    memcpy(a, b, 60);
    memcpy(b, t, 60);
    return raw;
}

static const char *replacement_text;

static uint8_t *replace_text(uint8_t *raw, size_t *size)
{
    free(raw);
    *size = strlen(replacement_text);
    uint8_t *r = malloc(*size + 1);
    if (r) memcpy(r, replacement_text, *size + 1);
    return r;
}

static const uint8_t *replacement_bytes;
static size_t replacement_size;

static uint8_t *replace_bytes(uint8_t *raw, size_t *size)
{
    free(raw);
    *size = replacement_size;
    uint8_t *r = malloc(*size ? *size : 1);
    if (r) memcpy(r, replacement_bytes, *size);
    return r;
}

/* BMAT (biome materials): count, then per biome a u16-prefixed id and an f64 scale. */
static size_t bmat(uint8_t *out, uint32_t count, const char *id, double scale, bool extra)
{
    size_t n = 0;
    for (int k = 0; k < 4; k++)
        out[n++] = (uint8_t)(count >> (8 * k));
    const size_t len = strlen(id);
    out[n++] = (uint8_t)len;
    out[n++] = 0;
    memcpy(out + n, id, len);
    n += len;
    memcpy(out + n, &scale, 8); /* little-endian host */
    n += 8;
    if (extra) out[n++] = 7;
    return n;
}

static void test_biome_materials_section(void)
{
    uint8_t raw[128];
    struct {
        uint32_t count;
        const char *id;
        double scale;
        bool extra;
        trn_status want;
        const char *message;
    } cases[] = {
        {1, "asset://m", 3.0, false, TRN_OK, NULL},
        {1, "", 1.0, false, TRN_OK, NULL},
        {1, "asset://m", 0.0, false, TRN_ERR_FORMAT, "texture scale is 0; a finite number > 0"},
        {1, "asset://m", -2.0, false, TRN_ERR_FORMAT, "texture scale is -2"},
        {1, "asset://m", INFINITY, false, TRN_ERR_FORMAT, "texture scale is inf"},
        {1, "asset://m", 1.0, true, TRN_ERR_TRAILING_DATA, "1 bytes after the last biome"},
        {0, "asset://m", 1.0, false, TRN_ERR_FORMAT, "0 biomes; 1 to 255 expected"},
        {2, "asset://m", 1.0, false, TRN_ERR_FORMAT, "biome 1's material or texture scale is cut"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        replacement_size = bmat(raw, cases[c].count, cases[c].id, cases[c].scale, cases[c].extra);
        replacement_bytes = raw;
        size_t size = 0;
        uint8_t *d = with_section("BMAT", replace_bytes, &size);
        CHECK(d != NULL);
        trn_payload *p = NULL;
        trn_error e;
        CHECK_STATUS(trn_payload_open_memory(d, size, "edited", NULL, &p, &e), cases[c].want);
        if (cases[c].message) CHECK_CONTAINS(e.message, cases[c].message);
        if (p) {
            const char *m = trn_payload_biome_material(p, 0);
            CHECK(cases[c].id[0] ? m && strcmp(m, cases[c].id) == 0 : m == NULL);
            CHECK(trn_payload_biome_texture_scale(p, 0) == cases[c].scale);
        }
        trn_payload_free(p);
        free(d);
    }
    /* Two biomes here, one in BIOM: refused once both are read, whatever their order. */
    size_t n = bmat(raw, 2, "a", 1.0, false);
    raw[n++] = 0, raw[n++] = 0; /* biome 1: no material */
    const double one = 1.0;
    memcpy(raw + n, &one, 8);
    n += 8;
    replacement_bytes = raw;
    replacement_size = n;
    size_t size = 0;
    uint8_t *d = with_section("BMAT", replace_bytes, &size);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_STATUS(trn_payload_open_memory(d, size, "edited", NULL, &p, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "2 biomes; the biome section has 1");
    CHECK_CONTAINS(e.message, "section 'BMAT' (biome materials)");
    free(d);
}

/* Framing is not enough: the contents of the scatter and recipe sections are checked. */
static void test_section_contents(void)
{
    CHECK(base.inst->count > 3);
    if (base.inst->count <= 3) return;
    struct {
        raw_edit edit;
        size_t index;
        double value;
        const char *message;
    } cases[] = {
        {set_scale, 2, NAN, "finite numbers and a scale above 0"},
        {set_scale, 1, -1.0, "finite numbers and a scale above 0"},
        {copy_previous, 2, 0, "the same site as instance 1"},
        {swap_with_previous, 2, 0, "out of order after instance 1"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        edit_index = cases[c].index;
        edit_value = cases[c].value;
        size_t size = 0;
        uint8_t *d = with_section("SCTR", cases[c].edit, &size);
        CHECK(d != NULL);
        trn_payload *p = NULL;
        trn_error e;
        CHECK_STATUS(trn_payload_open_memory(d, size, "edited", NULL, &p, &e), TRN_ERR_FORMAT);
        CHECK_CONTAINS(e.message, cases[c].message);
        trn_payload_free(p);
        free(d);
    }
    /* The sound edit (a scale of 2) still opens: the helper itself breaks nothing. */
    edit_index = 1;
    edit_value = 2.0;
    size_t size = 0;
    uint8_t *d = with_section("SCTR", set_scale, &size);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open_memory(d, size, "edited", NULL, &p, &e));
    trn_payload_free(p);
    free(d);
    /* The embedded recipe must be JSON. */
    static const char *const not_json[] = {"{\"a\": 1", "{\"a\" 1}", "[1, 2,]", "{} x",
                                            "\"\\q\"", "{\"a\": tru}", "01"};
    for (size_t k = 0; k < sizeof not_json / sizeof not_json[0]; k++) {
        replacement_text = not_json[k];
        d = with_section("RCPE", replace_text, &size);
        CHECK_STATUS(trn_payload_open_memory(d, size, "edited", NULL, &p, &e), TRN_ERR_FORMAT);
        CHECK_CONTAINS(e.message, "the embedded recipe is not JSON");
        trn_payload_free(p);
        p = NULL;
        free(d);
    }
    static const char *const json[] = {"{\"a\": [1, -2.5e3, true, false, null, \"\\u00e9\"]}",
                                       " {} ", "[[[]]]"};
    for (size_t k = 0; k < sizeof json / sizeof json[0]; k++) {
        replacement_text = json[k];
        d = with_section("RCPE", replace_text, &size);
        CHECK_OK(trn_payload_open_memory(d, size, "edited", NULL, &p, &e));
        trn_payload_free(p);
        p = NULL;
        free(d);
    }
}

static void test_corruption(void)
{
    trn_error e;
    const size_t size = base.size;
    uint8_t *d = malloc(size);
    /* Every proper prefix is a truncation, reported where the file ends. */
    int bad = 0;
    for (size_t cut = 0; cut < size; cut++) {
        trn_status st = open_bytes(base.bytes, cut, NULL, &e);
        if (st != TRN_ERR_TRUNCATED) {
            if (bad++ < 5)
                fprintf(stderr, "cut at %zu: %s %s\n", cut, trn_status_name(st), e.message);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_STATUS(open_bytes(base.bytes, 200, NULL, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.file, "bowl.terrain.bin");
    /* A byte more is trailing data. */
    uint8_t *longer = malloc(size + 1u);
    memcpy(longer, base.bytes, size);
    longer[size] = 0;
    CHECK_STATUS(open_bytes(longer, size + 1u, NULL, &e), TRN_ERR_TRAILING_DATA);
    CHECK(e.offset == (int64_t)size);
    free(longer);
    /* A flipped byte in each section: that section's checksum, at its offset. */
    const size_t table = table_at(base.bytes);
    const uint32_t count = u32_at(base.bytes + 20);
    CHECK_EQ_INT(count, 9);
    for (uint32_t k = 0; k < count; k++) {
        const uint8_t *entry = base.bytes + table + 48u * k;
        const uint64_t off = u64_at(entry + 8), csize = u64_at(entry + 16);
        memcpy(d, base.bytes, size);
        d[off + csize / 2u] ^= 0x20;
        CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
        char want[32];
        snprintf(want, sizeof want, "section '%.4s'", (const char *)entry);
        CHECK_CONTAINS(e.message, want);
        CHECK_CONTAINS(e.message, "checksum of its");
        CHECK(e.offset == (int64_t)off);
    }
    /* The raw checksum is checked after decompression. */
    memcpy(d, base.bytes, size);
    d[table + 32] ^= 1; /* HGHT's raw hash */
    reseal_header(d);
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "section 'HGHT' (heights)");
    CHECK_CONTAINS(e.message, "bytes is");
    /* A damaged header: its checksum. */
    memcpy(d, base.bytes, size);
    d[30] ^= 1; /* the cache key */
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "header checksum");
    CHECK(e.offset == (int64_t)u32_at(base.bytes + 12) - 8);
    /* Wrong magic, wrong version. */
    memcpy(d, base.bytes, size);
    d[3] = 'X';
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "not a terrane payload");
    CHECK(e.offset == 0);
    memcpy(d, base.bytes, size);
    d[8] = 2;
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_VERSION);
    CHECK(e.offset == 8);
    CHECK_CONTAINS(e.message, "version 2");
    /* Version 0 was never written: refused as damage, even with a valid header checksum. */
    d[8] = 0;
    reseal_header(d);
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "payload format version 0");
    CHECK(e.offset == 8);
    /* A section out of place. */
    memcpy(d, base.bytes, size);
    d[table + 48 + 8] ^= 1; /* BIOM's offset */
    reseal_header(d);
    CHECK_STATUS(open_bytes(d, size, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "the previous one ends at");
    free(d);

    /* Limits: each accepted at the payload's own size, refused one below. */
    trn_payload_limits lim;
    trn_payload_limits_default(&lim);
    lim.max_samples = 65u * 65u;
    CHECK_OK(open_bytes(base.bytes, size, &lim, &e));
    lim.max_samples--;
    CHECK_STATUS(open_bytes(base.bytes, size, &lim, &e), TRN_ERR_LIMIT);
    CHECK(e.offset == 48);
    trn_payload_limits_default(&lim);
    lim.max_instances = base.inst->count;
    CHECK_OK(open_bytes(base.bytes, size, &lim, &e));
    lim.max_instances--;
    CHECK_STATUS(open_bytes(base.bytes, size, &lim, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "section 'SCTR' (scatter)");
    uint64_t largest = 0;
    for (uint32_t k = 0; k < count; k++) {
        const uint8_t *entry = base.bytes + table + 48u * k;
        if (u64_at(entry + 16) > largest) largest = u64_at(entry + 16);
        if (u64_at(entry + 24) > largest) largest = u64_at(entry + 24);
    }
    trn_payload_limits_default(&lim);
    lim.max_section_bytes = largest;
    CHECK_OK(open_bytes(base.bytes, size, &lim, &e));
    lim.max_section_bytes--;
    CHECK_STATUS(open_bytes(base.bytes, size, &lim, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "a section");
}

static void test_peek(void)
{
    char dir[512], path[700];
    snprintf(path, sizeof path, "%s/peek.terrain.bin", trn_test_tmpdir(dir, sizeof dir));
    trn_cook_input ci = {&base.gen,  &base.recipe, "asset://terrain/bowl", &base.palette, base.inst,
                         base.roles, &base.set, NULL, 0};
    trn_error e;
    CHECK_OK(trn_cook_write(&ci, path, &e));
    CHECK(trn_test_exists(path));
    trn_payload_info info;
    char *storage = NULL;
    CHECK_OK(trn_payload_peek(path, &info, &storage, &e));
    CHECK(info.cache_key == base.gen.cache_key &&
          strcmp(info.terrain_id, "asset://terrain/bowl") == 0);
    CHECK(info.palette_digest == trn_cook_palette_digest(&base.palette));
    free(storage);
    CHECK_STATUS(trn_payload_peek("/nonexistent/x.terrain.bin", &info, &storage, &e),
                 TRN_ERR_NOT_FOUND);
    /* Digests follow every field. */
    const uint64_t d0 = trn_cook_palette_digest(&base.palette);
    base.palette.rules[0].density += 0.5;
    CHECK(trn_cook_palette_digest(&base.palette) != d0);
    base.palette.rules[0].density -= 0.5;
    CHECK(trn_cook_palette_digest(&base.palette) == d0);
    CHECK(trn_cook_palette_digest(NULL) == 0 && trn_cook_material_set_digest(NULL) == 0);
    const uint64_t m0 = trn_cook_material_set_digest(&base.set);
    base.set.roles[TRN_ROLE_ROCK] = (char *)"asset://materials/rock";
    CHECK(trn_cook_material_set_digest(&base.set) != m0);
    base.set.roles[TRN_ROLE_ROCK] = NULL;
}

/* With TRN_PAYLOAD_CORPUS=DIR, the fuzz seed corpus (fuzz/corpus/fuzz_payload): a small cooked
 * terrain with every section, one with the required ones only, and damaged copies. */
static void write_corpus(const char *dir)
{
    cooked small;
    if (!cook_sized(&small, 1, 8)) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/bowl_8x8.terrain.bin", dir);
    CHECK(trn_test_write_file(path, small.bytes, small.size));
    trn_cook_input ci = {&small.gen, &small.recipe, "bare", NULL, NULL, NULL, NULL, NULL, 0};
    uint8_t *bare = NULL;
    size_t bare_size = 0;
    trn_error e;
    small.gen.has_water = false;
    free(small.gen.exclusion);
    small.gen.exclusion = NULL;
    CHECK_OK(trn_cook_encode(&ci, &bare, &bare_size, &e));
    small.gen.has_water = true;
    snprintf(path, sizeof path, "%s/required_only.terrain.bin", dir);
    CHECK(trn_test_write_file(path, bare, bare_size));
    snprintf(path, sizeof path, "%s/bad_truncated.terrain.bin", dir);
    CHECK(trn_test_write_file(path, small.bytes, small.size - 5u));
    small.bytes[small.size - 20u] ^= 0x55;
    snprintf(path, sizeof path, "%s/bad_section_checksum.terrain.bin", dir);
    CHECK(trn_test_write_file(path, small.bytes, small.size));
    bare[8] = 9;
    snprintf(path, sizeof path, "%s/bad_version.terrain.bin", dir);
    CHECK(trn_test_write_file(path, bare, bare_size));
    free(bare);
    cooked_dispose(&small);
}

/* An erosion node's transport ledger travels in the payload (LDGR), equal to the generation's
 * report; payloads without erosion carry none. */
static void test_erosion_ledger(void)
{
    static const char text[] =
        "{\"size\": [64, 64], \"resolution\": [32, 32], \"seed\": 9, \"sea_level\": -100,\n"
        " \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"height_variation\": 20,\n"
        " \"feature_size\": 32}},\n"
        " \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.4, 0.6, 0.3, 1]}},\n"
        " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
        "  {\"id\": \"land\", \"type\": \"landform\"},\n"
        "  {\"id\": \"wear\", \"type\": \"erosion\", \"params\": {\"droplets\": 400},\n"
        "   \"inputs\": {\"field\": {\"node\": \"land\"}}},\n"
        "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": "
        "{\"node\": \"wear\", \"pin\": \"field\"}}}]}}";
    trn_recipe r;
    trn_generated g;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "wear.json", &r, NULL, &e));
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
    const trn_node_report *wear = NULL;
    for (uint32_t k = 0; k < g.node_count; k++)
        if (strcmp(g.nodes[k].id, "wear") == 0) wear = &g.nodes[k];
    CHECK(wear && wear->has_ledger && wear->ledger.eroded > 0.0);
    trn_cook_input ci = {&g, &r, "wear", NULL, NULL, NULL, NULL, NULL, 0};
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_OK(trn_cook_encode(&ci, &data, &size, &e));
    trn_payload *p = NULL;
    CHECK_OK(trn_payload_open_memory(data, size, "wear", NULL, &p, &e));
    CHECK_EQ_INT(trn_payload_ledger_count(p), 1);
    trn_erosion_ledger l;
    const char *id = trn_payload_ledger_at(p, 0, &l);
    CHECK(id && strcmp(id, "wear") == 0);
    CHECK(wear && memcmp(&l, &wear->ledger, sizeof l) == 0);
    CHECK(trn_payload_ledger_at(p, 1, &l) == NULL);
    trn_payload_free(p);
    free(data);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
    /* The bowl has no erosion: no ledger section, none reported. */
    CHECK_OK(trn_payload_open_memory(base.bytes, base.size, "bowl", NULL, &p, &e));
    CHECK_EQ_INT(trn_payload_ledger_count(p), 0);
    CHECK(trn_payload_ledger_at(p, 0, NULL) == NULL);
    trn_payload_free(p);
}

int main(void)
{
    const char *corpus = getenv("TRN_PAYLOAD_CORPUS");
    if (corpus) {
        write_corpus(corpus);
        return trn_test_finish();
    }
    if (!cook(&base, 1)) return trn_test_finish();
    RUN(test_round_trip);
    RUN(test_deterministic);
    RUN(test_compress_threads);
    RUN(test_runtime_exclusions);
    RUN(test_corruption);
    RUN(test_section_contents);
    RUN(test_biome_materials_section);
    RUN(test_erosion_ledger);
    RUN(test_peek);
    cooked_dispose(&base);
    return trn_test_finish();
}
