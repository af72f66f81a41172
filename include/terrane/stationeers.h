/* Stationeers voxel terrain: terrain.dat octrees, .save archives, heightfield conversions. */
#ifndef TERRANE_STATIONEERS_H
#define TERRANE_STATIONEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* terrain.dat (as the modding community's "terrain.dat binary format" notes describe it),
 * little-endian as .NET's BinaryWriter writes it, not compressed:
 *   int32 MaxDepth
 *   the octree, depth-first pre-order from the root (depth 0, 2^MaxDepth voxels a side):
 *     leaf   (3 bytes): flags (bit 0 IS_LEAF set, bit 1 IS_MODIFIED), density (0 air ..
 *                       255 full), node type (flags: None 0, Crust 1, Dirt 2, Macro 4,
 *                       Bedrock 8)
 *     branch (1 byte):  flags (bit 0 clear, bit 1 IS_MODIFIED), then its 8 children, child k
 *                       at x + (k & 1), y + (k >> 1 & 1), z + (k >> 2 & 1) half-sizes
 *   int32 vein count, then per vein: int16 VeinWorldPosition x, y, z, int16 ClusterPosition
 *   x, y, z, int32 Data.IdHash, u8 minable count, then per minable 5 bytes X, Y, Z,
 *   ParentIndex, IsActive.
 * A node at depth MaxDepth is one voxel and must be a leaf.
 *
 * The reader refuses (the error names the section, e.g. "node at depth 3, path 7/0/2" or
 * "vein 4, minable 1", and the byte offset of the read that failed): a negative or absurd
 * MaxDepth (> TRN_STATIONEERS_DEPTH_ABSURD: TRN_ERR_FORMAT), a MaxDepth over the limits or
 * whose heightfield would have more than limits.max_samples samples (TRN_ERR_LIMIT), a branch at
 * depth MaxDepth, flag bits other than IS_LEAF and IS_MODIFIED and node types with bits above
 * Bedrock (TRN_ERR_FORMAT, unless limits.accept_unknown_bits), more nodes, veins or minables than
 * the limits allow (TRN_ERR_LIMIT), a negative vein count (TRN_ERR_FORMAT), a file that ends inside
 * any section (TRN_ERR_TRUNCATED) and bytes after the vein section (TRN_ERR_TRAILING_DATA at the
 * first of them). The vein section is always present (count 0 when there are no veins). No C
 * recursion: the tree is walked with an explicit stack of at most MaxDepth + 1 frames. */

#define TRN_STATIONEERS_LEAF 0x01u
#define TRN_STATIONEERS_MODIFIED 0x02u
#define TRN_STATIONEERS_TYPE_NONE 0u
#define TRN_STATIONEERS_TYPE_CRUST 1u
#define TRN_STATIONEERS_TYPE_DIRT 2u
#define TRN_STATIONEERS_TYPE_MACRO 4u
#define TRN_STATIONEERS_TYPE_BEDROCK 8u
/* A MaxDepth above this is not a terrain file (2^25 voxels a side); refused as a format error. */
#define TRN_STATIONEERS_DEPTH_ABSURD 24u
/* Voxels whose density is at least this are solid (more than half full). */
#define TRN_STATIONEERS_SOLID 128u

/* Working memory per heightfield sample (one voxel column) at the peak of
 * trn_stationeers_to_field: 9 bytes of column state (int16 top, low and high partial rows; u8
 * top density, partial density, density above) + the field's 4-byte float height.
 * trn_stationeers_from_field needs less per column (5 bytes: int16 + u8 + a third-size min/max
 * pyramid of 3 int16). */
#define TRN_STATIONEERS_SAMPLE_BYTES 13u
/* The default sample limit: what 8 GiB of working memory holds at TRN_STATIONEERS_SAMPLE_BYTES
 * each, 8 * 2^30 / 13 = 660,764,199 samples. A MaxDepth-d terrain has (2^d)^2 samples: depth
 * 14 (268,435,456, 3.25 GiB) passes, depth 15 (1,073,741,824) does not. */
#define TRN_STATIONEERS_MAX_SAMPLES_DEFAULT (((uint64_t)8 << 30) / TRN_STATIONEERS_SAMPLE_BYTES)

/* Bounds for reading untrusted files. */
typedef struct trn_stationeers_limits {
    uint32_t max_depth;       /* default 14 (Stationeers worlds use 10 to 12) */
    uint64_t max_nodes;       /* default 2^31 */
    uint32_t max_veins;       /* default 2^20 */
    bool accept_unknown_bits; /* keep flag and type bits the format does not name (default false) */
    /* The most heightfield samples, (2^MaxDepth)^2, a terrain read with these limits may have
     * (default TRN_STATIONEERS_MAX_SAMPLES_DEFAULT), checked at the header before the tree is
     * read: an 11-byte file can claim a MaxDepth whose heightfield needs gigabytes. 0 = not
     * checked, for callers that never build a heightfield (describing or copying the tree). */
    uint64_t max_samples;
} trn_stationeers_limits;

