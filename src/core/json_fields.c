/* Reading the fields of JSON documents: field rows (numbers, counts, text, ids, booleans), the
 * errors every document shares, and the "did you mean" suggestion for an unknown word. */
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/numtext.h"
#include "core/textbuf.h"
#include "core/json_fields.h"

/* Optimal string alignment distance (adjacent transpositions count one), capped at cap + 1. */
static size_t edit_distance(const char *a, size_t na, const char *b, size_t nb, size_t cap)
{
    if (na > 64 || nb > 64) return cap + 1;
    size_t prev2[65], prev[65], cur[65];
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j;
    for (size_t j = 0; j <= nb; j++)
        prev2[j] = j;
    for (size_t i = 1; i <= na; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            size_t best = prev[j] + 1;
            if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
            if (prev[j - 1] + cost < best) best = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < best)
                best = prev2[j - 2] + 1;
            cur[j] = best;
        }
        memcpy(prev2, prev, sizeof prev);
        memcpy(prev, cur, sizeof cur);
    }
    return prev[nb] > cap ? cap + 1 : prev[nb];
}

const char *trn_doc_did_you_mean(const char *word, const char *const *candidates)
{
    size_t n = strlen(word);
    if (n == 0) return NULL;
    size_t cap = n / 3 > 1 ? n / 3 : 1;
    const char *best = NULL;
    size_t best_score = cap + 1;
    for (const char *const *c = candidates; *c; c++) {
        size_t m = strlen(*c);
        size_t score = edit_distance(word, n, *c, m, cap);
        /* A misspelt beginning of a longer name ("heigth" for height_variation) counts one
         * more than the misspelling itself. */
        if (m > n) {
            size_t prefix = edit_distance(word, n, *c, n, cap) + 1;
            if (prefix < score) score = prefix;
        }
        if (score < best_score) {
            best_score = score;
            best = *c;
        }
    }
    return best;
}

const trn_doc_field *trn_doc_field_find(const trn_doc_field *rows, const char *key)
{
    for (const trn_doc_field *f = rows; f && f->name; f++)
        if (strcmp(f->name, key) == 0) return f;
    return NULL;
}

trn_status trn_doc_fail(const trn_doc *d, trn_status code, trn_json_target target, const char *fmt,
                        ...)
{
    char msg[420];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (d->fail) return d->fail(d, target, msg);
    return trn_json_error_at(d->err, code, d->file, d->text, d->size, d->path, target, msg);
}

trn_status trn_doc_number(const trn_doc *d, const json_t *v, const trn_doc_range *range,
                          double *out)
{
    char buf[120];
    if (!json_is_number(v) || !trn_doc_range_ok(range, json_number_value(v)))
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s",
                            range->expect, trn_json_describe(v, buf, sizeof buf));
    *out = json_number_value(v);
    return TRN_OK;
}

const char *trn_doc_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}

/* v by its kind, true and false as themselves (TRN_DOC_KINDS). */
static const char *kind_or_literal(const json_t *v)
{
    return json_is_true(v) ? "true" : json_is_false(v) ? "false" : trn_doc_kind(v);
}

/* "expected EXPECT, found ..." for a value the row refuses. */
static trn_status refuse(const trn_doc *d, const trn_doc_field *row, const json_t *v)
{
    char buf[120];
    const char *found;
    if (row->range.flags & TRN_DOC_KINDS) {
        found = kind_or_literal(v);
    } else if (!(row->range.flags & TRN_DOC_BRIEF)) {
        found = trn_json_describe(v, buf, sizeof buf);
    } else if (json_is_number(v) && (row->type == TRN_DOC_NUMBER || row->type == TRN_DOC_COUNT)) {
        snprintf(buf, sizeof buf, "%.17g", json_number_value(v));
        found = buf;
    } else {
        /* A text field refuses a string only when it is empty. */
        found = row->type == TRN_DOC_TEXT && json_is_string(v) && json_string_length(v) == 0
                    ? "\"\""
                    : trn_doc_kind(v);
    }
    return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s",
                        row->range.expect, found);
}

/* A string without NUL bytes that starts with one of schemes (if any) and has more. */
static bool text_ok(const trn_doc_field *row, const json_t *v)
{
    const char *s = json_string_value(v);
    if (!s || strlen(s) != json_string_length(v)) return false;
    if ((row->range.flags & TRN_DOC_NONEMPTY) && s[0] == '\0') return false;
    if (!row->schemes) return true;
    for (const char *const *p = row->schemes; *p; p++) {
        size_t n = strlen(*p);
        if (strncmp(s, *p, n) == 0 && s[n] != '\0') return true;
    }
    return false;
}

