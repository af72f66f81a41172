/* Tests: terrain statistics on analytic surfaces (cone, plane, pits, a ramp of parallel
 * channels, a fractal of known spectrum), grid fingerprints (surfaces facing the grid, creases
 * repeating with the column), no data, options, threads, cancel and a real DEM. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "gen/fft.h"
#include "terrane/geotiff.h"
#include "terrane/stats.h"
#include "test.h"

#define PI 3.14159265358979323846

static double degrees(double radians)
{
    return radians * 180.0 / PI;
}

static trn_field make_field(uint32_t cells_x, uint32_t cells_z, double cell)
{
    trn_field f;
    memset(&f, 0, sizeof f);
    CHECK_OK(trn_field_init(&f, cells_x, cells_z, cells_x * cell, cells_z * cell, NULL));
    return f;
}

static trn_terrain_stats measure(const trn_field *f, const trn_stats_options *o)
{
    trn_terrain_stats s;
    memset(&s, 0, sizeof s);
    trn_error e;
    trn_status st = trn_terrain_stats_compute(f, o, &s, NULL, NULL, &e);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", e.message);
    return s;
}

/* A cone falling from its centre with gradient g: everything drains to the border. */
static void test_cone(void)
{
    const uint32_t cells = 128;
    const double g = 0.4;
    trn_field f = make_field(cells, cells, 1.0);
    const size_t nx = cells + 1u;
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++)
            f.heights[j * nx + i] = (float)(100.0 - g * hypot((double)i - 64.0, (double)j - 64.0));
    trn_terrain_stats s = measure(&f, NULL);
    CHECK_EQ_INT(s.computed, TRN_STATS_ALL);
    CHECK_EQ_INT(s.valid_samples, nx * nx);
    CHECK_EQ_INT(s.nodata_samples, 0);
    CHECK_EQ_INT(s.depression_samples, 0);
    CHECK_EQ_INT(s.depression_count, 0);
    CHECK(s.depression_fraction == 0.0);
    CHECK(s.max_depression_depth == 0.0);
    /* Away from the apex and the border Horn's gradient of a cone is its true gradient. */
    const double expect = degrees(atan(g));
    CHECK(fabs(s.slope_median - expect) < 0.05);
    CHECK(fabs(s.slope_p25 - expect) < 0.05);
    CHECK(fabs(s.slope_p75 - expect) < 0.05);
    CHECK(s.slope_p90 <= expect + 0.05);
    CHECK(s.slope_p10 < s.slope_median + 1e-12);
    CHECK(s.relief > 0.4 * 64 * sqrt(2.0) - 0.01 && s.relief < 0.4 * 64 * sqrt(2.0) + 0.01);
    CHECK(isfinite(s.spectral_slope));
    trn_field_dispose(&f);
}

/* A plane with exactly representable heights: slopes exact, HI one half. */
static void test_plane(void)
{
    const uint32_t cells = 64;
    trn_field f = make_field(cells, cells, 1.0);
    const size_t nx = cells + 1u;
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++)
            f.heights[j * nx + i] = (float)(0.5 * (double)i + 0.25 * (double)j);
    trn_terrain_stats s = measure(&f, NULL);
    const double expect = degrees(atan(hypot(0.5, 0.25)));
    CHECK(fabs(s.slope_median - expect) < 1e-9);
    CHECK(fabs(s.slope_p25 - expect) < 1e-9);
    CHECK(fabs(s.slope_p90 - expect) < 1e-9);
    /* Border samples see half the gradient across the edge (replicated samples). */
    CHECK(s.slope_p10 <= expect);
    CHECK(s.slope_mean < expect);
    CHECK(fabs(s.hypsometric_integral - 0.5) < 1e-12);
    CHECK(s.min == 0.0 && s.max == 48.0 && s.relief == 48.0);
    CHECK(fabs(s.mean - 24.0) < 1e-12);
    CHECK_EQ_INT(s.slope_samples, nx * nx);
    CHECK_EQ_INT(s.depression_samples, 0);
    /* Nothing is left after detrending: no spectrum, and no infinities or garbage. */
    CHECK(isnan(s.spectral_slope));
    CHECK_EQ_INT(s.spectrum_fit.points, 0);
    CHECK_EQ_INT(s.spectrum_x, 64);
    /* Nor does a plane whose heights are rounded to floats (only rounding is left), while a
     * ripple of a centimetre on it has one. */
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++)
            f.heights[j * nx + i] = (float)(1000.0 + 0.3 * (double)i + 0.7 * (double)j);
    s = measure(&f, NULL);
    CHECK(isnan(s.spectral_slope));
    CHECK(fabs(s.slope_median - degrees(atan(hypot(0.3, 0.7)))) < 1e-3);
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++)
            f.heights[j * nx + i] += (float)(0.01 * sin((double)i * 0.7) * cos((double)j * 0.4));
    s = measure(&f, NULL);
    CHECK(isfinite(s.spectral_slope));
    CHECK_EQ_INT(s.spectrum_z, 64);
    trn_field_dispose(&f);
}

/* Percentiles interpolate between order statistics: a 2 x 1 cell ramp has four border slopes
 * of atan(1/2) (half the gradient: replicated edges) and two of 45 degrees. */
