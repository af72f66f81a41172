/* Terrain pictures: gdaldem-compatible hillshade, slope, aspect and colour relief, height ramp,
 * material colours and legends. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "core/rows.h"
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
    options->zero_for_flat = false;
    options->trigonometric = false;
    options->color_match = TRN_COLOR_INTERPOLATE;
    options->color_alpha = false;
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

typedef struct rows_job {
    row_fn fn;
    const void *ctx;
    uint8_t *pixels;
    size_t row_bytes;
} rows_job;

static void rows_job_row(void *ctx, size_t row, int thread)
{
    const rows_job *j = ctx;
    (void)thread;
    j->fn(j->ctx, row, j->pixels + row * j->row_bytes);
}

/* Every row is one independent task, so the result cannot depend on how the rows are shared
 * out. One parallel region (core/rows.h): a region per band of rows, opened to report progress
 * between bands, made each of 64 bands wait for the slowest thread, a time slice whenever
 * another program held its core. The calling thread reports progress and sees a cancel. */
static trn_status run_rows(uint32_t width, uint32_t height, uint8_t channels, row_fn fn,
                           const void *ctx, const char *stage, trn_progress_fn progress, void *user,
                           trn_raster8 *out, trn_error *err)
{
    uint8_t *pixels;
    trn_status st = raster_alloc(width, height, channels, &pixels, err);
    if (st) return st;
    trn_progress pr = trn_progress_make(progress, user);
    if (trn_progress_report(&pr, 0.0, stage)) goto cancelled;
    rows_job job = {fn, ctx, pixels, (size_t)width * channels};
    const int threads = trn_rows_team((uint64_t)width * height, 0);
    if (trn_rows_run(height, threads, 2, rows_job_row, &job, &pr, stage)) goto cancelled;
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

/* ---- aspect ---- */

typedef struct aspect_ctx {
    view v;
    bool edges, zero_for_flat, trigonometric;
} aspect_ctx;

/* gdaldem's aspect of a window, in float as gdaldem computes it; NAN when flat. */
static float aspect_degrees(const double w[9], bool trigonometric)
{
    const double dx = (w[2] + w[5] + w[5] + w[8]) - (w[0] + w[3] + w[3] + w[6]);
    const double dy = (w[6] + w[7] + w[7] + w[8]) - (w[0] + w[1] + w[1] + w[2]);
    if (dx == 0 && dy == 0) return NAN;
    float aspect = (float)(atan2(dy, -dx) * (180.0 / RENDER_PI));
    if (!trigonometric)
        aspect = aspect > 90.0f ? 450.0f - aspect : 90.0f - aspect;
    else if (aspect < 0)
        aspect += 360.0f;
    if (aspect == 360.0f) aspect = 0.0f;
    return aspect;
}

static void aspect_row(const void *vctx, size_t r, uint8_t *out)
{
    const aspect_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        double w[9];
        out[c] = 0;
        if (!window(&s->v, r, c, s->edges, w)) continue;
        bool finite = true;
        for (int k = 0; k < 9; k++)
            finite = finite && isfinite(w[k]);
        if (!finite) continue;
        float a = aspect_degrees(w, s->trigonometric);
        if (isnan(a)) {
            if (!s->zero_for_flat) continue;
            a = 0.0f;
        }
        out[c] = to_byte(1.0 + (double)a * (254.0 / 360.0));
    }
}

