/* Benchmark: depression filling, D8 directions and flow accumulation on landform terrain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <xxhash.h>

#include "bench_util.h"
#include "gen/drainage_internal.h"
#include "terrane/drainage.h"
#include "terrane/generate.h"

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One terrain: fill it with the landform, then time trn_drainage_compute on the threads
 * OpenMP allows (OMP_NUM_THREADS; `strips` > 0 forces the fill's strip count), `runs` times:
 * median and best of wall and process CPU time, and a digest of every output. */
static int run_case(const char *label, trn_profile profile, double variation, double sea,
                    uint32_t samples, int runs, int strips, const char *dump)
{
    trn_field field;
    const uint32_t cells = samples - 1u;
    if (trn_field_init(&field, cells, cells, (double)cells, (double)cells, NULL) != TRN_OK)
        return 1;
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "bench";
    lf.profile = profile;
    lf.height_variation = variation;
    lf.feature_size = 700.0;
    lf.roughness = 0.5;
    lf.octaves = 8;
    lf.warp_feature_size = 500.0;
    lf.warp_amplitude = 120.0;
    lf.stretch = 1.5;
    lf.heading = 20.0;
    trn_error err;
    if (trn_landform_fill(&lf, 1234, &field, NULL, NULL, &err) != TRN_OK) {
        fprintf(stderr, "landform: %s\n", err.message);
        trn_field_dispose(&field);
        return 1;
    }
    if (dump) {
        /* The heights for the RichDEM anchor (bench/richdem_drainage.sh). */
        FILE *f = fopen(dump, "wb");
        const size_t count = (size_t)samples * samples;
        if (!f || fwrite(field.heights, sizeof *field.heights, count, f) != count || fclose(f)) {
            fprintf(stderr, "cannot write %s\n", dump);
            trn_field_dispose(&field);
            return 1;
        }
    }
    double *wall = malloc((size_t)runs * sizeof *wall), *cpus = malloc((size_t)runs * sizeof *cpus);
    double *sys = malloc((size_t)runs * sizeof *sys);
    trn_drainage d;
    memset(&d, 0, sizeof d);
    for (int r = 0; r < runs; r++) {
        trn_drainage_dispose(&d);
        struct timespec c0, c1;
        struct rusage u0, u1;
        getrusage(RUSAGE_SELF, &u0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        const double t0 = now_s();
        if (trn_drainage_compute_strips(&field, sea, strips, &d, NULL, NULL, &err) != TRN_OK) {
            fprintf(stderr, "drainage: %s\n", err.message);
            trn_field_dispose(&field);
            return 1;
        }
        wall[r] = now_s() - t0;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        cpus[r] = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) * 1e-9;
        getrusage(RUSAGE_SELF, &u1);
        sys[r] = (double)(u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) +
                 (double)(u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) * 1e-6;
    }
    const double sys_med = median(sys, runs);
    free(sys);
    const double wall_med = median(wall, runs), cpu_med = median(cpus, runs);
    const double best = wall[0], best_cpu = cpus[0];
    free(wall);
    free(cpus);
    const double n = (double)samples * (double)samples;
    uint64_t raised = 0;
    for (size_t b = 0; b < d.basin_count; b++)
        raised += d.basins[b].area;
    const size_t count = (size_t)samples * samples;
    XXH64_state_t *hs = XXH64_createState();
    XXH64_reset(hs, 0);
    XXH64_update(hs, d.filled, count * sizeof *d.filled);
    XXH64_update(hs, d.flow_dir, count);
    XXH64_update(hs, d.accumulation, count * sizeof *d.accumulation);
    XXH64_update(hs, d.basins, d.basin_count * sizeof *d.basins);
    const unsigned long long digest = (unsigned long long)XXH64_digest(hs);
    XXH64_freeState(hs);
    printf(
        "%-34s %ux%u  fill+D8+accumulation+basins median %6.3f s best %6.3f s (cpu median "
        "%6.3f s best %6.3f s, of it system %5.3f s median; %5.1f M samples/s best)  basins %zu "
        "(%.1f%% raised)  working memory %.2f bytes/sample beyond 9 of outputs  outputs %016llx\n",
        label, samples, samples, wall_med, best, cpu_med, best_cpu, sys_med, n / best * 1e-6,
        d.basin_count, 100.0 * (double)raised / n, (double)d.temp_bytes_peak / n, digest);
    trn_drainage_dispose(&d);
    trn_field_dispose(&field);
    return 0;
}

int main(int argc, char **argv)
{
    const long samples = argc > 1 ? atol(argv[1]) : 4096;
    const int runs = argc > 2 ? atoi(argv[2]) : 3;
    const int strips = argc > 3 ? atoi(argv[3]) : 0;
    const char *dump = argc > 4 ? argv[4] : NULL;
    if (samples < 2 || samples > 16384 || runs < 1 || strips < 0) {
        fprintf(stderr, "usage: bench_drainage [SAMPLES_PER_SIDE (2..16384)] [RUNS] [STRIPS (0: "
                        "one per thread)] [DIR: write the heights to DIR/ridged.f32, fbm.f32]\n");
        return 2;
    }
    char ridged[4096], fbm[4096];
    if (dump) {
        snprintf(ridged, sizeof ridged, "%s/ridged.f32", dump);
        snprintf(fbm, sizeof fbm, "%s/fbm.f32", dump);
    }
    int status = 0;
    printf("load average %.2f\n", load_average());
    status |= run_case("ridged mountains, no sea", TRN_PROFILE_RIDGED, 450.0, NAN,
                       (uint32_t)samples, runs, strips, dump ? ridged : NULL);
    status |= run_case("fbm hills, sea at 40% of relief", TRN_PROFILE_FBM, 300.0, 120.0,
                       (uint32_t)samples, runs, strips, dump ? fbm : NULL);
    printf("load average %.2f\n", load_average());
    return status;
}
