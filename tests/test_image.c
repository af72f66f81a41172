/* Tests for src/formats/image: PNG read/write/info, RAW/R16/R32, image <-> field. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/image.h"
#include "test.h"

/* ---- hand-built PNGs -------------------------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t n;
} bytes;

static void put(bytes *b, const void *data, size_t n)
{
    b->p = realloc(b->p, b->n + n + 1);
    if (n) memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_be32(bytes *b, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(b, q, 4);
}

static void put_chunk(bytes *b, const char *type, const void *data, uint32_t n)
{
    put_be32(b, n);
    put(b, type, 4);
    put(b, data, n);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (n) crc = crc32(crc, data, n);
    put_be32(b, (uint32_t)crc);
}

static void put_ihdr(bytes *b, uint32_t w, uint32_t h, uint8_t depth, uint8_t color)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    put(b, sig, 8);
    uint8_t ihdr[13] = {(uint8_t)(w >> 24),
                        (uint8_t)(w >> 16),
                        (uint8_t)(w >> 8),
                        (uint8_t)w,
                        (uint8_t)(h >> 24),
                        (uint8_t)(h >> 16),
                        (uint8_t)(h >> 8),
                        (uint8_t)h,
                        depth,
                        color,
                        0,
                        0,
                        0};
    put_chunk(b, "IHDR", ihdr, 13);
}

/* IDAT from unfiltered scanlines (each gets a filter-type 0 byte) and IEND. */
static void put_image(bytes *b, const uint8_t *scanlines, size_t line_bytes, uint32_t rows)
{
    size_t raw_n = (line_bytes + 1) * rows;
    uint8_t *raw = malloc(raw_n);
    for (uint32_t y = 0; y < rows; y++) {
        raw[y * (line_bytes + 1)] = 0;
        memcpy(raw + y * (line_bytes + 1) + 1, scanlines + y * line_bytes, line_bytes);
    }
    uLongf zn = compressBound((uLong)raw_n);
    uint8_t *z = malloc(zn);
    CHECK(compress(z, &zn, raw, (uLong)raw_n) == Z_OK);
    put_chunk(b, "IDAT", z, (uint32_t)zn);
    put_chunk(b, "IEND", NULL, 0);
    free(raw);
    free(z);
}

/* Offset of the first chunk of this type, or 0. */
static size_t find_chunk(const bytes *b, const char *type)
{
    size_t pos = 8;
    while (pos + 12 <= b->n) {
        uint32_t len = ((uint32_t)b->p[pos] << 24) | ((uint32_t)b->p[pos + 1] << 16) |
                       ((uint32_t)b->p[pos + 2] << 8) | b->p[pos + 3];
        if (memcmp(b->p + pos + 4, type, 4) == 0) return pos;
        pos += 12 + (size_t)len;
    }
    return 0;
}

static const char *tmp_path(const char *dir, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s/%s", dir, name);
    return buf;
}

/* A deterministic image with every channel and bit distinct enough to catch swaps. */
static void fill_pattern(trn_image *img)
{
    size_t n = (size_t)img->width * img->height * img->channels;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = (uint32_t)(i * 2654435761u) ^ (uint32_t)(i >> 3);
        if (img->bit_depth == 8)
            ((uint8_t *)img->data)[i] = (uint8_t)v;
        else if (img->bit_depth == 16)
            ((uint16_t *)img->data)[i] = (uint16_t)(v ^ (v >> 16));
        else
            ((float *)img->data)[i] = (float)(v % 100000u) * 0.25f - 1000.0f;
    }
}

static bool same_image(const trn_image *a, const trn_image *b)
{
    if (a->width != b->width || a->height != b->height || a->channels != b->channels ||
        a->bit_depth != b->bit_depth)
        return false;
    size_t n = (size_t)a->width * a->height * a->channels * (a->bit_depth / 8u);
    return memcmp(a->data, b->data, n) == 0;
}

/* ---- PNG -------------------------------------------------------------------------------- */

static void test_png_round_trips(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "rt.png", path, sizeof path);
    for (uint8_t depth = 8; depth <= 16; depth = (uint8_t)(depth + 8)) {
        for (uint8_t ch = 1; ch <= 4; ch++) {
            trn_image img, back, mem_back;
            CHECK_OK(trn_image_init(&img, 37, 23, ch, depth, NULL));
            fill_pattern(&img);
            trn_error e;
            CHECK_OK(trn_png_write(path, &img, NULL, NULL, NULL, &e));
            trn_png_info info;
            CHECK_OK(trn_png_read_info(path, &info, &e));
            static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
            CHECK_EQ_INT(info.color_type, color_types[ch]);
            CHECK_EQ_INT(info.bit_depth, depth);
            CHECK_EQ_INT(info.channels, ch);
            CHECK(!info.has_srgb && !info.has_gama && !info.has_iccp);
            CHECK_OK(trn_png_read(path, NULL, &back, &e));
            CHECK(same_image(&img, &back));
            CHECK(!back.srgb);
            /* Memory path, every filter and both level extremes. */
            for (int f = TRN_PNG_FILTER_AUTO; f <= TRN_PNG_FILTER_ADAPTIVE; f++) {
                trn_png_options opt;
                trn_png_options_default(&opt);
                opt.filter = (trn_png_filter)f;
                opt.compression_level = f % 2 ? 0 : 9;
                uint8_t *png = NULL;
                size_t png_n = 0;
                CHECK_OK(trn_png_encode(&img, &opt, &png, &png_n, &e));
                CHECK(trn_png_sniff(png, png_n));
                CHECK_OK(trn_png_decode(png, png_n, "mem.png", NULL, &mem_back, &e));
                CHECK(same_image(&img, &mem_back));
                trn_image_dispose(&mem_back);
                free(png);
            }
            trn_image_dispose(&back);
            trn_image_dispose(&img);
        }
    }
    unlink(path);
    rmdir(dir);
}

static void test_png_16bit_byte_order(void)
{
    /* Our encoder must put 16-bit samples big-endian on disk: inflate its IDAT and look. */
    trn_image img;
    CHECK_OK(trn_image_init(&img, 2, 1, 1, 16, NULL));
    ((uint16_t *)img.data)[0] = 0x1234;
    ((uint16_t *)img.data)[1] = 0xABCD;
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 0;
    bytes png = {0};
    CHECK_OK(trn_png_encode(&img, &opt, &png.p, &png.n, NULL));
    size_t idat = find_chunk(&png, "IDAT");
    CHECK(idat > 0);
    uint32_t zlen = ((uint32_t)png.p[idat] << 24) | ((uint32_t)png.p[idat + 1] << 16) |
                    ((uint32_t)png.p[idat + 2] << 8) | png.p[idat + 3];
    uint8_t raw[16];
    uLongf raw_n = sizeof raw;
    CHECK(uncompress(raw, &raw_n, png.p + idat + 8, zlen) == Z_OK);
    CHECK_EQ_INT(raw_n, 5);
    static const uint8_t expect[5] = {0, 0x12, 0x34, 0xAB, 0xCD}; /* filter none, then BE */
    CHECK(memcmp(raw, expect, 5) == 0);
    free(png.p);
    trn_image_dispose(&img);

    /* And a hand-built big-endian PNG decodes to host-order values. */
    bytes b = {0};
    put_ihdr(&b, 2, 1, 16, 0);
    put_image(&b, expect + 1, 4, 1);
    trn_image back;
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, NULL, &back, NULL));
    CHECK_EQ_INT(((uint16_t *)back.data)[0], 0x1234);
    CHECK_EQ_INT(((uint16_t *)back.data)[1], 0xABCD);
    trn_image_dispose(&back);
    free(b.p);
}

