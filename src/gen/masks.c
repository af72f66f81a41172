/* Mask and height kernels: elevation and slope bands, path and polygon masks, blend and offset. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numtext.h"
#include "core/checked.h"
#include "terrane/generate.h"
#include "terrane/masks.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Tiles of TILE x TILE samples; the segment index lists, per band of TILE rows, the segments
 * that may reach it, so a long segment costs (its rows / TILE) entries. */
#define TILE 8u
/* Influence radii beyond this are clipped for the index only (every sample is then in reach);
 * it keeps radius + coordinate sums finite. Values still use the true width and falloff. */
#define RADIUS_CAP 1e300
/* Relative slack on every pruning bound: far above double rounding (1e-16), so a segment that
 * may be nearest to a sample is never pruned; an extra candidate only costs evaluations. */
#define CLIP_SLACK 1e-9
/* Shewchuk's orient2d filter: (3 + 16 eps) eps with eps = 2^-53 bounds the rounding error of
 * the determinant computed below, so a larger |det| has a certain sign. */
#define ORIENT_ERR ((3.0 + 16.0 * (DBL_EPSILON / 2)) * (DBL_EPSILON / 2))

/* ---- shared shapes and messages ---- */

/* 1 - smoothstep(d / falloff) for a distance d beyond the core; falloff 0 is a hard edge and
 * NaN gives 0. */
static double edge_weight(double d, double falloff)
{
    if (!(falloff > 0.0)) return 0.0;
    const double t = d / falloff;
    if (!(t < 1.0)) return 0.0;
    if (t <= 0.0) return 1.0;
    return 1.0 - t * t * (3.0 - 2.0 * t);
}

/* The band shape of the elevation and slope masks. */
static float band_value(double v, double lo, double hi, double falloff)
{
    if (isnan(v)) return 0.0f;
    if (v >= lo && v <= hi) return 1.0f;
    return (float)edge_weight(v < lo ? lo - v : v - hi, falloff);
}

/* The shortest text that reads back as the same double, so messages say "1e+39" rather than
 * "1.0000000000000001e+39" and never hide a difference. */
static const char *num_text(char *buf, size_t size, double v)
{
    char text[40];
    trn_double_text(v, text);
    snprintf(buf, size, "%s", text);
    return buf;
}

static trn_status bad_number(trn_error *err, const char *what, const char *param,
                             const char *expected, double found)
{
    char t[40];
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s: %s: expected %s, found %s",
                         what, param, expected, num_text(t, sizeof t, found));
}

static trn_status oom(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "%s: out of memory", what);
}

static bool finite_nonneg(double v)
{
    return isfinite(v) && v >= 0.0;
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* A segment that may be nearest to some sample of a tile, with its lower bound. */
typedef struct candidate {
    uint32_t seg;
    double lower; /* distance from the segment's bounding box to the tile */
} candidate;

/* Per-thread scratch, allocated before the parallel loop (no allocation inside it). */
typedef struct row_scratch {
    double *dist2;     /* per sample of a band of rows: squared distance, or slope */
    unsigned char *in; /* per sample of a band of rows: inside the polygon */
    double *crossings; /* per edge: one row's crossings */
    candidate *cands;  /* per segment listed in a band */
    uint32_t *active;  /* per segment listed in a band */
} row_scratch;

static void scratch_free(row_scratch *s, int threads)
{
    if (!s) return;
    for (int t = 0; t < threads; t++) {
        free(s[t].dist2);
        free(s[t].in);
        free(s[t].crossings);
        free(s[t].cands);
        free(s[t].active);
    }
    free(s);
}

/* samples doubles and (optionally) flags, crossings doubles, cands candidates per thread. */
static row_scratch *scratch_new(int threads, size_t samples, bool in, size_t crossings,
                                size_t cands)
{
    row_scratch *s = calloc((size_t)threads, sizeof *s);
    if (!s) return NULL;
    for (int t = 0; t < threads; t++) {
        s[t].dist2 = malloc(samples * sizeof(double));
        s[t].in = in ? malloc(samples) : NULL;
        s[t].crossings = crossings ? malloc(crossings * sizeof(double)) : NULL;
        s[t].cands = cands ? malloc(cands * sizeof(candidate)) : NULL;
        s[t].active = cands ? malloc(cands * sizeof(uint32_t)) : NULL;
        if (!s[t].dist2 || (in && !s[t].in) || (crossings && !s[t].crossings) ||
            (cands && (!s[t].cands || !s[t].active))) {
            scratch_free(s, threads);
            return NULL;
        }
    }
    return s;
}

/* ---- elevation and slope bands ---- */

static trn_status check_band(const char *what, double min, double max, double falloff, double lo,
                             double hi, trn_error *err)
{
    char t0[40], t1[40];
    const char *range = hi > 1e300 ? "a finite number" : "a number in [0, 90]";
    if (!(isfinite(min) && min >= lo && min <= hi)) return bad_number(err, what, "min", range, min);
    if (!(isfinite(max) && max >= lo && max <= hi)) return bad_number(err, what, "max", range, max);
    if (min > max)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: expected min <= max, found min %s > max %s", what,
                             num_text(t0, sizeof t0, min), num_text(t1, sizeof t1, max));
    if (!(finite_nonneg(falloff) && falloff <= hi))
        return bad_number(err, what, "falloff",
                          hi > 1e300 ? "a finite number >= 0" : "a number in [0, 90]", falloff);
    return TRN_OK;
}

