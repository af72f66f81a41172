/* Unity SerializedFile (.asset) hooks for the shared verbs: info and terrain loading. */
#ifndef TRN_CLI_FMT_UNITY_H
#define TRN_CLI_FMT_UNITY_H

#include "cli.h"
#include "terrane/unity.h"

/* terrane info on a Unity asset: versions, types, objects, externals and the TerrainData
 * (resolution, scale, heights, holes, layers, alpha maps, trees). Returns a CLI exit code. */
int cli_unity_info(cli_ctx *ctx, const char *path);
/* The same with the user's --max-samples (opt may be NULL): a TerrainData over the limit is
 * "not read", with the file's other facts still described. */
int cli_unity_info_limited(cli_ctx *ctx, const char *path, const cli_load_options *opt);

/* Load the first TerrainData as a field (metres) plus, when it has splat layers, labels (the
 * dominant layer per sample; holes TRN_LABEL_NONE). opt (may be NULL): --max-samples.
 * Returns a CLI exit code. */
int cli_unity_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out);

/* The terrain's information as JSON (also used by `terrane unity info`). */
json_t *cli_unity_terrain_json(const trn_unity_terrain *t);

#endif
