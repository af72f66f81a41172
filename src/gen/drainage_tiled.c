/* Tiled drainage: Barnes 2016 parallel priority flood, flat distances by halo rounds, Barnes 2017 accumulation. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "gen/d8.h"
#include "gen/d8_rules.h"
#include "gen/drainage_tiled_internal.h"
#include "terrane/drainage_tiled.h"

/* Watershed labels of the local flood: 0 none yet, DT_OCEAN for water that reaches an outlet
 * inside the tile, then one per watershed that starts at the tile's border. */
#define DT_OCEAN 1u
#define DT_FIRST_LABEL 2u
/* flow_dir while directions are being found: a flat sample whose link is not chosen yet. */
#define DT_FLAT 0xFEu
#define DT_NONE UINT32_MAX
/* No exit, in the flow graph's 64-bit sample indices. */
#define DT_NONE64 UINT64_MAX

typedef struct dt_edge {
    uint32_t a, b; /* a < b */
    float w;
} dt_edge;

typedef struct dt_tile {
    uint32_t i0, j0, w, h;
    size_t n, perim;
    float *filled;
    uint8_t *dir;
    uint32_t *acc;
    float *height;   /* until the local flood is done */
    uint32_t *label; /* until the spill levels are applied */
    uint32_t labels; /* labels in use: DT_FIRST_LABEL .. labels-1 */
    dt_edge *edges;
    size_t edge_count, edge_cap;
} dt_tile;

struct trn_drainage_tiles {
    trn_drainage_tiling g;
    size_t nx, nz, count;
    size_t first, last; /* tiles this process owns */
    dt_tile *tiles;
    size_t *poff; /* each tile's first sample in the concatenated border strips */
    size_t perim_total;
    trn_drainage_tiled_stats stats;
};

/* ---- small containers ---- */

typedef struct dt_bytes {
    uint8_t *p;
    size_t len, cap;
} dt_bytes;

static bool bytes_add(dt_bytes *b, const void *src, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) return false;
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
    return true;
}

static bool bytes_u32(dt_bytes *b, uint32_t v)
{
    return bytes_add(b, &v, sizeof v);
}

static bool bytes_u64(dt_bytes *b, uint64_t v)
{
    return bytes_add(b, &v, sizeof v);
}

static inline uint32_t rd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint64_t rd_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline float rd_f32(const uint8_t *p)
{
    float v;
    memcpy(&v, p, sizeof v);
    return v;
}

typedef struct dt_heap {
    uint64_t *k;
    size_t n, cap;
} dt_heap;

static bool heap_push(dt_heap *h, uint64_t key)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1024;
        uint64_t *p = realloc(h->k, cap * sizeof *p);
        if (!p) return false;
        h->k = p;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (h->k[up] <= key) break;
        h->k[i] = h->k[up];
        i = up;
    }
    h->k[i] = key;
    return true;
}

static uint64_t heap_pop(dt_heap *h)
{
    const uint64_t top = h->k[0], last = h->k[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && h->k[c + 1] < h->k[c]) c++;
        if (last <= h->k[c]) break;
        h->k[i] = h->k[c];
        i = c;
    }
    if (h->n) h->k[i] = last;
    return top;
}

typedef struct dt_fifo {
    uint32_t *v;
    size_t head, n, cap;
} dt_fifo;

static bool fifo_push(dt_fifo *q, uint32_t x)
{
    if (q->head + q->n == q->cap) {
        if (q->head) {
            memmove(q->v, q->v + q->head, q->n * sizeof *q->v);
            q->head = 0;
        }
        if (q->n == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 1024;
            uint32_t *p = realloc(q->v, cap * sizeof *p);
            if (!p) return false;
            q->v = p;
            q->cap = cap;
        }
    }
    q->v[q->head + q->n++] = x;
    return true;
}

static inline uint32_t fifo_pop(dt_fifo *q)
{
    q->n--;
    return q->v[q->head++];
}

/* Heights as unsigned keys with the same order (negative floats reversed). */
static inline uint32_t sortable_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

static inline float fmaxf_keep(float a, float b)
{
    return b > a ? b : a;
}

/* ---- tile geometry: the border strip of a w x h tile, row 0, row h-1, then columns 0 and w-1 ---- */

static size_t perim_len(uint32_t w, uint32_t h)
{
    if (h == 1) return w;
    if (w == 1) return h;
    return 2 * (size_t)w + 2 * ((size_t)h - 2);
}

static size_t perim_pos(uint32_t w, uint32_t h, uint32_t li, uint32_t lj)
{
    if (h == 1) return li;
    if (w == 1) return lj;
    if (lj == 0) return li;
    if (lj == h - 1) return (size_t)w + li;
    if (li == 0) return 2 * (size_t)w + lj - 1;
    if (li == w - 1) return 2 * (size_t)w + (h - 2) + lj - 1;
    return SIZE_MAX;
}

static void perim_cell(uint32_t w, uint32_t h, size_t p, uint32_t *li, uint32_t *lj)
{
    if (h == 1) {
        *li = (uint32_t)p;
        *lj = 0;
    } else if (w == 1) {
        *li = 0;
        *lj = (uint32_t)p;
    } else if (p < w) {
        *li = (uint32_t)p;
        *lj = 0;
    } else if (p < 2 * (size_t)w) {
        *li = (uint32_t)(p - w);
        *lj = h - 1;
    } else if (p < 2 * (size_t)w + (h - 2)) {
        *li = 0;
        *lj = (uint32_t)(p - 2 * (size_t)w + 1);
    } else {
        *li = w - 1;
        *lj = (uint32_t)(p - 2 * (size_t)w - (h - 2) + 1);
    }
}

static size_t tile_of(const trn_drainage_tiles *r, size_t gi, size_t gj)
{
    return (gj / r->g.tile) * r->g.tiles_x + gi / r->g.tile;
}

static bool is_outlet(const trn_drainage_tiles *r, size_t gi, size_t gj, float h)
{
    return gi == 0 || gj == 0 || gi + 1 == r->nx || gj + 1 == r->nz ||
           (!isnan(r->g.sea_level) && (double)h <= r->g.sea_level);
}

static trn_status no_memory(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "tiled drainage: out of memory");
}

/* ---- step 1: each tile flooded from its own border (Barnes 2016, algorithm 2) ---- */

static bool edge_add(dt_tile *t, uint32_t a, uint32_t b, float w)
{
    if (t->edge_count == t->edge_cap) {
        size_t cap = t->edge_cap ? t->edge_cap * 2 : 64;
        dt_edge *p = realloc(t->edges, cap * sizeof *p);
        if (!p) return false;
        t->edges = p;
        t->edge_cap = cap;
    }
    dt_edge e = {a < b ? a : b, a < b ? b : a, w};
    t->edges[t->edge_count++] = e;
    return true;
}

static int edge_cmp(const void *x, const void *y)
{
    const dt_edge *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return (a->w > b->w) - (a->w < b->w);
}

/* Priority flood inside the tile from every border sample and outlet at its own height,
 * labelling watersheds; where two meet, the lower of the heights they meet at is their
 * spill edge. The border samples are never raised here: the graph decides their level. */
static trn_status tile_flood(const trn_drainage_tiles *r, dt_tile *t, trn_error *err)
{
    const uint32_t w = t->w, h = t->h;
    uint8_t *closed = t->dir; /* reused: directions are written only after the flood */
    dt_heap heap = {0};
    dt_fifo pit = {0};
    memset(closed, 0, t->n);
    for (uint32_t lj = 0; lj < h; lj++)
        for (uint32_t li = 0; li < w; li++) {
            const size_t c = (size_t)lj * w + li;
            const float hc = t->height[c];
            t->label[c] = 0;
            t->filled[c] = hc;
            const bool outlet = is_outlet(r, t->i0 + li, t->j0 + lj, hc);
            if (outlet) t->label[c] = DT_OCEAN;
            if (outlet || li == 0 || lj == 0 || li + 1 == w || lj + 1 == h) {
                closed[c] = 1;
                if (!heap_push(&heap, ((uint64_t)sortable_bits(hc) << 32) | c)) goto oom;
            }
        }
    t->labels = DT_FIRST_LABEL;
    for (;;) {
        uint32_t c;
        if (pit.n)
            c = fifo_pop(&pit);
        else if (heap.n)
            c = (uint32_t)heap_pop(&heap);
        else
            break;
        if (t->label[c] == 0) t->label[c] = t->labels++;
        const uint32_t lc = t->label[c];
        const float fc = t->filled[c];
        const uint32_t ci = c % w, cj = c / w;
        for (int d = 0; d < 8; d++) {
            const int64_t ni = (int64_t)ci + TRN_D8_DI[d], nj = (int64_t)cj + TRN_D8_DJ[d];
            if (ni < 0 || nj < 0 || ni >= w || nj >= h) continue;
            const uint32_t m = (uint32_t)(nj * w + ni);
            if (closed[m]) {
                const uint32_t lm = t->label[m];
                if (lm == 0) {
                    /* A border sample not taken yet is at least as high as fc: it drains
                     * through c, so it joins c's watershed. */
                    t->label[m] = lc;
                } else if (lm != lc) {
                    if (!edge_add(t, lc, lm, fmaxf_keep(fc, t->filled[m]))) goto oom;
                }
                continue;
            }
            closed[m] = 1;
            t->label[m] = lc;
            const float hm = t->height[m];
            if (hm < fc) {
                t->filled[m] = fc + 0.0f; /* raised: +0, never -0, as the whole-grid fill */
                if (!fifo_push(&pit, m)) goto oom;
            } else {
                t->filled[m] = hm;
                if (!heap_push(&heap, ((uint64_t)sortable_bits(hm) << 32) | m)) goto oom;
            }
        }
    }
    free(heap.k);
    free(pit.v);
    /* Keep the lowest spill of each pair of watersheds. */
    if (t->edge_count) {
        qsort(t->edges, t->edge_count, sizeof *t->edges, edge_cmp);
        size_t k = 0;
        for (size_t e = 0; e < t->edge_count; e++)
            if (k == 0 || t->edges[e].a != t->edges[k - 1].a || t->edges[e].b != t->edges[k - 1].b)
                t->edges[k++] = t->edges[e];
        t->edge_count = k;
    }
    for (uint32_t lj = 0; lj < h; lj++)
        for (uint32_t li = 0; li < w; li++) {
            const size_t c = (size_t)lj * w + li;
            t->dir[c] =
                is_outlet(r, t->i0 + li, t->j0 + lj, t->height[c]) ? TRN_DRAIN_OUTLET : 0;
        }
    return TRN_OK;
oom:
    free(heap.k);
    free(pit.v);
    return no_memory(err);
}

