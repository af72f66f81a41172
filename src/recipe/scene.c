/* Scene documents (NAME.scene.json): the Terrain3D component of every entity checked, each error at its position. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json_pos.h"
#include "scatter/scatter_exclusions.h"
#include "terrane/recipe.h"

typedef struct scene_ctx {
    const char *file, *text;
    size_t size;
    trn_json_path path;
    trn_error *err;
} scene_ctx;

static trn_status fail(scene_ctx *c, trn_json_target target, const char *msg)
{
    return trn_json_error_at(c->err, TRN_ERR_VALIDATION, c->file, c->text, c->size, &c->path,
                             target, msg);
}

static const char *kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

static const char *const terrain_keys[] = {"asset",           "recipe",
                                           "lod_error_pixels", "surface_blending",
                                           "scatter_exclusions", "payload", NULL};

/* A key a Terrain3D does not have: named with the nearest known one when it is a typo. */
static trn_status unknown_terrain_key(scene_ctx *c, const char *key)
{
    char msg[600];
    const char *near = NULL;
    size_t best = 4; /* at most three edits away */
    for (int k = 0; terrain_keys[k]; k++) {
        /* Levenshtein distance, small strings only. */
        const char *a = key, *b = terrain_keys[k];
        const size_t na = strlen(a), nb = strlen(b);
        if (na > 40 || nb > 40) continue;
        size_t row[41];
        for (size_t j = 0; j <= nb; j++) row[j] = j;
        for (size_t i = 1; i <= na; i++) {
            size_t prev = row[0];
            row[0] = i;
            for (size_t j = 1; j <= nb; j++) {
                const size_t cur = row[j];
                const size_t sub = prev + (a[i - 1] != b[j - 1]);
                const size_t del = row[j] + 1, ins = row[j - 1] + 1;
                row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
                prev = cur;
            }
        }
        if (row[nb] < best) {
            best = row[nb];
            near = b;
        }
    }
    trn_json_path_push_key(&c->path, key);
    if (near)
        snprintf(msg, sizeof msg, "unknown key '%.100s' in Terrain3D; did you mean '%s'?", key,
                 near);
    else
        snprintf(msg, sizeof msg,
                 "unknown key '%.100s' in Terrain3D (it takes asset, recipe, lod_error_pixels, "
                 "surface_blending, scatter_exclusions and payload)",
                 key);
    return fail(c, TRN_JSON_KEY, msg);
}

/* n finite numbers (a vector or a quaternion); nonzero: no component 0 (scale) or not all 0
 * (a rotation). */
