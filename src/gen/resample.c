/* Heightfield resampling (bilinear, Keys cubic), cropping, edge padding, multigrid harmonic NaN
 * filling and the 16-bit height scale. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/bits.h"
#include "core/checked.h"
#include "core/progress.h"
#include "terrane/resample.h"

const char *trn_resample_filter_name(trn_resample_filter filter)
{
    switch (filter) {
    case TRN_RESAMPLE_BILINEAR:
        return "bilinear";
    case TRN_RESAMPLE_BICUBIC:
        return "bicubic";
    case TRN_RESAMPLE_AVERAGE:
        return "average";
    }
    return "unknown";
}

/* The source samples one output coordinate reads and their weights. Bilinear uses the first
 * two; indices are already clamped to 0..cells. */
typedef struct taps {
    uint32_t idx[4];
    double w[4];
} taps;

static uint32_t clamp_index(int64_t i, uint32_t cells)
{
    if (i < 0) return 0;
    if (i > (int64_t)cells) return cells;
    return (uint32_t)i;
}

static int make_taps(double x, uint32_t cells, trn_resample_filter filter, taps *t)
{
    if (!(x > 0)) x = 0; /* also NaN */
    if (x > (double)cells) x = (double)cells;
    double fl = floor(x);
    int64_t i = (int64_t)fl;
    double f = x - fl;
    /* The last sample is the right end of the last cell, so every position has a cell. */
    if (i >= (int64_t)cells) {
        i = (int64_t)cells - 1;
        f = 1.0;
    }
    if (filter == TRN_RESAMPLE_BILINEAR) {
        t->idx[0] = clamp_index(i, cells);
        t->idx[1] = clamp_index(i + 1, cells);
        t->w[0] = 1.0 - f;
        t->w[1] = f;
        return 2;
    }
    double f2 = f * f, f3 = f2 * f;
    /* Keys (1981) with a = -0.5, written per tap for the offset f in [0, 1]. */
    t->w[0] = -0.5 * f3 + f2 - 0.5 * f;
    t->w[1] = 1.5 * f3 - 2.5 * f2 + 1.0;
    t->w[2] = -1.5 * f3 + 2.0 * f2 + 0.5 * f;
    t->w[3] = 0.5 * f3 - 0.5 * f2;
    for (int k = 0; k < 4; k++)
        t->idx[k] = clamp_index(i - 1 + k, cells);
    return 4;
}

static double sample_taps(const trn_field *field, const taps *tx, int nx, const taps *tz, int nz)
{
    size_t stride = (size_t)field->cells_x + 1u;
    double sum = 0.0;
    for (int r = 0; r < nz; r++) {
        const float *row = field->heights + (size_t)tz->idx[r] * stride;
        double acc = 0.0;
        for (int c = 0; c < nx; c++)
            acc += tx->w[c] * (double)row[tx->idx[c]];
        sum += tz->w[r] * acc;
    }
    return sum;
}

static double sample_at(const trn_field *field, double x, double z, trn_resample_filter filter)
{
    if (!field || !field->heights || field->cells_x == 0 || field->cells_z == 0) return NAN;
    taps tx, tz;
    int nx = make_taps(x, field->cells_x, filter, &tx);
    int nz = make_taps(z, field->cells_z, filter, &tz);
    return sample_taps(field, &tx, nx, &tz, nz);
}

double trn_field_sample_bilinear(const trn_field *field, double x, double z)
{
    return sample_at(field, x, z, TRN_RESAMPLE_BILINEAR);
}

double trn_field_sample_bicubic(const trn_field *field, double x, double z)
{
    return sample_at(field, x, z, TRN_RESAMPLE_BICUBIC);
}

/* Output position k of n cells across [a, b]; the last one is exactly b. */
static double grid_position(double a, double b, uint32_t k, uint32_t n)
{
    if (k == n) return b;
    return a + (b - a) * (double)k / (double)n;
}

/* Area-average weights along one axis: for each output position, the source samples under
 * its footprint and their overlaps, normalised. Sample s stands for [s - 0.5, s + 0.5] clipped to
 * the field's [0, cells]; a footprint is one output spacing wide (step), centred on the
 * position. A step of at most one source spacing is not a shrink: linear taps instead. */
typedef struct span {
    uint32_t first, count; /* source indices first .. first + count - 1 */
    size_t at;             /* their weights in the pool */
} span;

