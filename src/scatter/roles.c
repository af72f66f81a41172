/* Automatic surface roles: per-sample classification, triangle majority, role maps, windows. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/generate.h"
#include "terrane/roles.h"

#define ROLES_PI 3.14159265358979323846

/* A ratio far above the rounding of atan/sqrt/tan: outside it, comparing squared gradients
 * decides a slope threshold exactly; inside it the angle itself is computed. */
#define ROLES_MARGIN 1e-7

/* Names used in the legend (the material set's role names). */
static const char *const role_names[TRN_ROLE_COUNT] = {
    "ground", "grass", "rock", "cliff", "sediment", "sand", "snow", "wet_ground", "underwater"};

static const uint8_t role_rgb[TRN_ROLE_COUNT][3] = {
    {134, 96, 60},   /* ground */
    {86, 152, 62},   /* grass */
    {128, 128, 128}, /* rock */
    {72, 68, 66},    /* cliff */
    {176, 150, 104}, /* sediment */
    {218, 194, 142}, /* sand */
    {244, 246, 250}, /* snow */
    {92, 70, 50},    /* wet_ground */
    {62, 118, 196},  /* underwater */
};

void trn_roles_params_default(trn_roles_params *p)
{
    if (!p) return;
    p->cliff_slope = 55.0;
    p->rock_slope = TRN_ROCK_SLOPE;
    p->snow_height = INFINITY;
    p->shore_distance = 4.0;
    p->sand_slope = TRN_SAND_SLOPE;
    p->cut_depth = 0.05;
    p->deposit_depth = 0.05;
    p->channel_accumulation = 1024u;
    p->channel_sediment_slope = 8.0;
    p->grass_moisture = 0.55;
    p->grass_slope = 25.0;
    p->threads = 0;
}

/* ---- slope thresholds ---- */

/* How one "slope >= degrees" test is decided: by the squared Horn gradient against the
 * threshold's, and by the angle itself near it (or for 90 degrees and more, where tan fails). */
typedef struct slope_test {
    bool by_gradient; /* false: always compute the angle */
    double lo, hi;    /* s2 < lo: below; s2 > hi: at or above; else compute the angle */
    double degrees;
} slope_test;

static slope_test slope_test_make(double degrees)
{
    slope_test t = {false, 0.0, 0.0, degrees};
    if (degrees < 90.0) {
        /* slope = atan(sqrt(s2) / 8) in degrees, so slope >= d  <=>  s2 >= (8 tan d)^2. */
        const double g = 8.0 * tan(degrees * (ROLES_PI / 180.0));
        t.by_gradient = true;
        t.lo = g * g * (1.0 - ROLES_MARGIN);
        t.hi = g * g * (1.0 + ROLES_MARGIN);
    }
    return t;
}

/* The angle exactly as trn_field_slope_at computes it, only when the threshold needs it. */
static bool slope_at_least(const slope_test *t, double s2, const trn_field *field, uint32_t i,
                           uint32_t j)
{
    if (t->by_gradient) {
        if (s2 < t->lo) return false;
        if (s2 > t->hi) return true;
    }
    return trn_field_slope_at(field, i, j) >= t->degrees;
}

/* ---- checks ---- */

static trn_status bad(trn_error *err, const char *what, const char *expected, double found)
{
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s: expected %s, found %g", what,
                         expected, found);
}

static trn_status check_params(const trn_roles_params *p, trn_error *err)
{
    const struct {
        const char *name;
        double value;
    } slopes[] = {{"cliff_slope", p->cliff_slope},
                  {"rock_slope", p->rock_slope},
                  {"sand_slope", p->sand_slope},
                  {"channel_sediment_slope", p->channel_sediment_slope},
                  {"grass_slope", p->grass_slope}};
    for (size_t k = 0; k < sizeof slopes / sizeof slopes[0]; k++)
        if (!(slopes[k].value >= 0.0))
            return bad(err, slopes[k].name, "degrees >= 0", slopes[k].value);
    if (isnan(p->snow_height))
        return bad(err, "snow_height", "a height or INFINITY", p->snow_height);
    if (!(p->shore_distance >= 0.0))
        return bad(err, "shore_distance", "world units >= 0", p->shore_distance);
    if (!(p->cut_depth > 0.0)) return bad(err, "cut_depth", "> 0", p->cut_depth);
    if (!(p->deposit_depth > 0.0)) return bad(err, "deposit_depth", "> 0", p->deposit_depth);
    if (isnan(p->grass_moisture))
        return bad(err, "grass_moisture", "a moisture", p->grass_moisture);
    return TRN_OK;
}

