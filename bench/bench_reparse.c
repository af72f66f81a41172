/* Benchmark: what a regeneration from an already parsed recipe spends around its nodes. The
 * Mountain Range preset (an explicit graph: stream power, erosion, drainage) at 65 x 65 samples,
 * regenerated with a warm node cache (every node reused), timed whole, and the validation and
 * cache key it computes (which read the graph's JSON text again until the recipe kept its graph
 * read once) timed alone; then a session (what the studio edits) on the same recipe, one raise
 * stroke at a time, and the cache key such a stroke computes for the changed recipe, alone. The
 * parser hook's count of JSON texts read per regeneration and per stroke beside them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/json_pos.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"

#define RUNS 200

static int cmp(const void *a, const void *b)
{
    return cmp_double(a, b);
}

int main(int argc, char **argv)
{
    const int runs = argc > 1 ? atoi(argv[1]) : RUNS;
    if (runs < 1) {
        fprintf(stderr, "usage: bench_reparse [RUNS (%d)]\n", RUNS);
        return 2;
    }
    trn_preset p;
    trn_error e;
    if (trn_builtin_preset_load("builtin://terrain/mountain-range", &p, &e) != TRN_OK ||
        trn_recipe_change_grid(&p.recipe, p.recipe.size_x, p.recipe.size_z, 64, 64,
                               TRN_EDITS_REFUSE, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    trn_graph_cache *cache = NULL;
    if (trn_graph_cache_new(NULL, 0, &cache, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.cache = cache;
    double *t = malloc((size_t)runs * sizeof *t), *k = malloc((size_t)runs * sizeof *k);
    if (!t || !k) return 1;
    trn_generated g;
    if (trn_recipe_generate(&p.recipe, &o, &g, NULL, NULL, &e) != TRN_OK) { /* fills the cache */
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    trn_generated_dispose(&g);
    const uint64_t parses0 = trn_json_parse_count();
    for (int i = 0; i < runs; i++) {
        const double t0 = now_s();
        if (trn_recipe_generate(&p.recipe, &o, &g, NULL, NULL, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        t[i] = now_s() - t0;
        trn_generated_dispose(&g);
    }
    const double parses = (double)(trn_json_parse_count() - parses0) / runs;
    for (int i = 0; i < runs; i++) {
        uint64_t key;
        const double t0 = now_s();
        if (trn_recipe_validate(&p.recipe, &e) != TRN_OK ||
            trn_recipe_cache_key(&p.recipe, &key, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        k[i] = now_s() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    qsort(k, (size_t)runs, sizeof *k, cmp);
    printf("65x65 mountain-range, warm cache, %d runs, load %.2f\n", runs, load_average());
    printf("regeneration: median %.3f ms, best %.3f ms; %.1f JSON texts read each\n",
           t[runs / 2] * 1e3, t[0] * 1e3, parses);
    printf("validate + cache key alone: median %.4f ms, best %.4f ms\n", k[runs / 2] * 1e3,
           k[0] * 1e3);
    /* A session's strokes (the studio's edit): raise, radius 6 cells, here and there. */
    trn_session *ss = NULL;
    if (trn_session_new(&p.recipe, &o, &ss, NULL, NULL, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    const uint64_t parses1 = trn_json_parse_count();
    for (int i = 0; i < runs; i++) {
        double pt[2] = {p.recipe.size_x * (0.1 + 0.8 * (double)((i * 7) % 50) / 50),
                        p.recipe.size_z * (0.1 + 0.8 * (double)((i * 3) % 50) / 50)};
        trn_stroke st;
        memset(&st, 0, sizeof st);
        st.kind = TRN_STROKE_RAISE;
        st.radius = 6.0 * p.recipe.size_x / 64;
        st.strength = 0.5;
        st.falloff = 0.5;
        st.points = pt;
        st.point_count = 1;
        const double t0 = now_s();
        if (trn_session_apply_stroke(ss, &st, NULL, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        (void)trn_session_result(ss);
        t[i] = now_s() - t0;
    }
    const double stroke_parses = (double)(trn_json_parse_count() - parses1) / runs;
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("session stroke (+ result): median %.3f ms, best %.3f ms; %.1f JSON texts read each\n",
           t[runs / 2] * 1e3, t[0] * 1e3, stroke_parses);
    /* What a stroke spends on the cache key: the session's recipe (now with its strokes), changed
     * before each key so that nothing kept is reused, keyed as a stroke keys it (no validation). */
    const trn_recipe *sr = trn_session_recipe(ss);
    trn_recipe view = *sr; /* shares the session's arrays and model; never disposed */
    char *canon = NULL;
    size_t canon_size = 0;
    if (trn_recipe_canonical_json(sr, &canon, &canon_size, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    free(canon);
    for (int i = 0; i < runs; i++) {
        uint64_t key;
        view.seed = sr->seed + 1u + (uint64_t)(i & 1);
        const double t0 = now_s();
        if (trn_rcp_cache_key_of_valid(&view, &key, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        t[i] = now_s() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("cache key of the changed %u-stroke recipe (%zu bytes of canonical text): median %.3f "
           "ms, best %.3f ms\n",
           sr->stroke_count, canon_size, t[runs / 2] * 1e3, t[0] * 1e3);
    /* The studio keeps each step's canonical text (its history): the text itself, printed. */
    for (int i = 0; i < runs; i++) {
        view.seed = sr->seed + 1u + (uint64_t)(i & 1);
        const double t0 = now_s();
        if (trn_recipe_canonical_json(&view, &canon, NULL, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        t[i] = now_s() - t0;
        free(canon);
    }
    qsort(t, (size_t)runs, sizeof *t, cmp);
    printf("canonical text of the changed recipe: median %.3f ms, best %.3f ms\n",
           t[runs / 2] * 1e3, t[0] * 1e3);
    trn_session_free(ss);
    free(t);
    free(k);
    trn_graph_cache_free(cache);
    trn_preset_dispose(&p);
    return 0;
}
