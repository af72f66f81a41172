/* Command-line tests for terrane beamng import/create/export/validate/migrate: exit codes,
 * messages, JSON output and an export/import round trip through the tool. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static void write_png(const char *path, uint32_t w, uint32_t h, uint8_t channels, uint8_t depth,
                      unsigned seed)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, w, h, channels, depth, NULL));
    size_t n = (size_t)w * h * channels;
    for (size_t i = 0; i < n; i++) {
        if (depth == 16)
            ((uint16_t *)img.data)[i] = (uint16_t)(i * 40503u + seed);
        else
            ((uint8_t *)img.data)[i] = (uint8_t)((i * 7u + seed * 13u) % 251u);
    }
    trn_png_options po;
    trn_png_options_default(&po);
    CHECK_OK(trn_png_write(path, &img, &po, NULL, NULL, NULL));
    trn_image_dispose(&img);
}

static void test_usage(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_cli("beamng", &out, &err), 2);
    CHECK_CONTAINS(err, "usage: terrane beamng <import|create|export|validate|migrate>");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("beamng --help", &out, &err), 0);
    CHECK_CONTAINS(out, "validate  check a level");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("beamng frobnicate", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown sub-verb 'frobnicate'");
    free(out), free(err);
    static const char *const subs[] = {"import", "create", "export", "validate", "migrate"};
    for (size_t i = 0; i < 5; i++) {
        CHECK_EQ_INT(trn_test_run_clif("beamng %s --help", &out, &err, subs[i]), 0);
        char want[64];
        snprintf(want, sizeof want, "usage: terrane beamng %s", subs[i]);
        CHECK_CONTAINS(out, want);
        CHECK_CONTAINS(out, "examples:");
        free(out), free(err);
        CHECK_EQ_INT(trn_test_run_clif("beamng %s --bogus", &out, &err, subs[i]), 2);
        CHECK_CONTAINS(err, "unknown option '--bogus'");
        char hint[80];
        snprintf(hint, sizeof hint, "run 'terrane beamng %s --help'", subs[i]);
        CHECK_CONTAINS(err, hint);
        free(out), free(err);
    }
}

static void test_create(void)
{
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create demo --root '%s' --resolution 100 --texture-size 32", &out,
                          &err, tmp),
        0);
    CHECK_CONTAINS(err, "resolution 100 rounded up to 128");
    CHECK_CONTAINS(err, "theTerrain.ter (128 x 128)");
    free(out), free(err);
    char p[1024];
    CHECK(trn_test_exists(tmp_path(p, sizeof p, "levels/demo/theTerrain.ter")));
    CHECK(trn_test_exists(tmp_path(p, sizeof p, "levels/demo/main/items.level.json")));
    CHECK(trn_test_exists(tmp_path(p, sizeof p, "levels/demo/art/terrains/t_terrane_grass_b.png")));

    /* A second terrain in the same level gets a free name; JSON says which. */
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create demo --root '%s' --resolution 128 --texture-size 32 "
                          "--material rock --format json",
                          &out, &err, tmp),
        0);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(j));
    CHECK(j && strcmp(json_string_value(json_object_get(j, "terrain_name")), "theTerrain_1") == 0);
    CHECK(j && json_integer_value(json_object_get(j, "resolution")) == 128);
    CHECK(j && json_integer_value(json_object_get(j, "materials_added")) == 1);
    json_decref(j);
    free(out), free(err);

    CHECK_EQ_INT(
        trn_test_run_clif("beamng create big --root '%s' --resolution 9000", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "terrane beamng create: --resolution 9000 is above 8192");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create x --root '%s' --resolution lots", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--resolution expects a whole number, got 'lots'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng create a/b --root '%s'", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "has a '/'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("beamng create", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a level name");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng create x --root '%s' --max-height -5", &out, &err, tmp),
                 2);
    CHECK_CONTAINS(err, "--max-height must be positive");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create x --root '%s' --texture-size 100", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--texture-size must be a power of two");
    free(out), free(err);
    /* A power of two, but above the engine's 8192: refused by the option itself. */
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create x --root '%s' --texture-size 16384", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--texture-size must be a power of two from 1 to 8192, not 16384");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create x --root '%s' --initial-height 4000", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--initial-height 4000 is above");
    free(out), free(err);
}

static void test_validate(void)
{
    char *out, *err;
    char level[1024], p[1024];
    tmp_path(level, sizeof level, "levels/demo");
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings, 0 notes");
    free(out), free(err);

    /* A missing texture: exit 1, the check id, the file and a fix. */
    tmp_path(p, sizeof p, "levels/demo/art/terrains/t_terrane_nm_macro.png");
    char *saved = (char *)trn_test_read_file(p, NULL);
    size_t saved_n = 0;
    free(trn_test_read_file(p, &saved_n));
    CHECK(unlink(p) == 0);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 1);
    CHECK_CONTAINS(out, "error [texture-missing]");
    CHECK_CONTAINS(out, "t_terrane_nm_macro.png");
    CHECK_CONTAINS(out, "    fix: put the texture at");
    CHECK_CONTAINS(out, "1 error, 0 warnings");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --format json", &out, &err, level), 1);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(j));
    json_t *fs = j ? json_object_get(j, "findings") : NULL;
    CHECK(json_array_size(fs) == 1);
    json_t *f0 = json_array_get(fs, 0);
    CHECK(f0 && strcmp(json_string_value(json_object_get(f0, "check")), "texture-missing") == 0);
    CHECK(f0 && strcmp(json_string_value(json_object_get(f0, "severity")), "error") == 0);
    CHECK(f0 && json_string_length(json_object_get(f0, "fix")) > 0);
    CHECK(j && json_integer_value(json_object_get(j, "error_count")) == 1);
    json_decref(j);
    free(out), free(err);
    CHECK(saved && trn_test_write_file(p, saved, saved_n));
    free(saved);

    /* Warnings alone pass, unless --strict. */
    tmp_path(p, sizeof p, "levels/demo/art/terrains/materials.json");
    const char *deprecated = "{\"a\": {\"class\": \"TerrainMaterial\", \"internalName\": "
                             "\"a\", \"diffuseMap\": \"a_d\"}}";
    CHECK(trn_test_write_file(p, deprecated, strlen(deprecated)));
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures", &out, &err, level), 0);
    CHECK_CONTAINS(out, "warning [materials-deprecated-file]");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng validate '%s' --skip-textures --strict", &out, &err, level), 1);
    free(out), free(err);

    /* A .ter from the future. */
    tmp_path(p, sizeof p, "levels/demo/theTerrain.ter");
    size_t n;
    uint8_t *ter = trn_test_read_file(p, &n);
    if (ter) {
        ter[0] = 12;
        CHECK(trn_test_write_file(p, ter, n));
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' -q", &out, &err, level), 1);
        CHECK_CONTAINS(out, "error [ter-version-too-new]");
        CHECK_CONTAINS(out, "theTerrain.ter: offset 0: version 12 is newer than 9");
        free(out), free(err);
        ter[0] = 9;
        CHECK(trn_test_write_file(p, ter, n));
        free(ter);
    }

    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s/nowhere'", &out, &err, tmp), 1);
    CHECK_CONTAINS(err, "level folder not found");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("beamng validate", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a level folder");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate a b", &out, &err), 2);
    free(out), free(err);
}

