/* Drainage: depression filling by watersheds of the descent graph, D8 directions, accumulation. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) on Linux */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/checked.h"
#include "core/huge_alloc.h"
#include "core/kernel.h"
#include "core/progress.h"
#include "core/rows.h"
#include "terrane/drainage.h"
#include "gen/d8.h"
#include "gen/d8_rules.h"
#include "gen/drainage_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif
/* Built with -DDR_TIMES, each pass prints the CPU seconds it took to stderr (one thread: the
 * per-pass figures of bench/RESULTS.md). */
#ifdef DR_TIMES
#include <time.h>
static double dr_t0;
static double dr_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#define TICK(name)                                                                                 \
    do {                                                                                           \
        double _t = dr_now();                                                                      \
        fprintf(stderr, "%-10s %.4f\n", name, _t - dr_t0);                                         \
        dr_t0 = dr_now();                                                                          \
    } while (0)
#else
#define TICK(name)                                                                                 \
    do {                                                                                           \
    } while (0)
#endif

/* During the fill a sample's flow_dir holds its receiver: the code of its lowest neighbour when
 * one is strictly lower; else of a neighbour of the same height that comes before it in index
 * order (W, NW, N or NE), so receivers never form a cycle; else DR_PIT. Outlets hold
 * TRN_DRAIN_OUTLET throughout. DR_LABELLED: the sample's label is known (outlets from the
 * start), so a descent being followed stops there having read one byte. DR_PENDING: the
 * sample's descent leaves its strip of rows, and its label is for now the index of the first
 * sample outside. The flags are cleared as the fill raises the samples. */
#define DR_CODE 0x0Fu
#define DR_PIT 9u
#define DR_PENDING 0x40u
#define DR_LABELLED 0x80u
/* During the accumulation a direction byte's high half counts the inflows still to come; all
 * set (DR_DONE) marks a sample whose accumulation is final. */
#define DR_INDEG_ONE 0x10u
#define DR_DONE 0xF0u
/* Output arrays at least this large are 2 MiB aligned and marked for transparent huge pages. */
#define DR_HUGE_PAGE ((size_t)2u << 20)

/* ---- working memory, tracked so the peak can be reported ---- */

typedef struct dr_fifo {
    uint32_t *items;
    size_t head, count, capacity; /* capacity is a power of two */
} dr_fifo;

/* A raised region found by the scan after the fill; regions that touch are merged. */
typedef struct dr_comp {
    uint32_t parent; /* union-find link; a root points to itself; roots are the smallest id */
    uint32_t sink;   /* lowest input sample seen (ties: smallest index) */
    uint32_t spill;  /* smallest index of an unraised neighbour at the spill level */
    uint64_t area;
} dr_comp;

/* A closed basin as a set of watershed labels (see solve_labels): the union-find link (roots are
 * the smallest label), the lowest pit, the smallest spill index, the raised samples. */
typedef struct dr_lcomp {
    uint32_t parent, sink, spill, area;
} dr_lcomp;

static uint32_t lcomp_find(dr_lcomp *comps, uint32_t k)
{
    while (comps[k].parent != k) {
        comps[k].parent = comps[comps[k].parent].parent;
        k = comps[k].parent;
    }
    return k;
}

/* Spill levels between watershed labels: an open-addressing map from the pair (a < b, packed
 * as a << 32 | b) to the lowest level at which the two touch, behind a small direct-mapped
 * write-back cache (memo): the samples along a watershed's edge meet the same few pairs row
 * after row, and the map (megabytes on 4096^2 terrain) is touched only when a pair leaves the
 * cache. */
#ifndef DR_MEMO_BITS
#define DR_MEMO_BITS 10
#endif
typedef struct dr_memo {
    uint64_t key; /* 0 where empty (a < b, so no pair packs to 0) */
    float w;
} dr_memo;

typedef struct dr_edges {
    uint64_t *key; /* DR_NO_KEY where empty */
    float *w;
    size_t count, capacity; /* capacity: a power of two */
    dr_memo memo[1u << DR_MEMO_BITS];
} dr_edges;

#define DR_NO_KEY UINT64_MAX