trn_status trn_doc_read_field(const trn_doc *d, const trn_doc_field *row, const json_t *v,
                              void *base, const char *what)
{
    void *at = (char *)base + row->offset;
    switch (row->type) {
    case TRN_DOC_NUMBER:
        if (!json_is_number(v) || !trn_doc_range_ok(&row->range, json_number_value(v)))
            return refuse(d, row, v);
        *(double *)at = json_number_value(v);
        return TRN_OK;
    case TRN_DOC_COUNT:
        if (!json_is_integer(v) || !trn_doc_range_ok(&row->range, (double)json_integer_value(v)))
            return refuse(d, row, v);
        *(uint32_t *)at = (uint32_t)json_integer_value(v);
        return TRN_OK;
    case TRN_DOC_TEXT:
    case TRN_DOC_ID: {
        if (!text_ok(row, v)) return refuse(d, row, v);
        char *copy = trn_text_dup(json_string_value(v));
        if (!copy)
            return trn_error_set(d->err, TRN_ERR_NO_MEMORY, d->file, -1,
                                 "out of memory reading a %s", what);
        *(char **)at = copy;
        return TRN_OK;
    }
    case TRN_DOC_BOOL:
        if (!json_is_boolean(v)) return refuse(d, row, v);
        *(bool *)at = json_is_true(v);
        return TRN_OK;
    case TRN_DOC_NUMBERS: {
        if (!json_is_array(v)) return refuse(d, row, v);
        const size_t n = json_array_size(v);
        if (n != row->len)
            return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                                "expected %s (%u numbers), found %zu value%s", row->range.expect,
                                row->len, n, n == 1 ? "" : "s");
        double xs[16];
        for (size_t k = 0; k < n && k < sizeof xs / sizeof xs[0]; k++) {
            const json_t *x = json_array_get(v, k);
            if (!json_is_number(x) || !trn_doc_range_ok(&row->range, json_number_value(x))) {
                trn_json_path_push_index(d->path, k);
                char buf[120];
                const trn_status st = trn_doc_fail(
                    d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a number, found %s",
                    (row->range.flags & TRN_DOC_KINDS) ? kind_or_literal(x)
                                                       : trn_json_describe(x, buf, sizeof buf));
                trn_json_path_pop(d->path);
                return st;
            }
            xs[k] = json_number_value(x);
        }
        memcpy(at, xs, (n < 16 ? n : 16) * sizeof xs[0]);
        return TRN_OK;
    }
    case TRN_DOC_WORD: {
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        for (int k = 0; s && row->schemes && row->schemes[k]; k++)
            if (strcmp(s, row->schemes[k]) == 0) {
                *(int *)at = k;
                return TRN_OK;
            }
        if (s && (row->range.flags & TRN_DOC_KINDS))
            return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found \"%.64s\"",
                                row->range.expect, s);
        return refuse(d, row, v);
    }
    case TRN_DOC_OTHER:
        break;
    }
    return TRN_OK;
}

void trn_doc_field_names(const trn_doc_field *rows, const char *known[65])
{
    size_t n = 0;
    for (const trn_doc_field *f = rows; f->name && n < 64; f++)
        known[n++] = f->name;
    known[n] = NULL;
}

const char *trn_doc_field_suggest(const trn_doc_field *rows, const char *key)
{
    const char *known[65];
    trn_doc_field_names(rows, known);
    return trn_doc_did_you_mean(key, known);
}

trn_status trn_doc_unknown_field(const trn_doc *d, const char *key, const trn_doc_field *rows,
                                 const char *what, const char *why)
{
    const char *known[65];
    trn_doc_field_names(rows, known);
    return trn_doc_unknown_key(d, key, known, what, why);
}

void trn_doc_unknown_key_text(char *buf, size_t size, const char *key, const char *place,
                              const char *const *known, const char *why)
{
    const char *hint = trn_doc_did_you_mean(key, known);
    char list[320] = "";
    if (!hint && !why) {
        /* The keys it could have been, cut (", ...") where the message would grow too long. */
        size_t at = 0;
        bool cut = false;
        for (const char *const *k = known; *k && !cut; k++) {
            const size_t need = strlen(*k) + 2;
            if (at + need + 5 >= sizeof list) {
                cut = true;
                break;
            }
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", at ? ", " : "", *k);
        }
        if (cut) snprintf(list + at, sizeof list - at, ", ...");
    }
    snprintf(buf, size, "unknown key '%.80s' in %s%s%s%s%s%s%s", key, place,
             hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "",
             hint || why ? "" : list[0] ? " (expected one of: " : " (expected no keys",
             hint || why ? "" : list, hint || why ? (why ? why : "") : ")");
}

trn_status trn_doc_unknown_key(const trn_doc *d, const char *key, const char *const *known,
                               const char *what, const char *why)
{
    char parent[200];
    trn_json_path_format(d->path, parent, sizeof parent);
    char msg[sizeof d->err->message];
    trn_doc_unknown_key_text(msg, sizeof msg, key, parent[0] ? parent : what, known, why);
    trn_json_path_push_key(d->path, key);
    trn_json_pos pos = {0, 0, 0};
    if (d->text)
        trn_json_locate(d->text, d->size, d->path->steps, d->path->depth, TRN_JSON_KEY, &pos);
    trn_json_path_pop(d->path);
    trn_error_set(d->err, TRN_ERR_JSON, d->file, d->text ? (int64_t)pos.offset : -1, "%s", msg);
    if (d->text) trn_error_set_position(d->err, pos.line, pos.column);
    return TRN_ERR_JSON;
}

trn_status trn_doc_missing_key(const trn_doc *d, const char *key, const char *expect)
{
    return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "missing key '%s' (expected %s)", key,
                        expect);
}
