/* Runtime: cooked terrain payloads (*.terrain.bin) opened, queried and placed in a world. */
#ifndef TERRANE_RUNTIME_H
#define TERRANE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/erosion.h"
#include "terrane/palette.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The runtime only decodes: it never evaluates noise, erosion, water carving or scatter. It
 * links against libterrane_runtime alone (core, the water codec and query, zstd, xxhash). The
 * byte layout of a payload is docs/payload.md. */

#define TRN_PAYLOAD_FORMAT_VERSION 1u

/* ---------------------------------------------------------------------------------------------
 * Opening a payload.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_payload trn_payload;

/* Bounds on what a payload may make the reader allocate. */
typedef struct trn_payload_limits {
    uint64_t max_samples;       /* (cells_x + 1) * (cells_z + 1); default 1 << 30 */
    uint64_t max_instances;     /* scatter instances; default 1 << 26 */
    uint64_t max_section_bytes; /* one section's compressed or raw size; default 1 << 33 */
} trn_payload_limits;

void trn_payload_limits_default(trn_payload_limits *limits);

/* What the header says (every pointer stays valid until the payload is freed). */
typedef struct trn_payload_info {
    uint32_t format_version;
    uint32_t generator_version; /* TRN_GENERATOR_VERSION of the cook */
    const char *generator;      /* "terrane 0.1.0" */
    const char *terrain_id;     /* "asset://terrain/landscape", or the recipe's file name */
    uint64_t cache_key;         /* the recipe's trn_recipe_cache_key */
    uint64_t palette_digest;    /* trn_cook_palette_digest, 0 without a palette */
    uint64_t material_digest;   /* trn_cook_material_set_digest, 0 without a material set */
    uint32_t cells_x, cells_z;
    double size_x, size_z, sea_level;
    uint32_t section_count;
} trn_payload_info;

/* Read only the header and section table of path (magic, version, sizes, header checksum;
 * sections are neither read nor checked): what `terrane cook` compares to tell a payload is
 * up to date. Strings in *info point into *storage, a malloc'd block the caller frees.
 * Errors as trn_payload_open's. */
trn_status trn_payload_peek(const char *path, trn_payload_info *info, char **storage,
                            trn_error *err);

/* Open and decode a whole payload: every section's checksums are verified, required sections
 * ("HGHT" heights, "BIOM" biomes, "RCPE" recipe) must be present, unknown optional ones are
 * skipped. A missing file is TRN_ERR_NOT_FOUND; a short file TRN_ERR_TRUNCATED; a bad magic,
 * checksum or field TRN_ERR_FORMAT; a newer format TRN_ERR_VERSION; a size over limits
 * TRN_ERR_LIMIT; bytes after the last section TRN_ERR_TRAILING_DATA; an unknown section flagged
 * required TRN_ERR_UNSUPPORTED (docs/payload.md, "Errors"). err names the file, the byte offset
 * and, in the message, the section
 * ("section 'WATR' (water) at offset 4096: ..."). limits NULL = defaults. On failure *out is
 * NULL. The payload is immutable once open: every query below is thread-safe and allocates
 * nothing. */
trn_status trn_payload_open(const char *path, const trn_payload_limits *limits, trn_payload **out,
                            trn_error *err);
/* The same from bytes in memory (copied as needed; data may be freed after). name is used in
 * messages (NULL: "payload"). */
trn_status trn_payload_open_memory(const void *data, size_t size, const char *name,
                                   const trn_payload_limits *limits, trn_payload **out,
                                   trn_error *err);
void trn_payload_free(trn_payload *payload); /* NULL is a no-op */

void trn_payload_get_info(const trn_payload *payload, trn_payload_info *info);

/* One entry of the section table. */
typedef struct trn_payload_section {
    char id[5];    /* four ASCII letters: "HGHT", "BIOM", "EXCL", "WATR", "SCTR", "ROLE", ... */
    bool required; /* a reader that does not know it must refuse the payload */
    uint64_t offset, compressed_size, raw_size;
    uint64_t raw_hash, compressed_hash; /* XXH64, seed 0 */
} trn_payload_section;

/* Section index < section_count; false otherwise. */
bool trn_payload_section_at(const trn_payload *payload, uint32_t index, trn_payload_section *out);
/* "heights", "biomes", ... for a known section id, NULL for an unknown one. */
const char *trn_payload_section_name(const char id[4]);

/* The decoded data (owned by the payload, valid until it is freed). */
const trn_field *trn_payload_field(const trn_payload *payload); /* heights */
const uint8_t *trn_payload_biomes(const trn_payload *payload);  /* label per sample */
uint32_t trn_payload_biome_count(const trn_payload *payload);
/* Biome name and colour (RGBA 0..1) of a label; NULL / false past the table. */
const char *trn_payload_biome_name(const trn_payload *payload, uint32_t label);
bool trn_payload_biome_color(const trn_payload *payload, uint32_t label, float rgba[4]);
/* The recipe biome's material asset id (its "material"), NULL when it names none, for payloads
 * cooked before materials were recorded, or past the table. */
