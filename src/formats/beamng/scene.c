/* BeamNG scene tree: the objects of main/ items files, persistentIds, new objects in the
 * World Editor's layout (MissionGroup and its groups). */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "level_internal.h"

/* Items files of big levels hold every object of the level; a gigabyte is far beyond any. */
#define ITEMS_MAX_BYTES (1u << 30)

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * persistentId: RFC 4122 version-5 UUIDs (SHA-1 of a namespace and a name).
 * ---------------------------------------------------------------------------------------- */

typedef struct sha1_ctx {
    uint32_t h[5];
    uint64_t length; /* bytes hashed */
    uint8_t block[64];
    size_t used;
} sha1_ctx;

static uint32_t rol32(uint32_t v, unsigned n)
{
    return (v << n) | (v >> (32u - n));
}

static void sha1_compress(uint32_t h[5], const uint8_t *p)
{
    uint32_t w[80];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 80; i++)
        w[i] = rol32(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; i++) {
        uint32_t f, k;
        if (i < 20) {
            f = (b & c) | (~b & d);
            k = 0x5A827999u;
        } else if (i < 40) {
            f = b ^ c ^ d;
            k = 0x6ED9EBA1u;
        } else if (i < 60) {
            f = (b & c) | (b & d) | (c & d);
            k = 0x8F1BBCDCu;
        } else {
            f = b ^ c ^ d;
            k = 0xCA62C1D6u;
        }
        uint32_t t = rol32(a, 5) + f + e + k + w[i];
        e = d;
        d = c;
        c = rol32(b, 30);
        b = a;
        a = t;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
}

static void sha1_init(sha1_ctx *c)
{
    static const uint32_t init[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u,
                                     0xC3D2E1F0u};
    memcpy(c->h, init, sizeof init);
    c->length = 0;
    c->used = 0;
}

static void sha1_update(sha1_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->length += n;
    while (n) {
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, p, take);
        c->used += take;
        p += take;
        n -= take;
        if (c->used == 64) {
            sha1_compress(c->h, c->block);
            c->used = 0;
        }
    }
}

static void sha1_final(sha1_ctx *c, uint8_t out[20])
{
    uint64_t bits = c->length * 8u;
    static const uint8_t pad = 0x80, zero = 0;
    sha1_update(c, &pad, 1);
    while (c->used != 56)
        sha1_update(c, &zero, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha1_update(c, len, 8);
    for (int i = 0; i < 20; i++)
        out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

void trn_beamng_persistent_id(const char *level_name, const char *class_name,
                              const char *object_name, char out[TRN_BEAMNG_PERSISTENT_ID_SIZE])
{
    /* terrane's namespace: uuid5(NAMESPACE_DNS, "beamng.terrane"). */
    static const uint8_t ns[16] = {0xfa, 0x66, 0xf9, 0xb1, 0xd4, 0x17, 0x58, 0x05,
                                   0x88, 0xab, 0x73, 0x58, 0xab, 0xcd, 0x93, 0x52};
    const char *parts[3] = {level_name ? level_name : "", class_name ? class_name : "",
                            object_name ? object_name : ""};
    sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, ns, sizeof ns);
    for (int i = 0; i < 3; i++) {
        if (i) sha1_update(&c, "/", 1);
        sha1_update(&c, parts[i], strlen(parts[i]));
    }
    uint8_t d[20];
    sha1_final(&c, d);
    d[6] = (uint8_t)((d[6] & 0x0Fu) | 0x50u); /* version 5 */
    d[8] = (uint8_t)((d[8] & 0x3Fu) | 0x80u); /* RFC 4122 variant */
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[k++] = '-';
        out[k++] = hex[d[i] >> 4];
        out[k++] = hex[d[i] & 15];
    }
    out[k] = '\0';
}

/* ------------------------------------------------------------------------------------------
 * Reading the scene tree.
 * ---------------------------------------------------------------------------------------- */

void trn_lvl_scene_dispose(trn_lvl_scene *scene)
{
    if (!scene) return;
    for (size_t i = 0; i < scene->count; i++) {
        free(scene->objects[i].name);
        free(scene->objects[i].cls);
        free(scene->objects[i].parent);
    }
    free(scene->objects);
    trn_lvl_free_paths(scene->files, scene->file_count);
    memset(scene, 0, sizeof *scene);
}

