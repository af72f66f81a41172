/* Unity binary SerializedFiles (.asset), the TerrainData they hold, and export for Unity's Terrain
 * import. */
#ifndef TERRANE_UNITY_H
#define TERRANE_UNITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/palette.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread safety: nothing here keeps state between calls; different files can be read and
 * exported from different threads at once.
 *
 * The SerializedFile layout (versions 17..22 and neighbours; facts as UnityPy and AssetStudio
 * document them, checked against two real files):
 *   header, always big-endian: u32 metadata size, u32 file size, u32 version, u32 data offset,
 *     then (version >= 9) u8 endianness (0 little, 1 big) and 3 reserved bytes, then
 *     (version >= 22) u32 metadata size, u64 file size, u64 data offset, u64 reserved.
 *   metadata, in the file's endianness: Unity version (NUL-terminated), i32 target platform,
 *     u8 type trees enabled, i32 type count and the types (class id, stripped flag, script
 *     type index, hashes, the type tree as a node array plus a string buffer whose offsets with
 *     the high bit set name Unity's common strings, and from version 21 the type's
 *     dependencies), the object table (4-aligned 64-bit path ids, offsets relative to the data
 *     offset, 64-bit from version 22, sizes and type indexes), script types, externals,
 *     reference types (version >= 20) and a user information string.
 *   objects: each walked by its type's tree (never by fixed offsets), so fields that other
 *     Unity versions add or remove are skipped by what the tree says. Files written without
 *     type trees (player builds) are refused with TRN_ERR_UNSUPPORTED. */

/* Bounds for reading untrusted files. */
typedef struct trn_unity_limits {
    uint32_t max_types;          /* types in the metadata; default 4096 */
    uint32_t max_nodes;          /* nodes in one type tree; default 65536 */
    uint32_t max_string_buffer;  /* bytes of one tree's string buffer; default 1 MiB */
    uint32_t max_objects;        /* objects in the table; default 1 << 20 */
    uint32_t max_externals;      /* external references; default 65536 */
    uint32_t max_depth;          /* type tree levels; default 64 */
    uint64_t max_array_elements; /* elements of one array; default 1 << 28 */
    uint64_t max_values;         /* structured values built while walking one object;
                                  * default 1 << 22 */
    uint32_t max_resolution;     /* heightmap samples per side; default 8193 */
    /* Heightmap samples (resolution^2); default TRN_UNITY_DEFAULT_MAX_SAMPLES. Over either
     * bound: TRN_ERR_LIMIT at the resolution field's offset, before the heights are copied. */
    uint64_t max_samples;
} trn_unity_limits;

/* The default max_samples: what 8 GiB of working memory holds at 7 bytes a sample (the 2-byte
 * stored height, the field's 4-byte float and a 1-byte label): 8 GiB / 7 = 1,227,133,513. */
#define TRN_UNITY_DEFAULT_MAX_SAMPLES (((uint64_t)8 << 30) / 7u)

/* Fill limits with the defaults above. */
void trn_unity_limits_default(trn_unity_limits *limits);

/* True when data (the first 64 bytes of a file are enough) looks like a SerializedFile header
 * of version 9..50: endianness flag 0 or 1, zero reserved bytes, sizes that fit together and
 * a Unity version string that starts with a digit. */
bool trn_unity_sniff(const uint8_t *data, size_t size);

/* One node of a type tree, in the tree's depth-first order. */
typedef struct trn_unity_node {
    const char *type;  /* "int", "vector", "TerrainData"...; points into the type's strings */
    const char *name;  /* "m_Heights", "Array", "data"... */
    int32_t byte_size; /* -1 for variable-size nodes */
    int32_t index;
    uint32_t meta_flag; /* 0x4000: align the stream to 4 bytes after this value */
    uint16_t version;
    uint8_t level;      /* depth; the root is 0 */
    uint8_t type_flags; /* bit 0: this node is an array */
} trn_unity_node;

