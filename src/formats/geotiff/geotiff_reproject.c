/* DEM reprojection with PROJ onto square cells of a projected CRS (geotiff.h, Reprojection). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/progress.h"
#include "core/rows.h"
#include "geo_libs.h"
#include "terrane/geotiff.h"
#include "terrane/resample.h"

#define RP_DEFAULT_MAX_SAMPLES (1ull << 30)

/* One PROJ transformation per thread: PJ objects and contexts are not shared across threads. */
typedef struct rp_threads {
    int count;
    PJ_CONTEXT **ctx;
    PJ **pj;
} rp_threads;

static void threads_free(rp_threads *t)
{
    for (int k = 0; k < t->count; k++) {
        if (t->pj && t->pj[k]) proj_destroy(t->pj[k]);
        if (t->ctx && t->ctx[k]) proj_context_destroy(t->ctx[k]);
    }
    free(t->pj);
    free(t->ctx);
    memset(t, 0, sizeof *t);
}

static bool threads_make(rp_threads *t, PJ *pj)
{
#ifdef _OPENMP
    t->count = omp_get_max_threads();
#else
    t->count = 1;
#endif
    if (t->count < 1) t->count = 1;
    t->ctx = calloc((size_t)t->count, sizeof *t->ctx);
    t->pj = calloc((size_t)t->count, sizeof *t->pj);
    if (!t->ctx || !t->pj) return false;
    for (int k = 0; k < t->count; k++) {
        if (!(t->ctx[k] = proj_context_create())) return false;
        proj_log_level(t->ctx[k], PJ_LOG_NONE);
        if (!(t->pj[k] = proj_clone(t->ctx[k], pj))) return false;
    }
    return true;
}

/* Transform n points in place; false when any did not transform. */
static bool trans(PJ *pj, PJ_DIRECTION dir, double *x, double *y, size_t n)
{
    proj_errno_reset(pj);
    proj_trans_generic(pj, dir, x, sizeof *x, n, y, sizeof *y, n, NULL, 0, 0, NULL, 0, 0);
    for (size_t k = 0; k < n; k++)
        if (!isfinite(x[k]) || !isfinite(y[k]) || fabs(x[k]) >= HUGE_VAL / 2) return false;
    return true;
}

/* Knots of a row transformed exactly: every RP_KNOT-th sample and the last. */
#define RP_KNOT 16u
/* Largest error accepted from interpolating between knots, in source pixels (checked at each
 * segment's middle; GDAL's approximate transformer accepts 0.125). */
#define RP_TOLERANCE 1e-3

/* Scratch for row_inverse: room for the knots and the segment middles of a row of n. */
static size_t knot_room(size_t n)
{
    return 2u * (n / RP_KNOT + 2u);
}

/* Target samples (x0 + c cell, y) for c in 0..n-1 to source model coordinates (bx, by).
 * Exactly at the knots and the segment middles; in between linearly, unless the middle shows
 * the line is off by more than RP_TOLERANCE source pixels (px, py: a pixel in model units),
 * then exactly. A fixed expression of the row, so the same on any thread. */
