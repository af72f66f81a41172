/* Command-line tests for info and convert: exit codes, messages, JSON output, round trips. */
#include <jansson.h>
#include <stdlib.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "test.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* A small modern .ter with two materials, a hole and a slope, written through the library. */
static void make_ter(const char *path, uint32_t size)
{
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    ter.version = 9;
    ter.size = size;
    ter.heights = malloc(sizeof(uint16_t) * size * size);
    ter.layers = malloc((size_t)size * size);
    for (uint32_t y = 0; y < size; y++)
        for (uint32_t x = 0; x < size; x++) {
            ter.heights[y * size + x] = (uint16_t)(1000 + x * 37 + y * 11);
            ter.layers[y * size + x] = (uint8_t)(x < size / 2 ? 0 : 1);
        }
    ter.layers[0] = 255;
    static char grass[] = "grass", rock[] = "rock";
    char *names[2] = {grass, rock};
    uint32_t lens[2] = {5, 4};
    ter.materials = names;
    ter.material_lengths = lens;
    ter.material_count = 2;
    CHECK_OK(trn_ter_write(path, &ter, 9, NULL, NULL, NULL));
    free(ter.heights);
    free(ter.layers);
}

static void test_usage_errors(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_cli("", &out, &err), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("frobnicate", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown verb 'frobnicate'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--version", &out, &err), 0);
    CHECK_CONTAINS(out, "terrane ");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a FILE");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info --bogus x", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info --help", &out, &err), 0);
    CHECK_CONTAINS(out, "examples:");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("convert a.ter", &out, &err), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("convert a.ter b.xyz", &out, &err), 2);
    CHECK_CONTAINS(err, "cannot tell the output format");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("convert a.ter b.ter --ter-version 10", &out, &err), 2);
    CHECK_CONTAINS(err, "--ter-version must be 7, 8 or 9");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("convert a.ter b.png --compression x", &out, &err), 2);
    CHECK_CONTAINS(err, "expects a whole number");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("convert a.ter a.ter", &out, &err), 2);
    CHECK_CONTAINS(err, "never overwritten");
    free(out), free(err);
}

static void test_missing_and_wrong_files(void)
{
    char p[700], cmd[1600];
    char *out, *err;
    snprintf(cmd, sizeof cmd, "info '%s'", tmp_path(p, sizeof p, "nope.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "nope.ter");
    CHECK_CONTAINS(err, "No such file");
    free(out), free(err);
    /* A text file is no terrain. */
    tmp_path(p, sizeof p, "notes.txt");
    CHECK(trn_test_write_file(p, "hello, world\n", 13));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "unrecognised format");
    free(out), free(err);
    /* A version-10 .ter: detected as .ter, refused with the version message. */
    uint8_t v10[64] = {10, 4, 0, 0, 0};
    tmp_path(p, sizeof p, "v10.ter");
    CHECK(trn_test_write_file(p, v10, sizeof v10));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "version 10 is newer than 9");
    free(out), free(err);
    /* A truncated .ter names the section and offset. */
    char good[700];
    make_ter(tmp_path(good, sizeof good, "small.ter"), 8);
    size_t n;
    uint8_t *data = trn_test_read_file(good, &n);
    tmp_path(p, sizeof p, "cut.ter");
    CHECK(trn_test_write_file(p, data, 100));
    free(data);
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "cut.ter: offset");
    free(out), free(err);
    /* A raw file whose length is not a square. */
    tmp_path(p, sizeof p, "odd.r16");
    CHECK(trn_test_write_file(p, "abcdef", 6));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "odd.r16");
    free(out), free(err);
}

static void test_review_fixes(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    /* The same file spelled two ways is still the input. */
    make_ter(tmp_path(p, sizeof p, "same.ter"), 8);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s/./same.ter'", p, tmp);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
    CHECK_CONTAINS(err, "same file");
    free(out), free(err);
    /* An unknown option is named as such, even without a value after it. */
    snprintf(cmd, sizeof cmd, "convert '%s' x.png --bogus", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
    /* Folders and empty files. */
    snprintf(cmd, sizeof cmd, "info '%s'", tmp);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "is a folder, expected a file");
    free(out), free(err);
    tmp_path(q, sizeof q, "empty.ter");
    CHECK(trn_test_write_file(q, "", 0));
    snprintf(cmd, sizeof cmd, "info '%s'", q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "empty.ter: offset 0: the file is empty");
    free(out), free(err);
    /* Unknown content shows the bytes found. */
    tmp_path(q, sizeof q, "zip.bin");
    CHECK(trn_test_write_file(q, "PK\x03\x04", 4));
    snprintf(cmd, sizeof cmd, "info '%s'", q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "found bytes 50 4b 03 04");
    free(out), free(err);
    /* A float raster: beamng import reads R32 (with --max-height), but not 8-bit R8. */
    tmp_path(q, sizeof q, "flat.r32");
    float zeros[128 * 128];
    memset(zeros, 0, sizeof zeros);
    CHECK(trn_test_write_file(q, zeros, sizeof zeros));
    snprintf(cmd, sizeof cmd, "info '%s' --format json", q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "\"beamng_importable\": true");
    free(out), free(err);
    tmp_path(q, sizeof q, "flat.r8");
    CHECK(trn_test_write_file(q, zeros, 128 * 128));
    snprintf(cmd, sizeof cmd, "info '%s' --format json", q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "\"beamng_importable\": false");
    free(out), free(err);
}

