/* Recipe documents from JSON text: types, unknown keys and ranges, each error at its position. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/textbuf.h"
#include "core/fileio.h"
#include "core/numtext.h"
#include "graph/graph_internal.h"
#include "recipe/recipe_fields.h"
#include "recipe/recipe_internal.h"
#include "recipe/recipe_model.h"

typedef struct pctx {
    const char *text; /* the whole text, byte order mark included, for positions */
    size_t size;
    const char *file;
    trn_json_path path;
    trn_error *err;
    trn_status fail_code; /* set by perr */
    /* Preset documents (trn_rcp_parse_partial): keys the caller reads itself, and no required
     * keys or default layers, since a preset sets only some fields. */
    const char *const *skip_keys;
    bool partial;
} pctx;

/* Fill the error with "path: message" at the position of the current path. */
static trn_status perr(pctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static trn_status perr(pctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
{
    char msg[420];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    trn_json_error_at(c->err, code, c->file, c->text, c->size, &c->path, target, msg);
    c->fail_code = code;
    return code;
}

/* The shared document reader's view of the context. */
static trn_doc doc_of(pctx *c)
{
    return (trn_doc){c->text, c->size, c->file, &c->path, c->err, NULL, NULL};
}

static trn_status oom(pctx *c)
{
    c->fail_code = TRN_ERR_NO_MEMORY;
    return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->file, -1, "out of memory reading a recipe");
}

/* "the string \"abc\"", "-5", "an object", ... for "found ..." */
static const char *describe(const json_t *v, char *buf, size_t size)
{
    return trn_json_describe(v, buf, size);
}

static void push(pctx *c, const char *key)
{
    trn_json_path_push_key(&c->path, key);
}

static void push_index(pctx *c, size_t index)
{
    trn_json_path_push_index(&c->path, index);
}

static void pop(pctx *c)
{
    trn_json_path_pop(&c->path);
}

/* Called with the path at the object holding key: "unknown key 'heigth' in
 * landforms.mountains; did you mean 'height_variation'?" at the key's position. */
static trn_status unknown_key(pctx *c, const char *key, const char *const *known, const char *what)
{
    trn_doc d = doc_of(c);
    c->fail_code = TRN_ERR_JSON;
    return trn_doc_unknown_key(&d, key, known, what, NULL);
}

static trn_status want_number(pctx *c, const json_t *v, trn_rcp_num which, double *out)
{
    trn_doc d = doc_of(c);
    trn_status st = trn_doc_number(&d, v, trn_rcp_num_range(which), out);
    if (st) c->fail_code = st;
    return st;
}

/* A recipe row's value (the path at its key) into base. */
static trn_status read_row(pctx *c, const trn_rcp_field *row, const json_t *v, void *base)
{
    trn_doc d = doc_of(c);
    trn_status st = trn_rcp_field_read(&d, row, v, base);
    if (st) c->fail_code = st;
    return st;
}

/* Called with the path at the object holding key, which none of rows names. */
static trn_status unknown_row(pctx *c, const char *key, const trn_rcp_field *rows,
                              const char *what)
{
    const char *known[65];
    trn_rcp_field_names(rows, known);
    return unknown_key(c, key, known, what);
}

/* A field row's value (the path at its key) into base. */
static trn_status read_field(pctx *c, const trn_doc_field *row, const json_t *v, void *base)
{
    trn_doc d = doc_of(c);
    trn_status st = trn_doc_read_field(&d, row, v, base, "recipe");
    if (st) c->fail_code = st;
    return st;
}

/* A non-empty string, copied. */
static trn_status want_string(pctx *c, const json_t *v, const char *expect, char **out)
{
    char buf[120];
    if (!json_is_string(v) || json_string_length(v) == 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    describe(v, buf, sizeof buf));
    free(*out);
    *out = trn_text_dup(json_string_value(v));
    return *out ? TRN_OK : oom(c);
}

/* [a, b] of two numbers, each checked with which. */
static trn_status want_pair(pctx *c, const json_t *v, trn_rcp_num which, const char *shape,
                            double out[2])
{
    char buf[120];
    if (!json_is_array(v) || json_array_size(v) != 2) {
        if (json_is_array(v))
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %zu elements", shape,
                        json_array_size(v));
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", shape,
                    describe(v, buf, sizeof buf));
    }
    for (size_t i = 0; i < 2; i++) {
        push_index(c, i);
        trn_status st = want_number(c, json_array_get(v, i), which, &out[i]);
        if (st) return st;
        pop(c);
    }
    return TRN_OK;
}

/* [a, b] of two whole numbers of which's range, converted once both are checked. */
static trn_status want_u32_pair(pctx *c, const json_t *v, trn_rcp_num which, const char *shape,
                                uint32_t out[2])
{
    double d[2] = {0.0, 0.0};
    trn_status st = want_pair(c, v, which, shape, d);
    if (st) return st;
    for (size_t i = 0; i < 2; i++) {
        if (!trn_rcp_num_whole(which) || !(d[i] >= 0.0 && d[i] <= 4294967295.0)) {
            push_index(c, i);
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found a number out of range",
                        trn_rcp_num_expect(which));
        }
        out[i] = (uint32_t)d[i];
    }
    return TRN_OK;
}

static trn_status missing_key(pctx *c, const char *key, const char *what)
{
    return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "missing required key '%s' (%s)", key, what);
}

/* ---- sections ------------------------------------------------------------------------ */

static trn_status keep_json(pctx *c, const json_t *v, bool ok, const char *expect, char **out);

/* A landform's "evolution": the Stream Power node's parameters, checked by the registry's
 * own rules and reported here at their line and column; kept as canonical JSON. */
