/* libFuzzer target for TerrainBlocks in items.level.json: read line by line, put a block, check.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <ctype.h>
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

/* What one line is, judged with jansson alone (the oracle the reader is checked against). */
typedef enum line_kind {
    LINE_BLANK,  /* only white space (isspace, as the reader skips it) */
    LINE_BAD,    /* not valid JSON, or not an object: always a problem */
    LINE_OBJECT, /* an object of another class: neither a block nor a problem */
    LINE_BLOCK,  /* an object of class TerrainBlock: a block, or a problem on its fields */
} line_kind;

static line_kind classify(const char *text, const line_span *l)
{
    bool blank = true;
    /* The reader tests the whole line up to '\n', its '\r' included. */
    for (size_t i = l->start; i < l->next && text[i] != '\n'; i++)
        blank = blank && isspace((unsigned char)text[i]);
    if (blank) return LINE_BLANK;
    json_error_t je;
    json_t *obj = json_loadb(text + l->start, l->body - l->start, 0, &je);
    const json_t *cls = json_object_get(obj, "class");
    line_kind k = !json_is_object(obj) ? LINE_BAD
                  : json_is_string(cls) && strcmp(json_string_value(cls), "TerrainBlock") == 0
                      ? LINE_BLOCK
                      : LINE_OBJECT;
    json_decref(obj);
    return k;
}

static bool contains(const char *s, size_t n, const char *needle, size_t k)
{
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (memcmp(s + i, needle, k) == 0) return true;
    return false;
}

/* A line that put refuses to add a block beside: not valid JSON, and either holding a backslash
 * or mentioning both TerrainBlock and the name in quotes. */