static bool average_spans(double a, double b, uint32_t n, uint32_t cells, uint32_t k0,
                          uint32_t count, span *spans, double **pool_out)
{
    const double step = (b - a) / (double)n;
    const double half = step > 1.0 ? step / 2.0 : 0.0;
    size_t cap = (size_t)count * ((size_t)ceil(2.0 * half) + 3u), used = 0;
    double *pool = malloc((cap ? cap : 1u) * sizeof *pool);
    if (!pool) return false;
    for (uint32_t at = 0; at < count; at++) {
        const uint32_t k = k0 + at;
        const double c = grid_position(a, b, k, n);
        span *sp = &spans[at];
        sp->at = used;
        if (half == 0.0) {
            taps t;
            make_taps(c, cells, TRN_RESAMPLE_BILINEAR, &t);
            sp->first = t.idx[0];
            sp->count = t.idx[1] == t.idx[0] ? 1u : 2u;
            pool[used++] = sp->count == 1 ? 1.0 : t.w[0];
            if (sp->count == 2) pool[used++] = t.w[1];
            continue;
        }
        double lo = c - half, hi = c + half;
        if (lo < 0.0) lo = 0.0;
        if (hi > (double)cells) hi = (double)cells;
        int64_t s0 = (int64_t)floor(lo + 0.5), s1 = (int64_t)floor(hi + 0.5);
        if (s0 < 0) s0 = 0;
        if (s1 > (int64_t)cells) s1 = (int64_t)cells;
        double total = 0.0;
        sp->first = (uint32_t)s0;
        sp->count = 0;
        for (int64_t s = s0; s <= s1; s++) {
            double c0 = (double)s - 0.5, c1 = (double)s + 0.5;
            if (c0 < 0.0) c0 = 0.0;
            if (c1 > (double)cells) c1 = (double)cells;
            const double lo2 = c0 > lo ? c0 : lo, hi2 = c1 < hi ? c1 : hi;
            const double wgt = hi2 > lo2 ? hi2 - lo2 : 0.0;
            pool[used + sp->count++] = wgt;
            total += wgt;
        }
        for (uint32_t q = 0; q < sp->count; q++)
            pool[used + q] = total > 0.0 ? pool[used + q] / total : 1.0 / sp->count;
        used += sp->count;
    }
    *pool_out = pool;
    return true;
}

/* Samples i0 .. i0 + nx - 1 and j0 .. j0 + nz - 1 of the area average of window w onto
 * cells_x x cells_z cells, into out (nx floats a row). */
static trn_status resample_average(const trn_field *src, const trn_resample_window *w,
                                   uint32_t cells_x, uint32_t cells_z, uint32_t i0, uint32_t j0,
                                   uint32_t nx, uint32_t nz, float *out_rows,
                                   const trn_progress *prog, trn_error *err)
{
    span *sx = malloc((size_t)nx * sizeof *sx), *sz = malloc((size_t)nz * sizeof *sz);
    double *px = NULL, *pz = NULL;
    if (!sx || !sz || !average_spans(w->x0, w->x1, cells_x, src->cells_x, i0, nx, sx, &px) ||
        !average_spans(w->z0, w->z1, cells_z, src->cells_z, j0, nz, sz, &pz)) {
        free(sx);
        free(sz);
        free(px);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "resample: out of memory");
    }
    const size_t stride = (size_t)src->cells_x + 1u, out_w = nx;
    trn_status st = TRN_OK;
    for (uint32_t j = 0; j < nz && !st; j++) {
        if ((j & 63u) == 0 && trn_progress_report(prog, (double)j / (nz + 0.0), "resample")) {
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "resample: cancelled");
            break;
        }
        const span *vz = &sz[j];
        float *out = out_rows + (size_t)j * out_w;
        for (size_t i = 0; i < out_w; i++) {
            const span *vx = &sx[i];
            double sum = 0.0;
            for (uint32_t r = 0; r < vz->count; r++) {
                const float *row = src->heights + ((size_t)vz->first + r) * stride + vx->first;
                double acc = 0.0;
                for (uint32_t q = 0; q < vx->count; q++)
                    acc += px[vx->at + q] * (double)row[q];
                sum += pz[vz->at + r] * acc;
            }
            out[i] = (float)sum;
        }
    }
    free(sx);
    free(sz);
    free(px);
    free(pz);
    return st;
}

