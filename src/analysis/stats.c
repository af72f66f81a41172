/* Realism statistics: heights, slopes, closed depressions, drainage areas and the spectrum. */
#include "terrane/stats.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "core/rows.h"
#include "gen/fft.h"
#include "analysis/stats_internal.h"
#include "terrane/drainage.h"
#include "terrane/generate.h"
#include "gen/d8.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define STAGE "statistics"
/* Log-spaced points per decade for the exceedance curve and the spectrum's wavenumber bins. */
#define POINTS_PER_DECADE 10
/* Columns gathered together for the column FFTs: whole cache lines from each row. */
#define COLUMN_BLOCK 8u

static int default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

void trn_stats_options_default(trn_stats_options *opts)
{
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->which = TRN_STATS_ALL;
    opts->depression_tolerance = 1e-3;
    opts->deep_depth = 1.0;
    opts->channel_cells = 100.0;
    opts->channel_area = 0.0;
    opts->fit_min_cells = 10.0;
    opts->fit_max_cells = 0.0;
    opts->spectrum_min_wavelength = 0.0;
    opts->spectrum_max_wavelength = 0.0;
    opts->aspect_min_slope = 2.0;
    opts->periodic_max_period = 32;
    opts->threads = 0;
}

static bool finite_at_least(double v, double lo)
{
    return isfinite(v) && v >= lo;
}

static trn_status check_options(const trn_stats_options *o, trn_error *err)
{
    const char *bad = NULL;
    double value = 0.0;
    if (o->which & ~TRN_STATS_ALL)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected 'which' bits within 0x%x, found 0x%x",
                             TRN_STATS_ALL, o->which);
    if (!finite_at_least(o->depression_tolerance, 0.0))
        bad = "depression_tolerance", value = o->depression_tolerance;
    else if (!finite_at_least(o->deep_depth, 0.0))
        bad = "deep_depth", value = o->deep_depth;
    else if (!(isfinite(o->channel_cells) && o->channel_cells > 0.0))
        bad = "channel_cells", value = o->channel_cells;
    else if (!finite_at_least(o->channel_area, 0.0))
        bad = "channel_area", value = o->channel_area;
    else if (!finite_at_least(o->fit_min_cells, 1.0))
        bad = "fit_min_cells (at least 1)", value = o->fit_min_cells;
    else if (!finite_at_least(o->fit_max_cells, 0.0))
        bad = "fit_max_cells", value = o->fit_max_cells;
    else if (!finite_at_least(o->spectrum_min_wavelength, 0.0))
        bad = "spectrum_min_wavelength", value = o->spectrum_min_wavelength;
    else if (!finite_at_least(o->spectrum_max_wavelength, 0.0))
        bad = "spectrum_max_wavelength", value = o->spectrum_max_wavelength;
    else if (!(isfinite(o->aspect_min_slope) && o->aspect_min_slope >= 0.0 &&
               o->aspect_min_slope < 90.0))
        bad = "aspect_min_slope (degrees below 90)", value = o->aspect_min_slope;
    else if (o->threads < 0)
        bad = "threads", value = o->threads;
    if (bad)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a finite non-negative %s, found %g", bad, value);
    if (o->periodic_max_period < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a periodic_max_period of at least 2 samples, "
                             "found %u",
                             o->periodic_max_period);
    if (o->fit_max_cells > 0.0 && o->fit_max_cells <= o->fit_min_cells)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a fit range MIN < MAX, found %g, %g",
                             o->fit_min_cells, o->fit_max_cells);
    if (o->spectrum_min_wavelength > 0.0 && o->spectrum_max_wavelength > 0.0 &&
        o->spectrum_max_wavelength <= o->spectrum_min_wavelength)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected spectrum wavelengths MIN < MAX, found %g, %g",
                             o->spectrum_min_wavelength, o->spectrum_max_wavelength);
    return TRN_OK;
}

/* ---- fits and order statistics ---- */

