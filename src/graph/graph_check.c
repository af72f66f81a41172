/* Graph validation: every problem of a draft as a diagnostic naming its node and pin. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_fields.h"
#include "graph/graph_internal.h"
#include "terrane/masks.h"

typedef trn_check_ctx cctx;

/* Levenshtein distance, capped, for did-you-mean hints. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 40 || lb > 40) return 99;
    size_t row[41];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t best = prev + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            prev = cur;
        }
    }
    return row[lb];
}

static const char *closest_type(const char *name)
{
    const char *best = NULL;
    size_t bd = 4;
    for (uint32_t k = 0; k < trn_node_type_count(); k++) {
        const size_t d = edit_distance(name, trn_node_type_at(k)->name);
        if (d < bd) {
            bd = d;
            best = trn_node_type_at(k)->name;
        }
    }
    return best;
}

static void names_of(const trn_pin_spec *pins, uint32_t count, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t len = 0;
    for (uint32_t k = 0; k < count && len + 1 < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", k ? ", " : "", pins[k].name);
    if (!count) snprintf(buf, size, "none");
}

static void check_param(cctx *c, const trn_graph_node *n, uint32_t index, const trn_node_type *t,
                        const trn_graph_param *p)
{
    char path[128];
    snprintf(path, sizeof path, "nodes[%u].params.%.60s", index, p->name);
    const trn_param_spec *s = trn_node_type_param(t, p->name);
    if (!s) {
        char place[64], msg[400];
        snprintf(place, sizeof place, "nodes[%u].params", index);
        trn_graph_unknown_param_text(msg, sizeof msg, t, p->name, place);
        trn_check_diag(c, TRN_GRAPH_ERROR, "unknown-param", n, p->name, path, "%s", msg);
        return;
    }
    char num[40];
    switch (s->type) {
    case TRN_PARAM_NUMBER:
    case TRN_PARAM_INTEGER: {
        const bool whole = s->type == TRN_PARAM_INTEGER;
        if (p->type == TRN_VALUE_STRING && trn_graph_keyword_in(s->keywords, p->text)) return;
        if (p->type != TRN_VALUE_NUMBER && s->keywords) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected a number or one of \"%s\", found %s%.60s%s", p->name, s->keywords,
                 p->type == TRN_VALUE_STRING ? "\"" : "",
                 p->type == TRN_VALUE_STRING ? p->text : "another kind of value",
                 p->type == TRN_VALUE_STRING ? "\"" : "");
            return;
        }
        if (p->type != TRN_VALUE_NUMBER) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path, "%s: expected a %s, found %s",
                 p->name, whole ? "whole number" : "number",
                 p->type == TRN_VALUE_STRING ? "a string" : "another kind of value");
            return;
        }
        const double v = p->number;
        /* The documents' range rule (finite, open or closed at min, whole numbers). */
        const trn_doc_range range = {
            s->min, s->max, (s->min_exclusive ? TRN_DOC_LO_OPEN : 0u) | (whole ? TRN_DOC_WHOLE : 0u),
            NULL};
        if (!trn_doc_range_ok(&range, v)) {
            char lo[40], hi[40];
            trn_graph_number_text(s->min, lo, sizeof lo);
            trn_graph_number_text(s->max, hi, sizeof hi);
            trn_graph_number_text(v, num, sizeof num);
            if (isinf(s->max))
                trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                     "%s: expected a %s %s %s, found %s", p->name,
                     whole ? "whole number" : "number", s->min_exclusive ? ">" : ">=", lo, num);
            else
                trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                     "%s: expected a %s from %s%s to %s, found %s", p->name,
                     whole ? "whole number" : "number", s->min_exclusive ? "above " : "", lo, hi,
                     num);
        }
        return;
    }
    case TRN_PARAM_STRING:
        if (p->type != TRN_VALUE_STRING)
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path, "%s: expected a string",
                 p->name);
        return;
    case TRN_PARAM_CHOICE: {
        bool ok = false;
        if (p->type == TRN_VALUE_STRING) {
            const size_t len = strlen(p->text);
            for (const char *q = s->choices; q && *q;) {
                const char *bar = strchr(q, '|');
                const size_t ql = bar ? (size_t)(bar - q) : strlen(q);
                if (ql == len && memcmp(q, p->text, len) == 0) ok = true;
                q = bar ? bar + 1 : NULL;
            }
        }
        if (!ok)
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected one of %s, found %s%.40s%s", p->name, s->choices,
                 p->type == TRN_VALUE_STRING ? "\"" : "",
                 p->type == TRN_VALUE_STRING ? p->text : "another kind of value",
                 p->type == TRN_VALUE_STRING ? "\"" : "");
        return;
    }
    case TRN_PARAM_POINTS: {
        if (p->type != TRN_VALUE_POINTS || p->point_dim != 2) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected an array of [x, z] number pairs", p->name);
            return;
        }
        char msg[300];
        const bool polygon = s->min_points >= 3; /* a ring: its closing edge is checked too */
        if (trn_points_check(p->points, p->point_count, s->min_points, polygon, msg, sizeof msg)) {
            /* The checker names its subject "points"; say the parameter's own name. */
            const bool named = strncmp(msg, "points:", 7) == 0;
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path, "%s%s", named ? p->name : "",
                 named ? msg + 6 : msg);
        }
        return;
    }
    case TRN_PARAM_POINTS3: {
        if (p->type != TRN_VALUE_POINTS || p->point_dim != 3) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected an array of [x, y, z] number triples", p->name);
            return;
        }
        if (p->point_count < s->min_points) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected at least %u [x, y, z] points, found %u", p->name, s->min_points,
                 p->point_count);
            return;
        }
        for (uint32_t k = 0; k < 3u * p->point_count; k++)
            if (!(fabs(p->points[k]) <= 3.4028234663852886e38)) {
                trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                     "%s: point %u: expected finite numbers within the float range", p->name,
                     k / 3);
                return;
            }
        return;
    }
    case TRN_PARAM_VECTOR: {
        if (p->type != TRN_VALUE_POINTS || p->point_dim != 1 || p->point_count != s->min_points) {
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                 "%s: expected an array of %u numbers, found %s", p->name, s->min_points,
                 p->type == TRN_VALUE_POINTS && p->point_dim == 1 ? "another count"
                                                                  : "another kind of value");
            return;
        }
        for (uint32_t k = 0; k < p->point_count; k++) {
            const double v = p->points[k];
            if (!isfinite(v) || v < s->min || v > s->max) {
                char lo[40], hi[40];
                trn_graph_number_text(s->min, lo, sizeof lo);
                trn_graph_number_text(s->max, hi, sizeof hi);
                trn_graph_number_text(v, num, sizeof num);
                trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, p->name, path,
                     "%s[%u]: expected a number from %s to %s, found %s", p->name, k, lo, hi, num);
                return;
            }
        }
        return;
    }
    case TRN_PARAM_JSON:
        /* Checked by the node type itself. */
        return;
    }
}

