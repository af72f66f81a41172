/* Graph documents from JSON: the shape is checked here (with positions); meaning in graph_check.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/textbuf.h"
#include "core/numtext.h"
#include "graph/graph_internal.h"
#include "core/json_fields.h"

typedef struct gctx {
    const char *text;
    size_t size;
    const char *file;
    trn_json_path *path;
    trn_error *err;
} gctx;

static trn_status gerr(gctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* "graph.nodes[2].id: expected ..., found ..." at the position of the current path. */
static trn_status gerr(gctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return trn_json_error_at(c->err, code, c->file, c->text, c->size, c->path, target, msg);
}

static trn_status oom(gctx *c)
{
    return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->file, -1, "out of memory reading a graph");
}

/* What a JSON value is, for "found ...". */
static const char *describe(const json_t *v, char *buf, size_t size)
{
    return trn_json_describe(v, buf, size);
}

/* key is not one of rows': the documents' one form (the path at the object holding it; what
 * names the object at the top). */
static trn_status unknown_key(gctx *c, const char *key, const trn_doc_field *rows, const char *what)
{
    const trn_doc d = {c->text, c->size, c->file, c->path, c->err, NULL, NULL};
    return trn_doc_unknown_field(&d, key, rows, what, NULL);
}

/* The keys of each object a graph holds, one row each; strings are read by their rows. */
static const trn_doc_field graph_fields[] = {
    TRN_DOC_OTHER_ROW("format_version"),
    TRN_DOC_TEXT_ROW("output", 0, "a string", trn_graph, output),
    TRN_DOC_OTHER_ROW("nodes"),
    TRN_DOC_END_ROW};
static const trn_doc_field node_fields[] = {
    TRN_DOC_TEXT_ROW("id", 0, "a string", trn_graph_node, id),
    TRN_DOC_TEXT_ROW("type", 0, "a string", trn_graph_node, type),
    TRN_DOC_OTHER_ROW("position"),
    TRN_DOC_OTHER_ROW("params"),
    TRN_DOC_OTHER_ROW("inputs"),
    TRN_DOC_END_ROW};
static const trn_doc_field link_fields[] = {
    TRN_DOC_TEXT_ROW("node", 0, "a string", trn_graph_link, node),
    TRN_DOC_TEXT_ROW("pin", 0, "a string", trn_graph_link, output),
    TRN_DOC_END_ROW};

/* v, the value of rows' key, into base (the path at the object holding key). */
static trn_status read_row(gctx *c, const trn_doc_field *rows, const char *key, const json_t *v,
                           void *base)
{
    const trn_doc d = {c->text, c->size, c->file, c->path, c->err, NULL, NULL};
    trn_json_path_push_key(c->path, key);
    trn_status st = trn_doc_read_field(&d, trn_doc_field_find(rows, key), v, base, "graph");
    trn_json_path_pop(c->path);
    return st;
}

/* The first key of v that rows lack, or NULL. */
static const char *first_unknown(const json_t *v, const trn_doc_field *rows)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (!trn_doc_field_find(rows, key)) return key;
    }
    return NULL;
}

/* Length of an array of numbers, 0 when p is anything else. */
static size_t number_tuple(const json_t *p)
{
    if (!json_is_array(p)) return 0;
    const size_t n = json_array_size(p);
    for (size_t k = 0; k < n; k++)
        if (!json_is_number(json_array_get(p, k))) return 0;
    return n;
}

static int key_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* v with every object's keys in bytewise order: the tree its sorted text reads as (scalars
 * shared). NULL when out of memory. */
static json_t *sorted_copy(const json_t *v)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        for (size_t k = 0; out && k < json_array_size(v); k++)
            if (json_array_append_new(out, sorted_copy(json_array_get(v, k)))) {
                json_decref(out);
                out = NULL;
            }
        return out;
    }
    if (!json_is_object(v)) return json_incref((json_t *)v);
    const size_t n = json_object_size(v);
    const char **keys = malloc((n ? n : 1u) * sizeof *keys);
    json_t *out = keys ? json_object() : NULL;
    size_t k = 0;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)v, key, val)
    {
        if (keys) keys[k++] = key;
    }
    if (keys) qsort(keys, k, sizeof *keys, key_order);
    for (size_t q = 0; out && q < k; q++)
        if (json_object_set_new(out, keys[q], sorted_copy(json_object_get(v, keys[q])))) {
            json_decref(out);
            out = NULL;
        }
    free(keys);
    return out;
}

