/* Erosion's transport mode: transport-limited stream power over the depression-filled D8 tree. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/d8.h"
#include "gen/erosion_internal.h"

/* What a step keeps per sample, in one 32-byte record: the flood and the drainage-order pass
 * visit the samples in height order, all over the grid, and a sample's fields in one record
 * cost one cache miss where separate arrays cost one each. */
typedef struct transport_node {
    float h;         /* height; the field's copy is written back at the end of the step */
    float filled;    /* depression-filled height of this step (lakes flat, no epsilon) */
    uint32_t recv;   /* receiver sample; itself on the edges (the outlets) */
    uint32_t link;   /* lake sample: the number of its exit, the first unflooded sample down
                      * its path; an exit: its own number; other samples: UINT32_MAX */
    float area;      /* drainage area in samples */
    float lowest_up; /* lowest height among its donors after their change */
    double load;     /* sediment arriving at it this step */
} transport_node;
static_assert(sizeof(transport_node) == 32, "two records a cache line");

/* Ask for a cache line ahead of use: the flood and the drainage-order pass jump about the grid
 * in height order, and without this they wait on memory more than they compute. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
enum { PREFETCH_AHEAD = 16 };

/* A lake sample's height and index, so a pool fills from its lowest samples up. */
typedef struct flood_item {
    float h;
    uint32_t i;
} flood_item;

/* Flood states of a sample; an edge sample waits with FLOOD_EDGE set as well, a lake sample is
 * done with FLOOD_LAKE set. */
enum { FLOOD_OPEN = 0, FLOOD_WAITING = 1, FLOOD_DONE = 2, FLOOD_EDGE = 4, FLOOD_LAKE = 8 };

typedef struct transport_buf {
    transport_node *node;
    uint32_t *order;     /* samples in flood order: every receiver before its donors */
    uint32_t *fifo;      /* samples at or below the current flood level, breadth first */
    uint64_t *by_height; /* (height key << 32 | sample), sorted: the flood's heap, in advance */
    uint64_t *sort_tmp;  /* the radix sort's other half */
    const uint64_t *sorted; /* whichever of the two holds the sorted samples */
    uint32_t *lake_exit; /* a lake sample's exit number, beside its record for the list pass */
    uint32_t *lake_end;  /* per exit number: its lake samples' count, then the end of its run */
    double *pool;        /* per exit number: sediment that entered its lakes this step */
    flood_item *pool_items; /* the lake samples, each exit's run in (height, index) order */
    size_t exits;        /* exit numbers given this step */
    float *copy;         /* the diffusion's copy of the heights */
    unsigned char *state;
} transport_buf;

/* An unsigned key in the order of the float comparison: negatives flipped whole, positives
 * above them; -0 and +0 compare equal as floats, so they share a key and the index decides. */
