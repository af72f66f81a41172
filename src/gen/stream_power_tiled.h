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
 * upstream rounds (a tile solves the trees whose receivers' new heights are known); diffusion
 * substeps and the border with one sample of halo. The field's heights stay in memory (in and
 * out). TRN_ERR_UNSUPPORTED for mfd routing, deposition and a critical slope (run those on the
 * whole grid); report gets steps, pits_routed, steps_with_pits and max_area (not the last
 * step's changes). Other errors as trn_stream_power_run, TRN_ERR_IO when the files fail. */
trn_status trn_stream_power_run_tiled(trn_field *field, const trn_stream_power_params *p,
                                      uint32_t tile, const char *dir,
                                      trn_stream_power_report *report, trn_progress_fn progress,
                                      void *user, trn_error *err);

/* With sea_surface: the lowest height a sample under the sea level comes back at (its level less
 * sea_surface_depth; -infinity when that is 0: the bed as it came). */
double trn_sp_surface_floor(const trn_stream_power_params *p);

#endif
