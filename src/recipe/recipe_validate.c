/* Recipe rules: field ranges, references between sections, limits; trn_recipe_validate. */
#include <math.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "recipe/recipe_fields.h"
#include "recipe/recipe_internal.h"
#include "recipe/recipe_model.h"

/* ---- struct checks --------------------------------------------------------------------- */

typedef struct chk {
    trn_json_path *where;
    trn_json_target *target;
    char *msg;
    size_t msg_size;
} chk;

static trn_status fail(chk *k, trn_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static trn_status fail(chk *k, trn_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->msg, k->msg_size, fmt, ap);
    va_end(ap);
    return code;
}

static void at(chk *k, size_t depth)
{
    k->where->depth = depth;
    *k->target = TRN_JSON_VALUE;
}

static trn_status check_num(chk *k, trn_rcp_num which, double v)
{
    return trn_rcp_num_check(which, v, k->msg, k->msg_size);
}

/* A row of the struct at base, by the row's own rule (rows the document checks itself pass). */
static trn_status check_row(chk *k, const trn_rcp_field *rows, const char *key, const void *base)
{
    return trn_rcp_field_check(trn_rcp_field_find(rows, key), base, k->where, k->msg,
                               k->msg_size);
}

/* Checks v at where + key. */
static trn_status check_field(chk *k, const char *key, trn_rcp_num which, double v)
{
    size_t d = k->where->depth;
    trn_json_path_push_key(k->where, key);
    trn_status st = check_num(k, which, v);
    if (st == TRN_OK) k->where->depth = d;
    return st;
}

static bool empty(const char *s)
{
    return !s || !*s;
}

/* "a, b, c" (truncated) of names, for "no landform named 'x' (have: ...)". */
static void name_list(char *out, size_t size, const char *const *names, size_t stride,
                      uint32_t count)
{
    size_t at_ = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < count && at_ + 1 < size; i++) {
        const char *name = *(const char *const *)((const char *)names + (size_t)i * stride);
        int n = snprintf(out + at_, size - at_, "%s%s", i ? ", " : "", name ? name : "?");
        if (n < 0) break;
        at_ += (size_t)n;
        if (at_ >= size) {
            at_ = size - 1;
            if (size > 4) memcpy(out + size - 4, "...", 4);
        }
    }
}

static trn_status check_landform(chk *k, const trn_recipe *r, uint32_t i)
{
    const trn_landform *lf = &r->landforms[i];
    trn_status st;
    for (const trn_rcp_field *row = trn_rcp_landform_fields; row->name; row++)
        if ((st = trn_rcp_field_check(row, lf, k->where, k->msg, k->msg_size))) return st;
    /* An evolution read with the recipe (the model's) was checked then. */
    if (lf->evolution && !trn_rcp_model_evolution(r, lf)) {
        trn_graph g;
        char key[64], msg[400];
        bool unknown;
        trn_json_path_push_key(k->where, "evolution");
        char place[200];
        trn_json_path_format(k->where, place, sizeof place);
        st = trn_graph_params_parse("stream_power", lf->evolution, place, &g, key, sizeof key, msg,
                                    sizeof msg, &unknown);
        if (st == TRN_ERR_NO_MEMORY) return fail(k, st, "out of memory checking a recipe");
        if (st) {
            if (key[0]) trn_json_path_push_key(k->where, key);
            return fail(k, TRN_ERR_VALIDATION, "%s", msg);
        }
        trn_graph_dispose(&g);
        trn_json_path_pop(k->where);
    }
    return TRN_OK;
}

