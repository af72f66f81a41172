/* A recipe's graph read once: the document's graph object becomes a typed graph and its identity
 * when the recipe is parsed, so generation, cache keys and canonical text read no JSON again. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "recipe/recipe_model.h"

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* v as reading its canonical text back would give it (trn_rcp_canonical_text, then json_loads):
 * object keys in sorted order, a real whose canonical text has no fraction or exponent as an
 * integer. NULL when out of memory or when that text would not read back (a whole number
 * beyond the integer range, which jansson refuses). */
json_t *trn_rcp_read_back(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const size_t n = json_object_size(v);
        json_t *o = json_object();
        const char **keys = malloc((n ? n : 1u) * sizeof *keys);
        if (!o || !keys) {
            free(keys);
            json_decref(o);
            return NULL;
        }
        size_t k = 0;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val)
        {
            if (k < n) keys[k++] = key;
        }
        qsort(keys, k, sizeof *keys, cmp_keys);
        for (size_t i = 0; i < k; i++) {
            json_t *c = trn_rcp_read_back(json_object_get(v, keys[i]));
            if (!c || json_object_set_new(o, keys[i], c) != 0) {
                free(keys);
                json_decref(o);
                return NULL;
            }
        }
        free(keys);
        return o;
    }
    case JSON_ARRAY: {
        json_t *a = json_array();
        for (size_t i = 0; a && i < json_array_size(v); i++) {
            json_t *c = trn_rcp_read_back(json_array_get(v, i));
            if (!c || json_array_append_new(a, c) != 0) {
                json_decref(a);
                return NULL;
            }
        }
        return a;
    }
    case JSON_REAL: {
        char num[40];
        trn_rcp_format_double(json_real_value(v), num);
        if (strpbrk(num, ".eE")) return json_real(trn_rcp_parse_double(num));
        errno = 0;
        char *end;
        const long long whole = strtoll(num, &end, 10);
        if (errno == ERANGE || *end) return NULL;
        return json_integer((json_int_t)whole);
    }
    default:
        return json_deep_copy(v);
    }
}

struct trn_recipe_model *trn_rcp_model_ref(struct trn_recipe_model *m)
{
    if (m) atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

/* The graph part of m emptied. */
static void drop_graph(struct trn_recipe_model *m)
{
    free(m->text);
    json_decref(m->tree);
    trn_graph_dispose(&m->graph);
    free(m->identity);
    json_decref(m->identity_tree);
    m->text = m->identity = NULL;
    m->tree = m->identity_tree = NULL;
}

void trn_rcp_model_release(struct trn_recipe_model *m)
{
    if (!m || atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) != 1) return;
    drop_graph(m);
    for (uint32_t k = 0; k < m->evolution_count; k++) {
        free(m->evolutions[k].text);
        json_decref(m->evolutions[k].tree);
        trn_graph_dispose(&m->evolutions[k].graph);
    }
    free(m->evolutions);
    free(m);
}

/* recipe->model, made empty when the recipe has none. NULL when out of memory. */
static struct trn_recipe_model *model_for(trn_recipe *recipe)
{
    if (!recipe->model) {
        recipe->model = calloc(1, sizeof *recipe->model);
        if (recipe->model) atomic_init(&recipe->model->refs, 1);
    }
    return recipe->model;
}

static char *copy_text(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

trn_status trn_rcp_model_keep_evolution(trn_recipe *recipe, uint32_t index, json_t *tree,
                                        trn_graph *graph)
{
    struct trn_recipe_model *m = model_for(recipe);
    char *text = m ? copy_text(recipe->landforms[index].evolution) : NULL;
    if (text && index >= m->evolution_count) {
        trn_rcp_evolution *grown = realloc(m->evolutions, (index + 1u) * sizeof *grown);
        if (grown) {
            memset(grown + m->evolution_count, 0,
                   (index + 1u - m->evolution_count) * sizeof *grown);
            m->evolutions = grown;
            m->evolution_count = index + 1u;
        }
    }
    if (!text || index >= m->evolution_count) {
        free(text);
        json_decref(tree);
        trn_graph_dispose(graph);
        return TRN_ERR_NO_MEMORY;
    }
    trn_rcp_evolution *e = &m->evolutions[index];
    free(e->text);
    json_decref(e->tree);
    trn_graph_dispose(&e->graph);
    e->text = text;
    e->tree = tree;
    e->graph = *graph;
    memset(graph, 0, sizeof *graph);
    return TRN_OK;
}

trn_status trn_rcp_model_build(trn_recipe *recipe, const json_t *v)
{
    if (!recipe->graph_json) return TRN_OK;
    struct trn_recipe_model *m = model_for(recipe);
    if (!m) return TRN_ERR_NO_MEMORY;
    drop_graph(m);
    m->text = copy_text(recipe->graph_json);
    m->tree = trn_rcp_read_back(v);
    trn_status st = m->text ? TRN_OK : TRN_ERR_NO_MEMORY;
    if (!st && m->tree) {
        trn_error e;
        st = trn_graph_parse_tree(m->tree, NULL, 0, NULL, NULL, &m->graph, &e);
        if (!st) st = trn_graph_to_json(&m->graph, true, &m->identity, NULL, &e);
        if (!st) {
            /* The identity's own tree, for the canonical text a cache key hashes. */
            trn_json_parse_counted();
            m->identity_tree = json_loads(m->identity, JSON_REJECT_DUPLICATES, NULL);
            if (!m->identity_tree) st = TRN_ERR_NO_MEMORY;
        }
    }
    if (st || !m->tree || !m->identity_tree) {
        /* No graph in the model: a graph that does not read back is reported by validation,
         * as before. */
        drop_graph(m);
        return st == TRN_ERR_NO_MEMORY ? st : TRN_OK;
    }
    return TRN_OK;
}