static trn_status parse_evolution(pctx *c, const json_t *v, char **out, trn_rcp_evolution *keep)
{
    trn_status st = keep_json(c, v, json_is_object(v),
                              "an object of Stream Power parameters (uplift, erodibility, m, n, "
                              "diffusion, dt, steps, ...)",
                              out);
    if (st) return st;
    trn_graph g;
    char key[64], msg[400];
    bool unknown;
    char place[200];
    trn_json_path_format(&c->path, place, sizeof place);
    /* Read from the document's tree as its kept text would read back (no text read again); a
     * tree that would not read back goes through the text, which then refuses it as before. */
    json_t *tree = trn_rcp_read_back(v);
    st = tree ? trn_graph_params_read("stream_power", tree, place, &g, key, sizeof key, msg,
                                      sizeof msg, &unknown)
              : trn_graph_params_parse("stream_power", *out, place, &g, key, sizeof key, msg,
                                       sizeof msg, &unknown);
    if (st == TRN_ERR_NO_MEMORY) {
        json_decref(tree);
        return oom(c);
    }
    if (!st) {
        /* The recipe's model keeps both: generation reads the text no more. */
        trn_graph_dispose(&keep->graph);
        json_decref(keep->tree);
        keep->graph = g;
        keep->tree = tree;
        return TRN_OK;
    }
    json_decref(tree);
    if (unknown) {
        /* The documents' unknown-key form: it names its place, at the key's position. */
        const trn_node_type *t = trn_node_type_find("stream_power");
        const char *known[65];
        uint32_t n = 0;
        for (; t && n < t->param_count && n < 64; n++)
            known[n] = t->params[n].name;
        known[n] = NULL;
        trn_doc d = doc_of(c);
        c->fail_code = TRN_ERR_JSON;
        return trn_doc_unknown_key(&d, key, known, "evolution", NULL);
    }
    if (key[0]) push(c, key);
    return perr(c, TRN_ERR_JSON, unknown ? TRN_JSON_KEY : TRN_JSON_VALUE, "%s", msg);
}

static trn_status parse_landform(pctx *c, const json_t *obj, trn_landform *lf,
                                 trn_rcp_evolution *evolution)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a landform object (profile, base_height, height_variation, "
                    "feature_size, roughness, octaves, ...), found %s",
                    describe(obj, buf, sizeof buf));
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_rcp_field *row = trn_rcp_field_find(trn_rcp_landform_fields, key);
        if (!row) return unknown_row(c, key, trn_rcp_landform_fields, "a landform");
        push(c, key);
        if (row->kind != TRN_RCP_CUSTOM)
            st = read_row(c, row, v, lf);
        else /* evolution */
            st = parse_evolution(c, v, &lf->evolution, evolution);
        if (st) return st;
        pop(c);
    }
    return TRN_OK;
}

static bool is_landform_key(const char *key)
{
    return trn_rcp_field_find(trn_rcp_landform_fields, key) != NULL;
}

static trn_status parse_biome(pctx *c, const json_t *obj, trn_biome *b)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a biome object (color, material, texture_scale, landform, "
                    "allow_snow, groundmodel), found %s",
                    describe(obj, buf, sizeof buf));
    trn_rcp_field_defaults(trn_rcp_biome_fields, b);
    bool have_color = false;
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_rcp_field *row = trn_rcp_field_find(trn_rcp_biome_fields, key);
        push(c, key);
        if (row && row->kind != TRN_RCP_CUSTOM) {
            st = read_row(c, row, v, b);
            if (row->kind == TRN_RCP_COLOR) have_color = true;
        } else if (row) {
            /* groundmodel: BeamNG's physics surface; a name the game does not ship would fall
             * back to its default surface without a word, so it is refused here. */
            const char *known =
                json_is_string(v) ? trn_rcp_groundmodel_find(json_string_value(v)) : NULL;
            if (!known)
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected a BeamNG ground model such as GRASS, DIRT, DIRT_DUSTY, "
                            "SAND, BEACHSAND, ROCK, GRAVEL, MUD, SNOW, ICE or ASPHALT "
                            "(docs/beamng.md lists them all), found %s",
                            describe(v, buf, sizeof buf));
            snprintf(b->groundmodel, sizeof b->groundmodel, "%s", known);
        } else if (is_landform_key(key)) {
            /* Dropping it silently would flatten terrain that used to have relief. */
            return perr(c, TRN_ERR_JSON, TRN_JSON_KEY,
                        "'%s' is a landform field, not a biome field: move it into a landform "
                        "under \"landforms\" and name that landform in this biome's "
                        "\"landform\"",
                        key);
        } else {
            pop(c);
            return unknown_row(c, key, trn_rcp_biome_fields, "a biome");
        }
        if (st) return st;
        pop(c);
    }
    if (!have_color) return missing_key(c, "color", "[r, g, b, a], four numbers from 0 to 1");
    return TRN_OK;
}

static trn_status parse_substrate(pctx *c, const json_t *v, uint32_t *mask)
{
    char buf[120];
    const char *expect = "a non-empty list of distinct names from soil, rock, sand, wet";
    if (!json_is_array(v) || json_array_size(v) == 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    json_is_array(v) ? "an empty list" : describe(v, buf, sizeof buf));
    *mask = 0;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        push_index(c, i);
        int which = -1;
        const char *s = json_string_value(e);
        for (int k = 0; s && k < TRN_SUBSTRATE_COUNT; k++)
            if (strcmp(s, trn_substrate_name((trn_substrate)k)) == 0) which = k;
        if (which < 0)
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                        "expected soil, rock, sand or wet, found %s", describe(e, buf, sizeof buf));
        if (*mask & (1u << which))
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "'%s' is listed twice", s);
        *mask |= 1u << which;
        pop(c);
    }
    return TRN_OK;
}

static trn_status parse_rule(pctx *c, const json_t *obj, trn_rule *r)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a rule object (id, biome, priority, bands, ...), found %s",
                    describe(obj, buf, sizeof buf));
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_rcp_field *row = trn_rcp_field_find(trn_rcp_rule_fields, key);
        if (!row) return unknown_row(c, key, trn_rcp_rule_fields, "a rule");
        push(c, key);
        if (row->kind != TRN_RCP_CUSTOM)
            st = read_row(c, row, v, r);
        else /* substrate */
            st = parse_substrate(c, v, &r->substrate_mask);
        if (st) return st;
        pop(c);
    }
    if (!r->id) return missing_key(c, "id", "a unique rule id");
    if (!r->biome) return missing_key(c, "biome", "the biome this rule assigns");
    return TRN_OK;
}

/* Sections later issues fill: only the top-level type is checked here; the value is kept as
 * canonical compact JSON. */
static trn_status keep_json(pctx *c, const json_t *v, bool ok, const char *expect, char **out)
{
    char buf[120];
    if (!ok)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    describe(v, buf, sizeof buf));
    free(*out);
    *out = trn_rcp_canonical_text(v);
    return *out ? TRN_OK : oom(c);
}

