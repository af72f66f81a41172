/* The studio's materials: the mapped layers' image maps and the set the page draws. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "core/fileio.h"
#include "studio_internal.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/mesh.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/roles.h"
#include "terrane/unity.h"
#include "terrane/water.h"

/* The older convention: ASSETS_ROOT/REL.MAP.png for the id asset://REL, MAP "albedo" (its
 * colour) or "height" (its height map, grey), when that file exists, is a regular file and,
 * symbolic links resolved, lies inside the palette's project; the id's parts are checked as
 * asset ids are (no empty, "." or ".." parts). The resolved path into out. */
static bool convention_map_path(const studio *s, const char *id, const char *map, char *out,
                                size_t out_size)
{
    if (!s->assets_root || !id || strncmp(id, "asset://", 8) != 0 || !id[8]) return false;
    for (const char *p = id + 8; *p;) {
        const char *e = strchr(p, '/');
        const size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
            memchr(p, '\\', n))
            return false;
        p += n + (e ? 1 : 0);
        if (e && !*p) return false;
    }
    char path[4096];
    const int n = snprintf(path, sizeof path, "%s/%s.%s.png", s->assets_root, id + 8, map);
    if (n < 0 || (size_t)n >= sizeof path) return false;
    char *real = realpath(path, NULL);
    struct stat sb;
    const bool ok = real && stat(real, &sb) == 0 && S_ISREG(sb.st_mode) &&
                    trn_path_inside(s->assets_root, real) && strlen(real) < out_size;
    if (ok) snprintf(out, out_size, "%s", real);
    free(real);
    return ok;
}

/* Where a mapped layer's image maps come from: its Material document (the manifest REL.asset.json
 * of type Material in the palette's project, trn_material_resolve), or, for a material without
 * one, the older file names REL.albedo.png and REL.height.png (with a note saying how to
 * describe them in a document instead). A document that does not resolve gives no maps and its
 * error (file:line:column: message). */
typedef struct layer_maps {
    char *path[TRN_MAP_COUNT]; /* real paths; NULL: no such map */
    double scale;              /* the Material's texture_scale (1 without a document) */
    const char *from;          /* "material", "file names" or NULL (no maps) */
    char document[1200];       /* the Material document's path inside the project, or "" */
    char note[2400];           /* an error or the older convention's advice, or "" */
} layer_maps;

static void layer_maps_free(layer_maps *m)
{
    for (int k = 0; k < TRN_MAP_COUNT; k++) free(m->path[k]);
}

static void layer_maps_find(const studio *s, const char *id, layer_maps *out)
{
    memset(out, 0, sizeof *out);
    out->scale = 1.0;
    if (!s->assets_root || !id) return;
    trn_material m;
    trn_error e = {0};
    bool no_manifest = false;
    if (!trn_material_resolve(s->assets_root, id, &m, &no_manifest, &e)) {
        out->from = "material";
        out->scale = m.texture_scale;
        const size_t root = strlen(s->assets_root);
        snprintf(out->document, sizeof out->document, "%s",
                 strncmp(m.source, s->assets_root, root) == 0 && m.source[root] == '/'
                     ? m.source + root + 1
                     : m.source);
        for (int k = 0; k < TRN_MAP_COUNT; k++) {
            out->path[k] = m.paths[k];
            m.paths[k] = NULL;
        }
        trn_material_dispose(&m);
        return;
    }
    if (!no_manifest) {
        if (e.line > 0)
            snprintf(out->note, sizeof out->note, "%.400s:%d:%d: %.900s", e.file, e.line, e.column,
                     e.message);
        else
            snprintf(out->note, sizeof out->note, "%.400s: %.900s", e.file, e.message);
        return;
    }
    static const int older[2] = {TRN_MAP_ALBEDO, TRN_MAP_HEIGHT};
    for (int q = 0; q < 2; q++) {
        char path[4096];
        if (convention_map_path(s, id, trn_material_map_name(older[q]), path, sizeof path))
            out->path[older[q]] = strdup(path);
    }
    if (out->path[TRN_MAP_ALBEDO] || out->path[TRN_MAP_HEIGHT]) {
        const char *rel = id + 8, *base = strrchr(rel, '/');
        base = base ? base + 1 : rel;
        out->from = "file names";
        snprintf(out->note, sizeof out->note,
                 "%.300s: image maps found by file name (%.300s.albedo.png, .height.png); "
                 "describe them in a Material document instead: %.300s.asset.json "
                 "{\"type\": \"Material\", \"source\": \"%.100s.material.json\"} beside "
                 "%.100s.material.json {\"format_version\": 1, \"name\": \"%.100s\", "
                 "\"maps\": {\"albedo\": \"%.100s.albedo.png\"}}",
                 id, rel, rel, base, base, base, base);
    }
}

