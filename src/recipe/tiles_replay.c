/* A recipe's graph tile by tile with its sculpt and protection strokes replayed on the heights. */
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"
#include "recipe/replay.h"
#include "terrane/generate.h"
#include "terrane/graph.h"

/* The rows of tiles the strokes reach are held until the last of them arrives: the strokes
 * run over their box (every stamp in order, as on the whole grid), then those tiles go on in
 * row order. Tiles above and below pass straight through. */
typedef struct replay_sink {
    const trn_recipe *recipe;
    const trn_replay_plan *plan;
    trn_graph_tile_sink sink;
    void *user;
    trn_box box;        /* samples the strokes can change or read */
    uint32_t z0, z1;    /* the held rows [z0, z1): whole rows of tiles around the box */
    uint32_t width;
    float *band;        /* (z1 - z0) rows of width samples */
    uint32_t *pieces;   /* held tiles: x0, z0, nx, nz each */
    size_t npieces, cap;
} replay_sink;

static trn_status release_band(replay_sink *b, trn_error *err)
{
    /* The strokes over their box, on the held heights. */
    const size_t bw = (size_t)(b->box.i1 - b->box.i0 + 1), bh = (size_t)(b->box.j1 - b->box.j0 + 1);
    float *v = malloc(bw * bh * sizeof *v);
    if (!v)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory for the strokes' %zu x %zu samples", bw, bh);
    for (size_t j = 0; j < bh; j++)
        memcpy(v + j * bw,
               b->band + ((size_t)b->box.j0 + j - b->z0) * b->width + (size_t)b->box.i0,
               bw * sizeof *v);
    trn_window win;
    win.grid = trn_replay_grid(b->recipe);
    win.box = b->box;
    win.values = v;
    trn_status st = trn_replay_heights(b->recipe, b->plan, NULL, &win, err);
    for (size_t j = 0; j < bh && !st; j++)
        memcpy(b->band + ((size_t)b->box.j0 + j - b->z0) * b->width + (size_t)b->box.i0,
               v + j * bw, bw * sizeof *v);
    free(v);
    /* Then the held tiles, in the order they came. */
    float *tile = NULL;
    size_t tile_cap = 0;
    for (size_t k = 0; k < b->npieces && !st; k++) {
        const uint32_t *p = b->pieces + 4 * k;
        const size_t n = (size_t)p[2] * p[3];
        if (n > tile_cap) {
            float *t = realloc(tile, n * sizeof *t);
            if (!t) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a tile");
                break;
            }
            tile = t;
            tile_cap = n;
        }
        for (uint32_t j = 0; j < p[3]; j++)
            memcpy(tile + (size_t)j * p[2], b->band + (size_t)(p[1] + j - b->z0) * b->width + p[0],
                   (size_t)p[2] * sizeof *tile);
        st = b->sink(b->user, p[0], p[1], p[2], p[3], tile, err);
    }
    free(tile);
    free(b->band);
    b->band = NULL;
    b->npieces = 0;
    return st;
}

static trn_status replay_put(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                             const float *values, trn_error *err)
{
    replay_sink *b = user;
    if (z0 >= b->z1 || z0 + nz <= b->z0 || !values) return b->sink(b->user, x0, z0, nx, nz, values, err);
    if (!b->band && !(b->band = malloc((size_t)(b->z1 - b->z0) * b->width * sizeof *b->band)))
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory holding %u rows of tiles for the strokes",
                             b->z1 - b->z0);
    if (b->npieces == b->cap) {
        const size_t cap = b->cap ? 2u * b->cap : 64u;
        uint32_t *p = realloc(b->pieces, cap * 4u * sizeof *p);
        if (!p) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        b->pieces = p;
        b->cap = cap;
    }
    uint32_t *p = b->pieces + 4u * b->npieces++;
    p[0] = x0;
    p[1] = z0;
    p[2] = nx;
    p[3] = nz;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(b->band + (size_t)(z0 + j - b->z0) * b->width + x0, values + (size_t)j * nx,
               (size_t)nx * sizeof *b->band);
    /* The last tile of the last held row: the strokes can run. */
    if (x0 + nx == b->width && z0 + nz == b->z1) return release_band(b, err);
    return TRN_OK;
}

/* The samples the sculpt and protection strokes of enabled layers can change or read (none:
 * an empty box); a region blending its biome's own landform is refused. */
