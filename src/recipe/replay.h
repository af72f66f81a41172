/* Replaying a recipe's layers (regions, sculpt, protection, exclusions) over a window of the
 * grid, shared by full generation and sessions (private to the library). */
#ifndef TRN_RECIPE_REPLAY_H
#define TRN_RECIPE_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/progress.h"
#include "gen/stamps.h"
#include "terrane/generate.h"

/* Evaluation order of a recipe's strokes in enabled layers: stage 0 regions (biome layers),
 * 1 sculpt, 2 protection, 3 exclusions; within a stage, layers in authored order, strokes in
 * recipe order. */
typedef struct trn_replay_plan {
    uint32_t *order;
    uint32_t stage_end[4]; /* order[stage_end[k-1] .. stage_end[k]) is stage k */
    int32_t *biome;        /* per stroke: region's biome index, else -1 */
    int32_t *landform;     /* per stroke: region's biome's own landform index, else -1 */
    int32_t *position;     /* per stroke: its index in order, -1 when its layer is disabled */
} trn_replay_plan;

trn_status trn_replay_plan_make(const trn_recipe *recipe, trn_replay_plan *plan, trn_error *err);
void trn_replay_plan_dispose(trn_replay_plan *plan);
/* Index of the layer a stroke belongs to (recipe's layers or the five defaults), -1 if none. */
int trn_replay_stroke_layer(const trn_recipe *recipe, const trn_stroke *stroke);
bool trn_replay_layer_enabled(const trn_recipe *recipe, int layer);

trn_grid trn_replay_grid(const trn_recipe *recipe);
/* Samples a stroke can change (union of its stamps; protect: its snapshot's samples when its
 * grid is the recipe's). */
trn_box trn_replay_stroke_box(const trn_recipe *recipe, const trn_stroke *stroke);
/* Work of one stroke as the budget counts it (generate.h): the samples inside each stamp's box,
 * summed over its stamps; a protect stroke, its samples. Saturates at UINT64_MAX. */
uint64_t trn_replay_stroke_work(const trn_recipe *recipe, const trn_stroke *stroke);
/* Hold the strokes of enabled layers, together, to max_work (0 = TRN_WORK_BUDGET_DEFAULT,
 * TRN_WORK_UNLIMITED = none): TRN_ERR_LIMIT naming the costliest stroke ("edits[3]"). */
trn_status trn_replay_check_work(const trn_recipe *recipe, const trn_replay_plan *plan,
                                 uint64_t max_work, trn_error *err);
/* Does any enabled exclusion stroke exist? */
bool trn_replay_has_exclusions(const trn_replay_plan *plan);

/* Heights stages (regions' landform blend, sculpt, protection) over win, which holds the base
 * over win->box. lf[l]: full-grid heights of landform l, for every landform a region uses. */
trn_status trn_replay_heights(const trn_recipe *recipe, const trn_replay_plan *plan,
                              float *const *lf, trn_window *win, trn_error *err);
/* Exclusion mask over win (zeros on entry), then quantised to bytes over the same box. */
trn_status trn_replay_exclusion(const trn_recipe *recipe, const trn_replay_plan *plan,
                                trn_window *win, trn_error *err);
uint8_t trn_replay_quantise(float m);
/* Painted regions over row-major arrays covering box. */
void trn_replay_paint(const trn_recipe *recipe, const trn_replay_plan *plan, trn_box box,
                      uint8_t *biomes, uint8_t *sources, int16_t *rules);

/* Heights of landform l over the recipe's grid (malloc'd into *out), evolved when it has an
 * evolution (at this quality, on this many threads); the default landform's are a copy of
 * base. */
trn_status trn_replay_landform_heights(const trn_recipe *recipe, int landform,
                                       const trn_field *base, int threads,
                                       trn_erosion_quality quality, float **out, trn_error *err);

/* What a session keeps from a generation: the base (default landform or frozen) and the
 * landform heights regions blend toward (lf[l] NULL when unused). */
typedef struct trn_replay_keep {
    trn_field base;
    float **lf;
    uint32_t lf_count;
} trn_replay_keep;
void trn_replay_keep_dispose(trn_replay_keep *keep);

/* trn_recipe_generate with a frozen base (NULL: generate the default landform; same grid) and
 * what a session keeps (NULL: nothing). */
trn_status trn_recipe_generate_with(const trn_recipe *recipe, const trn_generate_options *options,
                                    const trn_field *frozen_base, trn_generated *out,
                                    trn_replay_keep *keep, trn_progress_fn progress, void *user,
                                    trn_error *err);
/* Rules, then painted regions, for the samples of box (inside the grid) of gen. */
/* Resolve the published water and the biome water again (without carving) where the ground
 * under them changed since they were resolved. */
trn_status trn_generated_settle_water(trn_generated *gen, int threads, trn_error *err);
/* gen->water_distance measured on gen's surface from the biome water, else the published water,
 * else the sea inferred from the sea level (pr may be NULL). */
trn_status trn_generated_water_distance(trn_generated *gen, const trn_progress *pr,
                                        trn_error *err);

trn_status trn_generated_biomes_box(const trn_recipe *recipe, const trn_replay_plan *plan,
                                    trn_generated *gen, trn_box box, trn_error *err);

#endif
