/* Reading the fields of JSON documents (recipes, palettes, material sets, presets, graphs,
 * water): a field (number, count, text, asset id, boolean) is one table row (key, type, range,
 * what is expected, where it is stored), and every document reports a wrong value, an unknown
 * key and a missing key in the same form, at the JSON path's line and column (internal). */
#ifndef TRN_CORE_JSON_FIELDS_H
#define TRN_CORE_JSON_FIELDS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/json_pos.h"
#include "terrane/core.h"

/* The document being read: its text (byte order mark included, for positions), file name for
 * errors, the path of the value at hand and the error to fill. fail (NULL for most documents)
 * frames an error itself: a value read inside another document (Water Edit's overrides, the
 * text of a graph node's parameter) reports in that document's words; it gets the message
 * ("expected ..., found ...") and where it points, and returns the status to fail with. */
typedef struct trn_doc {
    const char *text;
    size_t size;
    const char *file;
    trn_json_path *path;
    trn_error *err;
    trn_status (*fail)(const struct trn_doc *d, trn_json_target target, const char *msg);
    void *ctx; /* fail's */
} trn_doc;

enum { TRN_DOC_LO_OPEN = 1, TRN_DOC_WHOLE = 2 };

/* A number's range: [lo, hi] (open at lo with TRN_DOC_LO_OPEN, whole numbers only with
 * TRN_DOC_WHOLE), finite; expect is how errors describe it ("a number >= 0 (...)"). */
typedef struct trn_doc_range {
    double lo, hi;
    unsigned flags;
    const char *expect;
} trn_doc_range;

/* What a field holds. */
typedef enum trn_doc_type {
    TRN_DOC_NUMBER, /* a double inside range */
    TRN_DOC_COUNT,  /* a JSON integer inside range, stored as uint32_t */
    TRN_DOC_TEXT,   /* a string (non-empty with TRN_DOC_NONEMPTY), stored as a malloc'd char * */
    TRN_DOC_ID,     /* a string starting with one of schemes and longer, stored as TRN_DOC_TEXT */
    TRN_DOC_BOOL,   /* true or false, stored as bool */
    TRN_DOC_OTHER,  /* read by the caller (objects, arrays, choices); the row names the key */
    TRN_DOC_NUMBERS, /* an array of exactly len finite numbers, stored as double[len]; expect
                        names its shape ("[x, z]"), errors inside it say "expected a number" */
    TRN_DOC_WORD     /* one of the words (schemes, NULL-terminated), stored as the int index
                        (with TRN_DOC_KINDS a string it is not is quoted whole in the error:
                        "found \"cubic\"") */
} trn_doc_type;

/* More range flags: a text field refuses "", and errors describe what was found by its kind
 * ("\"\"" or "a number" for text; the number itself for numbers) rather than its value;
 * TRN_DOC_KINDS, by its kind alone, true and false named as themselves ("a number", "true"). */
enum { TRN_DOC_NONEMPTY = 4, TRN_DOC_BRIEF = 8, TRN_DOC_KINDS = 16 };

/* One field of a document: its key, type, range (for text, only flags and expect), the offset
 * of its value in the struct being filled, for ids the accepted schemes and for words the words
 * (NULL-terminated), for number arrays their length, and a tag the document's own code keys on
 * (Water Edit: the body kinds a field applies to). A document's table lists every key it reads,
 * in the order "did you mean" prefers; tables end with a row whose name is NULL. */
typedef struct trn_doc_field {
    const char *name;
    trn_doc_type type;
    trn_doc_range range;
    size_t offset;
    const char *const *schemes;
    uint32_t len;
    unsigned tag;
} trn_doc_field;

#define TRN_DOC_NUM_ROW(key, lo, hi, flags, expect, owner, member)                                  \
    {.name = (key), .type = TRN_DOC_NUMBER, .range = {(lo), (hi), (flags), (expect)},              \
     .offset = offsetof(owner, member)}
#define TRN_DOC_COUNT_ROW(key, lo, hi, flags, expect, owner, member)                                \
    {.name = (key), .type = TRN_DOC_COUNT, .range = {(lo), (hi), (flags), (expect)},               \
     .offset = offsetof(owner, member)}
#define TRN_DOC_TEXT_ROW(key, flags, expect, owner, member)                                         \
    {.name = (key), .type = TRN_DOC_TEXT, .range = {0, 0, (flags), (expect)},                      \
     .offset = offsetof(owner, member)}
