/* terrane render: draw a hillshade, height, slope or layer picture of a terrain as PNG. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "detect.h"
#include "terrane/image.h"
#include "terrane/render.h"

static const char *const help_text =
    "usage: terrane render IN -o OUT.png [--mode hillshade|height|slope|layers] [options]\n"
    "\n"
    "Draw a picture of a terrain, north up (the terrain's far edge, z = max, at the top). IN is\n"
    "any file terrane reads (BeamNG/Torque .ter, Terragen .ter, PNG, .r16/.raw/.r32), detected\n"
    "from its content.\n"
    "\n"
    "modes:\n"
    "  hillshade  grey shaded relief computed exactly as 'gdaldem hillshade -compute_edges'\n"
    "             (Horn's gradient; 1 + 254 * cos of the light angle, 1 in shadow). Default.\n"
    "  height     grey heights, lowest black to highest white (or --height-range)\n"
    "  slope      grey slope, 0 degrees black to 90 degrees white (Horn, as gdaldem slope)\n"
    "  layers     RGBA material layers in a fixed 32-colour palette; holes transparent\n"
    "             (needs a file with layers: a BeamNG/Torque .ter)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT.png  the picture to write (replaced atomically)\n"
    "  --mode M              hillshade, height, slope or layers (default hillshade)\n"
    "  --azimuth A           light direction, degrees clockwise from north (default 315)\n"
    "  --altitude A          light height above the horizon, 0-90 degrees (default 45)\n"
    "  --z-factor Z          vertical exaggeration (default 1), as gdaldem -z\n"
    "  --scale S             horizontal units per vertical unit (default 1), as gdaldem -s\n"
    "  --multidirectional    light from 225, 270, 315 and 360 degrees, as gdaldem\n"
    "  --no-edges            leave the border pixels 0 (nodata), as gdaldem does by default\n"
    "  --height-range LO,HI  heights drawn black and white in height mode (default: min,max)\n"
    "  --max-height M        BeamNG maxHeight: metres of the 16-bit range (default 2048)\n"
    "  --square-size S       metres per sample step (default 1): the cell size of the shading\n"
    "  --size WxH            size of a headerless input (default: a square from its length)\n"
    "  --raw-type T          headerless input type: r16le, r16be, u8, r32\n"
    "  --format json         print what was written as JSON\n"
    "  -q, --quiet           no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane render theTerrain.ter -o hillshade.png\n"
    "  terrane render theTerrain.ter -o shade.png --max-height 512 --square-size 2 --z-factor 3\n"
    "  terrane render theTerrain.ter -o layers.png --mode layers\n"
    "  terrane render heightmap.png -o slope.png --mode slope --square-size 0.5\n"
    "  terrane render RealisticTerrain.ter -o relief.png --multidirectional\n";

typedef enum render_mode { MODE_HILLSHADE, MODE_HEIGHT, MODE_SLOPE, MODE_LAYERS } render_mode;

static const char *const mode_names[] = {"hillshade", "height", "slope", "layers"};

static bool parse_mode(const char *text, render_mode *mode)
{
    for (int k = 0; k < 4; k++)
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

int cli_verb_render(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    render_mode mode = MODE_HILLSHADE;
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
        if (strcmp(a, "--multidirectional") == 0) {
            ro.multidirectional = true;
            continue;
        }
        if (strcmp(a, "--no-edges") == 0) {
            ro.compute_edges = false;
            continue;
        }
        const char *v = NULL;
        if (a[0] == '-' && a[1]) {
            static const char *const names[] = {"-o",        "--output",       "--mode",
                                                "--azimuth", "--altitude",     "--z-factor",
                                                "--scale",   "--height-range", NULL};
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
                                       "--mode takes hillshade, height, slope or layers, "
                                       "not '%s'",
                                       v);
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
    int rc = cli_input(ctx, in);
    if (rc) return rc;
    const char *out_file = cli_output(ctx, out);
    if (!out_file) return CLI_EXIT_FAIL;

    cli_terrain t;
    rc = cli_load_terrain(ctx, in, &load, &t);
    if (rc) return rc;
    trn_raster8 pic = {0, 0, 0, NULL};
    trn_error e;
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
    case MODE_LAYERS:
        if (!t.has_labels) {
            rc = cli_failf(ctx,
                           "%s (%s) has no material layers to draw; --mode layers needs a "
                           "BeamNG/Torque .ter (use --mode hillshade, height or slope)",
                           in, t.format);
            cli_terrain_dispose(&t);
            return rc;
        }
        st = trn_render_layers(&t.labels, &pic, cli_progress, ctx, &e);
        break;
    }
    if (st) {
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
        json_object_set_new(o, "width", json_integer(pic.width));
        json_object_set_new(o, "height", json_integer(pic.height));
        json_object_set_new(o, "channels", json_integer(pic.channels));
        if (mode == MODE_HILLSHADE) {
            json_object_set_new(o, "multidirectional", json_boolean(ro.multidirectional));
            if (!ro.multidirectional) json_object_set_new(o, "azimuth", json_real(ro.azimuth));
            json_object_set_new(o, "altitude", json_real(ro.altitude));
        }
        if (mode == MODE_HILLSHADE || mode == MODE_SLOPE) {
            json_object_set_new(o, "z_factor", json_real(ro.z_factor));
            json_object_set_new(o, "scale", json_real(ro.scale));
            json_object_set_new(o, "cell_size_x", json_real(t.field.size_x / t.field.cells_x));
            json_object_set_new(o, "cell_size_z", json_real(t.field.size_z / t.field.cells_z));
        }
        cli_print_json(o);
    } else {
        cli_note(ctx, "wrote %s (%s, %u x %u)", out, mode_names[mode], pic.width, pic.height);
    }
    trn_raster8_dispose(&pic);
    cli_terrain_dispose(&t);
    return CLI_EXIT_OK;
}
