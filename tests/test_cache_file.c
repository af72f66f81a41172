/* Tests: graph cache files (.tnc): round trips of every output kind, each rejection with its code
 * and byte offset, the cache folder's files, and the corpus seeds pinned byte for byte. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "graph/cache_dir.h"
#include "graph/node_result.h"
#include "terrane/graph.h"
#include "test.h"

/* Offsets of docs/cache-format.md, written out here independently of the implementation. */
#define OFF_VERSION 8
#define OFF_KEY 12
#define OFF_GRID 20
#define OFF_CELLS_Z 24
#define OFF_SIZE_X 28
#define OFF_CPU 44
#define OFF_FLAGS 52
#define OFF_LEDGER 56
#define OFF_OUTPUT_COUNT 104
#define OFF_OUTPUTS 108

/* ---- byte helpers ---- */

static void le32_at(uint8_t *p, size_t off, uint32_t v)
{
    for (unsigned k = 0; k < 4; k++)
        p[off + k] = (uint8_t)(v >> (8 * k));
}

static void le64_at(uint8_t *p, size_t off, uint64_t v)
{
    for (unsigned k = 0; k < 8; k++)
        p[off + k] = (uint8_t)(v >> (8 * k));
}

static uint64_t rd64_at(const uint8_t *p, size_t off)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < 8; k++)
        v |= (uint64_t)p[off + k] << (8 * k);
    return v;
}

/* Recompute the trailing checksum after an edit, so the parser reaches the edited section's own
 * check instead of stopping at the checksum. */
static void reseal(uint8_t *p, size_t size)
{
    le64_at(p, size - 8, (uint64_t)XXH64(p, size - 8, 0));
}

static uint8_t *dup_bytes(const uint8_t *p, size_t size, size_t extra)
{
    uint8_t *d = calloc(size + extra + 1, 1);
    memcpy(d, p, size);
    return d;
}

/* ---- results to store ---- */

static trn_gbuf *float_buf(size_t n, uint32_t seed)
{
    trn_gbuf *b = trn_gbuf_new(n, sizeof(float));
    float *v = b->data;
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((i * 37u + seed) % 101u) / 8.0f - 4.0f;
    return b;
}

/* One heightfield output on 3 x 2 cells (12 samples): the layout the offset tests spell out. */
static trn_node_result *make_heightfield(uint64_t key)
{
    trn_node_result *r = trn_node_result_new(key, 3, 2, 30.0, 20.0);
    r->output_count = 1;
    r->outputs[0].kind = TRN_PIN_HEIGHTFIELD;
    r->outputs[0].values = float_buf(12, 1);
    r->cpu_seconds = 0.5;
    trn_node_result_measure(r);
    return r;
}

/* A hand-made drainage output on 2 x 2 cells (9 samples): every border sample an outlet, the
 * centre a pit raised to the spill level; independent of the drainage algorithm, so its bytes
 * can be pinned. */
static void hand_drainage(trn_gout *o, double sea_level, trn_gbuf *source)
{
    o->kind = TRN_PIN_DRAINAGE;
    o->sea_level = sea_level;
    o->source = source;
    o->filled = trn_gbuf_new(9, sizeof(float));
    memcpy(o->filled->data, source->data, 9 * sizeof(float));
    ((float *)o->filled->data)[4] = 2.5f;
    o->flow_dir = trn_gbuf_new(9, 1);
    memset(o->flow_dir->data, TRN_DRAIN_OUTLET, 9);
    ((uint8_t *)o->flow_dir->data)[4] = 0; /* east */
    o->accumulation = trn_gbuf_new(9, sizeof(uint32_t));
    for (size_t k = 0; k < 9; k++)
        ((uint32_t *)o->accumulation->data)[k] = k == 5 ? 2u : 1u;
    o->basins = trn_gbuf_new(1, sizeof(trn_basin));
    trn_basin *b = o->basins->data;
    b->id = 4; /* sink (1, 1): 1 * 3 + 1 */
    b->sink_i = 1;
    b->sink_j = 1;
    b->sink_height = 0.25f;
    b->spill_level = 2.5f;
    b->spill_i = 2;
    b->spill_j = 1;
    b->area = 1;
}

static trn_node_result *make_small_drainage(uint64_t key)
{
    trn_node_result *r = trn_node_result_new(key, 2, 2, 8.0, 8.0);
    trn_gbuf *source = trn_gbuf_new(9, sizeof(float));
    float *h = source->data;
    for (size_t k = 0; k < 9; k++)
        h[k] = 3.0f + (float)k * 0.5f;
    h[4] = 0.25f;
    r->output_count = 1;
    hand_drainage(&r->outputs[0], NAN, source);
    trn_gout_bind_drainage(&r->outputs[0], 2, 2, 8.0, 8.0);
    r->cpu_seconds = 0.001;
    trn_node_result_measure(r);
    return r;
}

/* Erosion-like: a field, two masks, a ledger and the change array, with odd float values. */
static trn_node_result *make_erosion(uint64_t key)
{
    trn_node_result *r = trn_node_result_new(key, 2, 1, 4.0, 2.0);
    r->output_count = 3;
    r->outputs[0].kind = TRN_PIN_HEIGHTFIELD;
    r->outputs[0].values = float_buf(6, 3);
    r->outputs[1].kind = TRN_PIN_MASK;
    r->outputs[1].values = float_buf(6, 4);
    float *m = r->outputs[1].values->data;
    m[0] = -0.0f;
    m[1] = 1e-40f; /* subnormal */
    m[2] = NAN;
    m[3] = INFINITY;
    r->outputs[2].kind = TRN_PIN_MASK;
    r->outputs[2].values = float_buf(6, 5);
    r->change = float_buf(6, 6);
    r->has_ledger = true;
    r->ledger = (trn_erosion_ledger){12.5, 10.25, 1.5, 0.75, 4096, 100000};
    r->biome_rules = true;
    r->cpu_seconds = 2.25;
    trn_node_result_measure(r);
    return r;
}

/* Every kind at once on real drainage: 7 x 5 cells, a tilted plane with two pits (two basins),
 * the drainage's source shared in memory with output 0. */
