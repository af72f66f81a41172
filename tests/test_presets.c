/* Presets: built-ins parse and generate (golden hashes), terrain_preset documents, projects,
 * and applying a preset (stamps, refusals, keep/clear). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/presets.h"
#include "test.h"

static uint64_t hash_of(const void *data, size_t size)
{
    return (uint64_t)XXH64(data, size, 0);
}

/* Golden hashes of each built-in's heights and biomes (regenerate on purpose only: bump the
 * preset's version when they change). */
static const struct {
    const char *id;
    uint64_t heights, biomes;
} golden[] = {
    {"builtin://terrain/flat-building-site", 0x2a1d10b9f0f32cf5ull, 0xafdcabd92fe120f4ull},
    {"builtin://terrain/desert-dunes", 0x9b96df5083473e75ull, 0xd133f395b303ae8eull},
    {"builtin://terrain/rolling-hills", 0xdd220fbfeaf5e0b7ull, 0xb1d88a115e2cef77ull},
    {"builtin://terrain/mountain-range", 0xfb0edaa8ba8aaea9ull, 0x801658ac6d79767cull},
    {"builtin://terrain/basin", 0x5a7391d47a745555ull, 0x258292743f8f6d26ull},
    {"builtin://terrain/plateau", 0x31147c80d4f52ec9ull, 0x0de0c0418da34582ull},
    {"builtin://terrain/coastal-island", 0x809d0ae97d15c978ull, 0x8140941cdfb054c4ull},
    {"builtin://terrain/drainage-river", 0xb76aa679d1f71e1full, 0xef4de6d6df3279aeull},
};

static void test_builtins(void)
{
    CHECK_EQ_INT(trn_builtin_preset_count(), 8u);
    CHECK(trn_builtin_preset_id(8) == NULL);
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++) {
        const char *id = trn_builtin_preset_id(i);
        CHECK(strcmp(id, golden[i].id) == 0);
        trn_preset p;
        CHECK_OK(trn_builtin_preset_load(id, &p, NULL));
        CHECK(p.name && *p.name && p.description && strlen(p.description) > 40);
        CHECK(p.recipe.size_x == 128 && p.recipe.size_z == 128);
        CHECK(p.recipe.cells_x == 64 && p.recipe.cells_z == 64);
        CHECK(p.recipe.biome_count >= 3 && p.recipe.rule_count >= 2);
        CHECK(p.version == 1);
        /* the embedded text is an ordinary recipe */
        trn_recipe r;
        const char *text = trn_builtin_preset_text(id);
        CHECK_OK(trn_recipe_parse(text, strlen(text), id, &r, NULL, NULL));
        trn_generated g;
        CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
        size_t n = trn_field_sample_count(&g.field);
        uint64_t hh = hash_of(g.field.heights, n * sizeof(float));
        uint64_t hb = hash_of(g.biomes.values, n);
        if (hh != golden[i].heights || hb != golden[i].biomes)
            fprintf(stderr, "    {\"%s\", 0x%016llxull, 0x%016llxull},\n", id,
                    (unsigned long long)hh, (unsigned long long)hb);
        CHECK(hh == golden[i].heights);
        CHECK(hb == golden[i].biomes);
        /* every biome of the preset shows up somewhere: the rules are not dead */
        uint32_t seen[256] = {0};
        for (size_t k = 0; k < n; k++)
            seen[g.biomes.values[k]]++;
        for (uint32_t b = 0; b < r.biome_count; b++) {
            if (!seen[b]) fprintf(stderr, "%s: biome %s unused\n", id, r.biomes[b].name);
            CHECK(seen[b] > 0);
        }
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
        trn_preset_dispose(&p);
    }
    trn_preset p;
    trn_error err;
    CHECK_STATUS(trn_builtin_preset_load("builtin://terrain/volcano", &p, &err), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.message, "desert-dunes");
    CHECK(trn_builtin_preset_text("builtin://terrain/volcano") == NULL);
    trn_preset_dispose(NULL);
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static const char *const good_preset =
    "{\"format_version\": 1, \"name\": \"Wet lowland\", \"label\": \"lowland\",\n"
    " \"description\": \"Marsh and meadow\", \"cells_x\": 32, \"seed\": 9,\n"
    " \"default_biome\": \"marsh\",\n"
    " \"biomes\": {\"marsh\": {\"color\": [0.2, 0.4, 0.3, 1]}, \"meadow\": {\"color\": [0.4, "
    "0.6, 0.3, 1]}},\n"
    " \"rules\": [{\"id\": \"dry\", \"biome\": \"meadow\", \"elevation\": [10, 1000]}]}";

