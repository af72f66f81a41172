/* A small SerializedFile writer for tests: TerrainData, Texture2D and TerrainLayer objects with
 * type trees. */
#ifndef TRN_TEST_UNITY_WRITER_H
#define TRN_TEST_UNITY_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growable byte buffer with the file's byte order. */
typedef struct uwr_buf {
    uint8_t *data;
    size_t size, cap;
    bool be;
} uwr_buf;

static void uwr_put(uwr_buf *b, const void *p, size_t n)
{
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->size + n)
            cap *= 2;
        b->data = realloc(b->data, cap);
        b->cap = cap;
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void uwr_uint(uwr_buf *b, uint64_t v, size_t n, bool be)
{
    uint8_t tmp[8];
    for (size_t k = 0; k < n; k++)
        tmp[be ? n - 1 - k : k] = (uint8_t)(v >> (8 * k));
    uwr_put(b, tmp, n);
}

static void uwr_u8(uwr_buf *b, uint8_t v)
{
    uwr_put(b, &v, 1);
}
static void uwr_u16(uwr_buf *b, uint16_t v)
{
    uwr_uint(b, v, 2, b->be);
}
static void uwr_u32(uwr_buf *b, uint32_t v)
{
    uwr_uint(b, v, 4, b->be);
}
static void uwr_u64(uwr_buf *b, uint64_t v)
{
    uwr_uint(b, v, 8, b->be);
}
static void uwr_f32(uwr_buf *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uwr_u32(b, u);
}
static void uwr_cstr(uwr_buf *b, const char *s)
{
    uwr_put(b, s, strlen(s) + 1);
}
static void uwr_align(uwr_buf *b, size_t base, size_t to)
{
    while ((b->size - base) % to)
        uwr_u8(b, 0);
}

/* A type tree under construction: node rows and a local string buffer. Types whose names are
 * in Unity's common table ("int", "float", "Array", "vector", "string"...) use it. */
typedef struct uwr_node {
    const char *type, *name;
    uint8_t level, flags;
    int32_t byte_size;
    uint32_t meta;
} uwr_node;

typedef struct uwr_type {
    int32_t class_id;
    uwr_node nodes[96];
    uint32_t count;
} uwr_type;

static void uwr_n(uwr_type *t, uint8_t level, const char *type, const char *name, int32_t size,
                  uint32_t meta)
{
    uwr_node *n = &t->nodes[t->count++];
    n->type = type;
    n->name = name;
    n->level = level;
    n->flags = strcmp(type, "Array") == 0 ? 1 : 0;
    n->byte_size = size;
    n->meta = meta;
}

/* vector NAME of ELEM (a primitive) at level. */
static void uwr_vector(uwr_type *t, uint8_t level, const char *name, const char *elem, int32_t es)
{
    uwr_n(t, level, "vector", name, -1, 0x8000);
    uwr_n(t, (uint8_t)(level + 1), "Array", "Array", -1, 0x4000);
    uwr_n(t, (uint8_t)(level + 2), "int", "size", 4, 0);
    uwr_n(t, (uint8_t)(level + 2), elem, "data", es, 0);
}

static void uwr_string_node(uwr_type *t, uint8_t level, const char *name)
{
    uwr_n(t, level, "string", name, -1, 0x8000);
    uwr_n(t, (uint8_t)(level + 1), "Array", "Array", -1, 0x4000);
    uwr_n(t, (uint8_t)(level + 2), "int", "size", 4, 0);
    uwr_n(t, (uint8_t)(level + 2), "char", "data", 1, 0);
}

static void uwr_pptr_node(uwr_type *t, uint8_t level, const char *type, const char *name)
{
    uwr_n(t, level, type, name, 12, 0);
    uwr_n(t, (uint8_t)(level + 1), "int", "m_FileID", 4, 0);
    uwr_n(t, (uint8_t)(level + 1), "SInt64", "m_PathID", 8, 0);
}

static void uwr_pptr_vector(uwr_type *t, uint8_t level, const char *name, const char *type)
{
    uwr_n(t, level, "vector", name, -1, 0x8000);
    uwr_n(t, (uint8_t)(level + 1), "Array", "Array", -1, 0x4000);
    uwr_n(t, (uint8_t)(level + 2), "int", "size", 4, 0);
    uwr_pptr_node(t, (uint8_t)(level + 2), type, "data");
}