static trn_status check_biome(chk *k, const trn_recipe *r, uint32_t i)
{
    const trn_biome *b = &r->biomes[i];
    trn_status st;
    /* color, material, texture_scale by their rows; the landform and ground model below. */
    for (const trn_rcp_field *row = trn_rcp_biome_fields; row->name; row++)
        if ((st = trn_rcp_field_check(row, b, k->where, k->msg, k->msg_size))) return st;
    if (b->landform && trn_recipe_find_landform(r, b->landform) < 0) {
        char names[200];
        name_list(names, sizeof names, (const char *const *)&r->landforms[0].name,
                  sizeof r->landforms[0], r->landform_count);
        trn_json_path_push_key(k->where, "landform");
        return fail(k, TRN_ERR_VALIDATION, "no landform named '%s' (landforms: %s)", b->landform,
                    names);
    }
    /* Recipes built in code may set any text; the canonical (upper-case) spelling is required. */
    const char *gm = b->groundmodel[0] ? trn_rcp_groundmodel_find(b->groundmodel) : NULL;
    if (b->groundmodel[0] && (!gm || strcmp(gm, b->groundmodel) != 0)) {
        trn_json_path_push_key(k->where, "groundmodel");
        return fail(k, TRN_ERR_VALIDATION,
                    "'%.31s' is not a BeamNG ground model in its standard spelling (such as "
                    "GRASS, DIRT, SAND, ROCK, GRAVEL, MUD, SNOW)",
                    b->groundmodel);
    }
    return TRN_OK;
}

static trn_status check_rule(chk *k, const trn_recipe *r, uint32_t i)
{
    const trn_rule *rule = &r->rules[i];
    trn_status st;
    if (empty(rule->id)) {
        trn_json_path_push_key(k->where, "id");
        return fail(k, TRN_ERR_VALIDATION, "expected a non-empty rule id");
    }
    for (uint32_t j = 0; j < i; j++) {
        if (r->rules[j].id && strcmp(r->rules[j].id, rule->id) == 0) {
            trn_json_path_push_key(k->where, "id");
            return fail(k, TRN_ERR_VALIDATION,
                        "rule id '%s' is already used by rules[%u]; ids must be unique", rule->id,
                        j);
        }
    }
    if (empty(rule->biome)) {
        trn_json_path_push_key(k->where, "biome");
        return fail(k, TRN_ERR_VALIDATION, "expected the name of a biome");
    }
    if (trn_recipe_find_biome(r, rule->biome) < 0) {
        char names[200];
        name_list(names, sizeof names, (const char *const *)&r->biomes[0].name, sizeof r->biomes[0],
                  r->biome_count);
        trn_json_path_push_key(k->where, "biome");
        return fail(k, TRN_ERR_VALIDATION, "no biome named '%s' (biomes: %s)", rule->biome, names);
    }
    if (rule->layer && !*rule->layer) {
        trn_json_path_push_key(k->where, "layer");
        return fail(k, TRN_ERR_VALIDATION, "%s",
                    trn_rcp_field_find(trn_rcp_rule_fields, "layer")->empty);
    }
    if (rule->layer) {
        /* A rule belongs to a biome layer: disabling that layer removes the rule. */
        uint32_t n;
        const trn_layer *layers = trn_recipe_layers(r, &n);
        const trn_layer *found = NULL;
        char names[200] = "";
        size_t len = 0;
        for (uint32_t q = 0; q < n; q++) {
            if (layers[q].id && strcmp(layers[q].id, rule->layer) == 0) found = &layers[q];
            if (layers[q].group == TRN_LAYER_BIOMES && len + 1 < sizeof names)
                len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                        layers[q].id ? layers[q].id : "?");
        }
        if (!found || found->group != TRN_LAYER_BIOMES) {
            trn_json_path_push_key(k->where, "layer");
            if (found)
                return fail(k, TRN_ERR_VALIDATION,
                            "layer '%s' is a %s layer; a rule belongs to a biome layer (%s)",
                            rule->layer, trn_layer_group_name(found->group), names);
            return fail(k, TRN_ERR_VALIDATION, "no layer named '%s' (biome layers: %s)",
                        rule->layer, names[0] ? names : "none");
        }
    }
    /* priority, blend and the bands by their rows (id, biome and layer are checked above). */
    for (const trn_rcp_field *row = trn_rcp_rule_fields; row->name; row++)
        if ((st = trn_rcp_field_check(row, rule, k->where, k->msg, k->msg_size))) return st;
    if (rule->substrate_mask >> TRN_SUBSTRATE_COUNT) {
        trn_json_path_push_key(k->where, "substrate");
        return fail(k, TRN_ERR_VALIDATION,
                    "substrate mask 0x%x has bits beyond soil, rock, sand and wet",
                    rule->substrate_mask);
    }
    return TRN_OK;
}

