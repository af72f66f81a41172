/* Water resolution: carve bodies into the ground, then resolve per-sample coverage, ownership,
 * surfaces, statistics and leak warnings in body order (independent of the thread count). */
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) on Linux */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "core/checked.h"
#include "core/xz_stack.h"
#include "water/water_internal.h"
#include "terrane/water.h"

#ifdef _OPENMP
#include <omp.h>
#define THREAD_NUM() omp_get_thread_num()
#else
#define THREAD_NUM() 0
#endif

/* Rows per river tile: tiles partition the rows, so each sample has one writer. */
#define TILE_ROWS 32u
/* Cells over which lake and ocean carving ramps in from the shore. */
#define CARVE_RAMP 4

/* Loops over fewer samples run on one thread: a parallel region costs more than it saves there,
 * and far more when the cores are busy (a waiting thread may not run for a whole time slice). */
#define PARALLEL_MIN ((size_t)1 << 20)

/* Region mask bits. */
#define IN_FOOTPRINT 1u
#define COVERED 2u

typedef struct grid_info {
    uint32_t cells_x, cells_z;
    size_t nx, nz, samples;
    double size_x, size_z, step_x, step_z;
    double *xs, *zs; /* sample positions */
    const float *h;  /* the heights coverage reads (carved in place before coverage) */
} grid_info;

typedef struct bbox {
    uint32_t i0, i1, j0, j1; /* inclusive */
    bool empty;
} bbox;

typedef struct resolve_ctx {
    grid_info g;
    int threads;
    trn_water *w;
    bbox *boxes; /* per body */
} resolve_ctx;

#define HUGE_PAGE ((size_t)2 << 20)

/* The per-sample arrays: fresh 4 KiB pages fault one by one (most of a 4097^2 resolution on a
 * virtual machine) and queries read them at random, so big blocks ask for huge pages. free()
 * releases them. */
static void *big_alloc(size_t bytes)
{
    if (bytes < 4 * HUGE_PAGE) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water: out of memory");
}

/* Clamp a real sample coordinate range [lo, hi] (world units) to sample indices, with one sample
 * of slack for rounding. */
static void index_range(double lo, double hi, double step, uint32_t cells, uint32_t *a, uint32_t *b,
                        bool *empty)
{
    const double fa = floor(lo / step) - 1.0, fb = ceil(hi / step) + 1.0;
    if (!(fb >= 0.0) || !(fa <= (double)cells) || fa > fb) {
        *empty = true;
        *a = 1;
        *b = 0;
        return;
    }
    *a = fa < 0.0 ? 0u : (uint32_t)fa;
    *b = fb > (double)cells ? cells : (uint32_t)fb;
}

/* Whether a loop over the box is worth a parallel region. */
static bool box_parallel(const bbox *b)
{
    return !b->empty && ((size_t)b->i1 - b->i0 + 1u) * ((size_t)b->j1 - b->j0 + 1u) >= PARALLEL_MIN;
}

static bbox world_box(const grid_info *g, double x0, double x1, double z0, double z1)
{
    bbox b = {0, 0, 0, 0, false};
    index_range(x0, x1, g->step_x, g->cells_x, &b.i0, &b.i1, &b.empty);
    index_range(z0, z1, g->step_z, g->cells_z, &b.j0, &b.j1, &b.empty);
    return b;
}

/* ---------------------------------------------------------------------------------------------
 * Boundary polygons, one row at a time: parity of the crossings, exact tests near edges.
 * ------------------------------------------------------------------------------------------- */

typedef struct poly_scratch {
    uint32_t *edges; /* edges whose z range holds the row (edge k runs from k-1 to k) */
    double *cross;   /* x of the half-open crossings */
    double *near;    /* [lo, hi] intervals around every edge in the row, merged */
} poly_scratch;

static int cmp_double(const void *pa, const void *pb)
{
    const double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Exact inside-or-on test over the edges that reach row pz (the others cannot decide). */
static bool contains_edges(const double *xz, uint32_t n, const uint32_t *edges, uint32_t ne,
                           double px, double pz)
{
    bool inside = false;
    for (uint32_t e = 0; e < ne; e++) {
        const uint32_t k = edges[e], prev = k == 0 ? n - 1 : k - 1;
        const double ax = xz[2 * prev], az = xz[2 * prev + 1], bx = xz[2 * k], bz = xz[2 * k + 1];
        const bool on_x = (ax <= px && px <= bx) || (bx <= px && px <= ax);
        const bool on_z = (az <= pz && pz <= bz) || (bz <= pz && pz <= az);
        if (on_x && on_z && trn_water_orient(ax, az, bx, bz, px, pz) == 0) return true;
        if ((az > pz) != (bz > pz)) {
            const int o = trn_water_orient(ax, az, bx, bz, px, pz);
            if (bz > az ? o > 0 : o < 0) inside = !inside;
        }
    }
    return inside;
}

/* OR bit into out[i - i0] for the samples i0..i1 of row pz inside the polygon (edge included). */
static void polygon_row(const double *xz, uint32_t n, double pz, const double *xs, uint32_t i0,
                        uint32_t i1, uint8_t *out, uint8_t bit, poly_scratch *sc)
{
    uint32_t ne = 0, nc = 0, ni = 0;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t prev = k == 0 ? n - 1 : k - 1;
        const double ax = xz[2 * prev], az = xz[2 * prev + 1], bx = xz[2 * k], bz = xz[2 * k + 1];
        if (pz < fmin(az, bz) || pz > fmax(az, bz)) continue;
        sc->edges[ne++] = k;
        /* The crossing's rounding error is a few ulps of |ax| + |bx|: 1e-9 of it is safe. */
        const double tol = 1e-9 * (fabs(ax) + fabs(bx) + fabs(az) + fabs(bz) + fabs(pz)) + 1e-300;
        double lo, hi;
        if (az == bz) {
            lo = fmin(ax, bx) - tol;
            hi = fmax(ax, bx) + tol;
        } else {
            const double xc = ax + (pz - az) * (bx - ax) / (bz - az);
            lo = xc - tol;
            hi = xc + tol;
            if ((az > pz) != (bz > pz)) sc->cross[nc++] = xc;
        }
        sc->near[2 * ni] = lo;
        sc->near[2 * ni + 1] = hi;
        ni++;
    }
    if (ne == 0) return; /* the row misses the polygon */
    qsort(sc->cross, nc, sizeof(double), cmp_double);
    qsort(sc->near, ni, 2 * sizeof(double), cmp_double); /* by lo */
    uint32_t c = 0, q = 0;
    for (uint32_t i = i0; i <= i1; i++) {
        const double px = xs[i];
        while (c < nc && sc->cross[c] <= px)
            c++;
        while (q < ni && sc->near[2 * q + 1] < px)
            q++;
        bool near = false;
        for (uint32_t r = q; r < ni && sc->near[2 * r] <= px; r++)
            if (sc->near[2 * r + 1] >= px) {
                near = true;
                break;
            }
        const bool inside = near ? contains_edges(xz, n, sc->edges, ne, px, pz) : ((nc - c) & 1u);
        if (inside) out[i - i0] |= bit;
    }
}

/* ---------------------------------------------------------------------------------------------
 * Lakes and oceans: the footprint, the covered region, carving, claiming, warnings.
 * ------------------------------------------------------------------------------------------- */

typedef struct region {
    bbox box; /* the footprint's samples plus a margin of two */
    size_t width;
    uint8_t *mask;
} region;

static inline bool eligible(const region *r, const grid_info *g, double level, size_t x, size_t z)
{
    const uint8_t m = r->mask[z * r->width + x];
    return (m & (IN_FOOTPRINT | COVERED)) == IN_FOOTPRINT &&
           (double)g->h[((size_t)r->box.j0 + z) * g->nx + r->box.i0 + x] < level;
}

static bool push_runs(trn_xz_stack *s, const region *r, const grid_info *g, double level, size_t z,
                      size_t lo, size_t hi)
{
    bool in_run = false;
    for (size_t x = lo; x <= hi; x++) {
        const bool e = eligible(r, g, level, x, z);
        if (e && !in_run && !trn_xz_push(s, (uint32_t)x, (uint32_t)z)) return false;
        in_run = e;
    }
    return true;
}

/* 4-connected span fill of the eligible samples from (x, z); the set reached is order-free. */
static bool flood(region *r, const grid_info *g, double level, size_t x, size_t z)
{
    trn_xz_stack s = {NULL, 0, 0}; /* pairs local to the box */
    const size_t rows = (size_t)r->box.j1 - r->box.j0 + 1u;
    bool ok = trn_xz_push(&s, (uint32_t)x, (uint32_t)z);
    while (ok && s.count) {
        const size_t sz = s.items[--s.count], sx = s.items[--s.count];
        if (!eligible(r, g, level, sx, sz)) continue;
        size_t lo = sx, hi = sx;
        while (lo > 0 && eligible(r, g, level, lo - 1, sz))
            lo--;
        while (hi + 1 < r->width && eligible(r, g, level, hi + 1, sz))
            hi++;
        uint8_t *row = r->mask + sz * r->width;
        for (size_t k = lo; k <= hi; k++)
            row[k] |= COVERED;
        if (sz > 0) ok = push_runs(&s, r, g, level, sz - 1, lo, hi);
        if (ok && sz + 1 < rows) ok = push_runs(&s, r, g, level, sz + 1, lo, hi);
    }
    free(s.items);
    return ok;
}

