/* Heightfield Input: a heightfield file (DEM, PNG, R16/R32, .ter) placed on the recipe's grid. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "graph/nodes/node_common.h"
#include "terrane/heightfield.h"
#include "terrane/resample.h"

#define OPT_VEC(n, len, lo, hi, desc)                                                              \
    {                                                                                              \
        n, TRN_PARAM_VECTOR, true, 0, lo, hi, false, NULL, NULL, len, desc, NULL                   \
    }

static const trn_pin_spec out_field[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "the file's heights on the recipe's grid"}};

static const trn_param_spec p_input[] = {
    OPT_STR("path", "the heightfield file, relative to the recipe's folder (required)"),
    CHOICE("format", "auto", "auto|geotiff|png|r16|r16be|r32|ter",
           "the file's format; auto = from its content, then its ending (.r16/.raw, .r32)"),
    OPT_INT("raw_width", 2, 65536, "headerless rasters: pixels per row; absent = a square"),
    OPT_INT("raw_height", 2, 65536, "headerless rasters: rows; absent = a square"),
    POS("max_height", 2048, 0, TRN_BIG,
        "metres of the full 16-bit range of .ter, PNG and R16 files (BeamNG's maxHeight)"),
    OPT_VEC("pixel_window", 4, 0, 65535,
            "[col0, row0, col1, row1]: the part of the file (pixel centres, row 0 north) that "
            "covers the recipe's extent; absent = the whole file"),
    OPT_VEC("crs_window", 4, -TRN_BIG, TRN_BIG,
            "[min_x, min_y, max_x, max_y] in a georeferenced DEM's CRS units: the part that "
            "covers the recipe's extent"),
    NUM("height_scale", 1, -TRN_BIG, TRN_BIG, "heights are multiplied by this, then offset"),
    NUM("height_offset", 0, -TRN_BIG, TRN_BIG, "metres added after the scale"),
    CHOICE("resample", "bilinear", "bilinear|bicubic|average|spline",
           "filter onto the recipe's cells (average for shrinking by a large factor; spline "
           "enlarges by a warped C2 spline that leaves no crease along the file's grid)"),
};

/* The parameters, one row each (the format and the filter by name: their parsers). */
typedef struct input_params {
    const char *path;
    bool path_given;
    const char *format;
    bool raw_width_given, raw_height_given;
    uint32_t raw_width, raw_height;
    double max_height;
    trn_param_points pixel_window, crs_window; /* four numbers each when given */
    bool pixel_window_given, crs_window_given;
    double height_scale, height_offset;
    const char *resample;
} input_params;

#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, input_params, member)
static const trn_param_field input_fields[] = {
    ROW("path", TEXT, path),
    ROW("path", GIVEN, path_given),
    ROW("format", TEXT, format),
    ROW("raw_width", NUMBER_GIVEN, raw_width_given),
    ROW("raw_width", U32, raw_width),
    ROW("raw_height", NUMBER_GIVEN, raw_height_given),
    ROW("raw_height", U32, raw_height),
    ROW("max_height", DOUBLE, max_height),
    TRN_PARAM_POINTS_ROW("pixel_window", input_params, pixel_window, 1),
    ROW("pixel_window", GIVEN, pixel_window_given),
    TRN_PARAM_POINTS_ROW("crs_window", input_params, crs_window, 1),
    ROW("crs_window", GIVEN, crs_window_given),
    ROW("height_scale", DOUBLE, height_scale),
    ROW("height_offset", DOUBLE, height_offset),
    ROW("resample", TEXT, resample),
};
/* What the key reads: the file's name. */
static const trn_param_field path_fields[] = {ROW("path", TEXT, path)};
#undef ROW

static void read_options(const input_params *p, trn_heightfield_read_options *o)
{
    memset(o, 0, sizeof *o);
    trn_heightfield_format_parse(p->format, &o->format);
    if (p->raw_width_given) o->raw_width = p->raw_width;
    if (p->raw_height_given) o->raw_height = p->raw_height;
    o->max_height = p->max_height;
}

/* The part of the file (field sample coordinates, row 0 south) that covers the recipe: the
 * whole file, the pixel window or the CRS window. False with why in msg. */