static trn_status check_field(const trn_field *field, const char *what, bool need_cells,
                              trn_error *err)
{
    if (!field || !field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: field: expected a field with heights, found %s", what,
                             field ? "no heights" : "NULL");
    if (need_cells && (field->cells_x < 1 || field->cells_z < 1))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: field: expected at least one cell per axis, found %ux%u", what,
                             field->cells_x, field->cells_z);
    if (need_cells && !(isfinite(field->size_x) && field->size_x > 0.0 && isfinite(field->size_z) &&
                        field->size_z > 0.0))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: field: expected a positive finite size, found %g x %g", what,
                             field->size_x, field->size_z);
    return TRN_OK;
}

static trn_status no_out(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "%s: out: expected a mask to fill, found NULL", what);
}

trn_status trn_mask_elevation(const trn_field *field, double min, double max, double falloff,
                              trn_mask *out, trn_error *err)
{
    const char *what = "elevation mask";
    if (out) memset(out, 0, sizeof *out);
    trn_status st = check_field(field, what, false, err);
    if (st == TRN_OK && !out) st = no_out(err, what);
    if (st == TRN_OK) st = check_band(what, min, max, falloff, -HUGE_VAL, HUGE_VAL, err);
    if (st == TRN_OK) st = trn_mask_init(out, field->cells_x, field->cells_z, err);
    if (st != TRN_OK) return st;
    const size_t nx = (size_t)field->cells_x + 1u;
    const long long rows = (long long)field->cells_z + 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long j = 0; j < rows; j++) {
        const float *h = field->heights + (size_t)j * nx;
        float *v = out->values + (size_t)j * nx;
        for (size_t i = 0; i < nx; i++)
            v[i] = band_value((double)h[i], min, max, falloff);
    }
    return TRN_OK;
}

trn_status trn_mask_slope(const trn_field *field, double min_degrees, double max_degrees,
                          double falloff_degrees, trn_mask *out, trn_error *err)
{
    const char *what = "slope mask";
    if (out) memset(out, 0, sizeof *out);
    trn_status st = check_field(field, what, true, err);
    if (st == TRN_OK && !out) st = no_out(err, what);
    if (st == TRN_OK) st = check_band(what, min_degrees, max_degrees, falloff_degrees, 0, 90, err);
    if (st == TRN_OK) st = trn_mask_init(out, field->cells_x, field->cells_z, err);
    if (st != TRN_OK) return st;
    const size_t nx = (size_t)field->cells_x + 1u;
    const int threads = max_threads();
    row_scratch *scratch = scratch_new(threads, nx, false, 0, 0);
    if (!scratch) {
        trn_mask_dispose(out);
        return oom(err, what);
    }
    const long long rows = (long long)field->cells_z + 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (long long j = 0; j < rows; j++) {
        double *slope = scratch[thread_num()].dist2;
        trn_field_slope_row(field, (uint32_t)j, slope);
        float *v = out->values + (size_t)j * nx;
        for (size_t i = 0; i < nx; i++)
            v[i] = band_value(slope[i], min_degrees, max_degrees, falloff_degrees);
    }
    scratch_free(scratch, threads);
    return TRN_OK;
}

/* ---- point lists ---- */

static trn_status say(char *msg, size_t msg_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static trn_status say(char *msg, size_t msg_size, const char *fmt, ...)
{
    if (msg && msg_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, msg_size, fmt, ap);
        va_end(ap);
    }
    return TRN_ERR_INVALID_ARGUMENT;
}

/* True when the orientation of (a, b, c) may be zero: the filter cannot certify its sign.
 * Exactly collinear points always qualify (their computed determinant is within the bound). */
static bool orient_maybe_zero(double ax, double az, double bx, double bz, double cx, double cz)
{
    const double l = (ax - cx) * (bz - cz), r = (az - cz) * (bx - cx);
    const double det = l - r;
    if (det == 0.0) return true;
    /* Opposite signs (or one exact zero) cannot cancel: the sign is certain. */
    if (!((l > 0.0 && r > 0.0) || (l < 0.0 && r < 0.0))) return false;
    return fabs(det) < ORIENT_ERR * fabs(l + r);
}