/* The JSON kept for later issues: it must parse, with the expected top-level type. */
static trn_status check_blob(chk *k, const char *key, const char *text, const char *expect)
{
    if (!text) return TRN_OK;
    json_error_t je;
    trn_json_parse_counted();
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
    trn_json_path_push_key(k->where, key);
    if (!v) return fail(k, TRN_ERR_VALIDATION, "kept JSON text does not parse: %s", je.text);
    bool ok;
    if (strcmp(key, "palette") == 0)
        ok = (json_is_string(v) && json_string_length(v) > 0) || json_is_object(v);
    else if (strcmp(key, "graph") == 0)
        ok = json_is_object(v);
    else
        ok = json_is_array(v);
    if (!ok) {
        json_decref(v);
        return fail(k, TRN_ERR_VALIDATION, "expected %s", expect);
    }
    if (strcmp(key, "graph") == 0) {
        /* The graph's shape (not its meaning: drafts may be incomplete, trn_graph_check). */
        trn_graph g;
        trn_error ge;
        trn_error_clear(&ge);
        trn_status gst = trn_graph_parse_tree(v, NULL, 0, NULL, NULL, &g, &ge);
        json_decref(v);
        if (gst)
            return fail(k, gst == TRN_ERR_NO_MEMORY ? gst : TRN_ERR_VALIDATION, "%s", ge.message);
        trn_graph_dispose(&g);
        trn_json_path_pop(k->where);
        return TRN_OK;
    }
    json_decref(v);
    trn_json_path_pop(k->where);
    return TRN_OK;
}

/* ---- layers and strokes ---------------------------------------------------------------- */

static trn_status check_layers(chk *k, const trn_recipe *r)
{
    trn_json_path *where = k->where;
    if (r->layer_count == 0) {
        if (!r->has_layers) return TRN_OK; /* the five defaults */
        trn_json_path_push_key(where, "layers");
        return fail(k, TRN_ERR_VALIDATION,
                    "expected at least the generation layer ({\"id\": \"generation\"})");
    }
    if (!r->layers) {
        trn_json_path_push_key(where, "layers");
        return fail(k, TRN_ERR_VALIDATION, "layers missing");
    }
    if (r->layer_count > TRN_RCP_MAX_LAYERS) {
        trn_json_path_push_key(where, "layers");
        return fail(k, TRN_ERR_LIMIT, "%u layers; at most %u are allowed", r->layer_count,
                    TRN_RCP_MAX_LAYERS);
    }
    int generation = -1;
    for (uint32_t i = 0; i < r->layer_count; i++) {
        const trn_layer *l = &r->layers[i];
        trn_json_path_push_key(where, "layers");
        trn_json_path_push_index(where, i);
        if (empty(l->id)) return fail(k, TRN_ERR_VALIDATION, "a layer needs a non-empty id");
        if ((unsigned)l->group >= TRN_LAYER_GROUP_COUNT) {
            trn_json_path_push_key(where, "group");
            return fail(k, TRN_ERR_VALIDATION,
                        "expected generation, biomes, sculpt, protection or exclusions");
        }
        if (l->name && !*l->name) {
            trn_json_path_push_key(where, "name");
            return fail(k, TRN_ERR_VALIDATION, "expected a non-empty layer name");
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(r->layers[j].id, l->id) == 0) {
                trn_json_path_push_key(where, "id");
                return fail(k, TRN_ERR_VALIDATION, "two layers have the id '%s'", l->id);
            }
        if (l->group == TRN_LAYER_GENERATION) {
            if (generation >= 0)
                return fail(k, TRN_ERR_VALIDATION,
                            "a second generation layer; there is exactly one (id \"generation\")");
            if (strcmp(l->id, "generation") != 0) {
                trn_json_path_push_key(where, "id");
                return fail(k, TRN_ERR_VALIDATION,
                            "the generation layer's id is \"generation\", found '%s'", l->id);
            }
            generation = (int)i;
        } else if (strcmp(l->id, "generation") == 0) {
            trn_json_path_push_key(where, "group");
            return fail(k, TRN_ERR_VALIDATION,
                        "the layer with id \"generation\" is the generation layer; its group is "
                        "generation, found %s",
                        trn_layer_group_name(l->group));
        }
        at(k, 0);
    }
    if (generation < 0) {
        trn_json_path_push_key(where, "layers");
        return fail(k, TRN_ERR_VALIDATION,
                    "no generation layer; the generation layer cannot be removed (add {\"id\": "
                    "\"generation\"})");
    }
    return TRN_OK;
}

