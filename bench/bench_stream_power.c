/* Benchmark: stream-power landscape evolution steps (receivers, stack, incision, diffusion). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "terrane/landscape.h"

/* A mountain range evolved towards steady state with the Stream Power node's defaults (uplift
 * 1e-3, K 5e-5, m 0.45, n 1, Kd 0.05, dt 20000; 30 m cells): a ridge across the middle with
 * value-noise relief, every step timed as part of the whole run. Arguments after "evolve":
 * cells, threads, steps, runs, then optionally the deposition G (default 0) and "outlets" for
 * base level only at the edges' low points. */
static int evolve(int argc, char **argv)
{
    const uint32_t cells = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1024u;
    const int threads = argc > 3 ? atoi(argv[3]) : 2;
    const uint32_t steps = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 300u;
    const int runs = argc > 5 ? atoi(argv[5]) : 3;
    const double deposition = argc > 6 ? atof(argv[6]) : 0.0;
    const bool outlets = argc > 7 && strcmp(argv[7], "outlets") == 0;
    if (cells < 2 || runs < 1 || runs > 100 || steps < 1 || threads < 0) return 1;
    trn_error e;
    trn_field f;
    if (trn_field_init(&f, cells, cells, 30.0 * cells, 30.0 * cells, &e) != TRN_OK) return 1;
    const size_t nx = (size_t)cells + 1u, n = nx * nx;
    float *initial = malloc(n * sizeof *initial);
    double *wall = malloc((size_t)runs * sizeof *wall), *cpu = malloc((size_t)runs * sizeof *cpu);
    if (!initial || !wall || !cpu) return 1;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            initial[(size_t)j * nx + i] = ridge_height(i, j, cells);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.erodibility = 5e-5;
    p.diffusion = 0.05;
    p.dt = 20000.0;
    p.steps = steps;
    p.threads = threads;
    p.deposition = deposition;
    p.border_outlets = outlets;
    trn_stream_power_report rep;
    printf("stream power evolve: %u^2 samples (30 m cells), %u steps of %g years, %d thread(s), "
           "deposition G %g, border %s, load average %.2f\n",
           cells + 1u, steps, p.dt, threads, deposition, outlets ? "outlets" : "base level",
           load_average());
    for (int r = 0; r < runs; r++) {
        memcpy(f.heights, initial, n * sizeof *initial);
        const double w0 = now_s(), c0 = cpu_s();
        if (trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e) != TRN_OK) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        wall[r] = now_s() - w0;
        cpu[r] = cpu_s() - c0;
        float lo = f.heights[0], hi = f.heights[0];
        for (size_t k = 0; k < n; k++) {
            if (f.heights[k] < lo) lo = f.heights[k];
            if (f.heights[k] > hi) hi = f.heights[k];
        }
        printf("  run %d: %.3f s (CPU %.3f s), pits in %u steps, last step: mean change %.3g m "
               "(uplift %.3g m), max change %.3g m; relief %.0f m\n",
               r + 1, wall[r], cpu[r], rep.steps_with_pits, rep.last_mean_change, p.uplift * p.dt,
               rep.last_max_change, (double)(hi - lo));
    }
    qsort(wall, (size_t)runs, sizeof *wall, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    printf("whole run: wall median %.3f s best %.3f s; CPU median %.3f s best %.3f s; load after "
           "%.2f\n",
           wall[runs / 2], wall[0], cpu[runs / 2], cpu[0], load_average());
    free(initial);
    free(wall);
    free(cpu);
    trn_field_dispose(&f);
    return 0;
}

/* Arguments: samples per side - 1 (cells), threads, runs, steps per run, warm-up steps; or
 * "evolve" and its own (see evolve). */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "evolve") == 0) return evolve(argc, argv);
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2048u;
    const int threads = argc > 2 ? atoi(argv[2]) : 1;
    const int runs = argc > 3 ? atoi(argv[3]) : 5;
    const uint32_t steps = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 10u;
    const uint32_t warm = argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 10) : 20u;
    /* The routing: d8, rho8 (the default) or mfd. */
    const char *routing = argc > 6 ? argv[6] : "rho8";
    if (cells < 2 || runs < 1 || runs > 100 || steps < 1 || threads < 0) return 1;
    trn_error e;
    trn_field f;
    /* 30 m cells, like an SRTM tile. */
    if (trn_field_init(&f, cells, cells, 30.0 * cells, 30.0 * cells, &e) != TRN_OK) return 1;
    const size_t nx = (size_t)cells + 1u, n = nx * nx;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f.heights[(size_t)j * nx + i] = (float)(10.0 * value_noise(i / 8.0, j / 8.0, 3));
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.threads = threads;
    p.routing = strcmp(routing, "d8") == 0    ? TRN_ROUTING_D8
                : strcmp(routing, "mfd") == 0 ? TRN_ROUTING_MFD
                                              : TRN_ROUTING_RHO8;
    p.uplift = 1e-3;
    p.erodibility = 1e-4;
    p.dt = 1000.0;
    trn_stream_power_report rep;
    /* Warm-up: from noise towards a drained landscape (the first steps fill every pit). */
    p.steps = warm;
    double t0 = now_s();
    if (trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    printf("stream power %u^2 samples (%u cells of 30 m), %s routing, %d thread(s), load average "
           "%.2f\n",
           cells + 1u, cells, routing, threads, load_average());
    printf("warm-up: %u steps in %.3f s, %u step(s) had pits (%llu routed)\n", warm, now_s() - t0,
           rep.steps_with_pits, (unsigned long long)rep.pits_routed);
    double *wall = malloc((size_t)runs * sizeof *wall), *cpu = malloc((size_t)runs * sizeof *cpu);
    p.steps = steps;
    for (int r = 0; r < runs; r++) {
        const double w0 = now_s(), c0 = cpu_s();
        if (trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e) != TRN_OK) return 1;
        wall[r] = (now_s() - w0) / steps;
        cpu[r] = (cpu_s() - c0) / steps;
        printf("  run %d: %.4f s/step, pits in %u of %u steps (%llu routed), max change %.4g, mean "
               "change %.4g\n",
               r + 1, wall[r], rep.steps_with_pits, steps, (unsigned long long)rep.pits_routed,
               rep.last_max_change, rep.last_mean_change);
    }
    qsort(wall, (size_t)runs, sizeof *wall, cmp_double);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_double);
    printf("per step: wall median %.4f s best %.4f s; CPU median %.4f s best %.4f s; load after "
           "%.2f\n",
           wall[runs / 2], wall[0], cpu[runs / 2], cpu[0], load_average());
    (void)n;
    free(wall);
    free(cpu);
    trn_field_dispose(&f);
    return 0;
}
