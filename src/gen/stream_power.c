/* Stream-power landscape evolution (Braun and Willett 2013) with diffusion and pit filling. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "terrane/landscape.h"
#include "gen/d8.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void trn_stream_power_params_default(trn_stream_power_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->uplift = 1e-3;
    p->erodibility = 2e-5;
    p->m = 0.45;
    p->n = 1.0;
    p->diffusion = 0.01;
    p->critical_slope = 0.0;
    p->dt = 1000.0;
    p->steps = 100;
    p->sea_level = NAN;
}

/* The D8 neighbour offsets, code d: E, SE, S, SW, W, NW, N, NE (as drainage.h). */

typedef struct sp_state {
    uint32_t nx, nz; /* samples per row, rows */
    size_t n;
    double dx, dz, dd; /* spacings and the diagonal */
    double dist[8];
    double inv_dist[8];
    double *h;      /* heights (double during the run) */
    double *tmp;    /* diffusion buffer */
    uint8_t *base;  /* 1: base level */
    uint32_t *rcv;  /* receiver index (itself for base level and pits) */
    uint8_t *rcode; /* receiver's D8 code, 8 for none */
    uint32_t *ndon; /* donors per sample, then CSR offsets */
    uint32_t *don;  /* donors, CSR */
    uint32_t *stack;
    uint32_t *walk; /* the depth-first walk's own stack */
    uint32_t *area; /* samples draining through, itself included */
    double *pow_table;
    uint32_t pow_table_size;
} sp_state;

static void sp_free(sp_state *s)
{
    free(s->h);
    free(s->tmp);
    free(s->base);
    free(s->rcv);
    free(s->rcode);
    free(s->ndon);
    free(s->don);
    free(s->stack);
    free(s->walk);
    free(s->area);
    free(s->pow_table);
}

/* Steepest strict descent per sample; returns the number of interior pits. Each sample reads
 * only heights, so rows split over threads give the same result. */
static uint64_t sp_receivers(sp_state *s)
{
    const uint32_t nx = s->nx, nz = s->nz;
    uint64_t pits = 0;
#pragma omp parallel for schedule(static) reduction(+ : pits)
    for (uint32_t j = 0; j < nz; j++) {
        for (uint32_t i = 0; i < nx; i++) {
            const size_t k = (size_t)j * nx + i;
            if (s->base[k]) {
                s->rcv[k] = (uint32_t)k;
                s->rcode[k] = 8;
                continue;
            }
            const double hk = s->h[k];
            double best = 0.0;
            int bd = 8;
            for (int d = 0; d < 8; d++) {
                const size_t q = (size_t)((int64_t)k + TRN_D8_DJ[d] * (int64_t)nx + TRN_D8_DI[d]);
                const double slope = (hk - s->h[q]) * s->inv_dist[d];
                if (slope > best) {
                    best = slope;
                    bd = d;
                }
            }
            s->rcode[k] = (uint8_t)bd;
            if (bd == 8) {
                s->rcv[k] = (uint32_t)k;
                pits++;
            } else {
                s->rcv[k] = (uint32_t)((int64_t)k + TRN_D8_DJ[bd] * (int64_t)nx + TRN_D8_DI[bd]);
            }
        }
    }
    return pits;
}

/* A link between two basins across neighbouring samples a (in one) and b (in the other); the
 * water crossing it must rise to w = max(h[a], h[b]). */
typedef struct sp_edge {
    double w;
    uint32_t a, b;
} sp_edge;

