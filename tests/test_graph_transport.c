/* Tests for signed erosion transport through the graph: erosion, sums, blends, pass-through,
 * cache files and thread counts. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"
#include "test.h"

/* ---- helpers ---- */

/* A 48x48-cell recipe over 192x192 units with a graph. */
static bool load_recipe(const char *graph, trn_recipe *r)
{
    static const char head[] =
        "{\"size\":[192,192],\"resolution\":[48,48],\"seed\":91,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":90,"
        "\"octaves\":4}},\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":"
        "[0.4,0.6,0.3,1]}},\"graph\":%s}";
    const size_t n = sizeof head + strlen(graph);
    char *text = malloc(n);
    snprintf(text, n, head, graph);
    trn_error e;
    const trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    free(text);
    return st == TRN_OK;
}

/* Erosion small enough to run in a blink, with thermal passes (final quality). */
#define ERODE(id, from, rate)                                                                      \
    "{\"id\":\"" id "\",\"type\":\"erosion\",\"params\":{\"droplets\":400,\"lifetime\":16,"        \
    "\"erosion_rate\":" rate ",\"thermal_iterations\":2},\"inputs\":{\"field\":{\"node\":\"" from  \
    "\",\"pin\":\"field\"}}}"

static const char *const NODES =
    "{\"id\":\"lf\",\"type\":\"landform\"},"
    "{\"id\":\"flat\",\"type\":\"flat_terrain\",\"params\":{\"height\":12}}," ERODE(
        "e1", "lf",
        "0.3") "," ERODE("e2", "e1",
                         "0.6") ","
                                "{\"id\":\"mask\",\"type\":\"elevation_mask\",\"params\":{\"min\":"
                                "20,\"max\":40,"
                                "\"falloff\":15},\"inputs\":{\"field\":{\"node\":\"lf\"}}},"
                                "{\"id\":\"drain\",\"type\":\"drainage\",\"inputs\":{\"field\":{"
                                "\"node\":\"e2\",\"pin\":"
                                "\"field\"}}},"
                                "{\"id\":\"lake\",\"type\":\"basin_water\",\"inputs\":{"
                                "\"drainage\":{\"node\":\"drain\","
                                "\"pin\":\"drainage\"}}},";

/* The graph NODES + blend(a, b, amount, mask?) -> offset -> biome_rules -> output; the drainage
 * and basin water hang off e2 and feed the output's water. */
static char *graph_text(const char *a, const char *b, const char *amount, bool mask)
{
    char *t = malloc(8192);
    snprintf(t, 8192,
             "{\"format_version\":1,\"output\":\"out\",\"nodes\":[%s"
             "{\"id\":\"bl\",\"type\":\"height_blend\",\"params\":{\"amount\":%s},\"inputs\":{"
             "\"a\":{\"node\":\"%s\",\"pin\":\"field\"},\"b\":{\"node\":\"%s\",\"pin\":\"field\"}"
             "%s}},"
             "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":3},\"inputs\":{"
             "\"field\":{\"node\":\"bl\"}}},"
             "{\"id\":\"bi\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"off\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"bi\"},"
             "\"water\":{\"node\":\"lake\",\"pin\":\"water\"}}}]}",
             NODES, amount, a, b, mask ? ",\"mask\":{\"node\":\"mask\"}" : "");
    return t;
}

typedef struct fixture {
    trn_recipe recipe;
    trn_graph graph;
    trn_graph_run *run;
} fixture;

static bool fixture_run(fixture *f, const char *a, const char *b, const char *amount, bool mask,
                        int threads, trn_graph_cache *cache)
{
    memset(f, 0, sizeof *f);
    char *g = graph_text(a, b, amount, mask);
    bool ok = load_recipe(g, &f->recipe);
    trn_error e;
    if (ok && trn_graph_parse(g, strlen(g), "g.json", &f->graph, &e)) {
        fprintf(stderr, "graph refused: %s\n", e.message);
        ok = false;
    }
    free(g);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.cache = cache;
    if (ok && trn_graph_evaluate(&f->graph, &f->recipe, &o, &f->run, NULL, NULL, &e)) {
        fprintf(stderr, "evaluation failed: %s\n", e.message);
        ok = false;
    }
    return ok;
}

static void fixture_dispose(fixture *f)
{
    trn_graph_run_free(f->run);
    trn_graph_dispose(&f->graph);
    trn_recipe_dispose(&f->recipe);
}

static size_t samples(const fixture *f)
{
    return ((size_t)f->recipe.cells_x + 1u) * ((size_t)f->recipe.cells_z + 1u);
}

/* The transport of a node's output (pin NULL: its first), or NULL. */
static const float *transport_of(const fixture *f, const char *id, const char *pin)
{
    trn_graph_value v;
    if (trn_graph_run_output(f->run, id, pin, &v, NULL)) return NULL;
    return v.transport;
}

static const float *values_of(const fixture *f, const char *id, const char *pin)
{
    trn_graph_value v;
    if (trn_graph_run_output(f->run, id, pin, &v, NULL)) return NULL;
    return v.values;
}

