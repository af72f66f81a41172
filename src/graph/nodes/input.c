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

/* What the node prepares from its file for a world grid, once for every tile of a tiled run:
 * the decoded file (NoData filled over the whole file, which is why it is decoded whole), or
 * for an enlarging spline the spline's coefficients over the window's own samples. Every output
 * sample is then a fixed expression of its world position, so a tile's samples are the whole
 * grid's bits. */
typedef struct dem_prep {
    trn_heightfield_file hf;    /* the decoded file (its field disposed once a spline is made) */
    trn_spline_surface *spline; /* an enlarging spline; NULL: resample hf.field */
    trn_resample_window w;      /* the part of the file that covers the recipe */
    trn_resample_filter filter;
    uint32_t cells_x, cells_z; /* the world grid it is for */
    const char *param;         /* the window's parameter, NULL for the whole file */
    double ground_x, ground_z; /* the window's ground size */
} dem_prep;

static void prep_free(void *data)
{
    dem_prep *d = data;
    if (!d) return;
    trn_heightfield_file_dispose(&d->hf);
    trn_spline_surface_free(d->spline);
    free(d);
}

/* The window's own samples along each axis: spline enlarges from them when the world grid is
 * finer on both axes, and is bicubic otherwise. */
static void native_of(const trn_resample_window *w, uint32_t *nx, uint32_t *nz)
{
    const double wx = w->x1 - w->x0, wz = w->z1 - w->z0;
    *nx = wx < 1.0 ? 1u : (uint32_t)lround(wx);
    *nz = wz < 1.0 ? 1u : (uint32_t)lround(wz);
}

static trn_status prepare(const trn_node_ctx *c, const input_params *p, uint32_t cells_x,
                          uint32_t cells_z, dem_prep **out, trn_error *err)
{
    *out = NULL;
    const char *name = p->path;
    char resolved[4096];
    trn_status st = resolve(name, c->recipe, resolved, sizeof resolved, err);
    if (st) return trn_node_wrap(c, err, st);
    dem_prep *d = calloc(1, sizeof *d);
    if (!d) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    d->cells_x = cells_x;
    d->cells_z = cells_z;
    trn_mapped_file mf;
    if ((st = trn_mapped_file_open(&mf, resolved, 0, err))) {
        prep_free(d);
        return reader_fail(c, name, err, st);
    }
    trn_heightfield_read_options o;
    read_options(p, &o);
    st = trn_heightfield_decode(mf.data, mf.size, name, &o, &d->hf, trn_node_bridge,
                                (void *)c->progress, err);
    trn_mapped_file_close(&mf);
    if (st) {
        prep_free(d);
        return reader_fail(c, name, err, st);
    }
    char msg[400];
    if (!window_of(p, &d->hf.info, &d->w, &d->param, msg, sizeof msg)) {
        prep_free(d);
        return trn_node_fail(c, err, TRN_ERR_VALIDATION, msg);
    }
    const char *filter_name = p->resample;
    d->filter = strcmp(filter_name, "bicubic") == 0   ? TRN_RESAMPLE_BICUBIC
                : strcmp(filter_name, "average") == 0 ? TRN_RESAMPLE_AVERAGE
                : strcmp(filter_name, "spline") == 0  ? TRN_RESAMPLE_BICUBIC
                                                      : TRN_RESAMPLE_BILINEAR;
    /* The window's ground size (metres for a georeferenced DEM, pixels otherwise). */
    const trn_field *f = &d->hf.field;
    d->ground_x = f->size_x * (d->w.x1 - d->w.x0) / f->cells_x;
    d->ground_z = f->size_z * (d->w.z1 - d->w.z0) / f->cells_z;
    uint32_t native_x, native_z;
    native_of(&d->w, &native_x, &native_z);
    if (strcmp(filter_name, "spline") == 0 && cells_x > native_x && cells_z > native_z) {
        trn_field coarse;
        st = trn_field_resample(f, &d->w, native_x, native_z, TRN_RESAMPLE_BICUBIC, &coarse,
                                trn_node_bridge, (void *)c->progress, err);
        /* The file is not read again: only the coefficients stay. */
        trn_field_dispose(&d->hf.field);
        if (!st) {
            /* The warp's phases from the node's id and the recipe's seed: stable per node. */
            const uint64_t seed = XXH64(c->node->id, strlen(c->node->id), c->recipe->seed);
            st = trn_spline_surface_make(&coarse, cells_x, cells_z, seed, &d->spline, err);
            trn_field_dispose(&coarse);
        }
        if (st) {
            prep_free(d);
            return trn_node_wrap(c, err, st);
        }
    }
    *out = d;
    return TRN_OK;
}