typedef struct trn_unity_type {
    int32_t class_id; /* 156 TerrainData, 28 Texture2D, 1153 TerrainLayer, 114 MonoBehaviour */
    bool stripped;
    int16_t script_type_index;
    uint8_t script_id[16]; /* MonoBehaviour types only */
    uint8_t old_type_hash[16];
    trn_unity_node *nodes; /* node_count nodes, root first (malloc'd) */
    uint32_t node_count;
    char *strings; /* the names the nodes point at (malloc'd) */
} trn_unity_type;

typedef struct trn_unity_object {
    int64_t path_id;
    uint64_t offset;    /* absolute byte offset of the object's data in the file */
    uint32_t size;      /* bytes */
    int32_t type_index; /* index into types */
    int32_t class_id;   /* the type's class id */
} trn_unity_object;

typedef struct trn_unity_external {
    char *path; /* "library/unity default resources", "Assets/x.asset"... (malloc'd) */
    uint8_t guid[16];
    int32_t type;
} trn_unity_external;

/* A parsed SerializedFile. It reads object data from the bytes it was parsed from: from
 * trn_unity_file_parse, the caller's buffer, which must outlive it; from trn_unity_file_read,
 * a mapping the file owns. */
typedef struct trn_unity_file {
    uint32_t version;
    bool big_endian; /* metadata and objects */
    uint64_t metadata_size, file_size, data_offset;
    char unity_version[64];
    int32_t target_platform; /* BuildTarget; -2 = no target (editor assets) */
    bool type_tree_enabled;
    trn_unity_type *types;
    uint32_t type_count;
    trn_unity_object *objects;
    uint32_t object_count;
    trn_unity_external *externals;
    uint32_t external_count;
    uint32_t script_type_count, ref_type_count;
    const uint8_t *data; /* the file's bytes */
    size_t size;
    char path[256]; /* for messages ("" when parsed from memory without a path) */
    void *storage_; /* internal: the mapping of trn_unity_file_read */
} trn_unity_file;

/* Parse header, metadata and object table (objects are walked later, on demand). path may be
 * NULL and is used only in messages; limits NULL = defaults. Errors: TRN_ERR_FORMAT (not a
 * SerializedFile, inconsistent sizes, bad tree), TRN_ERR_VERSION (version outside 9..50),
 * TRN_ERR_TRUNCATED, TRN_ERR_LIMIT, TRN_ERR_UNSUPPORTED (no type trees), each with the byte
 * offset and the section. On failure *file is left empty. */
trn_status trn_unity_file_parse(const uint8_t *data, size_t size, const char *path,
                                const trn_unity_limits *limits, trn_unity_file *file,
                                trn_error *err);
/* Map a file from disk and parse it; the file keeps the mapping until disposed. */
trn_status trn_unity_file_read(const char *path, const trn_unity_limits *limits,
                               trn_unity_file *file, trn_error *err);
/* Free everything and zero *file. NULL is a no-op. */
void trn_unity_file_dispose(trn_unity_file *file);

/* Index of the object with path_id, or -1. */
int64_t trn_unity_file_find_object(const trn_unity_file *file, int64_t path_id);
/* "TerrainData", "Texture2D", ... for the class ids this library knows, else NULL. */
const char *trn_unity_class_name(int32_t class_id);

#define TRN_UNITY_CLASS_TEXTURE2D 28
#define TRN_UNITY_CLASS_MONOBEHAVIOUR 114
#define TRN_UNITY_CLASS_TERRAINDATA 156
#define TRN_UNITY_CLASS_TERRAINLAYER 1153

/* A reference to an object: file_id 0 = this file, n = externals[n - 1]. */
typedef struct trn_unity_pptr {
    int32_t file_id;
    int64_t path_id;
} trn_unity_pptr;

/* A splat layer: a TerrainLayer reference (2018.3 and later) or a SplatPrototype (before). */
typedef struct trn_unity_layer {
    char name[128];     /* the referenced object's m_Name when it is in this file, else
                         * "layer N" */
    trn_unity_pptr ref; /* the TerrainLayer, or the SplatPrototype's diffuse texture */
    bool is_splat_prototype;
    float tile_size[2], tile_offset[2]; /* SplatPrototype only (0 otherwise) */
} trn_unity_layer;

