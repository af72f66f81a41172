/* Graph evaluation: dependency order, per-node cache keys, the result cache, run reports. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/fileio.h"
#include "graph/cache_dir.h"
#include "graph/graph_internal.h"
#include "graph/nodes/node_common.h"
#include "recipe/recipe_internal.h"
#include "terrane/scatter.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- the cache ---- */

typedef struct centry {
    uint64_t key;
    trn_node_result *r;
    uint64_t used; /* tick of the last use */
} centry;

struct trn_graph_cache {
    char *dir;
    uint64_t disk_limit; /* bytes of result files kept in dir (0: no limit) */
    size_t limit, bytes;
    centry *items;
    size_t count, cap;
    uint64_t tick;
    trn_cache_file_limits limits;
};

trn_status trn_graph_cache_new(const char *dir, size_t memory_limit, trn_graph_cache **out,
                               trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_cache_new: out is required");
    *out = NULL;
    trn_graph_cache *c = calloc(1, sizeof *c);
    if (!c) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a cache");
    c->limit = memory_limit ? memory_limit : (size_t)1 << 30;
    trn_cache_file_limits_default(&c->limits);
    if (dir) {
        const size_t n = strlen(dir) + 1;
        if (!(c->dir = malloc(n))) {
            free(c);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a cache");
        }
        memcpy(c->dir, dir, n);
        trn_status st = trn_mkdir_p(dir, err);
        if (st) {
            free(c->dir);
            free(c);
            return st;
        }
    }
    *out = c;
    return TRN_OK;
}

void trn_graph_cache_set_disk_limit(trn_graph_cache *cache, uint64_t bytes)
{
    if (!cache) return;
    cache->disk_limit = bytes;
    if (cache->dir && bytes) trn_cache_dir_trim(cache->dir, bytes, NULL);
}

void trn_graph_cache_free(trn_graph_cache *cache)
{
    if (!cache) return;
    for (size_t k = 0; k < cache->count; k++)
        trn_node_result_release(cache->items[k].r);
    free(cache->items);
    free(cache->dir);
    free(cache);
}

static trn_node_result *cache_get(trn_graph_cache *c, uint64_t key)
{
    for (size_t k = 0; c && k < c->count; k++)
        if (c->items[k].key == key) {
            c->items[k].used = ++c->tick;
            return trn_node_result_retain(c->items[k].r);
        }
    return NULL;
}

/* Keep r (a new reference); drop the least recently used beyond the limit, never r itself. */
static void cache_put(trn_graph_cache *c, trn_node_result *r)
{
    if (!c) return;
    for (size_t k = 0; k < c->count; k++)
        if (c->items[k].key == r->key) return;
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        centry *items = realloc(c->items, cap * sizeof *items);
        if (!items) return; /* a cache that cannot grow just keeps less */
        c->items = items;
        c->cap = cap;
    }
    c->items[c->count].key = r->key;
    c->items[c->count].r = trn_node_result_retain(r);
    c->items[c->count].used = ++c->tick;
    c->count++;
    c->bytes += r->bytes;
    while (c->bytes > c->limit && c->count > 1) {
        size_t victim = c->count;
        for (size_t k = 0; k < c->count; k++)
            if (c->items[k].r != r &&
                (victim == c->count || c->items[k].used < c->items[victim].used))
                victim = k;
        if (victim == c->count) break;
        c->bytes -= c->items[victim].r->bytes;
        trn_node_result_release(c->items[victim].r);
        c->items[victim] = c->items[--c->count];
    }
}

bool trn_graph_cache_has(trn_graph_cache *cache, uint64_t key, double *cpu_seconds)
{
    if (cpu_seconds) *cpu_seconds = 0.0;
    if (!cache) return false;
    for (size_t k = 0; k < cache->count; k++)
        if (cache->items[k].key == key) {
            if (cpu_seconds) *cpu_seconds = cache->items[k].r->cpu_seconds;
            return true;
        }
    if (!cache->dir) return false;
    return trn_node_result_peek_file(cache->dir, key, &cache->limits, cpu_seconds, NULL) == TRN_OK;
}

/* ---- order and keys ---- */

typedef struct plan {
    uint32_t n;
    int *src;     /* n * TRN_GRAPH_MAX_INPUTS: source node per input pin of the type */
    int *src_out; /* its output index */
    int *order;   /* reachable nodes, dependencies first */
    uint32_t order_count;
    uint64_t *keys;
    uint8_t *tainted; /* preview-only results (never written to the directory) */
    int output;
} plan;

static void plan_dispose(plan *p)
{
    free(p->src);
    free(p->src_out);
    free(p->order);
    free(p->keys);
    free(p->tainted);
    memset(p, 0, sizeof *p);
}

static trn_status validation_error(const trn_graph_diagnostics *d, trn_error *err)
{
    for (size_t k = 0; k < d->count; k++) {
        const trn_graph_diagnostic *x = &d->items[k];
        if (x->severity != TRN_GRAPH_ERROR) continue;
        size_t errors = trn_graph_diagnostics_errors(d);
        if (errors > 1)
            trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1, "graph.%s: %s (and %zu more error%s)",
                          x->path, x->message, errors - 1, errors > 2 ? "s" : "");
        else
            trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1, "graph.%s: %s", x->path, x->message);
        if (err) {
            snprintf(err->node_id, sizeof err->node_id, "%s", x->node_id);
            /* "nodes[3].params.level" -> "params.level": where in the node it is. */
            const char *inner = strncmp(x->path, "nodes[", 6) == 0 ? strstr(x->path, "].") : NULL;
            if (inner) snprintf(err->node_path, sizeof err->node_path, "%s", inner + 2);
        }
        return TRN_ERR_VALIDATION;
    }
    return TRN_OK;
}