typedef struct row_best {
    double d2;
    size_t x;
} row_best;

/* The footprint and covered region of a lake or ocean at level on the current heights. A lake
 * floods from seed_in when it is a sample index (a spill lake's centre sample; nothing when it
 * is dry), else from the wet footprint sample nearest the centre; *seed_out (may be NULL) gets
 * the sample it flooded from, SIZE_MAX for none. */
static trn_status body_region(const resolve_ctx *c, const trn_water_body *b, double level,
                              size_t seed_in, poly_scratch *ps, region *r, size_t *seed_out,
                              trn_error *err)
{
    if (seed_out) *seed_out = SIZE_MAX;
    const grid_info *g = &c->g;
    memset(r, 0, sizeof *r);
    const uint32_t nb = trn_water_boundary_count(b);
    double x0 = 0.0, x1 = g->size_x, z0 = 0.0, z1 = g->size_z;
    if (b->kind == TRN_WATER_LAKE) {
        x0 = fmax(x0, b->center_x - b->radius);
        x1 = fmin(x1, b->center_x + b->radius);
        z0 = fmax(z0, b->center_z - b->radius);
        z1 = fmin(z1, b->center_z + b->radius);
    }
    if (nb) {
        double bx0 = b->boundary[0], bx1 = bx0, bz0 = b->boundary[1], bz1 = bz0;
        for (uint32_t k = 1; k < nb; k++) {
            bx0 = fmin(bx0, b->boundary[2 * k]);
            bx1 = fmax(bx1, b->boundary[2 * k]);
            bz0 = fmin(bz0, b->boundary[2 * k + 1]);
            bz1 = fmax(bz1, b->boundary[2 * k + 1]);
        }
        x0 = fmax(x0, bx0);
        x1 = fmin(x1, bx1);
        z0 = fmax(z0, bz0);
        z1 = fmin(z1, bz1);
    }
    /* One more sample of margin: the leak check looks just outside the footprint. */
    r->box = world_box(g, x0 - g->step_x, x1 + g->step_x, z0 - g->step_z, z1 + g->step_z);
    if (r->box.empty) return TRN_OK;
    r->width = (size_t)r->box.i1 - r->box.i0 + 1u;
    const size_t rows = (size_t)r->box.j1 - r->box.j0 + 1u;
    r->mask = big_alloc(r->width * rows); /* rows cleared by their own thread below */
    row_best *best = malloc(rows * sizeof *best);
    if (!r->mask || !best) {
        free(best);
        free(r->mask);
        r->mask = NULL;
        return oom(err);
    }
    const double r2 = b->radius * b->radius;
    const bool lake = b->kind == TRN_WATER_LAKE;
    const long long nrows = (long long)rows;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++) {
        const size_t j = r->box.j0 + (size_t)jj;
        uint8_t *row = r->mask + (size_t)jj * r->width;
        const double pz = g->zs[j];
        if (nb) {
            memset(row, 0, r->width);
            polygon_row(b->boundary, nb, pz, g->xs, r->box.i0, r->box.i1, row, IN_FOOTPRINT,
                        &ps[THREAD_NUM()]);
        } else
            memset(row, IN_FOOTPRINT, r->width);
        const float *hr = g->h + j * g->nx + r->box.i0;
        row_best rb = {INFINITY, SIZE_MAX};
        const double dz = pz - b->center_z;
        for (size_t x = 0; x < r->width; x++) {
            if (!(row[x] & IN_FOOTPRINT)) continue;
            if (lake) {
                const double dx = g->xs[r->box.i0 + x] - b->center_x, d2 = dx * dx + dz * dz;
                if (!(d2 <= r2)) {
                    row[x] = 0;
                    continue;
                }
                if ((double)hr[x] < level && d2 < rb.d2) {
                    rb.d2 = d2;
                    rb.x = x;
                }
            } else if ((double)hr[x] < level) {
                row[x] |= COVERED;
            }
        }
        best[jj] = rb;
    }
    trn_status st = TRN_OK;
    if (lake && seed_in != SIZE_MAX) {
        /* A spill lake grows from its centre's sample or not at all. */
        const size_t si = seed_in % g->nx, sj = seed_in / g->nx;
        if (si >= r->box.i0 && si <= r->box.i1 && sj >= r->box.j0 && sj <= r->box.j1 &&
            eligible(r, g, level, si - r->box.i0, sj - r->box.j0)) {
            if (seed_out) *seed_out = seed_in;
            if (!flood(r, g, level, si - r->box.i0, sj - r->box.j0)) st = oom(err);
        }
    } else if (lake) {
        /* The seed: the wet footprint sample nearest the centre (ties: smallest index). */
        size_t seed_row = SIZE_MAX;
        for (size_t jj = 0; jj < rows; jj++)
            if (best[jj].x != SIZE_MAX && (seed_row == SIZE_MAX || best[jj].d2 < best[seed_row].d2))
                seed_row = jj;
        if (seed_row != SIZE_MAX && seed_out)
            *seed_out = (r->box.j0 + seed_row) * g->nx + r->box.i0 + best[seed_row].x;
        if (seed_row != SIZE_MAX && !flood(r, g, level, best[seed_row].x, seed_row)) st = oom(err);
    }
    free(best);
    if (st != TRN_OK) {
        free(r->mask);
        r->mask = NULL;
    }
    return st;
}

/* ---------------------------------------------------------------------------------------------
 * Spill levels: the lowest level at which a lake's water would run out.
 * ------------------------------------------------------------------------------------------- */

typedef struct heap_item {
    float h;
    size_t k; /* sample index: ties pop in index order, so the pass found is unique */
} heap_item;

typedef struct min_heap {
    heap_item *items;
    size_t count, capacity;
} min_heap;

static inline bool heap_less(heap_item a, heap_item b)
{
    return a.h < b.h || (a.h == b.h && a.k < b.k);
}

static bool heap_push(min_heap *q, float h, size_t k)
{
    if (q->count == q->capacity) {
        const size_t cap = q->capacity ? q->capacity * 2 : 4096;
        heap_item *p = realloc(q->items, cap * sizeof *p);
        if (!p) return false;
        q->items = p;
        q->capacity = cap;
    }
    size_t at = q->count++;
    const heap_item it = {h, k};
    while (at > 0) {
        const size_t up = (at - 1) / 2;
        if (!heap_less(it, q->items[up])) break;
        q->items[at] = q->items[up];
        at = up;
    }
    q->items[at] = it;
    return true;
}

static heap_item heap_pop(min_heap *q)
{
    const heap_item top = q->items[0], last = q->items[--q->count];
    size_t at = 0;
    for (;;) {
        size_t child = 2 * at + 1;
        if (child >= q->count) break;
        if (child + 1 < q->count && heap_less(q->items[child + 1], q->items[child])) child++;
        if (!heap_less(q->items[child], last)) break;
        q->items[at] = q->items[child];
        at = child;
    }
    if (q->count) q->items[at] = last;
    return top;
}

/* The sample nearest the lake's centre (clamped to the grid; ties: the smallest index). */
static size_t centre_sample(const grid_info *g, const trn_water_body *b)
{
    const double fx = b->center_x / g->step_x, fz = b->center_z / g->step_z;
    size_t best = 0;
    double best_d2 = INFINITY;
    for (int dj = 0; dj < 2; dj++)
        for (int di = 0; di < 2; di++) {
            double ci = floor(fx) + di, cj = floor(fz) + dj;
            ci = ci < 0.0 ? 0.0 : ci > (double)g->cells_x ? (double)g->cells_x : ci;
            cj = cj < 0.0 ? 0.0 : cj > (double)g->cells_z ? (double)g->cells_z : cj;
            const size_t i = (size_t)ci, j = (size_t)cj, k = j * g->nx + i;
            const double ex = g->xs[i] - b->center_x, ez = g->zs[j] - b->center_z;
            const double d2 = ex * ex + ez * ez;
            if (d2 < best_d2 || (d2 == best_d2 && k < best)) {
                best_d2 = d2;
                best = k;
            }
        }
    return best;
}

/* Whether sample k lies under one of the oceans (any order: the sea takes what spills into it
 * even when it is resolved later). */
static bool in_ocean(const trn_water_body *const *oceans, uint32_t count, const grid_info *g,
                     size_t k)
{
    for (uint32_t o = 0; o < count; o++) {
        const trn_water_body *b = oceans[o];
        if (!((double)g->h[k] < b->level)) continue;
        const uint32_t nb = trn_water_boundary_count(b);
        if (!nb || trn_water_polygon_contains(b->boundary, nb, g->xs[k % g->nx], g->zs[k / g->nx]))
            return true;
    }
    return false;
}

/* What a spill search reads: the grid, the footprint, the water before the lake, the oceans. */
typedef struct spill_search {
    const grid_info *g;
    const trn_water *w;
    const region *fp;
    int32_t body;
    const trn_water_body **oceans;
    uint32_t ocean_count;
    uint8_t *seen; /* per sample of the footprint's box */
} spill_search;

