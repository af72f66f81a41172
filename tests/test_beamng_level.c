/* Tests for BeamNG level files: .terrain.json, TerrainBlock, materials, import, create, export,
 * validate. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "test.h"

/* ------------------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint32_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (uint32_t)(z ^ (z >> 31));
}

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

/* A synthetic modern terrain (version 9). */
static void make_ter(trn_ter *ter, uint32_t size, uint32_t materials)
{
    memset(ter, 0, sizeof *ter);
    ter->version = 9;
    ter->size = size;
    size_t n = (size_t)size * size;
    ter->heights = malloc(n * 2);
    ter->layers = malloc(n);
    ter->materials = calloc(materials ? materials : 1, sizeof(char *));
    ter->material_lengths = calloc(materials ? materials : 1, sizeof(uint32_t));
    static const char *names[] = {"grass", "rock", "asphalt", "sand", "mud"};
    for (uint32_t i = 0; i < materials; i++) {
        ter->materials[i] = strdup(names[i % 5]);
        ter->material_lengths[i] = (uint32_t)strlen(names[i % 5]);
    }
    ter->material_count = materials;
    for (size_t i = 0; i < n; i++) {
        ter->heights[i] = (uint16_t)rng();
        uint32_t r = rng() % 16;
        ter->layers[i] = (uint8_t)(r == 0 ? 255u : (materials ? r % materials : 0u));
    }
}

static bool png_grey(const char *path, uint32_t w, uint32_t h, uint8_t depth, const void *pixels,
                     bool srgb)
{
    trn_image img;
    if (trn_image_init(&img, w, h, 1, depth, NULL)) return false;
    memcpy(img.data, pixels, (size_t)w * h * (depth / 8u));
    trn_png_options po;
    trn_png_options_default(&po);
    po.srgb = srgb;
    bool ok = trn_png_write(path, &img, &po, NULL, NULL, NULL) == TRN_OK;
    trn_image_dispose(&img);
    return ok;
}

static bool png_flat(const char *path, uint32_t w, uint32_t h, uint8_t channels, uint8_t value,
                     bool srgb)
{
    trn_image img;
    if (trn_image_init(&img, w, h, channels, 8, NULL)) return false;
    memset(img.data, value, (size_t)w * h * channels);
    trn_png_options po;
    trn_png_options_default(&po);
    po.srgb = srgb;
    bool ok = trn_png_write(path, &img, &po, NULL, NULL, NULL) == TRN_OK;
    trn_image_dispose(&img);
    return ok;
}

static bool ter_bytes_equal(const trn_ter *a, const trn_ter *b, uint8_t version)
{
    uint8_t *da = NULL, *db = NULL;
    size_t na = 0, nb = 0;
    bool ok = trn_ter_serialize(a, version, &da, &na, NULL) == TRN_OK &&
              trn_ter_serialize(b, version, &db, &nb, NULL) == TRN_OK && na == nb &&
              memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return ok;
}

static size_t count_check(const trn_findings *f, const char *check)
{
    size_t n = 0;
    for (size_t i = 0; i < f->count; i++)
        if (strcmp(f->items[i].check, check) == 0) n++;
    return n;
}

static void dump_findings(const trn_findings *f)
{
    for (size_t i = 0; i < f->count; i++)
        fprintf(stderr, "  [%s] %s: %s (%s)\n", trn_severity_name(f->items[i].severity),
                f->items[i].check, f->items[i].message, f->items[i].file);
}

/* ------------------------------------------------------------------------- .terrain.json */

/* As the World Editor writes it (every .terrain.json of the public editor-saved levels): keys in
 * sorted order, two-space indentation, no newline after the closing brace. */
static const char expected_json[] =
    "{\n"
    "  \"binaryFormat\": \"version(char), size(unsigned int), heightMap(heightMapSize * "
    "heightMapItemSize), layerMap(layerMapSize * layerMapItemSize), "
    "layerTextureMap(layerMapSize * layerMapItemSize), materialNames\",\n"
    "  \"datafile\": \"/levels/example/theTerrain.ter\",\n"
    "  \"heightMapItemSize\": 2,\n"
    "  \"heightMapSize\": 1048576,\n"
    "  \"heightmapImage\": \"/levels/example/theTerrain.terrainheightmap.png\",\n"
    "  \"layerMapItemSize\": 1,\n"
    "  \"layerMapSize\": 1048576,\n"
    "  \"materials\": [\n"
    "    \"grass\",\n"
    "    \"rock\"\n"
    "  ],\n"
    "  \"size\": 1024,\n"
    "  \"version\": 9\n"
    "}";

static void test_terrain_json_write_read(void)
{
    /* Only the header fields matter for the json: a 1024 terrain without maps. */
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    ter.version = 9;
    ter.size = 1024;
    char *names[2] = {"grass", "rock"};
    ter.materials = names;
    ter.material_count = 2;
    trn_terrain_json tj;
    CHECK_OK(trn_terrain_json_from_ter(&ter, "/levels/example/theTerrain.ter",
                                       "/levels/example/theTerrain.terrainheightmap.png", &tj,
                                       NULL));
    char *text = NULL;
    size_t n = 0;
    CHECK_OK(trn_terrain_json_serialize(&tj, &text, &n, NULL));
    /* Seed 000's minimal example, field for field and in its order. */
    CHECK(text && strcmp(text, expected_json) == 0);
    CHECK_EQ_INT(n, strlen(expected_json));
    if (text && strcmp(text, expected_json) != 0) fprintf(stderr, "%s", text);

    trn_terrain_json back;
    CHECK_OK(trn_terrain_json_parse(text, n, "x.terrain.json", &back, NULL));
    CHECK_EQ_INT(back.version, 9);
    CHECK_EQ_INT(back.size, 1024);
    CHECK_EQ_INT(back.height_map_size, 1048576);
    CHECK_EQ_INT(back.height_map_item_size, 2);
    CHECK_EQ_INT(back.layer_map_size, 1048576);
    CHECK_EQ_INT(back.layer_map_item_size, 1);
    CHECK(strcmp(back.binary_format, TRN_TERRAIN_JSON_BINARY_FORMAT) == 0);
    CHECK(strcmp(back.datafile, "/levels/example/theTerrain.ter") == 0);
    CHECK_EQ_INT(back.material_count, 2);
    CHECK(back.material_count == 2 && strcmp(back.materials[1], "rock") == 0);

    trn_findings f = {0};
    size_t mismatches = 99;
    CHECK_OK(trn_terrain_json_compare(&back, "x.terrain.json", &ter, "/tmp/theTerrain.ter",
                                      "/levels/example/theTerrain.ter", &f, &mismatches, NULL));
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(f.count, 0);
    /* Without the game path only the file names are compared. */
    CHECK_OK(trn_terrain_json_compare(&back, "x.terrain.json", &ter, "/tmp/other.ter", NULL, &f,
                                      &mismatches, NULL));
    CHECK_EQ_INT(mismatches, 1);
    CHECK(f.count == 1 && strstr(f.items[0].message, "other.ter"));
    trn_findings_dispose(&f);
    trn_findings_dispose(NULL);

    /* Plant one disagreement per field. */
    back.version = 8;
    back.size = 512;
    back.height_map_size = 5;
    back.height_map_item_size = 4;
    back.layer_map_size = 6;
    back.layer_map_item_size = 2;
    free(back.materials[1]);
    back.materials[1] = strdup("dirt");
    free(back.datafile);
    back.datafile = strdup("/levels/example/TheTerrain.ter");
    CHECK_OK(trn_terrain_json_compare(&back, "x.terrain.json", &ter, "/tmp/theTerrain.ter",
                                      "/levels/example/theTerrain.ter", &f, &mismatches, NULL));
    CHECK_EQ_INT(mismatches, 8);
    CHECK_EQ_INT(count_check(&f, "terrain-json-mismatch"), 8);
    CHECK(f.count == 8 && strstr(f.items[0].message, "version is 8") &&
          strstr(f.items[1].message, "size is 512") &&
          strstr(f.items[2].message, "heightMapSize is 5") &&
          strstr(f.items[6].message, "materials[1] is \"dirt\"") &&
          strstr(f.items[7].message, "TheTerrain.ter"));
    CHECK(f.count && f.items[0].severity == TRN_SEVERITY_WARNING && f.items[0].fix[0]);
    trn_findings_dispose(&f);

    /* Count disagreement: one name more in the .ter. */
    char *three[3] = {"grass", "rock", "sand"};
    ter.materials = three;
    ter.material_count = 3;
    trn_terrain_json_dispose(&back);
    CHECK_OK(trn_terrain_json_parse(text, n, "x.terrain.json", &back, NULL));
    CHECK_OK(trn_terrain_json_compare(&back, NULL, &ter, NULL, NULL, &f, &mismatches, NULL));
    CHECK_EQ_INT(mismatches, 2);
    CHECK(f.count == 2 && strstr(f.items[0].message, "lists 2 materials") &&
          strstr(f.items[1].message, "\"sand\""));
    trn_findings_dispose(&f);
    trn_terrain_json_dispose(&back);
    trn_terrain_json_dispose(&tj);
    trn_terrain_json_dispose(NULL);
    free(text);
}