/* ---- layers and strokes ----------------------------------------------------------------- */

/* A layer's fields, one row each (the group's words in the enum's order). */
static const char *const layer_groups[] = {"generation", "biomes",     "sculpt",
                                           "protection", "exclusions", NULL};
static const trn_doc_field layer_fields[] = {
    TRN_DOC_TEXT_ROW("id", TRN_DOC_NONEMPTY, "a layer id (a non-empty string)", trn_layer, id),
    TRN_DOC_TEXT_ROW("name", TRN_DOC_NONEMPTY, "a layer name (a non-empty string)", trn_layer,
                     name),
    TRN_DOC_WORD_ROW("group", layer_groups, 0,
                     "generation, biomes, sculpt, protection or exclusions", trn_layer, group),
    TRN_DOC_BOOL_ROW("enabled", "true or false", trn_layer, enabled), TRN_DOC_END_ROW};

static trn_status want_finite(pctx *c, const json_t *v, const char *expect, double *out)
{
    char buf[120];
    if (!json_is_number(v) || !isfinite(json_number_value(v)))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    describe(v, buf, sizeof buf));
    *out = json_number_value(v);
    return TRN_OK;
}

/* A stamp coordinate: finite and inside the range every other length of a recipe keeps. */
static trn_status want_position(pctx *c, const json_t *v, double *out)
{
    char buf[120];
    if (!json_is_number(v) || !(fabs(json_number_value(v)) <= TRN_RCP_MAX_MAGNITUDE))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a position from -1e9 to 1e9 (world units), found %s",
                    describe(v, buf, sizeof buf));
    *out = json_number_value(v);
    return TRN_OK;
}

static int group_of_name(const char *s)
{
    for (int g = 0; s && g < TRN_LAYER_GROUP_COUNT; g++)
        if (strcmp(s, trn_layer_group_name((trn_layer_group)g)) == 0) return g;
    return -1;
}

static trn_status parse_layer(pctx *c, const json_t *obj, trn_layer *l)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a layer object (id, name, group, enabled), found %s",
                    describe(obj, buf, sizeof buf));
    l->enabled = true;
    bool have_group = false;
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_doc_field *row = trn_doc_field_find(layer_fields, key);
        if (!row) {
            c->fail_code = TRN_ERR_JSON;
            trn_doc d = doc_of(c);
            return trn_doc_unknown_field(&d, key, layer_fields, "a layer", NULL);
        }
        push(c, key);
        if ((st = read_field(c, row, v, l))) return st;
        have_group = have_group || row->type == TRN_DOC_WORD;
        pop(c);
    }
    if (!l->id) return missing_key(c, "id", "a unique layer id");
    if (!have_group) {
        /* The five default ids name their group; any other layer says which it belongs to. */
        int g = group_of_name(l->id);
        if (g < 0)
            return missing_key(c, "group", "generation, biomes, sculpt, protection or exclusions");
        l->group = (trn_layer_group)g;
    }
    if (!l->name) {
        l->name = trn_text_dup(l->id);
        if (!l->name) return oom(c);
    }
    return TRN_OK;
}

static trn_status parse_layers(pctx *c, const json_t *v, trn_recipe *r)
{
    char buf[120];
    if (!json_is_array(v))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected an array of layers, found %s",
                    describe(v, buf, sizeof buf));
    size_t n = json_array_size(v);
    if (n > TRN_RCP_MAX_LAYERS)
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu layers; at most %u are allowed", n,
                    TRN_RCP_MAX_LAYERS);
    r->layers = n ? calloc(n, sizeof *r->layers) : NULL;
    if (n && !r->layers) return oom(c);
    r->has_layers = true;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        r->layer_count++;
        push_index(c, i);
        trn_status st = parse_layer(c, e, &r->layers[i]);
        if (st) return st;
        pop(c);
    }
    return TRN_OK;
}

/* The recipe section each kind is written in. */
static const char *section_of_kind(trn_stroke_kind kind)
{
    return kind == TRN_STROKE_REGION      ? "regions"
           : kind == TRN_STROKE_EXCLUSION ? "exclusions"
                                          : "edits";
}

static int kind_of_name(const char *s)
{
    for (int k = 0; s && k < TRN_STROKE_KIND_COUNT; k++)
        if (strcmp(s, trn_stroke_kind_name((trn_stroke_kind)k)) == 0) return k;
    return -1;
}

static trn_status parse_points(pctx *c, const json_t *v, trn_stroke *s)
{
    char buf[120];
    const char *expect = "a non-empty array of [x, z] positions (terrain-local world units)";
    if (!json_is_array(v) || json_array_size(v) == 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    json_is_array(v) ? "an empty array" : describe(v, buf, sizeof buf));
    size_t n = json_array_size(v);
    if (n > TRN_RCP_MAX_POINTS)
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu points; at most %u per entry", n,
                    TRN_RCP_MAX_POINTS);
    free(s->points);
    s->points = malloc(n * 2 * sizeof *s->points);
    if (!s->points) return oom(c);
    s->point_count = (uint32_t)n;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        push_index(c, i);
        if (!json_is_array(e) || json_array_size(e) != 2)
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected [x, z], two numbers, found %s",
                        describe(e, buf, sizeof buf));
        for (size_t k = 0; k < 2; k++) {
            push_index(c, k);
            trn_status st = want_position(c, json_array_get(e, k), &s->points[i * 2 + k]);
            if (st) return st;
            pop(c);
        }
        pop(c);
    }
    return TRN_OK;
}

