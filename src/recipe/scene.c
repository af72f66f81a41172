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

static trn_status check_terrain(scene_ctx *c, const json_t *t)
{
    char msg[400];
    if (!json_is_object(t)) {
        snprintf(msg, sizeof msg, "expected an object, found %s", kind_of(t));
        return fail(c, TRN_JSON_VALUE, msg);
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
        const json_t *comps = json_object_get(json_array_get(ents, k), "components");
        const json_t *t = json_object_get(comps, "Terrain3D");
        if (!t) continue;
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
