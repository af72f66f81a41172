/* libFuzzer target for cooked payloads: open from bytes; on success every decoded array and
 * query must hold its invariants, and a second open must give the same data. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>
#include <zstd.h>

#include "terrane/runtime.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void assert_sane(const trn_payload *p, const trn_payload_limits *lim)
{
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    const trn_field *f = trn_payload_field(p);
    FUZZ_ASSERT(f->cells_x == info.cells_x && f->cells_z == info.cells_z && f->heights);
    FUZZ_ASSERT(info.size_x > 0.0 && info.size_z > 0.0 && isfinite(info.sea_level));
    const size_t n = ((size_t)info.cells_x + 1u) * ((size_t)info.cells_z + 1u);
    FUZZ_ASSERT(n <= lim->max_samples);
    FUZZ_ASSERT(info.generator && info.terrain_id && trn_payload_recipe_json(p, NULL));
    const uint32_t biomes = trn_payload_biome_count(p);
    FUZZ_ASSERT(biomes >= 1 && biomes <= 255);
    const uint8_t *labels = trn_payload_biomes(p), *roles = trn_payload_roles(p);
    for (size_t k = 0; k < n; k++) {
        FUZZ_ASSERT(labels[k] < biomes || labels[k] == TRN_LABEL_NONE);
        FUZZ_ASSERT(!roles || roles[k] < TRN_ROLE_COUNT || roles[k] == TRN_ROLE_NONE);
    }
    /* Biome materials and texture scales: one per biome, scales > 0, nothing past the table. */
    for (uint32_t b = 0; b < biomes; b++) {
        const char *m = trn_payload_biome_material(p, b);
        FUZZ_ASSERT(!m || m[0]);
        const double ts = trn_payload_biome_texture_scale(p, b);
        FUZZ_ASSERT(isfinite(ts) && ts > 0.0);
    }
    FUZZ_ASSERT(!trn_payload_biome_material(p, biomes));
    FUZZ_ASSERT(isnan(trn_payload_biome_texture_scale(p, biomes)));
    /* Ledgers: an id each, amounts finite and >= 0, NULL past the end. */
    const uint32_t ledgers = trn_payload_ledger_count(p);
    for (uint32_t k = 0; k < ledgers; k++) {
        trn_erosion_ledger l;
        const char *id = trn_payload_ledger_at(p, k, &l);
        FUZZ_ASSERT(id);
        FUZZ_ASSERT(isfinite(l.eroded) && l.eroded >= 0.0 && isfinite(l.deposited) &&
                    l.deposited >= 0.0 && isfinite(l.exported) && l.exported >= 0.0 &&
                    isfinite(l.suspended) && l.suspended >= 0.0);
    }
    FUZZ_ASSERT(!trn_payload_ledger_at(p, ledgers, NULL));
    /* Mapping: values inside their documented ranges; every layer names a material. */
    const trn_material_mapping *mm = trn_payload_mapping(p);
    if (mm)
        FUZZ_ASSERT(mm->present && mm->triplanar_slope >= 0.0 && mm->triplanar_slope <= 90.0 &&
                    mm->triplanar_sharpness >= 1.0 && mm->triplanar_sharpness <= 64.0 &&
                    mm->height_blend_contrast > 0.0 && mm->height_blend_contrast <= 1.0 &&
                    mm->macro_variation >= 0.0 && mm->macro_variation <= 1.0 &&
                    mm->macro_scale > 0.0 && isfinite(mm->macro_scale));
    const uint32_t layers = trn_payload_layer_count(p);
    for (uint32_t k = 0; k < layers; k++) {
        const char *lm = trn_payload_layer_material(p, k);
        FUZZ_ASSERT(lm && lm[0]);
        /* A layer's Material document: a texture scale > 0 and five paths (maybe empty). */
        double scale = 0;
        const char *maps[TRN_MAP_COUNT] = {NULL};
        trn_payload_layer_maps(p, k, &scale, maps);
        FUZZ_ASSERT(isfinite(scale) && scale > 0.0);
        for (int q = 0; q < TRN_MAP_COUNT; q++) FUZZ_ASSERT(maps[q]);
    }
    FUZZ_ASSERT(!trn_payload_layer_material(p, layers));
    for (uint32_t k = 0; k < info.section_count; k++) {
        trn_payload_section s;
        FUZZ_ASSERT(trn_payload_section_at(p, k, &s));
        FUZZ_ASSERT(s.compressed_size <= lim->max_section_bytes &&
                    s.raw_size <= lim->max_section_bytes);
    }
    size_t count = 0;
    const trn_instance *inst = trn_payload_instances(p, &count);
    FUZZ_ASSERT(count <= lim->max_instances);
    for (size_t k = 0; k < count; k++) {
        trn_payload_rule r;
        FUZZ_ASSERT(trn_payload_rule_at(p, inst[k].rule, &r));
        FUZZ_ASSERT(r.id && ((r.model != NULL) != (r.prefab != NULL)));
    }
    /* Queries over and around the grid: no crash, answers within their ranges. */
    const trn_water *w = trn_payload_water(p);
    for (int q = 0; q < 25; q++) {
        const double x = (q % 5 - 0.5) * info.size_x / 3.0, z = (q / 5 - 0.5) * info.size_z / 3.0;
        const double h = trn_payload_height_at(p, x, z);
        const bool inside = x >= 0.0 && x <= info.size_x && z >= 0.0 && z <= info.size_z;
        FUZZ_ASSERT(inside || isnan(h));
        const int b = trn_payload_biome_at(p, x, z);
        FUZZ_ASSERT(b >= -1 && b < (int)biomes);
        const int layer = trn_payload_layer_at(p, x, z);
        FUZZ_ASSERT(layer >= -1 && layer < (int)layers);
        trn_water_sample s;
        if (trn_payload_water_at(p, x, 0.0, z, &s))
            FUZZ_ASSERT(w && s.body >= 0 && (uint32_t)s.body < w->body_count && s.body_id);
        else
            FUZZ_ASSERT(s.body == -1);
    }
    /* A world and a tracker over it. */
    trn_world *world = NULL;
    FUZZ_ASSERT(trn_world_new(&world, NULL) == TRN_OK);
    trn_transform t;
    trn_transform_identity(&t);
    t.scale[1] = -2.0;
    FUZZ_ASSERT(trn_world_place(world, "fuzz", p, &t, NULL) == TRN_OK);
    trn_water_tracker *tracker = NULL;
    FUZZ_ASSERT(trn_water_tracker_new(NULL, &tracker, NULL) == TRN_OK);
    trn_water_event ev[2];
    for (int q = 0; q < 9; q++) {
        const double pos[3] = {(q % 3) * info.size_x / 2.0, -1.0, (q / 3) * info.size_z / 2.0};
        FUZZ_ASSERT(trn_water_tracker_update(tracker, world, pos, ev) <= 2u);
        trn_world_ground_sample g;
        (void)trn_world_ground_at(world, pos, NULL, &g);
    }
    trn_water_tracker_free(tracker);
    trn_world_free(world);
}