static trn_node_result *make_full(uint64_t key)
{
    const uint32_t cx = 7, cz = 5;
    const size_t nx = cx + 1u, n = nx * (cz + 1u);
    trn_node_result *r = trn_node_result_new(key, cx, cz, 70.0, 50.0);
    trn_gbuf *heights = trn_gbuf_new(n, sizeof(float));
    float *h = heights->data;
    for (size_t j = 0; j <= cz; j++)
        for (size_t i = 0; i < nx; i++)
            h[j * nx + i] = 5.0f + (float)i + 0.5f * (float)j;
    h[2 * nx + 2] = 0.5f;
    h[3 * nx + 5] = 1.0f;
    trn_field field = {cx, cz, 70.0, 50.0, h, 0.0, 0.0};
    trn_drainage d;
    trn_error e;
    CHECK_OK(trn_drainage_compute(&field, -1.0, &d, NULL, NULL, &e));
    CHECK(d.basin_count >= 2);

    r->output_count = 4;
    r->outputs[0].kind = TRN_PIN_HEIGHTFIELD;
    r->outputs[0].values = heights;
    r->outputs[1].kind = TRN_PIN_MASK;
    r->outputs[1].values = float_buf(n, 7);
    trn_gout *o = &r->outputs[2];
    o->kind = TRN_PIN_DRAINAGE;
    o->sea_level = d.sea_level;
    o->source = trn_gbuf_retain(heights);
    o->filled = trn_gbuf_wrap(d.filled, n, sizeof(float));
    o->flow_dir = trn_gbuf_wrap(d.flow_dir, n, 1);
    o->accumulation = trn_gbuf_wrap(d.accumulation, n, sizeof(uint32_t));
    o->basins = trn_gbuf_wrap(d.basins, d.basin_count, sizeof(trn_basin));
    trn_gout_bind_drainage(o, cx, cz, 70.0, 50.0);
    r->outputs[3].kind = TRN_PIN_MASK;
    r->outputs[3].values = float_buf(n, 9);
    r->change = float_buf(n, 11);
    r->has_ledger = true;
    r->ledger = (trn_erosion_ledger){3.0, 2.0, 0.5, 0.5, 64, 1234};
    r->cpu_seconds = 0.125;
    trn_node_result_measure(r);
    return r;
}

/* ---- comparing ---- */

static bool same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static void check_same_buf(const trn_gbuf *a, const trn_gbuf *b)
{
    CHECK((a == NULL) == (b == NULL));
    if (!a || !b) return;
    CHECK_EQ_INT(b->count, a->count);
    CHECK_EQ_INT(b->elem_size, a->elem_size);
    CHECK_EQ_INT(b->refs, 1); /* read buffers are never shared */
    if (a->count == b->count && a->elem_size == b->elem_size)
        CHECK(same_bits(a->data, b->data, a->count * a->elem_size));
}

static void check_same_result(const trn_node_result *a, const trn_node_result *b)
{
    CHECK(a->key == b->key);
    CHECK_EQ_INT(b->cells_x, a->cells_x);
    CHECK_EQ_INT(b->cells_z, a->cells_z);
    CHECK(same_bits(&a->size_x, &b->size_x, sizeof a->size_x));
    CHECK(same_bits(&a->size_z, &b->size_z, sizeof a->size_z));
    CHECK(same_bits(&a->cpu_seconds, &b->cpu_seconds, sizeof a->cpu_seconds));
    CHECK(a->has_ledger == b->has_ledger);
    CHECK(a->biome_rules == b->biome_rules);
    CHECK(same_bits(&a->ledger.eroded, &b->ledger.eroded, 8));
    CHECK(same_bits(&a->ledger.deposited, &b->ledger.deposited, 8));
    CHECK(same_bits(&a->ledger.exported, &b->ledger.exported, 8));
    CHECK(same_bits(&a->ledger.suspended, &b->ledger.suspended, 8));
    CHECK(a->ledger.droplets == b->ledger.droplets);
    CHECK(a->ledger.steps == b->ledger.steps);
    CHECK_EQ_INT(b->output_count, a->output_count);
    for (uint32_t k = 0; k < a->output_count && k < b->output_count; k++) {
        const trn_gout *x = &a->outputs[k], *y = &b->outputs[k];
        CHECK_EQ_INT(y->kind, x->kind);
        check_same_buf(x->values, y->values);
        check_same_buf(x->source, y->source);
        check_same_buf(x->filled, y->filled);
        check_same_buf(x->flow_dir, y->flow_dir);
        check_same_buf(x->accumulation, y->accumulation);
        if (x->kind != TRN_PIN_DRAINAGE) continue;
        CHECK(same_bits(&x->sea_level, &y->sea_level, sizeof x->sea_level));
        size_t nb = x->basins ? x->basins->count : 0u;
        CHECK(y->basins != NULL);
        if (!y->basins) continue;
        CHECK_EQ_INT(y->basins->count, nb);
        const trn_basin *bx = x->basins ? x->basins->data : NULL, *by = y->basins->data;
        for (size_t i = 0; i < nb && i < y->basins->count; i++) {
            CHECK(bx[i].id == by[i].id);
            CHECK_EQ_INT(by[i].sink_i, bx[i].sink_i);
            CHECK_EQ_INT(by[i].sink_j, bx[i].sink_j);
            CHECK(same_bits(&bx[i].sink_height, &by[i].sink_height, 4));
            CHECK(same_bits(&bx[i].spill_level, &by[i].spill_level, 4));
            CHECK_EQ_INT(by[i].spill_i, bx[i].spill_i);
            CHECK_EQ_INT(by[i].spill_j, bx[i].spill_j);
            CHECK(bx[i].area == by[i].area);
        }
        /* The view is bound to the new buffers. */
        CHECK(y->view.filled == y->filled->data);
        CHECK(y->view.flow_dir == y->flow_dir->data);
        CHECK(y->view.accumulation == y->accumulation->data);
        CHECK(y->view.basins == y->basins->data);
        CHECK_EQ_INT(y->view.basin_count, nb);
        CHECK_EQ_INT(y->view.cells_x, a->cells_x);
        CHECK(same_bits(&y->view.sea_level, &x->sea_level, 8));
    }
    check_same_buf(a->change, b->change);
    CHECK(b->bytes > 0);
    CHECK_EQ_INT(b->refs, 1);
}

/* Serialise, parse, compare, serialise again (byte-identical). */
static void round_trip(const trn_node_result *r)
{
    uint8_t *data = NULL, *again = NULL;
    size_t size = 0, again_size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(r, &data, &size, &e));
    trn_node_result *back = NULL;
    CHECK_OK(trn_node_result_parse(data, size, "rt.tnc", r->key, NULL, &back, &e));
    if (back) {
        check_same_result(r, back);
        CHECK_OK(trn_node_result_serialize(back, &again, &again_size, &e));
        CHECK_EQ_INT(again_size, size);
        CHECK(again && again_size == size && memcmp(again, data, size) == 0);
    }
    trn_node_result_release(back);
    free(again);
    free(data);
}

