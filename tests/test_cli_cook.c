/* Command-line tests for terrane cook and terrane info on cooked payloads. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "terrane/runtime.h"
#include "test.h"

static char tmp[512];
static char *out_text, *err_text;

static void reset_output(void)
{
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
}

#define cli(fmt, ...) (reset_output(), trn_test_run_clif(fmt, &out_text, &err_text, __VA_ARGS__))

/* A small recipe: flat ground at 10 m with a bowl holding a lake at LEVEL. */
static const char *recipe_body(double level)
{
    static char text[3000];
    snprintf(
        text, sizeof text,
        "{\"size\": [32, 32], \"resolution\": [32, 32], \"seed\": 3, \"sea_level\": -100,\n"
        " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
        " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, "
        "1]}},\n"
        " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
        "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
        "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
        "  {\"id\": \"sq\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[8, 8], [24, 8], "
        "[24, 24], [8, 24]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": \"rim\"}}},\n"
        "  {\"id\": \"bowl\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
        "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": "
        "\"sq\"}}},\n"
        "  {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"level\": %g, \"center\": "
        "[16, 16], \"radius\": 100}, \"inputs\": {\"field\": {\"node\": \"bowl\"}}},\n"
        "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"lake\", \"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}}]}}",
        level);
    return text;
}

static const char *write_recipe(const char *name, double level)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    const char *text = recipe_body(level);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

static void test_recipe_cook(void)
{
    const char *recipe = write_recipe("pond.json", 5);
    char out[700], payload[800], copy[800];
    snprintf(out, sizeof out, "%s/cooked", tmp);
    snprintf(payload, sizeof payload, "%s/pond.terrain.bin", out);
    snprintf(copy, sizeof copy, "%s/first.bin", tmp);
    CHECK_EQ_INT(cli("cook %s -o %s --threads 1 -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "pond.terrain.bin: cooked (missing)");
    CHECK(trn_test_exists(payload));
    size_t n = 0;
    uint8_t *first = trn_test_read_file(payload, &n);
    CHECK(first && trn_test_write_file(copy, first, n));
    free(first);
    /* The second run keeps it. */
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "pond.terrain.bin: up to date");
    /* Another thread count gives the same bytes when it has to cook again. */
    remove(payload);
    CHECK_EQ_INT(cli("cook %s -o %s --threads 2 -q", recipe, out), 0);
    CHECK(trn_test_same_bytes(payload, copy));
    /* A recipe edit cooks again and says why. */
    write_recipe("pond.json", 6);
    CHECK_EQ_INT(cli("cook %s -o %s -q --format json", recipe, out), 0);
    CHECK_CONTAINS(out_text, "\"status\": \"cooked\"");
    CHECK_CONTAINS(out_text, "\"reason\": \"recipe changed\"");
    CHECK(!trn_test_same_bytes(payload, copy));
    /* A damaged payload is unreadable: cooked again. */
    uint8_t *bytes = trn_test_read_file(payload, &n);
    bytes[n - 3] ^= 0xff;
    CHECK(trn_test_write_file(payload, bytes, n));
    CHECK_EQ_INT(cli("info %s", payload), 1);
    CHECK_CONTAINS(err_text, "pond.terrain.bin");
    CHECK_CONTAINS(err_text, "section 'MNFS' (manifest)");
    CHECK_CONTAINS(err_text, "checksum");
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "cooked (unreadable: section 'MNFS' (manifest)");
    /* A damaged header reads as unreadable. */
    bytes = (free(bytes), trn_test_read_file(payload, &n));
    bytes[30] ^= 0xff;
    CHECK(trn_test_write_file(payload, bytes, n));
    free(bytes);
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "cooked (unreadable: header at offset");
    /* info describes it. */
    CHECK_EQ_INT(cli("info %s", payload), 0);
    CHECK_CONTAINS(out_text, "terrane payload, format 1");
    CHECK_CONTAINS(out_text, "terrain id: pond");
    CHECK_CONTAINS(out_text, "grid: 32 x 32 cells over 32 x 32 units");
    CHECK_CONTAINS(out_text, "water: 1 body: lake 'lake' at 6");
    CHECK_CONTAINS(out_text, "HGHT heights");
    CHECK_EQ_INT(cli("info %s --format json", payload), 0);
    json_error_t je;
    json_t *root = json_loads(out_text ? out_text : "", 0, &je);
    CHECK(root && json_integer_value(json_object_get(root, "format_version")) == 1);
    CHECK(root && strcmp(json_string_value(json_object_get(root, "terrain_id")), "pond") == 0);
    CHECK(root && json_array_size(json_object_get(root, "sections")) == 7);
    json_decref(root);
    /* A truncated payload: exit 1 naming the file, the section and the offset. */
    bytes = trn_test_read_file(payload, &n);
    CHECK(trn_test_write_file(payload, bytes, n - 10));
    free(bytes);
    CHECK_EQ_INT(cli("info %s", payload), 1);
    CHECK_CONTAINS(err_text, "pond.terrain.bin");
    CHECK_CONTAINS(err_text, "section 'MNFS' (manifest) at offset");
    CHECK_CONTAINS(err_text, "run past the end of the file");
}

