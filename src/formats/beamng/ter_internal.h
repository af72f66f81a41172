/* Helpers shared by the modern and legacy .ter readers (internal). */
#ifndef TRN_FORMATS_BEAMNG_TER_INTERNAL_H
#define TRN_FORMATS_BEAMNG_TER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/beamng.h"

#define TRN_TER_LEGACY_SAMPLES (TRN_TER_LEGACY_SIZE * TRN_TER_LEGACY_SIZE)
#define TRN_TER_LEGACY_SLOTS 8u
#define TRN_TER_HOLE 255u

/* Append a warning to ter; fails only for lack of memory. */
trn_status trn_ter_priv_warn(trn_ter *ter, int64_t offset, trn_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Largest layer value in p[0..n) that is not a hole, folded into current (start with 0). */
unsigned trn_ter_priv_layers_max(const uint8_t *p, size_t n, unsigned current);

/* After the materials are known: warn about layer values past the material list (one warning per
 * value, with its sample count and the offset of its first sample; layers_offset is where the
 * layer map starts in the file, -1 when it has no place there) and about more than 254 materials
 * (count_offset is the offset of the count). max_non_hole is trn_ter_priv_layers_max over the
 * whole map, so the common clean case costs no second pass. */
trn_status trn_ter_priv_check_layers(trn_ter *ter, unsigned max_non_hole, int64_t layers_offset,
                                     int64_t count_offset, trn_error *err);

/* A malloc'd NUL-terminated copy of n bytes; NULL when out of memory. */
char *trn_ter_priv_strndup(const uint8_t *p, size_t n);

/* Parse a legacy (version 1-6) file held in memory; data[0] is the version. On failure ter is
 * left partly filled and the caller disposes it. */
trn_status trn_ter_priv_parse_legacy(const uint8_t *data, size_t size, const char *path,
                                     trn_ter *ter, trn_error *err);

#endif
