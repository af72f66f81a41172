/* Terragen .ter reader and writer: the real file's facts, synthetic layouts, malformed input. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/terragen.h"
#include "test.h"

/* ---- a tiny byte builder for synthetic files ---- */
typedef struct buf {
    uint8_t data[4096];
    size_t size;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void put16(buf *b, uint16_t v)
{
    uint8_t t[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, t, 2);
}

static void put32(buf *b, uint32_t v)
{
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, t, 4);
}

static void putf(buf *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put32(b, u);
}

static void chunk16(buf *b, const char *marker, uint16_t v)
{
    put(b, marker, 4);
    put16(b, v);
    put16(b, 0);
}

/* Offsets of a synthetic file's pieces, for expected error positions. */
typedef struct layout {
    size_t size_at, xpts_at, ypts_at, scal_at, crad_at, crvm_at, altw_at, data_at, data_end, eof_at;
} layout;

/* A 3 x 3 (odd count, so padded) file with every chunk; elevation k = k * 1000 - 4000. */
static void build_full(buf *b, layout *l)
{
    b->size = 0;
    put(b, "TERRAGENTERRAIN ", 16);
    l->size_at = b->size;
    chunk16(b, "SIZE", 2);
    l->xpts_at = b->size;
    chunk16(b, "XPTS", 3);
    l->ypts_at = b->size;
    chunk16(b, "YPTS", 3);
    l->scal_at = b->size;
    put(b, "SCAL", 4);
    putf(b, 2.0f);
    putf(b, 4.0f);
    putf(b, 0.5f);
    l->crad_at = b->size;
    put(b, "CRAD", 4);
    putf(b, 1000.0f);
    l->crvm_at = b->size;
    put(b, "CRVM", 4);
    put32(b, 1);
    l->altw_at = b->size;
    put(b, "ALTW", 4);
    put16(b, 256);                   /* HeightScale: 256/65536 units per step */
    put16(b, (uint16_t)(int16_t)-3); /* BaseHeight */
    l->data_at = b->size;
    for (int k = 0; k < 9; k++)
        put16(b, (uint16_t)(int16_t)(k * 1000 - 4000));
    l->data_end = b->size;
    put16(b, 0);
    l->eof_at = b->size;
    put(b, "EOF ", 4);
}

static void test_sniff(void)
{
    CHECK(trn_terragen_sniff((const uint8_t *)"TERRAGENTERRAIN SIZE", 20));
    CHECK(trn_terragen_sniff((const uint8_t *)"TERRAGENTERRAIN ", 16));
    CHECK(!trn_terragen_sniff((const uint8_t *)"TERRAGENTERRAIN", 15));
    CHECK(!trn_terragen_sniff((const uint8_t *)"TERRAGENTERRAINX", 16));
    CHECK(!trn_terragen_sniff(NULL, 0));
    /* A BeamNG .ter starts with its version byte. */
    const uint8_t beamng[8] = {9, 0, 1, 0, 0, 0, 0, 0};
    CHECK(!trn_terragen_sniff(beamng, sizeof beamng));
}

