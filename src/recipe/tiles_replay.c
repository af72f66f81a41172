/* A recipe's graph tile by tile with its sculpt and protection strokes replayed on the heights. */
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"
#include "recipe/replay.h"
#include "recipe/tiles_replay.h"
#include "terrane/generate.h"
#include "terrane/graph.h"

/* The rows of tiles the strokes reach are held until the last of them arrives: the strokes
 * run over their box (every stamp in order, as on the whole grid), then those tiles go on in
 * row order. Tiles above and below pass straight through. With a window, tiles evaluated only
 * for the strokes (outside the window's tiles) are dropped once the strokes have run. */
typedef struct replay_sink {
    const trn_recipe *recipe;
    const trn_replay_plan *plan;
    trn_graph_tile_sink sink;
    void *user;
    trn_box box;        /* samples the strokes can change or read */
    uint32_t z0, z1;    /* the held rows [z0, z1): whole rows of tiles around the box */
    uint32_t x0, width; /* the held columns [x0, x0 + width): those of the evaluated tiles */
    uint32_t tile;
    uint32_t keep[4]; /* the window's tiles: columns keep[0] to keep[1], rows keep[2] to keep[3] */
    float *band;        /* (z1 - z0) rows of width samples */
    uint32_t *pieces;   /* held tiles: x0, z0, nx, nz each */
    size_t npieces, cap;
} replay_sink;