static const char *section_name(trn_stroke_kind kind)
{
    return kind == TRN_STROKE_REGION      ? "regions"
           : kind == TRN_STROKE_EXCLUSION ? "exclusions"
                                          : "edits";
}

static trn_status check_stroke(chk *k, const trn_recipe *r, const trn_stroke *s)
{
    trn_json_path *where = k->where;
    size_t base = where->depth;
    if (s->layer) {
        trn_json_path_push_key(where, "layer");
        uint32_t n;
        const trn_layer *layers = trn_recipe_layers(r, &n);
        const trn_layer *l = NULL;
        for (uint32_t i = 0; i < n && !l; i++)
            if (layers[i].id && strcmp(layers[i].id, s->layer) == 0) l = &layers[i];
        if (!l) return fail(k, TRN_ERR_VALIDATION, "no layer with the id '%s'", s->layer);
        if (l->group != trn_stroke_kind_group(s->kind))
            return fail(k, TRN_ERR_VALIDATION,
                        "layer '%s' is a %s layer; a %s stroke goes on a %s layer", s->layer,
                        trn_layer_group_name(l->group), trn_stroke_kind_name(s->kind),
                        trn_layer_group_name(trn_stroke_kind_group(s->kind)));
        where->depth = base;
    } else if (!trn_recipe_stroke_layer(r, s)) {
        trn_json_path_push_key(where, "type");
        return fail(k, TRN_ERR_VALIDATION, "no %s layer to hold a %s stroke (add one to layers)",
                    trn_layer_group_name(trn_stroke_kind_group(s->kind)),
                    trn_stroke_kind_name(s->kind));
    }
    if (s->kind == TRN_STROKE_PROTECT) {
        trn_status st;
        if ((st = check_field(k, "grid", TRN_NUM_CELLS, s->grid_cells_x))) return st;
        if ((st = check_field(k, "grid", TRN_NUM_CELLS, s->grid_cells_z))) return st;
        uint64_t total = ((uint64_t)s->grid_cells_x + 1u) * ((uint64_t)s->grid_cells_z + 1u);
        if (total > TRN_RCP_MAX_WHOLE_SAMPLES) {
            trn_json_path_push_key(where, "grid");
            return fail(k, TRN_ERR_LIMIT,
                        "a %u x %u-cell grid has more than %llu samples, the most an edited "
                        "(whole) grid holds",
                        s->grid_cells_x, s->grid_cells_z,
                        (unsigned long long)TRN_RCP_MAX_WHOLE_SAMPLES);
        }
        trn_json_path_push_key(where, "samples");
        if (s->sample_count == 0 || !s->sample_index || !s->sample_height)
            return fail(k, TRN_ERR_VALIDATION, "expected a non-empty array of [i, j, height]");
        for (uint32_t i = 0; i < s->sample_count; i++) {
            trn_json_path_push_index(where, i);
            if (s->sample_index[i] >= total)
                return fail(k, TRN_ERR_VALIDATION,
                            "sample index %u is outside the %u x %u cell grid", s->sample_index[i],
                            s->grid_cells_x, s->grid_cells_z);
            if (!(fabsf(s->sample_height[i]) <= (float)TRN_RCP_MAX_MAGNITUDE))
                return fail(k, TRN_ERR_VALIDATION, "expected a height from -1e9 to 1e9");
            trn_json_path_pop(where);
        }
        where->depth = base;
        return TRN_OK;
    }
    char num[40];
    trn_json_path_push_key(where, "radius");
    if (!(s->radius > 0 && s->radius <= TRN_RCP_MAX_MAGNITUDE)) {
        trn_rcp_format_double(isfinite(s->radius) ? s->radius : 0, num);
        return fail(k, TRN_ERR_VALIDATION, "expected a radius > 0 and <= 1e9, found %s",
                    isfinite(s->radius) ? num : "a non-finite number");
    }
    trn_json_path_pop(where);
    trn_json_path_push_key(where, "strength");
    bool metres = s->kind == TRN_STROKE_RAISE || s->kind == TRN_STROKE_LOWER;
    if (metres ? !(s->strength >= 0 && s->strength <= TRN_RCP_MAX_MAGNITUDE)
               : !(s->strength >= 0 && s->strength <= 1)) {
        trn_rcp_format_double(isfinite(s->strength) ? s->strength : 0, num);
        return fail(k, TRN_ERR_VALIDATION, "expected %s, found %s",
                    metres ? "metres per stamp, a number from 0 to 1e9"
                           : "a blend per stamp from 0 to 1",
                    isfinite(s->strength) ? num : "a non-finite number");
    }
    trn_json_path_pop(where);
    trn_json_path_push_key(where, "falloff");
    if (!(s->falloff >= 0 && s->falloff <= 1)) {
        trn_rcp_format_double(isfinite(s->falloff) ? s->falloff : 0, num);
        return fail(k, TRN_ERR_VALIDATION, "expected a number from 0 to 1, found %s",
                    isfinite(s->falloff) ? num : "a non-finite number");
    }
    trn_json_path_pop(where);
    if (s->kind == TRN_STROKE_FLATTEN) {
        trn_status st = check_field(k, "target_height", TRN_NUM_BASE_HEIGHT, s->target_height);
        if (st) return st;
    }
    if (s->kind == TRN_STROKE_REGION) {
        trn_json_path_push_key(where, "biome");
        if (empty(s->biome)) return fail(k, TRN_ERR_VALIDATION, "expected the name of a biome");
        if (trn_recipe_find_biome(r, s->biome) < 0) {
            char names[200];
            name_list(names, sizeof names, (const char *const *)&r->biomes[0].name,
                      sizeof r->biomes[0], r->biome_count);
            return fail(k, TRN_ERR_VALIDATION, "no biome named '%s' (biomes: %s)", s->biome, names);
        }
        trn_json_path_pop(where);
    }
    trn_json_path_push_key(where, "points");
    if (s->point_count == 0 || !s->points)
        return fail(k, TRN_ERR_VALIDATION, "expected a non-empty array of [x, z] positions");
    for (uint32_t i = 0; i < s->point_count; i++)
        if (!(fabs(s->points[i * 2]) <= TRN_RCP_MAX_MAGNITUDE) ||
            !(fabs(s->points[i * 2 + 1]) <= TRN_RCP_MAX_MAGNITUDE)) {
            trn_json_path_push_index(where, i);
            return fail(k, TRN_ERR_VALIDATION,
                        "expected [x, z], two positions from -1e9 to 1e9 (world units)");
        }
    where->depth = base;
    return TRN_OK;
}

