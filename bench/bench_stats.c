/* Benchmark: every terrain statistic (trn_terrain_stats_compute) on landform terrain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/stats.h"

/* Ridged landform terrain of samples^2 at 4 m cells; all statistics, then each group alone,
 * median and best of runs on the given thread count. */
static int run_case(uint32_t samples, int runs, int threads)
{
    trn_field field;
    const uint32_t cells = samples - 1u;
    if (trn_field_init(&field, cells, cells, 4.0 * cells, 4.0 * cells, NULL) != TRN_OK) return 1;
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "bench";
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 450.0;
    lf.feature_size = 2800.0;
    lf.roughness = 0.5;
    lf.octaves = 8;
    lf.warp_feature_size = 2000.0;
    lf.warp_amplitude = 480.0;
    lf.stretch = 1.5;
    lf.heading = 20.0;
    trn_error err;
    if (trn_landform_fill(&lf, 1234, &field, NULL, NULL, &err) != TRN_OK) {
        fprintf(stderr, "landform: %s\n", err.message);
        trn_field_dispose(&field);
        return 1;
    }
    static const struct {
        const char *label;
        unsigned which;
    } groups[] = {{"all", TRN_STATS_ALL},
                  {"heights", TRN_STATS_HEIGHTS},
                  {"slope", TRN_STATS_SLOPE},
                  {"depressions+drainage", TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE},
                  {"spectrum", TRN_STATS_SPECTRUM}};
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        trn_stats_options o;
        trn_stats_options_default(&o);
        o.which = groups[g].which;
        o.threads = threads;
        double times[32];
        trn_terrain_stats s;
        for (int r = 0; r < runs; r++) {
            const double t0 = now_s();
            if (trn_terrain_stats_compute(&field, &o, &s, NULL, NULL, &err) != TRN_OK) {
                fprintf(stderr, "stats: %s\n", err.message);
                trn_field_dispose(&field);
                return 1;
            }
            times[r] = now_s() - t0;
        }
        qsort(times, (size_t)runs, sizeof times[0], cmp_double);
        printf("%ux%u %d thread(s) %-22s median %7.3f s  best %7.3f s", samples, samples, threads,
               groups[g].label, times[runs / 2], times[0]);
        if (g == 0)
            printf("  (HI %.3f, slope median %.2f, depressions %.4f, b %.3f, density %.4g/km, "
                   "spectrum %.2f)",
                   s.hypsometric_integral, s.slope_median, s.depression_fraction, s.area_exponent,
                   s.drainage_density * 1000, s.spectral_slope);
        printf("\n");
    }
    trn_field_dispose(&field);
    return 0;
}

int main(int argc, char **argv)
{
    const int runs = argc > 1 ? atoi(argv[1]) : 3;
    if (runs < 1 || runs > 32) {
        fprintf(stderr, "usage: bench_stats [RUNS (1..32)]\n");
        return 2;
    }
    double load[3] = {0, 0, 0};
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        fclose(f);
    }
    printf("load average %.2f %.2f %.2f\n", load[0], load[1], load[2]);
    int status = 0;
    status |= run_case(1025, runs, 1);
    status |= run_case(1025, runs, 2);
    status |= run_case(4097, runs, 1);
    status |= run_case(4097, runs, 2);
    return status;
}
