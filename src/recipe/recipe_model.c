/* A recipe read once: the document's graph object becomes a typed graph and its identity when
 * the recipe is parsed, so generation, cache keys and canonical text read no JSON again; and the
 * fingerprint of the content validation passed, so a generation does not check it again. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "recipe/recipe_fields.h"
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
    free(m->tree_canonical);
    free(m->identity_canonical);
    m->tree_canonical = m->identity_canonical = NULL;
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
        free(m->evolutions[k].canonical);
        trn_graph_dispose(&m->evolutions[k].graph);
    }
    free(m->evolutions);
    XXH64_freeState(m->key_state);
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
    free(e->canonical);
    trn_graph_dispose(&e->graph);
    e->text = text;
    e->tree = tree;
    e->canonical = trn_rcp_canonical_text(tree); /* NULL (out of memory): written from tree */
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
        if (!st) {
            m->tree_canonical = trn_rcp_canonical_text(m->tree);
            m->identity_canonical = trn_rcp_canonical_text(m->identity_tree);
            if (!m->tree_canonical || !m->identity_canonical) st = TRN_ERR_NO_MEMORY;
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

trn_status trn_rcp_model_make(trn_recipe *recipe)
{
    return model_for(recipe) ? TRN_OK : TRN_ERR_NO_MEMORY;
}

/* ---- What validation has seen: a fingerprint of the recipe's content ---- */

/* The fingerprint hashes every member of the recipe's structs: each field by its row
 * (recipe_fields.c), the sections by the code below. tests/test_recipe_fields.c checks that the
 * rows cover every member, so a new member without a row fails there (an unhashed field could
 * change to an invalid value without the recipe being checked again). */

#define PUT(h, v) trn_rcp_hash((h), &(v), sizeof(v))

bool trn_rcp_fingerprint(const trn_recipe *r, uint64_t *print)
{
    *print = 0;
    /* What validation reads only after checking these; a walk must not read further. */
    if ((r->landform_count && !r->landforms) || (r->biome_count && !r->biomes) ||
        (r->rule_count && !r->rules) || (r->layer_count && !r->layers) ||
        (r->stroke_count && !r->strokes) || r->rule_count > TRN_RCP_MAX_RULES ||
        r->layer_count > TRN_RCP_MAX_LAYERS || r->stroke_count > TRN_RCP_MAX_STROKES)
        return false;
    trn_rcp_hasher hh, *h = &hh;
    trn_rcp_hasher_reset(h);
    trn_rcp_fields_hash(h, trn_rcp_recipe_fields, r);
    PUT(h, r->landform_count);
    for (uint32_t i = 0; i < r->landform_count; i++) {
        const trn_landform *l = &r->landforms[i];
        trn_rcp_hash_text(h, l->name);
        trn_rcp_fields_hash(h, trn_rcp_landform_fields, l);
        trn_rcp_hash_text(h, l->evolution);
    }
    PUT(h, r->biome_count);
    for (uint32_t i = 0; i < r->biome_count; i++) {
        const trn_biome *b = &r->biomes[i];
        trn_rcp_hash_text(h, b->name);
        trn_rcp_fields_hash(h, trn_rcp_biome_fields, b);
        PUT(h, b->groundmodel); /* all 32 bytes: an unterminated name differs too */
    }
    PUT(h, r->rule_count);
    for (uint32_t i = 0; i < r->rule_count; i++) {
        const trn_rule *u = &r->rules[i];
        trn_rcp_fields_hash(h, trn_rcp_rule_fields, u);
        PUT(h, u->substrate_mask);
    }
    PUT(h, r->layer_count);
    PUT(h, r->has_layers);
    for (uint32_t i = 0; i < r->layer_count; i++) {
        const trn_layer *l = &r->layers[i];
        trn_rcp_hash_text(h, l->id);
        trn_rcp_hash_text(h, l->name);
        PUT(h, l->group);
        PUT(h, l->enabled);
    }
    PUT(h, r->stroke_count);
    for (uint32_t i = 0; i < r->stroke_count; i++) {
        const trn_stroke *s = &r->strokes[i];
        PUT(h, s->kind);
        trn_rcp_hash_text(h, s->layer);
        PUT(h, s->radius);
        PUT(h, s->strength);
        PUT(h, s->falloff);
        PUT(h, s->target_height);
        trn_rcp_hash_text(h, s->biome);
        PUT(h, s->erase);
        PUT(h, s->point_count);
        PUT(h, s->grid_cells_x);
        PUT(h, s->grid_cells_z);
        PUT(h, s->sample_count);
        /* The arrays validation reads for the stroke's kind, as it reads them. */
        const bool present =
            s->kind == TRN_STROKE_PROTECT ? s->sample_index && s->sample_height : s->points != NULL;
        PUT(h, present);
        if (!present) continue;
        if (s->kind == TRN_STROKE_PROTECT) {
            trn_rcp_hash(h, s->sample_index, (size_t)s->sample_count * sizeof *s->sample_index);
            trn_rcp_hash(h, s->sample_height, (size_t)s->sample_count * sizeof *s->sample_height);
        } else {
            trn_rcp_hash(h, s->points, (size_t)s->point_count * 2u * sizeof *s->points);
        }
    }
    trn_rcp_hash_text(h, r->palette_json);
    trn_rcp_hash_text(h, r->graph_json);
    const uint64_t v = trn_rcp_hasher_digest(h);
    *print = v ? v : 1u;
    return true;
}

bool trn_rcp_model_known_valid(const trn_recipe *recipe, uint64_t *print)
{
    *print = 0;
    if (!recipe->model || !trn_rcp_fingerprint(recipe, print)) return false;
    return atomic_load_explicit(&recipe->model->valid_print, memory_order_relaxed) == *print;
}

bool trn_rcp_model_print_valid(const trn_recipe *recipe, uint64_t print)
{
    return recipe->model && print &&
           atomic_load_explicit(&recipe->model->valid_print, memory_order_relaxed) == print;
}

void trn_rcp_model_mark_valid(const trn_recipe *recipe, uint64_t print)
{
    if (recipe->model && print)
        atomic_store_explicit(&recipe->model->valid_print, print, memory_order_relaxed);
}

bool trn_rcp_model_key_state(const trn_recipe *recipe, uint64_t print, XXH64_state_t *state)
{
    struct trn_recipe_model *m = recipe->model;
    if (!m || atomic_exchange_explicit(&m->key_busy, 1u, memory_order_acquire)) return false;
    const bool kept = m->key_state && m->key_print == print;
    if (kept) XXH64_copyState(state, m->key_state);
    atomic_store_explicit(&m->key_busy, 0u, memory_order_release);
    return kept;
}

void trn_rcp_model_keep_key_state(const trn_recipe *recipe, uint64_t print,
                                  const XXH64_state_t *state)
{
    struct trn_recipe_model *m = recipe->model;
    if (!m || atomic_exchange_explicit(&m->key_busy, 1u, memory_order_acquire)) return;
    if (!m->key_state) m->key_state = XXH64_createState();
    if (m->key_state) {
        XXH64_copyState(m->key_state, state);
        m->key_print = print;
    }
    atomic_store_explicit(&m->key_busy, 0u, memory_order_release);
}