static void test_percentiles(void)
{
    trn_field f = make_field(2, 1, 1.0);
    for (int k = 0; k < 6; k++)
        f.heights[k] = (float)(k % 3);
    trn_terrain_stats s = measure(&f, NULL);
    const double half = degrees(atan(0.5)), full = 45.0;
    CHECK_EQ_INT(s.slope_samples, 6);
    CHECK(fabs(s.slope_p10 - half) < 1e-12);
    CHECK(fabs(s.slope_p25 - half) < 1e-12);
    CHECK(fabs(s.slope_median - half) < 1e-12);
    CHECK(fabs(s.slope_p75 - (half + 0.75 * (full - half))) < 1e-12);
    CHECK(fabs(s.slope_p90 - full) < 1e-12);
    CHECK(fabs(s.slope_mean - (4 * half + 2 * full) / 6) < 1e-12);
    /* Reversed, the order statistics are the same. */
    for (int k = 0; k < 6; k++)
        f.heights[k] = (float)(2 - k % 3);
    trn_terrain_stats r = measure(&f, NULL);
    CHECK(r.slope_p75 == s.slope_p75 && r.slope_median == s.slope_median);
    trn_field_dispose(&f);
}

/* Heights, exactly: one sample at 1 among zeros. */
static void test_heights_exact(void)
{
    trn_field f = make_field(9, 9, 2.0);
    f.heights[37] = 1.0f;
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.which = TRN_STATS_HEIGHTS;
    trn_terrain_stats s = measure(&f, &o);
    CHECK_EQ_INT(s.computed, TRN_STATS_HEIGHTS);
    const double n = 100.0, mean = 1.0 / n;
    CHECK(s.mean == mean);
    CHECK(fabs(s.hypsometric_integral - mean) < 1e-15);
    CHECK(fabs(s.std_dev - sqrt(((n - 1) * mean * mean + (1 - mean) * (1 - mean)) / n)) < 1e-15);
    CHECK(s.cell_x == 2.0 && s.cell_z == 2.0);
    /* Not computed: NaN. */
    CHECK(isnan(s.slope_median) && isnan(s.depression_fraction) && isnan(s.spectral_slope));
    CHECK(isnan(s.area_exponent) && isnan(s.drainage_density));
    /* A flat field has no hypsometric integral. */
    f.heights[37] = 0.0f;
    s = measure(&f, &o);
    CHECK(isnan(s.hypsometric_integral));
    CHECK(s.relief == 0.0);
    trn_field_dispose(&f);
}

/* A paraboloid pit of radius R cells and depth d at (ci, cj) into flat ground at 0. */
static void dig_pit(trn_field *f, double ci, double cj, double radius, double depth)
{
    const size_t nx = f->cells_x + 1u;
    for (size_t j = 0; j <= f->cells_z; j++)
        for (size_t i = 0; i <= f->cells_x; i++) {
            const double r = hypot((double)i - ci, (double)j - cj);
            if (r < radius)
                f->heights[j * nx + i] = (float)(-depth * (1.0 - r * r / (radius * radius)));
        }
}

/* Samples of f deeper than tol below 0 (what the fill raises for pits in flat ground). */
static uint64_t deeper_than(const trn_field *f, double tol)
{
    uint64_t count = 0;
    const size_t n = (f->cells_x + 1u) * (size_t)(f->cells_z + 1u);
    for (size_t k = 0; k < n; k++)
        count += !isnan(f->heights[k]) && 0.0 - (double)f->heights[k] > tol;
    return count;
}

static void test_single_pit(void)
{
    trn_field f = make_field(64, 64, 1.0);
    dig_pit(&f, 32, 32, 10, 10);
    trn_terrain_stats s = measure(&f, NULL);
    CHECK_EQ_INT(s.depression_count, 1);
    CHECK_EQ_INT(s.depression_samples, deeper_than(&f, 1e-3));
    CHECK(fabs((double)s.depression_samples - PI * 100.0) < 0.05 * PI * 100.0);
    CHECK(s.max_depression_depth == 10.0);
    CHECK(s.deep_depression_fraction == (double)deeper_than(&f, 1.0) / (65.0 * 65.0));
    CHECK(s.depression_fraction == (double)s.depression_samples / (65.0 * 65.0));
    CHECK(s.depression_tolerance == 1e-3 && s.deep_depth == 1.0);
    /* The tolerance is strict: the 10 m centre counts under 9.999, not under 10. */
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.depression_tolerance = 9.999;
    s = measure(&f, &o);
    CHECK_EQ_INT(s.depression_samples, 1);
    o.depression_tolerance = 10.0;
    s = measure(&f, &o);
    CHECK_EQ_INT(s.depression_samples, 0);
    CHECK_EQ_INT(s.depression_count, 0);
    o.depression_tolerance = 1e-3;
    o.deep_depth = 10.0;
    s = measure(&f, &o);
    CHECK(s.deep_depression_fraction == 0.0);
    o.deep_depth = 9.999;
    s = measure(&f, &o);
    CHECK(s.deep_depression_fraction == 1.0 / (65.0 * 65.0));
    /* No data at the bottom: the pit drains out through it. */
    f.heights[32 * 65 + 32] = NAN;
    s = measure(&f, NULL);
    CHECK_EQ_INT(s.nodata_samples, 1);
    CHECK_EQ_INT(s.valid_samples, 65 * 65 - 1);
    CHECK_EQ_INT(s.depression_samples, 0);
    CHECK_EQ_INT(s.depression_count, 0);
    CHECK(s.min > -10.0);
    /* Horn's window touches the hole at 9 samples: their slopes are skipped. */
    CHECK_EQ_INT(s.slope_samples, 65 * 65 - 9);
    trn_field_dispose(&f);
}

