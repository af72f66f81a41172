/* terrane convert: read any supported heightmap and write it in another format. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "detect.h"
#include "level_export.h"
#include "fmt_geotiff.h"
#include "fmt_stationeers.h"
#include "terrane/beamng.h"
#include "terrane/image.h"
#include "terrane/terragen.h"

/* The library's default (-1): zlib level 3, as small as level 6 on terrain data in a third to
 * a half of the time (bench/RESULTS.md). */
#define CLI_DEFAULT_PNG_LEVEL -1

static const char *const help_text =
    "usage: terrane convert IN OUT [options]\n"
    "\n"
    "Convert a heightmap between formats. IN is detected from its content (BeamNG/Torque .ter\n"
    "versions 1-9, Terragen .ter, PNG, GeoTIFF, Unity TerrainData .asset, Stationeers\n"
    "terrain.dat or .save) or, for headerless rasters, from its extension. OUT's format comes\n"
    "from its extension or --of:\n"
    "  .ter          BeamNG terrain, version 9 (legacy files are converted); square\n"
    "  .png          16-bit greyscale PNG (row 0 = north, as BeamNG's importer expects)\n"
    "  .r16 / .raw   headerless 16-bit, little-endian (Windows) unless --byte-order big\n"
    "  .r32          headerless float32 metres, little-endian\n"
    "  --of terragen a Terragen .ter (the extension alone means BeamNG)\n"
    "  .dat          Stationeers terrain.dat octree, 1 m voxels, the smallest world size\n"
    "                (MaxDepth 10, 11 or 12) that holds it, one file; --world NAME writes a\n"
    "                world's base files into the folder OUT instead\n"
    "  .tif / .tiff  float32 GeoTIFF (deflate), keeping a GeoTIFF input's georeferencing;\n"
    "                no CRS when the input has none\n"
    "  beamng:DIR/levels/NAME  a whole BeamNG level (.ter, .terrain.json, TerrainBlock with\n"
    "                maxHeight, squareSize and position z, materials), then validated; needs a\n"
    "                power-of-two square (2^k + 1 grids lose their far row and column; --pow2\n"
    "                resamples); --scaffold adds info.json, a preview, a spawn point, sky, sun\n"
    "                and the editor's groups, so the level opens and drives\n"
    "GeoTIFF DEMs (IN): NoData is filled smoothly; sizes are in metres (docs/dem.md). A\n"
    "geographic DEM (degrees, e.g. EPSG:4326) is reprojected with PROJ onto square cells of\n"
    "the UTM zone of its centre for every output but .tif (which keeps its CRS):\n"
    "  --crs EPSG:N       reproject to this projected CRS instead (e.g. EPSG:3857); --crs utm\n"
    "                     the centre's UTM zone (also for a .tif or a projected DEM); --crs\n"
    "                     keep no reprojection (degrees become metres at the centre latitude)\n"
    "  --cell M           the reprojected cells, M metres square (default: the DEM's ground\n"
    "                     resolution at its centre); the largest rectangle of the DEM's\n"
    "                     outline in the new CRS is kept (no NoData, no invented ground)\n"
    "\n"
    "Heights in 16-bit outputs (.ter, PNG, R16, beamng:): stored = round((h - base) / step),\n"
    "clamped to 0..65535, and h = base + stored * step, by the first rule that applies:\n"
    "  --scale SRC_MIN SRC_MAX [DST_MIN DST_MAX]  SRC_MIN m stored as DST_MIN, SRC_MAX m as\n"
    "                     DST_MAX (default 0 65535), as gdal_translate -scale\n"
    "  --height-range LO,HI  LO m at 0, HI m at 65535\n"
    "  --max-height M     0 m at 0, step M / 65536 (BeamNG's maxHeight M)\n"
    "  a 16-bit input     its own stored values, unchanged\n"
    "  otherwise          the lowest height at 0, the highest at 65535\n"
    "A .ter keeps the step as maxHeight = 65536 * step and needs the TerrainBlock's position z\n"
    "= base (printed; a beamng: level gets it written). The distinct levels used are counted:\n"
    "fewer than 4096 is warned about (terraces).\n"
    "\n"
    "Shape: .ter, beamng:, --pow2 and --pow2plus1 make squares. A non-square input is fitted\n"
    "first, keeping its aspect (docs/dem.md):\n"
    "  --fit crop         (default) keep the centre of the long side: real ground only\n"
    "  --fit pad          grow the short side, the input centred and the added ground falling\n"
    "                     smoothly from its edges to --pad-height H metres (default the\n"
    "                     lowest height): the cells stay square, the metres true\n"
    "  --fit stretch      resample each side on its own (the cells stop being square; noted)\n"
    "--size WxH of another aspect is fitted the same way.\n"
    "\n"
    "options:\n"
    "  --of FORMAT        ter, png, r16, r32, terragen, dat, tif (instead of the extension)\n"
    "  --ter-version N    .ter version to write (7, 8 or 9; default 9). A .ter written with its\n"
    "                     own version is byte-identical to the input, extra maps included;\n"
    "                     otherwise extra maps (after the layer map) are dropped\n"
    "  --max-height M     as above; also the maxHeight a .ter or 16-bit image input is read\n"
    "                     with (default 2048)\n"
    "  --square-size S    metres per sample step (default 1)\n"
    "  --size WxH         size of a headerless input (default: a square from its length);\n"
    "                     for other inputs the output size (resampled)\n"
    "  --pow2, --pow2plus1  a square of the nearest 2^n (or 2^n+1) samples a side\n"
    "  --resample F       bilinear (default), bicubic (Catmull-Rom) or average (the area mean:\n"
    "                     shrink without aliasing)\n"
    "  --crop X0,Y0,W,H   keep W x H input pixels from (X0, Y0), row 0 = north\n"
    "  --window A,B,C,D   keep the pixels inside MINX,MINY,MAXX,MAXY (GeoTIFF CRS units)\n"
    "  --raw-type T       headerless input type: r16le, r16be, u8, r32\n"
    "  --byte-order O     little (default) or big, for 16-bit headerless output\n"
    "  --compression N    PNG zlib level 0-9 (default 3)\n"
    "  --world NAME       Stationeers world: small (MaxDepth 10, 1024^3 voxels, Terrain0.dat),\n"
    "                     medium (11, 2048^3, Terrain0..7.dat) or large (12, 4096^3,\n"
    "                     Terrain0..63.dat); OUT is the folder. A terrain.dat input of that\n"
    "                     MaxDepth is split exactly\n"
    "  --max-depth N      Stationeers .dat of exactly MaxDepth N (1..14), one file\n"
    "  -q, --quiet        no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane convert theTerrain.ter heightmap.png\n"
    "  terrane convert old_v7.ter new.ter               # upgrade to version 9\n"
    "  terrane convert in.ter same.ter --ter-version 7  # byte-identical round trip\n"
    "  terrane convert world.r16 world.ter --size 1024x1024 --max-height 1000\n"
    "  terrane convert theTerrain.ter for_terragen.ter --of terragen\n"
    "  terrane convert dem.tif level.ter --pow2 --fit pad --pad-height 0\n"
    "  terrane convert dem.tif beamng:levels/alps --pow2  # a whole level, validated\n"
    "  terrane convert dem.tif unity.r16 --pow2plus1 --resample bicubic\n"
    "  terrane convert dem.tif dem.png --scale 0 3000   # 0 m at 0, 3000 m at 65535\n"
    "  terrane convert dem.r32 Terrain --world medium   # Terrain/Terrain0.dat .. 7\n";