trn_status trn_points_check(const double *points, uint32_t point_count, uint32_t min_points,
                            bool need_noncollinear, char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    if (point_count < min_points)
        return say(msg, msg_size, "points: expected at least %u [x, z] pairs, found %u", min_points,
                   point_count);
    if (!points && point_count)
        return say(msg, msg_size, "points: expected %u [x, z] pairs, found no array", point_count);
    for (uint32_t k = 0; k < point_count; k++)
        for (uint32_t c = 0; c < 2; c++) {
            const double v = points[2 * (size_t)k + c];
            if (!(isfinite(v) && fabs(v) <= (double)FLT_MAX)) {
                char t[40];
                return say(msg, msg_size,
                           "points[%u][%u]: expected a finite number within the float range, "
                           "found %s",
                           k, c, num_text(t, sizeof t, v));
            }
        }
    if (!need_noncollinear || point_count == 0) return TRN_OK;
    /* The line through the first point and the one farthest from it is the best-conditioned
     * candidate; any point certainly off it makes three noncollinear points. */
    const double x0 = points[0], z0 = points[1];
    double far2 = 0.0;
    uint32_t far = 0;
    for (uint32_t k = 1; k < point_count; k++) {
        const double dx = points[2 * (size_t)k] - x0, dz = points[2 * (size_t)k + 1] - z0;
        const double d2 = dx * dx + dz * dz;
        if (d2 > far2) {
            far2 = d2;
            far = k;
        }
    }
    if (far2 == 0.0) {
        char tx[40], tz[40];
        return say(msg, msg_size,
                   "points: all %u points are at the same position (%s, %s); a polygon needs "
                   "three that are not collinear",
                   point_count, num_text(tx, sizeof tx, x0), num_text(tz, sizeof tz, z0));
    }
    const double x1 = points[2 * (size_t)far], z1 = points[2 * (size_t)far + 1];
    for (uint32_t k = 1; k < point_count; k++)
        if (!orient_maybe_zero(x0, z0, x1, z1, points[2 * (size_t)k], points[2 * (size_t)k + 1]))
            return TRN_OK;
    return say(msg, msg_size,
               "points: all %u points are collinear; a polygon needs three that "
               "are not",
               point_count);
}

/* ---- segment index shared by path and polygon ---- */

/* One segment or edge, endpoints ordered by z then x so that both directions of an edge (and
 * so both windings) compute every crossing and distance identically. */
typedef struct seg {
    double ax, az, bx, bz;
    double ex, ez, len2; /* b - a and its squared length */
    double xlo, xhi;     /* x extent (z extent is az..bz) */
} seg;

typedef struct seg_grid {
    uint32_t cells_x, cells_z; /* the grid's (a window's on a tile) */
    double size_x, size_z;     /* the world's */
    uint32_t world_cells_x, world_cells_z;
    uint32_t x0, z0; /* world sample of the grid's first */
    size_t nx, nz;
    double cell_z;
    double reach; /* influence radius (capped), world units */
    double slack; /* absolute margin on every bound comparison */
    seg *segs;
    uint32_t seg_count;
    size_t bands;       /* bands of TILE rows */
    size_t *band_start; /* bands + 1 offsets into band_segs */
    uint32_t *band_segs;
    size_t band_max; /* the longest band list */
    double *xs;      /* sample x positions */
} seg_grid;

static void seg_grid_free(seg_grid *g)
{
    free(g->segs);
    free(g->band_start);
    free(g->band_segs);
    free(g->xs);
}

static void seg_make(seg *s, double x0, double z0, double x1, double z1)
{
    if (z1 < z0 || (z1 == z0 && x1 < x0)) {
        double t = x0;
        x0 = x1;
        x1 = t;
        t = z0;
        z0 = z1;
        z1 = t;
    }
    s->ax = x0;
    s->az = z0;
    s->bx = x1;
    s->bz = z1;
    s->ex = x1 - x0;
    s->ez = z1 - z0;
    s->len2 = s->ex * s->ex + s->ez * s->ez;
    s->xlo = x0 < x1 ? x0 : x1;
    s->xhi = x0 < x1 ? x1 : x0;
}

/* Squared distance from p to the segment; an endpoint's distance is computed from the
 * endpoint itself, so a vertex is measured alike from both of its edges. */
static double seg_dist2(const seg *s, double px, double pz)
{
    const double qx = px - s->ax, qz = pz - s->az;
    if (s->len2 > 0.0) {
        const double dot = qx * s->ex + qz * s->ez;
        if (dot > 0.0) {
            if (dot >= s->len2) {
                const double rx = px - s->bx, rz = pz - s->bz;
                return rx * rx + rz * rz;
            }
            const double t = dot / s->len2;
            const double rx = qx - t * s->ex, rz = qz - t * s->ez;
            return rx * rx + rz * rz;
        }
    }
    return qx * qx + qz * qz;
}

/* The sample lies on the segment (within the orientation filter's bound). */
static bool seg_touches(const seg *s, double px, double pz)
{
    if (pz < s->az || pz > s->bz || px < s->xlo || px > s->xhi) return false;
    return orient_maybe_zero(s->ax, s->az, s->bx, s->bz, px, pz);
}

/* floor / ceil of v clamped to [-1, cells + 1] before any integer conversion. */
static long long clamp_index(double v, uint32_t cells)
{
    if (!(v > -1.0)) return -1;
    if (v > (double)cells + 1.0) return (long long)cells + 1;
    return (long long)v;
}

/* Drop consecutive duplicates (and, for a ring, last points equal to the first) into pts. */
static uint32_t dedupe(const double *points, uint32_t count, bool ring, double *pts)
{
    uint32_t m = 0;
    for (uint32_t k = 0; k < count; k++) {
        const double x = points[2 * (size_t)k], z = points[2 * (size_t)k + 1];
        if (m > 0 && x == pts[2 * (size_t)m - 2] && z == pts[2 * (size_t)m - 1]) continue;
        pts[2 * (size_t)m] = x;
        pts[2 * (size_t)m + 1] = z;
        m++;
    }
    while (ring && m > 1 && pts[2 * (size_t)m - 2] == pts[0] && pts[2 * (size_t)m - 1] == pts[1])
        m--;
    return m;
}

