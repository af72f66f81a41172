/* glTF 2.0 writer for terrain meshes: .glb, or .gltf with a side .bin or an embedded buffer. */
#define _XOPEN_SOURCE 700
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/textbuf.h"
#include "core/write_set.h"
#include "formats/gltf/scene.h"
#include "terrane/mesh.h"
#include "terrane/roles.h"

#define GL_FLOAT 5126
#define GL_UNSIGNED_INT 5125
#define GL_ARRAY_BUFFER 34962
#define GL_ELEMENT_ARRAY_BUFFER 34963

/* ---- shared scene helpers (declared in scene.h, used by the OBJ writer too) ---- */

trn_status trn_scene_check(const trn_mesh_scene *s, const char *what, trn_error *err)
{
    if (!s || !s->mesh)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "%s: a mesh is required",
                             what);
    const trn_mesh *m = s->mesh;
    const size_t n = (size_t)m->chunks_x * m->chunks_z;
    for (size_t k = 0; s->levels && k < n; k++)
        if (s->levels[k] >= m->chunks[k].level_count)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "%s: chunk %u_%u: level %u, expected 0..%u", what, m->chunks[k].cx,
                                 m->chunks[k].cz, s->levels[k], m->chunks[k].level_count - 1u);
    /* A drawn level without geometry (a mesh built with defer_levels) is built by the glTF
     * writer from deferred_field; the OBJ writer, and a scene without that field, need it
     * realized. (A built level without vertices still has its arrays.) */
    const bool builds = s->deferred_field && strcmp(what, "glTF") == 0;
    for (size_t k = 0; !builds && k < n; k++)
        if (!trn_scene_level(s, k)->positions)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "%s: chunk %u_%u: its level has no geometry (built with "
                                 "defer_levels): realize it first (trn_mesh_realize)%s",
                                 what, m->chunks[k].cx, m->chunks[k].cz,
                                 strcmp(what, "glTF") == 0 ? " or give the scene its deferred_field"
                                                           : "");
    if (s->water && s->water->body_count && !s->ground)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: water needs the ground it was resolved on", what);
    if (s->instances && s->instances->count) {
        if (!s->palette)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "%s: instances need their palette", what);
        for (size_t k = 0; k < s->instances->count; k++)
            if (s->instances->items[k].rule >= s->palette->rule_count)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "%s: instance %zu names rule %u; the palette has %u", what, k,
                                     s->instances->items[k].rule, s->palette->rule_count);
    }
    if (!(s->uv_scale >= 0.0) || !isfinite(s->uv_scale))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: uv_scale: expected a finite number >= 0, found %g", what,
                             s->uv_scale);
    if (s->biome_material_count && !s->biome_materials)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s: %u biome materials given without their list", what,
                             s->biome_material_count);
    for (uint32_t b = 0; b < s->biome_material_count; b++)
        if (!s->biome_materials[b].name || !(s->biome_materials[b].texture_scale > 0.0) ||
            !isfinite(s->biome_materials[b].texture_scale))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "%s: biome material %u: expected a name and a finite "
                                 "texture_scale > 0",
                                 what, b);
    if (s->biome_sections) {
        /* every section drawn names a biome of the list */
        for (size_t k = 0; k < n; k++) {
            const trn_mesh_level *lv = trn_scene_level(s, k);
            for (uint32_t q = 0; q < lv->section_count; q++)
                if (lv->sections[q].role >= s->biome_material_count)
                    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                         "%s: chunk %u_%u: section of biome %u; %u biome "
                                         "materials given",
                                         what, m->chunks[k].cx, m->chunks[k].cz,
                                         lv->sections[q].role, s->biome_material_count);
        }
    }
    return TRN_OK;
}

void trn_scene_water_free(trn_water_mesh **meshes, uint32_t count)
{
    for (uint32_t b = 0; meshes && b < count; b++)
        trn_water_mesh_free(meshes[b]);
    free(meshes);
}

trn_status trn_scene_water(const trn_mesh_scene *s, trn_water_mesh ***meshes, uint32_t *count,
                           trn_error *err)
{
    *meshes = NULL;
    *count = 0;
    if (!s->water || !s->water->body_count) return TRN_OK;
    trn_water_mesh **list = calloc(s->water->body_count, sizeof *list);
    if (!list) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    for (uint32_t b = 0; b < s->water->body_count; b++) {
        trn_status st = trn_water_mesh_new(s->water, s->ground, b, &list[b], err);
        if (st) {
            trn_scene_water_free(list, s->water->body_count);
            return st;
        }
    }
    *meshes = list;
    *count = s->water->body_count;
    return TRN_OK;
}

void trn_scene_error_dest(trn_error *err, const char *dest)
{
    if (!err || !dest) return;
    const size_t n = strlen(dest);
    if (strncmp(err->file, dest, n) == 0 && strncmp(err->file + n, ".tmp-", 5) == 0)
        snprintf(err->file, sizeof err->file, "%s", dest);
}

char *trn_scene_sibling(const char *dest, const char *ext)
{
    const char *base = trn_scene_basename(dest);
    const char *dot = strrchr(base, '.');
    const size_t stem = dot && dot != base ? (size_t)(dot - dest) : strlen(dest);
    char *out = malloc(stem + strlen(ext) + 1u);
    if (!out) return NULL;
    memcpy(out, dest, stem);
    strcpy(out + stem, ext);
    return out;
}

const char *trn_scene_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* ---- the binary buffer: views made of pieces of 4-byte words ---- */

/* How a piece's words reach the file. The terrain's frame (x east, z north) becomes glTF's
 * (+x east, -z north): z negated, which mirrors, so triangles are reversed to stay front-facing
 * (counter-clockwise seen from above). */
enum piece_form {
    FORM_WORDS = 0, /* as they are */
    FORM_VEC3,      /* (x, y, z) floats: z negated */
    FORM_TRIANGLES  /* index triples (a, b, c) written (a, c, b) */
};

/* What a deferred piece reads from its chunk's level (built while the buffer is written). */
enum piece_source { SOURCE_POSITIONS = 0, SOURCE_NORMALS, SOURCE_INDICES, SOURCE_UVS };

typedef struct piece {
    const void *data; /* 4-byte words: floats or uint32 indices; NULL for a deferred piece */
    size_t words;
    uint32_t add; /* added to each word (index rebasing); 0 for floats */
    uint8_t form; /* enum piece_form */
    /* A deferred piece: words from `offset` on of array `source` of chunk `chunk`'s level. */
    uint8_t source;
    size_t chunk, offset;
} piece;

typedef struct view {
    size_t first_piece, piece_count;
    uint64_t offset, length; /* in the buffer, bytes */
    int target;
} view;

typedef struct writer {
    piece *pieces;
    size_t piece_count, piece_cap;
    view *views;
    size_t view_count, view_cap;
    uint64_t buffer_length;
    json_t *accessors, *buffer_views, *meshes, *materials, *nodes;
    int role_material[256]; /* material index per role, -1 before its first use */
    int water_material, instance_material;
    bool failed;
    /* UV arrays made for the buffer (freed with the writer); uv_scale 0: no UVs. */
    float **owned;
    size_t owned_count, owned_cap;
    double uv_scale;
    json_t *material_extras; /* copied into every terrain material; NULL: none */
    /* Material documents' images: the glTF's images, textures and one repeating sampler
     * (NULL until the first), and the output's folder (real path) their URIs are relative to. */
    json_t *images, *textures, *samplers;
    char *out_dir;
    bool texture_transform;
    const trn_mesh_scene *scene;
    /* The instances' proxy box: 24 vertices, 36 indices. */
    float box_positions[72], box_normals[72];
    uint32_t box_indices[36];
    /* Deferred levels (trn_mesh_scene.deferred_field): per chunk the drawn level's counts,
     * bounds and sections (lazy[k]: built here, arrays freed; else the mesh's own level), and
     * the one chunk level built while the buffer is written, with its UVs. */
    trn_mesh_level *meta;
    bool *lazy;
    size_t meta_count;
    size_t cached_chunk;
    bool cached_valid;
    trn_mesh_level cached;
    float *cached_uvs;
} writer;

/* The level of chunk k the writer draws. */
static const trn_mesh_level *wlevel(const writer *w, size_t k)
{
    return w->meta ? &w->meta[k] : trn_scene_level(w->scene, k);
}

