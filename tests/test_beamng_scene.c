/* Tests for BeamNG levels as the World Editor writes them: the MissionGroup tree, persistentIds,
 * editor-form materials, ground models, the tree checks of validate and --scaffold. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include <jansson.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "test.h"

static char tmp[512];

static char *path_in(const char *dir, const char *name)
{
    static char bufs[8][1024];
    static int next = 0;
    char *b = bufs[next++ & 7];
    snprintf(b, 1024, "%s/%s", dir, name);
    return b;
}

static char *read_text(const char *path)
{
    return (char *)trn_test_read_file(path, NULL);
}

static bool write_text(const char *path, const char *text)
{
    return trn_test_write_file(path, text, strlen(text));
}

static void mkdirs(const char *path)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0777);
            *s = '/';
        }
    mkdir(p, 0777);
}

static size_t count_check(const trn_findings *f, const char *check)
{
    size_t n = 0;
    for (size_t i = 0; i < f->count; i++)
        n += strcmp(f->items[i].check, check) == 0;
    return n;
}

static void dump_findings(const trn_findings *f)
{
    for (size_t i = 0; i < f->count; i++)
        fprintf(stderr, "  [%s] %s: %s (%s:%d)\n", trn_severity_name(f->items[i].severity),
                f->items[i].check, f->items[i].message, f->items[i].file, f->items[i].line);
}

static trn_findings validate(const char *level)
{
    trn_findings f = {0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, NULL));
    return f;
}

/* The editor level's Grass has no textures of its own: leave textures out of it. */
static trn_findings validate_tree(const char *level)
{
    trn_findings f = {0};
    trn_beamng_validate_options vo = {0};
    vo.skip_textures = true;
    CHECK_OK(trn_beamng_validate(level, &vo, &f, NULL, NULL, NULL));
    return f;
}

/* A flat-ish terrain of size x size, material names given, no holes. */
static void make_ter(trn_ter *ter, uint32_t size, const char *const *names, uint32_t count)
{
    memset(ter, 0, sizeof *ter);
    ter->version = 9;
    ter->size = size;
    size_t n = (size_t)size * size;
    ter->heights = calloc(n, 2);
    ter->layers = calloc(n, 1);
    ter->materials = calloc(count ? count : 1, sizeof(char *));
    ter->material_lengths = calloc(count ? count : 1, sizeof(uint32_t));
    for (uint32_t i = 0; i < count; i++) {
        ter->materials[i] = strdup(names[i]);
        ter->material_lengths[i] = (uint32_t)strlen(names[i]);
    }
    ter->material_count = count;
    for (size_t i = 0; i < n; i++)
        ter->heights[i] = 16384;
}

/* ------------------------------------------------------------------------ persistentId */

static void test_persistent_id(void)
{
    char id[TRN_BEAMNG_PERSISTENT_ID_SIZE];
    /* Python: uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_DNS, "beamng.terrane"), "island/...") */
    trn_beamng_persistent_id("island", "TerrainBlock", "theTerrain", id);
    CHECK(strcmp(id, "53f17fae-5fb2-5405-b836-9fefbf82d0d3") == 0);
    trn_beamng_persistent_id("island", "SimGroup", "MissionGroup", id);
    CHECK(strcmp(id, "73cb4915-7251-5c7b-8022-289e4de007c2") == 0);
    trn_beamng_persistent_id(NULL, NULL, NULL, id);
    CHECK(strcmp(id, "05f8475b-ee04-5d59-a29d-afc515b0cc10") == 0);
    CHECK_EQ_INT(strlen(id), 36);
    /* SHA-1 padding: 16 namespace bytes + the name are 55, 56, 63, 64 and 119 bytes here,
     * on both sides of each block edge. */
    static const struct {
        size_t x;
        const char *id;
    } lengths[] = {
        {35, "cca301de-1246-52fb-b031-e86e87e34053"}, {36, "a7d170c9-78df-5aa6-8427-983d740d931d"},
        {43, "77282ac4-f265-53b1-91b4-11fc85fd3d2e"}, {44, "1925a25e-02bb-5981-b715-daf951096b68"},
        {99, "1f1306e4-f454-5db4-83dc-a1c48f463dc1"}, {198, "49514132-9fcd-57d5-9cdb-e2d424ac1d4c"},
    };
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        char xs[256];
        memset(xs, 'x', lengths[i].x);
        xs[lengths[i].x] = '\0';
        trn_beamng_persistent_id("a", "b", xs, id);
        CHECK(strcmp(id, lengths[i].id) == 0);
        if (strcmp(id, lengths[i].id) != 0) fprintf(stderr, "  %zu: %s\n", lengths[i].x, id);
    }
}

/* ------------------------------------------------------------------------ ground models */

