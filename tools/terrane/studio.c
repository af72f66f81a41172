/* terrane studio: a local web editor: one session served over a token-guarded loopback JSON API. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "core/fileio.h"
#include "explain.h"
#include "recipe/recipe_internal.h"
#include "studio_doc.h"
#include "studio_internal.h"
#include "studio_server.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/mesh.h"
#include "terrane/palette.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"
#include "terrane/unity.h"
#include "terrane/water.h"

extern char **environ;

static const char *const help_text =
    "usage: terrane studio PROJECT_OR_RECIPE [--port N] [--open] [--allow-errors]\n"
    "                      [--max-work N | --no-work-limit] [--quiet]\n"
    "\n"
    "Generate the recipe, keep it as an editing session and serve a 3D editor for it on this\n"
    "machine only (127.0.0.1, and [::1] when present). The URL printed carries a random token\n"
    "made for this run; only a page loaded with it can use the API. Sculpt with the brush\n"
    "(raise, lower, flatten, smooth), undo, redo, regenerate, read the graph check. The recipe\n"
    "is written only by Save, atomically, changing only what was edited; unsaved work is\n"
    "autosaved to RECIPE.recovery beside it and offered on the next start. Ctrl-C stops.\n"
    "A project folder opens its one Terrain asset source (*.terrain.json at the top), or\n"
    "without one, its one scene's Terrain3D recipe or the Terrain asset it places first\n"
    "(*.scene.json), or else the one *.terrain.json a folder down (as terrain/).\n"
    "\n"
    "options:\n"
    "  --port N        the port (default 8630; 0 picks a free one, printed)\n"
    "  --open          open the page in the desktop's browser (xdg-open, given a private\n"
    "                  file that redirects: the token is on no command line)\n"
    "  --allow-errors  start even when the recipe's graph check finds errors (each is printed\n"
    "                  with its line and column; without it they refuse the start): the\n"
    "                  session runs without the graph, Save is refused until Generate succeeds\n"
    "  --max-work N    work budget of each graph node and of the strokes (default 1e10, as\n"
    "                  terrane generate); --no-work-limit: no work or memory budget (only for\n"
    "                  recipes you trust)\n"
    "  -q, --quiet     print the URL only\n"
    "\n"
    "The API and the security model: docs/studio.md.\n"
    "\n"
    "example:\n"
    "  terrane studio island.json --port 0\n";

/* ---------------------------------------------------------------------------------------------
 * Routes (the session lock held). The session's machinery they share is studio_session.c; the
 * materials, presets and export routes are studio_materials.c, studio_presets.c and
 * studio_export.c; which recipe a project folder opens is studio_project.c.
 * ------------------------------------------------------------------------------------------- */

static enum MHD_Result api_recipe(studio *s, struct MHD_Connection *conn)
{
    char *text = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_recipe_canonical_json(trn_session_recipe(s->session), &text, &size, &e))
        return studio_reply_trn_error(conn, 500, &e);
    return studio_reply_owned(conn, 200, "application/json", text, size, NULL);
}

/* Heights quantised to 16 bits (?encoding=u16): each sample's level between the window's lowest
 * and highest finite heights, h = offset + scale * q, q in 0..65534; 65535 where the height is
 * not finite (a hole). Half the bytes of float32, for a first picture at once: a page that
 * needs exact heights asks for float32 after it (the largest error is scale / 2). */
enum { HEIGHT_U16_HOLE = 65535u, HEIGHT_U16_LEVELS = 65534u };

static void quantise_u16(const float *rows, size_t row_stride, uint32_t nx, uint32_t nz,
                         uint16_t *out, double *offset, double *scale)
{
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            const double h = (double)rows[(size_t)j * row_stride + i];
            if (!isfinite(h)) continue;
            if (h < lo) lo = h;
            if (h > hi) hi = h;
        }
    if (!(lo <= hi)) lo = hi = 0.0; /* nothing finite */
    *offset = lo;
    *scale = (hi - lo) / (double)HEIGHT_U16_LEVELS;
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            const double h = (double)rows[(size_t)j * row_stride + i];
            long q = 0;
            if (!isfinite(h))
                q = HEIGHT_U16_HOLE;
            else if (*scale > 0.0)
                q = lround((h - lo) / *scale);
            if (q > (long)HEIGHT_U16_HOLE) q = HEIGHT_U16_LEVELS; /* rounding at the top */
            const uint16_t v = (uint16_t)q;
            /* Little-endian on the wire whatever this machine is. */
            uint8_t *b = (uint8_t *)&out[(size_t)j * nx + i];
            b[0] = (uint8_t)(v & 0xffu);
            b[1] = (uint8_t)(v >> 8);
        }
}

/* The field's heights (float32, or quantised to 16 bits with ?encoding=u16) or, with biomes, its
 * biome indices (one byte a sample, the recipe's biome order, colours in a header), whole or one
 * chunk. */
static enum MHD_Result api_grid(studio *s, struct MHD_Connection *conn, bool biomes)
{
    const trn_generated *g = trn_session_result(s->session);
    const trn_recipe *r = trn_session_recipe(s->session);
    const trn_field *f = &g->field;
    const char *chunk = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "chunk");
    const char *encoding = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "encoding");
    if (encoding && (biomes || (strcmp(encoding, "u16") && strcmp(encoding, "f32"))))
        return studio_reply_error(conn, 400,
                                  biomes ? "encoding: the biomes have one encoding (bytes)"
                                         : "encoding: expected u16 or f32");
    const bool u16 = encoding && !strcmp(encoding, "u16");
    /* ?stride=S: every S-th sample of the whole field and the last one of each row and column
     * (samples min(k S, cells)), S at most the chunk size: a page's first picture, whose
     * coarsest chunks stand on exactly these samples. */
    const char *stride_text = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "stride");
    uint32_t stride = 1;
    if (stride_text) {
        unsigned v;
        char tail;
        if (chunk || sscanf(stride_text, "%u%c", &v, &tail) != 1 || v < 1 || v > 4096)
            return studio_reply_error(conn, 400,
                                      chunk ? "stride: the whole field only, not with chunk"
                                            : "stride: expected a whole number 1..4096");
        stride = v < studio_chunk_cells_of(r) ? v : studio_chunk_cells_of(r);
    }
    uint32_t i0 = 0, j0 = 0, nx = f->cells_x + 1u, nz = f->cells_z + 1u;
    if (stride > 1) {
        nx = (f->cells_x + stride - 1u) / stride + 1u;
        nz = (f->cells_z + stride - 1u) / stride + 1u;
    }
    if (chunk) {
        unsigned cx, cz;
        char tail;
        const uint32_t cc = studio_chunk_cells_of(r);
        if (sscanf(chunk, "%u,%u%c", &cx, &cz, &tail) != 2 || cx >= (f->cells_x + cc - 1u) / cc ||
            cz >= (f->cells_z + cc - 1u) / cc)
            return studio_reply_error(conn, 400, "chunk: expected X,Z of a chunk in the grid");
        studio_chunk_window(r, cx, cz, &i0, &j0, &nx, &nz);
    }
    const size_t bytes = biomes ? 1u : u16 ? sizeof(uint16_t) : sizeof(float);
    uint8_t *out = malloc((size_t)nx * nz * bytes);
    if (!out) return studio_reply_error(conn, 500, "out of memory");
    const uint8_t *from = biomes ? g->biomes.values : (const uint8_t *)f->heights;
    const size_t row = f->cells_x + 1u;
    const float *heights = f->heights + (size_t)j0 * row + i0;
    float *picked = NULL;
    if (stride > 1 && from) {
        /* The picked samples, gathered (heights as float32 first when they are quantised). */
        const size_t size = u16 ? sizeof(float) : bytes;
        uint8_t *to = u16 ? (uint8_t *)(picked = malloc((size_t)nx * nz * sizeof(float))) : out;
        if (!to) {
            free(out);
            return studio_reply_error(conn, 500, "out of memory");
        }
        for (uint32_t j = 0; j < nz; j++) {
            const size_t sj = (size_t)(j * stride < f->cells_z ? j * stride : f->cells_z);
            for (uint32_t i = 0; i < nx; i++) {
                const size_t si = (size_t)(i * stride < f->cells_x ? i * stride : f->cells_x);
                memcpy(to + ((size_t)j * nx + i) * size, from + (sj * row + si) * size, size);
            }
        }
        if (u16) heights = picked;
    }
    double offset = 0.0, scale = 0.0;
    if (u16)
        quantise_u16(heights, stride > 1 ? nx : row, nx, nz, (uint16_t *)(void *)out, &offset,
                     &scale);
    free(picked);
    for (uint32_t j = 0; j < nz && from && !u16 && stride == 1; j++)
        memcpy(out + (size_t)j * nx * bytes, from + ((size_t)(j0 + j) * row + i0) * bytes,
               nx * bytes);
    if (!from) memset(out, 0, (size_t)nx * nz * bytes);
    /* "R,G,B;R,G,B;...", 0..255, one per biome index. */
    char colors[4096] = "";
    size_t used = 0;
    for (uint32_t k = 0; biomes && k < g->biomes.name_count && used + 16 < sizeof colors; k++) {
        const int b = trn_recipe_find_biome(r, g->biomes.names[k]);
        static const float grey[4] = {0.5f, 0.5f, 0.5f, 1.0f};
        const float *c = b >= 0 ? r->biomes[b].color : grey;
        used += (size_t)snprintf(colors + used, sizeof colors - used, "%s%d,%d,%d", k ? ";" : "",
                                 (int)lroundf(c[0] * 255.0f), (int)lroundf(c[1] * 255.0f),
                                 (int)lroundf(c[2] * 255.0f));
    }
    char v[11][32];
    snprintf(v[10], sizeof v[10], "%u", stride);
    snprintf(v[8], sizeof v[8], "%.17g", offset);
    snprintf(v[9], sizeof v[9], "%.17g", scale);
    snprintf(v[0], sizeof v[0], "%u", f->cells_x);
    snprintf(v[1], sizeof v[1], "%u", f->cells_z);
    snprintf(v[2], sizeof v[2], "%.17g", f->size_x);
    snprintf(v[3], sizeof v[3], "%.17g", f->size_z);
    snprintf(v[4], sizeof v[4], "%u", studio_chunk_cells_of(r));
    snprintf(v[5], sizeof v[5], "%u,%u", i0, j0);
    snprintf(v[6], sizeof v[6], "%u,%u", nx, nz);
    snprintf(v[7], sizeof v[7], "%.17g", g->sea_level);
    const char *headers[] = {"X-Terrane-Cells",
                             NULL,
                             "X-Terrane-Size",
                             NULL,
                             "X-Terrane-Chunk-Cells",
                             v[4],
                             "X-Terrane-Origin",
                             v[5],
                             "X-Terrane-Samples",
                             v[6],
                             "X-Terrane-Sea-Level",
                             v[7],
                             biomes ? "X-Terrane-Biome-Colors" : NULL,
                             colors,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL,
                             NULL};
    if (u16) {
        /* After the biome colours' slot, which is NULL for heights. */
        headers[12] = "X-Terrane-Encoding";
        headers[13] = "u16";
        headers[14] = "X-Terrane-Height-Offset";
        headers[15] = v[8];
        headers[16] = "X-Terrane-Height-Scale";
        headers[17] = v[9];
    }
    if (stride > 1) { /* in the first free slot: a NULL name ends the list */
        size_t k = 12;
        while (headers[k]) k += 2;
        headers[k] = "X-Terrane-Stride";
        headers[k + 1] = v[10];
    }
    char cells[64], size[80];
    snprintf(cells, sizeof cells, "%s,%s", v[0], v[1]);
    snprintf(size, sizeof size, "%s,%s", v[2], v[3]);
    headers[1] = cells;
    headers[3] = size;
    return studio_reply_owned(conn, 200, "application/octet-stream", out, (size_t)nx * nz * bytes,
                              headers);
}

