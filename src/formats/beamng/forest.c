/* BeamNG forest: scatter instances as forest item files, TSForestItemData and the Forest object. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "level_internal.h"
#include "terrane/beamng_forest.h"
#include "terrane/beamng_level.h"

#define ITEM_DATA_MAX_BYTES (1u << 28)

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* "terrane_" + the rule id with anything but letters, digits and '_' as '_'. */
static void type_name(const char *id, char *out, size_t size)
{
    snprintf(out, size, "terrane_%s", id);
    for (char *p = out + 8; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Stage text as path's new content. */
static trn_status stage_text(trn_write_set *ws, const char *path, const char *text, size_t size,
                             trn_error *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    trn_status st = TRN_OK;
    if (slash && slash != path && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        st = trn_mkdir_p(dir, err);
    }
    const char *target = NULL;
    if (!st) st = trn_write_target(ws, path, &target, err);
    if (!st) st = trn_file_write_atomic(target, text, size, err);
    return st;
}

/* One rule's items, a line each, in the instances' order. */
static trn_status write_items(trn_write_set *ws, const char *path, const char *type,
                              const trn_instances *inst, uint32_t rule,
                              const trn_beamng_forest_options *opt, uint64_t *count, trn_error *err)
{
    trn_lvl_buf b = {0};
    char line[768];
    *count = 0;
    for (size_t k = 0; k < inst->count; k++) {
        const trn_instance *in = &inst->items[k];
        if (in->rule != rule) continue;
        /* Yaw turns about BeamNG's up axis (z); the matrix is row-major, as the editor saves. */
        const double a = in->yaw * 3.14159265358979323846 / 180.0;
        const double c = cos(a), s = sin(a);
        const int n = snprintf(line, sizeof line,
                               "{\"pos\":[%.17g,%.17g,%.17g],\"rotationMatrix\":[%.17g,%.17g,0,"
                               "%.17g,%.17g,0,0,0,1],\"scale\":%.17g,\"type\":\"%s\"}\n",
                               opt->origin_x + in->x, opt->origin_y + in->z, in->y, c, -s, s, c,
                               in->scale, type);
        if (n < 0 || (size_t)n >= sizeof line) {
            trn_lvl_buf_free(&b);
            return trn_error_set(err, TRN_ERR_LIMIT, path, -1, "a forest item line is too long");
        }
        trn_lvl_buf_append(&b, line, (size_t)n);
        (*count)++;
    }
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, path);
    }
    trn_status st = *count ? stage_text(ws, path, b.data ? b.data : "", b.len, err) : TRN_OK;
    trn_lvl_buf_free(&b);
    return st;
}

/* managedItemData.json as ws leaves it, with our types set; other entries kept in order. */
static trn_status write_item_data(trn_write_set *ws, const char *path, const char *level_name,
                                  const trn_palette *palette, const uint64_t *per_rule,
                                  uint32_t *unshaped, trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st =
        trn_file_read_all(trn_write_set_current(ws, path), ITEM_DATA_MAX_BYTES, &data, &size, err);
    json_t *root = NULL;
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        st = TRN_OK;
        root = json_object();
    } else if (!st) {
        json_error_t je;
        root = json_loadb((const char *)data, size, JSON_PRESERVE_ORDER, &je);
        if (!json_is_object(root)) {
            json_decref(root);
            free(data);
            return trn_error_set(err, TRN_ERR_JSON, path, je.position,
                                 "line %d column %d: expected the item data object of the "
                                 "editor (name -> TSForestItemData), found %s",
                                 je.line, je.column, root ? "another value" : je.text);
        }
    }
    free(data);
    if (st) return st;
    if (!root) return oom(err, path);
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        if (!per_rule[r]) continue;
        const trn_scatter_rule *rule = &palette->rules[r];
        char type[TRN_PALETTE_ID_MAX + 16];
        type_name(rule->id, type, sizeof type);
        const char *geom = rule->model ? rule->model : rule->prefab ? rule->prefab : "";
        const bool shaped = ends_with(geom, ".dae") || ends_with(geom, ".cdae");
        *unshaped += !shaped;
        json_t *o = json_object_get(root, type);
        if (!json_is_object(o)) {
            char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
            trn_beamng_persistent_id(level_name, "TSForestItemData", type, pid);
            o = json_object();
            if (!o || json_object_set_new(o, "name", json_string(type)) ||
                json_object_set_new(o, "internalName", json_string(type)) ||
                json_object_set_new(o, "class", json_string("TSForestItemData")) ||
                json_object_set_new(o, "persistentId", json_string(pid)) ||
                json_object_set_new(root, type, o))
                st = oom(err, path);
        }
        /* An existing entry keeps its settings; only an unset or our own shape is replaced. */
        if (!st && (shaped || !json_is_string(json_object_get(o, "shapeFile"))) &&
            json_object_set_new(o, "shapeFile", json_string(shaped ? geom : "")))
            st = oom(err, path);
    }
    char *text = st ? NULL : json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (st) return st;
    if (!text) return oom(err, path);
    const size_t n = strlen(text);
    st = stage_text(ws, path, text, n, err);
    free(text);
    return st;
}