static void test_groundmodels(void)
{
    static const struct {
        const char *name, *model;
    } cases[] = {
        {"bare_earth", "DIRT"},     {"Grassland", "GRASS"}, {"sandstone_cliffs", "ROCK"},
        {"BeachSand", "BEACHSAND"}, {"snowfield", "SNOW"},  {"rice_paddy", "MUD"},
        {"price", "DIRT"},          {"icecap", "SNOW"},     {"dusty_plain", "DIRT_DUSTY"},
        {"gravel_bar", "GRAVEL"},   {"", "DIRT"},           {"tarmac", "ASPHALT"},
        {"alpine_meadow", "GRASS"}, {"xyz", "DIRT"},        {"redsand", "SAND"},
        {"mudflat", "MUD"},         {"seagrass", "GRASS"},  {"wetland", "MUD"},
        {"dirt road/1", "DIRT"},    {"rock", "ROCK"},       {"desert", "SAND"},
        {"Forest floor", "GRASS"},  {"scree", "ROCK"},      {"glacier", "SNOW"},
        {"marsh", "MUD"},           {"swamp", "MUD"},       {"dune_sea", "SAND"},
        {"field", "DIRT"},          {"soil2", "DIRT"},      {"stony", "ROCK"},
        {"bedrock", "ROCK"},        {"ROCKYdirt", "ROCK"},  {"nice", "DIRT"},
        {"seamud", "DIRT"},         {"grass", "GRASS"},     {"concrete", "ASPHALT"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = trn_beamng_groundmodel_for_name(cases[i].name);
        CHECK(strcmp(got, cases[i].model) == 0);
        if (strcmp(got, cases[i].model) != 0)
            fprintf(stderr, "  %s -> %s, want %s\n", cases[i].name, got, cases[i].model);
    }
    CHECK(strcmp(trn_beamng_groundmodel_for_name(NULL), "DIRT") == 0);
    /* A word past 63 letters is no keyword's. */
    char long_word[80];
    memset(long_word, 'g', 64);
    memcpy(long_word, "grass", 5);
    long_word[64] = '\0';
    CHECK(strcmp(trn_beamng_groundmodel_for_name(long_word), "DIRT") == 0);
    long_word[63] = '\0';
    CHECK(strcmp(trn_beamng_groundmodel_for_name(long_word), "GRASS") == 0);

    CHECK(strcmp(trn_beamng_groundmodel_find("sand"), "SAND") == 0);
    CHECK(strcmp(trn_beamng_groundmodel_find("BeachSand"), "BEACHSAND") == 0);
    CHECK(strcmp(trn_beamng_groundmodel_find("dirt_dusty"), "DIRT_DUSTY") == 0);
    CHECK(strcmp(trn_beamng_groundmodel_find("ROCKYDIRT"), "ROCKYDIRT") == 0);
    CHECK(trn_beamng_groundmodel_find("lava") == NULL);
    CHECK(trn_beamng_groundmodel_find("") == NULL);
    CHECK(trn_beamng_groundmodel_find(NULL) == NULL);
    CHECK(trn_beamng_groundmodel_find("SAND ") == NULL);
    CHECK_CONTAINS(trn_beamng_groundmodel_names(), "SNOW");
    CHECK_CONTAINS(trn_beamng_groundmodel_names(), "BEACHSAND");
}

/* A level written with a bare-earth material gets DIRT, an overridden one what it is told, an
 * unknown override is refused before anything is written. */
static void test_level_groundmodels(void)
{
    char level[700];
    snprintf(level, sizeof level, "%s/gm/levels/gm", tmp);
    static const char *const names[4] = {"bare_earth", "meadow", "plateau", "tarmac"};
    trn_ter ter;
    make_ter(&ter, 128, names, 4);
    trn_beamng_surface surfaces[1] = {{"plateau", "rock"}};
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    lo.surfaces = surfaces;
    lo.surface_count = 1;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    trn_material_file mf;
    CHECK_OK(trn_material_file_read(res.materials_path, &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 4);
    for (uint32_t i = 0; i < mf.material_count; i++) {
        const trn_terrain_material *m = &mf.materials[i];
        const char *want = strcmp(m->internal_name, "bare_earth") == 0 ? "DIRT"
                           : strcmp(m->internal_name, "meadow") == 0   ? "GRASS"
                           : strcmp(m->internal_name, "tarmac") == 0   ? "ASPHALT"
                                                                       : "ROCK";
        CHECK(strcmp(m->groundmodel_name, want) == 0);
        const char *annotation = strcmp(want, "GRASS") == 0     ? "GRASS"
                                 : strcmp(want, "ASPHALT") == 0 ? "ASPHALT"
                                                                : "NATURE";
        CHECK(strcmp(m->annotation, annotation) == 0);
    }
    trn_material_file_dispose(&mf);

    char other[700];
    snprintf(other, sizeof other, "%s/gm/levels/gm2", tmp);
    lo.level_dir = other;
    surfaces[0].groundmodel = "LAVA";
    trn_error err;
    CHECK_STATUS(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "\"LAVA\" of material \"plateau\"");
    CHECK_CONTAINS(err.message, "GRAVEL");
    CHECK(!trn_test_exists(other));
    surfaces[0].groundmodel = NULL;
    CHECK_STATUS(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_ter_dispose(&ter);
}

/* A biome's "groundmodel" in a recipe: any case in, the standard spelling kept, a name the
 * game does not ship refused at its place. */
static void test_recipe_groundmodel(void)
{
    static const char head[] = "{\n"
                               "  \"size\": [128, 128],\n"
                               "  \"resolution\": [64, 64],\n"
                               "  \"seed\": 1,\n"
                               "  \"default_landform\": \"hills\",\n"
                               "  \"landforms\": {\"hills\": {\"height_variation\": 40}},\n"
                               "  \"default_biome\": \"grass\",\n"
                               "  \"biomes\": {\n"
                               "    \"grass\": {\"color\": [0.2, 0.6, 0.2, 1]},\n"
                               "    \"scree\": {\"color\": [0.5, 0.5, 0.5, 1], \"groundmodel\": ";
    static const char tail[] = "}\n  }\n}\n";
    char text[1024];
    snprintf(text, sizeof text, "%s\"gravel\"%s", head, tail);
    trn_recipe r;
    trn_error err;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "g.json", &r, NULL, &err));
    int scree = trn_recipe_find_biome(&r, "scree"), grass = trn_recipe_find_biome(&r, "grass");
    CHECK(scree >= 0 && strcmp(r.biomes[scree].groundmodel, "GRAVEL") == 0);
    CHECK(grass >= 0 && r.biomes[grass].groundmodel[0] == '\0');
    /* The canonical form keeps it, and reads back the same. */
    char *canon = NULL;
    CHECK_OK(trn_recipe_canonical_json(&r, &canon, NULL, NULL));
    CHECK_CONTAINS(canon, "\"groundmodel\":\"GRAVEL\"");
    trn_recipe back;
    CHECK_OK(trn_recipe_parse(canon, strlen(canon), "c.json", &back, NULL, NULL));
    CHECK(strcmp(back.biomes[trn_recipe_find_biome(&back, "scree")].groundmodel, "GRAVEL") == 0);
    trn_recipe_dispose(&back);
    free(canon);
    /* Built in code: only the standard spelling of a known model passes. */
    CHECK_OK(trn_recipe_validate(&r, NULL));
    snprintf(r.biomes[scree].groundmodel, sizeof r.biomes[scree].groundmodel, "gravel");
    CHECK_STATUS(trn_recipe_validate(&r, &err), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(err.message, "biomes.scree.groundmodel: 'gravel' is not a BeamNG ground model");
    snprintf(r.biomes[scree].groundmodel, sizeof r.biomes[scree].groundmodel, "LAVA");
    CHECK_STATUS(trn_recipe_validate(&r, &err), TRN_ERR_VALIDATION);
    trn_recipe_dispose(&r);
    /* Unknown names and other types: the JSON path, the line and the column of the value. */
    static const char *const bad[] = {"\"lava\"", "7", "\"\"", "\"SAND \""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s%s", head, bad[i], tail);
        CHECK_STATUS(trn_recipe_parse(text, strlen(text), "g.json", &r, NULL, &err), TRN_ERR_JSON);
        CHECK_CONTAINS(err.message, "biomes.scree.groundmodel: expected a BeamNG ground model");
        CHECK_EQ_INT(err.line, 10);
        CHECK_EQ_INT(err.column, 59); /* the value, after "groundmodel": */
    }
    CHECK_CONTAINS(err.message, "found the string \"SAND \"");
}

/* ------------------------------------------------------------------------ editor levels */

/* Lines of the editor-style level below (as the World Editor saves them). */
static const char main_items[] =
    "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"persistentId\":"
    "\"ab9eb371-eea6-4140-9c48-a00f9bdb74ae\",\"enabled\":\"1\"}\n";
static const char mg_items[] =
    "{\"name\":\"sky_and_sun\",\"class\":\"SimGroup\",\"persistentId\":"
    "\"64578465-8bdf-4a39-a246-5b85d5483b5f\",\"__parent\":\"MissionGroup\"}\n"
    "{\"name\":\"PlayerDropPoints\",\"class\":\"SimGroup\",\"persistentId\":"
    "\"54bcf399-4c2e-4fdc-a6f0-fc5e88212d92\",\"__parent\":\"MissionGroup\",\"enabled\":\"1\"}\n"
    "{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":"
    "\"129afdcb-1f25-4978-a8c3-f57c47a185c0\",\"__parent\":\"MissionGroup\",\"position\":[-512,"
    "-512,100],\"baseTexSize\":2048,\"maxHeight\":150,\"minimapImage\":\"levels/edit/mini.png\","
    "\"squareSize\":2.00000024,\"terrainFile\":\"/levels/edit/theTerrain.ter\"}\n"
    "{\"name\":\"Water\",\"class\":\"SimGroup\",\"persistentId\":"
    "\"c7a27044-2e58-43b8-90b1-cd2784b7bad0\",\"__parent\":\"MissionGroup\"}\n";
static const char sky_items[] =
    "{\"name\":\"tod\",\"class\":\"TimeOfDay\",\"persistentId\":"
    "\"af7d80d7-a422-4e74-95e6-526936ce41ce\",\"__parent\":\"sky_and_sun\",\"time\":0.1}\n"
    "{\"name\":\"theLevelInfo\",\"class\":\"LevelInfo\",\"persistentId\":"
    "\"4dea4eb4-5a9b-440d-8a63-aff78657e7b1\",\"__parent\":\"sky_and_sun\",\"gravity\":-9.81}\n";
static const char drop_items[] =
    "{\"name\":\"spawns_hill\",\"class\":\"SpawnSphere\",\"persistentId\":"
    "\"bd38844d-1bfc-4bfb-9c92-8638ce9e414e\",\"__parent\":\"PlayerDropPoints\",\"position\":"
    "[1,2,3],\"dataBlock\":\"SpawnSphereMarker\"}\n";
static const char editor_materials[] =
    "{\n"
    "  \"editTerrainMaterialTextureSet\": {\n"
    "    \"name\": \"editTerrainMaterialTextureSet\",\n"
    "    \"class\": \"TerrainMaterialTextureSet\",\n"
    "    \"persistentId\": \"4439d48e-2402-402a-8a64-18fb9fb59bc1\",\n"
    "    \"baseTexSize\": [8, 8],\n"
    "    \"detailTexSize\": [8, 8],\n"
    "    \"macroTexSize\": [8, 8]\n"
    "  },\n"
    "  \"Grass-a8517239-7693-4a46-9981-777a7969a536\": {\n"
    "    \"internalName\": \"Grass\",\n"
    "    \"class\": \"TerrainMaterial\",\n"
    "    \"persistentId\": \"a8517239-7693-4a46-9981-777a7969a536\",\n"
    "    \"groundmodelName\": \"GRASS\",\n"
    "    \"isManaged\": \"1\",\n"
    "    \"customField\": 7\n"
    "  }\n"
    "}\n";

/* levels/edit in root: MissionGroup with groups, theTerrain in main/MissionGroup, editor-form
 * materials, an old .ter. */
static void make_editor_level(const char *root, char *level, size_t size)
{
    snprintf(level, size, "%s/levels/edit", root);
    mkdirs(path_in(level, "main/MissionGroup/sky_and_sun"));
    mkdirs(path_in(level, "main/MissionGroup/PlayerDropPoints"));
    mkdirs(path_in(level, "art/terrains"));
    CHECK(write_text(path_in(level, "main/items.level.json"), main_items));
    CHECK(write_text(path_in(level, "main/MissionGroup/items.level.json"), mg_items));
    CHECK(write_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"), sky_items));
    CHECK(write_text(path_in(level, "main/MissionGroup/PlayerDropPoints/items.level.json"),
                     drop_items));
    CHECK(write_text(path_in(level, "art/terrains/main.materials.json"), editor_materials));
    static const char *const grass[1] = {"Grass"};
    trn_ter old;
    make_ter(&old, 128, grass, 1);
    CHECK_OK(trn_ter_write(path_in(level, "theTerrain.ter"), &old, 9, NULL, NULL, NULL));
    trn_ter_dispose(&old);
}

/* Import a 128 x 128 heightmap with Grass and Sand into level. */
static void import_into(const char *level, const char *heightmap, trn_beamng_level_result *res)
{
    static const char *const names[2] = {"Grass", "Sand"};
    trn_beamng_import_options io = {0};
    io.heightmap_path = heightmap;
    io.material_names = names;
    io.material_count = 2;
    uint8_t *layer = calloc(128 * 128, 1);
    for (size_t i = 0; i < 128 * 128; i++)
        layer[i] = (uint8_t)(i % 7 == 0);
    trn_image img;
    CHECK_OK(trn_image_init(&img, 128, 128, 1, 8, NULL));
    memcpy(img.data, layer, 128 * 128);
    char layer_path[1100];
    snprintf(layer_path, sizeof layer_path, "%s.layers.png", heightmap);
    CHECK_OK(trn_png_write(layer_path, &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
    free(layer);
    io.layer_map_path = layer_path;
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.max_height = 150;
    lo.square_size = 2;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    trn_ter ter;
    CHECK_OK(trn_beamng_import(&io, &ter, &lo, res, NULL, NULL, NULL));
    trn_ter_dispose(&ter);
}

static void write_heightmap(const char *path)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, 128, 128, 1, 16, NULL));
    uint16_t *px = img.data;
    for (size_t i = 0; i < 128 * 128; i++)
        px[i] = (uint16_t)(20000 + (i % 128) * 10);
    CHECK_OK(trn_png_write(path, &img, NULL, NULL, NULL, NULL));
    trn_image_dispose(&img);
}

/* The line of text starting with prefix (up to its newline), malloc'd; NULL when none. */
static char *line_with(const char *text, const char *prefix)
{
    const char *at = text ? strstr(text, prefix) : NULL;
    if (!at) return NULL;
    const char *nl = strchr(at, '\n');
    size_t n = nl ? (size_t)(nl - at) : strlen(at);
    char *line = malloc(n + 1);
    memcpy(line, at, n);
    line[n] = '\0';
    return line;
}

static void test_import_into_editor_level(void)
{
    char root[700], level[800], hm[800];
    snprintf(root, sizeof root, "%s/editor", tmp);
    make_editor_level(root, level, sizeof level);
    snprintf(hm, sizeof hm, "%s/h.png", tmp);
    write_heightmap(hm);
    trn_beamng_level_result res;
    import_into(level, hm, &res);

    /* One TerrainBlock: the editor's, updated where it was, with its persistentId. */
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 1);
    if (count == 1) {
        CHECK(strcmp(blocks[0].source_file, path_in(level, "main/MissionGroup/items.level.json")) ==
              0);
        CHECK_EQ_INT(blocks[0].source_line, 3);
        CHECK(strcmp(blocks[0].persistent_id, "129afdcb-1f25-4978-a8c3-f57c47a185c0") == 0);
        CHECK(strcmp(blocks[0].parent, "MissionGroup") == 0);
        CHECK(blocks[0].square_size == 2 && blocks[0].max_height == 150);
        CHECK(blocks[0].position[0] == -128 && blocks[0].position[2] == 0);
        CHECK(strcmp(blocks[0].material_texture_set, "editTerrainMaterialTextureSet") == 0);
    }
    trn_terrain_blocks_free(blocks, count);
    CHECK(res.block_replaced);
    CHECK(strcmp(res.items_path, path_in(level, "main/MissionGroup/items.level.json")) == 0);
    /* Every other line as it was; the block's line keeps the fields terrane does not own, in
     * their place. */
    char *root_text = read_text(path_in(level, "main/items.level.json"));
    CHECK(root_text && strcmp(root_text, main_items) == 0);
    free(root_text);
    char *mg = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    const char *nl2 = strchr(strchr(mg_items, '\n') + 1, '\n') + 1;
    CHECK(mg && strncmp(mg, mg_items, (size_t)(nl2 - mg_items)) == 0);
    CHECK(mg && strstr(mg, "{\"name\":\"Water\"") &&
          strcmp(strstr(mg, "{\"name\":\"Water\""), strstr(mg_items, "{\"name\":\"Water\"")) == 0);
    char *block = line_with(mg, "{\"name\":\"theTerrain\"");
    CHECK(block &&
          strncmp(block,
                  "{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":"
                  "\"129afdcb-1f25-4978-a8c3-f57c47a185c0\",\"__parent\":\"MissionGroup\","
                  "\"position\":[-128,-128,0],\"baseTexSize\":2048,\"maxHeight\":150,"
                  "\"minimapImage\":\"levels/edit/mini.png\",\"squareSize\":2,",
                  strlen("{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":"
                         "\"129afdcb-1f25-4978-a8c3-f57c47a185c0\",\"__parent\":\"MissionGroup\","
                         "\"position\":[-128,-128,0],\"baseTexSize\":2048,\"maxHeight\":150,"
                         "\"minimapImage\":\"levels/edit/mini.png\",\"squareSize\":2,")) == 0);
    free(block);
    free(mg);
    char *sky = read_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"));
    CHECK(sky && strcmp(sky, sky_items) == 0);
    free(sky);

    /* Materials: Grass (Name-<uuid> form) resolves and stays as it was; Sand is added in the
     * editor's form, keyed by its derived persistentId. */
    CHECK_EQ_INT(res.materials_added, 1);
    CHECK(strcmp(res.texture_set, "editTerrainMaterialTextureSet") == 0);
    trn_material_file mf;
    CHECK_OK(trn_material_file_read(res.materials_path, &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 2);
    CHECK_EQ_INT(mf.texture_set_count, 1);
    if (mf.material_count == 2) {
        const trn_terrain_material *g = &mf.materials[0], *s = &mf.materials[1];
        CHECK(strcmp(g->key, "Grass-a8517239-7693-4a46-9981-777a7969a536") == 0);
        CHECK(strcmp(g->persistent_id, "a8517239-7693-4a46-9981-777a7969a536") == 0);
        CHECK(g->extra_json && strstr(g->extra_json, "\"customField\"") &&
              strstr(g->extra_json, "\"isManaged\""));
        CHECK(strcmp(s->key, "Sand-5377264b-8e66-5afd-9f43-a7594cd82709") == 0);
        CHECK(strcmp(s->persistent_id, "5377264b-8e66-5afd-9f43-a7594cd82709") == 0);
        CHECK(strcmp(s->internal_name, "Sand") == 0);
        CHECK(strcmp(s->groundmodel_name, "SAND") == 0);
    }
    if (mf.texture_set_count == 1)
        CHECK(strcmp(mf.texture_sets[0].persistent_id, "4439d48e-2402-402a-8a64-18fb9fb59bc1") ==
              0);
    trn_material_file_dispose(&mf);
    char *mats = read_text(res.materials_path);
    CHECK_CONTAINS(mats, "  \"Sand-5377264b-8e66-5afd-9f43-a7594cd82709\": {\n"
                         "    \"internalName\": \"Sand\",\n"
                         "    \"class\": \"TerrainMaterial\",\n"
                         "    \"persistentId\": \"5377264b-8e66-5afd-9f43-a7594cd82709\",\n"
                         "    \"annotation\": \"NATURE\",\n"
                         "    \"groundmodelName\": \"SAND\",\n");
    CHECK_CONTAINS(mats, "  \"Grass-a8517239-7693-4a46-9981-777a7969a536\": {\n"
                         "    \"internalName\": \"Grass\",\n"
                         "    \"class\": \"TerrainMaterial\",\n"
                         "    \"persistentId\": \"a8517239-7693-4a46-9981-777a7969a536\",\n"
                         "    \"groundmodelName\": \"GRASS\",\n"
                         "    \"isManaged\": \"1\",\n"
                         "    \"customField\": 7\n");
    free(mats);

    /* The level validates; importing again changes nothing (no second block, no second Sand). */
    trn_findings f = validate_tree(level);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    CHECK_EQ_INT(count_check(&f, "object-name-duplicate"), 0);
    CHECK_EQ_INT(count_check(&f, "object-unparented"), 0);
    CHECK_EQ_INT(count_check(&f, "persistent-id-missing"), 0);
    if (trn_findings_count(&f, TRN_SEVERITY_ERROR)) dump_findings(&f);
    trn_findings_dispose(&f);
    char *before = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    char *mats_before = read_text(res.materials_path);
    import_into(level, hm, &res);
    CHECK_EQ_INT(res.materials_added, 0);
    char *after = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    char *mats_after = read_text(res.materials_path);
    CHECK(before && after && strcmp(before, after) == 0);
    CHECK(mats_before && mats_after && strcmp(mats_before, mats_after) == 0);
    free(before), free(after), free(mats_before), free(mats_after);

    /* The same import into a second copy gives the same bytes (ids derive from names). */
    char root2[700], level2[800];
    snprintf(root2, sizeof root2, "%s/editor2", tmp);
    make_editor_level(root2, level2, sizeof level2);
    import_into(level2, hm, &res);
    static const char *const files[] = {
        "main/items.level.json", "main/MissionGroup/items.level.json",
        "art/terrains/main.materials.json", "theTerrain.ter", "theTerrain.terrain.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char a[1100];
        snprintf(a, sizeof a, "%s/%s", level, files[i]);
        CHECK(trn_test_same_bytes(a, path_in(level2, files[i])));
    }
}

/* A TerrainBlock deeper in the tree (the editor's Level_object/terrain groups) is found too;
 * a level whose main/items.level.json holds the block itself (older files) keeps it there. */
static void test_block_found_anywhere(void)
{
    char level[700];
    snprintf(level, sizeof level, "%s/deep/levels/deep", tmp);
    mkdirs(path_in(level, "main/MissionGroup/Level_object/terrain"));
    CHECK(write_text(path_in(level, "main/items.level.json"), main_items));
    CHECK(write_text(path_in(level, "main/MissionGroup/items.level.json"),
                     "{\"name\":\"Level_object\",\"class\":\"SimGroup\",\"persistentId\":\"1\","
                     "\"__parent\":\"MissionGroup\"}\n"));
    CHECK(write_text(path_in(level, "main/MissionGroup/Level_object/items.level.json"),
                     "{\"name\":\"terrain\",\"class\":\"SimGroup\",\"persistentId\":\"2\","
                     "\"__parent\":\"Level_object\"}\n"));
    const char *deep =
        "{\"name\":\"theTerrain\",\"class\":\"TerrainBlock\",\"persistentId\":\"3\","
        "\"__parent\":\"terrain\",\"terrainFile\":\"/levels/deep/theTerrain.ter\"}\n";
    char *deep_items = path_in(level, "main/MissionGroup/Level_object/terrain/items.level.json");
    CHECK(write_text(deep_items, deep));
    static const char *const grass[1] = {"grass"};
    trn_ter ter;
    make_ter(&ter, 128, grass, 1);
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    lo.position_z = 12.5;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(res.block_replaced && strcmp(res.items_path, deep_items) == 0);
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 1);
    CHECK(count == 1 && strcmp(blocks[0].persistent_id, "3") == 0 &&
          strcmp(blocks[0].parent, "terrain") == 0 && blocks[0].position[2] == 12.5);
    trn_terrain_blocks_free(blocks, count);
    char *mg = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    CHECK(mg && !strstr(mg, "TerrainBlock"));
    free(mg);

    /* An older level: the block in main/items.level.json is updated there, nothing added. */
    char flat[700];
    snprintf(flat, sizeof flat, "%s/flat/levels/flat", tmp);
    mkdirs(path_in(flat, "main"));
    const char *old = "{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\",\"terrainFile\":"
                      "\"/levels/flat/theTerrain.ter\"}\n";
    CHECK(write_text(path_in(flat, "main/items.level.json"), old));
    lo.level_dir = flat;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(res.block_replaced &&
          strcmp(res.items_path, path_in(flat, "main/items.level.json")) == 0);
    CHECK(!trn_test_exists(path_in(flat, "main/MissionGroup")));
    /* ...and validate says what the editor's layout would be. */
    trn_findings f = validate(flat);
    const trn_finding *fi = trn_findings_find(&f, "object-unparented");
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && fi->line == 1 &&
          strstr(fi->message, "1 object(s) in main/items.level.json lie outside MissionGroup") &&
          strstr(fi->message, "TerrainBlock \"theTerrain\"") && strstr(fi->fix, "__parent"));
    fi = trn_findings_find(&f, "persistent-id-missing");
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && fi->line == 1 &&
          strstr(fi->message, "1 object(s)"));
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    trn_findings_dispose(&f);
    trn_ter_dispose(&ter);
}

