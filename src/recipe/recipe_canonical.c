/* Canonical recipe JSON (sorted keys, defaults omitted, shortest numbers) and the cache key. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "core/numtext.h"
#include "graph/graph_internal.h"
#include "recipe/recipe_fields.h"
#include "recipe/recipe_internal.h"
#include "recipe/recipe_model.h"

/* Canonical text is written straight from the recipe, object keys in bytewise order, each
 * field by its row (recipe_fields.c) and the sections by the code below; the same writer fills a
 * text buffer (trn_recipe_canonical_json) or hashes it without keeping it (the cache key). What
 * it writes is what printing the recipe's JSON tree wrote (docs/recipes.md). */

static void put(trn_rcp_buf *b, const char *s)
{
    trn_rcp_buf_puts(b, s);
}

/* A JSON text kept in the recipe (a palette, an evolution or graph read from text), as
 * canonical text; text that does not read fails the buffer. */
static void emit_blob(trn_rcp_buf *b, const char *text)
{
    trn_json_parse_counted();
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    if (!v) {
        b->failed = true;
        return;
    }
    trn_rcp_emit_json(b, v, 0, 0);
    json_decref(v);
}

/* ',"key":' (no comma for the first of an object). */
static void key(trn_rcp_buf *b, const char *name, size_t *n)
{
    if ((*n)++) put(b, ",");
    trn_rcp_emit_key(b, name);
}

/* base's fields by rows, in key order; custom rows through custom(b, row, user, &n). */
typedef void (*custom_fn)(trn_rcp_buf *b, const trn_rcp_field *row, const void *base,
                          const void *user, size_t *n);

static void emit_object(trn_rcp_buf *b, const trn_rcp_field *rows, const void *base,
                        custom_fn custom, const void *user)
{
    const trn_rcp_field *sorted[64];
    const size_t count = trn_rcp_field_sorted(rows, sorted);
    size_t n = 0;
    put(b, "{");
    for (size_t i = 0; i < count; i++) {
        if (sorted[i]->kind == TRN_RCP_CUSTOM)
            custom(b, sorted[i], base, user, &n);
        else if (trn_rcp_field_emit(b, sorted[i], base, n > 0))
            n++;
    }
    put(b, "}");
}

static void landform_custom(trn_rcp_buf *b, const trn_rcp_field *row, const void *base,
                            const void *user, size_t *n)
{
    const trn_landform *lf = base;
    if (strcmp(row->name, "evolution") != 0 || !lf->evolution) return;
    key(b, "evolution", n);
    const trn_rcp_evolution *e = trn_rcp_model_evolution_of(user, lf); /* read with the recipe */
    if (e && e->canonical)
        put(b, e->canonical);
    else if (e)
        trn_rcp_emit_json(b, e->tree, 0, 0);
    else
        emit_blob(b, lf->evolution);
}

static void biome_custom(trn_rcp_buf *b, const trn_rcp_field *row, const void *base,
                         const void *user, size_t *n)
{
    (void)user;
    const trn_biome *bi = base;
    if (strcmp(row->name, "groundmodel") != 0 || !bi->groundmodel[0]) return;
    char name[sizeof bi->groundmodel + 1];
    memcpy(name, bi->groundmodel, sizeof bi->groundmodel);
    name[sizeof bi->groundmodel] = '\0';
    key(b, "groundmodel", n);
    trn_rcp_emit_text(b, name);
}

static void rule_custom(trn_rcp_buf *b, const trn_rcp_field *row, const void *base,
                        const void *user, size_t *n)
{
    (void)user;
    const trn_rule *r = base;
    if (strcmp(row->name, "substrate") != 0 || !r->substrate_mask) return;
    /* Order has no meaning: names sorted. */
    static const trn_substrate sorted[] = {TRN_SUBSTRATE_ROCK, TRN_SUBSTRATE_SAND,
                                           TRN_SUBSTRATE_SOIL, TRN_SUBSTRATE_WET};
    key(b, "substrate", n);
    put(b, "[");
    size_t k = 0;
    for (size_t i = 0; i < 4; i++)
        if (r->substrate_mask & (1u << sorted[i])) {
            if (k++) put(b, ",");
            trn_rcp_emit_text(b, trn_substrate_name(sorted[i]));
        }
    put(b, "]");
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(**(const char *const *const *)a, **(const char *const *const *)b);
}

