/* BeamNG level validation: the common terrain and scene-tree issues as checks with fix hints. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "core/progress.h"
#include "level_internal.h"
#include "core/write_set.h"

/* Check ids (stable; documented in `terrane beamng validate --help`):
 *   level-items-invalid        an items.level.json line is not valid JSON or has a bad field
 *                              (one finding per line; the other lines are still read)
 *   terrain-block-missing      the level has no TerrainBlock
 *   terrain-block-invalid      squareSize or maxHeight not positive
 *   terrain-file-missing       terrainFile empty or the .ter is not there
 *   terrain-file-case          terrainFile matches a file only when case is ignored
 *   terrain-file-elsewhere     terrainFile points into another level that is not present
 *   ter-version-too-new        .ter version above 9
 *   ter-lfs-pointer            a Git LFS pointer file in place of the .ter
 *   ter-corrupt                the .ter reader failed (message and byte offset)
 *   ter-warning                the .ter reader's warnings
 *   ter-extra-maps             extra maps after the layer map: the engine misreads the names
 *   ter-version-old            legacy version 1-6 file
 *   ter-size                   size not a power of two in 128..8192
 *   too-many-materials         more than 254 material names
 *   layer-index-out-of-range   layer values at or past the material count (other than 255)
 *   material-unresolved        a .ter material name has no TerrainMaterial (by internalName)
 *   material-name-case         it resolves only when case is ignored
 *   materials-invalid          a materials file is not valid JSON or has a bad field
 *   materials-deprecated-file  art/terrains/materials.json still holds TerrainMaterials
 *   texture-set-missing        materialTextureSet names no TerrainMaterialTextureSet
 *   material-v1-only           a v1-only material while the terrain uses v1.5 materials
 *   terrain-v1-materials       the TerrainBlock has no materialTextureSet (deprecated v1 path)
 *   texture-slot-empty         a v1.5 slot has no texture
 *   texture-missing            a texture file is not there
 *   texture-path-case          a texture path matches only when case is ignored
 *   texture-unreadable         a PNG header cannot be read
 *   texture-not-png            a v1.5 texture is not a PNG source
 *   texture-size-not-pow2      texture pixel size not a power of two
 *   texture-size-mismatch      texture pixel size differs from the texture set's slot size
 *   texture-colorspace         base colour not sRGB, or a data map tagged sRGB
 *   texture-not-checked        a texture outside this folder tree (another level, core game)
 *   path-outside-level         a path from a level file leads out of the game folder ('..' or
 *                              a symbolic link); never read or written
 *   write-interrupted          a write into the level stopped part-way (complete journal)
 *   write-leftovers            journals and temporaries of runs that died before committing
 *   write-in-progress          another process holds a write journal in the level
 *   object-name-duplicate      two objects of the level tree share a name (Torque names are
 *                              global and case-blind: lookups find one of them)
 *   object-unparented          objects outside MissionGroup: in main/items.level.json beside
 *                              the MissionGroup line, or without "__parent" deeper down
 *   group-folder-orphaned      a folder's items.level.json with no SimGroup of the folder's
 *                              name in the folder above: the engine never loads it
 *   persistent-id-missing      objects without a "persistentId"
 *   terrain-json-missing       no .terrain.json beside the .ter
 *   terrain-json-invalid       .terrain.json is not valid JSON or lacks fields
 *   terrain-json-mismatch      .terrain.json disagrees with the .ter (trn_terrain_json_compare)
 *   forest-item-data-invalid   art/forest/managedItemData.json is not an object of item types
 *   forest-item-invalid        forest items that cannot be read (per file: count, first line)
 *   forest-item-type-unknown   forest items whose type no TSForestItemData defines
 *   forest-item-no-shape       forest items whose item data has no shapeFile (draw nothing)
 *   forest-item-outside-terrain  forest items outside every terrain's area
 *   forest-object-missing      forest items but no Forest object to load them
 *   forest-shape-missing       a used item type's shapeFile points into the level but is absent
 *   ground-cover-layer-unknown a GroundCover type's layer names no terrain material
 */

/* The game path of a file found on disk: "/levels/NAME/..." from its place under level_dir. */
static void game_path_of(const char *level_dir, const char *level_name, const char *disk, char *out,
                         size_t out_size)
{
    char real_level[PATH_MAX], real_disk[PATH_MAX];
    if (realpath(level_dir, real_level) && realpath(disk, real_disk)) {
        size_t n = strlen(real_level);
        if (strncmp(real_disk, real_level, n) == 0 && real_disk[n] == '/') {
            snprintf(out, out_size, "/levels/%s%s", level_name, real_disk + n);
            return;
        }
    }
    trn_lvl_copy(out, out_size, disk);
}

/* ------------------------------------------------------------------------------------------
 * State of one validation run.
 * ---------------------------------------------------------------------------------------- */

typedef struct loaded_file {
    char *path;
    trn_material_file mf;
    bool ok;
} loaded_file;

typedef struct png_cache_entry {
    char *path;
    trn_status status;
    trn_png_info info;
    char message[256];
} png_cache_entry;

typedef struct vctx {
    const char *level_dir;
    char level_name[256];
    char real_level[PATH_MAX]; /* realpath of level_dir ("" when unknown) */
    size_t real_level_len;
    trn_findings *findings;
    trn_beamng_validate_options opt;
    trn_ter_limits limits;
    const trn_texture_set *active_set; /* the set the level's terrain uses (v1.5 checks) */
    loaded_file *files;
    size_t file_count;
    /* Material names used by the terrains (to rate problems of unused materials lower). */
    char **used;
    size_t used_count, used_cap;
    png_cache_entry *pngs;
    size_t png_count, png_cap;
    /* The terrains read, for the vegetation checks (positions, GroundCover layers). */
    trn_lvl_terrain_area *areas;
    size_t area_count;
    bool oom;
} vctx;

#define ADD(v, sev, check, file, offset, fix, ...)                                                 \
    do {                                                                                           \
        if (trn_findings_add((v)->findings, sev, check, file, offset, fix, __VA_ARGS__))           \
            (v)->oom = true;                                                                       \
    } while (0)

static void check_interrupted_writes(vctx *v);

static void set_last_line(vctx *v, int line)
{
    if (v->findings->count) v->findings->items[v->findings->count - 1].line = line;
}

/* A JSON syntax error (not a schema error) from the level readers. */
static bool is_syntax_error(const trn_error *e)
{
    return strncmp(e->message, "invalid JSON", 12) == 0;
}

/* A reader's error position onto the last finding: the line, and the column for syntax errors
 * only (schema errors are set at column 1 of their line, which points at nothing). */
static void set_last_position(vctx *v, const trn_error *e)
{
    if (!v->findings->count) return;
    trn_finding *f = &v->findings->items[v->findings->count - 1];
    f->line = e->line;
    f->column = is_syntax_error(e) && e->line > 0 ? e->column : 0;
}

/* Paths found through the game root are absolute (realpath); show those inside the level as
 * the user spelled the level folder, so every finding names files the same way. */
static void as_given(const vctx *v, char *path, size_t size)
{
    size_t n = v->real_level_len;
    if (!n || strncmp(path, v->real_level, n) != 0 || (path[n] != '/' && path[n] != '\0')) return;
    size_t ln = strlen(v->level_dir);
    while (ln > 1 && v->level_dir[ln - 1] == '/')
        ln--;
    char out[PATH_MAX];
    int w = snprintf(out, sizeof out, "%.*s%s", (int)ln, v->level_dir, path + n);
    if (w > 0 && (size_t)w < sizeof out && (size_t)w < size) memcpy(path, out, (size_t)w + 1);
}

/* True when (check, file) was already reported: shared textures are reported once. */
static bool reported(const vctx *v, const char *check, const char *file)
{
    for (size_t i = 0; i < v->findings->count; i++)
        if (strcmp(v->findings->items[i].check, check) == 0 &&
            strcmp(v->findings->items[i].file, file) == 0)
            return true;
    return false;
}

static void mark_used(vctx *v, const char *name)
{
    for (size_t i = 0; i < v->used_count; i++)
        if (trn_lvl_ieq(v->used[i], name)) return;
    if (v->used_count == v->used_cap) {
        size_t cap = v->used_cap ? v->used_cap * 2 : 16;
        char **n = realloc(v->used, cap * sizeof *n);
        if (!n) {
            v->oom = true;
            return;
        }
        v->used = n;
        v->used_cap = cap;
    }
    if (!(v->used[v->used_count] = trn_lvl_strdup(name))) {
        v->oom = true;
        return;
    }
    v->used_count++;
}