/* Resolve a link's source output: its spec, or NULL with a diagnostic already made. */
static const trn_pin_spec *resolve(cctx *c, const trn_graph_node *n, uint32_t index,
                                   const trn_graph_link *l, int *src_out)
{
    char path[128];
    snprintf(path, sizeof path, "nodes[%u].inputs.%.40s", index, l->pin);
    *src_out = -1;
    const int s = trn_graph_index_find(&c->index, l->node);
    if (s < 0) {
        trn_check_diag(c, TRN_GRAPH_ERROR, "unknown-node", n, l->pin, path,
             "input '%s' links to node '%.60s', which does not exist", l->pin, l->node);
        return NULL;
    }
    if ((uint32_t)s == index) {
        trn_check_diag(c, TRN_GRAPH_ERROR, "self-link", n, l->pin, path,
             "input '%s' links to the node itself", l->pin);
        return NULL;
    }
    *src_out = s;
    const trn_graph_node *src = &c->g->nodes[s];
    const trn_node_type *st = trn_node_type_find(src->type);
    if (!st) return NULL; /* reported as unknown-type on the source */
    char names[200];
    names_of(st->outputs, st->output_count, names, sizeof names);
    if (!l->output) {
        if (st->output_count == 1) return &st->outputs[0];
        trn_check_diag(c, TRN_GRAPH_ERROR, st->output_count ? "ambiguous-output-pin" : "unknown-output-pin",
             n, l->pin, path, "input '%s' links to node '%.60s' without naming its output (%s)",
             l->pin, l->node, names);
        return NULL;
    }
    const trn_pin_spec *o = trn_node_type_output(st, l->output, NULL);
    if (!o)
        trn_check_diag(c, TRN_GRAPH_ERROR, "unknown-output-pin", n, l->pin, path,
             "input '%s' links to output '%.40s' of node '%.60s' (%s), which has outputs: %s",
             l->pin, l->output, l->node, st->name, names);
    return o;
}