/* The recipe's own parser reads the stroke: the session's recipe with the stroke as its only
 * one, so every field and layer is checked as a saved recipe would be. */
static trn_status parse_stroke(const trn_recipe *current, const char *body, size_t size,
                               trn_recipe *out, trn_error *e)
{
    trn_error_clear(e);
    json_error_t je;
    json_t *stroke = body ? json_loadb(body, size, 0, &je) : NULL;
    if (!json_is_object(stroke)) {
        json_decref(stroke);
        return trn_error_set(e, TRN_ERR_JSON, NULL, -1,
                             "stroke: expected a JSON object such as {\"type\": \"raise\", "
                             "\"radius\": 20, \"center\": [x, z]}");
    }
    char *text = NULL;
    size_t text_size = 0;
    trn_status st = trn_recipe_canonical_json(current, &text, &text_size, e);
    if (st) {
        json_decref(stroke);
        return st;
    }
    json_t *doc = json_loadb(text, text_size, 0, &je);
    free(text);
    if (!doc) {
        json_decref(stroke);
        return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    const char *type = json_string_value(json_object_get(stroke, "type"));
    const char *section = type && strcmp(type, "region") == 0      ? "regions"
                          : type && strcmp(type, "exclusion") == 0 ? "exclusions"
                                                                   : "edits";
    json_object_del(doc, "regions");
    json_object_del(doc, "edits");
    json_object_del(doc, "exclusions");
    json_object_set_new(doc, section, json_pack("[o]", stroke));
    char *joined = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!joined) return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    memset(out, 0, sizeof *out);
    st = trn_recipe_parse(joined, strlen(joined), "stroke", out, NULL, e);
    free(joined);
    if (!st && out->stroke_count != 1) {
        trn_recipe_dispose(out);
        snprintf(e->message, sizeof e->message, "stroke: expected one stroke");
        st = trn_error_set(e, TRN_ERR_JSON, NULL, -1, "stroke: expected one stroke");
    }
    return st;
}

/* True when no stamp of the stroke reaches the terrain (every point farther than its radius
 * from the rectangle 0..size): applying it would change nothing. A protect snapshot holds grid
 * samples and is never outside. */
static bool stroke_outside(const trn_recipe *r, const trn_stroke *k)
{
    if (k->kind == TRN_STROKE_PROTECT || !k->point_count) return false;
    for (uint32_t p = 0; p < k->point_count; p++) {
        const double x = k->points[2 * p], z = k->points[2 * p + 1];
        const double dx = x < 0.0 ? -x : x > r->size_x ? x - r->size_x : 0.0;
        const double dz = z < 0.0 ? -z : z > r->size_z ? z - r->size_z : 0.0;
        if (dx * dx + dz * dz < k->radius * k->radius) return false;
    }
    return true;
}

/* ?extend=1: the body replaces the last stroke (undone, then the longer one applied: one
 * history entry while the mouse drags); the reply holds both edits' chunks. */
static enum MHD_Result api_stroke(studio *s, struct MHD_Connection *conn, const char *body,
                                  size_t size)
{
    const char *ext = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "extend");
    if (ext && strcmp(ext, "0") != 0 && strcmp(ext, "1") != 0)
        return studio_reply_error(conn, 400, "stroke: extend must be 0 or 1");
    const bool extend = ext && strcmp(ext, "1") == 0;
    if (extend && !(s->can_extend && trn_session_can_undo(s->session)))
        return studio_reply_error(conn, 409,
                                  "no stroke to extend: none was applied since the last "
                                  "generation, or it was undone");
    trn_recipe one;
    trn_error e;
    if (parse_stroke(trn_session_recipe(s->session), body, size, &one, &e))
        return studio_reply_trn_error(conn, 400, &e);
    if (!extend && stroke_outside(trn_session_recipe(s->session), &one.strokes[0])) {
        /* Nothing of the terrain under it: no history step, nothing unsaved. */
        trn_recipe_dispose(&one);
        json_t *o = studio_state_json(s);
        json_object_set_new(o, "chunks", json_array());
        json_object_set_new(o, "water_changed", json_false());
        json_object_set_new(o, "ignored",
                            json_string("the stroke lies wholly outside the terrain"));
        return studio_reply_json(conn, 200, o);
    }
    const water_mark before = studio_water_mark_of(s);
    trn_chunk_set undone = {0}, changed = {0};
    trn_status st = extend ? trn_session_undo(s->session, &undone, &e) : TRN_OK;
    if (st) {
        trn_recipe_dispose(&one);
        return studio_reply_trn_error(conn, 500, &e);
    }
    st = trn_session_apply_stroke(s->session, &one.strokes[0], &changed, &e);
    trn_recipe_dispose(&one);
    if (st) {
        /* The previous stroke comes back: a refused extension changes nothing. */
        if (extend) {
            trn_chunk_set again = {0};
            (void)trn_session_redo(s->session, &again, NULL);
            trn_chunk_set_dispose(&again);
        }
        trn_chunk_set_dispose(&undone);
        return studio_reply_trn_error(conn, st == TRN_ERR_NO_MEMORY ? 500 : 400, &e);
    }
    for (size_t k = 0; undone.changed && k < (size_t)changed.chunks_x * changed.chunks_z; k++)
        changed.changed[k] |= undone.changed[k];
    trn_chunk_set_dispose(&undone);
    s->can_extend = true;
    if (extend && s->hist_pos) {
        struct hist_entry *top = &s->hist[s->hist_pos - 1];
        s->hist_bytes -= top->size;
        free(top->after);
        top->after = studio_session_text(s);
        top->size = top->after ? strlen(top->after) : 0;
        s->hist_bytes += top->size;
        top->id = ++s->hist_next;
        studio_hist_trim(s);
    } else if (!studio_hist_push(s, false)) {
        s->hist_base = ++s->hist_next; /* out of memory: at least unsaved */
    }
    studio_session_changed(s);
    json_t *o = studio_edit_json(s, &changed, &before);
    trn_chunk_set_dispose(&changed);
    return studio_reply_json(conn, 200, o);
}

/* Undo and redo walk the shared history: a step the session still holds is undone or redone
 * incrementally (the changed chunks); one before or after a generation, a layer switch or a
 * restore regenerates the recipe it leads to ("regenerated": the page reloads everything). */
static enum MHD_Result api_history(studio *s, struct MHD_Connection *conn, bool undo)
{
    if (undo ? s->hist_pos == 0 : s->hist_pos >= s->hist_count)
        return studio_reply_error(conn, 409, undo ? "nothing to undo" : "nothing to redo");
    trn_error e;
    s->can_extend = false;
    const bool native = undo ? s->hist_pos > s->native_lo && trn_session_can_undo(s->session)
                             : s->hist_pos < s->native_hi && trn_session_can_redo(s->session);
    if (!native) {
        const char *text =
            undo ? studio_hist_before(s, s->hist_pos - 1) : s->hist[s->hist_pos].after;
        if (!text) return studio_reply_error(conn, 500, "out of memory (the step was not kept)");
        trn_recipe next;
        memset(&next, 0, sizeof next);
        trn_status st = trn_recipe_parse(text, strlen(text), s->recipe_path, &next, NULL, &e);
        if (!st && (st = trn_recipe_set_base_dir_of(&next, s->recipe_path, &e)))
            trn_recipe_dispose(&next);
        if (!st) {
            st = studio_regenerate(s, &next, s->options.quality, &e);
            trn_recipe_dispose(&next);
        }
        if (st) return studio_reply_trn_error(conn, st == TRN_ERR_CANCELLED ? 503 : 500, &e);
        if (undo)
            s->hist_pos--;
        else
            s->hist_pos++;
        s->native_lo = s->native_hi = s->hist_pos;
        studio_session_changed(s);
        json_t *o = studio_state_json(s);
        json_object_set_new(o, "regenerated", json_true());
        json_object_set_new(o, "chunks", json_array());
        json_object_set_new(o, "water_changed", json_true());
        json_object_set_new(o, "layers", studio_layers_json(trn_session_recipe(s->session)));
        return studio_reply_json(conn, 200, o);
    }
    trn_chunk_set changed = {0};
    const water_mark before = studio_water_mark_of(s);
    trn_status st = undo ? trn_session_undo(s->session, &changed, &e)
                         : trn_session_redo(s->session, &changed, &e);
    if (st) return studio_reply_trn_error(conn, 500, &e);
    if (undo)
        s->hist_pos--;
    else
        s->hist_pos++;
    studio_session_changed(s);
    json_t *o = studio_edit_json(s, &changed, &before);
    trn_chunk_set_dispose(&changed);
    return studio_reply_json(conn, 200, o);
}