/* The mapped layers' material ids (role bindings in role order, then biome materials, each id
 * once), their colours (a role's colour for a binding, the biome's for a biome material) and
 * texture scales (a biome's texture_scale, 1 for a role); each role's and biome's layer (-1:
 * none). Returns the layer count. */
enum { MATERIAL_LAYERS_MAX = TRN_ROLE_COUNT + 256 };
static uint32_t material_layers(const studio *s, const char **ids, float (*colors)[3],
                                double *scales, int *role_layer, int *biome_layer)
{
    const trn_generated *g = trn_session_result(s->session);
    const trn_recipe *r = trn_session_recipe(s->session);
    uint32_t n = 0;
    for (int k = 0; k < TRN_ROLE_COUNT + (int)g->biomes.name_count && k < MATERIAL_LAYERS_MAX;
         k++) {
        const bool role = k < TRN_ROLE_COUNT;
        const int b = role ? -1 : trn_recipe_find_biome(r, g->biomes.names[k - TRN_ROLE_COUNT]);
        const char *id = role ? s->set.roles[k] : b >= 0 ? r->biomes[b].material : NULL;
        int layer = -1;
        for (uint32_t q = 0; id && q < n && layer < 0; q++)
            if (strcmp(ids[q], id) == 0) layer = (int)q;
        if (id && layer < 0) {
            layer = (int)n;
            ids[n] = id;
            if (role) {
                uint8_t rgba[4];
                trn_roles_color((uint8_t)k, rgba);
                for (int c = 0; c < 3; c++) colors[n][c] = rgba[c] / 255.0f;
                scales[n] = 1.0;
            } else {
                for (int c = 0; c < 3; c++) colors[n][c] = r->biomes[b].color[c];
                scales[n] = r->biomes[b].texture_scale;
            }
            n++;
        }
        if (role)
            role_layer[k] = layer;
        else
            biome_layer[k - TRN_ROLE_COUNT] = layer;
    }
    return n;
}

/* The palette's project: as the library resolves a palette (or an inline palette's material
 * set) named by asset id, the nearest folder at or above the recipe's own holding the id's
 * manifest; else the studio's project folder. Material image maps are read inside it. */
char *studio_assets_root_of(const char *recipe_path, const char *palette_json,
                            const char *project_root)
{
    json_error_t je;
    json_t *v = palette_json ? json_loads(palette_json, JSON_DECODE_ANY, &je) : NULL;
    const char *id = json_is_string(v)   ? json_string_value(v)
                     : json_is_object(v) ? json_string_value(json_object_get(v, "material_set"))
                                         : NULL;
    char *found = NULL;
    char *dir = NULL;
    if (id && strncmp(id, "asset://", 8) == 0 && !strstr(id, "..")) {
        char *copy = strdup(recipe_path);
        char *slash = copy ? strrchr(copy, '/') : NULL;
        if (slash) *slash = '\0';
        dir = copy ? realpath(slash ? (*copy ? copy : "/") : ".", NULL) : NULL;
        free(copy);
    }
    while (dir && !found) {
        char path[4096];
        const int n = snprintf(path, sizeof path, "%s%s%s.asset.json", dir,
                               strcmp(dir, "/") == 0 ? "" : "/", id + 8);
        struct stat sb;
        if (n > 0 && (size_t)n < sizeof path && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
            found = dir;
            dir = NULL;
            break;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(dir, "/") == 0) break;
        if (slash == dir)
            slash[1] = '\0';
        else
            *slash = '\0';
    }
    free(dir);
    json_decref(v);
    return found ? found : strdup(project_root);
}