/* A process's tile blocks, each framed by its byte length, in tile order. */
static bool frame_begin(dt_bytes *b, size_t *at)
{
    const uint64_t zero = 0;
    *at = b->len;
    return bytes_add(b, &zero, sizeof zero);
}

static void frame_end(dt_bytes *b, size_t at)
{
    const uint64_t len = b->len - at - sizeof(uint64_t);
    memcpy(b->p + at, &len, sizeof len);
}

static trn_status frames_split(const uint8_t *buf, uint64_t total, size_t count,
                               const uint8_t **blocks, trn_error *err)
{
    uint64_t at = 0;
    for (size_t t = 0; t < count; t++) {
        uint64_t len;
        if (at + sizeof len > total) goto bad;
        memcpy(&len, buf + at, sizeof len);
        at += sizeof len;
        if (len > total - at) goto bad;
        blocks[t] = buf + at;
        at += len;
    }
    if (at == total) return TRN_OK;
bad:
    return trn_error_set(err, TRN_ERR_FORMAT, NULL, -1,
                         "tiled drainage: the tiles' blocks do not add up (processes disagree "
                         "about the tiling)");
}

/* ---- step 2 (process 0): the spill graph, lowest escape level of every watershed ---- */

typedef struct dt_gedge {
    uint32_t to;
    float w;
} dt_gedge;

static trn_status spill_solve(trn_drainage_tiles *r, const uint8_t **blocks, void **out_blob,
                              uint64_t *out_bytes, trn_error *err)
{
    const size_t count = r->count;
    uint64_t *blob_base = NULL;
    size_t *base = malloc(count * sizeof *base);
    if (!base) return no_memory(err);
    size_t nodes = 1;
    for (size_t t = 0; t < count; t++) {
        base[t] = nodes;
        nodes += rd_u32(blocks[t]) - DT_FIRST_LABEL;
    }
    /* Watersheds are numbered in 32 bits (the heap's keys hold one beside a level). */
    if (nodes >= DT_NONE) {
        free(base);
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "tiled drainage: %zu watersheds meet the tiles' borders, expected "
                             "fewer than 2^32-1: use larger tiles",
                             nodes);
    }
    /* Edges both ways: counted, then placed (CSR). */
    size_t *deg = calloc(nodes + 1, sizeof *deg);
    dt_edge *el = NULL;
    size_t ecount = 0, ecap = 0;
    dt_gedge *adj = NULL;
    float *W = NULL;
    dt_heap heap = {0};
    trn_status st = TRN_OK;
    if (!deg) goto oom;
#define NODE(t, l) ((l) == DT_OCEAN ? (size_t)0 : base[t] + (l) - DT_FIRST_LABEL)
#define ADD_EDGE(x, y, wt)                                                                    \
    do {                                                                                       \
        if (ecount == ecap) {                                                                  \
            ecap = ecap ? ecap * 2 : 1024;                                                     \
            dt_edge *ne_ = realloc(el, ecap * sizeof *ne_);                                    \
            if (!ne_) goto oom;                                                                \
            el = ne_;                                                                          \
        }                                                                                      \
        const uint32_t x_ = (uint32_t)(x), y_ = (uint32_t)(y);                                 \
        el[ecount++] = (dt_edge){x_ < y_ ? x_ : y_, x_ < y_ ? y_ : x_, (wt)};                  \
    } while (0)
    for (size_t t = 0; t < count; t++) {
        const dt_tile *tt = &r->tiles[t];
        const uint8_t *b = blocks[t];
        const uint32_t ne = rd_u32(b + 8);
        const uint8_t *edges = b + 12 + 8 * tt->perim;
        for (uint32_t e = 0; e < ne; e++) {
            const uint8_t *p = edges + 12 * (size_t)e;
            const size_t x = NODE(t, rd_u32(p)), y = NODE(t, rd_u32(p + 4));
            if (x != y) ADD_EDGE(x, y, rd_f32(p + 8));
        }
        /* Between this tile's border and its neighbours' (each pair once). */
        for (size_t p = 0; p < tt->perim; p++) {
            uint32_t li, lj;
            perim_cell(tt->w, tt->h, p, &li, &lj);
            const size_t gi = tt->i0 + li, gj = tt->j0 + lj;
            const uint32_t lp = rd_u32(b + 12 + 4 * p);
            const float hp = rd_f32(b + 12 + 4 * tt->perim + 4 * p);
            for (int d = 0; d < 8; d++) {
                const int64_t ni = (int64_t)gi + TRN_D8_DI[d], nj = (int64_t)gj + TRN_D8_DJ[d];
                if (ni < 0 || nj < 0 || ni >= (int64_t)r->nx || nj >= (int64_t)r->nz) continue;
                const size_t u = tile_of(r, (size_t)ni, (size_t)nj);
                if (u <= t) continue;
                const dt_tile *tu = &r->tiles[u];
                const size_t q = perim_pos(tu->w, tu->h, (uint32_t)(ni - tu->i0),
                                           (uint32_t)(nj - tu->j0));
                const uint8_t *bu = blocks[u];
                const size_t x = NODE(t, lp), y = NODE(u, rd_u32(bu + 12 + 4 * q));
                if (x == y) continue;
                ADD_EDGE(x, y, fmaxf_keep(hp, rd_f32(bu + 12 + 4 * tu->perim + 4 * q)));
            }
        }
    }
#undef ADD_EDGE
#undef NODE
    /* One edge per pair of watersheds, at the lowest spill between them. */
    if (ecount) {
        qsort(el, ecount, sizeof *el, edge_cmp);
        size_t k = 0;
        for (size_t e = 0; e < ecount; e++)
            if (k == 0 || el[e].a != el[k - 1].a || el[e].b != el[k - 1].b) el[k++] = el[e];
        ecount = k;
    }
    r->stats.spill_nodes = nodes;
    r->stats.spill_edges = ecount;
    for (size_t e = 0; e < ecount; e++) {
        deg[el[e].a + 1]++;
        deg[el[e].b + 1]++;
    }
    for (size_t k = 0; k < nodes; k++)
        deg[k + 1] += deg[k];
    adj = malloc((2 * ecount + 1) * sizeof *adj);
    W = malloc(nodes * sizeof *W);
    if (!adj || !W) goto oom;
    {
        size_t *fill = malloc((nodes + 1) * sizeof *fill);
        if (!fill) goto oom;
        memcpy(fill, deg, (nodes + 1) * sizeof *fill);
        for (size_t e = 0; e < ecount; e++) {
            adj[fill[el[e].a]++] = (dt_gedge){el[e].b, el[e].w};
            adj[fill[el[e].b]++] = (dt_gedge){el[e].a, el[e].w};
        }
        free(fill);
    }
    /* Minimax paths from the outlets (Dijkstra with max instead of +): the level each
     * watershed's water must rise to before it can leave the grid. */
    for (size_t k = 0; k < nodes; k++)
        W[k] = INFINITY;
    W[0] = -INFINITY;
    if (!heap_push(&heap, (uint64_t)sortable_bits(W[0]) << 32)) goto oom;
    while (heap.n) {
        const uint64_t key = heap_pop(&heap);
        const uint32_t v = (uint32_t)key;
        if (sortable_bits(W[v]) != (uint32_t)(key >> 32)) continue;
        for (size_t k = deg[v]; k < deg[v + 1]; k++) {
            const float cand = fmaxf_keep(W[v], adj[k].w);
            if (cand < W[adj[k].to]) {
                W[adj[k].to] = cand;
                if (!heap_push(&heap, ((uint64_t)sortable_bits(cand) << 32) | adj[k].to))
                    goto oom;
            }
        }
    }
    /* The answer every process needs: the tiles' first node and every node's level. */
    *out_bytes = sizeof(uint64_t) * count + sizeof(float) * nodes;
    blob_base = malloc((size_t)*out_bytes);
    if (!blob_base) goto oom;
    for (size_t t = 0; t < count; t++)
        blob_base[t] = base[t];
    memcpy(blob_base + count, W, sizeof(float) * nodes);
    *out_blob = blob_base;
    goto done;
oom:
    st = no_memory(err);
