/* The studio's session: JSON replies, chunks, history, state events, the file on disk. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "studio_doc.h"
#include "studio_internal.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/mesh.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/unity.h"
#include "terrane/water.h"

/* ---------------------------------------------------------------------------------------------
 * Helpers.
 * ------------------------------------------------------------------------------------------- */

enum MHD_Result studio_reply_json(struct MHD_Connection *conn, unsigned status, json_t *value)
{
    if (!value) return studio_reply_error(conn, 500, "out of memory");
    char *text = json_dumps(value, JSON_COMPACT);
    json_decref(value);
    if (!text) return studio_reply_error(conn, 500, "out of memory");
    return studio_reply_owned(conn, status, "application/json", text, strlen(text), NULL);
}

enum MHD_Result studio_reply_trn_error(struct MHD_Connection *conn, unsigned status,
                                       const trn_error *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "error", cli_json_string(e->message));
    json_object_set_new(o, "status", json_string(trn_status_name(e->code)));
    if (e->line > 0) {
        json_object_set_new(o, "line", json_integer(e->line));
        json_object_set_new(o, "column", json_integer(e->column));
    }
    return studio_reply_json(conn, status, o);
}

char *studio_base64(const void *data, size_t size)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *in = data;
    char *out = malloc((size + 2) / 3 * 4 + 1);
    if (!out) return NULL;
    size_t n = 0;
    for (size_t k = 0; k < size; k += 3) {
        const uint32_t v = (uint32_t)in[k] << 16 | (k + 1 < size ? (uint32_t)in[k + 1] << 8 : 0) |
                           (k + 2 < size ? in[k + 2] : 0);
        out[n++] = digits[v >> 18 & 63];
        out[n++] = digits[v >> 12 & 63];
        out[n++] = k + 1 < size ? digits[v >> 6 & 63] : '=';
        out[n++] = k + 2 < size ? digits[v & 63] : '=';
    }
    out[n] = '\0';
    return out;
}

uint32_t studio_chunk_cells_of(const trn_recipe *r)
{
    return r->chunk_cells ? r->chunk_cells : 32u;
}

/* LOD levels a chunk has: floor(log2(chunk_cells)) + 1, as trn_mesh_build counts them. */
uint32_t studio_lod_levels(const trn_recipe *r)
{
    const uint32_t cc = studio_chunk_cells_of(r);
    uint32_t levels = 1;
    while (levels < 32u && (1u << levels) <= cc)
        levels++;
    return levels;
}

/* out[level]: trn_mesh_level.error of the chunk with cells [i0, i0 + nx] x [j0, j0 + nz] (the
 * library's trn_mesh_chunk_errors, so the page and `terrane mesh` pick the same levels). */
void studio_chunk_lod(const trn_field *f, uint32_t i0, uint32_t j0, uint32_t nx, uint32_t nz,
                      uint32_t levels, float *out)
{
    double e[32];
    if (levels > 32u || trn_mesh_chunk_errors(f, i0, j0, nx, nz, levels, e, NULL)) {
        for (uint32_t l = 0; l < levels; l++)
            out[l] = l ? INFINITY : 0.0f;
        return;
    }
    for (uint32_t l = 0; l < levels; l++)
        out[l] = (float)e[l];
}

/* The samples of chunk (cx, cz): its cells' corners, the shared border included. */
void studio_chunk_window(const trn_recipe *r, uint32_t cx, uint32_t cz, uint32_t *i0, uint32_t *j0,
                         uint32_t *nx, uint32_t *nz)
{
    const uint32_t cc = studio_chunk_cells_of(r);
    *i0 = cx * cc;
    *j0 = cz * cc;
    *nx = (r->cells_x - *i0 < cc ? r->cells_x - *i0 : cc) + 1u;
    *nz = (r->cells_z - *j0 < cc ? r->cells_z - *j0 : cc) + 1u;
}

/* {"i0", "j0", "nx", "nz", "cx", "cz", "heights": base64 float32 LE rows, "biomes": base64
 * bytes} */
