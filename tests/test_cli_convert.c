/* Command-line tests for info and convert: exit codes, messages, JSON output, round trips. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
    /* A Git LFS pointer (a clone without git lfs pull): named, with the way to the file. */
    tmp_path(p, sizeof p, "lfs.ter");
    const char lfs[] = "version https://git-lfs.github.com/spec/v1\noid sha256:358f\nsize 117440538\n";
    CHECK(trn_test_write_file(p, lfs, strlen(lfs)));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "Git LFS pointer");
    CHECK_CONTAINS(err, "git lfs pull");
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
    /* A file in the community notes' layout: one extra size*size block before the material count.
     */
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
    /* A file cut inside its last name is refused before the output changes. */
    uint8_t *whole = trn_test_read_file(src, &n);
    CHECK(whole && trn_test_write_file(src, whole, n - 1));
    free(whole);
    CHECK(trn_test_write_file(dst, "old", 3));
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --ter-version 7", src, dst);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "extra.ter: offset");
    CHECK_CONTAINS(err, "material name 0");
    free(out), free(err);
    data = trn_test_read_file(dst, &n);
    CHECK(data && n == 3 && memcmp(data, "old", 3) == 0);
    free(data);
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
        CHECK(strcmp(json_string_value(json_object_get(o, "input_format")), "beamng-ter") == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "ter_version")), 9);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "resolution")), 16);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "holes")), 1);
        json_t *h = json_object_get(o, "height_range");
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
    /* A terrane asset document of the same name is told apart: read as one, its own
     * mistakes named with their position. */
    CHECK(trn_test_write_file(json_path, "{\"format_version\": 1, \"recipe\": {}}", 35));
    snprintf(cmd, sizeof cmd, "info '%s'", json_path);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "theTerrain.terrain.json:1:1: missing required key 'id'");
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
    /* A map large enough for every core (512^2): R16 to .ter on 1 and 3 threads gives the
     * stored values back, each sample scaled on its own whichever thread holds it. */
    make_ter(ter, 512);
    snprintf(cmd, sizeof cmd, "convert -q '%s' '%s'", ter, r16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);
    for (int threads = 1; threads <= 3; threads += 2) {
        setenv("OMP_NUM_THREADS", threads == 1 ? "1" : "3", 1);
        snprintf(cmd, sizeof cmd, "convert -q '%s' '%s' --max-height 2048", r16, back);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        free(out), free(err);
        CHECK_OK(trn_ter_read(ter, NULL, &a, NULL, NULL, NULL));
        CHECK_OK(trn_ter_read(back, NULL, &b, NULL, NULL, NULL));
        CHECK(a.size == 512 && b.size == 512 && a.heights && b.heights &&
              memcmp(a.heights, b.heights, sizeof(uint16_t) * 512 * 512) == 0);
        trn_ter_dispose(&a);
        trn_ter_dispose(&b);
    }
    unsetenv("OMP_NUM_THREADS");
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

/* ---- reading inputs: limits, channels, NaN, detection, headerless sizes, special files ---- */

static uint32_t crc32_of(const uint8_t *p, size_t n, uint32_t crc)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static size_t put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8),
    p[3] = (uint8_t)v;
    return 4;
}

static size_t put_chunk(uint8_t *p, const char *type, const uint8_t *data, uint32_t n)
{
    size_t k = put_be32(p, n);
    memcpy(p + k, type, 4);
    if (n) memcpy(p + k + 4, data, n);
    put_be32(p + k + 4 + n, crc32_of(p + k, 4 + (size_t)n, 0));
    return 12 + n;
}

/* A PNG whose IHDR says width x height (8-bit grey) and whose IDAT is a few bytes: what `info`
 * needs is all in the header, and nothing may decode it. */
static void write_header_only_png(const char *path, uint32_t width, uint32_t height)
{
    uint8_t b[128];
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    memcpy(b, sig, 8);
    uint8_t ihdr[13] = {0};
    put_be32(ihdr, width);
    put_be32(ihdr + 4, height);
    ihdr[8] = 8; /* bit depth; colour type 0 (grey) */
    size_t n = 8 + put_chunk(b + 8, "IHDR", ihdr, 13);
    static const uint8_t idat[6] = {0x78, 0x9c, 0x63, 0x00, 0x00, 0x00};
    n += put_chunk(b + n, "IDAT", idat, 6);
    n += put_chunk(b + n, "IEND", NULL, 0);
    CHECK(trn_test_write_file(path, b, n));
}

