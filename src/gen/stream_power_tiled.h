/* Stream-power landscape evolution with the grid in tiles, in memory or in files (internal). */
#ifndef TRN_GEN_STREAM_POWER_TILED_H
#define TRN_GEN_STREAM_POWER_TILED_H

#include "terrane/landscape.h"

/* trn_stream_power_run's result, bit for bit, with the run's per-sample state held in square
 * tiles of tile samples (the last ones cut at the grid's edge) and worked on a tile at a time:
 * in memory (dir NULL) or in unlinked files under dir, so a process holds a few tiles and the
 * small graphs between them (the basins' passes, the samples each tile's exits carry).
 * Each step: uplift and receivers (one sample of halo); the trees of each tile, their basins
 * joined across tiles, the lowest pass of each pair of basins, Kruskal's tree from the outlet
 * and the carving along each path through the tiles it crosses (Cordonnier et al. 2019);
 * drainage area as tile counts plus what each tile's exits carry in (Barnes 2017); incision in
 * upstream rounds (a tile solves the trees whose receivers' new heights are known); with
 * deposition (Yuan et al. 2019) first its sums in rounds down the rivers (a tile gathers each sample
 * whose donors, in its own and other tiles, have gathered, in the whole grid's order); diffusion
 * substeps and the border with one sample of halo. The field's heights stay in memory (in and
 * out). TRN_ERR_UNSUPPORTED for mfd routing and a critical slope (run those on the whole grid);
 * report gets steps, pits_routed, steps_with_pits and max_area (not the last step's changes).
 * The grid may hold more than 2^32 samples; TRN_ERR_OVERFLOW where what stays 32-bit does not
 * fit (trn_spt_tiled_limits), checked before any height is read. Other errors as
 * trn_stream_power_run, TRN_ERR_IO when the files fail. */
trn_status trn_stream_power_run_tiled(trn_field *field, const trn_stream_power_params *p,
                                      uint32_t tile, const char *dir,
                                      trn_stream_power_report *report, trn_progress_fn progress,
                                      void *user, trn_error *err);

/* What a run across processes moved, for this process: bytes sent and received by kind
 * (0: the frames around the tiles; 1: the small graphs: roots and perimeters, passes, carving
 * and inflow tasks; 2: between rounds, incision's new heights and deposition's sums; 3: the
 * result). */
typedef struct trn_sp_tiled_stats {
    uint64_t sent[4], received[4];
    uint32_t tiles, tiles_owned, steps;
    uint32_t incision_rounds; /* exchanges of new heights that carried any, all steps */
} trn_sp_tiled_stats;

/* trn_stream_power_run_tiled shared by the processes of comm (NULL: one process, as
 * trn_stream_power_run_tiled): every process calls it with the same field and parameters and
 * works on its run of tiles (trn_comm_first_tile); the frames around the tiles are exchanged
 * between the passes (with comm's point-to-point blocks, each only to the processes owning a
 * tile within its depth; else all-gathered), the small graphs are solved where they must be
 * (the basins' chains on every process from the shared roots, Kruskal's tree and the crossing
 * counts on process 0, the incision's heights in rounds), and every process gets the whole
 * result (point to point, a tile at a time from its owner): the bytes of one process for any
 * process count. dir: each process's own folder (or a shared one: the files
 * are unlinked at once). stats may be NULL. A failure on one process is agreed on at the next
 * exchange: it reports its own message, the others TRN_ERR_MISMATCH ("another process
 * failed"). */
struct trn_comm;
trn_status trn_stream_power_run_tiled_comm(trn_field *field, const trn_stream_power_params *p,
                                           uint32_t tile, const char *dir, struct trn_comm *comm,
                                           trn_sp_tiled_stats *stats,
                                           trn_stream_power_report *report,
                                           trn_progress_fn progress, void *user, trn_error *err);