static json_t *chunk_json(const trn_recipe *r, const trn_field *f, const uint8_t *biomes,
                          uint32_t cx, uint32_t cz, const float *lod)
{
    uint32_t i0, j0, nx, nz;
    studio_chunk_window(r, cx, cz, &i0, &j0, &nx, &nz);
    float *rows = malloc((size_t)nx * nz * sizeof *rows);
    if (!rows) return NULL;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(rows + (size_t)j * nx, f->heights + (size_t)(j0 + j) * (f->cells_x + 1u) + i0,
               nx * sizeof *rows);
    char *b64 = studio_base64(rows, (size_t)nx * nz * sizeof *rows);
    /* The biome of each sample (the recipe's biome order), the same window. */
    uint8_t *labels = (uint8_t *)rows;
    for (uint32_t j = 0; j < nz && biomes; j++)
        memcpy(labels + (size_t)j * nx, biomes + (size_t)(j0 + j) * (f->cells_x + 1u) + i0, nx);
    char *b64_biomes = biomes ? studio_base64(labels, (size_t)nx * nz) : NULL;
    free(rows);
    if (!b64 || (biomes && !b64_biomes)) {
        free(b64);
        free(b64_biomes);
        return NULL;
    }
    json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:s}", "cx", (json_int_t)cx, "cz",
                          (json_int_t)cz, "i0", (json_int_t)i0, "j0", (json_int_t)j0, "nx",
                          (json_int_t)nx, "nz", (json_int_t)nz, "heights", b64);
    if (o && b64_biomes) json_object_set_new(o, "biomes", json_string(b64_biomes));
    json_t *errors = json_array();
    for (uint32_t l = 0; l < studio_lod_levels(r); l++)
        json_array_append_new(errors, isfinite(lod[l]) ? json_real(lod[l]) : json_null());
    if (o) json_object_set_new(o, "lod", errors);
    free(b64);
    free(b64_biomes);
    return o;
}

water_mark studio_water_mark_of(const studio *s)
{
    const trn_generated *g = trn_session_result(s->session);
    water_mark m = {g->has_water, g->water.surface, g->water.owner, g->water.ground_hash,
                    g->water.body_count};
    return m;
}

static bool water_mark_same(const water_mark *a, const water_mark *b)
{
    return a->has == b->has && a->surface == b->surface && a->owner == b->owner &&
           a->ground_hash == b->ground_hash && a->bodies == b->bodies;
}

/* The session was replaced (generate, a layer switched): cached LOD errors and the extendable
 * stroke go with it. */
static void session_replaced(studio *s)
{
    free(s->lod);
    s->lod = NULL;
    s->lod_ready = false;
    s->can_extend = false;
}

/* ---- The shared history's ids: what is unsaved ---- */

bool studio_dirty(const studio *s)
{
    /* The recipe after the newest applied step, against the one in the file. */
    const char *now = s->hist_pos ? s->hist[s->hist_pos - 1].after : s->hist_base_text;
    return !now || !s->saved_text || strcmp(now, s->saved_text) != 0;
}

char *studio_session_text(const studio *s)
{
    char *text = NULL;
    if (trn_recipe_canonical_json(trn_session_recipe(s->session), &text, NULL, NULL)) return NULL;
    return text;
}

/* The history keeps at most STUDIO_HISTORY_STEPS steps and STUDIO_HISTORY_BYTES of recipes
 * (each step keeps its whole recipe, so many large protect snapshots add up): the oldest steps
 * go first, the newest applied one always stays. */
#define STUDIO_HISTORY_STEPS 256u
#define STUDIO_HISTORY_BYTES ((size_t)256 << 20)

