/* Benchmark: water resolution on a 4097^2 field (16 lakes, a 200-point Catmull-Rom river, an
 * ocean with a boundary) and the query rate on one core; with "spill" the lakes take level
 * "spill" without a radius (each a priority flood over its basin). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/water.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Rolling hills of value noise, 0..~300 m, with a slope down to the sea along z = 0. */
static void fill_terrain(trn_field *f)
{
    const size_t nx = (size_t)f->cells_x + 1u;
    const long long rows = (long long)f->cells_z + 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long j = 0; j < rows; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i, z = (double)j;
            double h = 0.0, amp = 160.0, freq = 1.0 / 700.0;
            for (int o = 0; o < 5; o++) {
                h += amp * value_noise(x * freq, z * freq, 17u + (uint32_t)o);
                amp *= 0.5;
                freq *= 2.0;
            }
            f->heights[(size_t)j * nx + i] = (float)(h + z * 0.02);
        }
}

/* Bodies: 16 lakes 5 m over their centre's ground, an ocean at 60 m inside a 64-gon, and a
 * follow-bed river of 200 control points wandering across the map 2 m under the ground. */
static trn_water_body *make_bodies(const trn_field *f, bool spill, uint32_t *count)
{
    trn_water_body *b = calloc(18, sizeof *b);
    const double size = f->size_x;
    uint32_t n = 0;
    for (int k = 0; k < 16; k++, n++) {
        char id[32];
        snprintf(id, sizeof id, "lake%d", k);
        trn_water_body_init(&b[n], TRN_WATER_LAKE, id);
        b[n].center_x = size * (0.1 + 0.8 * (double)(k % 4) / 3.0);
        b[n].center_z = size * (0.15 + 0.75 * (double)(k / 4) / 3.0);
        b[n].radius = 300.0;
        b[n].level = trn_field_height_at(f, b[n].center_x, b[n].center_z) + 5.0;
        if (spill) {
            b[n].level_mode = TRN_LAKE_LEVEL_SPILL;
            b[n].radius = TRN_WATER_RADIUS_UNLIMITED;
        }
    }
    trn_water_body_init(&b[n], TRN_WATER_OCEAN, "sea");
    b[n].level = 60.0;
    b[n].boundary_count = 64;
    b[n].boundary = malloc(2 * 64 * sizeof(double));
    for (int k = 0; k < 64; k++) {
        const double a = 2.0 * 3.141592653589793 * k / 64.0;
        b[n].boundary[2 * k] = size * (0.5 + 0.6 * cos(a));
        b[n].boundary[2 * k + 1] = size * (0.1 + 0.3 * sin(a));
    }
    n++;
    trn_water_body_init(&b[n], TRN_WATER_RIVER, "river");
    b[n].control_count = 200;
    b[n].control = malloc(3 * 200 * sizeof(double));
    for (int k = 0; k < 200; k++) {
        const double t = (double)k / 199.0;
        const double x = size * (0.05 + 0.9 * t);
        const double z = size * (0.5 + 0.3 * sin(t * 12.0) + 0.05 * value_noise(t * 40.0, 3.0, 9u));
        b[n].control[3 * k] = x;
        b[n].control[3 * k + 2] = z;
        b[n].control[3 * k + 1] = trn_field_height_at(f, x, z) - 2.0;
    }
    b[n].interpolation = TRN_RIVER_CATMULL_ROM;
    b[n].curve_steps = 8;
    b[n].width = 12.0;
    b[n].surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b[n].river_depth = 1.5;
    b[n].look.flow_speed = 1.0;
    n++;
    *count = n;
    return b;
}

