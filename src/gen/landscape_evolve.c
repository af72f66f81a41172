/* Landscape evolution with amplification: stream power on a coarse grid, upsampled by a warped
 * C2 spline, and the input's finer detail returned along the evolved ridges and valleys. */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#define _DEFAULT_SOURCE           /* madvise(MADV_HUGEPAGE) on Linux */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "terrane/landscape.h"
#include "core/rows.h"
#include "core/huge_alloc.h"
#include "gen/stream_power_tiled.h"
#include "terrane/comm.h"
#include "terrane/resample.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static trn_status check_param(trn_error *err, const char *name, bool ok, const char *expect,
                              double found)
{
    if (ok) return TRN_OK;
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "stream power: %s: expected %s, found %.17g", name, expect, found);
}

void trn_evolve_options_default(trn_evolve_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    trn_stream_power_params_default(&o->sp);
    o->coarsen = 1;
    o->detail = 1.0;
    o->channel_area = 1e6;
    o->upsample = TRN_UPSAMPLE_WARPED_SPLINE;
    o->fine_routing = TRN_ROUTING_SAME;
}

/* Cubic B-spline coefficients of a coarse grid (nx x nz samples) that interpolate it: the
 * separable recursive prefilter of Unser, Aldroubi and Eden (1991; pole sqrt 3 - 2, mirror
 * boundaries), rows then columns. The spline through them is C2: its curvature is continuous
 * across the coarse samples, where a Catmull-Rom patch's jumps and leaves a crease every
 * coarse cell. */
static void bspline_line(double *c, size_t n, size_t stride)
{
    if (n < 2) return;
    const double z = 1.7320508075688772 - 2.0, lambda = (1.0 - z) * (1.0 - 1.0 / z);
    for (size_t k = 0; k < n; k++)
        c[k * stride] *= lambda;
    /* The causal start: the mirrored line's sum, cut where z^k is below double precision. */
    size_t horizon = 30;
    if (horizon > n) horizon = n;
    double zk = z, sum = c[0];
    for (size_t k = 1; k < horizon; k++) {
        sum += zk * c[k * stride];
        zk *= z;
    }
    c[0] = sum;
    for (size_t k = 1; k < n; k++)
        c[k * stride] += z * c[(k - 1) * stride];
    c[(n - 1) * stride] =
        (z / (z * z - 1.0)) * (z * c[(n - 2) * stride] + c[(n - 1) * stride]);
    for (size_t k = n - 1; k-- > 0;)
        c[k * stride] = z * (c[(k + 1) * stride] - c[k * stride]);
}

/* Samples from which a per-sample copy is worth waking the threads (a 257^2 grid's copy takes
 * about as long as their wake-up). */
#define EVOLVE_COPY_THREADED ((size_t)1u << 17)

/* coef (nx x nz) from g: the interpolating B-spline's coefficients when prefilter, else g
 * itself (the smoothing B-spline: positive weights, for drainage area and masks, which must
 * not ring below 0). Rows and columns are independent lines, so threads cannot change it. */
static void bspline_coefficients(const float *g, size_t nx, size_t nz, bool prefilter,
                                 double *coef)
{
    const size_t n = nx * nz;
#pragma omp parallel for schedule(static) if (n >= EVOLVE_COPY_THREADED)
    for (size_t k = 0; k < n; k++)
        coef[k] = g[k];
    if (!prefilter) return;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < nz; j++)
        bspline_line(coef + j * nx, nx, 1);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < nx; i++)
        bspline_line(coef + i, nz, nx);
}

/* Cubic B-spline basis weights at t in [0, 1] and their derivatives. */
static void bs_weights(double t, double w[4], double d[4])
{
    const double u = 1.0 - t, t2 = t * t, t3 = t2 * t;
    w[0] = u * u * u / 6.0;
    w[1] = (4.0 - 6.0 * t2 + 3.0 * t3) / 6.0;
    w[2] = (1.0 + 3.0 * t + 3.0 * t2 - 3.0 * t3) / 6.0;
    w[3] = t3 / 6.0;
    d[0] = -0.5 * u * u;
    d[1] = 1.5 * t2 - 2.0 * t;
    d[2] = 0.5 + t - 1.5 * t2;
    d[3] = 0.5 * t2;
}

/* Coarse coordinates clamped to the grid, and the cell holding them (the last cell for the
 * far edge). */
static void coarse_cell(uint32_t cx, uint32_t cz, double *fx, double *fz, int64_t *i, int64_t *j)
{
    if (*fx < 0) *fx = 0;
    if (*fz < 0) *fz = 0;
    if (*fx > cx) *fx = cx;
    if (*fz > cz) *fz = cz;
    *i = (int64_t)*fx;
    *j = (int64_t)*fz;
    if (*i >= (int64_t)cx) *i = (int64_t)cx - 1;
    if (*j >= (int64_t)cz) *j = (int64_t)cz - 1;
}

/* Mirror index into 0..last (the prefilter's boundary). */
static size_t mirror(int64_t i, size_t last)
{
    if (i < 0) i = -i;
    if (i > (int64_t)last) i = 2 * (int64_t)last - i;
    if (i < 0) i = 0;
    return (size_t)i;
}

/* The B-spline of coefficients coef (cx + 1 by cz + 1) at coarse coordinates (fx, fz): its value,
 * and with gx, gz its derivatives per coarse cell. */
static double bspline_at(const double *coef, uint32_t cx, uint32_t cz, double fx, double fz,
                         double *gx, double *gz)
{
    int64_t i, j;
    coarse_cell(cx, cz, &fx, &fz, &i, &j);
    double wx[4], dx[4], wz[4], dz[4];
    bs_weights(fx - (double)i, wx, dx);
    bs_weights(fz - (double)j, wz, dz);
    const size_t nx = (size_t)cx + 1u;
    double v = 0, vx = 0, vz = 0;
    for (int b = 0; b < 4; b++) {
        const size_t jj = mirror(j - 1 + b, cz);
        double row = 0, drow = 0;
        for (int a = 0; a < 4; a++) {
            const double c = coef[jj * nx + mirror(i - 1 + a, cx)];
            row += wx[a] * c;
            drow += dx[a] * c;
        }
        v += wz[b] * row;
        vx += wz[b] * drow;
        vz += dz[b] * row;
    }
    if (gx) *gx = vx;
    if (gz) *gz = vz;
    return v;
}

/* A smooth deterministic warp of the coarse grid's coordinates, in coarse cells: a sum of
 * WARP_WAVES plane waves per axis with directions, wavelengths (24-48 coarse cells) and phases
 * from the seed. Sampling the spline through it bends its knot lines, so what little the
 * spline still varies with the knots (its curvature is piecewise linear) lands at a different
 * phase in every row and column and no crease lines up along the grid (without it the knot
 * period still stood 2-15 times a shuffled profile at 1025^2). The input's detail is sampled
 * through the same warp, so the result is the whole amplified surface warped. The displacement's
 * spread is about 0.5 coarse cell, which damps the knot period's share of an averaged profile
 * to under 1%; its gradient stays under 0.45, so the warp never folds. It fades to 0 over the
 * two coarse cells at each edge, so the border stays the border. */
#define WARP_WAVES 6
typedef struct evolve_warp {
    double kx[2][WARP_WAVES], kz[2][WARP_WAVES], phase[2][WARP_WAVES], amp;
} evolve_warp;

static uint64_t warp_mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void warp_init(evolve_warp *w, uint64_t seed)
{
    const double two_pi = 6.283185307179586;
    uint64_t st = seed ^ 0x5745415250ull; /* "WARP" */
    for (int a = 0; a < 2; a++)
        for (int q = 0; q < WARP_WAVES; q++) {
            const double u1 = (double)(warp_mix(&st) >> 11) * 0x1p-53;
            const double u2 = (double)(warp_mix(&st) >> 11) * 0x1p-53;
            const double u3 = (double)(warp_mix(&st) >> 11) * 0x1p-53;
            /* Directions spread over the half circle (each wave in its own sector). */
            const double ang = (q + u1) * (3.141592653589793 / WARP_WAVES);
            const double k = two_pi / (24.0 + 24.0 * u2);
            w->kx[a][q] = k * cos(ang);
            w->kz[a][q] = k * sin(ang);
            w->phase[a][q] = two_pi * u3;
        }
    /* Each wave's amplitude for a spread (standard deviation) of 0.5 cell per axis. */
    w->amp = 0.5 * sqrt(2.0 / WARP_WAVES);
}

