/* Water bodies: defaults, copies, validation (exact polygon checks) and river path sampling;
 * the resolved water's copy, disposal, lookup and ground hash. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "core/checked.h"
#include "core/json_fields.h"
#include "water/water_internal.h"
#include "terrane/water.h"

/* Length of an id that may lack its terminator (printed with %.*s). */
static int id_len(const char *id)
{
    const char *end = memchr(id, '\0', TRN_WATER_ID_MAX);
    return end ? (int)(end - id) : (int)TRN_WATER_ID_MAX;
}

/* ---- kinds and defaults ---- */

const char *trn_spill_outlet_name(trn_spill_outlet outlet)
{
    switch (outlet) {
    case TRN_SPILL_LIMIT:
        return "limit";
    case TRN_SPILL_EDGE:
        return "edge";
    case TRN_SPILL_WATER:
        return "water";
    case TRN_SPILL_NONE:
        break;
    }
    return "none";
}

const char *trn_water_kind_name(trn_water_kind kind)
{
    switch (kind) {
    case TRN_WATER_LAKE:
        return "lake";
    case TRN_WATER_OCEAN:
        return "ocean";
    case TRN_WATER_RIVER:
        return "river";
    }
    return "unknown";
}

bool trn_water_kind_parse(const char *name, trn_water_kind *kind)
{
    static const trn_water_kind kinds[] = {TRN_WATER_LAKE, TRN_WATER_OCEAN, TRN_WATER_RIVER};
    if (!name) return false;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp(name, trn_water_kind_name(kinds[k])) == 0) {
            if (kind) *kind = kinds[k];
            return true;
        }
    return false;
}

static void set4(double *dst, double a, double b, double c, double d)
{
    dst[0] = a;
    dst[1] = b;
    dst[2] = c;
    dst[3] = d;
}

void trn_water_look_default(trn_water_look *look)
{
    if (!look) return;
    memset(look, 0, sizeof *look);
    set4(look->shallow_color, 0.10, 0.45, 0.50, 0.35);
    set4(look->deep_color, 0.02, 0.10, 0.16, 0.90);
    look->absorption_distance = 4.0;
    look->roughness = 0.05;
    look->flow_speed = 0.0;
    look->flow_direction[0] = 1.0;
    look->flow_direction[1] = 0.0;
    look->wave_amplitude = 0.05;
    look->wave_length = 2.0;
    look->wave_speed = 0.5;
    look->normal_strength = 1.0;
    look->foam_width = 0.5;
    look->foam_strength = 0.5;
    set4(look->foam_color, 1.0, 1.0, 1.0, 1.0);
}

void trn_water_body_init(trn_water_body *body, trn_water_kind kind, const char *id)
{
    if (!body) return;
    memset(body, 0, sizeof *body);
    if (id) snprintf(body->id, sizeof body->id, "%s", id);
    body->kind = kind;
    body->level = 0.0;
    body->level_mode = TRN_LAKE_LEVEL_FIXED;
    body->spill_offset = 0.5;
    body->spill_level = NAN;
    body->radius = 64.0;
    body->carve_depth = 0.0;
    body->interpolation = TRN_RIVER_LINEAR;
    body->curve_steps = 8;
    body->width = 8.0;
    body->surface_mode = TRN_RIVER_SURFACE_LEVEL;
    body->river_depth = 1.0;
    trn_water_look_default(&body->look);
    body->carve = true;
}

void trn_water_body_dispose(trn_water_body *body)
{
    if (!body) return;
    free(body->boundary);
    free(body->control);
    free(body->path);
    body->boundary = body->control = body->path = NULL;
    body->boundary_count = body->control_count = body->path_count = 0;
}

