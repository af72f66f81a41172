/* Command-line tests for terrane scatter: a palette placed on a recipe's finished surface. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
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

/* 64 x 64 cells over 64 m: flat ground at 10 m with a square bowl at 0 m (samples 16..48, a
 * hard polygon mask) holding a lake at 5 m: 33 x 33 wet samples. PALETTE is the recipe's
 * "palette" value (or nothing when NULL). */
static const char *write_recipe(const char *name, const char *palette)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    char text[4096];
    snprintf(
        text, sizeof text,
        "{\"size\": [64, 64], \"resolution\": [64, 64], \"seed\": 3, \"sea_level\": -100,\n"
        " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
        " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, "
        "1]}},\n"
        "%s%s%s"
        " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
        "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
        "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
        "  {\"id\": \"sq\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[16, 16], [48, "
        "16], [48, 48], [16, 48]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": "
        "\"rim\"}}},\n"
        "  {\"id\": \"bowl\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
        "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": "
        "\"sq\"}}},\n"
        "  {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"level\": 5, \"center\": "
        "[32, 32], \"radius\": 100}, \"inputs\": {\"field\": {\"node\": \"bowl\"}}},\n"
        "  {\"id\": \"bio\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
        "\"lake\", \"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}},\n"
        "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"bio\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}}]}}\n",
        palette ? " \"palette\": " : "", palette ? palette : "", palette ? ",\n" : "");
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

/* Shrubs one a site on a 2-unit lattice, 4 units apart: the lake and the bowl's walls filter
 * some; the rim and the dry floor keep the rest. */
static const char shrubs[] =
    "{\"format_version\": 3, \"name\": \"Shrubs\", \"placements\": {\"shrub\": {\"prefab\": "
    "\"prefab://shrub\", \"density\": 0.25, \"candidate_spacing\": 2, \"spacing\": 4}}}";

