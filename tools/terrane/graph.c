/* terrane graph: the node registry, graph checks with file positions, a starter graph; shared graph
 * helpers. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/fileio.h"
#include "recipe/recipe_internal.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"

static const char *const help_text =
    "usage: terrane graph types [--format json]\n"
    "       terrane graph check RECIPE [--format json]\n"
    "       terrane graph starter [--input FILE]\n"
    "\n"
    "Terrain module graphs (recipe.graph: typed nodes wired from generators through masks,\n"
    "modifiers and simulations to one Terrain Output; docs/graph.md).\n"
    "\n"
    "  types     every node type of this build: title, category, description, input and\n"
    "            output pins with their kinds (an input marked 'required' needs a link),\n"
    "            parameters with type, default, range or choices and description\n"
    "  check     validate the graph of a recipe (a bare recipe, a Terrain asset document or\n"
    "            a graph document of its own) and list every error and warning as\n"
    "            FILE:LINE:COLUMN: severity: message [check-id]. A recipe without a graph is\n"
    "            checked as its implicit graph (landform -> biome_rules -> terrain_output)\n"
    "  starter   print a graph to paste into a recipe as \"graph\": noise_terrain -> erosion ->\n"
    "            biome_rules -> terrain_output with a comment node; it passes 'graph check'.\n"
    "            --input FILE starts from heightfield_input reading FILE (a DEM, PNG,\n"
    "            R16/RAW, R32 or .ter; the path is relative to the recipe's folder) instead\n"
    "            of noise\n"
    "\n"
    "options:\n"
    "  --format json   print the same facts as JSON on stdout\n"
    "  -q, --quiet     no notes on stderr\n"
    "\n"
    "exit status: 0 done (check: no errors, warnings allowed), 1 the graph has errors or the\n"
    "file is unreadable, 2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane graph types\n"
    "  terrane graph check valley.json\n"
    "  terrane graph check landscape.terrain.json --format json\n"
    "  terrane graph starter > starter.json\n"
    "  terrane graph starter --input dem.tif > starter.json\n";

/* ---- shared helpers (cli.h) ---- */

int cli_graph_gate(cli_ctx *ctx, const char *verb, const char *path, const trn_recipe *recipe,
                   trn_document_kind kind)
{
    cli_graph g;
    int rc = cli_graph_load(ctx, path, recipe, kind, &g);
    if (rc) return rc;
    if (g.from_recipe) {
        snprintf(ctx->graph_file, sizeof ctx->graph_file, "%s", path);
        snprintf(ctx->graph_at, sizeof ctx->graph_at, "%s",
                 kind == TRN_DOCUMENT_TERRAIN_ASSET ? "recipe.graph" : "graph");
    }
    char line[1024];
    for (size_t k = 0; k < g.diags.count && !ctx->quiet; k++) {
        if (g.diags.items[k].severity == TRN_GRAPH_ERROR) continue;
        cli_graph_diagnostic_text(path, &g.diags.items[k], line, sizeof line);
        cli_fprintf(stderr, "terrane %s: %s\n", verb, line);
    }
    for (size_t k = 0; k < g.diags.count; k++) {
        const trn_graph_diagnostic *d = &g.diags.items[k];
        if (d->severity != TRN_GRAPH_ERROR) continue;
        char where[700] = "";
        if (d->line > 0) snprintf(where, sizeof where, "%s:%d:%d: ", path, d->line, d->column);
        trn_error at;
        trn_error_set(&at, TRN_ERR_VALIDATION, path, d->line > 0 ? d->offset : -1, "%s",
                      d->message);
        trn_error_set_position(&at, d->line, d->column);
        snprintf(at.node_id, sizeof at.node_id, "%s", d->node_id);
        rc = cli_failf_at(ctx, &at, "%sthe graph cannot be generated: %s [%s, node '%s']", where,
                          d->message, d->check, d->node_id[0] ? d->node_id : "(graph)");
        /* A line of its own, printed through the format (a %s argument would be escaped). */
        if (g.errors > 1)
            cli_fprintf(stderr,
                        "(the graph has %zu errors; 'terrane graph check %s' lists them all)\n",
                        g.errors, path);
        break;
    }
    cli_graph_dispose(&g);
    return rc;
}

