/* Heightfield resampling, cropping, padding, NoData (NaN) filling and the 16-bit height scale:
 * plain functions over trn_field. */
#ifndef TERRANE_RESAMPLE_H
#define TERRANE_RESAMPLE_H

#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread safety: no function here keeps state; different fields may be processed at once.
 * Results never depend on thread count or call order (every output sample is a fixed
 * expression of its inputs, evaluated in double precision, with -ffp-contract=off). */

typedef enum trn_resample_filter {
    TRN_RESAMPLE_BILINEAR = 0,
    /* Keys' cubic convolution with a = -0.5 (Catmull-Rom): passes through the samples and
     * reproduces quadratics exactly away from the edges; the samples beyond an edge repeat
     * the edge sample (clamped). May overshoot near cliffs, as any interpolating cubic. */
    TRN_RESAMPLE_BICUBIC = 1,
    /* Area average (GDAL's -r average): each target sample is the mean of the source samples
     * under its footprint (one target spacing wide, partly covered samples weighted by their
     * overlap), so shrinking by any factor low-passes instead of aliasing. On an axis that is
     * not shrunk it interpolates linearly, as bilinear does. */
    TRN_RESAMPLE_AVERAGE = 2,
} trn_resample_filter;

/* Stable lower-case name ("bilinear", "bicubic", "average"); "unknown" for other values. */
const char *trn_resample_filter_name(trn_resample_filter filter);

/* A part of a field in sample coordinates: sample (i, j) of the field sits at x = i, z = j.
 * Fractional bounds are allowed; 0 <= x0 < x1 <= cells_x and 0 <= z0 < z1 <= cells_z. */
typedef struct trn_resample_window {
    double x0, z0, x1, z1;
} trn_resample_window;

/* Interpolate a field at fractional sample coordinates (x, z), clamped to the field. */
double trn_field_sample_bilinear(const trn_field *field, double x, double z);
double trn_field_sample_bicubic(const trn_field *field, double x, double z);

/* Resample the window of src (NULL = the whole field) onto a new field of cells_x x cells_z
 * cells (both >= 1). The grids are corner-aligned: dst sample (i, j) takes src at
 * x = x0 + (x1 - x0) * i / cells_x, z = z0 + (z1 - z0) * j / cells_z, so the window's corners
 * map to dst's corners and resampling to the same size is an exact copy. dst covers the
 * window's extent in src units: size_x = src->size_x * (x1 - x0) / src->cells_x (likewise z).
 * NaN samples spread to the dst samples that touch them (fill them first). dst is initialised
 * by the call (not disposed first) and left zeroed on failure. Errors:
 * TRN_ERR_INVALID_ARGUMENT (empty field, bad window, 0 cells, unknown filter),
 * TRN_ERR_OVERFLOW / TRN_ERR_NO_MEMORY, TRN_ERR_CANCELLED. Bilinear and bicubic downsampling
 * by a large factor point-samples the interpolant (no low-pass prefilter); TRN_RESAMPLE_AVERAGE
 * is the filter for shrinking. */
trn_status trn_field_resample(const trn_field *src, const trn_resample_window *window,
                              uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                              trn_field *dst, trn_progress_fn progress, void *user, trn_error *err);

/* Samples i0 .. i0 + samples_x - 1 (columns) and j0 .. j0 + samples_z - 1 (rows) of the grid
 * trn_field_resample(src, window, cells_x, cells_z, filter) makes, bit for bit, into out
 * (samples_x floats a row): a tile of the resample without its whole grid (each sample is a
 * fixed expression of its own position). Errors as trn_field_resample, and
 * TRN_ERR_INVALID_ARGUMENT for a part that leaves the (cells_x + 1) x (cells_z + 1) samples. */
trn_status trn_field_resample_part(const trn_field *src, const trn_resample_window *window,
                                   uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                                   uint32_t i0, uint32_t j0, uint32_t samples_x, uint32_t samples_z,
                                   float *out, trn_error *err);

