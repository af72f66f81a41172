/* BeamNG water: the ocean's WaterPlane, WaterBlocks and Rivers, made and put into a level. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "level_internal.h"
#include "terrane/beamng_water.h"
#include "terrane/water_mesh.h"

#define ITEMS_MAX_BYTES (1u << 30)

/* The World Editor's limits on a River node (Torque's MIN/MAX_NODE_WIDTH and _DEPTH). */
#define RIVER_MIN_WIDTH 0.25
#define RIVER_MAX_WIDTH 1000.0
#define RIVER_MIN_DEPTH 0.25
#define RIVER_MAX_DEPTH 500.0
/* WaterBlock's default gridElementSize; a larger one than the block is clamped with a warning. */
#define BLOCK_GRID_ELEMENT 5.0

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

static double round_mm(double v)
{
    return round(v * 1000.0) / 1000.0 + 0.0; /* + 0.0 turns -0 into 0 */
}

static double clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ------------------------------------------------------------------------------------------
 * The objects.
 * ---------------------------------------------------------------------------------------- */

typedef struct water_object {
    const char *cls; /* "WaterPlane", "WaterBlock" or "River" */
    char name[TRN_WATER_ID_MAX + 24];
    json_t *fields; /* everything after name and class */
} water_object;

typedef struct object_list {
    water_object *items;
    uint32_t count;
    uint32_t skipped;
} object_list;

static void object_list_dispose(object_list *list)
{
    for (uint32_t i = 0; i < list->count; i++)
        json_decref(list->items[i].fields);
    free(list->items);
    memset(list, 0, sizeof *list);
}

static bool set_num(json_t *o, const char *key, double v)
{
    return !json_object_set_new(o, key, trn_lvl_json_number(v));
}

static bool set_vec(json_t *o, const char *key, const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, trn_lvl_json_number(v[i]))) {
            json_decref(a);
            return false;
        }
    return a && !json_object_set_new(o, key, a);
}

/* The WaterObject fields our look maps onto (see beamng_water.h). */
static bool set_look(json_t *o, const trn_water_look *look)
{
    double colour[4];
    for (int c = 0; c < 4; c++)
        colour[c] = (double)lround(clamp(look->deep_color[c], 0.0, 1.0) * 255.0);
    return set_vec(o, "baseColor", colour, 4) &&
           set_num(o, "waterFogDensity", 1.0 / look->absorption_distance) &&
           set_num(o, "waterFogDensityOffset", 0) && set_num(o, "overallWaveMagnitude", 0) &&
           set_num(o, "overallRippleMagnitude", look->normal_strength) &&
           set_num(o, "overallFoamOpacity", look->foam_strength) &&
           set_num(o, "foamMaxDepth", look->foam_width);
}

/* Textures a new object needs to render: the ones the level scaffold's WaterPlane names. */
static bool set_textures(json_t *o)
{
    return !json_object_set_new(o, "depthGradientTex",
                                json_string("core/art/water/depthcolor_ramp")) &&
           !json_object_set_new(o, "foamTex", json_string("core/art/water/foam")) &&
           !json_object_set_new(o, "rippleTex", json_string("core/art/water/ripple"));
}

static bool name_in_list(const object_list *list, const char *name)
{
    for (uint32_t i = 0; i < list->count; i++)
        if (trn_lvl_ieq(list->items[i].name, name)) return true;
    return false;
}

/* "water_" + the id with anything outside [A-Za-z0-9_] made '_', unique within the list. */
static void object_name(const object_list *list, const char *id, char *out, size_t size)
{
    char base[TRN_WATER_ID_MAX + 8];
    size_t n = (size_t)snprintf(base, sizeof base, "water_");
    for (size_t i = 0; id[i] && n + 1 < sizeof base; i++) {
        const char c = id[i];
        const bool keep =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        base[n++] = keep ? c : '_';
    }
    base[n] = '\0';
    snprintf(out, size, "%s", base);
    for (unsigned k = 1; name_in_list(list, out); k++)
        snprintf(out, size, "%s_%u", base, k);
}

