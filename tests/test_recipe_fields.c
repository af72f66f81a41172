/* The recipe's field rows: every member of the recipe's structs has a row (or is the document's
 * own), each number row's range gives the standard error at the value's line and column when
 * read and the same words when a struct built in code is checked, and the cache key hashed as
 * canonical text is written equals the hash of that text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <xxhash.h>

#include "core/numtext.h"
#include "recipe/recipe_fields.h"
#include "recipe/recipe_internal.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "test.h"

/* Members no row covers on purpose: the landform's and biome's name (the key they are filed
 * under), and the recipe's model and base folder (never part of the document). */
typedef struct exempt {
    size_t offset, size;
} exempt;

/* How many holes: the rows of a table and the exempt members cover every byte of a struct of size
 * bytes but its padding (runs shorter than 8 bytes, the largest alignment): a member added without
 * a row leaves a larger hole. */
static size_t holes(const char *what, const trn_rcp_field *rows, size_t size, const exempt *ex,
                    size_t ex_count, bool quiet)
{
    unsigned char *seen = calloc(size, 1);
    if (!seen) return SIZE_MAX;
    size_t found = 0;
    for (const trn_rcp_field *f = rows; f->name; f++) {
        for (size_t i = 0; i < f->size; i++)
            seen[f->offset + i]++;
        for (size_t i = 0; i < f->size2; i++)
            seen[f->offset2 + i]++;
    }
    for (size_t e = 0; e < ex_count; e++)
        for (size_t i = 0; i < ex[e].size; i++)
            seen[ex[e].offset + i]++;
    size_t run = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && seen[i] > 1) {
            if (!quiet) fprintf(stderr, "  %s: byte %zu is covered by two rows\n", what, i);
            found++;
        }
        if (i < size && !seen[i]) {
            run++;
            continue;
        }
        if (run >= 8) {
            if (!quiet) fprintf(stderr, "  %s: bytes %zu..%zu have no row\n", what, i - run, i - 1);
            found++;
        }
        run = 0;
    }
    free(seen);
    return found;
}

#define EX(T, m)                                                                                   \
    {                                                                                              \
        offsetof(T, m), sizeof(((T *)0)->m)                                                        \
    }

static void test_rows_cover_every_member(void)
{
    const exempt recipe[] = {EX(trn_recipe, model), EX(trn_recipe, base_dir)};
    const exempt landform[] = {EX(trn_landform, name)};
    const exempt biome[] = {EX(trn_biome, name)};
    CHECK(holes("recipe", trn_rcp_recipe_fields, sizeof(trn_recipe), recipe, 2, false) == 0);
    CHECK(holes("landform", trn_rcp_landform_fields, sizeof(trn_landform), landform, 1, false) ==
          0);
    CHECK(holes("biome", trn_rcp_biome_fields, sizeof(trn_biome), biome, 1, false) == 0);
    CHECK(holes("rule", trn_rcp_rule_fields, sizeof(trn_rule), NULL, 0, false) == 0);
    /* A table missing rows is caught: the landform's without octaves and heading. */
    trn_rcp_field shorter[16];
    size_t n = 0;
    for (const trn_rcp_field *f = trn_rcp_landform_fields; f->name; f++)
        if (strcmp(f->name, "octaves") != 0 && strcmp(f->name, "heading") != 0) shorter[n++] = *f;
    shorter[n].name = NULL;
    CHECK(holes("landform", shorter, sizeof(trn_landform), landform, 1, true) == 2);
}

/* A recipe with one field set to value: a landform's, a rule's or the recipe's own. */
static const char *const doc_head = "{\n"
                                    " \"size\": [64, 64],\n"
                                    " \"resolution\": [16, 16],\n"
                                    " \"seed\": 1,\n"
                                    " \"default_landform\": \"hills\",\n"
                                    " \"default_biome\": \"grass\",\n"
                                    " \"biomes\": {\"grass\": {\"color\": [0.2, 0.6, 0.2, 1]}},\n";

