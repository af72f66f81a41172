/* BeamNG level metadata: findings, .terrain.json, TerrainBlock in items.level.json, helpers. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/textbuf.h"
#include "core/numtext.h"
#include "core/checked.h"
#include "core/fileio.h"
#include "level_internal.h"
#include "core/write_set.h"

/* Items files of big levels hold every object of the level; a gigabyte is far beyond any. */
#define ITEMS_MAX_BYTES (1u << 30)
/* Metadata JSON files are small; this only guards against reading a wrong huge file. */
#define JSON_MAX_BYTES (64u << 20)

/* ------------------------------------------------------------------------------------------
 * Text buffers and small string helpers.
 * ---------------------------------------------------------------------------------------- */

void trn_lvl_buf_append(trn_lvl_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    size_t need;
    if (!trn_add_size(b->len, n, &need) || !trn_add_size(need, 1, &need)) {
        b->failed = true;
        return;
    }
    if (need > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < need) {
            if (cap > SIZE_MAX / 2) {
                cap = need;
                break;
            }
            cap *= 2;
        }
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void trn_lvl_buf_puts(trn_lvl_buf *b, const char *s)
{
    trn_lvl_buf_append(b, s, strlen(s));
}

void trn_lvl_buf_printf(trn_lvl_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        trn_lvl_buf_append(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    trn_lvl_buf_append(b, big, (size_t)n);
    free(big);
}

void trn_lvl_buf_free(trn_lvl_buf *b)
{
    if (!b) return;
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *trn_lvl_strdup(const char *s)
{
    return trn_text_dup(s);
}

bool trn_lvl_copy(char *dst, size_t dst_size, const char *src)
{
    if (!dst_size) return false;
    size_t n = strlen(src);
    if (n >= dst_size) {
        memcpy(dst, src, dst_size - 1);
        dst[dst_size - 1] = '\0';
        return false;
    }
    memcpy(dst, src, n + 1);
    return true;
}

bool trn_lvl_join(char *dst, size_t dst_size, const char *a, const char *b)
{
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/')
        la--;
    int n = snprintf(dst, dst_size, "%.*s/%s", (int)la, a, b);
    return n >= 0 && (size_t)n < dst_size;
}

const char *trn_lvl_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

bool trn_lvl_level_name(const char *level_dir, char *out, size_t out_size)
{
    char real[PATH_MAX];
    const char *p = level_dir;
    /* "." or "levels/foo/" must still give "foo": resolve when the folder exists. */
    if (realpath(level_dir, real)) p = real;
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && p[start - 1] != '/')
        start--;
    if (n - start >= out_size || n == start) return false;
    memcpy(out, p + start, n - start);
    out[n - start] = '\0';
    return true;
}

bool trn_lvl_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool trn_lvl_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* ------------------------------------------------------------------------------------------
 * JSON helpers.
 * ---------------------------------------------------------------------------------------- */

json_t *trn_lvl_json_number(double v)
{
    /* Whole values within the exact integer range print as integers, as the engine does. */
    if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

const char *trn_lvl_json_kind(const json_t *v)
{
    if (!v) return "nothing";
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "a whole number";
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    }
    return "something else";
}

size_t trn_lvl_bom_length(const char *text, size_t n)
{
    return (n >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
            (unsigned char)text[2] == 0xBF)
               ? 3
               : 0;
}

bool trn_lvl_json_get_number(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        double d = strtod(s, &end);
        while (*end == ' ')
            end++;
        if (end == s || *end || errno == ERANGE || !isfinite(d)) return false;
        *out = d;
        return true;
    }
    return false;
}

trn_status trn_lvl_json_syntax_error(trn_error *err, const char *path, const json_error_t *je,
                                     int line_base, size_t offset_base)
{
    int line = line_base > 0 ? line_base : je->line;
    /* jansson's position counts the bytes consumed, so the offending byte is the one before. */
    int64_t offset = (int64_t)offset_base + (je->position > 0 ? je->position - 1 : 0);
    trn_error_set(err, TRN_ERR_JSON, path, offset, "invalid JSON: %s", je->text);
    trn_error_set_position(err, line > 0 ? line : 1, je->column > 0 ? je->column : 1);
    return TRN_ERR_JSON;
}

static void json_escape(trn_lvl_buf *b, const char *s, size_t n)
{
    trn_lvl_buf_append(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        if (c == '"')
            esc = "\\\"";
        else if (c == '\\')
            esc = "\\\\";
        else if (c == '\n')
            esc = "\\n";
        else if (c == '\r')
            esc = "\\r";
        else if (c == '\t')
            esc = "\\t";
        else if (c < 0x20) {
            snprintf(hex, sizeof hex, "\\u%04x", c);
            esc = hex;
        }
        if (esc) {
            trn_lvl_buf_append(b, s + run, i - run);
            trn_lvl_buf_puts(b, esc);
            run = i + 1;
        }
    }
    trn_lvl_buf_append(b, s + run, n - run);
    trn_lvl_buf_append(b, "\"", 1);
}

static void json_real_text(trn_lvl_buf *b, double v)
{
    char text[40];
    /* Shortest round-trip text; -0 is written "0", as it would read back as the integer 0. */
    trn_double_text(v, text);
    trn_lvl_buf_puts(b, text);
}

static bool json_is_scalar(const json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

static void json_indent(trn_lvl_buf *b, int depth)
{
    for (int i = 0; i < depth; i++)
        trn_lvl_buf_append(b, "  ", 2);
}

/* pretty = false writes one compact line (items.level.json). */
static void json_write(trn_lvl_buf *b, const json_t *v, int depth, bool pretty)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) {
            trn_lvl_buf_puts(b, "{}");
            break;
        }
        trn_lvl_buf_puts(b, pretty ? "{\n" : "{");
        const char *key;
        json_t *val;
        size_t i = 0;
        json_object_foreach((json_t *)v, key, val)
        {
            if (i++) trn_lvl_buf_puts(b, pretty ? ",\n" : ",");
            if (pretty) json_indent(b, depth + 1);
            json_escape(b, key, strlen(key));
            trn_lvl_buf_puts(b, pretty ? ": " : ":");
            json_write(b, val, depth + 1, pretty);
        }
        if (pretty) {
            trn_lvl_buf_puts(b, "\n");
            json_indent(b, depth);
        }
        trn_lvl_buf_puts(b, "}");
        break;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        bool inline_items = !pretty;
        if (pretty) {
            inline_items = true;
            for (size_t i = 0; i < n; i++)
                if (!json_is_scalar(json_array_get(v, i)) || json_is_string(json_array_get(v, i)))
                    inline_items = false;
        }
        if (n == 0) {
            trn_lvl_buf_puts(b, "[]");
            break;
        }
        trn_lvl_buf_puts(b, inline_items ? "[" : "[\n");
        for (size_t i = 0; i < n; i++) {
            if (i) trn_lvl_buf_puts(b, inline_items ? (pretty ? ", " : ",") : ",\n");
            if (!inline_items) json_indent(b, depth + 1);
            json_write(b, json_array_get(v, i), depth + 1, pretty);
        }
        if (!inline_items) {
            trn_lvl_buf_puts(b, "\n");
            json_indent(b, depth);
        }
        trn_lvl_buf_puts(b, "]");
        break;
    }
    case JSON_STRING:
        json_escape(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        trn_lvl_buf_printf(b, "%lld", (long long)json_integer_value(v));
        break;
    case JSON_REAL:
        json_real_text(b, json_real_value(v));
        break;
    case JSON_TRUE:
        trn_lvl_buf_puts(b, "true");
        break;
    case JSON_FALSE:
        trn_lvl_buf_puts(b, "false");
        break;
    case JSON_NULL:
        trn_lvl_buf_puts(b, "null");
        break;
    }
}