int main(int argc, char **argv)
{
    const long samples = argc > 1 ? atol(argv[1]) : 4097;
    const int runs = argc > 2 ? atoi(argv[2]) : 7;
    const long long queries = argc > 3 ? atoll(argv[3]) : 20000000;
    const bool spill = argc > 4 && strcmp(argv[4], "spill") == 0;
    if (samples < 64 || samples > 16385 || runs < 1 || runs > 100 || queries < 1 ||
        (argc > 4 && !spill)) {
        fprintf(stderr,
                "usage: bench_water [SAMPLES_PER_SIDE (64..16385)] [RUNS] [QUERIES] [spill]\n");
        return 2;
    }
    const uint32_t cells = (uint32_t)samples - 1u;
    trn_field base, ground;
    trn_error err;
    if (trn_field_init(&base, cells, cells, (double)cells, (double)cells, &err) != TRN_OK ||
        trn_field_init(&ground, cells, cells, (double)cells, (double)cells, &err) != TRN_OK) {
        fprintf(stderr, "field: %s\n", err.message);
        return 1;
    }
    fill_terrain(&base);
    uint32_t count;
    trn_water_body *bodies = make_bodies(&base, spill, &count);
    const size_t n = (size_t)samples * (size_t)samples;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif

    double times[100], times1[100];
    trn_water w;
    memset(&w, 0, sizeof w);
    for (int pass = 0; pass < 2; pass++) {
        trn_water_resolve_options o = {pass == 0 ? 0 : 1};
        double *t = pass == 0 ? times : times1;
        for (int r = 0; r < runs; r++) {
            memcpy(ground.heights, base.heights, n * sizeof(float));
            trn_water_dispose(&w);
            const double t0 = now_s();
            if (trn_water_resolve(&ground, bodies, count, &o, &w, &err) != TRN_OK) {
                fprintf(stderr, "resolve: %s\n", err.message);
                return 1;
            }
            t[r] = now_s() - t0;
        }
        qsort(t, (size_t)runs, sizeof(double), cmp_double);
    }
    uint64_t wet = 0;
    for (uint32_t b = 0; b < count; b++)
        wet += w.bodies[b].wet_samples;
    printf("resolve %ldx%ld, %u bodies (16 lakes r 300, ocean in a 64-gon, river 200 controls x 8 "
           "steps = %u points, width 12), carving on\n",
           samples, samples, count, w.bodies[count - 1].path_count);
    printf("  %d threads: median %.3f s, best %.3f s (%d runs)\n", threads, times[runs / 2],
           times[0], runs);
    printf("  1 thread:  median %.3f s, best %.3f s\n", times1[runs / 2], times1[0]);
    if (spill) {
        uint64_t lake_wet = 0;
        uint32_t empty = 0;
        for (uint32_t b = 0; b < 16; b++) {
            lake_wet += w.bodies[b].wet_samples;
            empty += w.bodies[b].wet_samples == 0;
        }
        printf("  spill lakes: %llu wet samples, %u of 16 empty (no closed basin at the centre)\n",
               (unsigned long long)lake_wet, empty);
    }
    printf("  wet samples %llu (%.1f%%); river wet %llu, warnings: lakes+ocean %u, river %u\n",
           (unsigned long long)wet, 100.0 * (double)wet / (double)n,
           (unsigned long long)w.bodies[count - 1].wet_samples, w.bodies[count - 2].warning_count,
           w.bodies[count - 1].warning_count);

    /* Queries, one core, two fixed pseudo-random point sets of 2^20 points: a random walk of
     * 0.5-unit steps within 150 units of the first lake's centre (the coherent case: floating
     * objects, cameras) and
     * points spread uniformly over the map (every query a cache miss). */
    const size_t np = 1048576;
    double *pts = malloc(3 * np * sizeof(double));
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int pattern = 0; pattern < 2; pattern++) {
        const trn_water_body *lake = &w.bodies[0];
        double x = lake->center_x, z = lake->center_z;
        for (size_t k = 0; k < np; k++) {
            double r[3];
            for (int q = 0; q < 3; q++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                r[q] = (double)(s >> 11) * 0x1p-53;
            }
            if (pattern == 0) {
                x += r[0] - 0.5;
                z += r[1] - 0.5;
                if (fabs(x - lake->center_x) > 150.0) x = lake->center_x;
                if (fabs(z - lake->center_z) > 150.0) z = lake->center_z;
            } else {
                x = r[0] * (double)cells;
                z = r[1] * (double)cells;
            }
            pts[3 * k] = x;
            pts[3 * k + 1] = trn_field_height_at(&ground, x, z) + 4.0 * (r[2] - 0.5);
            pts[3 * k + 2] = z;
        }
        double rates[5];
        uint64_t hits = 0, under = 0;
        double depth_sum = 0.0;
        for (int r = 0; r < 5; r++) {
            trn_water_sample q;
            hits = under = 0;
            depth_sum = 0.0;
            const double t0 = now_s();
            for (long long k = 0; k < queries; k++) {
                const double *p = pts + 3 * (size_t)(k & (long long)(np - 1));
                if (trn_water_query(&w, &ground, p[0], p[1], p[2], &q)) {
                    hits++;
                    under += q.underwater;
                    depth_sum += q.depth;
                }
            }
            rates[r] = (double)queries / (now_s() - t0);
        }
        qsort(rates, 5, sizeof(double), cmp_double);
        printf("query %s: %lld per run, %.1f%% wet (%.1f%% underwater): median %.1f M/s, best "
               "%.1f M/s (one core, 5 runs; depth sum %.6g)\n",
               pattern == 0 ? "random walk in a lake (coherent)" : "uniform over the map", queries,
               100.0 * (double)hits / (double)queries, 100.0 * (double)under / (double)queries,
               rates[2] * 1e-6, rates[4] * 1e-6, depth_sum);
    }
    free(pts);
    trn_water_dispose(&w);
    for (uint32_t b = 0; b < count; b++)
        trn_water_body_dispose(&bodies[b]);
    free(bodies);
    trn_field_dispose(&base);
    trn_field_dispose(&ground);
    return 0;
}
