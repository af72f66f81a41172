/* Palettes and material sets: the documents' grammar, defaults, every refusal at its position,
 * the density limit exactly, and resolving a recipe's palette through project manifests. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terrane/palette.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "test.h"

static const char meadow[] = "{\n"
                             "\"format_version\": 3,\n"
                             "\"name\": \"Meadow\",\n"
                             "\"material_set\": \"asset://terrain/material_sets/meadow\",\n"
                             "\"art_density\": 1,\n"
                             "\"tree_density\": 1,\n"
                             "\"placements\": {\n"
                             "\"pine_sparse\": {\n"
                             "\"prefab\": \"prefab://vegetation/pine\",\n"
                             "\"category\": \"tree\",\n"
                             "\"density\": 0.02,\n"
                             "\"candidate_spacing\": 4,\n"
                             "\"spacing\": 12,\n"
                             "\"scale\": [0.9, 1.3],\n"
                             "\"yaw\": [0, 360],\n"
                             "\"biomes\": [\"meadow\"],\n"
                             "\"slope\": [0, 35],\n"
                             "\"moisture\": [0.2, 0.8],\n"
                             "\"water_distance\": [3, 100],\n"
                             "\"cluster\": {\"size\": 24, \"strength\": 0.7},\n"
                             "\"collision\": \"static\"\n"
                             "}\n"
                             "}\n"
                             "}\n";

static const char surfaces[] = "{\n"
                               "\"format_version\": 1,\n"
                               "\"name\": \"Landscape surfaces\",\n"
                               "\"roles\": {\n"
                               "\"ground\": \"asset://materials/soil\",\n"
                               "\"rock\": \"asset://materials/rock\",\n"
                               "\"underwater\": \"asset://materials/riverbed\"\n"
                               "}\n"
                               "}\n";

/* A one-line document's error: exact status, message and position (the first occurrence of
 * at, on line 1; NULL: column 1). */
static void check_err(trn_status got, const trn_error *e, const char *text, trn_status want,
                      const char *message, const char *at, int line)
{
    CHECK_EQ_INT(got, want);
    CHECK_EQ_INT(e->code, want);
    trn_test_checks++;
    if (strcmp(e->message, message) != 0) {
        trn_test_failures++;
        fprintf(stderr, "message\n  got:  %s\n  want: %s\n", e->message, message);
    }
    CHECK(strcmp(e->file, "doc.json") == 0);
    if (line == 1) {
        const char *p = at ? strstr(text, at) : text;
        CHECK(p != NULL);
        if (p) {
            CHECK_EQ_INT(e->column, (int)(p - text) + 1);
            CHECK_EQ_INT(e->offset, (long long)(p - text));
        }
    }
    CHECK_EQ_INT(e->line, line);
}

static void pal_err(const char *text, trn_status want, const char *message, const char *at)
{
    trn_palette p;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_palette_parse(text, strlen(text), "doc.json", &p, &e);
    check_err(st, &e, text, want, message, at, 1);
    /* a refusal leaves the palette empty */
    CHECK(p.name == NULL && p.rules == NULL && p.rule_count == 0 && p.material_set == NULL);
}

static void set_err(const char *text, trn_status want, const char *message, const char *at)
{
    trn_material_set s;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_material_set_parse(text, strlen(text), "doc.json", &s, &e);
    check_err(st, &e, text, want, message, at, 1);
    CHECK(s.name == NULL && s.roles[TRN_ROLE_GROUND] == NULL);
}

/* A palette of one rule with the given body, on one line. */
static const char *rule_doc(const char *body)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"r\": {%s}}}", body);
    return buf;
}

static trn_status pal_ok(const char *text, trn_palette *p)
{
    trn_error e;
    trn_status st = trn_palette_parse(text, strlen(text), "doc.json", p, &e);
    if (st) fprintf(stderr, "unexpected: %s\n", e.message);
    return st;
}

static void test_roles(void)
{
    static const char *const names[] = {"ground", "grass", "rock",       "cliff",     "sediment",
                                        "sand",   "snow",  "wet_ground", "underwater"};
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++) {
        trn_surface_role r = TRN_ROLE_NONE;
        CHECK(strcmp(trn_surface_role_name((trn_surface_role)i), names[i]) == 0);
        CHECK(trn_surface_role_parse(names[i], &r) && r == (trn_surface_role)i);
    }
    CHECK(strcmp(trn_surface_role_name(TRN_ROLE_NONE), "none") == 0);
    CHECK(strcmp(trn_surface_role_name(TRN_ROLE_COUNT), "unknown") == 0);
    trn_surface_role r = TRN_ROLE_ROCK;
    CHECK(!trn_surface_role_parse("none", &r) && r == TRN_ROLE_ROCK);
    CHECK(!trn_surface_role_parse("Ground", &r));
    CHECK(!trn_surface_role_parse(NULL, &r));
    CHECK(trn_surface_role_parse("snow", NULL));
}