static json_t *run_json(const char *cmd, int expect_rc)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), expect_rc);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(o != NULL);
    free(out), free(err);
    return o;
}

/* A 4 x 4 R16 file with values 1000 + 10 * i. */
static void write_r16(const char *path)
{
    uint8_t b[32];
    for (int i = 0; i < 16; i++) {
        unsigned v = 1000u + 10u * (unsigned)i;
        b[2 * i] = (uint8_t)v, b[2 * i + 1] = (uint8_t)(v >> 8);
    }
    CHECK(trn_test_write_file(path, b, sizeof b));
}

static void test_max_samples(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    /* 65536^2 samples in a few hundred bytes: info answers from the IHDR; decoding is refused
     * before anything is allocated. */
    write_header_only_png(tmp_path(p, sizeof p, "huge.png"), 65536, 65536);
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "size:      65536 x 65536");
    CHECK_CONTAINS(out, "values:    not read: 65536 x 65536 = 4294967296 samples, more than the "
                        "limit of 715827882 (--max-samples N reads them)");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --format json", p);
    json_t *o = run_json(cmd, 0);
    if (o) {
        CHECK(json_is_false(json_object_get(o, "values_read")));
        CHECK(json_is_null(json_object_get(o, "min")));
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "samples")), 4294967296LL);
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(o, "grid"), 0)), 65536);
        json_decref(o);
    }
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p, tmp_path(q, sizeof q, "huge_out.png"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "huge.png: offset 16: image is 65536 x 65536 = 4294967296 samples, more "
                        "than the limit of 715827882");
    CHECK_CONTAINS(err, "--max-samples N");
    CHECK(!trn_test_exists(q));
    free(out), free(err);

    /* The limit itself is accepted, one less refused: convert fails, info still describes. */
    write_r16(tmp_path(p, sizeof p, "tiny.r16"));
    tmp_path(q, sizeof q, "tiny_out.r16");
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --max-samples 16", p, q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);
    CHECK(trn_test_same_bytes(p, q));
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --max-samples 15", p, q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "tiny.r16: raster of 4 x 4 = 16 samples is more than the limit of 15");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --max-samples 16", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "values:    1000 .. 1150");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --max-samples 15", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "values:    not read: raster of 4 x 4 = 16 samples");
    free(out), free(err);

    /* .ter: the header answers; the reader refuses at the size field. */
    make_ter(tmp_path(p, sizeof p, "limit.ter"), 16);
    snprintf(cmd, sizeof cmd, "info '%s' --max-samples 255", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "version 9");
    CHECK_CONTAINS(out, "size:      16 x 16 samples");
    CHECK_CONTAINS(out, "not read: header: size 16 x 16 = 256 samples, more than the limit of 255");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --max-samples 255", p,
             tmp_path(q, sizeof q, "limit.png"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "limit.ter: offset 1: header: size 16 x 16 = 256 samples");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --max-samples 256", p, q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out), free(err);

    /* Bad values are usage errors. */
    const char *bad[] = {"0", "x", "16x", "-1", "18446744073709551616"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(cmd, sizeof cmd, "info '%s' --max-samples '%s'", p, bad[k]);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
        CHECK_CONTAINS(err, "--max-samples expects a whole number of samples");
        free(out), free(err);
    }
}