static trn_status check_grid(const char *what, uint32_t cells_x, uint32_t cells_z, double size_x,
                             double size_z, trn_error *err)
{
    if (cells_x < 1 || cells_z < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: grid: expected at least one cell per axis, found %ux%u", what,
                             cells_x, cells_z);
    if (!(isfinite(size_x) && size_x > 0.0))
        return bad_number(err, what, "size_x", "a positive finite size", size_x);
    if (!(isfinite(size_z) && size_z > 0.0))
        return bad_number(err, what, "size_z", "a positive finite size", size_z);
    return TRN_OK;
}

static double row_z(const seg_grid *g, size_t j)
{
    return (double)(g->z0 + j) * g->size_z / (double)g->world_cells_z;
}

typedef struct seg_key {
    double xlo;
    uint32_t index;
} seg_key;

static int cmp_seg_key(const void *pa, const void *pb)
{
    const seg_key *a = pa, *b = pb;
    if (a->xlo != b->xlo) return a->xlo < b->xlo ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Build segments and the band index over a grid of cells_x x cells_z cells at window w of the
 * world (size_x x size_z over w's world cells). ring closes the polyline. */
static trn_status seg_grid_build(seg_grid *g, const char *what, uint32_t cells_x, uint32_t cells_z,
                                 const trn_sample_window *w, const double *points,
                                 uint32_t point_count, bool ring, double reach, trn_error *err)
{
    memset(g, 0, sizeof *g);
    const double size_x = w->world_size_x, size_z = w->world_size_z;
    g->cells_x = cells_x;
    g->cells_z = cells_z;
    g->size_x = size_x;
    g->size_z = size_z;
    g->world_cells_x = w->world_cells_x;
    g->world_cells_z = w->world_cells_z;
    g->x0 = w->x0;
    g->z0 = w->z0;
    g->nx = (size_t)cells_x + 1u;
    g->nz = (size_t)cells_z + 1u;
    g->cell_z = size_z / (double)w->world_cells_z;
    g->reach = reach < RADIUS_CAP ? reach : RADIUS_CAP;
    double *pts = malloc(2 * (size_t)point_count * sizeof(double));
    g->xs = malloc(g->nx * sizeof(double));
    if (!pts || !g->xs) {
        free(pts);
        seg_grid_free(g);
        return oom(err, what);
    }
    const uint32_t m = dedupe(points, point_count, ring, pts);
    double mag = size_x > size_z ? size_x : size_z;
    for (size_t k = 0; k < 2 * (size_t)m; k++)
        if (fabs(pts[k]) > mag) mag = fabs(pts[k]);
    g->slack = CLIP_SLACK * (mag + g->reach);
    /* A path of one distinct point is a disc: one zero-length segment. */
    g->seg_count = ring ? m : (m > 1 ? m - 1 : 1);
    g->segs = malloc((size_t)g->seg_count * sizeof(seg));
    g->bands = (g->nz + TILE - 1) / TILE;
    g->band_start = calloc(g->bands + 1, sizeof(size_t));
    if (!g->segs || !g->band_start) {
        free(pts);
        seg_grid_free(g);
        return oom(err, what);
    }
    for (uint32_t k = 0; k < g->seg_count; k++) {
        const uint32_t k1 = m > 1 ? (k + 1) % m : 0;
        seg_make(&g->segs[k], pts[2 * (size_t)k], pts[2 * (size_t)k + 1], pts[2 * (size_t)k1],
                 pts[2 * (size_t)k1 + 1]);
    }
    free(pts);
    for (size_t x = 0; x < g->nx; x++)
        g->xs[x] = (double)(g->x0 + x) * size_x / (double)w->world_cells_x;

    /* Count, then fill, each segment's band range: a superset (a row of margin each side) of
     * the rows within reach of it. */
    const double margin = g->reach + g->slack + g->cell_z;
    for (int pass = 0; pass < 2; pass++) {
        size_t *fill = NULL;
        if (pass == 1) {
            size_t total = 0;
            for (size_t b = 0; b < g->bands; b++) {
                const size_t c = g->band_start[b];
                if (c > g->band_max) g->band_max = c;
                g->band_start[b] = total;
                if (!trn_add_size(total, c, &total)) {
                    seg_grid_free(g);
                    return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                                         "%s: segment index too large", what);
                }
            }
            g->band_start[g->bands] = total;
            g->band_segs = malloc((total ? total : 1) * sizeof(uint32_t));
            fill = calloc(g->bands, sizeof(size_t));
            if (!g->band_segs || !fill) {
                free(fill);
                seg_grid_free(g);
                return oom(err, what);
            }
        }
        for (uint32_t k = 0; k < g->seg_count; k++) {
            const seg *s = &g->segs[k];
            /* World rows, then the window's (a superset either way). */
            const long long j0 = clamp_index(floor((s->az - margin) / g->cell_z) - 1.0,
                                             w->world_cells_z) -
                                 (long long)g->z0;
            const long long j1 = clamp_index(ceil((s->bz + margin) / g->cell_z) + 1.0,
                                             w->world_cells_z) -
                                 (long long)g->z0;
            if (j1 < 0 || j0 > (long long)cells_z) continue;
            const size_t b0 = j0 < 0 ? 0 : (size_t)j0 / TILE;
            const size_t b1 = (j1 > (long long)cells_z ? (size_t)cells_z : (size_t)j1) / TILE;
            for (size_t b = b0; b <= b1; b++) {
                if (pass == 0)
                    g->band_start[b]++;
                else
                    g->band_segs[g->band_start[b] + fill[b]++] = k;
            }
        }
        free(fill);
    }
    /* Each band's list by left end (then index), for band_distances' sweep. */
    seg_key *keys = malloc((g->band_max ? g->band_max : 1) * sizeof *keys);
    if (!keys) {
        seg_grid_free(g);
        return oom(err, what);
    }
    for (size_t b = 0; b < g->bands; b++) {
        uint32_t *list = g->band_segs + g->band_start[b];
        const size_t n = g->band_start[b + 1] - g->band_start[b];
        for (size_t k = 0; k < n; k++) {
            keys[k].xlo = g->segs[list[k]].xlo;
            keys[k].index = list[k];
        }
        qsort(keys, n, sizeof *keys, cmp_seg_key);
        for (size_t k = 0; k < n; k++)
            list[k] = keys[k].index;
    }
    free(keys);
    return TRN_OK;
}

/* Minimum squared distance of each sample of band `band` (rows band*TILE.., rows_in_band x nx
 * in dist2) to the segments, tile by tile; samples with skip set are left at INFINITY, and so
 * are samples beyond reach of every segment (or set to a distance beyond reach).
 * A sweep along x keeps the band's segments whose bounding box comes within reach of the tile
 * (the band's list is sorted by left end; active is scratch). Of those, the one
 * whose box is nearest gives U, the distance from it to the farthest tile corner (distance to a
 * segment is convex, so its maximum over the tile is at a corner): no sample of the tile is
 * farther than U from its nearest segment, so a segment whose box lies farther than min(U,
 * reach) from the tile can be nearest to no sample that matters, and each sample only scans the
 * segments near it. Candidates depend only on the tile, never on threads, and the minimum does
 * not depend on order. */
static void band_distances(const seg_grid *g, size_t band, const unsigned char *skip, double *dist2,
                           uint32_t *active, candidate *cands)
{
    const uint32_t *order = g->band_segs + g->band_start[band];
    const size_t listed = g->band_start[band + 1] - g->band_start[band];
    const size_t j0 = band * TILE, j1 = j0 + TILE < g->nz ? j0 + TILE : g->nz;
    const size_t rows = j1 - j0;
    for (size_t k = 0; k < rows * g->nx; k++)
        dist2[k] = INFINITY;
    const double z0 = row_z(g, j0), z1 = row_z(g, j1 - 1);
    double zs[TILE];
    for (size_t r = 0; r < rows; r++)
        zs[r] = row_z(g, j0 + r);
    const double reach = g->reach + g->slack;
    size_t next = 0, live = 0;
    for (size_t i0 = 0; i0 < g->nx; i0 += TILE) {
        const size_t i1 = i0 + TILE < g->nx ? i0 + TILE : g->nx;
        const double x0 = g->xs[i0], x1 = g->xs[i1 - 1];
        /* Tiles advance in x: segments join once their left end is in reach and leave for
         * good once their right end is behind. */
        while (next < listed && g->segs[order[next]].xlo - reach <= x1)
            active[live++] = order[next++];
        size_t stay = 0;
        for (size_t e = 0; e < live; e++)
            if (g->segs[active[e]].xhi + reach >= x0) active[stay++] = active[e];
        live = stay;
        if (!live) continue;
        if (skip) {
            bool all = true;
            for (size_t r = 0; r < rows && all; r++)
                for (size_t i = i0; i < i1 && all; i++)
                    all = skip[r * g->nx + i] != 0;
            if (all) continue;
        }
        size_t n = 0, nearest = 0;
        for (size_t e = 0; e < live; e++) {
            const seg *s = &g->segs[active[e]];
            const double dx = s->xlo > x1 ? s->xlo - x1 : (x0 > s->xhi ? x0 - s->xhi : 0.0);
            const double dz = s->az > z1 ? s->az - z1 : (z0 > s->bz ? z0 - s->bz : 0.0);
            const double lower = sqrt(dx * dx + dz * dz);
            if (lower > reach) continue;
            if (n == 0 || lower < cands[nearest].lower) nearest = n;
            cands[n].seg = active[e];
            cands[n].lower = lower;
            n++;
        }
        if (!n) continue;
        const seg *s = &g->segs[cands[nearest].seg];
        double far2 = seg_dist2(s, x0, z0), d2;
        if ((d2 = seg_dist2(s, x1, z0)) > far2) far2 = d2;
        if ((d2 = seg_dist2(s, x0, z1)) > far2) far2 = d2;
        if ((d2 = seg_dist2(s, x1, z1)) > far2) far2 = d2;
        const double upper = sqrt(far2);
        const double limit = (upper < g->reach ? upper : g->reach) * (1.0 + CLIP_SLACK) + g->slack;
        size_t kept = 0;
        for (size_t c = 0; c < n; c++)
            if (cands[c].lower <= limit) cands[kept++] = cands[c];
        for (size_t r = 0; r < rows; r++) {
            const double z = zs[r];
            double *drow = dist2 + r * g->nx;
            const unsigned char *srow = skip ? skip + r * g->nx : NULL;
            for (size_t c = 0; c < kept; c++) {
                const seg *t = &g->segs[cands[c].seg];
                for (size_t i = i0; i < i1; i++) {
                    if (srow && srow[i]) continue;
                    double dd = seg_dist2(t, g->xs[i], z);
                    if (dd > 0.0 && seg_touches(t, g->xs[i], z)) dd = 0.0;
                    if (dd < drow[i]) drow[i] = dd;
                }
            }
        }
    }
}

/* ---- path ---- */

static trn_sample_window whole_world(uint32_t cells_x, uint32_t cells_z, double size_x,
                                     double size_z)
{
    trn_sample_window w;
    memset(&w, 0, sizeof w);
    w.world_cells_x = cells_x;
    w.world_cells_z = cells_z;
    w.world_size_x = size_x;
    w.world_size_z = size_z;
    return w;
}

/* The window lies inside its world and the world's grid is sound. */
static trn_status check_window(const char *what, uint32_t cells_x, uint32_t cells_z,
                               const trn_sample_window *w, trn_error *err)
{
    trn_status st = check_grid(what, cells_x, cells_z, w->world_size_x, w->world_size_z, err);
    if (st == TRN_OK &&
        (w->world_cells_x < 1 || w->world_cells_z < 1 || w->x0 > w->world_cells_x ||
         w->z0 > w->world_cells_z || cells_x > w->world_cells_x - w->x0 ||
         cells_z > w->world_cells_z - w->z0))
        st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                           "%s: the %ux%u-cell window at (%u, %u) does not lie inside the "
                           "%ux%u-cell world",
                           what, cells_x, cells_z, w->x0, w->z0, w->world_cells_x,
                           w->world_cells_z);
    return st;
}

