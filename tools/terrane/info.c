/* terrane info: describe any supported file, detecting its format from content. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cook_verb.h"
#include "detect.h"
#include "fmt_geotiff.h"
#include "fmt_document.h"
#include "fmt_palette.h"
#include "fmt_stationeers.h"
#include "fmt_unity.h"
#include "core/fileio.h"
#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "terrane/terragen.h"

static const char *const help_text =
    "usage: terrane info FILE [--max-height M] [--size WxH] [--raw-type T] [--format json]\n"
    "       [--scale SRC_MIN SRC_MAX [DST_MIN DST_MAX] | --height-range LO,HI]\n"
    "\n"
    "Describe a terrain or heightmap file. The format is detected from the content:\n"
    "BeamNG/Torque .ter (versions 1-9), Terragen .ter, PNG, GeoTIFF, Unity TerrainData\n"
    "(.asset), Stationeers terrain.dat or .save, BeamNG .terrain.json (compared with the .ter\n"
    "beside it); headerless .r16/.raw/.r32 files are recognised by extension and length. FILE\n"
    "may be a pipe or device (cat x.png | terrane info /dev/stdin): it is read once, into\n"
    "memory. A file with more samples than --max-samples is described from its header alone.\n"
    "For float heights (GeoTIFF, R32) it counts the distinct 16-bit levels a conversion to\n"
    ".ter, PNG or R16 would use (convert's rule: --scale, --height-range, --max-height, else\n"
    "lowest to highest) and warns below 4096; 8-bit heightmaps are warned about (256 levels).\n"
    "terrain_palette and terrain_material_set documents are described as 'terrane inspect'\n"
    "does. Cooked payloads (*.terrain.bin, terrane cook) are opened with every section checked\n"
    "and described: terrain id, grid, biomes, water, scatter, roles and the section table.\n"
    "\n"
    "options:\n"
    "  --max-height M      BeamNG TerrainBlock maxHeight, to print heights in metres (and\n"
    "                      the 16-bit scale whose levels are counted)\n"
    "  --scale, --height-range  the 16-bit scale whose levels are counted (as convert)\n"
    "  --size WxH          size of a headerless raster (default: a square from the length)\n"
    "  --raw-type T        r16le (default for .r16/.raw), r16be, u8, r32\n"
    "  --input-format F    read FILE as F instead of detecting it: beamng-ter (ter), png,\n"
    "                      raw (r16, r32), geotiff (tif), unity, terragen, stationeers-dat\n"
    "                      (dat), stationeers-save (save), beamng-terrain-json\n"
    "  --max-samples N     read values of files up to N samples (default: each reader's, what\n"
    "                      8 GiB of working memory holds; see docs/cli.md)\n"
    "  --channel C         the image channel described: R, G, B, A or luma (default: the\n"
    "                      first)\n"
    "  --format json       machine-readable output on stdout\n"
    "  -q, --quiet         no progress bar or warnings on stderr\n"
    "\n"
    "examples:\n"
    "  terrane info levels/small_island/theTerrain.ter --max-height 2048\n"
    "  terrane info heightmap.png --format json\n"
    "  terrane info terrain.r16 --size 1025x1025\n"
    "  curl -s https://example.org/dem.tif | terrane info /dev/stdin\n";

static const char *layout_name(trn_ter_layout layout)
{
    switch (layout) {
    case TRN_TER_LAYOUT_MODERN:
        return "modern";
    case TRN_TER_LAYOUT_EXTRA_1:
        return "modern + 1 extra map";
    case TRN_TER_LAYOUT_EXTRA_4:
        return "modern + 4 extra maps";
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
    return s ? cli_json_string(s) : json_null();
}

/* A .ter too large to read under the limits: its version and size from the header. */
static int info_ter_header(cli_ctx *ctx, const char *path, const char *not_read)
{
    uint8_t head[5] = {0};
    FILE *fp = fopen(cli_input_path(path), "rb");
    size_t got = fp ? fread(head, 1, sizeof head, fp) : 0;
    if (fp) fclose(fp);
    unsigned version = got ? head[0] : 0;
    uint32_t size = version < 7 ? TRN_TER_LEGACY_SIZE
                    : got == 5  ? (uint32_t)head[1] | ((uint32_t)head[2] << 8) |
                                     ((uint32_t)head[3] << 16) | ((uint32_t)head[4] << 24)
                               : 0;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string("beamng-ter"));
        json_object_set_new(o, "ter_version", json_integer(version));
        json_object_set_new(o, "resolution", json_integer(size));
        json_object_set_new(o, "samples", json_integer((json_int_t)((uint64_t)size * size)));
        json_object_set_new(o, "values_read", json_false());
        json_object_set_new(o, "not_read", cli_json_string(not_read));
        cli_print_json(o);
    } else {
        cli_printf("file:      %s\n", path);
        cli_printf("format:    BeamNG/Torque terrain (.ter), version %u\n", version);
        cli_printf("size:      %u x %u samples\n", size, size);
        cli_printf("values:    not read: %s\n", not_read);
    }
    return CLI_EXIT_OK;
}