/* ------------------------------------------------------------------------ validate: the tree */

static void test_validate_tree(void)
{
    char root[700], level[800];
    snprintf(root, sizeof root, "%s/vtree", tmp);
    make_editor_level(root, level, sizeof level);
    /* The old bug: a second theTerrain appended to main/items.level.json. */
    char joined[4096];
    snprintf(joined, sizeof joined,
             "%s{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\",\"terrainFile\":"
             "\"/levels/edit/theTerrain.ter\",\"squareSize\":1,\"maxHeight\":2048,"
             "\"position\":[-64,-64,0]}\n",
             main_items);
    CHECK(write_text(path_in(level, "main/items.level.json"), joined));
    trn_findings f = validate_tree(level);
    const trn_finding *fi = trn_findings_find(&f, "object-name-duplicate");
    CHECK(fi && fi->severity == TRN_SEVERITY_ERROR);
    CHECK(fi && fi->line == 2 && strcmp(fi->file, path_in(level, "main/items.level.json")) == 0);
    CHECK(fi && strstr(fi->message, "2 objects are named \"theTerrain\"") &&
          strstr(fi->message, "main/MissionGroup/items.level.json:3") &&
          strstr(fi->message, "two TerrainBlocks") && strstr(fi->fix, "TerrainBlock"));
    CHECK_EQ_INT(count_check(&f, "object-name-duplicate"), 1);
    fi = trn_findings_find(&f, "object-unparented");
    CHECK(fi && fi->line == 2 && fi->severity == TRN_SEVERITY_WARNING);
    fi = trn_findings_find(&f, "persistent-id-missing");
    CHECK(fi && fi->line == 2 && strcmp(fi->file, path_in(level, "main/items.level.json")) == 0);
    CHECK_EQ_INT(count_check(&f, "persistent-id-missing"), 1);
    trn_findings_dispose(&f);
    CHECK(write_text(path_in(level, "main/items.level.json"), main_items));

    /* Names are compared as Torque does, without case; objects without a name never clash; a
     * duplicate of other classes is a warning. */
    char sky[4096];
    snprintf(sky, sizeof sky,
             "%s{\"name\":\"TOD\",\"class\":\"TimeOfDay\",\"persistentId\":\"x\",\"__parent\":"
             "\"sky_and_sun\"}\n{\"class\":\"TSStatic\",\"persistentId\":\"y\",\"__parent\":"
             "\"sky_and_sun\"}\n{\"class\":\"TSStatic\",\"persistentId\":\"z\",\"__parent\":"
             "\"sky_and_sun\"}\n",
             sky_items);
    char *sky_path = path_in(level, "main/MissionGroup/sky_and_sun/items.level.json");
    CHECK(write_text(sky_path, sky));
    f = validate_tree(level);
    fi = trn_findings_find(&f, "object-name-duplicate");
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && fi->line == 3 &&
          strstr(fi->message, "\"TOD\"") && strstr(fi->message, "sky_and_sun/items.level.json:1"));
    CHECK_EQ_INT(count_check(&f, "object-name-duplicate"), 1);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    trn_findings_dispose(&f);

    /* An object without __parent below main/, and one without a persistentId. */
    snprintf(sky, sizeof sky, "%s{\"name\":\"loose\",\"class\":\"TSStatic\"}\n", sky_items);
    CHECK(write_text(sky_path, sky));
    f = validate_tree(level);
    fi = trn_findings_find(&f, "object-unparented");
    CHECK(fi && fi->line == 3 && strstr(fi->message, "have no \"__parent\"") &&
          strstr(fi->message, "TSStatic \"loose\""));
    fi = trn_findings_find(&f, "persistent-id-missing");
    CHECK(fi && fi->line == 3 && strcmp(fi->file, sky_path) == 0 && fi->fix[0]);
    trn_findings_dispose(&f);
    CHECK(write_text(sky_path, sky_items));

    /* A folder whose group line is missing is never loaded: a warning, an error when the
     * terrain is in it. */
    mkdirs(path_in(level, "main/MissionGroup/Stray"));
    char *stray = path_in(level, "main/MissionGroup/Stray/items.level.json");
    CHECK(write_text(stray, "{\"name\":\"lamp\",\"class\":\"PointLight\",\"persistentId\":\"p\","
                            "\"__parent\":\"Stray\"}\n"));
    f = validate_tree(level);
    fi = trn_findings_find(&f, "group-folder-orphaned");
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && strcmp(fi->file, stray) == 0 &&
          strstr(fi->message, "no SimGroup \"Stray\"") && strstr(fi->message, "1 object(s)") &&
          strstr(fi->fix, "\"name\":\"Stray\""));
    trn_findings_dispose(&f);
    /* The group line makes it a loaded folder (case ignored, as on the game's file system). */
    char mg[4096];
    snprintf(mg, sizeof mg,
             "%s{\"name\":\"stray\",\"class\":\"SimGroup\",\"persistentId\":\"s\",\"__parent\":"
             "\"MissionGroup\"}\n",
             mg_items);
    char *mg_path = path_in(level, "main/MissionGroup/items.level.json");
    CHECK(write_text(mg_path, mg));
    f = validate_tree(level);
    CHECK_EQ_INT(count_check(&f, "group-folder-orphaned"), 0);
    trn_findings_dispose(&f);
    CHECK(write_text(mg_path, mg_items));
    /* An empty orphaned file says nothing; one with the terrain is an error. */
    CHECK(write_text(stray, ""));
    f = validate_tree(level);
    CHECK_EQ_INT(count_check(&f, "group-folder-orphaned"), 0);
    trn_findings_dispose(&f);
    CHECK(write_text(stray, "{\"name\":\"t2\",\"class\":\"TerrainBlock\",\"persistentId\":\"q\","
                            "\"__parent\":\"Stray\",\"terrainFile\":\"/levels/edit/"
                            "theTerrain.ter\"}\n"));
    f = validate_tree(level);
    fi = trn_findings_find(&f, "group-folder-orphaned");
    CHECK(fi && fi->severity == TRN_SEVERITY_ERROR && strstr(fi->message, "a TerrainBlock"));
    trn_findings_dispose(&f);
    CHECK(remove(stray) == 0);

    /* A MissionGroup folder without the MissionGroup line in main/items.level.json. */
    CHECK(write_text(path_in(level, "main/items.level.json"), ""));
    f = validate_tree(level);
    fi = trn_findings_find(&f, "group-folder-orphaned");
    CHECK(fi && fi->severity == TRN_SEVERITY_ERROR &&
          strcmp(fi->file, path_in(level, "main/MissionGroup/items.level.json")) == 0 &&
          strstr(fi->message, "no SimGroup \"MissionGroup\""));
    trn_findings_dispose(&f);
}

