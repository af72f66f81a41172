/* Tests for src/core: errors, checked arithmetic, cursor, grids, atomic writes, mapped reads. */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "core/fileio.h"
#include "core/numtext.h"
#include "core/progress.h"
#include "test.h"

static void test_status_names(void)
{
    CHECK(strcmp(trn_status_name(TRN_OK), "TRN_OK") == 0);
    CHECK(strcmp(trn_status_name(TRN_ERR_TRUNCATED), "TRN_ERR_TRUNCATED") == 0);
    CHECK(strcmp(trn_status_name((trn_status)999), "TRN_ERR_UNKNOWN") == 0);
    CHECK_EQ_INT(TRN_ERR_CANCELLED, 11); /* codes are never renumbered */
}

static void test_error_format(void)
{
    trn_error e;
    CHECK_EQ_INT(trn_error_set(&e, TRN_ERR_FORMAT, "a.ter", 42, "bad %s", "thing"), TRN_ERR_FORMAT);
    char buf[256];
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf), "a.ter: offset 42: bad thing") == 0);
    trn_error_set_position(&e, 3, 7);
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf), "a.ter:3:7: bad thing") == 0);
    CHECK_EQ_INT(trn_error_set(NULL, TRN_ERR_IO, NULL, -1, "x"), TRN_ERR_IO);
    trn_error_clear(NULL);
    /* A node is named once: prefixed when the message does not name it, never twice. */
    trn_error_set(&e, TRN_ERR_LIMIT, NULL, -1, "out of room");
    snprintf(e.node_id, sizeof e.node_id, "w");
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf), "node 'w': out of room") == 0);
    trn_error_set(&e, TRN_ERR_LIMIT, NULL, -1, "node 'w' (water_body): out of room");
    snprintf(e.node_id, sizeof e.node_id, "w");
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf), "node 'w' (water_body): out of room") == 0);
    trn_error_set(&e, TRN_ERR_LIMIT, NULL, -1, "graph.nodes[1].params.p: node 'w' (water_body): x");
    snprintf(e.node_id, sizeof e.node_id, "w");
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf),
                 "graph.nodes[1].params.p: node 'w' (water_body): x") == 0);
    /* Another node named in the message is not this one. */
    trn_error_set(&e, TRN_ERR_LIMIT, NULL, -1, "the largest is node 'ww' (water_body)");
    snprintf(e.node_id, sizeof e.node_id, "w");
    CHECK(strcmp(trn_error_format(&e, buf, sizeof buf),
                 "node 'w': the largest is node 'ww' (water_body)") == 0);
}

static void test_checked(void)
{
    size_t out = 7;
    CHECK(trn_mul_size(3, 4, &out) && out == 12);
    CHECK(!trn_mul_size(SIZE_MAX / 2, 3, &out));
    CHECK(!trn_add_size(SIZE_MAX, 1, &out));
    uint64_t o64;
    CHECK(!trn_mul_u64(UINT64_MAX, 2, &o64));
    CHECK(trn_add_u64(1, 2, &o64) && o64 == 3);
}

static void test_cursor(void)
{
    const uint8_t bytes[] = {1, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0xff};
    trn_cursor c;
    trn_cursor_init(&c, bytes, sizeof bytes);
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    CHECK(trn_cursor_u8(&c, &u8) && u8 == 1);
    CHECK(trn_cursor_u16le(&c, &u16) && u16 == 0x1234);
    CHECK(trn_cursor_u32le(&c, &u32) && u32 == 0x12345678);
    CHECK(!trn_cursor_u16le(&c, &u16));
    CHECK_EQ_INT(c.pos, 7); /* a failed read does not move */
    CHECK(trn_cursor_u8(&c, &u8) && u8 == 0xff);
    CHECK(!trn_cursor_u8(&c, &u8));
    CHECK(!trn_cursor_skip(&c, SIZE_MAX));
}