done:
    free(heap.k);
    free(W);
    free(adj);
    free(el);
    free(deg);
    free(base);
    return st;
}

/* ---- border strips: one value per border sample of every tile, in tile order ---- */

/* Whether tile u touches (sides or corners) a tile that process q owns. */
static bool tile_meets(const trn_drainage_tiles *r, trn_comm *comm, size_t u, int q)
{
    const size_t tx = u % r->g.tiles_x, tz = u / r->g.tiles_x;
    for (int dz = -1; dz <= 1; dz++)
        for (int dx = -1; dx <= 1; dx++) {
            if ((!dx && !dz) || (dx < 0 && tx == 0) || (dz < 0 && tz == 0) ||
                (dx > 0 && tx + 1 >= r->g.tiles_x) || (dz > 0 && tz + 1 >= r->g.tiles_z))
                continue;
            const size_t v =
                (tz + (size_t)(ptrdiff_t)dz) * r->g.tiles_x + tx + (size_t)(ptrdiff_t)dx;
            if (trn_comm_tile_owner(comm, v, r->count) == q) return true;
        }
    return false;
}

/* all holds this process's tiles' strips (at poff); each goes to the processes that own a
 * tile it touches, and the strips of the tiles touching this process's come back into all:
 * point to point, a tile's ring only ever reads its neighbours' strips. Other tiles' entries
 * are left as they are. Collective. */
static trn_status strips_share(trn_comm *comm, const trn_drainage_tiles *r, size_t elem,
                               uint8_t *all, trn_error *err)
{
    const int size = trn_comm_size(comm), me = trn_comm_rank(comm);
    uint64_t *count = calloc(2u * (size_t)size, sizeof *count);
    uint8_t **buf = calloc(2u * (size_t)size, sizeof *buf);
    trn_status st = TRN_OK;
    if (!count || !buf) st = no_memory(err);
    uint64_t *scount = count, *rcount = count ? count + size : NULL;
    uint8_t **sbuf = buf, **rbuf = buf ? buf + size : NULL;
    for (int q = 0; q < size && !st; q++) {
        if (q == me) continue;
        for (size_t u = r->first; u < r->last; u++)
            if (tile_meets(r, comm, u, q)) scount[q] += r->tiles[u].perim * elem;
        const size_t f = trn_comm_first_tile(comm, q, r->count),
                     l = trn_comm_first_tile(comm, q + 1, r->count);
        for (size_t u = f; u < l; u++)
            if (tile_meets(r, comm, u, me)) rcount[q] += r->tiles[u].perim * elem;
        if ((scount[q] && !(sbuf[q] = malloc((size_t)scount[q]))) ||
            (rcount[q] && !(rbuf[q] = malloc((size_t)rcount[q]))))
            st = no_memory(err);
        size_t at = 0;
        for (size_t u = r->first; !st && u < r->last; u++)
            if (tile_meets(r, comm, u, q)) {
                memcpy(sbuf[q] + at, all + r->poff[u] * elem, r->tiles[u].perim * elem);
                at += r->tiles[u].perim * elem;
            }
    }
    st = trn_comm_agree(comm, st, err);
    if (!st)
        st = trn_comm_exchange(comm, (const void *const *)sbuf, scount, (void *const *)rbuf, rcount,
                               err);
    for (int q = 0; q < size && !st; q++) {
        if (q == me) continue;
        const size_t f = trn_comm_first_tile(comm, q, r->count),
                     l = trn_comm_first_tile(comm, q + 1, r->count);
        size_t at = 0;
        for (size_t u = f; u < l; u++)
            if (tile_meets(r, comm, u, me)) {
                memcpy(all + r->poff[u] * elem, rbuf[q] + at, r->tiles[u].perim * elem);
                at += r->tiles[u].perim * elem;
            }
    }
    for (int q = 0; buf && q < 2 * size; q++)
        free(buf[q]);
    free(buf);
    free(count);
    return st;
}

static trn_status strips_exchange(trn_comm *comm, trn_drainage_tiles *r, size_t elem,
                                  void (*put)(const dt_tile *t, size_t p, size_t li, size_t lj,
                                              uint8_t *dst),
                                  void **all, trn_error *err)
{
    if (trn_comm_can_exchange(comm)) {
        uint8_t *strips = calloc(r->perim_total * elem + 1u, 1);
        if (!strips) return no_memory(err);
        for (size_t t = r->first; t < r->last; t++) {
            const dt_tile *tt = &r->tiles[t];
            for (size_t p = 0; p < tt->perim; p++) {
                uint32_t li, lj;
                perim_cell(tt->w, tt->h, p, &li, &lj);
                put(tt, p, li, lj, strips + (r->poff[t] + p) * elem);
            }
        }
        const trn_status st = strips_share(comm, r, elem, strips, err);
        if (st) {
            free(strips);
            return st;
        }
        *all = strips;
        return TRN_OK;
    }
    const size_t lo = r->poff[r->first], hi = r->poff[r->last];
    uint8_t *mine = malloc((hi - lo) * elem + 1);
    if (!mine) return no_memory(err);
    for (size_t t = r->first; t < r->last; t++) {
        const dt_tile *tt = &r->tiles[t];
        for (size_t p = 0; p < tt->perim; p++) {
            uint32_t li, lj;
            perim_cell(tt->w, tt->h, p, &li, &lj);
            put(tt, p, li, lj, mine + (r->poff[t] - lo + p) * elem);
        }
    }
    trn_status st = trn_comm_allgather(comm, mine, (hi - lo) * elem, all, NULL, err);
    free(mine);
    return st;
}

static void put_filled(const dt_tile *t, size_t p, size_t li, size_t lj, uint8_t *dst)
{
    (void)p;
    memcpy(dst, &t->filled[lj * t->w + li], sizeof(float));
}

static void put_dir(const dt_tile *t, size_t p, size_t li, size_t lj, uint8_t *dst)
{
    (void)p;
    *dst = t->dir[lj * t->w + li];
}

/* The strip value of global sample (gi, gj) (a border sample of its tile). */
static const uint8_t *strip_at(const trn_drainage_tiles *r, const uint8_t *strips, size_t elem,
                               size_t gi, size_t gj)
{
    const size_t u = tile_of(r, gi, gj);
    const dt_tile *tu = &r->tiles[u];
    const size_t q = perim_pos(tu->w, tu->h, (uint32_t)(gi - tu->i0), (uint32_t)(gj - tu->j0));
    return strips + (r->poff[u] + q) * elem;
}

/* ---- step 3: directions; flats by breadth-first distances settled over halo rounds ---- */

typedef struct dt_halo {
    size_t stride;
    float *f;     /* filled with a one-sample ring from the neighbours (NaN off the grid) */
    uint32_t *d;  /* flat distances, same layout */
    ptrdiff_t off[8];
} dt_halo;

typedef struct dt_seed {
    uint32_t d, c;
} dt_seed;

