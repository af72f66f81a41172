/* terrane scatter: a recipe's palette placed on its finished surface, as instances and a picture.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "terrane/generate.h"
#include "terrane/image.h"
#include "terrane/palette.h"
#include "terrane/render.h"
#include "terrane/scatter.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane scatter RECIPE [-o INSTANCES.json] [--csv INSTANCES.csv] [--picture "
    "DOTS.png] [options]\n"
    "\n"
    "Generate RECIPE and place its palette's placement rules on the finished surface (after\n"
    "the layers' sculpting, with the final biomes, water and exclusions). The recipe names the\n"
    "palette with \"palette\": \"asset://...\" (a terrain_palette resolved through the project's\n"
    "asset manifests, as presets are) or holds one inline. Each rule places its instances on a\n"
    "fixed lattice of candidate sites, so the same recipe gives the same instances whatever the\n"
    "thread count, and editing one rule never moves another's (docs/scatter.md).\n"
    "\n"
    "Prints, per rule, how many sites were candidates, how many the density selected, what\n"
    "filtered them (water, exclusion, biome, slope, moisture, water distance), how many spacing\n"
    "removed and how many were placed.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE.json   the instances: {\"instances\": [{\"id\": \"RULE/CX_CZ\", "
    "\"rule\",\n"
    "                           \"x\", \"y\", \"z\", \"yaw\", \"scale\", \"model\" or \"prefab\",\n"
    "                           \"collision\"}, ...]}, terrain-local units\n"
    "  --csv FILE.csv           the same as CSV (id,rule,x,y,z,yaw,scale,model,prefab,collision)\n"
    "  --picture FILE.png       the instances as dots over a hillshade, north up, one colour a "
    "rule\n"
    "  --threads N              worker threads (1..1024; default: all cores); results never "
    "depend on it\n"
    "  --max-placements N       the placement ceiling (default 2000000); more are cut and said\n"
    "  --max-candidates N       the candidate-site budget over all rules (default 33554432, about\n"
    "                           2 minutes); a palette asking for more stops before placing\n"
    "  --exclusions FILE.json   placements to suppress after placing: a JSON array of keys\n"
    "                           (\"RULE/CX_CZ\", the ids above), a Terrain3D object or a scene\n"
    "                           entity with components.Terrain3D.scatter_exclusions; the others\n"
    "                           stay as placed (nothing refills) and keys that match nothing are\n"
    "                           counted, not refused\n"
    "  -q, --quiet              no progress bar or notes\n"
    "  --format json            the report as JSON on stdout\n"
    "\n"
    "examples:\n"
    "  terrane scatter lakeside.json -o instances.json --picture dots.png\n"
    "  terrane scatter lakeside.json --csv instances.csv --format json\n"
    "  terrane scatter lakeside.json -o kept.json --exclusions removed.json\n";

typedef struct scatter_args {
    const char *recipe_path, *out_json, *out_csv, *out_picture, *exclusions;
    int threads;
    uint64_t max_placements, max_candidates;
} scatter_args;

static int parse_args(cli_ctx *ctx, int argc, char **argv, scatter_args *a, bool *help)
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
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (a->recipe_path)
                return cli_usage_error(ctx, "takes one recipe; unexpected '%s'", arg);
            a->recipe_path = arg;
            continue;
        }
        static const char *const known[] = {"-o",           "--output",         "--csv",
                                            "--picture",    "--threads",        "--max-placements",
                                            "--exclusions", "--max-candidates", NULL};
        bool ok = false;
        for (const char *const *k = known; *k && !ok; k++)
            ok = strcmp(arg, *k) == 0;
        if (!ok) return cli_usage_error(ctx, "unknown option '%s'", arg);
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        const char **slot = strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0 ? &a->out_json
                            : strcmp(arg, "--csv") == 0                            ? &a->out_csv
                            : strcmp(arg, "--picture") == 0                        ? &a->out_picture
                            : strcmp(arg, "--exclusions") == 0                     ? &a->exclusions
                                                                                   : NULL;
        if (slot) {
            if (*slot) return cli_usage_error(ctx, "%s is given twice", arg);
            *slot = v;
        } else if (strcmp(arg, "--threads") == 0) {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 1024)
                return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
            a->threads = (int)t;
        } else if (strcmp(arg, "--max-candidates") == 0) {
            char *end = NULL;
            errno = 0;
            const unsigned long long n = strtoull(v, &end, 10);
            if (v[0] == '-' || !end || end == v || *end || errno || n < 1)
                return cli_usage_error(ctx,
                                       "--max-candidates takes a whole number of sites >= 1, not "
                                       "'%s'",
                                       v);
            a->max_candidates = n;
        } else {
            uint32_t n;
            if (!cli_parse_u32(ctx, arg, v, &n)) return CLI_EXIT_USAGE;
            if (n < 1) return cli_usage_error(ctx, "--max-placements must be at least 1");
            a->max_placements = n;
        }
    }
    if (!a->recipe_path) return cli_usage_error(ctx, "needs a recipe (a .json file)");
    return CLI_EXIT_OK;
}

/* The recipe's palette: an asset id resolved in its project, or the inline document. */
int cli_palette_load(cli_ctx *ctx, const char *recipe_path, const trn_recipe *recipe,
                     trn_palette *palette, trn_material_set *set)
{
    trn_error e;
    if (set) memset(set, 0, sizeof *set);
    if (!recipe->palette_json)
        return cli_failf(ctx,
                         "%s has no palette: add \"palette\": \"asset://...\" naming a "
                         "terrain_palette (or the palette itself) to scatter anything",
                         recipe_path);
    json_error_t je;
    json_t *v = json_loads(recipe->palette_json, JSON_DECODE_ANY, &je);
    int rc = CLI_EXIT_OK;
    if (json_is_string(v)) {
        if (trn_palette_resolve(recipe_path, json_string_value(v), palette, set, &e))
            rc = cli_fail(ctx, &e);
    } else if (trn_palette_parse(recipe->palette_json, strlen(recipe->palette_json), recipe_path,
                                 palette, &e)) {
        rc = cli_failf(ctx, "%s: palette: %s", recipe_path, e.message);
    } else if (set && palette->material_set &&
               trn_material_set_resolve(recipe_path, palette->material_set, set, &e)) {
        rc = cli_fail(ctx, &e);
        trn_palette_dispose(palette);
    }
    json_decref(v);
    return rc;
}