/* Post-order from the output over the links (its own stack: chains can be long). */
static bool order_from(plan *p, int root)
{
    uint8_t *seen = calloc(p->n ? p->n : 1u, 1);
    uint32_t *next = malloc((p->n ? p->n : 1u) * sizeof *next);
    int *path = malloc((p->n ? p->n : 1u) * sizeof *path);
    if (!seen || !next || !path) {
        free(seen);
        free(next);
        free(path);
        return false;
    }
    uint32_t depth = 0;
    path[depth] = root;
    next[depth++] = 0;
    seen[root] = 1;
    while (depth) {
        const int v = path[depth - 1u];
        if (next[depth - 1u] == TRN_GRAPH_MAX_INPUTS) {
            p->order[p->order_count++] = v;
            depth--;
            continue;
        }
        const int s = p->src[(size_t)v * TRN_GRAPH_MAX_INPUTS + next[depth - 1u]++];
        if (s >= 0 && !seen[s]) {
            seen[s] = 1;
            path[depth] = s;
            next[depth++] = 0;
        }
    }
    free(seen);
    free(next);
    free(path);
    return true;
}

static trn_status make_plan(const trn_graph *g, const trn_recipe *recipe,
                            trn_erosion_quality quality, const trn_palette *palette, plan *p,
                            trn_error *err)
{
    memset(p, 0, sizeof *p);
    if (!g || !recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "graph evaluation: graph and recipe are required");
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    trn_status st = trn_graph_check(g, recipe, &d, err);
    if (!st) st = validation_error(&d, err);
    trn_graph_diagnostics_dispose(&d);
    if (st) return st;
    const uint32_t n = g->node_count;
    p->n = n;
    p->src = malloc((size_t)n * TRN_GRAPH_MAX_INPUTS * sizeof *p->src);
    p->src_out = malloc((size_t)n * TRN_GRAPH_MAX_INPUTS * sizeof *p->src_out);
    p->order = malloc(n * sizeof *p->order);
    p->keys = calloc(n, sizeof *p->keys);
    p->tainted = calloc(n, 1);
    trn_graph_index index;
    const bool indexed = trn_graph_index_build(g, false, &index);
    if (!p->src || !p->src_out || !p->order || !p->keys || !p->tainted || !indexed) {
        trn_graph_index_dispose(&index);
        plan_dispose(p);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory planning a graph");
    }
    for (size_t k = 0; k < (size_t)n * TRN_GRAPH_MAX_INPUTS; k++)
        p->src[k] = p->src_out[k] = -1;
    /* The check passed: every link names an existing node and an output of the right kind. */
    for (uint32_t k = 0; k < n; k++) {
        const trn_graph_node *node = &g->nodes[k];
        const trn_node_type *t = trn_node_type_find(node->type);
        for (uint32_t i = 0; i < t->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const trn_graph_link *l = trn_graph_node_input(node, t->inputs[i].name);
            if (!l) continue;
            const int s = trn_graph_index_find(&index, l->node);
            const trn_node_type *st_ = trn_node_type_find(g->nodes[s].type);
            uint32_t oi = 0;
            if (l->output) trn_node_type_output(st_, l->output, &oi);
            p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i] = s;
            p->src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + i] = (int)oi;
        }
    }
    p->output = trn_graph_index_find(&index, g->output);
    trn_graph_index_dispose(&index);
    if (!order_from(p, p->output)) {
        plan_dispose(p);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory planning a graph");
    }
    for (uint32_t o = 0; o < p->order_count; o++) {
        const int k = p->order[o];
        const trn_graph_node *node = &g->nodes[k];
        const trn_node_type *t = trn_node_type_find(node->type);
        XXH64_state_t *h = XXH64_createState();
        if (!h) {
            plan_dispose(p);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a key");
        }
        XXH64_reset(h, 0);
        /* What makes a result: the type and its version, the generator, the grid, the
         * parameters as evaluated, and each input's key by pin. Never positions or comments. */
        XXH64_update(h, "terrane-node", 12);
        XXH64_update(h, t->name, strlen(t->name) + 1);
        const uint32_t versions[2] = {t->version, TRN_GENERATOR_VERSION};
        XXH64_update(h, versions, sizeof versions);
        const uint32_t cells[2] = {recipe->cells_x, recipe->cells_z};
        const double size[2] = {recipe->size_x, recipe->size_z};
        XXH64_update(h, cells, sizeof cells);
        XXH64_update(h, size, sizeof size);
        trn_node_key_params(h, node, t, recipe, quality);
        if (trn_node_reads_palette(t)) {
            /* The palette's content, never its file: an edit to it re-places this branch. */
            const uint64_t digest[2] = {palette ? 1u : 0u,
                                        palette ? trn_palette_digest(palette) : 0u};
            XXH64_update(h, digest, sizeof digest);
        }
        bool tainted = quality == TRN_EROSION_PREVIEW &&
                       (t->quality_dependent || (t == &trn_node_landform.type &&
                                                 trn_node_landform_evolves(node, t, recipe)));
        for (uint32_t i = 0; i < t->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const int s = p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            const uint64_t in[2] = {
                s >= 0 ? p->keys[s] : 0u,
                (uint64_t)(int64_t)p->src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + i]};
            XXH64_update(h, t->inputs[i].name, strlen(t->inputs[i].name) + 1);
            XXH64_update(h, in, sizeof in);
            if (s >= 0 && p->tainted[s]) tainted = true;
        }
        uint64_t key = XXH64_digest(h);
        XXH64_freeState(h);
        p->keys[k] = key ? key : 1u; /* 0 means "no key" in reports */
        p->tainted[k] = tainted;
    }
    return TRN_OK;
}

