/* How much JSON text a generation reads and how often it validates: counted through the
 * parser hook (trn_json_parse_count) and the validation count, for a recipe that is already
 * parsed. A recipe's graph is read once, into its model, when the document is parsed: a
 * generation then reads no text at all, and a model that no longer matches its text is not
 * used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_pos.h"
#include "graph/graph_internal.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/presets.h"
#include "test.h"

typedef struct counts {
    uint64_t parses, validations;
} counts;

static counts now(void)
{
    counts c = {trn_json_parse_count(), trn_rcp_validate_count()};
    return c;
}

/* One generation of r (with cache when given): what it parsed and validated. */
static counts generation(const trn_recipe *r, trn_graph_cache *cache)
{
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.cache = cache;
    trn_generated g;
    const counts before = now();
    CHECK_OK(trn_recipe_generate(r, &o, &g, NULL, NULL, NULL));
    const counts after = now();
    trn_generated_dispose(&g);
    counts d = {after.parses - before.parses, after.validations - before.validations};
    return d;
}

static bool same_tree(const json_t *a, const json_t *b);

static void test_hook_counts_parses(void)
{
    const uint64_t before = trn_json_parse_count();
    trn_graph g;
    static const char text[] = "{\"format_version\":1,\"nodes\":[]}";
    (void)trn_graph_parse(text, strlen(text), NULL, &g, NULL);
    trn_graph_dispose(&g);
    CHECK(trn_json_parse_count() == before + 1);
}

/* A preset with an explicit graph (stream power, erosion, drainage) at 65 x 65 samples. */
static void test_regeneration_with_cache(void)
{
    trn_preset p;
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/mountain-range", &p, NULL));
    trn_recipe *r = &p.recipe;
    CHECK(r->graph_json != NULL);
    CHECK_OK(trn_recipe_change_grid(r, r->size_x, r->size_z, 64, 64, TRN_EDITS_REFUSE, NULL));
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    const counts first = generation(r, cache);
    const counts again = generation(r, cache);
    fprintf(stderr, "first: %llu parses, %llu validations; again: %llu parses, %llu validations\n",
            (unsigned long long)first.parses, (unsigned long long)first.validations,
            (unsigned long long)again.parses, (unsigned long long)again.validations);
    /* A generation validates once and reads no JSON text (before the graph was read into the
     * recipe's model: 4 texts, the graph for validation, its identity for the cache key, that
     * identity inside the canonical text, and the graph again for evaluation). */
    CHECK(first.validations == 1);
    CHECK(again.validations == 1);
    CHECK(first.parses == 0);
    CHECK(again.parses == 0);
    /* The hook still sees a graph whose text was replaced after reading (the model is not
     * used for it), so the zeros above are not a hook that counts nothing. */
    char *kept = r->graph_json;
    const size_t n = strlen(kept) + 1;
    r->graph_json = malloc(n + 1);
    CHECK(r->graph_json != NULL);
    r->graph_json[0] = ' ';
    memcpy(r->graph_json + 1, kept, n);
    const counts copy = generation(r, cache);
    CHECK(copy.parses >= 1);
    free(r->graph_json);
    r->graph_json = kept;
    trn_graph_cache_free(cache);
    trn_preset_dispose(&p);
}

/* trn_graph_from_recipe copies the graph read with the recipe: no text, the same graph. */
static void test_graph_from_recipe_copies(void)
{
    trn_preset p;
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/mountain-range", &p, NULL));
    trn_graph copied, parsed;
    const uint64_t before = trn_json_parse_count();
    CHECK_OK(trn_graph_from_recipe(&p.recipe, &copied, NULL));
    CHECK(trn_json_parse_count() == before);
    CHECK_OK(trn_graph_parse(p.recipe.graph_json, strlen(p.recipe.graph_json), NULL, &parsed,
                             NULL));
    char *a = NULL, *b = NULL;
    CHECK_OK(trn_graph_to_json(&copied, false, &a, NULL, NULL));
    CHECK_OK(trn_graph_to_json(&parsed, false, &b, NULL, NULL));
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    trn_graph_dispose(&copied);
    trn_graph_dispose(&parsed);
    trn_preset_dispose(&p);
}

