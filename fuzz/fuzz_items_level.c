/* libFuzzer target for TerrainBlocks in items.level.json: read, put a block, check the edit.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/beamng_level.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#define ITEMS_PATH "fuzz/items.level.json"

/* One line of an items file: [start, body) is the text without "\r\n" or "\n", next is where
 * the following line starts. */
typedef struct line_span {
    size_t start, body, next;
} line_span;

/* Split as the reader and the writer do: after a leading byte order mark, at each '\n'. */
static size_t split_lines(const char *text, size_t size, line_span **lines)
{
    size_t pos = (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0, n = 0, cap = 0;
    *lines = NULL;
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            *lines = realloc(*lines, cap * sizeof **lines);
            FUZZ_ASSERT(*lines != NULL);
        }
        size_t body = (end > pos && text[end - 1] == '\r') ? end - 1 : end;
        (*lines)[n++] = (line_span){pos, body, nl ? end + 1 : size};
        pos = nl ? end + 1 : size;
    }
    return n;
}

/* True when the line is, on its own, a JSON object of class TerrainBlock named name: exactly the
 * lines that put may replace, whatever the rest of the file holds. */
static bool line_is_block_named(const char *text, const line_span *l, const char *name)
{
    json_error_t je;
    json_t *obj = json_loadb(text + l->start, l->body - l->start, 0, &je);
    const json_t *cls = json_object_get(obj, "class"), *nm = json_object_get(obj, "name");
    bool is = json_is_object(obj) && json_is_string(cls) &&
              strcmp(json_string_value(cls), "TerrainBlock") == 0 && json_is_string(nm) &&
              strcmp(json_string_value(nm), name) == 0;
    json_decref(obj);
    return is;
}