static bool is_used(const vctx *v, const char *name)
{
    for (size_t i = 0; name && i < v->used_count; i++)
        if (trn_lvl_ieq(v->used[i], name)) return true;
    return false;
}

static const trn_terrain_material *find_material(const vctx *v, const char *name, bool ci,
                                                 const char **file)
{
    for (size_t f = 0; f < v->file_count; f++)
        for (uint32_t i = 0; i < v->files[f].mf.material_count; i++) {
            const trn_terrain_material *m = &v->files[f].mf.materials[i];
            if (!m->internal_name) continue;
            if (ci ? trn_lvl_ieq(m->internal_name, name) : strcmp(m->internal_name, name) == 0) {
                if (file) *file = v->files[f].path;
                return m;
            }
        }
    return NULL;
}

/* A v1.5 material named name in a materials file other than skip_path (the copy migrate leaves
 * in main.materials.json of a material still in the deprecated file). */
static bool has_v15_twin(const vctx *v, const char *name, const char *skip_path)
{
    for (size_t f = 0; name && f < v->file_count; f++) {
        if (strcmp(v->files[f].path, skip_path) == 0) continue;
        for (uint32_t i = 0; i < v->files[f].mf.material_count; i++) {
            const trn_terrain_material *m = &v->files[f].mf.materials[i];
            if (m->internal_name && strcmp(m->internal_name, name) == 0 &&
                !trn_terrain_material_is_v1(m))
                return true;
        }
    }
    return false;
}