static void write_doc(char *buf, size_t size, const char *where, const char *key, const char *value,
                      int *line, int *column)
{
    char field[160];
    snprintf(field, sizeof field, "\"%s\": %s", key, value);
    const int head_lines = 7;
    if (strcmp(where, "landform") == 0) {
        snprintf(buf, size, "%s \"landforms\": {\"hills\": {\n  %s\n }}\n}\n", doc_head, field);
        *line = head_lines + 2;
        *column = 3 + (int)strlen(key) + 4;
    } else if (strcmp(where, "rule") == 0) {
        snprintf(buf, size,
                 "%s \"landforms\": {\"hills\": {}},\n \"rules\": [{\"id\": \"r\", \"biome\": "
                 "\"grass\",\n  %s\n }]\n}\n",
                 doc_head, field);
        *line = head_lines + 3;
        *column = 3 + (int)strlen(key) + 4;
    } else {
        snprintf(buf, size, "%s \"landforms\": {\"hills\": {}},\n \"preset_id\": \"p\",\n %s\n}\n",
                 doc_head, field);
        *line = head_lines + 3;
        *column = 2 + (int)strlen(key) + 4;
    }
}

/* A value outside the range of which, as JSON text. */
static void out_of_range(trn_rcp_num which, char *out, size_t size)
{
    const trn_doc_range *r = trn_rcp_num_range(which);
    if (r->hi < 1e300)
        snprintf(out, size, "%.17g", r->hi * 2 + 1);
    else if (r->lo > -1e300)
        snprintf(out, size, "%.17g", r->lo - 1);
    else
        snprintf(out, size, "\"x\"");
}

/* Every number row of the landform, rule and recipe tables: reading a value outside its range
 * fails at the value's line and column with "PATH: expected EXPECT, found VALUE". */
static void check_read_errors(const char *where, const trn_rcp_field *rows, const char *path)
{
    for (const trn_rcp_field *f = rows; f->name; f++) {
        if (f->kind != TRN_RCP_NUMBER && f->kind != TRN_RCP_WHOLE && f->kind != TRN_RCP_OPTIONAL)
            continue;
        char value[64], doc[2048], expected[400], found[120];
        out_of_range(f->num, value, sizeof value);
        int line = 0, column = 0;
        write_doc(doc, sizeof doc, where, f->name, value, &line, &column);
        json_t *v = json_loads(value, JSON_DECODE_ANY, NULL);
        snprintf(expected, sizeof expected, "%s%s: expected %s, found %s", path, f->name,
                 trn_rcp_num_expect(f->num), trn_json_describe(v, found, sizeof found));
        json_decref(v);
        trn_recipe r;
        trn_error e;
        trn_error_clear(&e);
        CHECK_STATUS(trn_recipe_parse(doc, strlen(doc), "f.json", &r, NULL, &e), TRN_ERR_JSON);
        CHECK(strcmp(e.message, expected) == 0);
        CHECK_EQ_INT(e.line, line);
        CHECK_EQ_INT(e.column, column);
        if (strcmp(e.message, expected) != 0 || e.line != line || e.column != column)
            fprintf(stderr, "  %s: %d:%d %s\n  expected %d:%d %s\n", f->name, e.line, e.column,
                    e.message, line, column, expected);
    }
}

static void test_read_errors_at_the_value(void)
{
    check_read_errors("landform", trn_rcp_landform_fields, "landforms.hills.");
    check_read_errors("rule", trn_rcp_rule_fields, "rules[0].");
    check_read_errors("recipe", trn_rcp_recipe_fields, "");
    /* The row's range is what decides: roughness 1 is read, 1.0000001 is not. */
    char doc[2048];
    int line, column;
    trn_recipe r;
    write_doc(doc, sizeof doc, "landform", "roughness", "1", &line, &column);
    CHECK_OK(trn_recipe_parse(doc, strlen(doc), "f.json", &r, NULL, NULL));
    CHECK(r.landform_count == 1 && r.landforms[0].roughness == 1.0);
    trn_recipe_dispose(&r);
    write_doc(doc, sizeof doc, "landform", "roughness", "1.0000001", &line, &column);
    CHECK_STATUS(trn_recipe_parse(doc, strlen(doc), "f.json", &r, NULL, NULL), TRN_ERR_JSON);
}

/* The same rows check a recipe built in code: a member outside its row's range is refused in
 * the same words, and at its default the canonical text leaves it out. */
