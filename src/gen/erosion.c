/* Droplet hydraulic erosion run in a deterministic checkerboard of tiles (or the transport
 * mode's steps), then thermal relaxation; on the whole grid or row band by row band. */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "gen/erosion_internal.h"
#include "terrane/erosion.h"
#include "terrane/recipe.h"
#include "terrane/resample.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Each tile's droplets of a pass run in this many rounds, the checkerboard's four phases each
 * round, so neighbouring tiles take turns rather than one tile eroding all its share before
 * its neighbours start. A round of a row of tiles reads only the rows around it: the unit a
 * row-band run streams over (trn_erosion_run_rows). */
#define EROSION_ROUNDS 4u
#define MAX_RADIUS 16u
#define MAX_LIFETIME 512u
#define BRUSH_MAX ((2u * MAX_RADIUS - 1u) * (2u * MAX_RADIUS - 1u))

typedef struct brush {
    int count;
    int dx[BRUSH_MAX], dz[BRUSH_MAX];
    float w[BRUSH_MAX];
} brush;

/* Everything a droplet reads, in the float precision the walk runs in. */
typedef struct walk_ctx {
    float *h;    /* rows row0 .. of the grid (all of it, or a band that holds every row the
                  * droplets in flight can touch) */
    size_t row0; /* the grid row h starts at */
    size_t nx, nz;
    float inertia, capacity, min_slope, erosion_rate, deposition_rate, evaporation, gravity;
    float scale, inv_scale;  /* height range: heights over it are the classic 0..1 map */
    const float *rate_scale; /* per-sample erosion_rate multiplier, NULL = 1 */
    uint32_t lifetime;
    int reach; /* brush reach: offsets are within -reach..reach */
    const brush *b;
} walk_ctx;

/* Per-tile ledger; tiles are summed in tile order so the totals do not depend on threads. */
typedef struct tile_acc {
    double eroded, deposited, exported, suspended;
    uint64_t steps;
} tile_acc;

void trn_erosion_params_default(trn_erosion_params *p, trn_erosion_quality quality)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->droplets = 0;
    p->droplet_density = 0.5;
    p->iterations = 1;
    p->lifetime = 30;
    p->inertia = 0.05;
    p->capacity = 4.0;
    p->min_slope = 0.01;
    p->erosion_rate = 0.3;
    p->deposition_rate = 0.3;
    p->evaporation = 0.01;
    p->radius = 3;
    p->gravity = 4.0;
    p->talus_angle = 35.0;
    p->thermal_strength = 0.5;
    p->thermal_iterations = 10;
    p->threads = 0;
    p->mode = TRN_EROSION_DETACH;
    p->transport_steps = 40;
    p->diffusion = 0.02;
    p->droplet_cell = 0.0;
    if (quality == TRN_EROSION_PREVIEW) {
        p->droplet_density = 0.15;
        p->lifetime = 12;
        p->transport_steps = 16;
        p->thermal_iterations = 0;
    }
}

void trn_erosion_result_dispose(trn_erosion_result *result)
{
    if (!result) return;
    trn_field_dispose(&result->field);
    trn_mask_dispose(&result->deposition);
    trn_mask_dispose(&result->erosion);
    free(result->change);
    memset(result, 0, sizeof *result);
}

/* ---- droplet starts: a pure function of (sub-seed, droplet index) ---- */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The droplet plan: tiles of `tile` cells, 2 * reach + 2 wide, so tiles two apart can never
 * touch the same sample; a pass gives tile t the droplets of its share of the cells
 * (floor(D * cells before t+1 / cells) - floor(D * cells before t / cells), so the pass has
 * exactly D), each starting at a position hashed from (sub-seed, pass, tile, droplet), and
 * runs them in EROSION_ROUNDS rounds. */
typedef struct drop_plan {
    size_t nx, nz, cx, cz; /* samples and cells */
    size_t tile, reach, tiles_x, tiles_z;
    uint64_t droplets; /* per pass */
    uint32_t rounds;   /* passes * EROSION_ROUNDS; 0: no droplets */
    uint64_t subseed;
} drop_plan;

/* floor(d * c / a) exactly, for d < 2^32 and c <= a <= 2^32. */
static uint64_t share_of(uint64_t d, uint64_t c, uint64_t a)
{
    return (d / a) * c + ((d % a) * c) / a;
}

static uint64_t tile_droplets(const drop_plan *g, size_t tx, size_t tz)
{
    const uint64_t rows = g->cz - tz * g->tile < g->tile ? g->cz - tz * g->tile : g->tile;
    const uint64_t cols = g->cx - tx * g->tile < g->tile ? g->cx - tx * g->tile : g->tile;
    const uint64_t before = (uint64_t)tz * g->tile * g->cx + rows * ((uint64_t)tx * g->tile);
    const uint64_t a = (uint64_t)g->cx * g->cz;
    return share_of(g->droplets, before + rows * cols, a) - share_of(g->droplets, before, a);
}

static void plan_make(drop_plan *g, size_t nx, size_t nz, const trn_erosion_params *p,
                      uint64_t droplets, uint64_t world_seed)
{
    g->nx = nx;
    g->nz = nz;
    g->cx = nx - 1;
    g->cz = nz - 1;
    g->reach = (size_t)p->lifetime + p->radius + 2;
    g->tile = 2 * g->reach + 2;
    g->tiles_x = (g->cx + g->tile - 1) / g->tile;
    g->tiles_z = (g->cz + g->tile - 1) / g->tile;
    g->droplets = droplets;
    g->rounds = droplets ? p->iterations * EROSION_ROUNDS : 0u;
    g->subseed = trn_subseed_of(world_seed, TRN_CHANNEL_EROSION);
}

/* ---- the walk ---- */

static void make_brush(brush *b, uint32_t radius)
{
    int r = (int)radius;
    double sum = 0.0;
    double raw[BRUSH_MAX];
    b->count = 0;
    for (int dz = -r + 1; dz <= r - 1; dz++)
        for (int dx = -r + 1; dx <= r - 1; dx++) {
            double d = sqrt((double)(dx * dx + dz * dz));
            if (d >= (double)r) continue;
            b->dx[b->count] = dx;
            b->dz[b->count] = dz;
            raw[b->count] = (double)r - d;
            sum += raw[b->count];
            b->count++;
        }
    for (int k = 0; k < b->count; k++)
        b->w[k] = (float)(raw[k] / sum);
}

static inline void sample(const walk_ctx *c, float x, float z, float *height, float *gx, float *gz)
{
    size_t ix = (size_t)x, iz = (size_t)z;
    float fx = x - (float)ix, fz = z - (float)iz;
    const float *p = c->h + (iz - c->row0) * c->nx + ix;
    float h00 = p[0], h10 = p[1], h01 = p[c->nx], h11 = p[c->nx + 1];
    if (gx) {
        *gx = (h10 - h00) * (1.0f - fz) + (h11 - h01) * fz;
        *gz = (h01 - h00) * (1.0f - fx) + (h11 - h10) * fx;
    }
    *height = h00 * (1.0f - fx) * (1.0f - fz) + h10 * fx * (1.0f - fz) + h01 * (1.0f - fx) * fz +
              h11 * fx * fz;
}

/* Take amount from the brush around node (ix, iz); near an edge the brush is clipped and its
 * weights renormalised so the amount is still taken in full. Returns what was taken. */
static double erode_brush(const walk_ctx *c, size_t ix, size_t iz, float amount)
{
    const brush *b = c->b;
    float *h = c->h;
    const size_t nx = c->nx;
    double took = 0.0;
    const long r = c->reach;
    if ((long)ix >= r && (long)iz >= r && (long)ix + r < (long)nx && (long)iz + r < (long)c->nz) {
        float *centre = h + (iz - c->row0) * nx + ix;
        for (int k = 0; k < b->count; k++) {
            float e = amount * b->w[k];
            centre[(long)b->dz[k] * (long)nx + b->dx[k]] -= e;
            took += (double)e;
        }
        return took;
    }
    float inside = 0.0f;
    for (int k = 0; k < b->count; k++) {
        long x = (long)ix + b->dx[k], z = (long)iz + b->dz[k];
        if (x >= 0 && z >= 0 && x < (long)nx && z < (long)c->nz) inside += b->w[k];
    }
    float scale = amount / inside;
    for (int k = 0; k < b->count; k++) {
        long x = (long)ix + b->dx[k], z = (long)iz + b->dz[k];
        if (x < 0 || z < 0 || x >= (long)nx || z >= (long)c->nz) continue;
        float e = scale * b->w[k];
        h[((size_t)z - c->row0) * nx + (size_t)x] -= e;
        took += (double)e;
    }
    return took;
}