/* "samples": [[i, j, height], ...]; indices checked against grid after the whole object. */
static trn_status parse_samples(pctx *c, const json_t *v, trn_stroke *s, uint32_t **ij)
{
    char buf[120];
    const char *expect = "a non-empty array of [i, j, height] samples";
    if (!json_is_array(v) || json_array_size(v) == 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                    json_is_array(v) ? "an empty array" : describe(v, buf, sizeof buf));
    size_t n = json_array_size(v);
    if (n > TRN_RCP_MAX_POINTS)
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu samples; at most %u per snapshot", n,
                    TRN_RCP_MAX_POINTS);
    s->sample_index = malloc(n * sizeof *s->sample_index);
    s->sample_height = malloc(n * sizeof *s->sample_height);
    *ij = malloc(n * 2 * sizeof **ij);
    if (!s->sample_index || !s->sample_height || !*ij) return oom(c);
    s->sample_count = (uint32_t)n;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e)
    {
        push_index(c, i);
        if (!json_is_array(e) || json_array_size(e) != 3)
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                        "expected [i, j, height]: two sample indices and a height, found %s",
                        describe(e, buf, sizeof buf));
        for (size_t k = 0; k < 2; k++) {
            push_index(c, k);
            const json_t *x = json_array_get(e, k);
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > (json_int_t)TRN_RCP_MAX_CELLS)
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected a sample index 0..65536, found %s",
                            describe(x, buf, sizeof buf));
            (*ij)[i * 2 + k] = (uint32_t)json_integer_value(x);
            pop(c);
        }
        push_index(c, 2);
        double h = 0.0; /* set by want_finite; GCC cannot see perr never returns 0 */
        trn_status st = want_finite(c, json_array_get(e, 2), "a height (a finite number)", &h);
        if (st) return st;
        if (!(fabs(h) <= TRN_RCP_MAX_MAGNITUDE))
            return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                        "expected a height from -1e9 to 1e9, found %s",
                        describe(json_array_get(e, 2), buf, sizeof buf));
        s->sample_height[i] = (float)h;
        pop(c);
        pop(c);
    }
    return TRN_OK;
}

static trn_status parse_stroke(pctx *c, const json_t *obj, const char *section, trn_stroke *s)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a stroke object (type, layer, radius, strength, falloff, points, "
                    "...), found %s",
                    describe(obj, buf, sizeof buf));
    const json_t *tv = json_object_get(obj, "type");
    if (!tv) return missing_key(c, "type", "the stroke kind");
    push(c, "type");
    int kind = kind_of_name(json_string_value(tv));
    if (kind < 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected raise, lower, flatten, smooth, protect, region or exclusion, found "
                    "%s",
                    describe(tv, buf, sizeof buf));
    s->kind = (trn_stroke_kind)kind;
    if (strcmp(section_of_kind(s->kind), section) != 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "a %s stroke belongs in \"%s\", not in \"%s\"",
                    trn_stroke_kind_name(s->kind), section_of_kind(s->kind), section);
    pop(c);
    trn_stroke_field_defaults(s);
    const bool protect = s->kind == TRN_STROKE_PROTECT;
    bool have_radius = false, have_points = false, have_center = false, have_target = false;
    bool have_grid = false;
    uint32_t *ij = NULL;
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_stroke_field *row = trn_stroke_field_find(key);
        if (!row || !(row->kinds & (1u << s->kind))) {
            free(ij);
            const char *known[16];
            trn_stroke_field_names(protect ? 1u << TRN_STROKE_PROTECT : TRN_STROKE_STAMPED, known);
            /* A setting every stamped stroke has, on a snapshot; one of another stamped kind. */
            if (row && protect && (row->kinds & TRN_STROKE_STAMPED) == TRN_STROKE_STAMPED) {
                push(c, key);
                return perr(c, TRN_ERR_JSON, TRN_JSON_KEY,
                            "a protect stroke is a snapshot (grid and samples); it has no '%s'",
                            key);
            }
            if (row && !protect && (row->kinds & TRN_STROKE_STAMPED)) {
                push(c, key);
                return perr(c, TRN_ERR_JSON, TRN_JSON_KEY, "a %s stroke has no '%s'",
                            trn_stroke_kind_name(s->kind), key);
            }
            return unknown_key(c, key, known, "a stroke");
        }
        push(c, key);
        void *at = (char *)s + row->offset;
        switch (row->value) {
        case TRN_STROKE_NUMBER:
            st = want_finite(c, v, row->expect, at);
            break;
        case TRN_STROKE_TEXT:
            st = want_string(c, v, row->expect, at);
            break;
        case TRN_STROKE_TYPE: /* checked above */
            break;
        case TRN_STROKE_GRID: {
            uint32_t g[2] = {0, 0};
            st = want_u32_pair(c, v, TRN_NUM_CELLS,
                               "[cells_x, cells_z], the grid the snapshot was recorded on", g);
            if (!st) {
                s->grid_cells_x = g[0];
                s->grid_cells_z = g[1];
                have_grid = true;
            }
            break;
        }
        case TRN_STROKE_SAMPLES:
            st = parse_samples(c, v, s, &ij);
            break;
        case TRN_STROKE_POINTS:
            st = parse_points(c, v, s);
            have_points = true;
            break;
        case TRN_STROKE_CENTER:
            if (!json_is_array(v) || json_array_size(v) != 2)
                st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected [x, z], two numbers, found %s",
                          describe(v, buf, sizeof buf));
            free(s->points);
            s->points = st ? NULL : malloc(2 * sizeof *s->points);
            if (!st && !s->points) st = oom(c);
            for (size_t k = 0; !st && k < 2; k++) {
                push_index(c, k);
                st = want_position(c, json_array_get(v, k), &s->points[k]);
                if (!st) pop(c);
            }
            if (!st) s->point_count = 1;
            have_center = true;
            break;
        case TRN_STROKE_MODE: {
            const char *m = json_string_value(v);
            if (m && strcmp(m, "exclude") == 0)
                s->erase = false;
            else if (m && strcmp(m, "erase") == 0)
                s->erase = true;
            else
                st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                          "expected \"exclude\" or \"erase\", found %s",
                          describe(v, buf, sizeof buf));
            break;
        }
        }
        have_radius = have_radius || strcmp(key, "radius") == 0;
        have_target = have_target || strcmp(key, "target_height") == 0;
        if (st) {
            free(ij);
            return st;
        }
        pop(c);
    }
    if (protect) {
        if (!have_grid) {
            free(ij);
            return missing_key(c, "grid", "[cells_x, cells_z], the grid of the snapshot");
        }
        if (!ij) return missing_key(c, "samples", "[[i, j, height], ...]");
        /* Edits apply to grids held whole, and the snapshot's 32-bit indices need it too. */
        if (((uint64_t)s->grid_cells_x + 1u) * ((uint64_t)s->grid_cells_z + 1u) >
            TRN_RCP_MAX_WHOLE_SAMPLES) {
            free(ij);
            push(c, "grid");
            return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE,
                        "a %u x %u-cell grid has more than %llu samples, the most an edited "
                        "(whole) grid holds",
                        s->grid_cells_x, s->grid_cells_z,
                        (unsigned long long)TRN_RCP_MAX_WHOLE_SAMPLES);
        }
        for (uint32_t k = 0; k < s->sample_count; k++) {
            uint32_t i = ij[k * 2], j = ij[k * 2 + 1];
            if (i > s->grid_cells_x || j > s->grid_cells_z) {
                push(c, "samples");
                push_index(c, k);
                push_index(c, i > s->grid_cells_x ? 0 : 1);
                free(ij);
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "sample (%u, %u) is outside the %u x %u cell grid (indices 0..%u, "
                            "0..%u)",
                            i, j, s->grid_cells_x, s->grid_cells_z, s->grid_cells_x,
                            s->grid_cells_z);
            }
            s->sample_index[k] = j * (s->grid_cells_x + 1) + i;
        }
        free(ij);
        return TRN_OK;
    }
    if (!have_radius) return missing_key(c, "radius", "the brush radius in world units");
    if (have_points && have_center) {
        push(c, "center");
        return perr(c, TRN_ERR_JSON, TRN_JSON_KEY,
                    "give either \"points\" or \"center\", not both");
    }
    if (!have_points && !have_center)
        return missing_key(c, "points", "[[x, z], ...] stamp positions (or \"center\": [x, z])");
    if (s->kind == TRN_STROKE_FLATTEN && !have_target)
        return missing_key(c, "target_height", "the height a flatten stroke moves toward");
    if (s->kind == TRN_STROKE_REGION && !s->biome)
        return missing_key(c, "biome", "the biome the region paints");
    return TRN_OK;
}