static const trn_texture_set *find_texture_set(const vctx *v, const char *name)
{
    /* Torque object names are case-insensitive. */
    for (size_t f = 0; f < v->file_count; f++)
        for (uint32_t i = 0; i < v->files[f].mf.texture_set_count; i++) {
            const trn_texture_set *ts = &v->files[f].mf.texture_sets[i];
            if ((ts->name && trn_lvl_ieq(ts->name, name)) ||
                (ts->key && trn_lvl_ieq(ts->key, name)))
                return ts;
        }
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Materials files.
 * ---------------------------------------------------------------------------------------- */

static void load_material_files(vctx *v)
{
    char **paths = NULL;
    size_t n = 0;
    trn_error e;
    trn_error_clear(&e);
    if (trn_lvl_material_files(v->level_dir, &paths, &n, &e)) {
        v->oom = true;
        return;
    }
    v->files = n ? calloc(n, sizeof *v->files) : NULL;
    if (n && !v->files) {
        trn_lvl_free_paths(paths, n);
        v->oom = true;
        return;
    }
    v->file_count = n;
    for (size_t i = 0; i < n; i++) {
        v->files[i].path = paths[i];
        trn_error_clear(&e);
        trn_status st = trn_material_file_read(paths[i], &v->files[i].mf, &e);
        v->files[i].ok = st == TRN_OK;
        if (st) {
            ADD(v, TRN_SEVERITY_ERROR, "materials-invalid", paths[i], e.offset,
                "fix the JSON at that place; the engine skips a materials file it cannot parse, "
                "so every material in it is missing",
                "%s", e.message);
            set_last_position(v, &e);
        }
    }
    free(paths); /* the strings now belong to v->files */
    char old[PATH_MAX];
    if (trn_lvl_join(old, sizeof old, v->level_dir, "art/terrains/materials.json")) {
        for (size_t i = 0; i < n; i++) {
            const trn_material_file *mf = &v->files[i].mf;
            if (strcmp(v->files[i].path, old) != 0 || !mf->material_count) continue;
            uint32_t migrated = 0;
            for (uint32_t k = 0; k < mf->material_count; k++)
                migrated += has_v15_twin(v, mf->materials[k].internal_name, old);
            if (migrated)
                ADD(v, TRN_SEVERITY_WARNING, "materials-deprecated-file", old, -1,
                    "remove the migrated ones from the old file (terrane beamng migrate "
                    "LEVEL_DIR --delete-old) so only one definition of each is left",
                    "%u TerrainMaterial(s) are in the deprecated art/terrains/materials.json, "
                    "%u of them already in main.materials.json as v1.5 materials",
                    mf->material_count, migrated);
            else
                ADD(v, TRN_SEVERITY_WARNING, "materials-deprecated-file", old, -1,
                    "move them to art/terrains/main.materials.json and out of the old file: "
                    "terrane beamng migrate LEVEL_DIR --delete-old, or the editor's Upgrade "
                    "Terrain Material file format",
                    "%u TerrainMaterial(s) are in the deprecated art/terrains/materials.json",
                    mf->material_count);
        }
    }
}

/* ------------------------------------------------------------------------------------------
 * One TerrainBlock and its .ter.
 * ---------------------------------------------------------------------------------------- */

static bool pow2(uint32_t x)
{
    return x && !(x & (x - 1));
}

/* Byte offset of the layer map in a modern-layout file; -1 for legacy files (built, not read). */
static int64_t layers_offset(const trn_ter *ter)
{
    if (ter->layout == TRN_TER_LAYOUT_LEGACY) return -1;
    return 5 + 2 * (int64_t)ter->size * ter->size;
}

/* True when a reader warning says what a dedicated check below reports (with an id of its own
 * and a severity that fits), so it is not listed twice. */
static bool warning_covered(const trn_ter *ter, const trn_ter_warning *w, bool bad_layers)
{
    int64_t n = (int64_t)ter->size * ter->size, at = layers_offset(ter);
    if (bad_layers && (at < 0 ? w->offset < 0 : (w->offset >= at && w->offset < at + n)))
        return true; /* layer-index-out-of-range */
    if (ter->extra_count && at >= 0 && w->offset == at + n) return true; /* ter-extra-maps */
    if (ter->material_count > TRN_TER_MAX_MATERIALS && at >= 0 &&
        w->offset == at + n * (1 + (int64_t)ter->extra_count))
        return true; /* too-many-materials */
    return false;
}

static void check_ter_content(vctx *v, const trn_terrain_block *tb, const trn_ter *ter,
                              const char *ter_path)
{
    uint64_t counts[256];
    trn_ter_layer_histogram(ter, counts);
    uint64_t bad = 0;
    int lo = -1, hi = -1;
    for (uint32_t k = ter->material_count; k < 255; k++)
        if (counts[k]) {
            bad += counts[k];
            if (lo < 0) lo = (int)k;
            hi = (int)k;
        }
    for (uint32_t i = 0; i < ter->warning_count; i++)
        if (!warning_covered(ter, &ter->warnings[i], bad > 0))
            ADD(v, TRN_SEVERITY_WARNING, "ter-warning", ter_path, ter->warnings[i].offset,
                "rewrite the terrain with the World Editor or terrane to normalise it", "%s",
                ter->warnings[i].message);
    if (ter->layout == TRN_TER_LAYOUT_EXTRA_1 || ter->layout == TRN_TER_LAYOUT_EXTRA_4 ||
        ter->layout == TRN_TER_LAYOUT_EXTRA_5) {
        /* The paths themselves, and where the rebuilt terrain goes: the import command export
         * prints writes OUT.ter, which nothing loads. */
        char extra_fix[3 * PATH_MAX + 300], maps[PATH_MAX];
        size_t n = strlen(ter_path);
        snprintf(maps, sizeof maps, "%.*s_maps",
                 (int)(n > 4 && strcasecmp(ter_path + n - 4, ".ter") == 0 ? n - 4 : n), ter_path);
        snprintf(extra_fix, sizeof extra_fix,
                 "rewrite it in the engine's layout: terrane beamng export '%s' -o '%s', then "
                 "run the import command it prints with -o '%s' in place of -o OUT.ter (terrane "
                 "convert keeps the extra maps, so that files round-trip)",
                 ter_path, maps, ter_path);
        /* Four zero maps in a version 8 file are what the World Editor wrote in 2023 (a public
         * level's fresh terrains hold them), so that engine read them; today's editor writes
         * version 9 without them. Any other count the engine misreads. */
        if (ter->version == 8 && ter->layout == TRN_TER_LAYOUT_EXTRA_4)
            ADD(v, TRN_SEVERITY_WARNING, "ter-extra-maps", ter_path,
                layers_offset(ter) + (int64_t)ter->size * ter->size, extra_fix,
                "the file holds 4 extra %u x %u maps after the layer map, as the World Editor "
                "wrote version 8 terrains; the current editor writes version 9 without them",
                ter->size, ter->size);
        else
            ADD(v, TRN_SEVERITY_ERROR, "ter-extra-maps", ter_path,
                layers_offset(ter) + (int64_t)ter->size * ter->size, extra_fix,
                "the file holds %u extra %u x %u map(s) after the layer map; the engine reads "
                "the material names right after the layer map, so it misreads them",
                ter->extra_count, ter->size, ter->size);
    }
    if (ter->version < 7) {
        /* convert never overwrites its input, so the fix names the copy and what to do with it
         * (the bare "convert IN.ter OUT.ter" left a new file nothing loads). */
        char fix[2 * PATH_MAX + 160], copy[PATH_MAX];
        size_t n = strlen(ter_path);
        snprintf(copy, sizeof copy, "%.*s_v9.ter",
                 (int)(n > 4 && strcasecmp(ter_path + n - 4, ".ter") == 0 ? n - 4 : n), ter_path);
        snprintf(fix, sizeof fix,
                 "write a version-9 copy with terrane convert '%s' '%s', then move it over the "
                 "old file or point terrainFile at it (convert never overwrites its input)",
                 ter_path, copy);
        ADD(v, TRN_SEVERITY_WARNING, "ter-version-old", ter_path, 0, fix,
            "version %u is a legacy Torque Game Engine terrain; it loads through the legacy path",
            ter->version);
    }
    if (!pow2(ter->size) || ter->size < TRN_BEAMNG_MIN_RESOLUTION ||
        ter->size > TRN_BEAMNG_MAX_RESOLUTION)
        ADD(v, TRN_SEVERITY_WARNING, "ter-size", ter_path, 1,
            "resample the terrain to a power of two between 128 and 8192",
            "size %u is not a power of two between 128 and 8192", ter->size);
    if (ter->material_count > TRN_TER_MAX_MATERIALS)
        ADD(v, TRN_SEVERITY_WARNING, "too-many-materials", ter_path, -1,
            "merge materials: the engine ignores names past the 254th",
            "%u material names; the engine uses the first 254", ter->material_count);
    if (bad) {
        /* Where the first one is: its byte, and the sample a modder finds in an editor. */
        size_t n = (size_t)ter->size * ter->size, first = 0;
        while (first < n &&
               !(ter->layers[first] >= ter->material_count && ter->layers[first] != 255))
            first++;
        uint32_t x = (uint32_t)(first % ter->size), y = (uint32_t)(first / ter->size);
        int64_t at = layers_offset(ter);
        char range[32];
        if (lo == hi)
            snprintf(range, sizeof range, "layer index %d", lo);
        else
            snprintf(range, sizeof range, "layer indices %d to %d", lo, hi);
        ADD(v, TRN_SEVERITY_ERROR, "layer-index-out-of-range", ter_path,
            at >= 0 ? at + (int64_t)first : -1,
            "add the missing materials to the .ter's list in the right order, or repaint those "
            "samples",
            "%llu sample%s %s %s but the terrain lists only %u material%s; first at x %u, y %u "
            "(y counts from the south edge: pixel (%u, %u) of an exported map); they paint with "
            "the wrong or the warning material",
            (unsigned long long)bad, bad == 1 ? "" : "s", bad == 1 ? "uses" : "use", range,
            ter->material_count, ter->material_count == 1 ? "" : "s", x, y, x, ter->size - 1u - y);
    }
    for (uint32_t i = 0; i < ter->material_count; i++) {
        const char *name = ter->materials[i] ? ter->materials[i] : "";
        mark_used(v, name);
        const char *file = NULL;
        if (find_material(v, name, false, &file)) continue;
        const trn_terrain_material *m = find_material(v, name, true, &file);
        if (m) {
            ADD(v, TRN_SEVERITY_WARNING, "material-name-case", ter_path, -1,
                "use the same case in both places",
                "material %u \"%s\" matches TerrainMaterial \"%s\" (%s) only when case is ignored",
                i, name, m->internal_name, file);
            continue;
        }
        /* Re-importing the terrain into the level adds a placeholder for each material the
         * level lacks; export prints that import for the .ter as it is. The folders are left
         * as words, so that the fix fits a finding whatever the paths. */
        char fix[PATH_MAX + 1024];
        snprintf(fix, sizeof fix,
                 "re-import the terrain, which adds a placeholder TerrainMaterial for each "
                 "missing one: terrane beamng export '%s' -o MAPS_DIR prints the import command; "
                 "run it with --level LEVEL_DIR in place of -o OUT.ter (or add a TerrainMaterial "
                 "with internalName \"%s\" to art/terrains/main.materials.json, or rename the "
                 "material in the .ter)",
                 ter_path, name);
        ADD(v, TRN_SEVERITY_ERROR, "material-unresolved", ter_path, -1, fix,
            "material %u \"%s\" of terrain \"%s\" does not resolve to a TerrainMaterial: no "
            "internalName \"%s\" in the level's materials files, so it shows the warning material",
            i, name, tb->name ? tb->name : "", name);
    }
}

/* The .terrain.json beside the .ter: "x.ter" -> "x.terrain.json". */
static void check_terrain_json(vctx *v, const trn_terrain_block *tb, const trn_ter *ter,
                               const char *ter_path)
{
    char json_path[PATH_MAX];
    size_t n = strlen(ter_path);
    if (n >= 4 && trn_lvl_ieq(ter_path + n - 4, ".ter")) n -= 4;
    if (n + 14 >= sizeof json_path) return;
    memcpy(json_path, ter_path, n);
    memcpy(json_path + n, ".terrain.json", 14);
    struct stat st;
    if (stat(json_path, &st) != 0) {
        ADD(v, TRN_SEVERITY_WARNING, "terrain-json-missing",
            tb->source_file ? tb->source_file : json_path, -1,
            "write it from the .ter: terrane beamng validate LEVEL_DIR --fix-terrain-json (or "
            "resave the terrain in the World Editor, which writes one beside every .ter)",
            "TerrainBlock \"%s\": terrainFile \"%s\" has no .terrain.json beside it (%s); "
            "the engine loads the .ter without it, but the editor and terrain tools read it",
            tb->name ? tb->name : "", tb->terrain_file ? tb->terrain_file : "", json_path);
        set_last_line(v, tb->source_line);
        return;
    }
    trn_terrain_json tj;
    trn_error e;
    trn_error_clear(&e);
    if (trn_terrain_json_read(json_path, &tj, &e)) {
        ADD(v, TRN_SEVERITY_WARNING, "terrain-json-invalid", json_path, e.offset,
            "rewrite it from the .ter: terrane beamng validate LEVEL_DIR --fix-terrain-json (or "
            "resave the terrain in the World Editor)",
            "%s", e.message);
        set_last_position(v, &e);
        return;
    }
    size_t first = v->findings->count;
    if (trn_terrain_json_compare(&tj, json_path, ter, ter_path, tb->terrain_file, v->findings, NULL,
                                 &e))
        v->oom = true;
    trn_terrain_json_dispose(&tj);
    /* --fix-terrain-json writes only inside the level: a file that resolves outside it (a link
     * to a shared folder) needs another fix than the one it would skip. */
    if (v->findings->count > first && !trn_path_inside(v->level_dir, json_path)) {
        char target[PATH_MAX];
        if (!realpath(json_path, target)) snprintf(target, sizeof target, "%s", json_path);
        for (size_t i = first; i < v->findings->count; i++)
            snprintf(v->findings->items[i].fix, sizeof v->findings->items[i].fix,
                     "it resolves outside the level (to %.300s), where --fix-terrain-json does not "
                     "write: replace the link with a copy of the file and run validate "
                     "--fix-terrain-json again, or resave the terrain in the World Editor",
                     target);
    }
}

/* The area a terrain covers and its material names, for the vegetation checks. */
static void remember_area(vctx *v, const trn_terrain_block *tb, const trn_ter *ter)
{
    trn_lvl_terrain_area *grown = realloc(v->areas, (v->area_count + 1) * sizeof *grown);
    if (!grown) {
        v->oom = true;
        return;
    }
    v->areas = grown;
    trn_lvl_terrain_area *a = &grown[v->area_count];
    memset(a, 0, sizeof *a);
    const double side = (double)ter->size * tb->square_size;
    a->x0 = tb->position[0];
    a->y0 = tb->position[1];
    a->x1 = tb->position[0] + side;
    a->y1 = tb->position[1] + side;
    a->materials = calloc(ter->material_count ? ter->material_count : 1, sizeof *a->materials);
    if (!a->materials) {
        v->oom = true;
        return;
    }
    for (uint32_t m = 0; m < ter->material_count; m++) {
        if (!(a->materials[m] = trn_lvl_strdup(ter->materials[m] ? ter->materials[m] : ""))) {
            v->oom = true;
            break;
        }
        a->material_count++;
    }
    v->area_count++;
}

static void check_block(vctx *v, const trn_terrain_block *tb)
{
    const char *items = tb->source_file ? tb->source_file : "";
    const char *name = tb->name ? tb->name : "";
    if (!(tb->square_size > 0)) {
        ADD(v, TRN_SEVERITY_ERROR, "terrain-block-invalid", items, -1,
            "set squareSize to the metres between samples (1 is usual)",
            "TerrainBlock \"%s\": squareSize %g must be above 0", name, tb->square_size);
        set_last_line(v, tb->source_line);
    }
    if (!(tb->max_height > 0)) {
        ADD(v, TRN_SEVERITY_ERROR, "terrain-block-invalid", items, -1,
            "set maxHeight to the height range in metres (2048 is usual)",
            "TerrainBlock \"%s\": maxHeight %g must be above 0", name, tb->max_height);
        set_last_line(v, tb->source_line);
    }
    if (tb->material_texture_set) {
        if (!find_texture_set(v, tb->material_texture_set)) {
            char fix[512];
            snprintf(fix, sizeof fix,
                     "add a TerrainMaterialTextureSet named \"%s\" to art/terrains/"
                     "main.materials.json, or correct materialTextureSet",
                     tb->material_texture_set);
            ADD(v, TRN_SEVERITY_ERROR, "texture-set-missing", items, -1, fix,
                "TerrainBlock \"%s\": materialTextureSet \"%s\" is not defined in any materials "
                "file of the level; the terrain shows the warning material",
                name, tb->material_texture_set);
            set_last_line(v, tb->source_line);
        }
    } else {
        ADD(v, TRN_SEVERITY_WARNING, "terrain-v1-materials", items, -1,
            "upgrade to v1.5 materials: terrane beamng migrate LEVEL_DIR, or the editor's "
            "Upgrade Terrain Materials",
            "TerrainBlock \"%s\" has no materialTextureSet, so its materials use the deprecated "
            "v1 path",
            name);
        set_last_line(v, tb->source_line);
    }
    if (!tb->terrain_file || !tb->terrain_file[0]) {
        ADD(v, TRN_SEVERITY_ERROR, "terrain-file-missing", items, -1,
            "set terrainFile to the .ter's path, such as \"/levels/NAME/theTerrain.ter\"",
            "TerrainBlock \"%s\" has no terrainFile", name);
        set_last_line(v, tb->source_line);
        return;
    }
    char ter_path[PATH_MAX];
    bool mismatch = false;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_beamng_resolve_path(v->level_dir, tb->terrain_file, ter_path,
                                            sizeof ter_path, &mismatch, &e);
    as_given(v, ter_path, sizeof ter_path);
    if (st == TRN_ERR_FORMAT) {
        ADD(v, TRN_SEVERITY_ERROR, "path-outside-level", items, -1,
            "use a game path into the level, such as \"/levels/NAME/theTerrain.ter\", without "
            "'..'",
            "TerrainBlock \"%s\": terrainFile %s", name, e.message);
        set_last_line(v, tb->source_line);
        return;
    }
    if (st == TRN_ERR_UNSUPPORTED) {
        ADD(v, TRN_SEVERITY_ERROR, "terrain-file-elsewhere", items, -1,
            "point terrainFile into this level (\"/levels/<this level>/NAME.ter\") or validate "
            "from the folder that contains levels/",
            "TerrainBlock \"%s\": %s", name, e.message);
        set_last_line(v, tb->source_line);
        return;
    }
    if (st) {
        char fix[PATH_MAX + 128];
        snprintf(fix, sizeof fix,
                 "put the .ter at %s or correct terrainFile (the path is relative to the folder "
                 "that contains levels/)",
                 ter_path[0] ? ter_path : tb->terrain_file);
        ADD(v, TRN_SEVERITY_ERROR, "terrain-file-missing", items, -1, fix,
            "TerrainBlock \"%s\": terrainFile \"%s\" not found (looked for %s); the terrain will "
            "not load",
            name, tb->terrain_file, ter_path[0] ? ter_path : tb->terrain_file);
        set_last_line(v, tb->source_line);
        return;
    }
    if (mismatch) {
        char game[1400], fix[1600];
        game_path_of(v->level_dir, v->level_name, ter_path, game, sizeof game);
        snprintf(fix, sizeof fix, "change terrainFile to \"%s\" (or rename the file)", game);
        ADD(v, TRN_SEVERITY_ERROR, "terrain-file-case", items, -1, fix,
            "TerrainBlock \"%s\": terrainFile \"%s\" matches %s only when case is ignored; it "
            "fails on case-sensitive file systems and in packed mods",
            name, tb->terrain_file, ter_path);
        set_last_line(v, tb->source_line);
    }
    trn_ter ter;
    trn_error_clear(&e);
    st = trn_ter_read(ter_path, &v->limits, &ter, NULL, NULL, &e);
    if (st == TRN_ERR_VERSION) {
        ADD(v, TRN_SEVERITY_ERROR, "ter-version-too-new", ter_path, e.offset,
            "a newer engine wrote it and no reader of version 9 can open it (terrane cannot "
            "either): resave it from that engine's World Editor as version 9, or re-import the "
            "terrain from its heightmap",
            "%s; the engine refuses to load it", e.message);
        return;
    }
    if (st == TRN_ERR_NO_MEMORY) {
        v->oom = true;
        return;
    }
    if (st == TRN_ERR_FORMAT && strstr(e.message, "Git LFS pointer")) {
        ADD(v, TRN_SEVERITY_ERROR, "ter-lfs-pointer", ter_path, 0,
            "fetch the real file: run git lfs pull in the clone it came from (with Git LFS "
            "installed), or take the level from its packed release",
            "%s; the engine cannot load it", e.message);
        return;
    }
    if (st) {
        char fix[300];
        if (e.offset >= 0)
            snprintf(fix, sizeof fix,
                     "the file is damaged at byte %lld: restore a backup or re-import the "
                     "terrain from its heightmap",
                     (long long)e.offset);
        else
            snprintf(fix, sizeof fix,
                     "restore a backup or re-import the terrain from its heightmap");
        ADD(v, TRN_SEVERITY_ERROR, "ter-corrupt", ter_path, e.offset, fix, "%s (%s)", e.message,
            trn_status_name(st));
        return;
    }
    check_ter_content(v, tb, &ter, ter_path);
    check_terrain_json(v, tb, &ter, ter_path);
    remember_area(v, tb, &ter);
    trn_ter_dispose(&ter);
}

/* ------------------------------------------------------------------------------------------
 * The scene tree: names, parents, groups, persistentIds.
 * ---------------------------------------------------------------------------------------- */

/* A named object for sorting: its name and its place in the scene. */
typedef struct named_object {
    const char *name;
    size_t index;
} named_object;

static int cmp_named(const void *a, const void *b)
{
    const named_object *x = a, *y = b;
    int c = strcasecmp(x->name, y->name);
    if (c) return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* "main/MissionGroup/items.level.json:3" of an object, for messages. */
static void where_of(const vctx *v, const trn_lvl_scene *sc, size_t i, char *out, size_t size)
{
    char file[PATH_MAX];
    trn_lvl_copy(file, sizeof file, sc->files[sc->objects[i].file]);
    as_given(v, file, sizeof file);
    snprintf(out, size, "%s:%d", file, sc->objects[i].line);
}

static void check_duplicates(vctx *v, const trn_lvl_scene *sc)
{
    named_object *named = malloc((sc->count ? sc->count : 1) * sizeof *named);
    size_t n = 0;
    if (!named) {
        v->oom = true;
        return;
    }
    for (size_t i = 0; i < sc->count; i++)
        if (sc->objects[i].name && sc->objects[i].name[0])
            named[n++] = (named_object){sc->objects[i].name, i};
    /* Sorted by name (case ignored, as Torque compares them), then by place in the tree. */
    qsort(named, n, sizeof *named, cmp_named);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && strcasecmp(named[a].name, named[b].name) == 0)
            b++;
        if (b - a > 1) {
            const trn_lvl_object *first = &sc->objects[named[a].index],
                                 *second = &sc->objects[named[a + 1].index];
            bool terrains =
                strcmp(first->cls, "TerrainBlock") == 0 && strcmp(second->cls, "TerrainBlock") == 0;
            char at[PATH_MAX + 16], file[PATH_MAX];
            where_of(v, sc, named[a].index, at, sizeof at);
            trn_lvl_copy(file, sizeof file, sc->files[second->file]);
            as_given(v, file, sizeof file);
            ADD(v, terrains ? TRN_SEVERITY_ERROR : TRN_SEVERITY_WARNING, "object-name-duplicate",
                file, -1,
                terrains ? "remove the extra TerrainBlock line (or rename it when it is a second "
                           "terrain): two blocks of one name are two terrains where one was meant"
                         : "rename one of them (or remove the copy): objects are found by name, "
                           "and only one of them answers",
                "%zu objects are named \"%s\" (%s here, and %s at %s)%s", b - a, second->name,
                second->cls[0] ? second->cls : "no class", first->cls[0] ? first->cls : "no class",
                at, terrains ? ": two TerrainBlocks" : "");
            set_last_line(v, second->line);
        }
        a = b;
    }
    free(named);
}