/* Pits of radius 6 every 20 cells: the raised share is their area. */
static void test_field_of_pits(void)
{
    trn_field f = make_field(200, 200, 1.0);
    int pits = 0;
    for (int pj = 0; pj < 10; pj++)
        for (int pi = 0; pi < 10; pi++) {
            dig_pit(&f, 10 + 20 * pi, 10 + 20 * pj, 6, 5);
            pits++;
        }
    trn_terrain_stats s = measure(&f, NULL);
    CHECK_EQ_INT(s.depression_count, pits);
    CHECK_EQ_INT(s.depression_samples, deeper_than(&f, 1e-3));
    const double analytic = pits * PI * 36.0 / (201.0 * 201.0);
    CHECK(fabs(s.depression_fraction - analytic) < 0.05 * analytic);
    /* Deeper than 1 m of 5: within r < 6 sqrt(0.8). */
    const double deep = pits * PI * 36.0 * 0.8 / (201.0 * 201.0);
    CHECK(fabs(s.deep_depression_fraction - deep) < 0.08 * deep);
    trn_field_dispose(&f);
}

/* A ramp falling towards z = 0: every inner column is a channel, accumulation 1..100. */
static void test_parallel_channels(void)
{
    trn_field f = make_field(10, 100, 1.0);
    for (size_t j = 0; j <= 100; j++)
        for (size_t i = 0; i <= 10; i++)
            f.heights[j * 11 + i] = (float)j;
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.channel_cells = 50;
    o.fit_max_cells = 100;
    trn_terrain_stats s = measure(&f, &o);
    CHECK_EQ_INT(s.max_accumulation, 100);
    /* 9 inner columns, samples j = 0..50 (acc 100..50): 50 steps of 1 and the outlet's 1. */
    CHECK_EQ_INT(s.channel_samples, 9 * 51);
    CHECK(s.channel_cells == 50.0);
    CHECK(fabs(s.channel_length - 9 * 51.0) < 1e-9);
    CHECK(fabs(s.drainage_density - 9 * 51.0 / 1111.0) < 1e-12);
    /* The threshold is inclusive. */
    o.channel_cells = 100;
    s = measure(&f, &o);
    CHECK_EQ_INT(s.channel_samples, 9);
    o.channel_cells = 101;
    s = measure(&f, &o);
    CHECK_EQ_INT(s.channel_samples, 0);
    CHECK(s.drainage_density == 0.0);
    /* An area threshold in world units: 50 m^2 of 1 m cells. */
    o.channel_cells = 100;
    o.channel_area = 50;
    s = measure(&f, &o);
    CHECK(s.channel_cells == 50.0);
    CHECK_EQ_INT(s.channel_samples, 9 * 51);
    /* Exceedance: P(A >= a) = 9 (101 - a) / 1111 at a = 10 * 10^(k/10), ceiled, k = 0..10. */
    double x[11], y[11];
    for (int k = 0; k <= 10; k++) {
        const double a = 10.0 * pow(10.0, k / 10.0);
        x[k] = log10(a);
        y[k] = log10(9.0 * (101.0 - ceil(a * (1 - 1e-12))) / 1111.0);
    }
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int k = 0; k <= 10; k++) {
        mx += x[k] / 11;
        my += y[k] / 11;
    }
    for (int k = 0; k <= 10; k++) {
        sxx += (x[k] - mx) * (x[k] - mx);
        sxy += (x[k] - mx) * (y[k] - my);
    }
    CHECK_EQ_INT(s.area_fit.points, 11);
    CHECK(fabs(s.area_fit.slope - sxy / sxx) < 1e-12);
    CHECK(s.area_exponent == -s.area_fit.slope);
    CHECK(s.area_fit.range_min == 10.0 && s.area_fit.range_max == 100.0);
    CHECK(s.area_fit.r2 > 0.5 && s.area_fit.r2 <= 1.0);
    /* The default upper bound is 1% of the valid samples: 11.11 cells, two points only. */
    o.fit_max_cells = 0;
    s = measure(&f, &o);
    CHECK(fabs(s.area_fit.range_max - 11.11) < 1e-12);
    CHECK_EQ_INT(s.area_fit.points, 1);
    CHECK(isnan(s.area_exponent));
    trn_field_dispose(&f);
}

/* A periodic random surface with power |F|^2 ~ k^-beta (real part of an inverse FFT). */
static void fractal(trn_field *f, double beta, uint32_t seed)
{
    const size_t n = f->cells_x + 1u;
    double *re = calloc(n * n, sizeof *re), *im = calloc(n * n, sizeof *im);
    double *tr = malloc(n * sizeof *tr), *ti = malloc(n * sizeof *ti);
    uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t v = 0; v < n; v++)
        for (size_t u = 0; u < n; u++) {
            const double ku = u <= n / 2 ? (double)u : (double)u - (double)n;
            const double kv = v <= n / 2 ? (double)v : (double)v - (double)n;
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const double phase = 2.0 * PI * (double)(state >> 11) / 9007199254740992.0;
            const double k = hypot(ku, kv);
            const double amp = k > 0 ? pow(k, -beta / 2.0) : 0.0;
            re[v * n + u] = amp * cos(phase);
            im[v * n + u] = amp * sin(phase);
        }
    trn_fft_plan plan;
    CHECK(trn_fft_plan_init(&plan, n));
    for (size_t v = 0; v < n; v++)
        trn_fft_run(&plan, re + v * n, im + v * n, true);
    for (size_t u = 0; u < n; u++) {
        for (size_t v = 0; v < n; v++) {
            tr[v] = re[v * n + u];
            ti[v] = im[v * n + u];
        }
        trn_fft_run(&plan, tr, ti, true);
        for (size_t v = 0; v < n; v++)
            re[v * n + u] = tr[v];
    }
    for (size_t k = 0; k < n * n; k++)
        f->heights[k] = (float)(re[k] * 1000.0);
    trn_fft_plan_dispose(&plan);
    free(re);
    free(im);
    free(tr);
    free(ti);
}

