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
#include "recipe/recipe_model.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
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
    /* A generation reads no JSON text (before the graph was read into the recipe's model: 4
     * texts, the graph for validation, its identity for the cache key, that identity inside the
     * canonical text, and the graph again for evaluation); the first validates the recipe its
     * new grid made (the one read was checked as it was read), and a regeneration of the same
     * content checks nothing again. */
    CHECK(first.validations == 1);
    CHECK(again.validations == 0);
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
        CHECK(again.validations == 0);
        trn_graph_cache_free(cache);
        trn_preset_dispose(&p);
    }
}

/* A studio stroke (a session's stroke, then its result with the refreshed cache key) reads no
 * JSON text and checks the changed recipe once: the key of the changed recipe is its canonical
 * text hashed as it is written from the recipe, not checked again. The key is the one the
 * recipe gives afresh. */
static void test_session_stroke(void)
{
    trn_preset p;
    CHECK_OK(trn_builtin_preset_load("builtin://terrain/mountain-range", &p, NULL));
    trn_recipe *r = &p.recipe;
    CHECK_OK(trn_recipe_change_grid(r, r->size_x, r->size_z, 32, 32, TRN_EDITS_REFUSE, NULL));
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(r, &o, &ss, NULL, NULL, NULL));
    if (!ss) {
        trn_preset_dispose(&p);
        return;
    }
    for (int i = 0; i < 3; i++) {
        double pt[2] = {r->size_x * (0.2 + 0.2 * i), r->size_z * 0.5};
        trn_stroke st;
        memset(&st, 0, sizeof st);
        st.kind = TRN_STROKE_RAISE;
        st.radius = r->size_x / 8;
        st.strength = 0.5;
        st.falloff = 0.5;
        st.points = pt;
        st.point_count = 1;
        const counts before = now();
        CHECK_OK(trn_session_apply_stroke(ss, &st, NULL, NULL));
        const trn_generated *g = trn_session_result(ss);
        const counts after = now();
        CHECK(after.parses == before.parses);
        CHECK(after.validations == before.validations + 1u);
        uint64_t fresh = 0;
        trn_recipe copy = *trn_session_recipe(ss);
        copy.model = NULL; /* nothing kept: the graph read from its text again */
        CHECK_OK(trn_recipe_cache_key(&copy, &fresh, NULL));
        CHECK(g && g->cache_key == fresh);
    }
    trn_session_free(ss);
    trn_preset_dispose(&p);
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

/* A recipe with something in every part a fingerprint covers: evolution, rules, layers, every
 * kind of stroke, palette, graph, preset stamp. */
static const char full_text[] =
    "{\"size\":[64,64],\"resolution\":[16,16],\"seed\":3,\"sea_level\":1,\"snow_line\":50,"
    "\"default_landform\":\"l\",\"landforms\":{\"l\":{\"evolution\":{}}},"
    "\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0,1,0,1],\"material\":"
    "\"asset://m\",\"landform\":\"l\",\"groundmodel\":\"GRASS\"},\"s\":{\"color\":[1,1,0,1]}},"
    "\"rules\":[{\"id\":\"r\",\"biome\":\"s\",\"priority\":2,\"blend\":1,"
    "\"elevation\":[0,9],\"slope\":[0,30],\"moisture\":[0,1],\"water_distance\":[0,6],"
    "\"substrate\":[\"sand\"]}],"
    "\"regions\":[{\"type\":\"region\",\"biome\":\"s\",\"radius\":9,\"center\":[6,7]}],"
    "\"edits\":[{\"type\":\"flatten\",\"radius\":2,\"target_height\":-3,\"center\":[1,2]},"
    "{\"type\":\"protect\",\"grid\":[16,16],\"samples\":[[0,0,1.5],[3,1,0]]}],"
    "\"exclusions\":[{\"type\":\"exclusion\",\"mode\":\"erase\",\"radius\":3,"
    "\"center\":[4,5]}],"
    "\"palette\":\"asset://p\","
    "\"graph\":{\"format_version\":1,\"nodes\":[{\"id\":\"c\",\"type\":\"landform\"},"
    "{\"id\":\"o\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"c\"}}}],"
    "\"output\":\"o\"},"
    "\"preset_id\":\"p\",\"preset_version\":1}";