static bool same_str(const char *a, const char *b)
{
    /* Put writes an absent terrainFile or texture set as "" (or leaves the set out), and the
     * reader gives "" back for the one and NULL for the other: both mean none. */
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static void assert_same_block(const trn_terrain_block *a, const trn_terrain_block *b)
{
    FUZZ_ASSERT(a->name && b->name && strcmp(a->name, b->name) == 0);
    FUZZ_ASSERT(same_str(a->terrain_file, b->terrain_file));
    FUZZ_ASSERT(same_str(a->material_texture_set, b->material_texture_set));
    FUZZ_ASSERT(a->square_size == b->square_size);
    FUZZ_ASSERT(a->max_height == b->max_height);
    FUZZ_ASSERT(a->screen_error == b->screen_error);
    FUZZ_ASSERT(a->cast_shadows == b->cast_shadows);
    for (int i = 0; i < 3; i++)
        FUZZ_ASSERT(a->position[i] == b->position[i]);
    for (int i = 0; i < 9; i++)
        FUZZ_ASSERT(a->rotation_matrix[i] == b->rotation_matrix[i]);
}

/* Values a block is put with, picked by the input so the fuzzer explores them too. */
static const double values[] = {0.0,        -0.0,
                                1.0,        0.5,
                                2048.0,     -1024.0,
                                16.0,       1e300,
                                -1e-300,    3.141592653589793,
                                1e15 + 0.5, 9007199254740993.0,
                                1e16,       0.1,
                                -2.5e-7,    123456789.125};
#define VALUE_COUNT (sizeof values / sizeof values[0])

static double pick(const uint8_t *data, size_t size, size_t i)
{
    return values[size ? (data[(i * 7) % size] + i) % VALUE_COUNT : i % VALUE_COUNT];
}

/* Put tb into the input text and check: every other line kept byte for byte, the replaced line
 * is the first one that is a TerrainBlock with tb's name (else a line is appended), and the
 * result reads back with tb in that place and every other block as it was. */
static void put_and_check(const char *text, size_t size, const trn_terrain_block *tb,
                          const trn_terrain_block *blocks, size_t count, bool read_ok)
{
    char *out = NULL;
    size_t out_size = 0;
    trn_error e;
    FUZZ_ASSERT(trn_items_put_terrain_block_text(text, size, ITEMS_PATH, tb, &out, &out_size, &e) ==
                TRN_OK);
    FUZZ_ASSERT(out && out[out_size] == '\0');

    line_span *lines;
    size_t line_count = split_lines(text, size, &lines);
    size_t target = line_count; /* index of the line that must be replaced; none = append */
    for (size_t i = 0; i < line_count; i++)
        if (line_is_block_named(text, &lines[i], tb->name)) {
            target = i;
            break;
        }
    size_t bom = (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) ? 3 : 0;
    const char *put_line;
    size_t put_len;
    if (target < line_count) {
        /* out = text before the line + new body + the line's own ending and everything after. */
        const line_span *l = &lines[target];
        size_t tail = size - l->body;
        FUZZ_ASSERT(out_size >= l->start + tail);
        FUZZ_ASSERT(memcmp(out, text, l->start) == 0);
        FUZZ_ASSERT(memcmp(out + out_size - tail, text + l->body, tail) == 0);
        put_line = out + l->start;
        put_len = out_size - tail - l->start;
    } else {
        /* out = text + a line ending when the last line had none + the block + a line ending
         * (CRLF when the first line ends so). */
        bool crlf = line_count > 0 && lines[0].next > lines[0].body + 1;
        const char *eol = crlf ? "\r\n" : "\n";
        size_t eol_len = strlen(eol);
        FUZZ_ASSERT(out_size > size && memcmp(out, text, size) == 0);
        size_t pos = size;
        if (size > bom && text[size - 1] != '\n') {
            FUZZ_ASSERT(out_size >= pos + eol_len && memcmp(out + pos, eol, eol_len) == 0);
            pos += eol_len;
        }
        FUZZ_ASSERT(out_size >= pos + eol_len);
        FUZZ_ASSERT(memcmp(out + out_size - eol_len, eol, eol_len) == 0);
        put_line = out + pos;
        put_len = out_size - eol_len - pos;
    }
    FUZZ_ASSERT(put_len > 0 && memchr(put_line, '\n', put_len) == NULL);

    /* The new line alone reads back as tb. */
    trn_terrain_block *one = NULL;
    size_t one_count = 0;
    FUZZ_ASSERT(trn_items_parse_terrain_blocks(put_line, put_len, NULL, &one, &one_count, &e) ==
                TRN_OK);
    FUZZ_ASSERT(one_count == 1);
    assert_same_block(tb, &one[0]);
    trn_terrain_blocks_free(one, one_count);

    /* A file that read before reads after, with the same blocks around the put one. */
    if (read_ok) {
        trn_terrain_block *again = NULL;
        size_t again_count = 0;
        trn_status st =
            trn_items_parse_terrain_blocks(out, out_size, ITEMS_PATH, &again, &again_count, &e);
        if (st) fprintf(stderr, "re-read failed: %s\n", e.message);
        FUZZ_ASSERT(st == TRN_OK);
        int put_line_no = (int)(target < line_count ? target + 1 : line_count + 1);
        FUZZ_ASSERT(again_count == count + (target < line_count ? 0u : 1u));
        size_t j = 0;
        for (size_t i = 0; i < again_count; i++) {
            if (again[i].source_line == put_line_no) {
                assert_same_block(tb, &again[i]);
                /* The replaced block was read from that line before. */
                if (target < line_count) {
                    FUZZ_ASSERT(j < count && blocks[j].source_line == put_line_no);
                    j++;
                }
                continue;
            }
            FUZZ_ASSERT(j < count);
            assert_same_block(&blocks[j], &again[i]);
            FUZZ_ASSERT(blocks[j].source_line == again[i].source_line);
            j++;
        }
        FUZZ_ASSERT(j == count);
        trn_terrain_blocks_free(again, again_count);
    }
    free(lines);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    trn_error e;
    trn_status st = trn_items_parse_terrain_blocks(text, size, ITEMS_PATH, &blocks, &count, &e);
    if (st) {
        FUZZ_ASSERT(blocks == NULL && count == 0);
        FUZZ_ASSERT(e.code == TRN_ERR_JSON || e.code == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.message[0] != '\0' && strcmp(e.file, ITEMS_PATH) == 0);
        /* Errors name the line, and syntax errors the byte, of the file as a whole. */
        FUZZ_ASSERT(e.code != TRN_ERR_JSON || e.line >= 1);
        FUZZ_ASSERT(e.offset >= -1 && e.offset <= (int64_t)size);
    }
    for (size_t i = 0; i < count; i++) {
        FUZZ_ASSERT(blocks[i].name != NULL && blocks[i].source_line >= 1);
        FUZZ_ASSERT(i == 0 || blocks[i].source_line > blocks[i - 1].source_line);
        FUZZ_ASSERT(blocks[i].source_file && strcmp(blocks[i].source_file, ITEMS_PATH) == 0);
        FUZZ_ASSERT(!blocks[i].material_texture_set || blocks[i].material_texture_set[0]);
    }

    /* Replace the first block (or theTerrain), with other values. */
    trn_terrain_block tb;
    const trn_terrain_block *first = count ? &blocks[0] : NULL;
    const char *name = first && first->name[0] ? first->name : "theTerrain";
    FUZZ_ASSERT(trn_terrain_block_init(&tb, name, first ? first->terrain_file : NULL,
                                       size % 3 ? "set \"q\" \\ \xC3\xA9\t" : NULL, 1024,
                                       &e) == TRN_OK);
    tb.square_size = pick(data, size, 0);
    tb.max_height = pick(data, size, 1);
    tb.screen_error = pick(data, size, 2);
    tb.cast_shadows = size % 2 == 0;
    for (size_t i = 0; i < 3; i++)
        tb.position[i] = pick(data, size, 3 + i);
    for (size_t i = 0; i < 9; i++)
        tb.rotation_matrix[i] = pick(data, size, 6 + i);
    put_and_check(text, size, &tb, blocks, count, st == TRN_OK);
    trn_terrain_block_dispose(&tb);

    /* A block under a name the input may or may not hold (usually appended). */
    FUZZ_ASSERT(trn_terrain_block_init(&tb, "fuzzBlock", "/levels/fuzz/fuzz.ter", NULL, 256, &e) ==
                TRN_OK);
    put_and_check(text, size, &tb, blocks, count, st == TRN_OK);
    trn_terrain_block_dispose(&tb);

    trn_terrain_blocks_free(blocks, count);
    return 0;
}