const char *trn_payload_biome_material(const trn_payload *payload, uint32_t label);
/* The recipe biome's texture_scale (> 0; 1 for payloads cooked before it was recorded); NaN
 * past the table. */
double trn_payload_biome_texture_scale(const trn_payload *payload, uint32_t label);
const uint8_t *trn_payload_exclusion(const trn_payload *payload); /* NULL when none */
const uint8_t *trn_payload_roles(const trn_payload *payload);     /* NULL when none */
/* The material set bound to the roles (name and per-role material ids, NULL unbound), NULL
 * when the payload has none. */
const trn_material_set *trn_payload_material_set(const trn_payload *payload);
/* The material set's mapping (texture arrays, triplanar, height blending, macro variation:
 * docs/palettes.md "Mapped materials"), NULL when the set gave none or there is no set. */
const trn_material_mapping *trn_payload_mapping(const trn_payload *payload);
/* The texture layers a mapped renderer packs into its arrays: every distinct Material id, the
 * role bindings in role order first, then the biome materials in biome order. layer_material
 * is NULL past the end. layer_of_sample and layer_at give a sample's layer (its biome's
 * material, else its role's binding) or -1 (the biome tint); layer_at takes the nearest
 * sample, -1 outside the grid. */
uint32_t trn_payload_layer_count(const trn_payload *payload);
const char *trn_payload_layer_material(const trn_payload *payload, uint32_t layer);
/* Layer layer's Material document as cooked (section MATD, docs/payload.md): true with its
 * texture scale and each map's path relative to the project ("" for a map it has not), in
 * trn_material_map order; false (scale 1, every map "") for a layer without a document. The
 * strings belong to the payload. */
bool trn_payload_layer_maps(const trn_payload *payload, uint32_t layer, double *texture_scale,
                            const char *maps[TRN_MAP_COUNT]);
int trn_payload_layer_of_sample(const trn_payload *payload, size_t sample);
int trn_payload_layer_at(const trn_payload *payload, double x, double z);
const trn_water *trn_payload_water(const trn_payload *payload); /* NULL without water */
/* The erosion nodes' transport ledgers of the generation the payload was cooked from (graph
 * document order; 0 without erosion or for payloads cooked before ledgers were kept): the node
 * id of ledger index (NULL past the end) and, when out is not NULL, its totals. */
uint32_t trn_payload_ledger_count(const trn_payload *payload);
const char *trn_payload_ledger_at(const trn_payload *payload, uint32_t index,
                                  trn_erosion_ledger *out);
/* The canonical recipe JSON the payload was cooked from (the edit checkpoint), NUL-ended. */
const char *trn_payload_recipe_json(const trn_payload *payload, size_t *size);

/* A scatter rule as the runtime needs it. */
typedef struct trn_payload_rule {
    const char *id;
    const char *model; /* exactly one of model / prefab is non-NULL */
    const char *prefab;
    trn_scatter_collision collision;
    trn_scatter_category category;
} trn_payload_rule;

uint32_t trn_payload_rule_count(const trn_payload *payload);
bool trn_payload_rule_at(const trn_payload *payload, uint32_t index, trn_payload_rule *out);
/* Instances sorted by rule, then cz, then cx (terrain-local positions). */
const trn_instance *trn_payload_instances(const trn_payload *payload, size_t *count);

/* ---------------------------------------------------------------------------------------------
 * Environment3D render budgets (docs/payload.md "Render budgets"): what of a cooked terrain a
 * renderer keeps on the GPU, and why it falls back to ordinary meshes or materials.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_environment {
    double terrain_lod_cache_mb;       /* reduced-mesh budget, MiB (default 64; 0: no render LOD) */
    uint32_t terrain_lod_prepare_jobs; /* preparation jobs per presentation (default 2; 0: paused) */
    double terrain_gpu_cache_mb;       /* field textures and patches, MiB (default 128; 0: meshes) */
    uint32_t terrain_texture_max_size; /* array layer size cap, power of two 64..8192 (1024) */
    double terrain_texture_cache_mb;   /* material arrays, MiB (default 128; 0: no arrays) */
} trn_environment;

void trn_environment_default(trn_environment *env);
/* TRN_ERR_VALIDATION naming the field: MiB not finite or outside 0..1048576, jobs over 1024, a
 * texture size that is no power of two from 64 to 8192. */
trn_status trn_environment_check(const trn_environment *env, trn_error *err);

