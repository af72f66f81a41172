/* Tests for BeamNG water: WaterPlane, WaterBlock and River objects, exact fields and placement,
 * and putting them into a level (new, updated in place, names, the scaffold's plane). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/beamng_water.h"
#include "test.h"
#include "water_helpers.h"

/* The look's fields, as every object carries them for the default look. */
#define LOOK                                                                                       \
    "\"baseColor\":[5,26,41,230],\"waterFogDensity\":0.25,\"waterFogDensityOffset\":0,"            \
    "\"overallWaveMagnitude\":0,\"overallRippleMagnitude\":1,\"overallFoamOpacity\":0.5,"          \
    "\"foamMaxDepth\":0.5"
#define TEXTURES                                                                                   \
    "\"depthGradientTex\":\"core/art/water/depthcolor_ramp\",\"foamTex\":\"core/art/water/"        \
    "foam\",\"rippleTex\":\"core/art/water/ripple\""

static const trn_beamng_water_placement placement = {-100.0, -200.0, 10.0};

static char *objects_of(const trn_water *w, const trn_field *g, uint32_t *skipped)
{
    char *text = NULL;
    size_t size = 0;
    CHECK_OK(trn_beamng_water_objects(w, g, &placement, &text, &size, skipped, NULL));
    CHECK(text && strlen(text) == size);
    return text;
}

/* An unbounded ocean: the level's WaterPlane, only its height mattering. */
static void test_ocean_plane(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, ramp);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_OCEAN);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "sea");
    w.bodies[0].level = 3.5;
    water_plane p = {3.5, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    uint32_t skipped = 9;
    char *text = objects_of(&w, &g, &skipped);
    CHECK(skipped == 0);
    CHECK(text && strcmp(text, "{\"name\":\"water_sea\",\"class\":\"WaterPlane\",\"position\":[0,0,"
                               "13.5]," LOOK "," TEXTURES "}\n") == 0);
    free(text);
    /* The look maps field by field. */
    trn_water_look *l = &w.bodies[0].look;
    const double deep[4] = {1.0, 0.0, 0.5, 1.5}; /* clamped to 0..1 */
    memcpy(l->deep_color, deep, sizeof deep);
    l->absorption_distance = 8.0;
    l->normal_strength = 0.75;
    l->foam_strength = 0.125;
    l->foam_width = 2.0;
    l->flow_speed = 3.0; /* no current on a WaterPlane: dropped */
    text = objects_of(&w, &g, NULL);
    CHECK_CONTAINS(text, "\"baseColor\":[255,0,128,255],\"waterFogDensity\":0.125,"
                         "\"waterFogDensityOffset\":0,\"overallWaveMagnitude\":0,"
                         "\"overallRippleMagnitude\":0.75,\"overallFoamOpacity\":0.125,"
                         "\"foamMaxDepth\":2,");
    CHECK(text && !strstr(text, "Flow"));
    free(text);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* A lake: a WaterBlock centred on its wet area at the level, twice as deep as the deepest
 * point (the engine's water is the box's lower half). */
static void test_lake_block(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, diamond);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_LAKE);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "lakes/basin/2_3");
    w.bodies[0].level = 2.25;
    water_plane p = {2.25, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    char *text = objects_of(&w, &g, NULL);
    CHECK(text && strcmp(text, "{\"name\":\"water_lakes_basin_2_3\",\"class\":\"WaterBlock\","
                               "\"position\":[-96,-196,12.25],\"scale\":[4.5,4.5,4.5],"
                               "\"gridElementSize\":4.5," LOOK "," TEXTURES "}\n") == 0);
    free(text);
    /* A bigger lake keeps the engine's grid of 5. */
    w.bodies[0].level = 3.5;
    p.c = 3.5;
    water_test_clear(&w);
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    text = objects_of(&w, &g, NULL);
    CHECK_CONTAINS(text, "\"position\":[-96,-196,13.5],\"scale\":[7,7,7],\"gridElementSize\":5,");
    free(text);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* A follow-bed river: nodes from the path's last point to its first, surface = bed + depth. */
static void test_river_nodes(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, flat);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_RIVER);
    trn_water_body *r = &w.bodies[0];
    snprintf(r->id, sizeof r->id, "creek");
    r->surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    r->river_depth = 1.0;
    r->look.flow_speed = 1.5;
    const double path[6] = {0, 1, 0, 0, -1, 8};
    r->path = malloc(sizeof path);
    memcpy(r->path, path, sizeof path);
    r->path_count = 2;
    water_plane p = {2.0, 0, -0.25};
    water_test_cover(&w, &g, 0, &p, 0, 1, 0, 8);
    char *text = objects_of(&w, &g, NULL);
    CHECK(text && strcmp(text, "{\"name\":\"water_creek\",\"class\":\"River\",\"position\":[-100,"
                               "-192,10],\"nodes\":[[-100,-192,10,8,1,0,0,1],[-100,-200,12,8,1,0,"
                               "0,1]],\"FlowMagnitude\":1.5," LOOK "," TEXTURES "}\n") == 0);
    free(text);
    /* A level river: depth = level - bed, clamped to 0.25..500 (the limits kept), width to
     * 0.25..1000. */
    r->surface_mode = TRN_RIVER_SURFACE_LEVEL;
    r->level = 3.0;
    r->width = 1000.5;
    const double level_path[15] = {0, 2.9, 0, 1, 2.75, 0, 2, -497, 0, 3, -497.0001, 0, 4, 3.5, 0};
    free(r->path);
    r->path = malloc(sizeof level_path);
    memcpy(r->path, level_path, sizeof level_path);
    r->path_count = 5;
    text = objects_of(&w, &g, NULL);
    CHECK_CONTAINS(text, "\"nodes\":[[-96,-200,13,1000,0.25,0,0,1],[-97,-200,13,1000,500,0,0,1],"
                         "[-98,-200,13,1000,500,0,0,1],[-99,-200,13,1000,0.25,0,0,1],"
                         "[-100,-200,13,1000,0.25,0,0,1]]");
    free(text);
    r->width = 0.2;
    text = objects_of(&w, &g, NULL);
    CHECK_CONTAINS(text, "[-96,-200,13,0.25,0.25,0,0,1]");
    free(text);
    r->width = 0.25;
    text = objects_of(&w, &g, NULL);
    CHECK_CONTAINS(text, "[-96,-200,13,0.25,0.25,0,0,1]");
    free(text);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* Which class each body gets, which get nothing, and names made unique. */
