/* Cooked payloads (*.terrain.bin) in the shared verbs: info and loading (fmt_payload.c). */
#ifndef TRN_CLI_FMT_PAYLOAD_H
#define TRN_CLI_FMT_PAYLOAD_H

#include <stdbool.h>

#include "cli.h"

/* When path is a regular file starting with the payload magic "TRNBIN", open it (every section
 * checked) and describe it (text, or JSON with --format json): true with *rc the exit code (a
 * damaged payload is an error naming the section and offset). False, printing nothing, for any
 * other file (fmt_payload.c). */
bool cli_payload_describe(cli_ctx *ctx, const char *path, int *rc);

/* A payload as a loaded terrain: its heights and its biome labels with their names (decoded
 * only, nothing generated; --max-samples bounds it). Returns a CLI exit code (fmt_payload.c). */
int cli_payload_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out);

#endif