/* An alpha map (blend weights of four layers per texel). */
typedef struct trn_unity_alphamap {
    char name[128];
    trn_unity_pptr ref;
    bool found; /* the texture object is in this file and its pixels were decoded */
    uint32_t width, height;
    int32_t format; /* TextureFormat: 4 RGBA32, 5 ARGB32, 14 BGRA32 */
    int32_t mip_count;
    uint8_t *rgba; /* level 0 as R, G, B, A per texel, row 0 at z = 0 (malloc'd) */
} trn_unity_alphamap;

typedef struct trn_unity_tree {
    float position[3]; /* 0..1 of the terrain size */
    float width_scale, height_scale;
    float rotation; /* about y, radians */
    uint32_t color; /* ColorRGBA32: r in the low byte, a in the high byte */
    uint32_t lightmap_color;
    int32_t prototype; /* index into prototypes */
} trn_unity_tree;

typedef struct trn_unity_tree_prototype {
    trn_unity_pptr prefab;
    float bend_factor;
} trn_unity_tree_prototype;

/* A TerrainData as plain data (everything owned; independent of the file). */
typedef struct trn_unity_terrain {
    char name[128];
    int64_t path_id;
    uint32_t resolution; /* samples per side (m_Resolution, or m_Width before 2019.3) */
    float scale[3];      /* m_Scale: sample spacing x, height y, spacing z */
    int16_t *heights;    /* resolution^2, row z then x, 0..32766 = 0..1 of scale[1] */
    uint8_t *holes;      /* (resolution - 1)^2 bytes, 0 = hole; NULL when none stored */
    size_t hole_count;   /* bytes in holes (0 or (resolution - 1)^2) */
    trn_unity_layer *layers;
    uint32_t layer_count;
    trn_unity_alphamap *alphamaps;
    uint32_t alphamap_count;
    uint32_t alphamap_resolution, base_map_resolution;
    trn_unity_tree *trees;
    uint32_t tree_count;
    trn_unity_tree_prototype *prototypes;
    uint32_t prototype_count;
} trn_unity_terrain;

/* Extract the TerrainData with path_id (0 = the first one in the file) with its alpha-map
 * textures. Errors: TRN_ERR_NOT_FOUND (no TerrainData / no such object), TRN_ERR_FORMAT (a
 * field missing or of the wrong type, heights not resolution^2...), TRN_ERR_TRUNCATED (the
 * object's data ends early), TRN_ERR_LIMIT, each with the byte offset. On failure *terrain is
 * left empty. */
trn_status trn_unity_terrain_from_file(const trn_unity_file *file, int64_t path_id,
                                       const trn_unity_limits *limits, trn_unity_terrain *terrain,
                                       trn_error *err);
/* Read path and extract its first TerrainData. */
trn_status trn_unity_terrain_read(const char *path, const trn_unity_limits *limits,
                                  trn_unity_terrain *terrain, trn_error *err);
/* Free and zero. NULL is a no-op. */
void trn_unity_terrain_dispose(trn_unity_terrain *terrain);

/* Height in metres of stored value v: v / 32766 * scale[1]. */
double trn_unity_height_metres(const trn_unity_terrain *terrain, int16_t v);

/* The heights as a field: (resolution - 1)^2 cells, size (resolution - 1) * scale x/z,
 * quantum scale[1] / 32766, quantum_base 0 (so the stored values are recoverable). */
trn_status trn_unity_terrain_to_field(const trn_unity_terrain *terrain, trn_field *field,
                                      trn_error *err);
/* The weight (0..1) of layer at terrain point (u, v) in 0..1 of the size, bilinear between
 * alpha-map texel centres; 0 when the layer's alpha map is missing. */
float trn_unity_terrain_weight(const trn_unity_terrain *terrain, uint32_t layer, double u,
                               double v);
/* Labels on the field's grid: per sample, the layer with the highest weight (the lowest index
 * on ties), named after the layers; a sample whose cell (the one at its +x +z side; the last
 * row and column use the cell before) is a hole gets TRN_LABEL_NONE. Needs at least one layer
 * (TRN_ERR_NOT_FOUND otherwise) and at most 254. */