static int seed_cmp(const void *x, const void *y)
{
    const dt_seed *a = x, *b = y;
    if (a->d != b->d) return a->d < b->d ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

/* Distances over the tile's flat samples from its exits and from the ring's current ones:
 * breadth-first, seeds taken in order of distance. */
static bool flat_distances(const dt_tile *t, dt_halo *hl)
{
    const size_t s = hl->stride;
    dt_seed *seeds = NULL;
    size_t ns = 0, cap = 0;
    dt_fifo q = {0};
    bool ok = false;
    for (uint32_t lj = 0; lj < t->h; lj++)
        for (uint32_t li = 0; li < t->w; li++)
            if (t->dir[(size_t)lj * t->w + li] == DT_FLAT)
                hl->d[(lj + 1) * s + li + 1] = TRN_D8_FLAT_UNKNOWN;
    for (uint32_t lj = 0; lj < t->h; lj++)
        for (uint32_t li = 0; li < t->w; li++) {
            if (t->dir[(size_t)lj * t->w + li] != DT_FLAT) continue;
            const size_t c = (lj + 1) * s + li + 1;
            uint32_t best = TRN_D8_FLAT_UNKNOWN;
            for (int d = 0; d < 8; d++) {
                const size_t m = (size_t)((ptrdiff_t)c + hl->off[d]);
                if (hl->f[m] == hl->f[c] && hl->d[m] != TRN_D8_FLAT_UNKNOWN &&
                    hl->d[m] + 1 < best)
                    best = hl->d[m] + 1;
            }
            if (best == TRN_D8_FLAT_UNKNOWN) continue;
            if (ns == cap) {
                cap = cap ? cap * 2 : 256;
                dt_seed *p = realloc(seeds, cap * sizeof *p);
                if (!p) goto out;
                seeds = p;
            }
            seeds[ns++] = (dt_seed){best, (uint32_t)c};
        }
    if (ns) qsort(seeds, ns, sizeof *seeds, seed_cmp);
    size_t si = 0;
    while (si < ns || q.n) {
        if (si < ns && (q.n == 0 || seeds[si].d <= hl->d[q.v[q.head]])) {
            const dt_seed sd = seeds[si++];
            if (sd.d >= hl->d[sd.c]) continue;
            hl->d[sd.c] = sd.d;
            if (!fifo_push(&q, sd.c)) goto out;
            continue;
        }
        const uint32_t c = fifo_pop(&q);
        const uint32_t next = hl->d[c] + 1;
        for (int d = 0; d < 8; d++) {
            const size_t m = (size_t)((ptrdiff_t)c + hl->off[d]);
            const size_t mi = m % s, mj = m / s;
            if (mi == 0 || mj == 0 || mi > t->w || mj > t->h) continue; /* the ring is fixed */
            if (t->dir[(mj - 1) * t->w + mi - 1] != DT_FLAT) continue;
            if (hl->f[m] != hl->f[c] || hl->d[m] <= next) continue;
            hl->d[m] = next;
            if (!fifo_push(&q, (uint32_t)m)) goto out;
        }
    }
    ok = true;
out:
    free(seeds);
    free(q.v);
    return ok;
}

/* Steps (li, lj) to the next sample of the ring one sample outside tile t (tile-local, row by
 * row, the inside jumped over); start from li = -2, lj = -1. False past the last. */
static inline bool ring_next(const dt_tile *t, int64_t *li, int64_t *lj)
{
    const int64_t w = t->w, h = t->h;
    if (++*li > w) {
        *li = -1;
        if (++*lj > h) return false;
    }
    if (*li >= 0 && *lj >= 0 && *li < w && *lj < h) *li = w;
    return true;
}

static void halo_ring(const trn_drainage_tiles *r, const dt_tile *t, dt_halo *hl,
                      const uint8_t *fstrips, const uint8_t *dstrips)
{
    const size_t s = hl->stride;
    for (int64_t li = -2, lj = -1; ring_next(t, &li, &lj);) {
        const size_t k = (size_t)(lj + 1) * s + (size_t)(li + 1);
        const int64_t gi = (int64_t)t->i0 + li, gj = (int64_t)t->j0 + lj;
        if (gi < 0 || gj < 0 || gi >= (int64_t)r->nx || gj >= (int64_t)r->nz) {
            if (fstrips) hl->f[k] = NAN;
            if (dstrips) hl->d[k] = TRN_D8_FLAT_UNKNOWN;
            continue;
        }
        if (fstrips) hl->f[k] = rd_f32(strip_at(r, fstrips, sizeof(float), (size_t)gi, (size_t)gj));
        if (dstrips)
            hl->d[k] = rd_u32(strip_at(r, dstrips, sizeof(uint32_t), (size_t)gi, (size_t)gj));
    }
}

/* Whether the ring's distances in strips differ from those the tile last measured with. */
static bool ring_changed(const trn_drainage_tiles *r, const dt_tile *t, const dt_halo *hl,
                         const uint8_t *dstrips)
{
    const size_t s = hl->stride;
    for (int64_t li = -2, lj = -1; ring_next(t, &li, &lj);) {
        const int64_t gi = (int64_t)t->i0 + li, gj = (int64_t)t->j0 + lj;
        if (gi < 0 || gj < 0 || gi >= (int64_t)r->nx || gj >= (int64_t)r->nz) continue;
        const uint32_t v = rd_u32(strip_at(r, dstrips, sizeof(uint32_t), (size_t)gi, (size_t)gj));
        if (v != hl->d[(size_t)(lj + 1) * s + (size_t)(li + 1)]) return true;
    }
    return false;
}

static trn_status directions(trn_comm *comm, trn_drainage_tiles *r, const double inv[8],
                             trn_error *err)
{
    const size_t own = r->last - r->first;
    dt_halo *halos = calloc(own ? own : 1, sizeof *halos);
    void *fstrips = NULL, *prev = NULL, *cur = NULL;
    trn_status st = TRN_OK;
    if (!halos) return no_memory(err);
    st = strips_exchange(comm, r, sizeof(float), put_filled, &fstrips, err);
    if (st != TRN_OK) goto done;
    for (size_t k = 0; k < own; k++) {
        const dt_tile *t = &r->tiles[r->first + k];
        dt_halo *hl = &halos[k];
        hl->stride = (size_t)t->w + 2;
        const size_t hn = hl->stride * ((size_t)t->h + 2);
        hl->f = malloc(hn * sizeof *hl->f);
        hl->d = malloc(hn * sizeof *hl->d);
        if (!hl->f || !hl->d) {
            st = no_memory(err);
            goto done;
        }
        for (int d = 0; d < 8; d++)
            hl->off[d] = TRN_D8_DI[d] + TRN_D8_DJ[d] * (ptrdiff_t)hl->stride;
        for (uint32_t lj = 0; lj < t->h; lj++)
            memcpy(&hl->f[(lj + 1) * hl->stride + 1], &t->filled[(size_t)lj * t->w],
                   t->w * sizeof(float));
        halo_ring(r, t, hl, fstrips, NULL);
        for (uint32_t lj = 0; lj < t->h; lj++)
            for (uint32_t li = 0; li < t->w; li++) {
                const size_t c = (size_t)lj * t->w + li, hc = (lj + 1) * hl->stride + li + 1;
                hl->d[hc] = TRN_D8_FLAT_EXIT;
                if (t->dir[c] == TRN_DRAIN_OUTLET) continue;
                const int best = trn_d8_steepest(&hl->f[hc], hl->off, inv);
                if (best >= 0) {
                    t->dir[c] = (uint8_t)best;
                } else {
                    t->dir[c] = DT_FLAT;
                    hl->d[hc] = TRN_D8_FLAT_UNKNOWN;
                }
            }
    }
    /* Rounds: every tile measures its flats from its ring, the rings are exchanged, until no
     * border distance changes (the shortest distances are the only fixed point). */
    const size_t strip_bytes = r->perim_total * sizeof(uint32_t);
    for (size_t round = 0;; round++) {
        uint8_t *mine_strips = NULL;
        if (trn_comm_can_exchange(comm)) {
            /* Each process its own strips and its neighbours': settled when no process's own
             * strips changed. */
            const size_t lo = r->poff[r->first], hi = r->poff[r->last];
            if (!(cur = calloc(strip_bytes + 1u, 1))) {
                st = no_memory(err);
                goto done;
            }
            for (size_t k = 0; k < own; k++) {
                const dt_tile *t = &r->tiles[r->first + k];
                for (size_t p = 0; p < t->perim; p++) {
                    uint32_t li, lj;
                    perim_cell(t->w, t->h, p, &li, &lj);
                    memcpy((uint8_t *)cur + (r->poff[r->first + k] + p) * sizeof(uint32_t),
                           &halos[k].d[(lj + 1) * halos[k].stride + li + 1], sizeof(uint32_t));
                }
            }
            if ((st = strips_share(comm, r, sizeof(uint32_t), cur, err))) goto done;
            const int changed = !prev || memcmp((const uint8_t *)prev + lo * sizeof(uint32_t),
                                                (const uint8_t *)cur + lo * sizeof(uint32_t),
                                                (hi - lo) * sizeof(uint32_t)) != 0;
            int any = 1;
            if ((st = trn_comm_max(comm, changed, &any, err))) goto done;
            if (!any) {
                r->stats.flat_rounds = round;
                break;
            }
        } else {
            const size_t lo = r->poff[r->first], hi = r->poff[r->last];
            mine_strips = malloc((hi - lo) * sizeof(uint32_t) + 1);
            if (!mine_strips) {
                st = no_memory(err);
                goto done;
            }
            for (size_t k = 0; k < own; k++) {
                const dt_tile *t = &r->tiles[r->first + k];
                for (size_t p = 0; p < t->perim; p++) {
                    uint32_t li, lj;
                    perim_cell(t->w, t->h, p, &li, &lj);
                    memcpy(mine_strips + (r->poff[r->first + k] - lo + p) * sizeof(uint32_t),
                           &halos[k].d[(lj + 1) * halos[k].stride + li + 1], sizeof(uint32_t));
                }
            }
            st = trn_comm_allgather(comm, mine_strips, (hi - lo) * sizeof(uint32_t), &cur, NULL,
                                    err);
            free(mine_strips);
            if (st != TRN_OK) goto done;
            if (prev && memcmp(prev, cur, strip_bytes) == 0) {
                r->stats.flat_rounds = round;
                break;
            }
        }
        free(prev);
        prev = cur;
        cur = NULL;
        for (size_t k = 0; k < own; k++) {
            const dt_tile *t = &r->tiles[r->first + k];
            /* A tile whose ring did not change since its last measure keeps its distances. */
            if (round > 0 && !ring_changed(r, t, &halos[k], prev)) continue;
            halo_ring(r, t, &halos[k], NULL, prev);
            if (!flat_distances(t, &halos[k])) {
                st = no_memory(err);
                goto done;
            }
        }
    }
    for (size_t k = 0; k < own; k++) {
        dt_tile *t = &r->tiles[r->first + k];
        const dt_halo *hl = &halos[k];
        for (uint32_t lj = 0; lj < t->h; lj++)
            for (uint32_t li = 0; li < t->w; li++) {
                const size_t c = (size_t)lj * t->w + li, hc = (lj + 1) * hl->stride + li + 1;
                if (t->dir[c] != DT_FLAT) continue;
                const int pick = trn_d8_flat_pick(&hl->f[hc], &hl->d[hc], hl->off);
                if (pick < 0) {
                    st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                       "tiled drainage: flat sample (%u, %u) found no way out",
                                       t->i0 + li, t->j0 + lj);
                    goto done;
                }
                t->dir[c] = (uint8_t)pick;
            }
    }
done:
    for (size_t k = 0; k < own; k++) {
        free(halos[k].f);
        free(halos[k].d);
    }
    free(halos);
    free(fstrips);
    free(prev);
    free(cur);
    return st;
}