void studio_hist_trim(studio *s)
{
    while (s->hist_pos > 1 &&
           (s->hist_count > STUDIO_HISTORY_STEPS || s->hist_bytes > STUDIO_HISTORY_BYTES)) {
        /* The oldest step becomes the start: its recipe is the one before the next. */
        free(s->hist_base_text);
        s->hist_base_text = s->hist[0].after;
        s->hist_bytes -= s->hist[0].size;
        s->hist_base = s->hist[0].id;
        memmove(s->hist, s->hist + 1, (s->hist_count - 1) * sizeof *s->hist);
        s->hist_count--;
        s->hist_pos--;
        if (s->native_lo) s->native_lo--;
        if (s->native_hi) s->native_hi--;
    }
}

/* A new step on top, its recipe the session's now: the redo side goes, as the session's does.
 * regenerated: the step replaced the session (its own history starts afresh). */
bool studio_hist_push(studio *s, bool regenerated)
{
    for (size_t k = s->hist_pos; k < s->hist_count; k++) {
        s->hist_bytes -= s->hist[k].size;
        free(s->hist[k].after);
    }
    s->hist_count = s->hist_pos;
    if (s->hist_pos == s->hist_cap) {
        const size_t cap = s->hist_cap ? 2 * s->hist_cap : 64;
        struct hist_entry *grown = realloc(s->hist, cap * sizeof *grown);
        if (!grown) return false;
        s->hist = grown;
        s->hist_cap = cap;
    }
    struct hist_entry *e = &s->hist[s->hist_pos];
    e->id = ++s->hist_next;
    e->after = studio_session_text(s);
    e->size = e->after ? strlen(e->after) : 0;
    s->hist_bytes += e->size;
    s->hist_count = ++s->hist_pos;
    if (regenerated) s->native_lo = s->hist_pos;
    s->native_hi = s->hist_pos;
    studio_hist_trim(s);
    return true;
}

/* The session's recipe now is the file's. */
void studio_hist_mark_saved(studio *s)
{
    const char *now = s->hist_pos ? s->hist[s->hist_pos - 1].after : s->hist_base_text;
    free(s->saved_text);
    s->saved_text = now ? strdup(now) : NULL;
}

/* The recipe before entry k. */
const char *studio_hist_before(const studio *s, size_t k)
{
    return k ? s->hist[k - 1].after : s->hist_base_text;
}

/* The session changed (an edit, undo, redo, generation, restore): a new revision for every
 * page. */
void studio_session_changed(studio *s)
{
    s->revision++;
    studio_publish_state(s);
}

json_t *studio_state_json(const studio *s)
{
    json_t *o = json_pack("{s:I,s:b,s:b,s:b,s:b}", "revision", (json_int_t)s->revision, "dirty",
                          studio_dirty(s), "can_undo", s->hist_pos > 0, "can_redo",
                          s->hist_pos < s->hist_count, "disk_changed", s->disk_changed);
    if (o && s->disk_changed && s->disk_error[0]) {
        json_t *e = json_pack("{s:o}", "message", cli_json_string(s->disk_error));
        if (e && s->disk_line > 0) {
            json_object_set_new(e, "line", json_integer(s->disk_line));
            json_object_set_new(e, "column", json_integer(s->disk_column));
        }
        json_object_set_new(o, "disk_error", e);
    }
    if (o && s->recovery_pending && s->recovery_path)
        json_object_set_new(o, "recovery", cli_json_string(s->recovery_path));
    return o;
}

/* The state for every /api/events stream (and who changed it). */
void studio_publish_state(studio *s)
{
    json_t *o = studio_state_json(s);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    pthread_mutex_lock(&s->ev_lock);
    s->state_seq++;
    snprintf(s->state_text, sizeof s->state_text, "%s", text ? text : "{}");
    snprintf(s->state_client[s->state_seq % 64], sizeof s->state_client[0], "%s", s->client);
    pthread_cond_broadcast(&s->ev_cond);
    pthread_mutex_unlock(&s->ev_lock);
    free(text);
}

/* ---- The recipe file on disk ---- */

