/* Palette scattering: per-rule site lattices, selection, filters, local-priority spacing. */
#include "terrane/scatter.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* an XXH64_state_t on the stack: the palette's digest */
#include <xxhash.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/checked.h"
#include "core/json_pos.h"
#include "core/numtext.h"
#include "core/rows.h"
#include "core/textbuf.h"
#include "scatter/scatter_exclusions.h"
#include "terrane/generate.h"
#include "terrane/water.h"
#include "water/water_internal.h"

/* Hash streams of one site; the numbers are part of the output contract (the selection draw
 * is the site key's own bits, see site_select). */
enum { STREAM_JITTER_X = 0, STREAM_JITTER_Z = 1, STREAM_YAW = 3, STREAM_SCALE = 4 };

#define BAND_ROWS 16 /* lattice rows per parallel task: fixed, so threads cannot change a band */
#define CLUSTER_PEAK 3.0 /* 1 / E[v^2] for v uniform: the patch field's mean is 1 */

static const char *const filter_names[TRN_SCATTER_FILTER_COUNT] = {
    "hole", "water", "exclusion", "biome", "slope", "moisture", "water_distance",
};

const char *trn_scatter_filter_name(trn_scatter_filter filter)
{
    if ((unsigned)filter >= (unsigned)TRN_SCATTER_FILTER_COUNT) return "unknown";
    return filter_names[filter];
}

/* splitmix64's finaliser: every bit of the input reaches every bit of the output. */
static inline uint64_t mix64(uint64_t z)
{
    z ^= z >> 30;
    z *= 0xbf58476d1ce4e5b9ull;
    z ^= z >> 27;
    z *= 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z;
}

/* A row's key, then a splitmix64 step per column: one mix per site in the scan's inner loop. */
static inline uint64_t row_key(uint64_t rule_key, int64_t cz)
{
    return mix64(rule_key ^ ((uint64_t)cz * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull));
}

static inline uint64_t site_key_in_row(uint64_t row, int64_t cx)
{
    return mix64(row + (uint64_t)cx * 0x9E3779B97F4A7C15ull);
}

static inline uint64_t site_key(uint64_t rule_key, int64_t cx, int64_t cz)
{
    return site_key_in_row(row_key(rule_key, cz), cx);
}

static inline double unit_of(uint64_t h)
{
    return (double)(h >> 11) * 0x1.0p-53;
}

/* The selection draw is the key's own top bits; the other streams hash the key again. */
static inline double site_select(uint64_t key)
{
    return unit_of(key);
}

/* A uniform double in [0, 1) from stream s of a site. */
static inline double site_unit(uint64_t key, unsigned stream)
{
    return unit_of(mix64(key + ((uint64_t)stream + 1u) * 0xD1B54A32D192ED03ull));
}

typedef struct rule_plan {
    const trn_scatter_rule *rule;
    uint64_t key, cluster_key;
    double density; /* with the art and category multipliers */
    double step, spacing, t, strength, cluster_size, cmax;
    int64_t nx, nz, reach;
    bool enabled;
    bool has_biomes;
    bool biome_allowed[256];
} rule_plan;

typedef struct scatter_ctx {
    const trn_scatter_env *env;
    const trn_field *field; /* the world: its grid and extent (its heights when not a window) */
    double dx, dz;
    size_t stride;
    /* A window (trn_scatter_run_window): env's field holds the world's samples from (i0, j0),
     * and only sites at x0 <= x < x1, z0 <= z < z1 are placed. */
    bool window;
    trn_field world;
    const trn_field *data;
    uint32_t i0, j0;
    double x0, z0, x1, z1;
} scatter_ctx;

static trn_status check_env(const trn_scatter_env *env, scatter_ctx *ctx, trn_error *err)
{
    if (!env || !env->field || !env->field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected a terrain field with heights, found none");
    const trn_field *f = env->field;
    if (f->cells_x == 0 || f->cells_z == 0 || !(f->size_x > 0.0) || !(f->size_z > 0.0) ||
        !isfinite(f->size_x) || !isfinite(f->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected a field of at least 1 x 1 cells and a positive "
                             "finite size, found %" PRIu32 " x %" PRIu32 " cells over %g x %g",
                             f->cells_x, f->cells_z, f->size_x, f->size_z);
    if (env->biome && !env->biome_names && env->biome_name_count > 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: biome_name_count is %" PRIu32 " but biome_names is NULL",
                             env->biome_name_count);
    ctx->env = env;
    ctx->field = f;
    ctx->dx = f->size_x / (double)f->cells_x;
    ctx->dz = f->size_z / (double)f->cells_z;
    ctx->stride = (size_t)f->cells_x + 1u;
    ctx->window = false;
    ctx->data = f;
    ctx->i0 = ctx->j0 = 0;
    return TRN_OK;
}

static bool band_ok(const trn_scatter_band *b)
{
    return !b->has || (isfinite(b->lo) && !isnan(b->hi) && b->lo <= b->hi);
}

/* Validate one rule and derive its lattice; the messages name the placement and parameter. */
static trn_status plan_rule(const trn_palette *palette, uint32_t index, const trn_scatter_env *env,
                            const trn_field *f, rule_plan *p, trn_error *err)
{
    const trn_scatter_rule *r = &palette->rules[index];
    const char *id = r->id;
    memset(p, 0, sizeof *p);
    p->rule = r;
    if (!(r->density >= 0.0) || !isfinite(r->density))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": density must be a finite number >= 0, found %g", id,
                             r->density);
    if (!(r->spacing >= 0.0) || !isfinite(r->spacing))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": spacing must be a finite number >= 0, found %g", id,
                             r->spacing);
    if (isnan(r->candidate_spacing) || r->candidate_spacing < 0.0 || isinf(r->candidate_spacing))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": candidate_spacing must be a finite number > 0 "
                             "(0: the default), found %g",
                             id, r->candidate_spacing);
    if (!(r->cluster_strength >= 0.0 && r->cluster_strength <= 1.0))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": cluster.strength must be in [0, 1], found %g", id,
                             r->cluster_strength);
    if (r->cluster_strength > 0.0 && (!(r->cluster_size > 0.0) || !isfinite(r->cluster_size)))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": cluster.size must be a finite number > 0, found %g",
                             id, r->cluster_size);
    if (!isfinite(r->scale[0]) || !isfinite(r->scale[1]) || !isfinite(r->yaw[0]) ||
        !isfinite(r->yaw[1]))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": scale and yaw ranges must be finite", id);
    if (!band_ok(&r->slope) || !band_ok(&r->moisture) || !band_ok(&r->water_distance))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": a slope, moisture or water_distance range is not "
                             "[low, high] with low <= high",
                             id);
    if (r->biome_count > 0 && !env->biome)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": biomes are listed but the terrain has no biome "
                             "labels",
                             id);
    if (r->moisture.has && !env->moisture)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": moisture is filtered but the terrain has no "
                             "moisture layer",
                             id);
    p->step = r->candidate_spacing > 0.0 ? r->candidate_spacing
              : r->spacing > 0.0         ? r->spacing * 0.5
                                         : 0.25;
    p->spacing = r->spacing;
    p->density = trn_palette_rule_density(palette, r);
    if (!(p->density >= 0.0) || !isfinite(p->density))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": density x art and category multipliers must be a "
                             "finite number >= 0, found %g",
                             id, p->density);
    p->t = p->density * p->step * p->step;
    if (p->t > 1.0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "placement \"%s\": density %g (with multipliers) is more than one "
                             "candidate per lattice square of candidate_spacing %g (at most %g): "
                             "reduce density or candidate_spacing",
                             id, p->density, p->step, 1.0 / (p->step * p->step));
    const double nx = ceil(f->size_x / p->step), nz = ceil(f->size_z / p->step);
    if (!(nx * nz <= 9.0e15))
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "placement \"%s\": candidate_spacing %g gives %g x %g lattice sites: "
                             "raise candidate_spacing",
                             id, p->step, nx, nz);
    p->nx = (int64_t)nx;
    p->nz = (int64_t)nz;
    const double reach = ceil(p->spacing / p->step);
    if (reach > 1.0e6)
        return trn_error_set(
            err, TRN_ERR_LIMIT, NULL, -1,
            "placement \"%s\": spacing %g is %g lattice steps of candidate_spacing "
            "%g: raise candidate_spacing or lower spacing",
            id, p->spacing, reach, p->step);
    p->reach = (int64_t)reach;
    p->strength = r->cluster_strength;
    p->cluster_size = r->cluster_size;
    p->cmax = (1.0 - p->strength) + p->strength * CLUSTER_PEAK;
    p->enabled = p->t > 0.0;
    size_t idlen = 0;
    while (idlen < TRN_PALETTE_ID_MAX && r->id[idlen])
        idlen++;
    p->key = (uint64_t)XXH64(r->id, idlen, (XXH64_hash_t)env->scatter_seed);
    p->cluster_key = mix64(p->key ^ 0x636c7573746572ull); /* "cluster" */
    p->has_biomes = r->biome_count > 0;
    for (uint32_t b = 0; b < r->biome_count; b++) {
        if (!r->biomes || !r->biomes[b]) continue;
        for (uint32_t n = 0; n < env->biome_name_count && n < TRN_LABEL_NONE; n++)
            if (env->biome_names[n] && strcmp(env->biome_names[n], r->biomes[b]) == 0)
                p->biome_allowed[n] = true;
    }
    return TRN_OK;
}