static void uwr_vec3_node(uwr_type *t, uint8_t level, const char *name)
{
    uwr_n(t, level, "Vector3f", name, 12, 0);
    uwr_n(t, (uint8_t)(level + 1), "float", "x", 4, 0);
    uwr_n(t, (uint8_t)(level + 1), "float", "y", 4, 0);
    uwr_n(t, (uint8_t)(level + 1), "float", "z", 4, 0);
}

/* TerrainData as 2019.3+ writes it (m_Resolution); old = true: m_Width/m_Height, no holes. */
static void uwr_terrain_type(uwr_type *t, bool old)
{
    memset(t, 0, sizeof *t);
    t->class_id = 156;
    uwr_n(t, 0, "TerrainData", "Base", -1, 0x8000);
    uwr_string_node(t, 1, "m_Name");
    uwr_n(t, 1, "SplatDatabase", "m_SplatDatabase", -1, 0x8000);
    uwr_pptr_vector(t, 2, "m_TerrainLayers", "PPtr<TerrainLayer>");
    uwr_pptr_vector(t, 2, "m_AlphaTextures", "PPtr<Texture2D>");
    uwr_n(t, 2, "int", "m_AlphamapResolution", 4, 0);
    uwr_n(t, 2, "int", "m_BaseMapResolution", 4, 0);
    uwr_n(t, 1, "DetailDatabase", "m_DetailDatabase", -1, 0x8000);
    uwr_n(t, 2, "vector", "m_TreeInstances", -1, 0x8000);
    uwr_n(t, 3, "Array", "Array", -1, 0x4000);
    uwr_n(t, 4, "int", "size", 4, 0);
    uwr_n(t, 4, "TreeInstance", "data", 36, 0);
    uwr_vec3_node(t, 5, "position");
    uwr_n(t, 5, "float", "widthScale", 4, 0);
    uwr_n(t, 5, "float", "heightScale", 4, 0);
    uwr_n(t, 5, "float", "rotation", 4, 0);
    uwr_n(t, 5, "ColorRGBA", "color", 4, 0);
    uwr_n(t, 6, "unsigned int", "rgba", 4, 0);
    uwr_n(t, 5, "ColorRGBA", "lightmapColor", 4, 0);
    uwr_n(t, 6, "unsigned int", "rgba", 4, 0);
    uwr_n(t, 5, "int", "index", 4, 0);
    uwr_n(t, 2, "vector", "m_TreePrototypes", -1, 0x8000);
    uwr_n(t, 3, "Array", "Array", -1, 0x4000);
    uwr_n(t, 4, "int", "size", 4, 0);
    uwr_n(t, 4, "TreePrototype", "data", 16, 0);
    uwr_pptr_node(t, 5, "PPtr<GameObject>", "prefab");
    uwr_n(t, 5, "float", "bendFactor", 4, 0);
    uwr_n(t, 1, "Heightmap", "m_Heightmap", -1, 0x8000);
    uwr_vector(t, 2, "m_Heights", "SInt16", 2);
    if (!old) {
        uwr_vector(t, 2, "m_Holes", "UInt8", 1);
        uwr_n(t, 2, "bool", "m_EnableHolesTextureCompression", 1, 0x4000);
        uwr_n(t, 2, "int", "m_Resolution", 4, 0);
    } else {
        uwr_n(t, 2, "int", "m_Width", 4, 0);
        uwr_n(t, 2, "int", "m_Height", 4, 0);
    }
    uwr_vec3_node(t, 2, "m_Scale");
}

static void uwr_texture_type(uwr_type *t)
{
    memset(t, 0, sizeof *t);
    t->class_id = 28;
    uwr_n(t, 0, "Texture2D", "Base", -1, 0x8000);
    uwr_string_node(t, 1, "m_Name");
    uwr_n(t, 1, "int", "m_Width", 4, 0);
    uwr_n(t, 1, "int", "m_Height", 4, 0);
    uwr_n(t, 1, "int", "m_TextureFormat", 4, 0);
    uwr_n(t, 1, "int", "m_MipCount", 4, 0);
    uwr_n(t, 1, "bool", "m_IsReadable", 1, 0x4000);
    uwr_n(t, 1, "TypelessData", "image data", -1, 0x4000);
    uwr_n(t, 2, "int", "size", 4, 0);
    uwr_n(t, 2, "UInt8", "data", 1, 0);
}

static void uwr_layer_type(uwr_type *t)
{
    memset(t, 0, sizeof *t);
    t->class_id = 1153;
    uwr_n(t, 0, "TerrainLayer", "Base", -1, 0x8000);
    uwr_string_node(t, 1, "m_Name");
}