static bool window_of(const input_params *p, const trn_heightfield_info *info,
                      trn_resample_window *w, const char **param, char *msg, size_t msg_size)
{
    const double maxc = info->width - 1.0, maxr = info->height - 1.0;
    const double *v;
    *param = NULL;
    w->x0 = 0;
    w->z0 = 0;
    w->x1 = maxc;
    w->z1 = maxr;
    double c0, r0, c1, r1; /* pixel centres, row 0 north */
    if (p->pixel_window.v && p->pixel_window.count == 4) {
        v = p->pixel_window.v;
        *param = "pixel_window";
        c0 = v[0];
        r0 = v[1];
        c1 = v[2];
        r1 = v[3];
    } else if (p->crs_window.v && p->crs_window.count == 4) {
        v = p->crs_window.v;
        *param = "crs_window";
        if (!info->has_georef) {
            snprintf(msg, msg_size,
                     "crs_window: the file is not georeferenced (a %s without a raster-to-CRS "
                     "transform); use pixel_window",
                     trn_heightfield_format_name(info->format));
            return false;
        }
        if (!(v[0] < v[2] && v[1] < v[3])) {
            snprintf(msg, msg_size, "crs_window: expected min_x < max_x and min_y < max_y");
            return false;
        }
        /* The box's corners in pixel-centre coordinates; a rotated raster takes their bounds. */
        c0 = r0 = HUGE_VAL;
        c1 = r1 = -HUGE_VAL;
        for (int k = 0; k < 4; k++) {
            double col, row;
            if (!trn_geotiff_model_to_pixel(&info->georef, v[k & 1 ? 2 : 0], v[k & 2 ? 3 : 1], &col,
                                            &row)) {
                snprintf(msg, msg_size, "crs_window: the file's transform cannot be inverted");
                return false;
            }
            c0 = fmin(c0, col - 0.5);
            c1 = fmax(c1, col - 0.5);
            r0 = fmin(r0, row - 0.5);
            r1 = fmax(r1, row - 0.5);
        }
        /* Rounding in the transform must not refuse a window drawn on the outer pixels. */
        const double eps = 1e-6;
        if (c0 < 0 && c0 > -eps) c0 = 0;
        if (r0 < 0 && r0 > -eps) r0 = 0;
        if (c1 > maxc && c1 < maxc + eps) c1 = maxc;
        if (r1 > maxr && r1 < maxr + eps) r1 = maxr;
    } else {
        return true;
    }
    if (!(c0 < c1 && r0 < r1)) {
        snprintf(msg, msg_size, "%s: expected col0 < col1 and row0 < row1, found %g..%g, %g..%g",
                 *param, c0, c1, r0, r1);
        return false;
    }
    if (c0 < 0 || r0 < 0 || c1 > maxc || r1 > maxr) {
        snprintf(msg, msg_size,
                 "%s: pixel centres %g..%g x %g..%g reach outside the file's %u x %u pixels "
                 "(centres 0..%g x 0..%g)",
                 *param, c0, c1, r0, r1, info->width, info->height, maxc, maxr);
        return false;
    }
    w->x0 = c0;
    w->x1 = c1;
    w->z0 = maxr - r1;
    w->z1 = maxr - r0;
    return true;
}

/* The path resolved against the recipe's folder (errors say which rule failed). */
static trn_status resolve(const char *path, const trn_recipe *recipe, char *resolved, size_t size,
                          trn_error *err)
{
    if (!path)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "path: required: the heightfield file to read, relative to the "
                             "recipe's folder");
    return trn_heightfield_path_resolve(recipe ? recipe->base_dir : NULL, path, resolved, size,
                                        err);
}