static bool add_piece(writer *w, const void *data, size_t words, uint32_t add, uint8_t form)
{
    if (w->piece_count == w->piece_cap) {
        size_t cap = w->piece_cap ? 2u * w->piece_cap : 64u;
        piece *p = realloc(w->pieces, cap * sizeof *p);
        if (!p) return false;
        w->pieces = p;
        w->piece_cap = cap;
    }
    w->pieces[w->piece_count++] = (piece){data, words, add, form, 0, 0, 0};
    return true;
}

/* Words [offset, offset + words) of one array of chunk k's drawn level: the array itself, or
 * a deferred piece when the level is built only while the buffer is written. */
static bool level_piece(writer *w, size_t k, uint8_t source, size_t offset, size_t words,
                        uint32_t add, uint8_t form)
{
    if (!w->lazy || !w->lazy[k]) {
        const trn_mesh_level *lv = wlevel(w, k);
        const void *data = source == SOURCE_POSITIONS ? (const void *)(lv->positions + offset)
                           : source == SOURCE_NORMALS ? (const void *)(lv->normals + offset)
                                                      : (const void *)(lv->indices + offset);
        return add_piece(w, data, words, add, form);
    }
    if (!add_piece(w, NULL, words, add, form)) return false;
    piece *p = &w->pieces[w->piece_count - 1u];
    p->source = source;
    p->chunk = k;
    p->offset = offset;
    return true;
}

/* Start a view; its pieces follow with add_piece; end_view closes it. */
static long begin_view(writer *w, int target)
{
    if (w->view_count == w->view_cap) {
        size_t cap = w->view_cap ? 2u * w->view_cap : 32u;
        view *v = realloc(w->views, cap * sizeof *v);
        if (!v) {
            w->failed = true;
            return -1;
        }
        w->views = v;
        w->view_cap = cap;
    }
    w->views[w->view_count] = (view){w->piece_count, 0, w->buffer_length, 0, target};
    return (long)w->view_count++;
}

static void end_view(writer *w, long index)
{
    view *v = &w->views[index];
    v->piece_count = w->piece_count - v->first_piece;
    uint64_t words = 0;
    for (size_t p = v->first_piece; p < w->piece_count; p++)
        words += w->pieces[p].words;
    v->length = 4u * words;
    /* Every piece is made of 4-byte words, so views stay 4-byte aligned. */
    w->buffer_length += v->length;
    json_t *o = json_object();
    json_object_set_new(o, "buffer", json_integer(0));
    json_object_set_new(o, "byteOffset", json_integer((json_int_t)v->offset));
    json_object_set_new(o, "byteLength", json_integer((json_int_t)v->length));
    json_object_set_new(o, "target", json_integer(v->target));
    json_array_append_new(w->buffer_views, o);
}

/* A terrain z as glTF's z: negated, with 0 kept +0. */
static float flip_z(float z)
{
    return z == 0.0f ? 0.0f : -z;
}

static json_t *float3(const float v[3])
{
    json_t *a = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(a, json_real((double)v[k]));
    return a;
}

/* An accessor over view; min/max given for POSITION. Returns its index. */
static long add_accessor(writer *w, long view_index, uint64_t byte_offset, size_t count,
                         int component, const char *type, const float *min, const float *max)
{
    json_t *o = json_object();
    json_object_set_new(o, "bufferView", json_integer(view_index));
    if (byte_offset) json_object_set_new(o, "byteOffset", json_integer((json_int_t)byte_offset));
    json_object_set_new(o, "componentType", json_integer(component));
    json_object_set_new(o, "count", json_integer((json_int_t)count));
    json_object_set_new(o, "type", json_string(type));
    if (min && max) {
        /* Bounds of FORM_VEC3 positions: z negated swaps its least and greatest. */
        const float lo[3] = {min[0], min[1], flip_z(max[2])};
        const float hi[3] = {max[0], max[1], flip_z(min[2])};
        json_object_set_new(o, "min", float3(lo));
        json_object_set_new(o, "max", float3(hi));
    }
    json_array_append_new(w->accessors, o);
    return (long)json_array_size(w->accessors) - 1;
}

static json_t *color4(double r, double g, double b, double a)
{
    json_t *c = json_array();
    json_array_append_new(c, json_real(r));
    json_array_append_new(c, json_real(g));
    json_array_append_new(c, json_real(b));
    json_array_append_new(c, json_real(a));
    return c;
}

static char *uri_escape(const char *name);

/* An image's URI relative to the glTF file's folder: the real paths' shared folders left out,
 * ".." for each of the output's folders below them, each name percent-escaped. NULL when out
 * of memory or without the output's folder. */
static char *relative_uri(const writer *w, const char *target)
{
    if (!w->out_dir || !target) return NULL;
    const char *a = w->out_dir, *b = target;
    size_t common = 0; /* the end of the folders both paths start with */
    for (size_t k = 0;; k++) {
        if ((a[k] == '/' || a[k] == '\0') && b[k] == '/') common = k;
        if (!a[k] || a[k] != b[k]) break;
    }
    size_t ups = 0; /* the output's folders below them */
    for (const char *p = a + common; *p; p++)
        if (*p != '/' && (p == a || p[-1] == '/')) ups++;
    const char *rest = b + common + (b[common] == '/' ? 1 : 0);
    char *out = malloc(3u * ups + 3u * strlen(rest) + 1u);
    if (!out) return NULL;
    char *o = out;
    for (size_t k = 0; k < ups; k++) memcpy(o, "../", 3), o += 3;
    *o = '\0';
    char *copy = strdup(rest);
    if (!copy) {
        free(out);
        return NULL;
    }
    for (char *part = copy, *next; part; part = next) {
        next = strchr(part, '/');
        if (next) *next++ = '\0';
        char *e = uri_escape(part);
        if (!e) {
            free(copy);
            free(out);
            return NULL;
        }
        strcat(o, e);
        if (next) strcat(o, "/");
        o += strlen(o);
        free(e);
    }
    free(copy);
    return out;
}

/* A texture of the image at real path target (one repeating, mipmapped sampler for all);
 * -1 when out of memory. */
static long add_texture(writer *w, const char *target)
{
    char *uri = relative_uri(w, target);
    if (!uri) return -1;
    if (!w->images) {
        w->images = json_array();
        w->textures = json_array();
        w->samplers = json_array();
        json_array_append_new(w->samplers, json_pack("{s:i, s:i, s:i, s:i}", "magFilter", 9729,
                                                     "minFilter", 9987, "wrapS", 10497, "wrapT",
                                                     10497));
    }
    for (size_t k = 0; k < json_array_size(w->images); k++)
        if (strcmp(json_string_value(json_object_get(json_array_get(w->images, k), "uri")), uri) ==
            0) {
            free(uri);
            for (size_t t = 0; t < json_array_size(w->textures); t++)
                if (json_integer_value(json_object_get(json_array_get(w->textures, t), "source")) ==
                    (json_int_t)k)
                    return (long)t;
        }
    json_array_append_new(w->images, json_pack("{s:s}", "uri", uri));
    free(uri);
    json_array_append_new(w->textures, json_pack("{s:i, s:i}", "sampler", 0, "source",
                                                 (int)json_array_size(w->images) - 1));
    return (long)json_array_size(w->textures) - 1;
}

/* {"index": K, "texCoord": 0} with the Material's texture scale as KHR_texture_transform. */
static json_t *texture_info(writer *w, long index, double scale)
{
    json_t *o = json_pack("{s:i, s:i}", "index", (int)index, "texCoord", 0);
    if (scale != 1.0) {
        json_t *ext = json_object();
        json_object_set_new(ext, "KHR_texture_transform",
                            json_pack("{s:[f, f]}", "scale", scale, scale));
        json_object_set_new(o, "extensions", ext);
        w->texture_transform = true;
    }
    return o;
}

/* A Material document's maps as URIs relative to the glTF file ({"texture_scale", "albedo",
 * ...}); NULL for a material without a document. */