static void test_png_palette_and_low_bits(void)
{
    /* 2-bit palette, 4 x 2: indices 0 1 2 3 / 3 2 1 0. */
    static const uint8_t plte[12] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 200, 210, 220};
    static const uint8_t rows[2] = {0x1B, 0xE4};
    bytes b = {0};
    put_ihdr(&b, 4, 2, 2, 3);
    put_chunk(&b, "PLTE", plte, 12);
    put_image(&b, rows, 1, 2);
    trn_image img;
    trn_error e;
    CHECK_OK(trn_png_decode(b.p, b.n, "pal.png", NULL, &img, &e));
    CHECK_EQ_INT(img.channels, 3);
    CHECK_EQ_INT(img.bit_depth, 8);
    const uint8_t *px = img.data;
    CHECK(px[0] == 10 && px[1] == 20 && px[2] == 30);       /* (0,0) index 0 */
    CHECK(px[9] == 200 && px[10] == 210 && px[11] == 220);  /* (3,0) index 3 */
    CHECK(px[12] == 200 && px[13] == 210 && px[14] == 220); /* (0,1) index 3 */
    CHECK(px[21] == 10 && px[22] == 20 && px[23] == 30);    /* (3,1) index 0 */
    trn_image_dispose(&img);
    free(b.p);

    /* With tRNS the palette expands to RGBA. */
    static const uint8_t trns[2] = {0, 128};
    b = (bytes){0};
    put_ihdr(&b, 4, 2, 2, 3);
    put_chunk(&b, "PLTE", plte, 12);
    put_chunk(&b, "tRNS", trns, 2);
    put_image(&b, rows, 1, 2);
    trn_png_info info;
    CHECK_OK(trn_png_decode_info(b.p, b.n, NULL, &info, NULL));
    CHECK(info.has_plte && info.has_trns);
    CHECK_EQ_INT(info.channels, 4);
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, NULL, &img, NULL));
    CHECK_EQ_INT(img.channels, 4);
    px = img.data;
    CHECK(px[0] == 10 && px[3] == 0);      /* index 0: alpha 0 */
    CHECK(px[4] == 40 && px[7] == 128);    /* index 1: alpha 128 */
    CHECK(px[12] == 200 && px[15] == 255); /* index 3: beyond tRNS, opaque */
    trn_image_dispose(&img);
    free(b.p);

    /* Palette image without PLTE. */
    b = (bytes){0};
    put_ihdr(&b, 4, 2, 2, 3);
    put_image(&b, rows, 1, 2);
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 33); /* the IDAT chunk */
    CHECK_CONTAINS(e.message, "PLTE");
    free(b.p);

    /* 1, 2 and 4-bit grey scale to 0..255. */
    struct {
        uint8_t depth;
        uint8_t row[4];
        uint8_t expect[8];
    } cases[] = {
        {1, {0x1B}, {0, 0, 0, 255, 255, 0, 255, 255}},
        {2, {0x1B, 0xE4}, {0, 85, 170, 255, 255, 170, 85, 0}},
        {4, {0x1B, 0xE4, 0x0F, 0xF0}, {17, 187, 238, 68, 0, 255, 255, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        b = (bytes){0};
        put_ihdr(&b, 8, 1, cases[k].depth, 0);
        put_image(&b, cases[k].row, (8u * cases[k].depth + 7u) / 8u, 1);
        CHECK_OK(trn_png_decode(b.p, b.n, NULL, NULL, &img, &e));
        CHECK_EQ_INT(img.channels, 1);
        CHECK_EQ_INT(img.bit_depth, 8);
        CHECK(memcmp(img.data, cases[k].expect, 8) == 0);
        trn_image_dispose(&img);
        free(b.p);
    }
}

static void test_png_colour_chunks(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "srgb.png", path, sizeof path);
    trn_image img;
    CHECK_OK(trn_image_init(&img, 8, 8, 3, 8, NULL));
    fill_pattern(&img);
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.srgb = true;
    CHECK_OK(trn_png_write(path, &img, &opt, NULL, NULL, NULL));
    trn_png_info info;
    CHECK_OK(trn_png_read_info(path, &info, NULL));
    CHECK(info.has_srgb);
    CHECK_EQ_INT(info.srgb_intent, 0);
    CHECK(!info.has_iccp);
    trn_image back;
    CHECK_OK(trn_png_read(path, NULL, &back, NULL));
    CHECK(back.srgb);
    CHECK(same_image(&img, &back));
    /* An image that came from an sRGB file keeps its chunk with the default options. */
    CHECK_OK(trn_png_write(path, &back, NULL, NULL, NULL, NULL));
    CHECK_OK(trn_png_read_info(path, &info, NULL));
    CHECK(info.has_srgb);
    back.srgb = false;
    CHECK_OK(trn_png_write(path, &back, NULL, NULL, NULL, NULL));
    CHECK_OK(trn_png_read_info(path, &info, NULL));
    CHECK(!info.has_srgb);
    trn_image_dispose(&back);
    trn_image_dispose(&img);
    unlink(path);
    rmdir(dir);

    /* gAMA 1/2.2 counts as sRGB for the decoded image; gAMA 1.0 (linear) does not. */
    static const uint8_t grey[4] = {1, 2, 3, 4};
    static const uint8_t gama22[4] = {0, 0, 0xB1, 0x8F};    /* 45455 */
    static const uint8_t gama10[4] = {0, 0x01, 0x86, 0xA0}; /* 100000 */
    static const uint8_t iccp[] = {'x', 0, 0, 0x78, 0x9c, 0x03, 0, 0, 0, 0, 1};
    bytes b = {0};
    put_ihdr(&b, 2, 2, 8, 0);
    put_chunk(&b, "gAMA", gama22, 4);
    put_image(&b, grey, 2, 2);
    CHECK_OK(trn_png_decode_info(b.p, b.n, NULL, &info, NULL));
    CHECK(info.has_gama && !info.has_srgb);
    CHECK_EQ_INT(info.gama, 45455);
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, NULL, &back, NULL));
    CHECK(back.srgb);
    trn_image_dispose(&back);
    free(b.p);

    b = (bytes){0};
    put_ihdr(&b, 2, 2, 8, 0);
    put_chunk(&b, "gAMA", gama10, 4);
    put_chunk(&b, "iCCP", iccp, sizeof iccp);
    put_image(&b, grey, 2, 2);
    CHECK_OK(trn_png_decode_info(b.p, b.n, NULL, &info, NULL));
    CHECK(info.has_gama && info.has_iccp && !info.has_srgb);
    CHECK_EQ_INT(info.gama, 100000);
    free(b.p);

    /* A wrong-sized sRGB chunk is reported at the chunk. */
    static const uint8_t two[2] = {0, 0};
    b = (bytes){0};
    put_ihdr(&b, 2, 2, 8, 0);
    put_chunk(&b, "sRGB", two, 2);
    put_image(&b, grey, 2, 2);
    trn_error e;
    CHECK_STATUS(trn_png_decode_info(b.p, b.n, "x.png", &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 33);
    CHECK_CONTAINS(e.message, "sRGB chunk is 2 bytes");
    free(b.p);
}

