/* Command-line tests for Unity assets: info, convert, unity extract and unity export (tiles, byte
 * order, metadata). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "terrane/image.h"
#include "test.h"
#include "unity_writer.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* A 65-sample synthetic TerrainData with holes, 3 layers, one alpha map and trees. */
static void make_asset(const char *path)
{
    int16_t *h = malloc(sizeof *h * 65 * 65);
    for (int j = 0; j < 65; j++)
        for (int i = 0; i < 65; i++)
            h[j * 65 + i] = (int16_t)(i * 200 + j * 100);
    uint8_t holes[64 * 64];
    memset(holes, 1, sizeof holes);
    holes[10 * 64 + 20] = 0;
    uwr_terrain_spec s = {65, {2.0f, 400.0f, 2.0f}, h, holes, 3, 1, 3, false};
    size_t size;
    uint8_t *file = uwr_terrain_file(22, false, &s, &size, NULL);
    CHECK(trn_test_write_file(path, file, size));
    free(file);
    free(h);
}

static void test_info(void)
{
    char asset[600], *out, *err;
    make_asset(tmp_path(asset, sizeof asset, "synth.asset"));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, asset), 0);
    CHECK_CONTAINS(out, "Unity SerializedFile version 22");
    CHECK_CONTAINS(out, "65 x 65 samples, scale 2 x 400 x 2 m, size 128 x 400 x 128 m");
    CHECK_CONTAINS(out, "holes:     1 of 4096 cells");
    CHECK_CONTAINS(out, "layer 2: 'Layer2' (TerrainLayer");
    CHECK_CONTAINS(out, "'SplatAlpha 0' 16 x 16 RGBA32");
    CHECK_CONTAINS(out, "trees:     3 instance(s), 2 prototype(s)");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity info '%s' --format json", &out, &err, asset), 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK(j != NULL);
    if (j) {
        json_t *t = json_object_get(j, "terrain");
        CHECK_EQ_INT(json_integer_value(json_object_get(j, "serialized_version")), 22);
        CHECK_EQ_INT(json_integer_value(json_object_get(t, "resolution")), 65);
        CHECK_EQ_INT(
            json_integer_value(json_object_get(json_object_get(t, "heights"), "stored_max")),
            64 * 300);
        CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(t, "holes"), "holes")), 1);
        CHECK_EQ_INT(json_array_size(json_object_get(t, "layers")), 3);
        CHECK_EQ_INT(json_integer_value(json_object_get(t, "trees")), 3);
        json_decref(j);
    }
    free(out), free(err);

    char path[1024];
    if (trn_test_real_path("unity_2021.3.1f1_Terrain.asset", path, sizeof path)) {
        CHECK_EQ_INT(trn_test_run_clif("info '%s' --format json", &out, &err, path), 0);
        j = json_loads(out ? out : "", 0, NULL);
        json_t *t = json_object_get(j, "terrain");
        CHECK_EQ_INT(json_integer_value(json_object_get(t, "resolution")), 513);
        CHECK(json_real_value(json_array_get(json_object_get(t, "size"), 0)) == 1000.0);
        CHECK_EQ_INT(
            json_integer_value(json_object_get(json_object_get(t, "heights"), "stored_max")), 675);
        CHECK(strcmp(json_string_value(json_object_get(j, "unity_version")), "2021.3.1f1") == 0);
        json_decref(j);
        free(out), free(err);
    }
    /* Usage. */
    CHECK_EQ_INT(trn_test_run_cli("unity", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a command");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("unity frob", &out, &err), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/x' --fit squash", &out, &err, asset, tmp),
                 2);
    CHECK_CONTAINS(err, "--fit takes resample or pad");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("unity export '%s' '%s/x' --resolution 100", &out, &err, asset, tmp), 2);
    CHECK_CONTAINS(err, "2^n + 1");
    free(out), free(err);
    /* A file without type trees: the type-tree flag byte of a v22 file follows the 48-byte
     * header and the version string "2021.3.1f1" and the platform. */
    size_t n;
    uint8_t *bytes = trn_test_read_file(asset, &n);
    if (bytes) {
        bytes[48 + 11 + 4] = 0;
        char bad[600];
        trn_test_write_file(tmp_path(bad, sizeof bad, "notree.asset"), bytes, n);
        CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, bad), 1);
        CHECK_CONTAINS(err, "offset 63");
        CHECK_CONTAINS(err, "no type trees");
        free(out), free(err);
        free(bytes);
    }
}