static uint64_t print_of(const trn_recipe *r)
{
    uint64_t p = 0;
    CHECK(trn_rcp_fingerprint(r, &p));
    return p;
}

/* Each member flipped and put back: the fingerprint changes, then returns. */
#define FLIP(r, lvalue, other)                                                                    \
    do {                                                                                           \
        const uint64_t was = print_of(r);                                                          \
        __typeof__(lvalue) kept = (lvalue);                                                        \
        (lvalue) = (other);                                                                        \
        if (print_of(r) == was) fprintf(stderr, "not in the fingerprint: %s\n", #lvalue);          \
        CHECK(print_of(r) != was);                                                                 \
        (lvalue) = kept;                                                                           \
        CHECK(print_of(r) == was);                                                                 \
    } while (0)

/* Validation reads every member of a recipe; the fingerprint that stands for "validated" must
 * change with every one of them, else a changed value would go unchecked. */
static void test_fingerprint_covers_every_member(void)
{
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(full_text, strlen(full_text), NULL, &r, NULL, NULL));
    CHECK(r.stroke_count == 4 && r.rule_count == 1 && r.layer_count == 5 && r.biome_count == 2);
    if (r.stroke_count != 4 || r.rule_count != 1 || r.biome_count != 2) return;
    char other[] = "x";
    FLIP(&r, r.size_x, 65.0);
    FLIP(&r, r.size_z, 65.0);
    FLIP(&r, r.cells_x, 17u);
    FLIP(&r, r.cells_z, 17u);
    FLIP(&r, r.seed, 4u);
    FLIP(&r, r.chunk_cells, 8u);
    FLIP(&r, r.has_sea_level, false);
    FLIP(&r, r.sea_level, 2.0);
    FLIP(&r, r.has_snow_line, false);
    FLIP(&r, r.snow_line, 51.0);
    FLIP(&r, r.default_landform, other);
    FLIP(&r, r.landform_count, 0u);
    trn_landform *l = &r.landforms[0];
    FLIP(&r, l->name, other);
    FLIP(&r, l->profile, TRN_PROFILE_RIDGED);
    FLIP(&r, l->base_height, 1.0);
    FLIP(&r, l->height_variation, 1.0);
    FLIP(&r, l->feature_size, 1.0);
    FLIP(&r, l->roughness, 0.25);
    FLIP(&r, l->octaves, 2u);
    FLIP(&r, l->warp_amplitude, 1.0);
    FLIP(&r, l->warp_feature_size, 1.0);
    FLIP(&r, l->stretch, 2.0);
    FLIP(&r, l->heading, 1.0);
    FLIP(&r, l->evolution, other);
    FLIP(&r, r.default_biome, other);
    FLIP(&r, r.biome_count, 1u);
    trn_biome *b = &r.biomes[0];
    FLIP(&r, b->name, other);
    FLIP(&r, b->color[3], 0.5f);
    FLIP(&r, b->material, other);
    FLIP(&r, b->texture_scale, 2.0);
    FLIP(&r, b->landform, other);
    FLIP(&r, b->allow_snow, false);
    FLIP(&r, b->groundmodel[0], 'X');
    FLIP(&r, r.rule_count, 0u);
    trn_rule *u = &r.rules[0];
    FLIP(&r, u->id, other);
    FLIP(&r, u->biome, other);
    FLIP(&r, u->layer, other);
    FLIP(&r, u->priority, 3.0);
    FLIP(&r, u->blend, 2.0);
    FLIP(&r, u->elevation.set, false);
    FLIP(&r, u->elevation.min, 1.0);
    FLIP(&r, u->elevation.max, 8.0);
    FLIP(&r, u->slope.max, 8.0);
    FLIP(&r, u->moisture.max, 0.5);
    FLIP(&r, u->water_distance.max, 5.0);
    FLIP(&r, u->substrate_mask, 0u);
    FLIP(&r, r.layer_count, 4u);
    FLIP(&r, r.has_layers, true);
    trn_layer *y = &r.layers[1];
    FLIP(&r, y->id, other);
    FLIP(&r, y->name, other);
    FLIP(&r, y->group, TRN_LAYER_SCULPT);
    FLIP(&r, y->enabled, false);
    FLIP(&r, r.stroke_count, 3u);
    trn_stroke *s = &r.strokes[0]; /* the region */
    FLIP(&r, s->kind, TRN_STROKE_RAISE);
    FLIP(&r, s->layer, other);
    FLIP(&r, s->radius, 8.0);
    FLIP(&r, s->strength, 0.5);
    FLIP(&r, s->falloff, 0.25);
    FLIP(&r, s->biome, other);
    FLIP(&r, s->point_count, 0u);
    FLIP(&r, s->points[1], 8.0);
    FLIP(&r, s->points, NULL);
    FLIP(&r, r.strokes[1].target_height, 1.0);
    FLIP(&r, r.strokes[3].erase, false);
    s = &r.strokes[2]; /* the protect stroke */
    CHECK(s->kind == TRN_STROKE_PROTECT && s->sample_count == 2);
    FLIP(&r, s->grid_cells_x, 8u);
    FLIP(&r, s->grid_cells_z, 8u);
    FLIP(&r, s->sample_count, 1u);
    FLIP(&r, s->sample_index[1], 2u);
    FLIP(&r, s->sample_height[1], 2.0f);
    FLIP(&r, s->sample_height, NULL);
    FLIP(&r, r.palette_json, other);
    FLIP(&r, r.graph_json, other);
    FLIP(&r, r.preset_id, other);
    FLIP(&r, r.has_preset_version, false);
    FLIP(&r, r.preset_version, 2.0);
    /* A NULL string is not "" (nor any other text). */
    char empty[] = "";
    char *preset_id = r.preset_id;
    r.preset_id = NULL;
    const uint64_t none = print_of(&r);
    r.preset_id = empty;
    CHECK(print_of(&r) != none);
    r.preset_id = preset_id;
    /* Arrays that validation refuses before reading them are not walked either. */
    uint64_t p;
    trn_rule *rules = r.rules;
    r.rules = NULL;
    CHECK(!trn_rcp_fingerprint(&r, &p));
    r.rules = rules;
    const uint32_t n = r.rule_count;
    r.rule_count = TRN_RCP_MAX_RULES + 1u;
    CHECK(!trn_rcp_fingerprint(&r, &p));
    r.rule_count = n;
    trn_recipe_dispose(&r);
}