/* GET /api/material_map?layer=K&map=albedo|normal|roughness|height|emissive: layer K's image
 * map, the PNG file's bytes (layer_maps_find); 404 when the material has none. */
enum MHD_Result studio_api_material_map(studio *s, struct MHD_Connection *conn)
{
    const char *layer_text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "layer");
    const char *map = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "map");
    int which = -1;
    for (int k = 0; map && k < TRN_MAP_COUNT && which < 0; k++)
        if (strcmp(map, trn_material_map_name(k)) == 0) which = k;
    if (which < 0)
        return studio_reply_error(conn, 400,
                                  "map: expected albedo, normal, roughness, height or emissive");
    const char *ids[MATERIAL_LAYERS_MAX];
    float colors[MATERIAL_LAYERS_MAX][3];
    double scales[MATERIAL_LAYERS_MAX];
    int role_layer[TRN_ROLE_COUNT], biome_layer[256];
    const uint32_t n = s->set.mapping.present
                           ? material_layers(s, ids, colors, scales, role_layer, biome_layer)
                           : 0;
    unsigned layer;
    char tail;
    if (!layer_text || sscanf(layer_text, "%u%c", &layer, &tail) != 1 || layer >= n)
        return studio_reply_error(conn, 400, "layer: expected the index of a mapped layer");
    layer_maps lm;
    layer_maps_find(s, ids[layer], &lm);
    if (!lm.path[which]) {
        char msg[4800];
        if (lm.from && strcmp(lm.from, "material") == 0)
            snprintf(msg, sizeof msg,
                     "%.1100s has no %s map (its Material document %.1100s names none)",
                     ids[layer], map, lm.document);
        else if (lm.note[0] && !lm.from)
            snprintf(msg, sizeof msg, "%.1100s has no %s map: %s", ids[layer], map, lm.note);
        else
            snprintf(msg, sizeof msg,
                     "%.600s has no %s map (no Material document %.600s.asset.json, nor "
                     "%.600s.%s.png, in the project)",
                     ids[layer], map, ids[layer] + 8, ids[layer] + 8, map);
        layer_maps_free(&lm);
        return studio_reply_error(conn, 404, msg);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s", lm.path[which]);
    layer_maps_free(&lm);
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size > (64 << 20))
        return studio_reply_error(conn, 413, "the image map is larger than 64 MiB");
    size_t size = 0;
    struct timespec mtime;
    uint8_t *bytes = (uint8_t *)studio_read_disk(path, &size, &mtime);
    if (!bytes) return studio_reply_error(conn, 500, "cannot read the image map");
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (size < 8 || memcmp(bytes, png, 8) != 0) {
        free(bytes);
        return studio_reply_error(conn, 415, "the image map is not a PNG file");
    }
    return studio_reply_owned(conn, 200, "image/png", bytes, size, NULL);
}

/* GET /api/materials: what the page needs to draw the material set's mapped materials:
 * {"mapping": {...} or null, "layers": [{"material", "color": [r, g, b], "source",
 * "texture_scale", "maps": {MAP: bool}, "maps_from", "document", "note"}], "notes": [...]
 * (documents that fail, maps found by the older file names), and, with a mapping, "cells": [x,
 * z] and "samples": base64 bytes, each sample's layer (255: the biome tint)}. Layers as the
 * cooked payload's: role bindings in role order, then biome materials. */