static void test_convert_extract(void)
{
    char asset[600], png[600], ter[600], prefix[600], holes[600], trees[600], *out, *err;
    tmp_path(asset, sizeof asset, "synth.asset");
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, asset,
                                   tmp_path(png, sizeof png, "h.png")),
                 0);
    /* One note with everything a PNG cannot hold of the TerrainData. */
    CHECK_CONTAINS(err, "note: a PNG heightmap holds less than");
    CHECK_CONTAINS(err, "dropped blended splat weights of 3 layers (the strongest is kept); 3 "
                        "trees; material layers (3 materials); holes (");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err, asset, png), 0);
    CHECK_CONTAINS(out, "\"dropped\": [");
    CHECK_CONTAINS(out, "\"3 trees\"");
    free(out), free(err);
    trn_image img;
    CHECK_OK(trn_png_read(png, NULL, &img, NULL));
    CHECK_EQ_INT(img.width, 65);
    trn_image_dispose(&img);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-height 512", &out, &err, asset,
                                   tmp_path(ter, sizeof ter, "h.ter")),
                 0);
    free(out), free(err);
    /* The .ter keeps the layers as materials (and the hole). */
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-height 512 --format json", &out, &err, ter), 0);
    CHECK_CONTAINS(out, "\"Layer1\"");
    CHECK_CONTAINS(out, "\"holes\": 1");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity extract '%s' --splats '%s' --holes '%s' --trees '%s' "
                                   "--format json",
                                   &out, &err, asset, tmp_path(prefix, sizeof prefix, "sp"),
                                   tmp_path(holes, sizeof holes, "holes.png"),
                                   tmp_path(trees, sizeof trees, "trees.json")),
                 0);
    CHECK_CONTAINS(out, "\"tree_count\": 3");
    CHECK_CONTAINS(out, "sp0.png\"");
    free(out), free(err);
    char sp0[700];
    snprintf(sp0, sizeof sp0, "%s0.png", prefix);
    CHECK_OK(trn_png_read(sp0, NULL, &img, NULL));
    CHECK_EQ_INT(img.channels, 4);
    /* Stored texel (x 3, z 2) favours channel (3 + 2) % 4 = 1; PNG row 0 is z = 15. */
    if (img.data) CHECK_EQ_INT(((uint8_t *)img.data)[((15 - 2) * 16 + 3) * 4 + 1], 200);
    trn_image_dispose(&img);
    CHECK_OK(trn_png_read(holes, NULL, &img, NULL));
    CHECK_EQ_INT(img.width, 64);
    if (img.data) {
        CHECK_EQ_INT(((uint8_t *)img.data)[(63 - 10) * 64 + 20], 0);
        CHECK_EQ_INT(((uint8_t *)img.data)[(63 - 10) * 64 + 21], 255);
    }
    trn_image_dispose(&img);
    json_t *j = json_load_file(trees, 0, NULL);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "trees")), 3);
    /* Tree 1 at x 0.3 of 128 m. */
    CHECK(fabs(json_real_value(json_array_get(
                   json_object_get(json_array_get(json_object_get(j, "trees"), 1), "world"), 0)) -
               0.3 * 128) < 1e-4);
    json_decref(j);
}