trn_status trn_graph_keys(const trn_graph *graph, const trn_recipe *recipe,
                          trn_erosion_quality quality, uint64_t *keys, trn_error *err)
{
    plan p;
    trn_status st = make_plan(graph, recipe, quality, NULL, &p, err);
    if (st) return st;
    memcpy(keys, p.keys, graph->node_count * sizeof *keys);
    plan_dispose(&p);
    return TRN_OK;
}

trn_status trn_graph_keys_for(const trn_graph *graph, const trn_recipe *recipe,
                              const trn_graph_options *options, uint64_t *keys, trn_error *err)
{
    plan p;
    trn_status st = make_plan(graph, recipe, options ? options->quality : TRN_EROSION_FINAL,
                              options ? options->palette : NULL, &p, err);
    if (st) return st;
    memcpy(keys, p.keys, graph->node_count * sizeof *keys);
    plan_dispose(&p);
    return TRN_OK;
}

/* ---- work budgets ---- */

/* "1.5 GiB": bytes in binary units, one decimal. */
static void format_bytes(uint64_t bytes, char *out, size_t size)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = (double)bytes;
    unsigned u = 0;
    while (v >= 1024.0 && u + 1u < sizeof unit / sizeof unit[0]) {
        v /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(out, size, "%" PRIu64 " bytes", bytes);
    else
        snprintf(out, size, "%.1f %s", v, unit[u]);
}

static uint64_t budget_of(uint64_t max_work)
{
    return max_work ? max_work : TRN_WORK_BUDGET_DEFAULT;
}

/* The CPU seconds the whole graph may take: TRN_WORK_GRAPH_FACTOR node budgets at
 * TRN_WORK_UNIT_NS a unit (300 s of one core by default: a few minutes on a desktop). */
static double graph_seconds_of(uint64_t budget)
{
    return (double)budget * (double)TRN_WORK_GRAPH_FACTOR * TRN_WORK_UNIT_NS * 1e-9;
}

/* Every planned node's work and memory, in plan order so that each water node knows the water
 * it receives; indexed by node (zero for nodes off the plan). NULL when out of memory. */
static trn_node_work_info *plan_works(const trn_graph *g, const trn_recipe *recipe, const plan *p,
                                      trn_erosion_quality quality)
{
    trn_node_work_info *w = calloc(g->node_count ? g->node_count : 1u, sizeof *w);
    if (!w) return NULL;
    for (uint32_t q = 0; q < p->order_count; q++) {
        const uint32_t k = (uint32_t)p->order[q];
        const trn_node_type *t = trn_node_type_find(g->nodes[k].type);
        const trn_water_load *in = NULL;
        for (uint32_t i = 0; t && i < t->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
            const int s = p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
            if (t->inputs[i].kind == TRN_PIN_WATER && s >= 0) in = &w[s].water_out;
        }
        trn_node_work(&g->nodes[k], t, recipe, quality, in, &w[k]);
    }
    return w;
}

/* The planned nodes' estimated CPU seconds and memory together, and the costliest node. */
static double graph_total(const plan *p, const trn_node_work_info *w, uint32_t *worst,
                          double *worst_seconds, uint64_t *memory)
{
    double total = 0.0;
    uint64_t bytes = 0;
    *worst = 0;
    *worst_seconds = 0.0;
    for (uint32_t q = 0; q < p->order_count; q++) {
        const uint32_t k = (uint32_t)p->order[q];
        const double sec = w[k].seconds;
        if (sec > *worst_seconds || q == 0) {
            *worst = k;
            *worst_seconds = sec;
        }
        total += sec;
        bytes = bytes > UINT64_MAX - w[k].memory ? UINT64_MAX : bytes + w[k].memory;
    }
    if (memory) *memory = bytes;
    return total;
}

static void graph_work_message(const trn_graph *g, const plan *p, double total, uint64_t budget,
                               uint32_t worst, double worst_seconds, char *msg, size_t size)
{
    snprintf(msg, size,
             "the graph's %" PRIu32 " evaluated nodes together would take about %.3g s of one "
             "core's CPU time, more than the %.3g s the work budget allows a whole graph (%u "
             "budgets of %" PRIu64 " units at %g ns); the costliest is node '%.60s' (%.32s, about "
             "%.3g s); use fewer or cheaper nodes, or raise the budget (max_work in the "
             "generation options; terrane generate --max-work N, or --no-work-limit for a "
             "trusted recipe)",
             p->order_count, total, graph_seconds_of(budget), TRN_WORK_GRAPH_FACTOR, budget,
             TRN_WORK_UNIT_NS, g->nodes[worst].id, g->nodes[worst].type, worst_seconds);
}