static trn_status check_strokes(chk *k, const trn_recipe *r)
{
    if (r->stroke_count && !r->strokes) {
        trn_json_path_push_key(k->where, "edits");
        return fail(k, TRN_ERR_VALIDATION, "strokes missing");
    }
    if (r->stroke_count > TRN_RCP_MAX_STROKES) {
        trn_json_path_push_key(k->where, "edits");
        return fail(k, TRN_ERR_LIMIT, "%u strokes; at most %u are allowed", r->stroke_count,
                    TRN_RCP_MAX_STROKES);
    }
    /* Paths name the entry in its section, as the document (and the canonical form) has it. */
    uint32_t index[3] = {0, 0, 0};
    for (uint32_t i = 0; i < r->stroke_count; i++) {
        const trn_stroke *s = &r->strokes[i];
        if ((unsigned)s->kind >= TRN_STROKE_KIND_COUNT) {
            trn_json_path_push_key(k->where, "edits");
            return fail(k, TRN_ERR_VALIDATION, "stroke %u has an unknown kind %d", i, (int)s->kind);
        }
        const char *section = section_name(s->kind);
        int which = section[0] == 'r' ? 0 : section[1] == 'd' ? 1 : 2;
        trn_json_path_push_key(k->where, section);
        trn_json_path_push_index(k->where, index[which]++);
        trn_status st = check_stroke(k, r, s);
        if (st) return st;
        at(k, 0);
    }
    return TRN_OK;
}

