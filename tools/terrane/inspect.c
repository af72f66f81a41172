/* terrane inspect: describe a terrain recipe (grid, landforms, biomes, layers, rules, seeds,
 * graph). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fmt_palette.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane inspect RECIPE [--cache DIR] [--format text|json]\n"
    "\n"
    "Read a terrain recipe without generating it and describe it: which document it is (a bare\n"
    "recipe object or a Terrain asset source), size, resolution, sample count, seed, chunks,\n"
    "default landform and biome, sea level and how it was derived, the landforms (controls\n"
    "that differ from the defaults), the biome table, the layer tree, every rule with its\n"
    "conditions, stroke counts by kind, the derived sub-seeds, the cache key and sampling\n"
    "precision diagnostics. A recipe with errors is refused with file:line:column: and the\n"
    "JSON path of the offending value. docs/recipes.md describes the format.\n"
    "\n"
    "The graph section lists the recipe's graph (recipe.graph, or the implicit landform ->\n"
    "biome_rules -> terrain_output): its nodes in order with their inputs (pin <- node.pin)\n"
    "and the parameters that differ from the defaults, the output node, every diagnostic with\n"
    "file:line:column, and, when the graph has no errors, each node's cache key at final\n"
    "quality. A draft whose graph has errors is still described (exit 0): the section says how\n"
    "many errors generate would refuse.\n"
    "\n"
    "A terrain_palette or terrain_material_set document is checked and described instead: the\n"
    "palette's material set, density multipliers and placement rules (id, geometry, category,\n"
    "density, candidate spacing, spacing, collision), or the set's role bindings\n"
    "(docs/palettes.md).\n"
    "\n"
    "Lakes need the ground to be checked: a lake with a fixed level may stand above lower\n"
    "ground past its radius or boundary and leak. Without --water, inspect only counts the\n"
    "fixed-level lakes; with --water it generates the recipe (what 'terrane generate' costs;\n"
    "with --cache, only the nodes the cache lacks run) and warns, for every lake that would\n"
    "leak, of its level, the level at which its water would spill and the fix (level \"spill\"\n"
    "or a level at most that high); spill lakes show the level they took.\n"
    "\n"
    "options:\n"
    "  --cache DIR     say which node results the cache directory DIR (generate --cache)\n"
    "                  already holds and what they cost; DIR is only read (with --water, the\n"
    "                  generation reuses and stores node results there, as generate does)\n"
    "  --water         generate the recipe and check its lakes against the ground\n"
    "  --format json   print the same facts as JSON on stdout\n"
    "  -q, --quiet     no notes on stderr\n"
    "\n"
    "exit status: 0 described (graph errors included), 1 the recipe is invalid or unreadable,\n"
    "2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane inspect examples/recipes/island.json\n"
    "  terrane inspect landscape.terrain.json --format json\n"
    "  terrane inspect valley.json --cache .terrane-cache\n"
    "  terrane inspect lakeside.json --water\n";

static const char *const stroke_sections[] = {"regions", "edits", "exclusions"};

static int stroke_section(trn_stroke_kind kind)
{
    return kind == TRN_STROKE_REGION ? 0 : kind == TRN_STROKE_EXCLUSION ? 2 : 1;
}

static void fmt_num(double v, char out[40])
{
    trn_rcp_format_double(v, out);
}

static void fmt_color(const float c[4], char *out, size_t size)
{
    char n[4][40];
    for (int k = 0; k < 4; k++)
        trn_rcp_format_float(c[k], n[k]);
    snprintf(out, size, "[%s, %s, %s, %s]", n[0], n[1], n[2], n[3]);
}

static void fmt_hex(const float c[4], char out[12])
{
    unsigned v[4];
    for (int k = 0; k < 4; k++) {
        double x = c[k] < 0 ? 0 : c[k] > 1 ? 1 : c[k];
        v[k] = (unsigned)floor(x * 255.0 + 0.5);
    }
    snprintf(out, 12, "#%02X%02X%02X%02X", v[0], v[1], v[2], v[3]);
}

static const char *profile_name(trn_profile p)
{
    return p == TRN_PROFILE_RIDGED ? "ridged" : "fbm";
}

/* A landform's controls: name, value text, whether it is the default. */
typedef struct control {
    const char *key;
    char value[40];
    bool is_default;
    double number;
    bool numeric;
} control;

static size_t landform_controls(const trn_landform *lf, control out[10])
{
    const struct {
        const char *key;
        double value;
    } nums[] = {{"base_height", lf->base_height},
                {"height_variation", lf->height_variation},
                {"feature_size", lf->feature_size},
                {"roughness", lf->roughness},
                {"octaves", (double)lf->octaves},
                {"warp_amplitude", lf->warp_amplitude},
                {"warp_feature_size", lf->warp_feature_size},
                {"stretch", lf->stretch},
                {"heading", lf->heading}};
    size_t n = 0;
    out[n].key = "profile";
    snprintf(out[n].value, sizeof out[n].value, "%s", profile_name(lf->profile));
    out[n].is_default = trn_rcp_landform_field_is_default(lf, "profile");
    out[n].numeric = false;
    out[n].number = 0;
    n++;
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++, n++) {
        out[n].key = nums[i].key;
        fmt_num(nums[i].value, out[n].value);
        out[n].is_default = trn_rcp_landform_field_is_default(lf, nums[i].key);
        out[n].numeric = true;
        out[n].number = nums[i].value;
    }
    return n;
}

static json_t *band_json(const trn_band *b)
{
    if (!b->set) return json_null();
    json_t *a = json_array();
    json_array_append_new(a, json_real(b->min));
    json_array_append_new(a, json_real(b->max));
    return a;
}

/* The layer a rule or stroke hangs on: its own "layer", or, in the default tree, the default
 * layer of its kind (rules evaluate with the biomes stage). NULL: none. */
static const char *rule_layer(const trn_rule *rule, bool default_tree)
{
    return rule->layer ? rule->layer : default_tree ? "biomes" : NULL;
}

/* Adds one to counts[key]. */
static void count_up(json_t *counts, const char *key)
{
    json_t *c = json_object_get(counts, key);
    json_object_set_new(counts, key, json_integer(c ? json_integer_value(c) + 1 : 1));
}

