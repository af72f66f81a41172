/* Recipe documents: JSON positions, every validation rule with its position, canonical form,
 * cache key, document kinds, asset and manifest writers. */
#include <jansson.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <xxhash.h>

#include "core/json_pos.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "test.h"

/* ---- json_pos ------------------------------------------------------------------------ */

static trn_json_pos locate(const char *text, trn_json_target target, size_t depth, ...)
{
    trn_json_step steps[8];
    va_list ap;
    va_start(ap, depth);
    for (size_t d = 0; d < depth; d++) {
        const char *key = va_arg(ap, const char *);
        steps[d].key = key;
        steps[d].index = key ? 0 : va_arg(ap, size_t);
    }
    va_end(ap);
    trn_json_pos pos;
    pos.line = -1;
    bool found = trn_json_locate(text, strlen(text), steps, depth, target, &pos);
    if (!found) pos.line = -pos.line; /* negative line: not found (fallback position) */
    return pos;
}

static void test_json_pos_locate(void)
{
    const char *t = "{\n"
                    "  \"a\": {\"b\": [10, {\"c\": true}, \"x\"]},\n"
                    "  \"k\\u00e9y\": 5,\n"
                    "  \"s\\\"q\": [[1], [2, 3]],\n"
                    "  \"\\ud83d\\ude00\": null\n"
                    "}";
    trn_json_pos p = locate(t, TRN_JSON_VALUE, 0);
    CHECK_EQ_INT(p.line, 1);
    CHECK_EQ_INT(p.column, 1);
    CHECK_EQ_INT(p.offset, 0);
    p = locate(t, TRN_JSON_VALUE, 1, "a");
    CHECK_EQ_INT(p.line, 2);
    CHECK_EQ_INT(p.column, 8);
    p = locate(t, TRN_JSON_KEY, 1, "a");
    CHECK_EQ_INT(p.line, 2);
    CHECK_EQ_INT(p.column, 3);
    p = locate(t, TRN_JSON_VALUE, 3, "a", "b", NULL, (size_t)1);
    CHECK_EQ_INT(p.line, 2);
    CHECK_EQ_INT(p.column, 19);
    p = locate(t, TRN_JSON_VALUE, 4, "a", "b", NULL, (size_t)1, "c");
    CHECK_EQ_INT(p.line, 2);
    CHECK_EQ_INT(p.column, 25);
    CHECK_EQ_INT(p.offset, 26);
    p = locate(t, TRN_JSON_VALUE, 3, "a", "b", NULL, (size_t)2);
    CHECK_EQ_INT(p.column, 32);
    /* Keys compare after their escapes are decoded. */
    p = locate(t, TRN_JSON_VALUE, 1, "k\xc3\xa9y");
    CHECK_EQ_INT(p.line, 3);
    CHECK_EQ_INT(p.column, 15);
    p = locate(t, TRN_JSON_VALUE, 3, "s\"q", NULL, (size_t)1, NULL, (size_t)1);
    CHECK_EQ_INT(p.line, 4);
    CHECK_EQ_INT(p.column, 21);
    p = locate(t, TRN_JSON_KEY, 1, "\xf0\x9f\x98\x80");
    CHECK_EQ_INT(p.line, 5);
    CHECK_EQ_INT(p.column, 3);
    /* Not found: the deepest value found, marked by a negative line here. */
    p = locate(t, TRN_JSON_VALUE, 2, "a", "zzz");
    CHECK_EQ_INT(p.line, -2);
    CHECK_EQ_INT(p.column, 8);
    p = locate(t, TRN_JSON_VALUE, 3, "a", "b", NULL, (size_t)3);
    CHECK_EQ_INT(p.line, -2);
    CHECK_EQ_INT(p.column, 14);
    p = locate(t, TRN_JSON_VALUE, 2, "a", NULL, (size_t)0); /* index into an object */
    CHECK_EQ_INT(p.line, -2);

    /* Columns count characters, not bytes; a byte order mark is not a column. */
    const char *u = "\xef\xbb\xbf{\"\xc3\xa9\xc3\xa9\": 1, \"b\": 2}";
    p = locate(u, TRN_JSON_VALUE, 1, "b");
    CHECK_EQ_INT(p.line, 1);
    CHECK_EQ_INT(p.column, 16);
    CHECK_EQ_INT(p.offset, 3 + 17);
    trn_json_pos q = trn_json_pos_of_offset(u, strlen(u), 1);
    CHECK_EQ_INT(q.column, 1);

    /* Garbage never reads out of bounds and finds nothing. */
    const char *bad[] = {"",
                         "{",
                         "{\"a\"",
                         "{\"a\":",
                         "[1,",
                         "\"\\",
                         "{\"a\\u12",
                         "]]]}}}",
                         "{\"a\" 1}",
                         "[[[[[[",
                         "{\"x\":[1,2,{\"y\":\"\\\"}]"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        trn_json_step s[2] = {{"a", 0}, {NULL, 1}};
        trn_json_pos pp;
        CHECK(!trn_json_locate(bad[i], strlen(bad[i]), s, 2, TRN_JSON_VALUE, &pp));
        CHECK(pp.offset <= strlen(bad[i]));
    }
}

static void test_json_path_format(void)
{
    trn_json_path p = {{{0}}, 0};
    char buf[128];
    trn_json_path_format(&p, buf, sizeof buf);
    CHECK(strcmp(buf, "") == 0);
    trn_json_path_push_key(&p, "landforms");
    trn_json_path_push_key(&p, "snow cap");
    trn_json_path_push_key(&p, "octaves");
    trn_json_path_format(&p, buf, sizeof buf);
    CHECK(strcmp(buf, "landforms[\"snow cap\"].octaves") == 0);
    trn_json_path_pop(&p);
    trn_json_path_pop(&p);
    trn_json_path_pop(&p);
    trn_json_path_push_key(&p, "rules");
    trn_json_path_push_index(&p, 2);
    trn_json_path_push_key(&p, "slope");
    trn_json_path_push_index(&p, 0);
    trn_json_path_format(&p, buf, sizeof buf);
    CHECK(strcmp(buf, "rules[2].slope[0]") == 0);
    char small[8];
    trn_json_path_format(&p, small, sizeof small);
    CHECK(strcmp(small, "rules[2") == 0);
    trn_json_path full = {{{0}}, 0};
    for (int i = 0; i < TRN_JSON_PATH_MAX; i++)
        CHECK(trn_json_path_push_index(&full, (size_t)i));
    CHECK(!trn_json_path_push_key(&full, "x"));
    CHECK_EQ_INT(full.depth, TRN_JSON_PATH_MAX);
}

/* ---- a valid recipe and errors at marked positions ---------------------------------- */

static const char *base_recipe = "{\n"
                                 "  \"size\": [128, 128],\n"
                                 "  \"resolution\": [64, 64],\n"
                                 "  \"seed\": 7,\n"
                                 "  \"default_landform\": \"hills\",\n"
                                 "  \"landforms\": {\n"
                                 "    \"hills\": {\"height_variation\": 40, \"octaves\": 4}\n"
                                 "  },\n"
                                 "  \"default_biome\": \"grass\",\n"
                                 "  \"biomes\": {\n"
                                 "    \"grass\": {\"color\": [0.2, 0.6, 0.2, 1]},\n"
                                 "    \"sand\": {\"color\": [0.9, 0.8, 0.5, 1]}\n"
                                 "  },\n"
                                 "  \"rules\": [\n"
                                 "    {\"id\": \"beach\", \"biome\": \"sand\", \"priority\": 10, "
                                 "\"water_distance\": [0, 6]}\n"
                                 "  ]\n"
                                 "}\n";

/* The base recipe with extra text in four slots: after "seed": 7, / inside the landform /
 * inside the grass biome / inside the rule. */
static char *slotted(const char *top, const char *landform, const char *biome, const char *rule)
{
    const char *parts[5] = {"{\n"
                            "  \"size\": [128, 128],\n"
                            "  \"resolution\": [64, 64],\n"
                            "  \"seed\": 7,",
                            "\n"
                            "  \"default_landform\": \"hills\",\n"
                            "  \"landforms\": {\n"
                            "    \"hills\": {\"height_variation\": 40",
                            "}\n"
                            "  },\n"
                            "  \"default_biome\": \"grass\",\n"
                            "  \"biomes\": {\n"
                            "    \"grass\": {\"color\": [0.2, 0.6, 0.2, 1]",
                            "},\n"
                            "    \"sand\": {\"color\": [0.9, 0.8, 0.5, 1]}\n"
                            "  },\n"
                            "  \"rules\": [\n"
                            "    {\"id\": \"beach\", \"biome\": \"sand\", \"priority\": 10",
                            "}\n"
                            "  ]\n"
                            "}\n"};
    const char *slots[4] = {top, landform, biome, rule};
    size_t n = 1;
    for (int i = 0; i < 5; i++)
        n += strlen(parts[i]) + (i < 4 ? strlen(slots[i]) : 0);
    char *out = malloc(n);
    out[0] = '\0';
    for (int i = 0; i < 5; i++) {
        strcat(out, parts[i]);
        if (i < 4) strcat(out, slots[i]);
    }
    return out;
}

/* The text has one '`' just before the offending value or key: the error must carry that
 * line, column (characters) and byte offset. */