void trn_lvl_json_compact(trn_lvl_buf *b, const json_t *v)
{
    json_write(b, v, 0, false);
}

void trn_lvl_json_pretty(trn_lvl_buf *b, const json_t *v)
{
    json_write(b, v, 0, true);
    trn_lvl_buf_puts(b, "\n");
}

/* ------------------------------------------------------------------------------------------
 * Findings.
 * ---------------------------------------------------------------------------------------- */

const char *trn_severity_name(trn_severity severity)
{
    switch (severity) {
    case TRN_SEVERITY_INFO:
        return "info";
    case TRN_SEVERITY_WARNING:
        return "warning";
    case TRN_SEVERITY_ERROR:
        return "error";
    }
    return "unknown";
}

void trn_findings_dispose(trn_findings *findings)
{
    if (!findings) return;
    free(findings->items);
    memset(findings, 0, sizeof *findings);
}

size_t trn_findings_count(const trn_findings *findings, trn_severity at_least)
{
    size_t n = 0;
    for (size_t i = 0; findings && i < findings->count; i++)
        if (findings->items[i].severity >= at_least) n++;
    return n;
}

const trn_finding *trn_findings_find(const trn_findings *findings, const char *check)
{
    for (size_t i = 0; findings && i < findings->count; i++)
        if (strcmp(findings->items[i].check, check) == 0) return &findings->items[i];
    return NULL;
}

trn_status trn_findings_add(trn_findings *findings, trn_severity severity, const char *check,
                            const char *file, int64_t offset, const char *fix, const char *fmt, ...)
{
    if (findings->count == findings->capacity) {
        size_t cap = findings->capacity ? findings->capacity * 2 : 8;
        trn_finding *items = realloc(findings->items, cap * sizeof *items);
        if (!items) return TRN_ERR_NO_MEMORY;
        findings->items = items;
        findings->capacity = cap;
    }
    trn_finding *f = &findings->items[findings->count++];
    memset(f, 0, sizeof *f);
    f->severity = severity;
    f->offset = offset;
    trn_lvl_copy(f->check, sizeof f->check, check);
    trn_lvl_copy(f->file, sizeof f->file, file ? file : "");
    trn_lvl_copy(f->fix, sizeof f->fix, fix ? fix : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * .terrain.json
 * ---------------------------------------------------------------------------------------- */

void trn_terrain_json_dispose(trn_terrain_json *tj)
{
    if (!tj) return;
    free(tj->datafile);
    free(tj->heightmap_image);
    free(tj->binary_format);
    for (uint32_t i = 0; i < tj->material_count; i++)
        free(tj->materials[i]);
    free(tj->materials);
    memset(tj, 0, sizeof *tj);
}

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

trn_status trn_terrain_json_from_ter(const trn_ter *ter, const char *datafile,
                                     const char *heightmap_image, trn_terrain_json *tj,
                                     trn_error *err)
{
    memset(tj, 0, sizeof *tj);
    if (!ter) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no terrain given");
    tj->version = ter->version;
    tj->size = ter->size;
    tj->height_map_size = (uint64_t)ter->size * ter->size;
    tj->layer_map_size = tj->height_map_size;
    tj->height_map_item_size = 2;
    tj->layer_map_item_size = 1;
    tj->datafile = trn_lvl_strdup(datafile ? datafile : "");
    tj->heightmap_image = trn_lvl_strdup(heightmap_image ? heightmap_image : "");
    tj->binary_format = trn_lvl_strdup(TRN_TERRAIN_JSON_BINARY_FORMAT);
    if (ter->material_count) tj->materials = calloc(ter->material_count, sizeof(char *));
    if (!tj->datafile || !tj->heightmap_image || !tj->binary_format ||
        (ter->material_count && !tj->materials)) {
        trn_terrain_json_dispose(tj);
        return oom(err, NULL);
    }
    for (uint32_t i = 0; i < ter->material_count; i++) {
        tj->materials[i] = trn_lvl_strdup(ter->materials[i] ? ter->materials[i] : "");
        tj->material_count = i + 1;
        if (!tj->materials[i]) {
            trn_terrain_json_dispose(tj);
            return oom(err, NULL);
        }
    }
    return TRN_OK;
}

trn_status trn_terrain_json_serialize(const trn_terrain_json *tj, char **text, size_t *text_size,
                                      trn_error *err)
{
    *text = NULL;
    if (text_size) *text_size = 0;
    json_t *root = json_object();
    json_t *mats = json_array();
    bool ok = root && mats;
    /* The engine writes exactly these fields, its JSON writer sorting the keys: every
     * .terrain.json of the public editor-saved levels (2022-2025) has them in this order. The
     * materials go in their place below. */
    ok = ok &&
         !json_object_set_new(
             root, "binaryFormat",
             json_string(tj->binary_format ? tj->binary_format : TRN_TERRAIN_JSON_BINARY_FORMAT));
    ok =
        ok && !json_object_set_new(root, "datafile", json_string(tj->datafile ? tj->datafile : ""));
    ok = ok &&
         !json_object_set_new(root, "heightMapItemSize", json_integer(tj->height_map_item_size));
    ok = ok &&
         !json_object_set_new(root, "heightMapSize", json_integer((json_int_t)tj->height_map_size));
    ok = ok && !json_object_set_new(root, "heightmapImage",
                                    json_string(tj->heightmap_image ? tj->heightmap_image : ""));
    ok =
        ok && !json_object_set_new(root, "layerMapItemSize", json_integer(tj->layer_map_item_size));
    ok = ok &&
         !json_object_set_new(root, "layerMapSize", json_integer((json_int_t)tj->layer_map_size));
    ok = ok && !json_object_set_new(root, "materials", json_null());
    ok = ok && !json_object_set_new(root, "size", json_integer(tj->size));
    ok = ok && !json_object_set_new(root, "version", json_integer(tj->version));
    for (uint32_t i = 0; ok && i < tj->material_count; i++) {
        json_t *s = json_stringn(tj->materials[i], strlen(tj->materials[i]));
        /* A name that is not UTF-8 cannot go into JSON as is; keep its bytes readable. */
        if (!s) {
            json_decref(root);
            json_decref(mats);
            return trn_error_set(err, TRN_ERR_FORMAT, NULL, -1,
                                 "material %u's name is not valid UTF-8 and cannot be written "
                                 "to .terrain.json",
                                 i);
        }
        ok = !json_array_append_new(mats, s);
    }
    if (ok) {
        ok = !json_object_set(root, "materials", mats);
    }
    json_decref(mats);
    if (!ok) {
        json_decref(root);
        return oom(err, NULL);
    }
    trn_lvl_buf b = {0};
    trn_lvl_json_pretty(&b, root);
    json_decref(root);
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, NULL);
    }
    /* The editor ends the file at the closing brace, without a newline. */
    if (b.len && b.data[b.len - 1] == '\n') b.data[--b.len] = '\0';
    *text = b.data;
    if (text_size) *text_size = b.len;
    return TRN_OK;
}