trn_status trn_mask_path(uint32_t cells_x, uint32_t cells_z, double size_x, double size_z,
                         const double *points, uint32_t point_count, double width, double falloff,
                         trn_mask *out, trn_error *err)
{
    const trn_sample_window w = whole_world(cells_x, cells_z, size_x, size_z);
    return trn_mask_path_window(cells_x, cells_z, &w, points, point_count, width, falloff, out,
                                err);
}

trn_status trn_mask_path_window(uint32_t cells_x, uint32_t cells_z, const trn_sample_window *w,
                                const double *points, uint32_t point_count, double width,
                                double falloff, trn_mask *out, trn_error *err)
{
    const char *what = "path mask";
    if (out) memset(out, 0, sizeof *out);
    if (!out) return no_out(err, what);
    trn_status st = check_window(what, cells_x, cells_z, w, err);
    if (st != TRN_OK) return st;
    char msg[256];
    if (trn_points_check(points, point_count, 2, false, msg, sizeof msg) != TRN_OK)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s: %s", what, msg);
    if (!finite_nonneg(width))
        return bad_number(err, what, "width", "a finite half width >= 0", width);
    if (!finite_nonneg(falloff))
        return bad_number(err, what, "falloff", "a finite number >= 0", falloff);
    st = trn_mask_init(out, cells_x, cells_z, err);
    if (st != TRN_OK) return st;
    seg_grid g;
    st = seg_grid_build(&g, what, cells_x, cells_z, w, points, point_count, false,
                        width + falloff, err);
    if (st != TRN_OK) {
        trn_mask_dispose(out);
        return st;
    }
    const int threads = max_threads();
    row_scratch *scratch = scratch_new(threads, TILE * g.nx, false, 0, g.band_max);
    if (!scratch) {
        seg_grid_free(&g);
        trn_mask_dispose(out);
        return oom(err, what);
    }
    const long long bands = (long long)g.bands;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (long long b = 0; b < bands; b++) {
        row_scratch *s = &scratch[thread_num()];
        band_distances(&g, (size_t)b, NULL, s->dist2, s->active, s->cands);
        const size_t j0 = (size_t)b * TILE, j1 = j0 + TILE < g.nz ? j0 + TILE : g.nz;
        float *v = out->values + j0 * g.nx;
        for (size_t k = 0; k < (j1 - j0) * g.nx; k++) {
            const double d = sqrt(s->dist2[k]);
            v[k] = d <= width ? 1.0f : (float)edge_weight(d - width, falloff);
        }
    }
    scratch_free(scratch, threads);
    seg_grid_free(&g);
    return TRN_OK;
}