/* Per file: objects outside MissionGroup and objects without a persistentId, counted, at the
 * first one's line. */
static void check_parents(vctx *v, const trn_lvl_scene *sc, const size_t *start)
{
    for (size_t f = 0; f < sc->file_count; f++) {
        bool root = trn_lvl_is_main_items(v->level_dir, sc->files[f]);
        size_t loose = 0, no_id = 0;
        int loose_line = 0, no_id_line = 0;
        const trn_lvl_object *first_loose = NULL;
        for (size_t i = start[f]; i < start[f + 1]; i++) {
            const trn_lvl_object *o = &sc->objects[i];
            bool mission = root && strcmp(o->cls, "SimGroup") == 0 && o->name &&
                           trn_lvl_ieq(o->name, "MissionGroup");
            if (root ? !mission : !o->parent) {
                if (!loose++) {
                    loose_line = o->line;
                    first_loose = o;
                }
            }
            if (!o->has_persistent_id && !no_id++) no_id_line = o->line;
        }
        char file[PATH_MAX];
        trn_lvl_copy(file, sizeof file, sc->files[f]);
        as_given(v, file, sizeof file);
        if (loose) {
            char what[400];
            snprintf(what, sizeof what, "%s%s%s%s",
                     first_loose->cls[0] ? first_loose->cls : "object",
                     first_loose->name ? " \"" : "", first_loose->name ? first_loose->name : "",
                     first_loose->name ? "\"" : "");
            if (root)
                ADD(v, TRN_SEVERITY_WARNING, "object-unparented", file, -1,
                    "move the object into main/MissionGroup/items.level.json with \"__parent\": "
                    "\"MissionGroup\" (main/items.level.json holds only the MissionGroup "
                    "SimGroup, with no __parent)",
                    "%zu object(s) in main/items.level.json lie outside MissionGroup, the first "
                    "the %s; the World Editor shows and saves the level from MissionGroup down",
                    loose, what);
            else
                ADD(v, TRN_SEVERITY_WARNING, "object-unparented", file, -1,
                    "give each object \"__parent\": the name of the SimGroup whose folder holds "
                    "this file",
                    "%zu object(s) have no \"__parent\", the first the %s, so no group holds "
                    "them",
                    loose, what);
            set_last_line(v, loose_line);
        }
        if (no_id) {
            ADD(v, TRN_SEVERITY_WARNING, "persistent-id-missing", file, -1,
                "give each object a \"persistentId\" (a UUID of its own; the World Editor adds "
                "them when it saves the level)",
                "%zu object(s) have no persistentId; the editor and tools that track objects "
                "across saves (prefabs, undo, mission references) cannot",
                no_id);
            set_last_line(v, no_id_line);
        }
    }
}