static json_t *material_maps_json(const writer *w, const trn_material *m)
{
    if (!m || !m->source) return NULL;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->name));
    json_object_set_new(o, "texture_scale", json_real(m->texture_scale));
    for (int k = 0; k < TRN_MAP_COUNT; k++) {
        char *uri = m->paths[k] ? relative_uri(w, m->paths[k]) : NULL;
        if (uri) json_object_set_new(o, trn_material_map_name(k), json_string(uri));
        free(uri);
    }
    return o;
}

/* A role's glTF material with its Material document's maps as textures (a mesh with UVs);
 * the base colour and emission factors then let the images through unchanged. */
static void material_textures(writer *w, json_t *material, const trn_material *m)
{
    json_t *pbr = json_object_get(material, "pbrMetallicRoughness");
    const double k = m->texture_scale;
    long t;
    if (m->paths[TRN_MAP_ALBEDO] && (t = add_texture(w, m->paths[TRN_MAP_ALBEDO])) >= 0) {
        json_object_set_new(pbr, "baseColorFactor", color4(1, 1, 1, 1));
        json_object_set_new(pbr, "baseColorTexture", texture_info(w, t, k));
    }
    /* Grey roughness: its green channel is glTF's roughness; metallicFactor 0 ignores blue. */
    if (m->paths[TRN_MAP_ROUGHNESS] && (t = add_texture(w, m->paths[TRN_MAP_ROUGHNESS])) >= 0)
        json_object_set_new(pbr, "metallicRoughnessTexture", texture_info(w, t, k));
    if (m->paths[TRN_MAP_NORMAL] && (t = add_texture(w, m->paths[TRN_MAP_NORMAL])) >= 0)
        json_object_set_new(material, "normalTexture", texture_info(w, t, k));
    if (m->paths[TRN_MAP_EMISSIVE] && (t = add_texture(w, m->paths[TRN_MAP_EMISSIVE])) >= 0) {
        json_object_set_new(material, "emissiveTexture", texture_info(w, t, k));
        json_object_set_new(material, "emissiveFactor", json_pack("[f, f, f]", 1.0, 1.0, 1.0));
    }
}

static long add_material(writer *w, const char *name, json_t *color, double roughness, bool blend)
{
    json_t *pbr = json_object();
    json_object_set_new(pbr, "baseColorFactor", color);
    json_object_set_new(pbr, "metallicFactor", json_real(0.0));
    json_object_set_new(pbr, "roughnessFactor", json_real(roughness));
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "pbrMetallicRoughness", pbr);
    if (blend) {
        json_object_set_new(o, "alphaMode", json_string("BLEND"));
        json_object_set_new(o, "doubleSided", json_true());
    }
    json_array_append_new(w->materials, o);
    return (long)json_array_size(w->materials) - 1;
}

/* An sRGB colour component 0..1 in linear light, through the byte it stands for. */
static double unit_to_linear(float c)
{
    const double b = c <= 0.0f ? 0.0 : c >= 1.0f ? 255.0 : floor((double)c * 255.0 + 0.5);
    return trn_srgb_to_linear((uint8_t)b);
}

/* A biome section's material: the biome's name and colour, its material id and scale. */
static long biome_material(writer *w, uint8_t biome)
{
    const trn_mesh_biome_material *bm = &w->scene->biome_materials[biome];
    json_t *c = color4(unit_to_linear(bm->color[0]), unit_to_linear(bm->color[1]),
                       unit_to_linear(bm->color[2]), 1.0);
    const long index = add_material(w, bm->name, c, 1.0, false);
    json_t *ex = json_object();
    json_object_set_new(ex, "biome", json_string(bm->name));
    json_object_set_new(ex, "material", bm->material ? json_string(bm->material) : json_null());
    json_object_set_new(ex, "texture_scale", json_real(bm->texture_scale));
    if (w->uv_scale > 0.0) json_object_set_new(ex, "uv_scale", json_real(w->uv_scale));
    json_object_set_new(json_array_get(w->materials, (size_t)index), "extras", ex);
    return index;
}

static long role_material(writer *w, uint8_t role)
{
    if (w->role_material[role] >= 0) return w->role_material[role];
    if (w->scene->biome_sections) {
        w->role_material[role] = (int)biome_material(w, role);
        return w->role_material[role];
    }
    uint8_t rgba[4] = {160, 160, 160, 255};
    const char *name = "terrain";
    if (role < TRN_ROLE_COUNT) {
        trn_roles_color(role, rgba);
        name = trn_surface_role_name((trn_surface_role)role);
    } else if (role != TRN_MESH_NO_ROLE) {
        name = "none";
    }
    json_t *c = color4(trn_srgb_to_linear(rgba[0]), trn_srgb_to_linear(rgba[1]),
                       trn_srgb_to_linear(rgba[2]), 1.0);
    w->role_material[role] = (int)add_material(w, name, c, 1.0, false);
    json_t *material = json_array_get(w->materials, (size_t)w->role_material[role]);
    if (w->material_extras)
        json_object_set_new(material, "extras", json_deep_copy(w->material_extras));
    const trn_material *doc = role < TRN_ROLE_COUNT ? w->scene->role_materials[role] : NULL;
    if (doc && doc->source) {
        if (w->uv_scale > 0.0) material_textures(w, material, doc);
        json_t *ex = json_object_get(material, "extras");
        if (!ex) json_object_set_new(material, "extras", ex = json_object());
        json_object_set_new(ex, "material", material_maps_json(w, doc));
    }
    return w->role_material[role];
}

/* A triangle primitive; normal, texcoord and material < 0 are left out. */
static json_t *primitive_uv(long position, long normal, long texcoord, long indices, long material)
{
    json_t *attr = json_object();
    json_object_set_new(attr, "POSITION", json_integer(position));
    if (normal >= 0) json_object_set_new(attr, "NORMAL", json_integer(normal));
    if (texcoord >= 0) json_object_set_new(attr, "TEXCOORD_0", json_integer(texcoord));
    json_t *p = json_object();
    json_object_set_new(p, "attributes", attr);
    json_object_set_new(p, "indices", json_integer(indices));
    if (material >= 0) json_object_set_new(p, "material", json_integer(material));
    json_object_set_new(p, "mode", json_integer(4));
    return p;
}

static json_t *primitive(long position, long normal, long indices, long material)
{
    return primitive_uv(position, normal, -1, indices, material);
}

/* The UVs of count positions (x, y, z terrain-local): u = x * s, v = glTF z * s, computed in
 * double and rounded once to float, so a reader checks them against the written positions. */
static float *make_uvs(writer *w, const float *positions, uint32_t count)
{
    if (w->owned_count == w->owned_cap) {
        size_t cap = w->owned_cap ? 2u * w->owned_cap : 16u;
        float **o = realloc(w->owned, cap * sizeof *o);
        if (!o) return NULL;
        w->owned = o;
        w->owned_cap = cap;
    }
    float *uv = malloc((count ? count : 1u) * 2u * sizeof *uv);
    if (!uv) return NULL;
    for (uint32_t v = 0; v < count; v++) {
        uv[2u * v] = (float)((double)positions[3u * v] * w->uv_scale);
        uv[2u * v + 1u] = (float)((double)flip_z(positions[3u * v + 2u]) * w->uv_scale);
    }
    w->owned[w->owned_count++] = uv;
    return uv;
}

/* Chunk k's UVs as a piece: made now, or from the level built while the buffer is written. */
static bool uv_piece(writer *w, size_t k)
{
    const trn_mesh_level *lv = wlevel(w, k);
    if (w->lazy && w->lazy[k]) {
        if (!add_piece(w, NULL, 2u * (size_t)lv->vertex_count, 0, FORM_WORDS)) return false;
        piece *p = &w->pieces[w->piece_count - 1u];
        p->source = SOURCE_UVS;
        p->chunk = k;
        return true;
    }
    const float *uv = make_uvs(w, lv->positions, lv->vertex_count);
    return uv && add_piece(w, uv, 2u * (size_t)lv->vertex_count, 0, FORM_WORDS);
}

static long add_mesh(writer *w, const char *name, json_t *primitives, json_t *extras)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "primitives", primitives);
    if (extras) json_object_set_new(o, "extras", extras);
    json_array_append_new(w->meshes, o);
    return (long)json_array_size(w->meshes) - 1;
}

static long add_node(writer *w, json_t *node)
{
    json_array_append_new(w->nodes, node);
    return (long)json_array_size(w->nodes) - 1;
}