static void run_droplet(const walk_ctx *c, float x, float z, tile_acc *a)
{
    float dx = 0.0f, dz = 0.0f, speed = 1.0f, water = 1.0f;
    double sed = 0.0;
    const float xmax = (float)(c->nx - 1), zmax = (float)(c->nz - 1);
    uint32_t step = 0;
    for (; step < c->lifetime; step++) {
        size_t ix = (size_t)x, iz = (size_t)z;
        float fx = x - (float)ix, fz = z - (float)iz;
        float height, gx, gz;
        sample(c, x, z, &height, &gx, &gz);
        dx = dx * c->inertia - gx * (1.0f - c->inertia);
        dz = dz * c->inertia - gz * (1.0f - c->inertia);
        float len = sqrtf(dx * dx + dz * dz);
        if (!(len > 0.0f)) break; /* on a flat with no momentum: it stops here */
        dx /= len;
        dz /= len;
        x += dx;
        z += dz;
        if (!(x >= 0.0f && z >= 0.0f && x < xmax && z < zmax)) {
            a->exported += sed;
            a->steps += step + 1;
            return;
        }
        float new_height;
        sample(c, x, z, &new_height, NULL, NULL);
        float dh = new_height - height;
        float slope = -dh * c->inv_scale;
        float cap = fmaxf(slope, c->min_slope) * speed * water * c->capacity * c->scale;
        float fsed = (float)sed;
        if (fsed > cap || dh > 0.0f) {
            float amount = dh > 0.0f ? fminf(dh, fsed) : (fsed - cap) * c->deposition_rate;
            float *p = c->h + (iz - c->row0) * c->nx + ix;
            float p00 = amount * (1.0f - fx) * (1.0f - fz), p10 = amount * fx * (1.0f - fz);
            float p01 = amount * (1.0f - fx) * fz, p11 = amount * fx * fz;
            p[0] += p00;
            p[1] += p10;
            p[c->nx] += p01;
            p[c->nx + 1] += p11;
            double put = (double)p00 + (double)p10 + (double)p01 + (double)p11;
            sed -= put;
            a->deposited += put;
        } else {
            const float rate =
                c->rate_scale ? c->erosion_rate * c->rate_scale[iz * c->nx + ix] : c->erosion_rate;
            float amount = fminf((cap - fsed) * rate, -dh);
            double took = erode_brush(c, ix, iz, amount);
            sed += took;
            a->eroded += took;
        }
        /* Descending speeds the droplet up (the classic code adds the height change, which
         * accelerates it uphill instead). */
        float v2 = speed * speed + slope * c->gravity;
        speed = v2 > 0.0f ? sqrtf(v2) : 0.0f;
        water *= 1.0f - c->evaporation;
    }
    a->suspended += sed;
    a->steps += step;
}

/* Tile (tx, tz)'s droplets of round `round` (pass round / EROSION_ROUNDS), in order. */
static void run_tile_round(const walk_ctx *c, const drop_plan *g, size_t tx, size_t tz,
                           uint32_t round, tile_acc *a)
{
    const uint64_t count = tile_droplets(g, tx, tz);
    const uint32_t pass = round / EROSION_ROUNDS, r = round % EROSION_ROUNDS;
    const uint64_t k0 = count * r / EROSION_ROUNDS, k1 = count * (r + 1) / EROSION_ROUNDS;
    const size_t x0 = tx * g->tile, z0 = tz * g->tile;
    const size_t w = g->cx - x0 < g->tile ? g->cx - x0 : g->tile;
    const size_t d = g->cz - z0 < g->tile ? g->cz - z0 : g->tile;
    const uint64_t t = (uint64_t)tz * g->tiles_x + tx;
    const uint64_t base =
        mix64(g->subseed ^ mix64(((uint64_t)pass << 40 ^ t) + 0x9e3779b97f4a7c15ull));
    for (uint64_t k = k0; k < k1; k++) {
        const uint64_t h = mix64(base + k * 0xd1b54a32d192ed03ull);
        const double ux = (double)(uint32_t)(h >> 32) * 0x1p-32, uz = (double)(uint32_t)h * 0x1p-32;
        float fx = (float)((double)x0 + ux * (double)w), fz = (float)((double)z0 + uz * (double)d);
        /* Rounding to float may reach the next tile's first cell: start at the tile's own. */
        if (fx >= (float)(x0 + w)) fx = (float)x0;
        if (fz >= (float)(z0 + d)) fz = (float)z0;
        run_droplet(c, fx, fz, a);
    }
}

/* Round `round` of tile row tz: its even tiles (phase 0 or 2), then its odd ones (1 or 3); the
 * tiles of one phase never touch each other's samples, so they run in parallel. */
static void run_tile_row(const walk_ctx *c, const drop_plan *g, size_t tz, uint32_t round,
                         tile_acc *acc, int threads)
{
    (void)threads;
    for (size_t parity = 0; parity < 2; parity++) {
        const long long n = (long long)((g->tiles_x - parity + 1) / 2);
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
        for (long long k = 0; k < n; k++) {
            const size_t tx = parity + 2 * (size_t)k;
            run_tile_round(c, g, tx, tz, round, &acc[tz * g->tiles_x + tx]);
        }
    }
}

/* ---- thermal relaxation: gather from a read-only copy, so rows are independent ---- */

#define THERMAL_CHUNK 16u /* rows a thread takes at a time on the whole grid */

typedef struct thermal_ctx {
    float k, tx, tz, td; /* transfer factor and height allowed across x, z and diagonal steps */
} thermal_ctx;

static inline float exchange(float hc, float hn, float t, float k)
{
    float d = hc - hn;
    /* Material flows k * (excess) from the higher to the lower sample; computing it from both
     * sides gives the same float, so every pair conserves exactly. */
    if (d > t) return -k * (d - t);
    if (-d > t) return k * (-d - t);
    return 0.0f;
}

/* Row z of a pass over rows [b0, b1) (src and dst start at row b0): a row at the band's edge
 * sees no neighbour beyond it, exact at the grid's edges; inside the grid such a row is wrong,
 * and each pass spreads that one row further in, so a band run k passes keeps the rows k
 * from its inner edges. */
static void thermal_row(const float *src, float *dst, size_t nx, size_t b0, size_t b1, size_t z,
                        const thermal_ctx *t)
{
    const size_t r = z - b0; /* the row in the band */
    for (size_t x = 0; x < nx; x++) {
        const float hc = src[r * nx + x];
        float acc = 0.0f;
        for (int oz = -1; oz <= 1; oz++) {
            if ((oz < 0 && z == b0) || (oz > 0 && z + 1 >= b1)) continue;
            for (int ox = -1; ox <= 1; ox++) {
                if (!ox && !oz) continue;
                if ((ox < 0 && x == 0) || (ox > 0 && x + 1 >= nx)) continue;
                float hn = src[(size_t)((long)r + oz) * nx + (size_t)((long)x + ox)];
                float lim = ox && oz ? t->td : (ox ? t->tx : t->tz);
                acc += exchange(hc, hn, lim, t->k);
            }
        }
        dst[r * nx + x] = hc + acc;
    }
}

/* ---- the run ---- */

static trn_status bad(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "erosion: %s", what);
}

static trn_status check_params(const trn_erosion_params *p, trn_error *err)
{
    if (!(p->droplet_density >= 0.0 && p->droplet_density <= 64.0))
        return bad(err, "droplet_density must be in [0, 64]");
    if (p->iterations > 1000) return bad(err, "iterations must be 0..1000");
    if (p->lifetime < 1 || p->lifetime > MAX_LIFETIME) return bad(err, "lifetime must be 1..512");
    if (!(p->inertia >= 0.0 && p->inertia <= 1.0)) return bad(err, "inertia must be in [0, 1]");
    if (!(p->capacity >= 0.0 && p->capacity <= 1e6)) return bad(err, "capacity must be >= 0");
    if (!(p->min_slope >= 0.0 && p->min_slope <= 1e6)) return bad(err, "min_slope must be >= 0");
    if (!(p->erosion_rate >= 0.0 && p->erosion_rate <= 1.0))
        return bad(err, "erosion_rate must be in [0, 1]");
    if (!(p->deposition_rate >= 0.0 && p->deposition_rate <= 1.0))
        return bad(err, "deposition_rate must be in [0, 1]");
    if (!(p->evaporation >= 0.0 && p->evaporation <= 1.0))
        return bad(err, "evaporation must be in [0, 1]");
    if (p->radius < 1 || p->radius > MAX_RADIUS) return bad(err, "radius must be 1..16");
    if (!(p->gravity >= 0.0 && p->gravity <= 1e6)) return bad(err, "gravity must be >= 0");
    if (!(p->talus_angle >= 0.0 && p->talus_angle <= 89.0))
        return bad(err, "talus_angle must be in [0, 89] degrees");
    if (!(p->thermal_strength >= 0.0 && p->thermal_strength <= 1.0))
        return bad(err, "thermal_strength must be in [0, 1]");
    if (p->thermal_iterations > 10000) return bad(err, "thermal_iterations must be 0..10000");
    if (p->threads < 0) return bad(err, "threads must be >= 0");
    if (p->mode != TRN_EROSION_DETACH && p->mode != TRN_EROSION_TRANSPORT)
        return bad(err, "mode must be TRN_EROSION_DETACH or TRN_EROSION_TRANSPORT");
    if (p->transport_steps < 1 || p->transport_steps > 10000)
        return bad(err, "transport_steps must be 1..10000");
    if (!(p->diffusion >= 0.0 && p->diffusion <= 0.25))
        return bad(err, "diffusion must be in [0, 0.25]");
    if (!(p->droplet_cell >= 0.0 && p->droplet_cell <= 1e6))
        return bad(err, "droplet_cell must be in [0, 1e6] world units");
    return TRN_OK;
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "erosion: out of memory");
}

