/* terrane info: describe any supported file, detecting its format from content. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "detect.h"
#include "fmt_geotiff.h"
#include "fmt_stationeers.h"
#include "fmt_unity.h"
#include "core/fileio.h"
#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "terrane/terragen.h"

static const char *const help_text =
    "usage: terrane info FILE [--max-height M] [--size WxH] [--raw-type T] [--format json]\n"
    "\n"
    "Describe a terrain or heightmap file. The format is detected from the content:\n"
    "BeamNG/Torque .ter (versions 1-9), Terragen .ter, PNG, BeamNG .terrain.json (compared\n"
    "with the .ter beside it); headerless .r16/.raw/.r32 files are recognised by extension\n"
    "and length.\n"
    "\n"
    "options:\n"
    "  --max-height M   BeamNG TerrainBlock maxHeight, to print heights in metres\n"
    "  --size WxH       size of a headerless raster (default: a square from the length)\n"
    "  --raw-type T     r16le (default for .r16/.raw), r16be, u8, r32\n"
    "  --format json    machine-readable output on stdout\n"
    "  -q, --quiet      no progress bar or warnings on stderr\n"
    "\n"
    "examples:\n"
    "  terrane info levels/small_island/theTerrain.ter --max-height 2048\n"
    "  terrane info heightmap.png --format json\n"
    "  terrane info terrain.r16 --size 1025x1025\n";

static const char *layout_name(trn_ter_layout layout)
{
    switch (layout) {
    case TRN_TER_LAYOUT_MODERN:
        return "modern";
    case TRN_TER_LAYOUT_EXTRA_1:
        return "modern + 1 extra map";
    case TRN_TER_LAYOUT_EXTRA_5:
        return "modern + 5 extra maps";
    case TRN_TER_LAYOUT_LEGACY:
        return "legacy";
    }
    return "unknown";
}

static void u16_range(const uint16_t *v, size_t n, uint16_t *lo, uint16_t *hi)
{
    uint16_t a = UINT16_MAX, b = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < a) a = v[i];
        if (v[i] > b) b = v[i];
    }
    if (n == 0) a = 0;
    *lo = a;
    *hi = b;
}

static json_t *json_string_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static int info_ter(cli_ctx *ctx, const char *path, double max_height)
{
    trn_ter ter;
    trn_error e;
    if (trn_ter_read(path, NULL, &ter, cli_progress, ctx, &e) != TRN_OK) return cli_fail(ctx, &e);
    cli_progress_end(ctx);
    size_t n = (size_t)ter.size * ter.size;
    uint16_t lo, hi;
    u16_range(ter.heights, n, &lo, &hi);
    uint64_t counts[256];
    trn_ter_layer_histogram(&ter, counts);
    double scale = max_height > 0 ? max_height / 65536.0 : 0;

    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(path));
        json_object_set_new(o, "format", json_string("beamng-ter"));
        json_object_set_new(o, "version", json_integer(ter.version));
        json_object_set_new(o, "layout", json_string(layout_name(ter.layout)));
        json_object_set_new(o, "size", json_integer(ter.size));
        json_object_set_new(o, "samples", json_integer((json_int_t)n));
        json_t *h = json_object();
        json_object_set_new(h, "stored_min", json_integer(lo));
        json_object_set_new(h, "stored_max", json_integer(hi));
        if (scale > 0) {
            json_object_set_new(h, "max_height", json_real(max_height));
            json_object_set_new(h, "metres_min", json_real(lo * scale));
            json_object_set_new(h, "metres_max", json_real(hi * scale));
        }
        json_object_set_new(o, "heights", h);
        json_t *mats = json_array();
        for (uint32_t m = 0; m < ter.material_count; m++) {
            json_t *mo = json_object();
            json_object_set_new(mo, "index", json_integer(m));
            json_object_set_new(mo, "name", json_string(ter.materials[m]));
            json_object_set_new(mo, "samples", json_integer(m < 255 ? (json_int_t)counts[m] : 0));
            json_array_append_new(mats, mo);
        }
        json_object_set_new(o, "materials", mats);
        json_object_set_new(o, "holes", json_integer((json_int_t)counts[255]));
        json_object_set_new(o, "extra_maps", json_integer(ter.extra_count));
        if (ter.layout == TRN_TER_LAYOUT_LEGACY) {
            json_t *lg = json_object();
            json_object_set_new(lg, "texture_script", json_string_or_null(ter.texture_script));
            json_object_set_new(lg, "heightfield_script",
                                json_string_or_null(ter.heightfield_script));
            json_t *edges = json_array();
            for (int k = 0; k < 2; k++)
                json_array_append_new(edges, json_string_or_null(ter.edge_paths[k]));
            json_object_set_new(lg, "edge_paths", edges);
            json_object_set_new(o, "legacy", lg);
        }
        json_t *w = json_array();
        for (uint32_t k = 0; k < ter.warning_count; k++) {
            json_t *wo = json_object();
            json_object_set_new(wo, "message", json_string(ter.warnings[k].message));
            if (ter.warnings[k].offset >= 0)
                json_object_set_new(wo, "offset", json_integer(ter.warnings[k].offset));
            json_array_append_new(w, wo);
        }
        json_object_set_new(o, "warnings", w);
        cli_print_json(o);
    } else {
        printf("file:      %s\n", path);
        printf("format:    BeamNG/Torque terrain (.ter), version %u, %s layout\n", ter.version,
               layout_name(ter.layout));
        printf("size:      %u x %u samples\n", ter.size, ter.size);
        printf("heights:   stored %u .. %u", lo, hi);
        if (scale > 0)
            printf(" = %.4f .. %.4f m (maxHeight %g)", lo * scale, hi * scale, max_height);
        printf("\n");
        printf("materials: %u\n", ter.material_count);
        for (uint32_t m = 0; m < ter.material_count; m++)
            printf("  %3u  %-32s %llu samples\n", m, ter.materials[m],
                   (unsigned long long)(m < 255 ? counts[m] : 0));
        uint64_t beyond = 0;
        for (uint32_t m = ter.material_count; m < 255; m++)
            beyond += counts[m];
        if (beyond)
            printf("  (%llu samples use indices past the list)\n", (unsigned long long)beyond);
        printf("holes:     %llu samples\n", (unsigned long long)counts[255]);
        if (ter.extra_count)
            printf(
                "extra:     %u map(s) of %u bytes after the layer map (not written by the engine; "
                "kept for round trips)\n",
                ter.extra_count, ter.size * ter.size);
        if (ter.layout == TRN_TER_LAYOUT_LEGACY) {
            printf("legacy:    Torque Game Engine file; converts to version 9\n");
            if (ter.texture_script)
                printf("texture script:\n%s\n",
                       ter.texture_script[0] ? ter.texture_script : "(empty)");
            if (ter.heightfield_script)
                printf("heightfield script:\n%s\n",
                       ter.heightfield_script[0] ? ter.heightfield_script : "(empty)");
            for (int k = 0; k < 2; k++)
                if (ter.edge_paths[k]) printf("edge path %d: %s\n", k, ter.edge_paths[k]);
        }
        for (uint32_t k = 0; k < ter.warning_count; k++)
            printf("warning:   %s\n", ter.warnings[k].message);
    }
    trn_ter_dispose(&ter);
    return CLI_EXIT_OK;
}

static int info_terragen(cli_ctx *ctx, const char *path)
{
    trn_error e;
    trn_terragen tg;
    if (trn_terragen_read(path, NULL, &tg, &e) != TRN_OK) return cli_fail(ctx, &e);
    trn_field f;
    trn_status st = trn_terragen_to_field(&tg, &f, &e);
    if (st) {
        trn_terragen_dispose(&tg);
        return cli_fail(ctx, &e);
    }
    float lo, hi;
    trn_field_range(&f, &lo, &hi);
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(path));
        json_object_set_new(o, "format", json_string("terragen"));
        json_object_set_new(o, "width", json_integer(tg.xpts));
        json_object_set_new(o, "height", json_integer(tg.ypts));
        json_t *sc = json_array();
        for (int k = 0; k < 3; k++)
            json_array_append_new(sc, json_real(tg.scale[k]));
        json_object_set_new(o, "scale", sc);
        json_object_set_new(o, "planet_radius_km", json_real(tg.planet_radius));
        json_object_set_new(o, "curve_mode", json_integer(tg.curve_mode));
        json_object_set_new(o, "height_scale", json_integer(tg.height_scale));
        json_object_set_new(o, "base_height", json_integer(tg.base_height));
        json_object_set_new(o, "metres_min", json_real(lo));
        json_object_set_new(o, "metres_max", json_real(hi));
        json_object_set_new(o, "has_eof", json_boolean(tg.has_eof));
        json_object_set_new(o, "trailing_bytes", json_integer((json_int_t)tg.trailing_bytes));
        cli_print_json(o);
    } else {
        printf("file:      %s\n", path);
        printf("format:    Terragen terrain (.ter, \"TERRAGENTERRAIN\"), not a BeamNG file\n");
        printf("size:      %u x %u samples\n", tg.xpts, tg.ypts);
        printf("scale:     %g x %g x %g m per unit\n", tg.scale[0], tg.scale[1], tg.scale[2]);
        printf("planet:    radius %g km, curve mode %u\n", tg.planet_radius, tg.curve_mode);
        printf("altitude:  HeightScale %d, BaseHeight %d\n", tg.height_scale, tg.base_height);
        printf("heights:   %.4f .. %.4f m\n", lo, hi);
        if (!tg.has_eof)
            printf("note:      no \"EOF \" marker (as GDAL's Terragen writer leaves it)\n");
        if (tg.trailing_bytes)
            printf("warning:   %llu bytes after the \"EOF \" marker were ignored\n",
                   (unsigned long long)tg.trailing_bytes);
    }
    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);
    return CLI_EXIT_OK;
}

/* The .ter a .terrain.json describes: the file named by "datafile", beside the JSON. */
static bool sibling_ter(const char *json_path, const char *datafile, char *out, size_t out_size)
{
    const char *base = strrchr(datafile, '/');
    base = base ? base + 1 : datafile;
    if (!*base) return false;
    const char *slash = strrchr(json_path, '/');
    int dir_len = slash ? (int)(slash - json_path + 1) : 0;
    snprintf(out, out_size, "%.*s%s", dir_len, json_path, base);
    return trn_file_exists(out);
}

