/* Mask and height kernels: elevation and slope bands, path and polygon masks, blend and offset. */
#ifndef TERRANE_MASKS_H
#define TERRANE_MASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Conventions shared by every function here.
 * - Masks are floats in [0, 1] on the grid layout of core.h: sample (i, j) at
 *   x = i * size_x / cells_x, z = j * size_z / cells_z (computed in double exactly so), index
 *   j * (cells_x + 1) + i.
 * - Band and distance shapes: a value v inside the core gets 1; outside, at distance d beyond
 *   the core, 1 - smoothstep(d / falloff) with smoothstep(t) = t * t * (3 - 2t) on t clamped to
 *   [0, 1], so 0.5 at d = falloff / 2 and 0 from d >= falloff on. falloff 0 is a hard edge:
 *   1 in the core, 0 beyond. Everything is computed in double and rounded once to float.
 * - `out` masks are zeroed, then initialised with trn_mask_init on the grid; on failure *out
 *   is left zeroed (nothing to dispose). Dispose a result with trn_mask_dispose.
 * - Rejections are TRN_ERR_INVALID_ARGUMENT with a message naming the parameter, what was
 *   expected and what was found; out of memory is TRN_ERR_NO_MEMORY, a grid too large for the
 *   machine TRN_ERR_OVERFLOW.
 * - Rows are split between OpenMP threads; every sample is computed the same way whatever
 *   thread computes it, so results are bit-identical for any thread count. The functions keep
 *   no state and are thread-safe on distinct outputs. */

/* Elevation band: 1 where min <= h <= max; outside, d = metres to the band (min - h or
 * h - max), 1 - smoothstep(d / falloff). NaN heights give 0. Requires a field with heights,
 * finite min <= max and finite falloff >= 0. */
trn_status trn_mask_elevation(const trn_field *field, double min, double max, double falloff,
                              trn_mask *out, trn_error *err);

/* Slope band on trn_field_slope_row's degrees (Horn, edges replicated: the very slope the
 * biome rules see): 1 where min_degrees <= s <= max_degrees, outside 1 - smoothstep(d /
 * falloff_degrees) with d in degrees. min and max in [0, 90] with min <= max, falloff in
 * [0, 90]. The field needs heights, at least one cell per axis and a positive finite size. */
trn_status trn_mask_slope(const trn_field *field, double min_degrees, double max_degrees,
                          double falloff_degrees, trn_mask *out, trn_error *err);

/* Path distance mask around a polyline. points holds point_count (x, z) pairs in
 * terrain-local world units, x first: points[2k], points[2k + 1]. At least 2 points; repeated
 * points are valid (a polyline whose points all coincide is a disc around that point) and so
 * are points outside the terrain (a corridor can enter and leave the field). d is the
 * Euclidean distance from the sample to the nearest segment (consecutive points). width is the
 * HALF width: 1 for d <= width, else 1 - smoothstep((d - width) / falloff); falloff 0 gives 1
 * up to width and 0 beyond. width and falloff finite >= 0; each coordinate finite with
 * |v| <= FLT_MAX (so squared distances stay finite in double). cells_x, cells_z >= 1 and
 * size_x, size_z positive and finite.
 * Precision: distances are computed in double from the given coordinates, so a point D units
 * away puts its segment within about D * 1e-16 of where it should be (negligible unless points
 * lie very far outside the terrain).
 * Cost: samples are handled in 8x8 tiles; a tile only looks at the segments whose bounding box
 * is within width + falloff of it and no farther than the nearest one's farthest corner, so a
 * long polyline costs about (samples within reach) x (segments near each), not samples x
 * segments. 4097^2 samples, 2000 points, width 20, falloff 40: about 0.13 s on one core. */
trn_status trn_mask_path(uint32_t cells_x, uint32_t cells_z, double size_x, double size_z,
                         const double *points, uint32_t point_count, double width, double falloff,
                         trn_mask *out, trn_error *err);

/* Polygon mask. points as for trn_mask_path; the last point connects to the first, and
 * repeated points or an explicit closing point change nothing (consecutive duplicates are
 * dropped first). Even-odd fill: crossing an edge toggles inside/outside, so a
 * self-intersecting polygon has even-odd holes; either winding gives the same bytes; concave
 * polygons work. 1 inside and on the boundary; outside, 1 - smoothstep(d / falloff) with d the
 * distance to the nearest edge; falloff 0 is a hard edge.
 * "On the boundary": the sample lies within the edge's bounding box and the orientation
 * determinant of (edge, sample) is within its floating-point error bound of zero (Shewchuk's
 * orient2d filter bound), so every sample exactly on an edge or vertex counts whatever the
 * rounding of the distance, and so do samples within rounding of one. Inside: per-row
 * crossings with the half-open rule (an edge counts on row z when z_low <= z < z_high), a
 * crossing at x counting for samples strictly to its right.
 * Rejections (messages from trn_points_check): fewer than 3 points, all points collinear
 * (including all coincident), coordinates not finite or beyond the float range; and falloff
 * not finite >= 0. Precision as for trn_mask_path. Cost: per-row crossings, then the path
 * mask's tiles for samples outside (tiles wholly inside are skipped): 4097^2 samples with a
 * 20000-vertex outline take about 0.06 s at falloff 0 and 0.6 s at falloff 200 on one core. */