/* ---- step 4: accumulation (Barnes 2017): each tile alone, then the flows between tiles ---- */

/* The sample a D8 code leads to, as a tile-local index, or DT_NONE when it leaves the tile. */
static inline uint32_t local_target(const dt_tile *t, size_t c)
{
    const int64_t ni = (int64_t)(c % t->w) + TRN_D8_DI[t->dir[c]];
    const int64_t nj = (int64_t)(c / t->w) + TRN_D8_DJ[t->dir[c]];
    if (ni < 0 || nj < 0 || ni >= t->w || nj >= t->h) return DT_NONE;
    return (uint32_t)(nj * t->w + ni);
}

/* a + b, held at UINT32_MAX: a grid of 2^32 samples or more (the tiled solver's alone) may
 * gather more above one sample than the accumulation's 32 bits count; below that no sum
 * reaches it, so the bytes stay trn_drainage_compute's. */
static inline uint32_t acc_add(uint32_t a, uint32_t b)
{
    return b > UINT32_MAX - a ? UINT32_MAX : a + b;
}

/* acc = 1 + extra (NULL: none) + everything upstream inside the tile; indeg is scratch. */
static void tile_accumulate(dt_tile *t, const uint32_t *extra, uint8_t *indeg)
{
    memset(indeg, 0, t->n);
    for (size_t c = 0; c < t->n; c++) {
        t->acc[c] = acc_add(1u, extra ? extra[c] : 0u);
        if (t->dir[c] == TRN_DRAIN_OUTLET) continue;
        const uint32_t m = local_target(t, c);
        if (m != DT_NONE) indeg[m]++;
    }
    for (size_t k = 0; k < t->n; k++) {
        if (indeg[k] != 0) continue;
        size_t c = k;
        for (;;) {
            indeg[c] = 0xFF;
            if (t->dir[c] == TRN_DRAIN_OUTLET) break;
            const uint32_t m = local_target(t, c);
            if (m == DT_NONE) break;
            t->acc[m] = acc_add(t->acc[m], t->acc[c]);
            if (--indeg[m] != 0) break;
            c = m;
        }
    }
}

/* Which samples receive water from another tile (the ring's directions point in). */
static void tile_entries(const trn_drainage_tiles *r, const dt_tile *t, const uint8_t *dstrips,
                         uint8_t *entry)
{
    memset(entry, 0, t->n);
    for (int64_t li = -2, lj = -1; ring_next(t, &li, &lj);) {
        const int64_t gi = (int64_t)t->i0 + li, gj = (int64_t)t->j0 + lj;
        if (gi < 0 || gj < 0 || gi >= (int64_t)r->nx || gj >= (int64_t)r->nz) continue;
        const uint8_t dm = *strip_at(r, dstrips, 1, (size_t)gi, (size_t)gj);
        if (dm == TRN_DRAIN_OUTLET) continue;
        const int64_t ti = li + TRN_D8_DI[dm], tj = lj + TRN_D8_DJ[dm];
        if (ti >= 0 && tj >= 0 && ti < (int64_t)t->w && tj < (int64_t)t->h)
            entry[tj * t->w + ti] = 1;
    }
}

/* A sample's index in the whole grid (j * nx + i): 64 bits, as a grid may hold more than 2^32
 * samples (65537^2); indices inside a tile stay 32-bit. */
uint64_t trn_dt_sample_index(size_t nx, uint32_t i0, uint32_t j0, uint32_t w, size_t c)
{
    return ((uint64_t)j0 + c / w) * nx + i0 + c % w;
}

static inline uint64_t global_index(const trn_drainage_tiles *r, const dt_tile *t, size_t c)
{
    return trn_dt_sample_index(r->nx, t->i0, t->j0, t->w, c);
}

/* A tile's block for the flow graph: its exits (sample, where it flows, both 64-bit indices
 * in the whole grid, and its local accumulation: 20 bytes) and its entries (sample, the exit
 * its water reaches inside the tile or DT_NONE64: 16 bytes). down is scratch of t->n. */
static bool flow_block(const trn_drainage_tiles *r, const dt_tile *t, const uint8_t *entry,
                       uint32_t *down, dt_bytes *b)
{
    uint32_t n_exit = 0, n_entry = 0;
    for (size_t c = 0; c < t->n; c++) {
        n_entry += entry[c];
        n_exit += t->dir[c] != TRN_DRAIN_OUTLET && local_target(t, c) == DT_NONE;
    }
    if (!bytes_u32(b, n_exit) || !bytes_u32(b, n_entry)) return false;
    for (size_t c = 0; c < t->n; c++) {
        if (t->dir[c] == TRN_DRAIN_OUTLET || local_target(t, c) != DT_NONE) continue;
        /* The receiver: one D8 step from the sample (unsigned wrap-around adds the step). */
        const int64_t step = (int64_t)TRN_D8_DJ[t->dir[c]] * (int64_t)r->nx + TRN_D8_DI[t->dir[c]];
        const uint64_t to = global_index(r, t, c) + (uint64_t)step;
        if (!bytes_u64(b, global_index(r, t, c)) || !bytes_u64(b, to) ||
            !bytes_u32(b, t->acc[c]))
            return false;
    }
    /* down[]: the exit each sample's water reaches, as a tile-local index (DT_NONE: an
     * outlet), found along each entry's path and remembered, so every sample is walked once. */
    for (size_t c = 0; c < t->n; c++)
        down[c] = DT_NONE - 1;
    dt_fifo path = {0};
    for (size_t q = 0; q < t->n; q++) {
        if (!entry[q]) continue;
        size_t c = q;
        uint32_t found;
        path.head = path.n = 0;
        for (;;) {
            if (down[c] != DT_NONE - 1) {
                found = down[c];
                break;
            }
            if (!fifo_push(&path, (uint32_t)c)) {
                free(path.v);
                return false;
            }
            if (t->dir[c] == TRN_DRAIN_OUTLET) {
                found = DT_NONE;
                break;
            }
            const uint32_t m = local_target(t, c);
            if (m == DT_NONE) {
                found = (uint32_t)c;
                break;
            }
            c = m;
        }
        for (size_t k = 0; k < path.n; k++)
            down[path.v[path.head + k]] = found;
        if (!bytes_u64(b, global_index(r, t, q)) ||
            !bytes_u64(b, found == DT_NONE ? DT_NONE64 : global_index(r, t, found))) {
            free(path.v);
            return false;
        }
    }
    free(path.v);
    return true;
}

typedef struct dt_key {
    uint64_t cell;
    uint32_t idx;
} dt_key;

static int key_cmp(const void *x, const void *y)
{
    const dt_key *a = x, *b = y;
    return (a->cell > b->cell) - (a->cell < b->cell);
}

static uint32_t key_find(const dt_key *keys, size_t n, uint64_t cell)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (keys[mid].cell < cell)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo].cell == cell ? keys[lo].idx : DT_NONE;
}

/* Process 0: the inflow of every entry, in a topological order of exits and entries (water
 * never flows in a circle). Sums of whole counts, so the order of additions cannot matter. */