/* Least squares y = slope x + intercept over m points; NaN figures below 3 points. */
static void fit_line(const double *x, const double *y, uint32_t m, trn_stats_fit *f)
{
    f->points = m;
    f->slope = f->intercept = f->r2 = NAN;
    if (m < 3) return;
    double mx = 0.0, my = 0.0;
    for (uint32_t k = 0; k < m; k++) {
        mx += x[k];
        my += y[k];
    }
    mx /= m;
    my /= m;
    double sxx = 0.0, sxy = 0.0, syy = 0.0;
    for (uint32_t k = 0; k < m; k++) {
        const double dx = x[k] - mx, dy = y[k] - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    if (!(sxx > 0.0)) return;
    f->slope = sxy / sxx;
    f->intercept = my - f->slope * mx;
    /* A constant y is fitted exactly by the flat line. */
    f->r2 = syy > 0.0 ? sxy * sxy / (sxx * syy) : 1.0;
}

static void swap_d(double *a, double *b)
{
    const double t = *a;
    *a = *b;
    *b = t;
}

/* The k-th smallest of a[0..n) (k < n); afterwards a[0..k) <= a[k] <= a[k+1..n). Three-way
 * partitions, so long runs of equal slopes (flats) cost one pass. */
static double select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        double p0 = a[lo], p1 = a[lo + (hi - lo) / 2], p2 = a[hi - 1];
        if (p0 > p1) swap_d(&p0, &p1);
        if (p1 > p2) swap_d(&p1, &p2);
        if (p0 > p1) swap_d(&p0, &p1);
        const double pivot = p1;
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (a[i] < pivot)
                swap_d(&a[lt++], &a[i++]);
            else if (a[i] > pivot)
                swap_d(&a[i], &a[--gt]);
            else
                i++;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return pivot;
    }
    return a[k];
}

/* Percentiles p[] (ascending, 0..1) of a[0..n), linear between order statistics (numpy's
 * default): the value at rank p (n - 1). a is reordered. */
static void percentiles(double *a, size_t n, const double *p, double *out, int count)
{
    size_t base = 0; /* a[0..base) holds nothing above the ranks still to find */
    for (int q = 0; q < count; q++) {
        const double h = p[q] * (double)(n - 1);
        size_t lo = (size_t)floor(h);
        if (lo >= n) lo = n - 1;
        if (lo < base) lo = base;
        const double below = select_kth(a + base, n - base, lo - base);
        double above = below;
        const double frac = h - (double)lo;
        if (frac > 0.0 && lo + 1 < n) {
            above = a[lo + 1];
            for (size_t k = lo + 2; k < n; k++)
                if (a[k] < above) above = a[k];
        }
        out[q] = below + frac * (above - below);
        base = lo;
    }
}

/* ---- heights ---- */

static void height_stats(const float *h, size_t n, trn_terrain_stats *r)
{
    double sum = 0.0, lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        const double v = h[k];
        if (isnan(v)) continue;
        sum += v;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    const double valid = (double)r->valid_samples;
    const double mean = sum / valid;
    double squares = 0.0;
    for (size_t k = 0; k < n; k++) {
        const double v = h[k];
        if (isnan(v)) continue;
        squares += (v - mean) * (v - mean);
    }
    r->min = lo;
    r->max = hi;
    r->relief = hi - lo;
    r->mean = mean;
    r->std_dev = sqrt(squares / valid);
    /* Strahler's integral: where the mean sits between the lowest and highest ground. */
    r->hypsometric_integral = hi > lo ? (mean - lo) / (hi - lo) : NAN;
}

/* ---- slopes ---- */

typedef struct slope_rows {
    const trn_field *field;
    double *all, *row_sum;
    uint64_t *row_count;
    size_t nx;
} slope_rows;

/* Row j's slopes (NaN at holes) and their sum and count. */
static void slope_row(void *ctx, size_t j, int thread)
{
    const slope_rows *s = ctx;
    const size_t nx = s->nx;
    (void)thread;
    double *row = s->all + j * nx;
    trn_field_slope_row(s->field, (uint32_t)j, row);
    const float *heights = s->field->heights + j * nx;
    double sum = 0.0;
    uint64_t count = 0;
    for (size_t i = 0; i < nx; i++) {
        /* Horn's stencil skips the centre: a hole's own slope would be finite. */
        if (isnan(heights[i])) row[i] = NAN;
        if (isnan(row[i])) continue;
        sum += row[i];
        count++;
    }
    s->row_sum[j] = sum;
    s->row_count[j] = count;
}

