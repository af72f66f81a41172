/* Tests for the BeamNG/Torque .ter reader and writer: real files, legacy, layouts, errors. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/beamng.h"
#include "test.h"

/* ------------------------------------------------------------ byte builder */

typedef struct buf {
    uint8_t *d;
    size_t n, cap;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->d = realloc(b->d, cap);
        if (!b->d) abort();
        b->cap = cap;
    }
    if (n) memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void put_u8(buf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    put(b, &x, 1);
}

static void put_u16(buf *b, unsigned v)
{
    put_u8(b, v & 0xFF);
    put_u8(b, (v >> 8) & 0xFF);
}

static void put_u32(buf *b, uint32_t v)
{
    put_u16(b, v & 0xFFFF);
    put_u16(b, v >> 16);
}

/* Torque String: u8 length, or 0xFF + u16 for 255 and longer. */
static void put_name(buf *b, const char *s)
{
    size_t len = strlen(s);
    if (len < 255) {
        put_u8(b, (unsigned)len);
    } else {
        put_u8(b, 0xFF);
        put_u16(b, (unsigned)len);
    }
    put(b, s, len);
}

/* TGE string: u8 length. */
static void put_short(buf *b, const char *s)
{
    put_u8(b, (unsigned)strlen(s));
    put(b, s, strlen(s));
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A modern file: heights h(i) = i*7919, layers i % layer_mod, names, extra blocks. */
static buf build_modern(unsigned version, uint32_t size, unsigned layer_mod,
                        const char *const *names, uint32_t count, unsigned extra)
{
    buf b = {0};
    put_u8(&b, version);
    put_u32(&b, size);
    size_t n = (size_t)size * size;
    for (size_t i = 0; i < n; i++)
        put_u16(&b, (unsigned)((i * 7919u) & 0xFFFF));
    for (size_t i = 0; i < n; i++)
        put_u8(&b, layer_mod ? (unsigned)(i % layer_mod) : 0);
    for (size_t i = 0; i < n * extra; i++)
        put_u8(&b, (unsigned)(i * 31u + 7u));
    put_u32(&b, count);
    for (uint32_t i = 0; i < count; i++)
        put_name(&b, names[i]);
    return b;
}

/* ------------------------------------------------------------ comparisons */

static bool strs_equal(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

static bool ter_equal(const trn_ter *a, const trn_ter *b)
{
    if (a->version != b->version || a->layout != b->layout || a->size != b->size ||
        a->material_count != b->material_count || a->extra_count != b->extra_count ||
        a->warning_count != b->warning_count)
        return false;
    size_t n = (size_t)a->size * a->size;
    if (memcmp(a->heights, b->heights, n * 2) || memcmp(a->layers, b->layers, n)) return false;
    if (a->extra_count && memcmp(a->extra_maps, b->extra_maps, n * a->extra_count)) return false;
    for (uint32_t i = 0; i < a->material_count; i++) {
        if (a->material_lengths[i] != b->material_lengths[i]) return false;
        if (memcmp(a->materials[i], b->materials[i], a->material_lengths[i])) return false;
    }
    for (uint32_t i = 0; i < a->warning_count; i++)
        if (strcmp(a->warnings[i].message, b->warnings[i].message) ||
            a->warnings[i].offset != b->warnings[i].offset)
            return false;
    for (unsigned s = 0; s < 8; s++) {
        if (!strs_equal(a->legacy_names[s], b->legacy_names[s])) return false;
        if ((a->legacy_alpha[s] == NULL) != (b->legacy_alpha[s] == NULL)) return false;
        if (a->legacy_alpha[s] && memcmp(a->legacy_alpha[s], b->legacy_alpha[s], 65536))
            return false;
    }
    return strs_equal(a->texture_script, b->texture_script) &&
           strs_equal(a->heightfield_script, b->heightfield_script) &&
           strs_equal(a->edge_paths[0], b->edge_paths[0]) &&
           strs_equal(a->edge_paths[1], b->edge_paths[1]);
}

static bool has_warning(const trn_ter *t, const char *needle)
{
    for (uint32_t i = 0; i < t->warning_count; i++)
        if (strstr(t->warnings[i].message, needle)) return true;
    return false;
}

/* Serialise with version and expect exactly the given bytes. */
static bool serializes_to(const trn_ter *t, unsigned version, const uint8_t *bytes, size_t size)
{
    uint8_t *out = NULL;
    size_t out_size = 0;
    if (trn_ter_serialize(t, (uint8_t)version, &out, &out_size, NULL) != TRN_OK) return false;
    bool same = out_size == size && memcmp(out, bytes, size) == 0;
    free(out);
    return same;
}

static char tmp_dir[512];

static const char *tmp_path(const char *name, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s/%s", tmp_dir, name);
    return out;
}

/* ------------------------------------------------------------ real files */

typedef struct real_fact {
    const char *file;
    uint32_t size;
    uint32_t materials;
    const char *names[8];
} real_fact;

static int real_files_seen = 0;

static void check_real(const real_fact *f)
{
    char path[1024];
    if (!trn_test_real_path(f->file, path, sizeof path)) return;
    real_files_seen++;
    size_t size = 0;
    uint8_t *data = trn_test_read_file(path, &size);
    CHECK(data != NULL);
    if (!data) return;
    CHECK(trn_ter_sniff(data, size));
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(data, size, path, NULL, &t, &e));
    CHECK_EQ_INT(t.version, 7);
    CHECK_EQ_INT(t.layout, TRN_TER_LAYOUT_MODERN);
    CHECK_EQ_INT(t.size, f->size);
    CHECK_EQ_INT(t.material_count, f->materials);
    CHECK_EQ_INT(t.extra_count, 0);
    CHECK_EQ_INT(t.warning_count, 0);
    size_t expect = 5 + 3 * (size_t)f->size * f->size + 4;
    for (uint32_t i = 0; i < t.material_count && i < 8; i++) {
        CHECK(strcmp(t.materials[i], f->names[i]) == 0);
        expect += 1 + strlen(f->names[i]);
    }
    CHECK_EQ_INT(size, expect); /* README: no extra maps in engine-written files */
    /* Byte-identical round trip with the file's own version, in memory and through disk. */
    CHECK(serializes_to(&t, t.version, data, size));
    trn_ter r;
    CHECK_OK(trn_ter_read(path, NULL, &r, NULL, NULL, &e));
    CHECK(ter_equal(&t, &r));
    char out[600];
    tmp_path(f->file, out, sizeof out);
    CHECK_OK(trn_ter_write(out, &r, r.version, NULL, NULL, &e));
    size_t out_size = 0;
    uint8_t *written = trn_test_read_file(out, &out_size);
    CHECK(written && out_size == size && memcmp(written, data, size) == 0);
    free(written);
    /* Version 9 differs only in the first byte. */
    uint8_t *v9 = NULL;
    size_t v9_size = 0;
    CHECK_OK(trn_ter_serialize(&t, 9, &v9, &v9_size, &e));
    CHECK(v9_size == size && v9[0] == 9 && memcmp(v9 + 1, data + 1, size - 1) == 0);
    free(v9);
    trn_ter_dispose(&r);
    trn_ter_dispose(&t);
    free(data);
}

static void test_real_files(void)
{
    static const real_fact facts[] = {
        {"t3d_v7_Outpost_0_1024.ter",
         1024,
         6,
         {"sand", "grass1_dry", "grass1", "dirt_grass", "rocktest", "stone"}},
        {"t3d_v7_EmptyRoom_512.ter", 512, 3, {"grass1", "rocktest", "sand"}},
        {"t3d_v7_desert_world_0_256.ter",
         256,
         8,
         {"sand_micro", "sand_micro", "sand_micro", "cliff", "sand_micro", "cliff", "sand_micro",
          "sand_micro"}},
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        check_real(&facts[i]);

    /* Every t3d_v7_*.ter in the folder must round-trip, including ones added later. */
    char dir[1024];
    if (!trn_test_real_path("", dir, sizeof dir)) return;
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (strncmp(ent->d_name, "t3d_", 4) != 0 || len < 4 ||
            strcmp(ent->d_name + len - 4, ".ter") != 0)
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, ent->d_name);
        size_t size = 0;
        uint8_t *data = trn_test_read_file(path, &size);
        trn_ter t;
        trn_error e;
        CHECK_OK(trn_ter_parse(data, size, path, NULL, &t, &e));
        CHECK(serializes_to(&t, t.version, data, size));
        trn_ter_dispose(&t);
        free(data);
    }
    if (d) closedir(d);
}