static trn_status check_numbers(scene_ctx *c, const json_t *v, size_t n, const char *what,
                                int nonzero)
{
    char msg[300];
    bool ok = json_is_array(v) && json_array_size(v) == n;
    bool any = false, zero = false;
    for (size_t k = 0; ok && k < n; k++) {
        const json_t *x = json_array_get(v, k);
        ok = json_is_number(x) && isfinite(json_number_value(x));
        any = any || (ok && json_number_value(x) != 0.0);
        zero = zero || (ok && json_number_value(x) == 0.0);
    }
    if (!ok) {
        snprintf(msg, sizeof msg, "expected %s: %zu finite numbers, found %s", what, n,
                 json_is_array(v) ? "another array" : kind_of(v));
        if (json_is_array(v) && json_array_size(v) != n)
            snprintf(msg, sizeof msg, "expected %s: %zu finite numbers, found %zu", what, n,
                     json_array_size(v));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    if ((nonzero == 1 && zero) || (nonzero == 2 && !any)) {
        snprintf(msg, sizeof msg, "expected %s, found %s", what,
                 nonzero == 1 ? "a component 0 (a zero scale collapses the terrain)"
                              : "all four 0 (no rotation: use [0, 0, 0, 1])");
        return fail(c, TRN_JSON_VALUE, msg);
    }
    return TRN_OK;
}

/* Transform3D: where a placement stands. Other keys are the engine's. */
static trn_status check_transform(scene_ctx *c, const json_t *t)
{
    char msg[200];
    if (!json_is_object(t)) {
        snprintf(msg, sizeof msg, "expected an object, found %s", kind_of(t));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    static const struct {
        const char *key, *what;
        size_t n;
        int nonzero;
    } rows[] = {{"position", "a position [x, y, z]", 3, 0},
                {"rotation", "a rotation quaternion [x, y, z, w]", 4, 2},
                {"scale", "a scale [x, y, z] with no component 0", 3, 1}};
    for (size_t k = 0; k < 3; k++) {
        const json_t *v = json_object_get(t, rows[k].key);
        if (!v) continue;
        trn_json_path_push_key(&c->path, rows[k].key);
        trn_status st = check_numbers(c, v, rows[k].n, rows[k].what, rows[k].nonzero);
        trn_json_path_pop(&c->path);
        if (st) return st;
    }
    return TRN_OK;
}

static trn_status check_terrain(scene_ctx *c, const json_t *t)
{
    char msg[400];
    if (!json_is_object(t)) {
        snprintf(msg, sizeof msg, "expected an object, found %s", kind_of(t));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    const char *tk;
    const json_t *tv;
    json_object_foreach((json_t *)t, tk, tv)
    {
        bool known = false;
        for (int k = 0; terrain_keys[k] && !known; k++) known = strcmp(tk, terrain_keys[k]) == 0;
        if (!known) return unknown_terrain_key(c, tk);
    }
    const json_t *asset = json_object_get(t, "asset");
    const json_t *recipe = json_object_get(t, "recipe");
    if (asset && recipe) {
        trn_json_path_push_key(&c->path, "recipe");
        return fail(c, TRN_JSON_KEY,
                    "a terrain takes an asset reference or an inline recipe, not both");
    }
    trn_status st = TRN_OK;
    if (asset && (!json_is_string(asset) || !json_string_value(asset)[0])) {
        trn_json_path_push_key(&c->path, "asset");
        snprintf(msg, sizeof msg, "expected an asset reference such as \"asset://terrain/name\", found %s",
                 json_is_string(asset) ? "an empty string" : kind_of(asset));
        st = fail(c, TRN_JSON_VALUE, msg);
    } else if (recipe && !json_is_object(recipe)) {
        trn_json_path_push_key(&c->path, "recipe");
        snprintf(msg, sizeof msg, "expected a recipe object, found %s", kind_of(recipe));
        st = fail(c, TRN_JSON_VALUE, msg);
    }
    if (st) return st;
    const json_t *lod = json_object_get(t, "lod_error_pixels");
    if (lod && !(json_is_number(lod) && isfinite(json_number_value(lod)) &&
                 json_number_value(lod) >= 0.0)) {
        trn_json_path_push_key(&c->path, "lod_error_pixels");
        if (json_is_number(lod))
            snprintf(msg, sizeof msg,
                     "expected a finite number of pixels >= 0 (0 turns render LOD off), found %g",
                     json_number_value(lod));
        else
            snprintf(msg, sizeof msg, "expected a number of pixels >= 0, found %s", kind_of(lod));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    const json_t *blend = json_object_get(t, "surface_blending");
    if (blend && !json_is_boolean(blend)) {
        trn_json_path_push_key(&c->path, "surface_blending");
        snprintf(msg, sizeof msg, "expected true or false, found %s", kind_of(blend));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    const json_t *excl = json_object_get(t, "scatter_exclusions");
    if (excl) {
        trn_json_path_push_key(&c->path, "scatter_exclusions");
        trn_scatter_exclusions keys;
        memset(&keys, 0, sizeof keys);
        st = trn_scatter_exclusions_from_json(excl, c->file, c->text, c->size, &c->path, &keys,
                                              c->err);
        trn_scatter_exclusions_dispose(&keys);
        if (st) return st;
        trn_json_path_pop(&c->path);
    }
    const json_t *payload = json_object_get(t, "payload");
    if (payload && !(json_is_string(payload) && json_string_value(payload)[0])) {
        trn_json_path_push_key(&c->path, "payload");
        snprintf(msg, sizeof msg, "expected the file name of a cooked terrain payload, found %s",
                 json_is_string(payload) ? "an empty string" : kind_of(payload));
        return fail(c, TRN_JSON_VALUE, msg);
    }
    return TRN_OK;
}

trn_status trn_scene_document_check(const char *text, size_t size, const char *file, trn_error *err)
{
    scene_ctx c = {file, text, size, {{{0}}, 0}, err};
    json_error_t je;
    /* A byte order mark is no JSON; the positions still count from the file's first byte. */
    const size_t bom = size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    json_t *doc = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        trn_status st =
            trn_error_set(err, TRN_ERR_JSON, file, (int64_t)(je.position + (int)bom),
                          "invalid JSON: %s", je.text);
        trn_error_set_position(err, je.line, je.column);
        return st;
    }
    trn_status st = TRN_OK;
    const json_t *ents = json_object_get(doc, "entities");
    if (!json_is_array(ents)) {
        char msg[200];
        snprintf(msg, sizeof msg, "expected an array of entities, found %s",
                 ents ? kind_of(ents) : "none");
        if (ents) trn_json_path_push_key(&c.path, "entities");
        st = fail(&c, TRN_JSON_VALUE, msg);
    }
    for (size_t k = 0; !st && k < json_array_size(ents); k++) {
        const json_t *ent = json_array_get(ents, k);
        /* Entity ids name placements (and cooked payloads): two entities never share one. */
        const char *id = json_string_value(json_object_get(ent, "id"));
        for (size_t q = 0; id && !st && q < k; q++) {
            const char *other = json_string_value(json_object_get(json_array_get(ents, q), "id"));
            if (!other || strcmp(other, id) != 0) continue;
            char msg[400];
            snprintf(msg, sizeof msg, "the entity id '%.200s' is already used by entities[%zu]",
                     id, q);
            c.path.depth = 0;
            trn_json_path_push_key(&c.path, "entities");
            trn_json_path_push_index(&c.path, k);
            trn_json_path_push_key(&c.path, "id");
            st = fail(&c, TRN_JSON_VALUE, msg);
        }
        const json_t *comps = json_object_get(ent, "components");
        const json_t *tr = json_object_get(comps, "Transform3D");
        if (!st && tr) {
            c.path.depth = 0;
            trn_json_path_push_key(&c.path, "entities");
            trn_json_path_push_index(&c.path, k);
            trn_json_path_push_key(&c.path, "components");
            trn_json_path_push_key(&c.path, "Transform3D");
            st = check_transform(&c, tr);
        }
        const json_t *t = json_object_get(comps, "Terrain3D");
        if (st || !t) continue;
        c.path.depth = 0;
        trn_json_path_push_key(&c.path, "entities");
        trn_json_path_push_index(&c.path, k);
        trn_json_path_push_key(&c.path, "components");
        trn_json_path_push_key(&c.path, "Terrain3D");
        st = check_terrain(&c, t);
    }
    json_decref(doc);
    return st;
}

trn_status trn_scene_assets_check(const char *text, size_t size, const char *file, trn_error *err)
{
    trn_status st = trn_scene_document_check(text, size, file, err);
    if (st) return st;
    const size_t bom = size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    json_error_t je;
    json_t *doc = json_loadb(text + bom, size - bom, 0, &je);
    if (!doc) return trn_error_set(err, TRN_ERR_JSON, file, -1, "invalid JSON: %s", je.text);
    scene_ctx c = {file, text, size, {{{0}}, 0}, err};
    const json_t *ents = json_object_get(doc, "entities");
    for (size_t k = 0; !st && k < json_array_size(ents); k++) {
        const json_t *t = json_object_get(
            json_object_get(json_array_get(ents, k), "components"), "Terrain3D");
        const char *asset = json_string_value(json_object_get(t, "asset"));
        const char *payload = json_string_value(json_object_get(t, "payload"));
        if (payload) {
            /* A cooked scene: its placements load the payload, which must be there. */
            const char *slash = strrchr(file, '/');
            char at[4096];
            snprintf(at, sizeof at, "%.*s%s", payload[0] == '/' || !slash ? 0 : (int)(slash - file + 1),
                     file, payload);
            FILE *f = fopen(at, "rb");
            if (f) {
                fclose(f);
                continue;
            }
            c.path.depth = 0;
            trn_json_path_push_key(&c.path, "entities");
            trn_json_path_push_index(&c.path, k);
            trn_json_path_push_key(&c.path, "components");
            trn_json_path_push_key(&c.path, "Terrain3D");
            trn_json_path_push_key(&c.path, "payload");
            char msg[600];
            snprintf(msg, sizeof msg, "no cooked payload %.400s beside the scene", at);
            st = trn_json_error_at(err, TRN_ERR_NOT_FOUND, c.file, c.text, c.size, &c.path,
                                   TRN_JSON_VALUE, msg);
            break;
        }
        if (!asset) continue;
        char source[4096];
        trn_error e;
        trn_error_clear(&e);
        if (!trn_terrain_asset_resolve(file, asset, source, sizeof source, &e)) continue;
        c.path.depth = 0;
        trn_json_path_push_key(&c.path, "entities");
        trn_json_path_push_index(&c.path, k);
        trn_json_path_push_key(&c.path, "components");
        trn_json_path_push_key(&c.path, "Terrain3D");
        trn_json_path_push_key(&c.path, "asset");
        /* The resolver's message names its own file; here the scene's position speaks. */
        const char *msg = e.message;
        const char *strip = "asset: ";
        if (strncmp(msg, strip, strlen(strip)) == 0) msg += strlen(strip);
        char text_msg[700];
        snprintf(text_msg, sizeof text_msg, "no Terrain asset '%.200s' in the project: %.400s",
                 asset, msg);
        st = trn_json_error_at(err, e.code == TRN_ERR_NOT_FOUND ? TRN_ERR_NOT_FOUND
                                                                : TRN_ERR_VALIDATION,
                               c.file, c.text, c.size, &c.path, TRN_JSON_VALUE, text_msg);
    }
    json_decref(doc);
    return st;
}
