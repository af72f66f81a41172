/* Layers and strokes in recipe documents: parsing, defaults, errors with positions, canonical
 * form and cache key, brush weight, struct validation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "test.h"

static const char *const head =
    "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 1, \"default_landform\": \"a\", "
    "\"landforms\": {\"a\": {}}, \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, "
    "0, 0, 1]}, \"s\": {\"color\": [1, 1, 1, 1]}},\n";

/* head + tail + "}" */
static char *doc(const char *tail)
{
    size_t a = strlen(head), b = strlen(tail);
    char *t = malloc(a + b + 2);
    memcpy(t, head, a);
    memcpy(t + a, tail, b);
    t[a + b] = '}';
    t[a + b + 1] = '\0';
    return t;
}

/* tail holds one backtick where the error must point (tails are on line 2). */
static void expect_at(int at_line, const char *tail, trn_status code, const char *fragment)
{
    int before = trn_test_failures;
    char *marked = doc(tail);
    size_t n = strlen(marked), out = 0, mark = (size_t)-1;
    int line = 1, column = 1;
    char *text = malloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        if (marked[i] == '`' && mark == (size_t)-1) {
            mark = out;
            continue;
        }
        if (mark == (size_t)-1) {
            if (marked[i] == '\n') {
                line++;
                column = 1;
            } else {
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
    trn_status st = trn_recipe_parse(text, out, "l.json", &r, NULL, &e);
    CHECK_STATUS(st, code);
    CHECK_CONTAINS(e.message, fragment);
    CHECK_EQ_INT(e.line, line);
    CHECK_EQ_INT(e.column, column);
    CHECK_EQ_INT(e.offset, (int64_t)mark);
    CHECK(r.layers == NULL && r.strokes == NULL && r.stroke_count == 0);
    if (trn_test_failures != before)
        fprintf(stderr, "  (case at %s:%d: got %s \"%s\" at %d:%d offset %lld)\n", __FILE__,
                at_line, trn_status_name(st), e.message, e.line, e.column, (long long)e.offset);
    free(text);
    free(marked);
}

#define EXPECT_AT(tail, code, frag) expect_at(__LINE__, tail, code, frag)

static trn_status parse_tail(const char *tail, trn_recipe *r, trn_error *e)
{
    char *t = doc(tail);
    trn_status st = trn_recipe_parse(t, strlen(t), "l.json", r, NULL, e);
    free(t);
    return st;
}

static char *canonical_of(const char *tail, uint64_t *key)
{
    trn_recipe r;
    trn_error e;
    char *text = NULL;
    CHECK_OK(parse_tail(tail, &r, &e));
    CHECK_OK(trn_recipe_canonical_json(&r, &text, NULL, &e));
    CHECK_OK(trn_recipe_cache_key(&r, key, &e));
    trn_recipe_dispose(&r);
    return text;
}

static void test_names_and_weight(void)
{
    CHECK(strcmp(trn_layer_group_name(TRN_LAYER_GENERATION), "generation") == 0);
    CHECK(strcmp(trn_layer_group_name(TRN_LAYER_EXCLUSIONS), "exclusions") == 0);
    CHECK(strcmp(trn_layer_group_name(TRN_LAYER_GROUP_COUNT), "unknown") == 0);
    CHECK(strcmp(trn_stroke_kind_name(TRN_STROKE_SMOOTH), "smooth") == 0);
    CHECK(strcmp(trn_stroke_kind_name(TRN_STROKE_REGION), "region") == 0);
    CHECK(strcmp(trn_stroke_kind_name(TRN_STROKE_KIND_COUNT), "unknown") == 0);
    CHECK(trn_stroke_kind_group(TRN_STROKE_LOWER) == TRN_LAYER_SCULPT);
    CHECK(trn_stroke_kind_group(TRN_STROKE_PROTECT) == TRN_LAYER_PROTECTION);
    CHECK(trn_stroke_kind_group(TRN_STROKE_REGION) == TRN_LAYER_BIOMES);
    CHECK(trn_stroke_kind_group(TRN_STROKE_EXCLUSION) == TRN_LAYER_EXCLUSIONS);

    /* radius 10, falloff 0.5: 1 up to 5, smoothstep to 0 at 10. */
    CHECK(trn_brush_weight(0, 10, 0.5) == 1);
    CHECK(trn_brush_weight(5, 10, 0.5) == 1);
    CHECK(trn_brush_weight(7.5, 10, 0.5) == 0.5);
    CHECK(fabs(trn_brush_weight(6, 10, 0.5) - 0.896) < 1e-12);
    CHECK(fabs(trn_brush_weight(9, 10, 0.5) - 0.104) < 1e-12);
    CHECK(trn_brush_weight(10, 10, 0.5) == 0);
    CHECK(trn_brush_weight(11, 10, 0.5) == 0);
    /* falloff 0: a hard disc; falloff 1: smoothstep from the centre. */
    CHECK(trn_brush_weight(9.999, 10, 0) == 1);
    CHECK(trn_brush_weight(10, 10, 0) == 0);
    CHECK(trn_brush_weight(0, 10, 1) == 1);
    CHECK(trn_brush_weight(5, 10, 1) == 0.5);
    CHECK(trn_brush_weight(NAN, 10, 0.5) == 0);
    CHECK(trn_brush_weight(1, 0, 0.5) == 0);
    /* Decreasing with distance. */
    double prev = 2;
    for (int i = 0; i <= 100; i++) {
        double w = trn_brush_weight(i * 0.1, 10, 0.7);
        CHECK(w <= prev && w >= 0 && w <= 1);
        prev = w;
    }
    trn_stroke_dispose(NULL);
}

static void test_parse_defaults(void)
{
    trn_recipe r;
    trn_error e;
    /* No layers: the five defaults, in order, enabled, named after their ids. */
    CHECK_OK(parse_tail("\"chunk_cells\": 8", &r, &e));
    CHECK(!r.has_layers);
    CHECK_EQ_INT(r.layer_count, 5);
    for (uint32_t i = 0; i < r.layer_count; i++) {
        CHECK(r.layers[i].group == (trn_layer_group)i && r.layers[i].enabled);
        CHECK(strcmp(r.layers[i].id, trn_layer_group_name((trn_layer_group)i)) == 0);
        CHECK(strcmp(r.layers[i].name, r.layers[i].id) == 0);
    }
    trn_recipe_dispose(&r);

    CHECK_OK(parse_tail(
        "\"exclusions\": [{\"type\": \"exclusion\", \"radius\": 3, \"center\": [4, 5]}],\n"
        "\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"points\": [[1, 2], [1, 2], [3, 4]]},\n"
        " {\"type\": \"lower\", \"radius\": 2, \"strength\": 7.5, \"center\": [0, 0]},\n"
        " {\"type\": \"flatten\", \"radius\": 2, \"target_height\": -3, \"center\": [0, 0]},\n"
        " {\"type\": \"smooth\", \"radius\": 2, \"strength\": 0.25, \"falloff\": 1, \"center\": "
        "[0, 0]},\n"
        " {\"type\": \"protect\", \"layer\": \"protection\", \"grid\": [16, 8], \"samples\": [[0, "
        "0, 1.5], [16, 8, -2], [3, 1, 0]]}],\n"
        "\"regions\": [{\"type\": \"region\", \"biome\": \"s\", \"radius\": 9, \"points\": [[6, "
        "7]]}]",
        &r, &e));
    CHECK_EQ_INT(r.stroke_count, 7);
    /* Document order by section: regions, then edits, then exclusions. */
    const trn_stroke *s = r.strokes;
    CHECK(s[0].kind == TRN_STROKE_REGION && strcmp(s[0].biome, "s") == 0 && s[0].radius == 9);
    CHECK(s[1].kind == TRN_STROKE_RAISE && s[1].point_count == 3 && s[1].strength == 1);
    CHECK(s[1].points[0] == 1 && s[1].points[1] == 2 && s[1].points[2] == 1 && s[1].points[5] == 4);
    CHECK(s[1].falloff == 0.5 && s[1].layer == NULL);
    CHECK(s[2].kind == TRN_STROKE_LOWER && s[2].strength == 7.5);
    CHECK(s[3].kind == TRN_STROKE_FLATTEN && s[3].target_height == -3);
    CHECK(s[4].kind == TRN_STROKE_SMOOTH && s[4].strength == 0.25 && s[4].falloff == 1);
    CHECK(s[5].kind == TRN_STROKE_PROTECT && s[5].grid_cells_x == 16 && s[5].grid_cells_z == 8);
    CHECK_EQ_INT(s[5].sample_count, 3);
    CHECK_EQ_INT(s[5].sample_index[0], 0);
    CHECK_EQ_INT(s[5].sample_index[1], 8 * 17 + 16);
    CHECK_EQ_INT(s[5].sample_index[2], 1 * 17 + 3);
    CHECK(s[5].sample_height[0] == 1.5f && s[5].sample_height[1] == -2.0f);
    CHECK(strcmp(s[5].layer, "protection") == 0);
    CHECK(s[6].kind == TRN_STROKE_EXCLUSION && !s[6].erase && s[6].point_count == 1);
    CHECK(s[6].points[0] == 4 && s[6].points[1] == 5);
    /* Layers the strokes land on. */
    CHECK(trn_recipe_stroke_layer(&r, &s[0]) == &r.layers[1]);
    CHECK(trn_recipe_stroke_layer(&r, &s[1]) == &r.layers[2]);
    CHECK(trn_recipe_stroke_layer(&r, &s[5]) == &r.layers[3]);
    CHECK(trn_recipe_stroke_layer(&r, &s[6]) == &r.layers[4]);
    CHECK(trn_recipe_stroke_layer(&r, NULL) == NULL);
    CHECK_OK(trn_recipe_validate(&r, &e));
    trn_recipe_dispose(&r);
    CHECK(r.strokes == NULL && r.layers == NULL);

    /* Listed layers: the default ids imply their group, a name defaults to the id. */
    CHECK_OK(
        parse_tail("\"layers\": [{\"id\": \"generation\"}, {\"id\": \"roads\", \"group\": "
                   "\"sculpt\", \"enabled\": false}, {\"id\": \"sculpt\", \"name\": \"Hills\"}]",
                   &r, &e));
    CHECK(r.has_layers && r.layer_count == 3);
    CHECK(r.layers[1].group == TRN_LAYER_SCULPT && !r.layers[1].enabled);
    CHECK(strcmp(r.layers[1].name, "roads") == 0);
    CHECK(strcmp(r.layers[2].name, "Hills") == 0 && r.layers[2].group == TRN_LAYER_SCULPT);
    trn_recipe_dispose(&r);
}

/* A rule belongs to a biome layer: another group's layer or none of that name is refused at
 * the rule's "layer"; a rule on a disabled biome layer is not evaluated, one without a layer
 * follows the first biomes layer. */
static void test_rule_layers(void)
{
    trn_recipe r;
    trn_error e;
    static const char layers[] = "\"layers\": [{\"id\": \"generation\"}, {\"id\": \"biomes\"}, "
                                 "{\"id\": \"snowy\", \"group\": \"biomes\", \"enabled\": false}, "
                                 "{\"id\": \"sculpt\"}], ";
    char tail[600];
    snprintf(tail, sizeof tail,
             "%s\"rules\": [{\"id\": \"a\", \"biome\": \"s\", \"layer\": \"snowy\"}, {\"id\": "
             "\"b\", \"biome\": \"s\", \"layer\": \"biomes\"}, {\"id\": \"c\", \"biome\": \"s\"}]",
             layers);
    CHECK_OK(parse_tail(tail, &r, &e));
    CHECK(!trn_recipe_rule_active(&r, &r.rules[0]));
    CHECK(trn_recipe_rule_active(&r, &r.rules[1]));
    CHECK(trn_recipe_rule_active(&r, &r.rules[2]));
    trn_recipe_dispose(&r);
    /* A rule naming no layer belongs to the first biomes layer: disabling that layer removes
     * it, as it removes the regions naming no layer. */
    static const char off[] = "\"layers\": [{\"id\": \"generation\"}, {\"id\": \"biomes\", "
                              "\"enabled\": false}, {\"id\": \"sculpt\"}], ";
    snprintf(tail, sizeof tail,
             "%s\"rules\": [{\"id\": \"c\", \"biome\": \"s\"}, {\"id\": \"b\", \"biome\": "
             "\"s\", \"layer\": \"biomes\"}]",
             off);
    CHECK_OK(parse_tail(tail, &r, &e));
    CHECK(!trn_recipe_rule_active(&r, &r.rules[0]));
    CHECK(!trn_recipe_rule_active(&r, &r.rules[1]));
    trn_recipe_dispose(&r);
    /* Generation: the disabled layer's rule claims nothing; enabled, it claims every sample. */
    for (int on = 0; on < 2; on++) {
        snprintf(tail, sizeof tail,
                 "\"layers\": [{\"id\": \"generation\"}, {\"id\": \"snowy\", \"group\": "
                 "\"biomes\", \"enabled\": %s}], \"rules\": [{\"id\": \"a\", \"biome\": \"s\", "
                 "\"layer\": \"snowy\"}]",
                 on ? "true" : "false");
        CHECK_OK(parse_tail(tail, &r, &e));
        trn_generated g;
        CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
        size_t claimed = 0;
        for (size_t k = 0; k < trn_field_sample_count(&g.field); k++)
            claimed += g.biomes.values[k] == 1;
        CHECK_EQ_INT(claimed, on ? 17u * 17u : 0u);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    snprintf(tail, sizeof tail,
             "%s\"rules\": [{\"id\": \"a\", \"biome\": \"s\", \"layer\": `\"sculpt\"}]", layers);
    EXPECT_AT(tail, TRN_ERR_JSON,
              "rules[0].layer: layer 'sculpt' is a sculpt layer; a rule belongs to a biome layer "
              "(biomes, snowy)");
    snprintf(tail, sizeof tail,
             "%s\"rules\": [{\"id\": \"a\", \"biome\": \"s\", \"layer\": `\"paint\"}]", layers);
    EXPECT_AT(tail, TRN_ERR_JSON,
              "rules[0].layer: no layer named 'paint' (biome layers: biomes, snowy)");
}

static void test_errors(void)
{
    const trn_status J = TRN_ERR_JSON;
    EXPECT_AT("\"layers\": [`3]", J, "layers[0]: expected a layer object");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\", `\"colour\": 1}]", J,
              "unknown key 'colour' in layers[0]");
    EXPECT_AT("\"layers\": [{\"id\": `\"\"}]", J, "layers[0].id: expected a layer id");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\"}, `{\"id\": \"roads\"}]", J,
              "layers[1]: missing required key 'group'");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\"}, {\"id\": \"r\", \"group\": `\"paint\"}]", J,
              "layers[1].group: expected generation, biomes, sculpt, protection or exclusions, "
              "found the string \"paint\"");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\", \"enabled\": `1}]", J,
              "layers[0].enabled: expected true or false, found 1");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\", \"name\": `\"\"}]", J,
              "layers[0].name: expected a layer name");
    EXPECT_AT("\"layers\": `[{\"id\": \"sculpt\"}]", J,
              "layers: no generation layer; the generation layer cannot be removed");
    EXPECT_AT("\"layers\": `[]", J, "layers: expected at least the generation layer");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\"}, {\"id\": `\"generation\"}]", J,
              "layers[1].id: two layers have the id 'generation'");
    EXPECT_AT("\"layers\": [{\"id\": \"sculpt\"}, {\"id\": `\"sculpt\", \"group\": \"biomes\"}, "
              "{\"id\": \"generation\"}, {\"id\": \"sculpt\"}]",
              J, "layers[1].id: two layers have the id 'sculpt'");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\"}, `{\"id\": \"g2\", \"group\": "
              "\"generation\"}]",
              J, "layers[1]: a second generation layer");
    EXPECT_AT("\"layers\": [{\"id\": `\"base\", \"group\": \"generation\"}]", J,
              "layers[0].id: the generation layer's id is \"generation\", found 'base'");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\", \"group\": `\"sculpt\"}]", J,
              "layers[0].group: the layer with id \"generation\" is the generation layer");

    EXPECT_AT("\"edits\": [`{\"radius\": 1}]", J, "edits[0]: missing required key 'type'");
    EXPECT_AT("\"edits\": [{\"type\": `\"dig\"}]", J,
              "edits[0].type: expected raise, lower, flatten, smooth, protect, region or "
              "exclusion, found the string \"dig\"");
    EXPECT_AT("\"edits\": [{\"type\": `\"region\"}]", J,
              "edits[0].type: a region stroke belongs in \"regions\", not in \"edits\"");
    EXPECT_AT("\"regions\": [{\"type\": `\"raise\"}]", J,
              "regions[0].type: a raise stroke belongs in \"edits\", not in \"regions\"");
    EXPECT_AT("\"exclusions\": [{\"type\": `\"protect\"}]", J,
              "a protect stroke belongs in \"edits\", not in \"exclusions\"");
    EXPECT_AT("\"edits\": [`{\"type\": \"raise\", \"center\": [0, 0]}]", J,
              "edits[0]: missing required key 'radius'");
    EXPECT_AT("\"edits\": [`{\"type\": \"raise\", \"radius\": 1}]", J,
              "edits[0]: missing required key 'points'");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"points\": [[0, 0]], `\"center\": "
              "[0, 0]}]",
              J, "edits[0].center: give either \"points\" or \"center\", not both");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"points\": `[]}]", J,
              "edits[0].points: expected a non-empty array of [x, z] positions");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"points\": [[0, 0], `[1]]}]", J,
              "edits[0].points[1]: expected [x, z], two numbers");
    EXPECT_AT(
        "\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"points\": [[0, `\"x\"]]}]", J,
        "edits[0].points[0][1]: expected a position from -1e9 to 1e9 (world units), found the "
        "string \"x\"");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": [0, `null]}]", J,
              "edits[0].center[1]: expected a position from -1e9 to 1e9");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": [`-2e9, 0]}]", J,
              "edits[0].center[0]: expected a position from -1e9 to 1e9 (world units), found "
              "-2000000000");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": `5}]", J,
              "edits[0].center: expected [x, z], two numbers, found 5");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": `0, \"center\": [0, 0]}]", J,
              "edits[0].radius: expected a radius > 0 and <= 1e9, found 0");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": `\"big\", \"center\": [0, 0]}]", J,
              "edits[0].radius: expected a radius > 0 (world units), found the string \"big\"");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"strength\": `-1, \"center\": [0, "
              "0]}]",
              J, "edits[0].strength: expected metres per stamp, a number from 0 to 1e9, found -1");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": [0, 0]}, {\"type\": "
              "\"smooth\", \"radius\": 1, \"strength\": `1.5, \"center\": [0, 0]}]",
              J, "edits[1].strength: expected a blend per stamp from 0 to 1, found 1.5");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"falloff\": `2, \"center\": [0, "
              "0]}]",
              J, "edits[0].falloff: expected a number from 0 to 1, found 2");
    EXPECT_AT("\"edits\": [`{\"type\": \"flatten\", \"radius\": 1, \"center\": [0, 0]}]", J,
              "edits[0]: missing required key 'target_height'");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, `\"target_height\": 3, \"center\": "
              "[0, 0]}]",
              J, "edits[0].target_height: a raise stroke has no 'target_height'");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"radius\": 1, `\"radios\": 3}]", J,
              "unknown key 'radios' in edits[0]; did you mean 'radius'?");
    EXPECT_AT("\"edits\": [{\"type\": \"raise\", \"layer\": `\"hills\", \"radius\": 1, \"center\": "
              "[0, 0]}]",
              J, "edits[0].layer: no layer with the id 'hills'");
    EXPECT_AT(
        "\"edits\": [{\"type\": \"raise\", \"layer\": `\"biomes\", \"radius\": 1, \"center\": "
        "[0, 0]}]",
        J,
        "edits[0].layer: layer 'biomes' is a biomes layer; a raise stroke goes on a "
        "sculpt layer");
    EXPECT_AT("\"layers\": [{\"id\": \"generation\"}], \"edits\": [{\"type\": `\"raise\", "
              "\"radius\": 1, \"center\": [0, 0]}]",
              J, "edits[0].type: no sculpt layer to hold a raise stroke");
    EXPECT_AT("\"regions\": [`{\"type\": \"region\", \"radius\": 1, \"center\": [0, 0]}]", J,
              "regions[0]: missing required key 'biome'");
    EXPECT_AT("\"regions\": [{\"type\": \"region\", \"radius\": 1, \"center\": [0, 0], \"biome\": "
              "`\"lava\"}]",
              J, "regions[0].biome: no biome named 'lava' (biomes: g, s)");
    EXPECT_AT("\"exclusions\": [{\"type\": \"exclusion\", \"radius\": 1, \"center\": [0, 0], "
              "\"mode\": `\"cut\"}]",
              J, "exclusions[0].mode: expected \"exclude\" or \"erase\", found the string \"cut\"");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 4], `\"radius\": 1}]", J,
              "edits[0].radius: a protect stroke is a snapshot (grid and samples); it has no "
              "'radius'");
    EXPECT_AT("\"edits\": [`{\"type\": \"protect\", \"samples\": [[0, 0, 1]]}]", J,
              "edits[0]: missing required key 'grid'");
    EXPECT_AT("\"edits\": [`{\"type\": \"protect\", \"grid\": [4, 4]}]", J,
              "edits[0]: missing required key 'samples'");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, `0], \"samples\": [[0, 0, 1]]}]",
              J, "edits[0].grid[1]: expected a whole number 1..65536, found 0");
    /* Edits apply to grids held whole: a snapshot's grid holds at most 2^28 samples. */
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": `[16384, 16383], \"samples\": "
              "[[0, 0, 1]]}]",
              TRN_ERR_LIMIT,
              "edits[0].grid: a 16384 x 16383-cell grid has more than 268435456 samples, the "
              "most an edited (whole) grid holds");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"samples\": [[0, 0, 1], [`5, 1, 2]], \"grid\": "
              "[4, 4]}]",
              J, "edits[0].samples[1][0]: sample (5, 1) is outside the 4 x 4 cell grid");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 2], \"samples\": [[1, `3, 1]]}]",
              J, "edits[0].samples[0][1]: sample (1, 3) is outside the 4 x 2 cell grid");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 2], \"samples\": [[1, `-1, 1]]}]",
              J, "edits[0].samples[0][1]: expected a sample index 0..65536, found -1");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 2], \"samples\": [`[1, 1]]}]", J,
              "edits[0].samples[0]: expected [i, j, height]");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 2], \"samples\": [[1, 1, `2e9]]}]",
              J, "edits[0].samples[0][2]: expected a height from -1e9 to 1e9");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"grid\": [4, 2], \"samples\": `[]}]", J,
              "edits[0].samples: expected a non-empty array of [i, j, height] samples");
    EXPECT_AT("\"edits\": [{\"type\": \"protect\", \"layer\": `\"sculpt\", \"grid\": [4, 2], "
              "\"samples\": [[0, 0, 0]]}]",
              J, "layer 'sculpt' is a sculpt layer; a protect stroke goes on a protection layer");
    /* Paths count entries within their section, whatever came before. */
    EXPECT_AT("\"regions\": [{\"type\": \"region\", \"biome\": \"s\", \"radius\": 1, \"center\": "
              "[0, 0]}], \"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": [0, 0]}, "
              "{\"type\": \"raise\", \"radius\": `-2, \"center\": [0, 0]}]",
              J, "edits[1].radius: expected a radius > 0");
}