trn_status trn_unity_terrain_to_labels(const trn_unity_terrain *terrain, trn_labels *labels,
                                       trn_error *err);

/* ---- Export for Unity's Terrain import ------------------------------------------------------ */

typedef enum trn_unity_fit {
    TRN_UNITY_FIT_NONE = 0,     /* the input must already have the target sample count */
    TRN_UNITY_FIT_RESAMPLE = 1, /* bilinear resampling; the terrain keeps its size */
    TRN_UNITY_FIT_PAD = 2,      /* extend +x and +z with ground falling smoothly from the edge
                                 * to the RAW's 0 height (trn_field_pad_fall); the terrain
                                 * grows */
} trn_unity_fit;

/* A detail layer (Unity's DetailPrototype and its density map, e.g. grass): instances as points.
 * The export counts them per detail cell: the detail resolution of a tile is its heightmap
 * resolution minus one, so detail cell (i, j) is the terrain cell (i, j) (as the alpha maps'
 * texels are), and a cell's value is the number of points in it, clamped to 255 (Unity's
 * DetailScatterMode.InstanceCount). */
typedef struct trn_unity_detail_layer {
    const char *name;      /* the layer's name (a placement rule's id) */
    const char *prototype; /* what it draws: a model or prefab id; NULL = none named */
    const double *points;  /* point_count (x, z) pairs in the field's units from its corner;
                            * points outside the working grid or not finite are dropped */
    size_t point_count;
} trn_unity_detail_layer;

/* A prototype of trees terrane placed itself: the palette rule it comes from and what stands
 * for it in the engine (any may be NULL). */
typedef struct trn_unity_placed_prototype {
    const char *rule, *prefab, *model;
} trn_unity_placed_prototype;

/* A splat layer's TerrainLayer as files the caller wrote beside the export (names relative to
 * its folder; NULL: none): diffuse (sRGB colour), normal (tangent space, +Y up, as Unity's normal
 * maps), mask (Unity's mask map: R metallic, G ambient occlusion, B height, A smoothness); the
 * metres one repetition of the textures covers (TerrainLayer.tileSize, both axes); the Material
 * document the maps came from, as the caller names it (NULL: none, e.g. a flat colour). */
typedef struct trn_unity_terrain_layer {
    const char *diffuse, *normal, *mask;
    double tile_size;
    const char *document;
} trn_unity_terrain_layer;

typedef struct trn_unity_export_options {
    const char *name;    /* file stem; default "terrain" */
    uint32_t resolution; /* samples per tile side, 2^n + 1 in 33..4097; 0 = from input */
    trn_unity_fit fit;
    uint32_t tiles_x, tiles_z; /* 0 or 1 = a single terrain */
    bool big_endian;           /* Mac byte order; default little (Windows) */
    bool flip;                 /* RAW row 0 = the far (max z) edge ("Flip Vertically") */
    double height_base;        /* metres at RAW 0 (with height_size > 0) */
    double height_size;        /* RAW 65535 is base + this (the Unity terrain height); 0 = the
                                * lowest height at RAW 0 and the highest at 65535 */
    double position[3];        /* world position of the whole terrain's corner (for trees) */
    /* Detail layers written as NAME[_X_Z]_detail<K>.png beside each tile (may be NULL). */
    const trn_unity_detail_layer *details;
    uint32_t detail_count; /* at most TRN_UNITY_MAX_DETAIL_LAYERS */
    /* Per splat layer (labels->name_count entries, labels only), where its material came from
     * ("role", "biome", "explicit"), listed as the splat's "sources" (may be NULL). */
    const char *const *layer_sources;
    /* A material set's mapping (NULL or not present: none), listed as the splat's "mapping":
     * what Unity's terrain shaders take of it (height-based blend and its transition) and what
     * a custom terrain shader needs for the rest (triplanar, macro variation, texture arrays). */
    const trn_material_mapping *mapping;
    /* Per splat layer (labels->name_count entries, labels only; may be NULL): its TerrainLayer's
     * textures and tile size, listed in each tile's JSON as the splat's "terrain_layers". */
    const trn_unity_terrain_layer *terrain_layers;
    /* Trees terrane placed (a palette's tree, rock and prop rules), written exactly as a Unity
     * source's trees are, into NAME[_X_Z]_trees.json: position x and z 0..1 of the whole
     * terrain, position y in metres, scales, rotation (radians about y), colour and prototype
     * (an index into placed_prototypes). Used when source has no trees (may be NULL). */
    const trn_unity_tree *trees;
    uint32_t tree_count;
    const trn_unity_placed_prototype *placed_prototypes;
    uint32_t placed_prototype_count;
    /* Stage every file into this set (the caller commits); NULL: the call's own set, committed
     * before it returns, so the files of an export change together or not at all. */
    struct trn_write_set *writes;
    /* The field is the piece of a larger terrain of total_tiles_x x total_tiles_z tiles that
     * starts at tile (first_tile_x, first_tile_z) (a tiled generation writes its tiles a few at
     * a time): file names and each JSON's tile numbers count from there, and position is the
     * piece's corner. 0 totals: the field is the whole terrain. A piece's trees (position 0..1)
     * and detail points (units from the corner) are the whole terrain's, so each tile keeps
     * those the whole terrain's export gives it, bit for bit. */
    uint32_t first_tile_x, first_tile_z, total_tiles_x, total_tiles_z;
} trn_unity_export_options;

