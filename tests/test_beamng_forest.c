/* BeamNG vegetation: grass as GroundCover, shaped trees as forest items in the level's own
 * format and turned the right way, and validate's forest and ground-cover checks. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "terrane/beamng.h"
#include "terrane/beamng_forest.h"
#include "terrane/beamng_level.h"
#include "terrane/palette.h"
#include "test.h"

/* Grass (a GroundCover), a pine with a shape (forest items) and a bush without one (left out). */
static const char palette_text[] =
    "{\"format_version\": 3, \"name\": \"Woods\", \"placements\": {"
    "\"grass\": {\"model\": \"asset://models/grass\", \"collision\": \"none\", \"category\": "
    "\"grass\", \"density\": 0.5, \"candidate_spacing\": 1, \"scale\": [0.5, 1.5]}, "
    "\"pine\": {\"model\": \"asset://levels/woods/art/shapes/pine.dae\", \"collision\": \"none\", "
    "\"category\": \"tree\", \"density\": 0.01, \"candidate_spacing\": 4}, "
    "\"bush\": {\"prefab\": \"prefab://bush\", \"category\": \"tree\", \"density\": 0.01, "
    "\"candidate_spacing\": 4}}}";

static const char *const layer_names[] = {"meadow", "rock"};

/* 128 x 128 samples a metre apart: meadow west of x = 64, rock east of it. */
static uint8_t layers[128 * 128];

static bool str_eq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
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

static size_t count_of(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = text ? strstr(text, needle) : NULL; p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A level at DIR/levels/NAME with a 128 x 128 terrain of the two materials. */
static void make_level(const char *level)
{
    trn_error e;
    trn_field g;
    trn_labels labels;
    CHECK_OK(trn_field_init(&g, 127, 127, 127, 127, &e));
    CHECK_OK(trn_labels_init(&labels, 127, 127, &e));
    for (int k = 0; k < 2; k++)
        CHECK_OK(trn_labels_add_name(&labels, layer_names[k], strlen(layer_names[k]), &e));
    for (size_t j = 0; j < 128; j++)
        for (size_t i = 0; i < 128; i++) {
            g.heights[j * 128 + i] = 10.0f;
            labels.values[j * 128 + i] = layers[j * 128 + i] = i < 64 ? 0 : 1;
        }
    trn_ter ter;
    CHECK_OK(trn_ter_from_field(&g, 64.0, &labels, "default", &ter, &e));
    trn_beamng_level_options o;
    memset(&o, 0, sizeof o);
    o.level_dir = level;
    o.max_height = 64.0;
    o.square_size = 1.0;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &o, &res, NULL, NULL, &e));
    trn_ter_dispose(&ter);
    trn_labels_dispose(&labels);
    trn_field_dispose(&g);
}

/* Three grass tufts (two on meadow, one on rock), two pines (the first turned 30 degrees), a
 * bush. */
static void make_instances(trn_instances *inst)
{
    static trn_instance items[6];
    const trn_instance v[6] = {
        {0, 0, 0, 10, 10, 10, 0, 1},    {0, 1, 0, 20, 10, 10, 0, 1},
        {0, 2, 0, 100, 10, 10, 0, 1},   {1, 0, 0, 32, 10, 40, 30, 1.25},
        {1, 1, 0, 90, 10, 90, 0, 0.75}, {2, 0, 0, 50, 10, 50, 0, 1},
    };
    memcpy(items, v, sizeof v);
    inst->items = items;
    inst->count = 6;
}

static void forest_options(trn_beamng_forest_options *o, const char *level)
{
    memset(o, 0, sizeof *o);
    o->level_dir = level;
    o->origin_x = o->origin_y = -64.0;
    o->layers = layers;
    o->layers_width = o->layers_height = 128;
    o->layers_spacing = 1.0;
    o->layer_names = layer_names;
    o->layer_count = 2;
}