static int info_terrain_json(cli_ctx *ctx, const char *path)
{
    trn_terrain_json tj;
    trn_error e;
    if (trn_terrain_json_read(path, &tj, &e) != TRN_OK) {
        /* Terrain asset sources share the name NAME.terrain.json: tell the user which it is. */
        json_t *doc = json_load_file(path, 0, NULL);
        bool asset = doc && json_is_object(doc) &&
                     (json_object_get(doc, "format_version") || json_object_get(doc, "recipe"));
        json_decref(doc);
        if (asset)
            return cli_failf(ctx,
                             "%s: a terrane Terrain asset source (format_version/recipe), "
                             "not a BeamNG .terrain.json; it describes a recipe, not a "
                             "heightmap",
                             path);
        cli_note(ctx, "%s: a JSON document, read as a BeamNG .terrain.json:", path);
        return cli_fail(ctx, &e);
    }
    char ter_path[4096];
    bool have_ter = sibling_ter(path, tj.datafile ? tj.datafile : "", ter_path, sizeof ter_path);
    trn_findings findings = {NULL, 0, 0};
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    trn_error ter_err;
    trn_error_clear(&ter_err);
    bool ter_ok = false;
    if (have_ter) {
        ter_ok = trn_ter_read(ter_path, NULL, &ter, NULL, NULL, &ter_err) == TRN_OK;
        if (ter_ok && trn_terrain_json_compare(&tj, path, &ter, ter_path, NULL, &findings, NULL,
                                               &e) != TRN_OK) {
            trn_ter_dispose(&ter);
            trn_terrain_json_dispose(&tj);
            return cli_fail(ctx, &e);
        }
    }
    char ter_msg[2048] = "";
    if (have_ter && !ter_ok) trn_error_format(&ter_err, ter_msg, sizeof ter_msg);
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(path));
        json_object_set_new(o, "format", json_string("beamng-terrain-json"));
        json_object_set_new(o, "version", json_integer(tj.version));
        json_object_set_new(o, "datafile", json_string(tj.datafile ? tj.datafile : ""));
        json_object_set_new(o, "heightmapImage",
                            json_string(tj.heightmap_image ? tj.heightmap_image : ""));
        json_object_set_new(o, "size", json_integer(tj.size));
        json_t *mats = json_array();
        for (uint32_t m = 0; m < tj.material_count; m++)
            json_array_append_new(mats, json_string(tj.materials[m]));
        json_object_set_new(o, "materials", mats);
        json_object_set_new(o, "ter", have_ter ? json_string(ter_path) : json_null());
        if (ter_msg[0]) json_object_set_new(o, "ter_error", json_string(ter_msg));
        json_t *dis = json_array();
        for (size_t k = 0; k < findings.count; k++)
            json_array_append_new(dis, json_string(findings.items[k].message));
        json_object_set_new(o, "disagreements", dis);
        cli_print_json(o);
    } else {
        printf("file:      %s\n", path);
        printf("format:    BeamNG terrain metadata (.terrain.json), version %u\n", tj.version);
        printf("datafile:  %s\n", tj.datafile ? tj.datafile : "");
        printf("heightmap: %s\n", tj.heightmap_image ? tj.heightmap_image : "");
        printf("size:      %u x %u samples\n", tj.size, tj.size);
        printf("materials: %u\n", tj.material_count);
        for (uint32_t m = 0; m < tj.material_count; m++)
            printf("  %3u  %s\n", m, tj.materials[m]);
        if (!have_ter)
            printf("ter:       not found beside it (looked for the datafile's name)\n");
        else if (ter_msg[0])
            printf("ter:       %s cannot be read: %s\n", ter_path, ter_msg);
        else if (findings.count == 0)
            printf("ter:       %s agrees with it\n", ter_path);
        else {
            printf("ter:       %s disagrees:\n", ter_path);
            for (size_t k = 0; k < findings.count; k++)
                printf("  - %s\n", findings.items[k].message);
        }
    }
    trn_findings_dispose(&findings);
    trn_ter_dispose(&ter);
    trn_terrain_json_dispose(&tj);
    return CLI_EXIT_OK;
}