/* Landforms or biomes: an object keyed by name, names in bytewise order. */
static void emit_named(trn_rcp_buf *b, const trn_recipe *r, const void *items, size_t stride,
                       uint32_t count, const trn_rcp_field *rows, custom_fn custom)
{
    /* Each item's name is its first member. */
    const char *const **order = malloc((count ? count : 1u) * sizeof *order);
    if (!order) {
        b->failed = true;
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        order[i] = (const char *const *)(const void *)((const char *)items + (size_t)i * stride);
        if (!*order[i]) b->failed = true;
    }
    if (!b->failed) qsort(order, count, sizeof *order, cmp_names);
    put(b, "{");
    for (uint32_t i = 0; i < count && !b->failed; i++) {
        if (i) put(b, ",");
        trn_rcp_emit_key(b, *order[i]);
        emit_object(b, rows, order[i], custom, r);
    }
    put(b, "}");
    free(order);
}

static bool layers_are_defaults(const trn_recipe *r)
{
    uint32_t n, dn;
    const trn_layer *l = trn_recipe_layers(r, &n);
    const trn_layer *d = trn_recipe_layers(NULL, &dn);
    if (l == d) return true;
    if (n != dn) return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(l[i].id, d[i].id) != 0 || l[i].group != d[i].group || !l[i].enabled ||
            (l[i].name && strcmp(l[i].name, l[i].id) != 0))
            return false;
    return true;
}

static void emit_layer(trn_rcp_buf *b, const trn_layer *l)
{
    size_t n = 0;
    put(b, "{");
    if (!l->enabled) {
        key(b, "enabled", &n);
        put(b, "false");
    }
    /* The group is implied by an id that is a group name (as the parser reads it). */
    if (!l->id) b->failed = true;
    if (l->id && strcmp(l->id, trn_layer_group_name(l->group)) != 0) {
        key(b, "group", &n);
        trn_rcp_emit_text(b, trn_layer_group_name(l->group));
    }
    key(b, "id", &n);
    trn_rcp_emit_text(b, l->id);
    if (l->id && l->name && strcmp(l->name, l->id) != 0) {
        key(b, "name", &n);
        trn_rcp_emit_text(b, l->name);
    }
    put(b, "}");
}

static const char *section_of(const trn_stroke *s)
{
    return s->kind == TRN_STROKE_REGION      ? "regions"
           : s->kind == TRN_STROKE_EXCLUSION ? "exclusions"
                                             : "edits";
}

static void emit_pair(trn_rcp_buf *b, double x, double z)
{
    put(b, "[");
    trn_rcp_emit_double(b, x);
    put(b, ",");
    trn_rcp_emit_double(b, z);
    put(b, "]");
}

/* Consecutive entries of a section with the same settings are one entry with their points in
 * sequence (what terrane compact writes): the stamps and so the result are the same, and so is
 * the cache key, however the strokes were split. The strokes r->strokes[first..end) of section
 * that one entry holds: end is where the next entry starts. */
static uint32_t merged_end(const trn_recipe *r, const char *section, uint32_t first)
{
    const trn_stroke *a = &r->strokes[first];
    uint64_t points = a->point_count;
    uint32_t end = first + 1;
    for (uint32_t i = first + 1; i < r->stroke_count; i++) {
        const trn_stroke *s = &r->strokes[i];
        if (strcmp(section_of(s), section) != 0) continue;
        if (!trn_rcp_strokes_mergeable(a, s) || points + s->point_count > TRN_RCP_MAX_POINTS)
            break;
        points += s->point_count;
        end = i + 1;
    }
    return end;
}

/* Stamp positions always as "points" (a "center" reads back as one point), so the two spellings
 * of a single stamp have one canonical form and one cache key. Keys in bytewise order: rows, the
 * stroke's rows that apply to its kind (sorted), numbers left out at their default. */