static int info_ter(cli_ctx *ctx, const char *path, const cli_load_options *opt)
{
    double max_height = opt->max_height;
    trn_ter ter;
    trn_error e;
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    if (opt->max_samples) lim.max_samples = opt->max_samples;
    trn_status st = trn_ter_read(cli_input_path(path), &lim, &ter, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st == TRN_ERR_LIMIT && e.offset <= 1) return info_ter_header(ctx, path, e.message);
    if (st) return cli_fail(ctx, &e);
    size_t n = (size_t)ter.size * ter.size;
    uint16_t lo, hi;
    u16_range(ter.heights, n, &lo, &hi);
    uint64_t counts[256];
    trn_ter_layer_histogram(&ter, counts);
    double scale = max_height > 0 ? max_height / 65536.0 : 0;

    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string("beamng-ter"));
        json_object_set_new(o, "ter_version", json_integer(ter.version));
        json_object_set_new(o, "layout", cli_json_string(layout_name(ter.layout)));
        json_object_set_new(o, "resolution", json_integer(ter.size));
        json_object_set_new(o, "samples", json_integer((json_int_t)n));
        json_t *h = json_object();
        json_object_set_new(h, "stored_min", json_integer(lo));
        json_object_set_new(h, "stored_max", json_integer(hi));
        if (scale > 0) {
            json_object_set_new(h, "max_height", json_real(max_height));
            json_object_set_new(h, "metres_min", json_real(lo * scale));
            json_object_set_new(h, "metres_max", json_real(hi * scale));
        }
        json_object_set_new(o, "height_range", h);
        json_t *mats = json_array();
        for (uint32_t m = 0; m < ter.material_count; m++) {
            json_t *mo = json_object();
            json_object_set_new(mo, "index", json_integer(m));
            json_object_set_new(mo, "name", cli_json_string(ter.materials[m]));
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
            json_object_set_new(wo, "message", cli_json_string(ter.warnings[k].message));
            if (ter.warnings[k].offset >= 0)
                json_object_set_new(wo, "offset", json_integer(ter.warnings[k].offset));
            json_array_append_new(w, wo);
        }
        json_object_set_new(o, "warnings", w);
        cli_print_json(o);
    } else {
        cli_printf("file:      %s\n", path);
        cli_printf("format:    BeamNG/Torque terrain (.ter), version %u, %s layout\n", ter.version,
                   layout_name(ter.layout));
        cli_printf("size:      %u x %u samples\n", ter.size, ter.size);
        cli_printf("heights:   stored %u .. %u", lo, hi);
        if (scale > 0)
            cli_printf(" = %.4f .. %.4f m (maxHeight %g)", lo * scale, hi * scale, max_height);
        cli_printf("\n");
        cli_printf("materials: %u\n", ter.material_count);
        for (uint32_t m = 0; m < ter.material_count; m++)
            cli_printf("  %3u  %-32s %llu samples\n", m, ter.materials[m],
                       (unsigned long long)(m < 255 ? counts[m] : 0));
        uint64_t beyond = 0;
        for (uint32_t m = ter.material_count; m < 255; m++)
            beyond += counts[m];
        if (beyond)
            cli_printf("  (%llu samples use indices past the list)\n", (unsigned long long)beyond);
        cli_printf("holes:     %llu samples\n", (unsigned long long)counts[255]);
        if (ter.extra_count)
            cli_printf("extra:     %u map(s) of %u bytes after the layer map (%s; kept for round "
                       "trips)\n",
                       ter.extra_count, ter.size * ter.size,
                       ter.version == 8 && ter.extra_count == 4
                           ? "as the World Editor wrote version 8 files"
                           : "not written by the engine");
        if (ter.layout == TRN_TER_LAYOUT_LEGACY) {
            cli_printf("legacy:    Torque Game Engine file; converts to version 9\n");
            if (ter.texture_script)
                cli_printf("texture script:\n%s\n",
                           ter.texture_script[0] ? ter.texture_script : "(empty)");
            if (ter.heightfield_script)
                cli_printf("heightfield script:\n%s\n",
                           ter.heightfield_script[0] ? ter.heightfield_script : "(empty)");
            for (int k = 0; k < 2; k++)
                if (ter.edge_paths[k]) cli_printf("edge path %d: %s\n", k, ter.edge_paths[k]);
        }
        for (uint32_t k = 0; k < ter.warning_count; k++)
            cli_printf("warning:   %s\n", ter.warnings[k].message);
    }
    trn_ter_dispose(&ter);
    return CLI_EXIT_OK;
}