static trn_status cancelled(trn_error *err, const char *stage)
{
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "%s: cancelled", stage);
}

/* The droplets of a pass: params->droplets, else droplet_density per sample. */
static trn_status droplets_of(const trn_erosion_params *params, size_t n, uint64_t *out,
                              trn_error *err)
{
    uint64_t droplets = params->droplets;
    if (!droplets) {
        double d = floor(params->droplet_density * (double)n + 0.5);
        if (d > 4294967295.0) return bad(err, "droplet_density * samples exceeds 2^32 - 1");
        droplets = (uint64_t)d;
    }
    if (params->mode == TRN_EROSION_TRANSPORT) droplets = 0; /* the transport steps replace them */
    *out = droplets;
    return TRN_OK;
}

/* K thermal passes over rows [s0, s1), whose heights start in t0 (t1 the other buffer): the
 * buffer holding the result (a band's rows keep K from its inner edges, thermal_row). */
static float *thermal_band(float *t0, float *t1, size_t nx, size_t s0, size_t s1, size_t K,
                           const thermal_ctx *tc, int threads)
{
    (void)threads;
    float *src = t0, *dst = t1;
    for (size_t k = 0; k < K; k++) {
        const long long n0 = (long long)s0, n1 = (long long)s1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
        for (long long z = n0; z < n1; z++)
            thermal_row(src, dst, nx, s0, s1, (size_t)z, tc);
        float *tmp = src;
        src = dst;
        dst = tmp;
    }
    return src;
}

static thermal_ctx thermal_of(const trn_erosion_params *params, double dx, double dz)
{
    const double tn = tan(params->talus_angle * 3.14159265358979323846 / 180.0);
    /* Up to eight neighbours each take at most k of the excess: k = strength / 16 keeps a
     * sample from giving away more than half of it in one pass. */
    thermal_ctx tc = {(float)(params->thermal_strength / 16.0), (float)(tn * dx), (float)(tn * dz),
                      (float)(tn * sqrt(dx * dx + dz * dz))};
    return tc;
}

static walk_ctx walk_of(const trn_erosion_params *params, float lo, float hi, const brush *b)
{
    /* The classic method runs on a 0..1 heightmap with unit steps: heights enter its slope,
     * capacity and speed formulas divided by the field's height range, so the parameters keep
     * their meaning on any vertical scale and the changes scale with the relief. */
    const float scale = hi > lo ? hi - lo : 1.0f;
    walk_ctx c = {
        .inertia = (float)params->inertia,
        .capacity = (float)params->capacity,
        .min_slope = (float)params->min_slope,
        .erosion_rate = (float)params->erosion_rate,
        .deposition_rate = (float)params->deposition_rate,
        .evaporation = (float)params->evaporation,
        .gravity = (float)params->gravity,
        .scale = scale,
        .inv_scale = 1.0f / scale,
        .rate_scale = params->rate_scale,
        .lifetime = params->lifetime,
        .reach = (int)params->radius - 1,
        .b = b,
    };
    return c;
}

static int threads_of(const trn_erosion_params *params)
{
    int threads = params->threads;
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#endif
    return threads <= 0 ? 1 : threads;
}

static void ledger_sum(trn_erosion_ledger *l, const tile_acc *acc, size_t tiles, uint64_t total)
{
    for (size_t t = 0; t < tiles; t++) {
        l->eroded += acc[t].eroded;
        l->deposited += acc[t].deposited;
        l->exported += acc[t].exported;
        l->suspended += acc[t].suspended;
        l->steps += acc[t].steps;
    }
    l->droplets = total;
}

/* The change of r's heights from the input field's, and the masks of rise and fall. By rows on
 * the threads from ERO_ROWS_PARALLEL_MIN samples: each value on its own, and the largest rise
 * and fall are the same whatever the order (the heights are finite), so the same bytes. */
#define ERO_ROWS_PARALLEL_MIN ((size_t)1u << 16)
static trn_status finish_change(const trn_field *field, trn_erosion_result *r, int threads,
                                trn_error *err)
{
    const size_t n = trn_field_sample_count(field);
    free(r->change);
    r->change = malloc(n * sizeof(float));
    if (!r->change) return oom(err);
    const long long nz = (long long)field->cells_z + 1, nx = (long long)field->cells_x + 1;
    const bool par = n >= ERO_ROWS_PARALLEL_MIN && threads > 1;
    (void)par; /* read by the pragmas only */
    float rise = 0.0f, fall = 0.0f;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (par)
#endif
    {
#ifdef _OPENMP
#pragma omp for schedule(static) reduction(max : rise, fall)
#endif
        for (long long z = 0; z < nz; z++)
            for (size_t i = (size_t)(z * nx); i < (size_t)((z + 1) * nx); i++) {
                float d = r->field.heights[i] - field->heights[i];
                r->change[i] = d;
                if (d > rise) rise = d;
                if (-d > fall) fall = -d;
            }
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (long long z = 0; z < nz; z++)
            for (size_t i = (size_t)(z * nx); i < (size_t)((z + 1) * nx); i++) {
                float d = r->change[i];
                r->deposition.values[i] = d > 0.0f && rise > 0.0f ? fminf(d / rise, 1.0f) : 0.0f;
                r->erosion.values[i] = d < 0.0f && fall > 0.0f ? fminf(-d / fall, 1.0f) : 0.0f;
            }
    }
    return TRN_OK;
}

/* The field's heights copied into dst (when not NULL), their lowest and highest, and whether
 * every one is finite: one pass by rows, on the threads from ERO_ROWS_PARALLEL_MIN samples.
 * dst is fresh from malloc: its pages are first written, and faulted in, by the threads side
 * by side rather than by one. The lowest and highest of finite heights are the same whatever
 * the order (only hi - lo is used: a zero's sign never matters); with a height that is not
 * finite they are not used. */
static bool scan_heights(const trn_field *field, float *dst, int threads, float *lo_out,
                         float *hi_out)
{
    const size_t nx = (size_t)field->cells_x + 1u, n = trn_field_sample_count(field);
    const long long nz = (long long)field->cells_z + 1;
    const float *src = field->heights;
    const bool par = n >= ERO_ROWS_PARALLEL_MIN && threads > 1;
    (void)par; /* read by the pragma only */
    float lo = INFINITY, hi = -INFINITY;
    int bad = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (par)                          \
    reduction(min : lo) reduction(max : hi) reduction(| : bad)
#endif
    for (long long z = 0; z < nz; z++) {
        const float *s = src + (size_t)z * nx;
        if (dst) memcpy(dst + (size_t)z * nx, s, nx * sizeof(float));
        for (size_t x = 0; x < nx; x++) {
            const float h = s[x];
            bad |= !isfinite(h);
            lo = h < lo ? h : lo;
            hi = h > hi ? h : hi;
        }
    }
    if (lo > hi) lo = hi = 0.0f;
    if (lo_out) *lo_out = lo;
    if (hi_out) *hi_out = hi;
    return !bad;
}

/* Every height finite (on the threads; the first that is not named from one thread), and the
 * grid's sample count representable. */
static trn_status check_heights(const trn_field *field, int threads, trn_error *err)
{
    const size_t nx = (size_t)field->cells_x + 1, n = trn_field_sample_count(field);
    if (!n) return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "erosion: grid too large");
    if (scan_heights(field, NULL, threads, NULL, NULL)) return TRN_OK;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(field->heights[i]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "erosion: sample %zu (x %zu, z %zu) is not a finite height", i,
                                 i % nx, i / nx);
    return TRN_OK;
}

/* A grid of the field's size whose every sample the caller writes: malloc, not calloc, so
 * no pass zeroes it first and its pages are faulted in by the threads that write them. */
static float *grid_floats(const trn_field *field)
{
    size_t bytes;
    if (!trn_mul_size(trn_field_sample_count(field), sizeof(float), &bytes)) return NULL;
    return malloc(bytes ? bytes : 1u);
}

