/* Private interface between the erosion driver and its sediment-transport mode. */
#ifndef TRN_GEN_EROSION_INTERNAL_H
#define TRN_GEN_EROSION_INTERNAL_H

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

#endif
