/* Command-line tests for terrane scatter: a palette placed on a recipe's finished surface. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "terrane/palette.h"
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

/* The same shrubs with a shape: BeamNG writes forest items only for rules that have one. */
static const char shaped_shrubs[] =
    "{\"format_version\": 3, \"name\": \"Shrubs\", \"placements\": {\"shrub\": {\"model\": "
    "\"asset://levels/shrubland/art/shapes/shrub.dae\", \"collision\": \"none\", \"density\": "
    "0.25, \"candidate_spacing\": 2, \"spacing\": 4}}}";

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
    /* The candidate budget: 32 x 32 lattice sites; one fewer stops before placing, naming the
     * option that raises it; bad values are usage errors. */
    const char *budget = write_recipe("budget.json", shrubs);
    CHECK_EQ_INT(cli("scatter %s -q --max-candidates 1023", budget), 1);
    CHECK_CONTAINS(err_text, "1024 over all rules, above the candidate budget of 1023");
    CHECK_CONTAINS(err_text, "terrane scatter --max-candidates N");
    CHECK_EQ_INT(cli("scatter %s -q --max-candidates 1024", budget), 0);
    static const char *const bad_counts[] = {"0", "-5", "abc", "1e3", "99999999999999999999"};
    for (size_t k = 0; k < sizeof bad_counts / sizeof bad_counts[0]; k++) {
        CHECK_EQ_INT(cli("scatter %s -q --max-candidates %s", budget, bad_counts[k]), 2);
        CHECK_CONTAINS(err_text, "--max-candidates takes a whole number");
    }
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
    json_t *legend =
        json_object_get(json_array_get(json_object_get(o, "output_details"), 0), "legend");
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
    const char *recipe = write_recipe("forest.json", shaped_shrubs);
    CHECK_EQ_INT(cli("scatter %s --format json -q", recipe), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    const json_int_t placed = json_integer_value(json_object_get(o, "instances"));
    json_decref(o);
    CHECK(placed > 20);
    char level[800], path[900];
    snprintf(level, sizeof level, "%s/game/levels/shrubland", tmp);
    for (int round = 0; round < 2; round++) {
        CHECK_EQ_INT(cli("generate %s --export beamng:%s -q --format json", recipe, level), 0);
        json_t *summary = json_loads(out_text ? out_text : "", 0, &je);
        json_t *veg = json_object_get(json_object_get(summary, "beamng"), "vegetation");
        CHECK(json_integer_value(json_object_get(veg, "forest_items")) == placed);
        const char *format = json_string_value(json_object_get(veg, "forest_format"));
        CHECK(format && strcmp(format, "forest4") == 0);
        CHECK(json_integer_value(json_object_get(veg, "ground_covers")) == 0);
        json_decref(summary);
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
    /* A modder's own entries in managedItemData.json keep their bytes (tabs, key order, a
     * number as the editor wrote it) when the export adds or updates its own; an export that
     * changes nothing leaves the file alone. */
    snprintf(path, sizeof path, "%s/art/forest/managedItemData.json", level);
    const char modder[] =
        "{\n\t\"rock_a\": {\"class\": \"TSForestItemData\", \"radius\": "
        "0.200000003, \"shapeFile\": \"art/rock.dae\"},\n\t\"bush_b\": {\n"
        "\t\t\"windScale\": 1.5e-1,\n\t\t\"class\": \"TSForestItemData\"\n\t}\n}\n";
    CHECK(trn_test_write_file(path, modder, strlen(modder)));
    CHECK_EQ_INT(cli("generate %s --export beamng:%s -q", recipe, level), 0);
    size_t msize = 0;
    char *mtext = (char *)trn_test_read_file(path, &msize);
    /* Everything up to the closing brace is the modder's, byte for byte; ours follows. */
    const size_t keep = strlen(modder) - 3; /* "\n}\n" */
    CHECK(mtext && msize > keep && memcmp(mtext, modder, keep) == 0);
    CHECK(mtext && strstr(mtext, ",\n\t\"terrane_shrub\": {"));
    json_t *md = mtext ? json_loadb(mtext, msize, 0, &je) : NULL;
    CHECK(json_is_object(json_object_get(md, "terrane_shrub")));
    CHECK(json_real_value(json_object_get(json_object_get(md, "rock_a"), "radius")) == 0.200000003);
    json_decref(md);
    /* Again: nothing to change, the file is not rewritten (same bytes). */
    CHECK_EQ_INT(cli("generate %s --export beamng:%s -q", recipe, level), 0);
    size_t again_size = 0;
    char *again = (char *)trn_test_read_file(path, &again_size);
    CHECK(again && mtext && again_size == msize && memcmp(again, mtext, msize) == 0);
    free(again);
    free(mtext);
    /* Unity: the instances as tree instances beside the RAW, one prototype a rule. */
    char dir[800];
    snprintf(dir, sizeof dir, "%s/unity", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s -q", recipe, dir), 0);
    snprintf(path, sizeof path, "%s/forest_trees.json", dir);
    size_t usize = 0;
    char *utext = (char *)trn_test_read_file(path, &usize);
    json_t *u = utext ? json_loadb(utext, usize, 0, &je) : NULL;
    CHECK((json_int_t)json_array_size(json_object_get(u, "trees")) == placed);
    CHECK_EQ_INT(json_array_size(json_object_get(u, "prototypes")), 1);
    json_t *t0 = json_array_get(json_object_get(u, "trees"), 0);
    const double px = json_real_value(json_array_get(json_object_get(t0, "position"), 0));
    const double wx = json_real_value(json_array_get(json_object_get(t0, "world"), 0));
    /* Unity's TreeInstance holds floats: position and world agree to float precision. */
    CHECK(px >= 0.0 && px <= 1.0 && fabs(px * 64.0 - wx) < 1e-4);
    /* One schema with the trees of an exported Unity terrain: colour, matrix, prototypes by
     * rule, and the terrain's NAME.json names the file. */
    CHECK(strcmp(json_string_value(json_object_get(t0, "color")), "#ffffffff") == 0);
    CHECK_EQ_INT(json_array_size(json_object_get(t0, "matrix")), 16);
    CHECK(json_is_string(
        json_object_get(json_array_get(json_object_get(u, "prototypes"), 0), "rule")));
    CHECK_CONTAINS(json_string_value(json_object_get(u, "convention")), "Unity TreeInstance");
    json_decref(u);
    free(utext);
    snprintf(path, sizeof path, "%s/forest.json", dir);
    utext = (char *)trn_test_read_file(path, &usize);
    u = utext ? json_loadb(utext, usize, 0, &je) : NULL;
    CHECK(u && strcmp(json_string_value(json_object_get(u, "trees")), "forest_trees.json") == 0);
    json_decref(u);
    free(utext);
    snprintf(path, sizeof path, "%s/forest_instances.json", dir);
    CHECK(!trn_test_exists(path));
    /* A level without a palette gets no forest. */
    const char *bare = write_recipe("bare2.json", NULL);
    snprintf(level, sizeof level, "%s/game/levels/bare", tmp);
    CHECK_EQ_INT(cli("generate %s --export beamng:%s -q", bare, level), 0);
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(!trn_test_exists(path));
}

/* A project with a material set: ground, sand and the lake bed bound, the rest left to the
 * biome tint; the palette also places grass (detail layers in Unity) and shrubs (trees). */
static const char surface_palette[] =
    "{\"format_version\": 3, \"name\": \"Land\", \"material_set\": \"asset://sets/land\", "
    "\"placements\": {\"grass\": {\"model\": \"asset://models/grass\", \"collision\": \"none\", "
    "\"category\": \"grass\", \"density\": 0.5, \"candidate_spacing\": 1}, \"shrub\": "
    "{\"prefab\": \"prefab://shrub\", \"density\": 0.25, \"candidate_spacing\": 2, \"spacing\": "
    "4}}}";

static void write_material_set(void)
{
    char path[800];
    snprintf(path, sizeof path, "%s/sets", tmp);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/sets/land.asset.json", tmp);
    const char manifest[] = "{\"type\": \"DataAsset\", \"source\": \"land.json\", \"settings\": "
                            "{\"content_type\": \"terrain_material_set\"}}";
    CHECK(trn_test_write_file(path, manifest, strlen(manifest)));
    snprintf(path, sizeof path, "%s/sets/land.json", tmp);
    const char set[] = "{\"format_version\": 1, \"name\": \"Land\", \"roles\": {\"ground\": "
                       "\"asset://materials/soil\", \"sand\": \"asset://materials/beach-sand\", "
                       "\"underwater\": \"asset://materials/riverbed\"}}";
    CHECK(trn_test_write_file(path, set, strlen(set)));
}

/* generate --export beamng with a material set: the .ter's materials are the bound materials
 * and the biome tint, the lake's centre is the underwater binding, the fallbacks are reported
 * and the level validates. */
static void test_surface_beamng(void)
{
    write_material_set();
    const char *recipe = write_recipe("surf.json", surface_palette);
    char level[800], path[900];
    snprintf(level, sizeof level, "%s/game/levels/surf", tmp);
    CHECK_EQ_INT(cli("generate %s --export beamng:%s", recipe, level), 0);
    CHECK_CONTAINS(err_text, "material 'riverbed' (asset://materials/riverbed): role underwater, "
                             "1089 sample(s)");
    CHECK_CONTAINS(err_text, "material 'beach_sand' (asset://materials/beach-sand): role sand");
    CHECK_CONTAINS(err_text, "material 'meadow': biome tint");
    CHECK_CONTAINS(err_text, "samples of role 'grass' have no binding: biome tint used");
    CHECK_CONTAINS(err_text, ": 0 error(s)");
    /* The grass is a GroundCover on the materials it stood on, never forest items; the shrub
     * (no shape) is left out and said so. */
    CHECK_CONTAINS(err_text, "ground cover: 1 GroundCover object(s)");
    CHECK_CONTAINS(err_text, "left out: their model or prefab names no .dae");
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(!trn_test_exists(path));
    snprintf(path, sizeof path, "%s/main/MissionGroup/items.level.json", level);
    size_t scene_size = 0;
    char *scene = (char *)trn_test_read_file(path, &scene_size);
    const char *cover = scene ? strstr(scene, "\"name\":\"terrane_grass_groundcover\"") : NULL;
    CHECK(cover && strstr(cover, "\"class\":\"GroundCover\""));
    CHECK(cover && strstr(cover, "\"layer\":\"meadow\""));
    free(scene);
    snprintf(path, sizeof path, "%s/theTerrain.ter", level);
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    CHECK_OK(trn_ter_read(path, NULL, &ter, NULL, NULL, NULL));
    int riverbed = -1, soil = -1, meadow = -1;
    for (uint32_t k = 0; k < ter.material_count; k++) {
        if (strcmp(ter.materials[k], "riverbed") == 0) riverbed = (int)k;
        if (strcmp(ter.materials[k], "soil") == 0) soil = (int)k;
        if (strcmp(ter.materials[k], "meadow") == 0) meadow = (int)k;
    }
    CHECK(riverbed >= 0 && soil >= 0 && meadow >= 0);
    /* Sample (32, 32) lies under the lake; (2, 62) is dry ground on the rim, (2, 2) moist
     * flat grass, which the set leaves to the meadow's tint. */
    CHECK(ter.size == 65 && ter.layers && ter.layers[32 * 65 + 32] == riverbed);
    CHECK(ter.layers && ter.layers[62 * 65 + 2] == soil);
    CHECK(ter.layers && ter.layers[2 * 65 + 2] == meadow);
    trn_ter_dispose(&ter);
    CHECK_EQ_INT(cli("beamng validate %s -q", level), 0);
    /* A role's material: the role's ground model and colour; the biome's keeps its own. */
    snprintf(path, sizeof path, "%s/art/terrains/main.materials.json", level);
    trn_material_file mf;
    memset(&mf, 0, sizeof mf);
    CHECK_OK(trn_material_file_read(path, &mf, NULL));
    const char *models[4][2] = {
        {"soil", "DIRT"}, {"beach_sand", "SAND"}, {"riverbed", "MUD"}, {"meadow", "GRASS"}};
    for (int m = 0; m < 4; m++) {
        bool found = false;
        for (uint32_t k = 0; k < mf.material_count; k++)
            if (mf.materials[k].internal_name &&
                strcmp(mf.materials[k].internal_name, models[m][0]) == 0) {
                found = true;
                CHECK(mf.materials[k].groundmodel_name &&
                      strcmp(mf.materials[k].groundmodel_name, models[m][1]) == 0);
            }
        CHECK(found);
    }
    trn_material_file_dispose(&mf);
    static const uint8_t colours[2][3] = {{62, 118, 196}, {102, 153, 77}};
    static const char *const textures[2] = {"riverbed", "meadow"};
    for (int t = 0; t < 2; t++) {
        snprintf(path, sizeof path, "%s/art/terrains/t_terrane_%s_b.png", level, textures[t]);
        trn_image img;
        memset(&img, 0, sizeof img);
        CHECK_OK(trn_png_read(path, NULL, &img, NULL));
        CHECK(img.data && img.channels == 3 && memcmp(img.data, colours[t], 3) == 0);
        trn_image_dispose(&img);
    }

    /* The JSON summary: each material with its source, the fallbacks per role. */
    CHECK_EQ_INT(cli("generate %s --export beamng:%s --format json -q", recipe, level), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    json_t *surface = json_object_get(json_object_get(o, "beamng"), "surface");
    json_t *mats = json_object_get(surface, "materials");
    CHECK(json_array_size(mats) >= 3);
    json_int_t total = 0, unbound = 0;
    bool saw_role = false, saw_biome = false;
    for (size_t k = 0; k < json_array_size(mats); k++) {
        json_t *m = json_array_get(mats, k);
        const char *src = json_string_value(json_object_get(m, "source"));
        total += json_integer_value(json_object_get(m, "samples"));
        if (src && strcmp(src, "role") == 0 &&
            strcmp(json_string_value(json_object_get(m, "material")),
                   "asset://materials/riverbed") == 0) {
            saw_role = true;
            CHECK(strcmp(json_string_value(json_object_get(m, "role")), "underwater") == 0);
            CHECK(json_integer_value(json_object_get(m, "samples")) == 33 * 33);
        }
        if (src && strcmp(src, "biome") == 0) {
            saw_biome = true;
            CHECK(strcmp(json_string_value(json_object_get(m, "biome")), "meadow") == 0);
        }
    }
    CHECK(saw_role && saw_biome);
    CHECK(total == 65 * 65);
    const char *key;
    json_t *v;
    json_t *fallbacks = json_object_get(surface, "fallbacks");
    json_object_foreach(json_object_get(fallbacks, "unbound"), key, v)
    {
        trn_surface_role role;
        CHECK(trn_surface_role_parse(key, &role));
        CHECK(role != TRN_ROLE_GROUND && role != TRN_ROLE_UNDERWATER);
        unbound += json_integer_value(v);
    }
    /* Every tinted sample is a fallback: a role without binding (or none won). */
    for (size_t k = 0; k < json_array_size(mats); k++) {
        json_t *m = json_array_get(mats, k);
        if (strcmp(json_string_value(json_object_get(m, "source")), "biome") == 0)
            CHECK(json_integer_value(json_object_get(m, "samples")) ==
                  unbound + json_integer_value(json_object_get(fallbacks, "no_role")));
    }
    CHECK(unbound > 0);
    CHECK(json_integer_value(
              json_object_get(json_object_get(o, "beamng"), "validate_error_count")) == 0);
    json_decref(o);

    /* A biome with its own material: it wins over every role, the lake bed included, and
     * nothing falls back. */
    char explicit_path[800];
    snprintf(explicit_path, sizeof explicit_path, "%s/surf_explicit.json", tmp);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(recipe, &size);
    const char needle[] = "\"color\": [0.4, 0.6, 0.3, 1]";
    char *at = text ? strstr(text, needle) : NULL;
    CHECK(at != NULL);
    if (at) {
        char edited[8192];
        snprintf(edited, sizeof edited, "%.*s\"material\": \"asset://materials/Moss!\", %s",
                 (int)(at - text), text, at);
        CHECK(trn_test_write_file(explicit_path, edited, strlen(edited)));
    }
    free(text);
    snprintf(level, sizeof level, "%s/game/levels/moss", tmp);
    CHECK_EQ_INT(cli("generate %s --export beamng:%s", explicit_path, level), 0);
    CHECK_CONTAINS(err_text, "material 'Moss_' (asset://materials/Moss!): biome 'meadow''s own "
                             "material, 4225 sample(s)");
    CHECK(err_text && !strstr(err_text, "have no binding"));
    snprintf(path, sizeof path, "%s/theTerrain.ter", level);
    memset(&ter, 0, sizeof ter);
    CHECK_OK(trn_ter_read(path, NULL, &ter, NULL, NULL, NULL));
    CHECK(ter.material_count == 1 && strcmp(ter.materials[0], "Moss_") == 0);
    CHECK(ter.layers && ter.layers[32 * 65 + 32] == 0);
    trn_ter_dispose(&ter);
    snprintf(path, sizeof path, "%s/art/terrains/t_terrane_Moss__b.png", level);
    CHECK(trn_test_exists(path));
}

/* generate --export unity with a material set: one splat layer per surface material, named by
 * its id, and the grass as a detail layer whose density map counts the grass instances. */
static void test_surface_unity(void)
{
    write_material_set();
    const char *recipe = write_recipe("surf.json", surface_palette);
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/unity_surf", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s --format json -q", recipe, dir), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    json_t *u = json_object_get(o, "unity");
    const size_t materials =
        json_array_size(json_object_get(json_object_get(u, "surface"), "materials"));
    CHECK(materials >= 3);
    const json_int_t grass = json_integer_value(json_object_get(u, "detail_instances"));
    CHECK(grass > 100);
    CHECK_EQ_INT(json_integer_value(json_object_get(u, "detail_layers")), 1);
    json_decref(o);

    snprintf(path, sizeof path, "%s/surf.json", dir);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(path, &size);
    json_t *meta = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *layers = json_object_get(json_object_get(meta, "splat"), "layers");
    CHECK_EQ_INT(json_array_size(layers), materials);
    bool riverbed = false;
    for (size_t k = 0; k < json_array_size(layers); k++)
        riverbed |=
            strcmp(json_string_value(json_array_get(layers, k)), "asset://materials/riverbed") == 0;
    CHECK(riverbed);
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(meta, "splat"), "sources")),
                 materials);
    json_t *detail = json_object_get(meta, "detail");
    CHECK_EQ_INT(json_integer_value(json_object_get(detail, "resolution")), 64);
    json_t *d0 = json_array_get(json_object_get(detail, "layers"), 0);
    CHECK(d0 && strcmp(json_string_value(json_object_get(d0, "name")), "grass") == 0);
    CHECK(d0 &&
          strcmp(json_string_value(json_object_get(d0, "prototype")), "asset://models/grass") == 0);
    CHECK(d0 && strcmp(json_string_value(json_object_get(d0, "file")), "surf_detail0.png") == 0);
    CHECK(json_integer_value(json_object_get(d0, "instances")) == grass);
    json_decref(meta);

    /* The density map: 64 x 64 cells, its values sum to the grass instances, and each grass
     * instance's cell (PNG row 0 the far edge) is > 0; the lake has none. */
    snprintf(path, sizeof path, "%s/surf_detail0.png", dir);
    trn_image img;
    memset(&img, 0, sizeof img);
    CHECK_OK(trn_png_read(path, NULL, &img, NULL));
    CHECK(img.width == 64 && img.height == 64 && img.channels == 1);
    const uint8_t *px = img.data;
    json_int_t sum = 0;
    for (size_t k = 0; px && k < (size_t)img.width * img.height; k++)
        sum += px[k];
    CHECK(sum == grass);
    CHECK(px && px[(size_t)(63 - 32) * 64 + 32] == 0);
    char list[800];
    snprintf(list, sizeof list, "%s/surf_scatter.json", tmp);
    CHECK_EQ_INT(cli("scatter %s -o %s -q", recipe, list), 0);
    text = (char *)trn_test_read_file(list, &size);
    json_t *doc = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *items = json_object_get(doc, "instances");
    size_t checked = 0;
    for (size_t k = 0; px && k < json_array_size(items); k++) {
        json_t *it = json_array_get(items, k);
        if (strcmp(json_string_value(json_object_get(it, "rule")), "grass") != 0) continue;
        const double x = json_real_value(json_object_get(it, "x"));
        const double z = json_real_value(json_object_get(it, "z"));
        const uint32_t ci = x >= 64.0 ? 63u : (uint32_t)x, cj = z >= 64.0 ? 63u : (uint32_t)z;
        CHECK(px[(size_t)(63 - cj) * 64 + ci] > 0);
        checked++;
    }
    CHECK((json_int_t)checked == grass);
    json_decref(doc);
    trn_image_dispose(&img);

    /* The shrubs stay trees: one prototype, no grass among the trees. */
    snprintf(path, sizeof path, "%s/surf_trees.json", dir);
    text = (char *)trn_test_read_file(path, &size);
    json_t *inst = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *protos = json_object_get(inst, "prototypes");
    CHECK_EQ_INT(json_array_size(protos), 1);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(protos, 0), "rule")), "shrub") ==
          0);
    json_t *trees = json_object_get(inst, "trees");
    CHECK(json_array_size(trees) > 20);
    for (size_t k = 0; k < json_array_size(trees); k++)
        CHECK(json_integer_value(json_object_get(json_array_get(trees, k), "prototype")) == 0);
    json_decref(inst);
}