static int info_terragen(cli_ctx *ctx, const char *path, const cli_load_options *opt)
{
    trn_error e;
    trn_terragen tg;
    trn_terragen_limits lim;
    trn_terragen_limits_default(&lim);
    if (opt->max_samples) lim.max_samples = opt->max_samples;
    if (trn_terragen_read(cli_input_path(path), &lim, &tg, &e) != TRN_OK) return cli_fail(ctx, &e);
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
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string("terragen"));
        json_object_set_new(o, "grid",
                            json_pack("[II]", (json_int_t)(tg.xpts), (json_int_t)(tg.ypts)));
        json_t *sc = json_array();
        for (int k = 0; k < 3; k++)
            json_array_append_new(sc, json_real(tg.scale[k]));
        json_object_set_new(o, "terragen_scale", sc);
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
        cli_printf("file:      %s\n", path);
        cli_printf("format:    Terragen terrain (.ter, \"TERRAGENTERRAIN\"), not a BeamNG file\n");
        cli_printf("size:      %u x %u samples\n", tg.xpts, tg.ypts);
        cli_printf("scale:     %g x %g x %g m per unit\n", tg.scale[0], tg.scale[1], tg.scale[2]);
        cli_printf("planet:    radius %g km, curve mode %u\n", tg.planet_radius, tg.curve_mode);
        cli_printf("altitude:  HeightScale %d, BaseHeight %d\n", tg.height_scale, tg.base_height);
        cli_printf("heights:   %.4f .. %.4f m\n", lo, hi);
        if (!tg.has_eof)
            cli_printf("note:      no \"EOF \" marker (as GDAL's Terragen writer leaves it)\n");
        if (tg.trailing_bytes)
            cli_printf("warning:   %llu bytes after the \"EOF \" marker were ignored\n",
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
    if (trn_terrain_json_read(cli_input_path(path), &tj, &e) != TRN_OK) {
        /* Terrain asset sources share the name NAME.terrain.json: tell the user which it is. */
        json_t *doc = json_load_file(cli_input_path(path), 0, NULL);
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
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string("beamng-terrain-json"));
        json_object_set_new(o, "terrain_json_version", json_integer(tj.version));
        json_object_set_new(o, "datafile", cli_json_string(tj.datafile ? tj.datafile : ""));
        json_object_set_new(o, "heightmap_image",
                            cli_json_string(tj.heightmap_image ? tj.heightmap_image : ""));
        json_object_set_new(o, "resolution", json_integer(tj.size));
        json_t *mats = json_array();
        for (uint32_t m = 0; m < tj.material_count; m++)
            json_array_append_new(mats, json_pack("{s:i, s:o}", "index", (int)m, "name",
                                                  cli_json_string(tj.materials[m])));
        json_object_set_new(o, "materials", mats);
        json_object_set_new(o, "ter_file", have_ter ? cli_json_string(ter_path) : json_null());
        if (ter_msg[0]) json_object_set_new(o, "ter_error", cli_json_string(ter_msg));
        json_t *dis = json_array();
        for (size_t k = 0; k < findings.count; k++)
            json_array_append_new(dis, cli_json_string(findings.items[k].message));
        json_object_set_new(o, "disagreements", dis);
        cli_print_json(o);
    } else {
        cli_printf("file:      %s\n", path);
        cli_printf("format:    BeamNG terrain metadata (.terrain.json), version %u\n", tj.version);
        cli_printf("datafile:  %s\n", tj.datafile ? tj.datafile : "");
        cli_printf("heightmap: %s\n", tj.heightmap_image ? tj.heightmap_image : "");
        cli_printf("size:      %u x %u samples\n", tj.size, tj.size);
        cli_printf("materials: %u\n", tj.material_count);
        for (uint32_t m = 0; m < tj.material_count; m++)
            cli_printf("  %3u  %s\n", m, tj.materials[m]);
        if (!have_ter)
            cli_printf("ter:       not found beside it (looked for the datafile's name)\n");
        else if (ter_msg[0])
            cli_printf("ter:       %s cannot be read: %s\n", ter_path, ter_msg);
        else if (findings.count == 0)
            cli_printf("ter:       %s agrees with it\n", ter_path);
        else {
            cli_printf("ter:       %s disagrees:\n", ter_path);
            for (size_t k = 0; k < findings.count; k++)
                cli_printf("  - %s\n", findings.items[k].message);
        }
    }
    trn_findings_dispose(&findings);
    trn_ter_dispose(&ter);
    trn_terrain_json_dispose(&tj);
    return CLI_EXIT_OK;
}