static trn_status read_param(gctx *c, const char *key, const json_t *v, trn_graph_param *p)
{
    if (!(p->name = trn_text_dup(key))) return oom(c);
    if (json_is_number(v)) {
        p->type = TRN_VALUE_NUMBER;
        p->number = json_number_value(v);
        return TRN_OK;
    }
    if (json_is_string(v)) {
        p->type = TRN_VALUE_STRING;
        return (p->text = trn_text_dup(json_string_value(v))) ? TRN_OK : oom(c);
    }
    if (json_is_boolean(v)) {
        p->type = TRN_VALUE_BOOL;
        p->boolean = json_is_true(v);
        return TRN_OK;
    }
    if (json_is_array(v) && json_array_size(v) > 0 && json_array_size(v) <= (1u << 20)) {
        /* [[x, z], ...], [[x, y, z], ...] or a flat array of numbers. */
        const size_t n = json_array_size(v);
        size_t dim = json_is_number(json_array_get(v, 0)) ? 1 : number_tuple(json_array_get(v, 0));
        for (size_t k = 0; dim && k < n; k++) {
            const json_t *e = json_array_get(v, k);
            if (dim == 1 ? !json_is_number(e) : number_tuple(e) != dim) dim = 0;
        }
        if (dim >= 1 && dim <= 3) {
            p->type = TRN_VALUE_POINTS;
            if (!(p->points = malloc(n * dim * sizeof *p->points))) return oom(c);
            for (size_t k = 0; k < n; k++)
                for (size_t q = 0; q < dim; q++)
                    p->points[dim * k + q] = json_number_value(
                        dim == 1 ? json_array_get(v, k) : json_array_get(json_array_get(v, k), q));
            p->point_count = (uint32_t)n;
            p->point_dim = (uint32_t)dim;
            return TRN_OK;
        }
    }
    /* Anything else is kept for the check to report and for saving the draft unchanged. */
    p->type = TRN_VALUE_OTHER;
    char *dump = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!dump) return oom(c);
    p->text = dump;
    /* The tree the text reads as, kept (its keys sorted as the text's are): a node that reads
     * the value (Water Edit's overrides) does not read the text again. Without memory for it
     * the text is read when needed. */
    p->tree = sorted_copy(v);
    return TRN_OK;
}

static trn_status read_link(gctx *c, const char *pin, const json_t *v, trn_graph_link *l)
{
    char buf[64];
    if (!(l->pin = trn_text_dup(pin))) return oom(c);
    if (!json_is_object(v))
        return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a link {\"node\": ID, \"pin\": OUTPUT}, found %s",
                    describe(v, buf, sizeof buf));
    const char *unknown = first_unknown(v, link_fields);
    if (unknown) return unknown_key(c, unknown, link_fields, "a link");
    const json_t *node = json_object_get(v, "node");
    if (!node) return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "a link needs \"node\": SOURCE_ID");
    trn_status st = read_row(c, link_fields, "node", node, l);
    if (!st && json_object_get(v, "pin"))
        st = read_row(c, link_fields, "pin", json_object_get(v, "pin"), l);
    return st;
}