/* The whole file (malloc'd, NUL-terminated) and its modification time; NULL when unreadable. */
char *studio_read_disk(const char *path, size_t *size, struct timespec *mtime)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
    *mtime = st.st_mtim;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!text) return NULL;
    text[got] = '\0';
    *size = got;
    return text;
}

/* What was read or written is now the file as the studio knows it. */
void studio_disk_remember(studio *s, char *text, size_t size, struct timespec mtime)
{
    free(s->disk_text);
    s->disk_text = text;
    s->disk_size = size;
    s->disk_mtime = mtime;
    s->disk_hash = studio_doc_hash(text, size);
    s->disk_changed = false;
    s->disk_seen_hash = s->disk_hash;
    s->disk_error[0] = '\0';
    s->disk_line = s->disk_column = 0;
}

/* Look at the file: a new modification time or size makes the studio read it; a different
 * content marks it changed (a touch alone does not), and says why when it no longer reads as a
 * recipe. True when what is known changed. */
bool studio_disk_check(studio *s)
{
    struct stat st;
    if (stat(s->save_path, &st) != 0) {
        const bool was = s->disk_changed && !strcmp(s->disk_error, "the file is gone");
        s->disk_changed = true;
        snprintf(s->disk_error, sizeof s->disk_error, "the file is gone");
        s->disk_line = s->disk_column = 0;
        return !was;
    }
    if (st.st_mtim.tv_sec == s->disk_mtime.tv_sec && st.st_mtim.tv_nsec == s->disk_mtime.tv_nsec &&
        (size_t)st.st_size == s->disk_size)
        return false;
    size_t size = 0;
    struct timespec mtime;
    char *text = studio_read_disk(s->save_path, &size, &mtime);
    if (!text) return false;
    const unsigned long long h = studio_doc_hash(text, size);
    s->disk_mtime = mtime;
    s->disk_size = size;
    if (h == s->disk_hash || h == s->disk_seen_hash) {
        /* Touched, or changed back, or examined already. */
        const bool back = h == s->disk_hash && s->disk_changed;
        if (back) s->disk_changed = false, s->disk_error[0] = '\0';
        free(text);
        return back;
    }
    s->disk_seen_hash = h;
    s->disk_changed = true;
    s->disk_error[0] = '\0';
    s->disk_line = s->disk_column = 0;
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_error e;
    if (studio_parse_disk_text(s, text, size, &r, NULL, &e)) {
        snprintf(s->disk_error, sizeof s->disk_error, "%s", e.message);
        s->disk_line = e.line;
        s->disk_column = e.column;
    }
    trn_recipe_dispose(&r);
    free(text);
    return true;
}

/* A recipe from the file's text: a bare recipe or Terrain asset document, or the one Terrain3D
 * recipe of a scene (read in place: everything around it blanked, so lines and columns are the
 * file's). Its files (a Heightfield Input's path) are relative to the recipe's folder. */
trn_status studio_parse_disk_text(const studio *s, const char *text, size_t size, trn_recipe *out,
                                  trn_document_kind *kind, trn_error *e)
{
    memset(out, 0, sizeof *out);
    trn_status st;
    if (s->scene) {
        size_t r0, r1;
        if (!studio_doc_recipe_span(text, size, &r0, &r1))
            return trn_error_set(e, TRN_ERR_JSON, s->recipe_path, -1,
                                 "%s: expected a scene with one entity whose Terrain3D component "
                                 "holds a recipe",
                                 s->recipe_path);
        char *blank = malloc(size + 1);
        if (!blank) return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        for (size_t k = 0; k < size; k++)
            blank[k] = k >= r0 && k < r1 ? text[k] : text[k] == '\n' ? '\n' : ' ';
        blank[size] = '\0';
        st = trn_recipe_parse(blank, size, s->recipe_path, out, NULL, e);
        free(blank);
        if (kind) *kind = TRN_DOCUMENT_RECIPE;
    } else {
        st = trn_recipe_parse(text, size, s->recipe_path, out, kind, e);
    }
    if (!st && (st = trn_recipe_set_base_dir_of(out, s->recipe_path, e))) trn_recipe_dispose(out);
    return st;
}