static void emit_stroke(trn_rcp_buf *b, const trn_recipe *r, const trn_stroke_field *const *rows,
                        const char *section, uint32_t first, uint32_t end)
{
    const trn_stroke *s = &r->strokes[first];
    size_t n = 0;
    put(b, "{");
    for (const trn_stroke_field *const *rp = rows; *rp; rp++) {
        const trn_stroke_field *f = *rp;
        const void *at = (const char *)s + f->offset;
        switch (f->value) {
        case TRN_STROKE_NUMBER: {
            const double v = *(const double *)at;
            if (!f->always && v == f->def) break;
            key(b, f->name, &n);
            trn_rcp_emit_double(b, v);
            break;
        }
        case TRN_STROKE_TEXT: {
            const char *v = *(const char *const *)at;
            if (!f->always && !v) break;
            key(b, f->name, &n);
            trn_rcp_emit_text(b, v);
            break;
        }
        case TRN_STROKE_TYPE:
            key(b, f->name, &n);
            trn_rcp_emit_text(b, trn_stroke_kind_name(s->kind));
            break;
        case TRN_STROKE_CENTER: /* written as points */
            break;
        case TRN_STROKE_MODE:
            if (s->erase) {
                key(b, f->name, &n);
                put(b, "\"erase\"");
            }
            break;
        case TRN_STROKE_POINTS: {
            key(b, f->name, &n);
            put(b, "[");
            size_t k = 0;
            for (uint32_t i = first; i < end; i++) {
                const trn_stroke *p = &r->strokes[i];
                if (strcmp(section_of(p), section) != 0) continue;
                for (uint32_t q = 0; q < p->point_count; q++) {
                    if (k++) put(b, ",");
                    emit_pair(b, p->points[q * 2], p->points[q * 2 + 1]);
                }
            }
            put(b, "]");
            break;
        }
        case TRN_STROKE_GRID:
            key(b, f->name, &n);
            put(b, "[");
            trn_rcp_emit_whole(b, s->grid_cells_x);
            put(b, ",");
            trn_rcp_emit_whole(b, s->grid_cells_z);
            put(b, "]");
            break;
        case TRN_STROKE_SAMPLES: {
            key(b, f->name, &n);
            put(b, "[");
            const uint32_t row = s->grid_cells_x + 1;
            for (uint32_t i = 0; i < s->sample_count; i++) {
                if (i) put(b, ",");
                put(b, "[");
                trn_rcp_emit_whole(b, s->sample_index[i] % row);
                put(b, ",");
                trn_rcp_emit_whole(b, s->sample_index[i] / row);
                put(b, ",");
                trn_rcp_emit_float(b, s->sample_height[i]);
                put(b, "]");
            }
            put(b, "]");
            break;
        }
        }
    }
    put(b, "}");
}

static void emit_strokes(trn_rcp_buf *b, const trn_recipe *r, const char *section, size_t *n)
{
    /* Each kind's rows in key order, made when a stroke of the kind first comes. */
    const trn_stroke_field *rows[TRN_STROKE_KIND_COUNT][16];
    bool made[TRN_STROKE_KIND_COUNT] = {false};
    size_t entries = 0;
    for (uint32_t i = 0; i < r->stroke_count;) {
        if (strcmp(section_of(&r->strokes[i]), section) != 0) {
            i++;
            continue;
        }
        if (!entries++) {
            key(b, section, n);
            put(b, "[");
        } else {
            put(b, ",");
        }
        const uint32_t end = merged_end(r, section, i);
        const unsigned kind = (unsigned)r->strokes[i].kind;
        if (kind >= TRN_STROKE_KIND_COUNT) { /* never after validation */
            b->failed = true;
            return;
        }
        if (!made[kind]) {
            size_t k = 0;
            for (const trn_stroke_field *const *f = trn_stroke_fields_sorted; *f; f++)
                if ((*f)->kinds & (1u << kind)) rows[kind][k++] = *f;
            rows[kind][k] = NULL;
            made[kind] = true;
        }
        emit_stroke(b, r, rows[kind], section, i, end);
        /* The next entry: the first stroke of the section past this one's last. */
        uint32_t next = i + 1;
        for (uint32_t q = i + 1; q < end; q++)
            if (strcmp(section_of(&r->strokes[q]), section) == 0) next = q + 1;
        i = next;
    }
    if (entries) put(b, "]");
}