/* ---- work that stays on its thread ---- */

/* A stage's items (a phase's tiles, a thermal pass's row chunks) dealt to the threads as runs
 * in grid order, the same runs stage after stage: a thread walks the same rows of the grid
 * each time, so they stay in its core's cache instead of moving to the other core's whenever
 * the other thread takes a tile there (a tile's rows, the ones its droplets reach beyond it,
 * and the rows a thermal chunk reads and writes). A thread takes its own run from the front;
 * once that is empty it takes from the back of another's, so where the machine's other work
 * holds one thread back the others still finish the stage. Any thread may run any item: the
 * bytes do not depend on who runs what. */
typedef struct own_queue {
    _Atomic uint64_t span;           /* front | back << 32: the items [front, back) not yet taken */
    char pad[64 - sizeof(uint64_t)]; /* one queue a cache line: the threads do not share one */
} own_queue;

/* An item of q not yet taken: its front one (q's own thread) or its back one (another). */
static bool queue_take(own_queue *q, bool back, uint32_t *item)
{
    uint64_t s = atomic_load_explicit(&q->span, memory_order_relaxed);
    for (;;) {
        const uint32_t front = (uint32_t)s, end = (uint32_t)(s >> 32);
        if (front >= end) return false;
        const uint64_t next = back ? (uint64_t)(end - 1u) << 32 | front : s + 1u;
        if (atomic_compare_exchange_weak_explicit(&q->span, &s, next, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            *item = back ? end - 1u : front;
            return true;
        }
    }
}

int trn_erosion_queue_test;
atomic_ullong trn_erosion_stolen;

/* The next item for thread me of nq queues: its own queue's front, else the back of the queues
 * after it in turn (the neighbouring run first). False once every queue is empty: nothing is
 * ever added to a stage's queues, so the stage is then taken in full. */
static bool queue_next(own_queue *qs, int nq, int me, uint32_t *item)
{
    if (me < nq && queue_take(&qs[me], false, item)) return true;
    for (int k = 1; k < nq; k++)
        if (queue_take(&qs[(me + k) % nq], true, item)) {
            if (trn_erosion_queue_test) atomic_fetch_add(&trn_erosion_stolen, 1u);
            return true;
        }
    return false;
}

/* Queue q of nq gets items [first[q], first[q + 1]); under the test hook every item goes to
 * queue 0 (1) or to the last queue, which no thread owns (2). Returns the queues to use. */
static int queues_deal(own_queue *qs, int threads, const uint32_t *first, uint32_t n)
{
    const int hook = trn_erosion_queue_test, nq = threads + (hook == 2);
    for (int q = 0; q < nq; q++) {
        uint32_t a = 0u, b = 0u;
        if (!hook) {
            a = first[q];
            b = first[q + 1];
        } else if (q == (hook == 1 ? 0 : nq - 1)) {
            b = n;
        }
        atomic_store_explicit(&qs[q].span, (uint64_t)b << 32 | a, memory_order_relaxed);
    }
    return nq;
}

/* A tile of a phase and the steps its droplets walked in its last round. */
typedef struct tile_cost {
    uint64_t steps;
    size_t tile;
} tile_cost;

/* Most steps first, ties in tile order (qsort is not stable; the order must not depend on it). */
static int longest_first(const void *a, const void *b)
{
    const tile_cost *x = a, *y = b;
    if (x->steps != y->steps) return x->steps > y->steps ? -1 : 1;
    return (x->tile > y->tile) - (x->tile < y->tile);
}

/* The droplets (or transport steps) and the thermal pass on the field's own grid. */
static trn_status erosion_on_grid(const trn_field *field, const trn_erosion_params *params,
                                  uint64_t world_seed, trn_erosion_result *out,
                                  const trn_progress *progress_slice, trn_error *err)
{
    trn_status st;
    const size_t nx = (size_t)field->cells_x + 1, nz = (size_t)field->cells_z + 1;
    const size_t n = trn_field_sample_count(field);
    if (!n) return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "erosion: grid too large");
    uint64_t droplets = 0;
    if ((st = droplets_of(params, n, &droplets, err))) return st;
    const bool transport = params->mode == TRN_EROSION_TRANSPORT;

    trn_progress pr = *progress_slice;
    const double hydro_share = params->thermal_iterations ? 0.85 : 1.0;
    trn_erosion_result r;
    memset(&r, 0, sizeof r);
    brush *b = NULL;
    tile_acc *acc = NULL;
    tile_cost *order = NULL;
    own_queue *queues = NULL;
    uint32_t *first = NULL;                /* each queue's first item, and the end */
    uint64_t *walked = NULL, *last = NULL; /* each tile's steps so far and in its last round */
    float *scratch = NULL;

    /* The result's grids are written in full by the passes below (the heights by the first,
     * the masks by finish_change). */
    const int threads = threads_of(params);
    r.field = (trn_field){field->cells_x, field->cells_z, field->size_x, field->size_z,
                          grid_floats(field), 0.0, 0.0};
    r.deposition = (trn_mask){field->cells_x, field->cells_z, grid_floats(field)};
    r.erosion = (trn_mask){field->cells_x, field->cells_z, grid_floats(field)};
    if (!r.field.heights || !r.deposition.values || !r.erosion.values) {
        st = oom(err);
        goto done;
    }
    float lo = 0.0f, hi = 0.0f;
    if (!scan_heights(field, r.field.heights, threads, &lo, &hi)) {
        st = check_heights(field, 1, err);
        goto done;
    }

    drop_plan g;
    plan_make(&g, nx, nz, params, droplets, world_seed);
    const size_t tiles = g.tiles_x * g.tiles_z;
    b = malloc(sizeof *b);
    acc = calloc(tiles, sizeof(tile_acc));
    order = malloc(tiles * sizeof *order);
    walked = calloc(tiles, sizeof *walked);
    last = calloc(tiles, sizeof *last);
    queues = calloc((size_t)threads + 1u, sizeof *queues);
    first = calloc((size_t)threads + 2u, sizeof *first);
    if (!b || !acc || !order || !walked || !last || !queues || !first) {
        st = oom(err);
        goto done;
    }
    make_brush(b, params->radius);
    walk_ctx c = walk_of(params, lo, hi, b);
    c.h = r.field.heights;
    c.row0 = 0;
    c.nx = nx;
    c.nz = nz;
    if (trn_progress_report(&pr, 0.0, "erosion")) {
        st = cancelled(err, "erosion");
        goto done;
    }
    /* Round by round, phase by phase: every tile of a phase at once. Any order that keeps each
     * pair of neighbouring tiles' rounds and phases in this order gives the same bytes (the
     * row-band run's does). A phase's tiles, in tile order, are dealt to the threads as runs of
     * about equal steps, by the steps each walked in its last round (plus one, so the first
     * round's runs are equal counts): each thread's run is then about the same rows of tiles
     * phase after phase and round after round (own_queue). Within its run a thread takes the
     * tiles longest first, and a thread that finishes early takes the shortest left in
     * another's: a phase ends when its last tile does, and a long tile taken last would leave
     * the other threads waiting. */
    for (uint32_t round = 0; round < g.rounds; round++)
        for (int phase = 0; phase < 4; phase++) {
            const size_t px = (size_t)(phase & 1), pz = (size_t)(phase >> 1);
            const size_t cols = (g.tiles_x - px + 1) / 2, rows = (g.tiles_z - pz + 1) / 2;
            const size_t np = cols * rows;
            uint64_t total = 0, sum = 0;
            for (size_t k = 0; k < np; k++) {
                const size_t t = (pz + 2 * (k / cols)) * g.tiles_x + px + 2 * (k % cols);
                order[k] = (tile_cost){last[t], t};
                total += last[t] + 1u;
            }
            int q = 1;
            first[0] = 0;
            for (size_t k = 0; k < np; k++) {
                sum += order[k].steps + 1u;
                while (q < threads && sum * (uint64_t)threads >= total * (uint64_t)q)
                    first[q++] = (uint32_t)(k + 1);
            }
            while (q <= threads)
                first[q++] = (uint32_t)np;
            for (q = 0; q < threads; q++)
                qsort(order + first[q], first[q + 1] - first[q], sizeof *order, longest_first);
            const int nq = queues_deal(queues, threads, first, (uint32_t)np);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
            {
                int me = 0;
#ifdef _OPENMP
                me = omp_get_thread_num();
#endif
                uint32_t k;
                while (queue_next(queues, nq, me, &k)) {
                    /* The tile's ledger on this thread's stack while its droplets add to it:
                     * the ledgers of a phase's tiles share cache lines (40 bytes each), and
                     * another thread may be adding to the next tile's. */
                    const size_t t = order[k].tile;
                    tile_acc a = acc[t];
                    run_tile_round(&c, &g, t % g.tiles_x, t / g.tiles_x, round, &a);
                    acc[t] = a;
                }
            }
            for (size_t k = 0; k < np; k++) {
                const size_t t = order[k].tile;
                last[t] = acc[t].steps - walked[t];
                walked[t] = acc[t].steps;
            }
            if (trn_progress_report(&pr,
                                    hydro_share * (double)(4u * round + (unsigned)phase + 1u) /
                                        (4.0 * (double)g.rounds),
                                    "erosion")) {
                st = cancelled(err, "erosion");
                goto done;
            }
        }
    ledger_sum(&r.ledger, acc, tiles, droplets * params->iterations);
    if (transport) {
        st = trn_erosion_transport(r.field.heights, nx, nz, params, &r.ledger, &pr, 0.0,
                                   hydro_share, err);
        if (st != TRN_OK) goto done;
    }

    if (params->thermal_iterations) {
        scratch = malloc(n * sizeof(float));
        if (!scratch) {
            st = oom(err);
            goto done;
        }
        const thermal_ctx tc =
            thermal_of(params, field->size_x / field->cells_x, field->size_z / field->cells_z);
        float *src = r.field.heights, *dst = scratch;
        /* Rows in chunks, each thread its band of them pass after pass (own_queue): where the
         * machine's other work holds one thread back, the others take its chunks instead of
         * waiting for it. */
        const size_t chunks = (nz + THERMAL_CHUNK - 1) / THERMAL_CHUNK;
        for (int q = 0; q <= threads; q++)
            first[q] = (uint32_t)(chunks * (size_t)q / (size_t)threads);
        for (uint32_t k = 0; k < params->thermal_iterations; k++) {
            const int nq = queues_deal(queues, threads, first, (uint32_t)chunks);
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
            {
                int me = 0;
#ifdef _OPENMP
                me = omp_get_thread_num();
#endif
                uint32_t ch;
                while (queue_next(queues, nq, me, &ch)) {
                    const size_t z0 = (size_t)ch * THERMAL_CHUNK, z1 = z0 + THERMAL_CHUNK;
                    for (size_t z = z0; z < z1 && z < nz; z++)
                        thermal_row(src, dst, nx, 0, nz, z, &tc);
                }
            }
            float *tmp = src;
            src = dst;
            dst = tmp;
            if (trn_progress_report(&pr,
                                    hydro_share + (1.0 - hydro_share) * (double)(k + 1) /
                                                      (double)params->thermal_iterations,
                                    "thermal")) {
                st = cancelled(err, "thermal"); /* both buffers are freed below */
                goto done;
            }
        }
        if (src != r.field.heights) {
            /* The result ended in the scratch buffer: swap ownership. */
            scratch = r.field.heights;
            r.field.heights = src;
        }
    }

    st = finish_change(field, &r, threads, err);

done:
    free(b);
    free(acc);
    free(order);
    free(queues);
    free(first);
    free(walked);
    free(last);
    free(scratch);
    if (st != TRN_OK) {
        trn_erosion_result_dispose(&r);
        return st;
    }
    *out = r;
    return TRN_OK;
}

