/* Command-line tests for water: terrane water (bodies, notes, --at), explain's water line,
 * generate --mask on water pins and node notes, and water drawn over previews and pictures. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/image.h"
#include "terrane/render.h"
#include "terrane/water.h"
#include "test.h"

static char tmp[512];

/* The lake over the bowl: 8 m, centred, reaching every sample. */
#define LAKE "\"kind\": \"lake\", \"level\": 8, \"center\": [32, 32], \"radius\": 100"

/* 64 x 64 cells over 64 m: flat ground at 10 m with a square bowl at 5 m (samples 16..48 both
 * ways, a hard polygon mask), then a water_body node 'lake' with params (LAKE: 33 x 33 = 1089
 * wet samples 3 m deep). With basins >= 0 a drainage and a Basin Water node keeping that many
 * lakes come before it; without water the output takes the bowl alone. */
static const char *write_recipe(const char *name, const char *params, int basins, bool water)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    char basin_nodes[600] = "", lake_inputs[200];
    if (basins >= 0) {
        snprintf(basin_nodes, sizeof basin_nodes,
                 "    {\"id\": \"drain\", \"type\": \"drainage\", \"inputs\": {\"field\": "
                 "{\"node\": \"bowl\"}}},\n"
                 "    {\"id\": \"basins\", \"type\": \"basin_water\", \"inputs\": {\"drainage\": "
                 "{\"node\": \"drain\", \"pin\": \"drainage\"}}, \"params\": "
                 "{\"maximum_bodies\": %d}},\n",
                 basins);
        snprintf(lake_inputs, sizeof lake_inputs,
                 "{\"field\": {\"node\": \"basins\", \"pin\": \"field\"}, \"water\": {\"node\": "
                 "\"basins\", \"pin\": \"water\"}}");
    } else {
        snprintf(lake_inputs, sizeof lake_inputs, "{\"field\": {\"node\": \"bowl\"}}");
    }
    char text[4096];
    snprintf(text, sizeof text,
             "{\n"
             "  \"size\": [64, 64], \"resolution\": [64, 64], \"seed\": 7, \"sea_level\": -50,\n"
             "  \"default_landform\": \"plain\", \"landforms\": {\"plain\": {\"base_height\": "
             "10}},\n"
             "  \"default_biome\": \"grass\", \"biomes\": {\"grass\": {\"color\": [0.4, 0.6, "
             "0.3, 1]}},\n"
             "  \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
             "    {\"id\": \"flat\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
             "    {\"id\": \"square\", \"type\": \"polygon_mask\", \"inputs\": {\"field\": "
             "{\"node\": \"flat\"}}, \"params\": {\"points\": [[16, 16], [48, 16], [48, 48], "
             "[16, 48]], \"falloff\": 0}},\n"
             "    {\"id\": \"bowl\", \"type\": \"height_offset\", \"inputs\": {\"field\": "
             "{\"node\": \"flat\"}, \"mask\": {\"node\": \"square\"}}, \"params\": {\"offset\": "
             "-5}},\n"
             "%s"
             "    {\"id\": \"lake\", \"type\": \"water_body\", \"inputs\": %s, \"params\": "
             "{%s}},\n"
             "    {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": "
             "{\"node\": \"%s\"%s}%s}}\n"
             "  ]}\n"
             "}\n",
             basin_nodes, lake_inputs, params, water ? "lake" : "bowl",
             water ? ", \"pin\": \"field\"" : "",
             water ? ", \"water\": {\"node\": \"lake\", \"pin\": \"water\"}" : "");
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

static const char *bowl(void)
{
    return write_recipe("bowl.json", LAKE, -1, true);
}

static json_t *parse(const char *out)
{
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(j != NULL);
    return j;
}

