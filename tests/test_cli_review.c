/* Command-line review tests: what a modder hits with bad input (folders for files, empty files,
 * outputs equal to inputs, maps of the wrong kind, folders that are not levels). */
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

static size_t count_of(const char *haystack, const char *needle)
{
    size_t n = 0;
    for (const char *p = haystack; p && (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* A w x h image whose pixel (x, y), channel c holds fn(x, y, c). */
typedef unsigned (*pixel_fn)(uint32_t x, uint32_t y, unsigned c);

static void write_png_fn(const char *path, uint32_t w, uint32_t h, uint8_t channels, uint8_t depth,
                         pixel_fn fn)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, w, h, channels, depth, NULL));
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (unsigned c = 0; c < channels; c++) {
                size_t i = ((size_t)y * w + x) * channels + c;
                if (depth == 16)
                    ((uint16_t *)img.data)[i] = (uint16_t)fn(x, y, c);
                else
                    ((uint8_t *)img.data)[i] = (uint8_t)fn(x, y, c);
            }
    trn_png_options po;
    trn_png_options_default(&po);
    CHECK_OK(trn_png_write(path, &img, &po, NULL, NULL, NULL));
    trn_image_dispose(&img);
}

static unsigned ramp16(uint32_t x, uint32_t y, unsigned c)
{
    (void)c;
    return 1000u + x * 200u + y;
}

/* White square (holes) at x 10..19, y 5..9; grey stored as RGB(A), alpha opaque. */
static unsigned holes_grey_rgb(uint32_t x, uint32_t y, unsigned c)
{
    if (c == 3) return 255;
    return (x >= 10 && x < 20 && y >= 5 && y < 10) ? 255 : 0;
}

/* Red where holes were meant, other channels 0: a colour picture, not a mask. */
static unsigned holes_red(uint32_t x, uint32_t y, unsigned c)
{
    if (x == 7 && y == 3) return c == 0 ? 255 : 0;
    return 0;
}

/* Holes painted as transparency: RGB black, alpha 0 at (4, 6). */
static unsigned holes_alpha(uint32_t x, uint32_t y, unsigned c)
{
    if (c == 3) return (x == 4 && y == 6) ? 0 : 255;
    return 0;
}

/* Layer indices 0/1 with one stray 7 at (12, 34) and 255 (hole) at (0, 0). */
static unsigned layers_bad(uint32_t x, uint32_t y, unsigned c)
{
    (void)c;
    if (x == 12 && y == 34) return 7;
    if (x == 0 && y == 0) return 255;
    return (x + y) & 1u;
}

static unsigned layers_good(uint32_t x, uint32_t y, unsigned c)
{
    (void)c;
    if (x == 0 && y == 0) return 255;
    return (x + y) & 1u;
}

static char hm[1024];

/* ------------------------------------------------------------------------------------------ */