trn_status trn_render_aspect(const trn_field *field, const trn_render_options *options,
                             trn_raster8 *out, trn_progress_fn progress, void *user, trn_error *err)
{
    trn_render_options defaults;
    if (!options) {
        trn_render_options_default(&defaults);
        options = &defaults;
    }
    trn_status st = check_field(field, "aspect", err);
    if (st) return st;
    aspect_ctx s;
    s.v.h = field->heights;
    s.v.cols = (size_t)field->cells_x + 1;
    s.v.rows = (size_t)field->cells_z + 1;
    s.edges = options->compute_edges;
    s.zero_for_flat = options->zero_for_flat;
    s.trigonometric = options->trigonometric;
    return run_rows(field->cells_x + 1, field->cells_z + 1, 1, aspect_row, &s, "aspect", progress,
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

/* ---- colour tables and colour relief ---- */

void trn_color_table_dispose(trn_color_table *table)
{
    if (!table) return;
    free(table->entries);
    memset(table, 0, sizeof *table);
}

/* gdaldem's colour names (GRASS's), at gdaldem's values: (int)(255 * fraction). */
static const struct {
    const char *name;
    uint8_t rgb[3];
} named_colors[] = {
    {"white", {255, 255, 255}}, {"black", {0, 0, 0}},      {"red", {255, 0, 0}},
    {"green", {0, 255, 0}},     {"blue", {0, 0, 255}},     {"yellow", {255, 255, 0}},
    {"magenta", {255, 0, 255}}, {"cyan", {0, 255, 255}},   {"aqua", {0, 191, 191}},
    {"grey", {191, 191, 191}},  {"gray", {191, 191, 191}}, {"orange", {255, 127, 0}},
    {"brown", {191, 127, 63}},  {"purple", {127, 0, 255}}, {"violet", {127, 0, 255}},
    {"indigo", {0, 127, 255}},
};

static bool same_word(const char *a, size_t n, const char *b)
{
    if (strlen(b) != n) return false;
    for (size_t k = 0; k < n; k++) {
        char c = a[k];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != b[k]) return false;
    }
    return true;
}

static bool is_separator(char c)
{
    return c == ' ' || c == '\t' || c == ',' || c == ':';
}

static bool contains(const char *s, size_t n, const char *word)
{
    size_t m = strlen(word);
    for (size_t k = 0; k + m <= n; k++)
        if (memcmp(s + k, word, m) == 0) return true;
    return false;
}

typedef struct table_token {
    const char *text;
    size_t len;
    size_t column; /* 1-based */
} table_token;

/* Report a table error at a token (or at the line's start). */
static trn_status table_fail(trn_error *err, const char *file, size_t line_offset, uint32_t line,
                             size_t column, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
static trn_status table_fail(trn_error *err, const char *file, size_t line_offset, uint32_t line,
                             size_t column, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    trn_error_set(err, TRN_ERR_FORMAT, file, (int64_t)(line_offset + column - 1), "%s", msg);
    trn_error_set_position(err, (int)line, (int)column);
    return TRN_ERR_FORMAT;
}

/* A whole number 0..255 filling the token. */
static bool parse_channel(const table_token *t, uint8_t *out)
{
    if (t->len == 0 || t->len > 3) return false;
    unsigned v = 0;
    for (size_t k = 0; k < t->len; k++) {
        if (t->text[k] < '0' || t->text[k] > '9') return false;
        v = v * 10 + (unsigned)(t->text[k] - '0');
    }
    if (v > 255) return false;
    *out = (uint8_t)v;
    return true;
}

/* A finite number filling the first n bytes of the token. */
static bool parse_number(const char *text, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, text, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v)) return false;
    *out = v;
    return true;
}

static int show_len(size_t n)
{
    return n > 40 ? 40 : (int)n;
}

/* One non-comment line (tokens) into entry e. */
static trn_status parse_entry(const table_token *tok, size_t count, const char *file,
                              size_t line_offset, uint32_t line, bool seen_nodata,
                              trn_color_entry *e, trn_error *err)
{
    memset(e, 0, sizeof *e);
    e->line = line;
    e->rgba[3] = 255;
    const table_token *h = &tok[0];
    if (same_word(h->text, h->len, "nv")) {
        if (seen_nodata)
            return table_fail(err, file, line_offset, line, h->column,
                              "a second 'nv' entry: the table gives NaN heights one colour");
        e->nodata = true;
    } else if (h->len > 1 && h->text[h->len - 1] == '%') {
        if (!parse_number(h->text, h->len - 1, &e->height) || e->height < 0 || e->height > 100)
            return table_fail(err, file, line_offset, line, h->column,
                              "expected a percentage 0%% to 100%%, found '%.*s'", show_len(h->len),
                              h->text);
        e->percent = true;
    } else if (!parse_number(h->text, h->len, &e->height)) {
        return table_fail(err, file, line_offset, line, h->column,
                          "expected a height (a number, 'P%%' or 'nv'), found '%.*s'",
                          show_len(h->len), h->text);
    }
    if (count < 2)
        return table_fail(err, file, line_offset, line, h->column + h->len,
                          "expected a colour after the height: R G B [A] or a colour name");
    if (count > 5)
        return table_fail(err, file, line_offset, line, tok[5].column,
                          "expected at most 5 fields (HEIGHT R G B A), found '%.*s'",
                          show_len(tok[5].len), tok[5].text);
    if (count >= 4) {
        for (size_t k = 1; k < count; k++)
            if (!parse_channel(&tok[k], &e->rgba[k - 1]))
                return table_fail(err, file, line_offset, line, tok[k].column,
                                  "expected %s as a whole number 0 to 255, found '%.*s'",
                                  k == 1   ? "red"
                                  : k == 2 ? "green"
                                  : k == 3 ? "blue"
                                           : "alpha",
                                  show_len(tok[k].len), tok[k].text);
        return TRN_OK;
    }
    if (tok[1].text[0] >= '0' && tok[1].text[0] <= '9')
        return table_fail(err, file, line_offset, line, tok[count - 1].column + tok[count - 1].len,
                          "expected R G B [A] (whole numbers 0 to 255), found %zu number%s",
                          count - 1, count == 2 ? "" : "s");
    size_t found = sizeof named_colors / sizeof named_colors[0];
    for (size_t k = 0; k < sizeof named_colors / sizeof named_colors[0]; k++)
        if (same_word(tok[1].text, tok[1].len, named_colors[k].name)) found = k;
    if (found == sizeof named_colors / sizeof named_colors[0])
        return table_fail(err, file, line_offset, line, tok[1].column,
                          "expected R G B or a colour name (white, black, red, green, blue, "
                          "yellow, magenta, cyan, aqua, grey, gray, orange, brown, purple, "
                          "violet, indigo), found '%.*s'",
                          show_len(tok[1].len), tok[1].text);
    memcpy(e->rgba, named_colors[found].rgb, 3);
    if (count == 3 && !parse_channel(&tok[2], &e->rgba[3]))
        return table_fail(err, file, line_offset, line, tok[2].column,
                          "expected alpha as a whole number 0 to 255, found '%.*s'",
                          show_len(tok[2].len), tok[2].text);
    return TRN_OK;
}