static void test_real_file(void)
{
    char path[1024];
    if (!trn_test_real_path("terragen_RealisticTerrain.ter", path, sizeof path)) return;
    size_t size;
    uint8_t *data = trn_test_read_file(path, &size);
    CHECK(data != NULL);
    if (!data) return;
    CHECK_EQ_INT(size, 132184);
    CHECK(trn_terragen_sniff(data, size));
    trn_terragen tg;
    trn_error e;
    CHECK_OK(trn_terragen_read(path, NULL, &tg, &e));
    /* Facts read with xxd: SIZE 256, XPTS = YPTS = 257, SCAL 30 x 3, CRAD 6370, CRVM 0,
     * ALTW HeightScale 33, BaseHeight 13, 2 bytes of padding, then "EOF " at 0x20454. */
    CHECK_EQ_INT(tg.xpts, 257);
    CHECK_EQ_INT(tg.ypts, 257);
    CHECK(tg.scale[0] == 30.0f && tg.scale[1] == 30.0f && tg.scale[2] == 30.0f);
    CHECK(tg.planet_radius == 6370.0f);
    CHECK_EQ_INT(tg.curve_mode, 0);
    CHECK_EQ_INT(tg.height_scale, 33);
    CHECK_EQ_INT(tg.base_height, 13);
    CHECK(tg.has_eof);
    CHECK_EQ_INT(tg.trailing_bytes, 0);
    /* Statistics computed once from the raw bytes (Python struct), pinned here. */
    long long sum = 0;
    int lo = 40000, hi = -40000;
    size_t lo_at = 0, hi_at = 0;
    for (size_t k = 0; k < 257u * 257u; k++) {
        int v = tg.elevations[k];
        sum += v;
        if (v < lo) lo = v, lo_at = k;
        if (v > hi) hi = v, hi_at = k;
    }
    CHECK_EQ_INT(sum, -804242189LL);
    CHECK_EQ_INT(lo, -31046);
    CHECK_EQ_INT(lo_at, 8840);
    CHECK_EQ_INT(hi, 32075);
    CHECK_EQ_INT(hi_at, 25887);
    CHECK_EQ_INT(tg.elevations[0], -14249);
    CHECK_EQ_INT(tg.elevations[257 * 257 - 1], -14249);

    trn_field f;
    CHECK_OK(trn_terragen_to_field(&tg, &f, &e));
    CHECK_EQ_INT(f.cells_x, 256);
    CHECK_EQ_INT(f.cells_z, 256);
    CHECK(f.size_x == 7680.0 && f.size_z == 7680.0);
    float fmin, fmax;
    trn_field_range(&f, &fmin, &fmax);
    CHECK(fabs(fmin - (-78.98712158203125)) < 1e-4);
    CHECK(fabs(fmax - 874.5314025878906) < 1e-3);
    /* Sample 25887 = x 187, y 100 (row 0 south stays field row 0). */
    CHECK(f.heights[100 * 257 + 187] == fmax);
    CHECK(f.quantum == 30.0 * 33.0 / 65536.0);
    CHECK(f.quantum_base == 30.0 * (13.0 - 16.5));
    /* Every height gives back its stored value through quantum (what 16-bit writers use). */
    size_t bad = 0;
    for (size_t k = 0; k < 257u * 257u; k++) {
        double s = nearbyint((f.heights[k] - f.quantum_base) / f.quantum) - 32768.0;
        if (s != tg.elevations[k]) bad++;
    }
    CHECK_EQ_INT(bad, 0);

    /* Byte-identical re-encode: the file has every chunk in Terragen's own order. */
    uint8_t *enc;
    size_t enc_size;
    CHECK_OK(trn_terragen_encode(&tg, &enc, &enc_size, &e));
    CHECK_EQ_INT(enc_size, size);
    CHECK(enc_size == size && memcmp(enc, data, size) == 0);
    free(enc);

    /* Field back to Terragen recovers HeightScale, BaseHeight and every elevation. */
    trn_terragen back;
    CHECK_OK(trn_terragen_from_field(&f, &back, &e));
    CHECK_EQ_INT(back.height_scale, 33);
    CHECK_EQ_INT(back.base_height, 13);
    CHECK(back.scale[2] == 30.0f);
    CHECK(memcmp(back.elevations, tg.elevations, 257u * 257u * 2u) == 0);
    trn_terragen_dispose(&back);

    /* Limits apply to the real file too. */
    trn_terragen_limits lim;
    trn_terragen_limits_default(&lim);
    lim.max_points = 256;
    CHECK_STATUS(trn_terragen_parse_limited(data, size, path, &lim, &back, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 0x48);
    CHECK_CONTAINS(e.file, "terragen_RealisticTerrain.ter");
    trn_terragen_limits_default(&lim);
    lim.max_samples = 257u * 257u - 1u;
    CHECK_STATUS(trn_terragen_parse_limited(data, size, path, &lim, &back, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "66049 samples");

    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);
    free(data);
}

static void test_synthetic_full(void)
{
    buf b;
    layout l;
    build_full(&b, &l);
    trn_terragen tg;
    trn_error e;
    CHECK_OK(trn_terragen_parse(b.data, b.size, "mem.ter", &tg, &e));
    CHECK_EQ_INT(tg.xpts, 3);
    CHECK_EQ_INT(tg.ypts, 3);
    CHECK(tg.scale[0] == 2.0f && tg.scale[1] == 4.0f && tg.scale[2] == 0.5f);
    CHECK(tg.planet_radius == 1000.0f);
    CHECK_EQ_INT(tg.curve_mode, 1);
    CHECK_EQ_INT(tg.height_scale, 256);
    CHECK_EQ_INT(tg.base_height, -3);
    CHECK_EQ_INT(tg.elevations[0], -4000);
    CHECK_EQ_INT(tg.elevations[8], 4000);
    CHECK(tg.has_eof);
    CHECK_EQ_INT(tg.trailing_bytes, 0);

    trn_field f;
    CHECK_OK(trn_terragen_to_field(&tg, &f, &e));
    CHECK_EQ_INT(f.cells_x, 2);
    CHECK_EQ_INT(f.cells_z, 2);
    CHECK(f.size_x == 4.0 && f.size_z == 8.0);
    /* metres = 0.5 * (-3 + e * 256 / 65536): sample (x 1, y 2) is elevation 7 * 1000 - 4000. */
    CHECK(f.heights[2 * 3 + 1] == (float)(0.5 * (-3.0 + 3000.0 * 256.0 / 65536.0)));
    CHECK(f.heights[0] == (float)(0.5 * (-3.0 - 4000.0 / 256.0)));

    /* Encoding the parsed file gives back the same bytes (it has every chunk). */
    uint8_t *enc;
    size_t enc_size;
    CHECK_OK(trn_terragen_encode(&tg, &enc, &enc_size, &e));
    CHECK(enc_size == b.size && memcmp(enc, b.data, b.size) == 0);
    free(enc);

    /* Non-uniform SCAL: from_field cannot recover the stored values exactly, but heights come
     * back within half a step of the new quantisation. */
    trn_terragen back;
    CHECK_OK(trn_terragen_from_field(&f, &back, &e));
    CHECK(back.scale[0] == 2.0f && back.scale[1] == 4.0f && back.scale[2] == 2.0f);
    trn_field f2;
    CHECK_OK(trn_terragen_to_field(&back, &f2, &e));
    double step = back.scale[2] * back.height_scale / 65536.0;
    double worst = 0;
    for (int k = 0; k < 9; k++)
        worst = fmax(worst, fabs(f2.heights[k] - f.heights[k]));
    CHECK(worst <= step * 0.5 + 1e-6);
    trn_field_dispose(&f2);
    trn_terragen_dispose(&back);
    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);

    /* The sample limit: 3 x 3 = 9 is accepted at 9, refused at 8 (at the ALTW marker). */
    trn_terragen_limits lim;
    trn_terragen_limits_default(&lim);
    CHECK(lim.max_samples == 1431655765u);
    CHECK(lim.max_samples == TRN_TERRAGEN_DEFAULT_MAX_SAMPLES);
    lim.max_samples = 9;
    CHECK_OK(trn_terragen_parse_limited(b.data, b.size, "mem.ter", &lim, &tg, &e));
    trn_terragen_dispose(&tg);
    lim.max_samples = 8;
    CHECK_STATUS(trn_terragen_parse_limited(b.data, b.size, "mem.ter", &lim, &tg, &e),
                 TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, (int64_t)l.altw_at);
    CHECK(strcmp(e.file, "mem.ter") == 0);
    CHECK_CONTAINS(e.message, "3 x 3 = 9 samples, more than the limit of 8");
    CHECK_CONTAINS(e.message, "--max-samples");
    CHECK(tg.elevations == NULL);
}