static void test_import_export(void)
{
    char *out, *err;
    char hm[1024], a[1024], b[1024], holes[1024], lvl[1024], ter[1024], p[1024];
    tmp_path(hm, sizeof hm, "h.png");
    tmp_path(a, sizeof a, "a.png");
    tmp_path(b, sizeof b, "b.png");
    tmp_path(holes, sizeof holes, "holes.png");
    tmp_path(lvl, sizeof lvl, "levels/imported");
    tmp_path(ter, sizeof ter, "direct.ter");
    write_png(hm, 128, 128, 1, 16, 1);
    write_png(a, 128, 128, 1, 8, 2);
    write_png(b, 128, 128, 4, 8, 3);
    write_png(holes, 128, 128, 1, 8, 4);

    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' --level '%s' --materials grass,rock --opacity '%s' "
                          "--opacity '%s:G' --holes '%s' --texture-size 32 --max-height 600",
                          &out, &err, hm, lvl, a, b, holes),
        0);
    CHECK_CONTAINS(err, "theTerrain.ter (128 x 128)");
    CHECK_CONTAINS(err, "added 2 material(s)");
    CHECK_CONTAINS(err, "layer 1 rock");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, lvl), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings, 0 notes");
    free(out), free(err);

    /* The same import straight to a .ter is the same file. */
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --materials grass,rock --opacity '%s' "
                          "--opacity '%s:g' --holes '%s' --format json",
                          &out, &err, hm, ter, a, b, holes),
        0);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(j && json_integer_value(json_object_get(j, "resolution")) == 128);
    CHECK(j && json_array_size(json_object_get(j, "materials")) == 2);
    json_decref(j);
    free(out), free(err);
    CHECK(trn_test_same_bytes(ter, tmp_path(p, sizeof p, "levels/imported/theTerrain.ter")));

    /* Export, then import what was exported: byte-identical, also with --flip-y-axis and v7. */
    for (int flip = 0; flip < 2; flip++) {
        char maps[1024], back[1024];
        snprintf(maps, sizeof maps, "%s/maps%d", tmp, flip);
        snprintf(back, sizeof back, "%s/back%d.ter", tmp, flip);
        const char *fl = flip ? "--flip-y-axis" : "";
        CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' -o '%s' %s", &out, &err, ter, maps, fl),
                     0);
        CHECK_CONTAINS(err, "re-import with:");
        CHECK_CONTAINS(err, "--materials 'grass,rock'");
        free(out), free(err);
        CHECK_EQ_INT(trn_test_run_clif(
                         "beamng import '%s/direct_heightmap.png' --materials grass,rock "
                         "--opacity '%s/direct_opacity_0_grass.png' --opacity "
                         "'%s/direct_opacity_1_rock.png' --holes '%s/direct_holes.png' -o '%s' %s",
                         &out, &err, maps, maps, maps, maps, back, fl),
                     0);
        free(out), free(err);
        CHECK(trn_test_same_bytes(ter, back));
        /* The R16 and the layer map rebuild it as well. */
        CHECK_EQ_INT(
            trn_test_run_clif("beamng import '%s/direct.r16' --materials grass,rock --layer-map "
                              "'%s/direct_layers.png' -o '%s' %s --ter-version 7",
                              &out, &err, maps, maps, back, fl),
            0);
        free(out), free(err);
        size_t n1, n2;
        uint8_t *d1 = trn_test_read_file(ter, &n1), *d2 = trn_test_read_file(back, &n2);
        CHECK(d1 && d2 && n1 == n2 && d2[0] == 7 && memcmp(d1 + 1, d2 + 1, n1 - 1) == 0);
        free(d1);
        free(d2);
    }
    CHECK_EQ_INT(
        trn_test_run_clif("beamng export '%s' -o '%s/j' --only heightmap,r16 --format json", &out,
                          &err, ter, tmp),
        0);
    j = json_loads(out ? out : "", 0, &je);
    CHECK(j && json_array_size(json_object_get(j, "outputs")) == 2);
    json_decref(j);
    free(out), free(err);

    /* Errors. */
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' -o '%s/x'", &out, &err, hm, tmp), 1);
    CHECK_CONTAINS(err, "not a BeamNG/Torque .ter");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s/none.ter'", &out, &err, tmp), 1);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' --only heightmap,pictures", &out, &err, ter),
                 2);
    CHECK_CONTAINS(err, "--only takes heightmap, layers, holes, opacity and r16, not 'pictures'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' --compression 12", &out, &err, ter), 2);
    free(out), free(err);

    char odd[1024];
    tmp_path(odd, sizeof odd, "odd.png");
    write_png(odd, 100, 100, 1, 16, 5);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s/o.ter'", &out, &err, odd, tmp), 1);
    CHECK_CONTAINS(err, "heightmap is 100x100: BeamNG needs a square power of two between 128 "
                        "and 8192; resize it to 128x128");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --materials grass,rock --opacity '%s'",
                          &out, &err, hm, tmp, a),
        2);
    CHECK_CONTAINS(err, "1 --opacity map(s) for 2 material name(s)");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --materials grass --opacity '%s:X'",
                          &out, &err, hm, tmp, a),
        2);
    CHECK_CONTAINS(err, "--opacity channel must be R, G, B or A, not 'X'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --opacity '%s'", &out, &err,
                                   hm, tmp, a),
                 2);
    CHECK_CONTAINS(err, "give --materials with one name per opacity map");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --materials grass --opacity '%s:A'",
                          &out, &err, hm, tmp, a),
        1);
    CHECK_CONTAINS(err, "opacity map 1 has no A channel");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --materials grass --opacity '%s'", &out,
                          &err, hm, tmp, odd),
        1);
    CHECK_CONTAINS(err, "opacity map 1 is 100x100 but the heightmap is 128x128");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s/missing.png' -o '%s/o.ter'", &out, &err, tmp, tmp), 1);
    CHECK_CONTAINS(err, "missing.png: heightmap not found");
    free(out), free(err);
    char txt[1024];
    tmp_path(txt, sizeof txt, "notes.txt");
    CHECK(trn_test_write_file(txt, "hello", 5));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s/o.ter'", &out, &err, txt, tmp), 1);
    CHECK_CONTAINS(err, "heightmap is not a PNG");
    CHECK_CONTAINS(err, "not named as a headerless R16 (.r16, .raw) or R32 (.r32)");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --ter-version 10", &out, &err, hm, tmp),
        2);
    CHECK_CONTAINS(err, "--ter-version must be 7, 8 or 9, not 10");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s'", &out, &err, hm), 2);
    CHECK_CONTAINS(err, "needs somewhere to write");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import -o '%s/o.ter'", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "needs a heightmap");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --materials grass,,rock", &out,
                                   &err, hm, tmp),
                 2);
    CHECK_CONTAINS(err, "--materials has an empty entry");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --resolution 5", &out, &err, hm, tmp),
        2);
    CHECK_CONTAINS(err, "option '--resolution' does not belong to import");
    free(out), free(err);
    CHECK(!trn_test_exists(tmp_path(p, sizeof p, "o.ter")));
}