static trn_status plan_all(const trn_palette *palette, const trn_scatter_env *env, scatter_ctx *ctx,
                           rule_plan **plans_out, trn_error *err)
{
    *plans_out = NULL;
    if (!palette || (palette->rule_count > 0 && !palette->rules))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected a palette, found none");
    trn_status st = check_env(env, ctx, err);
    if (st != TRN_OK) return st;
    rule_plan *plans = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *plans);
    if (!plans) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        st = plan_rule(palette, r, env, ctx->field, &plans[r], err);
        if (st != TRN_OK) {
            free(plans);
            return st;
        }
    }
    *plans_out = plans;
    return TRN_OK;
}

/* The four lattice values of the cluster cell last looked at: neighbouring sites share cells. */
typedef struct cluster_cache {
    int64_t ix, iz;
    bool valid;
    double v[4];
} cluster_cache;

/* The cluster factor at (x, z): 1 at strength 0, smooth patches of mean 1 at strength 1. */
static double cluster_factor(const rule_plan *p, cluster_cache *cache, double x, double z)
{
    if (p->strength <= 0.0) return 1.0;
    const double gx = x / p->cluster_size, gz = z / p->cluster_size;
    const double fx0 = floor(gx), fz0 = floor(gz);
    const int64_t ix = (int64_t)fx0, iz = (int64_t)fz0;
    double fx = gx - fx0, fz = gz - fz0;
    fx = fx * fx * (3.0 - 2.0 * fx);
    fz = fz * fz * (3.0 - 2.0 * fz);
    if (!cache->valid || cache->ix != ix || cache->iz != iz) {
        for (int k = 0; k < 4; k++) {
            const double u = site_select(site_key(p->cluster_key, ix + (k & 1), iz + (k >> 1)));
            cache->v[k] = u * u;
        }
        cache->ix = ix;
        cache->iz = iz;
        cache->valid = true;
    }
    const double *v = cache->v;
    const double w = (v[0] + (v[1] - v[0]) * fx) * (1.0 - fz) + (v[2] + (v[3] - v[2]) * fx) * fz;
    double c = (1.0 - p->strength) + p->strength * CLUSTER_PEAK * w;
    /* Clamped to [0, cmax] so u / cmax bounds u / c below exactly (the spacing shortcut). */
    if (c > p->cmax) c = p->cmax;
    if (!(c > 0.0)) c = 0.0;
    return c;
}

static inline size_t nearest_index(double v, double cell, uint32_t cells)
{
    const double g = floor(v / cell + 0.5);
    if (!(g > 0.0)) return 0;
    if (g >= (double)cells) return cells;
    return (size_t)g;
}

static inline bool in_band(const trn_scatter_band *b, double v)
{
    return v >= b->lo && v <= b->hi;
}

/* The first filter that blocks a site at (x, z), or -1; *y receives the surface height. */
static int site_filter(const rule_plan *p, const scatter_ctx *c, double x, double z, double *y)
{
    const trn_scatter_env *env = c->env;
    const trn_scatter_rule *r = p->rule;
    double h;
    if (!c->window) {
        h = trn_field_height_at(c->field, x, z);
    } else {
        /* trn_field_height_at's arithmetic on the world's grid, read from the window. */
        const trn_field *f = c->field;
        uint32_t ti, tj;
        double u, v;
        h = NAN;
        if (!isnan(x) && !isnan(z)) {
            trn_tri_locate(x, z, f->cells_x, f->cells_z, f->size_x, f->size_z, &ti, &tj, &u, &v);
            const size_t kk = (size_t)(tj - c->j0) * c->stride + (ti - c->i0);
            const float *hv = c->data->heights;
            h = trn_tri_interp(hv[kk], hv[kk + 1], hv[kk + c->stride], hv[kk + c->stride + 1], u,
                               v);
        }
    }
    *y = h;
    if (isnan(h)) return TRN_SCATTER_FILTER_HOLE;
    const size_t gi = nearest_index(x, c->dx, c->field->cells_x);
    const size_t gj = nearest_index(z, c->dz, c->field->cells_z);
    const size_t i = gi - c->i0, j = gj - c->j0; /* in the env's arrays (i0 = j0 = 0: the world) */
    const size_t k = j * c->stride + i;
    if (env->wet && env->wet[k]) return TRN_SCATTER_FILTER_WATER;
    if (env->exclusion && env->exclusion[k] >= 128u) return TRN_SCATTER_FILTER_EXCLUSION;
    if (p->has_biomes && !p->biome_allowed[env->biome[k]]) return TRN_SCATTER_FILTER_BIOME;
    if (r->slope.has) {
        const double s = env->slope ? (double)env->slope[k]
                                    : trn_field_slope_at(c->data, (uint32_t)i, (uint32_t)j);
        if (!in_band(&r->slope, s)) return TRN_SCATTER_FILTER_SLOPE;
    }
    if (r->moisture.has && !in_band(&r->moisture, (double)env->moisture[k]))
        return TRN_SCATTER_FILTER_MOISTURE;
    if (r->water_distance.has) {
        const double d = env->water_distance ? (double)env->water_distance[k] : INFINITY;
        if (!in_band(&r->water_distance, d)) return TRN_SCATTER_FILTER_WATER_DISTANCE;
    }
    return -1;
}

/* Site (cx, cz)'s position; false when it lies beyond the extent (then it is no candidate). */
static inline bool site_position(const rule_plan *p, const trn_field *f, uint64_t key, int64_t cx,
                                 int64_t cz, double *x, double *z)
{
    *x = ((double)cx + site_unit(key, STREAM_JITTER_X)) * p->step;
    *z = ((double)cz + site_unit(key, STREAM_JITTER_Z)) * p->step;
    return *x <= f->size_x && *z <= f->size_z;
}

/* True when a site of higher priority than (cx, cz, q) lies closer than spacing. */
static bool spaced_out(const rule_plan *p, const trn_field *f, cluster_cache *cache, int64_t cx,
                       int64_t cz, double x, double z, double q)
{
    const double limit2 = p->spacing * p->spacing;
    const int64_t z0 = cz - p->reach < 0 ? 0 : cz - p->reach;
    const int64_t z1 = cz + p->reach >= p->nz ? p->nz - 1 : cz + p->reach;
    const int64_t x0 = cx - p->reach < 0 ? 0 : cx - p->reach;
    const int64_t x1 = cx + p->reach >= p->nx ? p->nx - 1 : cx + p->reach;
    for (int64_t nz = z0; nz <= z1; nz++) {
        const uint64_t row = row_key(p->key, nz);
        for (int64_t nx = x0; nx <= x1; nx++) {
            if (nx == cx && nz == cz) continue;
            const uint64_t key = site_key_in_row(row, nx);
            const double u = site_select(key);
            if (u / p->cmax > q) continue; /* q' = u / c' >= u / cmax > q: lower priority */
            double sx, sz;
            if (!site_position(p, f, key, nx, nz, &sx, &sz)) continue;
            const double ddx = sx - x, ddz = sz - z;
            if (ddx * ddx + ddz * ddz >= limit2) continue;
            const double c = cluster_factor(p, cache, sx, sz);
            const double qn = c > 0.0 ? u / c : INFINITY;
            if (qn < q || (qn == q && (nz < cz || (nz == cz && nx < cx)))) return true;
        }
    }
    return false;
}