/* The path of what sets node k's cost: its parameter when written, else the node. */
static void work_path(const trn_graph *g, uint32_t k, const trn_node_work_info *w, char *path,
                      size_t size)
{
    if (w->param && trn_graph_node_param(&g->nodes[k], w->param))
        snprintf(path, size, "nodes[%u].params.%s", k, w->param);
    else
        snprintf(path, size, "nodes[%u]", k);
}

static void work_message(const trn_graph_node *node, const trn_node_work_info *w, uint64_t budget,
                         char *msg, size_t size)
{
    char lower[80] = "";
    if (w->param) snprintf(lower, sizeof lower, "lower %s, or ", w->param);
    snprintf(msg, size,
             "work %" PRIu64 " (%s) exceeds the work budget of %" PRIu64
             "; %sraise the budget (max_work in the generation options; terrane generate "
             "--max-work N, or --no-work-limit for a trusted recipe)",
             w->work, w->detail, budget, lower);
    (void)node;
}

/* Every node's work estimate (calloc'd, zero for nodes off the plan) into *out. */
static trn_status works_of(const trn_graph *graph, const trn_recipe *recipe,
                           trn_erosion_quality quality, trn_node_work_info **out, trn_error *err)
{
    plan p;
    trn_status st = make_plan(graph, recipe, quality, NULL, &p, err);
    if (st) return st;
    *out = plan_works(graph, recipe, &p, quality);
    plan_dispose(&p);
    if (!*out) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    return TRN_OK;
}

trn_status trn_graph_work(const trn_graph *graph, const trn_recipe *recipe,
                          trn_erosion_quality quality, uint64_t *work, trn_error *err)
{
    trn_node_work_info *w;
    trn_status st = works_of(graph, recipe, quality, &w, err);
    if (st) return st;
    for (uint32_t k = 0; k < graph->node_count; k++)
        work[k] = w[k].work;
    free(w);
    return TRN_OK;
}

trn_status trn_graph_work_seconds(const trn_graph *graph, const trn_recipe *recipe,
                                  trn_erosion_quality quality, double *seconds, trn_error *err)
{
    trn_node_work_info *w;
    trn_status st = works_of(graph, recipe, quality, &w, err);
    if (st) return st;
    for (uint32_t k = 0; k < graph->node_count; k++)
        seconds[k] = w[k].seconds; /* 0 off the plan: plan_works zeroes every record */
    free(w);
    return TRN_OK;
}

trn_status trn_graph_check_work(const trn_graph *graph, const trn_recipe *recipe,
                                trn_erosion_quality quality, uint64_t max_work,
                                trn_graph_diagnostics *out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_check_work: out is required");
    plan p;
    trn_error scratch;
    trn_status st = make_plan(graph, recipe, quality, NULL, &p, &scratch);
    if (st == TRN_ERR_NO_MEMORY) return trn_error_set(err, st, NULL, -1, "%s", scratch.message);
    if (st) return TRN_OK; /* the check's own errors come first */
    const uint64_t budget = budget_of(max_work);
    trn_node_work_info *works = plan_works(graph, recipe, &p, quality);
    if (!works) {
        plan_dispose(&p);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    for (uint32_t q = 0; q < p.order_count && st == TRN_OK; q++) {
        const uint32_t k = (uint32_t)p.order[q];
        const trn_graph_node *node = &graph->nodes[k];
        const trn_node_work_info w = works[k];
        if (w.work <= budget) continue;
        if (out->count == out->capacity) {
            const size_t cap = out->capacity ? out->capacity * 2 : 8;
            trn_graph_diagnostic *items = realloc(out->items, cap * sizeof *items);
            if (!items) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            out->items = items;
            out->capacity = cap;
        }
        trn_graph_diagnostic *d = &out->items[out->count++];
        memset(d, 0, sizeof *d);
        d->severity = TRN_GRAPH_ERROR;
        snprintf(d->check, sizeof d->check, "work-budget");
        snprintf(d->node_id, sizeof d->node_id, "%s", node->id);
        if (w.param) snprintf(d->pin, sizeof d->pin, "%s", w.param);
        work_path(graph, k, &w, d->path, sizeof d->path);
        d->offset = -1;
        char msg[768];
        work_message(node, &w, budget, msg, sizeof msg);
        snprintf(d->message, sizeof d->message, "node '%.40s' (%.24s): %.400s", node->id,
                 node->type, msg);
    }
    uint32_t worst;
    double worst_seconds;
    const double total = graph_total(&p, works, &worst, &worst_seconds, NULL);
    free(works);
    if (st == TRN_OK && max_work != TRN_WORK_UNLIMITED && total > graph_seconds_of(budget)) {
        trn_graph_diagnostic *items =
            out->count == out->capacity
                ? realloc(out->items, (out->capacity ? out->capacity * 2 : 8) * sizeof *items)
                : out->items;
        if (!items) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        } else {
            if (out->count == out->capacity) out->capacity = out->capacity ? out->capacity * 2 : 8;
            out->items = items;
            trn_graph_diagnostic *d = &out->items[out->count++];
            memset(d, 0, sizeof d[0]);
            d->severity = TRN_GRAPH_ERROR;
            snprintf(d->check, sizeof d->check, "work-budget");
            snprintf(d->path, sizeof d->path, "nodes");
            d->offset = -1;
            graph_work_message(graph, &p, total, budget, worst, worst_seconds, d->message,
                               sizeof d->message);
        }
    }
    plan_dispose(&p);
    return st;
}