static void test_preset_document(void)
{
    trn_preset p;
    trn_error e;
    CHECK_OK(trn_preset_parse(good_preset, strlen(good_preset), "p.json", "asset://p", &p, &e));
    CHECK(strcmp(p.name, "Wet lowland") == 0 && strcmp(p.label, "lowland") == 0);
    CHECK(strcmp(p.description, "Marsh and meadow") == 0 && strcmp(p.id, "asset://p") == 0);
    CHECK_EQ_INT(p.fields, TRN_PRESET_CELLS_X | TRN_PRESET_SEED | TRN_PRESET_DEFAULT_BIOME |
                               TRN_PRESET_BIOMES | TRN_PRESET_RULES);
    CHECK(p.recipe.cells_x == 32 && p.recipe.seed == 9 && p.recipe.biome_count == 2);
    CHECK(p.recipe.rule_count == 1 && p.recipe.rules[0].elevation.min == 10);
    CHECK(p.recipe.layer_count == 0 && !p.recipe.has_layers && p.version == 1);
    trn_preset_dispose(&p);
    /* Read as a recipe, it is recognised and pointed to the right verbs. */
    CHECK_EQ_INT(trn_document_classify(good_preset, strlen(good_preset)),
                 TRN_DOCUMENT_TERRAIN_PRESET);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_TERRAIN_PRESET), "terrain preset") == 0);
    trn_recipe r;
    trn_document_kind kind;
    CHECK_STATUS(trn_recipe_parse(good_preset, strlen(good_preset), "p.json", &r, &kind, &e),
                 TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_TERRAIN_PRESET);
    CHECK_CONTAINS(e.message, "this is a terrain_preset document");
    CHECK(e.offset == 0 && e.line == 1);
    /* A recipe is still a recipe, and every built-in classifies as one. */
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++) {
        const char *bt = trn_builtin_preset_text(trn_builtin_preset_id(i));
        CHECK_EQ_INT(trn_document_classify(bt, strlen(bt)), TRN_DOCUMENT_RECIPE);
    }

    /* Errors: path, position, the recipe's own wording. */
    const char *t = "{\"format_version\": 1, \"name\": \"x\",\n \"landforms\": {}}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", "asset://p", &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "unknown key 'landforms' in the terrain_preset document");
    CHECK_CONTAINS(e.message, "regions, edits and exclusions stay the recipe's own");
    CHECK(e.line == 2 && e.column == 2 && e.offset == (int64_t)(strstr(t, "\"landforms") - t));
    CHECK(p.name == NULL && p.fields_json == NULL);

    t = "{\"format_version\": 1, \"name\": \"x\", \"seeds\": 3}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "did you mean 'seed'?");
    CHECK(e.offset == (int64_t)(strstr(t, "\"seeds") - t));

    t = "{\"format_version\": 1,\n \"description\": \"no name\"}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "missing key 'name'");
    CHECK(e.offset == 0 && e.line == 1 && e.column == 1);

    t = "{\"format_version\": 2, \"name\": \"x\"}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_VERSION);
    CHECK(e.offset == 19);
    t = "{\"name\": \"x\"}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "missing key 'format_version'");

    t = "{\"format_version\": 1, \"name\": \"x\", \"cells_z\": 0}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "cells_z: expected a whole number 1..65535");
    CHECK(e.offset == (int64_t)(strstr(t, "0}") - t));

    /* A rule with the recipe's grammar and rejections, at the rule's position. */
    t = "{\"format_version\": 1, \"name\": \"x\",\n \"rules\": [{\"id\": \"a\", \"biome\": \"b\", "
        "\"slope\": [10, 95]}]}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "rules[0].slope");
    CHECK(e.line == 2);
    t = "{\"format_version\": 1, \"name\": \"x\", \"rules\": [{\"id\": \"a\", \"biome\": \"b\", "
        "\"colour\": 1}]}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "unknown key 'colour' in rules[0]");
    /* A rule naming a biome the preset's biomes lack. */
    t = "{\"format_version\": 1, \"name\": \"x\", \"biomes\": {\"a\": {\"color\": [0, 0, 0, 1]}}, "
        "\"rules\": [{\"id\": \"r\", \"biome\": \"b\"}]}";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "rules[0].biome: unknown biome 'b'");
    CHECK(e.offset == (int64_t)(strstr(t, "\"b\"}") - t));
    /* Syntax errors. */
    t = "{\"format_version\": 1, \"name\": }";
    CHECK_STATUS(trn_preset_parse(t, strlen(t), "p.json", NULL, &p, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "invalid JSON");
}

