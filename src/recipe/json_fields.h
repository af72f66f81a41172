/* Reading the fields of JSON documents (recipes, palettes, material sets, presets): a number
 * field is one table row (name, range, what is expected, where it is stored), and every document
 * reports a wrong value, an unknown key and a missing key in the same form, at the JSON path's
 * line and column (internal). */
#ifndef TRN_RECIPE_JSON_FIELDS_H
#define TRN_RECIPE_JSON_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "core/json_pos.h"
#include "terrane/core.h"

/* The document being read: its text (byte order mark included, for positions), file name for
 * errors, the path of the value at hand and the error to fill. */
typedef struct trn_doc {
    const char *text;
    size_t size;
    const char *file;
    trn_json_path *path;
    trn_error *err;
} trn_doc;

enum { TRN_DOC_LO_OPEN = 1, TRN_DOC_WHOLE = 2 };

/* A number's range: [lo, hi] (open at lo with TRN_DOC_LO_OPEN, whole numbers only with
 * TRN_DOC_WHOLE), finite; expect is how errors describe it ("a number >= 0 (...)"). */
typedef struct trn_doc_range {
    double lo, hi;
    unsigned flags;
    const char *expect;
} trn_doc_range;

/* One number field of a document: its key, range and the offset of its double in the struct
 * being filled. Tables end with a row whose name is NULL. */
typedef struct trn_doc_field {
    const char *name;
    trn_doc_range range;
    size_t offset;
} trn_doc_field;

bool trn_doc_range_ok(const trn_doc_range *range, double value);

/* The row for key, or NULL. */
const trn_doc_field *trn_doc_field_find(const trn_doc_field *rows, const char *key);

/* "path: message" at the position of the current path (the value, or its key with
 * TRN_JSON_KEY); returns code. */
trn_status trn_doc_fail(const trn_doc *d, trn_status code, trn_json_target target, const char *fmt,
                        ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The value at the current path as a number of range: "expected EXPECT, found ..." otherwise. */
trn_status trn_doc_number(const trn_doc *d, const json_t *v, const trn_doc_range *range,
                          double *out);

/* The value at the current path (the row's key) into the row's double of base. */
trn_status trn_doc_read_field(const trn_doc *d, const trn_doc_field *row, const json_t *v,
                              void *base);

/* Called with the path at the object holding key: "unknown key 'K' in PARENT; did you mean
 * 'X'?WHY" at the key's position (PARENT is what at the top; why may be NULL). */
trn_status trn_doc_unknown_key(const trn_doc *d, const char *key, const char *const *known,
                               const char *what, const char *why);

/* Called with the path at the object that lacks key: "missing key 'K' (expected EXPECT)". */
trn_status trn_doc_missing_key(const trn_doc *d, const char *key, const char *expect);

#endif
