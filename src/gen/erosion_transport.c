/* Erosion's transport mode: transport-limited stream power over the depression-filled D8 tree. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/d8.h"
#include "gen/erosion_internal.h"

/* A priority-flood heap entry: filled height, then sample index, so ties pop in a fixed order. */
typedef struct flood_item {
    float h;
    uint32_t i;
} flood_item;

typedef struct transport_buf {
    float *filled;      /* depression-filled heights of this step (lakes flat, no epsilon) */
    uint32_t *recv;     /* receiver sample; itself on the edges (the outlets) */
    uint32_t *order;    /* samples in flood order: every receiver before its donors */
    uint32_t *fifo;     /* samples at or below the current flood level, breadth first */
    flood_item *heap;   /* samples above it */
    float *area;        /* drainage area in samples */
    double *load;       /* sediment arriving at a sample this step */
    float *lowest_up;   /* lowest height among a sample's donors after their change */
    uint32_t *exit;     /* a lake sample's way out: the first unflooded sample down its path */
    uint32_t *next;     /* per-exit lists of lake samples (UINT32_MAX ends a list) */
    uint32_t *head;     /* first lake sample of each exit's list */
    double *pool;       /* sediment that entered the lakes of each exit this step */
    flood_item *sorted; /* a pool's samples by height, to fill it from the bottom */
    unsigned char *closed;
} transport_buf;

static bool item_less(flood_item a, flood_item b)
{
    return a.h < b.h || (a.h == b.h && a.i < b.i);
}

static void heap_push(flood_item *heap, size_t *count, flood_item v)
{
    size_t k = (*count)++;
    while (k > 0) {
        size_t parent = (k - 1) / 2;
        if (!item_less(v, heap[parent])) break;
        heap[k] = heap[parent];
        k = parent;
    }
    heap[k] = v;
}

static flood_item heap_pop(flood_item *heap, size_t *count)
{
    flood_item top = heap[0], last = heap[--(*count)];
    size_t k = 0, n = *count;
    for (;;) {
        size_t c = 2 * k + 1;
        if (c >= n) break;
        if (c + 1 < n && item_less(heap[c + 1], heap[c])) c++;
        if (!item_less(heap[c], last)) break;
        heap[k] = heap[c];
        k = c;
    }
    if (n) heap[k] = last;
    return top;
}

/* Priority flood from the edges (Barnes et al. 2014, with a FIFO for flats and pits): fills
 * depressions flat, gives every sample a receiver popped before it, and the pop order. */
static void flood(const float *h, size_t nx, size_t nz, transport_buf *b)
{
    const size_t n = nx * nz;
    size_t heap_n = 0, fifo_head = 0, fifo_tail = 0, popped = 0;
    memset(b->closed, 0, n);
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            if (j != 0 && j + 1 != nz && i != 0 && i + 1 != nx) continue;
            const size_t s = j * nx + i;
            b->closed[s] = 1;
            b->filled[s] = h[s];
            b->recv[s] = (uint32_t)s;
            heap_push(b->heap, &heap_n, (flood_item){h[s], (uint32_t)s});
        }
    while (heap_n || fifo_head != fifo_tail) {
        const size_t c =
            fifo_head != fifo_tail ? b->fifo[fifo_head++] : heap_pop(b->heap, &heap_n).i;
        b->order[popped++] = (uint32_t)c;
        const long ci = (long)(c % nx), cj = (long)(c / nx);
        const float level = b->filled[c];
        for (int d = 0; d < 8; d++) {
            const long ni = ci + TRN_D8_DI[d], nj = cj + TRN_D8_DJ[d];
            if (ni < 0 || nj < 0 || ni >= (long)nx || nj >= (long)nz) continue;
            const size_t s = (size_t)nj * nx + (size_t)ni;
            if (b->closed[s]) continue;
            b->closed[s] = 1;
            b->recv[s] = (uint32_t)c;
            if (h[s] <= level) {
                b->filled[s] = level;
                b->fifo[fifo_tail++] = (uint32_t)s;
            } else {
                b->filled[s] = h[s];
                heap_push(b->heap, &heap_n, (flood_item){h[s], (uint32_t)s});
            }
        }
    }
}