/* Every built-in preset at 65 x 65: a warm regeneration reads no text either. */
static void test_every_preset(void)
{
    for (uint32_t k = 0; k < trn_builtin_preset_count(); k++) {
        trn_preset p;
        CHECK_OK(trn_builtin_preset_load(trn_builtin_preset_id(k), &p, NULL));
        trn_recipe *r = &p.recipe;
        CHECK_OK(trn_recipe_change_grid(r, r->size_x, r->size_z, 64, 64, TRN_EDITS_REFUSE, NULL));
        trn_graph_cache *cache = NULL;
        CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
        (void)generation(r, cache);
        const counts again = generation(r, cache);
        if (again.parses != 0)
            fprintf(stderr, "%s: %llu texts read\n", trn_builtin_preset_id(k),
                    (unsigned long long)again.parses);
        CHECK(again.parses == 0);
        trn_graph_cache_free(cache);
        trn_preset_dispose(&p);
    }
}

/* A landform's evolution (examples/recipes/hills.json) is read once too; an evolution text
 * replaced after reading is read again, and keys the terrain it now describes. */
static void test_landform_evolution(void)
{
    trn_recipe r;
    /* Reading the recipe reads its text once: the evolutions come from the document's tree. */
    const uint64_t before_read = trn_json_parse_count();
    CHECK_OK(trn_recipe_read(TRN_SOURCE_DIR "/examples/recipes/hills.json", &r, NULL, NULL));
    fprintf(stderr, "hills.json read: %llu texts\n",
            (unsigned long long)(trn_json_parse_count() - before_read));
    CHECK(trn_json_parse_count() - before_read == 1);
    CHECK_OK(trn_recipe_change_grid(&r, r.size_x, r.size_z, 64, 64, TRN_EDITS_REFUSE, NULL));
    trn_landform *lf = NULL;
    for (uint32_t k = 0; k < r.landform_count && !lf; k++)
        if (r.landforms[k].evolution) lf = &r.landforms[k];
    CHECK(lf != NULL);
    if (!lf) return;
    CHECK(trn_rcp_model_evolution(&r, lf) != NULL);
    /* Its tree is what reading its kept text gives (the canonical text and cache key use it). */
    const trn_rcp_evolution *e = trn_rcp_model_evolution_of(&r, lf);
    json_t *read = json_loads(lf->evolution, JSON_REJECT_DUPLICATES, NULL);
    CHECK(e && read && same_tree(e->tree, read));
    json_decref(read);
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    (void)generation(&r, cache);
    const counts again = generation(&r, cache);
    CHECK(again.parses == 0);
    uint64_t before, after;
    CHECK_OK(trn_recipe_cache_key(&r, &before, NULL));
    const char *steps = strstr(lf->evolution, "\"steps\":");
    CHECK(steps != NULL);
    if (steps) {
        const size_t at = (size_t)(steps - lf->evolution) + sizeof "\"steps\":" - 1;
        char *changed = malloc(strlen(lf->evolution) + 2);
        CHECK(changed != NULL);
        memcpy(changed, lf->evolution, at);
        changed[at] = '1'; /* 100 -> 1100 steps */
        strcpy(changed + at + 1, lf->evolution + at);
        free(lf->evolution);
        lf->evolution = changed;
        CHECK(trn_rcp_model_evolution(&r, lf) == NULL);
        CHECK_OK(trn_recipe_cache_key(&r, &after, NULL));
        CHECK(after != before);
    }
    trn_graph_cache_free(cache);
    trn_recipe_dispose(&r);
}

/* Same JSON, keys in the same order, integers and reals alike (what a reader would see). */
static char *dup_text(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool same_tree(const json_t *a, const json_t *b)
{
    if (json_typeof(a) != json_typeof(b)) return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) return false;
        void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
        for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                         ib = json_object_iter_next((json_t *)b, ib))
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0 ||
                !same_tree(json_object_iter_value(ia), json_object_iter_value(ib)))
                return false;
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t k = 0; k < json_array_size(a); k++)
            if (!same_tree(json_array_get(a, k), json_array_get(b, k))) return false;
        return true;
    }
    if (json_is_real(a)) return json_real_value(a) == json_real_value(b);
    return json_equal((json_t *)a, (json_t *)b);
}

/* The model of a graph is what reading its kept text gives: the tree (key order and number
 * kinds too), the identity; a changed model would change cache keys and outputs. */
