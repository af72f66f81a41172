/* Drainage: priority-flood depression filling with slope tracing, D8 directions, accumulation. */
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
#include "core/progress.h"
#include "terrane/drainage.h"
#include "gen/d8.h"
#include "gen/d8_rules.h"
#include "gen/drainage_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* flow_dir value of a sample the flood has not reached yet. */
#define DR_UNSEEN 0xFFu
/* During the flood a reached sample's flow_dir holds the code of the neighbour it was reached
 * from (DR_CODE bits) and two flags: DR_QUEUED, it waits in the heap or the level queue and is
 * expanded when taken from there; DR_EARLY, it only waits because a lower neighbour was
 * unreached, so it may be expanded (traced) as soon as none is, and its heap entry is then
 * skipped. All flags are clear when the flood ends. */
#define DR_CODE 0x0Fu
#define DR_QUEUED 0x10u
#define DR_EARLY 0x20u
/* Marks a sample whose accumulation is final (in the in-degree array). */
#define DR_DONE 0xFFu
/* Progress and cancellation are checked every this many samples (a power of two). */
#define DR_TICK_MASK 0xFFFFFu
/* Output arrays at least this large are 2 MiB aligned and marked for transparent huge pages. */
#define DR_HUGE_PAGE ((size_t)2u << 20)

/* ---- working memory, tracked so the peak can be reported ---- */

/* The priority queue: a radix heap (Ahuja et al. 1990) over keys sortable height << 32 |
 * sample index. The flood only ever pushes keys above the last one taken (new samples are
 * higher than the level being flooded), which is all a radix heap needs; keys are unique, so
 * samples leave in exactly key order: by height, then by index. Bucket b > 0 holds keys whose
 * highest bit differing from the last key taken is bit b-1; pushing is O(1) and each key
 * moves down a few buckets at most, each move a sequential scan. */
typedef struct dr_bucket {
    uint64_t *items;
    size_t count, capacity;
} dr_bucket;

typedef struct dr_heap {
    dr_bucket buckets[65];
    uint64_t last;
    size_t count;
} dr_heap;

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

/* Spill levels between watershed labels: an open-addressing map from the pair (a < b, packed
 * as a << 32 | b) to the lowest level at which the two touch. */
