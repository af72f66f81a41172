/* Project asset manifests and resolving a recipe's palette (and its material set) by asset id. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "recipe/assets.h"
#include "recipe/recipe_internal.h"
#include "terrane/palette.h"

static const char *example_source(const char *type)
{
    if (strcmp(type, "terrain_palette") == 0) return "meadow.palette.json";
    if (strcmp(type, "terrain_material_set") == 0) return "meadow.materials.json";
    return "desert.preset.json";
}

trn_status trn_rcp_manifest_read(const char *root, const char *path, const char *rel,
                                 const char *want_type, trn_rcp_manifest *m, trn_error *err)
{
    memset(m, 0, sizeof *m);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(path, TRN_RCP_MAX_FILE_SIZE, &data, &size, err);
    if (st) return st;
    json_error_t je;
    size_t bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF ? 3 : 0;
    json_t *root_json =
        json_loadb((const char *)data + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root_json) {
        trn_json_pos pos = trn_json_pos_of_offset(
            (const char *)data, size, bom + (je.position > 0 ? (size_t)je.position - 1 : 0));
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        free(data);
        return TRN_ERR_JSON;
    }
    const char *type =
        json_string_value(json_object_get(json_object_get(root_json, "settings"), "content_type"));
    if (!type) type = json_string_value(json_object_get(root_json, "type"));
    snprintf(m->content_type, sizeof m->content_type, "%s", type ? type : "");
    m->matches = type && strcmp(type, want_type) == 0;
    size_t rel_len = strlen(rel);
    if (rel_len >= 11 && strcmp(rel + rel_len - 11, ".asset.json") == 0) rel_len -= 11;
    int n2 = snprintf(m->id, sizeof m->id, "asset://%.*s", (int)rel_len, rel);
    if (!m->matches) {
        json_decref(root_json);
        free(data);
        return TRN_OK;
    }
    const char *source = json_string_value(json_object_get(root_json, "source"));
    if (!source || !*source || source[0] == '/') {
        trn_json_step step = {"source", 0};
        trn_json_pos pos;
        trn_json_locate((const char *)data, size, &step, 1, TRN_JSON_VALUE, &pos);
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset,
                      "source: expected the %s document's file name relative to the "
                      "manifest's folder (such as \"%s\")",
                      strcmp(want_type, "terrain_preset") == 0 ? "preset" : want_type,
                      example_source(want_type));
        trn_error_set_position(err, pos.line, pos.column);
        json_decref(root_json);
        free(data);
        return TRN_ERR_JSON;
    }
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    int n1 = snprintf(m->source_path, sizeof m->source_path, "%.*s%s", dir_len, path, source);
    json_decref(root_json);
    free(data);
    if (n1 < 0 || (size_t)n1 >= sizeof m->source_path || n2 < 0 || (size_t)n2 >= sizeof m->id)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1, "the %s's path is too long", want_type);
    /* '..' or a symbolic link must not lead a manifest out of its project. */
    if (!trn_path_inside(root, m->source_path))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "source: \"%s\" leads outside the project folder %s (through "
                             "'..' or a symbolic link); a %s document must be inside it",
                             m->source_path + dir_len, root,
                             strcmp(want_type, "terrain_preset") == 0 ? "preset" : want_type);
    return TRN_OK;
}

trn_status trn_rcp_manifest_source(const trn_rcp_manifest *m, char **text, size_t *size,
                                   trn_error *err)
{
    uint8_t *data = NULL;
    trn_status st = trn_file_read_all(m->source_path, TRN_RCP_MAX_FILE_SIZE, &data, size, err);
    *text = (char *)data;
    return st;
}

/* ---- resolving by id ------------------------------------------------------------------------ */

/* "asset://a/b": a relative path of non-empty segments, none "." or "..". */
static bool asset_rel_ok(const char *id)
{
    if (strncmp(id, "asset://", 8) != 0) return false;
    const char *s = id + 8;
    if (!*s) return false;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        if (memchr(s, '\\', n)) return false;
        s += n + (e ? 1 : 0);
        if (e && !*s) return false;
    }
    return true;
}