/* Build the whole description as JSON; the text form prints from the same tree. */
static json_t *describe(const char *path, const trn_recipe *r, trn_document_kind kind)
{
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(
        o, "input_format",
        cli_json_string(kind == TRN_DOCUMENT_TERRAIN_ASSET ? "terrain_asset" : "recipe"));
    json_t *size = json_array();
    json_array_append_new(size, json_real(r->size_x));
    json_array_append_new(size, json_real(r->size_z));
    json_object_set_new(o, "size", size);
    json_t *res = json_array();
    json_array_append_new(res, json_integer(r->cells_x));
    json_array_append_new(res, json_integer(r->cells_z));
    json_object_set_new(o, "cells", res);
    uint64_t sx = (uint64_t)r->cells_x + 1, sz = (uint64_t)r->cells_z + 1;
    json_t *samples = json_array();
    json_array_append_new(samples, json_integer((json_int_t)sx));
    json_array_append_new(samples, json_integer((json_int_t)sz));
    json_object_set_new(o, "grid", samples);
    json_object_set_new(o, "samples", json_integer((json_int_t)(sx * sz)));
    json_object_set_new(o, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(o, "chunk_cells", json_integer(r->chunk_cells));
    uint32_t chx = (r->cells_x + r->chunk_cells - 1) / r->chunk_cells;
    uint32_t chz = (r->cells_z + r->chunk_cells - 1) / r->chunk_cells;
    json_t *chunks = json_array();
    json_array_append_new(chunks, json_integer(chx));
    json_array_append_new(chunks, json_integer(chz));
    json_object_set_new(o, "chunk_grid", chunks);
    json_object_set_new(o, "chunks", json_integer((json_int_t)chx * chz));
    json_object_set_new(o, "default_landform", cli_json_string(r->default_landform));
    json_object_set_new(o, "default_biome", cli_json_string(r->default_biome));

    trn_sea_level_source src;
    char how[300];
    double level = trn_recipe_sea_level(r, &src, how, sizeof how);
    json_t *sea = json_object();
    json_object_set_new(sea, "value", json_real(level));
    json_object_set_new(sea, "source",
                        cli_json_string(src == TRN_SEA_LEVEL_EXPLICIT ? "explicit" : "derived"));
    json_object_set_new(sea, "how", cli_json_string(how));
    json_object_set_new(o, "sea_level", sea);

    uint64_t key = 0;
    trn_recipe_cache_key(r, &key, NULL);
    char hex[24];
    snprintf(hex, sizeof hex, "%016" PRIx64, key);
    json_object_set_new(o, "cache_key", cli_json_string(hex));
    json_object_set_new(o, "generator_version", json_integer(TRN_GENERATOR_VERSION));

    json_t *lfs = json_array();
    for (uint32_t i = 0; i < r->landform_count; i++) {
        const trn_landform *lf = &r->landforms[i];
        json_t *l = json_object();
        json_object_set_new(l, "name", cli_json_string(lf->name));
        json_object_set_new(l, "default", json_boolean(strcmp(lf->name, r->default_landform) == 0));
        control c[10];
        size_t n = landform_controls(lf, c);
        json_t *all = json_object(), *changed = json_array();
        for (size_t k = 0; k < n; k++) {
            json_object_set_new(
                all, c[k].key, c[k].numeric ? json_real(c[k].number) : cli_json_string(c[k].value));
            if (!c[k].is_default) json_array_append_new(changed, cli_json_string(c[k].key));
        }
        json_object_set_new(l, "controls", all);
        json_object_set_new(l, "non_default", changed);
        /* Landscape evolution run on the noise (a Stream Power node's parameters), or null. */
        json_t *evo = lf->evolution ? json_loads(lf->evolution, 0, NULL) : NULL;
        json_object_set_new(l, "evolution", evo ? evo : json_null());
        json_t *used = json_array();
        for (uint32_t b = 0; b < r->biome_count; b++) {
            const char *bl = r->biomes[b].landform ? r->biomes[b].landform : r->default_landform;
            if (strcmp(bl, lf->name) == 0)
                json_array_append_new(used, cli_json_string(r->biomes[b].name));
        }
        json_object_set_new(l, "biomes", used);
        json_array_append_new(lfs, l);
    }
    json_object_set_new(o, "landforms", lfs);

    json_t *bs = json_array();
    for (uint32_t i = 0; i < r->biome_count; i++) {
        const trn_biome *b = &r->biomes[i];
        json_t *bo = json_object();
        json_object_set_new(bo, "name", cli_json_string(b->name));
        json_object_set_new(bo, "default", json_boolean(strcmp(b->name, r->default_biome) == 0));
        json_t *col = json_array();
        for (int k = 0; k < 4; k++) {
            char n[40];
            trn_rcp_format_float(b->color[k], n);
            json_array_append_new(col, json_real(trn_rcp_parse_double(n)));
        }
        json_object_set_new(bo, "color", col);
        char hx[12];
        fmt_hex(b->color, hx);
        json_object_set_new(bo, "hex", cli_json_string(hx));
        json_object_set_new(bo, "material",
                            b->material ? cli_json_string(b->material) : json_null());
        json_object_set_new(bo, "texture_scale", json_real(b->texture_scale));
        json_object_set_new(bo, "landform",
                            cli_json_string(b->landform ? b->landform : r->default_landform));
        json_object_set_new(bo, "landform_is_default", json_boolean(b->landform == NULL));
        json_object_set_new(bo, "allow_snow", json_boolean(b->allow_snow));
        json_array_append_new(bs, bo);
    }
    json_object_set_new(o, "biomes", bs);

    json_t *rules = json_array();
    for (uint32_t i = 0; i < r->rule_count; i++) {
        const trn_rule *rule = &r->rules[i];
        json_t *ro = json_object();
        json_object_set_new(ro, "index", json_integer(i));
        json_object_set_new(ro, "id", cli_json_string(rule->id));
        json_object_set_new(ro, "biome", cli_json_string(rule->biome));
        json_object_set_new(ro, "layer", rule->layer ? cli_json_string(rule->layer) : json_null());
        json_object_set_new(ro, "priority", json_real(rule->priority));
        json_object_set_new(ro, "blend", json_real(rule->blend));
        json_object_set_new(ro, "elevation", band_json(&rule->elevation));
        json_object_set_new(ro, "slope", band_json(&rule->slope));
        json_object_set_new(ro, "moisture", band_json(&rule->moisture));
        json_object_set_new(ro, "water_distance", band_json(&rule->water_distance));
        if (rule->substrate_mask) {
            json_t *sub = json_array();
            for (int s = 0; s < TRN_SUBSTRATE_COUNT; s++)
                if (rule->substrate_mask & (1u << s))
                    json_array_append_new(sub,
                                          cli_json_string(trn_substrate_name((trn_substrate)s)));
            json_object_set_new(ro, "substrate", sub);
        } else {
            json_object_set_new(ro, "substrate", json_null());
        }
        json_array_append_new(rules, ro);
    }
    json_object_set_new(o, "rules", rules);

    /* Strokes by kind, and the layer tree they and the rules hang on. */
    uint32_t layer_count;
    const trn_layer *layer_list = trn_recipe_layers(r, &layer_count);
    json_t *strokes = json_object();
    json_t *sections[3];
    for (int s = 0; s < 3; s++) {
        sections[s] = json_object();
        json_object_set_new(sections[s], "total", json_integer(0));
        json_object_set_new(sections[s], "by_type", json_object());
        json_object_set_new(strokes, stroke_sections[s], sections[s]);
    }
    json_t *layer_strokes = json_array(); /* per layer: {"total", "by_type"} */
    for (uint32_t i = 0; i < layer_count; i++) {
        json_t *ls = json_object();
        json_object_set_new(ls, "total", json_integer(0));
        json_object_set_new(ls, "by_type", json_object());
        json_array_append_new(layer_strokes, ls);
    }
    json_int_t on_disabled = 0, points = 0;
    for (uint32_t k = 0; k < r->stroke_count; k++) {
        const trn_stroke *st = &r->strokes[k];
        const char *type = trn_stroke_kind_name(st->kind);
        json_t *sec = sections[stroke_section(st->kind)];
        json_object_set_new(sec, "total",
                            json_integer(json_integer_value(json_object_get(sec, "total")) + 1));
        count_up(json_object_get(sec, "by_type"), type);
        points += st->kind == TRN_STROKE_PROTECT ? 0 : (json_int_t)st->point_count;
        const trn_layer *on = trn_recipe_stroke_layer(r, st);
        if (!on) continue; /* validation guarantees one */
        json_t *ls = json_array_get(layer_strokes, (size_t)(on - layer_list));
        json_object_set_new(ls, "total",
                            json_integer(json_integer_value(json_object_get(ls, "total")) + 1));
        count_up(json_object_get(ls, "by_type"), type);
        if (!on->enabled) on_disabled++;
    }
    json_object_set_new(strokes, "stamps", json_integer(points));
    json_object_set_new(strokes, "on_disabled_layers", json_integer(on_disabled));
    json_object_set_new(o, "strokes", strokes);

    json_t *layers = json_object();
    json_t *tree = json_array();
    json_object_set_new(layers, "source", cli_json_string(r->has_layers ? "recipe" : "default"));
    for (uint32_t i = 0; i < layer_count; i++) {
        const trn_layer *l = &layer_list[i];
        json_t *lo = json_object();
        json_object_set_new(lo, "id", cli_json_string(l->id));
        json_object_set_new(lo, "name", cli_json_string(l->name ? l->name : l->id));
        json_object_set_new(lo, "group", cli_json_string(trn_layer_group_name(l->group)));
        json_object_set_new(lo, "enabled", json_boolean(l->enabled));
        json_t *lr = json_array();
        for (uint32_t k = 0; k < r->rule_count; k++) {
            const char *on = rule_layer(&r->rules[k], !r->has_layers);
            if (on && strcmp(on, l->id) == 0)
                json_array_append_new(lr, cli_json_string(r->rules[k].id));
        }
        json_object_set_new(lo, "rules", lr);
        json_object_set(lo, "strokes", json_array_get(layer_strokes, i));
        json_array_append_new(tree, lo);
    }
    json_decref(layer_strokes);
    json_object_set_new(layers, "tree", tree);
    /* Rules that name no listed layer (rules' layers are not checked yet). */
    json_t *loose_rules = json_array();
    for (uint32_t k = 0; k < r->rule_count; k++) {
        bool found = false;
        const char *on = rule_layer(&r->rules[k], !r->has_layers);
        for (uint32_t i = 0; on && i < layer_count; i++)
            if (strcmp(layer_list[i].id, on) == 0) found = true;
        if (!found) json_array_append_new(loose_rules, cli_json_string(r->rules[k].id));
    }
    json_object_set_new(layers, "rules_without_layer", loose_rules);
    json_object_set_new(o, "recipe_layers", layers);

    json_t *seeds = json_array();
    for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
        uint64_t v = trn_subseed_of(r->seed, (trn_seed_channel)c);
        char h[24], d[24];
        snprintf(h, sizeof h, "%016" PRIx64, v);
        snprintf(d, sizeof d, "%" PRIu64, v);
        json_t *so = json_object();
        json_object_set_new(so, "channel",
                            cli_json_string(trn_seed_channel_name((trn_seed_channel)c)));
        json_object_set_new(so, "hex", cli_json_string(h));
        json_object_set_new(so, "value", cli_json_string(d));
        json_array_append_new(seeds, so);
    }
    json_object_set_new(o, "sub_seeds", seeds);

    json_t *diags = json_array();
    for (uint32_t i = 0; i < r->landform_count; i++) {
        char msg[512];
        if (trn_landform_precision_check(&r->landforms[i], r->size_x, r->size_z, msg, sizeof msg)) {
            json_t *d = json_object();
            json_object_set_new(d, "landform", cli_json_string(r->landforms[i].name));
            json_object_set_new(d, "message", cli_json_string(msg));
            json_array_append_new(diags, d);
        }
    }
    json_object_set_new(o, "diagnostics", diags);
    return o;
}