/* How sample k lets water out: past the footprint, into water before the lake or an ocean, over
 * the grid's edge; TRN_SPILL_NONE inside. */
static trn_spill_outlet outlet_at(const spill_search *s, size_t k)
{
    const grid_info *g = s->g;
    const region *fp = s->fp;
    const size_t i = k % g->nx, j = k / g->nx;
    const bool in_box =
        !fp->box.empty && i >= fp->box.i0 && i <= fp->box.i1 && j >= fp->box.j0 && j <= fp->box.j1;
    if (!in_box || !(fp->mask[(j - fp->box.j0) * fp->width + (i - fp->box.i0)] & IN_FOOTPRINT))
        return TRN_SPILL_LIMIT;
    if ((s->w->wet[k] && s->w->owner[k] >= 0 && s->w->owner[k] < s->body) ||
        in_ocean(s->oceans, s->ocean_count, g, k))
        return TRN_SPILL_WATER;
    if (i == 0 || j == 0 || i == g->cells_x || j == g->cells_z) return TRN_SPILL_EDGE;
    return TRN_SPILL_NONE;
}

/* The seen flag of sample n, a 4-neighbour of a sample inside the footprint (so inside the box,
 * which has a margin of one beyond it). */
static uint8_t *seen_at(const spill_search *s, size_t n)
{
    const size_t ni = n % s->g->nx, nj = n / s->g->nx;
    return &s->seen[(nj - s->fp->box.j0) * s->fp->width + (ni - s->fp->box.i0)];
}

/* Whether water at the seed runs out without rising above the seed's own ground: a depth-first
 * walk over the samples no higher than the seed, lowest neighbour first, until an outlet (its
 * kind in *outlet). This is the common case of a centre on a slope; it usually finds a way down
 * in a few steps where the priority flood would fill every hollow below the seed first. False:
 * the seed lies in a closed depression, and every sample the walk saw is in it. */
static bool drains_from(spill_search *s, size_t seed, trn_spill_outlet *outlet, bool *ok)
{
    const grid_info *g = s->g;
    const float top = g->h[seed];
    size_t *stack = NULL, count = 0, cap = 0;
    bool found = false;
    *ok = true;
    size_t k = seed;
    for (;;) {
        const trn_spill_outlet o = outlet_at(s, k);
        if (o != TRN_SPILL_NONE) {
            *outlet = o;
            found = true;
            break;
        }
        /* Push the unseen neighbours no higher than the seed, highest first, so the lowest is
         * taken next (ties: the larger index first, the smaller taken first). */
        size_t nb[4] = {k - 1, k + 1, k - g->nx, k + g->nx}, take[4];
        int n = 0;
        for (int d = 0; d < 4; d++) {
            uint8_t *m = seen_at(s, nb[d]);
            if (*m || nb[d] == seed || !(g->h[nb[d]] <= top)) continue;
            *m = 1;
            take[n++] = nb[d];
        }
        for (int a = 1; a < n; a++) /* sort descending by (height, index) */
            for (int b2 = a; b2 > 0; b2--) {
                const size_t x = take[b2 - 1], y = take[b2];
                if (g->h[x] > g->h[y] || (g->h[x] == g->h[y] && x > y)) break;
                take[b2 - 1] = y;
                take[b2] = x;
            }
        if (count + 4 > cap) {
            const size_t nc = cap ? cap * 2 : 1024;
            size_t *p = realloc(stack, nc * sizeof *p);
            if (!p) {
                *ok = false;
                break;
            }
            stack = p;
            cap = nc;
        }
        for (int a = 0; a < n; a++)
            stack[count++] = take[a];
        if (!count) break;
        k = stack[--count];
    }
    free(stack);
    return found;
}

/* Where water rising from sample seed would first run out, on the current heights: the lowest
 * level at which it reaches a sample past the lake's footprint, in water before body (or under
 * any ocean) or on the grid's edge. When the seed drains without rising (drains_from) that is
 * its own ground; otherwise a priority flood (lowest sample first, ties in sample order) from
 * the seed: the highest sample popped on the way is the pass, and its height the spill level
 * (the smallest, over every way out, of the highest ground on that way). Sets
 * body->spill_level, spill_x, spill_z and spill_outlet. */
static trn_status find_spill(const resolve_ctx *c, trn_water_body *b, int32_t body, size_t seed,
                             poly_scratch *ps, trn_error *err)
{
    const grid_info *g = &c->g;
    const trn_water *w = c->w;
    region fp;
    /* The footprint alone: at level -inf nothing is covered. */
    trn_status st = body_region(c, b, -INFINITY, SIZE_MAX, ps, &fp, NULL, err);
    if (st != TRN_OK) return st;
    const size_t box_samples = fp.box.empty ? 1u : fp.width * ((size_t)fp.box.j1 - fp.box.j0 + 1u);
    spill_search s = {g, w, &fp, body, NULL, 0, calloc(box_samples, 1)};
    /* The oceans, looked at for every sample the search takes. */
    s.oceans = malloc((w->body_count ? w->body_count : 1u) * sizeof *s.oceans);
    if (!s.seen || !s.oceans) {
        free(s.seen);
        free(s.oceans);
        free(fp.mask);
        return oom(err);
    }
    for (uint32_t o = 0; o < w->body_count; o++)
        if (w->bodies[o].kind == TRN_WATER_OCEAN) s.oceans[s.ocean_count++] = &w->bodies[o];
    double water = g->h[seed];
    size_t pass = seed;
    trn_spill_outlet outlet = TRN_SPILL_EDGE;
    bool ok = true;
    if (!drains_from(&s, seed, &outlet, &ok) && ok) {
        memset(s.seen, 0, box_samples);
        min_heap q = {NULL, 0, 0};
        water = -INFINITY;
        ok = heap_push(&q, g->h[seed], seed);
        while (ok && q.count) {
            const heap_item it = heap_pop(&q);
            const size_t k = it.k;
            if ((double)it.h > water) {
                water = it.h;
                pass = k;
            }
            const trn_spill_outlet o = outlet_at(&s, k);
            if (o != TRN_SPILL_NONE) {
                outlet = o;
                break;
            }
            const size_t nb[4] = {k - 1, k + 1, k - g->nx, k + g->nx};
            for (int d = 0; d < 4 && ok; d++) {
                uint8_t *m = seen_at(&s, nb[d]);
                if (*m || nb[d] == seed) continue;
                *m = 1;
                ok = heap_push(&q, g->h[nb[d]], nb[d]);
            }
        }
        free(q.items);
    }
    free(s.oceans);
    free(s.seen);
    free(fp.mask);
    if (!ok) return oom(err);
    b->spill_level = water;
    b->spill_x = g->xs[pass % g->nx];
    b->spill_z = g->zs[pass / g->nx];
    b->spill_outlet = outlet;
    return TRN_OK;
}

/* Lower the covered region by depth, ramped over CARVE_RAMP cells (Chebyshev distance) from the
 * nearest uncovered sample of the grid. */
static trn_status carve_region(const resolve_ctx *c, float *heights, const region *r, double depth,
                               trn_error *err)
{
    const grid_info *g = &c->g;
    const size_t rows = (size_t)r->box.j1 - r->box.j0 + 1u;
    uint8_t *rowd = malloc(r->width * rows);
    if (!rowd) return oom(err);
    const long long nrows = (long long)rows;
    const long long reach = CARVE_RAMP + 1;
    /* Distance along the row to an uncovered sample (samples beyond the box are uncovered,
     * beyond the grid absent), capped at CARVE_RAMP + 1. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++) {
        const uint8_t *m = r->mask + (size_t)jj * r->width;
        uint8_t *d = rowd + (size_t)jj * r->width;
        for (long long x = 0; x < (long long)r->width; x++) {
            if (!(m[x] & COVERED)) {
                d[x] = 0;
                continue;
            }
            long long best = reach;
            for (long long k = 1; k < reach && k < best; k++) {
                const long long xs[2] = {x - k, x + k};
                for (int s = 0; s < 2; s++) {
                    const long long gi = (long long)r->box.i0 + xs[s];
                    if (gi < 0 || gi > (long long)g->cells_x) continue;
                    if (xs[s] < 0 || xs[s] >= (long long)r->width || !(m[xs[s]] & COVERED))
                        best = k;
                }
            }
            d[x] = (uint8_t)best;
        }
    }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++) {
        const uint8_t *m = r->mask + (size_t)jj * r->width;
        float *hr = heights + ((size_t)r->box.j0 + (size_t)jj) * g->nx + r->box.i0;
        for (size_t x = 0; x < r->width; x++) {
            if (!(m[x] & COVERED)) continue;
            long long best = rowd[(size_t)jj * r->width + x];
            for (long long k = 1; k < reach && k < best; k++) {
                const long long ys[2] = {jj - k, jj + k};
                for (int s = 0; s < 2; s++) {
                    const long long gj = (long long)r->box.j0 + ys[s];
                    if (gj < 0 || gj > (long long)g->cells_z) continue;
                    const long long rd =
                        ys[s] < 0 || ys[s] >= nrows ? 0 : rowd[(size_t)ys[s] * r->width + x];
                    const long long dd = rd > k ? rd : k;
                    if (dd < best) best = dd;
                }
            }
            if (best > CARVE_RAMP) best = CARVE_RAMP;
            hr[x] = (float)((double)hr[x] - depth * (double)best / (double)CARVE_RAMP);
        }
    }
    free(rowd);
    return TRN_OK;
}

/* Claim the covered samples nobody owns yet. */
static void claim_region(const resolve_ctx *c, const region *r, int32_t body, float level)
{
    const grid_info *g = &c->g;
    trn_water *w = c->w;
    const long long nrows = (long long)r->box.j1 - r->box.j0 + 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++) {
        const uint8_t *m = r->mask + (size_t)jj * r->width;
        const size_t base = ((size_t)r->box.j0 + (size_t)jj) * g->nx + r->box.i0;
        for (size_t x = 0; x < r->width; x++)
            if ((m[x] & COVERED) && w->owner[base + x] < 0) {
                w->owner[base + x] = body;
                w->wet[base + x] = 1;
                w->surface[base + x] = level;
            }
    }
}

