/* Where a value sits in a JSON text: a bounded tokenizer that finds a path's line and column. */
#include <stdatomic.h>
#include "core/json_pos.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct scan {
    const unsigned char *s;
    size_t n, i;
} scan;

static size_t bom_length(const unsigned char *s, size_t n)
{
    return n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF ? 3 : 0;
}

static void skip_ws(scan *c)
{
    while (c->i < c->n &&
           (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\n' || c->s[c->i] == '\r'))
        c->i++;
}

/* c->s[c->i] is the opening quote; leaves c->i after the closing quote (or at the end). */
static void skip_string(scan *c)
{
    c->i++;
    while (c->i < c->n) {
        unsigned char ch = c->s[c->i++];
        if (ch == '\\') {
            if (c->i < c->n) c->i++; /* the escaped byte can be a quote; \uXXXX digits cannot */
        } else if (ch == '"') {
            return;
        }
    }
}

static int is_delimiter(unsigned char ch)
{
    return ch == ',' || ch == ']' || ch == '}' || ch == ':' || ch == '"' || ch == '[' ||
           ch == '{' || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* Skip one value of any kind. Containers are skipped by counting brackets outside strings, so
 * nesting depth costs no recursion. */
static void skip_value(scan *c)
{
    skip_ws(c);
    if (c->i >= c->n) return;
    unsigned char ch = c->s[c->i];
    if (ch == '"') {
        skip_string(c);
        return;
    }
    if (ch == '{' || ch == '[') {
        size_t depth = 0;
        while (c->i < c->n) {
            ch = c->s[c->i];
            if (ch == '"') {
                skip_string(c);
                continue;
            }
            c->i++;
            if (ch == '{' || ch == '[') {
                depth++;
            } else if (ch == '}' || ch == ']') {
                if (--depth == 0) return;
            }
        }
        return;
    }
    while (c->i < c->n && !is_delimiter(c->s[c->i]))
        c->i++;
}

static int hex4(const unsigned char *p, size_t avail, unsigned *out)
{
    if (avail < 4) return 0;
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        unsigned char h = p[k];
        unsigned d;
        if (h >= '0' && h <= '9')
            d = (unsigned)(h - '0');
        else if (h >= 'a' && h <= 'f')
            d = (unsigned)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F')
            d = (unsigned)(h - 'A' + 10);
        else
            return 0;
        v = v * 16u + d;
    }
    *out = v;
    return 1;
}

static size_t utf8_encode(unsigned cp, unsigned char *out)
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Consume the string at c->i (an opening quote) and say whether its decoded bytes equal key. */
static int string_equals(scan *c, const char *key)
{
    const unsigned char *k = (const unsigned char *)key;
    size_t klen = strlen(key), at = 0;
    int eq = 1;
    c->i++;
    while (c->i < c->n) {
        unsigned char ch = c->s[c->i++];
        unsigned char buf[8];
        size_t blen = 0;
        if (ch == '"') return eq && at == klen;
        if (ch != '\\') {
            buf[0] = ch;
            blen = 1;
        } else {
            if (c->i >= c->n) return 0;
            unsigned char e = c->s[c->i++];
            unsigned cp = 0;
            switch (e) {
            case '"':
            case '\\':
            case '/':
                buf[0] = e;
                blen = 1;
                break;
            case 'b':
                buf[0] = '\b';
                blen = 1;
                break;
            case 'f':
                buf[0] = '\f';
                blen = 1;
                break;
            case 'n':
                buf[0] = '\n';
                blen = 1;
                break;
            case 'r':
                buf[0] = '\r';
                blen = 1;
                break;
            case 't':
                buf[0] = '\t';
                blen = 1;
                break;
            case 'u':
                if (!hex4(c->s + c->i, c->n - c->i, &cp)) {
                    eq = 0;
                    break;
                }
                c->i += 4;
                /* A high surrogate followed by \u and a low surrogate is one character. */
                if (cp >= 0xD800 && cp <= 0xDBFF && c->n - c->i >= 6 && c->s[c->i] == '\\' &&
                    c->s[c->i + 1] == 'u') {
                    unsigned lo;
                    if (hex4(c->s + c->i + 2, c->n - c->i - 2, &lo) && lo >= 0xDC00 &&
                        lo <= 0xDFFF) {
                        cp = 0x10000u + ((cp - 0xD800u) << 10) + (lo - 0xDC00u);
                        c->i += 6;
                    }
                }
                blen = utf8_encode(cp, buf);
                break;
            default:
                eq = 0;
                break;
            }
        }
        for (size_t b = 0; b < blen; b++) {
            if (eq && at < klen && k[at] == buf[b])
                at++;
            else
                eq = 0;
        }
    }
    return 0;
}

trn_json_pos trn_json_pos_of_offset(const char *text, size_t size, size_t offset)
{
    trn_json_pos pos = {0, 1, 1};
    const unsigned char *s = (const unsigned char *)text;
    if (!s) return pos;
    size_t start = bom_length(s, size);
    if (offset > size) offset = size;
    pos.offset = offset;
    long line = 1, column = 1;
    for (size_t j = start; j < offset; j++) {
        if (s[j] == '\n') {
            line++;
            column = 1;
        } else if ((s[j] & 0xC0) != 0x80) {
            column++;
        }
    }
    pos.line = line > INT_MAX ? INT_MAX : (int)line;
    pos.column = column > INT_MAX ? INT_MAX : (int)column;
    return pos;
}

trn_status trn_json_error_at(trn_error *err, trn_status code, const char *file, const char *text,
                             size_t size, const trn_json_path *path, trn_json_target target,
                             const char *msg)
{
    char where[200];
    trn_json_path_format(path, where, sizeof where);
    trn_json_pos pos = {0, 0, 0};
    if (text) trn_json_locate(text, size, path->steps, path->depth, target, &pos);
    trn_error_set(err, code, file, text ? (int64_t)pos.offset : -1, "%s%s%s", where,
                  where[0] ? ": " : "", msg);
    if (text) trn_error_set_position(err, pos.line, pos.column);
    return code;
}

bool trn_json_locate(const char *text, size_t size, const trn_json_step *steps, size_t depth,
                     trn_json_target target, trn_json_pos *out)
{
    scan c = {(const unsigned char *)text, text ? size : 0, 0};
    c.i = bom_length(c.s, c.n);
    skip_ws(&c);
    size_t found_at = c.i < c.n ? c.i : 0;
    bool ok = c.i < c.n;
    for (size_t d = 0; ok && d < depth; d++) {
        const trn_json_step *step = &steps[d];
        skip_ws(&c);
        if (c.i >= c.n) {
            ok = false;
            break;
        }
        if (step->key) {
            if (c.s[c.i] != '{') {
                ok = false;
                break;
            }
            c.i++;
            bool got = false;
            while (!got) {
                skip_ws(&c);
                if (c.i >= c.n || c.s[c.i] != '"') break;
                size_t key_at = c.i;
                int eq = string_equals(&c, step->key);
                skip_ws(&c);
                if (c.i >= c.n || c.s[c.i] != ':') break;
                c.i++;
                skip_ws(&c);
                if (c.i >= c.n) break;
                if (eq) {
                    found_at = (target == TRN_JSON_KEY && d + 1 == depth) ? key_at : c.i;
                    got = true;
                    break;
                }
                skip_value(&c);
                skip_ws(&c);
                if (c.i >= c.n || c.s[c.i] != ',') break;
                c.i++;
            }
            ok = got;
        } else {
            if (c.s[c.i] != '[') {
                ok = false;
                break;
            }
            c.i++;
            skip_ws(&c);
            for (size_t k = 0; ok && k < step->index; k++) {
                if (c.i >= c.n || c.s[c.i] == ']') {
                    ok = false;
                    break;
                }
                skip_value(&c);
                skip_ws(&c);
                if (c.i >= c.n || c.s[c.i] != ',') {
                    ok = false;
                    break;
                }
                c.i++;
                skip_ws(&c);
            }
            if (ok && (c.i >= c.n || c.s[c.i] == ']')) ok = false;
            if (ok) found_at = c.i;
        }
    }
    if (out) *out = trn_json_pos_of_offset(text, c.n, found_at);
    return ok;
}

bool trn_json_path_push_key(trn_json_path *path, const char *key)
{
    if (path->depth >= TRN_JSON_PATH_MAX) return false;
    path->steps[path->depth].key = key;
    path->steps[path->depth].index = 0;
    path->depth++;
    return true;
}

bool trn_json_path_push_index(trn_json_path *path, size_t index)
{
    if (path->depth >= TRN_JSON_PATH_MAX) return false;
    path->steps[path->depth].key = NULL;
    path->steps[path->depth].index = index;
    path->depth++;
    return true;
}

void trn_json_path_pop(trn_json_path *path)
{
    if (path->depth > 0) path->depth--;
}

static int plain_key(const char *key)
{
    if (!*key) return 0;
    for (const char *p = key; *p; p++) {
        char ch = *p;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return 0;
    }
    return 1;
}

/* Appends with truncation; *at never passes size - 1. */
static void put(char *buf, size_t size, size_t *at, const char *s, size_t n)
{
    if (*at + 1 >= size) return;
    size_t room = size - 1 - *at;
    if (n > room) n = room;
    memcpy(buf + *at, s, n);
    *at += n;
    buf[*at] = '\0';
}

void trn_json_path_format(const trn_json_path *path, char *buf, size_t buf_size)
{
    if (!buf || buf_size == 0) return;
    buf[0] = '\0';
    size_t at = 0;
    for (size_t d = 0; path && d < path->depth; d++) {
        const trn_json_step *step = &path->steps[d];
        char tmp[32];
        if (!step->key) {
            int n = snprintf(tmp, sizeof tmp, "[%zu]", step->index);
            put(buf, buf_size, &at, tmp, (size_t)n);
        } else if (plain_key(step->key)) {
            if (d > 0) put(buf, buf_size, &at, ".", 1);
            put(buf, buf_size, &at, step->key, strlen(step->key));
        } else {
            put(buf, buf_size, &at, "[\"", 2);
            for (const unsigned char *p = (const unsigned char *)step->key; *p; p++) {
                if (*p == '"' || *p == '\\') {
                    tmp[0] = '\\';
                    tmp[1] = (char)*p;
                    put(buf, buf_size, &at, tmp, 2);
                } else if (*p < 0x20) {
                    int n = snprintf(tmp, sizeof tmp, "\\u%04x", *p);
                    put(buf, buf_size, &at, tmp, (size_t)n);
                } else {
                    put(buf, buf_size, &at, (const char *)p, 1);
                }
            }
            put(buf, buf_size, &at, "\"]", 2);
        }
    }
}

static _Atomic uint64_t json_parses;

void trn_json_parse_counted(void)
{
    atomic_fetch_add_explicit(&json_parses, 1, memory_order_relaxed);
}

uint64_t trn_json_parse_count(void)
{
    return atomic_load_explicit(&json_parses, memory_order_relaxed);
}
