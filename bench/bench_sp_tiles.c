/* Benchmark: stream power on the whole grid against in tiles (memory or files): CPU, peak RSS,
 * hash. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xxhash.h>

#include "bench_util.h"
#include "gen/stream_power_tiled.h"
#include "terrane/landscape.h"

/* Arguments: whole|tiles|files CELLS TILE STEPS [DIR] (files: the tiles in files under DIR, or
 * $TMPDIR, or /tmp). The bench_stream_power evolve field (a ridge with value-noise relief,
 * 30 m cells), Rho8 with outlet borders, the Stream Power node's defaults (deposition G with
 * TRN_BENCH_DEPOSITION=G). One mode a process, so the peak resident size is that mode's. */
int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_sp_tiles whole|tiles|files CELLS TILE STEPS [DIR]\n");
        return 1;
    }
    const char *mode = argv[1];
    const uint32_t cells = (uint32_t)strtoul(argv[2], NULL, 10);
    const uint32_t tile = (uint32_t)strtoul(argv[3], NULL, 10);
    const uint32_t steps = (uint32_t)strtoul(argv[4], NULL, 10);
    const char *dir = argc > 5 ? argv[5] : getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    trn_error e;
    trn_field f;
    if (cells < 2 || trn_field_init(&f, cells, cells, 30.0 * cells, 30.0 * cells, &e)) return 1;
    const size_t nx = (size_t)cells + 1u, n = nx * nx;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f.heights[(size_t)j * nx + i] = ridge_height(i, j, cells);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.erodibility = 5e-5;
    p.diffusion = 0.05;
    p.dt = 20000.0;
    p.steps = steps;
    p.threads = 1;
    p.border_outlets = true;
    /* TRN_BENCH_DEPOSITION=G: with sediment deposition (Yuan et al. 2019) of that G. */
    const char *dep = getenv("TRN_BENCH_DEPOSITION");
    if (dep && *dep) p.deposition = strtod(dep, NULL);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    const double rss0 = (double)ru.ru_maxrss / 1024.0;
    const double load0 = load_average(), c0 = cpu_s(), w0 = now_s();
    trn_status st;
    if (strcmp(mode, "whole") == 0)
        st = trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e);
    else
        st = trn_stream_power_run_tiled(&f, &p, tile, strcmp(mode, "files") == 0 ? dir : NULL, NULL,
                                        NULL, NULL, &e);
    const double cpu = cpu_s() - c0, wall = now_s() - w0;
    if (st) {
        printf("%s: %s\n", mode, e.message);
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("%s %zu^2 tile %u steps %u: cpu %.2f s (%.0f ns a sample a step), wall %.2f s, peak RSS "
           "%.0f MiB (%.0f with the field), hash %016llx, load %.1f\n",
           mode, nx, tile, steps, cpu, cpu * 1e9 / (double)n / steps, wall,
           (double)ru.ru_maxrss / 1024.0 - rss0, (double)ru.ru_maxrss / 1024.0,
           (unsigned long long)XXH64(f.heights, n * sizeof(float), 0), load0);
    trn_field_dispose(&f);
    return 0;
}
