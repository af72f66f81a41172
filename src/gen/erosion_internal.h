/* Private interface between the erosion driver and its sediment-transport mode. */
#ifndef TRN_GEN_EROSION_INTERNAL_H
#define TRN_GEN_EROSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"
#include "terrane/erosion.h"

/* Run params->transport_steps transport steps on heights h (nx * nz samples, changed in
 * place), adding to ledger's eroded, deposited and exported. Progress runs from share0 to
 * share1 under the stage "transport". Returns TRN_ERR_NO_MEMORY or TRN_ERR_CANCELLED (then h
 * is partly changed: the caller discards it). */
trn_status trn_erosion_transport(float *h, size_t nx, size_t nz, const trn_erosion_params *params,
                                 trn_erosion_ledger *ledger, trn_progress *pr, double share0,
                                 double share1, trn_error *err);

/* The cells of the grid the droplets run on for params->droplet_cell over a field of
 * cells_x x cells_z cells and size_x x size_z world units; false when they run on the field's
 * own grid (droplet_cell 0, transport mode, no iterations, or cells not finer than the
 * droplet cell). */
bool trn_erosion_droplet_grid(const trn_erosion_params *p, uint32_t cells_x, uint32_t cells_z,
                              double size_x, double size_z, uint32_t *cx, uint32_t *cz);

#endif