/* What the tiled solver numbers in 32 bits, on a grid of nx x nz samples (with its ring of
 * outlets) in tiles of tile: a tile with one sample around it (fewer than 2^32-1 samples) and
 * the tiles (fewer than 2^32-1). Samples of the whole grid are numbered in 64 bits, so the grid
 * itself may hold more than 2^32 (65537^2). TRN_ERR_OVERFLOW names the limit; also checked while
 * it runs: fewer than 2^32-1 roots of the tiles' trees in a step; drainage counts are held at
 * 2^32-1 (only a grid above 2^32 samples can reach it). */
trn_status trn_spt_tiled_limits(uint32_t nx, uint32_t nz, uint32_t tile, trn_error *err);

/* Sample k (row-major inside its tile) of tile t, on a grid nx samples across in tiles of tile,
 * as an index of the whole grid (64-bit); and the tile holding whole-grid sample v. */
uint64_t trn_spt_sample_index(uint32_t nx, uint32_t nz, uint32_t tile, uint32_t t, uint32_t k);
uint32_t trn_spt_tile_of(uint32_t nx, uint32_t tile, uint64_t v);

/* One tile for trn_spt_area_tiles. */
typedef struct trn_spt_tile_area {
    uint32_t tile;       /* its number (row by row) */
    const uint8_t *code; /* its samples' D8 codes to their receivers, 8 for base level */
    uint32_t *area;      /* out: the samples draining through each (itself included) */
} trn_spt_tile_area;

/* The tiled solver's drainage counts on the given tiles only, of a grid of nx x nz samples in
 * tiles of tile (files under dir, sparse: only those tiles are written): each tile's routed
 * forest and its roots (spt_pass_area), the counts crossing tiles down the chains of exits
 * (spt_inflows), each tile's area with its inflows, as a step of the run makes them. Tiles in
 * increasing order; every exit must drain into one of them. Tests place them anywhere on the
 * largest grid. Errors: TRN_ERR_OVERFLOW (trn_spt_tiled_limits), TRN_ERR_IO, TRN_ERR_NO_MEMORY. */
trn_status trn_spt_area_tiles(uint32_t nx, uint32_t nz, uint32_t tile, const char *dir,
                              size_t count, const trn_spt_tile_area *tiles, trn_error *err);

/* trn_stream_power_run_tiled_comm with the result kept by bands of rows: process k of comm gets
 * only the field's rows bands[k] .. bands[k + 1] - 1 of the heights and drainage area (bands:
 * comm's size + 1 row starts, from 0 to the field's rows, in order; NULL: every process gets
 * every row), the rest of its field and area left as they came. Each tile goes from its owner
 * only to the processes whose band it meets (with point-to-point blocks; else all-gathered):
 * no process receives the whole result. The report is every process's (the largest area
 * agreed). With comm NULL, bands is ignored. */
trn_status trn_stream_power_run_tiled_rows(trn_field *field, const trn_stream_power_params *p,
                                           uint32_t tile, const char *dir, struct trn_comm *comm,
                                           const uint32_t *bands, trn_sp_tiled_stats *stats,
                                           trn_stream_power_report *report,
                                           trn_progress_fn progress, void *user, trn_error *err);

/* The rows of the field a process of a run by bands reads and writes: its tiles' rows with the
 * halo of the diffusion's substeps, and its band (process rank of comm's size; bands as
 * trn_stream_power_run_tiled_rows), as field rows row0 .. row1 - 1. The hull of the two (one
 * interval), within the field. */
void trn_spt_window_rows(uint32_t cells_x, uint32_t cells_z, uint32_t tile, bool border_outlets,
                         const struct trn_comm *comm, const uint32_t *bands, uint32_t *row0,
                         uint32_t *row1);

/* A field held by a window of rows (trn_stream_power_run_tiled_window): its heights, the
 * uplift and erodibility masks and the drainage area hold the field's rows row0 .. row0 +
 * rows - 1 only (row-major, as the whole field's from row row0); edge: the heights of the
 * field's first row, last row, first column and last column (read by the ring of outlets). */