static void test_grids(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 128, 128, 256.0, 256.0, NULL));
    CHECK_EQ_INT(trn_field_sample_count(&f), 129 * 129);
    f.heights[5] = -3.0f;
    f.heights[100] = 9.5f;
    float lo, hi;
    trn_field_range(&f, &lo, &hi);
    CHECK(lo == -3.0f && hi == 9.5f);
    trn_field_dispose(&f);
    trn_field_dispose(NULL);
    trn_error e;
    CHECK_STATUS(trn_field_init(&f, UINT32_MAX, UINT32_MAX, 1, 1, &e), TRN_ERR_OVERFLOW);
    trn_labels l;
    CHECK_OK(trn_labels_init(&l, 3, 3, NULL));
    CHECK_OK(trn_labels_add_name(&l, "grass", 5, NULL));
    CHECK_OK(trn_labels_add_name(&l, "rock!", 4, NULL));
    CHECK_EQ_INT(l.name_count, 2);
    CHECK(strcmp(l.names[1], "rock") == 0);
    trn_labels_dispose(&l);
    trn_labels_dispose(NULL);
    trn_mask m;
    CHECK_OK(trn_mask_init(&m, 1, 1, NULL));
    trn_mask_dispose(&m);
}

static void test_atomic_write(void)
{
    char dir[512], path[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/out.bin", dir);
    CHECK_OK(trn_file_write_atomic(path, "hello", 5, NULL));
    size_t n;
    uint8_t *b = trn_test_read_file(path, &n);
    CHECK(b && n == 5 && memcmp(b, "hello", 5) == 0);
    free(b);
    /* An aborted write leaves the old file intact and no temp file behind. */
    trn_atomic_file af;
    CHECK_OK(trn_atomic_file_open(&af, path, NULL));
    trn_atomic_file_write(&af, "partial", 7);
    trn_atomic_file_abort(&af);
    b = trn_test_read_file(path, &n);
    CHECK(b && n == 5 && memcmp(b, "hello", 5) == 0);
    free(b);
    /* Writing into a folder that does not exist fails cleanly. */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.bin", dir);
    trn_error e;
    CHECK_STATUS(trn_file_write_atomic(bad, "x", 1, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.file, "x.bin");
    /* mkdir -p then read back through the mapped reader. */
    snprintf(bad, sizeof bad, "%s/a/b/c", dir);
    CHECK_OK(trn_mkdir_p(bad, NULL));
    trn_mapped_file mf;
    CHECK_OK(trn_mapped_file_open(&mf, path, 0, NULL));
    CHECK(mf.size == 5 && memcmp(mf.data, "hello", 5) == 0);
    trn_mapped_file_close(&mf);
    CHECK_STATUS(trn_mapped_file_open(&mf, path, 4, &e), TRN_ERR_LIMIT);
    CHECK_STATUS(trn_mapped_file_open(&mf, bad, 0, &e), TRN_ERR_IO);
    snprintf(bad, sizeof bad, "%s/missing", dir);
    CHECK_STATUS(trn_mapped_file_open(&mf, bad, 0, &e), TRN_ERR_NOT_FOUND);
    /* A large file goes through mmap. */
    size_t big = 3u << 20;
    uint8_t *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)(i * 7);
    CHECK_OK(trn_file_write_atomic(path, data, big, NULL));
    CHECK_OK(trn_mapped_file_open(&mf, path, 0, NULL));
    CHECK(mf.map_base != NULL && mf.size == big && memcmp(mf.data, data, big) == 0);
    trn_mapped_file_close(&mf);
    free(data);
}

/* Copies file to file land the same bytes whichever way the system copies them; a source that
 * ends early fails the commit and leaves the old file. */
static void test_atomic_copy(void)
{
    char dir[512], src[600], path[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(src, sizeof src, "%s/src.bin", dir);
    snprintf(path, sizeof path, "%s/out.bin", dir);
    const size_t big = (3u << 20) + 777;
    uint8_t *data = malloc(big);
    for (size_t i = 0; i < big; i++)
        data[i] = (uint8_t)(i * 13 + (i >> 11));
    CHECK(trn_test_write_file(src, data, big));
    int fd = open(src, O_RDONLY);
    CHECK(fd >= 0);
    for (int way = 0; way < 3; way++) {
        trn_atomic_file_copy_way(way);
        trn_atomic_file af;
        CHECK_OK(trn_atomic_file_open(&af, path, NULL));
        trn_atomic_file_write(&af, "head", 4);
        CHECK(trn_atomic_file_copy(&af, fd, 100, big - 200));
        CHECK_OK(trn_atomic_file_commit(&af, NULL));
        size_t n = 0;
        uint8_t *b = trn_test_read_file(path, &n);
        CHECK(b && n == big - 196 && memcmp(b, "head", 4) == 0 &&
              memcmp(b + 4, data + 100, big - 200) == 0);
        free(b);
        /* Past the end of the source: refused at commit, the file stays. */
        CHECK_OK(trn_atomic_file_open(&af, path, NULL));
        CHECK(!trn_atomic_file_copy(&af, fd, big - 10, 11));
        trn_error e;
        CHECK_STATUS(trn_atomic_file_commit(&af, &e), TRN_ERR_IO);
        b = trn_test_read_file(path, &n);
        CHECK(b && n == big - 196);
        free(b);
    }
    trn_atomic_file_copy_way(0);
    close(fd);
    free(data);
}

static int cancel_at_half(double done, const char *stage, void *user)
{
    (void)stage;
    double *last = user;
    *last = done;
    return done >= 0.5 ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_progress(void)
{
    double last = -1;
    trn_progress root = trn_progress_make(cancel_at_half, &last);
    trn_progress sub = trn_progress_sub(&root, 0.5, 1.0);
    CHECK(!trn_progress_report(&root, 0.25, "a"));
    CHECK(last == 0.25);
    CHECK(trn_progress_report(&sub, 0.0, "b"));
    CHECK(last == 0.5);
    CHECK(!trn_progress_report(NULL, 0.5, "c"));
}

static void test_numtext(void)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {{0.1, "0.1"},
                 {-0.0, "0"},
                 {1e21, "1e+21"},
                 {9007199254740992.0, "9007199254740992"},
                 {1.0 / 3.0, "0.3333333333333333"},
                 {-2.5, "-2.5"},
                 {5e-324, "5e-324"},
                 {NAN, "nan"},
                 {-INFINITY, "-inf"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char out[40];
        trn_double_text(cases[k].v, out);
        CHECK(strcmp(out, cases[k].text) == 0);
        if (strcmp(out, cases[k].text) != 0) fprintf(stderr, "  %s vs %s\n", out, cases[k].text);
        if (isfinite(cases[k].v)) CHECK(trn_text_double(out) == cases[k].v);
    }
    char out[40];
    trn_float_text(0.1f, out);
    CHECK(strcmp(out, "0.1") == 0);
    trn_float_text(16777216.0f, out);
    CHECK(strcmp(out, "16777216") == 0);
    char buf[80];
    json_t *s = json_string("a long string that goes well beyond forty bytes of text");
    CHECK(strcmp(trn_json_describe(s, buf, sizeof buf),
                 "the string \"a long string that goes well beyond fort...\"") == 0);
    json_decref(s);
    json_t *r = json_real(0.25), *i = json_integer(-5), *o = json_object();
    CHECK(strcmp(trn_json_describe(r, buf, sizeof buf), "0.25") == 0);
    CHECK(strcmp(trn_json_describe(i, buf, sizeof buf), "-5") == 0);
    CHECK(strcmp(trn_json_describe(o, buf, sizeof buf), "an object") == 0);
    json_decref(r);
    json_decref(i);
    json_decref(o);
}

/* JSON dumped with its reals in their shortest form, reals kept reals, strings untouched. */
/* The shortest text of a double, computed the long way (%.1g .. %.17g). */
static void shortest_slow(double v, char out[40])
{
    for (int p = 1; p <= 17; p++) {
        snprintf(out, 40, "%.*g", p, v);
        if (strtod(out, NULL) == v) return;
    }
}

/* Remembered texts (the second time a number is written) are the texts of those numbers: many
 * more numbers than the memory holds, each written twice and interleaved so that they evict
 * each other, against the long way. */
static void test_numtext_remembered(void)
{
    enum { N = 5000 };
    uint64_t x = 88172645463325252u;
    double *v = malloc(N * sizeof *v);
    CHECK(v != NULL);
    if (!v) return;
    for (int i = 0; i < N; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v[i] = (double)(x >> 11) / 9007199254740992.0 * 1000.0 - 500.0;
    }
    int wrong = 0;
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < N; i++) {
            const int k = pass == 1 ? N - 1 - i : (i * 7) % N;
            char fast[40], slow[40];
            trn_double_text(v[k], fast);
            shortest_slow(v[k], slow);
            if (strcmp(fast, slow) != 0) wrong++;
        }
    CHECK(wrong == 0);
    free(v);
}

/* Numbers whose shortest text has 1 to 17 digits, at exponents from the subnormals to the
 * largest doubles: the search that starts at 15 digits writes what the long way writes. */
static void test_numtext_short(void)
{
    uint64_t x = 0x9E3779B97F4A7C15u;
    int wrong = 0, tried = 0;
    for (int digits = 1; digits <= 17; digits++)
        for (int e = -325; e <= 308; e += 3) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char text[48], fast[40], slow[40];
            unsigned long long low = 1; /* 10^(digits - 1): the mantissa's leading digit */
            for (int k = 1; k < digits; k++)
                low *= 10u;
            const unsigned long long m = low + x % (9u * low);
            snprintf(text, sizeof text, "%s%llue%d", (x >> 63) ? "-" : "", m, e);
            const double v = strtod(text, NULL);
            /* integers to 2^53 are written whole, not searched */
            if (!isfinite(v) || v == 0 || (floor(v) == v && fabs(v) <= 9007199254740992.0))
                continue;
            trn_double_text(v, fast);
            shortest_slow(v, slow);
            tried++;
            if (strcmp(fast, slow) != 0) {
                if (wrong < 5) fprintf(stderr, "  %s: %s vs %s\n", text, fast, slow);
                wrong++;
            }
        }
    CHECK(tried > 3000);
    CHECK(wrong == 0);
}

static void test_json_shortest(void)
{
    json_t *o = json_pack("{s:f, s:f, s:f, s:i, s:f, s:s, s:[f,f,f]}", "a", 0.2, "b", 100.0, "c",
                          -0.0, "n", 7, "big", 1e22, "s", "0.20000000000000001 \\\" 1.5", "l",
                          1.0 / 3.0, 2.5e-7, 1.0409999049443286e-06);
    char *text = trn_json_dumps_shortest(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    CHECK(text != NULL);
    if (text)
        CHECK(strcmp(text, "{\"a\":0.2,\"b\":100.0,\"c\":0.0,\"n\":7,\"big\":1e+22,"
                           "\"s\":\"0.20000000000000001 \\\\\\\" 1.5\",\"l\":"
                           "[0.3333333333333333,2.5e-07,1.0409999049443286e-06]}") == 0);
    /* Reads back to the same values. */
    json_t *back = text ? json_loads(text, 0, NULL) : NULL;
    CHECK(back && json_real_value(json_object_get(back, "a")) == 0.2);
    CHECK(back && json_real_value(json_array_get(json_object_get(back, "l"), 0)) == 1.0 / 3.0);
    CHECK(back && json_is_real(json_object_get(back, "b")));
    json_decref(back);
    free(text);
    json_decref(o);
}

int main(void)
{
    RUN(test_status_names);
    RUN(test_error_format);
    RUN(test_checked);
    RUN(test_cursor);
    RUN(test_grids);
    RUN(test_atomic_write);
    RUN(test_atomic_copy);
    RUN(test_progress);
    RUN(test_numtext);
    RUN(test_numtext_remembered);
    RUN(test_numtext_short);
    RUN(test_json_shortest);
    return trn_test_finish();
}