static json_t *named_node(const char *name, long mesh)
{
    json_t *n = json_object();
    json_object_set_new(n, "name", json_string(name));
    if (mesh >= 0) json_object_set_new(n, "mesh", json_integer(mesh));
    return n;
}

/* ---- the terrain ---- */

/* One chunk's level as a mesh: its own vertex views, one primitive per section. */
static long chunk_mesh(writer *w, size_t k)
{
    const trn_mesh_chunk *ch = &w->scene->mesh->chunks[k];
    const trn_mesh_level *lv = wlevel(w, k);
    const size_t floats = 3u * (size_t)lv->vertex_count;
    long pv = begin_view(w, GL_ARRAY_BUFFER);
    if (pv < 0 || !level_piece(w, k, SOURCE_POSITIONS, 0, floats, 0, FORM_VEC3)) return -1;
    end_view(w, pv);
    long nv = begin_view(w, GL_ARRAY_BUFFER);
    if (nv < 0 || !level_piece(w, k, SOURCE_NORMALS, 0, floats, 0, FORM_VEC3)) return -1;
    end_view(w, nv);
    long iv = begin_view(w, GL_ELEMENT_ARRAY_BUFFER);
    if (iv < 0 || !level_piece(w, k, SOURCE_INDICES, 0, lv->index_count, 0, FORM_TRIANGLES))
        return -1;
    end_view(w, iv);
    long pa =
        add_accessor(w, pv, 0, lv->vertex_count, GL_FLOAT, "VEC3", lv->bounds_min, lv->bounds_max);
    long na = add_accessor(w, nv, 0, lv->vertex_count, GL_FLOAT, "VEC3", NULL, NULL);
    long ta = -1;
    if (w->uv_scale > 0.0) {
        long tv = begin_view(w, GL_ARRAY_BUFFER);
        if (tv < 0 || !uv_piece(w, k)) return -1;
        end_view(w, tv);
        ta = add_accessor(w, tv, 0, lv->vertex_count, GL_FLOAT, "VEC2", NULL, NULL);
    }
    json_t *prims = json_array();
    for (uint32_t s = 0; s < lv->section_count; s++) {
        const trn_mesh_section *sec = &lv->sections[s];
        long ia = add_accessor(w, iv, 4u * (uint64_t)sec->first, sec->count, GL_UNSIGNED_INT,
                               "SCALAR", NULL, NULL);
        json_array_append_new(prims, primitive_uv(pa, na, ta, ia, role_material(w, sec->role)));
    }
    char name[48];
    snprintf(name, sizeof name, "chunk_%u_%u", ch->cx, ch->cz);
    json_t *extras = json_object();
    json_object_set_new(extras, "level", json_integer(lv->level));
    json_object_set_new(extras, "error", json_real(isfinite(lv->error) ? lv->error : -1.0));
    json_object_set_new(extras, "skirt_depth", json_real(lv->skirt_depth));
    return add_mesh(w, name, prims, extras);
}

/* Every chunk's level in one mesh: shared vertex views, one primitive per role. */
static trn_status merged_mesh(writer *w, const trn_mesh_scene *s, json_t *children, trn_error *err)
{
    const trn_mesh *m = s->mesh;
    const size_t n = (size_t)m->chunks_x * m->chunks_z;
    uint64_t total = 0;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool any = false;
    bool roles[256] = {false};
    for (size_t k = 0; k < n; k++) {
        const trn_mesh_level *lv = wlevel(w, k);
        if (!lv->vertex_count) continue;
        total += lv->vertex_count;
        for (int c = 0; c < 3; c++) {
            if (!any || lv->bounds_min[c] < lo[c]) lo[c] = lv->bounds_min[c];
            if (!any || lv->bounds_max[c] > hi[c]) hi[c] = lv->bounds_max[c];
        }
        any = true;
        for (uint32_t q = 0; q < lv->section_count; q++)
            roles[lv->sections[q].role] = true;
    }
    if (!any) return TRN_OK;
    if (total >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "glTF: the merged terrain has %llu vertices, more than a 32-bit "
                             "index holds; write --chunks or a coarser level",
                             (unsigned long long)total);
    long pv = begin_view(w, GL_ARRAY_BUFFER);
    for (size_t k = 0; pv >= 0 && k < n; k++) {
        const trn_mesh_level *lv = wlevel(w, k);
        if (lv->vertex_count && !level_piece(w, k, SOURCE_POSITIONS, 0,
                                             3u * (size_t)lv->vertex_count, 0, FORM_VEC3))
            w->failed = true;
    }
    if (pv < 0 || w->failed)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    end_view(w, pv);
    long nv = begin_view(w, GL_ARRAY_BUFFER);
    for (size_t k = 0; nv >= 0 && k < n; k++) {
        const trn_mesh_level *lv = wlevel(w, k);
        if (lv->vertex_count && !level_piece(w, k, SOURCE_NORMALS, 0,
                                             3u * (size_t)lv->vertex_count, 0, FORM_VEC3))
            w->failed = true;
    }
    if (nv < 0 || w->failed)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    end_view(w, nv);
    long pa = add_accessor(w, pv, 0, (size_t)total, GL_FLOAT, "VEC3", lo, hi);
    long na = add_accessor(w, nv, 0, (size_t)total, GL_FLOAT, "VEC3", NULL, NULL);
    long ta = -1;
    if (w->uv_scale > 0.0) {
        long tv = begin_view(w, GL_ARRAY_BUFFER);
        for (size_t k = 0; tv >= 0 && k < n; k++) {
            if (!wlevel(w, k)->vertex_count) continue;
            if (!uv_piece(w, k)) w->failed = true;
        }
        if (tv < 0 || w->failed)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        end_view(w, tv);
        ta = add_accessor(w, tv, 0, (size_t)total, GL_FLOAT, "VEC2", NULL, NULL);
    }
    json_t *prims = json_array();
    for (int r = 0; r < 256; r++) {
        if (!roles[r]) continue;
        long iv = begin_view(w, GL_ELEMENT_ARRAY_BUFFER);
        uint64_t base = 0, count = 0;
        for (size_t k = 0; iv >= 0 && k < n; k++) {
            const trn_mesh_level *lv = wlevel(w, k);
            for (uint32_t q = 0; q < lv->section_count; q++)
                if (lv->sections[q].role == r) {
                    if (!level_piece(w, k, SOURCE_INDICES, lv->sections[q].first,
                                     lv->sections[q].count, (uint32_t)base, FORM_TRIANGLES))
                        w->failed = true;
                    count += lv->sections[q].count;
                }
            base += lv->vertex_count;
        }
        if (iv < 0 || w->failed) {
            json_decref(prims);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        }
        end_view(w, iv);
        long ia = add_accessor(w, iv, 0, (size_t)count, GL_UNSIGNED_INT, "SCALAR", NULL, NULL);
        json_array_append_new(prims, primitive_uv(pa, na, ta, ia, role_material(w, (uint8_t)r)));
    }
    long mesh = add_mesh(w, "terrain", prims, NULL);
    json_array_append_new(children, json_integer(add_node(w, named_node("terrain_mesh", mesh))));
    return TRN_OK;
}

