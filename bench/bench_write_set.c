/* What landing files together costs: a write set's staging, journals and renames against plain
 * atomic writes, for many small files and for a whole 4096^2 BeamNG level. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "terrane/beamng_level.h"
#include "terrane/io.h"

#define RUNS 5

static void report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("  %-58s median %8.4f s, best %8.4f s\n", what, t[n / 2], t[0]);
}

/* count files of size bytes each, written one by one or as one set. */
static void files(const char *dir, int count, size_t size)
{
    uint8_t *data = malloc(size);
    for (size_t k = 0; k < size; k++)
        data[k] = (uint8_t)(k * 31 + 7);
    double plain[RUNS], set[RUNS], commit[RUNS];
    char path[4096];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_s();
        for (int i = 0; i < count; i++) {
            snprintf(path, sizeof path, "%s/plain_%d.bin", dir, i);
            if (trn_file_write_atomic(path, data, size, NULL)) abort();
        }
        plain[r] = now_s() - t0;
        t0 = now_s();
        trn_write_set *ws = NULL;
        if (trn_write_set_new(NULL, &ws, NULL)) abort();
        for (int i = 0; i < count; i++) {
            snprintf(path, sizeof path, "%s/set_%d.bin", dir, i);
            const char *temp;
            if (trn_write_set_stage(ws, path, &temp, NULL) ||
                trn_file_write_atomic(temp, data, size, NULL))
                abort();
        }
        double t1 = now_s();
        if (trn_write_set_commit(ws, NULL)) abort();
        trn_write_set_free(ws);
        set[r] = now_s() - t0;
        commit[r] = now_s() - t1;
    }
    char what[160];
    snprintf(what, sizeof what, "%d x %zu KiB, one atomic write each", count, size / 1024);
    report(what, plain, RUNS);
    snprintf(what, sizeof what, "%d x %zu KiB, one write set (stage, write, commit)", count,
             size / 1024);
    report(what, set, RUNS);
    report("  of which the commit (journal, renames, folder syncs)", commit, RUNS);
    free(data);
}

static void level(const char *dir, uint32_t size)
{
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    ter.version = 9;
    ter.size = size;
    ter.heights = malloc((size_t)size * size * 2);
    ter.layers = malloc((size_t)size * size);
    for (size_t k = 0; k < (size_t)size * size; k++) {
        ter.heights[k] =
            (uint16_t)(value_noise((double)(k % size) / 97.0, (double)(k / size) / 97.0, 3) *
                       60000.0);
        ter.layers[k] = (uint8_t)(k % 3);
    }
    static char a[] = "grass", b[] = "rock", c[] = "sand";
    char *names[3] = {a, b, c};
    uint32_t lens[3] = {5, 4, 4};
    ter.materials = names;
    ter.material_lengths = lens;
    ter.material_count = 3;
    double total[RUNS], commit[RUNS];
    for (int r = 0; r < RUNS; r++) {
        char level_dir[4200];
        snprintf(level_dir, sizeof level_dir, "%s/levels/bench", dir);
        trn_write_set *ws = NULL;
        if (trn_write_set_new(NULL, &ws, NULL)) abort();
        trn_beamng_level_options lo;
        memset(&lo, 0, sizeof lo);
        lo.level_dir = level_dir;
        lo.writes = ws;
        trn_error e;
        double t0 = now_s();
        if (trn_beamng_level_write_terrain(&ter, &lo, NULL, NULL, NULL, &e)) {
            fprintf(stderr, "%s\n", e.message);
            abort();
        }
        double t1 = now_s();
        if (trn_write_set_commit(ws, NULL)) abort();
        total[r] = now_s() - t0;
        commit[r] = now_s() - t1;
        printf("    run %d: %zu files\n", r + 1, trn_write_set_count(ws));
        trn_write_set_free(ws);
    }
    char what[160];
    snprintf(what, sizeof what, "BeamNG level %u^2 (.ter, json, PNG, items, materials, textures)",
             size);
    report(what, total, RUNS);
    report("  of which the commit", commit, RUNS);
    free(ter.heights);
    free(ter.layers);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    char scratch[4096];
    snprintf(scratch, sizeof scratch, "%s/terrane-bench-ws-XXXXXX", dir);
    if (!mkdtemp(scratch)) return 1;
    printf("write sets in %s (%d runs each)\n", scratch, RUNS);
    files(scratch, 200, 4096);
    files(scratch, 16, 16u << 20);
    level(scratch, 4096);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    return system(cmd) == 0 ? 0 : 1;
}