/* An 8-bit 4 x 3 image of 3 or 4 channels: R = 10x + y, G = 100 + x, B = 200 + y, A = 7. */
static void write_colour_png(const char *path, uint8_t channels)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, 4, 3, channels, 8, NULL));
    uint8_t *d = img.data;
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++) {
            uint8_t *px = d + ((size_t)y * 4 + (size_t)x) * channels;
            px[0] = (uint8_t)(10 * x + y);
            if (channels >= 3) px[1] = (uint8_t)(100 + x), px[2] = (uint8_t)(200 + y);
            if (channels == 4) px[3] = 7;
            if (channels == 2) px[1] = 9;
        }
    CHECK_OK(trn_png_write(path, &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
}

/* Convert in to a 16-bit raw file and read sample (x, y) back (row 0 = the image's top). */
static int converted_sample(const char *in, const char *extra, int x, int y)
{
    char q[700], cmd[2000];
    char *out, *err;
    tmp_path(q, sizeof q, "channel.r16");
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' -q %s", in, q, extra);
    int rc = trn_test_run_cli(cmd, &out, &err);
    free(out), free(err);
    if (rc != 0) return -1;
    trn_image img;
    if (trn_raw_read(q, TRN_RAW_U16_LE, 4, 3, &img, NULL) != TRN_OK) return -2;
    int v = ((const uint16_t *)img.data)[y * 4 + x];
    trn_image_dispose(&img);
    return v;
}

static void test_channels(void)
{
    char rgb[700], rgba[700], ga[700], cmd[2000], x16[700];
    char *out, *err;
    tmp_path(x16, sizeof x16, "x.r16");
    write_colour_png(tmp_path(rgb, sizeof rgb, "rgb.png"), 3);
    write_colour_png(tmp_path(rgba, sizeof rgba, "rgba.png"), 4);
    write_colour_png(tmp_path(ga, sizeof ga, "ga.png"), 2);
    /* By default the first channel, said in a note. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", rgb, x16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "rgb.png is an RGB image: heights come from its R channel; G, B are not "
                        "used (--channel R|G|B|A|luma chooses)");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", rgba, x16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "G, B and A are not used");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", ga, x16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "ga.png is a grey+alpha image: heights come from its grey channel; the "
                        "alpha channel is not used (--channel A reads it)");
    free(out), free(err);
    /* Each channel, exactly (8-bit v becomes the 16-bit v * 257). */
    CHECK_EQ_INT(converted_sample(rgb, "", 3, 2), (10 * 3 + 2) * 257);
    CHECK_EQ_INT(converted_sample(rgb, "--channel R", 3, 2), (10 * 3 + 2) * 257);
    CHECK_EQ_INT(converted_sample(rgb, "--channel G", 3, 2), (100 + 3) * 257);
    CHECK_EQ_INT(converted_sample(rgb, "--channel b", 3, 2), (200 + 2) * 257);
    CHECK_EQ_INT(converted_sample(rgba, "--channel A", 1, 1), 7 * 257);
    CHECK_EQ_INT(converted_sample(ga, "--channel A", 1, 1), 9 * 257);
    CHECK_EQ_INT(converted_sample(ga, "--channel G", 1, 1), 11 * 257); /* grey is its own G */
    /* Luma: Rec. 709 weights on the stored values, rounded in 16 bits. */
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++) {
            double luma = 257.0 * (0.2126 * (10 * x + y) + 0.7152 * (100 + x) + 0.0722 * (200 + y));
            CHECK_EQ_INT(converted_sample(rgb, "--channel luma", x, y), (int)(luma + 0.5));
        }
    CHECK_EQ_INT(converted_sample(ga, "--channel luma", 2, 0), 20 * 257);
    /* Alpha where there is none. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --channel A", rgb, x16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "rgb.png: --channel A: the image has no alpha channel (it is RGB)");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --channel Z", rgb);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
    CHECK_CONTAINS(err, "--channel takes R, G, B, A or luma, not 'Z'");
    free(out), free(err);
    /* info describes the chosen channel. */
    snprintf(cmd, sizeof cmd, "info '%s' --channel G", rgb);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "values:    100 .. 103 (G channel)");
    free(out), free(err);
}

static void write_floats(const char *path, const float *v, size_t n)
{
    uint8_t b[64 * 4];
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &v[i], 4);
        for (int k = 0; k < 4; k++)
            b[4 * i + (size_t)k] = (uint8_t)(u >> (8 * k));
    }
    CHECK(trn_test_write_file(path, b, n * 4));
}

