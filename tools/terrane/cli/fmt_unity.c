/* Unity SerializedFile (.asset) in the shared verbs: info text/JSON and loading a TerrainData. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detect.h"
#include "fmt_unity.h"

static json_t *vec_json(const float *v, int n)
{
    json_t *a = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(a, json_real(v[k]));
    return a;
}

static void height_range(const trn_unity_terrain *t, int *lo, int *hi)
{
    int a = INT16_MAX, b = INT16_MIN;
    size_t n = (size_t)t->resolution * t->resolution;
    for (size_t k = 0; k < n; k++) {
        if (t->heights[k] < a) a = t->heights[k];
        if (t->heights[k] > b) b = t->heights[k];
    }
    if (n == 0) a = b = 0;
    *lo = a;
    *hi = b;
}

static size_t hole_cells(const trn_unity_terrain *t)
{
    size_t n = 0;
    for (size_t k = 0; k < t->hole_count; k++)
        n += t->holes[k] == 0;
    return n;
}

json_t *cli_unity_terrain_json(const trn_unity_terrain *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", cli_json_string(t->name));
    json_object_set_new(o, "path_id", json_integer(t->path_id));
    json_object_set_new(o, "resolution", json_integer(t->resolution));
    json_object_set_new(o, "scale", vec_json(t->scale, 3));
    float size[3] = {(float)(t->resolution - 1) * t->scale[0], t->scale[1],
                     (float)(t->resolution - 1) * t->scale[2]};
    json_object_set_new(o, "size", vec_json(size, 3));
    int lo, hi;
    height_range(t, &lo, &hi);
    json_t *h = json_object();
    json_object_set_new(h, "stored_min", json_integer(lo));
    json_object_set_new(h, "stored_max", json_integer(hi));
    json_object_set_new(h, "metres_min", json_real(trn_unity_height_metres(t, (int16_t)lo)));
    json_object_set_new(h, "metres_max", json_real(trn_unity_height_metres(t, (int16_t)hi)));
    json_object_set_new(o, "heights", h);
    json_t *holes = json_object();
    json_object_set_new(holes, "stored", json_boolean(t->hole_count > 0));
    json_object_set_new(holes, "cells", json_integer((json_int_t)t->hole_count));
    json_object_set_new(holes, "holes", json_integer((json_int_t)hole_cells(t)));
    json_object_set_new(o, "holes", holes);
    json_object_set_new(o, "alphamap_resolution", json_integer(t->alphamap_resolution));
    json_object_set_new(o, "base_map_resolution", json_integer(t->base_map_resolution));
    json_t *layers = json_array();
    for (uint32_t k = 0; k < t->layer_count; k++) {
        const trn_unity_layer *l = &t->layers[k];
        json_t *lo_ = json_object();
        json_object_set_new(lo_, "name", cli_json_string(l->name));
        json_object_set_new(lo_, "kind",
                            cli_json_string(l->is_splat_prototype ? "SplatPrototype" : "TerrainLayer"));
        json_object_set_new(lo_, "file_id", json_integer(l->ref.file_id));
        json_object_set_new(lo_, "path_id", json_integer(l->ref.path_id));
        if (l->is_splat_prototype) {
            json_object_set_new(lo_, "tile_size", vec_json(l->tile_size, 2));
            json_object_set_new(lo_, "tile_offset", vec_json(l->tile_offset, 2));
        }
        json_array_append_new(layers, lo_);
    }
    json_object_set_new(o, "layers", layers);
    json_t *maps = json_array();
    for (uint32_t k = 0; k < t->alphamap_count; k++) {
        const trn_unity_alphamap *a = &t->alphamaps[k];
        json_t *m = json_object();
        json_object_set_new(m, "name", cli_json_string(a->name));
        json_object_set_new(m, "file_id", json_integer(a->ref.file_id));
        json_object_set_new(m, "path_id", json_integer(a->ref.path_id));
        json_object_set_new(m, "in_file", json_boolean(a->found));
        if (a->width) {
            json_object_set_new(m, "width", json_integer(a->width));
            json_object_set_new(m, "height", json_integer(a->height));
            json_object_set_new(m, "format", json_integer(a->format));
            json_object_set_new(m, "mip_count", json_integer(a->mip_count));
        }
        json_array_append_new(maps, m);
    }
    json_object_set_new(o, "alphamaps", maps);
    json_t *protos = json_array();
    for (uint32_t k = 0; k < t->prototype_count; k++) {
        json_t *p = json_object();
        json_object_set_new(p, "prefab_file_id", json_integer(t->prototypes[k].prefab.file_id));
        json_object_set_new(p, "prefab_path_id", json_integer(t->prototypes[k].prefab.path_id));
        json_object_set_new(p, "bend_factor", json_real(t->prototypes[k].bend_factor));
        uint32_t count = 0;
        for (uint32_t i = 0; i < t->tree_count; i++)
            count += t->trees[i].prototype == (int32_t)k;
        json_object_set_new(p, "trees", json_integer(count));
        json_array_append_new(protos, p);
    }
    json_object_set_new(o, "tree_prototypes", protos);
    json_object_set_new(o, "trees", json_integer(t->tree_count));
    return o;
}

static const char *format_name(int32_t f)
{
    switch (f) {
    case 4:
        return "RGBA32";
    case 5:
        return "ARGB32";
    case 14:
        return "BGRA32";
    default:
        return "other";
    }
}

static void print_text(const char *path, const trn_unity_file *f, const trn_unity_terrain *t,
                       bool has_terrain, const char *not_read)
{
    cli_printf("file:      %s\n", path);
    cli_printf("format:    Unity SerializedFile version %u (%s-endian), Unity %s, platform %d\n",
           f->version, f->big_endian ? "big" : "little", f->unity_version, f->target_platform);
    cli_printf("layout:    %llu bytes, metadata %llu bytes, data at offset %llu\n",
           (unsigned long long)f->file_size, (unsigned long long)f->metadata_size,
           (unsigned long long)f->data_offset);
    cli_printf("types:     %u (type trees present)\n", f->type_count);
    cli_printf("objects:   %u\n", f->object_count);
    for (uint32_t k = 0; k < f->object_count; k++) {
        const trn_unity_object *o = &f->objects[k];
        const char *cls = trn_unity_class_name(o->class_id);
        cli_printf("  path id %lld: %s (class %d), %u bytes at offset %llu\n", (long long)o->path_id,
               cls ? cls : "?", o->class_id, o->size, (unsigned long long)o->offset);
    }
    for (uint32_t k = 0; k < f->external_count; k++)
        cli_printf("external:  %u: '%s' type %d\n", k + 1, f->externals[k].path, f->externals[k].type);
    if (!has_terrain) {
        if (not_read[0])
            cli_printf("terrain:   not read: %s\n", not_read);
        else
            cli_printf("terrain:   none (no TerrainData in the file)\n");
        return;
    }
    int lo, hi;
    height_range(t, &lo, &hi);
    cli_printf("terrain:   '%s' (path id %lld)\n", t->name, (long long)t->path_id);
    cli_printf("heightmap: %u x %u samples, scale %g x %g x %g m, size %g x %g x %g m\n", t->resolution,
           t->resolution, t->scale[0], t->scale[1], t->scale[2],
           (double)(t->resolution - 1) * t->scale[0], t->scale[1],
           (double)(t->resolution - 1) * t->scale[2]);
    cli_printf("heights:   stored %d .. %d (of 0..32766) = %.4f .. %.4f m\n", lo, hi,
           trn_unity_height_metres(t, (int16_t)lo), trn_unity_height_metres(t, (int16_t)hi));
    if (t->hole_count)
        cli_printf("holes:     %zu of %zu cells\n", hole_cells(t), t->hole_count);
    else
        cli_printf("holes:     none stored\n");
    cli_printf("splat:     %u layer(s), alpha maps %u x %u, base map %u\n", t->layer_count,
           t->alphamap_resolution, t->alphamap_resolution, t->base_map_resolution);
    for (uint32_t k = 0; k < t->layer_count; k++)
        cli_printf("  layer %u: '%s' (%s, file %d, path id %lld)\n", k, t->layers[k].name,
               t->layers[k].is_splat_prototype ? "SplatPrototype" : "TerrainLayer",
               t->layers[k].ref.file_id, (long long)t->layers[k].ref.path_id);
    for (uint32_t k = 0; k < t->alphamap_count; k++) {
        const trn_unity_alphamap *a = &t->alphamaps[k];
        if (a->width)
            cli_printf("  alpha map %u: '%s' %u x %u %s, %d mip level(s)%s\n", k, a->name, a->width,
                   a->height, format_name(a->format), a->mip_count,
                   a->found ? "" : " (pixels not in this file)");
        else
            cli_printf("  alpha map %u: file %d path id %lld (not in this file)\n", k, a->ref.file_id,
                   (long long)a->ref.path_id);
    }
    cli_printf("trees:     %u instance(s), %u prototype(s)\n", t->tree_count, t->prototype_count);
    for (uint32_t k = 0; k < t->prototype_count; k++) {
        uint32_t count = 0;
        for (uint32_t i = 0; i < t->tree_count; i++)
            count += t->trees[i].prototype == (int32_t)k;
        cli_printf("  prototype %u: prefab file %d path id %lld, %u tree(s)\n", k,
               t->prototypes[k].prefab.file_id, (long long)t->prototypes[k].prefab.path_id, count);
    }
}

static json_t *file_json(const char *path, const trn_unity_file *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(o, "input_format", cli_json_string("unity"));
    json_object_set_new(o, "serialized_version", json_integer(f->version));
    json_object_set_new(o, "unity_version", cli_json_string(f->unity_version));
    json_object_set_new(o, "target_platform", json_integer(f->target_platform));
    json_object_set_new(o, "big_endian", json_boolean(f->big_endian));
    json_object_set_new(o, "file_size", json_integer((json_int_t)f->file_size));
    json_object_set_new(o, "metadata_size", json_integer((json_int_t)f->metadata_size));
    json_object_set_new(o, "data_offset", json_integer((json_int_t)f->data_offset));
    json_t *types = json_array();
    for (uint32_t k = 0; k < f->type_count; k++) {
        json_t *t = json_object();
        const char *cls = trn_unity_class_name(f->types[k].class_id);
        json_object_set_new(t, "class_id", json_integer(f->types[k].class_id));
        json_object_set_new(t, "class", cls ? cli_json_string(cls) : json_null());
        json_object_set_new(t, "nodes", json_integer(f->types[k].node_count));
        json_array_append_new(types, t);
    }
    json_object_set_new(o, "types", types);
    json_t *objs = json_array();
    for (uint32_t k = 0; k < f->object_count; k++) {
        const trn_unity_object *ob = &f->objects[k];
        const char *cls = trn_unity_class_name(ob->class_id);
        json_t *j = json_object();
        json_object_set_new(j, "path_id", json_integer(ob->path_id));
        json_object_set_new(j, "class_id", json_integer(ob->class_id));
        json_object_set_new(j, "class", cls ? cli_json_string(cls) : json_null());
        json_object_set_new(j, "offset", json_integer((json_int_t)ob->offset));
        json_object_set_new(j, "size", json_integer(ob->size));
        json_array_append_new(objs, j);
    }
    json_object_set_new(o, "objects", objs);
    json_t *ext = json_array();
    for (uint32_t k = 0; k < f->external_count; k++) {
        json_t *j = json_object();
        char guid[33];
        for (int b = 0; b < 16; b++)
            snprintf(guid + 2 * b, 3, "%02x", f->externals[k].guid[b]);
        json_object_set_new(j, "path", cli_json_string(f->externals[k].path));
        json_object_set_new(j, "guid", cli_json_string(guid));
        json_object_set_new(j, "type", json_integer(f->externals[k].type));
        json_array_append_new(ext, j);
    }
    json_object_set_new(o, "externals", ext);
    return o;
}

static void unity_limits(const cli_load_options *opt, trn_unity_limits *lim)
{
    trn_unity_limits_default(lim);
    if (opt && opt->max_samples) lim->max_samples = opt->max_samples;
}

int cli_unity_info_limited(cli_ctx *ctx, const char *path, const cli_load_options *opt)
{
    trn_unity_file f;
    trn_error e;
    trn_unity_limits lim;
    unity_limits(opt, &lim);
    if (trn_unity_file_read(cli_input_path(path), &lim, &f, &e) != TRN_OK) return cli_fail(ctx, &e);
    trn_unity_terrain t;
    bool has_terrain = false;
    char not_read[512] = "";
    trn_status st = trn_unity_terrain_from_file(&f, 0, &lim, &t, &e);
    if (st == TRN_OK) {
        has_terrain = true;
    } else if (st == TRN_ERR_LIMIT) {
        /* Too large to read: the file is still described, the terrain's limit said. */
        snprintf(not_read, sizeof not_read, "%s", e.message);
    } else if (st != TRN_ERR_NOT_FOUND) {
        trn_unity_file_dispose(&f);
        return cli_fail(ctx, &e);
    }
    if (ctx->json) {
        json_t *o = file_json(path, &f);
        json_object_set_new(o, "terrain", has_terrain ? cli_unity_terrain_json(&t) : json_null());
        if (not_read[0]) json_object_set_new(o, "terrain_not_read", cli_json_string(not_read));
        cli_print_json(o);
    } else {
        print_text(path, &f, &t, has_terrain, not_read);
    }
    if (has_terrain) trn_unity_terrain_dispose(&t);
    trn_unity_file_dispose(&f);
    return CLI_EXIT_OK;
}

int cli_unity_info(cli_ctx *ctx, const char *path)
{
    return cli_unity_info_limited(ctx, path, NULL);
}

int cli_unity_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out)
{
    trn_unity_terrain t;
    trn_error e;
    trn_unity_limits lim;
    unity_limits(opt, &lim);
    if (trn_unity_terrain_read(cli_input_path(path), &lim, &t, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    trn_status st = trn_unity_terrain_to_field(&t, &out->field, &e);
    if (st == TRN_OK && t.layer_count > 0 && t.layer_count <= 254) {
        st = trn_unity_terrain_to_labels(&t, &out->labels, &e);
        out->has_labels = st == TRN_OK;
    }
    /* A heightfield with one label per sample keeps the strongest layer only. */
    if (t.layer_count > 254)
        cli_drops_add(&out->drops, "%u splat layers (a label map holds 254)", t.layer_count);
    else if (t.layer_count > 1 && t.alphamap_count)
        cli_drops_add(&out->drops, "blended splat weights of %u layers (the strongest is kept)",
                      t.layer_count);
    if (t.tree_count)
        cli_drops_add(&out->drops, "%u tree%s", t.tree_count, t.tree_count == 1 ? "" : "s");
    trn_unity_terrain_dispose(&t);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}
