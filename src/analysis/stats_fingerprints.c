/* Grid fingerprints: slopes facing the grid's eight directions, curvature that repeats with
 * the column or row index. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stats_internal.h"

#define STAGE "statistics"
#define SHUFFLES 16u
/* A period must repeat at least this many times across the profile to count as one. */
#define MIN_REPEATS 8u
#define MIN_PROFILE (2u * MIN_REPEATS)
/* Half-width of the bands around multiples of 45 degrees, in degrees. */
#define BAND_DEGREES 5.0
#define PI 3.14159265358979323846

/* ---- aspects ---- */

typedef struct aspect_counts {
    uint64_t counted, near45, near90;
} aspect_counts;

static bool finite9(const float *s, const float *m, const float *n, size_t i)
{
    return isfinite(s[i - 1]) && isfinite(s[i]) && isfinite(s[i + 1]) && isfinite(m[i - 1]) &&
           isfinite(m[i]) && isfinite(m[i + 1]) && isfinite(n[i - 1]) && isfinite(n[i]) &&
           isfinite(n[i + 1]);
}

/* One interior row: Horn's gradient, its slope against the threshold, its direction folded
 * onto [0, 45) degrees. */
static aspect_counts aspect_row(const trn_field *field, size_t j, double inv_x, double inv_z,
                                double min_tan)
{
    const size_t nx = (size_t)field->cells_x + 1u;
    const float *s = field->heights + (j - 1) * nx, *m = s + nx, *n = m + nx;
    aspect_counts c = {0, 0, 0};
    for (size_t i = 1; i + 1 < nx; i++) {
        if (!finite9(s, m, n, i)) continue;
        const double gx = (((double)s[i + 1] + 2.0 * m[i + 1] + n[i + 1]) -
                           ((double)s[i - 1] + 2.0 * m[i - 1] + n[i - 1])) * inv_x;
        const double gz = (((double)n[i - 1] + 2.0 * n[i] + n[i + 1]) -
                           ((double)s[i - 1] + 2.0 * s[i] + s[i + 1])) * inv_z;
        const double g = hypot(gx, gz);
        if (!(g >= min_tan) || g == 0.0) continue;
        c.counted++;
        /* Degrees in [0, 360), then the distance to the nearest multiple of 45 and of 90. */
        double a = atan2(gz, gx) * (180.0 / PI);
        if (a < 0.0) a += 360.0;
        const double r45 = fmod(a, 45.0), r90 = fmod(a, 90.0);
        const double d45 = r45 < 22.5 ? r45 : 45.0 - r45;
        const double d90 = r90 < 45.0 ? r90 : 90.0 - r90;
        if (d45 <= BAND_DEGREES) c.near45++;
        if (d90 <= BAND_DEGREES) c.near90++;
    }
    return c;
}

static void aspect_stats(const trn_field *field, const trn_stats_options *o, int threads,
                         trn_terrain_stats *r)
{
    const size_t nz = (size_t)field->cells_z + 1u;
    /* Horn's gradient: each difference sums weights 1, 2, 1 over two cell widths. */
    const double inv_x = (double)field->cells_x / (8.0 * field->size_x);
    const double inv_z = (double)field->cells_z / (8.0 * field->size_z);
    const double min_tan = tan(o->aspect_min_slope * (PI / 180.0));
    aspect_counts total = {0, 0, 0};
    if (nz >= 3 && field->cells_x >= 2) {
        const long last = (long)nz - 1;
        uint64_t counted = 0, near45 = 0, near90 = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : counted, near45, near90)
        for (long j = 1; j < last; j++) {
            const aspect_counts c = aspect_row(field, (size_t)j, inv_x, inv_z, min_tan);
            counted += c.counted;
            near45 += c.near45;
            near90 += c.near90;
        }
        total.counted = counted;
        total.near45 = near45;
        total.near90 = near90;
    }
    r->aspect_min_slope = o->aspect_min_slope;
    r->aspect_samples = total.counted;
    if (total.counted) {
        r->axis45_share = (double)total.near45 / (double)total.counted;
        r->axis45_ratio = r->axis45_share / (2.0 * BAND_DEGREES / 45.0);
        r->axis_share = (double)total.near90 / (double)total.counted;
    }
}