/* Refuse the first node of the plan whose work exceeds the budget, the graph whose nodes together
 * exceed the graph's, or whose results would hold more memory than max_memory, before anything
 * runs. */
static trn_status check_budget(const trn_graph *g, const trn_recipe *recipe, const plan *p,
                               trn_erosion_quality quality, uint64_t max_work, uint64_t max_memory,
                               trn_error *err)
{
    if (max_work == TRN_WORK_UNLIMITED && max_memory == TRN_MEMORY_UNLIMITED) return TRN_OK;
    trn_node_work_info *works = plan_works(g, recipe, p, quality);
    if (!works) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    const uint64_t budget = budget_of(max_work);
    for (uint32_t q = 0; max_work != TRN_WORK_UNLIMITED && q < p->order_count; q++) {
        const uint32_t k = (uint32_t)p->order[q];
        const trn_graph_node *node = &g->nodes[k];
        const trn_node_work_info *w = &works[k];
        if (w->work <= budget) continue;
        char path[128], msg[768];
        work_path(g, k, w, path, sizeof path);
        work_message(node, w, budget, msg, sizeof msg);
        free(works);
        trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "graph.%s: node '%.60s' (%.32s): %s", path,
                      node->id, node->type, msg);
        if (err) snprintf(err->node_id, sizeof err->node_id, "%s", node->id);
        return TRN_ERR_LIMIT;
    }
    uint32_t worst;
    double worst_seconds;
    uint64_t memory;
    const double total = graph_total(p, works, &worst, &worst_seconds, &memory);
    if (max_work != TRN_WORK_UNLIMITED && total > graph_seconds_of(budget)) {
        char msg[900];
        graph_work_message(g, p, total, budget, worst, worst_seconds, msg, sizeof msg);
        free(works);
        trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "graph.nodes: %s", msg);
        if (err) snprintf(err->node_id, sizeof err->node_id, "%s", g->nodes[worst].id);
        return TRN_ERR_LIMIT;
    }
    const uint64_t mem_budget = max_memory ? max_memory : TRN_MEMORY_BUDGET_DEFAULT;
    if (max_memory != TRN_MEMORY_UNLIMITED && memory > mem_budget) {
        uint32_t big = (uint32_t)p->order[0];
        for (uint32_t q = 0; q < p->order_count; q++)
            if (works[p->order[q]].memory > works[big].memory) big = (uint32_t)p->order[q];
        char need[32], have[32], most[32];
        format_bytes(memory, need, sizeof need);
        format_bytes(mem_budget, have, sizeof have);
        format_bytes(works[big].memory, most, sizeof most);
        trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                      "graph.nodes: the graph's %" PRIu32 " evaluated nodes would hold about %s "
                      "of results (%" PRIu32 " x %" PRIu32 " samples), more than the memory "
                      "budget of %s; the largest is node '%.60s' (%.32s, %s); use fewer nodes or "
                      "a smaller grid, or raise the budget (max_memory in the generation "
                      "options; terrane generate --max-memory SIZE)",
                      p->order_count, need, recipe->cells_x + 1u, recipe->cells_z + 1u, have,
                      g->nodes[big].id, g->nodes[big].type, most);
        if (err) snprintf(err->node_id, sizeof err->node_id, "%s", g->nodes[big].id);
        free(works);
        return TRN_ERR_LIMIT;
    }
    free(works);
    return TRN_OK;
}

/* A node that places the palette needs one: the recipe names it (the check says so when it
 * does not), the caller resolves it; refused before anything runs. */
static trn_status check_palette(const trn_graph *g, const plan *p, const trn_palette *palette,
                                trn_error *err)
{
    for (uint32_t q = 0; q < p->order_count && !palette; q++) {
        const int k = p->order[q];
        const trn_graph_node *node = &g->nodes[k];
        if (!trn_node_reads_palette(trn_node_type_find(node->type))) continue;
        trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                      "graph.nodes[%d]: %.32s '%.60s': no resolved palette was given (resolve the "
                      "recipe's palette with trn_palette_resolve and pass it as the options' "
                      "palette)",
                      k, node->type, node->id);
        if (err) snprintf(err->node_id, sizeof err->node_id, "%s", node->id);
        return TRN_ERR_VALIDATION;
    }
    return TRN_OK;
}

/* ---- links for the tiled evaluator ---- */

trn_status trn_graph_links_make(const trn_graph *graph, const trn_recipe *recipe,
                                const trn_graph_options *options, bool need_palette,
                                trn_graph_links *out, trn_error *err)
{
    memset(out, 0, sizeof *out);
    const trn_erosion_quality quality = options ? options->quality : TRN_EROSION_FINAL;
    plan p;
    trn_status st = make_plan(graph, recipe, quality, options ? options->palette : NULL, &p, err);
    if (!st && need_palette) st = check_palette(graph, &p, options ? options->palette : NULL, err);
    /* Tiles hold a tile's results at a time: the caller sizes their memory (--memory). */
    if (!st)
        st = check_budget(graph, recipe, &p, quality, options ? options->max_work : 0,
                          TRN_MEMORY_UNLIMITED, err);
    if (st) {
        plan_dispose(&p);
        return st;
    }
    out->n = p.n;
    out->src = p.src;
    out->src_out = p.src_out;
    out->order = p.order;
    out->order_count = p.order_count;
    out->keys = p.keys;
    out->output = p.output;
    free(p.tainted);
    return TRN_OK;
}

