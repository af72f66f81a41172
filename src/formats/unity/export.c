/* Export for Unity's Terrain import: 16-bit RAW tiles with shared edges, splat PNGs, holes, trees,
 * metadata. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/fileio.h"
#include "core/write_set.h"
#include "terrane/image.h"
#include "terrane/resample.h"
#include "unity_internal.h"

#define UE_MAX_TILES 64u

void trn_unity_export_options_default(trn_unity_export_options *options)
{
    memset(options, 0, sizeof *options);
    options->name = "terrain";
    options->tiles_x = 1;
    options->tiles_z = 1;
}

bool trn_unity_resolution_valid(uint32_t samples)
{
    if (samples < 33 || samples > 4097) return false;
    uint32_t cells = samples - 1;
    return (cells & (cells - 1)) == 0;
}

/* The smallest 2^n + 1 (33..4097) with tiles * (R - 1) + 1 >= samples; 0 when none. */
static uint32_t smallest_resolution(uint32_t samples, uint32_t tiles)
{
    for (uint32_t r = 33; r <= 4097; r = (r - 1) * 2 + 1)
        if ((uint64_t)tiles * (r - 1) + 1 >= samples) return r;
    return 0;
}

/* The export in progress: the working grid (TX x TZ samples) and how it maps to the input. */
typedef struct ue_ctx {
    const trn_field *field;
    const trn_labels *labels;
    const trn_unity_terrain *source;
    const trn_unity_export_options *opt;
    const char *dir;
    trn_write_set *ws;
    trn_error *err;
    uint32_t sx, sz; /* input samples */
    uint32_t tx_samples, tz_samples;
    /* The whole terrain's working samples (a piece's trees and detail points are the whole
     * terrain's), and the piece's first working sample in it. */
    uint32_t all_samples_x, all_samples_z, piece_x, piece_z;
    uint32_t res;
    float *grid;
    double spacing_x, spacing_z;
    double base, size_y;
    uint32_t layer_count;
    bool holes;
    uint32_t files;
    uint64_t detail_points, detail_clamped;
} ue_ctx;

/* Input sample coordinate of a working-grid coordinate (resample stretches, pad keeps). */
static double src_x(const ue_ctx *c, double g)
{
    if (c->opt->fit == TRN_UNITY_FIT_RESAMPLE && c->tx_samples != c->sx)
        return g * (double)(c->sx - 1) / (double)(c->tx_samples - 1);
    return g < (double)(c->sx - 1) ? g : (double)(c->sx - 1);
}

static double src_z(const ue_ctx *c, double g)
{
    if (c->opt->fit == TRN_UNITY_FIT_RESAMPLE && c->tz_samples != c->sz)
        return g * (double)(c->sz - 1) / (double)(c->tz_samples - 1);
    return g < (double)(c->sz - 1) ? g : (double)(c->sz - 1);
}

static float field_at(const trn_field *f, uint32_t i, uint32_t j)
{
    return f->heights[(size_t)j * (f->cells_x + 1u) + i];
}

static float field_bilinear(const trn_field *f, double x, double z)
{
    uint32_t x0 = (uint32_t)x, z0 = (uint32_t)z;
    if (x0 >= f->cells_x) x0 = f->cells_x - 1;
    if (z0 >= f->cells_z) z0 = f->cells_z - 1;
    double fx = x - x0, fz = z - z0;
    double a = field_at(f, x0, z0) + (field_at(f, x0 + 1, z0) - field_at(f, x0, z0)) * fx;
    double b =
        field_at(f, x0, z0 + 1) + (field_at(f, x0 + 1, z0 + 1) - field_at(f, x0, z0 + 1)) * fx;
    return (float)(a + (b - a) * fz);
}

/* The label of the input cell holding the point (x, z) in input samples: sample (i, j) labels
 * cell (i, j), the square from it to (i + 1, j + 1) (as a .ter's layer map and
 * trn_unity_terrain_to_labels do). A point on a cell border belongs to the cell after it. */
static uint8_t label_of_cell(const ue_ctx *c, double x, double z)
{
    uint32_t i = (uint32_t)floor(x), j = (uint32_t)floor(z);
    if (i > c->sx - 2) i = c->sx - 2;
    if (j > c->sz - 2) j = c->sz - 2;
    return c->labels->values[(size_t)j * c->sx + i];
}

/* Is the working-grid cell (ci, cj) (global indices) a hole? */
static bool cell_hole(const ue_ctx *c, uint32_t ci, uint32_t cj)
{
    /* The cell's centre, in input samples: inside exactly one input cell. */
    double x = src_x(c, ci + 0.5), z = src_z(c, cj + 0.5);
    if (c->source && c->source->holes) {
        uint32_t cells = c->source->resolution - 1;
        uint32_t i = (uint32_t)x, j = (uint32_t)z;
        if (i >= cells) i = cells - 1;
        if (j >= cells) j = cells - 1;
        return c->source->holes[(size_t)j * cells + i] == 0;
    }
    if (c->labels) return label_of_cell(c, x, z) == TRN_LABEL_NONE;
    return false;
}