static void test_canonical(void)
{
    uint64_t k1, k2, k3;
    /* center and a one-point list are the same stamp: same text, same key. */
    char *a = canonical_of(
        "\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [1.5, 2]}]", &k1);
    char *b = canonical_of(
        "\"edits\": [{\"points\": [[1.5, 2]], \"strength\": 1, \"falloff\": 0.5, \"radius\": 2, "
        "\"type\": \"raise\"}]",
        &k2);
    CHECK(a && b && strcmp(a, b) == 0);
    CHECK(k1 == k2);
    CHECK_CONTAINS(a, "\"edits\":[{\"points\":[[1.5,2]],\"radius\":2,\"type\":\"raise\"}]");
    CHECK(strstr(a, "\"layers\"") == NULL);
    /* Consecutive entries with the same settings are one entry in canonical form (what
     * terrane compact writes): the same stamps, the same key. */
    char *c =
        canonical_of("\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [1.5, 2]}, "
                     "{\"type\": \"raise\", \"radius\": 2, \"points\": [[3, 4], [1.5, 2]]}, "
                     "{\"type\": \"raise\", \"radius\": 2, \"strength\": 2, \"center\": [0, 0]}, "
                     "{\"type\": \"raise\", \"radius\": 2, \"strength\": 2, \"center\": [1, 0]}]",
                     &k3);
    CHECK_CONTAINS(c, "\"edits\":[{\"points\":[[1.5,2],[3,4],[1.5,2]],\"radius\":2,\"type\":"
                      "\"raise\"},{\"points\":[[0,0],[1,0]],\"radius\":2,\"strength\":2,"
                      "\"type\":\"raise\"}]");
    char *d = canonical_of(
        "\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"points\": [[1.5, 2], [3, 4], [1.5, "
        "2]]}, {\"type\": \"raise\", \"radius\": 2, \"strength\": 2, \"points\": [[0, 0], [1, "
        "0]]}]",
        &k2);
    CHECK(c && d && strcmp(c, d) == 0 && k2 == k3);
    free(c), free(d);
    /* Different settings, layers or kinds in between keep entries apart. */
    c = canonical_of(
        "\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [0, 0]}, {\"type\": "
        "\"raise\", \"layer\": \"sculpt\", \"radius\": 2, \"center\": [0, 0]}, {\"type\": "
        "\"lower\", \"radius\": 2, \"center\": [0, 0]}, {\"type\": \"raise\", \"radius\": 2, "
        "\"falloff\": 0.25, \"center\": [0, 0]}, {\"type\": \"protect\", \"grid\": [1, 1], "
        "\"samples\": [[0, 0, 0]]}, {\"type\": \"protect\", \"grid\": [1, 1], \"samples\": [[0, "
        "0, 0]]}]",
        &k2);
    CHECK_CONTAINS(c, "\"type\":\"raise\"},{\"layer\":\"sculpt\",\"points\":[[0,0]]");
    CHECK(strstr(c, "[[0,0],[0,0]]") == NULL);
    CHECK_CONTAINS(c, "\"type\":\"protect\"},{\"grid\":[1,1]");
    free(c);
    /* A repeated stamp changes the result, so it changes the key. */
    c = canonical_of(
        "\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"points\": [[1.5, 2], [1.5, 2]]}]", &k3);
    CHECK(k3 != k1);
    free(a), free(b), free(c);

    /* The five default layers spelled out are the defaults: omitted, same key as none. */
    a = canonical_of("\"layers\": [{\"id\": \"generation\"}, {\"id\": \"biomes\"}, {\"id\": "
                     "\"sculpt\", \"name\": \"sculpt\"}, {\"id\": \"protection\", \"enabled\": "
                     "true}, {\"id\": \"exclusions\", \"group\": \"exclusions\"}]",
                     &k1);
    b = canonical_of("\"chunk_cells\": 32", &k2);
    CHECK(a && b && strcmp(a, b) == 0 && k1 == k2);
    free(a), free(b);

    /* Everything non-default, printed and read back to the same bytes. */
    const char *all =
        "\"layers\": [{\"id\": \"generation\", \"enabled\": false}, {\"id\": \"paint\", \"name\": "
        "\"Paint\", \"group\": \"biomes\"}, {\"id\": \"sculpt\"}, {\"id\": \"keep\", \"group\": "
        "\"protection\"}, {\"id\": \"exclusions\"}],\n"
        "\"regions\": [{\"type\": \"region\", \"biome\": \"s\", \"radius\": 0.1, \"falloff\": 0, "
        "\"strength\": 0.3, \"points\": [[1e-3, -4], [2, 2]]}],\n"
        "\"edits\": [{\"type\": \"flatten\", \"radius\": 5, \"target_height\": 12.25, \"center\": "
        "[3, "
        "3]}, {\"type\": \"protect\", \"layer\": \"keep\", \"grid\": [16, 16], \"samples\": [[16, "
        "16, "
        "0.1], [0, 1, 3]]}],\n"
        "\"exclusions\": [{\"type\": \"exclusion\", \"mode\": \"erase\", \"radius\": 1, "
        "\"points\": "
        "[[0, 0]]}, {\"type\": \"exclusion\", \"mode\": \"exclude\", \"radius\": 1, \"points\": "
        "[[0, "
        "0]]}]";
    a = canonical_of(all, &k1);
    CHECK_CONTAINS(a, "\"layers\":[{\"enabled\":false,\"id\":\"generation\"},{\"group\":\"biomes\","
                      "\"id\":\"paint\",\"name\":\"Paint\"},{\"id\":\"sculpt\"},{\"group\":"
                      "\"protection\",\"id\":\"keep\"},{\"id\":\"exclusions\"}]");
    CHECK_CONTAINS(a, "\"regions\":[{\"biome\":\"s\",\"falloff\":0,\"points\":[[0.001,-4],[2,2]],"
                      "\"radius\":0.1,\"strength\":0.3,\"type\":\"region\"}]");
    CHECK_CONTAINS(a, "{\"grid\":[16,16],\"layer\":\"keep\",\"samples\":[[16,16,0.1],[0,1,3]],"
                      "\"type\":\"protect\"}");
    CHECK_CONTAINS(a, "\"exclusions\":[{\"mode\":\"erase\",\"points\":[[0,0]],\"radius\":1,"
                      "\"type\":\"exclusion\"},{\"points\":[[0,0]],\"radius\":1,\"type\":"
                      "\"exclusion\"}]");
    CHECK_CONTAINS(a, "{\"points\":[[3,3]],\"radius\":5,\"target_height\":12.25,\"type\":"
                      "\"flatten\"}");
    /* Read the canonical text back: the same bytes again. */
    trn_recipe r;
    trn_error e;
    char *again = NULL;
    CHECK_OK(trn_recipe_parse(a, strlen(a), "c.json", &r, NULL, &e));
    CHECK_OK(trn_recipe_canonical_json(&r, &again, NULL, &e));
    CHECK(again && strcmp(a, again) == 0);
    CHECK_OK(trn_recipe_cache_key(&r, &k2, &e));
    CHECK(k1 == k2);
    trn_recipe_dispose(&r);
    free(a), free(again);
}