/* Terragen 0.9-style minimal files: SIZE only (square), ALTW, EOF; and GDAL-written ones. */
static void test_synthetic_variants(void)
{
    trn_terragen tg;
    trn_error e;
    buf b = {.size = 0};
    put(&b, "TERRAGENTERRAIN ", 16);
    chunk16(&b, "SIZE", 1);
    put(&b, "ALTW", 4);
    put16(&b, 65535u); /* HeightScale -1: heights upside down */
    put16(&b, 100);
    for (int k = 0; k < 4; k++)
        put16(&b, (uint16_t)(k * 16384));
    put(&b, "EOF ", 4);
    CHECK_OK(trn_terragen_parse(b.data, b.size, NULL, &tg, &e));
    CHECK_EQ_INT(tg.xpts, 2);
    CHECK_EQ_INT(tg.ypts, 2);
    CHECK(tg.scale[0] == 30.0f && tg.scale[2] == 30.0f && tg.planet_radius == 6370.0f);
    CHECK_EQ_INT(tg.height_scale, -1);
    trn_field f;
    CHECK_OK(trn_terragen_to_field(&tg, &f, &e));
    CHECK(f.quantum == 0.0 && f.quantum_base == 0.0); /* negative scale: not a 16-bit quantum */
    CHECK(f.size_x == 30.0);
    CHECK(f.heights[1] == (float)(30.0 * (100.0 - 16384.0 / 65536.0)));
    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);

    /* Trailing bytes after EOF are allowed and counted. */
    put(&b, "junk!", 5);
    CHECK_OK(trn_terragen_parse(b.data, b.size, NULL, &tg, &e));
    CHECK(tg.has_eof);
    CHECK_EQ_INT(tg.trailing_bytes, 5);
    trn_terragen_dispose(&tg);

    /* GDAL's writer: non-square with XPTS/YPTS, odd count, no padding and no EOF. */
    b.size = 0;
    put(&b, "TERRAGENTERRAIN ", 16);
    chunk16(&b, "SIZE", 2);
    chunk16(&b, "XPTS", 5);
    chunk16(&b, "YPTS", 3);
    put(&b, "ALTW", 4);
    put16(&b, 2);
    put16(&b, 0);
    for (int k = 0; k < 15; k++)
        put16(&b, (uint16_t)k);
    CHECK_OK(trn_terragen_parse(b.data, b.size, NULL, &tg, &e));
    CHECK_EQ_INT(tg.xpts, 5);
    CHECK_EQ_INT(tg.ypts, 3);
    CHECK(!tg.has_eof);
    CHECK_EQ_INT(tg.elevations[14], 14);
    CHECK_OK(trn_terragen_to_field(&tg, &f, &e));
    CHECK_EQ_INT(f.cells_x, 4);
    CHECK_EQ_INT(f.cells_z, 2);
    CHECK(f.heights[1 * 5 + 3] == (float)(30.0 * 8.0 * 2.0 / 65536.0));
    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);
    /* ... and the same with "EOF " straight after the data, unaligned. */
    put(&b, "EOF ", 4);
    CHECK_OK(trn_terragen_parse(b.data, b.size, NULL, &tg, &e));
    CHECK(tg.has_eof);
    CHECK_EQ_INT(tg.trailing_bytes, 0);
    trn_terragen_dispose(&tg);

    /* SCAL/CRAD after ALTW are read (the spec only orders the size chunks). */
    b.size = 0;
    put(&b, "TERRAGENTERRAIN ", 16);
    chunk16(&b, "SIZE", 1);
    put(&b, "ALTW", 4);
    put16(&b, 1);
    put16(&b, 0);
    for (int k = 0; k < 4; k++)
        put16(&b, 0);
    put(&b, "SCAL", 4);
    putf(&b, 10.0f);
    putf(&b, 10.0f);
    putf(&b, 1.0f);
    put(&b, "EOF ", 4);
    CHECK_OK(trn_terragen_parse(b.data, b.size, NULL, &tg, &e));
    CHECK(tg.scale[0] == 10.0f && tg.scale[2] == 1.0f);
    trn_terragen_dispose(&tg);
}