/* The collider: level 0 of every chunk of c in one mesh, one primitive without material. */
static trn_status collider_node(writer *w, const trn_mesh *c, json_t *roots, uint64_t *vertices,
                                uint64_t *triangles, trn_error *err)
{
    const size_t n = (size_t)c->chunks_x * c->chunks_z;
    uint64_t total = 0, index_total = 0;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    bool any = false;
    double error = 0.0;
    for (size_t k = 0; k < n; k++) {
        const trn_mesh_level *lv = &c->chunks[k].levels[0];
        if (isfinite(lv->error) && lv->error > error) error = lv->error;
        if (!lv->index_count) continue;
        total += lv->vertex_count;
        index_total += lv->index_count;
        for (int a = 0; a < 3; a++) {
            if (!any || lv->bounds_min[a] < lo[a]) lo[a] = lv->bounds_min[a];
            if (!any || lv->bounds_max[a] > hi[a]) hi[a] = lv->bounds_max[a];
        }
        any = true;
    }
    if (total >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "glTF: the collider has %llu vertices, more than a 32-bit index "
                             "holds; give it a larger error",
                             (unsigned long long)total);
    json_t *node = named_node("collider", -1);
    json_t *extras = json_object();
    json_object_set_new(extras, "collider", json_true());
    json_object_set_new(extras, "max_error",
                        json_real(c->adaptive_error >= 0.0 ? c->adaptive_error : error));
    json_object_set_new(node, "extras", extras);
    if (any) {
        long pv = begin_view(w, GL_ARRAY_BUFFER);
        for (size_t k = 0; pv >= 0 && k < n; k++) {
            const trn_mesh_level *lv = &c->chunks[k].levels[0];
            if (lv->index_count &&
                !add_piece(w, lv->positions, 3u * (size_t)lv->vertex_count, 0, FORM_VEC3))
                w->failed = true;
        }
        if (pv >= 0) end_view(w, pv);
        long iv = pv < 0 ? -1 : begin_view(w, GL_ELEMENT_ARRAY_BUFFER);
        uint64_t base = 0;
        for (size_t k = 0; iv >= 0 && k < n; k++) {
            const trn_mesh_level *lv = &c->chunks[k].levels[0];
            if (!lv->index_count) continue;
            if (!add_piece(w, lv->indices, lv->index_count, (uint32_t)base, FORM_TRIANGLES))
                w->failed = true;
            base += lv->vertex_count;
        }
        if (pv < 0 || iv < 0 || w->failed) {
            json_decref(node);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        }
        end_view(w, iv);
        long pa = add_accessor(w, pv, 0, (size_t)total, GL_FLOAT, "VEC3", lo, hi);
        long ia = add_accessor(w, iv, 0, (size_t)index_total, GL_UNSIGNED_INT, "SCALAR", NULL, NULL);
        json_t *prims = json_array();
        json_array_append_new(prims, primitive(pa, -1, ia, -1));
        json_object_set_new(node, "mesh", json_integer(add_mesh(w, "collider", prims, NULL)));
    }
    json_array_append_new(roots, json_integer(add_node(w, node)));
    *vertices += total;
    *triangles += index_total / 3u;
    return TRN_OK;
}

/* Every terrain material's extras: the UV scale and the ground's materials. NULL when the
 * scene has neither. */
/* What a renderer needs to draw the layers as the mapped path does (docs/meshes.md). */
static json_t *mapping_extras(const writer *w, const trn_mesh_scene *s)
{
    const trn_material_mapping *m = s->mapping;
    json_t *o = json_object();
    json_t *layers = json_array();
    for (uint32_t k = 0; k < s->layer_count; k++)
        json_array_append_new(layers, json_string(s->layers[k]));
    json_object_set_new(o, "layers", layers);
    if (s->layer_materials) {
        json_t *maps = json_array();
        for (uint32_t k = 0; k < s->layer_count; k++) {
            json_t *one = material_maps_json(w, &s->layer_materials[k]);
            json_array_append_new(maps, one ? one : json_null());
        }
        json_object_set_new(o, "layer_maps", maps);
    }
    if (m->texture_arrays) {
        json_t *arrays = json_array();
        for (int k = 0; k < TRN_MAPPING_ARRAY_COUNT; k++)
            json_array_append_new(arrays, json_string(trn_mapping_array_name(k)));
        json_object_set_new(o, "texture_arrays", arrays);
    } else {
        json_object_set_new(o, "texture_arrays", json_false());
    }
    if (m->triplanar) {
        json_t *t = json_object();
        json_object_set_new(t, "slope", json_real(m->triplanar_slope));
        json_object_set_new(t, "sharpness", json_real(m->triplanar_sharpness));
        json_object_set_new(o, "triplanar", t);
    } else {
        json_object_set_new(o, "triplanar", json_false());
    }
    if (m->height_blend) {
        json_t *h = json_object();
        json_object_set_new(h, "contrast", json_real(m->height_blend_contrast));
        json_object_set_new(o, "height_blend", h);
    } else {
        json_object_set_new(o, "height_blend", json_false());
    }
    if (m->macro_variation > 0.0) {
        json_t *v = json_object();
        json_object_set_new(v, "strength", json_real(m->macro_variation));
        json_object_set_new(v, "scale", json_real(m->macro_scale));
        json_object_set_new(o, "macro_variation", v);
    }
    return o;
}

static json_t *terrain_material_extras(const writer *w, const trn_mesh_scene *s)
{
    const bool mapped = s->mapping && s->mapping->present;
    if (!(s->uv_scale > 0.0) && !s->biome_material_count && !mapped) return NULL;
    json_t *o = json_object();
    if (mapped) json_object_set_new(o, "mapping", mapping_extras(w, s));
    if (s->uv_scale > 0.0) json_object_set_new(o, "uv_scale", json_real(s->uv_scale));
    if (s->biome_material_count) {
        json_t *list = json_array();
        for (uint32_t b = 0; b < s->biome_material_count; b++) {
            const trn_mesh_biome_material *bm = &s->biome_materials[b];
            json_t *e = json_object();
            json_object_set_new(e, "name", json_string(bm->name));
            json_object_set_new(e, "material", bm->material ? json_string(bm->material) : json_null());
            json_object_set_new(e, "texture_scale", json_real(bm->texture_scale));
            json_array_append_new(list, e);
        }
        json_object_set_new(o, "biomes", list);
    }
    return o;
}

/* ---- water and instances ---- */

static void float_bounds(const float *xyz, uint32_t count, float lo[3], float hi[3])
{
    for (uint32_t v = 0; v < count; v++)
        for (int k = 0; k < 3; k++) {
            const float x = xyz[3u * v + (uint32_t)k];
            if (v == 0 || x < lo[k]) lo[k] = x;
            if (v == 0 || x > hi[k]) hi[k] = x;
        }
}

static long water_mesh(writer *w, const trn_water_body *body, const trn_water_mesh *wm)
{
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    float_bounds(wm->positions, wm->vertex_count, lo, hi);
    long pv = begin_view(w, GL_ARRAY_BUFFER);
    if (pv < 0 || !add_piece(w, wm->positions, 3u * (size_t)wm->vertex_count, 0, FORM_VEC3)) return -1;
    end_view(w, pv);
    long nv = begin_view(w, GL_ARRAY_BUFFER);
    if (nv < 0 || !add_piece(w, wm->normals, 3u * (size_t)wm->vertex_count, 0, FORM_VEC3)) return -1;
    end_view(w, nv);
    long iv = begin_view(w, GL_ELEMENT_ARRAY_BUFFER);
    if (iv < 0 || !add_piece(w, wm->indices, 3u * (size_t)wm->triangle_count, 0, FORM_TRIANGLES)) return -1;
    end_view(w, iv);
    long pa = add_accessor(w, pv, 0, wm->vertex_count, GL_FLOAT, "VEC3", lo, hi);
    long na = add_accessor(w, nv, 0, wm->vertex_count, GL_FLOAT, "VEC3", NULL, NULL);
    long ia = add_accessor(w, iv, 0, 3u * (size_t)wm->triangle_count, GL_UNSIGNED_INT, "SCALAR",
                           NULL, NULL);
    if (w->water_material < 0)
        w->water_material = (int)add_material(w, "water", color4(0.02, 0.15, 0.5, 0.55), 0.1, true);
    json_t *prims = json_array();
    json_array_append_new(prims, primitive(pa, na, ia, w->water_material));
    char name[160];
    snprintf(name, sizeof name, "water_%s", body->id);
    json_t *extras = json_object();
    json_object_set_new(extras, "body", json_string(body->id));
    json_object_set_new(extras, "kind", json_string(trn_water_kind_name(body->kind)));
    return add_mesh(w, name, prims, extras);
}