static void input_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                        const trn_node_type *t)
{
    char path[64];
    snprintf(path, sizeof path, "nodes[%u].params.path", index);
    const trn_recipe *recipe = trn_check_recipe(c);
    input_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(input_fields), &p);
    const char *name = p.path;
    if (p.pixel_window_given && p.crs_window_given) {
        snprintf(path, sizeof path, "nodes[%u].params.crs_window", index);
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, "crs_window", path,
                       "crs_window: give pixel_window or crs_window, not both");
        return;
    }
    /* A path that is not a string was reported by the parameter's own check. */
    if (!name && p.path_given) return;
    char resolved[4096];
    trn_error e;
    trn_error_clear(&e);
    /* Without a recipe (a graph document of its own, the starter) there is no folder to look
     * in: only the path's own rules are checked. */
    trn_status st = recipe ? resolve(name, recipe, resolved, sizeof resolved, &e)
                    : name ? trn_heightfield_path_check(name, &e)
                           : resolve(name, NULL, resolved, sizeof resolved, &e);
    if (!st && !recipe) return;
    if (st) {
        if (!name) snprintf(path, sizeof path, "nodes[%u]", index); /* where the node is */
        trn_check_diag(c, TRN_GRAPH_ERROR,
                       st == TRN_ERR_INVALID_ARGUMENT ? "input-path" : "input-file", n, "path",
                       path, "%s%.400s", name ? "path: " : "", e.message);
        return;
    }
    /* The header, read now, so a draft shows an unreadable file before anything runs. */
    trn_mapped_file mf;
    if ((st = trn_mapped_file_open(&mf, resolved, 0, &e))) {
        trn_check_diag(c, TRN_GRAPH_ERROR, "input-file", n, "path", path,
                       "path: cannot read '%.200s' (%.200s): %.300s", name, resolved, e.message);
        return;
    }
    trn_heightfield_read_options o;
    read_options(&p, &o);
    trn_heightfield_info info;
    st = trn_heightfield_probe(mf.data, mf.size, name, &o, &info, &e);
    trn_mapped_file_close(&mf);
    if (st) {
        char where[64] = "";
        if (e.offset >= 0) snprintf(where, sizeof where, "offset %" PRId64 ": ", e.offset);
        trn_check_diag(c, TRN_GRAPH_ERROR, "input-file", n, "path", path,
                       "path: cannot read '%.200s' (%.200s): %s%.300s", name, resolved, where,
                       e.message);
        return;
    }
    trn_resample_window w;
    const char *param;
    char msg[400];
    if (!window_of(&p, &info, &w, &param, msg, sizeof msg)) {
        snprintf(path, sizeof path, "nodes[%u].params.%s", index, param);
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, param, path, "%s", msg);
    }
}

static void input_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                      const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)quality;
    /* The file's bytes, not its name: replacing a DEM under the same name makes a new key. */
    input_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(path_fields), &p);
    char resolved[4096];
    trn_mapped_file mf;
    uint64_t content[2] = {0, 0};
    if (!resolve(p.path, recipe, resolved, sizeof resolved, NULL) &&
        !trn_mapped_file_open(&mf, resolved, 0, NULL)) {
        content[0] = (uint64_t)mf.size + 1u;
        content[1] = XXH64(mf.data, mf.size, 0);
        trn_mapped_file_close(&mf);
    }
    XXH64_update(h, "file", 5);
    XXH64_update(h, content, sizeof content);
}

/* "node 'dem' (heightfield_input): dem.tif: offset 8: what the reader said". */
static trn_status reader_fail(const trn_node_ctx *c, const char *name, trn_error *err,
                              trn_status st)
{
    if (err) {
        char what[sizeof err->message];
        if (err->offset >= 0)
            snprintf(what, sizeof what, "%.150s: offset %" PRId64 ": %.300s", name, err->offset,
                     err->message);
        else
            snprintf(what, sizeof what, "%.200s: %.300s", name, err->message);
        memcpy(err->message, what, sizeof what);
    }
    return trn_node_wrap(c, err, st);
}

