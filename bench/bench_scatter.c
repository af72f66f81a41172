/* Benchmark: six placement rules over a 4097^2 terrain of 2048 units (time, peak memory) and
 * the windowed refilter after one brush stroke. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench_util.h"
#include "terrane/recipe.h"
#include "terrane/scatter.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Hills of value noise, 0..~240 m over 2048 units; samples below 40 m are wet. */
static void fill_terrain(trn_field *f, uint8_t *wet)
{
    const size_t nx = (size_t)f->cells_x + 1u;
    const long long rows = (long long)f->cells_z + 1;
    const double cell = f->size_x / (double)f->cells_x;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long j = 0; j < rows; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i * cell, z = (double)j * cell;
            double h = 0.0, amp = 120.0, freq = 1.0 / 350.0;
            for (int o = 0; o < 5; o++) {
                h += amp * value_noise(x * freq, z * freq, 31u + (uint32_t)o);
                amp *= 0.5;
                freq *= 2.0;
            }
            f->heights[(size_t)j * nx + i] = (float)h;
            wet[(size_t)j * nx + i] = h < 40.0;
        }
}

static trn_scatter_rule rule(const char *id, trn_scatter_category category, double density,
                             double candidate_spacing, double spacing)
{
    trn_scatter_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.prefab = (char *)"asset://prefabs/cube";
    r.category = category;
    r.density = density;
    r.candidate_spacing = candidate_spacing;
    r.spacing = spacing;
    r.scale[0] = 0.8;
    r.scale[1] = 1.2;
    r.yaw[1] = 360.0;
    r.cluster_size = 16.0;
    return r;
}

