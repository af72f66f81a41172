/* Command-line tests for inspect and seeds: exit codes, positions in errors, JSON output. */
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>

#include "terrane/recipe.h"
#include "test.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

static const char *write_tmp(char *buf, size_t n, const char *name, const char *text)
{
    tmp_path(buf, n, name);
    CHECK(trn_test_write_file(buf, text, strlen(text)));
    return buf;
}

static char island[1024];

static void check_sub_seeds(const json_t *arr, uint64_t world_seed)
{
    CHECK_EQ_INT(json_array_size(arr), TRN_CHANNEL_COUNT);
    for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
        json_t *e = json_array_get(arr, (size_t)c);
        uint64_t v = trn_subseed_of(world_seed, (trn_seed_channel)c);
        char hex[24], dec[24];
        snprintf(hex, sizeof hex, "%016" PRIx64, v);
        snprintf(dec, sizeof dec, "%" PRIu64, v);
        const char *ch = json_string_value(json_object_get(e, "channel"));
        CHECK(ch && strcmp(ch, trn_seed_channel_name((trn_seed_channel)c)) == 0);
        const char *h = json_string_value(json_object_get(e, "hex"));
        CHECK(h && strcmp(h, hex) == 0);
        const char *d = json_string_value(json_object_get(e, "value"));
        CHECK(d && strcmp(d, dec) == 0);
    }
}

static void test_inspect_text(void)
{
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "inspect '%s'", island);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    CHECK_CONTAINS(out, "document:         bare recipe");
    CHECK_CONTAINS(out, "size:             4096 x 4096 world units");
    CHECK_CONTAINS(out, "resolution:       128 x 128 cells");
    CHECK_CONTAINS(out, "samples:          16641 (129 x 129)");
    CHECK_CONTAINS(out, "seed:             3889\n");
    CHECK_CONTAINS(out, "chunks:           32 cells each, 4 x 4 = 16 chunks");
    CHECK_CONTAINS(out, "default biome:    grass");
    /* island.json's sea level is 0 since landscape evolution (was 8.5) */
    CHECK_CONTAINS(out, "sea level:        0 (explicit: the recipe's sea_level 0)");
    /* octaves 5 since its west flank's valleys were combed: the default, so not listed */
    CHECK_CONTAINS(out,
                   "base_height -240, height_variation 600, feature_size 5120, roughness 0.45, "
                   "warp_amplitude 384");
    CHECK_CONTAINS(out, "1. \"shoreline\" -> sand  priority 30, blend 8");
    CHECK_CONTAINS(out, "water distance  [0, 40]");
    CHECK_CONTAINS(out, "`- exclusions");
    CHECK_CONTAINS(out, "rules: shoreline, grassland, cliffs, peaks");
    CHECK_CONTAINS(out, "regions     0");
    char line[128];
    snprintf(line, sizeof line, "landform         0x%016" PRIx64,
             trn_subseed_of(3889, TRN_CHANNEL_LANDFORM));
    CHECK_CONTAINS(out, line);
    snprintf(line, sizeof line, "scatter          0x%016" PRIx64,
             trn_subseed_of(3889, TRN_CHANNEL_SCATTER));
    CHECK_CONTAINS(out, line);
    trn_recipe r;
    trn_error e;
    uint64_t key = 0;
    CHECK_OK(trn_recipe_read(island, &r, NULL, &e));
    CHECK_OK(trn_recipe_cache_key(&r, &key, &e));
    snprintf(line, sizeof line, "cache key:        %016" PRIx64 " (generator version %u)", key,
             TRN_GENERATOR_VERSION);
    CHECK_CONTAINS(out, line);
    CHECK(err && err[0] == '\0');
    free(out), free(err);

    /* A derived sea level says how; an asset document says what it is. */
    char path[700];
    r.has_sea_level = false;
    tmp_path(path, sizeof path, "island.terrain.json");
    CHECK_OK(trn_terrain_asset_write(path, "asset://terrain/island", &r, &e));
    trn_recipe_dispose(&r);
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    CHECK_CONTAINS(out, "document:         Terrain asset source");
    CHECK_CONTAINS(out, "sea level:        -90 (derived: base_height -240 + 0.25 x "
                        "height_variation 600 of default landform 'island' = -90)");
    free(out), free(err);
}

