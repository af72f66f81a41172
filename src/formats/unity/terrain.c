/* Unity TerrainData extraction: heights, holes, splat layers with their alpha maps, trees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "unity_internal.h"

void trn_unity_terrain_dispose(trn_unity_terrain *terrain)
{
    if (!terrain) return;
    free(terrain->heights);
    free(terrain->holes);
    free(terrain->layers);
    for (uint32_t k = 0; k < terrain->alphamap_count; k++)
        free(terrain->alphamaps[k].rgba);
    free(terrain->alphamaps);
    free(terrain->trees);
    free(terrain->prototypes);
    memset(terrain, 0, sizeof *terrain);
}

double trn_unity_height_metres(const trn_unity_terrain *terrain, int16_t v)
{
    return (double)v / 32766.0 * (double)terrain->scale[1];
}

typedef struct ut_ctx {
    const trn_unity_file *file;
    const trn_unity_limits *lim;
    trn_error *err;
    const char *path;
    uw_object obj;
} ut_ctx;

static trn_status ut_missing(ut_ctx *c, uint32_t parent, const char *field, const char *what)
{
    const uw_object *o = &c->obj;
    uint64_t at = parent == UW_NONE ? o->object->offset : o->values[parent].offset;
    return trn_error_set(
        c->err, TRN_ERR_FORMAT, c->path, (int64_t)at,
        "object %u (%s, path id %lld): expected %s '%s'%s%s, found %s", o->object_index,
        trn_unity_class_name(o->object->class_id) ? trn_unity_class_name(o->object->class_id)
                                                  : "class",
        (long long)o->object->path_id, what, field, parent == UW_NONE ? "" : " in ",
        parent == UW_NONE ? "" : uw_name(o, parent), "none or another type");
}

static bool ut_vec(const uw_object *o, uint32_t v, float *out, int n)
{
    static const char *const axes[4] = {"x", "y", "z", "w"};
    for (int k = 0; k < n; k++) {
        double d;
        if (!uw_float(o, uw_child(o, v, axes[k]), &d)) return false;
        out[k] = (float)d;
    }
    return true;
}

/* An array of primitives of elem_size bytes (UW_NONE when v is not one). */
static uint32_t ut_prim_array(const uw_object *o, uint32_t v, uint8_t elem_size)
{
    uint32_t a = uw_array(o, v);
    if (a == UW_NONE || o->values[a].elem_size != elem_size) return UW_NONE;
    return a;
}

/* The m_Name of a local object, for layer and texture names; false when not in this file. */
static bool ut_object_name(ut_ctx *c, trn_unity_pptr ref, char *buf, size_t size)
{
    if (ref.file_id != 0 || ref.path_id == 0) return false;
    int64_t k = trn_unity_file_find_object(c->file, ref.path_id);
    if (k < 0) return false;
    uw_object o;
    trn_error scratch;
    if (uw_walk(c->file, (uint32_t)k, c->lim, &o, &scratch) != TRN_OK) return false;
    bool ok = uw_string(&o, uw_child(&o, 0, "m_Name"), buf, size);
    uw_dispose(&o);
    return ok;
}

/* Decode a local Texture2D's level 0 into RGBA. Pixels outside the file (streamed .resS data)
 * or formats other than 32-bit RGBA/ARGB/BGRA leave found = false. A texture object that is
 * present but malformed is an error. */
