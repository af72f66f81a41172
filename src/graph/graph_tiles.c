/* Tiled graph evaluation: pointwise and neighbourhood nodes tile by tile with halos, global ones
 * on the assembled grid, bytes equal to the whole-grid evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph_internal.h"
#include "graph/nodes/node_common.h"
#include "graph/tile_store.h"
#include "graph/tiles.h"
#include "terrane/drainage_tiled.h"
#include "recipe/recipe_internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* The disk tile cache's smallest tile edge (samples). */
#define TILE_STORE_MIN 64u

/* A window of world samples: [x0, x0 + nx) x [z0, z0 + nz). */
typedef struct twin {
    uint32_t x0, z0, nx, nz;
} twin;

typedef struct tiler {
    const trn_graph *g;
    const trn_recipe *recipe;
    const trn_graph_options *o;
    trn_graph_links L;
    uint32_t sx, sz;         /* world samples */
    trn_node_reach *reach;   /* per node */
    trn_node_result **whole; /* global nodes' results (whole grid) */
    int threads;
    trn_global_solver solve;
    trn_tile_split *rows; /* erosions by rows shared by processes (NULL: none) */
    trn_progress pr;    /* the whole run */
    double units, done; /* progress: a global node counts as many units as there are tiles */
    double tiles;       /* tiles delivered (those meeting the window) */
    uint32_t tx0, tx1, tz0,
        tz1; /* the delivered tiles' columns and rows, [tx0, tx1) x [tz0, tz1) */
    /* The disk tile cache (NULL: none): global results there, shell[k] saying what node k's
     * outputs are (kinds, sea levels; no samples), direct_last[k] the last order position of a
     * global node reading k whole (its result stays in memory until then). */
    trn_tile_store *store;
    trn_node_result **shell;
    uint32_t *direct_last;
    uint8_t *stored_transport; /* per node: bit p set when output p's transport is stored */
    trn_status store_status;   /* why a window could not be read (TRN_OK: out of memory) */
    trn_error store_err;
    double last;     /* the last fraction reported (reports never go back) */
    uint32_t tile;   /* samples per tile edge */
    uint32_t stored; /* the disk tile cache's tile edge */
    int sink;        /* the node delivered, and its pin */
    uint32_t sink_pin;
    const char *cache_dir; /* the disk tile cache's folder (NULL: none) */
    /* Global nodes split across processes (NULL: none): their results in the shared store,
     * in_shared[k] set for them; up[k]: node k is evaluated for the sink (while run_globals
     * runs). */
    trn_tile_split *split;
    trn_tile_store *shared;
    uint8_t *in_shared;
    const uint8_t *up;
    /* With the shared store: process k's band of rows of a result kept by bands, rows
     * bands[k] .. bands[k + 1] - 1 (whole cache tile rows; comm's size + 1 starts). */
    uint32_t *bands;
    trn_node_keep *keep; /* per node: what a tile node prepares once for every tile */
} tiler;

/* Report fraction v of the run (never below the last report); true when asked to stop. */
/* Here rather than beside the node families: the registry lists them, so they cannot look it up. */
bool trn_graph_node_reach(const trn_graph_node *n, const trn_recipe *recipe, trn_node_reach *out)
{
    memset(out, 0, sizeof *out);
    const trn_node_type *t = n ? trn_node_type_find(n->type) : NULL;
    if (!t) return false;
    const trn_node_module *m = trn_node_module_of(t);
    if (!m->reach) return false;
    m->reach(n, t, recipe, out);
    return true;
}

static bool report_at(tiler *t, double v, const char *stage)
{
    if (v < t->last) v = t->last;
    if (v > 1.0) v = 1.0;
    t->last = v;
    return t->pr.fn && t->pr.fn(v, stage, t->pr.user) == TRN_CANCEL;
}

/* A global node's progress inside its slice: "node ID: stage". */
typedef struct node_bridge {
    tiler *t;
    double lo, hi; /* its slice of the run */
    const char *id;
    char stage[112];
} node_bridge;

static int node_bridge_fn(double done, const char *stage, void *user)
{
    node_bridge *b = user;
    snprintf(b->stage, sizeof b->stage, "node %.60s: %s", b->id, stage ? stage : "");
    return report_at(b->t, b->lo + (b->hi - b->lo) * done, b->stage) ? TRN_CANCEL : TRN_CONTINUE;
}

/* Report progress after `step` more units; true when asked to stop. */
static bool advance(tiler *t, double step, const char *stage)
{
    t->done += step;
    return report_at(t, t->units > 0.0 ? t->done / t->units : 1.0, stage);
}

static trn_status cancelled(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "tiled evaluation: cancelled");
}

static bool tiled_kind(trn_node_reach_kind k)
{
    return k == TRN_REACH_POINTWISE || k == TRN_REACH_NEIGHBOURHOOD;
}

static bool float_kind(trn_pin_kind k)
{
    return k == TRN_PIN_HEIGHTFIELD || k == TRN_PIN_MASK;
}

/* One axis of a tile grown by h samples, clipped to the world and at least 2 samples (a grid
 * of one cell) wide; windows of one tile nest as h grows. */
static void grow_axis(uint32_t t0, uint32_t tn, uint32_t h, uint32_t world, uint32_t *a,
                      uint32_t *n)
{
    uint64_t lo = t0 > h ? t0 - h : 0u, hi = (uint64_t)t0 + tn + h;
    if (hi > world) hi = world;
    if (hi - lo < 2u) {
        if (lo + 2u <= world)
            hi = lo + 2u;
        else
            lo = hi - 2u;
    }
    *a = (uint32_t)lo;
    *n = (uint32_t)(hi - lo);
}

static twin grow(const tiler *t, twin tile, uint32_t h)
{
    twin w;
    grow_axis(tile.x0, tile.nx, h, t->sx, &w.x0, &w.nx);
    grow_axis(tile.z0, tile.nz, h, t->sz, &w.z0, &w.nz);
    return w;
}

/* A window's extent whose size / cells is the world's size / cells bit for bit (what spacing a
 * neighbourhood node derives). */
static double window_size(double world_size, uint32_t world_cells, uint32_t cells)
{
    if (cells == world_cells) return world_size;
    const double step = world_size / (double)world_cells;
    double s = step * (double)cells;
    for (int k = 0; k < 64 && s / (double)cells != step; k++)
        s = s / (double)cells < step ? nextafter(s, HUGE_VAL) : nextafter(s, -HUGE_VAL);
    return s;
}

static trn_node_result *result_on(const tiler *t, twin w, uint64_t key)
{
    return trn_node_result_new(key, w.nx - 1u, w.nz - 1u,
                               window_size(t->recipe->size_x, t->recipe->cells_x, w.nx - 1u),
                               window_size(t->recipe->size_z, t->recipe->cells_z, w.nz - 1u));
}

static trn_gbuf *crop_buf(const trn_gbuf *b, twin from, twin to)
{
    if (!b) return NULL;
    trn_gbuf *c = trn_gbuf_new((size_t)to.nx * to.nz, sizeof(float));
    if (!c) return NULL;
    const float *src = b->data;
    float *dst = c->data;
    for (uint32_t j = 0; j < to.nz; j++)
        memcpy(dst + (size_t)j * to.nx,
               src + ((size_t)(to.z0 - from.z0 + j) * from.nx + (to.x0 - from.x0)),
               (size_t)to.nx * sizeof(float));
    return c;
}

/* r (on window from) cut to window to (inside it): its heightfield and mask outputs with their
 * transport; other outputs stay empty (tile nodes never read them). NULL: no memory. */
static trn_node_result *crop(const tiler *t, const trn_node_result *r, twin from, twin to)
{
    if (from.x0 == to.x0 && from.z0 == to.z0 && from.nx == to.nx && from.nz == to.nz)
        return trn_node_result_retain((trn_node_result *)r);
    trn_node_result *c = result_on(t, to, r->key);
    if (!c) return NULL;
    c->output_count = r->output_count;
    c->biome_rules = r->biome_rules;
    for (uint32_t k = 0; k < r->output_count; k++) {
        const trn_gout *o = &r->outputs[k];
        c->outputs[k].kind = o->kind;
        c->outputs[k].sea_level = o->sea_level;
        if (!float_kind(o->kind)) continue;
        if ((o->values && !(c->outputs[k].values = crop_buf(o->values, from, to))) ||
            (o->transport && !(c->outputs[k].transport = crop_buf(o->transport, from, to)))) {
            trn_node_result_release(c);
            return NULL;
        }
    }
    return c;
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory evaluating tiles");
}

/* A window could not be made: the tile cache's reason when it had one, else no memory. */
static trn_status window_failed(const tiler *t, trn_error *err)
{
    if (!t->store_status) return oom(err);
    if (err) *err = t->store_err;
    return t->store_status;
}

/* The store that holds global node k's results: the shared one for a split node. */
static trn_tile_store *store_of(const tiler *t, int k)
{
    return t->in_shared && t->in_shared[k] ? t->shared : t->store;
}

/* Global node s's result on window w: cut from the whole grid while it is in memory, else read
 * from the tile cache. NULL: no memory, or the cache could not be read (store_status). */
static trn_node_result *global_window(tiler *t, int s, twin w)
{
    const twin all = {0, 0, t->sx, t->sz};
    if (t->whole[s]) return crop(t, t->whole[s], all, w);
    const trn_node_result *sh = t->shell ? t->shell[s] : NULL;
    if (!sh) return NULL;
    trn_node_result *c = result_on(t, w, sh->key);
    if (!c) return NULL;
    c->output_count = sh->output_count;
    c->biome_rules = sh->biome_rules;
    const size_t n = (size_t)w.nx * w.nz;
    for (uint32_t k = 0; k < sh->output_count; k++) {
        trn_gout *o = &c->outputs[k];
        o->kind = sh->outputs[k].kind;
        o->sea_level = sh->outputs[k].sea_level;
        if (!float_kind(o->kind) || !sh->outputs[k].values) continue;
        const bool tr = (t->stored_transport[s] >> k) & 1u;
        if (!(o->values = trn_gbuf_new(n, sizeof(float))) ||
            (tr && !(o->transport = trn_gbuf_new(n, sizeof(float))))) {
            trn_node_result_release(c);
            return NULL;
        }
        const trn_status st =
            trn_tile_store_read(store_of(t, s), sh->key, k, w.x0, w.z0, w.nx, w.nz, o->values->data,
                                tr ? (float *)o->transport->data : NULL, &t->store_err);
        if (st) {
            t->store_status = st;
            trn_node_result_release(c);
            return NULL;
        }
    }
    return c;
}

