/* Water Edit with its parameters already read: the trees a graph keeps for them (internal). */
#ifndef TRN_WATER_EDIT_H
#define TRN_WATER_EDIT_H

#include <jansson.h>

#include "terrane/water.h"

/* trn_water_edit and trn_water_edit_check with each parameter's text (errors point into it) and
 * the tree that text reads as (every object's keys in bytewise order, as the text has them), so
 * nothing is read again; a NULL tree reads the text. The same results and messages. */
trn_status trn_water_edit_read(const trn_water_body *bodies, uint32_t count,
                               const char *excluded_json, const json_t *excluded_tree,
                               const char *overrides_json, const json_t *overrides_tree,
                               trn_water_body **out, uint32_t *out_count, char *where,
                               size_t where_size, trn_error *err);
trn_status trn_water_edit_check_read(const char *excluded_json, const json_t *excluded_tree,
                                     const char *overrides_json, const json_t *overrides_tree,
                                     char *where, size_t where_size, trn_error *err);

#endif