void trn_graph_links_dispose(trn_graph_links *links)
{
    free(links->src);
    free(links->src_out);
    free(links->order);
    free(links->keys);
    memset(links, 0, sizeof *links);
}

/* ---- runs ---- */

struct trn_graph_run {
    uint32_t n;
    char **ids;
    trn_node_result **results; /* NULL for skipped nodes */
    trn_node_report *reports;
    int output;
    bool biome_rules;
    trn_gbuf *water;       /* the Terrain Output's water, on its published field */
    trn_gbuf *biome_water; /* the water the Biome Rules node classifies with, on the same */
    trn_gbuf *instances;   /* the Terrain Output's instances input, or NULL */
};

void trn_graph_run_free(trn_graph_run *run)
{
    if (!run) return;
    for (uint32_t k = 0; k < run->n; k++) {
        if (run->ids) free(run->ids[k]);
        if (run->results) trn_node_result_release(run->results[k]);
    }
    trn_gbuf_release(run->water);
    trn_gbuf_release(run->biome_water);
    trn_gbuf_release(run->instances);
    free(run->ids);
    free(run->results);
    free(run->reports);
    free(run);
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Progress of one node: "node ID: stage". */
typedef struct node_progress {
    trn_progress slice;
    const char *id;
    char stage[112];
} node_progress;

static int node_bridge(double done, const char *stage, void *user)
{
    node_progress *np = user;
    snprintf(np->stage, sizeof np->stage, "node %.60s: %s", np->id, stage ? stage : "");
    return trn_progress_report(&np->slice, done, np->stage) ? TRN_CANCEL : TRN_CONTINUE;
}

static trn_status evaluate(const trn_graph *g, const trn_recipe *recipe, const plan *p,
                           const trn_graph_options *o, trn_graph_run *run, const trn_progress *pr,
                           int threads, trn_error *err)
{
    double total = 0.0, done = 0.0;
    for (uint32_t q = 0; q < p->order_count; q++)
        total += trn_node_cost(trn_node_type_find(g->nodes[p->order[q]].type));
    trn_graph_cache *cache = o ? o->cache : NULL;
    for (uint32_t q = 0; q < p->order_count; q++) {
        const int k = p->order[q];
        const trn_graph_node *node = &g->nodes[k];
        const trn_node_type *t = trn_node_type_find(node->type);
        trn_node_report *rep = &run->reports[k];
        rep->key = p->keys[k];
        const double cost = trn_node_cost(t);
        node_progress np;
        np.slice = trn_progress_sub(pr, done / total, (done + cost) / total);
        np.id = node->id;
        done += cost;
        if (trn_node_module_of(t)->biome_rules) run->biome_rules = true;
        trn_node_result *r = cache_get(cache, p->keys[k]);
        if (r) {
            rep->outcome = TRN_NODE_REUSED;
        } else if (cache && cache->dir && !p->tainted[k] &&
                   trn_node_result_read_file(cache->dir, p->keys[k], &cache->limits, &r, NULL) ==
                       TRN_OK) {
            /* A file for another grid would have another key; check anyway, never trust. */
            if (r->cells_x != recipe->cells_x || r->cells_z != recipe->cells_z ||
                r->output_count < (t->output_count ? t->output_count : 1u)) {
                trn_node_result_release(r);
                r = NULL;
            } else {
                rep->outcome = TRN_NODE_REUSED_DISK;
                cache_put(cache, r);
                if (cache->disk_limit) {
                    char name[32];
                    snprintf(name, sizeof name, "%016" PRIx64 ".tnc", p->keys[k]);
                    trn_cache_file_touch(cache->dir, name);
                }
            }
        }
        if (r) {
            rep->cached_cpu_seconds = r->cpu_seconds;
        } else {
            trn_node_ctx ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.node = node;
            ctx.type = t;
            ctx.recipe = recipe;
            ctx.threads = threads;
            ctx.quality = o ? o->quality : TRN_EROSION_FINAL;
            ctx.palette = o ? o->palette : NULL;
            trn_progress sub = trn_progress_make(node_bridge, &np);
            ctx.progress = &sub;
            for (uint32_t i = 0; i < t->input_count && i < TRN_GRAPH_MAX_INPUTS; i++) {
                const int s = p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + i];
                if (s < 0) continue;
                ctx.input_results[i] = run->results[s];
                ctx.inputs[i] =
                    &run->results[s]->outputs[p->src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + i]];
            }
            if (trn_progress_report(&sub, 0.0, t->name))
                return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "graph: cancelled");
            r = trn_node_result_new(p->keys[k], recipe->cells_x, recipe->cells_z, recipe->size_x,
                                    recipe->size_z);
            if (!r) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            const double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
            trn_status st = trn_node_compute(&ctx, r, err);
            if (st) {
                trn_node_result_release(r);
                return st;
            }
            rep->cpu_seconds = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            rep->wall_seconds = clock_s(CLOCK_MONOTONIC) - w0;
            rep->outcome = TRN_NODE_EVALUATED;
            r->cpu_seconds = rep->cpu_seconds;
            trn_node_result_measure(r);
            cache_put(cache, r);
            /* A directory that cannot be written only costs reuse, never the generation. */
            if (cache && cache->dir && !p->tainted[k] &&
                trn_node_result_write_file(cache->dir, r, NULL) == TRN_OK && cache->disk_limit) {
                char name[32];
                snprintf(name, sizeof name, "%016" PRIx64 ".tnc", p->keys[k]);
                trn_cache_dir_trim(cache->dir, cache->disk_limit, name);
            }
        }
        rep->has_ledger = r->has_ledger;
        rep->ledger = r->ledger;
        snprintf(rep->note, sizeof rep->note, "%s", r->note);
        run->results[k] = r;
        /* The water a Terrain Output publishes and a Biome Rules node classifies with. */
        const bool publishes = k == p->output, classifies = trn_node_module_of(t)->biome_rules;
        if ((publishes || classifies) && t->input_count > 1 && t->inputs[1].kind == TRN_PIN_WATER) {
            const int s = p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + 1];
            if (s >= 0) {
                trn_gbuf **slot = publishes ? &run->water : &run->biome_water;
                trn_gbuf_release(*slot);
                *slot =
                    trn_gbuf_retain(run->results[s]
                                        ->outputs[p->src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + 1]]
                                        .water);
            }
        }
        /* The candidates a Terrain Output publishes (its instances pin). */
        if (publishes && t->input_count > 2 && t->inputs[2].kind == TRN_PIN_INSTANCES) {
            const int s = p->src[(size_t)k * TRN_GRAPH_MAX_INPUTS + 2];
            if (s >= 0) {
                trn_gbuf_release(run->instances);
                run->instances =
                    trn_gbuf_retain(run->results[s]
                                        ->outputs[p->src_out[(size_t)k * TRN_GRAPH_MAX_INPUTS + 2]]
                                        .instances);
            }
        }
        if (node_bridge(1.0, t->name, &np) == TRN_CANCEL)
            return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "graph: cancelled");
    }
    return TRN_OK;
}