static void test_real_histogram(void)
{
    char path[1024];
    if (!trn_test_real_path("t3d_v7_EmptyRoom_512.ter", path, sizeof path)) return;
    trn_ter t;
    CHECK_OK(trn_ter_read(path, NULL, &t, NULL, NULL, NULL));
    uint64_t counts[256];
    trn_ter_layer_histogram(&t, counts);
    CHECK_EQ_INT(counts[0], 217020);
    CHECK_EQ_INT(counts[1], 39149);
    CHECK_EQ_INT(counts[2], 5975);
    CHECK_EQ_INT(counts[0] + counts[1] + counts[2], 512 * 512);
    trn_ter_dispose(&t);
}

static void test_terragen_refused(void)
{
    char path[1024];
    if (!trn_test_real_path("terragen_RealisticTerrain.ter", path, sizeof path)) return;
    real_files_seen++;
    size_t size = 0;
    uint8_t *data = trn_test_read_file(path, &size);
    CHECK(!trn_ter_sniff(data, size));
    CHECK(!trn_ter_sniff(data, 64));
    trn_ter t;
    trn_error e;
    CHECK_STATUS(trn_ter_parse(data, size, path, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.message, "Terragen");
    CHECK(t.heights == NULL);
    CHECK_STATUS(trn_ter_read(path, NULL, &t, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);
    free(data);
}

/* ------------------------------------------------------------ sniff */

static void test_sniff(void)
{
    const uint8_t v9[] = {9, 0, 4, 0, 0};
    const uint8_t v7_small[] = {7, 1, 0, 0, 0};
    const uint8_t v10[] = {10, 0, 1, 0, 0};
    const uint8_t v0[] = {0, 0, 4, 0, 0};
    const uint8_t zero_size[] = {9, 0, 0, 0, 0};
    const uint8_t huge[] = {9, 0xFF, 0xFF, 0xFF, 0xFF};
    const uint8_t legacy[] = {3};
    const uint8_t short_modern[] = {9, 0, 4};
    CHECK(trn_ter_sniff(v9, sizeof v9));
    CHECK(trn_ter_sniff(v7_small, sizeof v7_small));
    CHECK(trn_ter_sniff(v10, sizeof v10));
    CHECK(!trn_ter_sniff(v0, sizeof v0));
    CHECK(!trn_ter_sniff(zero_size, sizeof zero_size));
    CHECK(!trn_ter_sniff(huge, sizeof huge));
    CHECK(trn_ter_sniff(legacy, sizeof legacy));
    CHECK(!trn_ter_sniff(short_modern, sizeof short_modern));
    CHECK(!trn_ter_sniff((const uint8_t *)"TERRAGENTERRAIN SIZE", 20));
    CHECK(!trn_ter_sniff((const uint8_t *)"TERRAGEN", 8));
    CHECK(!trn_ter_sniff(NULL, 0));
}

/* ------------------------------------------------------------ legacy */

/* Build a legacy file. alpha maps for v2+: for named slot k, alpha value at sample i is given by
 * the alpha_fn; material map value i: group (i % 8) with bit 7 on every third sample. */
typedef uint8_t (*alpha_fn)(unsigned k, size_t i);

static uint8_t alpha_pattern(unsigned k, size_t i)
{
    switch (i % 6) {
    case 0:
        return k == 1 ? 200 : 10; /* clear winner: named 1 */
    case 1:
        return 77; /* all tie: first wins -> 0 */
    case 2:
        return 0; /* all zero -> 0 */
    case 3:
        return k == 2 ? 90 : (k == 1 ? 90 : 5); /* tie between 1 and 2 -> 1 */
    case 4:
        return (uint8_t)(k == 2 ? 255 : 254); /* last wins by one */
    default:
        return (uint8_t)(i >> 8); /* equal: 0 */
    }
}

static buf build_legacy(unsigned version, const char *const names[8], alpha_fn alpha)
{
    buf b = {0};
    put_u8(&b, version);
    for (size_t i = 0; i < 65536; i++)
        put_u16(&b, (unsigned)((i * 13u) & 0xFFFF));
    for (size_t i = 0; i < 65536; i++)
        put_u8(&b, (unsigned)((i % 8) | (i % 3 == 0 ? 0x80 : 0)));
    unsigned named = 0;
    for (unsigned s = 0; s < 8; s++) {
        put_short(&b, names[s]);
        if (names[s][0]) named++;
    }
    if (version >= 2)
        for (unsigned k = 0; k < named; k++)
            for (size_t i = 0; i < 65536; i++)
                put_u8(&b, alpha(k, i));
    if (version >= 3) {
        const char *tex = "// texture script\nplace(grass);";
        const char *hf = "terrain_fBm 6 0.5";
        put_u32(&b, (uint32_t)strlen(tex));
        put(&b, tex, strlen(tex));
        put_u32(&b, (uint32_t)strlen(hf));
        put(&b, hf, strlen(hf));
    }
    if (version >= 5) {
        put_short(&b, "terrains/edge_west.ter");
        put_short(&b, "");
    }
    return b;
}

static const char *const legacy_names[8] = {"grass", "", "rock", "sand", "", "", "", ""};

static void check_legacy_common(const trn_ter *t, unsigned version)
{
    CHECK_EQ_INT(t->version, version);
    CHECK_EQ_INT(t->layout, TRN_TER_LAYOUT_LEGACY);
    CHECK_EQ_INT(t->size, 256);
    CHECK_EQ_INT(t->heights[1000], (1000 * 13) & 0xFFFF);
    CHECK_EQ_INT(t->heights[65535], (65535u * 13u) & 0xFFFF);
    CHECK_EQ_INT(t->material_count, 3);
    CHECK(strcmp(t->materials[0], "grass") == 0);
    CHECK(strcmp(t->materials[1], "rock") == 0);
    CHECK(strcmp(t->materials[2], "sand") == 0);
    CHECK(strcmp(t->legacy_names[1], "") == 0);
    CHECK(strcmp(t->legacy_names[3], "sand") == 0);
    CHECK_EQ_INT(t->legacy_material_map[3], 0x83); /* group 3, modified */
    CHECK_EQ_INT(t->legacy_material_map[4], 0x04);
    CHECK_EQ_INT(t->warning_count, 0);
}

static void check_legacy_to_v9(const trn_ter *t)
{
    uint8_t *out = NULL;
    size_t out_size = 0;
    trn_error e;
    CHECK_OK(trn_ter_serialize(t, 9, &out, &out_size, &e));
    trn_ter m;
    CHECK_OK(trn_ter_parse(out, out_size, NULL, NULL, &m, &e));
    CHECK_EQ_INT(m.version, 9);
    CHECK_EQ_INT(m.layout, TRN_TER_LAYOUT_MODERN);
    CHECK_EQ_INT(m.size, 256);
    CHECK_EQ_INT(out_size, 5 + 3 * 65536 + 4 + 6 + 5 + 5);
    CHECK(memcmp(m.heights, t->heights, 65536 * 2) == 0);
    CHECK(memcmp(m.layers, t->layers, 65536) == 0);
    CHECK_EQ_INT(m.material_count, 3);
    CHECK(m.legacy_material_map == NULL && m.texture_script == NULL);
    trn_ter_dispose(&m);
    free(out);
}

static void test_legacy_v1(void)
{
    buf b = build_legacy(1, legacy_names, alpha_pattern);
    CHECK_EQ_INT(b.n, 1 + 65536 * 3 + 6 + 1 + 5 + 5 + 4);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, "v1.ter", NULL, &t, &e));
    check_legacy_common(&t, 1);
    /* Version 1: layer = material group clamped to the last of 3 names. */
    CHECK_EQ_INT(t.layers[0], 0);
    CHECK_EQ_INT(t.layers[1], 1);
    CHECK_EQ_INT(t.layers[2], 2);
    CHECK_EQ_INT(t.layers[3], 2); /* bit 7 ignored, group 3 clamped */
    CHECK_EQ_INT(t.layers[7], 2);
    CHECK_EQ_INT(t.layers[8], 0);
    for (unsigned s = 0; s < 8; s++)
        CHECK(t.legacy_alpha[s] == NULL);
    CHECK(t.texture_script == NULL && t.edge_paths[0] == NULL);
    check_legacy_to_v9(&t);
    trn_ter_dispose(&t);
    free(b.d);
}