static int info_image(cli_ctx *ctx, const char *path, cli_format format, uint32_t w, uint32_t h,
                      int raw_type)
{
    trn_image img;
    trn_error e;
    trn_status st;
    trn_png_info pinfo;
    memset(&pinfo, 0, sizeof pinfo);
    if (format == CLI_FORMAT_PNG) {
        if (trn_png_read_info(path, &pinfo, &e) != TRN_OK) return cli_fail(ctx, &e);
        st = trn_png_read(path, NULL, &img, &e);
    } else {
        if (!raw_type) raw_type = cli_raw_type_from_path(path);
        if (!raw_type) raw_type = TRN_RAW_U16_LE + 1;
        st = trn_raw_read(path, (trn_raw_type)(raw_type - 1), w, h, &img, &e);
    }
    if (st) return cli_fail(ctx, &e);
    /* Range of the first channel, the one heightmaps use. */
    double lo = INFINITY, hi = -INFINITY;
    size_t n = (size_t)img.width * img.height;
    for (size_t i = 0; i < n; i++) {
        size_t k = i * img.channels;
        double v = img.bit_depth == 8    ? ((const uint8_t *)img.data)[k]
                   : img.bit_depth == 16 ? ((const uint16_t *)img.data)[k]
                                         : ((const float *)img.data)[k];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (n == 0) lo = hi = 0;
    static const char *const channel_names[] = {"", "grey", "grey+alpha", "RGB", "RGBA"};
    const char *kind = format == CLI_FORMAT_PNG ? "png" : "raw";
    bool square_pow2 = img.width == img.height && img.width >= 128 && img.width <= 8192 &&
                       (img.width & (img.width - 1)) == 0;
    /* beamng import reads PNG, R16 (either byte order) and R32 (with --max-height) heightmaps. */
    bool readable = format == CLI_FORMAT_PNG || raw_type == TRN_RAW_U16_LE + 1 ||
                    raw_type == TRN_RAW_U16_BE + 1 || raw_type == TRN_RAW_F32_LE + 1;
    const char *beamng_note =
        !readable     ? "not importable directly (beamng import reads PNG, R16 and R32); "
                        "convert it to .png first"
        : square_pow2 ? "importable as a heightmap (square, power of two)"
                      : "not importable as is (needs a square power of two, 128 to 8192)";
    bool importable = readable && square_pow2;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "file", json_string(path));
        json_object_set_new(o, "format", json_string(kind));
        json_object_set_new(o, "width", json_integer(img.width));
        json_object_set_new(o, "height", json_integer(img.height));
        json_object_set_new(o, "channels", json_integer(img.channels));
        json_object_set_new(o, "bit_depth", json_integer(img.bit_depth));
        if (format == CLI_FORMAT_PNG) json_object_set_new(o, "srgb", json_boolean(pinfo.has_srgb));
        json_object_set_new(o, "min", json_real(lo));
        json_object_set_new(o, "max", json_real(hi));
        json_object_set_new(o, "beamng_importable", json_boolean(importable));
        cli_print_json(o);
    } else {
        printf("file:      %s\n", path);
        if (format == CLI_FORMAT_PNG)
            printf("format:    PNG, %u-bit %s%s\n", img.bit_depth, channel_names[img.channels],
                   pinfo.has_srgb ? ", sRGB" : "");
        else
            printf("format:    headerless raster, %s\n", img.bit_depth == 32   ? "float32 (R32)"
                                                         : img.bit_depth == 16 ? "16-bit (R16)"
                                                                               : "8-bit");
        printf("size:      %u x %u\n", img.width, img.height);
        printf("values:    %g .. %g (first channel)\n", lo, hi);
        printf("beamng:    %s\n", beamng_note);
    }
    trn_image_dispose(&img);
    return CLI_EXIT_OK;
}