static trn_status slope_stats(const trn_field *field, int threads, trn_terrain_stats *r,
                              const trn_progress *progress, trn_error *err)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t n = nx * nz;
    double *all = malloc(n * sizeof *all);
    double *row_sum = calloc(nz, sizeof *row_sum);
    uint64_t *row_count = calloc(nz, sizeof *row_count);
    if (!all || !row_sum || !row_count) {
        free(all);
        free(row_sum);
        free(row_count);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "statistics: out of memory for the slopes of %zux%zu samples", nx, nz);
    }
    slope_rows job = {field, all, row_sum, row_count, nx};
    if (trn_rows_run(nz, trn_rows_team(nx * nz, threads), 2, slope_row, &job, progress, STAGE)) {
        free(all);
        free(row_sum);
        free(row_count);
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");
    }
    /* Rows summed in order, and the valid slopes packed: the same on any thread count. */
    double sum = 0.0;
    uint64_t count = 0;
    for (size_t j = 0; j < nz; j++) {
        sum += row_sum[j];
        count += row_count[j];
    }
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(all[k])) all[m++] = all[k];
    r->slope_samples = count;
    if (m) {
        static const double p[5] = {0.10, 0.25, 0.50, 0.75, 0.90};
        double v[5];
        percentiles(all, m, p, v, 5);
        r->slope_p10 = v[0];
        r->slope_p25 = v[1];
        r->slope_median = v[2];
        r->slope_p75 = v[3];
        r->slope_p90 = v[4];
        r->slope_mean = sum / (double)count;
    }
    free(all);
    free(row_sum);
    free(row_count);
    return TRN_OK;
}

/* ---- depressions and drainage ---- */

/* trn_drainage_compute's progress mapped into this call's slice. */
static int drainage_progress(double done, const char *stage, void *user)
{
    (void)stage;
    return trn_progress_report((const trn_progress *)user, done, STAGE) ? TRN_CANCEL : TRN_CONTINUE;
}

/* Raised samples, their depths and their 8-connected regions. */
static trn_status depression_stats(const trn_field *field, const trn_drainage *d, double tol,
                                   double deep, trn_terrain_stats *r, trn_error *err)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t n = nx * nz;
    uint8_t *mark = calloc(n, 1);
    if (!mark) goto no_memory;
    uint64_t raised = 0, deep_count = 0;
    double max_depth = 0.0;
    for (size_t k = 0; k < n; k++) {
        const float h = field->heights[k];
        if (isnan(h)) continue;
        const double depth = (double)d->filled[k] - (double)h;
        if (depth > tol) {
            mark[k] = 1;
            raised++;
        }
        if (depth > deep) deep_count++;
        if (depth > max_depth) max_depth = depth;
    }
    /* Regions: a flood from each unvisited raised sample in index order. */
    uint64_t regions = 0;
    uint32_t *stack = NULL;
    size_t cap = 0;
    for (size_t k = 0; k < n; k++) {
        if (mark[k] != 1) continue;
        regions++;
        size_t top = 0;
        if (cap == 0) {
            cap = 1024;
            stack = malloc(cap * sizeof *stack);
            if (!stack) goto no_memory_mark;
        }
        stack[top++] = (uint32_t)k;
        mark[k] = 2;
        while (top) {
            const size_t c = stack[--top];
            const size_t ci = c % nx, cj = c / nx;
            for (int dir = 0; dir < 8; dir++) {
                const ptrdiff_t ni = (ptrdiff_t)ci + TRN_D8_DI[dir],
                                nj = (ptrdiff_t)cj + TRN_D8_DJ[dir];
                if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)nx || nj >= (ptrdiff_t)nz) continue;
                const size_t m = (size_t)nj * nx + (size_t)ni;
                if (mark[m] != 1) continue;
                mark[m] = 2;
                if (top == cap) {
                    uint32_t *grown = realloc(stack, 2 * cap * sizeof *stack);
                    if (!grown) goto no_memory_mark;
                    stack = grown;
                    cap *= 2;
                }
                stack[top++] = (uint32_t)m;
            }
        }
    }
    free(stack);
    free(mark);
    const double valid = (double)r->valid_samples;
    r->depression_samples = raised;
    r->depression_fraction = (double)raised / valid;
    r->depression_count = regions;
    r->deep_depression_fraction = (double)deep_count / valid;
    r->max_depression_depth = max_depth;
    return TRN_OK;
no_memory_mark:
    free(stack);
    free(mark);
no_memory:
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                         "statistics: out of memory for the depressions of %zux%zu samples", nx,
                         nz);
}