/* Each folder below main/ is loaded for a SimGroup of its name in the folder above; a folder
 * without one is never read. */
static void check_group_folders(vctx *v, const trn_lvl_scene *sc, const size_t *start)
{
    for (size_t f = 0; f < sc->file_count; f++) {
        const char *path = sc->files[f];
        if (trn_lvl_is_main_items(v->level_dir, path)) continue;
        size_t objects = start[f + 1] - start[f];
        bool terrain = false;
        for (size_t i = start[f]; i < start[f + 1]; i++)
            terrain = terrain || strcmp(sc->objects[i].cls, "TerrainBlock") == 0;
        if (!objects) continue;
        /* path = .../PARENT/GROUP/items.level.json */
        char dir[PATH_MAX], parent_items[PATH_MAX + 20];
        trn_lvl_copy(dir, sizeof dir, path);
        char *slash = strrchr(dir, '/');
        if (!slash) continue;
        *slash = '\0';
        slash = strrchr(dir, '/');
        if (!slash) continue;
        const char *group = slash + 1;
        *slash = '\0';
        if (!trn_lvl_join(parent_items, sizeof parent_items, dir, "items.level.json")) continue;
        bool held = false;
        for (size_t pf = 0; pf < sc->file_count && !held; pf++) {
            if (strcmp(sc->files[pf], parent_items) != 0) continue;
            for (size_t i = start[pf]; i < start[pf + 1] && !held; i++) {
                const trn_lvl_object *o = &sc->objects[i];
                held = strcmp(o->cls, "SimGroup") == 0 && o->name && trn_lvl_ieq(o->name, group);
            }
        }
        if (held) continue;
        char file[PATH_MAX], fix[PATH_MAX + 200];
        trn_lvl_copy(file, sizeof file, path);
        as_given(v, file, sizeof file);
        as_given(v, parent_items, sizeof parent_items);
        snprintf(fix, sizeof fix,
                 "add {\"name\":\"%s\",\"class\":\"SimGroup\",\"__parent\":...} to %s, or "
                 "move the objects into a loaded group",
                 group, parent_items);
        ADD(v, terrain ? TRN_SEVERITY_ERROR : TRN_SEVERITY_WARNING, "group-folder-orphaned", file,
            -1, fix,
            "no SimGroup \"%s\" in %s, so the engine never loads this file: its %zu object(s)%s "
            "are missing from the level",
            group, parent_items, objects, terrain ? ", a TerrainBlock among them," : "");
        set_last_line(v, 1);
    }
}

static void check_scene(vctx *v)
{
    trn_lvl_scene sc;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = trn_lvl_scene_read(NULL, v->level_dir, &sc, &e);
    /* Files that cannot be read are reported by the TerrainBlock reader. */
    if (st == TRN_ERR_NO_MEMORY) v->oom = true;
    if (st) return;
    /* The objects come file by file: start[f] .. start[f + 1] are file f's. */
    size_t *start = calloc(sc.file_count + 1, sizeof *start);
    if (!start) {
        v->oom = true;
        trn_lvl_scene_dispose(&sc);
        return;
    }
    for (size_t i = 0; i < sc.count; i++)
        start[sc.objects[i].file + 1] = i + 1;
    for (size_t f = 1; f <= sc.file_count; f++)
        if (start[f] < start[f - 1]) start[f] = start[f - 1];
    check_duplicates(v, &sc);
    check_parents(v, &sc, start);
    check_group_folders(v, &sc, start);
    free(start);
    trn_lvl_scene_dispose(&sc);
}

/* ------------------------------------------------------------------------------------------
 * Textures.
 * ---------------------------------------------------------------------------------------- */

static const png_cache_entry *png_info(vctx *v, const char *path)
{
    for (size_t i = 0; i < v->png_count; i++)
        if (strcmp(v->pngs[i].path, path) == 0) return &v->pngs[i];
    if (v->png_count == v->png_cap) {
        size_t cap = v->png_cap ? v->png_cap * 2 : 16;
        png_cache_entry *n = realloc(v->pngs, cap * sizeof *n);
        if (!n) {
            v->oom = true;
            return NULL;
        }
        v->pngs = n;
        v->png_cap = cap;
    }
    png_cache_entry *e = &v->pngs[v->png_count];
    memset(e, 0, sizeof *e);
    if (!(e->path = trn_lvl_strdup(path))) {
        v->oom = true;
        return NULL;
    }
    trn_error err;
    trn_error_clear(&err);
    e->status = trn_png_read_info(path, &e->info, &err);
    if (e->status) trn_lvl_copy(e->message, sizeof e->message, err.message);
    v->png_count++;
    return e;
}

static bool has_extension(const char *path)
{
    const char *base = trn_lvl_basename(path);
    return strchr(base, '.') != NULL;
}

/* Resolve a texture path as written in a materials file found at json_path. Extension-less
 * paths (v1 style) try the usual texture extensions. */