/* The graph from the recipe's model when it has one (the tree its text reads back as, or for
 * a cache key's view the identity's), else read from the text. */
static void emit_graph(trn_rcp_buf *b, const trn_recipe *r, size_t *n)
{
    if (!r->graph_json) return;
    key(b, "graph", n);
    const struct trn_recipe_model *m = r->model;
    /* The model's trees as the canonical text written when the model was made. */
    if (m && r->graph_json == m->identity)
        put(b, m->identity_canonical);
    else if ((m = trn_rcp_model_of(r)))
        put(b, m->tree_canonical);
    else
        emit_blob(b, r->graph_json);
}

static void recipe_custom(trn_rcp_buf *b, const trn_rcp_field *row, const void *base,
                          const void *user, size_t *n)
{
    (void)user;
    const trn_recipe *r = base;
    const char *name = row->name;
    if (strcmp(name, "landforms") == 0) {
        key(b, name, n);
        emit_named(b, r, r->landforms, sizeof *r->landforms, r->landform_count,
                   trn_rcp_landform_fields, landform_custom);
    } else if (strcmp(name, "biomes") == 0) {
        key(b, name, n);
        emit_named(b, r, r->biomes, sizeof *r->biomes, r->biome_count, trn_rcp_biome_fields,
                   biome_custom);
    } else if (strcmp(name, "rules") == 0) {
        if (!r->rule_count) return;
        key(b, name, n);
        put(b, "[");
        for (uint32_t i = 0; i < r->rule_count; i++) {
            if (i) put(b, ",");
            emit_object(b, trn_rcp_rule_fields, &r->rules[i], rule_custom, r);
        }
        put(b, "]");
    } else if (strcmp(name, "layers") == 0) {
        if (layers_are_defaults(r)) return;
        key(b, name, n);
        put(b, "[");
        for (uint32_t i = 0; i < r->layer_count; i++) {
            if (i) put(b, ",");
            emit_layer(b, &r->layers[i]);
        }
        put(b, "]");
    } else if (strcmp(name, "regions") == 0 || strcmp(name, "edits") == 0 ||
               strcmp(name, "exclusions") == 0) {
        emit_strokes(b, r, name, n);
    } else if (strcmp(name, "palette") == 0) {
        if (!r->palette_json) return;
        key(b, name, n);
        emit_blob(b, r->palette_json);
    } else if (strcmp(name, "graph") == 0) {
        emit_graph(b, r, n);
    }
}

/* The canonical text of r into b (a text or a hash); b->failed when out of memory or when r
 * holds what a JSON tree could not (text that is not UTF-8, a non-finite number, a kept text
 * that does not read). */
static void emit_recipe(trn_rcp_buf *b, const trn_recipe *r)
{
    emit_object(b, trn_rcp_recipe_fields, r, recipe_custom, r);
}

json_t *trn_rcp_recipe_to_json(const trn_recipe *r)
{
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    emit_recipe(&b, r);
    json_t *tree = NULL;
    if (!b.failed) {
        trn_json_parse_counted();
        tree = json_loads(b.data, JSON_REJECT_DUPLICATES, NULL);
    }
    trn_rcp_buf_free(&b);
    return tree;
}

static trn_status canonical_text(const trn_recipe *recipe, char **text, size_t *size,
                                 trn_error *err);

trn_status trn_recipe_canonical_json(const trn_recipe *recipe, char **text, size_t *size,
                                     trn_error *err)
{
    if (text) *text = NULL;
    if (size) *size = 0;
    if (!recipe || !text)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_canonical_json: recipe and text are required");
    trn_status st = trn_recipe_validate(recipe, err);
    if (st) return st;
    return canonical_text(recipe, text, size, err);
}

/* The canonical text of a recipe known to be valid. */
static trn_status canonical_text(const trn_recipe *recipe, char **text, size_t *size,
                                 trn_error *err)
{
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    emit_recipe(&b, recipe);
    if (b.failed || !b.data) {
        trn_rcp_buf_free(&b);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory printing the canonical recipe");
    }
    *text = b.data;
    if (size) *size = b.len;
    return TRN_OK;
}

