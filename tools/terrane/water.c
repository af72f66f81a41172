/* terrane water: a recipe's published water (bodies, statistics, node notes), a point's column. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "terrane/water.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane water RECIPE [--at X,Z[,Y]] [options]\n"
    "\n"
    "Generate the recipe, then describe the water its Terrain Output publishes (the water\n"
    "connected to its water input, resolved on the final surface): each body in order (earlier\n"
    "bodies win shared samples) with its kind, its level (a river: the range of its surface;\n"
    "a lake with level \"spill\": the level it took, then the basin's spill level and pass),\n"
    "wet area, volume and wet samples, the first leak warning with its place, and every graph\n"
    "node's note (proposals a budget left out, where a routed river ended, a body's first\n"
    "warning). Area is wet samples x cell area (world units^2), volume the sum of depth x cell\n"
    "area over wet samples. A recipe without connected water says so and exits 0.\n"
    "\n"
    "With --at X,Z the column at terrain-local position X,Z instead (X and Z in world units,\n"
    "0..size): its body, kind, depth (surface - ground), the surface point, its normal, the\n"
    "column's up axis and the flow velocity in m/s; with a height Y also whether Y is under\n"
    "water (ground <= Y < surface). A dry point gives its ground and the nearest wet sample.\n"
    "The terrain triangle under the point chooses the body, as 'trn_water_query' does.\n"
    "\n"
    "options:\n"
    "  --at X,Z[,Y]        one point's water column (Y: a height in metres to test)\n"
    "  --threads N         worker threads (default: all); results never depend on it\n"
    "  --cache DIR         graph node results kept between runs (as terrane generate)\n"
    "  --quality final|preview\n"
    "                      erosion quality, as terrane generate (default final)\n"
    "  --max-work N        work budget of each graph node and of the strokes (default 1e10);\n"
    "                      --no-work-limit: none (trusted recipes only)\n"
    "  --format json       the same as JSON on stdout: {\"bodies\": [...], \"notes\": [...],\n"
    "                      \"at\": {...}}; messages stay on stderr\n"
    "  -q, --quiet         no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane water valley.json\n"
    "  terrane water valley.json --at 120.5,300\n"
    "  terrane water valley.json --at 120.5,300,4.2 --format json\n";

typedef struct water_args {
    const char *recipe_path, *at, *cache_dir;
    int threads;
    uint64_t max_work;
    trn_erosion_quality quality;
    double x, z, y;
    bool has_y;
} water_args;

bool cli_water_nearest_wet(const trn_water *water, double x, double z, double *distance,
                           double *wet_x, double *wet_z)
{
    if (!water || !water->wet || !water->body_count) return false;
    const size_t cols = (size_t)water->cells_x + 1u, rows = (size_t)water->cells_z + 1u;
    double best = INFINITY;
    for (size_t j = 0; j < rows; j++) {
        const double sz = (double)j * water->size_z / (double)water->cells_z;
        for (size_t i = 0; i < cols; i++) {
            if (!water->wet[j * cols + i]) continue;
            const double sx = (double)i * water->size_x / (double)water->cells_x;
            const double d = hypot(sx - x, sz - z);
            if (d < best) { /* the first nearest in sample order */
                best = d;
                *wet_x = sx;
                *wet_z = sz;
            }
        }
    }
    if (!isfinite(best)) return false;
    *distance = best;
    return true;
}

/* "X,Z" or "X,Z,Y": finite numbers, nothing else. */
static bool parse_at(const char *text, water_args *a)
{
    double v[3];
    int count = 0;
    const char *p = text;
    for (;;) {
        char *end;
        v[count] = strtod(p, &end);
        if (end == p || !isfinite(v[count])) return false;
        count++;
        if (*end == '\0') break;
        if (*end != ',' || count == 3) return false;
        p = end + 1;
    }
    if (count < 2) return false;
    a->x = v[0];
    a->z = v[1];
    a->has_y = count == 3;
    a->y = a->has_y ? v[2] : NAN;
    return true;
}