static void test_fft(void)
{
    /* A single cosine lands in bins k and n - k with n / 2 each. */
    trn_fft_plan plan;
    CHECK(!trn_fft_plan_init(&plan, 12));
    CHECK(trn_fft_plan_init(&plan, 16));
    double re[16], im[16];
    for (int t = 0; t < 16; t++) {
        re[t] = cos(2 * PI * 3 * t / 16.0);
        im[t] = 0;
    }
    trn_fft_run(&plan, re, im, false);
    for (int k = 0; k < 16; k++) {
        const double want = (k == 3 || k == 13) ? 8.0 : 0.0;
        CHECK(fabs(re[k] - want) < 1e-12 && fabs(im[k]) < 1e-12);
    }
    trn_fft_run(&plan, re, im, true);
    for (int t = 0; t < 16; t++)
        CHECK(fabs(re[t] / 16 - cos(2 * PI * 3 * t / 16.0)) < 1e-12);
    trn_fft_plan_dispose(&plan);
}

static void test_fractal_spectrum(void)
{
    const double betas[] = {2.0, 2.5, 3.0};
    for (int b = 0; b < 3; b++) {
        trn_field f = make_field(511, 511, 10.0);
        fractal(&f, betas[b], 7u + (uint32_t)b);
        trn_stats_options o;
        trn_stats_options_default(&o);
        o.which = TRN_STATS_SPECTRUM;
        trn_terrain_stats s = measure(&f, &o);
        fprintf(stderr, "  beta %.1f: fitted %.3f over %u bins, R^2 %.4f\n", betas[b],
                s.spectral_slope, s.spectrum_fit.points, s.spectrum_fit.r2);
        CHECK(fabs(s.spectral_slope + betas[b]) < 0.1);
        CHECK(s.spectrum_fit.r2 > 0.98);
        CHECK_EQ_INT(s.spectrum_fit.points, 12);
        CHECK_EQ_INT(s.spectrum_x, 512);
        /* Default fit: wavelengths from 8 cells (80 m) to a quarter of 5120 m. */
        CHECK(fabs(s.spectrum_fit.range_max - 1.0 / 80.0) < 1e-15);
        CHECK(fabs(s.spectrum_fit.range_min - 1.0 / 1280.0) < 1e-15);
        trn_field_dispose(&f);
    }
}

static bool same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_stats(const trn_terrain_stats *a, const trn_terrain_stats *b)
{
    return a->computed == b->computed && a->valid_samples == b->valid_samples &&
           same_double(a->mean, b->mean) && same_double(a->std_dev, b->std_dev) &&
           same_double(a->slope_p10, b->slope_p10) &&
           same_double(a->slope_median, b->slope_median) &&
           same_double(a->slope_p90, b->slope_p90) && same_double(a->slope_mean, b->slope_mean) &&
           a->depression_samples == b->depression_samples &&
           a->depression_count == b->depression_count &&
           same_double(a->area_exponent, b->area_exponent) &&
           same_double(a->area_fit.r2, b->area_fit.r2) &&
           same_double(a->drainage_density, b->drainage_density) &&
           same_double(a->spectral_slope, b->spectral_slope) &&
           same_double(a->spectrum_fit.r2, b->spectrum_fit.r2) &&
           a->aspect_samples == b->aspect_samples &&
           same_double(a->axis45_ratio, b->axis45_ratio) &&
           same_double(a->axis_share, b->axis_share) &&
           same_double(a->periodic_ratio_x, b->periodic_ratio_x) &&
           same_double(a->periodic_ratio_z, b->periodic_ratio_z) &&
           same_double(a->periodic_period_x, b->periodic_period_x) &&
           same_double(a->periodic_period_z, b->periodic_period_z);
}

static void test_threads(void)
{
    trn_field f = make_field(300, 200, 5.0);
    trn_field g = make_field(255, 255, 5.0);
    fractal(&g, 2.6, 3);
    /* A non-square, non-power-of-two grid: the fractal tiled with a hole of no data. */
    for (size_t j = 0; j <= 200; j++)
        for (size_t i = 0; i <= 300; i++)
            f.heights[j * 301 + i] = g.heights[(j % 256) * 256 + i % 256];
    for (size_t j = 90; j < 110; j++)
        for (size_t i = 140; i < 170; i++)
            f.heights[j * 301 + i] = NAN;
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.threads = 1;
    trn_terrain_stats one = measure(&f, &o);
    o.threads = 2;
    trn_terrain_stats two = measure(&f, &o);
    CHECK(same_stats(&one, &two));
    CHECK_EQ_INT(one.nodata_samples, 600);
    CHECK(one.depression_count > 0);
    CHECK(isfinite(one.area_exponent) && isfinite(one.spectral_slope));
    CHECK_EQ_INT(one.spectrum_x, 256);
    CHECK_EQ_INT(one.spectrum_z, 128);
    /* Pinned figures (any change in the method moves them): IEEE arithmetic without
     * contraction gives these bits on every build. */
    CHECK(fabs(one.slope_median - 89.458311533670113) < 1e-12);
    CHECK(fabs(one.slope_p75 - 89.618932647670022) < 1e-12);
    CHECK(fabs(one.area_exponent - 0.55321168973779489) < 1e-12);
    CHECK(fabs(one.drainage_density - 0.013596083360261883) < 1e-15);
    CHECK(fabs(one.spectral_slope - -2.5636731607972658) < 1e-12);
    CHECK(fabs(one.spectrum_fit.r2 - 0.99509452810109944) < 1e-12);
    CHECK_EQ_INT(one.depression_samples, 18294);
    CHECK_EQ_INT(one.depression_count, 1819);
    trn_field_dispose(&f);
    trn_field_dispose(&g);
}

