/* Terrain pictures: gdaldem-compatible hillshade, slope, height ramp and label palette. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "terrane/render.h"

#define RENDER_PI 3.14159265358979323846

void trn_raster8_dispose(trn_raster8 *raster)
{
    if (!raster) return;
    free(raster->pixels);
    memset(raster, 0, sizeof *raster);
}

void trn_render_options_default(trn_render_options *options)
{
    memset(options, 0, sizeof *options);
    options->azimuth = 315.0;
    options->altitude = 45.0;
    options->z_factor = 1.0;
    options->scale = 1.0;
    options->multidirectional = false;
    options->compute_edges = true;
    options->height_min = 0.0;
    options->height_max = 0.0;
}

/* ---- shared plumbing: output allocation and banded, thread-count-independent row loops ---- */

typedef void (*row_fn)(const void *ctx, size_t row, uint8_t *out_row);

static trn_status raster_alloc(uint32_t width, uint32_t height, uint8_t channels, uint8_t **pixels,
                               trn_error *err)
{
    size_t n;
    if (!trn_mul_size(width, height, &n) || !trn_mul_size(n, channels, &n))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "a %u x %u picture is too large for this machine", width, height);
    *pixels = malloc(n ? n : 1);
    if (!*pixels)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory for a %u x %u picture", width, height);
    return TRN_OK;
}

/* Rows go in bands; inside a band each row is one independent task, so the result cannot
 * depend on how OpenMP shares them out. Progress and cancel are checked between bands. */
static trn_status run_rows(uint32_t width, uint32_t height, uint8_t channels, row_fn fn,
                           const void *ctx, const char *stage, trn_progress_fn progress, void *user,
                           trn_raster8 *out, trn_error *err)
{
    uint8_t *pixels;
    trn_status st = raster_alloc(width, height, channels, &pixels, err);
    if (st) return st;
    const size_t row_bytes = (size_t)width * channels;
    trn_progress pr = trn_progress_make(progress, user);
    if (trn_progress_report(&pr, 0.0, stage)) goto cancelled;
    size_t band = height / 64u;
    if (band < 32) band = 32;
    for (size_t r0 = 0; r0 < height; r0 += band) {
        long long r1 = (long long)(r0 + band < height ? r0 + band : height);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
        for (long long r = (long long)r0; r < r1; r++)
            fn(ctx, (size_t)r, pixels + (size_t)r * row_bytes);
        if (trn_progress_report(&pr, (double)r1 / (double)height, stage)) goto cancelled;
    }
    out->width = width;
    out->height = height;
    out->channels = channels;
    out->pixels = pixels;
    return TRN_OK;
cancelled:
    free(pixels);
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "%s: cancelled", stage);
}

