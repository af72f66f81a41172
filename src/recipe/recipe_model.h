/* A recipe's graph read once into its model (trn_recipe.model): built by the parser from the
 * document's tree, shared by copies, released with the recipe (internal). */
#ifndef TRN_RECIPE_MODEL_H
#define TRN_RECIPE_MODEL_H

#include <jansson.h>
#include <xxhash.h>

#include "recipe/recipe_internal.h"

/* Build recipe->model's graph from v, the graph object of the document whose canonical text is
 * already in recipe->graph_json (replacing any graph the model had; the model is made when the
 * recipe has none yet). A graph that cannot be modelled (it
 * would not read back from its text) leaves model NULL, and generation then reads the text as
 * before; only running out of memory fails (TRN_ERR_NO_MEMORY). */
trn_status trn_rcp_model_build(trn_recipe *recipe, const json_t *v);

/* v as reading its canonical text back would give it (trn_rcp_canonical_text, then json_loads):
 * object keys in sorted order, a real whose canonical text has no fraction or exponent as an
 * integer. NULL when out of memory or when that text would not read back (a whole number beyond
 * the integer range, which jansson refuses). */
json_t *trn_rcp_read_back(const json_t *v);

/* Keep landform index's evolution: its graph (moved from *graph, which is left empty) and tree
 * (trn_rcp_read_back of its object; owned from here on), with a copy of the landform's evolution
 * text, in recipe->model (made when the recipe has none yet). Only running out of memory fails
 * (TRN_ERR_NO_MEMORY; *graph and tree released). */
trn_status trn_rcp_model_keep_evolution(trn_recipe *recipe, uint32_t index, json_t *tree,
                                        trn_graph *graph);

/* A 64-bit fingerprint of everything trn_rcp_check reads in recipe (every field of the document,
 * never base_dir or model), nonzero. false when the recipe cannot be walked safely (an array
 * with a count and no storage, a count beyond its limit): such a recipe is always checked. */
bool trn_rcp_fingerprint(const trn_recipe *recipe, uint64_t *print);

/* Whether recipe is known to pass trn_rcp_check: its model holds its fingerprint. */
bool trn_rcp_model_known_valid(const trn_recipe *recipe, uint64_t *print);
/* Whether print, the recipe's fingerprint the caller has just taken, is the one that passed. */
bool trn_rcp_model_print_valid(const trn_recipe *recipe, uint64_t print);

/* Record that recipe, whose fingerprint is print, passed trn_rcp_check; nothing without a model. */
void trn_rcp_model_mark_valid(const trn_recipe *recipe, uint64_t print);

/* Copy into state the hash state kept for the recipe whose fingerprint is print (the cache key's
 * generator version and canonical text already hashed); false when none is kept for it. */
bool trn_rcp_model_key_state(const trn_recipe *recipe, uint64_t print, XXH64_state_t *state);

/* Keep state as the one of the recipe whose fingerprint is print; nothing without a model or
 * memory. */
void trn_rcp_model_keep_key_state(const trn_recipe *recipe, uint64_t print,
                                  const XXH64_state_t *state);

/* Give recipe a model when it has none (parsing gives every recipe one, to hold what it knows
 * about the recipe's validity). Only running out of memory fails (TRN_ERR_NO_MEMORY). */
trn_status trn_rcp_model_make(trn_recipe *recipe);

/* Another owner of m (NULL stays NULL). */
struct trn_recipe_model *trn_rcp_model_ref(struct trn_recipe_model *m);

/* Drop one owner; the last frees it. NULL is a no-op. */
void trn_rcp_model_release(struct trn_recipe_model *m);

#endif