/* The warp's plane waves split by the angle-sum identity, sin(a + b) = sin a cos b +
 * cos a sin b, into a table per column (a = kx fx, with the edge fade along x) and per row
 * (b = kz fz + phase, with the fade along z): a sample then costs a few multiplications, not
 * twelve sines (16.7 million samples at 4097^2). */
typedef struct warp_tables {
    double *col; /* per column: [axis][wave][sin, cos], then the fade along x */
    double *row; /* per row: the same for b, then the fade along z */
    size_t per;  /* doubles per column or row: 2 * WARP_WAVES * 2 + 1 */
} warp_tables;

static double warp_fade(double f, double extent)
{
    double e = f < extent - f ? f : extent - f;
    e = e >= 2.0 ? 1.0 : e <= 0 ? 0.0 : e / 2.0;
    return e * e * (3.0 - 2.0 * e);
}

/* The tables of target columns i0 .. i0 + nx - 1 and rows j0 .. j0 + nz - 1 (entry 0 is i0's). */
static bool warp_tables_part(warp_tables *t, const evolve_warp *w, size_t i0, size_t nx, size_t j0,
                             size_t nz, double sx, double sz, uint32_t cx, uint32_t cz)
{
    t->per = 4u * WARP_WAVES + 1u;
    t->col = malloc(nx * t->per * sizeof *t->col);
    t->row = malloc(nz * t->per * sizeof *t->row);
    if (!t->col || !t->row) {
        free(t->col);
        free(t->row);
        return false;
    }
    for (size_t i = 0; i < nx; i++) {
        double *c = t->col + i * t->per;
        const double fx = (double)(i0 + i) * sx;
        for (int a = 0; a < 2; a++)
            for (int q = 0; q < WARP_WAVES; q++) {
                c[(a * WARP_WAVES + q) * 2] = sin(w->kx[a][q] * fx);
                c[(a * WARP_WAVES + q) * 2 + 1] = cos(w->kx[a][q] * fx);
            }
        c[4 * WARP_WAVES] = warp_fade(fx, (double)cx);
    }
    for (size_t j = 0; j < nz; j++) {
        double *r = t->row + j * t->per;
        const double fz = (double)(j0 + j) * sz;
        for (int a = 0; a < 2; a++)
            for (int q = 0; q < WARP_WAVES; q++) {
                r[(a * WARP_WAVES + q) * 2] = sin(w->kz[a][q] * fz + w->phase[a][q]);
                r[(a * WARP_WAVES + q) * 2 + 1] = cos(w->kz[a][q] * fz + w->phase[a][q]);
            }
        r[4 * WARP_WAVES] = warp_fade(fz, (double)cz);
    }
    return true;
}

static bool warp_tables_init(warp_tables *t, const evolve_warp *w, size_t nx, size_t nz,
                             double sx, double sz, uint32_t cx, uint32_t cz)
{
    return warp_tables_part(t, w, 0, nx, 0, nz, sx, sz, cx, cz);
}

/* Samples a run of a row at a time: the most warp_block takes. */
#define WARP_BLOCK 96u

/* The coarse coordinates (fx[m], fz[m]) moved by the warp of n (at most WARP_BLOCK) fine
 * samples of a row: table column ti + m and row tj, at fine index gi + m and coarse row
 * coordinate fz0. The samples' sums run side by side, where one sample's twelve dependent
 * additions per axis would wait on each other (a warp cost about 25 ns a sample on its own, the
 * additions' latency); a sample's operations do not depend on n, so any run gives its bytes. */
static void warp_block(const evolve_warp *w, const warp_tables *t, size_t ti, size_t tj, size_t n,
                       size_t gi, double sx, double fz0, double *fx, double *fz)
{
    const double *r = t->row + tj * t->per;
    double d0[WARP_BLOCK], d1[WARP_BLOCK];
    for (size_t m = 0; m < n; m++)
        d0[m] = d1[m] = 0;
    for (int q = 0; q < WARP_WAVES; q++) {
        const size_t k0 = (size_t)q * 2u, k1 = (size_t)(WARP_WAVES + q) * 2u;
        const double s0 = r[k0], c0 = r[k0 + 1], s1 = r[k1], c1 = r[k1 + 1];
        for (size_t m = 0; m < n; m++) {
            const double *c = t->col + (ti + m) * t->per;
            d0[m] += c[k0] * c0 + c[k0 + 1] * s0;
            d1[m] += c[k1] * c1 + c[k1 + 1] * s1;
        }
    }
    const double fade_z = r[4 * WARP_WAVES];
    for (size_t m = 0; m < n; m++) {
        const double *c = t->col + (ti + m) * t->per;
        fx[m] = (double)(gi + m) * sx + w->amp * d0[m] * c[4 * WARP_WAVES];
        fz[m] = fz0 + w->amp * d1[m] * fade_z;
    }
}

/* Bilinear value of a coarse grid (cx x cz cells over the same extent) at coarse coordinates. */
static double coarse_at(const float *g, uint32_t cx, uint32_t cz, double fx, double fz)
{
    if (fx < 0) fx = 0;
    if (fz < 0) fz = 0;
    if (fx > cx) fx = cx;
    if (fz > cz) fz = cz;
    uint32_t i = (uint32_t)fx, j = (uint32_t)fz;
    if (i >= cx) i = cx - 1u;
    if (j >= cz) j = cz - 1u;
    const double u = fx - i, v = fz - j;
    const size_t nx = (size_t)cx + 1u;
    const double a = g[(size_t)j * nx + i], b = g[(size_t)j * nx + i + 1];
    const double c = g[(size_t)(j + 1) * nx + i], d = g[(size_t)(j + 1) * nx + i + 1];
    return (a * (1 - u) + b * u) * (1 - v) + (c * (1 - u) + d * u) * v;
}

/* v kept within the corners of the coarse cell around (fx, fz) when one corner is at or below
 * sea (base level); v unchanged elsewhere. */
static double clamp_at_base(const float *g, uint32_t cx, uint32_t cz, double fx, double fz,
                            double sea, double v)
{
    if (fx < 0) fx = 0;
    if (fz < 0) fz = 0;
    uint32_t i = (uint32_t)fx, j = (uint32_t)fz;
    if (i >= cx) i = cx - 1u;
    if (j >= cz) j = cz - 1u;
    const size_t nx = (size_t)cx + 1u;
    const float c[4] = {g[(size_t)j * nx + i], g[(size_t)j * nx + i + 1],
                        g[(size_t)(j + 1) * nx + i], g[(size_t)(j + 1) * nx + i + 1]};
    float lo = c[0], hi = c[0];
    for (int k = 1; k < 4; k++) {
        if (c[k] < lo) lo = c[k];
        if (c[k] > hi) hi = c[k];
    }
    if (lo > sea) return v;
    return v < lo ? lo : v > hi ? hi : v;
}

/* Catmull-Rom weights at t in [0, 1]. */
static void cr_weights(double t, double w[4])
{
    const double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t3 + 2 * t2 - t);
    w[1] = 0.5 * (3 * t3 - 5 * t2 + 2);
    w[2] = 0.5 * (-3 * t3 + 4 * t2 + t);
    w[3] = 0.5 * (t3 - t2);
}

/* Bicubic (Catmull-Rom, edges clamped) value of a coarse grid: C1, so its curvature jumps at
 * every coarse sample (TRN_UPSAMPLE_CUBIC, the earlier method). */