static void check_alpha_layers(const trn_ter *t)
{
    for (size_t i = 0; i < 36; i++) {
        unsigned expect;
        switch (i % 6) {
        case 0:
            expect = 1;
            break;
        case 3:
            expect = 1;
            break;
        case 4:
            expect = 2;
            break;
        default:
            expect = 0;
            break;
        }
        CHECK_EQ_INT(t->layers[i], expect);
    }
    CHECK(t->legacy_alpha[0] && t->legacy_alpha[2] && t->legacy_alpha[3]);
    CHECK(t->legacy_alpha[1] == NULL && t->legacy_alpha[4] == NULL);
    CHECK_EQ_INT(t->legacy_alpha[2][0], 200); /* slot 2 holds the second named map */
    CHECK_EQ_INT(t->legacy_alpha[3][4], 255);
}

static void test_legacy_v2_v3_v5(void)
{
    const unsigned versions[] = {2, 3, 4, 5, 6};
    for (size_t v = 0; v < sizeof versions / sizeof versions[0]; v++) {
        unsigned version = versions[v];
        buf b = build_legacy(version, legacy_names, alpha_pattern);
        trn_ter t;
        trn_error e;
        CHECK_OK(trn_ter_parse(b.d, b.n, "legacy.ter", NULL, &t, &e));
        check_legacy_common(&t, version);
        check_alpha_layers(&t);
        if (version >= 3) {
            CHECK(strs_equal(t.texture_script, "// texture script\nplace(grass);"));
            CHECK(strs_equal(t.heightfield_script, "terrain_fBm 6 0.5"));
        } else {
            CHECK(t.texture_script == NULL && t.heightfield_script == NULL);
        }
        if (version >= 5) {
            CHECK(strs_equal(t.edge_paths[0], "terrains/edge_west.ter"));
            CHECK(strs_equal(t.edge_paths[1], ""));
        } else {
            CHECK(t.edge_paths[0] == NULL);
        }
        check_legacy_to_v9(&t);
        /* The disk reader gives the same. */
        char path[600];
        tmp_path("legacy.ter", path, sizeof path);
        CHECK(trn_test_write_file(path, b.d, b.n));
        trn_ter r;
        CHECK_OK(trn_ter_read(path, NULL, &r, NULL, NULL, &e));
        CHECK(ter_equal(&t, &r));
        trn_ter_dispose(&r);
        trn_ter_dispose(&t);
        free(b.d);
    }
}

static void test_legacy_clamp_and_empty(void)
{
    /* Only one name: every alpha argmax clamps to 0; v1 groups clamp to 0 too. */
    const char *const one[8] = {"", "", "", "", "", "", "", "only"};
    buf b = build_legacy(2, one, alpha_pattern);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.material_count, 1);
    uint64_t counts[256];
    trn_ter_layer_histogram(&t, counts);
    CHECK_EQ_INT(counts[0], 65536);
    CHECK(t.legacy_alpha[7] != NULL);
    trn_ter_dispose(&t);
    free(b.d);

    /* No names at all: no alpha maps, layers 0 (v2) or the raw group (v1), with warnings. */
    const char *const none[8] = {"", "", "", "", "", "", "", ""};
    b = build_legacy(2, none, alpha_pattern);
    CHECK_EQ_INT(b.n, 1 + 65536 * 3 + 8);
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.material_count, 0);
    CHECK_EQ_INT(t.warning_count, 1);
    CHECK(has_warning(&t, "65536 samples use layer index 0 but only 0 materials are listed"));
    CHECK_EQ_INT(t.warnings[0].offset, -1);
    trn_ter_dispose(&t);
    free(b.d);
    b = build_legacy(1, none, alpha_pattern);
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.layers[5], 5);
    CHECK_EQ_INT(t.warning_count, 8);
    CHECK(has_warning(&t, "8192 samples use layer index 7 but only 0 materials are listed"));
    trn_ter_dispose(&t);
    free(b.d);
}

static void test_legacy_truncated(void)
{
    buf b = build_legacy(5, legacy_names, alpha_pattern);
    size_t names_at = 1 + 65536 * 3;
    size_t alpha_at = names_at + 6 + 1 + 5 + 5 + 4;
    size_t tex_at = alpha_at + 3 * 65536;
    size_t hf_at = tex_at + 4 + strlen("// texture script\nplace(grass);");
    size_t edge_at = hf_at + 4 + strlen("terrain_fBm 6 0.5");
    struct {
        size_t cut;
        int64_t offset;
        const char *section;
    } cases[] = {
        {1, 1, "heights"},
        {100, 1, "heights"},
        {1 + 131072, 1 + 131072, "material map"},
        {names_at, (int64_t)names_at, "material name 0"},
        {names_at + 3, (int64_t)names_at + 1, "material name 0"},
        {names_at + 6, (int64_t)names_at + 6, "material name 1"},
        {names_at + 7, (int64_t)names_at + 7, "material name 2"},
        {alpha_at, (int64_t)alpha_at, "alpha map 0"},
        {alpha_at + 65536 + 5, (int64_t)alpha_at + 65536, "alpha map 1"},
        {tex_at + 2, (int64_t)tex_at, "texture script"},
        {tex_at + 10, (int64_t)tex_at + 4, "texture script"},
        {hf_at, (int64_t)hf_at, "heightfield script"},
        {hf_at + 5, (int64_t)hf_at + 4, "heightfield script"},
        {edge_at, (int64_t)edge_at, "edge terrain path 0"},
        {edge_at + 3, (int64_t)edge_at + 1, "edge terrain path 0"},
        {b.n - 1, (int64_t)b.n - 1, "edge terrain path 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trn_ter t;
        trn_error e;
        CHECK_STATUS(trn_ter_parse(b.d, cases[i].cut, "old.ter", NULL, &t, &e), TRN_ERR_TRUNCATED);
        CHECK_EQ_INT(e.offset, cases[i].offset);
        CHECK_CONTAINS(e.message, cases[i].section);
        CHECK(t.heights == NULL && t.layers == NULL);
    }
    /* Bytes after the edge paths. */
    put_u8(&b, 0);
    trn_ter t;
    trn_error e;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, (int64_t)b.n - 1);
    CHECK_CONTAINS(e.message, "edge terrain paths");
    free(b.d);
}

/* ------------------------------------------------------------ extra layouts */

static void test_extra_layouts(void)
{
    const char *names[] = {"grass", "rock"};
    const unsigned extras[] = {1, 4, 5};
    for (size_t k = 0; k < 3; k++) {
        buf b = build_modern(9, 16, 2, names, 2, extras[k]);
        trn_ter t;
        trn_error e;
        CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
        CHECK_EQ_INT(t.layout, extras[k] == 1   ? TRN_TER_LAYOUT_EXTRA_1
                               : extras[k] == 4 ? TRN_TER_LAYOUT_EXTRA_4
                                                : TRN_TER_LAYOUT_EXTRA_5);
        CHECK_EQ_INT(t.extra_count, extras[k]);
        CHECK_EQ_INT(t.material_count, 2);
        CHECK(strcmp(t.materials[1], "rock") == 0);
        CHECK(t.extra_maps != NULL);
        CHECK_EQ_INT(t.extra_maps[0], 7);
        CHECK_EQ_INT(t.extra_maps[256 * extras[k] - 1], ((256 * extras[k] - 1) * 31 + 7) & 0xFF);
        CHECK_EQ_INT(t.warning_count, 1);
        CHECK_EQ_INT(t.warnings[0].offset, 5 + 3 * 256);
        CHECK(has_warning(&t, extras[k] == 1   ? "1 extra 16 x 16 block"
                              : extras[k] == 4 ? "4 extra 16 x 16 blocks"
                                               : "5 extra 16 x 16 blocks"));
        /* In a version 9 file no layout with extra maps is the engine's. */
        CHECK(has_warning(&t, "not written by the engine"));
        CHECK_CONTAINS(trn_ter_layout_name(t.layout), extras[k] == 1   ? "1 extra map"
                                                      : extras[k] == 4 ? "4 extra maps"
                                                                       : "5 extra maps");
        CHECK(serializes_to(&t, 9, b.d, b.n));
        /* Through disk as well. */
        char path[600];
        tmp_path("extra.ter", path, sizeof path);
        CHECK(trn_test_write_file(path, b.d, b.n));
        trn_ter r;
        CHECK_OK(trn_ter_read(path, NULL, &r, NULL, NULL, &e));
        CHECK(ter_equal(&t, &r));
        char out[600];
        tmp_path("extra_out.ter", out, sizeof out);
        CHECK_OK(trn_ter_write(out, &r, 9, NULL, NULL, &e));
        size_t n = 0;
        uint8_t *back = trn_test_read_file(out, &n);
        CHECK(back && n == b.n && memcmp(back, b.d, n) == 0);
        free(back);
        trn_ter_dispose(&r);
        trn_ter_dispose(&t);
        free(b.d);
    }
    CHECK_CONTAINS(trn_ter_layout_name(TRN_TER_LAYOUT_MODERN), "modern");
    CHECK_CONTAINS(trn_ter_layout_name(TRN_TER_LAYOUT_LEGACY), "legacy");
}