trn_status trn_rcp_check(const trn_recipe *r, trn_json_path *where, trn_json_target *target,
                         char *msg, size_t msg_size)
{
    chk kk = {where, target, msg, msg_size};
    chk *k = &kk;
    trn_status st;
    where->depth = 0;
    *target = TRN_JSON_VALUE;
    msg[0] = '\0';

    const trn_rcp_field *const rows = trn_rcp_recipe_fields;
    if ((st = check_row(k, rows, "size", r))) return st;
    if ((st = check_row(k, rows, "resolution", r))) return st;
    /* 65536 cells a side make TRN_RCP_MAX_SAMPLES at most: the cell limit is the sample
     * limit (a whole grid's smaller one is checked where a grid is held whole). */
    _Static_assert(((uint64_t)TRN_RCP_MAX_CELLS + 1u) * ((uint64_t)TRN_RCP_MAX_CELLS + 1u) <=
                       TRN_RCP_MAX_SAMPLES,
                   "the cell limit keeps grids within the sample limit");
    if ((st = check_row(k, rows, "seed", r))) return st;

    uint32_t longest = r->cells_x > r->cells_z ? r->cells_x : r->cells_z;
    uint32_t chunk_max = longest > TRN_RCP_CHUNK_CELLS ? longest : TRN_RCP_CHUNK_CELLS;
    if (r->chunk_cells < 1 || r->chunk_cells > chunk_max) {
        trn_json_path_push_key(where, "chunk_cells");
        return fail(k, TRN_ERR_VALIDATION,
                    "expected a whole number 1..%u (the larger resolution axis, or the default "
                    "32), found %u",
                    chunk_max, r->chunk_cells);
    }
    if ((st = check_row(k, rows, "snow_line", r))) return st;
    if ((st = check_row(k, rows, "sea_level", r))) return st;

    trn_json_path_push_key(where, "landforms");
    if (r->landform_count == 0 || !r->landforms)
        return fail(k, TRN_ERR_VALIDATION, "expected at least one landform");
    for (uint32_t i = 0; i < r->landform_count; i++) {
        const char *name = r->landforms[i].name;
        if (empty(name)) {
            trn_json_path_push_index(where, i);
            return fail(k, TRN_ERR_VALIDATION, "landform %u has no name", i);
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(r->landforms[j].name, name) == 0)
                return fail(k, TRN_ERR_VALIDATION, "two landforms are named '%s'", name);
        trn_json_path_push_key(where, name);
        if ((st = check_landform(k, r, i))) return st;
        at(k, 1);
    }
    at(k, 0);
    trn_json_path_push_key(where, "default_landform");
    if (empty(r->default_landform))
        return fail(k, TRN_ERR_VALIDATION, "expected the name of a landform");
    if (trn_recipe_find_landform(r, r->default_landform) < 0) {
        char names[200];
        name_list(names, sizeof names, (const char *const *)&r->landforms[0].name,
                  sizeof r->landforms[0], r->landform_count);
        return fail(k, TRN_ERR_VALIDATION, "no landform named '%s' (landforms: %s)",
                    r->default_landform, names);
    }
    at(k, 0);

    trn_json_path_push_key(where, "biomes");
    if (r->biome_count == 0 || !r->biomes)
        return fail(k, TRN_ERR_VALIDATION, "expected at least one biome");
    if (r->biome_count > TRN_RCP_MAX_BIOMES)
        return fail(k, TRN_ERR_LIMIT,
                    "%u biomes; at most %u are allowed (biome maps hold one byte per sample and "
                    "keep 255 for none)",
                    r->biome_count, TRN_RCP_MAX_BIOMES);
    for (uint32_t i = 0; i < r->biome_count; i++) {
        const char *name = r->biomes[i].name;
        if (empty(name)) {
            trn_json_path_push_index(where, i);
            return fail(k, TRN_ERR_VALIDATION, "biome %u has no name", i);
        }
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(r->biomes[j].name, name) == 0)
                return fail(k, TRN_ERR_VALIDATION, "two biomes are named '%s'", name);
        trn_json_path_push_key(where, name);
        if ((st = check_biome(k, r, i))) return st;
        at(k, 1);
    }
    at(k, 0);
    trn_json_path_push_key(where, "default_biome");
    if (empty(r->default_biome)) return fail(k, TRN_ERR_VALIDATION, "expected the name of a biome");
    if (trn_recipe_find_biome(r, r->default_biome) < 0) {
        char names[200];
        name_list(names, sizeof names, (const char *const *)&r->biomes[0].name, sizeof r->biomes[0],
                  r->biome_count);
        return fail(k, TRN_ERR_VALIDATION, "no biome named '%s' (biomes: %s)", r->default_biome,
                    names);
    }
    at(k, 0);

    trn_json_path_push_key(where, "rules");
    if (r->rule_count > TRN_RCP_MAX_RULES)
        return fail(k, TRN_ERR_LIMIT, "%u rules; at most %u are allowed", r->rule_count,
                    TRN_RCP_MAX_RULES);
    if (r->rule_count && !r->rules) return fail(k, TRN_ERR_VALIDATION, "rules missing");
    for (uint32_t i = 0; i < r->rule_count; i++) {
        trn_json_path_push_index(where, i);
        if ((st = check_rule(k, r, i))) return st;
        at(k, 1);
    }
    at(k, 0);

    if ((st = check_row(k, rows, "preset_id", r))) return st;
    if ((st = check_row(k, rows, "preset_version", r))) return st;
    if (r->preset_id && !r->has_preset_version) {
        trn_json_path_push_key(where, "preset_id");
        return fail(k, TRN_ERR_VALIDATION,
                    "preset_id without preset_version; applying a preset records both, so a "
                    "half-stamped recipe is refused (add preset_version or remove preset_id)");
    }
    if (!r->preset_id && r->has_preset_version) {
        trn_json_path_push_key(where, "preset_version");
        return fail(k, TRN_ERR_VALIDATION,
                    "preset_version without preset_id; applying a preset records both, so a "
                    "half-stamped recipe is refused (add preset_id or remove preset_version)");
    }

    if ((st = check_layers(k, r))) return st;
    if ((st = check_strokes(k, r))) return st;
    if ((st = check_blob(k, "palette", r->palette_json,
                         "a palette asset id (a non-empty string) or a palette object")))
        return st;
    /* A graph read into the recipe's model (or that model's identity, a cache key's view)
     * passed these checks when it was read: its text is not read again. */
    const bool modelled =
        trn_rcp_model_of(r) || (r->model && r->graph_json && r->graph_json == r->model->identity);
    if (!modelled && (st = check_blob(k, "graph", r->graph_json, "a graph object"))) return st;
    where->depth = 0;
    return TRN_OK;
}

