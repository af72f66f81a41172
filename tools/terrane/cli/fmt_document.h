/* CLI descriptions of terrane's own JSON documents for info: recipes, assets, presets, scenes. */
#ifndef TRN_CLI_FMT_DOCUMENT_H
#define TRN_CLI_FMT_DOCUMENT_H

#include <stdbool.h>

#include "cli.h"

/* When path holds a recipe, Terrain asset source, asset manifest, terrain preset or scene (told
 * by content), describe it (text, or JSON with --format json): true with *rc the exit code (a
 * parse error, or broken JSON, is printed with its line and column). A JSON document of no kind
 * terrane reads is refused naming the kinds it does read (true, *rc 1). False, printing nothing,
 * for a BeamNG .terrain.json, a palette or a material set. */
bool cli_document_describe(cli_ctx *ctx, const char *path, int *rc);

/* Whether path is a recipe to generate: a built-in preset's id (builtin://terrain/NAME), or a
 * .json file whose content is a recipe or a Terrain asset source. */
bool cli_is_recipe(const char *path);

#endif
