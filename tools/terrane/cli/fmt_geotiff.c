/* CLI hooks for GeoTIFF DEMs: info, loading, crop/window/resample options, float32 writing. */
#include "fmt_geotiff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "detect.h"
#include "terrane/geotiff.h"

static const char *raster_type_name(uint16_t t)
{
    return t == TRN_GEOTIFF_RASTER_PIXEL_IS_POINT  ? "PixelIsPoint"
           : t == TRN_GEOTIFF_RASTER_PIXEL_IS_AREA ? "PixelIsArea"
                                                   : "PixelIsArea (assumed)";
}

static const char *crs_kind(const trn_geotiff_georef *g)
{
    if (g->geographic) return "geographic";
    if (g->model_type == TRN_GEOTIFF_MODEL_GEOCENTRIC) return "geocentric";
    if (g->model_type == TRN_GEOTIFF_MODEL_PROJECTED || g->projected_epsg) return "projected";
    return "unknown";
}

static void layout_text(const trn_geotiff_info *in, char *buf, size_t size)
{
    if (in->tiled)
        snprintf(buf, size, "tiles of %u x %u", in->tile_width, in->tile_height);
    else
        snprintf(buf, size, "strips of %u row%s", in->rows_per_strip,
                 in->rows_per_strip == 1 ? "" : "s");
}

static void geotiff_limits(const cli_load_options *opt, trn_geotiff_limits *lim)
{
    trn_geotiff_limits_default(lim);
    if (opt && opt->max_samples) lim->max_samples = opt->max_samples;
}