void cli_graph_dispose(cli_graph *g)
{
    if (!g) return;
    trn_graph_dispose(&g->graph);
    trn_graph_diagnostics_dispose(&g->diags);
    memset(g, 0, sizeof *g);
}

/* Locate every diagnostic in the file the graph came from (reread: the recipe keeps no text). */
static void locate_in_file(cli_graph *g, const char *path, const char *graph_path)
{
    trn_mapped_file mf;
    memset(&mf, 0, sizeof mf);
    if (trn_mapped_file_open(&mf, path, 0, NULL) != TRN_OK) return;
    trn_graph_diagnostics_locate(&g->diags, (const char *)mf.data, mf.size, graph_path);
    trn_mapped_file_close(&mf);
}

static void count_severities(cli_graph *g)
{
    g->errors = trn_graph_diagnostics_errors(&g->diags);
    g->warnings = g->diags.count - g->errors;
}

int cli_graph_load(cli_ctx *ctx, const char *path, const trn_recipe *recipe, trn_document_kind kind,
                   cli_graph *out)
{
    memset(out, 0, sizeof *out);
    trn_error e;
    if (trn_graph_from_recipe(recipe, &out->graph, &e)) return cli_fail(ctx, &e);
    out->from_recipe = recipe->graph_json != NULL;
    if (trn_graph_check(&out->graph, recipe, &out->diags, &e)) {
        cli_graph_dispose(out);
        return cli_fail(ctx, &e);
    }
    /* The implicit graph is not in the file: its findings have no position there. */
    if (out->from_recipe)
        locate_in_file(out, path, kind == TRN_DOCUMENT_TERRAIN_ASSET ? "recipe.graph" : "graph");
    count_severities(out);
    return CLI_EXIT_OK;
}

void cli_graph_diagnostic_text(const char *path, const trn_graph_diagnostic *d, char *buf,
                               size_t size)
{
    const char *sev = d->severity == TRN_GRAPH_ERROR ? "error" : "warning";
    if (d->line > 0)
        snprintf(buf, size, "%s:%d:%d: %s: %s [%s]", path, d->line, d->column, sev, d->message,
                 d->check);
    else
        snprintf(buf, size, "%s: %s: %s [%s]", path, sev, d->message, d->check);
}

json_t *cli_graph_diagnostic_json(const trn_graph_diagnostic *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "severity",
                        cli_json_string(d->severity == TRN_GRAPH_ERROR ? "error" : "warning"));
    json_object_set_new(o, "check", cli_json_string(d->check));
    json_object_set_new(o, "node", d->node_id[0] ? cli_json_string(d->node_id) : json_null());
    json_object_set_new(o, "pin", d->pin[0] ? cli_json_string(d->pin) : json_null());
    json_object_set_new(o, "message", cli_json_string(d->message));
    json_object_set_new(o, "path", cli_json_string(d->path));
    if (d->line > 0) {
        json_object_set_new(o, "line", json_integer(d->line));
        json_object_set_new(o, "column", json_integer(d->column));
        json_object_set_new(o, "offset", json_integer((json_int_t)d->offset));
    } else {
        json_object_set_new(o, "line", json_null());
        json_object_set_new(o, "column", json_null());
        json_object_set_new(o, "offset", json_null());
    }
    return o;
}

void cli_graph_key_hex(uint64_t key, char out[17])
{
    snprintf(out, 17, "%016" PRIx64, key);
}

/* ---- types ---- */

static void number_text(double v, char out[40])
{
    if (v == HUGE_VAL)
        snprintf(out, 40, "inf");
    else if (v == -HUGE_VAL)
        snprintf(out, 40, "-inf");
    else
        trn_rcp_format_double(v, out);
}