/* Cut a valid file at every length: a clean error at the start of the piece that ran out,
 * except right after the elevations (with or without their padding), which GDAL writes. */
static void test_truncation_everywhere(void)
{
    buf b;
    layout l;
    build_full(&b, &l);
    size_t starts[] = {0,
                       l.size_at,
                       l.size_at + 4,
                       l.xpts_at,
                       l.xpts_at + 4,
                       l.ypts_at,
                       l.ypts_at + 4,
                       l.scal_at,
                       l.scal_at + 4,
                       l.crad_at,
                       l.crad_at + 4,
                       l.crvm_at,
                       l.crvm_at + 4,
                       l.altw_at,
                       l.altw_at + 4,
                       l.data_at,
                       l.data_end,
                       l.eof_at};
    size_t nstarts = sizeof starts / sizeof starts[0];
    int failures_before = trn_test_failures;
    for (size_t len = 0; len < b.size; len++) {
        trn_terragen tg;
        trn_error e;
        trn_status st = trn_terragen_parse(b.data, len, "cut.ter", &tg, &e);
        if (len == l.data_end || len == l.data_end + 2) {
            CHECK_OK(st);
            CHECK(!tg.has_eof);
            trn_terragen_dispose(&tg);
            continue;
        }
        size_t expect = 0;
        for (size_t k = 0; k < nstarts; k++)
            if (starts[k] <= len) expect = starts[k];
        if (len < 16) expect = 0;
        CHECK_STATUS(st, TRN_ERR_TRUNCATED);
        CHECK_EQ_INT(e.offset, (long long)expect);
        CHECK(tg.elevations == NULL && tg.xpts == 0);
        if (trn_test_failures != failures_before) {
            fprintf(stderr, "  (cut at %zu: %s)\n", len, e.message);
            break;
        }
    }
    /* Messages name the piece. */
    trn_terragen tg;
    trn_error e;
    CHECK_STATUS(trn_terragen_parse(b.data, l.data_at + 5, "cut.ter", &tg, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "ALTW chunk: elevations for 3 x 3 points need 18 bytes");
    CHECK_STATUS(trn_terragen_parse(b.data, l.scal_at + 9, "cut.ter", &tg, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "SCAL chunk");
    CHECK_STATUS(trn_terragen_parse(b.data, l.altw_at, "cut.ter", &tg, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "without an ALTW chunk");
    CHECK_STATUS(trn_terragen_parse(b.data, 10, "cut.ter", &tg, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "only 10 bytes");
}

/* Patch a copy of the full synthetic file and expect an error at an offset. */
static void expect_error(const buf *b, trn_status code, long long offset, const char *text)
{
    trn_terragen tg;
    trn_error e;
    CHECK_STATUS(trn_terragen_parse(b->data, b->size, "bad.ter", &tg, &e), code);
    CHECK_EQ_INT(e.offset, offset);
    CHECK_CONTAINS(e.message, text);
    CHECK_CONTAINS(e.file, "bad.ter");
    CHECK(tg.elevations == NULL);
}

static void test_malformed(void)
{
    buf b;
    layout l;

    build_full(&b, &l);
    b.data[3] = 'X';
    expect_error(&b, TRN_ERR_FORMAT, 0, "not a Terragen terrain file");

    build_full(&b, &l);
    memcpy(b.data + l.crad_at, "CRAP", 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.crad_at, "unknown chunk marker 'CRAP'");

    build_full(&b, &l);
    memcpy(b.data + l.eof_at, "\x01\x02\x03\x04", 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.eof_at, "unknown chunk marker 0x01020304");

    build_full(&b, &l); /* a chunk twice */
    memcpy(b.data + l.crvm_at, "SCAL", 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.crvm_at, "second 'SCAL' chunk");

    build_full(&b, &l); /* ALTW before SIZE */
    {
        buf c = {.size = 0};
        put(&c, b.data, 16);
        put(&c, b.data + l.altw_at, b.size - l.altw_at);
        expect_error(&c, TRN_ERR_FORMAT, 16, "ALTW chunk at offset 16 comes before any SIZE");
    }

    build_full(&b, &l); /* XPTS after ALTW */
    memcpy(b.data + l.eof_at, "XPTS", 4);
    put32(&b, 3);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.eof_at, "comes after the ALTW chunk");

    build_full(&b, &l); /* SIZE disagrees */
    b.data[l.size_at + 4] = 3;
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.size_at, "SIZE chunk says 3");

    build_full(&b, &l); /* one point wide */
    b.data[l.xpts_at + 4] = 1;
    b.data[l.size_at + 4] = 0;
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.xpts_at, "at least 2 x 2");

    build_full(&b, &l); /* SCAL z is NaN, then zero */
    memcpy(b.data + l.scal_at + 12, "\x00\x00\xc0\x7f", 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.scal_at + 12, "SCAL chunk: value 3");
    memset(b.data + l.scal_at + 4, 0, 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.scal_at + 4, "finite positive");

    build_full(&b, &l); /* CRAD infinite */
    memcpy(b.data + l.crad_at + 4, "\x00\x00\x80\x7f", 4);
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.crad_at + 4, "CRAD chunk");

    build_full(&b, &l); /* EOF before any ALTW */
    memcpy(b.data + l.altw_at, "EOF ", 4);
    expect_error(&b, TRN_ERR_TRUNCATED, (long long)l.altw_at, "no ALTW chunk");

    build_full(&b, &l); /* elevations claim more points than the file holds */
    b.data[l.xpts_at + 4] = 200;
    expect_error(&b, TRN_ERR_TRUNCATED, (long long)l.data_at, "need 1200 bytes");

    build_full(&b, &l); /* junk between the elevations and EOF */
    b.data[l.data_end] = 0x55;
    expect_error(&b, TRN_ERR_FORMAT, (long long)l.data_end, "unknown chunk marker");
}