/* The reply to an edit: the chunks it changed with their heights, biomes and LOD errors, whether
 * the water changed, and the history's state. */
json_t *studio_edit_json(studio *s, const trn_chunk_set *changed, const water_mark *before)
{
    const trn_generated *g = trn_session_result(s->session);
    const trn_recipe *r = trn_session_recipe(s->session);
    const uint32_t levels = studio_lod_levels(r);
    float lod[32];
    json_t *chunks = json_array();
    for (uint32_t cz = 0; cz < changed->chunks_z && chunks; cz++)
        for (uint32_t cx = 0; cx < changed->chunks_x; cx++) {
            const size_t k = (size_t)cz * changed->chunks_x + cx;
            if (!changed->changed || !changed->changed[k]) continue;
            uint32_t i0, j0, nx, nz;
            studio_chunk_window(r, cx, cz, &i0, &j0, &nx, &nz);
            studio_chunk_lod(&g->field, i0, j0, nx - 1u, nz - 1u, levels, lod);
            if (s->lod_ready) memcpy(s->lod + k * levels, lod, levels * sizeof *lod);
            json_array_append_new(chunks, chunk_json(r, &g->field, g->biomes.values, cx, cz, lod));
        }
    const water_mark after = studio_water_mark_of(s);
    json_t *o = studio_state_json(s);
    json_object_set_new(o, "chunks", chunks);
    json_object_set_new(o, "water_changed", json_boolean(!water_mark_same(before, &after)));
    json_object_set_new(o, "layers", studio_layers_json(r));
    return o;
}

/* Publish one Server-Sent Event to every /api/events stream. */
static void publish(studio *s, const char *event, const char *data)
{
    pthread_mutex_lock(&s->ev_lock);
    snprintf(s->ev_data, sizeof s->ev_data, "event: %s\ndata: %s\n\n", event, data);
    s->ev_seq++;
    pthread_cond_broadcast(&s->ev_cond);
    pthread_mutex_unlock(&s->ev_lock);
}

static int on_progress(double done, const char *stage, void *user)
{
    studio *s = user;
    json_t *o = json_pack("{s:f,s:o}", "done", done, "stage", cli_json_string(stage ? stage : ""));
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (text) publish(s, "progress", text);
    free(text);
    /* Ctrl-C during a generation cancels it (the previous result stays). */
    return atomic_load(&s->stopping) ? TRN_CANCEL : 0;
}

/* Regenerate the session from next (quality: a new session when it differs from the current
 * one, since a session keeps its options), progress and the outcome on /api/events.
 *
 * A recipe on another grid also starts a new session. Every recipe the studio regenerates is
 * whole and meant as it is (an edit, a preset applied, a step of the history, the file on
 * disk): its strokes are where it has them. The session's regenerate would treat it as the
 * current recipe's grid changed, which needs a keep-or-clear decision for strokes (the command
 * line's --keep-edits or --clear-edits): a new resolution with strokes, or an undo back across
 * one, would be refused. */
trn_status studio_regenerate(studio *s, const trn_recipe *next, trn_erosion_quality quality,
                             trn_error *e)
{
    publish(s, "progress", "{\"done\":0,\"stage\":\"start\"}");
    trn_status st;
    const trn_recipe *now = trn_session_recipe(s->session);
    const bool regrid = next->cells_x != now->cells_x || next->cells_z != now->cells_z ||
                        next->size_x != now->size_x || next->size_z != now->size_z;
    if (quality != s->options.quality || regrid) {
        trn_generate_options o = s->options;
        o.quality = quality;
        trn_session *fresh = NULL;
        st = trn_session_new(next, &o, &fresh, on_progress, s, e);
        if (!st) {
            trn_session_free(s->session);
            s->session = fresh;
            s->options.quality = quality;
        }
    } else {
        st = trn_session_regenerate(s->session, next, TRN_EDITS_REFUSE, on_progress, s, e);
    }
    publish(s, st ? "failed" : "done", "{}");
    if (!st) session_replaced(s);
    return st;
}