static void test_validate_not_a_level(void)
{
    char *out, *err;
    char p[1024], d[1024];
    /* A folder with unrelated things in it, deep down a broken materials file. */
    tmp_path(d, sizeof d, "stuff");
    CHECK(mkdir(d, 0755) == 0);
    tmp_path(p, sizeof p, "stuff/deep");
    CHECK(mkdir(p, 0755) == 0);
    tmp_path(p, sizeof p, "stuff/deep/materials.json");
    CHECK(trn_test_write_file(p, "{ broken", 8));
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, d), 1);
    CHECK_CONTAINS(err, "does not look like a BeamNG level");
    CHECK_CONTAINS(err, "stuff");
    CHECK_CONTAINS(err, "expected main/");
    CHECK(!strstr(out ? out : "", "materials-invalid"));
    CHECK(!strstr(err ? err : "", "deep/materials.json"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --format json", &out, &err, d), 1);
    /* stdout answers with the error object, stderr with the message. */
    CHECK_CONTAINS(out, "\"error\": {");
    CHECK_CONTAINS(out, "does not look like a BeamNG level");
    CHECK_CONTAINS(err, "does not look like a BeamNG level");
    free(out), free(err);

    /* A game folder (holds levels/) and the levels/ folder itself name the levels inside. */
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng create alpha --root '%s/game' --resolution 128 --texture-size 8 -q",
                     &out, &err, tmp),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s/game'", &out, &err, tmp), 1);
    CHECK_CONTAINS(err, "does not look like a BeamNG level");
    CHECK_CONTAINS(err, "levels/alpha");
    CHECK(!strstr(out ? out : "", "0 errors"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s/game/levels'", &out, &err, tmp), 1);
    CHECK_CONTAINS(err, "levels/alpha");
    free(out), free(err);
    /* The level itself is fine. */
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s/game/levels/alpha'", &out, &err, tmp), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings, 0 notes");
    free(out), free(err);

    /* A file is not a folder. */
    CHECK_EQ_INT(
        trn_test_run_clif("beamng validate '%s/game/levels/alpha/theTerrain.ter'", &out, &err, tmp),
        1);
    CHECK_CONTAINS(err, "theTerrain.ter: is a file, not a level folder");
    free(out), free(err);
}

static void test_validate_messages(void)
{
    char *out, *err;
    char level[700], p[1024];
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng create beta --root '%s/game' --resolution 128 --texture-size 8 -q",
                     &out, &err, tmp),
                 0);
    free(out), free(err);
    snprintf(level, sizeof level, "%s/game/levels/beta", tmp);

    /* A stray layer index: one finding with the byte offset and the sample, no duplicate. */
    snprintf(p, sizeof p, "%s/theTerrain.ter", level);
    size_t n;
    uint8_t *ter = trn_test_read_file(p, &n);
    uint8_t *orig = ter ? malloc(n) : NULL;
    if (ter && orig) {
        memcpy(orig, ter, n);
        size_t layers_at = 5 + 2u * 128u * 128u;
        ter[layers_at + 3u * 128u + 5u] = 9; /* x 5, row 3 from the south */
        CHECK(trn_test_write_file(p, ter, n));
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 1);
        CHECK_CONTAINS(out, "error [layer-index-out-of-range]");
        char want[128];
        snprintf(want, sizeof want, "theTerrain.ter: offset %zu: 1 sample uses",
                 layers_at + 3u * 128u + 5u);
        CHECK_CONTAINS(out, want);
        CHECK_CONTAINS(out, "first at x 5, y 3");
        CHECK(!strstr(out ? out : "", "[ter-warning]"));
        free(out), free(err);
        CHECK(trn_test_write_file(p, orig, n));
    }
    free(ter);
    free(orig);

    /* Extra maps after the layer map (the community notes' layout): where they start, and a fix
     * that really drops them (convert keeps them). */
    ter = trn_test_read_file(p, &n);
    if (ter) {
        size_t body = 5 + 3u * 128u * 128u, extra = 128u * 128u;
        uint8_t *x = malloc(n + extra);
        if (x) {
            memcpy(x, ter, body);
            memset(x + body, 0, extra);
            memcpy(x + body + extra, ter + body, n - body);
            CHECK(trn_test_write_file(p, x, n + extra));
            CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 1);
            char want[1200];
            snprintf(want, sizeof want, "error [ter-extra-maps] %s: offset %zu: the file holds 1",
                     p, body);
            CHECK_CONTAINS(out, want);
            CHECK_CONTAINS(out, "fix: rewrite it in the engine's layout: terrane beamng export");
            free(out), free(err);
            free(x);
        }
        CHECK(trn_test_write_file(p, ter, n));
        free(ter);
    }

    /* Files are named the way the level folder was given, not as resolved absolute paths. */
    char spelled[800], tex[1024];
    snprintf(spelled, sizeof spelled, "%s/game/./levels/beta", tmp);
    snprintf(tex, sizeof tex, "%s/art/terrains/t_terrane_nm_macro.png", level);
    size_t tex_n = 0;
    uint8_t *tex_saved = trn_test_read_file(tex, &tex_n);
    ter = trn_test_read_file(p, &n);
    if (tex_saved && ter) {
        CHECK(unlink(tex) == 0);
        ter[0] = 11;
        CHECK(trn_test_write_file(p, ter, n));
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, spelled), 1);
        char want[1200];
        snprintf(want, sizeof want, "error [ter-version-too-new] %s/theTerrain.ter: offset 0",
                 spelled);
        CHECK_CONTAINS(out, want);
        snprintf(want, sizeof want, "[texture-missing] %s/art/terrains/t_terrane_nm_macro.png",
                 spelled);
        CHECK_CONTAINS(out, want);
        free(out), free(err);
        ter[0] = 9;
        CHECK(trn_test_write_file(p, ter, n));
        CHECK(trn_test_write_file(tex, tex_saved, tex_n));
    }
    free(ter);
    free(tex_saved);

    /* A version from the future: the fix must not send the modder to a tool that cannot read
     * it either. */
    ter = trn_test_read_file(p, &n);
    if (ter) {
        ter[0] = 10;
        CHECK(trn_test_write_file(p, ter, n));
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 1);
        CHECK_CONTAINS(out, "theTerrain.ter: offset 0: version 10 is newer than 9");
        CHECK_CONTAINS(out, "fix: a newer engine wrote it");
        CHECK(!strstr(out ? out : "", "terrane convert"));
        free(out), free(err);
        ter[0] = 9;
        CHECK(trn_test_write_file(p, ter, n));
        free(ter);
    }

    /* A TerrainBlock field of the wrong type: the hint is about the field, not the JSON. */
    snprintf(p, sizeof p, "%s/main/MissionGroup/items.level.json", level);
    char *items = (char *)trn_test_read_file(p, &n);
    if (items) {
        char *sq = strstr(items, "\"squareSize\":1");
        CHECK(sq != NULL);
        if (sq) {
            char broken[2048];
            snprintf(broken, sizeof broken, "%.*s\"squareSize\":\"one\"%s", (int)(sq - items),
                     items, sq + strlen("\"squareSize\":1"));
            CHECK(trn_test_write_file(p, broken, strlen(broken)));
            CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 1);
            CHECK_CONTAINS(out, "error [level-items-invalid]");
            CHECK_CONTAINS(out, "TerrainBlock.squareSize: expected a number, found a string");
            CHECK_CONTAINS(out, "fix: give squareSize a value of the expected type");
            CHECK(!strstr(out ? out : "", "must be one complete JSON object"));
            free(out), free(err);
        }
        CHECK(trn_test_write_file(p, items, n));
    }
    free(items);

    /* A JSON syntax error in a materials file: line and column. */
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    char *mats = (char *)trn_test_read_file(p, &n);
    if (mats) {
        const char *bad = "{\n  \"x\": {\n    \"class\" \"TerrainMaterial\"\n  }\n}\n";
        char extra[1024];
        snprintf(extra, sizeof extra, "%s/art/terrains/broken.materials.json", level);
        CHECK(trn_test_write_file(extra, bad, strlen(bad)));
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures", &out, &err, level),
                     1);
        CHECK_CONTAINS(out, "error [materials-invalid]");
        CHECK_CONTAINS(out, "broken.materials.json:3:29: invalid JSON");
        free(out), free(err);
        /* JSON output carries the column as a field of its own. */
        CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures --format json", &out,
                                       &err, level),
                     1);
        json_error_t je;
        json_t *doc = json_loads(out ? out : "", 0, &je);
        bool seen = false;
        for (size_t i = 0; i < json_array_size(json_object_get(doc, "findings")); i++) {
            const json_t *x = json_array_get(json_object_get(doc, "findings"), i);
            if (strcmp(json_string_value(json_object_get(x, "check")), "materials-invalid"))
                continue;
            seen = true;
            CHECK_EQ_INT(json_integer_value(json_object_get(x, "line")), 3);
            CHECK_EQ_INT(json_integer_value(json_object_get(x, "column")), 29);
            CHECK_CONTAINS(json_string_value(json_object_get(x, "message")), "invalid JSON");
            CHECK(!strstr(json_string_value(json_object_get(x, "message")), "column"));
        }
        CHECK(seen);
        json_decref(doc);
        free(out), free(err);
        CHECK(unlink(extra) == 0);
    }
    free(mats);
}