static trn_status flow_solve(trn_drainage_tiles *r, const uint8_t **blocks, void **out_blob,
                             uint64_t *out_bytes, trn_error *err)
{
    const size_t count = r->count;
    size_t ne = 0, nq = 0;
    for (size_t t = 0; t < count; t++) {
        ne += rd_u32(blocks[t]);
        nq += rd_u32(blocks[t] + 4);
    }
    r->stats.flow_links = ne;
    /* Exits and entries are numbered in 32 bits (at most the tiles' borders: 2^32 of them
     * would take tiles of a few samples on the largest grid). */
    if (ne + nq >= DT_NONE)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "tiled drainage: %zu flows between tiles, expected fewer than "
                             "2^32-1: use larger tiles",
                             ne + nq);
    dt_key *ekeys = malloc((ne + 1) * sizeof *ekeys), *qkeys = malloc((nq + 1) * sizeof *qkeys);
    /* Targets and downs: whole-grid sample indices as read, then exit and entry numbers. */
    uint64_t *etarget = malloc((ne + 1) * sizeof *etarget);
    uint64_t *qdown = malloc((nq + 1) * sizeof *qdown);
    uint64_t *eval = malloc((ne + 1) * sizeof *eval), *qval = calloc(nq + 1, sizeof *qval);
    uint32_t *epend = calloc(ne + 1, sizeof *epend), *qpend = calloc(nq + 1, sizeof *qpend);
    uint32_t *stack = malloc((ne + nq + 1) * sizeof *stack);
    uint64_t *blob = NULL;
    trn_status st = TRN_OK;
    if (!ekeys || !qkeys || !etarget || !qdown || !eval || !qval || !epend || !qpend || !stack)
        goto oom;
    {
        size_t e = 0, q = 0;
        for (size_t t = 0; t < count; t++) {
            const uint8_t *b = blocks[t];
            const uint32_t te = rd_u32(b), tq = rd_u32(b + 4);
            const uint8_t *p = b + 8;
            for (uint32_t k = 0; k < te; k++, e++, p += 20) {
                ekeys[e] = (dt_key){rd_u64(p), (uint32_t)e};
                etarget[e] = rd_u64(p + 8);
                eval[e] = rd_u32(p + 16);
            }
            for (uint32_t k = 0; k < tq; k++, q++, p += 16) {
                qkeys[q] = (dt_key){rd_u64(p), (uint32_t)q};
                qdown[q] = rd_u64(p + 8);
            }
        }
    }
    qsort(ekeys, ne, sizeof *ekeys, key_cmp);
    qsort(qkeys, nq, sizeof *qkeys, key_cmp);
    /* Links by index: exit -> the entry it feeds, entry -> the exit it reaches. */
    for (size_t e = 0; e < ne; e++) {
        const uint32_t q = key_find(qkeys, nq, etarget[e]);
        if (q == DT_NONE) goto broken;
        etarget[e] = q;
        qpend[q]++;
    }
    for (size_t q = 0; q < nq; q++) {
        if (qdown[q] == DT_NONE64) {
            qdown[q] = DT_NONE;
            continue;
        }
        const uint32_t e = key_find(ekeys, ne, qdown[q]);
        if (e == DT_NONE) goto broken;
        qdown[q] = e;
        epend[e]++;
    }
    {
        /* Stack entries: exits as their index, entries as ne + index. */
        size_t top = 0, done = 0;
        for (size_t e = 0; e < ne; e++)
            if (!epend[e]) stack[top++] = (uint32_t)e;
        for (size_t q = 0; q < nq; q++)
            if (!qpend[q]) stack[top++] = (uint32_t)(ne + q);
        while (top) {
            const size_t k = stack[--top];
            done++;
            if (k < ne) {
                const size_t q = (size_t)etarget[k];
                qval[q] += eval[k];
                if (--qpend[q] == 0) stack[top++] = (uint32_t)(ne + q);
            } else {
                const size_t q = k - ne;
                if (qdown[q] == DT_NONE) continue;
                const size_t e = (size_t)qdown[q];
                eval[e] += qval[q];
                if (--epend[e] == 0) stack[top++] = (uint32_t)e;
            }
        }
        if (done != ne + nq) goto broken;
    }
    *out_bytes = (count + 1) * sizeof(uint64_t) + nq * sizeof(uint32_t);
    blob = malloc((size_t)*out_bytes);
    if (!blob) goto oom;
    blob[0] = 0;
    for (size_t t = 0; t < count; t++)
        blob[t + 1] = blob[t] + rd_u32(blocks[t] + 4);
    for (size_t q = 0; q < nq; q++) {
        const uint32_t v = qval[q] > UINT32_MAX ? UINT32_MAX : (uint32_t)qval[q];
        memcpy((uint8_t *)(blob + count + 1) + q * sizeof v, &v, sizeof v);
    }
    *out_blob = blob;
    goto done;
broken:
    st = trn_error_set(err, TRN_ERR_FORMAT, NULL, -1,
                       "tiled drainage: the flows between tiles do not join up (processes "
                       "disagree about the directions)");
    goto done;
oom:
    st = no_memory(err);
done:
    free(ekeys);
    free(qkeys);
    free(etarget);
    free(qdown);
    free(eval);
    free(qval);
    free(epend);
    free(qpend);
    free(stack);
    return st;
}

/* ---- the run ---- */

/* This process's framed blocks to process 0, which learns the total size. */
static trn_status gather_total(trn_comm *comm, dt_bytes *mine, void **all, uint64_t *total,
                               trn_error *err)
{
    uint64_t *counts = NULL;
    trn_status st = trn_comm_gather(comm, mine->p, mine->len, all, &counts, err);
    mine->len = 0;
    if (st != TRN_OK) return st;
    *total = 0;
    for (int k = 0; k < trn_comm_size(comm); k++)
        *total += counts[k];
    free(counts);
    return TRN_OK;
}

typedef trn_status (*dt_solve_fn)(trn_drainage_tiles *r, const uint8_t **blocks, void **out_blob,
                                  uint64_t *out_bytes, trn_error *err);

/* Every process's framed blocks to process 0, which splits them per tile and solves (the spill
 * graph, the flows between tiles); the result back to all in blob. */
static trn_status solve_on_root(trn_comm *comm, trn_drainage_tiles *r, dt_bytes *mine,
                                dt_solve_fn solve, void **blob, uint64_t *bytes, trn_error *err)
{
    void *all = NULL;
    uint64_t gathered = 0;
    trn_status st = gather_total(comm, mine, &all, &gathered, err);
    if (st == TRN_OK && trn_comm_rank(comm) == 0) {
        const uint8_t **blocks = malloc(r->count * sizeof *blocks);
        if (!blocks) st = no_memory(err);
        if (st == TRN_OK) st = frames_split(all, gathered, r->count, blocks, err);
        if (st == TRN_OK) st = solve(r, blocks, blob, bytes, err);
        free(blocks);
    } else if (st != TRN_OK) {
        free(all);
        return st; /* a transport failure: every process sees it */
    }
    free(all);
    if ((st = trn_comm_agree(comm, st, err)) != TRN_OK) return st;
    if (trn_comm_can_exchange(comm)) return TRN_OK; /* scattered by share_solution */
    return trn_comm_broadcast(comm, blob, bytes, err);
}

/* Process 0's solution (blob: hdr_count offsets, then elem-byte entries tile by tile, tile t's
 * from entry off[t] to off[t + 1], total the last tile's end when the header has no end of
 * its own) to every process: the offsets (count + 1 of them, the last the total) to all, and
 * each process's own tiles' entries only, point to point from process 0 (with a transport
 * that cannot, every process holds the whole blob already: its part is cut from it). *hdr and
 * *data are new buffers; data's first entry is off[r->first]'s. Collective. */
static trn_status share_solution(trn_comm *comm, const trn_drainage_tiles *r, const void *blob,
                                 uint64_t bytes, size_t hdr_count, size_t elem, uint64_t **hdr,
                                 uint8_t **data, trn_error *err)
{
    *hdr = NULL;
    *data = NULL;
    const int me = trn_comm_rank(comm), size = trn_comm_size(comm);
    const bool p2p = trn_comm_can_exchange(comm) != 0;
    const size_t count = r->count;
    uint64_t *off = NULL;
    trn_status st = TRN_OK;
    if (me == 0 || !p2p) {
        off = malloc((count + 1) * sizeof *off);
        if (!off) st = no_memory(err);
        for (size_t t = 0; !st && t < count; t++)
            off[t] = ((const uint64_t *)blob)[t];
        if (!st)
            off[count] = hdr_count > count ? ((const uint64_t *)blob)[count]
                                           : (bytes - hdr_count * sizeof(uint64_t)) / elem;
    }
    if (p2p) {
        if ((st = trn_comm_agree(comm, st, err))) {
            free(off);
            return st;
        }
        uint64_t n = (count + 1) * sizeof *off;
        if ((st = trn_comm_broadcast(comm, (void **)&off, &n, err))) {
            if (me == 0) free(off);
            return st;
        }
    }
    const size_t lo = (size_t)off[r->first], hi = (size_t)off[r->last];
    uint8_t *mine = malloc((hi - lo) * elem + 1u);
    if (!mine) st = no_memory(err);
    const uint8_t *entries = blob ? (const uint8_t *)blob + hdr_count * sizeof(uint64_t) : NULL;
    if (!st && (me == 0 || !p2p) && hi > lo) memcpy(mine, entries + lo * elem, (hi - lo) * elem);
    if (p2p) {
        uint64_t *count_of = calloc(2u * (size_t)size, sizeof *count_of);
        const void **send = calloc((size_t)size, sizeof *send);
        void **recv = calloc((size_t)size, sizeof *recv);
        if (!count_of || !send || !recv) st = no_memory(err);
        for (int q = 1; !st && q < size; q++) {
            const size_t f = trn_comm_first_tile(comm, q, count),
                         l = trn_comm_first_tile(comm, q + 1, count);
            if (me == 0) {
                count_of[q] = (off[l] - off[f]) * elem;
                send[q] = entries + off[f] * elem;
            }
        }
        if (me != 0 && !st) {
            count_of[size] = (hi - lo) * elem; /* from process 0 */
            recv[0] = mine;
        }
        st = trn_comm_agree(comm, st, err);
        if (!st)
            st = trn_comm_exchange(comm, (const void *const *)send, count_of, (void *const *)recv,
                                   count_of + size, err);
        free(count_of);
        free(send);
        free(recv);
    }
    if (st) {
        free(off);
        free(mine);
        return st;
    }
    *hdr = off;
    *data = mine;
    return TRN_OK;
}

static void tiles_free_work(dt_tile *t)
{
    free(t->height);
    free(t->label);
    free(t->edges);
    t->height = NULL;
    t->label = NULL;
    t->edges = NULL;
    t->edge_count = t->edge_cap = 0;
}

void trn_drainage_tiles_free(trn_drainage_tiles *r)
{
    if (!r) return;
    if (r->tiles)
        for (size_t t = 0; t < r->count; t++) {
            tiles_free_work(&r->tiles[t]);
            free(r->tiles[t].filled);
            free(r->tiles[t].dir);
            free(r->tiles[t].acc);
        }
    free(r->tiles);
    free(r->poff);
    free(r);
}

static bool report(const trn_progress *p, trn_comm *comm, double done)
{
    return trn_comm_rank(comm) == 0 && trn_progress_report(p, done, "drainage");
}