static void test_nan_inputs(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    float v[16];
    for (int i = 0; i < 16; i++)
        v[i] = (float)i;
    v[5] = NAN;
    v[6] = INFINITY;
    v[10] = -INFINITY;
    write_floats(tmp_path(p, sizeof p, "holes.r32"), v, 16);
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "values:    0 .. 15");
    CHECK_CONTAINS(out, "non-finite: 1 NaN, 2 infinite of 16 samples (filled smoothly");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --format json", p);
    json_t *o = run_json(cmd, 0);
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "nan_count")), 1);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "inf_count")), 2);
        CHECK(json_real_value(json_object_get(o, "max")) == 15.0);
        json_decref(o);
    }
    /* Filled like GeoTIFF NoData, from the neighbours: every output sample is finite and
     * within the valid range; the valid ones are kept. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p, tmp_path(q, sizeof q, "filled.r32"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "holes.r32: filled 3 NaN or infinite samples (of 16) smoothly");
    free(out), free(err);
    trn_image img;
    CHECK_OK(trn_raw_read(q, TRN_RAW_F32_LE, 4, 4, &img, NULL));
    const float *f = img.data;
    for (int i = 0; i < 16; i++) {
        CHECK(isfinite(f[i]) && f[i] >= 0.0f && f[i] <= 15.0f);
        if (i != 5 && i != 6 && i != 10) CHECK(f[i] == (float)i);
    }
    CHECK(f[5] != 0.0f); /* not the minimum */
    trn_image_dispose(&img);
    /* Nothing finite: refused, nothing written. */
    for (int i = 0; i < 16; i++)
        v[i] = i == 3 ? INFINITY : NAN;
    write_floats(tmp_path(p, sizeof p, "void.r32"), v, 16);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p, tmp_path(q, sizeof q, "void.png"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "void.r32: all 16 samples are NaN or infinite");
    CHECK(!trn_test_exists(q));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --format json", p);
    o = run_json(cmd, 0);
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "nan_count")), 15);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "inf_count")), 1);
        CHECK(json_is_null(json_object_get(o, "min")));
        json_decref(o);
    }
}

/* A legacy .ter (version 2, three names) whose heights are all 0: its first bytes also make a
 * plausible terrain.dat header. */
static void write_flat_legacy(const char *path)
{
    size_t n = 1 + 65536 * 3 + 8 + 5 + 4 + 2 * 65536, k = 0;
    uint8_t *b = calloc(n, 1);
    b[k++] = 2;
    k += 65536 * 3;
    const char *names[8] = {"grass", "", "rock", "", "", "", "", ""};
    for (int s = 0; s < 8; s++) {
        size_t len = strlen(names[s]);
        b[k++] = (uint8_t)len;
        memcpy(b + k, names[s], len);
        k += len;
    }
    k += 2 * 65536;
    CHECK(k == n);
    CHECK(trn_test_write_file(path, b, n));
    free(b);
}