/* One generation (with a fresh cache) of r: what it validated, and its status. */
static trn_status generation_status(const trn_recipe *r, uint64_t *validations, trn_error *err)
{
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_generated g;
    const uint64_t before = trn_rcp_validate_count();
    const trn_status st = trn_recipe_generate(r, &o, &g, NULL, NULL, err);
    *validations = trn_rcp_validate_count() - before;
    if (!st) trn_generated_dispose(&g);
    return st;
}

/* A recipe is checked as it is read; generations check it again only when it changed, and a
 * change to a bad value is refused with the message validation gives. */
static void test_checked_once(void)
{
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(full_text, strlen(full_text), NULL, &r, NULL, NULL));
    uint64_t checks = 0;
    trn_error e;
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 0);
    /* A bad value: refused, as validation words it. */
    r.landforms[0].octaves = 99;
    struct trn_recipe_model *m = r.model;
    r.model = NULL;
    trn_error plain;
    CHECK(trn_recipe_validate(&r, &plain) == TRN_ERR_VALIDATION);
    r.model = m;
    CHECK(generation_status(&r, &checks, &e) == TRN_ERR_VALIDATION);
    CHECK(checks == 1);
    CHECK(strcmp(e.message, plain.message) == 0);
    CHECK(generation_status(&r, &checks, &e) == TRN_ERR_VALIDATION);
    CHECK(checks == 1);
    /* Put back: what was read passes without a check; a good change is checked once. */
    r.landforms[0].octaves = 5;
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 0);
    r.seed = 9;
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 1);
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 0);
    /* A recipe built in code (no model) is checked every time. */
    r.model = NULL;
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 1);
    CHECK_OK(generation_status(&r, &checks, &e));
    CHECK(checks == 1);
    r.model = m;
    trn_recipe_dispose(&r);
}