static void test_material_set(void)
{
    trn_material_set s;
    trn_error e;
    CHECK_OK(trn_material_set_parse(surfaces, sizeof surfaces - 1, "doc.json", &s, &e));
    CHECK(strcmp(s.name, "Landscape surfaces") == 0);
    CHECK(strcmp(s.roles[TRN_ROLE_GROUND], "asset://materials/soil") == 0);
    CHECK(strcmp(s.roles[TRN_ROLE_ROCK], "asset://materials/rock") == 0);
    CHECK(strcmp(s.roles[TRN_ROLE_UNDERWATER], "asset://materials/riverbed") == 0);
    CHECK(s.roles[TRN_ROLE_GRASS] == NULL && s.roles[TRN_ROLE_CLIFF] == NULL &&
          s.roles[TRN_ROLE_SEDIMENT] == NULL && s.roles[TRN_ROLE_SAND] == NULL &&
          s.roles[TRN_ROLE_SNOW] == NULL && s.roles[TRN_ROLE_WET_GROUND] == NULL);
    trn_material_set_dispose(&s);
    CHECK(s.name == NULL && s.roles[TRN_ROLE_ROCK] == NULL);
    trn_material_set_dispose(NULL);

    /* all nine, and none (an empty binding is allowed: every sample keeps its tint) */
    const char all[] = "{\"format_version\": 1, \"name\": \"all\", \"roles\": {\"ground\": "
                       "\"asset://m/0\", \"grass\": \"asset://m/1\", \"rock\": \"asset://m/2\", "
                       "\"cliff\": \"asset://m/3\", \"sediment\": \"asset://m/4\", \"sand\": "
                       "\"asset://m/5\", \"snow\": \"asset://m/6\", \"wet_ground\": "
                       "\"asset://m/7\", \"underwater\": \"asset://m/8\"}}";
    CHECK_OK(trn_material_set_parse(all, sizeof all - 1, "doc.json", &s, NULL));
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++) {
        char want[32];
        snprintf(want, sizeof want, "asset://m/%u", i);
        CHECK(s.roles[i] && strcmp(s.roles[i], want) == 0);
    }
    trn_material_set_dispose(&s);
    const char none[] = "{\"format_version\": 1, \"name\": \"bare\", \"roles\": {}}";
    CHECK_OK(trn_material_set_parse(none, sizeof none - 1, "doc.json", &s, NULL));
    trn_material_set_dispose(&s);
    /* a byte order mark is not a column */
    const char bom[] = "\xEF\xBB\xBF{\"format_version\": 1, \"name\": \"b\", \"roles\": {}}";
    CHECK_OK(trn_material_set_parse(bom, sizeof bom - 1, "doc.json", &s, NULL));
    trn_material_set_dispose(&s);

    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": {\"gras\": \"asset://m\"}}",
            TRN_ERR_JSON,
            "unknown key 'gras' in roles; did you mean 'grass'? (the roles are "
            "ground, grass, rock, cliff, sediment, sand, snow, wet_ground and underwater)",
            "\"gras\"");
    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": {\"rock\": 3}}", TRN_ERR_JSON,
            "roles.rock: expected a Material asset id (\"asset://...\"), found 3", "3}");
    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": {\"rock\": \"asset://\"}}",
            TRN_ERR_JSON,
            "roles.rock: expected a Material asset id (\"asset://...\"), found the string "
            "\"asset://\"",
            "\"asset://\"");
    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": {\"rock\": \"materials/rock\"}}",
            TRN_ERR_JSON,
            "roles.rock: expected a Material asset id (\"asset://...\"), found the string "
            "\"materials/rock\"",
            "\"materials/");
    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": [\"rock\"]}", TRN_ERR_JSON,
            "roles: expected an object of role names to Material asset ids, found an array", "[");
    set_err("{\"format_version\": 2, \"name\": \"s\", \"roles\": {}}", TRN_ERR_VERSION,
            "format_version: format_version 2 is newer than this build reads (1)", "2");
    set_err("{\"format_version\": 0, \"name\": \"s\", \"roles\": {}}", TRN_ERR_JSON,
            "format_version: expected 1, found 0", "0");
    set_err("{\"format_version\": 1.0, \"name\": \"s\", \"roles\": {}}", TRN_ERR_JSON,
            "format_version: expected 1, found 1", "1.0");
    set_err("{\"name\": \"s\", \"roles\": {}}", TRN_ERR_JSON,
            "missing key 'format_version' (expected 1, the version of the terrain_material_set "
            "document)",
            NULL);
    set_err("{\"format_version\": 1, \"roles\": {}}", TRN_ERR_JSON,
            "missing key 'name' (expected the material set's display name)", NULL);
    set_err("{\"format_version\": 1, \"name\": \"\", \"roles\": {}}", TRN_ERR_JSON,
            "name: expected a non-empty string (the terrain_material_set's display name), found "
            "the string \"\"",
            "\"\"");
    set_err("{\"format_version\": 1, \"name\": \"s\"}", TRN_ERR_JSON,
            "missing key 'roles' (expected an object binding surface roles to Material assets, "
            "such as {\"ground\": \"asset://materials/soil\"})",
            NULL);
    set_err("{\"format_version\": 1, \"name\": \"s\", \"roles\": {}, \"nmae\": 1}", TRN_ERR_JSON,
            "unknown key 'nmae' in the terrain_material_set document; did you mean 'name'?",
            "\"nmae\"");
    set_err("[1]", TRN_ERR_JSON, "expected a terrain_material_set object, found an array", NULL);
    set_err("{\"format_version\": 1,}", TRN_ERR_JSON,
            "invalid JSON: string or '}' expected near '}'", "}");
    CHECK_STATUS(trn_material_set_parse("{}", 2, "doc.json", NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
}

/* Material documents: every map, the defaults, each refusal at its position. */
static void mat_err(const char *text, trn_status want, const char *message, const char *at)
{
    trn_material m;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_material_parse(text, strlen(text), "doc.json", &m, &e);
    check_err(st, &e, text, want, message, at, 1);
    CHECK(m.name == NULL && m.maps[TRN_MAP_ALBEDO] == NULL);
}

static void test_material_document(void)
{
    static const char soil[] = "{\n"
                               "\"format_version\": 1,\n"
                               "\"name\": \"Soil\",\n"
                               "\"texture_scale\": 0.25,\n"
                               "\"maps\": {\n"
                               "\"albedo\": \"soil/albedo.png\",\n"
                               "\"normal\": \"soil/normal.png\",\n"
                               "\"roughness\": \"soil/roughness.PNG\",\n"
                               "\"height\": \"height.png\",\n"
                               "\"emissive\": \"glow.png\"\n"
                               "}\n"
                               "}\n";
    trn_material m;
    trn_error e;
    CHECK_OK(trn_material_parse(soil, sizeof soil - 1, "doc.json", &m, &e));
    CHECK(m.name && strcmp(m.name, "Soil") == 0);
    CHECK(m.texture_scale == 0.25);
    static const char *const want[TRN_MAP_COUNT] = {"soil/albedo.png", "soil/normal.png",
                                                    "soil/roughness.PNG", "height.png",
                                                    "glow.png"};
    for (int k = 0; k < TRN_MAP_COUNT; k++) CHECK(m.maps[k] && strcmp(m.maps[k], want[k]) == 0);
    CHECK(m.paths[TRN_MAP_ALBEDO] == NULL && m.source == NULL); /* parse reads no files */
    trn_material_dispose(&m);
    CHECK(m.name == NULL && m.maps[TRN_MAP_NORMAL] == NULL);
    trn_material_dispose(NULL);
    CHECK(strcmp(trn_material_map_name(TRN_MAP_ALBEDO), "albedo") == 0);
    CHECK(strcmp(trn_material_map_name(TRN_MAP_EMISSIVE), "emissive") == 0);
    CHECK(trn_material_map_name(TRN_MAP_COUNT) == NULL && trn_material_map_name(-1) == NULL);
    /* no maps at all, texture_scale 1 by default */
    const char bare[] = "{\"format_version\": 1, \"name\": \"b\", \"maps\": {}}";
    CHECK_OK(trn_material_parse(bare, sizeof bare - 1, "doc.json", &m, NULL));
    CHECK(m.texture_scale == 1.0);
    for (int k = 0; k < TRN_MAP_COUNT; k++) CHECK(m.maps[k] == NULL);
    trn_material_dispose(&m);
    CHECK_EQ_INT(trn_document_classify(soil, sizeof soil - 1), TRN_DOCUMENT_MATERIAL);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_MATERIAL), "Material") == 0);
    trn_recipe r;
    trn_document_kind kind;
    CHECK_STATUS(trn_recipe_parse(soil, sizeof soil - 1, "doc.json", &r, &kind, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_MATERIAL);
    CHECK_CONTAINS(e.message, "this is a Material document");

    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": {\"diffuse\": \"a.png\"}}",
            TRN_ERR_JSON,
            "unknown key 'diffuse' in maps (the maps are albedo, normal, roughness, height and "
            "emissive)",
            "\"diffuse\"");
    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": {\"nromal\": \"a.png\"}}",
            TRN_ERR_JSON,
            "unknown key 'nromal' in maps; did you mean 'normal'? (the maps are albedo, normal, "
            "roughness, height and emissive)",
            "\"nromal\"");
    static const char *const bad_paths[] = {"/abs/a.png", "../a.png", "a/../b.png", "./a.png",
                                            "a//b.png",   "a.jpg",    ".png"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof bad_paths[0]; i++) {
        char doc[200], msg[400], at[60];
        snprintf(doc, sizeof doc,
                 "{\"format_version\": 1, \"name\": \"m\", \"maps\": {\"height\": \"%s\"}}",
                 bad_paths[i]);
        snprintf(at, sizeof at, "\"%s\"", bad_paths[i]);
        snprintf(msg, sizeof msg,
                 "maps.height: expected a PNG file's path relative to the material document "
                 "(such as \"soil.png\"), without \".\" or \"..\" parts, found \"%s\"",
                 bad_paths[i]);
        mat_err(doc, TRN_ERR_JSON, msg, at);
    }
    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": {\"albedo\": 3}}", TRN_ERR_JSON,
            "maps.albedo: expected a PNG file's path relative to the material document (such as "
            "\"soil.png\"), found 3",
            "3}");
    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": [\"a.png\"]}", TRN_ERR_JSON,
            "maps: expected an object of image maps such as {\"albedo\": \"soil.png\"}, found an "
            "array",
            "[");
    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": {}, \"texture_scale\": 0}",
            TRN_ERR_JSON,
            "texture_scale: expected a number > 0 (multiplies the repetitions per world unit), "
            "found 0",
            "0}");
    mat_err("{\"format_version\": 1, \"name\": \"m\", \"maps\": {}, \"texture_scal\": 2}",
            TRN_ERR_JSON,
            "unknown key 'texture_scal' in the Material document; did you mean 'texture_scale'?",
            "\"texture_scal\"");
    mat_err("{\"format_version\": 2, \"name\": \"m\", \"maps\": {}}", TRN_ERR_VERSION,
            "format_version: format_version 2 is newer than this build reads (1)", "2");
    mat_err("{\"name\": \"m\", \"maps\": {}}", TRN_ERR_JSON,
            "missing key 'format_version' (expected 1, the version of the Material document)",
            NULL);
    mat_err("{\"format_version\": 1, \"maps\": {}}", TRN_ERR_JSON,
            "missing key 'name' (expected the Material's display name)", NULL);
    mat_err("{\"format_version\": 1, \"name\": \"m\"}", TRN_ERR_JSON,
            "missing key 'maps' (expected an object of image maps, such as {\"albedo\": "
            "\"soil.png\"} ({} for none))",
            NULL);
    mat_err("[1]", TRN_ERR_JSON, "expected a Material object, found an array", NULL);
    CHECK_STATUS(trn_material_parse("{}", 2, "doc.json", NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
}

static void test_palette_example(void)
{
    trn_palette p;
    CHECK_OK(pal_ok(meadow, &p));
    CHECK(strcmp(p.name, "Meadow") == 0);
    CHECK(strcmp(p.material_set, "asset://terrain/material_sets/meadow") == 0);
    CHECK(p.art_density == 1 && p.grass_density == 1 && p.tree_density == 1 && p.rock_density == 1);
    CHECK_EQ_INT(p.rule_count, 1);
    const trn_scatter_rule *r = &p.rules[0];
    CHECK(strcmp(r->id, "pine_sparse") == 0);
    CHECK(r->model == NULL && strcmp(r->prefab, "prefab://vegetation/pine") == 0);
    CHECK(r->category == TRN_CATEGORY_TREE);
    CHECK(r->density == 0.02 && r->candidate_spacing == 4 && r->spacing == 12);
    CHECK(r->scale[0] == 0.9 && r->scale[1] == 1.3 && r->yaw[0] == 0 && r->yaw[1] == 360);
    CHECK(r->biome_count == 1 && strcmp(r->biomes[0], "meadow") == 0);
    CHECK(r->slope.has && r->slope.lo == 0 && r->slope.hi == 35);
    CHECK(r->moisture.has && r->moisture.lo == 0.2 && r->moisture.hi == 0.8);
    CHECK(r->water_distance.has && r->water_distance.lo == 3 && r->water_distance.hi == 100);
    CHECK(r->cluster_size == 24 && r->cluster_strength == 0.7);
    CHECK(r->collision == TRN_COLLISION_STATIC);
    CHECK(trn_palette_rule_density(&p, r) == 0.02);
    trn_palette_dispose(&p);
    CHECK(p.rules == NULL && p.name == NULL);
    trn_palette_dispose(NULL);

    /* an error deep in a multi-line document: line and column of the value */
    char bad[sizeof meadow];
    memcpy(bad, meadow, sizeof meadow);
    char *at = strstr(bad, "\"static\"");
    memcpy(at, "\"sticky\"", 8);
    trn_error e;
    CHECK_STATUS(trn_palette_parse(bad, sizeof bad - 1, "doc.json", &p, &e), TRN_ERR_JSON);
    CHECK(strcmp(e.message, "placements.pine_sparse.collision: expected \"none\", \"static\" or "
                            "\"trigger\", found the string \"sticky\"") == 0);
    CHECK_EQ_INT(e.line, 21);
    CHECK_EQ_INT(e.column, 14);
    CHECK_EQ_INT(e.offset, (long long)(at - bad));
}

static void test_palette_defaults(void)
{
    trn_palette p, q;
    /* Everything left out takes its default ... */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.5"), &p));
    CHECK(p.material_set == NULL);
    CHECK(p.art_density == 1 && p.grass_density == 1 && p.tree_density == 1 && p.rock_density == 1);
    const trn_scatter_rule *r = &p.rules[0];
    CHECK(r->category == TRN_CATEGORY_PROP && r->collision == TRN_COLLISION_STATIC);
    CHECK(r->candidate_spacing == 0.25 && r->spacing == 0);
    CHECK(r->scale[0] == 1 && r->scale[1] == 1 && r->yaw[0] == 0 && r->yaw[1] == 360);
    CHECK(!r->slope.has && !r->moisture.has && !r->water_distance.has);
    CHECK(r->biome_count == 0 && r->biomes == NULL);
    CHECK(r->cluster_size == 16 && r->cluster_strength == 0);
    /* ... and the same values written out give the same rule. */
    CHECK_OK(pal_ok("{\"format_version\": 3, \"name\": \"n\", \"art_density\": 1, "
                    "\"grass_density\": 1, \"tree_density\": 1, \"rock_density\": 1, "
                    "\"placements\": {\"r\": {\"prefab\": \"prefab://x\", \"density\": 0.5, "
                    "\"category\": \"prop\", \"candidate_spacing\": 0.25, \"spacing\": 0, "
                    "\"scale\": [1, 1], \"yaw\": [0, 360], \"slope\": [0, 90], \"moisture\": "
                    "[0, 1], \"cluster\": {\"size\": 16, \"strength\": 0}, \"collision\": "
                    "\"static\"}}}",
                    &q));
    const trn_scatter_rule *s = &q.rules[0];
    CHECK(s->category == r->category && s->collision == r->collision);
    CHECK(s->candidate_spacing == r->candidate_spacing && s->spacing == r->spacing);
    CHECK(s->scale[0] == r->scale[0] && s->scale[1] == r->scale[1] && s->yaw[0] == r->yaw[0] &&
          s->yaw[1] == r->yaw[1]);
    CHECK(s->slope.has && s->slope.lo == 0 && s->slope.hi == 90);
    CHECK(s->moisture.has && s->moisture.lo == 0 && s->moisture.hi == 1);
    CHECK(s->cluster_size == r->cluster_size && s->cluster_strength == r->cluster_strength);
    CHECK(trn_palette_rule_density(&q, s) == trn_palette_rule_density(&p, r));
    trn_palette_dispose(&p);
    trn_palette_dispose(&q);

    /* candidate_spacing: half a positive spacing, else 0.25 */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0, \"spacing\": 12"), &p));
    CHECK(p.rules[0].candidate_spacing == 6);
    trn_palette_dispose(&p);
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0, \"spacing\": 0.3"), &p));
    CHECK(p.rules[0].candidate_spacing == 0.15);
    trn_palette_dispose(&p);

    /* a material set alone is a palette; rules keep document order; each category */
    CHECK_OK(
        pal_ok("{\"format_version\": 3, \"name\": \"m\", \"material_set\": \"asset://s\"}", &p));
    CHECK(p.rule_count == 0 && p.rules == NULL && strcmp(p.material_set, "asset://s") == 0);
    trn_palette_dispose(&p);
    CHECK_OK(pal_ok("{\"format_version\": 3, \"name\": \"n\", \"art_density\": 0.5, "
                    "\"grass_density\": 2, \"tree_density\": 3, \"rock_density\": 4, "
                    "\"placements\": {\"z-last\": {\"prefab\": \"prefab://a\", \"density\": 0.1, "
                    "\"category\": \"grass\"}, \"b\": {\"model\": \"asset://m\", \"density\": "
                    "0.1, \"category\": \"tree\", \"collision\": \"none\"}, \"A_9\": {\"prefab\": "
                    "\"asset://p\", \"density\": 0.1, \"category\": \"rock\", \"collision\": "
                    "\"trigger\"}, \"p\": {\"prefab\": \"prefab://a\", \"density\": 0.1}}}",
                    &p));
    CHECK_EQ_INT(p.rule_count, 4);
    CHECK(strcmp(p.rules[0].id, "z-last") == 0 && strcmp(p.rules[1].id, "b") == 0 &&
          strcmp(p.rules[2].id, "A_9") == 0 && strcmp(p.rules[3].id, "p") == 0);
    CHECK(p.rules[0].category == TRN_CATEGORY_GRASS && p.rules[1].category == TRN_CATEGORY_TREE &&
          p.rules[2].category == TRN_CATEGORY_ROCK && p.rules[3].category == TRN_CATEGORY_PROP);
    CHECK(p.rules[1].model && strcmp(p.rules[1].model, "asset://m") == 0 && !p.rules[1].prefab);
    CHECK(p.rules[1].collision == TRN_COLLISION_NONE);
    CHECK(p.rules[2].collision == TRN_COLLISION_TRIGGER);
    CHECK(trn_palette_rule_density(&p, &p.rules[0]) == 0.1 * 0.5 * 2);
    CHECK(trn_palette_rule_density(&p, &p.rules[1]) == 0.1 * 0.5 * 3);
    CHECK(trn_palette_rule_density(&p, &p.rules[2]) == 0.1 * 0.5 * 4);
    CHECK(trn_palette_rule_density(&p, &p.rules[3]) == 0.1 * 0.5);
    CHECK(trn_palette_rule_density(NULL, &p.rules[3]) == 0);
    CHECK(trn_palette_rule_density(&p, NULL) == 0);
    trn_palette_dispose(&p);
}