trn_status trn_color_table_parse(const char *text, size_t length, const char *file,
                                 trn_color_table *out, trn_error *err)
{
    memset(out, 0, sizeof *out);
    if (!text && length) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, file, -1, "no text");
    if (length >= 2 && (((uint8_t)text[0] == 0xff && (uint8_t)text[1] == 0xfe) ||
                        ((uint8_t)text[0] == 0xfe && (uint8_t)text[1] == 0xff)))
        return table_fail(err, file, 0, 1, 1,
                          "the colour table is UTF-16 text; save it as UTF-8 (or ASCII)");
    size_t pos = 0, cap = 0;
    uint32_t line = 0;
    bool seen_nodata = false;
    trn_status st = TRN_OK;
    /* A UTF-8 byte order mark is not part of the first line. */
    if (length >= 3 && (uint8_t)text[0] == 0xef && (uint8_t)text[1] == 0xbb &&
        (uint8_t)text[2] == 0xbf)
        pos = 3;
    while (pos < length && st == TRN_OK) {
        const size_t start = pos;
        line++;
        while (pos < length && text[pos] != '\n')
            pos++;
        size_t end = pos;
        if (pos < length) pos++; /* the '\n' */
        if (end > start && text[end - 1] == '\r') end--;
        const char *s = text + start;
        const size_t n = end - start;
        if (n == 0 || s[0] == '#' || s[0] == '/') {
            if (n > 0 && s[0] == '#' && contains(s, n, "COLOR_MODEL"))
                st = table_fail(err, file, start, line, 1,
                                "a GMT colour palette (COLOR_MODEL): write the table as "
                                "'HEIGHT R G B' lines");
            continue;
        }
        const char *nul = memchr(s, '\0', n);
        if (nul) {
            st = table_fail(err, file, start, line, (size_t)(nul - s) + 1,
                            "expected text, found a NUL byte");
            break;
        }
        table_token tok[6];
        size_t count = 0;
        for (size_t k = 0; k < n;) {
            while (k < n && is_separator(s[k]))
                k++;
            if (k >= n) break;
            size_t b = k;
            while (k < n && !is_separator(s[k]))
                k++;
            if (count < 6) tok[count] = (table_token){s + b, k - b, b + 1};
            count++;
        }
        if (count == 0) continue; /* separators only */
        if (out->count == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            trn_color_entry *grown = realloc(out->entries, ncap * sizeof *grown);
            if (!grown) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1, "out of memory");
                break;
            }
            out->entries = grown;
            cap = ncap;
        }
        trn_color_entry *e = &out->entries[out->count];
        st = parse_entry(tok, count > 6 ? 6 : count, file, start, line, seen_nodata, e, err);
        if (st == TRN_OK) {
            seen_nodata = seen_nodata || e->nodata;
            out->count++;
        }
    }
    if (st == TRN_OK && out->count == 0)
        st = trn_error_set(err, TRN_ERR_FORMAT, file, (int64_t)length,
                           "no colour entries: expected lines 'HEIGHT R G B [A]'");
    if (st) trn_color_table_dispose(out);
    return st;
}

trn_status trn_color_table_read(const char *path, trn_color_table *out, trn_error *err)
{
    memset(out, 0, sizeof *out);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(path, TRN_COLOR_TABLE_MAX_BYTES, &data, &size, err);
    if (st) return st;
    st = trn_color_table_parse((const char *)data, size, path, out, err);
    free(data);
    return st;
}