static double num(const json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* Run the CLI; stdout and stderr kept for the checks, freed by the next call. */
static char *out_text, *err_text;
static void reset_output(void)
{
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
}
#define cli(fmt, ...) (reset_output(), trn_test_run_clif(fmt, &out_text, &err_text, __VA_ARGS__))

static void test_bodies(void)
{
    CHECK_EQ_INT(cli("water '%s' -q%s", bowl(), ""), 0);
    CHECK_CONTAINS(out_text, "bowl.json: 1 water body on 65 x 65 samples: wet area 1089.000, "
                             "volume 3267.000, 1089 wet samples\n"
                             "lake 'lake': level 8.000 m, wet area 1089.000, volume 3267.000, "
                             "1089 wet samples\n");
    CHECK(!strstr(out_text, "node notes"));
    CHECK(!strstr(out_text, "warning"));
    CHECK_EQ_INT(strlen(err_text), 0);

    CHECK_EQ_INT(cli("water '%s' -q --format json%s", bowl(), ""), 0);
    json_t *j = parse(out_text);
    CHECK(json_is_true(json_object_get(j, "has_water")));
    json_t *bodies = json_object_get(j, "bodies");
    CHECK_EQ_INT(json_array_size(bodies), 1);
    json_t *b = json_array_get(bodies, 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "index")), 0);
    CHECK(strcmp(str(b, "id"), "lake") == 0);
    CHECK(strcmp(str(b, "kind"), "lake") == 0);
    CHECK(num(b, "level") == 8.0);
    CHECK(json_number_value(json_array_get(json_object_get(b, "surface"), 0)) == 8.0);
    CHECK(json_number_value(json_array_get(json_object_get(b, "surface"), 1)) == 8.0);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "wet_samples")), 1089);
    CHECK(num(b, "area") == 1089.0);
    CHECK(num(b, "volume") == 3267.0);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "warning_count")), 0);
    CHECK(json_is_null(json_object_get(b, "warning")));
    CHECK(json_object_get(b, "surface_mode") == NULL); /* rivers only */
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "wet_samples")), 1089);
    CHECK(num(j, "area") == 1089.0);
    CHECK(num(j, "volume") == 3267.0);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "notes")), 0);
    CHECK(json_object_get(j, "at") == NULL);
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(j, "cells"), 0)), 64);
    json_decref(j);
}

static void test_at(void)
{
    const char *r = bowl();
    /* The bowl's floor: 3 m under the lake's 8 m, flat and still. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32,6"), 0);
    CHECK_CONTAINS(out_text, "at 32.000,32.000: lake 'lake', depth 3.000 m, ground 5.000 m\n"
                             "surface 32.000000 8.000000 32.000000\n"
                             "normal 0.000000 1.000000 0.000000\n"
                             "column up 0.000000 1.000000 0.000000\n"
                             "flow velocity 0.000000 0.000000 0.000000 m/s\n"
                             "y 6.000: under water\n");
    CHECK(!strstr(out_text, "wet area")); /* --at prints the column only */
    /* Underwater is ground <= y < surface: the surface itself and below the bed are not. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32,8"), 0);
    CHECK_CONTAINS(out_text, "y 8.000: not under water\n");
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32,5"), 0);
    CHECK_CONTAINS(out_text, "y 5.000: under water\n");
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32,4.999"), 0);
    CHECK_CONTAINS(out_text, "y 4.999: not under water\n");
    /* Half a cell out on the wall: ground 7.5 interpolated on the triangle, 0.5 m deep. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "15.5,16"), 0);
    CHECK_CONTAINS(out_text, "at 15.500,16.000: lake 'lake', depth 0.500 m, ground 7.500 m\n");
    CHECK(!strstr(out_text, "\ny "));
    /* Dry ground: the nearest wet sample, the first in sample order among equals. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "15,15"), 0);
    CHECK_CONTAINS(out_text, "at 15.000,15.000: dry, ground 10.000 m; the nearest wet sample is "
                             "1.414 away at (16, 16)\n");
    /* (16, 32) and (16, 33) are equally near: the first in sample order is named. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "10,32.5"), 0);
    CHECK_CONTAINS(out_text, "the nearest wet sample is 6.021 away at (16, 32)\n");
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "0,32,3"), 0);
    CHECK_CONTAINS(out_text, "at 0.000,32.000: dry, ground 10.000 m; the nearest wet sample is "
                             "16.000 away at (16, 32)\ny 3.000: not under water\n");
    /* The terrain's own corners are on it. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "64,64"), 0);
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "0,0"), 0);

    CHECK_EQ_INT(cli("water '%s' -q --format json --at %s", r, "32,32,6"), 0);
    json_t *j = parse(out_text);
    json_t *at = json_object_get(j, "at");
    CHECK(strcmp(str(at, "state"), "wet") == 0);
    CHECK(strcmp(str(at, "body"), "lake") == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(at, "body_index")), 0);
    CHECK(strcmp(str(at, "kind"), "lake") == 0);
    CHECK(num(at, "depth") == 3.0);
    CHECK(num(at, "ground") == 5.0);
    CHECK(json_number_value(json_array_get(json_object_get(at, "surface"), 1)) == 8.0);
    CHECK(json_number_value(json_array_get(json_object_get(at, "normal"), 1)) == 1.0);
    CHECK(json_number_value(json_array_get(json_object_get(at, "column_up"), 1)) == 1.0);
    CHECK(json_number_value(json_array_get(json_object_get(at, "flow_velocity"), 0)) == 0.0);
    CHECK_EQ_INT(json_array_size(json_object_get(at, "position")), 3);
    CHECK(json_is_true(json_object_get(at, "underwater")));
    CHECK_EQ_INT(json_array_size(json_object_get(j, "bodies")), 1); /* still listed */
    json_decref(j);

    CHECK_EQ_INT(cli("water '%s' -q --format json --at %s", r, "15,15"), 0);
    j = parse(out_text);
    at = json_object_get(j, "at");
    CHECK(strcmp(str(at, "state"), "dry") == 0);
    CHECK(json_is_null(json_object_get(at, "body")));
    CHECK(json_object_get(at, "underwater") == NULL); /* only with a height */
    json_t *near = json_object_get(at, "nearest_wet");
    CHECK(fabs(num(near, "distance") - sqrt(2.0)) < 1e-12);
    CHECK(num(near, "x") == 16.0 && num(near, "z") == 16.0);
    json_decref(j);
}