static void expect_error_at(int at_line, const char *marked, trn_status code, const char *fragment)
{
    int before = trn_test_failures;
    size_t n = strlen(marked);
    char *text = malloc(n + 1);
    size_t out = 0, mark = (size_t)-1;
    int line = 1, column = 1;
    const unsigned char *m = (const unsigned char *)marked;
    size_t start = n >= 3 && m[0] == 0xEF && m[1] == 0xBB && m[2] == 0xBF ? 3 : 0;
    for (size_t i = 0; i < n; i++) {
        if (marked[i] == '`' && mark == (size_t)-1) {
            mark = out;
            continue;
        }
        if (mark == (size_t)-1 && i >= start) {
            if (marked[i] == '\n') {
                line++;
                column = 1;
            } else if ((m[i] & 0xC0) != 0x80) {
                column++;
            }
        }
        text[out++] = marked[i];
    }
    text[out] = '\0';
    CHECK(mark != (size_t)-1);
    trn_recipe r;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_recipe_parse(text, out, "t.json", &r, NULL, &e);
    CHECK_STATUS(st, code);
    CHECK_EQ_INT(e.code, code);
    CHECK_CONTAINS(e.message, fragment);
    CHECK_EQ_INT(e.line, line);
    CHECK_EQ_INT(e.column, column);
    CHECK_EQ_INT(e.offset, (int64_t)mark);
    CHECK(strcmp(e.file, "t.json") == 0);
    /* A failed parse leaves the recipe empty. */
    CHECK(r.landforms == NULL && r.biomes == NULL && r.rules == NULL && r.landform_count == 0);
    if (trn_test_failures != before)
        fprintf(stderr, "  (case at %s:%d: got %s \"%s\" at %d:%d offset %lld)\n", __FILE__,
                at_line, trn_status_name(st), e.message, e.line, e.column, (long long)e.offset);
    free(text);
}

#define EXPECT_AT(text, code, fragment) expect_error_at(__LINE__, text, code, fragment)

static void expect_slotted(int at_line, const char *top, const char *landform, const char *biome,
                           const char *rule, trn_status code, const char *fragment)
{
    char *t = slotted(top, landform, biome, rule);
    expect_error_at(at_line, t, code, fragment);
    free(t);
}

#define EXPECT_TOP(s, code, frag) expect_slotted(__LINE__, s, "", "", "", code, frag)
#define EXPECT_LANDFORM(s, code, frag) expect_slotted(__LINE__, "", s, "", "", code, frag)
#define EXPECT_BIOME(s, code, frag) expect_slotted(__LINE__, "", "", s, "", code, frag)
#define EXPECT_RULE(s, code, frag) expect_slotted(__LINE__, "", "", "", s, code, frag)

static void test_parse_valid(void)
{
    trn_recipe r;
    trn_error e;
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    CHECK_OK(trn_recipe_parse(base_recipe, strlen(base_recipe), "base.json", &r, &kind, &e));
    CHECK_EQ_INT(kind, TRN_DOCUMENT_RECIPE);
    CHECK(r.size_x == 128 && r.size_z == 128);
    CHECK_EQ_INT(r.cells_x, 64);
    CHECK_EQ_INT(r.cells_z, 64);
    CHECK_EQ_INT(r.seed, 7);
    CHECK_EQ_INT(r.chunk_cells, 32);
    CHECK(!r.has_sea_level);
    CHECK(strcmp(r.default_landform, "hills") == 0);
    CHECK_EQ_INT(r.landform_count, 1);
    const trn_landform *lf = &r.landforms[0];
    CHECK(strcmp(lf->name, "hills") == 0);
    CHECK_EQ_INT(lf->profile, TRN_PROFILE_FBM);
    CHECK(lf->base_height == 0 && lf->height_variation == 40 && lf->feature_size == 256);
    CHECK(lf->roughness == 0.5 && lf->octaves == 4 && lf->warp_amplitude == 0);
    CHECK(lf->warp_feature_size == 128 && lf->stretch == 1 && lf->heading == 0);
    CHECK_EQ_INT(r.biome_count, 2);
    CHECK(strcmp(r.biomes[0].name, "grass") == 0 && strcmp(r.biomes[1].name, "sand") == 0);
    CHECK(r.biomes[0].color[1] == 0.6f && r.biomes[0].color[3] == 1.0f);
    CHECK(r.biomes[0].texture_scale == 1 && r.biomes[0].allow_snow);
    CHECK(r.biomes[0].material == NULL && r.biomes[0].landform == NULL);
    CHECK_EQ_INT(r.rule_count, 1);
    const trn_rule *rule = &r.rules[0];
    CHECK(strcmp(rule->id, "beach") == 0 && strcmp(rule->biome, "sand") == 0);
    CHECK(rule->layer == NULL && rule->priority == 10 && rule->blend == 0);
    CHECK(rule->water_distance.set && rule->water_distance.min == 0 &&
          rule->water_distance.max == 6);
    CHECK(!rule->elevation.set && !rule->slope.set && !rule->moisture.set);
    CHECK_EQ_INT(rule->substrate_mask, 0);
    CHECK(!r.has_layers && r.layer_count == 5 && r.stroke_count == 0 && r.strokes == NULL);
    CHECK(strcmp(r.layers[2].id, "sculpt") == 0 && r.layers[2].group == TRN_LAYER_SCULPT);
    CHECK(r.graph_json == NULL && r.preset_id == NULL);
    CHECK_EQ_INT(trn_recipe_find_landform(&r, "hills"), 0);
    CHECK_EQ_INT(trn_recipe_find_landform(&r, "nope"), -1);
    CHECK_EQ_INT(trn_recipe_find_biome(&r, "sand"), 1);
    CHECK_EQ_INT(trn_recipe_find_biome(&r, NULL), -1);
    CHECK_EQ_INT(trn_recipe_find_biome(NULL, "sand"), -1);
    CHECK_OK(trn_recipe_validate(&r, &e));
    trn_recipe_dispose(&r);
    CHECK(r.landforms == NULL && r.landform_count == 0);
    trn_recipe_dispose(&r); /* twice is fine */
    trn_recipe_dispose(NULL);

    /* Every field at once, later-issue sections kept as canonical JSON. */
    char *t =
        slotted("\n  \"chunk_cells\": 16, \"sea_level\": -2.5, \"preset_id\": "
                "\"builtin://terrain/rolling-hills\", \"preset_version\": 2,\n"
                "  \"layers\": [{\"id\": \"generation\", \"enabled\": true}, {\"id\": "
                "\"biomes\"}, {\"id\": \"dig\", \"name\": \"Dig\", \"group\": \"sculpt\"}, "
                "{\"id\": \"exclusions\", \"enabled\": false}],\n"
                "  \"regions\": [{\"type\": \"region\", \"biome\": \"sand\", \"radius\": 1.50, "
                "\"center\": [1e2, -3]}],\n"
                "  \"edits\": [], \"exclusions\": [{\"type\": \"exclusion\", \"mode\": "
                "\"erase\", \"radius\": 2, \"strength\": 0.5, \"falloff\": 0, \"points\": [[0, "
                "0], [1, 1]]}],\n"
                "  \"palette\": \"asset://palettes/meadow\", \"graph\": {\"format_version\": 1, \"nodes\": [{\"id\": \"n1\", \"type\": \"noise\"}]},\n"
                "  \"format_version\": 1,",
                ", \"profile\": \"ridged\", \"base_height\": -5, \"feature_size\": 90, "
                "\"roughness\": 0.25, \"octaves\": 16, \"warp_amplitude\": 3, "
                "\"warp_feature_size\": 40, \"stretch\": 2.5, \"heading\": -30",
                ", \"material\": \"asset://materials/grass\", \"texture_scale\": 0.5, "
                "\"landform\": \"hills\", \"allow_snow\": false",
                ", \"layer\": \"biomes\", \"blend\": 1.5, \"elevation\": [-1, 4], "
                "\"slope\": [0, 90], \"moisture\": [0, 1], \"substrate\": [\"wet\", "
                "\"sand\"]");
    CHECK_OK(trn_recipe_parse(t, strlen(t), "all.json", &r, &kind, &e));
    CHECK_EQ_INT(r.chunk_cells, 16);
    CHECK(r.has_sea_level && r.sea_level == -2.5);
    CHECK(strcmp(r.preset_id, "builtin://terrain/rolling-hills") == 0);
    CHECK(r.has_preset_version && r.preset_version == 2);
    CHECK(r.has_layers && r.layer_count == 4);
    CHECK(strcmp(r.layers[1].id, "biomes") == 0 && r.layers[1].group == TRN_LAYER_BIOMES);
    CHECK(strcmp(r.layers[2].name, "Dig") == 0 && r.layers[2].group == TRN_LAYER_SCULPT);
    CHECK(strcmp(r.layers[0].name, "generation") == 0 && r.layers[0].enabled);
    CHECK(!r.layers[3].enabled && r.layers[3].group == TRN_LAYER_EXCLUSIONS);
    CHECK_EQ_INT(r.stroke_count, 2);
    CHECK(r.strokes[0].kind == TRN_STROKE_REGION && strcmp(r.strokes[0].biome, "sand") == 0);
    CHECK(r.strokes[0].radius == 1.5 && r.strokes[0].strength == 1 && r.strokes[0].falloff == 0.5);
    CHECK(r.strokes[0].point_count == 1 && r.strokes[0].points[0] == 100 &&
          r.strokes[0].points[1] == -3 && r.strokes[0].layer == NULL);
    CHECK(r.strokes[1].kind == TRN_STROKE_EXCLUSION && r.strokes[1].erase);
    CHECK(r.strokes[1].point_count == 2 && r.strokes[1].points[3] == 1);
    CHECK(r.strokes[1].strength == 0.5 && r.strokes[1].falloff == 0);
    CHECK(strcmp(r.palette_json, "\"asset://palettes/meadow\"") == 0);
    CHECK(strcmp(r.graph_json, "{\"format_version\":1,\"nodes\":[{\"id\":\"n1\",\"type\":\"noise\"}]}") == 0);
    lf = &r.landforms[0];
    CHECK(lf->profile == TRN_PROFILE_RIDGED && lf->base_height == -5 && lf->octaves == 16);
    CHECK(lf->stretch == 2.5 && lf->heading == -30 && lf->warp_feature_size == 40);
    CHECK(strcmp(r.biomes[0].material, "asset://materials/grass") == 0);
    CHECK(!r.biomes[0].allow_snow && r.biomes[0].texture_scale == 0.5);
    CHECK(strcmp(r.biomes[0].landform, "hills") == 0);
    rule = &r.rules[0];
    CHECK(strcmp(rule->layer, "biomes") == 0 && rule->blend == 1.5);
    CHECK(rule->elevation.set && rule->elevation.min == -1 && rule->elevation.max == 4);
    CHECK_EQ_INT(rule->substrate_mask, (1u << TRN_SUBSTRATE_WET) | (1u << TRN_SUBSTRATE_SAND));
    trn_recipe_dispose(&r);
    free(t);

    /* A byte order mark, CRLF line ends and the largest seed. */
    const char *crlf = "\xef\xbb\xbf{\"size\":[1,2],\"resolution\":[1,1],\r\n\"seed\":"
                       "9223372036854775807,\"default_landform\":\"a\",\"landforms\":{\"a\":{}},"
                       "\"default_biome\":\"b\",\"biomes\":{\"b\":{\"color\":[0,0,0,0]}}}";
    CHECK_OK(trn_recipe_parse(crlf, strlen(crlf), NULL, &r, NULL, &e));
    CHECK(r.seed == UINT64_C(9223372036854775807));
    CHECK_EQ_INT(r.rule_count, 0);
    trn_recipe_dispose(&r);
}