static trn_status input_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    input_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(input_fields), &p);
    const char *name = p.path;
    char resolved[4096];
    trn_status st = resolve(name, c->recipe, resolved, sizeof resolved, err);
    if (st) return trn_node_wrap(c, err, st);
    trn_mapped_file mf;
    if ((st = trn_mapped_file_open(&mf, resolved, 0, err))) return reader_fail(c, name, err, st);
    trn_heightfield_read_options o;
    read_options(&p, &o);
    trn_heightfield_file hf;
    st = trn_heightfield_decode(mf.data, mf.size, name, &o, &hf, trn_node_bridge,
                                (void *)c->progress, err);
    trn_mapped_file_close(&mf);
    if (st) return reader_fail(c, name, err, st);
    trn_resample_window w;
    const char *param;
    char msg[400];
    if (!window_of(&p, &hf.info, &w, &param, msg, sizeof msg)) {
        trn_heightfield_file_dispose(&hf);
        return trn_node_fail(c, err, TRN_ERR_VALIDATION, msg);
    }
    const char *filter_name = p.resample;
    const trn_resample_filter filter = strcmp(filter_name, "bicubic") == 0 ? TRN_RESAMPLE_BICUBIC
                                       : strcmp(filter_name, "average") == 0
                                           ? TRN_RESAMPLE_AVERAGE
                                           : TRN_RESAMPLE_BILINEAR;
    trn_field dst;
    /* The window's own samples along each axis: spline enlarges from them when the recipe's
     * grid is finer, and is bicubic otherwise. */
    const double wx = w.x1 - w.x0, wz = w.z1 - w.z0;
    const uint32_t native_x = wx < 1.0 ? 1u : (uint32_t)lround(wx),
                   native_z = wz < 1.0 ? 1u : (uint32_t)lround(wz);
    if (strcmp(filter_name, "spline") == 0 && r->cells_x > native_x && r->cells_z > native_z) {
        trn_field coarse;
        st = trn_field_resample(&hf.field, &w, native_x, native_z, TRN_RESAMPLE_BICUBIC, &coarse,
                                trn_node_bridge, (void *)c->progress, err);
        if (!st) {
            /* The warp's phases from the node's id and the recipe's seed: stable per node. */
            const uint64_t seed = XXH64(c->node->id, strlen(c->node->id), c->recipe->seed);
            st = trn_field_upsample_spline(&coarse, r->cells_x, r->cells_z, seed, &dst, err);
            trn_field_dispose(&coarse);
        }
    } else {
        st = trn_field_resample(&hf.field, &w, r->cells_x, r->cells_z,
                                strcmp(filter_name, "spline") == 0 ? TRN_RESAMPLE_BICUBIC : filter,
                                &dst, trn_node_bridge, (void *)c->progress, err);
    }
    /* The window's ground size (metres for a georeferenced DEM, pixels otherwise). */
    const double ground_x = hf.field.size_x * (w.x1 - w.x0) / hf.field.cells_x,
                 ground_z = hf.field.size_z * (w.z1 - w.z0) / hf.field.cells_z;
    const trn_heightfield_info info = hf.info;
    const uint64_t filled = hf.filled;
    trn_heightfield_file_dispose(&hf);
    if (st) return trn_node_wrap(c, err, st);
    const double scale = p.height_scale, offset = p.height_offset;
    const size_t count = trn_node_samples(r);
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t k = 0; k < count; k++) {
        const double v = (double)dst.heights[k] * scale + offset;
        dst.heights[k] = (float)v;
        lo = fmin(lo, dst.heights[k]);
        hi = fmax(hi, dst.heights[k]);
    }
    char fill[80] = "";
    if (filled)
        snprintf(fill, sizeof fill, "; %" PRIu64 " NoData sample%s filled", filled,
                 filled == 1 ? "" : "s");
    snprintf(r->note, sizeof r->note,
             "%.60s: %s %ux%u, %s%.6g x %.6g %s onto %.6g x %.6g; heights %.6g..%.6g m%s", name,
             trn_heightfield_format_name(info.format), info.width, info.height,
             param ? "window " : "", ground_x, ground_z, info.has_georef ? "m" : "pixels",
             r->size_x, r->size_z, lo, hi, fill);
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, dst.heights, err);
    dst.heights = NULL;
    return st;
}

const trn_node_module trn_node_heightfield_input = {
    {"heightfield_input", "Heightfield Input", "generator",
     "Heights read from a file (GeoTIFF DEM, 8/16-bit PNG, R16 or Unity RAW, R32, BeamNG .ter), "
     "a window of it stretched onto the recipe's extent and resampled to its cells.",
     1, NULL, 0, out_field, TRN_COUNT(out_field), p_input, TRN_COUNT(p_input), false},
    2.0,
    false,
    input_compute,
    input_key,
    NULL,
    input_check,
    trn_reach_global};