static void test_at_errors(void)
{
    const char *r = bowl();
    static const char *const bad[] = {"1,x",   "1",    "1,2,3,4", "nan,1",
                                      "1,inf", "1,,2", ",1",      "1,2,"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK_EQ_INT(cli("water '%s' --at '%s'", r, bad[k]), 2);
        CHECK_CONTAINS(err_text, "terrane water: --at expects X,Z or X,Z,Y as finite numbers");
        CHECK_EQ_INT(strlen(out_text), 0);
    }
    /* Just past each edge is refused, naming the bounds. */
    static const char *const outside[] = {"64.001,0", "-0.001,0", "0,64.001", "0,-0.001"};
    for (size_t k = 0; k < sizeof outside / sizeof outside[0]; k++) {
        CHECK_EQ_INT(cli("water '%s' --at %s", r, outside[k]), 2);
        CHECK_CONTAINS(err_text, "is outside the terrain: x must be 0..64.000 and z 0..64.000");
    }
    CHECK_EQ_INT(cli("water '%s' --at 1,1 --at %s", r, "2,2"), 2);
    CHECK_CONTAINS(err_text, "--at is given twice");
    CHECK_EQ_INT(cli("water '%s' --depth%s", r, ""), 2);
    CHECK_CONTAINS(err_text, "unknown option '--depth'");
    CHECK_EQ_INT(cli("water%s%s", "", ""), 2);
    CHECK_CONTAINS(err_text, "needs a recipe");
    CHECK_EQ_INT(cli("water '%s' --threads %s", r, "0"), 2);
    CHECK_CONTAINS(err_text, "--threads must be 1 to 1024, not 0");

    /* A recipe error names the file, line and column; a graph error its place too. */
    char path[700];
    snprintf(path, sizeof path, "%s/bad.json", tmp);
    const char *text = "{\n  \"size\": [64, 64],\n  \"resolution\": [64, \"x\"]\n}\n";
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK_EQ_INT(cli("water '%s'%s", path, ""), 1);
    CHECK_CONTAINS(err_text, "bad.json:3:22: resolution[1]: expected a whole number");
    const char *lake = write_recipe("typo.json", LAKE ", \"radius\": 5", -1, true);
    CHECK_EQ_INT(cli("water '%s'%s", lake, ""), 1);
    CHECK_CONTAINS(err_text, "typo.json:");
    CHECK_CONTAINS(err_text, "duplicate object key");
}

static void test_no_water(void)
{
    const char *r = write_recipe("dry.json", LAKE, -1, false);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "dry.json publishes no water (no water node feeds the Terrain "
                             "Output's water input)\n");
    CHECK_EQ_INT(cli("water '%s' -q --format json%s", r, ""), 0);
    json_t *j = parse(out_text);
    CHECK(json_is_false(json_object_get(j, "has_water")));
    CHECK(json_is_array(json_object_get(j, "bodies")));
    CHECK_EQ_INT(json_array_size(json_object_get(j, "bodies")), 0);
    CHECK(num(j, "area") == 0.0);
    json_decref(j);
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32"), 0);
    CHECK_CONTAINS(out_text, "at 32.000,32.000: no water (the recipe publishes none); ground "
                             "5.000 m\n");
    CHECK_EQ_INT(cli("water '%s' -q --format json --at %s", r, "32,32"), 0);
    j = parse(out_text);
    CHECK(strcmp(str(json_object_get(j, "at"), "state"), "no water") == 0);
    CHECK(json_object_get(json_object_get(j, "at"), "nearest_wet") == NULL);
    json_decref(j);
}