static void test_extra_maps(void)
{
    char src[700], dst[700], cmd[2000];
    char *out, *err;
    /* A seed-001 style file: one extra size*size block before the material count. */
    uint32_t size = 8;
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    ter.version = 7;
    ter.layout = TRN_TER_LAYOUT_EXTRA_1;
    ter.size = size;
    uint16_t heights[64];
    uint8_t layers[64], extra[64];
    for (int i = 0; i < 64; i++) {
        heights[i] = (uint16_t)(i * 100);
        layers[i] = 0;
        extra[i] = (uint8_t)i;
    }
    ter.heights = heights;
    ter.layers = layers;
    ter.extra_maps = extra;
    ter.extra_count = 1;
    static char grass[] = "grass";
    char *names[1] = {grass};
    uint32_t lens[1] = {5};
    ter.materials = names;
    ter.material_lengths = lens;
    ter.material_count = 1;
    CHECK_OK(trn_ter_write(tmp_path(src, sizeof src, "extra.ter"), &ter, 7, NULL, NULL, NULL));
    tmp_path(dst, sizeof dst, "extra_out.ter");
    /* Default: version 9, engine layout, extra map dropped with a note. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", src, dst);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "dropping 1 extra map");
    free(out), free(err);
    size_t n;
    uint8_t *data = trn_test_read_file(dst, &n);
    CHECK_EQ_INT(n, 5 + 3 * 64 + 4 + 1 + 5);
    CHECK(data && data[0] == 9);
    free(data);
    /* Its own version: byte-identical, extra map kept. */
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --ter-version 7", src, dst);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(trn_test_same_bytes(src, dst));
    free(out), free(err);
}

static void test_info_json(void)
{
    char p[700], cmd[1600];
    char *out, *err;
    make_ter(tmp_path(p, sizeof p, "info.ter"), 16);
    snprintf(cmd, sizeof cmd, "info '%s' --format json --max-height 1024", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(o != NULL);
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "format")), "beamng-ter") == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "version")), 9);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "size")), 16);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "holes")), 1);
        json_t *h = json_object_get(o, "heights");
        CHECK_EQ_INT(json_integer_value(json_object_get(h, "stored_min")), 1000);
        CHECK_EQ_INT(json_integer_value(json_object_get(h, "stored_max")), 1000 + 15 * 48);
        CHECK(json_real_value(json_object_get(h, "metres_min")) == 1000 * 1024.0 / 65536.0);
        json_t *m = json_object_get(o, "materials");
        CHECK_EQ_INT(json_array_size(m), 2);
        CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(m, 0), "samples")),
                     16 * 8 - 1);
        CHECK_EQ_INT(json_integer_value(json_object_get(json_array_get(m, 1), "samples")), 16 * 8);
        json_decref(o);
    }
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "version 9");
    CHECK_CONTAINS(out, "grass");
    free(out), free(err);
}

