/* Breaching over tiles: trn_drainage_breach's heights from a tiled drainage, one tile at a time. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen/d8.h"
#include "terrane/drainage_tiled.h"

/* Breaching sets h[r] = h[r] < h[k] ? h[r] : nextafterf(h[k], -inf) for every donor k of r,
 * donors first. On the totally ordered integer key of a float (both zeros 0, the next float
 * down one less) that is key(r) = min(key(r), key(k) - 1), so a sample's final key is the
 * least of its own and, over every sample upstream of it at d steps, that sample's key - d:
 * a minimum along the flow tree, which any order that takes donors first gives, and which
 * crosses a tile edge as a value and a distance (the shape of Barnes 2017's accumulation).
 * The only bits a key does not fix are a zero's sign: -0 stays only where the sample's own
 * height was -0 and nothing upstream came lower, which the same rule keeps. */

static int64_t fkey(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return (u & 0x80000000u) ? -(int64_t)(u & 0x7fffffffu) : (int64_t)u;
}

static float fval(int64_t k)
{
    const uint32_t u = k >= 0 ? (uint32_t)k : 0x80000000u | (uint32_t)(-k);
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* nextafterf(x, -inf) d times (-inf stays). */
static float below(float x, uint64_t d)
{
    const int64_t floor_key = fkey(-INFINITY), k = fkey(x);
    return k - floor_key <= (int64_t)(d > (uint64_t)INT64_MAX ? INT64_MAX : d)
               ? -INFINITY
               : fval(k - (int64_t)d);
}

/* The breach rule: r's height after its donor k (final at kh). */
static float take(float r, float kh)
{
    return r < kh ? r : nextafterf(kh, -INFINITY);
}

typedef struct bt_grid {
    const trn_drainage_tiles *tiles;
    size_t count, tiles_x;
    uint32_t tw, th; /* the first tile's size: every tile's but the last row's and column's */
    size_t nx, nz;
} bt_grid;

typedef struct bt_tile {
    uint32_t i0, j0, w, h;
    const uint8_t *dir;
    const uint32_t *acc;
} bt_tile;

static bt_tile tile_of(const bt_grid *g, size_t t)
{
    bt_tile o;
    const float *filled;
    trn_drainage_tiles_tile(g->tiles, t, &o.i0, &o.j0, &o.w, &o.h, &filled, &o.dir, &o.acc);
    return o;
}

static size_t tile_index(const bt_grid *g, size_t i, size_t j)
{
    return (j / g->th) * g->tiles_x + i / g->tw;
}

/* An exit: a sample whose receiver lies in another tile. */
typedef struct bt_exit {
    uint64_t at;  /* j * nx + i */
    uint32_t acc; /* its accumulation: donors' are less */
    float v;      /* its height: the tile's own upstream first, then every inflow */
} bt_exit;

/* An inflow: the final height of a donor in another tile, into sample local of tile. */
typedef struct bt_in {
    size_t tile;
    uint32_t local;
    float v;
} bt_in;

static int exit_by_at(const void *a, const void *b)
{
    const uint64_t x = ((const bt_exit *)a)->at, y = ((const bt_exit *)b)->at;
    return (x > y) - (x < y);
}

/* An exit's place in the order the exits are taken: donors (lower accumulation) first. */
typedef struct bt_order {
    uint32_t acc;
    uint64_t at;
} bt_order;

static int order_cmp(const void *a, const void *b)
{
    const bt_order *x = a, *y = b;
    if (x->acc != y->acc) return x->acc < y->acc ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

static int in_by_tile(const void *a, const void *b)
{
    const bt_in *x = a, *y = b;
    if (x->tile != y->tile) return x->tile < y->tile ? -1 : 1;
    return (x->local > y->local) - (x->local < y->local);
}

/* Breach heights h (the tile's input heights in, its breached heights out) along the tile's
 * directions, donors first, after the inflows ins[0..nin) of this tile. indeg and stack hold
 * w * h each. */
static void breach_tile(const bt_tile *t, float *h, const bt_in *ins, size_t nin, uint8_t *indeg,
                        uint32_t *stack)
{
    const size_t w = t->w, n = (size_t)t->w * t->h;
    for (size_t q = 0; q < nin; q++)
        h[ins[q].local] = take(h[ins[q].local], ins[q].v);
    memset(indeg, 0, n);
    for (size_t k = 0; k < n; k++) {
        const uint8_t c = t->dir[k];
        if (c >= 8) continue;
        const int64_t i = (int64_t)(k % w) + TRN_D8_DI[c], j = (int64_t)(k / w) + TRN_D8_DJ[c];
        if (i < 0 || j < 0 || i >= (int64_t)t->w || j >= (int64_t)t->h) continue;
        indeg[(size_t)j * w + (size_t)i]++;
    }
    size_t top = 0;
    for (size_t k = 0; k < n; k++)
        if (!indeg[k]) stack[top++] = (uint32_t)k;
    while (top) {
        const size_t k = stack[--top];
        const uint8_t c = t->dir[k];
        if (c >= 8) continue;
        const int64_t i = (int64_t)(k % w) + TRN_D8_DI[c], j = (int64_t)(k / w) + TRN_D8_DJ[c];
        if (i < 0 || j < 0 || i >= (int64_t)t->w || j >= (int64_t)t->h) continue;
        const size_t r = (size_t)j * w + (size_t)i;
        h[r] = take(h[r], h[k]);
        if (!--indeg[r]) stack[top++] = (uint32_t)r;
    }
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "tiled breach: out of memory");
}

/* The grid of tiles' layout into *g; returns the most samples of a tile this process holds.
 * *other (may be NULL): the first tile another process holds (g->count: none). */
static size_t grid_of(const trn_drainage_tiles *tiles, bt_grid *g, size_t *other)
{
    trn_drainage_tiled_stats s;
    trn_drainage_tiles_stats(tiles, &s);
    *g = (bt_grid){tiles, s.tiles, 0, 0, 0, 0, 0};
    size_t most = 0;
    if (other) *other = g->count;
    for (size_t t = 0; t < g->count; t++) {
        const bt_tile b = tile_of(g, t);
        const bool own = b.dir && b.acc;
        if (!own && other && *other == g->count) *other = t;
        if (b.j0 == 0) g->tiles_x++;
        if (b.i0 + (size_t)b.w > g->nx) g->nx = b.i0 + (size_t)b.w;
        if (b.j0 + (size_t)b.h > g->nz) g->nz = b.j0 + (size_t)b.h;
        if (own && (size_t)b.w * b.h > most) most = (size_t)b.w * b.h;
        if (t == 0) {
            g->tw = b.w;
            g->th = b.h;
        }
    }
    return most;
}

trn_status trn_drainage_tiles_breach(const trn_drainage_tiles *tiles, trn_tile_heights_fn heights,
                                     void *user, trn_tile_values_fn emit, void *emit_user,
                                     trn_error *err)
{
    if (!tiles || !heights || !emit)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled breach: expected tiles, a height source and a sink, "
                             "found NULL");
    bt_grid g;
    size_t other = 0;
    const size_t most = grid_of(tiles, &g, &other);
    if (other < g.count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled breach: tile %zu belongs to another process (breaching "
                             "needs every tile on one)",
                             other);
    if (!g.count) return TRN_OK;
    float *h = malloc(most * sizeof *h);
    uint8_t *indeg = malloc(most);
    uint32_t *stack = malloc(most * sizeof *stack);
    bt_exit *exits = NULL;
    bt_in *ins = NULL;
    bt_order *order = NULL;
    size_t ne = 0, cap = 0, nin = 0;
    trn_status st = TRN_OK;
    if (!h || !indeg || !stack) st = oom(err);
    /* 1. Each tile alone: its exits' heights from its own upstream. */
    for (size_t t = 0; t < g.count && !st; t++) {
        const bt_tile b = tile_of(&g, t);
        if ((st = heights(user, b.i0, b.j0, b.w, b.h, h, err))) break;
        breach_tile(&b, h, NULL, 0, indeg, stack);
        for (size_t k = 0; k < (size_t)b.w * b.h; k++) {
            const uint8_t c = b.dir[k];
            if (c >= 8) continue;
            const int64_t i = (int64_t)(k % b.w) + TRN_D8_DI[c];
            const int64_t j = (int64_t)(k / b.w) + TRN_D8_DJ[c];
            if (i >= 0 && j >= 0 && i < (int64_t)b.w && j < (int64_t)b.h) continue;
            if (ne == cap) {
                cap = cap ? cap * 2 : 1024;
                bt_exit *p = realloc(exits, cap * sizeof *p);
                if (!p) {
                    st = oom(err);
                    break;
                }
                exits = p;
            }
            exits[ne++] = (bt_exit){(b.j0 + k / b.w) * g.nx + b.i0 + k % b.w, b.acc[k], h[k]};
        }
    }
    /* 2. The exits in order of accumulation (donors first): each one's final height flows
     * into its receiver's tile and on to that tile's exit it reaches, steps lower each step. */
    if (!st && ne) {
        qsort(exits, ne, sizeof *exits, exit_by_at);
        if (!(order = malloc(ne * sizeof *order)) || !(ins = malloc(ne * sizeof *ins)))
            st = oom(err);
    }
    if (!st && ne) {
        for (size_t q = 0; q < ne; q++)
            order[q] = (bt_order){exits[q].acc, exits[q].at};
        qsort(order, ne, sizeof *order, order_cmp);
        for (size_t q = 0; q < ne; q++) {
            const bt_exit probe = {order[q].at, 0, 0.0f};
            const bt_exit *e = bsearch(&probe, exits, ne, sizeof *exits, exit_by_at);
            const size_t ei = (size_t)(e->at % g.nx), ej = (size_t)(e->at / g.nx);
            const bt_tile from = tile_of(&g, tile_index(&g, ei, ej));
            const uint8_t c = from.dir[(ej - from.j0) * from.w + (ei - from.i0)];
            const size_t ri = (size_t)((int64_t)ei + TRN_D8_DI[c]);
            const size_t rj = (size_t)((int64_t)ej + TRN_D8_DJ[c]);
            const size_t rt = tile_index(&g, ri, rj);
            const bt_tile to = tile_of(&g, rt);
            size_t li = ri - to.i0, lj = rj - to.j0;
            ins[nin++] = (bt_in){rt, (uint32_t)(lj * to.w + li), e->v};
            /* Along the receiver's path in its tile, one step lower a sample. */
            for (uint64_t d = 1;; d++) {
                const uint8_t cc = to.dir[lj * to.w + li];
                if (cc >= 8) break; /* an outlet: nothing further */
                const int64_t ni = (int64_t)li + TRN_D8_DI[cc], nj = (int64_t)lj + TRN_D8_DJ[cc];
                if (ni < 0 || nj < 0 || ni >= (int64_t)to.w || nj >= (int64_t)to.h) {
                    const bt_exit key = {(to.j0 + lj) * g.nx + to.i0 + li, 0, 0.0f};
                    bt_exit *x = bsearch(&key, exits, ne, sizeof *exits, exit_by_at);
                    if (x && fkey(below(e->v, d)) < fkey(x->v)) x->v = below(e->v, d);
                    break;
                }
                li = (size_t)ni;
                lj = (size_t)nj;
            }
        }
        qsort(ins, nin, sizeof *ins, in_by_tile);
    }
    /* 3. Each tile again with its inflows: the final heights. */
    size_t at = 0;
    for (size_t t = 0; t < g.count && !st; t++) {
        const bt_tile b = tile_of(&g, t);
        const size_t first = at;
        while (at < nin && ins[at].tile == t)
            at++;
        if ((st = heights(user, b.i0, b.j0, b.w, b.h, h, err))) break;
        breach_tile(&b, h, ins + first, at - first, indeg, stack);
        st = emit(emit_user, b.i0, b.j0, b.w, b.h, h, err);
    }
    free(h);
    free(indeg);
    free(stack);
    free(exits);
    free(ins);
    free(order);
    return st;
}

/* ---- the same split across processes: each its own tiles, the exits solved on process 0 ---- */

/* An exit as every process sees it (fixed-width fields: the bytes go between processes). */
typedef struct bs_exit {
    uint64_t at;  /* j * nx + i */
    uint64_t rcv; /* its receiver, in another tile (maybe another process's) */
    uint32_t acc;
    float v; /* its height from its own tile's upstream */
} bs_exit;

/* Where an exit's receiver's path in its tile leads: to exit next (UINT64_MAX: an outlet)
 * after d steps past the receiver; worked out by the receiver's tile's process. */
typedef struct bs_link {
    uint64_t at, next, d;
} bs_link;

static int bs_by_at(const void *a, const void *b)
{
    const uint64_t x = ((const bs_exit *)a)->at, y = ((const bs_exit *)b)->at;
    return (x > y) - (x < y);
}

static int link_by_at(const void *a, const void *b)
{
    const uint64_t x = ((const bs_link *)a)->at, y = ((const bs_link *)b)->at;
    return (x > y) - (x < y);
}

/* Grow *p (held *cap, used n) to hold one more of size bytes. */
static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap) return true;
    const size_t c = *cap ? *cap * 2 : 1024;
    void *q = realloc(*p, c * size);
    if (!q) return false;
    *p = q;
    *cap = c;
    return true;
}