static void test_scatter_outputs(void)
{
    const char *recipe = write_recipe("shrubs.json", shrubs);
    char json1[800], json2[800], csv[800], pic[800];
    snprintf(json1, sizeof json1, "%s/a.json", tmp);
    snprintf(json2, sizeof json2, "%s/b.json", tmp);
    snprintf(csv, sizeof csv, "%s/a.csv", tmp);
    snprintf(pic, sizeof pic, "%s/dots.png", tmp);
    CHECK_EQ_INT(
        cli("scatter %s -o %s --csv %s --picture %s --threads 1 -q", recipe, json1, csv, pic), 0);
    CHECK_CONTAINS(out_text, "palette 'Shrubs'");
    CHECK_CONTAINS(out_text, "(1024 candidate sites)");
    CHECK(trn_test_exists(pic) && trn_test_exists(csv));
    /* Two threads give the same bytes. */
    CHECK_EQ_INT(cli("scatter %s -o %s --threads 2 -q", recipe, json2), 0);
    CHECK(trn_test_same_bytes(json1, json2));

    /* The JSON report: every selected site is filtered, spaced out or placed, and none stands
     * in the lake (x and z inside the wet square 16..48). */
    CHECK_EQ_INT(cli("scatter %s --format json -q", recipe), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    CHECK(o != NULL);
    json_t *r0 = json_array_get(json_object_get(o, "rules"), 0);
    CHECK(r0 && strcmp(json_string_value(json_object_get(r0, "id")), "shrub") == 0);
    if (r0) {
        json_int_t sum = json_integer_value(json_object_get(r0, "placed")) +
                         json_integer_value(json_object_get(r0, "spaced_out"));
        const char *key;
        json_t *v;
        json_object_foreach(json_object_get(r0, "filtered"), key, v) sum += json_integer_value(v);
        CHECK(sum == json_integer_value(json_object_get(r0, "selected")));
        CHECK(json_integer_value(json_object_get(json_object_get(r0, "filtered"), "water")) > 0);
        CHECK(json_integer_value(json_object_get(o, "instances")) ==
              json_integer_value(json_object_get(r0, "placed")));
    }
    json_decref(o);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(json1, &size);
    json_t *doc = text ? json_loadb(text, size, 0, &je) : NULL;
    json_t *items = json_object_get(doc, "instances");
    CHECK(json_array_size(items) > 20);
    for (size_t k = 0; k < json_array_size(items); k++) {
        json_t *it = json_array_get(items, k);
        const double x = json_real_value(json_object_get(it, "x"));
        const double z = json_real_value(json_object_get(it, "z"));
        const double y = json_real_value(json_object_get(it, "y"));
        /* Wet samples are those of the square; a site snaps to its nearest sample. */
        CHECK(!(x > 16.5 && x < 47.5 && z > 16.5 && z < 47.5));
        CHECK(y >= 0.0 && y <= 10.0);
    }
    json_decref(doc);
    free(text);
}

static void test_scatter_errors(void)
{
    const char *bare = write_recipe("bare.json", NULL);
    CHECK_EQ_INT(cli("scatter %s -q", bare), 1);
    CHECK_CONTAINS(err_text, "has no palette");
    const char *bad = write_recipe(
        "bad.json", "{\"format_version\": 3, \"name\": \"B\", \"placements\": {\"s\": "
                    "{\"model\": \"asset://m\", \"density\": 0.1, \"collision\": \"static\"}}}");
    CHECK_EQ_INT(cli("scatter %s -q", bad), 1);
    CHECK_CONTAINS(err_text, "placements.s.collision");
    CHECK_EQ_INT(cli("scatter %s -q --frob", bare), 2);
    CHECK_CONTAINS(err_text, "unknown option '--frob'");
    CHECK_EQ_INT(cli("scatter %s", "-q"), 2);
    CHECK_CONTAINS(err_text, "needs a recipe");
    CHECK_EQ_INT(cli("scatter %s --threads 0", bare), 2);
    /* The output may not replace the recipe. */
    const char *recipe = write_recipe("self.json", shrubs);
    CHECK_EQ_INT(cli("scatter %s -o %s -q", recipe, recipe), 2);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(recipe, &size);
    CHECK(text && strstr(text, "\"graph\""));
    free(text);
}

/* generate --roles: the role map and its legend; the lake's 33 x 33 wet samples are underwater
 * and every sample has a role. */
static void test_roles_output(void)
{
    const char *recipe = write_recipe("roles.json", NULL);
    char png[800];
    snprintf(png, sizeof png, "%s/roles.png", tmp);
    CHECK_EQ_INT(cli("generate %s --roles %s --format json -q", recipe, png), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    json_t *legend = json_object_get(json_array_get(json_object_get(o, "files"), 0), "legend");
    CHECK(legend != NULL);
    json_int_t total = 0, underwater = -1;
    json_t *roles = json_object_get(legend, "roles");
    CHECK_EQ_INT(json_array_size(roles), 9);
    for (size_t k = 0; k < json_array_size(roles); k++) {
        json_t *r = json_array_get(roles, k);
        total += json_integer_value(json_object_get(r, "samples"));
        if (strcmp(json_string_value(json_object_get(r, "role")), "underwater") == 0)
            underwater = json_integer_value(json_object_get(r, "samples"));
    }
    CHECK(total == 65 * 65);
    CHECK(underwater == 33 * 33);
    json_decref(o);
    CHECK(trn_test_exists(png));
    CHECK_EQ_INT(cli("generate %s --roles %s/r.tif -q", recipe, tmp), 2);
    CHECK_CONTAINS(err_text, "--roles writes a PNG");
}

static size_t count_lines(const char *path)
{
    size_t size = 0, n = 0;
    char *text = (char *)trn_test_read_file(path, &size);
    for (size_t k = 0; text && k < size; k++)
        n += text[k] == '\n';
    free(text);
    return n;
}

/* generate --export beamng: the palette's instances as the level's forest: one item file per
 * rule with as many lines as scatter places, the item data, one Forest object (not a second on
 * a second export), and a level that validates. */
static void test_forest_export(void)
{
    const char *recipe = write_recipe("forest.json", shrubs);
    CHECK_EQ_INT(cli("scatter %s --format json -q", recipe), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    const json_int_t placed = json_integer_value(json_object_get(o, "instances"));
    json_decref(o);
    CHECK(placed > 20);
    char level[800], path[900];
    snprintf(level, sizeof level, "%s/game/levels/shrubland", tmp);
    for (int round = 0; round < 2; round++) {
        CHECK_EQ_INT(cli("generate %s --export beamng:%s -q", recipe, level), 0);
        snprintf(path, sizeof path, "%s/forest/terrane_shrub.forest4.json", level);
        CHECK_EQ_INT(count_lines(path), (size_t)placed);
        snprintf(path, sizeof path, "%s/art/forest/managedItemData.json", level);
        size_t size = 0;
        char *text = (char *)trn_test_read_file(path, &size);
        CHECK(text && strstr(text, "\"terrane_shrub\"") && strstr(text, "TSForestItemData"));
        free(text);
        snprintf(path, sizeof path, "%s/main/MissionGroup/items.level.json", level);
        text = (char *)trn_test_read_file(path, &size);
        const char *first = text ? strstr(text, "\"class\":\"Forest\"") : NULL;
        CHECK(first && !strstr(first + 1, "\"class\":\"Forest\""));
        free(text);
        CHECK_EQ_INT(cli("beamng validate %s -q", level), 0);
    }
    /* Unity: the instances as tree instances beside the RAW, one prototype a rule. */
    char dir[800];
    snprintf(dir, sizeof dir, "%s/unity", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s -q", recipe, dir), 0);
    snprintf(path, sizeof path, "%s/forest_instances.json", dir);
    size_t usize = 0;
    char *utext = (char *)trn_test_read_file(path, &usize);
    json_t *u = utext ? json_loadb(utext, usize, 0, &je) : NULL;
    CHECK((json_int_t)json_array_size(json_object_get(u, "trees")) == placed);
    CHECK_EQ_INT(json_array_size(json_object_get(u, "prototypes")), 1);
    json_t *t0 = json_array_get(json_object_get(u, "trees"), 0);
    const double px = json_real_value(json_array_get(json_object_get(t0, "position"), 0));
    const double wx = json_real_value(json_array_get(json_object_get(t0, "world"), 0));
    CHECK(px >= 0.0 && px <= 1.0 && fabs(px * 64.0 - wx) < 1e-9);
    json_decref(u);
    free(utext);
    /* A level without a palette gets no forest. */
    const char *bare = write_recipe("bare2.json", NULL);
    snprintf(level, sizeof level, "%s/game/levels/bare", tmp);
    CHECK_EQ_INT(cli("generate %s --export beamng:%s -q", bare, level), 0);
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(!trn_test_exists(path));
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_scatter_outputs);
    RUN(test_scatter_errors);
    RUN(test_roles_output);
    RUN(test_forest_export);
    reset_output();
    return trn_test_finish();
}