static void test_classes_skips_and_names(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, flat);
    trn_water w;
    water_test_init(&w, &g, 6, TRN_WATER_OCEAN);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "a/b");
    snprintf(w.bodies[1].id, sizeof w.bodies[1].id, "a_b");
    /* 0: bounded ocean -> WaterBlock; 1: first unbounded -> WaterPlane; 2: second unbounded ->
     * WaterBlock; 3: dry lake and 4: one-point river -> nothing; 5: river -> River. */
    w.bodies[0].boundary = malloc(6 * sizeof(double));
    const double tri[6] = {0, 0, 8, 0, 0, 8};
    memcpy(w.bodies[0].boundary, tri, sizeof tri);
    w.bodies[0].boundary_count = 3;
    w.bodies[3].kind = TRN_WATER_LAKE;
    w.bodies[4].kind = w.bodies[5].kind = TRN_WATER_RIVER;
    const double path[6] = {0, -1, 0, 8, -1, 0};
    w.bodies[4].path = malloc(3 * sizeof(double));
    memcpy(w.bodies[4].path, path, 3 * sizeof(double));
    w.bodies[4].path_count = 1;
    w.bodies[5].path = malloc(sizeof path);
    memcpy(w.bodies[5].path, path, sizeof path);
    w.bodies[5].path_count = 2;
    water_plane p = {1.0, 0, 0};
    for (int32_t b = 0; b < 6; b++)
        w.bodies[b].level = 1.0;
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 1);
    water_test_cover(&w, &g, 1, &p, 0, 8, 2, 3);
    water_test_cover(&w, &g, 2, &p, 0, 8, 4, 5);
    water_test_cover(&w, &g, 4, &p, 0, 8, 6, 6);
    water_test_cover(&w, &g, 5, &p, 0, 8, 7, 8);
    uint32_t skipped = 0;
    char *text = objects_of(&w, &g, &skipped);
    CHECK_EQ_INT(skipped, 2);
    CHECK_CONTAINS(text, "{\"name\":\"water_a_b\",\"class\":\"WaterBlock\",");
    CHECK_CONTAINS(text, "\n{\"name\":\"water_a_b_1\",\"class\":\"WaterPlane\",");
    CHECK_CONTAINS(text, "\n{\"name\":\"water_b2\",\"class\":\"WaterBlock\",");
    CHECK_CONTAINS(text, "\n{\"name\":\"water_b5\",\"class\":\"River\",");
    CHECK(text && !strstr(text, "water_b3") && !strstr(text, "water_b4"));
    free(text);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