static void test_validate_struct(void)
{
    trn_recipe r;
    trn_error e;
    CHECK_OK(parse_tail("\"edits\": [{\"type\": \"raise\", \"radius\": 1, \"center\": [0, 0]}]", &r,
                        &e));
    trn_stroke *s = &r.strokes[0];
    s->radius = NAN;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "edits[0].radius: expected a radius > 0 and <= 1e9, found a "
                              "non-finite number");
    s->radius = 1;
    s->points[1] = INFINITY;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message,
                   "edits[0].points[0]: expected [x, z], two positions from -1e9 to 1e9");
    s->points[1] = 0;
    s->kind = (trn_stroke_kind)99;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "stroke 0 has an unknown kind 99");
    s->kind = TRN_STROKE_REGION;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "regions[0].biome: expected the name of a biome");
    s->kind = TRN_STROKE_PROTECT;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "edits[0].grid: expected a whole number 1..65536, found 0");
    s->grid_cells_x = 16384;
    s->grid_cells_z = 16383;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "edits[0].grid: a 16384 x 16383-cell grid has more than 268435456 "
                              "samples");
    s->grid_cells_x = s->grid_cells_z = 0;
    s->kind = TRN_STROKE_RAISE;
    /* Layers built in code: count 0 means the defaults; a group out of range is refused. */
    trn_layer *saved = r.layers;
    uint32_t saved_count = r.layer_count;
    r.layers = NULL;
    r.layer_count = 0;
    r.has_layers = false;
    CHECK_OK(trn_recipe_validate(&r, &e));
    CHECK(trn_recipe_stroke_layer(&r, s) != NULL &&
          strcmp(trn_recipe_stroke_layer(&r, s)->id, "sculpt") == 0);
    r.layers = saved;
    r.layer_count = saved_count;
    r.layers[2].group = (trn_layer_group)7;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "layers[2].group: expected generation, biomes");
    r.layers[2].group = TRN_LAYER_SCULPT;
    CHECK_OK(trn_recipe_validate(&r, &e));
    trn_recipe_dispose(&r);
}