trn_status trn_terrain_json_write(const char *path, const trn_terrain_json *tj, trn_error *err)
{
    char *text;
    size_t n;
    trn_status st = trn_terrain_json_serialize(tj, &text, &n, err);
    if (st) return st;
    st = trn_file_write_atomic(path, text, n, err);
    free(text);
    return st;
}

/* Schema error: the message names the JSON path. */
static trn_status schema_error(trn_error *err, const char *path, const char *json_path,
                               const char *expected, const json_t *found)
{
    if (!found)
        return trn_error_set(err, TRN_ERR_JSON, path, -1, "%s: missing, expected %s", json_path,
                             expected);
    return trn_error_set(err, TRN_ERR_JSON, path, -1, "%s: expected %s, found %s", json_path,
                         expected, trn_lvl_json_kind(found));
}

static trn_status get_whole(const json_t *obj, const char *key, uint64_t max, uint64_t *out,
                            const char *path, trn_error *err)
{
    const json_t *v = json_object_get(obj, key);
    double d;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0 || (uint64_t)i > max)
            return trn_error_set(err, TRN_ERR_JSON, path, -1,
                                 "%s: %lld is out of range (0 to %llu)", key, (long long)i,
                                 (unsigned long long)max);
        *out = (uint64_t)i;
        return TRN_OK;
    }
    if (json_is_real(v)) {
        d = json_real_value(v);
        /* Range-check as integers: (double)max rounds up (2^63 - 1 becomes 2^63), so comparing
         * doubles let 2^63 in, which then wrapped negative when written back. */
        if (d == floor(d) && d >= 0 && d < 18446744073709551616.0 && (uint64_t)d <= max) {
            *out = (uint64_t)d;
            return TRN_OK;
        }
    }
    return schema_error(err, path, key, "a whole number", v);
}

static trn_status get_string(const json_t *obj, const char *key, bool required, char **out,
                             const char *path, trn_error *err)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v && !required) return TRN_OK;
    if (!json_is_string(v)) return schema_error(err, path, key, "a string", v);
    *out = trn_lvl_strdup(json_string_value(v));
    return *out ? TRN_OK : oom(err, path);
}

