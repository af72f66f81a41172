/* CLI descriptions of terrain_palette and terrain_material_set documents (inspect, info). */
#ifndef TRN_CLI_FMT_PALETTE_H
#define TRN_CLI_FMT_PALETTE_H

#include <stdbool.h>

#include "cli.h"

/* When path holds a terrain_palette or terrain_material_set document (told by content), parse
 * and describe it (text, or JSON with --format json): true with *rc the exit code (a parse
 * error is printed with its position). False, printing nothing, for any other file. */
bool cli_palette_describe(cli_ctx *ctx, const char *path, int *rc);

#endif