static void test_round_trip_each_kind(void)
{
    trn_node_result *hf = make_heightfield(0x1122334455667788ull);
    trn_node_result *dr = make_small_drainage(0xfedcba9876543210ull);
    trn_node_result *er = make_erosion(42);
    trn_node_result *full = make_full(0x8000000000000001ull);
    round_trip(hf);
    round_trip(dr);
    round_trip(er);
    round_trip(full);

    /* The full result's sizes follow the documented layout: header, four outputs, change,
     * checksum. */
    const size_t n = 48, basins = full->outputs[2].basins->count;
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(full, &data, &size, &e));
    /* drainage: kind, sea level, 4 counts, source + filled + accumulation (4n each), flow_dir
     * (n), basin count, basins */
    size_t expect =
        108 + 3 * (4 + 8 + 4 * n) + (4 + 8 + 4 * 8 + 13 * n + 8 + 40 * basins) + (8 + 4 * n) + 8;
    CHECK_EQ_INT(size, expect);
    CHECK(data && memcmp(data, "TRNCACHE", 8) == 0);
    CHECK_EQ_INT(data[OFF_VERSION], 1);
    CHECK(rd64_at(data, OFF_KEY) == 0x8000000000000001ull);
    CHECK_EQ_INT(data[OFF_FLAGS], 1 | 4); /* ledger, change; no biome rules */
    CHECK(rd64_at(data, size - 8) == (uint64_t)XXH64(data, size - 8, 0));

    /* The shared source is written twice and read back as its own buffer. */
    trn_node_result *back = NULL;
    CHECK_OK(trn_node_result_parse(data, size, NULL, 0, NULL, &back, &e));
    if (back) {
        CHECK(back->outputs[2].source != back->outputs[0].values);
        CHECK(back->outputs[2].source->data != back->outputs[0].values->data);
        CHECK(memcmp(back->outputs[2].source->data, back->outputs[0].values->data, 4 * n) == 0);
    }
    trn_node_result_release(back);
    free(data);

    /* A result without outputs (zero arrays) round-trips too. */
    trn_node_result *empty = trn_node_result_new(7, 1, 1, 1.0, 1.0);
    round_trip(empty);
    trn_node_result_release(empty);

    trn_node_result_release(full);
    trn_node_result_release(er);
    trn_node_result_release(dr);
    trn_node_result_release(hf);
}

/* ---- rejections ---- */

/* Parse must fail with code at offset, and the message must mention `part`. */
static void expect_fail(const uint8_t *p, size_t size, const trn_cache_file_limits *lim,
                        uint64_t expected_key, trn_status code, int64_t offset, const char *part,
                        int line)
{
    trn_error e;
    trn_node_result *out = (trn_node_result *)&e; /* must be reset to NULL */
    trn_status st = trn_node_result_parse(p, size, "bad.tnc", expected_key, lim, &out, &e);
    trn_test_checks++;
    if (st != code || e.code != code || e.offset != offset || out != NULL ||
        strcmp(e.file, "bad.tnc") != 0 || !strstr(e.message, part)) {
        trn_test_failures++;
        fprintf(stderr, "%s:%d: expected %s at offset %lld mentioning \"%s\", got %s at %lld: %s\n",
                __FILE__, line, trn_status_name(code), (long long)offset, part, trn_status_name(st),
                (long long)e.offset, e.message);
    }
}

#define EXPECT_FAIL(p, size, code, offset, part)                                                   \
    expect_fail(p, size, NULL, 0, code, offset, part, __LINE__)

static void test_truncation(void)
{
    trn_node_result *r = make_heightfield(5);
    uint8_t *f = NULL;
    size_t size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(r, &f, &size, &e));
    /* 108 header + kind 4 + count 8 + 12 floats + checksum 8 */
    CHECK_EQ_INT(size, 176);
    EXPECT_FAIL(f, 0, TRN_ERR_TRUNCATED, 0, "magic");
    EXPECT_FAIL(f, 5, TRN_ERR_TRUNCATED, 0, "magic");
    EXPECT_FAIL(f, 10, TRN_ERR_TRUNCATED, OFF_VERSION, "version");
    EXPECT_FAIL(f, 15, TRN_ERR_TRUNCATED, OFF_KEY, "key");
    EXPECT_FAIL(f, 30, TRN_ERR_TRUNCATED, OFF_SIZE_X, "grid");
    EXPECT_FAIL(f, 50, TRN_ERR_TRUNCATED, OFF_CPU, "cpu_seconds");
    EXPECT_FAIL(f, 60, TRN_ERR_TRUNCATED, OFF_LEDGER, "ledger");
    EXPECT_FAIL(f, 106, TRN_ERR_TRUNCATED, OFF_OUTPUT_COUNT, "output_count");
    EXPECT_FAIL(f, 110, TRN_ERR_TRUNCATED, OFF_OUTPUTS, "output 0 kind");
    EXPECT_FAIL(f, 115, TRN_ERR_TRUNCATED, 112, "output 0 (heightfield) values");
    EXPECT_FAIL(f, 140, TRN_ERR_TRUNCATED, 120, "expected 48 bytes at offset 120");
    EXPECT_FAIL(f, 170, TRN_ERR_TRUNCATED, 168, "checksum");
    /* Every prefix is a truncation, reported no further than where the data ends. */
    int wrong = 0;
    for (size_t cut = 0; cut < size; cut++) {
        trn_node_result *out = NULL;
        trn_status st = trn_node_result_parse(f, cut, NULL, 0, NULL, &out, &e);
        if (st != TRN_ERR_TRUNCATED || e.offset < 0 || e.offset > (int64_t)cut || out) wrong++;
    }
    CHECK_EQ_INT(wrong, 0);

    /* The drainage layout, cut inside each of its sections (9 samples). */
    trn_node_result *d = make_small_drainage(6);
    uint8_t *g = NULL;
    size_t gsize = 0;
    CHECK_OK(trn_node_result_serialize(d, &g, &gsize, &e));
    /* kind 108, sea 112, source 120/128, filled 164/172, flow_dir 208/216, accumulation
     * 225/233, basin count 269, basins 277, checksum 317 */
    CHECK_EQ_INT(gsize, 325);
    EXPECT_FAIL(g, 115, TRN_ERR_TRUNCATED, 112, "output 0 (drainage) sea_level");
    EXPECT_FAIL(g, 150, TRN_ERR_TRUNCATED, 128, "output 0 (drainage) source");
    EXPECT_FAIL(g, 180, TRN_ERR_TRUNCATED, 172, "output 0 (drainage) filled");
    EXPECT_FAIL(g, 220, TRN_ERR_TRUNCATED, 216, "output 0 (drainage) flow_dir");
    EXPECT_FAIL(g, 240, TRN_ERR_TRUNCATED, 233, "output 0 (drainage) accumulation");
    EXPECT_FAIL(g, 272, TRN_ERR_TRUNCATED, 269, "output 0 (drainage) basins");
    EXPECT_FAIL(g, 300, TRN_ERR_TRUNCATED, 277, "expected 40 bytes");
    free(g);
    trn_node_result_release(d);
    free(f);
    trn_node_result_release(r);
}