trn_status trn_terrain_json_parse(const char *text, size_t text_size, const char *path,
                                  trn_terrain_json *tj, trn_error *err)
{
    memset(tj, 0, sizeof *tj);
    json_error_t je;
    size_t bom = trn_lvl_bom_length(text, text_size);
    json_t *root = json_loadb(text + bom, text_size - bom, 0, &je);
    if (!root) return trn_lvl_json_syntax_error(err, path, &je, 0, bom);
    trn_status st = TRN_OK;
    uint64_t v = 0;
    if (!json_is_object(root)) {
        st = schema_error(err, path, "$", "an object", root);
        goto done;
    }
    if ((st = get_whole(root, "version", 255, &v, path, err))) goto done;
    tj->version = (uint32_t)v;
    if ((st = get_whole(root, "size", UINT32_MAX, &v, path, err))) goto done;
    tj->size = (uint32_t)v;
    if ((st = get_string(root, "datafile", true, &tj->datafile, path, err))) goto done;
    if ((st = get_string(root, "heightmapImage", false, &tj->heightmap_image, path, err)))
        goto done;
    if ((st = get_string(root, "binaryFormat", false, &tj->binary_format, path, err))) goto done;
    if ((st = get_whole(root, "heightMapSize", UINT64_MAX >> 1, &tj->height_map_size, path, err)))
        goto done;
    if ((st = get_whole(root, "heightMapItemSize", UINT32_MAX, &v, path, err))) goto done;
    tj->height_map_item_size = (uint32_t)v;
    if ((st = get_whole(root, "layerMapSize", UINT64_MAX >> 1, &tj->layer_map_size, path, err)))
        goto done;
    if ((st = get_whole(root, "layerMapItemSize", UINT32_MAX, &v, path, err))) goto done;
    tj->layer_map_item_size = (uint32_t)v;
    const json_t *mats = json_object_get(root, "materials");
    if (!json_is_array(mats)) {
        st = schema_error(err, path, "materials", "an array of names", mats);
        goto done;
    }
    size_t n = json_array_size(mats);
    if (n > UINT32_MAX) {
        st = trn_error_set(err, TRN_ERR_LIMIT, path, -1, "materials: too many entries");
        goto done;
    }
    if (n) {
        tj->materials = calloc(n, sizeof(char *));
        if (!tj->materials) {
            st = oom(err, path);
            goto done;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(mats, i);
        if (!json_is_string(s)) {
            char where[64];
            snprintf(where, sizeof where, "materials[%zu]", i);
            st = schema_error(err, path, where, "a string", s);
            goto done;
        }
        tj->materials[i] = trn_lvl_strdup(json_string_value(s));
        if (!tj->materials[i]) {
            st = oom(err, path);
            goto done;
        }
        tj->material_count = (uint32_t)(i + 1);
    }
done:
    json_decref(root);
    if (st) trn_terrain_json_dispose(tj);
    return st;
}

trn_status trn_terrain_json_read(const char *path, trn_terrain_json *tj, trn_error *err)
{
    memset(tj, 0, sizeof *tj);
    uint8_t *data;
    size_t n;
    trn_status st = trn_file_read_all(path, JSON_MAX_BYTES, &data, &n, err);
    if (st) return st;
    st = trn_terrain_json_parse((const char *)data, n, path, tj, err);
    free(data);
    return st;
}

trn_status trn_terrain_json_compare(const trn_terrain_json *tj, const char *json_path,
                                    const trn_ter *ter, const char *ter_path,
                                    const char *expected_datafile, trn_findings *findings,
                                    size_t *mismatches, trn_error *err)
{
    size_t before = findings->count;
    const char *jp = json_path ? json_path : "";
    const char *tp = ter_path ? ter_path : "the .ter";
    const char *fix = "rewrite it from the .ter: terrane beamng validate LEVEL_DIR "
                      "--fix-terrain-json (or resave the terrain in the World Editor)";
    const char *check = "terrain-json-mismatch";
    trn_status st = TRN_OK;
    uint64_t samples = (uint64_t)ter->size * ter->size;
#define MISMATCH(...)                                                                              \
    do {                                                                                           \
        if (trn_findings_add(findings, TRN_SEVERITY_WARNING, check, jp, -1, fix, __VA_ARGS__))     \
            st = TRN_ERR_NO_MEMORY;                                                                \
    } while (0)
    if (tj->version != ter->version)
        MISMATCH("version is %u but %s has version %u", tj->version, tp, ter->version);
    if (tj->size != ter->size)
        MISMATCH("size is %u but %s is %u x %u", tj->size, tp, ter->size, ter->size);
    if (tj->height_map_size != samples)
        MISMATCH("heightMapSize is %llu but %s has %llu height samples (size x size)",
                 (unsigned long long)tj->height_map_size, tp, (unsigned long long)samples);
    if (tj->height_map_item_size != 2)
        MISMATCH("heightMapItemSize is %u but heights are 2-byte values", tj->height_map_item_size);
    if (tj->layer_map_size != samples)
        MISMATCH("layerMapSize is %llu but %s has %llu layer samples (size x size)",
                 (unsigned long long)tj->layer_map_size, tp, (unsigned long long)samples);
    if (tj->layer_map_item_size != 1)
        MISMATCH("layerMapItemSize is %u but layer indices are 1-byte values",
                 tj->layer_map_item_size);
    if (tj->binary_format && strcmp(tj->binary_format, TRN_TERRAIN_JSON_BINARY_FORMAT) != 0) {
        /* Documentation only; the engine never reads it, so this is not worth a warning. */
        if (trn_findings_add(findings, TRN_SEVERITY_INFO, check, jp, -1, fix,
                             "binaryFormat differs from the engine's description of the layout"))
            st = TRN_ERR_NO_MEMORY;
    }
    if (tj->material_count != ter->material_count)
        MISMATCH("lists %u materials but %s has %u", tj->material_count, tp, ter->material_count);
    uint32_t common =
        tj->material_count < ter->material_count ? tj->material_count : ter->material_count;
    for (uint32_t i = 0; i < common; i++) {
        const char *a = tj->materials[i], *b = ter->materials[i] ? ter->materials[i] : "";
        if (strcmp(a, b) != 0)
            MISMATCH("materials[%u] is \"%s\" but %s has \"%s\" there (material order matters: "
                     "layer indices point into this list)",
                     i, a, tp, b);
    }
    for (uint32_t i = common; i < tj->material_count; i++)
        MISMATCH("materials[%u] \"%s\" is not in %s", i, tj->materials[i], tp);
    for (uint32_t i = common; i < ter->material_count; i++)
        MISMATCH("%s has material %u \"%s\" that materials does not list", tp, i,
                 ter->materials[i] ? ter->materials[i] : "");
    const char *df = tj->datafile ? tj->datafile : "";
    if (expected_datafile) {
        if (strcmp(df, expected_datafile) != 0)
            MISMATCH("datafile is \"%s\" but the terrain file is \"%s\"", df, expected_datafile);
    } else if (ter_path && strcmp(trn_lvl_basename(df), trn_lvl_basename(ter_path)) != 0) {
        MISMATCH("datafile names \"%s\" but the checked file is \"%s\"", trn_lvl_basename(df),
                 trn_lvl_basename(ter_path));
    }
#undef MISMATCH
    if (mismatches) *mismatches = findings->count - before;
    if (st) return oom(err, jp);
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * TerrainBlock
 * ---------------------------------------------------------------------------------------- */

void trn_terrain_block_center(trn_terrain_block *tb, uint32_t size)
{
    tb->position[0] = -(double)size * tb->square_size / 2.0;
    tb->position[1] = -(double)size * tb->square_size / 2.0;
    tb->position[2] = 0.0;
}

static void block_defaults(trn_terrain_block *tb)
{
    memset(tb, 0, sizeof *tb);
    tb->square_size = 1.0;
    tb->max_height = 2048.0;
    tb->screen_error = 16.0;
    tb->cast_shadows = true;
    tb->rotation_matrix[0] = tb->rotation_matrix[4] = tb->rotation_matrix[8] = 1.0;
}

trn_status trn_terrain_block_init(trn_terrain_block *tb, const char *name, const char *terrain_file,
                                  const char *texture_set, uint32_t size, trn_error *err)
{
    block_defaults(tb);
    tb->name = trn_lvl_strdup(name ? name : "theTerrain");
    tb->terrain_file = trn_lvl_strdup(terrain_file ? terrain_file : "");
    tb->material_texture_set = trn_lvl_strdup(texture_set);
    if (!tb->name || !tb->terrain_file || (texture_set && !tb->material_texture_set)) {
        trn_terrain_block_dispose(tb);
        return oom(err, NULL);
    }
    trn_terrain_block_center(tb, size);
    return TRN_OK;
}

void trn_terrain_block_dispose(trn_terrain_block *tb)
{
    if (!tb) return;
    free(tb->name);
    free(tb->terrain_file);
    free(tb->material_texture_set);
    free(tb->persistent_id);
    free(tb->parent);
    free(tb->source_file);
    memset(tb, 0, sizeof *tb);
}

void trn_terrain_blocks_free(trn_terrain_block *blocks, size_t count)
{
    if (!blocks) return;
    for (size_t i = 0; i < count; i++)
        trn_terrain_block_dispose(&blocks[i]);
    free(blocks);
}

/* Where a line of an items file is: its number and the byte offset of its first byte. */
typedef struct items_line {
    int no;
    size_t start;
} items_line;

static trn_status block_error(trn_error *err, const char *path, items_line line, const char *key,
                              const char *expected, const json_t *found)
{
    trn_error_set(err, TRN_ERR_JSON, path, (int64_t)line.start,
                  "TerrainBlock.%s: expected %s, found %s", key, expected,
                  trn_lvl_json_kind(found));
    trn_error_set_position(err, line.no, 1);
    return TRN_ERR_JSON;
}

static trn_status block_number(const json_t *obj, const char *key, double *out, const char *path,
                               items_line line, trn_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (!v) return TRN_OK;
    if (!trn_lvl_json_get_number(v, out)) return block_error(err, path, line, key, "a number", v);
    return TRN_OK;
}

/* Vectors are arrays of numbers, or space-separated strings in Torque-converted levels. */
static trn_status block_vector(const json_t *obj, const char *key, double *out, size_t n,
                               const char *path, items_line line, trn_error *err)
{
    const json_t *v = json_object_get(obj, key);
    char expected[48];
    snprintf(expected, sizeof expected, "an array of %zu numbers", n);
    if (!v) return TRN_OK;
    if (json_is_array(v)) {
        if (json_array_size(v) != n) return block_error(err, path, line, key, expected, v);
        for (size_t i = 0; i < n; i++)
            if (!trn_lvl_json_get_number(json_array_get(v, i), &out[i]))
                return block_error(err, path, line, key, expected, v);
        return TRN_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        for (size_t i = 0; i < n; i++) {
            char *end;
            out[i] = strtod(s, &end);
            if (end == s || !isfinite(out[i]))
                return block_error(err, path, line, key, expected, v);
            s = end;
        }
        while (*s == ' ')
            s++;
        if (*s) return block_error(err, path, line, key, expected, v);
        return TRN_OK;
    }
    return block_error(err, path, line, key, expected, v);
}

static trn_status block_from_json(const json_t *obj, const char *path, items_line line,
                                  trn_terrain_block *tb, trn_error *err)
{
    block_defaults(tb);
    tb->source_line = line.no;
    tb->source_file = trn_lvl_strdup(path ? path : "");
    if (!tb->source_file) return oom(err, path);
    const json_t *v = json_object_get(obj, "name");
    trn_status st = TRN_OK;
    if (v && !json_is_string(v)) {
        st = block_error(err, path, line, "name", "a string", v);
        goto fail;
    }
    tb->name = trn_lvl_strdup(v ? json_string_value(v) : "");
    v = json_object_get(obj, "terrainFile");
    if (v && !json_is_string(v)) {
        st = block_error(err, path, line, "terrainFile", "a string", v);
        goto fail;
    }
    if (v) tb->terrain_file = trn_lvl_strdup(json_string_value(v));
    v = json_object_get(obj, "materialTextureSet");
    if (v && !json_is_string(v)) {
        st = block_error(err, path, line, "materialTextureSet", "a string", v);
        goto fail;
    }
    /* An empty materialTextureSet means none (v1 materials), as in the editor. */
    if (v && json_string_length(v) > 0)
        tb->material_texture_set = trn_lvl_strdup(json_string_value(v));
    if (!tb->name || (json_is_string(json_object_get(obj, "terrainFile")) && !tb->terrain_file)) {
        st = oom(err, path);
        goto fail;
    }
    if ((st = block_number(obj, "squareSize", &tb->square_size, path, line, err))) goto fail;
    if ((st = block_number(obj, "maxHeight", &tb->max_height, path, line, err))) goto fail;
    if ((st = block_number(obj, "screenError", &tb->screen_error, path, line, err))) goto fail;
    v = json_object_get(obj, "castShadows");
    if (v) {
        double d;
        if (json_is_boolean(v))
            tb->cast_shadows = json_is_true(v);
        else if (json_is_string(v) && trn_lvl_ieq(json_string_value(v), "true"))
            tb->cast_shadows = true;
        else if (json_is_string(v) && trn_lvl_ieq(json_string_value(v), "false"))
            tb->cast_shadows = false;
        else if (trn_lvl_json_get_number(v, &d))
            tb->cast_shadows = d != 0.0;
        else {
            st = block_error(err, path, line, "castShadows", "true or false", v);
            goto fail;
        }
    }
    if ((st = block_vector(obj, "position", tb->position, 3, path, line, err))) goto fail;
    if ((st = block_vector(obj, "rotationMatrix", tb->rotation_matrix, 9, path, line, err)))
        goto fail;
    /* Bookkeeping of the editor: taken when it is a string, never a reason to drop the block. */
    v = json_object_get(obj, "persistentId");
    if (json_is_string(v) && !(tb->persistent_id = trn_lvl_strdup(json_string_value(v)))) {
        st = oom(err, path);
        goto fail;
    }
    v = json_object_get(obj, "__parent");
    if (json_is_string(v) && !(tb->parent = trn_lvl_strdup(json_string_value(v)))) {
        st = oom(err, path);
        goto fail;
    }
    return TRN_OK;
fail:
    trn_terrain_block_dispose(tb);
    return st;
}

/* True when the k bytes of needle occur in the n bytes at s (memmem is not in C11 or POSIX). */
static bool mem_contains_n(const char *s, size_t n, const char *needle, size_t k)
{
    if (!k) return true;
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (s[i] == needle[0] && memcmp(s + i, needle, k) == 0) return true;
    return false;
}

static bool mem_contains(const char *s, size_t n, const char *needle)
{
    return mem_contains_n(s, n, needle, strlen(needle));
}

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)s[i])) return false;
    return true;
}