static void test_warnings_and_notes(void)
{
    /* A boundary inside the bowl: the floor beyond it, below the level, leaks on all four
     * sides (21 samples each); the first leak in sample order is (20, 19). */
    const char *r = write_recipe(
        "leak.json", LAKE ", \"boundary\": [[20, 20], [40, 20], [40, 40], [20, 40]]", -1, true);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "lake 'lake': level 8.000 m, wet area 441.000, volume 1323.000, "
                             "441 wet samples\n"
                             "  warning: wet ground reaches the boundary below the level at ");
    CHECK_CONTAINS(out_text, " (84 leaking samples)\nnode notes:\n  lake (water_body): wet "
                             "ground reaches the boundary below the level at ");
    CHECK_EQ_INT(cli("water '%s' -q --format json%s", r, ""), 0);
    json_t *j = parse(out_text);
    json_t *b = json_array_get(json_object_get(j, "bodies"), 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "warning_count")), 84);
    json_t *w = json_object_get(b, "warning");
    CHECK(num(w, "x") == 20.0 && num(w, "z") == 19.0);
    CHECK_CONTAINS(str(w, "message"), "wet ground reaches the boundary below the level at");
    json_t *n = json_array_get(json_object_get(j, "notes"), 0);
    CHECK(strcmp(str(n, "node"), "lake") == 0);
    CHECK(strcmp(str(n, "type"), "water_body") == 0);
    CHECK_CONTAINS(str(n, "note"), "(84 warnings in all)");
    json_decref(j);

    /* inspect counts the fixed lake without generating; --water generates it and warns with
     * the level that would hold. */
    CHECK_EQ_INT(cli("inspect '%s'%s", r, ""), 0);
    CHECK_CONTAINS(err_text, "1 lake with a fixed level; 'terrane inspect --water' generates");
    CHECK_EQ_INT(cli("inspect '%s' --water%s", r, ""), 0);
    CHECK_CONTAINS(err_text, "terrane inspect: warning: ");
    CHECK_CONTAINS(err_text, "lake 'lake': wet ground reaches the boundary below the level at "
                             "(20, 19); its water is in no closed basin inside the footprint");
    CHECK_CONTAINS(out_text, "leaks (84 samples)");
    CHECK_CONTAINS(out_text, "1 leaking body or node\n");
    CHECK_EQ_INT(cli("inspect '%s' --water --format json%s", r, ""), 0);
    j = parse(out_text);
    json_t *lw = json_object_get(j, "water");
    CHECK_EQ_INT(json_integer_value(json_object_get(lw, "leaks")), 1);
    b = json_array_get(json_object_get(lw, "bodies"), 0);
    CHECK(strcmp(str(b, "level_mode"), "fixed") == 0 && num(b, "level") == 8.0);
    CHECK_EQ_INT(json_integer_value(json_object_get(b, "leaking_samples")), 84);
    json_decref(j);

    /* Level "spill" fills the bowl to 0.5 m under its rim: no leak anywhere. */
    r = write_recipe("spill.json", "\"level\": \"spill\", \"center\": [32, 32]", -1, true);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "lake 'lake': level 9.500 m (spill), wet area 1089.000, volume "
                             "4900.500, 1089 wet samples\n"
                             "  level spill: the basin spills at 10.000 m over the grid's edge, "
                             "by the pass at (");
    CHECK_CONTAINS(out_text, "), less 0.5 m\n");
    CHECK(!strstr(out_text, "warning"));
    CHECK_EQ_INT(cli("inspect '%s' --water%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "lake 'lake': level 9.500 m (spill), spill level 10.000 m: holds\n");
    CHECK_CONTAINS(out_text, "0 leaking bodies or nodes\n");
    CHECK(!strstr(err_text ? err_text : "", "fixed level"));

    /* A Basin Water node keeping none of the bowl's one eligible basin says so. */
    r = write_recipe("basin0.json", LAKE, 0, true);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "node notes:\n  basins (basin_water): 1 basins are eligible, "
                             "maximum_bodies keeps the 0 deepest\n");
    CHECK_EQ_INT(cli("water '%s' -q --format json%s", r, ""), 0);
    j = parse(out_text);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "notes")), 1);
    CHECK(strcmp(str(json_array_get(json_object_get(j, "notes"), 0), "node"), "basins") == 0);
    json_decref(j);
    /* generate prints each node's note under its line and in its JSON node list. */
    char png[700];
    snprintf(png, sizeof png, "%s/basin0.png", tmp);
    CHECK_EQ_INT(cli("generate '%s' -o '%s'", r, png), 0);
    CHECK_CONTAINS(err_text, "  node basins (basin_water): evaluated in ");
    CHECK_CONTAINS(err_text, "\n    note: 1 basins are eligible, maximum_bodies keeps the 0 "
                             "deepest\n");
    CHECK_EQ_INT(cli("--format json generate '%s' -o '%s'", r, png), 0);
    j = parse(out_text);
    json_t *nodes = json_object_get(j, "nodes");
    size_t with_note = 0;
    for (size_t k = 0; k < json_array_size(nodes); k++) {
        json_t *node = json_array_get(nodes, k);
        if (strcmp(str(node, "id"), "basins") == 0) {
            CHECK(strcmp(str(node, "note"), "1 basins are eligible, maximum_bodies keeps the 0 "
                                            "deepest") == 0);
            with_note++;
        } else {
            CHECK(json_is_null(json_object_get(node, "note")));
        }
    }
    CHECK_EQ_INT(with_note, 1);
    json_decref(j);

    /* Kept, the basin's lake fills to the rim and the later lake finds its samples taken. */
    r = write_recipe("basin1.json", LAKE, 1, true);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "basin1.json: 2 water bodies on 65 x 65 samples: wet area 1089.000, "
                             "volume 5445.000, 1089 wet samples\n"
                             "lake 'basins/basin/16_16': level 10.000 m, wet area 1089.000, "
                             "volume 5445.000, 1089 wet samples\n"
                             "lake 'lake': level 8.000 m, wet area 0.000, volume 0.000, 0 wet "
                             "samples\n");
}