static void test_palette_versions(void)
{
    pal_err("{\"format_version\": 2, \"name\": \"n\", \"placements\": {\"r\": {\"weight\": 3}}}",
            TRN_ERR_VERSION,
            "format_version: format_version 2 is no longer read: placement weight was replaced "
            "by physical density; give each placement a density (instances per square unit) and "
            "a candidate_spacing for the landscape's scale, then set format_version 3",
            "2,");
    pal_err("{\"format_version\": 1, \"name\": \"n\", \"ground\": {}}", TRN_ERR_VERSION,
            "format_version: format_version 1 is no longer read: move the ground bindings into a "
            "terrain_material_set document (named by material_set) and the objects into named "
            "placements, then set format_version 3",
            "1,");
    pal_err("{\"format_version\": 4, \"name\": \"n\"}", TRN_ERR_VERSION,
            "format_version: format_version 4 is newer than this build reads (3)", "4");
    pal_err("{\"format_version\": \"3\", \"name\": \"n\"}", TRN_ERR_JSON,
            "format_version: expected 3, found the string \"3\"", "\"3\"");
    pal_err("{\"format_version\": -3, \"name\": \"n\"}", TRN_ERR_JSON,
            "format_version: expected 3, found -3", "-3");
    pal_err("{\"name\": \"n\", \"material_set\": \"asset://s\"}", TRN_ERR_JSON,
            "missing key 'format_version' (expected 3, the version of the terrain_palette "
            "document)",
            NULL);
    /* lod: gone in version 3, at the placement and at the top */
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"lod\": 2"), TRN_ERR_JSON,
            "unknown key 'lod' in placements.r: 'lod' was unused and is refused in "
            "format_version 3; distance-based LOD and culling are authored on the model or "
            "prefab",
            "\"lod\"");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"material_set\": \"asset://s\", \"lod\": "
            "1}",
            TRN_ERR_JSON,
            "unknown key 'lod' in the terrain_palette document: 'lod' was unused and is refused "
            "in format_version 3; distance-based LOD and culling are authored on the model or "
            "prefab",
            "\"lod\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"weight\": 2"), TRN_ERR_JSON,
            "unknown key 'weight' in placements.r: weight was replaced by density (instances per "
            "square unit) in format_version 3",
            "\"weight\"");
}