static void test_terrain_json_errors(void)
{
    trn_terrain_json tj;
    trn_error err;
    const char *bad_syntax = "{\n  \"version\": 9,\n  \"size\": ]\n}\n";
    CHECK_STATUS(
        trn_terrain_json_parse(bad_syntax, strlen(bad_syntax), "t.terrain.json", &tj, &err),
        TRN_ERR_JSON);
    CHECK_EQ_INT(err.line, 3);
    CHECK_EQ_INT(err.column, 11);
    CHECK_EQ_INT(err.offset, 28); /* the ']' */
    CHECK(strcmp(err.file, "t.terrain.json") == 0);

    const char *bad_name = "{\"version\": 9, \"datafile\": \"/x.ter\", \"size\": 2, "
                           "\"heightMapSize\": 4, \"heightMapItemSize\": 2, \"layerMapSize\": 4, "
                           "\"layerMapItemSize\": 1, \"materials\": [\"a\", \"b\", 3]}";
    CHECK_STATUS(trn_terrain_json_parse(bad_name, strlen(bad_name), "t.json", &tj, &err),
                 TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "materials[2]: expected a string, found a whole number");

    const char *missing = "{\"version\": 9, \"size\": 2}";
    CHECK_STATUS(trn_terrain_json_parse(missing, strlen(missing), "t.json", &tj, &err),
                 TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "datafile: missing, expected a string");

    const char *neg = "{\"version\": 9, \"size\": -2}";
    CHECK_STATUS(trn_terrain_json_parse(neg, strlen(neg), "t.json", &tj, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "size: -2 is out of range");

    const char *bom = "\xEF\xBB\xBF{\"version\": 9, \"size\": x}";
    CHECK_STATUS(trn_terrain_json_parse(bom, strlen(bom), "t.json", &tj, &err), TRN_ERR_JSON);
    CHECK_EQ_INT(err.offset, 26); /* the x, counted from the first byte (BOM included) */

    const char *arr = "[1, 2]";
    CHECK_STATUS(trn_terrain_json_parse(arr, strlen(arr), "t.json", &tj, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "$: expected an object, found an array");

    CHECK_STATUS(trn_terrain_json_read("/nonexistent/x.terrain.json", &tj, &err),
                 TRN_ERR_NOT_FOUND);
}

/* ---------------------------------------------------------------------------- TerrainBlock */

static void test_terrain_block_defaults(void)
{
    trn_terrain_block tb;
    CHECK_OK(trn_terrain_block_init(&tb, "theTerrain", "/levels/example/theTerrain.ter",
                                    "exampleTerrainMaterialTextureSet", 2048, NULL));
    CHECK(tb.position[0] == -1024.0 && tb.position[1] == -1024.0 && tb.position[2] == 0.0);
    CHECK(tb.square_size == 1.0 && tb.max_height == 2048.0 && tb.screen_error == 16.0);
    CHECK(tb.cast_shadows);
    CHECK(tb.rotation_matrix[0] == 1.0 && tb.rotation_matrix[4] == 1.0 &&
          tb.rotation_matrix[8] == 1.0 && tb.rotation_matrix[1] == 0.0);
    tb.square_size = 2.0;
    trn_terrain_block_center(&tb, 1024);
    CHECK(tb.position[0] == -1024.0 && tb.position[1] == -1024.0);
    trn_terrain_block_dispose(&tb);
    trn_terrain_block_dispose(NULL);
}

/* items.level.json is read line by line: each bad line is one problem with its place, and the
 * lines around it still count; put keeps bad lines and refuses only when one may be its block. */
static void test_items_line_by_line(void)
{
    const char *text = "{\"class\":\"SimGroup\",\"name\":\"MissionGroup\"}\n"            /* 0 */
                       "{\"class\":\"TerrainBlock\",\"name\":\"a\",\"squareSize\":2}\n"  /* 43 */
                       "[\"an array\"]\n"                                                /* 94 */
                       "{\"class\":\"TerrainBlock\",\"name\":\"b\",\"maxHeight\":[1]}\n" /* 107 */
                       "{\"class\":\"TerrainBlock\",\"name\":\"c\",\n"                   /* 159 */
                       "\n"                                                              /* 195 */
                       "{\"class\":\"TerrainBlock\",\"name\":\"d\",\"squareSize\":4}";   /* 196 */
    size_t n = strlen(text);
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    trn_findings problems = {0};
    trn_error err;
    CHECK_OK(trn_items_parse_terrain_blocks(text, n, "items.level.json", &blocks, &count, &problems,
                                            &err));
    CHECK_EQ_INT(count, 2);
    if (count == 2) {
        CHECK(strcmp(blocks[0].name, "a") == 0 && blocks[0].source_line == 2);
        CHECK(strcmp(blocks[1].name, "d") == 0 && blocks[1].source_line == 7);
        CHECK(blocks[1].square_size == 4.0);
    }
    CHECK_EQ_INT(problems.count, 3);
    if (problems.count == 3) {
        /* Not an object: the line's first byte. */
        CHECK_EQ_INT(problems.items[0].line, 3);
        CHECK_EQ_INT(problems.items[0].column, 0);
        CHECK_EQ_INT(problems.items[0].offset, 94);
        CHECK_CONTAINS(problems.items[0].message, "each line must be one JSON object");
        /* A field of the wrong type: the line's first byte and the field in the fix. */
        CHECK_EQ_INT(problems.items[1].line, 4);
        CHECK_EQ_INT(problems.items[1].column, 0);
        CHECK_EQ_INT(problems.items[1].offset, 107);
        CHECK_CONTAINS(problems.items[1].message, "TerrainBlock.maxHeight: expected a number");
        CHECK_CONTAINS(problems.items[1].fix, "give maxHeight a value of the expected type");
        /* Cut short: where the parser stopped (the end of the line), with the column. */
        CHECK_EQ_INT(problems.items[2].line, 5);
        CHECK_EQ_INT(problems.items[2].column, 35);
        CHECK_EQ_INT(problems.items[2].offset, 193);
        CHECK_CONTAINS(problems.items[2].message, "invalid JSON");
        for (size_t i = 0; i < problems.count; i++)
            CHECK(strcmp(problems.items[i].file, "items.level.json") == 0 &&
                  strcmp(problems.items[i].check, "level-items-invalid") == 0);
    }
    trn_terrain_blocks_free(blocks, count);
    trn_findings_dispose(&problems);
    /* Without a list the first bad line is the error, at the same place. */
    CHECK_STATUS(
        trn_items_parse_terrain_blocks(text, n, "items.level.json", &blocks, &count, NULL, &err),
        TRN_ERR_JSON);
    CHECK_EQ_INT(err.line, 3);
    CHECK_EQ_INT(err.offset, 94);
    CHECK(blocks == NULL && count == 0);

    /* Put: a valid block of the name is replaced and the bad lines stay byte for byte. */
    trn_terrain_block tb;
    CHECK_OK(trn_terrain_block_init(&tb, "d", "/levels/x/d.ter", NULL, 256, NULL));
    char *out = NULL;
    size_t out_size = 0;
    CHECK_OK(trn_items_put_terrain_block_text(text, n, NULL, &tb, &out, &out_size, &err));
    CHECK(out && out_size > 196 && memcmp(out, text, 196) == 0);
    free(out);
    /* A new name is appended beside bad lines that cannot be it ("e" is in "name", but "\"e\""
     * is nowhere). */
    trn_terrain_block_dispose(&tb);
    CHECK_OK(trn_terrain_block_init(&tb, "e", "/levels/x/e.ter", NULL, 256, NULL));
    CHECK_OK(trn_items_put_terrain_block_text(text, n, NULL, &tb, &out, &out_size, &err));
    CHECK(out && out_size > n + 1 && memcmp(out, text, n) == 0 && out[n] == '\n');
    free(out);
    /* "c" is only on the broken line 5, which may be that block: refused, nothing written. */
    trn_terrain_block_dispose(&tb);
    CHECK_OK(trn_terrain_block_init(&tb, "c", "/levels/x/c.ter", NULL, 256, NULL));
    out = (char *)"untouched";
    CHECK_STATUS(
        trn_items_put_terrain_block_text(text, n, "items.level.json", &tb, &out, &out_size, &err),
        TRN_ERR_JSON);
    CHECK(out == NULL);
    CHECK_EQ_INT(err.line, 5);
    CHECK_EQ_INT(err.column, 35);
    CHECK_EQ_INT(err.offset, 193);
    CHECK_CONTAINS(err.message, "line 5 is not valid JSON");
    CHECK_CONTAINS(err.message, "mentions TerrainBlock and \"c\"");
    /* The file form refuses the same way and leaves the file as it was. */
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    char *items = path_in(dir, "items.level.json");
    CHECK(write_text(items, text));
    CHECK_STATUS(trn_items_put_terrain_block(items, &tb, &err), TRN_ERR_JSON);
    char *back = read_text(items);
    CHECK(back && strcmp(back, text) == 0);
    free(back);
    trn_terrain_block_dispose(&tb);
}

static void test_items_preserve(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    char *items = path_in(dir, "main/items.level.json");
    /* A new file (and its folder) is created. */
    trn_terrain_block tb;
    CHECK_OK(trn_terrain_block_init(&tb, "theTerrain", "/levels/example/theTerrain.ter",
                                    "exampleTerrainMaterialTextureSet", 2048, NULL));
    CHECK_OK(trn_items_put_terrain_block(items, &tb, NULL));
    char *text = read_text(items);
    /* screenError, castShadows and rotationMatrix at their defaults are left out, as in every
     * TerrainBlock of the public editor-saved levels. */
    CHECK(text && strcmp(text, "{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\","
                               "\"terrainFile\":\"/levels/example/theTerrain.ter\","
                               "\"materialTextureSet\":\"exampleTerrainMaterialTextureSet\","
                               "\"squareSize\":1,\"maxHeight\":2048,"
                               "\"position\":[-1024,-1024,0]}\n") == 0);
    free(text);

    /* Other objects, odd spacing, a line that is not even JSON, our old block with keys we do
     * not manage, and no newline at the end. The replaced line gains only the keys whose
     * values differ from what a missing key means (screenError 16 and an identity rotation
     * stay left out, as the World Editor writes them). */
    const char *before =
        "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"enabled\":\"1\"}\n"
        "{ \"class\" : \"SpawnSphere\",  \"position\":[1.5, 2, 3] }\n"
        "this line is not JSON but is not ours either\n"
        "{\"persistentId\":\"abc\",\"class\":\"TerrainBlock\",\"name\":\"theTerrain\","
        "\"terrainFile\":\"/levels/old/old.ter\",\"__parent\":\"MissionGroup\","
        "\"materialTextureSet\":\"old\"}\n"
        "{\"class\":\"TerrainBlock\",\"name\":\"second\",\"terrainFile\":\"/levels/x/b.ter\"}";
    CHECK(write_text(items, before));
    tb.square_size = 0.5;
    tb.max_height = 500;
    tb.cast_shadows = false;
    tb.position[2] = 12.25;
    CHECK_OK(trn_items_put_terrain_block(items, &tb, NULL));
    text = read_text(items);
    const char *expected =
        "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"enabled\":\"1\"}\n"
        "{ \"class\" : \"SpawnSphere\",  \"position\":[1.5, 2, 3] }\n"
        "this line is not JSON but is not ours either\n"
        "{\"persistentId\":\"abc\",\"class\":\"TerrainBlock\",\"name\":\"theTerrain\","
        "\"terrainFile\":\"/levels/example/theTerrain.ter\",\"__parent\":\"MissionGroup\","
        "\"materialTextureSet\":\"exampleTerrainMaterialTextureSet\",\"squareSize\":0.5,"
        "\"maxHeight\":500,\"castShadows\":false,\"position\":[-1024,-1024,12.25]}\n"
        "{\"class\":\"TerrainBlock\",\"name\":\"second\",\"terrainFile\":\"/levels/x/b.ter\"}";
    CHECK(text && strcmp(text, expected) == 0);
    if (text && strcmp(text, expected) != 0) fprintf(stderr, "%s\n", text);
    free(text);

    /* A new name is appended after a newline is added to the unterminated last line; reading
     * the unparsable line is an error with its line and offset. */
    trn_terrain_block other;
    CHECK_OK(trn_terrain_block_init(&other, "third", "/levels/x/c.ter", NULL, 256, NULL));
    CHECK_OK(trn_items_put_terrain_block(items, &other, NULL));
    text = read_text(items);
    CHECK(text &&
          strstr(text, "\"/levels/x/b.ter\"}\n{\"class\":\"TerrainBlock\",\"name\":\"third\""));
    CHECK(text &&
          !strstr(text, "\"third\",\"terrainFile\":\"/levels/x/c.ter\",\"materialTextureSet"));
    free(text);
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    trn_error err;
    CHECK_STATUS(trn_items_read_terrain_blocks(items, &blocks, &count, NULL, &err), TRN_ERR_JSON);
    /* jansson stops at the 4th byte of "this"; the line starts at byte 110. */
    CHECK_EQ_INT(err.line, 3);
    CHECK_EQ_INT(err.column, 4);
    CHECK_EQ_INT(err.offset, 113);
    CHECK(blocks == NULL && count == 0);
    /* Line by line, as the engine reads it: the bad line is a problem, the blocks after it and
     * before it are all there. */
    trn_findings problems = {0};
    CHECK_OK(trn_items_read_terrain_blocks(items, &blocks, &count, &problems, &err));
    CHECK_EQ_INT(count, 3);
    CHECK_EQ_INT(problems.count, 1);
    if (problems.count == 1) {
        const trn_finding *p = &problems.items[0];
        CHECK(strcmp(p->check, "level-items-invalid") == 0 && p->severity == TRN_SEVERITY_ERROR);
        CHECK(strcmp(p->file, items) == 0);
        CHECK_EQ_INT(p->line, 3);
        CHECK_EQ_INT(p->column, 4);
        CHECK_EQ_INT(p->offset, 113);
        CHECK_CONTAINS(p->message, "invalid JSON");
        CHECK_CONTAINS(p->fix, "one complete JSON object");
    }
    if (count == 3) CHECK_EQ_INT(blocks[0].source_line, 4);
    trn_terrain_blocks_free(blocks, count);
    trn_findings_dispose(&problems);

    /* Without the bad line all three blocks read back. */
    text = read_text(items);
    char *bad = text ? strstr(text, "this line") : NULL;
    if (bad) memmove(bad, strchr(bad, '\n') + 1, strlen(strchr(bad, '\n') + 1) + 1);
    CHECK(text && write_text(items, text));
    free(text);
    CHECK_OK(trn_items_read_terrain_blocks(items, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 3);
    if (count == 3) {
        CHECK(strcmp(blocks[0].name, "theTerrain") == 0);
        CHECK(blocks[0].square_size == 0.5 && blocks[0].max_height == 500);
        CHECK(!blocks[0].cast_shadows && blocks[0].position[2] == 12.25);
        CHECK(strcmp(blocks[0].material_texture_set, "exampleTerrainMaterialTextureSet") == 0);
        CHECK_EQ_INT(blocks[0].source_line, 3);
        CHECK(strcmp(blocks[1].name, "second") == 0 && blocks[1].material_texture_set == NULL);
        /* Missing fields take the engine's defaults (position 0, not centred). */
        CHECK(blocks[1].square_size == 1.0 && blocks[1].position[0] == 0.0);
        CHECK(strcmp(blocks[2].terrain_file, "/levels/x/c.ter") == 0);
        CHECK(blocks[2].position[0] == -128.0);
    }
    trn_terrain_blocks_free(blocks, count);

    /* Level-wide search finds blocks in nested groups too. */
    CHECK(mkdir(path_in(dir, "main/MissionGroup"), 0777) == 0);
    CHECK(write_text(path_in(dir, "main/MissionGroup/items.level.json"),
                     "{\"class\":\"TerrainBlock\",\"name\":\"nested\",\"squareSize\":\"2\","
                     "\"castShadows\":\"0\",\"position\":\"1 2 3\"}\r\n"));
    CHECK_OK(trn_level_find_terrain_blocks(dir, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 4);
    if (count == 4) {
        /* Sorted by path: main/MissionGroup/... before main/items.level.json. */
        CHECK(strcmp(blocks[0].name, "nested") == 0);
        CHECK(blocks[0].square_size == 2.0 && !blocks[0].cast_shadows);
        CHECK(blocks[0].position[0] == 1.0 && blocks[0].position[2] == 3.0);
    }
    trn_terrain_blocks_free(blocks, count);

    /* CRLF files stay CRLF, and a wrong field type is an error naming the field and line. */
    char *crlf = path_in(dir, "crlf.json");
    CHECK(write_text(crlf, "{\"class\":\"SimGroup\"}\r\n{\"class\":\"TerrainBlock\",\"name\":"
                           "\"t\",\"squareSize\":\"wide\"}\r\n"));
    CHECK_STATUS(trn_items_read_terrain_blocks(crlf, &blocks, &count, NULL, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "TerrainBlock.squareSize: expected a number, found a string");
    CHECK_EQ_INT(err.line, 2);
    CHECK_OK(trn_items_put_terrain_block(crlf, &other, NULL));
    text = read_text(crlf);
    CHECK(text && strncmp(text,
                          "{\"class\":\"SimGroup\"}\r\n{\"class\":\"TerrainBlock\",\"name\":"
                          "\"t\",\"squareSize\":\"wide\"}\r\n{\"class\":\"TerrainBlock\","
                          "\"name\":\"third\"",
                          110) == 0);
    CHECK(text && strlen(text) > 2 && strcmp(text + strlen(text) - 2, "\r\n") == 0);
    free(text);

    /* A byte order mark (Windows editors) is read past and kept. */
    char *bom = path_in(dir, "bom.json");
    CHECK(write_text(bom, "\xEF\xBB\xBF{\"class\":\"TerrainBlock\",\"name\":\"b\"}\n"));
    CHECK_OK(trn_items_read_terrain_blocks(bom, &blocks, &count, NULL, NULL));
    CHECK(count == 1 && strcmp(blocks[0].name, "b") == 0);
    trn_terrain_blocks_free(blocks, count);
    CHECK_OK(trn_items_put_terrain_block(bom, &other, NULL));
    text = read_text(bom);
    CHECK(text &&
          strncmp(text, "\xEF\xBB\xBF{\"class\":\"TerrainBlock\",\"name\":\"b\"}\n{", 34) == 0);
    free(text);

    trn_terrain_block unnamed = tb;
    unnamed.name = "";
    CHECK_STATUS(trn_items_put_terrain_block(items, &unnamed, &err), TRN_ERR_INVALID_ARGUMENT);
    trn_terrain_block_dispose(&tb);
    trn_terrain_block_dispose(&other);
}

/* ------------------------------------------------------------------------------ materials */

static void test_materials_roundtrip(void)
{
    trn_terrain_material m;
    CHECK_OK(trn_terrain_material_init_default(&m, "grass01", "/levels/example/art/terrains", 2048,
                                               NULL));
    CHECK(strcmp(m.internal_name, "grass01") == 0);
    CHECK(strcmp(m.groundmodel_name, "GRASS") == 0 && strcmp(m.annotation, "GRASS") == 0);
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++)
            CHECK(m.tex[g][s] != NULL);
    CHECK(strcmp(m.tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE],
                 "/levels/example/art/terrains/t_terrane_grass01_b.png") == 0);
    CHECK(strcmp(m.tex[TRN_TEX_NORMAL][TRN_TEX_DETAIL],
                 "/levels/example/art/terrains/t_terrane_nm_detail.png") == 0);
    CHECK(m.tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] == 2048);
    CHECK(!trn_terrain_material_is_v1(&m));

    trn_material_file mf = {0};
    trn_texture_set ts = {0};
    ts.key = "exampleTerrainMaterialTextureSet";
    ts.name = "exampleTerrainMaterialTextureSet";
    ts.base_tex_size[0] = ts.base_tex_size[1] = 512;
    ts.macro_tex_size[0] = ts.macro_tex_size[1] = 1024;
    ts.detail_tex_size[0] = ts.detail_tex_size[1] = 1024;
    mf.texture_sets = &ts;
    mf.texture_set_count = 1;
    mf.materials = &m;
    mf.material_count = 1;
    char *text = NULL;
    size_t n = 0;
    CHECK_OK(trn_material_file_serialize(&mf, &text, &n, NULL));
    /* Seed 000's look: name-keyed, one field a line, vectors on one line, seed field order. */
    CHECK_CONTAINS(text, "\"exampleTerrainMaterialTextureSet\": {\n    \"class\": "
                         "\"TerrainMaterialTextureSet\",\n    \"name\": "
                         "\"exampleTerrainMaterialTextureSet\",\n    \"baseTexSize\": [512, 512],");
    CHECK_CONTAINS(text, "\"grass01\": {\n    \"class\": \"TerrainMaterial\",\n    "
                         "\"internalName\": \"grass01\",\n    \"annotation\": \"GRASS\",\n    "
                         "\"groundmodelName\": \"GRASS\",\n    \"baseColorBaseTex\": ");
    CHECK_CONTAINS(text, "\"baseColorMacroStrength\": [0.1, 0.2],\n    \"baseColorDetailTex\"");
    CHECK_CONTAINS(text, "\"macroDistances\": [0, 10, 100, 3000],\n    \"detailDistances\": "
                         "[0, 0, 30, 60],\n    \"macroDistAtten\": [1, 1],\n    "
                         "\"detailDistAtten\": [1, 1]\n  }");
    /* Strengths only where the seed shows them. */
    CHECK(text && !strstr(text, "aoMacroStrength") && !strstr(text, "heightDetailStrength"));
    CHECK(text && strstr(text, "roughnessDetailStrength"));

    trn_material_file back;
    CHECK_OK(trn_material_file_parse(text, n, "main.materials.json", &back, NULL));
    CHECK_EQ_INT(back.material_count, 1);
    CHECK_EQ_INT(back.texture_set_count, 1);
    if (back.material_count == 1 && back.texture_set_count == 1) {
        const trn_terrain_material *b = &back.materials[0];
        for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
            for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++) {
                CHECK(strcmp(b->tex[g][s], m.tex[g][s]) == 0);
                CHECK(b->tex_size[g][s] == m.tex_size[g][s]);
            }
        CHECK(b->has_strength[TRN_TEX_NORMAL][1] && b->strength[TRN_TEX_NORMAL][1][0] == 0.7 &&
              b->strength[TRN_TEX_NORMAL][1][1] == 0.15);
        CHECK(!b->has_strength[TRN_TEX_AO][0]);
        CHECK(b->has_detail_distances && b->detail_distances[3] == 60);
        CHECK(strcmp(back.texture_sets[0].name, "exampleTerrainMaterialTextureSet") == 0);
        CHECK(back.texture_sets[0].macro_tex_size[1] == 1024);
        CHECK(back.other_json == NULL && b->extra_json == NULL);
    }
    /* Writing what was read gives the same text. */
    char *again = NULL;
    CHECK_OK(trn_material_file_serialize(&back, &again, NULL, NULL));
    CHECK(again && text && strcmp(again, text) == 0);
    free(again);
    trn_material_file_dispose(&back);
    free(text);
    trn_terrain_material_dispose(&m);

    /* Fields we do not model and other classes survive a rewrite; scalar strengths are read. */
    const char *extra =
        "{\"rock\": {\"class\": \"TerrainMaterial\", \"persistentId\": \"p-1\", \"internalName\": "
        "\"rock\", \"useSideProjection\": true, \"parallaxScale\": 0.25, \"normalMacroStrength\": "
        "0.5, \"baseColorBaseTex\": \"\"},\n \"decal\": {\"class\": \"Material\", \"mapTo\": "
        "\"x\"}}";
    CHECK_OK(trn_material_file_parse(extra, strlen(extra), "m.json", &back, NULL));
    CHECK_EQ_INT(back.material_count, 1);
    if (back.material_count == 1) {
        CHECK(back.materials[0].tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] == NULL);
        CHECK(back.materials[0].has_strength[TRN_TEX_NORMAL][0] &&
              back.materials[0].strength[TRN_TEX_NORMAL][0][1] == 0.5);
    }
    CHECK_OK(trn_material_file_serialize(&back, &text, NULL, NULL));
    CHECK_CONTAINS(text, "\"persistentId\": \"p-1\"");
    CHECK_CONTAINS(text, "\"useSideProjection\": true");
    CHECK_CONTAINS(text, "\"parallaxScale\": 0.25");
    CHECK_CONTAINS(text, "\"decal\": {\n    \"class\": \"Material\",\n    \"mapTo\": \"x\"\n  }");
    free(text);
    trn_material_file_dispose(&back);

    /* Schema errors name the entry and field; syntax errors the line and column. */
    trn_error err;
    const char *bad = "{\"rock\": {\"class\": \"TerrainMaterial\", \"baseColorBaseTexSize\": "
                      "\"big\"}}";
    CHECK_STATUS(trn_material_file_parse(bad, strlen(bad), "m.json", &back, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "rock.baseColorBaseTexSize: expected a number, found a string");
    const char *bad2 = "{\"set\": {\"class\": \"TerrainMaterialTextureSet\", \"baseTexSize\": "
                       "[512]}}";
    CHECK_STATUS(trn_material_file_parse(bad2, strlen(bad2), "m.json", &back, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "set.baseTexSize: expected an array of 2 numbers");
    const char *bad3 = "{\n\"a\": {\n}\n,,}";
    CHECK_STATUS(trn_material_file_parse(bad3, strlen(bad3), "m.json", &back, &err), TRN_ERR_JSON);
    CHECK_EQ_INT(err.line, 4);
    CHECK_EQ_INT(err.column, 2);
    const char *bad4 = "{\"a\": 3}";
    CHECK_STATUS(trn_material_file_parse(bad4, strlen(bad4), "m.json", &back, &err), TRN_ERR_JSON);
    CHECK_CONTAINS(err.message, "a: expected an object, found a whole number");
}

static const char v1_materials[] =
    "{\n"
    "  \"grass_v1\": {\n"
    "    \"class\": \"TerrainMaterial\",\n"
    "    \"internalName\": \"grass\",\n"
    "    \"groundmodelName\": \"GRASS\",\n"
    "    \"annotation\": \"GRASS\",\n"
    "    \"diffuseMap\": \"/levels/old/art/terrains/grass_d.dds\",\n"
    "    \"diffuseSize\": 400,\n"
    "    \"normalMap\": \"/levels/old/art/terrains/grass_n.dds\",\n"
    "    \"detailMap\": \"/levels/old/art/terrains/grass_det.dds\",\n"
    "    \"detailSize\": 4,\n"
    "    \"detailStrength\": 0.6,\n"
    "    \"detailDistance\": 80,\n"
    "    \"macroMap\": \"/levels/old/art/terrains/grass_m.dds\",\n"
    "    \"macroSize\": 50,\n"
    "    \"macroStrength\": 0.3,\n"
    "    \"macroDistance\": 600,\n"
    "    \"useSideProjection\": false\n"
    "  },\n"
    "  \"rock\": {\"class\": \"TerrainMaterial\", \"internalName\": \"rock\", "
    "\"diffuseMap\": \"rock_d\"},\n"
    "  \"shared_mat\": {\"class\": \"Material\", \"mapTo\": \"unmapped\"}\n"
    "}\n";

static void test_materials_migrate(void)
{
    char root[512];
    CHECK(trn_test_tmpdir(root, sizeof root) != NULL);
    char level[600];
    snprintf(level, sizeof level, "%s/levels/old", root);
    CHECK(mkdir(path_in(root, "levels"), 0777) == 0 && mkdir(level, 0777) == 0);
    CHECK(mkdir(path_in(level, "art"), 0777) == 0 &&
          mkdir(path_in(level, "art/terrains"), 0777) == 0);
    CHECK(mkdir(path_in(level, "main"), 0777) == 0);
    char *old = path_in(level, "art/terrains/materials.json");
    CHECK(write_text(old, v1_materials));
    CHECK(write_text(path_in(level, "main/items.level.json"),
                     "{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\",\"terrainFile\":"
                     "\"/levels/old/theTerrain.ter\",\"persistentId\":\"q\"}\n"));

    trn_material_file mf;
    CHECK_OK(trn_material_file_read(old, &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 2);
    CHECK(mf.material_count == 2 && trn_terrain_material_is_v1(&mf.materials[0]));
    trn_terrain_material up;
    if (mf.material_count == 2) {
        CHECK_OK(trn_terrain_material_upgrade(&mf.materials[0], &up, NULL));
        CHECK(strcmp(up.internal_name, "grass") == 0 && strcmp(up.groundmodel_name, "GRASS") == 0);
        CHECK(strcmp(up.annotation, "GRASS") == 0);
        CHECK(strcmp(up.tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE],
                     "/levels/old/art/terrains/grass_d.dds") == 0);
        CHECK(up.tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] == 400);
        CHECK(strcmp(up.tex[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL],
                     "/levels/old/art/terrains/grass_det.dds") == 0);
        CHECK(up.tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL] == 4);
        CHECK(up.strength[TRN_TEX_BASE_COLOR][1][0] == 0.6);
        CHECK(strcmp(up.tex[TRN_TEX_BASE_COLOR][TRN_TEX_MACRO],
                     "/levels/old/art/terrains/grass_m.dds") == 0);
        CHECK(up.strength[TRN_TEX_BASE_COLOR][0][1] == 0.3);
        CHECK(strcmp(up.tex[TRN_TEX_NORMAL][TRN_TEX_DETAIL],
                     "/levels/old/art/terrains/grass_n.dds") == 0);
        CHECK(up.detail_distances[2] == 40 && up.detail_distances[3] == 80);
        CHECK(up.macro_distances[3] == 600);
        CHECK(!up.diffuse_map && !up.normal_map && !up.detail_map && !up.macro_map);
        CHECK(!trn_terrain_material_is_v1(&up));
        CHECK(up.extra_json && strstr(up.extra_json, "useSideProjection"));
        trn_terrain_material_dispose(&up);
    }
    trn_material_file_dispose(&mf);

    trn_migrate_options mo = {0};
    mo.fill_textures = true;
    mo.assign_texture_set = true;
    mo.textures.base_size = mo.textures.macro_size = mo.textures.detail_size = 32;
    uint32_t migrated = 0;
    CHECK_OK(trn_beamng_migrate_materials(level, &mo, &migrated, NULL));
    CHECK_EQ_INT(migrated, 2);
    CHECK(trn_test_exists(old)); /* kept unless asked */
    char *main_path = path_in(level, "art/terrains/main.materials.json");
    CHECK_OK(trn_material_file_read(main_path, &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 2);
    CHECK_EQ_INT(mf.texture_set_count, 1);
    if (mf.material_count == 2 && mf.texture_set_count == 1) {
        CHECK(strcmp(mf.texture_sets[0].name, "oldTerrainMaterialTextureSet") == 0);
        CHECK(mf.texture_sets[0].base_tex_size[0] == 32);
        const trn_terrain_material *g = &mf.materials[0];
        CHECK(strcmp(g->key, "grass_v1") == 0 && strcmp(g->internal_name, "grass") == 0);
        CHECK(strcmp(g->tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE],
                     "/levels/old/art/terrains/grass_d.dds") == 0);
        /* Empty slots point at generated placeholders. */
        CHECK(strcmp(g->tex[TRN_TEX_ROUGHNESS][TRN_TEX_BASE],
                     "/levels/old/art/terrains/t_terrane_grey_base.png") == 0);
        CHECK(!trn_terrain_material_is_v1(g) && g->diffuse_map == NULL);
        /* rock had no diffuse map of its own... it had one ("rock_d"): kept as is. */
        CHECK(strcmp(mf.materials[1].tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE], "rock_d") == 0);
    }
    trn_material_file_dispose(&mf);
    CHECK(trn_test_exists(path_in(level, "art/terrains/t_terrane_nm_macro.png")));
    CHECK(trn_test_exists(path_in(level, "art/terrains/t_terrane_white_base.png")));
    trn_png_info pi;
    CHECK_OK(
        trn_png_read_info(path_in(level, "art/terrains/t_terrane_grey_detail.png"), &pi, NULL));
    CHECK(pi.width == 32 && pi.height == 32 && !pi.has_srgb);
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK(count == 1 && blocks[0].material_texture_set &&
          strcmp(blocks[0].material_texture_set, "oldTerrainMaterialTextureSet") == 0);
    trn_terrain_blocks_free(blocks, count);
    char *items = read_text(path_in(level, "main/items.level.json"));
    CHECK_CONTAINS(items, "\"persistentId\":\"q\"");
    free(items);

    /* Again, asking to remove the old entries: nothing new moves, the Material stays. */
    mo.delete_old = true;
    CHECK_OK(trn_beamng_migrate_materials(level, &mo, &migrated, NULL));
    CHECK_EQ_INT(migrated, 0);
    char *left = read_text(old);
    CHECK(left && strstr(left, "shared_mat") && !strstr(left, "grass_v1") && !strstr(left, "rock"));
    free(left);

    trn_error err;
    CHECK_STATUS(trn_beamng_migrate_materials(root, &mo, &migrated, &err), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.message, "nothing to migrate: no art/terrains/materials.json");
}