static void test_usage(void)
{
    const char *recipe = write_recipe("usage.json", 5);
    CHECK_EQ_INT(cli("cook %s", recipe), 2);
    CHECK_CONTAINS(err_text, "needs -o OUT_DIR");
    CHECK_EQ_INT(cli("cook -o %s/x", tmp), 2);
    CHECK_EQ_INT(cli("cook %s -o %s/x --threads 0", recipe, tmp), 2);
    CHECK_EQ_INT(cli("cook %s -o %s/x --bogus", recipe, tmp), 2);
    CHECK_EQ_INT(cli("cook %s/missing.json -o %s/x", tmp, tmp), 1);
    CHECK_EQ_INT(cli("cook --help%s", ""), 0);
    CHECK_CONTAINS(out_text, "usage: terrane cook");
    /* A recipe that does not parse: its line and column, and no output folder left behind. */
    char bad[700], out[700];
    snprintf(bad, sizeof bad, "%s/broken.json", tmp);
    snprintf(out, sizeof out, "%s/never", tmp);
    const char *text = "{\n  \"size\": [32, 32\n}\n";
    CHECK(trn_test_write_file(bad, text, strlen(text)));
    CHECK_EQ_INT(cli("cook %s -o %s", bad, out), 1);
    CHECK_CONTAINS(err_text, "broken.json:3:1");
    CHECK(!trn_test_exists(out));
}

static void test_project(void)
{
    char proj[700], sub[800], src[900], manifest[900], out[800];
    snprintf(proj, sizeof proj, "%s/project", tmp);
    snprintf(sub, sizeof sub, "%s/terrain", proj);
    /* Bare recipes are not Terrain assets: a folder of them has nothing to cook. */
    CHECK_EQ_INT(cli("cook %s -o %s/empty-out -q", tmp, tmp), 1);
    CHECK_CONTAINS(err_text, "no Terrain asset sources");
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", sub);
    CHECK(system(cmd) == 0);
    snprintf(src, sizeof src, "%s/landscape.terrain.json", sub);
    char doc[4000];
    snprintf(doc, sizeof doc,
             "{\"format_version\": 1, \"id\": \"asset://terrain/landscape\", \"recipe\": %s}\n",
             recipe_body(5));
    CHECK(trn_test_write_file(src, doc, strlen(doc)));
    snprintf(manifest, sizeof manifest, "%s/landscape.asset.json", sub);
    const char *m = "{\"format_version\": 1, \"type\": \"Terrain\", \"importer\": "
                    "\"terrain_heightfield\", \"source\": \"landscape.terrain.json\", \"tags\": "
                    "[\"hills\"], \"import_scale\": 0.1}\n";
    CHECK(trn_test_write_file(manifest, m, strlen(m)));
    /* A scene placing the asset, its transform in reals as an editor writes them. */
    char scene_path[900], scene[1200];
    snprintf(scene_path, sizeof scene_path, "%s/world.scene.json", proj);
    snprintf(scene, sizeof scene,
             "{\"name\": \"world\", \"entities\": [{\"id\": \"land\", \"components\": "
             "{\"Transform3D\": {\"position\": [0.1, 2.5, -0.3]}, \"Terrain3D\": {\"asset\": "
             "\"asset://terrain/landscape\"}}}]}\n");
    CHECK(trn_test_write_file(scene_path, scene, strlen(scene)));
    snprintf(out, sizeof out, "%s/cooked", proj); /* inside the project: not walked */
    CHECK_EQ_INT(cli("cook %s -o %s -q", proj, out), 0);
    CHECK_CONTAINS(out_text, "terrain/landscape.terrain.bin: cooked (missing)");
    char payload[1000], cooked_manifest[1000];
    snprintf(payload, sizeof payload, "%s/terrain/landscape.terrain.bin", out);
    snprintf(cooked_manifest, sizeof cooked_manifest, "%s/terrain/landscape.asset.json", out);
    CHECK(trn_test_exists(payload));
    json_error_t je;
    json_t *cm = json_load_file(cooked_manifest, 0, &je);
    CHECK(cm &&
          strcmp(json_string_value(json_object_get(cm, "payload")), "landscape.terrain.bin") == 0);
    CHECK(cm && strcmp(json_string_value(json_object_get(cm, "type")), "Terrain") == 0);
    CHECK(cm && json_object_get(cm, "source") == NULL && json_object_get(cm, "tags") != NULL);
    json_decref(cm);
    /* The manifest's and the scene's own numbers keep their shortest form (0.1, not
     * 0.10000000000000001). */
    char *cooked_text = (char *)trn_test_read_file(cooked_manifest, NULL);
    CHECK_CONTAINS(cooked_text, "\"import_scale\": 0.1,\n");
    free(cooked_text);
    snprintf(scene_path, sizeof scene_path, "%s/world.scene.json", out);
    cooked_text = (char *)trn_test_read_file(scene_path, NULL);
    CHECK_CONTAINS(cooked_text, "0.1,");
    CHECK_CONTAINS(cooked_text, "-0.3");
    CHECK(cooked_text && !strstr(cooked_text, "0000000"));
    free(cooked_text);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open(payload, NULL, &p, &e));
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    CHECK(p && strcmp(info.terrain_id, "asset://terrain/landscape") == 0);
    trn_payload_free(p);
    /* Again: up to date, and the output folder's own files are not taken for sources. */
    CHECK_EQ_INT(cli("cook %s -o %s", proj, out), 0);
    CHECK_CONTAINS(out_text, "landscape.terrain.bin: up to date");
    CHECK(out_text && strstr(out_text, "cooked/cooked") == NULL);
    CHECK(out_text && strchr(out_text, '\n') == strrchr(out_text, '\n')); /* one terrain */
    /* A folder linked in from outside the project is not the project's: never walked. */
    char outside[800], link[900];
    snprintf(outside, sizeof outside, "%s/outside_terrain", tmp);
    char stranger[900];
    snprintf(stranger, sizeof stranger, "%s/stranger.terrain.json", outside);
    CHECK(mkdir(outside, 0777) == 0);
    CHECK(trn_test_write_file(stranger, doc, strlen(doc)));
    snprintf(link, sizeof link, "%s/linked", proj);
    CHECK(symlink(outside, link) == 0);
    CHECK_EQ_INT(cli("cook %s -o %s", proj, out), 0);
    CHECK_CONTAINS(err_text, "skipped: a symbolic link to outside the project");
    CHECK(out_text && !strstr(out_text, "stranger"));
    unlink(link);
    /* Cooking a project into itself would skip every source: a usage error that says why. */
    CHECK_EQ_INT(cli("cook %s -o %s", proj, proj), 2);
    CHECK_CONTAINS(err_text, "the output folder is the project itself");
}