static const char *channel_label(int channel)
{
    static const char *const labels[] = {"first channel", "R channel", "G channel",
                                         "B channel",     "A channel", "luma"};
    return channel >= 0 && channel <= CLI_CHANNEL_LUMA ? labels[channel] : "first channel";
}

static int info_image(cli_ctx *ctx, const char *path, cli_format format,
                      const cli_load_options *opt, const cli_scale_options *scale)
{
    const char *reader = cli_input_path(path);
    trn_image_limits lim;
    cli_image_limits(opt, &lim);
    trn_image img;
    memset(&img, 0, sizeof img);
    trn_error e;
    trn_png_info pinfo;
    memset(&pinfo, 0, sizeof pinfo);
    int raw_type = 0;
    uint32_t width = 0, height = 0;
    uint8_t channels = 1, depth = 16;
    char not_read[512] = "";
    if (format == CLI_FORMAT_PNG) {
        /* The header first: a file over the limit is described without decoding it. */
        if (trn_png_read_info(reader, &pinfo, &e) != TRN_OK) return cli_fail(ctx, &e);
        width = pinfo.width, height = pinfo.height, channels = pinfo.channels;
        depth = pinfo.bit_depth == 16 ? 16 : 8;
        if ((uint64_t)width * height > lim.max_samples)
            cli_not_read_text(not_read, sizeof not_read, width, height, lim.max_samples);
        else if (trn_png_read(reader, &lim, &img, &e) != TRN_OK)
            return cli_fail(ctx, &e);
    } else {
        raw_type = opt->raw_type ? opt->raw_type : cli_raw_type_from_path(path);
        if (!raw_type) raw_type = TRN_RAW_U16_LE + 1;
        trn_raw_type type = (trn_raw_type)(raw_type - 1);
        depth = type == TRN_RAW_F32_LE ? 32 : type == TRN_RAW_U8 ? 8 : 16;
        trn_status st =
            trn_raw_read_limited(reader, type, opt->raw_width, opt->raw_height, &lim, &img, &e);
        if (st == TRN_ERR_LIMIT)
            snprintf(not_read, sizeof not_read, "%s", e.message);
        else if (st)
            return cli_fail(ctx, &e);
        width = img.width, height = img.height;
    }
    bool decoded = img.data != NULL;
    /* Range (and NaN/infinity counts of float files) of the channel heights come from. */
    double lo = INFINITY, hi = -INFINITY;
    uint64_t nan_count = 0, inf_count = 0;
    if (decoded) {
        int rc = cli_image_select_channel(ctx, path, opt, true, &img);
        if (rc) {
            trn_image_dispose(&img);
            return rc;
        }
        size_t n = (size_t)img.width * img.height;
        for (size_t i = 0; i < n; i++) {
            double v = img.bit_depth == 8    ? ((const uint8_t *)img.data)[i]
                       : img.bit_depth == 16 ? ((const uint16_t *)img.data)[i]
                                             : ((const float *)img.data)[i];
            if (isnan(v)) {
                nan_count++;
                continue;
            }
            if (isinf(v)) {
                inf_count++;
                continue;
            }
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    bool finite = lo <= hi;
    uint64_t samples = (uint64_t)width * height;
    static const char *const channel_names[] = {"", "grey", "grey+alpha", "RGB", "RGBA"};
    const char *kind = format == CLI_FORMAT_PNG ? "png" : "raw";
    bool square_pow2 =
        width == height && width >= 128 && width <= 8192 && (width & (width - 1)) == 0;
    /* beamng import reads PNG, R16 (either byte order) and R32 (with --max-height) heightmaps. */
    bool readable = format == CLI_FORMAT_PNG || raw_type == TRN_RAW_U16_LE + 1 ||
                    raw_type == TRN_RAW_U16_BE + 1 || raw_type == TRN_RAW_F32_LE + 1;
    const char *beamng_note =
        !readable     ? "not importable directly (beamng import reads PNG, R16 and R32); "
                        "convert it to .png first"
        : square_pow2 ? "importable as a heightmap (square, power of two)"
                      : "not importable as is (needs a square power of two, 128 to 8192)";
    bool importable = readable && square_pow2;
    const char *label = channel_label(opt->channel);
    if (opt->channel == CLI_CHANNEL_LUMA && channels >= 3 && depth == 8)
        label = "luma, in 16-bit units (v * 257)";
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", cli_json_string(kind));
        if (width) {
            json_object_set_new(o, "grid",
                                json_pack("[II]", (json_int_t)(width), (json_int_t)(height)));
            json_object_set_new(o, "samples", json_integer((json_int_t)samples));
        }
        json_object_set_new(o, "channels", json_integer(channels));
        json_object_set_new(o, "bit_depth", json_integer(depth));
        if (format == CLI_FORMAT_PNG) json_object_set_new(o, "srgb", json_boolean(pinfo.has_srgb));
        json_object_set_new(o, "values_read", json_boolean(decoded));
        if (!decoded) json_object_set_new(o, "not_read", cli_json_string(not_read));
        json_object_set_new(o, "channel", cli_json_string(label));
        json_object_set_new(o, "min", finite ? json_real(lo) : json_null());
        json_object_set_new(o, "max", finite ? json_real(hi) : json_null());
        if (decoded && depth == 32) {
            json_object_set_new(o, "nan_count", json_integer((json_int_t)nan_count));
            json_object_set_new(o, "inf_count", json_integer((json_int_t)inf_count));
        }
        json_object_set_new(o, "beamng_importable", json_boolean(importable));
        if (depth == 8) json_object_set_new(o, "few_levels", json_true());
        if (decoded && img.bit_depth == 32) {
            int rc = cli_info_levels(ctx, img.data, (size_t)img.width * img.height, scale,
                                     opt->max_height, o);
            if (rc) {
                json_decref(o);
                trn_image_dispose(&img);
                return rc;
            }
        }
        cli_print_json(o);
        if (depth == 8) cli_warn_8bit(ctx, path, opt->max_height);
    } else {
        cli_printf("file:      %s\n", path);
        if (format == CLI_FORMAT_PNG)
            cli_printf("format:    PNG, %u-bit %s%s\n", pinfo.bit_depth, channel_names[channels],
                       pinfo.has_srgb ? ", sRGB" : "");
        else
            cli_printf("format:    headerless raster, %s\n", depth == 32   ? "float32 (R32)"
                                                             : depth == 16 ? "16-bit (R16)"
                                                                           : "8-bit");
        if (width) cli_printf("size:      %u x %u\n", width, height);
        if (!decoded)
            cli_printf("values:    not read: %s\n", not_read);
        else if (finite)
            cli_printf("values:    %g .. %g (%s)\n", lo, hi, label);
        else
            cli_printf("values:    none finite (%s)\n", label);
        if (nan_count + inf_count)
            cli_printf("non-finite: %llu NaN, %llu infinite of %llu samples (%s)\n",
                       (unsigned long long)nan_count, (unsigned long long)inf_count,
                       (unsigned long long)samples,
                       finite ? "filled smoothly from their neighbours when loaded"
                              : "nothing to fill them from: the file cannot be loaded");
        cli_printf("beamng:    %s\n", beamng_note);
        if (decoded && img.bit_depth == 32) {
            int rc = cli_info_levels(ctx, img.data, (size_t)img.width * img.height, scale,
                                     opt->max_height, NULL);
            if (rc) {
                trn_image_dispose(&img);
                return rc;
            }
        }
        if (depth == 8) {
            cli_printf("warning:   8-bit heights: 256 levels at most, terraces in any 16-bit "
                       "output\n");
            cli_warn_8bit(ctx, path, opt->max_height);
        }
    }
    trn_image_dispose(&img);
    return CLI_EXIT_OK;
}

int cli_verb_info(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL;
    cli_load_options load;
    memset(&load, 0, sizeof load);
    cli_scale_options scale;
    memset(&scale, 0, sizeof scale);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        c = cli_scale_option(ctx, argc, argv, &i, &scale);
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
    /* Cooked payloads carry a magic of their own; they hold a terrain, not a heightfield file. */
    int payload_rc = 0;
    if (cli_payload_describe(ctx, path, &payload_rc)) return payload_rc;
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = cli_sniff_input(ctx, path, &load, &format);
    if (rc) return rc;
    if ((load.raw_width || load.raw_height) && format != CLI_FORMAT_RAW)
        cli_note(ctx,
                 "note: --size is the size of a headerless input; %s is %s, which gives its own "
                 "(info ignores --size; convert resamples to it)",
                 path, cli_format_name(format));
    if (load.channel && format != CLI_FORMAT_PNG && format != CLI_FORMAT_RAW)
        cli_note(ctx, "note: --channel is for image inputs; %s is %s", path,
                 cli_format_name(format));
    switch (format) {
    case CLI_FORMAT_BEAMNG_TER:
        return info_ter(ctx, path, &load);
    case CLI_FORMAT_TERRAGEN:
        return info_terragen(ctx, path, &load);
    case CLI_FORMAT_PNG:
    case CLI_FORMAT_RAW:
        return info_image(ctx, path, format, &load, &scale);
    case CLI_FORMAT_TERRAIN_JSON: {
        /* Palettes and material sets are JSON too; they describe scattering, not heights. */
        int doc_rc = 0;
        if (cli_palette_describe(ctx, path, &doc_rc)) return doc_rc;
        if (cli_document_describe(ctx, path, &doc_rc)) return doc_rc;
        return info_terrain_json(ctx, path);
    }
    case CLI_FORMAT_STATIONEERS_DAT:
    case CLI_FORMAT_STATIONEERS_SAVE:
        return cli_stationeers_info(ctx, path, format);
    case CLI_FORMAT_UNITY:
        return cli_unity_info_limited(ctx, path, &load);
    case CLI_FORMAT_GEOTIFF:
        return cli_geotiff_info(ctx, path, &load, &scale);
    case CLI_FORMAT_UNKNOWN:
    default:
        break;
    }
    return cli_fail_unknown_format(ctx, path);
}