/* Sorted entries with their heights resolved against a field. */
typedef struct relief_ctx {
    view v;
    const trn_color_entry *sorted; /* by height, nodata left out */
    size_t count;
    const double *heights;
    uint8_t nodata_rgba[4];
    trn_color_match match;
    uint8_t channels;
} relief_ctx;

/* gdaldem's colour of value v (GDALColorReliefGetRGBA without its NaN entry). */
static void relief_color(const relief_ctx *s, double v, uint8_t rgba[4])
{
    const double *h = s->heights;
    const size_t n = s->count;
    if (isnan(v)) {
        memcpy(rgba, s->nodata_rgba, 4);
        return;
    }
    /* i: the first entry not below v (n when all are). */
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h[mid] >= v)
            hi = mid;
        else
            lo = mid + 1;
    }
    const size_t i = lo;
    static const uint8_t none[4] = {0, 0, 0, 0};
    if (i == 0 || i == n) {
        const size_t k = i == 0 ? 0 : n - 1;
        memcpy(rgba, s->match == TRN_COLOR_EXACT && h[k] != v ? none : s->sorted[k].rgba, 4);
        return;
    }
    if (h[i] == v) {
        memcpy(rgba, s->sorted[i].rgba, 4);
        return;
    }
    if (s->match == TRN_COLOR_EXACT) {
        memcpy(rgba, none, 4);
        return;
    }
    if (s->match == TRN_COLOR_NEAREST) {
        memcpy(rgba, s->sorted[v - h[i - 1] < h[i] - v ? i - 1 : i].rgba, 4);
        return;
    }
    const double ratio = (v - h[i - 1]) / (h[i] - h[i - 1]);
    for (int c = 0; c < 4; c++) {
        const int before = s->sorted[i - 1].rgba[c], after = s->sorted[i].rgba[c];
        int value = (int)(0.5 + before + ratio * (after - before));
        rgba[c] = (uint8_t)(value < 0 ? 0 : value > 255 ? 255 : value);
    }
}

static void relief_row(const void *vctx, size_t r, uint8_t *out)
{
    const relief_ctx *s = vctx;
    for (size_t c = 0; c < s->v.cols; c++) {
        uint8_t rgba[4];
        relief_color(s, pic(&s->v, r, c), rgba);
        memcpy(out + c * s->channels, rgba, s->channels);
    }
}

/* Stable order by resolved height (insertion sort keeps equal heights in file order). */
static void sort_entries(trn_color_entry *e, double *h, size_t n)
{
    for (size_t k = 1; k < n; k++) {
        trn_color_entry ek = e[k];
        double hk = h[k];
        size_t j = k;
        while (j > 0 && h[j - 1] > hk) {
            e[j] = e[j - 1];
            h[j] = h[j - 1];
            j--;
        }
        e[j] = ek;
        h[j] = hk;
    }
}

trn_status trn_render_color_relief(const trn_field *field, const trn_color_table *table,
                                   const trn_render_options *options, trn_raster8 *out,
                                   trn_progress_fn progress, void *user, trn_error *err)
{
    trn_render_options defaults;
    if (!options) {
        trn_render_options_default(&defaults);
        options = &defaults;
    }
    trn_status st = check_field(field, "colour relief", err);
    if (st) return st;
    if (!table || !table->entries || table->count == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "colour relief: the colour table has no entries");
    if (options->color_match != TRN_COLOR_INTERPOLATE && options->color_match != TRN_COLOR_EXACT &&
        options->color_match != TRN_COLOR_NEAREST)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "colour relief: unknown match mode %d", (int)options->color_match);
    relief_ctx s;
    memset(&s, 0, sizeof s);
    trn_color_entry *sorted = malloc(table->count * sizeof *sorted);
    double *heights = malloc(table->count * sizeof *heights);
    if (!sorted || !heights) {
        free(sorted);
        free(heights);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    float lo = 0.0f, hi = 0.0f;
    trn_field_range(field, &lo, &hi);
    size_t n = 0;
    for (size_t k = 0; k < table->count; k++) {
        const trn_color_entry *e = &table->entries[k];
        if (e->nodata) {
            memcpy(s.nodata_rgba, e->rgba, 4);
            continue;
        }
        sorted[n] = *e;
        heights[n] =
            e->percent ? (double)lo + e->height / 100.0 * ((double)hi - (double)lo) : e->height;
        n++;
    }
    if (n == 0) {
        free(sorted);
        free(heights);
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "colour relief: the colour table has only an 'nv' entry; it needs "
                             "at least one height");
    }
    sort_entries(sorted, heights, n);
    s.v.h = field->heights;
    s.v.cols = (size_t)field->cells_x + 1;
    s.v.rows = (size_t)field->cells_z + 1;
    s.sorted = sorted;
    s.heights = heights;
    s.count = n;
    s.match = options->color_match;
    s.channels = options->color_alpha ? 4 : 3;
    st = run_rows(field->cells_x + 1, field->cells_z + 1, s.channels, relief_row, &s,
                  "colour relief", progress, user, out, err);
    free(sorted);
    free(heights);
    return st;
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
    trn_render_layer_colors(labels, s->colors, NULL);
    trn_status st = run_rows(labels->cells_x + 1, labels->cells_z + 1, 4, layers_row, s, "layers",
                             progress, user, out, err);
    free(s);
    return st;
}

