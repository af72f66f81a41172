/* Stationeers terrain.dat and .save in the shared CLI verbs: detection, info, load, write. */
#ifndef TRN_CLI_FMT_STATIONEERS_H
#define TRN_CLI_FMT_STATIONEERS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "terrane/stationeers.h"
#include "detect.h"

/* CLI_FORMAT_STATIONEERS_SAVE for a ZIP ("PK\3\4" and a whole 30-byte local header),
 * CLI_FORMAT_STATIONEERS_DAT for a plausible terrain.dat header (not for headerless-raster
 * extensions), else CLI_FORMAT_UNKNOWN. */
cli_format cli_stationeers_detect(const char *path, const uint8_t *head, size_t head_size);

/* `terrane info` for a terrain.dat or a .save. */
int cli_stationeers_info(cli_ctx *ctx, const char *path, cli_format format);

/* cli_load_terrain: the octree's heightfield (voxel size = --square-size, default 1 m; at most
 * --max-samples samples, checked at the header), with out->drops listing, counted, what the
 * heightfield cannot carry (veins, modified flags, node types, caves, partial voxels). */
int cli_stationeers_load(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                         cli_format format, cli_terrain *out);

/* `terrane convert IN.dat|IN.save OUT.dat`: copy the octree byte for byte (checked to parse
 * first) into out_file (OUT's staged file; out names it in messages), never through a
 * heightfield; with --format json convert's report, nothing dropped. reshaping_option names an
 * option that would change the terrain (--crop, --size...): then a usage error saying so, and
 * nothing is written. */
int cli_stationeers_copy(cli_ctx *ctx, const char *in, cli_format format, const char *out,
                         const char *out_file, const char *reshaping_option);

/* `terrane convert IN OUT.dat`: heightfield to octree with the default options or fo when not
 * NULL; without a max_depth or min_depth, MaxDepth is the smallest world size (10, 11, 12)
 * that holds the field. One file, whatever the depth (a note says when the game would split
 * it). */
int cli_stationeers_write_field(cli_ctx *ctx, const cli_terrain *t, const char *out,
                                const trn_stationeers_field_options *fo);

/* --world NAME (small, medium, large, or 1024, 2048, 4096, or lunar) as MaxDepth 10, 11, 12;
 * 0 with a usage error printed for anything else. */
uint32_t cli_stationeers_world_depth(cli_ctx *ctx, const char *name);

/* A world of MaxDepth world_depth built from t's field (fo may be NULL), written as its base
 * terrain files DIR/Terrain0.dat ... (trn_stationeers_world_part), staged in the run's set. */
int cli_stationeers_write_world(cli_ctx *ctx, const cli_terrain *t, const char *dir,
                                uint32_t world_depth, const trn_stationeers_field_options *fo);

/* A terrain.dat (or .save) of MaxDepth world_depth split into its base files in DIR, exactly
 * (no heightfield); another depth is refused. */
int cli_stationeers_split(cli_ctx *ctx, const char *in, cli_format format, const char *dir,
                          uint32_t world_depth);

/* Write world's base files DIR/Terrain0.dat ... (DIR is created). */
int cli_stationeers_write_world_files(cli_ctx *ctx, const trn_stationeers_terrain *world,
                                      const char *dir);

#endif