static void test_river(void)
{
    /* A follow-bed river along z = 32 on the bowl's floor: bed 4 m, 2 m of water, so its
     * surface is 6 m wherever it is wet; a river has no single level. */
    const char *r = write_recipe("river.json",
                                 "\"kind\": \"river\", \"river_path\": [[20, 4, 32], [44, 4, "
                                 "32]], \"river_surface_mode\": \"follow_bed\", "
                                 "\"river_depth\": 2, \"width\": 4, \"flow_speed\": 1.5",
                                 -1, true);
    CHECK_EQ_INT(cli("water '%s' -q%s", r, ""), 0);
    CHECK_CONTAINS(out_text, "river 'lake': surface 6.000..6.000 m, wet area ");
    CHECK_EQ_INT(cli("water '%s' -q --format json%s", r, ""), 0);
    json_t *j = parse(out_text);
    json_t *b = json_array_get(json_object_get(j, "bodies"), 0);
    CHECK(strcmp(str(b, "kind"), "river") == 0);
    CHECK(json_is_null(json_object_get(b, "level")));
    CHECK(strcmp(str(b, "surface_mode"), "follow_bed") == 0);
    CHECK(json_number_value(json_array_get(json_object_get(b, "surface"), 0)) == 6.0);
    json_decref(j);
    /* On the path: the carved bed 2 m under the surface, flowing along +x. */
    CHECK_EQ_INT(cli("water '%s' -q --at %s", r, "32,32"), 0);
    CHECK_CONTAINS(out_text, "at 32.000,32.000: river 'lake', depth 2.000 m, ground 4.000 m\n"
                             "surface 32.000000 6.000000 32.000000\n");
    CHECK_CONTAINS(out_text, "flow velocity 1.500000 0.000000 0.000000 m/s\n");
}

static void test_explain(void)
{
    const char *r = bowl();
    CHECK_EQ_INT(cli("explain '%s' -q --at %s", r, "32,32"), 0);
    /* The lake the output publishes is the water explain measures from (no Biome Rules node
     * has its own): inside it the water distance is 0 and the substrate wet. */
    CHECK_CONTAINS(out_text, "water distance 0.000\nsubstrate wet\n"
                             "Water: lake 'lake', depth 3.000, surface 8.000\n");
    CHECK_EQ_INT(cli("explain '%s' -q --at %s", r, "15,15"), 0);
    CHECK_CONTAINS(out_text, "Water: dry, nearest wet sample 1.414 away at (16, 16)\n");
    CHECK_EQ_INT(cli("explain '%s' -q --format json --at %s", r, "32,32"), 0);
    json_t *j = parse(out_text);
    json_t *w = json_object_get(j, "water");
    CHECK(strcmp(str(w, "state"), "wet") == 0);
    CHECK(strcmp(str(w, "body"), "lake") == 0);
    CHECK(strcmp(str(w, "kind"), "lake") == 0);
    CHECK(num(w, "depth") == 3.0);
    CHECK(num(w, "surface") == 8.0);
    json_decref(j);
    CHECK_EQ_INT(cli("explain '%s' -q --format json --at %s", r, "0,0"), 0);
    j = parse(out_text);
    w = json_object_get(j, "water");
    CHECK(strcmp(str(w, "state"), "dry") == 0);
    CHECK(fabs(num(w, "nearest_wet_distance") - sqrt(512.0)) < 1e-12);
    CHECK(json_number_value(json_array_get(json_object_get(w, "nearest_wet"), 0)) == 16.0);
    json_decref(j);
    r = write_recipe("dry.json", LAKE, -1, false);
    CHECK_EQ_INT(cli("explain '%s' -q --at %s", r, "32,32"), 0);
    CHECK(!strstr(out_text, "Water:"));
    CHECK_CONTAINS(out_text, "substrate soil\nThe graph has no Biome Rules");
    CHECK_EQ_INT(cli("explain '%s' -q --format json --at %s", r, "32,32"), 0);
    j = parse(out_text);
    CHECK(json_is_null(json_object_get(j, "water")));
    json_decref(j);
}