/* Global node k's heightfield and mask outputs into the tile cache, and what they are into its
 * shell (the samples are read back from the cache). */
static trn_status spill(tiler *t, int k, trn_error *err)
{
    const trn_node_result *r = t->whole[k];
    const twin all = {0, 0, t->sx, t->sz};
    trn_node_result *sh = result_on(t, all, r->key);
    if (!sh) return oom(err);
    sh->output_count = r->output_count;
    sh->biome_rules = r->biome_rules;
    trn_status st = TRN_OK;
    for (uint32_t p = 0; p < r->output_count && !st; p++) {
        const trn_gout *o = &r->outputs[p];
        sh->outputs[p].kind = o->kind;
        sh->outputs[p].sea_level = o->sea_level;
        if (!float_kind(o->kind) || !o->values) continue;
        /* The shell marks a stored output by a placeholder buffer of no samples. */
        if (!(sh->outputs[p].values = trn_gbuf_new(0, sizeof(float)))) {
            st = oom(err);
            break;
        }
        if (o->transport) t->stored_transport[k] |= (uint8_t)(1u << p);
        st = trn_tile_store_put(t->store, r->key, p, o->values->data,
                                o->transport ? o->transport->data : NULL, err);
    }
    if (st) {
        trn_node_result_release(sh);
        return st;
    }
    t->shell[k] = sh;
    return TRN_OK;
}

/* ---- erosion row band by row band, from the tile cache to the tile cache ---- */

/* Whether global node k is an erosion that runs by rows here: droplets, with a tile cache, no
 * drainage input and its field from a global node (read back from the cache row by row). */
static bool by_rows_cached(const tiler *t, int k, bool cached)
{
    if (!cached || t->reach[k].kind != TRN_REACH_GLOBAL) return false;
    const trn_graph_node *n = &t->g->nodes[k];
    const trn_node_type *ty = trn_node_type_find(n->type);
    if (!ty || !trn_node_erosion_by_rows(n, ty, t->recipe,
                                        t->o ? t->o->quality : TRN_EROSION_FINAL))
        return false;
    const int field = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    const int drainage = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + 1];
    return field >= 0 && drainage < 0 && t->reach[field].kind == TRN_REACH_GLOBAL;
}

static bool by_rows(const tiler *t, int k)
{
    return by_rows_cached(t, k, t->store != NULL);
}

/* Global node s's result on the whole grid again, from the tile cache (a global node that
 * reads it whole after it left memory: the reader of a node run by rows). */
static trn_status reload(tiler *t, int s, trn_error *err)
{
    const twin all = {0, 0, t->sx, t->sz};
    if (!(t->whole[s] = global_window(t, s, all))) return window_failed(t, err);
    trn_node_result_measure(t->whole[s]);
    return TRN_OK;
}

typedef struct rows_job {
    tiler *t;
    int src; /* the field input's node and pin */
    uint32_t src_pin;
    bool src_transport;        /* whether it carries a transport */
    uint64_t key;              /* the erosion node's */
    float *in, *up, *out, *tr; /* a band: input, its transport, heights, transport out */
    float rise, fall;
    trn_tile_store *dst; /* where its results go: the shared store when split, else the cache */
    uint8_t *kept;       /* per chunk of cache tile rows: written here (a split run writes its
                            own chunks only) */
    size_t chunk;
} rows_job;

/* Rows [z0, z0 + count) of global node s's output pin (and its transport) from memory or the
 * tile cache (key: the node's). */
static trn_status rows_of(tiler *t, int s, uint64_t key, uint32_t pin, size_t z0, size_t count,
                          float *values, float *transport, trn_error *err)
{
    const size_t n = count * t->sx;
    if (t->whole[s]) {
        const trn_gout *o = &t->whole[s]->outputs[pin];
        memcpy(values, (const float *)o->values->data + z0 * t->sx, n * sizeof(float));
        if (transport)
            memcpy(transport, (const float *)o->transport->data + z0 * t->sx, n * sizeof(float));
        return TRN_OK;
    }
    return trn_tile_store_read(store_of(t, s), key, pin, 0, (uint32_t)z0, t->sx, (uint32_t)count,
                               values, transport, err);
}

static uint64_t src_key(const rows_job *j)
{
    return j->t->shell[j->src] ? j->t->shell[j->src]->key : 0u;
}

static trn_status rows_read(void *user, size_t z0, size_t count, float *rows, trn_error *err)
{
    rows_job *j = user;
    return rows_of(j->t, j->src, src_key(j), j->src_pin, z0, count, rows, NULL, err);
}

/* A last cache tile row of one sample is stored with the row before it: a band then starts
 * there (that row is in the cache already). */
static size_t band_start(size_t z0, size_t count)
{
    return count == 1 && z0 > 0 ? z0 - 1 : z0;
}

/* The final heights of rows [z0, z0 + count): with the transport (the input's plus the change,
 * or the change) into the tile cache, the largest rise and fall noted. */
static trn_status rows_write(void *user, size_t z0, size_t count, const float *rows, trn_error *err)
{
    rows_job *j = user;
    tiler *t = j->t;
    const size_t b0 = band_start(z0, count), lead = (z0 - b0) * t->sx, n = count * t->sx;
    trn_status st = rows_of(t, j->src, src_key(j), j->src_pin, z0, count, j->in,
                            j->src_transport ? j->up : NULL, err);
    if (!st && lead)
        st = trn_tile_store_read(j->dst, j->key, 0, 0, (uint32_t)b0, t->sx, (uint32_t)(z0 - b0),
                                 j->out, j->tr, err);
    if (st) return st;
    memcpy(j->out + lead, rows, n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        /* As trn_erosion_run's change and the node's transport sum, in float. */
        const float d = rows[i] - j->in[i];
        j->tr[lead + i] = j->src_transport ? j->up[i] + d : d;
        if (d > j->rise) j->rise = d;
        if (-d > j->fall) j->fall = -d;
    }
    j->kept[z0 / j->chunk] = 1;
    return trn_tile_store_put_rows(j->dst, j->key, 0, (uint32_t)b0, (uint32_t)(z0 + count - b0),
                                   j->out, j->tr, err);
}

/* Whether anything reads output pin p of node k (a node's input, or the delivered pin). */
static bool pin_read(const tiler *t, int k, uint32_t p)
{
    if (t->sink == k && t->sink_pin == p) return true;
    for (uint32_t v = 0; v < t->L.n; v++)
        for (uint32_t i = 0; i < TRN_GRAPH_MAX_INPUTS; i++)
            if (t->L.src[(size_t)v * TRN_GRAPH_MAX_INPUTS + i] == k &&
                t->L.src_out[(size_t)v * TRN_GRAPH_MAX_INPUTS + i] == (int)p)
                return true;
    return false;
}

/* Erosion node k by rows: its input read from the cache (or memory) a cache tile row at a time,
 * its outputs written to the cache as they become final; the deposited and eroded masks, which
 * need the largest rise and fall, in a second pass when something reads them. Fills the node's
 * shell; the node's whole grid is never held. */
/* What every node evaluated by the tiler is given, before its window and progress. */
static trn_node_ctx node_ctx_of(const tiler *t, const trn_graph_node *node,
                                const trn_node_type *ty)
{
    trn_node_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.node = node;
    ctx.type = ty;
    ctx.recipe = t->recipe;
    ctx.threads = t->threads;
    ctx.quality = t->o ? t->o->quality : TRN_EROSION_FINAL;
    ctx.palette = t->o ? t->o->palette : NULL;
    ctx.keep = t->keep ? &t->keep[node - t->g->nodes] : NULL;
    return ctx;
}