/* P(A >= a) at log-spaced a in [a_min, a_max] and its log-log fit; then channel length. */
static trn_status area_stats(const trn_field *field, const trn_drainage *d,
                             const trn_stats_options *o, trn_terrain_stats *r, trn_error *err)
{
    const size_t n = ((size_t)field->cells_x + 1u) * ((size_t)field->cells_z + 1u);
    uint32_t top = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(field->heights[k]) && d->accumulation[k] > top) top = d->accumulation[k];
    r->max_accumulation = top;
    /* at_least[v]: valid samples draining v cells or more. */
    uint32_t *at_least = calloc((size_t)top + 2u, sizeof *at_least);
    if (!at_least)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "statistics: out of memory for the drainage areas");
    for (size_t k = 0; k < n; k++)
        if (!isnan(field->heights[k])) at_least[d->accumulation[k]]++;
    for (size_t v = top; v-- > 0;)
        at_least[v] += at_least[v + 1];
    const double valid = (double)r->valid_samples;
    const double a_min = o->fit_min_cells;
    const double a_max = o->fit_max_cells > 0.0 ? o->fit_max_cells : 0.01 * valid;
    r->area_fit.range_min = a_min;
    r->area_fit.range_max = a_max;
    double x[512], y[512];
    uint32_t m = 0;
    for (int step = 0; m < 512; step++) {
        const double a = a_min * pow(10.0, (double)step / POINTS_PER_DECADE);
        if (a > a_max * (1.0 + 1e-12)) break;
        const double cells = ceil(a * (1.0 - 1e-12));
        if (cells > (double)top) break; /* P = 0 from here on: no logarithm */
        x[m] = log10(a);
        y[m] = log10((double)at_least[(size_t)cells] / valid);
        m++;
    }
    free(at_least);
    fit_line(x, y, m, &r->area_fit);
    r->area_exponent = -r->area_fit.slope;

    /* Channels: each channel sample counts its D8 step (outlets the mean cell size). */
    const double dx = r->cell_x, dz = r->cell_z;
    const double threshold = o->channel_area > 0.0 ? o->channel_area / (dx * dz) : o->channel_cells;
    double step_length[9];
    for (int dir = 0; dir < 8; dir++)
        step_length[dir] = TRN_D8_DI[dir] && TRN_D8_DJ[dir] ? sqrt(dx * dx + dz * dz)
                           : TRN_D8_DI[dir]                 ? dx
                                                            : dz;
    step_length[8] = 0.5 * (dx + dz);
    uint64_t channels = 0;
    double length = 0.0;
    for (size_t k = 0; k < n; k++) {
        if (isnan(field->heights[k]) || (double)d->accumulation[k] < threshold) continue;
        channels++;
        const unsigned dir = d->flow_dir[k];
        length += step_length[dir <= 8 ? dir : 8];
    }
    r->channel_cells = threshold;
    r->channel_samples = channels;
    r->channel_length = length;
    r->drainage_density = length / (valid * dx * dz);
    return TRN_OK;
}

static trn_status flow_stats(const trn_field *field, const trn_stats_options *o,
                             trn_terrain_stats *r, const trn_progress *progress, trn_error *err)
{
    const size_t n = ((size_t)field->cells_x + 1u) * ((size_t)field->cells_z + 1u);
    trn_field work = *field;
    float *copy = NULL;
    double sea = NAN;
    if (r->nodata_samples) {
        /* No data becomes the lowest ground, an outlet: water leaves through it as by the
         * border, and the fill never raises across it. */
        copy = malloc(n * sizeof *copy);
        if (!copy)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "statistics: out of memory for a copy of the heights");
        for (size_t k = 0; k < n; k++)
            copy[k] = isnan(field->heights[k]) ? -FLT_MAX : field->heights[k];
        work.heights = copy;
        sea = -FLT_MAX;
    }
    trn_drainage d;
    memset(&d, 0, sizeof d);
    trn_progress sub = trn_progress_sub(progress, 0.0, 0.9);
    trn_status st = trn_drainage_compute(&work, sea, &d, drainage_progress, &sub, err);
    free(copy);
    if (st) return st;
    if (o->which & TRN_STATS_DEPRESSIONS)
        st = depression_stats(field, &d, o->depression_tolerance, o->deep_depth, r, err);
    if (!st && (o->which & TRN_STATS_DRAINAGE)) st = area_stats(field, &d, o, r, err);
    trn_drainage_dispose(&d);
    return st;
}

/* ---- spectrum ---- */

static size_t floor_pow2(size_t v)
{
    size_t p = 1;
    while (p <= v / 2)
        p *= 2;
    return p;
}