/* ------------------------------------------------------------------------ materials */

static void test_material_forms(void)
{
    /* Both forms read; persistentId kept; each written back in its own key order. */
    const char *text = "{\n"
                       "  \"old\": {\n"
                       "    \"class\": \"TerrainMaterial\",\n"
                       "    \"internalName\": \"old\",\n"
                       "    \"groundmodelName\": \"ROCK\"\n"
                       "  },\n"
                       "  \"New-0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc\": {\n"
                       "    \"internalName\": \"New\",\n"
                       "    \"class\": \"TerrainMaterial\",\n"
                       "    \"persistentId\": \"0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc\",\n"
                       "    \"groundmodelName\": \"ASPHALT_PREPPED\",\n"
                       "    \"isManaged\": \"1\"\n"
                       "  },\n"
                       "  \"setA\": {\n"
                       "    \"name\": \"setA\",\n"
                       "    \"class\": \"TerrainMaterialTextureSet\",\n"
                       "    \"persistentId\": \"4439d48e-2402-402a-8a64-18fb9fb59bc1\",\n"
                       "    \"baseTexSize\": [8, 8],\n"
                       "    \"macroTexSize\": [8, 8],\n"
                       "    \"detailTexSize\": [8, 8]\n"
                       "  }\n"
                       "}\n";
    trn_material_file mf;
    CHECK_OK(trn_material_file_parse(text, strlen(text), "m.json", &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 2);
    CHECK(mf.material_count == 2 && mf.materials[0].persistent_id == NULL &&
          strcmp(mf.materials[1].persistent_id, "0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc") == 0 &&
          strcmp(mf.materials[1].key, "New-0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc") == 0 &&
          strcmp(mf.materials[1].internal_name, "New") == 0);
    CHECK(mf.texture_set_count == 1 &&
          strcmp(mf.texture_sets[0].persistent_id, "4439d48e-2402-402a-8a64-18fb9fb59bc1") == 0);
    /* persistentId is modelled now, not an unknown field. */
    CHECK(mf.material_count == 2 && !strstr(mf.materials[1].extra_json, "persistentId"));
    char *out = NULL;
    CHECK_OK(trn_material_file_serialize(&mf, &out, NULL, NULL));
    CHECK_CONTAINS(out, "  \"setA\": {\n    \"name\": \"setA\",\n    \"class\": "
                        "\"TerrainMaterialTextureSet\",\n    \"persistentId\": "
                        "\"4439d48e-2402-402a-8a64-18fb9fb59bc1\",\n    \"baseTexSize\"");
    CHECK_CONTAINS(out, "  \"old\": {\n    \"class\": \"TerrainMaterial\",\n    \"internalName\": "
                        "\"old\",\n    \"groundmodelName\": \"ROCK\"\n  }");
    CHECK_CONTAINS(out, "  \"New-0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc\": {\n    \"internalName\": "
                        "\"New\",\n    \"class\": \"TerrainMaterial\",\n    \"persistentId\": "
                        "\"0f3dd613-85c9-4a31-8c8e-dcf211d8b1dc\",\n    \"groundmodelName\": "
                        "\"ASPHALT_PREPPED\",\n    \"isManaged\": \"1\"\n  }");
    free(out);
    /* A persistentId that is not a string is named. */
    trn_material_file_dispose(&mf);
    const char *bad = "{\"x\": {\"class\": \"TerrainMaterial\", \"persistentId\": 5}}";
    trn_error err;
    CHECK_STATUS(trn_material_file_parse(bad, strlen(bad), "m.json", &mf, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "x.persistentId: expected a string, found a whole number");
    const char *bad_set =
        "{\"s\": {\"class\": \"TerrainMaterialTextureSet\", \"persistentId\": []}}";
    CHECK_STATUS(trn_material_file_parse(bad_set, strlen(bad_set), "m.json", &mf, &err),
                 TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "s.persistentId: expected a string, found an array");
}

/* ------------------------------------------------------------------------ scaffold */

/* A terrain whose flattest dry spot is known: a slope everywhere (1 stored unit per sample
 * along x), a flat square at (40..56, 70..86), and the lowest rows under the sea. */
static void make_sloped_ter(trn_ter *ter)
{
    static const char *const names[2] = {"meadow", "bare_rock"};
    make_ter(ter, 128, names, 2);
    for (uint32_t j = 0; j < 128; j++)
        for (uint32_t i = 0; i < 128; i++) {
            uint16_t h = (uint16_t)(10000 + i * 40 + j * 25);
            if (i >= 40 && i <= 56 && j >= 70 && j <= 86) h = 12000;
            if (j < 8) h = 0;
            ter->heights[(size_t)j * 128 + i] = h;
            ter->layers[(size_t)j * 128 + i] = (uint8_t)(i > 100);
        }
}

/* The fields the World Editor saves for the objects the scaffold writes (besides name, class,
 * persistentId, __parent, position, rotationMatrix, scale and cloneOrigin), as editor-saved
 * levels have them in their sky_and_sun and Water groups (levels saved with BeamNG.drive's
 * World Editor, 0.2x to 0.3x). */
static const char *const editor_scatter_sky[] = {
    "ambientScale", "ambientScaleGradientFile", "azimuth", "colorize", "colorizeGradientFile",
    "elevation", "enableFogFallBack", "fadeStartDistance", "flareScale", "flareType", "fogScale",
    "fogScaleGradientFile", "lastSplitTerrainOnly", "logWeight", "mieScattering",
    "moonLightColor", "moonMat", "moonScale", "nightColor", "nightCubemap", "nightFogColor",
    "nightFogGradientFile", "nightGradientFile", "occlusionScale", "overDarkFactor",
    "rayleighScattering", "shadowDarkenColor", "shadowDistance", "shadowSoftness",
    "skyBrightness", "sunScale", "sunScaleGradientFile", "texSize", "useNightCubemap", NULL};
static const char *const editor_water_plane[] = {
    "Foam", "Ripples (texture animation)", "Waves (vertex undulation)", "baseColor", "clarity",
    "cubemap", "depthGradientMax", "depthGradientTex", "distortEndDist", "distortFullDepth",
    "distortStartDist", "foamAmbientLerp", "foamMaxDepth", "foamRippleInfluence", "foamTex",
    "fresnelBias", "fresnelPower", "gridSize", "overallFoamOpacity", "overallRippleMagnitude",
    "overallWaveMagnitude", "reflectDetailAdjust", "reflectMaxRateMs", "reflectivity",
    "rippleTex", "specularPower", "underwaterColor", "viscosity", "waterFogDensity",
    "waterFogDensityOffset", "wetDarkening", "wetDepth", NULL};
static const char *const editor_cloud_layer[] = {"Textures", "baseColor", "coverage", "exposure",
                                                 "height", "texture", "windSpeed", NULL};
static const char *const editor_level_info[] = {
    "canvasClearColor", "enabled", "fogAtmosphereHeight", "fogColor", "fogDensity",
    "globalEnviromentMap", "gravity", "visibleDistance", NULL};

/* Keys the editor writes for any object; not part of a class's own fields. */
static bool common_key(const char *k)
{
    static const char *const common[] = {"name", "class", "persistentId", "__parent",
                                         "position", "rotationMatrix", "scale", "cloneOrigin",
                                         "internalName", NULL};
    for (int i = 0; common[i]; i++)
        if (strcmp(k, common[i]) == 0) return true;
    return false;
}

/* The first object of class cls in an items file, parsed; NULL when none. */
static json_t *object_of_class(const char *items_path, const char *cls)
{
    char *text = read_text(items_path);
    json_t *found = NULL;
    for (char *line = text; line && *line && !found;) {
        char *nl = strchr(line, '\n');
        json_t *o = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        const char *c = json_string_value(json_object_get(o, "class"));
        if (c && strcmp(c, cls) == 0)
            found = o;
        else
            json_decref(o);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return found;
}

static void check_fields(const json_t *o, const char *cls, const char *const *fields)
{
    CHECK(o != NULL);
    for (int i = 0; o && fields[i]; i++) {
        CHECK(json_object_get(o, fields[i]) != NULL);
        if (!json_object_get(o, fields[i])) fprintf(stderr, "  %s lacks %s\n", cls, fields[i]);
    }
}

/* Editor-saved levels held in ../shared/testdata/real/beamng_levels (one folder per level, as
 * the game keeps them): every field one of their objects of class cls has, ours has too. */
static void check_against_real(const json_t *ours, const char *cls)
{
    char base[1024];
    if (!trn_test_real_path("beamng_levels", base, sizeof base)) return;
    static const char *const groups[] = {"main/MissionGroup/sky_and_sun/items.level.json",
                                         "main/MissionGroup/Water/items.level.json", NULL};
    DIR *d = opendir(base);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        for (int g = 0; groups[g]; g++) {
            char path[2300];
            snprintf(path, sizeof path, "%s/%s/%s", base, e->d_name, groups[g]);
            json_t *real = object_of_class(path, cls);
            const char *k;
            json_t *v;
            json_object_foreach(real, k, v)
            {
                if (common_key(k)) continue;
                CHECK(json_object_get(ours, k) != NULL);
                if (!json_object_get(ours, k))
                    fprintf(stderr, "  %s lacks %s (found in %s)\n", cls, k, path);
            }
            json_decref(real);
        }
    }
    if (d) closedir(d);
}

/* The scaffold's sky, clouds, level info and sea carry what the editor saves for them. */
static void check_editor_fields(const char *level)
{
    const char *sky = path_in(level, "main/MissionGroup/sky_and_sun/items.level.json");
    char sky_path[1200];
    snprintf(sky_path, sizeof sky_path, "%s", sky);
    json_t *o = object_of_class(sky_path, "ScatterSky");
    check_fields(o, "ScatterSky", editor_scatter_sky);
    check_against_real(o, "ScatterSky");
    json_decref(o);
    o = object_of_class(sky_path, "CloudLayer");
    check_fields(o, "CloudLayer", editor_cloud_layer);
    CHECK(json_array_size(json_object_get(o, "Textures")) == 3);
    check_against_real(o, "CloudLayer");
    json_decref(o);
    o = object_of_class(sky_path, "LevelInfo");
    check_fields(o, "LevelInfo", editor_level_info);
    const json_t *clear = json_object_get(o, "canvasClearColor");
    CHECK(json_is_array(clear) && json_array_size(clear) == 4 &&
          json_is_number(json_array_get(clear, 3)));
    check_against_real(o, "LevelInfo");
    json_decref(o);
    o = object_of_class(path_in(level, "main/MissionGroup/Water/items.level.json"), "WaterPlane");
    check_fields(o, "WaterPlane", editor_water_plane);
    CHECK(json_array_size(json_object_get(o, "Ripples (texture animation)")) == 3);
    check_against_real(o, "WaterPlane");
    json_decref(o);
    char *mg = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    CHECK_CONTAINS(mg, "{\"name\":\"AIWaypointsGroup\",\"class\":\"SimGroup\"");
    CHECK_CONTAINS(mg, "{\"name\":\"AIDecalWaypointsGroup\",\"class\":\"SimGroup\"");
    free(mg);
}

static void test_scaffold(void)
{
    char level[700];
    snprintf(level, sizeof level, "%s/sc/levels/scaf", tmp);
    trn_ter ter;
    make_sloped_ter(&ter);
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.max_height = 256;
    lo.square_size = 2;
    lo.position_z = -10;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    lo.scaffold.enabled = true;
    lo.scaffold.has_sea_level = true;
    lo.scaffold.sea_level = 5;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    /* Every file the level needs to open and drive. */
    static const char *const files[] = {
        "info.json",
        "preview.png",
        "main/items.level.json",
        "main/MissionGroup/items.level.json",
        "main/MissionGroup/PlayerDropPoints/items.level.json",
        "main/MissionGroup/sky_and_sun/items.level.json",
        "main/MissionGroup/CameraBookmarks/items.level.json",
        "main/MissionGroup/vegetation/items.level.json",
        "main/MissionGroup/Water/items.level.json",
        "theTerrain.ter",
        "theTerrain.terrain.json",
        "art/terrains/main.materials.json",
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        CHECK(trn_test_exists(path_in(level, files[i])));
        if (!trn_test_exists(path_in(level, files[i]))) fprintf(stderr, "  no %s\n", files[i]);
    }
    CHECK(strcmp(res.info_path, path_in(level, "info.json")) == 0);
    CHECK(strcmp(res.preview_path, path_in(level, "preview.png")) == 0);
    CHECK_EQ_INT(res.objects_added, 16); /* 7 groups, 9 objects */
    CHECK(res.spawn_added && res.spawn_dry);
    /* On the flat square, its footprint (4 m = 2 samples each way) inside it, at the sample
     * nearest the centre: (54, 72), 2 m a sample from -128, at stored 12000 of 256 m from -10,
     * half a metre up. */
    CHECK(res.spawn_position[0] == -128 + 54 * 2 && res.spawn_position[1] == -128 + 72 * 2);
    CHECK(fabs(res.spawn_position[2] - (12000 * 256.0 / 65536.0 - 10 + 0.5)) < 0.001);

    char *items = read_text(path_in(level, "main/MissionGroup/PlayerDropPoints/items.level.json"));
    CHECK_CONTAINS(items,
                   "{\"name\":\"spawns_default\",\"class\":\"SpawnSphere\",\"persistentId\":");
    CHECK_CONTAINS(items, "\"__parent\":\"PlayerDropPoints\",\"position\":[-20,16,37.375],"
                          "\"dataBlock\":\"SpawnSphereMarker\"");
    free(items);
    items = read_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"));
    CHECK_CONTAINS(items, "\"class\":\"LevelInfo\"");
    CHECK_CONTAINS(items, "\"class\":\"TimeOfDay\"");
    CHECK_CONTAINS(items, "\"class\":\"ScatterSky\"");
    free(items);
    items = read_text(path_in(level, "main/MissionGroup/Water/items.level.json"));
    CHECK_CONTAINS(items, "\"class\":\"WaterPlane\"");
    CHECK_CONTAINS(items, "\"position\":[0,0,5]");
    free(items);
    /* The forest and, beside it, the wind that sways its trees, as the new-level template has
     * them: the emitter holds a position and nothing else (the engine's default wind). */
    items = read_text(path_in(level, "main/MissionGroup/vegetation/items.level.json"));
    CHECK_CONTAINS(items, "{\"name\":\"theForest\",\"class\":\"Forest\",\"persistentId\":");
    CHECK_CONTAINS(items, "{\"name\":\"theForestWind\",\"class\":\"ForestWindEmitter\","
                          "\"persistentId\":");
    CHECK_CONTAINS(items, "\"__parent\":\"vegetation\",\"position\":[0,0,0]}");
    free(items);
    items = read_text(path_in(level, "main/MissionGroup/CameraBookmarks/items.level.json"));
    CHECK_CONTAINS(items, "{\"name\":\"bookmark_overview\",\"internalName\":\"overview\",\"class\":"
                          "\"CameraBookmark\"");
    /* A tenth of the 256 m width south-west of the spawn point and 0.75 of it up, looking at it:
     * rows right, forward, up. */
    CHECK_CONTAINS(items, "\"position\":[-45.6,-9.6,56.575],\"dataBlock\":\"CameraBookmarkMarker\","
                          "\"isAIControlled\":\"0\",\"rotationMatrix\":[0.707107,-0.707107,0,"
                          "0.624695,0.624695,-0.468521,0.331295,0.331295,0.883452]}");
    free(items);
    items = read_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"));
    CHECK_CONTAINS(items, "\"gravity\":-9.81,\"visibleDistance\":1500}"); /* 1.2 x 256 m, raised */
    CHECK_CONTAINS(items, "\"class\":\"TimeOfDay\",\"persistentId\":");
    CHECK_CONTAINS(items, "\"position\":[-20,16,37.375],\"axisTilt\":10,\"azimuthOverride\":0,"
                          "\"play\":false,\"startTime\":0.1,\"time\":0.1}");
    CHECK_CONTAINS(items, "\"azimuth\":200,");
    CHECK_CONTAINS(items, "\"elevation\":45,");
    CHECK_CONTAINS(items, "\"shadowDistance\":1600,\"shadowSoftness\":0.2,");
    CHECK_CONTAINS(items, "\"texSize\":1024,\"useNightCubemap\":true}");
    CHECK_CONTAINS(items, "\"canvasClearColor\":[1,1,1,255],");
    free(items);
    check_editor_fields(level);

    /* info.json: title, size, preview, the spawn point by name. */
    json_error_t je;
    json_t *info = json_load_file(path_in(level, "info.json"), 0, &je);
    CHECK(json_is_object(info));
    CHECK(strcmp(json_string_value(json_object_get(info, "title")), "scaf") == 0);
    CHECK(strcmp(json_string_value(json_object_get(info, "description")),
                 "A terrain made with terrane.") == 0);
    CHECK(json_integer_value(json_array_get(json_object_get(info, "size"), 0)) == 256);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(info, "previews"), 0)),
                 "preview.png") == 0);
    CHECK(strcmp(json_string_value(json_object_get(info, "defaultSpawnPointName")),
                 "spawns_default") == 0);
    json_t *sp = json_array_get(json_object_get(info, "spawnPoints"), 0);
    CHECK(strcmp(json_string_value(json_object_get(sp, "objectname")), "spawns_default") == 0);
    json_decref(info);
    trn_png_info pi;
    CHECK_OK(trn_png_read_info(path_in(level, "preview.png"), &pi, NULL));
    CHECK(pi.width == 128 && pi.height == 128);

    /* It validates clean. */
    trn_findings f = validate(level);
    CHECK_EQ_INT(f.count, 0);
    dump_findings(&f);
    trn_findings_dispose(&f);

    /* Scaffolding again adds nothing: everything is there. */
    char *mg_before = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK_EQ_INT(res.objects_added, 0);
    CHECK(!res.spawn_added && !res.info_path[0] && !res.preview_path[0]);
    char *mg_after = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    CHECK(mg_before && mg_after && strcmp(mg_before, mg_after) == 0);
    free(mg_before), free(mg_after);

    /* Without scaffold: only what the terrain needs. */
    char plain[700];
    snprintf(plain, sizeof plain, "%s/sc/levels/plain", tmp);
    lo.level_dir = plain;
    lo.scaffold.enabled = false;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(!trn_test_exists(path_in(plain, "info.json")));
    CHECK(!trn_test_exists(path_in(plain, "main/MissionGroup/PlayerDropPoints")));
    CHECK_EQ_INT(res.objects_added, 0);
    trn_ter_dispose(&ter);
}

