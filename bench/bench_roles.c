/* Benchmark: surface-role classification of a 4097^2 surface with every input, per thread count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "terrane/roles.h"

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double load_average(void)
{
    double load = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1.0;
        fclose(f);
    }
    return load;
}

int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 4096u;
    const int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (cells == 0 || runs < 1 || runs > 100) return 1;
    trn_error e;
    trn_field f;
    if (trn_field_init(&f, cells, cells, (double)cells, (double)cells, &e) != TRN_OK) return 1;
    const size_t nx = (size_t)cells + 1u, n = nx * nx;
    float *change = malloc(n * sizeof(float)), *moisture = malloc(n * sizeof(float));
    float *distance = malloc(n * sizeof(float));
    uint32_t *acc = malloc(n * sizeof(uint32_t));
    uint8_t *biomes = malloc(n), *wet = malloc(n), *roles = malloc(n);
    uint8_t *triangles = malloc(2u * (size_t)cells * cells);
    if (!change || !moisture || !distance || !acc || !biomes || !wet || !roles || !triangles)
        return 1;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++) {
            const size_t k = (size_t)j * nx + i;
            const double h = 400.0 * value_noise(i / 256.0, j / 256.0, 7) +
                             60.0 * value_noise(i / 32.0, j / 32.0, 8);
            f.heights[k] = (float)h;
            change[k] = (float)(value_noise(i / 16.0, j / 16.0, 9) - 0.5);
            moisture[k] = (float)value_noise(i / 128.0, j / 128.0, 10);
            wet[k] = h < 120.0;
            distance[k] = wet[k] ? 0.0f : (float)(h - 120.0) * 0.2f;
            acc[k] = hash3(i, j, 11) % 4096u;
            biomes[k] = (uint8_t)(value_noise(i / 512.0, j / 512.0, 12) * 4.0);
        }
    const bool allow[4] = {true, false, true, true};
    trn_roles_input in = {.field = &f,
                          .transport = change,
                          .accumulation = acc,
                          .moisture = moisture,
                          .wet = wet,
                          .water_distance = distance,
                          .biomes = biomes,
                          .allow_snow = allow,
                          .allow_snow_count = 4};
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.snow_height = 380.0;

    int max_threads = 1;
#ifdef _OPENMP
    max_threads = omp_get_max_threads();
#endif
    printf("bench_roles: %zu x %zu samples, %d runs, load average %.2f before\n", nx, nx, runs,
           load_average());
    uint8_t *first = NULL;
    for (int threads = 1; threads <= max_threads;
         threads = threads == 1 && max_threads > 1 ? max_threads : threads + max_threads) {
        p.threads = threads;
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        double t_classify[100], t_tri[100], t_window[100];
        for (int r = 0; r < runs; r++) {
            double t0 = now_s();
            if (trn_roles_classify(&in, &p, roles, &e) != TRN_OK) {
                fprintf(stderr, "classify: %s\n", e.message);
                return 1;
            }
            t_classify[r] = now_s() - t0;
            t0 = now_s();
            if (trn_roles_triangles(cells, cells, roles, triangles, &e) != TRN_OK) return 1;
            t_tri[r] = now_s() - t0;
            /* A sculpt stroke's box: 256 x 256 samples in the middle. */
            t0 = now_s();
            if (trn_roles_classify_window(&in, &p, cells / 2 - 128, cells / 2 - 128,
                                          cells / 2 + 128, cells / 2 + 128, 0, roles, NULL, NULL,
                                          &e) != TRN_OK)
                return 1;
            t_window[r] = now_s() - t0;
        }
        if (!first) {
            first = malloc(n);
            if (!first) return 1;
            memcpy(first, roles, n);
        } else if (memcmp(first, roles, n) != 0) {
            fprintf(stderr, "roles differ between thread counts\n");
            return 1;
        }
        qsort(t_classify, (size_t)runs, sizeof(double), cmp_double);
        qsort(t_tri, (size_t)runs, sizeof(double), cmp_double);
        qsort(t_window, (size_t)runs, sizeof(double), cmp_double);
        printf("  %d thread%s: classify median %.3f s best %.3f s | triangles median %.3f s best "
               "%.3f s | 256^2 window median %.4f s best %.4f s\n",
               threads, threads == 1 ? " " : "s", t_classify[runs / 2], t_classify[0],
               t_tri[runs / 2], t_tri[0], t_window[runs / 2], t_window[0]);
    }
    uint64_t counts[TRN_ROLE_COUNT + 1] = {0};
    for (size_t k = 0; k < n; k++)
        counts[roles[k] < TRN_ROLE_COUNT ? roles[k] : TRN_ROLE_COUNT]++;
    printf("  roles:");
    for (int r = 0; r <= TRN_ROLE_COUNT; r++)
        printf(" %llu", (unsigned long long)counts[r]);
    printf("\n  load average %.2f after\n", load_average());
    free(first);
    free(change);
    free(moisture);
    free(distance);
    free(acc);
    free(biomes);
    free(wet);
    free(roles);
    free(triangles);
    trn_field_dispose(&f);
    return 0;
}