static trn_status erosion_rows(tiler *t, int k, const trn_progress *progress, trn_error *err)
{
    const trn_graph_node *node = &t->g->nodes[k];
    const trn_node_type *ty = trn_node_type_find(node->type);
    rows_job j;
    memset(&j, 0, sizeof j);
    j.t = t;
    j.src = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    j.src_pin = (uint32_t)t->L.src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    j.key = t->L.keys[k];
    j.src_transport = t->whole[j.src] ? t->whole[j.src]->outputs[j.src_pin].transport != NULL
                                      : ((t->stored_transport[j.src] >> j.src_pin) & 1u) != 0;
    const size_t chunk = t->stored, band = (chunk + 1u) * t->sx;
    /* Shared by processes with a shared folder: each writes the chunks of rows it keeps there
     * (downstream nodes read whichever they meet), none the whole result. */
    trn_comm *comm = t->rows ? t->rows->comm : NULL;
    const bool keep = comm && t->shared;
    j.dst = keep ? t->shared : t->store;
    j.chunk = chunk;
    const uint64_t kept0 = keep ? trn_tile_store_bytes(t->shared) : 0u;
    j.kept = calloc((t->sz + chunk - 1u) / chunk, 1);
    j.in = malloc(band * sizeof(float));
    j.up = malloc(band * sizeof(float));
    j.out = malloc(band * sizeof(float));
    j.tr = malloc(band * sizeof(float));
    trn_node_result *sh = NULL;
    trn_status st = TRN_OK;
    if (!j.in || !j.up || !j.out || !j.tr || !j.kept) st = oom(err);
    /* The input's lowest and highest height (trn_field_range's: NaN skipped). */
    float lo = INFINITY, hi = -INFINITY;
    for (size_t z0 = 0; z0 < t->sz && !st; z0 += chunk) {
        const size_t count = t->sz - z0 < chunk ? t->sz - z0 : chunk;
        if ((st = rows_of(t, j.src, src_key(&j), j.src_pin, z0, count, j.in, NULL, err))) break;
        for (size_t i = 0; i < count * t->sx; i++) {
            if (j.in[i] < lo) lo = j.in[i];
            if (j.in[i] > hi) hi = j.in[i];
        }
    }
    if (lo > hi) lo = hi = 0.0f;
    trn_node_ctx ctx = node_ctx_of(t, node, ty);
    ctx.progress = progress;
    const trn_erosion_rows_io io = {rows_read, rows_write, &j, chunk, keep};
    uint64_t droplets = 0, sent0 = 0, sent1 = 0;
    double in0 = 0.0, in1 = 0.0;
    ctx.solve_comm = comm;
    if (ctx.solve_comm) {
        trn_comm_traffic(ctx.solve_comm, &sent0, NULL);
        trn_comm_time(ctx.solve_comm, NULL, &in0);
    }
    const clock_t c0 = clock();
    if (!st) st = trn_node_erosion_rows(&ctx, lo, hi, &io, &droplets, err);
    if (!st && ctx.solve_comm) {
        trn_comm_traffic(ctx.solve_comm, &sent1, NULL);
        trn_comm_time(ctx.solve_comm, NULL, &in1);
        t->rows->erosions++;
        t->rows->droplets += droplets;
        t->rows->sent += sent1 - sent0;
        t->rows->cpu += (double)(clock() - c0) / CLOCKS_PER_SEC - (in1 - in0);
    }
    /* The masks' largest rise and fall: over every process's rows. */
    if (keep) {
        float mine[2] = {j.rise, j.fall};
        float *every = NULL;
        st = trn_comm_agree(comm, st, err);
        if (!st) st = trn_comm_allgather(comm, mine, sizeof mine, (void **)&every, NULL, err);
        for (int p = 0; !st && p < trn_comm_size(comm); p++) {
            if (every[2 * p] > j.rise) j.rise = every[2 * p];
            if (every[2 * p + 1] > j.fall) j.fall = every[2 * p + 1];
        }
        free(every);
    }
    const twin all = {0, 0, t->sx, t->sz};
    if (!st && !(sh = result_on(t, all, j.key))) st = oom(err);
    if (!st) {
        sh->output_count = ty->output_count;
        for (uint32_t p = 0; p < ty->output_count; p++)
            sh->outputs[p].kind = ty->outputs[p].kind;
        t->stored_transport[k] |= 1u;
        if (!(sh->outputs[0].values = trn_gbuf_new(0, sizeof(float)))) st = oom(err);
    }
    /* The masks: each side of the change over that side's largest value. */
    const bool masks = ty->output_count >= 3 && (pin_read(t, k, 1) || pin_read(t, k, 2));
    for (size_t z0 = 0; masks && z0 < t->sz && !st; z0 += chunk) {
        if (!j.kept[z0 / chunk]) continue;
        const size_t count = t->sz - z0 < chunk ? t->sz - z0 : chunk;
        const size_t b0 = band_start(z0, count), rows = z0 + count - b0, n = rows * t->sx;
        if ((st = rows_of(t, j.src, src_key(&j), j.src_pin, b0, rows, j.in, NULL, err)) ||
            (st = trn_tile_store_read(j.dst, j.key, 0, 0, (uint32_t)b0, t->sx, (uint32_t)rows,
                                      j.out, NULL, err)))
            break;
        for (size_t i = 0; i < n; i++) {
            const float d = j.out[i] - j.in[i];
            j.up[i] = d > 0.0f && j.rise > 0.0f ? fminf(d / j.rise, 1.0f) : 0.0f;
            j.tr[i] = d < 0.0f && j.fall > 0.0f ? fminf(-d / j.fall, 1.0f) : 0.0f;
        }
        if (!(st = trn_tile_store_put_rows(j.dst, j.key, 1, (uint32_t)b0, (uint32_t)rows, j.up,
                                           NULL, err)))
            st = trn_tile_store_put_rows(j.dst, j.key, 2, (uint32_t)b0, (uint32_t)rows, j.tr, NULL,
                                         err);
    }
    /* Every process's rows are in the shared folder before any process reads them. */
    if (keep) st = trn_comm_agree(comm, st, err);
    for (uint32_t p = 1; masks && p < 3 && !st; p++)
        if (!(sh->outputs[p].values = trn_gbuf_new(0, sizeof(float)))) st = oom(err);
    free(j.in);
    free(j.up);
    free(j.out);
    free(j.tr);
    free(j.kept);
    if (st) {
        trn_node_result_release(sh);
        return st;
    }
    t->shell[k] = sh;
    if (keep) {
        t->in_shared[k] = 1;
        t->rows->kept += trn_tile_store_bytes(t->shared) - kept0;
    }
    return TRN_OK;
}

/* ---- Drain Depressions tile by tile, from the tile cache to the tile cache ---- */

/* Whether global node k is a Drain Depressions that runs in tiles here: with a tile cache and
 * its field from a global node (read back from the cache a tile at a time). */
static bool drain_in_tiles_cached(const tiler *t, int k, bool cached)
{
    if (!cached || t->reach[k].kind != TRN_REACH_GLOBAL) return false;
    if (strcmp(t->g->nodes[k].type, "drain_depressions") != 0) return false;
    const int field = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    return field >= 0 && t->reach[field].kind == TRN_REACH_GLOBAL;
}

static bool drain_in_tiles(const tiler *t, int k)
{
    return drain_in_tiles_cached(t, k, t->store != NULL);
}

typedef struct drain_job {
    tiler *t;
    int src; /* the field input's node and pin */
    uint32_t src_pin;
    bool src_transport;
    uint64_t key;     /* the drain node's */
    float *band, *tr; /* rows of the output being gathered, their transport */
    size_t band_z0;   /* the band's first row */
} drain_job;

/* The field input's heights on a tile: from memory or the tile cache. */
static trn_status drain_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                float *out, trn_error *err)
{
    drain_job *j = user;
    tiler *t = j->t;
    if (t->whole[j->src]) {
        const float *v = (const float *)t->whole[j->src]->outputs[j->src_pin].values->data;
        for (uint32_t r = 0; r < h; r++)
            memcpy(out + (size_t)r * w, v + ((size_t)j0 + r) * t->sx + i0, w * sizeof(float));
        return TRN_OK;
    }
    return trn_tile_store_read(store_of(t, j->src), t->shell[j->src]->key, j->src_pin, i0, j0, w, h,
                               out, NULL, err);
}

/* A tile's final heights into the band of its tile row; a finished tile row into the cache
 * (a last tile row of one sample goes with the row before it, as the cache stores it). */
static trn_status drain_emit(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                             const float *values, trn_error *err)
{
    drain_job *j = user;
    tiler *t = j->t;
    for (uint32_t r = 0; r < h; r++)
        memcpy(j->band + ((size_t)j0 - j->band_z0 + r) * t->sx + i0, values + (size_t)r * w,
               w * sizeof(float));
    if (i0 + (size_t)w < t->sx) return TRN_OK;
    const size_t end = (size_t)j0 + h;
    if (end + 1u == t->sz) return TRN_OK; /* the one-sample row comes next */
    const size_t rows = end - j->band_z0;
    trn_status st = TRN_OK;
    /* The output keeps its input's transport (a conditioning, not moved material). */
    if (j->src_transport && t->whole[j->src]) {
        const trn_gbuf *b = t->whole[j->src]->outputs[j->src_pin].transport;
        memcpy(j->tr, (const float *)b->data + j->band_z0 * t->sx, rows * t->sx * sizeof(float));
    } else if (j->src_transport) {
        st = trn_tile_store_read(store_of(t, j->src), t->shell[j->src]->key, j->src_pin, 0,
                                 (uint32_t)j->band_z0, t->sx, (uint32_t)rows, NULL, j->tr, err);
    }
    if (!st)
        st = trn_tile_store_put_rows(t->store, j->key, 0, (uint32_t)j->band_z0, (uint32_t)rows,
                                     j->band, j->src_transport ? j->tr : NULL, err);
    j->band_z0 = end;
    return st;
}

/* Drain Depressions node k in tiles: the tiled drainage of its input (Barnes 2016's priority
 * flood with a spill graph, one process), then each tile's filled heights, or each tile
 * breached (trn_drainage_tiles_breach), into the cache a tile row at a time. Holds the tiled
 * drainage (9 bytes a sample) and a band of rows, not the node's whole grid. */
static trn_status drain_tiles(tiler *t, int k, trn_progress_fn progress, void *progress_user,
                              trn_error *err)
{
    const trn_graph_node *node = &t->g->nodes[k];
    const trn_node_type *ty = trn_node_type_find(node->type);
    drain_job j;
    memset(&j, 0, sizeof j);
    j.t = t;
    j.src = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    j.src_pin = (uint32_t)t->L.src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    j.key = t->L.keys[k];
    j.src_transport = t->whole[j.src] ? t->whole[j.src]->outputs[j.src_pin].transport != NULL
                                      : ((t->stored_transport[j.src] >> j.src_pin) & 1u) != 0;
    const twin all = {0, 0, t->sx, t->sz};
    trn_node_result *sh = result_on(t, all, j.key);
    if (!sh) return oom(err);
    if (!t->whole[j.src] && !(t->shell && t->shell[j.src])) {
        trn_node_result_release(sh);
        return window_failed(t, err);
    }
    const uint32_t tile = t->stored < t->sz ? t->stored : t->sz;
    const size_t band = ((size_t)tile + 1u) * t->sx;
    j.band = malloc(band * sizeof(float));
    j.tr = j.src_transport ? malloc(band * sizeof(float)) : NULL;
    trn_status st = TRN_OK;
    if (!j.band || (j.src_transport && !j.tr)) st = oom(err);
    const bool fill = trn_node_drain_fills(node, ty);
    trn_comm *comm = st ? NULL : trn_comm_serial_new();
    if (!st && !comm) st = oom(err);
    trn_drainage_tiling g = {sh->cells_x, sh->cells_z, sh->size_x, sh->size_z,
                             trn_node_drainage_sea(node, ty, t->recipe), t->stored, 0, 0};
    trn_drainage_tiles *dt = NULL;
    if (!st)
        st = trn_drainage_tiled_compute(comm, &g, drain_heights, &j, &dt, progress, progress_user,
                                        err);
    if (!st && fill) {
        trn_drainage_tiled_stats s;
        trn_drainage_tiles_stats(dt, &s);
        for (size_t q = 0; q < s.tiles && !st; q++) {
            uint32_t i0, j0, w, h;
            const float *filled;
            trn_drainage_tiles_tile(dt, q, &i0, &j0, &w, &h, &filled, NULL, NULL);
            st = drain_emit(&j, i0, j0, w, h, filled, err);
        }
    } else if (!st) {
        st = trn_drainage_tiles_breach(dt, drain_heights, &j, drain_emit, &j, err);
    }
    trn_drainage_tiles_free(dt);
    trn_comm_free(comm);
    free(j.band);
    free(j.tr);
    if (!st) {
        sh->output_count = ty->output_count;
        sh->outputs[0].kind = ty->outputs[0].kind;
        if (j.src_transport) t->stored_transport[k] |= 1u;
        if (!(sh->outputs[0].values = trn_gbuf_new(0, sizeof(float)))) st = oom(err);
    }
    if (st) {
        trn_node_result_release(sh);
        return st;
    }
    t->shell[k] = sh;
    return TRN_OK;
}