static void test_inspect_json(void)
{
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "inspect '%s' --format json", island);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(o != NULL);
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "input_format")), "recipe") == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "samples")), 16641);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "seed")), 3889);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "chunks")), 16);
        json_t *sea = json_object_get(o, "sea_level");
        CHECK(json_number_value(json_object_get(sea, "value")) == 0); /* was 8.5 */
        CHECK(strcmp(json_string_value(json_object_get(sea, "source")), "explicit") == 0);
        check_sub_seeds(json_object_get(o, "sub_seeds"), 3889);
        json_t *rules = json_object_get(o, "rules");
        CHECK_EQ_INT(json_array_size(rules), 4);
        json_t *shore = json_array_get(rules, 0);
        CHECK(strcmp(json_string_value(json_object_get(shore, "id")), "shoreline") == 0);
        json_t *wd = json_object_get(shore, "water_distance");
        CHECK(json_number_value(json_array_get(wd, 1)) == 40);
        CHECK(json_is_null(json_object_get(shore, "elevation")));
        json_t *biomes = json_object_get(o, "biomes");
        CHECK_EQ_INT(json_array_size(biomes), 4);
        json_t *grass = json_array_get(biomes, 0);
        CHECK(json_number_value(json_array_get(json_object_get(grass, "color"), 0)) == 0.36);
        CHECK(strcmp(json_string_value(json_object_get(grass, "hex")), "#5C9442FF") == 0);
        json_t *layers = json_object_get(o, "recipe_layers");
        CHECK(strcmp(json_string_value(json_object_get(layers, "source")), "default") == 0);
        CHECK_EQ_INT(json_array_size(json_object_get(layers, "tree")), 5);
        json_t *lf = json_array_get(json_object_get(o, "landforms"), 0);
        CHECK_EQ_INT(json_array_size(json_object_get(lf, "non_default")), 6);
        CHECK_EQ_INT(json_array_size(json_object_get(o, "diagnostics")), 0);
        CHECK(json_object_get(o, "cache_key") != NULL);
        json_decref(o);
    }
    free(out), free(err);

    /* Layers and strokes from the recipe: counted by type and hung on their layers. */
    char path[700];
    write_tmp(path, sizeof path, "strokes.json",
              "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 9, "
              "\"default_landform\": \"a\", \"landforms\": {\"a\": {}}, \"default_biome\": \"b\", "
              "\"biomes\": {\"b\": {\"color\": [0, 0, 0, 1]}},\n"
              "\"layers\": [{\"id\": \"generation\"}, {\"id\": \"paint\", \"name\": \"Paint\", "
              "\"group\": \"biomes\", \"enabled\": false}, {\"id\": \"dig\", \"group\": "
              "\"sculpt\"}, {\"id\": \"exclusions\"}],\n"
              "\"regions\": [{\"type\": \"region\", \"layer\": \"paint\", \"biome\": \"b\", "
              "\"radius\": 2, \"center\": [1, 1]}, {\"type\": \"region\", \"biome\": \"b\", "
              "\"radius\": 2, \"points\": [[1, 1], [2, 2]]}],\n"
              "\"edits\": [{\"type\": \"flatten\", \"layer\": \"dig\", \"radius\": 3, "
              "\"target_height\": 4, \"center\": [0, 0]}, {\"type\": \"raise\", \"radius\": 3, "
              "\"center\": [0, 0]}, {\"type\": \"flatten\", \"radius\": 3, \"target_height\": 2, "
              "\"points\": [[5, 5], [6, 6], [7, 7]]}],\n"
              "\"exclusions\": [{\"type\": \"exclusion\", \"radius\": 1, \"center\": [3, 3]}],\n"
              "\"rules\": [{\"id\": \"r1\", \"biome\": \"b\", \"layer\": \"paint\"}, {\"id\": "
              "\"r2\", \"biome\": \"b\"}]}");
    snprintf(args, sizeof args, "inspect '%s' --format json", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    o = json_loads(out ? out : "", 0, &je);
    CHECK(o != NULL);
    if (o) {
        json_t *strokes = json_object_get(o, "strokes");
        json_t *edits = json_object_get(strokes, "edits");
        CHECK_EQ_INT(json_integer_value(json_object_get(edits, "total")), 3);
        json_t *by = json_object_get(edits, "by_type");
        CHECK_EQ_INT(json_integer_value(json_object_get(by, "flatten")), 2);
        CHECK_EQ_INT(json_integer_value(json_object_get(by, "raise")), 1);
        CHECK_EQ_INT(
            json_integer_value(json_object_get(json_object_get(strokes, "regions"), "total")), 2);
        CHECK_EQ_INT(json_integer_value(json_object_get(strokes, "stamps")), 9);
        CHECK_EQ_INT(json_integer_value(json_object_get(strokes, "on_disabled_layers")), 2);
        json_t *layers = json_object_get(o, "recipe_layers");
        CHECK(strcmp(json_string_value(json_object_get(layers, "source")), "recipe") == 0);
        json_t *tree = json_object_get(layers, "tree");
        CHECK_EQ_INT(json_array_size(tree), 4);
        json_t *paint = json_array_get(tree, 1);
        CHECK(json_is_false(json_object_get(paint, "enabled")));
        CHECK(strcmp(json_string_value(json_object_get(paint, "name")), "Paint") == 0);
        CHECK(strcmp(json_string_value(json_object_get(paint, "group")), "biomes") == 0);
        CHECK_EQ_INT(json_array_size(json_object_get(paint, "rules")), 1);
        /* The region without a layer goes to the first biomes layer: paint, too. */
        json_t *ps = json_object_get(paint, "strokes");
        CHECK_EQ_INT(json_integer_value(json_object_get(ps, "total")), 2);
        CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(ps, "by_type"), "region")),
                     2);
        json_t *dig = json_array_get(tree, 2);
        CHECK_EQ_INT(json_integer_value(json_object_get(
                         json_object_get(json_object_get(dig, "strokes"), "by_type"), "flatten")),
                     2);
        json_t *loose = json_object_get(layers, "rules_without_layer");
        CHECK_EQ_INT(json_array_size(loose), 1);
        CHECK(strcmp(json_string_value(json_array_get(loose, 0)), "r2") == 0);
        json_decref(o);
    }
    free(out), free(err);
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    CHECK_CONTAINS(out, "+- paint \"Paint\" [biomes] (disabled)\n  |    rules: r1\n  |    strokes "
                        "2: region 2 (kept, but skipped while the layer is disabled)\n");
    CHECK_CONTAINS(out, "+- dig [sculpt]\n  |    strokes 3: flatten 2, raise 1\n");
    CHECK_CONTAINS(out, "`- exclusions\n       strokes 1: exclusion 1\n");
    CHECK_CONTAINS(out, "rules on no listed layer: r2");
    CHECK_CONTAINS(out, "edits       3 (flatten 2, raise 1)");
    CHECK_CONTAINS(out, "note: 2 strokes are on disabled layers: kept in the recipe, skipped when "
                        "generating");
    free(out), free(err);

    /* A precision diagnostic is printed, never a refusal. */
    write_tmp(path, sizeof path, "precision.json",
              "{\"size\": [1000000, 1000000], \"resolution\": [10, 10], \"seed\": 1, "
              "\"default_landform\": \"a\", \"landforms\": {\"a\": {\"feature_size\": 1, "
              "\"octaves\": 16}}, \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [0, "
              "0, 0, 1]}}}");
    snprintf(args, sizeof args, "inspect '%s' --format json", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    o = json_loads(out ? out : "", 0, &je);
    CHECK(o && json_array_size(json_object_get(o, "diagnostics")) == 1);
    json_decref(o);
    free(out), free(err);
}

