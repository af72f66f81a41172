/* Tests for the Heightfield Input node: every format, placement, scale, resampling, keys, errors.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "terrane/beamng.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/heightfield.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "terrane/resample.h"
#include "test.h"

static char dir[512];

/* The test surface: 17 x 17 samples, h = 100 + 4 i + 2 j metres (i east, j north), whole
 * metres so every 16-bit format with maxHeight 2048 (1/32 m steps) holds it exactly. */
#define N 17
static float plane(uint32_t i, uint32_t j)
{
    return (float)(100.0 + 4.0 * i + 2.0 * j);
}

static void make_field(trn_field *f, uint32_t n)
{
    CHECK_OK(trn_field_init(f, n - 1, n - 1, n - 1, n - 1, NULL));
    for (uint32_t j = 0; j < n; j++)
        for (uint32_t i = 0; i < n; i++)
            f->heights[(size_t)j * n + i] = plane(i, j);
}

static void path_in(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* A recipe of cells x cells over 160 x 160 m whose graph reads params into node "dem" and
 * publishes it; its folder is the test's. */
static bool recipe_with(const char *params, uint32_t cells, trn_recipe *r, trn_error *e)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"size\":[160,160],\"resolution\":[%u,%u],\"seed\":1,\"default_landform\":\"l\","
             "\"landforms\":{\"l\":{}},\"default_biome\":\"g\","
             "\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]}},\n\"graph\":{\"format_version\":1,"
             "\"output\":\"out\",\"nodes\":[\n{\"id\":\"dem\",\"type\":\"heightfield_input\","
             "\"params\":%s},\n{\"id\":\"out\",\"type\":\"terrain_output\","
             "\"inputs\":{\"field\":{\"node\":\"dem\"}}}]}}",
             cells, cells, params);
    memset(r, 0, sizeof *r);
    trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, e);
    if (!st) st = trn_recipe_set_base_dir(r, dir, e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e->message);
    return st == TRN_OK;
}

/* The node's output on the recipe's grid (malloc'd copy), or NULL with e filled. */
static float *run_node(const char *params, uint32_t cells, int threads, char *note, trn_error *e)
{
    trn_recipe r;
    if (!recipe_with(params, cells, &r, e)) return NULL;
    trn_graph g;
    float *out = NULL;
    if (trn_graph_from_recipe(&r, &g, e) == TRN_OK) {
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        trn_graph_run *run = NULL;
        if (trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, e) == TRN_OK) {
            trn_graph_value v;
            if (trn_graph_run_output(run, "dem", NULL, &v, e) == TRN_OK) {
                const size_t n = ((size_t)cells + 1) * (cells + 1);
                out = malloc(n * sizeof *out);
                if (out) memcpy(out, v.values, n * sizeof *out);
            }
            uint32_t count = 0;
            const trn_node_report *reps = trn_graph_run_report(run, &count);
            if (note && count) snprintf(note, 400, "%s", reps[0].note);
            trn_graph_run_free(run);
        }
        trn_graph_dispose(&g);
    }
    trn_recipe_dispose(&r);
    return out;
}

/* Diagnostics of a recipe's graph, located in its text. */
static bool diags_of(const char *params, trn_graph_diagnostics *d, char *text_out, size_t size)
{
    trn_recipe r;
    trn_error e;
    if (!recipe_with(params, 16, &r, &e)) return false;
    trn_graph g;
    bool ok = trn_graph_from_recipe(&r, &g, &e) == TRN_OK;
    memset(d, 0, sizeof *d);
    if (ok) {
        ok = trn_graph_check(&g, &r, d, &e) == TRN_OK;
        trn_graph_dispose(&g);
    }
    /* Rebuild the same text the recipe came from to locate positions. */
    snprintf(text_out, size,
             "{\"size\":[160,160],\"resolution\":[%u,%u],\"seed\":1,\"default_landform\":\"l\","
             "\"landforms\":{\"l\":{}},\"default_biome\":\"g\","
             "\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]}},\n\"graph\":{\"format_version\":1,"
             "\"output\":\"out\",\"nodes\":[\n{\"id\":\"dem\",\"type\":\"heightfield_input\","
             "\"params\":%s},\n{\"id\":\"out\",\"type\":\"terrain_output\","
             "\"inputs\":{\"field\":{\"node\":\"dem\"}}}]}}",
             16u, 16u, params);
    if (ok) trn_graph_diagnostics_locate(d, text_out, strlen(text_out), "graph");
    trn_recipe_dispose(&r);
    return ok;
}