static trn_status check_field(const trn_field *field, const char *what, trn_error *err)
{
    if (!field || !field->heights || field->cells_x < 1 || field->cells_z < 1 ||
        field->cells_x == UINT32_MAX || field->cells_z == UINT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: the field needs heights and at least one cell each way", what);
    return TRN_OK;
}

/* gdaldem's Byte output of a float value: round half up, clamped; nodata (non-finite) is 0. */
static uint8_t to_byte(double value)
{
    float v = (float)value;
    if (!isfinite(v)) return 0;
    if (v >= 255.0f) return 255;
    if (v <= 0.0f) return 0;
    return (uint8_t)(v + 0.5f);
}

/* ---- the 3x3 window ---- */

/* A field seen as a north-up picture: picture row r is field row (rows - 1 - r). */
typedef struct view {
    const float *h;
    size_t cols, rows;
} view;

static double pic(const view *v, size_t r, size_t c)
{
    return (double)v->h[(v->rows - 1 - r) * v->cols + c];
}

/* The window around picture sample (r, c), numbered as gdaldem numbers it:
 *   0 1 2      north-west  north  north-east
 *   3 4 5  =   west        centre east
 *   6 7 8      south-west  south  south-east
 * Returns false for an edge sample when edges are not computed. Edge windows follow gdaldem
 * -compute_edges: on the first and last rows the missing row is 2a - b and the neighbour
 * columns are clamped; on the other rows the missing column is 2a - b. */
static bool window(const view *v, size_t r, size_t c, bool edges, double w[9])
{
    const size_t last_r = v->rows - 1, last_c = v->cols - 1;
    if (r > 0 && r < last_r && c > 0 && c < last_c) {
        for (int k = 0; k < 3; k++)
            for (int m = 0; m < 3; m++)
                w[k * 3 + m] = pic(v, r - 1 + (size_t)k, c - 1 + (size_t)m);
        return true;
    }
    if (!edges) return false;
    if (r == 0 || r == last_r) {
        size_t cols[3] = {c > 0 ? c - 1 : c, c, c < last_c ? c + 1 : c};
        for (int m = 0; m < 3; m++) {
            size_t cc = cols[m];
            /* Rows r-1, r, r+1 with whichever falls outside extrapolated. */
            double above = r > 0 ? pic(v, r - 1, cc) : 2.0 * pic(v, 0, cc) - pic(v, 1, cc);
            double below =
                r < last_r ? pic(v, r + 1, cc) : 2.0 * pic(v, last_r, cc) - pic(v, last_r - 1, cc);
            w[m] = above;
            w[3 + m] = pic(v, r, cc);
            w[6 + m] = below;
        }
        return true;
    }
    for (int k = 0; k < 3; k++) {
        size_t rr = r - 1 + (size_t)k;
        double west = c > 0 ? pic(v, rr, c - 1) : 2.0 * pic(v, rr, 0) - pic(v, rr, 1);
        double east =
            c < last_c ? pic(v, rr, c + 1) : 2.0 * pic(v, rr, last_c) - pic(v, rr, last_c - 1);
        w[k * 3 + 0] = west;
        w[k * 3 + 1] = pic(v, rr, c);
        w[k * 3 + 2] = east;
    }
    return true;
}

/* Horn's gradient sums divided by the cell sizes: x = west minus east, y = north minus south
 * (gdaldem's x and y; each is 8 times the slope component, hence the z / 8 below). */
static void horn(const double w[9], double inv_ew, double inv_ns, double *x, double *y)
{
    *x = ((w[0] + w[3] + w[3] + w[6]) - (w[2] + w[5] + w[5] + w[8])) * inv_ew;
    *y = ((w[0] + w[1] + w[1] + w[2]) - (w[6] + w[7] + w[7] + w[8])) * inv_ns;
}

/* ---- hillshade and slope ---- */

typedef struct shade_ctx {
    view v;
    bool edges;
    double inv_ew, inv_ns;
    double zf, square_z;
    /* single light */
    double sin_alt_254, cos_az_cos_alt_z_254, sin_az_cos_alt_z_254;
    /* multidirectional */
    double sin_alt_127, cos_alt_z_127, cos225_cos_alt_z_127;
} shade_ctx;

static void hillshade_row(const void *vctx, size_t r, uint8_t *out)
{
    const shade_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        double w[9], x, y;
        if (!window(&s->v, r, c, s->edges, w)) {
            out[c] = 0;
            continue;
        }
        horn(w, s->inv_ew, s->inv_ns, &x, &y);
        const double xx_plus_yy = x * x + y * y;
        /* cos of the angle to the light over the normal's length, with one square root
         * (gdaldem's rearrangement of sin(alt)cos(slope) + cos(alt)sin(slope)cos(az - aspect)). */
        const double cang_254 =
            (s->sin_alt_254 - (y * s->cos_az_cos_alt_z_254 - x * s->sin_az_cos_alt_z_254)) /
            sqrt(1.0 + s->square_z * xx_plus_yy);
        double value = cang_254 <= 0.0 ? 1.0 : 1.0 + cang_254;
        if (!isfinite(cang_254)) value = NAN;
        out[c] = to_byte(value);
    }
}

static void hillshade_multi_row(const void *vctx, size_t r, uint8_t *out)
{
    const shade_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        double w[9], x, y;
        if (!window(&s->v, r, c, s->edges, w)) {
            out[c] = 0;
            continue;
        }
        horn(w, s->inv_ew, s->inv_ns, &x, &y);
        const double xx = x * x, yy = y * y, xx_plus_yy = xx + yy;
        if (xx_plus_yy == 0.0) {
            out[c] = to_byte(1.0 + s->sin_alt_254);
            continue;
        }
        /* Each light's shade (x 127, negative clipped), as in the single-light formula with
         * azimuths 225, 270, 315 and 360 (sin/cos of those are 0, +-1 or +-cos 225). */
        double v225 = s->sin_alt_127 + (x - y) * s->cos225_cos_alt_z_127;
        double v270 = s->sin_alt_127 - x * s->cos_alt_z_127;
        double v315 = s->sin_alt_127 + (x + y) * s->cos225_cos_alt_z_127;
        double v360 = s->sin_alt_127 - y * s->cos_alt_z_127;
        v225 = v225 <= 0.0 ? 0.0 : v225;
        v270 = v270 <= 0.0 ? 0.0 : v270;
        v315 = v315 <= 0.0 ? 0.0 : v315;
        v360 = v360 <= 0.0 ? 0.0 : v360;
        /* Weights sin^2(aspect - azimuth) from the gradient direction; they sum to 2, which the
         * 127 (not 254) scaling absorbs. */
        const double w225 = 0.5 * xx_plus_yy - x * y;
        const double w270 = xx;
        const double w315 = xx_plus_yy - w225;
        const double w360 = yy;
        const double cang_127 =
            ((w225 * v225 + w270 * v270 + w315 * v315 + w360 * v360) / xx_plus_yy) /
            sqrt(1.0 + s->square_z * xx_plus_yy);
        out[c] = to_byte(1.0 + cang_127);
    }
}