typedef struct leak {
    uint64_t count;
    size_t first; /* sample index, SIZE_MAX when none */
} leak;

static void leak_add(leak *l, size_t s)
{
    if (l->count++ == 0 || s < l->first) l->first = s;
}

static void leak_merge(leak *into, const leak *from)
{
    if (!from->count) return;
    if (!into->count || from->first < into->first) into->first = from->first;
    into->count += from->count;
}

typedef struct sample_list {
    size_t *items;
    size_t count;
} sample_list;

/* Row jj of the region: samples outside the footprint, below the level, next to one of the
 * body's wet samples (counted when out is NULL). */
static size_t row_leaks(const resolve_ctx *c, const region *r, size_t jj, int32_t body,
                        double level, size_t *out)
{
    const grid_info *g = &c->g;
    const trn_water *w = c->w;
    const size_t j = r->box.j0 + jj;
    const uint8_t *m = r->mask + jj * r->width;
    size_t n = 0;
    for (size_t x = 0; x < r->width; x++) {
        const size_t i = r->box.i0 + x, s = j * g->nx + i;
        if ((m[x] & IN_FOOTPRINT) || !((double)g->h[s] < level)) continue;
        const bool next_to = (i > 0 && w->wet[s - 1] && w->owner[s - 1] == body) ||
                             (i < g->cells_x && w->wet[s + 1] && w->owner[s + 1] == body) ||
                             (j > 0 && w->wet[s - g->nx] && w->owner[s - g->nx] == body) ||
                             (j < g->cells_z && w->wet[s + g->nx] && w->owner[s + g->nx] == body);
        if (!next_to) continue;
        if (out) out[n] = s;
        n++;
    }
    return n;
}

/* Leak candidates of a lake or ocean right after its claim, in sample order; a later body may
 * still cover some of them (a join), so they are filtered once every body has its samples. */
static trn_status region_leaks(const resolve_ctx *c, const region *r, int32_t body, double level,
                               size_t *row_start, sample_list *out, trn_error *err)
{
    const long long nrows = (long long)r->box.j1 - r->box.j0 + 1;
    out->items = NULL;
    out->count = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++)
        row_start[jj] = row_leaks(c, r, (size_t)jj, body, level, NULL);
    size_t total = 0;
    for (long long jj = 0; jj < nrows; jj++) {
        const size_t n = row_start[jj];
        row_start[jj] = total;
        total += n;
    }
    if (total == 0) return TRN_OK;
    out->items = malloc(total * sizeof *out->items);
    if (!out->items) return oom(err);
    out->count = total;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(&r->box))
#endif
    for (long long jj = 0; jj < nrows; jj++)
        row_leaks(c, r, (size_t)jj, body, level, out->items + row_start[jj]);
    return TRN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Rivers: nearest polyline point per sample, tile by tile.
 * ------------------------------------------------------------------------------------------- */

typedef struct river_geom {
    const trn_water_body *body;
    int32_t index;
    const double *path;
    uint32_t *segs; /* the segments searched (zero-length ones skipped unless all are) */
    uint32_t nsegs, first_seg, last_seg;
    double half_width, w2, reach, r2; /* the channel and the search radius (carve + a cell) */
    double bank, c2; /* a carving river's bank width beyond the water and (half_width + bank)^2 */
    double *along;   /* a carving river's distance along the path at each point */
    double near;     /* a cell's diagonal: how far along the path a neighbour's water can be */
    bbox box;
    uint32_t tile0, tiles; /* tiles of TILE_ROWS rows from tile0 */
    uint32_t *tile_start;  /* CSR over tile_segs */
    uint32_t *tile_segs;
    size_t work; /* samples the nearest-point search visits, roughly */
} river_geom;

typedef struct river_scratch {
    double *d2, *t;
    uint32_t *seg;
    uint32_t *stamp, gen; /* stamp == gen + 1: d2, t, seg hold this tile's values */
} river_scratch;

enum river_mode { RIVER_CARVE, RIVER_COVER, RIVER_FINISH };

static void river_geom_free(river_geom *r)
{
    free(r->segs);
    free(r->along);
    free(r->tile_start);
    free(r->tile_segs);
    memset(r, 0, sizeof *r);
}

static bool segment_rows(const grid_info *g, const river_geom *r, uint32_t s, uint32_t *j0,
                         uint32_t *j1)
{
    const double *a = r->path + 3 * (size_t)s, *b = a + 3;
    bool empty = false;
    index_range(fmin(a[2], b[2]) - r->reach, fmax(a[2], b[2]) + r->reach, g->step_z, g->cells_z, j0,
                j1, &empty);
    return !empty;
}

static trn_status river_geom_make(const grid_info *g, const trn_water_body *b, int32_t index,
                                  river_geom *r, trn_error *err)
{
    memset(r, 0, sizeof *r);
    r->body = b;
    r->index = index;
    r->path = b->path;
    r->half_width = 0.5 * b->width;
    r->w2 = r->half_width * r->half_width;
    /* A carved channel's banks rise from the water's edge to the ground over bank, at least
     * two cells wide: a cut that stopped at the edge would leave a wall there as high as the
     * bed is deep, which a grid draws as a row of steps that pulse with the path. */
    r->bank = b->carve ? fmax(r->half_width, 2.0 * fmax(g->step_x, g->step_z)) : 0.0;
    r->c2 = (r->half_width + r->bank) * (r->half_width + r->bank);
    /* Corners of the channel's cells lie within one cell diagonal of a wet sample. */
    r->reach =
        (r->half_width + r->bank) * (1.0 + 1e-9) + hypot(g->step_x, g->step_z) * (1.0 + 1e-9);
    r->r2 = r->reach * r->reach;
    const uint32_t nseg = b->path_count - 1u;
    r->segs = malloc((size_t)nseg * sizeof *r->segs);
    if (!r->segs) return oom(err);
    if (b->carve) {
        r->near = hypot(g->step_x, g->step_z);
        r->along = malloc((size_t)b->path_count * sizeof *r->along);
        if (!r->along) return oom(err);
        r->along[0] = 0.0;
        for (uint32_t k = 1; k < b->path_count; k++) {
            const double *p = b->path + 3 * (size_t)(k - 1u);
            r->along[k] = r->along[k - 1u] + hypot(p[3] - p[0], p[5] - p[2]);
        }
    }
    for (uint32_t s = 0; s < nseg; s++) {
        const double *p = b->path + 3 * (size_t)s;
        if (p[0] != p[3] || p[2] != p[5]) r->segs[r->nsegs++] = s;
    }
    if (r->nsegs == 0) r->segs[r->nsegs++] = 0; /* a river at one point: a disc */
    r->first_seg = r->segs[0];
    r->last_seg = r->segs[r->nsegs - 1];
    double x0 = INFINITY, x1 = -INFINITY, z0 = INFINITY, z1 = -INFINITY;
    for (uint32_t k = 0; k < b->path_count; k++) {
        x0 = fmin(x0, b->path[3 * k]);
        x1 = fmax(x1, b->path[3 * k]);
        z0 = fmin(z0, b->path[3 * k + 2]);
        z1 = fmax(z1, b->path[3 * k + 2]);
    }
    r->box = world_box(g, x0 - r->reach, x1 + r->reach, z0 - r->reach, z1 + r->reach);
    if (r->box.empty) return TRN_OK;
    r->tile0 = r->box.j0 / TILE_ROWS;
    r->tiles = r->box.j1 / TILE_ROWS - r->tile0 + 1u;
    r->tile_start = calloc((size_t)r->tiles + 1u, sizeof *r->tile_start);
    if (!r->tile_start) return oom(err);
    size_t total = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (uint32_t t = 0; t < r->tiles; t++)
                r->tile_start[t + 1] += r->tile_start[t];
            total = r->tile_start[r->tiles];
            if (total > UINT32_MAX)
                return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                                     "water body '%s': river path too long", b->id);
            r->tile_segs = malloc((total ? total : 1) * sizeof *r->tile_segs);
            if (!r->tile_segs) return oom(err);
        }
        uint32_t *fill = NULL;
        if (pass == 1) {
            fill = malloc(((size_t)r->tiles + 1u) * sizeof *fill);
            if (!fill) return oom(err);
            memcpy(fill, r->tile_start, ((size_t)r->tiles + 1u) * sizeof *fill);
        }
        for (uint32_t k = 0; k < r->nsegs; k++) {
            uint32_t j0, j1;
            if (!segment_rows(g, r, r->segs[k], &j0, &j1)) continue;
            for (uint32_t t = j0 / TILE_ROWS - r->tile0; t <= j1 / TILE_ROWS - r->tile0; t++) {
                if (pass == 0)
                    r->tile_start[t + 1]++;
                else
                    r->tile_segs[fill[t]++] = r->segs[k];
            }
        }
        free(fill);
    }
    /* Each tile entry searches about (2 reach)^2 samples beyond its own length. */
    const double per = 4.0 * r->r2 / (g->step_x * g->step_z) + 1.0;
    const double work = (double)total * per;
    r->work = work > 1e18 ? (size_t)1e18 : (size_t)work;
    return TRN_OK;
}

