/* terrane explain: why is this point this biome? Generates, then reports containment facts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explain.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane explain RECIPE --at X,Z [--format text|json]\n"
    "\n"
    "Generate the recipe, then say why the sample nearest to terrain-local position X,Z has\n"
    "its biome: where the assignment came from (a rule, a painted region or the default), the\n"
    "sample's full context (height, slope, moisture, water distance, substrate), then the\n"
    "winning rule's bands, or, when no rule matched, every active rule with each band INSIDE or\n"
    "OUTSIDE against the sample's value and the first condition that rejected it (bands are\n"
    "tested in the order elevation, slope, moisture, water distance, substrate). It reports\n"
    "containment, as the generator decides it; a blend ramp shows as a matched band, never as\n"
    "a fractional score. When the recipe publishes water, the water at X,Z: its body, kind,\n"
    "depth and surface, or the distance to the nearest wet sample (as 'terrane water --at').\n"
    "Progress and diagnostics go to stderr, so stdout stays parseable.\n"
    "\n"
    "The sample is the nearest grid point: i = round(X * cells_x / size_x), likewise j; its\n"
    "index is j * (cells_x + 1) + i. X and Z must lie on the terrain (0..size).\n"
    "\n"
    "options:\n"
    "  --at X,Z        terrain-local position in world units\n"
    "  --threads N     worker threads for generating (default: all)\n"
    "  --max-work N    work budget of each graph node and of the strokes (default 1e10,\n"
    "                  as terrane generate); --no-work-limit: none (trusted recipes only)\n"
    "  --format json   print the same facts as JSON\n"
    "  -q, --quiet     no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane explain examples/recipes/island.json --at 10,110\n"
    "  terrane explain island.json --at 512.5,300 --format json\n";

/* Display order of the explanation's bands; rejection order is the enum's (header). */
static const trn_rule_band display_order[TRN_RULE_BAND_COUNT] = {
    TRN_RULE_BAND_SLOPE, TRN_RULE_BAND_MOISTURE, TRN_RULE_BAND_WATER_DISTANCE,
    TRN_RULE_BAND_ELEVATION, TRN_RULE_BAND_SUBSTRATE};

static const char *band_label(trn_rule_band b)
{
    switch (b) {
    case TRN_RULE_BAND_ELEVATION:
        return "elevation";
    case TRN_RULE_BAND_SLOPE:
        return "slope";
    case TRN_RULE_BAND_MOISTURE:
        return "moisture";
    case TRN_RULE_BAND_WATER_DISTANCE:
        return "water distance";
    default:
        return "substrate";
    }
}

static const char *band_key(trn_rule_band b)
{
    return b == TRN_RULE_BAND_WATER_DISTANCE ? "water_distance" : band_label(b);
}

static const trn_band *rule_band(const trn_rule *r, trn_rule_band b)
{
    switch (b) {
    case TRN_RULE_BAND_ELEVATION:
        return &r->elevation;
    case TRN_RULE_BAND_SLOPE:
        return &r->slope;
    case TRN_RULE_BAND_MOISTURE:
        return &r->moisture;
    case TRN_RULE_BAND_WATER_DISTANCE:
        return &r->water_distance;
    default:
        return NULL;
    }
}

static double context_value(const trn_sample_context *c, trn_rule_band b)
{
    switch (b) {
    case TRN_RULE_BAND_ELEVATION:
        return c->height;
    case TRN_RULE_BAND_SLOPE:
        return c->slope;
    case TRN_RULE_BAND_MOISTURE:
        return c->moisture;
    case TRN_RULE_BAND_WATER_DISTANCE:
        return c->water_distance;
    default:
        return 0.0;
    }
}

/* "0.000", or "none" where no sample is wet (infinite distance). */
static void fmt3(char *buf, size_t n, double v)
{
    if (isinf(v) && v > 0)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%.3f", v);
}

static void substrate_list(uint32_t mask, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int s = 0; s < TRN_SUBSTRATE_COUNT; s++)
        if (mask >> s & 1u) {
            int w = snprintf(buf + len, n - len, "%s%s", len ? "," : "",
                             trn_substrate_name((trn_substrate)s));
            if (w < 0 || (size_t)w >= n - len) break;
            len += (size_t)w;
        }
}