/* A copy of count XYZ or XZ tuples (NULL for none). */
static trn_status dup_doubles(const double *from, uint32_t count, size_t per, double **to,
                              trn_error *err)
{
    *to = NULL;
    if (count == 0 || !from) return TRN_OK;
    size_t bytes;
    if (!trn_mul_size((size_t)count, per * sizeof(double), &bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "water body copy: size overflow");
    *to = malloc(bytes);
    if (!*to)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water body copy: out of memory");
    memcpy(*to, from, bytes);
    return TRN_OK;
}

trn_status trn_water_body_copy(const trn_water_body *from, trn_water_body *to, trn_error *err)
{
    if (!from || !to)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_water_body_copy: NULL body");
    trn_water_body tmp = *from;
    tmp.boundary = tmp.control = tmp.path = NULL;
    trn_status st = dup_doubles(from->boundary, from->boundary_count, 2, &tmp.boundary, err);
    if (st == TRN_OK) st = dup_doubles(from->control, from->control_count, 3, &tmp.control, err);
    if (st == TRN_OK) st = dup_doubles(from->path, from->path_count, 3, &tmp.path, err);
    if (st != TRN_OK) {
        trn_water_body_dispose(&tmp);
        return st;
    }
    if (!tmp.boundary) tmp.boundary_count = 0;
    if (!tmp.control) tmp.control_count = 0;
    if (!tmp.path) tmp.path_count = 0;
    *to = tmp;
    return TRN_OK;
}

/* ---- exact predicates ---- */

/* x + y = a + b exactly (Knuth's two-sum; needs round-to-nearest doubles, no contraction). */
static void two_sum(double a, double b, double *x, double *y)
{
    const double s = a + b, bv = s - a, av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

int trn_water_orient(double ax, double az, double bx, double bz, double cx, double cz)
{
    /* Shewchuk's filter: the rounded determinant decides when it is clearly away from 0. */
    const double l = (ax - cx) * (bz - cz), r = (az - cz) * (bx - cx), det = l - r;
    const double bound = (3.0 + 16.0 * 0x1p-53) * 0x1p-53 * (fabs(l) + fabs(r));
    if (det > bound) return 1;
    if (det < -bound) return -1;
    /* Exact: six products as two-products, summed into a nonoverlapping expansion. */
    const double fa[6] = {ax, -ax, -cx, -az, az, bx};
    const double fb[6] = {bz, cz, bz, bx, cx, cz};
    double e[13];
    int n = 0;
    for (int k = 0; k < 6; k++) {
        const double p = fa[k] * fb[k], lo = fma(fa[k], fb[k], -p);
        const double parts[2] = {lo, p};
        for (int q = 0; q < 2; q++) {
            double carry = parts[q];
            for (int m = 0; m < n; m++) {
                double hi, low;
                two_sum(carry, e[m], &hi, &low);
                e[m] = low;
                carry = hi;
            }
            e[n++] = carry;
        }
    }
    for (int m = n - 1; m >= 0; m--)
        if (e[m] != 0.0) return e[m] > 0.0 ? 1 : -1;
    return 0;
}

uint32_t trn_water_boundary_count(const trn_water_body *body)
{
    uint32_t n = body->boundary ? body->boundary_count : 0;
    if (n >= 2 && body->boundary[0] == body->boundary[2 * (n - 1)] &&
        body->boundary[1] == body->boundary[2 * (n - 1) + 1])
        n--;
    return n;
}

static bool between(double a, double b, double p)
{
    return (a <= p && p <= b) || (b <= p && p <= a);
}

bool trn_water_polygon_contains(const double *xz, uint32_t n, double px, double pz)
{
    bool inside = false;
    for (uint32_t k = 0, prev = n - 1; k < n; prev = k++) {
        const double ax = xz[2 * prev], az = xz[2 * prev + 1], bx = xz[2 * k], bz = xz[2 * k + 1];
        if (between(az, bz, pz) && between(ax, bx, px) &&
            trn_water_orient(ax, az, bx, bz, px, pz) == 0)
            return true; /* on the edge */
        if ((az > pz) != (bz > pz)) {
            const int o = trn_water_orient(ax, az, bx, bz, px, pz);
            if (bz > az ? o > 0 : o < 0) inside = !inside;
        }
    }
    return inside;
}

/* ---- validation ---- */

/* A number as the shortest text that reads back as the same double (messages). */
typedef struct num_text {
    char s[32];
} num_text;

static num_text num(double v)
{
    num_text t;
    /* At least the integer digits, or %g would write 20 as 2e+01. */
    const double mag = fabs(v);
    const int first = mag >= 1.0 && mag < 1e17 ? (int)floor(log10(mag)) + 1 : 1;
    for (int digits = first; digits <= 17; digits++) {
        snprintf(t.s, sizeof t.s, "%.*g", digits, v);
        if (!isfinite(v) || strtod(t.s, NULL) == v) break;
    }
    return t;
}

static trn_status fail(const trn_water_body *b, const char **field, trn_error *err,
                       const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static trn_status fail(const trn_water_body *b, const char **field, trn_error *err,
                       const char *name, const char *fmt, ...)
{
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (field) *field = name;
    return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1, "water body '%.*s': %s: %s",
                         id_len(b->id), b->id, name, what);
}

/* Water body fields' ranges as the documents' range rows (core/json_fields.h: finite, open or
 * closed at lo); expect is what the error says. */
static const trn_doc_range any_finite = {-HUGE_VAL, HUGE_VAL, 0, "a finite number"};
static const trn_doc_range at_least_0 = {0.0, HUGE_VAL, 0, "a finite number >= 0"};
static const trn_doc_range above_0 = {0.0, HUGE_VAL, TRN_DOC_LO_OPEN, "a finite number > 0"};
static const trn_doc_range unit = {0.0, 1.0, 0, "a number in 0..1"};

#define CHECK_RANGE(v, name, range)                                                                \
    do {                                                                                           \
        if (!trn_doc_range_ok(&(range), (v)))                                                      \
            return fail(b, field, err, name, "expected %s, found %s", (range).expect, num((v)).s); \
    } while (0)
#define CHECK_FINITE(v, name) CHECK_RANGE(v, name, any_finite)
#define CHECK_MIN(v, name) CHECK_RANGE(v, name, at_least_0)
#define CHECK_POS(v, name) CHECK_RANGE(v, name, above_0)
#define CHECK_UNIT(v, name) CHECK_RANGE(v, name, unit)

static trn_status check_color(const trn_water_body *b, const double *rgba, const char *name,
                              const char **field, trn_error *err)
{
    for (int c = 0; c < 4; c++)
        if (!(rgba[c] >= 0.0 && rgba[c] <= 1.0))
            return fail(b, field, err, name, "expected RGBA channels in 0..1, found %s at [%d]",
                        num(rgba[c]).s, c);
    return TRN_OK;
}

static trn_status check_look(const trn_water_body *b, const char **field, trn_error *err)
{
    const trn_water_look *l = &b->look;
    trn_status st = check_color(b, l->shallow_color, "shallow_color", field, err);
    if (st == TRN_OK) st = check_color(b, l->deep_color, "deep_color", field, err);
    if (st != TRN_OK) return st;
    CHECK_POS(l->absorption_distance, "absorption_distance");
    CHECK_UNIT(l->roughness, "roughness");
    CHECK_MIN(l->flow_speed, "flow_speed");
    const double dx = l->flow_direction[0], dz = l->flow_direction[1];
    if (!isfinite(dx) || !isfinite(dz))
        return fail(b, field, err, "flow_direction", "expected a finite XZ pair, found [%s, %s]",
                    num(dx).s, num(dz).s);
    if (b->kind != TRN_WATER_RIVER && l->flow_speed > 0.0 && dx == 0.0 && dz == 0.0)
        return fail(b, field, err, "flow_direction",
                    "expected a nonzero direction for flow_speed %s, found [0, 0]",
                    num(l->flow_speed).s);
    CHECK_MIN(l->wave_amplitude, "wave_amplitude");
    CHECK_POS(l->wave_length, "wave_length");
    CHECK_MIN(l->wave_speed, "wave_speed");
    CHECK_MIN(l->normal_strength, "normal_strength");
    CHECK_MIN(l->foam_width, "foam_width");
    CHECK_UNIT(l->foam_strength, "foam_strength");
    return check_color(b, l->foam_color, "foam_color", field, err);
}

/* Two boundary edges (a, b) and (c, d) that are not neighbours share a point (exact). */
static bool edges_touch(const double *a, const double *bb, const double *c, const double *d)
{
    const int o1 = trn_water_orient(a[0], a[1], bb[0], bb[1], c[0], c[1]);
    const int o2 = trn_water_orient(a[0], a[1], bb[0], bb[1], d[0], d[1]);
    const int o3 = trn_water_orient(c[0], c[1], d[0], d[1], a[0], a[1]);
    const int o4 = trn_water_orient(c[0], c[1], d[0], d[1], bb[0], bb[1]);
    if (o1 * o2 < 0 && o3 * o4 < 0) return true;
    if (o1 == 0 && between(a[0], bb[0], c[0]) && between(a[1], bb[1], c[1])) return true;
    if (o2 == 0 && between(a[0], bb[0], d[0]) && between(a[1], bb[1], d[1])) return true;
    if (o3 == 0 && between(c[0], d[0], a[0]) && between(c[1], d[1], a[1])) return true;
    if (o4 == 0 && between(c[0], d[0], bb[0]) && between(c[1], d[1], bb[1])) return true;
    return false;
}

/* Neighbouring edges a -> v -> c fold back onto each other (collinear, c on the ray v -> a). */
static bool edges_fold(const double *a, const double *v, const double *c)
{
    if (trn_water_orient(a[0], a[1], v[0], v[1], c[0], c[1]) != 0) return false;
    if (a[0] != v[0]) return (a[0] > v[0]) == (c[0] > v[0]);
    return (a[1] > v[1]) == (c[1] > v[1]);
}

typedef struct edge_span {
    double lo, hi; /* x range */
    uint32_t index;
} edge_span;

static int cmp_span(const void *pa, const void *pb)
{
    const edge_span *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static trn_status check_boundary(const trn_water_body *b, const char **field, trn_error *err)
{
    if (b->boundary_count > 0 && !b->boundary)
        return fail(b, field, err, "boundary", "expected %u vertices, found none",
                    b->boundary_count);
    const uint32_t n = trn_water_boundary_count(b);
    if (n == 0) return TRN_OK;
    if (n < 3)
        return fail(b, field, err, "boundary", "expected at least 3 distinct vertices, found %u",
                    n);
    if (n > TRN_WATER_MAX_BOUNDARY)
        return fail(b, field, err, "boundary", "expected at most %u vertices, found %u",
                    TRN_WATER_MAX_BOUNDARY, n);
    const double *v = b->boundary;
    for (uint32_t k = 0; k < n; k++)
        if (!isfinite(v[2 * k]) || !isfinite(v[2 * k + 1]))
            return fail(b, field, err, "boundary",
                        "expected finite XZ pairs, found [%s, %s] at vertex %u", num(v[2 * k]).s,
                        num(v[2 * k + 1]).s, k);
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t next = k + 1 == n ? 0 : k + 1;
        if (v[2 * k] == v[2 * next] && v[2 * k + 1] == v[2 * next + 1])
            return fail(b, field, err, "boundary",
                        "expected edges of nonzero length, found vertices %u and %u both at "
                        "[%s, %s]",
                        k, next, num(v[2 * k]).s, num(v[2 * k + 1]).s);
    }
    /* Zero area: every vertex on the line through the first edge (exact). */
    uint32_t off_line = 2;
    while (off_line < n &&
           trn_water_orient(v[0], v[1], v[2], v[3], v[2 * off_line], v[2 * off_line + 1]) == 0)
        off_line++;
    if (off_line == n)
        return fail(b, field, err, "boundary",
                    "expected a nonzero area, found all %u vertices on one line", n);
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t prev = k == 0 ? n - 1 : k - 1, next = k + 1 == n ? 0 : k + 1;
        if (edges_fold(v + 2 * prev, v + 2 * k, v + 2 * next))
            return fail(b, field, err, "boundary",
                        "expected a simple polygon, found edges %u and %u overlapping at "
                        "vertex %u",
                        prev, k, k);
    }
    /* Non-neighbouring edges: sweep over x so only edges with overlapping x ranges meet. */
    edge_span *spans = malloc((size_t)n * sizeof *spans);
    if (!spans) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "boundary: out of memory");
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t next = k + 1 == n ? 0 : k + 1;
        spans[k].lo = fmin(v[2 * k], v[2 * next]);
        spans[k].hi = fmax(v[2 * k], v[2 * next]);
        spans[k].index = k;
    }
    qsort(spans, n, sizeof *spans, cmp_span);
    uint32_t bad_a = UINT32_MAX, bad_b = UINT32_MAX;
    for (uint32_t s = 0; s < n; s++) {
        const uint32_t e = spans[s].index, en = e + 1 == n ? 0 : e + 1;
        for (uint32_t t = s + 1; t < n && spans[t].lo <= spans[s].hi; t++) {
            const uint32_t f = spans[t].index, fn = f + 1 == n ? 0 : f + 1;
            if (fn == e || en == f) continue; /* neighbours: checked by edges_fold */
            if (!edges_touch(v + 2 * e, v + 2 * en, v + 2 * f, v + 2 * fn)) continue;
            const uint32_t lo = e < f ? e : f, hi = e < f ? f : e;
            if (lo < bad_a || (lo == bad_a && hi < bad_b)) {
                bad_a = lo;
                bad_b = hi;
            }
        }
    }
    free(spans);
    if (bad_a != UINT32_MAX)
        return fail(b, field, err, "boundary",
                    "expected a simple polygon, found edges %u and %u intersecting", bad_a, bad_b);
    if (b->kind == TRN_WATER_LAKE && !trn_water_polygon_contains(v, n, b->center_x, b->center_z))
        return fail(b, field, err, "center",
                    "expected a point inside the boundary, found [%s, %s] outside",
                    num(b->center_x).s, num(b->center_z).s);
    return TRN_OK;
}