/* The river's surface at a nearest point: level, or the bed there + river_depth. */
static inline double river_surface(const trn_water_body *b, double bed)
{
    return b->surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED ? bed + b->river_depth : b->level;
}

/* The columns of row j that segment s can reach (within the search radius); false for none. */
static bool segment_cols(const grid_info *g, const river_geom *r, uint32_t s, uint32_t j,
                         uint32_t *i0, uint32_t *i1)
{
    const double *a = r->path + 3 * (size_t)s;
    const double ax = a[0], az = a[2], ex = a[3] - ax, ez = a[5] - az, pz = g->zs[j];
    double lo, hi;
    if (ez != 0.0) {
        double t0 = (pz - r->reach - az) / ez, t1 = (pz + r->reach - az) / ez;
        if (t0 > t1) {
            const double tmp = t0;
            t0 = t1;
            t1 = tmp;
        }
        if (t1 < 0.0 || t0 > 1.0) return false;
        t0 = fmax(t0, 0.0);
        t1 = fmin(t1, 1.0);
        lo = fmin(ax + t0 * ex, ax + t1 * ex) - r->reach;
        hi = fmax(ax + t0 * ex, ax + t1 * ex) + r->reach;
    } else {
        lo = fmin(ax, ax + ex) - r->reach;
        hi = fmax(ax, ax + ex) + r->reach;
    }
    bool empty = false;
    index_range(lo, hi, g->step_x, g->cells_x, i0, i1, &empty);
    return !empty;
}

/* The bed at distance at along the path (clamped to its ends), from point k's segment on. */
static double bed_along(const river_geom *r, uint32_t k, double at)
{
    const uint32_t last = r->body->path_count - 1u;
    while (k > 0 && r->along[k] > at)
        k--;
    while (k < last && r->along[k + 1u] < at)
        k++;
    if (k == last || !(at > r->along[k])) return r->path[3 * (size_t)k + 1];
    const double *a = r->path + 3 * (size_t)k;
    const double f = (at - r->along[k]) / (r->along[k + 1u] - r->along[k]);
    return a[1] + (f < 1.0 ? f : 1.0) * (a[4] - a[1]);
}

/* The highest bed within near of distance at along the path, point k's segment holding at. */
static double bed_near(const river_geom *r, uint32_t k, double at)
{
    const uint32_t last = r->body->path_count - 1u;
    double hi = fmax(bed_along(r, k, at - r->near), bed_along(r, k, at + r->near));
    for (uint32_t v = k; v > 0 && r->along[v] > at - r->near; v--)
        hi = fmax(hi, r->path[3 * (size_t)v + 1]);
    for (uint32_t v = k + 1u; v <= last && r->along[v] < at + r->near; v++)
        hi = fmax(hi, r->path[3 * (size_t)v + 1]);
    return hi;
}

/* One sample's action once its nearest path point is known. */
static void river_apply(const resolve_ctx *c, const river_geom *r, enum river_mode mode,
                        float *heights, uint32_t i, uint32_t j, double d2, double t, uint32_t s,
                        leak *l)
{
    const grid_info *g = &c->g;
    trn_water *w = c->w;
    const trn_water_body *b = r->body;
    if (!(d2 <= r->r2)) return;
    const double *a = r->path + 3 * (size_t)s;
    const double bed = t >= 1.0 ? a[4] : a[1] + t * (a[4] - a[1]);
    const double surf = river_surface(b, bed);
    const size_t k = (size_t)j * g->nx + i;
    if (mode == RIVER_CARVE) {
        if (d2 > r->c2) return;
        const double ground = (double)heights[k];
        /* The channel's bowl: the bed at the line, the surface at the water's edge. */
        double h = bed + fmax(0.0, surf - bed) * (d2 / r->w2);
        if (d2 > r->w2) {
            /* The bank: from the channel's edge a straight slope leaning into the ground over
             * bank, so the cut is continuous across the edge and fades out on any ground;
             * its foot no lower than the water (or a bed above it) a cell up or down the
             * path, which would otherwise spill onto it where the bed falls fast. */
            const double at = r->along[s] + t * (r->along[s + 1u] - r->along[s]);
            const double near = bed_near(r, s, at);
            const double foot = fmax(fmax(bed, surf), fmax(near, river_surface(b, near)));
            h = foot + (ground - foot) * ((sqrt(d2) - r->half_width) / r->bank);
        }
        if (h < ground) heights[k] = (float)h;
        return;
    }
    if (mode == RIVER_COVER) {
        if (d2 <= r->w2 && w->owner[k] < 0 && (double)g->h[k] < surf) {
            w->owner[k] = r->index;
            w->wet[k] = 1;
            w->surface[k] = (float)surf;
            w->segment[k] = s;
        }
        return;
    }
    if (w->owner[k] == r->index && !w->wet[k]) {
        w->surface[k] = (float)surf;
        w->segment[k] = s;
    }
    /* A side sample beyond the channel (not past an open end), dry, below the surface of a wet
     * neighbour of this river. */
    if (d2 <= r->w2 || w->wet[k]) return;
    if ((t <= 0.0 && s == r->first_seg) || (t >= 1.0 && s == r->last_seg)) return;
    const double gk = (double)g->h[k];
    const bool level = b->surface_mode == TRN_RIVER_SURFACE_LEVEL;
    const size_t nb[4] = {i > 0 ? k - 1 : SIZE_MAX, i < g->cells_x ? k + 1 : SIZE_MAX,
                          j > 0 ? k - g->nx : SIZE_MAX, j < g->cells_z ? k + g->nx : SIZE_MAX};
    for (int q = 0; q < 4; q++) {
        const size_t m = nb[q];
        if (m != SIZE_MAX && w->wet[m] && w->owner[m] == r->index &&
            gk < (level ? b->level : (double)w->surface[m])) {
            leak_add(l, k);
            return;
        }
    }
}

/* Nearest path points for the samples near the tile's segments, then each one's action. The
 * scratch is stamped per tile instead of cleared: only visited samples cost anything. */
static void river_tile(const resolve_ctx *c, const river_geom *r, uint32_t tile,
                       enum river_mode mode, float *heights, river_scratch *sc, leak *tile_leak)
{
    const grid_info *g = &c->g;
    const uint32_t seg_lo = r->tile_start[tile], seg_hi = r->tile_start[tile + 1];
    leak l = {0, SIZE_MAX};
    *tile_leak = l;
    if (seg_lo == seg_hi) return;
    const uint32_t row0 = (r->tile0 + tile) * TILE_ROWS;
    uint32_t row1 = row0 + TILE_ROWS - 1u;
    if (row1 > g->cells_z) row1 = g->cells_z;
    if (sc->gen >= UINT32_MAX - 2u) {
        memset(sc->stamp, 0, TILE_ROWS * g->nx * sizeof *sc->stamp);
        sc->gen = 0;
    }
    const uint32_t seen = sc->gen + 1u, done = sc->gen + 2u;
    sc->gen += 2u;
    for (uint32_t k = seg_lo; k < seg_hi; k++) {
        const uint32_t s = r->tile_segs[k];
        const double *a = r->path + 3 * (size_t)s;
        const double ax = a[0], az = a[2], ex = a[3] - ax, ez = a[5] - az;
        const double len2 = ex * ex + ez * ez;
        uint32_t j0, j1;
        segment_rows(g, r, s, &j0, &j1);
        if (j0 < row0) j0 = row0;
        if (j1 > row1) j1 = row1;
        for (uint32_t j = j0; j <= j1; j++) {
            uint32_t i0, i1;
            if (!segment_cols(g, r, s, j, &i0, &i1)) continue;
            const double pz = g->zs[j];
            const size_t base = (size_t)(j - row0) * g->nx;
            for (uint32_t i = i0; i <= i1; i++) {
                const double px = g->xs[i];
                double t = len2 > 0.0 ? ((px - ax) * ex + (pz - az) * ez) / len2 : 0.0;
                double qx, qz;
                if (t <= 0.0) {
                    t = 0.0;
                    qx = ax;
                    qz = az;
                } else if (t >= 1.0) {
                    t = 1.0;
                    qx = ax + ex;
                    qz = az + ez;
                } else {
                    qx = ax + t * ex;
                    qz = az + t * ez;
                }
                const double d2 = (px - qx) * (px - qx) + (pz - qz) * (pz - qz);
                const size_t q = base + i;
                /* strict: the earliest segment wins ties */
                if (sc->stamp[q] != seen || d2 < sc->d2[q]) {
                    sc->stamp[q] = seen;
                    sc->d2[q] = d2;
                    sc->t[q] = t;
                    sc->seg[q] = s;
                }
            }
        }
    }
    for (uint32_t k = seg_lo; k < seg_hi; k++) {
        const uint32_t s = r->tile_segs[k];
        uint32_t j0, j1;
        segment_rows(g, r, s, &j0, &j1);
        if (j0 < row0) j0 = row0;
        if (j1 > row1) j1 = row1;
        for (uint32_t j = j0; j <= j1; j++) {
            uint32_t i0, i1;
            if (!segment_cols(g, r, s, j, &i0, &i1)) continue;
            const size_t base = (size_t)(j - row0) * g->nx;
            for (uint32_t i = i0; i <= i1; i++) {
                const size_t q = base + i;
                if (sc->stamp[q] != seen) continue;
                sc->stamp[q] = done;
                river_apply(c, r, mode, heights, i, j, sc->d2[q], sc->t[q], sc->seg[q], &l);
            }
        }
    }
    *tile_leak = l;
}