static void test_errors_syntax(void)
{
    EXPECT_AT("{\"size\": [1, 2]`]}", TRN_ERR_JSON, "invalid JSON");
    EXPECT_AT("{\"seed\": `NaN}", TRN_ERR_JSON, "invalid JSON");
    EXPECT_AT("{\"a\": 1,\n `\"a\": 2}", TRN_ERR_JSON, "duplicate object key");
    EXPECT_AT("\xef\xbb\xbf{\n  \"seed\": `x}", TRN_ERR_JSON, "invalid JSON");
    EXPECT_AT("{\"seed\": `9223372036854775808}", TRN_ERR_JSON, "too big integer");
    EXPECT_AT("{\"k\": `\"\xff\"}", TRN_ERR_JSON, "invalid JSON");
    EXPECT_AT("`", TRN_ERR_JSON, "invalid JSON");
    EXPECT_AT("`[1, 2]", TRN_ERR_JSON,
              "expected a recipe object or a Terrain asset document, "
              "found an array");
}

static void test_errors_top(void)
{
    EXPECT_TOP(" `\"sead\": 5,", TRN_ERR_JSON,
               "unknown key 'sead' in the recipe; did you mean 'seed'?");
    EXPECT_TOP(" `\"zzzzzz\": 5,", TRN_ERR_JSON, "unknown key 'zzzzzz' in the recipe");
    EXPECT_TOP(" \"chunk_cells\": `0,", TRN_ERR_JSON,
               "chunk_cells: expected a whole number 1..65536, found 0");
    EXPECT_TOP(" \"chunk_cells\": `65,", TRN_ERR_JSON,
               "chunk_cells: expected a whole number 1..64");
    EXPECT_TOP(" \"chunk_cells\": `2.5,", TRN_ERR_JSON, "found 2.5");
    EXPECT_TOP(" \"sea_level\": `\"low\",", TRN_ERR_JSON,
               "sea_level: expected a number from -1e9 to 1e9, found the string \"low\"");
    EXPECT_TOP(" \"layers\": `{},", TRN_ERR_JSON,
               "layers: expected an array of layers, found an object");
    EXPECT_TOP(" \"regions\": `5,", TRN_ERR_JSON, "regions: expected an array of region strokes");
    EXPECT_TOP(" \"edits\": `null,", TRN_ERR_JSON,
               "edits: expected an array of edit strokes, found null");
    EXPECT_TOP(" \"exclusions\": `{},", TRN_ERR_JSON, "exclusions: expected an array");
    EXPECT_TOP(" \"palette\": `5,", TRN_ERR_JSON, "palette: expected a palette asset id");
    EXPECT_TOP(" \"palette\": `\"\",", TRN_ERR_JSON, "palette: expected a palette asset id");
    EXPECT_TOP(" \"graph\": `[],", TRN_ERR_JSON, "graph: expected a graph object, found an array");
    EXPECT_TOP(" \"regions\": [{\"type\": \"region\", \"biome\": \"sand\", \"radius\": 1, "
               "\"center\": [0, 0]}, {\"type\": \"region\", \"radius\": 1, \"center\": [0, 0], "
               "\"biome\": `\"lava\"}],",
               TRN_ERR_JSON, "regions[1].biome: no biome named 'lava' (biomes: grass, sand)");
    EXPECT_TOP(" \"regions\": [`3],", TRN_ERR_JSON, "regions[0]: expected a stroke object");
    EXPECT_TOP(" \"preset_id\": `\"builtin://terrain/basin\",", TRN_ERR_JSON,
               "preset_id: preset_id without preset_version");
    EXPECT_TOP(" \"preset_version\": `1,", TRN_ERR_JSON,
               "preset_version: preset_version without preset_id");
    EXPECT_TOP(" \"preset_version\": `-1, \"preset_id\": \"x\",", TRN_ERR_JSON,
               "preset_version: expected a number >= 0, found -1");
    EXPECT_TOP(" \"preset_id\": `\"\",", TRN_ERR_JSON, "preset_id: expected a preset id");
    EXPECT_TOP(" \"format_version\": `2,", TRN_ERR_VERSION,
               "format_version 2 is newer than this build reads (1)");
    EXPECT_TOP(" \"format_version\": `\"1\",", TRN_ERR_JSON, "format_version: expected 1");

    EXPECT_AT("{\"size\": [`0, 5]}", TRN_ERR_JSON,
              "size[0]: expected a number > 0 and <= 1e9, found 0");
    EXPECT_AT("{\"size\": [5, `-1e3]}", TRN_ERR_JSON,
              "size[1]: expected a number > 0 and <= 1e9, found -1000");
    EXPECT_AT("{\"size\": [5, `2e9]}", TRN_ERR_JSON, "found 2000000000");
    EXPECT_AT("{\"size\": `[5]}", TRN_ERR_JSON,
              "size: expected [x, z], two numbers > 0 (world units), found 1 elements");
    EXPECT_AT("{\"size\": `\"big\"}", TRN_ERR_JSON, "found the string \"big\"");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [`0, 5]}", TRN_ERR_JSON,
              "resolution[0]: expected a whole number 1..65536, found 0");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [5, `65537]}", TRN_ERR_JSON,
              "resolution[1]: expected a whole number 1..65536, found 65537");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [`1.5, 2]}", TRN_ERR_JSON, "found 1.5");
    EXPECT_AT("{\"seed\": `-1}", TRN_ERR_JSON,
              "seed: expected a whole number 0..9223372036854775807, found -1");
    EXPECT_AT("{\"seed\": `1.5}", TRN_ERR_JSON, "seed: expected a whole number");
    EXPECT_AT("{\"seed\": `1e300}", TRN_ERR_JSON, "seed: expected a whole number");
    EXPECT_AT("{\"seed\": `true}", TRN_ERR_JSON, "found true");
    EXPECT_AT("{\"landforms\": `[]}", TRN_ERR_JSON, "landforms: expected an object of landforms");
    EXPECT_AT("{\"biomes\": `\"x\"}", TRN_ERR_JSON, "biomes: expected an object of biomes");
    EXPECT_AT("{\"rules\": `{}}", TRN_ERR_JSON, "rules: expected an array of rule objects");
    EXPECT_AT("{\"landforms\": {`\"\": {}}}", TRN_ERR_JSON, "a landform needs a non-empty name");
    EXPECT_AT("{\"default_landform\": `\"\"}", TRN_ERR_JSON,
              "default_landform: expected the name of a landform");

    /* Missing keys point at the object that should hold them. */
    EXPECT_AT("`{}", TRN_ERR_JSON, "missing required key 'size'");
    EXPECT_AT("`{\"size\": [1, 1]}", TRN_ERR_JSON, "missing required key 'resolution'");
    EXPECT_AT("`{\"size\": [1, 1], \"resolution\": [1, 1]}", TRN_ERR_JSON,
              "missing required key 'seed'");
    EXPECT_AT("`{\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1}", TRN_ERR_JSON,
              "missing required key 'landforms'");


    /* 256 biomes: one more than a biome map can label. */
    {
        size_t cap = 64 + 256 * 48, at_ = 0;
        char *many = malloc(cap);
        at_ += (size_t)snprintf(many, cap, "{\"biomes\": `{");
        for (int i = 0; i < 256; i++)
            at_ += (size_t)snprintf(many + at_, cap - at_, "%s\"b%d\": {\"color\": [0, 0, 0, 1]}",
                                    i ? ", " : "", i);
        snprintf(many + at_, cap - at_, "}}");
        EXPECT_AT(many, TRN_ERR_LIMIT, "biomes: 256 biomes; at most 255 are allowed");
        free(many);
    }

    /* References. */
    const char *refs = "{\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1,\n"
                       " \"default_landform\": `\"peaks\", \"landforms\": {\"a\": {}},\n"
                       " \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [0, 0, 0, 0]}}}";
    EXPECT_AT(refs, TRN_ERR_JSON, "default_landform: no landform named 'peaks' (landforms: a)");
    const char *refs2 =
        "{\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1,\n"
        " \"default_landform\": \"a\", \"landforms\": {\"a\": {}},\n"
        " \"default_biome\": `\"tundra\", \"biomes\": {\"b\": {\"color\": [0, 0, 0, 0]}, "
        "\"c\": {\"color\": [0, 0, 0, 0]}}}";
    EXPECT_AT(refs2, TRN_ERR_JSON, "default_biome: no biome named 'tundra' (biomes: b, c)");
    EXPECT_AT(
        "{\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1, \"default_landform\": \"a\", "
        "\"landforms\": `{}, \"default_biome\": \"b\", \"biomes\": {}}",
        TRN_ERR_JSON, "landforms: expected at least one landform");
}