static void row_inverse(PJ *pj, double x0, double cell, double y, size_t n, double px, double py,
                        double *bx, double *by, double *kx, double *ky)
{
    if (n <= RP_KNOT) {
        for (size_t c = 0; c < n; c++) {
            bx[c] = x0 + (double)c * cell;
            by[c] = y;
        }
        trans(pj, PJ_INV, bx, by, n);
        return;
    }
    /* Knots 0, K, 2K, ..., n-1, then the middles of the segments between them. */
    size_t knots = 0;
    for (size_t c = 0;; c += RP_KNOT) {
        if (c > n - 1) c = n - 1;
        kx[knots] = x0 + (double)c * cell;
        ky[knots++] = y;
        if (c == n - 1) break;
    }
    const size_t segs = knots - 1;
    for (size_t k = 0; k < segs; k++) {
        const size_t a = k * RP_KNOT, b = k + 1 == segs ? n - 1 : a + RP_KNOT;
        kx[knots + k] = x0 + (double)((a + b) / 2u) * cell;
        ky[knots + k] = y;
    }
    trans(pj, PJ_INV, kx, ky, knots + segs);
    for (size_t k = 0; k < segs; k++) {
        const size_t a = k * RP_KNOT, b = k + 1 == segs ? n - 1 : a + RP_KNOT, m = (a + b) / 2u;
        const double ax = kx[k], ay = ky[k], cx = kx[k + 1], cy = ky[k + 1];
        const double f = (double)(m - a) / (double)(b - a);
        const double ex = ax + (cx - ax) * f - kx[knots + k],
                     ey = ay + (cy - ay) * f - ky[knots + k];
        const bool fine = isfinite(ax) && isfinite(ay) && isfinite(cx) && isfinite(cy) &&
                          isfinite(kx[knots + k]) && fabs(ex) <= RP_TOLERANCE * px &&
                          fabs(ey) <= RP_TOLERANCE * py;
        if (fine) {
            for (size_t c = a; c < b; c++) {
                const double g = (double)(c - a) / (double)(b - a);
                bx[c] = ax + (cx - ax) * g;
                by[c] = ay + (cy - ay) * g;
            }
        } else {
            for (size_t c = a; c < b; c++) {
                bx[c] = x0 + (double)c * cell;
                by[c] = y;
            }
            trans(pj, PJ_INV, bx + a, by + a, b - a);
        }
    }
    bx[n - 1] = kx[knots - 1];
    by[n - 1] = ky[knots - 1];
}

static PJ *crs_from_epsg(PJ_CONTEXT *ctx, uint32_t code)
{
    char def[32];
    snprintf(def, sizeof def, "EPSG:%u", code);
    return proj_create(ctx, def);
}

static const char *type_name(PJ_TYPE type)
{
    switch (type) {
    case PJ_TYPE_GEOGRAPHIC_2D_CRS:
    case PJ_TYPE_GEOGRAPHIC_3D_CRS:
    case PJ_TYPE_GEOGRAPHIC_CRS:
        return "geographic (degrees)";
    case PJ_TYPE_GEOCENTRIC_CRS:
        return "geocentric";
    case PJ_TYPE_VERTICAL_CRS:
        return "vertical";
    case PJ_TYPE_COMPOUND_CRS:
        return "compound";
    case PJ_TYPE_ENGINEERING_CRS:
        return "engineering";
    default:
        return "non-projected";
    }
}

/* GeoTIFF's code for a linear unit of conv metres (0: none of them, then the CRS implies it). */
static uint16_t unit_code(double conv)
{
    if (conv == 1.0) return 9001;
    if (fabs(conv - 0.3048) < 1e-12) return 9002;
    if (fabs(conv - 1200.0 / 3937.0) < 1e-12) return 9003;
    return 0;
}

/* Field sample coordinates of source model coordinates (x, y). */
static void model_to_sample(const trn_geotiff_georef *g, const double inv[4], double x, double y,
                            uint32_t height, double *fx, double *fz)
{
    const double dx = x - g->transform[0], dy = y - g->transform[3];
    const double col = inv[0] * dx + inv[1] * dy, row = inv[2] * dx + inv[3] * dy;
    *fx = col - 0.5;
    *fz = (double)(height - 1u) - (row - 0.5);
}

/* The area mean of src's samples (unit cells centred on whole positions, clamped to the field)
 * over [fx - hx, fx + hx] x [fz - hz, fz + hz]. */
