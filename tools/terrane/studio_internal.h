/* The studio's parts share this: the server's state and what one part calls in another. */
#ifndef TRN_STUDIO_INTERNAL_H
#define TRN_STUDIO_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"
#include "studio_server.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"

/* The server's whole state: one session behind one lock, and the progress of a generation. */
typedef struct studio {
    cli_ctx *ctx;
    char *recipe_path;  /* the file saved to */
    char *project_root; /* nothing is written outside it */
    char *assets_root;  /* the palette's project (material image maps are read inside it) */
    trn_document_kind kind;
    bool scene; /* the recipe is the Terrain3D component's of a scene (a project folder's) */
    pthread_mutex_t lock; /* the session and everything below it */
    trn_session *session;
    trn_palette palette;
    trn_material_set set;
    bool has_palette;
    trn_generate_options options;
    trn_graph_cache *cache; /* node results of the last generation, reused by previews */
    /* Draft previews (POST /api/preview: a parameter being dragged) run without the session
     * lock on a coarse grid, one at a time under draft_lock, their node results kept in
     * draft_cache (made on first use) so a drag recomputes only what the parameter changes. */
    pthread_mutex_t draft_lock;
    trn_graph_cache *draft_cache;
    /* Each chunk's LOD errors (lod_levels floats a chunk, row-major chunks), valid when
     * lod_ready; edits recompute their changed chunks, a regeneration drops them. */
    float *lod;
    bool lod_ready;
    /* The last /api/stroke is the newest history entry (not undone since): extendable. */
    bool can_extend;
    /* --allow-errors started the session without the recipe's graph (it has errors): the
     * file's graph is checked, saving is refused until a generation succeeds. */
    bool graph_dropped;
    /* The recipe file as last read or written (under lock): its text, which Save edits
     * minimally, and its fingerprint (modification time, size, content hash), so a change made
     * on disk meanwhile is noticed and never overwritten unasked. */
    char *save_path;     /* where Save writes: the recipe, or the file its symbolic link names */
    char *recovery_path; /* the autosave beside the recipe: RECIPE.recovery */
    char *disk_text;
    size_t disk_size;
    struct timespec disk_mtime;
    unsigned long long disk_hash;
    bool disk_changed;                 /* the file's content differs from disk_text */
    unsigned long long disk_seen_hash; /* the changed content last examined */
    char disk_error[512];              /* the changed file does not read as a recipe: why */
    int disk_line, disk_column;
    /* The shared history: one entry per step (a stroke, a generation, a layer switch, a
     * restore), [0, hist_pos) applied, each with the recipe after it (canonical JSON). Steps in
     * [native_lo, native_hi) are also in the session's own history (undone and redone
     * incrementally); the others are undone and redone by generating their recipe. The page is
     * unsaved when the newest applied entry is not the one saved or loaded. */
    struct hist_entry {
        uint64_t id;
        char *after;
        size_t size; /* strlen(after) */
    } * hist;
    size_t hist_bytes; /* the entries' recipes together */
    size_t hist_count, hist_pos, hist_cap, native_lo, native_hi;
    char *hist_base_text; /* the recipe before the first entry */
    uint64_t hist_base, hist_next;
    char *saved_text;  /* the recipe as last loaded or saved: unsaved while the session's differs */
    uint64_t revision; /* bumps with every change of the session */
    uint64_t autosaved;    /* the revision the recovery file holds */
    bool recovery_pending; /* an earlier run's recovery file, not yet restored or dropped */
    char client[40];       /* the X-Terrane-Client of the request being served */
    pthread_t watcher;
    bool watcher_started;
    /* Progress events for /api/events. */
    pthread_mutex_t ev_lock;
    pthread_cond_t ev_cond;
    uint64_t ev_seq;
    char ev_data[512];
    /* State events: state_seq counts changes; state_text is the newest state; the client that
     * made each of the last 64 changes lets a page tell its own changes from others'. */
    uint64_t state_seq;
    char state_text[8192];
    char state_client[64][40];
    atomic_bool stopping;
} studio;

/* What identifies the session's water: a refreshed or replaced water has new arrays. */
typedef struct water_mark {
    bool has;
    const void *surface, *owner;
    uint64_t ground_hash;
    uint32_t bodies;
} water_mark;

/* studio_session.c */
enum MHD_Result studio_reply_json(struct MHD_Connection *conn, unsigned status, json_t *value);
enum MHD_Result studio_reply_trn_error(struct MHD_Connection *conn, unsigned status,
                                       const trn_error *e);
char *studio_base64(const void *data, size_t size);
uint32_t studio_chunk_cells_of(const trn_recipe *r);
uint32_t studio_lod_levels(const trn_recipe *r);
void studio_chunk_lod(const trn_field *f, uint32_t i0, uint32_t j0, uint32_t nx, uint32_t nz,
                      uint32_t levels, float *out);
void studio_chunk_window(const trn_recipe *r, uint32_t cx, uint32_t cz, uint32_t *i0, uint32_t *j0,
                         uint32_t *nx, uint32_t *nz);
water_mark studio_water_mark_of(const studio *s);
bool studio_dirty(const studio *s);
char *studio_session_text(const studio *s);
void studio_hist_trim(studio *s);
bool studio_hist_push(studio *s, bool regenerated);
void studio_hist_mark_saved(studio *s);
const char *studio_hist_before(const studio *s, size_t k);
void studio_session_changed(studio *s);
json_t *studio_state_json(const studio *s);
void studio_publish_state(studio *s);
char *studio_read_disk(const char *path, size_t *size, struct timespec *mtime);
void studio_disk_remember(studio *s, char *text, size_t size, struct timespec mtime);
bool studio_disk_check(studio *s);
trn_status studio_parse_disk_text(const studio *s, const char *text, size_t size, trn_recipe *out,
                                  trn_document_kind *kind, trn_error *e);
json_t *studio_edit_json(studio *s, const trn_chunk_set *changed, const water_mark *before);
trn_status studio_regenerate(studio *s, const trn_recipe *next, trn_erosion_quality quality,
                             trn_error *e);
enum MHD_Result studio_api_events(studio *s, struct MHD_Connection *conn);
json_t *studio_layers_json(const trn_recipe *r);
json_t *studio_grid_json(const studio *s);
enum MHD_Result studio_apply_recipe(studio *s, struct MHD_Connection *conn, trn_recipe *next);

/* studio_materials.c */
char *studio_assets_root_of(const char *recipe_path, const char *palette_json,
                            const char *project_root);
enum MHD_Result studio_api_material_map(studio *s, struct MHD_Connection *conn);
enum MHD_Result studio_api_materials(studio *s, struct MHD_Connection *conn);

/* studio_presets.c */
enum MHD_Result studio_api_presets(studio *s, struct MHD_Connection *conn);
enum MHD_Result studio_api_preset_picture(studio *s, struct MHD_Connection *conn);
enum MHD_Result studio_api_preset(studio *s, struct MHD_Connection *conn, const char *body,
                                  size_t size);

/* studio_export.c */
enum MHD_Result studio_api_export(studio *s, struct MHD_Connection *conn, const char *body,
                                  size_t size);

/* studio_project.c */
char *studio_project_recipe(cli_ctx *ctx, const char *dir, bool *scene);

#endif
