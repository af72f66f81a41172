/* Benchmark: a recipe's periodic curvature over seeds, and its curvature profile by period. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/stats.h"

#define BANDS 6

/* Lower ends of the period bands in samples (each band runs to the next; the last is open). */
static const double band_from[BANDS] = {2, 4, 8, 16, 32, 64};

/* The profile the periodic curvature measures along one axis (along x: the mean over rows of
 * |h[i-1] - 2 h[i] + h[i+1]| per column, least-squares line removed), then its periodogram's
 * mean power in each period band over the mean power of every frequency: how much of the
 * profile's variance repeats at each spacing (a white profile gives 1 in every band). A
 * plain DFT: a 4097^2 grid's profile is 4095 points, 8 million terms. */
static int profile_bands(const float *h, size_t nx, size_t nz, int along_z, double out[BANDS])
{
    const size_t n = along_z ? nz : nx, m = along_z ? nx : nz;
    if (n < 8) return -1;
    const size_t np = n - 2u;
    double *p = malloc(np * sizeof *p);
    if (!p) return -1;
    for (size_t i = 1; i + 1u < n; i++) {
        double s = 0;
        for (size_t j = 0; j < m; j++) {
            const size_t at = along_z ? i * nx + j : j * nx + i, step = along_z ? nx : 1u;
            s += fabs((double)h[at - step] - 2.0 * h[at] + (double)h[at + step]);
        }
        p[i - 1u] = s / (double)m;
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < np; i++) {
        sx += (double)i;
        sy += p[i];
        sxx += (double)i * (double)i;
        sxy += (double)i * p[i];
    }
    const double slope = ((double)np * sxy - sx * sy) / ((double)np * sxx - sx * sx);
    const double icept = (sy - slope * sx) / (double)np;
    for (size_t i = 0; i < np; i++)
        p[i] -= icept + slope * (double)i;
    double sum[BANDS] = {0}, total = 0;
    unsigned count[BANDS] = {0}, bins = 0;
    for (size_t k = 1; k <= np / 2u; k++) {
        const double w = 2.0 * 3.14159265358979323846 * (double)k / (double)np;
        double re = 0, im = 0;
        for (size_t i = 0; i < np; i++) {
            re += p[i] * cos(w * (double)i);
            im += p[i] * sin(w * (double)i);
        }
        const double power = re * re + im * im, period = (double)np / (double)k;
        total += power;
        bins++;
        for (int b = BANDS; b-- > 0;)
            if (period >= band_from[b]) {
                sum[b] += power;
                count[b]++;
                break;
            }
    }
    free(p);
    for (int b = 0; b < BANDS; b++)
        out[b] = count[b] && total > 0 ? (sum[b] / count[b]) / (total / bins) : 0;
    return 0;
}

/* Arguments: cells per side (0 = the recipe's own grid), threads, a recipe (path or
 * builtin://terrain/NAME), then the seeds (none: the recipe's own). One row per seed: CPU
 * seconds of the generation, the four figures of 'terrane stats' that the realism targets
 * name, and the profile's band powers (mean of x and z); then the means. */
int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_periodic CELLS THREADS RECIPE [SEED...]\n");
        return 1;
    }
    const uint32_t cells = (uint32_t)strtoul(argv[1], NULL, 10);
    const int threads = atoi(argv[2]);
    if (cells == 1 || threads < 0) return 1;
    printf("load average %.2f before\n\n", load_average());
    printf("| seed | grid | CPU s | depressions | b | 45-degree aspects | periodic (axis, period) | "
           "profile power at periods 2-4 / 4-8 / 8-16 / 16-32 / 32-64 / 64+ samples |\n"
           "|---|---|---|---|---|---|---|---|\n");
    const int first = 4, last = argc > 4 ? argc : 5;
    double mean_ratio = 0, mean_band[BANDS] = {0};
    int rows = 0;
    for (int a = first; a < last; a++) {
        trn_recipe r;
        trn_error e;
        if (trn_recipe_read_source(argv[3], &r, NULL, &e)) {
            fprintf(stderr, "%s: %s\n", argv[3], e.message);
            return 1;
        }
        if (a < argc) r.seed = strtoull(argv[a], NULL, 10);
        if (cells &&
            trn_recipe_change_grid(&r, r.size_x, r.size_z, cells, cells, TRN_EDITS_KEEP, &e)) {
            fprintf(stderr, "grid: %s\n", e.message);
            trn_recipe_dispose(&r);
            return 1;
        }
        trn_generate_options go = {.threads = threads};
        trn_generated g;
        const double c0 = cpu_s();
        if (trn_recipe_generate(&r, &go, &g, NULL, NULL, &e)) {
            fprintf(stderr, "generation: %s\n", e.message);
            trn_recipe_dispose(&r);
            return 1;
        }
        const double cpu = cpu_s() - c0;
        trn_stats_options so;
        trn_stats_options_default(&so);
        trn_terrain_stats st;
        double bx[BANDS], bz[BANDS];
        const size_t nx = (size_t)g.field.cells_x + 1u, nz = (size_t)g.field.cells_z + 1u;
        if (trn_terrain_stats_compute(&g.field, &so, &st, NULL, NULL, &e) ||
            profile_bands(g.field.heights, nx, nz, 0, bx) ||
            profile_bands(g.field.heights, nx, nz, 1, bz)) {
            fprintf(stderr, "statistics failed\n");
            trn_generated_dispose(&g);
            trn_recipe_dispose(&r);
            return 1;
        }
        printf("| %llu | %zu^2 | %.2f | %.2f%% | %.3f | %.3f | %.2f (%c, %.3g) |",
               (unsigned long long)r.seed, nx, cpu, 100.0 * st.depression_fraction,
               st.area_exponent, st.axis45_ratio, st.periodic_curvature_ratio,
               st.periodic_axis ? st.periodic_axis : '-',
               st.periodic_axis == 'z' ? st.periodic_period_z : st.periodic_period_x);
        for (int b = 0; b < BANDS; b++) {
            const double v = 0.5 * (bx[b] + bz[b]);
            printf("%s%.2f", b ? " / " : " ", v);
            mean_band[b] += v;
        }
        printf(" |\n");
        fflush(stdout);
        mean_ratio += st.periodic_curvature_ratio;
        rows++;
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    printf("| mean of %d | | | | | | %.2f |", rows, mean_ratio / rows);
    for (int b = 0; b < BANDS; b++)
        printf("%s%.2f", b ? " / " : " ", mean_band[b] / rows);
    printf(" |\n\nload average %.2f after\n", load_average());
    return 0;
}
