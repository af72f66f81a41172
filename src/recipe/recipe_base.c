/* The recipe model's ground floor, beneath validation, canonical text and the graph's nodes:
 * text buffers and number text, the canonical JSON emitter, field ranges and key tables, and
 * lookups in a parsed recipe (landforms, biomes, sea level). */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "core/numtext.h"
#include "core/json_fields.h"
#include "recipe/recipe_internal.h"

/* ---- text buffers, numbers, canonical JSON ---- */

void trn_rcp_buf_put(trn_rcp_buf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (b->hash) {
        if (b->len + n > b->cap) {
            trn_rcp_buf_flush(b);
            if (n > b->cap) {
                XXH64_update(b->hash, s, n);
                return;
            }
        }
        memcpy(b->data + b->len, s, n);
        b->len += n;
        return;
    }
    if (n > SIZE_MAX - b->len - 1) {
        b->failed = true;
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap = cap > SIZE_MAX / 2 ? b->len + n + 1 : cap * 2;
        char *grown = realloc(b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void trn_rcp_buf_puts(trn_rcp_buf *b, const char *s)
{
    trn_rcp_buf_put(b, s, strlen(s));
}

void trn_rcp_buf_flush(trn_rcp_buf *b)
{
    if (b->hash && b->len) XXH64_update(b->hash, b->data, b->len);
    b->len = 0;
}

void trn_rcp_buf_free(trn_rcp_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

double trn_rcp_parse_double(const char *text)
{
    return trn_text_double(text);
}

/* Canonical text never holds a non-finite number: they print as 0 (validation refuses them). */
void trn_rcp_format_double(double v, char out[40])
{
    trn_double_text(isfinite(v) ? v : 0.0, out);
}

void trn_rcp_format_float(float v, char out[40])
{
    trn_float_text(isfinite(v) ? v : 0.0f, out);
}

static void emit_string(trn_rcp_buf *b, const char *s, size_t n)
{
    trn_rcp_buf_put(b, "\"", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        char hex[8];
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (c < 0x20) {
                snprintf(hex, sizeof hex, "\\u%04x", c);
                esc = hex;
            }
        }
        if (esc) {
            trn_rcp_buf_put(b, s + i - run, run);
            run = 0;
            trn_rcp_buf_puts(b, esc);
        } else {
            run++;
        }
    }
    trn_rcp_buf_put(b, s + n - run, run);
    trn_rcp_buf_put(b, "\"", 1);
}

/* jansson's test of a string a tree may hold: UTF-8 without overlong forms, surrogates or code
 * points past U+10FFFF. */
static bool utf8_ok(const unsigned char *s)
{
    while (*s) {
        const unsigned c = *s;
        size_t n;
        unsigned cp;
        if (c < 0x80) {
            s++;
            continue;
        } else if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
            cp = c & 0x1F;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            cp = c & 0x0F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        for (size_t i = 1; i < n; i++) {
            if ((s[i] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i] & 0x3F);
        }
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (n == 3 && cp < 0x800) ||
            (n == 4 && cp < 0x10000))
            return false;
        s += n;
    }
    return true;
}

void trn_rcp_emit_text(trn_rcp_buf *b, const char *s)
{
    if (!s || !utf8_ok((const unsigned char *)s)) {
        b->failed = true;
        return;
    }
    emit_string(b, s, strlen(s));
}

static int cmp_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void newline(trn_rcp_buf *b, int indent, int level)
{
    trn_rcp_buf_put(b, "\n", 1);
    for (int k = 0; k < indent * level; k++)
        trn_rcp_buf_put(b, " ", 1);
}

static bool scalars_only(const json_t *arr)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *e = json_array_get(arr, i);
        if (json_is_object(e) || json_is_array(e)) return false;
    }
    return true;
}

/* sorted: object keys bytewise (canonical) or in document order (documents rewritten for
 * people, such as terrane compact's). Unsorted, arrays of [x, z] pairs stay on one line. */