/* The three stroke sections, in this order whatever the order of keys in the file. */
static trn_status parse_strokes(pctx *c, const json_t *sections[3], trn_recipe *r)
{
    static const char *const names[3] = {"regions", "edits", "exclusions"};
    size_t total = 0;
    for (int s = 0; s < 3; s++)
        if (sections[s]) total += json_array_size(sections[s]);
    if (total > TRN_RCP_MAX_STROKES) {
        for (int s = 0; s < 3; s++)
            if (sections[s]) {
                push(c, names[s]);
                break;
            }
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE,
                    "%zu strokes in regions, edits and exclusions; at most %u are allowed", total,
                    TRN_RCP_MAX_STROKES);
    }
    r->strokes = total ? calloc(total, sizeof *r->strokes) : NULL;
    if (total && !r->strokes) return oom(c);
    for (int s = 0; s < 3; s++) {
        if (!sections[s]) continue;
        push(c, names[s]);
        size_t i;
        json_t *e;
        json_array_foreach(sections[s], i, e)
        {
            push_index(c, i);
            trn_status st = parse_stroke(c, e, names[s], &r->strokes[r->stroke_count++]);
            if (st) return st;
            pop(c);
        }
        pop(c);
    }
    return TRN_OK;
}

static trn_status parse_recipe_object(pctx *c, const json_t *obj, trn_recipe *r)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a recipe object, found %s",
                    describe(obj, buf, sizeof buf));
    trn_rcp_field_defaults(trn_rcp_recipe_fields, r);
    const json_t *sections[3] = {NULL, NULL, NULL};
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    json_object_foreach((json_t *)obj, key, v)
    {
        bool skip = false;
        for (const char *const *k = c->skip_keys; k && *k && !skip; k++)
            skip = strcmp(*k, key) == 0;
        if (skip) continue;
        const trn_rcp_field *row = trn_rcp_field_find(trn_rcp_recipe_fields, key);
        if (!row) return unknown_row(c, key, trn_rcp_recipe_fields, "the recipe");
        push(c, key);
        if (row->kind != TRN_RCP_CUSTOM) {
            st = read_row(c, row, v, r);
        } else if (strcmp(key, "landforms") == 0) {
            if (!json_is_object(v))
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected an object of landforms keyed by name, found %s",
                            describe(v, buf, sizeof buf));
            size_t n = json_object_size(v);
            free(r->landforms);
            r->landforms = n ? calloc(n, sizeof *r->landforms) : NULL;
            if (n && !r->landforms) return oom(c);
            const char *name;
            json_t *lv;
            json_object_foreach(v, name, lv)
            {
                trn_landform *lf = &r->landforms[r->landform_count];
                trn_rcp_landform_defaults(lf);
                lf->name = trn_text_dup(name);
                if (!lf->name) return oom(c);
                r->landform_count++;
                push(c, name);
                if (!*name)
                    return perr(c, TRN_ERR_JSON, TRN_JSON_KEY, "a landform needs a non-empty name");
                trn_rcp_evolution evolution; /* a graph and tree for the model, when read */
                memset(&evolution, 0, sizeof evolution);
                st = parse_landform(c, lv, lf, &evolution);
                if (!st && lf->evolution && evolution.tree) {
                    json_t *tree = evolution.tree;
                    evolution.tree = NULL;
                    if (trn_rcp_model_keep_evolution(r, r->landform_count - 1, tree,
                                                     &evolution.graph))
                        st = oom(c);
                }
                json_decref(evolution.tree);
                trn_graph_dispose(&evolution.graph);
                if (st) return st;
                pop(c);
            }
        } else if (strcmp(key, "biomes") == 0) {
            if (!json_is_object(v))
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected an object of biomes keyed by name, found %s",
                            describe(v, buf, sizeof buf));
            size_t n = json_object_size(v);
            if (n > TRN_RCP_MAX_BIOMES)
                return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE,
                            "%zu biomes; at most %u are allowed (biome maps hold one byte per "
                            "sample and keep 255 for none)",
                            n, TRN_RCP_MAX_BIOMES);
            free(r->biomes);
            r->biomes = n ? calloc(n, sizeof *r->biomes) : NULL;
            if (n && !r->biomes) return oom(c);
            const char *name;
            json_t *bv;
            json_object_foreach(v, name, bv)
            {
                trn_biome *b = &r->biomes[r->biome_count];
                b->name = trn_text_dup(name);
                if (!b->name) return oom(c);
                r->biome_count++;
                push(c, name);
                if (!*name)
                    return perr(c, TRN_ERR_JSON, TRN_JSON_KEY, "a biome needs a non-empty name");
                if ((st = parse_biome(c, bv, b))) return st;
                pop(c);
            }
        } else if (strcmp(key, "rules") == 0) {
            if (!json_is_array(v))
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected an array of rule objects, found %s",
                            describe(v, buf, sizeof buf));
            size_t n = json_array_size(v);
            if (n > TRN_RCP_MAX_RULES)
                return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu rules; at most %u are allowed",
                            n, TRN_RCP_MAX_RULES);
            free(r->rules);
            r->rules = n ? calloc(n, sizeof *r->rules) : NULL;
            if (n && !r->rules) return oom(c);
            size_t i;
            json_t *rv;
            json_array_foreach(v, i, rv)
            {
                r->rule_count++;
                push_index(c, i);
                if ((st = parse_rule(c, rv, &r->rules[i]))) return st;
                pop(c);
            }
        } else if (strcmp(key, "layers") == 0) {
            st = parse_layers(c, v, r);
        } else if (strcmp(key, "regions") == 0 || strcmp(key, "edits") == 0 ||
                   strcmp(key, "exclusions") == 0) {
            /* Parsed after the loop, in section order (see parse_strokes). */
            int which = key[0] == 'r' ? 0 : key[1] == 'd' ? 1 : 2;
            if (!json_is_array(v))
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected an array of %s, found %s",
                            which == 0   ? "region strokes"
                            : which == 1 ? "edit strokes"
                                         : "exclusion strokes",
                            describe(v, buf, sizeof buf));
            sections[which] = v;
        } else if (strcmp(key, "palette") == 0) {
            st = keep_json(
                c, v, (json_is_string(v) && json_string_length(v) > 0) || json_is_object(v),
                "a palette asset id (a non-empty string) or a palette object", &r->palette_json);
        } else if (strcmp(key, "graph") == 0) {
            st = keep_json(c, v, json_is_object(v), "a graph object", &r->graph_json);
            if (!st) {
                /* The graph's shape is reported here, at its position in this file. */
                trn_graph g;
                st = trn_graph_parse_tree(v, c->text, c->size, c->file, &c->path, &g, c->err);
                if (st)
                    c->fail_code = st;
                else
                    trn_graph_dispose(&g);
                /* Read once: generation uses the typed graph, never the text again. */
                if (!st && trn_rcp_model_build(r, v)) st = oom(c);
            }
        } else if (strcmp(key, "format_version") == 0) {
            /* Accepted for documents that stamp the version on the recipe itself; there is
             * only one, so the canonical form leaves it out. */
            if (json_is_integer(v) && json_integer_value(v) > (json_int_t)TRN_RECIPE_FORMAT_VERSION)
                return perr(c, TRN_ERR_VERSION, TRN_JSON_VALUE,
                            "format_version %" JSON_INTEGER_FORMAT
                            " is newer than this build reads (%u)",
                            json_integer_value(v), TRN_RECIPE_FORMAT_VERSION);
            if (!json_is_integer(v) ||
                json_integer_value(v) != (json_int_t)TRN_RECIPE_FORMAT_VERSION)
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %u, found %s",
                            TRN_RECIPE_FORMAT_VERSION, describe(v, buf, sizeof buf));
        }
        if (st) return st;
        pop(c);
    }
    if (c->partial) return TRN_OK;
    if (!r->has_layers) {
        /* The five defaults, so code reading a parsed recipe always finds its layers. */
        uint32_t n;
        const trn_layer *d = trn_recipe_layers(NULL, &n);
        r->layers = calloc(n, sizeof *r->layers);
        if (!r->layers) return oom(c);
        for (uint32_t i = 0; i < n; i++) {
            r->layers[i] = d[i];
            r->layers[i].id = trn_text_dup(d[i].id);
            r->layers[i].name = trn_text_dup(d[i].name);
            r->layer_count++;
            if (!r->layers[i].id || !r->layers[i].name) return oom(c);
        }
    }
    if ((st = parse_strokes(c, sections, r))) return st;
    if (!json_object_get(obj, "size")) return missing_key(c, "size", "[x, z] in world units");
    if (!json_object_get(obj, "resolution"))
        return missing_key(c, "resolution", "[cells_x, cells_z]");
    if (!json_object_get(obj, "seed"))
        return missing_key(c, "seed", "a whole number 0..9223372036854775807");
    if (!r->landforms && !json_object_get(obj, "landforms"))
        return missing_key(c, "landforms", "an object of landforms keyed by name");
    if (!r->default_landform)
        return missing_key(c, "default_landform",
                           "the name of the landform that shapes the ground");
    if (!r->biomes && !json_object_get(obj, "biomes"))
        return missing_key(c, "biomes", "an object of biomes keyed by name");
    if (!r->default_biome)
        return missing_key(c, "default_biome", "the biome of ground no rule claims");
    return TRN_OK;
}

