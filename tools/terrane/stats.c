/* terrane stats: realism statistics of any terrain, with the ranges real land gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "detect.h"
#include "stats_verb.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "terrane/stats.h"
#include "fmt_document.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane stats INPUT [--format json] [--channel-area A] [--fit-range MIN,MAX]\n"
    "       [--depression-tolerance T] [--resolution CXxCZ] [--quiet]\n"
    "\n"
    "Measure a terrain with standard geomorphometry, to hold it against real land: relief,\n"
    "mean, standard deviation and hypsometric integral (Strahler 1952); slope percentiles in\n"
    "degrees (Horn's gradient); the share of the ground in closed depressions of a plain\n"
    "priority-flood fill (Barnes et al. 2014), their number and the share deeper than 1 m;\n"
    "the exponent b of the drainage-area exceedance P(A >= a) ~ a^-b (D8 flow on the filled\n"
    "surface; Rodriguez-Iturbe and Rinaldo, 'Fractal River Basins') and the drainage density;\n"
    "the slope of the radially averaged power spectrum (Perron et al. 2008); and two grid\n"
    "fingerprints: slopes facing multiples of 45 degrees against chance, and the strongest\n"
    "curvature repeating with the column or row index against shuffles of itself. Each\n"
    "figure is printed with its unit and the range real land gives (docs/stats.md explains\n"
    "them).\n"
    "\n"
    "INPUT is any file terrane reads ('terrane formats'), detected from its content, or a\n"
    "terrain recipe (NAME.json), which is generated first. A GeoTIFF's cells are metres (a\n"
    "geographic DEM's degrees converted at its centre latitude); its NoData samples, and\n"
    "an R32's NaN and infinite ones, are left out of every figure (counted), not filled.\n"
    "\n"
    "options:\n"
    "  --channel-area A         a channel drains at least A square world units (metres for\n"
    "                           a DEM); default 100 cells\n"
    "  --fit-range MIN,MAX      the drainage areas, in cells, the exponent b is fitted over\n"
    "                           (default 10 and 1% of the valid samples)\n"
    "  --depression-tolerance T metres the fill must raise a sample to count it as in a\n"
    "                           depression (default 0.001)\n"
    "  --resolution CXxCZ       generate a recipe at another grid over the same world\n"
    "                           (cells), as 'terrane generate --resolution' does\n"
    "  --max-height M           BeamNG maxHeight for .ter (default 2048)\n"
    "  --square-size S          metres per sample step of files that do not say (default 1)\n"
    "  --size WxH, --raw-type T, --input-format F, --max-samples N, --channel C\n"
    "                           reading options, as for 'terrane info'\n"
    "  --format json            every figure with its name, value, unit, reference range and\n"
    "                           fit range and R^2 as JSON on stdout\n"
    "  -q, --quiet              no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane stats dem.tif\n"
    "  terrane stats valley.json --format json\n"
    "  terrane stats theTerrain.ter --max-height 512 --square-size 2 --channel-area 20000\n";

static int load_recipe(cli_ctx *ctx, const char *in, uint32_t cells_x, uint32_t cells_z,
                       cli_terrain *t)
{
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_error e;
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    if (trn_recipe_read_source(cli_input_path(in), &recipe, &kind, &e)) return cli_fail(ctx, &e);
    /* Another grid over the same world: hand edits keep their places, as generate's
     * --resolution --keep-edits does. */
    if (cells_x && trn_recipe_change_grid(&recipe, recipe.size_x, recipe.size_z, cells_x, cells_z,
                                          TRN_EDITS_KEEP, &e)) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    int rc = cli_graph_gate(ctx, "stats", in, &recipe, kind);
    if (rc) {
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.quality = TRN_EROSION_FINAL;
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    trn_status st = cli_recipe_generate(cli_input_path(in), &recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_recipe_dispose(&recipe);
    if (st) return cli_fail(ctx, &e);
    memset(t, 0, sizeof *t);
    t->field = gen.field; /* moved: t owns the heights now */
    memset(&gen.field, 0, sizeof gen.field);
    trn_generated_dispose(&gen);
    snprintf(t->format, sizeof t->format, "recipe");
    return CLI_EXIT_OK;
}

/* A GeoTIFF with its NoData kept as NaN (the common loader fills it, which would add smooth
 * made-up ground to every figure). */
static int load_dem(cli_ctx *ctx, const char *in, const cli_load_options *opt, cli_terrain *t)
{
    trn_geotiff_limits lim;
    trn_geotiff_limits_default(&lim);
    if (opt->max_samples) lim.max_samples = opt->max_samples;
    trn_geotiff dem;
    trn_error e;
    if (trn_geotiff_read(cli_input_path(in), &lim, &dem, cli_progress, ctx, &e)) {
        cli_progress_end(ctx);
        return cli_fail(ctx, &e);
    }
    cli_progress_end(ctx);
    const trn_geotiff_georef *g = &dem.info.georef;
    if (!g->has_transform)
        cli_note(ctx, "%s: no georeferencing; using 1 m per pixel", in);
    else if (!g->units_known)
        cli_note(ctx, "%s: units not understood; read as metres", in);
    memset(t, 0, sizeof *t);
    snprintf(t->format, sizeof t->format, "geotiff");
    trn_status st = trn_geotiff_to_field(&dem, &t->field, &e);
    trn_geotiff_dispose(&dem);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

/* A float raster (R32) with its NaN and infinite samples kept as no data; *is_float false
 * (nothing loaded) for 8- and 16-bit images, which the common loader reads. */
static int load_float_raster(cli_ctx *ctx, const char *in, cli_format format,
                             const cli_load_options *opt, cli_terrain *t, bool *is_float)
{
    *is_float = false;
    trn_image img;
    int rc = cli_read_image(ctx, in, format, opt, &img);
    if (rc) return rc;
    if (img.bit_depth != 32) {
        trn_image_dispose(&img);
        return CLI_EXIT_OK;
    }
    *is_float = true;
    rc = cli_image_select_channel(ctx, in, opt, false, &img);
    if (rc) {
        trn_image_dispose(&img);
        return rc;
    }
    memset(t, 0, sizeof *t);
    snprintf(t->format, sizeof t->format, "%s", cli_format_name(format));
    trn_error e;
    const double square = opt->square_size > 0 ? opt->square_size : 1.0;
    trn_status st = trn_image_to_field(&img, 0, 1.0, 0.0, square, &t->field, &e);
    trn_image_dispose(&img);
    if (st) return cli_fail(ctx, &e);
    const size_t n = trn_field_sample_count(&t->field);
    for (size_t k = 0; k < n; k++)
        if (!isfinite(t->field.heights[k])) t->field.heights[k] = NAN;
    return CLI_EXIT_OK;
}

static bool parse_fit_range(cli_ctx *ctx, const char *text, double *lo, double *hi)
{
    char *end;
    *lo = strtod(text, &end);
    if (end == text || *end != ',') goto bad;
    const char *second = end + 1;
    *hi = strtod(second, &end);
    if (end == second || *end != '\0' || !isfinite(*lo) || !isfinite(*hi) || !(*lo >= 1) ||
        !(*hi > *lo))
        goto bad;
    return true;
bad:
    cli_usage_error(ctx, "--fit-range expects MIN,MAX in cells with 1 <= MIN < MAX, got '%s'",
                    text);
    return false;
}

/* One printed figure. */
typedef struct figure {
    const char *group, *name, *label, *unit;
    double value;
    const char *reference; /* what real land gives, in words */
    const trn_stats_fit *fit;
    const char *fit_unit;
} figure;

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int cli_verb_stats(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL;
    cli_load_options load;
    memset(&load, 0, sizeof load);
    trn_stats_options so;
    trn_stats_options_default(&so);
    uint32_t cells_x = 0, cells_z = 0; /* --resolution: 0 = the recipe's grid */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        const char *v = NULL;
        if (a[0] == '-' && a[1]) {
            static const char *const names[] = {"--channel-area", "--fit-range",
                                                "--depression-tolerance", "--resolution",
                                                NULL};
            if (!cli_known_option(ctx, a, names)) return CLI_EXIT_USAGE;
            v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
        }
        if (strcmp(a, "--channel-area") == 0) {
            if (!cli_parse_positive(ctx, a, v, &so.channel_area)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--resolution") == 0) {
            if (!cli_parse_size(ctx, a, v, &cells_x, &cells_z)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--fit-range") == 0) {
            if (!parse_fit_range(ctx, v, &so.fit_min_cells, &so.fit_max_cells))
                return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--depression-tolerance") == 0) {
            if (!cli_parse_double(ctx, a, v, &so.depression_tolerance)) return CLI_EXIT_USAGE;
            if (so.depression_tolerance < 0)
                return cli_usage_error(ctx,
                                       "--depression-tolerance must be 0 or more metres, "
                                       "not %s",
                                       v);
        } else if ((c = cli_load_option(ctx, a, v, &load)) != 0) {
            if (c < 0) return CLI_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else {
            return cli_usage_error(ctx, "takes one input; unexpected '%s'", a);
        }
    }
    if (!in) return cli_usage_error(ctx, "needs an input terrain");
    int rc = cli_input(ctx, in);
    if (rc) return rc;

    cli_terrain t;
    memset(&t, 0, sizeof t);
    const bool recipe = cli_is_recipe(cli_input_path(in));
    if (cells_x && !recipe)
        return cli_usage_error(ctx,
                               "--resolution only applies to a recipe; '%s' is a heightfield "
                               "(resample it with 'terrane convert --size')",
                               in);
    if (recipe) {
        rc = load_recipe(ctx, in, cells_x, cells_z, &t);
    } else {
        cli_format format = CLI_FORMAT_UNKNOWN;
        rc = cli_sniff_input(ctx, in, &load, &format);
        bool done = false;
        if (!rc && format == CLI_FORMAT_GEOTIFF) {
            rc = load_dem(ctx, in, &load, &t);
            done = true;
        } else if (!rc && (format == CLI_FORMAT_RAW || format == CLI_FORMAT_PNG)) {
            rc = load_float_raster(ctx, in, format, &load, &t, &done);
        }
        if (!rc && !done) rc = cli_load_terrain(ctx, in, &load, &t);
    }
    if (rc) {
        cli_terrain_dispose(&t);
        return rc;
    }
    trn_terrain_stats s;
    trn_error e;
    trn_status st = trn_terrain_stats_compute(&t.field, &so, &s, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        cli_terrain_dispose(&t);
        return cli_fail(ctx, &e);
    }

    const double km = 1000.0;
    const figure figs[] = {
        {"heights", "relief", "relief (max - min)", "m", s.relief, "any: the area's", NULL, NULL},
        {"heights", "min", "lowest", "m", s.min, "-", NULL, NULL},
        {"heights", "max", "highest", "m", s.max, "-", NULL, NULL},
        {"heights", "mean", "mean height", "m", s.mean, "-", NULL, NULL},
        {"heights", "std_dev", "standard deviation", "m", s.std_dev, "-", NULL, NULL},
        {"heights", "hypsometric_integral", "hypsometric integral", "", s.hypsometric_integral,
         "0.2-0.6 (Strahler: < 0.35 old, > 0.6 young)", NULL, NULL},
        {"slope", "slope_p10", "slope 10th percentile", "deg", s.slope_p10, "-", NULL, NULL},
        {"slope", "slope_p25", "slope 25th percentile", "deg", s.slope_p25, "-", NULL, NULL},
        {"slope", "slope_median", "slope median", "deg", s.slope_median,
         "mountains 15-35 at 30 m cells, less on coarser cells", NULL, NULL},
        {"slope", "slope_p75", "slope 75th percentile", "deg", s.slope_p75, "-", NULL, NULL},
        {"slope", "slope_p90", "slope 90th percentile", "deg", s.slope_p90,
         "rarely above 45 on real slopes", NULL, NULL},
        {"slope", "slope_mean", "slope mean", "deg", s.slope_mean, "-", NULL, NULL},
        {"depressions", "depression_fraction", "area in closed depressions", "fraction",
         s.depression_fraction, "0.01-0.05 (flats, lakes, DEM noise)", NULL, NULL},
        {"depressions", "depression_count", "closed depressions", "count",
         (double)s.depression_count, "-", NULL, NULL},
        {"depressions", "deep_depression_fraction", "area in depressions deeper than 1 m",
         "fraction", s.deep_depression_fraction, "below 0.02 outside karst and lake land", NULL,
         NULL},
        {"depressions", "max_depression_depth", "deepest depression", "m", s.max_depression_depth,
         "-", NULL, NULL},
        {"drainage", "area_exponent", "drainage-area exponent b", "", s.area_exponent,
         "0.43-0.5 (river networks; coarse DEMs steeper)", &s.area_fit, "cells"},
        {"drainage", "max_accumulation", "largest drainage area", "cells",
         (double)s.max_accumulation, "-", NULL, NULL},
        {"drainage", "drainage_density", "drainage density", "1/km", s.drainage_density * km,
         "1-100 (mapped networks; compare at one --channel-area)", NULL, NULL},
        {"spectrum", "spectral_slope", "power spectrum slope", "", s.spectral_slope,
         "-2 to -3.5 (Perron et al. 2008)", &s.spectrum_fit, "cycles/m"},
        {"fingerprints", "axis45_ratio", "slopes facing multiples of 45 deg", "x chance",
         s.axis45_ratio, "0.96-1.04 (chance 1; grid-locked land 1.1-1.5)", NULL, NULL},
        {"fingerprints", "axis_share", "slopes facing the grid axes", "fraction", s.axis_share,
         "0.10-0.12 (chance 0.111)", NULL, NULL},
        {"fingerprints", "periodic_curvature_ratio", "strongest periodic curvature",
         "x shuffled", s.periodic_curvature_ratio, "under 1.5 (creases of an upsampled grid: 4-100)", NULL, NULL},
        {"fingerprints", "periodic_ratio_x", "periodic curvature along x", "x shuffled",
         s.periodic_ratio_x, "-", NULL, NULL},
        {"fingerprints", "periodic_ratio_z", "periodic curvature along z", "x shuffled",
         s.periodic_ratio_z, "-", NULL, NULL},
    };
    const size_t count = sizeof figs / sizeof figs[0];
    const double channel_area = s.channel_cells * s.cell_x * s.cell_z;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "input_format", cli_json_string(t.format));
        json_object_set_new(o, "cells",
                            json_pack("[ii]", (int)t.field.cells_x, (int)t.field.cells_z));
        json_object_set_new(o, "cell_size", json_pack("[ff]", s.cell_x, s.cell_z));
        json_object_set_new(o, "samples", json_integer((json_int_t)s.samples));
        json_object_set_new(o, "valid_samples", json_integer((json_int_t)s.valid_samples));
        json_object_set_new(o, "nodata_samples", json_integer((json_int_t)s.nodata_samples));
        json_object_set_new(o, "depression_tolerance", json_real(s.depression_tolerance));
        json_object_set_new(o, "channel_cells", json_real(s.channel_cells));
        json_object_set_new(o, "channel_area", json_real(channel_area));
        json_object_set_new(o, "spectrum_window",
                            json_pack("[ii]", (int)s.spectrum_x, (int)s.spectrum_z));
        json_object_set_new(o, "aspect_min_slope", number_or_null(s.aspect_min_slope));
        json_object_set_new(o, "aspect_samples", json_integer((json_int_t)s.aspect_samples));
        const char axis[2] = {s.periodic_axis, 0};
        json_object_set_new(o, "periodic_axis", s.periodic_axis ? json_string(axis) : json_null());
        json_object_set_new(o, "periodic_period_x", number_or_null(s.periodic_period_x));
        json_object_set_new(o, "periodic_period_z", number_or_null(s.periodic_period_z));
        json_t *list = json_array();
        for (size_t k = 0; k < count; k++) {
            const figure *f = &figs[k];
            json_t *x = json_object();
            json_object_set_new(x, "name", json_string(f->name));
            json_object_set_new(x, "group", json_string(f->group));
            json_object_set_new(x, "label", json_string(f->label));
            json_object_set_new(x, "value", number_or_null(f->value));
            json_object_set_new(x, "unit", json_string(f->unit));
            json_object_set_new(x, "reference", json_string(f->reference));
            if (f->fit) {
                json_t *fit = json_object();
                json_object_set_new(fit, "range",
                                    json_pack("[oo]", number_or_null(f->fit->range_min),
                                              number_or_null(f->fit->range_max)));
                json_object_set_new(fit, "range_unit", json_string(f->fit_unit));
                json_object_set_new(fit, "r2", number_or_null(f->fit->r2));
                json_object_set_new(fit, "points", json_integer(f->fit->points));
                json_object_set_new(fit, "intercept", number_or_null(f->fit->intercept));
                json_object_set_new(x, "fit", fit);
            }
            json_array_append_new(list, x);
        }
        json_object_set_new(o, "figures", list);
        cli_print_json(o);
    } else {
        cli_printf("%s: %s, %u x %u cells of %.6g x %.6g m", in, t.format, t.field.cells_x,
                   t.field.cells_z, s.cell_x, s.cell_z);
        if (s.nodata_samples)
            cli_printf(", %llu of %llu samples no data (left out)",
                       (unsigned long long)s.nodata_samples, (unsigned long long)s.samples);
        cli_printf("\n\n%-38s %14s  %-8s  %s\n", "figure", "value", "unit", "real land");
        const char *group = "";
        for (size_t k = 0; k < count; k++) {
            const figure *f = &figs[k];
            if (strcmp(group, f->group) != 0) {
                group = f->group;
                cli_printf("%s\n", group);
            }
            char value[32];
            if (!isfinite(f->value))
                snprintf(value, sizeof value, "n/a");
            else if (strcmp(f->unit, "count") == 0 || strcmp(f->unit, "cells") == 0)
                snprintf(value, sizeof value, "%.0f", f->value);
            else if (strcmp(f->unit, "fraction") == 0)
                snprintf(value, sizeof value, "%.4f", f->value);
            else
                snprintf(value, sizeof value, "%.3f", f->value);
            cli_printf("  %-36s %14s  %-8s  %s\n", f->label, value, f->unit, f->reference);
        }
        cli_printf("\nfits:\n");
        cli_printf("  b: log10 P(A >= a) on log10 a over a = %.6g..%.6g cells: %u points, "
                   "R^2 %.3f\n",
                   s.area_fit.range_min, s.area_fit.range_max, s.area_fit.points, s.area_fit.r2);
        cli_printf("  spectrum: %u x %u window, wavelengths %.6g..%.6g m: %u bins, R^2 %.3f\n",
                   s.spectrum_x, s.spectrum_z, 1.0 / s.spectrum_fit.range_max,
                   1.0 / s.spectrum_fit.range_min, s.spectrum_fit.points, s.spectrum_fit.r2);
        cli_printf("  channels: drain at least %.6g cells (%.6g m^2); depressions: raised "
                   "more than %.6g m\n",
                   s.channel_cells, channel_area, s.depression_tolerance);
        cli_printf("  aspects: %llu samples at least %.6g deg steep; periodic curvature: ",
                   (unsigned long long)s.aspect_samples, s.aspect_min_slope);
        if (isnan(s.periodic_period_x) && isnan(s.periodic_period_z))
            cli_printf("none (fewer than 16 interior columns and rows)\n");
        else
            cli_printf("strongest at a period of %.3g samples along x, %.3g along z (nan: too "
                       "few on that axis)\n",
                       s.periodic_period_x, s.periodic_period_z);
    }
    cli_terrain_dispose(&t);
    return CLI_EXIT_OK;
}