/* The terrain-json fix hint names an option that does it: --fix-terrain-json rewrites the
 * .terrain.json from the .ter and validate then finds nothing. */
static void test_validate_fix_terrain_json(void)
{
    char *out, *err;
    char level[700], p[1024];
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng create delta --root '%s/game' --resolution 128 --texture-size 8 -q",
                     &out, &err, tmp),
                 0);
    free(out), free(err);
    snprintf(level, sizeof level, "%s/game/levels/delta", tmp);
    snprintf(p, sizeof p, "%s/theTerrain.terrain.json", level);
    size_t n;
    char *good = (char *)trn_test_read_file(p, &n);
    CHECK(good != NULL);
    const char *mangled = "{\"version\": 9, \"datafile\": \"/levels/delta/theTerrain.ter\", "
                          "\"size\": 128, \"heightMapSize\": 16384, \"heightMapItemSize\": 2, "
                          "\"layerMapSize\": 16384, \"layerMapItemSize\": 1, \"materials\": []}";
    CHECK(trn_test_write_file(p, mangled, strlen(mangled)));
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures", &out, &err, level), 0);
    CHECK_CONTAINS(out, "warning [terrain-json-mismatch]");
    CHECK_CONTAINS(out, "fix: rewrite it from the .ter: terrane beamng validate LEVEL_DIR "
                        "--fix-terrain-json");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures --fix-terrain-json", &out,
                                   &err, level),
                 0);
    CHECK_CONTAINS(err, "rewrote ");
    CHECK_CONTAINS(err, "theTerrain.terrain.json from its .ter");
    CHECK_CONTAINS(out, "0 errors, 0 warnings, 0 notes");
    free(out), free(err);
    size_t m;
    char *now = (char *)trn_test_read_file(p, &m);
    CHECK(now && good && m == n && memcmp(now, good, n) == 0);
    free(now);
    /* Again: nothing to write, said so; JSON lists what was rewritten (nothing). */
    CHECK_EQ_INT(
        trn_test_run_clif("beamng validate '%s' --skip-textures --fix-terrain-json --format json",
                          &out, &err, level),
        0);
    CHECK_CONTAINS(err, "every .terrain.json already matched its .ter");
    CHECK_CONTAINS(out, "\"terrain_json_rewritten\": []");
    free(out), free(err);
    free(good);
}