static void test_header_rejections(void)
{
    trn_node_result *r = make_heightfield(5);
    uint8_t *f = NULL;
    size_t size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(r, &f, &size, &e));
    uint8_t *b = dup_bytes(f, size, 1);

    b[3] = 'X';
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 0, "magic");
    EXPECT_FAIL(b, 5, TRN_ERR_FORMAT, 0, "not a terrane cache file"); /* short and wrong */
    memcpy(b, f, size);

    le32_at(b, OFF_VERSION, 4);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_VERSION, OFF_VERSION, "4 is newer than 3");
    le32_at(b, OFF_VERSION, 0);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_VERSION, "version");
    memcpy(b, f, size);

    le32_at(b, OFF_GRID, 0);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_GRID, "grid: 0 x 2 cells");
    memcpy(b, f, size);
    le64_at(b, OFF_SIZE_X, 0x7ff8000000000000ull); /* NaN */
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_GRID, "finite positive sizes");
    memcpy(b, f, size);

    double minus = -1.0;
    uint64_t bits;
    memcpy(&bits, &minus, 8);
    le64_at(b, OFF_CPU, bits);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_CPU, "cpu_seconds");
    memcpy(b, f, size);

    le32_at(b, OFF_FLAGS, 8);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_FLAGS, "flags: 0x8");
    memcpy(b, f, size);

    le32_at(b, OFF_OUTPUT_COUNT, 5);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_OUTPUT_COUNT, "output_count: 5, at most 4");
    memcpy(b, f, size);

    le32_at(b, OFF_OUTPUTS, 9);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_OUTPUTS, "unknown pin kind 9");
    le32_at(b, OFF_OUTPUTS, TRN_PIN_WATER);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_OUTPUTS, "pin kind 3 (water)");
    memcpy(b, f, size);

    /* Key: a stored key other than the expected one; 0 expects any key. */
    expect_fail(f, size, NULL, 6, TRN_ERR_MISMATCH, OFF_KEY,
                "0000000000000005, expected "
                "0000000000000006",
                __LINE__);
    trn_node_result *out = NULL;
    CHECK_OK(trn_node_result_parse(f, size, NULL, 0, NULL, &out, &e));
    CHECK(out && out->key == 5);
    trn_node_result_release(out);
    out = NULL;
    CHECK_OK(trn_node_result_parse(f, size, NULL, 5, NULL, &out, &e));
    trn_node_result_release(out);

    /* Checksum: its own bytes flipped, or a data byte changed. */
    b[size - 3] ^= 0x01;
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 168, "checksum mismatch");
    memcpy(b, f, size);
    b[130] ^= 0x40;
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 168, "checksum mismatch");
    memcpy(b, f, size);

    /* One byte after the checksum. */
    b[size] = 0;
    EXPECT_FAIL(b, size + 1, TRN_ERR_TRAILING_DATA, 176, "1 bytes after the checksum");

    free(b);
    free(f);
    trn_node_result_release(r);
}

static void test_array_rejections(void)
{
    trn_node_result *r = make_heightfield(5);
    uint8_t *f = NULL;
    size_t size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(r, &f, &size, &e));
    uint8_t *b = dup_bytes(f, size, 0);

    /* An array whose count is not the grid's sample count. */
    le64_at(b, 112, 11);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 112, "values: 11 elements, expected 12");
    le64_at(b, 112, 13);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 112, "13 elements");
    memcpy(b, f, size);

    /* The drainage layout: bad flow code, bad basins, too many basins. */
    trn_node_result *d = make_small_drainage(6);
    uint8_t *g = NULL;
    size_t gsize = 0;
    CHECK_OK(trn_node_result_serialize(d, &g, &gsize, &e));
    uint8_t *h = dup_bytes(g, gsize, 0);
    le64_at(h, 208, 8);
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_FORMAT, 208, "flow_dir: 8 elements, expected 9");
    memcpy(h, g, gsize);
    h[216 + 4] = 9;
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_FORMAT, 220, "sample 4 has code 9");
    memcpy(h, g, gsize);
    le32_at(h, 277 + 8, 3); /* sink_i past cells_x */
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_FORMAT, 277, "basin 0: sink outside the grid");
    memcpy(h, g, gsize);
    le64_at(h, 277, 5); /* id not the sink's index */
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_FORMAT, 277, "basin 0: id");
    memcpy(h, g, gsize);
    le64_at(h, 269, 10); /* more basins than samples */
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_FORMAT, 269, "10 basins, more than the grid's 9 samples");
    le64_at(h, 269, 2); /* the second basin's bytes are not there */
    reseal(h, gsize);
    EXPECT_FAIL(h, gsize, TRN_ERR_TRUNCATED, 277, "expected 80 bytes");
    memcpy(h, g, gsize);

    /* Limits: checked from the counts before anything is allocated. */
    trn_cache_file_limits lim;
    trn_cache_file_limits_default(&lim);
    CHECK(lim.max_samples == (uint64_t)1 << 30 && lim.max_basins == (uint64_t)1 << 26);
    lim.max_basins = 0;
    expect_fail(g, gsize, &lim, 0, TRN_ERR_LIMIT, 269, "1 basins, more than the limit of 0",
                __LINE__);
    lim.max_basins = 1; /* the limit itself is read */
    trn_node_result *one = NULL;
    CHECK_OK(trn_node_result_parse(g, gsize, NULL, 0, &lim, &one, &e));
    CHECK(one && one->outputs[0].basins->count == 1);
    trn_node_result_release(one);
    trn_cache_file_limits_default(&lim);
    lim.max_samples = 8;
    expect_fail(g, gsize, &lim, 0, TRN_ERR_LIMIT, OFF_GRID, "9 samples per array", __LINE__);
    lim.max_samples = 9;
    trn_node_result *out = NULL;
    CHECK_OK(trn_node_result_parse(g, gsize, NULL, 0, &lim, &out, &e));
    trn_node_result_release(out);

    /* 65535 x 65535 cells in a 176-byte file: 2^32 samples, refused by the default limit from
     * the header alone; with no limit the missing 16 GiB are noticed before allocating them. */
    le32_at(b, OFF_GRID, 65535);
    le32_at(b, OFF_CELLS_Z, 65535);
    le64_at(b, 112, (uint64_t)1 << 32);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_LIMIT, OFF_GRID, "4294967296 samples per array");
    lim.max_samples = UINT64_MAX;
    lim.max_basins = UINT64_MAX;
    expect_fail(b, size, &lim, 0, TRN_ERR_TRUNCATED, 120, "expected 17179869184 bytes", __LINE__);
    /* Cells at the u32 maximum: 2^64 samples overflow even 64-bit counts. */
    le32_at(b, OFF_GRID, UINT32_MAX);
    le32_at(b, OFF_CELLS_Z, UINT32_MAX);
    reseal(b, size);
    expect_fail(b, size, &lim, 0, TRN_ERR_LIMIT, OFF_GRID, "are over ", __LINE__);

    free(h);
    free(g);
    trn_node_result_release(d);
    free(b);
    free(f);
    trn_node_result_release(r);
}