static void check_model(const trn_recipe *r)
{
    const struct trn_recipe_model *m = trn_rcp_model_of(r);
    CHECK(m != NULL);
    if (!m) return;
    json_t *read = json_loads(r->graph_json, JSON_REJECT_DUPLICATES, NULL);
    CHECK(read != NULL);
    CHECK(same_tree(m->tree, read));
    json_decref(read);
    char *identity = trn_graph_identity_of_json(r->graph_json);
    CHECK(identity != NULL && strcmp(identity, m->identity) == 0);
    free(identity);
}

static void test_model_reads_back(void)
{
    for (uint32_t k = 0; k < trn_builtin_preset_count(); k++) {
        trn_preset p;
        CHECK_OK(trn_builtin_preset_load(trn_builtin_preset_id(k), &p, NULL));
        if (p.recipe.graph_json) check_model(&p.recipe);
        trn_preset_dispose(&p);
    }
    /* Whole reals, a whole number past 2^53, keys out of order, an unknown value kind. */
    static const char text[] =
        "{\"size\":[100,100],\"resolution\":[16,16],\"seed\":1,\"default_landform\":\"l\","
        "\"landforms\":{\"l\":{}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0,1,0,1]}},"
        "\"graph\":{\"nodes\":[{\"type\":\"constant\",\"id\":\"c\","
        "\"params\":{\"value\":2.0,\"z\":{\"b\":1.0,\"a\":[1e300,-0.0,12345678901234567.0]}}},"
        "{\"id\":\"o\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"c\"}}}],"
        "\"output\":\"o\",\"format_version\":1.0}}";
    trn_recipe r;
    /* Reading reads the document and the graph's short identity text, nothing more. */
    const uint64_t before_read = trn_json_parse_count();
    CHECK_OK(trn_recipe_parse(text, strlen(text), NULL, &r, NULL, NULL));
    CHECK(trn_json_parse_count() - before_read == 2);
    check_model(&r);
    /* A graph text replaced after reading is what counts: the stale model is not used. */
    uint64_t before, after, fresh;
    CHECK_OK(trn_recipe_cache_key(&r, &before, NULL));
    char *changed = dup_text(r.graph_json);
    char *two = changed ? strstr(changed, "\"value\":2") : NULL;
    CHECK(two != NULL);
    if (two) two[sizeof "\"value\":" - 1] = '3';
    free(r.graph_json);
    r.graph_json = changed;
    CHECK_OK(trn_recipe_cache_key(&r, &after, NULL));
    trn_recipe again;
    char *text3 = dup_text(text);
    CHECK(text3 && strstr(text3, "\"value\":2.0"));
    strstr(text3, "\"value\":2.0")[sizeof "\"value\":" - 1] = '3';
    CHECK_OK(trn_recipe_parse(text3, strlen(text3), NULL, &again, NULL, NULL));
    CHECK_OK(trn_recipe_cache_key(&again, &fresh, NULL));
    CHECK(after != before);
    CHECK(after == fresh);
    free(text3);
    trn_recipe_dispose(&again);
    trn_recipe_dispose(&r);
}

/* A recipe without a graph runs the implicit one, kept as data: the same graph its text gives. */
static void test_implicit_graph(void)
{
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_graph parsed, scratch;
    const trn_graph *held;
    const char *text = trn_graph_implicit_json();
    CHECK_OK(trn_graph_parse(text, strlen(text), NULL, &parsed, NULL));
    const uint64_t before = trn_json_parse_count();
    CHECK_OK(trn_graph_of_recipe(&r, &held, &scratch, NULL));
    CHECK(trn_json_parse_count() == before);
    char *a = NULL, *b = NULL;
    CHECK_OK(trn_graph_to_json(&parsed, false, &a, NULL, NULL));
    CHECK_OK(trn_graph_to_json(held, false, &b, NULL, NULL));
    CHECK(a && b && strcmp(a, b) == 0);
    free(a);
    free(b);
    trn_graph_dispose(&scratch);
    trn_graph_dispose(&parsed);
}

int main(void)
{
    RUN(test_hook_counts_parses);
    RUN(test_regeneration_with_cache);
    RUN(test_graph_from_recipe_copies);
    RUN(test_every_preset);
    RUN(test_landform_evolution);
    RUN(test_model_reads_back);
    RUN(test_implicit_graph);
    return trn_test_finish();
}
