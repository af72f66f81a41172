/* Command-line tests for water in engine exports: generate --export beamng:DIR puts the
 * published water into the level (WaterBlock, River, the ocean's WaterPlane), unity:DIR writes
 * the meshes and NAME.water.json, all through the run's write set. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

static char tmp[512];

/* 128 x 128 cells over 128 m: a flat plain at 5 m, a lake at 6 m carved 3 m deep around
 * (64, 64), a level river at 6 m along x = 12 and, with ocean, a sea at 5.5 m inside a
 * boundary along the south edge. */
static const char *write_recipe(const char *name, bool ocean)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    char text[4096];
    snprintf(
        text, sizeof text,
        "{\n"
        "  \"size\": [128, 128],\n"
        "  \"resolution\": [128, 128],\n"
        "  \"seed\": 7,\n"
        "  \"sea_level\": -50,\n"
        "  \"default_landform\": \"plain\",\n"
        "  \"landforms\": {\"plain\": {\"base_height\": 5}},\n"
        "  \"default_biome\": \"grass\",\n"
        "  \"biomes\": {\"grass\": {\"color\": [0.38, 0.6, 0.28, 1]}},\n"
        "  \"graph\": {\n"
        "    \"format_version\": 1,\n"
        "    \"output\": \"out\",\n"
        "    \"nodes\": [\n"
        "      {\"id\": \"plain\", \"type\": \"flat_terrain\", \"params\": {\"height\": 5}},\n"
        "      {\"id\": \"lake\", \"type\": \"water_body\", \"inputs\": {\"field\": {\"node\": "
        "\"plain\"}}, \"params\": {\"kind\": \"lake\", \"level\": 6, \"center\": [64, 64], "
        "\"radius\": 20, \"carve_depth\": 3}},\n"
        "      {\"id\": \"river\", \"type\": \"water_body\", \"inputs\": {\"field\": {\"node\": "
        "\"lake\", \"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}, "
        "\"params\": {\"kind\": \"river\", \"level\": 6, \"river_path\": [[12, 4, 16], [12, 4, "
        "112]], \"width\": 6, \"flow_speed\": 2}},\n"
        "%s"
        "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"%s\", \"pin\": \"field\"}, \"water\": {\"node\": \"%s\", \"pin\": \"water\"}}}\n"
        "    ]\n"
        "  }\n"
        "}\n",
        ocean ? "      {\"id\": \"sea\", \"type\": \"water_body\", \"inputs\": {\"field\": "
                "{\"node\": \"river\", \"pin\": \"field\"}, \"water\": {\"node\": \"river\", "
                "\"pin\": \"water\"}}, \"params\": {\"kind\": \"ocean\", \"level\": 5.5}},\n"
              : "",
        ocean ? "sea" : "river", ocean ? "sea" : "river");
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