/* ---- polygon ---- */

static void sort_doubles(double *v, size_t n)
{
    /* Insertion sort: rows usually cross a handful of edges. Equal values are interchangeable,
     * so the sorted sequence is the same whatever the input order. */
    for (size_t k = 1; k < n; k++) {
        const double x = v[k];
        size_t m = k;
        while (m > 0 && v[m - 1] > x) {
            v[m] = v[m - 1];
            m--;
        }
        v[m] = x;
    }
}

static int cmp_double(const void *pa, const void *pb)
{
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Even-odd inside flags of row j from its edge crossings (half-open in z). */
static void row_inside(const seg_grid *g, size_t j, double *cross, unsigned char *in)
{
    const double z = row_z(g, j);
    size_t n = 0;
    const size_t band = j / TILE;
    for (size_t e = g->band_start[band]; e < g->band_start[band + 1]; e++) {
        const seg *s = &g->segs[g->band_segs[e]];
        if (!(s->ez > 0.0 && s->az <= z && z < s->bz)) continue;
        cross[n++] = s->ax + (z - s->az) * s->ex / s->ez;
    }
    if (n <= 32)
        sort_doubles(cross, n);
    else
        qsort(cross, n, sizeof *cross, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < g->nx; i++) {
        while (k < n && cross[k] < g->xs[i])
            k++;
        in[i] = (unsigned char)(k & 1u);
    }
}

trn_status trn_mask_polygon(uint32_t cells_x, uint32_t cells_z, double size_x, double size_z,
                            const double *points, uint32_t point_count, double falloff,
                            trn_mask *out, trn_error *err)
{
    const trn_sample_window w = whole_world(cells_x, cells_z, size_x, size_z);
    return trn_mask_polygon_window(cells_x, cells_z, &w, points, point_count, falloff, out, err);
}

trn_status trn_mask_polygon_window(uint32_t cells_x, uint32_t cells_z, const trn_sample_window *w,
                                   const double *points, uint32_t point_count, double falloff,
                                   trn_mask *out, trn_error *err)
{
    const char *what = "polygon mask";
    if (out) memset(out, 0, sizeof *out);
    if (!out) return no_out(err, what);
    trn_status st = check_window(what, cells_x, cells_z, w, err);
    if (st != TRN_OK) return st;
    char msg[256];
    if (trn_points_check(points, point_count, 3, true, msg, sizeof msg) != TRN_OK)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s: %s", what, msg);
    if (!finite_nonneg(falloff))
        return bad_number(err, what, "falloff", "a finite number >= 0", falloff);
    st = trn_mask_init(out, cells_x, cells_z, err);
    if (st != TRN_OK) return st;
    seg_grid g;
    st = seg_grid_build(&g, what, cells_x, cells_z, w, points, point_count, true, falloff, err);
    if (st != TRN_OK) {
        trn_mask_dispose(out);
        return st;
    }
    const int threads = max_threads();
    row_scratch *scratch = scratch_new(threads, TILE * g.nx, true, g.band_max, g.band_max);
    if (!scratch) {
        seg_grid_free(&g);
        trn_mask_dispose(out);
        return oom(err, what);
    }
    const long long bands = (long long)g.bands;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (long long b = 0; b < bands; b++) {
        row_scratch *s = &scratch[thread_num()];
        const size_t j0 = (size_t)b * TILE, j1 = j0 + TILE < g.nz ? j0 + TILE : g.nz;
        for (size_t j = j0; j < j1; j++)
            row_inside(&g, j, s->crossings, s->in + (j - j0) * g.nx);
        band_distances(&g, (size_t)b, s->in, s->dist2, s->active, s->cands);
        float *v = out->values + j0 * g.nx;
        for (size_t k = 0; k < (j1 - j0) * g.nx; k++) {
            if (s->in[k] || s->dist2[k] == 0.0)
                v[k] = 1.0f;
            else
                v[k] = (float)edge_weight(sqrt(s->dist2[k]), falloff);
        }
    }
    scratch_free(scratch, threads);
    seg_grid_free(&g);
    return TRN_OK;
}

/* ---- heights ---- */

/* A mask value as a weight: clamped to [0, 1], NaN as 0, no mask as 1. */
static double mask_weight(const float *mask, size_t k)
{
    if (!mask) return 1.0;
    const double m = (double)mask[k];
    if (!(m > 0.0)) return 0.0;
    return m < 1.0 ? m : 1.0;
}

trn_status trn_heights_blend(const float *a, const float *b, const float *mask, double amount,
                             size_t count, float *out, trn_error *err)
{
    if (count && (!a || !b || !out))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "height blend: expected heights a, b and an output of %zu samples, "
                             "found NULL %s",
                             count, !a ? "a" : (!b ? "b" : "out"));
    if (!(isfinite(amount) && amount >= 0.0 && amount <= 1.0))
        return bad_number(err, "height blend", "amount", "a number in [0, 1]", amount);
    const long long n = (long long)count;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count >= 65536)