static json_t *line_object(const char *text, int line)
{
    const char *p = text;
    for (int k = 1; p && k < line; k++) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return NULL;
    const char *end = strchr(p, '\n');
    return json_loadb(p, end ? (size_t)(end - p) : strlen(p), 0, NULL);
}

/* The line of text holding needle (1-based), 0 when none. */
static int line_holding(const char *text, const char *needle)
{
    const char *p = text ? strstr(text, needle) : NULL;
    if (!p) return 0;
    int line = 1;
    for (const char *c = text; c < p; c++)
        line += *c == '\n';
    return line;
}

static const trn_finding *find_in(const trn_findings *f, const char *check, const char *file_end)
{
    for (size_t k = 0; k < f->count; k++) {
        const trn_finding *x = &f->items[k];
        const size_t n = strlen(x->file), m = strlen(file_end);
        if (strcmp(x->check, check) == 0 && n >= m && strcmp(x->file + n - m, file_end) == 0)
            return x;
    }
    return NULL;
}

static size_t vegetation_findings(const trn_findings *f)
{
    size_t n = 0;
    for (size_t k = 0; k < f->count; k++)
        n += strncmp(f->items[k].check, "forest-", 7) == 0 ||
             strncmp(f->items[k].check, "ground-cover-", 13) == 0;
    return n;
}

/* forest4 level: grass as a GroundCover on the materials it stood on, the pine as forest items
 * turned clockwise by its yaw, the bush left out; a second export adds no second object; the
 * level validates; validate finds broken items and an unknown layer with file and line. */