/* The checks both entry points make; the window (the whole field for NULL) into *w. */
static trn_status resample_check(const trn_field *src, const trn_resample_window *window,
                                 uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                                 trn_resample_window *w, trn_error *err)
{
    if (!src || !src->heights || src->cells_x == 0 || src->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resample: the source field is empty");
    if (filter != TRN_RESAMPLE_BILINEAR && filter != TRN_RESAMPLE_BICUBIC &&
        filter != TRN_RESAMPLE_AVERAGE)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "resample: unknown filter %d",
                             (int)filter);
    if (cells_x == 0 || cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resample: the target needs at least 1 x 1 cells, got %u x %u",
                             cells_x, cells_z);
    trn_resample_window all = {0.0, 0.0, (double)src->cells_x, (double)src->cells_z};
    *w = window ? *window : all;
    if (!(w->x0 >= 0 && w->x0 < w->x1 && w->x1 <= (double)src->cells_x && w->z0 >= 0 &&
          w->z0 < w->z1 && w->z1 <= (double)src->cells_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resample: window x %g..%g, z %g..%g is not inside the field's "
                             "0..%u x 0..%u samples (or is empty)",
                             w->x0, w->x1, w->z0, w->z1, src->cells_x, src->cells_z);
    return TRN_OK;
}

/* Samples i0 .. i0 + nx - 1 and j0 .. j0 + nz - 1 of the resample into out (nx floats a row):
 * every sample a fixed expression of its own position, so a part is the whole grid's bits. */
static trn_status resample_rows(const trn_field *src, const trn_resample_window *w,
                                uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                                uint32_t i0, uint32_t j0, uint32_t nx, uint32_t nz, float *out_rows,
                                const trn_progress *prog, trn_error *err)
{
    if (filter == TRN_RESAMPLE_AVERAGE)
        return resample_average(src, w, cells_x, cells_z, i0, j0, nx, nz, out_rows, prog, err);
    const size_t out_w = nx;
    taps *tx = malloc(out_w * sizeof *tx);
    if (!tx)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "resample: out of memory for %zu column weights", out_w);
    int ntx = 2;
    for (uint32_t i = 0; i < nx; i++)
        ntx = make_taps(grid_position(w->x0, w->x1, i0 + i, cells_x), src->cells_x, filter, &tx[i]);
    for (uint32_t j = 0; j < nz; j++) {
        if ((j & 63u) == 0 && trn_progress_report(prog, (double)j / (nz + 0.0), "resample")) {
            free(tx);
            return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "resample: cancelled");
        }
        taps tz;
        int ntz =
            make_taps(grid_position(w->z0, w->z1, j0 + j, cells_z), src->cells_z, filter, &tz);
        float *out = out_rows + (size_t)j * out_w;
        for (size_t i = 0; i < out_w; i++)
            out[i] = (float)sample_taps(src, &tx[i], ntx, &tz, ntz);
    }
    free(tx);
    return TRN_OK;
}

trn_status trn_field_resample(const trn_field *src, const trn_resample_window *window,
                              uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                              trn_field *dst, trn_progress_fn progress, void *user, trn_error *err)
{
    memset(dst, 0, sizeof *dst);
    trn_resample_window w;
    trn_status st = resample_check(src, window, cells_x, cells_z, filter, &w, err);
    if (st) return st;
    double spacing_x = src->size_x / src->cells_x, spacing_z = src->size_z / src->cells_z;
    st = trn_field_init(dst, cells_x, cells_z, spacing_x * (w.x1 - w.x0), spacing_z * (w.z1 - w.z0),
                        err);
    if (st) return st;
    trn_progress prog = trn_progress_make(progress, user);
    if ((st = resample_rows(src, &w, cells_x, cells_z, filter, 0, 0, cells_x + 1u, cells_z + 1u,
                            dst->heights, &prog, err))) {
        trn_field_dispose(dst);
        return st;
    }
    trn_progress_report(&prog, 1.0, "resample");
    return TRN_OK;
}

trn_status trn_field_resample_part(const trn_field *src, const trn_resample_window *window,
                                   uint32_t cells_x, uint32_t cells_z, trn_resample_filter filter,
                                   uint32_t i0, uint32_t j0, uint32_t samples_x, uint32_t samples_z,
                                   float *out, trn_error *err)
{
    trn_resample_window w;
    trn_status st = resample_check(src, window, cells_x, cells_z, filter, &w, err);
    if (st) return st;
    if (!out || samples_x == 0 || samples_z == 0 ||
        (uint64_t)i0 + samples_x > (uint64_t)cells_x + 1u ||
        (uint64_t)j0 + samples_z > (uint64_t)cells_z + 1u)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resample: %u x %u samples at (%u, %u) are not inside the %u x %u "
                             "cells' grid",
                             samples_x, samples_z, i0, j0, cells_x, cells_z);
    trn_progress none = trn_progress_make(NULL, NULL);
    return resample_rows(src, &w, cells_x, cells_z, filter, i0, j0, samples_x, samples_z, out,
                         &none, err);
}

trn_status trn_field_crop(const trn_field *src, uint32_t x0, uint32_t z0, uint32_t samples_x,
                          uint32_t samples_z, trn_field *dst, trn_error *err)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->heights || src->cells_x == 0 || src->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "crop: the source field is empty");
    uint64_t in_x = (uint64_t)src->cells_x + 1u, in_z = (uint64_t)src->cells_z + 1u;
    if (samples_x < 2 || samples_z < 2 || (uint64_t)x0 + samples_x > in_x ||
        (uint64_t)z0 + samples_z > in_z)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "crop: %u x %u samples at (%u, %u) do not fit in the field's "
                             "%llu x %llu samples (at least 2 x 2 needed)",
                             samples_x, samples_z, x0, z0, (unsigned long long)in_x,
                             (unsigned long long)in_z);
    double spacing_x = src->size_x / src->cells_x, spacing_z = src->size_z / src->cells_z;
    trn_status st = trn_field_init(dst, samples_x - 1, samples_z - 1, spacing_x * (samples_x - 1),
                                   spacing_z * (samples_z - 1), err);
    if (st) return st;
    for (uint32_t j = 0; j < samples_z; j++)
        memcpy(dst->heights + (size_t)j * samples_x,
               src->heights + ((size_t)z0 + j) * (size_t)in_x + x0, samples_x * sizeof(float));
    dst->quantum = src->quantum;
    dst->quantum_base = src->quantum_base;
    return TRN_OK;
}