/* Offsets of the common strings the writer uses (Unity's table). */
static int32_t uwr_common(const char *s)
{
    static const struct {
        const char *s;
        int32_t off;
    } tab[] = {{"Array", 49},   {"int", 222}, {"float", 161},  {"vector", 981},
               {"string", 840}, {"char", 81}, {"SInt64", 814}, {"UInt8", 928}};
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (strcmp(tab[k].s, s) == 0) return tab[k].off;
    return -1;
}

static void uwr_type_tree(uwr_buf *b, const uwr_type *t, uint32_t version)
{
    uwr_buf strings = {0};
    uint32_t offs[96][2];
    for (uint32_t k = 0; k < t->count; k++) {
        const char *names[2] = {t->nodes[k].type, t->nodes[k].name};
        for (int w = 0; w < 2; w++) {
            int32_t c = uwr_common(names[w]);
            if (c >= 0) {
                offs[k][w] = 0x80000000u | (uint32_t)c;
            } else {
                offs[k][w] = (uint32_t)strings.size;
                uwr_cstr(&strings, names[w]);
            }
        }
    }
    uwr_u32(b, t->count);
    uwr_u32(b, (uint32_t)strings.size);
    for (uint32_t k = 0; k < t->count; k++) {
        const uwr_node *n = &t->nodes[k];
        uwr_u16(b, 1);
        uwr_u8(b, n->level);
        uwr_u8(b, n->flags);
        uwr_u32(b, offs[k][0]);
        uwr_u32(b, offs[k][1]);
        uwr_u32(b, (uint32_t)n->byte_size);
        uwr_u32(b, k);
        uwr_u32(b, n->meta);
        if (version >= 19) uwr_u64(b, 0);
    }
    uwr_put(b, strings.data, strings.size);
    free(strings.data);
    if (version >= 21) uwr_u32(b, 0); /* dependencies */
}

/* One object: its type index, path id and data (in the file's byte order). */
typedef struct uwr_object {
    uint32_t type;
    int64_t path_id;
    uwr_buf data;
} uwr_object;

/* Where the writer put things, for tests that patch or cut files. */
typedef struct uwr_layout {
    size_t header_size, metadata_size, data_offset;
    size_t tree_flag_at;    /* the type-tree-enabled byte */
    size_t object_table_at; /* first object entry */
    size_t object_offset[8], object_size[8];
    size_t object_size_field[8]; /* where each object's size is in the table */
} uwr_layout;