static void test_checks_and_defaults_of_rows(void)
{
    char doc[2048];
    int line, column;
    write_doc(doc, sizeof doc, "landform", "octaves", "5", &line, &column);
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(doc, strlen(doc), "f.json", &r, NULL, NULL));
    if (r.landform_count != 1) return;
    trn_recipe_dispose(&r);
    for (const trn_rcp_field *f = trn_rcp_landform_fields; f->name; f++) {
        if (f->kind != TRN_RCP_NUMBER && f->kind != TRN_RCP_WHOLE) continue;
        CHECK_OK(trn_recipe_parse(doc, strlen(doc), "f.json", &r, NULL, NULL));
        trn_landform *lf = &r.landforms[0];
        CHECK(trn_rcp_field_is_default(f, lf));
        char value[64];
        out_of_range(f->num, value, sizeof value);
        const double bad = value[0] == '"' ? NAN : strtod(value, NULL);
        if (f->kind == TRN_RCP_NUMBER)
            *(double *)(void *)((char *)lf + f->offset) = bad;
        else
            *(uint32_t *)(void *)((char *)lf + f->offset) = (uint32_t)bad;
        trn_error e;
        trn_error_clear(&e);
        CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
        char num[40], expected[400];
        if (isnan(bad))
            snprintf(num, sizeof num, "NaN");
        else
            trn_rcp_format_double(f->kind == TRN_RCP_WHOLE ? (double)(uint32_t)bad : bad, num);
        snprintf(expected, sizeof expected, "landforms.hills.%s: expected %s, found %s", f->name,
                 trn_rcp_num_expect(f->num), num);
        CHECK(strcmp(e.message, expected) == 0);
        if (strcmp(e.message, expected) != 0)
            fprintf(stderr, "  %s\n  expected %s\n", e.message, expected);
        trn_recipe_dispose(&r);
    }
}

/* XXH64 of the generator version and the canonical text, as docs/recipes.md defines the key. */
static uint64_t key_of_text(const trn_recipe *r)
{
    char *text = NULL;
    size_t size = 0;
    if (trn_recipe_canonical_json(r, &text, &size, NULL) != TRN_OK) return 0;
    XXH64_state_t *s = XXH64_createState();
    XXH64_reset(s, 0);
    const unsigned char le[4] = {TRN_GENERATOR_VERSION & 0xFF, 0, 0, 0};
    XXH64_update(s, le, 4);
    XXH64_update(s, text, size);
    const uint64_t k = XXH64_digest(s);
    XXH64_freeState(s);
    free(text);
    return k;
}

/* The key hashes the canonical text as it is written, in pieces: the same value as hashing the
 * whole text, for every built-in preset (graphs without one, landforms with evolutions) and for
 * a recipe whose text runs to many buffers (strokes, some merged into one entry). */
static void test_key_is_the_hash_of_the_text(void)
{
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++) {
        trn_preset p;
        CHECK_OK(trn_builtin_preset_load(trn_builtin_preset_id(i), &p, NULL));
        /* No graph: the graph's identity is the text a key hashes. */
        char *graph = p.recipe.graph_json;
        p.recipe.graph_json = NULL;
        uint64_t key = 0;
        CHECK_OK(trn_recipe_cache_key(&p.recipe, &key, NULL));
        CHECK(key != 0 && key == key_of_text(&p.recipe));
        p.recipe.graph_json = graph;
        trn_preset_dispose(&p);
    }
    trn_preset p;
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/rolling-hills", &p, NULL));
    free(p.recipe.graph_json);
    p.recipe.graph_json = NULL;
    enum { N = 300 };
    trn_stroke *s = calloc(N, sizeof *s);
    double *pts = calloc(N * 2, sizeof *pts);
    CHECK(s && pts);
    if (!s || !pts) return;
    for (int i = 0; i < N; i++) {
        s[i].kind = i % 3 == 2 ? TRN_STROKE_SMOOTH : TRN_STROKE_RAISE;
        s[i].radius = 5.0 + (i / 3 % 2);
        s[i].strength = 0.5;
        s[i].falloff = 0.5;
        pts[i * 2] = 1.0 + i * 0.1234567;
        pts[i * 2 + 1] = 2.0 + i * 0.7654321;
        s[i].points = &pts[i * 2];
        s[i].point_count = 1;
    }
    p.recipe.strokes = s;
    p.recipe.stroke_count = N;
    uint64_t key = 0;
    char *text = NULL;
    size_t size = 0;
    CHECK_OK(trn_recipe_cache_key(&p.recipe, &key, NULL));
    CHECK_OK(trn_recipe_canonical_json(&p.recipe, &text, &size, NULL));
    CHECK(size > 3 * 4096);
    CHECK(key == key_of_text(&p.recipe));
    /* Printing what it reads back gives the same text. */
    trn_recipe back;
    CHECK_OK(trn_recipe_parse(text, size, NULL, &back, NULL, NULL));
    char *again = NULL;
    CHECK_OK(trn_recipe_canonical_json(&back, &again, NULL, NULL));
    CHECK(again && strcmp(again, text) == 0);
    free(again);
    trn_recipe_dispose(&back);
    free(text);
    p.recipe.strokes = NULL;
    p.recipe.stroke_count = 0;
    free(s);
    free(pts);
    trn_preset_dispose(&p);
}