static void test_errors(void)
{
    trn_field f = make_field(8, 8, 1.0);
    trn_terrain_stats s;
    trn_error e;
    for (size_t k = 0; k < 81; k++)
        f.heights[k] = NAN;
    CHECK_STATUS(trn_terrain_stats_compute(&f, NULL, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "all 81 samples are NaN");
    f.heights[80] = 1.0f;
    CHECK_OK(trn_terrain_stats_compute(&f, NULL, &s, NULL, NULL, &e));
    CHECK_EQ_INT(s.valid_samples, 1);
    CHECK(s.relief == 0.0);
    f.heights[10] = INFINITY;
    CHECK_STATUS(trn_terrain_stats_compute(&f, NULL, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "+inf at sample (1, 1)");
    f.heights[10] = 0.0f;
    CHECK_STATUS(trn_terrain_stats_compute(NULL, NULL, &s, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_terrain_stats_compute(&f, NULL, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.depression_tolerance = -1;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "depression_tolerance");
    trn_stats_options_default(&o);
    o.fit_min_cells = 0.5;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    o.fit_min_cells = 1;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e));
    o.fit_max_cells = 1;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "MIN < MAX");
    trn_stats_options_default(&o);
    o.channel_cells = 0;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_stats_options_default(&o);
    o.which = 0x40;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_stats_options_default(&o);
    o.spectrum_min_wavelength = 10;
    o.spectrum_max_wavelength = 10;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    f.size_x = 0;
    CHECK_STATUS(trn_terrain_stats_compute(&f, NULL, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    f.size_x = 8;
    /* A window under 8 samples has no spectrum; 8 has one. */
    trn_field small = make_field(6, 6, 1.0);
    s = measure(&small, NULL);
    CHECK(isnan(s.spectral_slope));
    CHECK_EQ_INT(s.spectrum_x, 4);
    trn_field_dispose(&small);
    s = measure(&f, NULL);
    CHECK_EQ_INT(s.spectrum_x, 8);
    trn_field_dispose(&f);
}

static int cancel_at(double done, const char *stage, void *user)
{
    (void)done;
    int *calls = user;
    CHECK(strcmp(stage, "statistics") == 0);
    return ++*calls >= 3 ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_cancel(void)
{
    trn_field f = make_field(127, 127, 1.0);
    fractal(&f, 2.5, 1);
    for (int k = 0; k < 3; k++) {
        trn_terrain_stats s;
        memset(&s, 0xab, sizeof s);
        int calls = -k * 2;
        trn_error e;
        CHECK_STATUS(trn_terrain_stats_compute(&f, NULL, &s, cancel_at, &calls, &e),
                     TRN_ERR_CANCELLED);
        const unsigned char *bytes = (const unsigned char *)&s;
        bool untouched = true;
        for (size_t b = 0; b < sizeof s; b++)
            untouched = untouched && bytes[b] == 0xab;
        CHECK(untouched);
    }
    trn_field_dispose(&f);
}

/* The SRTM30 DEM of central Japan (its README gives the expected figures). */
static bool test_real_dem(void)
{
    char path[1024];
    if (!trn_test_real_path("dem_srtm30_central_japan.tif", path, sizeof path)) return false;
    trn_geotiff dem;
    trn_error e;
    CHECK_OK(trn_geotiff_read(path, NULL, &dem, NULL, NULL, &e));
    trn_field f;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, &e));
    trn_geotiff_dispose(&dem);
    trn_terrain_stats s = measure(&f, NULL);
    fprintf(stderr,
            "  SRTM30: relief %.0f m, HI %.3f, slope median %.2f, depressions %.2f%% (%llu), "
            "b %.3f (R^2 %.3f, %u points), density %.3g /km, spectrum %.2f (R^2 %.3f)\n",
            s.relief, s.hypsometric_integral, s.slope_median, 100 * s.depression_fraction,
            (unsigned long long)s.depression_count, s.area_exponent, s.area_fit.r2,
            s.area_fit.points, 1000 * s.drainage_density, s.spectral_slope, s.spectrum_fit.r2);
    CHECK_EQ_INT(s.valid_samples, 90000);
    CHECK(s.min == 0.0 && s.max == 3664.0);
    /* README: about 4% in closed pits with a plain fill; P(A >= a) ~ a^-0.64. */
    CHECK(s.depression_fraction > 0.03 && s.depression_fraction < 0.05);
    CHECK(s.area_exponent > 0.58 && s.area_exponent < 0.70);
    CHECK(s.area_fit.r2 > 0.95);
    CHECK(s.spectral_slope < -2.0 && s.spectral_slope > -3.5);
    /* Real land carries no grid fingerprint: aspects as often on the grid's directions as
     * chance, curvature that repeats with no column or row index. */
    fprintf(stderr, "  SRTM30 fingerprints: 45-degree aspects %.3f x chance, axes %.3f, periodic "
            "curvature %.3f (x %.3f, z %.3f)\n",
            s.axis45_ratio, s.axis_share, s.periodic_curvature_ratio, s.periodic_ratio_x,
            s.periodic_ratio_z);
    CHECK(s.axis45_ratio > 0.96 && s.axis45_ratio < 1.04);
    CHECK(s.axis_share > 0.10 && s.axis_share < 0.125);
    CHECK(s.periodic_curvature_ratio < 1.0);
    trn_field_dispose(&f);
    return true;
}

/* ---- grid fingerprints ---- */

static trn_terrain_stats fingerprints(const trn_field *f, int threads)
{
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.which = TRN_STATS_FINGERPRINTS;
    o.threads = threads;
    trn_terrain_stats s;
    memset(&s, 0, sizeof s);
    trn_error e;
    trn_status st = trn_terrain_stats_compute(f, &o, &s, NULL, NULL, &e);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", e.message);
    return s;
}

/* A fixed hash to [-1, 1): noise with no structure at all. */
static double white(uint32_t i, uint32_t j, uint32_t seed)
{
    uint64_t z = ((uint64_t)i << 32 | j) ^ ((uint64_t)seed * 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 4503599627370496.0 - 1.0;
}

/* A cone on a level plain: every aspect equally often, so the 45-degree bands hold their
 * chance share (a cone filling the square would face the diagonals more: its corners). */
static void test_cone_is_isotropic(void)
{
    trn_field f = make_field(400, 400, 1.0);
    const size_t nx = 401;
    for (size_t j = 0; j <= 400; j++)
        for (size_t i = 0; i <= 400; i++)
            f.heights[j * nx + i] =
                (float)(300.0 - 0.5 * fmin(190.0, hypot((double)i - 200.3, (double)j - 199.6)));
    trn_terrain_stats s = fingerprints(&f, 1);
    CHECK_EQ_INT(s.computed, TRN_STATS_FINGERPRINTS);
    fprintf(stderr, "  cone: %.4f x chance, axes %.4f\n", s.axis45_ratio, s.axis_share);
    CHECK(fabs(s.axis45_ratio - 1.0) < 0.02);
    CHECK(fabs(s.axis_share - 1.0 / 9.0) < 0.005);
    /* The plain is level: only the cone's samples have an aspect (pi 190^2 of them). */
    CHECK(s.aspect_samples > 112000u && s.aspect_samples < 115500u);
    CHECK(s.aspect_min_slope == 2.0);
    trn_field_dispose(&f);
}

/* A pyramid faces the four axes only; a diamond (rotated pyramid) the four diagonals. */
static void test_grid_facing_surfaces(void)
{
    trn_field f = make_field(128, 128, 2.0);
    const size_t nx = 129;
    for (size_t j = 0; j <= 128; j++)
        for (size_t i = 0; i <= 128; i++) {
            const double x = (double)i - 64.3, z = (double)j - 64.6;
            f.heights[j * nx + i] = (float)(100.0 - fmax(fabs(x), fabs(z)));
        }
    trn_terrain_stats s = fingerprints(&f, 1);
    /* All but the crease samples face an axis: near 45 / 10 = 4.5 times chance. */
    CHECK(s.axis45_ratio > 4.2 && s.axis45_ratio <= 4.5);
    CHECK(s.axis_share > 0.93);
    for (size_t j = 0; j <= 128; j++)
        for (size_t i = 0; i <= 128; i++) {
            const double x = (double)i - 64.3, z = (double)j - 64.6;
            f.heights[j * nx + i] = (float)(100.0 - fabs(x) - fabs(z));
        }
    s = fingerprints(&f, 1);
    CHECK(s.axis45_ratio > 4.2 && s.axis45_ratio <= 4.5);
    CHECK(s.axis_share < 0.05);
    /* A plane facing 20 degrees: none near a multiple of 45. */
    for (size_t j = 0; j <= 128; j++)
        for (size_t i = 0; i <= 128; i++)
            f.heights[j * nx + i] = (float)(0.3 * (cos(0.349) * (double)i + sin(0.349) * (double)j));
    s = fingerprints(&f, 1);
    CHECK(s.axis45_ratio == 0.0);
    CHECK(s.axis_share == 0.0);
    /* ... and facing 42 degrees: all within the +-5 band of 45. */
    for (size_t j = 0; j <= 128; j++)
        for (size_t i = 0; i <= 128; i++)
            f.heights[j * nx + i] = (float)(0.3 * (cos(0.733) * (double)i + sin(0.733) * (double)j));
    s = fingerprints(&f, 1);
    CHECK(fabs(s.axis45_ratio - 4.5) < 1e-12);
    CHECK(s.axis_share == 0.0);
    trn_field_dispose(&f);
}

/* Samples flatter than aspect_min_slope have no aspect; with none left the figures are NaN. */
static void test_min_slope(void)
{
    trn_field f = make_field(64, 64, 1.0);
    const size_t nx = 65;
    /* 1/32 rises 1.79 degrees: under the default 2 (and exact in floats: no rounding). */
    for (size_t j = 0; j <= 64; j++)
        for (size_t i = 0; i <= 64; i++) f.heights[j * nx + i] = (float)(0.03125 * (double)i);
    trn_terrain_stats s = fingerprints(&f, 1);
    CHECK_EQ_INT(s.aspect_samples, 0);
    CHECK(isnan(s.axis45_ratio) && isnan(s.axis_share));
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.which = TRN_STATS_FINGERPRINTS;
    o.aspect_min_slope = 1.0;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, NULL));
    CHECK_EQ_INT(s.aspect_samples, 63 * 63);
    CHECK(fabs(s.axis45_ratio - 4.5) < 1e-12);
    CHECK(s.axis_share == 1.0);
    /* An exact plane has a profile with nothing in it: no period stands out. */
    CHECK(s.periodic_curvature_ratio == 0.0);
    trn_field_dispose(&f);
}

/* Fractal land (power ~ k^-2.5, random phases) has no period; the same land with creases every
 * 4 columns (a coarse grid upsampled linearly) has one, and transposed along z. The creases
 * are a spike train of |curvature|, equally strong at periods 4 and 2. */
static void test_periodic_creases(void)
{
    const uint32_t cells = 255;
    const size_t nx = cells + 1u;
    trn_field f = make_field(cells, cells, 5.0);
    fractal(&f, 2.5, 11);
    trn_terrain_stats s = fingerprints(&f, 1);
    fprintf(stderr, "  fractal land: periodic %.3f (x %.3f at %.3g, z %.3f at %.3g)\n",
            s.periodic_curvature_ratio, s.periodic_ratio_x, s.periodic_period_x,
            s.periodic_ratio_z, s.periodic_period_z);
    CHECK(s.periodic_curvature_ratio < 1.5);
    const double smooth_ratio = s.periodic_curvature_ratio;
    /* Linear interpolation between every fourth column: a crease at each knot. */
    trn_field g = make_field(cells, cells, 5.0);
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++) {
            const size_t k0 = i / 4 * 4, k1 = k0 + 4 <= cells ? k0 + 4 : k0;
            const double t = k1 > k0 ? (double)(i - k0) / 4.0 : 0.0;
            g.heights[j * nx + i] =
                (float)((1.0 - t) * f.heights[j * nx + k0] + t * f.heights[j * nx + k1]);
        }
    s = fingerprints(&g, 1);
    fprintf(stderr, "  creased every 4 columns: periodic %.3f (x %.3f at %.3g, z %.3f)\n",
            s.periodic_curvature_ratio, s.periodic_ratio_x, s.periodic_period_x,
            s.periodic_ratio_z);
    CHECK(s.periodic_curvature_ratio > 10.0);
    CHECK(s.periodic_curvature_ratio > 5.0 * smooth_ratio);
    CHECK(s.periodic_axis == 'x');
    CHECK(fabs(s.periodic_period_x - 4.0) < 0.05 || fabs(s.periodic_period_x - 2.0) < 0.02);
    CHECK(s.periodic_ratio_z < 2.0);
    /* Transposed: the creases repeat along z. */
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++) f.heights[i * nx + j] = g.heights[j * nx + i];
    s = fingerprints(&f, 1);
    CHECK(s.periodic_axis == 'z');
    CHECK(fabs(s.periodic_period_z - 4.0) < 0.05 || fabs(s.periodic_period_z - 2.0) < 0.02);
    CHECK(s.periodic_ratio_z > 10.0 && s.periodic_ratio_x < 2.0);
    trn_field_dispose(&f);
    trn_field_dispose(&g);
}