static trn_status river_pass(const resolve_ctx *c, const river_geom *r, enum river_mode mode,
                             float *heights, river_scratch *scratch, leak *total, trn_error *err)
{
    leak none = {0, SIZE_MAX};
    if (total) *total = none;
    if (r->box.empty) return TRN_OK;
    leak *tl = malloc((size_t)r->tiles * sizeof *tl);
    if (!tl) return oom(err);
    const long long tiles = (long long)r->tiles;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(c->threads) if (r->work >= PARALLEL_MIN)
#endif
    for (long long t = 0; t < tiles; t++)
        river_tile(c, r, (uint32_t)t, mode, heights, &scratch[THREAD_NUM()], &tl[t]);
    if (total)
        for (long long t = 0; t < tiles; t++)
            leak_merge(total, &tl[t]);
    free(tl);
    return TRN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * The whole resolution.
 * ------------------------------------------------------------------------------------------- */

static int team_size(const trn_water_resolve_options *options)
{
#ifdef _OPENMP
    /* Each thread holds a few MB of scratch: a request beyond 64 gets 64. */
    if (options && options->threads > 0) return options->threads < 64 ? options->threads : 64;
    const int t = omp_get_max_threads();
    return t < 64 ? t : 64;
#else
    (void)options;
    return 1;
#endif
}

typedef struct scratch_set {
    int threads;
    poly_scratch *poly;
    river_scratch *river;
    uint8_t **cols; /* a row of bytes per thread */
} scratch_set;

static void scratch_free(scratch_set *s)
{
    for (int t = 0; s->poly && t < s->threads; t++) {
        free(s->poly[t].edges);
        free(s->poly[t].cross);
        free(s->poly[t].near);
    }
    for (int t = 0; s->river && t < s->threads; t++) {
        free(s->river[t].d2);
        free(s->river[t].t);
        free(s->river[t].seg);
        free(s->river[t].stamp);
    }
    for (int t = 0; s->cols && t < s->threads; t++)
        free(s->cols[t]);
    free(s->poly);
    free(s->river);
    free(s->cols);
    memset(s, 0, sizeof *s);
}

static bool scratch_make(scratch_set *s, int threads, size_t nx, uint32_t max_boundary, bool rivers)
{
    memset(s, 0, sizeof *s);
    s->threads = threads;
    s->poly = calloc((size_t)threads, sizeof *s->poly);
    s->river = calloc((size_t)threads, sizeof *s->river);
    s->cols = calloc((size_t)threads, sizeof *s->cols);
    if (!s->poly || !s->river || !s->cols) return false;
    const size_t nb = max_boundary ? max_boundary : 1u;
    const size_t tile = rivers ? TILE_ROWS * nx : 1u;
    for (int t = 0; t < threads; t++) {
        s->poly[t].edges = malloc(nb * sizeof(uint32_t));
        s->poly[t].cross = malloc(nb * sizeof(double));
        s->poly[t].near = malloc(2 * nb * sizeof(double));
        s->river[t].d2 = malloc(tile * sizeof(double));
        s->river[t].t = malloc(tile * sizeof(double));
        s->river[t].seg = malloc(tile * sizeof(uint32_t));
        s->river[t].stamp = calloc(tile, sizeof(uint32_t));
        s->cols[t] = malloc(nx);
        if (!s->poly[t].edges || !s->poly[t].cross || !s->poly[t].near || !s->river[t].d2 ||
            !s->river[t].t || !s->river[t].seg || !s->river[t].stamp || !s->cols[t])
            return false;
    }
    return true;
}

/* The shortest text that reads back as v. */
static void shortest(char out[32], double v)
{
    /* At least the integer digits, or %g would write 20 as 2e+01. */
    const double mag = fabs(v);
    const int first = mag >= 1.0 && mag < 1e17 ? (int)floor(log10(mag)) + 1 : 1;
    for (int digits = first; digits <= 17; digits++) {
        snprintf(out, 32, "%.*g", digits, v);
        if (!isfinite(v) || strtod(out, NULL) == v) break;
    }
}

static void set_warning(trn_water_body *b, const grid_info *g, const leak *l, const char *text)
{
    b->warning_count = (uint32_t)(l->count > UINT32_MAX ? UINT32_MAX : l->count);
    if (!l->count) return;
    const size_t i = l->first % g->nx, j = l->first / g->nx;
    b->warning_x = g->xs[i];
    b->warning_z = g->zs[j];
    char xs[32], zs[32];
    shortest(xs, b->warning_x);
    shortest(zs, b->warning_z);
    snprintf(b->warning, sizeof b->warning, "%s at (%s, %s)", text, xs, zs);
}

/* Hundredths, rounded down: "a level <= X" stays true as printed. */
static double down_cent(double v)
{
    return floor(v * 100.0) / 100.0;
}

static const char *outlet_text(trn_spill_outlet o)
{
    return o == TRN_SPILL_LIMIT   ? "past the lake's radius or boundary"
           : o == TRN_SPILL_WATER ? "into other water"
                                  : "over the grid's edge";
}

/* Copy text into a warning buffer, cut to fit. */
static void put_text(char *dst, size_t size, const char *text)
{
    size_t n = strlen(text);
    if (n >= size) n = size - 1;
    memcpy(dst, text, n);
    dst[n] = '\0';
}

/* A spill lake holds no water: its centre is not below its spill level less the offset. */
static void set_spill_empty(trn_water_body *b, const grid_info *g, size_t centre)
{
    const double h = (double)g->h[centre];
    char cx[32], cz[32], px[32], pz[32];
    b->warning_count = 1;
    b->warning_x = g->xs[centre % g->nx];
    b->warning_z = g->zs[centre / g->nx];
    shortest(cx, b->warning_x);
    shortest(cz, b->warning_z);
    shortest(px, b->spill_x);
    shortest(pz, b->spill_z);
    char text[1024];
    if (!(b->spill_level > h))
        snprintf(text, sizeof text,
                 "level spill: the centre (%s, %s), ground %.2f m, is not in a closed basin: "
                 "water there runs off %s at (%s, %s) without rising; move the centre into a "
                 "hollow or give a fixed level",
                 cx, cz, h, outlet_text(b->spill_outlet), px, pz);
    else
        snprintf(text, sizeof text,
                 "level spill: the basin at the centre (%s, %s) is %.2f m deep (ground %.2f m, "
                 "spilling at %.2f m at (%s, %s)), no deeper than the spill offset %.2f m",
                 cx, cz, b->spill_level - h, h, b->spill_level, px, pz, b->spill_offset);
    put_text(b->warning, sizeof b->warning, text);
}

/* The fix for a leaking lake, appended to its warning; seed_height is the ground where it
 * floods from (a level at or below it would move the lake elsewhere). */
static void add_spill_fix(trn_water_body *b, double seed_height)
{
    char px[32], pz[32], more[512];
    shortest(px, b->spill_x);
    shortest(pz, b->spill_z);
    const double top = down_cent(b->spill_level);
    if (b->spill_level > seed_height)
        snprintf(more, sizeof more,
                 "; it would spill %s at %.2f m over (%s, %s): use level \"spill\" or a level "
                 "<= %.2f",
                 outlet_text(b->spill_outlet), b->spill_level, px, pz, top);
    else
        snprintf(more, sizeof more,
                 "; its water is in no closed basin inside the footprint (it runs off %s over "
                 "(%s, %s)): move the centre into a hollow, enlarge the footprint or sculpt a bank",
                 outlet_text(b->spill_outlet), px, pz);
    const size_t len = strlen(b->warning);
    put_text(b->warning + len, sizeof b->warning - len, more);
}

/* A spill lake's level on the current heights (its spill level less the offset); *seed gets
 * the centre's sample when it is below that level, else SIZE_MAX (an empty lake). */
static trn_status spill_lake_level(const resolve_ctx *c, trn_water_body *b, int32_t body,
                                   poly_scratch *ps, size_t *seed, size_t *centre, trn_error *err)
{
    const grid_info *g = &c->g;
    *centre = centre_sample(g, b);
    trn_status st = find_spill(c, b, body, *centre, ps, err);
    if (st != TRN_OK) return st;
    b->level = b->spill_level - b->spill_offset;
    *seed = (double)g->h[*centre] < b->level ? *centre : SIZE_MAX;
    return TRN_OK;
}

/* A dry sample next to (8 ways) wet samples is a shoreline corner of the first of their
 * owners. */
static void mark_corners(const resolve_ctx *c, uint8_t **cols)
{
    const grid_info *g = &c->g;
    trn_water *w = c->w;
    const long long rows = (long long)g->nz;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (g->samples >= PARALLEL_MIN)
#endif
    for (long long jl = 0; jl < rows; jl++) {
        const size_t j = (size_t)jl, nx = g->nx;
        /* col[i]: any wet sample in column i of rows j - 1..j + 1, so most samples cost one
         * look at three bytes. */
        uint8_t *col = cols[THREAD_NUM()];
        const uint8_t *mid = w->wet + j * nx;
        const uint8_t *up = j > 0 ? mid - nx : mid, *down = j + 1 < g->nz ? mid + nx : mid;
        for (size_t i = 0; i < nx; i++)
            col[i] = (uint8_t)(up[i] | mid[i] | down[i]);
        for (size_t i = 0; i < nx; i++) {
            if (!(col[i] | (i > 0 ? col[i - 1] : 0) | (i + 1 < nx ? col[i + 1] : 0))) continue;
            const size_t k = j * nx + i;
            if (w->owner[k] >= 0) continue;
            int32_t first = INT32_MAX;
            for (int dj = -1; dj <= 1; dj++) {
                if ((dj < 0 && j == 0) || (dj > 0 && j + 1 == g->nz)) continue;
                for (int di = -1; di <= 1; di++) {
                    if ((di < 0 && i == 0) || (di > 0 && i + 1 == nx)) continue;
                    const size_t m = (size_t)((long long)k + (long long)dj * (long long)nx + di);
                    if (w->wet[m] && w->owner[m] < first) first = w->owner[m];
                }
            }
            if (first == INT32_MAX) continue;
            w->owner[k] = first;
            /* The level; a follow-bed river replaces it in its finishing pass. */
            w->surface[k] = (float)w->bodies[first].level;
        }
    }
}

typedef struct row_stats {
    uint64_t wet;
    double volume, lo, hi;
} row_stats;

static void body_stats(const resolve_ctx *c, uint32_t body, row_stats *rows_out)
{
    const grid_info *g = &c->g;
    trn_water *w = c->w;
    trn_water_body *b = &w->bodies[body];
    const bbox *box = &c->boxes[body];
    b->wet_samples = 0;
    b->area = b->volume = b->min_surface = b->max_surface = 0.0;
    if (box->empty) return;
    const bool level = b->kind != TRN_WATER_RIVER || b->surface_mode == TRN_RIVER_SURFACE_LEVEL;
    const long long rows = (long long)box->j1 - box->j0 + 1;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(c->threads) if (box_parallel(box))
#endif
    for (long long jj = 0; jj < rows; jj++) {
        row_stats rs = {0, 0.0, INFINITY, -INFINITY};
        const size_t base = ((size_t)box->j0 + (size_t)jj) * g->nx;
        for (size_t i = box->i0; i <= box->i1; i++) {
            const size_t k = base + i;
            if (!w->wet[k] || w->owner[k] != (int32_t)body) continue;
            const double s = level ? b->level : (double)w->surface[k];
            rs.wet++;
            rs.volume += s - (double)g->h[k];
            rs.lo = fmin(rs.lo, s);
            rs.hi = fmax(rs.hi, s);
        }
        rows_out[jj] = rs;
    }
    double lo = INFINITY, hi = -INFINITY, vol = 0.0;
    for (long long jj = 0; jj < rows; jj++) {
        b->wet_samples += rows_out[jj].wet;
        vol += rows_out[jj].volume;
        lo = fmin(lo, rows_out[jj].lo);
        hi = fmax(hi, rows_out[jj].hi);
    }
    const double cell = g->step_x * g->step_z;
    b->area = (double)b->wet_samples * cell;
    b->volume = vol * cell;
    if (b->wet_samples) {
        b->min_surface = lo;
        b->max_surface = hi;
    }
}

static int cmp_body_id(const void *pa, const void *pb)
{
    const trn_water_body *a = *(const trn_water_body *const *)pa;
    const trn_water_body *b = *(const trn_water_body *const *)pb;
    const int c = strcmp(a->id, b->id);
    if (c) return c;
    return a < b ? -1 : a > b;
}

/* Body ids are keys (lookups, edits): the same id twice is refused, naming the later one. */
static trn_status unique_ids(const trn_water_body *bodies, uint32_t count, trn_error *err)
{
    if (count < 2) return TRN_OK;
    const trn_water_body **sorted = malloc((size_t)count * sizeof *sorted);
    if (!sorted) return oom(err);
    for (uint32_t b = 0; b < count; b++)
        sorted[b] = &bodies[b];
    qsort(sorted, count, sizeof *sorted, cmp_body_id);
    const trn_water_body *dup = NULL;
    for (uint32_t k = 1; k < count; k++)
        if (strcmp(sorted[k - 1]->id, sorted[k]->id) == 0 && (!dup || sorted[k] < dup))
            dup = sorted[k];
    free(sorted);
    if (!dup) return TRN_OK;
    return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                         "water body '%s': id: expected a unique id, found it again at body %u",
                         dup->id, (unsigned)(dup - bodies));
}