/* A fresh terrain as BeamNG's World Editor saved it as version 8 (in a public level of 2023):
 * heights a quarter up (16384), every sample material 0, then four all-zero maps before the
 * count, one name. It reads, says it is the editor's version 8 form, and writes back as it was. */
static void test_editor_v8_layout(void)
{
    const uint32_t size = 16, n = size * size;
    buf b = {0};
    put_u8(&b, 8);
    put_u32(&b, size);
    for (uint32_t i = 0; i < n; i++)
        put_u16(&b, 16384);
    for (uint32_t i = 0; i < 5 * n; i++)
        put_u8(&b, 0);
    put_u32(&b, 1);
    put_name(&b, "warning_material");
    CHECK_EQ_INT(b.n, 5 + 7 * n + 4 + 17);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.version, 8);
    CHECK_EQ_INT(t.layout, TRN_TER_LAYOUT_EXTRA_4);
    CHECK_EQ_INT(t.extra_count, 4);
    CHECK_EQ_INT(t.material_count, 1);
    CHECK(strcmp(t.materials[0], "warning_material") == 0);
    CHECK_EQ_INT(t.heights[n - 1], 16384);
    CHECK(has_warning(&t, "as version 8 files of the World Editor hold them"));
    CHECK(serializes_to(&t, 8, b.d, b.n));
    trn_ter_dispose(&t);
    free(b.d);
}

/* A file that fits no layout (two extra blocks): the error is where the modern reading failed,
 * and the message says what each extra-map layout found. */
static void test_no_layout_fits(void)
{
    const char *names[] = {"grass", "rock"};
    buf b = build_modern(9, 16, 2, names, 2, 2);
    /* The count is read from the extra bytes 7, 38, 69, 100 (0x64452607) at 5 + 3 * 256 = 773;
     * with one block skipped the same bytes come again at 1029; five blocks need 1280 bytes. */
    char path[600];
    tmp_path("two_extra.ter", path, sizeof path);
    CHECK(trn_test_write_file(path, b.d, b.n));
    for (int from_disk = 0; from_disk < 2; from_disk++) {
        trn_ter t;
        trn_error e;
        trn_status st = from_disk ? trn_ter_read(path, NULL, &t, NULL, NULL, &e)
                                  : trn_ter_parse(b.d, b.n, path, NULL, &t, &e);
        CHECK_EQ_INT(st, TRN_ERR_LIMIT);
        CHECK_EQ_INT(e.offset, 773);
        CHECK(strncmp(e.message, "material count: 1682253319 materials, more than the limit", 57) ==
              0);
        CHECK_CONTAINS(e.message,
                       "also tried 1, 4 and 5 extra 16 x 16 maps before the material count");
        CHECK_CONTAINS(e.message, "with 1, at offset 1029, material count: 1682253319 materials");
        CHECK_CONTAINS(e.message, "with 4, the file ends before the maps do");
        CHECK_CONTAINS(e.message, "with 5, the file ends before the maps do");
        CHECK(t.heights == NULL && t.materials == NULL);
    }
    free(b.d);

    /* Names that end early: said so first, then each layout. */
    b = build_modern(9, 16, 2, names, 2, 1);
    put(&b, "xy", 2);
    trn_ter t;
    trn_error e;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 773);
    b.d[773] = 0; /* the modern reading now finds 0 names, ending at 777 */
    b.d[774] = b.d[775] = b.d[776] = 0;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 777);
    CHECK_CONTAINS(e.message, "names do not end at the end of the file: 269 bytes after the last "
                              "material name (at offset 777)");
    CHECK_CONTAINS(e.message, "with 1, the names end at offset 1044, 2 bytes early");
    CHECK_CONTAINS(e.message, "with 5, the file ends before the maps do");
    free(b.d);
}

/* ------------------------------------------------------------ malformed modern files */

static char long_name[301];

static void test_truncated_modern(void)
{
    memset(long_name, 'q', 300);
    long_name[300] = '\0';
    const char *names[] = {"grass", long_name, "x"};
    buf b = build_modern(8, 4, 3, names, 3, 0);
    /* Sections: header 0..4, heights 5..36, layers 37..52, count 53..56, name 0 at 57 (6
     * bytes), name 1 prefix at 63 (3 bytes), bytes at 66 (300), name 2 at 366, end 368. */
    CHECK_EQ_INT(b.n, 368);
    trn_ter ok;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &ok, NULL));
    CHECK_EQ_INT(ok.material_lengths[1], 300);
    CHECK(ok.material_long_form == NULL);
    CHECK(serializes_to(&ok, 8, b.d, b.n));
    trn_ter_dispose(&ok);
    struct {
        size_t cut;
        trn_status code;
        int64_t offset;
        const char *section;
    } cases[] = {
        {0, TRN_ERR_TRUNCATED, 0, "header"},
        {1, TRN_ERR_TRUNCATED, 1, "header"},
        {4, TRN_ERR_TRUNCATED, 1, "header"},
        {5, TRN_ERR_TRUNCATED, 5, "heights"},
        {36, TRN_ERR_TRUNCATED, 5, "heights"},
        {37, TRN_ERR_TRUNCATED, 37, "layer map"},
        {52, TRN_ERR_TRUNCATED, 37, "layer map"},
        {53, TRN_ERR_TRUNCATED, 53, "material count"},
        {56, TRN_ERR_TRUNCATED, 53, "material count"},
        {57, TRN_ERR_TRUNCATED, 57, "material name 0"},
        {58, TRN_ERR_TRUNCATED, 58, "material name 0"},
        {62, TRN_ERR_TRUNCATED, 58, "material name 0"},
        {63, TRN_ERR_TRUNCATED, 63, "material name 1"},
        {64, TRN_ERR_TRUNCATED, 63, "material name 1"},
        {65, TRN_ERR_TRUNCATED, 63, "material name 1"},
        {66, TRN_ERR_TRUNCATED, 66, "material name 1"},
        {365, TRN_ERR_TRUNCATED, 66, "material name 1"},
        {366, TRN_ERR_TRUNCATED, 366, "material name 2"},
        {367, TRN_ERR_TRUNCATED, 367, "material name 2"},
    };
    char path[600];
    tmp_path("cut.ter", path, sizeof path);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trn_ter t;
        trn_error e;
        CHECK_STATUS(trn_ter_parse(b.d, cases[i].cut, "cut.ter", NULL, &t, &e), cases[i].code);
        CHECK_EQ_INT(e.offset, cases[i].offset);
        CHECK_CONTAINS(e.message, cases[i].section);
        CHECK(t.heights == NULL && t.materials == NULL);
        /* The disk reader reports exactly the same. */
        CHECK(trn_test_write_file(path, b.d, cases[i].cut));
        trn_error e2;
        CHECK_STATUS(trn_ter_read(path, NULL, &t, NULL, NULL, &e2), cases[i].code);
        CHECK_EQ_INT(e2.offset, cases[i].offset);
        CHECK(strcmp(e.message, e2.message) == 0);
        CHECK(strcmp(e2.file, path) == 0);
    }
    /* Bytes after the names: trailing data at the end of the last name. */
    put(&b, "xyz", 3);
    trn_ter t;
    trn_error e;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 368);
    CHECK_CONTAINS(e.message, "3 bytes after the last material name");
    CHECK(trn_test_write_file(path, b.d, b.n));
    CHECK_STATUS(trn_ter_read(path, NULL, &t, NULL, NULL, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 368);
    free(b.d);

    /* A tail longer than any valid one takes the reader's fallback path: same error. */
    const char *one[] = {"a"};
    b = build_modern(9, 2, 1, one, 1, 0);
    for (int i = 0; i < 70000; i++)
        put_u8(&b, 0);
    trn_ter_limits few;
    trn_ter_limits_default(&few);
    few.max_materials = 1;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, &few, &t, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 23);
    CHECK(trn_test_write_file(path, b.d, b.n));
    CHECK_STATUS(trn_ter_read(path, &few, &t, NULL, NULL, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 23);
    CHECK_CONTAINS(e.message, "70000 bytes after the last material name");
    free(b.d);

    /* Names running past EOF: a count of 4 with 3 names, and a length past the end. */
    b = build_modern(9, 2, 1, names, 3, 0);
    size_t count_at = 5 + 12;
    b.d[count_at] = 4;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, (int64_t)b.n);
    CHECK_CONTAINS(e.message, "material name 3");
    b.d[count_at] = 3;
    b.d[b.n - 2] = 9; /* name "x" now claims 9 bytes */
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, (int64_t)b.n - 1);
    CHECK_CONTAINS(e.message, "material name 2: expected 9 bytes");
    free(b.d);
}