trn_status trn_drainage_tiles_breach_split(const trn_drainage_tiles *tiles, trn_comm *comm,
                                           trn_tile_heights_fn heights, void *user,
                                           trn_tile_values_fn emit, void *emit_user, trn_error *err)
{
    if (!tiles || !comm || !heights || !emit)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled breach: expected tiles, processes, a height source and a "
                             "sink, found NULL");
    bt_grid g;
    const size_t most = grid_of(tiles, &g, NULL);
    float *h = most ? malloc(most * sizeof *h) : NULL;
    uint8_t *indeg = most ? malloc(most) : NULL;
    uint32_t *stack = most ? malloc(most * sizeof *stack) : NULL;
    bs_exit *mine = NULL, *all = NULL;
    bs_link *links = NULL, *every = NULL;
    bt_order *order = NULL;
    bt_in *ins = NULL;
    float *finals = NULL;
    uint64_t *counts = NULL;
    size_t nmine = 0, cap = 0, nlinks = 0, lcap = 0, ne = 0, nin = 0;
    trn_status st = TRN_OK;
    if (most && (!h || !indeg || !stack)) st = oom(err);
    /* 1. Each own tile alone: its exits' heights from its own upstream. */
    for (size_t t = 0; t < g.count && !st; t++) {
        const bt_tile b = tile_of(&g, t);
        if (!b.dir) continue; /* another process's */
        if ((st = heights(user, b.i0, b.j0, b.w, b.h, h, err))) break;
        breach_tile(&b, h, NULL, 0, indeg, stack);
        for (size_t k = 0; k < (size_t)b.w * b.h; k++) {
            const uint8_t c = b.dir[k];
            if (c >= 8) continue;
            const int64_t i = (int64_t)(k % b.w) + TRN_D8_DI[c];
            const int64_t j = (int64_t)(k / b.w) + TRN_D8_DJ[c];
            if (i >= 0 && j >= 0 && i < (int64_t)b.w && j < (int64_t)b.h) continue;
            if (!grow((void **)&mine, &cap, nmine, sizeof *mine)) {
                st = oom(err);
                break;
            }
            mine[nmine++] =
                (bs_exit){(b.j0 + k / b.w) * g.nx + b.i0 + k % b.w,
                          (uint64_t)((int64_t)b.j0 + j) * g.nx + (uint64_t)((int64_t)b.i0 + i),
                          b.acc[k], h[k]};
        }
    }
    /* 2. Every exit to every process; each follows the receivers in its own tiles. */
    void *got = NULL;
    st = trn_comm_agree(comm, st, err);
    if (!st) st = trn_comm_allgather(comm, mine, nmine * sizeof *mine, &got, &counts, err);
    all = got;
    if (!st) {
        for (int p = 0; p < trn_comm_size(comm); p++)
            ne += counts[p] / sizeof *all;
        qsort(all, ne, sizeof *all, bs_by_at);
    }
    for (size_t q = 0; q < ne && !st; q++) {
        const size_t ri = (size_t)(all[q].rcv % g.nx), rj = (size_t)(all[q].rcv / g.nx);
        const bt_tile to = tile_of(&g, tile_index(&g, ri, rj));
        if (!to.dir) continue;
        size_t li = ri - to.i0, lj = rj - to.j0;
        bs_link l = {all[q].at, UINT64_MAX, 0};
        for (uint64_t d = 1;; d++) {
            const uint8_t cc = to.dir[lj * to.w + li];
            if (cc >= 8) break; /* an outlet: nothing further */
            const int64_t ni = (int64_t)li + TRN_D8_DI[cc], nj = (int64_t)lj + TRN_D8_DJ[cc];
            if (ni < 0 || nj < 0 || ni >= (int64_t)to.w || nj >= (int64_t)to.h) {
                l.next = (to.j0 + lj) * g.nx + to.i0 + li;
                l.d = d;
                break;
            }
            li = (size_t)ni;
            lj = (size_t)nj;
        }
        if (!grow((void **)&links, &lcap, nlinks, sizeof *links)) {
            st = oom(err);
            break;
        }
        links[nlinks++] = l;
    }
    free(counts);
    counts = NULL;
    /* 3. On process 0: the exits in order of accumulation (donors first), each one's final
     * height passed to the exit its receiver's path reaches, one float lower a step. */
    st = trn_comm_agree(comm, st, err);
    got = NULL;
    if (!st) st = trn_comm_gather(comm, links, nlinks * sizeof *links, &got, &counts, err);
    every = got;
    uint64_t fbytes = (uint64_t)ne * sizeof *finals;
    if (!st && trn_comm_rank(comm) == 0) {
        uint64_t got_links = 0;
        for (int p = 0; p < trn_comm_size(comm); p++)
            got_links += counts[p] / sizeof *every;
        if (got_links != ne)
            st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                               "tiled breach: %llu receivers followed for %zu exits",
                               (unsigned long long)got_links, ne);
        if (!st && ne && (!(order = malloc(ne * sizeof *order)) || !(finals = malloc(fbytes))))
            st = oom(err);
        if (!st && ne) {
            /* Each exit's receiver is in exactly one tile, so there is one link an exit. */
            qsort(every, ne, sizeof *every, link_by_at);
            for (size_t q = 0; q < ne; q++) {
                order[q] = (bt_order){all[q].acc, all[q].at};
                finals[q] = all[q].v;
            }
            qsort(order, ne, sizeof *order, order_cmp);
            for (size_t q = 0; q < ne; q++) {
                const bs_exit probe = {order[q].at, 0, 0, 0.0f};
                const size_t e =
                    (size_t)((const bs_exit *)bsearch(&probe, all, ne, sizeof *all, bs_by_at) -
                             all);
                const bs_link *l = &every[e];
                if (l->next == UINT64_MAX) continue;
                const bs_exit key = {l->next, 0, 0, 0.0f};
                const bs_exit *x = bsearch(&key, all, ne, sizeof *all, bs_by_at);
                if (!x) continue;
                const size_t xi = (size_t)(x - all);
                const float down = below(finals[e], l->d);
                if (fkey(down) < fkey(finals[xi])) finals[xi] = down;
            }
        }
    }
    /* 4. The final heights back to every process; each breaches its tiles again with its
     * inflows. */
    st = trn_comm_agree(comm, st, err);
    if (!st) {
        void *f = finals;
        st = trn_comm_broadcast(comm, &f, &fbytes, err);
        finals = f;
    }
    if (!st && fbytes != (uint64_t)ne * sizeof *finals)
        st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                           "tiled breach: %llu bytes of exit heights for %zu exits",
                           (unsigned long long)fbytes, ne);
    if (!st && ne && !(ins = malloc(ne * sizeof *ins))) st = oom(err);
    for (size_t q = 0; q < ne && !st; q++) {
        const size_t ri = (size_t)(all[q].rcv % g.nx), rj = (size_t)(all[q].rcv / g.nx);
        const size_t rt = tile_index(&g, ri, rj);
        const bt_tile to = tile_of(&g, rt);
        if (!to.dir) continue;
        ins[nin++] = (bt_in){rt, (uint32_t)((rj - to.j0) * to.w + (ri - to.i0)), finals[q]};
    }
    if (!st && nin) qsort(ins, nin, sizeof *ins, in_by_tile);
    size_t at = 0;
    for (size_t t = 0; t < g.count && !st; t++) {
        const bt_tile b = tile_of(&g, t);
        const size_t first = at;
        while (at < nin && ins[at].tile == t)
            at++;
        if (!b.dir) continue;
        if ((st = heights(user, b.i0, b.j0, b.w, b.h, h, err))) break;
        breach_tile(&b, h, ins + first, at - first, indeg, stack);
        st = emit(emit_user, b.i0, b.j0, b.w, b.h, h, err);
    }
    free(h);
    free(indeg);
    free(stack);
    free(mine);
    free(all);
    free(links);
    free(every);
    free(order);
    free(ins);
    free(finals);
    free(counts);
    return trn_comm_agree(comm, st, err);
}
