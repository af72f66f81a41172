/* Realism statistics of a heightfield: standard geomorphometry to hold terrain against real land.
 */
#ifndef TERRANE_STATS_H
#define TERRANE_STATS_H

#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which statistics to compute (bits of trn_stats_options.which). */
#define TRN_STATS_HEIGHTS 0x01u     /* relief, mean, standard deviation, hypsometric integral */
#define TRN_STATS_SLOPE 0x02u       /* slope percentiles and mean */
#define TRN_STATS_DEPRESSIONS 0x04u /* closed depressions of a priority-flood fill */
#define TRN_STATS_DRAINAGE 0x08u    /* drainage-area exceedance exponent, drainage density */
#define TRN_STATS_SPECTRUM 0x10u    /* radially averaged power spectrum slope */
#define TRN_STATS_FINGERPRINTS 0x20u /* grid fingerprints: aspects on the grid's directions,
                                      * curvature repeating with the column or row index */
#define TRN_STATS_ALL 0x3fu

typedef struct trn_stats_options {
    unsigned which;                 /* TRN_STATS_* bits (default TRN_STATS_ALL) */
    double depression_tolerance;    /* metres a fill must raise a sample to count (default 1e-3) */
    double deep_depth;              /* metres: the "deep" depression share's depth (default 1) */
    double channel_cells;           /* a channel drains at least this many cells (default 100) */
    double channel_area;            /* world units^2; > 0 replaces channel_cells (default 0) */
    double fit_min_cells;           /* exceedance fit range, cells (default 10) */
    double fit_max_cells;           /* 0 = 1% of the valid samples (default 0) */
    double spectrum_min_wavelength; /* world units; 0 = 8 times the coarser cell size */
    double spectrum_max_wavelength; /* world units; 0 = a quarter of the analysed window's
                                     * shorter side */
    double aspect_min_slope;        /* degrees: flatter samples have no aspect counted
                                     * (default 2) */
    uint32_t periodic_max_period;   /* samples: the longest period searched, >= 2 (default 32) */
    int threads;                    /* OpenMP threads; 0 = the OpenMP default */
} trn_stats_options;

/* The defaults above. */
void trn_stats_options_default(trn_stats_options *opts);

/* A least-squares line through log10-log10 points: y = slope * x + intercept. */
typedef struct trn_stats_fit {
    double slope, intercept, r2; /* NaN when fewer than 3 points fell in the range */
    double range_min, range_max; /* the fit range asked for (cells or cycles per unit) */
    uint32_t points;             /* points used */
} trn_stats_fit;

/* Every figure; those not computed (see computed) are NaN / 0. Lengths and areas are in the
 * field's world units (metres for a DEM), heights in metres, slopes in degrees. */