static bool spill_lake(const trn_water_body *b)
{
    return b->kind == TRN_WATER_LAKE && b->level_mode == TRN_LAKE_LEVEL_SPILL;
}

/* Resolve bodies (already copied, validated and sampled, owned by out) on grid g; carve into
 * heights first when it is not NULL. */
static trn_status resolve_core(resolve_ctx *c, float *heights, trn_error *err)
{
    trn_water *w = c->w;
    const grid_info *g = &c->g;
    const uint32_t count = w->body_count;
    uint32_t max_boundary = 0;
    bool rivers = false;
    for (uint32_t b = 0; b < count; b++) {
        const uint32_t nb = trn_water_boundary_count(&w->bodies[b]);
        if (w->bodies[b].kind != TRN_WATER_RIVER && nb > max_boundary) max_boundary = nb;
        if (w->bodies[b].kind == TRN_WATER_RIVER) rivers = true;
    }
    scratch_set sc;
    river_geom *geoms = calloc(count, sizeof *geoms);
    sample_list *leaks = calloc(count, sizeof *leaks);
    size_t *rows_leak = malloc(g->nz * sizeof *rows_leak);
    row_stats *rows_stats = malloc(g->nz * sizeof *rows_stats);
    c->boxes = calloc(count, sizeof *c->boxes);
    /* Per body: the sample its lake flooded from, a spill lake's centre sample, and whether a
     * spill lake holds no water. */
    size_t *seeds = malloc(count * sizeof *seeds);
    size_t *centres = calloc(count, sizeof *centres);
    uint8_t *empty = calloc(count, 1);
    trn_status st = TRN_OK;
    if (!scratch_make(&sc, c->threads, g->nx, max_boundary, rivers) || !geoms || !leaks ||
        !rows_leak || !rows_stats || !c->boxes || !seeds || !centres || !empty)
        st = oom(err);
    for (uint32_t b = 0; seeds && b < count; b++)
        seeds[b] = SIZE_MAX;
    for (uint32_t b = 0; b < count && st == TRN_OK; b++)
        if (w->bodies[b].kind == TRN_WATER_RIVER)
            st = river_geom_make(g, &w->bodies[b], (int32_t)b, &geoms[b], err);

    /* Carving, body after body on the ground the earlier ones left. */
    for (uint32_t b = 0; heights && b < count && st == TRN_OK; b++) {
        trn_water_body *body = &w->bodies[b];
        if (!body->carve) continue;
        if (body->kind == TRN_WATER_RIVER) {
            st = river_pass(c, &geoms[b], RIVER_CARVE, heights, sc.river, NULL, err);
        } else if (body->carve_depth > 0.0) {
            region r;
            size_t seed = SIZE_MAX, centre;
            if (spill_lake(body))
                st = spill_lake_level(c, body, (int32_t)b, sc.poly, &seed, &centre, err);
            if (st == TRN_OK && (!spill_lake(body) || seed != SIZE_MAX))
                st = body_region(c, body, body->level, seed, sc.poly, &r, NULL, err);
            else
                r.mask = NULL;
            if (st == TRN_OK && r.mask) st = carve_region(c, heights, &r, body->carve_depth, err);
            free(r.mask);
        }
        body->carve = false; /* carved now: the ground holds it */
    }

    /* Coverage in body order; earlier bodies keep their samples. */
    for (uint32_t b = 0; b < count && st == TRN_OK; b++) {
        trn_water_body *body = &w->bodies[b];
        if (body->kind == TRN_WATER_RIVER) {
            c->boxes[b] = geoms[b].box;
            st = river_pass(c, &geoms[b], RIVER_COVER, NULL, sc.river, NULL, err);
            continue;
        }
        region r;
        size_t seed = SIZE_MAX;
        if (spill_lake(body)) {
            st = spill_lake_level(c, body, (int32_t)b, sc.poly, &seed, &centres[b], err);
            if (st != TRN_OK) break;
            if (seed == SIZE_MAX) empty[b] = 1;
        }
        st = body_region(c, body, body->level, empty[b] ? centres[b] : seed, sc.poly, &r, &seeds[b],
                         err);
        c->boxes[b] = r.box;
        if (st == TRN_OK && r.mask) {
            claim_region(c, &r, (int32_t)b, (float)body->level);
            st = region_leaks(c, &r, (int32_t)b, body->level, rows_leak, &leaks[b], err);
        }
        free(r.mask);
    }
    if (st == TRN_OK) mark_corners(c, sc.cols);

    /* Corner surfaces of follow-bed rivers, river segments, warnings, statistics. */
    for (uint32_t b = 0; b < count && st == TRN_OK; b++) {
        trn_water_body *body = &w->bodies[b];
        leak l = {0, SIZE_MAX};
        if (body->kind == TRN_WATER_RIVER) {
            st = river_pass(c, &geoms[b], RIVER_FINISH, NULL, sc.river, &l, err);
            if (st == TRN_OK)
                set_warning(body, g, &l, "the river's surface reaches a dry side below it");
        } else {
            for (size_t k = 0; k < leaks[b].count; k++)
                if (!w->wet[leaks[b].items[k]]) leak_add(&l, leaks[b].items[k]);
            set_warning(body, g, &l, "wet ground reaches the boundary below the level");
            if (empty[b])
                set_spill_empty(body, g, centres[b]);
            else if (l.count && body->kind == TRN_WATER_LAKE && seeds[b] != SIZE_MAX &&
                     (st = find_spill(c, body, (int32_t)b, seeds[b], sc.poly, err)) == TRN_OK)
                add_spill_fix(body, (double)g->h[seeds[b]]);
        }
        if (st == TRN_OK) body_stats(c, b, rows_stats);
    }
    for (uint32_t b = 0; geoms && b < count; b++)
        river_geom_free(&geoms[b]);
    for (uint32_t b = 0; leaks && b < count; b++)
        free(leaks[b].items);
    free(leaks);
    free(geoms);
    free(rows_leak);
    free(rows_stats);
    free(seeds);
    free(centres);
    free(empty);
    free(c->boxes);
    c->boxes = NULL;
    scratch_free(&sc);
    return st;
}