/* ---- material colours ---- */

/* The keyword table of trn_render_material_color (render.h), in priority order; keywords
 * sharing a colour share its index. */
static const uint8_t material_rgb[][3] = {
    {62, 118, 196}, {244, 246, 250}, {200, 226, 240}, {58, 58, 62},    {168, 168, 162},
    {92, 70, 50},   {150, 140, 126}, {218, 194, 142}, {128, 128, 128}, {134, 96, 60},
    {176, 108, 76}, {86, 152, 62},   {44, 104, 48},   {222, 200, 152},
};

static const struct {
    const char *keyword;
    uint8_t color; /* index into material_rgb */
} material_keywords[] = {
    {"water", 0},   {"river", 0},    {"lake", 0},     {"ocean", 0},   {"sea", 0},
    {"snow", 1},    {"ice", 2},      {"glacier", 2},  {"asphalt", 3}, {"tarmac", 3},
    {"road", 3},    {"concrete", 4}, {"pavement", 4}, {"cobble", 4},  {"mud", 5},
    {"gravel", 6},  {"pebble", 6},   {"shingle", 6},  {"sand", 7},    {"beach", 7},
    {"dune", 7},    {"rock", 8},     {"stone", 8},    {"cliff", 8},   {"boulder", 8},
    {"granite", 8}, {"dirt", 9},     {"soil", 9},     {"earth", 9},   {"ground", 9},
    {"clay", 10},   {"grass", 11},   {"meadow", 11},  {"lawn", 11},   {"forest", 12},
    {"leaf", 12},   {"leaves", 12},  {"foliage", 12}, {"moss", 12},   {"desert", 13},
};

#define MATERIAL_KEYWORDS (sizeof material_keywords / sizeof material_keywords[0])

static bool is_lower(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
    return c >= 'A' && c <= 'Z';
}

/* Does keyword (lower case) start a word of name at some position? */
static bool starts_word(const char *name, const char *keyword)
{
    const size_t m = strlen(keyword);
    for (size_t p = 0; name[p]; p++) {
        const bool boundary = p == 0 || !(is_lower(name[p - 1]) || is_upper(name[p - 1])) ||
                              (is_lower(name[p - 1]) && is_upper(name[p]));
        if (!boundary) continue;
        size_t k = 0;
        while (k < m && name[p + k] &&
               (is_upper(name[p + k]) ? (char)(name[p + k] - 'A' + 'a') : name[p + k]) ==
                   keyword[k])
            k++;
        if (k == m) return true;
    }
    return false;
}

static int material_index(const char *name)
{
    for (size_t k = 0; name && k < MATERIAL_KEYWORDS; k++)
        if (starts_word(name, material_keywords[k].keyword)) return (int)k;
    return -1;
}

const char *trn_render_material_color(const char *name, uint8_t rgb[3])
{
    int k = material_index(name);
    if (k < 0) return NULL;
    memcpy(rgb, material_rgb[material_keywords[k].color], 3);
    return material_keywords[k].keyword;
}

/* The n-th material of one colour, in the order render.h gives. */
static void shade(uint8_t rgb[3], unsigned nth)
{
    static const struct {
        bool lighter;
        unsigned percent;
    } steps[8] = {{false, 100}, {false, 75}, {true, 35}, {false, 55},
                  {true, 60},   {false, 88}, {true, 18}, {false, 40}};
    const unsigned k = nth % 8;
    for (int c = 0; c < 3; c++) {
        unsigned v = rgb[c];
        v = steps[k].lighter ? v + ((255u - v) * steps[k].percent + 50u) / 100u
                             : (v * steps[k].percent + 50u) / 100u;
        rgb[c] = (uint8_t)v;
    }
}

void trn_render_layer_colors(const trn_labels *labels, uint8_t colors[256][4],
                             const char *keywords[256])
{
    unsigned used[sizeof material_rgb / sizeof material_rgb[0]] = {0};
    for (uint32_t k = 0; k < 256; k++) {
        trn_render_label_color(k, colors[k]);
        if (keywords) keywords[k] = NULL;
        if (k == TRN_LABEL_NONE || !labels || !labels->names || k >= labels->name_count) continue;
        int m = material_index(labels->names[k]);
        if (m < 0) continue;
        const uint8_t family = material_keywords[m].color;
        memcpy(colors[k], material_rgb[family], 3);
        shade(colors[k], used[family]++);
        colors[k][3] = 255;
        if (keywords) keywords[k] = material_keywords[m].keyword;
    }
}