/* ---- the graph ---- */

/* A parameter's value as JSON (points as [[x, z], ...]; anything else as the JSON it was). */
static json_t *param_value_json(const trn_graph_param *p)
{
    switch (p->type) {
    case TRN_VALUE_NUMBER:
        return json_real(p->number);
    case TRN_VALUE_STRING:
        return cli_json_string(p->text ? p->text : "");
    case TRN_VALUE_BOOL:
        return json_boolean(p->boolean);
    case TRN_VALUE_POINTS: {
        /* point_dim numbers a point: 1 is a flat vector ([32, 32]), 2 and 3 nested points. */
        json_t *a = json_array();
        const uint32_t dim = p->point_dim ? p->point_dim : 2u;
        for (uint32_t k = 0; k < p->point_count; k++) {
            if (dim == 1) {
                json_array_append_new(a, json_real(p->points[k]));
                continue;
            }
            json_t *pt = json_array();
            for (uint32_t d = 0; d < dim; d++)
                json_array_append_new(pt, json_real(p->points[(size_t)dim * k + d]));
            json_array_append_new(a, pt);
        }
        return a;
    }
    case TRN_VALUE_OTHER:
        break;
    }
    json_t *v = p->text ? json_loads(p->text, JSON_DECODE_ANY, NULL) : NULL;
    return v ? v : cli_json_string(p->text ? p->text : "");
}