static void test_arguments(void)
{
    trn_field g, other;
    water_test_field(&g, 4, 4, 1.0, 1.0, flat);
    water_test_field(&other, 4, 5, 1.0, 1.0, flat);
    trn_water w;
    water_test_init(&w, &g, 0, TRN_WATER_LAKE);
    char *text = (char *)&w;
    trn_error e;
    CHECK_STATUS(trn_beamng_water_objects(&w, &other, &placement, &text, NULL, NULL, &e),
                 TRN_ERR_MISMATCH);
    CHECK(text == NULL);
    CHECK_STATUS(trn_beamng_water_objects(&w, &g, NULL, &text, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_beamng_water_objects(&w, &g, &placement, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    /* No bodies: no objects, no level files. */
    CHECK_OK(trn_beamng_water_objects(&w, &g, &placement, &text, NULL, NULL, &e));
    CHECK(text && text[0] == '\0');
    free(text);
    char dir[512], level[600];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(level, sizeof level, "%s/levels/none", dir);
    trn_beamng_water_options o = {level, placement, NULL};
    trn_beamng_water_result res;
    CHECK_OK(trn_beamng_level_write_water(&w, &g, &o, &res, &e));
    CHECK(res.planes + res.blocks + res.rivers == 0 && !trn_test_exists(level));
    o.level_dir = "";
    CHECK_STATUS(trn_beamng_level_write_water(&w, &g, &o, &res, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
    trn_field_dispose(&other);
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

static int count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}

/* A lake and an ocean into a level: new objects in the Water group; written again, updated
 * where they are with the modder's fields and ids kept; the scaffold's plane taken over; a name
 * another object holds avoided. */
static void test_level_write(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, diamond);
    trn_water w;
    water_test_init(&w, &g, 2, TRN_WATER_LAKE);
    snprintf(w.bodies[0].id, sizeof w.bodies[0].id, "lake");
    snprintf(w.bodies[1].id, sizeof w.bodies[1].id, "sea");
    w.bodies[0].level = 2.25;
    w.bodies[1].kind = TRN_WATER_OCEAN;
    w.bodies[1].level = 0.5;
    water_plane p[2] = {{2.25, 0, 0}, {10.0, 0, 0}};
    water_test_cover(&w, &g, 0, &p[0], 0, 8, 0, 8);
    water_test_cover(&w, &g, 1, &p[1], 0, 0, 0, 0);
    char dir[512], level[600], path[800];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(level, sizeof level, "%s/levels/isle", dir);
    trn_beamng_water_options o = {level, placement, NULL};
    trn_beamng_water_result res;
    CHECK_OK(trn_beamng_level_write_water(&w, &g, &o, &res, NULL));
    CHECK(res.planes == 1 && res.blocks == 1 && res.rivers == 0);
    CHECK(res.replaced == 0 && res.skipped == 0);
    CHECK(strcmp(res.plane_name, "water_sea") == 0);
    snprintf(path, sizeof path, "%s/main/MissionGroup/Water/items.level.json", level);
    CHECK(strcmp(res.items_path, path) == 0);
    char *text = read_text(path);
    CHECK_EQ_INT(count_lines(text), 2);
    CHECK_CONTAINS(text, "{\"name\":\"water_lake\",\"class\":\"WaterBlock\",\"persistentId\":\"");
    CHECK_CONTAINS(text, "\",\"__parent\":\"Water\",\"position\":[-96,-196,12.25],");
    CHECK_CONTAINS(text, "\n{\"name\":\"water_sea\",\"class\":\"WaterPlane\",\"persistentId\":");
    CHECK_CONTAINS(text, "\"position\":[0,0,10.5],");
    /* A new ocean carries what the World Editor saves on one: its layers and surface settings. */
    CHECK_CONTAINS(text, "\"Foam\":[{\"foamDir\"");
    CHECK_CONTAINS(text, "\"Waves (vertex undulation)\":[");
    CHECK_CONTAINS(text, "\"gridSize\":100");
    CHECK_CONTAINS(text, "\"rippleTex\":\"core/art/water/ripple\"");
    char *first = text;
    snprintf(path, sizeof path, "%s/main/MissionGroup/items.level.json", level);
    text = read_text(path);
    CHECK_CONTAINS(text, "\"name\":\"Water\",\"class\":\"SimGroup\",");
    CHECK_CONTAINS(text, "\"__parent\":\"MissionGroup\"");
    free(text);
    snprintf(path, sizeof path, "%s/main/items.level.json", level);
    text = read_text(path);
    CHECK_CONTAINS(text, "\"name\":\"MissionGroup\",\"class\":\"SimGroup\"");
    free(text);

    /* The modder adds a field to the lake; the lake rises; written again. */
    snprintf(path, sizeof path, "%s/main/MissionGroup/Water/items.level.json", level);
    char *edited = malloc(strlen(first) + 32);
    const char *cut = strstr(first, "\"position\"");
    snprintf(edited, strlen(first) + 32, "%.*s\"cubemap\":\"sky\",%s", (int)(cut - first), first,
             cut);
    CHECK(trn_test_write_file(path, edited, strlen(edited)));
    w.bodies[0].level = 3.5;
    p[0].c = 3.5;
    water_test_cover(&w, &g, 0, &p[0], 0, 8, 0, 8);
    CHECK_OK(trn_beamng_level_write_water(&w, &g, &o, &res, NULL));
    CHECK(res.planes == 1 && res.blocks == 1 && res.replaced == 2);
    CHECK(res.items_path[0] == '\0');
    text = read_text(path);
    CHECK_EQ_INT(count_lines(text), 2);
    CHECK_CONTAINS(text, "\"cubemap\":\"sky\",\"position\":[-96,-196,13.5],\"scale\":[7,7,7],");
    /* Its persistentId is the one it had. */
    const char *pid = strstr(first, "\"persistentId\":");
    CHECK(pid && strncmp(strstr(text, "\"persistentId\":"), pid, 53) == 0);
    free(text);
    free(edited);
    free(first);

    /* Another level with the scaffold's plane and an object holding the lake's name. */
    snprintf(level, sizeof level, "%s/levels/scaffolded", dir);
    const char *folders[] = {"", "/main", "/main/MissionGroup", "/main/MissionGroup/Water"};
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s%s", level, folders[f]);
        mkdir(path, 0755);
    }
    snprintf(path, sizeof path, "%s/levels", dir);
    mkdir(path, 0755);
    for (int f = 0; f < 4; f++) {
        snprintf(path, sizeof path, "%s%s", level, folders[f]);
        mkdir(path, 0755);
    }
    snprintf(path, sizeof path, "%s/main/items.level.json", level);
    const char *main_items =
        "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"enabled\":\"1\"}\n";
    CHECK(trn_test_write_file(path, main_items, strlen(main_items)));
    snprintf(path, sizeof path, "%s/main/MissionGroup/items.level.json", level);
    const char *group =
        "{\"name\":\"Water\",\"class\":\"SimGroup\",\"__parent\":\"MissionGroup\"}\r\n"
        "{\"name\":\"Water_Lake\",\"class\":\"TSStatic\",\"__parent\":"
        "\"MissionGroup\"}\r\n";
    CHECK(trn_test_write_file(path, group, strlen(group)));
    snprintf(path, sizeof path, "%s/main/MissionGroup/Water/items.level.json", level);
    const char *plane = "{\"name\":\"ocean\",\"class\":\"WaterPlane\",\"__parent\":\"Water\","
                        "\"position\":[1,2,0],\"foamTex\":\"mine\"}\r\n";
    CHECK(trn_test_write_file(path, plane, strlen(plane)));
    o.level_dir = level;
    CHECK_OK(trn_beamng_level_write_water(&w, &g, &o, &res, NULL));
    CHECK(res.planes == 1 && res.blocks == 1 && res.replaced == 1);
    CHECK(strcmp(res.plane_name, "ocean") == 0);
    text = read_text(path);
    const char *updated = "{\"name\":\"ocean\",\"class\":\"WaterPlane\",\"__parent\":\"Water\","
                          "\"position\":[1,2,10.5],\"foamTex\":\"mine\"," LOOK "}\r\n{";
    CHECK(text && strncmp(text, updated, strlen(updated)) == 0);
    CHECK_CONTAINS(text, "\r\n{\"name\":\"water_lake_1\",\"class\":\"WaterBlock\",");
    CHECK_EQ_INT(count_lines(text), 2);
    free(text);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

int main(void)
{
    RUN(test_ocean_plane);
    RUN(test_lake_block);
    RUN(test_river_nodes);
    RUN(test_classes_skips_and_names);
    RUN(test_arguments);
    RUN(test_level_write);
    return trn_test_finish();
}
