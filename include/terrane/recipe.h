/* Terrain recipes: the versioned JSON document that describes a procedural terrain. */
#ifndef TERRANE_RECIPE_H
#define TERRANE_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever generation output for the same canonical recipe changes; folded into the
 * cache key. 2: landform noise values spread over [0, 1] (fbm by its standard deviation,
 * ridged by its percentiles) instead of bunching around 0.5. */
#define TRN_GENERATOR_VERSION 2u
/* The asset document's format_version this build reads and writes. */
#define TRN_RECIPE_FORMAT_VERSION 1u

/* ---------------------------------------------------------------------------------------------
 * Sub-seeds. Every random stream of a world is keyed by a channel whose sub-seed is a hash of
 * the channel's NAME with the world seed (XXH64(name bytes, seed)), never its position in a
 * list, so adding a channel changes no other value.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_seed_channel {
    TRN_CHANNEL_LANDFORM = 0,
    TRN_CHANNEL_LANDFORM_WARP,
    TRN_CHANNEL_EROSION,
    TRN_CHANNEL_HYDROLOGY,
    TRN_CHANNEL_BIOME_PLACEMENT,
    TRN_CHANNEL_SCATTER,
    TRN_CHANNEL_COUNT
} trn_seed_channel;

/* "landform", "landform_warp", "erosion", "hydrology", "biome_placement", "scatter";
 * "unknown" for a value outside the enum. Static strings. */
const char *trn_seed_channel_name(trn_seed_channel channel);
/* Sub-seed of a named channel (any name, also ones this build does not know):
 * XXH64(the name's bytes without its NUL, strlen(name), seed = world_seed), xxHash's 64-bit
 * hash with the world seed as its seed; NULL hashes as "". Pinned in tests/test_noise.c and
 * docs/recipes.md ("Sub-seeds"). Thread-safe. */
uint64_t trn_subseed(uint64_t world_seed, const char *channel_name);
uint64_t trn_subseed_of(uint64_t world_seed, trn_seed_channel channel);

/* ---------------------------------------------------------------------------------------------
 * The recipe as plain data. Strings are owned, NUL-terminated UTF-8. Arrays keep the
 * document's order (landforms and biomes are keyed by name in JSON: canonical form sorts them).
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_profile { TRN_PROFILE_FBM = 0, TRN_PROFILE_RIDGED = 1 } trn_profile;

/* The shape of the ground. Heights: base_height + height_variation * v, v in [0, 1]. */
typedef struct trn_landform {
    char *name;
    trn_profile profile;      /* default fbm */
    double base_height;       /* default 0 */
    double height_variation;  /* default 100, >= 0 */
    double feature_size;      /* default 256, > 0: world units of the largest octave's period */
    double roughness;         /* default 0.5, in [0, 1]: amplitude gain per octave */
    uint32_t octaves;         /* default 5, 1..16 */
    double warp_amplitude;    /* default 0, >= 0 (0 = no warp, exactly) */
    double warp_feature_size; /* default 128, > 0 */
    double stretch;           /* default 1, > 0: elongation along heading */
    double heading;           /* default 0, degrees from +X toward +Z */
    /* NULL: the noise as it is. Else landscape evolution run on it: the Stream Power graph
     * node's parameters as a canonical JSON object ("{}" = its defaults; docs/recipes.md). */
    char *evolution;
} trn_landform;

/* How ground looks. */
typedef struct trn_biome {
    char *name;
    float color[4];       /* RGBA 0..1 */
    char *material;       /* asset id, NULL when absent */
    double texture_scale; /* default 1, > 0 */
    char *landform;       /* NULL = the recipe's default landform */
    bool allow_snow;      /* default true */
    /* "groundmodel": the BeamNG ground model of the biome's terrain material, in its standard
     * spelling ("ROCK"); "" = chosen from the biome's name (docs/beamng.md). */
    char groundmodel[32];
} trn_biome;

typedef enum trn_substrate {
    TRN_SUBSTRATE_SOIL = 0,
    TRN_SUBSTRATE_ROCK = 1,
    TRN_SUBSTRATE_SAND = 2,
    TRN_SUBSTRATE_WET = 3,
    TRN_SUBSTRATE_COUNT
} trn_substrate;

/* "soil", "rock", "sand", "wet". */
const char *trn_substrate_name(trn_substrate substrate);

/* A [min, max] band; an unset band is unconstrained. Containment is min <= v <= max. */
typedef struct trn_band {
    bool set;
    double min, max;
} trn_band;

