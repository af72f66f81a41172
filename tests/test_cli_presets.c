/* terrane presets and apply-preset: listings, the small-diff scene patch, refusals, usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "test.h"

static void put(const char *dir, const char *name, const char *text)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static char *slurp(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = 0;
    uint8_t *d = trn_test_read_file(path, &n);
    char *s = malloc(n + 1);
    if (s && d) memcpy(s, d, n);
    if (s) s[d ? n : 0] = '\0';
    free(d);
    return s;
}

static void test_list(void)
{
    char dir[512];
    trn_test_tmpdir(dir, sizeof dir);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("presets", &out, &err), 0);
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++)
        CHECK_CONTAINS(out, trn_builtin_preset_id(i));
    CHECK_CONTAINS(out, "rules (3): summits -> snow, faces -> rock, alpine -> alpine_meadow");
    CHECK(strstr(out, "project presets") == NULL);
    free(out);
    free(err);
    /* An empty project: an empty list, success. */
    CHECK_EQ_INT(trn_test_run_clif("presets '%s'", &out, &err, dir), 0);
    CHECK_CONTAINS(out, "(0)");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("presets '%s' --format json", &out, &err, dir), 0);
    json_t *root = json_loads(out ? out : "", 0, NULL);
    CHECK(root != NULL);
    CHECK_EQ_INT(json_array_size(json_object_get(root, "builtin")), 8);
    CHECK(json_is_array(json_object_get(root, "project_presets")) &&
          json_array_size(json_object_get(root, "project_presets")) == 0);
    json_t *first = json_array_get(json_object_get(root, "builtin"), 0);
    CHECK(strcmp(json_string_value(json_object_get(first, "name")), "Flat building site") == 0);
    CHECK_EQ_INT(json_array_size(json_object_get(first, "biomes")), 3);
    CHECK_EQ_INT(json_array_size(json_object_get(first, "rules")), 3); /* banks, swales, rises */
    json_decref(root);
    free(out);
    free(err);
    /* A project preset. */
    put(dir, "lowland.asset.json",
        "{\"format_version\": 1, \"type\": \"terrain_preset\", \"importer\": \"data\", "
        "\"source\": \"lowland.preset.json\"}");
    put(dir, "lowland.preset.json",
        "{\"format_version\": 1, \"name\": \"Wet lowland\", \"description\": \"marsh\", "
        "\"default_biome\": \"marsh\", \"biomes\": {\"marsh\": {\"color\": [0, 0.4, 0.3, 1]}}}");
    CHECK_EQ_INT(trn_test_run_clif("presets '%s'", &out, &err, dir), 0);
    CHECK_CONTAINS(out, "(1):");
    CHECK_CONTAINS(out, "asset://lowland  Wet lowland");
    CHECK_CONTAINS(out, "biomes (1): marsh; default marsh");
    free(out);
    free(err);
    /* A broken one fails with its position. */
    put(dir, "lowland.preset.json", "{\"format_version\": 1, \"name\": 3}");
    CHECK_EQ_INT(trn_test_run_clif("presets '%s'", &out, &err, dir), 1);
    CHECK_CONTAINS(err, "name: expected a non-empty string, found a number");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("presets a b", &out, &err), 2);
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("presets --bogus", &out, &err), 2);
    free(out);
    free(err);
}

/* A scene in three pieces: everything before the recipe value, the value, everything after. */
static const char *const scene_head =
    "{\n  \"name\": \"main\",   \"note\": \"odd  spacing \\u00e9 kept\",\n"
    "  \"entities\": [\n"
    "    {\"id\": \"camera\", \"components\": {\"Transform3D\": {\"position\": [0, 10, 0]}}},\n"
    "    {\n      \"id\": \"ground\",\n      \"components\": {\n"
    "        \"Transform3D\": {\"position\": [1.50, 0, 0]},\n"
    "        \"Terrain3D\": {\n          \"recipe\": ";
static const char *const scene_recipe =
    "{\n            \"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5,\n"
    "            \"default_landform\": \"l\", \"landforms\": {\"l\": {\"height_variation\": "
    "10}},\n"
    "            \"default_biome\": \"grass\", \"biomes\": {\"grass\": {\"color\": [0, 1, 0, "
    "1]}},\n"
    "            \"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [8, 8]}]\n"
    "          }";
static const char *const scene_tail = ",\n          \"lod\": 3\n        }\n      }\n    }\n"
                                      "  ],\n  \"trailing\": [1,2 ,3]\n}\n";