static trn_status read_node(gctx *c, const json_t *v, trn_graph_node *n)
{
    char buf[64];
    if (!json_is_object(v))
        return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a node object, found %s",
                    describe(v, buf, sizeof buf));
    const char *key = first_unknown(v, node_fields);
    json_t *val;
    if (key) return unknown_key(c, key, node_fields, "a node");
    const json_t *id = json_object_get(v, "id"), *type = json_object_get(v, "type");
    if (!id) return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "a node needs \"id\": a string");
    if (!type) return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "a node needs \"type\": a string");
    trn_status st = read_row(c, node_fields, "id", id, n);
    if (!st) st = read_row(c, node_fields, "type", type, n);
    if (st) return st;
    const json_t *pos = json_object_get(v, "position");
    if (pos) {
        if (number_tuple(pos) != 2) {
            trn_json_path_push_key(c->path, "position");
            st = gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected [x, y], found %s",
                      describe(pos, buf, sizeof buf));
            trn_json_path_pop(c->path);
            return st;
        }
        n->has_position = true;
        n->x = json_number_value(json_array_get(pos, 0));
        n->y = json_number_value(json_array_get(pos, 1));
    }
    const json_t *params = json_object_get(v, "params");
    if (params) {
        trn_json_path_push_key(c->path, "params");
        if (!json_is_object(params)) {
            st = gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected an object, found %s",
                      describe(params, buf, sizeof buf));
            trn_json_path_pop(c->path);
            return st;
        }
        const size_t count = json_object_size(params);
        n->params = calloc(count ? count : 1u, sizeof *n->params);
        if (!n->params) return oom(c);
        json_object_foreach((json_t *)params, key, val)
        {
            if ((st = read_param(c, key, val, &n->params[n->param_count++]))) break;
        }
        trn_json_path_pop(c->path);
        if (st) return st;
    }
    const json_t *inputs = json_object_get(v, "inputs");
    if (inputs) {
        trn_json_path_push_key(c->path, "inputs");
        if (!json_is_object(inputs)) {
            st = gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected an object of links, found %s",
                      describe(inputs, buf, sizeof buf));
            trn_json_path_pop(c->path);
            return st;
        }
        const size_t count = json_object_size(inputs);
        n->inputs = calloc(count ? count : 1u, sizeof *n->inputs);
        if (!n->inputs) return oom(c);
        json_object_foreach((json_t *)inputs, key, val)
        {
            trn_json_path_push_key(c->path, key);
            st = read_link(c, key, val, &n->inputs[n->input_count++]);
            trn_json_path_pop(c->path);
            if (st) break;
        }
        trn_json_path_pop(c->path);
    }
    return st;
}

static trn_status parse_tree(gctx *c, const json_t *v, trn_graph *g)
{
    char buf[64];
    if (!json_is_object(v))
        return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a graph object, found %s",
                    describe(v, buf, sizeof buf));
    const char *unknown = first_unknown(v, graph_fields);
    if (unknown) return unknown_key(c, unknown, graph_fields, "the graph");
    const json_t *fv = json_object_get(v, "format_version");
    if (!fv)
        return gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "a graph needs \"format_version\": %u (the graph format version)",
                    TRN_GRAPH_FORMAT_VERSION);
    trn_json_path_push_key(c->path, "format_version");
    const double fvn = json_is_number(fv) ? json_number_value(fv) : -1.0;
    trn_status st = TRN_OK;
    if (!(fvn >= 1.0 && floor(fvn) == fvn))
        st = gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a whole number >= 1, found %s",
                  describe(fv, buf, sizeof buf));
    else if (fvn > TRN_GRAPH_FORMAT_VERSION)
        st = gerr(c, TRN_ERR_VERSION, TRN_JSON_VALUE,
                  "graph format version %.0f is newer than %u, the newest this build reads", fvn,
                  TRN_GRAPH_FORMAT_VERSION);
    trn_json_path_pop(c->path);
    if (st) return st;
    g->format_version = (uint32_t)fvn;
    const json_t *out = json_object_get(v, "output");
    if (out && !json_is_null(out) && (st = read_row(c, graph_fields, "output", out, g))) return st;
    const json_t *nodes = json_object_get(v, "nodes");
    if (!nodes) return TRN_OK; /* an empty draft */
    trn_json_path_push_key(c->path, "nodes");
    if (!json_is_array(nodes)) {
        st = gerr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected an array of nodes, found %s",
                  describe(nodes, buf, sizeof buf));
        trn_json_path_pop(c->path);
        return st;
    }
    const size_t count = json_array_size(nodes);
    if (count > 100000) {
        st = gerr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu nodes; at most 100000", count);
        trn_json_path_pop(c->path);
        return st;
    }
    g->nodes = calloc(count ? count : 1u, sizeof *g->nodes);
    if (!g->nodes) return oom(c);
    for (size_t k = 0; k < count && !st; k++) {
        trn_json_path_push_index(c->path, k);
        st = read_node(c, json_array_get(nodes, k), &g->nodes[g->node_count++]);
        trn_json_path_pop(c->path);
    }
    trn_json_path_pop(c->path);
    return st;
}