static double coarse_cubic(const float *g, uint32_t cx, uint32_t cz, double fx, double fz)
{
    int64_t i, j;
    coarse_cell(cx, cz, &fx, &fz, &i, &j);
    double wx[4], wz[4];
    cr_weights(fx - (double)i, wx);
    cr_weights(fz - (double)j, wz);
    const size_t nx = (size_t)cx + 1u;
    double v = 0;
    for (int b = 0; b < 4; b++) {
        int64_t jj = j - 1 + b;
        if (jj < 0) jj = 0;
        if (jj > (int64_t)cz) jj = (int64_t)cz;
        double row = 0;
        for (int a = 0; a < 4; a++) {
            int64_t ii = i - 1 + a;
            if (ii < 0) ii = 0;
            if (ii > (int64_t)cx) ii = (int64_t)cx;
            row += wx[a] * g[(size_t)jj * nx + (size_t)ii];
        }
        v += wz[b] * row;
    }
    return v;
}

/* What a level's upsampling reads that does not depend on the run beneath it: the input's
 * detail, input - smooth_before at each fine sample, from the input through the warp and the
 * spline of the coarse grid before the run; and the uplift and erodibility factors on the
 * level's grid, interpolated from the innermost run's (inputs) level by level. The innermost
 * run of a cascade is often too small to split well (trn_sp_one_thread: its crew's threads
 * wait for each other at every pass), so its threads make these for every level in those
 * waits (run_innermost); each level then reads what was made and makes the rest as before,
 * with the same operations in the same order, so the bytes are the same whoever made a value. */
typedef struct evolve_prep {
    const float *heights; /* the level's input */
    uint32_t cells_x, cells_z, cx, cz;
    size_t nx, nz;
    double sx, sz;
    const evolve_warp *warp;
    const warp_tables *wt;
    const double *cb;         /* spline coefficients of the coarse grid before the run */
    /* When rows were made ahead (else NULL): AHEAD_STRIDE doubles a sample, nx * nz samples,
     * the detail and then the warped coarse coordinates (fx, fz), which the level's loop reads
     * instead of warping the sample again for its own splines (one warp a sample, as where the
     * level makes the sample itself). */
    double *detail;
    size_t rows;              /* rows of detail made */
    bool want_masks;          /* the level interpolates the factors */
    float *fm, *fk;           /* the factors on this level's grid, when made ahead */
    size_t mrows;             /* rows of fm and fk made */
    /* The enclosing level's, NULL at the top. */
    struct evolve_prep *outer;
    /* The first of the nz rows made (detail, fm, fk hold rows row0 .. row0 + nz - 1 of the
     * level's grid): 0, or a process's window of rows (trn_spt_window_rows). */
    size_t row0;
    /* Whose the warped positions in detail are: the factors' pieces' where the level's factors
     * are made ahead (the details' pieces then never write them, so no sample is written by two
     * threads), else the details' pieces'. Set before the work ahead starts. */
    bool pos_by_factors;
    /* Pieces of rows of fm and fk made ahead so far (their copies not counted), published by
     * the thread making them: those pieces' warped positions are in detail, so the details'
     * pieces of the same samples read them instead of warping again. */
    atomic_size_t mpieces;
} evolve_prep;

void (*trn_evolve_window_hook)(uint32_t row0, uint32_t row1, size_t bytes) = NULL;

/* An array of the rows made ahead: on 2 MiB pages where it spans several (Linux, transparent
 * huge pages on request), since each fresh 4 KiB page is a fault on its first write, and the
 * 1025^2 level's arrays alone (detail and factors, 16 MiB) added 3,300 of them, about 5% of a
 * generate's CPU on a virtual machine. Freed by free(). */
static void *prep_alloc(size_t bytes)
{
    return trn_huge_alloc(bytes, TRN_HUGE_PAGE);
}

/* Fine sample (i, j)'s detail: the input at the warped position (fx, fz; ux, uz unwarped) less
 * the smoothed coarse input there. */
static double level_detail(const evolve_prep *p, size_t i, size_t j, double ux, double uz,
                           double fx, double fz)
{
    double input = (double)p->heights[j * p->nx + i];
    /* The input through the same warp (Catmull-Rom on the full grid), so the returned detail
     * stays registered with the evolved valleys: the whole result is warped. Warping the
     * evolution's change alone against the unwarped detail left pits where the two disagreed
     * (the Mountain Range at 2049^2: 14% of the area in closed depressions after its erosion
     * instead of 3.9%). */
    if (fx != ux || fz != uz)
        input = coarse_cubic(p->heights, p->cells_x, p->cells_z, fx / p->sx, fz / p->sz);
    return input - bspline_at(p->cb, p->cx, p->cz, fx, fz, NULL, NULL);
}

/* Doubles a sample made ahead holds: its detail, then its warped fx and fz. */
#define AHEAD_STRIDE 3u

/* Samples of a piece of the work made ahead: about 4 us, so a pass posted while a thread
 * makes one waits little for that thread's share. */
#define AHEAD_PIECE 96u
/* A piece (of the details or the factors) is one warp_block. */
_Static_assert(AHEAD_PIECE <= WARP_BLOCK, "a piece made ahead warps in one block");

/* Piece `piece` of the level's details made ahead (samples i0 .. i1 - 1 of row r), with their
 * warped positions: those the factors' piece of the same samples left where it is made, else
 * warped here (and kept, where the factors' pieces do not keep them). */
static void prep_row(evolve_prep *p, size_t piece, size_t r, size_t i0, size_t i1)
{
    const size_t j = p->row0 + r;
    double *made = p->detail + (r * p->nx + i0) * AHEAD_STRIDE;
    if (p->pos_by_factors && atomic_load_explicit(&p->mpieces, memory_order_acquire) > piece) {
        for (size_t i = i0; i < i1; i++, made += AHEAD_STRIDE)
            made[0] = level_detail(p, i, j, (double)i * p->sx, (double)j * p->sz, made[1],
                                   made[2]);
        return;
    }
    double wx[WARP_BLOCK], wz[WARP_BLOCK];
    warp_block(p->warp, p->wt, i0, j, i1 - i0, i0, p->sx, (double)j * p->sz, wx, wz);
    for (size_t i = i0; i < i1; i++, made += AHEAD_STRIDE) {
        made[0] = level_detail(p, i, j, (double)i * p->sx, (double)j * p->sz, wx[i - i0],
                               wz[i - i0]);
        if (p->pos_by_factors) continue;
        made[1] = wx[i - i0];
        made[2] = wz[i - i0];
    }
}
/* Samples of a piece of the factors' coefficients (a copy). */
#define AHEAD_COPY 4096u

size_t trn_evolve_ahead_limit = 0;

/* The work made ahead while the innermost run lasts, in pieces (ahead_piece), by the threads
 * of its crew while they wait: the helpers between passes, the caller for the helpers' shares.
 * First the factors, one piece at a time by whichever thread holds them (mbusy), level by level
 * from the innermost (each level's from those of the level inside it, so a level's start only
 * once the one inside is whole); the other threads, and all once the factors are made, the
 * details of chain's levels, innermost first, by pieces of rows from a shared counter. Whole
 * rows made are kept (evolve_prep's rows and mrows); the levels make the rest. */
typedef struct ahead_work {
    evolve_prep *chain;
    size_t pieces;        /* the details' pieces, every level */
    size_t next;          /* the next detail piece to take (atomic) */
    size_t taken;         /* pieces taken of either kind, against trn_evolve_ahead_limit */
    atomic_bool mleft;    /* factors left to make */
    atomic_flag mbusy;    /* held by the thread making a piece of them; guards what follows */
    evolve_prep *mq;      /* the level whose factors are made; NULL: none left */
    const float *um, *km; /* its coarse grid's factors (either may be NULL) */
    double *cm, *ck;      /* their spline coefficients (a copy: smoothing, no prefilter) */
    size_t mpos;          /* the next piece of mq's: copies, then pieces of rows */
} ahead_work;

/* Pieces of a row of the level. */
static size_t ahead_row_pieces(const evolve_prep *q)
{
    return (q->nx + AHEAD_PIECE - 1u) / AHEAD_PIECE;
}

/* Pieces of the copy of the level's coarse factors into their spline coefficients. */
static size_t ahead_copies(const evolve_prep *q)
{
    return (((size_t)q->cx + 1u) * ((size_t)q->cz + 1u) + AHEAD_COPY - 1u) / AHEAD_COPY;
}