static char *read_text(const char *path)
{
    size_t n = 0;
    uint8_t *d = trn_test_read_file(path, &n);
    if (!d) return NULL;
    char *s = malloc(n + 1);
    memcpy(s, d, n);
    s[n] = '\0';
    free(d);
    return s;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_beamng_level_water(void)
{
    const char *recipe = write_recipe("lake.json", false);
    char level[700], items[800];
    snprintf(level, sizeof level, "%s/out/levels/lakeside", tmp);
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("--format json generate '%s' --export 'beamng:%s'", &out, &err,
                               recipe, level);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s\n%s\n", out ? out : "", err ? err : "");
    CHECK_CONTAINS(err, "water: 0 WaterPlane, 1 WaterBlock(s), 1 River(s) (0 updated in place)");
    CHECK_CONTAINS(err, "validated ");
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    json_t *wj = json_object_get(json_object_get(j, "beamng"), "water");
    CHECK(json_integer_value(json_object_get(wj, "blocks")) == 1);
    CHECK(json_integer_value(json_object_get(wj, "rivers")) == 1);
    CHECK(json_integer_value(
              json_object_get(json_object_get(j, "beamng"), "validate_error_count")) == 0);
    json_decref(j);
    free(out);
    free(err);
    snprintf(items, sizeof items, "%s/main/MissionGroup/Water/items.level.json", level);
    char *text = read_text(items);
    CHECK_EQ_INT(count(text, "\n"), 2);
    /* The lake: centred on (64, 64) of a terrain centred on the origin, surface at 6 m. */
    CHECK_CONTAINS(text, "{\"name\":\"water_lake\",\"class\":\"WaterBlock\",");
    CHECK_CONTAINS(text, "\"__parent\":\"Water\",\"position\":[0,0,6],\"scale\":[");
    /* The river, mouth first: x = 12 - 64 = -52; y from 112 - 64 = 48 down to -48. */
    CHECK_CONTAINS(text, "{\"name\":\"water_river\",\"class\":\"River\",");
    CHECK_CONTAINS(text, "\"position\":[-52,48,6],\"nodes\":[[-52,48,6,6,2,0,0,1],[-52,-48,6,6,2,"
                         "0,0,1]],\"FlowMagnitude\":2,");
    free(text);

    /* Again, with a sea added and --scaffold: the scaffold puts its WaterPlane at the sea's
     * 5.5 m (not the recipe's sea level) and the sea takes that plane over. */
    recipe = write_recipe("sea.json", true);
    rc = trn_test_run_clif("generate '%s' --export 'beamng:%s' --scaffold", &out, &err, recipe,
                           level);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s\n%s\n", out ? out : "", err ? err : "");
    CHECK_CONTAINS(err, "water: 1 WaterPlane, 1 WaterBlock(s), 1 River(s) (3 updated in place)");
    free(out);
    free(err);
    text = read_text(items);
    CHECK_EQ_INT(count(text, "\"class\":\"WaterPlane\""), 1);
    CHECK_EQ_INT(count(text, "\"class\":\"WaterBlock\""), 1);
    CHECK_CONTAINS(text, "{\"name\":\"ocean\",\"class\":\"WaterPlane\",\"persistentId\":");
    CHECK_CONTAINS(text, "\"position\":[0,0,5.5],");
    free(text);
}

static void test_unity_water(void)
{
    const char *recipe = write_recipe("pond.json", false);
    char dir[700], path[800];
    snprintf(dir, sizeof dir, "%s/unity", tmp);
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("--format json generate '%s' --export 'unity:%s'", &out, &err,
                               recipe, dir);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s\n%s\n", out ? out : "", err ? err : "");
    CHECK_CONTAINS(err, "water: 2 mesh(es) (pond_water_*.obj, placed at the Terrain's position) "
                        "and pond.water.json");
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    json_t *wj = json_object_get(json_object_get(j, "unity"), "water");
    CHECK(json_integer_value(json_object_get(wj, "meshes")) == 2);
    json_decref(j);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/pond.water.json", dir);
    j = json_load_file(path, 0, &je);
    CHECK(j != NULL);
    const json_t *bodies = json_object_get(j, "bodies");
    CHECK_EQ_INT(json_array_size(bodies), 2);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(bodies, 0), "mesh")),
                 "pond_water_lake.obj") == 0);
    /* The Terrain's RAW 0 is its lowest height (the carved lake bed, 2 m): the meshes sit 4 m
     * above the Terrain's own position. */
    CHECK(json_number_value(json_object_get(j, "height_base")) == 2.0);
    json_decref(j);
    snprintf(path, sizeof path, "%s/pond_water_lake.obj", dir);
    char *obj = read_text(path);
    CHECK_CONTAINS(obj, "\no pond_water_lake\nv ");
    CHECK_CONTAINS(obj, " 4 ");
    free(obj);
    snprintf(path, sizeof path, "%s/pond_water_river.obj", dir);
    CHECK(trn_test_exists(path));
    snprintf(path, sizeof path, "%s/pond.raw", dir);
    CHECK(trn_test_exists(path));
}

/* Every file of a Unity export (heights, splats, trees, water meshes and their description)
 * lands with the mode any new file gets: 0644 under umask 022, none left at 0600. */
static void test_unity_file_modes(void)
{
    const char *recipe = write_recipe("modes.json", false);
    char *text = read_text(recipe);
    CHECK(text != NULL);
    if (!text) return;
    /* The pond with a palette of trees, so the export writes trees beside the water meshes. */
    const char *at = strstr(text, "  \"default_biome\"");
    CHECK(at != NULL);
    if (!at) {
        free(text);
        return;
    }
    char with_trees[8192];
    snprintf(with_trees, sizeof with_trees,
             "%.*s  \"palette\": {\"format_version\": 3, \"name\": \"Trees\", \"placements\": "
             "{\"pine\": {\"prefab\": \"prefab://pine\", \"category\": \"tree\", "
             "\"density\": 0.01, \"candidate_spacing\": 4, \"spacing\": 8}}},\n%s",
             (int)(at - text), text, at);
    free(text);
    CHECK(trn_test_write_file(recipe, with_trees, strlen(with_trees)));
    char dir[700];
    snprintf(dir, sizeof dir, "%s/modes", tmp);
    const mode_t old_mask = umask(022);
    char *out = NULL, *err = NULL;
    const int rc =
        trn_test_run_clif("generate '%s' --export 'unity:%s' -q", &out, &err, recipe, dir);
    umask(old_mask);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s\n", err ? err : "");
    free(out);
    free(err);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int files = 0, water = 0, trees = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[1000];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        CHECK(stat(path, &st) == 0);
        if ((st.st_mode & 0777) != 0644)
            fprintf(stderr, "%s has mode %o\n", path, (unsigned)(st.st_mode & 0777));
        CHECK_EQ_INT(st.st_mode & 0777, 0644);
        files++;
        water += strstr(e->d_name, "_water_") != NULL || strstr(e->d_name, ".water.json") != NULL;
        trees += strstr(e->d_name, "_trees.json") != NULL;
    }
    if (d) closedir(d);
    CHECK(files >= 6);
    CHECK_EQ_INT(water, 3); /* two meshes and their description */
    CHECK_EQ_INT(trees, 1);
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_beamng_level_water);
    RUN(test_unity_water);
    RUN(test_unity_file_modes);
    return trn_test_finish();
}