/* Whether a parameter differs from its type's default (unknown ones always do: they are
 * shown so the diagnostics below have something to point at). */
static bool param_is_default(const trn_node_type *t, const trn_graph_param *p)
{
    const trn_param_spec *s = t ? trn_node_type_param(t, p->name) : NULL;
    if (!s || s->optional) return false;
    switch (s->type) {
    case TRN_PARAM_NUMBER:
    case TRN_PARAM_INTEGER:
        return p->type == TRN_VALUE_NUMBER && p->number == s->def;
    case TRN_PARAM_STRING:
    case TRN_PARAM_CHOICE:
        return p->type == TRN_VALUE_STRING && s->def_text && strcmp(p->text, s->def_text) == 0;
    case TRN_PARAM_POINTS:
    case TRN_PARAM_POINTS3:
    case TRN_PARAM_VECTOR:
    case TRN_PARAM_JSON:
        break;
    }
    return false;
}

/* The "graph" object: nodes, output, diagnostics, keys and (with a cache) what it holds. */
static json_t *describe_graph(const cli_graph *g, const trn_recipe *r, const trn_palette *palette,
                              trn_graph_cache *cache, const char *cache_dir)
{
    json_t *o = json_object();
    const trn_graph *graph = &g->graph;
    json_object_set_new(o, "source", cli_json_string(g->from_recipe ? "recipe" : "implicit"));
    json_object_set_new(o, "output", graph->output ? cli_json_string(graph->output) : json_null());
    json_object_set_new(o, "error_count", json_integer((json_int_t)g->errors));
    json_object_set_new(o, "warning_count", json_integer((json_int_t)g->warnings));
    uint64_t *keys = NULL;
    char key_error[600] = "";
    if (!g->errors && graph->node_count) {
        keys = calloc(graph->node_count, sizeof *keys);
        trn_error e;
        /* With the recipe's palette, Scatter Palette nodes get the keys evaluation gives them. */
        trn_graph_options go;
        memset(&go, 0, sizeof go);
        go.quality = TRN_EROSION_FINAL;
        go.palette = palette;
        if (keys && trn_graph_keys_for(graph, r, &go, keys, &e)) {
            trn_error_format(&e, key_error, sizeof key_error);
            free(keys);
            keys = NULL;
        }
    }
    json_object_set_new(o, "keys_quality", keys ? cli_json_string("final") : json_null());
    if (key_error[0]) json_object_set_new(o, "keys_error", cli_json_string(key_error));
    json_object_set_new(o, "cache_dir", cache_dir ? cli_json_string(cache_dir) : json_null());
    json_t *nodes = json_array();
    for (uint32_t k = 0; k < graph->node_count; k++) {
        const trn_graph_node *n = &graph->nodes[k];
        const trn_node_type *t = trn_node_type_find(n->type);
        json_t *no = json_object();
        json_object_set_new(no, "id", cli_json_string(n->id));
        json_object_set_new(no, "type", cli_json_string(n->type));
        json_object_set_new(no, "title", t ? cli_json_string(t->title) : json_null());
        json_object_set_new(no, "is_output",
                            json_boolean(graph->output && strcmp(graph->output, n->id) == 0));
        json_t *ins = json_array();
        for (uint32_t i = 0; i < n->input_count; i++) {
            const trn_graph_link *l = &n->inputs[i];
            json_t *lo = json_object();
            json_object_set_new(lo, "pin", cli_json_string(l->pin));
            json_object_set_new(lo, "node", cli_json_string(l->node));
            /* A link may leave out the pin of a single-output source: name it anyway. */
            const char *outp = l->output;
            for (uint32_t s = 0; !outp && s < graph->node_count; s++) {
                const trn_node_type *st = trn_node_type_find(graph->nodes[s].type);
                if (strcmp(graph->nodes[s].id, l->node) == 0 && st && st->output_count == 1)
                    outp = st->outputs[0].name;
            }
            json_object_set_new(lo, "output", outp ? cli_json_string(outp) : json_null());
            json_array_append_new(ins, lo);
        }
        json_object_set_new(no, "inputs", ins);
        json_t *params = json_object();
        for (uint32_t i = 0; i < n->param_count; i++)
            if (!param_is_default(t, &n->params[i]))
                json_object_set_new(params, n->params[i].name, param_value_json(&n->params[i]));
        json_object_set_new(no, "params", params);
        if (keys && keys[k]) {
            char hex[17];
            cli_graph_key_hex(keys[k], hex);
            json_object_set_new(no, "key", cli_json_string(hex));
        } else {
            json_object_set_new(no, "key", json_null());
        }
        if (cache) {
            double cost = 0.0;
            const bool has = keys && keys[k] && trn_graph_cache_has(cache, keys[k], &cost);
            json_object_set_new(no, "cached", json_boolean(has));
            json_object_set_new(no, "cached_cpu_seconds", has ? json_real(cost) : json_null());
        }
        json_array_append_new(nodes, no);
    }
    json_object_set_new(o, "nodes", nodes);
    json_t *diags = json_array();
    for (size_t k = 0; k < g->diags.count; k++)
        json_array_append_new(diags, cli_graph_diagnostic_json(&g->diags.items[k]));
    json_object_set_new(o, "diagnostics", diags);
    free(keys);
    return o;
}

/* One parameter value as text: numbers shortest, points as their count and first point. */
static void value_text(const json_t *v, char *out, size_t size)
{
    if (json_is_number(v)) {
        char n[40];
        fmt_num(json_number_value(v), n);
        snprintf(out, size, "%s", n);
    } else if (json_is_string(v)) {
        snprintf(out, size, "\"%.200s\"", json_string_value(v));
    } else if (json_is_array(v) && json_array_size(v) && json_is_array(json_array_get(v, 0))) {
        char x[40], z[40];
        fmt_num(json_number_value(json_array_get(json_array_get(v, 0), 0)), x);
        fmt_num(json_number_value(json_array_get(json_array_get(v, 0), 1)), z);
        snprintf(out, size, "%zu points from [%s, %s]", json_array_size(v), x, z);
    } else {
        char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        snprintf(out, size, "%.200s", t ? t : "?");
        free(t);
    }
}