typedef enum out_format {
    OUT_UNKNOWN,
    OUT_TER,
    OUT_PNG,
    OUT_R16,
    OUT_R32,
    OUT_TERRAGEN,
    OUT_STATIONEERS,
    OUT_GEOTIFF
} out_format;

static out_format out_format_from_name(const char *name)
{
    if (!strcasecmp(name, "ter") || !strcasecmp(name, "beamng")) return OUT_TER;
    if (!strcasecmp(name, "png")) return OUT_PNG;
    if (!strcasecmp(name, "r16") || !strcasecmp(name, "raw")) return OUT_R16;
    if (!strcasecmp(name, "r32")) return OUT_R32;
    if (!strcasecmp(name, "terragen")) return OUT_TERRAGEN;
    if (!strcasecmp(name, "dat") || !strcasecmp(name, "stationeers")) return OUT_STATIONEERS;
    if (!strcasecmp(name, "tif") || !strcasecmp(name, "tiff") || !strcasecmp(name, "geotiff"))
        return OUT_GEOTIFF;
    return OUT_UNKNOWN;
}

static out_format out_format_from_path(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return OUT_UNKNOWN;
    return out_format_from_name(dot + 1);
}

typedef struct convert_opts {
    cli_load_options load;
    int ter_version; /* 0 = 9 */
    bool big_endian;
    int png_level;
    bool max_height_given;
    cli_dem_options dem;     /* crop, window, fit, resampling (fmt_geotiff.h) */
    cli_scale_options scale; /* --scale, --height-range */
    uint32_t world_depth;    /* --world: 10, 11, 12; 0 = none */
    uint32_t dat_depth;      /* --max-depth */
    bool scaffold;           /* --scaffold: the beamng: level opens and drives */
} convert_opts;