trn_status trn_graph_parse_tree(const json_t *v, const char *text, size_t size, const char *file,
                                trn_json_path *where, trn_graph *graph, trn_error *err)
{
    memset(graph, 0, sizeof *graph);
    trn_json_path local;
    memset(&local, 0, sizeof local);
    gctx c = {text, size, file, where ? where : &local, err};
    const size_t depth = c.path->depth;
    trn_status st = parse_tree(&c, v, graph);
    c.path->depth = depth;
    if (st) trn_graph_dispose(graph);
    return st;
}

trn_status trn_graph_parse(const char *text, size_t size, const char *path, trn_graph *graph,
                           trn_error *err)
{
    if (!graph) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "graph: no output");
    memset(graph, 0, sizeof *graph);
    if (!text) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "graph: no text");
    size_t bom = size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3u : 0u;
    json_error_t je;
    trn_json_parse_counted();
    json_t *root = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)je.position + (int64_t)bom, "%s", je.text);
        trn_error_set_position(err, je.line, je.column > 0 ? je.column : 1); /* jansson: 0 at EOF */
        return TRN_ERR_JSON;
    }
    trn_json_path where;
    memset(&where, 0, sizeof where);
    trn_status st = trn_graph_parse_tree(root, text, size, path, &where, graph, err);
    json_decref(root);
    return st;
}

static void param_dispose(trn_graph_param *p)
{
    free(p->name);
    free(p->text);
    free(p->points);
    json_decref(p->tree);
}

/* A copy of s (NULL stays NULL); false when out of memory. */
static bool dup_opt(char **d, const char *s)
{
    *d = s ? trn_text_dup(s) : NULL;
    return !s || *d;
}

bool trn_graph_copy(const trn_graph *src, trn_graph *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->format_version = src->format_version;
    bool ok = dup_opt(&dst->output, src->output);
    if (ok && src->node_count) {
        dst->nodes = calloc(src->node_count, sizeof *dst->nodes);
        ok = dst->nodes != NULL;
        if (ok) dst->node_count = src->node_count; /* zeroed: disposable while half filled */
    }
    for (uint32_t k = 0; ok && k < src->node_count; k++) {
        const trn_graph_node *a = &src->nodes[k];
        trn_graph_node *b = &dst->nodes[k];
        b->has_position = a->has_position;
        b->x = a->x;
        b->y = a->y;
        ok = dup_opt(&b->id, a->id) && dup_opt(&b->type, a->type);
        if (ok && a->param_count) {
            b->params = calloc(a->param_count, sizeof *b->params);
            ok = b->params != NULL;
            if (ok) b->param_count = a->param_count;
        }
        for (uint32_t q = 0; ok && q < a->param_count; q++) {
            const trn_graph_param *pa = &a->params[q];
            trn_graph_param *pb = &b->params[q];
            pb->type = pa->type;
            pb->number = pa->number;
            pb->boolean = pa->boolean;
            ok = dup_opt(&pb->name, pa->name) && dup_opt(&pb->text, pa->text);
            const size_t n = (size_t)pa->point_count * pa->point_dim;
            if (ok && pa->points) {
                pb->points = malloc((n ? n : 1u) * sizeof *pb->points);
                ok = pb->points != NULL;
                if (ok && n) memcpy(pb->points, pa->points, n * sizeof *pb->points);
            }
            pb->point_count = pa->point_count;
            pb->point_dim = pa->point_dim;
            pb->tree = pa->tree ? json_incref(pa->tree) : NULL;
        }
        if (ok && a->input_count) {
            b->inputs = calloc(a->input_count, sizeof *b->inputs);
            ok = b->inputs != NULL;
            if (ok) b->input_count = a->input_count;
        }
        for (uint32_t q = 0; ok && q < a->input_count; q++)
            ok = dup_opt(&b->inputs[q].pin, a->inputs[q].pin) &&
                 dup_opt(&b->inputs[q].node, a->inputs[q].node) &&
                 dup_opt(&b->inputs[q].output, a->inputs[q].output);
    }
    if (!ok) trn_graph_dispose(dst);
    return ok;
}

