/* A recipe's graph read once into its model (trn_recipe.model): built by the parser from the
 * document's tree, shared by copies, released with the recipe (internal). */
#ifndef TRN_RECIPE_MODEL_H
#define TRN_RECIPE_MODEL_H

#include <jansson.h>

#include "recipe/recipe_internal.h"

/* Build recipe->model's graph from v, the graph object of the document whose canonical text is
 * already in recipe->graph_json (replacing any graph the model had; the model is made when the
 * recipe has none yet). A graph that cannot be modelled (it
 * would not read back from its text) leaves model NULL, and generation then reads the text as
 * before; only running out of memory fails (TRN_ERR_NO_MEMORY). */
trn_status trn_rcp_model_build(trn_recipe *recipe, const json_t *v);

/* Keep landform index's evolution graph (moved from *graph, which is left empty) with a copy of
 * the landform's evolution text and v (its JSON object in the document) as reading that text
 * back gives it, in recipe->model (made when the recipe has none yet). Only running out of
 * memory fails (TRN_ERR_NO_MEMORY; *graph disposed). */
trn_status trn_rcp_model_keep_evolution(trn_recipe *recipe, uint32_t index, const json_t *v,
                                        trn_graph *graph);

/* Another owner of m (NULL stays NULL). */
struct trn_recipe_model *trn_rcp_model_ref(struct trn_recipe_model *m);

/* Drop one owner; the last frees it. NULL is a no-op. */
void trn_rcp_model_release(struct trn_recipe_model *m);

#endif
