/* Droplet hydraulic erosion run in a deterministic checkerboard of tiles (or the transport
 * mode's steps), then thermal relaxation. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/progress.h"
#include "gen/erosion_internal.h"
#include "terrane/erosion.h"
#include "terrane/recipe.h"
#include "terrane/resample.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Droplets are bucketed by start tile this many at a time: the unit of progress and cancel. */
#define EROSION_BATCH 65536u
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
    float *h;
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

static void droplet_start(uint64_t subseed, uint64_t index, size_t nx, size_t nz, float *x,
                          float *z)
{
    uint64_t h = mix64(subseed ^ mix64(index + 0x9e3779b97f4a7c15ull));
    double ux = (double)(uint32_t)(h >> 32) * 0x1p-32, uz = (double)(uint32_t)h * 0x1p-32;
    float fx = (float)(ux * (double)(nx - 1)), fz = (float)(uz * (double)(nz - 1));
    /* Rounding to float may reach the last sample, where no cell starts. */
    if (fx >= (float)(nx - 1)) fx = 0.0f;
    if (fz >= (float)(nz - 1)) fz = 0.0f;
    *x = fx;
    *z = fz;
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
    const float *p = c->h + iz * c->nx + ix;
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
        float *centre = h + iz * nx + ix;
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
        h[(size_t)z * nx + (size_t)x] -= e;
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
            float *p = c->h + iz * c->nx + ix;
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

/* ---- thermal relaxation: gather from a read-only copy, so rows are independent ---- */

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

static void thermal_row(const float *src, float *dst, size_t nx, size_t nz, size_t z,
                        const thermal_ctx *t)
{
    for (size_t x = 0; x < nx; x++) {
        const float hc = src[z * nx + x];
        float acc = 0.0f;
        for (int oz = -1; oz <= 1; oz++) {
            if ((oz < 0 && z == 0) || (oz > 0 && z + 1 >= nz)) continue;
            for (int ox = -1; ox <= 1; ox++) {
                if (!ox && !oz) continue;
                if ((ox < 0 && x == 0) || (ox > 0 && x + 1 >= nx)) continue;
                float hn = src[(size_t)((long)z + oz) * nx + (size_t)((long)x + ox)];
                float lim = ox && oz ? t->td : (ox ? t->tx : t->tz);
                acc += exchange(hc, hn, lim, t->k);
            }
        }
        dst[z * nx + x] = hc + acc;
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

/* The change of r's heights from the input field's, and the masks of rise and fall. */
static trn_status finish_change(const trn_field *field, trn_erosion_result *r, trn_error *err)
{
    const size_t n = trn_field_sample_count(field);
    free(r->change);
    r->change = malloc(n * sizeof(float));
    if (!r->change) return oom(err);
    float rise = 0.0f, fall = 0.0f;
    for (size_t i = 0; i < n; i++) {
        float d = r->field.heights[i] - field->heights[i];
        r->change[i] = d;
        if (d > rise) rise = d;
        if (-d > fall) fall = -d;
    }
    for (size_t i = 0; i < n; i++) {
        float d = r->change[i];
        r->deposition.values[i] = d > 0.0f && rise > 0.0f ? fminf(d / rise, 1.0f) : 0.0f;
        r->erosion.values[i] = d < 0.0f && fall > 0.0f ? fminf(-d / fall, 1.0f) : 0.0f;
    }
    return TRN_OK;
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
    for (size_t i = 0; i < n; i++)
        if (!isfinite(field->heights[i]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "erosion: sample %zu (x %zu, z %zu) is not a finite height", i,
                                 i % nx, i / nx);
    uint64_t droplets = params->droplets;
    if (!droplets) {
        double d = floor(params->droplet_density * (double)n + 0.5);
        if (d > 4294967295.0) return bad(err, "droplet_density * samples exceeds 2^32 - 1");
        droplets = (uint64_t)d;
    }
    const bool transport = params->mode == TRN_EROSION_TRANSPORT;
    if (transport) droplets = 0; /* the transport steps replace the droplets */

    trn_progress pr = *progress_slice;
    const double hydro_share = params->thermal_iterations ? 0.85 : 1.0;
    trn_erosion_result r;
    memset(&r, 0, sizeof r);
    brush *b = NULL;
    float *order = NULL;
    uint32_t *tile_of = NULL;
    size_t *tile_start = NULL, *tile_fill = NULL;
    tile_acc *acc = NULL;
    size_t *phase_tiles = NULL;
    float *scratch = NULL;

    st =
        trn_field_init(&r.field, field->cells_x, field->cells_z, field->size_x, field->size_z, err);
    if (st == TRN_OK) st = trn_mask_init(&r.deposition, field->cells_x, field->cells_z, err);
    if (st == TRN_OK) st = trn_mask_init(&r.erosion, field->cells_x, field->cells_z, err);
    if (st != TRN_OK) goto done;
    memcpy(r.field.heights, field->heights, n * sizeof(float));

    /* Tiles: a droplet moves at most one sample per step and touches its brush and the next
     * sample around it, so it stays within reach of its start. Tiles twice that wide, taken in
     * four phases by (tile x parity, tile z parity), can never touch each other's samples. */
    const size_t reach = (size_t)params->lifetime + params->radius + 2;
    const size_t tile = 2 * reach + 2;
    const size_t tiles_x = (nx + tile - 1) / tile, tiles_z = (nz + tile - 1) / tile;
    const size_t tiles = tiles_x * tiles_z;
    b = malloc(sizeof *b);
    const size_t batch_cap = droplets < EROSION_BATCH ? (size_t)droplets : EROSION_BATCH;
    order = malloc((batch_cap ? batch_cap : 1) * 2 * sizeof(float));
    tile_of = malloc((batch_cap ? batch_cap : 1) * sizeof(uint32_t));
    tile_start = calloc(tiles + 1, sizeof(size_t));
    tile_fill = calloc(tiles, sizeof(size_t));
    acc = calloc(tiles, sizeof(tile_acc));
    phase_tiles = malloc(tiles * sizeof(size_t));
    if (!b || !order || !tile_of || !tile_start || !tile_fill || !acc || !phase_tiles) {
        st = oom(err);
        goto done;
    }
    make_brush(b, params->radius);
    /* The classic method runs on a 0..1 heightmap with unit steps: heights enter its slope,
     * capacity and speed formulas divided by the field's height range, so the parameters keep
     * their meaning on any vertical scale and the changes scale with the relief. */
    float lo = 0.0f, hi = 0.0f;
    trn_field_range(field, &lo, &hi);
    const float scale = hi > lo ? hi - lo : 1.0f;
    walk_ctx c = {
        .h = r.field.heights,
        .nx = nx,
        .nz = nz,
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
    int threads = params->threads;
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#endif
    if (threads <= 0) threads = 1;
    const uint64_t subseed = trn_subseed_of(world_seed, TRN_CHANNEL_EROSION);
    const uint64_t total = droplets * params->iterations;
    const uint64_t batches_per_iter = (droplets + EROSION_BATCH - 1) / EROSION_BATCH;
    const uint64_t batches = batches_per_iter * params->iterations;
    uint64_t batch_done = 0;
    if (trn_progress_report(&pr, 0.0, "erosion")) {
        st = cancelled(err, "erosion");
        goto done;
    }
    for (uint32_t it = 0; it < params->iterations; it++) {
        for (uint64_t b0 = 0; b0 < droplets; b0 += EROSION_BATCH) {
            const size_t count =
                (size_t)(droplets - b0 < EROSION_BATCH ? droplets - b0 : EROSION_BATCH);
            /* Bucket the batch's starts by tile, keeping droplet order inside a tile. */
            memset(tile_start, 0, (tiles + 1) * sizeof(size_t));
            for (size_t i = 0; i < count; i++) {
                float x, z;
                droplet_start(subseed, (uint64_t)it * droplets + b0 + i, nx, nz, &x, &z);
                order[2 * i] = x;
                order[2 * i + 1] = z;
                tile_of[i] = (uint32_t)(((size_t)z / tile) * tiles_x + (size_t)x / tile);
                tile_start[tile_of[i] + 1]++;
            }
            for (size_t t = 0; t < tiles; t++)
                tile_start[t + 1] += tile_start[t];
            float *sorted = malloc(count * 2 * sizeof(float));
            if (!sorted) {
                st = oom(err);
                goto done;
            }
            memcpy(tile_fill, tile_start, tiles * sizeof(size_t));
            for (size_t i = 0; i < count; i++) {
                size_t at = tile_fill[tile_of[i]]++;
                sorted[2 * at] = order[2 * i];
                sorted[2 * at + 1] = order[2 * i + 1];
            }
            for (int phase = 0; phase < 4; phase++) {
                size_t np = 0;
                for (size_t tz = (size_t)(phase >> 1); tz < tiles_z; tz += 2)
                    for (size_t tx = (size_t)(phase & 1); tx < tiles_x; tx += 2)
                        phase_tiles[np++] = tz * tiles_x + tx;
                const long long npl = (long long)np;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
                for (long long k = 0; k < npl; k++) {
                    const size_t t = phase_tiles[k];
                    for (size_t d = tile_start[t]; d < tile_start[t + 1]; d++)
                        run_droplet(&c, sorted[2 * d], sorted[2 * d + 1], &acc[t]);
                }
            }
            free(sorted);
            batch_done++;
            if (trn_progress_report(&pr, hydro_share * (double)batch_done / (double)batches,
                                    "erosion")) {
                st = cancelled(err, "erosion");
                goto done;
            }
        }
    }
    for (size_t t = 0; t < tiles; t++) {
        r.ledger.eroded += acc[t].eroded;
        r.ledger.deposited += acc[t].deposited;
        r.ledger.exported += acc[t].exported;
        r.ledger.suspended += acc[t].suspended;
        r.ledger.steps += acc[t].steps;
    }
    r.ledger.droplets = total;
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
        const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        const double tn = tan(params->talus_angle * 3.14159265358979323846 / 180.0);
        /* Up to eight neighbours each take at most k of the excess: k = strength / 16 keeps a
         * sample from giving away more than half of it in one pass. */
        thermal_ctx tc = {(float)(params->thermal_strength / 16.0), (float)(tn * dx),
                          (float)(tn * dz), (float)(tn * sqrt(dx * dx + dz * dz))};
        float *src = r.field.heights, *dst = scratch;
        for (uint32_t k = 0; k < params->thermal_iterations; k++) {
            const long long nzl = (long long)nz;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
            for (long long z = 0; z < nzl; z++)
                thermal_row(src, dst, nx, nz, (size_t)z, &tc);
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

    st = finish_change(field, &r, err);

done:
    free(b);
    free(order);
    free(tile_of);
    free(tile_start);
    free(tile_fill);
    free(acc);
    free(phase_tiles);
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
    const size_t n = trn_field_sample_count(field);
    if (!n) return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "erosion: grid too large");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(field->heights[i]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "erosion: sample %zu (x %zu, z %zu) is not a finite height", i,
                                 i % ((size_t)field->cells_x + 1), i / ((size_t)field->cells_x + 1));
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
        for (size_t i = 0; i < n; i++)
            back.heights[i] += field->heights[i];
        tp.iterations = 0; /* thermal relaxation only */
        tp.droplet_cell = 0.0;
        tp.rate_scale = NULL;
        st = erosion_on_grid(&back, &tp, world_seed, &fr, &tpr, err);
    }
    if (!st) st = finish_change(field, &fr, err);
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