/* ---- legends ---- */

/* 5 x 7 glyphs of printable ASCII (32..126), drawn for these legends: one byte a row, top row
 * first, bit 4 the leftmost pixel. */
static const uint8_t font5x7[95][7] = {
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /*   */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04}, /* ! */
    {0x0a, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00}, /* " */
    {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a}, /* # */
    {0x04, 0x0f, 0x14, 0x0e, 0x05, 0x1e, 0x04}, /* $ */
    {0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03}, /* % */
    {0x0c, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0d}, /* & */
    {0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00}, /* quote */
    {0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02}, /* ( */
    {0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08}, /* ) */
    {0x00, 0x04, 0x15, 0x0e, 0x15, 0x04, 0x00}, /* * */
    {0x00, 0x04, 0x04, 0x1f, 0x04, 0x04, 0x00}, /* + */
    {0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x08}, /* , */
    {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}, /* - */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}, /* . */
    {0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00}, /* slash */
    {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}, /* 0 */
    {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* 1 */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}, /* 2 */
    {0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e}, /* 3 */
    {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}, /* 4 */
    {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}, /* 5 */
    {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}, /* 6 */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}, /* 7 */
    {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}, /* 8 */
    {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}, /* 9 */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}, /* : */
    {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x04, 0x08}, /* ; */
    {0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02}, /* < */
    {0x00, 0x00, 0x1f, 0x00, 0x1f, 0x00, 0x00}, /* = */
    {0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08}, /* > */
    {0x0e, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04}, /* ? */
    {0x0e, 0x11, 0x01, 0x0d, 0x15, 0x15, 0x0e}, /* @ */
    {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* A */
    {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}, /* B */
    {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}, /* C */
    {0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c}, /* D */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}, /* E */
    {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}, /* F */
    {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}, /* G */
    {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}, /* H */
    {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* I */
    {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}, /* J */
    {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}, /* K */
    {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}, /* L */
    {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}, /* M */
    {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}, /* N */
    {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* O */
    {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}, /* P */
    {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}, /* Q */
    {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}, /* R */
    {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}, /* S */
    {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* T */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}, /* U */
    {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* V */
    {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}, /* W */
    {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}, /* X */
    {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}, /* Y */
    {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}, /* Z */
    {0x0e, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0e}, /* [ */
    {0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00}, /* backslash */
    {0x0e, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0e}, /* ] */
    {0x04, 0x0a, 0x11, 0x00, 0x00, 0x00, 0x00}, /* ^ */
    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}, /* _ */
    {0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00}, /* ` */
    {0x00, 0x00, 0x0e, 0x01, 0x0f, 0x11, 0x0f}, /* a */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x1e}, /* b */
    {0x00, 0x00, 0x0e, 0x10, 0x10, 0x11, 0x0e}, /* c */
    {0x01, 0x01, 0x0d, 0x13, 0x11, 0x11, 0x0f}, /* d */
    {0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e}, /* e */
    {0x06, 0x09, 0x08, 0x1c, 0x08, 0x08, 0x08}, /* f */
    {0x00, 0x0f, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* g */
    {0x10, 0x10, 0x16, 0x19, 0x11, 0x11, 0x11}, /* h */
    {0x04, 0x00, 0x0c, 0x04, 0x04, 0x04, 0x0e}, /* i */
    {0x02, 0x00, 0x06, 0x02, 0x02, 0x12, 0x0c}, /* j */
    {0x10, 0x10, 0x12, 0x14, 0x18, 0x14, 0x12}, /* k */
    {0x0c, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}, /* l */
    {0x00, 0x00, 0x1a, 0x15, 0x15, 0x11, 0x11}, /* m */
    {0x00, 0x00, 0x16, 0x19, 0x11, 0x11, 0x11}, /* n */
    {0x00, 0x00, 0x0e, 0x11, 0x11, 0x11, 0x0e}, /* o */
    {0x00, 0x00, 0x1e, 0x11, 0x1e, 0x10, 0x10}, /* p */
    {0x00, 0x00, 0x0d, 0x13, 0x0f, 0x01, 0x01}, /* q */
    {0x00, 0x00, 0x16, 0x19, 0x10, 0x10, 0x10}, /* r */
    {0x00, 0x00, 0x0e, 0x10, 0x0e, 0x01, 0x1e}, /* s */
    {0x08, 0x08, 0x1c, 0x08, 0x08, 0x09, 0x06}, /* t */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x13, 0x0d}, /* u */
    {0x00, 0x00, 0x11, 0x11, 0x11, 0x0a, 0x04}, /* v */
    {0x00, 0x00, 0x11, 0x11, 0x15, 0x15, 0x0a}, /* w */
    {0x00, 0x00, 0x11, 0x0a, 0x04, 0x0a, 0x11}, /* x */
    {0x00, 0x00, 0x11, 0x11, 0x0f, 0x01, 0x0e}, /* y */
    {0x00, 0x00, 0x1f, 0x02, 0x04, 0x08, 0x1f}, /* z */
    {0x02, 0x04, 0x04, 0x08, 0x04, 0x04, 0x02}, /* { */
    {0x04, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}, /* | */
    {0x08, 0x04, 0x04, 0x02, 0x04, 0x04, 0x08}, /* } */
    {0x00, 0x00, 0x08, 0x15, 0x02, 0x00, 0x00}, /* ~ */
};