static trn_status check_points(const trn_water_body *b, const double *p, uint32_t count,
                               const char *what, const char **field, trn_error *err)
{
    if (count > 0 && !p)
        return fail(b, field, err, "river_path", "expected %u %s, found none", count, what);
    if (count < 2)
        return fail(b, field, err, "river_path", "expected at least 2 %s, found %u", what, count);
    for (uint32_t k = 0; k < count; k++)
        for (int c = 0; c < 3; c++)
            if (!isfinite(p[3 * k + (uint32_t)c]))
                return fail(b, field, err, "river_path",
                            "expected finite XYZ triples, found %s in point %u",
                            num(p[3 * k + (uint32_t)c]).s, k);
    return TRN_OK;
}

trn_status trn_water_check_river_controls(const trn_water_body *b, const char **field,
                                          trn_error *err)
{
    if (b->control_count > TRN_WATER_MAX_RIVER_POINTS)
        return fail(b, field, err, "river_path", "expected at most %u control points, found %u",
                    TRN_WATER_MAX_RIVER_POINTS, b->control_count);
    trn_status st = check_points(b, b->control, b->control_count, "control points", field, err);
    if (st != TRN_OK) return st;
    if (b->interpolation != TRN_RIVER_LINEAR && b->interpolation != TRN_RIVER_CATMULL_ROM)
        return fail(b, field, err, "river_path_interpolation",
                    "expected linear or catmull_rom, found %d", (int)b->interpolation);
    if (b->curve_steps < 1 || b->curve_steps > TRN_RIVER_CURVE_STEPS_MAX)
        return fail(b, field, err, "river_curve_steps", "expected an integer in 1..%u, found %u",
                    TRN_RIVER_CURVE_STEPS_MAX, b->curve_steps);
    return TRN_OK;
}