static double box_mean(const trn_field *src, double fx, double fz, double hx, double hz)
{
    const double w = src->cells_x, h = src->cells_z;
    double ax = fmax(fx - hx, -0.5), bx = fmin(fx + hx, w + 0.5);
    double az = fmax(fz - hz, -0.5), bz = fmin(fz + hz, h + 0.5);
    if (!(ax < bx && az < bz)) return trn_field_sample_bilinear(src, fx, fz);
    const long i0 = (long)floor(ax + 0.5), i1 = (long)floor(bx + 0.5);
    const long j0 = (long)floor(az + 0.5), j1 = (long)floor(bz + 0.5);
    const size_t stride = (size_t)src->cells_x + 1u;
    double sum = 0, weight = 0;
    for (long j = j0; j <= j1; j++) {
        if (j < 0 || j > (long)src->cells_z) continue;
        const double wz = fmin(bz, (double)j + 0.5) - fmax(az, (double)j - 0.5);
        if (wz <= 0) continue;
        for (long i = i0; i <= i1; i++) {
            if (i < 0 || i > (long)src->cells_x) continue;
            const double wx = fmin(bx, (double)i + 0.5) - fmax(ax, (double)i - 0.5);
            if (wx <= 0) continue;
            sum += wx * wz * (double)src->heights[(size_t)j * stride + (size_t)i];
            weight += wx * wz;
        }
    }
    return weight > 0 ? sum / weight : trn_field_sample_bilinear(src, fx, fz);
}

/* The largest rectangle of set bytes in a w x h mask (row 0 first), the first in row-major
 * order among equals: the classic histogram-and-stack scan, O(w h). */
static uint64_t largest_rectangle(const uint8_t *mask, uint32_t w, uint32_t h, uint32_t *c0,
                                  uint32_t *r0, uint32_t *cw, uint32_t *rh)
{
    uint32_t *hist = calloc((size_t)w + 1u, sizeof *hist);
    uint32_t *stack = malloc(((size_t)w + 1u) * sizeof *stack);
    uint64_t best = 0;
    if (!hist || !stack) {
        free(hist);
        free(stack);
        return UINT64_MAX;
    }
    for (uint32_t r = 0; r < h; r++) {
        for (uint32_t c = 0; c < w; c++)
            hist[c] = mask[(size_t)r * w + c] ? hist[c] + 1u : 0u;
        hist[w] = 0; /* a sentinel that empties the stack */
        uint32_t top = 0;
        for (uint32_t c = 0; c <= w; c++) {
            while (top > 0 && hist[stack[top - 1]] >= hist[c]) {
                const uint32_t height = hist[stack[--top]];
                const uint32_t left = top > 0 ? stack[top - 1] + 1u : 0u;
                const uint64_t area = (uint64_t)height * (c - left);
                if (area > best) {
                    best = area;
                    *c0 = left;
                    *cw = c - left;
                    *rh = height;
                    *r0 = r + 1u - height;
                }
            }
            stack[top++] = c;
        }
    }
    free(hist);
    free(stack);
    return best;
}

/* What the two passes' rows read: the target grid, the source and each thread's scratch. */
typedef struct rp_rows {
    PJ **pj; /* one per thread */
    const trn_geotiff_georef *sg;
    const trn_field *src;
    double inv[4], x0, y0, cell, pxu, pyu, hx, hz;
    double *xs; /* per doubles a thread: the row's x and y, then the knots' x and y */
    size_t per, room;
    uint32_t gw, sw, sh, kc, kr;
    uint8_t *mask;
    trn_field *dst;
    trn_resample_filter filter;
} rp_rows;