static void test_detection(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    const char *names[] = {"flat.ter", "flat.bin", "flat"};
    for (int k = 0; k < 3; k++) {
        write_flat_legacy(tmp_path(p, sizeof p, names[k]));
        snprintf(cmd, sizeof cmd, "info '%s'", p);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        CHECK_CONTAINS(out, "BeamNG/Torque terrain (.ter), version 2, legacy layout");
        free(out), free(err);
        snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p, tmp_path(q, sizeof q, "flat.png"));
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        /* The two named slots' alpha maps and the material layers do not fit in a PNG. */
        CHECK_CONTAINS(err, "dropped 2 legacy alpha maps (the strongest material is kept); "
                            "material layers (");
        free(out), free(err);
    }
    /* One byte more: no longer a .ter, and with no other format whole it is named by the
     * layout that fit furthest (the .ter's), whose reader says where it goes wrong. */
    size_t n;
    uint8_t *flat = trn_test_read_file(tmp_path(p, sizeof p, "flat.bin"), &n);
    uint8_t *longer = malloc(n + 1);
    memcpy(longer, flat, n);
    longer[n] = 0;
    CHECK(trn_test_write_file(tmp_path(p, sizeof p, "flat_plus.bin"), longer, n + 1));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "1 bytes after the last alpha map");
    free(out), free(err);
    free(longer);
    free(flat);
    /* A real terrain.dat (MaxDepth 0: one solid leaf, no veins) is still one. */
    const uint8_t dat[11] = {0, 0, 0, 0, 1, 255, 1, 0, 0, 0, 0};
    CHECK(trn_test_write_file(tmp_path(p, sizeof p, "terrain.dat"), dat, sizeof dat));
    snprintf(cmd, sizeof cmd, "info '%s' --format json", p);
    json_t *o = run_json(cmd, 0);
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "input_format")), "stationeers-dat") == 0);
        json_decref(o);
    }
    /* A .ter whose size field is 0: the .ter's message, not an octree's. */
    const uint8_t zero_size[5] = {9, 0, 0, 0, 0};
    CHECK(trn_test_write_file(tmp_path(p, sizeof p, "zero.ter"), zero_size, 5));
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "zero.ter: offset 1: header: size is 0");
    CHECK(!strstr(err, "octree"));
    free(out), free(err);

    /* --input-format forces a reader; names and aliases; junk is a usage error listing them. */
    make_ter(tmp_path(p, sizeof p, "forced.ter"), 8);
    snprintf(cmd, sizeof cmd, "info '%s' --input-format png", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "forced.ter: offset 0:");
    CHECK_CONTAINS(err, "PNG");
    free(out), free(err);
    const char *aliases[] = {"ter", "beamng-ter", "TER"};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "info '%s' --input-format %s", p, aliases[k]);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        CHECK_CONTAINS(out, "version 9");
        free(out), free(err);
    }
    snprintf(cmd, sizeof cmd, "info '%s' --input-format r16", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "16-bit little-endian samples"); /* read as a headerless R16 */
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "info '%s' --input-format dem", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
    CHECK_CONTAINS(err, "--input-format takes beamng-ter (ter), terragen, png, raw (r16, r32), "
                        "geotiff (tif), unity, stationeers-dat (dat), stationeers-save (save), "
                        "beamng-terrain-json; not 'dem'");
    free(out), free(err);
    /* A headerless file with no raw extension, named by --input-format r32. */
    float v[4] = {1, 2, 3, 4};
    write_floats(tmp_path(p, sizeof p, "heights.bin"), v, 4);
    snprintf(cmd, sizeof cmd, "info '%s' --input-format r32 --format json", p);
    o = run_json(cmd, 0);
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "bit_depth")), 32);
        CHECK(json_real_value(json_object_get(o, "max")) == 4.0);
        json_decref(o);
    }
}

/* --size is a headerless input's own size; for every other input it is the output size. */
static void test_size_is_output_size(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    make_ter(tmp_path(p, sizeof p, "sized.ter"), 16);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --size 8x4 --max-height 2048 --fit stretch", p,
             tmp_path(q, sizeof q, "sized.png"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "resampled 16 x 16 -> 8 x 4 samples");
    /* 15 m over 7 cells and 15 m over 3 cells. */
    CHECK_CONTAINS(err, "the cells are now 2.14286 x 5 m (not square)");
    free(out), free(err);
    /* Without --fit the aspect is kept on real ground: 15 x 15 cells cropped to 15 x 6 (7 : 3
     * rounded to whole samples), then resampled; --fit pad grows it to 35 x 15 instead. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --size 8x4 --max-height 2048", p, q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "kept the middle 16 x 7 of 16 x 16 samples (--fit crop, the default)");
    CHECK_CONTAINS(err, "resampled 16 x 7 -> 8 x 4 samples");
    CHECK(!strstr(err ? err : "", "not square"));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --size 8x4 --max-height 2048 --fit pad", p, q);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "padded 16 x 16 -> 36 x 16 samples (--fit pad)");
    CHECK_CONTAINS(err, "resampled 36 x 16 -> 8 x 4 samples");
    free(out), free(err);
    trn_png_info info;
    CHECK_OK(trn_png_read_info(q, &info, NULL));
    CHECK_EQ_INT(info.width, 8);
    CHECK_EQ_INT(info.height, 4);
    /* info has no output: it says it ignores --size. */
    snprintf(cmd, sizeof cmd, "info '%s' --size 8x4", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "size:      16 x 16 samples");
    CHECK_CONTAINS(err, "--size is the size of a headerless input; ");
    free(out), free(err);
    /* A headerless file still takes it as its size. */
    write_r16(tmp_path(p, sizeof p, "wide.r16"));
    snprintf(cmd, sizeof cmd, "info '%s' --size 8x2", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "size:      8 x 2");
    free(out), free(err);
}