void trn_graph_dispose(trn_graph *graph)
{
    if (!graph) return;
    for (uint32_t k = 0; graph->nodes && k < graph->node_count; k++) {
        trn_graph_node *n = &graph->nodes[k];
        free(n->id);
        free(n->type);
        for (uint32_t p = 0; n->params && p < n->param_count; p++)
            param_dispose(&n->params[p]);
        free(n->params);
        for (uint32_t i = 0; n->inputs && i < n->input_count; i++) {
            free(n->inputs[i].pin);
            free(n->inputs[i].node);
            free(n->inputs[i].output);
        }
        free(n->inputs);
    }
    free(graph->nodes);
    free(graph->output);
    memset(graph, 0, sizeof *graph);
}

int trn_graph_find_node(const trn_graph *graph, const char *id)
{
    for (uint32_t k = 0; id && k < graph->node_count; k++)
        if (graph->nodes[k].id && strcmp(graph->nodes[k].id, id) == 0) return (int)k;
    return -1;
}

bool trn_graph_index_build(const trn_graph *graph, bool skip_comments, trn_graph_index *index)
{
    memset(index, 0, sizeof *index);
    index->graph = graph;
    size_t cap = 16;
    while (cap < (size_t)graph->node_count * 2u)
        cap *= 2;
    index->slots = calloc(cap, sizeof *index->slots);
    if (!index->slots) return false;
    index->mask = cap - 1u;
    for (uint32_t k = 0; k < graph->node_count; k++) {
        const trn_graph_node *n = &graph->nodes[k];
        if (!n->id || (skip_comments && n->type && strcmp(n->type, "comment") == 0)) continue;
        size_t h = (size_t)XXH64(n->id, strlen(n->id), 0) & index->mask;
        while (index->slots[h]) {
            /* The first node keeps an id shared by later ones (a duplicate-id draft). */
            if (strcmp(graph->nodes[index->slots[h] - 1u].id, n->id) == 0) break;
            h = (h + 1u) & index->mask;
        }
        if (!index->slots[h]) index->slots[h] = k + 1u;
    }
    return true;
}

void trn_graph_index_dispose(trn_graph_index *index)
{
    if (!index) return;
    free(index->slots);
    memset(index, 0, sizeof *index);
}

int trn_graph_index_find(const trn_graph_index *index, const char *id)
{
    if (!id || !index->slots) return -1;
    size_t h = (size_t)XXH64(id, strlen(id), 0) & index->mask;
    while (index->slots[h]) {
        const uint32_t k = index->slots[h] - 1u;
        if (strcmp(index->graph->nodes[k].id, id) == 0) return (int)k;
        h = (h + 1u) & index->mask;
    }
    return -1;
}

const trn_graph_link *trn_graph_node_input(const trn_graph_node *node, const char *pin)
{
    for (uint32_t k = 0; k < node->input_count; k++)
        if (strcmp(node->inputs[k].pin, pin) == 0) return &node->inputs[k];
    return NULL;
}

const trn_graph_param *trn_graph_node_param(const trn_graph_node *node, const char *name)
{
    for (uint32_t k = 0; k < node->param_count; k++)
        if (strcmp(node->params[k].name, name) == 0) return &node->params[k];
    return NULL;
}

/* Whether word is one of a '|'-separated list. */
bool trn_graph_keyword_in(const char *list, const char *word)
{
    if (!list || !word) return false;
    const size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *bar = strchr(p, '|');
        const size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        p += len + (bar ? 1u : 0u);
    }
    return false;
}