void trn_stationeers_limits_default(trn_stationeers_limits *limits);

/* One vein; its minables are minables[first_minable .. first_minable + minable_count). */
typedef struct trn_stationeers_vein {
    int16_t world_position[3];   /* VeinWorldPosition x, y, z */
    int16_t cluster_position[3]; /* ClusterPosition x, y, z */
    int32_t id_hash;             /* Data.IdHash: which vein generation parameters */
    uint8_t minable_count;
    size_t first_minable;
} trn_stationeers_vein;

typedef struct trn_stationeers_minable {
    uint8_t x, y, z, parent_index;
    uint8_t is_active; /* 0 or 1 in files the game writes; other values are kept as stored */
} trn_stationeers_minable;

/* A terrain.dat in memory. The octree stays in its stored pre-order encoding (1 byte per
 * branch, 3 per leaf, already checked), the most compact flat form there is: a MaxDepth-12
 * world holds tens of millions of nodes. Walk it with trn_stationeers_iter. */
typedef struct trn_stationeers_terrain {
    uint32_t max_depth;
    uint8_t *nodes; /* malloc'd pre-order node bytes */
    size_t nodes_size;
    uint64_t node_count, branch_count, leaf_count;
    trn_stationeers_vein *veins; /* malloc'd */
    uint32_t vein_count;
    trn_stationeers_minable *minables; /* malloc'd, all veins' minables in file order */
    size_t minable_count;
} trn_stationeers_terrain;

/* True when data looks like a terrain.dat: MaxDepth 0..24 as int32 and a root flags byte
 * 0..3 (at least 5 bytes). A weak test: the format has no magic. */
bool trn_stationeers_sniff(const uint8_t *data, size_t size);

/* Parse a terrain.dat from memory (path only for messages, may be NULL; limits NULL =
 * defaults). On failure *terrain is left empty (all zero) and err names section and offset. */
trn_status trn_stationeers_parse(const uint8_t *data, size_t size, const char *path,
                                 const trn_stationeers_limits *limits,
                                 trn_stationeers_terrain *terrain, trn_error *err);
/* Read a file from disk (mapped): the same result and errors as parsing its bytes. */
trn_status trn_stationeers_read(const char *path, const trn_stationeers_limits *limits,
                                trn_stationeers_terrain *terrain, trn_error *err);
/* Free everything and zero *terrain. NULL is a no-op. */
void trn_stationeers_dispose(trn_stationeers_terrain *terrain);

/* Serialise exactly as stored: parse then encode gives back the input bytes. The terrain
 * must be consistent (as parse or from_field leave it); TRN_ERR_INVALID_ARGUMENT when the
 * vein table points outside the minables. *out is malloc'd; caller frees. */
trn_status trn_stationeers_encode(const trn_stationeers_terrain *terrain, uint8_t **out,
                                  size_t *out_size, trn_error *err);
/* Encode and write atomically to path. */
trn_status trn_stationeers_write(const char *path, const trn_stationeers_terrain *terrain,
                                 trn_error *err);

/* Walking the octree in stored (pre-)order. Every node reports its place: depth, the voxel
 * coordinates of its low corner and its size (2^(MaxDepth - depth) voxels a side). */
typedef struct trn_stationeers_node {
    uint32_t depth;
    uint32_t x, y, z, size;
    uint8_t flags, density, type; /* density and type are 0 for branches */
    uint8_t child_index;          /* its index under its parent (0 for the root) */
    size_t offset;                /* byte offset of its flags in the file (nodes + 4) */
} trn_stationeers_node;

typedef struct trn_stationeers_iter_frame {
    uint32_t x, y, z, size;
    uint8_t next_child;
} trn_stationeers_iter_frame;

typedef struct trn_stationeers_iter {
    const trn_stationeers_terrain *terrain;
    size_t pos;
    uint32_t top; /* stack height */
    trn_stationeers_iter_frame stack[TRN_STATIONEERS_DEPTH_ABSURD + 2];
} trn_stationeers_iter;

void trn_stationeers_iter_init(trn_stationeers_iter *it, const trn_stationeers_terrain *terrain);
/* The next node, or false after the last. The terrain must come from parse or from_field. */
bool trn_stationeers_iter_next(trn_stationeers_iter *it, trn_stationeers_node *node);