static int parse_args(cli_ctx *ctx, int argc, char **argv, water_args *a, bool *help)
{
    memset(a, 0, sizeof *a);
    *help = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            *help = true;
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(arg, "--no-work-limit") == 0) {
            a->max_work = TRN_WORK_UNLIMITED;
            continue;
        }
        if (arg[0] != '-' || !arg[1]) {
            if (a->recipe_path)
                return cli_usage_error(ctx, "takes one recipe; unexpected '%s'", arg);
            a->recipe_path = arg;
            continue;
        }
        if (strcmp(arg, "--at") != 0 && strcmp(arg, "--threads") != 0 &&
            strcmp(arg, "--cache") != 0 && strcmp(arg, "--quality") != 0 &&
            strcmp(arg, "--max-work") != 0)
            return cli_usage_error(ctx, "unknown option '%s'", arg);
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        if (strcmp(arg, "--at") == 0) {
            if (a->at) return cli_usage_error(ctx, "--at is given twice");
            a->at = v;
            if (!parse_at(v, a))
                return cli_usage_error(ctx,
                                       "--at expects X,Z or X,Z,Y as finite numbers (world units, "
                                       "Y in metres), got '%s'",
                                       v);
        } else if (strcmp(arg, "--cache") == 0) {
            if (a->cache_dir) return cli_usage_error(ctx, "--cache is given twice");
            a->cache_dir = v;
        } else if (strcmp(arg, "--quality") == 0) {
            if (strcmp(v, "final") == 0)
                a->quality = TRN_EROSION_FINAL;
            else if (strcmp(v, "preview") == 0)
                a->quality = TRN_EROSION_PREVIEW;
            else
                return cli_usage_error(ctx, "--quality takes 'final' or 'preview', not '%s'", v);
        } else if (strcmp(arg, "--max-work") == 0) {
            if (!cli_parse_max_work(ctx, v, &a->max_work)) return CLI_EXIT_USAGE;
        } else {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 1024)
                return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
            a->threads = (int)t;
        }
    }
    if (!a->recipe_path) return cli_usage_error(ctx, "needs a recipe (a .json file)");
    return CLI_EXIT_OK;
}

static json_t *vec3(const double v[3])
{
    json_t *a = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(a, json_real(v[k]));
    return a;
}

static json_t *pair(double a, double b)
{
    json_t *p = json_array();
    json_array_append_new(p, json_real(a));
    json_array_append_new(p, json_real(b));
    return p;
}

/* A lake's or ocean's level, or a level-mode river's; follow-bed rivers have none. */
static bool has_level(const trn_water_body *b)
{
    return b->kind != TRN_WATER_RIVER || b->surface_mode == TRN_RIVER_SURFACE_LEVEL;
}

static json_t *body_json(const trn_water_body *b, uint32_t index)
{
    json_t *o = json_object();
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "id", cli_json_string(b->id));
    json_object_set_new(o, "kind", json_string(trn_water_kind_name(b->kind)));
    json_object_set_new(o, "level", has_level(b) ? json_real(b->level) : json_null());
    if (b->kind == TRN_WATER_RIVER)
        json_object_set_new(
            o, "surface_mode",
            json_string(b->surface_mode == TRN_RIVER_SURFACE_LEVEL ? "level" : "follow_bed"));
    json_object_set_new(o, "surface", pair(b->min_surface, b->max_surface));
    json_object_set_new(o, "wet_samples", json_integer((json_int_t)b->wet_samples));
    json_object_set_new(o, "area", json_real(b->area));
    json_object_set_new(o, "volume", json_real(b->volume));
    if (b->kind == TRN_WATER_LAKE) {
        json_object_set_new(o, "level_mode",
                            json_string(b->level_mode == TRN_LAKE_LEVEL_SPILL ? "spill" : "fixed"));
        if (b->level_mode == TRN_LAKE_LEVEL_SPILL)
            json_object_set_new(o, "spill_offset", json_real(b->spill_offset));
        if (isfinite(b->spill_level)) {
            json_t *sp = json_object();
            json_object_set_new(sp, "level", json_real(b->spill_level));
            json_object_set_new(sp, "x", json_real(b->spill_x));
            json_object_set_new(sp, "z", json_real(b->spill_z));
            json_object_set_new(sp, "outlet", json_string(trn_spill_outlet_name(b->spill_outlet)));
            json_object_set_new(o, "spill", sp);
        } else {
            json_object_set_new(o, "spill", json_null());
        }
    }
    json_object_set_new(o, "warning_count", json_integer(b->warning_count));
    if (b->warning_count) {
        json_t *w = json_object();
        json_object_set_new(w, "message", cli_json_string(b->warning));
        json_object_set_new(w, "x", json_real(b->warning_x));
        json_object_set_new(w, "z", json_real(b->warning_z));
        json_object_set_new(o, "warning", w);
    } else {
        json_object_set_new(o, "warning", json_null());
    }
    return o;
}