/* Where a sample has a strictly lower filled neighbour, its receiver becomes the steepest one
 * (popped earlier, so the order still holds); on flats and lakes the flood's receiver stays. */
static void steepest_receivers(size_t nx, size_t nz, transport_buf *b)
{
    static const float dist[8] = {1.0f, 1.41421356f, 1.0f, 1.41421356f,
                                  1.0f, 1.41421356f, 1.0f, 1.41421356f};
    for (size_t j = 1; j + 1 < nz; j++)
        for (size_t i = 1; i + 1 < nx; i++) {
            const size_t s = j * nx + i;
            const float hs = b->filled[s];
            float best = 0.0f;
            for (int d = 0; d < 8; d++) {
                const size_t t = (size_t)((long)s + TRN_D8_DJ[d] * (long)nx + TRN_D8_DI[d]);
                const float drop = hs - b->filled[t];
                if (drop > 0.0f && drop / dist[d] > best) {
                    best = drop / dist[d];
                    b->recv[s] = (uint32_t)t;
                }
            }
        }
}

static int item_cmp(const void *a, const void *b)
{
    const flood_item *x = a, *y = b;
    return item_less(*x, *y) ? -1 : item_less(*y, *x) ? 1 : 0;
}

/* Settle volume in the lakes that leave by exit: still water drops its load, which fills the
 * lakes from their lowest samples up to one flat level, at most the spill level. Returns what
 * is left over (it flows on from the exit) and adds what settled to *deposited. */