static void test_texture_options(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_texture_options o = {100, 0, 0};
    trn_error err;
    const char *names[1] = {"grass"};
    CHECK_STATUS(trn_terrain_textures_write(dir, names, 1, &o, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "base texture size 100 must be a power of two");
    o.base_size = 64;
    o.macro_size = 16;
    o.detail_size = 8;
    uint32_t written = 0;
    CHECK_OK(trn_terrain_textures_write(dir, names, 1, &o, &written, NULL));
    CHECK_EQ_INT(written, 8);
    trn_png_info pi;
    CHECK_OK(trn_png_read_info(path_in(dir, "t_terrane_grass_b.png"), &pi, NULL));
    CHECK(pi.width == 64 && pi.has_srgb && pi.color_type == 2);
    CHECK_OK(trn_png_read_info(path_in(dir, "t_terrane_nm_macro.png"), &pi, NULL));
    CHECK(pi.width == 16 && !pi.has_srgb);
    trn_image img;
    CHECK_OK(trn_png_read(path_in(dir, "t_terrane_nm_detail.png"), NULL, &img, NULL));
    CHECK(img.width == 8 && img.channels == 3 && ((uint8_t *)img.data)[0] == 128 &&
          ((uint8_t *)img.data)[2] == 255);
    trn_image_dispose(&img);
    CHECK_OK(trn_png_read(path_in(dir, "t_terrane_grey_macro.png"), NULL, &img, NULL));
    CHECK(img.channels == 1 && img.bit_depth == 8 && ((uint8_t *)img.data)[5] == 128);
    trn_image_dispose(&img);
    /* Odd names become safe file names, distinct from a name that cleans up alike. */
    char a[128], b[128];
    trn_terrain_material ma, mb;
    CHECK_OK(trn_terrain_material_init_default(&ma, "dirt road/1", "/g", 0, NULL));
    CHECK_OK(trn_terrain_material_init_default(&mb, "dirt_road_1", "/g", 0, NULL));
    snprintf(a, sizeof a, "%s", ma.tex[0][0]);
    snprintf(b, sizeof b, "%s", mb.tex[0][0]);
    CHECK(strncmp(a, "/g/t_terrane_dirt_road_1_", 25) == 0 && strcmp(a, b) != 0);
    CHECK(strcmp(b, "/g/t_terrane_dirt_road_1_b.png") == 0);
    CHECK(strcmp(ma.groundmodel_name, "DIRT") == 0); /* the first word that names a look */
    trn_terrain_material_dispose(&ma);
    trn_terrain_material_dispose(&mb);
}

/* ------------------------------------------------------------------------------ import */

static trn_image gray8(uint32_t w, uint32_t h, uint8_t value)
{
    trn_image img;
    if (trn_image_init(&img, w, h, 1, 8, NULL)) abort();
    memset(img.data, value, (size_t)w * h);
    return img;
}

static void set8(trn_image *img, uint32_t row, uint32_t col, uint8_t v)
{
    ((uint8_t *)img->data)[(size_t)row * img->width + col] = v;
}

static void test_import_argmax(void)
{
    const uint32_t n = 128;
    trn_image hm;
    CHECK_OK(trn_image_init(&hm, n, n, 1, 16, NULL));
    for (size_t i = 0; i < (size_t)n * n; i++)
        ((uint16_t *)hm.data)[i] = (uint16_t)(i * 3);
    trn_image op[3] = {gray8(n, n, 0), gray8(n, n, 0), gray8(n, n, 0)};
    /* Image row 0 lands on terrain row n-1 (default orientation). */
    set8(&op[0], 0, 0, 200); /* clear winner: layer 0 */
    set8(&op[0], 0, 1, 100);
    set8(&op[1], 0, 1, 100); /* tie 0/1: the later wins */
    set8(&op[1], 0, 2, 90);
    set8(&op[2], 0, 2, 89); /* layer 1 beats a smaller later value */
    set8(&op[0], 0, 3, 7);
    set8(&op[1], 0, 3, 7);
    set8(&op[2], 0, 3, 7); /* three-way tie: last */
    /* all zero elsewhere: ties at 0, so the last layer */
    const trn_image *ops[3] = {&op[0], &op[1], &op[2]};
    trn_channel ch[3] = {TRN_CHANNEL_R, TRN_CHANNEL_G, TRN_CHANNEL_B};
    const char *names[3] = {"grass", "rock", "sand"};
    trn_image holes = gray8(n, n, 0);
    set8(&holes, 0, 4, 255);
    set8(&holes, 0, 5, 254); /* only 0xFF is a hole */
    trn_beamng_import_images in = {0};
    in.heightmap = &hm;
    in.opacity = ops;
    in.opacity_channels = ch;
    in.opacity_count = 3;
    in.material_names = names;
    in.material_count = 3;
    in.holes = &holes;
    trn_ter ter;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, n);
    CHECK_EQ_INT(ter.version, 9);
    CHECK_EQ_INT(ter.material_count, 3);
    size_t top = (size_t)(n - 1) * n;
    CHECK_EQ_INT(ter.layers[top + 0], 0);
    CHECK_EQ_INT(ter.layers[top + 1], 1);
    CHECK_EQ_INT(ter.layers[top + 2], 1);
    CHECK_EQ_INT(ter.layers[top + 3], 2);
    CHECK_EQ_INT(ter.layers[top + 4], 255);
    CHECK_EQ_INT(ter.layers[top + 5], 2);
    CHECK_EQ_INT(ter.layers[0], 2);
    /* Heights: image row 0 -> terrain row n-1. */
    CHECK_EQ_INT(ter.heights[top + 5], 15);
    CHECK_EQ_INT(ter.heights[0], (uint16_t)((size_t)(n - 1) * n * 3));
    CHECK(strcmp(ter.materials[2], "sand") == 0 && ter.material_lengths[2] == 4);
    trn_ter_dispose(&ter);

    /* flipYAxis copies rows as they are. */
    in.flip_y_axis = true;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[1], 1);
    CHECK_EQ_INT(ter.layers[4], 255);
    CHECK_EQ_INT(ter.heights[5], 15);
    CHECK_EQ_INT(ter.layers[top + 1], 2);
    trn_ter_dispose(&ter);
    in.flip_y_axis = false;

    /* Channels: an RGBA map reads the chosen channel; A on a grey map is an error. */
    trn_image rgba;
    CHECK_OK(trn_image_init(&rgba, n, n, 4, 8, NULL));
    uint8_t *px = rgba.data;
    px[0] = 10;  /* R */
    px[1] = 250; /* G */
    px[2] = 20;  /* B */
    px[3] = 30;  /* A */
    const trn_image *two[2] = {&rgba, &rgba};
    trn_channel gch[2] = {TRN_CHANNEL_G, TRN_CHANNEL_A};
    in.opacity = two;
    in.opacity_channels = gch;
    in.opacity_count = 2;
    in.material_count = 2;
    in.holes = NULL;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[top], 0); /* G 250 beats A 30 */
    trn_ter_dispose(&ter);
    gch[0] = TRN_CHANNEL_R;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[top], 1); /* A 30 beats R 10 */
    trn_ter_dispose(&ter);
    const trn_image *grey_alpha[2] = {&op[0], &op[1]};
    in.opacity = grey_alpha;
    trn_error err;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "opacity map 2 has no A channel (it has 1 channel); choose R, G, "
                                "B or A");

    /* 16-bit opacity compares at full precision against widened 8-bit maps. */
    trn_image op16;
    CHECK_OK(trn_image_init(&op16, n, n, 1, 16, NULL));
    ((uint16_t *)op16.data)[0] = 257 * 100 + 1; /* just above 8-bit 100 */
    trn_image op8 = gray8(n, n, 0);
    set8(&op8, 0, 0, 100);
    const trn_image *mixed[2] = {&op16, &op8};
    gch[0] = gch[1] = TRN_CHANNEL_R;
    in.opacity = mixed;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[top], 0);
    trn_ter_dispose(&ter);

    /* A layer map instead of opacity maps keeps any index, even past the list, so exported
     * maps of any .ter import back to it; a stray index is a warning naming its pixel. */
    trn_image lm = gray8(n, n, 1);
    set8(&lm, 0, 0, 7);
    set8(&lm, 0, 5, 9);
    in.opacity_count = 0;
    in.layer_map = &lm;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[top], 7);
    CHECK_EQ_INT(ter.layers[0], 1);
    CHECK_EQ_INT(ter.warning_count, 1);
    CHECK(ter.warning_count &&
          strstr(ter.warnings[0].message,
                 "layer map pixel (0, 0) is 7, but 2 materials are named (0 to 1)") &&
          strstr(ter.warnings[0].message, "2 pixels like it"));
    CHECK(ter.warning_count && ter.warnings[0].offset == -1);
    trn_ter_dispose(&ter);
    in.opacity_count = 2;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "either opacity maps or a layer map");
    in.layer_map = NULL;

    /* No opacity maps: every sample is layer 0. */
    in.opacity_count = 0;
    in.material_count = 1;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.layers[top + 3], 0);
    CHECK_EQ_INT(ter.material_count, 1);
    trn_ter_dispose(&ter);

    /* 8-bit heightmaps widen v/255*65535. */
    trn_image hm8 = gray8(n, n, 1);
    set8(&hm8, 0, 0, 255);
    in.heightmap = &hm8;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.heights[top], 65535);
    CHECK_EQ_INT(ter.heights[0], 257);
    trn_ter_dispose(&ter);

    trn_image_dispose(&hm8);
    trn_image_dispose(&lm);
    trn_image_dispose(&op16);
    trn_image_dispose(&op8);
    trn_image_dispose(&rgba);
    trn_image_dispose(&holes);
    for (int i = 0; i < 3; i++)
        trn_image_dispose(&op[i]);
    trn_image_dispose(&hm);
}