trn_status trn_water_body_validate(const trn_water_body *b, const char **field, trn_error *err)
{
    if (field) *field = NULL;
    if (!b)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_water_body_validate: NULL body");
    if (b->id[0] == '\0' || memchr(b->id, '\0', sizeof b->id) == NULL)
        return fail(b, field, err, "id", "expected a nonempty id of at most %u bytes",
                    TRN_WATER_ID_MAX - 1u);
    if (b->kind != TRN_WATER_LAKE && b->kind != TRN_WATER_OCEAN && b->kind != TRN_WATER_RIVER)
        return fail(b, field, err, "kind", "expected lake, ocean or river, found %d", (int)b->kind);
    CHECK_FINITE(b->level, "level");
    trn_status st;
    if (b->kind == TRN_WATER_LAKE) {
        if (!isfinite(b->center_x) || !isfinite(b->center_z))
            return fail(b, field, err, "center", "expected a finite XZ pair, found [%s, %s]",
                        num(b->center_x).s, num(b->center_z).s);
        CHECK_POS(b->radius, "radius");
        if (b->level_mode != TRN_LAKE_LEVEL_FIXED && b->level_mode != TRN_LAKE_LEVEL_SPILL)
            return fail(b, field, err, "level", "expected a number or spill, found mode %d",
                        (int)b->level_mode);
        if (b->level_mode == TRN_LAKE_LEVEL_SPILL) CHECK_MIN(b->spill_offset, "spill_offset");
    }
    if (b->kind != TRN_WATER_RIVER) {
        st = check_boundary(b, field, err);
        if (st != TRN_OK) return st;
        CHECK_MIN(b->carve_depth, "carve_depth");
    } else {
        st = trn_water_check_river_controls(b, field, err);
        if (st != TRN_OK) return st;
        if (b->path || b->path_count) {
            st = check_points(b, b->path, b->path_count, "path points", field, err);
            if (st != TRN_OK) return st;
        }
        CHECK_POS(b->width, "width");
        if (b->surface_mode != TRN_RIVER_SURFACE_LEVEL &&
            b->surface_mode != TRN_RIVER_SURFACE_FOLLOW_BED)
            return fail(b, field, err, "river_surface_mode",
                        "expected level or follow_bed, found %d", (int)b->surface_mode);
        CHECK_POS(b->river_depth, "river_depth");
    }
    return check_look(b, field, err);
}