/* The recipe object to save: the file's keys in the file's order with the session's values,
 * then the session's other keys (a key the file spelled at its default stays). */
static json_t *merge_in_file_order(const json_t *file_recipe, json_t *session)
{
    json_t *out = json_object();
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)(uintptr_t)file_recipe, key, value)
    {
        json_t *now = json_object_get(session, key);
        json_object_set(out, key, now ? now : value);
    }
    json_object_foreach(session, key, value)
    {
        if (!json_object_get(out, key)) json_object_set(out, key, value);
    }
    return out;
}

/* Text of doc for people: the recipe's own number printing (shortest that reads back). */
static char *print_doc(const json_t *doc)
{
    trn_rcp_buf b = {0};
    trn_rcp_emit_json_in_order(&b, doc, 2, 0);
    trn_rcp_buf_put(&b, "\n", 1);
    if (b.failed) {
        trn_rcp_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* True when text reads back as a recipe whose canonical JSON is canon. */
static bool reads_back(const char *text, const char *canon)
{
    trn_recipe r;
    memset(&r, 0, sizeof r);
    char *again = NULL;
    bool same = !trn_recipe_parse(text, strlen(text), "save", &r, NULL, NULL) &&
                !trn_recipe_canonical_json(&r, &again, NULL, NULL) && strcmp(again, canon) == 0;
    free(again);
    trn_recipe_dispose(&r);
    return same;
}

/* The document to save: the session's recipe in the file's key order, inside the Terrain asset
 * document it came from when it came from one (its id and other fields kept). When that form
 * does not read back to the session's recipe, the canonical form is written instead. */
static trn_status save_text(studio *s, char **text, trn_error *e)
{
    char *canon = NULL;
    size_t canon_size = 0;
    trn_status st =
        trn_recipe_canonical_json(trn_session_recipe(s->session), &canon, &canon_size, e);
    if (st) return st;
    json_error_t je;
    json_t *recipe = json_loadb(canon, canon_size, 0, &je);
    if (!recipe) {
        free(canon);
        return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    /* The file as it was loaded (or last saved): a change made on disk since is not merged. */
    json_t *file = s->disk_text ? json_loadb(s->disk_text, s->disk_size, 0, &je) : NULL;
    if (s->kind == TRN_DOCUMENT_TERRAIN_ASSET && !json_is_object(file)) {
        json_decref(file);
        json_decref(recipe);
        free(canon);
        return trn_error_set(e, TRN_ERR_JSON, s->recipe_path, -1,
                             "%s:%d:%d: %s (did the file change since?)", s->recipe_path, je.line,
                             je.column, je.text);
    }
    json_t *file_recipe =
        s->kind == TRN_DOCUMENT_TERRAIN_ASSET ? json_object_get(file, "recipe") : file;
    *text = NULL;
    for (int attempt = 0; attempt < 2 && !*text; attempt++) {
        /* First the file's order; then, if that does not read back, the canonical object. */
        json_t *body = attempt == 0 && json_is_object(file_recipe)
                           ? merge_in_file_order(file_recipe, recipe)
                           : json_incref(recipe);
        json_t *doc = body;
        if (s->kind == TRN_DOCUMENT_TERRAIN_ASSET) {
            doc = json_deep_copy(file);
            json_object_set_new(doc, "recipe", body);
        }
        char *candidate = doc ? print_doc(doc) : NULL;
        json_decref(doc);
        if (candidate && (attempt == 1 || reads_back(candidate, canon)))
            *text = candidate;
        else
            free(candidate);
    }
    json_decref(file);
    json_decref(recipe);
    free(canon);
    return *text ? TRN_OK : trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
}

/* The minimal textual edit of the file as loaded: only the members the studio changed (strokes,
 * layers) rewritten, checked to read back as the session's recipe. NULL when it cannot be. */
static char *minimal_text(studio *s)
{
    if (!s->disk_text) return NULL;
    trn_recipe file;
    trn_error e;
    char *file_canon = NULL, *session_canon = NULL, *out = NULL;
    if (studio_parse_disk_text(s, s->disk_text, s->disk_size, &file, NULL, &e)) return NULL;
    const bool ok =
        !trn_recipe_canonical_json(&file, &file_canon, NULL, &e) &&
        !trn_recipe_canonical_json(trn_session_recipe(s->session), &session_canon, NULL, &e);
    trn_recipe_dispose(&file);
    json_error_t je;
    json_t *fc = ok ? json_loads(file_canon, 0, &je) : NULL;
    json_t *sc = ok ? json_loads(session_canon, 0, &je) : NULL;
    if (fc && sc) out = studio_doc_minimal_edit(s->disk_text, s->disk_size, fc, sc);
    json_decref(fc);
    json_decref(sc);
    if (out) {
        /* It must read back as the session's recipe, exactly. */
        trn_recipe again;
        char *canon = NULL;
        const bool same = !studio_parse_disk_text(s, out, strlen(out), &again, NULL, &e) &&
                          !trn_recipe_canonical_json(&again, &canon, NULL, &e) &&
                          strcmp(canon, session_canon) == 0;
        if (canon || same) trn_recipe_dispose(&again);
        free(canon);
        if (!same) {
            free(out);
            out = NULL;
        }
    }
    free(file_canon);
    free(session_canon);
    return out;
}

/* ?force=1 writes even when the file changed on disk since it was loaded (the page asks first). */
static enum MHD_Result api_save(studio *s, struct MHD_Connection *conn)
{
    trn_error e;
    trn_error_clear(&e);
    if (!trn_path_inside(s->project_root, s->save_path))
        return studio_reply_error(conn, 403, "the recipe is outside the project folder");
    if (s->graph_dropped)
        return studio_reply_error(conn, 409,
                                  "the session runs without the recipe's graph (--allow-errors): "
                                  "fix the graph in the file and Generate before saving");
    const char *force = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "force");
    if (force && strcmp(force, "0") != 0 && strcmp(force, "1") != 0)
        return studio_reply_error(conn, 400, "save: force must be 0 or 1");
    if (studio_disk_check(s)) studio_publish_state(s);
    if (s->disk_changed && !(force && !strcmp(force, "1"))) {
        char msg[900];
        snprintf(msg, sizeof msg,
                 "%s changed on disk since the studio loaded it; saving would overwrite that "
                 "change. Generate loads the file as it is now (unsaved strokes are lost), or "
                 "save anyway to replace it",
                 s->recipe_path);
        json_t *o = json_pack("{s:o,s:b}", "error", cli_json_string(msg), "conflict", 1);
        return studio_reply_json(conn, 409, o);
    }
    char *text = minimal_text(s);
    if (!text && s->scene)
        return studio_reply_error(conn, 500,
                                  "the scene's recipe could not be edited in place; nothing "
                                  "was written");
    if (!text && save_text(s, &text, &e)) return studio_reply_trn_error(conn, 500, &e);
    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, s->save_path, &e);
    if (!st) {
        trn_atomic_file_write(&af, text, strlen(text));
        st = trn_atomic_file_commit(&af, &e);
    }
    if (st) {
        free(text);
        return studio_reply_trn_error(conn, 500, &e);
    }
    struct stat stt;
    struct timespec mtime = {0, 0};
    if (stat(s->save_path, &stt) == 0) mtime = stt.st_mtim;
    studio_disk_remember(s, text, strlen(text), mtime);
    studio_hist_mark_saved(s);
    /* Saved: the recovery file has nothing more to offer. */
    if (s->recovery_path) unlink(s->recovery_path);
    s->autosaved = s->revision;
    studio_publish_state(s);
    cli_note(s->ctx, "saved %s", s->save_path);
    return studio_reply_json(conn, 200,
                             json_pack("{s:o}", "saved", cli_json_string(s->recipe_path)));
}

static enum MHD_Result api_generate(studio *s, struct MHD_Connection *conn, const char *body,
                                    size_t size)
{
    trn_recipe next;
    memset(&next, 0, sizeof next);
    trn_error e;
    /* ?quality=preview|final switches the generation's quality (a new session: a session keeps
     * the options it was made with); absent: the current one. */
    const char *q = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "quality");
    trn_erosion_quality quality = s->options.quality;
    if (q) {
        if (!strcmp(q, "preview"))
            quality = TRN_EROSION_PREVIEW;
        else if (!strcmp(q, "final"))
            quality = TRN_EROSION_FINAL;
        else {
            char msg[160];
            snprintf(msg, sizeof msg,
                     "generate: quality: expected preview or final, found \"%.40s\"", q);
            return studio_reply_error(conn, 400, msg);
        }
    }
    /* No body: the recipe file as it is on disk now (edited elsewhere); else the body's recipe. */
    const bool from_disk = !(body && size);
    char *text = NULL;
    size_t text_size = 0;
    struct timespec mtime = {0, 0};
    trn_status st;
    if (from_disk) {
        text = studio_read_disk(s->save_path, &text_size, &mtime);
        st = text ? studio_parse_disk_text(s, text, text_size, &next, NULL, &e)
                  : trn_error_set(&e, TRN_ERR_IO, s->recipe_path, -1, "%s: cannot read: %s",
                                  s->recipe_path, strerror(errno));
    } else {
        st = trn_recipe_parse(body, size, "request", &next, NULL, &e);
        /* A body's files (a Heightfield Input's path) are relative to the recipe file's folder. */
        if (!st && (st = trn_recipe_set_base_dir_of(&next, s->recipe_path, &e)))
            trn_recipe_dispose(&next);
    }
    if (st) {
        free(text);
        return studio_reply_trn_error(conn, 400, &e);
    }
    st = studio_regenerate(s, &next, quality, &e);
    trn_recipe_dispose(&next);
    if (st) {
        free(text);
        return studio_reply_trn_error(conn, st == TRN_ERR_CANCELLED ? 503 : 400, &e);
    }
    s->graph_dropped = false;
    if (from_disk)
        studio_disk_remember(s, text, text_size, mtime); /* the file as it is now: clean */
    /* A step of the history (undo goes back to the session before), unless only the quality
     * changed: the same recipe. */
    char *now = studio_session_text(s);
    const char *was = studio_hist_before(s, s->hist_pos);
    if (!now || !was || strcmp(now, was) != 0)
        studio_hist_push(s, true);
    else
        s->native_lo = s->native_hi = s->hist_pos;
    free(now);
    if (from_disk) studio_hist_mark_saved(s);
    studio_session_changed(s);
    const trn_field *f = &trn_session_result(s->session)->field;
    return studio_reply_json(conn, 200,
                             json_pack("{s:[I,I],s:[f,f]}", "cells", (json_int_t)f->cells_x,
                                       (json_int_t)f->cells_z, "size", f->size_x, f->size_z));
}