static bool same_bits(const float *a, const float *b, size_t n)
{
    return a && b && memcmp(a, b, n * sizeof *a) == 0;
}

static bool all_zero(const float *a, size_t n)
{
    for (size_t k = 0; a && k < n; k++)
        if (a[k] != 0.0f || signbit(a[k])) return false;
    return a != NULL;
}

/* ---- tests ---- */

/* One erosion: its field's transport is its signed change, bit for bit; generators carry
 * none; the change cuts and deposits (both signs present). */
static void test_erosion_transport_is_change(void)
{
    fixture f;
    CHECK(fixture_run(&f, "e1", "flat", "0", false, 2, NULL));
    const size_t n = samples(&f);
    const float *t = transport_of(&f, "e1", "field"), *change = trn_graph_run_change(f.run, "e1");
    CHECK(same_bits(t, change, n));
    CHECK(transport_of(&f, "lf", NULL) == NULL && transport_of(&f, "flat", NULL) == NULL);
    /* The masks carry none. */
    CHECK(transport_of(&f, "e1", "deposited") == NULL && transport_of(&f, "mask", NULL) == NULL);
    size_t cut = 0, deposit = 0;
    for (size_t k = 0; t && k < n; k++) {
        cut += t[k] < 0.0f;
        deposit += t[k] > 0.0f;
    }
    CHECK(cut > 0 && deposit > 0);
    fixture_dispose(&f);
}

/* Two erosions add: the second's transport is the first's plus its own change, in float. */
static void test_two_erosions_add(void)
{
    fixture f;
    CHECK(fixture_run(&f, "e2", "flat", "0", false, 2, NULL));
    const size_t n = samples(&f);
    const float *t1 = transport_of(&f, "e1", "field"), *t2 = transport_of(&f, "e2", "field"),
                *c2 = trn_graph_run_change(f.run, "e2");
    CHECK(t1 && t2 && c2);
    size_t wrong = 0, differs = 0;
    for (size_t k = 0; t1 && t2 && c2 && k < n; k++) {
        const float want = t1[k] + c2[k];
        wrong += memcmp(&want, &t2[k], sizeof want) != 0;
        differs += t2[k] != c2[k];
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK(differs > 0); /* the first erosion's part is really there */
    fixture_dispose(&f);
}

/* Height Blend weights transport exactly as heights: amount 0 takes A's (a discarded B adds
 * nothing), amount 1 takes B's, a mask blends each sample with the heights' weight; a missing
 * transport counts as zeros; both missing give none. */
static void test_blend_weights(void)
{
    fixture f;
    /* B discarded: A (flat) has none, so the blend's transport is exactly zero. */
    CHECK(fixture_run(&f, "flat", "e2", "0", false, 1, NULL));
    const size_t n = samples(&f);
    CHECK(all_zero(transport_of(&f, "bl", NULL), n));
    fixture_dispose(&f);
    /* A discarded at amount 1: B's transport, bit for bit. */
    CHECK(fixture_run(&f, "flat", "e2", "1", false, 1, NULL));
    CHECK(same_bits(transport_of(&f, "bl", NULL), transport_of(&f, "e2", "field"), n));
    fixture_dispose(&f);
    /* Amount 0 with the eroded branch as A: A's transport. */
    CHECK(fixture_run(&f, "e2", "e1", "0", false, 1, NULL));
    CHECK(same_bits(transport_of(&f, "bl", NULL), transport_of(&f, "e2", "field"), n));
    fixture_dispose(&f);
    /* Through a mask at amount 0.75: each sample weighted as the heights are. */
    CHECK(fixture_run(&f, "e1", "e2", "0.75", true, 1, NULL));
    const float *ta = transport_of(&f, "e1", "field"), *tb = transport_of(&f, "e2", "field"),
                *m = values_of(&f, "mask", NULL), *t = transport_of(&f, "bl", NULL);
    const float *ha = values_of(&f, "e1", "field"), *hb = values_of(&f, "e2", "field"),
                *h = values_of(&f, "bl", NULL);
    size_t wrong = 0, inner = 0, zero_w = 0;
    for (size_t k = 0; ta && tb && m && t && ha && hb && h && k < n; k++) {
        const double w = 0.75 * (double)m[k];
        const float want = w == 0.0 ? ta[k]
                           : w == 1.0
                               ? tb[k]
                               : (float)((double)ta[k] + ((double)tb[k] - (double)ta[k]) * w);
        const float height =
            w == 0.0 ? ha[k] : (float)((double)ha[k] + ((double)hb[k] - (double)ha[k]) * w);
        wrong += memcmp(&want, &t[k], sizeof want) != 0 || memcmp(&height, &h[k], 4) != 0;
        inner += w > 0.0 && w < 0.75;
        zero_w += w == 0.0;
    }
    CHECK(t != NULL);
    CHECK_EQ_INT(wrong, 0);
    CHECK(inner > 0 && zero_w > 0); /* the mask's ramp and its outside were both tested */
    fixture_dispose(&f);
    /* Neither input eroded: no transport at all. */
    CHECK(fixture_run(&f, "lf", "flat", "0.5", true, 1, NULL));
    CHECK(transport_of(&f, "bl", NULL) == NULL && transport_of(&f, "out", NULL) == NULL);
    trn_graph_value v;
    CHECK_OK(trn_graph_run_terrain(f.run, &v, NULL));
    CHECK(v.transport == NULL);
    fixture_dispose(&f);
}

/* Offsets, Biome Rules, the output, drainage and water nodes move no material: the same
 * transport passes through (shared, not copied); the terrain publishes it. */
static void test_pass_through(void)
{
    fixture f;
    CHECK(fixture_run(&f, "e2", "flat", "0", false, 2, NULL));
    const size_t n = samples(&f);
    const float *t = transport_of(&f, "e2", "field");
    CHECK(t != NULL);
    CHECK(transport_of(&f, "bl", NULL) != t && same_bits(transport_of(&f, "bl", NULL), t, n));
    const float *bl = transport_of(&f, "bl", NULL);
    CHECK(bl && transport_of(&f, "off", NULL) == bl && transport_of(&f, "bi", NULL) == bl);
    trn_graph_value v;
    CHECK_OK(trn_graph_run_terrain(f.run, &v, NULL));
    CHECK(v.transport == bl);
    /* Heights changed by the offset, transport not. */
    CHECK(values_of(&f, "off", NULL) && values_of(&f, "bl", NULL) &&
          values_of(&f, "off", NULL)[0] == values_of(&f, "bl", NULL)[0] + 3.0f);
    CHECK(transport_of(&f, "drain", "drainage") == t);
    CHECK(transport_of(&f, "drain", "accumulation") == NULL);
    CHECK(transport_of(&f, "lake", "field") == t);
    fixture_dispose(&f);
}

/* A cache folder keeps transport: a second process (a new cache on the folder) reads every node
 * from disk and gets the same bits. */
static void test_cached_run(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_graph_cache *c1 = NULL, *c2 = NULL;
    trn_error e;
    CHECK_OK(trn_graph_cache_new(dir, 0, &c1, &e));
    fixture a, b;
    CHECK(fixture_run(&a, "e1", "e2", "0.75", true, 2, c1));
    CHECK_OK(trn_graph_cache_new(dir, 0, &c2, &e));
    CHECK(fixture_run(&b, "e1", "e2", "0.75", true, 2, c2));
    const size_t n = samples(&a);
    const char *ids[] = {"e1", "e2", "bl", "off", "bi"};
    for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
        uint32_t count = 0;
        const trn_node_report *reps = trn_graph_run_report(b.run, &count);
        for (uint32_t q = 0; q < count; q++)
            if (strcmp(reps[q].id, ids[k]) == 0) CHECK(reps[q].outcome == TRN_NODE_REUSED_DISK);
        CHECK(same_bits(transport_of(&a, ids[k], NULL), transport_of(&b, ids[k], NULL), n));
    }
    CHECK(
        same_bits(transport_of(&a, "drain", "drainage"), transport_of(&b, "drain", "drainage"), n));
    fixture_dispose(&a);
    fixture_dispose(&b);
    trn_graph_cache_free(c1);
    trn_graph_cache_free(c2);
}