static int edge_cmp(const void *x, const void *y)
{
    const sp_edge *e = x, *f = y;
    if (e->w != f->w) return e->w < f->w ? -1 : 1;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

static void sp_stack(sp_state *s);

/* The D8 code from v to its neighbour q. */
static uint8_t neighbour_code(const sp_state *s, uint32_t v, uint32_t q)
{
    const int64_t di = (int64_t)(q % s->nx) - (int64_t)(v % s->nx);
    const int64_t dj = (int64_t)(q / s->nx) - (int64_t)(v / s->nx);
    for (uint8_t d = 0; d < 8; d++)
        if (TRN_D8_DI[d] == di && TRN_D8_DJ[d] == dj) return d;
    return 8;
}

/* Route closed depressions without changing heights (Cordonnier, Bovy and Braun 2019): the
 * basins of the receiver forest (every base-level sample in one outlet basin, each pit its own)
 * joined by their lowest passes in a minimum spanning tree grown from the outlet; in each basin
 * the receivers from its pass sample back to its pit are reversed ("carving"), so the basin
 * drains over its sill into the neighbouring sample on the downstream side. Lakes (samples not
 * above their new receiver) do not erode; the sill carries the basin's area and incision lowers
 * it. Returns false when out of memory. */
static bool sp_route_pits(sp_state *s, uint64_t pits)
{
    const size_t n = s->n;
    const uint32_t nb = (uint32_t)pits + 1u;
    uint32_t *basin = s->walk; /* the stack walk is done: reuse its buffer */
    uint32_t *root = malloc((size_t)nb * sizeof *root);
    uint32_t *parent = malloc((size_t)nb * sizeof *parent);
    if (!root || !parent) {
        free(root);
        free(parent);
        return false;
    }
    uint32_t next = 1;
    root[0] = UINT32_MAX;
    for (size_t t = 0; t < n; t++) {
        const uint32_t v = s->stack[t];
        if (s->rcv[v] != v)
            basin[v] = basin[s->rcv[v]];
        else if (s->base[v])
            basin[v] = 0;
        else {
            root[next] = v;
            basin[v] = next++;
        }
    }
    /* The lowest pass of each pair of basins, in an open-addressing table keyed by the pair
     * (most neighbouring samples across a boundary join the same two basins). */
    size_t cap = 4096, count = 0;
    uint64_t *keys = malloc(cap * sizeof *keys);
    sp_edge *slots = malloc(cap * sizeof *slots);
    bool ok = keys && slots;
    if (ok) memset(keys, 0xff, cap * sizeof *keys);
    /* Each unordered neighbour pair once: E, SE, S, SW of every sample. */
    for (size_t v = 0; v < n && ok; v++) {
        const uint32_t i = (uint32_t)(v % s->nx), j = (uint32_t)(v / s->nx);
        const uint32_t bv = basin[v];
        for (int d = 0; d < 4; d++) {
            const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
            if (ii < 0 || ii >= s->nx || jj >= s->nz) continue;
            const size_t q = (size_t)jj * s->nx + (size_t)ii;
            const uint32_t bq = basin[q];
            if (bv == bq) continue;
            sp_edge e = {s->h[v] > s->h[q] ? s->h[v] : s->h[q], (uint32_t)v, (uint32_t)q};
            const uint64_t key = bv < bq ? (uint64_t)bv << 32 | bq : (uint64_t)bq << 32 | bv;
            if (2 * (count + 1) > cap) {
                /* Grow: rehash every pair into a table twice the size. */
                const size_t ncap = cap * 2;
                uint64_t *nk = malloc(ncap * sizeof *nk);
                sp_edge *ns = malloc(ncap * sizeof *ns);
                if (!nk || !ns) {
                    free(nk);
                    free(ns);
                    ok = false;
                    break;
                }
                memset(nk, 0xff, ncap * sizeof *nk);
                for (size_t k = 0; k < cap; k++) {
                    if (keys[k] == UINT64_MAX) continue;
                    size_t h = (size_t)((keys[k] * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
                    while (nk[h] != UINT64_MAX)
                        h = (h + 1) & (ncap - 1);
                    nk[h] = keys[k];
                    ns[h] = slots[k];
                }
                free(keys);
                free(slots);
                keys = nk;
                slots = ns;
                cap = ncap;
            }
            size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
            while (keys[h] != UINT64_MAX && keys[h] != key)
                h = (h + 1) & (cap - 1);
            if (keys[h] == UINT64_MAX) {
                keys[h] = key;
                slots[h] = e;
                count++;
            } else if (edge_cmp(&e, &slots[h]) < 0) {
                slots[h] = e;
            }
        }
    }
    sp_edge *edges = ok ? malloc((count ? count : 1) * sizeof *edges) : NULL;
    ok = ok && edges;
    if (ok) {
        size_t c = 0;
        for (size_t k = 0; k < cap; k++)
            if (keys[k] != UINT64_MAX) edges[c++] = slots[k];
    }
    free(keys);
    free(slots);
    if (ok) {
        qsort(edges, count, sizeof *edges, edge_cmp);
        for (uint32_t b = 0; b < nb; b++)
            parent[b] = b;
        /* Kruskal: the chosen passes, kept in place at the front of edges. */
        size_t chosen = 0;
        for (size_t e = 0; e < count && chosen + 1u < nb; e++) {
            const uint32_t x = uf_find(parent, basin[edges[e].a]);
            const uint32_t y = uf_find(parent, basin[edges[e].b]);
            if (x == y) continue;
            parent[x] = y;
            edges[chosen++] = edges[e];
        }
        /* Orient from the outlet: breadth first over the tree's adjacency. */
        uint32_t *off = calloc((size_t)nb + 1u, sizeof *off);
        uint32_t *adj = malloc((chosen ? 2 * chosen : 1) * sizeof *adj);
        uint32_t *queue = malloc((size_t)nb * sizeof *queue);
        uint8_t *seen = calloc(nb, 1);
        ok = off && adj && queue && seen;
        if (ok) {
            for (size_t e = 0; e < chosen; e++) {
                off[basin[edges[e].a] + 1]++;
                off[basin[edges[e].b] + 1]++;
            }
            for (uint32_t b = 0; b < nb; b++)
                off[b + 1] += off[b];
            uint32_t *fill = parent; /* union-find is done */
            memcpy(fill, off, (size_t)nb * sizeof *fill);
            for (size_t e = 0; e < chosen; e++) {
                adj[fill[basin[edges[e].a]]++] = (uint32_t)e;
                adj[fill[basin[edges[e].b]]++] = (uint32_t)e;
            }
            size_t qh = 0, qt = 0;
            queue[qt++] = 0;
            seen[0] = 1;
            while (qh < qt) {
                const uint32_t b = queue[qh++];
                for (uint32_t k = off[b]; k < off[b + 1]; k++) {
                    const sp_edge *e = &edges[adj[k]];
                    const uint32_t ba = basin[e->a], bb = basin[e->b];
                    const uint32_t child = ba == b ? bb : ba;
                    if (seen[child]) continue;
                    seen[child] = 1;
                    queue[qt++] = child;
                    /* Carve: reverse the receivers from the child's pass sample back to its
                     * pit, so the basin drains out over its sill to the downstream side, and
                     * the sill, carrying the basin's area, is the sample that erodes. */
                    const uint32_t up = ba == b ? e->b : e->a;
                    uint32_t prev = ba == b ? e->a : e->b, cur = up;
                    for (;;) {
                        const uint32_t nxt = s->rcv[cur];
                        s->rcv[cur] = prev;
                        s->rcode[cur] = neighbour_code(s, cur, prev);
                        if (nxt == cur) break; /* the pit */
                        prev = cur;
                        cur = nxt;
                    }
                }
            }
            ok = true;
        }
        free(off);
        free(adj);
        free(queue);
        free(seen);
    }
    free(edges);
    free(root);
    free(parent);
    return ok;
}

/* Braun and Willett's stack: donors in CSR form, then a depth-first walk from each base-level
 * (or pit) sample in index order. */
static void sp_stack(sp_state *s)
{
    const size_t n = s->n;
    uint32_t *off = s->ndon; /* n + 1 entries */
    memset(off, 0, (n + 1) * sizeof *off);
    for (size_t k = 0; k < n; k++)
        if (s->rcv[k] != k) off[s->rcv[k] + 1]++;
    for (size_t k = 0; k < n; k++)
        off[k + 1] += off[k];
    /* Fill donors using area as a cursor copy (area is rewritten below). */
    uint32_t *cur = s->area;
    memcpy(cur, off, n * sizeof *cur);
    for (size_t k = 0; k < n; k++)
        if (s->rcv[k] != k) s->don[cur[s->rcv[k]]++] = (uint32_t)k;
    size_t top = 0;
    uint32_t *walk = s->walk;
    /* Base-level trees first, then each pit's: a pit's tree is one contiguous segment, which
     * sp_route_pits reorders as whole segments. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < n; k++) {
            if (s->rcv[k] != k || (s->base[k] != 0) != (pass == 0)) continue;
            size_t sp = 0;
            walk[sp++] = (uint32_t)k;
            while (sp) {
                const uint32_t v = walk[--sp];
                s->stack[top++] = v;
                for (uint32_t e = off[v + 1]; e > off[v]; e--)
                    walk[sp++] = s->don[e - 1];
            }
        }
}

static void sp_area(sp_state *s)
{
    const size_t n = s->n;
    for (size_t k = 0; k < n; k++)
        s->area[k] = 1;
    for (size_t t = n; t-- > 0;) {
        const uint32_t v = s->stack[t], r = s->rcv[v];
        if (r != v) s->area[r] += s->area[v];
    }
}

static double area_pow(const sp_state *s, uint32_t count, double cell_area, double m)
{
    if (count < s->pow_table_size) return s->pow_table[count];
    return pow((double)count * cell_area, m);
}

static trn_status check_param(trn_error *err, const char *name, bool ok, const char *expect,
                              double found)
{
    if (ok) return TRN_OK;
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "stream power: %s: expected %s, found %.17g", name, expect, found);
}

static trn_status check_params(const trn_stream_power_params *p, trn_error *err)
{
    trn_status st;
    if ((st = check_param(err, "uplift", isfinite(p->uplift) && p->uplift >= 0, ">= 0",
                          p->uplift)) ||
        (st = check_param(err, "erodibility", isfinite(p->erodibility) && p->erodibility > 0, "> 0",
                          p->erodibility)) ||
        (st = check_param(err, "m", isfinite(p->m) && p->m > 0 && p->m <= 2, "0 < m <= 2", p->m)) ||
        (st = check_param(err, "n", isfinite(p->n) && p->n > 0 && p->n <= 4, "0 < n <= 4", p->n)) ||
        (st = check_param(err, "diffusion", isfinite(p->diffusion) && p->diffusion >= 0, ">= 0",
                          p->diffusion)) ||
        (st = check_param(err, "channel_threshold",
                          isfinite(p->channel_threshold) && p->channel_threshold >= 0, ">= 0",
                          p->channel_threshold)) ||
        (st = check_param(err, "critical_slope",
                          p->critical_slope == 0 ||
                              (p->critical_slope > 0 && p->critical_slope < 90),
                          "0 (off) or between 0 and 90 degrees", p->critical_slope)) ||
        (st = check_param(err, "dt", isfinite(p->dt) && p->dt > 0, "> 0", p->dt)) ||
        (st = check_param(err, "steps", p->steps >= 1, "at least 1", (double)p->steps)) ||
        (st = check_param(err, "threads", p->threads >= 0, "0 (default) or more",
                          (double)p->threads)))
        return st;
    return TRN_OK;
}

/* Implicit incision along the stack, base level first. */
static void sp_incise(sp_state *s, const trn_stream_power_params *p, double cell_area)
{
    const double K = p->erodibility, dt = p->dt, n_exp = p->n;
    const bool linear = n_exp == 1.0;
    for (size_t t = 0; t < s->n; t++) {
        const uint32_t v = s->stack[t], r = s->rcv[v];
        if (r == v) continue;
        const double hr = s->h[r], h0 = s->h[v];
        if (h0 <= hr) continue; /* a lake below its sill: no incision */
        if ((double)s->area[v] * cell_area < p->channel_threshold) continue; /* a hillslope */
        const double d = s->dist[s->rcode[v]];
        const double F = K * dt * area_pow(s, s->area[v], cell_area, p->m);
        if (linear) {
            const double f = F / d;
            s->h[v] = (h0 + f * hr) / (1.0 + f);
        } else {
            /* Newton on g(x) = x - h0 + F ((x - hr) / d)^n, x in (hr, h0]. */
            const double fd = F / pow(d, n_exp);
            double x = h0;
            for (int it = 0; it < 50; it++) {
                const double dh = x - hr;
                const double g = x - h0 + fd * pow(dh, n_exp);
                const double gp = 1.0 + fd * n_exp * pow(dh, n_exp - 1.0);
                double nx = x - g / gp;
                if (nx <= hr) nx = hr + (x - hr) * 0.5;
                if (fabs(nx - x) <= 1e-12 * (fabs(x) + 1.0)) {
                    x = nx;
                    break;
                }
                x = nx;
            }
            s->h[v] = x;
        }
    }
}

/* Explicit diffusion (5-point Laplacian), base level fixed, substeps for stability. Each
 * sample reads the previous values only, so threads cannot change the result. */
static void sp_diffuse(sp_state *s, const trn_stream_power_params *p)
{
    if (p->diffusion <= 0) return;
    const double ax = 1.0 / (s->dx * s->dx), az = 1.0 / (s->dz * s->dz);
    const double limit = 0.45 / (p->diffusion * (ax + az));
    uint32_t sub = (uint32_t)ceil(p->dt / limit);
    if (sub < 1) sub = 1;
    const double kdt = p->diffusion * p->dt / (double)sub;
    const uint32_t nx = s->nx, nz = s->nz;
    for (uint32_t it = 0; it < sub; it++) {
#pragma omp parallel for schedule(static)
        for (uint32_t j = 0; j < nz; j++)
            for (uint32_t i = 0; i < nx; i++) {
                const size_t k = (size_t)j * nx + i;
                if (s->base[k]) {
                    s->tmp[k] = s->h[k];
                    continue;
                }
                const double c = s->h[k];
                const double lap = (s->h[k - 1] - 2.0 * c + s->h[k + 1]) * ax +
                                   (s->h[k - nx] - 2.0 * c + s->h[k + nx]) * az;
                s->tmp[k] = c + kdt * lap;
            }
        double *t = s->h;
        s->h = s->tmp;
        s->tmp = t;
    }
}

/* The border follows the land down: each border sample (not under the sea) is lowered to its
 * lowest non-border neighbour when that is lower. Reads only interior samples, which this
 * does not change, so the order does not matter. */
static void sp_follow_border(sp_state *s, const trn_stream_power_params *p)
{
    if (p->fixed_border) return;
    const uint32_t nx = s->nx, nz = s->nz;
    const bool sea = isfinite(p->sea_level);
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            if (!(i == 0 || j == 0 || i == nx - 1u || j == nz - 1u)) {
                if (j > 0 && j + 1u < nz) i = nx - 2u; /* skip to the east border */
                continue;
            }
            const size_t k = (size_t)j * nx + i;
            if (sea && s->h[k] <= p->sea_level) continue;
            double lo = s->h[k];
            for (int d = 0; d < 8; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii <= 0 || jj <= 0 || ii >= (int64_t)nx - 1 || jj >= (int64_t)nz - 1) continue;
                const double h = s->h[(size_t)jj * nx + (size_t)ii];
                if (h < lo) lo = h;
            }
            s->h[k] = lo;
        }
}

static void sp_critical(sp_state *s, const trn_stream_power_params *p)
{
    if (p->critical_slope <= 0) return;
    const double tc = tan(p->critical_slope * 3.14159265358979323846 / 180.0);
    for (size_t t = 0; t < s->n; t++) {
        const uint32_t v = s->stack[t], r = s->rcv[v];
        if (r == v) continue;
        const double top = s->h[r] + tc * s->dist[s->rcode[v]];
        if (s->h[v] > top) s->h[v] = top;
    }
}

trn_status trn_stream_power_run(trn_field *field, const trn_stream_power_params *p,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err)
{
    if (report) memset(report, 0, sizeof *report);
    if (!field || !field->heights || !p)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power: a field with heights and parameters are needed");
    if (field->cells_x < 2 || field->cells_z < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power: the grid needs at least 3 x 3 samples, found %u x %u",
                             field->cells_x + 1u, field->cells_z + 1u);
    trn_status st = check_params(p, err);
    if (st) return st;
    sp_state s;
    memset(&s, 0, sizeof s);
    s.nx = field->cells_x + 1u;
    s.nz = field->cells_z + 1u;
    s.n = trn_field_sample_count(field);
    if (s.n >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "stream power: %zu samples, at most 4294967294", s.n);
    for (size_t k = 0; k < s.n; k++) {
        if (!isfinite(field->heights[k]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: sample (%zu, %zu) has no finite height", k % s.nx,
                                 k / s.nx);
        if (p->uplift_mask && !(isfinite(p->uplift_mask[k]) && p->uplift_mask[k] >= 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: uplift_mask at sample (%zu, %zu): expected a "
                                 "finite number >= 0, found %g",
                                 k % s.nx, k / s.nx, (double)p->uplift_mask[k]);
    }
    s.dx = field->size_x / field->cells_x;
    s.dz = field->size_z / field->cells_z;
    s.dd = sqrt(s.dx * s.dx + s.dz * s.dz);
    for (int d = 0; d < 8; d++)
        s.dist[d] = TRN_D8_DI[d] && TRN_D8_DJ[d] ? s.dd : TRN_D8_DI[d] ? s.dx : s.dz;
    for (int d = 0; d < 8; d++)
        s.inv_dist[d] = 1.0 / s.dist[d];
    const double cell_area = s.dx * s.dz;
    s.h = malloc(s.n * sizeof *s.h);
    s.tmp = malloc(s.n * sizeof *s.tmp);
    s.base = malloc(s.n);
    s.rcv = malloc(s.n * sizeof *s.rcv);
    s.rcode = malloc(s.n);
    s.ndon = malloc((s.n + 1) * sizeof *s.ndon);
    s.don = malloc(s.n * sizeof *s.don);
    s.stack = malloc(s.n * sizeof *s.stack);
    s.walk = malloc(s.n * sizeof *s.walk);
    s.area = malloc(s.n * sizeof *s.area);
    s.pow_table_size = s.n < 65536u ? (uint32_t)s.n + 1u : 65536u;
    s.pow_table = malloc(s.pow_table_size * sizeof *s.pow_table);
    if (!s.h || !s.tmp || !s.base || !s.rcv || !s.rcode || !s.ndon || !s.don || !s.stack ||
        !s.walk || !s.area || !s.pow_table) {
        sp_free(&s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "stream power: out of memory for %zu samples", s.n);
    }
    for (uint32_t c = 0; c < s.pow_table_size; c++)
        s.pow_table[c] = pow((double)c * cell_area, p->m);
    const bool sea = isfinite(p->sea_level);
    for (size_t k = 0; k < s.n; k++) {
        const size_t i = k % s.nx, j = k / s.nx;
        s.h[k] = (double)field->heights[k];
        s.base[k] = (uint8_t)(i == 0 || j == 0 || i == s.nx - 1u || j == s.nz - 1u ||
                              (sea && s.h[k] <= p->sea_level));
    }
#ifdef _OPENMP
    const int saved_threads = omp_get_max_threads();
    if (p->threads > 0) omp_set_num_threads(p->threads);
#endif
    trn_progress pr = trn_progress_make(progress, user);
    double *before = NULL;
    for (uint32_t step = 0; step < p->steps && !st; step++) {
        if (trn_progress_report(&pr, (double)step / (double)p->steps, "stream power")) {
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "stream power: cancelled");
            break;
        }
        const bool last = step + 1 == p->steps;
        if (last && report) {
            before = malloc(s.n * sizeof *before);
            if (before) memcpy(before, s.h, s.n * sizeof *before);
        }
        for (size_t k = 0; k < s.n; k++)
            if (!s.base[k])
                s.h[k] += p->uplift * p->dt * (p->uplift_mask ? (double)p->uplift_mask[k] : 1.0);
        const uint64_t pits = sp_receivers(&s);
        sp_stack(&s);
        if (pits) {
            if (!sp_route_pits(&s, pits)) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                   "stream power: out of memory routing %llu closed depressions",
                                   (unsigned long long)pits);
                break;
            }
            sp_stack(&s);
            if (report) {
                report->pits_routed += pits;
                report->steps_with_pits++;
            }
        }
        sp_area(&s);
        sp_incise(&s, p, cell_area);
        sp_diffuse(&s, p);
        sp_critical(&s, p);
        sp_follow_border(&s, p);
        if (report) report->steps = step + 1u;
    }
#ifdef _OPENMP
    omp_set_num_threads(saved_threads);
#endif
    if (!st) {
        if (report) {
            double mx = 0, sum = 0;
            uint64_t cnt = 0;
            uint32_t amax = 0;
            for (size_t k = 0; k < s.n; k++) {
                if (s.area[k] > amax && !s.base[k]) amax = s.area[k];
                if (s.base[k] || !before) continue;
                const double dz = s.h[k] - before[k];
                if (fabs(dz) > mx) mx = fabs(dz);
                sum += dz;
                cnt++;
            }
            report->last_max_change = mx;
            report->last_mean_change = cnt ? sum / (double)cnt : 0.0;
            report->max_area = (double)amax * cell_area;
        }
        for (size_t k = 0; k < s.n; k++)
            field->heights[k] = (float)s.h[k];
        if (p->drainage_area)
            for (size_t k = 0; k < s.n; k++)
                p->drainage_area[k] = (float)((double)s.area[k] * cell_area);
        trn_progress_report(&pr, 1.0, "stream power");
    }
    free(before);
    sp_free(&s);
    return st;
}