/* --byte-order for R16 and R32 heightmaps only with --max-height, through the tool. */
static void test_import_raw(void)
{
    char *out, *err;
    char r16[1024], r32[1024], ter[1024];
    const size_t samples = 128u * 128u;
    uint8_t *bytes = malloc(samples * 4);
    for (size_t i = 0; i < samples * 2; i++)
        bytes[i] = (uint8_t)(i & 1 ? 0x02 : 0x01); /* 0x0102 big-endian, 0x0201 little */
    tmp_path(r16, sizeof r16, "mac.r16");
    CHECK(trn_test_write_file(r16, bytes, samples * 2));
    tmp_path(ter, sizeof ter, "raw.ter");
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --byte-order big -q", &out, &err, r16, ter),
        0);
    free(out), free(err);
    trn_ter t;
    CHECK_OK(trn_ter_read(ter, NULL, &t, NULL, NULL, NULL));
    CHECK_EQ_INT(t.heights[0], 0x0102);
    trn_ter_dispose(&t);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --byte-order little -q", &out, &err,
                                   r16, ter),
                 0);
    free(out), free(err);
    CHECK_OK(trn_ter_read(ter, NULL, &t, NULL, NULL, NULL));
    CHECK_EQ_INT(t.heights[0], 0x0201);
    trn_ter_dispose(&t);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --byte-order middle", &out, &err, r16, ter),
        2);
    CHECK_CONTAINS(err, "--byte-order takes little or big, not 'middle'");
    free(out), free(err);

    float *f = (float *)bytes;
    for (size_t i = 0; i < samples; i++)
        f[i] = (float)(i % 100) * 5.0f; /* 0 .. 495 m */
    f[0] = 600.0f;
    tmp_path(r32, sizeof r32, "height.r32");
    CHECK(trn_test_write_file(r32, f, samples * 4));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, r32, ter), 1);
    CHECK_CONTAINS(err, "R32 heightmap holds heights in metres (0 .. 600 m)");
    CHECK_CONTAINS(err, "give the maxHeight to scale them by (--max-height M");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --max-height 512", &out, &err, r32, ter), 0);
    CHECK_CONTAINS(err, "warning: 1 of 16384 heights clamped (0 below 0 m, 1 at or above maxHeight "
                        "512 m, 0 NaN; heights 0 .. 600 m)");
    CHECK_CONTAINS(err, "heights stored for maxHeight 512");
    free(out), free(err);
    CHECK_OK(trn_ter_read(ter, NULL, &t, NULL, NULL, NULL));
    /* Nothing but NaN is no terrain: refused, no flat .ter written. */
    for (size_t i = 0; i < samples; i++)
        f[i] = NAN;
    char nan_r32[1024], nan_ter[1024];
    tmp_path(nan_r32, sizeof nan_r32, "nan.r32");
    tmp_path(nan_ter, sizeof nan_ter, "nan.ter");
    CHECK(trn_test_write_file(nan_r32, f, samples * 4));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --max-height 100", &out, &err,
                                   nan_r32, nan_ter),
                 1);
    CHECK_CONTAINS(err, "nan.r32: every one of its 16384 heights is NaN (no data)");
    CHECK(!trn_test_exists(nan_ter));
    free(out), free(err);
    /* File sample 1 (5 m) is image row 0, the terrain's last row: round(5 / 512 * 65536). */
    CHECK_EQ_INT(t.heights[127u * 128u + 1u], 640);
    CHECK_EQ_INT(t.heights[127u * 128u], 65535);
    trn_ter_dispose(&t);
    free(bytes);
}

static void test_migrate(void)
{
    char *out, *err;
    char level[1024], p[1024];
    tmp_path(level, sizeof level, "levels/old");
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create old --root '%s' --resolution 128 --texture-size 32", &out,
                          &err, tmp),
        0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng migrate '%s'", &out, &err, level), 1);
    CHECK_CONTAINS(err, "nothing to migrate: no art/terrains/materials.json, no TerrainMaterial "
                        "with only v1 fields");
    free(out), free(err);
    tmp_path(p, sizeof p, "levels/old/art/terrains/materials.json");
    const char *v1 = "{\"mud\": {\"class\": \"TerrainMaterial\", \"internalName\": \"mud\", "
                     "\"diffuseMap\": \"/levels/old/art/terrains/mud_d.png\"}}";
    CHECK(trn_test_write_file(p, v1, strlen(v1)));
    CHECK_EQ_INT(
        trn_test_run_clif("beamng migrate '%s' --texture-size 32 --delete-old", &out, &err, level),
        0);
    CHECK_CONTAINS(err, "migrated 1 material(s)");
    free(out), free(err);
    CHECK(!trn_test_exists(p));
    char *mats = (char *)trn_test_read_file(
        tmp_path(p, sizeof p, "levels/old/art/terrains/main.materials.json"), NULL);
    CHECK_CONTAINS(mats, "\"baseColorBaseTex\": \"/levels/old/art/terrains/mud_d.png\"");
    free(mats);
    CHECK_EQ_INT(trn_test_run_cli("beamng migrate", &out, &err), 2);
    free(out), free(err);
}

/* --scaffold on create, import and generate --export beamng: a level that opens and drives,
 * clean under validate; ground models from the recipe. */