/* ---- structure-aware mode: the checksums and zstd keep random bytes out of the section
 * decoders, so an input starting with 'W' is one section's raw content, wrapped into an
 * otherwise valid payload: 'W', selector (which section), cells_x, cells_z, content ---- */

typedef struct wbytes {
    uint8_t *data;
    size_t size;
} wbytes;

static void wput(wbytes *b, const void *p, size_t n)
{
    uint8_t *grown = realloc(b->data, b->size + n + 1u);
    FUZZ_ASSERT(grown);
    b->data = grown;
    if (n) memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void wput_le(wbytes *b, uint64_t v, int bytes)
{
    for (int k = 0; k < bytes; k++) {
        const uint8_t x = (uint8_t)(v >> (8 * k));
        wput(b, &x, 1);
    }
}

static wbytes wrap(const uint8_t *data, size_t size)
{
    /* Selectors 0..5 keep their meaning for the checked-in corpus; 6, 7 and 8 came later. */
    static const char *const ids[] = {"BIOM", "EXCL", "WATR", "SCTR", "ROLE",
                                      "HGHT", "BMAT", "LDGR", "MAPM"};
    const int sel = data[1] % 9;
    const uint32_t cx = data[2] % 8u + 1u, cz = data[3] % 8u + 1u;
    const size_t samples = (size_t)(cx + 1u) * (cz + 1u);
    wbytes raw[4];
    const char *tag[4];
    memset(raw, 0, sizeof raw);
    int n = 0;
    tag[n] = "HGHT";
    if (sel == 5)
        wput(&raw[n], data + 4, size - 4);
    else
        for (size_t k = 0; k < samples; k++)
            wput_le(&raw[n], 0, 4);
    n++;
    tag[n] = "BIOM";
    if (sel == 0) {
        wput(&raw[n], data + 4, size - 4);
    } else {
        wput_le(&raw[n], 1, 4);
        wput_le(&raw[n], 1, 2);
        wput(&raw[n], "b", 1);
        for (int c = 0; c < 4; c++)
            wput_le(&raw[n], 0, 4);
        for (size_t k = 0; k < samples; k++)
            wput_le(&raw[n], 0, 1);
    }
    n++;
    if (sel != 0 && sel != 5) {
        tag[n] = ids[sel];
        wput(&raw[n++], data + 4, size - 4);
    }
    tag[n] = "RCPE";
    wput(&raw[n++], "{}", 2);
    wbytes packed[4];
    for (int k = 0; k < n; k++) {
        const size_t bound = ZSTD_compressBound(raw[k].size);
        packed[k].data = malloc(bound);
        FUZZ_ASSERT(packed[k].data);
        packed[k].size = ZSTD_compress(packed[k].data, bound, raw[k].data, raw[k].size, 1);
        FUZZ_ASSERT(!ZSTD_isError(packed[k].size));
    }
    wbytes out = {NULL, 0};
    const uint32_t header_size = 84u + 1u + 1u + 48u * (uint32_t)n + 8u;
    wput(&out, "TRNBIN\0\0", 8);
    wput_le(&out, 1, 4);
    wput_le(&out, header_size, 4);
    wput_le(&out, 2, 4);
    wput_le(&out, (uint64_t)n, 4);
    for (int k = 0; k < 3; k++)
        wput_le(&out, 0, 8); /* cache key, digests */
    wput_le(&out, cx, 4);
    wput_le(&out, cz, 4);
    const double dims[3] = {(double)cx, (double)cz, 0.0};
    for (int k = 0; k < 3; k++) {
        uint64_t u;
        memcpy(&u, &dims[k], 8);
        wput_le(&out, u, 8);
    }
    wput_le(&out, 1, 2);
    wput_le(&out, 1, 2);
    wput(&out, "gt", 2);
    uint64_t offset = header_size;
    for (int k = 0; k < n; k++) {
        wput(&out, tag[k], 4);
        wput_le(&out, 0, 4);
        wput_le(&out, offset, 8);
        wput_le(&out, packed[k].size, 8);
        wput_le(&out, raw[k].size, 8);
        wput_le(&out, XXH64(raw[k].data, raw[k].size, 0), 8);
        wput_le(&out, XXH64(packed[k].data, packed[k].size, 0), 8);
        offset += packed[k].size;
    }
    wput_le(&out, XXH64(out.data, out.size, 0), 8);
    for (int k = 0; k < n; k++) {
        wput(&out, packed[k].data, packed[k].size);
        free(packed[k].data);
        free(raw[k].data);
    }
    return out;
}

static int check_one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 4 && data[0] == 'W') {
        wbytes w = wrap(data, size);
        check_one(w.data, w.size);
        free(w.data);
        return 0;
    }
    return check_one(data, size);
}