bool cli_graph_places_palette(const trn_recipe *recipe)
{
    if (!recipe->graph_json) return false;
    trn_graph g;
    trn_error e;
    if (trn_graph_from_recipe(recipe, &g, &e)) return false; /* generation reports it */
    bool found = false;
    for (uint32_t k = 0; k < g.node_count && !found; k++)
        found = g.nodes[k].type && strcmp(g.nodes[k].type, "scatter_palette") == 0;
    trn_graph_dispose(&g);
    return found;
}

trn_status cli_recipe_generate(const char *recipe_path, const trn_recipe *recipe,
                               const trn_generate_options *options, trn_generated *out,
                               trn_progress_fn progress, void *user, trn_error *err)
{
    trn_generate_options go;
    if (options)
        go = *options;
    else
        memset(&go, 0, sizeof go);
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    bool loaded = false;
    if (!go.palette && recipe->palette_json && cli_graph_places_palette(recipe)) {
        json_error_t je;
        json_t *v = json_loads(recipe->palette_json, JSON_DECODE_ANY, &je);
        trn_status st =
            json_is_string(v)
                ? trn_palette_resolve(recipe_path, json_string_value(v), &palette, NULL, err)
                : trn_palette_parse(recipe->palette_json, strlen(recipe->palette_json), recipe_path,
                                    &palette, err);
        json_decref(v);
        if (st) return st;
        loaded = true;
        go.palette = &palette;
    }
    trn_graph_cache *own = go.cache ? NULL : cli_cache_default(NULL, 0);
    if (own) go.cache = own;
    trn_status st = trn_recipe_generate(recipe, &go, out, progress, user, err);
    trn_graph_cache_free(own);
    if (loaded) trn_palette_dispose(&palette); /* instances name rules by index */
    return st;
}