bool trn_erosion_droplet_grid(const trn_erosion_params *p, uint32_t cells_x, uint32_t cells_z,
                              double size_x, double size_z, uint32_t *cx, uint32_t *cz)
{
    if (!(p->droplet_cell > 0.0) || p->mode != TRN_EROSION_DETACH || !p->iterations) return false;
    const double fx = floor(size_x / p->droplet_cell + 0.5);
    const double fz = floor(size_z / p->droplet_cell + 0.5);
    *cx = fx < 1.0 ? 1u : fx >= (double)cells_x ? cells_x : (uint32_t)fx;
    *cz = fz < 1.0 ? 1u : fz >= (double)cells_z ? cells_z : (uint32_t)fz;
    return *cx < cells_x || *cz < cells_z;
}

trn_status trn_erosion_run(const trn_field *field, const trn_erosion_params *params,
                           uint64_t world_seed, trn_erosion_result *out, trn_progress_fn progress,
                           void *user, trn_error *err)
{
    if (!field || !params || !out) return bad(err, "field, params and out are required");
    if (!field->heights) return bad(err, "the field has no heights");
    if (field->cells_x < 1 || field->cells_z < 1)
        return bad(err, "the field needs at least 2x2 samples");
    trn_status st = check_params(params, err);
    if (st != TRN_OK) return st;
    const trn_progress pr = trn_progress_make(progress, user);
    uint32_t cx = 0, cz = 0;
    if (!trn_erosion_droplet_grid(params, field->cells_x, field->cells_z, field->size_x,
                                  field->size_z, &cx, &cz))
        return erosion_on_grid(field, params, world_seed, out, &pr, err);
    trn_status hst = check_heights(field, threads_of(params), err);
    if (hst) return hst;
    const size_t n = trn_field_sample_count(field);
    /* Droplets on a grid of droplet_cell: the field area-averaged onto it (and the rate
     * multiplier with it), the droplets run there, and their change comes back by the
     * landscape evolution's warped C2 spline (no creases along the droplet grid's rows and
     * columns). The droplets' brush, steps and density are then sizes in world units: a finer
     * output grid gets the same gullies, not narrower ones. Thermal relaxation runs after, on
     * the field's own grid. */
    trn_field coarse = {0}, rate = {0}, crate = {0}, back = {0}, cfield = {0};
    trn_erosion_result cr, fr;
    memset(&cr, 0, sizeof cr);
    memset(&fr, 0, sizeof fr);
    trn_erosion_params cp = *params, tp = *params;
    const double hydro_share = params->thermal_iterations ? 0.85 : 1.0;
    const trn_progress cpr = trn_progress_sub(&pr, 0.0, hydro_share);
    const trn_progress tpr = trn_progress_sub(&pr, hydro_share, 1.0);
    st = trn_field_resample(field, NULL, cx, cz, TRN_RESAMPLE_AVERAGE, &coarse, NULL, NULL, err);
    if (!st && params->rate_scale) {
        rate = (trn_field){field->cells_x, field->cells_z, field->size_x, field->size_z,
                           (float *)params->rate_scale, 0.0, 0.0};
        st = trn_field_resample(&rate, NULL, cx, cz, TRN_RESAMPLE_AVERAGE, &crate, NULL, NULL,
                                err);
        cp.rate_scale = crate.heights;
    }
    cp.thermal_iterations = 0;
    cp.droplet_cell = 0.0;
    if (!st) st = erosion_on_grid(&coarse, &cp, world_seed, &cr, &cpr, err);
    if (!st) {
        cfield = coarse;
        cfield.heights = cr.change;
        st = trn_field_upsample_spline(&cfield, field->cells_x, field->cells_z,
                                       trn_subseed_of(world_seed, TRN_CHANNEL_EROSION) ^
                                           0x5dcee2d1a4f3b9e7ull,
                                       &back, err);
    }
    if (!st) {
        const long long nn = (long long)n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads_of(params)) \
    if (n >= ERO_ROWS_PARALLEL_MIN)
#endif
        for (long long i = 0; i < nn; i++)
            back.heights[i] += field->heights[i];
        tp.iterations = 0; /* thermal relaxation only */
        tp.droplet_cell = 0.0;
        tp.rate_scale = NULL;
        st = erosion_on_grid(&back, &tp, world_seed, &fr, &tpr, err);
    }
    if (!st) st = finish_change(field, &fr, threads_of(params), err);
    if (!st) {
        /* The ledger in the field's samples: the droplet grid's material times its share of
         * the field's samples per droplet-grid sample. */
        const double k = (double)n / (double)trn_field_sample_count(&coarse);
        fr.ledger = cr.ledger;
        fr.ledger.eroded *= k;
        fr.ledger.deposited *= k;
        fr.ledger.exported *= k;
        fr.ledger.suspended *= k;
    }
    trn_field_dispose(&coarse);
    trn_field_dispose(&crate);
    trn_field_dispose(&back);
    trn_erosion_result_dispose(&cr);
    if (st) {
        trn_erosion_result_dispose(&fr);
        return st;
    }
    *out = fr;
    return TRN_OK;
}

/* ---- row band by row band ---- */

/* The band: grid rows [b0, top) of nx floats, room for cap rows. */
typedef struct band {
    float *h;
    size_t b0, top, cap, nx;
} band;