static char *scene_text(void)
{
    size_t n = strlen(scene_head) + strlen(scene_recipe) + strlen(scene_tail);
    char *s = malloc(n + 1);
    if (s) snprintf(s, n + 1, "%s%s%s", scene_head, scene_recipe, scene_tail);
    return s;
}

/* Every byte outside the recipe value is the original's; returns the new recipe's text. */
static char *check_small_diff(const char *patched)
{
    size_t h = strlen(scene_head), t = strlen(scene_tail), n = strlen(patched);
    CHECK(n > h + t);
    if (n <= h + t) return NULL;
    CHECK(memcmp(patched, scene_head, h) == 0);
    CHECK(memcmp(patched + n - t, scene_tail, t) == 0);
    char *r = malloc(n - h - t + 1);
    if (!r) return NULL;
    memcpy(r, patched + h, n - h - t);
    r[n - h - t] = '\0';
    return r;
}

static void test_apply(void)
{
    char dir[512], sub[600];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/scenes", dir);
    CHECK(mkdir(sub, 0777) == 0);
    char *scene = scene_text();
    put(sub, "main.scene.json", scene);
    char *out = NULL, *err = NULL;

    /* The preset changes the grid and the terrain has an edit: keep or clear is needed. */
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills",
                                   &out, &err, dir),
                 1);
    CHECK_CONTAINS(err, "changes the grid");
    CHECK_CONTAINS(err, "--keep-edits");
    free(out);
    free(err);

    /* Printed: only the recipe's bytes differ, and they read back stamped. */
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--keep-edits",
                                   &out, &err, dir),
                 0);
    char *rt = check_small_diff(out ? out : "");
    trn_recipe r;
    trn_error e;
    CHECK(rt != NULL);
    CHECK_OK(trn_recipe_parse(rt ? rt : "", rt ? strlen(rt) : 0, "r", &r, NULL, &e));
    CHECK(r.preset_id && strcmp(r.preset_id, "builtin://terrain/rolling-hills") == 0);
    /* rolling-hills is at version 7 since its open border */
    CHECK(r.has_preset_version && r.preset_version == 7 && r.stroke_count == 1);
    CHECK(r.size_x == 2048 && r.cells_x == 256 && r.seed == 303);
    /* pretty-printed at the key's indentation */
    CHECK(rt && strstr(rt, "\n            \"biomes\": {") != NULL);
    CHECK(rt && rt[strlen(rt) - 1] == '}' && strstr(rt, "\n          }") != NULL);
    trn_recipe_dispose(&r);
    CHECK_CONTAINS(err, "recipe bytes");
    char *now = slurp(sub, "main.scene.json");
    CHECK(now && strcmp(now, scene) == 0); /* not written */
    free(now);
    char *printed = out;
    free(err);

    /* --write saves exactly what was printed. */
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--keep-edits --write -q",
                                   &out, &err, dir),
                 0);
    CHECK(out && out[0] == '\0');
    now = slurp(sub, "main.scene.json");
    CHECK(now && printed && strcmp(now, printed) == 0);
    free(now);
    free(printed);
    free(rt);
    free(out);
    free(err);

    /* Clear: the edit goes; the summary as JSON names the byte range. */
    put(sub, "main.scene.json", scene);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/desert-dunes "
                                   "--clear-edits --format json",
                                   &out, &err, dir),
                 0);
    json_t *sum = json_loads(out ? out : "", 0, NULL);
    CHECK(sum != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(sum, "recipe_offset")), strlen(scene_head));
    CHECK_EQ_INT(json_integer_value(json_object_get(sum, "recipe_bytes_before")),
                 strlen(scene_recipe));
    CHECK(strcmp(json_string_value(json_object_get(sum, "entity")), "ground") == 0);
    const char *text = json_string_value(json_object_get(sum, "scene_text"));
    rt = check_small_diff(text ? text : "");
    CHECK(rt && strstr(rt, "\"edits\"") == NULL && strstr(rt, "desert-dunes") != NULL);
    free(rt);
    json_decref(sum);
    free(out);
    free(err);

    /* A region naming a biome the preset lacks. */
    const char *region_recipe =
        "{\"size\": [128, 128], \"resolution\": [64, 64], \"seed\": 1, \"default_landform\": "
        "\"l\", \"landforms\": {\"l\": {}}, \"default_biome\": \"grass\", \"biomes\": {\"grass\": "
        "{\"color\": [0, 1, 0, 1]}}, \"regions\": [{\"type\": \"region\", \"biome\": \"grass\", "
        "\"radius\": 3, \"center\": [4, 4]}]}";
    char one[4096];
    snprintf(one, sizeof one,
             "{\"entities\": [{\"id\": \"t\", \"components\": {\"Terrain3D\": {\"recipe\": %s}}}]}",
             region_recipe);
    put(sub, "main.scene.json", one);
    CHECK_EQ_INT(
        trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/plateau --keep-edits", &out,
                          &err, dir),
        1);
    CHECK_CONTAINS(err, "does not validate: regions[0].biome");
    CHECK_CONTAINS(err, "grass");
    free(out);
    free(err);
    /* A one-line recipe stays on one line; the rest of the line is kept (the preset's 2 km
     * grid moves the region, so it needs --keep-edits). */
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--keep-edits",
                                   &out, &err, dir),
                 0);
    const char *lead = "{\"entities\": [{\"id\": \"t\", \"components\": {\"Terrain3D\": "
                       "{\"recipe\": {\"biomes\":";
    CHECK(out && strncmp(out, lead, strlen(lead)) == 0);
    CHECK(out && strchr(out, '\n') == NULL && strstr(out, "}}}]}") != NULL);
    free(out);
    free(err);

    /* CRLF line ends: the new value uses them too, the rest is kept byte for byte. */
    const char *crlf_head =
        "{\r\n  \"entities\": [{\"id\": \"t\", \"components\": {\"Terrain3D\": {\r\n"
        "    \"recipe\": ";
    const char *crlf_tail = "}}}]\r\n}\r\n";
    char crlf[4096];
    snprintf(crlf, sizeof crlf,
             "%s{\r\n      \"size\": [128, 128], \"resolution\": [64, 64],\r\n"
             "      \"seed\": 1, \"default_landform\": \"l\", \"landforms\": {\"l\": {}},\r\n"
             "      \"default_biome\": \"grass\", \"biomes\": {\"grass\": {\"color\": [0, 1, 0, "
             "1]}}\r\n    }%s",
             crlf_head, crlf_tail);
    put(sub, "main.scene.json", crlf);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--write -q",
                                   &out, &err, dir),
                 0);
    now = slurp(sub, "main.scene.json");
    CHECK(now && strncmp(now, crlf_head, strlen(crlf_head)) == 0);
    CHECK(now && strlen(now) > strlen(crlf_tail) &&
          strcmp(now + strlen(now) - strlen(crlf_tail), crlf_tail) == 0);
    CHECK(now && strstr(now, "\"preset_id\": \"builtin://terrain/rolling-hills\",\r\n") != NULL);
    for (const char *q = now ? now : ""; *q; q++)
        if (*q == '\n') CHECK(q > now && q[-1] == '\r');
    free(now);
    free(out);
    free(err);
    put(sub, "main.scene.json", one);

    /* Two terrains: --entity chooses. */
    put(sub, "second.scene.json", one);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills",
                                   &out, &err, dir),
                 1);
    CHECK_CONTAINS(err, "2 terrains");
    CHECK_CONTAINS(err, "--entity");
    CHECK_CONTAINS(err, "second.scene.json");
    free(out);
    free(err);
    snprintf(one, sizeof one,
             "{\"entities\": [{\"id\": \"other\", \"components\": {\"Terrain3D\": {\"recipe\": "
             "%s}}}]}",
             region_recipe);
    put(sub, "second.scene.json", one);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--entity other --keep-edits --format json",
                                   &out, &err, dir),
                 0);
    CHECK_CONTAINS(out, "second.scene.json");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--entity nobody",
                                   &out, &err, dir),
                 1);
    CHECK_CONTAINS(err, "no terrain entity 'nobody'");
    free(out);
    free(err);

    /* An asset-backed terrain is not followed yet; asset and recipe together are an error. */
    put(sub, "second.scene.json",
        "{\"entities\": [{\"id\": \"a\", \"components\": {\"Terrain3D\": {\"asset\": "
        "\"asset://terrain/landscape\"}}}]}");
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills "
                                   "--entity a",
                                   &out, &err, dir),
                 1);
    CHECK_CONTAINS(err, "does not follow asset references yet");
    free(out);
    free(err);
    put(sub, "second.scene.json",
        "{\"entities\": [{\"id\": \"a\", \"components\": {\"Terrain3D\": {\"asset\": "
        "\"asset://terrain/landscape\",\n \"recipe\": {}}}}]}");
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/rolling-hills",
                                   &out, &err, dir),
                 1);
    CHECK_CONTAINS(err, "second.scene.json:1:55: entities[0].components.Terrain3D");
    CHECK_CONTAINS(err, "never both");
    free(out);
    free(err);
    put(sub, "second.scene.json", "{\"entities\": []}");

    /* Unknown preset, usage errors. */
    CHECK_EQ_INT(
        trn_test_run_clif("apply-preset '%s' --preset builtin://terrain/volcano", &out, &err, dir),
        1);
    CHECK_CONTAINS(err, "no built-in preset");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s'", &out, &err, dir), 2);
    CHECK_CONTAINS(err, "--preset");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("apply-preset '%s' --preset x --keep-edits --clear-edits", &out,
                                   &err, dir),
                 2);
    free(out);
    free(err);
    free(scene);
}