/* One band as explain prints it: "water distance [0.000,6.000] sample 0.000 -> INSIDE". */
static void band_text(const trn_rule *r, trn_rule_band b, const trn_sample_context *c,
                      trn_band_result res, char *buf, size_t n)
{
    if (res == TRN_BAND_UNCONSTRAINED) {
        snprintf(buf, n, "%s unconstrained", band_label(b));
        return;
    }
    const char *verdict = res == TRN_BAND_INSIDE ? "INSIDE" : "OUTSIDE";
    if (b == TRN_RULE_BAND_SUBSTRATE) {
        char list[64];
        substrate_list(r->substrate_mask, list, sizeof list);
        snprintf(buf, n, "substrate [%s] sample %s -> %s", list, trn_substrate_name(c->substrate),
                 verdict);
        return;
    }
    const trn_band *band = rule_band(r, b);
    char lo[32], hi[32], v[32];
    fmt3(lo, sizeof lo, band->min);
    fmt3(hi, sizeof hi, band->max);
    fmt3(v, sizeof v, context_value(c, b));
    snprintf(buf, n, "%s [%s,%s] sample %s -> %s", band_label(b), lo, hi, v, verdict);
}

static void print_rule_text(const trn_rule *r, const trn_sample_context *c, bool list_rejection)
{
    trn_rule_test t;
    trn_rule_test_sample(r, c, &t);
    cli_printf("Rule \"%s\" biome=%s priority=%.15g blend=%.3f\n", r->id, r->biome, r->priority,
               r->blend);
    for (int k = 0; k < TRN_RULE_BAND_COUNT; k++) {
        char line[256];
        band_text(r, display_order[k], c, t.bands[display_order[k]], line, sizeof line);
        cli_printf("%s\n", line);
    }
    /* Only listed when nothing matched, so every rule has a rejecting band. */
    if (list_rejection && t.first_rejected >= 0)
        cli_printf("rejected by %s\n", band_label((trn_rule_band)t.first_rejected));
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *rule_json(const trn_rule *r, const trn_sample_context *c)
{
    trn_rule_test t;
    trn_rule_test_sample(r, c, &t);
    json_t *o = json_object();
    json_object_set_new(o, "id", cli_json_string(r->id));
    json_object_set_new(o, "biome", cli_json_string(r->biome));
    json_object_set_new(o, "priority", json_real(r->priority));
    json_object_set_new(o, "blend", json_real(r->blend));
    json_object_set_new(o, "matched", json_boolean(t.matched));
    json_t *bands = json_array();
    for (int k = 0; k < TRN_RULE_BAND_COUNT; k++) {
        const trn_rule_band b = display_order[k];
        json_t *bo = json_object();
        json_object_set_new(bo, "band", cli_json_string(band_key(b)));
        const trn_band_result res = t.bands[b];
        json_object_set_new(bo, "state",
                            cli_json_string(res == TRN_BAND_UNCONSTRAINED ? "unconstrained"
                                            : res == TRN_BAND_INSIDE      ? "inside"
                                                                          : "outside"));
        if (res != TRN_BAND_UNCONSTRAINED) {
            if (b == TRN_RULE_BAND_SUBSTRATE) {
                json_t *allowed = json_array();
                for (int s = 0; s < TRN_SUBSTRATE_COUNT; s++)
                    if (r->substrate_mask >> s & 1u)
                        json_array_append_new(
                            allowed, cli_json_string(trn_substrate_name((trn_substrate)s)));
                json_object_set_new(bo, "allowed", allowed);
                json_object_set_new(bo, "sample",
                                    cli_json_string(trn_substrate_name(c->substrate)));
            } else {
                const trn_band *band = rule_band(r, b);
                json_object_set_new(bo, "min", json_real(band->min));
                json_object_set_new(bo, "max", json_real(band->max));
                json_object_set_new(bo, "sample", number_or_null(context_value(c, b)));
            }
        }
        json_array_append_new(bands, bo);
    }
    json_object_set_new(o, "bands", bands);
    json_object_set_new(o, "first_rejected",
                        t.first_rejected >= 0
                            ? cli_json_string(band_key((trn_rule_band)t.first_rejected))
                            : json_null());
    return o;
}

static bool parse_at(const char *text, double *x, double *z)
{
    char *end;
    *x = strtod(text, &end);
    if (end == text || *end != ',') return false;
    const char *second = end + 1;
    *z = strtod(second, &end);
    return end != second && *end == '\0' && isfinite(*x) && isfinite(*z);
}

/* Nearest grid index, halves rounding up. */
static uint32_t nearest(double pos, double size, uint32_t cells)
{
    const double v = floor(pos * (double)cells / size + 0.5);
    if (!(v > 0.0)) return 0;
    return v >= (double)cells ? cells : (uint32_t)v;
}

/* The published water at (x, z): its column when wet, else the nearest wet sample; null when
 * the recipe publishes none. */
static json_t *water_json(const trn_generated *gen, double x, double z)
{
    if (!gen->has_water) return json_null();
    json_t *o = json_object();
    trn_water_sample s;
    if (trn_water_query(&gen->water, &gen->field, x, NAN, z, &s)) {
        json_object_set_new(o, "state", json_string("wet"));
        json_object_set_new(o, "body", cli_json_string(s.body_id));
        json_object_set_new(o, "kind", json_string(trn_water_kind_name(s.kind)));
        json_object_set_new(o, "depth", json_real(s.depth));
        json_object_set_new(o, "surface", json_real(s.surface[1]));
        return o;
    }
    json_object_set_new(o, "state", json_string("dry"));
    double d, wx, wz;
    if (cli_water_nearest_wet(&gen->water, x, z, &d, &wx, &wz)) {
        json_object_set_new(o, "nearest_wet_distance", json_real(d));
        json_t *at = json_array();
        json_array_append_new(at, json_real(wx));
        json_array_append_new(at, json_real(wz));
        json_object_set_new(o, "nearest_wet", at);
    } else {
        json_object_set_new(o, "nearest_wet_distance", json_null());
        json_object_set_new(o, "nearest_wet", json_null());
    }
    return o;
}

static void water_text(const json_t *w)
{
    /* No line for a recipe without water: it explains as it always did. */
    if (json_is_null(w)) return;
    if (strcmp(json_string_value(json_object_get(w, "state")), "wet") == 0) {
        cli_printf("Water: %s '%s', depth %.3f, surface %.3f\n",
                   json_string_value(json_object_get(w, "kind")),
                   json_string_value(json_object_get(w, "body")),
                   json_real_value(json_object_get(w, "depth")),
                   json_real_value(json_object_get(w, "surface")));
    } else if (json_is_null(json_object_get(w, "nearest_wet"))) {
        cli_printf("Water: dry, no sample is wet\n");
    } else {
        const json_t *at = json_object_get(w, "nearest_wet");
        cli_printf("Water: dry, nearest wet sample %.3f away at (%.6g, %.6g)\n",
                   json_real_value(json_object_get(w, "nearest_wet_distance")),
                   json_real_value(json_array_get(at, 0)), json_real_value(json_array_get(at, 1)));
    }
}

static const char *source_word(trn_biome_source s)
{
    return s == TRN_BIOME_FROM_RULE ? "rule" : s == TRN_BIOME_FROM_REGION ? "region" : "default";
}

json_t *cli_explain_json(const trn_generated *gen, const trn_recipe *recipe,
                         const char *recipe_path, double x, double z, bool every_rule)
{
    const uint32_t i = nearest(x, recipe->size_x, recipe->cells_x);
    const uint32_t j = nearest(z, recipe->size_z, recipe->cells_z);
    const size_t index = (size_t)j * ((size_t)recipe->cells_x + 1u) + i;
    const size_t count = trn_field_sample_count(&gen->field);
    trn_sample_context c;
    trn_generated_context(gen, recipe, i, j, &c);
    const uint8_t biome = gen->biomes.values[index];
    const trn_biome_source source = (trn_biome_source)gen->sources[index];
    const int rule = gen->rule_index[index];
    const char *biome_name = biome < recipe->biome_count ? recipe->biomes[biome].name : "?";
    const char *sea_how = gen->sea_level_source == TRN_SEA_LEVEL_EXPLICIT ? "explicit" : "derived";
    json_t *o = json_object();
    if (recipe_path) json_object_set_new(o, "input", cli_json_string(recipe_path));
    json_t *pos = json_array();
    json_array_append_new(pos, json_real(x));
    json_array_append_new(pos, json_real(z));
    json_object_set_new(o, "position", pos);
    json_t *size = json_array();
    json_array_append_new(size, json_real(recipe->size_x));
    json_array_append_new(size, json_real(recipe->size_z));
    json_object_set_new(o, "size", size);
    json_t *cell = json_array();
    json_array_append_new(cell, json_integer(i));
    json_array_append_new(cell, json_integer(j));
    json_object_set_new(o, "cell", cell);
    json_object_set_new(o, "sample", json_integer((json_int_t)index));
    json_object_set_new(o, "samples", json_integer((json_int_t)count));
    json_object_set_new(o, "sea_level", json_real(gen->sea_level));
    json_object_set_new(o, "sea_level_source", cli_json_string(sea_how));
    json_object_set_new(o, "biome", cli_json_string(biome_name));
    json_object_set_new(o, "source", cli_json_string(source_word(source)));
    json_object_set_new(o, "rule",
                        rule >= 0 ? cli_json_string(recipe->rules[rule].id) : json_null());
    json_t *cx = json_object();
    json_object_set_new(cx, "height", json_real(c.height));
    json_object_set_new(cx, "slope", json_real(c.slope));
    json_object_set_new(cx, "moisture", json_real(c.moisture));
    json_object_set_new(cx, "water_distance", number_or_null(c.water_distance));
    json_object_set_new(cx, "substrate", cli_json_string(trn_substrate_name(c.substrate)));
    json_object_set_new(o, "context", cx);
    json_object_set_new(o, "water", water_json(gen, x, z));
    json_t *rules = json_array();
    if (every_rule) {
        for (uint32_t r = 0; r < recipe->rule_count; r++) {
            json_t *one = rule_json(&recipe->rules[r], &c);
            json_object_set_new(one, "active",
                                json_boolean(trn_recipe_rule_active(recipe, &recipe->rules[r])));
            json_array_append_new(rules, one);
        }
    } else if (rule >= 0) {
        json_array_append_new(rules, rule_json(&recipe->rules[rule], &c));
    } else if (source == TRN_BIOME_FROM_DEFAULT && gen->biome_rules) {
        for (uint32_t r = 0; r < recipe->rule_count; r++)
            json_array_append_new(rules, rule_json(&recipe->rules[r], &c));
    }
    json_object_set_new(o, "rules", rules);
    json_object_set_new(o, "rules_applied", json_boolean(gen->biome_rules));
    return o;
}

int cli_verb_explain(cli_ctx *ctx, int argc, char **argv)
{
    const char *recipe_path = NULL, *at = NULL;
    int threads = 0;
    uint64_t max_work = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--no-work-limit") == 0) {
            max_work = TRN_WORK_UNLIMITED;
        } else if (a[0] == '-' && a[1]) {
            if (strcmp(a, "--at") != 0 && strcmp(a, "--threads") != 0 &&
                strcmp(a, "--max-work") != 0)
                return cli_usage_error(ctx, "unknown option '%s'", a);
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            if (strcmp(a, "--at") == 0) {
                if (at) return cli_usage_error(ctx, "--at is given twice");
                at = v;
            } else if (strcmp(a, "--max-work") == 0) {
                if (!cli_parse_max_work(ctx, v, &max_work)) return CLI_EXIT_USAGE;
            } else {
                uint32_t t;
                if (!cli_parse_u32(ctx, a, v, &t)) return CLI_EXIT_USAGE;
                if (t < 1 || t > 1024)
                    return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
                threads = (int)t;
            }
        } else if (!recipe_path) {
            recipe_path = a;
        } else {
            return cli_usage_error(ctx, "takes one recipe; unexpected '%s'", a);
        }
    }
    if (!recipe_path) return cli_usage_error(ctx, "needs a recipe (a .json file)");
    if (!at) return cli_usage_error(ctx, "needs a position: --at X,Z");
    double x, z;
    if (!parse_at(at, &x, &z))
        return cli_usage_error(ctx, "--at expects X,Z as two finite numbers, got '%s'", at);

    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_error e;
    if (trn_recipe_read_source(recipe_path, &recipe, NULL, &e)) return cli_fail(ctx, &e);
    if (!(x >= 0.0 && x <= recipe.size_x && z >= 0.0 && z <= recipe.size_z)) {
        int rc = cli_usage_error(ctx,
                                 "--at %.3f,%.3f is outside the terrain: x must be 0..%.3f and "
                                 "z 0..%.3f",
                                 x, z, recipe.size_x, recipe.size_z);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_generate_options go = {
        .threads = threads, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = max_work};
    trn_generated gen;
    trn_status st = cli_recipe_generate(recipe_path, &recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    for (uint32_t k = 0; k < gen.diagnostic_count && !ctx->quiet; k++)
        cli_fprintf(stderr, "terrane explain: warning: %s\n", gen.diagnostics[k]);

    const uint32_t i = nearest(x, recipe.size_x, recipe.cells_x);
    const uint32_t j = nearest(z, recipe.size_z, recipe.cells_z);
    const size_t index = (size_t)j * ((size_t)recipe.cells_x + 1u) + i;
    const size_t count = trn_field_sample_count(&gen.field);
    trn_sample_context c;
    trn_generated_context(&gen, &recipe, i, j, &c);
    const uint8_t biome = gen.biomes.values[index];
    const trn_biome_source source = (trn_biome_source)gen.sources[index];
    const int rule = gen.rule_index[index];
    const char *biome_name = biome < recipe.biome_count ? recipe.biomes[biome].name : "?";
    json_t *water = water_json(&gen, x, z);

    if (ctx->json) {
        cli_print_json(cli_explain_json(&gen, &recipe, recipe_path, x, z, false));
    } else {
        char wd[32];
        fmt3(wd, sizeof wd, c.water_distance);
        cli_printf("Position: %.3f,%.3f in terrain %.3f x %.3f\n", x, z, recipe.size_x,
                   recipe.size_z);
        cli_printf("Cell: %u,%u (sample %zu of %zu)\n", i, j, index, count);
        cli_printf("Sea level: %.3f\n", gen.sea_level);
        cli_printf("Biome: %s\n", biome_name);
        if (rule >= 0)
            cli_printf("Source: rule \"%s\"\n", recipe.rules[rule].id);
        else if (source == TRN_BIOME_FROM_REGION)
            cli_printf("Source: painted region\n");
        else
            cli_printf("Source: default\n");
        cli_printf("Context:\n");
        cli_printf("height %.3f\n", c.height);
        cli_printf("slope %.3f deg\n", c.slope);
        cli_printf("moisture %.3f\n", c.moisture);
        cli_printf("water distance %s\n", wd);
        cli_printf("substrate %s\n", trn_substrate_name(c.substrate));
        water_text(water);
        if (rule >= 0) {
            print_rule_text(&recipe.rules[rule], &c, false);
        } else if (source == TRN_BIOME_FROM_DEFAULT && !gen.biome_rules) {
            cli_printf("The graph has no Biome Rules node feeding its output: rules are not "
                       "applied, the default biome applies\n");
        } else if (source == TRN_BIOME_FROM_DEFAULT) {
            if (recipe.rule_count == 0)
                cli_printf("No rules: the default biome applies\n");
            else
                cli_printf("No rule matched (%u active): the default biome applies\n",
                           recipe.rule_count);
            for (uint32_t r = 0; r < recipe.rule_count; r++)
                print_rule_text(&recipe.rules[r], &c, true);
        }
    }
    json_decref(water);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return CLI_EXIT_OK;
}