#define LEGEND_TEXT_MAX 40

typedef struct legend_layout {
    uint32_t s; /* pixels per font pixel */
    uint32_t pad, swatch, gap, line, advance;
    uint32_t width, height; /* the panel */
} legend_layout;

static size_t legend_text_len(const char *text)
{
    size_t n = text ? strlen(text) : 0;
    return n > LEGEND_TEXT_MAX ? LEGEND_TEXT_MAX : n;
}

static void put_pixel(trn_raster8 *r, uint32_t x, uint32_t y, const uint8_t rgba[4])
{
    if (x < r->width && y < r->height) memcpy(r->pixels + ((size_t)y * r->width + x) * 4, rgba, 4);
}

static void fill(trn_raster8 *r, uint32_t x0, uint32_t y0, uint32_t w, uint32_t h,
                 const uint8_t rgba[4])
{
    for (uint32_t y = y0; y < y0 + h; y++)
        for (uint32_t x = x0; x < x0 + w; x++)
            put_pixel(r, x, y, rgba);
}

static void draw_text(trn_raster8 *r, uint32_t x0, uint32_t y0, uint32_t s, const char *text)
{
    static const uint8_t ink[4] = {0, 0, 0, 255};
    size_t n = legend_text_len(text);
    bool cut = text && strlen(text) > LEGEND_TEXT_MAX;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)text[k];
        if (cut && k >= LEGEND_TEXT_MAX - 3) c = '.';
        if (c < 32 || c > 126) c = '?';
        const uint8_t *glyph = font5x7[c - 32];
        for (uint32_t gy = 0; gy < 7; gy++)
            for (uint32_t gx = 0; gx < 5; gx++)
                if (glyph[gy] & (0x10u >> gx))
                    fill(r, x0 + (uint32_t)k * 6u * s + gx * s, y0 + gy * s, s, s, ink);
    }
}

trn_status trn_render_legend(const trn_raster8 *picture, const trn_legend_entry *entries,
                             size_t count, trn_raster8 *out, trn_error *err)
{
    if (!picture || !picture->pixels || picture->width < 1 || picture->height < 1 ||
        (picture->channels != 1 && picture->channels != 3 && picture->channels != 4) ||
        (count && !entries))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "legend: the picture needs pixels and 1, 3 or 4 channels");
    if (count > 4096)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "legend: %zu entries, more than 4096",
                             count);
    legend_layout L;
    memset(&L, 0, sizeof L);
    L.s = picture->height / 256u;
    L.s = L.s < 1 ? 1 : L.s > 4 ? 4 : L.s;
    L.pad = 4 * L.s;
    L.swatch = 7 * L.s;
    L.gap = 3 * L.s;
    L.line = 11 * L.s;
    L.advance = 6 * L.s;
    size_t longest = 0;
    for (size_t k = 0; k < count; k++)
        if (legend_text_len(entries[k].text) > longest) longest = legend_text_len(entries[k].text);
    if (count) {
        L.width = L.pad + L.swatch + L.gap + (uint32_t)longest * L.advance + L.pad;
        L.height = L.pad + (uint32_t)count * L.line - 4 * L.s + L.pad;
    }
    const uint32_t width = picture->width + L.width;
    const uint32_t height = picture->height > L.height ? picture->height : L.height;
    if (width < picture->width)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "legend: the picture is too wide");
    uint8_t *pixels;
    trn_status st = raster_alloc(width, height, 4, &pixels, err);
    if (st) return st;
    memset(pixels, 0, (size_t)width * height * 4);
    trn_raster8 r = {width, height, 4, pixels};
    for (uint32_t y = 0; y < picture->height; y++)
        for (uint32_t x = 0; x < picture->width; x++) {
            const uint8_t *p =
                picture->pixels + ((size_t)y * picture->width + x) * picture->channels;
            uint8_t rgba[4] = {p[0], p[0], p[0], 255};
            if (picture->channels >= 3) rgba[1] = p[1], rgba[2] = p[2];
            if (picture->channels == 4) rgba[3] = p[3];
            put_pixel(&r, x, y, rgba);
        }
    static const uint8_t paper[4] = {255, 255, 255, 255}, edge[4] = {64, 64, 64, 255};
    const uint32_t x0 = picture->width;
    if (count) fill(&r, x0, 0, L.width, L.height, paper);
    for (size_t k = 0; k < count; k++) {
        const uint32_t y = L.pad + (uint32_t)k * L.line, x = x0 + L.pad;
        fill(&r, x, y, L.swatch, L.swatch, edge);
        if (entries[k].rgba[3])
            fill(&r, x + L.s, y + L.s, L.swatch - 2 * L.s, L.swatch - 2 * L.s, entries[k].rgba);
        else
            fill(&r, x + L.s, y + L.s, L.swatch - 2 * L.s, L.swatch - 2 * L.s, paper);
        draw_text(&r, x + L.swatch + L.gap, y, L.s, entries[k].text);
    }
    *out = r;
    return TRN_OK;
}