/* Where a lake's water would go at its spill level, for the text report. */
static const char *spill_where(trn_spill_outlet o)
{
    return o == TRN_SPILL_LIMIT   ? "past its radius or boundary, over the pass"
           : o == TRN_SPILL_WATER ? "into earlier water, over the pass"
                                  : "over the grid's edge, by the pass";
}

static const char *spill_offset_text(const trn_water_body *b)
{
    static char text[64];
    snprintf(text, sizeof text, ", less %.3g m", b->spill_offset);
    return text;
}

static void body_text(const trn_water_body *b)
{
    char level[96];
    if (b->kind == TRN_WATER_RIVER && !b->wet_samples)
        snprintf(level, sizeof level, "no wet sample");
    else if (b->kind == TRN_WATER_RIVER)
        snprintf(level, sizeof level, "surface %.3f..%.3f m", b->min_surface, b->max_surface);
    else
        snprintf(level, sizeof level, "level %.3f m%s", b->level,
                 b->kind == TRN_WATER_LAKE && b->level_mode == TRN_LAKE_LEVEL_SPILL ? " (spill)"
                                                                                    : "");
    cli_printf("%s '%s': %s, wet area %.3f, volume %.3f, %" PRIu64 " wet sample%s\n",
               trn_water_kind_name(b->kind), b->id, level, b->area, b->volume, b->wet_samples,
               b->wet_samples == 1 ? "" : "s");
    /* A leaking fixed lake's warning already names its spill level. */
    if (b->kind == TRN_WATER_LAKE && b->level_mode == TRN_LAKE_LEVEL_SPILL &&
        isfinite(b->spill_level))
        cli_printf("  level spill: the basin spills at %.3f m %s at (%.6g, %.6g)%s\n",
                   b->spill_level, spill_where(b->spill_outlet), b->spill_x, b->spill_z,
                   spill_offset_text(b));
    if (b->warning_count)
        cli_printf("  warning: %s (%u leaking sample%s)\n", b->warning, b->warning_count,
                   b->warning_count == 1 ? "" : "s");
}