/* ---- documents ----------------------------------------------------------------------- */

trn_document_kind trn_rcp_classify_object(const json_t *root)
{
    if (!json_is_object(root)) return TRN_DOCUMENT_UNKNOWN;
    if (json_object_get(root, "recipe")) return TRN_DOCUMENT_TERRAIN_ASSET;
    if (json_is_string(json_object_get(root, "type")) && json_object_get(root, "importer"))
        return TRN_DOCUMENT_ASSET_MANIFEST;
    if (json_object_get(root, "datafile") ||
        (json_object_get(root, "version") &&
         (json_object_get(root, "heightMapSize") || json_object_get(root, "binaryFormat") ||
          json_object_get(root, "materials"))))
        return TRN_DOCUMENT_BEAMNG_TERRAIN;
    /* Palettes and material sets name themselves too; their own keys tell them apart. */
    if (json_object_get(root, "format_version") && !json_object_get(root, "landforms") &&
        !json_object_get(root, "resolution")) {
        if (json_object_get(root, "roles")) return TRN_DOCUMENT_MATERIAL_SET;
        if (json_object_get(root, "maps")) return TRN_DOCUMENT_MATERIAL;
        static const char *const palette_keys[] = {
            "placements",   "material_set", "art_density", "grass_density",
            "tree_density", "rock_density", NULL};
        for (const char *const *k = palette_keys; *k; k++)
            if (json_object_get(root, *k)) return TRN_DOCUMENT_TERRAIN_PALETTE;
        /* A palette needs none of those keys, and no other document is at the palette's
         * version (presets, recipes, material sets and Materials are at 1): a document there
         * holding no recipe key but the version is a palette, an empty one, which its reader
         * describes. */
        bool recipe_key = false;
        for (const trn_rcp_field *f = trn_rcp_recipe_fields; f->name && !recipe_key; f++)
            recipe_key = strcmp(f->name, "format_version") != 0 && json_object_get(root, f->name);
        if (!recipe_key && json_is_integer(json_object_get(root, "format_version")) &&
            json_integer_value(json_object_get(root, "format_version")) ==
                TRN_PALETTE_FORMAT_VERSION)
            return TRN_DOCUMENT_TERRAIN_PALETTE;
    }
    /* "name" is no recipe key: a document naming itself beside format_version is a preset. */
    if (json_is_string(json_object_get(root, "name")) && json_object_get(root, "format_version") &&
        !json_object_get(root, "landforms") && !json_object_get(root, "resolution"))
        return TRN_DOCUMENT_TERRAIN_PRESET;
    for (const trn_rcp_field *f = trn_rcp_recipe_fields; f->name; f++)
        if (json_object_get(root, f->name)) return TRN_DOCUMENT_RECIPE;
    return TRN_DOCUMENT_UNKNOWN;
}

