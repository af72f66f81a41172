/* Layers replayed during generation: each stamp kind's arithmetic on the samples it touches,
 * evaluation order (stages, layers, strokes), disabled layers, protection, exclusion mask,
 * painted regions, and no change for recipes without strokes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_helpers.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "test.h"

static void parse(trn_recipe *r)
{
    CHECK_OK(trn_recipe_parse(lh_recipe_text, strlen(lh_recipe_text), "t.json", r, NULL, NULL));
}

static size_t idx(uint32_t i, uint32_t j)
{
    return (size_t)j * 129u + i;
}

/* Sample (i, j) sits at (2i, 2j). */
static double weight_at(uint32_t i, uint32_t j, double x, double z, double radius)
{
    const double dx = 2.0 * i - x, dz = 2.0 * j - z;
    return trn_brush_weight(sqrt(dx * dx + dz * dz), radius, 0.5);
}

static void test_no_strokes_unchanged(void)
{
    trn_recipe r;
    parse(&r);
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(g.exclusion == NULL);
    /* a stroke in a disabled layer changes nothing but the cache key */
    const double p[2] = {128, 128};
    lh_add(&r, TRN_STROKE_RAISE, "sculpt2", 30, 5, p, 1);
    r.layers[3].enabled = false;
    trn_generated d;
    CHECK_OK(trn_recipe_generate(&r, NULL, &d, NULL, NULL, NULL));
    const size_t n = trn_field_sample_count(&g.field);
    CHECK(memcmp(g.field.heights, d.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(g.biomes.values, d.biomes.values, n) == 0);
    CHECK(g.cache_key != d.cache_key);
    trn_generated_dispose(&g);
    trn_generated_dispose(&d);
    trn_recipe_dispose(&r);
}

static void test_raise_lower_flatten(void)
{
    trn_recipe r;
    parse(&r);
    trn_generated g0, g1;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g0, NULL, NULL, NULL));
    const double p[2] = {100, 60}, q[2] = {180, 180}, f[2] = {40, 200};
    lh_add(&r, TRN_STROKE_RAISE, NULL, 12, 3, p, 1);
    lh_add(&r, TRN_STROKE_LOWER, NULL, 8, 2.5, q, 1);
    trn_stroke *fl = lh_add(&r, TRN_STROKE_FLATTEN, NULL, 10, 0.75, f, 1);
    fl->target_height = 44.0;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g1, NULL, NULL, NULL));
    int bad = 0, touched = 0;
    for (uint32_t j = 0; j <= 128; j++)
        for (uint32_t i = 0; i <= 128; i++) {
            const double h = (double)g0.field.heights[idx(i, j)];
            double want = h;
            const double wr = weight_at(i, j, 100, 60, 12), wl = weight_at(i, j, 180, 180, 8),
                         wf = weight_at(i, j, 40, 200, 10);
            if (wr > 0) want = (double)(float)(h + 3 * wr);
            if (wl > 0) want = (double)(float)(h + -2.5 * wl);
            if (wf > 0) want = (double)(float)(h + 0.75 * wf * (44.0 - h));
            touched += wr > 0 || wl > 0 || wf > 0;
            bad += (double)g1.field.heights[idx(i, j)] != want;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(touched > 100);
    /* the inner disc of raise is exactly +3 (weight 1) */
    CHECK((double)g1.field.heights[idx(50, 30)] ==
          (double)(float)((double)g0.field.heights[idx(50, 30)] + 3.0));
    /* the water distance is measured on the sculpted surface (the sea inferred from its
     * level there), exactly as trn_water_distance_fill measures the final heights */
    float *want_d = malloc(129u * 129u * sizeof *want_d);
    CHECK(want_d != NULL);
    if (want_d) {
        CHECK_OK(trn_water_distance_fill(&g1.field, g1.sea_level, want_d, NULL, NULL, NULL));
        CHECK(memcmp(want_d, g1.water_distance, 129u * 129u * sizeof(float)) == 0);
        free(want_d);
    }
    trn_generated_dispose(&g0);
    trn_generated_dispose(&g1);
    trn_recipe_dispose(&r);
}

static void test_smooth_reads_pre_stamp(void)
{
    trn_recipe r;
    parse(&r);
    trn_generated g0, g1;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g0, NULL, NULL, NULL));
    const double p[2] = {128, 128};
    lh_add(&r, TRN_STROKE_SMOOTH, NULL, 9, 0.8, p, 1);
    CHECK_OK(trn_recipe_generate(&r, NULL, &g1, NULL, NULL, NULL));
    int bad = 0, moved = 0;
    for (uint32_t j = 1; j < 128; j++)
        for (uint32_t i = 1; i < 128; i++) {
            const double w = weight_at(i, j, 128, 128, 9);
            const double h = (double)g0.field.heights[idx(i, j)];
            double want = h;
            if (w > 0) {
                double sum = 0;
                for (uint32_t b = j - 1; b <= j + 1; b++)
                    for (uint32_t a = i - 1; a <= i + 1; a++)
                        sum += (double)g0.field.heights[idx(a, b)];
                want = (double)(float)(h + 0.8 * w * (sum / 9.0 - h));
            }
            bad += (double)g1.field.heights[idx(i, j)] != want;
            moved += (double)g1.field.heights[idx(i, j)] != h;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(moved > 20);
    trn_generated_dispose(&g0);
    trn_generated_dispose(&g1);
    trn_recipe_dispose(&r);
}