/* Water resolved on other ground than the published field (erosion or height nodes after the
 * water) is resolved again from the same bodies, without carving. */
static trn_status refresh_on(trn_gbuf **slot, const trn_field *ground, uint64_t hash, int threads,
                             trn_error *err)
{
    const trn_water *w = *slot ? (*slot)->data : NULL;
    if (!w || w->ground_hash == hash) return TRN_OK;
    trn_water *fresh = calloc(1, sizeof *fresh);
    if (!fresh) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    const trn_water_resolve_options o = {threads};
    trn_status st = trn_water_refresh(w, ground, &o, fresh, err);
    if (st) {
        free(fresh);
        return st;
    }
    trn_gbuf *buf = trn_gbuf_wrap_water(fresh);
    if (!buf) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    trn_gbuf_release(*slot);
    *slot = buf;
    return TRN_OK;
}

static trn_status settle_water(trn_graph_run *run, int threads, trn_error *err)
{
    if ((!run->water && !run->biome_water) || run->output < 0 || !run->results[run->output])
        return TRN_OK;
    const trn_node_result *r = run->results[run->output];
    trn_field ground;
    memset(&ground, 0, sizeof ground);
    ground.cells_x = r->cells_x;
    ground.cells_z = r->cells_z;
    ground.size_x = r->size_x;
    ground.size_z = r->size_z;
    ground.heights = r->outputs[0].values ? r->outputs[0].values->data : NULL;
    if (!ground.heights) return TRN_OK;
    const uint64_t hash = trn_water_ground_hash(&ground);
    trn_status st = refresh_on(&run->water, &ground, hash, threads, err);
    if (!st) st = refresh_on(&run->biome_water, &ground, hash, threads, err);
    return st;
}

trn_status trn_graph_evaluate(const trn_graph *graph, const trn_recipe *recipe,
                              const trn_graph_options *options, trn_graph_run **out,
                              trn_progress_fn progress, void *user, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_evaluate: out is required");
    *out = NULL;
    if (options && options->threads < 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "graph: threads must be 0 (default) or positive, not %d",
                             options->threads);
    const trn_erosion_quality quality = options ? options->quality : TRN_EROSION_FINAL;
    if (quality != TRN_EROSION_FINAL && quality != TRN_EROSION_PREVIEW)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "graph: quality must be final or preview");
    plan p;
    trn_status st = make_plan(graph, recipe, quality, options ? options->palette : NULL, &p, err);
    if (!st) st = check_palette(graph, &p, options ? options->palette : NULL, err);
    /* Before the budgets: a grid over the whole-grid limit is refused whatever they are. */
    if (!st) st = trn_rcp_check_whole_grid(recipe, "graph evaluation", err);
    if (!st)
        st = check_budget(graph, recipe, &p, quality, options ? options->max_work : 0,
                          options ? options->max_memory : 0, err);
    if (st) {
        plan_dispose(&p);
        return st;
    }
    trn_graph_run *run = calloc(1, sizeof *run);
    if (run) {
        run->n = graph->node_count;
        run->ids = calloc(run->n ? run->n : 1u, sizeof *run->ids);
        run->results = calloc(run->n ? run->n : 1u, sizeof *run->results);
        run->reports = calloc(run->n ? run->n : 1u, sizeof *run->reports);
    }
    if (!run || !run->ids || !run->results || !run->reports) {
        trn_graph_run_free(run);
        plan_dispose(&p);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a graph run");
    }
    run->output = p.output;
    for (uint32_t k = 0; k < run->n; k++) {
        const trn_graph_node *node = &graph->nodes[k];
        snprintf(run->reports[k].id, sizeof run->reports[k].id, "%s", node->id);
        snprintf(run->reports[k].type, sizeof run->reports[k].type, "%s", node->type);
        run->reports[k].outcome = TRN_NODE_SKIPPED;
        const size_t len = strlen(node->id) + 1;
        if ((run->ids[k] = malloc(len))) memcpy(run->ids[k], node->id, len);
    }
    int threads = options && options->threads > 0 ? options->threads : 1;