/* Scaffold into the editor level: its LevelInfo, TimeOfDay, spawn and groups are kept, only
 * what is missing is added, in the groups the level already has. */
static void test_scaffold_existing(void)
{
    char root[700], level[800];
    snprintf(root, sizeof root, "%s/scx", tmp);
    make_editor_level(root, level, sizeof level);
    CHECK(write_text(path_in(level, "info.json"), "{\"title\": \"mine\"}\n"));
    static const char *const grass[1] = {"Grass"};
    trn_ter ter;
    make_ter(&ter, 128, grass, 1);
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.scaffold.enabled = true;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(!res.spawn_added && !res.info_path[0]);
    char *info = read_text(path_in(level, "info.json"));
    CHECK(info && strcmp(info, "{\"title\": \"mine\"}\n") == 0);
    free(info);
    char *sky = read_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"));
    CHECK(sky && strncmp(sky, sky_items, strlen(sky_items)) == 0);
    CHECK_CONTAINS(sky, "\"class\":\"ScatterSky\"");
    CHECK(sky && !strstr(sky + strlen(sky_items), "TimeOfDay"));
    free(sky);
    char *drop = read_text(path_in(level, "main/MissionGroup/PlayerDropPoints/items.level.json"));
    CHECK(drop && strcmp(drop, drop_items) == 0);
    free(drop);
    /* CameraBookmarks and vegetation are new groups in MissionGroup; no Water plane (no sea). */
    char *mg = read_text(path_in(level, "main/MissionGroup/items.level.json"));
    CHECK_CONTAINS(mg, "{\"name\":\"CameraBookmarks\",\"class\":\"SimGroup\"");
    CHECK_CONTAINS(mg, "{\"name\":\"vegetation\",\"class\":\"SimGroup\"");
    CHECK(mg && !strstr(mg, "{\"name\":\"Water_1\""));
    free(mg);
    CHECK(!trn_test_exists(path_in(level, "main/MissionGroup/Water/items.level.json")));
    /* 2 groups, the 2 AI groups, ScatterSky, CloudLayer, bookmark, forest and its wind */
    CHECK_EQ_INT(res.objects_added, 9);
    trn_findings f = validate_tree(level);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    CHECK_EQ_INT(count_check(&f, "object-name-duplicate"), 0);
    trn_findings_dispose(&f);
    trn_ter_dispose(&ter);
}