typedef struct trn_spt_window {
    uint32_t row0, rows;
    const float *edge[4];
} trn_spt_window;

/* trn_stream_power_run_tiled_rows on fields held by windows of rows: each process's window
 * holds at least its rows (trn_spt_window_rows), and it reads and writes no other (the
 * creep's largest factor is a max over the processes). win NULL: the whole field. A window
 * needs comm and bands. */
trn_status trn_stream_power_run_tiled_window(trn_field *field, const trn_stream_power_params *p,
                                             uint32_t tile, const char *dir,
                                             struct trn_comm *comm, const uint32_t *bands,
                                             const trn_spt_window *win,
                                             trn_sp_tiled_stats *stats,
                                             trn_stream_power_report *report,
                                             trn_progress_fn progress, void *user,
                                             trn_error *err);

/* Test hook (NULL unless a test sets it): a landscape evolution's level calls it, before it
 * makes the level's upsampled surface, with the rows it makes and holds of it (row0 .. row1 -
 * 1; a window by bands across processes, else every row) and the bytes of those rows'
 * heights and factors. */
extern void (*trn_evolve_window_hook)(uint32_t row0, uint32_t row1, size_t bytes);

/* Test hook (0 unless a test sets it): the most pieces of a cascade's finer levels' inputs that
 * the threads make ahead while its innermost run lasts, so that work ends mid-row or mid-level
 * whatever the run's speed. */
extern size_t trn_evolve_ahead_limit;

/* With sea_surface: the lowest height a sample under the sea level comes back at (its level less
 * sea_surface_depth; -infinity when that is 0: the bed as it came). */
double trn_sp_surface_floor(const trn_stream_power_params *p);

/* Whether trn_stream_power_run runs field's steps without a region per pass by default
 * (p->threads 0 and a grid too small for the threads to pay for such regions): called inside a
 * parallel region, it runs on the calling thread, and the caller's other threads are free to
 * make other work and then join it (trn_sp_crew_help). */
bool trn_sp_one_thread(const trn_field *field, const trn_stream_power_params *p);

/* Threads that join a small grid's run while it goes on (a cascade's threads, which make the
 * finer levels' inputs between its passes): trn_stream_power_run_crew runs on the calling
 * thread and splits its passes with the threads that have called trn_sp_crew_help on the same
 * crew, each of which returns when the run ends (at once if it has, or where no core is free
 * for it). A crew serves one run; threads: the most that will take part, the caller's
 * included. The bytes are the same whoever joins. Grids from 2^17 samples and MFD runs ignore
 * the crew. trn_sp_crew_idle, before any thread helps: while a helper waits for the next pass,
 * and while the calling thread waits for the helpers' shares of one, it calls piece(arg), which
 * makes one piece of other work (a few microseconds: the pass waits for it) and returns false
 * when none is left; the threads may call it at the same time. */
/* For tests: the free-core readings every stream-power run decides its threads by
 * (trn_cores_idle_within's signature; NULL: the machine's own again). Set while no run runs. */
void trn_sp_idle_reader_set(long (*read)(long want, long window_ns, unsigned flags));
/* For tests: each thread's run delay a small run's crew goes by (trn_thread_wait_ns's
 * signature; NULL: the system's own again). */
void trn_sp_wait_reader_set(long long (*read)(long tid));

typedef struct sp_crew trn_sp_crew;
trn_sp_crew *trn_sp_crew_new(int threads);
void trn_sp_crew_free(trn_sp_crew *crew);
void trn_sp_crew_idle(trn_sp_crew *crew, bool (*piece)(void *arg), void *arg);
void trn_sp_crew_help(trn_sp_crew *crew);
trn_status trn_stream_power_run_crew(trn_field *field, const trn_stream_power_params *p,
                                     trn_sp_crew *crew, trn_stream_power_report *report,
                                     trn_progress_fn progress, void *user, trn_error *err);

#endif
