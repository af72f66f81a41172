/* BeamNG levels: .terrain.json, TerrainBlock, terrain materials, import, create, export, validate.
 */
#ifndef TERRANE_BEAMNG_LEVEL_H
#define TERRANE_BEAMNG_LEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/beamng.h"
#include "terrane/core.h"
#include "terrane/image.h"
#include "terrane/io.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sizes the World Editor accepts for imported and created terrains. */
#define TRN_BEAMNG_MIN_RESOLUTION 128u
#define TRN_BEAMNG_MAX_RESOLUTION 8192u

/* The engine's binaryFormat string, written verbatim into every .terrain.json. */
#define TRN_TERRAIN_JSON_BINARY_FORMAT                                                             \
    "version(char), size(unsigned int), heightMap(heightMapSize * heightMapItemSize), "            \
    "layerMap(layerMapSize * layerMapItemSize), layerTextureMap(layerMapSize * "                   \
    "layerMapItemSize), materialNames"

/* ---------------------------------------------------------------------------------------------
 * Findings: what validate and the .terrain.json comparison report.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_severity {
    TRN_SEVERITY_INFO = 0,
    TRN_SEVERITY_WARNING = 1, /* the level loads, but something is off */
    TRN_SEVERITY_ERROR = 2,   /* the level will not load, or shows the warning material */
} trn_severity;

/* Stable lower-case name ("info", "warning", "error"). */
const char *trn_severity_name(trn_severity severity);

typedef struct trn_finding {
    trn_severity severity;
    char check[48];    /* stable id such as "terrain-file-missing" (listed in validate.c) */
    char message[768]; /* what is wrong, naming the object, field and values */
    char file[1024];   /* the file it is about ("" when none) */
    int64_t offset;    /* byte offset in file, -1 when not tied to a byte */
    int line;          /* 1-based line in file, 0 when not known */
    int column;        /* 1-based column (bytes) in that line, 0 when not known; JSON syntax
                          errors have one */
    char fix[512];     /* how to fix it */
} trn_finding;

typedef struct trn_findings {
    trn_finding *items;
    size_t count, capacity;
} trn_findings;

/* Release the list and zero it. NULL is a no-op. */
void trn_findings_dispose(trn_findings *findings);
/* Number of findings of at least the given severity. */
size_t trn_findings_count(const trn_findings *findings, trn_severity at_least);
/* The first finding with this check id, or NULL. The pointer lives until the list changes. */
const trn_finding *trn_findings_find(const trn_findings *findings, const char *check);
/* Append a finding (used by validate; public so callers can merge their own checks).
 * file may be NULL. Returns TRN_ERR_NO_MEMORY when the list cannot grow. */
trn_status trn_findings_add(trn_findings *findings, trn_severity severity, const char *check,
                            const char *file, int64_t offset, const char *fix, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

/* ---------------------------------------------------------------------------------------------
 * .terrain.json: the metadata file the engine writes beside every .ter.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_terrain_json {
    uint32_t version;
    char *datafile;        /* game path of the .ter, "/levels/NAME/theTerrain.ter" */
    char *heightmap_image; /* game path of the heightmap PNG */
    uint32_t size;
    char *binary_format;
    uint64_t height_map_size;      /* size*size */
    uint32_t height_map_item_size; /* 2 */
    uint64_t layer_map_size;       /* size*size */
    uint32_t layer_map_item_size;  /* 1 */
    char **materials;
    uint32_t material_count;
} trn_terrain_json;

/* Fill *tj from a .ter (version, size, map sizes, materials); datafile and heightmap_image are
 * copied (NULL = ""). tj is overwritten; dispose it afterwards. */
trn_status trn_terrain_json_from_ter(const trn_ter *ter, const char *datafile,
                                     const char *heightmap_image, trn_terrain_json *tj,
                                     trn_error *err);
/* The document exactly as the engine lays it out (fields in the engine's order, 2-space indent,
 * trailing newline). *text is malloc'd, NUL-terminated; caller frees. */
trn_status trn_terrain_json_serialize(const trn_terrain_json *tj, char **text, size_t *text_size,
                                      trn_error *err);
/* Write atomically. */
trn_status trn_terrain_json_write(const char *path, const trn_terrain_json *tj, trn_error *err);
/* Parse. JSON syntax errors carry line and column; schema errors name the JSON path
 * ("materials[2]: expected a string, found a number"). path is only for messages. */
trn_status trn_terrain_json_parse(const char *text, size_t text_size, const char *path,
                                  trn_terrain_json *tj, trn_error *err);
trn_status trn_terrain_json_read(const char *path, trn_terrain_json *tj, trn_error *err);
/* Free the strings and zero it. NULL is a no-op. */
void trn_terrain_json_dispose(trn_terrain_json *tj);