static void test_errors_landform(void)
{
    EXPECT_LANDFORM(", `\"heigth\": 3", TRN_ERR_JSON,
                    "unknown key 'heigth' in landforms.hills; did you mean 'height_variation'?");
    EXPECT_LANDFORM(", `\"octave\": 3", TRN_ERR_JSON, "did you mean 'octaves'?");
    EXPECT_LANDFORM(", \"octaves\": `40", TRN_ERR_JSON,
                    "landforms.hills.octaves: expected a whole number 1..16, found 40");
    EXPECT_LANDFORM(", \"octaves\": `0", TRN_ERR_JSON, "found 0");
    EXPECT_LANDFORM(", \"octaves\": `2.5", TRN_ERR_JSON, "found 2.5");
    EXPECT_LANDFORM(", \"octaves\": `1e10", TRN_ERR_JSON, "found 10000000000");
    EXPECT_LANDFORM(", \"roughness\": `1.5", TRN_ERR_JSON,
                    "landforms.hills.roughness: expected a number from 0 to 1, found 1.5");
    EXPECT_LANDFORM(", \"feature_size\": `0", TRN_ERR_JSON,
                    "landforms.hills.feature_size: expected a number > 0, found 0");
    EXPECT_LANDFORM(", \"base_height\": `2e9", TRN_ERR_JSON,
                    "landforms.hills.base_height: expected a number from -1e9 to 1e9");
    EXPECT_LANDFORM(", \"warp_amplitude\": `-1", TRN_ERR_JSON,
                    "landforms.hills.warp_amplitude: expected a number >= 0, found -1");
    EXPECT_LANDFORM(", \"warp_feature_size\": `0", TRN_ERR_JSON,
                    "landforms.hills.warp_feature_size: expected a number > 0, found 0");
    EXPECT_LANDFORM(", \"stretch\": `-2", TRN_ERR_JSON,
                    "landforms.hills.stretch: expected a number > 0");
    EXPECT_LANDFORM(
        ", \"heading\": `\"north\"", TRN_ERR_JSON,
        "landforms.hills.heading: expected a finite number of degrees, found the string "
        "\"north\"");
    EXPECT_LANDFORM(
        ", \"profile\": `\"billow\"", TRN_ERR_JSON,
        "landforms.hills.profile: expected \"fbm\" or \"ridged\", found the string \"billow\"");
    EXPECT_AT("{\"landforms\": {\"hills\": `[]}}", TRN_ERR_JSON,
              "landforms.hills: expected a landform object");
    /* A name that is not an identifier is quoted in the path; escapes decode for the lookup. */
    EXPECT_AT("{\"landforms\": {\"sn\\u00f6w cap\": {\"octaves\": `99}}}", TRN_ERR_JSON,
              "landforms[\"sn\xc3\xb6w cap\"].octaves: expected a whole number 1..16, found 99");
    /* The height variation key written with an escape is still the known key. */
    EXPECT_AT("{\"landforms\": {\"a\": {\"h\\u0065ight_variation\": `-1}}}", TRN_ERR_JSON,
              "landforms.a.height_variation: expected a number from 0 to 1e9, found -1");
}

static void test_errors_biome(void)
{
    EXPECT_BIOME(", `\"base_height\": 3", TRN_ERR_JSON,
                 "biomes.grass.base_height: 'base_height' is a landform field, not a biome field: "
                 "move it into a landform");
    EXPECT_BIOME(", `\"octaves\": 3", TRN_ERR_JSON, "'octaves' is a landform field");
    EXPECT_BIOME(", `\"warp_amplitude\": 3", TRN_ERR_JSON, "'warp_amplitude' is a landform field");
    EXPECT_BIOME(", `\"colour\": 3", TRN_ERR_JSON,
                 "unknown key 'colour' in biomes.grass; did you mean 'color'?");
    EXPECT_AT("{\"biomes\": {\"g\": {\"color\": `[1, 1, 1]}}}", TRN_ERR_JSON,
              "biomes.g.color: expected [r, g, b, a], four numbers from 0 to 1, found 3 elements");
    EXPECT_AT("{\"biomes\": {\"g\": {\"color\": [1, `2, 0, 1]}}}", TRN_ERR_JSON,
              "biomes.g.color[1]: expected a number from 0 to 1, found 2");
    EXPECT_AT("{\"biomes\": {\"g\": {\"color\": `\"#ff0000\"}}}", TRN_ERR_JSON,
              "found the string \"#ff0000\"");
    EXPECT_BIOME(", \"texture_scale\": `0", TRN_ERR_JSON,
                 "biomes.grass.texture_scale: expected a number > 0, found 0");
    EXPECT_BIOME(", \"landform\": `\"nope\"", TRN_ERR_JSON,
                 "biomes.grass.landform: no landform named 'nope' (landforms: hills)");
    EXPECT_BIOME(", \"landform\": `7", TRN_ERR_JSON,
                 "biomes.grass.landform: expected the name of a landform, found 7");
    EXPECT_BIOME(", \"allow_snow\": `\"yes\"", TRN_ERR_JSON,
                 "biomes.grass.allow_snow: expected true or false");
    EXPECT_BIOME(", \"material\": `\"\"", TRN_ERR_JSON,
                 "biomes.grass.material: expected a material asset id");
    EXPECT_AT("{\"biomes\": {\"g\": `{\"material\": \"m\"}}}", TRN_ERR_JSON,
              "biomes.g: missing required key 'color'");
    EXPECT_AT("{\"biomes\": {\"g\": `true}}", TRN_ERR_JSON, "biomes.g: expected a biome object");
}

static void test_errors_rule(void)
{
    EXPECT_RULE(", `\"priorty\": 3", TRN_ERR_JSON,
                "unknown key 'priorty' in rules[0]; did you mean 'priority'?");
    EXPECT_RULE(", \"slope\": [0, `95]", TRN_ERR_JSON,
                "rules[0].slope[1]: expected a number of degrees from 0 to 90, found 95");
    EXPECT_RULE(", \"slope\": [`-5, 10]", TRN_ERR_JSON, "rules[0].slope[0]");
    EXPECT_RULE(", \"moisture\": `[0.5, 0.2]", TRN_ERR_JSON,
                "rules[0].moisture: the band is [min, max] and min 0.5 is greater than max 0.2");
    EXPECT_RULE(", \"moisture\": [0, `1.5]", TRN_ERR_JSON,
                "rules[0].moisture[1]: expected a number from 0 to 1, found 1.5");
    EXPECT_RULE(", \"water_distance\": [`-1, 5]", TRN_ERR_JSON,
                "rules[0].water_distance[0]: expected a number >= 0, found -1");
    EXPECT_RULE(
        ", \"elevation\": `[1, 2, 3]", TRN_ERR_JSON,
        "rules[0].elevation: expected [min, max], two numbers (a finite number), found 3 elements");
    EXPECT_RULE(", \"elevation\": `5", TRN_ERR_JSON, "rules[0].elevation: expected [min, max]");
    EXPECT_RULE(", \"elevation\": [`\"a\", 5]", TRN_ERR_JSON,
                "rules[0].elevation[0]: expected a finite number");
    EXPECT_RULE(", \"blend\": `-1", TRN_ERR_JSON,
                "rules[0].blend: expected a number >= 0, found -1");
    EXPECT_AT("{\"rules\": [{\"priority\": `null}]}", TRN_ERR_JSON,
              "rules[0].priority: expected a finite number, found null");
    EXPECT_RULE(", \"substrate\": `[]", TRN_ERR_JSON,
                "rules[0].substrate: expected a non-empty list of distinct names from soil, rock, "
                "sand, wet, found an empty list");
    EXPECT_RULE(", \"substrate\": `\"rock\"", TRN_ERR_JSON,
                "rules[0].substrate: expected a non-empty list");
    EXPECT_RULE(", \"substrate\": [\"rock\", `\"rock\"]", TRN_ERR_JSON,
                "rules[0].substrate[1]: 'rock' is listed twice");
    EXPECT_RULE(
        ", \"substrate\": [\"rock\", `\"mud\"]", TRN_ERR_JSON,
        "rules[0].substrate[1]: expected soil, rock, sand or wet, found the string \"mud\"");
    EXPECT_RULE(", \"layer\": `\"\"", TRN_ERR_JSON, "rules[0].layer: expected a layer name");
    EXPECT_AT("{\"rules\": [{\"id\": \"a\", \"biome\": \"b\"}, `{\"biome\": \"b\"}]}", TRN_ERR_JSON,
              "rules[1]: missing required key 'id'");
    EXPECT_AT("{\"rules\": [`{\"id\": \"a\"}]}", TRN_ERR_JSON,
              "rules[0]: missing required key 'biome'");
    EXPECT_AT("{\"rules\": [`7]}", TRN_ERR_JSON, "rules[0]: expected a rule object");

    char *t = slotted("", "", "", "}, {\"id\": `\"beach\", \"biome\": \"grass\"");
    EXPECT_AT(t, TRN_ERR_JSON, "rules[1].id: rule id 'beach' is already used by rules[0]");
    free(t);
    t = slotted("", "", "", "}, {\"id\": \"lava_flow\", \"biome\": `\"lava\"");
    EXPECT_AT(t, TRN_ERR_JSON, "rules[1].biome: no biome named 'lava' (biomes: grass, sand)");
    free(t);
}

static const char *asset_doc =
    "{\n"
    "  \"format_version\": 1,\n"
    "  \"id\": \"asset://terrain/landscape\",\n"
    "  \"recipe\": {\"size\": [1, 1], \"resolution\": [1, 1], \"seed\": 1,\n"
    "    \"default_landform\": \"a\", \"landforms\": {\"a\": {\"octaves\": 3}},\n"
    "    \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [0, 0, 0, 1]}}}\n"
    "}\n";