static void test_inspect_errors(void)
{
    char args[2048], path[700], *out, *err;
    CHECK_EQ_INT(trn_test_run_cli("inspect", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a recipe");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect a.json b.json", &out, &err), 2);
    CHECK_CONTAINS(err, "unexpected 'b.json'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect a.json --bogus", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect a.json --format xml", &out, &err), 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect --help", &out, &err), 0);
    CHECK_CONTAINS(out, "examples:");
    CHECK_CONTAINS(out, "terrane inspect examples/recipes/island.json");
    free(out), free(err);

    snprintf(args, sizeof args, "inspect '%s'", tmp_path(path, sizeof path, "missing.json"));
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    CHECK_CONTAINS(err, "missing.json");
    free(out), free(err);

    /* A schema error: file:line:column: path: message. */
    write_tmp(path, sizeof path, "bad.json",
              "{\n  \"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1,\n"
              "  \"landforms\": {\"a\": {\"octaves\": 40}}\n}\n");
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    char expect[1024];
    snprintf(expect, sizeof expect,
             "%s:3:34: landforms.a.octaves: expected a whole number 1..16, found 40", path);
    CHECK_CONTAINS(err, expect);
    CHECK(out && out[0] == '\0');
    free(out), free(err);
    /* With --format json the error still goes to stderr, and stdout answers with an error
     * object that carries the same position by field. */
    snprintf(args, sizeof args, "inspect '%s' --format json", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    CHECK_CONTAINS(err, expect);
    json_t *eo = json_loads(out ? out : "", 0, NULL);
    json_t *ee = json_object_get(eo, "error");
    CHECK(ee != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(ee, "line")), 3);
    CHECK_EQ_INT(json_integer_value(json_object_get(ee, "column")), 34);
    CHECK_EQ_INT(json_integer_value(json_object_get(ee, "exit_code")), 1);
    CHECK_CONTAINS(json_string_value(json_object_get(ee, "message")), "found 40");
    CHECK_CONTAINS(json_string_value(json_object_get(ee, "file")), "bad.json");
    json_decref(eo);
    free(out), free(err);

    write_tmp(path, sizeof path, "typo.json",
              "{\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1,\n"
              " \"landforms\": {\"mountains\": {\"heigth\": 4}}}");
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    snprintf(expect, sizeof expect,
             "%s:2:30: unknown key 'heigth' in landforms.mountains; did you mean "
             "'height_variation'?",
             path);
    CHECK_CONTAINS(err, expect);
    free(out), free(err);

    write_tmp(path, sizeof path, "syntax.json", "{\n  \"seed\": 1,\n  \"size\": [1 2]\n}");
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    snprintf(expect, sizeof expect, "%s:3:14: invalid JSON", path);
    CHECK_CONTAINS(err, expect);
    free(out), free(err);

    /* BeamNG metadata shares the .terrain.json name: say so and point at info. */
    write_tmp(path, sizeof path, "theTerrain.terrain.json",
              "{\"version\": 9, \"datafile\": \"levels/x/theTerrain.ter\", \"size\": 256, "
              "\"heightMapSize\": 65536, \"materials\": [\"Grass\"]}");
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    CHECK_CONTAINS(err, "BeamNG terrain metadata");
    CHECK_CONTAINS(err, "use 'terrane info");
    free(out), free(err);

    write_tmp(path, sizeof path, "land.asset.json",
              "{\"type\": \"Terrain\", \"importer\": \"terrain_heightfield\", \"source\": "
              "\"land.terrain.json\"}");
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 1);
    CHECK_CONTAINS(err, "asset manifest");
    CHECK_CONTAINS(err, "'land.terrain.json'");
    free(out), free(err);
}