static double fill_pool(float *h, transport_buf *b, uint32_t exit, double volume, double *deposited)
{
    size_t count = 0;
    for (uint32_t s = b->head[exit]; s != UINT32_MAX; s = b->next[s])
        b->sorted[count++] = (flood_item){h[s], s};
    qsort(b->sorted, count, sizeof *b->sorted, item_cmp);
    const double spill = (double)b->filled[b->sorted[0].i];
    /* Raise the k lowest samples to a common level until the volume is used up. */
    double below = 0.0, level = spill;
    for (size_t k = 1; k <= count; k++) {
        below += (double)b->sorted[k - 1].h;
        const double top = k < count ? (double)b->sorted[k].h : spill;
        const double need = top * (double)k - below;
        if (need >= volume) {
            level = (volume + below) / (double)k;
            break;
        }
    }
    if (level > spill) level = spill;
    const float lf = (float)level;
    double put = 0.0;
    for (size_t k = 0; k < count && b->sorted[k].h < lf; k++) {
        const uint32_t s = b->sorted[k].i;
        put += (double)lf - (double)h[s];
        h[s] = lf;
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
    /* Diffusion first, so the step ends with the transport pass, which leaves no pit. */
    if (p->diffusion > 0.0) diffuse(h, nx, nz, (float)p->diffusion, b->filled);
    flood(h, nx, nz, b);
    steepest_receivers(nx, nz, b);
    for (size_t s = 0; s < n; s++) {
        b->area[s] = 1.0f;
        b->load[s] = 0.0;
        b->lowest_up[s] = INFINITY;
    }
    for (size_t k = n; k-- > 0;) {
        const uint32_t s = b->order[k], r = b->recv[s];
        if (r != s) b->area[r] += b->area[s];
    }
    /* Receivers first: a lake sample's exit is its receiver's, or the receiver itself. */
    for (size_t k = 0; k < n; k++) {
        const uint32_t s = b->order[k], r = b->recv[s];
        b->head[s] = UINT32_MAX;
        b->pool[s] = 0.0;
        if (h[s] < b->filled[s]) {
            b->exit[s] = h[r] < b->filled[r] ? b->exit[r] : r;
            b->next[s] = b->head[b->exit[s]];
            b->head[b->exit[s]] = s;
        }
    }
    const float kc = (float)(p->capacity / 100.0);
    const float dep_rate = (float)p->deposition_rate;
    double eroded = 0.0, deposited = 0.0, exported = 0.0;
    for (size_t k = n; k-- > 0;) {
        const uint32_t s = b->order[k], r = b->recv[s];
        double load = b->load[s];
        const float hs = h[s];
        if (hs < b->filled[s]) {
            /* Still water: the load joins its lakes' pool, settled when the exit is reached.
             * The fill only raises it, so its height now bounds what its receiver may take. */
            b->pool[b->exit[s]] += load;
            if (hs < b->lowest_up[r]) b->lowest_up[r] = hs;
            continue;
        }
        if (b->head[s] != UINT32_MAX && b->pool[s] > 0.0)
            load += fill_pool(h, b, s, b->pool[s], &deposited);
        if (r == s) {
            /* Edges are the base level: what reaches them leaves the field. */
            exported += load;
            continue;
        }
        float hn = hs;
        {
            const long di = (long)(r % nx) - (long)(s % nx), dj = (long)(r / nx) - (long)(s / nx);
            const float drop = hs - b->filled[r];
            const float per_sample = di && dj ? drop / 1.41421356f : drop;
            const double cap = (double)(kc * sqrtf(b->area[s]) * per_sample);
            if (load < cap) {
                const float rate = p->rate_scale ? (float)p->erosion_rate * p->rate_scale[s]
                                                 : (float)p->erosion_rate;
                float take = rate * (float)(cap - load);
                if (take > drop) take = drop; /* never below the receiver: no pit is dug */
                hn = hs - take;
            } else if (b->lowest_up[s] > hs) {
                /* Never above the lowest donor, so every donor still drains here. */
                float put = dep_rate * (float)(load - cap);
                if (put > b->lowest_up[s] - hs) put = b->lowest_up[s] - hs;
                hn = hs + put;
            }
        }
        const double change = (double)hn - (double)hs;
        if (change < 0.0)
            eroded -= change;
        else
            deposited += change;
        load -= change; /* may dip below 0 by a rounding: kept so the ledger balances */
        h[s] = hn;
        if (hn < b->lowest_up[r]) b->lowest_up[r] = hn;
        b->load[r] += load;
    }
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
    b.filled = malloc(n * sizeof *b.filled);
    b.recv = malloc(n * sizeof *b.recv);
    b.order = malloc(n * sizeof *b.order);
    b.fifo = malloc(n * sizeof *b.fifo);
    b.heap = malloc(n * sizeof *b.heap);
    b.area = malloc(n * sizeof *b.area);
    b.load = malloc(n * sizeof *b.load);
    b.lowest_up = malloc(n * sizeof *b.lowest_up);
    b.exit = malloc(n * sizeof *b.exit);
    b.next = malloc(n * sizeof *b.next);
    b.head = malloc(n * sizeof *b.head);
    b.pool = malloc(n * sizeof *b.pool);
    b.sorted = malloc(n * sizeof *b.sorted);
    b.closed = malloc(n);
    trn_status st = TRN_OK;
    if (!b.filled || !b.recv || !b.order || !b.fifo || !b.heap || !b.area || !b.load ||
        !b.lowest_up || !b.exit || !b.next || !b.head || !b.pool || !b.sorted || !b.closed)
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "erosion: out of memory");
    for (uint32_t k = 0; st == TRN_OK && k < params->transport_steps; k++) {
        transport_step(h, nx, nz, params, &b, ledger);
        ledger->steps++;
        const double done =
            share0 + (share1 - share0) * (double)(k + 1) / (double)params->transport_steps;
        if (trn_progress_report(pr, done, "transport"))
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "transport: cancelled");
    }
    free(b.filled);
    free(b.recv);
    free(b.order);
    free(b.fifo);
    free(b.heap);
    free(b.area);
    free(b.load);
    free(b.lowest_up);
    free(b.exit);
    free(b.next);
    free(b.head);
    free(b.pool);
    free(b.sorted);
    free(b.closed);
    return st;
}
