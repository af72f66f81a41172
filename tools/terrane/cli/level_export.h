/* Writing any loaded terrain into a BeamNG level (convert's beamng:DIR/levels/NAME output). */
#ifndef TRN_CLI_LEVEL_EXPORT_H
#define TRN_CLI_LEVEL_EXPORT_H

#include "cli.h"

#include "terrane/beamng_level.h"
#include "terrane/core.h"

/* "beamng:DIR/levels/NAME" -> the level folder (a pointer into spec), or NULL. */
const char *cli_level_spec_dir(const char *spec);

/* Notes on what --scaffold added to a level (none when it added nothing), and a warning when
 * the spawn point could not be put on dry ground. */
void cli_note_scaffold(cli_ctx *ctx, const trn_beamng_level_result *res);

/* Write a loaded terrain into a BeamNG level: heights stored from stored_zero (NaN: the lowest
 * height rounded down to a whole metre), which goes into the TerrainBlock's position z, with
 * maxHeight max_height (<= 0: the relief rounded up to whole metres); 2^k + 1 grids lose their
 * far row and column; then the level is validated. */
int cli_write_beamng_level(cli_ctx *ctx, const cli_terrain *t, const char *level_dir,
                           double max_height, double stored_zero);
/* The same, with scaffold adding what the level needs to open and drive (--scaffold). */
int cli_write_beamng_level_scaffold(cli_ctx *ctx, const cli_terrain *t, const char *level_dir,
                                    double max_height, double stored_zero, bool scaffold);

#endif