/* Find id's manifest in root: root/REL.asset.json. */
static trn_status load_from_root(const char *root, const char *id, const char *want_type,
                                 trn_rcp_manifest *m, trn_error *err)
{
    char path[4096], rel[1200];
    int n1 = snprintf(rel, sizeof rel, "%s.asset.json", id + 8);
    int n2 = snprintf(path, sizeof path, "%s/%s", root, rel);
    if (n1 < 0 || (size_t)n1 >= sizeof rel || n2 < 0 || (size_t)n2 >= sizeof path)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "the asset id '%.200s' is too long", id);
    trn_status st = trn_rcp_manifest_read(root, path, rel, want_type, m, err);
    if (st) return st;
    if (!m->matches)
        return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                             "asset '%.200s' is %s%s, not a %s (its manifest's "
                             "settings.content_type must be \"%s\")",
                             id, m->content_type[0] ? "a " : "",
                             m->content_type[0] ? m->content_type : "of no content type", want_type,
                             want_type);
    return TRN_OK;
}

/* The project folder: the nearest folder at or above start that holds id's manifest. */
static trn_status find_root(const char *start, const char *id, const char *what, char *root,
                            size_t root_size, trn_error *err)
{
    char *dir = realpath(start, NULL);
    if (!dir)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, start, -1,
                             "cannot find the %s's folder to resolve '%.200s'", what, id);
    for (;;) {
        char path[4096];
        int n = snprintf(path, sizeof path, "%s%s%s.asset.json", dir,
                         strcmp(dir, "/") == 0 ? "" : "/", id + 8);
        struct stat sb;
        if (n > 0 && (size_t)n < sizeof path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            snprintf(root, root_size, "%s", dir);
            free(dir);
            return TRN_OK;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(dir, "/") == 0) break;
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    free(dir);
    return trn_error_set(err, TRN_ERR_NOT_FOUND, start, -1,
                         "no asset '%.200s': no manifest %s.asset.json in the %s's folder or "
                         "any folder above it",
                         id, id + 8, what);
}

/* Check an asset id, find the project that holds its manifest (the nearest folder at or above
 * the recipe's) and read the manifest, which must be of want_type. what names the recipe field
 * in messages ("palette", "material_set"). */
static trn_status resolve_asset(const char *recipe_path, const char *asset_id, const char *what,
                                const char *example, const char *want_type, char *root,
                                size_t root_size, trn_rcp_manifest *m, trn_error *err)
{
    if (!asset_rel_ok(asset_id))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, recipe_path, -1,
                             "%s: expected an asset id such as \"%s\" (a relative path without "
                             "'.' or '..' parts), found '%.200s'",
                             what, example, asset_id);
    char start[4096] = ".";
    const char *slash = recipe_path ? strrchr(recipe_path, '/') : NULL;
    if (slash)
        snprintf(start, sizeof start, "%.*s", slash == recipe_path ? 1 : (int)(slash - recipe_path),
                 recipe_path);
    trn_status st = find_root(start, asset_id, strcmp(want_type, "Terrain") == 0 ? "scene" : "recipe",
                              root, root_size, err);
    if (st) {
        if (err && st == TRN_ERR_NOT_FOUND) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            trn_error_set(err, st, recipe_path, -1, "%s: %s", what, msg);
        }
        return st;
    }
    return load_from_root(root, asset_id, want_type, m, err);
}