static void test_png_read_info_is_cheap(void)
{
    /* An IHDR claiming 2^31-1 x 2^31-1 followed by one IDAT: info reads it without decoding,
     * while decode refuses it on limits before touching the pixels. */
    bytes b = {0};
    put_ihdr(&b, 0x7fffffffu, 0x7fffffffu, 16, 6);
    static const uint8_t junk[4] = {1, 2, 3, 4};
    put_chunk(&b, "IDAT", junk, 4);
    put_chunk(&b, "IEND", NULL, 0);
    trn_png_info info;
    CHECK_OK(trn_png_decode_info(b.p, b.n, NULL, &info, NULL));
    CHECK_EQ_INT(info.width, 0x7fffffff);
    CHECK_EQ_INT(info.channels, 4);
    trn_image img;
    trn_error e;
    CHECK_STATUS(trn_png_decode(b.p, b.n, "huge.png", NULL, &img, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 16);
    CHECK_CONTAINS(e.message, "2147483647 pixels wide");
    CHECK(strcmp(e.file, "huge.png") == 0);
    free(b.p);
}

static void test_png_limits(void)
{
    uint8_t grey[64 * 4];
    memset(grey, 7, sizeof grey);
    bytes b = {0};
    put_ihdr(&b, 64, 4, 8, 0);
    put_image(&b, grey, 64, 4);
    trn_image_limits lim;
    trn_image_limits_default(&lim);
    CHECK_EQ_INT(lim.max_width, 65536);
    CHECK_EQ_INT(lim.max_bytes, 8ull << 30);
    trn_image img;
    trn_error e;
    lim.max_width = 63;
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 16);
    CHECK_CONTAINS(e.message, "64 pixels wide, more than the limit of 63");
    trn_image_limits_default(&lim);
    lim.max_height = 3;
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 20);
    /* The sample limit: 64 x 4 = 256 samples; the limit itself is accepted. */
    trn_image_limits_default(&lim);
    CHECK(lim.max_samples == 715827882u);
    CHECK(lim.max_samples == TRN_IMAGE_DEFAULT_MAX_SAMPLES);
    lim.max_samples = 255;
    CHECK_STATUS(trn_png_decode(b.p, b.n, "big.png", &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 16);
    CHECK(strcmp(e.file, "big.png") == 0);
    CHECK_CONTAINS(e.message, "64 x 4 = 256 samples, more than the limit of 255");
    CHECK_CONTAINS(e.message, "--max-samples");
    lim.max_samples = 256;
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e));
    trn_image_dispose(&img);
    trn_image_limits_default(&lim);
    lim.max_bytes = 255;
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "256 bytes");
    lim.max_bytes = 256;
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e));
    trn_image_dispose(&img);
    free(b.p);

    /* A large ancillary chunk beyond the chunk limit. */
    static uint8_t text[5000];
    memcpy(text, "Comment", 8);
    memset(text + 8, 'a', sizeof text - 8);
    b = (bytes){0};
    put_ihdr(&b, 64, 4, 8, 0);
    put_chunk(&b, "tEXt", text, sizeof text);
    put_image(&b, grey, 64, 4);
    trn_image_limits_default(&lim);
    CHECK_OK(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e));
    trn_image_dispose(&img);
    lim.max_chunk_bytes = 1000;
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 33);
    CHECK_CONTAINS(e.message, "chunk 'tEXt' is 5000 bytes, more than the limit of 1000");
    trn_image_limits_default(&lim);
    lim.max_chunk_cache_bytes = 4999;
    CHECK_STATUS(trn_png_decode(b.p, b.n, NULL, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "add up to 5000 bytes");
    free(b.p);
}