trn_status trn_field_pad(const trn_field *src, uint32_t left, uint32_t bottom, uint32_t right,
                         uint32_t top, trn_field *dst, trn_error *err)
{
    memset(dst, 0, sizeof *dst);
    if (!src || !src->heights || src->cells_x == 0 || src->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "pad: the source field is empty");
    const uint64_t in_x = (uint64_t)src->cells_x + 1u, in_z = (uint64_t)src->cells_z + 1u;
    const uint64_t out_x = in_x + left + right, out_z = in_z + bottom + top;
    if (out_x > UINT32_MAX || out_z > UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "pad: %llu x %llu samples padded to %llu x %llu is past 2^32 - 1 a "
                             "side",
                             (unsigned long long)in_x, (unsigned long long)in_z,
                             (unsigned long long)out_x, (unsigned long long)out_z);
    const double spacing_x = src->size_x / src->cells_x, spacing_z = src->size_z / src->cells_z;
    const uint32_t cx = (uint32_t)(out_x - 1u), cz = (uint32_t)(out_z - 1u);
    trn_status st = trn_field_init(dst, cx, cz, spacing_x * cx, spacing_z * cz, err);
    if (st) return st;
    for (uint64_t j = 0; j < out_z; j++) {
        /* The source row this output row repeats: its own inside, the nearest edge outside. */
        const uint64_t sj = j < bottom ? 0 : j - bottom >= in_z ? in_z - 1u : j - bottom;
        const float *row = src->heights + sj * in_x;
        float *out = dst->heights + j * out_x;
        for (uint64_t i = 0; i < left; i++)
            out[i] = row[0];
        memcpy(out + left, row, (size_t)in_x * sizeof(float));
        for (uint64_t i = left + in_x; i < out_x; i++)
            out[i] = row[in_x - 1u];
    }
    dst->quantum = src->quantum;
    dst->quantum_base = src->quantum_base;
    return TRN_OK;
}

/* Prefix sums of n heights read with a stride: sum[k] = h[0] + ... + h[k-1]. */
static void prefix_sums(const float *h, size_t n, size_t stride, double *sum)
{
    sum[0] = 0.0;
    for (size_t k = 0; k < n; k++)
        sum[k + 1] = sum[k] + (double)h[k * stride];
}

/* Mean of positions [c - r, c + r] clamped to [0, n - 1] of a prefix-summed edge. */
static double edge_mean(const double *sum, int64_t n, int64_t c, int64_t r)
{
    int64_t a = c - r, b = c + r;
    if (a < 0) a = 0;
    if (b > n - 1) b = n - 1;
    return (sum[b + 1] - sum[a]) / (double)(b - a + 1);
}

trn_status trn_field_pad_fall(const trn_field *src, uint32_t left, uint32_t bottom, uint32_t right,
                              uint32_t top, double base, trn_field *dst, trn_error *err)
{
    if (!isfinite(base)) {
        if (dst) memset(dst, 0, sizeof *dst);
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "pad: expected a finite base height, found %g", base);
    }
    trn_status st = trn_field_pad(src, left, bottom, right, top, dst, err);
    if (st) return st;
    const int64_t in_x = (int64_t)src->cells_x + 1, in_z = (int64_t)src->cells_z + 1;
    const int64_t out_x = (int64_t)dst->cells_x + 1, out_z = (int64_t)dst->cells_z + 1;
    /* The four edges: the first and last column (along z) and row (along x). */
    double *col0 = malloc(((size_t)in_z + 1u) * sizeof *col0);
    double *col1 = malloc(((size_t)in_z + 1u) * sizeof *col1);
    double *row0 = malloc(((size_t)in_x + 1u) * sizeof *row0);
    double *row1 = malloc(((size_t)in_x + 1u) * sizeof *row1);
    if (!col0 || !col1 || !row0 || !row1) {
        free(col0), free(col1), free(row0), free(row1);
        trn_field_dispose(dst);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "pad: out of memory");
    }
    prefix_sums(src->heights, (size_t)in_z, (size_t)in_x, col0);
    prefix_sums(src->heights + in_x - 1, (size_t)in_z, (size_t)in_x, col1);
    prefix_sums(src->heights, (size_t)in_x, 1, row0);
    prefix_sums(src->heights + (size_t)(in_z - 1) * (size_t)in_x, (size_t)in_x, 1, row1);
    for (int64_t j = 0; j < out_z; j++) {
        const int64_t v = j - (int64_t)bottom;
        const int64_t dv = v < 0 ? -v : (v >= in_z ? v - (in_z - 1) : 0);
        const int64_t cv = v < 0 ? 0 : (v >= in_z ? in_z - 1 : v);
        for (int64_t i = 0; i < out_x; i++) {
            const int64_t u = i - (int64_t)left;
            const int64_t du = u < 0 ? -u : (u >= in_x ? u - (in_x - 1) : 0);
            if (!du && !dv) continue; /* the source itself */
            const int64_t cu = u < 0 ? 0 : (u >= in_x ? in_x - 1 : u);
            const double d = sqrt((double)(du * du + dv * dv));
            const int64_t r = (int64_t)(d / 2.0);
            double edge, fall;
            if (du >= dv) {
                edge = edge_mean(u < 0 ? col0 : col1, in_z, cv, r);
                fall = (double)(u < 0 ? left : right);
            } else {
                edge = edge_mean(v < 0 ? row0 : row1, in_x, cu, r);
                fall = (double)(v < 0 ? bottom : top);
            }
            double t = d / (fall > 0.0 ? fall : 1.0);
            if (t > 1.0) t = 1.0;
            const double w = 1.0 - t * t * (3.0 - 2.0 * t);
            dst->heights[(size_t)j * (size_t)out_x + (size_t)i] = (float)(base + (edge - base) * w);
        }
    }
    free(col0), free(col1), free(row0), free(row1);
    return TRN_OK;
}

