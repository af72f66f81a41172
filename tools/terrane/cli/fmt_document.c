/* Describing recipes, Terrain asset sources, asset manifests, presets and scenes for info. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fileio.h"
#include "detect.h"
#include "fmt_document.h"
#include "recipe/recipe_internal.h"
#include "terrane/recipe.h"
#include "terrane/presets.h"

static json_t *names_of(const char *const *names, uint32_t count)
{
    json_t *a = json_array();
    for (uint32_t k = 0; k < count; k++)
        json_array_append_new(a, cli_json_string(names[k] ? names[k] : ""));
    return a;
}

static json_t *pair(double a, double b)
{
    json_t *p = json_array();
    json_array_append_new(p, json_real(a));
    json_array_append_new(p, json_real(b));
    return p;
}

static json_t *pair_int(uint32_t a, uint32_t b)
{
    json_t *p = json_array();
    json_array_append_new(p, json_integer(a));
    json_array_append_new(p, json_integer(b));
    return p;
}

/* "a, b, c" of up to six names, then "and N more". */
static void name_list(char *out, size_t size, const char *const *names, uint32_t count)
{
    size_t k = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < count && i < 6 && k < size; i++)
        k += (size_t)snprintf(out + k, size - k, "%s%s", i ? ", " : "", names[i] ? names[i] : "");
    if (count > 6 && k < size) snprintf(out + k, size - k, " and %u more", count - 6);
}

static int describe_recipe(cli_ctx *ctx, const char *path, trn_document_kind kind)
{
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_error e;
    if (trn_recipe_read_source(cli_input_path(path), &r, NULL, &e)) {
        snprintf(e.file, sizeof e.file, "%s", path);
        return cli_fail(ctx, &e);
    }
    const char **landforms = calloc(r.landform_count + 1u, sizeof *landforms);
    const char **biomes = calloc(r.biome_count + 1u, sizeof *biomes);
    if (!landforms || !biomes) {
        free(landforms);
        free(biomes);
        trn_recipe_dispose(&r);
        return cli_failf(ctx, "out of memory");
    }
    for (uint32_t k = 0; k < r.landform_count; k++)
        landforms[k] = r.landforms[k].name;
    for (uint32_t k = 0; k < r.biome_count; k++)
        biomes[k] = r.biomes[k].name;
    trn_sea_level_source src;
    char how[256];
    const double sea = trn_recipe_sea_level(&r, &src, how, sizeof how);
    uint32_t nodes = 0;
    trn_graph g;
    const bool graph = r.graph_json && trn_graph_from_recipe(&r, &g, NULL) == TRN_OK;
    if (graph) {
        nodes = g.node_count;
        trn_graph_dispose(&g);
    }
    const char *palette = !r.palette_json                ? NULL
                          : r.palette_json[0] == '"'     ? "asset"
                                                         : "inline";
    const bool asset = kind == TRN_DOCUMENT_TERRAIN_ASSET;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", json_string(asset ? "terrain_asset" : "recipe"));
        json_object_set_new(o, "size", pair(r.size_x, r.size_z));
        json_object_set_new(o, "cells", pair_int(r.cells_x, r.cells_z));
        json_object_set_new(o, "samples",
                            json_integer((json_int_t)(r.cells_x + 1u) * (r.cells_z + 1u)));
        json_object_set_new(o, "seed", json_integer((json_int_t)r.seed));
        json_object_set_new(o, "sea_level", json_real(sea));
        json_object_set_new(o, "landforms", names_of(landforms, r.landform_count));
        json_object_set_new(o, "biomes", names_of(biomes, r.biome_count));
        json_object_set_new(o, "rule_count", json_integer(r.rule_count));
        json_object_set_new(o, "stroke_count", json_integer(r.stroke_count));
        json_object_set_new(o, "node_count", json_integer(nodes));
        json_object_set_new(o, "palette", palette ? json_string(palette) : json_null());
        cli_print_json(o);
    } else {
        char list[512];
        cli_printf("input:      %s\n", path);
        cli_printf("format:     terrane %s (describe every part with 'terrane inspect')\n",
                   asset ? "Terrain asset source" : "recipe");
        cli_printf("size:       %g x %g m\n", r.size_x, r.size_z);
        cli_printf("cells:      %u x %u (%u x %u samples, %g x %g m apart)\n", r.cells_x,
                   r.cells_z, r.cells_x + 1u, r.cells_z + 1u, r.size_x / r.cells_x,
                   r.size_z / r.cells_z);
        cli_printf("seed:       %llu\n", (unsigned long long)r.seed);
        cli_printf("sea level:  %g m (%s)\n", sea,
                   src == TRN_SEA_LEVEL_EXPLICIT ? "explicit" : "derived");
        name_list(list, sizeof list, landforms, r.landform_count);
        cli_printf("landforms:  %u (%s)\n", r.landform_count, list);
        name_list(list, sizeof list, biomes, r.biome_count);
        cli_printf("biomes:     %u (%s), %u rules\n", r.biome_count, list, r.rule_count);
        cli_printf("strokes:    %u\n", r.stroke_count);
        if (graph)
            cli_printf("graph:      %u nodes\n", nodes);
        else
            cli_printf("graph:      none (the landforms generate)\n");
        cli_printf("palette:    %s\n", palette ? palette : "none");
    }
    free(landforms);
    free(biomes);
    trn_recipe_dispose(&r);
    return CLI_EXIT_OK;
}

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int describe_manifest(cli_ctx *ctx, const char *path, const json_t *root)
{
    const json_t *tags = json_object_get(root, "tags");
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", json_string("asset_manifest"));
        json_object_set_new(o, "type", cli_json_string(str_of(root, "type")));
        json_object_set_new(o, "importer", cli_json_string(str_of(root, "importer")));
        json_object_set_new(o, "source", cli_json_string(str_of(root, "source")));
        json_object_set_new(o, "tags", json_is_array(tags) ? json_deep_copy(tags) : json_array());
        cli_print_json(o);
        return CLI_EXIT_OK;
    }
    cli_printf("input:      %s\n", path);
    cli_printf("format:     terrane asset manifest (describes the asset's source document)\n");
    cli_printf("type:       %s\n", str_of(root, "type"));
    cli_printf("importer:   %s\n", str_of(root, "importer"));
    cli_printf("source:     %s\n", str_of(root, "source"));
    if (json_array_size(tags)) {
        cli_printf("tags:      ");
        for (size_t k = 0; k < json_array_size(tags); k++)
            cli_printf(" %s", json_string_value(json_array_get(tags, k)) ? json_string_value(json_array_get(tags, k)) : "");
        cli_printf("\n");
    }
    return CLI_EXIT_OK;
}