static const char *param_type_name(trn_param_type t)
{
    switch (t) {
    case TRN_PARAM_NUMBER:
        return "number";
    case TRN_PARAM_INTEGER:
        return "integer";
    case TRN_PARAM_STRING:
        return "string";
    case TRN_PARAM_CHOICE:
        return "choice";
    case TRN_PARAM_POINTS:
        return "points";
    case TRN_PARAM_POINTS3:
        return "points3";
    case TRN_PARAM_VECTOR:
        return "vector";
    case TRN_PARAM_JSON:
        return "json";
    }
    return "?";
}

/* A bound for JSON: a number, or null when unbounded (JSON has no infinity). */
static json_t *bound_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *pins_json(const trn_pin_spec *pins, uint32_t count, bool inputs)
{
    json_t *a = json_array();
    for (uint32_t k = 0; k < count; k++) {
        json_t *p = json_object();
        json_object_set_new(p, "name", cli_json_string(pins[k].name));
        json_object_set_new(p, "kind", cli_json_string(trn_pin_kind_name(pins[k].kind)));
        if (inputs) json_object_set_new(p, "required", json_boolean(pins[k].required));
        json_object_set_new(p, "description", cli_json_string(pins[k].description));
        json_array_append_new(a, p);
    }
    return a;
}

/* "a|b|c" as ["a", "b", "c"]. */
static json_t *bar_list_json(const char *list)
{
    json_t *a = json_array();
    while (*list) {
        const char *bar = strchr(list, '|');
        const size_t n = bar ? (size_t)(bar - list) : strlen(list);
        json_array_append_new(a, json_stringn(list, n));
        list += n + (bar ? 1u : 0u);
    }
    return a;
}

static json_t *param_json(const trn_param_spec *s)
{
    json_t *p = json_object();
    json_object_set_new(p, "name", cli_json_string(s->name));
    json_object_set_new(p, "type", cli_json_string(param_type_name(s->type)));
    json_object_set_new(p, "optional", json_boolean(s->optional));
    if (s->optional) {
        json_object_set_new(p, "default", json_null());
    } else if (s->type == TRN_PARAM_NUMBER || s->type == TRN_PARAM_INTEGER) {
        json_object_set_new(p, "default", json_real(s->def));
    } else if (s->type == TRN_PARAM_POINTS || s->type == TRN_PARAM_POINTS3 ||
               s->type == TRN_PARAM_VECTOR || s->type == TRN_PARAM_JSON) {
        json_t *d = s->def_text ? json_loads(s->def_text, 0, NULL) : NULL;
        json_object_set_new(p, "default", d ? d : json_null());
    } else {
        json_object_set_new(p, "default", cli_json_string(s->def_text ? s->def_text : ""));
    }
    if (s->type == TRN_PARAM_NUMBER || s->type == TRN_PARAM_INTEGER ||
        s->type == TRN_PARAM_VECTOR) {
        json_object_set_new(p, "min", bound_json(s->min));
        json_object_set_new(p, "max", bound_json(s->max));
        json_object_set_new(p, "min_exclusive", json_boolean(s->min_exclusive));
    }
    if (s->type == TRN_PARAM_NUMBER && s->keywords)
        json_object_set_new(p, "keywords", bar_list_json(s->keywords));
    if (s->type == TRN_PARAM_CHOICE && s->choices)
        json_object_set_new(p, "choices", bar_list_json(s->choices));
    if (s->type == TRN_PARAM_POINTS || s->type == TRN_PARAM_POINTS3)
        json_object_set_new(p, "min_points", json_integer(s->min_points));
    if (s->type == TRN_PARAM_VECTOR) json_object_set_new(p, "length", json_integer(s->min_points));
    json_object_set_new(p, "description", cli_json_string(s->description));
    return p;
}

/* A type's reach at its default parameters (a probe node without parameters). */
static trn_node_reach default_reach(const trn_node_type *t)
{
    trn_graph_node n;
    memset(&n, 0, sizeof n);
    n.id = (char *)"probe";
    n.type = (char *)t->name;
    trn_node_reach r;
    trn_graph_node_reach(&n, NULL, &r);
    return r;
}

