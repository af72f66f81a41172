/* CLI hooks for GeoTIFF DEMs: info, loading, the resampling options of convert, writing. */
#ifndef TRN_CLI_FMT_GEOTIFF_H
#define TRN_CLI_FMT_GEOTIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "terrane/geotiff.h"
#include "terrane/resample.h"

/* `terrane info` for a TIFF: layout, CRS, pixel size, metres per pixel, origin, NoData and its
 * count, height range (text or --format json). A raster over the sample limit (opt may be
 * NULL: the default) is described from its tags alone, its values "not read". Returns a CLI
 * exit code. */
int cli_geotiff_info(cli_ctx *ctx, const char *path, const cli_load_options *opt);

/* Load a GeoTIFF into t: NoData filled (and reported), rows south first, size in metres
 * (projected units converted, geographic: metres per pixel at the centre latitude); the
 * georeferencing is kept in t->georef for writers. opt (may be NULL): --max-samples. */
int cli_geotiff_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *t);

/* Reshaping options of convert (any input; --window needs a georeferenced one). */
typedef struct cli_dem_options {
    trn_resample_filter filter;
    bool pow2, pow2plus1;
    bool has_crop;
    uint32_t crop[4]; /* x0, y0, w, h in input pixels, row 0 = north */
    bool has_window;
    double window[4]; /* minx, miny, maxx, maxy in CRS units */
} cli_dem_options;

/* Consume --resample NAME, --pow2, --pow2plus1, --crop X0,Y0,W,H, --window A,B,C,D at argv[*i]:
 * 1 when used (and *i advanced past a value), 0 when not one of them, -1 on a bad value
 * (message printed). */
int cli_dem_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_dem_options *o);

/* True when o (or a target size) asks for any change. */
bool cli_dem_active(const cli_dem_options *o, uint32_t size_w, uint32_t size_h);

/* Crop (pixel or world window) then resample t to size_w x size_h samples (0 = keep) or to the
 * nearest pow2 / pow2+1 per side, keeping t->georef in step. Returns a CLI exit code. */
int cli_dem_apply(cli_ctx *ctx, const cli_dem_options *o, uint32_t size_w, uint32_t size_h,
                  cli_terrain *t);

/* Write t as a float32 GeoTIFF (deflate), with t->georef when it has one. */
int cli_geotiff_write(cli_ctx *ctx, const cli_terrain *t, const char *out);

#endif