static void test_serialize_rejections(void)
{
    trn_error e;
    uint8_t *data = (uint8_t *)&e;
    size_t size = 99;
    trn_node_result *r = make_heightfield(1);

    r->outputs[0].kind = (trn_pin_kind)TRN_PIN_KIND_COUNT;
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_UNSUPPORTED);
    CHECK(data == NULL && size == 0);
    CHECK_CONTAINS(e.message, "pin kind 5 (unknown)");
    r->outputs[0].kind = TRN_PIN_INSTANCES; /* an instances pin without its instances */
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "output 0: instances: none");
    r->outputs[0].kind = TRN_PIN_WATER; /* a water pin without its water */
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "water");
    r->outputs[0].kind = TRN_PIN_HEIGHTFIELD;

    r->outputs[0].values->count = 11;
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "values: 11 elements of 4 bytes, expected 12");
    r->outputs[0].values->count = 12;

    r->output_count = 2; /* output 1 has no array */
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "output 1: values: no array");
    r->output_count = 1;

    r->cells_x = 0;
    CHECK_STATUS(trn_node_result_serialize(r, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    r->cells_x = 3;
    CHECK_STATUS(trn_node_result_serialize(NULL, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_node_result_release(r);

    trn_node_result *d = make_small_drainage(2);
    ((uint8_t *)d->outputs[0].flow_dir->data)[3] = 200;
    CHECK_STATUS(trn_node_result_serialize(d, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "flow_dir: sample 3 has code 200");
    ((uint8_t *)d->outputs[0].flow_dir->data)[3] = TRN_DRAIN_OUTLET;
    ((trn_basin *)d->outputs[0].basins->data)->spill_j = 7;
    CHECK_STATUS(trn_node_result_serialize(d, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "basin 0: spill point outside the grid");
    trn_node_result_release(d);
}

/* ---- the cache folder ---- */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *ent;
    while (d && (ent = readdir(d)))
        if (ent->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static void test_files(void)
{
    char tmp[512], dir[600], path[700], other[700];
    CHECK(trn_test_tmpdir(tmp, sizeof tmp) != NULL);
    snprintf(dir, sizeof dir, "%s/cache/graph", tmp); /* not there yet: created */
    trn_node_result *r = make_full(0x00ab00cd00ef0012ull);
    trn_error e;
    CHECK_OK(trn_node_result_write_file(dir, r, &e));
    snprintf(path, sizeof path, "%s/00ab00cd00ef0012.tnc", dir);
    CHECK(trn_test_exists(path));
    CHECK_EQ_INT(count_entries(dir), 1); /* no temporary file left behind */

    /* The file holds exactly the serialised bytes. */
    uint8_t *data = NULL;
    size_t size = 0, file_size = 0;
    CHECK_OK(trn_node_result_serialize(r, &data, &size, &e));
    uint8_t *file = trn_test_read_file(path, &file_size);
    CHECK(file && file_size == size && memcmp(file, data, size) == 0);

    trn_node_result *back = NULL;
    CHECK_OK(trn_node_result_read_file(dir, r->key, NULL, &back, &e));
    if (back) check_same_result(r, back);
    trn_node_result_release(back);

    /* Writing again replaces the file atomically; a trailing '/' on dir names the same file. */
    char slash[620];
    snprintf(slash, sizeof slash, "%s/", dir);
    r->cpu_seconds = 9.0;
    CHECK_OK(trn_node_result_write_file(slash, r, &e));
    CHECK_EQ_INT(count_entries(dir), 1);
    back = NULL;
    CHECK_OK(trn_node_result_read_file(slash, r->key, NULL, &back, &e));
    CHECK(back && back->cpu_seconds == 9.0);
    trn_node_result_release(back);

    /* Absent: a plain cache miss. */
    back = (trn_node_result *)&e;
    CHECK_STATUS(trn_node_result_read_file(dir, 0x1234, NULL, &back, &e), TRN_ERR_NOT_FOUND);
    CHECK(back == NULL);
    CHECK_EQ_INT(e.code, TRN_ERR_NOT_FOUND);
    snprintf(other, sizeof other, "%s/0000000000001234.tnc", dir);
    CHECK(strcmp(e.file, other) == 0);
    char missing[620];
    snprintf(missing, sizeof missing, "%s/none", tmp);
    CHECK_STATUS(trn_node_result_read_file(missing, 1, NULL, &back, &e), TRN_ERR_NOT_FOUND);

    /* A file under another key's name: the stored key decides (also for key 0). */
    CHECK(trn_test_write_file(other, file, file_size));
    CHECK_STATUS(trn_node_result_read_file(dir, 0x1234, NULL, &back, &e), TRN_ERR_MISMATCH);
    CHECK_EQ_INT(e.offset, OFF_KEY);
    CHECK(strcmp(e.file, other) == 0);
    snprintf(other, sizeof other, "%s/0000000000000000.tnc", dir);
    CHECK(trn_test_write_file(other, file, file_size));
    CHECK_STATUS(trn_node_result_read_file(dir, 0, NULL, &back, &e), TRN_ERR_MISMATCH);
    CHECK(back == NULL);

    /* A damaged file names its path and where it breaks. */
    CHECK(trn_test_write_file(path, file, 100));
    CHECK_STATUS(trn_node_result_read_file(dir, r->key, NULL, &back, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 96); /* the ledger's steps, 4 of its 8 bytes there */
    CHECK(strcmp(e.file, path) == 0);
    CHECK(back == NULL);

    /* Limits reach the parser. */
    CHECK(trn_test_write_file(path, file, file_size));
    trn_cache_file_limits lim;
    trn_cache_file_limits_default(&lim);
    lim.max_samples = 47;
    CHECK_STATUS(trn_node_result_read_file(dir, r->key, &lim, &back, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, OFF_GRID);

    /* A result that cannot be stored leaves no file and names the one it was meant for. */
    trn_node_result *bad = make_heightfield(0x77);
    bad->outputs[0].kind = (trn_pin_kind)TRN_PIN_KIND_COUNT;
    CHECK_STATUS(trn_node_result_write_file(dir, bad, &e), TRN_ERR_UNSUPPORTED);
    snprintf(other, sizeof other, "%s/0000000000000077.tnc", dir);
    CHECK(strcmp(e.file, other) == 0);
    CHECK(!trn_test_exists(other));
    trn_node_result_release(bad);

    free(file);
    free(data);
    trn_node_result_release(r);
}

/* Version 3: the 3 x 2 heightfield with a transport array, and two instances. Layout: output 0
 * at 108 (kind, count, 48 bytes), output 1 at 168 (kind, count 2, two 60-byte instances at 180
 * and 240), the transport mask at 300 and its array at 304, the checksum at 360. */
#define V3_INSTANCES 168u
#define V3_INSTANCE0 180u
#define V3_INSTANCE1 240u
#define V3_MASK 300u
#define V3_SIZE 368u
static trn_node_result *make_v3(uint64_t key)
{
    trn_node_result *r = make_heightfield(key);
    r->outputs[0].transport = float_buf(12, 5);
    r->output_count = 2;
    r->outputs[1].kind = TRN_PIN_INSTANCES;
    trn_instances *in = calloc(1, sizeof *in);
    in->count = 2;
    in->items = calloc(2, sizeof *in->items);
    in->items[0] = (trn_instance){0, 7, 1, 1.25, -0.0, 2.5, 359.75, 0.5};
    in->items[1] = (trn_instance){1, -3, 0, 0.125, 4.0, 0.0, 0.0, 2.0};
    r->outputs[1].instances = trn_gbuf_wrap_instances(in);
    trn_node_result_measure(r);
    return r;
}

/* ---- corpus seeds: written by the serializer, pinned here byte for byte ---- */

typedef struct seed_file {
    const char *name;
    uint8_t *data;
    size_t size;
} seed_file;

#define SEED_COUNT 12

/* Build the fuzz corpus's seeds: three valid files and damaged copies of them. */
static void make_seeds(seed_file *seeds)
{
    trn_error e;
    trn_node_result *results[3] = {make_heightfield(0x5eed000000000001ull),
                                   make_small_drainage(0x5eed000000000002ull),
                                   make_erosion(0x5eed000000000003ull)};
    const char *valid_names[3] = {"heightfield_3x2.tnc", "drainage_2x2.tnc",
                                  "erosion_ledger_change.tnc"};
    for (int k = 0; k < 3; k++) {
        seeds[k].name = valid_names[k];
        CHECK_OK(trn_node_result_serialize(results[k], &seeds[k].data, &seeds[k].size, &e));
        trn_node_result_release(results[k]);
    }
    const seed_file *hf = &seeds[0], *dr = &seeds[1];
    seed_file *s = &seeds[3];
    s->name = "bad_truncated_header.tnc";
    s->data = dup_bytes(hf->data, 60, 0);
    s->size = 60;
    s = &seeds[4];
    s->name = "bad_truncated_basins.tnc";
    s->data = dup_bytes(dr->data, 290, 0);
    s->size = 290;
    s = &seeds[5];
    s->name = "bad_checksum.tnc";
    s->data = dup_bytes(hf->data, hf->size, 0);
    s->size = hf->size;
    s->data[130] ^= 0x40;
    s = &seeds[6];
    s->name = "bad_version4.tnc";
    s->data = dup_bytes(hf->data, hf->size, 0);
    s->size = hf->size;
    le32_at(s->data, OFF_VERSION, 4);
    reseal(s->data, s->size);
    s = &seeds[7];
    s->name = "bad_array_length.tnc";
    s->data = dup_bytes(dr->data, dr->size, 0);
    s->size = dr->size;
    le64_at(s->data, 164, 8); /* filled's count */
    reseal(s->data, s->size);
    s = &seeds[8];
    s->name = "bad_flow_dir.tnc";
    s->data = dup_bytes(dr->data, dr->size, 0);
    s->size = dr->size;
    s->data[220] = 9;
    reseal(s->data, s->size);
    s = &seeds[9];
    s->name = "bad_trailing_byte.tnc";
    s->data = dup_bytes(hf->data, hf->size, 1);
    s->size = hf->size + 1;
    /* Version 3: a transport array and instances; then its instances out of order. */
    s = &seeds[10];
    s->name = "transport_instances_v3.tnc";
    trn_node_result *v3 = make_v3(0x5eed000000000004ull);
    CHECK_OK(trn_node_result_serialize(v3, &s->data, &s->size, &e));
    trn_node_result_release(v3);
    s = &seeds[11];
    s->name = "bad_instance_order.tnc";
    s->data = dup_bytes(seeds[10].data, seeds[10].size, 0);
    s->size = seeds[10].size;
    le32_at(s->data, V3_INSTANCE1, 0); /* rule 0 again, before the first one's (cz, cx) */
    reseal(s->data, s->size);
}

static void free_seeds(seed_file *seeds)
{
    for (int k = 0; k < SEED_COUNT; k++)
        free(seeds[k].data);
}

/* A water output (one lake resolved on the heightfield) and a note: written as version 2, read
 * back to the same bytes; a version 1 file may hold neither. */
static void test_water_and_note(void)
{
    trn_node_result *r = make_heightfield(77);
    trn_field ground = {3, 2, 30.0, 20.0, r->outputs[0].values->data, 0, 0};
    trn_water_body lake;
    trn_water_body_init(&lake, TRN_WATER_LAKE, "pond");
    lake.level = 0.0;
    lake.center_x = 10.0;
    lake.center_z = 10.0;
    lake.radius = 100.0;
    lake.carve = false;
    trn_water *w = calloc(1, sizeof *w);
    trn_error e;
    CHECK_OK(trn_water_resolve(&ground, &lake, 1, NULL, w, &e));
    trn_water_body_dispose(&lake);
    r->output_count = 2;
    r->outputs[1].kind = TRN_PIN_WATER;
    r->outputs[1].water = trn_gbuf_wrap_water(w);
    snprintf(r->note, sizeof r->note, "a note of the node");
    trn_node_result_measure(r);
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_OK(trn_node_result_serialize(r, &data, &size, &e));
    CHECK_EQ_INT(data[OFF_VERSION], 2);
    CHECK_EQ_INT(data[OFF_FLAGS], 8); /* the note */
    trn_node_result *back = NULL;
    CHECK_OK(trn_node_result_parse(data, size, NULL, 0, NULL, &back, &e));
    if (back) {
        CHECK(strcmp(back->note, "a note of the node") == 0);
        const trn_water *bw = back->outputs[1].water ? back->outputs[1].water->data : NULL;
        CHECK(bw && bw->body_count == 1 && strcmp(bw->bodies[0].id, "pond") == 0);
        CHECK(bw && bw->bodies[0].wet_samples == w->bodies[0].wet_samples);
        uint8_t *again = NULL;
        size_t again_size = 0;
        CHECK_OK(trn_node_result_serialize(back, &again, &again_size, &e));
        CHECK(again_size == size && again && memcmp(again, data, size) == 0);
        free(again);
    }
    trn_node_result_release(back);

    /* Version 1 knows neither water nor notes. */
    uint8_t *b = dup_bytes(data, size, 0);
    le32_at(b, OFF_VERSION, 1);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_FLAGS, "flags");
    b[OFF_FLAGS] = 0;
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, 108 + 4 + 8 + 48, "pin kind 3 (water)");
    free(b);
    /* A note of 0 bytes is refused. */
    b = dup_bytes(data, size, 0);
    const size_t note_at = size - 8 - 4 - strlen("a note of the node");
    le32_at(b, note_at, 0);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, (int64_t)note_at, "note: 0 bytes");
    free(b);
    free(data);
    trn_node_result_release(r);
}

static void test_corpus_is_current(void)
{
    seed_file seeds[SEED_COUNT];
    make_seeds(seeds);
    static const trn_status expect[SEED_COUNT] = {
        TRN_OK,         TRN_OK,          TRN_OK,         TRN_ERR_TRUNCATED, TRN_ERR_TRUNCATED,
        TRN_ERR_FORMAT, TRN_ERR_VERSION, TRN_ERR_FORMAT, TRN_ERR_FORMAT,    TRN_ERR_TRAILING_DATA,
        TRN_OK,         TRN_ERR_FORMAT};
    for (int k = 0; k < SEED_COUNT; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/fuzz/corpus/fuzz_cache_file/%s", TRN_SOURCE_DIR,
                 seeds[k].name);
        size_t size = 0;
        uint8_t *file = trn_test_read_file(path, &size);
        /* Any change to the format shows up here: rerun with --write-corpus on purpose. */
        if (!file || size != seeds[k].size || memcmp(file, seeds[k].data, size) != 0) {
            trn_test_failures++;
            fprintf(stderr, "%s differs from what the serializer writes now\n", path);
        }
        trn_test_checks++;
        trn_node_result *out = NULL;
        trn_error e;
        CHECK_STATUS(trn_node_result_parse(seeds[k].data, seeds[k].size, NULL, 0, NULL, &out, &e),
                     expect[k]);
        trn_node_result_release(out);
        free(file);
    }
    free_seeds(seeds);
}

static int write_corpus(const char *dir)
{
    seed_file seeds[SEED_COUNT];
    make_seeds(seeds);
    int failed = 0;
    for (int k = 0; k < SEED_COUNT; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, seeds[k].name);
        if (!trn_test_write_file(path, seeds[k].data, seeds[k].size)) {
            fprintf(stderr, "%s: cannot write\n", path);
            failed = 1;
        }
    }
    free_seeds(seeds);
    return failed;
}

/* Basin ids must strictly increase: a second basin after the first (id 4, sink (1, 1)) is
 * read when its id is larger, refused at its own offset when equal or smaller. */
static void test_basin_id_order(void)
{
    trn_node_result *d = make_small_drainage(6);
    uint8_t *g = NULL;
    size_t gsize = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(d, &g, &gsize, &e));
    CHECK_EQ_INT(gsize, 325);
    /* count at 269, basin 0 at 277..317, checksum 317: insert basin 1 at 317. */
    const size_t size = gsize + 40;
    uint8_t *h = calloc(size, 1);
    memcpy(h, g, 317);
    memcpy(h + 317, g + 277, 40);
    le64_at(h, 269, 2);
    /* basin 1: sink (2, 1), id 1 * 3 + 2 = 5, spill at its own sink */
    le64_at(h, 317, 5);
    le32_at(h, 317 + 8, 2);
    le32_at(h, 317 + 24, 2);
    reseal(h, size);
    trn_node_result *out = NULL;
    CHECK_OK(trn_node_result_parse(h, size, "two.tnc", 0, NULL, &out, &e));
    CHECK(out && out->outputs[0].basins && out->outputs[0].basins->count == 2);
    trn_node_result_release(out);
    /* the same sink twice: equal ids */
    memcpy(h + 317, g + 277, 40);
    reseal(h, size);
    EXPECT_FAIL(h, size, TRN_ERR_FORMAT, 317, "basin 1: ids not strictly increasing");
    /* a smaller id second: sink (0, 1), id 3 */
    le64_at(h, 317, 3);
    le32_at(h, 317 + 8, 0);
    reseal(h, size);
    EXPECT_FAIL(h, size, TRN_ERR_FORMAT, 317, "basin 1: ids not strictly increasing");
    free(h);
    free(g);
    trn_node_result_release(d);
}

/* Field by field and bit for bit (the struct has padding). */
static bool same_instance(const trn_instance *a, const trn_instance *b)
{
    return a->rule == b->rule && a->cx == b->cx && a->cz == b->cz && memcmp(&a->x, &b->x, 8) == 0 &&
           memcmp(&a->y, &b->y, 8) == 0 && memcmp(&a->z, &b->z, 8) == 0 &&
           memcmp(&a->yaw, &b->yaw, 8) == 0 && memcmp(&a->scale, &b->scale, 8) == 0;
}

/* Version 3 round-trips transport and instances bit for bit (a -0 height included), refuses
 * them in older versions, and checks instances like basins: order, finite numbers, the limit. */
static void test_transport_and_instances(void)
{
    trn_node_result *r = make_v3(0x33);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    CHECK_OK(trn_node_result_serialize(r, &data, &size, &e));
    CHECK_EQ_INT(size, V3_SIZE);
    CHECK_EQ_INT(data[OFF_VERSION], 3);
    CHECK_EQ_INT(data[OFF_FLAGS], 16); /* transport */
    CHECK_EQ_INT(rd64_at(data, V3_INSTANCES + 4), 2);
    CHECK_EQ_INT(data[V3_MASK], 1); /* output 0 */
    trn_node_result *back = NULL;
    CHECK_OK(trn_node_result_parse(data, size, NULL, 0, NULL, &back, &e));
    if (back) {
        CHECK(back->outputs[0].transport &&
              memcmp(back->outputs[0].transport->data, r->outputs[0].transport->data, 48) == 0);
        const trn_instances *bi =
            back->outputs[1].instances ? back->outputs[1].instances->data : NULL;
        const trn_instances *ri = r->outputs[1].instances->data;
        CHECK(bi && bi->count == 2 && same_instance(&bi->items[0], &ri->items[0]) &&
              same_instance(&bi->items[1], &ri->items[1]));
        CHECK(bi && signbit(bi->items[0].y)); /* -0 stays -0 */
        CHECK(back->bytes > r->outputs[0].values->count * 4u * 2u + 2u * sizeof(trn_instance));
        uint8_t *again = NULL;
        size_t again_size = 0;
        CHECK_OK(trn_node_result_serialize(back, &again, &again_size, &e));
        CHECK(again_size == size && again && memcmp(again, data, size) == 0);
        free(again);
    }
    trn_node_result_release(back);

    /* Version 2 knows neither the transport flag nor instances. */
    uint8_t *b = dup_bytes(data, size, 0);
    le32_at(b, OFF_VERSION, 2);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_FLAGS, "flags: 0x10 has bits other than 0xf");
    b[OFF_FLAGS] = 0;
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_INSTANCES, "pin kind 4 (instances)");
    memcpy(b, data, size);
    /* Instances out of order, the same site twice, a number that is not finite. */
    le32_at(b, V3_INSTANCE1, 0);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_INSTANCE1, "instance 1: not after the previous one");
    memcpy(b, data, size);
    le32_at(b, V3_INSTANCE1, 0);
    le64_at(b, V3_INSTANCE1 + 4, 7);
    le64_at(b, V3_INSTANCE1 + 12, 1);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_INSTANCE1, "instance 1: not after the previous one");
    le32_at(b, V3_INSTANCE1, 0);
    le64_at(b, V3_INSTANCE1 + 4, 8); /* cx 8 after cx 7 in the same row: in order */
    reseal(b, size);
    trn_node_result *ok = NULL;
    CHECK_OK(trn_node_result_parse(b, size, NULL, 0, NULL, &ok, &e));
    trn_node_result_release(ok);
    memcpy(b, data, size);
    le64_at(b, V3_INSTANCE0 + 20 + 16, 0x7ff0000000000000ull); /* z = infinity */
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_INSTANCE0, "instance 0: a position, yaw or scale");
    memcpy(b, data, size);
    /* The transport mask: an output that is not a field, none at all. */
    le32_at(b, V3_MASK, 2);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_MASK, "names output 1");
    le32_at(b, V3_MASK, 0);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, V3_MASK, "transport outputs: 0");
    memcpy(b, data, size);
    /* Cut inside an instance and inside the transport array. */
    EXPECT_FAIL(b, V3_INSTANCE1 + 10, TRN_ERR_TRUNCATED, V3_INSTANCE0, "expected 120 bytes");
    EXPECT_FAIL(b, V3_MASK + 20, TRN_ERR_TRUNCATED, V3_MASK + 12, "output 0 transport");
    /* The instance limit: the count itself is read, one over is refused before any memory. */
    trn_cache_file_limits lim;
    trn_cache_file_limits_default(&lim);
    CHECK(lim.max_instances == (uint64_t)1 << 27);
    lim.max_instances = 2;
    CHECK_OK(trn_node_result_parse(data, size, NULL, 0, &lim, &ok, &e));
    trn_node_result_release(ok);
    lim.max_instances = 1;
    expect_fail(data, size, &lim, 0, TRN_ERR_LIMIT, V3_INSTANCES + 4,
                "2 instances, more than the limit of 1", __LINE__);
    free(b);

    /* The writer refuses what the reader refuses. */
    trn_instances *ri = r->outputs[1].instances->data;
    ri->items[1].scale = NAN;
    CHECK_STATUS(trn_node_result_serialize(r, &b, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "output 1: instance 1: a position, yaw or scale");
    ri->items[1].scale = 2.0;
    ri->items[1].rule = 0;
    CHECK_STATUS(trn_node_result_serialize(r, &b, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "not after the previous one");
    ri->items[1].rule = 1;
    r->outputs[1].transport = trn_gbuf_retain(r->outputs[0].transport);
    CHECK_STATUS(trn_node_result_serialize(r, &b, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "output 1 (instances): carries no transport");
    trn_gbuf_release(r->outputs[1].transport);
    r->outputs[1].transport = NULL;
    /* Without transport or instances a result keeps its older version's bytes. */
    trn_gbuf_release(r->outputs[0].transport);
    r->outputs[0].transport = NULL;
    r->output_count = 1;
    CHECK_OK(trn_node_result_serialize(r, &b, &size, &e));
    CHECK_EQ_INT(b[OFF_VERSION], 1);
    CHECK_EQ_INT(size, 176);
    /* ... and reads back only under that version: one spelling per result. */
    le32_at(b, OFF_VERSION, 3);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_VERSION, "version: 3, expected 1");
    le32_at(b, OFF_VERSION, 2);
    reseal(b, size);
    EXPECT_FAIL(b, size, TRN_ERR_FORMAT, OFF_VERSION, "version: 2, expected 1");
    free(b);
    free(data);
    trn_node_result_release(r);
}

/* The cache directory's budget: least recently used results out first, the kept one and every
 * file that is not a result left alone; the platform directory from XDG_CACHE_HOME or HOME. */
static bool put_file(const char *dir, const char *name, size_t bytes, time_t when)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *data = calloc(1, bytes ? bytes : 1);
    const bool ok = data && trn_test_write_file(path, data, bytes);
    free(data);
    struct timespec t[2] = {{when, 0}, {when, 0}};
    return ok && utimensat(AT_FDCWD, path, t, 0) == 0;
}