static void test_scaffold(void)
{
    char *out, *err, root[700], level[800], p[1024];
    snprintf(root, sizeof root, "%s/scaf", tmp);
    CHECK_EQ_INT(trn_test_run_clif("beamng create isle --root '%s' --resolution 128 --texture-size "
                                   "8 --scaffold --format json",
                                   &out, &err, root),
                 0);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    snprintf(level, sizeof level, "%s/levels/isle", root);
    snprintf(p, sizeof p, "%s/info.json", level);
    CHECK(strcmp(json_string_value(json_object_get(j, "info_file")), p) == 0);
    snprintf(p, sizeof p, "%s/preview.png", level);
    CHECK(strcmp(json_string_value(json_object_get(j, "preview_file")), p) == 0);
    CHECK(json_integer_value(json_object_get(j, "objects_added")) == 15); /* no sea: no water */
    CHECK(json_array_size(json_object_get(j, "spawn_position")) == 3);
    CHECK(json_is_true(json_object_get(j, "spawn_dry")));
    json_decref(j);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings, 0 notes");
    free(out), free(err);
    /* The notes say what was added. */
    CHECK_EQ_INT(trn_test_run_clif("beamng create isle2 --root '%s' --resolution 128 "
                                   "--texture-size 8 --scaffold",
                                   &out, &err, root),
                 0);
    CHECK_CONTAINS(err, "scaffold: 15 object(s) and group(s) added");
    CHECK_CONTAINS(err, "scaffold: spawn point at (-1.000, -1.000, 512.500)");
    CHECK_CONTAINS(err, "scaffold: wrote");
    free(out), free(err);

    /* import --scaffold into the created level: the block is replaced in place, nothing is
     * added twice; without --level it is a usage error. */
    char hm[700];
    write_png(tmp_path(hm, sizeof hm, "scaf_h.png"), 128, 128, 1, 16, 3);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --scaffold --texture-size 8 "
                                   "--format json",
                                   &out, &err, hm, level),
                 0);
    j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_true(json_object_get(j, "block_replaced")));
    CHECK(json_integer_value(json_object_get(j, "objects_added")) == 0);
    CHECK(json_object_get(j, "spawn_position") == NULL);
    json_decref(j);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s/x.ter' --scaffold", &out, &err, hm, tmp), 2);
    CHECK_CONTAINS(err, "--scaffold builds a level around the terrain: give --level");
    free(out), free(err);

    /* generate: a recipe with a sea level and a biome's ground model. */
    char recipe[700];
    tmp_path(recipe, sizeof recipe, "scaf_recipe.json");
    static const char text[] =
        "{\"size\": [254, 254], \"resolution\": [127, 127], \"seed\": 3, \"sea_level\": 12,\n"
        " \"default_landform\": \"hills\",\n"
        " \"landforms\": {\"hills\": {\"height_variation\": 60, \"feature_size\": 120}},\n"
        " \"default_biome\": \"meadow\",\n"
        " \"biomes\": {\"meadow\": {\"color\": [0.3, 0.6, 0.3, 1]},\n"
        "            \"bare\": {\"color\": [0.5, 0.4, 0.3, 1], \"groundmodel\": \"rock\"}},\n"
        " \"rules\": [{\"id\": \"high\", \"biome\": \"bare\", \"elevation\": [30, 1000]}]}\n";
    CHECK(trn_test_write_file(recipe, text, strlen(text)));
    snprintf(level, sizeof level, "%s/levels/gen", root);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export 'beamng:%s' --texture-size 8 --scaffold",
                                   &out, &err, recipe, level),
                 0);
    CHECK_CONTAINS(err, "0 error(s), 0 warning(s)");
    CHECK_CONTAINS(err, "scaffold: spawn point at");
    free(out), free(err);
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    char *mats = (char *)trn_test_read_file(p, NULL);
    CHECK_CONTAINS(mats, "\"internalName\": \"bare\",");
    CHECK_CONTAINS(mats, "\"groundmodelName\": \"ROCK\"");
    CHECK_CONTAINS(mats, "\"groundmodelName\": \"GRASS\"");
    free(mats);
    snprintf(p, sizeof p, "%s/main/MissionGroup/Water/items.level.json", level);
    char *water = (char *)trn_test_read_file(p, NULL);
    CHECK_CONTAINS(water, "\"class\":\"WaterPlane\"");
    CHECK_CONTAINS(water, "\"position\":[0,0,12]");
    free(water);
    snprintf(p, sizeof p, "%s/main/MissionGroup/PlayerDropPoints/items.level.json", level);
    char *spawn = (char *)trn_test_read_file(p, NULL);
    const char *pos = spawn ? strstr(spawn, "\"position\":[") : NULL;
    double x = 0, y = 0, z = 0;
    CHECK(pos && sscanf(pos, "\"position\":[%lf,%lf,%lf]", &x, &y, &z) == 3 && z >= 12.5);
    free(spawn);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --preview '%s/x.png' --scaffold", &out, &err, recipe, tmp),
        2);
    CHECK_CONTAINS(err, "--scaffold builds a BeamNG level");
    free(out), free(err);
}

/* ------------------------------------------------------------------------------------------
 * Editor-saved levels: what import keeps, and every fix validate recommends, run.
 * ---------------------------------------------------------------------------------------- */

/* A level as the World Editor leaves one that was never upgraded to v1.5 (the form of levels
 * modders publish): the TerrainBlock names terrain2.ter, sits at [-2048, -2048, 2.6] with
 * maxHeight 208 and squareSize 16, has no materialTextureSet, and its materials are v1 ones in
 * art/terrains/main.materials.json, keyed NAME-<persistentId>. A theTerrain.terrain.json left
 * from an older terrain lies beside it. */
static void make_v1_level(const char *name, char *level, size_t n)
{
    char *out, *err, p[1200];
    CHECK_EQ_INT(trn_test_run_clif("beamng create %s --root '%s' --resolution 256 --terrain-name "
                                   "terrain2 --texture-size 32 -q",
                                   &out, &err, name, tmp),
                 0);
    free(out), free(err);
    snprintf(level, n, "%s/levels/%s", tmp, name);
    snprintf(p, sizeof p, "%s/main/items.level.json", level);
    const char *root_items = "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"persistentId\":"
                             "\"6b1b8fb0-6cf5-4d5c-9a3e-1c8f0e4b9a10\",\"enabled\":\"1\"}\n";
    CHECK(trn_test_write_file(p, root_items, strlen(root_items)));
    char text[2400];
    snprintf(text, sizeof text,
             "{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":"
             "\"129afdcb-1f25-4978-a8c3-f57c47a185c0\",\"__parent\":\"MissionGroup\","
             "\"position\":[-2048,-2048,2.6],\"baseTexSize\":1024,\"maxHeight\":208,"
             "\"squareSize\":16,\"terrainFile\":\"/levels/%s/terrain2.ter\"}\n",
             name);
    snprintf(p, sizeof p, "%s/main/MissionGroup/items.level.json", level);
    CHECK(trn_test_write_file(p, text, strlen(text)));
    snprintf(text, sizeof text,
             "{\n  \"Grass-a8517239-7693-4a46-9981-777a7969a536\": {\n"
             "    \"internalName\": \"grass\",\n    \"class\": \"TerrainMaterial\",\n"
             "    \"persistentId\": \"a8517239-7693-4a46-9981-777a7969a536\",\n"
             "    \"detailDistance\": 80,\n"
             "    \"detailMap\": \"/levels/%s/art/terrains/t_terrane_grey_detail.png\",\n"
             "    \"detailStrength\": 0.600000024,\n"
             "    \"diffuseMap\": \"/levels/%s/art/terrains/t_terrane_grass_b.png\",\n"
             "    \"diffuseSize\": 150,\n    \"groundmodelName\": \"GRASS\",\n"
             "    \"normalMap\": \"/levels/%s/art/terrains/t_terrane_nm_detail.png\"\n  }\n}\n",
             name, name, name);
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    CHECK(trn_test_write_file(p, text, strlen(text)));
    snprintf(text, sizeof text,
             "{\n  \"version\": 9,\n  \"datafile\": \"/levels/%s/theTerrain.ter\",\n"
             "  \"size\": 1024\n}\n",
             name);
    snprintf(p, sizeof p, "%s/theTerrain.terrain.json", level);
    CHECK(trn_test_write_file(p, text, strlen(text)));
}

