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

/* `terrane convert IN OUT.dat`: heightfield to octree with the default options (MaxDepth the
 * smallest that holds the field) or with fo when not NULL. */
int cli_stationeers_write_field(cli_ctx *ctx, const cli_terrain *t, const char *out,
                                const trn_stationeers_field_options *fo);

#endif