#endif
    for (long long k = 0; k < n; k++) {
        const double w = amount * mask_weight(mask, (size_t)k);
        const float fa = a[k], fb = b[k];
        /* The end points exactly, even where b - a would round in double. */
        if (w == 0.0)
            out[k] = fa;
        else if (w == 1.0)
            out[k] = fb;
        else
            out[k] = (float)((double)fa + ((double)fb - (double)fa) * w);
    }
    return TRN_OK;
}

trn_status trn_heights_offset(const float *a, const float *mask, double offset, size_t count,
                              float *out, trn_error *err)
{
    if (count && (!a || !out))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "height offset: expected heights a and an output of %zu samples, "
                             "found NULL %s",
                             count, !a ? "a" : "out");
    if (!(isfinite(offset) && fabs(offset) <= (double)FLT_MAX))
        return bad_number(err, "height offset", "offset", "a finite number within the float range",
                          offset);
    const long long n = (long long)count;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count >= 65536)
#endif
    for (long long k = 0; k < n; k++) {
        double r = (double)a[k] + offset * mask_weight(mask, (size_t)k);
        /* Saturate finite sums so finite heights stay finite (float conversion would give
         * infinity); infinite or NaN inputs pass through. */
        if (isfinite(r)) {
            if (r > (double)FLT_MAX) r = (double)FLT_MAX;
            if (r < -(double)FLT_MAX) r = -(double)FLT_MAX;
        }
        out[k] = (float)r;
    }
    return TRN_OK;
}

