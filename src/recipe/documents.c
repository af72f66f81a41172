/* Document kinds, Terrain asset source and manifest writers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"

const char *trn_document_kind_name(trn_document_kind kind)
{
    switch (kind) {
    case TRN_DOCUMENT_RECIPE:
        return "recipe";
    case TRN_DOCUMENT_TERRAIN_ASSET:
        return "Terrain asset";
    case TRN_DOCUMENT_ASSET_MANIFEST:
        return "asset manifest";
    case TRN_DOCUMENT_BEAMNG_TERRAIN:
        return "BeamNG terrain metadata";
    case TRN_DOCUMENT_TERRAIN_PRESET:
        return "terrain preset";
    case TRN_DOCUMENT_TERRAIN_PALETTE:
        return "terrain palette";
    case TRN_DOCUMENT_MATERIAL_SET:
        return "terrain material set";
    case TRN_DOCUMENT_MATERIAL:
        return "Material";
    case TRN_DOCUMENT_UNKNOWN:
        break;
    }
    return "unknown";
}

trn_document_kind trn_document_classify(const char *text, size_t size)
{
    if (!text) return TRN_DOCUMENT_UNKNOWN;
    const unsigned char *s = (const unsigned char *)text;
    size_t bom = size >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF ? 3 : 0;
    json_t *root = json_loadb(text + bom, size - bom, 0, NULL);
    trn_document_kind kind = trn_rcp_classify_object(root);
    json_decref(root);
    return kind;
}

static trn_status write_tree(const char *path, json_t *tree, const char *what, trn_error *err)
{
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    trn_rcp_emit_json(&b, tree, 2, 0);
    trn_rcp_buf_put(&b, "\n", 1);
    if (b.failed) {
        trn_rcp_buf_free(&b);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory writing %s", what);
    }
    trn_status st = trn_file_write_atomic(path, b.data, b.len, err);
    trn_rcp_buf_free(&b);
    return st;
}

trn_status trn_terrain_asset_write(const char *path, const char *id, const trn_recipe *recipe,
                                   trn_error *err)
{
    if (!path || !recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_terrain_asset_write: path and recipe are required");
    if (!id || strncmp(id, "asset://", 8) != 0 || !id[8])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "a Terrain asset id looks like \"asset://terrain/landscape\", not "
                             "\"%.200s\"",
                             id ? id : "(null)");
    trn_status st = trn_recipe_validate(recipe, err);
    if (st) {
        if (err) snprintf(err->file, sizeof err->file, "%s", path);
        return st;
    }
    json_t *id_json = json_string(id);
    if (!id_json)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "the asset id is not valid UTF-8");
    json_t *tree = json_object();
    json_t *rj = trn_rcp_recipe_to_json(recipe);
    if (!tree || !rj) {
        json_decref(tree);
        json_decref(rj);
        json_decref(id_json);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory writing a Terrain asset");
    }
    /* json_object_set_new takes the value's reference even when it fails. */
    if (json_object_set_new(tree, "format_version", json_integer(TRN_RECIPE_FORMAT_VERSION)) |
        json_object_set_new(tree, "id", id_json) | json_object_set_new(tree, "recipe", rj)) {
        json_decref(tree);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory writing a Terrain asset");
    }
    st = write_tree(path, tree, "a Terrain asset", err);
    json_decref(tree);
    return st;
}

trn_status trn_terrain_manifest_write(const char *path, const char *source_file, trn_error *err)
{
    if (!path)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_terrain_manifest_write: path is required");
    if (!source_file || !*source_file || source_file[0] == '/')
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "a manifest names its source relative to its own folder (such as "
                             "\"landscape.terrain.json\"), not \"%.200s\"",
                             source_file ? source_file : "(null)");
    json_t *source = json_string(source_file);
    if (!source)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "the manifest's source file name is not valid UTF-8");
    json_t *tree = json_object();
    if (!tree) {
        json_decref(source);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory writing an asset manifest");
    }
    /* json_object_set_new takes the value's reference even when it fails. */
    if (json_object_set_new(tree, "format_version", json_integer(1)) |
        json_object_set_new(tree, "type", json_string("Terrain")) |
        json_object_set_new(tree, "importer", json_string("terrain_heightfield")) |
        json_object_set_new(tree, "source", source)) {
        json_decref(tree);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory writing an asset manifest");
    }
    trn_status st = write_tree(path, tree, "an asset manifest", err);
    json_decref(tree);
    return st;
}