/* A unit box standing on y = 0 (x, z in -0.5..0.5, y in 0..1): 6 faces of 4 vertices. */
static void box_build(float *box_positions, float *box_normals, uint32_t *box_indices)
{
    /* face: normal axis and sign; corners walk counter-clockwise seen from outside */
    static const float n[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                  {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
    for (int f = 0; f < 6; f++) {
        /* two tangent axes u, v with u x v = n */
        float u[3], v[3];
        const float *nn = n[f];
        if (nn[0] != 0) {
            u[0] = 0, u[1] = 1, u[2] = 0;
            v[0] = 0, v[1] = 0, v[2] = 1;
        } else if (nn[1] != 0) {
            u[0] = 0, u[1] = 0, u[2] = 1;
            v[0] = 1, v[1] = 0, v[2] = 0;
        } else {
            u[0] = 1, u[1] = 0, u[2] = 0;
            v[0] = 0, v[1] = 1, v[2] = 0;
        }
        const float sign = nn[0] + nn[1] + nn[2];
        static const float cu[4] = {-0.5f, 0.5f, 0.5f, -0.5f}, cv[4] = {-0.5f, -0.5f, 0.5f, 0.5f};
        for (int c = 0; c < 4; c++) {
            float *p = box_positions + 3 * (4 * f + c);
            for (int k = 0; k < 3; k++) {
                /* sign flips one tangent so the corners stay counter-clockwise from outside */
                p[k] = 0.5f * nn[k] + cu[c] * u[k] * sign + cv[c] * v[k];
                box_normals[3 * (4 * f + c) + k] = nn[k];
            }
            p[1] += 0.5f; /* stand on the ground */
        }
        const uint32_t b = 4u * (uint32_t)f;
        const uint32_t idx[6] = {b, b + 1u, b + 2u, b, b + 2u, b + 3u};
        memcpy(box_indices + 6 * f, idx, sizeof idx);
    }
}

static trn_status instance_nodes(writer *w, const trn_mesh_scene *s, json_t *children,
                                 trn_error *err)
{
    const trn_palette *p = s->palette;
    box_build(w->box_positions, w->box_normals, w->box_indices);
    long pv = begin_view(w, GL_ARRAY_BUFFER);
    if (pv < 0 || !add_piece(w, w->box_positions, 72, 0, FORM_VEC3)) goto oom;
    end_view(w, pv);
    long nv = begin_view(w, GL_ARRAY_BUFFER);
    if (nv < 0 || !add_piece(w, w->box_normals, 72, 0, FORM_VEC3)) goto oom;
    end_view(w, nv);
    long iv = begin_view(w, GL_ELEMENT_ARRAY_BUFFER);
    if (iv < 0 || !add_piece(w, w->box_indices, 36, 0, FORM_TRIANGLES)) goto oom;
    end_view(w, iv);
    const float lo[3] = {-0.5f, 0.0f, -0.5f}, hi[3] = {0.5f, 1.0f, 0.5f};
    long pa = add_accessor(w, pv, 0, 24, GL_FLOAT, "VEC3", lo, hi);
    long na = add_accessor(w, nv, 0, 24, GL_FLOAT, "VEC3", NULL, NULL);
    long ia = add_accessor(w, iv, 0, 36, GL_UNSIGNED_INT, "SCALAR", NULL, NULL);
    w->instance_material = (int)add_material(w, "instance", color4(0.8, 0.2, 0.6, 1.0), 1.0, false);
    long first_mesh = (long)json_array_size(w->meshes);
    for (uint32_t r = 0; r < p->rule_count; r++) {
        const trn_scatter_rule *rule = &p->rules[r];
        json_t *prims = json_array();
        json_array_append_new(prims, primitive(pa, na, ia, w->instance_material));
        json_t *extras = json_object();
        json_object_set_new(extras, "rule", json_string(rule->id));
        if (rule->model) json_object_set_new(extras, "model", json_string(rule->model));
        if (rule->prefab) json_object_set_new(extras, "prefab", json_string(rule->prefab));
        add_mesh(w, rule->id, prims, extras);
    }
    const double pi = 3.14159265358979323846;
    for (size_t k = 0; k < s->instances->count; k++) {
        const trn_instance *in = &s->instances->items[k];
        const trn_scatter_rule *rule = &p->rules[in->rule];
        char key[TRN_PALETTE_ID_MAX + 48];
        snprintf(key, sizeof key, "%s/%lld_%lld", rule->id, (long long)in->cx, (long long)in->cz);
        json_t *node = named_node(key, first_mesh + (long)in->rule);
        json_t *t = json_array();
        json_array_append_new(t, json_real(in->x));
        json_array_append_new(t, json_real(in->y));
        json_array_append_new(t, json_real(in->z == 0.0 ? 0.0 : -in->z));
        json_object_set_new(node, "translation", t);
        /* The terrain's yaw about +y seen in glTF's mirrored z: the same turn the other way. */
        const double half = -in->yaw * pi / 360.0;
        json_object_set_new(node, "rotation", color4(0.0, sin(half), 0.0, cos(half)));
        json_t *sc = json_array();
        for (int c = 0; c < 3; c++)
            json_array_append_new(sc, json_real(in->scale));
        json_object_set_new(node, "scale", sc);
        json_t *extras = json_object();
        json_object_set_new(extras, "id", json_string(key));
        json_object_set_new(extras, "rule", json_string(rule->id));
        if (rule->model) json_object_set_new(extras, "model", json_string(rule->model));
        if (rule->prefab) json_object_set_new(extras, "prefab", json_string(rule->prefab));
        json_object_set_new(node, "extras", extras);
        json_array_append_new(children, json_integer(add_node(w, node)));
    }
    return TRN_OK;
oom:
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
}

/* ---- output ---- */

/* The buffer's bytes, little-endian words, in order: to a file or into memory. */
typedef struct sink {
    trn_atomic_file *file;
    uint8_t *memory;
    size_t at;
} sink;

static void sink_put(sink *s, const void *data, size_t n)
{
    if (s->file) trn_atomic_file_write(s->file, data, n);
    if (s->memory) memcpy(s->memory + s->at, data, n);
    s->at += n;
}

/* A deferred piece's words: its chunk's level is built (the one before it freed) when the
 * piece names another chunk than the last; NULL when that runs out of memory. */
static const void *deferred_words(writer *w, const piece *pc)
{
    if (!w->cached_valid || w->cached_chunk != pc->chunk) {
        trn_mesh_level_dispose(&w->cached);
        free(w->cached_uvs);
        w->cached_uvs = NULL;
        w->cached_valid = false;
        const trn_mesh_scene *sc = w->scene;
        const uint32_t level = sc->levels ? sc->levels[pc->chunk] : 0u;
        if (trn_mesh_level_make(sc->deferred_field, sc->deferred_roles, sc->mesh, pc->chunk, level,
                                &w->cached, NULL))
            return NULL;
        w->cached_chunk = pc->chunk;
        w->cached_valid = true;
    }
    const trn_mesh_level *lv = &w->cached;
    switch (pc->source) {
    case SOURCE_POSITIONS:
        return lv->positions + pc->offset;
    case SOURCE_NORMALS:
        return lv->normals + pc->offset;
    case SOURCE_INDICES:
        return lv->indices + pc->offset;
    default: /* SOURCE_UVS: as make_uvs */
        if (!w->cached_uvs) {
            w->cached_uvs = malloc((lv->vertex_count ? lv->vertex_count : 1u) * 2u * sizeof(float));
            if (!w->cached_uvs) return NULL;
            for (uint32_t v = 0; v < lv->vertex_count; v++) {
                w->cached_uvs[2u * v] = (float)((double)lv->positions[3u * v] * w->uv_scale);
                w->cached_uvs[2u * v + 1u] =
                    (float)((double)flip_z(lv->positions[3u * v + 2u]) * w->uv_scale);
            }
        }
        return w->cached_uvs + pc->offset;
    }
}

/* The buffer's bytes; false when a deferred level could not be built (out of memory). */
static bool write_buffer(writer *w, sink *s)
{
    uint8_t block[4092]; /* 1023 words: whole triples, so a triangle never straddles blocks */
    for (size_t v = 0; v < w->view_count; v++) {
        const view *vw = &w->views[v];
        for (size_t p = vw->first_piece; p < vw->first_piece + vw->piece_count; p++) {
            const piece *pc = &w->pieces[p];
            const uint8_t *src = pc->data ? pc->data : deferred_words(w, pc);
            if (!src && pc->words) return false;
            size_t left = pc->words;
            while (left) {
                const size_t take = left < sizeof block / 4u ? left : sizeof block / 4u;
                for (size_t k = 0; k < take; k++) {
                    /* The word read here: a triangle's second and third trade places. */
                    size_t from = k;
                    if (pc->form == FORM_TRIANGLES && k % 3u != 0u && k - k % 3u + 2u < take)
                        from = k % 3u == 1u ? k + 1u : k - 1u;
                    uint32_t word;
                    memcpy(&word, src + 4u * from, 4);
                    word += pc->add;
                    if (pc->form == FORM_VEC3 && k % 3u == 2u) {
                        float z;
                        memcpy(&z, &word, 4);
                        z = flip_z(z);
                        memcpy(&word, &z, 4);
                    }
                    block[4u * k] = (uint8_t)word;
                    block[4u * k + 1u] = (uint8_t)(word >> 8);
                    block[4u * k + 2u] = (uint8_t)(word >> 16);
                    block[4u * k + 3u] = (uint8_t)(word >> 24);
                }
                sink_put(s, block, 4u * take);
                src += 4u * take;
                left -= take;
            }
        }
    }
    return true;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

static char *base64(const uint8_t *data, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4u * ((n + 2u) / 3u) + 1u);
    if (!out) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t b0 = data[i], b1 = i + 1 < n ? data[i + 1] : 0u,
                       b2 = i + 2 < n ? data[i + 2] : 0u;
        const uint32_t t = (b0 << 16) | (b1 << 8) | b2;
        out[o++] = abc[(t >> 18) & 63u];
        out[o++] = abc[(t >> 12) & 63u];
        out[o++] = i + 1 < n ? abc[(t >> 6) & 63u] : '=';
        out[o++] = i + 2 < n ? abc[t & 63u] : '=';
    }
    out[o] = '\0';
    return out;
}

/* A URI path segment: unreserved characters as they are, the rest percent-encoded. */
static char *uri_escape(const char *name)
{
    char *out = malloc(3u * strlen(name) + 1u), *o = out;
    if (!out) return NULL;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
            *c == '-' || *c == '_' || *c == '.' || *c == '~') {
            *o++ = (char)*c;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            *o++ = '%', *o++ = hex[*c >> 4], *o++ = hex[*c & 15u];
        }
    }
    *o = '\0';
    return out;
}