static enum MHD_Result api_check(studio *s, struct MHD_Connection *conn)
{
    /* The file on disk no longer reads as a recipe: that is the finding, where it is. */
    if (studio_disk_check(s)) studio_publish_state(s);
    if (s->disk_changed && s->disk_error[0]) {
        json_t *d = json_pack("{s:s,s:s,s:o}", "severity", "error", "check", "recipe", "message",
                              cli_json_string(s->disk_error));
        if (d && s->disk_line > 0) {
            json_object_set_new(d, "line", json_integer(s->disk_line));
            json_object_set_new(d, "column", json_integer(s->disk_column));
        }
        return studio_reply_json(conn, 200,
                                 json_pack("{s:o,s:i,s:i,s:[o],s:b}", "file",
                                           cli_json_string(s->recipe_path), "errors", 1, "warnings",
                                           0, "diagnostics", d, "on_disk", 1));
    }
    cli_ctx quiet = {0};
    quiet.verb = "studio";
    quiet.quiet = true;
    /* Without the graph (--allow-errors) the file's graph is the one to fix. */
    trn_recipe file;
    memset(&file, 0, sizeof file);
    trn_error e;
    if (s->graph_dropped && trn_recipe_read(s->recipe_path, &file, NULL, &e))
        return studio_reply_trn_error(conn, 400, &e);
    cli_graph g;
    const int rc =
        cli_graph_load(&quiet, s->recipe_path,
                       s->graph_dropped ? &file : trn_session_recipe(s->session), s->kind, &g);
    trn_recipe_dispose(&file);
    if (rc) return studio_reply_error(conn, 500, "the graph could not be built");
    json_t *list = json_array();
    for (size_t k = 0; k < g.diags.count; k++)
        json_array_append_new(list, cli_graph_diagnostic_json(&g.diags.items[k]));
    json_t *o =
        json_pack("{s:o,s:I,s:I,s:o}", "file", cli_json_string(s->recipe_path), "errors",
                  (json_int_t)g.errors, "warnings", (json_int_t)g.warnings, "diagnostics", list);
    cli_graph_dispose(&g);
    return studio_reply_json(conn, 200, o);
}

static bool query_number(struct MHD_Connection *conn, const char *name, double *out)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
    if (!v || !*v) return false;
    char *end;
    *out = strtod(v, &end);
    return *end == '\0' && isfinite(*out);
}

static enum MHD_Result api_water(studio *s, struct MHD_Connection *conn)
{
    double x, z, y = -1e30;
    if (!query_number(conn, "x", &x) || !query_number(conn, "z", &z))
        return studio_reply_error(conn, 400, "water: expected ?x=&z= (terrain-local numbers)");
    (void)query_number(conn, "y", &y);
    const trn_generated *g = trn_session_result(s->session);
    if (!g->has_water) return studio_reply_json(conn, 200, json_pack("{s:b}", "wet", 0));
    trn_water_sample w;
    const bool wet = trn_water_query(&g->water, &g->field, x, y, z, &w);
    if (!wet) return studio_reply_json(conn, 200, json_pack("{s:b}", "wet", 0));
    return studio_reply_json(conn, 200,
                             json_pack("{s:b,s:o,s:f,s:[f,f,f],s:b}", "wet", 1, "body",
                                       cli_json_string(w.body_id ? w.body_id : ""), "depth",
                                       w.depth, "surface", w.surface[0], w.surface[1], w.surface[2],
                                       "underwater", w.underwater));
}

static enum MHD_Result api_instances(studio *s, struct MHD_Connection *conn)
{
    if (!s->has_palette) return studio_reply_json(conn, 200, json_pack("{s:[]}", "instances"));
    trn_instances inst;
    memset(&inst, 0, sizeof inst);
    trn_error e;
    char *text = NULL;
    size_t size = 0;
    trn_status st = trn_session_instances(s->session, &inst, &e);
    if (!st) st = trn_instances_write_json(&s->palette, &inst, &text, &size, &e);
    trn_instances_dispose(&inst);
    if (st) return studio_reply_trn_error(conn, 500, &e);
    return studio_reply_owned(conn, 200, "application/json", text, size, NULL);
}

/* A graph node's output value as a PNG, north up: a heightfield's hillshade, a mask's 0..1 as
 * grey; TRN_ERR_UNSUPPORTED for other kinds. */
static trn_status value_png(const trn_graph_value *v, const char *node, uint8_t **png,
                            size_t *png_size, trn_error *e)
{
    trn_image img;
    memset(&img, 0, sizeof img);
    trn_raster8 shade = {0};
    trn_status st;
    if (v->kind == TRN_PIN_HEIGHTFIELD) {
        const trn_field f = {v->cells_x, v->cells_z, v->size_x, v->size_z,
                             (float *)(uintptr_t)v->values, 0.0, 0.0}; /* only read */
        st = trn_render_hillshade(&f, NULL, &shade, NULL, NULL, e);
        img.width = shade.width;
        img.height = shade.height;
        img.channels = shade.channels;
        img.bit_depth = 8;
        img.data = shade.pixels;
    } else if (v->kind == TRN_PIN_MASK) {
        const uint32_t w = v->cells_x + 1u, h = v->cells_z + 1u;
        if (!(st = trn_image_init(&img, w, h, 1, 8, e))) {
            uint8_t *px = img.data;
            for (uint32_t r = 0; r < h; r++)
                for (uint32_t c = 0; c < w; c++) {
                    const double m = (double)v->values[(size_t)(h - 1u - r) * w + c];
                    px[(size_t)r * w + c] =
                        (uint8_t)lround((m > 0.0 ? (m < 1.0 ? m : 1.0) : 0.0) * 255.0);
                }
        }
    } else {
        return trn_error_set(e, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "node '%s': that output is a %s; previews show heightfields and masks",
                             node, trn_pin_kind_name(v->kind));
    }
    if (!st) {
        trn_png_options po;
        trn_png_options_default(&po);
        st = trn_png_encode(&img, &po, png, png_size, e);
    }
    if (v->kind == TRN_PIN_HEIGHTFIELD)
        trn_raster8_dispose(&shade);
    else
        trn_image_dispose(&img);
    return st;
}

/* A graph node's output as a PNG (value_png). The graph runs again on the generation's cache,
 * so only nodes it does not hold are computed. */
static enum MHD_Result api_preview(studio *s, struct MHD_Connection *conn)
{
    const char *node = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "node");
    const char *pin = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "pin");
    if (!node || !*node) return studio_reply_error(conn, 400, "preview: expected ?node=ID");
    const trn_recipe *recipe = trn_session_recipe(s->session);
    trn_graph graph;
    trn_error e;
    if (trn_graph_from_recipe(recipe, &graph, &e)) return studio_reply_trn_error(conn, 400, &e);
    trn_graph_options go;
    memset(&go, 0, sizeof go);
    go.threads = s->options.threads;
    go.quality = s->options.quality;
    go.cache = s->cache;
    go.max_work = s->options.max_work;
    go.max_memory = s->options.max_memory;
    go.palette = s->options.palette;
    trn_graph_run *run = NULL;
    trn_status st = trn_graph_evaluate(&graph, recipe, &go, &run, NULL, NULL, &e);
    trn_graph_dispose(&graph);
    if (st) return studio_reply_trn_error(conn, 400, &e);
    trn_graph_value v;
    if ((st = trn_graph_run_output(run, node, pin && *pin ? pin : NULL, &v, &e))) {
        trn_graph_run_free(run);
        return studio_reply_trn_error(conn, 404, &e);
    }
    uint8_t *png = NULL;
    size_t png_size = 0;
    st = value_png(&v, node, &png, &png_size, &e);
    trn_graph_run_free(run);
    if (st) return studio_reply_trn_error(conn, st == TRN_ERR_UNSUPPORTED ? 400 : 500, &e);
    return studio_reply_owned(conn, 200, "image/png", png, png_size, NULL);
}

/* The longer side of a draft preview's grid: a parameter being dragged is shown at once. */
#define DRAFT_CELLS 128u

/* POST /api/preview?node=ID[&pin=P], body: the whole recipe as the page would send it to
 * /api/edit (a parameter being dragged): the node's output as a PNG, at preview quality on a
 * grid of at most DRAFT_CELLS cells a side, nothing applied (no history step, the session
 * unchanged). Without the session lock (nothing of the session is read but the options); one
 * draft at a time. The reply says X-Terrane-Preview: draft and the grid's cells. */