/* A 16-bit grey PNG's value at sample (i, j) (north up: row cells_z - j). */
static uint16_t mask_at(const trn_image *img, uint32_t i, uint32_t j)
{
    return ((const uint16_t *)img->data)[(size_t)(img->height - 1u - j) * img->width + i];
}

static void test_masks(void)
{
    const char *r = bowl();
    char cov[700], depth[700], spec[1500];
    snprintf(cov, sizeof cov, "%s/cov.png", tmp);
    snprintf(depth, sizeof depth, "%s/depth.png", tmp);
    snprintf(spec, sizeof spec, "--mask 'lake.water=%s' --mask 'lake.water:depth=%s'", cov, depth);
    CHECK_EQ_INT(cli("--format json generate '%s' %s", r, spec), 0);
    CHECK_CONTAINS(err_text, "cov.png (water coverage of lake.water: wet 65535, dry 0, north up)");
    CHECK_CONTAINS(err_text, "depth.png (water depth of lake.water:depth: metres = value * "
                             "4.57770657e-05, deepest 3 m as 65535; dry 0; north up)");
    json_t *j = parse(out_text);
    json_t *files = json_object_get(j, "output_details");
    CHECK_EQ_INT(json_array_size(files), 2);
    CHECK(strcmp(str(json_array_get(files, 0), "what"), "water coverage") == 0);
    json_t *d = json_array_get(files, 1);
    CHECK(strcmp(str(d, "what"), "water depth") == 0);
    CHECK(num(d, "quantum") == 3.0 / 65535.0);
    CHECK(num(d, "max_depth") == 3.0);
    json_decref(j);
    trn_image img;
    memset(&img, 0, sizeof img);
    CHECK_OK(trn_png_read(cov, NULL, &img, NULL));
    CHECK_EQ_INT(img.bit_depth, 16);
    CHECK_EQ_INT(img.channels, 1);
    size_t wet = 0, other = 0;
    for (uint32_t j2 = 0; img.data && j2 < 65; j2++)
        for (uint32_t i = 0; i < 65; i++) {
            const uint16_t v = mask_at(&img, i, j2);
            const bool inside = i >= 16 && i <= 48 && j2 >= 16 && j2 <= 48;
            wet += v == 65535 && inside;
            other += v != (inside ? 65535 : 0);
        }
    CHECK_EQ_INT(wet, 1089);
    CHECK_EQ_INT(other, 0);
    trn_image_dispose(&img);
    CHECK_OK(trn_png_read(depth, NULL, &img, NULL));
    if (img.data) {
        CHECK_EQ_INT(mask_at(&img, 32, 32), 65535);
        CHECK_EQ_INT(mask_at(&img, 16, 48), 65535);
        CHECK_EQ_INT(mask_at(&img, 15, 32), 0); /* a dry shoreline corner */
        CHECK_EQ_INT(mask_at(&img, 0, 0), 0);
    }
    trn_image_dispose(&img);

    /* Two depths: a lake at 9 m over the bowl (4 m) next to one at 8 m would need two bowls;
     * instead the basin's 10 m lake (5 m deep) alone: the deepest is 5 m. */
    const char *b1 = write_recipe("basin1.json", LAKE, 1, true);
    CHECK_EQ_INT(cli("generate '%s' --mask 'basins.water:depth=%s'", b1, depth), 0);
    CHECK_CONTAINS(err_text, "metres = value * 7.62951095e-05, deepest 5 m as 65535");

    /* Depth belongs to water; other kinds are refused by name. */
    CHECK_EQ_INT(cli("generate '%s' --mask 'square.mask:depth=%s'", r, depth), 1);
    CHECK_CONTAINS(err_text, ":depth is for water outputs; that output is a mask");
    CHECK_EQ_INT(cli("generate '%s' --mask 'lake.field=%s'", r, depth), 1);
    CHECK_CONTAINS(err_text, "that output is a heightfield, not a mask or water");
    CHECK_EQ_INT(cli("generate '%s' --mask 'lake.water:depth=%s.tif'", r, depth), 2);
    CHECK_CONTAINS(err_text, "--mask takes NODE[.PIN]=FILE.png, or NODE.PIN:depth=FILE.png for a "
                             "water pin's depth");
}

static bool read_png8(const char *path, trn_image *img)
{
    memset(img, 0, sizeof *img);
    return trn_png_read(path, NULL, img, NULL) == TRN_OK && img->bit_depth == 8;
}