static bool has_file(const char *dir, const char *name)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return trn_test_exists(path);
}

static void test_dir_budget(void)
{
    char dir[512], cdir[700];
    CHECK(trn_test_tmpdir(dir, sizeof dir));
    snprintf(cdir, sizeof cdir, "%s/budget", dir);
    CHECK(mkdir(cdir, 0755) == 0);
    const char *a = "00000000000000a1.tnc", *b = "00000000000000b2.tnc",
               *c = "00000000000000c3.tnc", *d = "00000000000000d4.tnc";
    CHECK(put_file(cdir, a, 100, 1000)); /* oldest */
    CHECK(put_file(cdir, b, 100, 3000));
    CHECK(put_file(cdir, c, 100, 2000));
    CHECK(put_file(cdir, d, 100, 4000)); /* newest */
    CHECK(put_file(cdir, "notes.txt", 5000, 10));          /* not a result */
    CHECK(put_file(cdir, "00000000000000E5.tnc", 5000, 10)); /* upper case: not ours */
    CHECK(put_file(cdir, "00000000000000e5.tnc.tmp", 5000, 10));
    /* Within budget: nothing goes. */
    CHECK_EQ_INT((long long)trn_cache_dir_trim(cdir, 400, NULL), 0);
    CHECK(has_file(cdir, a) && has_file(cdir, d));
    /* 250 bytes: the two least recently used go (a at 1000, then c at 2000), not b. */
    CHECK_EQ_INT((long long)trn_cache_dir_trim(cdir, 250, NULL), 200);
    CHECK(!has_file(cdir, a) && !has_file(cdir, c) && has_file(cdir, b) && has_file(cdir, d));
    /* A read touches a result: b becomes the newest, so d goes first now. */
    trn_cache_file_touch(cdir, b);
    CHECK_EQ_INT((long long)trn_cache_dir_trim(cdir, 100, NULL), 100);
    CHECK(has_file(cdir, b) && !has_file(cdir, d));
    /* The kept file stays even over budget. */
    CHECK_EQ_INT((long long)trn_cache_dir_trim(cdir, 0, b), 0);
    CHECK(has_file(cdir, b));
    CHECK_EQ_INT((long long)trn_cache_dir_trim(cdir, 0, NULL), 100);
    CHECK(!has_file(cdir, b));
    CHECK(has_file(cdir, "notes.txt") && has_file(cdir, "00000000000000E5.tnc") &&
          has_file(cdir, "00000000000000e5.tnc.tmp"));
    CHECK_EQ_INT((long long)trn_cache_dir_trim("/nonexistent/terrane-cache", 0, NULL), 0);

    /* The platform directory. */
    char buf[1024];
    const char *old_xdg = getenv("XDG_CACHE_HOME"), *old_home = getenv("HOME");
    char keep_xdg[1024] = "", keep_home[1024] = "";
    if (old_xdg) snprintf(keep_xdg, sizeof keep_xdg, "%s", old_xdg);
    if (old_home) snprintf(keep_home, sizeof keep_home, "%s", old_home);
    setenv("XDG_CACHE_HOME", "/x/cache", 1);
    setenv("HOME", "/home/u", 1);
    CHECK_OK(trn_graph_cache_dir_default(buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/x/cache/terrane/nodes") == 0);
    setenv("XDG_CACHE_HOME", "relative/cache", 1); /* not absolute: ignored */
    CHECK_OK(trn_graph_cache_dir_default(buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/home/u/.cache/terrane/nodes") == 0);
    unsetenv("XDG_CACHE_HOME");
    CHECK_OK(trn_graph_cache_dir_default(buf, sizeof buf, NULL));
    CHECK(strcmp(buf, "/home/u/.cache/terrane/nodes") == 0);
    CHECK_STATUS(trn_graph_cache_dir_default(buf, 10, NULL), TRN_ERR_LIMIT);
    CHECK(buf[0] == '\0');
    unsetenv("HOME");
    trn_error e;
    CHECK_STATUS(trn_graph_cache_dir_default(buf, sizeof buf, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "neither XDG_CACHE_HOME nor HOME");
    if (keep_xdg[0]) setenv("XDG_CACHE_HOME", keep_xdg, 1);
    if (keep_home[0]) setenv("HOME", keep_home, 1);
}

int main(int argc, char **argv)
{
    /* test_cache_file --write-corpus fuzz/corpus/fuzz_cache_file rewrites the seeds. */
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0) return write_corpus(argv[2]);
    RUN(test_round_trip_each_kind);
    RUN(test_truncation);
    RUN(test_header_rejections);
    RUN(test_array_rejections);
    RUN(test_serialize_rejections);
    RUN(test_water_and_note);
    RUN(test_transport_and_instances);
    RUN(test_files);
    RUN(test_dir_budget);
    RUN(test_basin_id_order);
    RUN(test_corpus_is_current);
    return trn_test_finish();
}
