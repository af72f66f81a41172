/* Command-line tests for terrane beamng import/create/export/validate/migrate: exit codes,
 * messages, JSON output and an export/import round trip through the tool. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terrane/beamng.h"
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
    CHECK_CONTAINS(err, "no deprecated materials.json to migrate");
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
    CHECK(json_integer_value(json_object_get(j, "objects_added")) == 11); /* no sea: no water */
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
    CHECK_CONTAINS(err, "scaffold: 11 object(s) and group(s) added");
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
    return trn_test_finish();
}
