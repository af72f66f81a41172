/* Terrain presets: the built-in set, terrain_preset assets of a project, and applying one. */
#ifndef TERRANE_PRESETS_H
#define TERRANE_PRESETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The manifest "type" of a preset asset (NAME.asset.json) and the source document's
 * format_version this build reads. */
#define TRN_PRESET_ASSET_TYPE "terrain_preset"
#define TRN_PRESET_FORMAT_VERSION 1u

/* What a preset sets (bits of trn_preset.fields). Keys a preset leaves out keep the recipe's
 * own values when applied. */
enum {
    TRN_PRESET_SIZE = 1u << 0,
    TRN_PRESET_CELLS_X = 1u << 1,
    TRN_PRESET_CELLS_Z = 1u << 2,
    TRN_PRESET_CHUNK_CELLS = 1u << 3,
    TRN_PRESET_SEED = 1u << 4,
    TRN_PRESET_DEFAULT_BIOME = 1u << 5,
    TRN_PRESET_BIOMES = 1u << 6,
    TRN_PRESET_LAYERS = 1u << 7,
    TRN_PRESET_RULES = 1u << 8,
    TRN_PRESET_GRAPH = 1u << 9,
    /* Built-in presets only (project presets describe landforms with a graph): landforms,
     * default_landform and sea_level (set, or removed when the preset has none). */
    TRN_PRESET_LANDFORMS = 1u << 10,
    TRN_PRESET_SEA_LEVEL = 1u << 11,
};

typedef struct trn_preset {
    char *id;          /* "builtin://terrain/NAME" or "asset://PATH" */
    char *name;        /* display name */
    char *label;       /* NULL when absent */
    char *description; /* NULL when absent */
    double version;    /* stamped as the recipe's preset_version */
    uint32_t fields;   /* TRN_PRESET_* */
    /* The values of the fields it sets, parsed with the recipe's grammar; the rest is zero.
     * cells_x / cells_z sit in recipe.cells_x / recipe.cells_z. */
    trn_recipe recipe;
    char *fields_json; /* the same fields as canonical compact JSON (internal to merging) */
} trn_preset;

void trn_preset_dispose(trn_preset *preset);
void trn_presets_free(trn_preset *presets, uint32_t count);

/* The eight built-in presets, in a fixed order: flat-building-site, desert-dunes,
 * rolling-hills, mountain-range, basin, plateau, coastal-island, drainage-river. */
uint32_t trn_builtin_preset_count(void);
/* "builtin://terrain/NAME", or NULL past the end. */
const char *trn_builtin_preset_id(uint32_t index);
/* The embedded recipe text of a built-in preset (a bare recipe, read by trn_recipe_parse), or
 * NULL for an unknown id. Static. */
const char *trn_builtin_preset_text(const char *id);
/* Load a built-in preset; TRN_ERR_NOT_FOUND for an unknown id (the message lists them). */
trn_status trn_builtin_preset_load(const char *id, trn_preset *preset, trn_error *err);
/* A recipe from a file (as trn_recipe_read) or, when source starts with "builtin://", the
 * built-in preset of that id as a whole recipe (its own world, grid, seed and graph);
 * TRN_ERR_NOT_FOUND for an unknown id, the message listing them. */
trn_status trn_recipe_read_source(const char *source, trn_recipe *recipe,
                                  trn_document_kind *kind_out, trn_error *err);

/* Parse a terrain_preset source document: {"format_version": 1, "name": ..., "label"?,
 * "description"?, and any of "size", "cells_x", "cells_z", "chunk_cells", "seed",
 * "default_biome", "biomes", "layers", "rules", "graph"}. The recipe keys use the recipe's
 * grammar and rejections; every error carries the JSON path and position. id is stored. */
trn_status trn_preset_parse(const char *text, size_t size, const char *path, const char *id,
                            trn_preset *preset, trn_error *err);

/* Every terrain_preset asset of a project folder: each NAME.asset.json manifest (searched
 * recursively, hidden folders skipped) whose settings.content_type (the DataAsset form) or, in
 * the older form, "type" is TRN_PRESET_ASSET_TYPE names its "source" beside it; its id is "asset://" + the manifest's path relative to the project
 * without ".asset.json". Sorted by id. A project without any gives *count 0 and TRN_OK. */
trn_status trn_project_presets_load(const char *project_dir, trn_preset **presets, uint32_t *count,
                                    trn_error *err);
/* A built-in id, or a project preset's asset id (project_dir may be NULL for built-ins). */
trn_status trn_preset_find(const char *project_dir, const char *id, trn_preset *preset,
                           trn_error *err);

/* Merge a preset into a recipe once and stamp preset_id and preset_version. regions, edits
 * and exclusions always stay the recipe's own. A grid change (size or cells) goes through
 * trn_recipe_change_grid under policy (protection snapshots refuse; radial strokes need KEEP
 * or CLEAR). The merged recipe is validated as a whole (a region naming a biome the preset
 * lacks is refused, naming both). On failure the recipe is unchanged. */
trn_status trn_recipe_apply_preset(trn_recipe *recipe, const trn_preset *preset,
                                   trn_edit_policy policy, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
