/* Drainage: priority-flood depression filling with slope tracing, D8 directions, accumulation. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) on Linux */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/checked.h"
#include "core/progress.h"
#include "terrane/drainage.h"
#include "gen/d8.h"
#include "gen/d8_rules.h"

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

/* A raised region found during the flood; regions that touch are merged afterwards. */
typedef struct dr_comp {
    uint32_t parent; /* union-find link; a root points to itself; roots are the smallest id */
    uint32_t sink;   /* lowest input sample seen (ties: smallest index) */
    uint32_t spill;  /* the unraised sample the region was entered from */
    uint64_t area;
} dr_comp;

typedef struct dr_state {
    size_t nx, nz, n;
    const float *h;
    float *filled;
    uint8_t *dir;
    uint32_t *acc; /* during the flood: component id of each raised sample */
    ptrdiff_t off[8];
    dr_heap heap;
    /* raised samples; unraised ones at the current level; higher ones waiting to be traced
     * once the pit queue is empty; the trace's own queue; samples waiting for a lower
     * neighbour (DR_EARLY), moved to the heap only when the heap is next needed */
    dr_fifo pit, level, slope, trace, defer;
    dr_comp *comps;
    size_t comp_count, comp_capacity;
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

static uint32_t comp_new(dr_state *s, uint32_t spill)
{
    if (s->comp_count == s->comp_capacity) {
        size_t cap = s->comp_capacity ? s->comp_capacity * 2 : 256;
        if (cap > UINT32_MAX) return UINT32_MAX;
        dr_comp *p = realloc(s->comps, cap * sizeof *p);
        if (!p) return UINT32_MAX;
        temp_change(s, s->comp_capacity * sizeof *p, cap * sizeof *p);
        s->comps = p;
        s->comp_capacity = cap;
    }
    uint32_t id = (uint32_t)s->comp_count++;
    dr_comp c = {id, UINT32_MAX, spill, 0};
    s->comps[id] = c;
    return id;
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
    /* The smaller id (the region entered first) stays the root, so its spill sample wins. */
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
                /* t was m's last lower unreached neighbour: trace on from m now. */
                if ((dm & DR_EARLY) && hm > ht && !has_lower_unseen(s, m)) {
                    s->dir[m] = (uint8_t)(dm & DR_CODE);
                    if (!fifo_push(s, &s->trace, m)) return false;
                }
                continue;
            }
            s->filled[m] = hm;
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
    const bool c_raised = s->h[c] < level;
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
            /* Two raised samples that touch belong to one basin. */
            if (c_raised && hn < s->filled[n] && s->acc[n] != s->acc[c])
                comp_union(s->comps, s->acc[n], s->acc[c]);
            /* c was n's last lower unreached neighbour: n can be traced (see trace_from). */
            if ((dn & DR_EARLY) && hn > s->h[c] && !has_lower_unseen(s, n)) {
                s->dir[n] = (uint8_t)(dn & DR_CODE);
                if (!fifo_push(s, &s->slope, n)) return false;
            }
            continue;
        }
        s->dir[n] = (uint8_t)((d + 4) & 7);
        if (hn < level) {
            /* + 0.0f: a raised sample holds +0, never -0, whichever zero spilled first, so
             * the tiled fill (which meets the level by another route) writes the same bits. */
            s->filled[n] = level + 0.0f;
            uint32_t comp = c_raised ? s->acc[c] : comp_new(s, c);
            if (comp == UINT32_MAX) return false;
            s->acc[n] = comp;
            dr_comp *k = &s->comps[comp];
            k->area++;
            if (k->sink == UINT32_MAX || hn < s->h[k->sink] || (hn == s->h[k->sink] && n < k->sink))
                k->sink = n;
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
    free(s->comps);
}