/* Write a text buffer to dest through the run's write set. */
static int write_text(cli_ctx *ctx, const char *dest, const char *text, size_t size)
{
    const char *file = cli_output(ctx, dest);
    if (!file) return CLI_EXIT_FAIL;
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(text, 1, size, f) != size) {
        if (f) fclose(f);
        return cli_failf(ctx, "%s: could not write", dest);
    }
    if (fclose(f)) return cli_failf(ctx, "%s: could not write", dest);
    return CLI_EXIT_OK;
}

/* A rule's dot colour: well apart hues, the same for a rule index every time. */
static void rule_colour(uint32_t rule, uint8_t rgb[3])
{
    static const uint8_t table[8][3] = {{230, 25, 75},  {60, 180, 75},  {0, 130, 200},
                                        {245, 130, 48}, {145, 30, 180}, {70, 240, 240},
                                        {240, 50, 230}, {210, 245, 60}};
    memcpy(rgb, table[rule % 8u], 3);
}

static int write_picture(cli_ctx *ctx, const char *dest, const trn_generated *gen,
                         const trn_palette *palette, const trn_instances *inst)
{
    trn_raster8 shade = {0, 0, 0, NULL};
    trn_error e;
    if (trn_render_hillshade(&gen->field, NULL, &shade, NULL, NULL, &e)) return cli_fail(ctx, &e);
    const size_t w = shade.width, h = shade.height;
    uint8_t *rgb = malloc(w * h * 3u);
    if (!rgb) {
        trn_raster8_dispose(&shade);
        return cli_failf(ctx, "out of memory for the picture");
    }
    for (size_t k = 0; k < w * h; k++)
        rgb[3 * k] = rgb[3 * k + 1] = rgb[3 * k + 2] = shade.pixels[k];
    trn_raster8_dispose(&shade);
    if (gen->has_water) {
        trn_raster8 pic = {(uint32_t)w, (uint32_t)h, 3, rgb};
        if (trn_render_water_overlay(&pic, &gen->field, &gen->water, &e)) {
            free(pic.pixels);
            return cli_fail(ctx, &e);
        }
        rgb = pic.pixels;
    }
    /* Pixel (px, py) shows sample (px, cells_z - py): north up. Grass first as single pixels,
     * then everything else as 3 x 3 dots over it, so dense ground cover hides nothing. */
    const double sx = (double)gen->field.cells_x / gen->field.size_x;
    const double sz = (double)gen->field.cells_z / gen->field.size_z;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < inst->count; k++) {
            const trn_instance *in = &inst->items[k];
            const bool grass = in->rule < palette->rule_count &&
                               palette->rules[in->rule].category == TRN_CATEGORY_GRASS;
            if (grass != (pass == 0)) continue;
            const long px = lround(in->x * sx), py = (long)h - 1 - lround(in->z * sz);
            const long r = grass ? 0 : 1;
            uint8_t c[3];
            rule_colour(in->rule, c);
            for (long dy = -r; dy <= r; dy++)
                for (long dx = -r; dx <= r; dx++) {
                    const long x = px + dx, y = py + dy;
                    if (x < 0 || y < 0 || x >= (long)w || y >= (long)h) continue;
                    memcpy(rgb + 3u * ((size_t)y * w + (size_t)x), c, 3);
                }
        }
    const char *file = cli_output(ctx, dest);
    int rc = CLI_EXIT_FAIL;
    if (file) {
        trn_image img = {(uint32_t)w, (uint32_t)h, 3, 8, rgb, false};
        trn_png_options po;
        trn_png_options_default(&po);
        rc = trn_png_write(file, &img, &po, NULL, NULL, &e) ? cli_fail(ctx, &e) : CLI_EXIT_OK;
    }
    free(rgb);
    return rc;
}

/* What --exclusions did: the list's size, the placements it removed, its keys that matched
 * none. */