/* A whole SerializedFile. Caller frees the result. */
static uint8_t *uwr_file(uint32_t version, bool be, const uwr_type *types, uint32_t type_count,
                         const uwr_object *objs, uint32_t obj_count, size_t *size_out,
                         uwr_layout *layout)
{
    uwr_layout lay;
    memset(&lay, 0, sizeof lay);
    size_t header = version >= 22 ? 48 : 20;
    lay.header_size = header;
    uwr_buf m = {0};
    m.be = be;
    /* Metadata offsets are absolute in the file: write a placeholder header first. */
    for (size_t k = 0; k < header; k++)
        uwr_u8(&m, 0);
    uwr_cstr(&m, "2021.3.1f1");
    uwr_u32(&m, (uint32_t)-2);
    lay.tree_flag_at = m.size;
    uwr_u8(&m, 1);
    uwr_u32(&m, type_count);
    for (uint32_t k = 0; k < type_count; k++) {
        uwr_u32(&m, (uint32_t)types[k].class_id);
        uwr_u8(&m, 0);
        uwr_u16(&m, 0xffff);
        for (int h = 0; h < 16; h++)
            uwr_u8(&m, (uint8_t)(h + k));
        uwr_type_tree(&m, &types[k], version);
    }
    uwr_u32(&m, obj_count);
    /* Object data offsets are relative to the data offset, each 8-aligned. */
    size_t rel = 0;
    size_t rels[8];
    for (uint32_t k = 0; k < obj_count; k++) {
        rels[k] = rel;
        rel += objs[k].data.size;
        rel = (rel + 7) & ~(size_t)7;
    }
    for (uint32_t k = 0; k < obj_count; k++) {
        uwr_align(&m, 0, 4);
        if (k == 0) lay.object_table_at = m.size;
        uwr_u64(&m, (uint64_t)objs[k].path_id);
        if (version >= 22)
            uwr_u64(&m, rels[k]);
        else
            uwr_u32(&m, (uint32_t)rels[k]);
        lay.object_size_field[k] = m.size;
        uwr_u32(&m, (uint32_t)objs[k].data.size);
        uwr_u32(&m, objs[k].type);
    }
    uwr_u32(&m, 0); /* script types */
    uwr_u32(&m, 1); /* externals */
    uwr_cstr(&m, "");
    for (int h = 0; h < 16; h++)
        uwr_u8(&m, (uint8_t)(0xa0 + h));
    uwr_u32(&m, 3);
    uwr_cstr(&m, "Assets/Other.asset");
    if (version >= 20) uwr_u32(&m, 0); /* reference types */
    uwr_cstr(&m, "");
    size_t metadata = m.size - header;
    size_t data_offset = (m.size + 15) & ~(size_t)15;
    while (m.size < data_offset)
        uwr_u8(&m, 0);
    for (uint32_t k = 0; k < obj_count; k++) {
        while (m.size < data_offset + rels[k])
            uwr_u8(&m, 0);
        lay.object_offset[k] = m.size;
        lay.object_size[k] = objs[k].data.size;
        uwr_put(&m, objs[k].data.data, objs[k].data.size);
    }
    size_t total = m.size;
    uwr_buf h = {0};
    if (version >= 22) {
        uwr_uint(&h, 0, 4, true);
        uwr_uint(&h, 0, 4, true);
        uwr_uint(&h, version, 4, true);
        uwr_uint(&h, 0, 4, true);
        uwr_u8(&h, be ? 1 : 0);
        uwr_u8(&h, 0), uwr_u8(&h, 0), uwr_u8(&h, 0);
        uwr_uint(&h, metadata, 4, true);
        uwr_uint(&h, total, 8, true);
        uwr_uint(&h, data_offset, 8, true);
        uwr_uint(&h, 0, 8, true);
    } else {
        uwr_uint(&h, metadata, 4, true);
        uwr_uint(&h, total, 4, true);
        uwr_uint(&h, version, 4, true);
        uwr_uint(&h, data_offset, 4, true);
        uwr_u8(&h, be ? 1 : 0);
        uwr_u8(&h, 0), uwr_u8(&h, 0), uwr_u8(&h, 0);
    }
    memcpy(m.data, h.data, header);
    free(h.data);
    lay.metadata_size = metadata;
    lay.data_offset = data_offset;
    if (layout) *layout = lay;
    *size_out = total;
    return m.data;
}

static void uwr_obj_string(uwr_buf *b, size_t base, const char *s)
{
    uwr_u32(b, (uint32_t)strlen(s));
    uwr_put(b, s, strlen(s));
    uwr_align(b, base, 4);
}

static void uwr_obj_pptr(uwr_buf *b, int32_t file_id, int64_t path_id)
{
    uwr_u32(b, (uint32_t)file_id);
    uwr_u64(b, (uint64_t)path_id);
}

/* What the synthetic terrain holds. */
typedef struct uwr_terrain_spec {
    uint32_t res;
    float scale[3];
    const int16_t *heights; /* res * res */
    const uint8_t *holes;   /* (res - 1)^2 or NULL */
    uint32_t layer_count;   /* TerrainLayer objects with path ids 100 + k */
    uint32_t texture_count; /* Texture2D objects with path ids 200 + k */
    uint32_t tree_count;
    bool old; /* m_Width/m_Height and no holes field */
} uwr_terrain_spec;

