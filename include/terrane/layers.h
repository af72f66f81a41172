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
                           trn_session **out, trn_progress_fn progress, void *user, trn_error *err);
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
 * exclusion mask incrementally (and the placements and roles: see below). changed (may be NULL)
 * receives the chunks whose samples changed. Records one history entry (before/after samples of
 * the touched window plus the recipe change). A failure leaves the session as it was. */
trn_status trn_session_apply_stroke(trn_session *session, const trn_stroke *stroke,
                                    trn_chunk_set *changed, trn_error *err);

bool trn_session_can_undo(const trn_session *session);
bool trn_session_can_redo(const trn_session *session);
/* Restore the recipe and the surface together. */
/* Water: a result with published water keeps it settled on the edited surface after every
 * stroke, undo and redo, equal to a full generation's (the bodies' coverage resolved again
 * without carving). Lakes and oceans cover only samples below their level, so an edit whose
 * samples stay at or above the highest level, before and after, skips the work; rivers (their
 * surface follows the bed) settle on every edit that changes heights. */
trn_status trn_session_undo(trn_session *session, trn_chunk_set *changed, trn_error *err);
trn_status trn_session_redo(trn_session *session, trn_chunk_set *changed, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Placements and surface roles in a session. With options.palette (borrowed: it must outlive
 * the session) the session keeps the generation's candidates immutable (the result's
 * scatter_base, else a copy of its instances) and a view over them; each edit (a stroke, undo,
 * redo) refilters only the candidates near the samples it changed against the current surface,
 * biomes, exclusion mask and water distance, so the placements always equal a full
 * trn_scatter_refilter of the candidates on the current surface. Refiltering never adds a
 * candidate; a placement removed by an edit comes back with the same identity (rule, cx, cz),
 * position, yaw and scale when the edit is undone. Regenerating places the palette afresh.
 * With options.roles the result's roles are kept equal to a full trn_generated_classify_roles
 * of the current result: an edit that changes heights recomputes the drainage of the edited
 * surface and classifies again the edit's samples plus every sample whose flow accumulation
 * changed, however far downstream. The material set is not an input to classification:
 * changing only its bindings needs no session call and leaves heights and roles as they are.
 * ------------------------------------------------------------------------------------------- */

/* What the last edit (apply_stroke, undo or redo) changed beyond the surface. After
 * trn_session_new and trn_session_regenerate only placements is set. */
typedef struct trn_session_edit {
    uint64_t placements_removed;  /* candidates placed before the edit and filtered out after */
    uint64_t placements_restored; /* candidates filtered out before and placed after */
    uint64_t placements;          /* candidates placed now */
    trn_chunk_set roles_changed;  /* chunks holding a sample whose role changed (the session's
                                     chunk layout; empty, changed NULL, without roles) */
} trn_session_edit;

/* The last edit's report; valid until the next call that changes the session. NULL session:
 * NULL. */
const trn_session_edit *trn_session_last_edit(const trn_session *session);

/* The current placements (sorted by rule, cz, cx as trn_scatter_run writes them) into *out,
 * which the caller disposes with trn_instances_dispose; empty without a palette. The result's
 * instances are brought up to date by trn_session_result as well (the generation's scatter
 * report is left as generated). Errors: TRN_ERR_INVALID_ARGUMENT, TRN_ERR_NO_MEMORY (out is
 * left empty). */
trn_status trn_session_instances(const trn_session *session, trn_instances *out, trn_error *err);

/* The current surface roles (one trn_surface_role byte per sample), NULL without options.roles;
 * valid until the next call that changes the session. */
const uint8_t *trn_session_roles(const trn_session *session);

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