static uint32_t height_key(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if (u == 0x80000000u) u = 0;
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* All samples ordered by (height, index): an LSD radix sort, 11 bits a pass, of the keys with
 * the index below them; stable, so equal heights stay in index order. Leaves the result in
 * b->sorted. */
static void sort_by_height(const float *h, size_t n, transport_buf *b)
{
    enum { BITS = 11, BUCKETS = 1 << BITS, PASSES = 3 };
    static_assert(BITS * PASSES >= 32, "the passes cover the key");
    size_t count[PASSES][BUCKETS];
    memset(count, 0, sizeof count);
    uint64_t *a = b->by_height, *tmp = b->sort_tmp;
    for (size_t s = 0; s < n; s++) {
        const uint32_t k = height_key(h[s]);
        a[s] = (uint64_t)k << 32 | s;
        count[0][k & (BUCKETS - 1)]++;
        count[1][(k >> BITS) & (BUCKETS - 1)]++;
        count[2][k >> (2 * BITS)]++;
    }
    for (int pass = 0; pass < PASSES; pass++) {
        const unsigned shift = 32u + (unsigned)(pass * BITS);
        size_t *c = count[pass], sum = 0;
        if (c[(a[0] >> shift) & (BUCKETS - 1)] == n) continue; /* one digit throughout */
        for (size_t d = 0; d < BUCKETS; d++) {
            const size_t here = c[d];
            c[d] = sum;
            sum += here;
        }
        for (size_t k = 0; k < n; k++)
            tmp[c[(a[k] >> shift) & (BUCKETS - 1)]++] = a[k];
        uint64_t *t = a;
        a = tmp;
        tmp = t;
    }
    b->sorted = a;
}

/* Close the open sample s from c, the flood at level: a FIFO sample at or below it (a flat
 * or a lake, filled to the level), else one waiting at its own height. */
static inline void flood_reach(transport_buf *b, const float *h, size_t s, size_t c, float level,
                               size_t *fifo_tail, size_t *waiting)
{
    /* The height from the field's own array, 16 to a cache line: the record is only written. */
    transport_node *ns = &b->node[s];
    const float hs = h[s];
    ns->h = hs;
    ns->recv = (uint32_t)c;
    if (hs <= level) {
        ns->filled = level;
        b->state[s] = FLOOD_DONE;
        b->fifo[(*fifo_tail)++] = (uint32_t)s;
    } else {
        ns->filled = hs;
        b->state[s] = FLOOD_WAITING;
        (*waiting)++;
    }
}

/* Priority flood from the edges (Barnes et al. 2014, with a FIFO for flats and pits): fills
 * depressions flat, gives every sample a receiver popped before it, and the pop order.
 * The heap is replaced by a scan of the samples sorted by (height, index): every sample the
 * flood would push has a height above the last one popped, so the heap's pops come out in
 * sorted order; a sample the scan passes while still open lies at or below the flood level
 * and will be reached by the FIFO. The pops, and so everything after, are those of the heap.
 * In the same pass a sample takes its steepest strictly lower filled neighbour as receiver
 * (those are all popped before it, their filled heights final; the flood's receiver stays on
 * flats and lakes), and a lake sample its exit. */
static void flood(const float *h, size_t nx, size_t nz, transport_buf *b)
{
    static const float dist[8] = {1.0f, 1.41421356f, 1.0f, 1.41421356f,
                                  1.0f, 1.41421356f, 1.0f, 1.41421356f};
    const size_t n = nx * nz;
    sort_by_height(h, n, b);
    const uint64_t *sorted = b->sorted;
    unsigned char *state = b->state;
    transport_node *node = b->node;
    long off[8];
    for (int d = 0; d < 8; d++) off[d] = TRN_D8_DJ[d] * (long)nx + TRN_D8_DI[d];
    size_t waiting = 0, scan = 0, fifo_head = 0, fifo_tail = 0, popped = 0;
    b->exits = 0;
    memset(state, FLOOD_OPEN, n);
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            if (j != 0 && j + 1 != nz && i != 0 && i + 1 != nx) continue;
            const size_t s = j * nx + i;
            state[s] = FLOOD_WAITING | FLOOD_EDGE;
            node[s].h = h[s];
            node[s].filled = h[s];
            node[s].recv = (uint32_t)s;
            waiting++;
        }
    while (waiting || fifo_head != fifo_tail) {
        size_t c;
        if (fifo_head != fifo_tail) {
            c = b->fifo[fifo_head++];
            if (fifo_head + PREFETCH_AHEAD < fifo_tail) {
                const size_t a = b->fifo[fifo_head + PREFETCH_AHEAD];
                PREFETCH(&node[a - nx]);
                PREFETCH(&node[a + nx]);
            }
        } else {
            /* Some sample waits, so the scan finds one; the wrap only keeps it in bounds if a
             * non-finite height ever broke the order (the driver admits finite heights only). */
            while (!(state[(uint32_t)sorted[scan]] & FLOOD_WAITING))
                if (++scan == n) scan = 0;
            if (scan + PREFETCH_AHEAD < n) {
                /* Most pops come from the scan: fetch the three rows of one ahead. */
                const size_t a = (uint32_t)sorted[scan + PREFETCH_AHEAD];
                PREFETCH(&node[a]);
                if (a >= nx) PREFETCH(&node[a - nx]);
                if (a + nx < n) PREFETCH(&node[a + nx]);
            }
            c = (uint32_t)sorted[scan++];
            waiting--;
        }
        const bool edge = state[c] & FLOOD_EDGE;
        transport_node *nc = &node[c];
        b->order[popped++] = (uint32_t)c;
        nc->area = 1.0f;
        nc->lowest_up = INFINITY;
        nc->load = 0.0;
        nc->link = UINT32_MAX;
        const float level = nc->filled;
        if (edge) {
            state[c] = FLOOD_DONE;
            const long ci = (long)(c % nx), cj = (long)(c / nx);
            for (int d = 0; d < 8; d++) {
                const long ni = ci + TRN_D8_DI[d], nj = cj + TRN_D8_DJ[d];
                if (ni < 0 || nj < 0 || ni >= (long)nx || nj >= (long)nz) continue;
                const size_t s = (size_t)nj * nx + (size_t)ni;
                if (!state[s]) flood_reach(b, h, s, c, level, &fifo_tail, &waiting);
            }
            continue;
        }
        /* Interior: all eight neighbours exist. */
        float best = 0.0f;
        for (int d = 0; d < 8; d++) {
            const size_t s = (size_t)((long)c + off[d]);
            if (!state[s]) {
                flood_reach(b, h, s, c, level, &fifo_tail, &waiting);
                continue;
            }
            const float drop = level - node[s].filled;
            if (drop > 0.0f && drop / dist[d] > best) {
                best = drop / dist[d];
                nc->recv = (uint32_t)s;
            }
        }
        if (nc->h < level) {
            /* A lake sample: its exit is its receiver's, or the receiver, numbered on first use. */
            transport_node *nr = &node[nc->recv];
            if (!(nr->h < nr->filled) && nr->link == UINT32_MAX) {
                nr->link = (uint32_t)b->exits;
                b->lake_end[b->exits] = 0;
                b->pool[b->exits++] = 0.0;
            }
            nc->link = nr->link;
            b->lake_exit[c] = nr->link;
            b->lake_end[nr->link]++;
            state[c] = FLOOD_DONE | FLOOD_LAKE;
        } else
            state[c] = FLOOD_DONE;
    }
}