static void test_documents(void)
{
    trn_recipe r;
    trn_error e;
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    CHECK_OK(trn_recipe_parse(asset_doc, strlen(asset_doc), "x.terrain.json", &r, &kind, &e));
    CHECK_EQ_INT(kind, TRN_DOCUMENT_TERRAIN_ASSET);
    CHECK_EQ_INT(r.landforms[0].octaves, 3);
    trn_recipe_dispose(&r);

    EXPECT_AT("{\"format_version\": `2, \"id\": \"asset://t\", \"recipe\": {}}", TRN_ERR_VERSION,
              "format_version: format_version 2 is newer than this build reads (1)");
    EXPECT_AT("{\"format_version\": `0, \"id\": \"asset://t\", \"recipe\": {}}", TRN_ERR_JSON,
              "format_version: expected 1, found 0");
    EXPECT_AT("{\"format_version\": 1, \"id\": `\"terrain/t\", \"recipe\": {}}", TRN_ERR_JSON,
              "id: expected an asset id such as \"asset://terrain/landscape\", found the string "
              "\"terrain/t\"");
    EXPECT_AT("{\"format_version\": 1, \"id\": `\"asset://\", \"recipe\": {}}", TRN_ERR_JSON,
              "id: expected an asset id");
    EXPECT_AT("{\"format_version\": 1, `\"recipie\": 1, \"recipe\": {}}", TRN_ERR_JSON,
              "unknown key 'recipie' in the Terrain asset document; did you mean 'recipe'?");
    EXPECT_AT("`{\"id\": \"asset://t\", \"recipe\": {}}", TRN_ERR_JSON,
              "missing required key 'format_version'");
    EXPECT_AT("`{\"format_version\": 1, \"recipe\": {}}", TRN_ERR_JSON,
              "missing required key 'id'");
    EXPECT_AT("{\"format_version\": 1, \"id\": \"asset://t\", \"recipe\": `[]}", TRN_ERR_JSON,
              "recipe: expected a recipe object, found an array");
    EXPECT_AT("{\"format_version\": 1, \"id\": \"asset://t\", \"recipe\": `{}}", TRN_ERR_JSON,
              "recipe: missing required key 'size'");
    /* Recipe errors inside an asset carry the recipe. prefix. */
    const char *bad =
        "{\"format_version\": 1, \"id\": \"asset://t\", \"recipe\": {\"size\": [1, 1], "
        "\"resolution\": [1, 1], \"seed\": 1,\n \"default_landform\": \"a\", "
        "\"landforms\": {\"a\": {\"octaves\": `17}}}}";
    EXPECT_AT(bad, TRN_ERR_JSON,
              "recipe.landforms.a.octaves: expected a whole number 1..16, found 17");
    const char *bad2 =
        "{\"format_version\": 1, \"id\": \"asset://t\", \"recipe\": {\"size\": [1, 1], "
        "\"resolution\": [1, 1], \"seed\": 1,\n \"default_landform\": \"a\", "
        "\"landforms\": {\"a\": {}}, \"default_biome\": `\"q\", \"biomes\": {\"b\": "
        "{\"color\": [0, 0, 0, 1]}}}}";
    EXPECT_AT(bad2, TRN_ERR_JSON, "recipe.default_biome: no biome named 'q'");
    EXPECT_AT("{\"format_version\": 1, \"id\": \"asset://t\", \"recipe\": {`\"heigth\": 1}}",
              TRN_ERR_JSON, "unknown key 'heigth' in recipe");

    /* BeamNG metadata and manifests are named, not misread. */
    const char *beamng =
        "`{\"version\": 9, \"datafile\": \"levels/x/theTerrain.ter\", \"size\": 1024, "
        "\"heightMapSize\": 1048576, \"materials\": [\"Grass\"]}";
    EXPECT_AT(beamng, TRN_ERR_FORMAT, "this is BeamNG terrain metadata");
    EXPECT_AT(beamng, TRN_ERR_FORMAT, "use 'terrane info'");
    const char *beamng_plain = beamng + 1;
    CHECK_STATUS(
        trn_recipe_parse(beamng_plain, strlen(beamng_plain), "b.terrain.json", &r, &kind, &e),
        TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_BEAMNG_TERRAIN);
    const char *manifest = "{\"type\": \"Terrain\", \"importer\": \"terrain_heightfield\", "
                           "\"source\": \"land.terrain.json\"}";
    CHECK_STATUS(trn_recipe_parse(manifest, strlen(manifest), "m.asset.json", &r, &kind, &e),
                 TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_ASSET_MANIFEST);
    CHECK_CONTAINS(e.message, "pass the source document it names, 'land.terrain.json'");
    CHECK_EQ_INT(e.line, 1);
    CHECK_EQ_INT(e.column, 1);

    /* Classification by content alone. */
    CHECK_EQ_INT(trn_document_classify(base_recipe, strlen(base_recipe)), TRN_DOCUMENT_RECIPE);
    CHECK_EQ_INT(trn_document_classify(asset_doc, strlen(asset_doc)), TRN_DOCUMENT_TERRAIN_ASSET);
    CHECK_EQ_INT(trn_document_classify(manifest, strlen(manifest)), TRN_DOCUMENT_ASSET_MANIFEST);
    CHECK_EQ_INT(trn_document_classify(beamng_plain, strlen(beamng_plain)),
                 TRN_DOCUMENT_BEAMNG_TERRAIN);
    const char *beamng_min = "{\"version\": 9, \"binaryFormat\": \"x\"}";
    CHECK_EQ_INT(trn_document_classify(beamng_min, strlen(beamng_min)),
                 TRN_DOCUMENT_BEAMNG_TERRAIN);
    const char *bom_recipe = "\xef\xbb\xbf{\"seed\": 1}";
    CHECK_EQ_INT(trn_document_classify(bom_recipe, strlen(bom_recipe)), TRN_DOCUMENT_RECIPE);
    CHECK_EQ_INT(trn_document_classify("{}", 2), TRN_DOCUMENT_UNKNOWN);
    CHECK_EQ_INT(trn_document_classify("[1]", 3), TRN_DOCUMENT_UNKNOWN);
    CHECK_EQ_INT(trn_document_classify("{\"seed\": ", 9), TRN_DOCUMENT_UNKNOWN);
    CHECK_EQ_INT(trn_document_classify(NULL, 0), TRN_DOCUMENT_UNKNOWN);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_RECIPE), "recipe") == 0);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_TERRAIN_ASSET), "Terrain asset") == 0);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_ASSET_MANIFEST), "asset manifest") == 0);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_BEAMNG_TERRAIN), "BeamNG terrain metadata") ==
          0);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_UNKNOWN), "unknown") == 0);
    CHECK(strcmp(trn_document_kind_name((trn_document_kind)99), "unknown") == 0);

    CHECK(strcmp(trn_substrate_name(TRN_SUBSTRATE_SOIL), "soil") == 0);
    CHECK(strcmp(trn_substrate_name(TRN_SUBSTRATE_ROCK), "rock") == 0);
    CHECK(strcmp(trn_substrate_name(TRN_SUBSTRATE_SAND), "sand") == 0);
    CHECK(strcmp(trn_substrate_name(TRN_SUBSTRATE_WET), "wet") == 0);
    CHECK(strcmp(trn_substrate_name(TRN_SUBSTRATE_COUNT), "unknown") == 0);

    CHECK_STATUS(trn_recipe_parse(NULL, 5, NULL, &r, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_parse("{}", 2, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
}

/* ---- canonical form and cache key --------------------------------------------------- */

static char *canonical_of(const char *text)
{
    trn_recipe r;
    trn_error e;
    char *out = NULL;
    size_t n = 0;
    if (trn_recipe_parse(text, strlen(text), "c.json", &r, NULL, &e) != TRN_OK) {
        fprintf(stderr, "  parse failed: %s\n", e.message);
        return NULL;
    }
    if (trn_recipe_canonical_json(&r, &out, &n, &e) != TRN_OK) out = NULL;
    CHECK(out == NULL || strlen(out) == n);
    trn_recipe_dispose(&r);
    return out;
}

static uint64_t key_of(const char *text)
{
    trn_recipe r;
    trn_error e;
    uint64_t key = 0;
    if (trn_recipe_parse(text, strlen(text), "c.json", &r, NULL, &e) != TRN_OK) {
        fprintf(stderr, "  parse failed: %s\n", e.message);
        return 0;
    }
    CHECK_OK(trn_recipe_cache_key(&r, &key, &e));
    trn_recipe_dispose(&r);
    return key;
}

static void test_canonical(void)
{
    char *c1 = canonical_of(base_recipe);
    CHECK(c1 != NULL);
    const char *expected =
        "{\"biomes\":{\"grass\":{\"color\":[0.2,0.6,0.2,1]},\"sand\":{\"color\":[0.9,0.8,0.5,1]}},"
        "\"default_biome\":\"grass\",\"default_landform\":\"hills\",\"landforms\":{\"hills\":{"
        "\"height_variation\":40,\"octaves\":4}},\"resolution\":[64,64],\"rules\":[{\"biome\":"
        "\"sand\",\"id\":\"beach\",\"priority\":10,\"water_distance\":[0,6]}],\"seed\":7,\"size\":"
        "[128,128]}";
    CHECK(c1 && strcmp(c1, expected) == 0);
    if (c1 && strcmp(c1, expected) != 0) fprintf(stderr, "  canonical: %s\n", c1);
    /* Stable across parse-print cycles. */
    char *c2 = c1 ? canonical_of(c1) : NULL;
    CHECK(c2 && strcmp(c1, c2) == 0);
    free(c2);

    /* Key order, whitespace, explicit defaults and number spelling do not matter. */
    const char *reordered =
        "{\"seed\": 7.0, \"rules\": [{\"water_distance\": [0.0, 6e0], \"priority\": 1e1, "
        "\"blend\": 0, \"biome\": \"sand\", \"id\": \"beach\"}], \"chunk_cells\": 32,\n"
        "\"biomes\": {\"sand\": {\"color\": [0.9, 0.8, 0.5, 1.0], \"allow_snow\": true}, "
        "\"grass\": {\"texture_scale\": 1, \"color\": [0.2, 0.6, 0.2, 1]}},\n"
        "\"landforms\": {\"hills\": {\"octaves\": 4, \"profile\": \"fbm\", \"height_variation\": "
        "40, \"base_height\": -0.0, \"feature_size\": 256, \"roughness\": 0.5, "
        "\"warp_amplitude\": 0, \"warp_feature_size\": 128, \"stretch\": 1, \"heading\": 0}},\n"
        "\"default_biome\": \"grass\", \"resolution\": [64, 64], \"size\": [128.0, 1.28e2], "
        "\"default_landform\": \"hills\", \"format_version\": 1}";
    char *c3 = canonical_of(reordered);
    CHECK(c3 && c1 && strcmp(c1, c3) == 0);
    if (c3 && c1 && strcmp(c1, c3) != 0) fprintf(stderr, "  reordered: %s\n", c3);
    free(c3);
    uint64_t k_base = key_of(base_recipe);
    CHECK(k_base != 0);
    CHECK(key_of(reordered) == k_base);

    /* The key is XXH64 (seed 0) over the version as 4 bytes little-endian + canonical text. */
    size_t n = strlen(c1);
    unsigned char *bytes = malloc(n + 4);
    bytes[0] = (unsigned char)(TRN_GENERATOR_VERSION & 0xFF);
    bytes[1] = (unsigned char)((TRN_GENERATOR_VERSION >> 8) & 0xFF);
    bytes[2] = (unsigned char)((TRN_GENERATOR_VERSION >> 16) & 0xFF);
    bytes[3] = (unsigned char)((TRN_GENERATOR_VERSION >> 24) & 0xFF);
    memcpy(bytes + 4, c1, n);
    CHECK(XXH64(bytes, n + 4, 0) == k_base);
    free(bytes);
    free(c1);

    /* Any value change changes the key. */
    char *t = slotted("", ", \"octaves\": 5", "", "");
    uint64_t k_oct5 = key_of(t);
    free(t);
    CHECK(k_oct5 != 0 && k_oct5 != k_base);
    const char *variants[][2] = {{"\"seed\": 7", "\"seed\": 8"},
                                 {"\"height_variation\": 40", "\"height_variation\": 40.5"},
                                 {"[0.2, 0.6, 0.2, 1]", "[0.2, 0.6, 0.2, 0.5]"},
                                 {"\"priority\": 10", "\"priority\": 11"},
                                 {"[64, 64]", "[64, 32]"},
                                 {"[0, 6]", "[0, 7]"}};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        const char *at_ = strstr(base_recipe, variants[i][0]);
        CHECK(at_ != NULL);
        if (!at_) continue;
        char buf[2048];
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at_ - base_recipe), base_recipe, variants[i][1],
                 at_ + strlen(variants[i][0]));
        uint64_t k = key_of(buf);
        CHECK(k != 0 && k != k_base && k != k_oct5);
    }
    /* Adding a rule with default-only bands or reordering rules changes the key (order
     * matters for ties). */
    char *two_a = slotted("", "", "", "}, {\"id\": \"g\", \"biome\": \"grass\"");
    const char *two_b_text =
        "{\"size\": [128, 128], \"resolution\": [64, 64], \"seed\": 7, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {\"height_variation\": 40}}, \"default_biome\": "
        "\"grass\", \"biomes\": {\"grass\": {\"color\": [0.2, 0.6, 0.2, 1]}, \"sand\": {\"color\": "
        "[0.9, 0.8, 0.5, 1]}}, \"rules\": [{\"id\": \"g\", \"biome\": \"grass\"}, {\"id\": "
        "\"beach\", \"biome\": \"sand\", \"priority\": 10, \"water_distance\": [0, 6]}]}";
    uint64_t ka = key_of(two_a), kb = key_of(two_b_text);
    CHECK(ka != 0 && kb != 0 && ka != kb);
    free(two_a);

    /* Numbers: shortest round-trip text, integers without a fraction, floats of colours by
     * their own shortest text; strings escaped. */
    const char *nums =
        "{\"size\": [0.1, 1e-7], \"resolution\": [1, 1], \"seed\": 0, \"sea_level\": -1e-300,\n"
        "\"default_landform\": \"a\\\"b\", \"landforms\": {\"a\\\"b\": {\"base_height\": "
        "123456789.125, \"height_variation\": 0.30000000000000004, \"heading\": 1e300,"
        "\"feature_size\": 9007199254740993, \"stretch\": 1e21}},\n"
        "\"default_biome\": \"t\\u0001\\n\", \"biomes\": {\"t\\u0001\\n\": {\"color\": "
        "[0.3, 0.1, 0.7, 0.333333333333]}}, \"graph\": {\"format_version\": 1, \"nodes\": [{\"id\": \"n\", "
        "\"type\": \"x\", \"params\": {\"z\": [1.0, -0.0, 2e0, "
        "12345678901234567890e-10], "
        "\"a\": {\"\\u00e9\": \"\\u2028\"}}}]}}";
    char *cn = canonical_of(nums);
    const char *expect_nums =
        "{\"biomes\":{\"t\\u0001\\n\":{\"color\":[0.3,0.1,0.7,0.33333334]}},\"default_biome\":"
        "\"t\\u0001\\n\",\"default_landform\":\"a\\\"b\",\"graph\":{\"format_version\":1,\"nodes\":[{\"id\":\"n\",\"params\":{\"a\":{\"\xc3\xa9\":"
        "\"\xe2\x80\xa8\"},\"z\":[1,0,2,1234567890.1234567]},\"type\":\"x\"}]},\"landforms\":{\"a\\\"b\":{"
        "\"base_height\":123456789.125,\"feature_size\":9007199254740992,\"heading\":1e+300,"
        "\"height_variation\":0.30000000000000004,\"stretch\":1e+21}},\"resolution\":[1,1],"
        "\"sea_level\":-1e-300,\"seed\":0,\"size\":[0.1,1e-07]}";
    CHECK(cn && strcmp(cn, expect_nums) == 0);
    if (cn && strcmp(cn, expect_nums) != 0) fprintf(stderr, "  numbers: %s\n", cn);
    char *cn2 = cn ? canonical_of(cn) : NULL;
    CHECK(cn2 && strcmp(cn, cn2) == 0);
    free(cn);
    free(cn2);
}

