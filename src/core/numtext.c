/* Shortest round-trip number text and JSON value descriptions, independent of the C locale. */
#include "core/numtext.h"

#include <float.h>
#include <locale.h>
#include <stdbool.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* printf and strtod follow LC_NUMERIC, which an embedding program may have set to a comma:
 * canonical text and cache keys must not depend on it, so numbers are converted through the
 * locale's decimal point and always written with '.'. */
static char locale_point(void)
{
    const char *dp = localeconv()->decimal_point;
    return dp && dp[0] && !dp[1] ? dp[0] : '.';
}

double trn_text_double(const char *text)
{
    char buf[64];
    size_t n = strlen(text);
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    const char point = locale_point();
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '.') buf[i] = point;
    return strtod(buf, NULL);
}

static void print_c(char out[40], int precision, double v)
{
    snprintf(out, 40, "%.*g", precision, v);
    const char point = locale_point();
    if (point != '.')
        for (char *p = out; *p; p++)
            if (*p == point) *p = '.';
}

static bool non_finite(double v, char out[40])
{
    if (isfinite(v)) return false;
    snprintf(out, 40, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
    return true;
}

/* The texts of recent doubles that needed the search below, per thread: canonical text writes
 * the same numbers again and again (a studio stroke keys its recipe, the points of every stroke
 * before it included), and the search costs up to 3 printf and strtod calls a number (17 for
 * a subnormal). The text is the search's own, so nothing written changes. */
enum { MEMO_BITS = 10 };
typedef struct memo_entry {
    uint64_t bits; /* 0: empty (0 never reaches the search) */
    char text[32]; /* the longest, "-2.2250738585072014e-308", is 24 bytes */
} memo_entry;
static _Thread_local memo_entry memo[1u << MEMO_BITS];

void trn_double_text(double v, char out[40])
{
    if (non_finite(v, out)) return;
    if (v == 0) { /* -0 prints as 0 */
        memcpy(out, "0", 2);
        return;
    }
    if (floor(v) == v && fabs(v) <= 9007199254740992.0) {
        snprintf(out, 40, "%.0f", v);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    memo_entry *m = &memo[(bits * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - MEMO_BITS)];
    if (m->bits == bits) {
        memcpy(out, m->text, strlen(m->text) + 1);
        return;
    }
    /* A normal double lies within half an ulp (2^-53 of it) of the shortest decimal that reads
     * back as it, closer than half a step of 15 digits (5e-16 of it at least): where that
     * decimal has 15 digits or fewer, %.15g writes it, trailing zeros dropped. So only 15, 16
     * and 17 are tried, not 1 to 17; subnormals have fewer bits and take the long way. */
    for (int p = fabs(v) < DBL_MIN ? 1 : 15; p <= 17; p++) {
        print_c(out, p, v);
        if (trn_text_double(out) == v) break;
    }
    const size_t n = strlen(out);
    if (n < sizeof m->text) {
        m->bits = bits;
        memcpy(m->text, out, n + 1);
    }
}

void trn_float_text(float v, char out[40])
{
    if (non_finite((double)v, out)) return;
    if (v == 0) {
        memcpy(out, "0", 2);
        return;
    }
    if (floorf(v) == v && fabsf(v) <= 16777216.0f) {
        snprintf(out, 40, "%.0f", (double)v);
        return;
    }
    /* Read back the way a parser does: a double rounded to float. */
    for (int p = 1; p <= 9; p++) {
        print_c(out, p, (double)v);
        if ((float)trn_text_double(out) == v) return;
    }
}

const char *trn_json_describe(const json_t *v, char *buf, size_t size)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    case JSON_INTEGER:
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return buf;
    case JSON_REAL: {
        char num[40];
        trn_double_text(json_real_value(v), num);
        snprintf(buf, size, "%s", num);
        return buf;
    }
    case JSON_STRING: {
        const char *s = json_string_value(v);
        const size_t n = json_string_length(v);
        size_t keep = n > 40 ? 40 : n;
        while (keep < n && keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
            keep--; /* do not cut a UTF-8 sequence */
        snprintf(buf, size, "the string \"%.*s%s\"", (int)keep, s, keep < n ? "..." : "");
        return buf;
    }
    }
    return "a value";
}

char *trn_json_dumps_shortest(const json_t *v, size_t flags)
{
    char *text = json_dumps(v, flags | JSON_REAL_PRECISION(17));
    if (!text) return NULL;
    /* A new buffer: the shortest form can be longer than jansson's (it drops an exponent's
     * leading zeros, 1e-6 where we write 1e-06), but never by more than the token itself. */
    char *result = malloc(2 * strlen(text) + 1);
    if (!result) {
        free(text);
        return NULL;
    }
    char *o = result;
    bool in_string = false;
    for (const char *c = text; *c;) {
        if (in_string) {
            if (*c == '\\' && c[1]) {
                *o++ = *c++;
                *o++ = *c++;
                continue;
            }
            in_string = *c != '"';
            *o++ = *c++;
        } else if (*c == '"') {
            in_string = true;
            *o++ = *c++;
        } else if (*c == '-' || (*c >= '0' && *c <= '9')) {
            const size_t n = strspn(c, "+-0123456789.eE");
            if (n < 40 && (memchr(c, '.', n) || memchr(c, 'e', n) || memchr(c, 'E', n))) {
                char token[40], out[44];
                memcpy(token, c, n);
                token[n] = '\0';
                trn_double_text(trn_text_double(token), out);
                if (!strpbrk(out, ".eEn")) strcat(out, ".0");
                const size_t m = strlen(out);
                memmove(o, out, m);
                o += m;
            } else {
                memmove(o, c, n);
                o += n;
            }
            c += n;
        } else {
            *o++ = *c++;
        }
    }
    *o = '\0';
    free(text);
    return result;
}