static trn_status check_input(const trn_roles_input *in, const trn_roles_params *p, const void *out,
                              trn_error *err)
{
    if (!in || !in->field || !in->field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: expected a field with heights, found none");
    if (in->field->cells_x == 0 || in->field->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: expected at least one cell each way, found %u x %u",
                             in->field->cells_x, in->field->cells_z);
    if (!p)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: expected parameters, found none");
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: expected an output buffer, found none");
    if (trn_field_sample_count(in->field) == 0)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "surface roles: %u x %u cells overflow the sample count",
                             in->field->cells_x, in->field->cells_z);
    return check_params(p, err);
}

/* ---- classification ---- */

typedef struct classifier {
    const trn_roles_input *in;
    const trn_roles_params *p;
    slope_test cliff, rock, sand, channel, grass;
    double inv_ew, inv_ns;
} classifier;

static void classifier_init(classifier *c, const trn_roles_input *in, const trn_roles_params *p)
{
    c->in = in;
    c->p = p;
    c->cliff = slope_test_make(p->cliff_slope);
    c->rock = slope_test_make(p->rock_slope);
    c->sand = slope_test_make(p->sand_slope);
    c->channel = slope_test_make(p->channel_sediment_slope);
    c->grass = slope_test_make(p->grass_slope);
    c->inv_ew = 1.0 / (in->field->size_x / in->field->cells_x);
    c->inv_ns = 1.0 / (in->field->size_z / in->field->cells_z);
}

static bool snow_allowed(const trn_roles_input *in, size_t k)
{
    if (!in->biomes || !in->allow_snow) return true;
    const uint8_t label = in->biomes[k];
    return label >= in->allow_snow_count || in->allow_snow[label];
}

/* Classify samples [i0, i1) of row j into out (out[0] is sample i0). */
static void classify_row(const classifier *c, uint32_t j, uint32_t i0, uint32_t i1, uint8_t *out)
{
    const trn_roles_input *in = c->in;
    const trn_roles_params *p = c->p;
    const trn_field *f = in->field;
    const size_t nx = (size_t)f->cells_x + 1u;
    const uint32_t js = j > 0 ? j - 1u : 0u, jn = j < f->cells_z ? j + 1u : f->cells_z;
    const float *south = f->heights + (size_t)js * nx, *mid = f->heights + (size_t)j * nx;
    const float *north = f->heights + (size_t)jn * nx;
    for (uint32_t i = i0; i < i1; i++) {
        const size_t k = (size_t)j * nx + i;
        const double h = mid[i];
        uint8_t role;
        if (!isfinite(h)) {
            out[i - i0] = (uint8_t)TRN_ROLE_NONE;
            continue;
        }
        const size_t w = i > 0 ? i - 1u : 0u, e = i < f->cells_x ? i + 1u : f->cells_x;
        /* Horn's sums as src/gen/classify.c forms them; only their squared length is needed. */
        const double x = (((double)north[w] + mid[w] + mid[w] + south[w]) -
                          ((double)north[e] + mid[e] + mid[e] + south[e])) *
                         c->inv_ew;
        const double y = (((double)north[w] + north[i] + north[i] + north[e]) -
                          ((double)south[w] + south[i] + south[i] + south[e])) *
                         c->inv_ns;
        const double s2 = x * x + y * y;
        const bool wet =
            in->wet ? in->wet[k] != 0 : (in->water_distance && in->water_distance[k] == 0.0f);
        const bool shore = !wet && in->water_distance && in->water_distance[k] <= p->shore_distance;
        const bool channel = in->accumulation && in->accumulation[k] >= p->channel_accumulation;
        if (wet)
            role = TRN_ROLE_UNDERWATER;
        else if (slope_at_least(&c->cliff, s2, f, i, j))
            role = TRN_ROLE_CLIFF;
        else if (h >= p->snow_height && snow_allowed(in, k))
            role = TRN_ROLE_SNOW;
        else if (shore)
            role = slope_at_least(&c->sand, s2, f, i, j) ? TRN_ROLE_WET_GROUND : TRN_ROLE_SAND;
        else if (slope_at_least(&c->rock, s2, f, i, j))
            role = TRN_ROLE_ROCK;
        else if (in->transport && in->transport[k] <= -p->cut_depth)
            role = TRN_ROLE_ROCK;
        else if (in->transport && in->transport[k] >= p->deposit_depth)
            role = TRN_ROLE_SEDIMENT;
        else if (channel)
            role =
                slope_at_least(&c->channel, s2, f, i, j) ? TRN_ROLE_WET_GROUND : TRN_ROLE_SEDIMENT;
        else if (in->moisture && in->moisture[k] >= p->grass_moisture &&
                 !slope_at_least(&c->grass, s2, f, i, j))
            role = TRN_ROLE_GRASS;
        else
            role = TRN_ROLE_GROUND;
        out[i - i0] = role;
    }
}

