/* The studio's presets: the list, their pictures, and one merged into the session. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "studio_doc.h"
#include "studio_internal.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/mesh.h"
#include "terrane/palette.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/water.h"

/* The built-in presets and the project's terrain_preset assets. */
enum MHD_Result studio_api_presets(studio *s, struct MHD_Connection *conn)
{
    json_t *list = json_array();
    trn_error e;
    for (uint32_t k = 0; k < trn_builtin_preset_count(); k++) {
        trn_preset p;
        if (trn_builtin_preset_load(trn_builtin_preset_id(k), &p, &e)) continue;
        json_t *o = cli_preset_json(&p);
        if (o) json_object_set_new(o, "builtin", json_true());
        json_array_append_new(list, o);
        trn_preset_dispose(&p);
    }
    trn_preset *project = NULL;
    uint32_t count = 0;
    json_t *reply = json_pack("{s:o}", "presets", list);
    if (trn_project_presets_load(s->project_root, &project, &count, &e))
        json_object_set_new(reply, "project_error", cli_json_string(e.message));
    for (uint32_t k = 0; k < count; k++) {
        json_t *o = cli_preset_json(&project[k]);
        if (o) json_object_set_new(o, "builtin", json_false());
        json_array_append_new(list, o);
    }
    trn_presets_free(project, count);
    return studio_reply_json(conn, 200, reply);
}

/* A preset merged into a recipe as `terrane apply-preset` merges it (policy clear also drops the
 * strokes, which apply-preset drops only with a grid change): session_json is the session's
 * recipe as canonical JSON, read relative to recipe_path. */
static trn_status preset_recipe(const char *session_json, const char *recipe_path,
                                const trn_preset *preset, trn_edit_policy policy,
                                trn_recipe *next, trn_error *e)
{
    memset(next, 0, sizeof *next);
    char *text = NULL;
    if (session_json && policy == TRN_EDITS_CLEAR) {
        json_error_t je;
        json_t *doc = json_loads(session_json, 0, &je);
        if (doc) {
            json_object_del(doc, "edits");
            json_object_del(doc, "regions");
            json_object_del(doc, "exclusions");
            text = json_dumps(doc, JSON_COMPACT);
        }
        json_decref(doc);
    } else if (session_json) {
        text = strdup(session_json);
    }
    trn_status st = text ? trn_recipe_parse(text, strlen(text), recipe_path, next, NULL, e)
                         : trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    free(text);
    if (!st && (st = trn_recipe_set_base_dir_of(next, recipe_path, e))) trn_recipe_dispose(next);
    if (!st && (st = trn_recipe_apply_preset(next, preset, policy, e))) trn_recipe_dispose(next);
    return st;
}

/* GET /api/preset/picture?id=ID: a preset's terrain on a 128-cell grid (preview quality, no
 * palette) as a hillshade PNG in its biomes' colours, for the Presets tab. A built-in preset is its own recipe; a
 * project preset merges into a recipe, so its picture is the session's recipe with the preset
 * applied and the strokes cleared (what "Apply, clear my edits" would give). Made without the
 * session lock (the session's recipe is copied under it); kept by the merged recipe's hash, so
 * an edited preset file or recipe gives a new picture. */
#define PRESET_PICTURES 48u
static struct {
    unsigned long long key;
    uint8_t *png;
    size_t size;
} preset_pictures[PRESET_PICTURES];
static size_t preset_pictures_next;
static pthread_mutex_t preset_pictures_lock = PTHREAD_MUTEX_INITIALIZER;

static uint8_t *preset_picture_kept(unsigned long long key, size_t *size)
{
    uint8_t *copy = NULL;
    pthread_mutex_lock(&preset_pictures_lock);
    for (size_t k = 0; k < PRESET_PICTURES && !copy; k++)
        if (preset_pictures[k].png && preset_pictures[k].key == key &&
            (copy = malloc(preset_pictures[k].size))) {
            memcpy(copy, preset_pictures[k].png, preset_pictures[k].size);
            *size = preset_pictures[k].size;
        }
    pthread_mutex_unlock(&preset_pictures_lock);
    return copy;
}

static void preset_picture_keep(unsigned long long key, const uint8_t *png, size_t size)
{
    uint8_t *keep = malloc(size);
    if (!keep) return;
    memcpy(keep, png, size);
    pthread_mutex_lock(&preset_pictures_lock);
    const size_t slot = preset_pictures_next++ % PRESET_PICTURES; /* the oldest goes */
    free(preset_pictures[slot].png);
    preset_pictures[slot].key = key;
    preset_pictures[slot].png = keep;
    preset_pictures[slot].size = size;
    pthread_mutex_unlock(&preset_pictures_lock);
}

