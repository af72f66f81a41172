/* Reading a scatter_exclusions array inside a larger document (internal: scenes check theirs). */
#ifndef TRN_SCATTER_SCATTER_EXCLUSIONS_H
#define TRN_SCATTER_SCATTER_EXCLUSIONS_H

#include <jansson.h>

#include "core/json_pos.h"
#include "terrane/scatter.h"

/* list is the array at *path in text (text may be NULL: no positions). Fills *out (dispose
 * with trn_scatter_exclusions_dispose, also on failure); errors name the offending key's place:
 * not a string, empty, or a duplicate ("duplicate key 'k' (first at [i])"). */
trn_status trn_scatter_exclusions_from_json(const json_t *list, const char *file, const char *text,
                                            size_t size, trn_json_path *path,
                                            trn_scatter_exclusions *out, trn_error *err);

#endif