static void emit_json(trn_rcp_buf *b, const json_t *v, int indent, int level, bool sorted)
{
    char num[40];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v);
        if (n == 0) {
            trn_rcp_buf_put(b, "{}", 2);
            return;
        }
        const char **keys = malloc(n * sizeof *keys);
        if (!keys) {
            b->failed = true;
            return;
        }
        size_t k = 0;
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)v, key, val)
        {
            if (k < n) keys[k++] = key;
        }
        if (sorted) qsort(keys, k, sizeof *keys, cmp_keys);
        trn_rcp_buf_put(b, "{", 1);
        for (size_t i = 0; i < k; i++) {
            if (i) trn_rcp_buf_put(b, ",", 1);
            if (indent) newline(b, indent, level + 1);
            emit_string(b, keys[i], strlen(keys[i]));
            trn_rcp_buf_put(b, indent ? ": " : ":", indent ? 2 : 1);
            emit_json(b, json_object_get(v, keys[i]), indent, level + 1, sorted);
        }
        if (indent) newline(b, indent, level);
        trn_rcp_buf_put(b, "}", 1);
        free(keys);
        return;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(v);
        bool flat = true;
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(v, i);
            if (json_is_object(e) || (json_is_array(e) && (sorted || !scalars_only(e))))
                flat = false;
        }
        trn_rcp_buf_put(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) trn_rcp_buf_put(b, ",", 1);
            if (indent && flat && i) trn_rcp_buf_put(b, " ", 1);
            if (indent && !flat) newline(b, indent, level + 1);
            emit_json(b, json_array_get(v, i), indent, level + 1, sorted);
        }
        if (indent && !flat && n) newline(b, indent, level);
        trn_rcp_buf_put(b, "]", 1);
        return;
    }
    case JSON_STRING:
        emit_string(b, json_string_value(v), json_string_length(v));
        return;
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        trn_rcp_buf_puts(b, num);
        return;
    case JSON_REAL:
        trn_rcp_format_double(json_real_value(v), num);
        trn_rcp_buf_puts(b, num);
        return;
    case JSON_TRUE:
        trn_rcp_buf_put(b, "true", 4);
        return;
    case JSON_FALSE:
        trn_rcp_buf_put(b, "false", 5);
        return;
    case JSON_NULL:
        trn_rcp_buf_put(b, "null", 4);
        return;
    }
}

void trn_rcp_emit_json(trn_rcp_buf *b, const json_t *v, int indent, int level)
{
    emit_json(b, v, indent, level, true);
}

void trn_rcp_emit_json_in_order(trn_rcp_buf *b, const json_t *v, int indent, int level)
{
    emit_json(b, v, indent, level, false);
}