static void test_export(void)
{
    char asset[600], dir[600], path[700], *out, *err;
    tmp_path(asset, sizeof asset, "synth.asset");
    tmp_path(dir, sizeof dir, "ex");
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --tiles 2x2 --name Mt --format json",
                                   &out, &err, asset, dir),
                 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "resolution")), 33);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "tree_count")), 3);
    json_decref(j);
    free(out), free(err);
    size_t a, b;
    uint8_t *t00 = trn_test_read_file(tmp_path(path, sizeof path, "ex/Mt_0_0.raw"), &a);
    uint8_t *t10 = trn_test_read_file(tmp_path(path, sizeof path, "ex/Mt_1_0.raw"), &b);
    CHECK_EQ_INT(a, 33 * 33 * 2);
    if (t00 && t10 && a == b) {
        size_t diff = 0;
        for (int r = 0; r < 33; r++)
            diff += memcmp(t00 + (r * 33 + 32) * 2, t10 + r * 33 * 2, 2);
        CHECK_EQ_INT(diff, 0);
        /* Unity input: RAW spans its own 400 m, so stored 32 * 200 = 6400 of 32766 becomes
         * round(6400 / 32766 * 65535) = 12801, little-endian, at tile (0, 0) sample (32, 0). */
        CHECK_EQ_INT(t00[64] | (t00[65] << 8), 12801);
    }
    free(t00), free(t10);
    j = json_load_file(tmp_path(path, sizeof path, "ex/Mt_1_1.json"), 0, NULL);
    json_t *hm = json_object_get(j, "heightmap");
    CHECK_EQ_INT(json_integer_value(json_object_get(hm, "resolution")), 33);
    CHECK(strcmp(json_string_value(json_object_get(hm, "byte_order")), "Windows") == 0);
    CHECK(json_real_value(json_array_get(json_object_get(j, "terrain_size"), 0)) == 64.0);
    CHECK(json_real_value(json_array_get(json_object_get(j, "terrain_size"), 1)) == 400.0);
    CHECK(json_real_value(json_array_get(json_object_get(j, "position"), 0)) == 64.0);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(j, "tile"), "x")), 1);
    CHECK(strcmp(json_string_value(json_object_get(j, "holes")), "Mt_1_1_holes.png") == 0);
    json_decref(j);
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "ex/Mt_0_1_splat0.png")));
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "ex/Mt_0_1_trees.json")));

    /* Big-endian, flipped, from a PNG that needs resampling: resampled by default, as with
     * --fit resample, and said. */
    char png[600];
    tmp_path(png, sizeof png, "h.png");
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/bd' --byte-order big --flip "
                                   "--resolution 33",
                                   &out, &err, png, tmp),
                 0);
    CHECK_CONTAINS(err, "resampled 65 x 65 -> 33 x 33 samples (bilinear, --fit resample, the "
                        "default): the terrain keeps its size in metres");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/be' --byte-order big --flip "
                                   "--resolution 33 --fit resample -q",
                                   &out, &err, png, tmp),
                 0);
    free(out), free(err);
    uint8_t *raw_default = trn_test_read_file(tmp_path(path, sizeof path, "bd/terrain.raw"), &b);
    uint8_t *raw = trn_test_read_file(tmp_path(path, sizeof path, "be/terrain.raw"), &a);
    CHECK(raw_default && raw && a == b && memcmp(raw, raw_default, a) == 0);
    free(raw_default);
    CHECK_EQ_INT(a, 33 * 33 * 2);
    j = json_load_file(tmp_path(path, sizeof path, "be/terrain.json"), 0, NULL);
    CHECK(strcmp(json_string_value(json_object_get(json_object_get(j, "heightmap"), "byte_order")),
                 "Mac") == 0);
    CHECK(json_is_true(json_object_get(json_object_get(j, "heightmap"), "flip_vertically")));
    json_decref(j);
    /* Flipped: the first RAW row is the far edge, which is higher than the near one. */
    if (raw && a == 33 * 33 * 2)
        CHECK(((raw[0] << 8) | raw[1]) > ((raw[32 * 33 * 2] << 8) | raw[32 * 33 * 2 + 1]));
    free(raw);

    /* A non-square input keeps its whole area by default: 65 x 40 samples become one 65 x 65
     * terrain of the input's own 64 x 39 m (no padding, no crop). */
    char wide[600];
    tmp_path(wide, sizeof wide, "wide.png");
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crop 0,0,65,40 -q", &out, &err, png, wide),
                 0);
    free(out), free(err);
    const double wide_x = 64.0, wide_z = 39.0; /* a PNG's samples are 1 m apart */
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/wide' --format json", &out, &err, wide,
                                   tmp),
                 0);
    CHECK_CONTAINS(err, "resampled 65 x 40 -> 65 x 65 samples");
    j = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "resolution")), 65);
    json_t *ts = json_object_get(j, "tile_size");
    CHECK(json_real_value(json_array_get(ts, 0)) == wide_x);
    CHECK(json_real_value(json_array_get(ts, 2)) == wide_z);
    json_decref(j);
    free(out), free(err);
    /* An input that already fits is copied sample for sample: the default and --fit pad (which
     * has nothing to add) write the same RAW. */
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/own' -q", &out, &err, png, tmp), 0);
    CHECK(err && !strstr(err, "resampled"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/own_pad' --fit pad -q", &out, &err, png,
                                   tmp),
                 0);
    free(out), free(err);
    uint8_t *own = trn_test_read_file(tmp_path(path, sizeof path, "own/terrain.raw"), &a);
    uint8_t *own_pad = trn_test_read_file(tmp_path(path, sizeof path, "own_pad/terrain.raw"), &b);
    CHECK(own && own_pad && a == 65 * 65 * 2 && a == b && memcmp(own, own_pad, a) == 0);
    free(own), free(own_pad);

    /* --fit pad grows +z with ground falling smoothly from the input's edge to RAW 0 (the
     * lowest height), never the edge samples repeated: a 65 x 40 R32 with a wavy far edge. */
    char r32[600];
    tmp_path(r32, sizeof r32, "wavy.r32");
    float wavy[65 * 40];
    for (int row = 0; row < 40; row++)
        for (int col = 0; col < 65; col++)
            wavy[row * 65 + col] = (float)(100.0 + 2.0 * col + 3.0 * row + 40.0 * sin(col / 3.0));
    CHECK(trn_test_write_file(r32, wavy, sizeof wavy));
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s/wavy' --size 65x40 --fit pad -q", &out,
                                   &err, r32, tmp),
                 0);
    free(out), free(err);
    uint8_t *pad = trn_test_read_file(tmp_path(path, sizeof path, "wavy/terrain.raw"), &a);
    CHECK(pad && a == 65 * 65 * 2);
    if (pad && a == 65 * 65 * 2) {
        /* RAW row r is z = r (no --flip): rows 0..39 the input, 40..64 added. */
#define RAW_AT(r, i) (pad[((r) * 65 + (i)) * 2] | (pad[((r) * 65 + (i)) * 2 + 1] << 8))
        int zero_border = 0, repeats = 0, jumps = 0;
        for (int col = 0; col < 65; col++) {
            zero_border += RAW_AT(64, col) == 0;
            repeats += RAW_AT(52, col) == RAW_AT(39, col);
            jumps += abs(RAW_AT(40, col) - RAW_AT(39, col)) > 6554; /* a tenth of the range */
        }
#undef RAW_AT
        CHECK_EQ_INT(zero_border, 65);
        CHECK_EQ_INT(repeats, 0);
        CHECK_EQ_INT(jumps, 0);
    }
    free(pad);
}