/* What the device can do; zeros mean "no limit known". */
typedef struct trn_device_limits {
    uint32_t max_texture_size; /* largest texture side */
    uint32_t max_array_layers; /* layers of one texture array */
    bool no_vertex_textures;   /* vertex shaders cannot sample textures */
    bool no_instancing;        /* no instanced draws */
} trn_device_limits;

typedef struct trn_render_plan {
    bool gpu_patches;          /* shared grid patches over field textures */
    uint64_t gpu_field_bytes;  /* what they need */
    char gpu_fallback[160];    /* why not (empty when gpu_patches) */
    bool texture_arrays;       /* the mapped path's five texture arrays */
    uint32_t texture_size;     /* their layer size (<= terrain_texture_max_size) */
    uint32_t texture_layers;   /* trn_payload_layer_count */
    uint64_t texture_bytes;    /* the five arrays at texture_size, mips included */
    char texture_fallback[160]; /* why not (empty when texture_arrays) */
    bool lod;                  /* reduced meshes fit terrain_lod_cache_mb */
    uint64_t lod_bytes;        /* their estimated payload */
    uint32_t prepare_jobs;     /* terrain_lod_prepare_jobs */
    char lod_note[160];        /* a budget that limits LOD, or empty */
} trn_render_plan;

/* Plan payload's rendering under env (NULL: the defaults) on device (NULL: no limits known).
 * The estimates are documented in docs/payload.md; heights, collision and scatter never depend
 * on them. */