typedef struct dr_edges {
    uint64_t *key; /* DR_NO_KEY where empty */
    float *w;
    size_t count, capacity; /* capacity: a power of two */
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

static bool edges_add(dr_edges *e, uint32_t a, uint32_t b, float w)
{
    if (2 * (e->count + 1) > e->capacity && !edges_grow(e)) return false;
    const uint64_t k = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
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
    uint32_t *acc; /* during a strip's flood (labels): the watershed label of each sample */
    ptrdiff_t off[8];
    dr_heap heap;
    /* raised samples; unraised ones at the current level; higher ones waiting to be traced
     * once the pit queue is empty; the trace's own queue; samples waiting for a lower
     * neighbour (DR_EARLY), moved to the heap only when the heap is next needed */
    dr_fifo pit, level, slope, trace, defer;
    bool labels; /* a strip of the parallel fill: each reached sample takes its parent's label */
    dr_edges *edges; /* with labels: where touching samples of two labels meet */
    size_t temp_now, temp_peak;
    size_t ticks;
    trn_progress progress;
    bool cancelled;
} dr_state;

/* The flood reaches samples all over the grid in height order, so the output arrays are used
 * at random: on 4 KiB pages nearly every step misses the TLB (huge pages make the 4096^2 flood
 * ~15% faster). free() releases the block. */
static void *big_alloc(size_t bytes)
{
    if (bytes < 4 * DR_HUGE_PAGE) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, DR_HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes & ~(DR_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

static void temp_change(dr_state *s, size_t old_bytes, size_t new_bytes)
{
    s->temp_now = s->temp_now - old_bytes + new_bytes;
    if (s->temp_now > s->temp_peak) s->temp_peak = s->temp_now;
}

/* Heights as unsigned keys with the same order (negative floats reversed). */
static inline uint32_t sortable_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline unsigned bucket_of(uint64_t key, uint64_t last)
{
    const uint64_t x = key ^ last;
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

static bool bucket_add(dr_state *s, dr_bucket *b, uint64_t key)
{
    if (b->count == b->capacity) {
        size_t cap = b->capacity ? b->capacity * 2 : 256;
        uint64_t *p = realloc(b->items, cap * sizeof *p);
        if (!p) return false;
        temp_change(s, b->capacity * sizeof *p, cap * sizeof *p);
        b->items = p;
        b->capacity = cap;
    }
    b->items[b->count++] = key;
    return true;
}

static bool heap_push(dr_state *s, uint32_t idx, float height)
{
    const uint64_t key = ((uint64_t)sortable_bits(height) << 32) | idx;
    if (!bucket_add(s, &s->heap.buckets[bucket_of(key, s->heap.last)], key)) return false;
    s->heap.count++;
    return true;
}

/* The smallest key (heap not empty), left in bucket 0; it becomes the last key taken. Moving
 * a bucket's keys down can grow the lower buckets: false on no memory. */
static bool heap_min(dr_state *s, uint64_t *out)
{
    dr_heap *hp = &s->heap;
    if (hp->buckets[0].count == 0) {
        unsigned i = 1;
        while (hp->buckets[i].count == 0)
            i++;
        dr_bucket *b = &hp->buckets[i];
        uint64_t lo = b->items[0];
        for (size_t k = 1; k < b->count; k++)
            if (b->items[k] < lo) lo = b->items[k];
        hp->last = lo;
        for (size_t k = 0; k < b->count; k++) {
            const uint64_t key = b->items[k];
            if (!bucket_add(s, &hp->buckets[bucket_of(key, lo)], key)) return false;
        }
        b->count = 0;
        /* A large bucket just emptied gives its memory back: it was the frontier's bulk and
         * keeping it would double the working set for the rest of the flood. */
        if (b->capacity > 1024) {
            temp_change(s, b->capacity * sizeof *b->items, 0);
            free(b->items);
            b->items = NULL;
            b->capacity = 0;
        }
    }
    *out = hp->buckets[0].items[0];
    return true;
}

static bool heap_level_left(const dr_heap *hp)
{
    for (int i = 1; i <= 32; i++)
        if (hp->buckets[i].count) return true;
    return false;
}

static void heap_drop_min(dr_heap *hp)
{
    hp->buckets[0].count = 0; /* keys are unique: bucket 0 holds only the minimum */
    hp->count--;
}

static void heap_free(dr_state *s)
{
    for (int i = 0; i < 65; i++) {
        temp_change(s, s->heap.buckets[i].capacity * sizeof(uint64_t), 0);
        free(s->heap.buckets[i].items);
        s->heap.buckets[i].items = NULL;
        s->heap.buckets[i].count = s->heap.buckets[i].capacity = 0;
    }
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

/* Progress every DR_TICK_MASK+1 samples reached; sets cancelled when asked to stop. */
static inline bool tick(dr_state *s)
{
    if ((++s->ticks & DR_TICK_MASK) != 0) return false;
    if (trn_progress_report(&s->progress, (double)s->ticks / (double)s->n, "drainage"))
        s->cancelled = true;
    return s->cancelled;
}

/* True when an interior sample has an unreached neighbour lower than itself: it may border a
 * depression, so it has to wait in the heap for its level. */
static inline bool has_lower_unseen(const dr_state *s, size_t c)
{
    const float hc = s->h[c];
    for (int d = 0; d < 8; d++) {
        const size_t n = (size_t)((ptrdiff_t)c + s->off[d]);
        if (s->dir[n] == DR_UNSEEN && s->h[n] < hc) return true;
    }
    return false;
}

/* Zhou et al. 2016: a sample above the current level with no lower unreached neighbour drains
 * into what is already reached, so its filled height is its own height and the slope above it
 * can be reached breadth-first without the heap. Flat neighbours go to the heap (so flats are
 * ordered breadth-first from all their entries). A sample with a lower unreached neighbour may
 * bound a depression; it waits (DR_EARLY, in the defer queue) and is traced from here as soon
 * as a neighbour's expansion finds none left, which is what happens to nearly all of them: on
 * landform terrain fewer than one in five ever reaches the heap, and a heap entry is costly as
 * it is expanded long after, at a random place in the grid. */
static bool trace_from(dr_state *s, uint32_t start)
{
    if (has_lower_unseen(s, start)) {
        s->dir[start] = (uint8_t)(s->dir[start] | DR_QUEUED | DR_EARLY);
        return fifo_push(s, &s->defer, start);
    }
    if (!fifo_push(s, &s->trace, start)) return false;
    while (s->trace.count) {
        const uint32_t t = fifo_pop(&s->trace);
        const float ht = s->h[t];
        if (tick(s)) return true;
        for (int d = 0; d < 8; d++) {
            const uint32_t m = (uint32_t)((ptrdiff_t)t + s->off[d]);
            const unsigned dm = s->dir[m];
            const float hm = s->h[m];
            if (dm != DR_UNSEEN) {
                if (s->labels && s->acc[m] != s->acc[t] &&
                    !edges_add(s->edges, s->acc[m], s->acc[t], fmaxf(s->filled[m], s->filled[t])))
                    return false;
                /* t was m's last lower unreached neighbour: trace on from m now. */
                if ((dm & DR_EARLY) && hm > ht && !has_lower_unseen(s, m)) {
                    s->dir[m] = (uint8_t)(dm & DR_CODE);
                    if (!fifo_push(s, &s->trace, m)) return false;
                }
                continue;
            }
            s->filled[m] = hm;
            if (s->labels) s->acc[m] = s->acc[t];
            const unsigned code = (unsigned)(d + 4) & 7u;
            bool ok;
            if (hm == ht) {
                s->dir[m] = (uint8_t)(code | DR_QUEUED);
                ok = heap_push(s, m, hm);
            } else if (has_lower_unseen(s, m)) {
                s->dir[m] = (uint8_t)(code | DR_QUEUED | DR_EARLY);
                ok = fifo_push(s, &s->defer, m);
            } else {
                s->dir[m] = (uint8_t)code;
                ok = fifo_push(s, &s->trace, m);
            }
            if (!ok) return false;
        }
    }
    return true;
}

/* Reach the unreached neighbours of c (Barnes et al. 2014 with the pit queue). */
static bool expand(dr_state *s, uint32_t c)
{
    const float level = s->filled[c];
    bool edge = false;
    size_t ci = 0, cj = 0;
    if (s->dir[c] == TRN_DRAIN_OUTLET) {
        ci = c % s->nx;
        cj = c / s->nx;
        edge = ci == 0 || cj == 0 || ci + 1 == s->nx || cj + 1 == s->nz;
    }
    for (int d = 0; d < 8; d++) {
        if (edge) {
            const ptrdiff_t ni = (ptrdiff_t)ci + TRN_D8_DI[d], nj = (ptrdiff_t)cj + TRN_D8_DJ[d];
            if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)s->nx || nj >= (ptrdiff_t)s->nz) continue;
        }
        const uint32_t n = (uint32_t)((ptrdiff_t)c + s->off[d]);
        const float hn = s->h[n];
        const unsigned dn = s->dir[n];
        if (dn != DR_UNSEEN) {
            /* Two labels touch here (every touching pair is seen once one of the two is
             * expanded, the other already reached): the higher filled height is where one
             * can spill into the other. */
            if (s->labels && s->acc[n] != s->acc[c] &&
                !edges_add(s->edges, s->acc[n], s->acc[c], fmaxf(s->filled[n], s->filled[c])))
                return false;
            /* c was n's last lower unreached neighbour: n can be traced (see trace_from). */
            if ((dn & DR_EARLY) && hn > s->h[c] && !has_lower_unseen(s, n)) {
                s->dir[n] = (uint8_t)(dn & DR_CODE);
                if (!fifo_push(s, &s->slope, n)) return false;
            }
            continue;
        }
        s->dir[n] = (uint8_t)((d + 4) & 7);
        if (s->labels) s->acc[n] = s->acc[c];
        if (hn < level) {
            /* + 0.0f: a raised sample holds +0, never -0, whichever zero spilled first, so
             * the tiled fill (which meets the level by another route) writes the same bits. */
            s->filled[n] = level + 0.0f;
            if (!fifo_push(s, &s->pit, n)) return false;
        } else if (hn == level) {
            s->filled[n] = hn;
            s->dir[n] = (uint8_t)(s->dir[n] | DR_QUEUED);
            if (!fifo_push(s, &s->level, n)) return false;
        } else {
            /* Traced later: by then a depression being flooded is complete, so a shore sample
             * no longer sees lower unreached water and can be traced instead of queued. */
            s->filled[n] = hn;
            if (!fifo_push(s, &s->slope, n)) return false;
        }
    }
    return true;
}

enum { DR_OK, DR_NOMEM, DR_CANCEL };

/* The flood of a grid (or of one strip, whose rows next to other strips are marked as outlets):
 * seeds are the outlets next to an unreached sample, in index order. */
static int flood_run(dr_state *s)
{
    /* Seeds: outlets next to something unreached, in index order. */
    for (size_t j = 0; j < s->nz; j++) {
        for (size_t i = 0; i < s->nx; i++) {
            const size_t k = j * s->nx + i;
            if (s->dir[k] != TRN_DRAIN_OUTLET) continue;
            bool inner = false;
            for (int d = 0; d < 8 && !inner; d++) {
                const ptrdiff_t ni = (ptrdiff_t)i + TRN_D8_DI[d], nj = (ptrdiff_t)j + TRN_D8_DJ[d];
                if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)s->nx || nj >= (ptrdiff_t)s->nz) continue;
                inner = s->dir[(size_t)nj * s->nx + (size_t)ni] == DR_UNSEEN;
            }
            if (s->labels) {
                /* Two outlets that touch may never be expanded (nothing unreached next to
                 * either), so the flood would not see where their labels meet. */
                for (int d = 0; d < 4; d++) {
                    const ptrdiff_t ni = (ptrdiff_t)i + TRN_D8_DI[d],
                                    nj = (ptrdiff_t)j + TRN_D8_DJ[d];
                    if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)s->nx || nj >= (ptrdiff_t)s->nz)
                        continue;
                    const size_t m = (size_t)nj * s->nx + (size_t)ni;
                    if ((s->dir[m] & DR_CODE) == TRN_DRAIN_OUTLET && s->acc[m] != s->acc[k] &&
                        !edges_add(s->edges, s->acc[m], s->acc[k], fmaxf(s->h[m], s->h[k])))
                        return DR_NOMEM;
                }
            }
            if (!inner) continue;
            s->dir[k] = (uint8_t)(s->dir[k] | DR_QUEUED);
            if (!heap_push(s, (uint32_t)k, s->h[k])) return DR_NOMEM;
        }
    }
    /* The flood: raised samples first (pit queue), then the heap's lowest. */
    for (;;) {
        uint32_t c;
        if (s->pit.count) {
            c = fifo_pop(&s->pit);
        } else if (s->slope.count) {
            if (!trace_from(s, fifo_pop(&s->slope))) return DR_NOMEM;
            if (s->cancelled) return DR_CANCEL;
            continue;
        } else if (s->level.count) {
            c = fifo_pop(&s->level);
            const unsigned dc = s->dir[c];
            if (!(dc & DR_QUEUED)) continue; /* traced early (DR_EARLY) */
            s->dir[c] = (uint8_t)(dc & DR_CODE);
        } else if (s->defer.count) {
            /* The heap is needed next: samples still waiting for a lower neighbour enter it
             * now, at their own height (above every level taken so far). */
            while (s->defer.count) {
                const uint32_t m = fifo_pop(&s->defer);
                if ((s->dir[m] & DR_EARLY) && !heap_push(s, m, s->h[m])) return DR_NOMEM;
            }
            continue;
        } else if (s->heap.count) {
            /* Open a new level: every heap sample at it enters the level queue together, so
             * a flat is reached breadth-first from all its entries at once. */
            uint64_t key;
            if (!heap_min(s, &key)) return DR_NOMEM;
            for (;;) {
                heap_drop_min(&s->heap);
                if (!fifo_push(s, &s->level, (uint32_t)key)) return DR_NOMEM;
                /* Keys of the same height differ from the last one only in the index bits,
                 * so they sit in buckets 1..32; stop without looking higher, as taking a
                 * higher key now would break the radix heap's monotone order. */
                if (!heap_level_left(&s->heap)) break;
                if (!heap_min(s, &key)) return DR_NOMEM;
            }
            continue;
        } else {
            break;
        }
        if (tick(s) || !expand(s, c)) {
            if (s->cancelled) return DR_CANCEL;
            return DR_NOMEM;
        }
        if (s->cancelled) return DR_CANCEL;
    }

    return DR_OK;
}