static void print_graph_text(const json_t *g, const char *path)
{
    const json_t *nodes = json_object_get(g, "nodes");
    const json_int_t errors = json_integer_value(json_object_get(g, "error_count"));
    const json_int_t warnings = json_integer_value(json_object_get(g, "warning_count"));
    const bool implicit = strcmp(json_string_value(json_object_get(g, "source")), "implicit") == 0;
    const char *output = json_string_value(json_object_get(g, "output"));
    cli_printf("\ngraph (%s, %zu node%s), output %s:\n",
               implicit ? "implicit: the recipe has none" : "recipe.graph", json_array_size(nodes),
               json_array_size(nodes) == 1 ? "" : "s", output ? output : "(not set)");
    const bool with_cache = !json_is_null(json_object_get(g, "cache_dir"));
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        const json_t *key = json_object_get(n, "key");
        cli_printf("  %s (%s)%s", json_string_value(json_object_get(n, "id")),
                   json_string_value(json_object_get(n, "type")),
                   json_is_true(json_object_get(n, "is_output")) ? " [output]" : "");
        if (json_is_string(key)) cli_printf("  key %s", json_string_value(key));
        cli_printf("\n");
        size_t k;
        json_t *l;
        json_array_foreach(json_object_get(n, "inputs"), k, l)
        {
            const json_t *outp = json_object_get(l, "output");
            cli_printf("    %s <- %s%s%s\n", json_string_value(json_object_get(l, "pin")),
                       json_string_value(json_object_get(l, "node")),
                       json_is_string(outp) ? "." : "",
                       json_is_string(outp) ? json_string_value(outp) : "");
        }
        const char *name;
        json_t *v;
        json_object_foreach(json_object_get(n, "params"), name, v)
        {
            char text[300];
            value_text(v, text, sizeof text);
            cli_printf("    %s = %s\n", name, text);
        }
        if (with_cache && json_is_string(key)) {
            if (json_is_true(json_object_get(n, "cached")))
                cli_printf("    cached (cost %.2f s CPU when evaluated)\n",
                           json_number_value(json_object_get(n, "cached_cpu_seconds")));
            else
                cli_printf("    not cached: generate evaluates it\n");
        } else if (with_cache && !errors) {
            cli_printf("    never evaluated (it does not feed the output)\n");
        }
    }
    const json_t *diags = json_object_get(g, "diagnostics");
    if (json_array_size(diags)) {
        cli_printf("  diagnostics:\n");
        json_t *d;
        json_array_foreach(diags, i, d)
        {
            const json_t *line = json_object_get(d, "line");
            cli_printf("    ");
            if (json_is_integer(line))
                cli_printf("%s:%" JSON_INTEGER_FORMAT ":%" JSON_INTEGER_FORMAT ": ", path,
                           json_integer_value(line),
                           json_integer_value(json_object_get(d, "column")));
            cli_printf("%s: %s [%s]\n", json_string_value(json_object_get(d, "severity")),
                       json_string_value(json_object_get(d, "message")),
                       json_string_value(json_object_get(d, "check")));
        }
    }
    if (errors)
        cli_printf("  the graph has %" JSON_INTEGER_FORMAT " error%s; generate will refuse it (no "
                   "cache keys until it is fixed)\n",
                   errors, errors == 1 ? "" : "s");
    else if (json_is_string(json_object_get(g, "keys_error")))
        cli_printf("  cache keys unavailable: %s\n",
                   json_string_value(json_object_get(g, "keys_error")));
    else
        cli_printf("  no errors, %" JSON_INTEGER_FORMAT
                   " warning%s; the keys are the node cache keys "
                   "at final quality\n",
                   warnings, warnings == 1 ? "" : "s");
}

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void print_band(const char *label, const json_t *band)
{
    if (json_is_null(band)) return;
    char a[40], b[40];
    fmt_num(json_number_value(json_array_get(band, 0)), a);
    fmt_num(json_number_value(json_array_get(band, 1)), b);
    cli_printf("       %-15s [%s, %s]\n", label, a, b);
}

