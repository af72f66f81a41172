/* Shared pieces of the benchmarks: clocks, medians, the load average and a test terrain noise. */
#ifndef TRN_BENCH_UTIL_H
#define TRN_BENCH_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "terrane/core.h"
#include "terrane/wait_policy.h"

/* Waiting threads sleep rather than spin, as in the command line (the figures are its). */
TRN_WAIT_POLICY_PASSIVE_DEFAULT()

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Process CPU time, all threads. */
static inline double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* qsort order of doubles, for medians. */
static inline int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The one-minute load average (-1 when unknown): figures are reported beside it. */
static inline double load_average(void)
{
    double load = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = -1.0;
        fclose(f);
    }
    return load;
}

static inline uint32_t hash3(uint32_t x, uint32_t y, uint32_t seed)
{
    uint32_t h = x * 0x27d4eb2du ^ y * 0x165667b1u ^ seed * 0x9e3779b9u;
    h ^= h >> 15;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h;
}

/* Smooth value noise in 0..1 on a unit lattice (test data only, not the library's noise). */
static inline double value_noise(double x, double y, uint32_t seed)
{
    double fx0 = floor(x), fy0 = floor(y);
    uint32_t xi = (uint32_t)(int64_t)fx0, yi = (uint32_t)(int64_t)fy0;
    double fx = x - fx0, fy = y - fy0;
    fx = fx * fx * (3.0 - 2.0 * fx);
    fy = fy * fy * (3.0 - 2.0 * fy);
    const double k = 1.0 / 4294967295.0;
    double a = hash3(xi, yi, seed) * k, b = hash3(xi + 1, yi, seed) * k;
    double c = hash3(xi, yi + 1, seed) * k, d = hash3(xi + 1, yi + 1, seed) * k;
    return (a + (b - a) * fx) * (1.0 - fy) + (c + (d - c) * fx) * fy;
}

/* The stream-power benchmarks' mountain: a ridge along x, value noise on its crest and flanks. */
static inline float ridge_height(uint32_t i, uint32_t j, uint32_t cells)
{
    const double z = (double)j / cells - 0.5;
    const double ridge = exp(-(z * z) / (2.0 * 0.15 * 0.15));
    return (float)(1500.0 * ridge * (0.6 + 0.4 * value_noise(i / 64.0, j / 64.0, 7)) +
                   100.0 * value_noise(i / 8.0, j / 8.0, 11));
}

/* A size x size DEM of 30 m cells: six octaves of value noise (1500 m down to 47 m amplitude)
 * plus offset metres. f is initialised here. */
static inline int fractal_dem(trn_field *f, uint32_t size, double offset)
{
    trn_error e;
    if (trn_field_init(f, size - 1, size - 1, 30.0 * (size - 1), 30.0 * (size - 1), &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    for (uint32_t j = 0; j < size; j++)
        for (uint32_t i = 0; i < size; i++) {
            double x = i / 256.0, y = j / 256.0, h = 0, amp = 1500;
            for (int o = 0; o < 6; o++, x *= 2, y *= 2, amp *= 0.5)
                h += amp * value_noise(x, y, 7u + (uint32_t)o);
            f->heights[(size_t)j * size + i] = (float)(h + offset);
        }
    return 0;
}

#endif