static const uint8_t *pixel(const trn_image *img, uint32_t i, uint32_t j)
{
    return (const uint8_t *)img->data +
           ((size_t)(img->height - 1u - j) * img->width + i) * img->channels;
}

static void test_pictures(void)
{
    char wet[700], dry[700]; /* write_recipe's path is overwritten by the next call */
    snprintf(wet, sizeof wet, "%s", bowl());
    snprintf(dry, sizeof dry, "%s", write_recipe("dry.json", LAKE, -1, false));
    char a[700], b[700], c[700], bio[700];
    snprintf(a, sizeof a, "%s/wet_preview.png", tmp);
    snprintf(b, sizeof b, "%s/dry_preview.png", tmp);
    snprintf(c, sizeof c, "%s/render.png", tmp);
    snprintf(bio, sizeof bio, "%s/biomes.png", tmp);
    CHECK_EQ_INT(cli("generate '%s' --preview '%s'", wet, a), 0);
    CHECK_CONTAINS(err_text, "(multidirectional hillshade with the published water)");
    CHECK_EQ_INT(cli("generate '%s' --preview '%s'", dry, b), 0);
    CHECK_CONTAINS(err_text, "(multidirectional hillshade)");
    trn_image wi, di;
    CHECK(read_png8(a, &wi));
    CHECK(read_png8(b, &di));
    CHECK_EQ_INT(wi.channels, 3);
    CHECK_EQ_INT(di.channels, 1); /* without water: the grey shading as before */
    if (wi.data && di.data && wi.channels == 3 && di.channels == 1) {
        /* Dry samples keep their shading in every channel, shoreline corners included. */
        size_t changed_dry = 0, kept_wet = 0;
        for (uint32_t j = 0; j < 65; j++)
            for (uint32_t i = 0; i < 65; i++) {
                const uint8_t *p = pixel(&wi, i, j), g = *pixel(&di, i, j);
                const bool inside = i >= 16 && i <= 48 && j >= 16 && j <= 48;
                if (!inside) changed_dry += p[0] != g || p[1] != g || p[2] != g;
                if (inside) kept_wet += p[0] == g && p[1] == g && p[2] == g;
            }
        CHECK_EQ_INT(changed_dry, 0);
        CHECK_EQ_INT(kept_wet, 0);
        /* 3 m deep: s = exp(-3 / 4), colour s * shallow + (1 - s) * deep, alpha 0.6402 over
         * the flat floor's grey. */
        const uint8_t g = *pixel(&di, 32, 32);
        const double s = exp(-0.75);
        const double sh[4] = {0.10, 0.45, 0.50, 0.35}, dp[4] = {0.02, 0.10, 0.16, 0.90};
        const double al = s * sh[3] + (1.0 - s) * dp[3];
        for (int k = 0; k < 3; k++) {
            const double v = g * (1.0 - al) + 255.0 * (s * sh[k] + (1.0 - s) * dp[k]) * al;
            CHECK_EQ_INT(pixel(&wi, 32, 32)[k], (int)(v + 0.5));
        }
    }
    /* terrane render on the recipe draws the same picture; --no-water the plain shading. */
    CHECK_EQ_INT(cli("render '%s' -o '%s' --multidirectional", wet, c), 0);
    CHECK_CONTAINS(err_text, "(hillshade with the recipe's water, 65 x 65)");
    CHECK(trn_test_same_bytes(a, c));
    CHECK_EQ_INT(cli("render '%s' -o '%s' --multidirectional --no-water", wet, c), 0);
    CHECK(trn_test_same_bytes(b, c));
    CHECK_EQ_INT(cli("--format json render '%s' -o '%s'", wet, c), 0);
    json_t *j = parse(out_text);
    CHECK(json_is_true(json_object_get(j, "water_drawn")));
    CHECK(strcmp(str(j, "input_format"), "recipe") == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "channels")), 3);
    json_decref(j);
    CHECK_EQ_INT(cli("render '%s' -o '%s' --mode layers", wet, c), 1);
    CHECK_CONTAINS(err_text, "is a recipe: it has no material layers to draw");
    CHECK_EQ_INT(cli("render '%s' -o '%s' --no-water", a, c), 2);
    CHECK_CONTAINS(err_text, "--no-water is for recipes");
    trn_image_dispose(&wi);
    trn_image_dispose(&di);

    /* Biome colours under the water: grass (102, 153, 77) 3 m deep; indices stay numbers. */
    CHECK_EQ_INT(cli("generate '%s' --biomes '%s'", wet, bio), 0);
    CHECK_CONTAINS(err_text, "(biome colours under the published water, 65 x 65)");
    CHECK(read_png8(bio, &wi));
    if (wi.data && wi.channels == 4) {
        const uint8_t under[4] = {46, 98, 80, 255}, grass[4] = {102, 153, 77, 255};
        CHECK(memcmp(pixel(&wi, 32, 32), under, 4) == 0);
        CHECK(memcmp(pixel(&wi, 16, 16), under, 4) == 0);
        CHECK(memcmp(pixel(&wi, 15, 16), grass, 4) == 0);
    }
    trn_image_dispose(&wi);
    CHECK_EQ_INT(cli("generate '%s' --biomes '%s' --biome-index", wet, bio), 0);
    CHECK(read_png8(bio, &wi));
    CHECK_EQ_INT(wi.channels, 1);
    if (wi.data) CHECK_EQ_INT(*pixel(&wi, 32, 32), 0);
    trn_image_dispose(&wi);
}