static int describe_preset(cli_ctx *ctx, const char *path, const json_t *root)
{
    const size_t biomes = json_object_size(json_object_get(root, "biomes"));
    const size_t rules = json_array_size(json_object_get(root, "rules"));
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", json_string("terrain_preset"));
        json_object_set_new(o, "name", cli_json_string(str_of(root, "name")));
        json_object_set_new(o, "label", cli_json_string(str_of(root, "label")));
        json_object_set_new(o, "description", cli_json_string(str_of(root, "description")));
        json_object_set_new(o, "biome_count", json_integer((json_int_t)biomes));
        json_object_set_new(o, "rule_count", json_integer((json_int_t)rules));
        cli_print_json(o);
        return CLI_EXIT_OK;
    }
    cli_printf("input:       %s\n", path);
    cli_printf("format:      terrane terrain preset (list a project's with 'terrane presets', "
               "merge one with 'terrane apply-preset')\n");
    cli_printf("name:        %s\n", str_of(root, "name"));
    if (str_of(root, "label")[0]) cli_printf("label:       %s\n", str_of(root, "label"));
    if (str_of(root, "description")[0])
        cli_printf("description: %s\n", str_of(root, "description"));
    cli_printf("biomes:      %zu, %zu rules\n", biomes, rules);
    return CLI_EXIT_OK;
}