static void test_write_read(void)
{
    char dir[512], path[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/out.ter", dir);
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 4, 2, 8.0, 4.0, &e));
    for (int k = 0; k < 15; k++)
        f.heights[k] = (float)(k * k) - 20.0f;
    f.heights[7] = NAN;
    trn_terragen tg;
    CHECK_OK(trn_terragen_from_field(&f, &tg, &e));
    CHECK_EQ_INT(tg.xpts, 5);
    CHECK_EQ_INT(tg.ypts, 3);
    CHECK_OK(trn_terragen_write(path, &tg, &e));
    trn_terragen back;
    CHECK_OK(trn_terragen_read(path, NULL, &back, &e));
    CHECK(back.has_eof);
    CHECK(memcmp(back.elevations, tg.elevations, 15 * 2) == 0);
    trn_field g;
    CHECK_OK(trn_terragen_to_field(&back, &g, &e));
    CHECK(g.size_x == 8.0 && g.size_z == 4.0);
    double step = back.scale[2] * back.height_scale / 65536.0, worst = 0;
    for (int k = 0; k < 15; k++)
        if (k != 7) worst = fmax(worst, fabs(g.heights[k] - f.heights[k]));
    CHECK(worst <= step * 0.5 + 1e-5);
    CHECK(step < 0.01); /* a range of 196 m uses most of the 16 bits */
    CHECK(g.heights[7] == (float)(back.scale[2] * back.base_height)); /* NaN -> BaseHeight */
    trn_field_dispose(&g);
    trn_terragen_dispose(&back);
    trn_terragen_dispose(&tg);

    /* Missing file: a clean I/O error naming it. */
    snprintf(path, sizeof path, "%s/missing.ter", dir);
    CHECK(trn_terragen_read(path, NULL, &back, &e) != TRN_OK);
    CHECK_CONTAINS(e.file, "missing.ter");

    /* A field too small for the format. */
    trn_field_dispose(&f);
    trn_terragen_dispose(NULL);
    CHECK_STATUS(trn_terragen_from_field(&f, &tg, &e), TRN_ERR_INVALID_ARGUMENT);
}