static bool plane_fields(const trn_water_body *b, const trn_beamng_water_placement *p, json_t *o)
{
    const double at[3] = {0, 0, round_mm(b->level + p->origin_z)};
    return set_vec(o, "position", at, 3);
}

static bool block_fields(const trn_water_body *b, const trn_water_mesh *m,
                         const trn_beamng_water_placement *p, json_t *o)
{
    const double at[3] = {round_mm(p->origin_x + (m->bounds_min[0] + m->bounds_max[0]) / 2.0),
                          round_mm(p->origin_y + (m->bounds_min[2] + m->bounds_max[2]) / 2.0),
                          round_mm(p->origin_z + b->level)};
    const double scale[3] = {round_mm(m->bounds_max[0] - m->bounds_min[0]),
                             round_mm(m->bounds_max[2] - m->bounds_min[2]),
                             round_mm(2.0 * m->deepest)};
    double grid = BLOCK_GRID_ELEMENT;
    if (scale[0] < grid) grid = scale[0];
    if (scale[1] < grid) grid = scale[1];
    if (!(grid >= 0.001)) grid = 0.001;
    return set_vec(o, "position", at, 3) && set_vec(o, "scale", scale, 3) &&
           set_num(o, "gridElementSize", grid);
}

static bool river_fields(const trn_water_body *b, const trn_beamng_water_placement *p, json_t *o)
{
    json_t *nodes = json_array();
    if (!nodes) return false;
    const bool follow = b->surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED;
    const double width = round_mm(clamp(b->width, RIVER_MIN_WIDTH, RIVER_MAX_WIDTH));
    double first[3] = {0, 0, 0};
    bool ok = true;
    /* From the last path point: the engine's current runs toward the first node. */
    for (uint32_t k = b->path_count; ok && k-- > 0;) {
        const double *q = b->path + 3u * (size_t)k;
        const double surface = follow ? q[1] + b->river_depth : b->level;
        const double node[8] = {round_mm(p->origin_x + q[0]),
                                round_mm(p->origin_y + q[2]),
                                round_mm(p->origin_z + surface),
                                width,
                                round_mm(clamp(surface - q[1], RIVER_MIN_DEPTH, RIVER_MAX_DEPTH)),
                                0,
                                0,
                                1};
        if (k + 1 == b->path_count) memcpy(first, node, sizeof first);
        json_t *a = json_array();
        for (int c = 0; a && c < 8; c++)
            if (json_array_append_new(a, trn_lvl_json_number(node[c]))) {
                json_decref(a);
                a = NULL;
            }
        ok = a && !json_array_append_new(nodes, a);
    }
    ok = ok && set_vec(o, "position", first, 3);
    if (!ok) {
        json_decref(nodes);
        return false;
    }
    /* set_new takes nodes, also when it fails */
    return !json_object_set_new(o, "nodes", nodes) &&
           set_num(o, "FlowMagnitude", b->look.flow_speed);
}

static trn_status check_inputs(const trn_water *water, const trn_field *ground,
                               const trn_beamng_water_placement *placement, trn_error *err)
{
    if (!water || !ground || !ground->heights || !placement)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "BeamNG water needs the water, its ground and the placement");
    if (water->body_count && (!water->owner || !water->wet))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the water has bodies but no resolved coverage");
    if (ground->cells_x != water->cells_x || ground->cells_z != water->cells_z ||
        ground->size_x != water->size_x || ground->size_z != water->size_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "the ground is %u x %u cells over %g x %g but the water was resolved "
                             "on %u x %u cells over %g x %g",
                             ground->cells_x, ground->cells_z, ground->size_x, ground->size_z,
                             water->cells_x, water->cells_z, water->size_x, water->size_z);
    return TRN_OK;
}