typedef struct band_result {
    trn_instance *items;
    size_t count, cap;
    uint64_t candidates, selected, spaced_out;
    uint64_t filtered[TRN_SCATTER_FILTER_COUNT];
    bool failed;
} band_result;

static void band_push(band_result *b, const trn_instance *inst)
{
    if (b->failed) return;
    if (b->count == b->cap) {
        const size_t cap = b->cap ? b->cap * 2u : 256u;
        trn_instance *grown = realloc(b->items, cap * sizeof *grown);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->items = grown;
        b->cap = cap;
    }
    b->items[b->count++] = *inst;
}

/* Whether a site at (x, z) is one the window places. */
static inline bool in_window(const scatter_ctx *c, double x, double z)
{
    return !c->window || (x >= c->x0 && x < c->x1 && z >= c->z0 && z < c->z1);
}

/* The lattice columns [*a, *b) whose sites can lie in [lo, hi) (all of them without a window):
 * site cx lies in [cx s, (cx + 1) s), one column more each side for rounding. */
static void lattice_span(const rule_plan *p, bool window, double lo, double hi, int64_t n,
                         int64_t *a, int64_t *b)
{
    *a = 0;
    *b = n;
    if (!window) return;
    const double fa = floor(lo / p->step) - 1.0, fb = floor(hi / p->step) + 2.0;
    if (fa > 0.0) *a = fa < (double)n ? (int64_t)fa : n;
    if (fb < (double)n) *b = fb > (double)*a ? (int64_t)fb : *a;
}

static void run_band(const rule_plan *p, uint32_t rule_index, const scatter_ctx *c, int64_t cz0,
                     int64_t cz1, int64_t cx0, int64_t cx1, band_result *b)
{
    const trn_field *f = c->field;
    /* Conservative shortcut: u above t * cmax (with room for rounding) cannot give u / c < t. */
    const double reject = p->t * p->cmax * (1.0 + 1e-9);
    cluster_cache own = {0, 0, false, {0, 0, 0, 0}}, near = own;
    for (int64_t cz = cz0; cz < cz1; cz++) {
        const bool row_inside = (double)(cz + 1) * p->step <= f->size_z;
        const uint64_t row = row_key(p->key, cz);
        for (int64_t cx = cx0; cx < cx1; cx++) {
            const uint64_t key = site_key_in_row(row, cx);
            const double u = site_select(key);
            if (u > reject) {
                if (!c->window && row_inside && (double)(cx + 1) * p->step <= f->size_x) {
                    b->candidates++;
                } else {
                    double x, z;
                    if (site_position(p, f, key, cx, cz, &x, &z) && in_window(c, x, z))
                        b->candidates++;
                }
                continue;
            }
            double x, z;
            if (!site_position(p, f, key, cx, cz, &x, &z) || !in_window(c, x, z)) continue;
            b->candidates++;
            const double cf = cluster_factor(p, &own, x, z);
            const double q = cf > 0.0 ? u / cf : INFINITY;
            if (!(q < p->t)) continue;
            b->selected++;
            double y;
            const int reason = site_filter(p, c, x, z, &y);
            if (reason >= 0) {
                b->filtered[reason]++;
                continue;
            }
            if (p->spacing > 0.0 && spaced_out(p, f, &near, cx, cz, x, z, q)) {
                b->spaced_out++;
                continue;
            }
            const trn_scatter_rule *r = p->rule;
            trn_instance inst;
            memset(&inst, 0, sizeof inst); /* padding too: outputs compare and hash bytewise */
            inst.rule = rule_index;
            inst.cx = cx;
            inst.cz = cz;
            inst.x = x;
            inst.y = y;
            inst.z = z;
            inst.yaw = r->yaw[0] + (r->yaw[1] - r->yaw[0]) * site_unit(key, STREAM_YAW);
            inst.scale = r->scale[0] + (r->scale[1] - r->scale[0]) * site_unit(key, STREAM_SCALE);
            band_push(b, &inst);
        }
    }
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return trn_mul_u64(a, b, &r) ? r : UINT64_MAX;
}

static uint64_t rule_candidates(const rule_plan *p)
{
    return p->enabled ? sat_mul((uint64_t)p->nx, (uint64_t)p->nz) : 0u;
}

static uint64_t rule_checks(const rule_plan *p)
{
    if (!p->enabled || !(p->spacing > 0.0)) return 0;
    const double expected = ceil((double)rule_candidates(p) * (p->t < 1.0 ? p->t : 1.0));
    const uint64_t side = sat_add(sat_mul((uint64_t)p->reach, 2u), 1u);
    const uint64_t neighbours = sat_mul(side, side) - 1u;
    if (!(expected < 1.8e19)) return UINT64_MAX;
    return sat_mul((uint64_t)expected, neighbours);
}

trn_status trn_scatter_estimate(const trn_palette *palette, const trn_scatter_env *env,
                                uint64_t *candidates, uint64_t *spacing_checks, trn_error *err)
{
    scatter_ctx ctx;
    rule_plan *plans;
    trn_status st = plan_all(palette, env, &ctx, &plans, err);
    if (st != TRN_OK) return st;
    uint64_t cand = 0, checks = 0;
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        cand = sat_add(cand, rule_candidates(&plans[r]));
        checks = sat_add(checks, rule_checks(&plans[r]));
    }
    free(plans);
    if (candidates) *candidates = cand;
    if (spacing_checks) *spacing_checks = checks;
    return TRN_OK;
}

void trn_scatter_report_dispose(trn_scatter_report *report)
{
    if (!report) return;
    free(report->rules);
    memset(report, 0, sizeof *report);
}

void trn_instances_dispose(trn_instances *instances)
{
    if (!instances) return;
    free(instances->items);
    memset(instances, 0, sizeof *instances);
}

/* Budget checks before any work; the message names the costliest rule and what to change. */
static trn_status check_budget(const trn_palette *palette, const rule_plan *plans,
                               uint64_t max_candidates, uint64_t max_checks, uint64_t *cand_out,
                               uint64_t *checks_out, trn_error *err)
{
    uint64_t cand = 0, checks = 0;
    uint32_t worst_c = 0, worst_s = 0;
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        cand = sat_add(cand, rule_candidates(&plans[r]));
        checks = sat_add(checks, rule_checks(&plans[r]));
        if (rule_candidates(&plans[r]) > rule_candidates(&plans[worst_c])) worst_c = r;
        if (rule_checks(&plans[r]) > rule_checks(&plans[worst_s])) worst_s = r;
    }
    *cand_out = cand;
    *checks_out = checks;
    if (cand > max_candidates) {
        const rule_plan *p = &plans[worst_c];
        return trn_error_set(
            err, TRN_ERR_LIMIT, NULL, -1,
            "placement \"%s\": candidate_spacing %g gives %" PRIu64 " lattice sites (%" PRId64
            " x %" PRId64 "), %" PRIu64 " over all rules, above the candidate budget of %" PRIu64
            ": raise candidate_spacing or the budget (max_candidates; terrane scatter --max-candidates "
            "N)",
            p->rule->id, p->step, rule_candidates(p), p->nx, p->nz, cand, max_candidates);
    }
    if (checks > max_checks) {
        const rule_plan *p = &plans[worst_s];
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "placement \"%s\": spacing %g at candidate_spacing %g needs about "
                             "%" PRIu64 " spacing checks, %" PRIu64
                             " over all rules, above the budget of %" PRIu64
                             ": lower spacing or density, raise candidate_spacing or the budget "
                             "(max_spacing_checks)",
                             p->rule->id, p->spacing, p->step, rule_checks(p), checks, max_checks);
    }
    return TRN_OK;
}