/* Pass 1's row r: mask[r][c] when target sample (c, r) falls inside the source's centres. */
static void footprint_row(void *ctx, size_t row, int t)
{
    const rp_rows *j = ctx;
    const uint32_t r = (uint32_t)row, gw = j->gw;
    const double eps = 1e-9;
    double *bx = j->xs + j->per * (size_t)t, *by = bx + gw, *kx = by + gw, *ky = kx + j->room;
    row_inverse(j->pj[t], j->x0, j->cell, j->y0 - r * j->cell, gw, j->pxu, j->pyu, bx, by, kx, ky);
    for (uint32_t c = 0; c < gw; c++) {
        double fx, fz;
        model_to_sample(j->sg, j->inv, bx[c], by[c], j->sh, &fx, &fz);
        j->mask[(size_t)r * gw + c] = isfinite(fx) && isfinite(fz) && fx >= -eps && fz >= -eps &&
                                      fx <= (j->sw - 1u) + eps && fz <= (j->sh - 1u) + eps;
    }
}

/* Pass 2's row r of the kept rectangle (north first): field row kh-1-r, sampled. */
static void sample_row(void *ctx, size_t row, int t)
{
    const rp_rows *j = ctx;
    const uint32_t r = (uint32_t)row, kw = j->dst->cells_x + 1u, kh = j->dst->cells_z + 1u;
    double *bx = j->xs + j->per * (size_t)t, *by = bx + j->gw, *kx = by + j->gw, *ky = kx + j->room;
    row_inverse(j->pj[t], j->x0 + j->kc * j->cell, j->cell, j->y0 - (j->kr + r) * j->cell, kw,
                j->pxu, j->pyu, bx, by, kx, ky);
    float *out = j->dst->heights + (size_t)(kh - 1u - r) * kw;
    for (uint32_t c = 0; c < kw; c++) {
        double fx, fz, v;
        model_to_sample(j->sg, j->inv, bx[c], by[c], j->sh, &fx, &fz);
        if (j->filter == TRN_RESAMPLE_BICUBIC)
            v = trn_field_sample_bicubic(j->src, fx, fz);
        else if (j->filter == TRN_RESAMPLE_AVERAGE && (j->hx > 0.5 || j->hz > 0.5))
            v = box_mean(j->src, fx, fz, j->hx > 0.5 ? j->hx : 0.5, j->hz > 0.5 ? j->hz : 0.5);
        else
            v = trn_field_sample_bilinear(j->src, fx, fz);
        out[c] = (float)v;
    }
}

trn_status trn_geotiff_reproject(const trn_field *src, const trn_geotiff_georef *sg,
                                 const trn_geotiff_reproject_options *options, trn_field *dst,
                                 trn_geotiff_georef *dg, trn_geotiff_reproject_result *result,
                                 trn_progress_fn progress, void *user, trn_error *err)
{
    if (dst) memset(dst, 0, sizeof *dst);
    trn_geotiff_reproject_result res;
    memset(&res, 0, sizeof res);
    if (!src || !src->heights || !sg || !dst || !dg || src->cells_x < 1 || src->cells_z < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "reproject: a field of at least 2 x 2 samples and its georef needed");
    trn_geotiff_reproject_options opt;
    memset(&opt, 0, sizeof opt);
    if (options) opt = *options;
    const uint64_t max_samples = opt.max_samples ? opt.max_samples : RP_DEFAULT_MAX_SAMPLES;
    if (!sg->has_transform)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "reproject: the DEM has no georeferencing (pixel scale and tiepoint, "
                             "or a transformation), so its ground position is unknown");
    if (!(opt.cell_metres >= 0) || !isfinite(opt.cell_metres))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "reproject: the cell must be a positive number of metres, not %g",
                             opt.cell_metres);
    const uint32_t source_epsg =
        sg->projected_epsg && !sg->geographic
            ? sg->projected_epsg
            : (sg->geographic_epsg ? sg->geographic_epsg : sg->crs_geographic_epsg);
    if (!source_epsg || source_epsg == TRN_GEOTIFF_USER_DEFINED)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "reproject: the DEM's CRS has no EPSG code (%s%s), so PROJ cannot "
                             "place it",
                             sg->citation[0] ? "citation: " : "user-defined keys",
                             sg->citation[0] ? sg->citation : "");
    const double det = sg->transform[1] * sg->transform[5] - sg->transform[2] * sg->transform[4];
    if (det == 0 || !isfinite(det))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "reproject: the DEM's transform is singular");
    const double inv[4] = {sg->transform[5] / det, -sg->transform[2] / det,
                           -sg->transform[4] / det, sg->transform[1] / det};
    const uint32_t sw = src->cells_x + 1u, sh = src->cells_z + 1u;
    trn_progress prog = trn_progress_make(progress, user);

    const char *why = NULL;
    if (!trn_geo_libs_open(&why))
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "reproject: PROJ could not be loaded: %s", why);
    trn_status st = TRN_OK;
    PJ_CONTEXT *ctx = proj_context_create();
    PJ *scrs = NULL, *tcrs = NULL, *geo = NULL, *to_geo = NULL, *op = NULL, *norm = NULL;
    PJ *cs = NULL;
    rp_threads threads;
    memset(&threads, 0, sizeof threads);
    uint8_t *mask = NULL;
    double *xs = NULL, *ys = NULL;
    if (!ctx) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "reproject: out of memory");
    proj_log_level(ctx, PJ_LOG_NONE);
