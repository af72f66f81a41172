/* Scatter palettes, material sets, placement of instances and automatic surface roles. */
#ifndef TERRANE_PALETTE_H
#define TERRANE_PALETTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Surface roles and material sets (terrain_material_set, format_version 1).
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_surface_role {
    TRN_ROLE_GROUND = 0,
    TRN_ROLE_GRASS = 1,
    TRN_ROLE_ROCK = 2,
    TRN_ROLE_CLIFF = 3,
    TRN_ROLE_SEDIMENT = 4,
    TRN_ROLE_SAND = 5,
    TRN_ROLE_SNOW = 6,
    TRN_ROLE_WET_GROUND = 7,
    TRN_ROLE_UNDERWATER = 8,
    TRN_ROLE_COUNT,
    TRN_ROLE_NONE = 255 /* no winning role: the biome tint */
} trn_surface_role;

/* "ground", "grass", ..., "underwater"; parse returns false for anything else. */
const char *trn_surface_role_name(trn_surface_role role);
bool trn_surface_role_parse(const char *name, trn_surface_role *role);

#define TRN_MATERIAL_SET_FORMAT_VERSION 1u

/* How a renderer draws the bound Materials as one surface (a material set's "mapping",
 * docs/palettes.md "Mapped materials"): the layers packed into texture arrays, triplanar
 * projection on steep faces, height maps biasing the layer weights, macro variation of the
 * albedo. None of it changes heights, roles or collision. */
typedef struct trn_material_mapping {
    bool present;               /* the set has a "mapping" object; the rest are its values */
    bool texture_arrays;        /* pack the layers into the five texture arrays (default true) */
    bool triplanar;             /* project steep faces along three axes (default true) */
    double triplanar_slope;     /* degrees from horizontal where it starts, 0..90 (default 35) */
    double triplanar_sharpness; /* exponent of the axis weights, 1..64 (default 4) */
    bool height_blend;          /* height maps bias neighbouring layers' weights (default true) */
    double height_blend_contrast; /* transition width in normalised height, (0, 1] (default 0.2) */
    double macro_variation;     /* albedo modulation strength 0..1 (default 0: none) */
    double macro_scale;         /* its repetitions per world unit, > 0 (default 0.01) */
} trn_material_mapping;

/* The five packed arrays of the mapped path, in order: "albedo", "normal", "orm_height" (ambient
 * occlusion, roughness, metallic, height), "detail_normal", "emissive". */
#define TRN_MAPPING_ARRAY_COUNT 5
const char *trn_mapping_array_name(int index);

/* The defaults a "mapping": {} gets (present true). */
void trn_material_mapping_default(trn_material_mapping *m);

typedef struct trn_material_set {
    char *name;
    char *roles[TRN_ROLE_COUNT]; /* material asset id per role ("asset://..."), NULL = unbound */
    trn_material_mapping mapping; /* present false: the set says nothing about mapping */
} trn_material_set;

void trn_material_set_dispose(trn_material_set *set);
/* Parse a terrain_material_set document: errors carry path, line/column and JSON path
 * ("roles.rock: expected an asset:// id, found 3"). Unknown roles and keys are refused. */