static trn_status build_objects(const trn_water *water, const trn_field *ground,
                                const trn_beamng_water_placement *placement, object_list *list,
                                trn_error *err)
{
    memset(list, 0, sizeof *list);
    trn_status st = check_inputs(water, ground, placement, err);
    if (st || !water->body_count) return st;
    /* Wet samples per body, in one pass. */
    uint64_t *wet = calloc(water->body_count, sizeof *wet);
    list->items = calloc(water->body_count, sizeof *list->items);
    if (!wet || !list->items) {
        free(wet);
        return oom(err, NULL);
    }
    const size_t samples = (size_t)(water->cells_x + 1u) * (water->cells_z + 1u);
    for (size_t k = 0; k < samples; k++)
        if (water->wet[k] && water->owner[k] >= 0 && (uint32_t)water->owner[k] < water->body_count)
            wet[water->owner[k]]++;
    bool plane = false;
    for (uint32_t b = 0; b < water->body_count && !st; b++) {
        const trn_water_body *body = &water->bodies[b];
        const char *cls = body->kind == TRN_WATER_RIVER ? "River" : "WaterBlock";
        if (body->kind == TRN_WATER_OCEAN && !plane && !body->boundary_count) cls = "WaterPlane";
        trn_water_mesh *mesh = NULL;
        if (strcmp(cls, "WaterBlock") == 0 && wet[b] &&
            (st = trn_water_mesh_new(water, ground, b, &mesh, err)))
            break;
        if (!wet[b] || (body->kind == TRN_WATER_RIVER && body->path_count < 2) ||
            (mesh && !mesh->triangle_count)) {
            trn_water_mesh_free(mesh);
            list->skipped++;
            continue;
        }
        water_object *o = &list->items[list->count];
        o->cls = cls;
        object_name(list, body->id, o->name, sizeof o->name);
        o->fields = json_object();
        bool ok = o->fields != NULL;
        if (ok && cls[0] == 'R')
            ok = river_fields(body, placement, o->fields);
        else if (ok && mesh)
            ok = block_fields(body, mesh, placement, o->fields);
        else if (ok)
            ok = plane_fields(body, placement, o->fields);
        ok = ok && set_look(o->fields, &body->look);
        trn_water_mesh_free(mesh);
        list->count++; /* disposed with the list, whole or not */
        if (!ok) st = oom(err, NULL);
        plane = plane || strcmp(cls, "WaterPlane") == 0;
    }
    free(wet);
    if (st) object_list_dispose(list);
    return st;
}

/* A new object's line: name, class (persistentId and __parent when parent is given), fields,
 * textures. */
static json_t *new_object(const char *level_name, const water_object *w, const char *name,
                          const char *parent)
{
    json_t *o = parent ? trn_lvl_new_object(level_name, w->cls, name, parent) : json_object();
    bool ok = o != NULL;
    if (ok && !parent)
        ok = !json_object_set_new(o, "name", json_string(name)) &&
             !json_object_set_new(o, "class", json_string(w->cls));
    ok = ok && !json_object_update(o, w->fields) && set_textures(o);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

trn_status trn_beamng_water_objects(const trn_water *water, const trn_field *ground,
                                    const trn_beamng_water_placement *placement, char **text,
                                    size_t *size, uint32_t *skipped, trn_error *err)
{
    if (text) *text = NULL;
    if (size) *size = 0;
    if (skipped) *skipped = 0;
    if (!text) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no output given");
    object_list list;
    trn_status st = build_objects(water, ground, placement, &list, err);
    if (st) return st;
    trn_lvl_buf b = {0};
    trn_lvl_buf_puts(&b, "");
    for (uint32_t i = 0; i < list.count && !b.failed; i++) {
        json_t *o = new_object(NULL, &list.items[i], list.items[i].name, NULL);
        if (!o) {
            b.failed = true;
            break;
        }
        trn_lvl_json_compact(&b, o);
        trn_lvl_buf_puts(&b, "\n");
        json_decref(o);
    }
    if (skipped) *skipped = list.skipped;
    object_list_dispose(&list);
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, NULL);
    }
    *text = b.data;
    if (size) *size = b.len;
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * Putting them into a level.
 * ---------------------------------------------------------------------------------------- */

