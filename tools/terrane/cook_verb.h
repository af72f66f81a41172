/* The cook verb and the description of cooked payloads (terrane cook, terrane info). */
#ifndef TRN_CLI_COOK_VERB_H
#define TRN_CLI_COOK_VERB_H

#include <stdbool.h>

#include "cli.h"

/* terrane cook (cook.c). */
int cli_verb_cook(cli_ctx *ctx, int argc, char **argv);

/* When path is a regular file starting with the payload magic "TRNBIN", open it (every section
 * checked) and describe it (text, or JSON with --format json): true with *rc the exit code (a
 * damaged payload is an error naming the section and offset). False, printing nothing, for any
 * other file (fmt_payload.c). */
bool cli_payload_describe(cli_ctx *ctx, const char *path, int *rc);

/* A payload as a loaded terrain: its heights and its biome labels with their names (decoded
 * only, nothing generated; --max-samples bounds it). Returns a CLI exit code (fmt_payload.c). */
int cli_payload_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out);

#endif