uint32_t trn_resample_nearest_pow2(uint32_t samples)
{
    uint64_t p = 2;
    /* Go up while samples is at or past the geometric middle of p and 2p (n^2 >= 2 p^2). */
    while (p < ((uint64_t)1 << 31) && (uint64_t)samples * samples >= 2 * p * p)
        p *= 2;
    return (uint32_t)p;
}

uint32_t trn_resample_nearest_pow2plus1(uint32_t samples)
{
    uint32_t cells = samples > 1 ? samples - 1 : 1;
    return trn_resample_nearest_pow2(cells) + 1u;
}

/* ---- NaN filling ---------------------------------------------------------------------- */

/* One level of the fill pyramid: values and which of them are unknown. Level 0's values are
 * the field's own heights. */
typedef struct fill_level {
    uint32_t w, h;
    float *v;
    uint8_t *hole;
    size_t holes;
} fill_level;

#define FILL_MAX_LEVELS 40
#define FILL_MAX_SWEEPS 400
#define FILL_OMEGA 1.6

/* Coarse level: the mean of each 2 x 2 block's known samples (unknown when it has none). */
static bool fill_coarsen(const fill_level *fine, fill_level *coarse)
{
    coarse->w = (fine->w + 1) / 2;
    coarse->h = (fine->h + 1) / 2;
    size_t n = (size_t)coarse->w * coarse->h;
    coarse->v = malloc(n * sizeof(float));
    coarse->hole = malloc(n);
    coarse->holes = 0;
    if (!coarse->v || !coarse->hole) return false;
    for (uint32_t j = 0; j < coarse->h; j++) {
        for (uint32_t i = 0; i < coarse->w; i++) {
            double sum = 0;
            int count = 0;
            for (uint32_t dj = 0; dj < 2; dj++) {
                uint32_t fj = 2 * j + dj;
                if (fj >= fine->h) break;
                for (uint32_t di = 0; di < 2; di++) {
                    uint32_t fi = 2 * i + di;
                    if (fi >= fine->w) break;
                    size_t k = (size_t)fj * fine->w + fi;
                    if (!fine->hole[k]) {
                        sum += fine->v[k];
                        count++;
                    }
                }
            }
            size_t c = (size_t)j * coarse->w + i;
            coarse->hole[c] = count == 0;
            coarse->v[c] = count ? (float)(sum / count) : 0.0f;
            coarse->holes += count == 0;
        }
    }
    return true;
}

/* Start the unknown samples of fine from the bilinear interpolation of the solved coarse level
 * (cell-centred: fine sample i sits at coarse position (i - 0.5) / 2). */
static void fill_prolong(const fill_level *coarse, fill_level *fine)
{
    for (uint32_t j = 0; j < fine->h; j++) {
        double v = ((double)j - 0.5) / 2.0;
        if (v < 0) v = 0;
        uint32_t j0 = (uint32_t)v;
        if (j0 > coarse->h - 1) j0 = coarse->h - 1;
        uint32_t j1 = j0 + 1 < coarse->h ? j0 + 1 : j0;
        double fj = v - j0;
        if (fj > 1) fj = 1;
        for (uint32_t i = 0; i < fine->w; i++) {
            size_t k = (size_t)j * fine->w + i;
            if (!fine->hole[k]) continue;
            double u = ((double)i - 0.5) / 2.0;
            if (u < 0) u = 0;
            uint32_t i0 = (uint32_t)u;
            if (i0 > coarse->w - 1) i0 = coarse->w - 1;
            uint32_t i1 = i0 + 1 < coarse->w ? i0 + 1 : i0;
            double fi = u - i0;
            if (fi > 1) fi = 1;
            const float *r0 = coarse->v + (size_t)j0 * coarse->w;
            const float *r1 = coarse->v + (size_t)j1 * coarse->w;
            double a = r0[i0] + (r0[i1] - (double)r0[i0]) * fi;
            double b = r1[i0] + (r1[i1] - (double)r1[i0]) * fi;
            fine->v[k] = (float)(a + (b - a) * fj);
        }
    }
}