static const trn_graph_diagnostic *find_diag(const trn_graph_diagnostics *d, const char *check)
{
    for (size_t k = 0; k < d->count; k++)
        if (strcmp(d->items[k].check, check) == 0) return &d->items[k];
    return NULL;
}

/* ---- files ---- */

static void write_files(void)
{
    trn_field f;
    make_field(&f, N);
    char p[600];
    trn_error e;
    path_in(p, sizeof p, "plane.tif");
    CHECK_OK(trn_geotiff_write(p, &f, NULL, TRN_GEOTIFF_COMPRESS_DEFLATE, &e));
    /* 16-bit: 1/32 m steps (maxHeight 2048). */
    trn_image img;
    CHECK_OK(trn_image_from_field(&f, 2048.0 / 65536.0, 0.0, &img, &e));
    path_in(p, sizeof p, "plane.png");
    CHECK_OK(trn_png_write(p, &img, NULL, NULL, NULL, &e));
    path_in(p, sizeof p, "plane.r16");
    CHECK_OK(trn_raw_write(p, &img, TRN_RAW_U16_LE, &e));
    path_in(p, sizeof p, "plane_unity.raw");
    CHECK_OK(trn_raw_write(p, &img, TRN_RAW_U16_LE, &e));
    path_in(p, sizeof p, "plane_mac.raw");
    CHECK_OK(trn_raw_write(p, &img, TRN_RAW_U16_BE, &e));
    trn_image_dispose(&img);
    /* R32: float metres, image row 0 north; 17 x 9 so raw_width must be given. */
    CHECK_OK(trn_image_init(&img, N, 9, 1, 32, &e));
    for (uint32_t row = 0; row < 9; row++)
        for (uint32_t i = 0; i < N; i++)
            ((float *)img.data)[row * N + i] = plane(i, 8 - row);
    path_in(p, sizeof p, "wide.r32");
    CHECK_OK(trn_raw_write(p, &img, TRN_RAW_F32_LE, &e));
    trn_image_dispose(&img);
    /* 8-bit PNG: v = i + 2 j. */
    CHECK_OK(trn_image_init(&img, N, N, 1, 8, &e));
    for (uint32_t row = 0; row < N; row++)
        for (uint32_t i = 0; i < N; i++)
            ((uint8_t *)img.data)[row * N + i] = (uint8_t)(i + 2 * (N - 1 - row));
    path_in(p, sizeof p, "byte.png");
    CHECK_OK(trn_png_write(p, &img, NULL, NULL, NULL, &e));
    trn_image_dispose(&img);
    /* .ter (square; 2048 m maxHeight). */
    trn_ter ter;
    CHECK_OK(trn_ter_from_field(&f, 2048.0, NULL, NULL, &ter, &e));
    path_in(p, sizeof p, "plane.ter");
    CHECK_OK(trn_ter_write(p, &ter, 9, NULL, NULL, &e));
    trn_ter_dispose(&ter);
    /* A georeferenced DEM: UTM 54N, 10 m pixels, corner (500000, 4000000), a NoData hole. */
    f.heights[8 * N + 8] = NAN;
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    const double t[6] = {500000, 10, 0, 4000000, 0, -10};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    g.projected_epsg = 32654;
    trn_geotiff_georef_derive(&g, N, N);
    path_in(p, sizeof p, "utm.tif");
    CHECK_OK(trn_geotiff_write(p, &f, &g, TRN_GEOTIFF_COMPRESS_NONE, &e));
    trn_field_dispose(&f);
}

/* ---- tests ---- */

static void expect_plane(const float *got, double quantum, const char *what)
{
    CHECK(got != NULL);
    if (!got) return;
    int bad = 0;
    for (uint32_t j = 0; j < N; j++)
        for (uint32_t i = 0; i < N; i++) {
            double want = plane(i, j);
            if (quantum > 0) want = floor(want / quantum + 0.5) * quantum;
            if (got[(size_t)j * N + i] != (float)want && bad++ < 3)
                fprintf(stderr, "%s: sample %u,%u is %.9g, expected %.9g\n", what, i, j,
                        got[(size_t)j * N + i], want);
        }
    CHECK(bad == 0);
}

