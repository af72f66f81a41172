/* Benchmark: a preset's graph evaluated on the whole grid or tile by tile: time, peak RSS, hash. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <xxhash.h>

#include "bench_util.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/palette.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"

/* Peak resident set of this process so far (getrusage: measured, not estimated). */
static double peak_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Rows hashed in order as the tiles of a band complete, so whole and tiled hashes compare. */
typedef struct band_hash {
    XXH64_state_t *h;
    uint32_t width, tile;
    float *band;
    uint32_t band_z0, filled_x;
    trn_geotiff_tiled *tif;
} band_hash;

static trn_status on_tile(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                          const float *values, trn_error *err)
{
    band_hash *b = user;
    if (b->tif && trn_geotiff_tiled_put(b->tif, x0, z0, nx, nz, values, err)) return TRN_ERR_IO;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(b->band + (size_t)j * b->width + x0, values + (size_t)j * nx, nx * sizeof(float));
    if (x0 + nx == b->width) XXH64_update(b->h, b->band, (size_t)nz * b->width * sizeof(float));
    return TRN_OK;
}

/* Arguments: whole|tiled|tiled-cache|plan PRESET|RECIPE CELLS TILE THREADS [OUT.tif] (PRESET: the name after
 * builtin://terrain/). One mode a process, so the peak resident size is that mode's. */
int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: bench_tiles whole|tiled|tiled-cache|plan PRESET|RECIPE CELLS TILE THREADS "
                "[OUT.tif]\n");
        return 1;
    }
    /* tiled-cache: tiled, with global results in a disk tile cache under $TMPDIR (or /tmp). */
    const bool cached = strcmp(argv[1], "tiled-cache") == 0;
    const bool tiled = cached || strcmp(argv[1], "tiled") == 0;
    const char *tmpdir = getenv("TMPDIR");
    const uint32_t cells = (uint32_t)strtoul(argv[3], NULL, 10);
    const uint32_t tile = (uint32_t)strtoul(argv[4], NULL, 10);
    const int threads = atoi(argv[5]);
    char id[256];
    snprintf(id, sizeof id, "builtin://terrain/%s", argv[2]);
    const char *text = trn_builtin_preset_text(id);
    trn_recipe r;
    trn_error e;
    if (text ? trn_recipe_parse(text, strlen(text), id, &r, NULL, &e)
             : trn_recipe_read(argv[2], &r, NULL, &e)) {
        printf("%s: %s\n", argv[2], e.message);
        return 1;
    }
    if (trn_recipe_change_grid(&r, r.size_x, r.size_z, cells, cells, TRN_EDITS_KEEP, &e)) {
        printf("grid change failed: %s\n", e.message);
        return 1;
    }
    trn_graph g;
    if (trn_graph_from_recipe(&r, &g, &e)) {
        printf("graph: %s\n", e.message);
        return 1;
    }
    printf("%s: global nodes:", argv[2]);
    for (uint32_t k = 0; k < g.node_count; k++) {
        trn_node_reach reach;
        if (trn_graph_node_reach(&g.nodes[k], &r, &reach) && reach.kind == TRN_REACH_GLOBAL)
            printf(" %s (%s)", g.nodes[k].id, g.nodes[k].type);
    }
    printf("\n");
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.max_work = TRN_WORK_UNLIMITED;
    if (strcmp(argv[1], "plan") == 0) {
        /* What a tiled run would hold, estimated, without running it. */
        uint64_t bytes = 0;
        int global = -1;
        if (trn_graph_tiles_memory(&g, &r, &o, tile, &bytes, &global, &e)) {
            printf("plan: %s\n", e.message);
            return 1;
        }
        printf("plan %s %u^2 tile %u: %.2f GiB estimated%s%s\n", argv[2], cells + 1u, tile,
               (double)bytes / 1073741824.0, global >= 0 ? ", first global node " : "",
               global >= 0 ? g.nodes[global].id : "");
        return 0;
    }
    const double load0 = load_average(), rss0 = peak_mib();
    const double w0 = now_s(), c0 = cpu_s();
    band_hash b;
    memset(&b, 0, sizeof b);
    b.h = XXH64_createState();
    XXH64_reset(b.h, 0);
    b.width = cells + 1u;
    trn_status st;
    if (tiled) {
        b.band = malloc((size_t)b.width * tile * sizeof(float));
        if (argc > 6 &&
            trn_geotiff_tiled_open(argv[6], cells, cells, r.size_x, r.size_z, tile, &b.tif, &e)) {
            printf("tif: %s\n", e.message);
            return 1;
        }
        const trn_graph_tile_options to = {.tile = tile,
                                           .cache_dir = !cached ? NULL
                                                        : tmpdir && *tmpdir ? tmpdir
                                                                            : "/tmp"};
        st = trn_graph_evaluate_tiles(&g, &r, &o, &to, on_tile, &b, NULL, NULL, &e);
        if (!st && b.tif) st = trn_geotiff_tiled_close(b.tif, &e);
        free(b.band);
    } else {
        trn_graph_run *run = NULL;
        st = trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e);
        trn_graph_value v;
        if (!st) st = trn_graph_run_terrain(run, &v, &e);
        if (!st) XXH64_update(b.h, v.values, (size_t)b.width * b.width * sizeof(float));
        trn_graph_run_free(run);
    }
    const double wall = now_s() - w0, cpu = cpu_s() - c0;
    if (st) {
        printf("%s %s %u: failed: %s (peak %.0f MiB)\n", argv[1], argv[2], cells + 1u, e.message,
               peak_mib());
        return 1;
    }
    const double samples = (double)b.width * b.width;
    printf("%s %s %u^2 tile %u threads %d: wall %.2f s, cpu %.2f s, %.1f ns/sample wall, peak "
           "RSS %.0f MiB (%.0f before), hash %016llx, load %.1f\n",
           argv[1], argv[2], b.width, tiled ? tile : 0u, threads, wall, cpu, wall / samples * 1e9,
           peak_mib(), rss0, (unsigned long long)XXH64_digest(b.h), load0);
    XXH64_freeState(b.h);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    return 0;
}