/* "[x, y, z]" of a Transform3D field, or the default when absent. */
static json_t *transform_part(const json_t *tr, const char *key, const double *def, size_t n)
{
    const json_t *v = json_object_get(tr, key);
    if (json_is_array(v)) return json_deep_copy(v);
    json_t *a = json_array();
    for (size_t k = 0; k < n; k++) json_array_append_new(a, json_real(def[k]));
    return a;
}

static void print_vec(const json_t *v)
{
    for (size_t k = 0; k < json_array_size(v); k++)
        cli_printf("%s%g", k ? ", " : "[", json_number_value(json_array_get(v, k)));
    cli_printf("]");
}

static int describe_scene(cli_ctx *ctx, const char *path, const json_t *root)
{
    static const double zero[3] = {0, 0, 0}, ident[4] = {0, 0, 0, 1}, one[3] = {1, 1, 1};
    const json_t *ents = json_object_get(root, "entities");
    json_t *terrains = json_array();
    json_t *assets = json_object(); /* id -> [entity, ...] in scene order */
    json_t *asset_order = json_array();
    for (size_t k = 0; k < json_array_size(ents); k++) {
        const json_t *ent = json_array_get(ents, k);
        const json_t *comps = json_object_get(ent, "components");
        const json_t *t = json_object_get(comps, "Terrain3D");
        if (!json_is_object(t)) continue;
        const json_t *tr = json_object_get(comps, "Transform3D");
        const char *asset = json_string_value(json_object_get(t, "asset"));
        const char *payload = json_string_value(json_object_get(t, "payload"));
        json_t *o = json_object();
        json_object_set_new(o, "entity", cli_json_string(str_of(ent, "id")));
        json_object_set_new(o, "source",
                            asset                          ? cli_json_string(asset)
                            : json_object_get(t, "recipe") ? json_string("inline recipe")
                            : payload                      ? cli_json_string(payload)
                                                           : json_string("none"));
        json_object_set_new(o, "position", transform_part(tr, "position", zero, 3));
        json_object_set_new(o, "rotation", transform_part(tr, "rotation", ident, 4));
        json_object_set_new(o, "scale", transform_part(tr, "scale", one, 3));
        const json_t *lod = json_object_get(t, "lod_error_pixels");
        json_object_set_new(o, "lod_error_pixels", json_real(lod ? json_number_value(lod) : 2.0));
        const json_t *blend = json_object_get(t, "surface_blending");
        json_object_set_new(o, "surface_blending", json_boolean(!blend || json_is_true(blend)));
        json_array_append_new(terrains, o);
        if (asset) {
            json_t *list = json_object_get(assets, asset);
            if (!list) {
                list = json_array();
                json_object_set_new(assets, asset, list);
                json_array_append_new(asset_order, cli_json_string(asset));
            }
            json_array_append_new(list, cli_json_string(str_of(ent, "id")));
        }
    }
    json_t *by_asset = json_array();
    for (size_t k = 0; k < json_array_size(asset_order); k++) {
        const char *id = json_string_value(json_array_get(asset_order, k));
        json_array_append_new(by_asset, json_pack("{s:o, s:O}", "id", cli_json_string(id),
                                                  "placements", json_object_get(assets, id)));
    }
    json_decref(assets);
    json_decref(asset_order);
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format", json_string("scene"));
        json_object_set_new(o, "name", cli_json_string(str_of(root, "name")));
        json_object_set_new(o, "entity_count", json_integer((json_int_t)json_array_size(ents)));
        json_object_set_new(o, "terrains", terrains);
        json_object_set_new(o, "assets", by_asset);
        cli_print_json(o);
        return CLI_EXIT_OK;
    }
    cli_printf("input:      %s\n", path);
    cli_printf("format:     terrane scene\n");
    if (str_of(root, "name")[0]) cli_printf("name:       %s\n", str_of(root, "name"));
    cli_printf("entities:   %zu, %zu with a terrain\n", json_array_size(ents),
               json_array_size(terrains));
    for (size_t k = 0; k < json_array_size(terrains); k++) {
        const json_t *t = json_array_get(terrains, k);
        cli_printf("  %s: %s at ", str_of(t, "entity"), str_of(t, "source"));
        print_vec(json_object_get(t, "position"));
        cli_printf(", rotation ");
        print_vec(json_object_get(t, "rotation"));
        cli_printf(", scale ");
        print_vec(json_object_get(t, "scale"));
        cli_printf(", LOD %g px, surface blending %s\n",
                   json_number_value(json_object_get(t, "lod_error_pixels")),
                   json_is_true(json_object_get(t, "surface_blending")) ? "on" : "off");
    }
    for (size_t k = 0; k < json_array_size(by_asset); k++) {
        const json_t *a = json_array_get(by_asset, k);
        const json_t *pl = json_object_get(a, "placements");
        cli_printf("asset %s: %zu placement%s (", str_of(a, "id"), json_array_size(pl),
                   json_array_size(pl) == 1 ? "" : "s");
        for (size_t q = 0; q < json_array_size(pl); q++)
            cli_printf("%s%s", q ? ", " : "", json_string_value(json_array_get(pl, q)));
        cli_printf("), one shared recipe\n");
    }
    json_decref(terrains);
    json_decref(by_asset);
    return CLI_EXIT_OK;
}