/* --exclusions: a scene entity's Terrain3D.scatter_exclusions suppresses exactly its listed
 * placements (the others stay byte for byte, nothing refills), unmatched keys are counted, and
 * a bad list fails before generating with file:line:column. */
static void test_exclusions(void)
{
    const char *recipe = write_recipe("excl.json", shrubs);
    char all[800], kept[800], scene[800], bad[800];
    snprintf(all, sizeof all, "%s/excl_all.json", tmp);
    snprintf(kept, sizeof kept, "%s/excl_kept.json", tmp);
    snprintf(scene, sizeof scene, "%s/island.entity.json", tmp);
    snprintf(bad, sizeof bad, "%s/bad.entity.json", tmp);
    CHECK_EQ_INT(cli("scatter %s -o %s -q", recipe, all), 0);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(all, &size);
    json_error_t je;
    json_t *doc = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *items = json_object_get(doc, "instances");
    const size_t n = json_array_size(items);
    CHECK(n > 20);
    if (n <= 20) {
        json_decref(doc);
        return;
    }
    /* The first and the fifth placement, and one key that matches nothing. */
    const char *id0 = json_string_value(json_object_get(json_array_get(items, 0), "id"));
    const char *id4 = json_string_value(json_object_get(json_array_get(items, 4), "id"));
    char body[1200];
    snprintf(body, sizeof body,
             "{\"name\": \"Island\", \"components\": {\"Transform\": {\"position\": [0, 0, 0]},\n"
             " \"Terrain3D\": {\"asset\": \"asset://terrain/island\",\n"
             "  \"scatter_exclusions\": [\"%s\", \"shrub/9999_9999\", \"%s\"]}}}\n",
             id0, id4);
    CHECK(trn_test_write_file(scene, body, strlen(body)));
    CHECK_EQ_INT(cli("scatter %s -o %s --exclusions %s", recipe, kept, scene), 0);
    CHECK_CONTAINS(out_text, "2 placements suppressed, 1 of 3 keys matched nothing");
    CHECK_CONTAINS(out_text, "instances");
    text = (char *)trn_test_read_file(kept, &size);
    json_t *doc2 = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *items2 = json_object_get(doc2, "instances");
    CHECK_EQ_INT(json_array_size(items2), n - 2);
    /* Every other placement is there unchanged, in order. */
    size_t at = 0;
    for (size_t k = 0; k < n && at < json_array_size(items2); k++) {
        if (k == 0 || k == 4) continue;
        CHECK(json_equal(json_array_get(items, k), json_array_get(items2, at)));
        at++;
    }
    CHECK_EQ_INT(at, n - 2);
    json_decref(doc2);
    json_decref(doc);
    /* The JSON report counts them. */
    CHECK_EQ_INT(cli("scatter %s --exclusions %s --format json -q", recipe, scene), 0);
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    json_t *x = json_object_get(o, "exclusions");
    CHECK(x != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(x, "keys")), 3);
    CHECK_EQ_INT(json_integer_value(json_object_get(x, "suppressed")), 2);
    CHECK_EQ_INT(json_integer_value(json_object_get(x, "unmatched")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(o, "instances")), n - 2);
    json_decref(o);
    /* A duplicate key: exit 1 naming file:line:column and the JSON path. */
    const char dup[] = "{\"components\": {\"Terrain3D\": {\"scatter_exclusions\": [\n"
                       "  \"shrub/1_1\",\n  \"shrub/1_1\"]}}}\n";
    CHECK(trn_test_write_file(bad, dup, strlen(dup)));
    CHECK_EQ_INT(cli("scatter %s --exclusions %s -q", recipe, bad), 1);
    CHECK_CONTAINS(err_text, "bad.entity.json:3:3");
    CHECK_CONTAINS(err_text, "components.Terrain3D.scatter_exclusions[1]: duplicate key "
                             "'shrub/1_1' (first at [0])");
    /* A missing file, and the option given twice. */
    CHECK_EQ_INT(cli("scatter %s --exclusions %s/none.json -q", recipe, tmp), 1);
    CHECK_EQ_INT(cli("scatter %s --exclusions %s --exclusions %s -q", recipe, scene, scene), 2);
    CHECK_CONTAINS(err_text, "--exclusions is given twice");
    /* The engine exports honour the same list: two fewer Unity trees, the recipe untouched. */
    char dir[800], path[900];
    snprintf(dir, sizeof dir, "%s/excl_unity", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s --scatter-exclusions %s", recipe, dir, scene),
                 0);
    CHECK_CONTAINS(err_text, "2 placements suppressed, 1 key matched none");
    snprintf(path, sizeof path, "%s/excl_trees.json", dir);
    text = (char *)trn_test_read_file(path, &size);
    json_t *u = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    CHECK_EQ_INT(json_array_size(json_object_get(u, "trees")), n - 2);
    json_decref(u);
    /* Without an engine export it has nothing to act on; a bad list fails before generating. */
    snprintf(path, sizeof path, "%s/excl.r32", tmp);
    CHECK_EQ_INT(cli("generate %s -o %s --scatter-exclusions %s -q", recipe, path, scene), 2);
    CHECK_CONTAINS(err_text, "--scatter-exclusions needs an engine export");
    CHECK(!trn_test_exists(path));
    snprintf(dir, sizeof dir, "%s/excl_unity2", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s --scatter-exclusions %s -q", recipe, dir, bad),
                 1);
    CHECK_CONTAINS(err_text, "bad.entity.json:3:3");
    CHECK(!trn_test_exists(dir));
}

