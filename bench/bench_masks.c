/* Benchmark: mask kernels (elevation, slope, path, polygon) and height blend on a 4097^2 grid. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "terrane/masks.h"

static const double PI = 3.14159265358979323846;

/* Best wall time of three runs of one mask kernel (the mask is freed each time). */
#define TIME_MASK(label, call)                                                                     \
    do {                                                                                           \
        double best_ = 1e30;                                                                       \
        for (int r_ = 0; r_ < 3; r_++) {                                                           \
            trn_mask m_;                                                                           \
            const double t0_ = now_s();                                                            \
            trn_status st_ = (call);                                                               \
            const double t_ = now_s() - t0_;                                                       \
            if (st_ != TRN_OK) {                                                                   \
                fprintf(stderr, "%s failed: %s\n", label, e.message);                              \
                return 1;                                                                          \
            }                                                                                      \
            trn_mask_dispose(&m_);                                                                 \
            if (t_ < best_) best_ = t_;                                                            \
        }                                                                                          \
        printf("  %-44s %8.3f s\n", label, best_);                                                 \
    } while (0)

int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 4096u;
    const double size = (double)cells;
    trn_error e;
    trn_field f;
    if (trn_field_init(&f, cells, cells, size, size, &e) != TRN_OK) return 1;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f.heights[(size_t)j * (cells + 1u) + i] =
                (float)(400.0 * value_noise(i / 256.0, j / 256.0, 7) +
                        60.0 * value_noise(i / 32.0, j / 32.0, 8));

    enum { PATH_N = 2000, RING_N = 1000, BIG_N = 20000 };
    double *path = malloc(2 * PATH_N * sizeof(double));
    double *ring = malloc(2 * RING_N * sizeof(double));
    double *big = malloc(2 * BIG_N * sizeof(double));
    if (!path || !ring || !big) return 1;
    for (int k = 0; k < PATH_N; k++) {
        path[2 * k] = -100.0 + (size + 200.0) * k / (PATH_N - 1);
        path[2 * k + 1] = size / 2 + size / 3 * sin(k * 0.01) + 40.0 * cos(k * 0.3);
    }
    for (int k = 0; k < RING_N; k++) {
        ring[2 * k] = size / 2 + size * 0.37 * cos(2 * PI * k / RING_N);
        ring[2 * k + 1] = size / 2 + size * 0.37 * sin(2 * PI * k / RING_N);
    }
    /* A wobbly 20000-vertex outline (a coastline). */
    for (int k = 0; k < BIG_N; k++) {
        const double a = 2 * PI * k / BIG_N;
        const double r = size * (0.35 + 0.08 * sin(7 * a) + 0.02 * sin(131 * a));
        big[2 * k] = size / 2 + r * cos(a);
        big[2 * k + 1] = size / 2 + r * sin(a);
    }
    const size_t n = (size_t)(cells + 1u) * (cells + 1u);
    float *out = malloc(n * sizeof(float));
    trn_mask mask;
    if (!out || trn_mask_polygon(cells, cells, size, size, ring, RING_N, 40, &mask, &e)) return 1;

    int max_threads = 1;
#ifdef _OPENMP
    max_threads = omp_get_max_threads();
#endif
    printf("bench_masks: %u x %u samples\n", cells + 1u, cells + 1u);
    for (int threads = 1; threads <= max_threads;
         threads = threads == 1 && max_threads > 1 ? max_threads : threads + max_threads) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        printf(" threads %d\n", threads);
        TIME_MASK("elevation (band 100..300, falloff 50)",
                  trn_mask_elevation(&f, 100, 300, 50, &m_, &e));
        TIME_MASK("slope (band 10..30, falloff 5)", trn_mask_slope(&f, 10, 30, 5, &m_, &e));
        TIME_MASK("path (2000 points, width 20, falloff 40)",
                  trn_mask_path(cells, cells, size, size, path, PATH_N, 20, 40, &m_, &e));
        TIME_MASK("polygon (1000-gon, falloff 40)",
                  trn_mask_polygon(cells, cells, size, size, ring, RING_N, 40, &m_, &e));
        TIME_MASK("polygon (20000 vertices, falloff 0)",
                  trn_mask_polygon(cells, cells, size, size, big, BIG_N, 0, &m_, &e));
        TIME_MASK("polygon (20000 vertices, falloff 200)",
                  trn_mask_polygon(cells, cells, size, size, big, BIG_N, 200, &m_, &e));
        double best = 1e30;
        for (int r = 0; r < 3; r++) {
            const double t0 = now_s();
            trn_heights_blend(f.heights, f.heights, mask.values, 0.5, n, out, &e);
            const double t = now_s() - t0;
            if (t < best) best = t;
        }
        printf("  %-44s %8.3f s\n", "height blend with mask", best);
    }
    trn_mask_dispose(&mask);
    trn_field_dispose(&f);
    free(out);
    free(path);
    free(ring);
    free(big);
    return 0;
}