static int thread_count(int wanted)
{
#ifdef _OPENMP
    return wanted > 0 ? wanted : omp_get_max_threads();
#else
    (void)wanted;
    return 1;
#endif
}

/* Classify rows [j0, j1) x samples [i0, i1) into out (row stride i1 - i0). */
static void classify_rect(const classifier *c, uint32_t i0, uint32_t j0, uint32_t i1, uint32_t j1,
                          uint8_t *out)
{
    const size_t stride = (size_t)(i1 - i0);
    const long long rows = (long long)j1 - (long long)j0;
    const int threads = thread_count(c->p->threads);
    /* Windows under 2^20 samples (a sculpt stroke's) stay on one thread: on a busy machine a
     * woken thread can wait a whole time slice, far longer than the rows take. */
    const bool parallel = (uint64_t)stride * (uint64_t)rows >= (1u << 20);
    (void)threads;
    (void)parallel;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (parallel)
#endif
    for (long long r = 0; r < rows; r++)
        classify_row(c, j0 + (uint32_t)r, i0, i1, out + (size_t)r * stride);
}

trn_status trn_roles_classify(const trn_roles_input *in, const trn_roles_params *p,
                              uint8_t *roles_per_sample, trn_error *err)
{
    trn_status st = check_input(in, p, roles_per_sample, err);
    if (st != TRN_OK) return st;
    classifier c;
    classifier_init(&c, in, p);
    classify_rect(&c, 0, 0, in->field->cells_x + 1u, in->field->cells_z + 1u, roles_per_sample);
    return TRN_OK;
}

/* ---- windows and chunks ---- */