enum MHD_Result studio_api_materials(studio *s, struct MHD_Connection *conn)
{
    const trn_generated *g = trn_session_result(s->session);
    const trn_material_mapping *m = &s->set.mapping;
    json_t *o = json_object();
    if (!m->present) {
        json_object_set_new(o, "mapping", json_null());
        json_object_set_new(o, "layers", json_array());
        return studio_reply_json(conn, 200, o);
    }
    json_object_set_new(
        o, "mapping",
        json_pack("{s:b, s:b, s:f, s:f, s:b, s:f, s:f, s:f}", "texture_arrays", m->texture_arrays,
                  "triplanar", m->triplanar, "triplanar_slope", m->triplanar_slope,
                  "triplanar_sharpness", m->triplanar_sharpness, "height_blend", m->height_blend,
                  "height_blend_contrast", m->height_blend_contrast, "macro_variation",
                  m->macro_variation, "macro_scale", m->macro_scale));
    /* The layers: distinct ids, each with the colour it is drawn with where it has no image
     * map, its texture scale and which image maps it has (GET /api/material_map). */
    const char *ids[MATERIAL_LAYERS_MAX];
    float colors[MATERIAL_LAYERS_MAX][3];
    double scales[MATERIAL_LAYERS_MAX];
    int role_layer[TRN_ROLE_COUNT], biome_layer[256];
    const uint32_t n = material_layers(s, ids, colors, scales, role_layer, biome_layer);
    json_t *layers = json_array(), *notes = json_array();
    for (uint32_t q = 0; q < n; q++) {
        bool role = false;
        for (int k = 0; k < TRN_ROLE_COUNT && !role; k++) role = role_layer[k] == (int)q;
        layer_maps lm;
        layer_maps_find(s, ids[q], &lm);
        json_t *maps = json_object();
        for (int k = 0; k < TRN_MAP_COUNT; k++)
            json_object_set_new(maps, trn_material_map_name(k), json_boolean(lm.path[k] != NULL));
        json_t *l = json_pack("{s:s, s:[f, f, f], s:s, s:f, s:o}", "material", ids[q], "color",
                              (double)colors[q][0], (double)colors[q][1], (double)colors[q][2],
                              "source", role ? "role" : "biome", "texture_scale",
                              scales[q] * lm.scale, "maps", maps);
        json_object_set_new(l, "maps_from", lm.from ? json_string(lm.from) : json_null());
        json_object_set_new(l, "document",
                            lm.document[0] ? cli_json_string(lm.document) : json_null());
        json_object_set_new(l, "note", lm.note[0] ? cli_json_string(lm.note) : json_null());
        if (lm.note[0]) json_array_append_new(notes, cli_json_string(lm.note));
        layer_maps_free(&lm);
        json_array_append_new(layers, l);
    }
    json_object_set_new(o, "layers", layers);
    json_object_set_new(o, "notes", notes);
    const trn_field *f = &g->field;
    const size_t samples = trn_field_sample_count(f);
    const uint8_t *roles = trn_session_roles(s->session);
    uint8_t *map = malloc(samples ? samples : 1u);
    if (!map) {
        json_decref(o);
        return studio_reply_error(conn, 500, "out of memory");
    }
    for (size_t k = 0; k < samples; k++) {
        const uint8_t b = g->biomes.values ? g->biomes.values[k] : 255;
        int layer = b < g->biomes.name_count ? biome_layer[b] : -1;
        if (layer < 0 && roles && roles[k] < TRN_ROLE_COUNT) layer = role_layer[roles[k]];
        map[k] = layer < 0 ? 255 : (uint8_t)layer;
    }
    char *b64 = studio_base64(map, samples);
    free(map);
    if (!b64) {
        json_decref(o);
        return studio_reply_error(conn, 500, "out of memory");
    }
    json_object_set_new(o, "cells", json_pack("[I, I]", (json_int_t)f->cells_x,
                                              (json_int_t)f->cells_z));
    json_object_set_new(o, "samples", json_string(b64));
    free(b64);
    return studio_reply_json(conn, 200, o);
}