/* Heights of pure white noise: the profile is its own shuffle, the ratio near 1. */
static void test_white_noise(void)
{
    const uint32_t cells = 300;
    trn_field f = make_field(cells, cells, 1.0);
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f.heights[(size_t)j * (cells + 1u) + i] = (float)(10.0 * white(i, j, 5));
    trn_terrain_stats s = fingerprints(&f, 1);
    fprintf(stderr, "  white noise: periodic x %.3f, z %.3f; 45-degree %.3f\n",
            s.periodic_ratio_x, s.periodic_ratio_z, s.axis45_ratio);
    CHECK(s.periodic_ratio_x > 0.6 && s.periodic_ratio_x < 1.6);
    CHECK(s.periodic_ratio_z > 0.6 && s.periodic_ratio_z < 1.6);
    CHECK(fabs(s.axis45_ratio - 1.0) < 0.08);
    trn_field_dispose(&f);
}

/* The longest period searched: |curvature| of a sine of 80 columns repeats every 40, found
 * only when asked (up to 32 only its weaker harmonic at 20 shows). */
static void test_max_period(void)
{
    const uint32_t cells = 400;
    const size_t nx = cells + 1u;
    trn_field f = make_field(cells, cells, 1.0);
    for (size_t j = 0; j <= cells; j++)
        for (size_t i = 0; i <= cells; i++)
            f.heights[j * nx + i] = (float)(20.0 * sin(2.0 * 3.14159265358979 * (double)i / 80.0) +
                                            0.01 * white((uint32_t)i, (uint32_t)j, 2));
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.which = TRN_STATS_FINGERPRINTS;
    trn_terrain_stats s;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, NULL));
    const double within_32 = s.periodic_ratio_x, period_32 = s.periodic_period_x;
    o.periodic_max_period = 48;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, NULL));
    fprintf(stderr, "  |curvature| every 40 columns: %.3f at %.3g up to 32, %.3f at %.3g up to 48\n",
            within_32, period_32, s.periodic_ratio_x, s.periodic_period_x);
    CHECK(fabs(period_32 - 20.0) < 0.5);
    CHECK(fabs(s.periodic_period_x - 40.0) < 0.5);
    CHECK(s.periodic_ratio_x > 5.0 * within_32);
    trn_field_dispose(&f);
}