static void test_import_errors(void)
{
    trn_error err;
    trn_ter ter;
    const char *names[3] = {"a", "b", "c"};
    trn_beamng_import_images in = {0};
    in.material_names = names;
    in.material_count = 1;
    /* Size checks come before any pixel is read, so a header-only image is enough. */
    trn_image fake = {1000, 1000, 1, 16, NULL, false};
    in.heightmap = &fake;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "heightmap is 1000x1000: BeamNG needs a square power of two "
                                "between 128 and 8192; resize it to 1024x1024");
    fake.width = 256;
    fake.height = 128;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "256x128");
    CHECK_CONTAINS(err.message, "crop or resize it to 256x256");
    fake.width = fake.height = 64;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "resize it to 128x128");
    fake.width = fake.height = 16384;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "resize it to 8192x8192");

    trn_image hm = gray8(128, 128, 9);
    trn_image small = gray8(64, 64, 0);
    in.heightmap = &hm;
    const trn_image *ops[2] = {&hm, &small};
    trn_channel ch[2] = {TRN_CHANNEL_R, TRN_CHANNEL_R};
    in.opacity = ops;
    in.opacity_channels = ch;
    in.opacity_count = 2;
    in.material_count = 3;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(err.message, "2 opacity maps for 3 material names: give one opacity map per "
                                "material, in the same order");
    in.material_count = 2;
    const char *paths[2] = {"a.png", "b.png"};
    in.opacity_paths = paths;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(err.message, "opacity map 2 is 64x64 but the heightmap is 128x128");
    CHECK(strcmp(err.file, "b.png") == 0);
    in.opacity_count = 0;
    in.material_count = 0;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "at least one material");
    in.material_count = 300;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_LIMIT);
    in.material_count = 1;
    in.holes = &small;
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &err), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(err.message, "hole map is 64x64");
    in.holes = NULL;
    CHECK_STATUS(trn_beamng_build_ter(NULL, &ter, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);

    uint32_t r = 0;
    CHECK_OK(trn_beamng_round_resolution(1000, &r, NULL));
    CHECK_EQ_INT(r, 1024);
    CHECK_OK(trn_beamng_round_resolution(50, &r, NULL));
    CHECK_EQ_INT(r, 128);
    CHECK_OK(trn_beamng_round_resolution(8192, &r, NULL));
    CHECK_EQ_INT(r, 8192);
    CHECK_OK(trn_beamng_round_resolution(4097, &r, NULL));
    CHECK_EQ_INT(r, 8192);
    CHECK_STATUS(trn_beamng_round_resolution(8193, &r, &err), TRN_ERR_LIMIT);
    CHECK_CONTAINS(err.message, "resolution 8193 is above 8192");
    CHECK_STATUS(trn_beamng_round_resolution(0, &r, &err), TRN_ERR_INVALID_ARGUMENT);

    /* From files: missing file, wrong format. */
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_beamng_import_options io = {0};
    io.heightmap_path = path_in(dir, "nope.png");
    io.material_names = names;
    io.material_count = 1;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &err), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.message, "heightmap not found");
    char *txt = path_in(dir, "height.txt");
    CHECK(write_text(txt, "not an image"));
    io.heightmap_path = txt;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &err), TRN_ERR_FORMAT);
    CHECK_CONTAINS(err.message, "heightmap is not a PNG");
    CHECK_CONTAINS(err.message, "found 6e 6f 74 20 61 6e 20 69");
    CHECK_CONTAINS(err.message, "not named as a headerless R16 (.r16, .raw) or R32 (.r32)");
    CHECK_EQ_INT(err.offset, 0);
    char *hm_png = path_in(dir, "hm.png");
    CHECK(png_grey(hm_png, 128, 128, 8, hm.data, false));
    io.heightmap_path = hm_png;
    trn_beamng_opacity_source src[1] = {{txt, TRN_CHANNEL_R}};
    io.opacity = src;
    io.opacity_count = 1;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &err), TRN_ERR_FORMAT);
    CHECK_CONTAINS(err.message, "opacity map 1 is not a PNG (expected the signature 89 50 4e 47");
    CHECK_EQ_INT(err.offset, 0);
    CHECK(strcmp(err.file, txt) == 0);
    trn_image_dispose(&hm);
    trn_image_dispose(&small);
}