static void print_text(const json_t *o, const trn_recipe *r)
{
    char a[40], b[40];
    cli_printf("file:             %s\n", jstr(o, "input"));
    cli_printf("document:         %s\n",
               strcmp(jstr(o, "input_format"), "terrain_asset") == 0
                   ? "Terrain asset source (format_version 1, recipe inside)"
                   : "bare recipe");
    fmt_num(r->size_x, a);
    fmt_num(r->size_z, b);
    cli_printf("size:             %s x %s world units\n", a, b);
    cli_printf("resolution:       %u x %u cells\n", r->cells_x, r->cells_z);
    cli_printf("samples:          %" JSON_INTEGER_FORMAT " (%u x %u)\n",
               json_integer_value(json_object_get(o, "samples")), r->cells_x + 1, r->cells_z + 1);
    cli_printf("seed:             %" PRIu64 "\n", r->seed);
    json_t *chunks = json_object_get(o, "chunk_grid");
    cli_printf("chunks:           %u cells each, %" JSON_INTEGER_FORMAT " x %" JSON_INTEGER_FORMAT
               " = %" JSON_INTEGER_FORMAT " chunks\n",
               r->chunk_cells, json_integer_value(json_array_get(chunks, 0)),
               json_integer_value(json_array_get(chunks, 1)),
               json_integer_value(json_object_get(o, "chunks")));
    cli_printf("default landform: %s\n", r->default_landform);
    cli_printf("default biome:    %s\n", r->default_biome);
    json_t *sea = json_object_get(o, "sea_level");
    fmt_num(json_number_value(json_object_get(sea, "value")), a);
    cli_printf("sea level:        %s (%s)\n", a, jstr(sea, "how"));
    cli_printf("cache key:        %s (generator version %u)\n", jstr(o, "cache_key"),
               TRN_GENERATOR_VERSION);

    cli_printf("\nlandforms (%u):\n", r->landform_count);
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(o, "landforms"), i, e)
    {
        const trn_landform *lf = &r->landforms[i];
        cli_printf("  %s%s\n", lf->name,
                   json_is_true(json_object_get(e, "default")) ? " (default)" : "");
        control c[10];
        size_t n = landform_controls(lf, c);
        size_t shown = 0;
        for (size_t k = 0; k < n; k++) {
            if (c[k].is_default) continue;
            cli_printf("%s%s %s", shown ? ", " : "    ", c[k].key, c[k].value);
            shown++;
        }
        cli_printf("%s\n", shown ? "" : "    every control at its default");
        if (lf->evolution) cli_printf("    evolved by stream power: %s\n", lf->evolution);
        json_t *used = json_object_get(e, "biomes");
        if (json_array_size(used)) {
            cli_printf("    shapes biomes:");
            size_t k;
            json_t *u;
            json_array_foreach(used, k, u) cli_printf("%s %s", k ? "," : "", json_string_value(u));
            cli_printf("\n");
        }
    }

    cli_printf("\nbiomes (%u):\n", r->biome_count);
    json_array_foreach(json_object_get(o, "biomes"), i, e)
    {
        const trn_biome *bm = &r->biomes[i];
        char col[200];
        fmt_color(bm->color, col, sizeof col);
        fmt_num(bm->texture_scale, a);
        cli_printf("  %s%s\n    color %s %s, landform %s%s, texture_scale %s, snow %s%s%s\n",
                   bm->name, json_is_true(json_object_get(e, "default")) ? " (default)" : "", col,
                   jstr(e, "hex"), jstr(e, "landform"), bm->landform ? "" : " (the default)", a,
                   bm->allow_snow ? "allowed" : "not allowed", bm->material ? ", material " : "",
                   bm->material ? bm->material : "");
    }

    json_t *layers = json_object_get(o, "recipe_layers");
    bool from_recipe = strcmp(jstr(layers, "source"), "recipe") == 0;
    cli_printf("\nlayers (%s):\n", from_recipe ? "from the recipe" : "the five defaults");
    json_array_foreach(json_object_get(layers, "tree"), i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const char *group = json_string_value(json_object_get(e, "group"));
        bool last = i + 1 == json_array_size(json_object_get(layers, "tree"));
        bool enabled = json_is_true(json_object_get(e, "enabled"));
        const char *under = last ? "       " : "  |    ";
        cli_printf("  %s %s", last ? "`-" : "+-", id);
        if (name && strcmp(name, id) != 0) cli_printf(" \"%s\"", name);
        if (strcmp(group, id) != 0) cli_printf(" [%s]", group);
        if (!enabled) cli_printf(" (disabled)");
        cli_printf("\n");
        json_t *lr = json_object_get(e, "rules");
        if (json_array_size(lr)) {
            cli_printf("%srules:", under);
            size_t k;
            json_t *u;
            json_array_foreach(lr, k, u) cli_printf("%s %s", k ? "," : "", json_string_value(u));
            cli_printf("\n");
        }
        json_t *ls = json_object_get(e, "strokes");
        json_int_t total = json_integer_value(json_object_get(ls, "total"));
        if (total) {
            cli_printf("%sstrokes %" JSON_INTEGER_FORMAT ":", under, total);
            const char *type;
            json_t *cnt;
            size_t k = 0;
            json_object_foreach(json_object_get(ls, "by_type"), type, cnt)
            {
                cli_printf("%s %s %" JSON_INTEGER_FORMAT, k++ ? "," : "", type,
                           json_integer_value(cnt));
            }
            cli_printf("%s\n", enabled ? "" : " (kept, but skipped while the layer is disabled)");
        }
    }
    json_t *loose = json_object_get(layers, "rules_without_layer");
    if (json_array_size(loose)) {
        cli_printf("  rules on no listed layer:");
        size_t k;
        json_t *u;
        json_array_foreach(loose, k, u) cli_printf("%s %s", k ? "," : "", json_string_value(u));
        cli_printf("\n");
    }

    cli_printf("\nrules (%u)%s\n", r->rule_count,
               r->rule_count ? ": highest priority wins, then blend strength, then the earlier rule"
                             : ": none, every sample gets the default biome");
    for (uint32_t k = 0; k < r->rule_count; k++) {
        const trn_rule *rule = &r->rules[k];
        fmt_num(rule->priority, a);
        fmt_num(rule->blend, b);
        cli_printf("  %u. \"%s\" -> %s  priority %s, blend %s%s%s\n", k + 1, rule->id, rule->biome,
                   a, b, rule->layer ? ", layer " : "", rule->layer ? rule->layer : "");
        json_t *ro = json_array_get(json_object_get(o, "rules"), k);
        print_band("elevation", json_object_get(ro, "elevation"));
        print_band("slope", json_object_get(ro, "slope"));
        print_band("moisture", json_object_get(ro, "moisture"));
        print_band("water distance", json_object_get(ro, "water_distance"));
        if (rule->substrate_mask) {
            cli_printf("       %-15s", "substrate");
            int shown = 0;
            for (int s = 0; s < TRN_SUBSTRATE_COUNT; s++)
                if (rule->substrate_mask & (1u << s))
                    cli_printf("%s %s", shown++ ? "," : "", trn_substrate_name((trn_substrate)s));
            cli_printf("\n");
        }
        if (!rule->elevation.set && !rule->slope.set && !rule->moisture.set &&
            !rule->water_distance.set && !rule->substrate_mask)
            cli_printf("       no bands: matches every sample\n");
    }

    cli_printf("\nstrokes:\n");
    json_t *so = json_object_get(o, "strokes");
    for (int s = 0; s < 3; s++) {
        const char *sec = stroke_sections[s];
        json_t *cnt = json_object_get(so, sec);
        cli_printf("  %-11s %" JSON_INTEGER_FORMAT, sec,
                   json_integer_value(json_object_get(cnt, "total")));
        const char *type;
        json_t *c;
        size_t k = 0;
        json_object_foreach(json_object_get(cnt, "by_type"), type, c)
        {
            cli_printf("%s%s %" JSON_INTEGER_FORMAT, k++ ? ", " : " (", type,
                       json_integer_value(c));
        }
        cli_printf("%s\n", k ? ")" : "");
    }
    json_int_t off = json_integer_value(json_object_get(so, "on_disabled_layers"));
    if (off)
        cli_printf("  note: %" JSON_INTEGER_FORMAT
                   " stroke%s on disabled layers: kept in the recipe, "
                   "skipped when generating\n",
                   off, off == 1 ? " is" : "s are");

    cli_printf("\nsub-seeds of world seed %" PRIu64 ":\n", r->seed);
    json_array_foreach(json_object_get(o, "sub_seeds"), i, e)
    {
        cli_printf("  %-16s 0x%s  %s\n", jstr(e, "channel"), jstr(e, "hex"), jstr(e, "value"));
    }

    json_t *diags = json_object_get(o, "diagnostics");
    cli_printf("\nsampling precision:");
    if (json_array_size(diags) == 0)
        cli_printf(" every landform samples within float precision\n");
    else
        cli_printf("\n");
    json_array_foreach(diags, i, e)
    {
        cli_printf("  warning: %s\n", jstr(e, "message"));
    }
}