static void test_each_format(void)
{
    static const struct {
        const char *params;
    } cases[] = {
        {"{\"path\":\"plane.tif\"}"},
        {"{\"path\":\"plane.png\"}"},
        {"{\"path\":\"plane.r16\"}"},
        {"{\"path\":\"plane_unity.raw\"}"},
        {"{\"path\":\"plane_mac.raw\",\"format\":\"r16be\"}"},
        {"{\"path\":\"plane.ter\"}"},
        {"{\"path\":\"plane.ter\",\"format\":\"ter\"}"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        trn_error e;
        char note[400] = "";
        float *h = run_node(cases[k].params, 16, 1, note, &e);
        if (!h) fprintf(stderr, "%s: %s\n", cases[k].params, e.message);
        expect_plane(h, 0, cases[k].params);
        free(h);
    }
    /* The little-endian reading of a big-endian file is another surface: the order matters. */
    trn_error e;
    float *h = run_node("{\"path\":\"plane_mac.raw\"}", 16, 1, NULL, &e);
    CHECK(h && h[0] != plane(0, 0));
    free(h);
    /* A 16-bit file read with another maxHeight scales by it. */
    h = run_node("{\"path\":\"plane.png\",\"max_height\":1024}", 16, 1, NULL, &e);
    CHECK(h && h[0] == plane(0, 0) / 2 && h[N * N - 1] == plane(N - 1, N - 1) / 2);
    free(h);
    /* 8-bit PNG: v widened v * 257, then maxHeight / 65536 a step. */
    h = run_node("{\"path\":\"byte.png\"}", 16, 1, NULL, &e);
    CHECK(h != NULL);
    if (h) {
        CHECK(h[0] == 0.0f);
        CHECK(h[(size_t)3 * N + 5] == (float)((5 + 2 * 3) * 257 * 2048.0 / 65536.0));
    }
    free(h);
    /* R32 of 17 x 9 with its width given; stretched over a 16 x 8 grid (same samples). */
    char note[400] = "";
    trn_recipe r;
    h = run_node("{\"path\":\"wide.r32\",\"raw_width\":17}", 16, 1, note, &e);
    (void)r;
    /* On a 16 x 16 grid the 9 rows are stretched to 17: row j sits at file row j / 2. */
    CHECK(h != NULL);
    if (h) {
        CHECK(h[0] == plane(0, 0));
        CHECK(h[(size_t)2 * N + 3] == plane(3, 1));
        CHECK(fabsf(h[(size_t)1 * N + 3] - (float)(100 + 12 + 1.0)) < 1e-4f);
    }
    CHECK_CONTAINS(note, "r32 17x9");
    /* Kept for the raw_height case below. */
    /* Its height alone gives the width too. */
    float *h2 = run_node("{\"path\":\"wide.r32\",\"raw_height\":9}", 16, 1, NULL, &e);
    CHECK(h && h2 && memcmp(h, h2, (size_t)N * N * sizeof *h) == 0);
    free(h2);
    free(h);
    /* Without its width the 153 samples are not a square: a clear error. */
    h = run_node("{\"path\":\"wide.r32\"}", 16, 1, NULL, &e);
    CHECK(h == NULL);
    CHECK_CONTAINS(e.message, "not a square");
    free(h);
}

/* Non-finite samples of an R32 are filled as NoData is; a file of nothing else is refused. */
static void test_r32_holes(void)
{
    float v[9] = {1, 2, 3, 4, NAN, 6, 7, 8, 9};
    char p[600];
    path_in(p, sizeof p, "hole.r32");
    CHECK(trn_test_write_file(p, v, sizeof v));
    trn_error e;
    char note[400] = "";
    float *h = run_node("{\"path\":\"hole.r32\"}", 2, 1, note, &e);
    CHECK(h && fabsf(h[4] - 5.0f) < 1e-4f);
    CHECK_CONTAINS(note, "1 NoData sample filled");
    free(h);
    for (int k = 0; k < 9; k++)
        v[k] = k == 3 ? INFINITY : NAN;
    CHECK(trn_test_write_file(p, v, sizeof v));
    h = run_node("{\"path\":\"hole.r32\"}", 2, 1, NULL, &e);
    CHECK(h == NULL);
    CHECK_CONTAINS(e.message, "node 'dem' (heightfield_input): hole.r32: all 9 samples are NoData");
    free(h);
}

static void test_placement_and_scale(void)
{
    trn_error e;
    char note[400] = "";
    /* Pixel window: columns 4..12, rows 0..8 (north half) onto 8 x 8 cells, one pixel a cell. */
    float *h = run_node("{\"path\":\"plane.tif\",\"pixel_window\":[4,0,12,8]}", 8, 1, note, &e);
    CHECK(h != NULL);
    if (h) {
        /* Output (i, j): column 4 + i, row 8 - j from the north = field row j + 8. */
        int bad = 0;
        for (uint32_t j = 0; j <= 8; j++)
            for (uint32_t i = 0; i <= 8; i++)
                if (h[j * 9 + i] != plane(4 + i, 8 + j)) bad++;
        CHECK(bad == 0);
    }
    /* plane.tif carries its own 1 m pixel scale (no CRS). */
    CHECK_CONTAINS(note, "window 8 x 8 m onto 160 x 160");
    free(h);
    /* Fractional windows interpolate: bilinear is exact on a plane. */
    h = run_node("{\"path\":\"plane.tif\",\"pixel_window\":[0.5,1.25,10.5,11.25]}", 4, 1, NULL, &e);
    CHECK(h != NULL);
    if (h) {
        /* Output (i, j) at column 0.5 + 2.5 i, field row (16 - 11.25) + 2.5 j. */
        int bad = 0;
        for (uint32_t j = 0; j <= 4; j++)
            for (uint32_t i = 0; i <= 4; i++) {
                const double want = 100 + 4 * (0.5 + 2.5 * i) + 2 * (4.75 + 2.5 * j);
                if (fabs(h[j * 5 + i] - want) > 1e-4) bad++;
            }
        CHECK(bad == 0);
    }
    free(h);
    /* Scale and offset: h * s + o. */
    h = run_node("{\"path\":\"plane.tif\",\"height_scale\":0.5,\"height_offset\":-20}", 16, 1, NULL,
                 &e);
    CHECK(h && h[0] == 30.0f && h[N * N - 1] == (float)(0.5 * plane(16, 16) - 20));
    free(h);
    /* A CRS window of a georeferenced DEM is the pixel window of the same pixels: centres of
     * columns 2..10 are x = 500025..500105, of rows 3..11 are y = 3999965..3999885. */
    float *a = run_node("{\"path\":\"utm.tif\",\"crs_window\":[500025,3999885,500105,3999965]}", 8,
                        1, note, &e);
    if (!a) fprintf(stderr, "crs_window: %s\n", e.message);
    float *b = run_node("{\"path\":\"utm.tif\",\"pixel_window\":[2,3,10,11]}", 8, 1, NULL, &e);
    CHECK(a && b && memcmp(a, b, 81 * sizeof *a) == 0);
    CHECK(a && a[0] == plane(2, 5) && a[80] == plane(10, 13));
    CHECK_CONTAINS(note, "window 80 x 80 m");
    free(a);
    free(b);
    /* A CRS window on the outermost pixel centres is the whole file: transform rounding at the
     * edges does not refuse it. */
    a = run_node("{\"path\":\"utm.tif\",\"crs_window\":[500005,3999835,500165,3999995]}", 16, 1,
                 NULL, &e);
    b = run_node("{\"path\":\"utm.tif\"}", 16, 1, NULL, &e);
    CHECK(a && b && memcmp(a, b, (size_t)N * N * sizeof *a) == 0);
    free(a);
    free(b);
    /* The DEM's NoData hole is filled as the DEM loader fills it: a plane is reproduced. */
    h = run_node("{\"path\":\"utm.tif\"}", 16, 1, note, &e);
    CHECK(h && fabsf(h[8 * N + 8] - plane(8, 8)) < 1e-3f);
    CHECK_CONTAINS(note, "1 NoData sample filled");
    free(h);
}

static void test_resampling(void)
{
    /* A bumpy file upsampled: each filter gives exactly trn_field_resample's result. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 8, 8, 8, 8, NULL));
    for (uint32_t k = 0; k < 81; k++)
        f.heights[k] = (float)(50 + 20 * sin(k * 0.7) + (k % 9) * 3);
    char p[600];
    path_in(p, sizeof p, "bumps.tif");
    trn_error e;
    CHECK_OK(trn_geotiff_write(p, &f, NULL, TRN_GEOTIFF_COMPRESS_NONE, &e));
    static const char *const filters[] = {"bilinear", "bicubic", "average"};
    static const trn_resample_filter codes[] = {TRN_RESAMPLE_BILINEAR, TRN_RESAMPLE_BICUBIC,
                                                TRN_RESAMPLE_AVERAGE};
    float *got[3];
    for (int k = 0; k < 3; k++) {
        char params[128];
        snprintf(params, sizeof params, "{\"path\":\"bumps.tif\",\"resample\":\"%s\"}", filters[k]);
        got[k] = run_node(params, 20, 1, NULL, &e);
        trn_field want;
        CHECK_OK(trn_field_resample(&f, NULL, 20, 20, codes[k], &want, NULL, NULL, &e));
        CHECK(got[k] && memcmp(got[k], want.heights, 441 * sizeof(float)) == 0);
        trn_field_dispose(&want);
    }
    CHECK(got[0] && got[1] && memcmp(got[0], got[1], 441 * sizeof(float)) != 0);
    for (int k = 0; k < 3; k++)
        free(got[k]);
    trn_field_dispose(&f);
}

static uint64_t key_of(const char *params, const char *node)
{
    trn_recipe r;
    trn_error e;
    uint64_t key = 0;
    if (!recipe_with(params, 16, &r, &e)) return 0;
    trn_graph g;
    if (trn_graph_from_recipe(&r, &g, &e) == TRN_OK) {
        uint64_t keys[2] = {0, 0};
        if (trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, &e) == TRN_OK)
            key = keys[strcmp(node, "dem") == 0 ? 0 : 1];
        else
            fprintf(stderr, "keys: %s\n", e.message);
        trn_graph_dispose(&g);
    }
    trn_recipe_dispose(&r);
    return key;
}

static void test_key_follows_content(void)
{
    char p[600], q[600];
    path_in(p, sizeof p, "swap.tif");
    path_in(q, sizeof q, "plane.tif");
    size_t n = 0;
    uint8_t *bytes = trn_test_read_file(q, &n);
    CHECK(bytes && trn_test_write_file(p, bytes, n));
    const char *params = "{\"path\":\"swap.tif\"}";
    const uint64_t k1 = key_of(params, "dem"), o1 = key_of(params, "out");
    /* The same bytes written again: the same key (a touched file is not a new one). */
    CHECK(trn_test_write_file(p, bytes, n));
    CHECK(key_of(params, "dem") == k1);
    /* Other bytes under the same name: a new key, and everything downstream follows. */
    trn_field f;
    make_field(&f, N);
    f.heights[5] += 1.0f;
    trn_error e;
    CHECK_OK(trn_geotiff_write(p, &f, NULL, TRN_GEOTIFF_COMPRESS_DEFLATE, &e));
    trn_field_dispose(&f);
    const uint64_t k2 = key_of(params, "dem");
    CHECK(k1 != 0 && k2 != 0 && k2 != k1);
    CHECK(key_of(params, "out") != o1);
    /* The recipe's own cache key (a cooked payload's staleness) follows the bytes too. */
    trn_recipe r;
    trn_error e2;
    uint64_t rk1 = 0, rk2 = 0;
    CHECK(recipe_with(params, 16, &r, &e2));
    CHECK_OK(trn_recipe_cache_key(&r, &rk1, &e2));
    CHECK(trn_test_write_file(p, bytes, n));
    CHECK_OK(trn_recipe_cache_key(&r, &rk2, &e2));
    CHECK(rk1 != rk2);
    CHECK(key_of(params, "dem") == k1);
    trn_recipe_dispose(&r);
    /* Another name with the first bytes: the key names the parameter too, so it differs. */
    CHECK(key_of("{\"path\":\"plane.tif\"}", "dem") != k2);
    free(bytes);
}

static void test_errors_at_positions(void)
{
    char text[4096];
    trn_graph_diagnostics d;
    char sub[600];
    path_in(sub, sizeof sub, "sub");
    CHECK(mkdir(sub, 0755) == 0 || access(sub, F_OK) == 0);
    struct {
        const char *params, *check, *pin, *message, *marker;
    } cases[] = {
        {"{\"path\":\"missing.tif\"}", "input-file", "path", "cannot open 'missing.tif'",
         "\"missing.tif\""},
        {"{\"path\":\"/etc/hostname\"}", "input-path", "path", "is an absolute path",
         "\"/etc/hostname\""},
        {"{\"path\":\"sub/../../x.tif\"}", "input-path", "path", "has a '..' part",
         "\"sub/../../x.tif\""},
        {"{\"format\":\"png\"}", "input-path", "path", "path: required", "{\"id\":\"dem\""},
        {"{\"path\":\"sub\"}", "input-path", "path", "is a folder", "\"sub\"}"},
        {"{\"path\":\"t.json.txt\"}", "input-file", "path", "unrecognised heightfield format",
         "\"t.json.txt\""},
        {"{\"path\":\"cut.png\"}", "input-file", "path", "offset", "\"cut.png\""},
        {"{\"path\":\"plane.png\",\"crs_window\":[0,0,1,1]}", "bad-param", "crs_window",
         "not georeferenced", "[0,0,1,1]"},
        {"{\"path\":\"plane.tif\",\"pixel_window\":[0,0,20,8]}", "bad-param", "pixel_window",
         "outside the file's 17 x 17 pixels", "[0,0,20,8]"},
        {"{\"path\":\"plane.tif\",\"pixel_window\":[0,0,8,8],\"crs_window\":[0,0,1,1]}",
         "bad-param", "crs_window", "not both", "[0,0,1,1]"},
        {"{\"path\":\"utm.tif\",\"crs_window\":[400000,3999885,500105,3999965]}", "bad-param",
         "crs_window", "reach outside", "[400000"},
        {"{\"path\":\"plane.r16\",\"raw_width\":16}", "input-file", "path", "not a whole number",
         "\"plane.r16\""},
        {"{\"path\":\"plane.r16\",\"raw_width\":17,\"raw_height\":18}", "input-file", "path",
         "offset 578: expected 17 x 18 samples (612 bytes), the file ends at 578", "\"plane.r16\""},
        {"{\"path\":\"plane.r16\",\"raw_width\":17,\"raw_height\":16}", "input-file", "path",
         "offset 544: expected 17 x 16 samples (544 bytes), the file holds 578", "\"plane.r16\""},
        {"{\"path\":\"cut.ter\"}", "input-file", "path", "offset", "\"cut.ter\""},
        {"{\"path\":\"plane.tif\",\"pixel_window\":[8,0,4,8]}", "bad-param", "pixel_window",
         "expected col0 < col1 and row0 < row1", "[8,0,4,8]"},
        {"{\"path\":\"utm.tif\",\"crs_window\":[500100,3999885,500025,3999965]}", "bad-param",
         "crs_window", "expected min_x < max_x", "[500100"},
    };
    /* A file that is no heightfield, and a PNG cut short. */
    char p[600];
    path_in(p, sizeof p, "t.json.txt");
    CHECK(trn_test_write_file(p, "{\"hello\": 1}\n", 13));
    char q[600];
    path_in(q, sizeof q, "plane.png");
    size_t n = 0;
    uint8_t *png = trn_test_read_file(q, &n);
    path_in(p, sizeof p, "cut.png");
    CHECK(png && trn_test_write_file(p, png, 20));
    free(png);
    path_in(q, sizeof q, "plane.ter");
    uint8_t *terb = trn_test_read_file(q, &n);
    path_in(p, sizeof p, "cut.ter");
    CHECK(terb && trn_test_write_file(p, terb, 100));
    free(terb);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK(diags_of(cases[k].params, &d, text, sizeof text));
        const trn_graph_diagnostic *x = find_diag(&d, cases[k].check);
        CHECK(x != NULL);
        if (!x) {
            fprintf(stderr, "%s: no %s diagnostic (%zu others%s%s)\n", cases[k].params,
                    cases[k].check, d.count, d.count ? ": " : "",
                    d.count ? d.items[0].message : "");
        } else {
            CHECK(strcmp(x->node_id, "dem") == 0);
            CHECK(strcmp(x->pin, cases[k].pin) == 0);
            CHECK(x->severity == TRN_GRAPH_ERROR);
            CHECK_CONTAINS(x->message, cases[k].message);
            const char *at = strstr(text, cases[k].marker);
            CHECK(at && x->offset == at - text);
            if (at && x->offset != at - text)
                fprintf(stderr, "%s: at offset %lld, expected %ld (%s)\n", cases[k].params,
                        (long long)x->offset, (long)(at - text), x->message);
        }
        trn_graph_diagnostics_dispose(&d);
    }
    const trn_graph_diagnostic *x;
    /* A path that is no string is one error (the parameter's), not two. */
    CHECK(diags_of("{\"path\":7}", &d, text, sizeof text));
    CHECK(d.count == 1 && find_diag(&d, "bad-param") != NULL);
    trn_graph_diagnostics_dispose(&d);
    /* An empty file names no format. */
    path_in(p, sizeof p, "empty.tif");
    CHECK(trn_test_write_file(p, "", 0));
    CHECK(diags_of("{\"path\":\"empty.tif\"}", &d, text, sizeof text));
    x = find_diag(&d, "input-file");
    CHECK(x && strstr(x->message, "the file is empty"));
    trn_graph_diagnostics_dispose(&d);
    /* A symbolic link out of the recipe's folder is refused; one inside it is followed. */
    path_in(p, sizeof p, "out.tif");
    CHECK(symlink("/etc/hostname", p) == 0);
    CHECK(diags_of("{\"path\":\"out.tif\"}", &d, text, sizeof text));
    x = find_diag(&d, "input-path");
    CHECK(x && strstr(x->message, "leads outside the recipe's folder"));
    trn_graph_diagnostics_dispose(&d);
    path_in(p, sizeof p, "sub/in.tif");
    CHECK(symlink("../plane.tif", p) == 0);
    CHECK(diags_of("{\"path\":\"sub/in.tif\"}", &d, text, sizeof text));
    CHECK(d.count == 0);
    trn_graph_diagnostics_dispose(&d);
    /* Generation refuses the missing file with the node id, the path and the folder. */
    trn_error e;
    float *h = run_node("{\"path\":\"missing.tif\"}", 16, 1, NULL, &e);
    CHECK(h == NULL && e.code == TRN_ERR_VALIDATION);
    CHECK(strcmp(e.node_id, "dem") == 0);
    CHECK_CONTAINS(e.message,
                   "graph.nodes[0].params.path: node 'dem' (heightfield_input): path: cannot open "
                   "'missing.tif'");
    free(h);
}