/* Unity's RAW follows convert's one 16-bit rule: a float DEM of 0.016 .. 0.041 m (129 x 129
 * pixels, all different) spans RAW 0 .. 65535, each pixel on a level of its own (the old rule
 * put RAW 0 at 0 m and used 0.041 m of the range from 25,575 up); --height-range and --scale
 * set it as they do for convert. */
static void test_export_levels(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 128, 128, 128.0, 128.0, NULL));
    const size_t n = 129u * 129u;
    for (size_t k = 0; k < n; k++)
        f.heights[k] = (float)(0.016 + 0.025 * (double)k / (double)(n - 1));
    trn_image img;
    CHECK_OK(trn_image_init(&img, 129, 129, 1, 32, NULL));
    memcpy(img.data, f.heights, n * sizeof(float));
    char r32[600], dir[600], path[700], *out, *err;
    CHECK_OK(trn_raw_write(tmp_path(r32, sizeof r32, "thin.r32"), &img, TRN_RAW_F32_LE, NULL));
    trn_image_dispose(&img);
    trn_field_dispose(&f);
    tmp_path(dir, sizeof dir, "thin");
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --format json", &out, &err, r32, dir),
                 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    json_t *hs = json_object_get(j, "heights");
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "levels")), 16641);
    CHECK(fabs(json_real_value(json_object_get(j, "height_base")) - 0.016) < 1e-7);
    json_decref(j);
    free(out), free(err);
    size_t size;
    uint8_t *raw = trn_test_read_file(tmp_path(path, sizeof path, "thin/terrain.raw"), &size);
    CHECK_EQ_INT(size, n * 2);
    if (raw && size == n * 2) {
        static uint8_t seen[65536];
        memset(seen, 0, sizeof seen);
        unsigned lo = 65535, hi = 0, levels = 0;
        for (size_t k = 0; k < n; k++) {
            const unsigned v = raw[2 * k] | (unsigned)raw[2 * k + 1] << 8;
            levels += !seen[v];
            seen[v] = 1;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        CHECK_EQ_INT(levels, 16641);
        CHECK_EQ_INT(lo, 0);
        CHECK_EQ_INT(hi, 65535);
    }
    free(raw);
    /* --height-range 0,0.05: RAW 0 at 0 m; the data then reaches 0.041 / 0.05 of the range. */
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --height-range 0,0.05 --format json",
                                   &out, &err, r32, dir),
                 0);
    j = json_loads(out ? out : "", 0, NULL);
    hs = json_object_get(j, "heights");
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_min")), 20971);
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_max")), 53739);
    CHECK(strcmp(json_string_value(json_object_get(hs, "rule")), "--height-range") == 0);
    json_decref(j);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --scale 0 1 --height-size 5", &out, &err,
                                   r32, dir),
                 2);
    CHECK_CONTAINS(err, "both set the RAW range");
    free(out), free(err);
}

