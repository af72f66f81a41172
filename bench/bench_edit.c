/* Benchmark: one raise stroke applied incrementally to a 4097x4097-sample session against
 * regenerating the whole terrain, the replay cost of 10,000 stamps during full generation on two
 * terrain sizes (it follows the footprints, not the terrain size), and a stroke in a 2049^2
 * session that keeps palette placements and surface roles current. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "terrane/scatter.h"

static trn_band band(double lo, double hi)
{
    trn_band b = {true, lo, hi};
    return b;
}

typedef struct bench_recipe {
    trn_landform land;
    trn_biome biomes[3];
    trn_rule rules[2];
    trn_recipe recipe;
} bench_recipe;

/* One world unit a cell; fbm hills with a slope rule and a snowline (slope and elevation are
 * what an edit changes). */
static void make_recipe(bench_recipe *b, uint32_t cells)
{
    memset(b, 0, sizeof *b);
    b->land.name = (char *)"hills";
    b->land.profile = TRN_PROFILE_FBM;
    b->land.height_variation = 120.0;
    b->land.feature_size = 400.0;
    b->land.roughness = 0.5;
    b->land.octaves = 6;
    b->land.warp_feature_size = 128.0;
    b->land.stretch = 1.0;
    const char *names[3] = {"grass", "rock", "snow"};
    for (int k = 0; k < 3; k++) {
        b->biomes[k].name = (char *)names[k];
        b->biomes[k].color[3] = 1.0f;
        b->biomes[k].texture_scale = 1.0;
        b->biomes[k].allow_snow = true;
    }
    b->rules[0].id = (char *)"cliffs";
    b->rules[0].biome = (char *)"rock";
    b->rules[0].priority = 2;
    b->rules[0].slope = band(35.0, 90.0);
    b->rules[1].id = (char *)"snowline";
    b->rules[1].biome = (char *)"snow";
    b->rules[1].priority = 1;
    b->rules[1].elevation = band(90.0, 1000.0);
    trn_recipe *r = &b->recipe;
    r->size_x = r->size_z = (double)cells;
    r->cells_x = r->cells_z = cells;
    r->seed = 4242;
    r->chunk_cells = 32;
    r->has_sea_level = true;
    r->sea_level = 20.0;
    r->default_landform = b->land.name;
    r->landforms = &b->land;
    r->landform_count = 1;
    r->default_biome = (char *)"grass";
    r->biomes = b->biomes;
    r->biome_count = 3;
    r->rules = b->rules;
    r->rule_count = 2;
}

static uint64_t fingerprint(const trn_generated *g)
{
    uint64_t h = 1469598103934665603ull;
    const size_t n = trn_field_sample_count(&g->field);
    for (size_t k = 0; k < n; k++) {
        uint32_t bits;
        memcpy(&bits, &g->field.heights[k], 4);
        h = (h ^ bits ^ ((uint64_t)g->biomes.values[k] << 32)) * 1099511628211ull;
    }
    return h;
}

/* The replay runs between the water distance's last report and the biomes' first. */
typedef struct replay_clock {
    double water_end, biomes_start;
} replay_clock;

static int replay_progress(double done, const char *stage, void *user)
{
    (void)done;
    replay_clock *c = user;
    if (strcmp(stage, "water distance") == 0) c->water_end = now_s();
    if (strcmp(stage, "biomes") == 0 && c->biomes_start == 0.0) c->biomes_start = now_s();
    return TRN_CONTINUE;
}

static int fail(const char *what, trn_status st, const trn_error *e)
{
    fprintf(stderr, "%s failed: %s: %s\n", what, trn_status_name(st), e->message);
    return 1;
}

