/* Sculpt strokes replayed on a window of tiles whose global nodes processes share (internal). */
#ifndef TRN_RECIPE_TILES_REPLAY_H
#define TRN_RECIPE_TILES_REPLAY_H

#include "graph/tiles.h"
#include "terrane/generate.h"

/* What the strokes cost a window: the tiles evaluated beyond it and the strokes replayed. */
typedef struct trn_tiles_replayed {
    uint32_t strokes; /* sculpt and protection strokes replayed for the window */
    uint32_t x0, z0;  /* the tiles evaluated: the window's, grown to the strokes' box */
    uint32_t samples_x, samples_z;
    uint64_t extra; /* samples evaluated outside the window's tiles (0 without strokes) */
} trn_tiles_replayed;

/* trn_recipe_evaluate_tiles with global nodes solved by solve and shared as split says
 * (trn_graph_evaluate_tiles_split; NULL, NULL: on this process alone). With a window
 * (tiles->samples_x), the tiles the window's strokes need are evaluated too: the rows and
 * columns of tiles around the box of the strokes that meet the window, and of those that meet
 * theirs, until none is added; the strokes run over that box and only the window's tiles are
 * delivered. Every process of split evaluates together, each its own window. done (may be
 * NULL): what the strokes cost. */
trn_status trn_recipe_evaluate_tiles_split(const trn_recipe *recipe, const trn_graph *graph,
                                           const trn_graph_options *options,
                                           const trn_graph_tile_options *tiles,
                                           trn_global_solver solve, trn_tile_split *split,
                                           trn_graph_tile_sink sink, void *user,
                                           trn_progress_fn progress, void *progress_user,
                                           trn_tiles_replayed *done, trn_error *err);

#endif