static int thread_count(const trn_scatter_options *options)
{
#ifdef _OPENMP
    int t = options && options->threads > 0 ? options->threads : omp_get_max_threads();
    return t < 1 ? 1 : t;
#else
    (void)options;
    return 1;
#endif
}

static void free_bands(band_result *bands, size_t n)
{
    if (!bands) return;
    for (size_t b = 0; b < n; b++)
        free(bands[b].items);
    free(bands);
}

/* Scatter with a planned context (the world, or a window of it: no ceiling then). */
static trn_status scatter_core(const trn_palette *palette, const scatter_ctx *pctx,
                               rule_plan *plans, const trn_scatter_options *options,
                               trn_instances *out, trn_scatter_report *report,
                               trn_progress_fn progress, void *user, trn_error *err)
{
    const scatter_ctx ctx = *pctx;
    trn_status st = TRN_OK;
    const uint64_t max_candidates = options && options->max_candidates
                                        ? options->max_candidates
                                        : TRN_SCATTER_DEFAULT_MAX_CANDIDATES;
    const uint64_t max_checks = options && options->max_spacing_checks
                                    ? options->max_spacing_checks
                                    : TRN_SCATTER_DEFAULT_MAX_SPACING_CHECKS;
    uint64_t max_placements = options && options->max_placements
                                  ? options->max_placements
                                  : TRN_SCATTER_DEFAULT_MAX_PLACEMENTS;
    if (ctx.window) max_placements = UINT64_MAX; /* the caller sums the windows */
    trn_scatter_report rep;
    memset(&rep, 0, sizeof rep);
    rep.rule_count = palette->rule_count;
    rep.rules = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *rep.rules);
    if (!rep.rules) {
        free(plans);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    }
    st = check_budget(palette, plans, max_candidates, max_checks, &rep.candidates_estimate,
                      &rep.spacing_checks_estimate, err);
    if (st != TRN_OK) {
        free(plans);
        if (report) {
            trn_scatter_report_dispose(report);
            *report = rep;
        } else {
            free(rep.rules);
        }
        return st;
    }
    const int threads = thread_count(options);
    uint64_t total_rows = 0, rows_done = 0;
    int64_t *spans = malloc(4u * (palette->rule_count ? palette->rule_count : 1u) * sizeof *spans);
    if (!spans) st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    for (uint32_t r = 0; r < palette->rule_count && spans; r++) {
        int64_t *sp = spans + 4u * r;
        lattice_span(&plans[r], ctx.window, ctx.x0, ctx.x1, plans[r].nx, &sp[0], &sp[1]);
        lattice_span(&plans[r], ctx.window, ctx.z0, ctx.z1, plans[r].nz, &sp[2], &sp[3]);
        if (plans[r].enabled) total_rows += (uint64_t)(sp[3] - sp[2]);
    }
    trn_instances acc = {NULL, 0};
    size_t acc_cap = 0;
    /* Band slots are reused from group to group, so their pages are touched once per run. */
    const size_t group = (size_t)threads * 8u;
    band_result *slots = calloc(group, sizeof *slots);
    size_t *offsets = calloc(group, sizeof *offsets);
    if (!slots || !offsets)
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    for (uint32_t r = 0; r < palette->rule_count && st == TRN_OK; r++) {
        const rule_plan *p = &plans[r];
        if (!p->enabled) continue;
        trn_scatter_rule_report *rr = &rep.rules[r];
        const int64_t *sp = spans + 4u * r, rows = sp[3] - sp[2];
        const size_t nbands = (size_t)((rows + BAND_ROWS - 1) / BAND_ROWS);
        /* Groups of bands between progress calls, so cancelling is prompt. */
        for (size_t g0 = 0; g0 < nbands && st == TRN_OK; g0 += group) {
            const size_t g1 = g0 + group < nbands ? g0 + group : nbands;
            const long long used = (long long)(g1 - g0);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
            for (long long b = 0; b < used; b++) {
                band_result *slot = &slots[b];
                trn_instance *items = slot->items;
                const size_t cap = slot->cap;
                memset(slot, 0, sizeof *slot);
                slot->items = items;
                slot->cap = cap;
                const int64_t cz0 = sp[2] + ((int64_t)g0 + b) * BAND_ROWS;
                const int64_t cz1 = cz0 + BAND_ROWS < sp[3] ? cz0 + BAND_ROWS : sp[3];
                run_band(p, r, &ctx, cz0, cz1, sp[0], sp[1], slot);
            }
            /* Band order is row order, and rows are cx-ordered: offsets give the output order. */
            size_t want = 0;
            for (long long b = 0; b < used; b++) {
                const band_result *slot = &slots[b];
                if (slot->failed)
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
                rr->candidates += slot->candidates;
                rr->selected += slot->selected;
                rr->spaced_out += slot->spaced_out;
                for (int k = 0; k < TRN_SCATTER_FILTER_COUNT; k++)
                    rr->filtered[k] += slot->filtered[k];
                offsets[b] = want;
                want += slot->count;
            }
            if (st != TRN_OK) break;
            const size_t room =
                acc.count < max_placements ? (size_t)(max_placements - acc.count) : 0;
            const size_t take = want < room ? want : room;
            if (acc.count + take > acc_cap) {
                size_t cap = acc_cap + acc_cap / 2u;
                if (cap < acc.count + take) cap = acc.count + take;
                size_t bytes;
                trn_instance *grown =
                    trn_mul_size(cap, sizeof *grown, &bytes) ? realloc(acc.items, bytes) : NULL;
                if (!grown) {
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
                    break;
                }
                acc.items = grown;
                acc_cap = cap;
            }
            trn_instance *dest = acc.items + acc.count;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
            for (long long b = 0; b < used; b++) {
                if (offsets[b] >= take) continue;
                const size_t n =
                    take - offsets[b] < slots[b].count ? take - offsets[b] : slots[b].count;
                if (n) memcpy(dest + offsets[b], slots[b].items, n * sizeof *dest);
            }
            acc.count += take;
            rr->placed += take;
            rr->truncated += want - take;
            rep.placed += take;
            rep.truncated += want - take;
            const int64_t rows_end =
                (int64_t)g1 * BAND_ROWS < rows ? (int64_t)g1 * BAND_ROWS : rows;
            if (progress && progress((double)(rows_done + (uint64_t)rows_end) / (double)total_rows,
                                     "scatter", user) == TRN_CANCEL)
                st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "scatter: cancelled");
        }
        rows_done += (uint64_t)rows;
    }
    free(spans);
    free_bands(slots, slots ? group : 0);
    free(offsets);
    if (st == TRN_OK && acc.count < acc_cap && acc.count > 0) {
        trn_instance *fit = realloc(acc.items, acc.count * sizeof *fit);
        if (fit) acc.items = fit;
    }
    free(plans);
    if (st != TRN_OK) {
        free(acc.items);
        free(rep.rules);
        return st;
    }
    *out = acc;
    if (report) {
        trn_scatter_report_dispose(report);
        *report = rep;
    } else {
        free(rep.rules);
    }
    return TRN_OK;
}

trn_status trn_scatter_run(const trn_palette *palette, const trn_scatter_env *env,
                           const trn_scatter_options *options, trn_instances *out,
                           trn_scatter_report *report, trn_progress_fn progress, void *user,
                           trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected an output, found NULL");
    scatter_ctx ctx;
    rule_plan *plans;
    trn_status st = plan_all(palette, env, &ctx, &plans, err);
    if (st != TRN_OK) return st;
    return scatter_core(palette, &ctx, plans, options, out, report, progress, user, err);
}