static bool push_file(trn_lvl_scene *s, size_t *cap, const char *path)
{
    if (s->file_count == *cap) {
        size_t n = *cap ? *cap * 2 : 8;
        char **f = realloc(s->files, n * sizeof *f);
        if (!f) return false;
        s->files = f;
        *cap = n;
    }
    char *d = trn_lvl_strdup(path);
    if (!d) return false;
    s->files[s->file_count++] = d;
    return true;
}

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_items_suffix(const char *path)
{
    static const char suffix[] = "/items.level.json";
    size_t n = strlen(path), k = sizeof suffix - 1;
    return n > k && strcmp(path + n - k, suffix) == 0;
}

static char *string_of(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_string(v) ? trn_lvl_strdup(json_string_value(v)) : NULL;
}

/* The object lines of one file; lines that are not JSON objects are skipped (the TerrainBlock
 * reader reports them). */
static trn_status scan_text(trn_lvl_scene *s, size_t *cap, const char *text, size_t size,
                            uint32_t file, const char *path, trn_error *err)
{
    size_t pos = trn_lvl_bom_length(text, size);
    int line = 0;
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        size_t len = end - pos;
        if (len && text[end - 1] == '\r') len--;
        line++;
        json_error_t je;
        json_t *obj = len ? json_loadb(text + pos, len, 0, &je) : NULL;
        if (json_is_object(obj)) {
            if (s->count == *cap) {
                size_t n = *cap ? *cap * 2 : 64;
                trn_lvl_object *o = realloc(s->objects, n * sizeof *o);
                if (!o) {
                    json_decref(obj);
                    return oom(err, path);
                }
                s->objects = o;
                *cap = n;
            }
            trn_lvl_object *o = &s->objects[s->count];
            memset(o, 0, sizeof *o);
            o->name = string_of(obj, "name");
            o->cls = string_of(obj, "class");
            o->parent = string_of(obj, "__parent");
            const json_t *pid = json_object_get(obj, "persistentId");
            o->has_persistent_id = json_is_string(pid) && json_string_length(pid) > 0;
            o->file = file;
            o->line = line;
            s->count++;
            if (!o->cls) o->cls = trn_lvl_strdup("");
            bool lost = !o->cls || (json_is_string(json_object_get(obj, "name")) && !o->name) ||
                        (json_is_string(json_object_get(obj, "__parent")) && !o->parent);
            json_decref(obj);
            if (lost) return oom(err, path);
        } else {
            json_decref(obj);
        }
        pos = nl ? end + 1 : size;
    }
    return TRN_OK;
}