json_t *cli_graph_types_json(void)
{
    json_t *a = json_array();
    for (uint32_t i = 0; i < trn_node_type_count(); i++) {
        const trn_node_type *t = trn_node_type_at(i);
        json_t *o = json_object();
        json_object_set_new(o, "name", cli_json_string(t->name));
        json_object_set_new(o, "title", cli_json_string(t->title));
        json_object_set_new(o, "category", cli_json_string(t->category));
        json_object_set_new(o, "description", cli_json_string(t->description));
        json_object_set_new(o, "version", json_integer(t->version));
        json_object_set_new(o, "quality_dependent", json_boolean(t->quality_dependent));
        const trn_node_reach reach = default_reach(t);
        json_t *rj = json_object();
        json_object_set_new(rj, "kind", cli_json_string(trn_node_reach_name(reach.kind)));
        json_object_set_new(rj, "halo", json_integer(reach.halo));
        json_object_set_new(rj, "why", cli_json_string(reach.why));
        json_object_set_new(o, "reach", rj);
        json_object_set_new(o, "inputs", pins_json(t->inputs, t->input_count, true));
        json_object_set_new(o, "outputs", pins_json(t->outputs, t->output_count, false));
        json_t *ps = json_array();
        for (uint32_t k = 0; k < t->param_count; k++)
            json_array_append_new(ps, param_json(&t->params[k]));
        json_object_set_new(o, "params", ps);
        json_array_append_new(a, o);
    }
    return a;
}

static void print_param_text(const trn_param_spec *s)
{
    char lo[40], hi[40], def[40];
    cli_printf("      %-20s %-8s ", s->name, param_type_name(s->type));
    if (s->type == TRN_PARAM_NUMBER || s->type == TRN_PARAM_INTEGER) {
        number_text(s->min, lo);
        number_text(s->max, hi);
        if (s->optional) {
            cli_printf("optional");
        } else {
            number_text(s->def, def);
            cli_printf("default %s", def);
        }
        cli_printf(", range %s%s, %s]", s->min_exclusive ? "(" : "[", lo, hi);
        if (s->keywords) cli_printf(", or %s", s->keywords);
    } else if (s->type == TRN_PARAM_CHOICE) {
        cli_printf("default %s, one of %s", s->def_text ? s->def_text : "", s->choices);
    } else if (s->type == TRN_PARAM_POINTS || s->type == TRN_PARAM_POINTS3) {
        if (s->optional)
            cli_printf("optional, at least %u points", s->min_points);
        else
            cli_printf("default %s, at least %u points", s->def_text ? s->def_text : "[]",
                       s->min_points);
    } else if (s->type == TRN_PARAM_VECTOR) {
        number_text(s->min, lo);
        number_text(s->max, hi);
        if (s->optional)
            cli_printf("optional, %u numbers in [%s, %s]", s->min_points, lo, hi);
        else
            cli_printf("default %s, %u numbers in [%s, %s]", s->def_text ? s->def_text : "[]",
                       s->min_points, lo, hi);
    } else if (s->optional) {
        cli_printf("optional");
    } else {
        cli_printf("default \"%s\"", s->def_text ? s->def_text : "");
    }
    cli_printf("\n        %s\n", s->description);
}

static void print_types_text(void)
{
    const uint32_t n = trn_node_type_count();
    cli_printf("%u node types (graph format_version %u):\n", n, TRN_GRAPH_FORMAT_VERSION);
    for (uint32_t i = 0; i < n; i++) {
        const trn_node_type *t = trn_node_type_at(i);
        cli_printf("\n%s \"%s\" [%s, version %u%s]\n  %s\n", t->name, t->title, t->category,
                   t->version, t->quality_dependent ? ", preview differs from final" : "",
                   t->description);
        if (t->input_count) {
            cli_printf("  inputs:\n");
            for (uint32_t k = 0; k < t->input_count; k++)
                cli_printf("    %-14s %-11s %-9s %s\n", t->inputs[k].name,
                           trn_pin_kind_name(t->inputs[k].kind),
                           t->inputs[k].required ? "required" : "optional",
                           t->inputs[k].description);
        }
        const trn_node_reach reach = default_reach(t);
        if (reach.kind == TRN_REACH_NEIGHBOURHOOD)
            cli_printf("  reach: neighbourhood of %u sample%s (%s)\n", reach.halo,
                       reach.halo == 1 ? "" : "s", reach.why);
        else
            cli_printf("  reach: %s (%s)\n", trn_node_reach_name(reach.kind), reach.why);
        if (t->output_count) {
            cli_printf("  outputs:\n");
            for (uint32_t k = 0; k < t->output_count; k++)
                cli_printf("    %-14s %-11s %s\n", t->outputs[k].name,
                           trn_pin_kind_name(t->outputs[k].kind), t->outputs[k].description);
        }
        if (t->param_count) {
            cli_printf("  params:\n");
            for (uint32_t k = 0; k < t->param_count; k++)
                print_param_text(&t->params[k]);
        }
    }
}