trn_status trn_drainage_tiled_compute(trn_comm *comm, const trn_drainage_tiling *tiling,
                                      trn_tile_heights_fn heights, void *user,
                                      trn_drainage_tiles **out, trn_progress_fn progress,
                                      void *progress_user, trn_error *err)
{
    if (!comm || !tiling || !heights || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage: expected a transport, a tiling, a height source "
                             "and an output, found NULL");
    *out = NULL;
    const trn_drainage_tiling *g = tiling;
    if (g->cells_x == 0 || g->cells_z == 0 || g->tile == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage: expected at least one cell per axis and a tile of "
                             "at least 1 sample, found %ux%u cells, tile %u",
                             g->cells_x, g->cells_z, g->tile);
    if (!(g->size_x > 0.0) || !(g->size_z > 0.0) || !isfinite(g->size_x) || !isfinite(g->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage: expected a positive finite field size, found %g x %g",
                             g->size_x, g->size_z);
    /* The whole grid is never held and its sample indices are 64-bit (a 65537^2 grid has more
     * than 2^32 samples); a tile's own indices and labels are 32-bit. */
    const size_t nx = (size_t)g->cells_x + 1u, nz = (size_t)g->cells_z + 1u;
    const size_t tw = nx < g->tile ? nx : g->tile, th = nz < g->tile ? nz : g->tile;
    size_t n;
    if (!trn_mul_size(nx, nz, &n) || !trn_mul_size(tw, th, &n) || n >= DT_NONE - DT_FIRST_LABEL)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "tiled drainage: expected tiles of fewer than 2^32-3 samples, found "
                             "%zux%zu",
                             tw, th);
    trn_drainage_tiles *r = calloc(1, sizeof *r);
    if (!r) return no_memory(err);
    r->g = *g;
    r->nx = nx;
    r->nz = nz;
    r->g.tiles_x = (nx + g->tile - 1) / g->tile;
    r->g.tiles_z = (nz + g->tile - 1) / g->tile;
    r->count = r->g.tiles_x * r->g.tiles_z;
    const int rank = trn_comm_rank(comm);
    r->first = trn_comm_first_tile(comm, rank, r->count);
    r->last = rank + 1 == trn_comm_size(comm) ? r->count
                                               : trn_comm_first_tile(comm, rank + 1, r->count);
    r->tiles = calloc(r->count, sizeof *r->tiles);
    r->poff = calloc(r->count + 1, sizeof *r->poff);
    trn_status st = TRN_OK;
    void *blob = NULL, *dstrips = NULL;
    uint8_t *scratch8 = NULL;
    uint32_t *scratch32 = NULL;
    uint64_t bytes = 0;
    dt_bytes mine = {0};
    if (!r->tiles || !r->poff) {
        st = no_memory(err);
        goto local_fail;
    }
    size_t largest = 0;
    for (size_t t = 0; t < r->count; t++) {
        dt_tile *tt = &r->tiles[t];
        const size_t tx = t % r->g.tiles_x, tz = t / r->g.tiles_x;
        tt->i0 = (uint32_t)(tx * g->tile);
        tt->j0 = (uint32_t)(tz * g->tile);
        tt->w = (uint32_t)(nx - tt->i0 < g->tile ? nx - tt->i0 : g->tile);
        tt->h = (uint32_t)(nz - tt->j0 < g->tile ? nz - tt->j0 : g->tile);
        tt->n = (size_t)tt->w * tt->h;
        tt->perim = perim_len(tt->w, tt->h);
        r->poff[t + 1] = r->poff[t] + tt->perim;
        if (tt->n > largest) largest = tt->n;
    }
    r->perim_total = r->poff[r->count];
    r->stats.tiles = r->count;
    r->stats.tiles_owned = r->last - r->first;
    const trn_progress whole = trn_progress_make(progress, progress_user);

    /* 1. Heights in, each tile flooded from its border. */
    for (size_t t = r->first; t < r->last && st == TRN_OK; t++) {
        dt_tile *tt = &r->tiles[t];
        tt->height = malloc(tt->n * sizeof *tt->height);
        tt->label = malloc(tt->n * sizeof *tt->label);
        tt->filled = malloc(tt->n * sizeof *tt->filled);
        tt->dir = malloc(tt->n);
        tt->acc = malloc(tt->n * sizeof *tt->acc);
        if (!tt->height || !tt->label || !tt->filled || !tt->dir || !tt->acc) {
            st = no_memory(err);
            break;
        }
        st = heights(user, tt->i0, tt->j0, tt->w, tt->h, tt->height, err);
        if (st != TRN_OK) break;
        for (size_t c = 0; c < tt->n; c++)
            if (isnan(tt->height[c])) {
                st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                   "tiled drainage: expected finite heights, found NaN at sample "
                                   "(%zu, %zu)",
                                   tt->i0 + c % tt->w, tt->j0 + c / tt->w);
                break;
            }
        if (st != TRN_OK) break;
        st = tile_flood(r, tt, err);
        if (st != TRN_OK) break;
        free(tt->height);
        tt->height = NULL;
        size_t at;
        if (!frame_begin(&mine, &at) || !bytes_u32(&mine, tt->labels) ||
            !bytes_u32(&mine, (uint32_t)tt->perim) || !bytes_u32(&mine, (uint32_t)tt->edge_count)) {
            st = no_memory(err);
            break;
        }
        for (size_t p = 0; p < tt->perim && st == TRN_OK; p++) {
            uint32_t li, lj;
            perim_cell(tt->w, tt->h, p, &li, &lj);
            if (!bytes_u32(&mine, tt->label[(size_t)lj * tt->w + li])) st = no_memory(err);
        }
        for (size_t p = 0; p < tt->perim && st == TRN_OK; p++) {
            uint32_t li, lj;
            perim_cell(tt->w, tt->h, p, &li, &lj);
            if (!bytes_add(&mine, &tt->filled[(size_t)lj * tt->w + li], sizeof(float)))
                st = no_memory(err);
        }
        for (size_t e = 0; e < tt->edge_count && st == TRN_OK; e++)
            if (!bytes_u32(&mine, tt->edges[e].a) || !bytes_u32(&mine, tt->edges[e].b) ||
                !bytes_add(&mine, &tt->edges[e].w, sizeof(float)))
                st = no_memory(err);
        free(tt->edges);
        tt->edges = NULL;
        tt->edge_count = tt->edge_cap = 0;
        if (st == TRN_OK) frame_end(&mine, at);
        if (st == TRN_OK && report(&whole, comm, 0.4 * (double)(t + 1 - r->first) /
                                                     (double)(r->last - r->first)))
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "tiled drainage: cancelled");
    }
    if ((st = trn_comm_agree(comm, st, err)) != TRN_OK) goto fail;

    /* 2. The spill graph on process 0, every watershed's level back to all. */
    st = solve_on_root(comm, r, &mine, spill_solve, &blob, &bytes, err);
    if (st != TRN_OK) goto fail;
    {
        uint64_t *base = NULL;
        uint8_t *levels = NULL;
        st = share_solution(comm, r, blob, bytes, r->count, sizeof(float), &base, &levels, err);
        if (st != TRN_OK) goto fail;
        const float *W = (const float *)levels;
        for (size_t t = r->first; t < r->last; t++) {
            dt_tile *tt = &r->tiles[t];
            for (size_t c = 0; c < tt->n; c++) {
                const uint32_t l = tt->label[c];
                if (l == DT_OCEAN) continue;
                float lvl;
                memcpy(&lvl, W + (base[t] - base[r->first] + l - DT_FIRST_LABEL), sizeof lvl);
                if (lvl > tt->filled[c]) tt->filled[c] = lvl + 0.0f;
            }
            free(tt->label);
            tt->label = NULL;
        }
        free(base);
        free(levels);
    }
    free(blob);
    blob = NULL;
    if (report(&whole, comm, 0.5))
        st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "tiled drainage: cancelled");
    if ((st = trn_comm_agree(comm, st, err)) != TRN_OK) goto fail;

    /* 3. Directions. */
    {
        double inv[8];
        trn_d8_inverse_lengths(g->size_x / g->cells_x, g->size_z / g->cells_z, inv);
        st = directions(comm, r, inv, err);
    }
    if (st == TRN_OK && report(&whole, comm, 0.7))
        st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "tiled drainage: cancelled");
    if ((st = trn_comm_agree(comm, st, err)) != TRN_OK) goto fail;

    /* 4. Accumulation: alone, the flows between tiles on process 0, then with inflows. */
    scratch8 = malloc(largest ? largest : 1);
    scratch32 = malloc((largest ? largest : 1) * sizeof *scratch32);
    if (!scratch8 || !scratch32) st = no_memory(err);
    if (st == TRN_OK) st = strips_exchange(comm, r, 1, put_dir, &dstrips, err);
    for (size_t t = r->first; t < r->last && st == TRN_OK; t++) {
        dt_tile *tt = &r->tiles[t];
        tile_accumulate(tt, NULL, scratch8);
        tile_entries(r, tt, dstrips, scratch8);
        size_t at;
        if (!frame_begin(&mine, &at) || !flow_block(r, tt, scratch8, scratch32, &mine))
            st = no_memory(err);
        else
            frame_end(&mine, at);
    }
    if ((st = trn_comm_agree(comm, st, err)) != TRN_OK) goto fail;
    st = solve_on_root(comm, r, &mine, flow_solve, &blob, &bytes, err);
    if (st != TRN_OK) goto fail;
    {
        /* Each tile's entries' inflows (offsets per tile first), as the blocks listed them:
         * in sample order. */
        uint64_t *qoff = NULL;
        uint8_t *X = NULL;
        st = share_solution(comm, r, blob, bytes, r->count + 1, sizeof(uint32_t), &qoff, &X, err);
        if (st != TRN_OK) goto fail;
        uint32_t *extra = scratch32;
        for (size_t t = r->first; t < r->last; t++) {
            dt_tile *tt = &r->tiles[t];
            tile_entries(r, tt, dstrips, scratch8);
            memset(extra, 0, tt->n * sizeof *extra);
            uint64_t q = qoff[t];
            for (size_t c = 0; c < tt->n; c++)
                if (scratch8[c]) extra[c] = rd_u32(X + 4 * (q++ - qoff[r->first]));
            if (q != qoff[t + 1]) {
                st = trn_error_set(err, TRN_ERR_FORMAT, NULL, -1,
                                   "tiled drainage: tile %zu's inflows do not match its entries",
                                   t);
                break;
            }
            tile_accumulate(tt, extra, scratch8);
        }
        free(qoff);
        free(X);
    }
    if (st == TRN_OK && report(&whole, comm, 1.0))
        st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "tiled drainage: cancelled");
    st = trn_comm_agree(comm, st, err);
    if (st == TRN_OK) {
        uint64_t sent, received;
        trn_comm_traffic(comm, &sent, &received);
        r->stats.bytes_sent = sent;
        r->stats.bytes_received = received;
    }
    goto fail;