/* ---- river paths ---- */

/* Uniform Catmull-Rom between p1 and p2 at t in [0, 1). */
static double catmull(double p0, double p1, double p2, double p3, double t)
{
    const double t2 = t * t, t3 = t2 * t;
    return 0.5 * (2.0 * p1 + (p2 - p0) * t + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2 +
                  (3.0 * p1 - p0 - 3.0 * p2 + p3) * t3);
}

trn_status trn_water_body_sample_path(trn_water_body *body, trn_error *err)
{
    if (!body)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_water_body_sample_path: NULL body");
    if (body->kind != TRN_WATER_RIVER)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water body '%.*s': only a river has a path", id_len(body->id),
                             body->id);
    trn_status st = trn_water_check_river_controls(body, NULL, err);
    if (st != TRN_OK) return st;
    const uint32_t n = body->control_count;
    const uint32_t steps = body->interpolation == TRN_RIVER_LINEAR ? 1u : body->curve_steps;
    const uint32_t count = (n - 1u) * steps + 1u; /* at most 4095 * 64 + 1 */
    double *path = malloc((size_t)count * 3u * sizeof *path);
    if (!path) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "river path: out of memory");
    const double *c = body->control;
    size_t out = 0;
    for (uint32_t k = 0; k + 1 < n; k++) {
        const double *p0 = c + 3 * (k == 0 ? 0 : k - 1), *p1 = c + 3 * k, *p2 = c + 3 * (k + 1);
        const double *p3 = c + 3 * (k + 2 < n ? k + 2 : n - 1);
        for (int a = 0; a < 3; a++)
            path[out++] = p1[a]; /* control points kept exactly */
        for (uint32_t s = 1; s < steps; s++) {
            const double t = (double)s / (double)steps;
            for (int a = 0; a < 3; a++)
                path[out++] = catmull(p0[a], p1[a], p2[a], p3[a], t);
        }
    }
    for (int a = 0; a < 3; a++)
        path[out++] = c[3 * (n - 1) + (uint32_t)a];
    free(body->path);
    body->path = path;
    body->path_count = count;
    return TRN_OK;
}