/* The next piece of the factors of w->mq, as the level's loop makes them. */
static void ahead_masks_piece(ahead_work *w)
{
    evolve_prep *q = w->mq;
    const size_t cn = ((size_t)q->cx + 1u) * ((size_t)q->cz + 1u), n = q->nx * q->nz;
    const size_t copies = ahead_copies(q), rp = ahead_row_pieces(q);
    if (w->mpos == 0) {
        w->cm = w->um ? malloc(cn * sizeof *w->cm) : NULL;
        w->ck = w->km ? malloc(cn * sizeof *w->ck) : NULL;
        q->fm = w->um ? prep_alloc(n * sizeof *q->fm) : NULL;
        q->fk = w->km ? prep_alloc(n * sizeof *q->fk) : NULL;
        if ((w->um && (!w->cm || !q->fm)) || (w->km && (!w->ck || !q->fk))) {
            /* Out of memory: the levels from this one make their own factors. */
            free(w->cm);
            free(w->ck);
            free(q->fm);
            free(q->fk);
            w->cm = w->ck = NULL;
            q->fm = q->fk = NULL;
            w->mq = NULL;
            return;
        }
    }
    if (w->mpos < copies) {
        /* bspline_coefficients without the prefilter: the values as doubles. */
        const size_t k0 = w->mpos * AHEAD_COPY, k1 = k0 + AHEAD_COPY < cn ? k0 + AHEAD_COPY : cn;
        for (size_t k = k0; k < k1; k++) {
            if (w->cm) w->cm[k] = w->um[k];
            if (w->ck) w->ck[k] = w->km[k];
        }
    } else {
        const size_t r = (w->mpos - copies) / rp, i0 = (w->mpos - copies) % rp * AHEAD_PIECE;
        const size_t i1 = i0 + AHEAD_PIECE < q->nx ? i0 + AHEAD_PIECE : q->nx;
        const size_t j = q->row0 + r;
        double wx[WARP_BLOCK], wz[WARP_BLOCK];
        warp_block(q->warp, q->wt, i0, j, i1 - i0, i0, q->sx, (double)j * q->sz, wx, wz);
        for (size_t i = i0; i < i1; i++) {
            const double fx = wx[i - i0], fz = wz[i - i0];
            /* Kept for the details' piece of these samples (prep_row). */
            double *made = q->detail + (r * q->nx + i) * AHEAD_STRIDE;
            made[1] = fx;
            made[2] = fz;
            if (w->cm) {
                const double mask = bspline_at(w->cm, q->cx, q->cz, fx, fz, NULL, NULL);
                q->fm[r * q->nx + i] = (float)(mask > 0 ? mask : 0);
            }
            if (w->ck) {
                const double kf = bspline_at(w->ck, q->cx, q->cz, fx, fz, NULL, NULL);
                q->fk[r * q->nx + i] = (float)(kf > 1e-6 ? kf : 1e-6);
            }
        }
        /* A piece of the details has the same samples as a piece of the factors. */
        atomic_store_explicit(&q->mpieces, w->mpos - copies + 1u, memory_order_release);
    }
    if (++w->mpos < copies + q->nz * rp) return;
    /* The level's factors are whole: the next level's come from them. */
    q->mrows = q->nz;
    free(w->cm);
    free(w->ck);
    w->cm = w->ck = NULL;
    w->um = q->fm;
    w->km = q->fk;
    w->mpos = 0;
    w->mq = q->outer && q->outer->want_masks ? q->outer : NULL;
}

/* One piece of the work ahead (a crew's idle work, trn_sp_crew_idle): false when none is
 * left for the calling thread. */
static bool ahead_piece(void *arg)
{
    ahead_work *w = arg;
    if (trn_evolve_ahead_limit) {
        size_t t;
#pragma omp atomic capture
        t = w->taken++;
        if (t >= trn_evolve_ahead_limit) return false;
    }
    if (atomic_load_explicit(&w->mleft, memory_order_relaxed) &&
        !atomic_flag_test_and_set_explicit(&w->mbusy, memory_order_acquire)) {
        const bool left = w->mq != NULL;
        if (left) ahead_masks_piece(w);
        if (!w->mq) atomic_store_explicit(&w->mleft, false, memory_order_relaxed);
        atomic_flag_clear_explicit(&w->mbusy, memory_order_release);
        if (left) return true;
    }
    size_t k;
#pragma omp atomic capture
    k = w->next++;
    if (k >= w->pieces) return false;
    evolve_prep *q = w->chain;
    for (size_t qp = q->nz * ahead_row_pieces(q); k >= qp; qp = q->nz * ahead_row_pieces(q)) {
        k -= qp;
        q = q->outer;
    }
    const size_t rp = ahead_row_pieces(q), i0 = k % rp * AHEAD_PIECE;
    prep_row(q, k, k / rp, i0, i0 + AHEAD_PIECE < q->nx ? i0 + AHEAD_PIECE : q->nx);
    return true;
}

/* The innermost coarse run. Where it runs on one thread and others are free, they join its
 * crew at once and, between its passes, make the details and factors of chain's levels
 * (ahead_work) until the run ends; what is left is made by the levels' own parallel loops, so
 * a slow run costs nothing and a busy machine gets no more work than before (the same values,
 * made earlier). Where the crew is not joined (no core free), they make that work alone while
 * the run lasts, then try to join. */
static trn_status run_innermost(trn_field *coarse, const trn_stream_power_params *sp,
                                evolve_prep *chain, trn_stream_power_report *report,
                                trn_progress_fn progress, void *user, trn_error *err)
{
#ifdef _OPENMP
    const int team = omp_get_max_threads();
    if (chain && team > 1 && !omp_in_parallel() && trn_sp_one_thread(coarse, sp)) {
        ahead_work w;
        memset(&w, 0, sizeof w);
        atomic_init(&w.mleft, false);
        atomic_flag_clear(&w.mbusy);
        w.chain = chain;
        bool ok = true;
        for (evolve_prep *q = chain; q; q = q->outer) {
            /* Pages of rows never made are never touched. */
            q->detail = prep_alloc(q->nx * q->nz * AHEAD_STRIDE * sizeof *q->detail);
            atomic_init(&q->mpieces, 0);
            ok = ok && q->detail;
            w.pieces += q->nz * ahead_row_pieces(q);
        }
        if (ok) {
            trn_status st = TRN_OK;
            int stop = 0;
            w.um = sp->uplift_mask;
            w.km = sp->erodibility_mask;
            w.mq = (w.um || w.km) && chain->want_masks ? chain : NULL;
            atomic_store(&w.mleft, w.mq != NULL);
            /* The levels whose factors are made ahead (ahead_masks_piece's order). */
            bool by_factors = w.mq != NULL;
            for (evolve_prep *q = chain; q; q = q->outer) {
                q->pos_by_factors = by_factors;
                by_factors = by_factors && q->outer && q->outer->want_masks;
            }
            /* NULL (out of memory): the run on one thread, as without helpers. */
            trn_sp_crew *crew = trn_sp_crew_new(team);
            trn_sp_crew_idle(crew, ahead_piece, &w);
#pragma omp parallel num_threads(team)
            {
                if (omp_get_thread_num() == 0) {
                    /* The caller's thread: the run's progress reports come from it as before. */
                    st = trn_stream_power_run_crew(coarse, sp, crew, report, progress, user, err);
#pragma omp atomic write
                    stop = 1;
                } else {
                    trn_sp_crew_help(crew);
                    for (;;) {
                        int done;
#pragma omp atomic read
                        done = stop;
                        if (done || !ahead_piece(&w)) break;
                    }
                    trn_sp_crew_help(crew);
                }
            }
            trn_sp_crew_free(crew);
            /* A level's factors left unfinished: its rows whole are kept. */
            if (w.mq && w.mpos) {
                const size_t copies = ahead_copies(w.mq);
                w.mq->mrows = w.mpos > copies ? (w.mpos - copies) / ahead_row_pieces(w.mq) : 0;
            }
            free(w.cm);
            free(w.ck);
            /* Every piece under the counter was taken, and made before its thread left; rows
             * whole count. */
            size_t made = w.next < w.pieces ? w.next : w.pieces;
            for (evolve_prep *q = chain; q; q = q->outer) {
                const size_t rp = ahead_row_pieces(q), qp = q->nz * rp;
                const size_t mine = made < qp ? made : qp;
                q->rows = mine / rp;
                made -= mine;
            }
            return st;
        }
        for (evolve_prep *q = chain; q; q = q->outer) {
            free(q->detail);
            q->detail = NULL;
        }
    }
#endif
    return trn_stream_power_run(coarse, sp, report, progress, user, err);
}

