/* Benchmark: samples per second of 6-octave fbm and ridged rows, single-octave noise, the
 * landform fill and moisture, on 1 thread and on 2 (rows split with OpenMP), best of 3. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>
#ifdef _OPENMP
#include <omp.h>

#include "bench_util.h"
#endif

#include "gen/noise_internal.h"
#include "terrane/generate.h"

#define RUNS 3
#define OCTAVES 6u

static void set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
}

typedef enum job {
    JOB_FBM,
    JOB_RIDGED,
    JOB_NOISE2,
    JOB_FBM_AVX2,
    JOB_FBM_DEFAULT,
    JOB_MOISTURE
} job;

static const char *job_name(job j)
{
    switch (j) {
    case JOB_FBM:
        return "fbm, 6 octaves (trn_fractal_row)";
    case JOB_RIDGED:
        return "ridged, 6 octaves (trn_fractal_row)";
    case JOB_NOISE2:
        return "gradient noise, 1 octave (trn_noise2_points)";
    case JOB_FBM_AVX2:
        return "fbm, 6 octaves, avx2 variant forced";
    case JOB_FBM_DEFAULT:
        return "fbm, 6 octaves, default variant forced";
    case JOB_MOISTURE:
        return "moisture, 3 octaves (trn_moisture_row)";
    }
    return "?";
}

/* One row of a job; scratch holds 2 * size floats for noise2's coordinates. */
static void run_row(job j, size_t size, size_t row, float *out, float *scratch, double *dscratch)
{
    const double z = (double)row * 0.5;
    switch (j) {
    case JOB_FBM:
    case JOB_RIDGED:
        trn_fractal_row(42, j == JOB_RIDGED ? TRN_PROFILE_RIDGED : TRN_PROFILE_FBM, OCTAVES, 256.0,
                        0.5, 0.0, 0.5, z, size, out);
        break;
    case JOB_NOISE2: {
        float *x = scratch, *zz = scratch + size;
        for (size_t i = 0; i < size; i++) {
            x[i] = (float)i * (1.0f / 64.0f);
            zz[i] = (float)z * (1.0f / 64.0f);
        }
        trn_noise2_points(42, x, zz, size, out);
        break;
    }
    case JOB_FBM_AVX2:
    case JOB_FBM_DEFAULT: {
        trn_fractal_params params;
        trn_fractal_params_init(&params, 42, TRN_PROFILE_FBM, OCTAVES, 256.0, 0.5);
        double *x = dscratch, *zz = dscratch + size;
        for (size_t i = 0; i < size; i++) {
            x[i] = (double)i * 0.5;
            zz[i] = z;
        }
        trn_fractal_points_isa(&params,
                               j == JOB_FBM_AVX2 ? TRN_NOISE_ISA_AVX2 : TRN_NOISE_ISA_DEFAULT, x,
                               zz, size, out);
        break;
    }
    case JOB_MOISTURE:
        trn_moisture_row(42, (double)size * 0.5, (uint32_t)(size - 1u), z, out);
        break;
    }
}

/* Best-of-RUNS seconds for the whole grid; *digest gets a hash of every value. */
static double time_job(job j, size_t size, int threads, float *grid, uint64_t *digest)
{
    double best = 1e30;
    for (int run = 0; run < RUNS; run++) {
        set_threads(threads);
        double t0 = now_s();
#ifdef _OPENMP
#pragma omp parallel
#endif
        {
            float *scratch = malloc(2 * size * sizeof(float));
            double *dscratch = malloc(2 * size * sizeof(double));
            if (scratch && dscratch) {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
                for (long long r = 0; r < (long long)size; r++)
                    run_row(j, size, (size_t)r, grid + (size_t)r * size, scratch, dscratch);
            }
            free(scratch);
            free(dscratch);
        }
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    *digest = (uint64_t)XXH64(grid, size * size * sizeof(float), 0);
    return best;
}

static double time_landform(const trn_landform *lf, int threads, trn_field *field, uint64_t *digest)
{
    double best = 1e30;
    for (int run = 0; run < RUNS; run++) {
        set_threads(threads);
        double t0 = now_s();
        if (trn_landform_fill(lf, 42, field, NULL, NULL, NULL) != TRN_OK) return -1.0;
        double t = now_s() - t0;
        if (t < best) best = t;
    }
    *digest = (uint64_t)XXH64(field->heights, trn_field_sample_count(field) * sizeof(float), 0);
    return best;
}

/* CPU seconds of the calling thread: on a machine shared with other jobs the wall clock also
 * counts time spent waiting for a core. */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* `bench_noise SIZE fbm RUNS [ISA]`: the one figure bench/noise_vs_fastnoise2.sh interleaves
 * with FastNoise2's, 6-octave fbm rows over SIZE^2 on one thread, a line per run; ISA (avx2,
 * default) forces a kernel variant (the bytes are the same). */