/* Parse one NDJSON line; syntax errors carry the file's line number and the byte offset. */
static json_t *parse_line(const char *s, size_t n, size_t line_start, int line_no, const char *path,
                          trn_error *err)
{
    json_error_t je;
    json_t *v = json_loadb(s, n, 0, &je);
    if (!v) {
        trn_lvl_json_syntax_error(err, path, &je, line_no, line_start);
        return NULL;
    }
    if (!json_is_object(v)) {
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)line_start,
                      "each line must be one JSON object, found %s", trn_lvl_json_kind(v));
        trn_error_set_position(err, line_no, 1);
        json_decref(v);
        return NULL;
    }
    return v;
}

static bool is_terrain_block(const json_t *obj)
{
    const json_t *c = json_object_get(obj, "class");
    return json_is_string(c) && strcmp(json_string_value(c), "TerrainBlock") == 0;
}

static trn_status blocks_push(trn_terrain_block **blocks, size_t *count, size_t *cap,
                              trn_terrain_block *tb)
{
    if (*count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        trn_terrain_block *nb = realloc(*blocks, ncap * sizeof *nb);
        if (!nb) return TRN_ERR_NO_MEMORY;
        *blocks = nb;
        *cap = ncap;
    }
    (*blocks)[(*count)++] = *tb;
    return TRN_OK;
}

/* A syntax error from parse_line (not "each line must be one JSON object" or a field's type). */
static bool is_syntax_error(const trn_error *e)
{
    return strncmp(e->message, "invalid JSON", 12) == 0;
}

/* The fix hint for a bad line, from the reader's error. */
static void line_fix(const trn_error *e, char *fix, size_t n)
{
    /* "TerrainBlock.squareSize: expected a number, found a string" names the field. */
    static const char prefix[] = "TerrainBlock.";
    const char *colon = strchr(e->message, ':');
    size_t k = sizeof prefix - 1;
    if (strncmp(e->message, prefix, k) == 0 && colon && colon > e->message + k &&
        colon - e->message - (ptrdiff_t)k < 64)
        snprintf(fix, n,
                 "give %.*s a value of the expected type (numbers as JSON numbers, names and "
                 "paths as strings)",
                 (int)(colon - e->message - (ptrdiff_t)k), e->message + k);
    else
        snprintf(fix, n,
                 "make that line one complete JSON object: the engine reads items.level.json "
                 "line by line and skips a line it cannot read, so the object on it is missing "
                 "from the level");
}

/* A finding for a file or line the reader could not use (file, offset, line and, for syntax
 * errors, the column, from e). */
static trn_status add_problem(trn_findings *problems, const trn_error *e, const char *fix,
                              trn_error *err)
{
    if (trn_findings_add(problems, TRN_SEVERITY_ERROR, "level-items-invalid", e->file, e->offset,
                         fix, "%s", e->message))
        return oom(err, e->file);
    trn_finding *f = &problems->items[problems->count - 1];
    f->line = e->line;
    f->column = e->line > 0 && is_syntax_error(e) ? e->column : 0;
    return TRN_OK;
}