/* Export then import gives the same .ter, byte for byte. */
static void roundtrip(const trn_ter *ter, uint8_t version, bool flip, bool use_layer_map,
                      bool use_r16, const char *label)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_beamng_export_options eo;
    trn_beamng_export_options_default(&eo);
    eo.flip_y_axis = flip;
    eo.compression_level = 1;
    trn_beamng_export_result er;
    CHECK_OK(trn_beamng_export(ter, dir, "t", &eo, &er, NULL, NULL, NULL));
    CHECK_EQ_INT(er.path_count, 4 + ter->material_count);
    CHECK_EQ_INT(er.opacity_count, ter->material_count);
    trn_beamng_opacity_source *src = calloc(ter->material_count + 1, sizeof *src);
    for (uint32_t i = 0; i < ter->material_count; i++) {
        src[i].path = er.paths[er.opacity_first + i];
        src[i].channel = TRN_CHANNEL_R;
    }
    trn_beamng_import_options io = {0};
    io.heightmap_path = use_r16 ? er.paths[er.path_count - 1] : er.paths[0];
    io.material_names = (const char *const *)ter->materials;
    io.material_count = ter->material_count;
    if (use_layer_map) {
        io.layer_map_path = er.paths[1];
    } else {
        io.opacity = src;
        io.opacity_count = ter->material_count;
        io.holes_path = er.paths[2];
    }
    io.flip_y_axis = flip;
    trn_ter back;
    trn_error err;
    trn_status st = trn_beamng_import(&io, &back, NULL, NULL, NULL, NULL, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "%s: %s\n", label, err.message);
    if (!st) {
        bool same = ter_bytes_equal(ter, &back, version);
        CHECK(same);
        if (!same) fprintf(stderr, "round trip differs: %s\n", label);
        trn_ter_dispose(&back);
    }
    /* The 16-bit heightmap holds the stored values; the layer map the raw indices. */
    trn_image img;
    CHECK_OK(trn_png_read(er.paths[0], NULL, &img, NULL));
    CHECK(img.bit_depth == 16 && img.channels == 1);
    uint32_t row0 = flip ? 0 : ter->size - 1;
    CHECK(img.data && ((uint16_t *)img.data)[3] == ter->heights[(size_t)row0 * ter->size + 3]);
    trn_image_dispose(&img);
    free(src);
    trn_beamng_export_result_dispose(&er);
}

static void test_export_import_roundtrip(void)
{
    trn_ter ter;
    make_ter(&ter, 128, 3);
    roundtrip(&ter, 9, false, false, false, "synthetic");
    roundtrip(&ter, 9, true, false, false, "synthetic flipped");
    roundtrip(&ter, 9, false, false, true, "synthetic via r16");
    /* Indices past the material list only survive through the layer map. */
    ter.layers[77] = 9;
    roundtrip(&ter, 9, false, true, false, "synthetic layer map");
    trn_ter_dispose(&ter);

    /* Hole and opacity images hold 255/0 exactly where expected. */
    make_ter(&ter, 128, 2);
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_beamng_export_result er;
    CHECK_OK(trn_beamng_export(&ter, dir, "x", NULL, &er, NULL, NULL, NULL));
    trn_image holes, op1;
    CHECK_OK(trn_png_read(path_in(dir, "x_holes.png"), NULL, &holes, NULL));
    CHECK_OK(trn_png_read(path_in(dir, "x_opacity_1_rock.png"), NULL, &op1, NULL));
    bool holes_ok = true, op_ok = true;
    for (uint32_t r = 0; r < 128; r++)
        for (uint32_t c = 0; c < 128; c++) {
            uint8_t layer = ter.layers[(size_t)(127 - r) * 128 + c];
            uint8_t h = ((uint8_t *)holes.data)[r * 128 + c];
            uint8_t o = ((uint8_t *)op1.data)[r * 128 + c];
            holes_ok = holes_ok && h == (layer == 255 ? 255 : 0);
            op_ok = op_ok && o == (layer == 1 ? 255 : 0);
        }
    CHECK(holes_ok);
    CHECK(op_ok);
    trn_image_dispose(&holes);
    trn_image_dispose(&op1);
    trn_beamng_export_result_dispose(&er);
    trn_error err;
    CHECK_STATUS(trn_beamng_export(&ter, dir, "a/b", NULL, &er, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_ter_dispose(&ter);

    /* Real engine-written files. */
    static const char *const real[] = {"t3d_v7_desert_world_0_256.ter", "t3d_v7_EmptyRoom_512.ter",
                                       "t3d_v7_Outpost_0_1024.ter"};
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        char buf[1024];
        const char *p = trn_test_real_path(real[i], buf, sizeof buf);
        if (!p) continue;
        trn_ter rt;
        CHECK_OK(trn_ter_read(p, NULL, &rt, NULL, NULL, NULL));
        uint64_t counts[256];
        trn_ter_layer_histogram(&rt, counts);
        bool out_of_range = false;
        for (uint32_t k = rt.material_count; k < 255; k++)
            out_of_range = out_of_range || counts[k];
        roundtrip(&rt, rt.version, false, out_of_range, false, real[i]);
        /* The file itself comes back byte for byte at its own version. */
        size_t n;
        uint8_t *orig = trn_test_read_file(p, &n);
        uint8_t *mine = NULL;
        size_t mn = 0;
        CHECK_OK(trn_ter_serialize(&rt, rt.version, &mine, &mn, NULL));
        CHECK(orig && mine && n == mn && memcmp(orig, mine, n) == 0);
        free(orig);
        free(mine);
        trn_ter_dispose(&rt);
    }
}

/* ------------------------------------------------------------------------------ create */

static int cancel_at_once(double done, const char *stage, void *user)
{
    (void)done;
    (void)stage;
    (void)user;
    return TRN_CANCEL;
}

static void make_level(char *root, size_t root_size, char *level, size_t level_size)
{
    CHECK(trn_test_tmpdir(root, root_size) != NULL);
    trn_beamng_create_options co = {0};
    co.root = root;
    co.level_name = "demo";
    co.resolution = 128;
    co.textures.base_size = co.textures.macro_size = co.textures.detail_size = 32;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_create(&co, &res, NULL, NULL, NULL));
    snprintf(level, level_size, "%s/levels/demo", root);
}