static trn_status ut_alphamap(ut_ctx *c, trn_unity_alphamap *am)
{
    if (am->ref.file_id != 0) return TRN_OK;
    int64_t k = trn_unity_file_find_object(c->file, am->ref.path_id);
    if (k < 0) return TRN_OK;
    uw_object o;
    trn_status st = uw_walk(c->file, (uint32_t)k, c->lim, &o, c->err);
    if (st) return st;
    const int64_t obj_at = (int64_t)o.object->offset; /* o is cleared by uw_dispose */
    uw_string(&o, uw_child(&o, 0, "m_Name"), am->name, sizeof am->name);
    int64_t w = 0, h = 0, fmt = 0, mips = 1;
    uint32_t image = uw_child(&o, 0, "image data");
    if (!uw_int(&o, uw_child(&o, 0, "m_Width"), &w) ||
        !uw_int(&o, uw_child(&o, 0, "m_Height"), &h) ||
        !uw_int(&o, uw_child(&o, 0, "m_TextureFormat"), &fmt) || image == UW_NONE ||
        !o.values[image].is_array) {
        uw_dispose(&o);
        return trn_error_set(c->err, TRN_ERR_FORMAT, c->path, obj_at,
                             "alpha map texture (path id %lld): expected m_Width, m_Height, "
                             "m_TextureFormat and 'image data' fields",
                             (long long)am->ref.path_id);
    }
    if (!uw_int(&o, uw_child(&o, 0, "m_MipCount"), &mips)) {
        int64_t has_mips = 0;
        uw_int(&o, uw_child(&o, 0, "m_MipMap"), &has_mips);
        mips = has_mips ? 0 : 1; /* a full chain; only level 0 is read */
    }
    am->format = (int32_t)fmt;
    am->mip_count = (int32_t)mips;
    if (w <= 0 || h <= 0 || w > 16384 || h > 16384) {
        uw_dispose(&o);
        return trn_error_set(c->err, TRN_ERR_FORMAT, c->path, obj_at,
                             "alpha map '%s': expected a size of 1..16384 texels per side, "
                             "found %lld x %lld",
                             am->name, (long long)w, (long long)h);
    }
    am->width = (uint32_t)w;
    am->height = (uint32_t)h;
    bool known = fmt == 4 || fmt == 5 || fmt == 14;
    uint64_t need = (uint64_t)w * (uint64_t)h * 4u;
    const uw_value *iv = &o.values[image];
    if (!known || iv->count == 0) {
        /* Another format, or pixels streamed from a .resS beside the file: reported, not read. */
        uw_dispose(&o);
        return TRN_OK;
    }
    if (iv->count < need) {
        st = trn_error_set(c->err, TRN_ERR_FORMAT, c->path, (int64_t)iv->offset,
                           "alpha map '%s': %u x %u texels of 4 bytes need %llu bytes of image "
                           "data, found %llu",
                           am->name, am->width, am->height, (unsigned long long)need,
                           (unsigned long long)iv->count);
        uw_dispose(&o);
        return st;
    }
    am->rgba = malloc((size_t)need);
    if (!am->rgba) {
        uw_dispose(&o);
        return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->path, -1, "out of memory");
    }
    const uint8_t *src = c->file->data + iv->data_offset;
    /* Channel order in memory: RGBA32 r,g,b,a; ARGB32 a,r,g,b; BGRA32 b,g,r,a. */
    int order[4] = {0, 1, 2, 3};
    if (fmt == 5) order[0] = 1, order[1] = 2, order[2] = 3, order[3] = 0;
    if (fmt == 14) order[0] = 2, order[1] = 1, order[2] = 0, order[3] = 3;
    for (uint64_t t = 0; t < (uint64_t)w * (uint64_t)h; t++)
        for (int ch = 0; ch < 4; ch++)
            am->rgba[t * 4u + (uint64_t)ch] = src[t * 4u + (uint64_t)order[ch]];
    am->found = true;
    uw_dispose(&o);
    return TRN_OK;
}

