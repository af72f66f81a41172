/* Private interface between the erosion driver and its sediment-transport mode. */
#ifndef TRN_GEN_EROSION_INTERNAL_H
#define TRN_GEN_EROSION_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "terrane/comm.h"
#include "terrane/erosion.h"

/* Run params->transport_steps transport steps on heights h (nx * nz samples, changed in
 * place), adding to ledger's eroded, deposited and exported. Progress runs from share0 to
 * share1 under the stage "transport". Returns TRN_ERR_NO_MEMORY or TRN_ERR_CANCELLED (then h
 * is partly changed: the caller discards it). */
trn_status trn_erosion_transport(float *h, size_t nx, size_t nz, const trn_erosion_params *params,
                                 trn_erosion_ledger *ledger, trn_progress *pr, double share0,
                                 double share1, trn_error *err);

/* Where a row-band run reads its input and sends its result: rows [z0, z0 + count) of the
 * grid, nx floats a row. read is asked for each row once, in order, `chunk` rows at a time (the
 * last fewer); write receives the final rows in order, chunk rows at a time (the last fewer).
 * own_rows (trn_erosion_run_rows_comm only): each process is given only the chunks it keeps,
 * still in order, instead of every chunk: those whose first row lies in its band of tile rows,
 * and the last chunk, when it is one row, with the chunk before it (a tile cache stores such a
 * row with the row before it). */
typedef struct trn_erosion_rows_io {
    trn_status (*read)(void *user, size_t z0, size_t count, float *rows, trn_error *err);
    trn_status (*write)(void *user, size_t z0, size_t count, const float *rows, trn_error *err);
    void *user;
    size_t chunk;
    bool own_rows;
} trn_erosion_rows_io;

/* trn_erosion_run's heights, bit for bit, row band by row band: the droplets of a round of a
 * row of tiles touch only the rows around it, so the run holds a band of about
 * (2 * rounds + 2) tile rows (tile = 2 * (lifetime + radius + 2) + 2 samples) and the thermal
 * passes' halo, not the grid. The grid is nx x nz samples over size_x x size_z; lo and hi its
 * lowest and highest height (trn_field_range's). Detach mode on the field's own grid (no
 * droplet grid, trn_erosion_droplet_grid) without rate_scale only (TRN_ERR_UNSUPPORTED
 * otherwise). ledger is filled as trn_erosion_run's. Errors as
 * trn_erosion_run's, and whatever read and write return. */
trn_status trn_erosion_run_rows(size_t nx, size_t nz, double size_x, double size_z,
                                const trn_erosion_params *params, uint64_t world_seed, float lo,
                                float hi, const trn_erosion_rows_io *io, trn_erosion_ledger *ledger,
                                trn_progress_fn progress, void *user, trn_error *err);

/* trn_erosion_run_rows shared by the processes of comm (every one calls it, each with io over
 * the whole input): process p runs the droplets of its run of tile rows (as trn_comm deals
 * tiles), round by round, even tile rows then odd ones as the whole grid's phases, exchanging
 * with its neighbours (trn_comm_sendrecv) the rows each side of their border (reach + 1) after
 * each parity; then the thermal passes on its rows with thermal_iterations rows from each
 * neighbour; then every process writes every row through io (the rows gathered a chunk at a
 * time), so each holds the whole result, and the same ledger. With io->own_rows, each process
 * writes only the chunks it keeps (trn_erosion_rows_io), the rows of them other processes
 * own sent to it point to point (fewer than a chunk's), so no process receives or writes the
 * whole result. The bytes of trn_erosion_run_rows for any process count. One process, a single
 * row of tiles or more thermal passes than a tile row's samples: trn_erosion_run_rows on each
 * (with own_rows, its chunks filtered). *droplets_run: the droplets this process ran, all
 * passes (may be NULL). */
trn_status trn_erosion_run_rows_comm(size_t nx, size_t nz, double size_x, double size_z,
                                     const trn_erosion_params *params, uint64_t world_seed,
                                     float lo, float hi, const trn_erosion_rows_io *io,
                                     trn_comm *comm, trn_erosion_ledger *ledger,
                                     uint64_t *droplets_run, trn_progress_fn progress, void *user,
                                     trn_error *err);

/* The cells of the grid the droplets run on for params->droplet_cell over a field of
 * cells_x x cells_z cells and size_x x size_z world units; false when they run on the field's
 * own grid (droplet_cell 0, transport mode, no iterations, or cells not finer than the
 * droplet cell). */
bool trn_erosion_droplet_grid(const trn_erosion_params *p, uint32_t cells_x, uint32_t cells_z,
                              double size_x, double size_z, uint32_t *cx, uint32_t *cz);

/* Test hook (0 unless a test sets it): the threads of a whole-grid run normally own runs of a
 * stage's tiles or thermal row chunks and take another's only when theirs is empty; 1 gives
 * every item of a stage to the first thread, 2 to no thread, so the others (2: all) take
 * theirs from its back. trn_erosion_stolen counts the items so taken while the hook is set. */
extern int trn_erosion_queue_test;
extern atomic_ullong trn_erosion_stolen;

#endif