/* No data: windows with NaN are skipped; a grid too small for a profile gives NaN. */
static void test_nodata_and_small(void)
{
    trn_field f = make_field(255, 255, 1.0);
    fractal(&f, 2.5, 3);
    trn_terrain_stats whole = fingerprints(&f, 1);
    for (size_t j = 50; j < 80; j++)
        for (size_t i = 60; i < 100; i++) f.heights[j * 256 + i] = NAN;
    trn_terrain_stats holed = fingerprints(&f, 1);
    CHECK(holed.aspect_samples < whole.aspect_samples);
    CHECK(isfinite(holed.axis45_ratio) && isfinite(holed.periodic_curvature_ratio));
    /* A whole row of no data: that row leaves no point in the z profile, others stay. */
    for (size_t i = 0; i <= 255; i++) f.heights[120 * 256 + i] = NAN;
    trn_terrain_stats row = fingerprints(&f, 1);
    CHECK(isfinite(row.periodic_ratio_z));
    trn_field_dispose(&f);

    trn_field g = make_field(16, 15, 1.0);
    for (size_t k = 0; k < 17 * 16; k++) g.heights[k] = (float)white((uint32_t)k, 1, 1);
    trn_terrain_stats s = fingerprints(&g, 1);
    /* 15 and 14 interior columns and rows: fewer than the 16 profile points needed for a
     * period of 2 to repeat 8 times. */
    CHECK(isnan(s.periodic_ratio_x) && isnan(s.periodic_ratio_z));
    CHECK(isnan(s.periodic_curvature_ratio));
    CHECK(s.periodic_axis == 0);
    trn_field_dispose(&g);
    g = make_field(17, 15, 1.0);
    for (size_t k = 0; k < 18 * 16; k++) g.heights[k] = (float)white((uint32_t)k, 1, 1);
    s = fingerprints(&g, 1);
    CHECK(isfinite(s.periodic_ratio_x) && isnan(s.periodic_ratio_z));
    CHECK(s.periodic_axis == 'x');
    /* Only period 2 repeats 8 times in 16 points. */
    CHECK(s.periodic_period_x == 2.0);
    trn_field_dispose(&g);
}