static trn_status ut_heightmap(ut_ctx *c, uint32_t root, trn_unity_terrain *t)
{
    const uw_object *o = &c->obj;
    uint32_t hm = uw_child(o, root, "m_Heightmap");
    if (hm == UW_NONE) return ut_missing(c, root, "m_Heightmap", "a field");
    int64_t res = 0, width = 0, height = 0;
    /* Errors about the size point at the field that holds it (m_Resolution, or m_Width and
     * m_Height in files before 2019.3), not at the heights that follow. */
    uint32_t res_v = uw_child(o, hm, "m_Resolution"), width_v = UW_NONE, height_v = UW_NONE;
    if (uw_int(o, res_v, &res)) {
        width = height = res;
        width_v = height_v = res_v;
    } else if (!uw_int(o, width_v = uw_child(o, hm, "m_Width"), &width) ||
               !uw_int(o, height_v = uw_child(o, hm, "m_Height"), &height)) {
        return ut_missing(c, hm, "m_Resolution", "an integer (or m_Width and m_Height)");
    }
    const char *field = width_v == res_v ? "m_Resolution" : "m_Width";
    if (width != height)
        return trn_error_set(c->err, TRN_ERR_UNSUPPORTED, c->path,
                             (int64_t)o->values[height_v].offset,
                             "TerrainData '%s': m_Height: heightmap %lld x %lld; Unity heightmaps "
                             "are square and this reader reads only square ones",
                             t->name, (long long)width, (long long)height);
    if (width < 2 || width > (int64_t)c->lim->max_resolution)
        return trn_error_set(c->err, width < 2 ? TRN_ERR_FORMAT : TRN_ERR_LIMIT, c->path,
                             (int64_t)o->values[width_v].offset,
                             "TerrainData '%s': %s: heightmap resolution %lld, expected 2..%u",
                             t->name, field, (long long)width, c->lim->max_resolution);
    uint64_t samples = (uint64_t)width * (uint64_t)width;
    if (samples > c->lim->max_samples)
        return trn_error_set(c->err, TRN_ERR_LIMIT, c->path, (int64_t)o->values[width_v].offset,
                             "TerrainData '%s': %s: heightmap %lld x %lld = %llu samples, more "
                             "than the limit of %llu (raise the limits' max_samples; terrane: "
                             "--max-samples N)",
                             t->name, field, (long long)width, (long long)width,
                             (unsigned long long)samples, (unsigned long long)c->lim->max_samples);
    t->resolution = (uint32_t)width;
    uint32_t sv = uw_child(o, hm, "m_Scale");
    if (!ut_vec(o, sv, t->scale, 3)) return ut_missing(c, hm, "m_Scale", "a Vector3f");
    uint32_t hv = ut_prim_array(o, uw_child(o, hm, "m_Heights"), 2);
    if (hv == UW_NONE) return ut_missing(c, hm, "m_Heights", "an array of 16-bit integers");
    size_t n = (size_t)t->resolution * t->resolution;
    if (o->values[hv].count != n)
        return trn_error_set(c->err, TRN_ERR_FORMAT, c->path, (int64_t)o->values[hv].offset,
                             "TerrainData '%s': m_Heights: expected %u x %u = %zu samples, "
                             "found %llu",
                             t->name, t->resolution, t->resolution, n,
                             (unsigned long long)o->values[hv].count);
    t->heights = malloc(n * sizeof *t->heights);
    if (!t->heights) return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->path, -1, "out of memory");
    const uint8_t *p = c->file->data + o->values[hv].data_offset;
    if (c->file->big_endian) {
        for (size_t k = 0; k < n; k++)
            t->heights[k] = (int16_t)(uint16_t)((p[2 * k] << 8) | p[2 * k + 1]);
    } else {
        for (size_t k = 0; k < n; k++)
            t->heights[k] = (int16_t)(uint16_t)(p[2 * k] | (p[2 * k + 1] << 8));
    }
    uint32_t holes = ut_prim_array(o, uw_child(o, hm, "m_Holes"), 1);
    if (holes != UW_NONE && o->values[holes].count > 0) {
        size_t cells = (size_t)(t->resolution - 1) * (t->resolution - 1);
        if (o->values[holes].count != cells)
            return trn_error_set(c->err, TRN_ERR_FORMAT, c->path, (int64_t)o->values[holes].offset,
                                 "TerrainData '%s': m_Holes: expected 0 or %u x %u = %zu bytes, "
                                 "found %llu",
                                 t->name, t->resolution - 1, t->resolution - 1, cells,
                                 (unsigned long long)o->values[holes].count);
        t->holes = malloc(cells);
        if (!t->holes)
            return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->path, -1, "out of memory");
        memcpy(t->holes, c->file->data + o->values[holes].data_offset, cells);
        t->hole_count = cells;
    }
    return TRN_OK;
}

