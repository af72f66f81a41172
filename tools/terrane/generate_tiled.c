/* terrane generate --tiles: the graph's heights tile by tile into a GeoTIFF within --memory. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "generate_internal.h"

/* ---- tiled, out of core ---- */

static trn_status tiled_put(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                            const float *values, trn_error *err)
{
    return trn_geotiff_tiled_put(user, x0, z0, nx, nz, values, err);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* "100 KiB", "5.5 MiB", "3.25 GiB": a size as people read it. */
static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
    if (bytes < ((uint64_t)1 << 20))
        snprintf(buf, size, "%.0f KiB", (double)bytes / 1024.0);
    else if (bytes < ((uint64_t)1 << 30))
        snprintf(buf, size, "%.1f MiB", mib(bytes));
    else
        snprintf(buf, size, "%.2f GiB", (double)bytes / 1073741824.0);
    return buf;
}

/* The graph's published heights tile by tile straight into a tiled BigTIFF, within the memory
 * budget: refused up front when one tile with its halos (and the whole grids global nodes hold)
 * cannot fit. */
int generate_tiled(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, double t0)
{
    trn_error e;
    /* Without strokes the layers change nothing: the heights are the graph's. */
    if (recipe->stroke_count)
        return cli_failf(ctx,
                         "--tiles generates the graph's heights; this recipe's %u regions, edits "
                         "and exclusions are applied to the whole grid: generate without --tiles",
                         recipe->stroke_count);
    trn_graph g;
    if (trn_graph_from_recipe(recipe, &g, &e)) return cli_fail(ctx, &e);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = a->threads;
    o.quality = a->quality;
    o.max_work = a->max_work;
    uint64_t need = 0;
    int global = -1;
    if (trn_graph_tiles_memory(&g, recipe, &o, a->tiles, &need, &global, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    /* The writer's band: three tile heights across the width. */
    need += (uint64_t)3u * a->tiles * ((uint64_t)recipe->cells_x + 1u) * sizeof(float);
    if (a->memory && need > a->memory) {
        char why[200] = "";
        if (global >= 0)
            snprintf(why, sizeof why,
                     "; node '%.60s' (%.32s) reads the whole grid, so the whole grid is held",
                     g.nodes[global].id, g.nodes[global].type);
        char have[32], want[32];
        const int r = cli_failf(ctx,
                                "--memory %s is below the %s a tile of %u samples with its "
                                "halos is estimated to need on this %u x %u-sample grid%s; give "
                                "--memory %.0fMiB or more%s",
                                size_text(a->memory, have, sizeof have),
                                size_text(need, want, sizeof want), a->tiles, recipe->cells_x + 1u,
                                recipe->cells_z + 1u, why, ceil(mib(need)),
                                global >= 0 ? "" : ", or smaller --tiles");
        trn_graph_dispose(&g);
        return r;
    }
    trn_geotiff_tiled *w = NULL;
    if (trn_geotiff_tiled_open(a->out_file, recipe->cells_x, recipe->cells_z, recipe->size_x,
                               recipe->size_z, a->tiles, &w, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    /* Global results wait on disk beside the output (or where --tile-cache says). */
    char *folder = NULL;
    if (!a->tile_cache) {
        const char *slash = strrchr(a->out, '/');
        const size_t n = slash ? (size_t)(slash - a->out) : 0u;
        folder = malloc(n + 2u);
        if (folder) {
            if (slash)
                snprintf(folder, n + 2u, "%.*s", (int)(n ? n : 1u), a->out);
            else
                strcpy(folder, ".");
        }
    }
    const trn_graph_tile_options to = {.tile = a->tiles,
                                       .cache_dir = a->tile_cache ? a->tile_cache : folder};
    trn_status st =
        trn_graph_evaluate_tiles(&g, recipe, &o, &to, tiled_put, w, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    free(folder);
    trn_graph_dispose(&g);
    if (st) {
        trn_geotiff_tiled_abort(w);
        return cli_fail(ctx, &e);
    }
    if (trn_geotiff_tiled_close(w, &e)) return cli_fail(ctx, &e);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char peak[32], est[32];
    const uint32_t per_x = (recipe->cells_x + a->tiles) / a->tiles,
                   per_z = (recipe->cells_z + a->tiles) / a->tiles;
    const double seconds = now_s() - t0;
    const uint64_t resident = (uint64_t)ru.ru_maxrss * 1024u;
    cli_note(ctx,
             "wrote %s: %u x %u samples in %u x %u tiles of %u, %.1f s, peak resident %s "
             "(%s estimated before the run)",
             a->out, recipe->cells_x + 1u, recipe->cells_z + 1u, per_x, per_z, a->tiles, seconds,
             size_text(resident, peak, sizeof peak), size_text(need, est, sizeof est));
    if (ctx->json) {
        json_t *summary = json_object();
        json_object_set_new(summary, "input", cli_json_string(a->recipe_path));
        json_object_set_new(summary, "input_format", json_string("recipe"));
        json_t *size = json_array();
        json_array_append_new(size, json_real(recipe->size_x));
        json_array_append_new(size, json_real(recipe->size_z));
        json_object_set_new(summary, "size", size);
        json_t *cells = json_array();
        json_array_append_new(cells, json_integer(recipe->cells_x));
        json_array_append_new(cells, json_integer(recipe->cells_z));
        json_object_set_new(summary, "cells", cells);
        json_object_set_new(summary, "samples",
                            json_integer((json_int_t)(recipe->cells_x + 1u) *
                                         (json_int_t)(recipe->cells_z + 1u)));
        json_t *tiles = json_object();
        json_object_set_new(tiles, "size", json_integer(a->tiles));
        json_t *count = json_array();
        json_array_append_new(count, json_integer(per_x));
        json_array_append_new(count, json_integer(per_z));
        json_object_set_new(tiles, "count", count);
        json_object_set_new(tiles, "memory_budget", json_integer((json_int_t)a->memory));
        json_object_set_new(tiles, "estimated_bytes", json_integer((json_int_t)need));
        json_object_set_new(tiles, "peak_resident_bytes", json_integer((json_int_t)resident));
        json_object_set_new(tiles, "seconds", json_real(seconds));
        json_object_set_new(summary, "tiles", tiles);
        cli_print_json(summary);
    }
    return CLI_EXIT_OK;
}