static void test_create(void)
{
    char root[512];
    CHECK(trn_test_tmpdir(root, sizeof root) != NULL);
    trn_beamng_create_options co = {0};
    co.root = root;
    co.level_name = "demo";
    co.resolution = 200;
    co.textures.base_size = co.textures.macro_size = co.textures.detail_size = 32;
    trn_beamng_level_result res;
    CHECK_OK(trn_beamng_create(&co, &res, NULL, NULL, NULL));
    char level[700];
    snprintf(level, sizeof level, "%s/levels/demo", root);
    CHECK(strcmp(res.ter_path, path_in(level, "theTerrain.ter")) == 0);
    CHECK(strcmp(res.terrain_file, "/levels/demo/theTerrain.ter") == 0);
    CHECK(strcmp(res.texture_set, "demoTerrainMaterialTextureSet") == 0);
    CHECK_EQ_INT(res.materials_added, 1);
    CHECK_EQ_INT(res.textures_written, 8);
    CHECK(trn_test_exists(path_in(level, "theTerrain.terrain.json")));
    CHECK(trn_test_exists(path_in(level, "theTerrain.terrainheightmap.png")));
    CHECK(trn_test_exists(path_in(level, "main/items.level.json")));
    CHECK(trn_test_exists(path_in(level, "art/terrains/main.materials.json")));
    CHECK(trn_test_exists(path_in(level, "art/terrains/t_terrane_grass_b.png")));
    trn_ter ter;
    CHECK_OK(trn_ter_read(res.ter_path, NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 256); /* rounded up to a power of two */
    CHECK_EQ_INT(ter.version, 9);
    CHECK(ter.material_count == 1 && strcmp(ter.materials[0], "grass") == 0);
    bool flat = true;
    for (size_t i = 0; i < 256u * 256u; i++)
        flat = flat && ter.heights[i] == TRN_BEAMNG_CREATE_DEFAULT_STORED && ter.layers[i] == 0;
    CHECK(flat);
    trn_ter_dispose(&ter);
    trn_image hm;
    CHECK_OK(trn_png_read(res.heightmap_png_path, NULL, &hm, NULL));
    CHECK(hm.width == 256 && hm.bit_depth == 16 && ((uint16_t *)hm.data)[0] == 16384);
    trn_image_dispose(&hm);
    trn_terrain_json tj;
    CHECK_OK(trn_terrain_json_read(res.terrain_json_path, &tj, NULL));
    CHECK(tj.size == 256 && tj.height_map_size == 65536 &&
          strcmp(tj.heightmap_image, "/levels/demo/theTerrain.terrainheightmap.png") == 0);
    trn_terrain_json_dispose(&tj);

    /* Another terrain in the same level takes the next free name, even against case. */
    CHECK(rename(res.ter_path, path_in(level, "THETERRAIN.ter")) == 0);
    co.initial_height = 100.0;
    co.max_height = 400.0;
    co.square_size = 2.0;
    co.material = "rock";
    CHECK_OK(trn_beamng_create(&co, &res, NULL, NULL, NULL));
    CHECK(strcmp(res.terrain_name, "theTerrain_1") == 0);
    CHECK(strcmp(res.ter_path, path_in(level, "theTerrain_1.ter")) == 0);
    CHECK_EQ_INT(res.materials_added, 1);
    CHECK_OK(trn_ter_read(res.ter_path, NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.heights[0], 16384); /* 100 m of 400 m */
    trn_ter_dispose(&ter);
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 2);
    if (count == 2) {
        CHECK(strcmp(blocks[1].name, "theTerrain_1") == 0);
        CHECK(blocks[1].square_size == 2.0 && blocks[1].max_height == 400.0);
        CHECK(blocks[1].position[0] == -256.0 && blocks[1].position[1] == -256.0);
        CHECK(strcmp(blocks[1].material_texture_set, "demoTerrainMaterialTextureSet") == 0);
    }
    trn_terrain_blocks_free(blocks, count);
    trn_material_file mf;
    CHECK_OK(trn_material_file_read(path_in(level, "art/terrains/main.materials.json"), &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 2);
    CHECK_EQ_INT(mf.texture_set_count, 1);
    trn_material_file_dispose(&mf);

    trn_error err;
    co.resolution = 9000;
    CHECK_STATUS(trn_beamng_create(&co, &res, NULL, NULL, &err), TRN_ERR_LIMIT);
    co.resolution = 128;
    co.initial_height = 500.0;
    CHECK_STATUS(trn_beamng_create(&co, &res, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "initial height 500 m is above");
    co.initial_height = 0;
    co.level_name = "../escape";
    CHECK_STATUS(trn_beamng_create(&co, &res, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    co.level_name = "";
    CHECK_STATUS(trn_beamng_create(&co, &res, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);

    /* A cancel during the .ter write leaves the level untouched. */
    co.level_name = "cancelled";
    CHECK_STATUS(trn_beamng_create(&co, &res, cancel_at_once, NULL, &err), TRN_ERR_CANCELLED);
    char cancelled_dir[800];
    snprintf(cancelled_dir, sizeof cancelled_dir, "%s/levels/cancelled", root);
    CHECK(!trn_test_exists(path_in(cancelled_dir, "theTerrain.ter")));
    CHECK(!trn_test_exists(path_in(cancelled_dir, "main/items.level.json")));
}

/* Writing a terrain into a level whose items.level.json has a broken line that may be the
 * block is refused before anything is written. */
static void test_level_write_refuses_broken_block_line(void)
{
    char root[512];
    CHECK(trn_test_tmpdir(root, sizeof root) != NULL);
    char level[700];
    snprintf(level, sizeof level, "%s/levels/cut", root);
    CHECK(mkdir(path_in(root, "levels"), 0777) == 0);
    CHECK(mkdir(level, 0777) == 0);
    CHECK(mkdir(path_in(level, "main"), 0777) == 0);
    const char *items = "{\"class\":\"SimGroup\"}\n{\"class\":\"TerrainBlock\",\"name\":"
                        "\"theTerrain\",\"squareSize\":\n";
    CHECK(write_text(path_in(level, "main/items.level.json"), items));
    trn_ter ter;
    make_ter(&ter, 128, 2);
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    trn_beamng_level_result res;
    trn_error err;
    CHECK_STATUS(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err), TRN_ERR_JSON);
    CHECK_EQ_INT(err.line, 2);
    CHECK(strcmp(err.file, path_in(level, "main/items.level.json")) == 0);
    CHECK_CONTAINS(err.message, "mentions TerrainBlock and \"theTerrain\"");
    CHECK(!trn_test_exists(path_in(level, "theTerrain.ter")));
    CHECK(!trn_test_exists(path_in(level, "art")));
    char *back = read_text(path_in(level, "main/items.level.json"));
    CHECK(back && strcmp(back, items) == 0);
    free(back);
    /* Another name is fine: the broken line is kept as it is. */
    lo.terrain_name = "second";
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    CHECK_OK(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err));
    /* The new block goes where the editor keeps it; main/items.level.json only gains the
     * MissionGroup it lacked. */
    back = read_text(path_in(level, "main/items.level.json"));
    CHECK(back && strncmp(back, items, strlen(items)) == 0 && !strstr(back, "\"second\""));
    CHECK(back && strcmp(back + strlen(items),
                         "{\"name\":\"MissionGroup\",\"class\":\"SimGroup\",\"persistentId\":"
                         "\"4741c344-d240-51c4-b259-2fa439081148\",\"enabled\":\"1\"}\n") == 0);
    free(back);
    CHECK(strcmp(res.items_path, path_in(level, "main/MissionGroup/items.level.json")) == 0);
    back = read_text(res.items_path);
    CHECK(back && strncmp(back,
                          "{\"name\":\"second\",\"class\":\"TerrainBlock\",\"persistentId\":"
                          "\"27aea129-4477-5a84-a3ca-f44f5357d56c\",\"__parent\":\"MissionGroup\","
                          "\"position\":[-64,-64,0],\"terrainFile\":\"/levels/cut/second.ter\"",
                          164) == 0);
    free(back);

    /* A broken line deeper in the tree is looked at too. */
    const char *deep = "{\"class\":\"TerrainBlock\",\"name\":\"third\",\n";
    char *mg = path_in(level, "main/MissionGroup/items.level.json");
    char *mg_text = read_text(mg);
    char joined[4096];
    snprintf(joined, sizeof joined, "%s%s", mg_text ? mg_text : "", deep);
    CHECK(write_text(mg, joined));
    lo.terrain_name = "third";
    CHECK_STATUS(trn_beamng_level_write_terrain(&ter, &lo, &res, NULL, NULL, &err), TRN_ERR_JSON);
    CHECK(strcmp(err.file, mg) == 0 && err.line == 2);
    CHECK(!trn_test_exists(path_in(level, "third.ter")));
    free(mg_text);
    trn_ter_dispose(&ter);
}

static void test_import_into_level(void)
{
    char root[512];
    CHECK(trn_test_tmpdir(root, sizeof root) != NULL);
    const uint32_t n = 128;
    uint16_t *h = malloc((size_t)n * n * 2);
    uint8_t *a = malloc((size_t)n * n), *b = malloc((size_t)n * n);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        h[i] = (uint16_t)(i * 5);
        a[i] = (uint8_t)(i % 3 == 0 ? 255 : 0);
        b[i] = (uint8_t)(i % 3 == 0 ? 0 : 200);
    }
    CHECK(png_grey(path_in(root, "h.png"), n, n, 16, h, false));
    CHECK(png_grey(path_in(root, "a.png"), n, n, 8, a, false));
    CHECK(png_grey(path_in(root, "b.png"), n, n, 8, b, false));
    char level[700];
    snprintf(level, sizeof level, "%s/levels/island", root);
    const char *names[2] = {"grass", "rock"};
    trn_beamng_opacity_source src[2] = {{path_in(root, "a.png"), TRN_CHANNEL_R},
                                        {path_in(root, "b.png"), TRN_CHANNEL_R}};
    trn_beamng_import_options io = {0};
    io.heightmap_path = path_in(root, "h.png");
    io.opacity = src;
    io.opacity_count = 2;
    io.material_names = names;
    io.material_count = 2;
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.max_height = 300;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 32;
    trn_beamng_level_result res;
    trn_ter ter;
    CHECK_OK(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, NULL));
    CHECK(strcmp(res.ter_path, path_in(level, "theTerrain.ter")) == 0);
    CHECK_EQ_INT(res.materials_added, 2);
    CHECK_EQ_INT(ter.layers[(size_t)(n - 1) * n + 0], 0);
    CHECK_EQ_INT(ter.layers[(size_t)(n - 1) * n + 1], 1);
    trn_ter_dispose(&ter);
    trn_findings f = {0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, NULL));
    CHECK_EQ_INT(f.count, 0);
    dump_findings(&f);
    trn_findings_dispose(&f);
    /* The heightmap copy holds the imported pixels exactly. */
    size_t n1, n2;
    trn_image orig, copy;
    CHECK_OK(trn_png_read(path_in(root, "h.png"), NULL, &orig, NULL));
    CHECK_OK(trn_png_read(res.heightmap_png_path, NULL, &copy, NULL));
    n1 = (size_t)orig.width * orig.height * 2;
    n2 = (size_t)copy.width * copy.height * 2;
    CHECK(n1 == n2 && memcmp(orig.data, copy.data, n1) == 0);
    trn_image_dispose(&orig);
    trn_image_dispose(&copy);

    /* Importing again replaces the terrain and adds nothing twice. */
    CHECK_OK(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, NULL));
    CHECK_EQ_INT(res.materials_added, 0);
    trn_ter_dispose(&ter);
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 1);
    CHECK(count == 1 && blocks[0].max_height == 300);
    trn_terrain_blocks_free(blocks, count);

    /* A broken file elsewhere in the level does not stop an import; a broken
     * main.materials.json does, and is left as it was. */
    CHECK(mkdir(path_in(level, "art/shapes"), 0777) == 0);
    CHECK(write_text(path_in(level, "art/shapes/main.materials.json"), "{ broken"));
    io.material_count = 1;
    io.opacity_count = 1;
    CHECK_OK(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, NULL));
    trn_ter_dispose(&ter);
    char *mats = path_in(level, "art/terrains/main.materials.json");
    CHECK(write_text(mats, "{\"x\": 1,}"));
    const char *fresh[1] = {"gravel"};
    io.material_names = fresh;
    trn_error err;
    CHECK_STATUS(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, &err), TRN_ERR_JSON);
    CHECK_EQ_INT(err.line, 1);
    CHECK_EQ_INT(err.offset, 8); /* the } after the trailing comma */
    char *left = read_text(mats);
    CHECK(left && strcmp(left, "{\"x\": 1,}") == 0);
    free(left);
    /* ...and nothing else was touched: the .ter still lists grass. */
    CHECK_OK(trn_ter_read(res.ter_path, NULL, &ter, NULL, NULL, NULL));
    CHECK(ter.material_count == 1 && strcmp(ter.materials[0], "grass") == 0);
    trn_ter_dispose(&ter);
    free(h);
    free(a);
    free(b);
}

/* ------------------------------------------------------------------------------ validate */

/* Rewrite the TerrainBlock of the demo level with one field changed. */
static void set_block(const char *level, const char *terrain_file, const char *texture_set)
{
    trn_terrain_block *blocks;
    size_t count;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    if (count < 1) return;
    if (terrain_file) {
        free(blocks[0].terrain_file);
        blocks[0].terrain_file = strdup(terrain_file);
    }
    if (texture_set) {
        free(blocks[0].material_texture_set);
        blocks[0].material_texture_set = strdup(texture_set);
    }
    CHECK_OK(trn_items_put_terrain_block(blocks[0].source_file, &blocks[0], NULL));
    trn_terrain_blocks_free(blocks, count);
}

static trn_findings validate(const char *level)
{
    trn_findings f = {0};
    CHECK_OK(trn_beamng_validate(level, NULL, &f, NULL, NULL, NULL));
    return f;
}

/* Insert a gAMA chunk after IHDR (our writer never writes one). */
static void add_gama(const char *path, uint32_t gama)
{
    size_t n;
    uint8_t *d = trn_test_read_file(path, &n);
    if (!d || n < 33) return;
    uint8_t chunk[16] = {0,
                         0,
                         0,
                         4,
                         'g',
                         'A',
                         'M',
                         'A',
                         (uint8_t)(gama >> 24),
                         (uint8_t)(gama >> 16),
                         (uint8_t)(gama >> 8),
                         (uint8_t)gama};
    uLong crc = crc32(0, chunk + 4, 8);
    chunk[12] = (uint8_t)(crc >> 24);
    chunk[13] = (uint8_t)(crc >> 16);
    chunk[14] = (uint8_t)(crc >> 8);
    chunk[15] = (uint8_t)crc;
    uint8_t *out = malloc(n + 16);
    memcpy(out, d, 33);
    memcpy(out + 33, chunk, 16);
    memcpy(out + 49, d + 33, n - 33);
    CHECK(trn_test_write_file(path, out, n + 16));
    free(out);
    free(d);
}