/* A .terrain.json linked from outside the level: --fix-terrain-json leaves it, says so (not
 * "already matched"), and validate's hint names a fix that works for that case. */
static void test_validate_fix_terrain_json_outside(void)
{
    char *out, *err;
    char level[700], p[1024], shared[1024];
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng create epsilon --root '%s/game' --resolution 128 --texture-size 8 -q",
                     &out, &err, tmp),
                 0);
    free(out), free(err);
    snprintf(level, sizeof level, "%s/game/levels/epsilon", tmp);
    snprintf(p, sizeof p, "%s/theTerrain.terrain.json", level);
    snprintf(shared, sizeof shared, "%s/shared-epsilon.terrain.json", tmp);
    const char *mangled = "{\"version\": 9, \"datafile\": \"/levels/epsilon/theTerrain.ter\", "
                          "\"size\": 256, \"heightMapSize\": 16384, \"heightMapItemSize\": 2, "
                          "\"layerMapSize\": 16384, \"layerMapItemSize\": 1, \"materials\": []}";
    CHECK(trn_test_write_file(shared, mangled, strlen(mangled)));
    CHECK(unlink(p) == 0);
    CHECK(symlink(shared, p) == 0);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --skip-textures --fix-terrain-json "
                                   "--format json",
                                   &out, &err, level),
                 0);
    CHECK_CONTAINS(err, "theTerrain.terrain.json: it resolves outside the level folder");
    CHECK(!strstr(err ? err : "", "already matched"));
    CHECK_CONTAINS(out, "\"terrain_json_outside\": [");
    CHECK_CONTAINS(out, "it resolves outside the level (to ");
    CHECK(!strstr(out ? out : "", "rewrite it from the .ter"));
    free(out), free(err);
    /* The shared file is untouched. */
    size_t n;
    char *now = (char *)trn_test_read_file(shared, &n);
    CHECK(now && n == strlen(mangled) && memcmp(now, mangled, n) == 0);
    free(now);
}

/* Following the tool's own advice (migrate, keeping the old file) must not flood validate with
 * v1.5 checks run on the v1 originals. */
static void test_validate_after_migrate(void)
{
    char *out, *err;
    char level[700], p[1024];
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng create gamma --root '%s/game' --resolution 128 --texture-size 8 -q",
                     &out, &err, tmp),
                 0);
    free(out), free(err);
    snprintf(level, sizeof level, "%s/game/levels/gamma", tmp);
    snprintf(p, sizeof p, "%s/art/terrains/materials.json", level);
    const char *v1 = "{\"mud\": {\"class\": \"TerrainMaterial\", \"internalName\": \"mud\", "
                     "\"diffuseMap\": \"/levels/gamma/art/terrains/t_terrane_grass_b.png\"}}";
    CHECK(trn_test_write_file(p, v1, strlen(v1)));
    /* Before: the v1 material in a v1.5 level is one finding, not fifteen empty slots. */
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    CHECK_CONTAINS(out, "warning [material-v1-only]");
    CHECK_EQ_INT(count_of(out, "[texture-slot-empty]"), 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng migrate '%s' --texture-size 8 -q", &out, &err, level),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    CHECK_EQ_INT(count_of(out, "[texture-slot-empty]"), 0);
    CHECK_EQ_INT(count_of(out, "[material-v1-only]"), 0);
    CHECK_CONTAINS(out, "warning [materials-deprecated-file]");
    CHECK_CONTAINS(out, "1 of them already in main.materials.json");
    CHECK_CONTAINS(out, "--delete-old");
    free(out), free(err);
}