#define FAIL(code, ...)                                                                           \
    do {                                                                                          \
        st = trn_error_set(err, code, NULL, -1, __VA_ARGS__);                                     \
        goto done;                                                                                \
    } while (0)

    if (!(scrs = crs_from_epsg(ctx, source_epsg)))
        FAIL(TRN_ERR_NOT_FOUND, "reproject: EPSG:%u (the DEM's CRS) is not a CRS PROJ knows",
             source_epsg);
    res.source_epsg = source_epsg;
    snprintf(res.source_name, sizeof res.source_name, "%s",
             proj_get_name(scrs) ? proj_get_name(scrs) : "");
    /* Source field sample (i, j) sits at pixel centre (i + 0.5, height - 1 - j + 0.5). */
    const double ci = (sw - 1u) / 2.0, cj = (sh - 1u) / 2.0;
    double cx, cy;
    trn_geotiff_pixel_to_model(sg, ci + 0.5, (double)(sh - 1u) - cj + 0.5, &cx, &cy);

    uint32_t target = opt.target_epsg;
    if (!target) {
        /* The centre in WGS84 longitude and latitude, then its plain 6-degree UTM zone. */
        if (!(geo = crs_from_epsg(ctx, 4326)) ||
            !(to_geo = proj_create_crs_to_crs_from_pj(ctx, scrs, geo, NULL, NULL)))
            FAIL(TRN_ERR_UNSUPPORTED, "reproject: no transformation from EPSG:%u to WGS 84 (%s)",
                 source_epsg, proj_context_errno_string(ctx, proj_context_errno(ctx)));
        PJ *n = proj_normalize_for_visualization(ctx, to_geo);
        if (!n) FAIL(TRN_ERR_UNSUPPORTED, "reproject: PROJ could not orient EPSG:4326 axes");
        proj_destroy(to_geo);
        to_geo = n;
        double lon = cx, lat = cy;
        if (!trans(to_geo, PJ_FWD, &lon, &lat, 1))
            FAIL(TRN_ERR_UNSUPPORTED, "reproject: the DEM's centre (%g, %g in EPSG:%u) has no "
                                      "WGS 84 position",
                 cx, cy, source_epsg);
        int zone = (int)floor((lon + 180.0) / 6.0) + 1;
        zone = zone < 1 ? 1 : zone > 60 ? 60 : zone;
        target = (lat >= 0 ? 32600u : 32700u) + (uint32_t)zone;
        res.utm_default = true;
    }
    if (!(tcrs = crs_from_epsg(ctx, target)))
        FAIL(TRN_ERR_NOT_FOUND, "reproject: EPSG:%u is not a CRS PROJ knows (no such code in its "
                                "database)",
             target);
    if (target >= TRN_GEOTIFF_USER_DEFINED)
        FAIL(TRN_ERR_UNSUPPORTED,
             "reproject: EPSG:%u cannot be stored in a GeoTIFF's ProjectedCSTypeGeoKey (codes "
             "up to 32766)",
             target);
    res.target_epsg = target;
    snprintf(res.target_name, sizeof res.target_name, "%s",
             proj_get_name(tcrs) ? proj_get_name(tcrs) : "");
    if (proj_get_type(tcrs) != PJ_TYPE_PROJECTED_CRS)
        FAIL(TRN_ERR_INVALID_ARGUMENT,
             "reproject: EPSG:%u (%s) is a %s CRS, not a projected one: a terrain needs "
             "coordinates in metres (or feet) on the ground",
             target, res.target_name, type_name(proj_get_type(tcrs)));
    double conv = 0;
    if (!(cs = proj_crs_get_coordinate_system(ctx, tcrs)) ||
        !proj_cs_get_axis_info(ctx, cs, 0, NULL, NULL, NULL, &conv, NULL, NULL, NULL) ||
        !(conv > 0))
        FAIL(TRN_ERR_UNSUPPORTED, "reproject: EPSG:%u (%s) states no linear unit", target,
             res.target_name);
    res.unit_metres = conv;
    if (!(op = proj_create_crs_to_crs_from_pj(ctx, scrs, tcrs, NULL, NULL)) ||
        !(norm = proj_normalize_for_visualization(ctx, op)))
        FAIL(TRN_ERR_UNSUPPORTED, "reproject: no transformation from EPSG:%u to EPSG:%u (%s)",
             source_epsg, target, proj_context_errno_string(ctx, proj_context_errno(ctx)));

    /* The footprint: every edge sample of the source, forward. */
    const size_t ring = 2u * (size_t)sw + 2u * (size_t)sh;
    xs = malloc(ring * sizeof *xs);
    ys = malloc(ring * sizeof *ys);
    if (!xs || !ys) FAIL(TRN_ERR_NO_MEMORY, "reproject: out of memory");
    /* In order around the outline (north edge west to east, then down the east edge, back
     * along the south edge and up the west edge), so its area follows too. */
    size_t n = 0;
    for (uint32_t i = 0; i < sw; i++, n++)
        trn_geotiff_pixel_to_model(sg, i + 0.5, 0.5, &xs[n], &ys[n]);
    for (uint32_t j = 0; j < sh; j++, n++)
        trn_geotiff_pixel_to_model(sg, sw - 0.5, j + 0.5, &xs[n], &ys[n]);
    for (uint32_t i = sw; i-- > 0; n++)
        trn_geotiff_pixel_to_model(sg, i + 0.5, sh - 0.5, &xs[n], &ys[n]);
    for (uint32_t j = sh; j-- > 0; n++)
        trn_geotiff_pixel_to_model(sg, 0.5, j + 0.5, &xs[n], &ys[n]);
    if (!trans(norm, PJ_FWD, xs, ys, n))
        FAIL(TRN_ERR_UNSUPPORTED,
             "reproject: part of the DEM lies outside where EPSG:%u (%s) is defined", target,
             res.target_name);
    double minx = INFINITY, maxx = -INFINITY, miny = INFINITY, maxy = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        minx = fmin(minx, xs[k]);
        maxx = fmax(maxx, xs[k]);
        miny = fmin(miny, ys[k]);
        maxy = fmax(maxy, ys[k]);
    }
    /* The cell: the source's ground resolution at its centre, sqrt of a pixel's area there. */
    double cell;
    if (opt.cell_metres > 0) {
        cell = opt.cell_metres / conv;
    } else {
        double px[3], py[3];
        trn_geotiff_pixel_to_model(sg, ci + 0.5, (double)(sh - 1u) - cj + 0.5, &px[0], &py[0]);
        trn_geotiff_pixel_to_model(sg, ci + 1.5, (double)(sh - 1u) - cj + 0.5, &px[1], &py[1]);
        trn_geotiff_pixel_to_model(sg, ci + 0.5, (double)(sh - 1u) - cj + 1.5, &px[2], &py[2]);
        if (!trans(norm, PJ_FWD, px, py, 3))
            FAIL(TRN_ERR_UNSUPPORTED, "reproject: the DEM's centre has no EPSG:%u position",
                 target);
        cell = sqrt(fabs((px[1] - px[0]) * (py[2] - py[0]) - (py[1] - py[0]) * (px[2] - px[0])));
    }
    if (!(cell > 0) || !isfinite(cell))
        FAIL(TRN_ERR_INVALID_ARGUMENT, "reproject: the cell size %g is not usable", cell);
    res.cell_metres = cell * conv;
    const double fw = floor((maxx - minx) / cell + 1e-9) + 1.0;
    const double fh = floor((maxy - miny) / cell + 1e-9) + 1.0;
    if (fw < 2 || fh < 2)
        FAIL(TRN_ERR_INVALID_ARGUMENT,
             "reproject: %.6g m cells leave fewer than 2 x 2 samples over the DEM's %.6g x %.6g m",
             res.cell_metres, (maxx - minx) * conv, (maxy - miny) * conv);
    if (fw * fh > (double)max_samples || fw > 4294967295.0 || fh > 4294967295.0)
        FAIL(TRN_ERR_LIMIT,
             "reproject: %.6g m cells make a grid of %.0f x %.0f samples, over the limit of %llu",
             res.cell_metres, fw, fh, (unsigned long long)max_samples);
    const uint32_t gw = (uint32_t)fw, gh = (uint32_t)fh;
    res.full_width = gw;
    res.full_height = gh;
    /* The outline's area (shoelace) in target cells: what the DEM covers in samples. */
    double twice = 0;
    for (size_t k = 0; k < n; k++) {
        const size_t m = k + 1 == n ? 0 : k + 1;
        twice += (xs[k] - minx) * (ys[m] - miny) - (xs[m] - minx) * (ys[k] - miny);
    }
    res.footprint_samples = fabs(twice) / 2.0 / (cell * cell);
    /* The grid is centred on the bounding box; sample (c, r) at (x0 + c cell, y0 - r cell). */
    const double x0 = minx + ((maxx - minx) - (gw - 1u) * cell) / 2.0;
    const double y0 = maxy - ((maxy - miny) - (gh - 1u) * cell) / 2.0;

    free(xs);
    free(ys);
    xs = NULL;
    ys = NULL;
    if (!threads_make(&threads, norm)) FAIL(TRN_ERR_NO_MEMORY, "reproject: out of memory");
    /* Per thread: the row's x and y, then the knots' x and y. */
    const size_t room = knot_room(gw), per = (size_t)gw * 2u + 2u * room;
    const double pxu = hypot(sg->transform[1], sg->transform[4]);
    const double pyu = hypot(sg->transform[2], sg->transform[5]);
    xs = malloc(per * (size_t)threads.count * sizeof *xs);
    mask = malloc((size_t)gw * gh);
    if (!xs || !mask) FAIL(TRN_ERR_NO_MEMORY, "reproject: out of memory");
    rp_rows job = {.pj = threads.pj,
                   .sg = sg,
                   .src = src,
                   .x0 = x0,
                   .y0 = y0,
                   .cell = cell,
                   .pxu = pxu,
                   .pyu = pyu,
                   .xs = xs,
                   .per = per,
                   .room = room,
                   .gw = gw,
                   .sw = sw,
                   .sh = sh,
                   .mask = mask};
    memcpy(job.inv, inv, sizeof inv);
    /* Pass 1: which target samples fall inside the source's sample centres. */
    trn_progress part = trn_progress_sub(&prog, 0.0, 0.4);
    if (trn_rows_run(gh, trn_rows_team((uint64_t)gw * gh, threads.count), 2, footprint_row, &job,
                     &part, "reprojecting: footprint"))
        FAIL(TRN_ERR_CANCELLED, "reproject: cancelled");
    uint32_t kc = 0, kr = 0, kw = 0, kh = 0;
    const uint64_t area = largest_rectangle(mask, gw, gh, &kc, &kr, &kw, &kh);
    if (area == UINT64_MAX) FAIL(TRN_ERR_NO_MEMORY, "reproject: out of memory");
    if (kw < 2 || kh < 2)
        FAIL(TRN_ERR_INVALID_ARGUMENT,
             "reproject: no rectangle of 2 x 2 samples lies inside the DEM in EPSG:%u (%.6g m "
             "cells)",
             target, res.cell_metres);
    res.width = kw;
    res.height = kh;
    res.dropped = (uint64_t)gw * gh - area;
    free(mask);
    mask = NULL;

    if ((st = trn_field_init(dst, kw - 1u, kh - 1u, (kw - 1u) * res.cell_metres,
                             (kh - 1u) * res.cell_metres, err)))
        goto done;
    /* The average filter's half footprint in source samples (it interpolates on an axis that
     * does not shrink). */
    const double sdx = src->size_x / src->cells_x, sdz = src->size_z / src->cells_z;
    const double hx = 0.5 * res.cell_metres / sdx, hz = 0.5 * res.cell_metres / sdz;
    /* Pass 2: the kept rectangle, sampled. Target row r (north first) is field row kh-1-r. */
    job.dst = dst;
    job.kc = kc;
    job.kr = kr;
    job.hx = hx;
    job.hz = hz;
    job.filter = opt.filter;
    part = trn_progress_sub(&prog, 0.4, 1.0);
    if (trn_rows_run(kh, trn_rows_team((uint64_t)kw * kh, threads.count), 2, sample_row, &job,
                     &part, "reprojecting"))
        FAIL(TRN_ERR_CANCELLED, "reproject: cancelled");

    /* The target georeferencing: PixelIsArea, the kept rectangle's outer corner. */
    memset(dg, 0, sizeof *dg);
    dg->has_transform = true;
    const double left = x0 + kc * cell - cell / 2.0, top = y0 - kr * cell + cell / 2.0;
    const double t6[6] = {left, cell, 0, top, 0, -cell};
    memcpy(dg->transform, t6, sizeof t6);
    dg->has_pixel_scale = dg->has_tiepoint = true;
    dg->pixel_scale[0] = dg->pixel_scale[1] = cell;
    dg->tiepoint[3] = left;
    dg->tiepoint[4] = top;
    dg->tiepoint_count = 1;
    dg->has_geokeys = true;
    dg->model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    dg->raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    dg->projected_epsg = (uint16_t)target;
    dg->linear_units = unit_code(conv);
    /* Heights are metres in the field whatever the source's vertical unit was. */
    if (sg->vertical_unit_metres == 1.0) dg->vertical_epsg = sg->vertical_epsg;
    snprintf(dg->citation, sizeof dg->citation, "%s", res.target_name);
    dg->crs_normalised = true;
    dg->crs_unit_metres = conv;
    trn_geotiff_georef_derive(dg, kw, kh);
    if (trn_progress_report(&prog, 1.0, "reprojecting"))
        FAIL(TRN_ERR_CANCELLED, "reproject: cancelled");

done:
#undef FAIL
    if (st) trn_field_dispose(dst);
    free(mask);
    free(xs);
    free(ys);
    threads_free(&threads);
    proj_destroy(cs);
    proj_destroy(norm);
    proj_destroy(op);
    proj_destroy(to_geo);
    proj_destroy(geo);
    proj_destroy(tcrs);
    proj_destroy(scrs);
    proj_context_destroy(ctx);
    if (result) *result = res;
    return st;
}