static trn_status stage_write(trn_write_set *ws, const char *dest, trn_atomic_file *af,
                              trn_error *err)
{
    const char *target = NULL;
    trn_status st = trn_write_target(ws, dest, &target, err);
    if (!st) st = trn_atomic_file_open(af, target, err);
    return st;
}

static void note_file(trn_mesh_write_report *rep, const char *dest, uint64_t bytes)
{
    if (rep->file_count < 2)
        snprintf(rep->files[rep->file_count++], sizeof rep->files[0], "%s", dest);
    rep->bytes += bytes;
}

static void writer_dispose(writer *w)
{
    for (size_t k = 0; w->meta && k < w->meta_count; k++)
        if (w->lazy[k]) free(w->meta[k].sections);
    free(w->meta);
    free(w->lazy);
    trn_mesh_level_dispose(&w->cached);
    free(w->cached_uvs);
    free(w->pieces);
    free(w->views);
    for (size_t k = 0; k < w->owned_count; k++)
        free(w->owned[k]);
    free(w->owned);
    json_decref(w->material_extras);
    json_decref(w->images);
    json_decref(w->textures);
    json_decref(w->samplers);
    free(w->out_dir);
    json_decref(w->accessors);
    json_decref(w->buffer_views);
    json_decref(w->meshes);
    json_decref(w->materials);
    json_decref(w->nodes);
}

trn_status trn_gltf_write(const char *path, trn_gltf_container container,
                          const trn_mesh_scene *scene, trn_mesh_write_report *report,
                          trn_error *err)
{
    trn_mesh_write_report local;
    trn_mesh_write_report *rep = report ? report : &local;
    memset(rep, 0, sizeof *rep);
    if (!path || !path[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "glTF: a path is required");
    if (container != TRN_GLTF_GLB && container != TRN_GLTF_SEPARATE &&
        container != TRN_GLTF_EMBEDDED)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "glTF: container: expected glb, separate or embedded, found %d",
                             (int)container);
    trn_status st = trn_scene_check(scene, "glTF", err);
    if (st) return st;
    trn_water_mesh **water = NULL;
    uint32_t water_count = 0;
    st = trn_scene_water(scene, &water, &water_count, err);
    if (st) return st;

    writer w;
    memset(&w, 0, sizeof w);
    w.accessors = json_array();
    w.buffer_views = json_array();
    w.meshes = json_array();
    w.materials = json_array();
    w.nodes = json_array();
    for (int r = 0; r < 256; r++)
        w.role_material[r] = -1;
    w.water_material = w.instance_material = -1;
    w.uv_scale = scene->uv_scale;
    w.scene = scene;
    {
        /* The folder image URIs are relative to: the output's, real path. */
        char *copy = strdup(path), *slash = copy ? strrchr(copy, '/') : NULL;
        if (slash) *slash = '\0';
        w.out_dir = copy ? realpath(slash ? (*copy ? copy : "/") : ".", NULL) : NULL;
        free(copy);
    }
    w.material_extras = scene->biome_sections ? NULL : terrain_material_extras(&w, scene);
    json_t *roots = json_array();
    json_t *root = NULL;
    char *text = NULL, *bin_path = NULL;
    uint8_t *memory = NULL;
    if (!w.accessors || !w.buffer_views || !w.meshes || !w.materials || !w.nodes || !roots) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        goto done;
    }

    /* Deferred levels: each drawn level built once for its counts, bounds and sections (the
     * JSON comes before the buffer), its arrays freed at once. */
    const trn_mesh *m = scene->mesh;
    if (scene->deferred_field) {
        const size_t n = (size_t)m->chunks_x * m->chunks_z;
        w.meta = calloc(n ? n : 1u, sizeof *w.meta);
        w.lazy = calloc(n ? n : 1u, sizeof *w.lazy);
        if (!w.meta || !w.lazy) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            goto done;
        }
        w.meta_count = n;
        /* One parallel region over the chunks (each its own level: the same on any thread
         * count). The buffer's later builds stay on the calling thread, one chunk at a time:
         * a region per band of chunks made every band wait for the slowest thread on a busy
         * machine (twice the wall time at load 22). */
        int failed = 0;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16) reduction(| : failed)