static void test_palette_refusals(void)
{
    const char *msg_any = "a palette needs a material_set or at least one placement";
    pal_err("{\"format_version\": 3, \"name\": \"n\"}", TRN_ERR_JSON, msg_any, NULL);
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": {}}", TRN_ERR_JSON,
            "placements: a palette needs a material_set or at least one placement", "{}");
    pal_err("{\"format_version\": 3, \"material_set\": \"asset://s\"}", TRN_ERR_JSON,
            "missing key 'name' (expected the palette's display name)", NULL);
    pal_err("{\"format_version\": 3, \"name\": 5, \"material_set\": \"asset://s\"}", TRN_ERR_JSON,
            "name: expected a non-empty string (the terrain_palette's display name), found 5", "5");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"material_set\": \"meadow\"}", TRN_ERR_JSON,
            "material_set: expected a terrain_material_set asset id (\"asset://...\"), found the "
            "string \"meadow\"",
            "\"meadow\"");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"material_set\": \"asset://s\", "
            "\"placement\": {}}",
            TRN_ERR_JSON,
            "unknown key 'placement' in the terrain_palette document; did you mean "
            "'placements'?",
            "\"placement\"");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"art_density\": -1, \"material_set\": "
            "\"asset://s\"}",
            TRN_ERR_JSON,
            "art_density: expected a number >= 0 (multiplies every rule's density), found -1",
            "-1");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"grass_density\": \"2\", \"material_set\": "
            "\"asset://s\"}",
            TRN_ERR_JSON,
            "grass_density: expected a number >= 0 (multiplies the grass rules' density), found "
            "the string \"2\"",
            "\"2\"");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"rock_density\": -0.5, \"material_set\": "
            "\"asset://s\"}",
            TRN_ERR_JSON,
            "rock_density: expected a number >= 0 (multiplies the rock rules' density), found "
            "-0.5",
            "-0.5");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"tree_density\": null, \"material_set\": "
            "\"asset://s\"}",
            TRN_ERR_JSON,
            "tree_density: expected a number >= 0 (multiplies the tree rules' density), found "
            "null",
            "null");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": [1]}", TRN_ERR_JSON,
            "placements: expected an object of placements keyed by their stable ids, found an "
            "array",
            "[1]");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"r\": 1}}", TRN_ERR_JSON,
            "placements.r: expected a placement object, found 1", "1}");

    /* ids: letters, digits, '_' and '-', 1 to 63 bytes */
    char id63[64], doc[512];
    memset(id63, 'a', 63);
    id63[63] = '\0';
    snprintf(doc, sizeof doc,
             "{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"%s\": {\"prefab\": "
             "\"prefab://x\", \"density\": 1}}}",
             id63);
    trn_palette p;
    CHECK_OK(pal_ok(doc, &p));
    CHECK(p.rule_count == 1 && strcmp(p.rules[0].id, id63) == 0);
    trn_palette_dispose(&p);
    snprintf(doc, sizeof doc,
             "{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"%sa\": {\"prefab\": "
             "\"prefab://x\", \"density\": 1}}}",
             id63);
    char want[300];
    snprintf(want, sizeof want,
             "placements.%sa: a placement id uses letters, digits, '_' and '-' (1 to 63 bytes), "
             "found '%sa' (too long)",
             id63, id63);
    pal_err(doc, TRN_ERR_JSON, want, "\"aaa");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"pine tree\": {}}}",
            TRN_ERR_JSON,
            "placements[\"pine tree\"]: a placement id uses letters, digits, '_' and '-' (1 to "
            "63 bytes), found 'pine tree'",
            "\"pine tree\"");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"\": {}}}", TRN_ERR_JSON,
            "placements[\"\"]: a placement id uses letters, digits, '_' and '-' (1 to 63 bytes), "
            "found ''",
            "\"\":");
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"placements\": {\"a.b\": {}}}", TRN_ERR_JSON,
            "placements[\"a.b\"]: a placement id uses letters, digits, '_' and '-' (1 to 63 "
            "bytes), found 'a.b'",
            "\"a.b\"");

    /* geometry */
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"model\": \"asset://m\", \"density\": 1"),
            TRN_ERR_JSON,
            "placements.r.model: a placement has exactly one geometry: model or prefab, not both "
            "(make two placements to use both)",
            "\"model\"");
    pal_err(rule_doc("\"density\": 1"), TRN_ERR_JSON,
            "placements.r: missing key 'prefab' (expected exactly one geometry: \"prefab\": "
            "\"prefab://...\" or \"model\": \"asset://...\")",
            "{\"density");
    pal_err(rule_doc("\"model\": \"prefab://m\", \"density\": 1, \"collision\": \"none\""),
            TRN_ERR_JSON,
            "placements.r.model: expected a Model3D asset id (\"asset://...\"), found the string "
            "\"prefab://m\"",
            "\"prefab://m\"");
    pal_err(rule_doc("\"prefab\": \"vegetation/pine\", \"density\": 1"), TRN_ERR_JSON,
            "placements.r.prefab: expected an entity prefab id (\"prefab://...\" or "
            "\"asset://...\"), found the string \"vegetation/pine\"",
            "\"vegetation");
    pal_err(rule_doc("\"prefab\": \"prefab://\", \"density\": 1"), TRN_ERR_JSON,
            "placements.r.prefab: expected an entity prefab id (\"prefab://...\" or "
            "\"asset://...\"), found the string \"prefab://\"",
            "\"prefab://\"");
    /* a model rule says collision none, explicitly */
    pal_err(rule_doc("\"model\": \"asset://m\", \"density\": 1"), TRN_ERR_JSON,
            "placements.r: a model rule must say \"collision\": \"none\" (the engine does not "
            "invent collider bounds for arbitrary models); use a prefab with authored collider "
            "shapes for static or trigger collision",
            "{\"model");
    pal_err(rule_doc("\"model\": \"asset://m\", \"density\": 1, \"collision\": \"static\""),
            TRN_ERR_JSON,
            "placements.r.collision: a model rule must say \"collision\": \"none\", found "
            "another (the engine does not invent collider bounds for arbitrary models); use a "
            "prefab with authored collider shapes for static or trigger collision",
            "\"static\"");
    pal_err(rule_doc("\"model\": \"asset://m\", \"density\": 1, \"collision\": \"trigger\""),
            TRN_ERR_JSON,
            "placements.r.collision: a model rule must say \"collision\": \"none\", found "
            "another (the engine does not invent collider bounds for arbitrary models); use a "
            "prefab with authored collider shapes for static or trigger collision",
            "\"trigger\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"collision\": \"solid\""),
            TRN_ERR_JSON,
            "placements.r.collision: expected \"none\", \"static\" or \"trigger\", found the "
            "string \"solid\"",
            "\"solid\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"category\": \"bush\""),
            TRN_ERR_JSON,
            "placements.r.category: expected \"prop\", \"grass\", \"tree\" or \"rock\", found the "
            "string \"bush\"",
            "\"bush\"");

    /* numbers */
    pal_err(rule_doc("\"prefab\": \"prefab://x\""), TRN_ERR_JSON,
            "placements.r: missing key 'density' (expected instances per square unit before "
            "filters, >= 0)",
            "{\"prefab");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": -0.001"), TRN_ERR_JSON,
            "placements.r.density: expected a number >= 0 (instances per square unit), found "
            "-0.001",
            "-0.001");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"candidate_spacing\": 0"),
            TRN_ERR_JSON,
            "placements.r.candidate_spacing: expected a number > 0 (units between candidate "
            "sites), found 0",
            "0}");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"spacing\": -1"), TRN_ERR_JSON,
            "placements.r.spacing: expected a number >= 0 (minimum separation in units), found "
            "-1",
            "-1");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"scale\": [0, 1]"), TRN_ERR_JSON,
            "placements.r.scale[0]: expected a number > 0, found 0", "0, 1]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"scale\": [1.3, 0.9]"),
            TRN_ERR_JSON, "placements.r.scale: expected lo <= hi, found [1.3, 0.9] (swap them)",
            "[1.3");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"scale\": [1]"), TRN_ERR_JSON,
            "placements.r.scale: expected [lo, hi] (two numbers), found fewer than two values",
            "[1]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"scale\": [1, 2, 3]"),
            TRN_ERR_JSON,
            "placements.r.scale: expected [lo, hi] (two numbers), found more than two values",
            "[1, 2, 3]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"scale\": 2"), TRN_ERR_JSON,
            "placements.r.scale: expected [lo, hi] (two numbers), found 2", "2}");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"yaw\": [90, \"a\"]"),
            TRN_ERR_JSON,
            "placements.r.yaw[1]: expected a number (degrees), found the string \"a\"", "\"a\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"yaw\": [180, 90]"),
            TRN_ERR_JSON, "placements.r.yaw: expected lo <= hi, found [180, 90] (swap them)",
            "[180");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"slope\": [0, 90.5]"),
            TRN_ERR_JSON,
            "placements.r.slope[1]: expected a number 0..90 (degrees from horizontal), found "
            "90.5",
            "90.5");
    pal_err(
        rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"slope\": [-1, 10]"), TRN_ERR_JSON,
        "placements.r.slope[0]: expected a number 0..90 (degrees from horizontal), found -1", "-1");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"moisture\": [0, 1.01]"),
            TRN_ERR_JSON, "placements.r.moisture[1]: expected a number 0..1, found 1.01", "1.01");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"moisture\": [0.8, 0.2]"),
            TRN_ERR_JSON, "placements.r.moisture: expected lo <= hi, found [0.8, 0.2] (swap them)",
            "[0.8");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"water_distance\": [-1, 3]"),
            TRN_ERR_JSON,
            "placements.r.water_distance[0]: expected a number >= 0 (units), found -1", "-1");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"water_distance\": [5, 3]"),
            TRN_ERR_JSON,
            "placements.r.water_distance: expected lo <= hi, found [5, 3] (swap them)", "[5");
    /* the limits themselves are accepted */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0, \"slope\": [90, 90], "
                             "\"moisture\": [1, 1], \"water_distance\": [0, 0], \"scale\": "
                             "[1e-9, 1e-9], \"yaw\": [-30, -30], \"cluster\": {\"size\": 1e-9, "
                             "\"strength\": 1}"),
                    &p));
    CHECK(p.rules[0].slope.lo == 90 && p.rules[0].moisture.lo == 1 &&
          p.rules[0].water_distance.hi == 0 && p.rules[0].yaw[1] == -30 &&
          p.rules[0].cluster_strength == 1 && p.rules[0].cluster_size == 1e-9);
    trn_palette_dispose(&p);

    /* biomes and cluster */
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"biomes\": []"), TRN_ERR_JSON,
            "placements.r.biomes: expected a non-empty array of biome names (leave biomes out "
            "for every biome), found []",
            "[]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"biomes\": \"meadow\""),
            TRN_ERR_JSON,
            "placements.r.biomes: expected a non-empty array of biome names (leave biomes out "
            "for every biome), found the string \"meadow\"",
            "\"meadow\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"biomes\": [\"a\", \"\"]"),
            TRN_ERR_JSON,
            "placements.r.biomes[1]: expected a biome name (a non-empty string), found the "
            "string \"\"",
            "\"\"]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"biomes\": [\"a\", \"b\", "
                     "\"a\"]"),
            TRN_ERR_JSON,
            "placements.r.biomes[2]: biome 'a' is listed twice (biomes[0] names it already)",
            "\"a\"]");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"cluster\": {\"size\": 0}"),
            TRN_ERR_JSON,
            "placements.r.cluster.size: expected a number > 0 (the patches' size in units), "
            "found 0",
            "0}");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"cluster\": {\"strength\": "
                     "1.5}"),
            TRN_ERR_JSON,
            "placements.r.cluster.strength: expected a number 0..1 (0 uniform, 1 patches), "
            "found 1.5",
            "1.5");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"cluster\": {\"sise\": 3}"),
            TRN_ERR_JSON, "unknown key 'sise' in placements.r.cluster; did you mean 'size'?",
            "\"sise\"");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"cluster\": 3"), TRN_ERR_JSON,
            "placements.r.cluster: expected an object {\"size\": units > 0, \"strength\": 0..1}, "
            "found 3",
            "3}");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 1, \"densty\": 1"), TRN_ERR_JSON,
            "unknown key 'densty' in placements.r; did you mean 'density'?", "\"densty\"");
    pal_err("[]", TRN_ERR_JSON, "expected a terrain_palette object, found an array", NULL);
    pal_err("", TRN_ERR_JSON, "invalid JSON: '[' or '{' expected near end of file", NULL);
    pal_err("{\"format_version\": 3, \"name\": \"n\", \"name\": \"m\"}", TRN_ERR_JSON,
            "invalid JSON: duplicate object key near '\"name\"'", "\": \"m");
    CHECK_STATUS(trn_palette_parse(NULL, 3, "doc.json", &p, NULL), TRN_ERR_INVALID_ARGUMENT);
}