/* Whether global node k's result is kept by bands of rows across the split's processes: a
 * Stream Power node (its fine steps hand each process its band, trn_node_evolve), with the
 * shared store. */
static bool by_bands(const tiler *t, int k)
{
    return t->bands && t->shared && t->reach[k].kind == TRN_REACH_GLOBAL &&
           strcmp(t->g->nodes[k].type, "stream_power") == 0;
}

/* Global node k's result, right in this process's band of rows only, into the shared store
 * (its float outputs, band by band: every process writes its own), then out of memory: every
 * reader reads the shared store. Collective over the split's processes. */
static trn_status put_band(tiler *t, int k, trn_status st, trn_error *err)
{
    trn_node_result *r = t->whole[k];
    const twin all = {0, 0, t->sx, t->sz};
    const int me = trn_comm_rank(t->split->comm);
    const uint32_t b0 = t->bands[me], b1 = t->bands[me + 1];
    trn_node_result *sh = st ? NULL : result_on(t, all, r->key);
    if (!st && !sh) st = oom(err);
    if (!st) {
        sh->output_count = r->output_count;
        sh->biome_rules = r->biome_rules;
    }
    for (uint32_t p = 0; !st && p < r->output_count; p++) {
        const trn_gout *o = &r->outputs[p];
        sh->outputs[p].kind = o->kind;
        sh->outputs[p].sea_level = o->sea_level;
        if (!float_kind(o->kind) || !o->values) continue;
        if (o->transport) {
            st = trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                               "node '%.60s': a result by bands carries no transport",
                               t->g->nodes[k].id);
            break;
        }
        if (!(sh->outputs[p].values = trn_gbuf_new(0, sizeof(float)))) {
            st = oom(err);
            break;
        }
        st = trn_tile_store_put_rows(t->shared, r->key, p, b0, b1 - b0,
                                     (const float *)o->values->data + (size_t)b0 * t->sx, NULL,
                                     err);
    }
    /* Every band is in the shared store before anyone reads it. */
    st = trn_comm_agree(t->split->comm, st, err);
    trn_node_result_release(t->whole[k]);
    t->whole[k] = NULL;
    if (st) {
        trn_node_result_release(sh);
        return st;
    }
    t->shell[k] = sh;
    t->in_shared[k] = 1;
    t->split->banded++;
    return TRN_OK;
}

/* Evaluate node k on window w, its inputs given by get (cropped to w). */
typedef trn_node_result *(*input_fn)(void *user, int source, twin w);

static trn_status compute_on(tiler *t, int k, twin w, const trn_grid_window *win, input_fn get,
                             void *user, const trn_progress *progress, trn_node_result **out,
                             trn_error *err)
{
    *out = NULL;
    const trn_graph_node *node = &t->g->nodes[k];
    const trn_node_type *ty = trn_node_type_find(node->type);
    trn_node_ctx ctx = node_ctx_of(t, node, ty);
    ctx.window = win;
    if (!win) {
        ctx.solve_tile = t->tile;
        ctx.solve_dir = t->cache_dir;
        if (by_bands(t, k)) ctx.solve_bands = t->bands;
    }
    trn_progress none = trn_progress_make(NULL, NULL);
    ctx.progress = progress ? progress : &none;
    trn_node_result *held[TRN_GRAPH_MAX_INPUTS] = {0};
    trn_status st = TRN_OK;
    for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
        const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
        if (s < 0) continue;
        /* A tile node reads only heightfields and masks (graph.h, trn_node_reach). */
        if (win && !float_kind(ty->inputs[i].kind)) continue;
        if (!(held[i] = get(user, s, w))) {
            st = window_failed(t, err);
            break;
        }
        ctx.input_results[i] = held[i];
        ctx.inputs[i] = &held[i]->outputs[t->L.src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + i]];
    }
    trn_node_result *r = NULL;
    if (!st && !(r = result_on(t, w, t->L.keys[k]))) st = oom(err);
    if (!st) st = win ? trn_node_compute(&ctx, r, err) : t->solve(&ctx, r, err);
    for (uint32_t i = 0; i < TRN_GRAPH_MAX_INPUTS; i++)
        trn_node_result_release(held[i]);
    if (st) {
        trn_node_result_release(r);
        return st;
    }
    *out = r;
    return TRN_OK;
}

/* ---- one sink's tiled cone, tile by tile ---- */

typedef struct cone {
    tiler *t;
    int sink;
    int64_t *need;          /* halo node k's result must cover; -1: not in the cone */
    trn_node_result **memo; /* this tile's results, on grow(tile, need) */
    twin tile;
} cone;

static trn_node_result *cone_input(void *user, int s, twin w)
{
    cone *c = user;
    if (!tiled_kind(c->t->reach[s].kind)) return global_window(c->t, s, w);
    return crop(c->t, c->memo[s], grow(c->t, c->tile, (uint32_t)c->need[s]), w);
}

static trn_status cone_make(tiler *t, int sink, cone *c, trn_error *err)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->sink = sink;
    c->need = malloc(t->L.n * sizeof *c->need);
    c->memo = calloc(t->L.n ? t->L.n : 1u, sizeof *c->memo);
    if (!c->need || !c->memo) {
        free(c->need);
        free(c->memo);
        return oom(err);
    }
    for (uint32_t k = 0; k < t->L.n; k++)
        c->need[k] = -1;
    c->need[sink] = 0;
    /* Consumers come after their inputs in the order: walk it backwards, each tile node
     * asking its tile inputs for its own need plus its halo. */
    for (uint32_t q = t->L.order_count; q-- > 0;) {
        const int k = t->L.order[q];
        if (c->need[k] < 0 || !tiled_kind(t->reach[k].kind)) continue;
        const trn_node_type *ty = trn_node_type_find(t->g->nodes[k].type);
        for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            if (s < 0 || !float_kind(ty->inputs[i].kind) || !tiled_kind(t->reach[s].kind)) continue;
            const int64_t h = c->need[k] + t->reach[k].halo;
            if (h > c->need[s]) c->need[s] = h;
        }
    }
    return TRN_OK;
}

static void cone_clear(cone *c)
{
    for (uint32_t k = 0; k < c->t->L.n; k++) {
        trn_node_result_release(c->memo[k]);
        c->memo[k] = NULL;
    }
}

static void cone_dispose(cone *c)
{
    if (c->memo) cone_clear(c);
    free(c->need);
    free(c->memo);
}

/* The sink's result on one tile (a new reference, cut to the tile). */
static trn_status cone_tile(cone *c, twin tile, trn_node_result **out, trn_error *err)
{
    tiler *t = c->t;
    c->tile = tile;
    *out = NULL;
    if (!tiled_kind(t->reach[c->sink].kind)) {
        if (!(*out = global_window(t, c->sink, tile))) return window_failed(t, err);
        return TRN_OK;
    }
    trn_status st = TRN_OK;
    for (uint32_t q = 0; q < t->L.order_count && !st; q++) {
        const int k = t->L.order[q];
        if (c->need[k] < 0 || !tiled_kind(t->reach[k].kind)) continue;
        /* Computed on the tile grown by its need and its own halo, kept on its need. */
        const twin at = grow(t, tile, (uint32_t)c->need[k] + t->reach[k].halo);
        const trn_grid_window win = {at.x0,
                                     at.z0,
                                     t->recipe->cells_x,
                                     t->recipe->cells_z,
                                     t->recipe->size_x,
                                     t->recipe->size_z};
        trn_node_result *r;
        st = compute_on(t, k, at, &win, cone_input, c, NULL, &r, err);
        if (st) break;
        c->memo[k] = crop(t, r, at, grow(t, tile, (uint32_t)c->need[k]));
        trn_node_result_release(r);
        if (!c->memo[k]) st = oom(err);
    }
    if (!st && !(*out = crop(t, c->memo[c->sink], grow(t, tile, 0), tile))) st = oom(err);
    cone_clear(c);
    return st;
}

/* A tile of exactly the tile's samples (grow(tile, 0) may be wider for a one-sample tile). */
static twin tile_at(const tiler *t, uint32_t size, uint32_t tx, uint32_t tz)
{
    twin w;
    w.x0 = tx * size;
    w.z0 = tz * size;
    w.nx = t->sx - w.x0 < size ? t->sx - w.x0 : size;
    w.nz = t->sz - w.z0 < size ? t->sz - w.z0 : size;
    return w;
}

/* For each tile of the sink, f(user, tile, result on the tile). */
typedef trn_status (*tile_fn)(void *user, twin tile, const trn_node_result *r, trn_error *err);

/* Every tile (the delivered ones when only_window). */
static trn_status each_tile(tiler *t, int sink, uint32_t size, bool only_window, tile_fn f,
                            void *user, trn_error *err)
{
    cone c;
    trn_status st = cone_make(t, sink, &c, err);
    if (st) return st;
    const uint32_t nx = (t->sx + size - 1u) / size, nz = (t->sz + size - 1u) / size;
    const uint32_t x0 = only_window ? t->tx0 : 0, x1 = only_window ? t->tx1 : nx;
    const uint32_t z0 = only_window ? t->tz0 : 0, z1 = only_window ? t->tz1 : nz;
    const bool report = only_window;
    for (uint32_t tz = z0; tz < z1 && !st; tz++)
        for (uint32_t tx = x0; tx < x1 && !st; tx++) {
            const twin tile = tile_at(t, size, tx, tz);
            trn_node_result *r;
            if ((st = cone_tile(&c, tile, &r, err))) break;
            st = f(user, tile, r, err);
            trn_node_result_release(r);
            if (!st && report && advance(t, 1.0, "tiles")) st = cancelled(err);
        }
    cone_dispose(&c);
    return st;
}