static trn_status resolve_texture(vctx *v, const char *json_path, const char *tex, char *out,
                                  size_t out_size, bool *mismatch, trn_error *err)
{
    static const char *const exts[] = {"", ".png", ".dds", ".jpg", ".jpeg", ".tga"};
    size_t n_ext = has_extension(tex) ? 1 : sizeof exts / sizeof exts[0];
    trn_status st = TRN_ERR_NOT_FOUND;
    char first_tried[PATH_MAX] = "";
    for (size_t i = 0; i < n_ext; i++) {
        char candidate[PATH_MAX];
        snprintf(candidate, sizeof candidate, "%s%s", tex, exts[i]);
        bool game = candidate[0] == '/' || strncasecmp(candidate, "levels/", 7) == 0;
        if (game) {
            st = trn_beamng_resolve_path(v->level_dir, candidate, out, out_size, mismatch, err);
        } else {
            /* Relative paths are relative to the materials file's folder. */
            char dir[PATH_MAX];
            trn_lvl_copy(dir, sizeof dir, json_path);
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            else
                trn_lvl_copy(dir, sizeof dir, ".");
            st = trn_lvl_walk_ci(dir, candidate, out, out_size, mismatch, err);
            if ((st == TRN_OK || st == TRN_ERR_NOT_FOUND) && !trn_path_inside(v->level_dir, out))
                return trn_error_set(err, TRN_ERR_FORMAT, tex, -1,
                                     "\"%s\" leads outside the level (through '..' or a symbolic "
                                     "link): refused",
                                     tex);
        }
        if (st != TRN_ERR_NOT_FOUND) return st;
        if (!first_tried[0]) trn_lvl_copy(first_tried, sizeof first_tried, out);
    }
    trn_lvl_copy(out, out_size, first_tried);
    return st;
}

static void check_texture_file(vctx *v, const char *mname, const char *field, const char *tex,
                               const char *json_path, trn_severity sev, int g, int s)
{
    char disk[PATH_MAX];
    bool mismatch = false;
    trn_error e;
    trn_error_clear(&e);
    trn_status st = resolve_texture(v, json_path, tex, disk, sizeof disk, &mismatch, &e);
    as_given(v, disk, sizeof disk);
    if (st == TRN_ERR_FORMAT) {
        if (!reported(v, "path-outside-level", tex))
            ADD(v, TRN_SEVERITY_ERROR, "path-outside-level", json_path, -1,
                "use a game path (\"/levels/NAME/art/...\") or a path inside the level, without "
                "'..'",
                "material \"%s\": %s %s", mname, field, e.message);
        return;
    }
    if (st == TRN_ERR_UNSUPPORTED) {
        if (!reported(v, "texture-not-checked", tex))
            ADD(v, TRN_SEVERITY_INFO, "texture-not-checked", tex, -1,
                "validate from the game's folder (the one that contains levels/) to check it",
                "material \"%s\": %s %s", mname, field, e.message);
        return;
    }
    if (st) {
        if (reported(v, "texture-missing", disk)) return;
        char fix[PATH_MAX + 100];
        snprintf(fix, sizeof fix, "put the texture at %s or correct %s", disk, field);
        ADD(v, sev, "texture-missing", disk, -1, fix,
            "material \"%s\": %s \"%s\" not found; the material falls back to the warning "
            "texture",
            mname, field, tex);
        return;
    }
    if (mismatch && !reported(v, "texture-path-case", disk)) {
        char game[1400], fix[1600];
        game_path_of(v->level_dir, v->level_name, disk, game, sizeof game);
        snprintf(fix, sizeof fix, "change %s to \"%s\" (or rename the file)", field, game);
        ADD(v, sev, "texture-path-case", disk, -1, fix,
            "material \"%s\": %s \"%s\" matches the file only when case is ignored", mname, field,
            tex);
    }
    if (!v->active_set) return; /* v1 materials: existence is all that is checked */
    size_t n = strlen(disk);
    if (n < 4 || !trn_lvl_ieq(disk + n - 4, ".png")) {
        if (!reported(v, "texture-not-png", disk))
            ADD(v, TRN_SEVERITY_WARNING, "texture-not-png", disk, -1,
                "provide a PNG source texture; the v1.5 packer builds its own cache from PNGs",
                "material \"%s\": %s is not a PNG", mname, field);
        return;
    }
    const png_cache_entry *pe = png_info(v, disk);
    if (!pe) return;
    if (pe->status) {
        if (!reported(v, "texture-unreadable", disk))
            ADD(v, sev, "texture-unreadable", disk, -1, "re-save the texture as a PNG",
                "material \"%s\": %s cannot be read: %s", mname, field, pe->message);
        return;
    }
    const trn_png_info *pi = &pe->info;
    if ((!pow2(pi->width) || !pow2(pi->height)) && !reported(v, "texture-size-not-pow2", disk))
        ADD(v, sev, "texture-size-not-pow2", disk, -1,
            "resize it to a power of two equal to the texture set's slot size",
            "material \"%s\": %s is %ux%u, not a power of two", mname, field, pi->width,
            pi->height);
    const trn_texture_set *ts = v->active_set;
    const uint32_t *want = s == 0   ? ts->base_tex_size
                           : s == 1 ? ts->macro_tex_size
                                    : ts->detail_tex_size;
    static const char *const slot_field[3] = {"baseTexSize", "macroTexSize", "detailTexSize"};
    if (want[0] && want[1] && (pi->width != want[0] || pi->height != want[1]) &&
        !reported(v, "texture-size-mismatch", disk)) {
        char fix[300];
        snprintf(fix, sizeof fix, "resize the texture to %ux%u, or change %s of \"%s\"", want[0],
                 want[1], slot_field[s], ts->name ? ts->name : "");
        ADD(v, sev, "texture-size-mismatch", disk, -1, fix,
            "material \"%s\": %s is %ux%u but texture set \"%s\" declares %s [%u, %u]; it "
            "cannot be packed and shows the warning texture",
            mname, field, pi->width, pi->height, ts->name ? ts->name : "", slot_field[s], want[0],
            want[1]);
    }
    bool tagged_linear = pi->has_gama && !pi->has_srgb && pi->gama >= 90000 && pi->gama <= 110000;
    bool tagged_srgb = pi->has_srgb || (pi->has_gama && pi->gama >= 40000 && pi->gama <= 50000);
    if (g == TRN_TEX_BASE_COLOR && s == TRN_TEX_BASE && tagged_linear &&
        !reported(v, "texture-colorspace", disk))
        ADD(v, sev, "texture-colorspace", disk, -1,
            "save it as an sRGB PNG (an sRGB chunk, no gAMA 1.0)",
            "material \"%s\": base colour texture %s is tagged linear (gAMA 1.0); base colour "
            "must be sRGB",
            mname, field);
    if (g != TRN_TEX_BASE_COLOR && tagged_srgb && !reported(v, "texture-colorspace", disk))
        ADD(v, sev, "texture-colorspace", disk, -1,
            "save it as a linear PNG (no sRGB chunk, no gAMA 1/2.2)",
            "material \"%s\": %s is tagged sRGB; normal, roughness, AO and height maps must be "
            "linear",
            mname, field);
}

static void check_material_textures(vctx *v, const trn_terrain_material *m, const char *json_path)
{
    const char *mname = m->internal_name ? m->internal_name : (m->key ? m->key : "");
    /* Problems of materials no terrain uses cannot show in game: lower them to warnings. */
    trn_severity sev = is_used(v, m->internal_name) ? TRN_SEVERITY_ERROR : TRN_SEVERITY_WARNING;
    if (!v->active_set) {
        const char *v1_fields[4] = {"diffuseMap", "normalMap", "detailMap", "macroMap"};
        const char *v1_maps[4] = {m->diffuse_map, m->normal_map, m->detail_map, m->macro_map};
        for (int i = 0; i < 4; i++)
            if (v1_maps[i])
                check_texture_file(v, mname, v1_fields[i], v1_maps[i], json_path, sev, 0, 0);
        return;
    }
    if (trn_terrain_material_is_v1(m)) {
        /* A v1 material under a v1.5 terrain: one finding, not fifteen empty slots; none when
         * migrate already put a v1.5 copy beside it (materials-deprecated-file says so). */
        if (!has_v15_twin(v, m->internal_name, json_path))
            ADD(v, sev, "material-v1-only", json_path, -1,
                "upgrade it: terrane beamng migrate LEVEL_DIR (or the editor's Upgrade Terrain "
                "Materials), then give its v1.5 slots real textures",
                "material \"%s\" has only v1 fields (diffuseMap, detailMap, ...) but the terrain "
                "uses v1.5 materials (texture set \"%s\"), so it has no v1.5 textures",
                mname, v->active_set->name ? v->active_set->name : "");
        return;
    }
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++) {
            char field[48];
            trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "Tex", field, sizeof field);
            if (!m->tex[g][s]) {
                ADD(v, sev, "texture-slot-empty", json_path, -1,
                    "assign a texture; a flat mid-grey texture (flat normal for normal maps) "
                    "turns a layer off",
                    "material \"%s\" has no %s; every group needs base, macro and detail "
                    "textures",
                    mname, field);
                continue;
            }
            check_texture_file(v, mname, field, m->tex[g][s], json_path, sev, g, s);
        }
}

/* ------------------------------------------------------------------------------------------
 * Is it a level at all?
 * ---------------------------------------------------------------------------------------- */

static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* What a level folder holds: main/ (the scene tree with items.level.json), info.json, the older
 * main.level.json or a .mis mission file, or art/terrains/. Without any of them the materials
 * walk would read every JSON file under the folder and report files that are no level's. */