trn_status trn_terrain_asset_resolve(const char *scene_path, const char *asset_id, char *source,
                                     size_t source_size, trn_error *err)
{
    if (!asset_id || !source || !source_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, scene_path, -1,
                             "trn_terrain_asset_resolve: asset_id and source are required");
    source[0] = '\0';
    char root[4096];
    trn_rcp_manifest m;
    trn_status st = resolve_asset(scene_path, asset_id, "asset", "asset://terrain/landscape",
                                  "Terrain", root, sizeof root, &m, err);
    if (st) return st;
    if (strlen(m.source_path) >= source_size)
        return trn_error_set(err, TRN_ERR_LIMIT, scene_path, -1, "the asset's path is too long");
    struct stat sb;
    if (stat(m.source_path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, m.source_path, -1,
                             "asset '%.200s': its manifest names %s, which is missing", asset_id,
                             m.source_path);
    snprintf(source, source_size, "%s", m.source_path);
    return TRN_OK;
}

trn_status trn_palette_resolve(const char *recipe_path, const char *asset_id, trn_palette *out,
                               trn_material_set *set_out, trn_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (set_out) memset(set_out, 0, sizeof *set_out);
    if (!asset_id || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, recipe_path, -1,
                             "trn_palette_resolve: asset_id and palette are required");
    char root[4096];
    trn_rcp_manifest m;
    trn_status st =
        resolve_asset(recipe_path, asset_id, "palette", "asset://terrain/palettes/meadow",
                      "terrain_palette", root, sizeof root, &m, err);
    if (st) return st;
    char *text = NULL;
    size_t size = 0;
    if ((st = trn_rcp_manifest_source(&m, &text, &size, err))) return st;
    st = trn_palette_parse(text, size, m.source_path, out, err);
    free(text);
    if (st || !set_out || !out->material_set) return st;
    /* The material set belongs to the palette's project. */
    char set_path[4096];
    int n = snprintf(set_path, sizeof set_path, "%s/%s.asset.json", root, out->material_set + 8);
    struct stat sb;
    if (!asset_rel_ok(out->material_set) || n < 0 || (size_t)n >= sizeof set_path ||
        stat(set_path, &sb) != 0) {
        st = trn_error_set(err, TRN_ERR_NOT_FOUND, m.source_path, -1,
                           "material_set: palette '%.200s' names the material set '%.200s', "
                           "which the project %s lacks (no manifest %s.asset.json)",
                           asset_id, out->material_set, root, out->material_set + 8);
    } else {
        trn_rcp_manifest sm;
        st = load_from_root(root, out->material_set, "terrain_material_set", &sm, err);
        if (!st) st = trn_rcp_manifest_source(&sm, &text, &size, err);
        if (!st) {
            st = trn_material_set_parse(text, size, sm.source_path, set_out, err);
            free(text);
        }
    }
    if (st) trn_palette_dispose(out);
    return st;
}

trn_status trn_material_set_resolve(const char *recipe_path, const char *asset_id,
                                    trn_material_set *out, trn_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (!asset_id || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, recipe_path, -1,
                             "trn_material_set_resolve: asset_id and set are required");
    char root[4096];
    trn_rcp_manifest m;
    trn_status st =
        resolve_asset(recipe_path, asset_id, "material_set", "asset://terrain/materials/landscape",
                      "terrain_material_set", root, sizeof root, &m, err);
    if (st) return st;
    char *text = NULL;
    size_t size = 0;
    if ((st = trn_rcp_manifest_source(&m, &text, &size, err))) return st;
    st = trn_material_set_parse(text, size, m.source_path, out, err);
    free(text);
    return st;
}

/* "maps.KEY: MESSAGE" at the map's value in the document text. */
static trn_status map_error(trn_error *err, trn_status code, const trn_material *m,
                            const char *text, size_t size, int map, const char *msg)
{
    trn_json_path path = {{{0}}, 0};
    trn_json_path_push_key(&path, "maps");
    trn_json_path_push_key(&path, trn_material_map_name(map));
    return trn_json_error_at(err, code, m->source, text, size, &path, TRN_JSON_VALUE, msg);
}

trn_status trn_material_resolve(const char *project_root, const char *asset_id, trn_material *out,
                                bool *no_manifest, trn_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (no_manifest) *no_manifest = false;
    if (!project_root || !asset_id || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, project_root, -1,
                             "trn_material_resolve: project_root, asset_id and material are "
                             "required");
    if (!asset_rel_ok(asset_id))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, project_root, -1,
                             "expected a Material asset id such as \"asset://materials/soil\" (a "
                             "relative path without '.' or '..' parts), found '%.200s'",
                             asset_id);
    char *root = realpath(project_root, NULL);
    if (!root)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, project_root, -1,
                             "cannot find the project folder %s", project_root);
    char path[4096], rel[1200];
    const int n1 = snprintf(rel, sizeof rel, "%s.asset.json", asset_id + 8);
    const int n2 = snprintf(path, sizeof path, "%s/%s", root, rel);
    trn_status st = TRN_OK;
    struct stat sb;
    if (n1 < 0 || (size_t)n1 >= sizeof rel || n2 < 0 || (size_t)n2 >= sizeof path) {
        st = trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "the asset id '%.200s' is too long",
                           asset_id);
    } else if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        if (no_manifest) *no_manifest = true;
        st = trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1,
                           "no Material asset '%.200s': the project %s has no manifest %s", asset_id,
                           root, rel);
    }
    trn_rcp_manifest m;
    if (!st) st = load_from_root(root, asset_id, "Material", &m, err);
    char *text = NULL;
    size_t size = 0;
    if (!st) st = trn_rcp_manifest_source(&m, &text, &size, err);
    if (!st) st = trn_material_parse(text, size, m.source_path, out, err);
    if (!st && (!(out->source = strdup(m.source_path)) || !(out->id = strdup(asset_id)) ||
                !(out->project = strdup(root))))
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, m.source_path, -1, "out of memory");
    for (int k = 0; !st && k < TRN_MAP_COUNT; k++) {
        if (!out->maps[k]) continue;
        const char *slash = strrchr(m.source_path, '/');
        const int dir = slash ? (int)(slash - m.source_path + 1) : 0;
        char file[4096], msg[1200];
        const int n = snprintf(file, sizeof file, "%.*s%s", dir, m.source_path, out->maps[k]);
        char *real = n > 0 && (size_t)n < sizeof file ? realpath(file, NULL) : NULL;
        if (!real || stat(real, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            snprintf(msg, sizeof msg, "the %s map %.200s is missing (no file %.300s)",
                     trn_material_map_name(k), out->maps[k], file);
            st = map_error(err, TRN_ERR_NOT_FOUND, out, text, size, k, msg);
        } else if (!trn_path_inside(root, real)) {
            snprintf(msg, sizeof msg,
                     "the %s map %.200s leads outside the project folder %.300s (through a "
                     "symbolic link); a Material's maps must be inside it",
                     trn_material_map_name(k), out->maps[k], root);
            st = map_error(err, TRN_ERR_INVALID_ARGUMENT, out, text, size, k, msg);
        } else {
            out->paths[k] = real;
            real = NULL;
        }
        free(real);
    }
    free(text);
    free(root);
    if (st) {
        bool keep = no_manifest && *no_manifest;
        trn_material_dispose(out);
        if (no_manifest) *no_manifest = keep;
    }
    return st;
}

trn_status trn_material_find(const char *recipe_path, const char *asset_id, trn_material *out,
                             bool *no_manifest, trn_error *err)
{
    if (out) memset(out, 0, sizeof *out);
    if (no_manifest) *no_manifest = false;
    if (!asset_id || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, recipe_path, -1,
                             "trn_material_find: asset_id and material are required");
    if (!asset_rel_ok(asset_id)) return trn_material_resolve(".", asset_id, out, NULL, err);
    char start[4096] = ".", root[4096];
    const char *slash = recipe_path ? strrchr(recipe_path, '/') : NULL;
    if (slash)
        snprintf(start, sizeof start, "%.*s", slash == recipe_path ? 1 : (int)(slash - recipe_path),
                 recipe_path);
    trn_status st = find_root(start, asset_id, "recipe", root, sizeof root, err);
    if (st == TRN_ERR_NOT_FOUND && no_manifest) *no_manifest = true;
    if (st) return st;
    return trn_material_resolve(root, asset_id, out, no_manifest, err);
}
