/* Graphs as canonical JSON (saving drafts, recipe cache keys) and the implicit graph of a recipe.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numtext.h"
#include "graph/graph_internal.h"
#include "graph/nodes/node_common.h"
#include "recipe/recipe_internal.h"

typedef struct gbuf_text {
    char *data;
    size_t len, cap;
    bool failed;
} gbuf_text;

static void put(gbuf_text *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256u;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void puts_(gbuf_text *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_string(gbuf_text *b, const char *s)
{
    put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(b, esc, 6);
        } else {
            put(b, (const char *)p, 1);
        }
    }
    put(b, "\"", 1);
}

void trn_graph_number_text(double v, char *buf, size_t buf_size)
{
    char text[40];
    /* JSON has no NaN or infinity: a parsed graph never holds one; print null if it does. */
    if (isfinite(v))
        trn_double_text(v, text);
    else
        snprintf(text, sizeof text, "null");
    snprintf(buf, buf_size, "%s", text);
}

static void put_number(gbuf_text *b, double v)
{
    char buf[40];
    trn_graph_number_text(v, buf, sizeof buf);
    puts_(b, buf);
}

static int cmp_param(const void *a, const void *b)
{
    return strcmp((*(const trn_graph_param *const *)a)->name,
                  (*(const trn_graph_param *const *)b)->name);
}

static int cmp_link(const void *a, const void *b)
{
    return strcmp((*(const trn_graph_link *const *)a)->pin,
                  (*(const trn_graph_link *const *)b)->pin);
}

static int cmp_node(const void *a, const void *b)
{
    const trn_graph_node *x = *(const trn_graph_node *const *)a;
    const trn_graph_node *y = *(const trn_graph_node *const *)b;
    const int c = strcmp(x->id, y->id);
    /* Equal ids (a draft's error) keep document order: qsort alone is not stable. */
    return c ? c : (x < y ? -1 : x > y);
}

static void put_param_value(gbuf_text *b, const trn_graph_param *p)
{
    switch (p->type) {
    case TRN_VALUE_NUMBER:
        put_number(b, p->number);
        break;
    case TRN_VALUE_STRING:
        put_string(b, p->text ? p->text : "");
        break;
    case TRN_VALUE_BOOL:
        puts_(b, p->boolean ? "true" : "false");
        break;
    case TRN_VALUE_POINTS:
        put(b, "[", 1);
        for (uint32_t k = 0; k < p->point_count; k++) {
            if (k) put(b, ",", 1);
            if (p->point_dim > 1) put(b, "[", 1);
            for (uint32_t q = 0; q < p->point_dim; q++) {
                if (q) put(b, ",", 1);
                put_number(b, p->points[(size_t)p->point_dim * k + q]);
            }
            if (p->point_dim > 1) put(b, "]", 1);
        }
        put(b, "]", 1);
        break;
    case TRN_VALUE_OTHER:
        puts_(b, p->text ? p->text : "null");
        break;
    }
}

/* The source's output pin as written: the link's own, else the source type's only output
 * (resolved in the index the text is printed for: an identity has no comments to find). */
static const char *link_output(const trn_graph_index *index, const trn_graph_link *l)
{
    const trn_graph *g = index->graph;
    if (l->output) return l->output;
    const int s = trn_graph_index_find(index, l->node);
    if (s < 0) return NULL;
    const trn_node_type *t = trn_node_type_find(g->nodes[s].type);
    return t && t->output_count == 1 ? t->outputs[0].name : NULL;
}

static void put_node(gbuf_text *b, const trn_graph_index *index, const trn_graph_node *n,
                     bool identity)
{
    put(b, "{\"id\":", 6);
    put_string(b, n->id);
    if (n->input_count) {
        const trn_graph_link **links = malloc(n->input_count * sizeof *links);
        if (!links) {
            b->failed = true;
            return;
        }
        for (uint32_t k = 0; k < n->input_count; k++)
            links[k] = &n->inputs[k];
        qsort(links, n->input_count, sizeof *links, cmp_link);
        puts_(b, ",\"inputs\":{");
        for (uint32_t k = 0; k < n->input_count; k++) {
            if (k) put(b, ",", 1);
            put_string(b, links[k]->pin);
            puts_(b, ":{\"node\":");
            put_string(b, links[k]->node);
            const char *out = link_output(index, links[k]);
            if (out) {
                puts_(b, ",\"pin\":");
                put_string(b, out);
            }
            put(b, "}", 1);
        }
        put(b, "}", 1);
        free(links);
    }
    if (n->param_count) {
        const trn_graph_param **params = malloc(n->param_count * sizeof *params);
        if (!params) {
            b->failed = true;
            return;
        }
        for (uint32_t k = 0; k < n->param_count; k++)
            params[k] = &n->params[k];
        qsort(params, n->param_count, sizeof *params, cmp_param);
        puts_(b, ",\"params\":{");
        for (uint32_t k = 0; k < n->param_count; k++) {
            if (k) put(b, ",", 1);
            put_string(b, params[k]->name);
            put(b, ":", 1);
            put_param_value(b, params[k]);
        }
        put(b, "}", 1);
        free(params);
    }
    if (n->has_position && !identity) {
        puts_(b, ",\"position\":[");
        put_number(b, n->x);
        put(b, ",", 1);
        put_number(b, n->y);
        put(b, "]", 1);
    }
    puts_(b, ",\"type\":");
    put_string(b, n->type);
    put(b, "}", 1);
}