/* Count the elements of an array of structs, and allocate count items of item_size. */
static trn_status ut_alloc_items(ut_ctx *c, uint32_t arr, size_t item_size, void **items,
                                 uint32_t *count)
{
    uint64_t n = c->obj.values[arr].count;
    *count = 0;
    *items = calloc(n ? (size_t)n : 1u, item_size);
    if (!*items) return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->path, -1, "out of memory");
    return TRN_OK;
}

static trn_status ut_splats(ut_ctx *c, uint32_t root, trn_unity_terrain *t)
{
    const uw_object *o = &c->obj;
    uint32_t sd = uw_child(o, root, "m_SplatDatabase");
    if (sd == UW_NONE) return TRN_OK;
    int64_t v;
    if (uw_int(o, uw_child(o, sd, "m_AlphamapResolution"), &v))
        t->alphamap_resolution = (uint32_t)v;
    if (uw_int(o, uw_child(o, sd, "m_BaseMapResolution"), &v)) t->base_map_resolution = (uint32_t)v;
    trn_status st;
    uint32_t layers = uw_array(o, uw_child(o, sd, "m_TerrainLayers"));
    bool prototypes = false;
    if (layers == UW_NONE) {
        layers = uw_array(o, uw_child(o, sd, "m_Splats"));
        prototypes = true;
    }
    if (layers != UW_NONE) {
        void *items;
        if ((st = ut_alloc_items(c, layers, sizeof *t->layers, &items, &t->layer_count))) return st;
        t->layers = items;
        for (uint32_t e = o->values[layers].first_child; e != UW_NONE;
             e = o->values[e].next_sibling) {
            trn_unity_layer *l = &t->layers[t->layer_count];
            l->is_splat_prototype = prototypes;
            uint32_t ref = prototypes ? uw_child(o, e, "texture") : e;
            if (!uw_pptr(o, ref, &l->ref))
                return ut_missing(c, layers, prototypes ? "texture" : "PPtr<TerrainLayer>",
                                  "a reference");
            if (prototypes) {
                ut_vec(o, uw_child(o, e, "tileSize"), l->tile_size, 2);
                ut_vec(o, uw_child(o, e, "tileOffset"), l->tile_offset, 2);
            }
            if (!ut_object_name(c, l->ref, l->name, sizeof l->name))
                snprintf(l->name, sizeof l->name, "layer %u", t->layer_count);
            t->layer_count++;
        }
    }
    uint32_t alpha = uw_array(o, uw_child(o, sd, "m_AlphaTextures"));
    if (alpha != UW_NONE) {
        void *items;
        if ((st = ut_alloc_items(c, alpha, sizeof *t->alphamaps, &items, &t->alphamap_count)))
            return st;
        t->alphamaps = items;
        for (uint32_t e = o->values[alpha].first_child; e != UW_NONE;
             e = o->values[e].next_sibling) {
            trn_unity_alphamap *am = &t->alphamaps[t->alphamap_count];
            if (!uw_pptr(o, e, &am->ref))
                return ut_missing(c, alpha, "PPtr<Texture2D>", "a reference");
            snprintf(am->name, sizeof am->name, "alpha map %u", t->alphamap_count);
            t->alphamap_count++;
            if ((st = ut_alphamap(c, am))) return st;
        }
    }
    return TRN_OK;
}