/* Red-black successive over-relaxation of the Laplace equation over the unknown samples;
 * edges are mirrored (a missing neighbour is left out of the mean). The unknowns are listed
 * once (red then black, each in index order, which is the order a full scan would visit
 * them), so a sweep costs the holes, not the grid. False when the list cannot be allocated. */
static bool fill_relax(fill_level *lv, double tol, double lo, double hi)
{
    uint32_t w = lv->w, h = lv->h;
    size_t n = (size_t)w * h;
    if (lv->holes == 0) return true;
    if (n > UINT32_MAX) return false; /* beyond the 32-bit list (and any limits default) */
    uint32_t *list = malloc(lv->holes * sizeof *list);
    if (!list) return false;
    size_t count = 0;
    for (uint32_t colour = 0; colour < 2; colour++) {
        for (uint32_t j = 0; j < h; j++) {
            const uint8_t *hrow = lv->hole + (size_t)j * w;
            for (uint32_t i = (j + colour) & 1u; i < w; i += 2)
                if (hrow[i]) list[count++] = (uint32_t)((size_t)j * w + i);
        }
    }
    /* Bound the work on huge holes (a DEM that is mostly sea): the multigrid start is already
     * close, and the cap keeps the time proportional to the holes. */
    size_t max_sweeps = FILL_MAX_SWEEPS;
    if (((size_t)1 << 27) / count < max_sweeps) max_sweeps = ((size_t)1 << 27) / count;
    if (max_sweeps < 16) max_sweeps = 16;
    float *v = lv->v;
    for (size_t sweep = 0; sweep < max_sweeps; sweep++) {
        double max_change = 0;
        for (size_t k = 0; k < count; k++) {
            size_t at = list[k];
            uint32_t j = (uint32_t)(at / w), i = (uint32_t)(at - (size_t)j * w);
            double sum = 0;
            int nb = 0;
            if (i > 0) {
                sum += v[at - 1];
                nb++;
            }
            if (i + 1 < w) {
                sum += v[at + 1];
                nb++;
            }
            if (j > 0) {
                sum += v[at - w];
                nb++;
            }
            if (j + 1 < h) {
                sum += v[at + w];
                nb++;
            }
            if (nb == 0) continue; /* a 1 x 1 level */
            /* Over-relaxed: converges several times faster on wide holes. */
            double target = sum / nb;
            double next = v[at] + FILL_OMEGA * (target - v[at]);
            /* Over-relaxation may step past the valid range mid-way (the solution never
             * does); clamping keeps every iterate finite even for heights near FLT_MAX. */
            if (next < lo) next = lo;
            if (next > hi) next = hi;
            float nv = (float)next;
            double change = fabs((double)nv - v[at]);
            if (change > max_change) max_change = change;
            v[at] = nv;
        }
        if (max_change <= tol) break;
    }
    free(list);
    return true;
}

trn_status trn_field_fill_nan(trn_field *field, uint64_t *filled_out, trn_progress_fn progress,
                              void *user, trn_error *err)
{
    if (filled_out) *filled_out = 0;
    if (!field || !field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "fill: empty field");
    size_t n = trn_field_sample_count(field);
    size_t holes = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        float v = field->heights[k];
        if (isnan(v)) {
            holes++;
        } else if (isfinite(v)) {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    if (holes == 0) return TRN_OK;
    if (holes == n)
        return trn_error_set(err, TRN_ERR_FORMAT, NULL, -1,
                             "fill: all %zu samples are NoData; nothing to fill them from", n);
    double tol = hi >= lo ? ((double)hi - lo) * 1e-7 : 0.0;

    fill_level levels[FILL_MAX_LEVELS];
    memset(levels, 0, sizeof levels);
    levels[0].w = field->cells_x + 1u;
    levels[0].h = field->cells_z + 1u;
    levels[0].v = field->heights;
    levels[0].hole = malloc(n);
    levels[0].holes = holes;
    int count = 1;
    trn_status st = TRN_OK;
    if (!levels[0].hole) {
        st =
            trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "fill: out of memory for %zu flags", n);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        levels[0].hole[k] = (uint8_t)isnan(field->heights[k]);
        if (levels[0].hole[k]) field->heights[k] = 0.0f;
    }
    /* Coarsen until a level has no unknowns; the 1 x 1 level always does (some sample is
     * valid), so this ends within log2 of the larger side. */
    while (levels[count - 1].holes > 0 && count < FILL_MAX_LEVELS) {
        if (!fill_coarsen(&levels[count - 1], &levels[count])) {
            count++;
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "fill: out of memory for the coarse levels");
            goto done;
        }
        count++;
    }
    trn_progress prog = trn_progress_make(progress, user);
    for (int k = count - 2; k >= 0; k--) {
        if (trn_progress_report(&prog, 1.0 - (double)(k + 1) / count, "fill NoData")) {
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "fill: cancelled");
            goto done;
        }
        fill_prolong(&levels[k + 1], &levels[k]);
        if (!fill_relax(&levels[k], tol, lo, hi)) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "fill: out of memory for the list of %zu NoData samples",
                               levels[k].holes);
            goto done;
        }
    }
    trn_progress_report(&prog, 1.0, "fill NoData");
    if (filled_out) *filled_out = holes;