trn_status trn_roles_classify_window(const trn_roles_input *in, const trn_roles_params *p,
                                     uint32_t i0, uint32_t j0, uint32_t i1, uint32_t j1,
                                     uint32_t chunk_cells, uint8_t *roles_per_sample,
                                     uint8_t *changed_chunks, uint32_t *changed_count,
                                     trn_error *err)
{
    trn_status st = check_input(in, p, roles_per_sample, err);
    if (st != TRN_OK) return st;
    const trn_field *f = in->field;
    const uint32_t chunk = chunk_cells ? chunk_cells : TRN_ROLES_CHUNK_CELLS;
    uint32_t chunks_x, chunks_z;
    trn_roles_chunk_grid(f->cells_x, f->cells_z, chunk, &chunks_x, &chunks_z);
    /* Clamp to the samples, then grow by the slope's reach. */
    if (i1 > f->cells_x + 1u) i1 = f->cells_x + 1u;
    if (j1 > f->cells_z + 1u) j1 = f->cells_z + 1u;
    const bool empty = i0 >= i1 || j0 >= j1;
    const size_t chunk_count = (size_t)chunks_x * chunks_z;
    /* Without the caller's chunk flags, count on our own so each chunk counts once. */
    uint8_t *marks = changed_chunks ? changed_chunks : calloc(chunk_count, 1);
    if (!marks)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "surface roles: out of memory for %zu chunk flags", chunk_count);
    uint8_t *fresh = NULL;
    size_t stride = 0;
    if (!empty) {
        i0 = i0 > 0 ? i0 - 1u : 0u;
        j0 = j0 > 0 ? j0 - 1u : 0u;
        if (i1 <= f->cells_x) i1++;
        if (j1 <= f->cells_z) j1++;
        stride = (size_t)(i1 - i0);
        fresh = malloc(stride * (size_t)(j1 - j0));
        if (!fresh) {
            if (marks != changed_chunks) free(marks);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "surface roles: out of memory for a %zu x %u window", stride,
                                 j1 - j0);
        }
        classifier c;
        classifier_init(&c, in, p);
        classify_rect(&c, i0, j0, i1, j1, fresh);
    }
    memset(marks, 0, chunk_count);
    uint32_t count = 0;
    const size_t nx = (size_t)f->cells_x + 1u;
    for (uint32_t j = j0; !empty && j < j1; j++) {
        uint8_t *row = roles_per_sample + (size_t)j * nx;
        const uint8_t *src = fresh + (size_t)(j - j0) * stride;
        for (uint32_t i = i0; i < i1; i++) {
            if (row[i] == src[i - i0]) continue;
            row[i] = src[i - i0];
            /* A border sample is a vertex of the chunks on both sides. */
            const uint32_t cx_lo = i > 0 ? (i - 1u) / chunk : 0u;
            const uint32_t cz_lo = j > 0 ? (j - 1u) / chunk : 0u;
            const uint32_t cx_hi = i / chunk < chunks_x ? i / chunk : chunks_x - 1u;
            const uint32_t cz_hi = j / chunk < chunks_z ? j / chunk : chunks_z - 1u;
            for (uint32_t cz = cz_lo; cz <= cz_hi; cz++)
                for (uint32_t cx = cx_lo; cx <= cx_hi; cx++) {
                    const size_t ck = (size_t)cz * chunks_x + cx;
                    count += marks[ck] == 0;
                    marks[ck] = 1;
                }
        }
    }
    free(fresh);
    if (marks != changed_chunks) free(marks);
    if (changed_count) *changed_count = count;
    return TRN_OK;
}

/* ---- triangles ---- */

static uint8_t majority(uint8_t a, uint8_t b, uint8_t c)
{
    /* Two equal vertices win; all three different: the first vertex. */
    return (b == c && a != b) ? b : a;
}

trn_status trn_roles_triangles(uint32_t cells_x, uint32_t cells_z, const uint8_t *roles_per_sample,
                               uint8_t *roles_per_triangle, trn_error *err)
{
    if (!roles_per_sample || !roles_per_triangle || cells_x == 0 || cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: expected sample and triangle buffers and cells, "
                             "found %s, %s, %u x %u cells",
                             roles_per_sample ? "samples" : "no samples",
                             roles_per_triangle ? "triangles" : "no triangles", cells_x, cells_z);
    if ((uint64_t)cells_x * cells_z > SIZE_MAX / 2u)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "surface roles: %u x %u cells overflow the triangle count", cells_x,
                             cells_z);
    const size_t nx = (size_t)cells_x + 1u;
    const long long rows = cells_z;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((uint64_t)cells_x * cells_z >= (1u << 20))