/* The cache key a recipe keeps is the one its text gives: after a change, the new one. */
static void test_kept_cache_key(void)
{
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(full_text, strlen(full_text), NULL, &r, NULL, NULL));
    struct trn_recipe_model *m = r.model;
    uint64_t kept[3], plain[3];
    for (int k = 0; k < 3; k++) {
        if (k == 1) r.seed = 11; /* changed */
        if (k == 2) r.landforms[0].heading = 45; /* changed again */
        CHECK_OK(trn_recipe_cache_key(&r, &kept[k], NULL));
        uint64_t twice;
        CHECK_OK(trn_recipe_cache_key(&r, &twice, NULL));
        CHECK(twice == kept[k]);
        r.model = NULL; /* computed from the text, nothing kept */
        CHECK_OK(trn_recipe_cache_key(&r, &plain[k], NULL));
        r.model = m;
        CHECK(kept[k] == plain[k]);
    }
    CHECK(kept[0] != kept[1] && kept[1] != kept[2]);
    trn_recipe_dispose(&r);
}

/* A Water Edit's overrides are read with the graph: neither a regeneration nor its check reads
 * their text again, and an override still takes effect. */
static void test_water_edit_read_once(void)
{
    static const char text[] =
        "{\"size\":[256,256],\"resolution\":[32,32],\"seed\":5,\"sea_level\":-50,"
        "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{}},"
        "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},"
        "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"ground\",\"type\":\"flat_terrain\",\"params\":{\"height\":0}},"
        "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"level\":2,\"center\":[128,128],"
        "\"radius\":60},\"inputs\":{\"field\":{\"node\":\"ground\"}}},"
        "{\"id\":\"e\",\"type\":\"water_edit\",\"params\":{\"overrides\":[{\"id\":\"l\","
        "\"roughness\":0.25,\"level\":3}]},\"inputs\":{\"field\":{\"node\":\"l\",\"pin\":"
        "\"field\"},\"water\":{\"node\":\"l\",\"pin\":\"water\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"e\","
        "\"pin\":\"field\"},\"water\":{\"node\":\"e\",\"pin\":\"water\"}}}]}}";
    trn_recipe r;
    trn_error e;
    trn_error_clear(&e);
    CHECK_OK(trn_recipe_parse(text, strlen(text), "w.json", &r, NULL, &e));
    if (e.code) fprintf(stderr, "%s\n", e.message);
    (void)generation(&r, NULL);
    const counts again = generation(&r, NULL);
    fprintf(stderr, "water edit regeneration: %llu parses\n", (unsigned long long)again.parses);
    CHECK(again.parses == 0);
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, &o, &g, NULL, NULL, NULL));
    CHECK(g.water.body_count == 1);
    if (g.water.body_count == 1)
        CHECK(g.water.bodies[0].level == 3.0 && g.water.bodies[0].look.roughness == 0.25);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_water_edit_read_once);
    RUN(test_fingerprint_covers_every_member);
    RUN(test_checked_once);
    RUN(test_kept_cache_key);
    RUN(test_hook_counts_parses);
    RUN(test_regeneration_with_cache);
    RUN(test_graph_from_recipe_copies);
    RUN(test_every_preset);
    RUN(test_session_stroke);
    RUN(test_landform_evolution);
    RUN(test_model_reads_back);
    RUN(test_implicit_graph);
    return trn_test_finish();
}