/* Items files being edited, read once as the write set leaves them and written at the end. */
typedef struct edit_file {
    char *path;
    char *text;
    size_t len;
    bool dirty;
} edit_file;

typedef struct level_edit {
    trn_write_set *ws;
    const char *level_dir;
    char level_name[256];
    trn_lvl_scene scene;
    edit_file *files;
    size_t file_count;
    char **added; /* names given to new objects */
    size_t added_count;
    trn_error *err;
} level_edit;

static trn_status edit_open(level_edit *e, const char *path, edit_file **out)
{
    for (size_t i = 0; i < e->file_count; i++)
        if (strcmp(e->files[i].path, path) == 0) {
            *out = &e->files[i];
            return TRN_OK;
        }
    edit_file *f = realloc(e->files, (e->file_count + 1) * sizeof *f);
    if (!f) return oom(e->err, path);
    e->files = f;
    edit_file *ef = &f[e->file_count];
    memset(ef, 0, sizeof *ef);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(trn_write_set_current(e->ws, path), ITEMS_MAX_BYTES, &data,
                                      &size, e->err);
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(e->err);
        st = TRN_OK;
    }
    if (st) return st;
    ef->path = trn_lvl_strdup(path);
    if (!ef->path) {
        free(data);
        return oom(e->err, path);
    }
    ef->text = (char *)data;
    ef->len = size;
    e->file_count++;
    *out = ef;
    return TRN_OK;
}

static bool taken(const level_edit *e, const char *name)
{
    if (trn_lvl_scene_find(&e->scene, NULL, name) >= 0) return true;
    for (size_t i = 0; i < e->added_count; i++)
        if (trn_lvl_ieq(e->added[i], name)) return true;
    return false;
}

/* A name no object of the level has: base, base_1, ... (Torque names are global). */
static trn_status unique_name(level_edit *e, const char *base, char *out, size_t size)
{
    snprintf(out, size, "%s", base);
    for (unsigned i = 1; taken(e, out); i++) {
        if (i > 9999)
            return trn_error_set(e->err, TRN_ERR_LIMIT, e->level_dir, -1,
                                 "no free object name for %s", base);
        snprintf(out, size, "%s_%u", base, i);
    }
    char **a = realloc(e->added, (e->added_count + 1) * sizeof *a);
    if (!a) return oom(e->err, e->level_dir);
    e->added = a;
    if (!(a[e->added_count] = trn_lvl_strdup(out))) return oom(e->err, e->level_dir);
    e->added_count++;
    return TRN_OK;
}

static trn_status append_object(level_edit *e, const char *items, json_t *o)
{
    edit_file *f;
    trn_status st = edit_open(e, items, &f);
    char *text = NULL;
    size_t n = 0;
    if (!st) st = trn_lvl_items_append_text(f->text, f->len, items, o, &text, &n, e->err);
    json_decref(o);
    if (st) return st;
    free(f->text);
    f->text = text;
    f->len = n;
    f->dirty = true;
    return TRN_OK;
}

/* Set fields on the object at line (1-based) of items, keeping its other keys in their order
 * and the rest of the file byte for byte. The plane keeps its own position x and y. */