#endif
    for (long long jj = 0; jj < rows; jj++) {
        const size_t j = (size_t)jj;
        const uint8_t *s = roles_per_sample + j * nx, *n = s + nx;
        uint8_t *t = roles_per_triangle + 2u * j * cells_x;
        for (size_t i = 0; i < cells_x; i++) {
            t[2u * i] = majority(s[i], s[i + 1], n[i + 1]);
            t[2u * i + 1] = majority(s[i], n[i + 1], n[i]);
        }
    }
    return TRN_OK;
}

/* ---- role maps ---- */

void trn_roles_color(uint8_t role, uint8_t rgba[4])
{
    if (role < TRN_ROLE_COUNT) {
        rgba[0] = role_rgb[role][0];
        rgba[1] = role_rgb[role][1];
        rgba[2] = role_rgb[role][2];
        rgba[3] = 255;
    } else {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0;
    }
}

void trn_roles_map_dispose(trn_roles_map *map)
{
    if (!map) return;
    trn_raster8_dispose(&map->picture);
    free(map->legend_json);
    memset(map, 0, sizeof *map);
}

/* Append to a fixed buffer; the caller sized it for the longest legend. */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0) *len += (size_t)n;
    if (*len >= size) *len = size - 1u;
}

trn_status trn_roles_map_render(uint32_t cells_x, uint32_t cells_z, const uint8_t *roles_per_sample,
                                trn_roles_map *out, trn_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!roles_per_sample || !out || cells_x == 0 || cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "role map: expected roles, an output and cells, found %s, %s, "
                             "%u x %u cells",
                             roles_per_sample ? "roles" : "no roles", out ? "an output" : "none",
                             cells_x, cells_z);
    const size_t nx = (size_t)cells_x + 1u, nz = (size_t)cells_z + 1u;
    if (nx > SIZE_MAX / 4u / nz)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "role map: %u x %u cells overflow the picture size", cells_x, cells_z);
    uint8_t *pixels = malloc(nx * nz * 4u);
    /* Nine roles and the rest, each with a 20-digit count: well under 2 KiB. */
    const size_t legend_size = 2048u;
    char *legend = malloc(legend_size);
    if (!pixels || !legend) {
        free(pixels);
        free(legend);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "role map: out of memory for %zu x %zu pixels", nx, nz);
    }
    uint8_t lut[256][4];
    for (unsigned r = 0; r < 256u; r++)
        trn_roles_color((uint8_t)r, lut[r]);
    uint64_t counts[TRN_ROLE_COUNT + 1] = {0};
    for (size_t j = 0; j < nz; j++) {
        const uint8_t *row = roles_per_sample + j * nx;
        /* North up: the last sample row is the picture's first. */
        uint8_t *px = pixels + (nz - 1u - j) * nx * 4u;
        for (size_t i = 0; i < nx; i++) {
            const uint8_t r = row[i];
            memcpy(px + 4u * i, lut[r], 4u);
            counts[r < TRN_ROLE_COUNT ? r : TRN_ROLE_COUNT]++;
        }
    }
    size_t len = 0;
    put(legend, legend_size, &len, "{\"roles\": [");
    for (unsigned r = 0; r < TRN_ROLE_COUNT; r++)
        put(legend, legend_size, &len,
            "%s{\"role\": \"%s\", \"color\": [%u, %u, %u, 255], \"samples\": %llu}", r ? ", " : "",
            role_names[r], role_rgb[r][0], role_rgb[r][1], role_rgb[r][2],
            (unsigned long long)counts[r]);
    put(legend, legend_size, &len,
        "], \"none\": {\"color\": [0, 0, 0, 0], \"samples\": %llu}, \"samples\": %llu}\n",
        (unsigned long long)counts[TRN_ROLE_COUNT], (unsigned long long)(nx * nz));
    out->picture.width = (uint32_t)nx;
    out->picture.height = (uint32_t)nz;
    out->picture.channels = 4;
    out->picture.pixels = pixels;
    memcpy(out->counts, counts, sizeof counts);
    out->legend_json = legend;
    return TRN_OK;
}