typedef struct trn_rule {
    char *id;
    char *biome;
    char *layer;     /* NULL = no layer (layers arrive with the layers issue) */
    double priority; /* default 0 */
    double blend;    /* default 0, >= 0: world units of the strength ramp above elevation.min */
    trn_band elevation, slope, moisture, water_distance;
    uint32_t substrate_mask; /* bit (1 << trn_substrate); 0 = unconstrained */
} trn_rule;

/* ---------------------------------------------------------------------------------------------
 * Layers. recipe.layers is an array of {"id", "name", "group", "enabled"}; absent means the five
 * defaults below. Groups: generation (exactly one layer, id "generation", cannot be removed),
 * biomes, sculpt, protection, exclusions (users may add layers to these four and rename any).
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_layer_group {
    TRN_LAYER_GENERATION = 0,
    TRN_LAYER_BIOMES = 1,
    TRN_LAYER_SCULPT = 2,
    TRN_LAYER_PROTECTION = 3,
    TRN_LAYER_EXCLUSIONS = 4,
    TRN_LAYER_GROUP_COUNT
} trn_layer_group;

/* "generation", "biomes", "sculpt", "protection", "exclusions". */
const char *trn_layer_group_name(trn_layer_group group);

typedef struct trn_layer {
    char *id;   /* stable, unique; the five defaults use their group name as id */
    char *name; /* display name */
    trn_layer_group group;
    bool enabled;
} trn_layer;

/* ---------------------------------------------------------------------------------------------
 * Strokes. Shared parameters once, stamp positions in "points" ([[x, z], ...], terrain-local
 * world units) or a single "center". Consecutive stamps with identical settings share one
 * entry; repeated and overlapping stamps are kept (they change the result).
 *   recipe.edits      : raise, lower, flatten, smooth (sculpt layers), protect (protection layers)
 *   recipe.regions    : region (biome layers): {"type": "region", "biome": NAME, ...}
 *   recipe.exclusions : exclusion (exclusion layers): {"type": "exclusion", "mode":
 *                       "exclude" | "erase", ...}
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_stroke_kind {
    TRN_STROKE_RAISE = 0,
    TRN_STROKE_LOWER,
    TRN_STROKE_FLATTEN,
    TRN_STROKE_SMOOTH,
    TRN_STROKE_PROTECT,
    TRN_STROKE_EXCLUSION,
    TRN_STROKE_REGION,
    TRN_STROKE_KIND_COUNT
} trn_stroke_kind;

/* "raise", "lower", "flatten", "smooth", "protect", "exclusion", "region". */
const char *trn_stroke_kind_name(trn_stroke_kind kind);

/* Brush weight at distance d from a stamp centre: 1 inside (1 - falloff) * radius, then a
 * smoothstep down to 0 at radius, 0 beyond. falloff in [0, 1] (default 0.5). */
double trn_brush_weight(double distance, double radius, double falloff);

typedef struct trn_stroke {
    trn_stroke_kind kind;
    char *layer;          /* layer id; NULL = the first layer of the kind's group */
    double radius;        /* > 0, world units */
    double strength;      /* raise/lower: metres per stamp at weight 1 (default 1);
                             flatten/smooth/region/exclusion: 0..1 blend per stamp (default 1) */
    double falloff;       /* 0..1, default 0.5 */
    double target_height; /* flatten: the captured height */
    char *biome;          /* region: the painted biome */
    bool erase;           /* exclusion: mode "erase" (else "exclude") */
    double *points;       /* point_count (x, z) pairs */
    uint32_t point_count;
    /* protect: the snapshot, tied to the grid it was recorded on. */
    uint32_t grid_cells_x, grid_cells_z;
    uint32_t *sample_index; /* j * (grid_cells_x + 1) + i */
    float *sample_height;   /* absolute heights */
    uint32_t sample_count;
} trn_stroke;

void trn_stroke_dispose(trn_stroke *stroke);

/* The group whose layers hold a kind: raise..smooth sculpt, protect protection, region biomes,
 * exclusion exclusions. */
trn_layer_group trn_stroke_kind_group(trn_stroke_kind kind);

typedef enum trn_sea_level_source {
    TRN_SEA_LEVEL_EXPLICIT = 0, /* the recipe's sea_level */
    TRN_SEA_LEVEL_DERIVED = 1,  /* derived from the default landform (see trn_recipe_sea_level) */
} trn_sea_level_source;