static void test_header_errors(void)
{
    trn_ter t;
    trn_error e;
    const uint8_t v10[] = {10, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK_STATUS(trn_ter_parse(v10, sizeof v10, NULL, NULL, &t, &e), TRN_ERR_VERSION);
    CHECK(strcmp(e.message, "version 10 is newer than 9") == 0);
    CHECK_EQ_INT(e.offset, 0);
    const uint8_t v200[] = {200};
    CHECK_STATUS(trn_ter_parse(v200, 1, NULL, NULL, &t, &e), TRN_ERR_VERSION);
    CHECK(strcmp(e.message, "version 200 is newer than 9") == 0);
    const uint8_t v0[] = {0, 1, 0, 0, 0};
    CHECK_STATUS(trn_ter_parse(v0, sizeof v0, NULL, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.message, "version 0");

    const uint8_t zero[] = {9, 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK_STATUS(trn_ter_parse(zero, sizeof zero, NULL, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 1);
    CHECK_CONTAINS(e.message, "size is 0");

    const uint8_t huge[] = {9, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
    CHECK_STATUS(trn_ter_parse(huge, sizeof huge, NULL, NULL, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 1);
    CHECK_CONTAINS(e.message, "4294967295");
    trn_ter_limits wide = {UINT32_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX};
    CHECK_STATUS(trn_ter_parse(huge, sizeof huge, NULL, &wide, &t, &e), TRN_ERR_OVERFLOW);
    CHECK_EQ_INT(e.offset, 1);
    /* Just inside the 64-bit range the maps are simply truncated, never allocated. */
    const uint8_t big[] = {9, 0x00, 0x00, 0x00, 0x40, 0, 0};
    CHECK_STATUS(trn_ter_parse(big, sizeof big, NULL, &wide, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 5);
    CHECK_CONTAINS(e.message, "heights");

    /* The file-size limit. */
    trn_ter_limits tight;
    trn_ter_limits_default(&tight);
    tight.max_file_bytes = 4;
    CHECK_STATUS(trn_ter_parse(zero, sizeof zero, NULL, &tight, &t, &e), TRN_ERR_LIMIT);

    /* Too many materials for the limit. */
    const char *names[] = {"a"};
    buf b = build_modern(9, 2, 1, names, 1, 0);
    b.d[5 + 12] = 0x70;
    b.d[5 + 12 + 1] = 0x11; /* 0x1170 = 4464 */
    tight.max_file_bytes = 1 << 20;
    tight.max_materials = 1000;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, NULL, &tight, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 17);
    CHECK_CONTAINS(e.message, "material count");
    free(b.d);

    /* Missing files and folders. */
    char path[600];
    CHECK_STATUS(trn_ter_read(tmp_path("missing.ter", path, sizeof path), NULL, &t, NULL, NULL, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_ter_read(tmp_dir, NULL, &t, NULL, NULL, &e), TRN_ERR_IO);
    /* Version 10 from disk. */
    CHECK(trn_test_write_file(tmp_path("v10.ter", path, sizeof path), v10, sizeof v10));
    CHECK_STATUS(trn_ter_read(path, NULL, &t, NULL, NULL, &e), TRN_ERR_VERSION);
    CHECK(strcmp(e.message, "version 10 is newer than 9") == 0);
}

static void test_long_names(void)
{
    static char n255[256], n254[255];
    memset(n255, 'a', 255);
    memset(n254, 'b', 254);
    const char *names[] = {n255, n254, ""};
    buf b = build_modern(9, 2, 1, names, 3, 0);
    size_t names_at = 5 + 12 + 4;
    CHECK_EQ_INT(b.d[names_at], 0xFF);
    CHECK_EQ_INT(b.d[names_at + 1], 255);
    CHECK_EQ_INT(b.d[names_at + 2], 0);
    CHECK_EQ_INT(b.d[names_at + 3 + 255], 254);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.material_lengths[0], 255);
    CHECK_EQ_INT(strlen(t.materials[0]), 255);
    CHECK_EQ_INT(t.material_lengths[1], 254);
    CHECK_EQ_INT(t.material_lengths[2], 0);
    CHECK(serializes_to(&t, 9, b.d, b.n));
    trn_ter_dispose(&t);
    free(b.d);

    /* A short name stored in the long form (not what the engine writes) still round-trips. */
    buf c = {0};
    put_u8(&c, 9);
    put_u32(&c, 1);
    put_u16(&c, 500);
    put_u8(&c, 0);
    put_u32(&c, 2);
    put_u8(&c, 0xFF);
    put_u16(&c, 4);
    put(&c, "rock", 4);
    put_name(&c, "sand");
    CHECK_OK(trn_ter_parse(c.d, c.n, NULL, NULL, &t, &e));
    CHECK(t.material_long_form != NULL);
    CHECK_EQ_INT(t.material_long_form[0], 1);
    CHECK_EQ_INT(t.material_long_form[1], 0);
    CHECK(strcmp(t.materials[0], "rock") == 0);
    CHECK(serializes_to(&t, 9, c.d, c.n));
    trn_ter_dispose(&t);
    free(c.d);
}

static void test_material_warnings(void)
{
    /* 300 materials: read, warned about, and written back unchanged. */
    static char storage[300][16];
    const char *names[300];
    for (unsigned i = 0; i < 300; i++) {
        snprintf(storage[i], sizeof storage[i], "m%u", i);
        names[i] = storage[i];
    }
    buf b = build_modern(9, 4, 0, names, 300, 0);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.material_count, 300);
    CHECK_EQ_INT(t.warning_count, 1);
    CHECK(has_warning(&t, "300 materials are listed; the engine uses at most 254"));
    CHECK_EQ_INT(t.warnings[0].offset, 5 + 48);
    CHECK(strcmp(t.materials[299], "m299") == 0);
    CHECK(serializes_to(&t, 9, b.d, b.n));
    trn_ter_dispose(&t);
    free(b.d);

    /* Layer values past the list: one warning per value, with counts; holes are fine. */
    const char *six[] = {"a", "b", "c", "d", "e", "f"};
    b = build_modern(9, 4, 1, six, 6, 0);
    size_t layers_at = 5 + 32;
    b.d[layers_at + 2] = 7;
    b.d[layers_at + 5] = 7;
    b.d[layers_at + 9] = 7;
    b.d[layers_at + 11] = 9;
    b.d[layers_at + 0] = 255;
    b.d[layers_at + 15] = 255;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    CHECK_EQ_INT(t.warning_count, 2);
    CHECK(strcmp(t.warnings[0].message,
                 "3 samples use layer index 7 but only 6 materials are listed") == 0);
    CHECK_EQ_INT(t.warnings[0].offset, (int64_t)layers_at + 2);
    CHECK(strcmp(t.warnings[1].message,
                 "1 sample uses layer index 9 but only 6 materials are listed") == 0);
    CHECK_EQ_INT(t.warnings[1].offset, (int64_t)layers_at + 11);
    uint64_t counts[256];
    trn_ter_layer_histogram(&t, counts);
    CHECK_EQ_INT(counts[255], 2);
    CHECK_EQ_INT(counts[7], 3);
    CHECK_EQ_INT(counts[0], 10);
    CHECK(serializes_to(&t, 9, b.d, b.n));
    /* The disk reader finds the same warnings. */
    char path[600];
    CHECK(trn_test_write_file(tmp_path("warn.ter", path, sizeof path), b.d, b.n));
    trn_ter r;
    CHECK_OK(trn_ter_read(path, NULL, &r, NULL, NULL, &e));
    CHECK(ter_equal(&t, &r));
    trn_ter_dispose(&r);
    trn_ter_dispose(&t);
    free(b.d);
}

/* ------------------------------------------------------------ writer */

static int cancel_at_call;
static int progress_calls;
static double progress_last;
static bool progress_monotonic;

static int counting_progress(double done, const char *stage, void *user)
{
    (void)stage;
    (void)user;
    progress_calls++;
    if (done < progress_last) progress_monotonic = false;
    progress_last = done;
    return progress_calls == cancel_at_call ? TRN_CANCEL : TRN_CONTINUE;
}

static void reset_progress(int cancel_at)
{
    cancel_at_call = cancel_at;
    progress_calls = 0;
    progress_last = 0.0;
    progress_monotonic = true;
}

static void test_writer(void)
{
    const char *names[] = {"grass"};
    buf b = build_modern(7, 64, 1, names, 1, 0);
    trn_ter t;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &t, &e));
    uint8_t *out = NULL;
    size_t out_size = 0;
    CHECK_STATUS(trn_ter_serialize(&t, 6, &out, &out_size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "version 6");
    CHECK_STATUS(trn_ter_serialize(&t, 10, &out, &out_size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    char path[600];
    tmp_path("w.ter", path, sizeof path);
    CHECK_STATUS(trn_ter_write(path, &t, 10, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(access(path, F_OK) != 0);

    /* Progress reaches 1 in order; cancelling leaves an existing file and no temp files. */
    reset_progress(0);
    CHECK_OK(trn_ter_write(path, &t, 7, counting_progress, NULL, &e));
    CHECK(progress_calls >= 2 && progress_monotonic && progress_last > 0.999999);
    CHECK(trn_test_write_file(path, "old", 3));
    reset_progress(1);
    CHECK_STATUS(trn_ter_write(path, &t, 7, counting_progress, NULL, &e), TRN_ERR_CANCELLED);
    size_t n = 0;
    uint8_t *kept = trn_test_read_file(path, &n);
    CHECK(kept && n == 3 && memcmp(kept, "old", 3) == 0);
    free(kept);
    DIR *d = opendir(tmp_dir);
    struct dirent *ent;
    while (d && (ent = readdir(d)))
        CHECK(strstr(ent->d_name, ".tmp-") == NULL);
    if (d) closedir(d);

    /* Reading: progress and cancel leave the output empty. */
    CHECK(trn_test_write_file(path, b.d, b.n));
    trn_ter r;
    reset_progress(0);
    CHECK_OK(trn_ter_read(path, NULL, &r, counting_progress, NULL, &e));
    CHECK(progress_calls >= 3 && progress_monotonic && progress_last > 0.999999);
    trn_ter_dispose(&r);
    reset_progress(2);
    CHECK_STATUS(trn_ter_read(path, NULL, &r, counting_progress, NULL, &e), TRN_ERR_CANCELLED);
    CHECK(r.heights == NULL && r.layers == NULL && r.materials == NULL);

    /* A name too long for the u16 length is refused. */
    char *huge = malloc(70000);
    memset(huge, 'n', 69999);
    huge[69999] = '\0';
    char *saved = t.materials[0];
    uint32_t saved_len = t.material_lengths[0];
    t.materials[0] = huge;
    t.material_lengths[0] = 69999;
    CHECK_STATUS(trn_ter_serialize(&t, 9, &out, &out_size, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "material name 0");
    t.materials[0] = saved;
    t.material_lengths[0] = saved_len;
    free(huge);

    /* material_lengths may be NULL (built by hand): strlen is used. */
    uint32_t *lengths = t.material_lengths;
    t.material_lengths = NULL;
    CHECK(serializes_to(&t, 7, b.d, b.n));
    t.material_lengths = lengths;
    trn_ter_dispose(&t);
    trn_ter_dispose(NULL);
    free(b.d);
}

/* ------------------------------------------------------------ copy */

static bool file_is(const char *path, const void *bytes, size_t size)
{
    size_t n = 0;
    uint8_t *got = trn_test_read_file(path, &n);
    bool same = got && n == size && memcmp(got, bytes, size) == 0;
    free(got);
    return same;
}

static bool no_temporaries(void)
{
    bool none = true;
    DIR *d = opendir(tmp_dir);
    struct dirent *ent;
    while (d && (ent = readdir(d)))
        none = none && strstr(ent->d_name, ".tmp-") == NULL;
    if (d) closedir(d);
    return none;
}

/* What read then write gives, for comparison with the copy. */
static bool copy_matches_write(const char *in, const char *out, unsigned version, bool keep)
{
    trn_ter t;
    if (trn_ter_read(in, NULL, &t, NULL, NULL, NULL) != TRN_OK) return false;
    if (!(keep && version == t.version)) t.extra_count = 0;
    uint8_t *want = NULL;
    size_t want_size = 0;
    bool ok = trn_ter_serialize(&t, (uint8_t)version, &want, &want_size, NULL) == TRN_OK &&
              file_is(out, want, want_size);
    free(want);
    trn_ter_dispose(&t);
    return ok;
}

static const char *appended_to; /* the input the progress callback grows while it is copied */

static int growing_progress(double done, const char *stage, void *user)
{
    (void)done;
    (void)user;
    if (appended_to && strcmp(stage, "copying") == 0) {
        FILE *f = fopen(appended_to, "ab");
        if (f) {
            fputc(0, f);
            fclose(f);
        }
        appended_to = NULL;
    }
    return TRN_CONTINUE;
}

static void test_copy(void)
{
    const char *names[] = {"grass", "rock"};
    buf b = build_modern(8, 64, 3, names, 2, 1); /* layer 2 is past the list: a warning */
    char in[600], out[600];
    tmp_path("copy_in.ter", in, sizeof in);
    tmp_path("copy_out.ter", out, sizeof out);
    CHECK(trn_test_write_file(in, b.d, b.n));
    trn_ter info;
    trn_error e;
    /* Its own version with the extra map kept: the same bytes. */
    CHECK_OK(trn_ter_copy(in, out, NULL, 8, true, &info, NULL, NULL, &e));
    CHECK(file_is(out, b.d, b.n));
    CHECK_EQ_INT(info.version, 8);
    CHECK_EQ_INT(info.size, 64);
    CHECK_EQ_INT(info.layout, TRN_TER_LAYOUT_EXTRA_1);
    CHECK_EQ_INT(info.extra_count, 1);
    CHECK_EQ_INT(info.material_count, 2);
    CHECK(strcmp(info.materials[1], "rock") == 0);
    CHECK(info.heights == NULL && info.layers == NULL && info.extra_maps == NULL);
    CHECK(has_warning(&info, "layer index 2 but only 2 materials"));
    CHECK(has_warning(&info, "1 extra 64 x 64 block"));
    trn_ter_dispose(&info);
    /* Another version, or extra maps not asked for: what read then write gives. */
    const struct {
        unsigned version;
        bool keep;
    } cases[] = {{9, true}, {8, false}, {7, false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        reset_progress(0);
        CHECK_OK(trn_ter_copy(in, out, NULL, (uint8_t)cases[k].version, cases[k].keep, NULL,
                              counting_progress, NULL, &e));
        CHECK(progress_calls >= 3 && progress_monotonic && progress_last > 0.999999);
        CHECK(copy_matches_write(in, out, cases[k].version, cases[k].keep));
    }
    CHECK(no_temporaries());

    /* Refused inputs leave the output as it was: the same errors as the reader. */
    CHECK(trn_test_write_file(out, "old", 3));
    const size_t cuts[] = {0, 3, 5 + 2 * 4096 + 100, b.n - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        CHECK(trn_test_write_file(in, b.d, cuts[k]));
        trn_ter r;
        trn_error re;
        trn_status want = trn_ter_read(in, NULL, &r, NULL, NULL, &re);
        CHECK(want != TRN_OK);
        CHECK_STATUS(trn_ter_copy(in, out, NULL, 9, true, &info, NULL, NULL, &e), want);
        CHECK_EQ_INT(e.offset, re.offset);
        CHECK(strcmp(e.message, re.message) == 0);
        CHECK(info.materials == NULL);
        CHECK(file_is(out, "old", 3));
    }
    CHECK(trn_test_write_file(in, b.d, b.n));
    CHECK_STATUS(trn_ter_copy(in, out, NULL, 6, true, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "version 6");
    /* Cancelled, or the input written to while it is copied: the output stays. */
    reset_progress(3);
    CHECK_STATUS(trn_ter_copy(in, out, NULL, 9, true, NULL, counting_progress, NULL, &e),
                 TRN_ERR_CANCELLED);
    appended_to = in;
    CHECK_STATUS(trn_ter_copy(in, out, NULL, 9, true, NULL, growing_progress, NULL, &e),
                 TRN_ERR_IO);
    CHECK(appended_to == NULL);
    CHECK_CONTAINS(e.message, "changed while it was being copied");
    CHECK(file_is(out, "old", 3));
    CHECK(no_temporaries());
    free(b.d);

    /* A legacy file is converted as read then write converts it. */
    b = build_legacy(2, legacy_names, alpha_pattern);
    CHECK(trn_test_write_file(in, b.d, b.n));
    CHECK_OK(trn_ter_copy(in, out, NULL, 9, true, &info, NULL, NULL, &e));
    CHECK_EQ_INT(info.layout, TRN_TER_LAYOUT_LEGACY);
    CHECK_EQ_INT(info.version, 2);
    CHECK(info.heights == NULL && info.layers == NULL);
    CHECK(copy_matches_write(in, out, 9, true));
    trn_ter_dispose(&info);
    free(b.d);
}

/* A file whose maps span several read chunks (8 MiB): same result on 1 and 3 threads, and the
 * same as parsing the bytes; cancel works between rounds. */
static void test_large_read(void)
{
    const char *names[] = {"grass", "rock", "sand"};
    buf b = build_modern(9, 3000, 3, names, 3, 0);
    b.d[5 + 2 * 3000 * 3000 + 8900000] = 200; /* one bad layer deep in the second chunk */
    char path[600];
    CHECK(trn_test_write_file(tmp_path("large.ter", path, sizeof path), b.d, b.n));
    trn_ter parsed, r1, r3;
    trn_error e;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, NULL, &parsed, &e));
    CHECK_EQ_INT(parsed.warning_count, 1);
    CHECK_EQ_INT(parsed.warnings[0].offset, 5 + 2 * 3000 * 3000 + 8900000);
#ifdef _OPENMP
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_ter_read(path, NULL, &r1, NULL, NULL, &e));
#ifdef _OPENMP
    omp_set_num_threads(3);
#endif
    reset_progress(0);
    CHECK_OK(trn_ter_read(path, NULL, &r3, counting_progress, NULL, &e));
    CHECK(progress_calls >= 3 && progress_monotonic && progress_last > 0.999999);
    CHECK(ter_equal(&parsed, &r1));
    CHECK(ter_equal(&parsed, &r3));
    /* A copy checks the layer map in pieces too, beside the copy or after it: the warning of
     * the one bad index deep in the map. */
    char out[600];
    tmp_path("large_copy.ter", out, sizeof out);
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        trn_ter info;
        CHECK_OK(trn_ter_copy(path, out, NULL, 9, true, &info, NULL, NULL, &e));
        CHECK_EQ_INT(info.warning_count, 1);
        CHECK(has_warning(&info, "layer index 200"));
        trn_ter_dispose(&info);
        CHECK(copy_matches_write(path, out, 9, true));
    }
    remove(out);
    trn_ter c;
    reset_progress(1);
    CHECK_STATUS(trn_ter_read(path, NULL, &c, counting_progress, NULL, &e), TRN_ERR_CANCELLED);
    CHECK(c.heights == NULL && c.layers == NULL);
    /* Its heights in metres on 3 threads and on 1: each sample its stored value times the
     * step, wherever a thread's part of the map begins. */
    trn_field f1, f3;
    CHECK_OK(trn_ter_to_field(&r3, 2048.0, 1.0, &f3, NULL, &e));
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_ter_to_field(&r1, 2048.0, 1.0, &f1, NULL, &e));
    const size_t samples = (size_t)3000 * 3000;
    CHECK(memcmp(f1.heights, f3.heights, samples * sizeof(float)) == 0);
    bool exact = true;
    for (size_t k = 0; k < samples; k++)
        exact = exact && f3.heights[k] == (float)(r1.heights[k] * (2048.0 / 65536.0));
    CHECK(exact);
    trn_field_dispose(&f1);
    trn_field_dispose(&f3);
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    trn_ter_dispose(&r3);
    trn_ter_dispose(&r1);
    trn_ter_dispose(&parsed);
    free(b.d);
    unlink(path);
}

/* ------------------------------------------------------------ fields */

static void test_field_round_trip(void)
{
    const double max_heights[] = {1.0, 600.0, 2048.0, 3000.7, 65536.0 * 3.0};
    const uint32_t sizes[] = {1, 2, 33, 128};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint32_t size = sizes[s];
        size_t n = (size_t)size * size;
        trn_ter t;
        memset(&t, 0, sizeof t);
        t.version = 9;
        t.size = size;
        t.heights = malloc(n * 2);
        t.layers = malloc(n);
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng_next();
            t.heights[i] = (uint16_t)r;
            if (i % 17 == 0) t.heights[i] = 65535;
            if (i % 19 == 0) t.heights[i] = 0;
            t.layers[i] = (uint8_t)((r >> 16) % 3);
            if (i % 23 == 0) t.layers[i] = 255;
        }
        const char *mats[] = {"grass", "rock", "sand"};
        t.materials = malloc(3 * sizeof *t.materials);
        for (int k = 0; k < 3; k++)
            t.materials[k] = strdup(mats[k]);
        t.material_count = 3;
        for (size_t m = 0; m < sizeof max_heights / sizeof max_heights[0]; m++) {
            double mh = max_heights[m];
            trn_field f;
            trn_labels l;
            trn_error e;
            CHECK_OK(trn_ter_to_field(&t, mh, 2.0, &f, &l, &e));
            CHECK_EQ_INT(f.cells_x, size - 1);
            CHECK_EQ_INT(f.cells_z, size - 1);
            CHECK(f.size_x == (size - 1) * 2.0 && f.size_z == f.size_x);
            CHECK(f.quantum == mh / 65536.0 && f.quantum_base == 0.0);
            /* Orientation: field (i, j) is ter x = i of row j. */
            uint32_t i = size / 2, j = size - 1;
            CHECK(f.heights[(size_t)j * (f.cells_x + 1) + i] ==
                  (float)(t.heights[(size_t)j * size + i] * (mh / 65536.0)));
            CHECK_EQ_INT(l.name_count, 3);
            CHECK(strcmp(l.names[2], "sand") == 0);
            CHECK(memcmp(l.values, t.layers, n) == 0);
            trn_ter back;
            CHECK_OK(trn_ter_from_field(&f, mh, &l, NULL, &back, &e));
            CHECK_EQ_INT(back.size, size);
            CHECK_EQ_INT(back.version, 9);
            CHECK(memcmp(back.heights, t.heights, n * 2) == 0);
            CHECK(memcmp(back.layers, t.layers, n) == 0);
            CHECK_EQ_INT(back.material_count, 3);
            CHECK(strcmp(back.materials[1], "rock") == 0);
            trn_ter_dispose(&back);
            trn_field_dispose(&f);
            trn_labels_dispose(&l);
        }
        trn_ter_dispose(&t);
    }
}

static void test_from_field_quantise(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 2, 2, 10.0, 10.0, NULL));
    const float h[9] = {-5.0f,  0.0f,    1.0f, 1.0f + 1.0f / 128.0f, 511.99f,
                        512.0f, 2000.0f, NAN,  1.5f / 64.0f};
    memcpy(f.heights, h, sizeof h);
    trn_ter t;
    trn_error e;
    /* max height 512: quantum 1/128 m. */
    CHECK_OK(trn_ter_from_field(&f, 512.0, NULL, "dirt", &t, &e));
    CHECK_EQ_INT(t.size, 3);
    CHECK_EQ_INT(t.heights[0], 0);
    CHECK_EQ_INT(t.heights[1], 0);
    CHECK_EQ_INT(t.heights[2], 128);
    CHECK_EQ_INT(t.heights[3], 129);
    CHECK_EQ_INT(t.heights[4], 65535); /* round(65534.72) clamps */
    CHECK_EQ_INT(t.heights[5], 65535);
    CHECK_EQ_INT(t.heights[6], 65535);
    CHECK_EQ_INT(t.heights[7], 0);
    CHECK_EQ_INT(t.heights[8], 3);
    CHECK_EQ_INT(t.material_count, 1);
    CHECK(strcmp(t.materials[0], "dirt") == 0);
    CHECK_EQ_INT(t.layers[8], 0);
    trn_ter_dispose(&t);
    CHECK_OK(trn_ter_from_field(&f, 512.0, NULL, NULL, &t, &e));
    CHECK(strcmp(t.materials[0], "default") == 0);
    trn_ter_dispose(&t);
    CHECK_STATUS(trn_ter_from_field(&f, 0.0, NULL, NULL, &t, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_labels l;
    CHECK_OK(trn_labels_init(&l, 3, 3, NULL));
    CHECK_STATUS(trn_ter_from_field(&f, 512.0, &l, NULL, &t, &e), TRN_ERR_MISMATCH);
    trn_labels_dispose(&l);
    trn_field_dispose(&f);
    CHECK_OK(trn_field_init(&f, 2, 3, 10.0, 15.0, NULL));
    CHECK_STATUS(trn_ter_from_field(&f, 512.0, NULL, NULL, &t, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

/* The sample limit: the size itself is accepted, one sample less is refused at the size field
 * (offset 1), legacy files at their version byte, before anything is allocated. */
static void test_sample_limit(void)
{
    const char *names[] = {"grass"};
    buf b = build_modern(9, 16, 0, names, 1, 0);
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    CHECK(lim.max_samples == (uint64_t)1 << 30);
    CHECK(lim.max_samples == TRN_TER_DEFAULT_MAX_SAMPLES);
    trn_ter t;
    trn_error e;
    lim.max_samples = 256;
    CHECK_OK(trn_ter_parse(b.d, b.n, "m.ter", &lim, &t, &e));
    trn_ter_dispose(&t);
    lim.max_samples = 255;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, "m.ter", &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 1);
    CHECK(strcmp(e.file, "m.ter") == 0);
    CHECK_CONTAINS(e.message, "size 16 x 16 = 256 samples, more than the limit of 255");
    CHECK_CONTAINS(e.message, "--max-samples");
    /* The same from disk (the fast reader checks the same header). */
    char path[600];
    tmp_path("limit.ter", path, sizeof path);
    CHECK(trn_test_write_file(path, b.d, b.n));
    CHECK_STATUS(trn_ter_read(path, &lim, &t, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 1);
    lim.max_samples = 256;
    CHECK_OK(trn_ter_read(path, &lim, &t, NULL, NULL, &e));
    trn_ter_dispose(&t);
    free(b.d);

    b = build_legacy(2, legacy_names, alpha_pattern);
    lim.max_samples = 65536;
    CHECK_OK(trn_ter_parse(b.d, b.n, NULL, &lim, &t, &e));
    trn_ter_dispose(&t);
    lim.max_samples = 65535;
    CHECK_STATUS(trn_ter_parse(b.d, b.n, "old.ter", &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.message, "version 2 file is 256 x 256 = 65536 samples");
    CHECK(trn_test_write_file(path, b.d, b.n));
    CHECK_STATUS(trn_ter_read(path, &lim, &t, NULL, NULL, &e), TRN_ERR_LIMIT);
    unlink(path);
    free(b.d);
}

/* Readers take regular files: a FIFO is refused at once (no waiting for a writer). */
static void test_special_files(void)
{
    char fifo[600];
    tmp_path("fifo.ter", fifo, sizeof fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    trn_ter t;
    trn_error e;
    CHECK_STATUS(trn_ter_read(fifo, NULL, &t, NULL, NULL, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "is a pipe (FIFO), expected a regular file");
    CHECK(strcmp(e.file, fifo) == 0);
    unlink(fifo);
    CHECK_STATUS(trn_ter_read("/dev/zero", NULL, &t, NULL, NULL, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "character device");
}

/* trn_ter_probe: the whole-file layout, for telling a .ter from formats without a magic. */
static void test_probe(void)
{
    uint64_t end = 7;
    /* Legacy files of every layout fit exactly; one byte more or less does not. */
    const unsigned versions[] = {1, 2, 3, 5, 6};
    for (size_t k = 0; k < 5; k++) {
        buf b = build_legacy(versions[k], legacy_names, alpha_pattern);
        CHECK(trn_ter_probe(b.d, b.n, &end));
        CHECK_EQ_INT(end, b.n);
        CHECK(!trn_ter_probe(b.d, b.n - 1, &end));
        CHECK_EQ_INT(end, b.n - 1); /* cut short: a prefix */
        put_u8(&b, 0);
        CHECK(!trn_ter_probe(b.d, b.n, &end));
        CHECK_EQ_INT(end, b.n - 1); /* where the layout ended */
        free(b.d);
    }
    /* A flat sea-level legacy file: its first bytes also read as a terrain.dat header. */
    buf flat = build_legacy(2, legacy_names, alpha_pattern);
    memset(flat.d + 1, 0, 2 * 65536);
    CHECK(trn_ter_probe(flat.d, flat.n, NULL));
    free(flat.d);
    /* Modern files, with and without extra maps. */
    const char *names[] = {"grass", "rock"};
    for (unsigned extra = 0; extra <= 5; extra++) {
        buf b = build_modern(9, 8, 2, names, 2, extra);
        bool layout = extra == 0 || extra == 1 || extra == 4 || extra == 5;
        CHECK(trn_ter_probe(b.d, b.n, &end) == layout);
        if (layout) CHECK_EQ_INT(end, b.n);
        free(b.d);
    }
    buf m = build_modern(7, 8, 2, names, 2, 0);
    CHECK(!trn_ter_probe(m.d, 100, &end)); /* inside the maps */
    CHECK_EQ_INT(end, 100);
    CHECK(!trn_ter_probe(m.d, m.n - 1, &end)); /* inside the last name */
    CHECK_EQ_INT(end, m.n - 1);
    put_u8(&m, 0);
    CHECK(!trn_ter_probe(m.d, m.n, &end)); /* a byte after the names */
    CHECK_EQ_INT(end, m.n - 1);
    free(m.d);
    /* Headers that are no .ter: the offset of the field at fault. */
    const uint8_t zero_size[] = {9, 0, 0, 0, 0};
    CHECK(!trn_ter_probe(zero_size, sizeof zero_size, &end));
    CHECK_EQ_INT(end, 1);
    const uint8_t v0[] = {0, 0, 0, 0, 0};
    CHECK(!trn_ter_probe(v0, sizeof v0, &end));
    CHECK_EQ_INT(end, 0);
    const uint8_t v10[] = {10, 1, 0, 0, 0};
    CHECK(!trn_ter_probe(v10, sizeof v10, &end));
    CHECK_EQ_INT(end, 0);
    const uint8_t short_header[] = {9, 1, 0};
    CHECK(!trn_ter_probe(short_header, sizeof short_header, &end));
    CHECK_EQ_INT(end, 3);
    CHECK(!trn_ter_probe(NULL, 0, &end));
    CHECK_EQ_INT(end, 0);
    CHECK(!trn_ter_probe((const uint8_t *)"TERRAGENTERRAIN ", 16, NULL));
}

int main(void)
{
    if (!trn_test_tmpdir(tmp_dir, sizeof tmp_dir)) {
        fprintf(stderr, "cannot create a temporary folder\n");
        return 1;
    }
    RUN(test_real_files);
    RUN(test_real_histogram);
    RUN(test_terragen_refused);
    RUN(test_sniff);
    RUN(test_legacy_v1);
    RUN(test_legacy_v2_v3_v5);
    RUN(test_legacy_clamp_and_empty);
    RUN(test_legacy_truncated);
    RUN(test_extra_layouts);
    RUN(test_editor_v8_layout);
    RUN(test_no_layout_fits);
    RUN(test_truncated_modern);
    RUN(test_header_errors);
    RUN(test_long_names);
    RUN(test_material_warnings);
    RUN(test_writer);
    RUN(test_copy);
    RUN(test_large_read);
    RUN(test_field_round_trip);
    RUN(test_from_field_quantise);
    RUN(test_sample_limit);
    RUN(test_special_files);
    RUN(test_probe);
    if (real_files_seen == 0)
        printf("note: ../shared/testdata/real is absent; real-file checks skipped\n");
    return trn_test_finish();
}