done:
    /* On failure the holes are NaN again, so the field is as the caller gave it. */
    if (st && levels[0].hole)
        for (size_t k = 0; k < n; k++)
            if (levels[0].hole[k]) field->heights[k] = NAN;
    free(levels[0].hole);
    for (int k = 1; k < count; k++) {
        free(levels[k].v);
        free(levels[k].hole);
    }
    return st;
}

/* ---- 16-bit height scale ------------------------------------------------------------------- */

trn_status trn_height_scale_from_range(double src_min, double src_max, double dst_min,
                                       double dst_max, trn_height_scale *scale, trn_error *err)
{
    if (!(isfinite(src_min) && isfinite(src_max) && src_min < src_max))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "height scale: the source range %g .. %g m must be finite and "
                             "increasing",
                             src_min, src_max);
    if (!(isfinite(dst_min) && isfinite(dst_max) && dst_min >= 0 && dst_min < dst_max &&
          dst_max <= 65535.0))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "height scale: the stored range %g .. %g must increase within "
                             "0 .. 65535",
                             dst_min, dst_max);
    const double quantum = (src_max - src_min) / (dst_max - dst_min);
    if (!(quantum > 0) || !isfinite(quantum))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "height scale: %g .. %g m over %g .. %g gives no usable step", src_min,
                             src_max, dst_min, dst_max);
    scale->quantum = quantum;
    scale->base = src_min - dst_min * quantum;
    return TRN_OK;
}

void trn_height_scale_stretch(const float *heights, size_t count, trn_height_scale *scale)
{
    float lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < count; k++) {
        const float h = heights[k];
        if (!isfinite(h)) continue;
        if (h < lo) lo = h;
        if (h > hi) hi = h;
    }
    if (!(lo <= hi)) lo = hi = 0.0f;
    scale->base = lo;
    /* A flat field keeps a 1 m span, so maxHeight-style outputs stay positive. */
    scale->quantum = hi > lo ? ((double)hi - (double)lo) / 65535.0 : 1.0 / 65536.0;
}

/* The rounded stored value before clamping; NaN gives NaN. */
static double scale_level(const trn_height_scale *scale, double height)
{
    return floor((height - scale->base) / scale->quantum + 0.5);
}

uint16_t trn_height_scale_store(const trn_height_scale *scale, double height)
{
    const double v = scale_level(scale, height);
    if (!(v > 0)) return 0;
    return v >= 65535.0 ? 65535 : (uint16_t)v;
}

/* Samples below which the levels are counted on the calling thread. */
#define LEVELS_PARALLEL_SAMPLES ((size_t)1 << 15)
/* Blocks counted side by side at most (each holds 272 KiB of tables). */
#define LEVELS_BLOCKS_MOST 8

/* One contiguous block's count as one pass in order gives it: its levels' first heights and its
 * samples unlike their level's first height there. That is the whole array's count wherever a
 * later block's first height on a level equals the array's (the float == on heights that are not
 * NaN is an equivalence, so a sample differs from one exactly when it differs from the other);
 * the other levels are counted again (levels_block_fix). */
typedef struct levels_block {
    uint64_t seen[65536u / 64u];
    uint64_t need[65536u / 64u]; /* levels whose first height differs from the array's */
    float first[65536];
    uint64_t below, above, nan, merged;
    bool any_need;
    uint32_t lo, hi;
} levels_block;

/* The level a height is stored on, or -1 for NaN (NaN, below 0 and above 65535 counted). */
static inline int32_t levels_slot(const trn_height_scale *scale, float h, uint64_t *nan,
                                  uint64_t *below, uint64_t *above)
{
    const double v = scale_level(scale, (double)h);
    if (isnan(v)) {
        (*nan)++;
        return -1;
    }
    if (v < 0) {
        (*below)++;
        return 0;
    }
    if (v > 65535.0) {
        (*above)++;
        return 65535;
    }
    return (int32_t)v;
}

static void levels_block_count(const float *heights, size_t k0, size_t k1,
                               const trn_height_scale *scale, levels_block *b)
{
    memset(b->seen, 0, sizeof b->seen);
    memset(b->need, 0, sizeof b->need);
    b->below = b->above = b->nan = b->merged = 0;
    b->any_need = false;
    b->lo = 65535;
    b->hi = 0;
    for (size_t k = k0; k < k1; k++) {
        const int32_t v = levels_slot(scale, heights[k], &b->nan, &b->below, &b->above);
        if (v < 0) continue;
        const uint32_t s = (uint32_t)v;
        const uint64_t bit = (uint64_t)1 << (s & 63u);
        if (!(b->seen[s >> 6] & bit)) {
            b->seen[s >> 6] |= bit;
            b->first[s] = heights[k];
        } else if (b->first[s] != heights[k]) {
            b->merged++;
        }
        if (s < b->lo) b->lo = s;
        if (s > b->hi) b->hi = s;
    }
}