/* Settle volume in the lakes that leave by exit number id: still water drops its load, which
 * fills the lakes from their lowest samples up to one flat level, at most the spill level.
 * Returns what is left over (it flows on from the exit) and adds what settled to *deposited.
 * The exit's run of lake samples is in (height, index) order: their heights are still those
 * the flood sorted. */
static double fill_pool(transport_buf *b, uint32_t id, double volume, double *deposited)
{
    transport_node *node = b->node;
    const size_t first = id ? b->lake_end[id - 1] : 0;
    const flood_item *items = b->pool_items + first;
    const size_t count = b->lake_end[id] - first;
    const double spill = (double)node[items[0].i].filled;
    /* Raise the k lowest samples to a common level until the volume is used up. */
    double below = 0.0, level = spill;
    for (size_t k = 1; k <= count; k++) {
        below += (double)items[k - 1].h;
        const double top = k < count ? (double)items[k].h : spill;
        const double need = top * (double)k - below;
        if (need >= volume) {
            level = (volume + below) / (double)k;
            break;
        }
    }
    if (level > spill) level = spill;
    const float lf = (float)level;
    double put = 0.0;
    for (size_t k = 0; k < count && items[k].h < lf; k++) {
        const uint32_t s = items[k].i;
        put += (double)lf - (double)node[s].h;
        node[s].h = lf;
    }
    *deposited += put;
    return volume - put; /* exact bookkeeping, even a rounding below 0 */
}

/* Hillslope diffusion, one explicit step over the four neighbours (kd <= 0.25 keeps it stable):
 * each pair exchanges kd times its difference, the same float seen from both sides, so the
 * material only moves. It smooths the single-flow paths' streaks out of the deposits. */
static void diffuse(float *h, size_t nx, size_t nz, float kd, float *copy)
{
    memcpy(copy, h, nx * nz * sizeof *h);
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const size_t s = j * nx + i;
            const float c = copy[s];
            float acc = 0.0f;
            if (i > 0) acc += kd * (copy[s - 1] - c);
            if (i + 1 < nx) acc += kd * (copy[s + 1] - c);
            if (j > 0) acc += kd * (copy[s - nx] - c);
            if (j + 1 < nz) acc += kd * (copy[s + nx] - c);
            h[s] = c + acc;
        }
}