#define TREE_DOC                                                                                   \
    "{\"format_version\": 3, \"name\": \"n\", \"tree_density\": %s, "                              \
    "\"art_density\": %s, \"placements\": {\"t\": {\"prefab\": \"prefab://x\", "                   \
    "\"category\": \"tree\", \"density\": 0.125, \"candidate_spacing\": 2}, "                      \
    "\"p\": {\"prefab\": \"prefab://x\", \"density\": 0.25, "                                      \
    "\"candidate_spacing\": 2}}}"
#define GRASS_DOC                                                                                  \
    "{\"format_version\": 3, \"name\": \"n\", \"%s_density\": 2, "                                 \
    "\"placements\": {\"g\": {\"prefab\": \"prefab://x\", \"category\": "                          \
    "\"%s\", \"density\": 0.25, \"candidate_spacing\": 2}}}"

/* One candidate per lattice square at most: density x multipliers x candidate_spacing^2 <= 1. */
static void test_density_limit(void)
{
    trn_palette p;
    /* exactly one per site */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.25, "
                             "\"candidate_spacing\": 2"),
                    &p));
    trn_palette_dispose(&p);
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.25, \"candidate_spacing\": "
                     "2.001"),
            TRN_ERR_JSON,
            "placements.r.density: density 0.25 x art_density 1 = 0.25 instances per square "
            "unit at candidate_spacing 2.001 asks for 1.001 per candidate site, more than the one "
            "a site holds: reduce density to 0.24975 or less, or candidate_spacing to 2 or less",
            "0.25");
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.2501, \"candidate_spacing\": 2"),
            TRN_ERR_JSON,
            "placements.r.density: density 0.2501 x art_density 1 = 0.2501 instances per square "
            "unit at candidate_spacing 2 asks for 1.0004 per candidate site, more than the one a "
            "site holds: reduce density to 0.25 or less, or candidate_spacing to 1.9996 or less",
            "0.2501");
    /* a disabled rule fits any lattice (0 x inf is no NaN here); a vast one is refused */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0, \"candidate_spacing\": "
                             "1e300"),
                    &p));
    trn_palette_dispose(&p);
    {
        const char *doc = rule_doc("\"prefab\": \"prefab://x\", \"density\": 1e-300, "
                                   "\"candidate_spacing\": 1e300");
        trn_error e;
        CHECK_STATUS(trn_palette_parse(doc, strlen(doc), "doc.json", &p, &e), TRN_ERR_JSON);
        CHECK_CONTAINS(e.message, "asks for 1e+300 per candidate site");
    }
    /* the default lattice: 0.25 units when spacing is 0 (16 per square unit fit) ... */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 16"), &p));
    trn_palette_dispose(&p);
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 17"), TRN_ERR_JSON,
            "placements.r.density: density 17 x art_density 1 = 17 instances per square unit at "
            "candidate_spacing 0.25 (the default: spacing is 0) asks for 1.0625 per candidate "
            "site, more than the one a site holds: reduce density to 16 or less, or "
            "candidate_spacing to 0.242535 or less",
            "17");
    /* ... and half the spacing */
    CHECK_OK(pal_ok(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.25, \"spacing\": 4"), &p));
    trn_palette_dispose(&p);
    pal_err(rule_doc("\"prefab\": \"prefab://x\", \"density\": 0.5, \"spacing\": 4"), TRN_ERR_JSON,
            "placements.r.density: density 0.5 x art_density 1 = 0.5 instances per square unit "
            "at candidate_spacing 2 (the default: half the spacing) asks for 2 per candidate "
            "site, more than the one a site holds: reduce density to 0.25 or less, or "
            "candidate_spacing to 1.41421 or less",
            "0.5");
    /* the multipliers count: art for every rule, a category's only for its rules */
    char doc[600];
    snprintf(doc, sizeof doc, TREE_DOC, "2", "1");
    CHECK_OK(pal_ok(doc, &p));
    CHECK(trn_palette_rule_density(&p, &p.rules[0]) == 0.25);
    trn_palette_dispose(&p);
    snprintf(doc, sizeof doc, TREE_DOC, "2.5", "1");
    pal_err(doc, TRN_ERR_JSON,
            "placements.t.density: density 0.125 x art_density 1 x tree_density 2.5 = 0.3125 "
            "instances per square unit at candidate_spacing 2 asks for 1.25 per candidate site, "
            "more than the one a site holds: reduce density to 0.1 or less, or candidate_spacing "
            "to 1.78885 or less",
            "0.125");
    snprintf(doc, sizeof doc, TREE_DOC, "1", "1.5");
    pal_err(doc, TRN_ERR_JSON,
            "placements.p.density: density 0.25 x art_density 1.5 = 0.375 instances per square "
            "unit at candidate_spacing 2 asks for 1.5 per candidate site, more than the one a "
            "site holds: reduce density to 0.166666 or less, or candidate_spacing to 1.63299 or "
            "less",
            "0.25,");
    /* the other categories' multipliers leave a rule alone; art 0 disables everything */
    CHECK_OK(pal_ok("{\"format_version\": 3, \"name\": \"n\", \"grass_density\": 100, "
                    "\"rock_density\": 100, \"tree_density\": 100, \"placements\": {\"p\": "
                    "{\"prefab\": \"prefab://x\", \"density\": 0.25, \"candidate_spacing\": 2}}}",
                    &p));
    trn_palette_dispose(&p);
    snprintf(doc, sizeof doc, TREE_DOC, "1000", "0");
    CHECK_OK(pal_ok(doc, &p));
    CHECK(trn_palette_rule_density(&p, &p.rules[0]) == 0);
    trn_palette_dispose(&p);
    static const char *const cats[] = {"grass", "rock"};
    for (int i = 0; i < 2; i++) {
        snprintf(doc, sizeof doc, GRASS_DOC, cats[i], cats[i]);
        trn_error e;
        CHECK_STATUS(trn_palette_parse(doc, strlen(doc), "doc.json", &p, &e), TRN_ERR_JSON);
        char want[80];
        snprintf(want, sizeof want, "x art_density 1 x %s_density 2 = 0.5", cats[i]);
        CHECK_CONTAINS(e.message, want);
    }
}