/* ---- periodic curvature ---- */

/* Mean |second difference| at each interior position of a profile: along x the positions
 * are columns and the mean runs over rows, along z the other way round; both walk the rows in
 * memory order. A position with no valid triple leaves no point (the profile closes up). */
static size_t curvature_profile(const trn_field *field, bool along_x, double *p, double *sum,
                                size_t *count)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t length = along_x ? nx : nz;
    memset(sum, 0, length * sizeof *sum);
    memset(count, 0, length * sizeof *count);
    for (size_t j = 0; j < nz; j++) {
        const float *row = field->heights + j * nx;
        if (along_x) {
            for (size_t i = 1; i + 1 < nx; i++) {
                const double v = (double)row[i - 1] - 2.0 * row[i] + row[i + 1];
                if (isnan(v)) continue;
                sum[i] += fabs(v);
                count[i]++;
            }
        } else if (j >= 1 && j + 1 < nz) {
            const float *below = row - nx, *above = row + nx;
            double s = 0.0;
            size_t c = 0;
            for (size_t i = 0; i < nx; i++) {
                const double v = (double)below[i] - 2.0 * row[i] + above[i];
                if (isnan(v)) continue;
                s += fabs(v);
                c++;
            }
            sum[j] = s;
            count[j] = c;
        }
    }
    size_t m = 0;
    for (size_t i = 1; i + 1 < length; i++)
        if (count[i]) p[m++] = sum[i] / (double)count[i];
    return m;
}

/* The least-squares line through p removed, in place. */
static void detrend(double *p, size_t m)
{
    const double mid = 0.5 * (double)(m - 1);
    double mean = 0.0, sxy = 0.0, sxx = 0.0;
    for (size_t i = 0; i < m; i++) mean += p[i];
    mean /= (double)m;
    for (size_t i = 0; i < m; i++) {
        const double x = (double)i - mid;
        sxy += x * (p[i] - mean);
        sxx += x * x;
    }
    const double b = sxx > 0.0 ? sxy / sxx : 0.0;
    for (size_t i = 0; i < m; i++) p[i] -= mean + b * ((double)i - mid);
}

/* Strongest |DFT|^2 at bins k_lo..k_hi (twiddles cos_t/sin_t of length m); its bin in *at. */
static double strongest(const double *p, size_t m, const double *cos_t, const double *sin_t,
                        size_t k_lo, size_t k_hi, size_t *at)
{
    double best = -1.0;
    size_t best_k = k_lo;
    for (size_t k = k_lo; k <= k_hi; k++) {
        double re = 0.0, im = 0.0;
        size_t t = 0;
        for (size_t i = 0; i < m; i++) {
            re += p[i] * cos_t[t];
            im -= p[i] * sin_t[t];
            t += k;
            if (t >= m) t -= m;
        }
        const double power = re * re + im * im;
        if (power > best) best = power, best_k = k;
    }
    if (at) *at = best_k;
    return best;
}