#define TRN_DOC_ID_ROW(key, schemes_, expect, owner, member)                                        \
    {.name = (key), .type = TRN_DOC_ID, .range = {0, 0, 0, (expect)},                              \
     .offset = offsetof(owner, member), .schemes = (schemes_)}
#define TRN_DOC_BOOL_ROW(key, expect, owner, member)                                               \
    {.name = (key), .type = TRN_DOC_BOOL, .range = {0, 0, 0, (expect)},                            \
     .offset = offsetof(owner, member)}
#define TRN_DOC_OTHER_ROW(key) {.name = (key), .type = TRN_DOC_OTHER}
/* member: a double[len] array (its length is the row's). */
#define TRN_DOC_NUMBERS_ROW(key, flags, expect, owner, member)                                      \
    {.name = (key), .type = TRN_DOC_NUMBERS, .range = {-HUGE_VAL, HUGE_VAL, (flags), (expect)},    \
     .offset = offsetof(owner, member),                                                            \
     .len = (uint32_t)(sizeof(((owner *)0)->member) / sizeof(double))}
/* member: an int-sized enum whose values are the words' indices. */
#define TRN_DOC_WORD_ROW(key, words, flags, expect, owner, member)                                  \
    {.name = (key), .type = TRN_DOC_WORD, .range = {0, 0, (flags), (expect)},                      \
     .offset = offsetof(owner, member) +                                                           \
               0 * sizeof(char[sizeof(((owner *)0)->member) == sizeof(int) ? 1 : -1]),           \
     .schemes = (words)}
#define TRN_DOC_END_ROW {.name = NULL}

/* Inline: the decode-only runtime (libterrane_runtime) checks water values with it and links no
 * JSON code. */
static inline bool trn_doc_range_ok(const trn_doc_range *r, double value)
{
    if (!isfinite(value)) return false;
    if ((r->flags & TRN_DOC_LO_OPEN) ? !(value > r->lo) : !(value >= r->lo)) return false;
    if (!(value <= r->hi)) return false;
    if ((r->flags & TRN_DOC_WHOLE) && floor(value) != value) return false;
    return true;
}

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

/* The value at the current path (the row's key) into the row's member of base; TRN_DOC_OTHER
 * rows read nothing. Text is duplicated (TRN_ERR_NO_MEMORY names the document as what). */
trn_status trn_doc_read_field(const trn_doc *d, const trn_doc_field *row, const json_t *v,
                              void *base, const char *what);

/* v by its kind: "a string", "a number", "a boolean", "an object", "an array" or "null". */
const char *trn_doc_kind(const json_t *v);

/* The one form of an unknown key in every document: "unknown key 'K' in PLACE; did you mean
 * 'X'?" when one of known (NULL-terminated) is near, else "unknown key 'K' in PLACE (expected
 * one of: A, B, ...)" ("(expected no keys)" for none); why (may be NULL) replaces the list and
 * follows the suggestion. PLACE is the JSON path of the object holding K (or what names it at the
 * top); callers give the key's line and column with the message. */
void trn_doc_unknown_key_text(char *buf, size_t size, const char *key, const char *place,
                              const char *const *known, const char *why);

/* Called with the path at the object holding key: trn_doc_unknown_key_text's message at the
 * key's position (PLACE is the path, what at the top; why may be NULL). */
trn_status trn_doc_unknown_key(const trn_doc *d, const char *key, const char *const *known,
                               const char *what, const char *why);

/* Called with the path at the object that lacks key: "missing key 'K' (expected EXPECT)". */
trn_status trn_doc_missing_key(const trn_doc *d, const char *key, const char *expect);

/* The closest of candidates (NULL-terminated) to word within a small edit distance (a third of
 * its length, transpositions counting one), or NULL. */
const char *trn_doc_did_you_mean(const char *word, const char *const *candidates);

/* The table's keys, NULL-terminated (its first 64). */
void trn_doc_field_names(const trn_doc_field *rows, const char *known[65]);

/* The table's key nearest to key (for "did you mean"), or NULL. */
const char *trn_doc_field_suggest(const trn_doc_field *rows, const char *key);

/* unknown_key with the table's keys as the suggestions. */
trn_status trn_doc_unknown_field(const trn_doc *d, const char *key, const trn_doc_field *rows,
                                 const char *what, const char *why);

#endif