static void test_forest4_level(void)
{
    char dir[512], level[600], path[800];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(level, sizeof level, "%s/levels/woods", dir);
    make_level(level);
    /* The pine's shape, where its shapeFile points. */
    char shape[900];
    snprintf(path, sizeof path, "%s/art/shapes", level);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(shape, sizeof shape, "%s/pine.dae", path);
    CHECK(trn_test_write_file(shape, "<COLLADA/>", 10));
    trn_palette pal;
    trn_error e;
    CHECK_OK(trn_palette_parse(palette_text, strlen(palette_text), "woods.palette", &pal, &e));
    trn_instances inst;
    make_instances(&inst);
    trn_beamng_forest_options o;
    forest_options(&o, level);
    /* An older export's shapeless grass items: removed. */
    char old_grass[800];
    snprintf(old_grass, sizeof old_grass, "%s/forest/terrane_grass.forest4.json", level);
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(mkdir(path, 0755) == 0);
    const char old_line[] = "{\"pos\":[0,0,10],\"rotationMatrix\":[1,0,0,0,1,0,0,0,1],"
                            "\"scale\":1,\"type\":\"terrane_grass\"}\n";
    CHECK(trn_test_write_file(old_grass, old_line, strlen(old_line)));
    trn_beamng_forest_result res;
    for (int round = 0; round < 2; round++) {
        CHECK_OK(trn_beamng_level_write_forest(&pal, &inst, &o, &res, &e));
        CHECK_EQ_INT(res.stale_removed, round == 0);
        CHECK(!trn_test_exists(old_grass));
        CHECK_EQ_INT(res.types, 1);
        CHECK_EQ_INT(res.items, 2);
        CHECK_EQ_INT(res.format, TRN_BEAMNG_FOREST_FOREST4);
        CHECK_EQ_INT(res.covers, 1);
        CHECK_EQ_INT(res.covers_added, round == 0);
        CHECK_EQ_INT(res.cover_instances, 3);
        CHECK_EQ_INT(res.unshaped, 1);
        CHECK_EQ_INT(res.unshaped_items, 1);
        CHECK(res.forest_added == (round == 0) && res.wind_added == (round == 0));
    }
    /* The pine: pos placed as the block, the matrix's first row the item's x axis turned 30
     * degrees clockwise seen from above (towards the south), not the transpose. */
    snprintf(path, sizeof path, "%s/forest/terrane_pine.forest4.json", level);
    char *items = read_text(path);
    CHECK_EQ_INT(count_of(items, "\n"), 2);
    /* The line as the editor lays it out (keys pos, rotationMatrix, scale, type; no spaces),
     * each number in its shortest round-trip form: no 17-digit noise, -0 as 0. */
    const char pine_line[] =
        "{\"pos\":[-32,-24,10],\"rotationMatrix\":[0.8660254037844387,-0.49999999999999994,0,"
        "0.49999999999999994,0.8660254037844387,0,0,0,1],\"scale\":1.25,\"type\":\"terrane_pine\"}"
        "\n";
    CHECK(items && strncmp(items, pine_line, strlen(pine_line)) == 0);
    json_t *first = line_object(items, 1);
    const json_t *m = json_object_get(first, "rotationMatrix");
    const json_t *pos = json_object_get(first, "pos");
    CHECK(json_array_size(m) == 9);
    const double c30 = cos(30.0 * 3.14159265358979323846 / 180.0);
    CHECK(fabs(json_number_value(json_array_get(m, 0)) - c30) < 1e-12);
    CHECK(fabs(json_number_value(json_array_get(m, 1)) + 0.5) < 1e-12);
    CHECK(fabs(json_number_value(json_array_get(m, 3)) - 0.5) < 1e-12);
    CHECK(fabs(json_number_value(json_array_get(m, 4)) - c30) < 1e-12);
    CHECK(json_number_value(json_array_get(m, 8)) == 1.0);
    CHECK(json_number_value(json_array_get(pos, 0)) == -32.0);
    CHECK(json_number_value(json_array_get(pos, 1)) == -24.0);
    CHECK(json_number_value(json_array_get(pos, 2)) == 10.0);
    CHECK(json_number_value(json_object_get(first, "scale")) == 1.25);
    CHECK(str_eq(json_string_value(json_object_get(first, "type")), "terrane_pine"));
    json_decref(first);
    free(items);
    /* No forest items for grass or the unshaped bush. */
    snprintf(path, sizeof path, "%s/forest/terrane_grass.forest4.json", level);
    CHECK(!trn_test_exists(path));
    snprintf(path, sizeof path, "%s/forest/terrane_bush.forest4.json", level);
    CHECK(!trn_test_exists(path));
    snprintf(path, sizeof path, "%s/art/forest/managedItemData.json", level);
    char *md_text = read_text(path);
    json_t *md = md_text ? json_loads(md_text, 0, NULL) : NULL;
    CHECK(
        str_eq(json_string_value(json_object_get(json_object_get(md, "terrane_pine"), "shapeFile")),
               "/levels/woods/art/shapes/pine.dae"));
    CHECK(!json_object_get(md, "terrane_grass") && !json_object_get(md, "terrane_bush"));
    json_decref(md);
    free(md_text);
    /* The scene: one Forest, one wind emitter, one GroundCover with a type per material. */
    char scene_path[800];
    snprintf(scene_path, sizeof scene_path, "%s/main/MissionGroup/items.level.json", level);
    char *scene = read_text(scene_path);
    CHECK_EQ_INT(count_of(scene, "\"class\":\"Forest\""), 1);
    CHECK_EQ_INT(count_of(scene, "\"class\":\"ForestWindEmitter\""), 1);
    CHECK_EQ_INT(count_of(scene, "\"class\":\"GroundCover\""), 1);
    /* The wind emitter as the World Editor's new-level template saves it: a position and no
     * wind value, so the engine's defaults apply. */
    {
        json_t *wind = line_object(scene, line_holding(scene, "\"class\":\"ForestWindEmitter\""));
        const char *keys[] = {"name", "class", "persistentId", "__parent", "position"};
        CHECK_EQ_INT(json_object_size(wind), 5);
        for (size_t k = 0; k < 5; k++)
            CHECK(json_object_get(wind, keys[k]) != NULL);
        json_decref(wind);
    }
    const int cover_line = line_holding(scene, "\"class\":\"GroundCover\"");
    json_t *cover = line_object(scene, cover_line);
    const json_t *types = json_object_get(cover, "Types");
    /* All 8 of Torque's type slots, as the World Editor saves them: the unused ones empty. */
    CHECK_EQ_INT(json_array_size(types), 8);
    for (size_t k = 2; k < 8; k++)
        CHECK(json_is_object(json_array_get(types, k)) &&
              json_object_size(json_array_get(types, k)) == 0);
    const json_t *t0 = json_array_get(types, 0), *t1 = json_array_get(types, 1);
    CHECK(str_eq(json_string_value(json_object_get(t0, "layer")), "meadow"));
    CHECK(fabs(json_number_value(json_object_get(t0, "probability")) - 2.0 / 3.0) < 1e-12);
    CHECK(str_eq(json_string_value(json_object_get(t1, "layer")), "rock"));
    CHECK(json_number_value(json_object_get(t0, "sizeMin")) == 0.5);
    CHECK(json_number_value(json_object_get(t0, "sizeMax")) == 1.5);
    CHECK(str_eq(json_string_value(json_object_get(cover, "name")), "terrane_grass_groundcover"));
    json_decref(cover);
    /* The level as written has nothing to say about its vegetation. */
    trn_findings f = {NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    CHECK_EQ_INT(vegetation_findings(&f), 0);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    trn_findings_dispose(&f);

    /* Broken: an item of an unknown type (line 3), one far off the terrain (line 4), items of
     * a type without a shape, and a GroundCover layer that names no terrain material. */
    snprintf(path, sizeof path, "%s/forest/terrane_pine.forest4.json", level);
    items = read_text(path);
    char extra[2048];
    snprintf(extra, sizeof extra,
             "%s{\"pos\":[0,0,10],\"rotationMatrix\":[1,0,0,0,1,0,0,0,1],\"scale\":1,"
             "\"type\":\"ghost\"}\n{\"pos\":[500,0,10],\"rotationMatrix\":[1,0,0,0,1,0,0,0,1],"
             "\"scale\":1,\"type\":\"terrane_pine\"}\n",
             items ? items : "");
    CHECK(trn_test_write_file(path, extra, strlen(extra)));
    free(items);
    snprintf(path, sizeof path, "%s/forest/grass.forest4.json", level);
    const char bare[] = "\n{\"pos\":[1,1,10],\"rotationMatrix\":[1,0,0,0,1,0,0,0,1],\"scale\":1,"
                        "\"type\":\"tuft\"}\n";
    CHECK(trn_test_write_file(path, bare, strlen(bare)));
    snprintf(path, sizeof path, "%s/art/forest/managedItemData.json", level);
    const char data[] = "{\n  \"terrane_pine\": {\"class\": \"TSForestItemData\", \"shapeFile\": "
                        "\"/levels/woods/art/shapes/pine.dae\"},\n  \"tuft\": {\"class\": "
                        "\"TSForestItemData\", \"shapeFile\": \"\"}\n}\n";
    CHECK(trn_test_write_file(path, data, strlen(data)));
    char *broken = malloc(strlen(scene) + 16);
    strcpy(broken, scene);
    char *rock = strstr(broken, "\"layer\":\"rock\"");
    CHECK(rock != NULL);
    if (rock) memcpy(rock, "\"layer\":\"lava\"", 14);
    /* The other type on the same unknown layer (case aside): still one finding for the object. */
    char *meadow = strstr(broken, "\"layer\":\"meadow\"");
    CHECK(meadow != NULL);
    if (meadow) memcpy(meadow, "\"layer\":\"LAVA\"  ", 16);
    CHECK(trn_test_write_file(scene_path, broken, strlen(broken)));
    free(broken);
    free(scene);
    f = (trn_findings){NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    const trn_finding *x = find_in(&f, "forest-item-type-unknown", "terrane_pine.forest4.json");
    CHECK(x && x->line == 3 && x->severity == TRN_SEVERITY_ERROR);
    CHECK(x && strstr(x->message, "\"ghost\""));
    x = find_in(&f, "forest-item-outside-terrain", "terrane_pine.forest4.json");
    CHECK(x && x->line == 4);
    x = find_in(&f, "forest-item-no-shape", "grass.forest4.json");
    CHECK(x && x->line == 2 && strstr(x->message, "\"tuft\""));
    CHECK(x && strstr(x->fix, "managedItemData.json line 3"));
    x = find_in(&f, "ground-cover-layer-unknown", "MissionGroup/items.level.json");
    CHECK(x && x->line == cover_line && strstr(x->message, "ayer \"LAVA\"") &&
          x->severity == TRN_SEVERITY_WARNING);
    CHECK_EQ_INT(vegetation_findings(&f), 4);
    trn_findings_dispose(&f);
    /* The shape gone: its item data's line is named. */
    CHECK(remove(shape) == 0);
    f = (trn_findings){NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    x = find_in(&f, "forest-shape-missing", "managedItemData.json");
    CHECK(x && x->line == 2 && x->severity == TRN_SEVERITY_WARNING &&
          strstr(x->message, "pine.dae"));
    CHECK_EQ_INT(vegetation_findings(&f), 5);
    trn_findings_dispose(&f);
    /* The World Editor also saves the game path without its leading '/' (public levels hold
     * "shapeFile": "levels/NAME/art/..."): it is checked all the same. */
    const char data_bare[] = "{\n  \"terrane_pine\": {\"class\": \"TSForestItemData\", "
                             "\"shapeFile\": \"levels/woods/art/shapes/pine.dae\"},\n  \"tuft\": "
                             "{\"class\": \"TSForestItemData\", \"shapeFile\": \"\"}\n}\n";
    CHECK(trn_test_write_file(path, data_bare, strlen(data_bare)));
    f = (trn_findings){NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    x = find_in(&f, "forest-shape-missing", "managedItemData.json");
    CHECK(x && x->line == 2);
    CHECK_EQ_INT(vegetation_findings(&f), 5);
    trn_findings_dispose(&f);
    /* Without managedItemData.json the engine reads the item data from managedItemData.cs
     * (TorqueScript datablocks); a commented-out one defines nothing. */
    CHECK(remove(path) == 0);
    snprintf(path, sizeof path, "%s/art/forest/managedItemData.cs", level);
    const char script[] = "// Forest item data\n"
                          "datablock TSForestItemData(terrane_pine)\n"
                          "{\n"
                          "   internalName = \"terrane_pine\";\n"
                          "   shapeFile = \"levels/woods/art/shapes/pine.dae\";\n"
                          "};\n"
                          "// datablock TSForestItemData(ghost) { shapeFile = \"ghost.dae\"; };\n"
                          "/* datablock TSForestItemData(ghost) {}; */\n"
                          "datablock TSForestItemData( tuft ) { windScale = \"1\"; };\n";
    CHECK(trn_test_write_file(path, script, strlen(script)));
    f = (trn_findings){NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    x = find_in(&f, "forest-shape-missing", "managedItemData.cs");
    CHECK(x && x->line == 2 && strstr(x->message, "\"terrane_pine\""));
    x = find_in(&f, "forest-item-no-shape", "grass.forest4.json");
    CHECK(x && strstr(x->fix, "managedItemData.cs line 9"));
    x = find_in(&f, "forest-item-type-unknown", "terrane_pine.forest4.json");
    CHECK(x && strstr(x->message, "\"ghost\""));
    CHECK_EQ_INT(vegetation_findings(&f), 5);
    trn_findings_dispose(&f);
    /* The engine loads datablocks from every "...Data.json" file of the level folder, not only
     * art/forest/managedItemData.json: item data kept beside a shape counts. */
    snprintf(path, sizeof path, "%s/art/shapes/ghostItemData.json", level);
    const char ghost[] = "{\"ghost\": {\"class\": \"TSForestItemData\", \"shapeFile\": "
                         "\"/art/shapes/trees/ghost.dae\"}}";
    CHECK(trn_test_write_file(path, ghost, strlen(ghost)));
    f = (trn_findings){NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    CHECK(!find_in(&f, "forest-item-type-unknown", "terrane_pine.forest4.json"));
    CHECK_EQ_INT(vegetation_findings(&f), 4);
    trn_findings_dispose(&f);
    trn_palette_dispose(&pal);
}

/* A level that keeps its forest in NAME.forest.json ("JSON Forest Data v2") gets the pines
 * there, as quaternion rows, its header and other types kept; no forest/ folder appears. */
static void test_v2_level(void)
{
    char dir[512], level[600], path[800];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(level, sizeof level, "%s/levels/oldwoods", dir);
    make_level(level);
    snprintf(path, sizeof path, "%s/oldwoods.forest.json", level);
    const char v2[] = "{\"header\": {\"format\": \"JSON Forest Data v2\", \"version\": 2}, "
                      "\"instances\": {\"oak\": [[1, 2, 3, 0, 0, 0, 1, 1]]}}";
    CHECK(trn_test_write_file(path, v2, strlen(v2)));
    /* The level keeps its Forest in a vegetation group: the wind and the grass go beside it. */
    snprintf(path, sizeof path, "%s/main/MissionGroup/items.level.json", level);
    char *mission = read_text(path);
    char grown[4096];
    snprintf(grown, sizeof grown,
             "%s{\"name\":\"vegetation\",\"class\":\"SimGroup\",\"__parent\":\"MissionGroup\"}\n",
             mission ? mission : "");
    free(mission);
    CHECK(trn_test_write_file(path, grown, strlen(grown)));
    snprintf(path, sizeof path, "%s/main/MissionGroup/vegetation", level);
    CHECK(mkdir(path, 0755) == 0);
    char veg[900];
    snprintf(veg, sizeof veg, "%s/items.level.json", path);
    const char forest_line[] =
        "{\"name\":\"theForest\",\"class\":\"Forest\",\"__parent\":\"vegetation\"}\n";
    CHECK(trn_test_write_file(veg, forest_line, strlen(forest_line)));
    trn_palette pal;
    trn_error e;
    CHECK_OK(trn_palette_parse(palette_text, strlen(palette_text), "woods.palette", &pal, &e));
    trn_instances inst;
    make_instances(&inst);
    trn_beamng_forest_options o;
    forest_options(&o, level);
    trn_beamng_forest_result res;
    CHECK_OK(trn_beamng_level_write_forest(&pal, &inst, &o, &res, &e));
    CHECK_EQ_INT(res.format, TRN_BEAMNG_FOREST_V2);
    CHECK_EQ_INT(res.items, 2);
    CHECK(!res.forest_added && res.wind_added && res.covers_added == 1);
    char *veg_text = read_text(veg);
    CHECK_EQ_INT(count_of(veg_text, "\"class\":\"ForestWindEmitter\",\"persistentId\""), 1);
    CHECK_EQ_INT(count_of(veg_text, "\"class\":\"GroundCover\""), 1);
    CHECK_EQ_INT(count_of(veg_text, "\"__parent\":\"vegetation\""), 3);
    free(veg_text);
    snprintf(path, sizeof path, "%s/oldwoods.forest.json", level);
    char *text = read_text(path);
    json_t *root = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(str_eq(json_string_value(json_object_get(json_object_get(root, "header"), "format")),
                 "JSON Forest Data v2"));
    const json_t *all = json_object_get(root, "instances");
    CHECK_EQ_INT(json_array_size(json_object_get(all, "oak")), 1);
    const json_t *pines = json_object_get(all, "terrane_pine");
    CHECK_EQ_INT(json_array_size(pines), 2);
    const json_t *row = json_array_get(pines, 0);
    CHECK_EQ_INT(json_array_size(row), 8);
    const double half = 15.0 * 3.14159265358979323846 / 180.0;
    CHECK(json_number_value(json_array_get(row, 0)) == -32.0);
    CHECK(json_number_value(json_array_get(row, 3)) == 0.0);
    CHECK(json_number_value(json_array_get(row, 4)) == 0.0);
    CHECK(fabs(json_number_value(json_array_get(row, 5)) - sin(half)) < 1e-12);
    CHECK(fabs(json_number_value(json_array_get(row, 6)) - cos(half)) < 1e-12);
    CHECK(json_number_value(json_array_get(row, 7)) == 1.25);
    /* The engine turns the row's quaternion into a matrix with Torque's QuatF::setMatrix
     * (m_quatF_set_matF: element (row 1, column 0) is xy - wz, the transpose of the usual
     * formula) and applies it as M * v, so the matrix's first column is where the item's x axis
     * points. It must be the forest4 file's first row for the same turn: 30 degrees clockwise
     * seen from above, towards east-south-east. */
    {
        const double x = json_number_value(json_array_get(row, 3));
        const double y = json_number_value(json_array_get(row, 4));
        const double z = json_number_value(json_array_get(row, 5));
        const double w = json_number_value(json_array_get(row, 6));
        const double col0[3] = {1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z),
                                2.0 * (x * z + w * y)};
        const double c30 = cos(30.0 * 3.14159265358979323846 / 180.0);
        CHECK(fabs(col0[0] - c30) < 1e-12 && fabs(col0[1] + 0.5) < 1e-12 && fabs(col0[2]) < 1e-12);
        /* BeamNG's own Lua turns a vector by a quaternion the same way (lua/common/mathlib.lua,
         * LuaVec3:rotated, "Rotates by quaternion q (-w)": t = 2 q x v, v' = v - w t + q x t), and
         * hands the same four numbers to the engine's QuatF:getMatrix() for objects and forest
         * items (editor/forestEditor.lua tilts painted items to the ground this way). */
        const double t[3] = {2.0 * (y * 0.0 - z * 0.0), 2.0 * (z * 1.0 - x * 0.0),
                             2.0 * (x * 0.0 - y * 1.0)};
        const double lua[3] = {1.0 - w * t[0] + (y * t[2] - z * t[1]),
                               0.0 - w * t[1] + (z * t[0] - x * t[2]),
                               0.0 - w * t[2] + (x * t[1] - y * t[0])};
        CHECK(fabs(lua[0] - c30) < 1e-12 && fabs(lua[1] + 0.5) < 1e-12 && fabs(lua[2]) < 1e-12);
    }
    CHECK(!json_object_get(all, "terrane_grass"));
    json_decref(root);
    const int oak_line = line_holding(text, "\"oak\"");
    CHECK(oak_line > 1);
    free(text);
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(!trn_test_exists(path));
    /* validate reads the v2 file: the modder's oak has no item data. */
    trn_findings f = {NULL, 0, 0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, &e));
    const trn_finding *x = find_in(&f, "forest-item-type-unknown", "oldwoods.forest.json");
    CHECK(x && strstr(x->message, "\"oak\"") && x->line == oak_line);
    CHECK_EQ_INT(vegetation_findings(&f), 1);
    trn_findings_dispose(&f);
    /* Once forest/ holds item files the engine reads those: the pines go there too. */
    snprintf(path, sizeof path, "%s/forest", level);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(path, sizeof path, "%s/forest/oak.forest4.json", level);
    const char oak[] = "{\"pos\":[1,2,3],\"rotationMatrix\":[1,0,0,0,1,0,0,0,1],\"scale\":1,"
                       "\"type\":\"oak\"}\n";
    CHECK(trn_test_write_file(path, oak, strlen(oak)));
    CHECK_OK(trn_beamng_level_write_forest(&pal, &inst, &o, &res, &e));
    CHECK_EQ_INT(res.format, TRN_BEAMNG_FOREST_FOREST4);
    snprintf(path, sizeof path, "%s/forest/terrane_pine.forest4.json", level);
    CHECK(trn_test_exists(path));
    trn_palette_dispose(&pal);
}

int main(void)
{
    RUN(test_forest4_level);
    RUN(test_v2_level);
    return trn_test_finish();
}
