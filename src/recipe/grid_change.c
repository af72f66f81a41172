/* trn_recipe_change_grid: a new size or resolution under an edit policy (refuse, keep, clear). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"
#include "terrane/layers.h"

/* "2 raise, 1 region" of the recipe's strokes. */
static void describe_strokes(const trn_recipe *r, char *out, size_t size)
{
    uint32_t counts[TRN_STROKE_KIND_COUNT] = {0};
    for (uint32_t i = 0; i < r->stroke_count; i++)
        if ((unsigned)r->strokes[i].kind < TRN_STROKE_KIND_COUNT) counts[r->strokes[i].kind]++;
    size_t at = 0;
    out[0] = '\0';
    for (int k = 0; k < TRN_STROKE_KIND_COUNT && at + 1 < size; k++) {
        if (!counts[k]) continue;
        int n = snprintf(out + at, size - at, "%s%u %s", at ? ", " : "", counts[k],
                         trn_stroke_kind_name((trn_stroke_kind)k));
        if (n < 0) break;
        at += (size_t)n;
    }
}

trn_status trn_recipe_change_grid(trn_recipe *recipe, double size_x, double size_z,
                                  uint32_t cells_x, uint32_t cells_z, trn_edit_policy policy,
                                  trn_error *err)
{
    if (!recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_change_grid: recipe is required");
    if (policy != TRN_EDITS_REFUSE && policy != TRN_EDITS_KEEP && policy != TRN_EDITS_CLEAR)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_change_grid: unknown edit policy %d", (int)policy);
    if (!trn_rcp_num_ok(TRN_NUM_SIZE, size_x) || !trn_rcp_num_ok(TRN_NUM_SIZE, size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "size: expected two numbers > 0 and <= 1e9");
    if (!trn_rcp_num_ok(TRN_NUM_CELLS, cells_x) || !trn_rcp_num_ok(TRN_NUM_CELLS, cells_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resolution: expected two whole numbers 1..65536, found %u x %u",
                             cells_x, cells_z);
    bool same = size_x == recipe->size_x && size_z == recipe->size_z &&
                cells_x == recipe->cells_x && cells_z == recipe->cells_z;
    if (!same && recipe->stroke_count) {
        char what[300];
        describe_strokes(recipe, what, sizeof what);
        if (policy == TRN_EDITS_REFUSE)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "the recipe has %u edit%s (%s); changing the grid from %u x %u "
                                 "to %u x %u cells needs a decision: --keep-edits keeps brush "
                                 "strokes at their terrain positions, --clear-edits removes "
                                 "regions, edits and exclusions",
                                 recipe->stroke_count, recipe->stroke_count == 1 ? "" : "s", what,
                                 recipe->cells_x, recipe->cells_z, cells_x, cells_z);
        if (policy == TRN_EDITS_KEEP) {
            uint32_t snapshots = 0, gx = 0, gz = 0;
            for (uint32_t i = 0; i < recipe->stroke_count; i++)
                if (recipe->strokes[i].kind == TRN_STROKE_PROTECT) {
                    if (!snapshots) {
                        gx = recipe->strokes[i].grid_cells_x;
                        gz = recipe->strokes[i].grid_cells_z;
                    }
                    snapshots++;
                }
            if (snapshots)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "%u protection snapshot%s: protection snapshots are tied to "
                                     "the %u x %u grid they were recorded on; clear them first "
                                     "(--clear-edits)",
                                     snapshots, snapshots == 1 ? "" : "s", gx, gz);
        }
    }
    /* Nothing fails from here: the recipe changes as a whole or not at all. */
    if (!same && policy == TRN_EDITS_CLEAR) {
        for (uint32_t i = 0; i < recipe->stroke_count; i++)
            trn_stroke_dispose(&recipe->strokes[i]);
        free(recipe->strokes);
        recipe->strokes = NULL;
        recipe->stroke_count = 0;
    }
    recipe->size_x = size_x;
    recipe->size_z = size_z;
    recipe->cells_x = cells_x;
    recipe->cells_z = cells_z;
    /* chunk_cells may not exceed the longer axis (or 32); shrink it with the grid. */
    uint32_t longest = cells_x > cells_z ? cells_x : cells_z;
    uint32_t chunk_max = longest > TRN_RCP_CHUNK_CELLS ? longest : TRN_RCP_CHUNK_CELLS;
    if (recipe->chunk_cells > chunk_max) recipe->chunk_cells = chunk_max;
    return TRN_OK;
}