static json_t *validate_json(const char *level)
{
    char *out, *err;
    trn_test_run_clif("beamng validate '%s' --format json", &out, &err, level);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    free(out), free(err);
    json_t *findings = json_is_object(j) ? json_object_get(j, "findings") : j;
    json_incref(findings);
    json_decref(j);
    return findings;
}

static bool has_check(const json_t *findings, const char *check)
{
    size_t i;
    const json_t *f;
    json_array_foreach(findings, i, f)
    {
        const char *c = json_string_value(json_object_get(f, "check"));
        if (c && strcmp(c, check) == 0) return true;
    }
    return false;
}

static size_t count_severity(const json_t *findings, const char *severity)
{
    size_t i, n = 0;
    const json_t *f;
    json_array_foreach(findings, i, f)
    {
        const char *s = json_string_value(json_object_get(f, "severity"));
        n += s && strcmp(s, severity) == 0;
    }
    return n;
}

/* The heightmap put in for HEIGHTMAP in a fix (a 256 x 256 16-bit PNG). */
static char fix_heightmap[1024];

/* Run every terrane command that validate's fixes recommend for level (LEVEL_DIR put in), one
 * finding at a time, and check that each works and makes its finding go away. Returns how
 * many were run. */
static int run_recommended_fixes(const char *level)
{
    int ran = 0;
    for (int round = 0; round < 8; round++) {
        json_t *findings = validate_json(level);
        CHECK(json_is_array(findings));
        size_t i;
        const json_t *f;
        char cmd[1600] = "", check[64] = "";
        json_array_foreach(findings, i, f)
        {
            const char *fix = json_string_value(json_object_get(f, "fix"));
            const char *at = fix ? strstr(fix, "terrane ") : NULL;
            if (!at || cmd[0]) continue;
            at += strlen("terrane ");
            size_t len = strcspn(at, ",()");
            while (len && (at[len - 1] == ' ' || at[len - 1] == '.'))
                len--;
            char raw[600];
            snprintf(raw, sizeof raw, "%.*s", (int)len, at);
            /* A heightmap the fix leaves to the user: the test's own. */
            char *hmp = strstr(raw, "HEIGHTMAP");
            if (hmp) {
                char rest[600];
                snprintf(rest, sizeof rest, "%s", hmp + strlen("HEIGHTMAP"));
                snprintf(hmp, sizeof raw - (size_t)(hmp - raw), "'%s'%s", fix_heightmap, rest);
            }
            char *ld = strstr(raw, "LEVEL_DIR");
            CHECK(ld != NULL);
            if (!ld) continue;
            *ld = '\0';
            snprintf(cmd, sizeof cmd, "%s'%s'%s", raw, level, ld + strlen("LEVEL_DIR"));
            snprintf(check, sizeof check, "%s", json_string_value(json_object_get(f, "check")));
        }
        json_decref(findings);
        if (!cmd[0]) break;
        char *out, *err;
        int rc = trn_test_run_clif("%s --texture-size 32", &out, &err, cmd);
        if (strstr(cmd, "--fix-terrain-json")) {
            free(out), free(err);
            rc = trn_test_run_clif("%s", &out, &err, cmd);
        }
        CHECK_EQ_INT(rc, 0);
        if (rc != 0) fprintf(stderr, "fix for %s: terrane %s\n%s\n", check, cmd, err);
        free(out), free(err);
        ran++;
        findings = validate_json(level);
        CHECK(!has_check(findings, check));
        json_decref(findings);
        if (rc != 0) break;
    }
    return ran;
}