static int check_one(const uint8_t *data, size_t size)
{
    trn_payload_limits lim;
    trn_payload_limits_default(&lim);
    /* Small limits keep every run fast; the limit checks themselves are tested exactly. */
    lim.max_samples = 1u << 16;
    lim.max_instances = 1u << 14;
    lim.max_section_bytes = 1u << 22;
    trn_payload *p = NULL;
    trn_error e;
    if (trn_payload_open_memory(data, size, "fuzz.terrain.bin", &lim, &p, &e) != TRN_OK) {
        /* A failure returns nothing and says where. */
        FUZZ_ASSERT(p == NULL && e.code != TRN_OK && e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        FUZZ_ASSERT(strcmp(e.file, "fuzz.terrain.bin") == 0);
        return 0;
    }
    assert_sane(p, &lim);
    /* Decoding is a function of the bytes. */
    trn_payload *again = NULL;
    FUZZ_ASSERT(trn_payload_open_memory(data, size, "fuzz.terrain.bin", &lim, &again, &e) ==
                TRN_OK);
    const trn_field *a = trn_payload_field(p), *b = trn_payload_field(again);
    const size_t n = ((size_t)a->cells_x + 1u) * ((size_t)a->cells_z + 1u);
    FUZZ_ASSERT(memcmp(a->heights, b->heights, n * sizeof(float)) == 0);
    trn_payload_free(again);
    trn_payload_free(p);
    return 0;
}