typedef struct trn_recipe {
    double size_x, size_z;     /* "size": [x, z] world units, > 0 */
    uint32_t cells_x, cells_z; /* "resolution": [cells_x, cells_z], >= 1 */
    uint64_t seed;             /* 0 .. 2^63-1 */
    uint32_t chunk_cells;      /* default 32, >= 1 */
    bool has_sea_level;
    double sea_level;
    bool has_snow_line; /* "snow_line": height above which surface roles may turn to snow */
    double snow_line;
    char *default_landform; /* must name a landform */
    trn_landform *landforms;
    uint32_t landform_count;
    char *default_biome; /* must name a biome */
    trn_biome *biomes;
    uint32_t biome_count;
    trn_rule *rules;
    uint32_t rule_count;
    /* Layers (the five defaults when the document has none) and strokes, in document order:
     * every stroke of "regions", then "edits", then "exclusions". has_layers says whether the
     * document spelled its layers out (canonical form omits the default five). */
    trn_layer *layers;
    uint32_t layer_count;
    bool has_layers;
    trn_stroke *strokes;
    uint32_t stroke_count;
    /* Filled by later issues; parsed as JSON and kept as compact canonical JSON text (NULL when
     * absent) so documents round-trip. */
    char *palette_json, *graph_json;
    char *preset_id; /* NULL when absent */
    bool has_preset_version;
    double preset_version;
    /* The folder files the recipe names relative to it resolve against (a Heightfield Input
     * node's path): the recipe file's folder when read by trn_recipe_read, NULL when parsed
     * from memory (then the current directory; trn_recipe_set_base_dir gives one). Never part
     * of the document, its canonical form or its cache key. */
    char *base_dir;
    /* The library's own: graph_json read into a typed graph (with its identity, the part a
     * cache key hashes) when the document is parsed, so a generation reads no JSON text. Used
     * only while graph_json still holds the text it was read from (a recipe whose graph_json is
     * replaced falls back to reading the new text); released by trn_recipe_dispose. Never set
     * it; NULL in a recipe built in code. */
    struct trn_recipe_model *model;
} trn_recipe;

/* Set (a copy of) dir as the recipe's base_dir; NULL clears it. */
trn_status trn_recipe_set_base_dir(trn_recipe *recipe, const char *dir, trn_error *err);
/* Set the folder of the file path as the recipe's base_dir ("." for a bare file name). */
trn_status trn_recipe_set_base_dir_of(trn_recipe *recipe, const char *path, trn_error *err);

/* Release everything a recipe owns and zero it. NULL is a no-op. */
void trn_recipe_dispose(trn_recipe *recipe);

/* Which document a JSON text is. BeamNG's metadata also ends in .terrain.json. */
typedef enum trn_document_kind {
    TRN_DOCUMENT_UNKNOWN = 0,
    TRN_DOCUMENT_RECIPE,          /* a bare recipe object */
    TRN_DOCUMENT_TERRAIN_ASSET,   /* {"format_version", "id", "recipe"} */
    TRN_DOCUMENT_ASSET_MANIFEST,  /* NAME.asset.json: {"type": "Terrain", "importer": ...} */
    TRN_DOCUMENT_BEAMNG_TERRAIN,  /* BeamNG .terrain.json (version, datafile, ...) */
    TRN_DOCUMENT_TERRAIN_PRESET,  /* a terrain_preset source: {"format_version", "name", ...}
                                     (presets.h) */
    TRN_DOCUMENT_TERRAIN_PALETTE, /* a terrain_palette: {"format_version", "name",
                                     "material_set" or "placements", ...} (palette.h) */
    TRN_DOCUMENT_MATERIAL_SET,    /* a terrain_material_set: {"format_version", "name",
                                     "roles"} (palette.h) */
    TRN_DOCUMENT_MATERIAL,        /* a Material: {"format_version", "name", "maps"}
                                     (palette.h) */
} trn_document_kind;

/* Classify by content (keys present), without validating. */
trn_document_kind trn_document_classify(const char *text, size_t size);

/* Check a scene document (NAME.scene.json, {"entities": [...]}): entity ids are unique; a
 * Transform3D's position and scale are three finite numbers (scale none 0) and its rotation a
 * quaternion (x, y, z, w) of four finite numbers, not all 0; every entity's Terrain3D
 * component is an object of known keys holding an asset reference ("asset", a nonempty string) or an inline
 * "recipe" object, not both (neither: a placeholder), a cooked "payload" file name, and optional
 * lod_error_pixels (a finite number >= 0; 0 turns render LOD off), surface_blending (a boolean)
 * and scatter_exclusions (unique nonempty placement keys). Fails with TRN_ERR_JSON (syntax) or
 * TRN_ERR_VALIDATION, err naming file, line and column of the offending value. */