static bool line_is_suspect(const char *text, const line_span *l, const char *name)
{
    const char *s = text + l->start;
    size_t n = l->body - l->start;
    json_error_t je;
    json_t *v = json_loadb(s, n, 0, &je);
    json_decref(v);
    if (v || !n) return false;
    size_t k = strlen(name);
    char *quoted = malloc(k + 2);
    FUZZ_ASSERT(quoted != NULL);
    quoted[0] = quoted[k + 1] = '"';
    memcpy(quoted + 1, name, k);
    bool suspect = memchr(s, '\\', n) != NULL ||
                   (contains(s, n, "TerrainBlock", 12) && contains(s, n, quoted, k + 2));
    free(quoted);
    return suspect;
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

/* Read leniently; every problem is a level-items-invalid error on a line of its own. */
static void parse_checked(const char *text, size_t size, trn_terrain_block **blocks, size_t *count,
                          trn_findings *problems)
{
    trn_error e;
    memset(problems, 0, sizeof *problems);
    FUZZ_ASSERT(trn_items_parse_terrain_blocks(text, size, ITEMS_PATH, blocks, count, problems,
                                               &e) == TRN_OK);
    for (size_t i = 0; i < problems->count; i++) {
        const trn_finding *f = &problems->items[i];
        FUZZ_ASSERT(strcmp(f->check, "level-items-invalid") == 0);
        FUZZ_ASSERT(f->severity == TRN_SEVERITY_ERROR && f->message[0] && f->fix[0]);
        FUZZ_ASSERT(strcmp(f->file, ITEMS_PATH) == 0);
        FUZZ_ASSERT(f->line >= 1 && (i == 0 || f->line > problems->items[i - 1].line));
        FUZZ_ASSERT(f->column >= 0 && f->offset >= 0 && f->offset <= (int64_t)size);
        for (size_t b = 0; b < *count; b++)
            FUZZ_ASSERT((*blocks)[b].source_line != f->line);
    }
}

static const trn_finding *problem_on(const trn_findings *problems, int line)
{
    for (size_t i = 0; i < problems->count; i++)
        if (problems->items[i].line == line) return &problems->items[i];
    return NULL;
}

/* Put tb into the input text and check: every other line kept byte for byte, the replaced line
 * is the first one that is a TerrainBlock with tb's name (else a line is appended, unless a line
 * that is not JSON may be that block: then put refuses), and the result reads back with tb in
 * that place and every other block and problem as it was. */
static void put_and_check(const char *text, size_t size, const trn_terrain_block *tb,
                          const trn_terrain_block *blocks, size_t count,
                          const trn_findings *problems)
{
    char *out = NULL;
    size_t out_size = 0;
    trn_error e;
    trn_status st =
        trn_items_put_terrain_block_text(text, size, ITEMS_PATH, tb, &out, &out_size, &e);

    line_span *lines;
    size_t line_count = split_lines(text, size, &lines);
    size_t target = line_count; /* index of the line that must be replaced; none = append */
    size_t suspect = line_count;
    for (size_t i = 0; i < line_count; i++) {
        if (target == line_count && line_is_block_named(text, &lines[i], tb->name)) target = i;
        if (suspect == line_count && line_is_suspect(text, &lines[i], tb->name)) suspect = i;
    }
    if (target == line_count && suspect < line_count) {
        FUZZ_ASSERT(st == TRN_ERR_JSON && out == NULL);
        FUZZ_ASSERT(e.line == (int)suspect + 1 && e.column >= 1);
        FUZZ_ASSERT(e.offset >= (int64_t)lines[suspect].start &&
                    e.offset <= (int64_t)lines[suspect].body);
        free(lines);
        return;
    }
    FUZZ_ASSERT(st == TRN_OK);
    FUZZ_ASSERT(out && out[out_size] == '\0');
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
        /* out = text + a line ending when the last line had none (just "\n" after a '\r') +
         * the block + a line ending (CRLF when the first line ends so). */
        bool crlf = line_count > 0 && lines[0].next > lines[0].body + 1;
        const char *eol = crlf ? "\r\n" : "\n";
        size_t eol_len = strlen(eol);
        FUZZ_ASSERT(out_size > size && memcmp(out, text, size) == 0);
        size_t pos = size;
        if (size > bom && text[size - 1] != '\n') {
            const char *end_last = text[size - 1] == '\r' ? "\n" : eol;
            size_t end_len = strlen(end_last);
            FUZZ_ASSERT(out_size >= pos + end_len && memcmp(out + pos, end_last, end_len) == 0);
            pos += end_len;
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
    FUZZ_ASSERT(trn_items_parse_terrain_blocks(put_line, put_len, NULL, &one, &one_count, NULL,
                                               &e) == TRN_OK);
    FUZZ_ASSERT(one_count == 1);
    assert_same_block(tb, &one[0]);
    trn_terrain_blocks_free(one, one_count);

    /* The whole file reads back with the same blocks and problems around the put line (whose
     * old block or field problem, if any, is gone). */
    trn_terrain_block *again = NULL;
    size_t again_count = 0;
    trn_findings again_problems;
    parse_checked(out, out_size, &again, &again_count, &again_problems);
    int put_line_no = (int)(target < line_count ? target + 1 : line_count + 1);
    size_t j = 0;
    for (size_t i = 0; i < again_count; i++) {
        if (again[i].source_line == put_line_no) {
            assert_same_block(tb, &again[i]);
            if (j < count && blocks[j].source_line == put_line_no) j++;
            continue;
        }
        FUZZ_ASSERT(j < count);
        assert_same_block(&blocks[j], &again[i]);
        FUZZ_ASSERT(blocks[j].source_line == again[i].source_line);
        j++;
    }
    FUZZ_ASSERT(j == count);
    size_t k = 0;
    for (size_t i = 0; i < problems->count; i++) {
        const trn_finding *was = &problems->items[i];
        if (was->line == put_line_no) continue;
        FUZZ_ASSERT(k < again_problems.count);
        const trn_finding *now = &again_problems.items[k++];
        FUZZ_ASSERT(now->line == was->line && now->column == was->column);
        FUZZ_ASSERT(strcmp(now->message, was->message) == 0);
        if (was->line < put_line_no) FUZZ_ASSERT(now->offset == was->offset);
    }
    FUZZ_ASSERT(k == again_problems.count);
    trn_terrain_blocks_free(again, again_count);
    trn_findings_dispose(&again_problems);
    free(lines);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    trn_findings problems;
    parse_checked(text, size, &blocks, &count, &problems);
    for (size_t i = 0; i < count; i++) {
        FUZZ_ASSERT(blocks[i].name != NULL && blocks[i].source_line >= 1);
        FUZZ_ASSERT(i == 0 || blocks[i].source_line > blocks[i - 1].source_line);
        FUZZ_ASSERT(blocks[i].source_file && strcmp(blocks[i].source_file, ITEMS_PATH) == 0);
        FUZZ_ASSERT(!blocks[i].material_texture_set || blocks[i].material_texture_set[0]);
    }

    /* Line by line: a line that is not a JSON object is a problem, a TerrainBlock is a block
     * or a problem, anything else neither; a bad line does not stop the lines after it. */
    line_span *lines;
    size_t line_count = split_lines(text, size, &lines);
    size_t b = 0;
    for (size_t i = 0; i < line_count; i++) {
        int no = (int)i + 1;
        bool is_block = b < count && blocks[b].source_line == no;
        const trn_finding *p = problem_on(&problems, no);
        switch (classify(text, &lines[i])) {
        case LINE_BLANK:
        case LINE_OBJECT:
            FUZZ_ASSERT(!is_block && !p);
            break;
        case LINE_BAD:
            FUZZ_ASSERT(!is_block && p);
            FUZZ_ASSERT(p->offset >= (int64_t)lines[i].start &&
                        p->offset <= (int64_t)lines[i].body);
            break;
        case LINE_BLOCK:
            FUZZ_ASSERT(is_block != (p != NULL));
            if (p) FUZZ_ASSERT(p->offset == (int64_t)lines[i].start && p->column == 0);
            break;
        }
        b += is_block;
    }
    FUZZ_ASSERT(b == count);
    free(lines);

    /* Strict reading stops at the first problem, with the same message and place. */
    trn_terrain_block *strict = NULL;
    size_t strict_count = 0;
    trn_error e;
    trn_status st =
        trn_items_parse_terrain_blocks(text, size, ITEMS_PATH, &strict, &strict_count, NULL, &e);
    if (problems.count) {
        FUZZ_ASSERT(st == TRN_ERR_JSON && strict == NULL && strict_count == 0);
        const trn_finding *first = &problems.items[0];
        FUZZ_ASSERT(e.line == first->line && e.offset == first->offset);
        FUZZ_ASSERT(strcmp(e.message, first->message) == 0 && strcmp(e.file, ITEMS_PATH) == 0);
        FUZZ_ASSERT(first->column == 0 || e.column == first->column);
    } else {
        FUZZ_ASSERT(st == TRN_OK && strict_count == count);
        for (size_t i = 0; i < count; i++)
            assert_same_block(&blocks[i], &strict[i]);
    }
    trn_terrain_blocks_free(strict, strict_count);

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
    put_and_check(text, size, &tb, blocks, count, &problems);
    trn_terrain_block_dispose(&tb);

    /* The editor's bookkeeping: read as the line has it; a new line leads with name, class,
     * persistentId and __parent; a replaced line keeps its own. */
    for (size_t i = 0; i < count; i++) {
        size_t n_lines;
        line_span *ls;
        n_lines = split_lines(text, size, &ls);
        FUZZ_ASSERT(blocks[i].source_line >= 1 && (size_t)blocks[i].source_line <= n_lines);
        const line_span *l = &ls[blocks[i].source_line - 1];
        json_error_t je;
        json_t *obj = json_loadb(text + l->start, l->body - l->start, 0, &je);
        const json_t *pid = json_object_get(obj, "persistentId"),
                     *par = json_object_get(obj, "__parent");
        FUZZ_ASSERT(json_is_string(pid)
                        ? blocks[i].persistent_id &&
                              strcmp(blocks[i].persistent_id, json_string_value(pid)) == 0
                        : blocks[i].persistent_id == NULL);
        FUZZ_ASSERT(json_is_string(par)
                        ? blocks[i].parent && strcmp(blocks[i].parent, json_string_value(par)) == 0
                        : blocks[i].parent == NULL);
        json_decref(obj);
        free(ls);
    }
    FUZZ_ASSERT(trn_terrain_block_init(&tb, "fuzzEditor", "/levels/fuzz/e.ter", NULL, 128, &e) ==
                TRN_OK);
    tb.persistent_id = strdup("00000000-0000-5000-8000-000000000000");
    tb.parent = strdup("MissionGroup");
    FUZZ_ASSERT(tb.persistent_id && tb.parent);
    /* The line put replaces, by the oracle: the first TerrainBlock object named so. */
    line_span *ls;
    size_t n_lines = split_lines(text, size, &ls), had = n_lines;
    for (size_t i = 0; i < n_lines && had == n_lines; i++)
        if (line_is_block_named(text, &ls[i], "fuzzEditor")) had = i;
    char *had_pid = NULL, *had_parent = NULL;
    if (had < n_lines) {
        json_error_t je;
        json_t *obj = json_loadb(text + ls[had].start, ls[had].body - ls[had].start, 0, &je);
        const json_t *pid = json_object_get(obj, "persistentId");
        const json_t *par = json_object_get(obj, "__parent");
        if (json_is_string(pid)) had_pid = strdup(json_string_value(pid));
        if (json_is_string(par)) had_parent = strdup(json_string_value(par));
        json_decref(obj);
    }
    free(ls);
    char *out = NULL;
    size_t out_size = 0;
    if (trn_items_put_terrain_block_text(text, size, ITEMS_PATH, &tb, &out, &out_size, &e) ==
        TRN_OK) {
        trn_terrain_block *back = NULL;
        size_t back_count = 0;
        trn_findings back_problems;
        parse_checked(out, out_size, &back, &back_count, &back_problems);
        const trn_terrain_block *now = NULL;
        for (size_t i = 0; i < back_count && !now; i++)
            if (strcmp(back[i].name, "fuzzEditor") == 0) now = &back[i];
        FUZZ_ASSERT(now != NULL);
        if (had < n_lines) {
            FUZZ_ASSERT(now->source_line == (int)had + 1);
            FUZZ_ASSERT(
                (had_pid ? now->persistent_id && strcmp(now->persistent_id, had_pid) == 0
                         : !now->persistent_id) &&
                (had_parent ? now->parent && strcmp(now->parent, had_parent) == 0 : !now->parent));
        } else {
            static const char lead[] = "{\"name\":\"fuzzEditor\",\"class\":\"TerrainBlock\","
                                       "\"persistentId\":\"00000000-0000-5000-8000-000000000000\","
                                       "\"__parent\":\"MissionGroup\",\"position\":[";
            FUZZ_ASSERT(contains(out, out_size, lead, sizeof lead - 1));
            FUZZ_ASSERT(strcmp(now->persistent_id, tb.persistent_id) == 0 &&
                        strcmp(now->parent, "MissionGroup") == 0);
        }
        trn_terrain_blocks_free(back, back_count);
        trn_findings_dispose(&back_problems);
    }
    free(out);
    free(had_pid);
    free(had_parent);
    trn_terrain_block_dispose(&tb);

    /* A block under a name the input may or may not hold (usually appended). */
    FUZZ_ASSERT(trn_terrain_block_init(&tb, "fuzzBlock", "/levels/fuzz/fuzz.ter", NULL, 256, &e) ==
                TRN_OK);
    put_and_check(text, size, &tb, blocks, count, &problems);
    trn_terrain_block_dispose(&tb);

    trn_terrain_blocks_free(blocks, count);
    trn_findings_dispose(&problems);
    return 0;
}