/* The column at the asked point: "wet", "dry" or "no water", as JSON or text. */
static json_t *at_report(const water_args *a, const trn_generated *gen)
{
    trn_water_sample s;
    const bool wet = gen->has_water && trn_water_query(&gen->water, &gen->field, a->x,
                                                       a->has_y ? a->y : NAN, a->z, &s);
    const double ground = trn_field_height_at(&gen->field, a->x, a->z);
    double dist = 0.0, wx = 0.0, wz = 0.0;
    const bool near =
        !wet && gen->has_water && cli_water_nearest_wet(&gen->water, a->x, a->z, &dist, &wx, &wz);
    json_t *o = json_object();
    json_t *pos = pair(a->x, a->z);
    if (a->has_y) json_array_append_new(pos, json_real(a->y));
    json_object_set_new(o, "position", pos);
    json_object_set_new(o, "state", json_string(wet ? "wet" : gen->has_water ? "dry" : "no water"));
    json_object_set_new(o, "ground", json_real(ground));
    if (wet) {
        json_object_set_new(o, "body", cli_json_string(s.body_id));
        json_object_set_new(o, "body_index", json_integer(s.body));
        json_object_set_new(o, "kind", json_string(trn_water_kind_name(s.kind)));
        json_object_set_new(o, "depth", json_real(s.depth));
        json_object_set_new(o, "surface", vec3(s.surface));
        json_object_set_new(o, "normal", vec3(s.normal));
        json_object_set_new(o, "column_up", vec3(s.column_up));
        json_object_set_new(o, "flow_velocity", vec3(s.flow_velocity));
    } else {
        json_object_set_new(o, "body", json_null());
    }
    if (a->has_y) json_object_set_new(o, "underwater", json_boolean(wet && s.underwater));
    if (!wet && gen->has_water) {
        json_t *n = json_null();
        if (near) {
            n = json_object();
            json_object_set_new(n, "distance", json_real(dist));
            json_object_set_new(n, "x", json_real(wx));
            json_object_set_new(n, "z", json_real(wz));
        }
        json_object_set_new(o, "nearest_wet", n);
    }
    return o;
}

static void at_text(const water_args *a, const json_t *o)
{
    const char *state = json_string_value(json_object_get(o, "state"));
    const double ground = json_real_value(json_object_get(o, "ground"));
    cli_printf("at %.3f,%.3f: ", a->x, a->z);
    if (strcmp(state, "no water") == 0) {
        cli_printf("no water (the recipe publishes none); ground %.3f m\n", ground);
        return;
    }
    if (strcmp(state, "dry") == 0) {
        const json_t *n = json_object_get(o, "nearest_wet");
        cli_printf("dry, ground %.3f m", ground);
        if (json_is_object(n))
            cli_printf("; the nearest wet sample is %.3f away at (%.6g, %.6g)\n",
                       json_real_value(json_object_get(n, "distance")),
                       json_real_value(json_object_get(n, "x")),
                       json_real_value(json_object_get(n, "z")));
        else
            cli_printf("; no sample is wet\n");
        if (a->has_y) cli_printf("y %.3f: not under water\n", a->y);
        return;
    }
    static const char *const keys[4] = {"surface", "normal", "column_up", "flow_velocity"};
    static const char *const labels[4] = {"surface", "normal", "column up", "flow velocity"};
    cli_printf("%s '%s', depth %.3f m, ground %.3f m\n",
               json_string_value(json_object_get(o, "kind")),
               json_string_value(json_object_get(o, "body")),
               json_real_value(json_object_get(o, "depth")), ground);
    for (int k = 0; k < 4; k++) {
        const json_t *v = json_object_get(o, keys[k]);
        cli_printf("%s %.6f %.6f %.6f%s\n", labels[k], json_real_value(json_array_get(v, 0)),
                   json_real_value(json_array_get(v, 1)), json_real_value(json_array_get(v, 2)),
                   k == 3 ? " m/s" : "");
    }
    if (a->has_y)
        cli_printf("y %.3f: %s\n", a->y,
                   json_is_true(json_object_get(o, "underwater")) ? "under water"
                                                                  : "not under water");
}