/* Enlarge coarse onto cells_x x cells_z cells over the same extent (each at least coarse's) by
 * an interpolating cubic B-spline (C2: its curvature has no jumps at the coarse samples, where
 * bilinear or bicubic interpolation leave a crease along every row and column of the coarse
 * grid) sampled through a smooth warp of about half a coarse cell drawn from seed, fading to
 * nothing at the edges, so the knot lines do not line up with the grid either: the landscape
 * evolution's own upsampling. out is initialised by the call. The same coarse field and seed give
 * the same bytes on any thread count. Errors: TRN_ERR_INVALID_ARGUMENT, TRN_ERR_NO_MEMORY. */
trn_status trn_field_upsample_spline(const trn_field *coarse, uint32_t cells_x, uint32_t cells_z,
                                     uint64_t seed, trn_field *out, trn_error *err);

/* trn_field_upsample_spline by parts: make prepares the spline's coefficients over coarse (8
 * bytes a coarse sample) for a cells_x x cells_z target, sample writes samples i0 .. i0 +
 * samples_x - 1 and j0 .. j0 + samples_z - 1 of that target into out (samples_x floats a row),
 * bit for bit trn_field_upsample_spline's, so a tiled run needs no whole target grid. sample
 * only reads the surface (parts may be made at once). Errors as trn_field_upsample_spline, and
 * TRN_ERR_INVALID_ARGUMENT for a part outside the target. */
typedef struct trn_spline_surface trn_spline_surface;
trn_status trn_spline_surface_make(const trn_field *coarse, uint32_t cells_x, uint32_t cells_z,
                                   uint64_t seed, trn_spline_surface **out, trn_error *err);
trn_status trn_spline_surface_sample(const trn_spline_surface *s, uint32_t i0, uint32_t j0,
                                     uint32_t samples_x, uint32_t samples_z, float *out,
                                     trn_error *err);
/* The bytes the surface holds. */
size_t trn_spline_surface_bytes(const trn_spline_surface *s);
void trn_spline_surface_free(trn_spline_surface *s); /* NULL-safe */

/* Copy the samples x0 .. x0 + samples_x - 1 and z0 .. z0 + samples_z - 1 (each count >= 2)
 * into a new field whose size keeps src's sample spacing. quantum and quantum_base are kept.
 * TRN_ERR_INVALID_ARGUMENT when the window leaves the field. */
trn_status trn_field_crop(const trn_field *src, uint32_t x0, uint32_t z0, uint32_t samples_x,
                          uint32_t samples_z, trn_field *dst, trn_error *err);

/* Extend src by whole samples on each side (left = low x, bottom = low z, right, top) into a new
 * field with src's sample spacing: every added sample repeats the nearest edge sample, so the
 * surface runs on flat from its border with no step (a padded DEM neither gains a cliff nor
 * invents relief). quantum and quantum_base are kept. TRN_ERR_INVALID_ARGUMENT for an empty
 * field, TRN_ERR_OVERFLOW when a side would pass 2^32 - 1 samples, TRN_ERR_NO_MEMORY. */
trn_status trn_field_pad(const trn_field *src, uint32_t left, uint32_t bottom, uint32_t right,
                         uint32_t top, trn_field *dst, trn_error *err);

/* As trn_field_pad, but the added ground falls smoothly to base instead of repeating the edge:
 * an added sample d samples from the source (Euclidean, in samples) takes the nearest edge's
 * height averaged along that edge over +-d/2 samples (so the edge's ridges and valleys fade
 * out rather than run on as streaks), blended toward base by 1 - smoothstep(d / F), F the
 * width of the padding on that side: the padded border sits at base. base finite. Errors as
 * trn_field_pad, and TRN_ERR_INVALID_ARGUMENT for a base that is not finite. */
trn_status trn_field_pad_fall(const trn_field *src, uint32_t left, uint32_t bottom, uint32_t right,
                              uint32_t top, double base, trn_field *dst, trn_error *err);