/* The Terrain asset document's keys. */
static const char *const asset_keys[] = {"format_version", "id", "recipe", NULL};

static trn_status parse_asset(pctx *c, const json_t *root, const json_t **recipe_out)
{
    char buf[120];
    const char *key;
    json_t *v;
    bool have_version = false, have_id = false;
    json_object_foreach((json_t *)root, key, v)
    {
        push(c, key);
        if (strcmp(key, "format_version") == 0) {
            if (json_is_integer(v) && json_integer_value(v) > (json_int_t)TRN_RECIPE_FORMAT_VERSION)
                return perr(c, TRN_ERR_VERSION, TRN_JSON_VALUE,
                            "format_version %" JSON_INTEGER_FORMAT
                            " is newer than this build reads (%u)",
                            json_integer_value(v), TRN_RECIPE_FORMAT_VERSION);
            if (!json_is_integer(v) ||
                json_integer_value(v) != (json_int_t)TRN_RECIPE_FORMAT_VERSION)
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %u, found %s",
                            TRN_RECIPE_FORMAT_VERSION, describe(v, buf, sizeof buf));
            have_version = true;
        } else if (strcmp(key, "id") == 0) {
            const char *s = json_string_value(v);
            if (!s || strncmp(s, "asset://", 8) != 0 || !s[8])
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected an asset id such as \"asset://terrain/landscape\", found %s",
                            describe(v, buf, sizeof buf));
            have_id = true;
        } else if (strcmp(key, "recipe") == 0) {
            if (!json_is_object(v))
                return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a recipe object, found %s",
                            describe(v, buf, sizeof buf));
            *recipe_out = v;
        } else {
            pop(c);
            return unknown_key(c, key, asset_keys, "the Terrain asset document");
        }
        pop(c);
    }
    if (!have_version)
        return missing_key(c, "format_version", "1, the version of the asset document");
    if (!have_id) return missing_key(c, "id", "a stable \"asset://...\" id");
    return TRN_OK;
}

void trn_recipe_dispose(trn_recipe *r)
{
    if (!r) return;
    for (uint32_t i = 0; r->landforms && i < r->landform_count; i++) {
        free(r->landforms[i].name);
        free(r->landforms[i].evolution);
    }
    free(r->landforms);
    for (uint32_t i = 0; r->biomes && i < r->biome_count; i++) {
        free(r->biomes[i].name);
        free(r->biomes[i].material);
        free(r->biomes[i].landform);
    }
    free(r->biomes);
    for (uint32_t i = 0; r->rules && i < r->rule_count; i++) {
        free(r->rules[i].id);
        free(r->rules[i].biome);
        free(r->rules[i].layer);
    }
    free(r->rules);
    free(r->default_landform);
    free(r->default_biome);
    for (uint32_t i = 0; r->layers && i < r->layer_count; i++) {
        free(r->layers[i].id);
        free(r->layers[i].name);
    }
    free(r->layers);
    for (uint32_t i = 0; r->strokes && i < r->stroke_count; i++)
        trn_stroke_dispose(&r->strokes[i]);
    free(r->strokes);
    free(r->palette_json);
    free(r->graph_json);
    trn_rcp_model_release(r->model);
    free(r->preset_id);
    free(r->base_dir);
    memset(r, 0, sizeof *r);
}

trn_status trn_recipe_set_base_dir(trn_recipe *recipe, const char *dir, trn_error *err)
{
    if (!recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_set_base_dir: recipe is required");
    char *copy = NULL;
    if (dir) {
        const size_t n = strlen(dir) + 1;
        if (!(copy = malloc(n)))
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        memcpy(copy, dir, n);
    }
    free(recipe->base_dir);
    recipe->base_dir = copy;
    return TRN_OK;
}

trn_status trn_recipe_set_base_dir_of(trn_recipe *recipe, const char *path, trn_error *err)
{
    const char *slash = path ? strrchr(path, '/') : NULL;
    if (!slash) return trn_recipe_set_base_dir(recipe, ".", err);
    if (slash == path) return trn_recipe_set_base_dir(recipe, "/", err);
    char dir[4096];
    const size_t n = (size_t)(slash - path);
    if (n >= sizeof dir)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "the path is too long");
    memcpy(dir, path, n);
    dir[n] = '\0';
    return trn_recipe_set_base_dir(recipe, dir, err);
}

static size_t bom_length(const char *text, size_t size)
{
    const unsigned char *s = (const unsigned char *)text;
    return size >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF ? 3 : 0;
}

/* jansson reports the position after the token it stopped on; its message quotes that token
 * ("near 'NaN'") when it is at most 20 bytes, so the token starts that many bytes earlier.
 * Without a quoted token, the last byte consumed is the offending one. */