/* Sample index of the sample nearest v (as site_filter finds it), less one, clamped. */
static uint32_t window_low(double v, double cell, double size, uint32_t cells)
{
    const double a = floor(v / cell + 0.5), b = floor(v * (double)cells / size);
    double m = (a < b ? a : b) - 1.0;
    if (!(m > 0.0)) return 0;
    return m < (double)cells ? (uint32_t)m : cells;
}

/* Likewise the highest sample a site below v reads: its cell's far corner, its nearest sample
 * and one beyond (Horn's slope), clamped. */
static uint32_t window_high(double v, double cell, double size, uint32_t cells)
{
    const double a = floor(v / cell + 0.5), b = floor(v * (double)cells / size) + 1.0;
    const double m = (a > b ? a : b) + 1.0;
    if (!(m < (double)cells)) return cells;
    return m > 0.0 ? (uint32_t)m : 0u;
}

trn_status trn_scatter_window_samples(const trn_scatter_window *w, uint32_t *i0, uint32_t *j0,
                                      uint32_t *i1, uint32_t *j1, trn_error *err)
{
    if (!w || w->cells_x == 0 || w->cells_z == 0 || !(w->size_x > 0.0) || !(w->size_z > 0.0) ||
        !isfinite(w->size_x) || !isfinite(w->size_z) || isnan(w->x0) || isnan(w->z0) ||
        isnan(w->x1) || isnan(w->z1) || !(w->x0 < w->x1) || !(w->z0 < w->z1))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter window: expected a world of at least 1 x 1 cells with a "
                             "positive finite size and a nonempty rectangle");
    const double dx = w->size_x / (double)w->cells_x, dz = w->size_z / (double)w->cells_z;
    /* Sites lie within the extent: the rectangle's part of it decides the samples. */
    const double x0 = w->x0 > 0.0 ? w->x0 : 0.0, z0 = w->z0 > 0.0 ? w->z0 : 0.0;
    const double x1 = w->x1 < w->size_x ? w->x1 : w->size_x;
    const double z1 = w->z1 < w->size_z ? w->z1 : w->size_z;
    *i0 = window_low(x0 < x1 ? x0 : x1, dx, w->size_x, w->cells_x);
    *j0 = window_low(z0 < z1 ? z0 : z1, dz, w->size_z, w->cells_z);
    *i1 = window_high(x1, dx, w->size_x, w->cells_x);
    *j1 = window_high(z1, dz, w->size_z, w->cells_z);
    return TRN_OK;
}

trn_status trn_scatter_run_window(const trn_palette *palette, const trn_scatter_env *env,
                                  const trn_scatter_window *window,
                                  const trn_scatter_options *options, trn_instances *out,
                                  trn_scatter_report *report, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected an output, found NULL");
    uint32_t i0, j0, i1, j1;
    trn_status st = trn_scatter_window_samples(window, &i0, &j0, &i1, &j1, err);
    if (st != TRN_OK) return st;
    const trn_field *data = env ? env->field : NULL;
    if (!data || !data->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected a terrain field with heights, found none");
    /* The env's samples must hold what the rectangle's sites read, at the world's spacing. */
    const double dx = window->size_x / (double)window->cells_x,
                 dz = window->size_z / (double)window->cells_z;
    if (window->i0 > i0 || window->j0 > j0 ||
        (uint64_t)window->i0 + data->cells_x < i1 || (uint64_t)window->j0 + data->cells_z < j1 ||
        (uint64_t)window->i0 + data->cells_x > window->cells_x ||
        (uint64_t)window->j0 + data->cells_z > window->cells_z ||
        data->size_x / (double)data->cells_x != dx || data->size_z / (double)data->cells_z != dz)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter window: the field holds samples %" PRIu32 "..%" PRIu64
                             " x %" PRIu32 "..%" PRIu64 " of the world at its spacing; the "
                             "rectangle's sites read samples %" PRIu32 "..%" PRIu32 " x %" PRIu32
                             "..%" PRIu32 " (trn_scatter_window_samples)",
                             window->i0, (uint64_t)window->i0 + data->cells_x, window->j0,
                             (uint64_t)window->j0 + data->cells_z, i0, i1, j0, j1);
    scatter_ctx ctx;
    rule_plan *plans;
    trn_field world;
    memset(&world, 0, sizeof world);
    world.cells_x = window->cells_x;
    world.cells_z = window->cells_z;
    world.size_x = window->size_x;
    world.size_z = window->size_z;
    world.heights = data->heights; /* never read through the world: check_env wants some */
    trn_scatter_env wenv = *env;
    wenv.field = &world;
    if ((st = plan_all(palette, &wenv, &ctx, &plans, err)) != TRN_OK) return st;
    ctx.env = env;
    ctx.world = world;
    ctx.field = &ctx.world;
    ctx.window = true;
    ctx.data = data;
    ctx.stride = (size_t)data->cells_x + 1u;
    ctx.i0 = window->i0;
    ctx.j0 = window->j0;
    ctx.x0 = window->x0;
    ctx.z0 = window->z0;
    ctx.x1 = window->x1;
    ctx.z1 = window->z1;
    return scatter_core(palette, &ctx, plans, options, out, report, NULL, NULL, err);
}

/* ---------------------------------------------------------------------------------------------
 * Refiltering.
 * ------------------------------------------------------------------------------------------- */

static trn_status check_base(const trn_palette *palette, const trn_instances *base, trn_error *err)
{
    if (!base || (base->count > 0 && !base->items))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected base instances, found none");
    for (size_t n = 0; n < base->count; n++)
        if (base->items[n].rule >= palette->rule_count)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "scatter: instance %zu names rule %" PRIu32
                                 " but the palette has %" PRIu32 " rules",
                                 n, base->items[n].rule, palette->rule_count);
    return TRN_OK;
}

trn_status trn_scatter_refilter(const trn_palette *palette, const trn_instances *base,
                                const trn_scatter_env *edited, trn_instances *out,
                                trn_scatter_report *report, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected an output, found NULL");
    scatter_ctx ctx;
    rule_plan *plans;
    trn_status st = plan_all(palette, edited, &ctx, &plans, err);
    if (st != TRN_OK) return st;
    st = check_base(palette, base, err);
    if (st != TRN_OK) {
        free(plans);
        return st;
    }
    trn_scatter_report rep;
    memset(&rep, 0, sizeof rep);
    rep.rule_count = palette->rule_count;
    rep.rules = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *rep.rules);
    trn_instance *items = malloc((base->count ? base->count : 1u) * sizeof *items);
    int8_t *reason = malloc(base->count ? base->count : 1u);
    if (!rep.rules || !items || !reason) {
        free(rep.rules);
        free(items);
        free(reason);
        free(plans);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long long n = 0; n < (long long)base->count; n++) {
        const trn_instance *b = &base->items[n];
        double y;
        reason[n] = (int8_t)site_filter(&plans[b->rule], &ctx, b->x, b->z, &y);
        items[n] = *b;
        items[n].y = y;
    }
    size_t kept = 0;
    for (size_t n = 0; n < base->count; n++) {
        trn_scatter_rule_report *rr = &rep.rules[base->items[n].rule];
        rr->selected++;
        if (reason[n] >= 0) {
            rr->filtered[reason[n]]++;
            continue;
        }
        rr->placed++;
        items[kept++] = items[n];
    }
    free(reason);
    free(plans);
    rep.placed = kept;
    out->items = items;
    out->count = kept;
    if (report) {
        trn_scatter_report_dispose(report);
        *report = rep;
    } else {
        free(rep.rules);
    }
    return TRN_OK;
}

trn_status trn_scatter_view_init(const trn_instances *base, trn_scatter_view *view, trn_error *err)
{
    if (!view || !base || (base->count > 0 && !base->items))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected base instances and a view");
    const size_t n = base->count ? base->count : 1u;
    double *y = malloc(n * sizeof *y);
    uint8_t *blocked = calloc(n, 1);
    if (!y || !blocked) {
        free(y);
        free(blocked);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    }
    for (size_t k = 0; k < base->count; k++)
        y[k] = base->items[k].y;
    view->y = y;
    view->blocked = blocked;
    view->count = base->count;
    return TRN_OK;
}