/* The 16-bit scale an output used, for the report. */
typedef struct scale_used {
    bool used;
    trn_height_scale scale;
    const char *how;
    trn_height_levels levels;
} scale_used;

/* Choose the scale of a 16-bit output and count its levels (warnings on stderr). */
static int choose_scale(cli_ctx *ctx, const cli_terrain *t, const char *out, const convert_opts *o,
                        scale_used *su)
{
    int rc = cli_scale_choose(ctx, &o->scale, o->max_height_given ? o->load.max_height : 0,
                              &t->field, &su->scale, &su->how);
    if (rc) return rc;
    rc = cli_scale_report(ctx, out, &t->field, &su->scale, &su->levels);
    su->used = rc == CLI_EXIT_OK;
    return rc;
}

/* .ter to .ter keeps the file's own structures (extra maps, exact values) without a field:
 * the library checks the input as a read would and copies its bytes file to file. */
static int convert_ter_to_ter(cli_ctx *ctx, const char *in, const char *out, const convert_opts *o)
{
    trn_ter ter;
    trn_error e;
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    if (o->load.max_samples) lim.max_samples = o->load.max_samples;
    uint8_t version = (uint8_t)(o->ter_version ? o->ter_version : (int)TRN_TER_VERSION_CURRENT);
    /* Extra maps are not the engine's layout: keep them only for a faithful round trip (the
     * input's own version asked for), so a plain convert gives a file the engine reads. */
    trn_status st = trn_ter_copy(cli_input_path(in), out, &lim, version, o->ter_version != 0, &ter,
                                 cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    for (uint32_t w = 0; w < ter.warning_count; w++)
        cli_note(ctx, "warning: %s: %s", in, ter.warnings[w].message);
    if (ter.extra_count && !(o->ter_version && version == ter.version))
        cli_note(ctx,
                 "dropping %u extra map(s) found after the layer map (not part of the "
                 "engine's layout); --ter-version %u keeps them",
                 ter.extra_count, ter.version);
    if (ter.layout == TRN_TER_LAYOUT_LEGACY)
        cli_note(ctx, "converting legacy version %u file to the modern layout, version %u",
                 ter.version, version);
    trn_ter_dispose(&ter);
    return CLI_EXIT_OK;
}

static int write_ter(cli_ctx *ctx, const cli_terrain *t, const char *out, const char *out_file,
                     const convert_opts *o, scale_used *su)
{
    trn_error e;
    const trn_field *f = &t->field;
    if (f->cells_x != f->cells_z)
        return cli_failf(ctx, "%s: BeamNG terrains are square; the input is %u x %u samples", out,
                         f->cells_x + 1, f->cells_z + 1);
    int rc = choose_scale(ctx, t, out, o, su);
    if (rc) return rc;
    /* The stored values themselves, as heights of a 1-per-step field: the .ter holds exactly
     * what the scale rule gives (floats hold 0..65535 exactly). */
    trn_field stored;
    if (trn_field_init(&stored, f->cells_x, f->cells_z, f->size_x, f->size_z, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    const long long n = (long long)trn_field_sample_count(f);
    /* Each sample on its own: on every core (serial, this was a sixth of a 4096^2 PNG's
     * conversion), on the calling thread for a small map. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= 65536)
#endif
    for (long long k = 0; k < n; k++)
        stored.heights[k] = (float)trn_height_scale_store(&su->scale, (double)f->heights[k]);
    trn_ter ter;
    trn_status st = trn_ter_from_field(&stored, 65536.0, t->has_labels ? &t->labels : NULL,
                                       "default", &ter, &e);
    trn_field_dispose(&stored);
    if (st) return cli_fail(ctx, &e);
    uint8_t version = (uint8_t)(o->ter_version ? o->ter_version : (int)TRN_TER_VERSION_CURRENT);
    st = trn_ter_write(out_file, &ter, version, cli_progress, ctx, &e);
    trn_ter_dispose(&ter);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    const double dx = f->size_x / f->cells_x, dz = f->size_z / f->cells_z;
    cli_note(ctx,
             "wrote %s (version %u, %u x %u): set the TerrainBlock's maxHeight %.9g m, "
             "squareSize %.9g m and position z %.9g m (stored 0; heights from %s)",
             out, version, f->cells_x + 1, f->cells_x + 1, 65536.0 * su->scale.quantum, dx,
             su->scale.base, su->how);
    if (fabs(dx - dz) > 1e-9 * fmax(dx, dz))
        cli_note(ctx,
                 "warning: %s: the cells are %.6g x %.6g m but a TerrainBlock has one squareSize "
                 "(--fit pad or crop keeps them square)",
                 out, dx, dz);
    return CLI_EXIT_OK;
}

static int write_terragen(cli_ctx *ctx, const cli_terrain *t, const char *out, const char *out_file)
{
    trn_terragen tg;
    trn_error e;
    if (trn_terragen_from_field(&t->field, &tg, &e) != TRN_OK) return cli_fail(ctx, &e);
    /* Terragen sets its own 16-bit scale (HeightScale, BaseHeight): count the levels it kept
     * and whether different heights share one (its elevations are the field's samples, in
     * the field's order). */
    const size_t n = (size_t)tg.xpts * tg.ypts;
    float *first = malloc(65536u * sizeof *first);
    uint8_t *seen = calloc(65536u, 1);
    uint32_t levels = 0;
    uint64_t merged = 0;
    for (size_t k = 0; first && seen && k < n; k++) {
        const uint32_t v = (uint16_t)tg.elevations[k];
        if (!seen[v]) {
            seen[v] = 1;
            first[v] = t->field.heights[k];
            levels++;
        } else if (first[v] != t->field.heights[k]) {
            merged++;
        }
    }
    free(first);
    free(seen);
    trn_status st = trn_terragen_write(out_file, &tg, &e);
    trn_terragen_dispose(&tg);
    if (st) return cli_fail(ctx, &e);
    trn_height_levels kept = {levels, 0, 0, 0, 0, 0, merged};
    if (cli_few_levels(&kept, n))
        cli_note(ctx,
                 "warning: %s uses %u distinct 16-bit levels (fewer than %u): Terragen's "
                 "HeightScale is a whole number, so a small height range gets few steps",
                 out, levels, CLI_FEW_LEVELS);
    return CLI_EXIT_OK;
}

static int write_image(cli_ctx *ctx, const cli_terrain *t, const char *out, const char *out_file,
                       out_format fmt, const convert_opts *o, scale_used *su)
{
    trn_error e;
    trn_image img;
    trn_status st;
    if (fmt == OUT_R32) {
        size_t w = (size_t)t->field.cells_x + 1, h = (size_t)t->field.cells_z + 1;
        st = trn_image_init(&img, (uint32_t)w, (uint32_t)h, 1, 32, &e);
        if (st) return cli_fail(ctx, &e);
        float *dst = img.data;
        /* Image row 0 is north: the field's last row. */
        for (size_t r = 0; r < h; r++)
            memcpy(dst + r * w, t->field.heights + (h - 1 - r) * w, w * sizeof(float));
        st = trn_raw_write(out_file, &img, TRN_RAW_F32_LE, &e);
    } else {
        int rc = choose_scale(ctx, t, out, o, su);
        if (rc) return rc;
        st = trn_image_from_field(&t->field, su->scale.quantum, su->scale.base, &img, &e);
        if (st) return cli_fail(ctx, &e);
        if (fmt == OUT_PNG) {
            trn_png_options po;
            trn_png_options_default(&po);
            po.compression_level = o->png_level;
            st = trn_png_write(out_file, &img, &po, cli_progress, ctx, &e);
        } else {
            st = trn_raw_write(out_file, &img, o->big_endian ? TRN_RAW_U16_BE : TRN_RAW_U16_LE, &e);
        }
        if (!st)
            cli_note(ctx,
                     "wrote %s: 0 = %.9g m, 65535 = %.9g m (%s; %u levels; BeamNG import: "
                     "maxHeight %.9g, squareSize %.9g and the TerrainBlock's position z %.9g)",
                     out, su->scale.base, su->scale.base + 65535.0 * su->scale.quantum, su->how,
                     su->levels.levels, 65536.0 * su->scale.quantum,
                     t->field.size_x / t->field.cells_x, su->scale.base);
    }
    trn_image_dispose(&img);
    cli_progress_end(ctx);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

static const char *out_format_label(out_format fmt)
{
    switch (fmt) {
    case OUT_TER:
        return "a BeamNG .ter";
    case OUT_PNG:
        return "a PNG heightmap";
    case OUT_R16:
        return "a headerless R16 heightmap";
    case OUT_R32:
        return "a headerless R32 heightmap";
    case OUT_TERRAGEN:
        return "a Terragen .ter";
    case OUT_STATIONEERS:
        return "a Stationeers octree built from heights";
    case OUT_GEOTIFF:
        return "a GeoTIFF";
    case OUT_UNKNOWN:
        break;
    }
    return "the output";
}

/* The output's name in `terrane formats` (JSON's output_format, as input_format names inputs). */
static const char *out_format_name(out_format fmt, bool level)
{
    if (level) return "beamng-level";
    switch (fmt) {
    case OUT_TER:
        return "beamng-ter";
    case OUT_PNG:
        return "png";
    case OUT_R16:
        return "raw";
    case OUT_R32:
        return "r32";
    case OUT_TERRAGEN:
        return "terragen";
    case OUT_STATIONEERS:
        return "stationeers-dat";
    case OUT_GEOTIFF:
        return "geotiff";
    case OUT_UNKNOWN:
        break;
    }
    return "";
}

/* What the output cannot hold of a loaded terrain, after what the loader already listed. */
static void output_drops(const cli_terrain *t, out_format fmt, bool level, cli_drops *d)
{
    if (t->has_labels && !level && fmt != OUT_TER) {
        const size_t n = trn_field_sample_count(&t->field);
        size_t holes = 0;
        for (size_t k = 0; k < n; k++)
            holes += t->labels.values[k] == TRN_LABEL_NONE;
        if (t->labels.name_count)
            cli_drops_add(d, "material layers (%u material%s)", t->labels.name_count,
                          t->labels.name_count == 1 ? "" : "s");
        if (holes) cli_drops_add(d, "holes (%zu sample%s)", holes, holes == 1 ? "" : "s");
    }
    if (t->georef && (level || fmt != OUT_GEOTIFF))
        cli_drops_add(d, "georeferencing (coordinate system and origin)");
}

/* One note naming everything the conversion drops; the JSON report lists it. */
static void report_conversion(cli_ctx *ctx, const char *in, const char *out, const cli_terrain *t,
                              const char *out_label, const char *out_name, const cli_drops *drops,
                              const scale_used *su, const trn_geotiff_reproject_result *rp)
{
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "input_format", cli_json_string(t->format));
        json_object_set_new(o, "output", cli_json_string(out));
        json_object_set_new(o, "output_format", cli_json_string(out_name));
        json_t *size = json_array();
        json_array_append_new(size, json_integer(t->field.cells_x + 1));
        json_array_append_new(size, json_integer(t->field.cells_z + 1));
        json_object_set_new(o, "grid", size);
        json_t *list = json_array();
        for (size_t k = 0; k < drops->count; k++)
            json_array_append_new(list, cli_json_string(drops->items[k]));
        json_object_set_new(o, "dropped", list);
        if (su->used)
            json_object_set_new(o, "heights", cli_scale_json(&su->scale, su->how, &su->levels));
        if (rp->target_epsg) {
            json_t *r = json_object();
            json_object_set_new(r, "from_epsg", json_integer(rp->source_epsg));
            json_object_set_new(r, "from", cli_json_string(rp->source_name));
            json_object_set_new(r, "to_epsg", json_integer(rp->target_epsg));
            json_object_set_new(r, "to", cli_json_string(rp->target_name));
            json_object_set_new(r, "utm_of_centre", json_boolean(rp->utm_default));
            json_object_set_new(r, "cell_metres", json_real(rp->cell_metres));
            json_t *sz = json_array();
            json_array_append_new(sz, json_integer(rp->width));
            json_array_append_new(sz, json_integer(rp->height));
            json_object_set_new(r, "grid", sz);
            json_object_set_new(r, "area_kept",
                                json_real(rp->footprint_samples > 0
                                              ? fmin(1.0, rp->width * (double)rp->height /
                                                              rp->footprint_samples)
                                              : 1.0));
            json_object_set_new(o, "reprojected", r);
        } else {
            json_object_set_new(o, "reprojected", json_null());
        }
        cli_print_json(o);
    }
    if (!drops->count) return;
    char text[CLI_DROPS_MAX * 170] = "";
    size_t len = 0;
    for (size_t k = 0; k < drops->count && len < sizeof text; k++)
        len +=
            (size_t)snprintf(text + len, sizeof text - len, "%s%s", k ? "; " : "", drops->items[k]);
    cli_note(ctx, "note: %s holds less than %s (%s): dropped %s", out_label, in, t->format, text);
}

/* Does the input state its sample spacing (worth a GeoTIFF pixel scale)? */
static bool spacing_known(const cli_terrain *t, const convert_opts *o)
{
    if (o->load.square_size > 0) return true;
    return strcmp(t->format, "unity") == 0 || strcmp(t->format, "terragen") == 0 ||
           strncmp(t->format, "stationeers", 11) == 0 || (t->georef && t->georef->has_transform);
}

int cli_verb_convert(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    convert_opts o;
    memset(&o, 0, sizeof o);
    o.png_level = CLI_DEFAULT_PNG_LEVEL;
    out_format fmt = OUT_UNKNOWN;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        c = cli_dem_option(ctx, argc, argv, &i, &o.dem);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        c = cli_scale_option(ctx, argc, argv, &i, &o.scale);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--scaffold") == 0) {
            o.scaffold = true;
            continue;
        }
        const char *v = NULL;
        if (a[0] == '-' && a[1]) {
            static const char *const names[] = {
                "--of", "--ter-version", "--byte-order", "--compression", "--world", "--max-depth",
                NULL};
            if (!cli_known_option(ctx, a, names)) return CLI_EXIT_USAGE;
            v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
        }
        if (strcmp(a, "--of") == 0) {
            fmt = out_format_from_name(v);
            if (fmt == OUT_UNKNOWN)
                return cli_usage_error(
                    ctx, "--of takes ter, png, r16, r32, terragen, dat or tif, not '%s'", v);
        } else if (strcmp(a, "--ter-version") == 0) {
            uint32_t n;
            if (!cli_parse_u32(ctx, a, v, &n)) return CLI_EXIT_USAGE;
            if (n < 7 || n > 9)
                return cli_usage_error(ctx,
                                       "--ter-version must be 7, 8 or 9 (the modern layout), "
                                       "not %u",
                                       n);
            o.ter_version = (int)n;
        } else if (strcmp(a, "--world") == 0) {
            if (!(o.world_depth = cli_stationeers_world_depth(ctx, v))) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--max-depth") == 0) {
            if (!cli_parse_u32(ctx, a, v, &o.dat_depth)) return CLI_EXIT_USAGE;
            if (o.dat_depth < 1 || o.dat_depth > 14)
                return cli_usage_error(ctx, "--max-depth must be 1 to 14, not %u", o.dat_depth);
        } else if ((c = cli_load_option(ctx, a, v, &o.load)) != 0) {
            if (c < 0) return CLI_EXIT_USAGE;
            if (strcmp(a, "--max-height") == 0) o.max_height_given = true;
        } else if (strcmp(a, "--byte-order") == 0) {
            if (strcmp(v, "big") == 0)
                o.big_endian = true;
            else if (strcmp(v, "little") != 0)
                return cli_usage_error(ctx, "--byte-order takes little or big, not '%s'", v);
        } else if (strcmp(a, "--compression") == 0) {
            uint32_t n;
            if (!cli_parse_u32(ctx, a, v, &n)) return CLI_EXIT_USAGE;
            if (n > 9) return cli_usage_error(ctx, "--compression must be 0 to 9, not %u", n);
            o.png_level = (int)n;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a;
        } else {
            return cli_usage_error(ctx, "takes IN and OUT; unexpected '%s'", a);
        }
    }
    if (!in || !out) return cli_usage_error(ctx, "needs IN and OUT");
    const char *level_dir = cli_level_spec_dir(out);
    /* --world: OUT is the folder of a Stationeers world's base files. */
    const bool world = o.world_depth != 0;
    if (world && (level_dir || (fmt != OUT_UNKNOWN && fmt != OUT_STATIONEERS)))
        return cli_usage_error(ctx, "--world writes a Stationeers world's Terrain*.dat files into "
                                    "the folder OUT; it goes with no other output format");
    if (world && o.dat_depth)
        return cli_usage_error(ctx, "--world and --max-depth both set the MaxDepth; give one");
    if (world) fmt = OUT_STATIONEERS;
    if (fmt == OUT_UNKNOWN && !level_dir) fmt = out_format_from_path(out);
    if (fmt == OUT_UNKNOWN && !level_dir)
        return cli_usage_error(ctx,
                               "cannot tell the output format from '%s'; use an extension "
                               "(.ter, .png, .r16, .raw, .r32, .dat, .tif), --of, or beamng:DIR/levels/NAME "
                               "for a whole level",
                               out);
    if (o.dat_depth && fmt != OUT_STATIONEERS)
        return cli_usage_error(ctx, "--max-depth is for Stationeers .dat outputs");
    if (o.scaffold && !level_dir)
        return cli_usage_error(ctx, "--scaffold builds a BeamNG level: write to "
                                    "beamng:DIR/levels/NAME");
    /* Formats holding metres take no 16-bit scale. */
    const char *scale_opt = cli_scale_given(&o.scale);
    if (scale_opt && !level_dir && fmt != OUT_TER && fmt != OUT_PNG && fmt != OUT_R16)
        return cli_usage_error(ctx,
                               "%s sets how heights become 16-bit values (.ter, .png, .r16, "
                               "beamng:); %s stores %s",
                               scale_opt, out,
                               fmt == OUT_TERRAGEN ? "metres with its own scale"
                                                   : "metres as they are");
    int rc = cli_input(ctx, in);
    if (rc) return rc;
    /* Staged before reading: an output that would replace the input fails at once. A level's
     * files are staged by the level writer, a world's by the world writer. */
    const char *out_file = level_dir || world ? NULL : cli_output(ctx, out);
    if (!level_dir && !world && !out_file) return CLI_EXIT_FAIL;

    cli_format in_format = CLI_FORMAT_UNKNOWN;
    rc = cli_sniff_input(ctx, in, &o.load, &in_format);
    if (rc) return rc;
    if (!level_dir && fmt == OUT_TER && in_format == CLI_FORMAT_BEAMNG_TER && !o.load.raw_type &&
        !o.load.raw_width && !cli_dem_active(&o.dem, 0, 0) && !scale_opt)
        return convert_ter_to_ter(ctx, in, out_file, &o);
    /* A Stationeers octree to its own format is copied (or split into a world's files), never
     * rebuilt from a heightfield (which would drop veins, node types, modified flags and
     * caves); reshaping options are refused. */
    if (!level_dir && fmt == OUT_STATIONEERS && !o.load.raw_type &&
        (in_format == CLI_FORMAT_STATIONEERS_DAT || in_format == CLI_FORMAT_STATIONEERS_SAVE)) {
        const char *reshaping = o.load.raw_width         ? "--size"
                                : o.dem.has_crop         ? "--crop"
                                : o.dem.has_window       ? "--window"
                                : o.dem.pow2             ? "--pow2"
                                : o.dem.pow2plus1        ? "--pow2plus1"
                                : o.dem.fit              ? "--fit"
                                : o.dem.crs              ? "--crs"
                                : o.dem.cell > 0         ? "--cell"
                                : o.max_height_given     ? "--max-height"
                                : o.load.square_size > 0 ? "--square-size"
                                : o.dat_depth            ? "--max-depth"
                                                         : NULL;
        if (world && !reshaping)
            return cli_stationeers_split(ctx, in, in_format, out, o.world_depth);
        return cli_stationeers_copy(ctx, in, in_format, out, out_file, reshaping);
    }

    cli_terrain t;
    rc = cli_load_terrain(ctx, in, &o.load, &t);
    if (rc) return rc;
    /* --size is the output grid for inputs that carry their own size. */
    bool raw_in = strcmp(t.format, "raw") == 0;
    o.dem.square = level_dir != NULL || fmt == OUT_TER;
    /* A GeoTIFF output stores a geographic CRS as it is; every other output is metres on a
     * grid of square cells, so a geographic DEM is reprojected for it. */
    o.dem.keeps_crs = !level_dir && fmt == OUT_GEOTIFF;
    trn_geotiff_reproject_result reprojected;
    memset(&reprojected, 0, sizeof reprojected);
    o.dem.reprojected = &reprojected;
    rc = cli_dem_apply(ctx, &o.dem, raw_in ? 0 : o.load.raw_width, raw_in ? 0 : o.load.raw_height,
                       &t);
    if (rc) {
        cli_terrain_dispose(&t);
        return rc;
    }
    scale_used su;
    memset(&su, 0, sizeof su);
    if (level_dir && t.field.cells_x == t.field.cells_z && t.field.size_x != t.field.size_z) {
        /* Square in samples, not in metres: name what makes the cells square here, never the
         * --fit that has just run. */
        const double dx = t.field.size_x / t.field.cells_x, dz = t.field.size_z / t.field.cells_z;
        if (o.dem.fit == CLI_FIT_STRETCH)
            rc = cli_failf(ctx,
                           "a BeamNG terrain has square cells (one squareSize); --fit stretch "
                           "made them %.6g x %.6g m: leave it out, as --fit crop (the default) "
                           "and --fit pad keep them square, e.g. --pow2 --fit crop",
                           dx, dz);
        else if (t.georef && t.georef->has_transform)
            rc = cli_failf(ctx,
                           "a BeamNG terrain has square cells (one squareSize); this DEM's are "
                           "%.6g x %.6g m%s: --cell M resamples it onto square cells of M "
                           "metres (with PROJ)%s",
                           dx, dz,
                           o.dem.crs == CLI_CRS_KEEP && t.georef->geographic
                               ? " (degrees, kept by --crs keep)"
                               : "",
                           o.dem.crs == CLI_CRS_KEEP && t.georef->geographic
                               ? "; without --crs keep it is reprojected to the UTM zone of its "
                                 "centre"
                               : "");
        else
            rc = cli_failf(ctx,
                           "a BeamNG terrain has square cells (one squareSize); this input's are "
                           "%.6g x %.6g m, and only a georeferenced DEM (GeoTIFF) can be "
                           "resampled onto square cells",
                           dx, dz);
        cli_terrain_dispose(&t);
        return rc;
    }
    if (level_dir) {
        rc = choose_scale(ctx, &t, out, &o, &su);
        if (!rc)
            rc = cli_write_beamng_level_scaffold(ctx, &t, level_dir, 65536.0 * su.scale.quantum,
                                                 su.scale.base, o.scaffold);
    } else if (fmt == OUT_GEOTIFF)
        rc = cli_geotiff_write(ctx, &t, out_file, spacing_known(&t, &o));
    else if (fmt == OUT_TER)
        rc = write_ter(ctx, &t, out, out_file, &o, &su);
    else if (fmt == OUT_TERRAGEN)
        rc = write_terragen(ctx, &t, out, out_file);
    else if (fmt == OUT_STATIONEERS) {
        trn_stationeers_field_options fo;
        trn_stationeers_field_options_default(&fo);
        fo.max_samples = o.load.max_samples; /* 0: the default */
        fo.max_depth = o.dat_depth;          /* 0: the smallest world size */
        rc = world ? cli_stationeers_write_world(ctx, &t, out, o.world_depth, &fo)
                   : cli_stationeers_write_field(ctx, &t, out_file, &fo);
    } else
        rc = write_image(ctx, &t, out, out_file, fmt, &o, &su);
    if (!rc) rc = cli_commit(ctx);
    if (!rc) {
        cli_drops drops = t.drops;
        output_drops(&t, fmt, level_dir != NULL, &drops);
        report_conversion(ctx, in, out, &t, level_dir ? "a BeamNG level" : out_format_label(fmt),
                          out_format_name(fmt, level_dir != NULL), &drops, &su, &reprojected);
    }
    cli_terrain_dispose(&t);
    return rc;
}