static void test_png_corrupt(void)
{
    trn_image img;
    memset(&img, 0xAB, sizeof img);
    trn_image untouched = img;
    trn_error e;
    /* Not a PNG at all. */
    static const uint8_t gif[] = "GIF89a\x01\x00\x01\x00";
    CHECK_STATUS(trn_png_decode(gif, sizeof gif - 1, "a.gif", NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.message, "found 47 49 46 38 39 61 01 00");
    CHECK(memcmp(&img, &untouched, sizeof img) == 0);
    CHECK_STATUS(trn_png_decode(gif, 0, "empty.png", NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);

    uint8_t grey[16 * 16];
    for (int i = 0; i < 256; i++)
        grey[i] = (uint8_t)(i * 7);
    bytes b = {0};
    put_ihdr(&b, 16, 16, 8, 0);
    put_image(&b, grey, 16, 16);
    size_t idat = find_chunk(&b, "IDAT");
    CHECK_EQ_INT(idat, 33);

    /* Truncated in the signature, in IHDR, inside IDAT, and before IEND. */
    CHECK_STATUS(trn_png_decode(b.p, 5, NULL, NULL, &img, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 5);
    CHECK_STATUS(trn_png_decode(b.p, 20, NULL, NULL, &img, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 8);
    CHECK_STATUS(trn_png_decode(b.p, 33, NULL, NULL, &img, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 33);
    CHECK_CONTAINS(e.message, "before any image data");
    CHECK_STATUS(trn_png_decode(b.p, idat + 20, "cut.png", NULL, &img, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 33);
    CHECK_CONTAINS(e.message, "chunk 'IDAT'");
    CHECK(strcmp(e.file, "cut.png") == 0);
    CHECK(memcmp(&img, &untouched, sizeof img) == 0);

    /* A flipped IHDR byte fails its CRC, reported at the CRC field. */
    bytes c = {0};
    put(&c, b.p, b.n);
    c.p[17] ^= 0x01;
    CHECK_STATUS(trn_png_decode(c.p, c.n, NULL, NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 29);
    CHECK_CONTAINS(e.message, "CRC");
    free(c.p);

    /* Corrupt compressed data with a valid CRC: libspng's words, offset of the IDAT. */
    c = (bytes){0};
    put_ihdr(&c, 16, 16, 8, 0);
    static const uint8_t bad_zlib[12] = {0x78, 0x9c, 0xff, 0xff, 0xff, 0xff,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    put_chunk(&c, "IDAT", bad_zlib, sizeof bad_zlib);
    put_chunk(&c, "IEND", NULL, 0);
    CHECK_STATUS(trn_png_decode(c.p, c.n, "z.png", NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 33);
    CHECK_CONTAINS(e.message, "libspng says");
    CHECK(memcmp(&img, &untouched, sizeof img) == 0);
    free(c.p);

    /* Invalid IHDR fields. */
    c = (bytes){0};
    put_ihdr(&c, 16, 16, 3, 0); /* 3-bit grey */
    put_image(&c, grey, 6, 16);
    CHECK_STATUS(trn_png_decode(c.p, c.n, NULL, NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 24);
    free(c.p);
    c = (bytes){0};
    put_ihdr(&c, 0, 16, 8, 0);
    put_image(&c, grey, 1, 16);
    CHECK_STATUS(trn_png_decode(c.p, c.n, NULL, NULL, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 16);
    free(c.p);

    /* File errors carry the path. */
    CHECK_STATUS(trn_png_read("/nonexistent/dir/x.png", NULL, &img, &e), TRN_ERR_NOT_FOUND);
    CHECK(strcmp(e.file, "/nonexistent/dir/x.png") == 0);
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "cut.png", path, sizeof path);
    CHECK(trn_test_write_file(path, b.p, idat + 20));
    CHECK_STATUS(trn_png_read(path, NULL, &img, &e), TRN_ERR_TRUNCATED);
    CHECK(strcmp(e.file, path) == 0);
    CHECK_EQ_INT(e.offset, 33);
    trn_png_info info;
    CHECK_OK(trn_png_read_info(path, &info, &e)); /* the header is whole */
    CHECK_EQ_INT(info.width, 16);
    unlink(path);
    rmdir(dir);
    free(b.p);
}

typedef struct progress_log {
    int calls;
    double last;
    bool monotonic;
    int cancel_at; /* cancel on this call (1-based); 0 = never */
} progress_log;

static int log_progress(double done, const char *stage, void *user)
{
    progress_log *log = user;
    log->calls++;
    if (done < log->last) log->monotonic = false;
    log->last = done;
    CHECK(stage != NULL);
    return log->cancel_at && log->calls >= log->cancel_at ? TRN_CANCEL : TRN_CONTINUE;
}

static int count_entries(const char *dir)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d)))
        if (ent->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static void test_png_write_progress_and_cancel(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "out.png", path, sizeof path);
    CHECK(trn_test_write_file(path, "previous", 8));
    trn_image img;
    CHECK_OK(trn_image_init(&img, 300, 1000, 1, 16, NULL));
    fill_pattern(&img);

    progress_log log = {0, 0.0, true, 5};
    trn_error e;
    CHECK_STATUS(trn_png_write(path, &img, NULL, log_progress, &log, &e), TRN_ERR_CANCELLED);
    CHECK_EQ_INT(log.calls, 5);
    CHECK(strcmp(e.file, path) == 0);
    size_t n = 0;
    uint8_t *old = trn_test_read_file(path, &n);
    CHECK(n == 8 && old && memcmp(old, "previous", 8) == 0);
    free(old);
    CHECK_EQ_INT(count_entries(dir), 1); /* the temporary file is gone */

    /* Cancelling at the very first report writes nothing either. */
    log = (progress_log){0, 0.0, true, 1};
    CHECK_STATUS(trn_png_write(path, &img, NULL, log_progress, &log, &e), TRN_ERR_CANCELLED);
    CHECK_EQ_INT(count_entries(dir), 1);

    /* Uncancelled: many monotonic reports ending at 1. */
    log = (progress_log){0, 0.0, true, 0};
    CHECK_OK(trn_png_write(path, &img, NULL, log_progress, &log, &e));
    CHECK(log.calls >= 100);
    CHECK(log.monotonic);
    CHECK(log.last == 1.0);
    trn_image back;
    CHECK_OK(trn_png_read(path, NULL, &back, &e));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    CHECK_EQ_INT(count_entries(dir), 1);

    /* Bad requests. */
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 10;
    CHECK_STATUS(trn_png_write(path, &img, &opt, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "compression level 10");
    trn_image f;
    CHECK_OK(trn_image_init(&f, 4, 4, 1, 32, NULL));
    CHECK_STATUS(trn_png_write(path, &f, NULL, NULL, NULL, &e), TRN_ERR_UNSUPPORTED);
    trn_image_dispose(&f);
    CHECK_STATUS(trn_png_write("/nonexistent/dir/o.png", &img, NULL, NULL, NULL, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK_EQ_INT(count_entries(dir), 1);
    trn_image_dispose(&img);
    unlink(path);
    rmdir(dir);
}

/* ---- The parallel encoder ---------------------------------------------------------------- */

/* The encoder cuts the filtered rows into bands of 1 MiB (src/formats/image/png.c), one IDAT
 * chunk each; these tests pick sizes that make several. */
static size_t expected_bands(const trn_image *img)
{
    size_t line = trn_image_row_bytes(img) + 1, rows = ((size_t)1 << 20) / line;
    if (rows < 1) rows = 1;
    return (img->height + rows - 1) / rows;
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* Terrain-like samples (smooth, so deflate finds matches across band cuts) with a little
 * noise, different in every channel. */
static void fill_smooth(trn_image *img)
{
    size_t i = 0;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++)
            for (uint32_t c = 0; c < img->channels; c++, i++) {
                uint32_t v = x * 7u + y * 3u + c * 1000u + ((x * y) >> 9) +
                             (((uint32_t)i * 2654435761u) >> 30);
                if (img->bit_depth == 8)
                    ((uint8_t *)img->data)[i] = (uint8_t)(v >> 3);
                else
                    ((uint16_t *)img->data)[i] = (uint16_t)(v * 5u);
            }
}

/* Walk an encoded PNG: chunk types in order must be IHDR, [sRGB], IDAT..., IEND; returns the
 * IDAT data laid end to end and the number of IDAT chunks. */
static bytes idat_stream(const bytes *png, size_t *idat_chunks)
{
    bytes z = {0};
    *idat_chunks = 0;
    size_t pos = 8;
    bool seen_iend = false;
    int index = 0;
    while (pos + 12 <= png->n && !seen_iend) {
        uint32_t len = ((uint32_t)png->p[pos] << 24) | ((uint32_t)png->p[pos + 1] << 16) |
                       ((uint32_t)png->p[pos + 2] << 8) | png->p[pos + 3];
        const char *type = (const char *)png->p + pos + 4;
        CHECK(pos + 12 + (size_t)len <= png->n);
        if (index == 0) CHECK(memcmp(type, "IHDR", 4) == 0);
        if (memcmp(type, "IDAT", 4) == 0) {
            put(&z, png->p + pos + 8, len);
            ++*idat_chunks;
        } else if (memcmp(type, "IEND", 4) == 0) {
            seen_iend = true;
            CHECK_EQ_INT(len, 0);
        } else {
            CHECK(index == 0 || (memcmp(type, "sRGB", 4) == 0 && *idat_chunks == 0));
        }
        pos += 12 + (size_t)len;
        index++;
    }
    CHECK(seen_iend);
    CHECK_EQ_INT(pos, png->n); /* nothing after IEND */
    return z;
}

static void test_png_parallel_bands(void)
{
    /* Every layout and filter over several bands: the bytes do not depend on the thread count,
     * the IDAT data is one zlib stream (header as zlib writes it for the level, Adler-32 that
     * zlib checks), the rows carry the filter asked for, and priming each band with the data
     * before it keeps the stream as small as zlib's own single stream. */
    static const struct {
        uint32_t w, h;
        uint8_t ch, depth;
        int level;
        trn_png_filter filter;
        int row_filter; /* the filter-type byte every row must carry; -1: any of 0-4 */
    } cases[] = {
        {1500, 800, 1, 16, 1, TRN_PNG_FILTER_AUTO, 2},
        {1500, 800, 1, 16, 0, TRN_PNG_FILTER_AUTO, 0},
        {900, 500, 4, 8, 6, TRN_PNG_FILTER_AUTO, -1},
        {700, 300, 3, 16, 9, TRN_PNG_FILTER_PAETH, 4},
        {1200, 1000, 2, 8, 1, TRN_PNG_FILTER_SUB, 1},
        {2000, 700, 1, 8, 6, TRN_PNG_FILTER_AVERAGE, 3},
        {600, 700, 4, 16, 1, TRN_PNG_FILTER_ADAPTIVE, -1},
    };
    const int saved = max_threads();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        trn_image img;
        CHECK_OK(trn_image_init(&img, cases[k].w, cases[k].h, cases[k].ch, cases[k].depth, NULL));
        fill_smooth(&img);
        trn_png_options opt;
        trn_png_options_default(&opt);
        opt.compression_level = cases[k].level;
        opt.filter = cases[k].filter;
        bytes one = {0}, two = {0}, three = {0};
        trn_error e;
        test_set_threads(1);
        CHECK_OK(trn_png_encode(&img, &opt, &one.p, &one.n, &e));
        test_set_threads(2);
        CHECK_OK(trn_png_encode(&img, &opt, &two.p, &two.n, &e));
        test_set_threads(3);
        CHECK_OK(trn_png_encode(&img, &opt, &three.p, &three.n, &e));
        test_set_threads(saved);
        CHECK(one.n == two.n && memcmp(one.p, two.p, one.n) == 0);
        CHECK(one.n == three.n && memcmp(one.p, three.p, one.n) == 0);

        trn_image back;
        CHECK_OK(trn_png_decode(one.p, one.n, "bands.png", NULL, &back, &e));
        CHECK(same_image(&img, &back));
        trn_image_dispose(&back);

        size_t chunks = 0;
        bytes z = idat_stream(&one, &chunks);
        size_t bands = expected_bands(&img);
        CHECK(bands >= 2);
        CHECK_EQ_INT(chunks, bands);
        /* zlib's own header for this level (the default, -1, is level 3): compress2 writes the
         * same two bytes. */
        uint8_t tiny[64];
        uLongf tiny_n = sizeof tiny;
        const int level = cases[k].level == -1 ? 3 : cases[k].level;
        CHECK(compress2(tiny, &tiny_n, (const Bytef *)"x", 1, level) == Z_OK);
        CHECK(z.n > 6 && z.p[0] == tiny[0] && z.p[1] == tiny[1]);
        size_t line = trn_image_row_bytes(&img) + 1, raw_n = line * img.height;
        uint8_t *raw = malloc(raw_n + 1);
        uLongf got = (uLongf)raw_n + 1;
        CHECK(uncompress(raw, &got, z.p, (uLong)z.n) == Z_OK); /* checks the Adler-32 too */
        CHECK_EQ_INT(got, raw_n);
        bool filters_ok = true;
        for (uint32_t y = 0; y < img.height; y++) {
            uint8_t t = raw[(size_t)y * line];
            if (cases[k].row_filter >= 0 ? t != cases[k].row_filter : t > 4) filters_ok = false;
        }
        CHECK(filters_ok);
        /* One stream over the same filtered rows, as a single-threaded encoder writes it. */
        uLongf single_n = compressBound((uLong)raw_n);
        uint8_t *single = malloc(single_n);
        CHECK(compress2(single, &single_n, raw, (uLong)raw_n, cases[k].level) == Z_OK);
        CHECK(z.n <= (size_t)single_n + (size_t)single_n / 100 + 64 * bands);
        free(single);
        free(raw);
        free(z.p);
        free(one.p);
        free(two.p);
        free(three.p);
        trn_image_dispose(&img);
    }

    /* Rows of noise that repeat: only matches back into the previous band compress a band's
     * first row, so without priming each band would cost a row (20 kB) more; with it the
     * stream stays within a quarter row per band of zlib's single stream. */
    trn_image rep;
    CHECK_OK(trn_image_init(&rep, 20000, 200, 1, 8, NULL));
    for (uint32_t y = 0; y < rep.height; y++)
        for (uint32_t x = 0; x < rep.width; x++) {
            uint32_t v = x * 0x9E3779B1u;
            v ^= v >> 15;
            v *= 0x85EBCA6Bu;
            v ^= v >> 13;
            ((uint8_t *)rep.data)[(size_t)y * rep.width + x] = (uint8_t)(v >> 24);
        }
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 1;
    opt.filter = TRN_PNG_FILTER_NONE;
    bytes png = {0};
    test_set_threads(2);
    CHECK_OK(trn_png_encode(&rep, &opt, &png.p, &png.n, NULL));
    test_set_threads(saved);
    size_t chunks = 0;
    bytes z = idat_stream(&png, &chunks);
    CHECK_EQ_INT(chunks, expected_bands(&rep));
    CHECK(chunks >= 4);
    size_t raw_n = (size_t)rep.height * (rep.width + 1);
    uint8_t *raw = malloc(raw_n);
    uLongf got = (uLongf)raw_n;
    CHECK(uncompress(raw, &got, z.p, (uLong)z.n) == Z_OK);
    uLongf single_n = compressBound((uLong)raw_n);
    uint8_t *single = malloc(single_n);
    CHECK(compress2(single, &single_n, raw, (uLong)raw_n, 1) == Z_OK);
    CHECK(z.n <= (size_t)single_n + (size_t)rep.width / 4 * (chunks - 1));
    free(single);
    free(raw);
    free(z.p);
    free(png.p);
    trn_image_dispose(&rep);
}

static void test_png_parallel_write(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "bands.png", path, sizeof path);
    CHECK(trn_test_write_file(path, "previous", 8));
    trn_image img;
    CHECK_OK(trn_image_init(&img, 1500, 2000, 1, 16, NULL));
    fill_smooth(&img);
    CHECK_EQ_INT(expected_bands(&img), 6);
    const int saved = max_threads();
    test_set_threads(2);

    /* Cancelling in the middle, with bands in flight on other threads: no call after the
     * cancelling one, and the old file stays. */
    progress_log log = {0, 0.0, true, 10};
    trn_error e;
    CHECK_STATUS(trn_png_write(path, &img, NULL, log_progress, &log, &e), TRN_ERR_CANCELLED);
    CHECK_EQ_INT(log.calls, 10);
    CHECK(log.monotonic && log.last > 0.0 && log.last < 1.0);
    CHECK(strcmp(e.file, path) == 0);
    size_t n = 0;
    uint8_t *old = trn_test_read_file(path, &n);
    CHECK(n == 8 && old && memcmp(old, "previous", 8) == 0);
    free(old);
    CHECK_EQ_INT(count_entries(dir), 1);

    /* Uncancelled: progress from the calling thread all along, and the file holds the bytes
     * trn_png_encode gives on one thread. */
    log = (progress_log){0, 0.0, true, 0};
    CHECK_OK(trn_png_write(path, &img, NULL, log_progress, &log, &e));
    CHECK(log.calls >= 40);
    CHECK(log.monotonic);
    CHECK(log.last == 1.0);
    test_set_threads(1);
    bytes mem = {0};
    CHECK_OK(trn_png_encode(&img, NULL, &mem.p, &mem.n, &e));
    test_set_threads(saved);
    uint8_t *file = trn_test_read_file(path, &n);
    CHECK(file && n == mem.n && memcmp(file, mem.p, n) == 0);
    free(file);
    free(mem.p);
    trn_image_dispose(&img);

    /* Rows longer than a band: each row is a band of its own. */
    trn_image wide;
    CHECK_OK(trn_image_init(&wide, 300000, 3, 4, 8, NULL));
    fill_smooth(&wide);
    CHECK_EQ_INT(expected_bands(&wide), 3);
    test_set_threads(2);
    CHECK_OK(trn_png_write(path, &wide, NULL, NULL, NULL, &e));
    test_set_threads(saved);
    trn_image_limits limits;
    trn_image_limits_default(&limits);
    limits.max_width = 300000;
    trn_image back;
    uint8_t *wide_png = trn_test_read_file(path, &n);
    CHECK(wide_png != NULL);
    CHECK_OK(trn_png_decode(wide_png, n, path, &limits, &back, &e));
    CHECK(same_image(&wide, &back));
    bytes wide_bytes = {wide_png, n};
    size_t chunks = 0;
    bytes z = idat_stream(&wide_bytes, &chunks);
    CHECK_EQ_INT(chunks, 3);
    free(z.p);
    free(wide_png);
    trn_image_dispose(&back);
    trn_image_dispose(&wide);
    unlink(path);
    rmdir(dir);
}

/* Noise in the first band, zeros after it (4095 one-byte pixels a row: 256 rows a band).
 * deflate takes many times longer over the noise, so the other threads finish the bands that
 * fit beside it and must wait for the first band to be written before reusing its slot. */
static void fill_slow_first_band(trn_image *img)
{
    memset(img->data, 0, (size_t)img->width * img->height);
    uint32_t v = 1;
    for (size_t i = 0; i < (size_t)img->width * 256u; i++) {
        v ^= v << 13;
        v ^= v >> 17;
        v ^= v << 5;
        ((uint8_t *)img->data)[i] = (uint8_t)(v >> 24);
    }
}

typedef struct slow_cancel {
    double at; /* cancel once this fraction of the rows is compressed */
    int calls;
} slow_cancel;

static int cancel_while_waiting(double done, const char *stage, void *user)
{
    slow_cancel *s = user;
    (void)stage;
    s->calls++;
    if (done < s->at) return TRN_CONTINUE;
    /* The other thread has compressed its bands: give it time to wait for the first slot. */
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return TRN_CANCEL;
}

static void test_png_slow_first_band(void)
{
    /* Bands are taken by whichever thread is free and written in order: a thread that runs a
     * window ahead of a slow band waits for its slot instead of overwriting a band not yet
     * written, and the bytes stay those of one thread. */
    trn_image img;
    CHECK_OK(trn_image_init(&img, 4095, 12 * 256, 1, 8, NULL));
    fill_slow_first_band(&img);
    CHECK_EQ_INT(expected_bands(&img), 12);
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 9;
    opt.filter = TRN_PNG_FILTER_NONE;
    const int saved = max_threads();
    bytes one = {0}, two = {0}, three = {0};
    trn_error e;
    test_set_threads(1);
    CHECK_OK(trn_png_encode(&img, &opt, &one.p, &one.n, &e));
    test_set_threads(2);
    CHECK_OK(trn_png_encode(&img, &opt, &two.p, &two.n, &e));
    test_set_threads(3);
    CHECK_OK(trn_png_encode(&img, &opt, &three.p, &three.n, &e));
    CHECK(one.n == two.n && memcmp(one.p, two.p, one.n) == 0);
    CHECK(one.n == three.n && memcmp(one.p, three.p, one.n) == 0);
    trn_image back;
    CHECK_OK(trn_png_decode(one.p, one.n, "slow.png", NULL, &back, &e));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);

    /* Cancelled by the calling thread in the slow band while the other thread waits for a
     * slot: the waiting thread is woken and the call returns. On two threads the other one
     * compresses at most bands 1-3 (a window of 4) beside band 0. Which thread takes band 0
     * is up to the scheduler, so a few tries make the waiting case all but certain. */
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "slow.png", path, sizeof path);
    test_set_threads(2);
    for (int attempt = 0; attempt < 4; attempt++) {
        slow_cancel sc = {(3.0 * 256.0 + 16.0) / img.height, 0};
        CHECK_STATUS(trn_png_write(path, &img, &opt, cancel_while_waiting, &sc, &e),
                     TRN_ERR_CANCELLED);
        CHECK(sc.calls >= 2);
        CHECK_EQ_INT(count_entries(dir), 0);
    }
    test_set_threads(saved);
    rmdir(dir);
    free(one.p);
    free(two.p);
    free(three.p);
    trn_image_dispose(&img);
}

/* ---- RAW -------------------------------------------------------------------------------- */

static void test_raw_read(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "h.r16", path, sizeof path);
    /* 4 x 4 u16: sample i is 0x0100 * i + 1, stored little-endian. */
    uint8_t le[32];
    for (int i = 0; i < 16; i++) {
        uint16_t v = (uint16_t)(0x0100 * i + 1);
        le[2 * i] = (uint8_t)v;
        le[2 * i + 1] = (uint8_t)(v >> 8);
    }
    CHECK(trn_test_write_file(path, le, sizeof le));
    trn_image img;
    trn_error e;
    CHECK_OK(trn_raw_read(path, TRN_RAW_U16_LE, 0, 0, &img, &e));
    CHECK(img.width == 4 && img.height == 4 && img.channels == 1 && img.bit_depth == 16);
    CHECK_EQ_INT(((uint16_t *)img.data)[5], 0x0501);
    trn_image_dispose(&img);
    CHECK_OK(trn_raw_read(path, TRN_RAW_U16_BE, 0, 0, &img, &e));
    CHECK_EQ_INT(((uint16_t *)img.data)[5], 0x0105);
    trn_image_dispose(&img);
    /* One side given, the other inferred; explicit non-square sizes. */
    CHECK_OK(trn_raw_read(path, TRN_RAW_U16_LE, 8, 0, &img, &e));
    CHECK(img.width == 8 && img.height == 2);
    trn_image_dispose(&img);
    CHECK_OK(trn_raw_read(path, TRN_RAW_U16_LE, 2, 8, &img, &e));
    CHECK(img.width == 2 && img.height == 8);
    CHECK_EQ_INT(((uint16_t *)img.data)[15], 0x0F01);
    trn_image_dispose(&img);
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U16_LE, 0, 3, &img, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "not a whole number of columns of 3");
    /* The same bytes as u8: 32 samples, not a square. */
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U8, 0, 0, &img, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "length 32 bytes is 32 8-bit samples, which is not a square");
    CHECK_CONTAINS(e.message, "--size WxH");
    CHECK_EQ_INT(e.offset, -1);
    CHECK(strcmp(e.file, path) == 0);
    CHECK_OK(trn_raw_read(path, TRN_RAW_U8, 8, 4, &img, &e));
    trn_image_dispose(&img);
    /* As float32: 8 samples, not square either. */
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_F32_LE, 0, 0, &img, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "2 x 2 is 16 bytes, 3 x 3 is 36");
    /* Explicit sizes that do not match. */
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U16_LE, 5, 5, &img, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 32);
    CHECK_CONTAINS(e.message, "file is 32 bytes, expected 50 bytes for 5 x 5");
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U16_LE, 3, 3, &img, &e), TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, 18);
    CHECK_CONTAINS(e.message, "expected 18 bytes for 3 x 3");
    /* Odd length for 16-bit samples. */
    CHECK(trn_test_write_file(path, le, 31));
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U16_LE, 0, 0, &img, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 30);
    CHECK_CONTAINS(e.message, "length 31 bytes is not a whole number of 2-byte");
    CHECK(trn_test_write_file(path, le, 0));
    CHECK_STATUS(trn_raw_read(path, TRN_RAW_U16_LE, 0, 0, &img, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "empty");
    CHECK_STATUS(trn_raw_read("/nonexistent/x.r16", TRN_RAW_U16_LE, 0, 0, &img, &e),
                 TRN_ERR_NOT_FOUND);
    /* Limits on the memory entry point. */
    trn_image_limits lim;
    trn_image_limits_default(&lim);
    lim.max_width = 3;
    CHECK_STATUS(trn_raw_decode(le, 32, NULL, TRN_RAW_U16_LE, 0, 0, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "4 x 4");
    /* The sample limit, exact, from a file, before the length is compared (5 x 5 would be
     * truncated: the limit speaks first). */
    CHECK(trn_test_write_file(path, le, sizeof le));
    trn_image_limits_default(&lim);
    lim.max_samples = 16;
    CHECK_OK(trn_raw_read_limited(path, TRN_RAW_U16_LE, 0, 0, &lim, &img, &e));
    CHECK(img.width == 4 && img.height == 4);
    trn_image_dispose(&img);
    lim.max_samples = 15;
    CHECK_STATUS(trn_raw_read_limited(path, TRN_RAW_U16_LE, 0, 0, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK(strcmp(e.file, path) == 0);
    CHECK_CONTAINS(e.message, "4 x 4 = 16 samples is more than the limit of 15");
    CHECK_CONTAINS(e.message, "--max-samples");
    lim.max_samples = 24;
    CHECK_STATUS(trn_raw_read_limited(path, TRN_RAW_U16_LE, 5, 5, &lim, &img, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "5 x 5 = 25 samples");
    lim.max_samples = 25;
    CHECK_STATUS(trn_raw_read_limited(path, TRN_RAW_U16_LE, 5, 5, &lim, &img, &e),
                 TRN_ERR_TRUNCATED);
    unlink(path);
    rmdir(dir);
}

/* A raster of a million samples and more is decoded on every core: each sample its own bytes
 * on 1 and 3 threads, in either byte order and as floats, the last sample too. */
static void test_raw_decode_threads(void)
{
    const uint32_t w = 1024, h = 1025;
    const size_t n = (size_t)w * h;
    uint8_t *raw = malloc(4 * n);
    CHECK(raw != NULL);
    if (!raw) return;
    for (size_t i = 0; i < 4 * n; i++)
        raw[i] = (uint8_t)(i * 2654435761u >> 13);
    const trn_raw_type types[3] = {TRN_RAW_U16_LE, TRN_RAW_U16_BE, TRN_RAW_F32_LE};
    const int saved = max_threads();
    for (int threads = 1; threads <= 3; threads += 2) {
        test_set_threads(threads);
        for (int t = 0; t < 3; t++) {
            const size_t sb = types[t] == TRN_RAW_F32_LE ? 4 : 2;
            trn_image img;
            trn_error e;
            CHECK_OK(trn_raw_decode(raw, sb * n, "big.raw", types[t], w, h, NULL, &img, &e));
            bool same = true;
            for (size_t i = 0; i < n; i++) {
                const uint8_t *q = raw + sb * i;
                if (types[t] == TRN_RAW_F32_LE) {
                    uint32_t u = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 |
                                 (uint32_t)q[3] << 24,
                             got;
                    memcpy(&got, (const float *)img.data + i, sizeof got);
                    same = same && got == u;
                } else {
                    const unsigned lo = q[types[t] == TRN_RAW_U16_LE ? 0 : 1];
                    const unsigned hi = q[types[t] == TRN_RAW_U16_LE ? 1 : 0];
                    same = same && ((const uint16_t *)img.data)[i] == (hi << 8 | lo);
                }
            }
            CHECK(same);
            trn_image_dispose(&img);
        }
    }
    test_set_threads(saved);
    free(raw);
}

static void test_raw_write(void)
{
    char dir[256], path[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    tmp_path(dir, "w.raw", path, sizeof path);
    trn_image img, back;
    CHECK_OK(trn_image_init(&img, 3, 3, 1, 16, NULL));
    ((uint16_t *)img.data)[0] = 0x1234;
    ((uint16_t *)img.data)[8] = 0xBEEF;
    trn_error e;
    CHECK_OK(trn_raw_write(path, &img, TRN_RAW_U16_BE, &e));
    size_t n = 0;
    uint8_t *file = trn_test_read_file(path, &n);
    CHECK_EQ_INT(n, 18);
    CHECK(file && file[0] == 0x12 && file[1] == 0x34 && file[16] == 0xBE && file[17] == 0xEF);
    free(file);
    CHECK_OK(trn_raw_write(path, &img, TRN_RAW_U16_LE, &e));
    file = trn_test_read_file(path, &n);
    CHECK(file && file[0] == 0x34 && file[1] == 0x12);
    free(file);
    CHECK_OK(trn_raw_read(path, TRN_RAW_U16_LE, 0, 0, &back, &e));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    CHECK_STATUS(trn_raw_write(path, &img, TRN_RAW_U8, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "1 channel of 8 bits");
    trn_image_dispose(&img);

    /* R32 round trip, including a negative and a fraction, bit for bit. */
    CHECK_OK(trn_image_init(&img, 5, 5, 1, 32, NULL));
    fill_pattern(&img);
    ((float *)img.data)[3] = -12.375f;
    CHECK_OK(trn_raw_write(path, &img, TRN_RAW_F32_LE, &e));
    file = trn_test_read_file(path, &n);
    CHECK_EQ_INT(n, 100);
    CHECK(file && file[12] == 0x00 && file[13] == 0x00 && file[14] == 0x46 && file[15] == 0xC1);
    free(file);
    CHECK_OK(trn_raw_read(path, TRN_RAW_F32_LE, 0, 0, &back, &e));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    trn_image_dispose(&img);

    /* u8 through the memory entry points. */
    CHECK_OK(trn_image_init(&img, 7, 2, 1, 8, NULL));
    fill_pattern(&img);
    uint8_t *buf = NULL;
    CHECK_OK(trn_raw_encode(&img, TRN_RAW_U8, &buf, &n, &e));
    CHECK_EQ_INT(n, 14);
    CHECK_OK(trn_raw_decode(buf, n, NULL, TRN_RAW_U8, 7, 0, NULL, &back, &e));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    free(buf);
    trn_image_dispose(&img);
    unlink(path);
    rmdir(dir);
}

/* ---- image <-> field -------------------------------------------------------------------- */

static void test_field_orientation(void)
{
    /* 3 x 2 image: top row (north) 10 20 30, bottom row 40 50 60. */
    trn_image img;
    CHECK_OK(trn_image_init(&img, 3, 2, 1, 16, NULL));
    uint16_t *px = img.data;
    for (int i = 0; i < 6; i++)
        px[i] = (uint16_t)(10 * (i + 1));
    trn_field f;
    trn_error e;
    CHECK_OK(trn_image_to_field(&img, 0, 0.5, -10.0, 2.0, &f, &e));
    CHECK(f.cells_x == 2 && f.cells_z == 1);
    CHECK(f.size_x == 4.0 && f.size_z == 2.0);
    CHECK(f.quantum == 0.5 && f.quantum_base == -10.0);
    /* Field row 0 (z = 0, south) is the image's bottom row. */
    CHECK(f.heights[0] == (float)(-10.0 + 40 * 0.5));
    CHECK(f.heights[2] == (float)(-10.0 + 60 * 0.5));
    CHECK(f.heights[3] == (float)(-10.0 + 10 * 0.5)); /* last field row = image row 0 */
    CHECK(f.heights[5] == (float)(-10.0 + 30 * 0.5));
    trn_image back;
    CHECK_OK(trn_image_from_field(&f, 0.0, 0.0, &back, &e)); /* uses the field's quantum */
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    trn_field_dispose(&f);
    trn_image_dispose(&img);

    /* Bad arguments. */
    CHECK_OK(trn_image_init(&img, 1, 5, 1, 16, NULL));
    CHECK_STATUS(trn_image_to_field(&img, 0, 1.0, 0.0, 1.0, &f, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "at least 2 x 2");
    trn_image_dispose(&img);
    CHECK_OK(trn_image_init(&img, 2, 2, 1, 16, NULL));
    CHECK_STATUS(trn_image_to_field(&img, 1, 1.0, 0.0, 1.0, &f, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_image_to_field(&img, 0, 0.0, 0.0, 1.0, &f, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_image_to_field(&img, 0, 1.0, 0.0, -1.0, &f, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_image_dispose(&img);
}

static void test_field_round_trips(void)
{
    /* Every 16-bit value at BeamNG's quantum (maxHeight / 65536) comes back exactly. */
    trn_image img, back;
    CHECK_OK(trn_image_init(&img, 256, 257, 1, 16, NULL));
    uint16_t *px = img.data;
    for (size_t i = 0; i < 256u * 257u; i++)
        px[i] = (uint16_t)(i * 40503u);
    px[0] = 0;
    px[1] = 65535;
    trn_field f;
    CHECK_OK(trn_image_to_field(&img, 0, 2048.0 / 65536.0, 0.0, 1.0, &f, NULL));
    CHECK_OK(trn_image_from_field(&f, 0.0, 0.0, &back, NULL));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    /* Explicit quantum and base, with a negative base. */
    trn_field_dispose(&f);
    CHECK_OK(trn_image_to_field(&img, 0, 0.01, -250.0, 1.0, &f, NULL));
    CHECK_OK(trn_image_from_field(&f, 0.01, -250.0, &back, NULL));
    CHECK(same_image(&img, &back));
    trn_image_dispose(&back);
    trn_field_dispose(&f);
    trn_image_dispose(&img);

    /* 8-bit RGBA, channel 2: widened v*257, then back to 16 bits exactly. */
    CHECK_OK(trn_image_init(&img, 16, 16, 4, 8, NULL));
    uint8_t *p8 = img.data;
    for (size_t i = 0; i < 256; i++) {
        p8[4 * i] = 1;
        p8[4 * i + 2] = (uint8_t)i;
        p8[4 * i + 3] = 255;
    }
    CHECK_OK(trn_image_to_field(&img, 2, 0.5, 0.0, 1.0, &f, NULL));
    CHECK(f.heights[0] == (float)(240 * 257 * 0.5)); /* field (0,0) = image row 15, x 0 */
    CHECK_OK(trn_image_from_field(&f, 0.0, 0.0, &back, NULL));
    CHECK(back.bit_depth == 16 && back.channels == 1);
    for (size_t i = 0; i < 256; i++)
        CHECK_EQ_INT(((uint16_t *)back.data)[i], i * 257u);
    trn_image_dispose(&back);
    trn_field_dispose(&f);
    trn_image_dispose(&img);

    /* Float images copy metres and leave the field unquantised. */
    CHECK_OK(trn_image_init(&img, 2, 2, 1, 32, NULL));
    float *pf = img.data;
    pf[0] = -3.5f;
    pf[3] = 1234.25f;
    CHECK_OK(trn_image_to_field(&img, 0, 0.0, 0.0, 1.0, &f, NULL));
    CHECK(f.heights[2] == -3.5f && f.heights[1] == 1234.25f);
    CHECK(f.quantum == 0.0);
    /* Stretch: min -> 0, max -> 65535. */
    CHECK_OK(trn_image_from_field(&f, 0.0, 0.0, &back, NULL));
    CHECK_EQ_INT(((uint16_t *)back.data)[0], 0);
    CHECK_EQ_INT(((uint16_t *)back.data)[3], 65535);
    CHECK_EQ_INT(((uint16_t *)back.data)[1], (int)(3.5 / 1237.75 * 65535 + 0.5));
    trn_image_dispose(&back);
    /* Clamping and NaN. */
    f.heights[0] = -5.0f;
    f.heights[1] = 70000.0f;
    f.heights[2] = NAN;
    f.heights[3] = 2.5f;
    CHECK_OK(trn_image_from_field(&f, 1.0, 0.0, &back, NULL));
    uint16_t *q = back.data;
    CHECK(q[2] == 0 && q[3] == 65535 && q[0] == 0 && q[1] == 3); /* 2.5 rounds half up */
    trn_image_dispose(&back);
    /* A flat field is all 0. */
    for (int i = 0; i < 4; i++)
        f.heights[i] = 42.0f;
    CHECK_OK(trn_image_from_field(&f, 0.0, 0.0, &back, NULL));
    q = back.data;
    CHECK(q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0);
    trn_image_dispose(&back);
    trn_error e;
    CHECK_STATUS(trn_image_from_field(&f, -1.0, 0.0, &back, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
    trn_image_dispose(&img);
}

static void test_channels(void)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, 3, 2, 2, 16, NULL));
    static const uint16_t grey_alpha[12] = {0,   65535, 128,   32896, 129, 385,
                                            256, 257,   65278, 65408, 1,   0};
    memcpy(img.data, grey_alpha, sizeof grey_alpha);
    uint8_t out8[6];
    uint16_t out16[6];
    trn_error e;
    CHECK_OK(trn_image_channel_u8(&img, 0, out8, &e));
    static const uint8_t grey8[6] = {0, 0, 1, 1, 254, 0}; /* 128/257 < .5, 129/257 > .5 */
    CHECK(memcmp(out8, grey8, 6) == 0);
    CHECK_OK(trn_image_channel_u8(&img, 1, out8, &e));
    static const uint8_t alpha8[6] = {255, 128, 1, 1, 255, 0}; /* 65408/257 = 254.5 -> 255 */
    CHECK(memcmp(out8, alpha8, 6) == 0);
    CHECK_OK(trn_image_channel_u16(&img, 1, out16, &e));
    CHECK(out16[0] == 65535 && out16[4] == 65408);
    CHECK_STATUS(trn_image_channel_u8(&img, 2, out8, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "channel 2 requested but the image has 2 channels");
    trn_image_dispose(&img);

    CHECK_OK(trn_image_init(&img, 2, 1, 4, 8, NULL));
    static const uint8_t rgba[8] = {1, 2, 3, 4, 255, 6, 7, 8};
    memcpy(img.data, rgba, 8);
    CHECK_OK(trn_image_channel_u8(&img, 3, out8, &e));
    CHECK(out8[0] == 4 && out8[1] == 8);
    CHECK_OK(trn_image_channel_u16(&img, 0, out16, &e));
    CHECK(out16[0] == 257 && out16[1] == 65535);
    trn_image_dispose(&img);

    CHECK_OK(trn_image_init(&img, 2, 1, 1, 32, NULL));
    CHECK_STATUS(trn_image_channel_u8(&img, 0, out8, &e), TRN_ERR_UNSUPPORTED);
    trn_image_dispose(&img);

    /* init refusals, and dispose(NULL). */
    CHECK_STATUS(trn_image_init(&img, 0, 5, 1, 8, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_image_init(&img, 5, 5, 5, 8, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_image_init(&img, 5, 5, 1, 12, &e), TRN_ERR_INVALID_ARGUMENT);
    if (sizeof(size_t) == 4)
        CHECK_STATUS(trn_image_init(&img, 65536, 65536, 4, 16, &e), TRN_ERR_OVERFLOW);
    CHECK(img.data == NULL);
    trn_image_dispose(NULL);
}

/* A tileable map resampled: the same size is a copy; shrinking averages the texels each output
 * texel covers (a one-in-four stripe becomes an even 25% grey, where point or bilinear sampling
 * would give stripes of 0% and 50%); growing interpolates and wraps at the edges; channels are
 * chosen as documented. */
static void test_resample_tiled(void)
{
    trn_image src, out;
    trn_error e;
    CHECK_OK(trn_image_init(&src, 64, 8, 3, 8, &e));
    uint8_t *p = src.data;
    for (uint32_t y = 0; y < 8; y++)
        for (uint32_t x = 0; x < 64; x++) {
            uint8_t *t = p + ((size_t)y * 64 + x) * 3;
            t[0] = x % 4 == 1 ? 255 : 0; /* one column in four lit */
            t[1] = (uint8_t)(x * 4);
            t[2] = (uint8_t)(y * 20);
        }
    /* same size: a copy */
    CHECK_OK(trn_image_resample_tiled(&src, 64, 8, 3, &out, &e));
    CHECK(out.channels == 3 && out.bit_depth == 8 && memcmp(out.data, src.data, 64 * 8 * 3) == 0);
    trn_image_dispose(&out);
    /* 64 -> 16 across: every texel is the mean of four columns, one of them lit */
    CHECK_OK(trn_image_resample_tiled(&src, 16, 8, 1, &out, &e));
    bool even = true;
    for (size_t k = 0; k < 16 * 8; k++)
        even = even && ((uint8_t *)out.data)[k] == 64; /* 255 / 4 = 63.75 */
    CHECK(even);
    trn_image_dispose(&out);
    /* 64 -> 24 (not a whole factor): partly covered texels count by the part covered; the mean
     * of the whole image is kept and every texel stays between the stripes' 0 and 255 / 2 */
    CHECK_OK(trn_image_resample_tiled(&src, 24, 8, 1, &out, &e));
    double sum = 0;
    uint8_t hi = 0;
    for (size_t k = 0; k < 24 * 8; k++) {
        sum += ((uint8_t *)out.data)[k];
        if (((uint8_t *)out.data)[k] > hi) hi = ((uint8_t *)out.data)[k];
    }
    CHECK(fabs(sum / (24 * 8) - 63.75) < 0.6 && hi <= 128);
    trn_image_dispose(&out);
    /* 8 rows -> 16: row 0's centre sits a quarter texel above source row 0's, between it and
     * the last row (the map wraps) */
    CHECK_OK(trn_image_resample_tiled(&src, 64, 16, 3, &out, &e));
    const uint8_t *o = out.data;
    CHECK_EQ_INT(o[2], 35);                     /* 0.75 * 0 + 0.25 * 140 */
    CHECK_EQ_INT(o[(size_t)1 * 64 * 3 + 2], 5); /* row 1: 0.75 * 0 + 0.25 * 20 */
    trn_image_dispose(&out);
    /* grey to RGB repeats the grey; RGBA of an RGB source is opaque */
    trn_image grey;
    CHECK_OK(trn_image_init(&grey, 2, 2, 1, 16, &e));
    uint16_t *g = grey.data;
    g[0] = g[1] = g[2] = g[3] = 65535;
    CHECK_OK(trn_image_resample_tiled(&grey, 1, 1, 4, &out, &e));
    CHECK(((uint8_t *)out.data)[0] == 255 && ((uint8_t *)out.data)[2] == 255 &&
          ((uint8_t *)out.data)[3] == 255);
    trn_image_dispose(&out);
    trn_image_dispose(&grey);
    CHECK_STATUS(trn_image_resample_tiled(&src, 0, 4, 3, &out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_image_resample_tiled(&src, 4, 4, 2, &out, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_image_dispose(&src);
}

int main(void)
{
    RUN(test_png_round_trips);
    RUN(test_png_16bit_byte_order);
    RUN(test_png_palette_and_low_bits);
    RUN(test_png_colour_chunks);
    RUN(test_png_read_info_is_cheap);
    RUN(test_png_limits);
    RUN(test_png_corrupt);
    RUN(test_png_write_progress_and_cancel);
    RUN(test_png_parallel_bands);
    RUN(test_png_parallel_write);
    RUN(test_png_slow_first_band);
    RUN(test_raw_read);
    RUN(test_raw_decode_threads);
    RUN(test_raw_write);
    RUN(test_field_orientation);
    RUN(test_field_round_trips);
    RUN(test_channels);
    RUN(test_resample_tiled);
    return trn_test_finish();
}