/* What `info` prints. */
typedef struct trn_stationeers_stats {
    uint64_t branches, leaves;
    uint64_t modified_branches, modified_leaves;
    uint64_t density_leaves[256]; /* leaves by density */
    uint64_t type_leaves[256];    /* leaves by node type byte */
    uint64_t leaves_by_depth[TRN_STATIONEERS_DEPTH_ABSURD + 1];
    double solid_voxels;     /* voxels in leaves with density >= TRN_STATIONEERS_SOLID */
    double modified_voxels;  /* voxels in leaves marked IS_MODIFIED */
    double type_voxels[256]; /* voxels by node type byte */
    uint64_t veins, minables, active_minables;
} trn_stationeers_stats;

void trn_stationeers_stats_compute(const trn_stationeers_terrain *terrain,
                                   trn_stationeers_stats *stats);

/* ---------------------------------------------------------------------------------------------
 * Heightfields. Column (x, z) of the octree is field sample (i = x, j = z); one voxel is
 * voxel_size metres on every axis; voxel y spans base + [y, y + 1) * voxel_size metres.
 * Density is how full a voxel is (0 air .. 255 full), so a surface at h voxels above voxel
 * t's floor (0 <= h - t < 1) gives voxel t the density round((h - t) * 255).
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_stationeers_field_options {
    double voxel_size;  /* metres per voxel (default 1) */
    double base;        /* metres at the floor of voxel row y = 0 (default 0) */
    uint32_t max_depth; /* from_field: 0 = the smallest depth that holds the field */
    /* from_field with max_depth 0: never smaller than this (default 0: no floor;
     * TRN_STATIONEERS_WORLD_SMALL gives only depths the game's worlds have) */
    uint32_t min_depth;
    uint32_t crust_depth;    /* from_field: Crust voxels at the top of each column (default 2) */
    uint32_t bedrock_layers; /* from_field: Bedrock voxel rows at the bottom (default 4) */
    /* The most samples (voxel columns, (2^MaxDepth)^2) either conversion may allocate for,
     * checked before allocating; 0 = TRN_STATIONEERS_MAX_SAMPLES_DEFAULT (the default). */
    uint64_t max_samples;
} trn_stationeers_field_options;

void trn_stationeers_field_options_default(trn_stationeers_field_options *options);

/* What a conversion met on the way (NULL to ignore). */
typedef struct trn_stationeers_field_report {
    uint64_t empty_columns; /* to_field: columns with no solid voxel (height = base) */
    uint64_t clamped_low;   /* from_field: samples below the bedrock, raised to it */
    uint64_t clamped_high;  /* from_field: samples above the world top, lowered to it */
    uint64_t extended;      /* from_field: columns outside the field (repeat its edge) */
    uint32_t max_depth;     /* from_field: the depth used */
    /* to_field: what the octree holds that the heightfield cannot. Per column the field keeps
     * its surface voxel (the one above the top solid voxel when that holds some density, else
     * the top solid voxel) and implies full voxels below it and air above it; voxels that
     * differ are counted here, with the columns holding them. */
    uint64_t cave_voxels, cave_columns;         /* not solid (density < 128) below the surface:
                                                 * caves and overhangs */
    uint64_t buried_voxels, buried_columns;     /* solid but not full (128..254) below it */
    uint64_t floating_voxels, floating_columns; /* not air above the surface voxel */
} trn_stationeers_field_report;

/* Octree to heightfield: for each column the highest solid voxel s (density >=
 * TRN_STATIONEERS_SOLID); when the voxel above it holds some density a (1..127) the surface is
 * inside that voxel, at s + 1 + a / 255, otherwise inside s, at s + density(s) / 255. A column
 * without a solid voxel is base (counted in report->empty_columns) unless voxel 0 holds some
 * density a: then a / 255. The field has 2^MaxDepth samples a side and
 * (2^MaxDepth - 1) * voxel_size metres. One walk over the nodes, and a second when some
 * partial voxel lies above a column's top or when report is not NULL (it then also counts what
 * the field loses); no recursion. TRN_ERR_LIMIT, before allocating, when the field would have
 * more than options->max_samples samples. Progress stage "octree to heightfield"; cancelling
 * leaves *field untouched. */
trn_status trn_stationeers_to_field(const trn_stationeers_terrain *terrain,
                                    const trn_stationeers_field_options *options, trn_field *field,
                                    trn_stationeers_field_report *report, trn_progress_fn progress,
                                    void *user, trn_error *err);

/* Heightfield to octree: each column is solid up to its height (in voxels, (height - base) /
 * voxel_size, clamped to [bedrock_layers, 2^MaxDepth]), with the top voxel's density encoding
 * the height inside it (as above), so to_field gives each height back within half a density
 * step (1/510 voxel). Types: Bedrock for the bottom bedrock_layers rows, Crust for the top
 * crust_depth voxels of a column (counting its partial top voxel), Dirt between, None for
 * air. Every subtree whose voxels are all alike is one leaf (the tree is canonical); no
 * veins; no node is marked modified. Columns past the field's last sample repeat it. The
 * field may have at most 2^MaxDepth samples a side; max_depth 0 picks the smallest depth that
 * holds the field's samples and its highest point; TRN_ERR_LIMIT, before allocating, when
 * its (2^MaxDepth)^2 columns are more than options->max_samples. Progress stage "heightfield
 * to octree"; on failure *terrain is left empty. */