static void test_change_grid(void)
{
    trn_recipe r;
    trn_error e;
    const char *strokes =
        "\"regions\": [{\"type\": \"region\", \"biome\": \"s\", \"radius\": 2, \"center\": "
        "[3, 4]}], \"edits\": [{\"type\": \"raise\", \"radius\": 2, \"points\": [[1, 2], [5, "
        "6]]}, {\"type\": \"raise\", \"radius\": 1, \"center\": [0, 0]}], \"exclusions\": "
        "[{\"type\": \"exclusion\", \"radius\": 1, \"center\": [0, 0]}]";
    CHECK_OK(parse_tail(strokes, &r, &e));
    /* Refuse: nothing changes, the message counts the strokes and names both options. */
    CHECK_STATUS(trn_recipe_change_grid(&r, 128, 128, 32, 32, TRN_EDITS_REFUSE, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "the recipe has 4 edits (2 raise, 1 exclusion, 1 region); changing "
                              "the grid from 16 x 16 to 32 x 32 cells");
    CHECK_CONTAINS(e.message, "--keep-edits");
    CHECK_CONTAINS(e.message, "--clear-edits");
    CHECK(r.size_x == 64 && r.cells_x == 16 && r.stroke_count == 4);
    /* The same grid is no change: every policy accepts it. */
    CHECK_OK(trn_recipe_change_grid(&r, 64, 64, 16, 16, TRN_EDITS_REFUSE, &e));
    CHECK_EQ_INT(r.stroke_count, 4);
    /* Keep: radial strokes stay where they were in terrain-local units. */
    CHECK_OK(trn_recipe_change_grid(&r, 128, 96, 32, 24, TRN_EDITS_KEEP, &e));
    CHECK(r.size_x == 128 && r.size_z == 96 && r.cells_x == 32 && r.cells_z == 24);
    CHECK_EQ_INT(r.stroke_count, 4);
    CHECK(r.strokes[1].points[2] == 5 && r.strokes[1].points[3] == 6 && r.strokes[0].radius == 2);
    CHECK_OK(trn_recipe_validate(&r, &e));
    /* Clear: regions, edits and exclusions go, layers stay. */
    CHECK_OK(trn_recipe_change_grid(&r, 128, 96, 8, 8, TRN_EDITS_CLEAR, &e));
    CHECK(r.stroke_count == 0 && r.strokes == NULL && r.layer_count == 5 && r.cells_x == 8);
    CHECK_OK(trn_recipe_validate(&r, &e));
    /* Bad arguments change nothing. */
    CHECK_STATUS(trn_recipe_change_grid(&r, 0, 96, 8, 8, TRN_EDITS_CLEAR, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "size: expected two numbers > 0");
    CHECK_STATUS(trn_recipe_change_grid(&r, 1, 1, 0, 8, TRN_EDITS_CLEAR, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "resolution: expected two whole numbers 1..65536, found 0 x 8");
    CHECK_STATUS(trn_recipe_change_grid(&r, 1, 1, 65537, 8, TRN_EDITS_CLEAR, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_change_grid(&r, 1, 1, 8, 8, (trn_edit_policy)9, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_change_grid(NULL, 1, 1, 8, 8, TRN_EDITS_CLEAR, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK(r.size_x == 128 && r.cells_x == 8);
    trn_recipe_dispose(&r);

    /* chunk_cells shrinks with the grid so the recipe stays valid. */
    CHECK_OK(parse_tail("\"chunk_cells\": 16", &r, &e));
    r.chunk_cells = 64;
    r.cells_x = r.cells_z = 64;
    CHECK_OK(trn_recipe_change_grid(&r, 64, 64, 8, 20, TRN_EDITS_REFUSE, &e));
    CHECK_EQ_INT(r.chunk_cells, 32);
    CHECK_OK(trn_recipe_validate(&r, &e));
    trn_recipe_dispose(&r);

    /* Keep with a protection snapshot: refused, tied to its grid. */
    CHECK_OK(parse_tail("\"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [1, "
                        "1]}, {\"type\": \"protect\", \"grid\": [16, 16], \"samples\": [[0, 0, "
                        "1]]}]",
                        &r, &e));
    CHECK_STATUS(trn_recipe_change_grid(&r, 64, 64, 32, 32, TRN_EDITS_KEEP, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "1 protection snapshot: protection snapshots are tied to the 16 x 16 "
                              "grid they were recorded on; clear them first (--clear-edits)");
    CHECK(r.cells_x == 16 && r.stroke_count == 2);
    /* A new size on the same grid keeps the snapshot's grid: still a change of world units. */
    CHECK_STATUS(trn_recipe_change_grid(&r, 32, 64, 16, 16, TRN_EDITS_KEEP, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_recipe_change_grid(&r, 64, 64, 32, 32, TRN_EDITS_CLEAR, &e));
    CHECK_EQ_INT(r.stroke_count, 0);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_names_and_weight);
    RUN(test_parse_defaults);
    RUN(test_errors);
    RUN(test_canonical);
    RUN(test_validate_struct);
    RUN(test_change_grid);
    RUN(test_rule_layers);
    return trn_test_finish();
}