static trn_status write_json(ue_ctx *c, const char *path, json_t *doc)
{
    char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(doc);
    if (!text) return trn_error_set(c->err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    size_t n = strlen(text);
    text[n] = '\n'; /* replaces the NUL: the buffer is written by length */
    const char *target = NULL;
    trn_status st = trn_write_target(c->ws, path, &target, c->err);
    if (!st) st = trn_file_write_atomic(target, text, n + 1, c->err);
    free(text);
    if (!st) c->files++;
    return st;
}

static trn_status write_raw(ue_ctx *c, const char *path, uint32_t ox, uint32_t oz)
{
    uint32_t r = c->res;
    size_t bytes = (size_t)r * r * 2u;
    uint8_t *buf = malloc(bytes);
    if (!buf) return trn_error_set(c->err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    double k = 65535.0 / c->size_y;
    for (uint32_t row = 0; row < r; row++) {
        uint32_t j = c->opt->flip ? r - 1 - row : row;
        const float *src = c->grid + (size_t)(oz + j) * c->tx_samples + ox;
        uint8_t *dst = buf + (size_t)row * r * 2u;
        for (uint32_t i = 0; i < r; i++) {
            double v = ((double)src[i] - c->base) * k;
            uint16_t u = !(v > 0) ? 0 : v >= 65535.0 ? 65535 : (uint16_t)floor(v + 0.5);
            if (c->opt->big_endian) {
                dst[2 * i] = (uint8_t)(u >> 8);
                dst[2 * i + 1] = (uint8_t)u;
            } else {
                dst[2 * i] = (uint8_t)u;
                dst[2 * i + 1] = (uint8_t)(u >> 8);
            }
        }
    }
    const char *target = NULL;
    trn_status st = trn_write_target(c->ws, path, &target, c->err);
    if (!st) st = trn_file_write_atomic(target, buf, bytes, c->err);
    free(buf);
    if (!st) c->files++;
    return st;
}

/* Weights of every layer at a working-grid point, as bytes summing to 255 (largest remainder,
 * ties to the lower layer); all weight on layer 0 where there is none. Alpha-map texel (i, j)
 * covers cell (i, j) of the terrain (Unity spreads alphamapResolution texels over the whole
 * terrain, texel centres at (k + 0.5) / resolution), so it is asked for at the cell's centre
 * (gx, gz) = (i + 0.5, j + 0.5). */
static void texel_weights(const ue_ctx *c, double gx, double gz, uint8_t *out, double *tmp)
{
    uint32_t n = c->layer_count;
    double x = src_x(c, gx), z = src_z(c, gz), sum = 0;
    if (c->source) {
        double u = x / (double)(c->sx - 1), v = z / (double)(c->sz - 1);
        for (uint32_t k = 0; k < n; k++)
            sum += tmp[k] = trn_unity_terrain_weight(c->source, k, u, v);
    } else {
        uint8_t l = label_of_cell(c, x, z);
        for (uint32_t k = 0; k < n; k++)
            sum += tmp[k] = (k == l) ? 1.0 : 0.0;
    }
    if (!(sum > 0)) {
        memset(out, 0, n);
        out[0] = 255;
        return;
    }
    uint32_t given = 0;
    for (uint32_t k = 0; k < n; k++) {
        double share = tmp[k] / sum * 255.0;
        out[k] = (uint8_t)floor(share);
        tmp[k] = share - out[k];
        given += out[k];
    }
    while (given < 255) {
        uint32_t best = 0;
        for (uint32_t k = 1; k < n; k++)
            if (tmp[k] > tmp[best]) best = k;
        out[best]++;
        tmp[best] = -1.0;
        given++;
    }
}

/* The mapping in Unity's terms: its terrain shaders' height-based blend (Enable Height-based
 * Blend, Height Transition) and, for a custom shader, triplanar, macro variation and arrays. */
static json_t *mapping_json(const trn_material_mapping *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "enable_height_based_blend", json_boolean(m->height_blend));
    json_object_set_new(o, "height_transition", json_real(m->height_blend_contrast));
    json_object_set_new(o, "triplanar", m->triplanar ? json_pack("{s:f, s:f}", "slope",
                                                                 m->triplanar_slope, "sharpness",
                                                                 m->triplanar_sharpness)
                                                     : json_false());
    json_object_set_new(o, "macro_variation",
                        json_pack("{s:f, s:f}", "strength", m->macro_variation, "scale",
                                  m->macro_scale));
    json_object_set_new(o, "texture_arrays", json_boolean(m->texture_arrays));
    return o;
}

/* Each splat layer's TerrainLayer: its textures (null where none), tile size and document. */
static json_t *terrain_layers_json(const trn_unity_terrain_layer *tl, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t k = 0; k < n; k++) {
        const trn_unity_terrain_layer *l = &tl[k];
        json_t *o = json_object();
        json_object_set_new(o, "diffuse", l->diffuse ? json_string(l->diffuse) : json_null());
        json_object_set_new(o, "normal", l->normal ? json_string(l->normal) : json_null());
        json_object_set_new(o, "mask", l->mask ? json_string(l->mask) : json_null());
        json_object_set_new(o, "tile_size", json_pack("[f, f]", l->tile_size, l->tile_size));
        json_object_set_new(o, "document", l->document ? json_string(l->document) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

static trn_status write_splats(ue_ctx *c, const char *stem, uint32_t ox, uint32_t oz, json_t *files)
{
    uint32_t a = c->res - 1, n = c->layer_count, textures = (n + 3) / 4;
    trn_image *imgs = calloc(textures, sizeof *imgs);
    uint8_t *w = malloc(n);
    double *tmp = malloc(n * sizeof *tmp);
    trn_status st = TRN_OK;
    if (!imgs || !w || !tmp)
        st = trn_error_set(c->err, TRN_ERR_NO_MEMORY, stem, -1, "out of memory");
    for (uint32_t t = 0; !st && t < textures; t++)
        st = trn_image_init(&imgs[t], a, a, 4, 8, c->err);
    for (uint32_t b = 0; !st && b < a; b++)
        for (uint32_t i = 0; i < a; i++) {
            texel_weights(c, ox + i + 0.5, oz + b + 0.5, w, tmp);
            /* PNG row 0 is the far (max z) edge, as Unity's texture import expects. */
            size_t at = ((size_t)(a - 1 - b) * a + i) * 4u;
            for (uint32_t k = 0; k < n; k++)
                ((uint8_t *)imgs[k / 4].data)[at + k % 4] = w[k];
        }
    trn_png_options po;
    trn_png_options_default(&po);
    for (uint32_t t = 0; !st && t < textures; t++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s_splat%u.png", c->dir, stem, t);
        const char *target = NULL;
        st = trn_write_target(c->ws, path, &target, c->err);
        if (!st) st = trn_png_write(target, &imgs[t], &po, NULL, NULL, c->err);
        if (!st) {
            c->files++;
            char name[600];
            snprintf(name, sizeof name, "%s_splat%u.png", stem, t);
            json_array_append_new(files, json_string(name));
        }
    }
    for (uint32_t t = 0; imgs && t < textures; t++)
        trn_image_dispose(&imgs[t]);
    free(imgs);
    free(w);
    free(tmp);
    return st;
}

/* The working-grid cell holding a detail point, or false when it lies outside or is not finite.
 * A point on a cell border belongs to the cell after it; the far edges to the last cell. */
static bool detail_cell(const ue_ctx *c, double x, double z, uint32_t *ci, uint32_t *cj)
{
    const double gx = x / c->spacing_x, gz = z / c->spacing_z;
    const uint32_t nx = c->all_samples_x - 1u, nz = c->all_samples_z - 1u;
    const double cells_x = nx, cells_z = nz;
    if (!(gx >= 0.0 && gx <= cells_x && gz >= 0.0 && gz <= cells_z)) return false;
    *ci = gx >= cells_x ? nx - 1u : (uint32_t)gx;
    *cj = gz >= cells_z ? nz - 1u : (uint32_t)gz;
    return true;
}

/* NAME_detail<K>.png per detail layer: points per detail cell (clamped to 255), PNG row 0 the
 * far (max z) edge as the splat maps; listed under "detail" in the tile's JSON. */
static trn_status write_details(ue_ctx *c, const char *stem, uint32_t ox, uint32_t oz, json_t *meta)
{
    const uint32_t a = c->res - 1;
    const trn_unity_export_options *o = c->opt;
    uint32_t *count = malloc((size_t)a * a * sizeof *count);
    if (!count) return trn_error_set(c->err, TRN_ERR_NO_MEMORY, stem, -1, "out of memory");
    json_t *dj = json_object(), *layers = json_array();
    json_object_set_new(dj, "resolution", json_integer(a));
    json_object_set_new(dj, "scatter_mode", json_string("InstanceCount"));
    trn_status st = TRN_OK;
    for (uint32_t k = 0; !st && k < o->detail_count; k++) {
        const trn_unity_detail_layer *d = &o->details[k];
        memset(count, 0, (size_t)a * a * sizeof *count);
        uint64_t points = 0;
        for (size_t p = 0; p < d->point_count; p++) {
            uint32_t ci, cj;
            if (!detail_cell(c, d->points[2 * p], d->points[2 * p + 1], &ci, &cj)) continue;
            const uint32_t gx0 = ox + c->piece_x, gz0 = oz + c->piece_z;
            if (ci < gx0 || cj < gz0 || ci - gx0 >= a || cj - gz0 >= a) continue; /* another tile */
            ci -= c->piece_x;
            cj -= c->piece_z;
            count[(size_t)(cj - oz) * a + (ci - ox)]++;
            points++;
        }
        trn_image img;
        if ((st = trn_image_init(&img, a, a, 1, 8, c->err))) break;
        for (uint32_t b = 0; b < a; b++)
            for (uint32_t i = 0; i < a; i++) {
                const uint32_t v = count[(size_t)b * a + i];
                c->detail_clamped += v > 255u;
                ((uint8_t *)img.data)[(size_t)(a - 1 - b) * a + i] = (uint8_t)(v > 255u ? 255u : v);
            }
        char path[1024], name[600];
        snprintf(path, sizeof path, "%s/%s_detail%u.png", c->dir, stem, k);
        snprintf(name, sizeof name, "%s_detail%u.png", stem, k);
        trn_png_options po;
        trn_png_options_default(&po);
        const char *target = NULL;
        st = trn_write_target(c->ws, path, &target, c->err);
        if (!st) st = trn_png_write(target, &img, &po, NULL, NULL, c->err);
        trn_image_dispose(&img);
        if (st) break;
        c->files++;
        c->detail_points += points;
        json_t *l = json_object();
        json_object_set_new(l, "name", json_string(d->name));
        json_object_set_new(l, "prototype", d->prototype ? json_string(d->prototype) : json_null());
        json_object_set_new(l, "file", json_string(name));
        json_object_set_new(l, "instances", json_integer((json_int_t)points));
        json_array_append_new(layers, l);
    }
    free(count);
    json_object_set_new(dj, "layers", layers);
    if (st) {
        json_decref(dj);
        return st;
    }
    json_object_set_new(meta, "detail", dj);
    return TRN_OK;
}

static trn_status write_holes(ue_ctx *c, const char *path, uint32_t ox, uint32_t oz)
{
    uint32_t a = c->res - 1;
    trn_image img;
    trn_status st = trn_image_init(&img, a, a, 1, 8, c->err);
    if (st) return st;
    for (uint32_t b = 0; b < a; b++)
        for (uint32_t i = 0; i < a; i++)
            ((uint8_t *)img.data)[(size_t)(a - 1 - b) * a + i] =
                cell_hole(c, ox + i, oz + b) ? 0 : 255;
    trn_png_options po;
    trn_png_options_default(&po);
    const char *target = NULL;
    st = trn_write_target(c->ws, path, &target, c->err);
    if (!st) st = trn_png_write(target, &img, &po, NULL, NULL, c->err);
    trn_image_dispose(&img);
    if (!st) c->files++;
    return st;
}

static json_t *vec3(double x, double y, double z)
{
    json_t *a = json_array();
    json_array_append_new(a, json_real(x));
    json_array_append_new(a, json_real(y));
    json_array_append_new(a, json_real(z));
    return a;
}

static json_t *tree_json(const ue_ctx *c, const trn_unity_tree *t, double lx, double ly, double lz,
                         const double tile_origin[3], const double tile_size[3])
{
    json_t *o = json_object();
    json_object_set_new(o, "position", vec3(lx, ly, lz));
    double wx = tile_origin[0] + lx * tile_size[0], wy = tile_origin[1] + ly * tile_size[1];
    double wz = tile_origin[2] + lz * tile_size[2];
    json_object_set_new(o, "world", vec3(wx, wy, wz));
    json_object_set_new(o, "width_scale", json_real(t->width_scale));
    json_object_set_new(o, "height_scale", json_real(t->height_scale));
    json_object_set_new(o, "rotation", json_real(t->rotation));
    char color[12];
    snprintf(color, sizeof color, "#%02x%02x%02x%02x", t->color & 0xffu, (t->color >> 8) & 0xffu,
             (t->color >> 16) & 0xffu, t->color >> 24);
    json_object_set_new(o, "color", json_string(color));
    json_object_set_new(o, "prototype", json_integer(t->prototype));
    /* T(world) * Ry(rotation) * S(width, height, width), row-major. */
    double cs = cos((double)t->rotation), sn = sin((double)t->rotation);
    double w = t->width_scale, h = t->height_scale;
    double m[16] = {cs * w, 0, sn * w, wx, 0, h, 0, wy, -sn * w, 0, cs * w, wz, 0, 0, 0, 1};
    json_t *mat = json_array();
    for (int k = 0; k < 16; k++)
        json_array_append_new(mat, json_real(m[k]));
    json_object_set_new(o, "matrix", mat);
    (void)c;
    return o;
}

/* The trees the export writes: a Unity source's, else the ones terrane placed. */
typedef struct tree_list {
    const trn_unity_tree *trees;
    uint32_t count;
    double y_scale; /* metres per unit of position[1] */
} tree_list;

static tree_list trees_of(const ue_ctx *c)
{
    if (c->source && (c->source->tree_count || c->source->prototype_count))
        return (tree_list){c->source->trees, c->source->tree_count, (double)c->source->scale[1]};
    return (tree_list){c->opt->trees, c->opt->tree_count, 1.0};
}

static bool has_trees(const ue_ctx *c)
{
    return (c->source && (c->source->tree_count || c->source->prototype_count)) ||
           c->opt->tree_count || c->opt->placed_prototype_count;
}

static json_t *prototypes_json(const ue_ctx *c)
{
    json_t *protos = json_array();
    const trn_unity_terrain *s = c->source;
    if (s && (s->tree_count || s->prototype_count)) {
        for (uint32_t k = 0; k < s->prototype_count; k++) {
            json_t *p = json_object();
            json_object_set_new(p, "prefab_file_id", json_integer(s->prototypes[k].prefab.file_id));
            json_object_set_new(p, "prefab_path_id", json_integer(s->prototypes[k].prefab.path_id));
            json_object_set_new(p, "bend_factor", json_real(s->prototypes[k].bend_factor));
            json_array_append_new(protos, p);
        }
        return protos;
    }
    for (uint32_t k = 0; k < c->opt->placed_prototype_count; k++) {
        const trn_unity_placed_prototype *pp = &c->opt->placed_prototypes[k];
        json_t *p = json_object();
        if (pp->rule) json_object_set_new(p, "rule", json_string(pp->rule));
        if (pp->prefab) json_object_set_new(p, "prefab", json_string(pp->prefab));
        if (pp->model) json_object_set_new(p, "model", json_string(pp->model));
        json_array_append_new(protos, p);
    }
    return protos;
}

static trn_status write_trees(ue_ctx *c, const char *path, uint32_t tx, uint32_t tz,
                              const double tile_origin[3], const double tile_size[3],
                              uint32_t *written)
{
    const tree_list tl = trees_of(c);
    json_t *doc = json_object();
    json_object_set_new(doc, "convention",
                        json_string("Unity TreeInstance: position is 0..1 of the tile's terrain "
                                    "size; world = tile position + position * size; matrix = "
                                    "T(world) * Ry(rotation) * S(width, height, width), "
                                    "row-major"));
    json_object_set_new(doc, "prototypes", prototypes_json(c));
    json_t *list = json_array();
    uint32_t r1 = c->res - 1;
    for (uint32_t k = 0; k < tl.count; k++) {
        const trn_unity_tree *t = &tl.trees[k];
        /* Source 0..1 -> working grid samples -> tile and position within it. */
        const bool piece = c->piece_x || c->piece_z || c->all_samples_x != c->tx_samples ||
                           c->all_samples_z != c->tz_samples;
        const uint32_t wx = piece ? c->all_samples_x : c->sx, wz = piece ? c->all_samples_z : c->sz;
        double sxp = t->position[0] * (double)(wx - 1), szp = t->position[2] * (double)(wz - 1);
        double gx = !piece && c->opt->fit == TRN_UNITY_FIT_RESAMPLE && c->tx_samples != c->sx
                        ? sxp * (c->tx_samples - 1) / (double)(c->sx - 1)
                        : sxp;
        double gz = !piece && c->opt->fit == TRN_UNITY_FIT_RESAMPLE && c->tz_samples != c->sz
                        ? szp * (c->tz_samples - 1) / (double)(c->sz - 1)
                        : szp;
        /* Tiles of the whole terrain: a piece's own are first_tile + (tx, tz). */
        const uint32_t all_x = (c->all_samples_x - 1u) / r1, all_z = (c->all_samples_z - 1u) / r1;
        uint32_t ttx = (uint32_t)(gx / r1), ttz = (uint32_t)(gz / r1);
        if (ttx >= all_x) ttx = all_x - 1;
        if (ttz >= all_z) ttz = all_z - 1;
        const uint32_t ftx = c->piece_x / r1, ftz = c->piece_z / r1;
        if (ttx != tx + ftx || ttz != tz + ftz) continue;
        gx -= (double)c->piece_x;
        gz -= (double)c->piece_z;
        double metres = t->position[1] * tl.y_scale;
        double ly = (metres - c->base) / c->size_y;
        json_array_append_new(list, tree_json(c, t, (gx - (double)tx * r1) / r1, ly,
                                              (gz - (double)tz * r1) / r1, tile_origin, tile_size));
        (*written)++;
    }
    json_object_set_new(doc, "trees", list);
    return write_json(c, path, doc);
}

static trn_status export_tile(ue_ctx *c, uint32_t tx, uint32_t tz, trn_unity_export_report *rep)
{
    const trn_unity_export_options *o = c->opt;
    /* A piece of a larger terrain names and numbers its tiles as that terrain does. */
    const bool piece = o->total_tiles_x && o->total_tiles_z;
    const uint32_t all_x = piece ? o->total_tiles_x : o->tiles_x;
    const uint32_t all_z = piece ? o->total_tiles_z : o->tiles_z;
    const uint32_t nx_tile = tx + (piece ? o->first_tile_x : 0u);
    const uint32_t nz_tile = tz + (piece ? o->first_tile_z : 0u);
    bool single = all_x == 1 && all_z == 1;
    char stem[512], path[1100];
    if (single)
        snprintf(stem, sizeof stem, "%s", o->name);
    else
        snprintf(stem, sizeof stem, "%s_%u_%u", o->name, nx_tile, nz_tile);
    uint32_t r1 = c->res - 1, ox = tx * r1, oz = tz * r1;
    double tile_size[3] = {r1 * c->spacing_x, c->size_y, r1 * c->spacing_z};
    double origin[3] = {o->position[0] + ox * c->spacing_x, o->position[1] + c->base,
                        o->position[2] + oz * c->spacing_z};
    trn_status st;
    snprintf(path, sizeof path, "%s/%s.raw", c->dir, stem);
    if ((st = write_raw(c, path, ox, oz))) return st;
    json_t *meta = json_object();
    json_object_set_new(meta, "format", json_string("terrane unity export 1"));
    json_object_set_new(meta, "name", json_string(stem));
    char fname[600];
    snprintf(fname, sizeof fname, "%s.raw", stem);
    json_t *hm = json_object();
    json_object_set_new(hm, "file", json_string(fname));
    json_object_set_new(hm, "resolution", json_integer(c->res));
    json_object_set_new(hm, "depth", json_string("Bit 16"));
    json_object_set_new(hm, "byte_order", json_string(o->big_endian ? "Mac" : "Windows"));
    json_object_set_new(hm, "flip_vertically", json_boolean(o->flip));
    json_object_set_new(hm, "raw_0_metres", json_real(c->base));
    json_object_set_new(hm, "raw_65535_metres", json_real(c->base + c->size_y));
    json_object_set_new(meta, "heightmap", hm);
    json_object_set_new(meta, "terrain_size", vec3(tile_size[0], tile_size[1], tile_size[2]));
    json_object_set_new(meta, "position", vec3(origin[0], origin[1], origin[2]));
    json_t *tile = json_object();
    json_object_set_new(tile, "x", json_integer(nx_tile));
    json_object_set_new(tile, "z", json_integer(nz_tile));
    json_object_set_new(tile, "tiles_x", json_integer(all_x));
    json_object_set_new(tile, "tiles_z", json_integer(all_z));
    json_object_set_new(tile, "shared_edges", json_true());
    json_object_set_new(meta, "tile", tile);
    if (c->layer_count) {
        json_t *sp = json_object(), *files = json_array(), *names = json_array();
        for (uint32_t k = 0; k < c->layer_count; k++)
            json_array_append_new(
                names, json_string(c->source ? c->source->layers[k].name : c->labels->names[k]));
        if ((st = write_splats(c, stem, ox, oz, files))) {
            json_decref(files);
            json_decref(names);
            json_decref(sp);
            json_decref(meta);
            return st;
        }
        json_object_set_new(sp, "alphamap_resolution", json_integer(r1));
        json_object_set_new(sp, "layers", names);
        if (!c->source && o->layer_sources) {
            json_t *sources = json_array();
            for (uint32_t k = 0; k < c->layer_count; k++)
                json_array_append_new(
                    sources, o->layer_sources[k] ? json_string(o->layer_sources[k]) : json_null());
            json_object_set_new(sp, "sources", sources);
        }
        json_object_set_new(sp, "files", files);
        if (!c->source && o->mapping && o->mapping->present)
            json_object_set_new(sp, "mapping", mapping_json(o->mapping));
        if (!c->source && o->terrain_layers)
            json_object_set_new(sp, "terrain_layers", terrain_layers_json(o->terrain_layers,
                                                                          c->layer_count));
        json_object_set_new(meta, "splat", sp);
    }
    if (c->holes) {
        snprintf(path, sizeof path, "%s/%s_holes.png", c->dir, stem);
        if ((st = write_holes(c, path, ox, oz))) {
            json_decref(meta);
            return st;
        }
        snprintf(fname, sizeof fname, "%s_holes.png", stem);
        json_object_set_new(meta, "holes", json_string(fname));
    }
    if (o->detail_count && (st = write_details(c, stem, ox, oz, meta))) {
        json_decref(meta);
        return st;
    }
    if (has_trees(c)) {
        snprintf(path, sizeof path, "%s/%s_trees.json", c->dir, stem);
        if ((st = write_trees(c, path, tx, tz, origin, tile_size, &rep->trees))) {
            json_decref(meta);
            return st;
        }
        snprintf(fname, sizeof fname, "%s_trees.json", stem);
        json_object_set_new(meta, "trees", json_string(fname));
    }
    snprintf(path, sizeof path, "%s/%s.json", c->dir, stem);
    return write_json(c, path, meta);
}

trn_status trn_unity_export(const char *dir, const trn_field *field, const trn_labels *labels,
                            const trn_unity_terrain *source,
                            const trn_unity_export_options *options,
                            trn_unity_export_report *report, trn_progress_fn progress, void *user,
                            trn_error *err)
{
    trn_unity_export_options defaults;
    if (!options) {
        trn_unity_export_options_default(&defaults);
        options = &defaults;
    }
    trn_unity_export_report rep;
    memset(&rep, 0, sizeof rep);
    if (!field || !field->heights || field->cells_x < 1 || field->cells_z < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1, "export needs a heightfield");
    uint32_t tiles_x = options->tiles_x ? options->tiles_x : 1;
    uint32_t tiles_z = options->tiles_z ? options->tiles_z : 1;
    if (tiles_x > UE_MAX_TILES || tiles_z > UE_MAX_TILES)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "tiles %u x %u: at most %u per side", tiles_x, tiles_z, UE_MAX_TILES);
    if (options->resolution && !trn_unity_resolution_valid(options->resolution))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "resolution %u: Unity heightmaps are 2^n + 1 samples, 33 to 4097 "
                             "(33, 65, 129, 257, 513, 1025, 2049, 4097)",
                             options->resolution);
    if (labels && (labels->cells_x != field->cells_x || labels->cells_z != field->cells_z))
        return trn_error_set(err, TRN_ERR_MISMATCH, dir, -1,
                             "labels are %u x %u cells but the field is %u x %u", labels->cells_x,
                             labels->cells_z, field->cells_x, field->cells_z);
    if (options->detail_count > TRN_UNITY_MAX_DETAIL_LAYERS)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1, "%u detail layers: at most %u",
                             options->detail_count, TRN_UNITY_MAX_DETAIL_LAYERS);
    if (options->tree_count && !options->trees)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "export: %u placed trees given without their array",
                             options->tree_count);
    if (options->placed_prototype_count && !options->placed_prototypes)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "export: %u placed tree prototypes given without their array",
                             options->placed_prototype_count);
    for (uint32_t k = 0; k < options->tree_count; k++) {
        const trn_unity_tree *t = &options->trees[k];
        if (t->prototype < 0 || (uint32_t)t->prototype >= options->placed_prototype_count)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                                 "export: placed tree %u: expected a prototype below %u, found %d",
                                 k, options->placed_prototype_count, (int)t->prototype);
        if (!isfinite(t->position[0]) || !isfinite(t->position[1]) || !isfinite(t->position[2]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                                 "export: placed tree %u: expected a finite position", k);
    }
    for (uint32_t k = 0; k < options->detail_count; k++)
        if (!options->details || !options->details[k].name ||
            (options->details[k].point_count && !options->details[k].points))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                                 "detail layer %u: expected a name and its points", k);
    if ((options->total_tiles_x || options->total_tiles_z) &&
        (!options->total_tiles_x || !options->total_tiles_z ||
         (uint64_t)options->first_tile_x + tiles_x > options->total_tiles_x ||
         (uint64_t)options->first_tile_z + tiles_z > options->total_tiles_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "export: a piece of %u x %u tiles at tile (%u, %u) does not fit a "
                             "terrain of %u x %u tiles",
                             tiles_x, tiles_z, options->first_tile_x, options->first_tile_z,
                             options->total_tiles_x, options->total_tiles_z);
    trn_unity_export_options o = *options;
    o.tiles_x = tiles_x;
    o.tiles_z = tiles_z;
    if (!o.name || !o.name[0]) o.name = "terrain";
    ue_ctx c;
    memset(&c, 0, sizeof c);
    c.field = field;
    c.labels = labels;
    c.source = source && source->heights ? source : NULL;
    c.opt = &o;
    c.dir = dir;
    c.err = err;
    c.sx = field->cells_x + 1;
    c.sz = field->cells_z + 1;

    /* Per-tile resolution: given, or what the input already is, or (with a fit) the smallest
     * that covers it. Never changed silently. */
    uint32_t r = o.resolution;
    bool exact = (c.sx - 1) % tiles_x == 0 && (c.sz - 1) % tiles_z == 0 &&
                 (c.sx - 1) / tiles_x == (c.sz - 1) / tiles_z &&
                 trn_unity_resolution_valid((c.sx - 1) / tiles_x + 1);
    if (!r) {
        if (exact)
            r = (c.sx - 1) / tiles_x + 1;
        else if (o.fit != TRN_UNITY_FIT_NONE) {
            uint32_t rx = smallest_resolution(c.sx, tiles_x),
                     rz = smallest_resolution(c.sz, tiles_z);
            r = rx > rz ? rx : rz;
            if (!rx || !rz) r = 0;
        }
    }
    if (!r)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "the input is %u x %u samples, which is not %u x %u tiles of 2^n + 1 "
                             "samples (33..4097, edges shared); choose --resolution R (per "
                             "tile) and --fit resample (bilinear, keeps the terrain's size) or "
                             "--fit pad (ground falling smoothly from the edges, grows the "
                             "terrain)",
                             c.sx, c.sz, tiles_x, tiles_z);
    c.res = r;
    c.tx_samples = tiles_x * (r - 1) + 1;
    c.tz_samples = tiles_z * (r - 1) + 1;
    c.all_samples_x = c.tx_samples;
    c.all_samples_z = c.tz_samples;
    if (o.total_tiles_x && o.total_tiles_z) {
        c.all_samples_x = o.total_tiles_x * (r - 1) + 1;
        c.all_samples_z = o.total_tiles_z * (r - 1) + 1;
        c.piece_x = o.first_tile_x * (r - 1);
        c.piece_z = o.first_tile_z * (r - 1);
    }
    if ((c.tx_samples != c.sx || c.tz_samples != c.sz) && o.fit == TRN_UNITY_FIT_NONE)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "the input is %u x %u samples but %u x %u tiles of %u need %u x %u: "
                             "add --fit resample (bilinear, keeps the terrain's size) or --fit "
                             "pad (ground falling smoothly from the edges, grows the terrain)",
                             c.sx, c.sz, tiles_x, tiles_z, r, c.tx_samples, c.tz_samples);
    if (o.fit == TRN_UNITY_FIT_PAD && (c.tx_samples < c.sx || c.tz_samples < c.sz))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "--fit pad cannot shrink %u x %u samples to %u x %u; use --fit "
                             "resample or a larger --resolution",
                             c.sx, c.sz, c.tx_samples, c.tz_samples);
    double in_dx = field->size_x / field->cells_x, in_dz = field->size_z / field->cells_z;
    bool resample = o.fit == TRN_UNITY_FIT_RESAMPLE;
    c.spacing_x = resample ? field->size_x / (c.tx_samples - 1) : in_dx;
    c.spacing_z = resample ? field->size_z / (c.tz_samples - 1) : in_dz;

    size_t n;
    if (!trn_mul_size(c.tx_samples, c.tz_samples, &n) || n > ((size_t)1 << 30))
        return trn_error_set(err, TRN_ERR_OVERFLOW, dir, -1, "export grid too large");
    /* Padding grows +x and +z with ground falling smoothly from the edge to the RAW's 0 height
     * (the given base, else the lowest height), never repeated edge samples. */
    trn_field padded;
    memset(&padded, 0, sizeof padded);
    if (o.fit == TRN_UNITY_FIT_PAD && (c.tx_samples > c.sx || c.tz_samples > c.sz)) {
        double base = o.height_base;
        if (!(o.height_size > 0)) {
            base = INFINITY;
            for (size_t k = 0; k < (size_t)c.sx * c.sz; k++)
                if (field->heights[k] < base) base = field->heights[k];
            if (!isfinite(base)) base = 0.0;
        }
        trn_status pst = trn_field_pad_fall(field, 0, 0, c.tx_samples - c.sx,
                                            c.tz_samples - c.sz, base, &padded, err);
        if (pst) return pst;
    }
    c.grid = malloc(n * sizeof *c.grid);
    if (!c.grid) {
        trn_field_dispose(&padded);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, dir, -1, "out of memory");
    }
    float lo = INFINITY, hi = -INFINITY;
    for (uint32_t j = 0; j < c.tz_samples; j++)
        for (uint32_t i = 0; i < c.tx_samples; i++) {
            float h = resample          ? field_bilinear(field, src_x(&c, i), src_z(&c, j))
                      : padded.heights ? field_at(&padded, i, j)
                                       : field_at(field, (uint32_t)src_x(&c, i),
                                                  (uint32_t)src_z(&c, j));
            c.grid[(size_t)j * c.tx_samples + i] = h;
            if (h < lo) lo = h;
            if (h > hi) hi = h;
        }
    trn_field_dispose(&padded);
    if (!(lo <= hi)) lo = hi = 0;
    c.base = o.height_base;
    c.size_y = o.height_size;
    if (!(c.size_y > 0)) {
        /* The one 16-bit rule's default: lowest at RAW 0, highest at 65535. */
        c.base = lo;
        c.size_y = hi > lo ? (double)hi - (double)lo : 1.0;
    }
    c.layer_count = c.source ? c.source->layer_count : labels ? labels->name_count : 0;
    if (c.layer_count > 252) c.layer_count = 252;
    if (c.source)
        c.holes = c.source->holes != NULL;
    else if (labels)
        for (size_t k = 0; k < (size_t)c.sx * c.sz && !c.holes; k++)
            c.holes = labels->values[k] == TRN_LABEL_NONE;

    trn_status st = trn_mkdir_p(dir, err);
    trn_write_set *own = NULL;
    if (!st) st = trn_write_own_begin(o.writes, &c.ws, &own, err);
    for (uint32_t tz = 0; !st && tz < tiles_z; tz++)
        for (uint32_t tx = 0; !st && tx < tiles_x; tx++) {
            if (progress && progress((double)(tz * tiles_x + tx) / (tiles_x * tiles_z),
                                     "unity export", user) == TRN_CANCEL) {
                st = trn_error_set(err, TRN_ERR_CANCELLED, dir, -1, "cancelled");
                break;
            }
            st = export_tile(&c, tx, tz, &rep);
        }
    if (!st && progress) progress(1.0, "unity export", user);
    free(c.grid);
    st = trn_write_own_finish(own, st, err);
    if (st) return st;
    rep.resolution = c.res;
    rep.tiles_x = tiles_x;
    rep.tiles_z = tiles_z;
    rep.tile_size[0] = (c.res - 1) * c.spacing_x;
    rep.tile_size[1] = c.size_y;
    rep.tile_size[2] = (c.res - 1) * c.spacing_z;
    rep.height_base = c.base;
    rep.files = c.files;
    rep.splat_textures = (c.layer_count + 3) / 4;
    rep.holes = c.holes;
    rep.detail_layers = o.detail_count;
    rep.detail_points = c.detail_points;
    rep.detail_clamped = c.detail_clamped;
    for (uint32_t k = 0; k < o.detail_count; k++)
        rep.detail_dropped += o.details[k].point_count;
    rep.detail_dropped -= c.detail_points;
    if (report) *report = rep;
    return TRN_OK;
}