/* ---- resolving ----------------------------------------------------------------------------- */

static void put(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    /* make the folders on the way */
    for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        mkdir(path, 0755);
        *s = '/';
    }
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static const char palette_manifest[] =
    "{\"format_version\": 1, \"type\": \"DataAsset\", \"importer\": \"data_asset\", \"source\": "
    "\"meadow.palette.json\", \"settings\": {\"content_type\": \"terrain_palette\"}}";
static const char set_manifest[] =
    "{\"format_version\": 1, \"type\": \"DataAsset\", \"importer\": \"data_asset\", \"source\": "
    "\"meadow.materials.json\", \"settings\": {\"content_type\": \"terrain_material_set\"}}";

static void test_resolve(void)
{
    char tmp[512], project[600], recipe[700];
    trn_test_tmpdir(tmp, sizeof tmp);
    snprintf(project, sizeof project, "%s/game", tmp);
    mkdir(project, 0755);
    put(project, "terrain/palettes/meadow.asset.json", palette_manifest);
    put(project, "terrain/palettes/meadow.palette.json", meadow);
    put(project, "terrain/material_sets/meadow.asset.json", set_manifest);
    put(project, "terrain/material_sets/meadow.materials.json", surfaces);
    put(project, "scenes/levels/one.terrain.json", "{}");
    snprintf(recipe, sizeof recipe, "%s/scenes/levels/one.terrain.json", project);

    trn_palette p;
    trn_material_set s;
    trn_error e;
    /* from a recipe two folders down: the project is the folder holding the manifest */
    CHECK_OK(trn_palette_resolve(recipe, "asset://terrain/palettes/meadow", &p, &s, &e));
    CHECK(p.name && strcmp(p.name, "Meadow") == 0 && p.rule_count == 1);
    CHECK(s.name && strcmp(s.name, "Landscape surfaces") == 0);
    CHECK(s.roles[TRN_ROLE_ROCK] && strcmp(s.roles[TRN_ROLE_ROCK], "asset://materials/rock") == 0);
    trn_palette_dispose(&p);
    trn_material_set_dispose(&s);
    /* without a set: the palette alone */
    CHECK_OK(trn_palette_resolve(recipe, "asset://terrain/palettes/meadow", &p, NULL, &e));
    CHECK(p.rule_count == 1);
    trn_palette_dispose(&p);
    /* a recipe at the project's top */
    char top[700];
    snprintf(top, sizeof top, "%s/landscape.json", project);
    CHECK_OK(trn_palette_resolve(top, "asset://terrain/palettes/meadow", &p, &s, &e));
    trn_palette_dispose(&p);
    trn_material_set_dispose(&s);

    /* missing */
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://terrain/palettes/forest", &p, &s, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK(strcmp(e.message, "palette: no asset 'asset://terrain/palettes/forest': no manifest "
                            "terrain/palettes/forest.asset.json in the recipe's folder or any "
                            "folder above it") == 0);
    CHECK(strcmp(e.file, recipe) == 0);
    CHECK(p.name == NULL && s.name == NULL);
    /* another content type */
    put(project, "terrain/presets/hills.asset.json",
        "{\"type\": \"DataAsset\", \"source\": \"hills.preset.json\", \"settings\": "
        "{\"content_type\": \"terrain_preset\"}}");
    put(project, "terrain/presets/hills.preset.json",
        "{\"format_version\": 1, \"name\": \"Hills\", \"seed\": 9}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://terrain/presets/hills", &p, &s, &e),
                 TRN_ERR_FORMAT);
    CHECK(strcmp(e.message, "asset 'asset://terrain/presets/hills' is a terrain_preset, not a "
                            "terrain_palette (its manifest's settings.content_type must be "
                            "\"terrain_palette\")") == 0);
    CHECK_CONTAINS(e.file, "terrain/presets/hills.asset.json");
    put(project, "terrain/textures/dirt.asset.json", "{\"importer\": \"texture\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://terrain/textures/dirt", &p, &s, &e),
                 TRN_ERR_FORMAT);
    CHECK(strcmp(e.message, "asset 'asset://terrain/textures/dirt' is of no content type, not a "
                            "terrain_palette (its manifest's settings.content_type must be "
                            "\"terrain_palette\")") == 0);
    /* the older manifest form: "type" names the content */
    put(project, "old.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"old.json\"}");
    put(project, "old.json",
        "{\"format_version\": 3, \"name\": \"Old\", \"material_set\": \"asset://terrain/"
        "material_sets/meadow\"}");
    CHECK_OK(trn_palette_resolve(recipe, "asset://old", &p, &s, &e));
    CHECK(strcmp(p.name, "Old") == 0 && p.rule_count == 0 && s.name != NULL);
    trn_palette_dispose(&p);
    trn_material_set_dispose(&s);

    /* the material set: missing, or of another type */
    put(project, "lost.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"lost.json\"}");
    put(project, "lost.json",
        "{\"format_version\": 3, \"name\": \"Lost\", \"material_set\": \"asset://sets/gone\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://lost", &p, &s, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "material_set: palette 'asset://lost' names the material set "
                              "'asset://sets/gone', which the project ");
    CHECK_CONTAINS(e.message, "/game lacks (no manifest sets/gone.asset.json)");
    CHECK(p.name == NULL && p.rules == NULL && s.name == NULL);
    /* ... but the palette alone resolves: the set is only read when asked for */
    CHECK_OK(trn_palette_resolve(recipe, "asset://lost", &p, NULL, &e));
    trn_palette_dispose(&p);
    put(project, "wrong.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"wrong.json\"}");
    put(project, "wrong.json",
        "{\"format_version\": 3, \"name\": \"W\", \"material_set\": \"asset://old\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://wrong", &p, &s, &e), TRN_ERR_FORMAT);
    CHECK(strcmp(e.message, "asset 'asset://old' is a terrain_palette, not a "
                            "terrain_material_set (its manifest's settings.content_type must be "
                            "\"terrain_material_set\")") == 0);
    CHECK(p.name == NULL && s.name == NULL);

    /* the documents' own errors name their file */
    put(project, "bad.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"bad.json\"}");
    put(project, "bad.json", "{\"format_version\": 2, \"name\": \"B\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://bad", &p, &s, &e), TRN_ERR_VERSION);
    CHECK_CONTAINS(e.file, "/bad.json");
    CHECK_EQ_INT(e.line, 1);
    CHECK_EQ_INT(e.column, 20);
    /* sources stay inside the project; manifests name them relative to their folder */
    put(tmp, "outside.json", meadow);
    put(project, "escape.asset.json",
        "{\"type\": \"terrain_palette\", \"source\": \"../outside.json\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://escape", &p, &s, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "source: \"../outside.json\" leads outside the project folder");
    CHECK_CONTAINS(e.message, "a terrain_palette document must be inside it");
    put(project, "nosrc.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"/x.json\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://nosrc", &p, &s, &e), TRN_ERR_JSON);
    CHECK(strcmp(e.message, "source: expected the terrain_palette document's file name relative "
                            "to the manifest's folder (such as \"meadow.palette.json\")") == 0);
    CHECK_EQ_INT(e.column, 39);
    put(project, "gone.asset.json", "{\"type\": \"terrain_palette\", \"source\": \"gone.json\"}");
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://gone", &p, &s, &e), TRN_ERR_NOT_FOUND);

    /* ids */
    static const char *const bad_ids[] = {"asset://",       "asset://../x", "asset://a//b",
                                          "asset://a/./b",  "asset://a/",   "builtin://x",
                                          "terrain/meadow", "asset:///abs"};
    for (size_t i = 0; i < sizeof bad_ids / sizeof bad_ids[0]; i++) {
        CHECK_STATUS(trn_palette_resolve(recipe, bad_ids[i], &p, &s, &e), TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, "palette: expected an asset id such as "
                                  "\"asset://terrain/palettes/meadow\" (a relative path without "
                                  "'.' or '..' parts), found '");
        CHECK_CONTAINS(e.message, bad_ids[i]);
    }
    CHECK_STATUS(trn_palette_resolve(recipe, NULL, &p, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_palette_resolve(recipe, "asset://old", NULL, &s, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_palette_resolve("/nonexistent/dir/r.json", "asset://old", &p, &s, &e),
                 TRN_ERR_NOT_FOUND);
}

/* Presets are found in either manifest form; palettes beside them are not presets. */
/* A Material asset by id in a project: the manifest, the document beside it, each map a file
 * inside the project; what fails names the document's line and column. */
static void test_material_resolve(void)
{
    char tmp[512], project[600], path[900];
    trn_test_tmpdir(tmp, sizeof tmp);
    snprintf(project, sizeof project, "%s/matproj", tmp);
    mkdir(project, 0755);
    put(project, "materials/soil.asset.json",
        "{\"type\": \"Material\", \"source\": \"soil.material.json\"}");
    put(project, "materials/soil.material.json",
        "{\"format_version\": 1, \"name\": \"Soil\", \"texture_scale\": 2,\n"
        "\"maps\": {\"albedo\": \"soil/a.png\",\n\"normal\": \"soil/n.png\"}}");
    put(project, "materials/soil/a.png", "png");
    put(project, "materials/soil/n.png", "png");
    trn_material m;
    trn_error e;
    bool no_manifest = true;
    CHECK_OK(trn_material_resolve(project, "asset://materials/soil", &m, &no_manifest, &e));
    CHECK(!no_manifest);
    CHECK(m.texture_scale == 2 && m.paths[TRN_MAP_ALBEDO] && m.paths[TRN_MAP_NORMAL]);
    CHECK(m.paths[TRN_MAP_HEIGHT] == NULL);
    if (m.paths[TRN_MAP_ALBEDO]) CHECK_CONTAINS(m.paths[TRN_MAP_ALBEDO], "/materials/soil/a.png");
    CHECK(m.source && strstr(m.source, "materials/soil.material.json"));
    trn_material_dispose(&m);
    /* no manifest: a fallback is the caller's, and no_manifest says so */
    CHECK_STATUS(trn_material_resolve(project, "asset://materials/rock", &m, &no_manifest, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK(no_manifest);
    CHECK_CONTAINS(e.message, "no Material asset 'asset://materials/rock'");
    CHECK_CONTAINS(e.message, "materials/rock.asset.json");
    /* a missing map: at its value's line and column */
    snprintf(path, sizeof path, "%s/materials/soil/n.png", project);
    remove(path);
    CHECK_STATUS(trn_material_resolve(project, "asset://materials/soil", &m, &no_manifest, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK(!no_manifest && m.name == NULL && m.paths[TRN_MAP_ALBEDO] == NULL);
    CHECK_EQ_INT(e.line, 3);
    CHECK_EQ_INT(e.column, 11);
    CHECK_CONTAINS(e.message, "maps.normal: the normal map soil/n.png is missing");
    CHECK_CONTAINS(e.file, "soil.material.json");
    /* a map linked outside the project */
    char outside[700];
    snprintf(outside, sizeof outside, "%s/outside.png", tmp);
    CHECK(trn_test_write_file(outside, "png", 3));
    CHECK(symlink(outside, path) == 0);
    CHECK_STATUS(trn_material_resolve(project, "asset://materials/soil", &m, &no_manifest, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "leads outside the project folder");
    CHECK_EQ_INT(e.line, 3);
    /* a manifest of another type */
    put(project, "materials/sand.asset.json",
        "{\"type\": \"DataAsset\", \"source\": \"x.json\", \"settings\": {\"content_type\": "
        "\"terrain_preset\"}}");
    CHECK_STATUS(trn_material_resolve(project, "asset://materials/sand", &m, &no_manifest, &e),
                 TRN_ERR_FORMAT);
    CHECK(!no_manifest);
    CHECK_CONTAINS(e.message, "is a terrain_preset, not a Material");
    /* ids as everywhere */
    CHECK_STATUS(trn_material_resolve(project, "asset://../x", &m, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_material_resolve(project, "materials/soil", &m, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
}

static void test_preset_manifest_forms(void)
{
    char tmp[512];
    trn_test_tmpdir(tmp, sizeof tmp);
    put(tmp, "a/hills.asset.json",
        "{\"type\": \"DataAsset\", \"source\": \"hills.preset.json\", \"settings\": "
        "{\"content_type\": \"terrain_preset\"}}");
    put(tmp, "a/hills.preset.json", "{\"format_version\": 1, \"name\": \"Hills\", \"seed\": 9}");
    put(tmp, "b/old.asset.json", "{\"type\": \"terrain_preset\", \"source\": \"old.json\"}");
    put(tmp, "b/old.json", "{\"format_version\": 1, \"name\": \"Old\", \"seed\": 3}");
    put(tmp, "c/meadow.asset.json", palette_manifest);
    put(tmp, "c/meadow.palette.json", meadow);
    /* a DataAsset of the preset type whose settings say palette is a palette */
    put(tmp, "c/mixed.asset.json",
        "{\"type\": \"terrain_preset\", \"source\": \"m.json\", \"settings\": "
        "{\"content_type\": \"terrain_palette\"}}");
    trn_preset *all = NULL;
    uint32_t n = 0;
    trn_error e;
    CHECK_OK(trn_project_presets_load(tmp, &all, &n, &e));
    CHECK_EQ_INT(n, 2);
    if (n == 2) {
        CHECK(strcmp(all[0].id, "asset://a/hills") == 0 && strcmp(all[0].name, "Hills") == 0);
        CHECK(strcmp(all[1].id, "asset://b/old") == 0 && all[1].recipe.seed == 3);
    }
    trn_presets_free(all, n);
    trn_preset one;
    CHECK_OK(trn_preset_find(tmp, "asset://a/hills", &one, &e));
    CHECK(one.recipe.seed == 9);
    trn_preset_dispose(&one);
    CHECK_STATUS(trn_preset_find(tmp, "asset://c/meadow", &one, &e), TRN_ERR_NOT_FOUND);
    put(tmp, "d/broken.asset.json",
        "{\"type\": \"DataAsset\", \"settings\": {\"content_type\": \"terrain_preset\"}}");
    CHECK_STATUS(trn_project_presets_load(tmp, &all, &n, &e), TRN_ERR_JSON);
    CHECK(strcmp(e.message, "source: expected the preset document's file name relative to the "
                            "manifest's folder (such as \"desert.preset.json\")") == 0);
}

static void test_classify(void)
{
    CHECK_EQ_INT(trn_document_classify(meadow, sizeof meadow - 1), TRN_DOCUMENT_TERRAIN_PALETTE);
    CHECK_EQ_INT(trn_document_classify(surfaces, sizeof surfaces - 1), TRN_DOCUMENT_MATERIAL_SET);
    static const char *const palettes[] = {
        "{\"format_version\": 3, \"name\": \"n\", \"placements\": {}}",
        "{\"format_version\": 3, \"name\": \"n\", \"material_set\": \"asset://s\"}",
        "{\"format_version\": 2, \"art_density\": 1}",
        "{\"format_version\": 2, \"grass_density\": 1}",
        "{\"format_version\": 2, \"tree_density\": 1}",
        "{\"format_version\": 2, \"rock_density\": 1}",
        /* neither placements nor a material set: an empty palette, not a preset */
        "{\"format_version\": 3, \"name\": \"empty\"}"};
    for (size_t i = 0; i < sizeof palettes / sizeof palettes[0]; i++)
        CHECK_EQ_INT(trn_document_classify(palettes[i], strlen(palettes[i])),
                     TRN_DOCUMENT_TERRAIN_PALETTE);
    /* a preset stays a preset; recipes with those keys stay recipes */
    const char preset[] = "{\"format_version\": 1, \"name\": \"Hills\", \"seed\": 9}";
    CHECK_EQ_INT(trn_document_classify(preset, sizeof preset - 1), TRN_DOCUMENT_TERRAIN_PRESET);
    const char rec[] = "{\"format_version\": 1, \"resolution\": [4, 4], \"roles\": 1}";
    CHECK_EQ_INT(trn_document_classify(rec, sizeof rec - 1), TRN_DOCUMENT_RECIPE);
    const char rec2[] = "{\"format_version\": 1, \"landforms\": {}, \"placements\": 1}";
    CHECK_EQ_INT(trn_document_classify(rec2, sizeof rec2 - 1), TRN_DOCUMENT_RECIPE);
    const char no_version[] = "{\"roles\": {}, \"seed\": 1}";
    CHECK_EQ_INT(trn_document_classify(no_version, sizeof no_version - 1), TRN_DOCUMENT_RECIPE);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_TERRAIN_PALETTE), "terrain palette") == 0);
    CHECK(strcmp(trn_document_kind_name(TRN_DOCUMENT_MATERIAL_SET), "terrain material set") == 0);
    /* a recipe reader says what it was given */
    trn_recipe r;
    trn_error e;
    trn_document_kind kind;
    CHECK_STATUS(trn_recipe_parse(meadow, sizeof meadow - 1, "doc.json", &r, &kind, &e),
                 TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_TERRAIN_PALETTE);
    CHECK(strcmp(e.message, "this is a terrain_palette document, not a recipe; a recipe names "
                            "its palette by asset id (\"palette\": \"asset://...\"), and 'terrane "
                            "inspect' describes it") == 0);
    CHECK_STATUS(trn_recipe_parse(surfaces, sizeof surfaces - 1, "doc.json", &r, &kind, &e),
                 TRN_ERR_FORMAT);
    CHECK_EQ_INT(kind, TRN_DOCUMENT_MATERIAL_SET);
    CHECK_CONTAINS(e.message, "this is a terrain_material_set document, not a recipe");
}

int main(void)
{
    RUN(test_roles);
    RUN(test_material_set);
    RUN(test_material_document);
    RUN(test_palette_example);
    RUN(test_palette_defaults);
    RUN(test_palette_versions);
    RUN(test_palette_refusals);
    RUN(test_density_limit);
    RUN(test_resolve);
    RUN(test_material_resolve);
    RUN(test_preset_manifest_forms);
    RUN(test_classify);
    return trn_test_finish();
}