/* Depth-first colouring over resolved links; a back edge is a cycle, reported once. The walk
 * keeps its own stack (node, next input slot), so a long chain cannot exhaust the C stack. */
typedef struct cyc {
    const int *src; /* per node, per input slot: source node index or -1 (node * max_inputs) */
    uint32_t max_inputs;
    uint8_t *state; /* 0 new, 1 on stack, 2 done */
    int *stack;     /* nodes on the path */
    uint32_t *next; /* per path entry: the next input slot to look at */
    bool found;
} cyc;

static void report_cycle(cctx *c, const cyc *y, uint32_t depth, int s)
{
    /* The cycle is the path from s up to its top, which links back to s. */
    char chain[400] = "";
    size_t len = 0;
    uint32_t from = 0;
    while (y->stack[from] != s)
        from++;
    for (uint32_t q = from; q < depth && len + 1 < sizeof chain; q++)
        len += (size_t)snprintf(chain + len, sizeof chain - len, "%.60s <- ",
                                c->g->nodes[y->stack[q]].id);
    if (len + 1 < sizeof chain)
        snprintf(chain + len, sizeof chain - len, "%.60s", c->g->nodes[s].id);
    const int v = y->stack[depth - 1u];
    char path[64];
    snprintf(path, sizeof path, "nodes[%d].inputs", v);
    trn_check_diag(c, TRN_GRAPH_ERROR, "cycle", &c->g->nodes[v], NULL, path,
         "its inputs form a cycle (%s); a node cannot depend on its own result", chain);
}

static void visit(cctx *c, cyc *y, int root)
{
    uint32_t depth = 0;
    y->stack[depth] = root;
    y->next[depth++] = 0;
    y->state[root] = 1;
    while (depth && !y->found) {
        const int v = y->stack[depth - 1u];
        if (y->next[depth - 1u] == y->max_inputs) {
            y->state[v] = 2;
            depth--;
            continue;
        }
        const int s = y->src[(size_t)v * y->max_inputs + y->next[depth - 1u]++];
        if (s < 0) continue;
        if (y->state[s] == 1) {
            report_cycle(c, y, depth, s);
            y->found = true;
        } else if (y->state[s] == 0) {
            y->state[s] = 1;
            y->stack[depth] = s;
            y->next[depth++] = 0;
        }
    }
}