/* Least-squares plane h = c0 + c1 x + c2 z over the window's valid samples (x, z centred sample
 * indices). A window whose valid samples leave the plane undetermined gets their mean. */
static void fit_plane(const trn_field *field, size_t ox, size_t oz, size_t wx, size_t wz,
                      double c[3])
{
    const size_t nx = (size_t)field->cells_x + 1u;
    const double cx = 0.5 * (double)(wx - 1), cz = 0.5 * (double)(wz - 1);
    double s1 = 0, sx = 0, sz = 0, sxx = 0, sxz = 0, szz = 0, sh = 0, sxh = 0, szh = 0;
    for (size_t j = 0; j < wz; j++) {
        const float *row = field->heights + (oz + j) * nx + ox;
        const double z = (double)j - cz;
        for (size_t i = 0; i < wx; i++) {
            const double h = row[i];
            if (isnan(h)) continue;
            const double x = (double)i - cx;
            s1 += 1;
            sx += x;
            sz += z;
            sxx += x * x;
            sxz += x * z;
            szz += z * z;
            sh += h;
            sxh += x * h;
            szh += z * h;
        }
    }
    c[0] = s1 > 0 ? sh / s1 : 0.0;
    c[1] = c[2] = 0.0;
    /* Cramer's rule on the normal equations. */
    const double m[3][3] = {{s1, sx, sz}, {sx, sxx, sxz}, {sz, sxz, szz}};
    const double b[3] = {sh, sxh, szh};
    const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    if (!(fabs(det) > 1e-9 * (s1 * sxx * szz + 1.0))) return;
    for (int col = 0; col < 3; col++) {
        double a[3][3];
        memcpy(a, m, sizeof a);
        for (int row = 0; row < 3; row++)
            a[row][col] = b[row];
        c[col] = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                  a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                  a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])) /
                 det;
    }
}

/* False when nothing but the heights' float rounding is left after detrending (a plane):
 * the residual's RMS within a few float epsilons of the largest height has no spectrum. */
static bool above_rounding(const trn_field *field, size_t ox, size_t oz, size_t wx, size_t wz,
                           const double plane[3])
{
    const size_t nx = (size_t)field->cells_x + 1u;
    const double cx = 0.5 * (double)(wx - 1), cz = 0.5 * (double)(wz - 1);
    double squares = 0.0, largest = 0.0, count = 0.0;
    for (size_t j = 0; j < wz; j++) {
        const float *row = field->heights + (oz + j) * nx + ox;
        const double z = (double)j - cz;
        for (size_t i = 0; i < wx; i++) {
            const double h = row[i];
            if (isnan(h)) continue;
            const double r = h - (plane[0] + plane[1] * ((double)i - cx) + plane[2] * z);
            squares += r * r;
            if (fabs(h) > largest) largest = fabs(h);
            count += 1.0;
        }
    }
    return count > 0.0 && sqrt(squares / count) > 4.0 * FLT_EPSILON * largest;
}

/* What the spectrum's row pairs and column blocks read and write. */
typedef struct spectrum_job {
    const trn_field *field;
    const trn_fft_plan *px, *pz;
    double *re, *im;
    const double *win_x, *win_z;
    double *scratch;
    size_t scratch_each;
    const double *plane;
    double cx, cz;
    size_t nx, ox, oz, wx, wz, half;
} spectrum_job;

/* Rows 2p and 2p + 1: one complex FFT of (row a) + i (row b), split by symmetry. */
static void spectrum_row_pair(void *ctx, size_t p, int thread)
{
    const spectrum_job *s = ctx;
    const size_t wx = s->wx, half = s->half, nx = s->nx;
    const double *plane = s->plane;
    double *zr = s->scratch + (size_t)thread * s->scratch_each;
    double *zi = zr + wx;
    const size_t ja = 2 * p, jb = ja + 1;
    const float *ra = s->field->heights + (s->oz + ja) * nx + s->ox;
    const float *rb = s->field->heights + (s->oz + jb) * nx + s->ox;
    const double za = (double)ja - s->cz, zb = (double)jb - s->cz;
    for (size_t i = 0; i < wx; i++) {
        const double x = (double)i - s->cx;
        const double ha = ra[i], hb = rb[i];
        zr[i] = isnan(ha)
                    ? 0.0
                    : (ha - (plane[0] + plane[1] * x + plane[2] * za)) * s->win_x[i] * s->win_z[ja];
        zi[i] = isnan(hb)
                    ? 0.0
                    : (hb - (plane[0] + plane[1] * x + plane[2] * zb)) * s->win_x[i] * s->win_z[jb];
    }
    trn_fft_run(s->px, zr, zi, false);
    double *are = s->re + ja * half, *aim = s->im + ja * half;
    double *bre = s->re + jb * half, *bim = s->im + jb * half;
    for (size_t u = 0; u < half; u++) {
        const size_t w = (wx - u) & (wx - 1);
        const double a = zr[u], b = zi[u], c = zr[w], d = zi[w];
        are[u] = 0.5 * (a + c);
        aim[u] = 0.5 * (b - d);
        bre[u] = 0.5 * (b + d);
        bim[u] = -0.5 * (a - c);
    }
}

