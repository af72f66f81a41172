/* Layers and hand edits: sculpt strokes, painted regions, protection and exclusions, replayed
 * on every regeneration; incremental edits with undo/redo. */
#ifndef TERRANE_LAYERS_H
#define TERRANE_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Sessions: a generated terrain kept in memory with its generated base separate from the edited
 * surface, so one new stroke recomputes only the samples it touches (plus the one-sample border
 * that normals and smoothing read) and the result is bit-identical to regenerating the whole
 * recipe with that stroke appended. Water distance is measured on the generated base (before
 * edits), so an edit never changes it outside its footprint.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_session trn_session;

/* Which chunks (recipe.chunk_cells cells square) changed: changed[cz * chunks_x + cx] != 0. */
typedef struct trn_chunk_set {
    uint32_t chunks_x, chunks_z;
    uint8_t *changed;
    uint32_t changed_count;
} trn_chunk_set;

void trn_chunk_set_dispose(trn_chunk_set *set);

/* Generate recipe in full and keep it. *out is NULL on failure. */
trn_status trn_session_new(const trn_recipe *recipe, const trn_generate_options *options,
                           trn_session **out, trn_progress_fn progress, void *user,
                           trn_error *err);
/* NULL is a no-op. */
void trn_session_free(trn_session *session);

/* The current recipe (with every applied stroke) and result; valid until the next call that
 * changes the session. The result's cache_key is brought up to date here after edits (hashing
 * the whole recipe costs more than a stroke, so applying a stroke leaves it to this call). */
const trn_recipe *trn_session_recipe(const trn_session *session);
const trn_generated *trn_session_result(const trn_session *session);
/* The generated base heights (before layers' surface edits). */
const trn_field *trn_session_base(const trn_session *session);

/* Append a stroke (copied) to the end of its layer's strokes and update the surface, biomes and
 * exclusion mask incrementally. changed (may be NULL) receives the changed chunks. Records one
 * history entry (before/after samples of the touched window plus the recipe change). */
trn_status trn_session_apply_stroke(trn_session *session, const trn_stroke *stroke,
                                    trn_chunk_set *changed, trn_error *err);

bool trn_session_can_undo(const trn_session *session);
bool trn_session_can_redo(const trn_session *session);
/* Restore the recipe and the surface together. */
trn_status trn_session_undo(trn_session *session, trn_chunk_set *changed, trn_error *err);
trn_status trn_session_redo(trn_session *session, trn_chunk_set *changed, trn_error *err);

/* What to do with edits when the grid (size or resolution) changes. */
typedef enum trn_edit_policy {
    TRN_EDITS_REFUSE = 0, /* fail with a clear error when edits exist */
    TRN_EDITS_KEEP = 1,   /* radial edits keep their terrain-local positions; protection
                             snapshots refuse (they are tied to their grid) */
    TRN_EDITS_CLEAR = 2,  /* drop regions, edits and exclusions */
} trn_edit_policy;

/* Replace the recipe (e.g. a new seed, landform or grid) and regenerate in full. A cancelled or
 * failed regeneration leaves the previous recipe and result intact. A disabled generation layer
 * freezes the base: the previous base heights are kept (same grid only). */
trn_status trn_session_regenerate(trn_session *session, const trn_recipe *recipe,
                                  trn_edit_policy policy, trn_progress_fn progress, void *user,
                                  trn_error *err);

/* Apply a grid change to a recipe under a policy (the rules above); used by the session and by
 * the command line's --keep-edits / --clear-edits. */
trn_status trn_recipe_change_grid(trn_recipe *recipe, double size_x, double size_z,
                                  uint32_t cells_x, uint32_t cells_z, trn_edit_policy policy,
                                  trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