static bool edges_grow(dr_edges *e)
{
    const size_t cap = e->capacity ? e->capacity * 2 : 4096;
    uint64_t *key = malloc(cap * sizeof *key);
    float *w = malloc(cap * sizeof *w);
    if (!key || !w) {
        free(key);
        free(w);
        return false;
    }
    for (size_t k = 0; k < cap; k++)
        key[k] = DR_NO_KEY;
    for (size_t k = 0; k < e->capacity; k++) {
        if (e->key[k] == DR_NO_KEY) continue;
        size_t at = (size_t)((e->key[k] * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
        while (key[at] != DR_NO_KEY)
            at = (at + 1) & (cap - 1);
        key[at] = e->key[k];
        w[at] = e->w[k];
    }
    free(e->key);
    free(e->w);
    e->key = key;
    e->w = w;
    e->capacity = cap;
    return true;
}

static bool edges_insert(dr_edges *e, uint64_t k, float w);

/* Adds the pair (a, b) at level w, keeping the lower level where it is known. */
static inline bool edges_add(dr_edges *e, uint32_t a, uint32_t b, float w)
{
    const uint64_t k = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    dr_memo *m = &e->memo[(k * 0x9E3779B97F4A7C15ull) >> (64 - DR_MEMO_BITS)];
    if (m->key == k) {
        if (w < m->w) m->w = w;
        return true;
    }
    if (m->key && !edges_insert(e, m->key, m->w)) return false;
    m->key = k;
    m->w = w;
    return true;
}

/* Every pair still in the cache into the map. */
static bool edges_flush(dr_edges *e)
{
    for (size_t q = 0; q < (1u << DR_MEMO_BITS); q++) {
        if (e->memo[q].key && !edges_insert(e, e->memo[q].key, e->memo[q].w)) return false;
        e->memo[q].key = 0;
    }
    return true;
}

static bool edges_insert(dr_edges *e, uint64_t k, float w)
{
    if (2 * (e->count + 1) > e->capacity && !edges_grow(e)) return false;
    size_t at = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (e->capacity - 1);
    while (e->key[at] != DR_NO_KEY && e->key[at] != k)
        at = (at + 1) & (e->capacity - 1);
    if (e->key[at] == k) {
        if (w < e->w[at]) e->w[at] = w;
        return true;
    }
    e->key[at] = k;
    e->w[at] = w;
    e->count++;
    return true;
}

typedef struct dr_state {
    size_t nx, nz, n;
    const float *h;
    float *filled;
    uint8_t *dir;
    uint32_t *acc; /* during the fill: the watershed label of each sample */
    uint32_t *pit; /* during the fill: each label's pit (the sample its descents end at) */
    ptrdiff_t off[8];
    dr_fifo trace; /* the flat distances' breadth-first queue */
    size_t temp_now, temp_peak;
    trn_progress progress;
} dr_state;

/* Output arrays are large and some passes (the accumulation's walks, the breadth-first flat
 * distances) use them at random: huge pages spare most TLB misses. free() releases the block. */
static void *big_alloc(size_t bytes)
{
    return trn_huge_alloc(bytes, 4 * DR_HUGE_PAGE);
}

static void temp_change(dr_state *s, size_t old_bytes, size_t new_bytes)
{
    s->temp_now = s->temp_now - old_bytes + new_bytes;
    if (s->temp_now > s->temp_peak) s->temp_peak = s->temp_now;
}

/* The larger of two heights (never NaN here); inlined, where fmaxf is a call. Of two zeros
 * either may come back: levels are only compared, and a raised sample's level gets + 0. */
static inline float dr_max(float a, float b)
{
    return a > b ? a : b;
}

static bool fifo_push(dr_state *s, dr_fifo *q, uint32_t idx)
{
    if (q->count == q->capacity) {
        size_t cap = q->capacity ? q->capacity * 2 : 4096;
        uint32_t *p = malloc(cap * sizeof *p);
        if (!p) return false;
        /* Unwrap the ring into the new buffer. */
        for (size_t k = 0; k < q->count; k++)
            p[k] = q->items[(q->head + k) & (q->capacity - 1)];
        free(q->items);
        temp_change(s, q->capacity * sizeof *p, cap * sizeof *p);
        q->items = p;
        q->head = 0;
        q->capacity = cap;
    }
    q->items[(q->head + q->count) & (q->capacity - 1)] = idx;
    q->count++;
    return true;
}

static inline uint32_t fifo_pop(dr_fifo *q)
{
    uint32_t v = q->items[q->head];
    q->head = (q->head + 1) & (q->capacity - 1);
    q->count--;
    return v;
}

static uint32_t comp_find(dr_comp *comps, uint32_t k)
{
    while (comps[k].parent != k) {
        comps[k].parent = comps[comps[k].parent].parent;
        k = comps[k].parent;
    }
    return k;
}

static void comp_union(dr_comp *comps, uint32_t a, uint32_t b)
{
    a = comp_find(comps, a);
    b = comp_find(comps, b);
    /* The smaller id stays the root (any rule would do: the roots' fields are merged). */
    if (a < b)
        comps[b].parent = a;
    else if (b < a)
        comps[a].parent = b;
}

enum { DR_OK, DR_NOMEM, DR_CANCEL };

static int basin_cmp(const void *a, const void *b)
{
    const trn_basin *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static void state_free(dr_state *s)
{
    free(s->trace.items);
    s->trace.items = NULL;
}

/* Rows of one parallel region in the passes after the fill. */
#define DR_BLOCK_ROWS 1024u

/* Threads for a parallel region over `strips` strips: no more than OpenMP allows. */
static int dr_team(int strips)
{
    int team = strips;
#ifdef _OPENMP
    if (team > omp_get_max_threads()) team = omp_get_max_threads();
#endif
    return team;
}

/* Water leaving a strip of rows during the accumulation: (target sample, amount). */
typedef struct dr_flow {
    uint32_t target, amount;
} dr_flow;

typedef struct dr_flows {
    dr_flow *items;
    size_t count, capacity;
} dr_flows;

static bool flows_add(dr_flows *f, uint32_t target, uint32_t amount)
{
    if (f->count == f->capacity) {
        const size_t cap = f->capacity ? f->capacity * 2 : 1024;
        dr_flow *p = realloc(f->items, cap * sizeof *p);
        if (!p) return false;
        f->items = p;
        f->capacity = cap;
    }
    f->items[f->count].target = target;
    f->items[f->count].amount = amount;
    f->count++;
    return true;
}

/* ---- steepest descent over a row ---- */

/* trn_d8_steepest for samples 1..nx-2 of an inner row (rows above and below given), written
 * branch-free so the compiler vectorises it: the same double operations in the same order, so
 * the same codes on every instruction set. best[i]: the code, or 0xFF where no neighbour is
 * lower. */
#define DR_STEP(fnv, d, iv)                                                                        \
    do {                                                                                           \
        const float fn = (fnv);                                                                    \
        const double sl = (dc - (double)fn) * (iv);                                                \
        const bool take = (fn < fc) & (sl > bs);                                                   \
        bs = take ? sl : bs;                                                                       \
        b = take ? (d) : b;                                                                        \
    } while (0)
KERNEL void steepest_row_body(const float *RESTRICT up, const float *RESTRICT mid,
                              const float *RESTRICT down, size_t nx, const double *inv,
                              uint8_t *RESTRICT best)
{
    const double i0 = inv[0], i1 = inv[1], i2 = inv[2], i3 = inv[3], i4 = inv[4], i5 = inv[5],
                 i6 = inv[6], i7 = inv[7];
    for (size_t i = 1; i + 1 < nx; i++) {
        const float fc = mid[i];
        const double dc = (double)fc;
        double bs = 0.0;
        unsigned b = 0xFFu;
        DR_STEP(mid[i + 1], 0u, i0);
        DR_STEP(down[i + 1], 1u, i1);
        DR_STEP(down[i], 2u, i2);
        DR_STEP(down[i - 1], 3u, i3);
        DR_STEP(mid[i - 1], 4u, i4);
        DR_STEP(up[i - 1], 5u, i5);
        DR_STEP(up[i], 6u, i6);
        DR_STEP(up[i + 1], 7u, i7);
        best[i] = (uint8_t)b;
    }
}
#undef DR_STEP

typedef void (*steepest_row_fn)(const float *, const float *, const float *, size_t, const double *,
                                uint8_t *);

static void steepest_row_default(const float *up, const float *mid, const float *down, size_t nx,
                                 const double *inv, uint8_t *best)
{
    steepest_row_body(up, mid, down, nx, inv, best);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void steepest_row_avx2(const float *up, const float *mid, const float *down,
                                          size_t nx, const double *inv, uint8_t *best)
{
    steepest_row_body(up, mid, down, nx, inv, best);
}
#endif

static steepest_row_fn steepest_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return steepest_row_avx2;
#endif
    return steepest_row_default;
}

/* ---- the fill ---- */

/* Moves heap entry at p up or down to its place; heap[] holds labels ordered by level[], pos[]
 * each label's place (the indexed binary heap of the labels' priority flood). */
static void heap_fix(uint32_t *heap, uint32_t *pos, size_t count, const float *level, size_t p)
{
    const uint32_t a = heap[p];
    const float la = level[a];
    while (p > 0 && la < level[heap[(p - 1) / 2]]) {
        heap[p] = heap[(p - 1) / 2];
        pos[heap[p]] = (uint32_t)p;
        p = (p - 1) / 2;
    }
    for (;;) {
        size_t c = 2 * p + 1;
        if (c >= count) break;
        if (c + 1 < count && level[heap[c + 1]] < level[heap[c]]) c++;
        if (!(level[heap[c]] < la)) break;
        heap[p] = heap[c];
        pos[heap[p]] = (uint32_t)p;
        p = c;
    }
    heap[p] = a;
    pos[a] = (uint32_t)p;
}

/* The level each label drains at: the lowest over paths of label pairs from label 0 (the
 * outlets) of the highest spill on the path (a priority flood over the label graph; the levels
 * are unique, whatever order ties are taken in). Then the closed basins as sets of labels
 * (parent: a union-find over labels): a label whose pit lies below its level has its samples
 * below the level raised, and they are connected (each descends to the pit without climbing);
 * two such labels are in one basin when they touch below their level (a pair's spill under
 * level[a]; both then have the same level). *parent: the union-find's links (the smaller label
 * is the root), malloc'd. Frees the maps once read. */
static int solve_labels(dr_state *g, dr_edges *maps, int strips, size_t labels, float *level,
                        uint32_t **parent)
{
    size_t total = 0, map_bytes = 0;
    for (int k = 0; k < strips; k++) {
        total += maps[k].count;
        map_bytes += maps[k].capacity * (sizeof(uint64_t) + sizeof(float));
    }
    /* Adjacency lists: each pair in both directions. */
    size_t *start = calloc(labels + 1, sizeof *start);
    uint32_t *to = malloc((2 * total + 1) * sizeof *to);
    float *tw = malloc((2 * total + 1) * sizeof *tw);
    uint32_t *heap = NULL, *pos = NULL;
    int rc = DR_NOMEM;
    const size_t list_bytes = (labels + 1) * sizeof *start + 2 * total * (sizeof *to + sizeof *tw);
    temp_change(g, 0, map_bytes + list_bytes);
    if (!start || !to || !tw) goto done;
    for (int k = 0; k < strips; k++)
        for (size_t q = 0; q < maps[k].capacity; q++)
            if (maps[k].key[q] != DR_NO_KEY) {
                start[(uint32_t)(maps[k].key[q] >> 32) + 1]++;
                start[(uint32_t)maps[k].key[q] + 1]++;
            }
    for (size_t l = 0; l < labels; l++)
        start[l + 1] += start[l];
    for (int k = 0; k < strips; k++) {
        for (size_t q = 0; q < maps[k].capacity; q++) {
            const uint64_t key = maps[k].key[q];
            if (key == DR_NO_KEY) continue;
            const uint32_t a = (uint32_t)(key >> 32), b = (uint32_t)key;
            to[start[a]] = b;
            tw[start[a]++] = maps[k].w[q];
            to[start[b]] = a;
            tw[start[b]++] = maps[k].w[q];
        }
        free(maps[k].key);
        free(maps[k].w);
        maps[k].key = NULL;
        maps[k].w = NULL;
        maps[k].count = maps[k].capacity = 0;
    }
    /* start[l] is now where l's list ends, which is where l + 1's begins. */
    for (size_t l = labels; l > 0; l--)
        start[l] = start[l - 1];
    start[0] = 0;
    temp_change(g, map_bytes, 0);
    heap = malloc(labels * sizeof *heap);
    pos = malloc(labels * sizeof *pos);
    temp_change(g, 0, labels * (sizeof *heap + sizeof *pos));
    temp_change(g, labels * (sizeof *heap + sizeof *pos), 0);
    if (!heap || !pos) goto done;
    for (size_t l = 0; l < labels; l++) {
        level[l] = INFINITY;
        pos[l] = UINT32_MAX;
    }
    level[0] = -INFINITY;
    size_t hn = 0;
    heap[hn++] = 0;
    pos[0] = 0;
    while (hn) {
        const uint32_t a = heap[0];
        pos[a] = UINT32_MAX;
        if (--hn) {
            heap[0] = heap[hn];
            heap_fix(heap, pos, hn, level, 0);
        }
        for (size_t q = start[a]; q < start[a + 1]; q++) {
            const uint32_t b = to[q];
            const float lv = dr_max(level[a], tw[q]);
            if (!(lv < level[b])) continue;
            level[b] = lv;
            if (pos[b] == UINT32_MAX) {
                heap[hn] = b;
                hn++;
                heap_fix(heap, pos, hn, level, hn - 1);
            } else {
                heap_fix(heap, pos, hn, level, pos[b]);
            }
        }
    }
    /* The heap is empty: its array becomes the union-find's. */
    uint32_t *up = heap;
    heap = NULL;
    for (size_t l = 0; l < labels; l++)
        up[l] = (uint32_t)l;
    for (size_t a = 1; a < labels; a++) {
        if (!(g->h[g->pit[a]] < level[a])) continue;
        for (size_t q = start[a]; q < start[a + 1]; q++) {
            if (!(tw[q] < level[a])) continue;
            uint32_t x = (uint32_t)a, y = to[q];
            while (up[x] != x)
                x = up[x] = up[up[x]];
            while (up[y] != y)
                y = up[y] = up[up[y]];
            if (x < y)
                up[y] = x;
            else if (y < x)
                up[x] = y;
        }
    }
    *parent = up;
    rc = DR_OK;
done:
    temp_change(g, list_bytes, 0);
    free(start);
    free(to);
    free(tw);
    free(heap);
    free(pos);
    return rc;
}

/* Receivers of rows [j0, j1) (see DR_PIT) and the outlets: the border and every sample at or
 * below sea level (sea NaN: none), label 0. Other samples are left unlabelled (their label
 * array entries unwritten). Returns the
 * number of pits; *first_nan: the smallest index of a NaN height seen, if smaller. */
/* Each sample's lowest strictly lower neighbour (ties to the lowest code), or DR_PIT, for samples
 * 1..nx-2 of an inner row; branch-free so the compiler vectorises it. */
#define DR_LOWER(hn, d)                                                                            \
    do {                                                                                           \
        const float v = (hn);                                                                      \
        const bool lt = v < low;                                                                   \
        low = lt ? v : low;                                                                        \
        best = lt ? (d) : best;                                                                    \
    } while (0)
KERNEL void lower_row_body(const float *RESTRICT up, const float *RESTRICT mid,
                           const float *RESTRICT down, size_t nx, uint8_t *RESTRICT dir)
{
    for (size_t i = 1; i + 1 < nx; i++) {
        float low = mid[i];
        unsigned best = DR_PIT;
        DR_LOWER(mid[i + 1], 0u);
        DR_LOWER(down[i + 1], 1u);
        DR_LOWER(down[i], 2u);
        DR_LOWER(down[i - 1], 3u);
        DR_LOWER(mid[i - 1], 4u);
        DR_LOWER(up[i - 1], 5u);
        DR_LOWER(up[i], 6u);
        DR_LOWER(up[i + 1], 7u);
        dir[i] = (uint8_t)best;
    }
}
#undef DR_LOWER

typedef void (*lower_row_fn)(const float *, const float *, const float *, size_t, uint8_t *);

static void lower_row_default(const float *up, const float *mid, const float *down, size_t nx,
                              uint8_t *dir)
{
    lower_row_body(up, mid, down, nx, dir);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void lower_row_avx2(const float *up, const float *mid, const float *down,
                                       size_t nx, uint8_t *dir)
{
    lower_row_body(up, mid, down, nx, dir);
}
#endif

static lower_row_fn lower_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return lower_row_avx2;
#endif
    return lower_row_default;
}

static size_t descend_rows(dr_state *g, size_t j0, size_t j1, double sea_level, size_t *first_nan)
{
    const lower_row_fn lower = lower_row_variant();
    const bool sea = !isnan(sea_level);
    const size_t nx = g->nx, nz = g->nz;
    const float *h = g->h;
    uint8_t *dir = g->dir;
    uint32_t *lab = g->acc;
    size_t pits = 0;
    for (size_t j = j0; j < j1; j++) {
        const size_t r = j * nx;
        if (j == 0 || j + 1 == nz || nx < 3) {
            for (size_t i = 0; i < nx; i++) {
                if (isnan(h[r + i]) && r + i < *first_nan) *first_nan = r + i;
                dir[r + i] = TRN_DRAIN_OUTLET | DR_LABELLED;
                lab[r + i] = 0;
            }
            continue;
        }
        /* The lowest strictly lower neighbour, branch-free over the row (the compiler
         * vectorises it); then the few samples that have none, the sea and the border. */
        const float *up = h + r - nx, *mid = h + r, *down = h + r + nx;
        lower(up, mid, down, nx, dir + r);
        dir[r] = dir[r + nx - 1] = TRN_DRAIN_OUTLET | DR_LABELLED;
        lab[r] = lab[r + nx - 1] = 0;
        bool odd = false;
        for (size_t i = 0; i < nx; i++)
            odd |= (sea && (double)mid[i] <= sea_level) || dir[r + i] == DR_PIT || isnan(mid[i]);
        if (!odd) continue;
        for (size_t i = 0; i < nx; i++) {
            const size_t k = r + i;
            const float hk = mid[i];
            if (isnan(hk) && k < *first_nan) *first_nan = k;
            if (sea && (double)hk <= sea_level) {
                dir[k] = TRN_DRAIN_OUTLET | DR_LABELLED;
                lab[k] = 0;
            } else if (dir[k] == DR_PIT) {
                /* No lower neighbour: an equal one before it in index order, if any. */
                if (mid[i - 1] == hk)
                    dir[k] = 4;
                else if (up[i - 1] == hk)
                    dir[k] = 5;
                else if (up[i] == hk)
                    dir[k] = 6;
                else if (up[i + 1] == hk)
                    dir[k] = 7;
                else
                    pits++;
            }
        }
    }
    return pits;
}

/* Labels of rows [j0, j1): each sample takes the label of the pit (numbered from base + 1 in
 * the order they are met) or outlet (0) its receivers lead to. Each descent is followed once
 * to a labelled sample (its direction byte says so), the samples on the way kept in path, and
 * those labelled, so every sample is read about once. A descent that leaves the rows labels
 * its samples DR_PENDING with the first sample outside, resolved once every strip is
 * labelled. Returns false when path cannot grow. */
static bool label_rows(dr_state *g, size_t j0, size_t j1, uint32_t base)
{
    const size_t lo = j0 * g->nx, hi = j1 * g->nx;
    uint8_t *dir = g->dir;
    uint32_t *lab = g->acc;
    const ptrdiff_t *off = g->off;
    uint32_t next = base;
    size_t cap = 1024;
    uint32_t *path = malloc(cap * sizeof *path);
    if (!path) return false;
    for (size_t c = lo; c < hi; c++) {
        if (dir[c] & DR_LABELLED) continue;
        size_t t = c, n = 0;
        uint32_t label;
        unsigned flags = DR_LABELLED;
        for (;;) {
            const unsigned dt = dir[t];
            if (dt & DR_LABELLED) {
                label = lab[t];
                flags |= dt & DR_PENDING;
                break;
            }
            if (n == cap) {
                uint32_t *p = realloc(path, 2 * cap * sizeof *p);
                if (!p) {
                    free(path);
                    return false;
                }
                path = p;
                cap *= 2;
            }
            path[n++] = (uint32_t)t;
            if (dt == DR_PIT) {
                label = ++next;
                g->pit[label] = (uint32_t)t;
                break;
            }
            const size_t m = (size_t)((ptrdiff_t)t + off[dt]);
            if (m < lo || m >= hi) {
                label = (uint32_t)m;
                flags |= DR_PENDING;
                break;
            }
            t = m;
        }
        for (size_t k = 0; k < n; k++) {
            lab[path[k]] = label;
            dir[path[k]] = (uint8_t)(dir[path[k]] | flags);
        }
    }
    free(path);
    return true;
}

/* A pending label in a strip's first or last row: the descent's first sample outside is in
 * another strip's first or last row; follow those until a final label (serial, on a few rows). */
static void resolve_edge_row(dr_state *g, size_t j)
{
    uint8_t *dir = g->dir;
    uint32_t *lab = g->acc;
    for (size_t c = j * g->nx; c < (j + 1) * g->nx; c++) {
        if (!(dir[c] & DR_PENDING)) continue;
        size_t x = lab[c];
        while (dir[x] & DR_PENDING)
            x = lab[x];
        const uint32_t label = lab[x];
        for (size_t u = c; dir[u] & DR_PENDING;) {
            const size_t v = lab[u];
            lab[u] = label;
            dir[u] = (uint8_t)(dir[u] & ~DR_PENDING);
            u = v;
        }
    }
}

/* Final labels of row j (pending ones point to a resolved strip edge row). */
static void resolve_row(dr_state *g, size_t j)
{
    uint8_t *dir = g->dir;
    uint32_t *lab = g->acc;
    const size_t end = (j + 1) * g->nx;
    for (size_t c = j * g->nx; c < end; c++) {
        /* Pending samples are few (none on one strip): 8 bytes tested at once. */
        if (c + 8 <= end) {
            uint64_t word;
            memcpy(&word, dir + c, sizeof word);
            if (!(word & 0x0101010101010101ull * DR_PENDING)) {
                c += 7;
                continue;
            }
        }
        if (dir[c] & DR_PENDING) {
            lab[c] = lab[lab[c]];
            dir[c] = (uint8_t)(dir[c] & ~DR_PENDING);
        }
    }
}

/* Where the labels of rows [j0, j1) touch other labels (each pair of neighbours once, from
 * the upper or left one): a pair's spill level is the higher of the two input heights, and a
 * pair of labels keeps its lowest. */
static bool edges_rows(dr_state *g, size_t j0, size_t j1, dr_edges *e)
{
    const size_t nx = g->nx, nz = g->nz;
    const float *h = g->h;
    const uint32_t *lab = g->acc;
    /* Per row, which samples differ from a neighbour to their E, SW, S or SE (a branch-free
     * loop the compiler vectorises); only those are looked at one by one. */
    uint8_t *differs = malloc(nx + 8);
    if (!differs) return false;
    memset(differs, 0, nx + 8);
    bool ok = true;
    resolve_row(g, j0);
    for (size_t j = j0; j < j1 && ok; j++) {
        if (j + 1 < j1) resolve_row(g, j + 1);
        const uint32_t *l = lab + j * nx;
        if (j + 1 < nz) {
            const uint32_t *b = l + nx;
            for (size_t i = 1; i + 1 < nx; i++) {
                const uint32_t a = l[i];
                differs[i] =
                    (uint8_t)((l[i + 1] != a) | (b[i - 1] != a) | (b[i] != a) | (b[i + 1] != a));
            }
            differs[0] = differs[nx - 1] = 1;
        } else {
            for (size_t i = 0; i + 1 < nx; i++)
                differs[i] = l[i + 1] != l[i];
            differs[nx - 1] = 0;
        }
        for (size_t i = 0; i < nx && ok; i++) {
            if (i + 8 <= nx) {
                uint64_t word;
                memcpy(&word, differs + i, sizeof word);
                if (!word) {
                    i += 7;
                    continue;
                }
            }
            if (!differs[i]) continue;
            const size_t c = j * nx + i;
            const uint32_t a = lab[c];
            const float hc = h[c];
            if (i + 1 < nx && lab[c + 1] != a)
                ok = edges_add(e, a, lab[c + 1], dr_max(hc, h[c + 1]));
            if (j + 1 < nz)
                for (size_t m = c + nx - (i > 0); m <= c + nx + (i + 1 < nx) && ok; m++)
                    if (lab[m] != a) ok = edges_add(e, a, lab[m], dr_max(hc, h[m]));
        }
    }
    free(differs);
    return ok && edges_flush(e);
}

/* Rows [j0, j1) raised to their label's level (outlets' label 0 has level -infinity): a raised
 * sample holds level + 0 (+0, never -0), an unraised one its input height. Each label's raised
 * samples are counted: the labels (own_lo, own_hi] are this strip's own, no other strip counts
 * them, in comps[l].area; others' (a descent that crossed from another strip) in runs of
 * (label, count) in foreign, added once every strip is done. */
static bool raise_rows(dr_state *g, size_t j0, size_t j1, const float *level, dr_lcomp *comps,
                       uint32_t own_lo, uint32_t own_hi, dr_flows *foreign)
{
    const float *h = g->h;
    const uint32_t *lab = g->acc;
    float *filled = g->filled;
    uint8_t *dir = g->dir;
    const uint32_t span = own_hi - own_lo;
    for (size_t c = j0 * g->nx; c < j1 * g->nx; c++)
        dir[c] &= DR_CODE;
    for (size_t c = j0 * g->nx; c < j1 * g->nx; c++) {
        const uint32_t l = lab[c];
        const float hc = h[c], lv = level[l];
        const bool up = hc < lv;
        filled[c] = up ? lv + 0.0f : hc;
        if (l - own_lo - 1u < span) {
            comps[l].area += up;
        } else if (up) {
            if (foreign->count && foreign->items[foreign->count - 1].target == l)
                foreign->items[foreign->count - 1].amount++;
            else if (!flows_add(foreign, l, 1))
                return false;
        }
    }
    return true;
}

/* Raised samples of an inner row (1..nx-2) next to an unraised sample at their filled height
 * (a spill candidate), branch-free over the row so the compiler vectorises it. */
#define DR_AT(hv, fv) (((hv) == fc) & !((hv) < (fv)))
KERNEL void spill_row_body(const float *RESTRICT hu, const float *RESTRICT hm,
                           const float *RESTRICT hd, const float *RESTRICT fu,
                           const float *RESTRICT fm, const float *RESTRICT fd, size_t nx,
                           uint8_t *RESTRICT flag)
{
    for (size_t i = 1; i + 1 < nx; i++) {
        const float fc = fm[i];
        const bool near = DR_AT(hm[i + 1], fm[i + 1]) | DR_AT(hd[i + 1], fd[i + 1]) |
                          DR_AT(hd[i], fd[i]) | DR_AT(hd[i - 1], fd[i - 1]) |
                          DR_AT(hm[i - 1], fm[i - 1]) | DR_AT(hu[i - 1], fu[i - 1]) |
                          DR_AT(hu[i], fu[i]) | DR_AT(hu[i + 1], fu[i + 1]);
        flag[i] = (uint8_t)((hm[i] < fc) & near);
    }
}
#undef DR_AT

typedef void (*spill_row_fn)(const float *, const float *, const float *, const float *,
                             const float *, const float *, size_t, uint8_t *);

static void spill_row_default(const float *hu, const float *hm, const float *hd, const float *fu,
                              const float *fm, const float *fd, size_t nx, uint8_t *flag)
{
    spill_row_body(hu, hm, hd, fu, fm, fd, nx, flag);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void spill_row_avx2(const float *hu, const float *hm, const float *hd,
                                       const float *fu, const float *fm, const float *fd, size_t nx,
                                       uint8_t *flag)
{
    spill_row_body(hu, hm, hd, fu, fm, fd, nx, flag);
}
#endif

static spill_row_fn spill_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return spill_row_avx2;
#endif
    return spill_row_default;
}

/* Spill candidates of rows [j0, j1): (unraised sample at a raised neighbour's filled height,
 * the neighbour's label), in f's items as (target, amount) pairs. */
static bool spill_rows(const dr_state *g, size_t j0, size_t j1, dr_flows *f)
{
    const size_t nx = g->nx;
    const float *h = g->h, *fl = g->filled;
    const spill_row_fn row = spill_row_variant();
    uint8_t *flag = malloc(nx + 8);
    if (!flag) return false;
    flag[0] = flag[nx - 1] = 0;
    if (j0 < 1) j0 = 1;
    if (j1 + 1 > g->nz) j1 = g->nz - 1;
    bool ok = true;
    for (size_t j = j0; j < j1 && ok; j++) {
        const size_t r = j * nx;
        row(h + r - nx, h + r, h + r + nx, fl + r - nx, fl + r, fl + r + nx, nx, flag);
        for (size_t i = 0; i < nx && ok; i++) {
            if (i + 8 <= nx) {
                uint64_t word;
                memcpy(&word, flag + i, sizeof word);
                if (!word) {
                    i += 7;
                    continue;
                }
            }
            if (!flag[i]) continue;
            const size_t k = r + i;
            for (int d = 0; d < 8 && ok; d++) {
                const size_t m = (size_t)((ptrdiff_t)k + g->off[d]);
                if (h[m] == fl[k] && !(h[m] < fl[m])) ok = flows_add(f, (uint32_t)m, g->acc[k]);
            }
        }
    }
    free(flag);
    return ok;
}

/* The closed basins from the labels' union-find (comps, see solve_labels) and the spill
 * candidates: each basin keeps the lowest pit of its labels (the lowest sample of a basin is a
 * pit: a lower or equal earlier receiver would be in it too), their raised samples' count and
 * the smallest spill candidate's index. The same list as basins_scan finds from the raised
 * samples themselves. */
static int basins_from_labels(dr_state *g, dr_lcomp *comps, size_t labels, const float *level,
                              dr_flows *cand, int strips, trn_basin **out, size_t *out_count)
{
    const float *h = g->h;
    const size_t nx = g->nx;
    for (int k = 0; k < strips; k++)
        for (size_t q = 0; q < cand[k].count; q++) {
            dr_lcomp *r = &comps[lcomp_find(comps, cand[k].items[q].amount)];
            if (cand[k].items[q].target < r->spill) r->spill = cand[k].items[q].target;
        }
    size_t count = 0;
    for (size_t l = 1; l < labels; l++) {
        if (!(h[comps[l].sink] < level[l])) continue;
        const uint32_t root = lcomp_find(comps, (uint32_t)l);
        if (root == l) {
            count++;
            continue;
        }
        dr_lcomp *r = &comps[root], *c = &comps[l];
        r->area += c->area;
        const float hr = h[r->sink], hc = h[c->sink];
        if (hc < hr || (hc == hr && c->sink < r->sink)) r->sink = c->sink;
        if (c->spill < r->spill) r->spill = c->spill;
    }
    *out = NULL;
    *out_count = 0;
    if (!count) return DR_OK;
    trn_basin *basins = malloc(count * sizeof *basins);
    if (!basins) return DR_NOMEM;
    size_t b = 0;
    for (size_t l = 1; l < labels; l++) {
        const dr_lcomp *c = &comps[l];
        if (c->parent != l || !(h[c->sink] < level[l])) continue;
        trn_basin *o = &basins[b++];
        o->id = c->sink;
        o->sink_i = (uint32_t)(c->sink % nx);
        o->sink_j = (uint32_t)(c->sink / nx);
        o->sink_height = h[c->sink];
        o->spill_level = g->filled[c->sink];
        o->spill_i = (uint32_t)(c->spill % nx);
        o->spill_j = (uint32_t)(c->spill / nx);
        o->area = c->area;
    }
    qsort(basins, count, sizeof *basins, basin_cmp);
    *out = basins;
    *out_count = count;
    return DR_OK;
}

/* Depression filling by watersheds. Every sample that is not an outlet has a receiver (its
 * lowest neighbour, or an equal one, see DR_PIT) unless it is a pit; following receivers from
 * any sample never climbs, so a sample's filled height is the larger of its own height and the
 * level at which its pit's watershed drains: the lowest, over chains of touching watersheds
 * down to an outlet, of the highest spill on the chain (the labels' graph of Barnes, Lehman and
 * Mulla 2016, here with one label per pit as in Barnes 2016's watershed variant). Every pass
 * reads the grid in row order, strip by strip on the threads; only the small graph is solved on
 * one. The filled heights are unique (the lowest level at which each sample's water can leave
 * the grid), so the bytes do not depend on the strips. s->acc holds labels until the end. */
static int fill_watersheds(dr_state *g, int strips, double sea_level, size_t *first_nan,
                           trn_basin **basins, size_t *basin_count)
{
    const size_t nz = g->nz;
    dr_edges *maps = calloc((size_t)strips, sizeof *maps);
    size_t *row = malloc(((size_t)strips + 1) * sizeof *row);
    size_t *pits = calloc((size_t)strips + 1, sizeof *pits);
    size_t *nan_at = malloc((size_t)strips * sizeof *nan_at);
    float *level = NULL;
    dr_lcomp *comps = NULL;
    dr_flows *cand = calloc((size_t)strips, sizeof *cand);
    size_t pit_bytes = 0, comp_bytes = 0;
    int out = DR_OK;
    if (!maps || !row || !pits || !nan_at || !cand) {
        out = DR_NOMEM;
        goto done;
    }
    for (int k = 0; k <= strips; k++)
        row[k] = nz * (size_t)k / (size_t)strips;
    const int team = dr_team(strips);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (int k = 0; k < strips; k++) {
        nan_at[k] = SIZE_MAX;
        pits[k + 1] = descend_rows(g, row[k], row[k + 1], sea_level, &nan_at[k]);
    }
    for (int k = 0; k < strips; k++) {
        if (nan_at[k] < *first_nan) *first_nan = nan_at[k];
        pits[k + 1] += pits[k];
    }
    TICK("descend");
    if (*first_nan != SIZE_MAX) goto done;
    if (trn_progress_report(&g->progress, 0.25, "drainage")) {
        out = DR_CANCEL;
        goto done;
    }
    pit_bytes = (1 + pits[strips]) * sizeof *g->pit;
    g->pit = malloc(pit_bytes);
    if (!g->pit) {
        out = DR_NOMEM;
        goto done;
    }
    temp_change(g, 0, pit_bytes);
    g->pit[0] = 0;
    bool ok = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(&& : ok)
    for (int k = 0; k < strips; k++)
        ok = label_rows(g, row[k], row[k + 1], (uint32_t)pits[k]) && ok;
    if (!ok) {
        out = DR_NOMEM;
        goto done;
    }
    TICK("label");
    for (int k = 0; k < strips; k++) {
        resolve_edge_row(g, row[k]);
        resolve_edge_row(g, row[k + 1] - 1);
    }
    if (trn_progress_report(&g->progress, 0.5, "drainage")) {
        out = DR_CANCEL;
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(&& : ok)
    for (int k = 0; k < strips; k++)
        ok = edges_rows(g, row[k], row[k + 1], &maps[k]) && ok;
    TICK("edges");
    if (!ok) {
        out = DR_NOMEM;
        goto done;
    }
    if (trn_progress_report(&g->progress, 0.75, "drainage")) {
        out = DR_CANCEL;
        goto done;
    }
    const size_t labels = 1 + pits[strips];
    level = malloc(labels * sizeof *level);
    if (!level) {
        out = DR_NOMEM;
        goto done;
    }
    temp_change(g, 0, labels * sizeof *level);
    uint32_t *parent = NULL;
    out = solve_labels(g, maps, strips, labels, level, &parent);
    TICK("solve");
    if (out != DR_OK) goto done;
    comp_bytes = labels * sizeof *comps;
    comps = malloc(comp_bytes);
    temp_change(g, 0, comp_bytes + labels * sizeof *parent);
    temp_change(g, labels * sizeof *parent, 0);
    if (!comps) {
        free(parent);
        out = DR_NOMEM;
        goto done;
    }
    for (size_t l = 0; l < labels; l++) {
        const dr_lcomp c = {parent[l], g->pit[l], UINT32_MAX, 0};
        comps[l] = c;
    }
    free(parent);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(&& : ok)
    for (int k = 0; k < strips; k++)
        ok = raise_rows(g, row[k], row[k + 1], level, comps, (uint32_t)pits[k],
                        (uint32_t)pits[k + 1], &cand[k]) &&
             ok;
    for (int k = 0; ok && k < strips; k++) {
        for (size_t q = 0; q < cand[k].count; q++)
            comps[cand[k].items[q].target].area += cand[k].items[q].amount;
        cand[k].count = 0;
    }
    TICK("raise");
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(&& : ok)
    for (int k = 0; k < strips; k++)
        ok = spill_rows(g, row[k], row[k + 1], &cand[k]) && ok;
    if (!ok) {
        out = DR_NOMEM;
        goto done;
    }
    out = basins_from_labels(g, comps, labels, level, cand, strips, basins, basin_count);
    TICK("basins");
done:
    for (int k = 0; maps && k < strips; k++) {
        free(maps[k].key);
        free(maps[k].w);
    }
    for (int k = 0; cand && k < strips; k++)
        free(cand[k].items);
    temp_change(g, (level ? pits[strips] + 1 : 0) * sizeof *level + pit_bytes + comp_bytes, 0);
    free(maps);
    free(row);
    free(pits);
    free(nan_at);
    free(level);
    free(comps);
    free(cand);
    free(g->pit);
    g->pit = NULL;
    return out;
}

/* ---- basins ---- */

/* Raised regions of rows [j0, j1): a raster scan joining each raised sample (filled above the
 * input) to the raised ones before it (W, and NW, N, NE when the row above is in range), with
 * union-find over region ids (ids local to these rows, in s->acc). Each region keeps its lowest
 * sample, its area and, as its spill, the unraised neighbour at the spill level with the
 * smallest index. */
typedef struct dr_comps {
    dr_comp *items;
    size_t count, capacity;
} dr_comps;

static bool basins_scan(const dr_state *s, size_t j0, size_t j1, dr_comps *out)
{
    const float *h = s->h, *f = s->filled;
    uint32_t *id = s->acc;
    const size_t nx = s->nx;
    /* Raised samples are never on the border (it is an outlet), so all 8 neighbours exist. */
    if (j0 == 0) j0 = 1;
    if (j1 + 1 > s->nz) j1 = s->nz - 1;
    for (size_t j = j0; j < j1; j++) {
        const int before = j > j0 ? 4 : 1;
        for (size_t i = 1; i + 1 < nx; i++) {
            const size_t k = j * nx + i;
            const float fk = f[k];
            if (!(h[k] < fk)) continue;
            uint32_t c = UINT32_MAX;
            const size_t prev[4] = {k - 1, k - nx - 1, k - nx, k - nx + 1};
            for (int q = 0; q < before; q++) {
                const size_t m = prev[q];
                if (!(h[m] < f[m])) continue;
                if (c == UINT32_MAX)
                    c = id[m];
                else if (id[m] != c)
                    comp_union(out->items, c, id[m]);
            }
            if (c == UINT32_MAX) {
                if (out->count == out->capacity) {
                    const size_t cap = out->capacity ? out->capacity * 2 : 256;
                    dr_comp *p = cap > UINT32_MAX ? NULL : realloc(out->items, cap * sizeof *p);
                    if (!p) return false;
                    out->items = p;
                    out->capacity = cap;
                }
                c = (uint32_t)out->count;
                dr_comp nc = {c, (uint32_t)k, UINT32_MAX, 0};
                out->items[out->count++] = nc;
            }
            id[k] = c;
            dr_comp *r = &out->items[c];
            r->area++;
            const float hs = h[r->sink];
            if (h[k] < hs || (h[k] == hs && k < r->sink)) r->sink = (uint32_t)k;
            for (int d = 0; d < 8; d++) {
                const size_t m = (size_t)((ptrdiff_t)k + s->off[d]);
                if (h[m] == fk && !(h[m] < f[m]) && m < r->spill) r->spill = (uint32_t)m;
            }
        }
    }
    return true;
}

/* Closed basins from the fill: 8-connected regions of raised samples, scanned strip by strip
 * at once and joined across the strips' shared edges. The merged fields (lowest sink, total
 * area, smallest spill index) do not depend on the strips. */
static int find_basins(dr_state *s, int strips, trn_basin **out, size_t *out_count)
{
    const float *h = s->h, *f = s->filled;
    const size_t nx = s->nx, nz = s->nz;
    *out = NULL;
    *out_count = 0;
    dr_comps *part = calloc((size_t)strips, sizeof *part);
    size_t *base = calloc((size_t)strips + 1, sizeof *base);
    dr_comp *comps = NULL;
    trn_basin *basins = NULL;
    int rc = DR_NOMEM;
    if (!part || !base) goto done;
    bool ok = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(dr_team(strips)) reduction(&& : ok)
    for (int k = 0; k < strips; k++)
        ok = basins_scan(s, nz * (size_t)k / (size_t)strips, nz * (size_t)(k + 1) / (size_t)strips,
                         &part[k]) &&
             ok;
    if (!ok) goto done;
    for (int k = 0; k < strips; k++)
        base[k + 1] = base[k] + part[k].count;
    const size_t count = base[strips];
    if (count > UINT32_MAX) goto done;
    comps = malloc((count ? count : 1) * sizeof *comps);
    if (!comps) goto done;
    temp_change(s, 0, count * sizeof *comps);
    for (int k = 0; k < strips; k++)
        for (size_t q = 0; q < part[k].count; q++) {
            dr_comp c = part[k].items[q];
            c.parent += (uint32_t)base[k];
            comps[base[k] + q] = c;
        }
    /* Regions that touch across a strip edge are one. */
    for (int k = 1; k < strips; k++) {
        const size_t j = nz * (size_t)k / (size_t)strips;
        if (j < 2 || j + 1 >= nz) continue;
        for (size_t i = 1; i + 1 < nx; i++) {
            const size_t c = j * nx + i;
            if (!(h[c] < f[c])) continue;
            for (int di = -1; di <= 1; di++) {
                const size_t m = c - nx + (size_t)((ptrdiff_t)di);
                if (h[m] < f[m])
                    comp_union(comps, (uint32_t)(base[k] + s->acc[c]),
                               (uint32_t)(base[k - 1] + s->acc[m]));
            }
        }
    }
    /* Merge touching regions: each root keeps the lowest sink, the total area, the first spill. */
    for (size_t k = 0; k < count; k++) {
        const uint32_t r = comp_find(comps, (uint32_t)k);
        if (r == k) continue;
        dr_comp *root = &comps[r], *c = &comps[k];
        root->area += c->area;
        const float hr = h[root->sink], hc = h[c->sink];
        if (hc < hr || (hc == hr && c->sink < root->sink)) root->sink = c->sink;
        if (c->spill < root->spill) root->spill = c->spill;
    }
    size_t basin_count = 0;
    for (size_t k = 0; k < count; k++)
        basin_count += comps[k].parent == k;
    if (basin_count) {
        basins = malloc(basin_count * sizeof *basins);
        if (!basins) goto done;
        size_t b = 0;
        for (size_t k = 0; k < count; k++) {
            const dr_comp *c = &comps[k];
            if (c->parent != k) continue;
            trn_basin *o = &basins[b++];
            o->id = c->sink;
            o->sink_i = (uint32_t)(c->sink % nx);
            o->sink_j = (uint32_t)(c->sink / nx);
            o->sink_height = h[c->sink];
            o->spill_level = f[c->sink];
            o->spill_i = (uint32_t)(c->spill % nx);
            o->spill_j = (uint32_t)(c->spill / nx);
            o->area = c->area;
        }
        qsort(basins, basin_count, sizeof *basins, basin_cmp);
    }
    temp_change(s, count * sizeof *comps, 0);
    *out = basins;
    *out_count = basin_count;
    basins = NULL;
    rc = DR_OK;
done:
    for (int k = 0; part && k < strips; k++)
        free(part[k].items);
    free(part);
    free(base);
    free(comps);
    free(basins);
    return rc;
}

/* ---- flat distances ---- */

/* Breadth-first (label-correcting) from the samples queued in q, within samples [lo, hi). Two
 * neighbouring flat samples always have the same filled height (were one lower, the other would
 * descend to it), so the search reads distances alone: a neighbour's distance is above next
 * only on a flat (TRN_D8_FLAT_EXIT is 0). The search touches nothing else: the directions are
 * picked afterwards in row order (pick_row_body), not in the search's scattered order. */
static bool flat_relax(dr_state *q, size_t lo, size_t hi, uint32_t *dist)
{
    ptrdiff_t off[8];
    memcpy(off, q->off, sizeof off);
    dr_fifo *t = &q->trace;
    while (t->count) {
        const uint32_t c = fifo_pop(t);
        const uint32_t next = dist[c] + 1;
        for (int k = 0; k < 8; k++) {
            const size_t m = (size_t)((ptrdiff_t)c + off[k]);
            if (dist[m] <= next || m < lo || m >= hi) continue;
            dist[m] = next;
            if (t->count < t->capacity)
                t->items[(t->head + t->count++) & (t->capacity - 1)] = (uint32_t)m;
            else if (!fifo_push(q, t, (uint32_t)m))
                return false;
        }
    }
    return true;
}

/* trn_d8_flat_pick for samples 1..nx-2 of an inner row, branch-free so the compiler vectorises
 * it: on a flat sample (distance neither TRN_D8_FLAT_EXIT nor unknown) the first neighbour, in
 * the order E, S, W, N, SE, SW, NW, NE, of equal filled height one step nearer the edge (the
 * smallest distance among equal neighbours: distances of neighbours differ by at most one, and
 * a flat sample next to an equal one that drains has distance 1); other samples keep dir. */
#define DR_PICK(fv, dv, code) p = (((dv) == want) & ((fv) == fc)) ? (code) : p
KERNEL void pick_row_body(const float *RESTRICT fu, const float *RESTRICT fm,
                          const float *RESTRICT fd, const uint32_t *RESTRICT du,
                          const uint32_t *RESTRICT dm, const uint32_t *RESTRICT dd, size_t nx,
                          uint8_t *RESTRICT dir)
{
    for (size_t i = 1; i + 1 < nx; i++) {
        const float fc = fm[i];
        const uint32_t dc = dm[i], want = dc - 1u;
        uint32_t p = dir[i];
        DR_PICK(fu[i + 1], du[i + 1], 7u);
        DR_PICK(fu[i - 1], du[i - 1], 5u);
        DR_PICK(fd[i - 1], dd[i - 1], 3u);
        DR_PICK(fd[i + 1], dd[i + 1], 1u);
        DR_PICK(fu[i], du[i], 6u);
        DR_PICK(fm[i - 1], dm[i - 1], 4u);
        DR_PICK(fd[i], dd[i], 2u);
        DR_PICK(fm[i + 1], dm[i + 1], 0u);
        dir[i] = (uint8_t)(((dc != TRN_D8_FLAT_EXIT) & (dc != TRN_D8_FLAT_UNKNOWN)) ? p : dir[i]);
    }
}
#undef DR_PICK

typedef void (*pick_row_fn)(const float *, const float *, const float *, const uint32_t *,
                            const uint32_t *, const uint32_t *, size_t, uint8_t *);

static void pick_row_default(const float *fu, const float *fm, const float *fd, const uint32_t *du,
                             const uint32_t *dm, const uint32_t *dd, size_t nx, uint8_t *dir)
{
    pick_row_body(fu, fm, fd, du, dm, dd, nx, dir);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void pick_row_avx2(const float *fu, const float *fm, const float *fd,
                                      const uint32_t *du, const uint32_t *dm, const uint32_t *dd,
                                      size_t nx, uint8_t *dir)
{
    pick_row_body(fu, fm, fd, du, dm, dd, nx, dir);
}
#endif

static pick_row_fn pick_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return pick_row_avx2;
#endif
    return pick_row_default;
}

/* Which samples 1..nx-2 of an inner row start the flat search: flat (dist unknown) next to a
 * sample of the same filled height that drains (TRN_D8_FLAT_EXIT). Branch-free over the row
 * (the compiler vectorises it). */
#define DR_SEED(fv, dv) (((dv) == TRN_D8_FLAT_EXIT) & ((fv) == fc))
KERNEL void seeds_row_body(const float *RESTRICT fu, const float *RESTRICT fm,
                           const float *RESTRICT fd, const uint32_t *RESTRICT du,
                           const uint32_t *RESTRICT dm, const uint32_t *RESTRICT dd, size_t nx,
                           uint8_t *RESTRICT seed)
{
    for (size_t i = 1; i + 1 < nx; i++) {
        const float fc = fm[i];
        const bool near = DR_SEED(fm[i + 1], dm[i + 1]) | DR_SEED(fd[i + 1], dd[i + 1]) |
                          DR_SEED(fd[i], dd[i]) | DR_SEED(fd[i - 1], dd[i - 1]) |
                          DR_SEED(fm[i - 1], dm[i - 1]) | DR_SEED(fu[i - 1], du[i - 1]) |
                          DR_SEED(fu[i], du[i]) | DR_SEED(fu[i + 1], du[i + 1]);
        seed[i] = (uint8_t)((dm[i] == TRN_D8_FLAT_UNKNOWN) & near);
    }
}
#undef DR_SEED

typedef void (*seeds_row_fn)(const float *, const float *, const float *, const uint32_t *,
                             const uint32_t *, const uint32_t *, size_t, uint8_t *);

static void seeds_row_default(const float *fu, const float *fm, const float *fd, const uint32_t *du,
                              const uint32_t *dm, const uint32_t *dd, size_t nx, uint8_t *seed)
{
    seeds_row_body(fu, fm, fd, du, dm, dd, nx, seed);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void seeds_row_avx2(const float *fu, const float *fm, const float *fd,
                                       const uint32_t *du, const uint32_t *dm, const uint32_t *dd,
                                       size_t nx, uint8_t *seed)
{
    seeds_row_body(fu, fm, fd, du, dm, dd, nx, seed);
}
#endif

static seeds_row_fn seeds_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return seeds_row_avx2;
#endif
    return seeds_row_default;
}

/* The seeds of rows [j0, j1) queued in index order (flat samples are never on the border). */
static bool flat_seeds(dr_state *q, const dr_state *g, size_t j0, size_t j1, const uint32_t *dist,
                       uint8_t *seed)
{
    const size_t nx = g->nx;
    const seeds_row_fn row = seeds_row_variant();
    if (j0 < 1) j0 = 1;
    if (j1 + 1 > g->nz) j1 = g->nz - 1;
    seed[0] = seed[nx - 1] = 0;
    for (size_t j = j0; j < j1; j++) {
        const size_t r = j * nx;
        row(g->filled + r - nx, g->filled + r, g->filled + r + nx, dist + r - nx, dist + r,
            dist + r + nx, nx, seed);
        for (size_t i = 0; i < nx; i++) {
            if (i + 8 <= nx) {
                uint64_t word;
                memcpy(&word, seed + i, sizeof word);
                if (!word) {
                    i += 7;
                    continue;
                }
            }
            if (seed[i] && !fifo_push(q, &q->trace, (uint32_t)(r + i))) return false;
        }
    }
    return true;
}

/* Each flat sample's distance (8-connected steps over samples of its filled height) from the
 * nearest flat sample next to one of that height that drains (TRN_D8_FLAT_EXIT); dist holds
 * TRN_D8_FLAT_UNKNOWN on flats and TRN_D8_FLAT_EXIT elsewhere. Strips of rows search at once,
 * each within its rows; then, in rounds, distances across each strip edge are compared and
 * any shorter one is spread within its strip again, until a round changes nothing. The result
 * is the shortest distance, whatever the strips. Flat samples are never on the border. */
static int flat_distances(dr_state *g, int parts, uint32_t *dist)
{
    const size_t nx = g->nx, nz = g->nz;
    dr_state *q = calloc((size_t)parts, sizeof *q);
    size_t *row = malloc(((size_t)parts + 1) * sizeof *row);
    int rc = DR_OK;
    if (!q || !row) {
        rc = DR_NOMEM;
        goto done;
    }
    for (int k = 0; k <= parts; k++)
        row[k] = nz * (size_t)k / (size_t)parts;
    bool ok = true;
#pragma omp parallel num_threads(dr_team(parts)) reduction(&& : ok)
    {
        /* Seeds are found before any distance is written, so no strip reads another's writes. */
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < parts; k++) {
            uint8_t *seed = malloc(nx + 8);
            ok = seed && flat_seeds(&q[k], g, row[k], row[k + 1], dist, seed) && ok;
            free(seed);
        }
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < parts; k++) {
            dr_fifo *t = &q[k].trace;
            for (size_t e = 0; e < t->count; e++)
                dist[t->items[e]] = 1;
            memcpy(q[k].off, g->off, sizeof q[k].off);
            ok = flat_relax(&q[k], row[k] * nx, row[k + 1] * nx, dist) && ok;
        }
    }
    for (bool changed = ok && parts > 1; changed;) {
        changed = false;
        for (int k = 1; k < parts; k++) {
            const size_t j = row[k];
            for (size_t i = 1; i + 1 < nx; i++) {
                for (int side = 0; side < 2; side++) {
                    const size_t c = (side ? j : j - 1) * nx + i;
                    if (dist[c] == TRN_D8_FLAT_EXIT) continue;
                    const size_t across = side ? c - nx : c + nx;
                    for (int di = -1; di <= 1; di++) {
                        const size_t m = (size_t)((ptrdiff_t)across + di);
                        if (dist[m] == TRN_D8_FLAT_EXIT || dist[m] == TRN_D8_FLAT_UNKNOWN ||
                            g->filled[m] != g->filled[c] || dist[m] + 1 >= dist[c])
                            continue;
                        dist[c] = dist[m] + 1;
                        const int owner = side ? k : k - 1;
                        ok = fifo_push(&q[owner], &q[owner].trace, (uint32_t)c) && ok;
                        changed = true;
                    }
                }
            }
        }
        if (!changed || !ok) break;
#pragma omp parallel for schedule(dynamic, 1) num_threads(dr_team(parts)) reduction(&& : ok)
        for (int k = 0; k < parts; k++)
            ok = flat_relax(&q[k], row[k] * nx, row[k + 1] * nx, dist) && ok;
        if (!ok) break;
    }
    if (!ok) rc = DR_NOMEM;
done:; /* a label cannot precede a declaration before C23 (clang refuses it) */
    size_t queued = 0;
    for (int k = 0; q && k < parts; k++) {
        queued += q[k].temp_peak;
        free(q[k].trace.items);
    }
    temp_change(g, 0, queued);
    temp_change(g, queued, 0);
    free(q);
    free(row);
    return rc;
}

/* Strips for the parallel fill: one per thread where each gets at least DR_STRIP_ROWS rows and
 * the grid is worth it; asked: the caller's count (at least 3 rows a strip). */
#define DR_STRIP_ROWS 256u
#define DR_STRIP_MIN_SAMPLES ((size_t)1u << 18)

/* Cores no other process is running on now: the online CPUs less the runnable tasks of
 * /proc/loadavg other than this process's (its other threads sleep between parallel regions),
 * read for up to 100 us while fewer than `want` look free (trn_cores_idle_within).
 * A strip the machine cannot run at once costs more than it saves (its threads wait for each
 * other at every pass, and strip edges add work): on a busy machine the work stays on one
 * strip. The outputs are the same for any strip count, so this choice never changes a result. */
static int idle_cores(long want)
{
    const long idle = trn_cores_idle_within(want, TRN_IDLE_WINDOW_NS, TRN_IDLE_OWN_ASLEEP);
    return idle > 0 ? (int)idle : 0;
}

static int strip_count(const dr_state *s, int asked)
{
    if (asked > 0) {
        const size_t most = s->nz / 3;
        return most < 1 ? 1 : (size_t)asked > most ? (int)most : asked;
    }
    int t = 1;
#ifdef _OPENMP
    t = omp_get_max_threads();
#endif
    if (s->n < DR_STRIP_MIN_SAMPLES) return 1;
    const int free_cores = 1 + idle_cores(t - 1);
    if (t > free_cores) t = free_cores;
    const size_t most = s->nz / DR_STRIP_ROWS;
    return (size_t)t > most ? (int)(most < 1 ? 1 : most) : t;
}

/* In-degrees of samples 1..nx-2 of an inner row: how many neighbours' codes (low halves of
 * the direction bytes) point at each; branch-free so the compiler vectorises it. One bit per
 * neighbour, then the bits counted: GCC 12.2 at -O3 miscompiles the plain sum of the eight
 * comparisons in this loop's vector tail (-1 added where 1 is meant, on some samples near the
 * row's end). */
KERNEL void indeg_row_body(const uint8_t *RESTRICT up, const uint8_t *RESTRICT mid,
                           const uint8_t *RESTRICT down, size_t nx, uint8_t *RESTRICT count)
{
    for (size_t i = 1; i + 1 < nx; i++) {
        unsigned m = ((mid[i + 1] & DR_CODE) == 4) | ((down[i + 1] & DR_CODE) == 5) << 1 |
                     ((down[i] & DR_CODE) == 6) << 2 | ((down[i - 1] & DR_CODE) == 7) << 3 |
                     ((mid[i - 1] & DR_CODE) == 0) << 4 | ((up[i - 1] & DR_CODE) == 1) << 5 |
                     ((up[i] & DR_CODE) == 2) << 6 | ((up[i + 1] & DR_CODE) == 3) << 7;
        m = (m & 0x55u) + (m >> 1 & 0x55u);
        m = (m & 0x33u) + (m >> 2 & 0x33u);
        count[i] = (uint8_t)((m & 0x0Fu) + (m >> 4));
    }
}

typedef void (*indeg_row_fn)(const uint8_t *, const uint8_t *, const uint8_t *, size_t, uint8_t *);

static void indeg_row_default(const uint8_t *up, const uint8_t *mid, const uint8_t *down, size_t nx,
                              uint8_t *count)
{
    indeg_row_body(up, mid, down, nx, count);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void indeg_row_avx2(const uint8_t *up, const uint8_t *mid, const uint8_t *down,
                                       size_t nx, uint8_t *count)
{
    indeg_row_body(up, mid, down, nx, count);
}
#endif

static indeg_row_fn indeg_row_variant(void)
{
#if HAVE_AVX2_VARIANT
    if (__builtin_cpu_supports("avx2")) return indeg_row_avx2;
#endif
    return indeg_row_default;
}

/* In-degrees of rows [j0, j1) into the high half of their direction bytes (see DR_INDEG_ONE),
 * and accumulation 1. */
static bool indeg_rows(dr_state *s, size_t j0, size_t j1)
{
    const size_t nx = s->nx, nz = s->nz;
    const indeg_row_fn row = indeg_row_variant();
    uint8_t *count = malloc(nx);
    if (!count) return false;
    for (size_t j = j0; j < j1; j++) {
        const size_t r = j * nx;
        uint8_t *dr = s->dir + r;
        const bool inner = j > 0 && j + 1 < nz && nx >= 3;
        if (inner) {
            row(dr - nx, dr, dr + nx, nx, count);
            for (size_t i = 1; i + 1 < nx; i++)
                dr[i] = (uint8_t)((dr[i] & DR_CODE) | count[i] << 4);
        }
        /* The border (every sample of an outer row, the ends of an inner one) with checks. */
        for (size_t i = 0; i < nx; i += inner ? nx - 1 : 1) {
            unsigned n = 0;
            for (int d = 0; d < 8; d++) {
                const ptrdiff_t ni = (ptrdiff_t)i + TRN_D8_DI[d], nj = (ptrdiff_t)j + TRN_D8_DJ[d];
                if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)nx || nj >= (ptrdiff_t)nz) continue;
                n += (s->dir[(size_t)((ptrdiff_t)(r + i) + s->off[d])] & DR_CODE) ==
                     ((unsigned)d + 4u) % 8u;
            }
            dr[i] = (uint8_t)((dr[i] & DR_CODE) | n << 4);
        }
        for (size_t i = 0; i < nx; i++)
            s->acc[r + i] = 1;
    }
    free(count);
    return true;
}

trn_status trn_drainage_compute(const trn_field *field, double sea_level, trn_drainage *out,
                                trn_progress_fn progress, void *user, trn_error *err)
{
    return trn_drainage_compute_strips(field, sea_level, 0, out, progress, user, err);
}

trn_status trn_drainage_basins(const trn_field *source, const float *filled, trn_basin **basins,
                               size_t *count, trn_error *err)
{
    if (basins) *basins = NULL;
    if (count) *count = 0;
    if (!source || !source->heights || !filled || !basins || !count || source->cells_x == 0 ||
        source->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage basins: expected the source field, its filled surface and "
                             "two outputs");
    dr_state s;
    memset(&s, 0, sizeof s);
    s.nx = (size_t)source->cells_x + 1u;
    s.nz = (size_t)source->cells_z + 1u;
    if (!trn_mul_size(s.nx, s.nz, &s.n) || s.n >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "drainage basins: expected fewer than 2^32-1 samples, found %zux%zu",
                             s.nx, s.nz);
    s.h = source->heights;
    s.filled = (float *)filled; /* read only: the scan never writes it */
    s.acc = big_alloc(s.n * sizeof *s.acc);
    if (!s.acc) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    for (int d = 0; d < 8; d++)
        s.off[d] = TRN_D8_DI[d] + TRN_D8_DJ[d] * (ptrdiff_t)s.nx;
    const int strips = strip_count(&s, 0);
    const int rc = find_basins(&s, strips > 1 ? strips : 1, basins, count);
    free(s.acc);
    return rc == DR_OK ? TRN_OK : trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
}

trn_status trn_drainage_compute_strips(const trn_field *field, double sea_level, int strips,
                                       trn_drainage *out, trn_progress_fn progress, void *user,
                                       trn_error *err)
{
    if (!field || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage: expected a field and an output, found NULL");
    if (!field->heights || field->cells_x == 0 || field->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage: expected a field with heights and at least one cell per "
                             "axis, found %ux%u cells%s",
                             field->cells_x, field->cells_z,
                             field->heights ? "" : " and no heights");
    if (!(field->size_x > 0.0) || !(field->size_z > 0.0) || !isfinite(field->size_x) ||
        !isfinite(field->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage: expected a positive finite field size, found %g x %g",
                             field->size_x, field->size_z);
    dr_state s;
    memset(&s, 0, sizeof s);
    s.nx = (size_t)field->cells_x + 1u;
    s.nz = (size_t)field->cells_z + 1u;
    if (!trn_mul_size(s.nx, s.nz, &s.n) || s.n >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "drainage: expected fewer than 2^32-1 samples, found %zux%zu", s.nx,
                             s.nz);
    s.h = field->heights;
    strips = strip_count(&s, strips);
    s.filled = big_alloc(s.n * sizeof *s.filled);
    s.dir = big_alloc(s.n);
    s.acc = big_alloc(s.n * sizeof *s.acc);
    trn_basin *basins = NULL;
    size_t basin_count = 0;
    trn_status st = TRN_OK;
    if (!s.filled || !s.dir || !s.acc) goto no_memory;
    for (int d = 0; d < 8; d++)
        s.off[d] = TRN_D8_DI[d] + TRN_D8_DJ[d] * (ptrdiff_t)s.nx;
    const trn_progress whole = trn_progress_make(progress, user);
    s.progress = trn_progress_sub(&whole, 0.0, 0.7);

    size_t first_nan = SIZE_MAX;
#ifdef DR_TIMES
    dr_t0 = dr_now();
#endif
    int rc = fill_watersheds(&s, strips, sea_level, &first_nan, &basins, &basin_count);
    if (first_nan != SIZE_MAX) {
        st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                           "drainage: expected finite heights, found NaN at sample (%zu, %zu)",
                           first_nan % s.nx, first_nan / s.nx);
        goto fail;
    }
    if (rc == DR_NOMEM) goto no_memory;
    if (rc == DR_CANCEL) goto cancelled;
    if (trn_progress_report(&s.progress, 1.0, "drainage")) goto cancelled;

    /* Directions: steepest strict descent on the filled surface; on a flat, towards the
     * nearest sample of the same height that has one (d8_rules.h); the same rules as the
     * tiled drainage, so both give the same bytes. Passes over rows run on the fill's threads,
     * DR_BLOCK_ROWS rows to a parallel region so progress is reported (and cancelling is seen)
     * between them. */
    {
        const int team = strips > 1 ? dr_team(strips) : 1;
        const size_t nx = s.nx, nz = s.nz;
        const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        double inv[8];
        trn_d8_inverse_lengths(dx, dz, inv);
        const trn_progress dir_p = trn_progress_sub(&whole, 0.7, 0.85);
        /* s.acc holds each sample's flat distance until the accumulation. */
        uint32_t *dist = s.acc;
        size_t flats = 0;
        const steepest_row_fn steepest = steepest_row_variant();
        /* One row of codes per thread. */
        uint8_t *rowbuf = malloc((size_t)team * nx);
        if (!rowbuf) goto no_memory;
        for (size_t b = 0; b < nz; b += DR_BLOCK_ROWS) {
            if (trn_progress_report(&dir_p, (double)b / (double)nz * 0.4, "drainage")) {
                free(rowbuf);
                goto cancelled;
            }
            const size_t e = b + DR_BLOCK_ROWS < nz ? b + DR_BLOCK_ROWS : nz;
#pragma omp parallel num_threads(team) reduction(+ : flats)
            {
                int tid = 0;
#ifdef _OPENMP
                tid = omp_get_thread_num();
#endif
                uint8_t *best = rowbuf + (size_t)tid * nx;
#pragma omp for schedule(static)
                for (size_t j = b; j < e; j++) {
                    const size_t r = j * nx;
                    for (size_t i = 0; i < nx; i++)
                        dist[r + i] = TRN_D8_FLAT_EXIT;
                    if (j == 0 || j + 1 == nz || nx < 3) continue; /* all outlets */
                    steepest(s.filled + r - nx, s.filled + r, s.filled + r + nx, nx, inv, best);
                    for (size_t i = 1; i + 1 < nx; i++) {
                        const size_t c = r + i;
                        if (s.dir[c] == TRN_DRAIN_OUTLET) continue;
                        if (best[i] != 0xFFu) {
                            s.dir[c] = best[i];
                        } else {
                            dist[c] = TRN_D8_FLAT_UNKNOWN;
                            flats++;
                        }
                    }
                }
            }
        }
        free(rowbuf);
        TICK("steepest");
        if (flats) {
            /* Breadth-first from every flat sample next to its flat's edge (the distances do
             * not depend on the order the seeds are queued in). */
            if (trn_progress_report(&dir_p, 0.4, "drainage")) goto cancelled;
            if (flat_distances(&s, strips > 1 ? strips : 1, dist) != DR_OK) goto no_memory;
            const pick_row_fn pick = pick_row_variant();
            for (size_t b = 1; b + 1 < nz; b += DR_BLOCK_ROWS) {
                if (trn_progress_report(&dir_p, 0.6 + (double)b / (double)nz * 0.2, "drainage"))
                    goto cancelled;
                const size_t e = b + DR_BLOCK_ROWS < nz - 1 ? b + DR_BLOCK_ROWS : nz - 1;
#pragma omp parallel for schedule(static) num_threads(team)
                for (size_t j = b; j < e; j++) {
                    const size_t r = j * nx;
                    pick(s.filled + r - nx, s.filled + r, s.filled + r + nx, dist + r - nx,
                         dist + r, dist + r + nx, nx, s.dir + r);
                }
            }
        }
        TICK("flats");
        /* In-degrees, in the high half of each direction byte: each sample counts the
         * neighbours that drain into it; the accumulation's starting ones set to 1 on the same
         * pass. A thread writes the bytes of its own rows only while it reads the neighbours'
         * low halves, so the first and last row of each thread's rows wait until the threads
         * are done. */
        for (size_t b = 0; b < nz; b += DR_BLOCK_ROWS) {
            if (trn_progress_report(&dir_p, 0.8 + (double)b / (double)nz * 0.2, "drainage"))
                goto cancelled;
            const size_t e = b + DR_BLOCK_ROWS < nz ? b + DR_BLOCK_ROWS : nz;
            const size_t rows = e - b;
            const int chunks = team > 1 && rows >= 3 * (size_t)team ? team : 1;
            bool counted = true;
#pragma omp parallel for schedule(static) num_threads(chunks) reduction(&& : counted)
            for (int t = 0; t < chunks; t++) {
                const size_t r0 = b + rows * (size_t)t / (size_t)chunks,
                             r1 = b + rows * (size_t)(t + 1) / (size_t)chunks;
                if (chunks == 1)
                    counted = indeg_rows(&s, r0, r1) && counted;
                else
                    counted = indeg_rows(&s, r0 + 1, r1 - 1) && counted;
            }
            for (int t = 0; chunks > 1 && t < chunks; t++) {
                const size_t r0 = b + rows * (size_t)t / (size_t)chunks,
                             r1 = b + rows * (size_t)(t + 1) / (size_t)chunks;
                counted = indeg_rows(&s, r0, r0 + 1) && counted;
                counted = indeg_rows(&s, r1 - 1, r1) && counted;
            }
            if (!counted) goto no_memory;
        }
        /* Accumulation: start at every sample nothing drains into and walk downstream while
         * the next sample has received all its inflow. Each strip of rows walks its own
         * samples at once; water leaving a strip is kept as (target, amount) and delivered
         * afterwards on one thread, walking on where it completes a sample's inflow. The sums
         * are of integers, so the order they are added in changes nothing. (Blocks of 32-512
         * rows on one thread, to keep each walk within the cache, saved nothing on the ridged
         * 4096^2 bench terrain: the walks' 0.165 s CPU became 0.11-0.15 s plus 0.02-0.07 s
         * delivering what crossed blocks.) */
        TICK("indeg");
        const trn_progress acc_p = trn_progress_sub(&whole, 0.85, 1.0);
        if (trn_progress_report(&acc_p, 0.0, "drainage")) goto cancelled;
        const int parts = strips > 1 ? strips : 1;
        dr_flows *flows = calloc((size_t)parts, sizeof *flows);
        if (!flows) goto no_memory;
        bool flows_ok = true;
#pragma omp parallel for schedule(dynamic, 1) num_threads(team) reduction(&& : flows_ok)
        for (int k = 0; k < parts; k++) {
            const size_t lo = nz * (size_t)k / (size_t)parts * nx,
                         hi = nz * (size_t)(k + 1) / (size_t)parts * nx;
            uint8_t *const dir = s.dir;
            uint32_t *const acc = s.acc;
            ptrdiff_t off[8];
            memcpy(off, s.off, sizeof off);
            /* The sources (nothing drains into them; no walk ever reaches one) of each row are
             * listed first without a branch, then walked from: a test per sample of whether
             * to start would be mispredicted about as often as not. */
            uint32_t *src = malloc(nx * sizeof *src);
            if (!src) {
                flows_ok = false;
                continue;
            }
            for (size_t r0 = lo; r0 < hi; r0 += nx) {
                size_t ns = 0;
                for (size_t i = 0; i < nx; i++) {
                    src[ns] = (uint32_t)i;
                    ns += dir[r0 + i] <= DR_CODE;
                }
                for (size_t q = 0; q < ns; q++) {
                    size_t c = r0 + src[q];
                    for (;;) {
                        const unsigned dc = dir[c];
                        dir[c] = (uint8_t)(dc | DR_DONE);
                        if (dc == TRN_DRAIN_OUTLET) break;
                        const size_t t = (size_t)((ptrdiff_t)c + off[dc]);
                        if (t < lo || t >= hi) {
                            flows_ok = flows_add(&flows[k], (uint32_t)t, acc[c]) && flows_ok;
                            break;
                        }
                        acc[t] += acc[c];
                        const unsigned dt = dir[t] - DR_INDEG_ONE;
                        dir[t] = (uint8_t)dt;
                        if (dt > DR_CODE) break;
                        c = t;
                    }
                }
            }
            free(src);
        }
        TICK("walks");
        size_t flow_bytes = 0;
        for (int k = 0; k < parts; k++)
            flow_bytes += flows[k].capacity * sizeof *flows[k].items;
        temp_change(&s, 0, flow_bytes);
        temp_change(&s, flow_bytes, 0);
        const bool stop = !flows_ok || trn_progress_report(&acc_p, 0.8, "drainage");
        for (int k = 0; k < parts && !stop; k++) {
            for (size_t q = 0; q < flows[k].count; q++) {
                size_t c = flows[k].items[q].target;
                s.acc[c] += flows[k].items[q].amount;
                s.dir[c] = (uint8_t)(s.dir[c] - DR_INDEG_ONE);
                if (s.dir[c] > DR_CODE) continue;
                for (;;) {
                    const unsigned dc = s.dir[c];
                    s.dir[c] = (uint8_t)(dc | DR_DONE);
                    if (dc == TRN_DRAIN_OUTLET) break;
                    const size_t t = (size_t)((ptrdiff_t)c + s.off[dc]);
                    s.acc[t] += s.acc[c];
                    const unsigned dt = s.dir[t] - DR_INDEG_ONE;
                    s.dir[t] = (uint8_t)dt;
                    if (dt > DR_CODE) break;
                    c = t;
                }
            }
        }
        TICK("deliver");
        /* The done marks off again. */
#pragma omp parallel for schedule(static) num_threads(team)
        for (size_t j = 0; j < nz; j++)
            for (size_t c = j * nx; c < (j + 1) * nx; c++)
                s.dir[c] = (uint8_t)(s.dir[c] & DR_CODE);
        TICK("unmark");
        for (int k = 0; k < parts; k++)
            free(flows[k].items);
        free(flows);
        if (!flows_ok) goto no_memory;
        if (stop) goto cancelled;
        if (trn_progress_report(&acc_p, 1.0, "drainage")) goto cancelled;
    }
    out->cells_x = field->cells_x;
    out->cells_z = field->cells_z;
    out->size_x = field->size_x;
    out->size_z = field->size_z;
    out->sea_level = sea_level;
    out->filled = s.filled;
    out->flow_dir = s.dir;
    out->accumulation = s.acc;
    out->basins = basins;
    out->basin_count = basin_count;
    out->temp_bytes_peak = s.temp_peak;
    return TRN_OK;

no_memory:
    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                       "drainage: out of memory for %zux%zu samples", s.nx, s.nz);
    goto fail;
cancelled:
    st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "drainage: cancelled");
fail:
    state_free(&s);
    free(basins);
    free(s.filled);
    free(s.dir);
    free(s.acc);
    return st;
}