int cli_verb_info(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL;
    cli_load_options load;
    memset(&load, 0, sizeof load);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (a[0] == '-' && a[1]) {
            if (!cli_known_option(ctx, a, NULL)) return CLI_EXIT_USAGE;
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            c = cli_load_option(ctx, a, v, &load);
            if (c < 0) return CLI_EXIT_USAGE;
            if (c == 0) return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (path) {
            return cli_usage_error(ctx, "takes one file, got '%s' and '%s'", path, a);
        } else {
            path = a;
        }
    }
    if (!path) return cli_usage_error(ctx, "needs a FILE");
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = cli_sniff_file(ctx, path, &format);
    if (rc) return rc;
    if ((load.raw_type || load.raw_width) && format != CLI_FORMAT_PNG &&
        format != CLI_FORMAT_TERRAGEN && format != CLI_FORMAT_GEOTIFF)
        format = CLI_FORMAT_RAW; /* the user says it is headerless */
    switch (format) {
    case CLI_FORMAT_BEAMNG_TER:
        return info_ter(ctx, path, load.max_height);
    case CLI_FORMAT_TERRAGEN:
        return info_terragen(ctx, path);
    case CLI_FORMAT_PNG:
    case CLI_FORMAT_RAW:
        return info_image(ctx, path, format, load.raw_width, load.raw_height, load.raw_type);
    case CLI_FORMAT_TERRAIN_JSON:
        return info_terrain_json(ctx, path);
    case CLI_FORMAT_STATIONEERS_DAT:
    case CLI_FORMAT_STATIONEERS_SAVE:
        return cli_stationeers_info(ctx, path, format);
    case CLI_FORMAT_UNITY:
        return cli_unity_info(ctx, path);
    case CLI_FORMAT_GEOTIFF:
        return cli_geotiff_info(ctx, path);
    case CLI_FORMAT_UNKNOWN:
    default:
        break;
    }
    return cli_fail_unknown_format(ctx, path);
}