/* Frees the flood's queues and heap. */
static void flood_release(dr_state *s)
{
    heap_free(s);
    dr_fifo *q[5] = {&s->pit, &s->level, &s->slope, &s->trace, &s->defer};
    for (int k = 0; k < 5; k++) {
        temp_change(s, q[k]->capacity * sizeof(uint32_t), 0);
        free(q[k]->items);
        q[k]->items = NULL;
        q[k]->capacity = q[k]->head = q[k]->count = 0;
    }
}

static int basin_cmp(const void *a, const void *b)
{
    const trn_basin *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static void state_free(dr_state *s)
{
    heap_free(s);
    free(s->pit.items);
    free(s->level.items);
    free(s->slope.items);
    free(s->trace.items);
    free(s->defer.items);
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

/* ---- the parallel fill: Barnes et al. 2016 over strips of rows ---- */

/* Outlets in rows [j0, j1): the border and everything at or below sea level (sea NaN: none).
 * With labels, an outlet's label is 0: water that reaches it has left the grid. */
static void mark_outlets(dr_state *s, size_t j0, size_t j1, double sea_level, bool labels)
{
    const bool sea = !isnan(sea_level);
    memset(s->dir + j0 * s->nx, DR_UNSEEN, (j1 - j0) * s->nx);
    for (size_t j = j0; j < j1; j++) {
        const bool edge_row = j == 0 || j + 1 == s->nz;
        for (size_t i = 0; i < s->nx; i++) {
            const size_t k = j * s->nx + i;
            if (edge_row || i == 0 || i + 1 == s->nx || (sea && (double)s->h[k] <= sea_level)) {
                s->dir[k] = TRN_DRAIN_OUTLET;
                s->filled[k] = s->h[k];
                if (labels) s->acc[k] = 0;
            }
        }
    }
}

/* The pairs across the edge between a strip's last row j and the next strip's first: the
 * floods never look across it. */
static bool strip_edges(const dr_state *s, size_t j, dr_edges *e)
{
    const uint32_t *lab = s->acc;
    const float *f = s->filled;
    for (size_t i = 0; i < s->nx; i++) {
        const size_t k = j * s->nx + i;
        for (int di = -1; di <= 1; di++) {
            if ((i == 0 && di < 0) || (i + 1 == s->nx && di > 0)) continue;
            const size_t m = (size_t)((ptrdiff_t)(k + s->nx) + di);
            if (lab[m] != lab[k] && !edges_add(e, lab[k], lab[m], fmaxf(f[k], f[m]))) return false;
        }
    }
    return true;
}

typedef struct dr_graph_edge {
    uint64_t key;
    float w;
} dr_graph_edge;

static int graph_edge_cmp(const void *x, const void *y)
{
    const dr_graph_edge *a = x, *b = y;
    return (a->key > b->key) - (a->key < b->key);
}

/* The level each label drains at: the lowest over paths of label pairs from label 0 (the
 * outlets) of the highest spill on the path (a priority flood over the label graph). */
static int solve_labels(dr_edges *maps, int strips, size_t labels, float *level, size_t *bytes)
{
    size_t total = 0;
    for (int k = 0; k < strips; k++)
        total += maps[k].count;
    dr_graph_edge *all = malloc((total ? total : 1) * sizeof *all);
    size_t *start = calloc(labels + 1, sizeof *start);
    uint32_t *to = malloc((2 * total + 1) * sizeof *to);
    float *tw = malloc((2 * total + 1) * sizeof *tw);
    uint64_t *heap = malloc((2 * total + 2) * sizeof *heap);
    int rc = DR_OK;
    if (!all || !start || !to || !tw || !heap) {
        rc = DR_NOMEM;
        goto done;
    }
    *bytes = total * (sizeof *all + 2 * sizeof *to + 2 * sizeof *tw + 2 * sizeof *heap) +
             (labels + 1) * sizeof *start;
    size_t m = 0;
    for (int k = 0; k < strips; k++)
        for (size_t q = 0; q < maps[k].capacity; q++)
            if (maps[k].key[q] != DR_NO_KEY) {
                all[m].key = maps[k].key[q];
                all[m].w = maps[k].w[q];
                m++;
            }
    /* A pair seen by two strips (across their shared edge) keeps its lower level. */
    qsort(all, m, sizeof *all, graph_edge_cmp);
    size_t u = 0;
    for (size_t q = 0; q < m; q++) {
        if (u && all[u - 1].key == all[q].key) {
            if (all[q].w < all[u - 1].w) all[u - 1].w = all[q].w;
        } else {
            all[u++] = all[q];
        }
    }
    for (size_t q = 0; q < u; q++) {
        start[(uint32_t)(all[q].key >> 32) + 1]++;
        start[(uint32_t)all[q].key + 1]++;
    }
    for (size_t l = 0; l < labels; l++)
        start[l + 1] += start[l];
    size_t *fillp = malloc((labels + 1) * sizeof *fillp);
    if (!fillp) {
        rc = DR_NOMEM;
        goto done;
    }
    memcpy(fillp, start, (labels + 1) * sizeof *fillp);
    for (size_t q = 0; q < u; q++) {
        const uint32_t a = (uint32_t)(all[q].key >> 32), b = (uint32_t)all[q].key;
        to[fillp[a]] = b;
        tw[fillp[a]++] = all[q].w;
        to[fillp[b]] = a;
        tw[fillp[b]++] = all[q].w;
    }
    free(fillp);
    for (size_t l = 0; l < labels; l++)
        level[l] = INFINITY;
    level[0] = -INFINITY;
    /* A binary heap of (sortable level, label); stale entries are skipped. */
    size_t hn = 0;
    heap[hn++] = (uint64_t)sortable_bits(-INFINITY) << 32;
    while (hn) {
        const uint64_t top = heap[0], last = heap[--hn];
        size_t i = 0;
        for (;;) {
            size_t c = 2 * i + 1;
            if (c >= hn) break;
            if (c + 1 < hn && heap[c + 1] < heap[c]) c++;
            if (heap[c] >= last) break;
            heap[i] = heap[c];
            i = c;
        }
        if (hn) heap[i] = last;
        const uint32_t a = (uint32_t)top;
        if ((uint32_t)(top >> 32) != sortable_bits(level[a])) continue;
        for (size_t q = start[a]; q < start[a + 1]; q++) {
            const uint32_t b = to[q];
            const float lv = fmaxf(level[a], tw[q]);
            if (!(lv < level[b])) continue;
            level[b] = lv;
            const uint64_t key = (uint64_t)sortable_bits(lv) << 32 | b;
            size_t p = hn++;
            while (p > 0 && heap[(p - 1) / 2] > key) {
                heap[p] = heap[(p - 1) / 2];
                p = (p - 1) / 2;
            }
            heap[p] = key;
        }
    }
done:
    free(all);
    free(start);
    free(to);
    free(tw);
    free(heap);
    return rc;
}

/* Fill the grid as `strips` strips of rows flooded at once (Barnes, Lehman and Mulla 2014's
 * flood with slope tracing inside each, as in the whole-grid fill), then Barnes 2016: each strip's
 * rows next to another strip are seeds with their own watershed labels; the labels' spill
 * levels are solved as a small graph; each sample is raised to its label's level. The filled
 * heights are unique (the lowest level at which each sample's water can leave the grid), so
 * they are bit for bit the whole-grid fill's. s->acc holds labels until the end. */
static int fill_strips(dr_state *g, int strips, double sea_level)
{
    const size_t nx = g->nx, nz = g->nz;
    dr_state *st = calloc((size_t)strips, sizeof *st);
    dr_edges *maps = calloc((size_t)strips, sizeof *maps);
    size_t *row = malloc(((size_t)strips + 1) * sizeof *row);
    int *rc = calloc((size_t)strips, sizeof *rc);
    /* Labels: 0 the outlets, then 1 + r * nx + i for sample i of seed row r (each strip's
     * first row, then its last, strip by strip, skipping the grid's own first and last). */
    const size_t labels = 1 + 2 * (size_t)(strips - 1) * nx;
    float *level = malloc(labels * sizeof *level);
    int out = DR_OK;
    if (!st || !maps || !row || !rc || !level) {
        out = DR_NOMEM;
        goto done;
    }
    for (int k = 0; k <= strips; k++)
        row[k] = nz * (size_t)k / (size_t)strips;
    const int team = dr_team(strips);
    /* Each strip marks, floods and measures its own rows: its pages are first written by the
     * thread that uses them. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (int k = 0; k < strips; k++) {
        dr_state *s = &st[k];
        const size_t j0 = row[k], j1 = row[k + 1];
        mark_outlets(g, j0, j1, sea_level, true);
        const bool sea = !isnan(sea_level);
        for (int side = 0; side < 2; side++) {
            if ((side == 0 && k == 0) || (side == 1 && k == strips - 1)) continue;
            const size_t j = side == 0 ? j0 : j1 - 1;
            const size_t base = 1 + (2 * (size_t)k - 1 + (size_t)side) * nx;
            for (size_t i = 1; i + 1 < nx; i++) {
                const size_t c = j * nx + i;
                if (sea && (double)g->h[c] <= sea_level) continue; /* an outlet: label 0 */
                g->dir[c] = TRN_DRAIN_OUTLET;
                g->filled[c] = g->h[c];
                g->acc[c] = (uint32_t)(base + i);
            }
        }
        s->nx = nx;
        s->nz = j1 - j0;
        s->n = s->nx * s->nz;
        s->h = g->h + j0 * nx;
        s->filled = g->filled + j0 * nx;
        s->dir = g->dir + j0 * nx;
        s->acc = g->acc + j0 * nx;
        memcpy(s->off, g->off, sizeof s->off);
        s->labels = true;
        s->edges = &maps[k];
        rc[k] = flood_run(s);
        flood_release(s);
    }
    size_t flooding = 0;
    for (int k = 0; k < strips; k++) {
        if (rc[k] != DR_OK) out = rc[k];
        flooding += st[k].temp_peak;
    }
    temp_change(g, 0, flooding);
    temp_change(g, flooding, 0);
    if (out != DR_OK) goto done;
    if (trn_progress_report(&g->progress, 0.8, "drainage")) {
        out = DR_CANCEL;
        goto done;
    }
    size_t map_bytes = 0;
    for (int k = 0; k < strips; k++) {
        if (k + 1 < strips && !strip_edges(g, row[k + 1] - 1, &maps[k])) out = DR_NOMEM;
        map_bytes += maps[k].capacity * (sizeof(uint64_t) + sizeof(float));
    }
    if (out != DR_OK) goto done;
    size_t graph_bytes = 0;
    out = solve_labels(maps, strips, labels, level, &graph_bytes);
    temp_change(g, 0, map_bytes + graph_bytes + labels * sizeof *level);
    temp_change(g, map_bytes + graph_bytes + labels * sizeof *level, 0);
    if (out != DR_OK) goto done;
        /* Raise each sample to its watershed's level; the seed rows become ordinary samples. */
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (int k = 0; k < strips; k++) {
        for (size_t c = row[k] * nx; c < row[k + 1] * nx; c++) {
            const uint32_t l = g->acc[c];
            if (l == 0) continue;
            if (level[l] > g->filled[c]) g->filled[c] = level[l] + 0.0f;
            if (g->dir[c] == TRN_DRAIN_OUTLET) g->dir[c] = 0;
        }
    }