static void test_threads_and_options(void)
{
    trn_field g = make_field(255, 255, 3.0);
    fractal(&g, 2.3, 9);
    /* Not square: the fractal cropped to 231 x 207 cells. */
    trn_field f = make_field(231, 207, 3.0);
    for (size_t j = 0; j <= 207; j++)
        for (size_t i = 0; i <= 231; i++) f.heights[j * 232 + i] = g.heights[j * 256 + i];
    trn_field_dispose(&g);
    trn_terrain_stats one = fingerprints(&f, 1), three = fingerprints(&f, 3);
    CHECK(memcmp(&one.axis45_ratio, &three.axis45_ratio, sizeof(double)) == 0);
    CHECK(memcmp(&one.periodic_ratio_x, &three.periodic_ratio_x, sizeof(double)) == 0);
    CHECK(memcmp(&one.periodic_ratio_z, &three.periodic_ratio_z, sizeof(double)) == 0);
    CHECK(one.aspect_samples == three.aspect_samples);
    trn_stats_options o;
    trn_stats_options_default(&o);
    trn_terrain_stats s;
    trn_error e;
    o.aspect_min_slope = 90.0;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "aspect_min_slope");
    o.aspect_min_slope = -1.0;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    o.aspect_min_slope = NAN;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_stats_options_default(&o);
    o.periodic_max_period = 1;
    CHECK_STATUS(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "periodic_max_period");
    o.periodic_max_period = 2;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e));
    /* Only the Nyquist bin: period exactly 2 on both axes. */
    CHECK(s.periodic_period_x == 2.0 && s.periodic_period_z == 2.0);
    /* Not asked: left NaN. */
    o.which = TRN_STATS_HEIGHTS;
    CHECK_OK(trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, &e));
    CHECK(isnan(s.axis45_ratio) && isnan(s.periodic_curvature_ratio));
    CHECK(s.periodic_axis == 0);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_fft);
    RUN(test_cone);
    RUN(test_plane);
    RUN(test_percentiles);
    RUN(test_heights_exact);
    RUN(test_single_pit);
    RUN(test_field_of_pits);
    RUN(test_parallel_channels);
    RUN(test_fractal_spectrum);
    RUN(test_threads);
    RUN(test_errors);
    RUN(test_cancel);
    RUN(test_cone_is_isotropic);
    RUN(test_grid_facing_surfaces);
    RUN(test_min_slope);
    RUN(test_periodic_creases);
    RUN(test_white_noise);
    RUN(test_max_period);
    RUN(test_nodata_and_small);
    RUN(test_threads_and_options);
    if (!test_real_dem()) {
        if (trn_test_failures) return trn_test_finish();
        fprintf(stderr, "skip test_real_dem: ../shared/testdata/real is absent\n");
    }
    return trn_test_finish();
}
