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
 * report gets steps, pits_routed, steps_with_pits and max_area (not the last step's changes). Other errors as trn_stream_power_run, TRN_ERR_IO when the files fail. */
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

/* With sea_surface: the lowest height a sample under the sea level comes back at (its level less
 * sea_surface_depth; -infinity when that is 0: the bed as it came). */
double trn_sp_surface_floor(const trn_stream_power_params *p);

/* Whether trn_stream_power_run runs field's steps on one thread by default (p->threads 0 and a
 * grid too small for the threads to pay for their barriers): the caller's other threads are
 * then free while it runs. */
bool trn_sp_one_thread(const trn_field *field, const trn_stream_power_params *p);

#endif