/* An embedding program may switch LC_NUMERIC to a comma; canonical text must not change. */
static void test_canonical_locale(void)
{
    const char *text = "{\"size\": [0.5, 1e-7], \"resolution\": [1, 1], \"seed\": 1, "
                       "\"default_landform\": \"a\", \"landforms\": {\"a\": {\"roughness\": "
                       "0.25}}, \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [0.36, "
                       "0, 0, 1]}}}";
    char *in_c = canonical_of(text);
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8"};
    const char *used = NULL;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !used; i++)
        if (setlocale(LC_NUMERIC, names[i])) used = names[i];
    if (!used) {
        fprintf(stderr, "  (no comma locale installed; checked in the C locale only)\n");
    } else {
        CHECK(strcmp(localeconv()->decimal_point, ",") == 0);
        char *in_comma = canonical_of(text);
        CHECK(in_c && in_comma && strcmp(in_c, in_comma) == 0);
        free(in_comma);
        setlocale(LC_NUMERIC, "C");
    }
    CHECK(in_c && strstr(in_c, "\"color\":[0.36,0,0,1]") && strstr(in_c, "[0.5,1e-07]"));
    free(in_c);
}

static void test_validate_struct(void)
{
    trn_landform lf = {0};
    char lname[] = "flat", bname[] = "plain", rid[] = "r", rbiome[] = "plain";
    lf.name = lname;
    lf.profile = TRN_PROFILE_FBM;
    lf.height_variation = 100;
    lf.feature_size = 256;
    lf.roughness = 0.5;
    lf.octaves = 5;
    lf.warp_feature_size = 128;
    lf.stretch = 1;
    trn_biome b = {0};
    b.name = bname;
    b.color[3] = 1;
    b.texture_scale = 1;
    b.allow_snow = true;
    trn_rule rule = {0};
    rule.id = rid;
    rule.biome = rbiome;
    trn_recipe r = {0};
    r.size_x = r.size_z = 100;
    r.cells_x = r.cells_z = 10;
    r.seed = 5;
    r.chunk_cells = 32;
    r.default_landform = lname;
    r.landforms = &lf;
    r.landform_count = 1;
    r.default_biome = bname;
    r.biomes = &b;
    r.biome_count = 1;
    r.rules = &rule;
    r.rule_count = 1;
    trn_error e;
    CHECK_OK(trn_recipe_validate(&r, &e));
    char *text = NULL;
    size_t n = 0;
    CHECK_OK(trn_recipe_canonical_json(&r, &text, &n, &e));
    CHECK(text && strcmp(text, "{\"biomes\":{\"plain\":{\"color\":[0,0,0,1]}},\"default_biome\":"
                               "\"plain\",\"default_landform\":\"flat\",\"landforms\":{\"flat\":"
                               "{}},\"resolution\":[10,10],\"rules\":[{\"biome\":\"plain\",\"id\":"
                               "\"r\"}],\"seed\":5,\"size\":[100,100]}") == 0);
    free(text);

    lf.roughness = NAN;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms.flat.roughness: expected a number from 0 to 1, found NaN");
    CHECK_EQ_INT(e.line, 0);
    CHECK_STATUS(trn_recipe_canonical_json(&r, &text, &n, &e), TRN_ERR_VALIDATION);
    CHECK(text == NULL);
    uint64_t key = 1;
    CHECK_STATUS(trn_recipe_cache_key(&r, &key, &e), TRN_ERR_VALIDATION);
    CHECK(key == 0);
    lf.roughness = 0.5;
    lf.heading = INFINITY;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message,
                   "landforms.flat.heading: expected a finite number of degrees, found Infinity");
    lf.heading = 0;
    lf.profile = (trn_profile)7;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms.flat.profile");
    lf.profile = TRN_PROFILE_RIDGED;
    r.seed = UINT64_C(9223372036854775808);
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(
        e.message,
        "seed: expected a whole number 0..9223372036854775807, found 9223372036854775808");
    r.seed = 5;
    r.cells_x = 0;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "resolution[0]");
    r.cells_x = 65536;
    r.cells_z = 65536;
    CHECK_OK(trn_recipe_validate(&r, &e));
    r.cells_z = 65537;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "resolution[1]: expected a whole number 1..65536, found 65537");
    r.cells_x = r.cells_z = 10;
    r.chunk_cells = 0;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "chunk_cells: expected a whole number 1..32");
    r.chunk_cells = 32;
    b.color[0] = -0.5f;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "biomes.plain.color[0]: expected a number from 0 to 1, found -0.5");
    b.color[0] = 0;
    rule.slope.set = true;
    rule.slope.min = 10;
    rule.slope.max = 5;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message,
                   "rules[0].slope: the band is [min, max] and min 10 is greater than max 5");
    rule.slope.set = false;
    rule.substrate_mask = 1u << 6;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "rules[0].substrate");
    rule.substrate_mask = 0;
    rule.id = NULL;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "rules[0].id: expected a non-empty rule id");
    rule.id = rid;
    r.has_layers = true; /* spelled out, yet none: the generation layer is missing */
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "layers: expected at least the generation layer");
    r.has_layers = false;
    trn_landform two[2] = {lf, lf};
    r.landforms = two;
    r.landform_count = 2;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms: two landforms are named 'flat'");
    r.landforms = &lf;
    r.landform_count = 1;
    r.default_biome = NULL;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "default_biome: expected the name of a biome");
    r.default_biome = bname;
    CHECK_OK(trn_recipe_validate(&r, &e));
    CHECK_STATUS(trn_recipe_validate(NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_canonical_json(&r, NULL, &n, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_cache_key(&r, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
}

static void test_sea_level(void)
{
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(base_recipe, strlen(base_recipe), NULL, &r, NULL, &e));
    trn_sea_level_source src = TRN_SEA_LEVEL_EXPLICIT;
    char how[200];
    double level = trn_recipe_sea_level(&r, &src, how, sizeof how);
    CHECK(level == 10); /* 0 + 0.25 * 40 */
    CHECK_EQ_INT(src, TRN_SEA_LEVEL_DERIVED);
    CHECK_CONTAINS(how, "derived: base_height 0 + 0.25 x height_variation 40 of default landform "
                        "'hills' = 10");
    CHECK(trn_recipe_sea_level(&r, NULL, NULL, 0) == 10);
    r.has_sea_level = true;
    r.sea_level = 8.5;
    level = trn_recipe_sea_level(&r, &src, how, sizeof how);
    CHECK(level == 8.5);
    CHECK_EQ_INT(src, TRN_SEA_LEVEL_EXPLICIT);
    CHECK_CONTAINS(how, "explicit: the recipe's sea_level 8.5");
    trn_recipe_dispose(&r);
    CHECK(trn_recipe_sea_level(NULL, &src, how, sizeof how) == 0);
}

static void test_asset_files(void)
{
    char dir[512], path[600], mpath[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/land.terrain.json", dir);
    snprintf(mpath, sizeof mpath, "%s/land.asset.json", dir);
    trn_recipe r, back;
    trn_error e;
    CHECK_OK(trn_recipe_parse(base_recipe, strlen(base_recipe), NULL, &r, NULL, &e));
    CHECK_OK(trn_terrain_asset_write(path, "asset://terrain/land", &r, &e));
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    CHECK_OK(trn_recipe_read(path, &back, &kind, &e));
    CHECK_EQ_INT(kind, TRN_DOCUMENT_TERRAIN_ASSET);
    uint64_t k1 = 0, k2 = 0;
    CHECK_OK(trn_recipe_cache_key(&r, &k1, &e));
    CHECK_OK(trn_recipe_cache_key(&back, &k2, &e));
    CHECK(k1 == k2 && k1 != 0);
    trn_recipe_dispose(&back);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(path, &n);
    const char *head = "{\n  \"format_version\": 1,\n  \"id\": \"asset://terrain/land\",\n"
                       "  \"recipe\": {\n    \"biomes\": {\n      \"grass\": {\n        "
                       "\"color\": [0.2, 0.6, 0.2, 1]\n";
    CHECK(text && strncmp(text, head, strlen(head)) == 0);
    CHECK(text && n > 0 && text[n - 1] == '\n');
    free(text);
    CHECK_STATUS(trn_terrain_asset_write(path, "terrain/land", &r, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "asset://terrain/landscape");
    r.landforms[0].octaves = 0;
    CHECK_STATUS(trn_terrain_asset_write(path, "asset://terrain/land", &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms.hills.octaves");
    CHECK(strcmp(e.file, path) == 0);
    /* The earlier file is untouched by the refused write. */
    CHECK_OK(trn_recipe_read(path, &back, &kind, &e));
    trn_recipe_dispose(&back);
    trn_recipe_dispose(&r);

    CHECK_OK(trn_terrain_manifest_write(mpath, "land.terrain.json", &e));
    text = (char *)trn_test_read_file(mpath, &n);
    CHECK(text &&
          strcmp(text, "{\n  \"format_version\": 1,\n  \"importer\": \"terrain_heightfield\",\n"
                       "  \"source\": \"land.terrain.json\",\n  \"type\": \"Terrain\"\n}\n") == 0);
    CHECK(text && trn_document_classify(text, n) == TRN_DOCUMENT_ASSET_MANIFEST);
    free(text);
    CHECK_STATUS(trn_recipe_read(mpath, &back, &kind, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_ASSET_MANIFEST);
    CHECK_CONTAINS(e.message, "'land.terrain.json'");
    CHECK_STATUS(trn_terrain_manifest_write(mpath, "/abs/land.terrain.json", &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_terrain_manifest_write(mpath, "", &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_terrain_manifest_write(mpath, "bad\xff.terrain.json", &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "not valid UTF-8");

    snprintf(path, sizeof path, "%s/missing.json", dir);
    CHECK_STATUS(trn_recipe_read(path, &back, &kind, &e), TRN_ERR_NOT_FOUND);
}

static void test_examples(void)
{
    const char *names[] = {"mountains.json", "hills.json", "island.json", "valley.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/examples/recipes/%s", TRN_SOURCE_DIR, names[i]);
        trn_recipe r;
        trn_error e;
        trn_document_kind kind;
        trn_status st = trn_recipe_read(path, &r, &kind, &e);
        CHECK_OK(st);
        if (st) {
            char buf[1024];
            fprintf(stderr, "  %s\n", trn_error_format(&e, buf, sizeof buf));
            continue;
        }
        CHECK_EQ_INT(kind, TRN_DOCUMENT_RECIPE);
        CHECK(r.rule_count >= 3);
        if (strcmp(names[i], "island.json") == 0) {
            /* Sea level 0 since landscape evolution (was 8.5): a larger island, its valleys
             * draining to the coast. */
            CHECK(r.cells_x == 128 && r.size_x == 4096 && r.sea_level == 0); /* 32 m cells */
            int shore = -1;
            for (uint32_t k = 0; k < r.rule_count; k++)
                if (strcmp(r.rules[k].id, "shoreline") == 0) shore = (int)k;
            CHECK(shore >= 0);
            if (shore >= 0) {
                CHECK(strcmp(r.rules[shore].biome, "sand") == 0);
                CHECK(r.rules[shore].water_distance.set);
            }
        }
        /* The default work budget lets every example run, at its own grid and at 4097 x 4097
         * samples with ten times room to spare. */
        for (int grid = 0; grid < 2; grid++) {
            if (grid) r.cells_x = r.cells_z = 4096;
            trn_graph g;
            CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
            uint64_t work[64] = {0};
            CHECK(g.node_count <= 64);
            CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
            for (uint32_t k = 0; k < g.node_count && k < 64; k++)
                if (work[k] > TRN_WORK_BUDGET_DEFAULT / 10)
                    CHECK(!fprintf(stderr, "  %s node %s: work %llu\n", names[i], g.nodes[k].id,
                                   (unsigned long long)work[k]));
            trn_graph_diagnostics d;
            memset(&d, 0, sizeof d);
            CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, 0, &d, NULL));
            CHECK_EQ_INT(d.count, 0);
            trn_graph_diagnostics_dispose(&d);
            trn_graph_dispose(&g);
        }
        trn_recipe_dispose(&r);
    }
}

/* Malformed counts: the error names the element, and nothing reads a number that was never
 * parsed or converts one out of the integer range (UBSan aborted here once). */
static void test_errors_counts(void)
{
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [64, `\"x\"], \"seed\": 1}", TRN_ERR_JSON,
              "resolution[1]: expected a whole number 1..65536, found the string \"x\"");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [`\"x\", 64], \"seed\": 1}", TRN_ERR_JSON,
              "resolution[0]: expected a whole number 1..65536");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [`1e300, -1e300], \"seed\": 1}",
              TRN_ERR_JSON, "resolution[0]: expected a whole number 1..65536, found 1e+300");
    EXPECT_AT("{\"size\": [1, 1], \"resolution\": [8, `4294967296], \"seed\": 1}",
              TRN_ERR_JSON, "resolution[1]: expected a whole number 1..65536, found 4294967296");
    EXPECT_AT("{\"size\": [1, `\"y\"], \"resolution\": [8, 8]}", TRN_ERR_JSON,
              "size[1]: expected a number > 0 and <= 1e9");
    EXPECT_AT("{\"chunk_cells\": `1e19}", TRN_ERR_JSON,
              "chunk_cells: expected a whole number 1..65536, found 1e+19");
    EXPECT_LANDFORM(", \"octaves\": `1e12", TRN_ERR_JSON,
                    "octaves: expected a whole number 1..16, found 1000000000000");
    const char *head = "{\"size\": [100, 100], \"resolution\": [8, 8], \"seed\": 1, "
                       "\"landforms\": {\"a\": {}}, \"default_landform\": \"a\", "
                       "\"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"default_biome\": \"g\", "
                       "\"edits\": [{\"type\": \"protect\", \"grid\": ";
    char text[600];
    snprintf(text, sizeof text, "%s[8, `1e300], \"samples\": [[0, 0, 1]]}]}", head);
    EXPECT_AT(text, TRN_ERR_JSON, "edits[0].grid[1]: expected a whole number 1..65536");
    snprintf(text, sizeof text, "%s[`\"8\", 8], \"samples\": [[0, 0, 1]]}]}", head);
    EXPECT_AT(text, TRN_ERR_JSON, "edits[0].grid[0]: expected a whole number 1..65536");
    snprintf(text, sizeof text, "%s[8, `-3], \"samples\": [[0, 0, 1]]}]}", head);
    EXPECT_AT(text, TRN_ERR_JSON, "edits[0].grid[1]: expected a whole number 1..65536, found -3");
    /* The largest grid is read exactly; its samples are indexed against it. */
    snprintf(text, sizeof text, "%s[65535, 1], \"samples\": [[65535, `2, 1]]}]}", head);
    EXPECT_AT(text, TRN_ERR_JSON, "sample (65535, 2) is outside the 65535 x 1 cell grid");
}

/* Strokes are held to the work budget together, before anything is generated: each stamp
 * costs the samples inside its reach (here every stamp covers all 81 samples). The landform
 * node (81 samples x 1 octave) is held to the same budget on its own. */
static void test_strokes_work_budget(void)
{
    const char *text =
        "{\"size\": [256, 256], \"resolution\": [8, 8], \"seed\": 1,\n"
        " \"landforms\": {\"a\": {\"octaves\": 1}}, \"default_landform\": \"a\",\n"
        " \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}, \"s\": {\"color\": [1, 1, 0, 1]}},\n"
        " \"default_biome\": \"g\",\n"
        " \"regions\": [{\"type\": \"region\", \"biome\": \"s\", \"radius\": 1000, "
        "\"center\": [128, 128]}],\n"
        " \"edits\": [{\"type\": \"lower\", \"radius\": 1000, \"center\": [0, 0]},\n"
        "  {\"type\": \"raise\", \"radius\": 1000, \"points\": [[0, 0], [128, 128], [256, 256]]}]}";
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "s.json", &r, NULL, &e));
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_generated gen;
    o.max_work = 5 * 81;
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    trn_generated_dispose(&gen);
    o.max_work = 5 * 81 - 1;
    CHECK_STATUS(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "edits[1]: the strokes' work 405 (samples inside each stamp's "
                              "reach, 3 strokes) exceeds the work budget of 404; the costliest is "
                              "this raise stroke: 3 stamps of radius 1000, work 243");
    CHECK(gen.field.heights == NULL);
    o.max_work = 0; /* the default */
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    trn_generated_dispose(&gen);
    o.max_work = TRN_WORK_UNLIMITED;
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    trn_generated_dispose(&gen);
    /* A disabled layer's strokes cost nothing. */
    r.layers[2].enabled = false; /* sculpt */
    CHECK(strcmp(r.layers[2].id, "sculpt") == 0);
    o.max_work = 81;
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    trn_generated_dispose(&gen);
    o.max_work = 80;
    CHECK_STATUS(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "regions[0]: the strokes' work 81 (");
    trn_recipe_dispose(&r);
}

/* Limits at their value: the largest grid (65537^2 samples, 2^28 held whole) and 256 layers are
 * read, one more of either is refused. */
static void test_limits_exact(void)
{
    const char *tail = ", \"seed\": 1, \"default_landform\": \"a\", \"landforms\": {\"a\": {}}, "
                       "\"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [0, 0, 0, 0]}}";
    char text[8192];
    trn_recipe r;
    trn_error e;
    /* 65537^2 samples are read (tiled generation); a whole grid holds at most 2^28, and
     * generation says so before it allocates anything. */
    snprintf(text, sizeof text, "{\"size\": [1, 1], \"resolution\": [65536, 65536]%s}", tail);
    CHECK_OK(trn_recipe_parse(text, strlen(text), "big.json", &r, NULL, &e));
    CHECK(r.cells_x == 65536 && r.cells_z == 65536);
    trn_generated gen;
    CHECK_STATUS(trn_recipe_generate(&r, NULL, &gen, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "resolution: 65536 x 65536 cells make 4295098369 samples; "
                              "generation holds the whole grid, at most 268435456 samples");
    trn_recipe_dispose(&r);
    snprintf(text, sizeof text, "{\"size\": [1, 1], \"resolution\": [16383, 16384]%s}", tail);
    CHECK_OK(trn_recipe_parse(text, strlen(text), "big.json", &r, NULL, &e));
    CHECK_STATUS(trn_recipe_generate(&r, NULL, &gen, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "16383 x 16384 cells make 268451840 samples");
    /* 2^28 exactly is held whole (checked without generating 1 GiB of heights). */
    r.cells_z = 16383;
    CHECK_OK(trn_rcp_check_whole_grid(&r, "generation", &e));
    trn_recipe_dispose(&r);
    snprintf(text, sizeof text, "{\"size\": [1, 1], \"resolution\": [65536, 65537]%s}", tail);
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "big.json", &r, NULL, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "resolution[1]: expected a whole number 1..65536, found 65537");

    for (int n = 256; n <= 257; n++) {
        size_t cap = 512 + (size_t)n * 48, at = 0;
        char *t = malloc(cap);
        at += (size_t)snprintf(t, cap, "{\"size\": [1, 1], \"resolution\": [1, 1]%s, \"layers\": [",
                               tail);
        at += (size_t)snprintf(t + at, cap - at, "{\"id\": \"generation\"}");
        for (int k = 1; k < n; k++)
            at +=
                (size_t)snprintf(t + at, cap - at, ", {\"id\": \"l%d\", \"group\": \"sculpt\"}", k);
        snprintf(t + at, cap - at, "]}");
        trn_status st = trn_recipe_parse(t, strlen(t), "layers.json", &r, NULL, &e);
        if (n == 256) {
            CHECK_OK(st);
            CHECK_EQ_INT(r.layer_count, 256);
            trn_recipe_dispose(&r);
        } else {
            CHECK_STATUS(st, TRN_ERR_LIMIT);
            CHECK_CONTAINS(e.message, "layers: 257 layers; at most 256 are allowed");
        }
        free(t);
    }
}

/* Scene documents: each Terrain3D rule refused at its value, placeholders and BOMs accepted. */
static trn_status scene_of(const char *terrain, trn_error *e)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"s\", \"entities\": [\n"
             "  {\"id\": \"house\", \"components\": {}},\n"
             "  {\"id\": \"land\", \"components\": {\"Terrain3D\": %s}}\n]}\n",
             terrain);
    return trn_scene_document_check(text, strlen(text), "s.scene.json", e);
}

static void test_scene_document_check(void)
{
    trn_error e;
    CHECK_OK(scene_of("{}", &e)); /* a placeholder */
    CHECK_OK(scene_of("{\"asset\": \"asset://terrain/landscape\", \"lod_error_pixels\": 0, "
                      "\"surface_blending\": false, \"scatter_exclusions\": [\"a\", \"b\"]}",
                      &e));
    CHECK_OK(scene_of("{\"recipe\": {}, \"lod_error_pixels\": 2.5}", &e));
    CHECK_OK(scene_of("{\"payload\": \"s.land.terrain.bin\"}", &e));
    CHECK_STATUS(scene_of("{\"asset\": \"asset://t\", \"lod_error_pixels\": -1}", &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "entities[1].components.Terrain3D.lod_error_pixels: expected a "
                              "finite number of pixels >= 0");
    CHECK_CONTAINS(e.message, "found -1");
    CHECK_EQ_INT(e.line, 3);
    CHECK(strcmp(e.file, "s.scene.json") == 0);
    CHECK_STATUS(scene_of("{\"lod_error_pixels\": \"2\"}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "found a string");
    CHECK_STATUS(scene_of("{\"surface_blending\": 1}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "surface_blending: expected true or false, found a number");
    CHECK_STATUS(scene_of("{\"asset\": \"asset://t\", \"recipe\": {}}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "an asset reference or an inline recipe, not both");
    CHECK_STATUS(scene_of("{\"asset\": \"\"}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "asset: expected an asset reference");
    CHECK_STATUS(scene_of("{\"recipe\": 3}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "recipe: expected a recipe object, found a number");
    CHECK_STATUS(scene_of("[]", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "Terrain3D: expected an object, found an array");
    CHECK_STATUS(scene_of("{\"payload\": 7}", &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "payload: expected the file name");
    CHECK_STATUS(scene_of("{\"scatter_exclusions\": [\"a\", \"b\", \"a\"]}", &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "scatter_exclusions[2]: duplicate key 'a' (first at [0])");
    CHECK_STATUS(scene_of("{\"scatter_exclusions\": [\"a\", \"\"]}", &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "scatter_exclusions[1]: expected a nonempty placement key");
    CHECK_STATUS(scene_of("{\"scatter_exclusions\": {}}", &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "expected an array of placement keys");
    /* Syntax errors and a missing entity list. */
    const char *broken = "{\"entities\": [\n  {\"id\": }\n]}";
    CHECK_STATUS(trn_scene_document_check(broken, strlen(broken), "b.scene.json", &e), TRN_ERR_JSON);
    CHECK_EQ_INT(e.line, 2);
    CHECK_CONTAINS(e.message, "invalid JSON: ");
    const char *none = "{\"name\": \"s\"}";
    CHECK_STATUS(trn_scene_document_check(none, strlen(none), "n.scene.json", &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "expected an array of entities, found none");
    const char *bom = "\xEF\xBB\xBF{\"entities\": [{\"components\": {\"Terrain3D\": "
                      "{\"surface_blending\": null}}}]}";
    CHECK_STATUS(trn_scene_document_check(bom, strlen(bom), "b.scene.json", &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "found null");
    CHECK_EQ_INT(e.line, 1);
    CHECK_EQ_INT(e.column, 65);
}

int main(void)
{
    RUN(test_json_pos_locate);
    RUN(test_json_path_format);
    RUN(test_scene_document_check);
    RUN(test_parse_valid);
    RUN(test_errors_syntax);
    RUN(test_errors_top);
    RUN(test_errors_landform);
    RUN(test_errors_biome);
    RUN(test_errors_rule);
    RUN(test_errors_counts);
    RUN(test_limits_exact);
    RUN(test_strokes_work_budget);
    RUN(test_documents);
    RUN(test_canonical);
    RUN(test_canonical_locale);
    RUN(test_validate_struct);
    RUN(test_sea_level);
    RUN(test_asset_files);
    RUN(test_examples);
    return trn_test_finish();
}
