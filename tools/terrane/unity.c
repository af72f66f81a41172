/* terrane unity: describe Unity TerrainData assets, extract their maps, export terrains for Unity's
 * import. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "detect.h"
#include "fmt_geotiff.h"
#include "fmt_unity.h"
#include "terrane/image.h"
#include "terrane/unity.h"

static const char *const help_text =
    "usage: terrane unity info FILE [--format json]\n"
    "       terrane unity extract FILE [--splats PREFIX] [--holes FILE.png] [--trees FILE.json]\n"
    "       terrane unity export IN OUTDIR [options]\n"
    "\n"
    "Unity terrains. 'info' describes a TerrainData asset (a binary SerializedFile, as Unity\n"
    "saves TerrainData even in text-serialized projects): versions, objects, resolution,\n"
    "scale, heights, holes, splat layers, alpha maps and trees. 'extract' writes a TerrainData's\n"
    "alpha maps as RGBA PNGs (PREFIX0.png, PREFIX1.png...: four layers each, PNG row 0 = far\n"
    "edge), its hole mask (grey PNG, 255 solid, 0 hole) and its trees as JSON. 'export' writes\n"
    "any terrain the CLI reads as files for Unity's Terrain import (Import Raw...): a 16-bit\n"
    "RAW per terrain, a JSON of the import settings beside it, splat PNGs when the input has\n"
    "layers (a .ter's materials, a Unity asset's splats), a hole mask and trees.\n"
    "\n"
    "export options:\n"
    "  --name NAME           file stem (default: terrain); tiles are NAME_X_Z\n"
    "  --byte-order O        little (Windows, default) or big (Mac)\n"
    "  --flip                RAW row 0 is the far (max z) edge (Unity's 'Flip Vertically')\n"
    "  --resolution R        samples per terrain side: 2^n + 1 from 33 to 4097\n"
    "  --fit resample|pad    how to reach R when the input has another size: bilinear\n"
    "                        resampling (the default: keeps the whole area and the terrain's\n"
    "                        size in metres) or padding +x and +z with ground falling smoothly\n"
    "                        from the edge to the RAW's 0 height (keeps the samples, grows it)\n"
    "  --tiles NxM           N terrains along x, M along z, sharing their edge samples\n"
    "  --height-base M       metres at RAW 0\n"
    "  --height-size M       RAW 65535 is base + M, the Unity terrain height\n"
    "  --scale SRC_MIN SRC_MAX [DST_MIN DST_MAX], --height-range LO,HI, --max-height M\n"
    "                        convert's one 16-bit rule (docs/cli.md). Default: a Unity input's\n"
    "                        own height, a 16-bit input's stored values, else the lowest height\n"
    "                        at RAW 0 and the highest at 65535\n"
    "  --position X,Y,Z      world position of the terrain's corner (trees' world positions)\n"
    "  --no-splats           skip splat maps and holes\n"
    "  --max-height M, --square-size S, --size WxH, --raw-type T   as for convert\n"
    "  --crs EPSG:N|utm|keep, --cell M   as for convert: a geographic DEM is reprojected to\n"
    "                        the UTM zone of its centre (square cells in metres) by default\n"
    "  -q, --quiet           no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane unity info Assets/Terrain.asset\n"
    "  terrane unity extract Terrain.asset --splats out/splat --holes out/holes.png\n"
    "  terrane unity export theTerrain.ter unity/ --fit resample --resolution 1025\n"
    "  terrane unity export mountain.png tiles/ --tiles 3x3 --name Mountain  # 1537 samples\n";

static int usage_help(void)
{
    fputs(help_text, stdout);
    return CLI_EXIT_OK;
}

static int verb_info(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) return usage_help();
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(ctx, "unknown option '%s'", argv[i]);
        if (path) return cli_usage_error(ctx, "takes one file, got '%s' and '%s'", path, argv[i]);
        path = argv[i];
    }
    if (!path) return cli_usage_error(ctx, "needs a FILE");
    return cli_unity_info(ctx, path);
}

static int write_png(cli_ctx *ctx, const char *path, const trn_image *img)
{
    trn_error e;
    trn_png_options po;
    trn_png_options_default(&po);
    const char *file = cli_output(ctx, path);
    if (!file) return CLI_EXIT_FAIL;
    if (trn_png_write(file, img, &po, NULL, NULL, &e) != TRN_OK) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s", path);
    return CLI_EXIT_OK;
}

static int extract_splats(cli_ctx *ctx, const trn_unity_terrain *t, const char *prefix)
{
    if (t->alphamap_count == 0) return cli_failf(ctx, "the TerrainData has no alpha maps");
    for (uint32_t k = 0; k < t->alphamap_count; k++) {
        const trn_unity_alphamap *a = &t->alphamaps[k];
        if (!a->found)
            return cli_failf(ctx,
                             "alpha map %u ('%s', file %d, path id %lld): its pixels are not in "
                             "this file (another asset, a .resS stream or a compressed format)",
                             k, a->name, a->ref.file_id, (long long)a->ref.path_id);
        trn_image img;
        trn_error e;
        if (trn_image_init(&img, a->width, a->height, 4, 8, &e) != TRN_OK) return cli_fail(ctx, &e);
        size_t row = (size_t)a->width * 4u;
        for (uint32_t r = 0; r < a->height; r++)
            memcpy((uint8_t *)img.data + (size_t)r * row,
                   a->rgba + (size_t)(a->height - 1 - r) * row, row);
        char path[1024];
        snprintf(path, sizeof path, "%s%u.png", prefix, k);
        int rc = write_png(ctx, path, &img);
        trn_image_dispose(&img);
        if (rc) return rc;
    }
    return CLI_EXIT_OK;
}

static int extract_holes(cli_ctx *ctx, const trn_unity_terrain *t, const char *path)
{
    uint32_t cells = t->resolution - 1;
    trn_image img;
    trn_error e;
    if (trn_image_init(&img, cells, cells, 1, 8, &e) != TRN_OK) return cli_fail(ctx, &e);
    for (uint32_t j = 0; j < cells; j++)
        for (uint32_t i = 0; i < cells; i++) {
            bool hole = t->holes && t->holes[(size_t)j * cells + i] == 0;
            ((uint8_t *)img.data)[(size_t)(cells - 1 - j) * cells + i] = hole ? 0 : 255;
        }
    if (!t->holes) cli_note(ctx, "note: the TerrainData stores no holes; the mask is all solid");
    int rc = write_png(ctx, path, &img);
    trn_image_dispose(&img);
    return rc;
}

static int extract_trees(cli_ctx *ctx, const trn_unity_terrain *t, const char *path)
{
    json_t *doc = json_object();
    double size[3] = {(double)(t->resolution - 1) * t->scale[0], t->scale[1],
                      (double)(t->resolution - 1) * t->scale[2]};
    json_object_set_new(
        doc, "convention",
        cli_json_string("Unity TreeInstance: position is 0..1 of the terrain size; "
                        "world = terrain position + position * size (terrain at the "
                        "origin here); rotation about y in radians"));
    json_t *sz = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(sz, json_real(size[k]));
    json_object_set_new(doc, "terrain_size", sz);
    json_t *protos = json_array();
    for (uint32_t k = 0; k < t->prototype_count; k++) {
        json_t *p = json_object();
        json_object_set_new(p, "prefab_file_id", json_integer(t->prototypes[k].prefab.file_id));
        json_object_set_new(p, "prefab_path_id", json_integer(t->prototypes[k].prefab.path_id));
        json_object_set_new(p, "bend_factor", json_real(t->prototypes[k].bend_factor));
        json_array_append_new(protos, p);
    }
    json_object_set_new(doc, "prototypes", protos);
    json_t *list = json_array();
    for (uint32_t k = 0; k < t->tree_count; k++) {
        const trn_unity_tree *tr = &t->trees[k];
        json_t *o = json_object(), *pos = json_array(), *world = json_array();
        for (int a = 0; a < 3; a++) {
            json_array_append_new(pos, json_real(tr->position[a]));
            json_array_append_new(world, json_real(tr->position[a] * size[a]));
        }
        json_object_set_new(o, "position", pos);
        json_object_set_new(o, "world", world);
        json_object_set_new(o, "width_scale", json_real(tr->width_scale));
        json_object_set_new(o, "height_scale", json_real(tr->height_scale));
        json_object_set_new(o, "rotation", json_real(tr->rotation));
        char color[12];
        snprintf(color, sizeof color, "#%02x%02x%02x%02x", tr->color & 0xffu,
                 (tr->color >> 8) & 0xffu, (tr->color >> 16) & 0xffu, tr->color >> 24);
        json_object_set_new(o, "color", cli_json_string(color));
        json_object_set_new(o, "prototype", json_integer(tr->prototype));
        json_array_append_new(list, o);
    }
    json_object_set_new(doc, "trees", list);
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(doc);
    if (!text) return cli_failf(ctx, "out of memory");
    trn_error e;
    const char *file = cli_output(ctx, path);
    trn_status st = file ? trn_file_write_atomic(file, text, strlen(text), &e) : TRN_OK;
    free(text);
    if (!file) return CLI_EXIT_FAIL;
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s (%u trees)", path, t->tree_count);
    return CLI_EXIT_OK;
}

static int verb_extract(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL, *splats = NULL, *holes = NULL, *trees = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) return usage_help();
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (!strcmp(a, "--splats") || !strcmp(a, "--holes") || !strcmp(a, "--trees")) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            if (a[2] == 's')
                splats = v;
            else if (a[2] == 'h')
                holes = v;
            else
                trees = v;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (path) {
            return cli_usage_error(ctx, "takes one file, got '%s' and '%s'", path, a);
        } else {
            path = a;
        }
    }
    if (!path) return cli_usage_error(ctx, "needs a FILE");
    if (!splats && !holes && !trees)
        return cli_usage_error(ctx, "nothing to extract: give --splats, --holes or --trees");
    int rc = cli_input(ctx, path);
    if (rc) return rc;
    trn_unity_terrain t;
    trn_error e;
    if (trn_unity_terrain_read(path, NULL, &t, &e) != TRN_OK) return cli_fail(ctx, &e);
    if (splats) rc = extract_splats(ctx, &t, splats);
    if (!rc && holes) rc = extract_holes(ctx, &t, holes);
    if (!rc && trees) rc = extract_trees(ctx, &t, trees);
    if (!rc) rc = cli_commit(ctx);
    if (!rc && ctx->json) {
        json_t *o = json_object(), *list = json_array();
        json_object_set_new(o, "input", cli_json_string(path));
        for (uint32_t k = 0; splats && k < t.alphamap_count; k++) {
            char name[1100];
            snprintf(name, sizeof name, "%s%u.png", splats, k);
            json_array_append_new(list, cli_json_string(name));
        }
        json_object_set_new(o, "splat_files", list);
        json_object_set_new(o, "holes_file", holes ? cli_json_string(holes) : json_null());
        json_object_set_new(o, "trees_file", trees ? cli_json_string(trees) : json_null());
        json_object_set_new(o, "tree_count", json_integer(t.tree_count));
        cli_print_json(o);
    }
    trn_unity_terrain_dispose(&t);
    return rc;
}

static bool parse_position(cli_ctx *ctx, const char *text, double out[3])
{
    char *end;
    const char *p = text;
    for (int k = 0; k < 3; k++) {
        out[k] = strtod(p, &end);
        if (end == p || !isfinite(out[k]) || (k < 2 && *end != ',') || (k == 2 && *end)) {
            cli_usage_error(ctx, "--position takes X,Y,Z in metres, not '%s'", text);
            return false;
        }
        p = end + 1;
    }
    return true;
}

static int verb_export(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *dir = NULL;
    trn_unity_export_options o;
    trn_unity_export_options_default(&o);
    cli_load_options load;
    memset(&load, 0, sizeof load);
    bool no_splats = false, base_given = false, max_height_given = false, own_height = false;
    bool fit_given = false;
    cli_scale_options scale_opt;
    memset(&scale_opt, 0, sizeof scale_opt);
    /* --crs, --cell: a geographic DEM is reprojected onto square metres (fmt_geotiff.h). */
    cli_dem_options crs_opt;
    memset(&crs_opt, 0, sizeof crs_opt);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) return usage_help();
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        c = cli_scale_option(ctx, argc, argv, &i, &scale_opt);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        c = cli_crs_option(ctx, argc, argv, &i, &crs_opt);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (!strcmp(a, "--flip")) {
            o.flip = true;
            continue;
        }
        if (!strcmp(a, "--no-splats")) {
            no_splats = true;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            bool ok = true;
            if (!strcmp(a, "--name")) {
                if (!v[0] || strchr(v, '/'))
                    return cli_usage_error(ctx, "--name takes a file stem without '/', not '%s'",
                                           v);
                o.name = v;
            } else if (!strcmp(a, "--byte-order")) {
                if (!strcmp(v, "little") || !strcmp(v, "windows"))
                    o.big_endian = false;
                else if (!strcmp(v, "big") || !strcmp(v, "mac"))
                    o.big_endian = true;
                else
                    return cli_usage_error(ctx, "--byte-order takes little or big, not '%s'", v);
            } else if (!strcmp(a, "--resolution")) {
                ok = cli_parse_u32(ctx, a, v, &o.resolution);
                if (ok && !trn_unity_resolution_valid(o.resolution))
                    return cli_usage_error(ctx,
                                           "--resolution takes 2^n + 1 from 33 to 4097 (33, 65, "
                                           "129, 257, 513, 1025, 2049, 4097), not %s",
                                           v);
            } else if (!strcmp(a, "--fit")) {
                fit_given = true;
                if (!strcmp(v, "resample"))
                    o.fit = TRN_UNITY_FIT_RESAMPLE;
                else if (!strcmp(v, "pad"))
                    o.fit = TRN_UNITY_FIT_PAD;
                else
                    return cli_usage_error(ctx, "--fit takes resample or pad, not '%s'", v);
            } else if (!strcmp(a, "--tiles")) {
                ok = cli_parse_size(ctx, a, v, &o.tiles_x, &o.tiles_z);
                if (ok && (o.tiles_x < 1 || o.tiles_z < 1 || o.tiles_x > 64 || o.tiles_z > 64))
                    return cli_usage_error(ctx, "--tiles takes NxM with 1..64 each, not '%s'", v);
            } else if (!strcmp(a, "--height-base")) {
                ok = cli_parse_double(ctx, a, v, &o.height_base);
                base_given = true;
            } else if (!strcmp(a, "--height-size")) {
                ok = cli_parse_positive(ctx, a, v, &o.height_size);
            } else if (!strcmp(a, "--position")) {
                ok = parse_position(ctx, v, o.position);
            } else {
                c = cli_load_option(ctx, a, v, &load);
                if (c == 0) return cli_usage_error(ctx, "unknown option '%s'", a);
                ok = c > 0;
                if (!strcmp(a, "--max-height")) max_height_given = true;
            }
            if (!ok) return CLI_EXIT_USAGE;
        } else if (!in) {
            in = a;
        } else if (!dir) {
            dir = a;
        } else {
            return cli_usage_error(ctx, "takes IN and OUTDIR, got a third argument '%s'", a);
        }
    }
    if (!in || !dir) return cli_usage_error(ctx, "needs IN and OUTDIR");
    /* Keep the whole area by default: resampled onto the 2^n + 1 grid, the terrain keeps its
     * size in metres (Unity terrains need not be square); the samples are kept as they are when
     * they already fit. */
    if (!fit_given) o.fit = TRN_UNITY_FIT_RESAMPLE;
    if (cli_scale_given(&scale_opt) && (base_given || o.height_size > 0))
        return cli_usage_error(ctx,
                               "%s and --height-base/--height-size both set the RAW range; "
                               "give one",
                               cli_scale_given(&scale_opt));
    cli_format format = CLI_FORMAT_UNKNOWN;
    int rc = cli_sniff_file(ctx, in, &format);
    if (rc) return rc;
    if ((rc = cli_input(ctx, in))) return rc;
    if (!(o.writes = cli_write_set(ctx))) return CLI_EXIT_FAIL;
    cli_terrain t;
    trn_unity_terrain source;
    memset(&source, 0, sizeof source);
    bool has_source = false;
    trn_error e;
    if (format == CLI_FORMAT_UNITY) {
        /* A Unity asset: keep its soft splat weights, holes and trees, and its own height. */
        memset(&t, 0, sizeof t);
        if (trn_unity_terrain_read(in, NULL, &source, &e) != TRN_OK) return cli_fail(ctx, &e);
        has_source = true;
        if (trn_unity_terrain_to_field(&source, &t.field, &e) != TRN_OK) {
            trn_unity_terrain_dispose(&source);
            return cli_fail(ctx, &e);
        }
        /* Its own terrain height, so the Unity terrain keeps its size (unless told). */
        if (!(o.height_size > 0) && !base_given && !cli_scale_given(&scale_opt) &&
            !max_height_given) {
            o.height_base = 0;
            o.height_size = source.scale[1];
            own_height = true;
        }
    } else {
        rc = cli_load_terrain(ctx, in, &load, &t);
        if (rc) return rc;
        if ((rc = cli_dem_reproject(ctx, &crs_opt, &t))) {
            cli_terrain_dispose(&t);
            return rc;
        }
    }
    /* The RAW range: --height-base/--height-size as given, else convert's one 16-bit rule. */
    trn_height_scale scale = {o.height_base, o.height_size / 65535.0};
    const char *how = "--height-base/--height-size";
    if (base_given && !(o.height_size > 0)) {
        float lo, hi;
        trn_field_range(&t.field, &lo, &hi);
        scale.quantum = (hi > o.height_base ? (double)hi - o.height_base : 1.0) / 65535.0;
    } else if (!(o.height_size > 0)) {
        rc = cli_scale_choose(ctx, &scale_opt, max_height_given ? load.max_height : 0, &t.field,
                              &scale, &how);
        if (rc) {
            cli_terrain_dispose(&t);
            trn_unity_terrain_dispose(&source);
            return rc;
        }
    } else if (own_height) {
        how = "the Unity input's height";
    }
    o.height_base = scale.base;
    o.height_size = 65535.0 * scale.quantum;
    trn_height_levels levels;
    char raw_label[1100];
    snprintf(raw_label, sizeof raw_label, "%s/%s.raw", dir, o.name);
    if ((rc = cli_scale_report(ctx, raw_label, &t.field, &scale, &levels))) {
        cli_terrain_dispose(&t);
        trn_unity_terrain_dispose(&source);
        return rc;
    }
    if (no_splats) {
        if (has_source) {
            source.layer_count = 0;
            free(source.holes);
            source.holes = NULL;
            source.hole_count = 0;
        }
        t.has_labels = false;
    }
    const uint32_t in_x = t.field.cells_x + 1, in_z = t.field.cells_z + 1;
    trn_unity_export_report rep;
    trn_status st = trn_unity_export(dir, &t.field, t.has_labels ? &t.labels : NULL,
                                     has_source ? &source : NULL, &o, &rep, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    cli_terrain_dispose(&t);
    trn_unity_terrain_dispose(&source);
    if (st) return cli_fail(ctx, &e);
    const uint32_t out_x = rep.tiles_x * (rep.resolution - 1) + 1,
                   out_z = rep.tiles_z * (rep.resolution - 1) + 1;
    if (o.fit == TRN_UNITY_FIT_RESAMPLE && (out_x != in_x || out_z != in_z))
        cli_note(ctx,
                 "resampled %u x %u -> %u x %u samples (bilinear, --fit resample%s): the terrain "
                 "keeps its size in metres; --fit pad keeps the samples and grows it",
                 in_x, in_z, out_x, out_z, fit_given ? "" : ", the default");
    if ((rc = cli_commit(ctx))) return rc;
    if (ctx->json) {
        json_t *j = json_object();
        json_object_set_new(j, "output", cli_json_string(dir));
        json_object_set_new(j, "name", cli_json_string(o.name));
        json_object_set_new(j, "resolution", json_integer(rep.resolution));
        json_object_set_new(j, "tiles", json_pack("[ii]", (int)rep.tiles_x, (int)rep.tiles_z));
        json_t *size = json_array();
        for (int k = 0; k < 3; k++)
            json_array_append_new(size, json_real(rep.tile_size[k]));
        json_object_set_new(j, "tile_size", size);
        json_object_set_new(j, "height_base", json_real(rep.height_base));
        json_object_set_new(j, "byte_order", cli_json_string(o.big_endian ? "big" : "little"));
        json_object_set_new(j, "flip", json_boolean(o.flip));
        json_object_set_new(j, "splat_textures", json_integer(rep.splat_textures));
        json_object_set_new(j, "holes_written", json_boolean(rep.holes));
        json_object_set_new(j, "tree_count", json_integer(rep.trees));
        json_object_set_new(j, "heights", cli_scale_json(&scale, how, &levels));
        cli_print_json(j);
    } else {
        cli_note(ctx,
                 "wrote %u file(s) in %s: %u x %u terrain(s) of %u samples, each %g x %g x %g m "
                 "(Import Raw: Depth 16 bit, Byte Order %s, Flip Vertically %s)",
                 rep.files, dir, rep.tiles_x, rep.tiles_z, rep.resolution, rep.tile_size[0],
                 rep.tile_size[1], rep.tile_size[2], o.big_endian ? "Mac" : "Windows",
                 o.flip ? "on" : "off");
    }
    return CLI_EXIT_OK;
}

int cli_verb_unity(cli_ctx *ctx, int argc, char **argv)
{
    const int at = cli_sub_verb_at(ctx, argc, argv);
    if (at < 0) return CLI_EXIT_USAGE;
    if (at >= argc) return cli_usage_error(ctx, "needs a command: info, extract or export");
    if (cli_is_help(argv[at])) return usage_help();
    const char *cmd = argv[at];
    if (!strcmp(cmd, "info")) {
        ctx->verb = "unity info";
        return verb_info(ctx, argc - at, argv + at);
    }
    if (!strcmp(cmd, "extract")) {
        ctx->verb = "unity extract";
        return verb_extract(ctx, argc - at, argv + at);
    }
    if (!strcmp(cmd, "export")) {
        ctx->verb = "unity export";
        return verb_export(ctx, argc - at, argv + at);
    }
    return cli_usage_error(ctx, "unknown command '%s' (info, extract or export)", cmd);
}