static enum MHD_Result api_preview_draft(studio *s, struct MHD_Connection *conn,
                                         const char *body, size_t size)
{
    const char *node = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "node");
    const char *pin = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "pin");
    if (!node || !*node) return studio_reply_error(conn, 400, "preview: expected ?node=ID");
    if (!body || !size) return studio_reply_error(conn, 400, "preview: expected the recipe");
    pthread_mutex_lock(&s->lock);
    const int threads = s->options.threads;
    const uint64_t max_work = s->options.max_work, max_memory = s->options.max_memory;
    pthread_mutex_unlock(&s->lock);
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_error e;
    trn_status st = trn_recipe_parse(body, size, "preview", &r, NULL, &e);
    if (!st && (st = trn_recipe_set_base_dir_of(&r, s->recipe_path, &e))) trn_recipe_dispose(&r);
    if (st) return studio_reply_trn_error(conn, 400, &e);
    /* Coarse: the same world on fewer cells (node parameters are in world units). */
    const uint32_t longer = r.cells_x > r.cells_z ? r.cells_x : r.cells_z;
    if (longer > DRAFT_CELLS) {
        uint32_t cx = (uint32_t)(((uint64_t)r.cells_x * DRAFT_CELLS + longer / 2) / longer);
        uint32_t cz = (uint32_t)(((uint64_t)r.cells_z * DRAFT_CELLS + longer / 2) / longer);
        st = trn_recipe_change_grid(&r, r.size_x, r.size_z, cx ? cx : 1u, cz ? cz : 1u,
                                    TRN_EDITS_CLEAR, &e);
    }
    trn_graph graph;
    memset(&graph, 0, sizeof graph);
    if (!st) st = trn_graph_from_recipe(&r, &graph, &e);
    if (st) {
        trn_recipe_dispose(&r);
        return studio_reply_trn_error(conn, 400, &e);
    }
    pthread_mutex_lock(&s->draft_lock);
    if (!s->draft_cache) st = trn_graph_cache_new(NULL, (size_t)256 << 20, &s->draft_cache, &e);
    trn_graph_options go;
    memset(&go, 0, sizeof go);
    go.threads = threads;
    go.quality = TRN_EROSION_PREVIEW;
    go.cache = s->draft_cache;
    go.max_work = max_work;
    go.max_memory = max_memory;
    trn_graph_run *run = NULL;
    if (!st) st = trn_graph_evaluate(&graph, &r, &go, &run, NULL, NULL, &e);
    trn_graph_dispose(&graph);
    unsigned status = 400;
    uint8_t *png = NULL;
    size_t png_size = 0;
    trn_graph_value v;
    memset(&v, 0, sizeof v);
    if (!st && (st = trn_graph_run_output(run, node, pin && *pin ? pin : NULL, &v, &e)))
        status = 404;
    if (!st && (st = value_png(&v, node, &png, &png_size, &e)))
        status = st == TRN_ERR_UNSUPPORTED ? 400 : 500;
    trn_graph_run_free(run);
    pthread_mutex_unlock(&s->draft_lock);
    trn_recipe_dispose(&r);
    if (st) return studio_reply_trn_error(conn, status, &e);
    char cells[64];
    snprintf(cells, sizeof cells, "%u,%u", v.cells_x, v.cells_z);
    const char *headers[] = {"X-Terrane-Preview", "draft", "X-Terrane-Cells", cells, NULL};
    return studio_reply_owned(conn, 200, "image/png", png, png_size, headers);
}

/* ---------------------------------------------------------------------------------------------
 * Layers, node report, explain, LOD errors, water grids.
 * ------------------------------------------------------------------------------------------- */

static enum MHD_Result api_layers(studio *s, struct MHD_Connection *conn)
{
    return studio_reply_json(
        conn, 200,
        json_pack("{s:o}", "layers", studio_layers_json(trn_session_recipe(s->session))));
}

/* A layer by id, else by display name; NULL when none. */
static const trn_layer *find_layer(const trn_recipe *r, const char *name)
{
    uint32_t count = 0;
    const trn_layer *layers = trn_recipe_layers(r, &count);
    for (uint32_t l = 0; l < count; l++)
        if (strcmp(layers[l].id, name) == 0) return &layers[l];
    for (uint32_t l = 0; l < count; l++)
        if (layers[l].name && strcmp(layers[l].name, name) == 0) return &layers[l];
    return NULL;
}

/* The session's recipe with layer id's enabled flag set: its canonical JSON with "layers"
 * spelled out (the five defaults when it had none), parsed again, so the recipe's own checks
 * and canonical form (defaults omitted again) apply. */
static trn_status recipe_with_layer(const trn_recipe *current, const char *id, bool enabled,
                                    trn_recipe *out, trn_error *e)
{
    char *text = NULL;
    size_t size = 0;
    trn_status st = trn_recipe_canonical_json(current, &text, &size, e);
    if (st) return st;
    json_error_t je;
    json_t *doc = json_loadb(text, size, 0, &je);
    free(text);
    json_t *layers = json_object_get(doc, "layers");
    if (doc && !layers) {
        layers = json_array();
        for (int g = 0; g < TRN_LAYER_GROUP_COUNT; g++)
            json_array_append_new(
                layers, json_pack("{s:s}", "id", trn_layer_group_name((trn_layer_group)g)));
        json_object_set_new(doc, "layers", layers);
    }
    for (size_t k = 0; k < json_array_size(layers); k++) {
        json_t *layer = json_array_get(layers, k);
        const char *lid = json_string_value(json_object_get(layer, "id"));
        if (lid && strcmp(lid, id) == 0)
            json_object_set_new(layer, "enabled", json_boolean(enabled));
    }
    char *joined = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!joined) return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    memset(out, 0, sizeof *out);
    st = trn_recipe_parse(joined, strlen(joined), "layer", out, NULL, e);
    free(joined);
    /* The same folder for the files the recipe names (a Heightfield Input's path). */
    if (!st && (st = trn_recipe_set_base_dir(out, current->base_dir, e))) trn_recipe_dispose(out);
    return st;
}

/* {"name": LAYER, "enabled": BOOL}: switch one layer and regenerate (history cleared, as by
 * Generate); the reply is the grid and the layers. */
static enum MHD_Result api_layer(studio *s, struct MHD_Connection *conn, const char *body,
                                 size_t size)
{
    json_error_t je;
    json_t *req = body ? json_loadb(body, size, 0, &je) : NULL;
    const json_t *name = json_object_get(req, "name"), *enabled = json_object_get(req, "enabled");
    if (!json_is_object(req) || json_object_size(req) != 2 || !json_is_string(name) ||
        !json_is_boolean(enabled)) {
        json_decref(req);
        return studio_reply_error(conn, 400,
                                  "layer: expected {\"name\": LAYER, \"enabled\": true or false}");
    }
    const trn_recipe *r = trn_session_recipe(s->session);
    const trn_layer *layer = find_layer(r, json_string_value(name));
    if (!layer) {
        char msg[300];
        snprintf(msg, sizeof msg, "layer '%.200s': the recipe has no such layer (GET /api/layers)",
                 json_string_value(name));
        json_decref(req);
        return studio_reply_error(conn, 404, msg);
    }
    const bool on = json_is_true(enabled);
    json_decref(req);
    if (layer->enabled != on) {
        trn_recipe next;
        trn_error e;
        if (recipe_with_layer(r, layer->id, on, &next, &e))
            return studio_reply_trn_error(conn, 400, &e);
        const trn_status st = studio_regenerate(s, &next, s->options.quality, &e);
        trn_recipe_dispose(&next);
        if (st) return studio_reply_trn_error(conn, st == TRN_ERR_CANCELLED ? 503 : 400, &e);
        studio_hist_push(s, true);
        studio_session_changed(s);
    }
    json_t *o = studio_grid_json(s);
    json_object_set_new(o, "layers", studio_layers_json(trn_session_recipe(s->session)));
    json_object_set_new(o, "can_undo", json_boolean(s->hist_pos > 0));
    json_object_set_new(o, "can_redo", json_boolean(s->hist_pos < s->hist_count));
    return studio_reply_json(conn, 200, o);
}

/* The last generation's graph nodes: what each did (evaluated, cached, skipped), its CPU time
 * and its output pins. */
static enum MHD_Result api_nodes(studio *s, struct MHD_Connection *conn)
{
    const trn_generated *g = trn_session_result(s->session);
    json_t *list = json_array();
    double total = 0.0;
    for (uint32_t k = 0; k < g->node_count && list; k++) {
        const trn_node_report *n = &g->nodes[k];
        const char *status = n->outcome == TRN_NODE_EVALUATED ? "evaluated"
                             : n->outcome == TRN_NODE_SKIPPED ? "skipped"
                                                              : "cached";
        json_t *outputs = json_array();
        const trn_node_type *t = trn_node_type_find(n->type);
        for (uint32_t p = 0; t && p < t->output_count; p++)
            json_array_append_new(outputs, json_string(t->outputs[p].name));
        json_t *o =
            json_pack("{s:o,s:o,s:s,s:f,s:f,s:f,s:o}", "id", cli_json_string(n->id), "type",
                      cli_json_string(n->type), "status", status, "cpu_ms", n->cpu_seconds * 1000.0,
                      "cached_cpu_ms", n->cached_cpu_seconds * 1000.0, "wall_ms",
                      n->wall_seconds * 1000.0, "outputs", outputs);
        if (o && n->note[0]) json_object_set_new(o, "note", cli_json_string(n->note));
        if (o && n->outcome == TRN_NODE_REUSED_DISK)
            json_object_set_new(o, "from_disk", json_true());
        json_array_append_new(list, o);
        total += n->cpu_seconds * 1000.0;
    }
    return studio_reply_json(conn, 200,
                             json_pack("{s:o,s:f,s:s}", "nodes", list, "total_cpu_ms", total,
                                       "quality",
                                       g->quality == TRN_EROSION_PREVIEW ? "preview" : "final"));
}

static bool query_number(struct MHD_Connection *conn, const char *name, double *out);

/* Why (x, z) is its biome: terrane explain's JSON, with every rule tested. */
static enum MHD_Result api_explain(studio *s, struct MHD_Connection *conn)
{
    double x, z;
    if (!query_number(conn, "x", &x) || !query_number(conn, "z", &z))
        return studio_reply_error(conn, 400, "explain: expected ?x=&z= (terrain-local numbers)");
    const trn_recipe *r = trn_session_recipe(s->session);
    if (!(x >= 0.0 && x <= r->size_x && z >= 0.0 && z <= r->size_z)) {
        char msg[200];
        snprintf(msg, sizeof msg, "explain: (%g, %g) is outside the terrain (0..%g, 0..%g)", x, z,
                 r->size_x, r->size_z);
        return studio_reply_error(conn, 400, msg);
    }
    json_t *o = cli_explain_json(trn_session_result(s->session), r, NULL, x, z, true);
    return studio_reply_json(conn, 200, o);
}

/* Every chunk's LOD errors, computed once after a generation and kept up to date by edits. */
static bool lod_fill(studio *s)
{
    if (s->lod_ready) return true;
    const trn_recipe *r = trn_session_recipe(s->session);
    const trn_field *f = &trn_session_result(s->session)->field;
    const uint32_t cc = studio_chunk_cells_of(r), levels = studio_lod_levels(r);
    const uint32_t chunks_x = (f->cells_x + cc - 1u) / cc, chunks_z = (f->cells_z + cc - 1u) / cc;
    free(s->lod);
    s->lod = malloc((size_t)chunks_x * chunks_z * levels * sizeof *s->lod);
    if (!s->lod) return false;
    const long total = (long)chunks_x * (long)chunks_z;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 16)