/* Water Body lakes of the graph whose level is a number (they can leak; spill ones cannot). */
static uint32_t fixed_lakes(const trn_graph *g)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->node_count; k++) {
        const trn_graph_node *node = &g->nodes[k];
        if (!node->type || strcmp(node->type, "water_body") != 0) continue;
        const trn_graph_param *kind = NULL, *level = NULL;
        for (uint32_t q = 0; q < node->param_count; q++) {
            if (strcmp(node->params[q].name, "kind") == 0) kind = &node->params[q];
            if (strcmp(node->params[q].name, "level") == 0) level = &node->params[q];
        }
        const bool lake = !kind || (kind->type == TRN_VALUE_STRING && kind->text &&
                                    strcmp(kind->text, "lake") == 0);
        if (lake && !(level && level->type == TRN_VALUE_STRING)) n++;
    }
    return n;
}

static bool leak_note(const char *note)
{
    return strstr(note, "reaches the boundary below the level") ||
           strstr(note, "reaches a dry side below it") || strstr(note, "level spill:");
}

/* Generate the recipe and describe its water against the ground: every lake's level (and the
 * spill level found), every leak. Returns the "water" object, NULL on failure (printed). */
static json_t *check_water(cli_ctx *ctx, const char *path, const trn_recipe *recipe,
                           const char *cache_dir, uint32_t *leaks)
{
    *leaks = 0;
    trn_error e;
    trn_graph_cache *cache = NULL;
    if (cache_dir && trn_graph_cache_new(cache_dir, 0, &cache, &e)) {
        cli_fail(ctx, &e);
        return NULL;
    }
    trn_generate_options go = {.cache = cache};
    trn_generated gen;
    trn_status st = cli_recipe_generate(path, recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_graph_cache_free(cache);
    if (st) {
        cli_fail(ctx, &e);
        return NULL;
    }
    json_t *o = json_object();
    json_t *lakes = json_array();
    for (uint32_t b = 0; gen.has_water && b < gen.water.body_count; b++) {
        const trn_water_body *body = &gen.water.bodies[b];
        if (body->kind != TRN_WATER_LAKE && !body->warning_count) continue;
        json_t *l = json_object();
        json_object_set_new(l, "id", cli_json_string(body->id));
        json_object_set_new(l, "kind", json_string(trn_water_kind_name(body->kind)));
        if (body->kind == TRN_WATER_LAKE)
            json_object_set_new(
                l, "level_mode",
                json_string(body->level_mode == TRN_LAKE_LEVEL_SPILL ? "spill" : "fixed"));
        const bool level =
            body->kind != TRN_WATER_RIVER || body->surface_mode == TRN_RIVER_SURFACE_LEVEL;
        json_object_set_new(l, "level", level ? json_real(body->level) : json_null());
        json_object_set_new(l, "spill_level",
                            isfinite(body->spill_level) ? json_real(body->spill_level)
                                                        : json_null());
        json_object_set_new(l, "leaking_samples", json_integer(body->warning_count));
        json_object_set_new(l, "warning",
                            body->warning_count ? cli_json_string(body->warning) : json_null());
        json_array_append_new(lakes, l);
        *leaks += body->warning_count ? 1u : 0u;
        if (body->warning_count && !ctx->quiet)
            cli_fprintf(stderr, "terrane inspect: warning: %s: %s '%s': %s\n", path,
                        trn_water_kind_name(body->kind), body->id, body->warning);
    }
    json_object_set_new(o, "bodies", lakes);
    /* Water the Terrain Output does not publish still tells through its nodes' notes. */
    json_t *notes = json_array();
    for (uint32_t k = 0; k < gen.node_count; k++) {
        if (!leak_note(gen.nodes[k].note)) continue;
        bool published = false;
        for (uint32_t b = 0; gen.has_water && b < gen.water.body_count && !published; b++)
            published = strcmp(gen.water.bodies[b].id, gen.nodes[k].id) == 0 &&
                        gen.water.bodies[b].warning_count;
        json_t *n = json_object();
        json_object_set_new(n, "node", cli_json_string(gen.nodes[k].id));
        json_object_set_new(n, "note", cli_json_string(gen.nodes[k].note));
        json_array_append_new(notes, n);
        if (!published) {
            (*leaks)++;
            if (!ctx->quiet)
                cli_fprintf(stderr, "terrane inspect: warning: %s: node '%s': %s\n", path,
                            gen.nodes[k].id, gen.nodes[k].note);
        }
    }
    json_object_set_new(o, "notes", notes);
    json_object_set_new(o, "leaks", json_integer(*leaks));
    trn_generated_dispose(&gen);
    return o;
}

static void print_water_text(const json_t *w)
{
    const json_t *bodies = json_object_get(w, "bodies");
    cli_printf("\nwater (generated to check it against the ground):\n");
    if (!json_array_size(bodies)) cli_printf("  no lake and no leak in the published water\n");
    size_t k;
    const json_t *b;
    json_array_foreach(bodies, k, b)
    {
        const json_t *spill = json_object_get(b, "spill_level");
        const json_t *mode = json_object_get(b, "level_mode");
        const json_t *level = json_object_get(b, "level");
        cli_printf("  %s '%s': ", json_string_value(json_object_get(b, "kind")),
                   json_string_value(json_object_get(b, "id")));
        if (json_is_number(level))
            cli_printf("level %.3f m%s", json_number_value(level),
                       json_is_string(mode) && strcmp(json_string_value(mode), "spill") == 0
                           ? " (spill)"
                           : "");
        else
            cli_printf("surface following its bed");
        if (json_is_number(spill)) cli_printf(", spill level %.3f m", json_number_value(spill));
        const json_t *warn = json_object_get(b, "warning");
        if (json_is_string(warn))
            cli_printf("\n    leaks (%" JSON_INTEGER_FORMAT " samples): %s\n",
                       json_integer_value(json_object_get(b, "leaking_samples")),
                       json_string_value(warn));
        else
            cli_printf(": holds\n");
    }
    cli_printf("  %" JSON_INTEGER_FORMAT " leaking bod%s or node%s\n",
               json_integer_value(json_object_get(w, "leaks")),
               json_integer_value(json_object_get(w, "leaks")) == 1 ? "y" : "ies",
               json_integer_value(json_object_get(w, "leaks")) == 1 ? "" : "s");
}

int cli_verb_inspect(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL, *cache_dir = NULL;
    bool water = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--cache") == 0) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            if (cache_dir) return cli_usage_error(ctx, "--cache is given twice");
            cache_dir = v;
            continue;
        }
        if (strcmp(a, "--water") == 0) {
            water = true;
            continue;
        }
        if (a[0] == '-' && a[1] != '\0') return cli_usage_error(ctx, "unknown option '%s'", a);
        if (path) return cli_usage_error(ctx, "takes one recipe; unexpected '%s'", a);
        path = a;
    }
    if (!path) return cli_usage_error(ctx, "needs a recipe (a .json file)");
    /* Palettes and material sets are described, not read as recipes. */
    int doc_rc = 0;
    if (cli_palette_describe(ctx, path, &doc_rc)) return doc_rc;

    trn_recipe recipe;
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    trn_error e;
    if (trn_recipe_read_source(path, &recipe, &kind, &e) != TRN_OK) {
        if (kind == TRN_DOCUMENT_BEAMNG_TERRAIN)
            return cli_failf(ctx,
                             "%s: this is BeamNG terrain metadata (a .terrain.json with version "
                             "and datafile), not a terrain recipe; use 'terrane info %s'",
                             path, path);
        return cli_fail(ctx, &e);
    }
    json_t *o = describe(path, &recipe, kind);
    /* The graph: a draft with graph errors is still described (they are findings, not a
     * refusal); only a failure to build or check it at all ends here. */
    cli_graph g;
    int rc = cli_graph_load(ctx, path, &recipe, kind, &g);
    if (rc) {
        json_decref(o);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_graph_cache *cache = NULL;
    /* Without --cache, what generate would reuse: the platform cache directory, when it is on
     * and exists. */
    char default_dir[4096] = "";
    struct stat db;
    const char *peek = cache_dir;
    if (!peek && cli_cache_default_on() &&
        trn_graph_cache_dir_default(default_dir, sizeof default_dir, NULL) == TRN_OK &&
        stat(default_dir, &db) == 0 && S_ISDIR(db.st_mode))
        peek = default_dir;
    if (peek) {
        /* Only read: a missing directory is not created (it holds nothing yet). */
        struct stat sb;
        const bool exists = stat(peek, &sb) == 0;
        if (exists && !S_ISDIR(sb.st_mode)) {
            cli_graph_dispose(&g);
            json_decref(o);
            trn_recipe_dispose(&recipe);
            return cli_failf(ctx, "--cache %s is not a directory", peek);
        }
        if (!exists) cli_note(ctx, "%s does not exist: nothing is cached there yet", peek);
        if (trn_graph_cache_new(exists ? peek : NULL, 0, &cache, &e)) {
            cli_graph_dispose(&g);
            json_decref(o);
            trn_recipe_dispose(&recipe);
            return cli_fail(ctx, &e);
        }
    }
    /* The palette, when it resolves, for the Scatter Palette nodes' keys (its own errors are
     * generate's and scatter's to report). */
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    bool have_palette = false;
    if (recipe.palette_json) {
        json_error_t je;
        json_t *pv = json_loads(recipe.palette_json, JSON_DECODE_ANY, &je);
        trn_error pe;
        have_palette =
            json_is_string(pv)
                ? trn_palette_resolve(path, json_string_value(pv), &palette, NULL, &pe) == TRN_OK
                : trn_palette_parse(recipe.palette_json, strlen(recipe.palette_json), path,
                                    &palette, &pe) == TRN_OK;
        json_decref(pv);
    }
    json_t *graph_o = describe_graph(&g, &recipe, have_palette ? &palette : NULL, cache, peek);
    trn_palette_dispose(&palette);
    trn_graph_cache_free(cache);
    json_object_set(o, "graph", graph_o);
    if (g.errors)
        cli_note(ctx, "%s: the graph has %zu error%s; generate will refuse it", path, g.errors,
                 g.errors == 1 ? "" : "s");
    /* Leaks need the ground: only --water generates it. */
    json_t *water_o = NULL;
    uint32_t leaks = 0;
    const uint32_t fixed = fixed_lakes(&g.graph);
    if (water && g.errors)
        cli_note(ctx, "%s: --water needs a graph without errors; the water is not checked", path);
    else if (water && !(water_o = check_water(ctx, path, &recipe, cache_dir, &leaks))) {
        json_decref(graph_o);
        cli_graph_dispose(&g);
        json_decref(o);
        trn_recipe_dispose(&recipe);
        return CLI_EXIT_FAIL;
    }
    if (water_o) json_object_set(o, "water", water_o);
    if (!water && fixed)
        cli_note(ctx,
                 "%s: %u lake%s with a fixed level; 'terrane inspect --water' generates the "
                 "recipe and checks %s against the ground (or use level \"spill\")",
                 path, fixed, fixed == 1 ? "" : "s", fixed == 1 ? "it" : "them");
    if (ctx->json) {
        /* Shortest round-trip numbers and sorted keys, as in canonical recipes. */
        trn_rcp_buf b = {NULL, 0, 0, false, NULL};
        trn_rcp_emit_json(&b, o, 2, 0);
        if (b.failed) {
            trn_rcp_buf_free(&b);
            json_decref(graph_o);
            cli_graph_dispose(&g);
            json_decref(o);
            trn_recipe_dispose(&recipe);
            return cli_failf(ctx, "out of memory");
        }
        fwrite(b.data, 1, b.len, stdout);
        fputc('\n', stdout);
        trn_rcp_buf_free(&b);
    } else {
        print_text(o, &recipe);
        print_graph_text(graph_o, path);
        if (water_o) print_water_text(water_o);
    }
    json_decref(water_o);
    json_decref(graph_o);
    cli_graph_dispose(&g);
    json_decref(o);
    trn_recipe_dispose(&recipe);
    return CLI_EXIT_OK;
}