/* CPU seconds of the whole process: what the run costs whatever else loads the machine. */
static long peak_rss_kib(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int main(int argc, char **argv)
{
    const uint32_t samples = argc > 1 ? (uint32_t)atoi(argv[1]) : 4097u;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    const int runs = argc > 3 ? atoi(argv[3]) : 5;
    const double size = 2048.0;
    trn_field f;
    if (trn_field_init(&f, samples - 1u, samples - 1u, size, size, NULL) != TRN_OK) return 1;
    uint8_t *wet = malloc((size_t)samples * samples);
    if (!wet) return 1;
    fill_terrain(&f, wet);

    trn_scatter_rule rules[6] = {
        rule("grass", TRN_CATEGORY_GRASS, 1.0, 0.5, 0.0),
        rule("flowers", TRN_CATEGORY_GRASS, 0.5, 0.5, 0.0),
        rule("pine", TRN_CATEGORY_TREE, 0.01, 2.0, 4.0),
        rule("oak", TRN_CATEGORY_TREE, 0.005, 3.0, 6.0),
        rule("pebbles", TRN_CATEGORY_ROCK, 0.05, 0.75, 1.5),
        rule("boulder", TRN_CATEGORY_ROCK, 0.002, 4.0, 8.0),
    };
    rules[0].slope = (trn_scatter_band){true, 0.0, 35.0};
    rules[1].cluster_strength = 0.8;
    rules[1].cluster_size = 24.0;
    rules[2].cluster_strength = 0.7;
    rules[2].cluster_size = 24.0;
    rules[2].slope = (trn_scatter_band){true, 0.0, 30.0};
    rules[4].slope = (trn_scatter_band){true, 10.0, 90.0};
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    palette.art_density = palette.grass_density = palette.tree_density = palette.rock_density = 1.0;
    palette.rules = rules;
    palette.rule_count = 6;

    trn_scatter_env env;
    memset(&env, 0, sizeof env);
    env.field = &f;
    env.wet = wet;
    env.scatter_seed = trn_subseed(42, "scatter");
    trn_scatter_options opt;
    memset(&opt, 0, sizeof opt);
    opt.threads = threads;
    if (argc > 4) opt.max_placements = (uint64_t)atoll(argv[4]); /* 1: measure without output */
    const long rss_before = peak_rss_kib();

    double *times = calloc((size_t)runs, sizeof *times);
    double *cpu = calloc((size_t)runs, sizeof *cpu);
    trn_instances base = {NULL, 0};
    trn_scatter_report rep;
    memset(&rep, 0, sizeof rep);
    for (int r = 0; r < runs; r++) {
        trn_instances_dispose(&base);
        trn_error err;
        const double t0 = now_s(), c0 = cpu_s();
        if (trn_scatter_run(&palette, &env, &opt, &base, &rep, NULL, NULL, &err) != TRN_OK) {
            fprintf(stderr, "scatter failed: %s\n", err.message);
            return 1;
        }
        times[r] = now_s() - t0;
        cpu[r] = cpu_s() - c0;
    }
    const long rss_after = peak_rss_kib();
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    double load[3] = {-1, -1, -1};
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(lf);
    }
    printf("terrain %u^2 over %.0f units, %d threads, %d runs, load average %.2f\n", samples, size,
           threads, runs, load[0]);
    printf("scatter: median %.3f s, best %.3f s; %zu instances (%.1f MiB), estimate %llu "
           "candidates, %llu spacing checks\n",
           times[runs / 2], times[0], base.count,
           (double)base.count * sizeof *base.items / 1048576.0,
           (unsigned long long)rep.candidates_estimate,
           (unsigned long long)rep.spacing_checks_estimate);
    printf("scatter CPU time (all threads): median %.3f s, best %.3f s\n", cpu[runs / 2], cpu[0]);
    printf("peak RSS: %.1f MiB before scattering (terrain, wet mask), %.1f MiB after\n",
           (double)rss_before / 1024.0, (double)rss_after / 1024.0);
    for (uint32_t r = 0; r < rep.rule_count; r++) {
        const trn_scatter_rule_report *rr = &rep.rules[r];
        printf("  %-8s candidates %10llu selected %9llu water %8llu slope %8llu spaced %8llu "
               "placed %9llu\n",
               rules[r].id, (unsigned long long)rr->candidates, (unsigned long long)rr->selected,
               (unsigned long long)rr->filtered[TRN_SCATTER_FILTER_WATER],
               (unsigned long long)rr->filtered[TRN_SCATTER_FILTER_SLOPE],
               (unsigned long long)rr->spaced_out, (unsigned long long)rr->placed);
    }

    /* Refilter after one stroke of radius 8 units: raise the disc, refilter its rectangle. */
    trn_scatter_view view;
    if (trn_scatter_view_init(&base, &view, NULL) != TRN_OK) return 1;
    const int strokes = 41;
    double *stroke_times = calloc((size_t)strokes, sizeof *stroke_times);
    const double cell = size / (double)(samples - 1u);
    const size_t nx = samples;
    size_t flipped = 0;
    for (int s = 0; s < strokes; s++) {
        const double cx = 200.0 + 40.0 * s, cz = 300.0 + 35.0 * s, radius = 8.0;
        const long i0 = (long)floor((cx - radius) / cell), i1 = (long)ceil((cx + radius) / cell);
        const long j0 = (long)floor((cz - radius) / cell), j1 = (long)ceil((cz + radius) / cell);
        for (long j = j0; j <= j1; j++)
            for (long i = i0; i <= i1; i++) {
                const double d = hypot((double)i * cell - cx, (double)j * cell - cz);
                if (d < radius)
                    f.heights[(size_t)j * nx + (size_t)i] += (float)(6.0 * (1.0 - d / radius));
            }
        size_t changed = 0;
        const double t0 = now_s();
        if (trn_scatter_refilter_window(&palette, &base, &env, cx - radius, cz - radius,
                                        cx + radius, cz + radius, &view, &changed, NULL) != TRN_OK)
            return 1;
        stroke_times[s] = now_s() - t0;
        flipped += changed;
    }
    qsort(stroke_times, (size_t)strokes, sizeof *stroke_times, cmp_double);
    printf("refilter after one stroke (radius 8, window): median %.3f ms, best %.3f ms over %d "
           "strokes (%zu sites flipped in all)\n",
           stroke_times[strokes / 2] * 1e3, stroke_times[0] * 1e3, strokes, flipped);
    trn_instances full = {NULL, 0};
    const double t0 = now_s();
    if (trn_scatter_refilter(&palette, &base, &env, &full, NULL, NULL) != TRN_OK) return 1;
    printf("full refilter of every instance, for comparison: %.3f s\n", now_s() - t0);
    trn_instances_dispose(&full);
    trn_scatter_view_dispose(&view);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&base);
    free(times);
    free(cpu);
    free(stroke_times);
    free(wet);
    trn_field_dispose(&f);
    return 0;
}