static void test_editor_v1_level(void)
{
    char level[1024], p[1200], hm[1024];
    tmp_path(hm, sizeof hm, "v1_height.png");
    write_png(hm, 256, 256, 1, 16, 5);

    /* The pristine level: validate recommends migrate, and migrate works. */
    make_v1_level("v1pristine", level, sizeof level);
    json_t *findings = validate_json(level);
    CHECK(has_check(findings, "terrain-v1-materials"));
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    json_decref(findings);
    CHECK(run_recommended_fixes(level) >= 1);
    findings = validate_json(level);
    CHECK_EQ_INT(json_array_size(findings), 0);
    json_decref(findings);
    char *mats = (char *)trn_test_read_file(
        (snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level), p), NULL);
    /* Upgraded where it was: the editor's key and persistentId kept, the diffuse map now the
     * base colour. */
    CHECK_CONTAINS(mats, "\"Grass-a8517239-7693-4a46-9981-777a7969a536\": {");
    CHECK_CONTAINS(
        mats, "\"baseColorBaseTex\": \"/levels/v1pristine/art/terrains/t_terrane_grass_b.png\"");
    CHECK(mats && !strstr(mats, "diffuseMap"));
    free(mats);

    /* Import into the level: it stays v1, its TerrainBlock keeps its file, place and scale. */
    make_v1_level("v1import", level, sizeof level);
    snprintf(p, sizeof p, "%s/theTerrain.terrain.json", level);
    char *stale = (char *)trn_test_read_file(p, NULL);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --materials grass,rock "
                                   "--texture-size 32",
                                   &out, &err, hm, level),
                 0);
    CHECK_CONTAINS(err, "terrain2.ter (256 x 256)");
    CHECK_CONTAINS(err, "v1 materials: no texture set");
    CHECK(err && !strstr(err, "changed:"));
    free(out), free(err);
    char *now = (char *)trn_test_read_file(p, NULL);
    CHECK(stale && now && strcmp(stale, now) == 0);
    free(stale), free(now);
    snprintf(p, sizeof p, "%s/theTerrain.ter", level);
    CHECK(!trn_test_exists(p));
    snprintf(p, sizeof p, "%s/main/MissionGroup/items.level.json", level);
    char *items = (char *)trn_test_read_file(p, NULL);
    CHECK(items &&
          strcmp(items,
                 "{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":"
                 "\"129afdcb-1f25-4978-a8c3-f57c47a185c0\",\"__parent\":\"MissionGroup\","
                 "\"position\":[-2048,-2048,2.6],\"baseTexSize\":1024,\"maxHeight\":208,"
                 "\"squareSize\":16,\"terrainFile\":\"/levels/v1import/terrain2.ter\"}\n") == 0);
    free(items);
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    mats = (char *)trn_test_read_file(p, NULL);
    CHECK_CONTAINS(mats, "\"diffuseMap\": \"/levels/v1import/art/terrains/t_terrane_rock_b.png\"");
    CHECK(mats && !strstr(mats, "TerrainMaterialTextureSet") && !strstr(mats, "baseColorBaseTex"));
    free(mats);
    findings = validate_json(level);
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    CHECK(has_check(findings, "terrain-v1-materials"));
    json_decref(findings);
    CHECK(run_recommended_fixes(level) >= 1);
    findings = validate_json(level);
    CHECK_EQ_INT(json_array_size(findings), 0);
    json_decref(findings);

    /* An R32 heightmap in metres needs no --max-height here: the kept block's 208 m scales
     * it, so 104 m is stored 32768. */
    char r32[1024];
    tmp_path(r32, sizeof r32, "v1_height.r32");
    float *metres = malloc(256 * 256 * sizeof *metres);
    for (size_t i = 0; i < 256 * 256; i++)
        metres[i] = 104.0f;
    CHECK(trn_test_write_file(r32, metres, 256 * 256 * sizeof *metres));
    free(metres);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --texture-size 32", &out, &err,
                                   r32, level),
                 0);
    CHECK(err && !strstr(err, "changed:"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s/terrain2.ter' --format json", &out, &err, level), 0);
    CHECK_CONTAINS(out, "32768");
    free(out), free(err);

    /* Asked to change things: each change is printed, in text and JSON. */
    make_v1_level("v1change", level, sizeof level);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --max-height 500 --center "
                                   "--material-version 1.5 --texture-size 32 --format json",
                                   &out, &err, hm, level),
                 0);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    json_t *changes = json_object_get(j, "changes");
    CHECK(json_is_array(changes) && json_array_size(changes) == 3);
    CHECK(strcmp(json_string_value(json_array_get(changes, 0)), "maxHeight 208 -> 500") == 0);
    CHECK_CONTAINS(json_string_value(json_array_get(changes, 1)), "upgraded 1 v1 material(s)");
    CHECK_CONTAINS(json_string_value(json_array_get(changes, 2)), "materialTextureSet set to");
    CHECK(strcmp(json_string_value(json_object_get(j, "material_version")), "1.5") == 0);
    json_decref(j);
    free(out), free(err);
    findings = validate_json(level);
    CHECK_EQ_INT(json_array_size(findings), 0);
    json_decref(findings);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --square-size 2 --center "
                                   "--texture-size 32",
                                   &out, &err, hm, level),
                 0);
    CHECK_CONTAINS(err, "changed: squareSize 16 -> 2");
    CHECK_CONTAINS(err, "changed: position [-2048, -2048, 2.6] -> [-256, -256, 2.6]");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --material-version 2", &out,
                                   &err, hm, level),
                 2);
    CHECK_CONTAINS(err, "--material-version takes 1 or 1.5, not '2'");
    free(out), free(err);

    /* No TerrainBlock yet, but v1 materials only and no texture set: the new block is v1 too.
     * Two blocks, neither theTerrain: import asks which. */
    make_v1_level("v1noblock", level, sizeof level);
    snprintf(p, sizeof p, "%s/main/MissionGroup/items.level.json", level);
    CHECK(unlink(p) == 0);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --texture-size 32 --format "
                                   "json",
                                   &out, &err, hm, level),
                 0);
    j = json_loads(out ? out : "", 0, &je);
    CHECK(strcmp(json_string_value(json_object_get(j, "material_version")), "1") == 0);
    CHECK(json_is_false(json_object_get(j, "block_replaced")));
    json_decref(j);
    free(out), free(err);
    items = (char *)trn_test_read_file(p, NULL);
    CHECK_CONTAINS(items, "\"terrainFile\":\"/levels/v1noblock/theTerrain.ter\"");
    CHECK(items && !strstr(items, "materialTextureSet"));
    free(items);
    const char *two = "{\"name\":\"north\",\"class\":\"TerrainBlock\",\"terrainFile\":"
                      "\"/levels/v1noblock/a.ter\"}\n{\"name\":\"south\",\"class\":"
                      "\"TerrainBlock\",\"terrainFile\":\"/levels/v1noblock/b.ter\"}\n";
    CHECK(trn_test_write_file(p, two, strlen(two)));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s'", &out, &err, hm, level), 1);
    CHECK_CONTAINS(err, "the level has 2 TerrainBlocks (\"north\", \"south\") and none is called "
                        "theTerrain: name the one to write (--name)");
    free(out), free(err);

    /* A .terrain.json that describes another .ter is replaced, and it is said. */
    make_v1_level("v1stale", level, sizeof level);
    snprintf(p, sizeof p, "%s/main/MissionGroup/items.level.json", level);
    items = (char *)trn_test_read_file(p, NULL);
    char *at = items ? strstr(items, "terrain2.ter") : NULL;
    if (at) memcpy(at, "theTerra.ter", 12); /* the block now names theTerra.ter */
    CHECK(items && trn_test_write_file(p, items, strlen(items)));
    free(items);
    snprintf(p, sizeof p, "%s/theTerra.terrain.json", level);
    const char *other = "{\"version\": 9, \"datafile\": \"/levels/v1stale/old.ter\", \"size\": 8}";
    CHECK(trn_test_write_file(p, other, strlen(other)));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --texture-size 32", &out, &err,
                                   hm, level),
                 0);
    CHECK_CONTAINS(err, "changed: replaced theTerra.terrain.json, which described "
                        "/levels/v1stale/old.ter, not /levels/v1stale/theTerra.ter");
    free(out), free(err);
}

/* Each fix validate recommends, run on the case it was recommended for: a deprecated
 * materials.json, a v1-only material beside v1.5 ones, a missing .terrain.json. */
