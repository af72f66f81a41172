/* A recipe's fields as table rows: one row per field of the recipe, a landform, a biome and a
 * rule (key, kind, range, default, where it lives) drives reading it, checking it, writing its
 * canonical text and hashing it into the fingerprint (internal). */
#ifndef TRN_RECIPE_FIELDS_H
#define TRN_RECIPE_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#define XXH_STATIC_LINKING_ONLY /* an XXH64_state_t inside the hasher */
#include <xxhash.h>

#include "core/json_fields.h"
#include "recipe/recipe_internal.h"

/* What a row holds and so how each of the four passes treats it. */
typedef enum trn_rcp_kind {
    TRN_RCP_NUMBER,     /* a double of range num; canonical text omits def */
    TRN_RCP_WHOLE,      /* a uint32_t, a whole number of range num; canonical text omits def */
    TRN_RCP_OPTIONAL,   /* a double of range num with a bool at offset2 saying it is set */
    TRN_RCP_TEXT,       /* a char *, non-empty when read (expect); NULL = absent */
    TRN_RCP_BOOL,       /* a bool; canonical text omits def (0 or 1) */
    TRN_RCP_CHOICE,     /* an enum named by choices[value]; canonical text omits def */
    TRN_RCP_PAIR,       /* [a, b]: doubles at offset and offset2 of range num (expect: shape) */
    TRN_RCP_WHOLE_PAIR, /* [a, b]: uint32_t at offset and offset2, whole numbers of range num */
    TRN_RCP_BAND,       /* a trn_band of range num, [min, max] when set */
    TRN_RCP_COLOR,      /* float[4] of range num, [r, g, b, a], always written */
    TRN_RCP_SEED,       /* a uint64_t 0 .. 2^63-1 read as a JSON integer, always written */
    TRN_RCP_CUSTOM      /* read, checked, written and hashed by the document's own code */
} trn_rcp_kind;

/* Row flags: TRN_RCP_OWN_CHECK, the document's code checks the value (a reference to another
 * section, a limit that depends on other fields), the row only reads, writes and hashes it;
 * TRN_RCP_ALWAYS, canonical text writes it even at its default. */
enum { TRN_RCP_OWN_CHECK = 1, TRN_RCP_ALWAYS = 2 };

/* One field. size and size2 are the bytes of the members it covers (tests check that a struct's
 * rows cover every member). empty: what validation says of "" in a text field (NULL: the
 * document's own code checks it). */
typedef struct trn_rcp_field {
    const char *name;
    trn_rcp_kind kind;
    unsigned flags;
    trn_rcp_num num;
    size_t offset, size, offset2, size2;
    double def;
    const char *expect;
    const char *empty;
    const char *const *choices;
} trn_rcp_field;

#define TRN_RCP_MEMBER(T, m) offsetof(T, m), sizeof(((T *)0)->m)

/* The tables (NULL name ends each), in the order "did you mean" and "expected one of" list
 * their keys. */
extern const trn_rcp_field trn_rcp_recipe_fields[];
extern const trn_rcp_field trn_rcp_landform_fields[];
extern const trn_rcp_field trn_rcp_biome_fields[];
extern const trn_rcp_field trn_rcp_rule_fields[];

/* The row for key, or NULL. */
const trn_rcp_field *trn_rcp_field_find(const trn_rcp_field *rows, const char *key);
/* The table's keys, NULL-terminated (at most 64). */
void trn_rcp_field_names(const trn_rcp_field *rows, const char *known[65]);
/* The table's rows ordered by key bytewise (canonical text's order); returns how many. */
size_t trn_rcp_field_sorted(const trn_rcp_field *rows, const trn_rcp_field *out[64]);

/* Every row's default into base (numbers, counts, booleans, choices). */
void trn_rcp_field_defaults(const trn_rcp_field *rows, void *base);
/* Whether base's member of row holds its default (texts: NULL; optional numbers: unset). */
bool trn_rcp_field_is_default(const trn_rcp_field *row, const void *base);

/* Reading: the value at d's path (the row's key) into base, with the recipe's messages. Custom
 * rows read nothing. */
trn_status trn_rcp_field_read(const trn_doc *d, const trn_rcp_field *row, const json_t *v,
                              void *base);

/* Checking a struct built in code: TRN_OK, or the status with *where at the value (pushed on
 * the path given) and msg filled. Custom rows pass. */
trn_status trn_rcp_field_check(const trn_rcp_field *row, const void *base, trn_json_path *where,
                               char *msg, size_t msg_size);
/* "expected EXPECT, found N" for a number of range which (N as canonical text writes it, or
 * NaN / Infinity). */
trn_status trn_rcp_num_check(trn_rcp_num which, double v, char *msg, size_t msg_size);

/* Canonical text: '"key":value' of the row into b (after a comma when comma), or nothing when
 * the value is its default (returns whether it wrote). Custom rows write nothing. */
bool trn_rcp_field_emit(trn_rcp_buf *b, const trn_rcp_field *row, const void *base, bool comma);
/* Pieces of canonical text: a string (escaped as JSON), a key with its colon, a double and a
 * float as canonical text writes them. */
void trn_rcp_emit_text(trn_rcp_buf *b, const char *s);
void trn_rcp_emit_key(trn_rcp_buf *b, const char *key);
void trn_rcp_emit_double(trn_rcp_buf *b, double v);
void trn_rcp_emit_float(trn_rcp_buf *b, float v);
void trn_rcp_emit_whole(trn_rcp_buf *b, long long v);

/* A buffered XXH64 state: a fingerprint is many small members, and one XXH64_update per
 * member would cost more than the bytes themselves. */
typedef struct trn_rcp_hasher {
    XXH64_state_t state;
    size_t used;
    unsigned char buf[1024];
} trn_rcp_hasher;

void trn_rcp_hasher_reset(trn_rcp_hasher *h);
/* Inline: a fingerprint hashes a hundred small members (it runs twice a regeneration). */
static inline void trn_rcp_hash(trn_rcp_hasher *h, const void *p, size_t n)
{
    if (h->used + n > sizeof h->buf) {
        XXH64_update(&h->state, h->buf, h->used);
        h->used = 0;
        if (n > sizeof h->buf) {
            XXH64_update(&h->state, p, n);
            return;
        }
    }
    memcpy(h->buf + h->used, p, n);
    h->used += n;
}
/* A string, told apart from NULL and from its neighbours by its length. */
void trn_rcp_hash_text(trn_rcp_hasher *h, const char *s);
uint64_t trn_rcp_hasher_digest(trn_rcp_hasher *h);
/* The row's member(s) into h; custom rows add nothing. */
void trn_rcp_field_hash(trn_rcp_hasher *h, const trn_rcp_field *row, const void *base);
/* Every row of the table. */
void trn_rcp_fields_hash(trn_rcp_hasher *h, const trn_rcp_field *rows, const void *base);

#endif