/* Append one finding (check "terrain-json-mismatch", severity warning: the engine loads the .ter
 * and rewrites the .json on save) per disagreement between tj and ter: version, size, map sizes
 * and item sizes, binaryFormat, material count, each material name by position, and the
 * datafile. expected_datafile is the game path the .ter was found under (the TerrainBlock's
 * terrainFile); NULL compares only the file name of datafile with ter_path's. json_path and
 * ter_path are used in messages (may be NULL). Returns the number of disagreements found via
 * *mismatches (may be NULL); fails only when out of memory. */
trn_status trn_terrain_json_compare(const trn_terrain_json *tj, const char *json_path,
                                    const trn_ter *ter, const char *ter_path,
                                    const char *expected_datafile, trn_findings *findings,
                                    size_t *mismatches, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * TerrainBlock in main/items.level.json (NDJSON: one JSON object per line).
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_terrain_block {
    char *name;
    char *terrain_file;         /* game path, "/levels/NAME/theTerrain.ter" */
    char *material_texture_set; /* NULL when absent (the terrain then uses v1 materials) */
    double square_size;         /* metres per sample step */
    double max_height;          /* metres = stored * maxHeight / 65536 */
    double screen_error;
    bool cast_shadows;
    double position[3];
    double rotation_matrix[9];
    /* The World Editor's bookkeeping: "persistentId" (a UUID) and "__parent" (the name of the
     * SimGroup holding the block). NULL when absent. Read from a line; written only when put
     * adds a new line (a replaced line keeps its own, whatever these say). */
    char *persistent_id;
    char *parent;
    /* Where a block was read from (reading only; NULL/0 otherwise). */
    char *source_file;
    int source_line;
} trn_terrain_block;

/* Engine-style defaults for a size x size terrain: squareSize 1, maxHeight 2048, screenError
 * 16, castShadows true, identity rotation, position centring the terrain
 * (-size*squareSize/2 on x and y, z 0). Copies the strings (texture_set may be NULL). */
trn_status trn_terrain_block_init(trn_terrain_block *tb, const char *name, const char *terrain_file,
                                  const char *texture_set, uint32_t size, trn_error *err);
/* Set position to centre a size x size terrain at the current square_size. */
void trn_terrain_block_center(trn_terrain_block *tb, uint32_t size);
void trn_terrain_block_dispose(trn_terrain_block *tb);
void trn_terrain_blocks_free(trn_terrain_block *blocks, size_t count);

/* All TerrainBlocks of one items.level.json. The file is NDJSON and the engine reads it line by
 * line, so one bad line spoils only itself. A bad line is one that is not valid JSON, is not an
 * object, or is a TerrainBlock with a field of the wrong type; its block is left out.
 * - problems non-NULL: each bad line is appended to it as a finding (check "level-items-invalid",
 *   severity error, file = items_path, the line, the fix) and reading goes on. A syntax error has
 *   the column and the byte offset where the parser stopped; the other kinds have the byte offset
 *   of the line's first byte and no column. The call then fails only for memory, I/O and limits.
 * - problems NULL: the first bad line fails the call with TRN_ERR_JSON (err has the file, line,
 *   column and byte offset as above) and *blocks is empty.
 * *blocks is malloc'd (free with trn_terrain_blocks_free); *count may be 0. Blocks come in line
 * order, each with source_file and source_line. */
trn_status trn_items_read_terrain_blocks(const char *items_path, trn_terrain_block **blocks,
                                         size_t *count, trn_findings *problems, trn_error *err);
/* The same from text already in memory (items_path only names it in messages and in
 * source_file; may be NULL). Text over 1 GiB is refused with TRN_ERR_LIMIT, as for files. */
trn_status trn_items_parse_terrain_blocks(const char *text, size_t text_size,
                                          const char *items_path, trn_terrain_block **blocks,
                                          size_t *count, trn_findings *problems, trn_error *err);
/* All TerrainBlocks of a level: every items.level.json under level_dir/main (recursively, sorted
 * by path so results are stable). With problems non-NULL, bad lines are findings as above and an
 * items file that cannot be read at all (I/O error, over 1 GiB) is one "level-items-invalid"
 * finding without a line; the other files are still read. */
trn_status trn_level_find_terrain_blocks(const char *level_dir, trn_terrain_block **blocks,
                                         size_t *count, trn_findings *problems, trn_error *err);
/* A deterministic persistentId: the RFC 4122 version-5 (SHA-1, name-based) UUID of the name
 * "<level_name>/<class_name>/<object_name>" in terrane's namespace
 * fa66f9b1-d417-5805-88ab-7358abcd9352 (the version-5 UUID of "beamng.terrane" in the DNS
 * namespace), so Python's uuid.uuid5 gives the same. Equal inputs give equal ids on every run,
 * which keeps level outputs bit-identical. out gets 36 lower-case characters and a NUL; NULL
 * strings count as "". */
#define TRN_BEAMNG_PERSISTENT_ID_SIZE 37
void trn_beamng_persistent_id(const char *level_name, const char *class_name,
                              const char *object_name, char out[TRN_BEAMNG_PERSISTENT_ID_SIZE]);

/* Add tb to items_path, or replace the first line that is a TerrainBlock object with the same
 * name. Every other line is kept byte for byte, lines that are not valid JSON included; a
 * replaced line keeps the keys we do not manage (persistentId, __parent, ...) and their order.
 * A new line starts with name, class, persistentId and __parent, as the editor writes them, when
 * tb has a persistent_id or parent; else with class and name.
 * One case is refused (TRN_ERR_JSON with that line's line, column and byte offset): no valid
 * block has the name, but a line that is not valid JSON mentions TerrainBlock and "name" (the
 * name in quotes), or holds a backslash (escapes may spell either). That line may be the block
 * itself; appending a new one would leave two blocks of the name once it is fixed. Creates the file
 * and its folders when missing; writes atomically. */
trn_status trn_items_put_terrain_block(const char *items_path, const trn_terrain_block *tb,
                                       trn_error *err);
/* The same edit in memory: text (may be NULL when text_size is 0, a new file) with tb put in
 * goes to *out_text (malloc'd, NUL-terminated; caller frees), its length to *out_size (may be
 * NULL). items_path only names it in messages (may be NULL). */
trn_status trn_items_put_terrain_block_text(const char *text, size_t text_size,
                                            const char *items_path, const trn_terrain_block *tb,
                                            char **out_text, size_t *out_size, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Ground models: the physics of a painted surface (TerrainMaterial.groundmodelName).
 * ------------------------------------------------------------------------------------------- */

/* The ground model for a surface called name (a material or biome name), by the first row of
 * this table with a keyword that a word of the name starts with, or ends with when the keyword
 * has four letters or more (words split at anything but a letter, and where a lower-case letter
 * meets an upper-case one), case ignored:
 *   asphalt tarmac concrete pavement paved  -> ASPHALT
 *   beach shore coast                       -> BEACHSAND
 *   mud swamp marsh wetland bog paddy       -> MUD
 *   snow glacier ice frost                  -> SNOW
 *   gravel pebble shingle                   -> GRAVEL
 *   rock cliff scree stone stony boulder crag talus -> ROCK
 *   sand desert dune                        -> SAND
 *   dust                                    -> DIRT_DUSTY
 *   dirt soil earth bare field clay ground  -> DIRT
 *   grass meadow forest lawn prairie steppe savanna pasture jungle wood moss -> GRASS
 * A name with none of them gets DIRT: bare ground is the safer guess than a lawn. The returned
 * string is static. NULL reads as "". */
const char *trn_beamng_groundmodel_for_name(const char *name);
/* The standard spelling (upper case, static) of a ground model the game ships (the names of
 * its art/groundmodels.json and their common aliases), matched ignoring case; NULL when name
 * is none of them. */
const char *trn_beamng_groundmodel_find(const char *name);
/* Every name trn_beamng_groundmodel_find knows, comma-separated, for messages. Static. */
const char *trn_beamng_groundmodel_names(void);

/* ---------------------------------------------------------------------------------------------
 * Terrain materials (v1.5 TerrainMaterial, TerrainMaterialTextureSet, deprecated v1).
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_tex_group {
    TRN_TEX_BASE_COLOR = 0,
    TRN_TEX_NORMAL = 1,
    TRN_TEX_ROUGHNESS = 2,
    TRN_TEX_AO = 3,
    TRN_TEX_HEIGHT = 4,
} trn_tex_group;
#define TRN_TEX_GROUP_COUNT 5

typedef enum trn_tex_scale {
    TRN_TEX_BASE = 0,
    TRN_TEX_MACRO = 1,
    TRN_TEX_DETAIL = 2,
} trn_tex_scale;
#define TRN_TEX_SCALE_COUNT 3

/* "baseColor", "normal", "roughness", "ao", "height"; "Base", "Macro", "Detail". */
const char *trn_tex_group_name(trn_tex_group group);
const char *trn_tex_scale_name(trn_tex_scale scale);
/* Field name of a slot: "baseColorMacroTex" (what = "Tex"), "...TexSize", "...Strength". */
void trn_tex_field_name(trn_tex_group group, trn_tex_scale scale, const char *what, char *buf,
                        size_t buf_size);

typedef struct trn_terrain_material {
    /* The JSON object key: "NAME-<persistentId>" as the World Editor writes it, or the
     * internal name itself in older files; both are read. */
    char *key;
    char *internal_name; /* what .ter material names resolve to */
    char *persistent_id; /* "persistentId"; NULL when absent */
    char *annotation;    /* NULL when absent */
    char *groundmodel_name;
    /* v1.5: texture path per group and scale (NULL = slot empty), mapping size in metres
     * (0 = unset), macro and detail strength [near, far]. */
    char *tex[TRN_TEX_GROUP_COUNT][TRN_TEX_SCALE_COUNT];
    double tex_size[TRN_TEX_GROUP_COUNT][TRN_TEX_SCALE_COUNT];
    double strength[TRN_TEX_GROUP_COUNT][2][2]; /* [group][0 macro, 1 detail][near, far] */
    bool has_strength[TRN_TEX_GROUP_COUNT][2];
    double macro_distances[4], detail_distances[4]; /* startFadeIn, near, far, endFadeOut */
    double macro_dist_atten[2], detail_dist_atten[2];
    bool has_macro_distances, has_detail_distances, has_macro_dist_atten, has_detail_dist_atten;
    /* Deprecated v1 fields (NULL / 0 when absent). */
    char *diffuse_map, *normal_map, *detail_map, *macro_map;
    double diffuse_size, detail_size, macro_size;
    double detail_strength, macro_strength, detail_distance, macro_distance;
    /* Fields this library does not model (useSideProjection, parallaxScale, persistentId...),
     * kept as the text of a JSON object so rewriting a file keeps them; NULL when none. */
    char *extra_json;
} trn_terrain_material;

typedef struct trn_texture_set {
    char *key;
    char *name;
    char *persistent_id; /* "persistentId"; NULL when absent */
    uint32_t base_tex_size[2], macro_tex_size[2], detail_tex_size[2]; /* pixels [w, h] */
    char *extra_json;
} trn_texture_set;

/* A terrain materials file: its TerrainMaterials, TerrainMaterialTextureSets, and any other
 * entries (kept as JSON object text so they survive a rewrite). */
typedef struct trn_material_file {
    trn_terrain_material *materials;
    uint32_t material_count;
    trn_texture_set *texture_sets;
    uint32_t texture_set_count;
    char *other_json; /* NULL when none */
} trn_material_file;

/* True when m uses any v1 field and no v1.5 texture. */
bool trn_terrain_material_is_v1(const trn_terrain_material *m);
void trn_terrain_material_dispose(trn_terrain_material *m);
void trn_material_file_dispose(trn_material_file *mf);

/* Parse a materials file (a name-keyed JSON object). Syntax errors carry line and column;
 * schema errors the JSON path ("grass.baseColorBaseTexSize: expected a number, found a
 * string"). */
trn_status trn_material_file_parse(const char *text, size_t text_size, const char *path,
                                   trn_material_file *mf, trn_error *err);
trn_status trn_material_file_read(const char *path, trn_material_file *mf, trn_error *err);
/* Serialise: texture sets first, then materials in order, then other entries; v1.5 fields in
 * the engine's order (strengths only for baseColor, normal and roughness unless set on others).
 * *text malloc'd. */
trn_status trn_material_file_serialize(const trn_material_file *mf, char **text, size_t *text_size,
                                       trn_error *err);
trn_status trn_material_file_write(const char *path, const trn_material_file *mf, trn_error *err);

/* Generated placeholder textures: pixel sizes per texture set slot (0 = 256). */
typedef struct trn_texture_options {
    uint32_t base_size, macro_size, detail_size;
} trn_texture_options;

/* A complete v1.5 material named name whose slots point at the placeholder textures that
 * trn_terrain_textures_write makes under the level (game_dir = "/levels/NAME/art/terrains").
 * world_size: the base mapping size in metres (the terrain's width, as official levels do). */
trn_status trn_terrain_material_init_default(trn_terrain_material *m, const char *name,
                                             const char *game_dir, double world_size,
                                             trn_error *err);
/* Write the placeholder PNGs for the given materials into dir (the level's art/terrains):
 * per material a flat base colour (sRGB chunk) at base size; shared flat mid-grey 8-bit linear
 * macro/detail/roughness/height maps, white AO base, flat normals (128,128,255) at each slot
 * size. Files named by trn_terrain_material_init_default. Count of files written in *written. */
trn_status trn_terrain_textures_write(const char *dir, const char *const *material_names,
                                      uint32_t material_count, const trn_texture_options *options,
                                      uint32_t *written, trn_error *err);

/* Options for migrating a deprecated art/terrains/materials.json. */
typedef struct trn_migrate_options {
    bool delete_old;         /* remove migrated TerrainMaterials from the old file (deleting
                                it when nothing else is left); default keeps it */
    bool fill_textures;      /* point empty v1.5 slots at generated placeholders */
    bool assign_texture_set; /* set materialTextureSet on TerrainBlocks that have none */
    trn_texture_options textures;
    /* Stage every file into this set (the caller commits); NULL: the call's own set, committed
     * before it returns, so the level's files change together or not at all. */
    trn_write_set *writes;
} trn_migrate_options;

/* Convert one v1 material to v1.5 (names, groundmodel, annotation carried over; diffuseMap ->
 * baseColorBaseTex, detailMap -> baseColorDetailTex, macroMap -> baseColorMacroTex,
 * normalMap -> normalDetailTex; sizes, strengths and distances mapped; v1 fields cleared).
 * out is overwritten. */
trn_status trn_terrain_material_upgrade(const trn_terrain_material *v1, trn_terrain_material *out,
                                        trn_error *err);
/* Migrate level_dir/art/terrains/materials.json into main.materials.json (existing entries of
 * main.materials.json are kept, never overwritten). *migrated: how many materials moved. */
trn_status trn_beamng_migrate_materials(const char *level_dir, const trn_migrate_options *options,
                                        uint32_t *migrated, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Import, create, export.
 * ------------------------------------------------------------------------------------------- */

/* Channel of an opacity map. For grey images R, G and B read the grey value; A reads alpha and is
 * an error for images without one. */
typedef enum trn_channel {
    TRN_CHANNEL_R = 0,
    TRN_CHANNEL_G = 1,
    TRN_CHANNEL_B = 2,
    TRN_CHANNEL_A = 3,
} trn_channel;

/* Images already in memory (row 0 = top = north, as trn_image). */
typedef struct trn_beamng_import_images {
    const trn_image *heightmap; /* 16-bit used directly, 8-bit widened v*65535/255; channel 0 */
    const trn_image *const *opacity; /* one per material, or none */
    const trn_channel *opacity_channels;
    uint32_t opacity_count;
    const trn_image *layer_map; /* alternative to opacity maps: 8-bit index values */
    const trn_image *holes;     /* optional: channel 0 value 0xFF (0xFFFF) = hole */
    const char *const *material_names;
    uint32_t material_count;
    bool flip_y_axis; /* false: image row 0 becomes the terrain's last row (engine default) */
    /* Optional file names for error messages (NULL = "heightmap", "opacity map 2", ...). */
    const char *heightmap_path;
    const char *const *opacity_paths;
    const char *layer_map_path, *holes_path;
} trn_beamng_import_images;

/* Build a version-9 trn_ter with the World Editor's rules: the heightmap must be square, a power
 * of two, 128..8192; opacity maps must match its size and be as many as material names; per
 * sample the last layer with the highest opacity wins (>=); holes make layer 255. With no
 * opacity maps and no layer map every sample is layer 0. *ter overwritten. Errors say what to do.
 */
trn_status trn_beamng_build_ter(const trn_beamng_import_images *in, trn_ter *ter,
                                trn_progress_fn progress, void *user, trn_error *err);

/* A ground model chosen for a material (by its internal name) instead of the name table. */
typedef struct trn_beamng_surface {
    const char *material;
    const char *groundmodel; /* one trn_beamng_groundmodel_find knows */
} trn_beamng_surface;

/* What --scaffold adds so that a level opens and drives: info.json, a preview, a spawn point on
 * the terrain, the sky, sun, light and time of day, a camera bookmark and the editor's groups
 * (docs/beamng.md lists every file and field). Anything the level already has is kept. */
typedef struct trn_beamng_scaffold {
    bool enabled;
    const char *title;       /* info.json title; NULL = the level's folder name */
    const char *description; /* info.json description; NULL = a line naming terrane */
    /* Sea level in metres (world z): the spawn point is put above it and a WaterPlane at it. */
    bool has_sea_level;
    double sea_level;
} trn_beamng_scaffold;

/* Which terrain materials a write into a level uses. */
typedef enum trn_beamng_material_version {
    /* The level's own: v1 when the TerrainBlock written over has no materialTextureSet, or,
     * for a new block, when the level has TerrainMaterials, all of them with only v1 fields,
     * and no TerrainMaterialTextureSet (an editor-saved level that was never upgraded);
     * v1.5 otherwise. */
    TRN_BEAMNG_MATERIALS_AUTO = 0,
    /* v1: new materials get the deprecated fields (diffuseMap, detailMap, macroMap,
     * normalMap), no texture set is added, the block keeps having none. */
    TRN_BEAMNG_MATERIALS_V1 = 1,
    /* v1.5: the level's v1-only materials are upgraded where they are (as
     * trn_beamng_migrate_materials does), a texture set is added when there is none and the
     * block gets it. */
    TRN_BEAMNG_MATERIALS_V15 = 2,
} trn_beamng_material_version;

/* At most this many changes are listed in trn_beamng_level_result.changes. */
#define TRN_BEAMNG_MAX_CHANGES 16

/* Where and how create/import write a terrain into a level. */
typedef struct trn_beamng_level_options {
    const char *level_dir;    /* the levels/NAME folder; created if missing */
    const char *terrain_name; /* TerrainBlock name and .ter base name; NULL = "theTerrain" */
    bool unique_ter_name;     /* take theTerrain_1.ter, _2... when the name is taken (create) */
    double max_height;        /* 0 = 2048 */
    double square_size;       /* 0 = 1 */
    double position_z;        /* the TerrainBlock's position z: the height of stored 0 */
    uint8_t ter_version;      /* 0 = 9 */
    /* Keep what an editor-saved level has (terrane beamng import). When the level has the
     * TerrainBlock (named terrain_name; with terrain_name NULL the level's only TerrainBlock,
     * or the one named theTerrain among several), the terrain goes into the .ter its
     * terrainFile names (terrain2.ter gets terrain2.terrain.json beside it), and its position,
     * maxHeight, squareSize, screenError, castShadows and rotation stay, except maxHeight and
     * squareSize when given (> 0) and the position when recenter is set. Without keep_block
     * the block is placed as a new one (centred, the given or default sizes, position z =
     * position_z), which is what a terrain computed for those values needs. */
    bool keep_block;
    bool recenter; /* with keep_block: centre the terrain on x, y 0 (z kept) */
    trn_beamng_material_version material_version;
    trn_texture_options textures;
    /* Ground models of the materials this call adds (others by trn_beamng_groundmodel_for_name);
     * materials already in the level keep theirs. */
    const trn_beamng_surface *surfaces;
    uint32_t surface_count;
    trn_beamng_scaffold scaffold;
    /* Stage every file into this set (the caller commits, and reads the new files through
     * trn_write_set_current until then); NULL: the call's own set, committed before it
     * returns, so the level's files change together or not at all. */
    trn_write_set *writes;
} trn_beamng_level_options;

/* What was written (paths on disk, names in the level). */
typedef struct trn_beamng_level_result {
    char level_dir[1024];
    char level_name[256];
    char terrain_name[256];
    char ter_path[1024];
    char terrain_json_path[1024];
    char heightmap_png_path[1024];
    char items_path[1024];
    char materials_path[1024];
    char texture_set[300];
    char terrain_file[1024]; /* the game path in the TerrainBlock */
    uint32_t materials_added;
    uint32_t textures_written;
    bool block_replaced; /* a TerrainBlock of the name was updated where it was (items_path) */
    bool materials_v1;   /* the terrain uses v1 materials (no texture set) */
    /* What was changed in an existing level, one sentence each ("maxHeight 208 -> 512",
     * "replaced theTerrain.terrain.json, which described /levels/x/other.ter"), in the order
     * done; at most TRN_BEAMNG_MAX_CHANGES (changes_dropped counts the rest). */
    char changes[TRN_BEAMNG_MAX_CHANGES][320];
    uint32_t change_count, changes_dropped;
    /* Scaffold (all empty or 0 without it, or when the level had each piece already). */
    char info_path[1024];    /* info.json written */
    char preview_path[1024]; /* the preview image written */
    uint32_t objects_added;  /* scene objects and groups added */
    bool spawn_added;        /* a SpawnSphere was put at spawn_position */
    bool spawn_dry;          /* ... above the sea level (always true without one) */
    double spawn_position[3];
} trn_beamng_level_result;

/* Write ter into a level: NAME.ter, NAME.terrain.json, NAME.terrainheightmap.png (16-bit, image
 * orientation as export), the TerrainBlock, materials missing from
 * art/terrains/main.materials.json (with a texture set <level>TerrainMaterialTextureSet when
 * there is none) and their placeholder textures, and with opt->scaffold what a level needs to
 * open and drive. A TerrainBlock of the same name anywhere under main/ is updated in place (its
 * line, persistentId and every field terrane does not manage kept); a new one goes where the
 * World Editor keeps it: main/MissionGroup/items.level.json with "__parent": "MissionGroup" and
 * a persistentId, main/items.level.json getting the MissionGroup SimGroup when it lacks one.
 * Every file is staged in one write set (opt->writes or the call's own), so a failure, a
 * cancel or a crash never leaves new heights beside an old TerrainBlock. */
trn_status trn_beamng_level_write_terrain(const trn_ter *ter, const trn_beamng_level_options *opt,
                                          trn_beamng_level_result *result, trn_progress_fn progress,
                                          void *user, trn_error *err);

typedef struct trn_beamng_opacity_source {
    const char *path;
    trn_channel channel;
} trn_beamng_opacity_source;

/* Import from files. The heightmap is a PNG (detected by content), or, by its name, headerless
 * R16 (.r16/.raw: 16-bit stored values, little-endian unless raw_big_endian) or R32 (.r32:
 * little-endian 32-bit float heights in metres); headerless sizes come from the file length,
 * which must be a square. */
typedef struct trn_beamng_import_options {
    const char *heightmap_path;
    /* R16 in Mac byte order. TRN_ERR_INVALID_ARGUMENT for a PNG or R32 heightmap, whose byte
     * order is fixed: a setting that would be ignored is refused rather than guessed at. */
    bool raw_big_endian;
    /* R32 only (ignored otherwise): the TerrainBlock maxHeight the metres are scaled to,
     * stored = round(h / float_max_height * 65536), clamped to 0..65535 (NaN to 0); clamped
     * samples are counted in one warning on the trn_ter. 0 = the level's max_height when one
     * is given (level non-NULL, max_height > 0), else, with keep_block, the maxHeight of the
     * TerrainBlock that is kept; without any of them an R32 heightmap is refused
     * with TRN_ERR_INVALID_ARGUMENT naming its height range, as a guessed scale would flatten
     * or clip it without a word. Both given and different is TRN_ERR_INVALID_ARGUMENT too: the
     * heights would come out scaled by their ratio. */
    double float_max_height;
    const trn_beamng_opacity_source *opacity;
    uint32_t opacity_count;
    const char *layer_map_path; /* optional, instead of opacity maps */
    const char *holes_path;     /* optional */
    const char *const *material_names;
    uint32_t material_count;
    bool flip_y_axis;
    const trn_image_limits *limits; /* NULL = defaults */
} trn_beamng_import_options;

/* Read the images and build the terrain (trn_beamng_build_ter); when level is non-NULL also
 * write the level files (trn_beamng_level_write_terrain) and fill *result. */
trn_status trn_beamng_import(const trn_beamng_import_options *opt, trn_ter *ter,
                             const trn_beamng_level_options *level, trn_beamng_level_result *result,
                             trn_progress_fn progress, void *user, trn_error *err);

/* Height of a new terrain when none is given: a quarter of maxHeight (stored 16384), so there is
 * room to dig three times less deep than to build up, yet both are generous. */
#define TRN_BEAMNG_CREATE_DEFAULT_STORED 16384u

typedef struct trn_beamng_create_options {
    const char *root;         /* folder that holds (or will hold) levels/; NULL = "." */
    const char *level_name;   /* levels/<level_name>/ */
    const char *terrain_name; /* NULL = "theTerrain" (a unique .ter name is chosen) */
    uint32_t resolution;      /* rounded up to a power of two, at least 128; 0 = 1024 */
    const char *material;     /* initial material; NULL = "grass" */
    double max_height;        /* 0 = 2048 */
    double square_size;       /* 0 = 1 */
    double initial_height;    /* metres above 0; 0 or less = default (a quarter of maxHeight) */
    trn_texture_options textures;
    trn_beamng_scaffold scaffold; /* as in trn_beamng_level_options */
    trn_write_set *writes;        /* as in trn_beamng_level_options */
} trn_beamng_create_options;

/* Round a requested resolution up to the next power of two (128 at least). Fails with
 * TRN_ERR_LIMIT beyond 8192 and TRN_ERR_INVALID_ARGUMENT for 0. */
trn_status trn_beamng_round_resolution(uint32_t requested, uint32_t *rounded, trn_error *err);

/* Create a new terrain (and the level folder when missing). result->ter_path says which unique
 * .ter name was taken. */
trn_status trn_beamng_create(const trn_beamng_create_options *opt, trn_beamng_level_result *result,
                             trn_progress_fn progress, void *user, trn_error *err);

/* Export images from a .ter (same orientation rule as import, so importing them with the same
 * material order and flip setting gives the same .ter back). */
typedef struct trn_beamng_export_options {
    bool flip_y_axis;
    bool heightmap;        /* <base>_heightmap.png, 16-bit grey, stored values */
    bool layer_map;        /* <base>_layers.png, 8-bit grey index values */
    bool holes;            /* <base>_holes.png, 255 hole, 0 solid */
    bool opacity;          /* <base>_opacity_<index>_<material>.png, 255 where the layer is it */
    bool r16;              /* <base>.r16, little-endian */
    int compression_level; /* zlib 0-9, -1 = default */
    trn_write_set *writes; /* as in trn_beamng_level_options: all images land together */
} trn_beamng_export_options;

/* All outputs on. */
void trn_beamng_export_options_default(trn_beamng_export_options *opt);

/* The paths written, in order (heightmap, layers, holes, opacity per material, r16). */
typedef struct trn_beamng_export_result {
    char **paths;
    uint32_t path_count;
    uint32_t opacity_first; /* index of the first opacity path in paths */
    uint32_t opacity_count;
} trn_beamng_export_result;

void trn_beamng_export_result_dispose(trn_beamng_export_result *result);

/* Write the images into out_dir (created when missing) named from base_name. */
trn_status trn_beamng_export(const trn_ter *ter, const char *out_dir, const char *base_name,
                             const trn_beamng_export_options *opt, trn_beamng_export_result *result,
                             trn_progress_fn progress, void *user, trn_error *err);

/* Image <-> terrain rows: terrain row of image row r (size rows, flip rule as import). */
static inline uint32_t trn_beamng_terrain_row(uint32_t image_row, uint32_t size, bool flip_y_axis)
{
    return flip_y_axis ? image_row : size - 1u - image_row;
}

/* ---------------------------------------------------------------------------------------------
 * Validate a level.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_beamng_validate_options {
    const trn_ter_limits *limits; /* NULL = defaults */
    bool skip_textures;           /* do not open texture files */
} trn_beamng_validate_options;

/* Check level_dir (a levels/NAME folder) for the common problems of BeamNG terrains and of the
 * scene tree (names, parents, group folders, persistentIds) and append one finding per problem
 * to *findings (each with a check id, its file and line where there is one, and a fix hint).
 * Returns TRN_OK when the checks ran, whatever they found. Before any check (nothing appended) it
 * fails with TRN_ERR_NOT_FOUND when level_dir does not exist, TRN_ERR_INVALID_ARGUMENT when it is a
 * file (or NULL) and TRN_ERR_FORMAT when it is a folder that does not look like a level (none of
 * main/, info.json, main.level.json, a .mis file or art/terrains/; the message names the levels
 * it holds, if any). TRN_ERR_CANCELLED leaves *findings as it was; TRN_ERR_NO_MEMORY keeps what
 * was found. Game paths ("/levels/NAME/x") resolve against the folder that contains levels/, or
 * against level_dir itself when its name is NAME. options NULL = defaults. */
trn_status trn_beamng_validate(const char *level_dir, const trn_beamng_validate_options *options,
                               trn_findings *findings, trn_progress_fn progress, void *user,
                               trn_error *err);

/* What trn_beamng_write_terrain_json did. */
typedef struct trn_beamng_terrain_json_result {
    char **written; /* the .terrain.json files written (named as level_dir spells them) */
    uint32_t written_count;
    uint32_t unchanged_count; /* already what the .ter gives, byte for byte: left alone */
    uint32_t skipped_count;   /* TerrainBlocks without a readable .ter (validate says why) */
    char **outside; /* .terrain.json files left because they resolve outside the level (links) */
    uint32_t outside_count;
} trn_beamng_terrain_json_result;

void trn_beamng_terrain_json_result_dispose(trn_beamng_terrain_json_result *result);

/* Rewrite the .terrain.json beside each TerrainBlock's .ter (x.ter -> x.terrain.json) from the
 * .ter, as import writes it: version, size, map sizes and materials from the .ter, datafile =
 * the block's terrainFile, heightmapImage kept from the old file when it has one (else
 * x.terrainheightmap.png in the .ter's game folder). A missing file is created. Each is written
 * atomically and only when its text changes; the .ter is only read. Broken items lines and
 * blocks whose .ter is missing or unreadable are skipped (trn_beamng_validate reports them).
 * limits NULL = defaults. Fails for a level_dir that is not a folder, memory and write errors
 * (files written before a failed write stay written, each complete; *result is then empty).
 * result may be NULL; dispose it after success. */
trn_status trn_beamng_write_terrain_json(const char *level_dir, const trn_ter_limits *limits,
                                         trn_beamng_terrain_json_result *result, trn_error *err);

/* Resolve a game path for a level: writes the path on disk to out. *case_mismatch is set when
 * only a case-insensitive match exists (out then names the real file). Returns TRN_ERR_NOT_FOUND
 * when nothing matches (out holds the exact path that was tried). */
trn_status trn_beamng_resolve_path(const char *level_dir, const char *game_path, char *out,
                                   size_t out_size, bool *case_mismatch, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
