/* Shared helpers of the BeamNG level code: text buffers, JSON output, paths (internal). */
#ifndef TRN_BEAMNG_LEVEL_INTERNAL_H
#define TRN_BEAMNG_LEVEL_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "terrane/beamng_level.h"
#include "terrane/io.h"

/* A growable NUL-terminated text buffer; any failed append sets failed and stops growing. */
typedef struct trn_lvl_buf {
    char *data;
    size_t len, cap;
    bool failed;
} trn_lvl_buf;

void trn_lvl_buf_append(trn_lvl_buf *b, const char *s, size_t n);
void trn_lvl_buf_puts(trn_lvl_buf *b, const char *s);
void trn_lvl_buf_printf(trn_lvl_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void trn_lvl_buf_free(trn_lvl_buf *b);

/* malloc'd copy; NULL for NULL. */
char *trn_lvl_strdup(const char *s);
/* Copy into a fixed buffer, always NUL-terminated; false when it did not fit. */
bool trn_lvl_copy(char *dst, size_t dst_size, const char *src);
/* dst = a + "/" + b (a may end with '/'); false when it did not fit. */
bool trn_lvl_join(char *dst, size_t dst_size, const char *a, const char *b);
/* Last path component (after the last '/'), pointer into path. */
const char *trn_lvl_basename(const char *path);
/* The level's name: the last component of level_dir after resolving "." and "..". */
bool trn_lvl_level_name(const char *level_dir, char *out, size_t out_size);
/* Walk rel (components split by '/') from base, matching each component exactly or, failing
 * that, ignoring case. out gets the path found, or the exact path tried (gamepath.c). */
trn_status trn_lvl_walk_ci(const char *base, const char *rel, char *out, size_t out_size,
                           bool *mismatch, trn_error *err);
/* True when path is an existing folder. */
bool trn_lvl_is_dir(const char *path);
/* ASCII case-insensitive equality. */
bool trn_lvl_ieq(const char *a, const char *b);

/* A JSON number for v: an integer when v is whole (2048, not 2048.0), else a real. */
json_t *trn_lvl_json_number(double v);
/* "a string", "a number", ... for schema messages. */
const char *trn_lvl_json_kind(const json_t *v);
/* Pretty JSON as BeamNG writes it: 2-space indent, objects one key per line, arrays of scalars
 * on one line ("[0, 10, 100, 3000]"), reals in their shortest exact form. Trailing newline. */
void trn_lvl_json_pretty(trn_lvl_buf *b, const json_t *v);
/* One line of compact JSON, as items.level.json holds objects (no line ending). */
void trn_lvl_json_compact(trn_lvl_buf *b, const json_t *v);
/* Turn a jansson syntax error into a trn_error with file, line, column and byte offset.
 * line_base > 0 overrides the line (NDJSON lines are parsed one at a time); offset_base is the
 * byte offset of the parsed text in its file. */
trn_status trn_lvl_json_syntax_error(trn_error *err, const char *path, const json_error_t *je,
                                     int line_base, size_t offset_base);
/* 3 when text starts with a UTF-8 byte order mark (Windows editors write one), else 0. */
size_t trn_lvl_bom_length(const char *text, size_t n);
/* Read a number field: accepts JSON numbers and (for Torque-converted levels) numeric strings. */
bool trn_lvl_json_get_number(const json_t *v, double *out);

/* Whether trn_items_put_terrain_block would accept a block named name into items_path (a
 * missing file is fine), without writing: lets a caller refuse before writing anything else.
 * Reads the file as ws will leave it (ws may be NULL). */
trn_status trn_lvl_items_check_put(const trn_write_set *ws, const char *items_path,
                                   const char *name, trn_error *err);
/* trn_items_put_terrain_block staged into ws (read-modify-write of the staged content when the
 * file is already staged); ws NULL writes items_path directly. */
trn_status trn_lvl_items_put(trn_write_set *ws, const char *items_path, const trn_terrain_block *tb,
                             trn_error *err);

/* Every items.level.json under level_dir/main, sorted by path (as level_dir spells it). */
trn_status trn_lvl_items_files(const char *level_dir, char ***paths, size_t *count, trn_error *err);
/* Every file anywhere under level_dir that the engine's level loader reads for datablocks, sorted
 * by path: names ending in "Data.json" or "datablocks.json" (JSON datablocks) and in ".cs"
 * (TorqueScript it executes). */
trn_status trn_lvl_datablock_files(const char *level_dir, char ***paths, size_t *count,
                                   trn_error *err);
/* text (NULL when text_size is 0) with obj appended as one more line, line endings and byte
 * order mark as the file has them. *out_text malloc'd. */
trn_status trn_lvl_items_append_text(const char *text, size_t text_size, const char *items_path,
                                     const json_t *obj, char **out_text, size_t *out_size,
                                     trn_error *err);

/* ------------------------------------------------------------------------------------------
 * The scene tree (scene.c): every object line of main/ and its items files.
 * ---------------------------------------------------------------------------------------- */

typedef struct trn_lvl_object {
    char *name;   /* NULL when the object has none */
    char *cls;    /* "" when it has no class */
    char *parent; /* "__parent"; NULL when absent */
    bool has_persistent_id;
    uint32_t file; /* index into trn_lvl_scene.files */
    int line;      /* 1-based */
} trn_lvl_object;

typedef struct trn_lvl_scene {
    char **files; /* the items files, sorted; staged ones of ws included */
    size_t file_count;
    trn_lvl_object *objects; /* file by file, in line order; lines that are no object skipped */
    size_t count;
} trn_lvl_scene;

/* Read the tree as ws (may be NULL) will leave it. */
trn_status trn_lvl_scene_read(const trn_write_set *ws, const char *level_dir, trn_lvl_scene *scene,
                              trn_error *err);
void trn_lvl_scene_dispose(trn_lvl_scene *scene);
/* The first object of class cls (NULL: any) and name (case ignored, as Torque finds names;
 * NULL: any), or -1. */
ptrdiff_t trn_lvl_scene_find(const trn_lvl_scene *scene, const char *cls, const char *name);
/* The folder a group object's children live in: its file's folder + "/" + its name. */
bool trn_lvl_scene_group_dir(const trn_lvl_scene *scene, size_t index, char *out, size_t size);
/* The MissionGroup SimGroup line of main/items.level.json, or -1. */
ptrdiff_t trn_lvl_scene_mission_group(const trn_lvl_scene *scene, const char *level_dir);
/* True when path is level_dir/main/items.level.json (as level_dir spells it). */
bool trn_lvl_is_main_items(const char *level_dir, const char *path);

/* A new object line's leading keys, as the editor orders them: name (when non-NULL), class,
 * persistentId (trn_beamng_persistent_id of level, class and name), __parent (when non-NULL).
 * NULL when out of memory. */
json_t *trn_lvl_new_object(const char *level_name, const char *cls, const char *name,
                           const char *parent);
/* Append obj to items_path as ws leaves it, staged into ws (file and folders created). */
trn_status trn_lvl_items_append(trn_write_set *ws, const char *items_path, const json_t *obj,
                                trn_error *err);
/* Make sure main/items.level.json has the MissionGroup SimGroup (adding its line when not):
 * group gets its name, dir the folder its objects live in; *added (may be NULL) says whether
 * the line was added. */
trn_status trn_lvl_ensure_mission_group(trn_write_set *ws, const char *level_dir,
                                        const char *level_name, char *group, size_t group_size,
                                        char *dir, size_t dir_size, bool *added, trn_error *err);
/* The items file a TerrainBlock named name is put into: the file holding the first
 * TerrainBlock line of that name (*found), else MissionGroup's items file. Refuses
 * (TRN_ERR_JSON, as trn_lvl_items_check_put) when no block has the name but a broken line may
 * be it. Nothing is written. */
trn_status trn_lvl_block_target(const trn_write_set *ws, const char *level_dir, const char *name,
                                char *items_path, size_t size, bool *found, trn_error *err);
/* Put tb into the level: in place when a block of its name exists (*replaced), else into
 * MissionGroup's items file with __parent and a persistentId (tb's, or derived from the level
 * and the name), MissionGroup added when missing. items_path gets the file written. */
trn_status trn_lvl_level_put_block(trn_write_set *ws, const char *level_dir, const char *level_name,
                                   const trn_terrain_block *tb, char *items_path, size_t size,
                                   bool *replaced, trn_error *err);

/* Every terrain materials file of a level (materials.json and *.materials.json anywhere under
 * level_dir), sorted. *paths malloc'd, each entry malloc'd. */
trn_status trn_lvl_material_files(const char *level_dir, char ***paths, size_t *count,
                                  trn_error *err);
void trn_lvl_free_paths(char **paths, size_t count);

/* File-name-safe form of a material name ([A-Za-z0-9_-], at most 64 characters); a hash of the
 * name is appended when anything was changed, so two names that clean up alike stay apart. */
void trn_lvl_safe_name(const char *name, char *buf, size_t buf_size);

/* File name (no folder) of a placeholder texture of material `material` (NULL for shared ones)
 * in slot (group, scale). Writes into buf. */
void trn_lvl_texture_file_name(const char *material, trn_tex_group group, trn_tex_scale scale,
                               char *buf, size_t buf_size);

/* Materials as JSON (materials.c). to_json returns a new object (NULL when out of memory). */
json_t *trn_lvl_material_to_json(const trn_terrain_material *m);
json_t *trn_lvl_texture_set_to_json(const trn_texture_set *ts);
trn_status trn_lvl_material_from_json(const char *key, const json_t *obj, const char *path,
                                      trn_terrain_material *m, trn_error *err);
trn_status trn_lvl_texture_set_from_json(const char *key, const json_t *obj, const char *path,
                                         trn_texture_set *ts, trn_error *err);

/* What trn_lvl_merge_materials did. */
typedef struct trn_lvl_merge_result {
    char texture_set[300];
    char materials_path[1024];
    uint32_t added, textures_written;
} trn_lvl_merge_result;

/* Make sure every name resolves to a TerrainMaterial in level_dir: names not defined by any
 * materials file of the level are added to art/terrains/main.materials.json as complete v1.5
 * materials with placeholder textures (with v1: as v1 materials, diffuseMap, detailMap,
 * macroMap and normalMap on the same placeholders, and no texture set is added), in the editor's
 * form (keyed NAME-<persistentId>, with internalName, class, persistentId), the ground model from
 * surfaces (the material's entry) or the name table; a TerrainMaterialTextureSet named
 * <level_name>TerrainMaterialTextureSet is added when the level has none (an existing one's name
 * and sizes are used otherwise). Existing entries are never changed. */
trn_status trn_lvl_merge_materials(trn_write_set *ws, const char *level_dir, const char *level_name,
                                   const char *const *names, uint32_t count, double world_size,
                                   const trn_texture_options *textures,
                                   const trn_beamng_surface *surfaces, uint32_t surface_count,
                                   bool v1, trn_lvl_merge_result *result, trn_error *err);

/* How many TerrainMaterials with only v1 fields, other TerrainMaterials and
 * TerrainMaterialTextureSets the level's materials files hold (files that cannot be read
 * count for nothing). */
void trn_lvl_level_material_kinds(const char *level_dir, uint32_t *v1_count, uint32_t *v15_count,
                                  uint32_t *set_count);

/* What --scaffold adds (scaffold.c), after the TerrainBlock tb was put: the editor's groups,
 * a spawn point on ter, sky, sun, time of day, level info, a camera bookmark, info.json and a
 * preview; pieces the level already has are kept. Staged into ws; fills res's scaffold
 * fields. */
trn_status trn_lvl_scaffold(trn_write_set *ws, const trn_ter *ter, const trn_terrain_block *tb,
                            const trn_beamng_level_options *opt, trn_beamng_level_result *res,
                            trn_error *err);

/* Where the spawn point goes on ter placed as tb: the flattest dry sample near the centre
 * (see scaffold.c). world gets x, y, z; returns false when no dry sample exists (world is then
 * the centre, above the sea). */
bool trn_lvl_spawn_spot(const trn_ter *ter, const trn_terrain_block *tb, bool has_sea_level,
                        double sea_level, double world[3]);

/* ---- Vegetation (forest.c) ---- */

/* An instance's turn as a forest item: the rotationMatrix (rows: the item's x, y and z axes in
 * the world) and Torque's quaternion (x, y, z, w) for a yaw in degrees, clockwise seen from
 * above. */
void trn_lvl_forest_rotation(double yaw_degrees, double m[9], double q[4]);

/* A terrain of the level as validate read it: the area it covers (BeamNG x, y) and its
 * material names. */
typedef struct trn_lvl_terrain_area {
    double x0, y0, x1, y1;
    char **materials;
    uint32_t material_count;
} trn_lvl_terrain_area;

/* Findings on the level's forest (forest/TYPE.forest4.json, NAME.forest.json), its item data
 * (art/forest/managedItemData.json, NAME.forestbrushes4.json) and its GroundCover objects, each
 * with its file and line; *oom set when out of memory. */
void trn_lvl_check_vegetation(const char *level_dir, const char *level_name,
                              const trn_lvl_terrain_area *areas, size_t area_count,
                              trn_findings *findings, bool *oom);

/* Add to a WaterPlane object every field the World Editor saves on an ocean that it does not
 * have yet (foam, ripple and wave layers, surface settings, the game's core water maps). */
bool trn_lvl_water_plane_defaults(json_t *plane);

#endif