/* ---- check ---- */

/* A graph document of its own ({"format_version", "nodes", ...} at the top, not a recipe). */
static bool is_graph_document(const char *text, size_t size)
{
    json_t *root = json_loadb(text, size, 0, NULL);
    const bool yes = json_is_object(root) && json_object_get(root, "nodes") &&
                     !json_object_get(root, "recipe") && !json_object_get(root, "size") &&
                     !json_object_get(root, "resolution");
    json_decref(root);
    return yes;
}

static int graph_check(cli_ctx *ctx, const char *path)
{
    trn_mapped_file mf;
    memset(&mf, 0, sizeof mf);
    trn_error e;
    if (trn_mapped_file_open(&mf, path, 64u << 20, &e)) return cli_fail(ctx, &e);
    const char *text = (const char *)mf.data;
    const size_t size = mf.size;
    cli_graph g;
    memset(&g, 0, sizeof g);
    const char *document = "recipe";
    if (text && is_graph_document(text, size)) {
        document = "graph";
        trn_status st = trn_graph_parse(text, size, path, &g.graph, &e);
        if (!st) st = trn_graph_check(&g.graph, NULL, &g.diags, &e);
        if (st) {
            trn_mapped_file_close(&mf);
            cli_graph_dispose(&g);
            return cli_fail(ctx, &e);
        }
        g.from_recipe = true;
        trn_graph_diagnostics_locate(&g.diags, text, size, "");
        count_severities(&g);
        cli_note(ctx,
                 "%s is a graph document of its own: landform names are not checked (they "
                 "belong to the recipe it goes into)",
                 path);
    } else {
        trn_recipe recipe;
        memset(&recipe, 0, sizeof recipe);
        trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
        if (trn_recipe_parse(text ? text : "", size, path, &recipe, &kind, &e) ||
            trn_recipe_set_base_dir_of(&recipe, path, &e)) {
            trn_recipe_dispose(&recipe);
            trn_mapped_file_close(&mf);
            return cli_fail(ctx, &e);
        }
        document = kind == TRN_DOCUMENT_TERRAIN_ASSET ? "terrain_asset" : "recipe";
        int rc = cli_graph_load(ctx, path, &recipe, kind, &g);
        trn_recipe_dispose(&recipe);
        if (rc) {
            trn_mapped_file_close(&mf);
            return rc;
        }
        if (!g.from_recipe)
            cli_note(ctx,
                     "%s has no graph: checked its implicit graph (landform -> biome_rules "
                     "-> terrain_output)",
                     path);
    }
    trn_mapped_file_close(&mf);
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string(document));
        json_object_set_new(o, "graph", cli_json_string(g.from_recipe ? "explicit" : "implicit"));
        json_object_set_new(o, "node_count", json_integer(g.graph.node_count));
        json_object_set_new(o, "error_count", json_integer((json_int_t)g.errors));
        json_object_set_new(o, "warning_count", json_integer((json_int_t)g.warnings));
        json_t *a = json_array();
        for (size_t k = 0; k < g.diags.count; k++)
            json_array_append_new(a, cli_graph_diagnostic_json(&g.diags.items[k]));
        json_object_set_new(o, "diagnostics", a);
        cli_print_json(o);
    } else {
        for (size_t k = 0; k < g.diags.count; k++) {
            char line[1024];
            cli_graph_diagnostic_text(path, &g.diags.items[k], line, sizeof line);
            cli_printf("%s\n", line);
        }
        cli_printf("%s: %u node%s, %zu error%s, %zu warning%s%s\n", path, g.graph.node_count,
                   g.graph.node_count == 1 ? "" : "s", g.errors, g.errors == 1 ? "" : "s",
                   g.warnings, g.warnings == 1 ? "" : "s",
                   g.errors ? ": generate will refuse it" : ": ready to generate");
    }
    const int rc = g.errors ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    cli_graph_dispose(&g);
    return rc;
}