/* A recipe naming a palette asset that names a material set asset: editing either asset (not
 * the recipe) cooks again, and says which. */
static void test_asset_digests(void)
{
    char dir[700], path[900];
    snprintf(dir, sizeof dir, "%s/assets", tmp);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/sets", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/palettes", dir);
    mkdir(path, 0755);
    static const char set_manifest[] =
        "{\"type\": \"DataAsset\", \"source\": \"land.json\", "
        "\"settings\": {\"content_type\": \"terrain_material_set\"}}";
    static const char pal_manifest[] = "{\"type\": \"DataAsset\", \"source\": \"shrubs.json\", "
                                       "\"settings\": {\"content_type\": \"terrain_palette\"}}";
    snprintf(path, sizeof path, "%s/sets/land.asset.json", dir);
    CHECK(trn_test_write_file(path, set_manifest, strlen(set_manifest)));
    snprintf(path, sizeof path, "%s/palettes/shrubs.asset.json", dir);
    CHECK(trn_test_write_file(path, pal_manifest, strlen(pal_manifest)));
    char set_path[900], pal_path[900];
    snprintf(set_path, sizeof set_path, "%s/sets/land.json", dir);
    snprintf(pal_path, sizeof pal_path, "%s/palettes/shrubs.json", dir);
    const char *set1 = "{\"format_version\": 1, \"name\": \"Land\", \"roles\": {\"ground\": "
                       "\"asset://materials/soil\"}}";
    const char *set2 = "{\"format_version\": 1, \"name\": \"Land\", \"roles\": {\"ground\": "
                       "\"asset://materials/loam\"}}";
    const char *pal1 = "{\"format_version\": 3, \"name\": \"Shrubs\", \"material_set\": "
                       "\"asset://sets/land\", \"placements\": {\"shrub\": {\"prefab\": "
                       "\"prefab://shrub\", \"density\": 0.25, \"candidate_spacing\": 2}}}";
    const char *pal2 = "{\"format_version\": 3, \"name\": \"Shrubs\", \"material_set\": "
                       "\"asset://sets/land\", \"placements\": {\"shrub\": {\"prefab\": "
                       "\"prefab://shrub\", \"density\": 0.125, \"candidate_spacing\": 2}}}";
    CHECK(trn_test_write_file(set_path, set1, strlen(set1)));
    CHECK(trn_test_write_file(pal_path, pal1, strlen(pal1)));
    /* The recipe with "palette": "asset://palettes/shrubs" added after its first brace. */
    const char *body = recipe_body(5);
    char text[4000];
    snprintf(text, sizeof text, "{\"palette\": \"asset://palettes/shrubs\", %s", body + 1);
    char recipe[900], out[900], payload[1000];
    snprintf(recipe, sizeof recipe, "%s/shrubland.json", dir);
    CHECK(trn_test_write_file(recipe, text, strlen(text)));
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(payload, sizeof payload, "%s/shrubland.terrain.bin", out);
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "cooked (missing)");
    CHECK_EQ_INT(cli("info %s", payload), 0);
    CHECK_CONTAINS(out_text, "material set 'Land'");
    CHECK_CONTAINS(out_text, "scatter: 1 rule,");
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "up to date");
    CHECK(trn_test_write_file(set_path, set2, strlen(set2)));
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "cooked (material set changed)");
    CHECK(trn_test_write_file(pal_path, pal2, strlen(pal2)));
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "cooked (palette changed)");
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    CHECK_CONTAINS(out_text, "up to date");
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open(payload, NULL, &p, &e));
    const trn_material_set *set = trn_payload_material_set(p);
    CHECK(set && set->roles[0] && strcmp(set->roles[0], "asset://materials/loam") == 0);
    trn_payload_free(p);
}