static trn_status evolve_level(trn_field *field, const trn_evolve_options *o, uint32_t fine_steps,
                               uint64_t seed, uint64_t out_cells, float **umask_out,
                               float **kmask_out, evolve_prep *outer,
                               trn_stream_power_report *report, trn_progress_fn progress,
                               void *user, trn_error *err);

/* The slope (rise over run) of a bed brought back under the water, from the shore down to the
 * floor: about 15 degrees, a lake's or the sea's shoreface. */
#define SHORE_SLOPE 0.27

/* The beds under the sea level come back after a run held at it: where the result is at or
 * below the sea level, min(result, max(bed, floor, sea - SHORE_SLOPE x distance to the nearest
 * sample that did not come back)). The ramp keeps the land's foot from standing as a step above
 * a deep or filled bed (a serrated line along every shore in the shading); it only ever lowers a
 * result to no deeper than its bed. Distances by two chamfer passes (1, sqrt 2 in cells of the
 * true sizes), in raster order, so threads cannot change it. False when out of memory. */
static bool shore_ramp(trn_field *field, const float *bed, double sea, double floor_at)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
    const double dd = sqrt(dx * dx + dz * dz);
    float *dist = malloc(nx * nz * sizeof *dist);
    if (!dist) return false;
    float *h = field->heights;
    const size_t n = nx * nz;
    /* The first and last passes are per sample (threads cannot change them); only the chamfer
     * passes between them run in raster order. */
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n; k++) {
        const double b = (double)bed[k] > floor_at ? (double)bed[k] : floor_at;
        dist[k] = (double)h[k] <= sea && b < (double)h[k] ? INFINITY : 0.0f;
    }
    /* Forward (west and north neighbours), then backward (east and south). */
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            float *d = &dist[j * nx + i];
            if (*d == 0.0f) continue;
            double v = *d;
            if (i > 0 && dist[j * nx + i - 1] + dx < v) v = dist[j * nx + i - 1] + dx;
            if (j > 0) {
                const float *up = &dist[(j - 1) * nx + i];
                if (up[0] + dz < v) v = up[0] + dz;
                if (i > 0 && up[-1] + dd < v) v = up[-1] + dd;
                if (i + 1 < nx && up[1] + dd < v) v = up[1] + dd;
            }
            *d = (float)v;
        }
    for (size_t j = nz; j-- > 0;)
        for (size_t i = nx; i-- > 0;) {
            float *d = &dist[j * nx + i];
            if (*d == 0.0f) continue;
            double v = *d;
            if (i + 1 < nx && dist[j * nx + i + 1] + dx < v) v = dist[j * nx + i + 1] + dx;
            if (j + 1 < nz) {
                const float *down = &dist[(j + 1) * nx + i];
                if (down[0] + dz < v) v = down[0] + dz;
                if (i + 1 < nx && down[1] + dd < v) v = down[1] + dd;
                if (i > 0 && down[-1] + dd < v) v = down[-1] + dd;
            }
            *d = (float)v;
        }
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n; k++) {
        if (dist[k] == 0.0f) continue;
        double b = (double)bed[k] > floor_at ? (double)bed[k] : floor_at;
        const double ramp = sea - SHORE_SLOPE * (double)dist[k]; /* -inf with no shore at all */
        if (ramp > b) b = ramp;
        if (b < (double)h[k]) h[k] = (float)b;
    }
    free(dist);
    return true;
}

trn_status trn_landscape_evolve(trn_field *field, const trn_evolve_options *o,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err)
{
    if (report) memset(report, 0, sizeof *report);
    if (!field || !field->heights || !o)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landscape evolution: a field with heights and options are needed");
    trn_status st;
    if ((st = check_param(err, "coarsen", o->coarsen >= 1 && o->coarsen <= 64, "1..64",
                          (double)o->coarsen)) ||
        (st = check_param(err, "detail", isfinite(o->detail) && o->detail >= 0 && o->detail <= 4,
                          "0..4", o->detail)) ||
        (st = check_param(err, "channel_area", isfinite(o->channel_area) && o->channel_area > 0,
                          "> 0", o->channel_area)) ||
        (st = check_param(err, "fine_steps", o->fine_steps <= 1000, "0..1000",
                          (double)o->fine_steps)) ||
        (st = check_param(err, "upsample",
                          o->upsample == TRN_UPSAMPLE_WARPED_SPLINE ||
                              o->upsample == TRN_UPSAMPLE_CUBIC,
                          "0 (warped spline) or 1 (cubic)", (double)o->upsample)) ||
        (st = check_param(err, "fine_routing",
                          o->fine_routing == TRN_ROUTING_D8 ||
                              o->fine_routing == TRN_ROUTING_RHO8 ||
                              o->fine_routing == TRN_ROUTING_MFD ||
                              o->fine_routing == TRN_ROUTING_SAME,
                          "0 (d8), 1 (rho8), 2 (mfd) or 3 (same)", (double)o->fine_routing)))
        return st;
    if ((st = check_param(err, "cascade_steps", o->cascade_steps <= 1000, "0..1000",
                          (double)o->cascade_steps)))
        return st;
    const double sea = o->sp.sea_level;
    const bool surface = o->sp.sea_surface && isfinite(sea);
    if (o->coarsen == 1 && !surface) {
        trn_stream_power_params sp = o->sp;
        return trn_stream_power_run(field, &sp, report, progress, user, err);
    }
    /* sea_surface: the run (every level of it on a coarser grid) works on the input held at the
     * sea level, so the grids in between see a flat water surface, not a bed whose drop the
     * splines would ring across (a line of one-sample pits and bumps along the shore), and the
     * beds come back once at the end (shore_ramp). */
    const size_t n = trn_field_sample_count(field);
    float *bed = NULL;
    trn_evolve_options held = *o;
    if (surface) {
        bed = malloc(n * sizeof *bed);
        if (!bed)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "landscape evolution: out of memory for the sea bed");
        /* The copy and the hold in one pass on the threads (each faults in its share of bed). */
        float *h = field->heights;
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < n; k++) {
            bed[k] = h[k];
            if ((double)h[k] < sea) h[k] = (float)sea;
        }
        held.sp.sea_surface = false;
        held.fine_bands = NULL; /* shore_ramp reads the whole grid */
    }
    if (o->coarsen == 1) {
        trn_stream_power_params sp = held.sp;
        st = trn_stream_power_run(field, &sp, report, progress, user, err);
    } else {
        st = evolve_level(field, &held, o->fine_steps, o->sp.seed,
                          (uint64_t)field->cells_x * field->cells_z, NULL, NULL, NULL, report,
                          progress, user, err);
    }
    if (surface) {
        if (st) {
            /* As it came (free_input may have let the run free it: then it stays NULL). */
            if (field->heights) memcpy(field->heights, bed, n * sizeof *bed);
        } else if (!shore_ramp(field, bed, sea, trn_sp_surface_floor(&o->sp))) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "landscape evolution: out of memory for the sea bed");
        }
        free(bed);
    }
    return st;
}

/* With fine_tile: a level's fine steps run in tiles when its grid has more than the output
 * grid's cells / TILED_LEVEL_RATIO (trn_evolve_options.fine_tile); the rest on the whole grid. */
#define TILED_LEVEL_RATIO 16u

/* One level of a coarsened run: field evolved o->coarsen times coarser, brought back, then
 * fine_steps steps on field's own grid (warp and fine steps drawn from seed). With
 * o->cascade_steps and an even coarsen of 4 or more, the grid twice as coarse as field's is
 * itself such a level (coarsen / 2, cascade_steps steps on its grid), and field comes back from
 * it: each halving of the cell between the evolution grid and the output adds valleys at its
 * own scale as tributaries of the coarser ones. umask_out / kmask_out (may be NULL) receive the
 * uplift and erodibility factors on field's grid (NULL when there are none). out_cells: the
 * output grid's cells (TILED_LEVEL_RATIO). */