/* Reading Unity inputs: --max-samples (info still describes the file), --size as the output
 * size, and a cut-short header reported as Unity's, not as another format's. */
static void test_reading_inputs(void)
{
    char asset[600], out_png[600], cut[600], *out, *err;
    tmp_path(asset, sizeof asset, "synth.asset");
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-samples 4224", &out, &err, asset), 0);
    CHECK_CONTAINS(out, "Unity SerializedFile version 22");
    CHECK_CONTAINS(out, "terrain:   not read: TerrainData 'Synthetic Terrain': m_Resolution: "
                        "heightmap 65 x 65 = 4225 samples, more than the limit of 4224");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-samples 4224 --format json", &out, &err, asset),
                 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK(j && json_is_null(json_object_get(j, "terrain")));
    CHECK(j && json_is_string(json_object_get(j, "terrain_not_read")));
    json_decref(j);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-samples 4225", &out, &err, asset), 0);
    CHECK_CONTAINS(out, "65 x 65 samples");
    free(out), free(err);
    tmp_path(out_png, sizeof out_png, "limited.png");
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' --max-samples 4224", &out, &err, asset, out_png), 1);
    CHECK_CONTAINS(err, "synth.asset: offset ");
    CHECK_CONTAINS(err, "4225 samples, more than the limit of 4224");
    free(out), free(err);
    /* --size: the output's size, resampled (not the asset read as a headerless raster). */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --size 33x33", &out, &err, asset, out_png),
                 0);
    CHECK_CONTAINS(err, "resampled 65 x 65 -> 33 x 33 samples");
    free(out), free(err);
    trn_image img;
    CHECK_OK(trn_png_read(out_png, NULL, &img, NULL));
    CHECK_EQ_INT(img.width, 33);
    trn_image_dispose(&img);
    /* A header cut short, whatever the length: Unity's own messages. */
    size_t size;
    uint8_t *data = trn_test_read_file(asset, &size);
    const size_t cuts[] = {10, 30, 48};
    for (size_t k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "cut%zu.asset", cuts[k]);
        CHECK(trn_test_write_file(tmp_path(cut, sizeof cut, name), data, cuts[k]));
        CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, cut), 1);
        CHECK_CONTAINS(err, "header:");
        CHECK(err && !strstr(err, "octree"));
        free(out), free(err);
    }
    /* Without the extension, the version field is the evidence. */
    CHECK(trn_test_write_file(tmp_path(cut, sizeof cut, "cut30"), data, 30));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, cut), 1);
    CHECK_CONTAINS(err, "cut30: offset 30: header: version 22 needs a 48-byte header");
    free(out), free(err);
    free(data);
}

int main(void)
{
    tmp[0] = '\0';
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_info);
    RUN(test_convert_extract);
    RUN(test_export);
    RUN(test_reading_inputs);
    RUN(test_export_levels);
    return trn_test_finish();
}