/* ---- global nodes on the assembled grid ---- */

static trn_status paste(void *user, twin tile, const trn_node_result *r, trn_error *err)
{
    (void)err;
    trn_node_result *whole = user;
    const size_t wx = (size_t)whole->cells_x + 1u;
    for (uint32_t k = 0; k < r->output_count; k++) {
        const trn_gbuf *bufs[2] = {r->outputs[k].values, r->outputs[k].transport};
        trn_gbuf *dsts[2] = {whole->outputs[k].values, whole->outputs[k].transport};
        for (int b = 0; b < 2; b++) {
            if (!bufs[b] || !dsts[b]) continue;
            for (uint32_t j = 0; j < tile.nz; j++)
                memcpy((float *)dsts[b]->data + (size_t)(tile.z0 + j) * wx + tile.x0,
                       (const float *)bufs[b]->data + (size_t)j * tile.nx,
                       (size_t)tile.nx * sizeof(float));
        }
        whole->biome_rules = whole->biome_rules || r->biome_rules;
    }
    return TRN_OK;
}

/* Tile node s's outputs assembled into a whole-grid result (the buffers its first tile has). */
static trn_status assemble(tiler *t, int s, uint32_t size, trn_node_result **out, trn_error *err)
{
    *out = NULL;
    const twin all = {0, 0, t->sx, t->sz};
    /* Its first tile says which outputs carry values and transport. */
    cone c;
    trn_status st = cone_make(t, s, &c, err);
    if (st) return st;
    trn_node_result *first;
    st = cone_tile(&c, tile_at(t, size, 0, 0), &first, err);
    cone_dispose(&c);
    if (st) return st;
    trn_node_result *whole = result_on(t, all, t->L.keys[s]);
    if (!whole) {
        trn_node_result_release(first);
        return oom(err);
    }
    whole->output_count = first->output_count;
    const size_t n = (size_t)t->sx * t->sz;
    for (uint32_t k = 0; k < first->output_count && !st; k++) {
        whole->outputs[k].kind = first->outputs[k].kind;
        whole->outputs[k].sea_level = first->outputs[k].sea_level;
        if (first->outputs[k].values &&
            !(whole->outputs[k].values = trn_gbuf_new(n, sizeof(float))))
            st = oom(err);
        if (first->outputs[k].transport &&
            !(whole->outputs[k].transport = trn_gbuf_new(n, sizeof(float))))
            st = oom(err);
    }
    trn_node_result_release(first);
    if (!st) st = each_tile(t, s, size, false, paste, whole, err);
    if (st) {
        trn_node_result_release(whole);
        return st;
    }
    trn_node_result_measure(whole);
    *out = whole;
    return TRN_OK;
}

typedef struct global_inputs {
    tiler *t;
    trn_node_result **assembled;
} global_inputs;

static trn_node_result *global_input(void *user, int s, twin w)
{
    (void)w;
    global_inputs *gi = user;
    trn_node_result *r = tiled_kind(gi->t->reach[s].kind) ? gi->assembled[s] : gi->t->whole[s];
    return trn_node_result_retain(r);
}

trn_status trn_tile_solve_whole(const trn_node_ctx *ctx, trn_node_result *r, trn_error *err)
{
    return trn_node_compute(ctx, r, err);
}

/* ---- global nodes split across processes, results kept in tiles (a shared tile cache) ---- */

/* Whether node v, evaluated here, is a Flow Accumulation by D8. */
static bool flow_d8(const tiler *t, int v)
{
    const trn_graph_node *n = &t->g->nodes[v];
    if (strcmp(n->type, "flow_accumulation") != 0) return false;
    const trn_node_type *ty = trn_node_type_find(n->type);
    return ty && trn_node_flow_d8(n, ty);
}

/* A node that reads drainage k's drainage pin and is not a D8 Flow Accumulation (it needs the
 * drainage whole), or -1. */
static int drainage_whole_reader(const tiler *t, int k)
{
    for (uint32_t v = 0; v < t->L.n; v++) {
        if (t->up && !t->up[v]) continue;
        for (uint32_t i = 0; i < TRN_GRAPH_MAX_INPUTS; i++)
            if (t->L.src[(size_t)v * TRN_GRAPH_MAX_INPUTS + i] == k &&
                t->L.src_out[(size_t)v * TRN_GRAPH_MAX_INPUTS + i] == 0 && !flow_d8(t, (int)v))
                return (int)v;
    }
    return -1;
}

typedef enum split_kind {
    SPLIT_NONE,
    SPLIT_DRAINAGE,
    SPLIT_FLOW,
    SPLIT_FILL,
    SPLIT_BREACH
} split_kind;

/* How global node k is split across processes here (SPLIT_NONE: solved whole). */
static split_kind split_of(const tiler *t, int k)
{
    if (!t->shared || !t->store || t->reach[k].kind != TRN_REACH_GLOBAL) return SPLIT_NONE;
    const trn_graph_node *n = &t->g->nodes[k];
    if (strcmp(n->type, "drainage") == 0)
        return drainage_whole_reader(t, k) < 0 ? SPLIT_DRAINAGE : SPLIT_NONE;
    if (flow_d8(t, k)) {
        const int d = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
        return d >= 0 && split_of(t, d) == SPLIT_DRAINAGE ? SPLIT_FLOW : SPLIT_NONE;
    }
    if (strcmp(n->type, "drain_depressions") == 0) {
        const trn_node_type *ty = trn_node_type_find(n->type);
        if (!ty) return SPLIT_NONE;
        return trn_node_drain_fills(n, ty) ? SPLIT_FILL : SPLIT_BREACH;
    }
    return SPLIT_NONE;
}

typedef struct split_job {
    tiler *t;
    int src; /* the field input's node and pin */
    uint32_t src_pin;
    cone c; /* the input's cone, when it is a tile node */
} split_job;

/* The input on window w: a tile node's computed on it, a global node's from memory or the
 * cache. NULL: see window_failed. */
static trn_node_result *split_input(split_job *j, twin w, trn_error *err, trn_status *st)
{
    trn_node_result *r = NULL;
    if (tiled_kind(j->t->reach[j->src].kind)) {
        *st = cone_tile(&j->c, w, &r, err);
        return *st ? NULL : r;
    }
    if (!(r = global_window(j->t, j->src, w))) *st = window_failed(j->t, err);
    return r;
}

static trn_status split_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                float *out, trn_error *err)
{
    split_job *j = user;
    const twin at = {i0, j0, w, h};
    trn_status st = TRN_OK;
    trn_node_result *r = split_input(j, at, err, &st);
    if (!r) return st;
    memcpy(out, r->outputs[j->src_pin].values->data, (size_t)w * h * sizeof(float));
    trn_node_result_release(r);
    return TRN_OK;
}

/* A breached tile of this process's into the shared cache, with its input's transport. */
typedef struct breach_put {
    split_job *j;
    uint64_t key;
    uint32_t tile;
    bool transport;
} breach_put;

static trn_status split_breach_emit(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                    const float *values, trn_error *err)
{
    breach_put *b = user;
    trn_status st = TRN_OK;
    trn_node_result *in = NULL;
    if (b->transport) {
        const twin at = {i0, j0, w, h};
        if (!(in = split_input(b->j, at, err, &st))) return st;
    }
    st = trn_tile_store_put_tile(
        b->j->t->shared, b->key, 0, i0 / b->tile, j0 / b->tile, values,
        in ? (const float *)in->outputs[b->j->src_pin].transport->data : NULL, err);
    trn_node_result_release(in);
    return st;
}

/* Drainage or Drain Depressions node k split: each process its run of the cache's tiles,
 * written to the shared cache; a D8 Flow Accumulation of the drainage gets its mask there too;
 * a breach solves the heights its tiles' exits pass on as a small graph on process 0
 * (trn_drainage_tiles_breach_split). Collective over the split's processes. */