/* Pipes, FIFOs and devices are read once into memory, bounded, and named as given. */
static void test_special_inputs(void)
{
    char fifo[700], src[700], cmd[2000];
    char *out, *err;
    make_ter(tmp_path(src, sizeof src, "piped.ter"), 16);
    tmp_path(fifo, sizeof fifo, "pipe");
    CHECK(mkfifo(fifo, 0600) == 0);
    /* A writer on the other end, as `cat piped.ter |` would be. */
    for (int round = 0; round < 2; round++) {
        pid_t pid = fork();
        if (pid == 0) {
            size_t n;
            uint8_t *d = trn_test_read_file(src, &n);
            int fd = open(fifo, O_WRONLY);
            size_t cut = round == 0 ? n : 100; /* the second time, cut short */
            ssize_t w = fd >= 0 && d ? write(fd, d, cut) : -1;
            _exit(w == (ssize_t)cut ? 0 : 1);
        }
        snprintf(cmd, sizeof cmd, "info '%s'", fifo);
        int rc = trn_test_run_cli(cmd, &out, &err);
        int status = 0;
        waitpid(pid, &status, 0);
        if (round == 0) {
            CHECK_EQ_INT(rc, 0);
            CHECK_CONTAINS(out, "BeamNG/Torque terrain (.ter), version 9");
            CHECK_CONTAINS(out, "size:      16 x 16 samples");
            CHECK_CONTAINS(out, "pipe");
        } else {
            /* Errors name the user's path, never the in-memory copy. */
            CHECK_EQ_INT(rc, 1);
            CHECK_CONTAINS(err, "pipe: offset 5: heights: expected 512 bytes");
            CHECK(!strstr(err, "/proc/self/fd"));
        }
        free(out), free(err);
    }
    /* A pipe forced to be a raster runs into the byte limit (8 bytes a sample + 16 MiB). */
    pid_t big = fork();
    if (big == 0) {
        signal(SIGPIPE, SIG_DFL);
        static uint8_t zeros[1 << 16];
        int fd = open(fifo, O_WRONLY);
        for (int k = 0; fd >= 0 && k < 512; k++)
            if (write(fd, zeros, sizeof zeros) < 0) break;
        _exit(0);
    }
    snprintf(cmd, sizeof cmd, "info '%s' --input-format r16 --max-samples 1000", fifo);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "is a pipe (FIFO) and holds more than 16785216 bytes, the limit for "
                        "inputs that are not regular files");
    free(out), free(err);
    waitpid(big, NULL, 0);
    /* A named pipe nobody writes to is refused (after two seconds), never waited on. */
    snprintf(cmd, sizeof cmd, "info '%s'", fifo);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "no program wrote anything to it within 2 seconds");
    free(out), free(err);
    unlink(fifo);
    /* A device is no file: /dev/zero is refused at once, even when a format is forced. */
    CHECK_EQ_INT(trn_test_run_cli("info /dev/zero", &out, &err), 1);
    CHECK_CONTAINS(err, "/dev/zero: is a character device; terrane reads regular files and pipes");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info /dev/zero --input-format dat", &out, &err), 1);
    CHECK_CONTAINS(err, "/dev/zero: is a character device; terrane reads regular files and pipes");
    free(out), free(err);
}

/* An 8-bit heightmap has 256 levels: info, convert and beamng import say so (terraces); a
 * 16-bit one is not warned about. */