static void test_seeds(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_cli("seeds 3", &out, &err), 0);
    CHECK_CONTAINS(out, "world seed 3\n");
    for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
        char line[128];
        uint64_t v = trn_subseed_of(3, (trn_seed_channel)c);
        snprintf(line, sizeof line, "  %-16s 0x%016" PRIx64 "  %" PRIu64 "\n",
                 trn_seed_channel_name((trn_seed_channel)c), v, v);
        CHECK_CONTAINS(out, line);
    }
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_cli("seeds 20240611 --format json", &out, &err), 0);
    json_t *o = json_loads(out ? out : "", 0, NULL);
    CHECK(o != NULL);
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "seed")), 20240611);
        check_sub_seeds(json_object_get(o, "sub_seeds"), 20240611);
        json_decref(o);
    }
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_cli("seeds 9223372036854775807 --format json", &out, &err), 0);
    o = json_loads(out ? out : "", 0, NULL);
    CHECK(o && json_integer_value(json_object_get(o, "seed")) == INT64_MAX);
    if (o) check_sub_seeds(json_object_get(o, "sub_seeds"), UINT64_C(9223372036854775807));
    json_decref(o);
    free(out), free(err);

    const char *bad[] = {
        "seeds -1",   "seeds abc", "seeds 9223372036854775808", "seeds 1.5", "seeds 0x10",
        "seeds ' 7'", "seeds ''",  "seeds 18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(trn_test_run_cli(bad[i], &out, &err), 2);
        CHECK_CONTAINS(err, "SEED must be a whole number 0..9223372036854775807");
        CHECK(out && out[0] == '\0');
        free(out), free(err);
    }
    CHECK_EQ_INT(trn_test_run_cli("seeds", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a world seed");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("seeds 1 2", &out, &err), 2);
    CHECK_CONTAINS(err, "unexpected '2'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("seeds 1 --bogus", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("seeds --help", &out, &err), 0);
    CHECK_CONTAINS(out, "examples:");
    free(out), free(err);
}

static void test_inspect_evolution(void)
{
    /* A landform's evolution: shown under it in text, its object in JSON (null without). */
    char args[2048], path[1024], *out, *err;
    snprintf(path, sizeof path, "%s/examples/recipes/hills.json", TRN_SOURCE_DIR);
    snprintf(args, sizeof args, "inspect '%s'", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    CHECK_CONTAINS(out, "    evolved by stream power: {\"border\":\"open\",\"cascade_steps\":6,"
                        "\"diffusion\":0.06,\"dt\":5000,\"evolution_cell\":4,\"fine_steps\":2,"
                        "\"m\":0.5,");
    free(out), free(err);
    snprintf(args, sizeof args, "inspect '%s' --format json", path);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    json_t *o = json_loads(out ? out : "", 0, NULL);
    json_t *evo = json_object_get(json_array_get(json_object_get(o, "landforms"), 0), "evolution");
    CHECK(json_is_object(evo));
    CHECK(json_number_value(json_object_get(evo, "steps")) == 100);
    CHECK(strcmp(json_string_value(json_object_get(evo, "sea")), "off") == 0);
    json_decref(o);
    free(out), free(err);
    snprintf(args, sizeof args, "inspect '%s' --format json", island);
    CHECK_EQ_INT(trn_test_run_cli(args, &out, &err), 0);
    o = json_loads(out ? out : "", 0, NULL);
    json_t *lf = json_array_get(json_object_get(o, "landforms"), 0);
    CHECK(json_is_null(json_object_get(lf, "evolution")));
    json_decref(o);
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    snprintf(island, sizeof island, "%s/examples/recipes/island.json", TRN_SOURCE_DIR);
    RUN(test_inspect_text);
    RUN(test_inspect_json);
    RUN(test_inspect_errors);
    RUN(test_inspect_evolution);
    RUN(test_seeds);
    return trn_test_finish();
}
