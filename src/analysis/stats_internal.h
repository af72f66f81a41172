/* Statistics shared between stats.c and the grid-fingerprint measurement. */
#ifndef TRN_GEN_STATS_INTERNAL_H
#define TRN_GEN_STATS_INTERNAL_H

#include "core/progress.h"
#include "terrane/stats.h"

/* Aspect and periodic-curvature fingerprints into r (its fields documented in stats.h). */
trn_status trn_stats_fingerprints(const trn_field *field, const trn_stats_options *o, int threads,
                                  trn_terrain_stats *r, const trn_progress *progress,
                                  trn_error *err);

#endif