/* Load rows up to need (in io->chunk rows), first dropping the rows below keep. */
static trn_status band_load(band *b, size_t need, size_t keep, size_t nz,
                            const trn_erosion_rows_io *io, trn_error *err)
{
    while (b->top < need) {
        const size_t count = nz - b->top < io->chunk ? nz - b->top : io->chunk;
        if (b->top + count - b->b0 > b->cap && keep > b->b0) {
            memmove(b->h, b->h + (keep - b->b0) * b->nx, (b->top - keep) * b->nx * sizeof(float));
            b->b0 = keep;
        }
        if (b->top + count - b->b0 > b->cap) {
            const size_t cap = b->top + count - b->b0;
            float *h = realloc(b->h, cap * b->nx * sizeof(float));
            if (!h) return oom(err);
            b->h = h;
            b->cap = cap;
        }
        float *rows = b->h + (b->top - b->b0) * b->nx;
        trn_status st = io->read(io->user, b->top, count, rows, err);
        if (st) return st;
        for (size_t i = 0; i < count * b->nx; i++)
            if (!isfinite(rows[i])) {
                const size_t at = b->top * b->nx + i;
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "erosion: sample %zu (x %zu, z %zu) is not a finite height",
                                     at, at % b->nx, at / b->nx);
            }
        b->top += count;
    }
    return TRN_OK;
}

/* The last step at which a round of tile row tz runs (the order below). */
static size_t last_step(const drop_plan *g, size_t tz)
{
    return tz + 2 * ((size_t)g->rounds - 1) + (tz & 1);
}

trn_status trn_erosion_run_rows(size_t nx, size_t nz, double size_x, double size_z,
                                const trn_erosion_params *params, uint64_t world_seed, float lo,
                                float hi, const trn_erosion_rows_io *io, trn_erosion_ledger *ledger,
                                trn_progress_fn progress, void *user, trn_error *err)
{
    if (!params || !io || !io->read || !io->write || !io->chunk || !ledger)
        return bad(err, "params, io (read, write, chunk) and ledger are required");
    if (nx < 2 || nz < 2) return bad(err, "the field needs at least 2x2 samples");
    trn_status st = check_params(params, err);
    if (st != TRN_OK) return st;
    uint32_t dcx, dcz;
    if (params->mode != TRN_EROSION_DETACH || params->rate_scale ||
        trn_erosion_droplet_grid(params, (uint32_t)(nx - 1), (uint32_t)(nz - 1), size_x, size_z,
                                 &dcx, &dcz))
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "erosion: a row-band run takes droplets on the field's own grid "
                             "without a rate scale only");
    if (nz > SIZE_MAX / nx)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "erosion: grid too large");
    uint64_t droplets = 0;
    if ((st = droplets_of(params, nx * nz, &droplets, err))) return st;
    memset(ledger, 0, sizeof *ledger);
    trn_progress pr = trn_progress_make(progress, user);
    drop_plan g;
    plan_make(&g, nx, nz, params, droplets, world_seed);
    const size_t tiles = g.tiles_x * g.tiles_z;
    const size_t K = params->thermal_iterations, C = io->chunk;
    const thermal_ctx tc = thermal_of(params, size_x / (double)(nx - 1), size_z / (double)(nz - 1));
    const int threads = threads_of(params);
    brush *b = malloc(sizeof *b);
    tile_acc *acc = calloc(tiles ? tiles : 1, sizeof(tile_acc));
    float *t0 = NULL, *t1 = NULL; /* the thermal passes' two bands */
    band bd = {NULL, 0, 0, 0, nx};
    if (!b || !acc) {
        st = oom(err);
        goto done;
    }
    if (K) {
        const size_t rows = (C + 2 * K < nz ? C + 2 * K : nz);
        t0 = malloc(rows * nx * sizeof(float));
        t1 = malloc(rows * nx * sizeof(float));
        if (!t0 || !t1) {
            st = oom(err);
            goto done;
        }
    }
    make_brush(b, params->radius);
    walk_ctx c = walk_of(params, lo, hi, b);
    c.nx = nx;
    c.nz = nz;
    if (trn_progress_report(&pr, 0.0, "erosion")) {
        st = cancelled(err, "erosion");
        goto done;
    }
    /* Round s of tile row tz runs at step tz + 2 s, one more for odd rows; within a step,
     * rounds in order, each its even row before its odd one. Round s of an even row then
     * follows round s - 1 of its neighbours and precedes round s of theirs, and an odd row
     * follows round s of its neighbours: the whole-grid order between every pair of
     * neighbouring tiles (tiles two rows apart never touch the same sample). */
    const size_t steps = g.rounds ? last_step(&g, g.tiles_z - 1) + 1 : 0;
    size_t done_rows = 0, out = 0; /* rows final after the droplets; rows written */
    long tz_done = -1;             /* tile rows whose rounds are all run */
    for (size_t q = 0;; q += 2) {
        if (q < steps) {
            const size_t top_row = q < g.tiles_z ? q : g.tiles_z - 1;
            size_t need = (top_row + 1) * g.tile + g.reach + 1;
            if (need > nz) need = nz;
            const size_t keep = out > K ? out - K : 0;
            c.h = NULL;
            if ((st = band_load(&bd, need, keep, nz, io, err))) goto done;
            c.h = bd.h;
            c.row0 = bd.b0;
            for (uint32_t s = 0; s < g.rounds; s++) {
                const size_t lag = 2 * (size_t)s;
                if (q >= lag && q - lag < g.tiles_z) run_tile_row(&c, &g, q - lag, s, acc, threads);
                if (q >= lag + 1 && q - lag - 1 < g.tiles_z)
                    run_tile_row(&c, &g, q - lag - 1, s, acc, threads);
            }
            while (tz_done + 1 < (long)g.tiles_z && last_step(&g, (size_t)(tz_done + 1)) <= q)
                tz_done++;
            if (tz_done + 1 == (long)g.tiles_z)
                done_rows = nz;
            else if (tz_done >= 0 && (size_t)(tz_done + 1) * g.tile > g.reach + 1)
                done_rows = (size_t)(tz_done + 1) * g.tile - g.reach - 1;
            if (trn_progress_report(&pr, (double)(q + 2) / (double)(steps + 1), "erosion")) {
                st = cancelled(err, "erosion");
                goto done;
            }
        } else {
            /* No droplets left: the rest of the grid is final as it loads. */
            const size_t keep = out > K ? out - K : 0;
            size_t need = bd.top + C < nz ? bd.top + C : nz;
            if (done_rows + K + C > need) need = done_rows + K + C < nz ? done_rows + K + C : nz;
            if ((st = band_load(&bd, need, keep, nz, io, err))) goto done;
            done_rows = bd.top;
        }
        /* Write every chunk whose rows, and the thermal passes' halo above them, are final. */
        while (out < nz) {
            const size_t end = out + C < nz ? out + C : nz;
            const size_t halo_top = end + K < nz ? end + K : nz;
            if (done_rows < halo_top) break;
            const float *rows = bd.h + (out - bd.b0) * nx;
            if (K) {
                const size_t s0 = out > K ? out - K : 0, s1 = halo_top;
                memcpy(t0, bd.h + (s0 - bd.b0) * nx, (s1 - s0) * nx * sizeof(float));
                rows = thermal_band(t0, t1, nx, s0, s1, K, &tc, threads) + (out - s0) * nx;
            }
            if ((st = io->write(io->user, out, end - out, rows, err))) goto done;
            out = end;
        }
        if (out == nz) break;
    }
    ledger_sum(ledger, acc, tiles, droplets * params->iterations);
    trn_progress_report(&pr, 1.0, "thermal");

done:
    free(b);
    free(acc);
    free(t0);
    free(t1);
    free(bd.h);
    return st;
}

/* ---- row bands across processes ---- */

/* Process p's sample rows [*r0, *r1) when R tile rows of T samples are dealt out to P processes
 * in contiguous runs (as the tiled solvers deal tiles); empty for a process without a tile
 * row. */
static void band_rows(size_t R, size_t T, size_t nz, int P, int p, size_t *r0, size_t *r1)
{
    const size_t a = (size_t)((uint64_t)R * (uint64_t)p / (uint64_t)P);
    const size_t b = (size_t)((uint64_t)R * (uint64_t)(p + 1) / (uint64_t)P);
    *r0 = a == b ? (a * T < nz ? a * T : nz) : a * T;
    *r1 = b == R ? (a == b ? *r0 : nz) : b * T;
}

/* Who keeps the chunk of C rows starting at row c0 (trn_erosion_rows_io.own_rows): the owner of
 * its first row; a last chunk of one row goes with the chunk before it, which a tile cache
 * stores it with. */
static int chunk_keeper(size_t R, size_t T, size_t nz, int P, size_t C, size_t c0)
{
    if (c0 > 0 && nz - c0 == 1) c0 -= C;
    for (int p = 0; p < P; p++) {
        size_t r0, r1;
        band_rows(R, T, nz, P, p, &r0, &r1);
        if (c0 >= r0 && c0 < r1) return p;
    }
    return P - 1; /* not reached: the bands cover every row */
}

/* The rows [*s0, *s1) of process q's band in chunks another process keeps, and that keeper
 * (*to, -1: none). They are contiguous and all go to one keeper: the keeper of the chunk the
 * band starts in (whose first row lies below the band), which, when the band holds no chunk's
 * first row or only a last chunk's one row, also keeps the band's other chunks. */