int cli_geotiff_info(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                     const struct cli_scale_options *scale)
{
    trn_geotiff dem;
    trn_error e;
    trn_geotiff_limits lim;
    geotiff_limits(opt, &lim);
    /* The tags first, whatever the size (no pixels are allocated for them); the pixels only
     * when they are within the limits. */
    trn_geotiff_limits header = lim;
    header.max_width = header.max_height = UINT32_MAX;
    header.max_samples = UINT64_MAX;
    memset(&dem, 0, sizeof dem);
    if (trn_geotiff_read_info(cli_input_path(path), &header, &dem.info, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    uint64_t samples = (uint64_t)dem.info.width * dem.info.height;
    bool decoded = samples <= lim.max_samples && dem.info.width <= lim.max_width &&
                   dem.info.height <= lim.max_height;
    char not_read[160] = "";
    if (decoded) {
        if (trn_geotiff_read(cli_input_path(path), &lim, &dem, cli_progress, ctx, &e) != TRN_OK)
            return cli_fail(ctx, &e);
        cli_progress_end(ctx);
    } else if (samples > lim.max_samples) {
        cli_not_read_text(not_read, sizeof not_read, dem.info.width, dem.info.height,
                          lim.max_samples);
    } else {
        snprintf(not_read, sizeof not_read, "%u x %u is more than the limit of %u x %u pixels",
                 dem.info.width, dem.info.height, lim.max_width, lim.max_height);
    }
    const trn_geotiff_info *in = &dem.info;
    const trn_geotiff_georef *g = &in->georef;
    char layout[64];
    layout_text(in, layout, sizeof layout);
    double total = (double)in->width * in->height;
    double vu = g->vertical_unit_metres > 0 ? g->vertical_unit_metres : 1.0;
    /* The levels are counted on the metres the loader makes (values times the vertical unit). */
    if (decoded && vu != 1.0)
        for (size_t k = 0; k < (size_t)samples; k++)
            dem.values[k] = (float)(dem.values[k] * vu);
    const double info_max_height = opt ? opt->max_height : 0;
    int levels_rc = CLI_EXIT_OK;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string("geotiff"));
        json_object_set_new(o, "grid", json_pack("[II]", (json_int_t)(in->width), (json_int_t)(in->height)));
        json_object_set_new(o, "bands", json_integer(in->bands));
        json_object_set_new(o, "band_read", json_integer(1));
        json_object_set_new(o, "sample_type", cli_json_string(trn_geotiff_sample_name(in->sample)));
        json_object_set_new(o, "compression", cli_json_string(in->compression_name));
        json_object_set_new(o, "compression_code", json_integer(in->compression));
        json_object_set_new(o, "predictor", json_integer(in->predictor));
        json_object_set_new(o, "tiled", json_boolean(in->tiled));
        if (in->tiled) {
            json_object_set_new(o, "tile_width", json_integer(in->tile_width));
            json_object_set_new(o, "tile_height", json_integer(in->tile_height));
        } else {
            json_object_set_new(o, "rows_per_strip", json_integer(in->rows_per_strip));
        }
        json_object_set_new(o, "byte_order", cli_json_string(in->big_endian ? "big" : "little"));
        json_object_set_new(o, "bigtiff", json_boolean(in->bigtiff));
        json_object_set_new(o, "georeferenced", json_boolean(g->has_transform));
        if (g->has_geokeys) {
            json_t *crs = json_object();
            json_object_set_new(crs, "epsg", g->epsg ? json_integer(g->epsg) : json_null());
            json_object_set_new(crs, "kind", cli_json_string(crs_kind(g)));
            json_object_set_new(crs, "citation", cli_json_string(g->citation));
            json_object_set_new(crs, "linear_units", json_integer(g->linear_units));
            json_object_set_new(crs, "vertical_units", json_integer(g->vertical_units));
            json_object_set_new(crs, "units_known", json_boolean(g->units_known));
            json_object_set_new(crs, "datum_epsg",
                                g->datum_epsg ? json_integer(g->datum_epsg) : json_null());
            json_object_set_new(crs, "unit_metres", json_real(g->geographic
                                                                  ? 0.0
                                                                  : g->linear_unit_metres));
            json_object_set_new(o, "crs", crs);
        } else {
            json_object_set_new(o, "crs", json_null());
        }
        json_object_set_new(o, "raster_type", cli_json_string(raster_type_name(g->raster_type)));
        if (g->has_transform) {
            json_t *gt = json_array();
            for (int k = 0; k < 6; k++)
                json_array_append_new(gt, json_real(g->transform[k]));
            json_object_set_new(o, "geo_transform", gt);
            json_t *px = json_array();
            json_array_append_new(px, json_real(hypot(g->transform[1], g->transform[4])));
            json_array_append_new(px, json_real(hypot(g->transform[2], g->transform[5])));
            json_object_set_new(o, "pixel_size", px);
            json_t *mpp = json_array();
            json_array_append_new(mpp, json_real(g->metres_per_pixel_x));
            json_array_append_new(mpp, json_real(g->metres_per_pixel_y));
            json_object_set_new(o, "metres_per_pixel", mpp);
            json_t *origin = json_array();
            json_array_append_new(origin, json_real(g->transform[0]));
            json_array_append_new(origin, json_real(g->transform[3]));
            json_object_set_new(o, "origin", origin);
            if (g->geographic)
                json_object_set_new(o, "centre_latitude", json_real(g->centre_latitude));
        }
        json_object_set_new(o, "samples", json_integer((json_int_t)samples));
        json_object_set_new(o, "values_read", json_boolean(decoded));
        if (!decoded) json_object_set_new(o, "not_read", cli_json_string(not_read));
        json_t *nd = json_object();
        if (decoded) {
            json_object_set_new(nd, "source",
                                cli_json_string(trn_geotiff_nodata_source_name(dem.nodata_source)));
            json_object_set_new(
                nd, "value", isnan(dem.nodata_value) ? json_null() : json_real(dem.nodata_value));
        }
        if (in->has_nodata_tag)
            json_object_set_new(nd, "tag_text", cli_json_string(in->nodata_text));
        json_object_set_new(nd, "count",
                            decoded ? json_integer((json_int_t)dem.nodata_count) : json_null());
        json_object_set_new(o, "nodata", nd);
        json_t *h = json_object();
        json_object_set_new(h, "min", decoded ? json_real(dem.min) : json_null());
        json_object_set_new(h, "max", decoded ? json_real(dem.max) : json_null());
        json_object_set_new(h, "metres_min", decoded ? json_real(dem.min * vu) : json_null());
        json_object_set_new(h, "metres_max", decoded ? json_real(dem.max * vu) : json_null());
        json_object_set_new(o, "height_range", h);
        if (decoded)
            levels_rc =
                cli_info_levels(ctx, dem.values, (size_t)samples, scale, info_max_height, o);
        if (levels_rc)
            json_decref(o);
        else
            cli_print_json(o);
    } else {
        cli_printf("file:      %s\n", path);
        cli_printf("format:    %s, %u x %u, %u band%s (band 1 read), %s, compression %s%s, %s, "
                   "%s-endian\n",
                   in->bigtiff      ? "BigTIFF"
                   : in->has_georef ? "GeoTIFF"
                                    : "TIFF",
                   in->width, in->height, in->bands, in->bands == 1 ? "" : "s",
                   trn_geotiff_sample_name(in->sample), in->compression_name,
                   in->predictor == 2   ? " + horizontal predictor"
                   : in->predictor == 3 ? " + floating-point predictor"
                                        : "",
                   layout, in->big_endian ? "big" : "little");
        if (g->has_geokeys) {
            cli_printf("crs:       ");
            if (g->epsg == TRN_GEOTIFF_USER_DEFINED)
                cli_printf("user-defined (%s)", crs_kind(g));
            else if (g->epsg)
                cli_printf("EPSG:%u (%s)", g->epsg, crs_kind(g));
            else
                cli_printf("no EPSG code (%s)", crs_kind(g));
            if (g->citation[0]) cli_printf(", \"%s\"", g->citation);
            /* What libgeotiff's normalisation adds: the datum, and a unit the code implies. */
            if (g->datum_epsg) cli_printf(", datum EPSG:%u", g->datum_epsg);
            if (!g->geographic && !g->linear_units && g->crs_unit_metres > 0 &&
                g->crs_unit_metres != 1.0)
                cli_printf(", unit %.10g m (implied by the code)", g->crs_unit_metres);
            cli_printf("\n");
        } else {
            cli_printf("crs:       none (no GeoKeyDirectory)\n");
        }
        if (g->has_transform) {
            const double *t = g->transform;
            cli_printf("raster:    %s\n", raster_type_name(g->raster_type));
            cli_printf("pixel:     %.10g x %.10g %s%s\n", hypot(t[1], t[4]), hypot(t[2], t[5]),
                       g->geographic ? "degrees" : "CRS units",
                       t[2] != 0 || t[4] != 0 ? " (rotated)" : "");
            cli_printf("metres:    %.4f x %.4f m per pixel", g->metres_per_pixel_x,
                       g->metres_per_pixel_y);
            if (g->geographic)
                cli_printf(" (WGS84, at the centre latitude %.6f)", g->centre_latitude);
            if (!g->units_known) cli_printf(" (unknown units: read as metres/degrees)");
            cli_printf("\n");
            cli_printf("origin:    %.10g, %.10g (outer corner of the first pixel)\n", t[0], t[3]);
            double x1, y1;
            trn_geotiff_pixel_to_model(g, in->width, in->height, &x1, &y1);
            cli_printf("extent:    %.10g, %.10g .. %.10g, %.10g\n", fmin(t[0], x1), fmin(t[3], y1),
                       fmax(t[0], x1), fmax(t[3], y1));
        } else {
            cli_printf("georef:    none (1 m per pixel assumed when loaded)\n");
        }
        if (!decoded) {
            if (in->has_nodata_tag)
                cli_printf("nodata:    %s (GDAL_NODATA tag)\n", in->nodata_text);
            cli_printf("values:    not read: %s\n", not_read);
        } else if (dem.nodata_source == TRN_GEOTIFF_NODATA_NONE) {
            cli_printf("nodata:    none\n");
        } else {
            cli_printf("nodata:    ");
            if (!isnan(dem.nodata_value)) cli_printf("%.10g ", dem.nodata_value);
            cli_printf(
                "(%s): %llu samples (%.3f%%)%s\n",
                trn_geotiff_nodata_source_name(dem.nodata_source),
                (unsigned long long)dem.nodata_count, 100.0 * (double)dem.nodata_count / total,
                dem.nodata_count ? ", filled smoothly from their neighbours when loaded" : "");
        }
        if (decoded) {
            cli_printf("heights:   %.4f .. %.4f", dem.min, dem.max);
            if (vu != 1.0)
                cli_printf(" (x %.10g = %.4f .. %.4f m)", vu, dem.min * vu, dem.max * vu);
            cli_printf("\n");
            levels_rc =
                cli_info_levels(ctx, dem.values, (size_t)samples, scale, info_max_height, NULL);
        }
    }
    if (in->bits_per_sample == 8 && in->sample_format != 3) cli_warn_8bit_dem(ctx, path);
    trn_geotiff_dispose(&dem);
    return levels_rc;
}