static void slope_row(const void *vctx, size_t r, uint8_t *out)
{
    const shade_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        double w[9], x, y;
        if (!window(&s->v, r, c, s->edges, w)) {
            out[c] = 0;
            continue;
        }
        horn(w, s->inv_ew, s->inv_ns, &x, &y);
        double degrees = atan(s->zf * sqrt(x * x + y * y)) * (180.0 / RENDER_PI);
        out[c] = to_byte(degrees * (255.0 / 90.0));
    }
}

static trn_status shade_setup(const trn_field *field, const trn_render_options *opt,
                              const char *what, shade_ctx *s, trn_error *err)
{
    trn_status st = check_field(field, what, err);
    if (st) return st;
    const double ew = field->size_x / field->cells_x, ns = field->size_z / field->cells_z;
    if (!(ew > 0.0) || !(ns > 0.0) || !isfinite(ew) || !isfinite(ns))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: cell size %g x %g is not a positive number", what, ew, ns);
    if (!(opt->scale > 0.0) || !isfinite(opt->scale) || !isfinite(opt->z_factor) ||
        !isfinite(opt->azimuth) || !isfinite(opt->altitude))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: scale must be positive and z-factor, azimuth and altitude "
                             "finite",
                             what);
    memset(s, 0, sizeof *s);
    s->v.h = field->heights;
    s->v.cols = (size_t)field->cells_x + 1;
    s->v.rows = (size_t)field->cells_z + 1;
    s->edges = opt->compute_edges;
    s->inv_ew = 1.0 / (ew * opt->scale);
    s->inv_ns = 1.0 / (ns * opt->scale);
    s->zf = opt->z_factor / 8.0;
    s->square_z = s->zf * s->zf;
    const double deg = RENDER_PI / 180.0;
    const double sin_alt = sin(opt->altitude * deg), cos_alt_z = cos(opt->altitude * deg) * s->zf;
    s->sin_alt_254 = 254.0 * sin_alt;
    s->cos_az_cos_alt_z_254 = 254.0 * cos(opt->azimuth * deg) * cos_alt_z;
    s->sin_az_cos_alt_z_254 = 254.0 * sin(opt->azimuth * deg) * cos_alt_z;
    s->sin_alt_127 = 127.0 * sin_alt;
    s->cos_alt_z_127 = 127.0 * cos_alt_z;
    s->cos225_cos_alt_z_127 = 127.0 * cos(225.0 * deg) * cos_alt_z;
    return TRN_OK;
}

trn_status trn_render_hillshade(const trn_field *field, const trn_render_options *options,
                                trn_raster8 *out, trn_progress_fn progress, void *user,
                                trn_error *err)
{
    trn_render_options defaults;
    if (!options) {
        trn_render_options_default(&defaults);
        options = &defaults;
    }
    shade_ctx s;
    trn_status st = shade_setup(field, options, "hillshade", &s, err);
    if (st) return st;
    return run_rows(field->cells_x + 1, field->cells_z + 1, 1,
                    options->multidirectional ? hillshade_multi_row : hillshade_row, &s,
                    "hillshade", progress, user, out, err);
}

trn_status trn_render_slope(const trn_field *field, const trn_render_options *options,
                            trn_raster8 *out, trn_progress_fn progress, void *user, trn_error *err)
{
    trn_render_options defaults;
    if (!options) {
        trn_render_options_default(&defaults);
        options = &defaults;
    }
    shade_ctx s;
    trn_status st = shade_setup(field, options, "slope", &s, err);
    if (st) return st;
    return run_rows(field->cells_x + 1, field->cells_z + 1, 1, slope_row, &s, "slope", progress,
                    user, out, err);
}

/* ---- height ramp ---- */

typedef struct height_ctx {
    view v;
    double lo, inv_range; /* inv_range 0: flat field */
} height_ctx;

static void height_row(const void *vctx, size_t r, uint8_t *out)
{
    const height_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        double h = pic(&s->v, r, c);
        if (isnan(h))
            out[c] = 0;
        else if (s->inv_range == 0.0)
            out[c] = 128;
        else
            out[c] = to_byte((h - s->lo) * s->inv_range * 255.0);
    }
}