enum MHD_Result studio_api_preset_picture(studio *s, struct MHD_Connection *conn)
{
    const char *id = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "id");
    const char *builtin = id ? trn_builtin_preset_text(id) : NULL;
    trn_error e;
    trn_preset preset;
    memset(&preset, 0, sizeof preset);
    if (!builtin) {
        trn_status st = id ? trn_preset_find(s->project_root, id, &preset, &e) : TRN_ERR_NOT_FOUND;
        if (st == TRN_ERR_NOT_FOUND || !id)
            return studio_reply_error(conn, 404, "preset picture: expected ?id= a preset");
        if (st) return studio_reply_trn_error(conn, 400, &e);
    }
    pthread_mutex_lock(&s->lock);
    trn_generate_options o = s->options;
    char *session = builtin ? NULL : studio_session_text(s);
    pthread_mutex_unlock(&s->lock);
    o.quality = TRN_EROSION_PREVIEW;
    o.palette = NULL;
    o.cache = NULL; /* the session's cache is the session's, under its lock */
    o.roles = false;
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_status st;
    if (builtin)
        st = trn_recipe_parse(builtin, strlen(builtin), id, &r, NULL, &e);
    else
        st = preset_recipe(session, s->recipe_path, &preset, TRN_EDITS_CLEAR, &r, &e);
    free(session);
    trn_preset_dispose(&preset);
    if (st) return studio_reply_trn_error(conn, builtin ? 500 : 400, &e);
    const uint32_t cells = 128;
    const double aspect = r.size_z / r.size_x;
    uint32_t cz = (uint32_t)lround(cells * aspect);
    if (cz < 8) cz = 8;
    st = trn_recipe_change_grid(&r, r.size_x, r.size_z, cells, cz, TRN_EDITS_CLEAR, &e);
    /* The key: the recipe the picture shows. */
    char *canon = NULL;
    size_t canon_size = 0;
    if (!st) st = trn_recipe_canonical_json(&r, &canon, &canon_size, &e);
    const unsigned long long key = canon ? studio_doc_hash(canon, canon_size) : 0;
    free(canon);
    size_t png_size = 0;
    uint8_t *png = st ? NULL : preset_picture_kept(key, &png_size);
    if (png) {
        trn_recipe_dispose(&r);
        return studio_reply_owned(conn, 200, "image/png", png, png_size, NULL);
    }
    trn_generated g;
    memset(&g, 0, sizeof g);
    if (!st) st = trn_recipe_generate(&r, &o, &g, NULL, NULL, &e);
    trn_raster8 shade = {0};
    if (!st) st = trn_render_hillshade(&g.field, NULL, &shade, NULL, NULL, &e);
    /* Shaded in each sample's biome colour: a preset that sets only biomes and rules (most
     * project presets) still shows what it changes. */
    trn_image img;
    memset(&img, 0, sizeof img);
    const uint32_t nx = g.field.cells_x + 1u, nz = g.field.cells_z + 1u;
    if (!st) st = trn_image_init(&img, shade.width, shade.height, 3, 8, &e);
    for (uint32_t y = 0; !st && y < shade.height; y++)
        for (uint32_t x = 0; x < shade.width; x++) {
            const size_t at = (size_t)y * shade.width + x;
            const double lit = shade.pixels[at * shade.channels] / 255.0;
            float c[3] = {0.8f, 0.8f, 0.8f};
            if (shade.width == nx && shade.height == nz && g.biomes.values) {
                /* The picture is north up: its first row is the last z. */
                const uint8_t label = g.biomes.values[(size_t)(nz - 1u - y) * nx + x];
                const int b = label < g.biomes.name_count
                                  ? trn_recipe_find_biome(&r, g.biomes.names[label])
                                  : -1;
                if (b >= 0) memcpy(c, r.biomes[b].color, sizeof c);
            }
            uint8_t *px = (uint8_t *)img.data + at * 3;
            for (int k = 0; k < 3; k++) {
                const double v = lit * (0.3 + 0.9 * (double)c[k]) * 255.0;
                px[k] = (uint8_t)lround(v < 255.0 ? v : 255.0);
            }
        }
    trn_raster8_dispose(&shade);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
    if (!st) {
        trn_png_options po;
        trn_png_options_default(&po);
        st = trn_png_encode(&img, &po, &png, &png_size, &e);
    }
    trn_image_dispose(&img);
    if (st) return studio_reply_trn_error(conn, builtin ? 500 : 400, &e);
    preset_picture_keep(key, png, png_size);
    return studio_reply_owned(conn, 200, "image/png", png, png_size, NULL);
}

/* POST /api/preset {"id": ID, "edits": "keep" | "clear"}: the preset merged into the session's
 * recipe (as `terrane apply-preset` merges it), one undoable step. */
enum MHD_Result studio_api_preset(studio *s, struct MHD_Connection *conn, const char *body,
                                  size_t size)
{
    json_error_t je;
    json_t *req = body ? json_loadb(body, size, 0, &je) : NULL;
    const char *id = json_string_value(json_object_get(req, "id"));
    const char *edits = json_string_value(json_object_get(req, "edits"));
    if (!id || (edits && strcmp(edits, "keep") && strcmp(edits, "clear"))) {
        json_decref(req);
        return studio_reply_error(conn, 400,
                                  "preset: expected {\"id\": PRESET, \"edits\": \"keep\" or "
                                  "\"clear\"}");
    }
    const trn_edit_policy policy =
        edits && !strcmp(edits, "clear") ? TRN_EDITS_CLEAR : TRN_EDITS_KEEP;
    trn_error e;
    trn_preset preset;
    trn_status st = trn_preset_find(s->project_root, id, &preset, &e);
    json_decref(req);
    if (st) return studio_reply_trn_error(conn, st == TRN_ERR_NOT_FOUND ? 404 : 400, &e);
    char *text = studio_session_text(s);
    trn_recipe next;
    const bool merged = text != NULL;
    st = merged ? preset_recipe(text, s->recipe_path, &preset, policy, &next, &e)
                : trn_error_set(&e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    free(text);
    trn_preset_dispose(&preset);
    /* A recipe that does not take the preset is the request's fault; the rest the server's. */
    if (st) return studio_reply_trn_error(conn, merged && st != TRN_ERR_NO_MEMORY ? 400 : 500, &e);
    const enum MHD_Result rc = studio_apply_recipe(s, conn, &next);
    trn_recipe_dispose(&next);
    return rc;
}