trn_status trn_graph_to_json(const trn_graph *graph, bool identity, char **text, size_t *size,
                             trn_error *err)
{
    if (text) *text = NULL;
    if (size) *size = 0;
    if (!graph || !text)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_to_json: graph and text are required");
    gbuf_text b = {NULL, 0, 0, false};
    char num[16];
    snprintf(num, sizeof num, "%u", graph->format_version ? graph->format_version : 1u);
    puts_(&b, "{\"format_version\":");
    puts_(&b, num);
    puts_(&b, ",\"nodes\":[");
    const trn_graph_node **order =
        malloc((graph->node_count ? graph->node_count : 1u) * sizeof *order);
    if (!order) b.failed = true;
    uint32_t count = 0;
    for (uint32_t k = 0; order && k < graph->node_count; k++) {
        const trn_graph_node *n = &graph->nodes[k];
        /* Comments never change generation, so they stay out of the identity. */
        if (identity && n->type && strcmp(n->type, "comment") == 0) continue;
        order[count++] = n;
    }
    if (identity && order) qsort(order, count, sizeof *order, cmp_node);
    trn_graph_index index;
    if (!trn_graph_index_build(graph, identity, &index)) b.failed = true;
    for (uint32_t k = 0; k < count && !b.failed; k++) {
        if (k) put(&b, ",", 1);
        put_node(&b, &index, order[k], identity);
    }
    trn_graph_index_dispose(&index);
    free(order);
    put(&b, "]", 1);
    if (graph->output) {
        puts_(&b, ",\"output\":");
        put_string(&b, graph->output);
    }
    put(&b, "}", 1);
    if (b.failed) {
        free(b.data);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory printing a graph");
    }
    *text = b.data;
    if (size) *size = b.len;
    return TRN_OK;
}

char *trn_graph_identity_of_json(const char *graph_json)
{
    trn_graph g;
    if (!graph_json || trn_graph_parse(graph_json, strlen(graph_json), NULL, &g, NULL)) return NULL;
    char *text = NULL;
    trn_graph_to_json(&g, true, &text, NULL, NULL);
    trn_graph_dispose(&g);
    return text;
}

/* landform -> biome_rules -> output: what recipes without a graph always generated. */
static const char implicit_graph[] =
    "{\"format_version\":1,\"output\":\"output\",\"nodes\":["
    "{\"id\":\"landform\",\"type\":\"landform\"},"
    "{\"id\":\"biome_rules\",\"type\":\"biome_rules\","
    "\"inputs\":{\"field\":{\"node\":\"landform\",\"pin\":\"field\"}}},"
    "{\"id\":\"output\",\"type\":\"terrain_output\","
    "\"inputs\":{\"field\":{\"node\":\"biome_rules\",\"pin\":\"field\"}}}]}";

const char *trn_graph_implicit_json(void)
{
    return implicit_graph;
}

/* The same graph as data, for generation to use without reading text. Never changed: the
 * casts only fit string literals into the graph's owned (char *) fields. */
static trn_graph_link implicit_links[] = {
    {(char *)"field", (char *)"landform", (char *)"field"},
    {(char *)"field", (char *)"biome_rules", (char *)"field"}};
static trn_graph_node implicit_nodes[] = {{.id = (char *)"landform", .type = (char *)"landform"},
                                          {.id = (char *)"biome_rules",
                                           .type = (char *)"biome_rules",
                                           .inputs = &implicit_links[0],
                                           .input_count = 1},
                                          {.id = (char *)"output",
                                           .type = (char *)"terrain_output",
                                           .inputs = &implicit_links[1],
                                           .input_count = 1}};
static const trn_graph implicit = {1, (char *)"output", implicit_nodes, 3};

trn_status trn_graph_of_recipe(const trn_recipe *recipe, const trn_graph **graph,
                               trn_graph *scratch, trn_error *err)
{
    memset(scratch, 0, sizeof *scratch);
    const struct trn_recipe_model *m = trn_rcp_model_of(recipe);
    *graph = !recipe->graph_json ? &implicit : m ? &m->graph : scratch;
    if (*graph != scratch) return TRN_OK;
    const trn_status st = trn_graph_from_recipe(recipe, scratch, err);
    if (st) *graph = NULL;
    return st;
}

trn_status trn_graph_from_recipe(const trn_recipe *recipe, trn_graph *graph, trn_error *err)
{
    if (!recipe || !graph)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_from_recipe: recipe and graph are required");
    /* The graph read with the recipe (or the implicit one) is copied, not read again. */
    const struct trn_recipe_model *m = trn_rcp_model_of(recipe);
    const trn_graph *held = m ? &m->graph : recipe->graph_json ? NULL : &implicit;
    if (held) {
        if (trn_graph_copy(held, graph)) return TRN_OK;
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "graph: out of memory");
    }
    const char *text = recipe->graph_json;
    trn_status st = trn_graph_parse(text, strlen(text), NULL, graph, err);
    if (st && err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "graph: %.500s", err->message);
        memcpy(err->message, msg, sizeof msg);
    }
    return st;
}

bool trn_graph_input_files_hash(const trn_recipe *recipe, XXH64_state_t *h)
{
    if (!recipe || !recipe->graph_json || !strstr(recipe->graph_json, "heightfield_input"))
        return false;
    trn_graph scratch;
    const trn_graph *g;
    if (trn_graph_of_recipe(recipe, &g, &scratch, NULL) != TRN_OK) return false;
    const trn_node_type *t = &trn_node_heightfield_input.type;
    bool any = false;
    for (uint32_t k = 0; k < g->node_count; k++) {
        if (strcmp(g->nodes[k].type, t->name) != 0) continue;
        XXH64_update(h, g->nodes[k].id, strlen(g->nodes[k].id) + 1);
        trn_node_heightfield_input.key(h, &g->nodes[k], t, recipe, TRN_EROSION_FINAL);
        any = true;
    }
    trn_graph_dispose(&scratch);
    return any;
}