static trn_status evolve_level(trn_field *field, const trn_evolve_options *o, uint32_t fine_steps,
                               uint64_t seed, uint64_t out_cells, float **umask_out,
                               float **kmask_out, evolve_prep *outer,
                               trn_stream_power_report *report, trn_progress_fn progress,
                               void *user, trn_error *err)
{
    trn_status st;
    if (umask_out) *umask_out = NULL;
    if (kmask_out) *kmask_out = NULL;
    float *full_area = o->sp.drainage_area;
    const bool cascade = o->cascade_steps && o->coarsen >= 4 && o->coarsen % 2u == 0;
    const uint32_t c = cascade ? 2u : o->coarsen;
    /* The uplift and erodibility factors on the grid this level comes back from: the
     * evolution grid's, or those the finer cascade level made on its own grid. */
    const float *umask = o->sp.uplift_mask, *ekmask = o->sp.erodibility_mask;
    float *level_umask = NULL, *level_kmask = NULL;
    const bool want_masks = fine_steps || umask_out || kmask_out;
    const uint32_t cx = (field->cells_x + c - 1u) / c, cz = (field->cells_z + c - 1u) / c;
    if (cx < 2 || cz < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landscape evolution: coarsen %u leaves %u x %u samples of a %u x "
                             "%u grid; the coarse grid needs at least 3 x 3",
                             c, cx + 1u, cz + 1u, field->cells_x + 1u, field->cells_z + 1u);
    trn_field coarse;
    if ((st = trn_field_init(&coarse, cx, cz, field->size_x, field->size_z, err))) return st;
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t cnx = (size_t)cx + 1u, cn = cnx * ((size_t)cz + 1u);
    float *before = malloc(cn * sizeof *before), *area = malloc(cn * sizeof *area);
    if (!before || !area) {
        free(before);
        free(area);
        trn_field_dispose(&coarse);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "landscape evolution: out of memory for the coarse grid");
    }
    /* Scale from fine sample index to coarse coordinates, per axis. */
    const double sx = (double)cx / field->cells_x, sz = (double)cz / field->cells_z;
    /* Each coarse sample: the mean of the fine samples whose nearest coarse sample it is. */
    double *sum = malloc(cn * sizeof *sum);
    uint32_t *cnt = malloc(cn * sizeof *cnt);
    size_t *first = malloc(((size_t)cz + 2u) * sizeof *first);
    if (!sum || !cnt || !first) {
        free(sum);
        free(cnt);
        free(first);
        free(before);
        free(area);
        trn_field_dispose(&coarse);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "landscape evolution: out of memory for the coarse grid");
    }
    /* The fine rows of each coarse row: a coarse row's sums are made (and first zeroed, not
     * by a serial calloc) by one thread. */
    trn_rows_nearest_starts(nz, cz, sz, first);
#pragma omp parallel for schedule(dynamic, 4)
    for (size_t cj = 0; cj <= (size_t)cz; cj++) {
        memset(sum + cj * cnx, 0, cnx * sizeof *sum);
        memset(cnt + cj * cnx, 0, cnx * sizeof *cnt);
        for (size_t j = first[cj]; j < first[cj + 1u]; j++)
            for (size_t i = 0; i < nx; i++) {
                const size_t ci = (size_t)floor((double)i * sx + 0.5);
                sum[cj * cnx + ci] += field->heights[j * nx + i];
                cnt[cj * cnx + ci]++;
            }
    }
    free(first);