static int fbm_runs(size_t size, int runs, trn_noise_isa isa)
{
    float *grid = malloc(size * size * sizeof(float));
    if (!grid) return 1;
    memset(grid, 0, size * size * sizeof(float)); /* pages mapped before timing, as FastNoise2's */
    set_threads(1);
    printf("terrane %s, fbm 6 octaves, %zu x %zu\n", trn_noise_isa_name(isa), size, size);
    /* Run 0 warms caches and the vector units and is not reported (as in fastnoise2_fbm). */
    for (int run = -1; run < runs; run++) {
        double t0 = now_s(), c0 = thread_cpu_s();
        for (size_t r = 0; r < size; r++) {
            if (isa == TRN_NOISE_ISA_BEST) {
                run_row(JOB_FBM, size, r, grid + r * size, NULL, NULL);
            } else { /* as trn_fractal_row does, with the variant chosen */
                trn_fractal_params params;
                trn_fractal_params_init(&params, 42, TRN_PROFILE_FBM, OCTAVES, 256.0, 0.5);
                trn_fractal_row_isa(&params, isa, 0.0, 0.5, 0u, (double)r * 0.5, size,
                                    grid + r * size);
            }
        }
        double t = now_s() - t0, c = thread_cpu_s() - c0;
        if (run < 0) continue;
        printf("wall %.4f s cpu %.4f s (hash %016llx)\n", t, c,
               (unsigned long long)XXH64(grid, size * size * sizeof(float), 0));
    }
    free(grid);
    return 0;
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 4096u;
    if (size < 16u || size > 32768u) {
        fprintf(stderr,
                "usage: bench_noise [SIZE 16..32768, default 4096] [fbm RUNS [avx2|default]]\n");
        return 2;
    }
    if (argc > 3 && strcmp(argv[2], "fbm") == 0) {
        trn_noise_isa isa = TRN_NOISE_ISA_BEST;
        if (argc > 4) isa = strcmp(argv[4], "avx2") == 0 ? TRN_NOISE_ISA_AVX2 : TRN_NOISE_ISA_DEFAULT;
        return fbm_runs(size, atoi(argv[3]), isa);
    }
    int max_threads = 1;
#ifdef _OPENMP
    max_threads = omp_get_max_threads();
#endif
    int threads2 = max_threads >= 2 ? 2 : 1;
    float *grid = malloc(size * size * sizeof(float));
    if (!grid) {
        fprintf(stderr, "out of memory for a %zu x %zu grid\n", size, size);
        return 1;
    }
    printf("noise kernels: the %s variant runs (avx512 %s, avx2 %s on this CPU and build); "
           "%zu x %zu samples, best of %d\n",
           trn_noise_isa_name(TRN_NOISE_ISA_BEST),
           trn_noise_isa_available(TRN_NOISE_ISA_AVX512) ? "yes" : "no",
           trn_noise_isa_available(TRN_NOISE_ISA_AVX2) ? "yes" : "no", size, size, RUNS);
    const double samples = (double)size * (double)size;
    const job jobs[] = {JOB_FBM,      JOB_RIDGED,      JOB_NOISE2,
                        JOB_FBM_AVX2, JOB_FBM_DEFAULT, JOB_MOISTURE};
    int status = 0;
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        /* Forcing avx2 shows something only when a wider variant is the default. */
        if (jobs[k] == JOB_FBM_AVX2 && (!trn_noise_isa_available(TRN_NOISE_ISA_AVX2) ||
                                        !trn_noise_isa_available(TRN_NOISE_ISA_AVX512)))
            continue;
        uint64_t d1, d2;
        double t1 = time_job(jobs[k], size, 1, grid, &d1);
        double t2 = time_job(jobs[k], size, threads2, grid, &d2);
        printf("%-46s 1 thread %7.1f M samples/s   %d threads %7.1f M samples/s (x%.2f)%s\n",
               job_name(jobs[k]), samples / t1 * 1e-6, threads2, samples / t2 * 1e-6, t1 / t2,
               d1 == d2 ? "" : "  RESULTS DIFFER");
        if (d1 != d2) status = 1;
    }

    /* The landform fill a recipe runs: (size+1)^2 samples, with and without warp. */
    trn_field field;
    if (trn_field_init(&field, (uint32_t)size, (uint32_t)size, (double)size, (double)size, NULL) !=
        TRN_OK) {
        free(grid);
        return 1;
    }
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "mountains";
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 450.0;
    lf.feature_size = 650.0;
    lf.roughness = 0.35;
    lf.octaves = OCTAVES;
    lf.warp_feature_size = 500.0;
    lf.stretch = 2.0;
    lf.heading = 30.0;
    const double fill_samples = (double)trn_field_sample_count(&field);
    for (int warped = 0; warped < 2; warped++) {
        lf.warp_amplitude = warped ? 100.0 : 0.0;
        uint64_t d1, d2;
        double t1 = time_landform(&lf, 1, &field, &d1);
        double t2 = time_landform(&lf, threads2, &field, &d2);
        printf("landform fill %zux%zu, ridged 6 oct.%-16s 1 thread %6.3f s (%5.1f M/s)   %d "
               "threads %6.3f s (%5.1f M/s)%s\n",
               size + 1, size + 1, warped ? ", warp" : "", t1, fill_samples / t1 * 1e-6, threads2,
               t2, fill_samples / t2 * 1e-6, d1 == d2 ? "" : "  RESULTS DIFFER");
        if (d1 != d2) status = 1;
    }

    /* Per-sample moisture (what a caller pays without the row form). */
    set_threads(1);
    double t0 = now_s();
    double acc = 0.0;
    const size_t single = 1u << 20;
    for (size_t k = 0; k < single; k++)
        acc += trn_moisture_at(42, (double)(k & 1023u), (double)(k >> 10));
    double t = now_s() - t0;
    printf("trn_moisture_at, one sample per call          1 thread %7.1f M samples/s "
           "(checksum %.3f)\n",
           (double)single / t * 1e-6, acc);
    trn_field_dispose(&field);
    free(grid);
    return status;
}