static trn_status split_solve(tiler *t, int k, split_kind kind, trn_progress_fn progress,
                              void *progress_user, trn_error *err)
{
    trn_comm *comm = t->split->comm;
    const trn_graph_node *node = &t->g->nodes[k];
    const trn_node_type *ty = trn_node_type_find(node->type);
    const twin all = {0, 0, t->sx, t->sz};
    split_job j;
    memset(&j, 0, sizeof j);
    j.t = t;
    j.src = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    j.src_pin = (uint32_t)t->L.src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS];
    trn_status st = TRN_OK;
    if (kind == SPLIT_FLOW) { /* written by its drainage */
        trn_node_result *sh = result_on(t, all, t->L.keys[k]);
        if (!sh) return oom(err);
        sh->output_count = 1;
        sh->outputs[0].kind = TRN_PIN_MASK;
        if (!(sh->outputs[0].values = trn_gbuf_new(0, sizeof(float)))) {
            trn_node_result_release(sh);
            return oom(err);
        }
        t->shell[k] = sh;
        t->in_shared[k] = 1;
        return TRN_OK;
    }
    const bool tiled_src = j.src >= 0 && tiled_kind(t->reach[j.src].kind);
    bool cone_ok = false; /* the cone is made (and must be disposed of) */
    if (tiled_src) cone_ok = (st = cone_make(t, j.src, &j.c, err)) == TRN_OK;
    /* Whether the input carries a transport (a fill keeps it): the same on every process. */
    bool src_transport = false;
    if (!st && j.src >= 0 && (kind == SPLIT_FILL || kind == SPLIT_BREACH)) {
        if (tiled_src) {
            const twin corner = {0, 0, 2, 2};
            trn_node_result *r = split_input(&j, corner, err, &st);
            if (r) src_transport = r->outputs[j.src_pin].transport != NULL;
            trn_node_result_release(r);
        } else if (t->whole[j.src]) {
            src_transport = t->whole[j.src]->outputs[j.src_pin].transport != NULL;
        } else {
            src_transport = ((t->stored_transport[j.src] >> j.src_pin) & 1u) != 0;
        }
    }
    if (!st && j.src < 0)
        st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "node '%.60s' has no field",
                           node->id);
    /* Every process meets here, whatever failed before (a process that failed earlier in the
     * run meets the others here too, run_globals): on a failure anywhere, all stop together. */
    st = trn_comm_agree(comm, st, err);
    if (st) {
        if (cone_ok) cone_dispose(&j.c);
        return st;
    }
    uint64_t sent0 = 0, received0 = 0;
    trn_comm_traffic(comm, &sent0, &received0);
    const uint32_t tile = t->stored;
    trn_drainage_tiling g = {t->sx - 1u,
                             t->sz - 1u,
                             t->recipe->size_x,
                             t->recipe->size_z,
                             trn_node_drainage_sea(node, ty, t->recipe),
                             tile,
                             0,
                             0};
    trn_drainage_tiles *dt = NULL;
    if (!st)
        st = trn_drainage_tiled_compute(comm, &g, split_heights, &j, &dt, progress, progress_user,
                                        err);
    trn_drainage_tiled_stats ts;
    memset(&ts, 0, sizeof ts);
    if (!st) trn_drainage_tiles_stats(dt, &ts);
    /* The drainage's readers of its mask: its own pin 1, each D8 Flow Accumulation of it. */
    const bool own_mask = kind == SPLIT_DRAINAGE && pin_read(t, k, 1);
    bool flows = false;
    for (uint32_t v = 0; kind == SPLIT_DRAINAGE && v < t->L.n; v++)
        if ((!t->up || t->up[v]) && flow_d8(t, (int)v) &&
            t->L.src[(size_t)v * TRN_GRAPH_MAX_INPUTS] == k)
            flows = true;
    float *buf = NULL;
    if (!st && ts.tiles_owned) {
        const size_t most = (size_t)tile * tile;
        if (!(buf = malloc(most * sizeof *buf))) st = oom(err);
    }
    if (kind == SPLIT_DRAINAGE && (own_mask || flows)) {
        /* The mask divides by the largest accumulation off the outlets, over every tile. */
        uint32_t top = 0;
        for (size_t q = 0; !st && q < ts.tiles; q++) {
            uint32_t i0, j0, w, h;
            const uint8_t *dir;
            const uint32_t *acc;
            trn_drainage_tiles_tile(dt, q, &i0, &j0, &w, &h, NULL, &dir, &acc);
            for (size_t c = 0; dir && c < (size_t)w * h; c++)
                if (dir[c] != TRN_DRAIN_OUTLET && acc[c] > top) top = acc[c];
        }
        st = trn_comm_agree(comm, st, err);
        void *tops = NULL;
        uint64_t *counts = NULL;
        if (!st) st = trn_comm_allgather(comm, &top, sizeof top, &tops, &counts, err);
        for (int p = 0; !st && p < trn_comm_size(comm); p++) {
            uint32_t v;
            memcpy(&v, (const uint8_t *)tops + (size_t)p * sizeof v, sizeof v);
            if (v > top) top = v;
        }
        free(tops);
        free(counts);
        const double scale = top ? 1.0 / (double)top : 0.0;
        for (size_t q = 0; !st && q < ts.tiles; q++) {
            uint32_t i0, j0, w, h;
            const uint8_t *dir;
            const uint32_t *acc;
            trn_drainage_tiles_tile(dt, q, &i0, &j0, &w, &h, NULL, &dir, &acc);
            if (!dir) continue; /* another process's */
            for (size_t c = 0; c < (size_t)w * h; c++)
                buf[c] = dir[c] == TRN_DRAIN_OUTLET ? 0.0f : (float)((double)acc[c] * scale);
            const uint32_t tx = i0 / tile, tz = j0 / tile;
            if (own_mask)
                st = trn_tile_store_put_tile(t->shared, t->L.keys[k], 1, tx, tz, buf, NULL, err);
            for (uint32_t v = 0; !st && v < t->L.n; v++)
                if ((!t->up || t->up[v]) && flow_d8(t, (int)v) &&
                    t->L.src[(size_t)v * TRN_GRAPH_MAX_INPUTS] == k)
                    st =
                        trn_tile_store_put_tile(t->shared, t->L.keys[v], 0, tx, tz, buf, NULL, err);
        }
    } else if (kind == SPLIT_FILL) {
        for (size_t q = 0; !st && q < ts.tiles; q++) {
            uint32_t i0, j0, w, h;
            const float *filled;
            trn_drainage_tiles_tile(dt, q, &i0, &j0, &w, &h, &filled, NULL, NULL);
            if (!filled) continue;
            trn_node_result *in = NULL;
            if (src_transport) {
                const twin at = {i0, j0, w, h};
                if (!(in = split_input(&j, at, err, &st))) break;
            }
            st = trn_tile_store_put_tile(
                t->shared, t->L.keys[k], 0, i0 / tile, j0 / tile, filled,
                in ? (const float *)in->outputs[j.src_pin].transport->data : NULL, err);
            trn_node_result_release(in);
        }
    } else if (kind == SPLIT_BREACH) {
        breach_put bp = {&j, t->L.keys[k], tile, src_transport};
        st = trn_comm_agree(comm, st, err);
        if (!st)
            st = trn_drainage_tiles_breach_split(dt, comm, split_heights, &j, split_breach_emit,
                                                 &bp, err);
    }
    free(buf);
    trn_drainage_tiles_free(dt);
    if (cone_ok) cone_dispose(&j.c);
    /* Every tile is in the shared cache before anyone reads one. */
    st = trn_comm_agree(comm, st, err);
    trn_node_result *sh = st ? NULL : result_on(t, all, t->L.keys[k]);
    if (!st && !sh) st = oom(err);
    if (!st) {
        sh->output_count = ty->output_count;
        for (uint32_t p = 0; p < ty->output_count; p++)
            sh->outputs[p].kind = ty->outputs[p].kind;
        if (kind == SPLIT_DRAINAGE) {
            sh->outputs[0].sea_level = g.sea_level;
            if (own_mask && !(sh->outputs[1].values = trn_gbuf_new(0, sizeof(float))))
                st = oom(err);
        } else {
            if (src_transport) t->stored_transport[k] |= 1u;
            if (!(sh->outputs[0].values = trn_gbuf_new(0, sizeof(float)))) st = oom(err);
        }
    }
    if (st) {
        trn_node_result_release(sh);
        return st;
    }
    t->shell[k] = sh;
    t->in_shared[k] = 1;
    uint64_t sent1 = 0, received1 = 0;
    trn_comm_traffic(comm, &sent1, &received1);
    trn_tile_split *sp = t->split;
    sp->nodes++;
    if (kind == SPLIT_BREACH) sp->breaches++;
    sp->stats.tiles += ts.tiles;
    sp->stats.tiles_owned += ts.tiles_owned;
    sp->stats.spill_nodes += ts.spill_nodes;
    sp->stats.spill_edges += ts.spill_edges;
    sp->stats.flat_rounds += ts.flat_rounds;
    sp->stats.flow_links += ts.flow_links;
    sp->stats.bytes_sent += sent1 - sent0;
    sp->stats.bytes_received += received1 - received0;
    return TRN_OK;
}