trn_status trn_scene_document_check(const char *text, size_t size, const char *file, trn_error *err);

/* The Terrain asset source an asset reference of the scene at scene_path names: the project is
 * the nearest folder at or above the scene's holding ID.asset.json (asset://ID), a manifest of
 * type "Terrain" whose source exists. TRN_ERR_NOT_FOUND / TRN_ERR_FORMAT otherwise. */
trn_status trn_terrain_asset_resolve(const char *scene_path, const char *asset_id, char *source,
                                     size_t source_size, trn_error *err);

/* trn_scene_document_check, then every Terrain3D "asset" resolved with
 * trn_terrain_asset_resolve from file's folder: one that names no Terrain asset of the project
 * fails at the line and column of its value. One asset may be placed by any number of
 * entities; each placement keeps its own transform. */
trn_status trn_scene_assets_check(const char *text, size_t size, const char *file, trn_error *err);
const char *trn_document_kind_name(trn_document_kind kind);

/* Parse and validate a recipe from a bare recipe object or a Terrain asset document
 * (*kind_out says which; may be NULL). Every error carries the JSON path in the message
 * ("landforms.mountains.octaves: expected a whole number 1..16, found 40") and the line and
 * column of the offending value; unknown keys are errors. path is used in messages. */
trn_status trn_recipe_parse(const char *text, size_t size, const char *path, trn_recipe *recipe,
                            trn_document_kind *kind_out, trn_error *err);
trn_status trn_recipe_read(const char *path, trn_recipe *recipe, trn_document_kind *kind_out,
                           trn_error *err);

/* Validate a recipe built in code (the same checks as parsing, without positions). */
trn_status trn_recipe_validate(const trn_recipe *recipe, trn_error *err);

/* Canonical JSON of the bare recipe: keys sorted where order has no meaning (landforms and
 * biomes by name, object keys), arrays whose order matters kept (rules), fields at their
 * defaults omitted, numbers printed shortest-round-trip. Parsing it gives an equal recipe and
 * printing again gives the same bytes. *text is malloc'd; caller frees. */
trn_status trn_recipe_canonical_json(const trn_recipe *recipe, char **text, size_t *size,
                                     trn_error *err);
/* XXH64 of (TRN_GENERATOR_VERSION, canonical JSON with the graph's identity: no node positions
 * or comments), then, for a graph with Heightfield Input nodes, each one's id and file content
 * (the file resolved against base_dir), so a changed DEM changes the key. */
trn_status trn_recipe_cache_key(const trn_recipe *recipe, uint64_t *key, trn_error *err);

/* Terrain asset source and manifest documents. id is "asset://..." */
trn_status trn_terrain_asset_write(const char *path, const char *id, const trn_recipe *recipe,
                                   trn_error *err);
trn_status trn_terrain_manifest_write(const char *path, const char *source_file, trn_error *err);

/* Sea level used for generation: the explicit value, or derived from the default landform as
 * base_height + 0.25 * height_variation (a quarter of the relief under water). how (may be
 * NULL) receives a one-line explanation. */
double trn_recipe_sea_level(const trn_recipe *recipe, trn_sea_level_source *source, char *how,
                            size_t how_size);

/* The recipe's layers: recipe->layers, or the five defaults (ids and names "generation",
 * "biomes", "sculpt", "protection", "exclusions", enabled, in that order) when layer_count is
 * 0, as in a recipe built in code. *count receives how many. */
const trn_layer *trn_recipe_layers(const trn_recipe *recipe, uint32_t *count);
/* The layer a stroke belongs to (its "layer" id, or the first layer of its kind's group when
 * that is NULL), or NULL when there is none (the recipe does not validate). */
const trn_layer *trn_recipe_stroke_layer(const trn_recipe *recipe, const trn_stroke *stroke);
/* Whether a rule is evaluated: its biome layer (the one it names, else the first biomes layer,
 * as for a region naming none) is enabled. */
bool trn_recipe_rule_active(const trn_recipe *recipe, const trn_rule *rule);

/* Index of a named landform / biome, or -1. */
int trn_recipe_find_landform(const trn_recipe *recipe, const char *name);
int trn_recipe_find_biome(const trn_recipe *recipe, const char *name);

#ifdef __cplusplus
}
#endif

#endif