/* Defaults: name "terrain", resolution 0, FIT_NONE, 1 x 1 tile, little-endian, no flip,
 * height base and size 0 (from the data), position 0. */
void trn_unity_export_options_default(trn_unity_export_options *options);

/* What an export wrote. */
typedef struct trn_unity_export_report {
    uint32_t resolution; /* samples per tile side */
    uint32_t tiles_x, tiles_z;
    double tile_size[3]; /* Unity terrain size x, y (height), z of one tile */
    double height_base;
    uint32_t files;          /* files written */
    uint32_t splat_textures; /* per tile */
    uint32_t trees;
    bool holes;
    uint32_t detail_layers;  /* detail PNGs per tile */
    uint64_t detail_points;  /* points counted into the detail maps, every tile together */
    uint64_t detail_dropped; /* points outside the terrain, or not finite */
    uint64_t detail_clamped; /* detail cells holding more than 255 points (written as 255) */
} trn_unity_export_report;

#define TRN_UNITY_MAX_DETAIL_LAYERS 64u

/* True for 2^n + 1 in 33..4097. */
bool trn_unity_resolution_valid(uint32_t samples);

/* Write DIR/NAME[_X_Z].raw (16-bit heights, RAW 0..65535 = height_base .. base + size), a
 * NAME[_X_Z].json of import settings beside each, and when there is something to write:
 * NAME[_X_Z]_splat<K>.png (RGBA, four layers each, weights summing to 255 per texel, PNG row 0
 * = the far edge), NAME[_X_Z]_holes.png (grey, 255 solid, 0 hole), NAME[_X_Z]_trees.json,
 * NAME[_X_Z]_detail<K>.png (grey, one per options->details entry: instances per detail cell,
 * PNG row 0 = the far edge) listed under the JSON's "detail".
 * Tiles share their edge samples. Layers come from source's alpha maps when source is given,
 * else from labels (one-hot; TRN_LABEL_NONE samples are holes); trees only from source.
 * source (may be NULL) must describe the same terrain as field. The files land together
 * (options->writes, or the call's own write set). Errors: TRN_ERR_INVALID_ARGUMENT (bad resolution
 * or tiles, or a sample count that is not 2^n + 1 per tile without a fit: the message names the
 * options; more than TRN_UNITY_MAX_DETAIL_LAYERS detail layers, or a layer without a name or with
 * points NULL and a count), I/O errors. */
trn_status trn_unity_export(const char *dir, const trn_field *field, const trn_labels *labels,
                            const trn_unity_terrain *source,
                            const trn_unity_export_options *options,
                            trn_unity_export_report *report, trn_progress_fn progress, void *user,
                            trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