int cli_geotiff_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *t)
{
    trn_geotiff dem;
    trn_error e;
    trn_geotiff_limits lim;
    geotiff_limits(opt, &lim);
    if (trn_geotiff_read(cli_input_path(path), &lim, &dem, cli_progress, ctx, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    if (dem.nodata_count) {
        uint64_t filled = 0;
        if (trn_geotiff_fill_nodata(&dem, &filled, cli_progress, ctx, &e) != TRN_OK) {
            trn_geotiff_dispose(&dem);
            return cli_fail(ctx, &e);
        }
        cli_note(ctx, "%s: filled %llu NoData samples (%s) smoothly from their neighbours", path,
                 (unsigned long long)filled, trn_geotiff_nodata_source_name(dem.nodata_source));
    }
    const trn_geotiff_georef *g = &dem.info.georef;
    if (!g->has_transform)
        cli_note(ctx, "%s: no georeferencing; using 1 m per pixel", path);
    else if (!g->units_known)
        cli_note(ctx, "%s: units not understood (linear %u, angular %u); read as metres", path,
                 g->linear_units, g->angular_units);
    if (dem.info.bands > 1)
        cli_note(ctx, "%s: %u bands; band 1 is the elevation read", path, dem.info.bands);
    if (dem.info.bits_per_sample == 8 && dem.info.sample_format != 3) cli_warn_8bit_dem(ctx, path);
    if (dem.info.has_georef) {
        t->georef = malloc(sizeof *t->georef);
        if (!t->georef) {
            trn_geotiff_dispose(&dem);
            return cli_failf(ctx, "%s: out of memory", path);
        }
        *t->georef = *g;
    }
    trn_status st = trn_geotiff_to_field(&dem, &t->field, &e);
    trn_geotiff_dispose(&dem);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

/* ---- convert options -------------------------------------------------------------------- */

static bool parse_list(const char *text, double *out, int n)
{
    const char *p = text;
    for (int k = 0; k < n; k++) {
        char *end;
        out[k] = strtod(p, &end);
        if (end == p || !isfinite(out[k])) return false;
        p = end;
        if (k + 1 < n) {
            if (*p != ',') return false;
            p++;
        }
    }
    return *p == '\0';
}

int cli_crs_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_dem_options *o)
{
    const char *a = argv[*i];
    const bool crs = strcmp(a, "--crs") == 0, cell = strcmp(a, "--cell") == 0;
    if (!crs && !cell) return 0;
    const char *v = cli_option_value(ctx, argc, argv, i);
    if (!v) return -1;
    if (cell) {
        char *end;
        o->cell = strtod(v, &end);
        if (end == v || *end || !isfinite(o->cell) || !(o->cell > 0)) {
            cli_usage_error(ctx, "--cell takes the cell size in metres (a positive number), not "
                                 "'%s'",
                            v);
            return -1;
        }
        return 1;
    }
    if (strcasecmp(v, "utm") == 0) {
        o->crs = CLI_CRS_UTM;
        return 1;
    }
    if (strcasecmp(v, "keep") == 0) {
        o->crs = CLI_CRS_KEEP;
        return 1;
    }
    if (strncasecmp(v, "EPSG:", 5) == 0) {
        char *end;
        const char *digits = v + 5;
        unsigned long n = strtoul(digits, &end, 10);
        if (end != digits && !*end && *digits >= '0' && *digits <= '9' && n > 0 &&
            n < 1000000ul) {
            o->crs = CLI_CRS_EPSG;
            o->crs_epsg = (uint32_t)n;
            return 1;
        }
    }
    cli_usage_error(ctx, "--crs takes EPSG:N (a projected CRS, e.g. EPSG:32654 or EPSG:3857), utm "
                         "(the UTM zone of the DEM's centre) or keep (no reprojection), not '%s'",
                    v);
    return -1;
}

int cli_dem_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_dem_options *o)
{
    const char *a = argv[*i];
    const int crs = cli_crs_option(ctx, argc, argv, i, o);
    if (crs) return crs;
    if (strcmp(a, "--pow2") == 0) {
        o->pow2 = true;
        return 1;
    }
    if (strcmp(a, "--pow2plus1") == 0) {
        o->pow2plus1 = true;
        return 1;
    }
    bool resample = strcmp(a, "--resample") == 0, crop = strcmp(a, "--crop") == 0,
         window = strcmp(a, "--window") == 0, fit = strcmp(a, "--fit") == 0,
         pad_height = strcmp(a, "--pad-height") == 0;
    if (!resample && !crop && !window && !fit && !pad_height) return 0;
    const char *v = cli_option_value(ctx, argc, argv, i);
    if (!v) return -1;
    if (pad_height) {
        char *end;
        o->pad_height = strtod(v, &end);
        if (end == v || *end || !isfinite(o->pad_height)) {
            cli_usage_error(ctx, "--pad-height takes a height in metres, not '%s'", v);
            return -1;
        }
        o->has_pad_height = true;
        return 1;
    }
    if (fit) {
        if (strcmp(v, "pad") == 0)
            o->fit = CLI_FIT_PAD;
        else if (strcmp(v, "crop") == 0)
            o->fit = CLI_FIT_CROP;
        else if (strcmp(v, "stretch") == 0)
            o->fit = CLI_FIT_STRETCH;
        else {
            cli_usage_error(ctx, "--fit takes pad, crop or stretch, not '%s'", v);
            return -1;
        }
        return 1;
    }
    if (resample) {
        if (strcasecmp(v, "bilinear") == 0)
            o->filter = TRN_RESAMPLE_BILINEAR;
        else if (strcasecmp(v, "bicubic") == 0 || strcasecmp(v, "cubic") == 0)
            o->filter = TRN_RESAMPLE_BICUBIC;
        else if (strcasecmp(v, "average") == 0)
            o->filter = TRN_RESAMPLE_AVERAGE;
        else {
            cli_usage_error(ctx, "--resample takes bilinear, bicubic or average, not '%s'", v);
            return -1;
        }
        return 1;
    }
    double d[4];
    if (!parse_list(v, d, 4)) {
        cli_usage_error(ctx, "%s expects four comma-separated numbers (%s), got '%s'", a,
                        crop ? "X0,Y0,WIDTH,HEIGHT" : "MINX,MINY,MAXX,MAXY", v);
        return -1;
    }
    if (crop) {
        for (int k = 0; k < 4; k++) {
            if (d[k] < 0 || d[k] > 4294967295.0 || d[k] != floor(d[k])) {
                cli_usage_error(ctx, "--crop takes whole pixel numbers, got '%s'", v);
                return -1;
            }
            o->crop[k] = (uint32_t)d[k];
        }
        if (o->crop[2] < 2 || o->crop[3] < 2) {
            cli_usage_error(ctx, "--crop needs at least 2 x 2 pixels, got %u x %u", o->crop[2],
                            o->crop[3]);
            return -1;
        }
        o->has_crop = true;
    } else {
        if (!(d[0] < d[2] && d[1] < d[3])) {
            cli_usage_error(ctx, "--window needs MINX < MAXX and MINY < MAXY, got '%s'", v);
            return -1;
        }
        memcpy(o->window, d, sizeof d);
        o->has_window = true;
    }
    if (o->has_crop && o->has_window) {
        cli_usage_error(ctx, "--crop and --window both choose the area; give one");
        return -1;
    }
    return 1;
}

bool cli_dem_active(const cli_dem_options *o, uint32_t size_w, uint32_t size_h)
{
    return o->pow2 || o->pow2plus1 || o->has_crop || o->has_window || size_w || size_h ||
           o->crs != CLI_CRS_DEFAULT || o->cell > 0;
}

/* The labels of samples x0.. and rows z0.. (field rows, south first) of src, w x h samples,
 * where sample (i, j) of the result repeats the nearest one inside src: a crop when the window
 * lies inside, edge padding where it leaves (negative origins). */
static trn_status labels_window(const trn_labels *src, int64_t x0, int64_t z0, uint32_t w,
                                uint32_t h, trn_labels *dst, trn_error *err)
{
    trn_status st = trn_labels_init(dst, w - 1u, h - 1u, err);
    for (uint32_t k = 0; k < src->name_count && !st; k++)
        st = trn_labels_add_name(dst, src->names[k], strlen(src->names[k]), err);
    if (st) {
        trn_labels_dispose(dst);
        return st;
    }
    const int64_t sw = (int64_t)src->cells_x + 1, sh = (int64_t)src->cells_z + 1;
    for (uint32_t j = 0; j < h; j++) {
        int64_t sj = z0 + j;
        sj = sj < 0 ? 0 : sj >= sh ? sh - 1 : sj;
        for (uint32_t i = 0; i < w; i++) {
            int64_t si = x0 + i;
            si = si < 0 ? 0 : si >= sw ? sw - 1 : si;
            dst->values[(size_t)j * w + i] = src->values[sj * sw + si];
        }
    }
    return TRN_OK;
}

/* Drop t's labels because the samples moved off their grid, saying so in the drops. */
static void drop_labels(cli_terrain *t, const char *why)
{
    if (!t->has_labels) return;
    cli_drops_add(&t->drops, "material layers and holes (%u material%s): %s", t->labels.name_count,
                  t->labels.name_count == 1 ? "" : "s", why);
    trn_labels_dispose(&t->labels);
    t->has_labels = false;
}

/* Crop samples x0.., row0.. (row 0 = north) of t, keeping the georef and labels in step. */
static int crop_pixels(cli_ctx *ctx, cli_terrain *t, uint32_t x0, uint32_t y0, uint32_t w,
                       uint32_t h)
{
    uint32_t in_w = t->field.cells_x + 1, in_h = t->field.cells_z + 1;
    if ((uint64_t)x0 + w > in_w || (uint64_t)y0 + h > in_h)
        return cli_failf(ctx, "the crop %u,%u,%u,%u (x0,y0,width,height) leaves the %u x %u input",
                         x0, y0, w, h, in_w, in_h);
    trn_field out;
    trn_error e;
    /* Input row y0 (from the north) is field row in_h - 1 - y0. */
    if (trn_field_crop(&t->field, x0, in_h - y0 - h, w, h, &out, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    if (t->has_labels) {
        trn_labels l;
        if (labels_window(&t->labels, x0, (int64_t)in_h - y0 - h, w, h, &l, &e) != TRN_OK) {
            trn_field_dispose(&out);
            return cli_fail(ctx, &e);
        }
        trn_labels_dispose(&t->labels);
        t->labels = l;
    }
    trn_field_dispose(&t->field);
    t->field = out;
    if (t->georef) trn_geotiff_georef_remap(t->georef, x0, y0, 1, 1, w, h, t->georef);
    return CLI_EXIT_OK;
}

/* Pad t by whole samples (left/right along x, top = north rows, bottom = south rows). */
/* Pad with ground that falls smoothly from the edge to base (never repeated edge samples). */
static int pad_pixels(cli_ctx *ctx, cli_terrain *t, uint32_t left, uint32_t top, uint32_t right,
                      uint32_t bottom, double base)
{
    trn_field out;
    trn_error e;
    if (trn_field_pad_fall(&t->field, left, bottom, right, top, base, &out, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    const uint32_t w = out.cells_x + 1u, h = out.cells_z + 1u;
    if (t->has_labels) {
        trn_labels l;
        if (labels_window(&t->labels, -(int64_t)left, -(int64_t)bottom, w, h, &l, &e) != TRN_OK) {
            trn_field_dispose(&out);
            return cli_fail(ctx, &e);
        }
        trn_labels_dispose(&t->labels);
        t->labels = l;
    }
    trn_field_dispose(&t->field);
    t->field = out;
    if (t->georef)
        trn_geotiff_georef_remap(t->georef, -(double)left, -(double)top, 1, 1, w, h, t->georef);
    return CLI_EXIT_OK;
}

/* The lowest finite height of a field (0 when none). */
static double lowest_height(const trn_field *f)
{
    const size_t n = trn_field_sample_count(f);
    double lo = INFINITY;
    for (size_t k = 0; k < n; k++)
        if (f->heights[k] < lo) lo = f->heights[k];
    return isfinite(lo) ? lo : 0.0;
}

/* Crop or pad t (centred) so its cells are ax : az; "nothing" when already within a sample.
 * By default the middle is kept: only real ground, no invented border. */
static int fit_aspect(cli_ctx *ctx, const cli_dem_options *o, uint64_t ax, uint64_t az,
                      cli_terrain *t)
{
    const cli_fit fit = o->fit;
    const uint64_t cx = t->field.cells_x, cz = t->field.cells_z;
    const uint32_t w = (uint32_t)cx + 1u, h = (uint32_t)cz + 1u;
    /* The cells each side needs for the other side's count, rounded to a whole sample. */
    const uint64_t want_cx = (cz * ax + az / 2u) / az, want_cz = (cx * az + ax / 2u) / ax;
    const bool too_wide = cx * az > cz * ax;
    int rc;
    if (fit == CLI_FIT_CROP || fit == CLI_FIT_DEFAULT) {
        const char *how = fit == CLI_FIT_CROP ? "--fit crop" : "--fit crop, the default";
        const char *other = fit == CLI_FIT_CROP ? ""
                                                : "; --fit pad keeps it all inside a border "
                                                  "falling to --pad-height, --fit stretch "
                                                  "resamples";
        if (too_wide && want_cx < cx) {
            const uint32_t nw = (uint32_t)want_cx + 1u, x0 = (uint32_t)((cx - want_cx) / 2u);
            if (nw < 2) return cli_failf(ctx, "--fit crop would leave fewer than 2 samples");
            if ((rc = crop_pixels(ctx, t, x0, 0, nw, h))) return rc;
            cli_note(ctx, "kept the middle %u x %u of %u x %u samples (%s)%s", nw, h, w, h, how,
                     other);
        } else if (!too_wide && want_cz < cz) {
            const uint32_t nh = (uint32_t)want_cz + 1u, y0 = (uint32_t)((cz - want_cz) / 2u);
            if (nh < 2) return cli_failf(ctx, "--fit crop would leave fewer than 2 samples");
            if ((rc = crop_pixels(ctx, t, 0, y0, w, nh))) return rc;
            cli_note(ctx, "kept the middle %u x %u of %u x %u samples (%s)%s", w, nh, w, h, how,
                     other);
        }
        return CLI_EXIT_OK;
    }
    const double base = o->has_pad_height ? o->pad_height : lowest_height(&t->field);
    if (too_wide && want_cz > cz) {
        const uint64_t add = want_cz - cz;
        if (add > UINT32_MAX) return cli_failf(ctx, "--fit pad: too many samples to add");
        const uint32_t top = (uint32_t)(add / 2u), bottom = (uint32_t)(add - add / 2u);
        if ((rc = pad_pixels(ctx, t, 0, top, 0, bottom, base))) return rc;
    } else if (!too_wide && want_cx > cx) {
        const uint64_t add = want_cx - cx;
        if (add > UINT32_MAX) return cli_failf(ctx, "--fit pad: too many samples to add");
        const uint32_t left = (uint32_t)(add / 2u), right = (uint32_t)(add - add / 2u);
        if ((rc = pad_pixels(ctx, t, left, 0, right, 0, base))) return rc;
    } else {
        return CLI_EXIT_OK;
    }
    cli_note(ctx,
             "padded %u x %u -> %u x %u samples (--fit pad): the input sits in the middle and the "
             "added ground falls smoothly from its edges to %.6g m (--pad-height), so the cells "
             "stay square and the metres true",
             w, h, t->field.cells_x + 1u, t->field.cells_z + 1u, base);
    return CLI_EXIT_OK;
}

int cli_dem_reproject(cli_ctx *ctx, const cli_dem_options *o, cli_terrain *t)
{
    const bool asked = o->crs == CLI_CRS_UTM || o->crs == CLI_CRS_EPSG || o->cell > 0;
    const bool geographic = t->georef && t->georef->has_transform && t->georef->geographic;
    if (o->crs == CLI_CRS_KEEP) {
        if (o->cell > 0)
            return cli_failf(ctx, "--cell sets the cell of a reprojected grid, and --crs keep "
                                  "keeps the DEM's own; give one");
        return CLI_EXIT_OK;
    }
    if (!asked && (!geographic || o->keeps_crs)) return CLI_EXIT_OK;
    const char *flag = o->crs == CLI_CRS_EPSG ? "--crs EPSG:N"
                       : o->crs == CLI_CRS_UTM ? "--crs utm"
                                               : "--cell";
    if (!t->georef || !t->georef->has_transform)
        return cli_failf(ctx,
                         "%s reprojects a georeferenced DEM (a GeoTIFF with a CRS); this %s "
                         "input has no coordinate system",
                         flag, t->format);
    trn_geotiff_reproject_options ro;
    memset(&ro, 0, sizeof ro);
    ro.target_epsg = o->crs == CLI_CRS_EPSG ? o->crs_epsg : 0;
    if (o->crs == CLI_CRS_DEFAULT && !geographic && o->cell > 0) {
        /* --cell alone on a projected DEM: square cells in its own CRS (none known: the
         * library refuses a source without a code). */
        ro.target_epsg = t->georef->projected_epsg;
    }
    ro.cell_metres = o->cell;
    ro.filter = o->filter;
    trn_field out;
    trn_geotiff_georef ng;
    trn_geotiff_reproject_result res;
    trn_error e;
    if (trn_geotiff_reproject(&t->field, t->georef, &ro, &out, &ng, &res, cli_progress, ctx, &e) !=
        TRN_OK) {
        cli_progress_end(ctx);
        /* Not asked for: the way back to the old measure is worth naming. */
        if (!asked && e.code == TRN_ERR_UNSUPPORTED) {
            const size_t len = strlen(e.message);
            snprintf(e.message + len, sizeof e.message - len,
                     "; --crs keep uses the degrees as they are, converted to metres at the "
                     "centre latitude");
        }
        return cli_fail(ctx, &e);
    }
    cli_progress_end(ctx);
    if (o->reprojected) *o->reprojected = res;
    const uint32_t in_w = t->field.cells_x + 1u, in_h = t->field.cells_z + 1u;
    out.quantum = t->field.quantum;
    out.quantum_base = t->field.quantum_base;
    trn_field_dispose(&t->field);
    t->field = out;
    *t->georef = ng;
    drop_labels(t, "reprojection moves the samples off their grid");
    const double kept = res.footprint_samples > 0
                            ? 100.0 * res.width * (double)res.height / res.footprint_samples
                            : 100.0;
    char why[200];
    if (res.utm_default && o->crs == CLI_CRS_DEFAULT)
        snprintf(why, sizeof why, "the UTM zone of its centre; --crs EPSG:N chooses another");
    else if (res.utm_default)
        snprintf(why, sizeof why, "the UTM zone of its centre");
    else
        snprintf(why, sizeof why, "--crs");
    cli_note(ctx,
             "reprojected from EPSG:%u (%s) to EPSG:%u (%s, %s), %.6g m cells (%s), %s: %u x %u "
             "samples -> %u x %u, the largest rectangle inside the DEM's outline there (%.1f%% "
             "of its area; the edges outside it are left out, not invented)",
             res.source_epsg, res.source_name, res.target_epsg, res.target_name, why,
             res.cell_metres,
             o->cell > 0 ? "--cell" : "the DEM's ground resolution at its centre; --cell M sets it",
             trn_resample_filter_name(o->filter), in_w, in_h, res.width, res.height,
             kept > 100.0 ? 100.0 : kept);
    return CLI_EXIT_OK;
}

int cli_dem_apply(cli_ctx *ctx, const cli_dem_options *o, uint32_t size_w, uint32_t size_h,
                  cli_terrain *t)
{
    int rc;
    uint32_t in_w = t->field.cells_x + 1, in_h = t->field.cells_z + 1;
    if (o->has_crop) {
        rc = crop_pixels(ctx, t, o->crop[0], o->crop[1], o->crop[2], o->crop[3]);
        if (rc) return rc;
        cli_note(ctx, "cropped %u x %u -> %u x %u samples at (%u, %u)", in_w, in_h, o->crop[2],
                 o->crop[3], o->crop[0], o->crop[1]);
    } else if (o->has_window) {
        if (!t->georef || !t->georef->has_transform)
            return cli_failf(ctx, "--window needs a georeferenced input (a GeoTIFF with a "
                                  "pixel scale and tiepoint); use --crop for pixels");
        /* Pixel-centre coordinates of the window's corners; keep the pixels inside it. */
        double cmin = INFINITY, cmax = -INFINITY, rmin = INFINITY, rmax = -INFINITY;
        for (int k = 0; k < 4; k++) {
            double x = o->window[k & 1 ? 2 : 0], y = o->window[k & 2 ? 3 : 1], c, r;
            if (!trn_geotiff_model_to_pixel(t->georef, x, y, &c, &r))
                return cli_failf(ctx, "--window: the input's transform cannot be inverted");
            cmin = fmin(cmin, c - 0.5);
            cmax = fmax(cmax, c - 0.5);
            rmin = fmin(rmin, r - 0.5);
            rmax = fmax(rmax, r - 0.5);
        }
        double c0 = fmax(0.0, ceil(cmin - 1e-9)), c1 = fmin(in_w - 1.0, floor(cmax + 1e-9));
        double r0 = fmax(0.0, ceil(rmin - 1e-9)), r1 = fmin(in_h - 1.0, floor(rmax + 1e-9));
        if (!(c1 - c0 >= 1 && r1 - r0 >= 1))
            return cli_failf(ctx,
                             "--window %g,%g,%g,%g covers fewer than 2 x 2 of the input's pixel "
                             "centres",
                             o->window[0], o->window[1], o->window[2], o->window[3]);
        uint32_t x0 = (uint32_t)c0, y0 = (uint32_t)r0;
        uint32_t w = (uint32_t)(c1 - c0) + 1, h = (uint32_t)(r1 - r0) + 1;
        rc = crop_pixels(ctx, t, x0, y0, w, h);
        if (rc) return rc;
        cli_note(ctx, "window: %u x %u samples at pixel (%u, %u) of %u x %u", w, h, x0, y0, in_w,
                 in_h);
    }
    rc = cli_dem_reproject(ctx, o, t);
    if (rc) return rc;
    /* The target's aspect in cells: --size, or a square (--pow2, --pow2plus1, square outputs). */
    const bool sized = size_w || size_h;
    if (sized && (size_w < 2 || size_h < 2))
        return cli_failf(ctx, "the output needs at least 2 x 2 samples");
    const bool square = !sized && (o->pow2 || o->pow2plus1 || o->square);
    uint64_t ax = 0, az = 0;
    if (sized)
        ax = size_w - 1u, az = size_h - 1u;
    else if (square)
        ax = az = 1;
    const uint32_t before_w = t->field.cells_x + 1u, before_h = t->field.cells_z + 1u;
    if (ax && o->fit != CLI_FIT_STRETCH &&
        (uint64_t)t->field.cells_x * az != (uint64_t)t->field.cells_z * ax) {
        rc = fit_aspect(ctx, o, ax, az, t);
        if (rc) return rc;
    }
    uint32_t cur_w = t->field.cells_x + 1, cur_h = t->field.cells_z + 1;
    uint32_t tw = cur_w, th = cur_h;
    const uint32_t side = cur_w > cur_h ? cur_w : cur_h;
    if (sized) {
        tw = size_w;
        th = size_h;
    } else if (o->pow2plus1) {
        tw = th = trn_resample_nearest_pow2plus1(side);
    } else if (o->pow2) {
        tw = th = trn_resample_nearest_pow2(side);
    } else if (square) {
        tw = th = side; /* only --fit stretch leaves a non-square here */
    }
    if (tw == cur_w && th == cur_h) return CLI_EXIT_OK;
    trn_field out;
    trn_error e;
    if (trn_field_resample(&t->field, NULL, tw - 1, th - 1, o->filter, &out, cli_progress, ctx,
                           &e) != TRN_OK)
        return cli_fail(ctx, &e);
    cli_progress_end(ctx);
    /* A 16-bit input keeps its scale: outputs round the new heights to its steps. */
    out.quantum = t->field.quantum;
    out.quantum_base = t->field.quantum_base;
    trn_field_dispose(&t->field);
    t->field = out;
    drop_labels(t, "resampling moves the samples off their grid");
    if (t->georef)
        trn_geotiff_georef_remap(t->georef, 0, 0, (cur_w - 1.0) / (tw - 1.0),
                                 (cur_h - 1.0) / (th - 1.0), tw, th, t->georef);
    cli_note(ctx, "resampled %u x %u -> %u x %u samples (%s)", cur_w, cur_h, tw, th,
             trn_resample_filter_name(o->filter));
    const double dx = t->field.size_x / t->field.cells_x, dz = t->field.size_z / t->field.cells_z;
    if (o->fit == CLI_FIT_STRETCH &&
        (uint64_t)(before_w - 1u) * (th - 1u) != (uint64_t)(before_h - 1u) * (tw - 1u))
        cli_note(ctx,
                 "--fit stretch: %u x %u samples stretched to %u x %u; the cells are now "
                 "%.6g x %.6g m (not square)",
                 before_w, before_h, tw, th, dx, dz);
    return CLI_EXIT_OK;
}

/* ---- 16-bit height scale -------------------------------------------------------------------- */

static bool parse_number(const char *text, double *out)
{
    char *end;
    if (!text || !*text) return false;
    *out = strtod(text, &end);
    return *end == '\0' && end != text && isfinite(*out);
}

int cli_scale_option(cli_ctx *ctx, int argc, char **argv, int *i, cli_scale_options *o)
{
    const char *a = argv[*i];
    if (strcmp(a, "--height-range") == 0) {
        const char *v = cli_option_value(ctx, argc, argv, i);
        if (!v) return -1;
        double d[2];
        if (!parse_list(v, d, 2) || !(d[0] < d[1])) {
            cli_usage_error(ctx, "--height-range takes LO,HI in metres with LO < HI, not '%s'", v);
            return -1;
        }
        o->range[0] = d[0];
        o->range[1] = d[1];
        o->has_range = true;
        return 1;
    }
    if (strcmp(a, "--scale") != 0) return 0;
    /* Two numbers, then two more when both parse (gdal_translate -scale's optional pair). */
    double d[4] = {0, 0, 0, 65535};
    if (*i + 2 >= argc || !parse_number(argv[*i + 1], &d[0]) ||
        !parse_number(argv[*i + 2], &d[1])) {
        cli_usage_error(ctx, "--scale takes SRC_MIN SRC_MAX [DST_MIN DST_MAX]: metres, then "
                             "stored values (default 0 65535)");
        return -1;
    }
    *i += 2;
    if (*i + 2 < argc && parse_number(argv[*i + 1], &d[2]) && parse_number(argv[*i + 2], &d[3]))
        *i += 2;
    else
        d[2] = 0, d[3] = 65535;
    trn_height_scale check;
    trn_error e;
    if (trn_height_scale_from_range(d[0], d[1], d[2], d[3], &check, &e) != TRN_OK) {
        cli_usage_error(ctx, "--scale %g %g %g %g: %s", d[0], d[1], d[2], d[3], e.message);
        return -1;
    }
    memcpy(o->scale, d, sizeof d);
    o->has_scale = true;
    return 1;
}

const char *cli_scale_given(const cli_scale_options *o)
{
    return o->has_scale ? "--scale" : o->has_range ? "--height-range" : NULL;
}

/* The rule of cli_scale_choose over count heights; quantum > 0 when they are 16-bit values. */
static int scale_choose_values(cli_ctx *ctx, const cli_scale_options *o, double max_height,
                               double quantum, double quantum_base, const float *heights,
                               size_t count, trn_height_scale *scale, const char **how)
{
    trn_error e;
    const char *rule;
    if (o && o->has_scale) {
        if (trn_height_scale_from_range(o->scale[0], o->scale[1], o->scale[2], o->scale[3], scale,
                                        &e) != TRN_OK)
            return cli_usage_error(ctx, "--scale: %s", e.message);
        rule = "--scale";
    } else if (o && o->has_range) {
        if (trn_height_scale_from_range(o->range[0], o->range[1], 0, 65535, scale, &e) != TRN_OK)
            return cli_usage_error(ctx, "--height-range: %s", e.message);
        rule = "--height-range";
    } else if (max_height > 0) {
        scale->base = 0;
        scale->quantum = max_height / 65536.0;
        rule = "--max-height";
    } else if (quantum > 0 && isfinite(quantum) && isfinite(quantum_base)) {
        scale->base = quantum_base;
        scale->quantum = quantum;
        rule = "the input's 16-bit values";
    } else {
        trn_height_scale_stretch(heights, count, scale);
        rule = "lowest to highest";
    }
    if (how) *how = rule;
    return CLI_EXIT_OK;
}

int cli_scale_choose(cli_ctx *ctx, const cli_scale_options *o, double max_height,
                     const trn_field *field, trn_height_scale *scale, const char **how)
{
    return scale_choose_values(ctx, o, max_height, field->quantum, field->quantum_base,
                               field->heights, trn_field_sample_count(field), scale, how);
}

static void terrace_advice(const float *heights, size_t count, char *text, size_t size);

int cli_info_levels(cli_ctx *ctx, const float *heights, size_t count, const cli_scale_options *o,
                    double max_height, json_t *json)
{
    trn_height_scale scale;
    const char *how = NULL;
    int rc = scale_choose_values(ctx, o, max_height, 0, 0, heights, count, &scale, &how);
    if (rc) return rc;
    trn_height_levels lv;
    trn_error e;
    if (trn_height_levels_count(heights, count, &scale, &lv, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    const bool few = cli_few_levels(&lv, count);
    if (json) {
        json_object_set_new(json, "levels_16bit", cli_scale_json(&scale, how, &lv));
        json_object_set_new(json, "few_levels", json_boolean(few));
        return CLI_EXIT_OK;
    }
    cli_printf("levels:    %u distinct 16-bit levels in a .ter, PNG or R16 (%s: 0 = %.6g m, "
               "65535 = %.6g m); %llu samples share one with a different height\n",
               lv.levels, how, scale.base, scale.base + 65535.0 * scale.quantum,
               (unsigned long long)lv.merged);
    if (lv.below || lv.above)
        cli_printf("warning:   %llu samples below and %llu above that range would be clipped\n",
                   (unsigned long long)lv.below, (unsigned long long)lv.above);
    if (few) {
        char advice[320];
        terrace_advice(heights, count, advice, sizeof advice);
        cli_printf("warning:   fewer than %u levels: 16-bit outputs will show terraces (%s)\n",
                   CLI_FEW_LEVELS, advice);
    }
    return CLI_EXIT_OK;
}

/* Distinct finite heights among count, counted up to cap (cap means "cap or more"), and the
 * smallest gap between two of them when fewer than cap (0 otherwise). An open-addressing set
 * of the float bits, 2 cap slots. */
static uint32_t distinct_heights(const float *heights, size_t count, uint32_t cap, double *step)
{
    *step = 0.0;
    const size_t slots = 2u * (size_t)cap;
    uint32_t *bits = malloc(slots * sizeof *bits);
    uint8_t *used = calloc(slots, 1);
    float *values = malloc((size_t)cap * sizeof *values);
    uint32_t n = 0;
    if (!bits || !used || !values) {
        free(bits);
        free(used);
        free(values);
        return cap;
    }
    for (size_t k = 0; k < count && n < cap; k++) {
        float h = heights[k];
        if (!isfinite(h)) continue;
        if (h == 0.0f) h = 0.0f; /* -0 and +0 are one height */
        uint32_t b;
        memcpy(&b, &h, sizeof b);
        size_t at = (size_t)((b * 0x9E3779B1u) % (uint32_t)slots);
        while (used[at] && bits[at] != b)
            at = at + 1 == slots ? 0 : at + 1;
        if (used[at]) continue;
        used[at] = 1;
        bits[at] = b;
        values[n++] = h;
    }
    if (n > 1 && n < cap) {
        /* Insertion sort: at most cap (4096) values, once. */
        for (uint32_t i = 1; i < n; i++) {
            const float v = values[i];
            uint32_t j = i;
            for (; j > 0 && values[j - 1] > v; j--)
                values[j] = values[j - 1];
            values[j] = v;
        }
        double gap = INFINITY;
        for (uint32_t i = 1; i < n; i++)
            if ((double)values[i] - values[i - 1] < gap) gap = (double)values[i] - values[i - 1];
        *step = gap;
    }
    free(bits);
    free(used);
    free(values);
    return n;
}

/* Why 16-bit outputs will show terraces and what helps: when the heights themselves take few
 * values (an integer-metre DEM, an 8-bit source), no scale adds levels. */
static void terrace_advice(const float *heights, size_t count, char *text, size_t size)
{
    double step = 0.0;
    const uint32_t n = distinct_heights(heights, count, CLI_FEW_LEVELS, &step);
    if (n < CLI_FEW_LEVELS)
        snprintf(text, size,
                 "the heights themselves take only %u values (steps of %.6g m), so no scale adds "
                 "levels: the terraces are in the source; a DEM with fractional (float) heights "
                 "or finer steps keeps slopes smooth",
                 n, step);
    else
        snprintf(text, size, "--scale or --height-range can spread the heights over more");
}

bool cli_few_levels(const trn_height_levels *levels, size_t samples)
{
    /* A field of fewer samples than that cannot use more levels; a flat one needs one. */
    return levels->levels > 1 && levels->levels < CLI_FEW_LEVELS &&
           samples - levels->nan >= CLI_FEW_LEVELS;
}

int cli_scale_report(cli_ctx *ctx, const char *out, const trn_field *field,
                     const trn_height_scale *scale, trn_height_levels *levels)
{
    trn_error e;
    if (trn_height_levels_count(field->heights, trn_field_sample_count(field), scale, levels, &e) !=
        TRN_OK)
        return cli_fail(ctx, &e);
    if (levels->below || levels->above)
        cli_note(ctx,
                 "warning: %s: %llu samples below %.6g m stored as 0 and %llu above %.6g m "
                 "stored as 65535 (clipped; --scale or --height-range sets the range)",
                 out, (unsigned long long)levels->below, scale->base,
                 (unsigned long long)levels->above, scale->base + 65535.0 * scale->quantum);
    if (cli_few_levels(levels, trn_field_sample_count(field))) {
        char advice[320];
        terrace_advice(field->heights, trn_field_sample_count(field), advice, sizeof advice);
        cli_note(ctx, "warning: %s uses %u distinct 16-bit levels (fewer than %u): expect "
                 "terraces; %s",
                 out, levels->levels, CLI_FEW_LEVELS, advice);
    }
    return CLI_EXIT_OK;
}

void cli_warn_8bit(cli_ctx *ctx, const char *path, double max_height)
{
    const double mh = max_height > 0 ? max_height : CLI_DEFAULT_MAX_HEIGHT;
    cli_note(ctx,
             "warning: %s is an 8-bit heightmap: 256 height levels at most, so slopes come out "
             "as terraces (steps of %.6g m with maxHeight %g); a 16-bit PNG or R16, or float "
             "heights (R32, GeoTIFF), keep the detail",
             path, mh * 257.0 / 65536.0, mh);
}

void cli_warn_8bit_dem(cli_ctx *ctx, const char *path)
{
    cli_note(ctx,
             "warning: %s stores 8-bit elevations: 256 height values at most, so slopes come "
             "out as terraces in any output; a 16-bit or float DEM of the same area keeps the "
             "detail",
             path);
}

json_t *cli_scale_json(const trn_height_scale *scale, const char *how,
                       const trn_height_levels *levels)
{
    json_t *o = json_object();
    json_object_set_new(o, "base", json_real(scale->base));
    json_object_set_new(o, "quantum", json_real(scale->quantum));
    json_object_set_new(o, "top", json_real(scale->base + 65535.0 * scale->quantum));
    json_object_set_new(o, "rule", cli_json_string(how ? how : ""));
    json_object_set_new(o, "levels", json_integer(levels->levels));
    json_object_set_new(o, "stored_min", json_integer(levels->stored_min));
    json_object_set_new(o, "stored_max", json_integer(levels->stored_max));
    json_object_set_new(o, "clamped_low", json_integer((json_int_t)levels->below));
    json_object_set_new(o, "clamped_high", json_integer((json_int_t)levels->above));
    return o;
}

int cli_geotiff_write(cli_ctx *ctx, const cli_terrain *t, const char *out, bool spacing_known)
{
    trn_error e;
    /* No CRS without one in: NULL writes the local frame (pixel scale = the spacing, no
     * GeoKeys); an empty georef writes no georeferencing tags at all. */
    trn_geotiff_georef none;
    memset(&none, 0, sizeof none);
    const trn_geotiff_georef *g = t->georef ? t->georef : spacing_known ? NULL : &none;
    if (trn_geotiff_write(out, &t->field, g, TRN_GEOTIFF_COMPRESS_DEFLATE, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    if (!t->georef && spacing_known)
        cli_note(ctx,
                 "wrote %s: float32 metres, no CRS (the input had none): only the sample "
                 "spacing, %g x %g m, as the pixel scale",
                 out, t->field.size_x / t->field.cells_x, t->field.size_z / t->field.cells_z);
    else if (!t->georef)
        cli_note(ctx,
                 "wrote %s: float32 metres, no CRS and no pixel scale (the input states "
                 "neither; --square-size S records a spacing)",
                 out);
    return CLI_EXIT_OK;
}