#ifdef _OPENMP
    /* Generators use OpenMP's default team: set it for this call, then restore it. */
    const int saved_threads = omp_get_max_threads();
    if (!(options && options->threads > 0)) threads = saved_threads;
    omp_set_num_threads(threads);
#endif
    trn_progress pr = trn_progress_make(progress, user);
    st = evaluate(graph, recipe, &p, options, run, &pr, threads, err);
#ifdef _OPENMP
    omp_set_num_threads(saved_threads);
#endif
    plan_dispose(&p);
    if (!st) st = settle_water(run, threads, err);
    if (st) {
        trn_graph_run_free(run);
        return st;
    }
    *out = run;
    return TRN_OK;
}

const trn_node_report *trn_graph_run_report(const trn_graph_run *run, uint32_t *count)
{
    if (count) *count = run ? run->n : 0u;
    return run ? run->reports : NULL;
}

static void view_of(const trn_node_result *r, const trn_gout *o, trn_graph_value *out)
{
    memset(out, 0, sizeof *out);
    out->kind = o->kind;
    out->cells_x = r->cells_x;
    out->cells_z = r->cells_z;
    out->size_x = r->size_x;
    out->size_z = r->size_z;
    if (o->kind == TRN_PIN_DRAINAGE) {
        out->drainage = &o->view;
        out->source = o->source ? o->source->data : NULL;
    } else if (o->kind == TRN_PIN_WATER) {
        out->water = o->water ? o->water->data : NULL;
    } else if (o->kind == TRN_PIN_INSTANCES) {
        out->instances = o->instances ? o->instances->data : NULL;
    } else {
        out->values = o->values ? o->values->data : NULL;
    }
    if (o->kind == TRN_PIN_HEIGHTFIELD || o->kind == TRN_PIN_DRAINAGE)
        out->transport = o->transport ? o->transport->data : NULL;
}

trn_status trn_graph_run_terrain(const trn_graph_run *run, trn_graph_value *out, trn_error *err)
{
    if (!run || !out || run->output < 0 || !run->results[run->output])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "graph run has no output");
    view_of(run->results[run->output], &run->results[run->output]->outputs[0], out);
    return TRN_OK;
}

const trn_water *trn_graph_run_water(const trn_graph_run *run)
{
    return run && run->water ? run->water->data : NULL;
}

const trn_water *trn_graph_run_biome_water(const trn_graph_run *run)
{
    return run && run->biome_water ? run->biome_water->data : NULL;
}

const trn_instances *trn_graph_run_instances(const trn_graph_run *run)
{
    return run && run->instances ? run->instances->data : NULL;
}

bool trn_graph_run_biome_rules(const trn_graph_run *run)
{
    return run && run->biome_rules;
}

static int run_find(const trn_graph_run *run, const char *id)
{
    for (uint32_t k = 0; run && id && k < run->n; k++)
        if (run->ids[k] && strcmp(run->ids[k], id) == 0) return (int)k;
    return -1;
}

trn_status trn_graph_run_output(const trn_graph_run *run, const char *node_id, const char *pin,
                                trn_graph_value *out, trn_error *err)
{
    const int k = run_find(run, node_id);
    if (k < 0 || !run->results[k] || !out)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "graph: node '%.60s' was not evaluated in this run",
                             node_id ? node_id : "");
    const trn_node_type *t = trn_node_type_find(run->reports[k].type);
    if (!t || !t->output_count)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "graph: node '%.60s' (%s) has no outputs (trn_graph_run_terrain "
                             "gives what a terrain_output publishes)",
                             node_id, run->reports[k].type);
    uint32_t oi = 0;
    if (pin && !trn_node_type_output(t, pin, &oi))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "graph: node '%.60s' (%s) has no output '%.40s'", node_id,
                             run->reports[k].type, pin);
    if (oi >= run->results[k]->output_count)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1, "graph: node '%.60s' has no outputs",
                             node_id);
    view_of(run->results[k], &run->results[k]->outputs[oi], out);
    return TRN_OK;
}

const float *trn_graph_run_change(const trn_graph_run *run, const char *node_id)
{
    const int k = run_find(run, node_id);
    if (k < 0 || !run->results[k] || !run->results[k]->change) return NULL;
    return run->results[k]->change->data;
}