/* Every global node upstream of the sink, in dependency order, on the whole grid. */
static trn_status run_globals(tiler *t, int sink, uint32_t size, trn_error *err)
{
    uint8_t *up = calloc(t->L.n ? t->L.n : 1u, 1);
    trn_node_result **assembled = calloc(t->L.n ? t->L.n : 1u, sizeof *assembled);
    if (!up || !assembled) {
        free(up);
        free(assembled);
        return oom(err);
    }
    up[sink] = 1;
    for (uint32_t q = t->L.order_count; q-- > 0;) {
        const int k = t->L.order[q];
        if (!up[k]) continue;
        const trn_node_type *ty = trn_node_type_find(t->g->nodes[k].type);
        for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            /* A tile node never reads water, drainage or instances (they are not needed). */
            if (s >= 0 && (float_kind(ty->inputs[i].kind) || !tiled_kind(t->reach[k].kind)))
                up[s] = 1;
        }
    }
    /* The last order position at which each global result is read (UINT32_MAX: by the final
     * tiles), so whole grids are dropped as soon as nothing later reads them. */
    uint32_t *last = calloc(t->L.n ? t->L.n : 1u, sizeof *last);
    uint8_t *seen = calloc(t->L.n ? t->L.n : 1u, 1);
    int *stack = malloc((t->L.n ? t->L.n : 1u) * sizeof *stack);
    if (!last || !seen || !stack) {
        free(last);
        free(seen);
        free(stack);
        free(up);
        free(assembled);
        return oom(err);
    }
    for (uint32_t q = 0; q < t->L.order_count; q++) {
        const int k = t->L.order[q];
        const bool final = k == sink;
        if (!up[k] || (!final && tiled_kind(t->reach[k].kind))) continue;
        /* What node k reads (its tile cone when it is the tiled sink): globals directly or
         * through tile nodes. */
        memset(seen, 0, t->L.n);
        uint32_t depth = 0;
        stack[depth++] = k;
        seen[k] = 1;
        while (depth) {
            const int v = stack[--depth];
            const trn_node_type *ty = trn_node_type_find(t->g->nodes[v].type);
            for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
                const int s = t->L.src[(size_t)v * TRN_GRAPH_MAX_INPUTS + i];
                if (s < 0 || seen[s]) continue;
                if (tiled_kind(t->reach[v].kind) && !float_kind(ty->inputs[i].kind)) continue;
                seen[s] = 1;
                if (tiled_kind(t->reach[s].kind))
                    stack[depth++] = s;
                else
                    last[s] = final ? UINT32_MAX : (q > last[s] ? q : last[s]);
            }
        }
        if (final && !tiled_kind(t->reach[k].kind)) last[k] = UINT32_MAX;
    }
    free(seen);
    free(stack);
    uint32_t globals = 0;
    for (uint32_t q = 0; q < t->L.order_count; q++) {
        const int k = t->L.order[q];
        if (up[k] && t->reach[k].kind == TRN_REACH_GLOBAL) globals++;
    }
    /* Global nodes hold the whole grid, and their solvers index it with 32-bit integers; one
     * split across processes holds its tiles only (results kept in the shared tile cache), its
     * solver indexing samples across tiles in 64 bits. */
    const uint64_t samples = (uint64_t)t->sx * t->sz;
    for (uint32_t q = 0; q < t->L.order_count && globals && samples > TRN_RCP_MAX_GLOBAL_SAMPLES;
         q++) {
        const int k = t->L.order[q];
        if (!up[k] || t->reach[k].kind != TRN_REACH_GLOBAL || split_of(t, k) != SPLIT_NONE)
            continue;
        free(last);
        free(up);
        free(assembled);
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "node '%.60s' (%.32s) works on the whole grid, which may hold at "
                             "most %llu samples (46340 x 46340); this grid has %u x %u = %llu: "
                             "generate it at a lower resolution, or with only tiled nodes",
                             t->g->nodes[k].id, t->g->nodes[k].type,
                             (unsigned long long)TRN_RCP_MAX_GLOBAL_SAMPLES, t->sx, t->sz,
                             (unsigned long long)samples);
    }
    t->up = up;
    t->units = (double)(globals + 1u) * t->tiles;
    /* With a tile cache: the last position at which a global node reads each global result
     * whole (0: never), so it leaves memory for the cache right after. */
    if (t->store)
        for (uint32_t q = 0; q < t->L.order_count; q++) {
            const int k = t->L.order[q];
            /* An erosion run by rows reads its field from the cache, not whole. */
            if (!up[k] || tiled_kind(t->reach[k].kind) || by_rows(t, k) || drain_in_tiles(t, k) ||
                split_of(t, k) != SPLIT_NONE)
                continue;
            const trn_node_type *ty = trn_node_type_find(t->g->nodes[k].type);
            for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
                const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
                if (s >= 0 && !tiled_kind(t->reach[s].kind)) t->direct_last[s] = q;
            }
        }
    const twin all = {0, 0, t->sx, t->sz};
    trn_status st = TRN_OK;
    for (uint32_t q = 0; q < t->L.order_count; q++) {
        const int k = t->L.order[q];
        if (!up[k] || tiled_kind(t->reach[k].kind) || t->reach[k].kind == TRN_REACH_NONE) continue;
        const split_kind sk = split_of(t, k);
        if (st) {
            /* After a failure here, still meet the other processes where a split node would
             * (they learn of it there and stop). */
            if (sk == SPLIT_DRAINAGE || sk == SPLIT_FILL || sk == SPLIT_BREACH)
                (void)trn_comm_agree(t->split->comm, st, NULL);
            continue;
        }
        const trn_node_type *ty = trn_node_type_find(t->g->nodes[k].type);
        if (!t->split || t->split->whole_for[0] || sk != SPLIT_NONE ||
            strcmp(t->g->nodes[k].type, "drainage") != 0 || !t->shared) {
        } else {
            const int v = drainage_whole_reader(t, k);
            if (v >= 0)
                snprintf(t->split->whole_for, sizeof t->split->whole_for, "node '%.60s' (%.32s)",
                         t->g->nodes[v].id, t->g->nodes[v].type);
        }
        for (uint32_t i = 0;
             i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS && !st && sk == SPLIT_NONE; i++) {
            const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            if (s >= 0 && tiled_kind(t->reach[s].kind) && !assembled[s])
                st = assemble(t, s, size, &assembled[s], err);
        }
        global_inputs gi = {t, assembled};
        node_bridge nb;
        nb.t = t;
        nb.id = t->g->nodes[k].id;
        nb.stage[0] = '\0';
        nb.lo = t->units > 0.0 ? t->done / t->units : 0.0;
        nb.hi = t->units > 0.0 ? (t->done + t->tiles) / t->units : 0.0;
        trn_progress sub = trn_progress_make(node_bridge_fn, &nb);
        if (!st && sk != SPLIT_NONE) {
            st = split_solve(t, k, sk, node_bridge_fn, &nb, err);
        } else if (!st && by_rows(t, k)) {
            st = erosion_rows(t, k, &sub, err);
        } else if (!st && drain_in_tiles(t, k)) {
            st = drain_tiles(t, k, node_bridge_fn, &nb, err);
        } else {
            /* A global input that left memory (one run by rows never held it) comes back. */
            for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS && !st; i++) {
                const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
                if (s >= 0 && !tiled_kind(t->reach[s].kind) && !t->whole[s] && t->shell &&
                    t->shell[s]) {
                    /* A split result read whole: every process reads it from the shared cache
                     * (the run says for which node). */
                    if (t->in_shared && t->in_shared[s] && !by_rows(t, s) && !by_bands(t, s) &&
                        !t->split->whole_for[0])
                        snprintf(t->split->whole_for, sizeof t->split->whole_for,
                                 "node '%.60s' (%.32s)", t->g->nodes[k].id, t->g->nodes[k].type);
                    st = reload(t, s, err);
                }
            }
            if (by_bands(t, k)) {
                /* The processes meet in put_band whatever failed here. */
                if (!st)
                    st = compute_on(t, k, all, NULL, global_input, &gi, &sub, &t->whole[k], err);
                st = put_band(t, k, st, err);
            } else {
                if (!st)
                    st = compute_on(t, k, all, NULL, global_input, &gi, &sub, &t->whole[k], err);
                if (!st && t->store) st = spill(t, k, err);
            }
        }
        if (!st && advance(t, t->tiles, ty->name)) st = cancelled(err);
        /* Assembled inputs serve this node only (another reader assembles them again). */
        for (uint32_t i = 0; i < ty->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const int s = t->L.src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            if (s >= 0 && assembled[s]) {
                trn_node_result_release(assembled[s]);
                assembled[s] = NULL;
            }
        }
        /* Dropped after the last reader; with a tile cache, after the last global node that
         * reads it whole (tiles read it from the cache). */
        for (uint32_t v = 0; v < t->L.n; v++)
            if (t->whole[v] &&
                (last[v] == q || (t->shell && t->shell[v] && t->direct_last[v] <= q))) {
                trn_node_result_release(t->whole[v]);
                t->whole[v] = NULL;
            }
    }
    for (uint32_t k = 0; k < t->L.n; k++)
        trn_node_result_release(assembled[k]);
    free(assembled);
    free(last);
    t->up = NULL;
    free(up);
    return st;
}

/* ---- the public entry ---- */

typedef struct pin_sink {
    uint32_t out;
    trn_graph_tile_sink sink;
    void *user;
} pin_sink;

static trn_status deliver(void *user, twin tile, const trn_node_result *r, trn_error *err)
{
    const pin_sink *p = user;
    const trn_gbuf *v = r->outputs[p->out].values;
    return p->sink(p->user, tile.x0, tile.z0, tile.nx, tile.nz, v ? v->data : NULL, err);
}

trn_status trn_graph_evaluate_tiles(const trn_graph *graph, const trn_recipe *recipe,
                                    const trn_graph_options *options,
                                    const trn_graph_tile_options *tiles, trn_graph_tile_sink sink,
                                    void *user, trn_progress_fn progress, void *progress_user,
                                    trn_error *err)
{
    return trn_graph_evaluate_tiles_with(graph, recipe, options, tiles, trn_tile_solve_whole, sink,
                                         user, progress, progress_user, err);
}

trn_status trn_graph_evaluate_tiles_with(const trn_graph *graph, const trn_recipe *recipe,
                                         const trn_graph_options *options,
                                         const trn_graph_tile_options *tiles,
                                         trn_global_solver solve, trn_graph_tile_sink sink,
                                         void *user, trn_progress_fn progress, void *progress_user,
                                         trn_error *err)
{
    return trn_graph_evaluate_tiles_split(graph, recipe, options, tiles, solve, NULL, sink, user,
                                          progress, progress_user, err);
}

