/* Terrain pictures from grids: hillshade, slope, aspect and colour relief (as gdaldem computes
 * them), height ramps, material maps and their legends. */
#ifndef TERRANE_RENDER_H
#define TERRANE_RENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An 8-bit picture, north up: row 0 is the field's last row (z = size_z), column 0 its first
 * column (x = 0), so it shows the terrain as a map does. Channels interleaved, x fastest,
 * no row padding. pixels is malloc'd and owned by the raster. */
typedef struct trn_raster8 {
    uint32_t width, height;
    uint8_t channels; /* 1 grey, 3 RGB, 4 RGBA */
    uint8_t *pixels;
} trn_raster8;

/* How colour relief colours a height between two entries of its colour table (gdaldem
 * color-relief's three modes). */
typedef enum trn_color_match {
    TRN_COLOR_INTERPOLATE = 0, /* linear between the entries around it (gdaldem's default) */
    TRN_COLOR_EXACT = 1,       /* -exact_color_entry: only a height equal to an entry; others
                                * are transparent black (0, 0, 0, 0) */
    TRN_COLOR_NEAREST = 2      /* -nearest_color_entry: the closer entry's colour (a height
                                * half-way between takes the upper one) */
} trn_color_match;

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
    /* Aspect: flat ground is aspect 0 (gdaldem -zero_for_flat) instead of having none; angles
     * run counter-clockwise from east (gdaldem -trigonometric) instead of clockwise from north. */
    bool zero_for_flat;
    bool trigonometric;
    /* Colour relief: the match mode (default interpolate) and an alpha channel (gdaldem
     * -alpha: RGBA with each entry's alpha instead of RGB). */
    trn_color_match color_match;
    bool color_alpha;
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

/* Aspect, as gdaldem aspect computes it (Horn's window sums, gdaldem's edge handling): the
 * direction the slope faces in degrees clockwise from north, 0 <= a < 360 (north 0, east 90,
 * south 180, west 270; trigonometric: counter-clockwise from east). Like gdaldem it uses the
 * window's height differences alone, not the cell sizes, so with non-square cells the angle is
 * the sample grid's. Drawn 8-bit as 1 + a * 254 / 360 rounded half up (1..255, north 1,
 * east 65, south 128, west 192); 0 where there is no aspect: flat ground (gdaldem's -9999;
 * with zero_for_flat flat ground is aspect 0, drawn 1), edges without compute_edges and
 * non-finite heights in the window. gdaldem itself writes Float32 and refuses -of PNG. */
trn_status trn_render_aspect(const trn_field *field, const trn_render_options *options,
                             trn_raster8 *out, trn_progress_fn progress, void *user,
                             trn_error *err);

/* ---- colour relief ---- */

/* One line of a colour table: a height (metres, or a percentage of the field's range), or the
 * colour of heights that are not numbers ("nv"). */
typedef struct trn_color_entry {
    double height; /* metres, or 0..100 when percent */
    bool percent;  /* "50%": min + 50% of (max - min) of the field's finite heights */
    bool nodata;   /* "nv": the colour of NaN heights (height unused) */
    uint8_t rgba[4];
    uint32_t line; /* 1-based line in the table's text */
} trn_color_entry;

/* A colour table as gdaldem color-relief reads it, entries in file order. */
typedef struct trn_color_table {
    trn_color_entry *entries; /* malloc'd, owned by the table */
    size_t count;
} trn_color_table;

/* The largest colour table file trn_color_table_read accepts. */
#define TRN_COLOR_TABLE_MAX_BYTES ((size_t)1 << 20)

/* Parse a colour table (text, length bytes; file names it in errors, may be NULL). One entry a
 * line: "HEIGHT R G B [A]" or "HEIGHT NAME [A]", fields separated by spaces, tabs, commas or
 * colons; HEIGHT is a number, "P%" (0 <= P <= 100) or "nv"; R, G, B, A are whole numbers
 * 0..255 (A defaults to 255); NAME is one of gdaldem's colour names (white, black, red, green,
 * blue, yellow, magenta, cyan, aqua, grey, gray, orange, brown, purple, violet, indigo, any
 * case). Empty lines and lines starting with '#' or '/' are skipped. Errors (TRN_ERR_FORMAT,
 * line and column set): a missing or bad field, a value out of range, more than five fields,
 * a second "nv", UTF-16 text, a GMT palette (COLOR_MODEL), no entry at all. On failure *out is
 * empty. */
trn_status trn_color_table_parse(const char *text, size_t length, const char *file,
                                 trn_color_table *out, trn_error *err);
/* Read and parse a colour table file of at most TRN_COLOR_TABLE_MAX_BYTES. */
trn_status trn_color_table_read(const char *path, trn_color_table *out, trn_error *err);
/* Free the entries and zero the table. NULL is a no-op. */
void trn_color_table_dispose(trn_color_table *table);