/* ---- starter ---- */

/* Built from the registry's names (never a text template) so a renamed type or pin fails here,
 * in the check below, not in a user's recipe. */
static trn_graph_param num_param(const trn_node_type *t, const char *name, double v)
{
    trn_graph_param p;
    memset(&p, 0, sizeof p);
    const trn_param_spec *s = trn_node_type_param(t, name);
    p.name = (char *)(s ? s->name : name);
    p.type = TRN_VALUE_NUMBER;
    p.number = v;
    return p;
}

static trn_graph_param text_param(const trn_node_type *t, const char *name, const char *v)
{
    trn_graph_param p;
    memset(&p, 0, sizeof p);
    const trn_param_spec *s = trn_node_type_param(t, name);
    p.name = (char *)(s ? s->name : name);
    p.type = TRN_VALUE_STRING;
    p.text = (char *)v;
    return p;
}

static int graph_starter(cli_ctx *ctx, const char *input)
{
    const trn_node_type *noise = trn_node_type_find(input ? "heightfield_input" : "noise_terrain");
    const trn_node_type *erosion = trn_node_type_find("erosion");
    const trn_node_type *rules = trn_node_type_find("biome_rules");
    const trn_node_type *output = trn_node_type_find("terrain_output");
    const trn_node_type *comment = trn_node_type_find("comment");
    if (!noise || !erosion || !rules || !output || !comment)
        return cli_failf(ctx, "this build's registry lacks a node type the starter uses");
    trn_graph_param noise_params[] = {
        text_param(noise, "profile", "fbm"),
        num_param(noise, "base_height", 0),
        num_param(noise, "height_variation", 120),
        num_param(noise, "feature_size", 384),
        num_param(noise, "octaves", 6),
        num_param(noise, "warp_amplitude", 24),
    };
    trn_graph_param input_params[] = {
        text_param(noise, "path", input ? input : ""),
        text_param(noise, "resample", "bicubic"),
    };
    trn_graph_param erosion_params[] = {
        num_param(erosion, "iterations", 1),
        num_param(erosion, "droplet_density", 0.5),
    };
    trn_graph_param comment_params[] = {text_param(
        comment, "text",
        "Shape: noise_terrain makes the hills (height_variation metres over feature_size world "
        "units). erosion cuts gullies and lays sediment at their feet (preview quality runs "
        "fewer droplets). biome_rules paints the recipe's rules on the eroded surface, and "
        "terrain_output publishes it. Painted regions and sculpt edits are replayed after the "
        "graph.")};
    if (input)
        comment_params[0] = text_param(
            comment, "text",
            "Shape: heightfield_input reads the file at path (relative to this recipe's folder) "
            "and stretches it over the recipe's size, resampled to its resolution (pixel_window "
            "or crs_window takes a part; height_scale and height_offset change its heights). "
            "erosion cuts gullies and lays sediment at their feet (preview quality runs fewer "
            "droplets). biome_rules paints the recipe's rules on the eroded surface, and "
            "terrain_output publishes it.");
    trn_graph_link erosion_in[] = {
        {(char *)erosion->inputs[0].name, "terrain", (char *)noise->outputs[0].name}};
    trn_graph_link rules_in[] = {
        {(char *)rules->inputs[0].name, "erode", (char *)erosion->outputs[0].name}};
    trn_graph_link output_in[] = {
        {(char *)output->inputs[0].name, "biomes", (char *)rules->outputs[0].name}};
#define N(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))
    trn_graph_node nodes[] = {
        {"terrain", (char *)noise->name, true, 0, 0, input ? input_params : noise_params,
         input ? N(input_params) : N(noise_params), NULL, 0},
        {"erode", (char *)erosion->name, true, 260, 0, erosion_params, N(erosion_params), NULL, 0},
        {"biomes", (char *)rules->name, true, 520, 0, NULL, 0, NULL, 0},
        {"output", (char *)output->name, true, 780, 0, NULL, 0, NULL, 0},
        {"about", (char *)comment->name, true, 0, -160, comment_params, N(comment_params), NULL, 0},
    };
    nodes[1].inputs = erosion_in;
    nodes[1].input_count = N(erosion_in);
    nodes[2].inputs = rules_in;
    nodes[2].input_count = N(rules_in);
    nodes[3].inputs = output_in;
    nodes[3].input_count = N(output_in);
    trn_graph g = {TRN_GRAPH_FORMAT_VERSION, "output", nodes, N(nodes)};
#undef N
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    trn_error e;
    if (trn_graph_check(&g, NULL, &d, &e)) return cli_fail(ctx, &e);
    const size_t findings = d.count;
    char first[600] = "";
    if (findings) snprintf(first, sizeof first, "%s", d.items[0].message);
    trn_graph_diagnostics_dispose(&d);
    if (findings) return cli_failf(ctx, "the starter graph does not pass the check: %s", first);
    char *text = NULL;
    size_t size = 0;
    if (trn_graph_to_json(&g, false, &text, &size, &e)) return cli_fail(ctx, &e);
    /* Re-indented for people, keys in the canonical order, numbers as written. */
    json_t *tree = json_loadb(text, size, 0, NULL);
    free(text);
    if (!tree) return cli_failf(ctx, "the starter graph's JSON does not read back");
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    trn_rcp_emit_json_in_order(&b, tree, 2, 0);
    json_decref(tree);
    if (b.failed) {
        trn_rcp_buf_free(&b);
        return cli_failf(ctx, "out of memory");
    }
    fwrite(b.data, 1, b.len, stdout);
    fputc('\n', stdout);
    trn_rcp_buf_free(&b);
    cli_note(ctx, "paste it into a recipe as \"graph\": {...}; 'terrane graph check RECIPE' "
                  "checks it there");
    return CLI_EXIT_OK;
}