trn_status trn_material_set_parse(const char *text, size_t size, const char *path,
                                  trn_material_set *out, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Material documents (format_version 1): what a Material asset a set or a biome names looks
 * like: its image maps and their texture scale (docs/palettes.md "Material documents").
 * ------------------------------------------------------------------------------------------- */

#define TRN_MATERIAL_FORMAT_VERSION 1u

/* A Material's image maps, in the order documents, payloads and exports list them. */
typedef enum trn_material_map {
    TRN_MAP_ALBEDO = 0, /* base colour (sRGB) */
    TRN_MAP_NORMAL,     /* tangent-space normal, OpenGL convention (+Y up) */
    TRN_MAP_ROUGHNESS,  /* perceptual roughness in the red channel (grey) */
    TRN_MAP_HEIGHT,     /* height for height blending (grey, white high) */
    TRN_MAP_EMISSIVE,   /* emitted colour (sRGB), added to the lit colour */
    TRN_MAP_COUNT
} trn_material_map;

/* "albedo", "normal", "roughness", "height", "emissive"; NULL past the end. */
const char *trn_material_map_name(int map);

typedef struct trn_material {
    char *name;
    char *maps[TRN_MAP_COUNT]; /* each map's PNG path as written, relative to the document's
                                  folder; NULL: the Material has no such map */
    double texture_scale;      /* repetitions per world unit multiplier, > 0 (default 1) */
    char *paths[TRN_MAP_COUNT]; /* set by trn_material_resolve: each map's real path */
    char *source;               /* set by trn_material_resolve: the document's path */
    char *id;                   /* set by trn_material_resolve: the asset id */
    char *project;              /* set by trn_material_resolve: the project folder's real path */
} trn_material;

void trn_material_dispose(trn_material *material);
/* Parse a Material document ({"format_version": 1, "name", "maps": {"albedo": "soil.png",
 * ...}, "texture_scale"}). A map is a relative path to a .png file without "." or ".." parts
 * or backslashes; unknown keys and maps are refused with a suggestion. Errors carry path,
 * line/column and the JSON path ("maps.albedo: ..."). */
trn_status trn_material_parse(const char *text, size_t size, const char *path, trn_material *out,
                              trn_error *err);
/* Resolve a Material asset id ("asset://materials/soil") in a project folder: the manifest
 * PROJECT/materials/soil.asset.json of type "Material" names the document beside it; the
 * document is parsed and each map must be a regular file which, symbolic links resolved, lies
 * inside the project (its real path into out->paths). Errors: TRN_ERR_NOT_FOUND without a
 * manifest (no_manifest is then set true when not NULL, so callers can fall back) or for a
 * missing map (at the map's line and column), TRN_ERR_FORMAT for a manifest of another type,
 * TRN_ERR_INVALID_ARGUMENT for a map outside the project. */
trn_status trn_material_resolve(const char *project_root, const char *asset_id, trn_material *out,
                                bool *no_manifest, trn_error *err);
/* The same from a recipe (or any document) at recipe_path: the project is the nearest folder at
 * or above its folder holding the id's manifest, as trn_palette_resolve finds a palette's. */
trn_status trn_material_find(const char *recipe_path, const char *asset_id, trn_material *out,
                             bool *no_manifest, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Palettes (terrain_palette, format_version 3).
 * ------------------------------------------------------------------------------------------- */

#define TRN_PALETTE_FORMAT_VERSION 3u
#define TRN_PALETTE_ID_MAX 64u /* bytes of a placement id, terminator included */

typedef enum trn_scatter_category {
    TRN_CATEGORY_PROP = 0, /* default */
    TRN_CATEGORY_GRASS = 1,
    TRN_CATEGORY_TREE = 2,
    TRN_CATEGORY_ROCK = 3,
} trn_scatter_category;

typedef enum trn_scatter_collision {
    TRN_COLLISION_STATIC = 0, /* default; prefabs only */
    TRN_COLLISION_NONE = 1,   /* required for model rules */
    TRN_COLLISION_TRIGGER = 2,
} trn_scatter_collision;

/* A closed range; has = false means the filter is off (the defaults: slope [0, 90], moisture
 * [0, 1], water_distance unbounded). */
typedef struct trn_scatter_band {
    bool has;
    double lo, hi;
} trn_scatter_band;

typedef struct trn_scatter_rule {
    char id[TRN_PALETTE_ID_MAX]; /* letters, digits, '_', '-' */
    char *model;                 /* exactly one of model / prefab (owned) */
    char *prefab;
    trn_scatter_category category;
    double density;           /* expected instances per square unit before filters, >= 0 */
    double candidate_spacing; /* the lattice's step; absent: half the positive spacing, else 0.25 */
    double spacing;           /* minimum separation within the rule, >= 0 (default 0) */
    double scale[2];          /* default [1, 1] */
    double yaw[2];            /* degrees, default [0, 360] */
    char **biomes;            /* optional biome names (owned); biome_count 0 = any */
    uint32_t biome_count;
    trn_scatter_band slope, moisture, water_distance;
    double cluster_size;     /* default 16 */
    double cluster_strength; /* 0..1, default 0 */
    trn_scatter_collision collision;
} trn_scatter_rule;

typedef struct trn_palette {
    char *name;
    char *material_set; /* asset:// id or NULL */
    double art_density, grass_density, tree_density, rock_density; /* multipliers, default 1 */
    trn_scatter_rule *rules; /* in document order */
    uint32_t rule_count;
} trn_palette;

void trn_palette_dispose(trn_palette *palette);
/* Parse a terrain_palette document (format_version 3; 1 and 2 are refused with the migration
 * advice, "lod" is refused in version 3). A palette needs a material set or a placement; a rule's
 * density x art_density x its category's multiplier above one candidate per lattice square
 * (density x candidate_spacing^2 > 1) is refused, asking to reduce density or candidate_spacing.
 * Errors carry path, line/column and the JSON path ("placements.pine.collision"). */
trn_status trn_palette_parse(const char *text, size_t size, const char *path, trn_palette *out,
                             trn_error *err);
/* The density a rule scatters with: density x art_density x its category's multiplier. */
double trn_palette_rule_density(const trn_palette *palette, const trn_scatter_rule *rule);

/* Resolve a recipe's palette field ("asset://terrain/palettes/meadow") through the project's
 * asset manifests: the project is the nearest folder at or above the recipe's folder (the
 * current folder when recipe_path is NULL or has no folder) holding the id's manifest,
 * REL.asset.json, whose settings.content_type (or older "type") is "terrain_palette" and whose
 * "source" names the document beside it, inside the project. When set_out is not NULL and the
 * palette names a material_set, that terrain_material_set is resolved in the same project
 * (set_out stays zeroed otherwise). Errors name the id: TRN_ERR_NOT_FOUND without a manifest,
 * TRN_ERR_FORMAT for another content type, and the documents' own parse errors. On failure
 * both outputs are empty. */
trn_status trn_palette_resolve(const char *recipe_path, const char *asset_id, trn_palette *out,
                               trn_material_set *set_out, trn_error *err);

/* Resolve a terrain_material_set by asset:// id the same way (for a palette written inline in
 * the recipe that names one). Errors as trn_palette_resolve, naming "material_set". */
trn_status trn_material_set_resolve(const char *recipe_path, const char *asset_id,
                                    trn_material_set *out, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Instances.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_instance {
    uint32_t rule;       /* index into the palette's rules */
    int64_t cx, cz;      /* the candidate's lattice coordinates: identity with the rule id */
    double x, y, z;      /* terrain-local position on the surface (terrain-triangle height) */
    double yaw;          /* degrees */
    double scale;
} trn_instance;

typedef struct trn_instances {
    trn_instance *items; /* sorted by rule, then cz, then cx */
    size_t count;
} trn_instances;

void trn_instances_dispose(trn_instances *instances);

#ifdef __cplusplus
}
#endif

#endif