trn_status trn_graph_check(const trn_graph *graph, const trn_recipe *recipe,
                           trn_graph_diagnostics *out, trn_error *err)
{
    if (!graph || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_check: graph and out are required");
    cctx c;
    memset(&c, 0, sizeof c);
    c.g = graph;
    c.recipe = recipe;
    c.out = out;
    const uint32_t n = graph->node_count;
    char path[128];
    uint32_t max_inputs = 1;
    for (uint32_t k = 0; k < n; k++)
        if (graph->nodes[k].input_count > max_inputs) max_inputs = graph->nodes[k].input_count;
    int *src = malloc((size_t)(n ? n : 1u) * max_inputs * sizeof *src);
    uint8_t *state = calloc(n ? n : 1u, 1);
    int *stack = malloc((n ? n : 1u) * sizeof *stack);
    uint32_t *next = malloc((n ? n : 1u) * sizeof *next);
    uint8_t *reach = calloc(n ? n : 1u, 1);
    const bool indexed = trn_graph_index_build(graph, false, &c.index);
    if (!src || !state || !stack || !next || !reach || !indexed) {
        free(src);
        free(state);
        free(stack);
        free(next);
        free(reach);
        trn_graph_index_dispose(&c.index);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory checking a graph");
    }
    for (size_t k = 0; k < (size_t)(n ? n : 1u) * max_inputs; k++)
        src[k] = -1;

    for (uint32_t k = 0; k < n; k++) {
        const trn_graph_node *node = &graph->nodes[k];
        snprintf(path, sizeof path, "nodes[%u].id", k);
        const size_t idlen = strlen(node->id);
        if (idlen == 0 || idlen > 63)
            trn_check_diag(&c, TRN_GRAPH_ERROR, "bad-id", NULL, NULL, path,
                 "node %u: an id must be 1 to 63 bytes, found %zu", k, idlen);
        const int first = trn_graph_index_find(&c.index, node->id);
        if (first >= 0 && (uint32_t)first != k)
            trn_check_diag(&c, TRN_GRAPH_ERROR, "duplicate-id", node, NULL, path,
                 "id '%.60s' is already used by node %d; ids must be unique", node->id, first);
        const trn_node_type *t = trn_node_type_find(node->type);
        if (!t) {
            snprintf(path, sizeof path, "nodes[%u].type", k);
            const char *hint = closest_type(node->type);
            if (hint)
                trn_check_diag(&c, TRN_GRAPH_ERROR, "unknown-type", node, NULL, path,
                     "unknown node type '%.60s'; did you mean '%s'?", node->type, hint);
            else
                trn_check_diag(&c, TRN_GRAPH_ERROR, "unknown-type", node, NULL, path,
                     "unknown node type '%.60s' (`terrane graph types` lists them)", node->type);
            continue;
        }
        for (uint32_t p = 0; p < node->param_count; p++)
            check_param(&c, node, k, t, &node->params[p]);
        const trn_node_module *m = trn_node_module_of(t);
        if (m->check) m->check(&c, node, k, t);
        if (!t->input_count && node->input_count) {
            snprintf(path, sizeof path, "nodes[%u].inputs", k);
            trn_check_diag(&c, TRN_GRAPH_ERROR,
                 strcmp(t->name, "comment") == 0 ? "comment-pins" : "unknown-input", node, NULL,
                 path, "this node type has no inputs, found %u link(s)", node->input_count);
            continue;
        }
        for (uint32_t i = 0; i < node->input_count; i++) {
            const trn_graph_link *l = &node->inputs[i];
            snprintf(path, sizeof path, "nodes[%u].inputs.%.40s", k, l->pin);
            const trn_pin_spec *in = trn_node_type_input(t, l->pin, NULL);
            if (!in) {
                char names[200];
                names_of(t->inputs, t->input_count, names, sizeof names);
                trn_check_diag(&c, TRN_GRAPH_ERROR, "unknown-input", node, l->pin, path,
                     "no input pin '%.40s' (inputs: %s)", l->pin, names);
                continue;
            }
            int s;
            const trn_pin_spec *o = resolve(&c, node, k, l, &s);
            src[(size_t)k * max_inputs + i] = s;
            if (o && o->kind != in->kind)
                trn_check_diag(&c, TRN_GRAPH_ERROR, "kind-mismatch", node, l->pin, path,
                     "input '%s' takes a %s, but output '%s' of node '%.60s' gives a %s", l->pin,
                     trn_pin_kind_name(in->kind), o->name, l->node, trn_pin_kind_name(o->kind));
        }
    }

    /* Cycles, over every link that names an existing node. */
    cyc y = {src, max_inputs, state, stack, next, false};
    for (uint32_t k = 0; k < n && !y.found; k++)
        if (!state[k]) visit(&c, &y, (int)k);

    /* The output and what it reaches. */
    int out_index = -1;
    if (!graph->output) {
        trn_check_diag(&c, TRN_GRAPH_ERROR, "output-unset", NULL, NULL, "output",
             "the graph names no Terrain Output (\"output\": NODE_ID)");
    } else if ((out_index = trn_graph_index_find(&c.index, graph->output)) < 0) {
        trn_check_diag(&c, TRN_GRAPH_ERROR, "output-unknown", NULL, NULL, "output",
             "output names node '%.60s', which does not exist", graph->output);
    } else if (strcmp(graph->nodes[out_index].type, "terrain_output") != 0) {
        trn_check_diag(&c, TRN_GRAPH_ERROR, "output-not-terminal", &graph->nodes[out_index], NULL, "output",
             "the graph's output must be a terrain_output node, not a %.32s",
             graph->nodes[out_index].type);
        out_index = -1;
    }
    if (out_index >= 0 && !y.found) {
        /* Iterative marking: stack holds nodes to expand. */
        uint32_t top = 0;
        stack[top++] = out_index;
        reach[out_index] = 1;
        while (top) {
            const int v = stack[--top];
            for (uint32_t i = 0; i < max_inputs; i++) {
                const int s = src[(size_t)v * max_inputs + i];
                if (s >= 0 && !reach[s]) {
                    reach[s] = 1;
                    stack[top++] = s;
                }
            }
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        const trn_graph_node *node = &graph->nodes[k];
        const trn_node_type *t = trn_node_type_find(node->type);
        if (!t || strcmp(t->name, "comment") == 0) continue;
        const bool needed = out_index < 0 || y.found || reach[k];
        for (uint32_t i = 0; i < t->input_count; i++) {
            if (!t->inputs[i].required || trn_graph_node_input(node, t->inputs[i].name)) continue;
            snprintf(path, sizeof path, "nodes[%u].inputs", k);
            trn_check_diag(&c, needed ? TRN_GRAPH_ERROR : TRN_GRAPH_WARNING, "missing-input", node,
                 t->inputs[i].name, path, "required input '%s' (%s) is not connected%s",
                 t->inputs[i].name, trn_pin_kind_name(t->inputs[i].kind),
                 needed ? "" : " (the node does not feed the output, so generation skips it)");
        }
        if (out_index >= 0 && !y.found && !reach[k]) {
            snprintf(path, sizeof path, "nodes[%u]", k);
            trn_check_diag(&c, TRN_GRAPH_WARNING, "unreachable", node, NULL, path,
                 "does not feed the output '%.60s'; generation skips it", graph->output);
        }
    }
    free(src);
    free(state);
    free(stack);
    free(next);
    free(reach);
    trn_graph_index_dispose(&c.index);
    if (c.failed)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory checking a graph");
    return TRN_OK;
}

/* "recipe.graph" + "nodes[3].inputs.mask" -> steps. Keys are cut at '.' and '['. */
static size_t parse_path(const char *s, char *store, size_t store_size, trn_json_path *path)
{
    size_t used = 0;
    while (s && *s) {
        if (*s == '.') {
            s++;
            continue;
        }
        if (*s == '[') {
            char *end;
            const unsigned long v = strtoul(s + 1, &end, 10);
            trn_json_path_push_index(path, v);
            s = *end == ']' ? end + 1 : end;
            continue;
        }
        size_t len = strcspn(s, ".[");
        if (used + len + 1 > store_size) break;
        memcpy(store + used, s, len);
        store[used + len] = '\0';
        trn_json_path_push_key(path, store + used);
        used += len + 1;
        s += len;
    }
    return used;
}

void trn_graph_diagnostics_locate(trn_graph_diagnostics *diagnostics, const char *text, size_t size,
                                  const char *graph_path)
{
    if (!diagnostics || !text) return;
    for (size_t k = 0; k < diagnostics->count; k++) {
        trn_graph_diagnostic *d = &diagnostics->items[k];
        trn_json_path path;
        memset(&path, 0, sizeof path);
        char store[512];
        const size_t used = parse_path(graph_path, store, sizeof store, &path);
        parse_path(d->path, store + used, sizeof store - used, &path);
        trn_json_pos pos;
        trn_json_locate(text, size, path.steps, path.depth,
                        strcmp(d->check, "unknown-param") == 0 ? TRN_JSON_KEY : TRN_JSON_VALUE,
                        &pos);
        d->line = pos.line;
        d->column = pos.column;
        d->offset = (int64_t)pos.offset;
    }
}

void trn_graph_unknown_param_text(char *buf, size_t size, const trn_node_type *t,
                                  const char *name, const char *place)
{
    const char *known[65];
    uint32_t n = 0;
    for (; n < t->param_count && n < 64; n++)
        known[n] = t->params[n].name;
    known[n] = NULL;
    trn_doc_unknown_key_text(buf, size, name, place, known, NULL);
}

trn_status trn_graph_params_parse(const char *type, const char *params_json, const char *place,
                                  trn_graph *graph, char *key, size_t key_size, char *msg,
                                  size_t msg_size, bool *unknown)
{
    trn_json_parse_counted();
    json_t *obj = json_loads(params_json, JSON_REJECT_DUPLICATES, NULL);
    trn_status st =
        trn_graph_params_read(type, obj, place, graph, key, key_size, msg, msg_size, unknown);
    json_decref(obj);
    return st;
}

trn_status trn_graph_params_read(const char *type, const json_t *params, const char *place,
                                 trn_graph *graph, char *key, size_t key_size, char *msg,
                                 size_t msg_size, bool *unknown)
{
    memset(graph, 0, sizeof *graph);
    *unknown = false;
    if (key_size) key[0] = '\0';
    if (msg_size) msg[0] = '\0';
    /* An object and nothing else, so it cannot reach past the node it is put in. */
    if (!json_is_object(params)) {
        snprintf(msg, msg_size, "expected a JSON object of parameters");
        return TRN_ERR_VALIDATION;
    }
    json_t *root = json_pack("{s:i, s:[{s:s, s:s, s:O}]}", "format_version", 1, "nodes", "id",
                             "params", "type", type, "params", params);
    if (!root) return TRN_ERR_NO_MEMORY;
    trn_error e;
    trn_status st = trn_graph_parse_tree(root, NULL, 0, NULL, NULL, graph, &e);
    json_decref(root);
    if (st) {
        snprintf(msg, msg_size, "%s", e.message);
        return st;
    }
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    if ((st = trn_graph_check(graph, NULL, &d, NULL))) {
        trn_graph_dispose(graph);
        return st;
    }
    /* Only the parameters are the caller's: a lone node's missing input is not. */
    static const char prefix[] = "nodes[0].params.";
    for (size_t k = 0; k < d.count; k++) {
        const trn_graph_diagnostic *g = &d.items[k];
        if (g->severity != TRN_GRAPH_ERROR || strncmp(g->path, prefix, sizeof prefix - 1) != 0)
            continue;
        const char *name = g->path + sizeof prefix - 1;
        /* The caller names the place: drop the diagnostic's "node 'params' (type): " lead. */
        const char *what = g->message;
        if (strncmp(what, "node '", 6) == 0 && strstr(what, "): ")) what = strstr(what, "): ") + 3;
        const size_t nl = strlen(name);
        snprintf(key, key_size, "%s", name);
        /* The path names the parameter already: drop the message's own "name: " lead. */
        const bool lead = strncmp(what, name, nl) == 0 && what[nl] == ':' && what[nl + 1] == ' ';
        snprintf(msg, msg_size, "%s", lead ? what + nl + 2 : what);
        *unknown = strcmp(g->check, "unknown-param") == 0;
        /* An unknown key names the caller's place, not the one-node graph's. */
        if (*unknown)
            trn_graph_unknown_param_text(msg, msg_size, trn_node_type_find(type), name, place);
        st = TRN_ERR_VALIDATION;
        break;
    }
    trn_graph_diagnostics_dispose(&d);
    if (st) trn_graph_dispose(graph);
    return st;
}