/* Column block blk (COLUMN_BLOCK columns gathered): its FFTs, each output's power |F|^2
 * replacing its real part. */
static void spectrum_column_block(void *ctx, size_t blk, int thread)
{
    const spectrum_job *s = ctx;
    const size_t wz = s->wz, half = s->half;
    double *buf = s->scratch + (size_t)thread * s->scratch_each;
    double *re = s->re, *im = s->im;
    const size_t u0 = blk * COLUMN_BLOCK;
    const size_t width = u0 + COLUMN_BLOCK <= half ? COLUMN_BLOCK : half - u0;
    for (size_t v = 0; v < wz; v++)
        for (size_t c = 0; c < width; c++) {
            buf[(2 * c) * wz + v] = re[v * half + u0 + c];
            buf[(2 * c + 1) * wz + v] = im[v * half + u0 + c];
        }
    for (size_t c = 0; c < width; c++)
        trn_fft_run(s->pz, buf + 2 * c * wz, buf + (2 * c + 1) * wz, false);
    for (size_t v = 0; v < wz; v++)
        for (size_t c = 0; c < width; c++) {
            const double a = buf[(2 * c) * wz + v], b = buf[(2 * c + 1) * wz + v];
            re[v * half + u0 + c] = a * a + b * b;
        }
}

