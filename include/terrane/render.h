/* Terrain pictures from grids: hillshade (as gdaldem computes it), height, slope, label maps. */
#ifndef TERRANE_RENDER_H
#define TERRANE_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An 8-bit picture, north up: row 0 is the field's last row (z = size_z), column 0 its first
 * column (x = 0), so it shows the terrain as a map does. Channels interleaved, x fastest,
 * no row padding. pixels is malloc'd and owned by the raster. */
typedef struct trn_raster8 {
    uint32_t width, height;
    uint8_t channels; /* 1 grey, 4 RGBA */
    uint8_t *pixels;
} trn_raster8;

/* Free the pixels and zero the raster. NULL is a no-op. */
void trn_raster8_dispose(trn_raster8 *raster);

typedef struct trn_render_options {
    /* Hillshade: the light's direction in degrees clockwise from north (default 315, the
     * north-west) and height above the horizon (default 45); ignored by multidirectional. */
    double azimuth;
    double altitude;
    /* Vertical exaggeration (default 1) and the ratio of horizontal to vertical units, as
     * gdaldem -z and -s (default 1: metres both ways). Used by hillshade and slope. */
    double z_factor;
    double scale;
    /* gdaldem -multidirectional: lights from 225, 270, 315 and 360 degrees, each weighted by
     * how much the slope faces across it (USGS Open-File Report 92-422). */
    bool multidirectional;
    /* gdaldem -compute_edges (default true here, false in gdaldem): edge pixels use a 3x3
     * window completed as gdaldem does it (the missing row or column is extrapolated
     * linearly, 2a - b; along the first and last rows the neighbour column is clamped).
     * When false the edge pixels are 0 (gdaldem's nodata). */
    bool compute_edges;
    /* Height mode: the heights drawn as black and white. When height_max <= height_min the
     * field's own range is used. */
    double height_min, height_max;
} trn_render_options;

/* Fill the defaults above. */
void trn_render_options_default(trn_render_options *options);

/* All render calls: options NULL = defaults. The field needs at least one cell each way.
 * Work runs in bands of rows, each band split over OpenMP threads row by row, so the picture
 * is the same whatever the thread count; progress (may be NULL) is called after each band and
 * TRN_CANCEL returns TRN_ERR_CANCELLED. On failure *out is left untouched. Thread-safe on
 * distinct outputs; the field is only read. */

/* Grey hillshade with gdaldem's formula (Horn's 3x3 gradient over cell sizes
 * size_x / cells_x and size_z / cells_z), as gdaldem writes its Byte output:
 * 1 + 254 * cos(angle between the light and the surface normal), 1 when in shadow, rounded;
 * 0 only for nodata (edges without compute_edges, non-finite heights in the window).
 * Flat ground is 1 + 254 * sin(altitude): 181 at 45 degrees. */
trn_status trn_render_hillshade(const trn_field *field, const trn_render_options *options,
                                trn_raster8 *out, trn_progress_fn progress, void *user,
                                trn_error *err);

/* Grey slope: degrees from Horn's gradient (as gdaldem slope, with z_factor and scale),
 * 0..90 degrees drawn as 0..255 (flat black, cliffs white), rounded. */
trn_status trn_render_slope(const trn_field *field, const trn_render_options *options,
                            trn_raster8 *out, trn_progress_fn progress, void *user, trn_error *err);

/* Grey heights: height_min..height_max (or the field's range) drawn as 0..255, rounded and
 * clamped. A flat field is mid grey (128); NaN heights are 0. */
trn_status trn_render_height(const trn_field *field, const trn_render_options *options,
                             trn_raster8 *out, trn_progress_fn progress, void *user,
                             trn_error *err);

/* RGBA label map: each label in its palette colour, opaque; TRN_LABEL_NONE (255, holes) is
 * transparent black. */
trn_status trn_render_layers(const trn_labels *labels, trn_raster8 *out, trn_progress_fn progress,
                             void *user, trn_error *err);

/* The fixed label palette: 32 distinct colours (none black, none white) for labels 0..31;
 * labels 32 and up reuse them darker (70%, 50%, 85% for each next 32), so colours repeat
 * every 128 labels. Label 255 is transparent black. rgba[3] is the alpha. */
void trn_render_label_color(uint32_t label, uint8_t rgba[4]);

#ifdef __cplusplus
}
#endif

#endif