static void uwr_terrain_data(uwr_buf *b, const uwr_terrain_spec *s)
{
    size_t base = 0;
    uwr_obj_string(b, base, "Synthetic Terrain");
    uwr_u32(b, s->layer_count);
    for (uint32_t k = 0; k < s->layer_count; k++)
        uwr_obj_pptr(b, 0, 100 + k);
    uwr_align(b, base, 4);
    uwr_u32(b, s->texture_count);
    for (uint32_t k = 0; k < s->texture_count; k++)
        uwr_obj_pptr(b, 0, 200 + k);
    uwr_align(b, base, 4);
    uwr_u32(b, 16);  /* alphamap resolution */
    uwr_u32(b, 128); /* base map resolution */
    uwr_u32(b, s->tree_count);
    for (uint32_t k = 0; k < s->tree_count; k++) {
        uwr_f32(b, 0.1f + 0.2f * (float)k);
        uwr_f32(b, 0.25f);
        uwr_f32(b, 0.9f - 0.2f * (float)k);
        uwr_f32(b, 1.0f + (float)k);
        uwr_f32(b, 2.0f + (float)k);
        uwr_f32(b, 0.5f * (float)k);
        uwr_u32(b, 0xff804020u + k);
        uwr_u32(b, 0xffffffffu);
        uwr_u32(b, k % 2);
    }
    uwr_align(b, base, 4);
    uwr_u32(b, 2);
    for (uint32_t k = 0; k < 2; k++) {
        uwr_obj_pptr(b, 1, 5000 + k);
        uwr_f32(b, 0.5f);
    }
    uwr_align(b, base, 4);
    uint32_t n = s->res * s->res;
    uwr_u32(b, n);
    for (uint32_t k = 0; k < n; k++)
        uwr_u16(b, (uint16_t)s->heights[k]);
    uwr_align(b, base, 4);
    if (!s->old) {
        uint32_t cells = s->holes ? (s->res - 1) * (s->res - 1) : 0;
        uwr_u32(b, cells);
        if (cells) uwr_put(b, s->holes, cells);
        uwr_align(b, base, 4);
        uwr_u8(b, 1);
        uwr_align(b, base, 4);
        uwr_u32(b, s->res);
    } else {
        uwr_u32(b, s->res);
        uwr_u32(b, s->res);
    }
    uwr_f32(b, s->scale[0]);
    uwr_f32(b, s->scale[1]);
    uwr_f32(b, s->scale[2]);
}

/* A 16 x 16 texture: format 4 (RGBA32) or 5 (ARGB32); texel (x, z) of texture t has weights
 * that favour layer (x + z + t) % 4, with 2 mip levels stored after level 0. */
static void uwr_texture_data(uwr_buf *b, uint32_t t, int32_t format)
{
    char name[32];
    snprintf(name, sizeof name, "SplatAlpha %u", t);
    uwr_obj_string(b, 0, name);
    uwr_u32(b, 16);
    uwr_u32(b, 16);
    uwr_u32(b, (uint32_t)format);
    uwr_u32(b, 2);
    uwr_u8(b, 1);
    uwr_align(b, 0, 4);
    uint32_t bytes = 16 * 16 * 4 + 8 * 8 * 4;
    uwr_u32(b, bytes);
    for (uint32_t z = 0; z < 16; z++)
        for (uint32_t x = 0; x < 16; x++) {
            uint8_t rgba[4] = {10, 10, 10, 10};
            rgba[(x + z + t) % 4] = 200;
            if (format == 5) {
                uint8_t argb[4] = {rgba[3], rgba[0], rgba[1], rgba[2]};
                uwr_put(b, argb, 4);
            } else {
                uwr_put(b, rgba, 4);
            }
        }
    for (uint32_t k = 0; k < 8 * 8 * 4; k++)
        uwr_u8(b, 0x77);
    uwr_align(b, 0, 4);
}

/* The full synthetic file: TerrainData (path id 1), layers, textures (even RGBA32, odd
 * ARGB32). Types: 0 TerrainData, 1 Texture2D, 2 TerrainLayer. */
static uint8_t *uwr_terrain_file(uint32_t version, bool be, const uwr_terrain_spec *s,
                                 size_t *size_out, uwr_layout *layout)
{
    uwr_type types[3];
    uwr_terrain_type(&types[0], s->old);
    uwr_texture_type(&types[1]);
    uwr_layer_type(&types[2]);
    uwr_object objs[8];
    memset(objs, 0, sizeof objs);
    uint32_t n = 0;
    objs[n].type = 0;
    objs[n].path_id = 1;
    objs[n].data.be = be;
    uwr_terrain_data(&objs[n].data, s);
    n++;
    for (uint32_t k = 0; k < s->texture_count && n < 8; k++, n++) {
        objs[n].type = 1;
        objs[n].path_id = 200 + k;
        objs[n].data.be = be;
        uwr_texture_data(&objs[n].data, k, k % 2 ? 5 : 4);
    }
    for (uint32_t k = 0; k < s->layer_count && n < 8; k++, n++) {
        char name[32];
        snprintf(name, sizeof name, "Layer%u", k);
        objs[n].type = 2;
        objs[n].path_id = 100 + k;
        objs[n].data.be = be;
        uwr_obj_string(&objs[n].data, 0, name);
    }
    uint8_t *f = uwr_file(version, be, types, 3, objs, n, size_out, layout);
    for (uint32_t k = 0; k < n; k++)
        free(objs[k].data.data);
    return f;
}

#endif