/* ---- natural outlines ---- */

/* Bilinear sample of a mask at world grid coordinates (u, v), clamped to the world's grid of
 * w; m is the window of it at (w->x0, w->z0), which must hold the four samples read (the
 * caller's halo; they are clamped into the window when it does not). */
static double mask_bilinear(const trn_mask *m, const trn_sample_window *w, double u, double v)
{
    const double umax = (double)w->world_cells_x, vmax = (double)w->world_cells_z;
    u = u < 0.0 ? 0.0 : (u > umax ? umax : u);
    v = v < 0.0 ? 0.0 : (v > vmax ? vmax : v);
    size_t i = (size_t)u, j = (size_t)v;
    if (i >= w->world_cells_x) i = w->world_cells_x - 1u;
    if (j >= w->world_cells_z) j = w->world_cells_z - 1u;
    const double fu = u - (double)i, fv = v - (double)j;
    /* Into the window (never outside it, whatever the halo). */
    i = i < w->x0 ? 0u : i - w->x0;
    j = j < w->z0 ? 0u : j - w->z0;
    if (i >= m->cells_x) i = m->cells_x - 1u;
    if (j >= m->cells_z) j = m->cells_z - 1u;
    const size_t nx = (size_t)m->cells_x + 1u;
    const float *p = m->values + j * nx + i;
    const double a = p[0] + (p[1] - (double)p[0]) * fu;
    const double b = p[nx] + (p[nx + 1] - (double)p[nx]) * fu;
    return a + (b - a) * fv;
}

trn_status trn_mask_warp(const trn_mask *in, double size_x, double size_z, double amplitude,
                         double feature_size, uint32_t octaves, uint64_t seed, trn_mask *out,
                         trn_error *err)
{
    const trn_sample_window w =
        whole_world(in ? in->cells_x : 0u, in ? in->cells_z : 0u, size_x, size_z);
    return trn_mask_warp_window(in, &w, amplitude, feature_size, octaves, seed, out, err);
}

trn_status trn_mask_warp_window(const trn_mask *in, const trn_sample_window *w, double amplitude,
                                double feature_size, uint32_t octaves, uint64_t seed,
                                trn_mask *out, trn_error *err)
{
    const char *what = "mask warp";
    if (out) memset(out, 0, sizeof *out);
    if (!out) return no_out(err, what);
    if (!in || !in->values)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: expected a mask with values, found NULL", what);
    trn_status st = check_window(what, in->cells_x, in->cells_z, w, err);
    if (st != TRN_OK) return st;
    if (!finite_nonneg(amplitude) || amplitude > (double)FLT_MAX)
        return bad_number(err, what, "amplitude", "a finite number of world units >= 0",
                          amplitude);
    if (!(isfinite(feature_size) && feature_size > 0.0))
        return bad_number(err, what, "feature_size", "a positive finite number of world units",
                          feature_size);
    if (octaves < 1 || octaves > 16)
        return bad_number(err, what, "octaves", "a whole number from 1 to 16", octaves);
    st = trn_mask_init(out, in->cells_x, in->cells_z, err);
    if (st != TRN_OK) return st;
    const size_t nx = (size_t)in->cells_x + 1u, nz = (size_t)in->cells_z + 1u;
    if (amplitude == 0.0) {
        memcpy(out->values, in->values, nx * nz * sizeof *out->values);
        return TRN_OK;
    }
    const double dx = w->world_size_x / (double)w->world_cells_x,
                 dz = w->world_size_z / (double)w->world_cells_z;
    /* Two independent fbm channels displace x and z; their [0, 1] values centred on 0.5. */
    const uint64_t seed_x = seed ^ 0x6d61736b2d77782dull, seed_z = seed ^ 0x6d61736b2d777a2dull;
    float *rows = malloc(2 * nx * (size_t)max_threads() * sizeof *rows);
    if (!rows) {
        trn_mask_dispose(out);
        return oom(err, what);
    }
    const long long last = (long long)nz;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long j = 0; j < last; j++) {
#ifdef _OPENMP
        float *wx = rows + 2 * nx * (size_t)omp_get_thread_num();
#else
        float *wx = rows;
#endif
        float *wz = wx + nx;
        const size_t jw = (size_t)w->z0 + (size_t)j;
        const double z = (double)jw * w->world_size_z / (double)w->world_cells_z;
        trn_fractal_row_from(seed_x, TRN_PROFILE_FBM, octaves, feature_size, 0.5, 0.0, dx, w->x0,
                             z, nx, wx);
        trn_fractal_row_from(seed_z, TRN_PROFILE_FBM, octaves, feature_size, 0.5, 0.0, dx, w->x0,
                             z, nx, wz);
        float *o = out->values + (size_t)j * nx;
        for (size_t i = 0; i < nx; i++) {
            const double ox = amplitude * (2.0 * wx[i] - 1.0);
            const double oz = amplitude * (2.0 * wz[i] - 1.0);
            const double v = mask_bilinear(in, w, (double)(w->x0 + i) + ox / dx,
                                           (double)jw + oz / dz);
            o[i] = (float)v;
        }
    }
    free(rows);
    return TRN_OK;
}
