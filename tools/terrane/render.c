/* terrane render: draw a hillshade, height, slope, aspect, colour relief or material map as PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "detect.h"
#include "terrane/generate.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "fmt_document.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane render IN -o OUT.png [--mode MODE] [options]\n"
    "\n"
    "Draw a picture of a terrain, north up (the terrain's far edge, z = max, at the top). IN is\n"
    "any file terrane reads ('terrane formats': BeamNG/Torque .ter, Terragen .ter, PNG,\n"
    ".r16/.raw/.r32, GeoTIFF, Unity TerrainData, Stationeers terrain.dat or .save), detected\n"
    "from its content, or a terrain recipe (NAME.json, a recipe or Terrain asset document),\n"
    "which is generated first: the water it publishes is drawn over the picture (RGB), each wet\n"
    "sample tinted by its body's shallow and deep colours by depth (shallow weight\n"
    "exp(-depth / absorption_distance), blended by the colours' alpha; --no-water leaves it out).\n"
    "\n"
    "modes:\n"
    "  hillshade      grey shaded relief computed exactly as 'gdaldem hillshade -compute_edges'\n"
    "                 (Horn's gradient; 1 + 254 * cos of the light angle, 1 in shadow). Default.\n"
    "  height         grey heights, lowest black to highest white (or --height-range)\n"
    "  slope          grey slope, 0 degrees black to 90 degrees white (Horn, as gdaldem slope)\n"
    "  aspect         grey aspect as gdaldem aspect computes it: degrees clockwise from north\n"
    "                 (0..360) drawn as 1 + degrees * 254 / 360 (north 1, east 65, south 128,\n"
    "                 west 192); flat ground, where gdaldem writes -9999, is 0\n"
    "  colour-relief  (or color-relief) colours from a table, as 'gdaldem color-relief':\n"
    "                 --color-table FILE with lines 'HEIGHT R G B [A]' (or a colour name),\n"
    "                 HEIGHT in metres, 'P%' of the height range or 'nv' (NaN heights);\n"
    "                 linear between entries. RGB, or RGBA with --alpha\n"
    "  layers         RGBA material map: colours from the material names (grass green, sand\n"
    "                 tan, rock grey, snow white, water blue, ...; docs/cli.md has the table),\n"
    "                 other materials from a fixed palette, holes transparent, and a legend\n"
    "                 in a margin on the right (needs a file with materials: a BeamNG/Torque\n"
    "                 .ter or a Unity TerrainData)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.png     the picture to write (replaced atomically)\n"
    "  --mode M                 hillshade, height, slope, aspect, colour-relief or layers\n"
    "  --azimuth A              light direction, degrees clockwise from north (default 315)\n"
    "  --altitude A             light height above the horizon, 0-90 degrees (default 45)\n"
    "  --z-factor Z             vertical exaggeration (default 1), as gdaldem -z\n"
    "  --scale S                horizontal units per vertical unit (default 1), as gdaldem -s\n"
    "  --multidirectional       light from 225, 270, 315 and 360 degrees, as gdaldem\n"
    "  --no-edges               leave the border pixels 0 (nodata), as gdaldem does by default\n"
    "  --height-range LO,HI     heights drawn black and white in height mode (default: min,max)\n"
    "  --zero-for-flat          aspect: flat ground is aspect 0 (drawn 1), as gdaldem\n"
    "  --trigonometric          aspect: degrees counter-clockwise from east, as gdaldem\n"
    "  --color-table FILE       colour-relief: the colour table (also --colour-table)\n"
    "  --alpha                  colour-relief: write RGBA with the table's alpha, as gdaldem\n"
    "  --exact-color-entry      colour-relief: only heights equal to an entry are coloured;\n"
    "                           others transparent black, as gdaldem\n"
    "  --nearest-color-entry    colour-relief: the nearest entry's colour, as gdaldem\n"
    "  --no-legend              layers: the map alone, one pixel a sample\n"
    "  --no-water               a recipe: draw the ground without its water\n"
    "  --max-height M           BeamNG maxHeight: metres of the 16-bit range (default 2048)\n"
    "  --square-size S          metres per sample step (default 1): the cell size of the shading\n"
    "  --size WxH               size of a headerless input (default: a square from its length)\n"
    "  --raw-type T             headerless input type: r16le, r16be, u8, r32\n"
    "  --format json            print what was written as JSON (layers: the legend)\n"
    "  -q, --quiet              no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane render theTerrain.ter -o hillshade.png\n"
    "  terrane render theTerrain.ter -o shade.png --max-height 512 --square-size 2 --z-factor 3\n"
    "  terrane render theTerrain.ter -o layers.png --mode layers\n"
    "  terrane render heightmap.png -o slope.png --mode slope --square-size 0.5\n"
    "  terrane render dem.tif -o aspect.png --mode aspect\n"
    "  terrane render dem.tif -o relief.png --mode colour-relief --color-table colours.txt\n"
    "  terrane render RealisticTerrain.ter -o relief.png --multidirectional\n"
    "  terrane render valley.json -o valley.png --multidirectional\n";

typedef enum render_mode {
    MODE_HILLSHADE,
    MODE_HEIGHT,
    MODE_SLOPE,
    MODE_ASPECT,
    MODE_RELIEF,
    MODE_LAYERS
} render_mode;

static const char *const mode_names[] = {"hillshade", "height",        "slope",
                                         "aspect",    "colour-relief", "layers"};

static bool parse_mode(const char *text, render_mode *mode)
{
    if (strcasecmp(text, "color-relief") == 0) {
        *mode = MODE_RELIEF;
        return true;
    }
    for (int k = 0; k < 6; k++)
        if (strcasecmp(text, mode_names[k]) == 0) {
            *mode = (render_mode)k;
            return true;
        }
    return false;
}

static bool parse_range(cli_ctx *ctx, const char *text, double *lo, double *hi)
{
    char *end;
    *lo = strtod(text, &end);
    if (end == text || *end != ',') goto bad;
    const char *second = end + 1;
    *hi = strtod(second, &end);
    if (end == second || *end != '\0' || !isfinite(*lo) || !isfinite(*hi) || !(*hi > *lo)) goto bad;
    return true;
bad:
    cli_usage_error(ctx, "--height-range expects LO,HI with LO < HI (metres), got '%s'", text);
    return false;
}

static bool has_png_extension(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".png") == 0;
}

/* "#rrggbb", or "#rrggbbaa" when not opaque. */
static json_t *color_json(const uint8_t rgba[4])
{
    char hex[16];
    if (rgba[3] == 255)
        snprintf(hex, sizeof hex, "#%02x%02x%02x", rgba[0], rgba[1], rgba[2]);
    else
        snprintf(hex, sizeof hex, "#%02x%02x%02x%02x", rgba[0], rgba[1], rgba[2], rgba[3]);
    return json_string(hex);
}

