/* Drainage of a grid split into tiles, across one process or many (MPI): the same bytes as trn_drainage_compute. */
#ifndef TERRANE_DRAINAGE_TILED_H
#define TERRANE_DRAINAGE_TILED_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/comm.h"
#include "terrane/core.h"
#include "terrane/drainage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills out (w * h heights, row-major) with the input heights of samples [i0, i0 + w) x
 * [j0, j0 + h). Called once for each tile this process owns. */
typedef trn_status (*trn_tile_heights_fn)(void *user, uint32_t i0, uint32_t j0, uint32_t w,
                                          uint32_t h, float *out, trn_error *err);

/* Receives the results of samples [i0, i0 + w) x [j0, j0 + h) (w * h values, row-major). */
typedef trn_status (*trn_tile_values_fn)(void *user, uint32_t i0, uint32_t j0, uint32_t w,
                                         uint32_t h, const float *values, trn_error *err);

/* The grid and what was measured while solving it. */
typedef struct trn_drainage_tiling {
    uint32_t cells_x, cells_z; /* samples: cells + 1 per axis */
    double size_x, size_z;
    double sea_level;          /* NaN: no sea */
    uint32_t tile;             /* samples per tile side (the last row and column may be less) */
    size_t tiles_x, tiles_z;
} trn_drainage_tiling;

typedef struct trn_drainage_tiled_stats {
    size_t tiles, tiles_owned;
    size_t spill_nodes, spill_edges;   /* the depression-filling graph (on process 0) */
    size_t flat_rounds;                /* halo exchanges until flat distances settled */
    size_t flow_links;                 /* samples whose flow leaves their tile */
    uint64_t bytes_sent, bytes_received; /* through the transport, by this process */
} trn_drainage_tiled_stats;

typedef struct trn_drainage_tiles trn_drainage_tiles;

/* Depression filling, D8 directions and flow accumulation over tiles of `tile` samples a side,
 * each process of comm solving its own tiles (trn_comm_first_tile): Barnes 2016's parallel
 * priority flood (each tile flooded from its border, the tile-edge spill levels solved as a
 * small graph on process 0, each tile raised to its watersheds' levels), flat distances by
 * halo exchange until none changes, and Barnes 2017's flow accumulation (each tile
 * accumulated alone, the flows between tiles solved as a graph on process 0, each tile
 * accumulated again with its inflows). filled, flow_dir and accumulation are byte for byte
 * those of trn_drainage_compute on the whole grid, for any tile size and process count (no
 * basin list). The whole grid is never held: it may have more than 2^32 samples (65537^2),
 * sample indices across tiles being 64-bit; an accumulation above 2^32-1 (only on such a grid)
 * is held at 2^32-1. Every process of comm calls this together. Errors:
 * TRN_ERR_INVALID_ARGUMENT (sizes, a NaN height: named), TRN_ERR_OVERFLOW (a tile of 2^32-3
 * samples or more, 2^32-1 watersheds or flows on the tiles' borders), TRN_ERR_NO_MEMORY,
 * TRN_ERR_CANCELLED, the height callback's, and TRN_ERR_MISMATCH on the other processes when
 * one fails. Progress (stage "drainage") is reported by process 0 only. */
trn_status trn_drainage_tiled_compute(trn_comm *comm, const trn_drainage_tiling *tiling,
                                      trn_tile_heights_fn heights, void *user,
                                      trn_drainage_tiles **out, trn_progress_fn progress,
                                      void *progress_user, trn_error *err);

/* A tile this process owns (NULL arrays for another process's): its origin, size and w * h
 * row-major results. */
trn_status trn_drainage_tiles_tile(const trn_drainage_tiles *tiles, size_t index, uint32_t *i0,
                                   uint32_t *j0, uint32_t *w, uint32_t *h, const float **filled,
                                   const uint8_t **flow_dir, const uint32_t **accumulation);
void trn_drainage_tiles_stats(const trn_drainage_tiles *tiles, trn_drainage_tiled_stats *stats);
/* Every tile to process 0, assembled into out there (cells, size, sea level, filled, flow_dir,
 * accumulation; no basins); other processes' out is zeroed. Collective. */
trn_status trn_drainage_tiles_gather(const trn_drainage_tiles *tiles, trn_comm *comm,
                                     trn_drainage *out, trn_error *err);
void trn_drainage_tiles_free(trn_drainage_tiles *tiles);

/* trn_drainage_breach over tiles: the input heights (heights, read twice a tile) breached
 * along tiles' directions, handed to emit tile by tile in tile order, byte for byte
 * trn_drainage_breach's on the whole grid with that grid's drainage. Each tile is breached
 * alone, then the heights its exits (samples draining into another tile) pass on are solved in
 * order of accumulation, each one's value lowered one float a step along its receiver's path,
 * then each tile is breached again with its inflows (the shape of Barnes 2017's
 * accumulation). Holds one tile's heights and the exits. Needs every tile on this process
 * (TRN_ERR_INVALID_ARGUMENT otherwise); errors: TRN_ERR_NO_MEMORY, the callbacks'. */
trn_status trn_drainage_tiles_breach(const trn_drainage_tiles *tiles, trn_tile_heights_fn heights,
                                     void *user, trn_tile_values_fn emit, void *emit_user,
                                     trn_error *err);
/* The same split across the processes of comm, each breaching only the tiles it owns (emit is
 * called for those, in tile order): each process breaches its tiles alone; every exit (its
 * height, accumulation and receiver) goes to every process, each follows the receivers in its
 * own tiles to the exit they reach and how many steps on; process 0 solves the exits in order
 * of accumulation and sends back their final heights; each process breaches its tiles again
 * with their inflows. Byte for byte trn_drainage_tiles_breach's for any process count. Every
 * process of comm calls this together; errors as trn_drainage_tiles_breach's, and
 * TRN_ERR_MISMATCH on the other processes when one fails. */
trn_status trn_drainage_tiles_breach_split(const trn_drainage_tiles *tiles, trn_comm *comm,
                                           trn_tile_heights_fn heights, void *user,
                                           trn_tile_values_fn emit, void *emit_user,
                                           trn_error *err);

/* The whole field in, the whole result out, on one process: trn_drainage_compute's arrays by
 * way of tiles (basins empty). */
trn_status trn_drainage_compute_tiled(const trn_field *field, double sea_level, uint32_t tile,
                                      trn_drainage *out, trn_progress_fn progress, void *user,
                                      trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