void trn_scatter_view_dispose(trn_scatter_view *view)
{
    if (!view) return;
    free(view->y);
    free(view->blocked);
    memset(view, 0, sizeof *view);
}

/* The first base index not ordered before (rule, cz, cx). */
static size_t lower_bound(const trn_instances *base, uint32_t rule, int64_t cz, int64_t cx)
{
    size_t lo = 0, hi = base->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const trn_instance *m = &base->items[mid];
        const bool before =
            m->rule < rule || (m->rule == rule && (m->cz < cz || (m->cz == cz && m->cx < cx)));
        if (before)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

trn_status trn_scatter_refilter_window(const trn_palette *palette, const trn_instances *base,
                                       const trn_scatter_env *edited, double x0, double z0,
                                       double x1, double z1, trn_scatter_view *view,
                                       size_t *changed, trn_error *err)
{
    if (changed) *changed = 0;
    if (!view || !base || view->count != base->count ||
        (base->count && (!view->y || !view->blocked)))
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "scatter: the view does not belong to these base instances");
    if (isnan(x0) || isnan(z0) || isnan(x1) || isnan(z1))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: the changed rectangle has a NaN corner");
    scatter_ctx ctx;
    rule_plan *plans;
    trn_status st = plan_all(palette, edited, &ctx, &plans, err);
    if (st != TRN_OK) return st;
    if (x1 < x0 || z1 < z0) {
        free(plans);
        return TRN_OK;
    }
    /* Two cells of margin: the nearest-sample rounding and Horn's 3x3 slope stencil. */
    const double wx0 = x0 - 2.0 * ctx.dx, wx1 = x1 + 2.0 * ctx.dx;
    const double wz0 = z0 - 2.0 * ctx.dz, wz1 = z1 + 2.0 * ctx.dz;
    size_t flips = 0;
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        const rule_plan *p = &plans[r];
        const double czlo_d = floor(wz0 / p->step) - 1.0, czhi_d = floor(wz1 / p->step);
        const double cxlo_d = floor(wx0 / p->step) - 1.0, cxhi_d = floor(wx1 / p->step);
        const int64_t czlo = czlo_d < 0.0 ? 0 : (int64_t)czlo_d;
        const int64_t czhi = czhi_d >= (double)p->nz ? p->nz - 1 : (int64_t)czhi_d;
        const int64_t cxlo = cxlo_d < 0.0 ? 0 : (int64_t)cxlo_d;
        const int64_t cxhi = cxhi_d >= (double)p->nx ? p->nx - 1 : (int64_t)cxhi_d;
        for (int64_t cz = czlo; cz <= czhi; cz++) {
            for (size_t n = lower_bound(base, r, cz, cxlo); n < base->count; n++) {
                const trn_instance *b = &base->items[n];
                if (b->rule != r || b->cz != cz || b->cx > cxhi) break;
                if (b->x < wx0 || b->x > wx1 || b->z < wz0 || b->z > wz1) continue;
                double y;
                const int reason = site_filter(p, &ctx, b->x, b->z, &y);
                const uint8_t blocked = (uint8_t)(reason + 1);
                if ((blocked == 0) != (view->blocked[n] == 0)) flips++;
                view->blocked[n] = blocked;
                view->y[n] = y;
            }
        }
    }
    free(plans);
    if (changed) *changed = flips;
    return TRN_OK;
}

trn_status trn_scatter_view_collect(const trn_instances *base, const trn_scatter_view *view,
                                    trn_instances *out, trn_error *err)
{
    if (!out || !view || !base || view->count != base->count)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "scatter: the view does not belong to these base instances");
    size_t kept = 0;
    for (size_t n = 0; n < view->count; n++)
        kept += view->blocked[n] == 0;
    trn_instance *items = malloc((kept ? kept : 1u) * sizeof *items);
    if (!items) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    size_t k = 0;
    for (size_t n = 0; n < view->count; n++) {
        if (view->blocked[n]) continue;
        items[k] = base->items[n];
        items[k].y = view->y[n];
        k++;
    }
    out->items = items;
    out->count = kept;
    return TRN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Text output.
 * ------------------------------------------------------------------------------------------- */

static const char *collision_name(trn_scatter_collision c)
{
    switch (c) {
    case TRN_COLLISION_NONE:
        return "none";
    case TRN_COLLISION_TRIGGER:
        return "trigger";
    default:
        return "static";
    }
}

static void put_json_string(trn_text_buf *b, const char *s)
{
    trn_text_put(b, "\"", 1);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            const char esc[2] = {'\\', (char)*c};
            trn_text_put(b, esc, 2);
        } else if (*c < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)*c);
            trn_text_puts(b, esc);
        } else {
            trn_text_put(b, (const char *)c, 1);
        }
    }
    trn_text_put(b, "\"", 1);
}

static void csv_field(trn_text_buf *b, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        trn_text_puts(b, s);
        return;
    }
    trn_text_put(b, "\"", 1);
    for (const char *c = s; *c; c++) {
        if (*c == '"') trn_text_put(b, "\"", 1);
        trn_text_put(b, c, 1);
    }
    trn_text_put(b, "\"", 1);
}

static trn_status check_instances(const trn_palette *palette, const trn_instances *instances,
                                  char **text, size_t *size, trn_error *err)
{
    if (!palette || !instances || !text || (instances->count && !instances->items))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: expected a palette, instances and an output");
    (void)size;
    for (size_t n = 0; n < instances->count; n++) {
        const trn_instance *it = &instances->items[n];
        if (it->rule >= palette->rule_count)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "scatter: instance %zu names rule %" PRIu32
                                 " but the palette has %" PRIu32 " rules",
                                 n, it->rule, palette->rule_count);
        if (!isfinite(it->x) || !isfinite(it->y) || !isfinite(it->z) || !isfinite(it->yaw) ||
            !isfinite(it->scale))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "scatter: instance %zu (%s/%" PRId64 "_%" PRId64
                                 ") has a non-finite number",
                                 n, palette->rules[it->rule].id, it->cx, it->cz);
    }
    return TRN_OK;
}

static trn_status finish_text(trn_text_buf *b, char **text, size_t *size, trn_error *err)
{
    if (b->failed || !b->data) {
        trn_text_free(b);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    }
    *text = b->data;
    if (size) *size = b->len;
    return TRN_OK;
}

static void put_number(trn_text_buf *b, double v)
{
    char num[40];
    trn_double_text(v, num);
    trn_text_puts(b, num);
}

size_t trn_instance_key(const trn_palette *palette, const trn_instance *instance, char *buf,
                        size_t size)
{
    if (!palette || !instance || instance->rule >= palette->rule_count) {
        if (buf && size) buf[0] = '\0';
        return 0;
    }
    const int n = snprintf(buf, size, "%s/%" PRId64 "_%" PRId64, palette->rules[instance->rule].id,
                           instance->cx, instance->cz);
    return n > 0 ? (size_t)n : 0u;
}

/* Instance n's text in the JSON array (its separator first). */
static void put_json_instance(trn_text_buf *b, const trn_palette *palette,
                              const trn_instances *instances, size_t n)
{
    const trn_instance *it = &instances->items[n];
    const trn_scatter_rule *r = &palette->rules[it->rule];
    char id[TRN_INSTANCE_KEY_MAX];
    (void)trn_instance_key(palette, it, id, sizeof id);
    trn_text_puts(b, n ? ",\n  {\"id\": " : "\n  {\"id\": ");
    put_json_string(b, id);
    trn_text_puts(b, ", \"rule\": ");
    put_json_string(b, r->id);
    trn_text_puts(b, ", \"x\": ");
    put_number(b, it->x);
    trn_text_puts(b, ", \"y\": ");
    put_number(b, it->y);
    trn_text_puts(b, ", \"z\": ");
    put_number(b, it->z);
    trn_text_puts(b, ", \"yaw\": ");
    put_number(b, it->yaw);
    trn_text_puts(b, ", \"scale\": ");
    put_number(b, it->scale);
    if (r->model) {
        trn_text_puts(b, ", \"model\": ");
        put_json_string(b, r->model);
    }
    if (r->prefab) {
        trn_text_puts(b, ", \"prefab\": ");
        put_json_string(b, r->prefab);
    }
    trn_text_puts(b, ", \"collision\": \"");
    trn_text_puts(b, collision_name(r->collision));
    trn_text_puts(b, "\"}");
}