#endif
    for (long k = 0; k < total; k++) {
        uint32_t i0, j0, nx, nz;
        const uint32_t cx = (uint32_t)(k % chunks_x), cz = (uint32_t)(k / chunks_x);
        studio_chunk_window(r, cx, cz, &i0, &j0, &nx, &nz);
        studio_chunk_lod(f, i0, j0, nx - 1u, nz - 1u, levels, s->lod + (size_t)k * levels);
    }
    s->lod_ready = true;
    return true;
}

static enum MHD_Result api_lod(studio *s, struct MHD_Connection *conn)
{
    if (!lod_fill(s)) return studio_reply_error(conn, 500, "out of memory");
    const trn_recipe *r = trn_session_recipe(s->session);
    const uint32_t cc = studio_chunk_cells_of(r), levels = studio_lod_levels(r);
    const uint32_t chunks_x = (r->cells_x + cc - 1u) / cc, chunks_z = (r->cells_z + cc - 1u) / cc;
    char v[3][32];
    snprintf(v[0], sizeof v[0], "%u", levels);
    snprintf(v[1], sizeof v[1], "%u,%u", chunks_x, chunks_z);
    snprintf(v[2], sizeof v[2], "%u", cc);
    const char *headers[] = {"X-Terrane-Lod-Levels",
                             v[0],
                             "X-Terrane-Chunks",
                             v[1],
                             "X-Terrane-Chunk-Cells",
                             v[2],
                             NULL};
    return studio_reply(conn, 200, "application/octet-stream", s->lod,
                        (size_t)chunks_x * chunks_z * levels * sizeof *s->lod, headers);
}

/* The bytes of one body index in /api/water/index: the narrowest little-endian width whose
 * all-ones value (dry) is no body's index, so no body ever reads as dry or as another body. */
static unsigned water_index_bytes(uint32_t body_count)
{
    return body_count < 0xFFu ? 1u : body_count < 0xFFFFu ? 2u : 4u;
}

/* The water per sample, the heights' layout: its surface height (float32, NaN where dry) or,
 * with index, its body's index (water_index_bytes wide, all ones where dry). */
static enum MHD_Result api_water_grid(studio *s, struct MHD_Connection *conn, bool index)
{
    const trn_generated *g = trn_session_result(s->session);
    const trn_field *f = &g->field;
    const size_t n = trn_field_sample_count(f);
    const trn_water *w = &g->water;
    const bool any = g->has_water && w->wet && w->owner && w->surface && w->cells_x == f->cells_x &&
                     w->cells_z == f->cells_z;
    const unsigned width = index ? water_index_bytes(any ? w->body_count : 0) : sizeof(float);
    uint8_t *out = malloc(n * width);
    if (!out) return studio_reply_error(conn, 500, "out of memory");
    float *heights = (float *)(void *)out;
    for (size_t k = 0; k < n; k++) {
        const bool wet = any && w->wet[k] && w->owner[k] >= 0 && (uint32_t)w->owner[k] < w->body_count;
        if (index) {
            const uint32_t v = wet ? (uint32_t)w->owner[k] : UINT32_MAX;
            for (unsigned b = 0; b < width; b++) out[k * width + b] = (uint8_t)(v >> (8u * b));
        } else {
            heights[k] = wet ? w->surface[k] : NAN;
        }
    }
    char cells[64], samples[64], bytes[16];
    snprintf(cells, sizeof cells, "%u,%u", f->cells_x, f->cells_z);
    snprintf(samples, sizeof samples, "%u,%u", f->cells_x + 1u, f->cells_z + 1u);
    snprintf(bytes, sizeof bytes, "%u", width);
    /* The grid stops before the index's width (a NULL name ends the list). */
    const char *headers[] = {"X-Terrane-Cells", cells, "X-Terrane-Samples", samples,
                             index ? "X-Terrane-Index-Bytes" : NULL, bytes, NULL};
    return studio_reply_owned(conn, 200, "application/octet-stream", out, n * width, headers);
}

static json_t *rgba_json(const double c[4])
{
    return json_pack("[f,f,f,f]", c[0], c[1], c[2], c[3]);
}

static enum MHD_Result api_water_bodies(studio *s, struct MHD_Connection *conn)
{
    const trn_generated *g = trn_session_result(s->session);
    json_t *list = json_array();
    for (uint32_t k = 0; g->has_water && k < g->water.body_count && list; k++) {
        const trn_water_body *b = &g->water.bodies[k];
        json_array_append_new(list, json_pack("{s:I,s:o,s:s,s:f,s:o,s:o,s:f,s:I}", "index",
                                              (json_int_t)k, "name", cli_json_string(b->id), "kind",
                                              trn_water_kind_name(b->kind), "level", b->level,
                                              "shallow_color", rgba_json(b->look.shallow_color),
                                              "deep_color", rgba_json(b->look.deep_color),
                                              "absorption_distance", b->look.absorption_distance,
                                              "wet_samples", (json_int_t)b->wet_samples));
    }
    return studio_reply_json(conn, 200, json_pack("{s:o}", "bodies", list));
}

/* ---------------------------------------------------------------------------------------------
 * Autosave, recovery, the disk watcher.
 * ------------------------------------------------------------------------------------------- */

/* Unsaved work goes to the recovery file beside the recipe (never over the recipe), what Save
 * would write; a clean session leaves none of its own. */
static void autosave(studio *s)
{
    /* Without the recipe's graph (--allow-errors) the session is not what Save would write: no
     * recovery file from it either, until a Generate of the fixed file. */
    if (!s->recovery_path || s->recovery_pending || s->graph_dropped || s->autosaved == s->revision)
        return;
    s->autosaved = s->revision;
    if (!studio_dirty(s)) {
        unlink(s->recovery_path);
        studio_publish_state(s);
        return;
    }
    trn_error e;
    char *text = minimal_text(s);
    if (!text && !s->scene && save_text(s, &text, &e)) text = NULL;
    if (!text) return;
    trn_atomic_file af;
    if (!trn_atomic_file_open(&af, s->recovery_path, &e)) {
        trn_atomic_file_write(&af, text, strlen(text));
        if (trn_atomic_file_commit(&af, &e)) cli_note(s->ctx, "autosave: %s", e.message);
    }
    free(text);
    studio_publish_state(s);
}

static void *watch_disk(void *arg)
{
    studio *s = arg;
    while (!atomic_load(&s->stopping)) {
        for (int k = 0; k < 10 && !atomic_load(&s->stopping); k++)
            nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
        if (atomic_load(&s->stopping)) break;
        pthread_mutex_lock(&s->lock);
        snprintf(s->client, sizeof s->client, "%s", "");
        if (studio_disk_check(s)) studio_publish_state(s);
        autosave(s);
        pthread_mutex_unlock(&s->lock);
    }
    return NULL;
}

/* {"restore": true}: the session becomes the recovery file's recipe (unsaved, one generation);
 * {"restore": false}: the file is deleted. */
static enum MHD_Result api_recovery(studio *s, struct MHD_Connection *conn, const char *body,
                                    size_t size)
{
    json_error_t je;
    json_t *req = body ? json_loadb(body, size, 0, &je) : NULL;
    const json_t *restore = json_object_get(req, "restore");
    if (!json_is_object(req) || json_object_size(req) != 1 || !json_is_boolean(restore)) {
        json_decref(req);
        return studio_reply_error(conn, 400, "recovery: expected {\"restore\": true or false}");
    }
    const bool yes = json_is_true(restore);
    json_decref(req);
    if (!s->recovery_path || !trn_file_exists(s->recovery_path))
        return studio_reply_error(conn, 404, "recovery: there is no recovery file");
    if (!yes) {
        unlink(s->recovery_path);
        s->recovery_pending = false;
        studio_publish_state(s);
        return studio_reply_json(conn, 200, studio_state_json(s));
    }
    size_t text_size = 0;
    struct timespec mtime;
    char *text = studio_read_disk(s->recovery_path, &text_size, &mtime);
    trn_recipe next;
    trn_error e;
    trn_status st = text ? studio_parse_disk_text(s, text, text_size, &next, NULL, &e)
                         : trn_error_set(&e, TRN_ERR_IO, s->recovery_path, -1, "%s: cannot read",
                                         s->recovery_path);
    free(text);
    if (st) return studio_reply_trn_error(conn, 400, &e);
    st = studio_regenerate(s, &next, s->options.quality, &e);
    trn_recipe_dispose(&next);
    if (st) return studio_reply_trn_error(conn, st == TRN_ERR_CANCELLED ? 503 : 400, &e);
    s->recovery_pending = false;
    studio_hist_push(s, true); /* unsaved until Save; undo goes back to the file's recipe */
    studio_session_changed(s);
    json_t *o = studio_state_json(s);
    json_object_set_new(o, "layers", studio_layers_json(trn_session_recipe(s->session)));
    return studio_reply_json(conn, 200, o);
}

/* ---------------------------------------------------------------------------------------------
 * Editing the generator: the graph and the recipe's sections.
 * ------------------------------------------------------------------------------------------- */

/* The node types with their pins and parameters (defaults, ranges, choices): what the page's
 * graph editor and forms are made from. */
static enum MHD_Result api_types(studio *s, struct MHD_Connection *conn)
{
    (void)s;
    return studio_reply_json(conn, 200, json_pack("{s:o}", "types", cli_graph_types_json()));
}

/* POST /api/edit: the page's edited recipe (the graph, settings, landforms, biomes, rules,
 * water), whole. */
static enum MHD_Result api_edit(studio *s, struct MHD_Connection *conn, const char *body,
                                size_t size)
{
    if (!body || !size) return studio_reply_error(conn, 400, "edit: expected a recipe");
    trn_recipe next;
    memset(&next, 0, sizeof next);
    trn_error e;
    trn_status st = trn_recipe_parse(body, size, "edit", &next, NULL, &e);
    if (!st && (st = trn_recipe_set_base_dir_of(&next, s->recipe_path, &e)))
        trn_recipe_dispose(&next);
    if (st) return studio_reply_trn_error(conn, 400, &e);
    const enum MHD_Result rc = studio_apply_recipe(s, conn, &next);
    trn_recipe_dispose(&next);
    return rc;
}

