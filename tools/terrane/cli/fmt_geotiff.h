/* CLI hooks for GeoTIFF DEMs: info, loading, the resampling options of convert, writing. */
#ifndef TRN_CLI_FMT_GEOTIFF_H
#define TRN_CLI_FMT_GEOTIFF_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"
#include "terrane/geotiff.h"
#include "terrane/resample.h"

struct cli_scale_options;

/* `terrane info` for a TIFF: layout, CRS, pixel size, metres per pixel, origin, NoData and its
 * count, height range, the 16-bit levels a conversion would use under scale (may be NULL)
 * and --max-height (text or --format json). A raster over the sample limit (opt may be
 * NULL: the default) is described from its tags alone, its values "not read". Returns a CLI
 * exit code. */
int cli_geotiff_info(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                     const struct cli_scale_options *scale);

/* Load a GeoTIFF into t: NoData filled (and reported), rows south first, size in metres
 * (projected units converted, geographic: metres per pixel at the centre latitude); the
 * georeferencing is kept in t->georef for writers. opt (may be NULL): --max-samples. */
int cli_geotiff_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *t);

/* How a reshape that changes the aspect gets there (--fit). */
typedef enum cli_fit {
    CLI_FIT_DEFAULT = 0, /* crop, noted: the real ground only */
    CLI_FIT_PAD,         /* grow the short side, data centred, falling smoothly to a base */
    CLI_FIT_CROP,        /* keep the centre of the long side */
    CLI_FIT_STRETCH,     /* resample each side on its own: the cells stop being square */
} cli_fit;

/* Which CRS a georeferenced input ends in (--crs). */
typedef enum cli_crs_mode {
    CLI_CRS_DEFAULT = 0, /* a geographic DEM is reprojected to the UTM zone of its centre unless
                            the output keeps it (a GeoTIFF: dem.keeps_crs) */
    CLI_CRS_UTM,         /* --crs utm: the centre's UTM zone, whatever the input's CRS */
    CLI_CRS_EPSG,        /* --crs EPSG:N */
    CLI_CRS_KEEP,        /* --crs keep: no reprojection (degrees become metres at the centre) */
} cli_crs_mode;

/* Reshaping options of convert (any input; --window needs a georeferenced one). */
typedef struct cli_dem_options {
    cli_crs_mode crs;
    uint32_t crs_epsg; /* --crs EPSG:N */
    double cell;       /* --cell M: the reprojected grid's cell in metres; 0 = the source's */
    bool keeps_crs;    /* set by the caller: the output stores a geographic CRS (.tif) */
    /* Set by the caller (may be NULL): filled when a reprojection runs (target_epsg 0 when
     * none did), for --format json reports. */
    trn_geotiff_reproject_result *reprojected;
    trn_resample_filter filter;
    bool pow2, pow2plus1; /* a square of 2^n (2^n + 1) samples a side */
    bool has_crop;
    uint32_t crop[4]; /* x0, y0, w, h in input pixels, row 0 = north */
    bool has_window;
    double window[4]; /* minx, miny, maxx, maxy in CRS units */
    cli_fit fit;
    bool has_pad_height;
    double pad_height; /* --pad-height: where --fit pad's ground falls to (default the lowest) */
    bool square; /* set by the caller: the output must be square (.ter, beamng:) */
} cli_dem_options;

/* Consume --resample NAME, --pow2, --pow2plus1, --crop X0,Y0,W,H, --window A,B,C,D,
 * --fit pad|crop|stretch, --pad-height H at argv[*i]: 1 when used (and *i advanced past a value), 0 when not one
 * of them, -1 on a bad value (message printed). */
int cli_dem_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_dem_options *o);

/* Consume --crs EPSG:N|utm|keep or --cell M at argv[*i] (as cli_dem_option does; verbs that
 * take no other reshaping option use this alone). */
int cli_crs_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_dem_options *o);

/* Reproject t (a georeferenced DEM) as o asks, or a geographic one by default unless
 * o->keeps_crs: PROJ onto square cells of a projected CRS, the largest full rectangle of the
 * footprint kept (trn_geotiff_reproject), labels dropped, t->georef the new CRS; one note says
 * what was done. Nothing happens when nothing is asked and the input is not geographic.
 * Returns a CLI exit code. */
int cli_dem_reproject(cli_ctx *ctx, const cli_dem_options *o, cli_terrain *t);

/* True when o (or a target size) asks for any change. */
bool cli_dem_active(const cli_dem_options *o, uint32_t size_w, uint32_t size_h);