static trn_status grid_make(grid_info *g, const trn_field *f, trn_error *err)
{
    memset(g, 0, sizeof *g);
    if (!f || !f->heights || f->cells_x == 0 || f->cells_z == 0 || !(f->size_x > 0.0) ||
        !(f->size_z > 0.0) || !isfinite(f->size_x) || !isfinite(f->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water: the ground needs heights, cells and a positive size");
    g->cells_x = f->cells_x;
    g->cells_z = f->cells_z;
    g->nx = (size_t)f->cells_x + 1u;
    g->nz = (size_t)f->cells_z + 1u;
    if (!trn_mul_size(g->nx, g->nz, &g->samples) || g->samples > SIZE_MAX / 8u ||
        g->nx > SIZE_MAX / (TILE_ROWS * 8u))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "water: grid too large");
    g->size_x = f->size_x;
    g->size_z = f->size_z;
    g->step_x = f->size_x / (double)f->cells_x;
    g->step_z = f->size_z / (double)f->cells_z;
    g->h = f->heights;
    g->xs = malloc(g->nx * sizeof *g->xs);
    g->zs = malloc(g->nz * sizeof *g->zs);
    if (!g->xs || !g->zs) {
        free(g->xs);
        free(g->zs);
        return oom(err);
    }
    for (uint32_t i = 0; i <= f->cells_x; i++)
        g->xs[i] = trn_water_sample_pos(i, f->cells_x, f->size_x);
    for (uint32_t j = 0; j <= f->cells_z; j++)
        g->zs[j] = trn_water_sample_pos(j, f->cells_z, f->size_z);
    return TRN_OK;
}

static void grid_free(grid_info *g)
{
    free(g->xs);
    free(g->zs);
}

/* Copies, validates and samples the bodies into w and allocates its per-sample arrays. */
static trn_status prepare(trn_water *w, const grid_info *g, int threads,
                          const trn_water_body *bodies, uint32_t count, trn_error *err)
{
    w->cells_x = g->cells_x;
    w->cells_z = g->cells_z;
    w->size_x = g->size_x;
    w->size_z = g->size_z;
    if (count == 0) return TRN_OK;
    if (!bodies)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "water: NULL bodies");
    for (uint32_t b = 0; b < count; b++) {
        trn_status st = trn_water_body_validate(&bodies[b], NULL, err);
        if (st != TRN_OK) return st;
    }
    trn_status st = unique_ids(bodies, count, err);
    if (st != TRN_OK) return st;
    w->bodies = calloc(count, sizeof *w->bodies);
    if (!w->bodies) return oom(err);
    while (w->body_count < count) {
        trn_water_body *b = &w->bodies[w->body_count];
        st = trn_water_body_copy(&bodies[w->body_count], b, err);
        if (st != TRN_OK) return st;
        w->body_count++; /* owned from here: disposed with w on failure */
        b->wet_samples = 0;
        b->area = b->volume = b->min_surface = b->max_surface = 0.0;
        b->warning_count = 0;
        b->warning[0] = '\0';
        b->warning_x = b->warning_z = 0.0;
        b->spill_level = NAN;
        b->spill_x = b->spill_z = 0.0;
        b->spill_outlet = TRN_SPILL_NONE;
        if (b->kind == TRN_WATER_RIVER && (!b->path || b->path_count < 2)) {
            st = trn_water_body_sample_path(b, err);
            if (st != TRN_OK) return st;
        }
    }
    w->owner = big_alloc(g->samples * sizeof *w->owner);
    w->wet = big_alloc(g->samples);
    w->surface = big_alloc(g->samples * sizeof *w->surface);
    w->segment = big_alloc(g->samples * sizeof *w->segment);
    if (!w->owner || !w->wet || !w->surface || !w->segment) return oom(err);
    /* First touch on every thread: the pages fault in parallel. */
    const long long rows = (long long)g->nz;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads) if (g->samples >= PARALLEL_MIN)
#endif
    for (long long j = 0; j < rows; j++) {
        const size_t base = (size_t)j * g->nx;
        memset(w->wet + base, 0, g->nx);
        memset(w->segment + base, 0, g->nx * sizeof *w->segment);
        for (size_t i = 0; i < g->nx; i++) {
            w->owner[base + i] = -1;
            w->surface[base + i] = NAN;
        }
    }
#ifndef _OPENMP
    (void)threads;
#endif
    return TRN_OK;
}

static trn_status run(const trn_field *ground, float *carve_heights, const trn_water_body *bodies,
                      uint32_t count, const trn_water_resolve_options *options, trn_water *out,
                      trn_error *err)
{
    resolve_ctx c;
    memset(&c, 0, sizeof c);
    trn_status st = grid_make(&c.g, ground, err);
    if (st != TRN_OK) return st;
    c.threads = team_size(options);
    trn_water w;
    memset(&w, 0, sizeof w);
    c.w = &w;
    st = prepare(&w, &c.g, c.threads, bodies, count, err);
    if (st == TRN_OK && count) st = resolve_core(&c, carve_heights, err);
    grid_free(&c.g);
    if (st != TRN_OK) {
        trn_water_dispose(&w);
        return st;
    }
    w.ground_hash = trn_water_ground_hash(ground);
    if (!trn_water_index_wet(&w)) {
        trn_water_dispose(&w);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water: out of memory");
    }
    *out = w;
    return TRN_OK;
}

trn_status trn_water_resolve(trn_field *ground, const trn_water_body *bodies, uint32_t count,
                             const trn_water_resolve_options *options, trn_water *out,
                             trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "water resolve: NULL out");
    memset(out, 0, sizeof *out);
    return run(ground, ground ? ground->heights : NULL, bodies, count, options, out, err);
}

trn_status trn_water_refresh(const trn_water *water, const trn_field *ground,
                             const trn_water_resolve_options *options, trn_water *out,
                             trn_error *err)
{
    if (!water || !ground || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water refresh: NULL water, ground or out");
    if (water->cells_x != ground->cells_x || water->cells_z != ground->cells_z ||
        water->size_x != ground->size_x || water->size_z != ground->size_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "water refresh: the water's grid (%u x %u cells over %.9g x %.9g) "
                             "differs from the ground's (%u x %u cells over %.9g x %.9g)",
                             water->cells_x, water->cells_z, water->size_x, water->size_z,
                             ground->cells_x, ground->cells_z, ground->size_x, ground->size_z);
    trn_water tmp;
    memset(&tmp, 0, sizeof tmp);
    trn_status st = run(ground, NULL, water->bodies, water->body_count, options, &tmp, err);
    if (st != TRN_OK) return st;
    for (uint32_t b = 0; b < tmp.body_count; b++)
        tmp.bodies[b].carve = false;
    if (out == water) trn_water_dispose(out);
    *out = tmp;
    return TRN_OK;
}