static void test_info_terrain_json(void)
{
    char ter_path[700], json_path[700], cmd[1600];
    char *out, *err;
    make_ter(tmp_path(ter_path, sizeof ter_path, "theTerrain.ter"), 16);
    trn_ter ter;
    CHECK_OK(trn_ter_read(ter_path, NULL, &ter, NULL, NULL, NULL));
    trn_terrain_json tj;
    CHECK_OK(trn_terrain_json_from_ter(&ter, "/levels/x/theTerrain.ter",
                                       "/levels/x/theTerrain.terrainheightmap.png", &tj, NULL));
    tmp_path(json_path, sizeof json_path, "theTerrain.terrain.json");
    CHECK_OK(trn_terrain_json_write(json_path, &tj, NULL));
    snprintf(cmd, sizeof cmd, "info '%s'", json_path);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "BeamNG terrain metadata");
    CHECK_CONTAINS(out, "agrees with it");
    free(out), free(err);
    /* A renamed material is reported against the .ter beside it. */
    free(tj.materials[1]);
    tj.materials[1] = malloc(6);
    memcpy(tj.materials[1], "stone", 6);
    CHECK_OK(trn_terrain_json_write(json_path, &tj, NULL));
    snprintf(cmd, sizeof cmd, "info '%s' --format json", json_path);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    json_t *o = json_loads(out ? out : "", 0, NULL);
    CHECK(o && json_array_size(json_object_get(o, "disagreements")) == 1);
    CHECK_CONTAINS(json_string_value(json_array_get(json_object_get(o, "disagreements"), 0)),
                   "stone");
    json_decref(o);
    free(out), free(err);
    trn_terrain_json_dispose(&tj);
    trn_ter_dispose(&ter);
    /* A terrane asset document of the same name is told apart. */
    CHECK(trn_test_write_file(json_path, "{\"format_version\": 1, \"recipe\": {}}", 35));
    snprintf(cmd, sizeof cmd, "info '%s'", json_path);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "Terrain asset source");
    free(out), free(err);
    /* Broken JSON names line and column. */
    CHECK(trn_test_write_file(json_path, "{\n  \"version\": 9,,\n}", 20));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "theTerrain.terrain.json:2:");
    free(out), free(err);
}

static void test_convert_round_trips(void)
{
    char ter[700], png[700], r16[700], back[700], cmd[3000];
    char *out, *err;
    make_ter(tmp_path(ter, sizeof ter, "rt.ter"), 128);
    tmp_path(png, sizeof png, "rt.png");
    tmp_path(r16, sizeof r16, "rt.r16");
    tmp_path(back, sizeof back, "back.ter");
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s'", ter, png);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);
    /* The PNG holds the stored values exactly, north row first. */
    trn_image img;
    CHECK_OK(trn_png_read(png, NULL, &img, NULL));
    if (img.data) {
        CHECK_EQ_INT(img.width, 128);
        CHECK_EQ_INT(img.bit_depth, 16);
        const uint16_t *px = img.data;
        CHECK_EQ_INT(px[0], 1000 + 127 * 11);           /* image row 0 = terrain's last row */
        CHECK_EQ_INT(px[127 * 128 + 5], 1000 + 5 * 37); /* image last row = terrain row 0 */
        trn_image_dispose(&img);
    }
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s'", ter, r16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);
    /* r16 back to .ter with the same maxHeight gives the same heights. */
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --max-height 2048", r16, back);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);
    trn_ter a, b;
    CHECK_OK(trn_ter_read(ter, NULL, &a, NULL, NULL, NULL));
    CHECK_OK(trn_ter_read(back, NULL, &b, NULL, NULL, NULL));
    CHECK(a.size == b.size && a.heights && b.heights &&
          memcmp(a.heights, b.heights, sizeof(uint16_t) * a.size * a.size) == 0);
    trn_ter_dispose(&a);
    trn_ter_dispose(&b);
    /* .ter to .ter with its own version is byte-identical. */
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --ter-version 9", ter, back);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(trn_test_same_bytes(ter, back));
    free(out), free(err);
}

static void test_real_files(void)
{
    char real[700], outp[700], cmd[2000];
    char *out, *err;
    static const char *const v7[] = {"t3d_v7_Outpost_0_1024.ter", "t3d_v7_EmptyRoom_512.ter",
                                     "t3d_v7_desert_world_0_256.ter"};
    for (size_t k = 0; k < 3; k++) {
        if (!trn_test_real_path(v7[k], real, sizeof real)) continue;
        snprintf(outp, sizeof outp, "%s/real_%zu.ter", tmp, k);
        snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --ter-version 7", real, outp);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        CHECK(trn_test_same_bytes(real, outp));
        free(out), free(err);
    }
    if (trn_test_real_path("terragen_RealisticTerrain.ter", real, sizeof real)) {
        snprintf(cmd, sizeof cmd, "info '%s'", real);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        CHECK_CONTAINS(out, "Terragen");
        free(out), free(err);
        snprintf(outp, sizeof outp, "%s/terragen.png", tmp);
        snprintf(cmd, sizeof cmd, "convert -q '%s' '%s'", real, outp);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        free(out), free(err);
        /* Terragen -> Terragen through the field keeps the stored elevations: same bytes. */
        snprintf(outp, sizeof outp, "%s/terragen_again.ter", tmp);
        snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --of terragen", real, outp);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        CHECK(trn_test_same_bytes(real, outp));
        free(out), free(err);
    }
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_usage_errors);
    RUN(test_missing_and_wrong_files);
    RUN(test_review_fixes);
    RUN(test_extra_maps);
    RUN(test_info_json);
    RUN(test_info_terrain_json);
    RUN(test_convert_round_trips);
    RUN(test_real_files);
    return trn_test_finish();
}