typedef struct trn_terrain_stats {
    unsigned computed;       /* TRN_STATS_* bits that were computed */
    uint64_t samples;        /* (cells_x + 1) * (cells_z + 1) */
    uint64_t valid_samples;  /* not NaN */
    uint64_t nodata_samples; /* NaN: skipped by every statistic */
    double cell_x, cell_z;   /* size_x / cells_x, size_z / cells_z */

    /* Heights. hypsometric_integral = (mean - min) / relief (Strahler 1952); NaN when flat. */
    double min, max, relief, mean, std_dev, hypsometric_integral;

    /* Slopes: Horn's gradient (trn_field_slope_row) at every sample whose 3x3 window holds no
     * NaN; percentiles interpolate linearly between order statistics. */
    uint64_t slope_samples;
    double slope_p10, slope_p25, slope_median, slope_p75, slope_p90, slope_mean;

    /* Depressions: samples a plain priority-flood fill (no epsilon; water leaves by the grid
     * border and through NaN) raises by more than depression_tolerance. */
    double depression_tolerance;
    uint64_t depression_samples;     /* raised samples */
    double depression_fraction;      /* raised / valid */
    uint64_t depression_count;       /* 8-connected regions of raised samples */
    double deep_depth;               /* as asked */
    double deep_depression_fraction; /* raised by more than deep_depth / valid */
    double max_depression_depth;     /* metres; 0 when none */

    /* Drainage: D8 steepest descent on the filled surface (trn_drainage_compute). */
    trn_stats_fit area_fit;    /* log10 P(A >= a) against log10 a, a in cells */
    double area_exponent;      /* -area_fit.slope: b of P(A >= a) ~ a^-b */
    uint32_t max_accumulation; /* cells draining through the busiest valid sample */
    double channel_cells;      /* the threshold used (cells) */
    uint64_t channel_samples;  /* valid samples with accumulation >= channel_cells */
    double channel_length;     /* world units: each channel sample's D8 step */
    double drainage_density;   /* channel_length / valid area, 1 / world units */

    /* Spectrum: power |F|^2 of the detrended, Hann-windowed heights radially averaged in
     * log-spaced wavenumber bins, fitted log10 P against log10 k (k in cycles per unit). */
    uint32_t spectrum_x, spectrum_z; /* the analysed window (powers of two, centred) */
    trn_stats_fit spectrum_fit;
    double spectral_slope; /* spectrum_fit.slope (real land: about -2 to -3.5) */

    /* Grid fingerprints: what a generator locked to its grid leaves and real land does not.
     * Aspects: Horn's gradient at interior samples whose 3x3 window holds no NaN and whose
     * slope is at least aspect_min_slope; the aspect is the gradient's direction. */
    double aspect_min_slope;  /* degrees, as asked */
    uint64_t aspect_samples;  /* samples with an aspect counted */
    double axis45_share;      /* share within +-5 degrees of a multiple of 45 degrees */
    double axis45_ratio;      /* axis45_share / (10 / 45), 1 by chance (real land 0.96-1.01) */
    double axis_share;        /* share within +-5 degrees of a multiple of 90 (chance 1/9) */
    /* Periodic curvature: along x, the profile of the mean |h[i-1] - 2 h[i] + h[i+1]| over the
     * rows, least-squares line removed; its periodogram's strongest value at periods 2 ..
     * periodic_max_period samples, and repeating at least 8 times across the profile,
     * against the mean strongest value of 16 fixed shuffles of the same profile (white noise
     * gives about 1, smooth real land under 1, creases that repeat with the column index far
     * more). Along z the same over the columns. NaN on an axis with fewer than 16 profile
     * points (interior columns or rows). */
    double periodic_ratio_x, periodic_ratio_z;
    double periodic_period_x, periodic_period_z; /* samples: where each strongest value is */
    double periodic_curvature_ratio;             /* the larger of the two */
    char periodic_axis;                          /* 'x' or 'z': the larger's axis; 0 if none */
} trn_terrain_stats;

/* Measure field (NaN samples are no data: skipped and counted; infinite heights are refused).
 * opts NULL = defaults. Depression and drainage statistics run trn_drainage_compute on a copy
 * whose NaN samples sit below everything, as outlets, with no sea. The spectrum analyses the
 * centred window of the largest power-of-two samples each way (a 4097^2 grid loses its last
 * row and column, 300^2 keeps the central 256^2); NaN there counts as the fitted plane
 * (zero after detrending); it needs a window of 8 samples each way and more than float
 * rounding left after detrending (a plane has none), else it is left NaN.
 * Results do not depend on the number of threads. Errors: TRN_ERR_INVALID_ARGUMENT (NULL,
 * no cells or heights, a non-positive size or option, an infinite height (named), no valid
 * sample), TRN_ERR_OVERFLOW, TRN_ERR_NO_MEMORY, TRN_ERR_CANCELLED (out untouched). Progress
 * stage "statistics". Thread-safe on distinct outputs. */
trn_status trn_terrain_stats_compute(const trn_field *field, const trn_stats_options *opts,
                                     trn_terrain_stats *out, trn_progress_fn progress, void *user,
                                     trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