/* ---- resolved water ---- */

void trn_water_dispose(trn_water *water)
{
    if (!water) return;
    for (uint32_t b = 0; b < water->body_count; b++)
        trn_water_body_dispose(&water->bodies[b]);
    free(water->bodies);
    free(water->owner);
    free(water->wet);
    free(water->surface);
    free(water->segment);
    free(water->wet_bits);
    memset(water, 0, sizeof *water);
}

static trn_status dup_bytes(const void *from, size_t bytes, void **to, trn_error *err)
{
    *to = NULL;
    if (!from) return TRN_OK;
    *to = malloc(bytes ? bytes : 1);
    if (!*to) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water copy: out of memory");
    memcpy(*to, from, bytes);
    return TRN_OK;
}

bool trn_water_index_wet(trn_water *water)
{
    free(water->wet_bits);
    water->wet_bits = NULL;
    if (!water->wet) return true;
    const size_t n = ((size_t)water->cells_x + 1u) * ((size_t)water->cells_z + 1u);
    uint64_t *bits = calloc((n + 63u) / 64u, sizeof *bits);
    if (!bits) return false;
    for (size_t k = 0; k < n; k++)
        bits[k >> 6] |= (uint64_t)(water->wet[k] != 0) << (k & 63u);
    water->wet_bits = bits;
    return true;
}

