/* Benchmark: surface-role classification of a 4097^2 surface with every input, per thread count,
 * and the surface material assignment of the result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "terrane/roles.h"

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
    /* The surface material assignment (docs/roles.md, "Into the engines") of the last roles:
     * four biomes, the fourth with its own material, six of the nine roles bound. */
    {
        trn_labels labels;
        if (trn_labels_init(&labels, cells, cells, &e) != TRN_OK) return 1;
        memcpy(labels.values, biomes, n);
        trn_biome recipe_biomes[4];
        memset(recipe_biomes, 0, sizeof recipe_biomes);
        static const char *const names[4] = {"meadow", "alpine", "desert", "quarry"};
        for (int b = 0; b < 4; b++) {
            if (trn_labels_add_name(&labels, names[b], strlen(names[b]), &e) != TRN_OK) return 1;
            recipe_biomes[b].name = (char *)names[b];
        }
        recipe_biomes[3].material = (char *)"asset://materials/marble";
        trn_material_set set;
        memset(&set, 0, sizeof set);
        set.roles[TRN_ROLE_GROUND] = (char *)"asset://materials/soil";
        set.roles[TRN_ROLE_ROCK] = (char *)"asset://materials/granite";
        set.roles[TRN_ROLE_CLIFF] = (char *)"asset://materials/granite";
        set.roles[TRN_ROLE_SAND] = (char *)"asset://materials/sand";
        set.roles[TRN_ROLE_SNOW] = (char *)"asset://materials/snow";
        set.roles[TRN_ROLE_UNDERWATER] = (char *)"asset://materials/riverbed";
        trn_surface_materials_input si = {.biomes = &labels,
                                          .roles = roles,
                                          .role_count = n,
                                          .recipe_biomes = recipe_biomes,
                                          .recipe_biome_count = 4,
                                          .set = &set};
        double t_assign[100];
        trn_surface_materials sm;
        memset(&sm, 0, sizeof sm);
        for (int r = 0; r < runs; r++) {
            trn_surface_materials_dispose(&sm);
            const double t0 = now_s();
            if (trn_surface_materials_assign(&si, &sm, &e) != TRN_OK) {
                fprintf(stderr, "assign: %s\n", e.message);
                return 1;
            }
            t_assign[r] = now_s() - t0;
        }
        qsort(t_assign, (size_t)runs, sizeof(double), cmp_double);
        uint64_t unbound = 0;
        for (int r = 0; r < TRN_ROLE_COUNT; r++)
            unbound += sm.unbound[r];
        printf("  surface materials: assign median %.3f s best %.3f s | %u materials, %llu "
               "samples on the biome tint for unbound roles, %llu without a role\n",
               t_assign[runs / 2], t_assign[0], sm.labels.name_count, (unsigned long long)unbound,
               (unsigned long long)sm.no_role);
        trn_surface_materials_dispose(&sm);
        trn_labels_dispose(&labels);
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