static trn_status ut_trees(ut_ctx *c, uint32_t root, trn_unity_terrain *t)
{
    const uw_object *o = &c->obj;
    uint32_t dd = uw_child(o, root, "m_DetailDatabase");
    if (dd == UW_NONE) return TRN_OK;
    trn_status st;
    uint32_t protos = uw_array(o, uw_child(o, dd, "m_TreePrototypes"));
    if (protos != UW_NONE) {
        void *items;
        if ((st = ut_alloc_items(c, protos, sizeof *t->prototypes, &items, &t->prototype_count)))
            return st;
        t->prototypes = items;
        for (uint32_t e = o->values[protos].first_child; e != UW_NONE;
             e = o->values[e].next_sibling) {
            trn_unity_tree_prototype *p = &t->prototypes[t->prototype_count++];
            if (!uw_pptr(o, uw_child(o, e, "prefab"), &p->prefab))
                return ut_missing(c, e, "prefab", "a reference");
            double bend = 0;
            uw_float(o, uw_child(o, e, "bendFactor"), &bend);
            p->bend_factor = (float)bend;
        }
    }
    uint32_t inst = uw_array(o, uw_child(o, dd, "m_TreeInstances"));
    if (inst != UW_NONE) {
        void *items;
        if ((st = ut_alloc_items(c, inst, sizeof *t->trees, &items, &t->tree_count))) return st;
        t->trees = items;
        for (uint32_t e = o->values[inst].first_child; e != UW_NONE;
             e = o->values[e].next_sibling) {
            trn_unity_tree *tr = &t->trees[t->tree_count];
            double ws, hs, rot;
            int64_t index, color = 0, light = 0;
            if (!ut_vec(o, uw_child(o, e, "position"), tr->position, 3) ||
                !uw_float(o, uw_child(o, e, "widthScale"), &ws) ||
                !uw_float(o, uw_child(o, e, "heightScale"), &hs) ||
                !uw_float(o, uw_child(o, e, "rotation"), &rot) ||
                !uw_int(o, uw_child(o, e, "index"), &index))
                return ut_missing(c, e, "position, widthScale, heightScale, rotation, index",
                                  "TreeInstance fields");
            uw_int(o, uw_child(o, uw_child(o, e, "color"), "rgba"), &color);
            uw_int(o, uw_child(o, uw_child(o, e, "lightmapColor"), "rgba"), &light);
            tr->width_scale = (float)ws;
            tr->height_scale = (float)hs;
            tr->rotation = (float)rot;
            tr->color = (uint32_t)color;
            tr->lightmap_color = (uint32_t)light;
            tr->prototype = (int32_t)index;
            t->tree_count++;
        }
    }
    return TRN_OK;
}

trn_status trn_unity_terrain_from_file(const trn_unity_file *file, int64_t path_id,
                                       const trn_unity_limits *limits, trn_unity_terrain *terrain,
                                       trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    trn_unity_limits defaults;
    if (!limits) {
        trn_unity_limits_default(&defaults);
        limits = &defaults;
    }
    const char *path = file->path[0] ? file->path : NULL;
    int64_t index = -1;
    for (uint32_t k = 0; k < file->object_count && index < 0; k++)
        if (file->objects[k].class_id == TRN_UNITY_CLASS_TERRAINDATA &&
            (path_id == 0 || file->objects[k].path_id == path_id))
            index = k;
    if (index < 0)
        return path_id ? trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1,
                                       "no TerrainData with path id %lld in the file",
                                       (long long)path_id)
                       : trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1,
                                       "no TerrainData (class 156) among the file's %u objects",
                                       file->object_count);
    ut_ctx c;
    c.file = file;
    c.lim = limits;
    c.err = err;
    c.path = path;
    trn_status st = uw_walk(file, (uint32_t)index, limits, &c.obj, err);
    if (st) return st;
    terrain->path_id = file->objects[index].path_id;
    uw_string(&c.obj, uw_child(&c.obj, 0, "m_Name"), terrain->name, sizeof terrain->name);
    if ((st = ut_heightmap(&c, 0, terrain)) == TRN_OK && (st = ut_splats(&c, 0, terrain)) == TRN_OK)
        st = ut_trees(&c, 0, terrain);
    uw_dispose(&c.obj);
    if (st) trn_unity_terrain_dispose(terrain);
    return st;
}

trn_status trn_unity_terrain_read(const char *path, const trn_unity_limits *limits,
                                  trn_unity_terrain *terrain, trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    trn_unity_file file;
    trn_status st = trn_unity_file_read(path, limits, &file, err);
    if (st) return st;
    st = trn_unity_terrain_from_file(&file, 0, limits, terrain, err);
    trn_unity_file_dispose(&file);
    return st;
}