/* Instance n's CSV line. */
static void put_csv_instance(trn_text_buf *b, const trn_palette *palette,
                             const trn_instances *instances, size_t n)
{
    const trn_instance *it = &instances->items[n];
    const trn_scatter_rule *r = &palette->rules[it->rule];
    char id[TRN_INSTANCE_KEY_MAX];
    (void)trn_instance_key(palette, it, id, sizeof id);
    csv_field(b, id);
    trn_text_put(b, ",", 1);
    csv_field(b, r->id);
    const double nums[5] = {it->x, it->y, it->z, it->yaw, it->scale};
    for (int k = 0; k < 5; k++) {
        trn_text_put(b, ",", 1);
        put_number(b, nums[k]);
    }
    trn_text_put(b, ",", 1);
    if (r->model) csv_field(b, r->model);
    trn_text_put(b, ",", 1);
    if (r->prefab) csv_field(b, r->prefab);
    trn_text_put(b, ",", 1);
    trn_text_puts(b, collision_name(r->collision));
    trn_text_put(b, "\n", 1);
}

/* Instances a piece of the text holds: the numbers' shortest text is most of a write's time
 * (148,751 instances, 1.6 s on one thread), so pieces are written on every core and joined in
 * order; the bytes are those of one thread. */
#define TEXT_PIECE 4096u

typedef void (*put_instance_fn)(trn_text_buf *b, const trn_palette *palette,
                                const trn_instances *instances, size_t n);
typedef struct text_pieces {
    const trn_palette *palette;
    const trn_instances *instances;
    put_instance_fn put;
    trn_text_buf *parts;
} text_pieces;

static void text_piece(void *ctx, size_t row, int thread)
{
    (void)thread;
    const text_pieces *tp = ctx;
    const size_t n0 = row * TEXT_PIECE, count = tp->instances->count;
    const size_t n1 = count - n0 < TEXT_PIECE ? count : n0 + TEXT_PIECE;
    for (size_t n = n0; n < n1; n++)
        tp->put(&tp->parts[row], tp->palette, tp->instances, n);
}

/* Every instance's text appended to b, in order. */
static void put_instances(trn_text_buf *b, const trn_palette *palette,
                          const trn_instances *instances, put_instance_fn put)
{
    const size_t pieces = instances->count / TEXT_PIECE + (instances->count % TEXT_PIECE != 0);
    if (!pieces) return;
    text_pieces tp = {palette, instances, put, calloc(pieces, sizeof(trn_text_buf))};
    if (!tp.parts) {
        b->failed = true;
        return;
    }
    (void)trn_rows_run(pieces, 0, 2, text_piece, &tp, NULL, NULL);
    for (size_t k = 0; k < pieces; k++) {
        if (tp.parts[k].failed || !tp.parts[k].data)
            b->failed = true;
        else
            trn_text_put(b, tp.parts[k].data, tp.parts[k].len);
        trn_text_free(&tp.parts[k]);
    }
    free(tp.parts);
}

trn_status trn_instances_write_json(const trn_palette *palette, const trn_instances *instances,
                                    char **text, size_t *size, trn_error *err)
{
    trn_status st = check_instances(palette, instances, text, size, err);
    if (st != TRN_OK) return st;
    trn_text_buf b = {0};
    trn_text_puts(&b, "{\"instances\": [");
    put_instances(&b, palette, instances, put_json_instance);
    trn_text_puts(&b, instances->count ? "\n]}\n" : "]}\n");
    return finish_text(&b, text, size, err);
}

trn_status trn_instances_write_csv(const trn_palette *palette, const trn_instances *instances,
                                   char **text, size_t *size, trn_error *err)
{
    trn_status st = check_instances(palette, instances, text, size, err);
    if (st != TRN_OK) return st;
    trn_text_buf b = {0};
    trn_text_puts(&b, "id,rule,x,y,z,yaw,scale,model,prefab,collision\n");
    put_instances(&b, palette, instances, put_csv_instance);
    return finish_text(&b, text, size, err);
}

/* ---- the palette's digest ---- */

static void digest_f64(XXH64_state_t *h, double v)
{
    if (v == 0.0) v = 0.0; /* -0 and 0 place alike */
    XXH64_update(h, &v, sizeof v);
}

static void digest_u32(XXH64_state_t *h, uint32_t v)
{
    XXH64_update(h, &v, sizeof v);
}

/* Length first, so ("ab", "c") and ("a", "bc") differ; NULL differs from "". */
static void digest_text(XXH64_state_t *h, const char *text)
{
    digest_u32(h, text ? (uint32_t)strlen(text) : 0xFFFFFFFFu);
    if (text) XXH64_update(h, text, strlen(text));
}

static void digest_band(XXH64_state_t *h, const trn_scatter_band *band)
{
    digest_u32(h, band->has ? 1u : 0u);
    digest_f64(h, band->has ? band->lo : 0.0);
    digest_f64(h, band->has ? band->hi : 0.0);
}

uint64_t trn_palette_digest(const trn_palette *palette)
{
    if (!palette) return 0;
    XXH64_state_t h;
    XXH64_reset(&h, 0);
    XXH64_update(&h, "terrane-palette", 15);
    digest_f64(&h, palette->art_density);
    digest_f64(&h, palette->grass_density);
    digest_f64(&h, palette->tree_density);
    digest_f64(&h, palette->rock_density);
    digest_u32(&h, palette->rule_count);
    for (uint32_t k = 0; k < palette->rule_count; k++) {
        const trn_scatter_rule *r = &palette->rules[k];
        digest_text(&h, r->id);
        digest_text(&h, r->model);
        digest_text(&h, r->prefab);
        digest_u32(&h, (uint32_t)r->category);
        digest_f64(&h, r->density);
        digest_f64(&h, r->candidate_spacing);
        digest_f64(&h, r->spacing);
        digest_f64(&h, r->scale[0]);
        digest_f64(&h, r->scale[1]);
        digest_f64(&h, r->yaw[0]);
        digest_f64(&h, r->yaw[1]);
        digest_u32(&h, r->biome_count);
        for (uint32_t b = 0; b < r->biome_count; b++)
            digest_text(&h, r->biomes ? r->biomes[b] : NULL);
        digest_band(&h, &r->slope);
        digest_band(&h, &r->moisture);
        digest_band(&h, &r->water_distance);
        digest_f64(&h, r->cluster_size);
        digest_f64(&h, r->cluster_strength);
        digest_u32(&h, (uint32_t)r->collision);
    }
    return (uint64_t)XXH64_digest(&h);
}

/* ---- suppression lists (Terrain3D.scatter_exclusions) ---- */

void trn_scatter_exclusions_dispose(trn_scatter_exclusions *ex)
{
    if (!ex) return;
    for (size_t k = 0; k < ex->count; k++)
        free(ex->keys[k]);
    free(ex->keys);
    memset(ex, 0, sizeof *ex);
}

typedef struct key_ref {
    const char *key;
    size_t index; /* position in the list */
} key_ref;

