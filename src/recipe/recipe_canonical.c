/* Canonical recipe JSON (sorted keys, defaults omitted, shortest numbers) and the cache key. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "core/numtext.h"
#include "graph/graph_internal.h"
#include "recipe/recipe_internal.h"
#include "recipe/recipe_model.h"

/* json_object_set_new that remembers failure (NULL values included). */
static void put_new(json_t *o, const char *key, json_t *v, bool *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0) *ok = false;
}

static json_t *pair(double a, double b)
{
    json_t *arr = json_array();
    if (arr &&
        (json_array_append_new(arr, json_real(a)) || json_array_append_new(arr, json_real(b)))) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

static void put_blob(json_t *o, const char *key, const char *text, bool *ok);

static json_t *landform_json(const trn_recipe *r, const trn_landform *lf, bool *ok)
{
    json_t *o = json_object();
    if (!o) {
        *ok = false;
        return NULL;
    }
    trn_landform d;
    trn_rcp_landform_defaults(&d);
    if (lf->profile != d.profile)
        put_new(o, "profile", json_string(lf->profile == TRN_PROFILE_RIDGED ? "ridged" : "fbm"),
                ok);
    if (lf->base_height != d.base_height) put_new(o, "base_height", json_real(lf->base_height), ok);
    if (lf->height_variation != d.height_variation)
        put_new(o, "height_variation", json_real(lf->height_variation), ok);
    if (lf->feature_size != d.feature_size)
        put_new(o, "feature_size", json_real(lf->feature_size), ok);
    if (lf->roughness != d.roughness) put_new(o, "roughness", json_real(lf->roughness), ok);
    if (lf->octaves != d.octaves) put_new(o, "octaves", json_integer(lf->octaves), ok);
    if (lf->warp_amplitude != d.warp_amplitude)
        put_new(o, "warp_amplitude", json_real(lf->warp_amplitude), ok);
    if (lf->warp_feature_size != d.warp_feature_size)
        put_new(o, "warp_feature_size", json_real(lf->warp_feature_size), ok);
    if (lf->stretch != d.stretch) put_new(o, "stretch", json_real(lf->stretch), ok);
    if (lf->heading != d.heading) put_new(o, "heading", json_real(lf->heading), ok);
    const trn_rcp_evolution *e = trn_rcp_model_evolution_of(r, lf); /* read with the recipe */
    if (e)
        put_new(o, "evolution", json_deep_copy(e->tree), ok);
    else
        put_blob(o, "evolution", lf->evolution, ok);
    return o;
}

static json_t *biome_json(const trn_biome *b, bool *ok)
{
    json_t *o = json_object();
    if (!o) {
        *ok = false;
        return NULL;
    }
    json_t *color = json_array();
    if (!color) *ok = false;
    for (int c = 0; color && c < 4; c++) {
        /* The float's shortest decimal, so 0.3 stays 0.3 rather than 0.30000001192092896. */
        char num[40];
        trn_rcp_format_float(b->color[c], num);
        if (json_array_append_new(color, json_real(trn_rcp_parse_double(num))) != 0) *ok = false;
    }
    put_new(o, "color", color, ok);
    if (b->material) put_new(o, "material", json_string(b->material), ok);
    if (b->texture_scale != 1) put_new(o, "texture_scale", json_real(b->texture_scale), ok);
    if (b->landform) put_new(o, "landform", json_string(b->landform), ok);
    if (!b->allow_snow) put_new(o, "allow_snow", json_false(), ok);
    if (b->groundmodel[0]) put_new(o, "groundmodel", json_string(b->groundmodel), ok);
    return o;
}

static json_t *rule_json(const trn_rule *r, bool *ok)
{
    json_t *o = json_object();
    if (!o) {
        *ok = false;
        return NULL;
    }
    put_new(o, "id", json_string(r->id), ok);
    put_new(o, "biome", json_string(r->biome), ok);
    if (r->layer) put_new(o, "layer", json_string(r->layer), ok);
    if (r->priority != 0) put_new(o, "priority", json_real(r->priority), ok);
    if (r->blend != 0) put_new(o, "blend", json_real(r->blend), ok);
    const struct {
        const char *key;
        const trn_band *band;
    } bands[] = {{"elevation", &r->elevation},
                 {"slope", &r->slope},
                 {"moisture", &r->moisture},
                 {"water_distance", &r->water_distance}};
    for (size_t i = 0; i < sizeof bands / sizeof bands[0]; i++)
        if (bands[i].band->set)
            put_new(o, bands[i].key, pair(bands[i].band->min, bands[i].band->max), ok);
    if (r->substrate_mask) {
        /* Order has no meaning: names sorted. */
        static const trn_substrate sorted[] = {TRN_SUBSTRATE_ROCK, TRN_SUBSTRATE_SAND,
                                               TRN_SUBSTRATE_SOIL, TRN_SUBSTRATE_WET};
        json_t *list = json_array();
        if (!list) *ok = false;
        for (size_t i = 0; list && i < 4; i++)
            if (r->substrate_mask & (1u << sorted[i]))
                if (json_array_append_new(list, json_string(trn_substrate_name(sorted[i]))) != 0)
                    *ok = false;
        put_new(o, "substrate", list, ok);
    }
    return o;
}

static void put_blob(json_t *o, const char *key, const char *text, bool *ok)
{
    if (!text) return;
    trn_json_parse_counted();
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    put_new(o, key, v, ok);
}

/* The graph from the recipe's model when it has one (the tree its text reads back as, or for
 * a cache key's view the identity's), else read from the text. */
static void put_graph(json_t *o, const trn_recipe *r, bool *ok)
{
    const struct trn_recipe_model *m = r->model;
    if (m && r->graph_json && r->graph_json == m->identity)
        put_new(o, "graph", json_deep_copy(m->identity_tree), ok);
    else if ((m = trn_rcp_model_of(r)))
        put_new(o, "graph", json_deep_copy(m->tree), ok);
    else
        put_blob(o, "graph", r->graph_json, ok);
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

static json_t *layer_json(const trn_layer *l, bool *ok)
{
    json_t *o = json_object();
    if (!o) {
        *ok = false;
        return NULL;
    }
    put_new(o, "id", json_string(l->id), ok);
    if (l->name && strcmp(l->name, l->id) != 0) put_new(o, "name", json_string(l->name), ok);
    /* The group is implied by an id that is a group name (as the parser reads it). */
    if (strcmp(l->id, trn_layer_group_name(l->group)) != 0)
        put_new(o, "group", json_string(trn_layer_group_name(l->group)), ok);
    if (!l->enabled) put_new(o, "enabled", json_false(), ok);
    return o;
}

/* Stamp positions always as "points" (a "center" reads back as one point), so the two spellings
 * of a single stamp have one canonical form and one cache key. */
static json_t *stroke_json(const trn_stroke *s, bool *ok)
{
    json_t *o = json_object();
    if (!o) {
        *ok = false;
        return NULL;
    }
    put_new(o, "type", json_string(trn_stroke_kind_name(s->kind)), ok);
    if (s->layer) put_new(o, "layer", json_string(s->layer), ok);
    if (s->kind == TRN_STROKE_PROTECT) {
        json_t *grid = json_array();
        if (grid && (json_array_append_new(grid, json_integer(s->grid_cells_x)) ||
                     json_array_append_new(grid, json_integer(s->grid_cells_z))))
            *ok = false;
        put_new(o, "grid", grid, ok);
        json_t *samples = json_array();
        uint32_t row = s->grid_cells_x + 1;
        for (uint32_t i = 0; samples && i < s->sample_count; i++) {
            char num[40];
            trn_rcp_format_float(s->sample_height[i], num);
            json_t *e = json_array();
            if (!e || json_array_append_new(e, json_integer(s->sample_index[i] % row)) ||
                json_array_append_new(e, json_integer(s->sample_index[i] / row)) ||
                json_array_append_new(e, json_real(trn_rcp_parse_double(num))) ||
                json_array_append_new(samples, e))
                *ok = false;
        }
        put_new(o, "samples", samples, ok);
        return o;
    }
    put_new(o, "radius", json_real(s->radius), ok);
    if (s->strength != 1) put_new(o, "strength", json_real(s->strength), ok);
    if (s->falloff != 0.5) put_new(o, "falloff", json_real(s->falloff), ok);
    if (s->kind == TRN_STROKE_FLATTEN) put_new(o, "target_height", json_real(s->target_height), ok);
    if (s->kind == TRN_STROKE_REGION) put_new(o, "biome", json_string(s->biome), ok);
    if (s->kind == TRN_STROKE_EXCLUSION && s->erase) put_new(o, "mode", json_string("erase"), ok);
    json_t *points = json_array();
    for (uint32_t i = 0; points && i < s->point_count; i++)
        if (json_array_append_new(points, pair(s->points[i * 2], s->points[i * 2 + 1])) != 0)
            *ok = false;
    put_new(o, "points", points, ok);
    return o;
}

/* Consecutive entries of a section with the same settings are one entry with their points
 * in sequence (what terrane compact writes): the stamps and so the result are the same, and
 * so is the cache key, however the strokes were split. */
static void put_strokes(json_t *o, const trn_recipe *r, const char *section, bool *ok)
{
    json_t *list = NULL;
    const trn_stroke *prev = NULL;
    json_t *prev_points = NULL;
    uint32_t merged_count = 0;
    for (uint32_t i = 0; i < r->stroke_count; i++) {
        const trn_stroke *st = &r->strokes[i];
        const char *s = st->kind == TRN_STROKE_REGION      ? "regions"
                        : st->kind == TRN_STROKE_EXCLUSION ? "exclusions"
                                                           : "edits";
        if (strcmp(s, section) != 0) continue;
        if (!list && !(list = json_array())) {
            *ok = false;
            return;
        }
        if (prev && prev_points && trn_rcp_strokes_mergeable(prev, st) &&
            (uint64_t)merged_count + st->point_count <= TRN_RCP_MAX_POINTS) {
            for (uint32_t p = 0; p < st->point_count; p++)
                if (json_array_append_new(prev_points,
                                          pair(st->points[p * 2], st->points[p * 2 + 1])) != 0)
                    *ok = false;
            merged_count += st->point_count;
            continue;
        }
        json_t *entry = stroke_json(st, ok);
        if (json_array_append_new(list, entry) != 0) *ok = false;
        prev = st;
        prev_points = entry ? json_object_get(entry, "points") : NULL;
        merged_count = st->point_count;
    }
    if (list) put_new(o, section, list, ok);
}

json_t *trn_rcp_recipe_to_json(const trn_recipe *r)
{
    bool ok = true;
    json_t *o = json_object();
    if (!o) return NULL;
    put_new(o, "size", pair(r->size_x, r->size_z), &ok);
    json_t *res = json_array();
    if (res && (json_array_append_new(res, json_integer(r->cells_x)) ||
                json_array_append_new(res, json_integer(r->cells_z))))
        ok = false;
    put_new(o, "resolution", res, &ok);
    put_new(o, "seed", json_integer((json_int_t)r->seed), &ok);
    if (r->chunk_cells != TRN_RCP_CHUNK_CELLS)
        put_new(o, "chunk_cells", json_integer(r->chunk_cells), &ok);
    if (r->has_sea_level) put_new(o, "sea_level", json_real(r->sea_level), &ok);
    if (r->has_snow_line) put_new(o, "snow_line", json_real(r->snow_line), &ok);
    put_new(o, "default_landform", json_string(r->default_landform), &ok);
    json_t *lfs = json_object();
    for (uint32_t i = 0; lfs && i < r->landform_count; i++)
        put_new(lfs, r->landforms[i].name, landform_json(r, &r->landforms[i], &ok), &ok);
    put_new(o, "landforms", lfs, &ok);
    put_new(o, "default_biome", json_string(r->default_biome), &ok);
    json_t *bs = json_object();
    for (uint32_t i = 0; bs && i < r->biome_count; i++)
        put_new(bs, r->biomes[i].name, biome_json(&r->biomes[i], &ok), &ok);
    put_new(o, "biomes", bs, &ok);
    if (r->rule_count) {
        json_t *rules = json_array();
        for (uint32_t i = 0; rules && i < r->rule_count; i++)
            if (json_array_append_new(rules, rule_json(&r->rules[i], &ok)) != 0) ok = false;
        put_new(o, "rules", rules, &ok);
    }
    if (!layers_are_defaults(r)) {
        json_t *layers = json_array();
        for (uint32_t i = 0; layers && i < r->layer_count; i++)
            if (json_array_append_new(layers, layer_json(&r->layers[i], &ok)) != 0) ok = false;
        put_new(o, "layers", layers, &ok);
    }
    put_strokes(o, r, "regions", &ok);
    put_strokes(o, r, "edits", &ok);
    put_strokes(o, r, "exclusions", &ok);
    put_blob(o, "palette", r->palette_json, &ok);
    put_graph(o, r, &ok);
    if (r->preset_id) put_new(o, "preset_id", json_string(r->preset_id), &ok);
    if (r->has_preset_version) put_new(o, "preset_version", json_real(r->preset_version), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
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
    json_t *tree = trn_rcp_recipe_to_json(recipe);
    char *out = tree ? trn_rcp_canonical_text(tree) : NULL;
    json_decref(tree);
    if (!out)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory printing the canonical recipe");
    *text = out;
    if (size) *size = strlen(out);
    return TRN_OK;
}

static trn_status cache_key(const trn_recipe *recipe, bool validate, uint64_t *key, trn_error *err);

trn_status trn_recipe_cache_key(const trn_recipe *recipe, uint64_t *key, trn_error *err)
{
    return cache_key(recipe, true, key, err);
}

trn_status trn_rcp_cache_key_of_valid(const trn_recipe *recipe, uint64_t *key, trn_error *err)
{
    return cache_key(recipe, false, key, err);
}

/* The generator version and the canonical text (with the graph's identity) of recipe, hashed
 * into state (reset here). */
static trn_status hash_text(const trn_recipe *recipe, bool validate, XXH64_state_t *state,
                            trn_error *err)
{
    char *text = NULL;
    size_t size = 0;
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
    trn_status st = validate ? trn_recipe_canonical_json(&view, &text, &size, err)
                             : canonical_text(&view, &text, &size, err);
    free(identity);
    if (st) return st;
    /* Hashed bytes (docs/recipes.md): the generator version as 4 bytes little-endian, then
     * the canonical JSON, no terminator; XXH64 with seed 0. */
    uint32_t version = TRN_GENERATOR_VERSION;
    unsigned char le[4] = {(unsigned char)(version & 0xFF), (unsigned char)((version >> 8) & 0xFF),
                           (unsigned char)((version >> 16) & 0xFF),
                           (unsigned char)((version >> 24) & 0xFF)};
    XXH64_reset(state, 0);
    XXH64_update(state, le, sizeof le);
    XXH64_update(state, text, size);
    free(text);
    return TRN_OK;
}

/* validate false: the caller has just validated recipe (a generation), so its text is not
 * checked again. */
static trn_status cache_key(const trn_recipe *recipe, bool validate, uint64_t *key, trn_error *err)
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
    uint64_t print = 0;
    const bool printed = recipe->model && trn_rcp_fingerprint(recipe, &print);
    trn_status st = TRN_OK;
    if (printed && trn_rcp_model_key_state(recipe, print, state)) {
        if (validate) st = trn_recipe_validate(recipe, err);
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