static void band_spill(size_t R, size_t T, size_t nz, int P, size_t C, int q, int *to, size_t *s0,
                       size_t *s1)
{
    size_t r0, r1;
    band_rows(R, T, nz, P, q, &r0, &r1);
    *to = -1;
    *s0 = *s1 = r0;
    for (size_t c0 = r0 - r0 % C; c0 < r1; c0 += C) {
        const int k = chunk_keeper(R, T, nz, P, C, c0);
        if (k == q) continue;
        const size_t m0 = c0 > r0 ? c0 : r0, m1 = c0 + C < r1 ? c0 + C : r1;
        if (*to < 0) {
            *to = k;
            *s0 = m0;
        }
        *s1 = m1;
    }
}

/* A row-band run's writes, kept to the chunks process me keeps (a run that every process makes
 * whole). */
typedef struct keep_filter {
    const trn_erosion_rows_io *io;
    size_t R, T, nz;
    int P, me;
} keep_filter;

static trn_status keep_read(void *user, size_t z0, size_t count, float *rows, trn_error *err)
{
    const keep_filter *k = user;
    return k->io->read(k->io->user, z0, count, rows, err);
}

static trn_status keep_write(void *user, size_t z0, size_t count, const float *rows, trn_error *err)
{
    const keep_filter *k = user;
    if (chunk_keeper(k->R, k->T, k->nz, k->P, k->io->chunk, z0) != k->me) return TRN_OK;
    return k->io->write(k->io->user, z0, count, rows, err);
}

/* The final rows of this process's band [r0, r1) (in h, rows h0 ..) through io, each chunk
 * to the process that keeps it: the rows of another's chunk sent to it, those of its own
 * chunks beyond the band received from their owners (point to point where the transport
 * can, else all-gathered: fewer than a chunk's rows from each process either way). */
static trn_status write_own(trn_comm *comm, const float *h, size_t h0, size_t nx, size_t nz,
                            size_t R, size_t T, const trn_erosion_rows_io *io, trn_error *err)
{
    const int P = trn_comm_size(comm), me = trn_comm_rank(comm);
    const size_t C = io->chunk;
    size_t r0, r1, s0, s1;
    band_rows(R, T, nz, P, me, &r0, &r1);
    int to;
    band_spill(R, T, nz, P, C, me, &to, &s0, &s1);
    /* What comes here: rows from r1 up to the end of this process's last chunk. */
    size_t far1 = r1;
    for (int q = 0; q < P; q++) {
        int tq;
        size_t q0, q1;
        band_spill(R, T, nz, P, C, q, &tq, &q0, &q1);
        if (tq == me && q1 > far1) far1 = q1;
    }
    const size_t row = nx * sizeof(float);
    float *far = malloc((far1 > r1 ? far1 - r1 : 1) * row);
    float *buf = malloc(C * row);
    const void **send = calloc((size_t)P, sizeof *send);
    void **recv = calloc((size_t)P, sizeof *recv);
    uint64_t *counts = calloc(2 * (size_t)P, sizeof *counts);
    void *all = NULL;
    uint64_t *got = NULL;
    trn_status st = far && buf && send && recv && counts ? TRN_OK : oom(err);
    st = trn_comm_agree(comm, st, err);
    if (!st && trn_comm_can_exchange(comm)) {
        if (to >= 0) {
            send[to] = h + (s0 - h0) * nx;
            counts[to] = (uint64_t)(s1 - s0) * row;
        }
        for (int q = 0; q < P; q++) {
            int tq;
            size_t q0, q1;
            band_spill(R, T, nz, P, C, q, &tq, &q0, &q1);
            if (tq != me || q == me) continue;
            recv[q] = far + (q0 - r1) * nx;
            counts[(size_t)P + (size_t)q] = (uint64_t)(q1 - q0) * row;
        }
        st = trn_comm_exchange(comm, send, counts, recv, counts + P, err);
    } else if (!st) {
        const uint64_t bytes = to >= 0 ? (uint64_t)(s1 - s0) * row : 0;
        st = trn_comm_allgather(comm, bytes ? h + (s0 - h0) * nx : NULL, bytes, &all, &got, err);
        uint64_t at = 0;
        for (int q = 0; q < P && !st; q++) {
            int tq;
            size_t q0, q1;
            band_spill(R, T, nz, P, C, q, &tq, &q0, &q1);
            if (tq == me && q != me)
                memcpy(far + (q0 - r1) * nx, (const char *)all + at, (size_t)got[q]);
            at += got[q];
        }
    }
    for (size_t c0 = r0 - r0 % C; c0 < nz && !st; c0 += C) {
        if (chunk_keeper(R, T, nz, P, C, c0) != me) {
            if (c0 >= r1) break;
            continue;
        }
        const size_t c1 = c0 + C < nz ? c0 + C : nz, mine = c1 < r1 ? c1 : r1;
        const float *rows = h + (c0 - h0) * nx;
        if (c1 > r1) {
            if (mine > c0) memcpy(buf, rows, (mine - c0) * row);
            const size_t f0 = c0 > r1 ? c0 : r1;
            memcpy(buf + (f0 - c0) * nx, far + (f0 - r1) * nx, (c1 - f0) * row);
            rows = buf;
        }
        st = io->write(io->user, c0, c1 - c0, rows, err);
    }
    free(far);
    free(buf);
    free(send);
    free(recv);
    free(counts);
    free(all);
    free(got);
    return trn_comm_agree(comm, st, err);
}

/* Rows [s0, s1) of the held band (rows h0 ..) sent to process `to`, rows [r0, r1) received
 * from process `from` (-1: none). */
static trn_status zone_swap(trn_comm *comm, float *h, size_t h0, size_t nx, size_t s0, size_t s1,
                            int to, size_t r0, size_t r1, int from, trn_error *err)
{
    const uint64_t sb = to >= 0 ? (uint64_t)(s1 - s0) * nx * sizeof(float) : 0;
    const uint64_t rb = from >= 0 ? (uint64_t)(r1 - r0) * nx * sizeof(float) : 0;
    return trn_comm_sendrecv(comm, to >= 0 ? h + (s0 - h0) * nx : NULL, sb, to,
                             from >= 0 ? h + (r0 - h0) * nx : NULL, rb, from, err);
}

trn_status trn_erosion_run_rows_comm(size_t nx, size_t nz, double size_x, double size_z,
                                     const trn_erosion_params *params, uint64_t world_seed,
                                     float lo, float hi, const trn_erosion_rows_io *io,
                                     trn_comm *comm, trn_erosion_ledger *ledger,
                                     uint64_t *droplets_run, trn_progress_fn progress, void *user,
                                     trn_error *err)
{
    if (!params || !io || !io->read || !io->write || !io->chunk || !ledger)
        return bad(err, "params, io (read, write, chunk) and ledger are required");
    if (nx < 2 || nz < 2) return bad(err, "the field needs at least 2x2 samples");
    trn_status st = check_params(params, err);
    if (st != TRN_OK) return st;
    uint64_t droplets = 0;
    if ((st = droplets_of(params, nx * nz, &droplets, err))) return st;
    drop_plan g;
    plan_make(&g, nx, nz, params, droplets, world_seed);
    const size_t K = params->thermal_iterations, C = io->chunk, T = g.tile, H = g.reach + 1;
    const int P = comm ? trn_comm_size(comm) : 1, me = comm ? trn_comm_rank(comm) : 0;
    /* One process, one row of tiles, or thermal passes reaching past a neighbour's band: the
     * run of one process on each (the same bytes). */
    if (P < 2 || g.tiles_z < 2 || K > T) {
        if (droplets_run) *droplets_run = droplets * params->iterations;
        const keep_filter kf = {io, g.tiles_z, T, nz, P, me};
        const trn_erosion_rows_io kept = {keep_read, keep_write, (void *)&kf, C, false};
        return trn_erosion_run_rows(nx, nz, size_x, size_z, params, world_seed, lo, hi,
                                    io->own_rows && P > 1 ? &kept : io, ledger, progress, user,
                                    err);
    }
    uint32_t dcx, dcz;
    if (params->mode != TRN_EROSION_DETACH || params->rate_scale ||
        trn_erosion_droplet_grid(params, (uint32_t)(nx - 1), (uint32_t)(nz - 1), size_x, size_z,
                                 &dcx, &dcz))
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "erosion: a row-band run takes droplets on the field's own grid "
                             "without a rate scale only");
    memset(ledger, 0, sizeof *ledger);
    trn_progress pr = trn_progress_make(progress, user);
    /* Process p runs tile rows [a, b) (contiguous runs, as the tiled solvers deal tiles) and
     * owns sample rows [r0, r1); it holds them and Hh rows around them. Its neighbours are the
     * nearest processes below and above with rows (some have none when there are fewer tile
     * rows than processes). */
    const size_t R = g.tiles_z;
