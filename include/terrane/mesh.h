/* Terrain meshes: chunked triangle meshes with levels of detail, glTF 2.0 and OBJ export. */
#ifndef TERRANE_MESH_H
#define TERRANE_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/io.h"
#include "terrane/palette.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Axes: positions are terrain-local, as trn_field lays samples out: x = i * size_x / cells_x
 * (right), y = the height (up), z = j * size_z / cells_z (the row direction). Read as a
 * right-handed frame (glTF's: +y up, +z toward the viewer of a front view), the coordinates are
 * used as they are; every triangle is wound counter-clockwise seen from above (+y), so
 * (b - a) x (c - a) points up, a front face in glTF and OBJ. A left-handed engine (Unity)
 * negates x and reverses the winding. docs/meshes.md has the details. */

/* Largest chunk side in cells: a chunk's vertices, skirts included, fit a uint32 index. */
#define TRN_MESH_CHUNK_CELLS_MAX 8192u
/* The section role of a mesh built without roles. */
#define TRN_MESH_NO_ROLE 255u

/* The triangles of one role in a level's index list: indices [first, first + count) (count a
 * multiple of 3), the role's surface triangles first, then the skirt triangles hanging from
 * them. Sections come in increasing role order and partition the index list. */
typedef struct trn_mesh_section {
    uint8_t role; /* a trn_surface_role, or TRN_MESH_NO_ROLE without roles */
    uint32_t first, count;
    uint32_t skirt_count; /* of count, the skirt indices at the section's end */
} trn_mesh_section;

/* One level of detail of a chunk. Level L keeps every 2^L-th sample of the chunk counted from
 * its first row and column, and always its last row and column, so the chunk's border is kept
 * and neighbours' borders share their vertices. Coarse cells are split along the same diagonal
 * as the terrain's cells (roles.h), a triangle with a NaN corner is left out (a hole).
 * An adaptive level (trn_mesh_options.adaptive) keeps the samples its error allows
 * instead: error is then an upper bound of that largest difference, at most the level's
 * allowance, border_error and skirt_depth are 0, and level 0 is not full resolution. */
typedef struct trn_mesh_level {
    uint32_t level, step; /* step = 2^level samples between vertices (the last may be shorter);
                             0 on an adaptive level */
    /* The largest |height of a full-resolution sample - height of this level's surface at that
     * sample| over the chunk's finite samples, in metres, computed exactly in double precision
     * (0 for level 0). INFINITY when a finite sample lies under a hole of this level (a coarse
     * triangle left out for a NaN corner): the level would widen a hole. */
    double error;
    /* The same over the chunk's four border lines only (finite where covered): the largest gap
     * the border can open against a neighbour at any other level. */
    double border_error;
    double skirt_depth;            /* how far the skirt hangs below the border (0: no skirt) */
    uint32_t vertex_count;         /* surface vertices, then skirt vertices */
    uint32_t surface_vertex_count; /* the first surface_vertex_count are on the surface */
    float *positions;              /* x, y, z per vertex */
    float *normals;                /* unit x, y, z per vertex */
    uint32_t index_count;          /* 3 per triangle */
    uint32_t *indices;
    uint32_t surface_triangle_count, skirt_triangle_count;
    trn_mesh_section *sections;
    uint32_t section_count;
    float bounds_min[3], bounds_max[3]; /* of the vertices (0 when there are none) */
} trn_mesh_level;

/* A chunk: chunk_cells x chunk_cells cells (the last row and column of chunks smaller), so
 * chunk (cx, cz) uses samples i0..i1, j0..j1 (inclusive; a border sample belongs to both
 * chunks), as trn_roles_chunk_grid numbers them. */
typedef struct trn_mesh_chunk {
    uint32_t cx, cz;
    uint32_t i0, j0, i1, j1;
    /* The chunk's box: its x, z extent and the range of its finite full-resolution heights
     * (y 0..0 when none is finite). Selection measures camera distances to it. */
    double bounds_min[3], bounds_max[3];
    uint32_t level_count;
    trn_mesh_level *levels; /* level_count levels, finest (0) first */
} trn_mesh_chunk;

typedef struct trn_mesh {
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    uint32_t chunk_cells;
    uint32_t chunks_x, chunks_z;
    uint32_t level_count; /* every chunk has this many levels */
    bool has_roles;
    double adaptive_error;   /* adaptive levels: their adaptive_error; -1: regular */
    trn_mesh_chunk *chunks;  /* chunks_x * chunks_z, row by row (cz, then cx) */
    const trn_field *around; /* trn_mesh_options.around, for deferred levels */
    uint32_t around_i0, around_j0;
} trn_mesh;

typedef struct trn_mesh_options {
    uint32_t chunk_cells; /* cells per chunk side: 0 = TRN_ROLES_CHUNK_CELLS (64), else
                             1..TRN_MESH_CHUNK_CELLS_MAX */
    uint32_t max_levels;  /* 0 = all: floor(log2(chunk_cells)) + 1 (the coarsest a single cell
                             per chunk); fewer keeps the finest max_levels */
    /* Skirts: < 0 (the default, -1) automatic: the level's error, or the largest border_error of
     * any of the chunk's levels when that is larger (so the skirt covers the gap to a neighbour
     * at any level), plus skirt_margin; 0: no skirts; > 0: this depth on every level. */
    double skirt_depth;
    double skirt_margin; /* automatic skirts: < 0 (default -1) = one cell (the smaller side) */
    int threads;         /* 0 = OpenMP default; results never depend on it */
    /* Adaptive levels (false by default, and in a zeroed struct: the regular grids above):
     * level L is a right-triangulated irregular network (docs/meshes.md "Adaptive levels")
     * whose every triangle stays within adaptive_error * 2^L metres (finite, >= 0) of every
     * sample it covers. Neighbouring chunks at any two levels share their border vertices
     * exactly, so adaptive levels need no skirts: skirt_depth must be < 0 or 0 (none built). */
    bool adaptive;
    double adaptive_error;
    /* Regular levels only (false by default): every level gets its level, step, error,
     * border_error and skirt_depth, but no geometry (counts 0, arrays NULL) until
     * trn_mesh_realize builds the levels a selection picked, so memory holds those alone
     * instead of every level of every chunk. Ignored for adaptive levels. */
    bool defer_levels;
    /* The field is a window of a larger grid, such as one tile of a tiled run cut with a sample
     * around it: normals take their neighbours from `around` (the same cell size; the window's
     * sample (0, 0) is around's (around_i0, around_j0), and the heights the two share are
     * equal), so a window's normals are the larger grid's and neighbouring windows meshed apart
     * shade without a seam. NULL (the default): the field alone, one-sided at its edges. The
     * mesh keeps the pointer for deferred levels: around must live while they are built. */
    const trn_field *around;
    uint32_t around_i0, around_j0;
} trn_mesh_options;

void trn_mesh_options_default(trn_mesh_options *options);

/* Build every chunk and level of field. roles_per_sample (may be NULL) holds one role per
 * sample (trn_roles_classify): each triangle takes the majority role of its three corner
 * samples, exactly as trn_roles_triangles (two equal corners win, else the first corner
 * (i, j)), so level 0 has trn_roles_triangles's roles; coarse triangles apply the rule to their
 * own corners. Normals are the field's central-difference gradient at each sample
 * (one-sided at the field's edges and next to a NaN), the same in every chunk and level that
 * uses the sample, so shading shows no seam. Chunks are built in parallel (OpenMP); the result is
 * bit-identical for any thread count. *out is malloc'd: free it with trn_mesh_free. Errors:
 * TRN_ERR_INVALID_ARGUMENT (no field, no cells, a size not finite and > 0, an option out of
 * range, named: "chunk_cells: expected 1..8192, found 0"), TRN_ERR_OVERFLOW, TRN_ERR_NO_MEMORY,
 * TRN_ERR_CANCELLED (progress stage "mesh"); *out is NULL on failure. Thread-safe for distinct
 * outputs. */
trn_status trn_mesh_build(const trn_field *field, const uint8_t *roles_per_sample,
                          const trn_mesh_options *options, trn_mesh **out, trn_progress_fn progress,
                          void *user, trn_error *err);
void trn_mesh_free(trn_mesh *mesh); /* NULL-safe */

/* Build the geometry of level levels[k] of each chunk k (chunks_x * chunks_z entries) of a mesh
 * built with defer_levels, from the same field and roles given to trn_mesh_build: bit for bit
 * the level trn_mesh_build would have made. Levels already built are kept; the others stay
 * without geometry. threads as trn_mesh_options.threads. Errors: TRN_ERR_INVALID_ARGUMENT (no
 * mesh, field or levels, a field of another grid or size, an adaptive mesh, a level out of
 * range), TRN_ERR_NO_MEMORY (levels built so far are kept; trn_mesh_free frees them). */
trn_status trn_mesh_realize(const trn_field *field, const uint8_t *roles_per_sample, trn_mesh *mesh,
                            const uint32_t *levels, int threads, trn_error *err);
/* Level `level` of chunk `chunk` of a mesh built with defer_levels, built into *out (not into
 * the mesh), bit for bit as trn_mesh_realize builds it; free it with trn_mesh_level_dispose.
 * Errors as trn_mesh_realize's; *out is zeroed on failure. */
trn_status trn_mesh_level_make(const trn_field *field, const uint8_t *roles_per_sample,
                               const trn_mesh *mesh, size_t chunk, uint32_t level,
                               trn_mesh_level *out, trn_error *err);
void trn_mesh_level_dispose(trn_mesh_level *level); /* frees its arrays, zeroes it; NULL-safe */

/* The errors trn_mesh_build gives one chunk's levels, without building vertices: errors[l]
 * (l < level_count) is trn_mesh_level.error of level l (every 2^l-th sample kept, plus the
 * last row and column) for the chunk of cells [i0, i0 + cells_x] x [j0, j0 + cells_z] of
 * field, bit for bit; level 0 is 0, INFINITY where a finite sample lies under a coarse
 * triangle with a NaN corner. For editors that pick levels before (or instead of) meshing.
 * Errors: TRN_ERR_INVALID_ARGUMENT (no field or heights, a chunk outside the grid or without
 * cells, level_count 0 or over 32, errors NULL). */
trn_status trn_mesh_chunk_errors(const trn_field *field, uint32_t i0, uint32_t j0, uint32_t cells_x,
                                 uint32_t cells_z, uint32_t level_count, double *errors,
                                 trn_error *err);

/* ---- Level selection: levels_out holds one level per chunk (chunks_x * chunks_z) ---- */

/* A perspective camera in terrain-local units. */
typedef struct trn_mesh_camera {
    double position[3];      /* x, y, z */
    double fov_y_degrees;    /* vertical field of view, 0 < fov < 180 */
    double viewport_height;  /* pixels, > 0 */
    double lod_error_pixels; /* the largest projected error allowed; finite, >= 0 (default 2);
                                0 disables LOD (level 0 everywhere) */
} trn_mesh_camera;

/* Per chunk the coarsest level whose projected error
 *   error * viewport_height / (2 * distance * tan(fov_y / 2)) <= lod_error_pixels,
 * distance being the camera's distance to the chunk's box; level 0 when the camera is inside
 * the box (distance 0), when lod_error_pixels is 0 or when no coarser level passes. Errors:
 * TRN_ERR_INVALID_ARGUMENT naming the value ("lod_error_pixels: expected a finite number >= 0,
 * found -1"); levels_out is untouched then. */
trn_status trn_mesh_select_camera(const trn_mesh *mesh, const trn_mesh_camera *camera,
                                  uint32_t *levels_out, trn_error *err);
/* Per chunk the coarsest level whose error is <= max_error (finite, >= 0). */
trn_status trn_mesh_select_max_error(const trn_mesh *mesh, double max_error, uint32_t *levels_out,
                                     trn_error *err);
/* Level `level` everywhere (< mesh->level_count, else TRN_ERR_INVALID_ARGUMENT). */
trn_status trn_mesh_select_level(const trn_mesh *mesh, uint32_t level, uint32_t *levels_out,
                                 trn_error *err);

/* ---- Export ---- */

/* A ground material for the exports: a recipe biome's name, material asset id (NULL: none),
 * texture_scale (repetitions per world unit) and colour (RGBA 0..1, sRGB: the material's
 * base colour, in linear light, when sections are biomes). */
typedef struct trn_mesh_biome_material {
    const char *name;
    const char *material;
    double texture_scale;
    float color[4];
} trn_mesh_biome_material;

/* What a writer puts in the file: the mesh at the chosen levels, and optionally the water
 * bodies' surfaces (trn_water_mesh_new over ground) and scatter instances. */
typedef struct trn_mesh_scene {
    const trn_mesh *mesh;
    const uint32_t *levels;  /* one per chunk; NULL = level 0 everywhere */
    bool chunks;             /* one node (OBJ: object) per chunk, named chunk_X_Z; else one mesh */
    const trn_water *water;  /* may be NULL; needs ground */
    const trn_field *ground; /* the heights the water was resolved on */
    const trn_palette *palette;     /* with instances: the rules they name */
    const trn_instances *instances; /* may be NULL */
    trn_write_set *writes;          /* stage the files in this set (NULL: the writer's own set) */
    /* Texture coordinates (glTF TEXCOORD_0, OBJ vt) on the terrain: 0 (the default) writes none;
     * > 0 (finite): repetitions per world unit, u = x * uv_scale and v = z * uv_scale in the
     * file's frame (glTF: v = the written z, so north is -v; OBJ, whose v runs up the image:
     * v = minus that, north). Both show an image upright, north at its top, seen from above. */
    double uv_scale;
    /* The ground's materials (a recipe's biomes): listed in every terrain material's extras
     * (glTF) with uv_scale, so an engine scales the UVs by texture_scale / uv_scale. */
    const trn_mesh_biome_material *biome_materials;
    uint32_t biome_material_count;
    /* A collision mesh (may be NULL): level 0 of each of its chunks, merged, written as the root
     * node "collider" (glTF: no material, no normals, no UVs; extras {"collider": true,
     * "max_error"}; OBJ: object "collider"). Build it adaptive with one level (max_levels 1). */
    const trn_mesh *collider;
    /* The mesh was built with a biome index per sample in place of roles (trn_mesh_build's
     * roles_per_sample = a biome map): each section is then the biome biome_materials[role]
     * (every section's must be < biome_material_count), one material per biome named by it
     * (OBJ: "biome_NAME"), its colour, and extras {"biome", "material", "texture_scale"}. */
    bool biome_sections;
    /* A mesh built with defer_levels whose drawn levels have no geometry yet: the glTF writer
     * builds each chunk's level from this field and these roles (those given to
     * trn_mesh_build) as it writes, one chunk at a time, and frees it again, so memory holds
     * one chunk's level instead of all of them (each level is built once for the JSON's counts
     * and bounds, then once per buffer view it appears in). The bytes are those of realized
     * levels. NULL (the default): levels carry their geometry. The OBJ writer needs realized
     * levels. */
    const trn_field *deferred_field;
    const uint8_t *deferred_roles;
    /* Mapped materials (a material set's "mapping"; NULL or not present: none): every terrain
     * material's extras get "mapping" with the texture layers (layers[0..layer_count), array
     * layer order), the five arrays, triplanar, height blending and macro variation. */
    const trn_material_mapping *mapping;
    const char *const *layers;
    uint32_t layer_count;
    /* The layers' Material documents (layer_count entries, resolved: trn_material_resolve; an
     * entry without a source has none) and each role binding's (NULL: none). The glTF writer
     * gives a role's material its document's maps as textures (baseColorTexture,
     * normalTexture, metallicRoughnessTexture with metallicFactor 0, emissiveTexture; the
     * texture scale as KHR_texture_transform) when the mesh has UVs, and lists every layer's
     * maps in the mapping extras ("layer_maps"); image URIs are relative to the glTF file. */
    const trn_material *layer_materials;
    const trn_material *role_materials[TRN_ROLE_COUNT];
} trn_mesh_scene;

/* What a writer wrote. */
typedef struct trn_mesh_write_report {
    uint64_t vertices, triangles; /* terrain and water, skirts included */
    uint64_t water_bodies, instances;
    uint64_t bytes; /* all files together */
    uint32_t file_count;
    char files[2][1024]; /* the destinations written */
} trn_mesh_write_report;

typedef enum trn_gltf_container {
    TRN_GLTF_GLB = 0,      /* one binary .glb: JSON chunk and BIN chunk */
    TRN_GLTF_SEPARATE = 1, /* .gltf JSON with the buffer in a .bin beside it (same stem) */
    TRN_GLTF_EMBEDDED = 2, /* .gltf JSON with the buffer as a base64 data: URI */
} trn_gltf_container;

/* Write scene as glTF 2.0 (docs/meshes.md "glTF layout"): per role section one primitive
 * with a material per role (baseColorFactor = trn_roles_color in linear light, named by the
 * role), water bodies as their own meshes and nodes (a translucent blue BLEND material), each
 * instance a node referencing its rule's proxy box mesh; with uv_scale TEXCOORD_0, with
 * biome materials or UVs the terrain materials' extras, with a collider its node. Files land
 * atomically through the write set (all or none). Errors: TRN_ERR_INVALID_ARGUMENT (no mesh, a
 * level out of range, an instance naming a rule beyond the palette), TRN_ERR_LIMIT (a merged mesh
 * over 2^32 - 1 vertices or a buffer over 4 GiB), TRN_ERR_IO naming the file, TRN_ERR_NO_MEMORY;
 * nothing is written on failure. report may be NULL. */
trn_status trn_gltf_write(const char *path, trn_gltf_container container,
                          const trn_mesh_scene *scene, trn_mesh_write_report *report,
                          trn_error *err);

/* Write scene as Wavefront OBJ with a material library: path and its .mtl beside it (same
 * stem), "mtllib", "v", "vn", "f v//vn" with "usemtl ROLE" per section and Kd from
 * trn_roles_color (linear), water bodies as groups "water_ID" with a "water" material.
 * With uv_scale a "vt" per terrain vertex and faces "f v/vt/vn"; a collider last as object
 * "collider" ("f v"). Instances are not written (OBJ has no instancing). Errors as
 * trn_gltf_write, and TRN_ERR_INVALID_ARGUMENT for a uv_scale not finite and >= 0 or a biome
 * material without a name or a finite texture_scale > 0. */
trn_status trn_obj_write(const char *path, const trn_mesh_scene *scene,
                         trn_mesh_write_report *report, trn_error *err);

/* An sRGB byte as linear light (the glTF baseColorFactor and MTL Kd of a role colour). */
double trn_srgb_to_linear(uint8_t value);

#ifdef __cplusplus
}
#endif

#endif