static trn_status input_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    input_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(input_fields), &p);
    /* The world grid and where this result's samples sit on it (a tile, or all of it). */
    const trn_grid_window *win = c->window;
    const uint32_t cells_x = win ? win->world_cells_x : r->cells_x,
                   cells_z = win ? win->world_cells_z : r->cells_z;
    const uint32_t i0 = win ? win->x0 : 0u, j0 = win ? win->z0 : 0u;
    const uint32_t nx = r->cells_x + 1u, nz = r->cells_z + 1u;
    dem_prep *d = c->keep ? c->keep->data : NULL;
    trn_status st = TRN_OK;
    if (!d || d->cells_x != cells_x || d->cells_z != cells_z) {
        if ((st = prepare(c, &p, cells_x, cells_z, &d, err))) return st;
        if (c->keep) {
            if (c->keep->dispose) c->keep->dispose(c->keep->data);
            c->keep->data = d;
            c->keep->dispose = prep_free;
        }
    }
    const size_t count = trn_node_samples(r);
    float *dst = malloc((count ? count : 1u) * sizeof *dst);
    if (!dst)
        st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    else if (d->spline)
        st = trn_spline_surface_sample(d->spline, i0, j0, nx, nz, dst, err);
    else
        st = trn_field_resample_part(&d->hf.field, &d->w, cells_x, cells_z, d->filter, i0, j0, nx,
                                     nz, dst, err);
    const trn_heightfield_info info = d->hf.info;
    const uint64_t filled = d->hf.filled;
    const double ground_x = d->ground_x, ground_z = d->ground_z;
    const char *param = d->param;
    if (!c->keep) prep_free(d);
    if (st) {
        free(dst);
        return dst ? trn_node_wrap(c, err, st) : st;
    }
    const double scale = p.height_scale, offset = p.height_offset;
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t k = 0; k < count; k++) {
        const double v = (double)dst[k] * scale + offset;
        dst[k] = (float)v;
        lo = fmin(lo, dst[k]);
        hi = fmax(hi, dst[k]);
    }
    char fill[48] = ""; /* "; " + 20 digits + " NoData samples filled" */
    if (filled)
        snprintf(fill, sizeof fill, "; %" PRIu64 " NoData sample%s filled", filled,
                 filled == 1 ? "" : "s");
    snprintf(r->note, sizeof r->note,
             "%.60s: %s %ux%u, %s%.6g x %.6g %s onto %.6g x %.6g; heights %.6g..%.6g m%s", p.path,
             trn_heightfield_format_name(info.format), info.width, info.height,
             param ? "window " : "", ground_x, ground_z, info.has_georef ? "m" : "pixels",
             r->size_x, r->size_z, lo, hi, fill);
    return trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, dst, err);
}

uint64_t trn_node_kept_bytes(const trn_graph_node *n, const trn_node_type *t,
                             const trn_recipe *recipe)
{
    if (!t || t != &trn_node_heightfield_input.type || !recipe) return 0;
    input_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(input_fields), &p);
    char resolved[4096];
    if (resolve(p.path, recipe, resolved, sizeof resolved, NULL)) return 0;
    trn_mapped_file mf;
    if (trn_mapped_file_open(&mf, resolved, 0, NULL)) return 0;
    trn_heightfield_read_options o;
    read_options(&p, &o);
    trn_heightfield_info info;
    const trn_status st = trn_heightfield_probe(mf.data, mf.size, p.path, &o, &info, NULL);
    const uint64_t file_bytes = mf.size;
    trn_mapped_file_close(&mf);
    if (st) return 0;
    /* While it decodes: the file's pages, the reader's pixels (a float for a GeoTIFF or an
     * R32, 16 bits for an R16, heights and a material byte for a .ter, four channels for a
     * PNG) and the float field they become, which stays (measured: an R16 of 4097^2 in tiles). */
    const uint64_t pixels = (uint64_t)info.width * info.height;
    uint64_t decoded = 4u;
    if (info.format == TRN_HEIGHTFIELD_R16 || info.format == TRN_HEIGHTFIELD_R16_BE) decoded = 2u;
    if (info.format == TRN_HEIGHTFIELD_TER) decoded = 3u;
    if (info.format == TRN_HEIGHTFIELD_PNG) decoded = 4u * (info.bit_depth > 8 ? 2u : 1u);
    uint64_t bytes = file_bytes + pixels * (decoded + sizeof(float));
    trn_resample_window w;
    const char *param;
    char msg[8];
    uint32_t native_x, native_z;
    if (strcmp(p.resample, "spline") == 0 && window_of(&p, &info, &w, &param, msg, sizeof msg)) {
        native_of(&w, &native_x, &native_z);
        /* An enlarging spline makes, beside the field, the window's samples (a float each) and
         * the spline's coefficients (a double each), which it keeps. */
        const uint64_t spline = pixels * sizeof(float) + ((uint64_t)native_x + 1u) *
                                                             (native_z + 1u) *
                                                             (sizeof(float) + sizeof(double));
        if (recipe->cells_x > native_x && recipe->cells_z > native_z && spline > bytes)
            bytes = spline;
    }
    return bytes;
}

/* Each sample is resampled from the file at its own world position: no neighbour's sample is
 * read, so a tile needs no halo (the file itself is kept once for every tile). */
static void input_reach(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                        trn_node_reach *out)
{
    trn_reach_pointwise(n, t, recipe, out);
    snprintf(out->why, sizeof out->why,
             "each sample resampled from the file at its world position (the decoded file kept "
             "once for every tile)");
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
    input_reach};