trn_status trn_drainage_compute(const trn_field *field, double sea_level, trn_drainage *out,
                                trn_progress_fn progress, void *user, trn_error *err)
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
    for (size_t k = 0; k < s.n; k++) {
        if (isnan(s.h[k]))
            return trn_error_set(
                err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                "drainage: expected finite heights, found NaN at sample (%zu, %zu)", k % s.nx,
                k / s.nx);
    }
    s.filled = big_alloc(s.n * sizeof *s.filled);
    s.dir = big_alloc(s.n);
    s.acc = big_alloc(s.n * sizeof *s.acc);
    uint8_t *indeg = NULL;
    trn_basin *basins = NULL;
    trn_status st = TRN_OK;
    if (!s.filled || !s.dir || !s.acc) goto no_memory;
    for (int d = 0; d < 8; d++)
        s.off[d] = TRN_D8_DI[d] + TRN_D8_DJ[d] * (ptrdiff_t)s.nx;
    const trn_progress whole = trn_progress_make(progress, user);
    s.progress = trn_progress_sub(&whole, 0.0, 0.7);

    /* Outlets: the border and everything at or below sea level (NaN: no sea). */
    const bool sea = !isnan(sea_level);
    memset(s.dir, DR_UNSEEN, s.n);
    for (size_t j = 0; j < s.nz; j++) {
        const bool edge_row = j == 0 || j + 1 == s.nz;
        for (size_t i = 0; i < s.nx; i++) {
            const size_t k = j * s.nx + i;
            if (edge_row || i == 0 || i + 1 == s.nx || (sea && (double)s.h[k] <= sea_level)) {
                s.dir[k] = TRN_DRAIN_OUTLET;
                s.filled[k] = s.h[k];
            }
        }
    }
    /* Seeds: outlets next to something unreached, in index order. */
    for (size_t j = 0; j < s.nz; j++) {
        for (size_t i = 0; i < s.nx; i++) {
            const size_t k = j * s.nx + i;
            if (s.dir[k] != TRN_DRAIN_OUTLET) continue;
            bool inner = false;
            for (int d = 0; d < 8 && !inner; d++) {
                const ptrdiff_t ni = (ptrdiff_t)i + TRN_D8_DI[d], nj = (ptrdiff_t)j + TRN_D8_DJ[d];
                if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)s.nx || nj >= (ptrdiff_t)s.nz) continue;
                inner = s.dir[(size_t)nj * s.nx + (size_t)ni] == DR_UNSEEN;
            }
            if (!inner) continue;
            s.dir[k] = (uint8_t)(s.dir[k] | DR_QUEUED);
            if (!heap_push(&s, (uint32_t)k, s.h[k])) goto no_memory;
        }
    }
    /* The flood: raised samples first (pit queue), then the heap's lowest. */
    for (;;) {
        uint32_t c;
        if (s.pit.count) {
            c = fifo_pop(&s.pit);
        } else if (s.slope.count) {
            if (!trace_from(&s, fifo_pop(&s.slope))) goto no_memory;
            if (s.cancelled) goto cancelled;
            continue;
        } else if (s.level.count) {
            c = fifo_pop(&s.level);
            const unsigned dc = s.dir[c];
            if (!(dc & DR_QUEUED)) continue; /* traced early (DR_EARLY) */
            s.dir[c] = (uint8_t)(dc & DR_CODE);
        } else if (s.defer.count) {
            /* The heap is needed next: samples still waiting for a lower neighbour enter it
             * now, at their own height (above every level taken so far). */
            while (s.defer.count) {
                const uint32_t m = fifo_pop(&s.defer);
                if ((s.dir[m] & DR_EARLY) && !heap_push(&s, m, s.h[m])) goto no_memory;
            }
            continue;
        } else if (s.heap.count) {
            /* Open a new level: every heap sample at it enters the level queue together, so
             * a flat is reached breadth-first from all its entries at once. */
            uint64_t key;
            if (!heap_min(&s, &key)) goto no_memory;
            for (;;) {
                heap_drop_min(&s.heap);
                if (!fifo_push(&s, &s.level, (uint32_t)key)) goto no_memory;
                /* Keys of the same height differ from the last one only in the index bits,
                 * so they sit in buckets 1..32; stop without looking higher, as taking a
                 * higher key now would break the radix heap's monotone order. */
                if (!heap_level_left(&s.heap)) break;
                if (!heap_min(&s, &key)) goto no_memory;
            }
            continue;
        } else {
            break;
        }
        if (tick(&s) || !expand(&s, c)) {
            if (s.cancelled) goto cancelled;
            goto no_memory;
        }
        if (s.cancelled) goto cancelled;
    }

    /* Basins: merge touching regions, keep each root's lowest sink and total area. */
    for (size_t k = 0; k < s.comp_count; k++) {
        const uint32_t r = comp_find(s.comps, (uint32_t)k);
        if (r == k) continue;
        dr_comp *root = &s.comps[r], *c = &s.comps[k];
        root->area += c->area;
        const float hr = s.h[root->sink], hc = s.h[c->sink];
        if (hc < hr || (hc == hr && c->sink < root->sink)) root->sink = c->sink;
    }
    size_t basin_count = 0;
    for (size_t k = 0; k < s.comp_count; k++)
        basin_count += s.comps[k].parent == k;
    if (basin_count) {
        basins = malloc(basin_count * sizeof *basins);
        if (!basins) goto no_memory;
        size_t b = 0;
        for (size_t k = 0; k < s.comp_count; k++) {
            const dr_comp *c = &s.comps[k];
            if (c->parent != k) continue;
            trn_basin *o = &basins[b++];
            o->id = c->sink;
            o->sink_i = (uint32_t)(c->sink % s.nx);
            o->sink_j = (uint32_t)(c->sink / s.nx);
            o->sink_height = s.h[c->sink];
            o->spill_level = s.filled[c->sink];
            o->spill_i = (uint32_t)(c->spill % s.nx);
            o->spill_j = (uint32_t)(c->spill / s.nx);
            o->area = c->area;
        }
        qsort(basins, basin_count, sizeof *basins, basin_cmp);
    }
    free(s.comps);
    temp_change(&s, s.comp_capacity * sizeof *s.comps, 0);
    s.comps = NULL;
    heap_free(&s);
    free(s.pit.items);
    free(s.level.items);
    free(s.slope.items);
    free(s.trace.items);
    free(s.defer.items);
    temp_change(&s,
                (s.pit.capacity + s.level.capacity + s.slope.capacity + s.trace.capacity +
                 s.defer.capacity) *
                    sizeof(uint32_t),
                0);
    s.pit.items = s.level.items = s.slope.items = s.trace.items = s.defer.items = NULL;
    s.pit.capacity = s.level.capacity = s.slope.capacity = s.trace.capacity = s.defer.capacity = 0;
    s.pit.count = s.level.count = s.slope.count = s.trace.count = s.defer.count = 0;

    /* Directions: steepest strict descent on the filled surface; on a flat, towards the
     * nearest sample of the same height that has one (d8_rules.h). The flood's own links are
     * not used: they follow its visiting order, which a tiled run cannot reproduce. */
    indeg = calloc(s.n, 1);
    if (!indeg) goto no_memory;
    temp_change(&s, 0, s.n);
    {
        const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        double inv[8];
        trn_d8_inverse_lengths(dx, dz, inv);
        const trn_progress dir_p = trn_progress_sub(&whole, 0.7, 0.85);
        /* s.acc holds each sample's flat distance until the accumulation. */
        uint32_t *dist = s.acc;
        size_t flats = 0;
        for (size_t j = 0; j < s.nz; j++) {
            if ((j & 255u) == 0 &&
                trn_progress_report(&dir_p, (double)j / (double)s.nz * 0.5, "drainage"))
                goto cancelled;
            for (size_t i = 0; i < s.nx; i++) {
                const size_t c = j * s.nx + i;
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
        if (flats) {
            /* Breadth-first from every flat sample next to its flat's edge. */
            s.trace.head = s.trace.count = 0;
            for (size_t c = 0; c < s.n; c++) {
                if (dist[c] != TRN_D8_FLAT_UNKNOWN) continue;
                for (int d = 0; d < 8; d++) {
                    const size_t m = (size_t)((ptrdiff_t)c + s.off[d]);
                    if (dist[m] == TRN_D8_FLAT_EXIT && s.filled[m] == s.filled[c]) {
                        dist[c] = 1;
                        if (!fifo_push(&s, &s.trace, (uint32_t)c)) goto no_memory;
                        break;
                    }
                }
            }
            while (s.trace.count) {
                const uint32_t c = fifo_pop(&s.trace);
                for (int d = 0; d < 8; d++) {
                    const size_t m = (size_t)((ptrdiff_t)c + s.off[d]);
                    if (dist[m] == TRN_D8_FLAT_UNKNOWN && s.filled[m] == s.filled[c]) {
                        dist[m] = dist[c] + 1;
                        if (!fifo_push(&s, &s.trace, (uint32_t)m)) goto no_memory;
                    }
                }
            }
            free(s.trace.items);
            temp_change(&s, s.trace.capacity * sizeof(uint32_t), 0);
            s.trace.items = NULL;
            s.trace.capacity = 0;
        }
        for (size_t j = 0; j < s.nz; j++) {
            if ((j & 255u) == 0 &&
                trn_progress_report(&dir_p, 0.5 + (double)j / (double)s.nz * 0.5, "drainage"))
                goto cancelled;
            for (size_t i = 0; i < s.nx; i++) {
                const size_t c = j * s.nx + i;
                if (s.dir[c] == TRN_DRAIN_OUTLET) continue;
                if (dist[c] != TRN_D8_FLAT_EXIT) {
                    /* Every flat reaches its edge, so a pick exists; the flood's link stays
                     * only as a guard. */
                    const int pick = trn_d8_flat_pick(&s.filled[c], &dist[c], s.off);
                    if (pick >= 0) s.dir[c] = (uint8_t)pick;
                }
                indeg[(size_t)((ptrdiff_t)c + s.off[s.dir[c]])]++;
            }
        }
        /* Accumulation: start at every sample nothing drains into and walk downstream while
         * the next sample has received all its inflow. */
        const trn_progress acc_p = trn_progress_sub(&whole, 0.85, 1.0);
        for (size_t k = 0; k < s.n; k++)
            s.acc[k] = 1;
        for (size_t j = 0; j < s.nz; j++) {
            if ((j & 255u) == 0 &&
                trn_progress_report(&acc_p, (double)j / (double)s.nz, "drainage"))
                goto cancelled;
            for (size_t i = 0; i < s.nx; i++) {
                size_t c = j * s.nx + i;
                if (indeg[c] != 0) continue;
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