/* Layers in authored order whatever the order of strokes in the recipe: sculpt2's raise after
 * sculpt's flatten gives target + 5; swapping the layers gives the target. */
static void test_layer_order(void)
{
    trn_recipe r;
    parse(&r);
    const double p[2] = {128, 128};
    lh_add(&r, TRN_STROKE_RAISE, "sculpt2", 20, 5, p, 1);
    trn_stroke *f = lh_add(&r, TRN_STROKE_FLATTEN, "sculpt", 20, 1, p, 1);
    f->target_height = 70;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(fabs((double)g.field.heights[idx(64, 64)] - 75.0) < 1e-4);
    trn_generated_dispose(&g);
    trn_layer t = r.layers[2];
    r.layers[2] = r.layers[3];
    r.layers[3] = t;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(fabs((double)g.field.heights[idx(64, 64)] - 70.0) < 1e-4);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

static void test_protection_wins(void)
{
    trn_recipe r;
    parse(&r);
    const double p[2] = {60, 60};
    lh_add(&r, TRN_STROKE_RAISE, NULL, 20, 9, p, 1);
    trn_stroke *s;
    trn_stroke *list = realloc(r.strokes, (r.stroke_count + 1u) * sizeof *list);
    r.strokes = list;
    s = &list[r.stroke_count++];
    memset(s, 0, sizeof *s);
    s->kind = TRN_STROKE_PROTECT;
    s->grid_cells_x = s->grid_cells_z = 128;
    s->sample_count = 2;
    s->sample_index = malloc(2 * sizeof *s->sample_index);
    s->sample_height = malloc(2 * sizeof *s->sample_height);
    s->sample_index[0] = (uint32_t)idx(30, 30);
    s->sample_index[1] = (uint32_t)idx(100, 3);
    s->sample_height[0] = 12.5f;
    s->sample_height[1] = -3.25f;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(g.field.heights[idx(30, 30)] == 12.5f);
    CHECK(g.field.heights[idx(100, 3)] == -3.25f);
    trn_generated_dispose(&g);
    /* a snapshot of another grid does nothing */
    r.strokes[1].grid_cells_x = 64;
    r.strokes[1].sample_index[0] = 5;
    r.strokes[1].sample_index[1] = 6;
    trn_generated h;
    CHECK_OK(trn_recipe_generate(&r, NULL, &h, NULL, NULL, NULL));
    CHECK(h.field.heights[idx(30, 30)] != 12.5f);
    trn_generated_dispose(&h);
    trn_recipe_dispose(&r);
}

static void test_exclusion_mask(void)
{
    trn_recipe r;
    parse(&r);
    const double p[2] = {128, 128};
    lh_add(&r, TRN_STROKE_EXCLUSION, NULL, 10, 0.5, p, 1);
    lh_add(&r, TRN_STROKE_EXCLUSION, NULL, 10, 0.5, p, 1);
    const double q[2] = {20, 20};
    lh_add(&r, TRN_STROKE_EXCLUSION, NULL, 10, 1, q, 1);
    trn_stroke *e = lh_add(&r, TRN_STROKE_EXCLUSION, NULL, 10, 0.5, q, 1);
    e->erase = true;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(g.exclusion != NULL);
    if (g.exclusion) {
        /* 0.5 then 0.5 more of the rest: 0.75 -> round(191.25) */
        CHECK_EQ_INT(g.exclusion[idx(64, 64)], 191);
        /* 1 then erase half: 0.5 -> round(127.5) = 128 */
        CHECK_EQ_INT(g.exclusion[idx(10, 10)], 128);
        CHECK_EQ_INT(g.exclusion[idx(100, 10)], 0);
        CHECK_EQ_INT(g.exclusion[idx(64 + 5, 64)], 0); /* at the radius: weight 0 */
    }
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

/* A region of biome "r" (own landform "m") at strength 1 takes m's heights in its inner disc
 * and the painted biome where the weight is at least 0.5. */
static void test_region(void)
{
    trn_recipe r, m;
    parse(&r);
    parse(&m);
    free(m.default_landform);
    m.default_landform = lh_dup("m");
    trn_generated gm, g;
    CHECK_OK(trn_recipe_generate(&m, NULL, &gm, NULL, NULL, NULL));
    const double p[2] = {128, 128};
    trn_stroke *s = lh_add(&r, TRN_STROKE_REGION, NULL, 20, 1, p, 1);
    s->biome = lh_dup("r");
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    const int rb = trn_recipe_find_biome(&r, "r");
    CHECK(g.field.heights[idx(64, 64)] == gm.field.heights[idx(64, 64)]);
    CHECK(g.field.heights[idx(68, 64)] == gm.field.heights[idx(68, 64)]);
    CHECK_EQ_INT(g.biomes.values[idx(64, 64)], rb);
    CHECK_EQ_INT(g.sources[idx(64, 64)], TRN_BIOME_FROM_REGION);
    CHECK_EQ_INT(g.rule_index[idx(64, 64)], -1);
    /* weight at 9 cells (18 units): t = 0.2 -> 0.104 < 0.5, not painted */
    CHECK(g.sources[idx(73, 64)] != TRN_BIOME_FROM_REGION);
    /* weight at 7 cells (14 units): t = 0.6 -> 0.648 >= 0.5, painted */
    CHECK_EQ_INT(g.sources[idx(71, 64)], TRN_BIOME_FROM_REGION);
    CHECK(g.sources[idx(10, 10)] != TRN_BIOME_FROM_REGION);
    trn_generated_dispose(&gm);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&m);
    trn_recipe_dispose(&r);
}

/* With a graph the graph makes the shape: the same region stroke relabels its samples and
 * changes no height. */
static void test_region_with_graph(void)
{
    trn_recipe r, plain;
    parse(&r);
    parse(&plain);
    static const char graph[] =
        "{\"format_version\":1,\"output\":\"output\",\"nodes\":[{\"id\":\"landform\","
        "\"type\":\"landform\"},{\"id\":\"biome_rules\",\"type\":\"biome_rules\",\"inputs\":"
        "{\"field\":{\"node\":\"landform\"}}},{\"id\":\"output\",\"type\":\"terrain_output\","
        "\"inputs\":{\"field\":{\"node\":\"biome_rules\"}}}]}";
    r.graph_json = lh_dup(graph);
    trn_generated g0, g;
    CHECK_OK(trn_recipe_generate(&plain, NULL, &g0, NULL, NULL, NULL));
    const double p[2] = {128, 128};
    trn_stroke *s = lh_add(&r, TRN_STROKE_REGION, NULL, 20, 1, p, 1);
    s->biome = lh_dup("r");
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    const size_t n = trn_field_sample_count(&g.field);
    CHECK(memcmp(g.field.heights, g0.field.heights, n * sizeof(float)) == 0);
    CHECK_EQ_INT(g.biomes.values[idx(64, 64)], trn_recipe_find_biome(&r, "r"));
    CHECK_EQ_INT(g.sources[idx(64, 64)], TRN_BIOME_FROM_REGION);
    trn_generated_dispose(&g0);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&plain);
    trn_recipe_dispose(&r);
}