/* A stream's position in the event sequence, and the event (or keepalive) it is sending: MHD
 * may offer less room than an event takes, so the rest goes out on the next calls instead of
 * being cut off. */
typedef struct event_stream {
    studio *s;
    uint64_t seen, state_seen;
    char client[40]; /* the page's id (?client=): its own changes are not "others" */
    char pending[sizeof(((studio *)NULL)->state_text) + 64];
    size_t pending_len, pending_off;
} event_stream;

static ssize_t events_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    event_stream *es = cls;
    studio *s = es->s;
    if (es->pending_off == es->pending_len) {
        pthread_mutex_lock(&s->ev_lock);
        if (es->seen == s->ev_seq && es->state_seen == s->state_seq && !atomic_load(&s->stopping)) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 1;
            pthread_cond_timedwait(&s->ev_cond, &s->ev_lock, &until);
        }
        if (atomic_load(&s->stopping)) {
            pthread_mutex_unlock(&s->ev_lock);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        if (es->state_seen != s->state_seq) {
            /* The newest state, and whether a change since the last one came from another
             * page (or from the disk): then the page reloads what it shows. */
            bool others = s->state_seq - es->state_seen > 63u;
            for (uint64_t q = es->state_seen + 1; q <= s->state_seq && !others; q++) {
                /* The studio's own notes (disk checks, autosaves) change no session. */
                const char *by = s->state_client[q % 64];
                others = by[0] && strcmp(by, es->client) != 0;
            }
            es->state_seen = s->state_seq;
            const size_t len = strlen(s->state_text);
            es->pending_len = (size_t)snprintf(
                es->pending, sizeof es->pending, "event: state\ndata: %.*s,\"others\":%s}\n\n",
                (int)(len ? len - 1 : 0), s->state_text, others ? "true" : "false");
            if (es->pending_len >= sizeof es->pending) es->pending_len = sizeof es->pending - 1;
        } else if (es->seen != s->ev_seq) {
            /* Only the latest event matters: progress replaces progress. */
            es->pending_len = strlen(s->ev_data);
            memcpy(es->pending, s->ev_data, es->pending_len);
            es->seen = s->ev_seq;
        } else {
            static const char keepalive[] = ": keepalive\n\n";
            es->pending_len = sizeof keepalive - 1;
            memcpy(es->pending, keepalive, es->pending_len);
        }
        es->pending_off = 0;
        pthread_mutex_unlock(&s->ev_lock);
    }
    size_t n = es->pending_len - es->pending_off;
    if (n > max) n = max;
    memcpy(buf, es->pending + es->pending_off, n);
    es->pending_off += n;
    return (ssize_t)n;
}

enum MHD_Result studio_api_events(studio *s, struct MHD_Connection *conn)
{
    event_stream *es = malloc(sizeof *es);
    if (!es) return studio_reply_error(conn, 500, "out of memory");
    es->s = s;
    es->pending_len = es->pending_off = 0;
    const char *client = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "client");
    snprintf(es->client, sizeof es->client, "%s", client ? client : "");
    pthread_mutex_lock(&s->ev_lock);
    es->seen = s->ev_seq;
    es->state_seen = s->state_seq;
    pthread_mutex_unlock(&s->ev_lock);
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1024, events_read, es, free);
    if (!r) {
        free(es);
        return MHD_NO;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    enum MHD_Result rc = MHD_queue_response(conn, 200, r);
    MHD_destroy_response(r);
    return rc;
}

/* [{"id", "name", "group", "enabled", "strokes"}]: the recipe's layers (the five defaults when
 * it lists none) with how many strokes each holds. */