trn_status trn_water_copy(const trn_water *from, trn_water *to, trn_error *err)
{
    if (!from || !to)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "trn_water_copy: NULL water");
    trn_water tmp = *from;
    tmp.bodies = NULL;
    tmp.owner = NULL;
    tmp.wet = NULL;
    tmp.surface = NULL;
    tmp.segment = NULL;
    tmp.wet_bits = NULL;
    tmp.body_count = 0;
    size_t samples = 0, nz = (size_t)from->cells_z + 1u;
    if (!trn_mul_size(trn_grid_samples_x(from->cells_x), nz, &samples) ||
        samples > SIZE_MAX / sizeof(uint32_t))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "water copy: size overflow");
    trn_status st = TRN_OK;
    if (from->body_count) {
        tmp.bodies = calloc(from->body_count, sizeof *tmp.bodies);
        if (!tmp.bodies)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water copy: out of memory");
        for (; tmp.body_count < from->body_count && st == TRN_OK; tmp.body_count++) {
            st = trn_water_body_copy(&from->bodies[tmp.body_count], &tmp.bodies[tmp.body_count],
                                     err);
            if (st != TRN_OK) break;
        }
    }
    void *p;
    if (st == TRN_OK && (st = dup_bytes(from->owner, samples * sizeof(int32_t), &p, err)) == TRN_OK)
        tmp.owner = p;
    if (st == TRN_OK && (st = dup_bytes(from->wet, samples, &p, err)) == TRN_OK) tmp.wet = p;
    if (st == TRN_OK && (st = dup_bytes(from->surface, samples * sizeof(float), &p, err)) == TRN_OK)
        tmp.surface = p;
    if (st == TRN_OK &&
        (st = dup_bytes(from->segment, samples * sizeof(uint32_t), &p, err)) == TRN_OK)
        tmp.segment = p;
    if (st == TRN_OK && !trn_water_index_wet(&tmp))
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water copy: out of memory");
    if (st != TRN_OK) {
        trn_water_dispose(&tmp);
        return st;
    }
    *to = tmp;
    return TRN_OK;
}

int32_t trn_water_find(const trn_water *water, const char *id)
{
    if (!water || !id) return -1;
    for (uint32_t b = 0; b < water->body_count; b++)
        if (strncmp(water->bodies[b].id, id, sizeof water->bodies[b].id) == 0) return (int32_t)b;
    return -1;
}

uint64_t trn_water_ground_hash(const trn_field *ground)
{
    if (!ground || !ground->heights) return XXH64(NULL, 0, 0);
    const size_t samples = trn_field_sample_count(ground);
    return XXH64(ground->heights, samples * sizeof(float), 0);
}
