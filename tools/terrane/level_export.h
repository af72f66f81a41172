/* Writing any loaded terrain into a BeamNG level (convert's beamng:DIR/levels/NAME output). */
#ifndef TRN_CLI_LEVEL_EXPORT_H
#define TRN_CLI_LEVEL_EXPORT_H

#include "cli.h"

#include "terrane/core.h"

/* "beamng:DIR/levels/NAME" -> the level folder (a pointer into spec), or NULL. */
const char *cli_level_spec_dir(const char *spec);

/* Heights stored from the lowest (which goes into the TerrainBlock's position z) with maxHeight
 * max_height (<= 0: the relief rounded up to whole metres); 2^k + 1 grids lose their far row
 * and column; then the level is validated. */
/* Set the position z of the TerrainBlock named name in items_path (stored 0 sits there), as ws
 * will leave the file (the level's files are staged there). */
trn_status cli_set_terrain_block_z(trn_write_set *ws, const char *items_path, const char *name,
                                   double z, trn_error *err);

int cli_write_beamng_level(cli_ctx *ctx, const cli_terrain *t, const char *level_dir,
                           double max_height);

#endif