/* Colour relief, as gdaldem color-relief computes it: the entries sorted by height (stable:
 * equal heights keep their file order); a height below the first entry takes its colour, one
 * above the last the last's; one equal to an entry takes it (the first of equal ones); between
 * two entries lo < h < hi, in the default mode, each channel is
 * (int)(0.5 + c_lo + (h - lo) / (hi - lo) * (c_hi - c_lo)), so several entries at one height
 * make a sharp step. NaN heights take the "nv" colour, or transparent black without one.
 * RGB (3 channels), or RGBA with options->color_alpha. */
trn_status trn_render_color_relief(const trn_field *field, const trn_color_table *table,
                                   const trn_render_options *options, trn_raster8 *out,
                                   trn_progress_fn progress, void *user, trn_error *err);

/* ---- material maps and legends ---- */

/* RGBA label map: each label in its colour from trn_render_layer_colors, opaque;
 * TRN_LABEL_NONE (255, holes) is transparent black. */
trn_status trn_render_layers(const trn_labels *labels, trn_raster8 *out, trn_progress_fn progress,
                             void *user, trn_error *err);

/* The fixed label palette: 32 distinct colours (none black, none white) for labels 0..31;
 * labels 32 and up reuse them darker (70%, 50%, 85% for each next 32), so colours repeat
 * every 128 labels. Label 255 is transparent black. rgba[3] is the alpha. */
void trn_render_label_color(uint32_t label, uint8_t rgba[4]);

/* The colour a material's name asks for: the first keyword of this table (in this order) that
 * starts a word of the name (at its start, after a character that is not a letter, or at a
 * lower-to-upper case change: "dirt_grass", "BeachSand"), any case:
 *   water river lake ocean sea   62 118 196    snow            244 246 250
 *   ice glacier                 200 226 240    asphalt tarmac road  58 58 62
 *   concrete pavement cobble    168 168 162    mud              92 70 50
 *   gravel pebble shingle       150 140 126    sand beach dune 218 194 142
 *   rock stone cliff boulder granite 128 128 128   dirt soil earth ground 134 96 60
 *   clay                        176 108 76     grass meadow lawn 86 152 62
 *   forest leaf leaves foliage moss 44 104 48  desert          222 200 152
 * Returns the keyword matched (a static string) with rgb filled, or NULL (rgb untouched). */
const char *trn_render_material_color(const char *name, uint8_t rgb[3]);

/* The colour of every label value 0..255 for labels: a named label whose name matches a keyword
 * takes that colour, the n-th label of the same colour shaded so they stay apart (each channel
 * c: 2nd c * 75%, 3rd c + (255 - c) * 35%, 4th c * 55%, 5th c + (255 - c) * 60%, 6th c * 88%,
 * 7th c + (255 - c) * 18%, 8th c * 40%, rounded; the 9th as the 1st, and so on); others take
 * trn_render_label_color of their value. 255 is transparent black. keywords (may be NULL) gets
 * the matched keyword, or NULL, per label. */
void trn_render_layer_colors(const trn_labels *labels, uint8_t colors[256][4],
                             const char *keywords[256]);

/* One line of a legend: a colour swatch and its text. */
typedef struct trn_legend_entry {
    const char *text; /* printable ASCII is drawn as is, other bytes as '?'; cut to 40 */
    uint8_t rgba[4];  /* alpha 0: an empty (outlined) swatch */
} trn_legend_entry;

/* A copy of picture (1, 3 or 4 channels) as RGBA with a legend to its right: on a white panel,
 * each entry's swatch (outlined in dark grey) and text in a built-in 5 x 7 pixel font, every
 * pixel drawn as an s x s block, s = picture height / 256 clamped to 1..4. The picture keeps
 * its pixels at the top left; what the panel or the picture do not cover is transparent.
 * count 0 returns the picture as RGBA. */
trn_status trn_render_legend(const trn_raster8 *picture, const trn_legend_entry *entries,
                             size_t count, trn_raster8 *out, trn_error *err);

/* ---- water ---- */

/* Draw water over a picture of ground's grid (width cells_x + 1, height cells_z + 1, north up
 * as every render call draws it; 1, 3 or 4 channels). Each wet sample of water (its wet flag;
 * dry shoreline corners stay untouched, so the shore is the coverage's own edge) is tinted
 * with its owner body's look: depth d = surface - ground height there (0 when below), shallow
 * weight s = exp(-d / absorption_distance), colour c = s * shallow_color + (1 - s) *
 * deep_color (each of R, G, B, A), then each colour channel p becomes p * (1 - c.a) + 255 *
 * c.rgb * c.a and an alpha channel a becomes 255 * (c.a + a / 255 * (1 - c.a)), rounded half
 * up. A grey picture becomes RGB (its grey in each channel) when some sample is wet; with no
 * wet sample the picture is left exactly as it was. water must be on ground's grid
 * (TRN_ERR_MISMATCH otherwise). Colours are taken as they are (sRGB values 0..1). On failure
 * the picture is untouched. Thread-safe on distinct pictures. */
trn_status trn_render_water_overlay(trn_raster8 *picture, const trn_field *ground,
                                    const trn_water *water, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
