/* Why a point is its biome, as JSON: shared by `terrane explain` and `terrane studio`. */
#ifndef TRN_CLI_EXPLAIN_H
#define TRN_CLI_EXPLAIN_H

#include <stdbool.h>

#include "cli.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"

/* The explanation of the sample nearest terrain-local (x, z) (on the terrain: 0..size) of gen,
 * generated from recipe: "recipe" first when recipe_path is not NULL, then position, cell,
 * sample, sea level, biome, source, rule, context, water and rules. every_rule false: the
 * winning rule, or every rule when none matched (terrane explain); true: every rule with
 * "active" (a rule on a disabled biome layer is not evaluated). NULL when out of memory. */
json_t *cli_explain_json(const trn_generated *gen, const trn_recipe *recipe,
                         const char *recipe_path, double x, double z, bool every_rule);

#endif