/* The library's overlay on hand-made pictures: exact bytes, alpha, and no change when dry. */
static void test_overlay(void)
{
    float heights[9] = {0, 0, 0, 0, 0, 0, 0, 0, 5};
    trn_field ground = {2, 2, 2.0, 2.0, heights, 0, 0};
    trn_water_body body;
    trn_water_body_init(&body, TRN_WATER_LAKE, "pond");
    body.level = 1.0;
    body.center_x = body.center_z = 0.0;
    body.radius = 10.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&ground, &body, 1, NULL, &w, NULL));
    trn_water_body_dispose(&body);
    /* Grey 100 under 1 m: s = exp(-1/4). Sample (2, 2) is 5 m high: dry, untouched. */
    uint8_t *grey = malloc(9);
    memset(grey, 100, 9);
    trn_raster8 pic = {3, 3, 1, grey};
    CHECK_OK(trn_render_water_overlay(&pic, &ground, &w, NULL));
    CHECK_EQ_INT(pic.channels, 3);
    const uint8_t tinted[3] = {63, 98, 104}, plain[3] = {100, 100, 100};
    CHECK(memcmp(pic.pixels + 3 * 6, tinted, 3) == 0); /* row 2 = sample row 0 */
    CHECK(memcmp(pic.pixels + 3 * 2, plain, 3) == 0);  /* sample (2, 2) at the top right */
    CHECK(memcmp(pic.pixels + 3 * 1, tinted, 3) == 0);
    trn_raster8_dispose(&pic);
    uint8_t *rgba = malloc(36);
    for (int k = 0; k < 9; k++)
        memcpy(rgba + 4 * k, (const uint8_t[4]){200, 100, 50, 128}, 4);
    trn_raster8 pic4 = {3, 3, 4, rgba};
    CHECK_OK(trn_render_water_overlay(&pic4, &ground, &w, NULL));
    CHECK_EQ_INT(pic4.channels, 4);
    CHECK(memcmp(pic4.pixels, (const uint8_t[4]){116, 98, 78, 188}, 4) == 0);
    CHECK(memcmp(pic4.pixels + 8, (const uint8_t[4]){200, 100, 50, 128}, 4) == 0);
    /* Wrong sizes and grids are refused, leaving the picture as it was. */
    trn_raster8 small = {2, 3, 4, pic4.pixels};
    CHECK_STATUS(trn_render_water_overlay(&small, &ground, &w, NULL), TRN_ERR_MISMATCH);
    trn_field other = {1, 4, 2.0, 2.0, heights, 0, 0};
    trn_raster8 other_pic = {2, 5, 1, pic4.pixels};
    CHECK_STATUS(trn_render_water_overlay(&other_pic, &other, &w, NULL), TRN_ERR_MISMATCH);
    CHECK_EQ_INT(other_pic.channels, 1);
    trn_raster8_dispose(&pic4);
    trn_water_dispose(&w);

    /* Nothing wet: a grey picture stays grey, byte for byte. */
    trn_water_body high;
    trn_water_body_init(&high, TRN_WATER_LAKE, "none");
    high.level = -1.0;
    CHECK_OK(trn_water_resolve(&ground, &high, 1, NULL, &w, NULL));
    trn_water_body_dispose(&high);
    grey = malloc(9);
    memset(grey, 77, 9);
    trn_raster8 g2 = {3, 3, 1, grey};
    CHECK_OK(trn_render_water_overlay(&g2, &ground, &w, NULL));
    CHECK_EQ_INT(g2.channels, 1);
    CHECK(g2.pixels == grey && g2.pixels[4] == 77);
    trn_raster8_dispose(&g2);
    trn_water_dispose(&w);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_skip("no temporary folder");
    RUN(test_bodies);
    RUN(test_at);
    RUN(test_at_errors);
    RUN(test_no_water);
    RUN(test_warnings_and_notes);
    RUN(test_river);
    RUN(test_explain);
    RUN(test_masks);
    RUN(test_pictures);
    RUN(test_overlay);
    free(out_text);
    free(err_text);
    return trn_test_finish();
}