local_fail:
fail:
    free(mine.p);
    free(blob);
    free(dstrips);
    free(scratch8);
    free(scratch32);
    if (st == TRN_OK) {
        *out = r;
        return TRN_OK;
    }
    trn_drainage_tiles_free(r);
    return st;
}

trn_status trn_drainage_tiles_tile(const trn_drainage_tiles *tiles, size_t index, uint32_t *i0,
                                   uint32_t *j0, uint32_t *w, uint32_t *h, const float **filled,
                                   const uint8_t **flow_dir, const uint32_t **accumulation)
{
    if (!tiles || index >= tiles->count)
        return trn_error_set(NULL, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage: no tile %zu", index);
    const dt_tile *t = &tiles->tiles[index];
    const bool own = index >= tiles->first && index < tiles->last;
    if (i0) *i0 = t->i0;
    if (j0) *j0 = t->j0;
    if (w) *w = t->w;
    if (h) *h = t->h;
    if (filled) *filled = own ? t->filled : NULL;
    if (flow_dir) *flow_dir = own ? t->dir : NULL;
    if (accumulation) *accumulation = own ? t->acc : NULL;
    return TRN_OK;
}

void trn_drainage_tiles_stats(const trn_drainage_tiles *tiles, trn_drainage_tiled_stats *stats)
{
    if (!stats) return;
    memset(stats, 0, sizeof *stats);
    if (tiles) *stats = tiles->stats;
}

trn_status trn_drainage_tiles_gather(const trn_drainage_tiles *r, trn_comm *comm,
                                     trn_drainage *out, trn_error *err)
{
    if (!r || !comm || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage gather: expected tiles, a transport and an output, "
                             "found NULL");
    memset(out, 0, sizeof *out);
    /* Per owned tile: filled, then directions, then accumulation. */
    size_t bytes = 0;
    for (size_t t = r->first; t < r->last; t++)
        bytes += r->tiles[t].n * (sizeof(float) + 1 + sizeof(uint32_t));
    uint8_t *mine = malloc(bytes + 1);
    if (!mine) return no_memory(err);
    size_t at = 0;
    for (size_t t = r->first; t < r->last; t++) {
        const dt_tile *tt = &r->tiles[t];
        memcpy(mine + at, tt->filled, tt->n * sizeof(float));
        at += tt->n * sizeof(float);
        memcpy(mine + at, tt->dir, tt->n);
        at += tt->n;
        memcpy(mine + at, tt->acc, tt->n * sizeof(uint32_t));
        at += tt->n * sizeof(uint32_t);
    }
    void *all = NULL;
    trn_status st = trn_comm_gather(comm, mine, bytes, &all, NULL, err);
    free(mine);
    if (st != TRN_OK) return st;
    if (trn_comm_rank(comm) != 0) return TRN_OK;
    const size_t n = r->nx * r->nz;
    out->filled = malloc(n * sizeof *out->filled);
    out->flow_dir = malloc(n);
    out->accumulation = malloc(n * sizeof *out->accumulation);
    if (!out->filled || !out->flow_dir || !out->accumulation) {
        free(all);
        trn_drainage_dispose(out);
        return no_memory(err);
    }
    const uint8_t *p = all;
    for (size_t t = 0; t < r->count; t++) {
        const dt_tile *tt = &r->tiles[t];
        const size_t fb = tt->n * sizeof(float);
        for (uint32_t lj = 0; lj < tt->h; lj++) {
            const size_t g = (size_t)(tt->j0 + lj) * r->nx + tt->i0;
            const size_t l = (size_t)lj * tt->w;
            memcpy(&out->filled[g], p + l * sizeof(float), tt->w * sizeof(float));
            memcpy(&out->flow_dir[g], p + fb + l, tt->w);
            memcpy(&out->accumulation[g], p + fb + tt->n + l * sizeof(uint32_t),
                   tt->w * sizeof(uint32_t));
        }
        p += tt->n * (sizeof(float) + 1 + sizeof(uint32_t));
    }
    free(all);
    out->cells_x = r->g.cells_x;
    out->cells_z = r->g.cells_z;
    out->size_x = r->g.size_x;
    out->size_z = r->g.size_z;
    out->sea_level = r->g.sea_level;
    return TRN_OK;
}

typedef struct field_source {
    const trn_field *field;
} field_source;

static trn_status field_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                float *out, trn_error *err)
{
    (void)err;
    const trn_field *f = ((const field_source *)user)->field;
    const size_t nx = (size_t)f->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)lj * w, f->heights + (size_t)(j0 + lj) * nx + i0, w * sizeof(float));
    return TRN_OK;
}

trn_status trn_drainage_compute_tiled(const trn_field *field, double sea_level, uint32_t tile,
                                      trn_drainage *out, trn_progress_fn progress, void *user,
                                      trn_error *err)
{
    if (!field || !out || !field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled drainage: expected a field with heights and an output, "
                             "found NULL");
    trn_comm *comm = trn_comm_serial_new();
    if (!comm) return no_memory(err);
    trn_drainage_tiling g = {field->cells_x, field->cells_z, field->size_x, field->size_z,
                             sea_level, tile, 0, 0};
    field_source src = {field};
    trn_drainage_tiles *tiles = NULL;
    trn_status st =
        trn_drainage_tiled_compute(comm, &g, field_heights, &src, &tiles, progress, user, err);
    if (st == TRN_OK) st = trn_drainage_tiles_gather(tiles, comm, out, err);
    trn_drainage_tiles_free(tiles);
    trn_comm_free(comm);
    return st;
}

trn_status trn_dt_flow_tiles(size_t nx, size_t nz, size_t count, trn_dt_tile_flow *tiles,
                             trn_error *err)
{
    trn_drainage_tiles r;
    memset(&r, 0, sizeof r);
    r.nx = nx;
    r.nz = nz;
    r.count = count;
    r.last = count;
    r.tiles = calloc(count + 1, sizeof *r.tiles);
    dt_bytes *blocks = calloc(count + 1, sizeof *blocks);
    const uint8_t **at = calloc(count + 1, sizeof *at);
    size_t largest = 1;
    for (size_t t = 0; r.tiles && t < count; t++) {
        dt_tile *tt = &r.tiles[t];
        tt->i0 = tiles[t].i0;
        tt->j0 = tiles[t].j0;
        tt->w = tiles[t].w;
        tt->h = tiles[t].h;
        tt->n = (size_t)tt->w * tt->h;
        tt->dir = tiles[t].flow_dir;
        tt->acc = tiles[t].accumulation;
        if (tt->n > largest) largest = tt->n;
    }
    uint8_t *indeg = malloc(largest);
    uint32_t *scratch = malloc(largest * sizeof *scratch);
    void *blob = NULL;
    uint64_t bytes = 0;
    trn_status st = TRN_OK;
    if (!r.tiles || !blocks || !at || !indeg || !scratch) st = no_memory(err);
    for (size_t t = 0; t < count && st == TRN_OK; t++) {
        tile_accumulate(&r.tiles[t], NULL, indeg);
        if (!flow_block(&r, &r.tiles[t], tiles[t].entry, scratch, &blocks[t]))
            st = no_memory(err);
        at[t] = blocks[t].p;
    }
    if (st == TRN_OK) st = flow_solve(&r, at, &blob, &bytes, err);
    if (st == TRN_OK) {
        /* As the run hands them out: the tiles' offsets, then each entry's inflow. */
        const uint64_t *off = blob;
        const uint8_t *inflow = (const uint8_t *)(off + count + 1);
        for (size_t t = 0; t < count; t++) {
            dt_tile *tt = &r.tiles[t];
            uint64_t q = off[t];
            for (size_t c = 0; c < tt->n; c++)
                scratch[c] = tiles[t].entry[c] ? rd_u32(inflow + 4 * q++) : 0u;
            tile_accumulate(tt, scratch, indeg);
        }
    }
    for (size_t t = 0; blocks && t < count; t++)
        free(blocks[t].p);
    free(blob);
    free(scratch);
    free(indeg);
    free(at);
    free(blocks);
    free(r.tiles);
    return st;
}