static trn_status update_object(level_edit *e, const char *items, int line, const water_object *w)
{
    edit_file *f;
    trn_status st = edit_open(e, items, &f);
    if (st) return st;
    size_t pos = trn_lvl_bom_length(f->text, f->len);
    for (int l = 1; l < line && pos < f->len; l++) {
        const char *nl = memchr(f->text + pos, '\n', f->len - pos);
        pos = nl ? (size_t)(nl - f->text) + 1 : f->len;
    }
    const char *nl = pos < f->len ? memchr(f->text + pos, '\n', f->len - pos) : NULL;
    size_t end = nl ? (size_t)(nl - f->text) : f->len;
    if (end > pos && f->text[end - 1] == '\r') end--;
    json_error_t je;
    json_t *o = end > pos ? json_loadb(f->text + pos, end - pos, 0, &je) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return trn_error_set(e->err, TRN_ERR_JSON, items, (int64_t)pos,
                             "line %d changed while the water was written", line);
    }
    json_t *fields = json_deep_copy(w->fields);
    bool ok = fields != NULL;
    if (ok && strcmp(w->cls, "WaterPlane") == 0) {
        const json_t *old = json_object_get(o, "position");
        double xy[2] = {0, 0}, z = 0;
        bool keep = json_is_array(old) && json_array_size(old) == 3 &&
                    trn_lvl_json_get_number(json_array_get(old, 0), &xy[0]) &&
                    trn_lvl_json_get_number(json_array_get(old, 1), &xy[1]);
        trn_lvl_json_get_number(json_array_get(json_object_get(fields, "position"), 2), &z);
        const double at[3] = {xy[0], xy[1], z};
        ok = !keep || set_vec(fields, "position", at, 3);
    }
    ok = ok && !json_object_update(o, fields);
    json_decref(fields);
    trn_lvl_buf b = {0};
    if (ok) {
        trn_lvl_buf_append(&b, f->text, pos);
        trn_lvl_json_compact(&b, o);
        trn_lvl_buf_append(&b, f->text + end, f->len - end);
    }
    json_decref(o);
    if (!ok || b.failed || !b.data) {
        trn_lvl_buf_free(&b);
        return oom(e->err, items);
    }
    free(f->text);
    f->text = b.data;
    f->len = b.len;
    f->dirty = true;
    return TRN_OK;
}

static trn_status write_files(level_edit *e)
{
    for (size_t i = 0; i < e->file_count; i++) {
        edit_file *f = &e->files[i];
        if (!f->dirty) continue;
        char dir[PATH_MAX];
        const char *slash = strrchr(f->path, '/');
        trn_status st = TRN_OK;
        if (slash && slash != f->path && (size_t)(slash - f->path) < sizeof dir) {
            memcpy(dir, f->path, (size_t)(slash - f->path));
            dir[slash - f->path] = '\0';
            st = trn_mkdir_p(dir, e->err);
        }
        const char *target = NULL;
        if (!st) st = trn_write_target(e->ws, f->path, &target, e->err);
        if (!st) st = trn_file_write_atomic(target, f->text ? f->text : "", f->len, e->err);
        if (st) return st;
    }
    return TRN_OK;
}

static void edit_dispose(level_edit *e)
{
    for (size_t i = 0; i < e->file_count; i++) {
        free(e->files[i].path);
        free(e->files[i].text);
    }
    free(e->files);
    for (size_t i = 0; i < e->added_count; i++)
        free(e->added[i]);
    free(e->added);
    trn_lvl_scene_dispose(&e->scene);
}