/* One step: route, then carry sediment from the divides down to the edges. */
static void transport_step(float *h, size_t nx, size_t nz, const trn_erosion_params *p,
                           transport_buf *b, trn_erosion_ledger *ledger)
{
    const size_t n = nx * nz;
    transport_node *node = b->node;
    /* Diffusion first, so the step ends with the transport pass, which leaves no pit. */
    if (p->diffusion > 0.0) diffuse(h, nx, nz, (float)p->diffusion, b->copy);
    flood(h, nx, nz, b);
    /* Each exit's lake samples in one run, in the sorted order: a counting sort by exit number.
     * The height comes back from the key (-0 as +0, the same in every use in fill_pool). */
    for (size_t e = 0, sum = 0; e < b->exits; e++) {
        const uint32_t here = b->lake_end[e];
        b->lake_end[e] = (uint32_t)sum;
        sum += here;
    }
    for (size_t k = 0; k < n; k++) {
        const uint64_t item = b->sorted[k];
        const uint32_t s = (uint32_t)item;
        if (!(b->state[s] & FLOOD_LAKE)) continue;
        const uint32_t key = (uint32_t)(item >> 32);
        const uint32_t bits = key & 0x80000000u ? key & 0x7fffffffu : ~key;
        float hs;
        memcpy(&hs, &bits, sizeof hs);
        b->pool_items[b->lake_end[b->lake_exit[s]]++] = (flood_item){hs, s};
    }
    const float kc = (float)(p->capacity / 100.0);
    const float dep_rate = (float)p->deposition_rate;
    double eroded = 0.0, deposited = 0.0, exported = 0.0;
    for (size_t k = n; k-- > 0;) {
        const uint32_t s = b->order[k];
        if (k >= 2 * PREFETCH_AHEAD) {
            /* The sample two distances ahead, and the receiver of the one fetched before. */
            PREFETCH(&node[b->order[k - 2 * PREFETCH_AHEAD]]);
            PREFETCH(&node[node[b->order[k - PREFETCH_AHEAD]].recv]);
        }
        transport_node *ns = &node[s];
        const uint32_t r = ns->recv;
        transport_node *nr = &node[r];
        /* Donors come later in the order, so the area is complete here. */
        if (r != s) nr->area += ns->area;
        double load = ns->load;
        const float hs = ns->h;
        if (hs < ns->filled) {
            /* Still water: the load joins its lakes' pool, settled when the exit is reached.
             * The fill only raises it, so its height now bounds what its receiver may take. */
            b->pool[ns->link] += load;
            if (hs < nr->lowest_up) nr->lowest_up = hs;
            continue;
        }
        if (ns->link != UINT32_MAX && b->pool[ns->link] > 0.0)
            load += fill_pool(b, ns->link, b->pool[ns->link], &deposited);
        if (r == s) {
            /* Edges are the base level: what reaches them leaves the field. */
            exported += load;
            continue;
        }
        float hn = hs;
        {
            /* s is interior (edges receive from themselves), so r is one of its 8 neighbours. */
            const long step = (long)r - (long)s;
            const bool diagonal = step != 1 && step != -1 && step != (long)nx && step != -(long)nx;
            const float drop = hs - nr->filled;
            const float per_sample = diagonal ? drop / 1.41421356f : drop;
            const double cap = (double)(kc * sqrtf(ns->area) * per_sample);
            if (load < cap) {
                const float rate = p->rate_scale ? (float)p->erosion_rate * p->rate_scale[s]
                                                 : (float)p->erosion_rate;
                float take = rate * (float)(cap - load);
                if (take > drop) take = drop; /* never below the receiver: no pit is dug */
                hn = hs - take;
            } else if (ns->lowest_up > hs) {
                /* Never above the lowest donor, so every donor still drains here. */
                float put = dep_rate * (float)(load - cap);
                if (put > ns->lowest_up - hs) put = ns->lowest_up - hs;
                hn = hs + put;
            }
        }
        const double change = (double)hn - (double)hs;
        if (change < 0.0)
            eroded -= change;
        else
            deposited += change;
        load -= change; /* may dip below 0 by a rounding: kept so the ledger balances */
        ns->h = hn;
        if (hn < nr->lowest_up) nr->lowest_up = hn;
        nr->load += load;
    }
    for (size_t s = 0; s < n; s++) h[s] = node[s].h;
    ledger->eroded += eroded;
    ledger->deposited += deposited;
    ledger->exported += exported;
}

trn_status trn_erosion_transport(float *h, size_t nx, size_t nz, const trn_erosion_params *params,
                                 trn_erosion_ledger *ledger, trn_progress *pr, double share0,
                                 double share1, trn_error *err)
{
    const size_t n = nx * nz;
    transport_buf b;
    /* 64-byte aligned (the size rounded up to it), so no record straddles two cache lines. */
    b.node = aligned_alloc(64, (n * sizeof *b.node + 63) / 64 * 64);
    b.order = malloc(n * sizeof *b.order);
    b.fifo = malloc(n * sizeof *b.fifo);
    b.by_height = malloc(n * sizeof *b.by_height);
    b.sort_tmp = malloc(n * sizeof *b.sort_tmp);
    b.lake_exit = malloc(n * sizeof *b.lake_exit);
    b.lake_end = malloc(n * sizeof *b.lake_end);
    b.pool = malloc(n * sizeof *b.pool);
    b.pool_items = malloc(n * sizeof *b.pool_items);
    b.copy = malloc(n * sizeof *b.copy);
    b.state = malloc(n);
    trn_status st = TRN_OK;
    if (!b.node || !b.order || !b.fifo || !b.by_height || !b.sort_tmp || !b.lake_exit || !b.lake_end || !b.pool ||
        !b.pool_items || !b.copy || !b.state)
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "erosion: out of memory");
    for (uint32_t k = 0; st == TRN_OK && k < params->transport_steps; k++) {
        transport_step(h, nx, nz, params, &b, ledger);
        ledger->steps++;
        const double done =
            share0 + (share1 - share0) * (double)(k + 1) / (double)params->transport_steps;
        if (trn_progress_report(pr, done, "transport"))
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "transport: cancelled");
    }
    free(b.node);
    free(b.order);
    free(b.fifo);
    free(b.by_height);
    free(b.sort_tmp);
    free(b.lake_exit);
    free(b.lake_end);
    free(b.pool);
    free(b.pool_items);
    free(b.copy);
    free(b.state);
    return st;
}