/* What samples k0 .. k1 of block b change in merged on the levels where b's first height was
 * not the array's: counted against the array's first height, not the block's. */
static int64_t levels_block_fix(const float *heights, size_t k0, size_t k1,
                                const trn_height_scale *scale, const levels_block *b,
                                const float *first)
{
    int64_t fix = 0;
    uint64_t skip = 0;
    for (size_t k = k0; k < k1; k++) {
        const int32_t v = levels_slot(scale, heights[k], &skip, &skip, &skip);
        if (v < 0) continue;
        const uint32_t s = (uint32_t)v;
        if (!(b->need[s >> 6] >> (s & 63u) & 1u)) continue;
        fix += (heights[k] == b->first[s]) - (heights[k] == first[s]);
    }
    return fix;
}

trn_status trn_height_levels_count(const float *heights, size_t count,
                                   const trn_height_scale *scale, trn_height_levels *out,
                                   trn_error *err)
{
    memset(out, 0, sizeof *out);
    int nb = 1;
#ifdef _OPENMP
    if (count >= LEVELS_PARALLEL_SAMPLES && !omp_in_parallel()) nb = omp_get_max_threads();
#endif
    if (nb > LEVELS_BLOCKS_MOST) nb = LEVELS_BLOCKS_MOST;
    /* The first height seen on each stored value in the whole array. */
    float *first = malloc(65536u * sizeof *first);
    levels_block *blocks = malloc((size_t)nb * sizeof *blocks);
    if (!first || !blocks) {
        free(first);
        free(blocks);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "height levels: out of memory for the level tables");
    }
    /* Blocks side by side, each over its own contiguous samples (one per thread). */
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nb) if (nb > 1)
#endif
    for (int b = 0; b < nb; b++)
        levels_block_count(heights, count * (size_t)b / (size_t)nb,
                           count * (size_t)(b + 1) / (size_t)nb, scale, &blocks[b]);
    /* In index order: a level's first height is its first block's; a later block whose own
     * first height there is another counts that level again below. */
    uint32_t lo = 65535, hi = 0;
    bool more = false;
    for (int b = 0; b < nb; b++) {
        const levels_block *k = &blocks[b];
        out->below += k->below;
        out->above += k->above;
        out->nan += k->nan;
        out->merged += k->merged;
        if (k->lo < lo) lo = k->lo;
        if (k->hi > hi) hi = k->hi;
    }
    for (uint32_t w = 0; w < 65536u / 64u; w++) {
        uint64_t taken = 0;
        for (int b = 0; b < nb; b++) {
            levels_block *k = &blocks[b];
            for (uint64_t m = k->seen[w]; m; m &= m - 1u) {
                const uint32_t s = w * 64u + (uint32_t)trn_ctz64(m);
                const uint64_t bit = (uint64_t)1 << (s & 63u);
                if (!(taken & bit)) {
                    taken |= bit;
                    first[s] = k->first[s];
                    out->levels++;
                } else if (k->first[s] != first[s]) {
                    k->need[w] |= bit;
                    k->any_need = true;
                    more = true;
                }
            }
        }
    }
    if (more) {
        /* The samples of the blocks that need it, cut into nb equal parts side by side. */
        size_t at[LEVELS_BLOCKS_MOST + 1], from[LEVELS_BLOCKS_MOST];
        int who[LEVELS_BLOCKS_MOST], nw = 0;
        size_t total = 0;
        for (int b = 0; b < nb; b++) {
            if (!blocks[b].any_need) continue;
            const size_t k0 = count * (size_t)b / (size_t)nb;
            who[nw] = b;
            from[nw] = k0;
            at[nw++] = total;
            total += count * (size_t)(b + 1) / (size_t)nb - k0;
        }
        at[nw] = total;
        int64_t fix[LEVELS_BLOCKS_MOST];
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(nb) if (nb > 1)
#endif
        for (int q = 0; q < nb; q++) {
            const size_t p0 = total * (size_t)q / (size_t)nb;
            const size_t p1 = total * (size_t)(q + 1) / (size_t)nb;
            int64_t c = 0;
            for (int w = 0; w < nw; w++) {
                const size_t a = p0 > at[w] ? p0 : at[w], z = p1 < at[w + 1] ? p1 : at[w + 1];
                if (a < z)
                    c += levels_block_fix(heights, from[w] + (a - at[w]), from[w] + (z - at[w]),
                                          scale, &blocks[who[w]], first);
            }
            fix[q] = c;
        }
        for (int q = 0; q < nb; q++)
            out->merged = (uint64_t)((int64_t)out->merged + fix[q]);
    }
    if (out->levels) {
        out->stored_min = (uint16_t)lo;
        out->stored_max = (uint16_t)hi;
    }
    free(first);
    free(blocks);
    return TRN_OK;
}