static trn_status cache_key(const trn_recipe *recipe, bool validate, uint64_t print, uint64_t *key,
                            trn_error *err);

trn_status trn_recipe_cache_key(const trn_recipe *recipe, uint64_t *key, trn_error *err)
{
    return cache_key(recipe, true, 0, key, err);
}

trn_status trn_rcp_cache_key_of_valid(const trn_recipe *recipe, uint64_t *key, trn_error *err)
{
    return cache_key(recipe, false, 0, key, err);
}

trn_status trn_rcp_cache_key_of_print(const trn_recipe *recipe, uint64_t print, uint64_t *key,
                                      trn_error *err)
{
    return cache_key(recipe, false, print, key, err);
}

/* The generator version and the canonical text (with the graph's identity) of recipe, hashed
 * into state (reset here). */
static trn_status hash_text(const trn_recipe *recipe, bool validate, XXH64_state_t *state,
                            trn_error *err)
{
    /* The graph enters by its identity (no positions, no comment nodes): moving a node or
     * editing a note is not a change to the terrain. */
    trn_recipe view = *recipe;
    char *identity = NULL;
    const struct trn_recipe_model *m = trn_rcp_model_of(recipe);
    if (m) {
        view.graph_json = m->identity; /* read once with the recipe */
    } else if (recipe->graph_json) {
        identity = trn_graph_identity_of_json(recipe->graph_json);
        if (!identity)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "graph: not a readable graph document (or out of memory)");
        view.graph_json = identity;
    }
    trn_status st = validate ? trn_recipe_validate(&view, err) : TRN_OK;
    if (st) {
        free(identity);
        return st;
    }
    /* Hashed bytes (docs/recipes.md): the generator version as 4 bytes little-endian, then
     * the canonical JSON, no terminator; XXH64 with seed 0. The text is hashed as it is
     * written, never kept. */
    uint32_t version = TRN_GENERATOR_VERSION;
    unsigned char le[4] = {(unsigned char)(version & 0xFF), (unsigned char)((version >> 8) & 0xFF),
                           (unsigned char)((version >> 16) & 0xFF),
                           (unsigned char)((version >> 24) & 0xFF)};
    XXH64_reset(state, 0);
    XXH64_update(state, le, sizeof le);
    char chunk[4096];
    trn_rcp_buf b = {chunk, 0, sizeof chunk, false, state};
    emit_recipe(&b, &view);
    trn_rcp_buf_flush(&b);
    free(identity);
    if (b.failed)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory printing the canonical recipe");
    return TRN_OK;
}

/* validate false: the caller has just validated recipe (a generation), so its text is not
 * checked again. */
static trn_status cache_key(const trn_recipe *recipe, bool validate, uint64_t known, uint64_t *key,
                            trn_error *err)
{
    if (key) *key = 0;
    if (!key)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_cache_key: key is required");
    XXH64_state_t *state = XXH64_createState();
    if (!state)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory hashing a recipe");
    /* A parsed recipe unchanged since its last key (a regeneration) hashes what it hashed then:
     * its canonical text is a function of the content its fingerprint covers. */
    uint64_t print = known; /* the caller's fingerprint of this recipe, or 0 */
    const bool printed = recipe->model && (print || trn_rcp_fingerprint(recipe, &print));
    trn_status st = TRN_OK;
    if (printed && trn_rcp_model_key_state(recipe, print, state)) {
        /* Validation of the fingerprint just taken: a comparison when it passed before. */
        if (validate && !trn_rcp_model_print_valid(recipe, print))
            st = trn_recipe_validate(recipe, err);
    } else {
        st = hash_text(recipe, validate, state, err);
        if (!st && printed) trn_rcp_model_keep_key_state(recipe, print, state);
    }
    if (st) {
        XXH64_freeState(state);
        return st;
    }
    /* The files a graph reads (a DEM) by content: the same text over other ground is another
     * terrain, so they are read every time, never kept. Recipes without such files hash exactly
     * as before. */
    trn_graph_input_files_hash(recipe, state);
    *key = XXH64_digest(state);
    XXH64_freeState(state);
    return TRN_OK;
}