static void test_validate(void)
{
    char root[512], level[700];
    trn_findings f;
    trn_error err;

    /* A freshly created level is clean. */
    make_level(root, sizeof root, level, sizeof level);
    f = validate(level);
    CHECK_EQ_INT(f.count, 0);
    dump_findings(&f);
    trn_findings_dispose(&f);

    /* terrainFile pointing nowhere. */
    set_block(level, "/levels/demo/nope.ter", NULL);
    f = validate(level);
    CHECK_EQ_INT(count_check(&f, "terrain-file-missing"), 1);
    const trn_finding *fi = trn_findings_find(&f, "terrain-file-missing");
    CHECK(fi && fi->severity == TRN_SEVERITY_ERROR && fi->line == 1 && fi->fix[0] &&
          strstr(fi->message, "nope.ter"));
    CHECK(trn_findings_count(&f, TRN_SEVERITY_ERROR) >= 1);
    trn_findings_dispose(&f);

    /* Case mismatch: found, and named. */
    set_block(level, "/levels/Demo/THETERRAIN.ter", NULL);
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-file-case");
    CHECK(fi && strstr(fi->message, "theTerrain.ter") &&
          strstr(fi->fix, "\"/levels/demo/theTerrain.ter\""));
    CHECK_EQ_INT(count_check(&f, "terrain-file-missing"), 0);
    trn_findings_dispose(&f);
    set_block(level, "/levels/demo/theTerrain.ter", NULL);

    /* materialTextureSet that does not exist. */
    set_block(level, NULL, "nosuchSet");
    f = validate(level);
    fi = trn_findings_find(&f, "texture-set-missing");
    CHECK(fi && strstr(fi->message, "nosuchSet") && strstr(fi->fix, "nosuchSet"));
    trn_findings_dispose(&f);
    set_block(level, NULL, "demoTerrainMaterialTextureSet");

    /* Version too new. */
    char *ter_path = path_in(level, "theTerrain.ter");
    size_t n;
    uint8_t *orig = trn_test_read_file(ter_path, &n);
    uint8_t *bytes = malloc(n);
    memcpy(bytes, orig, n);
    bytes[0] = 10;
    CHECK(trn_test_write_file(ter_path, bytes, n));
    f = validate(level);
    fi = trn_findings_find(&f, "ter-version-too-new");
    CHECK(fi && strstr(fi->message, "version 10 is newer than 9") && fi->offset == 0);
    trn_findings_dispose(&f);

    /* A Git LFS pointer in place of the .ter (a clone without `git lfs pull`, as public level
     * repositories hold them): said so, not "version 118". */
    const char lfs[] = "version https://git-lfs.github.com/spec/v1\n"
                       "oid sha256:358fc8213f61038088e553fbeaf38d326ee026de7cd9b2cf63f342a9d703531a\n"
                       "size 117440538\n";
    CHECK(trn_test_write_file(ter_path, lfs, strlen(lfs)));
    f = validate(level);
    fi = trn_findings_find(&f, "ter-lfs-pointer");
    CHECK(fi && strstr(fi->message, "Git LFS pointer") && strstr(fi->fix, "git lfs pull"));
    CHECK_EQ_INT(count_check(&f, "ter-version-too-new") + count_check(&f, "ter-corrupt"), 0);
    trn_findings_dispose(&f);

    /* Four zero maps after the layer map of a version 8 file: how the World Editor saved
     * version 8 terrains (a public level of 2023), a warning; in version 9, which the editor
     * writes without them, an error. */
    {
        CHECK(n > 5 && orig[0] == 9);
        const size_t samples = (n - 5 - 4) / 3; /* the names are short: a good enough bound */
        uint32_t side = 0;
        memcpy(&side, orig + 1, 4);
        const size_t maps = (size_t)side * side;
        CHECK(maps <= samples);
        uint8_t *v8 = calloc(n + 4 * maps, 1);
        memcpy(v8, orig, 5 + 3 * maps);
        memcpy(v8 + 5 + 7 * maps, orig + 5 + 3 * maps, n - 5 - 3 * maps);
        for (int version = 8; version <= 9; version++) {
            v8[0] = (uint8_t)version;
            CHECK(trn_test_write_file(ter_path, v8, n + 4 * maps));
            f = validate(level);
            fi = trn_findings_find(&f, "ter-extra-maps");
            CHECK(fi && fi->severity == (version == 8 ? TRN_SEVERITY_WARNING : TRN_SEVERITY_ERROR));
            CHECK(fi && strstr(fi->message, version == 8 ? "as the World Editor wrote version 8"
                                                          : "so it misreads them"));
            trn_findings_dispose(&f);
        }
        free(v8);
    }

    /* Truncated data: the reader's message and offset. */
    bytes[0] = 9;
    CHECK(trn_test_write_file(ter_path, bytes, 1000));
    f = validate(level);
    fi = trn_findings_find(&f, "ter-corrupt");
    CHECK(fi && fi->offset >= 0 && fi->fix[0]);
    CHECK(fi && strstr(fi->message, "TRN_ERR_TRUNCATED"));
    trn_findings_dispose(&f);

    /* Layer index past the list, and an unresolved material. */
    trn_ter ter;
    CHECK_OK(trn_ter_parse(orig, n, ter_path, NULL, &ter, NULL));
    ter.layers[10] = 5;
    ter.layers[11] = 3;
    free(ter.materials[0]);
    ter.materials[0] = strdup("nosuchmaterial");
    ter.material_lengths[0] = 14;
    CHECK_OK(trn_ter_write(ter_path, &ter, 9, NULL, NULL, NULL));
    f = validate(level);
    fi = trn_findings_find(&f, "layer-index-out-of-range");
    CHECK(fi && strstr(fi->message, "2 samples use layer indices 3 to 5") &&
          fi->severity == TRN_SEVERITY_ERROR);
    /* The first one's byte: sample 10 of the layer map. */
    CHECK(fi && fi->offset == 5 + 2 * (int64_t)ter.size * ter.size + 10);
    CHECK(fi && strstr(fi->message, "first at x 10, y 0"));
    CHECK(trn_findings_find(&f, "ter-warning") == NULL);
    fi = trn_findings_find(&f, "material-unresolved");
    CHECK(fi && strstr(fi->message, "\"nosuchmaterial\"") && strstr(fi->fix, "internalName"));
    /* ...and the .terrain.json now disagrees with the .ter's material name. */
    fi = trn_findings_find(&f, "terrain-json-mismatch");
    CHECK(fi && strstr(fi->message, "materials[0] is \"grass\""));
    /* grass is no longer used, so its texture problems would only be warnings. */
    trn_findings_dispose(&f);
    trn_ter_dispose(&ter);
    CHECK(trn_test_write_file(ter_path, orig, n));

    /* .terrain.json disagreeing on size. */
    char *json_path = path_in(level, "theTerrain.terrain.json");
    char *json = read_text(json_path);
    char *p = json ? strstr(json, "\"size\": 128") : NULL;
    CHECK(p != NULL);
    if (p) p[9] = '3'; /* 138 */
    CHECK(json && write_text(json_path, json));
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-json-mismatch");
    CHECK(fi && strstr(fi->message, "size is 138") && fi->severity == TRN_SEVERITY_WARNING);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    trn_findings_dispose(&f);
    if (p) p[9] = '2';
    CHECK(json && write_text(json_path, json));
    free(json);

    /* Textures: missing, wrong size, not a power of two, wrong colour space. */
    char *art = path_in(level, "art/terrains");
    char tex[1024];
    snprintf(tex, sizeof tex, "%s/t_terrane_grey_detail.png", art);
    CHECK(unlink(tex) == 0);
    f = validate(level);
    fi = trn_findings_find(&f, "texture-missing");
    CHECK(fi && strstr(fi->file, "t_terrane_grey_detail.png") &&
          fi->severity == TRN_SEVERITY_ERROR);
    /* Reported once though six slots share it. */
    CHECK_EQ_INT(count_check(&f, "texture-missing"), 1);
    trn_findings_dispose(&f);
    CHECK(png_flat(tex, 64, 64, 1, 128, false));
    f = validate(level);
    fi = trn_findings_find(&f, "texture-size-mismatch");
    CHECK(fi && strstr(fi->message, "is 64x64") && strstr(fi->message, "detailTexSize [32, 32]"));
    CHECK_EQ_INT(count_check(&f, "texture-size-not-pow2"), 0);
    trn_findings_dispose(&f);
    CHECK(png_flat(tex, 30, 32, 1, 128, false));
    f = validate(level);
    CHECK_EQ_INT(count_check(&f, "texture-size-not-pow2"), 1);
    CHECK_EQ_INT(count_check(&f, "texture-size-mismatch"), 1);
    trn_findings_dispose(&f);
    CHECK(png_flat(tex, 32, 32, 1, 128, false));

    snprintf(tex, sizeof tex, "%s/t_terrane_nm_base.png", art);
    CHECK(png_flat(tex, 32, 32, 3, 128, true)); /* a normal map tagged sRGB */
    f = validate(level);
    fi = trn_findings_find(&f, "texture-colorspace");
    CHECK(fi && strstr(fi->message, "tagged sRGB") && strstr(fi->file, "t_terrane_nm_base.png"));
    trn_findings_dispose(&f);
    CHECK(png_flat(tex, 32, 32, 3, 128, false));
    snprintf(tex, sizeof tex, "%s/t_terrane_grass_b.png", art);
    CHECK(png_flat(tex, 32, 32, 3, 90, false));
    add_gama(tex, 100000); /* base colour tagged linear */
    f = validate(level);
    fi = trn_findings_find(&f, "texture-colorspace");
    CHECK(fi && strstr(fi->message, "tagged linear") && strstr(fi->file, "t_terrane_grass_b.png"));
    CHECK_EQ_INT(f.count, 1);
    trn_findings_dispose(&f);
    CHECK(png_flat(tex, 32, 32, 3, 90, true));

    /* An empty slot and a material nobody uses (its problems are warnings). */
    char *mats = path_in(level, "art/terrains/main.materials.json");
    char *mtext = read_text(mats);
    char *slot = mtext ? strstr(mtext, "\"heightMacroTex\": ") : NULL;
    CHECK(slot != NULL);
    if (slot) {
        char *q = strchr(slot + 18, '"');
        char *q2 = q ? strchr(q + 1, '"') : NULL;
        if (q && q2) memmove(q + 1, q2, strlen(q2) + 1); /* "" = empty slot */
    }
    CHECK(mtext && write_text(mats, mtext));
    free(mtext);
    f = validate(level);
    fi = trn_findings_find(&f, "texture-slot-empty");
    CHECK(fi && strstr(fi->message, "heightMacroTex") && fi->severity == TRN_SEVERITY_ERROR);
    trn_findings_dispose(&f);

    /* A level that is not a folder is an error, not a finding. */
    CHECK_STATUS(trn_beamng_validate(path_in(root, "nolevel"), NULL, &f, NULL, NULL, &err),
                 TRN_ERR_NOT_FOUND);
    free(orig);
    free(bytes);
}