/* Every kind of stroke at once: the result does not depend on the thread count. */
static void test_threads(void)
{
    trn_recipe r;
    parse(&r);
    for (int k = 0; k < 60; k++) {
        const double p[4] = {(k * 37) % 256, (k * 71) % 256, (k * 37) % 256 + 5.0,
                             (k * 71) % 256 + 2.0};
        const trn_stroke_kind kind = (trn_stroke_kind)(k % 7);
        if (kind == TRN_STROKE_PROTECT) continue;
        trn_stroke *s = lh_add(&r, kind, NULL, 6 + k % 9, kind <= TRN_STROKE_LOWER ? 2 : 0.7, p, 2);
        if (kind == TRN_STROKE_REGION) s->biome = lh_dup(k % 2 ? "r" : "s");
        s->target_height = 40;
        s->erase = k % 3 == 0;
    }
    trn_generate_options
        one = {.threads = 1, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0},
        three = {.threads = 3, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    trn_generated a, b;
    CHECK_OK(trn_recipe_generate(&r, &one, &a, NULL, NULL, NULL));
    CHECK_OK(trn_recipe_generate(&r, &three, &b, NULL, NULL, NULL));
    CHECK(lh_hash(&a) == lh_hash(&b));
    CHECK(a.exclusion != NULL);
    trn_generated_dispose(&a);
    trn_generated_dispose(&b);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_no_strokes_unchanged);
    RUN(test_raise_lower_flatten);
    RUN(test_smooth_reads_pre_stamp);
    RUN(test_layer_order);
    RUN(test_protection_wins);
    RUN(test_exclusion_mask);
    RUN(test_region);
    RUN(test_region_with_graph);
    RUN(test_threads);
    return trn_test_finish();
}