static trn_status items_parse_into(const char *text, size_t size, const char *items_path,
                                   trn_terrain_block **blocks, size_t *count, size_t *cap,
                                   trn_findings *problems, trn_error *err)
{
    /* Same bound as for files; it also keeps line numbers within an int. */
    if (size > ITEMS_MAX_BYTES)
        return trn_error_set(err, TRN_ERR_LIMIT, items_path, -1,
                             "items file of %zu bytes is larger than the %u-byte limit", size,
                             ITEMS_MAX_BYTES);
    trn_status st = TRN_OK;
    size_t pos = trn_lvl_bom_length(text, size);
    int line_no = 0;
    while (pos < size && st == TRN_OK) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        line_no++;
        if (!is_blank(text + pos, end - pos)) {
            /* Errors of this line go to le first: a bad line is a problem to report (or, with
             * no list, the error of the call); running out of memory always stops. */
            trn_error le;
            trn_error_clear(&le);
            items_line line = {line_no, pos};
            /* Without a CRLF file's '\r', so errors at the end of a line read the same in
             * both kinds of file (and after put adds a line ending to the last line). */
            size_t len = end - pos;
            if (text[end - 1] == '\r') len--;
            json_t *obj = parse_line(text + pos, len, pos, line_no, items_path, &le);
            if (obj && is_terrain_block(obj)) {
                trn_terrain_block tb;
                if (!block_from_json(obj, items_path, line, &tb, &le) &&
                    blocks_push(blocks, count, cap, &tb)) {
                    trn_terrain_block_dispose(&tb);
                    trn_error_set(&le, TRN_ERR_NO_MEMORY, items_path, -1, "out of memory");
                }
            }
            json_decref(obj);
            if (le.code == TRN_ERR_JSON && problems) {
                char fix[300];
                line_fix(&le, fix, sizeof fix);
                st = add_problem(problems, &le, fix, err);
            } else if (le.code != TRN_OK) {
                if (err) *err = le;
                st = le.code;
            }
        }
        pos = end + 1;
    }
    return st;
}

static trn_status items_read_into(const char *items_path, trn_terrain_block **blocks, size_t *count,
                                  size_t *cap, trn_findings *problems, trn_error *err)
{
    uint8_t *data;
    size_t size;
    trn_status st = trn_file_read_all(items_path, ITEMS_MAX_BYTES, &data, &size, err);
    if (st) return st;
    st = items_parse_into((const char *)data, size, items_path, blocks, count, cap, problems, err);
    free(data);
    return st;
}

trn_status trn_items_parse_terrain_blocks(const char *text, size_t text_size,
                                          const char *items_path, trn_terrain_block **blocks,
                                          size_t *count, trn_findings *problems, trn_error *err)
{
    *blocks = NULL;
    *count = 0;
    size_t cap = 0;
    trn_status st =
        items_parse_into(text, text_size, items_path, blocks, count, &cap, problems, err);
    if (st) {
        trn_terrain_blocks_free(*blocks, *count);
        *blocks = NULL;
        *count = 0;
    }
    return st;
}