json_t *studio_layers_json(const trn_recipe *r)
{
    uint32_t count = 0;
    const trn_layer *layers = trn_recipe_layers(r, &count);
    json_t *list = json_array();
    for (uint32_t l = 0; l < count && list; l++) {
        json_int_t strokes = 0;
        for (uint32_t k = 0; k < r->stroke_count; k++) {
            const trn_layer *on = trn_recipe_stroke_layer(r, &r->strokes[k]);
            strokes += on && strcmp(on->id, layers[l].id) == 0;
        }
        const char *name = layers[l].name ? layers[l].name : layers[l].id;
        json_array_append_new(
            list, json_pack("{s:o,s:o,s:s,s:b,s:I}", "id", cli_json_string(layers[l].id), "name",
                            cli_json_string(name), "group", trn_layer_group_name(layers[l].group),
                            "enabled", (int)layers[l].enabled, "strokes", strokes));
    }
    return list;
}

json_t *studio_grid_json(const studio *s)
{
    const trn_field *f = &trn_session_result(s->session)->field;
    return json_pack("{s:[I,I],s:[f,f]}", "cells", (json_int_t)f->cells_x, (json_int_t)f->cells_z,
                     "size", f->size_x, f->size_z);
}

/* The graph's findings on next (errors and warnings, each naming its node and pin). */
static trn_status check_graph(const trn_recipe *next, json_t **diags, size_t *errors, trn_error *e)
{
    *diags = json_array();
    *errors = 0;
    trn_graph graph;
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    trn_status st = trn_graph_from_recipe(next, &graph, e);
    if (st) return st;
    st = trn_graph_check(&graph, next, &d, e);
    trn_graph_dispose(&graph);
    if (st) return st;
    for (size_t k = 0; k < d.count; k++)
        json_array_append_new(*diags, cli_graph_diagnostic_json(&d.items[k]));
    *errors = trn_graph_diagnostics_errors(&d);
    trn_graph_diagnostics_dispose(&d);
    return TRN_OK;
}

/* next becomes the session's recipe as one step of the shared history, when its graph checks:
 * else 422 with every finding at its node, and nothing changes. A recipe equal to the
 * session's is no step. */
enum MHD_Result studio_apply_recipe(studio *s, struct MHD_Connection *conn, trn_recipe *next)
{
    trn_error e;
    json_t *diags = NULL;
    size_t errors = 0;
    trn_status st = check_graph(next, &diags, &errors, &e);
    if (st) {
        json_decref(diags);
        return studio_reply_trn_error(conn, 400, &e);
    }
    if (errors) {
        const char *first = "";
        for (size_t k = 0; k < json_array_size(diags); k++) {
            json_t *d = json_array_get(diags, k);
            if (!strcmp(json_string_value(json_object_get(d, "severity")), "error")) {
                first = json_string_value(json_object_get(d, "message"));
                break;
            }
        }
        char msg[700];
        snprintf(msg, sizeof msg, "the graph has %zu error%s; nothing was applied: %s", errors,
                 errors == 1 ? "" : "s", first);
        return studio_reply_json(
            conn, 422, json_pack("{s:o,s:o}", "error", cli_json_string(msg), "diagnostics", diags));
    }
    char *was = studio_session_text(s);
    st = studio_regenerate(s, next, s->options.quality, &e);
    if (st) {
        free(was);
        json_decref(diags);
        return studio_reply_trn_error(conn, st == TRN_ERR_CANCELLED ? 503 : 400, &e);
    }
    s->graph_dropped = false;
    char *now = studio_session_text(s);
    if (!now || !was || strcmp(now, was) != 0)
        studio_hist_push(s, true);
    else
        s->native_lo = s->native_hi = s->hist_pos;
    free(now);
    free(was);
    studio_session_changed(s);
    json_t *o = studio_state_json(s);
    json_object_set_new(o, "diagnostics", diags);
    json_object_set_new(o, "layers", studio_layers_json(trn_session_recipe(s->session)));
    json_object_set_new(o, "grid", studio_grid_json(s));
    return studio_reply_json(conn, 200, o);
}