trn_status trn_stationeers_from_field(const trn_field *field,
                                      const trn_stationeers_field_options *options,
                                      trn_stationeers_terrain *terrain,
                                      trn_stationeers_field_report *report,
                                      trn_progress_fn progress, void *user, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * World sizes. The game's worlds are MaxDepth 10 (1024^3 voxels), 11 (2048^3) and 12 (4096^3,
 * the Lunar world), stored as 1, 8 or 64 base terrain files Terrain0.dat, Terrain1.dat, ...,
 * each a MaxDepth-10 octree of one 1024^3 block (the format notes give the counts; the order
 * below is terrane's reading of them, see docs/stationeers.md). Base file i is the world's
 * node at depth k = MaxDepth - 10 that is i-th in pre-order: with the child indices c1 .. ck
 * from the root, i = c1 * 8^(k-1) + ... + ck, and the block's low corner is the sum over m of
 * ((cm & 1), (cm >> 1 & 1), (cm >> 2 & 1)) * 2^(MaxDepth - m) voxels (x, y, z).
 * ------------------------------------------------------------------------------------------- */

#define TRN_STATIONEERS_BASE_DEPTH 10u   /* one base terrain file: 1024^3 voxels */
#define TRN_STATIONEERS_WORLD_SMALL 10u  /* 1 file */
#define TRN_STATIONEERS_WORLD_MEDIUM 11u /* 8 files */
#define TRN_STATIONEERS_WORLD_LARGE 12u  /* 64 files (Lunar) */

/* Base terrain files of a world of this MaxDepth: 8^(max_depth - 10); 0 below 10 or past 14. */
uint32_t trn_stationeers_world_files(uint32_t max_depth);

/* Base terrain file index of world (MaxDepth 10..14, no veins: a vein's block is not known)
 * into *part: a MaxDepth-10 octree holding the world's subtree at that block, its bytes
 * copied as stored (modified flags kept); a block inside a larger leaf is that leaf. *corner
 * (may be NULL) gets the block's low corner in world voxels. TRN_ERR_INVALID_ARGUMENT for a
 * depth outside 10..14 or an index past the file count, TRN_ERR_UNSUPPORTED for a world with
 * veins, TRN_ERR_NO_MEMORY. On failure *part is left empty. */
trn_status trn_stationeers_world_part(const trn_stationeers_terrain *world, uint32_t index,
                                      trn_stationeers_terrain *part, uint32_t corner[3],
                                      trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * .save archives: a ZIP holding world.xml, world_meta.xml, terrain.dat and previews.
 * ------------------------------------------------------------------------------------------- */

/* The name of the entry these functions read and replace. */
#define TRN_STATIONEERS_SAVE_ENTRY "terrain.dat"

/* Read the bytes of terrain.dat (an entry of that name, any case, in any folder; exactly one)
 * from a .save without unpacking the rest. max_size bounds the entry (0 = 2 GiB). *data is
 * malloc'd. TRN_ERR_NOT_FOUND when there is no such entry; TRN_ERR_FORMAT when the file is not
 * a ZIP, holds several terrain.dat, holds two entries of one name ("duplicate entry NAME"),
 * when the entry is a symbolic link (Unix mode S_IFLNK in its external attributes: never read
 * as data) or when the CRC-32 of the extracted bytes differs from the central directory's
 * (the message gives both). */
trn_status trn_stationeers_save_extract(const char *save_path, size_t max_size, uint8_t **data,
                                        size_t *size, trn_error *err);
/* The same from an archive held in memory (save_path names it in messages; may be NULL). */
trn_status trn_stationeers_save_extract_memory(const uint8_t *save, size_t save_size,
                                               const char *save_path, size_t max_size,
                                               uint8_t **data, size_t *size, trn_error *err);
/* Extract and parse. */
trn_status trn_stationeers_save_read(const char *save_path, const trn_stationeers_limits *limits,
                                     trn_stationeers_terrain *terrain, trn_error *err);
/* Write out_path: save_path's archive with terrain.dat's contents replaced by data, every
 * other entry kept as stored (same order, same compressed bytes, same method), terrain.dat
 * compressed by its old method when libzip can write it (else Deflate) with its old
 * modification time. out_path may be save_path (in-place update); the archive is built in
 * memory and written atomically, so save_path is never touched unless it is out_path. An
 * archive with a symbolic-link entry is refused (TRN_ERR_FORMAT naming the entry) rather than
 * written back with a link in it. */
trn_status trn_stationeers_save_replace(const char *save_path, const char *out_path,
                                        const uint8_t *data, size_t size, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