/* How far one sees grows with the terrain (1.2 times its width, in 100 m, 1500 to 20000 m);
 * the title and description given are used; a preview already there is kept. */
static void test_scaffold_sizes(void)
{
    static const char *const grass[1] = {"grass"};
    trn_ter ter;
    make_ter(&ter, 128, grass, 1);
    static const struct {
        double square;
        const char *visible;
    } cases[] = {{9.7, "\"visibleDistance\":1500}"},   /* 1241.6 m -> 1500 */
                 {10, "\"visibleDistance\":1600}"},    /* 1280 m -> 1536 -> 1600 */
                 {100, "\"visibleDistance\":15400}"},  /* 12800 m -> 15360 -> 15400 */
                 {130, "\"visibleDistance\":20000}"},  /* 16640 m -> 19968 -> 20000 */
                 {131, "\"visibleDistance\":20000}"}}; /* 16768 m -> 20121.6: capped */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char level[700];
        snprintf(level, sizeof level, "%s/vis/levels/v%zu", tmp, i);
        trn_beamng_level_options lo = {0};
        lo.level_dir = level;
        lo.square_size = cases[i].square;
        lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
        lo.scaffold.enabled = true;
        lo.scaffold.title = "Isle of Tests";
        lo.scaffold.description = "for the tests";
        if (i == 0) {
            /* A preview of the user's own: kept, and info.json points at it. */
            mkdirs(level);
            CHECK(write_text(path_in(level, "preview.png"), "mine"));
        }
        trn_beamng_level_result res;
        CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
        char *sky = read_text(path_in(level, "main/MissionGroup/sky_and_sun/items.level.json"));
        CHECK_CONTAINS(sky, cases[i].visible);
        free(sky);
        char *info = read_text(path_in(level, "info.json"));
        CHECK_CONTAINS(info, "\"title\": \"Isle of Tests\"");
        CHECK_CONTAINS(info, "\"description\": \"for the tests\"");
        CHECK_CONTAINS(info, "\"preview.png\"");
        free(info);
        if (i == 0) {
            char *pv = read_text(path_in(level, "preview.png"));
            CHECK(pv && strcmp(pv, "mine") == 0 && !res.preview_path[0]);
            free(pv);
        }
    }
    trn_ter_dispose(&ter);
}