typedef struct suppression {
    size_t keys, suppressed, unmatched;
} suppression;

/* Read an exclusion list (before generating, so a bad file fails fast). */
static int load_exclusions(cli_ctx *ctx, const char *path, trn_scatter_exclusions *ex)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    memset(ex, 0, sizeof *ex);
    if (trn_file_read_all(path, 0, &data, &size, &e)) return cli_fail(ctx, &e);
    int rc = trn_scatter_exclusions_parse((const char *)data, size, path, ex, &e)
                 ? cli_fail(ctx, &e)
                 : CLI_EXIT_OK;
    free(data);
    return rc;
}

static void print_report(cli_ctx *ctx, const scatter_args *a, const trn_palette *p,
                         const trn_scatter_report *rep, const trn_instances *inst,
                         const suppression *sup)
{
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(a->recipe_path));
        json_object_set_new(o, "palette", cli_json_string(p->name ? p->name : ""));
        json_object_set_new(o, "instances", json_integer((json_int_t)inst->count));
        json_object_set_new(o, "truncated", json_integer((json_int_t)rep->truncated));
        if (a->exclusions) {
            json_t *x = json_object();
            json_object_set_new(x, "file", cli_json_string(a->exclusions));
            json_object_set_new(x, "keys", json_integer((json_int_t)sup->keys));
            json_object_set_new(x, "suppressed", json_integer((json_int_t)sup->suppressed));
            json_object_set_new(x, "unmatched", json_integer((json_int_t)sup->unmatched));
            json_object_set_new(o, "exclusions", x);
        }
        json_t *rules = json_array();
        for (uint32_t r = 0; r < rep->rule_count && r < p->rule_count; r++) {
            const trn_scatter_rule_report *rr = &rep->rules[r];
            json_t *ro = json_object();
            json_object_set_new(ro, "id", cli_json_string(p->rules[r].id));
            json_object_set_new(ro, "candidates", json_integer((json_int_t)rr->candidates));
            json_object_set_new(ro, "selected", json_integer((json_int_t)rr->selected));
            json_t *f = json_object();
            for (int k = 0; k < TRN_SCATTER_FILTER_COUNT; k++)
                json_object_set_new(f, trn_scatter_filter_name((trn_scatter_filter)k),
                                    json_integer((json_int_t)rr->filtered[k]));
            json_object_set_new(ro, "filtered", f);
            json_object_set_new(ro, "spaced_out", json_integer((json_int_t)rr->spaced_out));
            json_object_set_new(ro, "placed", json_integer((json_int_t)rr->placed));
            json_object_set_new(ro, "truncated", json_integer((json_int_t)rr->truncated));
            json_array_append_new(rules, ro);
        }
        json_object_set_new(o, "rules", rules);
        cli_print_json(o);
        return;
    }
    cli_printf("%s: palette '%s', %zu instance%s\n", a->recipe_path, p->name ? p->name : "",
               inst->count, inst->count == 1 ? "" : "s");
    for (uint32_t r = 0; r < rep->rule_count && r < p->rule_count; r++) {
        const trn_scatter_rule_report *rr = &rep->rules[r];
        cli_printf("  %-20s %" PRIu64 " placed of %" PRIu64 " selected (%" PRIu64
                   " candidate sites)",
                   p->rules[r].id, rr->placed, rr->selected, rr->candidates);
        bool any = false;
        for (int k = 0; k < TRN_SCATTER_FILTER_COUNT; k++)
            if (rr->filtered[k]) {
                cli_printf("%s%s %" PRIu64, any ? ", " : "; filtered: ",
                           trn_scatter_filter_name((trn_scatter_filter)k), rr->filtered[k]);
                any = true;
            }
        if (rr->spaced_out) cli_printf("; spacing removed %" PRIu64, rr->spaced_out);
        if (rr->truncated) cli_printf("; %" PRIu64 " over the ceiling", rr->truncated);
        cli_printf("\n");
    }
    if (a->exclusions)
        cli_printf("  %s: %zu placement%s suppressed, %zu of %zu key%s matched nothing\n",
                   a->exclusions, sup->suppressed, sup->suppressed == 1 ? "" : "s", sup->unmatched,
                   sup->keys, sup->keys == 1 ? "" : "s");
    if (rep->truncated)
        cli_fprintf(stderr,
                    "terrane scatter: warning: %" PRIu64
                    " placements over the ceiling were left out (--max-placements)\n",
                    rep->truncated);
}