int cli_verb_graph(cli_ctx *ctx, int argc, char **argv)
{
    const char *sub = NULL, *path = NULL, *input = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(a, "--input") == 0) {
            if (!(input = cli_option_value(ctx, argc, argv, &i))) return CLI_EXIT_USAGE;
            continue;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (a[0] == '-' && a[1] != '\0') return cli_usage_error(ctx, "unknown option '%s'", a);
        if (!sub)
            sub = a;
        else if (!path)
            path = a;
        else
            return cli_usage_error(ctx, "unexpected '%s'", a);
    }
    if (!sub) return cli_usage_error(ctx, "needs what to do: types, check RECIPE or starter");
    if (input && strcmp(sub, "starter") != 0)
        return cli_usage_error(ctx, "--input is for 'graph starter'");
    if (strcmp(sub, "types") == 0 || strcmp(sub, "starter") == 0) {
        if (path)
            return cli_usage_error(ctx, "'graph %s' takes no file; unexpected '%s'", sub, path);
        if (sub[0] == 's') {
            if (ctx->json)
                return cli_usage_error(ctx, "'graph starter' prints JSON already; drop --format");
            return graph_starter(ctx, input);
        }
        ctx->verb = "graph types";
        if (ctx->json)
            cli_print_json(cli_graph_types_json());
        else
            print_types_text();
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "check") == 0) {
        if (!path) return cli_usage_error(ctx, "'graph check' needs a recipe (a .json file)");
        ctx->verb = "graph check"; /* messages and the JSON error name the sub-verb */
        return graph_check(ctx, path);
    }
    return cli_usage_error(ctx, "unknown graph command '%s' (types, check or starter)", sub);
}