static void test_8bit_warnings(void)
{
    char p8[700], p16[700], out_ter[700], cmd[2400];
    char *out, *err;
    trn_image img;
    CHECK_OK(trn_image_init(&img, 128, 128, 1, 8, NULL));
    for (size_t k = 0; k < 128u * 128u; k++)
        ((uint8_t *)img.data)[k] = (uint8_t)(k % 128 + k / 2048);
    CHECK_OK(trn_png_write(tmp_path(p8, sizeof p8, "eight.png"), &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
    CHECK_OK(trn_image_init(&img, 128, 128, 1, 16, NULL));
    for (size_t k = 0; k < 128u * 128u; k++)
        ((uint16_t *)img.data)[k] = (uint16_t)(k * 3);
    CHECK_OK(trn_png_write(tmp_path(p16, sizeof p16, "sixteen.png"), &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
    const char *warn = "is an 8-bit heightmap: 256 height levels at most";
    snprintf(cmd, sizeof cmd, "info '%s'", p8);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "warning:   8-bit heights: 256 levels at most");
    CHECK_CONTAINS(err, warn);
    /* A step is 257 stored units of 2048 / 65536 m. */
    CHECK_CONTAINS(err, "steps of 8.03125 m with maxHeight 2048");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p8, tmp_path(out_ter, sizeof out_ter, "e.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, warn);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "beamng import '%s' -o '%s' --max-height 255", p8,
             tmp_path(out_ter, sizeof out_ter, "imp.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, warn);
    CHECK_CONTAINS(err, "steps of 0.999985 m with maxHeight 255");
    free(out), free(err);
    /* 16-bit: no such warning anywhere. */
    snprintf(cmd, sizeof cmd, "info '%s'", p16);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(!strstr(out ? out : "", "8-bit") && !strstr(err ? err : "", "8-bit"));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "beamng import '%s' -o '%s'", p16, out_ter);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(!strstr(err ? err : "", "8-bit"));
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s'", p16, tmp_path(out_ter, sizeof out_ter, "s.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(!strstr(err ? err : "", "8-bit"));
    free(out), free(err);
}

/* Materials survive cropping and padding (a .ter cut to 16 x 10 and padded back to a 16 x 16
 * square keeps them, the padding's materials repeating the edge rows while its heights fall
 * away); resampling drops them and says so.
 * A 16-bit input keeps its stored values through the reshaping. */
static void test_reshape_keeps_materials(void)
{
    char p[700], q[700], cmd[2000];
    char *out, *err;
    make_ter(tmp_path(p, sizeof p, "mat.ter"), 16);
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --crop 0,0,16,10 --fit pad --format json", p,
             tmp_path(q, sizeof q, "mat-pad.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "padded 16 x 10 -> 16 x 16 samples");
    json_t *o = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_array_size(json_object_get(o, "dropped")), 0);
    json_t *hs = json_object_get(o, "heights");
    CHECK(strcmp(json_string_value(json_object_get(hs, "rule")), "the input's 16-bit values") == 0);
    json_decref(o);
    free(out), free(err);
    trn_ter in, padded;
    CHECK_OK(trn_ter_read(p, NULL, &in, NULL, NULL, NULL));
    CHECK_OK(trn_ter_read(q, NULL, &padded, NULL, NULL, NULL));
    CHECK_EQ_INT(padded.size, 16);
    CHECK_EQ_INT(padded.material_count, 2);
    /* Crop rows 0..9 from the north: .ter rows 6..15; padded 3 south, 3 north: padded row 3
     * + r is input row 6 + r; rows 0..2 repeat row 3, rows 13..15 repeat row 12. */
    size_t same = 0;
    for (uint32_t i = 0; i < 16; i++) {
        for (uint32_t r = 0; r < 10; r++) {
            same += padded.layers[(3 + r) * 16 + i] == in.layers[(6 + r) * 16 + i];
            same += padded.heights[(3 + r) * 16 + i] == in.heights[(6 + r) * 16 + i];
        }
        for (uint32_t r = 0; r < 3; r++) {
            same += padded.layers[r * 16 + i] == in.layers[6 * 16 + i];
            same += padded.layers[(13 + r) * 16 + i] == in.layers[15 * 16 + i];
        }
    }
    CHECK_EQ_INT(same, 16 * (20 + 6));
    trn_ter_dispose(&in);
    trn_ter_dispose(&padded);
    /* Resampled (16 -> 17 a side): the materials go, and the note names them; the heights are
     * rounded to the input's 16-bit steps (2048 m / 65536), not stretched. */
    snprintf(cmd, sizeof cmd, "convert '%s' '%s' --pow2plus1 --format json", p,
             tmp_path(q, sizeof q, "mat17.ter"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "dropped material layers and holes (2 materials): resampling moves the "
                        "samples off their grid");
    o = json_loads(out ? out : "", 0, NULL);
    hs = json_object_get(o, "heights");
    CHECK(strcmp(json_string_value(json_object_get(hs, "rule")), "the input's 16-bit values") == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_min")), 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_max")), 1000 + 15 * 37 + 15 * 11);
    json_decref(o);
    free(out), free(err);
}

/* info counts the 16-bit levels an R32 would get (convert's rule), as a line and in JSON. */
static void test_info_r32_levels(void)
{
    char p[700], cmd[2000];
    float *v = malloc(4096 * sizeof *v);
    for (int k = 0; k < 4096; k++)
        v[k] = (float)(0.001 * k);
    trn_image img;
    CHECK_OK(trn_image_init(&img, 64, 64, 1, 32, NULL));
    memcpy(img.data, v, 4096 * sizeof *v);
    free(v);
    CHECK_OK(trn_raw_write(tmp_path(p, sizeof p, "lv.r32"), &img, TRN_RAW_F32_LE, NULL));
    trn_image_dispose(&img);
    char *out, *err;
    snprintf(cmd, sizeof cmd, "info '%s'", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "levels:    4096 distinct 16-bit levels in a .ter, PNG or R16 (lowest to "
                        "highest: 0 = 0 m, 65535 = 4.095 m)");
    CHECK(!strstr(out ? out : "", "terraces"));
    free(out), free(err);
    /* Metres over whole steps: 0 .. 4.095 m stored as 0 .. 4 (1 m a step): 5 levels. */
    snprintf(cmd, sizeof cmd, "info '%s' --scale 0 65535 --format json", p);
    json_t *o = run_json(cmd, 0);
    json_t *lv = json_object_get(o, "levels_16bit");
    CHECK_EQ_INT(json_integer_value(json_object_get(lv, "levels")), 5);
    CHECK(strcmp(json_string_value(json_object_get(lv, "rule")), "--scale") == 0);
    CHECK(json_is_true(json_object_get(o, "few_levels")));
    json_decref(o);
    snprintf(cmd, sizeof cmd, "info '%s' --height-range 3,2", p);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 2);
    CHECK_CONTAINS(err, "--height-range takes LO,HI in metres with LO < HI");
    free(out), free(err);
}

/* Headerless float samples whose first byte happens to be '{' (16.2 m: 7B B9 81 41) are read as
 * samples when the name says so, not refused as a JSON document. */
static void test_r32_opening_brace(void)
{
    char p[700], q[700], cmd[2000];
    const uint8_t first[4] = {0x7B, 0xB9, 0x81, 0x41};
    float v[16];
    memcpy(&v[0], first, 4);
    for (int k = 1; k < 16; k++)
        v[k] = (float)k;
    write_floats(tmp_path(p, sizeof p, "brace.r32"), v, 16);
    char *out, *err;
    snprintf(cmd, sizeof cmd, "info '%s' --format json", p);
    json_t *o = run_json(cmd, 0);
    CHECK(o != NULL);
    json_decref(o);
    snprintf(cmd, sizeof cmd, "render '%s' -o '%s' -q", p, tmp_path(q, sizeof q, "brace.png"));
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK(!strstr(err ? err : "", "JSON"));
    free(out), free(err);
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
    RUN(test_max_samples);
    RUN(test_channels);
    RUN(test_nan_inputs);
    RUN(test_detection);
    RUN(test_size_is_output_size);
    RUN(test_special_inputs);
    RUN(test_8bit_warnings);
    RUN(test_info_r32_levels);
    RUN(test_r32_opening_brace);
    RUN(test_reshape_keeps_materials);
    return trn_test_finish();
}