void trn_drainage_dispose(trn_drainage *drainage)
{
    if (!drainage) return;
    free(drainage->filled);
    free(drainage->flow_dir);
    free(drainage->accumulation);
    free(drainage->basins);
    memset(drainage, 0, sizeof *drainage);
}

trn_status trn_drainage_accumulation_mask(const trn_drainage *drainage, trn_mask *mask,
                                          trn_error *err)
{
    if (!drainage || !mask || !drainage->flow_dir || !drainage->accumulation)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage mask: expected a computed drainage and a mask, found NULL");
    trn_mask m;
    trn_status st = trn_mask_init(&m, drainage->cells_x, drainage->cells_z, err);
    if (st != TRN_OK) return st;
    const size_t n = ((size_t)drainage->cells_x + 1u) * ((size_t)drainage->cells_z + 1u);
    uint32_t top = 0;
    for (size_t k = 0; k < n; k++)
        if (drainage->flow_dir[k] != TRN_DRAIN_OUTLET && drainage->accumulation[k] > top)
            top = drainage->accumulation[k];
    const double scale = top ? 1.0 / (double)top : 0.0;
    for (size_t k = 0; k < n; k++)
        m.values[k] = drainage->flow_dir[k] == TRN_DRAIN_OUTLET
                          ? 0.0f
                          : (float)((double)drainage->accumulation[k] * scale);
    *mask = m;
    return TRN_OK;
}