#pragma omp parallel for schedule(static) if (cn >= EVOLVE_COPY_THREADED)
    for (size_t k = 0; k < cn; k++) {
        const float v = cnt[k] ? (float)(sum[k] / cnt[k]) : 0.0f;
        coarse.heights[k] = v;
        before[k] = v;
    }
    free(sum);
    free(cnt);
    /* The warp and the spline of the grid before the run, made before it: with the input they
     * give this level's detail, which the threads the innermost run leaves free make ahead
     * (evolve_prep). */
    /* The fine steps in tiles: a cascade's level of at most a sixteenth of the output grid's
     * cells runs on the whole grid (the same bytes): its whole-grid state, about 50 bytes a
     * sample, is then about 3 bytes an output sample, under what the output grid's own steps in
     * tiles hold around them, and the tiles' visits and files would cost it several times its
     * CPU. */
    const trn_flow_routing fine_routing =
        o->fine_routing != TRN_ROUTING_SAME ? o->fine_routing : o->sp.routing;
    const bool tiled = fine_steps && o->fine_tile > 0 && fine_routing != TRN_ROUTING_MFD &&
                       !(o->sp.critical_slope > 0) && !(o->sp.creep_slope > 0) &&
                       (uint64_t)field->cells_x * field->cells_z * TILED_LEVEL_RATIO > out_cells;
    /* By bands across processes, each makes and holds only its window of the fine grid's
     * rows (its tiles' with their halo, and its band), and the edges the ring of outlets
     * reads: the surface, its factors and the steps' input are made there only. */
    const bool windowed = tiled && o->fine_comm && o->fine_bands && !umask_out && !kmask_out;
    uint32_t w0 = 0, w1 = (uint32_t)nz;
    if (windowed)
        trn_spt_window_rows(field->cells_x, field->cells_z, o->fine_tile, o->sp.border_outlets,
                            o->fine_comm, o->fine_bands, &w0, &w1);
    const size_t wrows = (size_t)(w1 - w0);
    const bool spline = o->upsample == TRN_UPSAMPLE_WARPED_SPLINE;
    evolve_warp warp;
    warp_tables wt = {NULL, NULL, 0};
    double *cb = NULL;
    evolve_prep prep;
    memset(&prep, 0, sizeof prep);
    st = TRN_OK;
    if (spline) {
        warp_init(&warp, seed);
        cb = malloc(cn * sizeof *cb);
        if (!cb || !warp_tables_init(&wt, &warp, nx, nz, sx, sz, cx, cz)) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "landscape evolution: out of memory for the splines");
        } else {
            bspline_coefficients(before, cnx, (size_t)cz + 1u, true, cb);
            prep = (evolve_prep){field->heights, field->cells_x, field->cells_z, cx, cz, nx,
                                 wrows, sx, sz, &warp, &wt, cb, NULL, 0, want_masks, NULL, NULL,
                                 0, outer, w0, false, 0};
        }
    }
    evolve_prep *chain = spline ? &prep : outer;
    if (st) {
        /* reported above */
    } else if (cascade) {
        trn_evolve_options mid = *o;
        mid.coarsen = o->coarsen / 2u;
        mid.fine_bands = NULL; /* the next level reads this one's result whole */
        mid.sp.drainage_area = area;
        st = evolve_level(&coarse, &mid, o->cascade_steps, seed ^ (0x43415343ull * mid.coarsen),
                          out_cells, &level_umask, &level_kmask, chain, report, progress, user,
                          err);
        umask = level_umask;
        ekmask = level_kmask;
    } else {
        trn_stream_power_params sp = o->sp;
        sp.drainage_area = area;
        st = run_innermost(&coarse, &sp, chain, report, progress, user, err);
    }
    if (!st) {
        const double tan30 = tan(30.0 * 3.14159265358979323846 / 180.0);
        const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        float *out = malloc((wrows ? wrows : 1u) * nx * sizeof *out);
        /* The heights of the field's first and last rows and columns (the ring's). */
        float *edges = windowed ? malloc(2u * (nx + nz) * sizeof *edges) : NULL;
        float *edge[4] = {NULL, NULL, NULL, NULL};
        if (edges) {
            edge[0] = edges;
            edge[1] = edges + nx;
            edge[2] = edges + 2u * nx;
            edge[3] = edges + 2u * nx + nz;
        }
        if (!out || (windowed && !edges)) {
            free(edges);
            free(out);
            out = NULL;
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "landscape evolution: out of memory for the result");
        } else {
            const double sea = o->sp.sea_level;
            const bool base_level = isfinite(sea) && fine_steps;
            /* The splines' coefficients: heights interpolated (prefiltered), drainage area and
             * the uplift mask smoothed (positive weights); those of the grid before the run
             * (cb) are made above. */
            double *ce = NULL, *ca = NULL, *cm = NULL, *ck = NULL;
            const bool kmask = want_masks && ekmask;
            const bool umasked = want_masks && umask;
            /* The factors made ahead (only the spline path makes them): rows 0 .. mrows - 1
             * of the window, masks_ahead where that is all of them. */
            const bool masks_made =
                (umasked || kmask) && (prep.fm != NULL) == umasked && (prep.fk != NULL) == kmask;
            const size_t mrows = masks_made ? prep.mrows : 0;
            const bool masks_ahead = masks_made && mrows >= wrows;
            if (spline) {
                ce = malloc(cn * sizeof *ce);
                ca = malloc(cn * sizeof *ca);
                cm = umasked && !masks_ahead ? malloc(cn * sizeof *cm) : NULL;
                ck = kmask && !masks_ahead ? malloc(cn * sizeof *ck) : NULL;
                if (!ce || !ca || (umasked && !masks_ahead && !cm) ||
                    (kmask && !masks_ahead && !ck)) {
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                       "landscape evolution: out of memory for the splines");
                } else {
                    bspline_coefficients(coarse.heights, cnx, (size_t)cz + 1u, true, ce);
                    bspline_coefficients(area, cnx, (size_t)cz + 1u, false, ca);
                    if (cm)
                        bspline_coefficients(umask, cnx, (size_t)cz + 1u, false, cm);
                    if (ck)
                        bspline_coefficients(ekmask, cnx, (size_t)cz + 1u, false, ck);
                }
            }
            /* World units per coarse cell, to turn the spline's derivatives into slopes. */
            const double cdx = dx / sx, cdz = dz / sz;
            float *fine_mask = NULL, *fine_kmask = NULL;
            if (masks_made) {
                fine_mask = prep.fm;
                fine_kmask = prep.fk;
                prep.fm = prep.fk = NULL;
            }
            if (!st && umasked && !masks_made) {
                fine_mask = malloc((wrows ? wrows : 1u) * nx * sizeof *fine_mask);
                if (!fine_mask)
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                       "landscape evolution: out of memory for the uplift mask");
            }
            if (!st && kmask && !masks_made) {
                fine_kmask = malloc((wrows ? wrows : 1u) * nx * sizeof *fine_kmask);
                if (!fine_kmask)
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                       "landscape evolution: out of memory for the erodibility "
                                       "mask");
            }
            if (!st && trn_evolve_window_hook)
                trn_evolve_window_hook(w0, w1,
                                       wrows * nx * sizeof *out *
                                           (1u + (fine_mask != NULL) + (fine_kmask != NULL)));
            if (!st) {
                /* Every sample of the window's rows, first (the threads share them evenly);
                 * then outside them, by windows, the first and last columns (and rows) only,
                 * for the edges. */
#pragma omp parallel for schedule(static)
                for (size_t r = 0; r < nz; r++) {
                    const size_t q = r - wrows;
                    const size_t j = r < wrows ? w0 + r : q < w0 ? q : w1 + (q - w0);
                    const bool row_in = j >= w0 && j < w1;
                    const bool all = row_in || (windowed && (j == 0 || j + 1u == nz));
                    if (!row_in && !windowed) continue;
                    const bool row_ahead = j >= w0 && j - w0 < prep.rows;
                    /* The row's warped positions are kept with its detail (prep_row): by the
                     * details' pieces, or where the factors' pieces keep them, by those when the
                     * row's factors were made too. */
                    const bool row_pos =
                        row_ahead && (!prep.pos_by_factors || j - w0 < prep.mrows);
                    /* Warped positions of columns b0 .. b1 - 1 (a row not made ahead). */
                    double bx[WARP_BLOCK], bz[WARP_BLOCK];
                    size_t b0 = 0, b1 = 0;
                    for (size_t i = 0; i < nx; i = all || i + 1u == nx ? i + 1u : nx - 1u) {
                        double fx = (double)i * sx, fz = (double)j * sz;
                        double evolved, detail, gx, gz, a, mask = 0, kf = 1;
                        /* The factors of this row were made ahead. */
                        const bool made = j - w0 < mrows;
                        if (spline) {
                            if (row_pos) {
                                /* Made ahead, warped position with it. */
                                const double *ahead =
                                    prep.detail + ((j - w0) * nx + i) * AHEAD_STRIDE;
                                detail = ahead[0];
                                fx = ahead[1];
                                fz = ahead[2];
                            } else {
                                const double ux = fx, uz = fz;
                                if (all) {
                                    if (i >= b1) {
                                        b0 = i;
                                        b1 = nx - i < WARP_BLOCK ? nx : i + WARP_BLOCK;
                                        warp_block(&warp, &wt, b0, j, b1 - b0, b0, sx, uz, bx,
                                                   bz);
                                    }
                                    fx = bx[i - b0];
                                    fz = bz[i - b0];
                                } else {
                                    warp_block(&warp, &wt, i, j, 1, i, sx, uz, &fx, &fz);
                                }
                                detail = row_ahead
                                             ? prep.detail[((j - w0) * nx + i) * AHEAD_STRIDE]
                                             : level_detail(&prep, i, j, ux, uz, fx, fz);
                            }
                            evolved = bspline_at(ce, cx, cz, fx, fz, &gx, &gz);
                            gx /= cdx;
                            gz /= cdz;
                            a = bspline_at(ca, cx, cz, fx, fz, NULL, NULL);
                            if (cm && !made) mask = bspline_at(cm, cx, cz, fx, fz, NULL, NULL);
                            if (ck && !made) kf = bspline_at(ck, cx, cz, fx, fz, NULL, NULL);
                        } else {
                            evolved = coarse_cubic(coarse.heights, cx, cz, fx, fz);
                            detail = (double)field->heights[j * nx + i] -
                                     coarse_cubic(before, cx, cz, fx, fz);
                            /* The gradient from the coarse grid's bilinear patch. */
                            gx = (coarse_at(coarse.heights, cx, cz, fx + 0.5 * sx, fz) -
                                  coarse_at(coarse.heights, cx, cz, fx - 0.5 * sx, fz)) /
                                 dx;
                            gz = (coarse_at(coarse.heights, cx, cz, fx, fz + 0.5 * sz) -
                                  coarse_at(coarse.heights, cx, cz, fx, fz - 0.5 * sz)) /
                                 dz;
                            a = coarse_at(area, cx, cz, fx, fz);
                            if (fine_mask) mask = coarse_at(umask, cx, cz, fx, fz);
                            if (fine_kmask) kf = coarse_at(ekmask, cx, cz, fx, fz);
                        }
                        double slope_w = sqrt(gx * gx + gz * gz) / tan30;
                        if (slope_w > 1) slope_w = 1;
                        double channel = a / o->channel_area;
                        if (channel > 1) channel = 1;
                        double h = evolved + o->detail * detail * slope_w * (1.0 - channel);
                        /* Beside base level the interpolating splines ring (period two coarse
                         * cells, alternating sign) over a flat lake or sea floor, and the
                         * detail with them, centimetres above base level, where the fine
                         * steps would lift every such sample by a step's uplift that its nil
                         * slope cannot erode: concentric terraces around the floor (the
                         * lakeside example's lake bed at 1025^2). Kept within the coarse cell's
                         * corners there. */
                        if (base_level) h = clamp_at_base(coarse.heights, cx, cz, fx, fz, sea, h);
                        if (windowed) {
                            if (j == 0) edge[0][i] = (float)h;
                            if (j + 1u == nz) edge[1][i] = (float)h;
                            if (i == 0) edge[2][j] = (float)h;
                            if (i + 1u == nx) edge[3][j] = (float)h;
                            if (!row_in) continue;
                        }
                        const size_t k = (j - w0) * nx + i;
                        out[k] = (float)h;
                        if (full_area && !fine_steps) full_area[k] = (float)a;
                        if (fine_mask && !made) fine_mask[k] = (float)(mask > 0 ? mask : 0);
                        /* Positive weights of positive values: only rounding could reach 0. */
                        if (fine_kmask && !made) fine_kmask[k] = (float)(kf > 1e-6 ? kf : 1e-6);
                    }
                }
            }
            free(prep.detail);
            prep.detail = NULL;
            free(ce);
            free(ca);
            free(cm);
            free(ck);
            /* Fine steps: the same law on the full grid carves the returned detail into
             * tributaries of the evolved valleys. dt / coarsen and Kd / coarsen keep the coarse
             * run's numbers per cell (d is coarsen times shorter): the implicit weight
             * K dt A^m / d of a channel of a given area and the diffusion number Kd dt / d^2
             * (trn_evolve_options). Uplift as configured, its mask interpolated like the area,
             * so the evolved network stays at its steady state. Run on a view of the result,
             * so a cancelled run leaves the field as it was. */
            if (fine_steps && !st && o->free_input) {
                free(field->heights);
                field->heights = NULL;
            }
            if (fine_steps && !st) {
                trn_field fine = *field;
                fine.heights = out;
                trn_stream_power_params fsp = o->sp;
                fsp.uplift_mask = fine_mask;
                fsp.erodibility_mask = fine_kmask;
                fsp.dt = o->sp.dt / (double)o->coarsen;
                fsp.diffusion = o->sp.diffusion / (double)o->coarsen;
                fsp.steps = fine_steps;
                if (o->fine_routing != TRN_ROUTING_SAME) fsp.routing = o->fine_routing;
                fsp.seed = seed ^ 0x46494E45ull; /* other draws than the coarse run's */
                /* By windows the caller's whole area is written in this process's band only. */
                fsp.drainage_area = full_area && windowed ? full_area + (size_t)w0 * nx : full_area;
                const trn_spt_window win = {w0, w1 - w0, {edge[0], edge[1], edge[2], edge[3]}};
                st = tiled ? trn_stream_power_run_tiled_window(
                                 &fine, &fsp, o->fine_tile, o->fine_dir, o->fine_comm,
                                 o->fine_bands, windowed ? &win : NULL, NULL, NULL, progress,
                                 user, err)
                           : trn_stream_power_run(&fine, &fsp, NULL, progress, user, err);
            }
            free(edges);
            if (windowed && !st) {
                /* The caller reads the band of a whole grid: the band's rows into one whose
                 * other rows are never written (calloc's fresh pages are not resident). */
                const int me = trn_comm_rank(o->fine_comm);
                const size_t b0 = o->fine_bands[me], b1 = o->fine_bands[me + 1];
                float *whole = calloc(nx * nz, sizeof *whole);
                if (!whole) {
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                       "landscape evolution: out of memory for the result");
                } else {
                    if (b1 > b0)
                        memcpy(whole + b0 * nx, out + (b0 - w0) * nx, (b1 - b0) * nx * sizeof *out);
                    free(out);
                    out = whole;
                }
            }
            if (!st && umask_out) {
                *umask_out = fine_mask;
                fine_mask = NULL;
            }
            if (!st && kmask_out) {
                *kmask_out = fine_kmask;
                fine_kmask = NULL;
            }
            free(fine_mask);
            free(fine_kmask);
            if (st) {
                free(out);
            } else {
                free(field->heights); /* NULL when already freed */
                field->heights = out;
                field->quantum = field->quantum_base = 0;
            }
        }
    }
    free(prep.detail); /* when the run failed */
    free(prep.fm);
    free(prep.fk);
    free(wt.col);
    free(wt.row);
    free(cb);
    free(level_umask);
    free(level_kmask);
    free(before);
    free(area);
    trn_field_dispose(&coarse);
    return st;
}