/* A material map's legend: every named material, unnamed labels that occur, and holes. */
typedef struct layer_legend {
    uint8_t colors[256][4];
    const char *keywords[256];
    uint64_t samples[256];
    char names[256][48]; /* "layer N" for labels without a name */
    trn_legend_entry entries[256];
    uint8_t label_of[256]; /* entries[k] is label label_of[k] */
    size_t count;
} layer_legend;

static void build_legend(const trn_labels *labels, layer_legend *lg)
{
    memset(lg, 0, sizeof *lg);
    trn_render_layer_colors(labels, lg->colors, lg->keywords);
    const size_t n = ((size_t)labels->cells_x + 1) * ((size_t)labels->cells_z + 1);
    for (size_t k = 0; k < n; k++)
        lg->samples[labels->values[k]]++;
    for (uint32_t v = 0; v < 256; v++) {
        bool named = v < labels->name_count && v != TRN_LABEL_NONE && labels->names;
        if (!named && !lg->samples[v]) continue;
        if (v == TRN_LABEL_NONE) {
            snprintf(lg->names[v], sizeof lg->names[v], "hole");
        } else if (!named) {
            snprintf(lg->names[v], sizeof lg->names[v], "layer %u", v);
        } else {
            /* A name given to an earlier label too gets its index: "sand #4". */
            for (uint32_t u = 0; u < v; u++)
                if (strcmp(labels->names[u], labels->names[v]) == 0) {
                    snprintf(lg->names[v], sizeof lg->names[v], "%.32s #%u", labels->names[v], v);
                    break;
                }
        }
        lg->entries[lg->count].text = lg->names[v][0] ? lg->names[v] : labels->names[v];
        memcpy(lg->entries[lg->count].rgba, lg->colors[v], 4);
        lg->label_of[lg->count] = (uint8_t)v;
        lg->count++;
    }
}