/* A built-in preset's id stands for its recipe wherever a verb takes one: the same bytes as the
 * preset's text in a file, every recipe verb, and an unknown id refused by name. */
static void test_builtin_source(void)
{
    char dir[512];
    trn_test_tmpdir(dir, sizeof dir);
    const char *id = "builtin://terrain/desert-dunes";
    put(dir, "dunes.json", trn_builtin_preset_text(id));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate %s --resolution 64x64 -o '%s/a.r32' -q", &out, &err,
                                   id, dir),
                 0);
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s/dunes.json' --resolution 64x64 -o '%s/b.r32' -q",
                                   &out, &err, dir, dir),
                 0);
    free(out);
    free(err);
    char *a = slurp(dir, "a.r32"), *b = slurp(dir, "b.r32");
    CHECK(a && b);
    size_t na = 0, nb = 0;
    char pa[1200], pb[1200];
    snprintf(pa, sizeof pa, "%s/a.r32", dir);
    snprintf(pb, sizeof pb, "%s/b.r32", dir);
    uint8_t *da = trn_test_read_file(pa, &na), *db = trn_test_read_file(pb, &nb);
    CHECK(da && db && na == 65u * 65u * 4u && na == nb && memcmp(da, db, na) == 0);
    free(da);
    free(db);
    free(a);
    free(b);
    /* The verbs that read recipes: each takes the id (exit 0). */
    const struct {
        const char *verb, *opts, *out; /* out: an output file in dir after -o, or NULL */
    } verbs[] = {{"info", "", NULL},           {"stats", "--resolution 32x32", NULL},
                 {"render", "", "r.png"},      {"mesh", "", "m.glb"},
                 {"explain", "--at 100,100", NULL}, {"cook", "", "ck"},
                 {"inspect", "", NULL}};
    for (size_t k = 0; k < sizeof verbs / sizeof verbs[0]; k++) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "%s %s %s%s%s%s%s", verbs[k].verb, id, verbs[k].opts,
                 verbs[k].out ? " -o '" : "", verbs[k].out ? dir : "", verbs[k].out ? "/" : "",
                 verbs[k].out ? verbs[k].out : "");
        if (verbs[k].out) strncat(cmd, "'", sizeof cmd - strlen(cmd) - 1);
        const int rc = trn_test_run_clif("%s", &out, &err, cmd);
        if (rc != 0) fprintf(stderr, "  '%s' exited %d: %s\n", cmd, rc, err ? err : "");
        CHECK_EQ_INT(rc, 0);
        free(out);
        free(err);
    }
    /* An unknown id: exit 1, the id and the presets there are, no file error. */
    const char *bad[][2] = {{"generate", "c.r32"}, {"stats", NULL}, {"info", NULL}, {"cook", "ck2"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const int rc = bad[k][1] ? trn_test_run_clif("%s builtin://terrain/dunes -o '%s/%s'", &out,
                                                     &err, bad[k][0], dir, bad[k][1])
                                 : trn_test_run_clif("%s builtin://terrain/dunes", &out, &err,
                                                     bad[k][0]);
        CHECK_EQ_INT(rc, 1);
        CHECK_CONTAINS(err, "builtin://terrain/dunes: no such built-in preset");
        CHECK_CONTAINS(err, "desert-dunes");
        CHECK(strstr(err ? err : "", "cannot open") == NULL);
        free(out);
        free(err);
    }
}

int main(void)
{
    RUN(test_list);
    RUN(test_apply);
    RUN(test_builtin_source);
    return trn_test_finish();
}