done:
    for (int k = 0; strips > 0 && maps && k < strips; k++) {
        free(maps[k].key);
        free(maps[k].w);
    }
    if (st)
        for (int k = 0; k < strips; k++)
            state_free(&st[k]);
    free(st);
    free(maps);
    free(row);
    free(rc);
    free(level);
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
                if (m < r->spill && h[m] == fk && !(h[m] < f[m])) r->spill = (uint32_t)m;
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

/* Breadth-first (label-correcting) from the samples queued in q, within samples [lo, hi). */
static bool flat_relax(dr_state *q, const dr_state *g, size_t lo, size_t hi, uint32_t *dist)
{
    while (q->trace.count) {
        const uint32_t c = fifo_pop(&q->trace);
        const float fc = g->filled[c];
        const uint32_t next = dist[c] + 1;
        for (int d = 0; d < 8; d++) {
            const size_t m = (size_t)((ptrdiff_t)c + g->off[d]);
            if (m < lo || m >= hi || dist[m] == TRN_D8_FLAT_EXIT || g->filled[m] != fc ||
                dist[m] <= next)
                continue;
            dist[m] = next;
            if (!fifo_push(q, &q->trace, (uint32_t)m)) return false;
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
            for (size_t c = row[k] * nx; c < row[k + 1] * nx; c++) {
                if (dist[c] != TRN_D8_FLAT_UNKNOWN) continue;
                for (int d = 0; d < 8; d++) {
                    const size_t m = (size_t)((ptrdiff_t)c + g->off[d]);
                    if (dist[m] == TRN_D8_FLAT_EXIT && g->filled[m] == g->filled[c]) {
                        ok = fifo_push(&q[k], &q[k].trace, (uint32_t)c) && ok;
                        break;
                    }
                }
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < parts; k++) {
            dr_fifo *t = &q[k].trace;
            for (size_t e = 0; e < t->count; e++)
                dist[t->items[e]] = 1;
            ok = flat_relax(&q[k], g, row[k] * nx, row[k + 1] * nx, dist) && ok;
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
            ok = flat_relax(&q[k], g, row[k] * nx, row[k + 1] * nx, dist) && ok;
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
 * /proc/loadavg other than this thread (this process's other threads sleep between parallel
 * regions). A strip the machine cannot run at once costs more than it saves (a second strip's
 * flood does 5-20% more work): on a busy machine the fill stays on one strip. The outputs are
 * the same for any strip count, so this choice never changes a result. */
static int idle_cores(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/loadavg", "r");
    long running = -1;
    if (f) {
        double a, b, c;
        if (fscanf(f, "%lf %lf %lf %ld/", &a, &b, &c, &running) != 4) running = -1;
        fclose(f);
    }
    if (cpus < 1 || running < 1) return 0;
    const long idle = cpus - running; /* running counts this thread */
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
    const int free_cores = 1 + idle_cores();
    if (t > free_cores) t = free_cores;
    const size_t most = s->nz / DR_STRIP_ROWS;
    return (size_t)t > most ? (int)(most < 1 ? 1 : most) : t;
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
    size_t first_nan = SIZE_MAX;
#pragma omp parallel for schedule(static) num_threads(strips > 1 ? dr_team(strips) : 1)            \
    reduction(min                                                                                  \
              : first_nan)
    for (size_t k = 0; k < s.n; k++)
        if (isnan(s.h[k]) && k < first_nan) first_nan = k;
    if (first_nan != SIZE_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "drainage: expected finite heights, found NaN at sample (%zu, %zu)",
                             first_nan % s.nx, first_nan / s.nx);
    s.filled = big_alloc(s.n * sizeof *s.filled);
    s.dir = big_alloc(s.n);
    s.acc = big_alloc(s.n * sizeof *s.acc);
    uint8_t *indeg = NULL;
    trn_basin *basins = NULL;
    size_t basin_count = 0;
    trn_status st = TRN_OK;
    if (!s.filled || !s.dir || !s.acc) goto no_memory;
    for (int d = 0; d < 8; d++)
        s.off[d] = TRN_D8_DI[d] + TRN_D8_DJ[d] * (ptrdiff_t)s.nx;
    const trn_progress whole = trn_progress_make(progress, user);
    s.progress = trn_progress_sub(&whole, 0.0, 0.7);

    int rc;
    if (strips <= 1) {
        mark_outlets(&s, 0, s.nz, sea_level, false);
        rc = flood_run(&s);
        flood_release(&s);
    } else {
        rc = fill_strips(&s, strips, sea_level);
    }
    if (rc == DR_OK) rc = find_basins(&s, strips > 1 ? strips : 1, &basins, &basin_count);
    if (rc == DR_NOMEM) goto no_memory;
    if (rc == DR_CANCEL) goto cancelled;
    if (trn_progress_report(&s.progress, 1.0, "drainage")) goto cancelled;

    /* Directions: steepest strict descent on the filled surface; on a flat, towards the
     * nearest sample of the same height that has one (d8_rules.h). The flood's own links are
     * not used: they follow its visiting order, which a tiled run cannot reproduce. Passes
     * over rows run on the fill's threads, DR_BLOCK_ROWS rows to a parallel region so progress
     * is reported (and cancelling is seen) between them. */
    indeg = big_alloc(s.n);
    if (!indeg) goto no_memory;
    temp_change(&s, 0, s.n);
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
        for (size_t b = 0; b < nz; b += DR_BLOCK_ROWS) {
            if (trn_progress_report(&dir_p, (double)b / (double)nz * 0.4, "drainage"))
                goto cancelled;
            const size_t e = b + DR_BLOCK_ROWS < nz ? b + DR_BLOCK_ROWS : nz;
#pragma omp parallel for schedule(static) num_threads(team) reduction(+ : flats)
            for (size_t j = b; j < e; j++) {
                for (size_t i = 0; i < nx; i++) {
                    const size_t c = j * nx + i;
                    dist[c] = TRN_D8_FLAT_EXIT;
                    if (s.dir[c] == TRN_DRAIN_OUTLET) continue;
                    const int best = trn_d8_steepest(&s.filled[c], s.off, inv);
                    if (best >= 0) {
                        s.dir[c] = (uint8_t)best;
                    } else {
                        dist[c] = TRN_D8_FLAT_UNKNOWN;
                        flats++;
                    }
                }
            }
        }
        if (flats) {
            /* Breadth-first from every flat sample next to its flat's edge (the distances do
             * not depend on the order the seeds are queued in). */
            if (trn_progress_report(&dir_p, 0.4, "drainage")) goto cancelled;
            if (flat_distances(&s, strips > 1 ? strips : 1, dist) != DR_OK) goto no_memory;
            for (size_t b = 0; b < nz; b += DR_BLOCK_ROWS) {
                if (trn_progress_report(&dir_p, 0.6 + (double)b / (double)nz * 0.2, "drainage"))
                    goto cancelled;
                const size_t e = b + DR_BLOCK_ROWS < nz ? b + DR_BLOCK_ROWS : nz;
#pragma omp parallel for schedule(static) num_threads(team)
                for (size_t j = b; j < e; j++) {
                    for (size_t i = 0; i < nx; i++) {
                        const size_t c = j * nx + i;
                        if (dist[c] == TRN_D8_FLAT_EXIT || s.dir[c] == TRN_DRAIN_OUTLET) continue;
                        /* Every flat reaches its edge, so a pick exists; the flood's link
                         * stays only as a guard. */
                        const int pick = trn_d8_flat_pick(&s.filled[c], &dist[c], s.off);
                        if (pick >= 0) s.dir[c] = (uint8_t)pick;
                    }
                }
            }
        }
        /* In-degrees, each sample counting the neighbours that drain into it (no two threads
         * write one sample); the accumulation's starting ones set to 1 on the same pass. */
        for (size_t b = 0; b < nz; b += DR_BLOCK_ROWS) {
            if (trn_progress_report(&dir_p, 0.8 + (double)b / (double)nz * 0.2, "drainage"))
                goto cancelled;
            const size_t e = b + DR_BLOCK_ROWS < nz ? b + DR_BLOCK_ROWS : nz;
#pragma omp parallel for schedule(static) num_threads(team)
            for (size_t j = b; j < e; j++) {
                const bool edge_row = j == 0 || j + 1 == nz;
                for (size_t i = 0; i < nx; i++) {
                    const size_t c = j * nx + i;
                    unsigned count = 0;
                    if (!edge_row && i > 0 && i + 1 < nx) {
                        /* Inside: all 8 neighbours exist (the common case, without checks). */
                        const uint8_t *dc = s.dir + c;
                        count = (dc[1] == 4) + (dc[nx + 1] == 5) + (dc[nx] == 6) +
                                (dc[nx - 1] == 7) + (dc[-1] == 0) + (dc[-(ptrdiff_t)nx - 1] == 1) +
                                (dc[-(ptrdiff_t)nx] == 2) + (dc[-(ptrdiff_t)nx + 1] == 3);
                    } else {
                        for (int d = 0; d < 8; d++) {
                            const ptrdiff_t ni = (ptrdiff_t)i + TRN_D8_DI[d],
                                            nj = (ptrdiff_t)j + TRN_D8_DJ[d];
                            if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)nx || nj >= (ptrdiff_t)nz)
                                continue;
                            count +=
                                s.dir[(size_t)((ptrdiff_t)c + s.off[d])] == ((unsigned)d + 4u) % 8u;
                        }
                    }
                    indeg[c] = (uint8_t)count;
                    s.acc[c] = 1;
                }
            }
        }
        /* Accumulation: start at every sample nothing drains into and walk downstream while
         * the next sample has received all its inflow. Each strip of rows walks its own
         * samples at once; water leaving a strip is kept as (target, amount) and delivered
         * afterwards on one thread, walking on where it completes a sample's inflow. The sums
         * are of integers, so the order they are added in changes nothing. */
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
            for (size_t c0 = lo; c0 < hi; c0++) {
                if (indeg[c0] != 0) continue;
                size_t c = c0;
                for (;;) {
                    indeg[c] = DR_DONE;
                    if (s.dir[c] == TRN_DRAIN_OUTLET) break;
                    const size_t t = (size_t)((ptrdiff_t)c + s.off[s.dir[c]]);
                    if (t < lo || t >= hi) {
                        flows_ok = flows_add(&flows[k], (uint32_t)t, s.acc[c]) && flows_ok;
                        break;
                    }
                    s.acc[t] += s.acc[c];
                    if (--indeg[t] != 0) break;
                    c = t;
                }
            }
        }
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
                if (--indeg[c] != 0) continue;
                for (;;) {
                    indeg[c] = DR_DONE;
                    if (s.dir[c] == TRN_DRAIN_OUTLET) break;
                    const size_t t = (size_t)((ptrdiff_t)c + s.off[s.dir[c]]);
                    s.acc[t] += s.acc[c];
                    if (--indeg[t] != 0) break;
                    c = t;
                }
            }
        }
        for (int k = 0; k < parts; k++)
            free(flows[k].items);
        free(flows);
        if (!flows_ok) goto no_memory;
        if (stop) goto cancelled;
        if (trn_progress_report(&acc_p, 1.0, "drainage")) goto cancelled;
    }
    free(indeg);
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
    free(indeg);
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