/* Crop (pixel or world window), reproject (cli_dem_reproject), then bring t to the target shape: size_w x size_h samples
 * (0 = keep), or a square of the nearest pow2 / pow2+1 side, or a square when o->square. A
 * target of another aspect is reached by o->fit (pad by default: the cells stay square and the
 * metres true; crop; stretch with a note giving the cell sizes) before resampling. t->georef,
 * labels (kept through pad and crop, dropped by resampling, and listed in t->drops) and a
 * 16-bit input's scale (field quantum) follow. Returns a CLI exit code. */
int cli_dem_apply(cli_ctx *ctx, const cli_dem_options *o, uint32_t size_w, uint32_t size_h,
                  cli_terrain *t);

/* ---- The 16-bit height scale (docs/dem.md) ---------------------------------------------- */

/* --scale SRC_MIN SRC_MAX [DST_MIN DST_MAX] and --height-range LO,HI. */
typedef struct cli_scale_options {
    bool has_scale;
    double scale[4]; /* src min, src max, dst min, dst max (default 0, 65535) */
    bool has_range;
    double range[2];
} cli_scale_options;

/* Consume --scale (two or four numbers) or --height-range at argv[*i]: 1 when used, 0 when not
 * one of them, -1 on a bad value (message printed). */
int cli_scale_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_scale_options *o);
/* The option that sets the scale ("--scale", "--height-range"), or NULL. */
const char *cli_scale_given(const cli_scale_options *o);

/* The one rule for every 16-bit output: --scale, else --height-range, else max_height > 0
 * (--max-height: 0 m stored as 0, quantum max_height / 65536, BeamNG's maxHeight), else the
 * field's own 16-bit scale (a 16-bit input keeps its stored values), else the field's lowest
 * height at 0 and its highest at 65535. *how (may be NULL) names the case for messages.
 * Returns a CLI exit code (a bad --scale is a usage error). */
int cli_scale_choose(cli_ctx *ctx, const cli_scale_options *o, double max_height,
                     const trn_field *field, trn_height_scale *scale, const char **how);

/* `info` for float heights: the 16-bit levels a conversion would use under the same rule
 * (o and max_height may be empty: lowest to highest), as a "levels:" line and a warning when
 * they are few (cli_few_levels), or into json ("levels_16bit", "few_levels") when json is not
 * NULL. NaN heights (NoData) are not counted. Returns a CLI exit code. */
int cli_info_levels(cli_ctx *ctx, const float *heights, size_t count, const cli_scale_options *o,
                    double max_height, json_t *json);

/* Terraces are warned about when 2 to CLI_FEW_LEVELS - 1 distinct levels hold a field of at
 * least CLI_FEW_LEVELS finite samples (a smaller field cannot use more levels than it has
 * samples; a flat one needs one). */
#define CLI_FEW_LEVELS 4096u
bool cli_few_levels(const trn_height_levels *levels, size_t samples);

/* Count the levels field uses under scale into *levels and warn (stderr, unless quiet) about
 * clamped samples and about few levels (cli_few_levels). out names the output. Returns a CLI
 * exit code. */
int cli_scale_report(cli_ctx *ctx, const char *out, const trn_field *field,
                     const trn_height_scale *scale, trn_height_levels *levels);

/* Warn that path is an 8-bit heightmap (256 levels: terraces), giving the step in metres for
 * max_height (0 = the default 2048). */
void cli_warn_8bit(cli_ctx *ctx, const char *path, double max_height);
/* The same for a GeoTIFF of 8-bit integer samples: 256 height values at most. */
void cli_warn_8bit_dem(cli_ctx *ctx, const char *path);

/* The JSON object {"base", "quantum", "rule", "levels", "stored_min", "stored_max",
 * "clamped_low", "clamped_high"} of a 16-bit output. */
json_t *cli_scale_json(const trn_height_scale *scale, const char *how,
                       const trn_height_levels *levels);

/* Write t as a float32 GeoTIFF (deflate): with t->georef when it has one; else no CRS (no
 * GeoKeyDirectory) and, when spacing_known (the input states its sample spacing, or
 * --square-size did), the spacing as ModelPixelScale with a local tiepoint; otherwise no
 * georeferencing tags at all (readers assume one unit per pixel, as terrane did). */
int cli_geotiff_write(cli_ctx *ctx, const cli_terrain *t, const char *out, bool spacing_known);

#endif