static bool looks_like_level(const char *dir)
{
    char p[PATH_MAX];
    if ((trn_lvl_join(p, sizeof p, dir, "main") && trn_lvl_is_dir(p)) ||
        (trn_lvl_join(p, sizeof p, dir, "art/terrains") && trn_lvl_is_dir(p)) ||
        (trn_lvl_join(p, sizeof p, dir, "info.json") && is_file(p)) ||
        (trn_lvl_join(p, sizeof p, dir, "main.level.json") && is_file(p)))
        return true;
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = n > 4 && trn_lvl_ieq(e->d_name + n - 4, ".mis");
    }
    closedir(d);
    return found;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The level folders directly inside parent, sorted, as "parent/a, parent/b" (at most four, then
 * "and N more") into out. Returns how many there are. */
static size_t list_levels(const char *parent, char *out, size_t out_size)
{
    out[0] = '\0';
    DIR *d = opendir(parent);
    if (!d) return 0;
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char child[PATH_MAX];
        if (!trn_lvl_join(child, sizeof child, parent, e->d_name) || !trn_lvl_is_dir(child) ||
            !looks_like_level(child))
            continue;
        if (count == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            char **nn = realloc(names, ncap * sizeof *nn);
            if (!nn) break;
            names = nn;
            cap = ncap;
        }
        if (!(names[count] = trn_lvl_strdup(e->d_name))) break;
        count++;
    }
    closedir(d);
    if (count > 1) qsort(names, count, sizeof *names, cmp_names);
    size_t len = 0;
    for (size_t i = 0; i < count && i < 4; i++) {
        int w = snprintf(out + len, out_size - len, "%s%s%s%s", i ? ", " : "", parent,
                         parent[0] && parent[strlen(parent) - 1] == '/' ? "" : "/", names[i]);
        if (w < 0 || (size_t)w >= out_size - len) break;
        len += (size_t)w;
    }
    if (count > 4 && len < out_size)
        snprintf(out + len, out_size - len, " and %zu more", count - 4);
    for (size_t i = 0; i < count; i++)
        free(names[i]);
    free(names);
    return count;
}

/* The error for a folder that is not a level, naming the levels it holds when it is a game
 * folder (it has levels/) or a levels/ folder itself. */
static trn_status not_a_level(const char *level_dir, trn_error *err)
{
    char levels[PATH_MAX], found[1024];
    const char *what = "give the levels/NAME folder of a level";
    if (trn_lvl_join(levels, sizeof levels, level_dir, "levels") && trn_lvl_is_dir(levels) &&
        list_levels(levels, found, sizeof found))
        what = "it holds a levels/ folder: validate one of its levels, such as";
    else if (list_levels(level_dir, found, sizeof found))
        what = "it holds level folders: validate one of them, such as";
    else
        found[0] = '\0';
    return trn_error_set(err, TRN_ERR_FORMAT, level_dir, -1,
                         "does not look like a BeamNG level: expected main/ (with "
                         "items.level.json), info.json or art/terrains/ in it, found none; %s%s%s",
                         what, found[0] ? " " : "", found);
}

/* ------------------------------------------------------------------------------------------
 * Entry point.
 * ---------------------------------------------------------------------------------------- */

static void vctx_dispose(vctx *v)
{
    for (size_t i = 0; i < v->file_count; i++) {
        free(v->files[i].path);
        trn_material_file_dispose(&v->files[i].mf);
    }
    free(v->files);
    for (size_t i = 0; i < v->used_count; i++)
        free(v->used[i]);
    free(v->used);
    for (size_t i = 0; i < v->png_count; i++)
        free(v->pngs[i].path);
    free(v->pngs);
    for (size_t i = 0; i < v->area_count; i++) {
        for (uint32_t m = 0; m < v->areas[i].material_count; m++)
            free(v->areas[i].materials[m]);
        free(v->areas[i].materials);
    }
    free(v->areas);
}

trn_status trn_beamng_validate(const char *level_dir, const trn_beamng_validate_options *options,
                               trn_findings *findings, trn_progress_fn progress, void *user,
                               trn_error *err)
{
    if (!level_dir || !findings)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "validate needs a level folder and a findings list");
    if (is_file(level_dir))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, level_dir, -1,
                             "is a file, not a level folder: give the levels/NAME folder that "
                             "holds main/items.level.json");
    if (!trn_lvl_is_dir(level_dir))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, level_dir, -1,
                             "level folder not found (expected a levels/NAME folder)");
    if (!looks_like_level(level_dir)) return not_a_level(level_dir, err);
    vctx v;
    memset(&v, 0, sizeof v);
    v.level_dir = level_dir;
    v.findings = findings;
    if (options) v.opt = *options;
    if (v.opt.limits)
        v.limits = *v.opt.limits;
    else
        trn_ter_limits_default(&v.limits);
    if (realpath(level_dir, v.real_level)) v.real_level_len = strlen(v.real_level);
    if (v.real_level_len == 1) v.real_level_len = 0; /* "/" would match every path */
    if (!trn_lvl_level_name(level_dir, v.level_name, sizeof v.level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, level_dir, -1,
                             "cannot tell the level's name from its folder");
    size_t first = findings->count;
    trn_progress root = trn_progress_make(progress, user);
    trn_status st = TRN_OK;
    if (trn_progress_report(&root, 0.0, "materials")) goto cancel;
    check_interrupted_writes(&v);
    load_material_files(&v);

    trn_terrain_block *blocks = NULL;
    size_t block_count = 0;
    trn_error e;
    trn_error_clear(&e);
    /* Bad lines become level-items-invalid findings; the blocks on the other lines are checked
     * as usual, as the engine still loads them. */
    size_t items_before = findings->count;
    trn_status bst = trn_level_find_terrain_blocks(level_dir, &blocks, &block_count, findings, &e);
    size_t items_problems = findings->count - items_before;
    if (bst == TRN_ERR_NO_MEMORY)
        v.oom = true;
    else if (bst) {
        ADD(&v, TRN_SEVERITY_ERROR, "level-items-invalid", e.file, e.offset,
            "make main/ and its items files readable", "%s", e.message);
        set_last_position(&v, &e);
    } else if (block_count == 0) {
        char items[PATH_MAX];
        trn_lvl_join(items, sizeof items, level_dir, "main/items.level.json");
        if (items_problems)
            ADD(&v, TRN_SEVERITY_WARNING, "terrain-block-missing", items, -1,
                "if one of the lines reported as level-items-invalid is the TerrainBlock, fix it; "
                "otherwise add a terrain: terrane beamng import HEIGHTMAP --level LEVEL_DIR, or "
                "create one",
                "the level has no TerrainBlock in main/ that can be read (%zu item line(s) or "
                "file(s) could not be read)",
                items_problems);
        else
            ADD(&v, TRN_SEVERITY_WARNING, "terrain-block-missing", items, -1,
                "add a terrain: terrane beamng import HEIGHTMAP --level LEVEL_DIR, or create one",
                "the level has no TerrainBlock in main/");
    }
    check_scene(&v);
    for (size_t i = 0; i < block_count; i++)
        if (!v.active_set && blocks[i].material_texture_set)
            v.active_set = find_texture_set(&v, blocks[i].material_texture_set);
    for (size_t i = 0; i < block_count && !v.oom; i++) {
        if (trn_progress_report(&root, 0.1 + 0.6 * (double)i / (double)block_count, "terrain")) {
            trn_terrain_blocks_free(blocks, block_count);
            goto cancel;
        }
        check_block(&v, &blocks[i]);
    }
    trn_terrain_blocks_free(blocks, block_count);
    if (!v.oom)
        trn_lvl_check_vegetation(level_dir, v.level_name, v.areas, v.area_count, findings, &v.oom);
    if (!v.opt.skip_textures) {
        for (size_t f = 0; f < v.file_count && !v.oom; f++) {
            if (trn_progress_report(&root, 0.7 + 0.3 * (double)f / (double)v.file_count,
                                    "textures"))
                goto cancel;
            for (uint32_t i = 0; i < v.files[f].mf.material_count; i++)
                check_material_textures(&v, &v.files[f].mf.materials[i], v.files[f].path);
        }
    }
    if (trn_progress_report(&root, 1.0, "done")) goto cancel;
    if (v.oom) st = trn_error_set(err, TRN_ERR_NO_MEMORY, level_dir, -1, "out of memory");
    vctx_dispose(&v);
    return st;
cancel:
    /* Leave the caller's list as it was. */
    findings->count = first;
    vctx_dispose(&v);
    return trn_error_set(err, TRN_ERR_CANCELLED, level_dir, -1, "cancelled");
}