/* Samples per side for the usual engine sizes: the power of two (pow2) or power of two plus
 * one (pow2plus1) nearest to samples on a log scale (ties go up), at least 2 (pow2) / 3. */
uint32_t trn_resample_nearest_pow2(uint32_t samples);
uint32_t trn_resample_nearest_pow2plus1(uint32_t samples);

/* Replace every NaN height with a smooth fill from the valid samples around it: the harmonic
 * (Laplace) interpolant with the valid samples fixed and mirrored (zero-slope) field edges,
 * solved by a multigrid pyramid (cell averages of the valid samples, coarse to fine, each level
 * started from the bilinear-upsampled coarser solution and relaxed by red-black successive
 * over-relaxation sweeps (omega 1.6) until the largest change is below 1e-7 of the valid height
 * range, at most 400 sweeps a level, fewer on levels with over 335,000 unknowns so the
 * work stays below 2^27 updates a level). A harmonic fill never leaves the range of the valid
 * samples (no spikes) and reproduces planes exactly inside holes. Deterministic (one thread, fixed
 * sweep order). *filled_out (may be NULL) receives the number of samples filled. Infinite heights
 * count as valid. Errors: TRN_ERR_FORMAT when no sample is valid (nothing to fill from),
 * TRN_ERR_NO_MEMORY, TRN_ERR_CANCELLED (the holes are NaN again: the field is as it was). */
trn_status trn_field_fill_nan(trn_field *field, uint64_t *filled_out, trn_progress_fn progress,
                              void *user, trn_error *err);

/* ---- 16-bit storage: one rule for every 16-bit output ----------------------------------
 * stored = floor((h - base) / quantum + 0.5), clamped to 0..65535 (NaN: 0); so
 * h = base + stored * quantum. A BeamNG .ter keeps quantum as maxHeight = 65536 * quantum and
 * base as the TerrainBlock's position z; Unity's RAW import as height = 65535 * quantum over
 * the terrain's position y = base. */
typedef struct trn_height_scale {
    double base;    /* metres of stored 0 */
    double quantum; /* metres per stored step, > 0 */
} trn_height_scale;

/* gdal_translate -scale: src_min metres are stored as dst_min and src_max as dst_max.
 * TRN_ERR_INVALID_ARGUMENT unless every value is finite, src_min < src_max and
 * 0 <= dst_min < dst_max <= 65535. */
trn_status trn_height_scale_from_range(double src_min, double src_max, double dst_min,
                                       double dst_max, trn_height_scale *scale, trn_error *err);

/* The default for heights that are not 16-bit values already: the lowest finite height at 0
 * and the highest at 65535. A flat (or empty, or all-NaN) set gets quantum 1/65536 (a 1 m
 * span) with every sample at 0. */
void trn_height_scale_stretch(const float *heights, size_t count, trn_height_scale *scale);

/* The stored value of one height under scale (the rule above). */
uint16_t trn_height_scale_store(const trn_height_scale *scale, double height);

/* What storing count heights under scale gives: how many distinct 16-bit values are used
 * (terracing shows when few are), the lowest and highest stored, how many samples were
 * clamped below 0 or above 65535, how many were NaN (stored as 0, not counted as levels), and
 * how many samples share their stored value with a different height (merged: the detail the
 * 16-bit output loses; 0 when every level holds one height, as a 16-bit input's own values
 * do). Large arrays are counted on OpenMP's threads (up to 8), the same counts on any number.
 * Errors: TRN_ERR_NO_MEMORY (0.3 MiB of working memory a thread); *out is zeroed first. */
typedef struct trn_height_levels {
    uint32_t levels;
    uint16_t stored_min, stored_max; /* 0, 0 when no sample is finite */
    uint64_t below, above, nan;
    uint64_t merged;
} trn_height_levels;
trn_status trn_height_levels_count(const float *heights, size_t count,
                                   const trn_height_scale *scale, trn_height_levels *out,
                                   trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