static _Atomic uint64_t validations;

uint64_t trn_rcp_validate_count(void)
{
    return atomic_load_explicit(&validations, memory_order_relaxed);
}

trn_status trn_recipe_validate(const trn_recipe *recipe, trn_error *err)
{
    uint64_t print;
    return trn_rcp_validate_print(recipe, &print, err);
}

trn_status trn_rcp_validate_print(const trn_recipe *recipe, uint64_t *print_out, trn_error *err)
{
    *print_out = 0;
    if (!recipe) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "recipe is NULL");
    /* A parsed recipe whose content passed before (when it was read, or at the last
     * generation) passes again: only a change since is checked. */
    uint64_t print;
    if (trn_rcp_model_known_valid(recipe, &print)) {
        *print_out = print;
        return TRN_OK;
    }
    atomic_fetch_add_explicit(&validations, 1, memory_order_relaxed);
    trn_json_path where = {{{0}}, 0};
    trn_json_target target;
    char msg[400];
    trn_status st = trn_rcp_check(recipe, &where, &target, msg, sizeof msg);
    if (st == TRN_OK) {
        trn_rcp_model_mark_valid(recipe, print);
        *print_out = print;
        return TRN_OK;
    }
    char path[200];
    trn_json_path_format(&where, path, sizeof path);
    /* The unknown-key form names its place itself. */
    if (strncmp(msg, "unknown key '", 13) == 0) path[0] = '\0';
    return trn_error_set(err, st, NULL, -1, "%s%s%s", path, path[0] ? ": " : "", msg);
}