/* The fix the terrain-json findings name: rewrite .terrain.json from the .ter, nothing else. */
static void test_fix_terrain_json(void)
{
    char root[512], level[700];
    make_level(root, sizeof root, level, sizeof level);
    char *ter_path = path_in(level, "theTerrain.ter");
    char *json_path = path_in(level, "theTerrain.terrain.json");
    size_t ter_size = 0;
    uint8_t *ter_before = trn_test_read_file(ter_path, &ter_size);
    char *good = read_text(json_path);
    CHECK(ter_before && good);
    /* Nothing to do on a fresh level. */
    trn_beamng_terrain_json_result r;
    trn_error err;
    CHECK_OK(trn_beamng_write_terrain_json(level, NULL, &r, &err));
    CHECK_EQ_INT(r.written_count, 0);
    CHECK_EQ_INT(r.unchanged_count, 1);
    CHECK_EQ_INT(r.skipped_count, 0);
    trn_beamng_terrain_json_result_dispose(&r);
    /* A mismatch: the finding names the fix, and the fix leaves no finding and the .ter as is. */
    char *bad = good ? malloc(strlen(good) + 8) : NULL;
    char *size_at = good ? strstr(good, "\"size\": 128") : NULL;
    CHECK(bad && size_at);
    if (bad && size_at) {
        snprintf(bad, strlen(good) + 8, "%.*s\"size\": 256%s", (int)(size_at - good), good,
                 size_at + strlen("\"size\": 128"));
        CHECK(write_text(json_path, bad));
    }
    trn_findings f = validate(level);
    const trn_finding *fi = trn_findings_find(&f, "terrain-json-mismatch");
    CHECK(fi && strstr(fi->fix, "terrane beamng validate LEVEL_DIR --fix-terrain-json"));
    trn_findings_dispose(&f);
    CHECK_OK(trn_beamng_write_terrain_json(level, NULL, &r, &err));
    CHECK_EQ_INT(r.written_count, 1);
    CHECK(r.written_count == 1 && strcmp(r.written[0], json_path) == 0);
    trn_beamng_terrain_json_result_dispose(&r);
    char *now = read_text(json_path);
    CHECK(now && good && strcmp(now, good) == 0); /* heightmapImage kept from the old file */
    free(now);
    f = validate(level);
    CHECK_EQ_INT(f.count, 0);
    trn_findings_dispose(&f);
    /* Not JSON at all, and missing: written again from the .ter (heightmapImage derived). */
    CHECK(write_text(json_path, "{ nope"));
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-json-invalid");
    CHECK(fi && strstr(fi->fix, "--fix-terrain-json"));
    trn_findings_dispose(&f);
    CHECK_OK(trn_beamng_write_terrain_json(level, NULL, NULL, &err));
    now = read_text(json_path);
    CHECK(now && good && strcmp(now, good) == 0);
    free(now);
    CHECK(unlink(json_path) == 0);
    CHECK_OK(trn_beamng_write_terrain_json(level, NULL, &r, &err));
    CHECK_EQ_INT(r.written_count, 1);
    trn_beamng_terrain_json_result_dispose(&r);
    now = read_text(json_path);
    CHECK(now && good && strcmp(now, good) == 0);
    free(now);
    size_t ter_size_after = 0;
    uint8_t *ter_after = trn_test_read_file(ter_path, &ter_size_after);
    CHECK(ter_after && ter_size_after == ter_size && memcmp(ter_after, ter_before, ter_size) == 0);
    free(ter_after);
    /* A block whose .ter is gone is skipped, not an error. */
    CHECK(unlink(ter_path) == 0);
    CHECK_OK(trn_beamng_write_terrain_json(level, NULL, &r, &err));
    CHECK_EQ_INT(r.written_count, 0);
    CHECK_EQ_INT(r.skipped_count, 1);
    trn_beamng_terrain_json_result_dispose(&r);
    CHECK_STATUS(trn_beamng_write_terrain_json(ter_path, NULL, &r, &err), TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_beamng_write_terrain_json(json_path, NULL, &r, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    free(bad);
    free(good);
    free(ter_before);
}

static void test_validate_more(void)
{
    char root[512], level[700];
    make_level(root, sizeof root, level, sizeof level);
    trn_findings f;

    /* Broken items file line: a finding with the line, and the block after it is still
     * checked (the engine reads the file line by line). */
    char *items = path_in(level, "main/items.level.json");
    char *text = read_text(items);
    size_t len = text ? strlen(text) : 0;
    char *bigger = malloc(len + 200);
    snprintf(bigger, len + 200,
             "%s{\"class\": oops}\n{\"class\":\"TerrainBlock\",\"name\":\"late\","
             "\"terrainFile\":\"/levels/nowhere/late.ter\",\"squareSize\":0}\n",
             text ? text : "");
    CHECK(write_text(items, bigger));
    f = validate(level);
    const trn_finding *fi = trn_findings_find(&f, "level-items-invalid");
    CHECK(fi && fi->line == 2 && strstr(fi->file, "items.level.json"));
    CHECK(fi && fi->offset == (int64_t)len + 13); /* where jansson stopped, after "oops" */
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 3);
    const trn_finding *late = trn_findings_find(&f, "terrain-block-invalid");
    CHECK(late && late->line == 3 && strstr(late->message, "\"late\": squareSize 0"));
    late = trn_findings_find(&f, "terrain-file-missing");
    CHECK(late && late->line == 3);
    CHECK(trn_findings_find(&f, "terrain-block-missing") == NULL);
    /* The column has its own field, not the message: jansson stops after the token "oops",
     * at byte 14 of the line. */
    CHECK(fi && fi->column == 14 && !strstr(fi->message, "column"));
    trn_findings_dispose(&f);
    CHECK(text && write_text(items, text));
    free(text);
    free(bigger);

    /* Broken materials file: a finding with line and column, and nothing resolves. */
    char *mats = path_in(level, "art/terrains/main.materials.json");
    char *mtext = read_text(mats);
    CHECK(write_text(mats, "{\n  \"x\": [\n}\n"));
    f = validate(level);
    fi = trn_findings_find(&f, "materials-invalid");
    CHECK(fi && fi->line == 3 && fi->column == 1);
    CHECK(trn_findings_find(&f, "material-unresolved") != NULL);
    CHECK(trn_findings_find(&f, "texture-set-missing") != NULL);
    trn_findings_dispose(&f);
    /* The engine loads every file whose name ends in "materials.json", with or without a dot
     * before it: the materials moved to terrainmaterials.json still resolve. */
    CHECK(unlink(mats) == 0);
    char *other_mats = path_in(level, "art/terrains/terrainmaterials.json");
    CHECK(mtext && write_text(other_mats, mtext));
    f = validate(level);
    CHECK(trn_findings_find(&f, "material-unresolved") == NULL);
    CHECK(trn_findings_find(&f, "texture-set-missing") == NULL);
    trn_findings_dispose(&f);
    CHECK(unlink(other_mats) == 0);
    CHECK(mtext && write_text(mats, mtext));
    free(mtext);

    /* Deprecated materials.json next to it, and a block without a texture set. */
    CHECK(write_text(path_in(level, "art/terrains/materials.json"),
                     "{\"old\": {\"class\": \"TerrainMaterial\", \"internalName\": \"old\", "
                     "\"diffuseMap\": \"old_d\"}}"));
    f = validate(level);
    CHECK(trn_findings_find(&f, "materials-deprecated-file") != NULL);
    /* An unused v1-only material under a v1.5 terrain: one warning, no per-slot findings. */
    fi = trn_findings_find(&f, "material-v1-only");
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && strstr(fi->message, "\"old\""));
    CHECK(trn_findings_find(&f, "texture-slot-empty") == NULL);
    CHECK_EQ_INT(trn_findings_count(&f, TRN_SEVERITY_ERROR), 0);
    trn_findings_dispose(&f);
    CHECK(unlink(path_in(level, "art/terrains/materials.json")) == 0);

    /* .terrain.json missing: only an info; broken: a warning with its line. */
    char *json_path = path_in(level, "theTerrain.terrain.json");
    char *json = read_text(json_path);
    CHECK(unlink(json_path) == 0);
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-json-missing");
    /* At the TerrainBlock's line, naming the file that should be there. */
    CHECK(fi && fi->severity == TRN_SEVERITY_WARNING && f.count == 1 && fi->line == 1 &&
          strstr(fi->file, "main/MissionGroup/items.level.json") &&
          strstr(fi->message, "theTerrain.terrain.json") && fi->fix[0]);
    trn_findings_dispose(&f);
    CHECK(write_text(json_path, "{\n\"version\": 9,\n"));
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-json-invalid");
    CHECK(fi && fi->line == 3 && fi->column == 1); /* the end of the file */
    trn_findings_dispose(&f);
    CHECK(json && write_text(json_path, json));
    free(json);

    /* No TerrainBlock at all. */
    items = path_in(level, "main/MissionGroup/items.level.json");
    CHECK(write_text(items, "{\"name\":\"Water\",\"class\":\"SimGroup\",\"persistentId\":"
                            "\"1\",\"__parent\":\"MissionGroup\"}\n"));
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-block-missing");
    CHECK(fi && strcmp(fi->message, "the level has no TerrainBlock in main/") == 0);
    trn_findings_dispose(&f);
    /* None that can be read: the broken line may be it, and the fix says so. */
    CHECK(write_text(items, "{\"class\":\"TerrainBlock\",\"name\":\"theTerrain\",\n"));
    f = validate(level);
    fi = trn_findings_find(&f, "terrain-block-missing");
    CHECK(fi && strstr(fi->message, "that can be read (1 item line(s) or file(s) could not"));
    CHECK(fi && strstr(fi->fix, "if one of the lines reported as level-items-invalid"));
    CHECK(trn_findings_find(&f, "level-items-invalid") != NULL);
    trn_findings_dispose(&f);

    /* Cancelling leaves the list as it was. */
    f.count = 0;
    trn_findings_add(&f, TRN_SEVERITY_INFO, "mine", NULL, -1, "", "kept");
    trn_error err;
    CHECK_STATUS(trn_beamng_validate(level, NULL, &f, cancel_at_once, NULL, &err),
                 TRN_ERR_CANCELLED);
    CHECK_EQ_INT(f.count, 1);
    trn_findings_dispose(&f);
}

static void test_resolve_path(void)
{
    char root[512], level[700];
    make_level(root, sizeof root, level, sizeof level);
    char out[1024];
    bool mismatch = true;
    CHECK_OK(trn_beamng_resolve_path(level, "/levels/demo/theTerrain.ter", out, sizeof out,
                                     &mismatch, NULL));
    CHECK(!mismatch && strstr(out, "/levels/demo/theTerrain.ter"));
    CHECK_OK(trn_beamng_resolve_path(level, "levels/DEMO/art/Terrains/T_TERRANE_GRASS_B.png", out,
                                     sizeof out, &mismatch, NULL));
    CHECK(mismatch && strstr(out, "/levels/demo/art/terrains/t_terrane_grass_b.png"));
    trn_error err;
    CHECK_STATUS(trn_beamng_resolve_path(level, "/levels/demo/art/nothing/x.png", out, sizeof out,
                                         &mismatch, &err),
                 TRN_ERR_NOT_FOUND);
    CHECK(strstr(out, "/levels/demo/art/nothing/x.png") != NULL);

    /* A level folder outside levels/: its own paths still resolve by name. */
    char moved[800];
    snprintf(moved, sizeof moved, "%s/demo", root);
    CHECK(rename(level, moved) == 0);
    CHECK_OK(trn_beamng_resolve_path(moved, "/levels/demo/theTerrain.ter", out, sizeof out,
                                     &mismatch, NULL));
    CHECK(!mismatch && strcmp(out, path_in(moved, "theTerrain.ter")) == 0);
    CHECK_STATUS(
        trn_beamng_resolve_path(moved, "/levels/other/x.ter", out, sizeof out, &mismatch, &err),
        TRN_ERR_UNSUPPORTED);
    trn_findings f = validate(moved);
    CHECK_EQ_INT(f.count, 0);
    dump_findings(&f);
    trn_findings_dispose(&f);
    set_block(moved, "/levels/other/theTerrain.ter", NULL);
    f = validate(moved);
    CHECK(trn_findings_find(&f, "terrain-file-elsewhere") != NULL);
    trn_findings_dispose(&f);
}

/* Texture slots larger than the engine's 8192 are refused before anything is written, in
 * every slot; 8192 itself is the largest size accepted (checked without writing 8192^2). */
static void test_texture_size_limit(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    const char *names[1] = {"grass"};
    trn_error err;
    uint32_t written = 7;
    trn_texture_options o = {16384, 8, 8};
    CHECK_STATUS(trn_terrain_textures_write(dir, names, 1, &o, &written, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "base texture size 16384 must be a power of two from 1 to 8192");
    trn_texture_options m = {8, 16384, 8};
    CHECK_STATUS(trn_terrain_textures_write(dir, names, 1, &m, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "macro texture size 16384");
    trn_texture_options d = {8, 8, 16384};
    CHECK_STATUS(trn_terrain_textures_write(dir, names, 1, &d, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "detail texture size 16384");
    trn_texture_options big = {8, 8, 1u << 31};
    CHECK_STATUS(trn_terrain_textures_write(dir, names, 1, &big, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "detail texture size 2147483648");
    CHECK(access(path_in(dir, "t_terrane_grass_b.png"), F_OK) != 0);
}

/* A level whose .ter is size x size (version 9, flat, all material 0, written sparse so that
 * large sizes cost no disk): validate warns 'ter-size' on a size that is not a power of two
 * in 128..8192, and only then. */
static size_t ter_size_findings(const char *level, uint32_t size, trn_severity *severity)
{
    const char *path = path_in(level, "theTerrain.ter");
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL);
    if (!fp) return 99;
    const uint8_t head[5] = {9, (uint8_t)size, (uint8_t)(size >> 8), (uint8_t)(size >> 16),
                             (uint8_t)(size >> 24)};
    const uint8_t tail[10] = {1, 0, 0, 0, 5, 'g', 'r', 'a', 's', 's'};
    CHECK(fwrite(head, 1, 5, fp) == 5);
    CHECK(fseeko(fp, (off_t)(5 + 3 * (uint64_t)size * size), SEEK_SET) == 0);
    CHECK(fwrite(tail, 1, sizeof tail, fp) == sizeof tail);
    CHECK(fclose(fp) == 0);
    trn_findings f = validate(level);
    size_t n = count_check(&f, "ter-size");
    const trn_finding *fi = trn_findings_find(&f, "ter-size");
    *severity = fi ? fi->severity : TRN_SEVERITY_ERROR;
    if (fi) {
        char want[80];
        snprintf(want, sizeof want, "size %u is not a power of two between 128 and 8192", size);
        CHECK_CONTAINS(fi->message, want);
    }
    CHECK(trn_findings_find(&f, "ter-corrupt") == NULL);
    trn_findings_dispose(&f);
    return n;
}

static void test_validate_ter_size(void)
{
    char root[512], level[700];
    make_level(root, sizeof root, level, sizeof level);
    trn_severity sev;
    CHECK_EQ_INT(ter_size_findings(level, 128, &sev), 0);
    CHECK_EQ_INT(ter_size_findings(level, 256, &sev), 0);
    CHECK_EQ_INT(ter_size_findings(level, 64, &sev), 1);
    CHECK_EQ_INT(sev, TRN_SEVERITY_WARNING);
    CHECK_EQ_INT(ter_size_findings(level, 127, &sev), 1);
    CHECK_EQ_INT(ter_size_findings(level, 129, &sev), 1);
    CHECK_EQ_INT(ter_size_findings(level, 1000, &sev), 1);
    CHECK_EQ_INT(sev, TRN_SEVERITY_WARNING);
    CHECK_EQ_INT(ter_size_findings(level, 8192, &sev), 0);
    CHECK_EQ_INT(ter_size_findings(level, 16384, &sev), 1);
    CHECK_EQ_INT(sev, TRN_SEVERITY_WARNING);
}

int main(void)
{
    RUN(test_terrain_json_write_read);
    RUN(test_terrain_json_errors);
    RUN(test_terrain_block_defaults);
    RUN(test_items_line_by_line);
    RUN(test_items_preserve);
    RUN(test_materials_roundtrip);
    RUN(test_materials_migrate);
    RUN(test_texture_options);
    RUN(test_import_argmax);
    RUN(test_import_errors);
    RUN(test_export_import_roundtrip);
    RUN(test_create);
    RUN(test_level_write_refuses_broken_block_line);
    RUN(test_import_into_level);
    RUN(test_validate);
    RUN(test_validate_more);
    RUN(test_fix_terrain_json);
    RUN(test_resolve_path);
    RUN(test_texture_size_limit);
    RUN(test_validate_ter_size);
    return trn_test_finish();
}
