/* Scenes placing one Terrain asset several times: info, cook and the runtime, errors positioned. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static const char *const PROJECT = TRN_SOURCE_DIR "/examples/terrain_3d";

/* A copy of the example project whose scene has `from` replaced by `to` (once). */
static const char *project_with(const char *name, const char *from, const char *to)
{
    static char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", tmp, name);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", dir, PROJECT, dir);
    CHECK(system(cmd) == 0);
    char path[800];
    snprintf(path, sizeof path, "%s/world.scene.json", dir);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(path, &n);
    CHECK(text != NULL);
    if (!text) return dir;
    char *at = from ? strstr(text, from) : NULL;
    CHECK(!from || at);
    if (at) {
        char *out = malloc(n + strlen(to) + 1);
        const size_t head = (size_t)(at - text);
        memcpy(out, text, head);
        memcpy(out + head, to, strlen(to));
        strcpy(out + head + strlen(to), at + strlen(from));
        CHECK(trn_test_write_file(path, out, strlen(out)));
        free(out);
    }
    free(text);
    return dir;
}

/* info lists every placement with its transform and groups the placements of each asset. */
static void test_scene_info_placements(void)
{
    CHECK_EQ_INT(cli("info %s/world.scene.json", PROJECT), 0);
    CHECK_CONTAINS(out_text, "entities:   5, 4 with a terrain");
    CHECK_CONTAINS(out_text, "valley_east: asset://terrain/landscape at [512, 0, 0], rotation [0, "
                             "0.707107, 0, 0.707107], scale [1, 1.5, 1], LOD 2 px, surface "
                             "blending off");
    CHECK_CONTAINS(out_text, "placeholder: none at [-600, 0, 0]");
    CHECK_CONTAINS(out_text,
                   "asset asset://terrain/landscape: 2 placements (valley, valley_east), one "
                   "shared recipe");
    CHECK_EQ_INT(cli("info %s/world.scene.json --format json", PROJECT), 0);
    json_error_t je;
    json_t *doc = json_loads(out_text ? out_text : "", 0, &je);
    CHECK(doc != NULL);
    const json_t *assets = json_object_get(doc, "assets");
    CHECK_EQ_INT((int)json_array_size(assets), 2);
    const json_t *first = json_array_get(assets, 0);
    CHECK(strcmp(json_string_value(json_object_get(first, "id")), "asset://terrain/landscape") ==
          0);
    CHECK_EQ_INT((int)json_array_size(json_object_get(first, "placements")), 2);
    const json_t *east = json_array_get(json_object_get(doc, "terrains"), 1);
    CHECK(json_number_value(json_array_get(json_object_get(east, "scale"), 1)) == 1.5);
    CHECK(json_is_false(json_object_get(east, "surface_blending")));
    json_decref(doc);
}