int cli_scatter_place(cli_ctx *ctx, const trn_recipe *recipe, const trn_generated *gen,
                      const trn_palette *palette, int threads, uint64_t max_placements,
                      uint64_t max_candidates, trn_instances *inst, trn_scatter_report *rep)
{
    trn_error e;
    trn_generated_scatter_env env;
    if (trn_generated_scatter_env_init(gen, recipe, palette, &env, &e)) return cli_fail(ctx, &e);
    trn_scatter_options so = {threads, max_candidates, 0, max_placements};
    int rc = CLI_EXIT_OK;
    if (trn_scatter_run(palette, &env.env, &so, inst, rep, cli_progress, ctx, &e))
        rc = cli_fail(ctx, &e);
    cli_progress_end(ctx);
    trn_generated_scatter_env_dispose(&env);
    return rc;
}

int cli_verb_scatter(cli_ctx *ctx, int argc, char **argv)
{
    scatter_args a;
    bool help;
    int rc = parse_args(ctx, argc, argv, &a, &help);
    if (help) {
        fputs(help_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if ((rc = cli_input(ctx, a.recipe_path))) return rc;
    if (a.exclusions && (rc = cli_input(ctx, a.exclusions))) return rc;
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    trn_error e;
    if (trn_recipe_read_source(a.recipe_path, &recipe, &kind, &e)) return cli_fail(ctx, &e);
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    trn_scatter_exclusions ex = {NULL, 0};
    if ((rc = cli_palette_load(ctx, a.recipe_path, &recipe, &palette, NULL)) ||
        (rc = cli_graph_gate(ctx, "scatter", a.recipe_path, &recipe, kind)) ||
        (a.exclusions && (rc = load_exclusions(ctx, a.exclusions, &ex)))) {
        trn_palette_dispose(&palette);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_generate_options go = {
        .threads = a.threads, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    trn_generated gen;
    trn_status st = cli_recipe_generate(a.recipe_path, &recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        trn_scatter_exclusions_dispose(&ex);
        trn_palette_dispose(&palette);
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    trn_instances inst = {NULL, 0};
    trn_scatter_report rep;
    memset(&rep, 0, sizeof rep);
    rc = cli_scatter_place(ctx, &recipe, &gen, &palette, a.threads, a.max_placements,
                           a.max_candidates, &inst, &rep);
    suppression sup = {ex.count, 0, 0};
    /* The scene's suppression list applies after placement: nothing refills. */
    if (!rc && a.exclusions &&
        trn_instances_suppress(&palette, &inst, &ex, &sup.suppressed, &sup.unmatched, &e))
        rc = cli_fail(ctx, &e);
    trn_scatter_exclusions_dispose(&ex);
    char *text = NULL;
    size_t size = 0;
    if (!rc && a.out_json) {
        rc = trn_instances_write_json(&palette, &inst, &text, &size, &e)
                 ? cli_fail(ctx, &e)
                 : write_text(ctx, a.out_json, text, size);
        free(text);
    }
    if (!rc && a.out_csv) {
        text = NULL;
        rc = trn_instances_write_csv(&palette, &inst, &text, &size, &e)
                 ? cli_fail(ctx, &e)
                 : write_text(ctx, a.out_csv, text, size);
        free(text);
    }
    if (!rc && a.out_picture) rc = write_picture(ctx, a.out_picture, &gen, &palette, &inst);
    if (!rc) rc = cli_commit(ctx);
    if (!rc) print_report(ctx, &a, &palette, &rep, &inst, &sup);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&inst);
    trn_generated_dispose(&gen);
    trn_palette_dispose(&palette);
    trn_recipe_dispose(&recipe);
    return rc;
}