/* A payload is a terrain input like any other: convert, render, mesh and stats decode it
 * (nothing is generated) and say what it is; a damaged one fails naming the section. */
static void test_payload_input(void)
{
    const char *recipe = write_recipe("input.json", 5);
    char out[700], payload[800], r32[800], png[800], glb[800], ter[800];
    snprintf(out, sizeof out, "%s/cooked_in", tmp);
    snprintf(payload, sizeof payload, "%s/input.terrain.bin", out);
    snprintf(r32, sizeof r32, "%s/in.r32", tmp);
    snprintf(png, sizeof png, "%s/in_shade.png", tmp);
    snprintf(glb, sizeof glb, "%s/in.glb", tmp);
    snprintf(ter, sizeof ter, "%s/in.ter", tmp);
    CHECK_EQ_INT(cli("cook %s -o %s -q", recipe, out), 0);
    /* The heights come back bit for bit: the same as generating the recipe. */
    char gen[800];
    snprintf(gen, sizeof gen, "%s/gen.r32", tmp);
    CHECK_EQ_INT(cli("generate %s -o %s -q", recipe, gen), 0);
    CHECK_EQ_INT(cli("convert %s %s", payload, r32), 0);
    CHECK(trn_test_same_bytes(r32, gen));
    CHECK_EQ_INT(cli("info %s --input-format payload --format json", payload), 0);
    CHECK_EQ_INT(cli("render %s -o %s --mode hillshade -q", payload, png), 0);
    CHECK(trn_test_exists(png));
    CHECK_EQ_INT(cli("mesh %s -o %s -q", payload, glb), 0);
    CHECK(trn_test_exists(glb));
    CHECK_EQ_INT(cli("stats %s --format json", payload), 0);
    CHECK_CONTAINS(out_text, "\"input_format\": \"terrane-payload\"");
    /* Its biomes become the .ter's materials. */
    CHECK_EQ_INT(cli("convert %s %s -q", payload, ter), 0);
    CHECK_EQ_INT(cli("info %s", ter), 0);
    CHECK_CONTAINS(out_text, "meadow");
    /* Damaged: exit 1 naming the file and the section; nothing written. */
    size_t n = 0;
    uint8_t *bytes = trn_test_read_file(payload, &n);
    bytes[n - 3] ^= 0xff;
    CHECK(trn_test_write_file(payload, bytes, n));
    free(bytes);
    remove(r32);
    CHECK_EQ_INT(cli("convert %s %s", payload, r32), 1);
    CHECK_CONTAINS(err_text, "input.terrain.bin");
    CHECK_CONTAINS(err_text, "section 'MNFS' (manifest)");
    CHECK(!trn_test_exists(r32));
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_finish();
    RUN(test_usage);
    RUN(test_recipe_cook);
    RUN(test_project);
    RUN(test_asset_digests);
    RUN(test_payload_input);
    reset_output();
    return trn_test_finish();
}