double trn_graph_param_number(const trn_graph_node *node, const trn_node_type *type,
                              const char *name)
{
    const trn_graph_param *p = trn_graph_node_param(node, name);
    if (p && p->type == TRN_VALUE_NUMBER) return p->number;
    const trn_param_spec *s = trn_node_type_param(type, name);
    return s ? s->def : 0.0;
}

const char *trn_graph_param_text(const trn_graph_node *node, const trn_node_type *type,
                                 const char *name)
{
    const trn_graph_param *p = trn_graph_node_param(node, name);
    if (p && p->type == TRN_VALUE_STRING) return p->text;
    const trn_param_spec *s = trn_node_type_param(type, name);
    return s ? s->def_text : NULL;
}

/* The index of word among the '|'-separated words of list, 0 when it is none of them. */
static int choice_index(const char *list, const char *word)
{
    if (!list || !word) return 0;
    const size_t n = strlen(word);
    int k = 0;
    for (const char *p = list;; k++) {
        const char *bar = strchr(p, '|');
        const size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return k;
        if (!bar) return 0;
        p = bar + 1;
    }
}

typedef struct default_points default_points;
static const default_points *default_points_of(const trn_param_spec *s, uint32_t dim);
static const double *default_points_values(const default_points *d, uint32_t *count);

/* The spec named name in type's table, looked for from *at on (a family's rows mostly follow
 * the table's order, so a fill costs about one comparison a row); *at is where the next search
 * starts. */
static const trn_param_spec *spec_from(const trn_node_type *type, const char *name, uint32_t *at)
{
    const uint32_t n = type ? type->param_count : 0u;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t i = (*at + k) % n;
        if (strcmp(type->params[i].name, name) == 0) {
            *at = i; /* a name may have several rows in a row */
            return &type->params[i];
        }
    }
    return NULL;
}

void trn_graph_params_fill(const trn_graph_node *node, const trn_node_type *type,
                           const trn_param_field *rows, size_t count, void *out)
{
    uint32_t at_spec = 0;
    for (size_t i = 0; i < count; i++) {
        const trn_param_field *f = &rows[i];
        void *at = (char *)out + f->offset;
        /* As trn_graph_param_number, _text and _points_dim read it: the node's value of the
         * row's kind, else the type's default. */
        const trn_graph_param *p = trn_graph_node_param(node, f->name);
        switch (f->as) {
        case TRN_PARAM_AS_DOUBLE:
        case TRN_PARAM_AS_U32: {
            double v;
            if (p && p->type == TRN_VALUE_NUMBER) {
                v = p->number;
            } else {
                const trn_param_spec *s = spec_from(type, f->name, &at_spec);
                v = s ? s->def : 0.0;
            }
            if (f->as == TRN_PARAM_AS_DOUBLE)
                *(double *)at = v;
            else
                *(uint32_t *)at = (uint32_t)v;
            break;
        }
        case TRN_PARAM_AS_CHOICE:
        case TRN_PARAM_AS_TEXT: {
            const trn_param_spec *s =
                f->as == TRN_PARAM_AS_CHOICE || !(p && p->type == TRN_VALUE_STRING)
                    ? spec_from(type, f->name, &at_spec)
                    : NULL;
            const char *text = p && p->type == TRN_VALUE_STRING ? p->text
                               : s                              ? s->def_text
                                                                : NULL;
            if (f->as == TRN_PARAM_AS_TEXT)
                *(const char **)at = text;
            else
                *(int *)at = choice_index(s ? s->choices : NULL, text);
            break;
        }
        case TRN_PARAM_AS_GIVEN:
            *(bool *)at = p != NULL;
            break;
        case TRN_PARAM_AS_NUMBER_GIVEN:
            *(bool *)at = p && p->type == TRN_VALUE_NUMBER;
            break;
        case TRN_PARAM_AS_VECTOR:
        case TRN_PARAM_AS_POINTS: {
            const uint32_t dim = f->as == TRN_PARAM_AS_VECTOR ? 1u : f->len;
            const double *v = NULL;
            uint32_t n = 0;
            if (p && p->type == TRN_VALUE_POINTS && p->point_dim == dim) {
                v = p->points;
                n = p->point_count;
            } else {
                const trn_param_spec *s = spec_from(type, f->name, &at_spec);
                const default_points *d = s && s->def_text ? default_points_of(s, dim) : NULL;
                if (d) v = default_points_values(d, &n);
            }
            if (f->as == TRN_PARAM_AS_POINTS) {
                trn_param_points *pts = at;
                pts->v = v;
                pts->count = v ? n : 0u;
            } else {
                /* A vector of another length reads as zeros. */
                for (uint32_t k = 0; k < f->len; k++)
                    ((double *)at)[k] = v && n == f->len ? v[k] : 0.0;
            }
            break;
        }
        case TRN_PARAM_AS_JSON: {
            const trn_param_spec *s = p ? NULL : spec_from(type, f->name, &at_spec);
            *(const char **)at = p ? (p->type == TRN_VALUE_OTHER ? p->text : NULL)
                                   : (s ? s->def_text : NULL);
            break;
        }
        case TRN_PARAM_AS_TREE:
            *(const json_t **)at = p && p->type == TRN_VALUE_OTHER ? p->tree : NULL;
            break;
        }
    }
}