static json_t *legend_json(const trn_labels *labels, const layer_legend *lg, json_t **layers)
{
    json_t *legend = json_object();
    *layers = json_array();
    for (size_t k = 0; k < lg->count; k++) {
        const uint8_t v = lg->label_of[k];
        const char *name = lg->names[v][0] ? lg->names[v] : labels->names[v];
        json_t *key = cli_json_string(name);
        json_object_set_new(legend, json_string_value(key), color_json(lg->colors[v]));
        json_t *o = json_object();
        json_object_set_new(o, "index", json_integer(v));
        json_object_set_new(o, "name",
                            v < labels->name_count && v != TRN_LABEL_NONE
                                ? cli_json_string(labels->names[v])
                                : json_string(lg->names[v]));
        json_object_set_new(o, "legend", key);
        json_object_set_new(o, "color", color_json(lg->colors[v]));
        json_object_set_new(o, "keyword",
                            lg->keywords[v] ? json_string(lg->keywords[v]) : json_null());
        json_object_set_new(o, "samples", json_integer((json_int_t)lg->samples[v]));
        json_array_append_new(*layers, o);
    }
    return legend;
}

static const char *const match_names[] = {"interpolate", "exact", "nearest"};

/* Generate the recipe at path into t (its field) and gen (its water). */
static int load_recipe(cli_ctx *ctx, const char *path, cli_terrain *t, trn_generated *gen)
{
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_error e;
    if (trn_recipe_read_source(path, &recipe, NULL, &e)) return cli_fail(ctx, &e);
    trn_generate_options go = {
        .threads = 0, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    trn_status st = cli_recipe_generate(path, &recipe, &go, gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_recipe_dispose(&recipe);
    if (st) return cli_fail(ctx, &e);
    memset(t, 0, sizeof *t);
    t->field = gen->field; /* moved: t owns the heights now, gen keeps its water */
    memset(&gen->field, 0, sizeof gen->field);
    snprintf(t->format, sizeof t->format, "recipe");
    return CLI_EXIT_OK;
}

int cli_verb_render(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *table_path = NULL;
    render_mode mode = MODE_HILLSHADE;
    bool legend = true, match_given = false, no_water = false;
    const char *mode_only = NULL; /* an option that belongs to one mode, for the check below */
    render_mode mode_of_option = MODE_HILLSHADE;
    cli_load_options load;
    memset(&load, 0, sizeof load);
    trn_render_options ro;
    trn_render_options_default(&ro);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--no-water") == 0) {
            no_water = true;
            continue;
        }
        /* Flags. */
        static const struct {
            const char *name;
            render_mode mode; /* the mode it belongs to; MODE_HILLSHADE: any shading mode */
        } flags[] = {{"--multidirectional", MODE_HILLSHADE},
                     {"--no-edges", MODE_HILLSHADE},
                     {"--zero-for-flat", MODE_ASPECT},
                     {"--trigonometric", MODE_ASPECT},
                     {"--alpha", MODE_RELIEF},
                     {"--exact-color-entry", MODE_RELIEF},
                     {"--exact-colour-entry", MODE_RELIEF},
                     {"--nearest-color-entry", MODE_RELIEF},
                     {"--nearest-colour-entry", MODE_RELIEF},
                     {"--no-legend", MODE_LAYERS}};
        size_t f = 0;
        while (f < sizeof flags / sizeof flags[0] && strcmp(a, flags[f].name) != 0)
            f++;
        if (f < sizeof flags / sizeof flags[0]) {
            if (f >= 2) {
                mode_only = flags[f].name;
                mode_of_option = flags[f].mode;
            }
            if (f == 0) ro.multidirectional = true;
            if (f == 1) ro.compute_edges = false;
            if (f == 2) ro.zero_for_flat = true;
            if (f == 3) ro.trigonometric = true;
            if (f == 4) ro.color_alpha = true;
            if (f >= 5 && f <= 8) {
                trn_color_match m = f <= 6 ? TRN_COLOR_EXACT : TRN_COLOR_NEAREST;
                if (match_given && ro.color_match != m)
                    return cli_usage_error(ctx, "--exact-color-entry and --nearest-color-entry "
                                                "exclude each other");
                ro.color_match = m;
                match_given = true;
            }
            if (f == 9) legend = false;
            continue;
        }
        const char *v = NULL;
        if (a[0] == '-' && a[1]) {
            static const char *const names[] = {
                "-o",         "--output", "--mode",         "--azimuth",     "--altitude",
                "--z-factor", "--scale",  "--height-range", "--color-table", "--colour-table",
                NULL};
            if (!cli_known_option(ctx, a, names)) return CLI_EXIT_USAGE;
            v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
        }
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (out)
                return cli_usage_error(ctx, "the output is given twice ('%s' and '%s')", out, v);
            out = v;
        } else if (strcmp(a, "--mode") == 0) {
            if (!parse_mode(v, &mode))
                return cli_usage_error(ctx,
                                       "--mode takes hillshade, height, slope, aspect, "
                                       "colour-relief (color-relief) or layers, not '%s'",
                                       v);
        } else if (strcmp(a, "--color-table") == 0 || strcmp(a, "--colour-table") == 0) {
            table_path = v;
        } else if (strcmp(a, "--azimuth") == 0) {
            if (!cli_parse_double(ctx, a, v, &ro.azimuth)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--altitude") == 0) {
            if (!cli_parse_double(ctx, a, v, &ro.altitude)) return CLI_EXIT_USAGE;
            if (ro.altitude < 0 || ro.altitude > 90)
                return cli_usage_error(ctx, "--altitude must be 0 to 90 degrees, not %g",
                                       ro.altitude);
        } else if (strcmp(a, "--z-factor") == 0) {
            if (!cli_parse_double(ctx, a, v, &ro.z_factor)) return CLI_EXIT_USAGE;
            if (ro.z_factor <= 0) return cli_usage_error(ctx, "--z-factor must be positive");
        } else if (strcmp(a, "--scale") == 0) {
            if (!cli_parse_double(ctx, a, v, &ro.scale)) return CLI_EXIT_USAGE;
            if (ro.scale <= 0) return cli_usage_error(ctx, "--scale must be positive");
        } else if (strcmp(a, "--height-range") == 0) {
            if (!parse_range(ctx, v, &ro.height_min, &ro.height_max)) return CLI_EXIT_USAGE;
        } else if ((c = cli_load_option(ctx, a, v, &load)) != 0) {
            if (c < 0) return CLI_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a; /* GDAL-style positional output also works */
        } else {
            return cli_usage_error(ctx, "takes one input and one output; unexpected '%s'", a);
        }
    }
    if (!in) return cli_usage_error(ctx, "needs an input file");
    if (!out) return cli_usage_error(ctx, "needs an output picture: -o OUT.png");
    if (!has_png_extension(out))
        return cli_usage_error(ctx, "render writes PNG pictures; name the output .png, not '%s'",
                               out);
    if (mode_only && mode != mode_of_option)
        return cli_usage_error(ctx, "%s is for --mode %s, not %s", mode_only,
                               mode_names[mode_of_option], mode_names[mode]);
    if (mode == MODE_RELIEF && !table_path)
        return cli_usage_error(ctx, "--mode colour-relief needs --color-table FILE (lines "
                                    "'HEIGHT R G B [A]')");
    if (mode != MODE_RELIEF && table_path)
        return cli_usage_error(ctx, "--color-table is for --mode colour-relief, not %s",
                               mode_names[mode]);
    int rc = cli_input(ctx, in);
    if (rc) return rc;
    if (table_path && (rc = cli_input(ctx, table_path))) return rc;
    const char *out_file = cli_output(ctx, out);
    if (!out_file) return CLI_EXIT_FAIL;

    trn_error e;
    trn_color_table table = {NULL, 0};
    if (table_path && trn_color_table_read(cli_input_path(table_path), &table, &e))
        return cli_fail(ctx, &e);
    cli_terrain t;
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    const bool recipe = cli_is_recipe(cli_input_path(in));
    if (recipe && mode == MODE_LAYERS) {
        trn_color_table_dispose(&table);
        return cli_failf(ctx,
                         "%s is a recipe: it has no material layers to draw ('terrane generate "
                         "%s --biomes OUT.png' draws its biomes)",
                         in, in);
    }
    if (no_water && !recipe) {
        trn_color_table_dispose(&table);
        return cli_usage_error(ctx, "--no-water is for recipes, which publish water; %s is not one",
                               in);
    }
    rc = recipe ? load_recipe(ctx, cli_input_path(in), &t, &gen)
                : cli_load_terrain(ctx, in, &load, &t);
    if (rc) {
        trn_color_table_dispose(&table);
        return rc;
    }
    trn_raster8 pic = {0, 0, 0, NULL};
    layer_legend *lg = NULL;
    trn_status st = TRN_OK;
    switch (mode) {
    case MODE_HILLSHADE:
        st = trn_render_hillshade(&t.field, &ro, &pic, cli_progress, ctx, &e);
        break;
    case MODE_SLOPE:
        st = trn_render_slope(&t.field, &ro, &pic, cli_progress, ctx, &e);
        break;
    case MODE_HEIGHT:
        st = trn_render_height(&t.field, &ro, &pic, cli_progress, ctx, &e);
        break;
    case MODE_ASPECT:
        st = trn_render_aspect(&t.field, &ro, &pic, cli_progress, ctx, &e);
        break;
    case MODE_RELIEF:
        st = trn_render_color_relief(&t.field, &table, &ro, &pic, cli_progress, ctx, &e);
        break;
    case MODE_LAYERS:
        if (!t.has_labels) {
            rc = cli_failf(ctx,
                           "%s (%s) has no material layers to draw; --mode layers needs a "
                           "BeamNG/Torque .ter or a Unity TerrainData (use --mode hillshade, "
                           "height, slope, aspect or colour-relief)",
                           in, t.format);
            cli_terrain_dispose(&t);
            return rc;
        }
        lg = malloc(sizeof *lg);
        if (!lg) {
            st = trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            break;
        }
        build_legend(&t.labels, lg);
        st = trn_render_layers(&t.labels, &pic, cli_progress, ctx, &e);
        if (st == TRN_OK && legend) {
            trn_raster8 framed;
            st = trn_render_legend(&pic, lg->entries, lg->count, &framed, &e);
            if (st == TRN_OK) {
                trn_raster8_dispose(&pic);
                pic = framed;
            }
        }
        break;
    }
    trn_color_table_dispose(&table);
    /* A recipe's published water over its picture. */
    const bool water = recipe && !no_water && gen.has_water;
    if (!st && water) st = trn_render_water_overlay(&pic, &t.field, &gen.water, &e);
    trn_generated_dispose(&gen);
    if (st) {
        free(lg);
        trn_raster8_dispose(&pic);
        cli_terrain_dispose(&t);
        return cli_fail(ctx, &e);
    }
    trn_image img;
    memset(&img, 0, sizeof img);
    img.width = pic.width;
    img.height = pic.height;
    img.channels = pic.channels;
    img.bit_depth = 8;
    img.data = pic.pixels;
    trn_png_options po;
    trn_png_options_default(&po);
    st = trn_png_write(out_file, &img, &po, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    rc = st ? cli_fail(ctx, &e) : cli_commit(ctx);
    if (rc) {
        free(lg);
        trn_raster8_dispose(&pic);
        cli_terrain_dispose(&t);
        return rc;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "input_format", cli_json_string(t.format));
        json_object_set_new(o, "output", cli_json_string(out));
        json_object_set_new(o, "mode", cli_json_string(mode_names[mode]));
        json_object_set_new(o, "grid",
                            json_pack("[II]", (json_int_t)(pic.width), (json_int_t)(pic.height)));
        json_object_set_new(o, "channels", json_integer(pic.channels));
        if (recipe) json_object_set_new(o, "water_drawn", json_boolean(water));
        if (mode == MODE_HILLSHADE) {
            json_object_set_new(o, "multidirectional", json_boolean(ro.multidirectional));
            if (!ro.multidirectional) json_object_set_new(o, "azimuth", json_real(ro.azimuth));
            json_object_set_new(o, "altitude", json_real(ro.altitude));
        }
        if (mode == MODE_HILLSHADE || mode == MODE_SLOPE) {
            json_object_set_new(o, "z_factor", json_real(ro.z_factor));
            json_object_set_new(o, "scale", json_real(ro.scale));
            json_object_set_new(o, "cell_size",
                                json_pack("[ff]", t.field.size_x / t.field.cells_x,
                                          t.field.size_z / t.field.cells_z));
        }
        if (mode == MODE_ASPECT) {
            json_object_set_new(o, "zero_for_flat", json_boolean(ro.zero_for_flat));
            json_object_set_new(o, "trigonometric", json_boolean(ro.trigonometric));
            json_object_set_new(o, "byte_formula",
                                json_string("1 + degrees * 254 / 360, rounded; 0 = no "
                                            "aspect"));
        }
        if (mode == MODE_RELIEF) {
            json_object_set_new(o, "color_table", cli_json_string(table_path));
            json_object_set_new(o, "color_match", json_string(match_names[ro.color_match]));
            json_object_set_new(o, "color_alpha", json_boolean(ro.color_alpha));
        }
        if (mode == MODE_LAYERS) {
            json_t *layers = NULL;
            json_object_set_new(o, "legend", legend_json(&t.labels, lg, &layers));
            json_object_set_new(o, "materials", layers);
            json_object_set_new(o, "legend_drawn", json_boolean(legend));
            json_object_set_new(o, "map_width", json_integer(t.labels.cells_x + 1));
            json_object_set_new(o, "map_height", json_integer(t.labels.cells_z + 1));
        }
        cli_print_json(o);
    } else {
        cli_note(ctx, "wrote %s (%s%s, %u x %u)", out, mode_names[mode],
                 water ? " with the recipe's water" : "", pic.width, pic.height);
    }
    free(lg);
    trn_raster8_dispose(&pic);
    cli_terrain_dispose(&t);
    return CLI_EXIT_OK;
}