static void print_result(cli_ctx *ctx, const water_args *a, const trn_recipe *recipe,
                         const trn_generated *gen)
{
    const trn_water *w = &gen->water;
    const uint32_t count = gen->has_water ? w->body_count : 0u;
    uint64_t wet = 0;
    double area = 0.0, volume = 0.0;
    for (uint32_t b = 0; b < count; b++) {
        wet += w->bodies[b].wet_samples;
        area += w->bodies[b].area;
        volume += w->bodies[b].volume;
    }
    uint32_t notes = 0;
    for (uint32_t k = 0; k < gen->node_count; k++)
        notes += gen->nodes[k].note[0] != '\0';
    json_t *at = a->at ? at_report(a, gen) : NULL;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(a->recipe_path));
        json_object_set_new(o, "size", pair(recipe->size_x, recipe->size_z));
        json_t *res = json_array();
        json_array_append_new(res, json_integer(recipe->cells_x));
        json_array_append_new(res, json_integer(recipe->cells_z));
        json_object_set_new(o, "cells", res);
        json_object_set_new(o, "has_water", json_boolean(gen->has_water));
        json_t *bodies = json_array();
        for (uint32_t b = 0; b < count; b++)
            json_array_append_new(bodies, body_json(&w->bodies[b], b));
        json_object_set_new(o, "bodies", bodies);
        json_object_set_new(o, "wet_samples", json_integer((json_int_t)wet));
        json_object_set_new(o, "area", json_real(area));
        json_object_set_new(o, "volume", json_real(volume));
        json_t *nj = json_array();
        for (uint32_t k = 0; k < gen->node_count; k++) {
            const trn_node_report *r = &gen->nodes[k];
            if (!r->note[0]) continue;
            json_t *n = json_object();
            json_object_set_new(n, "node", cli_json_string(r->id));
            json_object_set_new(n, "type", cli_json_string(r->type));
            json_object_set_new(n, "note", cli_json_string(r->note));
            json_array_append_new(nj, n);
        }
        json_object_set_new(o, "notes", nj);
        if (at) json_object_set_new(o, "at", json_incref(at));
        cli_print_json(o);
    } else if (at) {
        at_text(a, at);
    } else {
        if (!gen->has_water)
            cli_printf("%s publishes no water (no water node feeds the Terrain Output's water "
                       "input)\n",
                       a->recipe_path);
        else
            cli_printf("%s: %u water bod%s on %u x %u samples: wet area %.3f, volume %.3f, "
                       "%" PRIu64 " wet sample%s\n",
                       a->recipe_path, count, count == 1 ? "y" : "ies", recipe->cells_x + 1u,
                       recipe->cells_z + 1u, area, volume, wet, wet == 1 ? "" : "s");
        for (uint32_t b = 0; b < count; b++)
            body_text(&w->bodies[b]);
        if (notes) cli_printf("node notes:\n");
        for (uint32_t k = 0; k < gen->node_count; k++)
            if (gen->nodes[k].note[0])
                cli_printf("  %s (%s): %s\n", gen->nodes[k].id, gen->nodes[k].type,
                           gen->nodes[k].note);
    }
    json_decref(at);
}

int cli_verb_water(cli_ctx *ctx, int argc, char **argv)
{
    water_args a;
    bool help;
    int rc = parse_args(ctx, argc, argv, &a, &help);
    if (help) {
        fputs(help_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if ((rc = cli_input(ctx, a.recipe_path))) return rc;
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    trn_error e;
    if (trn_recipe_read_source(a.recipe_path, &recipe, &kind, &e)) return cli_fail(ctx, &e);
    if (a.at && !(a.x >= 0.0 && a.x <= recipe.size_x && a.z >= 0.0 && a.z <= recipe.size_z)) {
        rc = cli_usage_error(ctx,
                             "--at %.3f,%.3f is outside the terrain: x must be 0..%.3f and z "
                             "0..%.3f",
                             a.x, a.z, recipe.size_x, recipe.size_z);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    if ((rc = cli_graph_gate(ctx, "water", a.recipe_path, &recipe, kind))) {
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_graph_cache *cache = NULL;
    if (a.cache_dir && trn_graph_cache_new(a.cache_dir, 0, &cache, &e)) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    trn_generate_options go = {
        .threads = a.threads, .quality = a.quality, .cache = cache, .max_work = a.max_work};
    trn_generated gen;
    trn_status st = cli_recipe_generate(a.recipe_path, &recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_graph_cache_free(cache);
    if (st) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    for (uint32_t k = 0; k < gen.diagnostic_count && !ctx->quiet; k++)
        cli_fprintf(stderr, "terrane water: warning: %s\n", gen.diagnostics[k]);
    print_result(ctx, &a, &recipe, &gen);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return CLI_EXIT_OK;
}