trn_status trn_render_height(const trn_field *field, const trn_render_options *options,
                             trn_raster8 *out, trn_progress_fn progress, void *user, trn_error *err)
{
    trn_status st = check_field(field, "height", err);
    if (st) return st;
    double lo, hi;
    if (options && options->height_max > options->height_min) {
        lo = options->height_min;
        hi = options->height_max;
    } else {
        float flo, fhi;
        trn_field_range(field, &flo, &fhi);
        lo = flo;
        hi = fhi;
    }
    height_ctx s;
    s.v.h = field->heights;
    s.v.cols = (size_t)field->cells_x + 1;
    s.v.rows = (size_t)field->cells_z + 1;
    s.lo = lo;
    s.inv_range = hi > lo && isfinite(hi - lo) ? 1.0 / (hi - lo) : 0.0;
    return run_rows(field->cells_x + 1, field->cells_z + 1, 1, height_row, &s, "height", progress,
                    user, out, err);
}

/* ---- label palette ---- */

/* Mostly Kelly's colours of maximum contrast (less white and black) and Tableau 10 (less grey),
 * with near-duplicates swapped for navy, aquamarine, light yellow and teal: every pair differs
 * by at least 45 in summed RGB, and none is near black, so holes stay distinct. */
static const uint8_t palette[32][3] = {
    {0xf3, 0xc3, 0x00}, {0x87, 0x56, 0x92}, {0xf3, 0x84, 0x00}, {0xa1, 0xca, 0xf1},
    {0xbe, 0x00, 0x32}, {0xc2, 0xb2, 0x80}, {0x84, 0x84, 0x82}, {0x00, 0x88, 0x56},
    {0xe6, 0x8f, 0xac}, {0x00, 0x67, 0xa5}, {0xf9, 0x93, 0x79}, {0x60, 0x4e, 0x97},
    {0x00, 0x2b, 0x7f}, {0xb3, 0x44, 0x6c}, {0xff, 0xff, 0x66}, {0x88, 0x2d, 0x17},
    {0x8d, 0xb6, 0x00}, {0x65, 0x45, 0x22}, {0xe2, 0x58, 0x22}, {0x2b, 0x3d, 0x26},
    {0x1f, 0x77, 0xb4}, {0x7f, 0xff, 0xd4}, {0x2c, 0xa0, 0x2c}, {0xd6, 0x27, 0x28},
    {0x94, 0x67, 0xbd}, {0x8c, 0x56, 0x4b}, {0xe3, 0x77, 0xc2}, {0xbc, 0xbd, 0x22},
    {0x17, 0xbe, 0xcf}, {0x1b, 0x9e, 0x77}, {0x00, 0x80, 0x80}, {0xe7, 0x29, 0x8a},
};

void trn_render_label_color(uint32_t label, uint8_t rgba[4])
{
    if (label == TRN_LABEL_NONE) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
        return;
    }
    static const unsigned shade_percent[4] = {100, 70, 50, 85};
    unsigned shade = shade_percent[(label / 32u) % 4u];
    for (int k = 0; k < 3; k++)
        rgba[k] = (uint8_t)((palette[label % 32u][k] * shade + 50) / 100);
    rgba[3] = 255;
}

typedef struct layers_ctx {
    const uint8_t *values;
    size_t cols, rows;
    uint8_t colors[256][4];
} layers_ctx;

static void layers_row(const void *vctx, size_t r, uint8_t *out)
{
    const layers_ctx *s = vctx;
    const uint8_t *src = s->values + (s->rows - 1 - r) * s->cols;
    for (size_t c = 0; c < s->cols; c++)
        memcpy(out + 4 * c, s->colors[src[c]], 4);
}

trn_status trn_render_layers(const trn_labels *labels, trn_raster8 *out, trn_progress_fn progress,
                             void *user, trn_error *err)
{
    if (!labels || !labels->values || labels->cells_x < 1 || labels->cells_z < 1 ||
        labels->cells_x == UINT32_MAX || labels->cells_z == UINT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "layers: the label map needs values and at least one cell each way");
    layers_ctx *s = malloc(sizeof *s);
    if (!s) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    s->values = labels->values;
    s->cols = (size_t)labels->cells_x + 1;
    s->rows = (size_t)labels->cells_z + 1;
    for (uint32_t k = 0; k < 256; k++)
        trn_render_label_color(k, s->colors[k]);
    trn_status st = run_rows(labels->cells_x + 1, labels->cells_z + 1, 4, layers_row, s, "layers",
                             progress, user, out, err);
    free(s);
    return st;
}