/* A write that died part-way: a complete journal means files of one set are mixed. */
static void check_interrupted_writes(vctx *v)
{
    trn_recovery_report rep;
    trn_error e;
    if (trn_write_set_scan(v->level_dir, true, &rep, &e) != TRN_OK) return;
    char fix[1400];
    snprintf(fix, sizeof fix, "run 'terrane recover %s' to finish it", v->level_dir);
    if (rep.completed)
        ADD(v, TRN_SEVERITY_ERROR, "write-interrupted", rep.first_journal, -1, fix,
            "%u write(s) into this level stopped part-way (a crash or kill): some files are new, "
            "others old, until the write is finished",
            rep.completed);
    snprintf(fix, sizeof fix, "run 'terrane recover %s' to remove them", v->level_dir);
    if (rep.discarded || rep.temporaries_removed)
        ADD(v, TRN_SEVERITY_WARNING, "write-leftovers",
            rep.first_journal[0] ? rep.first_journal : NULL, -1, fix,
            "%u unfinished write(s) and %u temporary file(s) left by runs that stopped before "
            "replacing anything%s",
            rep.discarded, rep.temporaries_removed,
            rep.completed ? "" : "; the level's files are consistent");
    if (rep.refused)
        ADD(v, TRN_SEVERITY_ERROR, "write-journal-refused", NULL, -1,
            "delete the journal file if you did not expect it; nothing was changed",
            "%u write journal(s) in this level were not written by you and are never replayed "
            "(%s)",
            rep.refused, rep.refused_reason);
    if (rep.in_progress)
        ADD(v, TRN_SEVERITY_INFO, "write-in-progress", rep.first_journal, -1,
            "validate again when the other run has finished",
            "another process is writing into this level right now");
}

/* ------------------------------------------------------------------------------------------
 * Rewriting .terrain.json files from their .ter.
 * ---------------------------------------------------------------------------------------- */

void trn_beamng_terrain_json_result_dispose(trn_beamng_terrain_json_result *result)
{
    if (!result) return;
    trn_lvl_free_paths(result->written, result->written_count);
    trn_lvl_free_paths(result->outside, result->outside_count);
    memset(result, 0, sizeof *result);
}

/* Append a copy of path to a result list; false when out of memory. */
static bool push_path(char ***list, uint32_t *count, const char *path)
{
    char **grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) return false;
    *list = grown;
    char *copy = trn_lvl_strdup(path);
    if (!copy) return false;
    grown[(*count)++] = copy;
    return true;
}

/* The .terrain.json beside a .ter ("x.ter" -> "x.terrain.json"); false when too long. */
static bool terrain_json_path(const char *ter_path, char *out, size_t out_size)
{
    size_t n = strlen(ter_path);
    if (n >= 4 && trn_lvl_ieq(ter_path + n - 4, ".ter")) n -= 4;
    if (n + 14 > out_size) return false;
    memcpy(out, ter_path, n);
    memcpy(out + n, ".terrain.json", 14);
    return true;
}

/* The heightmap image's game path the engine writes beside a .ter: "/levels/L/x.ter" ->
 * "/levels/L/x.terrainheightmap.png". */
static void heightmap_game_path(const char *terrain_file, char *out, size_t out_size)
{
    size_t n = strlen(terrain_file);
    if (n >= 4 && trn_lvl_ieq(terrain_file + n - 4, ".ter")) n -= 4;
    snprintf(out, out_size, "%.*s.terrainheightmap.png", (int)n, terrain_file);
}

/* Write one block's .terrain.json when it differs; *written tells whether it did. */
static trn_status rewrite_one(trn_write_set *ws, const trn_terrain_block *tb, const trn_ter *ter,
                              const char *json_path, bool *written, trn_error *err)
{
    *written = false;
    char heightmap[PATH_MAX + 32];
    trn_terrain_json old;
    trn_error e;
    trn_error_clear(&e);
    if (trn_terrain_json_read(json_path, &old, &e) == TRN_OK && old.heightmap_image &&
        old.heightmap_image[0])
        trn_lvl_copy(heightmap, sizeof heightmap, old.heightmap_image);
    else
        heightmap_game_path(tb->terrain_file, heightmap, sizeof heightmap);
    trn_terrain_json_dispose(&old);
    trn_terrain_json tj;
    trn_status st = trn_terrain_json_from_ter(ter, tb->terrain_file, heightmap, &tj, err);
    if (st) return st;
    char *text = NULL;
    size_t n = 0;
    st = trn_terrain_json_serialize(&tj, &text, &n, err);
    trn_terrain_json_dispose(&tj);
    if (st) return st;
    FILE *fp = fopen(json_path, "rb");
    bool same = false;
    if (fp) {
        /* Compare without reading a wrong huge file whole: one byte more than the new text. */
        char *cur = malloc(n + 1);
        size_t got = cur ? fread(cur, 1, n + 1, fp) : 0;
        same = cur && got == n && memcmp(cur, text, n) == 0;
        free(cur);
        fclose(fp);
    }
    if (!same) {
        const char *target = NULL;
        if (!(st = trn_write_set_stage(ws, json_path, &target, err)))
            st = trn_file_write_atomic(target, text, n, err);
        *written = st == TRN_OK;
    }
    free(text);
    return st;
}

trn_status trn_beamng_write_terrain_json(const char *level_dir, const trn_ter_limits *limits,
                                         trn_beamng_terrain_json_result *result, trn_error *err)
{
    trn_beamng_terrain_json_result local;
    trn_beamng_terrain_json_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    if (!level_dir)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no level folder given");
    if (is_file(level_dir))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, level_dir, -1,
                             "is a file, not a level folder: give the levels/NAME folder that "
                             "holds main/items.level.json");
    if (!trn_lvl_is_dir(level_dir))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, level_dir, -1, "level folder not found");
    trn_ter_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_ter_limits_default(&lim);
    /* as_given names written files the way level_dir spells them. */
    vctx v;
    memset(&v, 0, sizeof v);
    v.level_dir = level_dir;
    if (realpath(level_dir, v.real_level)) v.real_level_len = strlen(v.real_level);
    if (v.real_level_len == 1) v.real_level_len = 0;
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    trn_findings ignored = {0}; /* broken lines: validate's business */
    trn_status st = trn_level_find_terrain_blocks(level_dir, &blocks, &count, &ignored, err);
    trn_findings_dispose(&ignored);
    trn_write_set *ws = NULL, *own = NULL;
    if (!st) st = trn_write_own_begin(NULL, &ws, &own, err);
    for (size_t i = 0; st == TRN_OK && i < count; i++) {
        const trn_terrain_block *tb = &blocks[i];
        char ter_path[PATH_MAX], json_path[PATH_MAX];
        bool mismatch = false;
        trn_ter ter;
        trn_error e;
        trn_error_clear(&e);
        if (!tb->terrain_file || !tb->terrain_file[0] ||
            trn_beamng_resolve_path(level_dir, tb->terrain_file, ter_path, sizeof ter_path,
                                    &mismatch, &e) != TRN_OK ||
            !terrain_json_path(ter_path, json_path, sizeof json_path)) {
            res->skipped_count++;
            continue;
        }
        if (!trn_path_inside(level_dir, json_path)) {
            /* Only this level's files are written; the caller names the ones left. */
            as_given(&v, json_path, sizeof json_path);
            if (!push_path(&res->outside, &res->outside_count, json_path)) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, json_path, -1, "out of memory");
                break;
            }
            continue;
        }
        trn_status rst = trn_ter_read(ter_path, &lim, &ter, NULL, NULL, &e);
        if (rst == TRN_ERR_NO_MEMORY) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, ter_path, -1, "out of memory");
            break;
        }
        if (rst) {
            res->skipped_count++;
            continue;
        }
        bool written = false;
        trn_error we;
        trn_error_clear(&we);
        st = rewrite_one(ws, tb, &ter, json_path, &written, &we);
        trn_ter_dispose(&ter);
        if (st == TRN_ERR_FORMAT) {
            /* A material name that is not UTF-8 cannot be written as JSON: leave that file. */
            res->skipped_count++;
            st = TRN_OK;
            continue;
        }
        if (st) {
            if (err) *err = we;
            break;
        }
        if (!written) {
            res->unchanged_count++;
            continue;
        }
        as_given(&v, json_path, sizeof json_path);
        if (!push_path(&res->written, &res->written_count, json_path)) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, json_path, -1, "out of memory");
            break;
        }
    }
    trn_terrain_blocks_free(blocks, count);
    st = trn_write_own_finish(own, st, err);
    if (st || !result) trn_beamng_terrain_json_result_dispose(res);
    return st;
}