trn_status trn_lvl_scene_read(const trn_write_set *ws, const char *level_dir, trn_lvl_scene *scene,
                              trn_error *err)
{
    memset(scene, 0, sizeof *scene);
    size_t file_cap = 0, obj_cap = 0;
    trn_status st = trn_lvl_items_files(level_dir, &scene->files, &scene->file_count, err);
    if (st) return st;
    file_cap = scene->file_count;
    /* Files staged by this run that are not on disk yet are part of the tree too. */
    char main_dir[PATH_MAX];
    if (!trn_lvl_join(main_dir, sizeof main_dir, level_dir, "main/"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    size_t prefix = strlen(main_dir);
    for (size_t i = 0; i < trn_write_set_count(ws); i++) {
        const char *dest = trn_write_set_dest(ws, i);
        if (strncmp(dest, main_dir, prefix) != 0 || !has_items_suffix(dest)) continue;
        bool known = false;
        for (size_t k = 0; k < scene->file_count && !known; k++)
            known = strcmp(scene->files[k], dest) == 0;
        if (!known && !push_file(scene, &file_cap, dest)) {
            trn_lvl_scene_dispose(scene);
            return oom(err, dest);
        }
    }
    if (scene->file_count > 1)
        qsort(scene->files, scene->file_count, sizeof *scene->files, cmp_path);
    for (size_t f = 0; f < scene->file_count && !st; f++) {
        uint8_t *data = NULL;
        size_t size = 0;
        st = trn_file_read_all(trn_write_set_current(ws, scene->files[f]), ITEMS_MAX_BYTES, &data,
                               &size, err);
        if (st == TRN_ERR_NOT_FOUND) {
            /* Removed by this run, or gone since the walk. */
            trn_error_clear(err);
            st = TRN_OK;
            continue;
        }
        if (!st)
            st = scan_text(scene, &obj_cap, (const char *)data, size, (uint32_t)f, scene->files[f],
                           err);
        free(data);
    }
    if (st) trn_lvl_scene_dispose(scene);
    return st;
}

ptrdiff_t trn_lvl_scene_find(const trn_lvl_scene *scene, const char *cls, const char *name)
{
    for (size_t i = 0; i < scene->count; i++) {
        const trn_lvl_object *o = &scene->objects[i];
        if (cls && strcmp(o->cls, cls) != 0) continue;
        /* Torque finds objects by name without regard to case. */
        if (name && !(o->name && trn_lvl_ieq(o->name, name))) continue;
        return (ptrdiff_t)i;
    }
    return -1;
}

bool trn_lvl_scene_group_dir(const trn_lvl_scene *scene, size_t index, char *out, size_t size)
{
    const trn_lvl_object *o = &scene->objects[index];
    const char *file = scene->files[o->file];
    const char *slash = strrchr(file, '/');
    if (!o->name || !o->name[0] || !slash) return false;
    int n = snprintf(out, size, "%.*s/%s", (int)(slash - file), file, o->name);
    return n > 0 && (size_t)n < size;
}

bool trn_lvl_is_main_items(const char *level_dir, const char *path)
{
    char main_items[PATH_MAX];
    return trn_lvl_join(main_items, sizeof main_items, level_dir, "main/items.level.json") &&
           strcmp(main_items, path) == 0;
}

/* The MissionGroup SimGroup of main/items.level.json, or -1. */
ptrdiff_t trn_lvl_scene_mission_group(const trn_lvl_scene *scene, const char *level_dir)
{
    for (size_t i = 0; i < scene->count; i++) {
        const trn_lvl_object *o = &scene->objects[i];
        if (strcmp(o->cls, "SimGroup") == 0 && o->name && trn_lvl_ieq(o->name, "MissionGroup") &&
            trn_lvl_is_main_items(level_dir, scene->files[o->file]))
            return (ptrdiff_t)i;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------
 * Writing objects.
 * ---------------------------------------------------------------------------------------- */

json_t *trn_lvl_new_object(const char *level_name, const char *cls, const char *name,
                           const char *parent)
{
    char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
    trn_beamng_persistent_id(level_name, cls, name, pid);
    json_t *o = json_object();
    bool ok = o != NULL;
    if (ok && name) ok = !json_object_set_new(o, "name", json_string(name));
    ok = ok && !json_object_set_new(o, "class", json_string(cls));
    ok = ok && !json_object_set_new(o, "persistentId", json_string(pid));
    if (ok && parent) ok = !json_object_set_new(o, "__parent", json_string(parent));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The parent folder of path; false when it has none. */
static bool dir_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path || (size_t)(slash - path) >= size) return false;
    memcpy(out, path, (size_t)(slash - path));
    out[slash - path] = '\0';
    return true;
}

trn_status trn_lvl_items_append(trn_write_set *ws, const char *items_path, const json_t *obj,
                                trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(trn_write_set_current(ws, items_path), ITEMS_MAX_BYTES, &data,
                                      &size, err);
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        st = TRN_OK;
        char dir[PATH_MAX];
        if (dir_of(items_path, dir, sizeof dir) && (st = trn_mkdir_p(dir, err))) return st;
    }
    if (st) return st;
    char *text = NULL;
    size_t n = 0;
    st = trn_lvl_items_append_text((const char *)data, size, items_path, obj, &text, &n, err);
    free(data);
    const char *target = NULL;
    if (!st) st = trn_write_target(ws, items_path, &target, err);
    if (!st) st = trn_file_write_atomic(target, text, n, err);
    free(text);
    return st;
}

trn_status trn_lvl_ensure_mission_group(trn_write_set *ws, const char *level_dir,
                                        const char *level_name, char *group, size_t group_size,
                                        char *dir, size_t dir_size, bool *added, trn_error *err)
{
    if (added) *added = false;
    trn_lvl_scene scene;
    trn_status st = trn_lvl_scene_read(ws, level_dir, &scene, err);
    if (st) return st;
    ptrdiff_t mg = trn_lvl_scene_mission_group(&scene, level_dir);
    if (mg >= 0) {
        bool ok = trn_lvl_copy(group, group_size, scene.objects[mg].name) &&
                  trn_lvl_scene_group_dir(&scene, (size_t)mg, dir, dir_size);
        trn_lvl_scene_dispose(&scene);
        return ok ? TRN_OK : trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    }
    trn_lvl_scene_dispose(&scene);
    char main_items[PATH_MAX];
    if (!trn_lvl_join(main_items, sizeof main_items, level_dir, "main/items.level.json") ||
        !trn_lvl_copy(group, group_size, "MissionGroup") ||
        !trn_lvl_join(dir, dir_size, level_dir, "main/MissionGroup"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    /* As the editor saves it: the one root object, with its own line. */
    json_t *o = trn_lvl_new_object(level_name, "SimGroup", "MissionGroup", NULL);
    if (!o || json_object_set_new(o, "enabled", json_string("1"))) {
        json_decref(o);
        return oom(err, main_items);
    }
    st = trn_lvl_items_append(ws, main_items, o, err);
    json_decref(o);
    if (!st && added) *added = true;
    return st;
}

/* ------------------------------------------------------------------------------------------
 * TerrainBlocks anywhere in the tree.
 * ---------------------------------------------------------------------------------------- */

trn_status trn_lvl_block_target(const trn_write_set *ws, const char *level_dir, const char *name,
                                char *items_path, size_t size, bool *found, trn_error *err)
{
    *found = false;
    trn_lvl_scene scene;
    trn_status st = trn_lvl_scene_read(ws, level_dir, &scene, err);
    if (st) return st;
    /* The first TerrainBlock line of the name, exactly as put matches it within a file. */
    for (size_t i = 0; i < scene.count && !*found; i++) {
        const trn_lvl_object *o = &scene.objects[i];
        if (strcmp(o->cls, "TerrainBlock") == 0 && o->name && strcmp(o->name, name) == 0) {
            *found = true;
            if (!trn_lvl_copy(items_path, size, scene.files[o->file]))
                st = trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
        }
    }
    /* None: a broken line anywhere that may be the block stops us (put says which). */
    for (size_t f = 0; !st && !*found && f < scene.file_count; f++)
        st = trn_lvl_items_check_put(ws, scene.files[f], name, err);
    if (!st && !*found) {
        ptrdiff_t mg = trn_lvl_scene_mission_group(&scene, level_dir);
        char dir[PATH_MAX];
        bool ok = mg >= 0 ? trn_lvl_scene_group_dir(&scene, (size_t)mg, dir, sizeof dir)
                          : trn_lvl_join(dir, sizeof dir, level_dir, "main/MissionGroup");
        if (!ok || !trn_lvl_join(items_path, size, dir, "items.level.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    }
    trn_lvl_scene_dispose(&scene);
    return st;
}

trn_status trn_lvl_level_put_block(trn_write_set *ws, const char *level_dir, const char *level_name,
                                   const trn_terrain_block *tb, char *items_path, size_t size,
                                   bool *replaced, trn_error *err)
{
    bool found = false;
    trn_status st = trn_lvl_block_target(ws, level_dir, tb->name, items_path, size, &found, err);
    if (st) return st;
    if (replaced) *replaced = found;
    if (found) return trn_lvl_items_put(ws, items_path, tb, err);
    char group[256], dir[PATH_MAX];
    if ((st = trn_lvl_ensure_mission_group(ws, level_dir, level_name, group, sizeof group, dir,
                                           sizeof dir, NULL, err)))
        return st;
    if (!trn_lvl_join(items_path, size, dir, "items.level.json"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    /* A copy carrying the editor's bookkeeping; the caller's block is left as it was. */
    trn_terrain_block nb = *tb;
    char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
    trn_beamng_persistent_id(level_name, "TerrainBlock", tb->name, pid);
    if (!nb.persistent_id) nb.persistent_id = pid;
    nb.parent = group;
    return trn_lvl_items_put(ws, items_path, &nb, err);
}