char *trn_rcp_canonical_text(const json_t *v)
{
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    trn_rcp_emit_json(&b, v, 0, 0);
    if (b.failed) {
        trn_rcp_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* ---- field ranges, defaults, key tables ---- */

enum { LO_OPEN = TRN_DOC_LO_OPEN, WHOLE = TRN_DOC_WHOLE };

/* Indexed by trn_rcp_num. */
static const trn_doc_range num_specs[TRN_NUM_COUNT] = {
    [TRN_NUM_SIZE] = {0, TRN_RCP_MAX_MAGNITUDE, LO_OPEN, "a number > 0 and <= 1e9"},
    [TRN_NUM_CELLS] = {1, TRN_RCP_MAX_CELLS, WHOLE, "a whole number 1..65536"},
    [TRN_NUM_SEED] = {0, 9223372036854775807.0, WHOLE, "a whole number 0..9223372036854775807"},
    [TRN_NUM_CHUNK_CELLS] = {1, TRN_RCP_MAX_CELLS, WHOLE, "a whole number 1..65536"},
    [TRN_NUM_SEA_LEVEL] = {-TRN_RCP_MAX_MAGNITUDE, TRN_RCP_MAX_MAGNITUDE, 0,
                           "a number from -1e9 to 1e9"},
    [TRN_NUM_SNOW_LINE] = {-TRN_RCP_MAX_MAGNITUDE, TRN_RCP_MAX_MAGNITUDE, 0,
                           "a number from -1e9 to 1e9"},
    [TRN_NUM_BASE_HEIGHT] = {-TRN_RCP_MAX_MAGNITUDE, TRN_RCP_MAX_MAGNITUDE, 0,
                             "a number from -1e9 to 1e9"},
    [TRN_NUM_HEIGHT_VARIATION] = {0, TRN_RCP_MAX_MAGNITUDE, 0, "a number from 0 to 1e9"},
    [TRN_NUM_FEATURE_SIZE] = {0, HUGE_VAL, LO_OPEN, "a number > 0"},
    [TRN_NUM_ROUGHNESS] = {0, 1, 0, "a number from 0 to 1"},
    [TRN_NUM_OCTAVES] = {1, 16, WHOLE, "a whole number 1..16"},
    [TRN_NUM_WARP_AMPLITUDE] = {0, HUGE_VAL, 0, "a number >= 0"},
    [TRN_NUM_WARP_FEATURE_SIZE] = {0, HUGE_VAL, LO_OPEN, "a number > 0"},
    [TRN_NUM_STRETCH] = {0, HUGE_VAL, LO_OPEN, "a number > 0"},
    [TRN_NUM_HEADING] = {-HUGE_VAL, HUGE_VAL, 0, "a finite number of degrees"},
    [TRN_NUM_COLOR] = {0, 1, 0, "a number from 0 to 1"},
    [TRN_NUM_TEXTURE_SCALE] = {0, HUGE_VAL, LO_OPEN, "a number > 0"},
    [TRN_NUM_PRIORITY] = {-HUGE_VAL, HUGE_VAL, 0, "a finite number"},
    [TRN_NUM_BLEND] = {0, HUGE_VAL, 0, "a number >= 0"},
    [TRN_NUM_ELEVATION] = {-HUGE_VAL, HUGE_VAL, 0, "a finite number"},
    [TRN_NUM_SLOPE] = {0, 90, 0, "a number of degrees from 0 to 90"},
    [TRN_NUM_MOISTURE] = {0, 1, 0, "a number from 0 to 1"},
    [TRN_NUM_WATER_DISTANCE] = {0, HUGE_VAL, 0, "a number >= 0"},
    [TRN_NUM_PRESET_VERSION] = {0, HUGE_VAL, 0, "a number >= 0"},
};

trn_status trn_rcp_check_whole_grid(const trn_recipe *recipe, const char *who, trn_error *err)
{
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    if (samples <= TRN_RCP_MAX_WHOLE_SAMPLES) return TRN_OK;
    return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                         "resolution: %u x %u cells make %llu samples; %s holds the whole grid, "
                         "at most %llu samples (2^28, such as 16383 x 16383 cells); generate "
                         "larger worlds tile by tile (terrane generate --tiles, "
                         "trn_graph_evaluate_tiles)",
                         recipe->cells_x, recipe->cells_z, (unsigned long long)samples, who,
                         (unsigned long long)TRN_RCP_MAX_WHOLE_SAMPLES);
}

const char *trn_rcp_num_expect(trn_rcp_num which)
{
    return num_specs[which].expect;
}

bool trn_rcp_num_whole(trn_rcp_num which)
{
    return (num_specs[which].flags & WHOLE) != 0;
}

bool trn_rcp_num_ok(trn_rcp_num which, double value)
{
    return trn_doc_range_ok(&num_specs[which], value);
}

const trn_doc_range *trn_rcp_num_range(trn_rcp_num which)
{
    return &num_specs[which];
}

/* ---- lookups in a parsed recipe ---- */

const char *trn_substrate_name(trn_substrate substrate)
{
    switch (substrate) {
    case TRN_SUBSTRATE_SOIL:
        return "soil";
    case TRN_SUBSTRATE_ROCK:
        return "rock";
    case TRN_SUBSTRATE_SAND:
        return "sand";
    case TRN_SUBSTRATE_WET:
        return "wet";
    case TRN_SUBSTRATE_COUNT:
        break;
    }
    return "unknown";
}

int trn_recipe_find_landform(const trn_recipe *recipe, const char *name)
{
    if (!recipe || !name || !recipe->landforms) return -1;
    for (uint32_t i = 0; i < recipe->landform_count; i++)
        if (recipe->landforms[i].name && strcmp(recipe->landforms[i].name, name) == 0)
            return (int)i;
    return -1;
}

int trn_recipe_find_biome(const trn_recipe *recipe, const char *name)
{
    if (!recipe || !name || !recipe->biomes) return -1;
    for (uint32_t i = 0; i < recipe->biome_count; i++)
        if (recipe->biomes[i].name && strcmp(recipe->biomes[i].name, name) == 0) return (int)i;
    return -1;
}

double trn_recipe_sea_level(const trn_recipe *recipe, trn_sea_level_source *source, char *how,
                            size_t how_size)
{
    char num[3][40];
    if (source) *source = TRN_SEA_LEVEL_EXPLICIT;
    if (how && how_size) how[0] = '\0';
    if (!recipe) return 0;
    if (recipe->has_sea_level) {
        if (how && how_size) {
            trn_rcp_format_double(recipe->sea_level, num[0]);
            snprintf(how, how_size, "explicit: the recipe's sea_level %s", num[0]);
        }
        return recipe->sea_level;
    }
    if (source) *source = TRN_SEA_LEVEL_DERIVED;
    int idx = trn_recipe_find_landform(recipe, recipe->default_landform);
    if (idx < 0) {
        if (how && how_size)
            snprintf(how, how_size, "derived: 0, because the default landform is missing");
        return 0;
    }
    const trn_landform *lf = &recipe->landforms[idx];
    /* A quarter of the default landform's relief lies under water. */
    double level = lf->base_height + 0.25 * lf->height_variation;
    if (how && how_size) {
        trn_rcp_format_double(lf->base_height, num[0]);
        trn_rcp_format_double(lf->height_variation, num[1]);
        trn_rcp_format_double(level, num[2]);
        snprintf(how, how_size,
                 "derived: base_height %s + 0.25 x height_variation %s of default landform "
                 "'%s' = %s",
                 num[0], num[1], lf->name, num[2]);
    }
    return level;
}
