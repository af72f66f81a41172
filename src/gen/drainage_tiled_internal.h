/* The tiled drainage's whole-grid sample indices and flow graph between tiles, open to tests
 * (internal). */
#ifndef TRN_GEN_DRAINAGE_TILED_INTERNAL_H
#define TRN_GEN_DRAINAGE_TILED_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

/* Sample c (row-major inside a tile of w samples a row at (i0, j0)) as an index of the whole
 * grid, nx samples a row: j * nx + i in 64 bits (65537^2 is above 2^32). */
uint64_t trn_dt_sample_index(size_t nx, uint32_t i0, uint32_t j0, uint32_t w, size_t c);

/* One tile for trn_dt_flow_tiles. */
typedef struct trn_dt_tile_flow {
    uint32_t i0, j0, w, h;
    uint8_t *flow_dir;      /* w * h D8 codes or TRN_DRAIN_OUTLET */
    uint8_t *entry;         /* w * h: 1 where water comes in from another tile */
    uint32_t *accumulation; /* w * h, out: the tile's accumulation with its inflows */
} trn_dt_tile_flow;

/* Barnes 2017's accumulation on the given tiles of a grid of nx x nz samples, as the tiled
 * solver runs it on one process: each tile accumulated alone, its block of exits and entries
 * for the flow graph, process 0's solve of the graph, each tile accumulated again with its
 * inflows. Only the tiles given are held, so tests place them anywhere on the largest grid.
 * Errors: TRN_ERR_FORMAT (the flows do not join up), TRN_ERR_OVERFLOW, TRN_ERR_NO_MEMORY. */
trn_status trn_dt_flow_tiles(size_t nx, size_t nz, size_t count, trn_dt_tile_flow *tiles,
                             trn_error *err);

#endif