static void test_outputs_never_replace_inputs(void)
{
    char *out, *err;
    char copy[1024], dotted[1024];
    tmp_path(copy, sizeof copy, "copy.png");
    write_png_fn(copy, 128, 128, 1, 16, ramp16);
    /* The same file spelled differently. */
    snprintf(dotted, sizeof dotted, "%s/./copy.png", tmp);
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s'", &out, &err, copy, dotted), 2);
    CHECK_CONTAINS(err, "is the input");
    free(out), free(err);
    CHECK(trn_test_same_bytes(copy, hm));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, copy, dotted), 2);
    CHECK_CONTAINS(err, "is the input");
    free(out), free(err);
    CHECK(trn_test_same_bytes(copy, hm));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s/o.ter' --holes '%s/o.ter'", &out,
                                   &err, copy, tmp, tmp),
                 2);
    free(out), free(err);
}

static void test_import_bad_inputs(void)
{
    char *out, *err;
    char p[1024], dir[1024], target[1024];
    tmp_path(target, sizeof target, "keep.ter");
    CHECK(trn_test_write_file(target, "precious", 8));

    /* A folder given for the heightmap. */
    tmp_path(dir, sizeof dir, "a_folder");
    CHECK(mkdir(dir, 0755) == 0);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, dir, target), 1);
    CHECK_CONTAINS(err, "a_folder: heightmap is a folder, expected a file");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --materials a --opacity '%s'", &out,
                                   &err, hm, target, dir),
                 1);
    CHECK_CONTAINS(err, "a_folder: opacity map 1 is a folder, expected a file");
    free(out), free(err);

    /* Empty files. */
    tmp_path(p, sizeof p, "empty.png");
    CHECK(trn_test_write_file(p, "", 0));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, p, target), 1);
    CHECK_CONTAINS(err, "empty.png: offset 0: heightmap is empty (0 bytes)");
    free(out), free(err);
    tmp_path(p, sizeof p, "empty.r16");
    CHECK(trn_test_write_file(p, "", 0));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, p, target), 1);
    CHECK_CONTAINS(err, "empty.r16: offset 0: heightmap is empty (0 bytes)");
    free(out), free(err);

    /* Some other format: say what was found. */
    tmp_path(p, sizeof p, "notes.txt");
    CHECK(trn_test_write_file(p, "hello world", 11));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, p, target), 1);
    CHECK_CONTAINS(err, "notes.txt: offset 0: heightmap is not a PNG");
    CHECK_CONTAINS(err, "found 68 65 6c 6c 6f");
    free(out), free(err);

    /* An R16 whose length is not a square: no advice about options import does not have. */
    tmp_path(p, sizeof p, "odd.r16");
    CHECK(trn_test_write_file(p, "0123456789", 10));
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s'", &out, &err, p, target), 1);
    CHECK_CONTAINS(err, "odd.r16");
    CHECK_CONTAINS(err, "10 bytes");
    CHECK_CONTAINS(err, "square");
    CHECK(!strstr(err ? err : "", "--size"));
    free(out), free(err);

    /* Hole maps: grey stored as RGB(A) is fine; a colour picture or transparency is not. */
    tmp_path(p, sizeof p, "holes_rgba.png");
    write_png_fn(p, 128, 128, 4, 8, holes_grey_rgb);
    char ok_ter[1024];
    tmp_path(ok_ter, sizeof ok_ter, "holes_ok.ter");
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --holes '%s' --format json", &out,
                                   &err, hm, ok_ter, p),
                 0);
    CHECK_CONTAINS(out, "\"holes\": 50");
    free(out), free(err);
    tmp_path(p, sizeof p, "holes_red.png");
    write_png_fn(p, 128, 128, 3, 8, holes_red);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --holes '%s'", &out, &err, hm, target, p), 1);
    CHECK_CONTAINS(err, "holes_red.png: hole map is not grey: pixel (7, 3) is R 255, G 0, B 0");
    free(out), free(err);
    tmp_path(p, sizeof p, "holes_alpha.png");
    write_png_fn(p, 128, 128, 4, 8, holes_alpha);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --holes '%s'", &out, &err, hm, target, p), 1);
    CHECK_CONTAINS(err, "holes_alpha.png: hole map has transparent pixels, the first at (4, 6)");
    free(out), free(err);

    /* Layer maps: a stray index is kept (exported maps of any .ter import back to it) but said
     * loudly; a colour picture is refused. */
    tmp_path(p, sizeof p, "layers_bad.png");
    write_png_fn(p, 128, 128, 1, 8, layers_bad);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --materials a,b --layer-map '%s'",
                                   &out, &err, hm, ok_ter, p),
                 0);
    CHECK_CONTAINS(err, "terrane beamng import: warning: layer map pixel (12, 34) is 7");
    CHECK_CONTAINS(err, "2 materials are named (0 to 1)");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng import '%s' -o '%s' --materials a,b --layer-map '%s' --format json",
                     &out, &err, hm, ok_ter, p),
                 0);
    CHECK_CONTAINS(out, "\"warnings\": [\n    \"layer map pixel (12, 34) is 7");
    free(out), free(err);
    tmp_path(p, sizeof p, "layers_rgb.png");
    write_png_fn(p, 128, 128, 3, 8, layers_good);
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' -o '%s' --materials a,b --layer-map '%s'",
                                   &out, &err, hm, target, p),
                 1);
    CHECK_CONTAINS(err, "layers_rgb.png: layer map has 3 channels; it must be 8-bit grey");
    free(out), free(err);
    tmp_path(p, sizeof p, "layers_good.png");
    write_png_fn(p, 128, 128, 1, 8, layers_good);
    CHECK_EQ_INT(trn_test_run_clif(
                     "beamng import '%s' -o '%s' --materials a,b --layer-map '%s' --format json",
                     &out, &err, hm, ok_ter, p),
                 0);
    CHECK_CONTAINS(out, "\"holes\": 1");
    free(out), free(err);

    /* None of the failures touched the existing output. */
    size_t n;
    char *kept = (char *)trn_test_read_file(target, &n);
    CHECK(kept && n == 8 && memcmp(kept, "precious", 8) == 0);
    free(kept);

    /* --level naming a file. */
    CHECK_EQ_INT(trn_test_run_clif("beamng import '%s' --level '%s'", &out, &err, hm, target), 1);
    CHECK_CONTAINS(err, "keep.ter: is a file, not a level folder");
    free(out), free(err);
}