static int key_ref_cmp(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    const int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

/* The list's keys sorted (ties by position), for duplicates and lookups. */
static key_ref *sorted_keys(const char *const *keys, size_t count)
{
    key_ref *refs = malloc((count ? count : 1u) * sizeof *refs);
    if (!refs) return NULL;
    for (size_t k = 0; k < count; k++) {
        refs[k].key = keys[k];
        refs[k].index = k;
    }
    qsort(refs, count, sizeof *refs, key_ref_cmp);
    return refs;
}

static trn_status excl_error(trn_error *err, const char *file, const char *text, size_t size,
                             const trn_json_path *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

static trn_status excl_error(trn_error *err, const char *file, const char *text, size_t size,
                             const trn_json_path *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return trn_json_error_at(err, TRN_ERR_JSON, file, text, size, path, TRN_JSON_VALUE, msg);
}

/* Quote a key for a message: at most 80 bytes, cut on a UTF-8 boundary. */
static void key_quote(const char *key, char *buf, size_t size)
{
    size_t n = strlen(key);
    if (n > 80) {
        n = 80;
        while (n > 0 && ((unsigned char)key[n] & 0xC0u) == 0x80u)
            n--;
    }
    snprintf(buf, size, "'%.*s%s'", (int)n, key, n < strlen(key) ? "..." : "");
}

trn_status trn_scatter_exclusions_from_json(const json_t *list, const char *file, const char *text,
                                            size_t size, trn_json_path *path,
                                            trn_scatter_exclusions *out, trn_error *err)
{
    char buf[120];
    if (!json_is_array(list))
        return excl_error(err, file, text, size, path,
                          "expected an array of placement keys (\"<rule id>/<cx>_<cz>\"), found %s",
                          trn_json_describe(list, buf, sizeof buf));
    const size_t n = json_array_size(list);
    out->keys = calloc(n ? n : 1u, sizeof *out->keys);
    if (!out->keys)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1,
                             "scatter exclusions: out of memory for %zu keys", n);
    for (size_t k = 0; k < n; k++) {
        const json_t *v = json_array_get(list, k);
        trn_status st = TRN_OK;
        trn_json_path_push_index(path, k);
        if (!json_is_string(v))
            st =
                excl_error(err, file, text, size, path, "expected a placement key string, found %s",
                           trn_json_describe(v, buf, sizeof buf));
        else if (json_string_length(v) == 0)
            st = excl_error(err, file, text, size, path, "expected a nonempty placement key");
        trn_json_path_pop(path);
        if (st) return st;
        out->keys[k] = trn_text_dup(json_string_value(v));
        if (!out->keys[k])
            return trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1,
                                 "scatter exclusions: out of memory for a key");
        out->count = k + 1;
    }
    key_ref *refs = sorted_keys((const char *const *)out->keys, out->count);
    if (!refs)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1,
                             "scatter exclusions: out of memory for the key index");
    /* Report the duplicate that comes first in the document, naming its first occurrence. */
    size_t dup = SIZE_MAX, first = 0;
    for (size_t k = 1; k < out->count; k++)
        if (strcmp(refs[k].key, refs[k - 1].key) == 0 && refs[k].index < dup) {
            dup = refs[k].index;
            size_t f = k - 1;
            while (f > 0 && strcmp(refs[f - 1].key, refs[k].key) == 0)
                f--;
            first = refs[f].index;
        }
    free(refs);
    if (dup != SIZE_MAX) {
        char quoted[100];
        key_quote(out->keys[dup], quoted, sizeof quoted);
        trn_json_path_push_index(path, dup);
        return excl_error(err, file, text, size, path, "duplicate key %s (first at [%zu])", quoted,
                          first);
    }
    return TRN_OK;
}

trn_status trn_scatter_exclusions_parse(const char *text, size_t size, const char *path,
                                        trn_scatter_exclusions *out, trn_error *err)
{
    if (!out || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "scatter exclusions: no text or no output");
    memset(out, 0, sizeof *out);
    if (!text) text = "";
    const size_t bom = size >= 3 && (unsigned char)text[0] == 0xEF &&
                               (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF
                           ? 3
                           : 0;
    json_error_t je;
    json_t *root =
        json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    if (!root) {
        const size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;
        const trn_json_pos pos = trn_json_pos_of_offset(text, size, bom + at);
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        return TRN_ERR_JSON;
    }
    trn_json_path jp;
    memset(&jp, 0, sizeof jp);
    trn_status st = TRN_OK;
    char buf[120];
    const json_t *list = root;
    if (json_is_object(root)) {
        const json_t *components = json_object_get(root, "components");
        const json_t *terrain = root;
        if (components) {
            trn_json_path_push_key(&jp, "components");
            if (!json_is_object(components))
                st = excl_error(err, path, text, size, &jp,
                                "expected an object of components, found %s",
                                trn_json_describe(components, buf, sizeof buf));
            else if (!(terrain = json_object_get(components, "Terrain3D")))
                st = excl_error(err, path, text, size, &jp,
                                "expected a Terrain3D component (the terrain placement whose "
                                "scatter_exclusions to read)");
            if (!st) {
                trn_json_path_push_key(&jp, "Terrain3D");
                if (!json_is_object(terrain))
                    st = excl_error(err, path, text, size, &jp, "expected an object, found %s",
                                    trn_json_describe(terrain, buf, sizeof buf));
            }
        } else if (!json_object_get(root, "scatter_exclusions")) {
            st = excl_error(err, path, text, size, &jp,
                            "expected an array of placement keys, a Terrain3D object with "
                            "scatter_exclusions or a scene entity with components.Terrain3D");
        }
        list = NULL;
        if (!st) {
            list = json_object_get(terrain, "scatter_exclusions");
            if (list) trn_json_path_push_key(&jp, "scatter_exclusions");
        }
    } else if (!json_is_array(root))
        st = excl_error(err, path, text, size, &jp,
                        "expected an array of placement keys, a Terrain3D object or a scene "
                        "entity, found %s",
                        trn_json_describe(root, buf, sizeof buf));
    if (!st && list) st = trn_scatter_exclusions_from_json(list, path, text, size, &jp, out, err);
    json_decref(root);
    if (st) trn_scatter_exclusions_dispose(out);
    return st;
}

trn_status trn_instances_suppress_marking(const trn_palette *palette, trn_instances *inout,
                                          const trn_scatter_exclusions *exclusions,
                                          uint8_t *matched, size_t *suppressed, trn_error *err)
{
    if (suppressed) *suppressed = 0;
    if (!palette || !inout || (inout->count && !inout->items) || !exclusions ||
        (exclusions->count && (!exclusions->keys || !matched)))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: suppressing needs a palette, instances and a list");
    for (size_t n = 0; n < inout->count; n++)
        if (inout->items[n].rule >= palette->rule_count)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "scatter: instance %zu names rule %" PRIu32
                                 " but the palette has %" PRIu32 " rules",
                                 n, inout->items[n].rule, palette->rule_count);
    key_ref *refs = sorted_keys((const char *const *)exclusions->keys, exclusions->count);
    if (!refs) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    size_t kept = 0, removed = 0;
    for (size_t n = 0; n < inout->count; n++) {
        char key[TRN_INSTANCE_KEY_MAX];
        (void)trn_instance_key(palette, &inout->items[n], key, sizeof key);
        const key_ref probe = {key, 0};
        size_t lo = 0, hi = exclusions->count;
        while (lo < hi) { /* the first entry not below the key */
            const size_t mid = lo + (hi - lo) / 2;
            if (strcmp(refs[mid].key, probe.key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < exclusions->count && strcmp(refs[lo].key, key) == 0) {
            for (size_t k = lo; k < exclusions->count && strcmp(refs[k].key, key) == 0; k++)
                matched[refs[k].index] = 1;
            removed++;
            continue;
        }
        inout->items[kept++] = inout->items[n];
    }
    free(refs);
    inout->count = kept;
    if (suppressed) *suppressed = removed;
    return TRN_OK;
}

trn_status trn_instances_suppress(const trn_palette *palette, trn_instances *inout,
                                  const trn_scatter_exclusions *exclusions, size_t *suppressed,
                                  size_t *unmatched, trn_error *err)
{
    if (suppressed) *suppressed = 0;
    if (unmatched) *unmatched = 0;
    if (!exclusions)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter: suppressing needs a palette, instances and a list");
    uint8_t *hit = calloc(exclusions->count ? exclusions->count : 1u, 1);
    if (!hit) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "scatter: out of memory");
    const trn_status st =
        trn_instances_suppress_marking(palette, inout, exclusions, hit, suppressed, err);
    size_t missed = 0;
    for (size_t k = 0; !st && k < exclusions->count; k++)
        missed += hit[k] == 0;
    free(hit);
    if (!st && unmatched) *unmatched = missed;
    return st;
}