/* GET /api/rule_mask?rule=ID: where a biome rule matches on the session's terrain, one byte a
 * sample in the heights' layout: 255 where it matches and wins, 128 where it matches but a rule
 * of higher priority (or strength) wins, 0 where it does not match.
 *
 * Called without the session lock: a sample's test takes the whole context (moisture noise,
 * slope), seconds on a large grid, and other requests (strokes, state polls of every page) must
 * not wait for it. Under the lock it copies what trn_generated_context reads (the heights, the
 * water distance, the sea level, the recipe's seed and grid) and the rules (their bands and
 * priorities; pick never reads their strings), then works on the copy: the mask is that of the
 * terrain at the moment of the request, whatever edits arrive meanwhile. */
static enum MHD_Result api_rule_mask(studio *s, struct MHD_Connection *conn)
{
    const char *id = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "rule");
    pthread_mutex_lock(&s->lock);
    const trn_recipe *r = trn_session_recipe(s->session);
    const trn_generated *g = trn_session_result(s->session);
    int which = -1;
    for (uint32_t k = 0; id && k < r->rule_count; k++)
        if (r->rules[k].id && !strcmp(r->rules[k].id, id)) which = (int)k;
    if (which < 0) {
        pthread_mutex_unlock(&s->lock);
        return studio_reply_error(conn, 404, "rule mask: expected ?rule= a rule's id");
    }
    const uint32_t nx = g->field.cells_x + 1u, nz = g->field.cells_z + 1u;
    const size_t n = (size_t)nx * nz;
    trn_generated snap;
    memset(&snap, 0, sizeof snap);
    snap.field = g->field;
    snap.field.heights = malloc(n * sizeof(float));
    snap.water_distance = malloc(n * sizeof(float));
    snap.sea_level = g->sea_level;
    trn_recipe grid;
    memset(&grid, 0, sizeof grid);
    grid.seed = r->seed;
    grid.size_x = r->size_x;
    grid.size_z = r->size_z;
    grid.cells_x = r->cells_x;
    grid.cells_z = r->cells_z;
    const uint32_t rule_count = r->rule_count;
    trn_rule *rules = malloc((rule_count ? rule_count : 1u) * sizeof *rules);
    uint8_t *mask = malloc(n);
    const bool ok = snap.field.heights && snap.water_distance && rules && mask;
    if (ok) {
        memcpy(snap.field.heights, g->field.heights, n * sizeof(float));
        if (g->water_distance)
            memcpy(snap.water_distance, g->water_distance, n * sizeof(float));
        else
            for (size_t k = 0; k < n; k++)
                snap.water_distance[k] = INFINITY;
        for (uint32_t k = 0; k < rule_count; k++) {
            rules[k] = r->rules[k];
            rules[k].id = rules[k].biome = rules[k].layer = NULL; /* the session's, not ours */
        }
    }
    pthread_mutex_unlock(&s->lock);
    if (!ok) {
        free(snap.field.heights);
        free(snap.water_distance);
        free(rules);
        free(mask);
        return studio_reply_error(conn, 500, "out of memory");
    }
    /* Tests hold the computation here (outside the lock) until this file exists. */
    const char *gate = getenv("TERRANE_TEST_RULE_MASK_GATE");
    for (int k = 0; gate && *gate && k < 3000 && access(gate, F_OK) != 0; k++)
        nanosleep(&(struct timespec){0, 10000000L}, NULL);
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            trn_sample_context ctx;
            trn_generated_context(&snap, &grid, i, j, &ctx);
            trn_rule_test t;
            trn_rule_test_sample(&rules[which], &ctx, &t);
            uint8_t v = 0;
            if (t.matched) v = trn_rules_pick(rules, rule_count, &ctx) == which ? 255u : 128u;
            mask[(size_t)j * nx + i] = v;
        }
    free(snap.field.heights);
    free(snap.water_distance);
    free(rules);
    char cells[64];
    snprintf(cells, sizeof cells, "%u,%u", nx - 1u, nz - 1u);
    const char *headers[] = {"X-Terrane-Cells", cells, NULL};
    return studio_reply_owned(conn, 200, "application/octet-stream", mask, n, headers);
}

/* The API handler studio_server.c calls for every /api/ request that passed its checks. */
static enum MHD_Result on_api(void *user, struct MHD_Connection *conn, const char *method,
                              const char *path, const char *body, size_t body_size)
{
    studio *s = user;
    const bool get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0;
    const char *route = path + 5; /* after "/api/" */
    static const char *const gets[] = {"recipe",     "heights",      "biomes",         "events",
                                       "check",      "water",        "instances",      "preview",
                                       "layers",     "nodes",        "explain",        "lod",
                                       "water/grid", "water/bodies", "water/index",    "state",
                                       "types",      "presets",      "preset/picture", "rule_mask",
                                       "materials", "material_map"};
    static const char *const posts[] = {"generate", "stroke",   "undo", "redo",   "save",
                                        "layer",    "recovery", "edit", "preset", "export"};
    /* A draft preview: the one path both read (GET) and posted to. */
    if (post && !strcmp(route, "preview")) return api_preview_draft(s, conn, body, body_size);
    bool known_get = false, known_post = false;
    for (size_t k = 0; k < sizeof gets / sizeof gets[0]; k++)
        known_get |= !strcmp(route, gets[k]);
    for (size_t k = 0; k < sizeof posts / sizeof posts[0]; k++)
        known_post |= !strcmp(route, posts[k]);
    if (!known_get && !known_post) return studio_reply_error(conn, 404, "no such API");
    if ((known_get && !get) || (known_post && !post))
        return studio_reply_error(conn, 405, known_get ? "use GET" : "use POST");
    if (!strcmp(route, "events")) return studio_api_events(s, conn);
    /* Long work that takes the lock only to copy what it reads: */
    if (!strcmp(route, "rule_mask")) return api_rule_mask(s, conn);
    if (!strcmp(route, "preset/picture")) return studio_api_preset_picture(s, conn);
    pthread_mutex_lock(&s->lock);
    /* Which page asks: its changes reach the other pages as "others". */
    const char *client = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Terrane-Client");
    snprintf(s->client, sizeof s->client, "%s", client && *client ? client : "-");
    enum MHD_Result rc;
    if (!strcmp(route, "state")) {
        if (studio_disk_check(s)) studio_publish_state(s);
        rc = studio_reply_json(conn, 200, studio_state_json(s));
    } else if (!strcmp(route, "recovery"))
        rc = api_recovery(s, conn, body, body_size);
    else if (!strcmp(route, "types"))
        rc = api_types(s, conn);
    else if (!strcmp(route, "edit"))
        rc = api_edit(s, conn, body, body_size);
    else if (!strcmp(route, "presets"))
        rc = studio_api_presets(s, conn);
    else if (!strcmp(route, "materials"))
        rc = studio_api_materials(s, conn);
    else if (!strcmp(route, "material_map"))
        rc = studio_api_material_map(s, conn);
    else if (!strcmp(route, "preset"))
        rc = studio_api_preset(s, conn, body, body_size);
    else if (!strcmp(route, "export"))
        rc = studio_api_export(s, conn, body, body_size);
    else if (!strcmp(route, "recipe"))
        rc = api_recipe(s, conn);
    else if (!strcmp(route, "heights") || !strcmp(route, "biomes"))
        rc = api_grid(s, conn, !strcmp(route, "biomes"));
    else if (!strcmp(route, "check"))
        rc = api_check(s, conn);
    else if (!strcmp(route, "water"))
        rc = api_water(s, conn);
    else if (!strcmp(route, "instances"))
        rc = api_instances(s, conn);
    else if (!strcmp(route, "preview"))
        rc = api_preview(s, conn);
    else if (!strcmp(route, "layers"))
        rc = api_layers(s, conn);
    else if (!strcmp(route, "layer"))
        rc = api_layer(s, conn, body, body_size);
    else if (!strcmp(route, "nodes"))
        rc = api_nodes(s, conn);
    else if (!strcmp(route, "explain"))
        rc = api_explain(s, conn);
    else if (!strcmp(route, "lod"))
        rc = api_lod(s, conn);
    else if (!strcmp(route, "water/grid") || !strcmp(route, "water/index"))
        rc = api_water_grid(s, conn, !strcmp(route, "water/index"));
    else if (!strcmp(route, "water/bodies"))
        rc = api_water_bodies(s, conn);
    else if (!strcmp(route, "generate"))
        rc = api_generate(s, conn, body, body_size);
    else if (!strcmp(route, "stroke"))
        rc = api_stroke(s, conn, body, body_size);
    else if (!strcmp(route, "undo") || !strcmp(route, "redo"))
        rc = api_history(s, conn, !strcmp(route, "undo"));
    else
        rc = api_save(s, conn);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * The verb.
 * ------------------------------------------------------------------------------------------- */

/* --open: the browser gets a file, never the URL: the token stays off every command line (which
 * any local user can read in ps). The file, in a folder only this user can enter, is a page
 * that redirects to the URL; it goes when the studio stops. Its path (malloc'd) or NULL. */
static char *open_browser(cli_ctx *ctx, const char *url)
{
    const char *base = getenv("XDG_RUNTIME_DIR");
    if (!base || !*base) base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/terrane-studio-XXXXXX", base);
    if (!mkdtemp(dir)) {
        cli_note(ctx, "--open: cannot make a private folder in %s; open the URL by hand", base);
        return NULL;
    }
    const size_t len = strlen(dir) + 16;
    char *path = malloc(len);
    if (!path) return NULL;
    snprintf(path, len, "%s/open.html", dir);
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    bool ok = f && fprintf(f,
                           "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" "
                           "content=\"no-referrer\"><meta http-equiv=\"refresh\" "
                           "content=\"0;url=%s\"><title>terrane studio</title>"
                           "<a href=\"%s\">terrane studio</a>\n",
                           url, url) > 0;
    if (f)
        ok = fclose(f) == 0 && ok;
    else if (fd >= 0)
        close(fd);
    pid_t pid;
    char *args[] = {(char *)"xdg-open", path, NULL};
    if (!ok || posix_spawnp(&pid, "xdg-open", NULL, NULL, args, environ) != 0) {
        cli_note(ctx, "--open: xdg-open is not available; open the URL by hand");
        unlink(path);
        rmdir(dir);
        free(path);
        return NULL;
    }
    return path;
}

static void remove_opener(char *path)
{
    if (!path) return;
    unlink(path);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0', rmdir(path);
    free(path);
}

/* The graph check before the server starts: every diagnostic printed with its file, line and
 * column; errors refuse the start unless allow_errors. *errors receives how many. */
static int studio_gate(cli_ctx *ctx, const char *path, const trn_recipe *recipe,
                       trn_document_kind kind, bool allow_errors, size_t *errors)
{
    cli_graph g;
    int rc = cli_graph_load(ctx, path, recipe, kind, &g);
    if (rc) return rc;
    char line[1024];
    for (size_t k = 0; k < g.diags.count; k++) {
        const bool error = g.diags.items[k].severity == TRN_GRAPH_ERROR;
        if (ctx->quiet && !error) continue;
        cli_graph_diagnostic_text(path, &g.diags.items[k], line, sizeof line);
        cli_fprintf(stderr, "terrane studio: %s\n", line);
    }
    *errors = g.errors;
    if (g.errors && !allow_errors)
        rc = cli_failf(ctx,
                       "%s: the graph has %zu error%s (above): fix %s, or start with "
                       "--allow-errors to edit the recipe without its graph",
                       path, g.errors, g.errors == 1 ? "" : "s", g.errors == 1 ? "it" : "them");
    cli_graph_dispose(&g);
    return rc;
}

static int studio_run(cli_ctx *ctx, studio *s, long port, bool open, bool allow_errors)
{
    trn_error e;
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    size_t text_size = 0;
    struct timespec mtime;
    char *text = studio_read_disk(s->save_path, &text_size, &mtime);
    if (!text) return cli_failf(ctx, "%s: cannot read: %s", s->recipe_path, strerror(errno));
    if (studio_parse_disk_text(s, text, text_size, &recipe, &s->kind, &e)) {
        free(text);
        return cli_fail(ctx, &e);
    }
    studio_disk_remember(s, text, text_size, mtime);
    size_t graph_errors = 0;
    int rc = studio_gate(ctx, s->recipe_path, &recipe, s->kind, allow_errors, &graph_errors);
    if (!rc && graph_errors) {
        /* --allow-errors: the session runs the implicit graph; /api/check reads the file's. */
        free(recipe.graph_json);
        recipe.graph_json = NULL;
        s->graph_dropped = true;
        cli_note(ctx, "--allow-errors: generating without the recipe's graph; Save is refused "
                      "until a Generate of the fixed file succeeds");
    }
    if (!rc && recipe.palette_json) {
        rc = cli_palette_load(ctx, s->recipe_path, &recipe, &s->palette, &s->set);
        s->has_palette = rc == CLI_EXIT_OK;
    }
    if (rc) {
        trn_recipe_dispose(&recipe);
        return rc;
    }
    s->options.palette = s->has_palette ? &s->palette : NULL;
    if (s->has_palette && !(s->assets_root = studio_assets_root_of(
                                s->recipe_path, recipe.palette_json, s->project_root))) {
        trn_recipe_dispose(&recipe);
        return cli_failf(ctx, "out of memory");
    }
    /* A mapped material set is drawn layer by layer: the session keeps the surface roles. */
    s->options.roles = s->set.mapping.present;
    /* Final results in the platform cache directory (a reopened recipe starts from them);
     * previews stay in memory under their own keys and never reach the disk. */
    s->cache = cli_cache_default(NULL, 0);
    if (!s->cache && trn_graph_cache_new(NULL, 0, &s->cache, &e)) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    s->options.cache = s->cache;
    cli_note(ctx, "generating %s", s->recipe_path);
    trn_status st = trn_session_new(&recipe, &s->options, &s->session, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_recipe_dispose(&recipe);
    if (st) return cli_fail(ctx, &e);

    /* The LOD errors before the first page asks (they take the session lock while computed,
     * which would hold the page's other first requests up). */
    if (!lod_fill(s)) return cli_failf(ctx, "out of memory for the LOD errors");

    s->recovery_pending = s->recovery_path && trn_file_exists(s->recovery_path);
    if (s->recovery_pending)
        cli_note(ctx, "%s holds unsaved work from an earlier run: the page offers to restore it",
                 s->recovery_path);
    /* The history starts at the file's recipe, before any request can ask. */
    s->hist_base = ++s->hist_next;
    s->hist_base_text = studio_session_text(s);
    studio_hist_mark_saved(s);

    /* Signals are taken by sigwait below: every server thread starts with them blocked. */
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    char token[STUDIO_TOKEN_HEX + 1];
    if (!studio_token_new(token)) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return cli_failf(ctx, "cannot read /dev/urandom for the access token");
    }
    char msg[256];
    studio_server *server = studio_server_start((uint16_t)port, token, on_api, s, msg, sizeof msg);
    if (!server) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return cli_failf(ctx, "%s", msg);
    }
    char url[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/?token=%s", (unsigned)studio_server_port(server),
             token);
    printf("%s\n", url);
    fflush(stdout);
    cli_note(ctx, "serving %s on 127.0.0.1:%u; Ctrl-C stops", s->recipe_path,
             (unsigned)studio_server_port(server));
    pthread_mutex_lock(&s->lock); /* requests may be served already */
    studio_publish_state(s);
    pthread_mutex_unlock(&s->lock);
    s->watcher_started = pthread_create(&s->watcher, NULL, watch_disk, s) == 0;
    char *opener = NULL;
    if (open) opener = open_browser(ctx, url);
    int sig = 0;
    sigwait(&stop, &sig);
    atomic_store(&s->stopping, true);
    pthread_mutex_lock(&s->ev_lock);
    pthread_cond_broadcast(&s->ev_cond);
    pthread_mutex_unlock(&s->ev_lock);
    if (s->watcher_started) pthread_join(s->watcher, NULL);
    studio_server_stop(server);
    remove_opener(opener);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    cli_note(ctx, "stopped (nothing unsaved is written)");
    return CLI_EXIT_OK;
}