/* The thread count never changes a bit of the transport. */
static void test_threads(void)
{
    fixture f[3];
    for (int t = 0; t < 3; t++)
        CHECK(fixture_run(&f[t], "e1", "e2", "0.75", true, t + 1, NULL));
    const size_t n = samples(&f[0]);
    for (int t = 1; t < 3; t++) {
        CHECK(same_bits(transport_of(&f[0], "e2", "field"), transport_of(&f[t], "e2", "field"), n));
        CHECK(same_bits(transport_of(&f[0], "bl", NULL), transport_of(&f[t], "bl", NULL), n));
    }
    for (int t = 0; t < 3; t++)
        fixture_dispose(&f[t]);
}

/* Generation exposes the published field's transport (a copy); without erosion upstream, none. */
static void test_generated_transport(void)
{
    fixture f;
    CHECK(fixture_run(&f, "e1", "e2", "0.75", true, 2, NULL));
    const size_t n = samples(&f);
    trn_generated gen;
    trn_error e;
    CHECK_OK(trn_recipe_generate(&f.recipe, NULL, &gen, NULL, NULL, &e));
    trn_graph_value v;
    CHECK_OK(trn_graph_run_terrain(f.run, &v, NULL));
    CHECK(gen.transport != v.transport && same_bits(gen.transport, v.transport, n));
    trn_generated_dispose(&gen);
    fixture_dispose(&f);
    CHECK(fixture_run(&f, "lf", "flat", "0.5", false, 2, NULL));
    CHECK_OK(trn_recipe_generate(&f.recipe, NULL, &gen, NULL, NULL, &e));
    CHECK(gen.transport == NULL);
    trn_generated_dispose(&gen);
    fixture_dispose(&f);
}

int main(void)
{
    RUN(test_erosion_transport_is_change);
    RUN(test_two_erosions_add);
    RUN(test_blend_weights);
    RUN(test_pass_through);
    RUN(test_cached_run);
    RUN(test_threads);
    RUN(test_generated_transport);
    return trn_test_finish();
}