trn_status trn_mask_polygon(uint32_t cells_x, uint32_t cells_z, double size_x, double size_z,
                            const double *points, uint32_t point_count, double falloff,
                            trn_mask *out, trn_error *err);

/* Natural outline: in sampled at each sample's position displaced by a fractal warp, so a
 * polygon's straight edges and corners wander like a coastline or a valley side. The
 * displacement along x and along z is amplitude * (2 v - 1) for v the [0, 1] fbm of
 * trn_fractal_row (octaves, feature_size world units, roughness 0.5) of two channels of seed:
 * about +-0.4 amplitude typically and at most amplitude. Values are sampled bilinearly (grid
 * positions clamped to the grid), so they stay in the input's range. amplitude 0 copies in
 * exactly. size_x and size_z are the grid's extent in world units (the mask has only cells).
 * amplitude finite in [0, FLT_MAX], feature_size positive finite, octaves 1..16. Deterministic
 * for any thread count; out as for the other masks. */
trn_status trn_mask_warp(const trn_mask *in, double size_x, double size_z, double amplitude,
                         double feature_size, uint32_t octaves, uint64_t seed, trn_mask *out,
                         trn_error *err);

/* The path, polygon and warp over a window of a larger world (a tile, core.h): the mask has
 * cells_x x cells_z cells (the warp: in's) at w, and every sample gets exactly the value the
 * whole world's mask gives it. The warp reads its input up to amplitude world units (plus one
 * sample) away: in must cover the window grown by that much (clipped to the world) for the
 * window's samples to be exact. The window must lie inside the world
 * (TRN_ERR_INVALID_ARGUMENT otherwise). */
trn_status trn_mask_path_window(uint32_t cells_x, uint32_t cells_z, const trn_sample_window *w,
                                const double *points, uint32_t point_count, double width,
                                double falloff, trn_mask *out, trn_error *err);
trn_status trn_mask_polygon_window(uint32_t cells_x, uint32_t cells_z, const trn_sample_window *w,
                                   const double *points, uint32_t point_count, double falloff,
                                   trn_mask *out, trn_error *err);
trn_status trn_mask_warp_window(const trn_mask *in, const trn_sample_window *w, double amplitude,
                                double feature_size, uint32_t octaves, uint64_t seed,
                                trn_mask *out, trn_error *err);

/* Check a point list as the path and polygon masks do: point_count >= min_points, each
 * coordinate finite with |v| <= FLT_MAX, and, when need_noncollinear, three points that are
 * certainly not collinear (the orientation determinant of the first point, the point farthest
 * from it and some third point exceeds its floating-point error bound; points that cannot be
 * told from collinear in double are rejected). Returns TRN_OK (msg set to "") or
 * TRN_ERR_INVALID_ARGUMENT with a self-contained message starting with "points" in msg, e.g.
 * "points[3][1]: expected a finite number within the float range, found 1e+39" or "points: all
 * 4 points are collinear; a polygon needs three that are not". msg may be NULL (msg_size then
 * ignored). points may be NULL only when point_count is 0. Thread-safe. */
trn_status trn_points_check(const double *points, uint32_t point_count, uint32_t min_points,
                            bool need_noncollinear, char *msg, size_t msg_size);

/* Height blend: out[k] = a[k] + (b[k] - a[k]) * w with w = amount * m, m = mask[k] clamped to
 * [0, 1] (NaN counts as 0) or 1 when mask is NULL. Computed in double from the float inputs and
 * rounded once to float; w == 0 gives a[k] and w == 1 gives b[k] bit for bit (even where
 * b - a would round). amount in [0, 1]. out may alias a or b (each element is read before it is
 * written); a, b and out may be NULL only when count is 0. Deterministic for any thread count. */
trn_status trn_heights_blend(const float *a, const float *b, const float *mask, double amount,
                             size_t count, float *out, trn_error *err);

/* Height offset: out[k] = a[k] + offset * m, m as for trn_heights_blend, computed in double and
 * rounded once to float; a finite sum beyond the float range saturates at -FLT_MAX / FLT_MAX so
 * finite heights stay finite. offset finite with |offset| <= FLT_MAX. out may alias a. */
trn_status trn_heights_offset(const float *a, const float *mask, double offset, size_t count,
                              float *out, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