/* GDAL's own Terragen driver reads the real file to the same metres (its scale and offset are
 * SCAL * HeightScale / 65536 and SCAL * BaseHeight) with rows north first. */
static void test_real_file_against_gdal(void)
{
    char path[1024], dir[512], out[600], cmd[2048];
    if (!trn_test_real_path("terragen_RealisticTerrain.ter", path, sizeof path)) return;
    if (system("command -v gdal_translate >/dev/null 2>&1") != 0) {
        printf("gdal_translate not found: GDAL cross-check skipped\n");
        return;
    }
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(out, sizeof out, "%s/gdal.bin", dir);
    snprintf(cmd, sizeof cmd, "gdal_translate -q -of ENVI -ot Float32 -unscale '%s' '%s'", path,
             out);
    CHECK_EQ_INT(system(cmd), 0);
    size_t size;
    uint8_t *g = trn_test_read_file(out, &size);
    CHECK_EQ_INT(size, 257u * 257u * 4u);
    trn_terragen tg;
    trn_field f;
    trn_error e;
    CHECK_OK(trn_terragen_read(path, NULL, &tg, &e));
    CHECK_OK(trn_terragen_to_field(&tg, &f, &e));
    size_t differ = 0;
    for (size_t r = 0; g && size == 257u * 257u * 4u && r < 257; r++)
        for (size_t c = 0; c < 257; c++) {
            float v;
            memcpy(&v, g + 4 * (r * 257 + c), 4);
            if (v != f.heights[(256 - r) * 257 + c]) differ++;
        }
    CHECK_EQ_INT(differ, 0);
    free(g);
    trn_field_dispose(&f);
    trn_terragen_dispose(&tg);
}