/* A registry default's points, read once per process: the parameter tables are static, so an
 * entry is never stale. Lock-free and append-only (a race may add a twin, which is harmless);
 * the entries live as long as the process. */
struct default_points {
    const trn_param_spec *spec;
    uint32_t dim, count;
    struct default_points *next;
    double pts[];
};

static const double *default_points_values(const default_points *d, uint32_t *count)
{
    *count = d->count;
    return d->pts;
}

static _Atomic(default_points *) parsed_defaults;

static const default_points *default_points_of(const trn_param_spec *s, uint32_t dim)
{
    for (const default_points *e = atomic_load_explicit(&parsed_defaults, memory_order_acquire);
         e; e = e->next)
        if (e->spec == s && e->dim == dim) return e;
    trn_json_parse_counted();
    json_t *v = json_loads(s->def_text, 0, NULL);
    if (!v) return NULL;
    const size_t n = json_array_size(v);
    default_points *e = malloc(sizeof *e + (n ? n : 1u) * dim * sizeof e->pts[0]);
    if (e) {
        e->spec = s;
        e->dim = dim;
        e->count = (uint32_t)n;
        for (size_t k = 0; k < n; k++)
            for (size_t q = 0; q < dim; q++)
                e->pts[dim * k + q] = json_number_value(
                    dim == 1 ? json_array_get(v, k) : json_array_get(json_array_get(v, k), q));
        e->next = atomic_load_explicit(&parsed_defaults, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&parsed_defaults, &e->next, e,
                                                      memory_order_release, memory_order_relaxed))
            ;
    }
    json_decref(v);
    return e;
}

const double *trn_graph_param_points_dim(const trn_graph_node *node, const trn_node_type *type,
                                         const char *name, uint32_t dim, uint32_t *count,
                                         double **scratch)
{
    *scratch = NULL;
    *count = 0;
    const trn_graph_param *p = trn_graph_node_param(node, name);
    if (p && p->type == TRN_VALUE_POINTS && p->point_dim == dim) {
        *count = p->point_count;
        return p->points;
    }
    const trn_param_spec *s = trn_node_type_param(type, name);
    if (!s || !s->def_text) return NULL;
    const default_points *d = default_points_of(s, dim);
    if (!d) return NULL;
    *count = d->count;
    return d->pts;
}

const double *trn_graph_param_points(const trn_graph_node *node, const trn_node_type *type,
                                     const char *name, uint32_t *count, double **scratch)
{
    return trn_graph_param_points_dim(node, type, name, 2, count, scratch);
}

uint32_t trn_graph_param_vector(const trn_graph_node *node, const trn_node_type *type,
                                const char *name, double *out, uint32_t n)
{
    uint32_t count;
    double *scratch;
    const double *v = trn_graph_param_points_dim(node, type, name, 1, &count, &scratch);
    const uint32_t got = v && count == n ? n : 0;
    for (uint32_t k = 0; k < got; k++)
        out[k] = v[k];
    free(scratch);
    return got;
}