/* Whether the tile at (x0, z0) is one of the window's (else evaluated only for the strokes). */
static bool kept(const replay_sink *b, uint32_t x0, uint32_t z0)
{
    const uint32_t tx = x0 / b->tile, tz = z0 / b->tile;
    return tx >= b->keep[0] && tx < b->keep[1] && tz >= b->keep[2] && tz < b->keep[3];
}

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
               b->band + ((size_t)b->box.j0 + j - b->z0) * b->width + (size_t)b->box.i0 - b->x0,
               bw * sizeof *v);
    trn_window win;
    win.grid = trn_replay_grid(b->recipe);
    win.box = b->box;
    win.values = v;
    trn_status st = trn_replay_heights(b->recipe, b->plan, NULL, &win, err);
    for (size_t j = 0; j < bh && !st; j++)
        memcpy(b->band + ((size_t)b->box.j0 + j - b->z0) * b->width + (size_t)b->box.i0 - b->x0,
               v + j * bw, bw * sizeof *v);
    free(v);
    /* Then the held tiles, in the order they came. */
    float *tile = NULL;
    size_t tile_cap = 0;
    for (size_t k = 0; k < b->npieces && !st; k++) {
        const uint32_t *p = b->pieces + 4 * k;
        if (!kept(b, p[0], p[1])) continue;
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
            memcpy(tile + (size_t)j * p[2],
                   b->band + (size_t)(p[1] + j - b->z0) * b->width + (p[0] - b->x0),
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
    if (z0 >= b->z1 || z0 + nz <= b->z0 || !values)
        return kept(b, x0, z0) ? b->sink(b->user, x0, z0, nx, nz, values, err) : TRN_OK;
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
        memcpy(b->band + (size_t)(z0 + j - b->z0) * b->width + (x0 - b->x0),
               values + (size_t)j * nx, (size_t)nx * sizeof *b->band);
    /* The last tile of the last held row: the strokes can run. */
    if (x0 + nx == b->x0 + b->width && z0 + nz == b->z1) return release_band(b, err);
    return TRN_OK;
}

/* The samples the sculpt and protection strokes of enabled layers can change or read that
 * matter to the samples of want (the whole grid: every stroke's; none: an empty box): the box
 * of the strokes that meet want, grown by those that meet it, until none is added. A stroke
 * outside that box changes nothing inside it; one that meets it lies inside it, and so do the
 * samples its smoothing stamps read, which an earlier stroke may have changed beyond want.
 * *count: the strokes inside. A region blending its biome's own landform is refused. */
static trn_status strokes_box(const trn_recipe *recipe, const trn_replay_plan *plan, trn_box want,
                              trn_box *out, uint32_t *count, trn_error *err)
{
    /* What the strokes can change: sculpt and protection (regions and exclusions leave the
     * heights alone, unless a region blends in its biome's own landform). */
    for (uint32_t o = 0; o < plan->stage_end[2]; o++) {
        const uint32_t s = plan->order[o];
        const trn_stroke *k = &recipe->strokes[s];
        if (k->kind == TRN_STROKE_REGION && plan->landform[s] >= 0)
            return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                                 "regions[%u] paints biome '%.60s', which blends in its own "
                                 "landform's heights over the whole grid; tiles take sculpt "
                                 "and protection strokes: generate without tiles",
                                 s, k->biome ? k->biome : "");
    }
    trn_box box = trn_box_none();
    for (bool grew = true; grew;) {
        grew = false;
        *count = 0;
        const trn_box grown = box;
        for (uint32_t o = 0; o < plan->stage_end[2]; o++) {
            const trn_stroke *k = &recipe->strokes[plan->order[o]];
            if (k->kind == TRN_STROKE_REGION) continue;
            const trn_box sb = trn_replay_stroke_box(recipe, k);
            const trn_box in = trn_box_intersect(sb, want), on = trn_box_intersect(sb, grown);
            if (trn_box_empty(&in) && trn_box_empty(&on)) continue;
            ++*count;
            const trn_box u = trn_box_union(box, sb);
            grew = grew || memcmp(&u, &box, sizeof u) != 0;
            box = u;
        }
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
    const trn_grid grid = trn_replay_grid(recipe);
    uint32_t count = 0;
    st = strokes_box(recipe, &plan, trn_grid_box(&grid), &box, &count, err);
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
    return trn_recipe_evaluate_tiles_split(recipe, graph, options, tiles, NULL, NULL, sink, user,
                                           progress, progress_user, NULL, err);
}

trn_status trn_recipe_evaluate_tiles_split(const trn_recipe *recipe, const trn_graph *graph,
                                           const trn_graph_options *options,
                                           const trn_graph_tile_options *tiles,
                                           trn_global_solver solve, trn_tile_split *split,
                                           trn_graph_tile_sink sink, void *user,
                                           trn_progress_fn progress, void *progress_user,
                                           trn_tiles_replayed *done, trn_error *err)
{
    if (done) memset(done, 0, sizeof *done);
    if (!recipe || !graph || !tiles || !sink || tiles->tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled generation: a recipe, its graph, a tile of at least 1 sample "
                             "and a sink are required");
    const uint32_t sx = recipe->cells_x + 1u, sz = recipe->cells_z + 1u, size = tiles->tile;
    const bool window = tiles->samples_x && tiles->samples_z;
    if (window && ((uint64_t)tiles->x0 + tiles->samples_x > sx ||
                   (uint64_t)tiles->z0 + tiles->samples_z > sz))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled evaluation: the window of %u x %u samples at (%u, %u) reaches "
                             "past the %u x %u-sample grid",
                             tiles->samples_x, tiles->samples_z, tiles->x0, tiles->z0, sx, sz);
    /* The window's tiles, [tx0, tx1) x [tz0, tz1), as the evaluator takes them. */
    const uint32_t tx0 = window ? tiles->x0 / size : 0u, tz0 = window ? tiles->z0 / size : 0u;
    const uint32_t tx1 =
        (uint32_t)(((uint64_t)(window ? tiles->x0 + tiles->samples_x : sx) + size - 1u) / size);
    const uint32_t tz1 =
        (uint32_t)(((uint64_t)(window ? tiles->z0 + tiles->samples_z : sz) + size - 1u) / size);
    if (done) {
        done->x0 = tx0 * size;
        done->z0 = tz0 * size;
        done->samples_x = (tx1 * size < sx ? tx1 * size : sx) - done->x0;
        done->samples_z = (tz1 * size < sz ? tz1 * size : sz) - done->z0;
    }
    if (!recipe->stroke_count || tiles->node_id)
        return trn_graph_evaluate_tiles_split(graph, recipe, options, tiles, solve, split, sink,
                                              user, progress, progress_user, err);
    trn_replay_plan plan;
    trn_status st = trn_replay_plan_make(recipe, &plan, err);
    if (st) return st;
    st = trn_replay_check_work(recipe, &plan, options ? options->max_work : 0, err);
    /* The samples of the window's tiles, and the strokes' box around them. */
    const trn_box want = {(int64_t)tx0 * size, (int64_t)tz0 * size,
                          (int64_t)(tx1 * size < sx ? tx1 * size : sx) - 1,
                          (int64_t)(tz1 * size < sz ? tz1 * size : sz) - 1};
    trn_box box = trn_box_none();
    uint32_t count = 0;
    if (!st) st = strokes_box(recipe, &plan, want, &box, &count, err);
    if (st || trn_box_empty(&box)) {
        trn_replay_plan_dispose(&plan);
        if (st) return st;
        return trn_graph_evaluate_tiles_split(graph, recipe, options, tiles, solve, split, sink,
                                              user, progress, progress_user, err);
    }
    /* The tiles evaluated: the window's and those around the strokes' box. */
    const trn_box all = trn_box_union(want, box);
    const uint32_t ex0 = (uint32_t)all.i0 / size * size, ez0 = (uint32_t)all.j0 / size * size;
    const uint64_t ex1 = ((uint64_t)all.i1 / size + 1u) * size,
                   ez1 = ((uint64_t)all.j1 / size + 1u) * size;
    trn_graph_tile_options grown = *tiles;
    grown.x0 = ex0;
    grown.z0 = ez0;
    grown.samples_x = (uint32_t)(ex1 < sx ? ex1 : sx) - ex0;
    grown.samples_z = (uint32_t)(ez1 < sz ? ez1 : sz) - ez0;
    if (done) {
        done->strokes = count;
        done->x0 = grown.x0;
        done->z0 = grown.z0;
        done->samples_x = grown.samples_x;
        done->samples_z = grown.samples_z;
        done->extra = (uint64_t)grown.samples_x * grown.samples_z -
                      (uint64_t)(want.i1 - want.i0 + 1) * (uint64_t)(want.j1 - want.j0 + 1);
    }
    replay_sink b;
    memset(&b, 0, sizeof b);
    b.recipe = recipe;
    b.plan = &plan;
    b.sink = sink;
    b.user = user;
    b.box = box;
    b.x0 = grown.x0;
    b.width = grown.samples_x;
    b.tile = size;
    b.keep[0] = tx0;
    b.keep[1] = tx1;
    b.keep[2] = tz0;
    b.keep[3] = tz1;
    held_rows(recipe, box, size, &b.z0, &b.z1);
    st = trn_graph_evaluate_tiles_split(graph, recipe, options, &grown, solve, split, replay_put,
                                        &b, progress, progress_user, err);
    free(b.band);
    free(b.pieces);
    trn_replay_plan_dispose(&plan);
    return st;
}