trn_status trn_unity_terrain_to_field(const trn_unity_terrain *terrain, trn_field *field,
                                      trn_error *err)
{
    if (!terrain->heights || terrain->resolution < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "the terrain has no heights");
    uint32_t cells = terrain->resolution - 1;
    trn_field f;
    trn_status st = trn_field_init(&f, cells, cells, (double)cells * terrain->scale[0],
                                   (double)cells * terrain->scale[2], err);
    if (st) return st;
    size_t n = (size_t)terrain->resolution * terrain->resolution;
    double q = (double)terrain->scale[1] / 32766.0;
    for (size_t k = 0; k < n; k++)
        f.heights[k] = (float)((double)terrain->heights[k] * q);
    f.quantum = q;
    f.quantum_base = 0;
    *field = f;
    return TRN_OK;
}

float trn_unity_terrain_weight(const trn_unity_terrain *terrain, uint32_t layer, double u, double v)
{
    uint32_t tex = layer / 4u, ch = layer % 4u;
    if (tex >= terrain->alphamap_count || !terrain->alphamaps[tex].found) return 0.0f;
    const trn_unity_alphamap *am = &terrain->alphamaps[tex];
    /* Texel centres sit at (k + 0.5) / size; clamp at the borders. */
    double x = u * am->width - 0.5, z = v * am->height - 0.5;
    if (x < 0) x = 0;
    if (z < 0) z = 0;
    if (x > am->width - 1) x = am->width - 1;
    if (z > am->height - 1) z = am->height - 1;
    uint32_t x0 = (uint32_t)x, z0 = (uint32_t)z;
    uint32_t x1 = x0 + 1 < am->width ? x0 + 1 : x0, z1 = z0 + 1 < am->height ? z0 + 1 : z0;
    double fx = x - x0, fz = z - z0;
#define AM(xx, zz) ((double)am->rgba[((size_t)(zz)*am->width + (xx)) * 4u + ch])
    double a = AM(x0, z0) + (AM(x1, z0) - AM(x0, z0)) * fx;
    double b = AM(x0, z1) + (AM(x1, z1) - AM(x0, z1)) * fx;
#undef AM
    return (float)((a + (b - a) * fz) / 255.0);
}

trn_status trn_unity_terrain_to_labels(const trn_unity_terrain *terrain, trn_labels *labels,
                                       trn_error *err)
{
    if (terrain->layer_count == 0)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1, "the terrain has no splat layers");
    if (terrain->layer_count > 254)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "%u splat layers; labels hold at most 254", terrain->layer_count);
    uint32_t res = terrain->resolution, cells = res - 1;
    trn_labels l;
    trn_status st = trn_labels_init(&l, cells, cells, err);
    if (st) return st;
    for (uint32_t k = 0; k < terrain->layer_count; k++) {
        const char *name = terrain->layers[k].name;
        if ((st = trn_labels_add_name(&l, name, strlen(name), err))) {
            trn_labels_dispose(&l);
            return st;
        }
    }
    for (uint32_t j = 0; j < res; j++)
        for (uint32_t i = 0; i < res; i++) {
            double u = (double)i / cells, v = (double)j / cells;
            uint32_t best = 0;
            float best_w = -1.0f;
            for (uint32_t k = 0; k < terrain->layer_count; k++) {
                float w = trn_unity_terrain_weight(terrain, k, u, v);
                if (w > best_w) best_w = w, best = k;
            }
            uint8_t label = (uint8_t)best;
            if (terrain->holes) {
                uint32_t ci = i < cells ? i : cells - 1, cj = j < cells ? j : cells - 1;
                if (terrain->holes[(size_t)cj * cells + ci] == 0) label = (uint8_t)TRN_LABEL_NONE;
            }
            l.values[(size_t)j * res + i] = label;
        }
    *labels = l;
    return TRN_OK;
}