static trn_status put_forest(trn_write_set *ws, const trn_palette *palette,
                             const trn_instances *inst, const trn_beamng_forest_options *opt,
                             const char *level_name, trn_beamng_forest_result *res, trn_error *err)
{
    uint64_t *per_rule = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *per_rule);
    if (!per_rule) return oom(err, opt->level_dir);
    trn_status st = TRN_OK;
    char path[PATH_MAX], dir[PATH_MAX];
    if (!trn_lvl_join(dir, sizeof dir, opt->level_dir, "forest")) st = TRN_ERR_LIMIT;
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        char type[TRN_PALETTE_ID_MAX + 16], file[TRN_PALETTE_ID_MAX + 40];
        type_name(palette->rules[r].id, type, sizeof type);
        snprintf(file, sizeof file, "%s.forest4.json", type);
        if (!trn_lvl_join(path, sizeof path, dir, file)) {
            st = TRN_ERR_LIMIT;
            break;
        }
        st = write_items(ws, path, type, inst, r, opt, &per_rule[r], err);
        res->items += per_rule[r];
        res->types += per_rule[r] > 0;
    }
    if (st == TRN_ERR_LIMIT)
        st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    if (!st && res->types) {
        if (!trn_lvl_join(path, sizeof path, opt->level_dir, "art/forest/managedItemData.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
        else
            st = write_item_data(ws, path, level_name, palette, per_rule, &res->unshaped, err);
    }
    free(per_rule);
    if (st || !res->types) return st;
    /* The scene needs a Forest object for the engine to load the item files. */
    char group[256], group_dir[PATH_MAX], items[PATH_MAX + 20];
    st = trn_lvl_ensure_mission_group(ws, opt->level_dir, level_name, group, sizeof group,
                                      group_dir, sizeof group_dir, NULL, err);
    trn_lvl_scene scene;
    memset(&scene, 0, sizeof scene);
    if (!st) st = trn_lvl_scene_read(ws, opt->level_dir, &scene, err);
    if (!st && trn_lvl_scene_find(&scene, "Forest", NULL) < 0) {
        json_t *o = trn_lvl_new_object(level_name, "Forest", "theForest", group);
        if (!o)
            st = oom(err, opt->level_dir);
        else if (!trn_lvl_join(items, sizeof items, group_dir, "items.level.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
        else
            st = trn_lvl_items_append(ws, items, o, err);
        json_decref(o);
        res->forest_added = st == TRN_OK;
    }
    trn_lvl_scene_dispose(&scene);
    return st;
}

trn_status trn_beamng_level_write_forest(const trn_palette *palette, const trn_instances *instances,
                                         const trn_beamng_forest_options *opt,
                                         trn_beamng_forest_result *result, trn_error *err)
{
    trn_beamng_forest_result local;
    trn_beamng_forest_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    if (!palette || !instances || !opt || !opt->level_dir || !opt->level_dir[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "forest: a palette, instances and a level folder are required");
    for (size_t k = 0; k < instances->count; k++)
        if (instances->items[k].rule >= palette->rule_count)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "forest: instance %zu names rule %u; the palette has %u", k,
                                 instances->items[k].rule, palette->rule_count);
    char level_name[256];
    if (!trn_lvl_level_name(opt->level_dir, level_name, sizeof level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "cannot tell the level's name from its folder");
    trn_write_set *ws = NULL, *own = NULL;
    trn_status st = trn_write_own_begin(opt->writes, &ws, &own, err);
    if (!st) st = put_forest(ws, palette, instances, opt, level_name, res, err);
    st = trn_write_own_finish(own, st, err);
    if (st) memset(res, 0, sizeof *res);
    return st;
}