trn_status trn_environment_plan(const trn_payload *payload, const trn_environment *env,
                                const trn_device_limits *device, trn_render_plan *out,
                                trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Terrain-local queries: x and z from 0 to the size, y up (see water.h).
 * ------------------------------------------------------------------------------------------- */

/* Ground height at (x, z) on the terrain triangles, bit for bit trn_field_height_at; NAN
 * outside the grid (x < 0, x > size_x, same for z) or for NaN input. */
double trn_payload_height_at(const trn_payload *payload, double x, double z);
/* Unit normal of the terrain triangle holding (x, z); false outside the grid. */
bool trn_payload_normal_at(const trn_payload *payload, double x, double z, double normal[3]);
/* Biome label of the sample nearest (x, z) (rounding half up), -1 outside the grid. */
int trn_payload_biome_at(const trn_payload *payload, double x, double z);
/* Surface role (trn_surface_role) of the nearest sample, -1 outside the grid or without roles. */
int trn_payload_role_at(const trn_payload *payload, double x, double z);
/* The water column at (x, y, z): trn_water_query on the payload's water and heights. */
bool trn_payload_water_at(const trn_payload *payload, double x, double y, double z,
                          trn_water_sample *out);

/* ---------------------------------------------------------------------------------------------
 * Worlds: placements of payloads, queried in world space.
 * ------------------------------------------------------------------------------------------- */

/* world = translation + rotation * (scale * local), component-wise scale. rotation is a
 * quaternion (x, y, z, w), normalised when placed; scale components must be finite and nonzero:
 * a negative Y flips the terrain's local up. */
typedef struct trn_transform {
    double translation[3];
    double rotation[4];
    double scale[3];
} trn_transform;

void trn_transform_identity(trn_transform *t);

typedef struct trn_world trn_world;

trn_status trn_world_new(trn_world **out, trn_error *err);
void trn_world_free(trn_world *world); /* NULL is a no-op */

/* Add a placement of payload (borrowed: it must outlive the placement) under terrain_id, the
 * stable id of the placement (unique in the world: a duplicate is TRN_ERR_CONFLICT), enabled.
 * transform NULL = identity. A zero, non-finite scale or a zero quaternion is
 * TRN_ERR_INVALID_ARGUMENT. Placements answer in the order they were added. */
trn_status trn_world_place(trn_world *world, const char *terrain_id, const trn_payload *payload,
                           const trn_transform *transform, trn_error *err);
/* Change a placement; TRN_ERR_NOT_FOUND for an unknown id. */
trn_status trn_world_set_transform(trn_world *world, const char *terrain_id,
                                   const trn_transform *transform, trn_error *err);
trn_status trn_world_set_enabled(trn_world *world, const char *terrain_id, bool enabled,
                                 trn_error *err);
/* Terrain3D.surface_blending of one placement (default true): whether a renderer blends its
 * texture layers (height blending, macro variation) or draws each sample's layer alone; two
 * placements of one payload may differ. Nothing else depends on it. */
trn_status trn_world_set_surface_blending(trn_world *world, const char *terrain_id,
                                         bool surface_blending, trn_error *err);
/* Replace a placement's payload (a regenerated terrain): trackers see it on their next update. */
trn_status trn_world_set_payload(trn_world *world, const char *terrain_id,
                                 const trn_payload *payload, trn_error *err);
trn_status trn_world_remove(trn_world *world, const char *terrain_id, trn_error *err);
uint32_t trn_world_count(const trn_world *world);

/* Terrain3D.scatter_exclusions of one placement: the placement keys ("<rule id>/<cx>_<cz>", as
 * terrane scatter prints them) whose instances it leaves out, for decorative batches and
 * colliding prefabs alike. Copied; unique and nonempty (TRN_ERR_INVALID_ARGUMENT naming the
 * index or the repeated key, the old list kept); keys matching nothing are kept and ignored, so
 * a list survives a regenerated payload (trn_world_set_payload keeps it). count 0 clears it.
 * Two placements of one payload keep their own lists. */
trn_status trn_world_set_scatter_exclusions(trn_world *world, const char *terrain_id,
                                            const char *const *keys, size_t count, trn_error *err);
/* The placement's instances after its exclusions: indices into trn_payload_instances, in
 * order, written to indices (up to capacity; NULL only counts) and counted in *kept. More than
 * capacity is TRN_ERR_LIMIT with *kept the number needed. */
trn_status trn_world_instances(const trn_world *world, const char *terrain_id, size_t *indices,
                               size_t capacity, size_t *kept, trn_error *err);

/* A water sample in world space (the fields of the Lua WaterSample). Strings point into the
 * world's placement and the payload: valid until that placement changes or goes. */
typedef struct trn_world_water_sample {
    const char *terrain_id;
    const char *body_id;
    trn_water_kind kind;
    double surface[3];       /* the surface point, projected along terrain-local up */
    double normal[3];        /* unit: the local normal by the inverse transpose */
    double depth;            /* bed to surface, world units along terrain-local up */
    double column_up[3];     /* unit: terrain-local +Y placed (flipped with a negative Y scale) */
    double flow_velocity[3]; /* world units per second: the local current scaled and rotated */
    bool underwater;         /* bed <= local y < surface */
} trn_world_water_sample;

/* The water at a world position. terrain_id NULL: every enabled placement, the first (in
 * placement order) with a wet column at the point answers; otherwise only that placement,
 * when enabled. Disabled placements never answer. False (and *out zeroed) when none does. */
bool trn_world_water_sample_at(const trn_world *world, const double position[3],
                               const char *terrain_id, trn_world_water_sample *out);

/* The ground under or over a world position: the point projected along terrain-local up onto
 * the surface, by the same placement rule as water. */
typedef struct trn_world_ground_sample {
    const char *terrain_id;
    double point[3];  /* world surface point */
    double normal[3]; /* unit world normal */
    int biome;        /* label, -1 none */
    const char *biome_name;
    int role; /* trn_surface_role, -1 none */
    const char *biome_material; /* the biome's material asset id, NULL when none */
    double texture_scale;       /* the biome's texture scale (1 without a biome) */
    int layer;                  /* the sample's texture layer (trn_payload_layer_at), -1 none */
    const char *material;       /* that layer's Material id, NULL with none */
    bool surface_blending;      /* the placement's (trn_world_set_surface_blending) */
} trn_world_ground_sample;

bool trn_world_ground_at(const trn_world *world, const double position[3], const char *terrain_id,
                         trn_world_ground_sample *out);

/* ---------------------------------------------------------------------------------------------
 * Immersion tracking of one point.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_water_phase {
    TRN_WATER_ENTER = 0,
    TRN_WATER_EXIT = 1,
    TRN_WATER_STAY = 2,
} trn_water_phase;

const char *trn_water_phase_name(trn_water_phase phase); /* "enter", "exit", "stay" */

typedef struct trn_water_event {
    trn_water_phase phase;
    trn_world_water_sample sample; /* exit: the last immersed sample */
} trn_water_event;

typedef struct trn_water_tracker trn_water_tracker;

/* A tracker with an optional terrain filter (copied; NULL: any enabled placement). */
trn_status trn_water_tracker_new(const char *terrain_id, trn_water_tracker **out, trn_error *err);
void trn_water_tracker_free(trn_water_tracker *tracker); /* NULL is a no-op */

/* Sample the point (immersed = a sample with underwater true) and return how many events were
 * written to events (at most 2): not immersed -> immersed: enter; the same body (placement id,
 * body id, world) again: stay; another body: exit of the old then enter of the new; immersed ->
 * not: exit once; not -> not: none. Event strings stay valid until the next update, reset or
 * free of this tracker. */
uint32_t trn_water_tracker_update(trn_water_tracker *tracker, const trn_world *world,
                                  const double position[3], trn_water_event events[2]);
/* The immersed sample kept by the latest update: true and *out, or false. */
bool trn_water_tracker_current(const trn_water_tracker *tracker, trn_world_water_sample *out);
/* Forget the current sample without an event. */
void trn_water_tracker_reset(trn_water_tracker *tracker);

#ifdef __cplusplus
}
#endif

#endif