static void test_validate_fixes_work(void)
{
    char level[1024], p[1200];
    char *out, *err;
    tmp_path(fix_heightmap, sizeof fix_heightmap, "fix_block_height.png");
    write_png(fix_heightmap, 256, 256, 1, 16, 3);
    CHECK_EQ_INT(trn_test_run_clif("beamng create fixes --root '%s' --resolution 128 "
                                   "--texture-size 32 -q",
                                   &out, &err, tmp),
                 0);
    free(out), free(err);
    tmp_path(level, sizeof level, "levels/fixes");
    /* A v1-only material in main.materials.json of a v1.5 level (material-v1-only). */
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    char *mats = (char *)trn_test_read_file(p, NULL);
    CHECK(mats != NULL);
    if (mats) {
        const char *v1 =
            ",\n  \"mud\": {\"class\": \"TerrainMaterial\", \"internalName\": "
            "\"mud\", \"diffuseMap\": \"/levels/fixes/art/terrains/t_terrane_grass_b.png\"}\n}\n";
        char *end = strrchr(mats, '}');
        *end = '\0';
        while (end > mats && (end[-1] == '\n' || end[-1] == ' '))
            *--end = '\0';
        char *text = malloc(strlen(mats) + strlen(v1) + 1);
        strcpy(text, mats);
        strcat(text, v1);
        CHECK(trn_test_write_file(p, text, strlen(text)));
        free(text);
        free(mats);
    }
    /* A .ter that uses it, so the finding is an error. */
    char hm[1024];
    tmp_path(hm, sizeof hm, "fix_height.png");
    write_png(hm, 128, 128, 1, 16, 9);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s' --materials theTerrain_mud "
                                   "--texture-size 32 -q",
                                   &out, &err, hm, level),
                 0);
    free(out), free(err);
    /* A deprecated materials.json (materials-deprecated-file) and a missing .terrain.json. */
    snprintf(p, sizeof p, "%s/art/terrains/materials.json", level);
    const char *old = "{\"clay\": {\"class\": \"TerrainMaterial\", \"internalName\": \"clay\", "
                      "\"diffuseMap\": \"/levels/fixes/art/terrains/t_terrane_grass_b.png\"}}";
    CHECK(trn_test_write_file(p, old, strlen(old)));
    snprintf(p, sizeof p, "%s/theTerrain.terrain.json", level);
    CHECK(unlink(p) == 0);
    json_t *findings = validate_json(level);
    CHECK(has_check(findings, "material-v1-only"));
    CHECK(has_check(findings, "materials-deprecated-file"));
    CHECK(has_check(findings, "terrain-json-missing"));
    json_decref(findings);
    CHECK(run_recommended_fixes(level) >= 2);
    findings = validate_json(level);
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    CHECK(!has_check(findings, "material-v1-only"));
    CHECK(!has_check(findings, "terrain-json-missing"));
    json_decref(findings);

    /* A level without a terrain: the import the fix names, with a heightmap, adds one. */
    tmp_path(level, sizeof level, "levels/noblock");
    mkdir(level, 0755);
    snprintf(p, sizeof p, "%s/main", level);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/main/items.level.json", level);
    const char *mg = "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"enabled\":\"1\"}\n";
    CHECK(trn_test_write_file(p, mg, strlen(mg)));
    findings = validate_json(level);
    CHECK(has_check(findings, "terrain-block-missing"));
    json_decref(findings);
    CHECK(run_recommended_fixes(level) >= 1);
    findings = validate_json(level);
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    json_decref(findings);

    /* A legacy terrain: the convert the fix names writes a version-9 copy, which is moved over
     * the old file, as the fix says. A version-1 file: 256 x 256 heights, material groups,
     * eight names. */
    CHECK_EQ_INT(trn_test_run_clif("beamng create legacy --root '%s' --resolution 256 "
                                   "--texture-size 32 -q",
                                   &out, &err, tmp),
                 0);
    free(out), free(err);
    tmp_path(level, sizeof level, "levels/legacy");
    size_t n = 1 + 2 * 65536 + 65536 + 6 + 7;
    uint8_t *legacy = calloc(n, 1);
    legacy[0] = 1;
    for (size_t i = 0; i < 65536; i++)
        legacy[1 + 2 * i + 1] = (uint8_t)(i >> 10); /* a slope, stored high bytes */
    memcpy(legacy + 1 + 3 * 65536, "\x05grass", 6);
    snprintf(p, sizeof p, "%s/theTerrain.ter", level);
    CHECK(trn_test_write_file(p, legacy, n));
    free(legacy);
    findings = validate_json(level);
    CHECK(has_check(findings, "ter-version-old"));
    char cmd[2400] = "";
    size_t i;
    const json_t *f;
    json_array_foreach(findings, i, f)
    {
        const char *fix = json_string_value(json_object_get(f, "fix"));
        const char *c = json_string_value(json_object_get(f, "check"));
        const char *at =
            fix && c && strcmp(c, "ter-version-old") == 0 ? strstr(fix, "terrane convert ") : NULL;
        if (at) snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(at + 8, ","), at + 8);
    }
    json_decref(findings);
    CHECK(cmd[0] != '\0');
    char copy[1300];
    snprintf(copy, sizeof copy, "%s/theTerrain_v9.ter", level);
    CHECK_CONTAINS(cmd, copy);
    CHECK_EQ_INT(trn_test_run_clif("%s", &out, &err, cmd), 0);
    free(out), free(err);
    CHECK(rename(copy, p) == 0);
    findings = validate_json(level);
    CHECK(!has_check(findings, "ter-version-old"));
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    json_decref(findings);

    /* Extra maps after the layer map (the community notes' layout): the export the fix names,
     * then the import it prints, writing over the level's .ter as the fix says. */
    size_t ter_size = 0;
    uint8_t *ter = trn_test_read_file(p, &ter_size);
    CHECK(ter && ter_size == 5 + 3 * 65536 + 4 + 6);
    if (ter && ter_size == 5 + 3 * 65536 + 4 + 6) {
        uint8_t *extra = calloc(ter_size + 65536, 1);
        memcpy(extra, ter, 5 + 3 * 65536);
        memcpy(extra + 5 + 4 * 65536, ter + 5 + 3 * 65536, 4 + 6);
        CHECK(trn_test_write_file(p, extra, ter_size + 65536));
        free(extra);
    }
    free(ter);
    findings = validate_json(level);
    CHECK(has_check(findings, "ter-extra-maps"));
    cmd[0] = '\0';
    json_array_foreach(findings, i, f)
    {
        const char *fix = json_string_value(json_object_get(f, "fix"));
        const char *c = json_string_value(json_object_get(f, "check"));
        const char *at = fix && c && strcmp(c, "ter-extra-maps") == 0
                             ? strstr(fix, "terrane beamng export ")
                             : NULL;
        if (at) snprintf(cmd, sizeof cmd, "%.*s", (int)strcspn(at + 8, ","), at + 8);
    }
    json_decref(findings);
    CHECK_EQ_INT(trn_test_run_clif("%s", &out, &err, cmd), 0);
    char *imp = err ? strstr(err, "terrane beamng import ") : NULL;
    char *end = imp ? strstr(imp, " -o OUT.ter") : NULL;
    CHECK(end != NULL);
    char import_cmd[3000] = "";
    if (end) snprintf(import_cmd, sizeof import_cmd, "%.*s", (int)(end - imp - 8), imp + 8);
    free(out), free(err);
    if (import_cmd[0]) {
        CHECK_EQ_INT(trn_test_run_clif("%s -o '%s'", &out, &err, import_cmd, p), 0);
        free(out), free(err);
    }
    findings = validate_json(level);
    CHECK(!has_check(findings, "ter-extra-maps"));
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    json_decref(findings);

    /* The .ter's materials gone from main.materials.json (material-unresolved): the export the
     * fix names, then the import it prints, into the level as the fix says, adds placeholders. */
    char mats_path[1400];
    snprintf(mats_path, sizeof mats_path, "%s/art/terrains/main.materials.json", level);
    json_t *doc = json_load_file(mats_path, 0, NULL);
    CHECK(json_is_object(doc));
    const char *key;
    json_t *value;
    void *next_key;
    int removed = 0;
    json_object_foreach_safe(doc, next_key, key, value)
    {
        const char *cls = json_string_value(json_object_get(value, "class"));
        if (cls && strcmp(cls, "TerrainMaterial") == 0) {
            json_object_del(doc, key);
            removed++;
        }
    }
    CHECK(removed >= 1);
    CHECK_EQ_INT(json_dump_file(doc, mats_path, JSON_INDENT(2)), 0);
    json_decref(doc);
    findings = validate_json(level);
    CHECK(has_check(findings, "material-unresolved"));
    cmd[0] = '\0';
    json_array_foreach(findings, i, f)
    {
        const char *fix = json_string_value(json_object_get(f, "fix"));
        const char *c = json_string_value(json_object_get(f, "check"));
        const char *at = fix && c && strcmp(c, "material-unresolved") == 0
                             ? strstr(fix, "terrane beamng export ")
                             : NULL;
        const char *maps = at ? strstr(at, " -o MAPS_DIR prints") : NULL;
        CHECK(!at || maps);
        if (at && maps)
            snprintf(cmd, sizeof cmd, "%.*s -o '%s/unresolved_maps'", (int)(maps - at - 8), at + 8,
                     tmp);
    }
    json_decref(findings);
    CHECK(cmd[0] != '\0');
    CHECK_EQ_INT(trn_test_run_clif("%s", &out, &err, cmd), 0);
    imp = err ? strstr(err, "terrane beamng import ") : NULL;
    end = imp ? strstr(imp, " -o OUT.ter") : NULL;
    CHECK(end != NULL);
    import_cmd[0] = '\0';
    if (end) snprintf(import_cmd, sizeof import_cmd, "%.*s", (int)(end - imp - 8), imp + 8);
    free(out), free(err);
    if (import_cmd[0]) {
        CHECK_EQ_INT(trn_test_run_clif("%s --level '%s' --texture-size 32", &out, &err, import_cmd,
                                       level),
                     0);
        CHECK_CONTAINS(err, "added ");
        free(out), free(err);
    }
    findings = validate_json(level);
    CHECK(!has_check(findings, "material-unresolved"));
    CHECK_EQ_INT(count_severity(findings, "error"), 0);
    json_decref(findings);
}