/* Each mistake is refused by info and cook at its line and column, naming the JSON path. */
static void test_scene_errors_positioned(void)
{
    static const struct {
        const char *from, *to, *where, *message;
    } cases[] = {
        {"\"asset\": \"asset://terrain/meadow_scatter\"", "\"asset\": \"asset://terrain/nope\"",
         "world.scene.json:22:32: entities[2].components.Terrain3D.asset",
         "no Terrain asset 'asset://terrain/nope' in the project"},
        {"\"scale\": [1, 1.5, 1]", "\"scale\": [1, 0, 1]",
         "world.scene.json:14:101: entities[1].components.Transform3D.scale",
         "found a component 0"},
        {"\"rotation\": [0, 0.7071068, 0, 0.7071068]", "\"rotation\": [0, 0, 0, 0]",
         "world.scene.json:14:62: entities[1].components.Transform3D.rotation",
         "found all four 0"},
        {"\"position\": [512, 0, 0]", "\"position\": [512, 0]",
         "world.scene.json:14:37: entities[1].components.Transform3D.position",
         "expected a position [x, y, z]: 3 finite numbers, found 2"},
        {"\"id\": \"coast\"", "\"id\": \"valley\"", "world.scene.json:19:13: entities[2].id",
         "the entity id 'valley' is already used by entities[0]"},
        {"\"surface_blending\": false", "\"surface_blend\": false",
         "world.scene.json:15:61: entities[1].components.Terrain3D.surface_blend",
         "did you mean 'surface_blending'?"},
        {"\"lod_error_pixels\": 2", "\"lod_error_pixels\": -1",
         "world.scene.json:8:81: entities[0].components.Terrain3D.lod_error_pixels",
         "found -1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "bad%zu", k);
        const char *dir = project_with(name, cases[k].from, cases[k].to);
        CHECK_EQ_INT(cli("info %s/world.scene.json", dir), 1);
        CHECK_CONTAINS(err_text, cases[k].where);
        CHECK_CONTAINS(err_text, cases[k].message);
        CHECK_EQ_INT(cli("cook %s -o %s/%s_out -q", dir, tmp, name), 1);
        CHECK_CONTAINS(err_text, cases[k].where);
    }
}

/* cook: the asset is cooked once, and the cooked scene's placements of it name that one
 * payload; a scene in a subfolder names it relative to itself; the placeholder names none. */
static void test_scene_cook_shared_payload(void)
{
    char out[700], scene[800], cmd0[1000];
    snprintf(out, sizeof out, "%s/cooked", tmp);
    CHECK_EQ_INT(cli("cook %s -o %s --format json", PROJECT, out), 0);
    json_error_t je;
    json_t *rep = json_loads(out_text ? out_text : "", 0, &je);
    size_t landscapes = 0;
    const json_t *list = json_object_get(rep, "terrains");
    for (size_t k = 0; k < json_array_size(list); k++)
        landscapes += strstr(json_string_value(json_object_get(json_array_get(list, k), "output")),
                             "/landscape.terrain.bin") != NULL;
    CHECK_EQ_INT((int)landscapes, 1);
    json_decref(rep);
    snprintf(scene, sizeof scene, "%s/world.scene.json", out);
    json_t *doc = json_load_file(scene, 0, &je);
    CHECK(doc != NULL);
    const json_t *ents = json_object_get(doc, "entities");
    const char *want[] = {"terrain/landscape.terrain.bin", "terrain/landscape.terrain.bin",
                          "terrain/meadow_scatter.terrain.bin", NULL};
    for (size_t k = 0; k < 4; k++) {
        const json_t *t = json_object_get(
            json_object_get(json_array_get(ents, k), "components"), "Terrain3D");
        const char *payload = json_string_value(json_object_get(t, "payload"));
        if (want[k]) {
            CHECK(payload && strcmp(payload, want[k]) == 0);
            CHECK(json_is_string(json_object_get(t, "asset"))); /* the reference stays */
        } else {
            CHECK(payload == NULL);
        }
    }
    json_decref(doc);
    /* The cooked scene reads back as a scene. */
    CHECK_EQ_INT(cli("info %s", scene), 0);
    CHECK_CONTAINS(out_text, "valley: asset://terrain/landscape");
    /* ... and a payload it names that is not there is refused at its position. */
    snprintf(cmd0, sizeof cmd0, "rm '%s/terrain/meadow_scatter.terrain.bin'", out);
    CHECK(system(cmd0) == 0);
    CHECK_EQ_INT(cli("info %s", scene), 1);
    CHECK_CONTAINS(err_text, "world.scene.json:62:22: entities[2].components.Terrain3D.payload: "
                             "no cooked payload");

    /* The same scene one folder down. */
    const char *dir = project_with("nested", NULL, NULL);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/scenes' && mv '%s/world.scene.json' '%s/scenes/'", dir,
             dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(out, sizeof out, "%s/nested_out", tmp);
    CHECK_EQ_INT(cli("cook %s -o %s -q", dir, out), 0);
    snprintf(scene, sizeof scene, "%s/scenes/world.scene.json", out);
    doc = json_load_file(scene, 0, &je);
    const json_t *t = json_object_get(
        json_object_get(json_array_get(json_object_get(doc, "entities"), 1), "components"),
        "Terrain3D");
    CHECK(t && strcmp(json_string_value(json_object_get(t, "payload")),
                      "../terrain/landscape.terrain.bin") == 0);
    json_decref(doc);
}

/* The runtime: `terrane lua --scene` places each placement under its entity id at its own
 * transform, the two placements of one asset sharing its payload. */
static void test_scene_lua_placements(void)
{
    char script[700], scene[800];
    snprintf(script, sizeof script, "%s/scene.lua", tmp);
    snprintf(scene, sizeof scene, "%s/nested_out/scenes/world.scene.json", tmp);
    static const char lua[] =
        "local w = require('terrane').default_world()\n"
        "assert(w:count() == 3)\n"
        "-- local (256, 256) of both placements: the second turned 90 degrees about y (local x\n"
        "-- runs along world -z) from (512, 0, 0) and 1.5 times as tall\n"
        "local a = w:ground({256, 500, 256}, 'valley')\n"
        "local b = w:ground({768, 500, -256}, 'valley_east')\n"
        "assert(a and b and a.biome == b.biome)\n"
        "assert(math.abs(b.point[2] - 1.5 * a.point[2]) < 1e-9)\n"
        "-- each placement keeps its own surface_blending\n"
        "assert(a.surface_blending == true and b.surface_blending == false)\n"
        "assert(w:ground({256, 500, 256}, 'valley_east') == nil)\n"
        "assert(w:ground({100, 500, 600}, 'coast').terrain_id == 'coast')\n"
        "print('placed', a.point[2], b.point[2])\n";
    CHECK(trn_test_write_file(script, lua, strlen(lua)));
    CHECK_EQ_INT(cli("lua %s --scene %s", script, scene), 0);
    if (err_text && err_text[0]) fprintf(stderr, "%s\n", err_text);
    CHECK_CONTAINS(out_text, "placed");
    /* A scene that was not cooked has no payloads to place. */
    CHECK_EQ_INT(cli("lua %s --scene %s/world.scene.json", script, PROJECT), 1);
    CHECK_CONTAINS(err_text, "no entity's Terrain3D names a payload");
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_finish();
    RUN(test_scene_info_placements);
    RUN(test_scene_errors_positioned);
    RUN(test_scene_cook_shared_payload);
    RUN(test_scene_lua_placements);
    reset_output();
    return trn_test_finish();
}