/* The points limit holds on each axis at its value: 3 x 4 points read with a limit of 4 per
 * side, refused with 3 (only the taller axis is over). */
static void test_points_limit_each_axis(void)
{
    buf b = {.size = 0};
    put(&b, "TERRAGENTERRAIN ", 16);
    chunk16(&b, "SIZE", 2);
    chunk16(&b, "XPTS", 3);
    chunk16(&b, "YPTS", 4);
    put(&b, "ALTW", 4);
    put16(&b, 256);
    put16(&b, 0);
    for (int k = 0; k < 12; k++)
        put16(&b, (uint16_t)(k * 100));
    put(&b, "EOF ", 4);
    trn_terragen_limits lim;
    trn_terragen_limits_default(&lim);
    trn_terragen tg;
    trn_error e;
    lim.max_points = 4;
    CHECK_OK(trn_terragen_parse_limited(b.data, b.size, NULL, &lim, &tg, &e));
    CHECK(tg.xpts == 3 && tg.ypts == 4);
    trn_terragen_dispose(&tg);
    lim.max_points = 3;
    CHECK_STATUS(trn_terragen_parse_limited(b.data, b.size, NULL, &lim, &tg, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "3 x 4 points exceed the limit of 3 per side");
}

int main(void)
{
    RUN(test_sniff);
    RUN(test_synthetic_full);
    RUN(test_synthetic_variants);
    RUN(test_truncation_everywhere);
    RUN(test_malformed);
    RUN(test_write_read);
    RUN(test_real_file);
    RUN(test_real_file_against_gdal);
    RUN(test_points_limit_each_axis);
    return trn_test_finish();
}