/* Editor-saved levels held in ../shared/testdata/real/beamng_levels (one levels/NAME folder
 * each, as the game keeps them): importing into a copy keeps the TerrainBlock's file, place,
 * scale and material version, adds no error, and every fix validate then recommends works. */
static void test_real_levels(void)
{
    char base[1024];
    if (!trn_test_real_path("beamng_levels", base, sizeof base)) {
        fprintf(stderr, "skip test_real_levels: ../shared/testdata/real/beamng_levels is absent\n");
        return;
    }
    char hm[1024];
    tmp_path(hm, sizeof hm, "real_height.png");
    write_png(hm, 256, 256, 1, 16, 11);
    DIR *d = opendir(base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strchr(e->d_name, '\'')) continue;
        char level[1400], cmd[5000];
        snprintf(level, sizeof level, "%s/real/levels/%s", tmp, e->d_name);
        snprintf(cmd, sizeof cmd, "mkdir -p '%s/real/levels' && cp -R '%s/%s' '%s'", tmp, base,
                 e->d_name, level);
        CHECK_EQ_INT(system(cmd), 0);
        trn_terrain_block *before = NULL, *after = NULL;
        size_t nb = 0, na = 0;
        trn_findings problems = {0};
        CHECK_OK(trn_level_find_terrain_blocks(level, &before, &nb, &problems, NULL));
        json_t *findings = validate_json(level);
        size_t errors_before = count_severity(findings, "error");
        json_decref(findings);
        char *out, *err;
        int rc = trn_test_run_clif("beamng import '%s' --level '%s' --texture-size 32 -q", &out,
                                   &err, hm, level);
        CHECK_EQ_INT(rc, nb > 1 ? rc : 0); /* several blocks, none theTerrain: --name asked */
        free(out), free(err);
        CHECK_OK(trn_level_find_terrain_blocks(level, &after, &na, &problems, NULL));
        CHECK_EQ_INT(na, nb ? nb : 1);
        for (size_t i = 0; rc == 0 && nb && i < nb && i < na; i++) {
            CHECK(strcmp(before[i].terrain_file, after[i].terrain_file) == 0);
            CHECK(before[i].max_height == after[i].max_height);
            CHECK(before[i].square_size == after[i].square_size);
            CHECK(memcmp(before[i].position, after[i].position, sizeof before[i].position) == 0);
            CHECK(!before[i].material_texture_set == !after[i].material_texture_set);
        }
        trn_terrain_blocks_free(before, nb);
        trn_terrain_blocks_free(after, na);
        trn_findings_dispose(&problems);
        findings = validate_json(level);
        CHECK(count_severity(findings, "error") <= errors_before);
        json_decref(findings);
        run_recommended_fixes(level);
    }
    if (d) closedir(d);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_usage);
    RUN(test_create);
    RUN(test_validate);
    RUN(test_import_export);
    RUN(test_import_raw);
    RUN(test_migrate);
    RUN(test_scaffold);
    RUN(test_editor_v1_level);
    RUN(test_validate_fixes_work);
    RUN(test_real_levels);
    return trn_test_finish();
}