static trn_status spectrum_stats(const trn_field *field, const trn_stats_options *o, int threads,
                                 trn_terrain_stats *r, const trn_progress *progress, trn_error *err)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t wx = floor_pow2(nx), wz = floor_pow2(nz);
    const size_t ox = (nx - wx) / 2, oz = (nz - wz) / 2;
    r->spectrum_x = (uint32_t)wx;
    r->spectrum_z = (uint32_t)wz;
    const double dx = r->cell_x, dz = r->cell_z;
    const double lx = (double)wx * dx, lz = (double)wz * dz;
    const double shorter = lx < lz ? lx : lz, coarser = dx > dz ? dx : dz;
    const double wl_min =
        o->spectrum_min_wavelength > 0 ? o->spectrum_min_wavelength : 8.0 * coarser;
    const double wl_max =
        o->spectrum_max_wavelength > 0 ? o->spectrum_max_wavelength : 0.25 * shorter;
    r->spectrum_fit.range_min = 1.0 / wl_max;
    r->spectrum_fit.range_max = 1.0 / wl_min;
    if (wx < 8 || wz < 8) return TRN_OK;

    double plane[3];
    fit_plane(field, ox, oz, wx, wz, plane);
    if (!above_rounding(field, ox, oz, wx, wz, plane)) return TRN_OK;
    const size_t half = wx / 2 + 1;
    size_t cells;
    if (!trn_mul_size(half, wz, &cells) || cells > SIZE_MAX / sizeof(double))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "statistics: a %zux%zu spectrum is too large", wx, wz);
    double *re = malloc(cells * sizeof *re), *im = malloc(cells * sizeof *im);
    double *win_x = malloc(wx * sizeof *win_x), *win_z = malloc(wz * sizeof *win_z);
    const size_t scratch_each = 2 * (wx > wz ? wx : wz) * COLUMN_BLOCK;
    double *scratch = malloc((size_t)threads * scratch_each * sizeof *scratch);
    trn_fft_plan px, pz;
    const bool plans = trn_fft_plan_init(&px, wx) && trn_fft_plan_init(&pz, wz);
    trn_status st = TRN_OK;
    if (!re || !im || !win_x || !win_z || !scratch || !plans) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                           "statistics: out of memory for a %zux%zu spectrum", wx, wz);
        goto done;
    }
    /* Hann window sin^2(pi (i + 1/2) / N): symmetric, zero just beyond both ends. */
    const double pi = 3.14159265358979323846;
    for (size_t i = 0; i < wx; i++) {
        const double s = sin(pi * ((double)i + 0.5) / (double)wx);
        win_x[i] = s * s;
    }
    for (size_t j = 0; j < wz; j++) {
        const double s = sin(pi * ((double)j + 0.5) / (double)wz);
        win_z[j] = s * s;
    }
    const trn_progress rows_p = trn_progress_sub(progress, 0.0, 0.45);
    const trn_progress cols_p = trn_progress_sub(progress, 0.45, 0.9);
    const double cx = 0.5 * (double)(wx - 1), cz = 0.5 * (double)(wz - 1);
    /* Rows two at a time: one complex FFT of (row a) + i (row b), split by symmetry. */
    spectrum_job job = {field, &px, &pz, re, im, win_x, win_z, scratch, scratch_each,
                        plane, cx,  cz,  nx, ox, oz,    wx,    wz,      half};
    if (trn_rows_run(wz / 2, trn_rows_team(wx * wz, threads), 2, spectrum_row_pair, &job, &rows_p,
                     STAGE))
        goto cancelled;
    /* Columns in blocks; each output's power |F|^2 replaces its real part. */
    const size_t blocks = (half + COLUMN_BLOCK - 1) / COLUMN_BLOCK;
    if (trn_rows_run(blocks, trn_rows_team(wx * wz, threads), 2, spectrum_column_block, &job,
                     &cols_p, STAGE))
        goto cancelled;
    {
        /* Radial bins, POINTS_PER_DECADE a decade from the lowest nonzero wavenumber, summed in
         * index order; a column u of the half plane stands for u and -u (twice) except 0 and
         * the Nyquist column. */
        const double kx0 = 1.0 / lx, kz0 = 1.0 / lz;
        const double kmin = kx0 < kz0 ? kx0 : kz0;
        const double kmax = sqrt(0.25 / (dx * dx) + 0.25 / (dz * dz));
        const double lk0 = log10(kmin);
        const size_t bins = (size_t)ceil((log10(kmax) - lk0) * POINTS_PER_DECADE) + 2u;
        double *acc = calloc(3 * bins, sizeof *acc);
        if (!acc) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "statistics: out of memory");
            goto done;
        }
        double *weight = acc, *power = acc + bins, *logk = acc + 2 * bins;
        for (size_t v = 0; v < wz; v++) {
            const double kz = (v <= wz / 2 ? (double)v : (double)v - (double)wz) * kz0;
            for (size_t u = 0; u < half; u++) {
                if (u == 0 && v == 0) continue;
                const double kx = (double)u * kx0;
                const double lk = 0.5 * log10(kx * kx + kz * kz);
                double pos = floor((lk - lk0) * POINTS_PER_DECADE + 1e-9);
                if (pos < 0) pos = 0;
                size_t bin = (size_t)pos;
                if (bin >= bins) bin = bins - 1;
                const double w = (u == 0 || u == wx / 2) ? 1.0 : 2.0;
                weight[bin] += w;
                power[bin] += w * re[v * half + u];
                logk[bin] += w * lk;
            }
        }
        double x[256], y[256];
        uint32_t m = 0;
        const double lo = log10(r->spectrum_fit.range_min) - 1e-12;
        const double hi = log10(r->spectrum_fit.range_max) + 1e-12;
        for (size_t b = 0; b < bins && m < 256; b++) {
            if (!(weight[b] > 0) || !(power[b] > 0)) continue;
            const double lk = logk[b] / weight[b];
            if (lk < lo || lk > hi) continue;
            x[m] = lk;
            y[m] = log10(power[b] / weight[b]);
            m++;
        }
        free(acc);
        fit_line(x, y, m, &r->spectrum_fit);
        r->spectral_slope = r->spectrum_fit.slope;
    }
    goto done;
cancelled:
    st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");
done:
    if (plans) {
        trn_fft_plan_dispose(&px);
        trn_fft_plan_dispose(&pz);
    } else {
        trn_fft_plan_dispose(&px);
    }
    free(re);
    free(im);
    free(win_x);
    free(win_z);
    free(scratch);
    return st;
}

/* ---- the whole measurement ---- */