static size_t syntax_error_offset(const json_error_t *je)
{
    size_t position = je->position > 0 ? (size_t)je->position : 0;
    const char *near = NULL;
    for (const char *p = strstr(je->text, " near '"); p; p = strstr(p + 1, " near '"))
        near = p;
    size_t len = strlen(je->text);
    if (near && len > 0 && je->text[len - 1] == '\'') {
        size_t token = (size_t)(je->text + len - 1 - (near + 7));
        if (token > 0 && token <= position) return position - token;
    }
    return position > 0 ? position - 1 : 0;
}

trn_status trn_recipe_parse(const char *text, size_t size, const char *path, trn_recipe *recipe,
                            trn_document_kind *kind_out, trn_error *err)
{
    if (kind_out) *kind_out = TRN_DOCUMENT_UNKNOWN;
    if (!recipe || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_recipe_parse: recipe and text are required");
    memset(recipe, 0, sizeof *recipe);
    if (!text) text = "";
    pctx c;
    memset(&c, 0, sizeof c);
    c.text = text;
    c.size = size;
    c.file = path;
    c.err = err;

    size_t bom = bom_length(text, size);
    json_error_t je;
    trn_json_parse_counted();
    json_t *root = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        trn_json_pos pos = trn_json_pos_of_offset(text, size, bom + syntax_error_offset(&je));
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        return TRN_ERR_JSON;
    }
    char buf[120];
    trn_document_kind kind = trn_rcp_classify_object(root);
    if (kind == TRN_DOCUMENT_UNKNOWN && json_is_object(root)) kind = TRN_DOCUMENT_RECIPE;
    if (kind_out) *kind_out = kind;
    trn_status st = TRN_OK;
    const json_t *robj = root;
    switch (kind) {
    case TRN_DOCUMENT_ASSET_MANIFEST: {
        const char *source = json_string_value(json_object_get(root, "source"));
        if (source)
            st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                      "this is an asset manifest (type/importer), not a recipe; pass the source "
                      "document it names, '%s'",
                      source);
        else
            st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                      "this is an asset manifest (type/importer), not a recipe; pass the "
                      "Terrain asset source (NAME.terrain.json) instead");
        break;
    }
    case TRN_DOCUMENT_BEAMNG_TERRAIN:
        st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                  "this is BeamNG terrain metadata (a .terrain.json with version and datafile), "
                  "not a terrane recipe; use 'terrane info' to describe it");
        break;
    case TRN_DOCUMENT_TERRAIN_PRESET:
        st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                  "this is a terrain_preset document (format_version, name, biomes, rules, ...), "
                  "not a recipe; list it with 'terrane presets PROJECT' and merge it into a "
                  "recipe with 'terrane apply-preset'");
        break;
    case TRN_DOCUMENT_TERRAIN_PALETTE:
    case TRN_DOCUMENT_MATERIAL_SET:
        st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                  "this is a %s document, not a recipe; a recipe names its palette by asset id "
                  "(\"palette\": \"asset://...\"), and 'terrane inspect' describes it",
                  kind == TRN_DOCUMENT_MATERIAL_SET ? "terrain_material_set" : "terrain_palette");
        break;
    case TRN_DOCUMENT_MATERIAL:
        st = perr(&c, TRN_ERR_FORMAT, TRN_JSON_VALUE,
                  "this is a Material document (format_version, name, maps), not a recipe; a "
                  "material set or a biome names a Material by asset id (\"asset://...\"), and "
                  "'terrane inspect' describes it");
        break;
    case TRN_DOCUMENT_UNKNOWN:
        st = perr(&c, TRN_ERR_JSON, TRN_JSON_VALUE,
                  "expected a recipe object or a Terrain asset document, found %s",
                  describe(root, buf, sizeof buf));
        break;
    case TRN_DOCUMENT_TERRAIN_ASSET:
        robj = NULL;
        st = parse_asset(&c, root, &robj);
        if (!st && !robj) st = missing_key(&c, "recipe", "the recipe object");
        if (!st) push(&c, "recipe");
        break;
    case TRN_DOCUMENT_RECIPE:
        break;
    }
    if (!st) st = parse_recipe_object(&c, robj, recipe);
    if (!st) {
        trn_json_path where = {{{0}}, 0};
        trn_json_target target;
        char msg[400];
        trn_status cs = trn_rcp_check(recipe, &where, &target, msg, sizeof msg);
        if (cs) {
            /* The struct check's path is relative to the recipe object. */
            for (size_t d = 0; d < where.depth; d++) {
                if (where.steps[d].key)
                    push(&c, where.steps[d].key);
                else
                    push_index(&c, where.steps[d].index);
            }
            st = perr(&c, cs == TRN_ERR_VALIDATION ? TRN_ERR_JSON : cs, target, "%s", msg);
        } else if (trn_rcp_model_make(recipe)) {
            st = oom(&c);
        } else {
            /* Checked once, here: generation and the cache key do not check it again while
             * its content stays the same. */
            uint64_t print;
            if (trn_rcp_fingerprint(recipe, &print)) trn_rcp_model_mark_valid(recipe, print);
        }
    }
    json_decref(root);
    if (st) trn_recipe_dispose(recipe);
    return st;
}

trn_status trn_rcp_parse_partial(const char *text, size_t size, const char *file, const json_t *obj,
                                 const char *const *skip_keys, trn_recipe *recipe, trn_error *err)
{
    memset(recipe, 0, sizeof *recipe);
    pctx c;
    memset(&c, 0, sizeof c);
    c.text = text;
    c.size = size;
    c.file = file;
    c.err = err;
    c.skip_keys = skip_keys;
    c.partial = true;
    trn_status st = parse_recipe_object(&c, obj, recipe);
    if (st) trn_recipe_dispose(recipe);
    return st;
}

trn_status trn_recipe_read(const char *path, trn_recipe *recipe, trn_document_kind *kind_out,
                           trn_error *err)
{
    if (kind_out) *kind_out = TRN_DOCUMENT_UNKNOWN;
    if (recipe) memset(recipe, 0, sizeof *recipe);
    if (!path || !recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_read: path and recipe are required");
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(path, TRN_RCP_MAX_FILE_SIZE, &data, &size, err);
    if (st) return st;
    st = trn_recipe_parse((const char *)data, size, path, recipe, kind_out, err);
    free(data);
    /* Files the recipe names (a Heightfield Input's path) are relative to its folder. */
    if (!st && (st = trn_recipe_set_base_dir_of(recipe, path, err))) trn_recipe_dispose(recipe);
    return st;
}