trn_status trn_items_read_terrain_blocks(const char *items_path, trn_terrain_block **blocks,
                                         size_t *count, trn_findings *problems, trn_error *err)
{
    *blocks = NULL;
    *count = 0;
    size_t cap = 0;
    trn_status st = items_read_into(items_path, blocks, count, &cap, problems, err);
    if (st) {
        trn_terrain_blocks_free(*blocks, *count);
        *blocks = NULL;
        *count = 0;
    }
    return st;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static bool path_list_push(path_list *pl, const char *path)
{
    if (pl->count == pl->cap) {
        size_t ncap = pl->cap ? pl->cap * 2 : 8;
        char **ni = realloc(pl->items, ncap * sizeof *ni);
        if (!ni) return false;
        pl->items = ni;
        pl->cap = ncap;
    }
    char *d = trn_lvl_strdup(path);
    if (!d) return false;
    pl->items[pl->count++] = d;
    return true;
}

void trn_lvl_free_paths(char **paths, size_t count)
{
    if (!paths) return;
    for (size_t i = 0; i < count; i++)
        free(paths[i]);
    free(paths);
}

typedef bool (*name_pred)(const char *name);

/* Depth-first walk collecting regular files whose name matches; depth-limited against loops. */
static trn_status walk(const char *dir, name_pred pred, path_list *out, int depth, trn_error *err)
{
    if (depth > 32) return TRN_OK;
    DIR *d = opendir(dir);
    if (!d) return TRN_OK; /* an unreadable or vanished subfolder has nothing for us */
    struct dirent *e;
    trn_status st = TRN_OK;
    char child[PATH_MAX];
    while (st == TRN_OK && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (!trn_lvl_join(child, sizeof child, dir, e->d_name)) continue;
        struct stat st_buf;
        if (stat(child, &st_buf) != 0) continue;
        if (S_ISDIR(st_buf.st_mode))
            st = walk(child, pred, out, depth + 1, err);
        else if (S_ISREG(st_buf.st_mode) && pred(e->d_name) && !path_list_push(out, child))
            st = oom(err, dir);
    }
    closedir(d);
    return st;
}

static bool is_items_name(const char *name)
{
    return strcmp(name, "items.level.json") == 0;
}

/* As the game's level loader picks them (lua/ge/server/server.lua: "*materials.json" anywhere
 * under the level folder): main.materials.json, materials.json, terrainmaterials.json, ... */
static bool is_materials_name(const char *name)
{
    size_t n = strlen(name);
    static const char suffix[] = "materials.json";
    size_t sn = sizeof suffix - 1;
    return n >= sn && strcmp(name + n - sn, suffix) == 0;
}

static trn_status collect(const char *dir, name_pred pred, char ***paths, size_t *count,
                          trn_error *err)
{
    path_list pl = {0};
    trn_status st = walk(dir, pred, &pl, 0, err);
    if (st) {
        trn_lvl_free_paths(pl.items, pl.count);
        return st;
    }
    if (pl.count > 1) qsort(pl.items, pl.count, sizeof *pl.items, cmp_str);
    *paths = pl.items;
    *count = pl.count;
    return TRN_OK;
}

trn_status trn_lvl_items_files(const char *level_dir, char ***paths, size_t *count, trn_error *err)
{
    *paths = NULL;
    *count = 0;
    char main_dir[PATH_MAX];
    if (!trn_lvl_join(main_dir, sizeof main_dir, level_dir, "main"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    return collect(main_dir, is_items_name, paths, count, err);
}

trn_status trn_lvl_items_append_text(const char *text, size_t text_size, const char *items_path,
                                     const json_t *obj, char **out_text, size_t *out_size,
                                     trn_error *err)
{
    *out_text = NULL;
    if (out_size) *out_size = 0;
    size_t size = text ? text_size : 0;
    trn_lvl_buf out = {0};
    size_t bom = trn_lvl_bom_length(text, size);
    /* Line endings follow the file's first line, as put does. */
    const char *nl = size ? memchr(text, '\n', size) : NULL;
    bool crlf = nl && nl > text + bom && nl[-1] == '\r';
    trn_lvl_buf_append(&out, text, size);
    if (out.len > bom && out.data[out.len - 1] != '\n')
        trn_lvl_buf_puts(&out, crlf && out.data[out.len - 1] != '\r' ? "\r\n" : "\n");
    json_write(&out, obj, 0, false);
    trn_lvl_buf_puts(&out, crlf ? "\r\n" : "\n");
    if (out.failed || !out.data) {
        trn_lvl_buf_free(&out);
        return oom(err, items_path);
    }
    *out_text = out.data;
    if (out_size) *out_size = out.len;
    return TRN_OK;
}

/* What the game's level loader (lua/ge/server/server.lua) picks out of the files it finds under
 * the level folder: "*data.json" files whose path holds "Data.json" and "*datablocks.json" files
 * are loaded as datablocks, and every ".cs" file is executed. */
static bool is_datablock_name(const char *name)
{
    size_t n = strlen(name);
    return (n >= 9 && strcmp(name + n - 9, "Data.json") == 0) ||
           (n >= 15 && strcmp(name + n - 15, "datablocks.json") == 0) ||
           (n > 3 && strcasecmp(name + n - 3, ".cs") == 0);
}

trn_status trn_lvl_datablock_files(const char *level_dir, char ***paths, size_t *count,
                                   trn_error *err)
{
    *paths = NULL;
    *count = 0;
    return collect(level_dir, is_datablock_name, paths, count, err);
}

trn_status trn_lvl_material_files(const char *level_dir, char ***paths, size_t *count,
                                  trn_error *err)
{
    *paths = NULL;
    *count = 0;
    return collect(level_dir, is_materials_name, paths, count, err);
}

trn_status trn_level_find_terrain_blocks(const char *level_dir, trn_terrain_block **blocks,
                                         size_t *count, trn_findings *problems, trn_error *err)
{
    *blocks = NULL;
    *count = 0;
    if (!trn_lvl_is_dir(level_dir))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, level_dir, -1, "level folder not found");
    char main_dir[PATH_MAX];
    if (!trn_lvl_join(main_dir, sizeof main_dir, level_dir, "main"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    char **paths = NULL;
    size_t n = 0, cap = 0;
    trn_status st = collect(main_dir, is_items_name, &paths, &n, err);
    for (size_t i = 0; st == TRN_OK && i < n; i++) {
        trn_error fe;
        trn_error_clear(&fe);
        size_t before = *count;
        st = items_read_into(paths[i], blocks, count, &cap, problems, &fe);
        if (st && problems && st != TRN_ERR_NO_MEMORY) {
            /* A file that cannot be read at all is one problem; the other files still count. */
            for (size_t k = before; k < *count; k++)
                trn_terrain_block_dispose(&(*blocks)[k]);
            *count = before;
            st = add_problem(problems, &fe,
                             "make the file readable (permissions, a complete copy) and under "
                             "1 GiB; the engine cannot load the objects in it either",
                             err);
        } else if (st && err) {
            *err = fe;
        }
    }
    trn_lvl_free_paths(paths, n);
    if (st) {
        trn_terrain_blocks_free(*blocks, *count);
        *blocks = NULL;
        *count = 0;
    }
    return st;
}

/* Set our managed keys on obj (existing keys keep their place; new ones are appended in the
 * seed's order). */
/* Whether a managed key may be left out of obj: obj is a line being replaced (sparse), it
 * does not have the key, and the value is the one a reader takes for a missing key. The World
 * Editor leaves out fields at their defaults, and a line it wrote keeps that form. */
static bool leave_out(const json_t *obj, bool sparse, const char *key, bool is_default)
{
    return sparse && is_default && !json_object_get(obj, key);
}

static bool block_to_json(const trn_terrain_block *tb, json_t *obj, bool sparse)
{
    static const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    json_t *pos = json_array(), *rot = json_array();
    bool ok = pos && rot;
    for (int i = 0; ok && i < 3; i++)
        ok = !json_array_append_new(pos, trn_lvl_json_number(tb->position[i]));
    for (int i = 0; ok && i < 9; i++)
        ok = !json_array_append_new(rot, trn_lvl_json_number(tb->rotation_matrix[i]));
    ok = ok && !json_object_set_new(obj, "class", json_string("TerrainBlock"));
    ok = ok && !json_object_set_new(obj, "name", json_string(tb->name ? tb->name : ""));
    ok = ok && !json_object_set_new(obj, "terrainFile",
                                    json_string(tb->terrain_file ? tb->terrain_file : ""));
    if (tb->material_texture_set && tb->material_texture_set[0])
        ok = ok &&
             !json_object_set_new(obj, "materialTextureSet", json_string(tb->material_texture_set));
    else
        json_object_del(obj, "materialTextureSet");
    if (!leave_out(obj, sparse, "squareSize", tb->square_size == 1.0))
        ok = ok && !json_object_set_new(obj, "squareSize", trn_lvl_json_number(tb->square_size));
    if (!leave_out(obj, sparse, "maxHeight", tb->max_height == 2048.0))
        ok = ok && !json_object_set_new(obj, "maxHeight", trn_lvl_json_number(tb->max_height));
    /* No TerrainBlock in the public levels the World Editor saved holds these three at their
     * defaults, so a new line leaves them out too; squareSize and maxHeight are always written
     * on a new line (the values the heights were made for). */
    if (!leave_out(obj, true, "screenError", tb->screen_error == 16.0))
        ok = ok && !json_object_set_new(obj, "screenError", trn_lvl_json_number(tb->screen_error));
    if (!leave_out(obj, true, "castShadows", tb->cast_shadows))
        ok = ok && !json_object_set_new(obj, "castShadows", json_boolean(tb->cast_shadows));
    ok = ok && !json_object_set(obj, "position", pos);
    if (!leave_out(obj, true, "rotationMatrix",
                   memcmp(tb->rotation_matrix, identity, sizeof identity) == 0))
        ok = ok && !json_object_set(obj, "rotationMatrix", rot);
    json_decref(pos);
    json_decref(rot);
    return ok;
}

/* The object a new block line starts from: the editor's leading keys (name, class,
 * persistentId, __parent, position) when tb carries the editor's bookkeeping, else none (the
 * keys then follow block_to_json's order, class first). */
static json_t *new_block_object(const trn_terrain_block *tb)
{
    json_t *obj = json_object();
    if (!obj || (!tb->persistent_id && !tb->parent)) return obj;
    bool ok = !json_object_set_new(obj, "name", json_string(tb->name ? tb->name : ""));
    ok = ok && !json_object_set_new(obj, "class", json_string("TerrainBlock"));
    if (tb->persistent_id)
        ok = ok && !json_object_set_new(obj, "persistentId", json_string(tb->persistent_id));
    if (tb->parent) ok = ok && !json_object_set_new(obj, "__parent", json_string(tb->parent));
    ok = ok && !json_object_set_new(obj, "position", json_null());
    if (!ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* The parent folder of path (for mkdir -p); false when path has none. */
static bool parent_dir(const char *path, char *out, size_t out_size)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return false;
    size_t n = (size_t)(slash - path);
    if (n >= out_size) return false;
    memcpy(out, path, n);
    out[n] = '\0';
    return true;
}

trn_status trn_items_put_terrain_block_text(const char *text, size_t text_size,
                                            const char *items_path, const trn_terrain_block *tb,
                                            char **out_text, size_t *out_size, trn_error *err)
{
    *out_text = NULL;
    if (out_size) *out_size = 0;
    if (!tb || !tb->name || !tb->name[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, items_path, -1,
                             "a TerrainBlock needs a name to be put into items.level.json");
    size_t size = text ? text_size : 0;
    trn_lvl_buf out = {0};
    bool replaced = false, crlf = false;
    /* A byte order mark is kept as it is, in front of the first line. */
    size_t bom = trn_lvl_bom_length(text, size), pos = bom;
    trn_lvl_buf_append(&out, text, bom);
    int line_no = 0;
    /* The first line that is not valid JSON yet may be a block of this name (see the header). */
    int suspect_line = 0;
    size_t suspect_start = 0;
    json_error_t suspect_je;
    memset(&suspect_je, 0, sizeof suspect_je);
    /* The name as a JSON string without escapes; a name that needs them puts a backslash in
     * the line, and such lines are suspect anyway. */
    trn_lvl_buf quoted = {0};
    trn_lvl_buf_printf(&quoted, "\"%s\"", tb->name);
    if (quoted.failed) return oom(err, items_path);
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        size_t next = nl ? end + 1 : size;
        line_no++;
        if (line_no == 1 && nl && end > pos && text[end - 1] == '\r') crlf = true;
        bool handled = false;
        size_t len = end - pos;
        size_t body = (len && text[end - 1] == '\r') ? len - 1 : len;
        /* Only lines that mention TerrainBlock can be ours; others are copied untouched and
         * never parsed, so an odd line elsewhere cannot stop us. The reader takes JSON escapes
         * ("Terrain\u0042lock"), so a line with a backslash is looked at too: skipping it made
         * a second block of the same name instead of replacing this one. */
        if (!replaced && body &&
            (mem_contains(text + pos, body, "TerrainBlock") || memchr(text + pos, '\\', body))) {
            json_error_t je;
            json_t *obj = json_loadb(text + pos, body, 0, &je);
            const json_t *name = obj ? json_object_get(obj, "name") : NULL;
            bool has_escape = memchr(text + pos, '\\', body) != NULL;
            if (!obj && !suspect_line && !is_blank(text + pos, body) &&
                (has_escape || mem_contains_n(text + pos, body, quoted.data, quoted.len))) {
                suspect_line = line_no;
                suspect_start = pos;
                suspect_je = je;
            }
            if (obj && json_is_object(obj) && is_terrain_block(obj) && json_is_string(name) &&
                strcmp(json_string_value(name), tb->name) == 0) {
                if (!block_to_json(tb, obj, true)) {
                    json_decref(obj);
                    trn_lvl_buf_free(&out);
                    trn_lvl_buf_free(&quoted);
                    return oom(err, items_path);
                }
                json_write(&out, obj, 0, false);
                trn_lvl_buf_append(&out, text + pos + body, next - pos - body);
                replaced = handled = true;
            }
            json_decref(obj);
        }
        if (!handled) trn_lvl_buf_append(&out, text + pos, next - pos);
        pos = next;
    }
    trn_lvl_buf_free(&quoted);
    if (!replaced && suspect_line) {
        trn_lvl_buf_free(&out);
        trn_error_set(err, TRN_ERR_JSON, items_path,
                      (int64_t)suspect_start +
                          (suspect_je.position > 0 ? suspect_je.position - 1 : 0),
                      "line %d is not valid JSON (%s) and mentions TerrainBlock and \"%s\": it "
                      "may be that block, so another one is not added; fix or remove the line "
                      "first, or two blocks of the name would be left once it is fixed",
                      suspect_line, suspect_je.text, tb->name);
        trn_error_set_position(err, suspect_line, suspect_je.column > 0 ? suspect_je.column : 1);
        return TRN_ERR_JSON;
    }
    if (!replaced) {
        /* End the last line first; one that stops at a '\r' only needs the '\n' (another
         * "\r\n" would leave a stray '\r' on that line). */
        if (out.len > bom && out.data[out.len - 1] != '\n')
            trn_lvl_buf_puts(&out, crlf && out.data[out.len - 1] != '\r' ? "\r\n" : "\n");
        json_t *obj = new_block_object(tb);
        if (!obj || !block_to_json(tb, obj, false)) {
            json_decref(obj);
            trn_lvl_buf_free(&out);
            return oom(err, items_path);
        }
        json_write(&out, obj, 0, false);
        json_decref(obj);
        trn_lvl_buf_puts(&out, crlf ? "\r\n" : "\n");
    }
    if (out.failed || !out.data) {
        trn_lvl_buf_free(&out);
        return oom(err, items_path);
    }
    *out_text = out.data;
    if (out_size) *out_size = out.len;
    return TRN_OK;
}

trn_status trn_lvl_items_check_put(const trn_write_set *ws, const char *items_path,
                                   const char *name, trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(trn_write_set_current(ws, items_path), ITEMS_MAX_BYTES, &data,
                                      &size, err);
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        return TRN_OK;
    }
    if (st) return st;
    trn_terrain_block tb;
    memset(&tb, 0, sizeof tb);
    tb.name = (char *)name; /* only read; never disposed */
    char *text = NULL;
    st = trn_items_put_terrain_block_text((const char *)data, size, items_path, &tb, &text, NULL,
                                          err);
    free(text);
    free(data);
    return st;
}

trn_status trn_items_put_terrain_block(const char *items_path, const trn_terrain_block *tb,
                                       trn_error *err)
{
    return trn_lvl_items_put(NULL, items_path, tb, err);
}

trn_status trn_lvl_items_put(trn_write_set *ws, const char *items_path, const trn_terrain_block *tb,
                             trn_error *err)
{
    if (!tb || !tb->name || !tb->name[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, items_path, -1,
                             "a TerrainBlock needs a name to be put into items.level.json");
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(trn_write_set_current(ws, items_path), ITEMS_MAX_BYTES, &data,
                                      &size, err);
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        data = NULL;
        size = 0;
        st = TRN_OK;
        char dir[PATH_MAX];
        if (parent_dir(items_path, dir, sizeof dir) && (st = trn_mkdir_p(dir, err))) return st;
    }
    if (st) return st;
    char *text = NULL;
    size_t n = 0;
    st = trn_items_put_terrain_block_text((const char *)data, size, items_path, tb, &text, &n, err);
    free(data);
    const char *target = NULL;
    if (!st) st = trn_write_target(ws, items_path, &target, err);
    if (!st) st = trn_file_write_atomic(target, text, n, err);
    free(text);
    return st;
}