bool cli_document_describe(cli_ctx *ctx, const char *path, int *rc)
{
    if (strncmp(path, "builtin://", 10) == 0) {
        *rc = describe_recipe(ctx, path, TRN_DOCUMENT_RECIPE); /* a built-in preset's recipe */
        return true;
    }
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_file_read_all(cli_input_path(path), TRN_RCP_MAX_FILE_SIZE, &data, &size, NULL))
        return false;
    const size_t bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF ? 3 : 0;
    json_error_t je;
    json_t *root = json_loadb((const char *)data + bom, size - bom, 0, &je);
    if (!root) {
        free(data);
        /* Broken JSON is no document of any kind: say where, not what it might have been. */
        *rc = cli_failf(ctx, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
        return true;
    }
    if (!json_is_object(root)) {
        free(data);
        json_decref(root);
        return false; /* no object: the format detection speaks */
    }
    const trn_document_kind kind = trn_rcp_classify_object(root);
    bool handled = true;
    trn_error e;
    if (json_is_array(json_object_get(root, "entities")) && kind == TRN_DOCUMENT_UNKNOWN)
        *rc = trn_scene_assets_check((const char *)data, size, cli_input_path(path), &e)
                  ? cli_fail(ctx, &e)
                  : describe_scene(ctx, path, root);
    else if (kind == TRN_DOCUMENT_RECIPE || kind == TRN_DOCUMENT_TERRAIN_ASSET)
        *rc = describe_recipe(ctx, path, kind);
    else if (kind == TRN_DOCUMENT_ASSET_MANIFEST)
        *rc = describe_manifest(ctx, path, root);
    else if (kind == TRN_DOCUMENT_TERRAIN_PRESET)
        *rc = describe_preset(ctx, path, root);
    else if (kind == TRN_DOCUMENT_UNKNOWN)
        *rc = cli_failf(ctx,
                        "%s: a JSON document of no kind terrane reads: expected a recipe "
                        "(size, resolution, landforms, ...), a Terrain asset source (format_version, "
                        "id, recipe), an asset manifest (type, importer, source), a terrain "
                        "preset, palette or material set (format_version, name, ...), a scene "
                        "(entities) or a BeamNG .terrain.json (version, datafile, ...)",
                        path);
    else
        handled = false; /* BeamNG metadata, palettes and material sets have their own */
    json_decref(root);
    free(data);
    return handled;
}

bool cli_is_recipe(const char *path)
{
    if (strncmp(path, "builtin://", 10) == 0) return true;
    const size_t n = strlen(path);
    if (n < 5 || strcasecmp(path + n - 5, ".json") != 0) return false;
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_file_read_all(path, (size_t)1 << 30, &data, &size, NULL)) return false;
    const trn_document_kind kind = trn_document_classify((const char *)data, size);
    free(data);
    return kind == TRN_DOCUMENT_RECIPE || kind == TRN_DOCUMENT_TERRAIN_ASSET;
}