static void test_project(void)
{
    char dir[512], sub[600];
    trn_test_tmpdir(dir, sizeof dir);
    trn_preset *all = NULL;
    uint32_t n = 7;
    trn_error e;
    /* An empty project has no presets, and that is fine. */
    CHECK_OK(trn_project_presets_load(dir, &all, &n, &e));
    CHECK(n == 0 && all == NULL);
    snprintf(sub, sizeof sub, "%s/presets", dir);
    CHECK(mkdir(sub, 0777) == 0);
    put(sub, "lowland.asset.json",
        "{\"format_version\": 1, \"type\": \"terrain_preset\", \"importer\": \"data\", "
        "\"source\": \"lowland.preset.json\"}");
    put(sub, "lowland.preset.json", good_preset);
    /* Other asset types are not presets. */
    put(dir, "landscape.asset.json",
        "{\"format_version\": 1, \"type\": \"Terrain\", \"importer\": \"terrain_heightfield\", "
        "\"source\": \"landscape.terrain.json\"}");
    /* A manifest with a byte order mark, and a broken manifest of no concern yet. */
    put(sub, "lowland.asset.json",
        "\xEF\xBB\xBF{\"format_version\": 1, \"type\": \"terrain_preset\", \"importer\": "
        "\"data\", \"source\": \"lowland.preset.json\"}");
    CHECK_OK(trn_project_presets_load(dir, &all, &n, &e));
    CHECK_EQ_INT(n, 1);
    if (n == 1) CHECK(strcmp(all[0].id, "asset://presets/lowland") == 0);
    trn_presets_free(all, n);
    trn_preset p;
    CHECK_OK(trn_preset_find(dir, "asset://presets/lowland", &p, &e));
    CHECK(strcmp(p.name, "Wet lowland") == 0);
    trn_preset_dispose(&p);
    CHECK_STATUS(trn_preset_find(dir, "asset://presets/upland", &p, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "no terrain_preset asset 'asset://presets/upland'");
    CHECK_OK(trn_preset_find(NULL, "builtin://terrain/basin", &p, &e));
    trn_preset_dispose(&p);
    CHECK_STATUS(trn_preset_find(dir, "terrain/basin", &p, &e), TRN_ERR_INVALID_ARGUMENT);
    /* A broken preset document is reported with its path and position. */
    put(sub, "lowland.preset.json", "{\"format_version\": 1, \"name\": \"x\", \"sede\": 1}");
    CHECK_STATUS(trn_project_presets_load(dir, &all, &n, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.file, "lowland.preset.json");
    CHECK(e.offset == 35 && e.line == 1 && e.column == 36 && n == 0 && all == NULL);
    /* A manifest that is not JSON, at its position. */
    put(sub, "lowland.preset.json", good_preset);
    put(dir, "broken.asset.json", "{\"type\": \"terrain_preset\",\n \"source\": }");
    CHECK_STATUS(trn_project_presets_load(dir, &all, &n, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.file, "broken.asset.json");
    CHECK(e.line == 2 && e.column == 12);
    put(dir, "broken.asset.json", "{\"type\": \"terrain_preset\", \"source\": \"/abs.json\"}");
    CHECK_STATUS(trn_project_presets_load(dir, &all, &n, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "source: expected the preset document's file name relative");
    put(dir, "broken.asset.json", "{\"type\": \"terrain_preset\", \"source\": \"gone.json\"}");
    CHECK_STATUS(trn_project_presets_load(dir, &all, &n, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.file, "gone.json");
    /* Not a folder. */
    snprintf(sub, sizeof sub, "%s/nothing", dir);
    CHECK_STATUS(trn_project_presets_load(sub, &all, &n, &e), TRN_ERR_NOT_FOUND);
}

static const char *const user_recipe =
    "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5, \"chunk_cells\": 8,"
    " \"default_landform\": \"l\", \"landforms\": {\"l\": {\"height_variation\": 10}},"
    " \"default_biome\": \"grass\", \"biomes\": {\"grass\": {\"color\": [0, 1, 0, 1]}},"
    " \"regions\": [{\"type\": \"region\", \"biome\": \"grass\", \"radius\": 3, \"center\": [4, "
    "4]}], \"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": [8, 8]}]}";

static void test_apply(void)
{
    trn_recipe r;
    trn_preset p;
    trn_error e;
    CHECK_OK(trn_recipe_parse(user_recipe, strlen(user_recipe), "u.json", &r, NULL, &e));
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/rolling-hills", &p, &e));
    /* A grid change with radial edits needs keep or clear; nothing changes meanwhile. */
    CHECK_STATUS(trn_recipe_apply_preset(&r, &p, TRN_EDITS_REFUSE, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "applying preset 'builtin://terrain/rolling-hills' changes the grid");
    CHECK_CONTAINS(e.message, "--keep-edits");
    CHECK(r.size_x == 64 && r.preset_id == NULL && r.stroke_count == 2);
    /* Keep: the preset's grid, landforms, biomes and rules; the user's strokes and chunks. */
    CHECK_OK(trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e));
    CHECK(r.size_x == 128 && r.cells_x == 64 && r.seed == 303 && r.chunk_cells == 8);
    CHECK(r.preset_id && strcmp(r.preset_id, "builtin://terrain/rolling-hills") == 0);
    CHECK(r.has_preset_version && r.preset_version == 1);
    CHECK(r.stroke_count == 2 && r.strokes[0].kind == TRN_STROKE_REGION);
    CHECK(r.strokes[1].points[0] == 8);
    CHECK(strcmp(r.default_landform, "hills") == 0 && r.biome_count == 3 && r.rule_count == 2);
    CHECK(r.has_sea_level && r.sea_level == -100);
    /* The stamp survives the canonical trip and a second application is the same. */
    char *a = NULL, *b = NULL;
    size_t an, bn;
    CHECK_OK(trn_recipe_canonical_json(&r, &a, &an, NULL));
    CHECK(a && strstr(a, "\"preset_id\":\"builtin://terrain/rolling-hills\"") &&
          strstr(a, "\"preset_version\":1"));
    CHECK_OK(trn_recipe_apply_preset(&r, &p, TRN_EDITS_REFUSE, &e));
    CHECK_OK(trn_recipe_canonical_json(&r, &b, &bn, NULL));
    CHECK(an == bn && a && b && memcmp(a, b, an) == 0);
    free(a);
    free(b);
    trn_preset_dispose(&p);

    /* A region naming a biome the preset lacks: refused, saying which and why. */
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/desert-dunes", &p, &e));
    CHECK_STATUS(trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "the recipe merged with preset 'builtin://terrain/desert-dunes' "
                              "does not validate: regions[0].biome");
    CHECK_CONTAINS(e.message, "grass");
    CHECK(strcmp(r.preset_id, "builtin://terrain/rolling-hills") == 0 && r.biome_count == 3);
    trn_preset_dispose(&p);
    trn_recipe_dispose(&r);

    /* Clear drops the strokes. */
    CHECK_OK(trn_recipe_parse(user_recipe, strlen(user_recipe), "u.json", &r, NULL, &e));
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/desert-dunes", &p, &e));
    CHECK_OK(trn_recipe_apply_preset(&r, &p, TRN_EDITS_CLEAR, &e));
    CHECK(r.stroke_count == 0 && r.size_x == 128 && strcmp(r.default_biome, "sand") == 0);
    trn_preset_dispose(&p);
    trn_recipe_dispose(&r);

    /* A protection snapshot refuses a grid change, saying why, even under keep. */
    const char *prot =
        "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5, \"default_landform\": "
        "\"l\", \"landforms\": {\"l\": {}}, \"default_biome\": \"grass\", \"biomes\": "
        "{\"grass\": {\"color\": [0, 1, 0, 1]}}, \"edits\": [{\"type\": \"protect\", \"grid\": "
        "[16, 16], \"samples\": [[0, 0, 1]]}]}";
    CHECK_OK(trn_recipe_parse(prot, strlen(prot), "u.json", &r, NULL, &e));
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/plateau", &p, &e));
    CHECK_STATUS(trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "protection snapshots are tied to the 16 x 16 grid");
    CHECK(r.size_x == 64 && r.stroke_count == 1 && r.preset_id == NULL);
    trn_preset_dispose(&p);

    /* A project preset sets only what it names; the rest stays the recipe's. Its cells_x
     * alone changes the grid, which a lone protect snapshot refuses under refuse too. */
    CHECK_OK(trn_preset_parse(good_preset, strlen(good_preset), "p.json", "asset://presets/low", &p,
                              &e));
    CHECK_STATUS(trn_recipe_apply_preset(&r, &p, TRN_EDITS_REFUSE, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "16 x 16 to 32 x 16");
    trn_preset_dispose(&p);
    const char *soft = "{\"format_version\": 1, \"name\": \"Soft\", \"default_biome\": \"moss\", "
                       "\"biomes\": {\"moss\": {\"color\": [0, 0.5, 0, 1]}}}";
    CHECK_OK(trn_preset_parse(soft, strlen(soft), "s.json", "asset://soft", &p, &e));
    CHECK_OK(trn_recipe_apply_preset(&r, &p, TRN_EDITS_REFUSE, &e));
    CHECK(r.size_x == 64 && r.cells_x == 16 && r.seed == 5 && r.stroke_count == 1);
    CHECK(strcmp(r.default_biome, "moss") == 0 && r.biome_count == 1 && r.landform_count == 1);
    CHECK(strcmp(r.preset_id, "asset://soft") == 0 && r.preset_version == 1);
    trn_preset_dispose(&p);
    trn_recipe_dispose(&r);
    CHECK_STATUS(trn_recipe_apply_preset(NULL, &p, TRN_EDITS_KEEP, &e), TRN_ERR_INVALID_ARGUMENT);

    /* A preset's layers replace the recipe's: a stroke on a layer they drop is refused. */
    const char *layered =
        "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5, \"default_landform\": "
        "\"l\", \"landforms\": {\"l\": {}}, \"default_biome\": \"g\", \"biomes\": {\"g\": "
        "{\"color\": [0, 1, 0, 1]}}, \"layers\": [{\"id\": \"generation\", \"name\": \"G\", "
        "\"group\": \"generation\"}, {\"id\": \"detail\", \"name\": \"Detail\", \"group\": "
        "\"sculpt\"}], \"edits\": [{\"type\": \"raise\", \"layer\": \"detail\", \"radius\": 2, "
        "\"center\": [8, 8]}]}";
    CHECK_OK(trn_recipe_parse(layered, strlen(layered), "u.json", &r, NULL, &e));
    const char *relayer = "{\"format_version\": 1, \"name\": \"Flat layers\", \"chunk_cells\": 4, "
                          "\"graph\": {\"format_version\": 1, \"nodes\": []}, \"layers\": [{\"id\": \"generation\", "
                          "\"name\": \"G\", \"group\": \"generation\"}, {\"id\": \"rough\", "
                          "\"name\": \"Rough\", \"group\": \"sculpt\"}]}";
    CHECK_OK(trn_preset_parse(relayer, strlen(relayer), "l.json", "asset://l", &p, &e));
    CHECK_EQ_INT(p.fields, TRN_PRESET_CHUNK_CELLS | TRN_PRESET_GRAPH | TRN_PRESET_LAYERS);
    CHECK(p.recipe.has_layers && p.recipe.layer_count == 2);
    CHECK_STATUS(trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "does not validate: edits[0].layer");
    CHECK(r.preset_id == NULL && strcmp(r.layers[1].id, "detail") == 0 && r.chunk_cells == 32);
    trn_preset_dispose(&p);
    /* Keeping the stroke's layer, the chunk size and graph come along. */
    relayer = "{\"format_version\": 1, \"name\": \"Chunks\", \"chunk_cells\": 4, \"graph\": "
              "{\"format_version\": 1, \"nodes\": []}}";
    CHECK_OK(trn_preset_parse(relayer, strlen(relayer), "l.json", "asset://l", &p, &e));
    CHECK_OK(trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e));
    CHECK(r.chunk_cells == 4 && r.graph_json && strstr(r.graph_json, "nodes") != NULL);
    CHECK(r.layer_count == 2 && r.stroke_count == 1);
    trn_preset_dispose(&p);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_builtins);
    RUN(test_preset_document);
    RUN(test_project);
    RUN(test_apply);
    return trn_test_finish();
}
