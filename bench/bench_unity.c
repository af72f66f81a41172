/* Benchmark: read the real Unity 2021.3 TerrainData and write its RAW for Unity's import (target:
 * under 20 ms). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

#include "terrane/unity.h"

#define BENCH_RUNS 21

/* Run from the repository root, where the shared data is ../shared (or pass the file). */
#ifndef TRN_BENCH_SHARED
#define TRN_BENCH_SHARED "../shared"
#endif

int main(int argc, char **argv)
{
    const char *in =
        argc > 1 ? argv[1] : TRN_BENCH_SHARED "/testdata/real/unity_2021.3.1f1_Terrain.asset";
    if (access(in, R_OK) != 0) {
        printf("bench_unity: %s is absent; skipped\n", in);
        return 0;
    }
    char dir[] = "/tmp/bench_unity_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_unity: mkdtemp");
        return 1;
    }
    double read_s[BENCH_RUNS], total_s[BENCH_RUNS];
    trn_error e;
    char buf[1200];
    for (int r = 0; r < BENCH_RUNS; r++) {
        double t0 = now_s();
        trn_unity_terrain t;
        trn_field field;
        if (trn_unity_terrain_read(in, NULL, &t, &e) ||
            trn_unity_terrain_to_field(&t, &field, &e)) {
            fprintf(stderr, "bench_unity: %s\n", trn_error_format(&e, buf, sizeof buf));
            return 1;
        }
        double t1 = now_s();
        trn_unity_export_options o;
        trn_unity_export_options_default(&o);
        o.height_size = t.scale[1];
        if (trn_unity_export(dir, &field, NULL, &t, &o, NULL, NULL, NULL, &e)) {
            fprintf(stderr, "bench_unity: %s\n", trn_error_format(&e, buf, sizeof buf));
            return 1;
        }
        double t2 = now_s();
        read_s[r] = t1 - t0;
        total_s[r] = t2 - t0;
        trn_field_dispose(&field);
        trn_unity_terrain_dispose(&t);
    }
    qsort(read_s, BENCH_RUNS, sizeof read_s[0], cmp_double);
    qsort(total_s, BENCH_RUNS, sizeof total_s[0], cmp_double);
    printf("bench_unity: %s (513 x 513), %d runs\n", in, BENCH_RUNS);
    printf("  read TerrainData + field:      median %.2f ms (min %.2f)\n",
           read_s[BENCH_RUNS / 2] * 1e3, read_s[0] * 1e3);
    printf("  read + write RAW and metadata: median %.2f ms (min %.2f), target < 20 ms: %s\n",
           total_s[BENCH_RUNS / 2] * 1e3, total_s[0] * 1e3,
           total_s[BENCH_RUNS / 2] < 0.020 ? "met" : "NOT met");
    char path[256];
    snprintf(path, sizeof path, "%s/terrain.raw", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/terrain.json", dir);
    unlink(path);
    rmdir(dir);
    return total_s[BENCH_RUNS / 2] < 0.020 ? 0 : 1;
}