static void test_folder_rules(void)
{
    /* A recipe read from a file resolves against that file's folder, whatever the current
     * directory; one parsed from memory against the current directory. */
    char p[600];
    path_in(p, sizeof p, "level.json");
    static const char doc[] =
        "{\"size\":[160,160],\"resolution\":[16,16],\"seed\":1,\"default_landform\":\"l\","
        "\"landforms\":{\"l\":{}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0.4,"
        "0.6,0.3,1]}},\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":[{\"id\":"
        "\"dem\",\"type\":\"heightfield_input\",\"params\":{\"path\":\"plane.tif\"}},{\"id\":"
        "\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"dem\"}}}]}}";
    CHECK(trn_test_write_file(p, doc, sizeof doc - 1));
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_read(p, &r, NULL, &e));
    CHECK(r.base_dir && strcmp(r.base_dir, dir) == 0);
    trn_graph g;
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    CHECK_OK(trn_graph_check(&g, &r, &d, &e));
    CHECK(d.count == 0);
    trn_graph_diagnostics_dispose(&d);
    /* From memory: not found from elsewhere, found from the folder. */
    free(r.base_dir);
    r.base_dir = NULL;
    char cwd[600];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir("/") == 0);
    CHECK_OK(trn_graph_check(&g, &r, &d, &e));
    CHECK(find_diag(&d, "input-file") != NULL);
    trn_graph_diagnostics_dispose(&d);
    CHECK(chdir(dir) == 0);
    CHECK_OK(trn_graph_check(&g, &r, &d, &e));
    CHECK(d.count == 0);
    trn_graph_diagnostics_dispose(&d);
    /* A bare file name's folder is ".", a file at the root's "/". */
    trn_recipe bare;
    CHECK_OK(trn_recipe_read("level.json", &bare, NULL, &e));
    CHECK(bare.base_dir && strcmp(bare.base_dir, ".") == 0);
    CHECK_OK(trn_recipe_set_base_dir_of(&bare, "/level.json", &e));
    CHECK(bare.base_dir && strcmp(bare.base_dir, "/") == 0);
    CHECK_OK(trn_recipe_set_base_dir(&bare, NULL, &e));
    CHECK(bare.base_dir == NULL);
    trn_recipe_dispose(&bare);
    CHECK(chdir(cwd) == 0);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

static void test_determinism(void)
{
    /* The same bytes on any thread count, pinned: read, windowed, bicubic, scaled. */
    const char *params = "{\"path\":\"utm.tif\",\"pixel_window\":[1,1,15,14],\"resample\":"
                         "\"bicubic\",\"height_scale\":1.5,\"height_offset\":3}";
    trn_error e;
    float *a = run_node(params, 40, 1, NULL, &e), *b = run_node(params, 40, 3, NULL, &e);
    CHECK(a && b && memcmp(a, b, 41 * 41 * sizeof *a) == 0);
    const uint64_t h = a ? XXH64(a, 41 * 41 * sizeof *a, 0) : 0;
    CHECK(h == UINT64_C(0x7b7c70d78c2233de));
    if (h != UINT64_C(0x7b7c70d78c2233de))
        fprintf(stderr, "determinism hash %016llx\n", (unsigned long long)h);
    free(a);
    free(b);
}

static bool test_real_dem(void)
{
    char real[600];
    if (!trn_test_real_path("dem_srtm30_central_japan.tif", real, sizeof real)) return false;
    /* The shared file is read where it lies: the recipe's folder is its folder. */
    const char *slash = strrchr(real, '/');
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - real), real);
    trn_error e;
    char note[400] = "";
    /* Mt Fuji (35.36 N, 138.73 E, 3776 m; 3664 m in 30-arc-second cells) in a CRS window of
     * degrees, on a 64 x 64 grid. */
    float *h = run_node("{\"path\":\"dem_srtm30_central_japan.tif\",\"crs_window\":[138.5,35.2,"
                        "139.0,35.6]}",
                        64, 1, note, &e);
    if (!h) fprintf(stderr, "real DEM: %s\n", e.message);
    CHECK(h != NULL);
    if (h) {
        float hi = -1e30f;
        size_t at = 0;
        for (size_t k = 0; k < 65 * 65; k++)
            if (h[k] > hi) {
                hi = h[k];
                at = k;
            }
        /* The summit is the highest ground, near (138.73, 35.36): x 0.46, z 0.40 of the way. */
        CHECK(hi > 3000 && hi <= 3664);
        const double fx = (double)(at % 65) / 64, fz = (double)(at / 65) / 64;
        CHECK(fabs(fx - 0.46) < 0.08 && fabs(fz - 0.40) < 0.08);
        if (!(fabs(fx - 0.46) < 0.08 && fabs(fz - 0.40) < 0.08))
            fprintf(stderr, "summit at %.3f, %.3f\n", fx, fz);
    }
    CHECK_CONTAINS(note, "geotiff 300x300");
    free(h);
    /* The whole file on a grid of its own size is the DEM loader's field exactly. */
    h = run_node("{\"path\":\"dem_srtm30_central_japan.tif\"}", 299, 1, note, &e);
    trn_geotiff dem;
    trn_field f;
    memset(&f, 0, sizeof f);
    CHECK_OK(trn_geotiff_read(real, NULL, &dem, NULL, NULL, &e));
    CHECK_OK(trn_geotiff_to_field(&dem, &f, &e));
    trn_geotiff_dispose(&dem);
    CHECK(h && f.heights && memcmp(h, f.heights, 300 * 300 * sizeof *h) == 0);
    trn_field_dispose(&f);
    free(h);
    /* A real Torque .ter (version 7, 256 a side) reads as the .ter reader gives it. */
    char ter[600];
    if (trn_test_real_path("t3d_v7_desert_world_0_256.ter", ter, sizeof ter)) {
        h = run_node("{\"path\":\"t3d_v7_desert_world_0_256.ter\",\"max_height\":600}", 255, 1,
                     note, &e);
        trn_ter t;
        CHECK_OK(trn_ter_read(ter, NULL, &t, NULL, NULL, &e));
        CHECK_OK(trn_ter_to_field(&t, 600, 1, &f, NULL, &e));
        trn_ter_dispose(&t);
        CHECK(h && f.heights && memcmp(h, f.heights, 256 * 256 * sizeof *h) == 0);
        CHECK_CONTAINS(note, "ter 256x256");
        trn_field_dispose(&f);
        free(h);
    }
    return true;
}

int main(void)
{
    if (!trn_test_tmpdir(dir, sizeof dir)) return 1;
    write_files();
    RUN(test_each_format);
    RUN(test_r32_holes);
    RUN(test_placement_and_scale);
    RUN(test_resampling);
    RUN(test_key_follows_content);
    RUN(test_errors_at_positions);
    RUN(test_folder_rules);
    RUN(test_determinism);
    const int before = trn_test_failures;
    if (!test_real_dem())
        fprintf(stderr, "skip test_real_dem: ../shared/testdata/real is absent\n");
    else
        fprintf(stderr, "%s test_real_dem\n", trn_test_failures == before ? "ok  " : "FAIL");
    return trn_test_finish();
}