static void clear_figures(trn_terrain_stats *r)
{
    memset(r, 0, sizeof *r);
    r->min = r->max = r->relief = r->mean = r->std_dev = r->hypsometric_integral = NAN;
    r->slope_p10 = r->slope_p25 = r->slope_median = r->slope_p75 = r->slope_p90 = NAN;
    r->slope_mean = NAN;
    r->depression_tolerance = r->depression_fraction = NAN;
    r->deep_depth = r->deep_depression_fraction = r->max_depression_depth = NAN;
    r->area_fit.slope = r->area_fit.intercept = r->area_fit.r2 = NAN;
    r->area_fit.range_min = r->area_fit.range_max = NAN;
    r->area_exponent = r->channel_cells = r->channel_length = r->drainage_density = NAN;
    r->spectrum_fit = r->area_fit;
    r->spectral_slope = NAN;
    r->aspect_min_slope = r->axis45_share = r->axis45_ratio = r->axis_share = NAN;
    r->periodic_ratio_x = r->periodic_ratio_z = r->periodic_curvature_ratio = NAN;
    r->periodic_period_x = r->periodic_period_z = NAN;
}

trn_status trn_terrain_stats_compute(const trn_field *field, const trn_stats_options *opts,
                                     trn_terrain_stats *out, trn_progress_fn progress, void *user,
                                     trn_error *err)
{
    if (!field || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a field and an output, found NULL");
    if (!field->heights || field->cells_x == 0 || field->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a field with heights and at least one cell "
                             "per axis, found %ux%u cells%s",
                             field->cells_x, field->cells_z,
                             field->heights ? "" : " and no heights");
    if (!(field->size_x > 0.0) || !(field->size_z > 0.0) || !isfinite(field->size_x) ||
        !isfinite(field->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: expected a positive finite field size, found %g x %g",
                             field->size_x, field->size_z);
    trn_stats_options o;
    trn_stats_options_default(&o);
    if (opts) o = *opts;
    trn_status st = check_options(&o, err);
    if (st) return st;
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    size_t n;
    if (!trn_mul_size(nx, nz, &n) || n >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "statistics: expected fewer than 2^32-1 samples, found %zux%zu", nx,
                             nz);
    trn_terrain_stats r;
    clear_figures(&r);
    r.samples = n;
    r.cell_x = field->size_x / field->cells_x;
    r.cell_z = field->size_z / field->cells_z;
    for (size_t k = 0; k < n; k++) {
        const float h = field->heights[k];
        if (isnan(h)) {
            r.nodata_samples++;
        } else if (isinf(h)) {
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "statistics: expected finite heights or NaN (no data), found "
                                 "%s at sample (%zu, %zu)",
                                 h > 0 ? "+inf" : "-inf", k % nx, k / nx);
        }
    }
    r.valid_samples = n - r.nodata_samples;
    if (r.valid_samples == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "statistics: no data: all %zu samples are NaN", n);
    const int threads = o.threads > 0 ? o.threads : default_threads();
    const trn_progress whole = trn_progress_make(progress, user);
    if (trn_progress_report(&whole, 0.0, STAGE))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");

    if (o.which & TRN_STATS_HEIGHTS) {
        height_stats(field->heights, n, &r);
        r.computed |= TRN_STATS_HEIGHTS;
    }
    if (o.which & TRN_STATS_SLOPE) {
        const trn_progress p = trn_progress_sub(&whole, 0.02, 0.2);
        if ((st = slope_stats(field, threads, &r, &p, err))) return st;
        r.computed |= TRN_STATS_SLOPE;
    }
    if (o.which & (TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE)) {
        const trn_progress p = trn_progress_sub(&whole, 0.2, 0.7);
        if (o.which & TRN_STATS_DEPRESSIONS) {
            r.depression_tolerance = o.depression_tolerance;
            r.deep_depth = o.deep_depth;
        }
        if ((st = flow_stats(field, &o, &r, &p, err))) return st;
        r.computed |= o.which & (TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE);
    }
    if (o.which & TRN_STATS_SPECTRUM) {
        const trn_progress p = trn_progress_sub(&whole, 0.7, 0.9);
        if ((st = spectrum_stats(field, &o, threads, &r, &p, err))) return st;
        r.computed |= TRN_STATS_SPECTRUM;
    }
    if (o.which & TRN_STATS_FINGERPRINTS) {
        const trn_progress p = trn_progress_sub(&whole, 0.9, 1.0);
        if ((st = trn_stats_fingerprints(field, &o, threads, &r, &p, err))) return st;
        r.computed |= TRN_STATS_FINGERPRINTS;
    }
    if (trn_progress_report(&whole, 1.0, STAGE))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");
    *out = r;
    return TRN_OK;
}