struct trn_spline_surface {
    uint32_t cx, cz;           /* the coarse grid's cells */
    uint32_t cells_x, cells_z; /* the target's */
    double *coef;              /* (cx + 1) x (cz + 1) */
    evolve_warp warp;
};

trn_status trn_spline_surface_make(const trn_field *coarse, uint32_t cells_x, uint32_t cells_z,
                                   uint64_t seed, trn_spline_surface **out, trn_error *err)
{
    *out = NULL;
    if (!coarse || !coarse->heights || coarse->cells_x < 1 || coarse->cells_z < 1 ||
        cells_x < coarse->cells_x || cells_z < coarse->cells_z)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "spline upsampling: a field with heights and a grid at least as fine "
                             "as it are needed");
    const uint32_t cx = coarse->cells_x, cz = coarse->cells_z;
    const size_t cn = ((size_t)cx + 1u) * ((size_t)cz + 1u);
    trn_spline_surface *s = calloc(1, sizeof *s);
    if (s) s->coef = malloc(cn * sizeof *s->coef);
    if (!s || !s->coef) {
        trn_spline_surface_free(s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "spline upsampling: out of memory");
    }
    s->cx = cx;
    s->cz = cz;
    s->cells_x = cells_x;
    s->cells_z = cells_z;
    warp_init(&s->warp, seed);
    bspline_coefficients(coarse->heights, (size_t)cx + 1u, (size_t)cz + 1u, true, s->coef);
    *out = s;
    return TRN_OK;
}

trn_status trn_spline_surface_sample(const trn_spline_surface *s, uint32_t i0, uint32_t j0,
                                     uint32_t samples_x, uint32_t samples_z, float *out,
                                     trn_error *err)
{
    if (!s || !out || samples_x == 0 || samples_z == 0 ||
        (uint64_t)i0 + samples_x > (uint64_t)s->cells_x + 1u ||
        (uint64_t)j0 + samples_z > (uint64_t)s->cells_z + 1u)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "spline upsampling: %u x %u samples at (%u, %u) are not inside the "
                             "target's grid",
                             samples_x, samples_z, i0, j0);
    const uint32_t cx = s->cx, cz = s->cz;
    const size_t nx = samples_x, nz = samples_z;
    const double sx = (double)cx / s->cells_x, sz = (double)cz / s->cells_z;
    /* The warp's tables of the part's columns and rows, each from its target index. */
    warp_tables wt = {NULL, NULL, 0};
    if (!warp_tables_part(&wt, &s->warp, i0, nx, j0, nz, sx, sz, cx, cz))
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "spline upsampling: out of memory");
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < nz; j++)
        for (size_t b = 0; b < nx; b += WARP_BLOCK) {
            const size_t n = nx - b < WARP_BLOCK ? nx - b : WARP_BLOCK;
            const size_t gi = i0 + b, gj = j0 + j;
            double fx[WARP_BLOCK], fz[WARP_BLOCK];
            warp_block(&s->warp, &wt, b, j, n, gi, sx, (double)gj * sz, fx, fz);
            for (size_t m = 0; m < n; m++)
                out[j * nx + b + m] =
                    (float)bspline_at(s->coef, cx, cz, fx[m], fz[m], NULL, NULL);
        }
    free(wt.col);
    free(wt.row);
    return TRN_OK;
}

size_t trn_spline_surface_bytes(const trn_spline_surface *s)
{
    return s ? sizeof *s + ((size_t)s->cx + 1u) * ((size_t)s->cz + 1u) * sizeof(double) : 0u;
}

void trn_spline_surface_free(trn_spline_surface *s)
{
    if (!s) return;
    free(s->coef);
    free(s);
}

trn_status trn_field_upsample_spline(const trn_field *coarse, uint32_t cells_x, uint32_t cells_z,
                                     uint64_t seed, trn_field *out, trn_error *err)
{
    trn_spline_surface *s;
    trn_status st = trn_spline_surface_make(coarse, cells_x, cells_z, seed, &s, err);
    if (st) return st;
    if ((st = trn_field_init(out, cells_x, cells_z, coarse->size_x, coarse->size_z, err))) {
        trn_spline_surface_free(s);
        return st;
    }
    st = trn_spline_surface_sample(s, 0, 0, cells_x + 1u, cells_z + 1u, out->heights, err);
    trn_spline_surface_free(s);
    if (st) trn_field_dispose(out);
    return st;
}
