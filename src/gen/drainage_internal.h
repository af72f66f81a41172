/* Drainage internals shared with tests: the whole-grid computation with a chosen strip count. */
#ifndef TRN_GEN_DRAINAGE_INTERNAL_H
#define TRN_GEN_DRAINAGE_INTERNAL_H

#include "terrane/drainage.h"

/* trn_drainage_compute with the fill split into `strips` strips of rows flooded in parallel
 * (at least 3 rows a strip; 1: the whole-grid flood on one thread; 0: one strip per thread where
 * the grid is large enough). The results are the same bytes for every strip count. */
trn_status trn_drainage_compute_strips(const trn_field *field, double sea_level, int strips,
                                       trn_drainage *out, trn_progress_fn progress, void *user,
                                       trn_error *err);

#endif