#define BAND_A(p) ((size_t)((uint64_t)R * (uint64_t)(p) / (uint64_t)P))
    const size_t a = BAND_A(me), b = BAND_A(me + 1);
    size_t r0, r1;
    band_rows(R, T, nz, P, me, &r0, &r1);
    int below = -1, above = -1;
    if (a < b) {
        for (int q = me - 1; q >= 0 && below < 0; q--)
            if (BAND_A(q) < BAND_A(q + 1)) below = q;
        for (int q = me + 1; q < P && above < 0; q++)
            if (BAND_A(q) < BAND_A(q + 1)) above = q;
    }
#undef BAND_A
    const size_t Hh = H > K ? H : K;
    const size_t h0 = a < b && r0 > Hh ? r0 - Hh : (a < b ? 0 : r0);
    const size_t h1 = a < b ? (r1 + Hh < nz ? r1 + Hh : nz) : r0;
    const size_t tiles = g.tiles_x * g.tiles_z;
    const thermal_ctx tc = thermal_of(params, size_x / (double)(nx - 1), size_z / (double)(nz - 1));
    const int threads = threads_of(params);
    brush *br = malloc(sizeof *br);
    tile_acc *acc = calloc(tiles, sizeof(tile_acc));
    float *h = malloc(((h1 - h0) ? (h1 - h0) : 1) * nx * sizeof(float));
    float *t0 = NULL, *t1 = NULL, *pend = NULL, *all = NULL;
    uint64_t *counts = NULL;
    if (!br || !acc || !h) st = oom(err);
    /* This process's rows and their halo, in chunks, in order. */
    for (size_t z = h0; z < h1 && !st; z += C) {
        const size_t count = h1 - z < C ? h1 - z : C;
        float *rows = h + (z - h0) * nx;
        if ((st = io->read(io->user, z, count, rows, err))) break;
        for (size_t i = 0; i < count * nx; i++)
            if (!isfinite(rows[i])) {
                const size_t at = z * nx + i;
                st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                   "erosion: sample %zu (x %zu, z %zu) is not a finite height", at,
                                   at % nx, at / nx);
                break;
            }
    }
    st = trn_comm_agree(comm, st, err);
    if (st) goto done;
    make_brush(br, params->radius);
    walk_ctx c = walk_of(params, lo, hi, br);
    c.nx = nx;
    c.nz = nz;
    c.h = h;
    c.row0 = h0;
    if (trn_progress_report(&pr, 0.0, "erosion")) st = cancelled(err, "erosion");
    st = trn_comm_agree(comm, st, err);
    if (st) goto done;
    /* Round by round, even tile rows then odd ones, as the whole grid's phases: tile rows of
     * one parity never touch the same sample, and the rows a pair of neighbouring tile rows
     * share (Hh = reach + 1 each side of their border) change only while one of them runs.
     * After each parity, whoever ran a row at its band's edge sends that border's rows to the
     * neighbour across it: up first, then down. */
    for (uint32_t s = 0; s < g.rounds && !st; s++)
        for (size_t par = 0; par < 2 && !st; par++) {
            for (size_t z = a + ((a & 1) != par); z < b; z += 2)
                run_tile_row(&c, &g, z, s, acc, threads);
            const size_t zt0 = b * T - H, zt1 = b * T + H < nz ? b * T + H : nz;
            const size_t zb0 = a * T - (a ? H : 0), zb1 = a * T + H < nz ? a * T + H : nz;
            const bool top_ran = a < b && ((b - 1) & 1) == par,
                       bottom_ran = a < b && (a & 1) == par;
            const bool below_ran = below >= 0 && ((a - 1) & 1) == par;
            const bool above_ran = above >= 0 && (b & 1) == par;
            st = zone_swap(comm, h, h0, nx, zt0, zt1, top_ran && above >= 0 ? above : -1, zb0, zb1,
                           below_ran ? below : -1, err);
            if (!st)
                st = zone_swap(comm, h, h0, nx, zb0, zb1, bottom_ran && below >= 0 ? below : -1,
                               zt0, zt1, above_ran ? above : -1, err);
            if (!st && trn_progress_report(&pr,
                                           0.85 * (double)(2u * s + par + 1u) /
                                               (2.0 * (double)g.rounds),
                                           "erosion"))
                st = cancelled(err, "erosion");
            st = trn_comm_agree(comm, st, err);
        }
    if (st) goto done;
    /* The thermal passes' halo: K final rows from each neighbour (a band other than the top
     * one has at least T >= K rows). */
    if (K) {
        const size_t up1 = r1 + K < nz ? r1 + K : nz, dn0 = r0 > K ? r0 - K : 0;
        const size_t mine_hi = r1 - (r1 - r0 < K ? r1 - r0 : K);
        const size_t mine_lo = r0 + (r1 - r0 < K ? r1 - r0 : K);
        st = zone_swap(comm, h, h0, nx, mine_hi, r1, above, dn0, r0, below, err);
        if (!st) st = zone_swap(comm, h, h0, nx, r0, mine_lo, below, r1, up1, above, err);
        st = trn_comm_agree(comm, st, err);
        if (st) goto done;
        /* Chunks of CT >= K rows, each from its own rows and K around them before the
         * passes: a chunk's result goes back into the band only once the next chunk has read
         * the rows it shares with it, so the passes hold (CT + 2 K) rows twice and CT rows. */
        const size_t CT = C > K ? C : K;
        if (a < b) {
            t0 = malloc((CT + 2 * K) * nx * sizeof(float));
            t1 = malloc((CT + 2 * K) * nx * sizeof(float));
            pend = malloc(CT * nx * sizeof(float));
            if (!t0 || !t1 || !pend) st = oom(err);
        }
        size_t pend0 = 0, pendn = 0;
        for (size_t w0 = r0; w0 < r1 && a < b && !st; w0 += CT) {
            const size_t w1 = w0 + CT < r1 ? w0 + CT : r1;
            const size_t s0 = w0 > K ? w0 - K : 0, s1 = w1 + K < nz ? w1 + K : nz;
            memcpy(t0, h + (s0 - h0) * nx, (s1 - s0) * nx * sizeof(float));
            const float *src = thermal_band(t0, t1, nx, s0, s1, K, &tc, threads);
            if (pendn) memcpy(h + (pend0 - h0) * nx, pend, pendn * nx * sizeof(float));
            pend0 = w0;
            pendn = w1 - w0;
            memcpy(pend, src + (w0 - s0) * nx, pendn * nx * sizeof(float));
        }
        if (!st && pendn) memcpy(h + (pend0 - h0) * nx, pend, pendn * nx * sizeof(float));
        st = trn_comm_agree(comm, st, err);
        if (st) goto done;
    }
    /* Each process writes the chunks it keeps; or every process writes every row (each keeps
     * the whole result, as every global node's), a chunk at a time, its rows from the processes
     * that own them. */
    if (io->own_rows) st = write_own(comm, h, h0, nx, nz, R, T, io, err);
    for (size_t w0 = 0; w0 < nz && !st && !io->own_rows; w0 += C) {
        const size_t w1 = w0 + C < nz ? w0 + C : nz;
        const size_t m0 = w0 > r0 ? w0 : r0, m1 = w1 < r1 ? w1 : r1;
        const uint64_t bytes = m1 > m0 ? (uint64_t)(m1 - m0) * nx * sizeof(float) : 0;
        if ((st = trn_comm_allgather(comm, bytes ? h + (m0 - h0) * nx : NULL, bytes,
                                     (void **)&all, NULL, err)))
            break;
        st = io->write(io->user, w0, w1 - w0, all, err);
        free(all);
        all = NULL;
        st = trn_comm_agree(comm, st, err);
    }
    if (st) goto done;
    /* The ledger in tile order: each process's tiles are its rows of tiles, in process order. */
    {
        const uint64_t bytes = (uint64_t)(b - a) * g.tiles_x * sizeof(tile_acc);
        if ((st = trn_comm_allgather(comm, acc + a * g.tiles_x, bytes, (void **)&all, &counts,
                                     err)))
            goto done;
        ledger_sum(ledger, (const tile_acc *)all, tiles, droplets * params->iterations);
        if (droplets_run) {
            uint64_t mine = 0;
            for (size_t z = a; z < b; z++)
                for (size_t x = 0; x < g.tiles_x; x++)
                    mine += tile_droplets(&g, x, z);
            *droplets_run = mine * params->iterations;
        }
    }
    trn_progress_report(&pr, 1.0, "thermal");

done:
    free(br);
    free(acc);
    free(h);
    free(t0);
    free(t1);
    free(pend);
    free(all);
    free(counts);
    return st;
}