/* A graph with a Scatter Palette node generates on its own (the palette is resolved for it),
 * and its placements reach the engine export. */
static void test_graph_node_generate(void)
{
    const char *recipe = write_recipe("graphsc.json", shrubs);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(recipe, &size);
    json_error_t je;
    json_t *doc = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    json_t *nodes = json_object_get(json_object_get(doc, "graph"), "nodes");
    json_t *node = json_loads("{\"id\": \"sc\", \"type\": \"scatter_palette\", \"inputs\": "
                              "{\"field\": {\"node\": \"bio\"}, \"water\": {\"node\": "
                              "\"lake\", \"pin\": \"water\"}}}",
                              0, &je);
    CHECK(nodes && node);
    json_array_insert_new(nodes, json_array_size(nodes) - 1, node);
    json_t *out = json_array_get(nodes, json_array_size(nodes) - 1);
    json_object_set_new(json_object_get(out, "inputs"), "instances",
                        json_loads("{\"node\": \"sc\"}", 0, &je));
    CHECK(json_dump_file(doc, recipe, 0) == 0);
    json_decref(doc);
    char r32[800], dir[800], path[900];
    snprintf(r32, sizeof r32, "%s/graphsc.r32", tmp);
    CHECK_EQ_INT(cli("generate %s -o %s -q", recipe, r32), 0);
    snprintf(dir, sizeof dir, "%s/graphsc_unity", tmp);
    CHECK_EQ_INT(cli("generate %s --export unity:%s -q", recipe, dir), 0);
    snprintf(path, sizeof path, "%s/graphsc_trees.json", dir);
    text = (char *)trn_test_read_file(path, &size);
    json_t *u = text ? json_loadb(text, size, 0, &je) : NULL;
    free(text);
    CHECK(json_array_size(json_object_get(u, "trees")) > 20);
    json_decref(u);
    /* inspect keys the node with the palette (no key error). */
    CHECK_EQ_INT(cli("inspect %s --format json", recipe), 0);
    CHECK(out_text && !strstr(out_text, "keys_error"));
    /* Every verb that generates takes such a recipe: the palette is resolved for the node. */
    char png[800], glb[800], txt[800];
    snprintf(png, sizeof png, "%s/graphsc.png", tmp);
    snprintf(glb, sizeof glb, "%s/graphsc.glb", tmp);
    snprintf(txt, sizeof txt, "%s/graphsc.txt", tmp);
    CHECK_EQ_INT(cli("scatter %s -o %s -q", recipe, txt), 0);
    /* Two outputs of one run never name one file, however it is spelled: a usage error. */
    char same[900];
    snprintf(same, sizeof same, "%s/./graphsc_same.txt", tmp);
    CHECK_EQ_INT(cli("scatter %s -o %s --csv %s/graphsc_same.txt -q", recipe, same, tmp), 2);
    CHECK_CONTAINS(err_text, "two outputs name the same file");
    snprintf(same, sizeof same, "%s/graphsc_same.txt", tmp);
    CHECK(!trn_test_exists(same));
    CHECK_EQ_INT(cli("water %s --at 20,20 -q", recipe), 0);
    CHECK_EQ_INT(cli("explain %s --at 20,20 -q", recipe), 0);
    CHECK_EQ_INT(cli("stats %s -q", recipe), 0);
    CHECK_EQ_INT(cli("render %s -o %s -q", recipe, png), 0);
    CHECK_EQ_INT(cli("mesh %s -o %s -q", recipe, glb), 0);
    CHECK(err_text && !strstr(err_text, "no resolved palette"));
    CHECK_EQ_INT(cli("mesh %s -o %s -q --no-instances", recipe, glb), 0);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_scatter_outputs);
    RUN(test_scatter_errors);
    RUN(test_roles_output);
    RUN(test_forest_export);
    RUN(test_surface_beamng);
    RUN(test_surface_unity);
    RUN(test_exclusions);
    RUN(test_graph_node_generate);
    reset_output();
    return trn_test_finish();
}