trn_status trn_graph_evaluate_tiles_split(const trn_graph *graph, const trn_recipe *recipe,
                                          const trn_graph_options *options,
                                          const trn_graph_tile_options *tiles,
                                          trn_global_solver solve, trn_tile_split *split,
                                          trn_graph_tile_sink sink, void *user,
                                          trn_progress_fn progress, void *progress_user,
                                          trn_error *err)
{
    if (!tiles || tiles->tile < 1 || !sink)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled evaluation: a tile of at least 1 sample and a sink are "
                             "required");
    if (options && options->threads < 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "graph: threads must be 0 (default) or positive, not %d",
                             options->threads);
    tiler t;
    memset(&t, 0, sizeof t);
    t.g = graph;
    t.recipe = recipe;
    t.o = options;
    t.solve = solve ? solve : trn_tile_solve_whole;
    t.rows = split;
    t.tile = tiles->tile;
    t.cache_dir = tiles->cache_dir;
    t.pr = trn_progress_make(progress, progress_user);
    trn_status st = trn_graph_links_make(graph, recipe, options, false, &t.L, err);
    if (st) return st;
    t.sx = recipe->cells_x + 1u;
    t.sz = recipe->cells_z + 1u;
    const uint32_t size = tiles->tile;
    t.tx1 = (uint32_t)(((uint64_t)t.sx + size - 1u) / size);
    t.tz1 = (uint32_t)(((uint64_t)t.sz + size - 1u) / size);
    if (tiles->samples_x && tiles->samples_z) {
        if ((uint64_t)tiles->x0 + tiles->samples_x > t.sx ||
            (uint64_t)tiles->z0 + tiles->samples_z > t.sz) {
            trn_graph_links_dispose(&t.L);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "tiled evaluation: the window of %u x %u samples at (%u, %u) "
                                 "reaches past the %u x %u-sample grid",
                                 tiles->samples_x, tiles->samples_z, tiles->x0, tiles->z0, t.sx,
                                 t.sz);
        }
        t.tx0 = tiles->x0 / size;
        t.tz0 = tiles->z0 / size;
        t.tx1 = (uint32_t)(((uint64_t)tiles->x0 + tiles->samples_x + size - 1u) / size);
        t.tz1 = (uint32_t)(((uint64_t)tiles->z0 + tiles->samples_z + size - 1u) / size);
    }
    t.tiles = (double)(t.tx1 - t.tx0) * (double)(t.tz1 - t.tz0);
    t.units = t.tiles;
    t.reach = calloc(t.L.n ? t.L.n : 1u, sizeof *t.reach);
    t.whole = calloc(t.L.n ? t.L.n : 1u, sizeof *t.whole);
    t.keep = calloc(t.L.n ? t.L.n : 1u, sizeof *t.keep);
    if (!t.reach || !t.whole || !t.keep) st = oom(err);
    if (!st && tiles->cache_dir) {
        t.shell = calloc(t.L.n ? t.L.n : 1u, sizeof *t.shell);
        t.direct_last = calloc(t.L.n ? t.L.n : 1u, sizeof *t.direct_last);
        t.stored_transport = calloc(t.L.n ? t.L.n : 1u, 1);
        if (!t.shell || !t.direct_last || !t.stored_transport) st = oom(err);
        /* Cache tiles of at least 64 samples: small evaluator tiles would make a file of a
         * few bytes each (a window reads whichever cache tiles it meets). */
        const uint32_t stored = size < TILE_STORE_MIN ? TILE_STORE_MIN : size;
        t.stored = stored;
        if (!st) st = trn_tile_store_open(tiles->cache_dir, t.sx, t.sz, stored, &t.store, err);
        /* Split nodes' tiles go to the shared folder, in tiles of the same size. */
        if (!st && split && split->comm && split->shared_dir) {
            t.split = split;
            if (!(t.in_shared = calloc(t.L.n ? t.L.n : 1u, 1))) st = oom(err);
            if (!st)
                st = trn_tile_store_open_in(split->shared_dir, t.sx, t.sz, stored, &t.shared, err);
            /* Bands of whole cache tile rows (a last row of one sample goes with the row before
             * it, as the store keeps it), R * k / P of the R rows to process k. */
            const int P = trn_comm_size(split->comm);
            if (!st && !(t.bands = malloc(((size_t)P + 1u) * sizeof *t.bands))) st = oom(err);
            if (!st) {
                const uint64_t R = t.sz > 1u ? ((uint64_t)t.sz - 2u) / stored + 1u : 1u;
                for (int q = 0; q < P; q++)
                    t.bands[q] = (uint32_t)(stored * (R * (uint64_t)q / (uint64_t)P));
                t.bands[P] = t.sz;
            }
        }
    }
    for (uint32_t k = 0; k < t.L.n && !st; k++)
        if (!trn_graph_node_reach(&graph->nodes[k], recipe, &t.reach[k]))
            st = trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                               "node '%.60s' (%.32s) declares no reach", graph->nodes[k].id,
                               graph->nodes[k].type);
    int sink_node = t.L.output;
    uint32_t out_pin = 0;
    if (!st && tiles->node_id) {
        sink_node = -1;
        for (uint32_t q = 0; q < t.L.order_count; q++)
            if (strcmp(graph->nodes[t.L.order[q]].id, tiles->node_id) == 0)
                sink_node = t.L.order[q];
        if (sink_node < 0)
            st = trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                               "graph: node '%.60s' is not evaluated for the output",
                               tiles->node_id);
    }
    if (!st) {
        const trn_node_type *ty = trn_node_type_find(graph->nodes[sink_node].type);
        if (tiles->pin && !trn_node_type_output(ty, tiles->pin, &out_pin))
            st = trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                               "graph: node '%.60s' (%s) has no output '%.40s'",
                               graph->nodes[sink_node].id, ty->name, tiles->pin);
        else if (ty->output_count && !float_kind(ty->outputs[out_pin].kind))
            st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                               "tiled evaluation: output '%s' of node '%.60s' is %s; tiles carry "
                               "heightfields and masks",
                               ty->outputs[out_pin].name, graph->nodes[sink_node].id,
                               trn_pin_kind_name(ty->outputs[out_pin].kind));
    }
    t.threads = options && options->threads > 0 ? options->threads : 1;
#ifdef _OPENMP
    const int saved_threads = omp_get_max_threads();
    if (!(options && options->threads > 0)) t.threads = saved_threads;
    omp_set_num_threads(t.threads);
#endif
    t.sink = sink_node;
    t.sink_pin = out_pin;
    if (!st) st = run_globals(&t, sink_node, tiles->tile, err);
    pin_sink ps = {out_pin, sink, user};
    if (!st) st = each_tile(&t, sink_node, tiles->tile, true, deliver, &ps, err);
    /* Other processes may still read this one's tiles of the shared cache: they are removed
     * once every process is done. */
    if (t.shared) st = trn_comm_agree(split->comm, st, err);
#ifdef _OPENMP
    omp_set_num_threads(saved_threads);
#endif
    for (uint32_t k = 0; t.whole && k < t.L.n; k++)
        trn_node_result_release(t.whole[k]);
    for (uint32_t k = 0; t.shell && k < t.L.n; k++)
        trn_node_result_release(t.shell[k]);
    trn_tile_store_close(t.store);
    trn_tile_store_close(t.shared);
    free(t.in_shared);
    free(t.shell);
    free(t.direct_last);
    free(t.stored_transport);
    free(t.whole);
    for (uint32_t k = 0; t.keep && k < t.L.n; k++)
        if (t.keep[k].dispose) t.keep[k].dispose(t.keep[k].data);
    free(t.keep);
    free(t.bands);
    free(t.reach);
    trn_graph_links_dispose(&t.L);
    return st;
}

trn_status trn_graph_tiles_memory(const trn_graph *graph, const trn_recipe *recipe,
                                  const trn_graph_options *options, uint32_t tile, uint64_t *bytes,
                                  int *first_global, trn_error *err)
{
    *bytes = 0;
    if (first_global) *first_global = -1;
    if (tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tiled evaluation: a tile of at least 1 sample is required");
    tiler t;
    memset(&t, 0, sizeof t);
    t.g = graph;
    t.recipe = recipe;
    t.o = options;
    trn_status st = trn_graph_links_make(graph, recipe, options, false, &t.L, err);
    if (st) return st;
    t.sx = recipe->cells_x + 1u;
    t.sz = recipe->cells_z + 1u;
    t.reach = calloc(t.L.n ? t.L.n : 1u, sizeof *t.reach);
    cone c;
    memset(&c, 0, sizeof c);
    if (!t.reach) st = oom(err);
    for (uint32_t k = 0; k < t.L.n && !st; k++)
        trn_graph_node_reach(&graph->nodes[k], recipe, &t.reach[k]);
    if (!st) st = cone_make(&t, t.L.output, &c, err);
    const uint64_t whole = (uint64_t)t.sx * t.sz * sizeof(float);
    uint64_t total = 0, transient = 0, global_peak = 0;
    for (uint32_t q = 0; q < t.L.order_count && !st; q++) {
        const int k = t.L.order[q];
        const trn_node_type *ty = trn_node_type_find(graph->nodes[k].type);
        if (tiled_kind(t.reach[k].kind)) {
            if (c.need[k] < 0) continue;
            uint64_t side = (uint64_t)tile + 2u * ((uint64_t)c.need[k] + t.reach[k].halo);
            const uint64_t wx = side < t.sx ? side : t.sx, wz = side < t.sz ? side : t.sz;
            /* Each output's values, kept for the tile; the largest window once more for the
             * copies cut from it (transient). */
            const uint64_t w = wx * wz * sizeof(float);
            total += w * (ty->output_count ? ty->output_count : 1u);
            /* What it keeps for every tile (a DEM's decoded file), for the whole run. */
            total += trn_node_kept_bytes(&graph->nodes[k], ty, recipe);
            if (2u * w > transient) transient = 2u * w;
        } else if (t.reach[k].kind == TRN_REACH_GLOBAL) {
            if (first_global && *first_global < 0) *first_global = k;
            /* Its whole-grid outputs (values and transport) and its inputs, while it runs:
             * the largest such node sets the peak (results are dropped after their last
             * reader). With the disk tile cache: an erosion run by rows holds bands of rows; a
             * stream power whose fine steps run in tiles its input, the amplified surface and the
             * drainage area (docs/scale.md). */
            const trn_erosion_quality qual = options ? options->quality : TRN_EROSION_FINAL;
            const uint32_t chunk = tile < TILE_STORE_MIN ? TILE_STORE_MIN : tile;
            uint64_t g =
                by_rows_cached(&t, k, true)
                    ? trn_node_erosion_rows_bytes(&graph->nodes[k], ty, recipe, qual, chunk)
                : trn_node_evolve_fine_in_tiles(&graph->nodes[k], ty, recipe, qual)
                    ? whole * 3u
                : drain_in_tiles_cached(&t, k, true)
                    /* the tiled drainage's 9 bytes a sample, a band of rows and its transport */
                    ? whole * 9u / 4u + 4u * (uint64_t)(chunk + 1u) * t.sx * sizeof(float)
                    : whole * 2u * ((ty->output_count ? ty->output_count : 1u) + ty->input_count);
            /* A coarsened evolution's hand-over to the output grid, with its inputs, may hold
             * more than its steps do (measured: the Mountain Range's peak at 2049^2 and
             * 4097^2). */
            const uint64_t handover = trn_node_evolve_handover_bytes(&graph->nodes[k], ty, recipe,
                                                                     qual);
            if (handover && handover + whole * ty->input_count > g)
                g = handover + whole * ty->input_count;
            /* A Drain Depressions on the whole grid (its field a tile node's): its input and
             * what it holds beside it, a breach's sort keys for every sample at most (measured:
             * a noise field's breach at 4097^2 peaked above the default's count). */
            const uint64_t drain =
                drain_in_tiles_cached(&t, k, true)
                    ? 0u
                    : trn_node_drain_whole_bytes(&graph->nodes[k], ty, (uint64_t)t.sx * t.sz);
            if (drain && drain + whole * ty->input_count > g) g = drain + whole * ty->input_count;
            if (g > global_peak) global_peak = g;
        }
    }
    cone_dispose(&c);
    free(t.reach);
    trn_graph_links_dispose(&t.L);
    *bytes = total + transient + global_peak;
    return st;
}