/* ---- water over a picture ---- */

/* A channel value 0..255 (as double) rounded half up and clamped. */
static uint8_t blend_byte(double v)
{
    if (!(v > 0.0)) return 0;
    if (v >= 255.0) return 255;
    return (uint8_t)(v + 0.5);
}

static void tint_pixel(uint8_t *p, uint8_t channels, const trn_water_look *look, double depth)
{
    const double s = exp(-depth / look->absorption_distance);
    double c[4];
    for (int k = 0; k < 4; k++)
        c[k] = s * look->shallow_color[k] + (1.0 - s) * look->deep_color[k];
    const double a = c[3];
    const int colours = channels == 4 ? 3 : channels;
    for (int k = 0; k < colours; k++)
        p[k] = blend_byte((double)p[k] * (1.0 - a) + 255.0 * c[k] * a);
    if (channels == 4) p[3] = blend_byte(255.0 * (a + (double)p[3] / 255.0 * (1.0 - a)));
}

trn_status trn_render_water_overlay(trn_raster8 *picture, const trn_field *ground,
                                    const trn_water *water, trn_error *err)
{
    if (!picture || !picture->pixels || !ground || !ground->heights || !water ||
        (picture->channels != 1 && picture->channels != 3 && picture->channels != 4))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water overlay: needs a picture of 1, 3 or 4 channels, the ground "
                             "and the water");
    const uint32_t cols = ground->cells_x + 1u, rows = ground->cells_z + 1u;
    if (picture->width != cols || picture->height != rows)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "water overlay: the picture is %u x %u, the ground's grid %u x %u "
                             "samples",
                             picture->width, picture->height, cols, rows);
    if (water->cells_x != ground->cells_x || water->cells_z != ground->cells_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "water overlay: the water's grid is %u x %u cells, the ground's "
                             "%u x %u",
                             water->cells_x, water->cells_z, ground->cells_x, ground->cells_z);
    if (!water->body_count || !water->wet || !water->owner || !water->surface) return TRN_OK;
    const size_t n = (size_t)cols * rows;
    size_t first = 0;
    while (first < n && !(water->wet[first] && water->owner[first] >= 0 &&
                          (uint32_t)water->owner[first] < water->body_count))
        first++;
    if (first == n) return TRN_OK;
    /* Grey turns RGB only now that something is drawn, so dry pictures keep their bytes. */
    if (picture->channels == 1) {
        uint8_t *rgb;
        trn_status st = raster_alloc(cols, rows, 3, &rgb, err);
        if (st) return st;
        for (size_t k = 0; k < n; k++)
            rgb[3 * k] = rgb[3 * k + 1] = rgb[3 * k + 2] = picture->pixels[k];
        free(picture->pixels);
        picture->pixels = rgb;
        picture->channels = 3;
    }
    const uint8_t ch = picture->channels;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= TRN_ROWS_PARALLEL_SAMPLES)
#endif
    for (long long r = 0; r < (long long)rows; r++) {
        const size_t j = rows - 1u - (size_t)r; /* north up: picture row 0 is the last grid row */
        uint8_t *out = picture->pixels + (size_t)r * cols * ch;
        for (size_t i = 0; i < cols; i++) {
            const size_t k = j * cols + i;
            const int32_t b = water->owner[k];
            if (!water->wet[k] || b < 0 || (uint32_t)b >= water->body_count) continue;
            double depth = (double)water->surface[k] - (double)ground->heights[k];
            if (!(depth > 0.0)) depth = 0.0;
            tint_pixel(out + i * ch, ch, &water->bodies[b].look, depth);
        }
    }
    return TRN_OK;
}