/* The spawn point keeps out of holes and water; with no dry ground it sits at the centre. */
static void test_spawn_spot(void)
{
    char level[700];
    trn_ter ter;
    make_sloped_ter(&ter);
    /* Holes where the spawn went (column 54, rows 70..74): the next flat, solid spot. */
    for (uint32_t j = 70; j <= 74; j++)
        ter.layers[(size_t)j * 128 + 54] = 255;
    trn_beamng_level_options lo = {0};
    lo.max_height = 256;
    lo.square_size = 2;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    lo.scaffold.enabled = true;
    trn_beamng_level_result res;
    snprintf(level, sizeof level, "%s/sp/levels/holes", tmp);
    lo.level_dir = level;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(res.spawn_added && res.spawn_dry);
    CHECK(res.spawn_position[0] == -128 + 53 * 2 && res.spawn_position[1] == -128 + 72 * 2);
    /* Everything under the sea: the centre, above the water, not dry. */
    snprintf(level, sizeof level, "%s/sp/levels/sea", tmp);
    lo.level_dir = level;
    lo.scaffold.has_sea_level = true;
    lo.scaffold.sea_level = 1000;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, NULL));
    CHECK(res.spawn_added && !res.spawn_dry);
    CHECK(res.spawn_position[0] == -128 + 63 * 2 && res.spawn_position[2] == 1000.5);
    /* A sea level that is not a number is refused. */
    snprintf(level, sizeof level, "%s/sp/levels/nan", tmp);
    lo.level_dir = level;
    lo.scaffold.sea_level = NAN;
    trn_error err;
    CHECK_STATUS(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK(!trn_test_exists(path_in(level, "theTerrain.ter")));
    trn_ter_dispose(&ter);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_persistent_id);
    RUN(test_groundmodels);
    RUN(test_level_groundmodels);
    RUN(test_recipe_groundmodel);
    RUN(test_import_into_editor_level);
    RUN(test_block_found_anywhere);
    RUN(test_validate_tree);
    RUN(test_material_forms);
    RUN(test_scaffold);
    RUN(test_scaffold_existing);
    RUN(test_scaffold_sizes);
    RUN(test_spawn_spot);
    return trn_test_finish();
}