static int bench_stroke(uint32_t cells, int threads)
{
    bench_recipe b;
    make_recipe(&b, cells);
    trn_generate_options go = {
        .threads = threads, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    trn_error e;
    trn_session *ss = NULL;
    double t0 = now_s();
    trn_status st = trn_session_new(&b.recipe, &go, &ss, NULL, NULL, &e);
    const double t_new = now_s() - t0;
    if (st) return fail("session", st, &e);
    printf("session %ux%u samples: created in %.2f s\n", cells + 1u, cells + 1u, t_new);
    /* 200 strokes of radius 8 at spread positions, one stamp each, timed one by one. */
    enum { N = 200 };
    double times[N];
    for (int k = 0; k < N; k++) {
        double p[2] = {(double)cells * (0.1 + 0.8 * (double)((k * 37) % N) / N),
                       (double)cells * (0.1 + 0.8 * (double)((k * 91) % N) / N)};
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = TRN_STROKE_RAISE;
        s.radius = 8.0;
        s.strength = 1.5;
        s.falloff = 0.5;
        s.points = p;
        s.point_count = 1;
        trn_chunk_set set;
        t0 = now_s();
        st = trn_session_apply_stroke(ss, &s, &set, &e);
        times[k] = now_s() - t0;
        if (st) return fail("apply", st, &e);
        trn_chunk_set_dispose(&set);
    }
    /* median */
    for (int a = 1; a < N; a++)
        for (int c = a; c > 0 && times[c - 1] > times[c]; c--) {
            double t = times[c];
            times[c] = times[c - 1];
            times[c - 1] = t;
        }
    const double med = times[N / 2], worst = times[N - 1];
    /* Reading the result refreshes its cache key (canonical JSON of the whole recipe). */
    t0 = now_s();
    (void)trn_session_result(ss);
    const double t_key = now_s() - t0;
    /* The whole terrain regenerated with every stroke: the comparison, and the check that the
     * incremental result is the same. */
    trn_generated full;
    t0 = now_s();
    st = trn_recipe_generate(trn_session_recipe(ss), &go, &full, NULL, NULL, &e);
    const double t_full = now_s() - t0;
    if (st) return fail("generate", st, &e);
    const bool same = fingerprint(&full) == fingerprint(trn_session_result(ss));
    printf("  one raise stroke (radius 8 units = 8 cells): median %.3f ms, slowest %.3f ms of %d "
           "(target < 2 ms)\n",
           med * 1e3, worst * 1e3, N);
    printf("  reading the result after it (refreshes the cache key of the %d-stroke recipe): "
           "%.3f ms\n",
           N, t_key * 1e3);
    printf("  full regeneration with the %d strokes: %.2f s = %.0fx the incremental stroke (target "
           ">= 1000x); %s\n",
           N, t_full, t_full / med, same ? "identical result" : "RESULTS DIFFER");
    trn_generated_dispose(&full);
    trn_session_free(ss);
    return same ? 0 : 1;
}

/* 10,000 stamps (1,000 strokes of 10 stamps: raise, lower, flatten, smooth) of radius 8 cells
 * over the terrain: generation time with and without them. */
static int bench_replay(uint32_t cells, int threads)
{
    bench_recipe b;
    make_recipe(&b, cells);
    enum { STROKES = 1000, PER = 10 };
    trn_stroke *strokes = calloc(STROKES, sizeof *strokes);
    double *points = malloc(STROKES * PER * 2 * sizeof *points);
    if (!strokes || !points) return 1;
    uint64_t x = 88172645463325252ull;
    for (int s = 0; s < STROKES; s++) {
        trn_stroke *k = &strokes[s];
        k->kind = (trn_stroke_kind)(s % 4);
        k->radius = 8.0;
        k->strength = k->kind <= TRN_STROKE_LOWER ? 1.0 : 0.5;
        k->falloff = 0.5;
        k->target_height = 50.0;
        k->points = points + (size_t)s * PER * 2;
        k->point_count = PER;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const double cx = 16.0 + (double)(x % (cells - 64u)),
                     cz = 16.0 + (double)((x >> 20) % (cells - 64u));
        for (int p = 0; p < PER; p++) {
            k->points[2 * p] = cx + 3.0 * p;
            k->points[2 * p + 1] = cz + 1.5 * p;
        }
    }
    trn_generate_options go = {
        .threads = threads, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    trn_error e;
    trn_generated g;
    /* Best of 3 each way: generation time varies more than the replay costs. */
    double t_plain = 1e9, t_edit = 1e9, t_replay = 1e9;
    for (int run = 0; run < 6; run++) {
        const bool edits = run % 2 == 1;
        b.recipe.strokes = edits ? strokes : NULL;
        b.recipe.stroke_count = edits ? STROKES : 0;
        replay_clock clock = {0.0, 0.0};
        const double t0 = now_s();
        trn_status st = trn_recipe_generate(&b.recipe, &go, &g, replay_progress, &clock, &e);
        const double t = now_s() - t0;
        if (st) return fail("generate", st, &e);
        trn_generated_dispose(&g);
        if (!edits && t < t_plain) t_plain = t;
        if (edits && t < t_edit) t_edit = t;
        if (edits && clock.biomes_start - clock.water_end < t_replay)
            t_replay = clock.biomes_start - clock.water_end;
    }
    printf("  %ux%u samples: generation without strokes %.3f s, with 10,000 stamps %.3f s; the "
           "replay itself %.1f ms (%.2f us a stamp)\n",
           cells + 1u, cells + 1u, t_plain, t_edit, t_replay * 1e3,
           t_replay * 1e6 / (STROKES * PER));
    free(strokes);
    free(points);
    return 0;
}

static trn_scatter_rule placement_rule(const char *id, trn_scatter_category category,
                                       double density, double candidate_spacing, double slope_lo,
                                       double slope_hi)
{
    trn_scatter_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.prefab = (char *)"asset://prefabs/cube";
    r.category = category;
    r.density = density;
    r.candidate_spacing = candidate_spacing;
    r.scale[0] = r.scale[1] = 1.0;
    r.yaw[1] = 360.0;
    r.cluster_size = 16.0;
    r.slope.has = true;
    r.slope.lo = slope_lo;
    r.slope.hi = slope_hi;
    return r;
}

/* A session of cells + 1 samples square with a palette (grass on a 1-unit lattice, trees, rocks
 * on steep ground) and surface roles; N raise strokes of radius 8 timed one by one, with and
 * without roles (placements alone follow the stroke; roles add a drainage of the whole surface,
 * since an edit can reroute flow anywhere downstream). */
static int bench_stroke_placements(uint32_t cells, int threads)
{
    bench_recipe b;
    make_recipe(&b, cells);
    trn_scatter_rule rules[3] = {
        placement_rule("grass", TRN_CATEGORY_GRASS, 0.5, 1.0, 0.0, 30.0),
        placement_rule("pine", TRN_CATEGORY_TREE, 0.02, 2.0, 0.0, 25.0),
        placement_rule("boulder", TRN_CATEGORY_ROCK, 0.01, 2.0, 20.0, 90.0)};
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    palette.name = (char *)"bench";
    palette.art_density = palette.grass_density = palette.tree_density = palette.rock_density = 1;
    palette.rules = rules;
    palette.rule_count = 3;
    for (int roles = 1; roles >= 0; roles--) {
        trn_generate_options go = {.threads = threads,
                                   .quality = TRN_EROSION_FINAL,
                                   .palette = &palette,
                                   .roles = roles != 0};
        trn_error e;
        trn_session *ss = NULL;
        double t0 = now_s();
        trn_status st = trn_session_new(&b.recipe, &go, &ss, NULL, NULL, &e);
        const double t_new = now_s() - t0;
        if (st) return fail("session", st, &e);
        enum { N = 30 };
        double times[N], cpu[N];
        uint64_t flips = 0, role_chunks = 0;
        for (int k = 0; k < N; k++) {
            double p[2] = {(double)cells * (0.1 + 0.8 * (double)((k * 37) % N) / N),
                           (double)cells * (0.1 + 0.8 * (double)((k * 11) % N) / N)};
            trn_stroke s;
            memset(&s, 0, sizeof s);
            s.kind = TRN_STROKE_RAISE;
            s.radius = 8.0;
            s.strength = 6.0;
            s.falloff = 0.5;
            s.points = p;
            s.point_count = 1;
            const clock_t c0 = clock();
            t0 = now_s();
            st = trn_session_apply_stroke(ss, &s, NULL, &e);
            times[k] = now_s() - t0;
            cpu[k] = (double)(clock() - c0) / CLOCKS_PER_SEC;
            if (st) return fail("apply", st, &e);
            const trn_session_edit *ed = trn_session_last_edit(ss);
            flips += ed->placements_removed + ed->placements_restored;
            role_chunks += ed->roles_changed.changed_count;
        }
        qsort(times, N, sizeof *times, cmp_double);
        qsort(cpu, N, sizeof *cpu, cmp_double);
        printf("  %s: session created in %.2f s, %" PRIu64
               " placements; one raise stroke (radius 8): median %.2f ms, best %.2f ms, slowest "
               "%.2f ms of %d (cpu median %.2f ms; %" PRIu64 " placements and %" PRIu64
               " role chunks changed in all)\n",
               roles ? "placements and roles" : "placements only", t_new,
               trn_session_last_edit(ss)->placements, times[N / 2] * 1e3, times[0] * 1e3,
               times[N - 1] * 1e3, N, cpu[N / 2] * 1e3, flips, role_chunks);
        trn_session_free(ss);
    }
    return 0;
}

/* A session of cells + 1 samples square whose graph publishes an ocean: each stroke settles the
 * water again on the edited surface (as a full generation does), so a stroke costs that too. */
static int bench_stroke_water(uint32_t cells, int threads)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"size\":[%u,%u],\"resolution\":[%u,%u],\"seed\":5,\"sea_level\":-50,"
             "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
             "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},"
             "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
             "{\"id\":\"land\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":"
             "40,\"feature_size\":300}},{\"id\":\"sea\",\"type\":\"water_body\",\"params\":"
             "{\"kind\":\"ocean\",\"level\":15},\"inputs\":{\"field\":{\"node\":\"land\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
             "\"sea\",\"pin\":\"field\"},\"water\":{\"node\":\"sea\",\"pin\":\"water\"}}}]}}",
             cells, cells, cells, cells);
    trn_recipe r;
    trn_error e;
    trn_status st = trn_recipe_parse(text, strlen(text), "bench.json", &r, NULL, &e);
    if (st) return fail("recipe", st, &e);
    const trn_generate_options go = {.threads = threads, .quality = TRN_EROSION_FINAL};
    trn_session *ss = NULL;
    st = trn_session_new(&r, &go, &ss, NULL, NULL, &e);
    trn_recipe_dispose(&r);
    if (st) return fail("session", st, &e);
    enum { N = 15 };
    double times[N];
    for (int k = 0; k < N; k++) {
        double p[2] = {(double)cells * (0.1 + 0.8 * (double)((k * 7) % N) / N),
                       (double)cells * (0.1 + 0.8 * (double)((k * 4) % N) / N)};
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = TRN_STROKE_LOWER;
        s.radius = 8.0;
        s.strength = 6.0;
        s.falloff = 0.5;
        s.points = p;
        s.point_count = 1;
        const double t0 = now_s();
        st = trn_session_apply_stroke(ss, &s, NULL, &e);
        times[k] = now_s() - t0;
        if (st) return fail("apply", st, &e);
    }
    qsort(times, N, sizeof *times, cmp_double);
    printf("  ocean water settled after each stroke: one lower stroke (radius 8): median %.2f ms, "
           "best %.2f ms of %d, load %.1f\n",
           times[N / 2] * 1e3, times[0] * 1e3, N, load_average());
    trn_session_free(ss);
    return 0;
}

int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) - 1u : 4096u;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    /* "placements": only the session stroke with placements and roles, on 2049^2. */
    const bool placements_only = argc > 3 && strcmp(argv[3], "placements") == 0;
    printf("session stroke with placements and roles, 2049x2049 samples, %d threads\n", threads);
    int rc = bench_stroke_placements(2048u, threads);
    printf("session stroke with an ocean, 2049x2049 samples, %d threads\n", threads);
    rc |= bench_stroke_water(2048u, threads);
    if (placements_only) return rc;
    rc |= bench_stroke(cells, threads);
    printf("replay of 10,000 stamps (raise, lower, flatten, smooth; radius 8 cells) during full "
           "generation, %d threads\n",
           threads);
    rc |= bench_replay(1024u, threads);
    rc |= bench_replay(cells, threads);
    return rc;
}