static trn_status strokes_box(const trn_recipe *recipe, const trn_replay_plan *plan, trn_box *out,
                              trn_error *err)
{
    /* What the strokes can change: sculpt and protection (regions and exclusions leave the
     * heights alone, unless a region blends in its biome's own landform). */
    trn_box box = trn_box_none();
    for (uint32_t o = 0; o < plan->stage_end[2]; o++) {
        const uint32_t s = plan->order[o];
        const trn_stroke *k = &recipe->strokes[s];
        if (k->kind == TRN_STROKE_REGION) {
            if (plan->landform[s] >= 0)
                return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                                     "regions[%u] paints biome '%.60s', which blends in its own "
                                     "landform's heights over the whole grid; tiles take sculpt "
                                     "and protection strokes: generate without tiles",
                                     s, k->biome ? k->biome : "");
            continue;
        }
        box = trn_box_union(box, trn_replay_stroke_box(recipe, k));
    }
    /* A smoothing stamp reads one sample around what it changes; stamp boxes are conservative
     * by a sample each way (trn_stamp_box), so those reads stay inside the union (the tests
     * smooth with a hard edge to hold this). */
    *out = box;
    return TRN_OK;
}

/* The rows [z0, z1) of whole rows of tiles that meet box. */
static void held_rows(const trn_recipe *recipe, trn_box box, uint32_t tile, uint32_t *z0,
                      uint32_t *z1)
{
    const uint32_t height = recipe->cells_z + 1u;
    *z0 = (uint32_t)box.j0 / tile * tile;
    const uint64_t end = ((uint64_t)box.j1 / tile + 1u) * tile;
    *z1 = end < height ? (uint32_t)end : height;
}

trn_status trn_recipe_tiles_held(const trn_recipe *recipe, uint32_t tile, uint64_t *bytes,
                                 trn_error *err)
{
    *bytes = 0;
    if (!recipe || tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled generation: a recipe and a tile of at least 1 sample are "
                             "required");
    if (!recipe->stroke_count) return TRN_OK;
    trn_replay_plan plan;
    trn_status st = trn_replay_plan_make(recipe, &plan, err);
    if (st) return st;
    trn_box box = trn_box_none();
    st = strokes_box(recipe, &plan, &box, err);
    trn_replay_plan_dispose(&plan);
    if (st || trn_box_empty(&box)) return st;
    uint32_t z0, z1;
    held_rows(recipe, box, tile, &z0, &z1);
    /* The held rows, and the strokes' own copy of their box. */
    *bytes = ((uint64_t)(z1 - z0) * (recipe->cells_x + 1u) +
              (uint64_t)(box.i1 - box.i0 + 1) * (uint64_t)(box.j1 - box.j0 + 1)) *
             sizeof(float);
    return TRN_OK;
}

trn_status trn_recipe_evaluate_tiles(const trn_recipe *recipe, const trn_graph *graph,
                                     const trn_graph_options *options,
                                     const trn_graph_tile_options *tiles, trn_graph_tile_sink sink,
                                     void *user, trn_progress_fn progress, void *progress_user,
                                     trn_error *err)
{
    if (!recipe || !graph || !tiles || !sink || tiles->tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled generation: a recipe, its graph, a tile of at least 1 sample "
                             "and a sink are required");
    if (!recipe->stroke_count || tiles->node_id)
        return trn_graph_evaluate_tiles(graph, recipe, options, tiles, sink, user, progress,
                                        progress_user, err);
    trn_replay_plan plan;
    trn_status st = trn_replay_plan_make(recipe, &plan, err);
    if (st) return st;
    st = trn_replay_check_work(recipe, &plan, options ? options->max_work : 0, err);
    trn_box box = trn_box_none();
    if (!st) st = strokes_box(recipe, &plan, &box, err);
    if (!st && !trn_box_empty(&box) && tiles->samples_x && tiles->samples_z)
        st = trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                           "tiled generation: a window of the world cannot be generated with "
                           "the recipe's sculpt and protection strokes (they run over their "
                           "whole box)");
    if (st || trn_box_empty(&box)) {
        trn_replay_plan_dispose(&plan);
        if (st) return st;
        return trn_graph_evaluate_tiles(graph, recipe, options, tiles, sink, user, progress,
                                        progress_user, err);
    }
    replay_sink b;
    memset(&b, 0, sizeof b);
    b.recipe = recipe;
    b.plan = &plan;
    b.sink = sink;
    b.user = user;
    b.box = box;
    b.width = recipe->cells_x + 1u;
    held_rows(recipe, box, tiles->tile, &b.z0, &b.z1);
    st = trn_graph_evaluate_tiles(graph, recipe, options, tiles, replay_put, &b, progress,
                                  progress_user, err);
    free(b.band);
    free(b.pieces);
    trn_replay_plan_dispose(&plan);
    return st;
}