static void test_create_usage(void)
{
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create big --root '%s' --resolution 9000", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--resolution 9000 is above 8192");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("beamng create x --root '%s' --initial-height 4000", &out, &err, tmp), 2);
    CHECK_CONTAINS(err, "--initial-height 4000 is above");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng create x --root '%s' --material ''", &out, &err, tmp),
                 2);
    CHECK_CONTAINS(err, "--material needs a name");
    free(out), free(err);
    char p[1024];
    CHECK(!trn_test_exists(tmp_path(p, sizeof p, "levels/big")));
    CHECK(!trn_test_exists(tmp_path(p, sizeof p, "levels/x")));
}

static void test_export_paths(void)
{
    char *out, *err;
    char ter[1024], file[1024];
    tmp_path(ter, sizeof ter, "named.ter");
    CHECK_EQ_INT(
        trn_test_run_clif("beamng import '%s' -o '%s' --materials 'wet mud,rock' --layer-map "
                          "'%s/layers_good.png' -q",
                          &out, &err, hm, ter, tmp),
        0);
    free(out), free(err);
    /* -o naming a file. */
    tmp_path(file, sizeof file, "keep.ter");
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' -o '%s'", &out, &err, ter, file), 1);
    CHECK_CONTAINS(err, "keep.ter: is a file, expected a folder for the images");
    free(out), free(err);
    /* A folder given for the .ter. */
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s/a_folder'", &out, &err, tmp), 1);
    CHECK_CONTAINS(err, "a_folder: is a folder, expected a .ter file");
    free(out), free(err);
    /* The re-import command survives the shell: names with spaces are quoted. */
    CHECK_EQ_INT(trn_test_run_clif("beamng export '%s' -o '%s/named_maps'", &out, &err, ter, tmp),
                 0);
    CHECK_CONTAINS(err, "--materials 'wet mud,rock'");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    tmp_path(hm, sizeof hm, "h.png");
    write_png_fn(hm, 128, 128, 1, 16, ramp16);
    RUN(test_validate_not_a_level);
    RUN(test_validate_messages);
    RUN(test_validate_fix_terrain_json);
    RUN(test_validate_fix_terrain_json_outside);
    RUN(test_validate_after_migrate);
    RUN(test_outputs_never_replace_inputs);
    RUN(test_import_bad_inputs);
    RUN(test_create_usage);
    RUN(test_export_paths);
    return trn_test_finish();
}