#endif
        for (long long kk = 0; kk < (long long)n; kk++) {
            const size_t k = (size_t)kk;
            const trn_mesh_level *lv = trn_scene_level(scene, k);
            if (lv->positions) {
                w.meta[k] = *lv; /* built already: the mesh's own */
                continue;
            }
            w.lazy[k] = true;
            if (trn_mesh_level_make(scene->deferred_field, scene->deferred_roles, m, k,
                                    scene->levels ? scene->levels[k] : 0u, &w.meta[k], NULL)) {
                failed = 1;
                continue;
            }
            free(w.meta[k].positions);
            free(w.meta[k].normals);
            free(w.meta[k].indices);
            w.meta[k].positions = w.meta[k].normals = NULL;
            w.meta[k].indices = NULL;
        }
        if (failed) st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "glTF: out of memory");
        for (size_t k = 0; k < n && !st && scene->biome_sections; k++) {
            for (uint32_t q = 0; w.lazy[k] && q < w.meta[k].section_count && !st; q++)
                if (w.meta[k].sections[q].role >= scene->biome_material_count)
                    st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                       "glTF: chunk %u_%u: section of biome %u; %u biome "
                                       "materials given",
                                       m->chunks[k].cx, m->chunks[k].cz,
                                       w.meta[k].sections[q].role, scene->biome_material_count);
        }
        if (st) goto done;
    }

    /* Terrain: a node "terrain" holding the chunk nodes or the merged mesh's node. */
    json_t *terrain_children = json_array();
    if (scene->chunks) {
        const size_t n = (size_t)m->chunks_x * m->chunks_z;
        for (size_t k = 0; k < n && !st; k++) {
            if (!wlevel(&w, k)->index_count) continue;
            long mesh = chunk_mesh(&w, k);
            if (mesh < 0) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            char name[48];
            snprintf(name, sizeof name, "chunk_%u_%u", m->chunks[k].cx, m->chunks[k].cz);
            json_array_append_new(terrain_children,
                                  json_integer(add_node(&w, named_node(name, mesh))));
        }
    } else {
        st = merged_mesh(&w, scene, terrain_children, err);
    }
    for (size_t k = 0; k < (size_t)m->chunks_x * m->chunks_z; k++) {
        const trn_mesh_level *lv = wlevel(&w, k);
        rep->vertices += lv->vertex_count;
        rep->triangles += lv->index_count / 3u;
    }
    json_t *terrain = named_node("terrain", -1);
    if (json_array_size(terrain_children))
        json_object_set_new(terrain, "children", terrain_children);
    else
        json_decref(terrain_children);
    json_array_append_new(roots, json_integer(add_node(&w, terrain)));

    /* The collider: a root node "collider" with its merged mesh. */
    if (!st && scene->collider)
        st = collider_node(&w, scene->collider, roots, &rep->vertices, &rep->triangles, err);

    /* Water: a node "water" holding one node per body with triangles. */
    if (!st && water_count) {
        json_t *children = json_array();
        for (uint32_t b = 0; b < water_count && !st; b++) {
            const trn_water_mesh *wm = water[b];
            if (!wm || !wm->triangle_count) continue;
            long mesh = water_mesh(&w, &scene->water->bodies[b], wm);
            if (mesh < 0) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            char name[160];
            snprintf(name, sizeof name, "water_%s", scene->water->bodies[b].id);
            json_array_append_new(children, json_integer(add_node(&w, named_node(name, mesh))));
            rep->water_bodies++;
            rep->vertices += wm->vertex_count;
            rep->triangles += wm->triangle_count;
        }
        json_t *node = named_node("water", -1);
        if (json_array_size(children))
            json_object_set_new(node, "children", children);
        else
            json_decref(children);
        json_array_append_new(roots, json_integer(add_node(&w, node)));
    }

    /* Instances: a node "instances" holding one node per instance. */
    if (!st && scene->instances && scene->instances->count) {
        json_t *children = json_array();
        st = instance_nodes(&w, scene, children, err);
        json_t *node = named_node("instances", -1);
        json_object_set_new(node, "children", children);
        json_array_append_new(roots, json_integer(add_node(&w, node)));
        rep->instances = scene->instances->count;
    }
    if (!st && w.failed) st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    if (st) goto done;
    if (w.buffer_length > UINT32_MAX - 1024u) {
        st = trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                           "glTF: the buffer would hold %llu bytes, over the 4 GiB a glTF "
                           "buffer can; choose a coarser level or fewer chunks",
                           (unsigned long long)w.buffer_length);
        goto done;
    }

    root = json_object();
    json_t *asset = json_object();
    json_object_set_new(asset, "generator", json_string("terrane"));
    json_object_set_new(asset, "version", json_string("2.0"));
    json_object_set_new(root, "asset", asset);
    json_object_set_new(root, "scene", json_integer(0));
    json_t *sc = json_object();
    json_object_set_new(sc, "name", json_string("terrain"));
    json_object_set_new(sc, "nodes", roots);
    roots = NULL;
    json_t *scenes = json_array();
    json_array_append_new(scenes, sc);
    json_object_set_new(root, "scenes", scenes);
    json_object_set_new(root, "nodes", w.nodes);
    json_object_set_new(root, "meshes", w.meshes);
    json_object_set_new(root, "materials", w.materials);
    if (w.images) {
        json_object_set_new(root, "images", w.images);
        json_object_set_new(root, "textures", w.textures);
        json_object_set_new(root, "samplers", w.samplers);
        w.images = w.textures = w.samplers = NULL;
    }
    if (w.texture_transform)
        json_object_set_new(root, "extensionsUsed", json_pack("[s]", "KHR_texture_transform"));
    json_object_set_new(root, "accessors", w.accessors);
    json_object_set_new(root, "bufferViews", w.buffer_views);
    w.nodes = w.meshes = w.materials = w.accessors = w.buffer_views = NULL;
    json_t *buffer = json_object();
    json_object_set_new(buffer, "byteLength", json_integer((json_int_t)w.buffer_length));
    if (container == TRN_GLTF_SEPARATE) {
        bin_path = trn_scene_sibling(path, ".bin");
        char *uri = bin_path ? uri_escape(trn_scene_basename(bin_path)) : NULL;
        if (!uri) {
            json_decref(buffer);
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            goto done;
        }
        json_object_set_new(buffer, "uri", json_string(uri));
        free(uri);
    } else if (container == TRN_GLTF_EMBEDDED) {
        memory = malloc((size_t)w.buffer_length + 1u);
        if (!memory) {
            json_decref(buffer);
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            goto done;
        }
        sink ms = {NULL, memory, 0};
        if (!write_buffer(&w, &ms)) {
            json_decref(buffer);
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            goto done;
        }
        char *b64 = base64(memory, (size_t)w.buffer_length);
        trn_text_buf uri = {0};
        trn_text_puts(&uri, "data:application/octet-stream;base64,");
        if (b64) trn_text_puts(&uri, b64);
        free(b64);
        if (!b64 || uri.failed) {
            trn_text_free(&uri);
            json_decref(buffer);
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
            goto done;
        }
        json_object_set_new(buffer, "uri", json_string(uri.data));
        trn_text_free(&uri);
    }
    if (w.buffer_length) { /* glTF refuses an empty buffer: none at all then */
        json_t *buffers = json_array();
        json_array_append_new(buffers, buffer);
        json_object_set_new(root, "buffers", buffers);
    } else {
        json_decref(buffer);
    }
    text = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(9));
    if (!text) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        goto done;
    }

    trn_write_set *ws = NULL, *own = NULL;
    st = trn_write_own_begin(scene->writes, &ws, &own, err);
    if (!st) {
        trn_atomic_file af;
        const size_t json_len = strlen(text);
        if (container == TRN_GLTF_GLB) {
            /* JSON chunk padded with spaces, BIN chunk with zeros, both to 4 bytes. */
            const uint32_t json_chunk = (uint32_t)((json_len + 3u) & ~(size_t)3u);
            const uint32_t bin_chunk = (uint32_t)w.buffer_length; /* words: already aligned */
            const uint64_t total =
                12u + 8u + (uint64_t)json_chunk + (bin_chunk ? 8u + (uint64_t)bin_chunk : 0u);
            if (total > UINT32_MAX) {
                st = trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                                   "glTF: the .glb would be %llu bytes, over 4 GiB",
                                   (unsigned long long)total);
            } else if (!(st = stage_write(ws, path, &af, err))) {
                uint8_t head[20];
                memcpy(head, "glTF", 4);
                put_u32(head + 4, 2);
                put_u32(head + 8, (uint32_t)total);
                put_u32(head + 12, json_chunk);
                memcpy(head + 16, "JSON", 4);
                trn_atomic_file_write(&af, head, 20);
                trn_atomic_file_write(&af, text, json_len);
                trn_atomic_file_write(&af, "   ", json_chunk - json_len);
                if (bin_chunk) {
                    put_u32(head, bin_chunk);
                    memcpy(head + 4, "BIN\0", 4);
                    trn_atomic_file_write(&af, head, 8);
                    sink fs = {&af, NULL, 0};
                    if (!write_buffer(&w, &fs))
                        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                }
                if (st)
                    trn_atomic_file_abort(&af);
                else
                    st = trn_atomic_file_commit(&af, err);
                if (!st) note_file(rep, path, total);
            }
        } else {
            if (!(st = stage_write(ws, path, &af, err))) {
                trn_atomic_file_write(&af, text, json_len);
                st = trn_atomic_file_commit(&af, err);
                if (!st) note_file(rep, path, json_len);
            }
            /* An empty buffer still gets its (empty) .bin, so the pair always lands whole. */
            if (!st && container == TRN_GLTF_SEPARATE &&
                !(st = stage_write(ws, bin_path, &af, err))) {
                sink fs = {&af, NULL, 0};
                if (!write_buffer(&w, &fs)) {
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                    trn_atomic_file_abort(&af);
                } else {
                    st = trn_atomic_file_commit(&af, err);
                }
                if (!st) note_file(rep, bin_path, w.buffer_length);
            }
        }
        st = trn_write_own_finish(own, st, err);
    }
done:
    if (st) {
        memset(rep, 0, sizeof *rep);
        trn_scene_error_dest(err, path);
        trn_scene_error_dest(err, bin_path);
    }
    json_decref(root);
    json_decref(roots);
    free(text);
    free(bin_path);
    free(memory);
    writer_dispose(&w);
    trn_scene_water_free(water, water_count);
    return st;
}