static trn_status put_objects(level_edit *e, const object_list *list, trn_beamng_water_result *res)
{
    char group[256], group_dir[PATH_MAX], water_dir[PATH_MAX] = "", items[PATH_MAX + 20];
    char water_group[256] = "Water";
    trn_status st =
        trn_lvl_ensure_mission_group(e->ws, e->level_dir, e->level_name, group, sizeof group,
                                     group_dir, sizeof group_dir, NULL, e->err);
    if (!st) st = trn_lvl_scene_read(e->ws, e->level_dir, &e->scene, e->err);
    for (uint32_t i = 0; i < list->count && !st; i++) {
        const water_object *w = &list->items[i];
        const bool is_plane = strcmp(w->cls, "WaterPlane") == 0;
        ptrdiff_t at = trn_lvl_scene_find(&e->scene, w->cls, is_plane ? NULL : w->name);
        if (at >= 0) {
            const trn_lvl_object *o = &e->scene.objects[at];
            st = update_object(e, e->scene.files[o->file], o->line, w);
            res->replaced += !st;
            if (!st && is_plane)
                trn_lvl_copy(res->plane_name, sizeof res->plane_name, o->name ? o->name : "");
        } else {
            if (!water_dir[0]) {
                /* The Water group: the level's, or a new one in MissionGroup. */
                ptrdiff_t g = trn_lvl_scene_find(&e->scene, "SimGroup", "Water");
                bool ok = g >= 0 ? trn_lvl_scene_group_dir(&e->scene, (size_t)g, water_dir,
                                                           sizeof water_dir)
                                 : trn_lvl_join(water_dir, sizeof water_dir, group_dir, "Water");
                if (ok && g >= 0)
                    ok = trn_lvl_copy(water_group, sizeof water_group, e->scene.objects[g].name);
                if (!ok || !trn_lvl_join(items, sizeof items, water_dir, "items.level.json"))
                    return trn_error_set(e->err, TRN_ERR_LIMIT, e->level_dir, -1, "path too long");
                if (g < 0) {
                    char group_items[PATH_MAX + 20];
                    json_t *sg = trn_lvl_new_object(e->level_name, "SimGroup", "Water", group);
                    if (!sg) return oom(e->err, e->level_dir);
                    if (!trn_lvl_join(group_items, sizeof group_items, group_dir,
                                      "items.level.json")) {
                        json_decref(sg);
                        return trn_error_set(e->err, TRN_ERR_LIMIT, e->level_dir, -1,
                                             "path too long");
                    }
                    if ((st = append_object(e, group_items, sg))) return st;
                }
                trn_lvl_copy(res->items_path, sizeof res->items_path, items);
            }
            char name[TRN_WATER_ID_MAX + 40];
            if ((st = unique_name(e, w->name, name, sizeof name))) return st;
            json_t *o = new_object(e->level_name, w, name, water_group);
            /* A new ocean carries every field the World Editor saves on one (its own look kept). */
            if (o && is_plane && !trn_lvl_water_plane_defaults(o)) {
                json_decref(o);
                o = NULL;
            }
            if (!o) return oom(e->err, items);
            st = append_object(e, items, o);
            if (!st && is_plane) trn_lvl_copy(res->plane_name, sizeof res->plane_name, name);
        }
        if (!st) {
            res->planes += is_plane;
            res->blocks += strcmp(w->cls, "WaterBlock") == 0;
            res->rivers += strcmp(w->cls, "River") == 0;
        }
    }
    if (!st) st = write_files(e);
    return st;
}

trn_status trn_beamng_level_write_water(const trn_water *water, const trn_field *ground,
                                        const trn_beamng_water_options *opt,
                                        trn_beamng_water_result *result, trn_error *err)
{
    trn_beamng_water_result local;
    trn_beamng_water_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    if (!opt || !opt->level_dir || !opt->level_dir[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no level folder given");
    object_list list;
    trn_status st = build_objects(water, ground, &opt->placement, &list, err);
    if (st) return st;
    res->skipped = list.skipped;
    if (!list.count) {
        object_list_dispose(&list);
        return TRN_OK;
    }
    level_edit e;
    memset(&e, 0, sizeof e);
    e.level_dir = opt->level_dir;
    e.err = err;
    if (!trn_lvl_level_name(opt->level_dir, e.level_name, sizeof e.level_name)) {
        object_list_dispose(&list);
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "cannot tell the level's name from its folder");
    }
    trn_write_set *own = NULL;
    st = trn_write_own_begin(opt->writes, &e.ws, &own, err);
    if (!st) st = put_objects(&e, &list, res);
    edit_dispose(&e);
    object_list_dispose(&list);
    st = trn_write_own_finish(own, st, err);
    if (st) {
        trn_beamng_water_result skipped = {0};
        skipped.skipped = res->skipped;
        *res = skipped;
    }
    return st;
}