int cli_verb_studio(cli_ctx *ctx, int argc, char **argv)
{
    int rc = cli_text_only(ctx);
    if (rc) return rc;
    const char *input = NULL;
    long port = 8630;
    bool open = false, allow_errors = false;
    uint64_t max_work = 0, max_memory = 0; /* 0: the defaults, as terrane generate */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--port") == 0) {
            char *end = NULL;
            if (i + 1 >= argc) return cli_usage_error(ctx, "--port needs a number 0..65535");
            errno = 0;
            port = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || port < 0 || port > 65535)
                return cli_usage_error(ctx, "--port must be 0..65535, not '%s'", argv[i]);
        } else if (strcmp(a, "--open") == 0) {
            open = true;
        } else if (strcmp(a, "--allow-errors") == 0) {
            allow_errors = true;
        } else if (strcmp(a, "--no-work-limit") == 0) {
            max_work = TRN_WORK_UNLIMITED;
            max_memory = TRN_MEMORY_UNLIMITED;
        } else if (strcmp(a, "--max-work") == 0) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            if (!cli_parse_max_work(ctx, v, &max_work)) return CLI_EXIT_USAGE;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (input) {
            return cli_usage_error(ctx, "takes one project or recipe; unexpected '%s'", a);
        } else {
            input = a;
        }
    }
    if (!input) return cli_usage_error(ctx, "needs a project folder or a recipe file");

    studio s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.options.max_work = max_work;
    s.options.max_memory = max_memory;
    struct stat st;
    if (stat(input, &st) != 0) return cli_failf(ctx, "%s: %s", input, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        if (!(s.recipe_path = studio_project_recipe(ctx, input, &s.scene))) return CLI_EXIT_FAIL;
        s.project_root = trn_path_resolve_lexically(input);
    } else {
        s.recipe_path = strdup(input);
        char *folder = strdup(input);
        char *slash = folder ? strrchr(folder, '/') : NULL;
        if (slash) *slash = '\0';
        s.project_root = trn_path_resolve_lexically(slash ? (*folder ? folder : "/") : ".");
        free(folder);
    }
    if (!s.recipe_path || !s.project_root) {
        free(s.recipe_path);
        free(s.project_root);
        return cli_failf(ctx, "out of memory");
    }
    /* A symbolic link is decided now: inside the project, Save writes through it (the file it
     * names is replaced, the link stays); pointing outside, the studio does not open it. */
    struct stat lst;
    if (lstat(s.recipe_path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        char *target = realpath(s.recipe_path, NULL);
        if (!target || !trn_path_inside(s.project_root, target)) {
            rc = cli_failf(ctx,
                           "%s is a symbolic link to %s, outside the project folder %s: the "
                           "studio writes only inside it; open the file itself, or copy it in",
                           s.recipe_path, target ? target : "a missing file", s.project_root);
            free(target);
            free(s.recipe_path);
            free(s.project_root);
            return rc;
        }
        s.save_path = target;
    } else {
        s.save_path = strdup(s.recipe_path);
    }
    const size_t rlen = strlen(s.recipe_path) + 10;
    if ((s.recovery_path = malloc(rlen)))
        snprintf(s.recovery_path, rlen, "%s.recovery", s.recipe_path);
    if (!s.save_path || !s.recovery_path) {
        free(s.save_path);
        free(s.recovery_path);
        free(s.recipe_path);
        free(s.project_root);
        return cli_failf(ctx, "out of memory");
    }
    pthread_mutex_init(&s.lock, NULL);
    pthread_mutex_init(&s.ev_lock, NULL);
    pthread_mutex_init(&s.draft_lock, NULL);
    pthread_cond_init(&s.ev_cond, NULL);
    atomic_init(&s.stopping, false);
    rc = studio_run(ctx, &s, port, open, allow_errors);
    trn_session_free(s.session);
    trn_graph_cache_free(s.cache);
    trn_graph_cache_free(s.draft_cache);
    pthread_mutex_destroy(&s.draft_lock);
    free(s.lod);
    if (s.has_palette) {
        trn_palette_dispose(&s.palette);
        trn_material_set_dispose(&s.set);
    }
    pthread_cond_destroy(&s.ev_cond);
    pthread_mutex_destroy(&s.ev_lock);
    pthread_mutex_destroy(&s.lock);
    free(s.recipe_path);
    free(s.project_root);
    free(s.assets_root);
    free(s.save_path);
    free(s.recovery_path);
    free(s.disk_text);
    for (size_t k = 0; k < s.hist_count; k++)
        free(s.hist[k].after);
    free(s.hist);
    free(s.hist_base_text);
    free(s.saved_text);
    return rc;
}