static uint64_t next_random(uint64_t *state)
{
    /* splitmix64: a fixed sequence, the same on every machine. */
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Ratio of the profile's strongest periodic value to that of its shuffles; NaN when short. */
static trn_status periodic_axis(double *p, size_t m, uint32_t max_period, int threads,
                                double *ratio, double *period, trn_error *err)
{
    *ratio = NAN;
    *period = NAN;
    if (m < MIN_PROFILE) return TRN_OK;
    detrend(p, m);
    /* Bins whose period m / k lies in [2, max_period] and repeats MIN_REPEATS times. */
    size_t k_lo = (m + max_period - 1) / max_period, k_hi = m / 2;
    if (k_lo < MIN_REPEATS) k_lo = MIN_REPEATS;
    if (k_lo > k_hi) return TRN_OK;
    double *cos_t = malloc(m * sizeof *cos_t), *sin_t = malloc(m * sizeof *sin_t);
    double *shuffled = malloc((size_t)SHUFFLES * m * sizeof *shuffled);
    if (!cos_t || !sin_t || !shuffled) {
        free(cos_t);
        free(sin_t);
        free(shuffled);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "statistics: out of memory for a curvature profile of %zu points", m);
    }
    for (size_t t = 0; t < m; t++) {
        const double a = 2.0 * PI * (double)t / (double)m;
        cos_t[t] = cos(a);
        sin_t[t] = sin(a);
    }
    uint64_t state = 0x7465727261696e65ull ^ (uint64_t)m;
    for (uint32_t s = 0; s < SHUFFLES; s++) {
        double *q = shuffled + (size_t)s * m;
        memcpy(q, p, m * sizeof *q);
        for (size_t i = m - 1; i > 0; i--) {
            const size_t j = (size_t)(next_random(&state) % (uint64_t)(i + 1));
            const double t = q[i];
            q[i] = q[j];
            q[j] = t;
        }
    }
    double values[SHUFFLES + 1];
    size_t at = k_lo;
    /* Each profile on its own thread; the values land in fixed slots, the sum in order. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int s = 0; s <= (int)SHUFFLES; s++)
        values[s] = s == 0 ? strongest(p, m, cos_t, sin_t, k_lo, k_hi, &at)
                           : strongest(shuffled + (size_t)(s - 1) * m, m, cos_t, sin_t, k_lo,
                                       k_hi, NULL);
    double reference = 0.0;
    for (uint32_t s = 1; s <= SHUFFLES; s++) reference += values[s];
    reference /= SHUFFLES;
    *period = (double)m / (double)at;
    /* A profile with no variation (a plane, an exact ramp) repeats nothing. */
    *ratio = reference > 0.0 ? values[0] / reference : 0.0;
    free(cos_t);
    free(sin_t);
    free(shuffled);
    return TRN_OK;
}

trn_status trn_stats_fingerprints(const trn_field *field, const trn_stats_options *o, int threads,
                                  trn_terrain_stats *r, const trn_progress *progress,
                                  trn_error *err)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    aspect_stats(field, o, threads, r);
    if (trn_progress_report(progress, 0.3, STAGE))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");
    const size_t longest = nx > nz ? nx : nz;
    double *p = malloc(longest * sizeof *p), *sum = malloc(longest * sizeof *sum);
    size_t *count = malloc(longest * sizeof *count);
    if (!p || !sum || !count) {
        free(p);
        free(sum);
        free(count);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "statistics: out of memory for a curvature profile");
    }
    size_t m = curvature_profile(field, true, p, sum, count);
    trn_status st = periodic_axis(p, m, o->periodic_max_period, threads, &r->periodic_ratio_x,
                                  &r->periodic_period_x, err);
    if (!st && trn_progress_report(progress, 0.65, STAGE))
        st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "statistics: cancelled");
    if (!st) {
        m = curvature_profile(field, false, p, sum, count);
        st = periodic_axis(p, m, o->periodic_max_period, threads, &r->periodic_ratio_z,
                           &r->periodic_period_z, err);
    }
    free(p);
    free(sum);
    free(count);
    if (st) return st;
    r->periodic_axis = 0;
    r->periodic_curvature_ratio = NAN;
    if (!isnan(r->periodic_ratio_x) &&
        (isnan(r->periodic_ratio_z) || r->periodic_ratio_x >= r->periodic_ratio_z)) {
        r->periodic_curvature_ratio = r->periodic_ratio_x;
        r->periodic_axis = 'x';
    } else if (!isnan(r->periodic_ratio_z)) {
        r->periodic_curvature_ratio = r->periodic_ratio_z;
        r->periodic_axis = 'z';
    }
    return TRN_OK;
}