/* A stroke's rows: every key once, sorted for canonical text, the defaults a parsed stroke gets,
 * and the keys each kind lists in an unknown-key message. */
static void test_stroke_rows(void)
{
    const trn_stroke_field *const *sorted = trn_stroke_fields_sorted;
    size_t n = 0;
    for (const trn_stroke_field *f = trn_stroke_fields; f->name; f++)
        n++;
    size_t m = 0;
    while (sorted[m])
        m++;
    /* Every row once (sorted and distinct: none twice, so none left out). */
    CHECK(n == 12 && m == n);
    for (size_t k = 1; k < m; k++)
        CHECK(strcmp(sorted[k - 1]->name, sorted[k]->name) < 0);
    trn_stroke s;
    memset(&s, 0, sizeof s);
    trn_stroke_field_defaults(&s);
    CHECK(s.strength == 1.0 && s.falloff == 0.5 && s.radius == 0.0 && s.target_height == 0.0);
    const char *known[16];
    trn_stroke_field_names(1u << TRN_STROKE_PROTECT, known);
    CHECK(strcmp(known[0], "type") == 0 && strcmp(known[1], "layer") == 0 &&
          strcmp(known[2], "grid") == 0 && strcmp(known[3], "samples") == 0 && !known[4]);
    trn_stroke_field_names(TRN_STROKE_STAMPED, known);
    CHECK(strcmp(known[2], "radius") == 0 && strcmp(known[9], "mode") == 0 && !known[10]);
    const trn_stroke_field *f = trn_stroke_field_find("target_height");
    CHECK(f && f->kinds == 1u << TRN_STROKE_FLATTEN && f->value == TRN_STROKE_NUMBER && f->always);
    /* A flatten stroke without strength or falloff keys: canonical text leaves them out. */
    trn_recipe r;
    const char *text =
        "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 1, \"default_landform\": "
        "\"a\", \"landforms\": {\"a\": {}}, \"default_biome\": \"g\", \"biomes\": {\"g\": "
        "{\"color\": [0, 0, 0, 1]}}, \"edits\": [{\"type\": \"flatten\", \"radius\": 4, "
        "\"target_height\": 2, \"falloff\": 0.25, \"center\": [1, 2]}]}";
    CHECK_OK(trn_recipe_parse(text, strlen(text), "s.json", &r, NULL, NULL));
    char *canon = NULL;
    size_t size = 0;
    CHECK_OK(trn_recipe_canonical_json(&r, &canon, &size, NULL));
    if (canon)
        CHECK_CONTAINS(canon, "\"edits\":[{\"falloff\":0.25,\"points\":[[1,2]],\"radius\":4,"
                              "\"target_height\":2,\"type\":\"flatten\"}]");
    free(canon);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_stroke_rows);
    RUN(test_rows_cover_every_member);
    RUN(test_read_errors_at_the_value);
    RUN(test_checks_and_defaults_of_rows);
    RUN(test_key_is_the_hash_of_the_text);
    return trn_test_finish();
}
