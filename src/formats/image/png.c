/* PNG: header and chunk walk of our own (info, limits, error offsets), pixels read via libspng;
 * written by our own encoder, which compresses row bands on every core. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <zlib.h>
#ifdef _OPENMP
#include <omp.h>
#include <pthread.h>
#endif

#include "core/cursor.h"
#include "core/fileio.h"
#include "core/progress.h"
#include "image_private.h"
#include "terrane/image.h"

static const uint8_t png_signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

/* PNG caps widths, heights and chunk lengths at 2^31 - 1. */
#define PNG_UINT31_MAX 0x7fffffffu

/* gAMA of 1/2.2 is stored as 45455; within 1% we call the image sRGB-encoded. */
#define PNG_GAMA_SRGB 45455u
#define PNG_GAMA_SRGB_TOLERANCE 455u

bool trn_png_sniff(const uint8_t *data, size_t size)
{
    return data && size >= sizeof png_signature &&
           memcmp(data, png_signature, sizeof png_signature) == 0;
}

/* One chunk as found in the file. */
typedef struct png_chunk {
    size_t offset; /* of the length field */
    uint32_t length;
    char type[5];
    const uint8_t *data;
} png_chunk;

static bool chunk_is(const png_chunk *chunk, const char *type)
{
    return memcmp(chunk->type, type, 4) == 0;
}

/* Read the chunk at c->pos: length, type, data and CRC, all checked. */
static trn_status next_chunk(trn_cursor *c, const char *path, png_chunk *chunk, trn_error *err)
{
    memset(chunk, 0, sizeof *chunk);
    chunk->offset = c->pos;
    const uint8_t *type;
    if (!trn_cursor_u32be(c, &chunk->length) || !(type = trn_cursor_take(c, 4)))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)chunk->offset,
                             "file ends inside a chunk header: expected 8 bytes (length and "
                             "type), found %zu",
                             c->size - chunk->offset);
    for (int i = 0; i < 4; i++) {
        bool letter = (type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z');
        chunk->type[i] = letter ? (char)type[i] : '?';
        if (!letter)
            return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)chunk->offset + 4,
                                 "chunk type bytes %02x %02x %02x %02x are not ASCII letters "
                                 "(corrupt chunk list)",
                                 type[0], type[1], type[2], type[3]);
    }
    if (chunk->length > PNG_UINT31_MAX)
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)chunk->offset,
                             "chunk '%s' declares %u bytes, more than the PNG maximum of 2^31-1",
                             chunk->type, chunk->length);
    uint32_t stored_crc;
    if (!(chunk->data = trn_cursor_take(c, chunk->length)) || !trn_cursor_u32be(c, &stored_crc))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)chunk->offset,
                             "chunk '%s' declares %u data bytes plus a 4-byte CRC, but only %zu "
                             "bytes are left in the file",
                             chunk->type, chunk->length, c->size - chunk->offset - 8);
    uLong crc = crc32(0L, type, 4);
    crc = crc32(crc, chunk->data, (uInt)chunk->length);
    if ((uint32_t)crc != stored_crc)
        return trn_error_set(err, TRN_ERR_FORMAT, path,
                             (int64_t)(chunk->offset + 8 + chunk->length),
                             "chunk '%s' at offset %zu has CRC %08x, expected %08x (corrupt "
                             "file)",
                             chunk->type, chunk->offset, stored_crc, (uint32_t)crc);
    return TRN_OK;
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static bool valid_depth(uint8_t color_type, uint8_t depth)
{
    switch (color_type) {
    case 0:
        return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
    case 3:
        return depth == 1 || depth == 2 || depth == 4 || depth == 8;
    case 2:
    case 4:
    case 6:
        return depth == 8 || depth == 16;
    }
    return false;
}

/* Check the signature and IHDR (at offset 8) and leave c after IHDR. */
static trn_status parse_header(trn_cursor *c, const char *path, trn_png_info *info, trn_error *err)
{
    const uint8_t *d = c->data;
    if (!trn_png_sniff(d, c->size)) {
        size_t n = c->size < 8 ? c->size : 8;
        if (c->size < 8 && (n == 0 || memcmp(d, png_signature, n) == 0))
            return trn_error_set(err, n == 0 ? TRN_ERR_FORMAT : TRN_ERR_TRUNCATED, path, (int64_t)n,
                                 "not a PNG file: %zu bytes, the 8-byte PNG signature is "
                                 "incomplete",
                                 n);
        char found[40] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(found + 3 * i, sizeof found - 3 * i, "%02x ", d[i]);
        if (n) found[3 * n - 1] = '\0';
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "not a PNG file: expected the signature 89 50 4e 47 0d 0a 1a 0a, "
                             "found %s",
                             found);
    }
    c->pos = 8;
    png_chunk ihdr;
    trn_status st = next_chunk(c, path, &ihdr, err);
    if (st) return st;
    if (!chunk_is(&ihdr, "IHDR"))
        return trn_error_set(err, TRN_ERR_FORMAT, path, 12, "first chunk is '%s', expected 'IHDR'",
                             ihdr.type);
    if (ihdr.length != 13)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 8, "IHDR is %u bytes long, expected 13",
                             ihdr.length);
    const uint8_t *h = ihdr.data;
    info->width = be32(h);
    info->height = be32(h + 4);
    info->bit_depth = h[8];
    info->color_type = h[9];
    info->interlace_method = h[12];
    if (info->width == 0 || info->width > PNG_UINT31_MAX)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 16, "IHDR width %u: expected 1 to 2^31-1",
                             info->width);
    if (info->height == 0 || info->height > PNG_UINT31_MAX)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 20, "IHDR height %u: expected 1 to 2^31-1",
                             info->height);
    if (info->color_type > 6 || info->color_type == 1 || info->color_type == 5)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 25,
                             "IHDR colour type %u: expected 0, 2, 3, 4 or 6", info->color_type);
    if (!valid_depth(info->color_type, info->bit_depth))
        return trn_error_set(err, TRN_ERR_FORMAT, path, 24,
                             "IHDR bit depth %u is not allowed with colour type %u",
                             info->bit_depth, info->color_type);
    if (h[10] != 0 || h[11] != 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, h[10] ? 26 : 27,
                             "IHDR %s method %u: expected 0", h[10] ? "compression" : "filter",
                             h[10] ? h[10] : h[11]);
    if (info->interlace_method > 1)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 28,
                             "IHDR interlace method %u: expected 0 or 1", info->interlace_method);
    return TRN_OK;
}

trn_status trn_png_decode_info(const uint8_t *data, size_t size, const char *path,
                               trn_png_info *info, trn_error *err)
{
    if (!info || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "info or data is NULL");
    trn_png_info out;
    memset(&out, 0, sizeof out);
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    trn_status st = parse_header(&c, path, &out, err);
    if (st) return st;
    /* Walk to the first IDAT only: everything a validator needs comes before it. */
    for (;;) {
        png_chunk chunk;
        if (c.pos == c.size)
            return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)c.pos,
                                 "file ends before any image data (IDAT chunk)");
        /* Stop at the IDAT header without reading its data: it may be most of the file. */
        if (trn_cursor_has(&c, 8) && memcmp(c.data + c.pos + 4, "IDAT", 4) == 0) {
            if (out.color_type == 3 && !out.has_plte)
                return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)c.pos,
                                     "palette image has no PLTE chunk before its image data");
            break;
        }
        st = next_chunk(&c, path, &chunk, err);
        if (st) return st;
        if (chunk_is(&chunk, "IEND"))
            return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)chunk.offset,
                                 "IEND before any image data (IDAT chunk)");
        if (chunk_is(&chunk, "sRGB")) {
            if (chunk.length != 1)
                return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)chunk.offset,
                                     "sRGB chunk is %u bytes, expected 1", chunk.length);
            out.has_srgb = true;
            out.srgb_intent = chunk.data[0];
        } else if (chunk_is(&chunk, "gAMA")) {
            if (chunk.length != 4)
                return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)chunk.offset,
                                     "gAMA chunk is %u bytes, expected 4", chunk.length);
            out.has_gama = true;
            out.gama = be32(chunk.data);
        } else if (chunk_is(&chunk, "iCCP")) {
            out.has_iccp = true;
        } else if (chunk_is(&chunk, "PLTE")) {
            out.has_plte = true;
        } else if (chunk_is(&chunk, "tRNS")) {
            out.has_trns = true;
        }
    }
    switch (out.color_type) {
    case 0:
        out.channels = 1;
        break;
    case 4:
        out.channels = 2;
        break;
    case 2:
        out.channels = 3;
        break;
    case 3:
        out.channels = out.has_trns ? 4 : 3;
        break;
    default:
        out.channels = 4;
        break;
    }
    *info = out;
    return TRN_OK;
}

trn_status trn_png_read_info(const char *path, trn_png_info *info, trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    /* A mapping touches only the pages the walk reads, so a 500 MB PNG costs a few pages. */
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_png_decode_info(mf.data, mf.size, path, info, err);
    trn_mapped_file_close(&mf);
    return st;
}

/* Turn a libspng failure into our code and, by walking the chunk list, a byte offset. */
static trn_status spng_failure(int e, const uint8_t *data, size_t size, const char *path,
                               const char *what, trn_error *err)
{
    trn_status code = TRN_ERR_FORMAT;
    switch (e) {
    case SPNG_IO_EOF:
    case SPNG_EOF:
        code = TRN_ERR_TRUNCATED;
        break;
    case SPNG_EUSER_WIDTH:
    case SPNG_EUSER_HEIGHT:
    case SPNG_ECHUNK_LIMITS:
        code = TRN_ERR_LIMIT;
        break;
    case SPNG_EMEM:
        code = TRN_ERR_NO_MEMORY;
        break;
    case SPNG_EOVERFLOW:
        code = TRN_ERR_OVERFLOW;
        break;
    default:
        break;
    }
    /* Find the first chunk that is cut off or fails its CRC; else, for errors in the
     * compressed stream, name the first IDAT. */
    int64_t offset = -1;
    char detail[sizeof(((trn_error *)0)->message) + 4] = "";
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    trn_png_info info;
    trn_error walk;
    trn_error_clear(&walk);
    if (parse_header(&c, path, &info, &walk) == TRN_OK) {
        size_t first_idat = 0;
        while (c.pos < c.size) {
            png_chunk chunk;
            if (next_chunk(&c, path, &chunk, &walk) != TRN_OK) break;
            if (chunk_is(&chunk, "IDAT") && !first_idat) first_idat = chunk.offset;
            if (chunk_is(&chunk, "IEND")) break;
        }
        if (walk.code == TRN_OK && first_idat &&
            (e == SPNG_EZLIB || e == SPNG_EIDAT_TOO_SHORT || e == SPNG_EIDAT_STREAM ||
             e == SPNG_EFILTER))
            offset = (int64_t)first_idat;
    }
    if (walk.code != TRN_OK) {
        offset = walk.offset;
        snprintf(detail, sizeof detail, "; %s", walk.message);
        if (code == TRN_ERR_FORMAT && walk.code == TRN_ERR_TRUNCATED) code = TRN_ERR_TRUNCATED;
    }
    return trn_error_set(err, code, path, offset, "%s: libspng says \"%s\"%s", what,
                         spng_strerror(e), detail);
}

/* Walk every chunk header (no data, no CRC: libspng checks those) and hold the ancillary
 * chunks to the limits. libspng has chunk limits of its own, but 0.7 does not apply them to
 * every chunk it skips or defers, so we check the declared lengths up front. */
static trn_status check_chunk_limits(const uint8_t *data, size_t size, const char *path,
                                     const trn_image_limits *limits, trn_error *err)
{
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    size_t total = 0;
    if (!trn_cursor_skip(&c, 8)) return TRN_OK;
    for (;;) {
        size_t offset = c.pos;
        uint32_t length;
        const uint8_t *type;
        if (!trn_cursor_u32be(&c, &length) || !(type = trn_cursor_take(&c, 4))) break;
        if (memcmp(type, "IEND", 4) == 0) break;
        /* Critical chunks (upper-case first letter) are needed to decode at all. */
        bool ancillary = (type[0] & 0x20) != 0;
        if (ancillary) {
            if (length > limits->max_chunk_bytes)
                return trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)offset,
                                     "chunk '%.4s' is %u bytes, more than the limit of %zu for "
                                     "one ancillary chunk",
                                     (const char *)type, length, limits->max_chunk_bytes);
            total += length;
            if (total > limits->max_chunk_cache_bytes)
                return trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)offset,
                                     "ancillary chunks add up to %zu bytes at chunk '%.4s', more "
                                     "than the limit of %zu",
                                     total, (const char *)type, limits->max_chunk_cache_bytes);
        }
        if (!trn_cursor_skip(&c, length) || !trn_cursor_skip(&c, 4)) break;
    }
    return TRN_OK;
}

trn_status trn_png_decode(const uint8_t *data, size_t size, const char *path,
                          const trn_image_limits *limits, trn_image *img, trn_error *err)
{
    if (!img || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "image or data is NULL");
    trn_image_limits defaults;
    if (!limits) {
        trn_image_limits_default(&defaults);
        limits = &defaults;
    }
    trn_png_info info;
    trn_status st = trn_png_decode_info(data, size, path, &info, err);
    if (st) return st;
    if (info.width > limits->max_width)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 16,
                             "image is %u pixels wide, more than the limit of %u", info.width,
                             limits->max_width);
    if (info.height > limits->max_height)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 20,
                             "image is %u pixels high, more than the limit of %u", info.height,
                             limits->max_height);
    uint64_t samples = (uint64_t)info.width * info.height;
    if (samples > limits->max_samples)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 16,
                             "image is %u x %u = %llu samples, more than the limit of %llu "
                             "(raise the limits' max_samples; terrane: --max-samples N)",
                             info.width, info.height, (unsigned long long)samples,
                             (unsigned long long)limits->max_samples);
    uint8_t depth = (info.bit_depth == 16) ? 16 : 8;
    uint64_t bytes64 = 0;
    if (!trn_image_layout_bytes64(info.width, info.height, info.channels, depth, &bytes64) ||
        bytes64 > limits->max_bytes)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 16,
                             "%u x %u image with %u channels of %u bits would decode to %llu "
                             "bytes, more than the limit of %llu",
                             info.width, info.height, info.channels, depth,
                             (unsigned long long)bytes64, (unsigned long long)limits->max_bytes);
    size_t bytes;
    if (!trn_image_layout_bytes(info.width, info.height, info.channels, depth, &bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, 16, "image is too large");
    st = check_chunk_limits(data, size, path, limits, err);
    if (st) return st;

    int fmt = SPNG_FMT_PNG, flags = 0;
    if (info.color_type == 3) {
        fmt = info.has_trns ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
        flags = info.has_trns ? SPNG_DECODE_TRNS : 0;
    } else if (info.color_type == 0 && info.bit_depth < 8) {
        fmt = SPNG_FMT_G8; /* unpacks and scales 1/2/4-bit grey to 0..255 */
    }
    spng_ctx *ctx = spng_ctx_new(0);
    if (!ctx) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    /* Our own checks above ran first; these make libspng enforce the same bounds itself. */
    uint32_t max_w = limits->max_width < PNG_UINT31_MAX ? limits->max_width : PNG_UINT31_MAX;
    uint32_t max_h = limits->max_height < PNG_UINT31_MAX ? limits->max_height : PNG_UINT31_MAX;
    int e = spng_set_image_limits(ctx, max_w, max_h);
    if (!e) e = spng_set_chunk_limits(ctx, limits->max_chunk_bytes, limits->max_chunk_cache_bytes);
    if (!e) e = spng_set_png_buffer(ctx, data, size);
    size_t len = 0;
    if (!e) e = spng_decoded_image_size(ctx, fmt, &len);
    if (e) {
        spng_ctx_free(ctx);
        return spng_failure(e, data, size, path, "cannot read PNG header", err);
    }
    if (len != bytes) {
        spng_ctx_free(ctx);
        return trn_error_set(err, TRN_ERR_FORMAT, path, 16,
                             "libspng expects %zu decoded bytes, we computed %zu", len, bytes);
    }
    trn_image out;
    st = trn_image_init(&out, info.width, info.height, info.channels, depth, err);
    if (st) {
        spng_ctx_free(ctx);
        return st;
    }
    e = spng_decode_image(ctx, out.data, len, fmt, flags);
    spng_ctx_free(ctx);
    if (e) {
        trn_image_dispose(&out);
        return spng_failure(e, data, size, path, "cannot decode PNG", err);
    }
    uint32_t gama_diff =
        info.gama > PNG_GAMA_SRGB ? info.gama - PNG_GAMA_SRGB : PNG_GAMA_SRGB - info.gama;
    out.srgb = info.has_srgb || (info.has_gama && gama_diff <= PNG_GAMA_SRGB_TOLERANCE);
    *img = out;
    return TRN_OK;
}

trn_status trn_png_read(const char *path, const trn_image_limits *limits, trn_image *img,
                        trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_png_decode(mf.data, mf.size, path, limits, img, err);
    trn_mapped_file_close(&mf);
    return st;
}

void trn_png_options_default(trn_png_options *options)
{
    if (!options) return;
    memset(options, 0, sizeof *options);
    options->compression_level = -1;
    options->srgb = false;
    options->filter = TRN_PNG_FILTER_AUTO;
}

/* ---- Encoder --------------------------------------------------------------------------------
 * We write the PNG ourselves so the zlib stream can be compressed on every core, pigz-style:
 * the filtered scanlines are cut into bands of about PNG_BAND_BYTES (the cut depends only on
 * the image, never on the thread count, so the bytes written are the same on any number of
 * threads); each band is a raw deflate stream primed with the 32 KiB of filtered data before
 * it (so matches reach across the cut as in one stream) and ended with Z_SYNC_FLUSH (the last
 * with Z_FINISH), which makes the bands one valid deflate stream when laid end to end. The
 * zlib header goes before the first band and the Adler-32, combined over the bands, after the
 * last. Each band becomes one IDAT chunk. A free thread takes the next band and bands are
 * written in order as they complete, at most 2 per thread in flight, so memory stays at a few
 * bands whatever the image size (png_pipe). */

/* Filtered bytes per band: big enough that the per-band costs (priming, the flush marker, a
 * chunk header) vanish, small enough to share the work on small images and report often. */
#define PNG_BAND_BYTES ((size_t)1 << 20)
/* deflate's window: the priming dictionary never needs more. */
#define PNG_DEFLATE_WINDOW ((size_t)32768)
#define PNG_MAX_THREADS 64
/* The most bytes handed to zlib at once (its counters are 32-bit). */
#define PNG_ZLIB_PIECE ((size_t)1 << 30)

/* Where the encoded bytes go: the atomic file, or a growing buffer. */
typedef struct png_sink {
    trn_atomic_file *af;
    uint8_t *buf;
    size_t n, cap;
    bool no_memory;
} png_sink;

static bool sink_failed(const png_sink *s)
{
    return s->no_memory || (s->af && s->af->failed);
}

static void sink_write(png_sink *s, const void *data, size_t n)
{
    if (sink_failed(s) || n == 0) return;
    if (s->af) {
        trn_atomic_file_write(s->af, data, n);
        return;
    }
    if (n > s->cap - s->n) {
        size_t cap = s->cap ? s->cap : 4096;
        while (cap - s->n < n) {
            if (cap > SIZE_MAX / 2) {
                s->no_memory = true;
                return;
            }
            cap *= 2;
        }
        uint8_t *p = realloc(s->buf, cap);
        if (!p) {
            s->no_memory = true;
            return;
        }
        s->buf = p;
        s->cap = cap;
    }
    memcpy(s->buf + s->n, data, n);
    s->n += n;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A chunk whose CRC (over type and data) is already known. */
static void sink_chunk_crc(png_sink *s, const char *type, const uint8_t *data, uint32_t n,
                           uint32_t crc)
{
    uint8_t head[8], tail[4];
    put_be32(head, n);
    memcpy(head + 4, type, 4);
    put_be32(tail, crc);
    sink_write(s, head, 8);
    sink_write(s, data, n);
    sink_write(s, tail, 4);
}

static uint32_t chunk_crc(const char *type, const uint8_t *data, size_t n)
{
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    for (size_t at = 0; at < n; at += PNG_ZLIB_PIECE) {
        size_t len = n - at < PNG_ZLIB_PIECE ? n - at : PNG_ZLIB_PIECE;
        crc = crc32(crc, data + at, (uInt)len);
    }
    return (uint32_t)crc;
}

/* Data of any length as IDAT chunks of at most 2^31-1 bytes each (the PNG maximum). */
static void sink_idat(png_sink *s, const uint8_t *data, size_t n)
{
    for (size_t at = 0; at < n; at += PNG_UINT31_MAX) {
        uint32_t len = (uint32_t)(n - at < PNG_UINT31_MAX ? n - at : PNG_UINT31_MAX);
        sink_chunk_crc(s, "IDAT", data + at, len, chunk_crc("IDAT", data + at, len));
    }
}

/* What every band needs to know about the image. */
typedef struct png_enc {
    const uint8_t *pixels;
    uint32_t height;
    size_t row_bytes;  /* unfiltered bytes of one row */
    size_t line_bytes; /* filtered: the filter-type byte, then row_bytes */
    size_t bpp;        /* bytes per complete pixel: the distance "left" looks back */
    int filter;        /* PNG filter type 0-4 for every row, or -1 for the per-row choice */
    int level;
    bool swap; /* 16-bit samples in little-endian memory: bytes are swapped to PNG order */
    uint32_t band_rows;
    /* Progress, reported from the calling thread only; cancel stops every thread. */
    const trn_progress *progress;
    uint32_t report_every;
    _Atomic uint32_t rows_done;
    uint32_t next_report;
    atomic_bool stop;
    bool cancelled;
} png_enc;

/* One thread's state. */
typedef struct png_worker {
    z_stream zs;
    bool zs_ready;
    uint8_t *swapped[2]; /* big-endian copies of the current and previous rows (swap only) */
    uint8_t *zero_row;   /* the row above row 0 */
    uint8_t *lines;      /* one filtered line, or five candidates when choosing per row */
    uint8_t *dict;       /* the filtered lines before a band, to prime deflate with */
    size_t dict_rows;
} png_worker;

/* One band's result. */
typedef struct png_band {
    uint8_t *out;
    size_t cap, n; /* out holds n bytes of cap (4 spare for the Adler-32 after the last) */
    size_t in_n;   /* filtered bytes */
    uLong adler;   /* of the filtered bytes */
    uint32_t crc;  /* of "IDAT" and out[0..n) */
    int failure;   /* 0, or Z_MEM_ERROR / Z_STREAM_ERROR */
} png_band;

static uint8_t paeth(uint8_t a, uint8_t b, uint8_t c)
{
    int p = (int)a + (int)b - (int)c;
    int pa = abs(p - (int)a), pb = abs(p - (int)b), pc = abs(p - (int)c);
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

/* Filter one row (cur, with prev the unfiltered row above) with PNG filter type t into out
 * (type byte first). */
static void filter_line(int t, const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp,
                        uint8_t *out)
{
    out[0] = (uint8_t)t;
    uint8_t *o = out + 1;
    size_t first = bpp < n ? bpp : n;
    switch (t) {
    case 0:
        memcpy(o, cur, n);
        break;
    case 1:
        memcpy(o, cur, first);
        for (size_t i = bpp; i < n; i++)
            o[i] = (uint8_t)(cur[i] - cur[i - bpp]);
        break;
    case 2:
        for (size_t i = 0; i < n; i++)
            o[i] = (uint8_t)(cur[i] - prev[i]);
        break;
    case 3:
        for (size_t i = 0; i < first; i++)
            o[i] = (uint8_t)(cur[i] - (prev[i] >> 1));
        for (size_t i = bpp; i < n; i++)
            o[i] = (uint8_t)(cur[i] - (((unsigned)cur[i - bpp] + prev[i]) >> 1));
        break;
    default:
        for (size_t i = 0; i < first; i++)
            o[i] = (uint8_t)(cur[i] - prev[i]); /* paeth(0, b, 0) = b */
        for (size_t i = bpp; i < n; i++)
            o[i] = (uint8_t)(cur[i] - paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        break;
    }
}

/* Sum of the filtered bytes read as signed: libpng's "minimum sum of absolute differences"
 * heuristic for choosing a row's filter. */
static uint64_t signed_sum(const uint8_t *p, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += p[i] < 128 ? p[i] : 256u - p[i];
    return sum;
}

/* Filter row y into the worker's line buffer and return it. The choice depends only on this
 * row and the one above, so any band split gives the same bytes. */
static const uint8_t *filter_row(const png_enc *enc, png_worker *w, uint32_t y)
{
    const uint8_t *cur = enc->pixels + (size_t)y * enc->row_bytes;
    const uint8_t *prev = y ? cur - enc->row_bytes : w->zero_row;
    if (enc->swap) {
        /* Rows are swapped anew each time: cheap next to deflate, and no state to carry. */
        for (int k = 0; k < 2; k++) {
            const uint8_t *src = k ? prev : cur;
            uint8_t *dst = w->swapped[k];
            if (k && !y) break;
            for (size_t i = 0; i + 1 < enc->row_bytes; i += 2) {
                dst[i] = src[i + 1];
                dst[i + 1] = src[i];
            }
        }
        cur = w->swapped[0];
        if (y) prev = w->swapped[1];
    }
    if (enc->filter >= 0) {
        filter_line(enc->filter, cur, prev, enc->row_bytes, enc->bpp, w->lines);
        return w->lines;
    }
    int best = 0;
    uint64_t best_sum = UINT64_MAX;
    for (int t = 0; t < 5; t++) {
        uint8_t *line = w->lines + (size_t)t * enc->line_bytes;
        filter_line(t, cur, prev, enc->row_bytes, enc->bpp, line);
        uint64_t sum = signed_sum(line + 1, enc->row_bytes);
        if (sum < best_sum) {
            best_sum = sum;
            best = t;
        }
    }
    return w->lines + (size_t)best * enc->line_bytes;
}

/* Run deflate over data with flush, growing the band's output as needed. */
static bool band_deflate(png_worker *w, png_band *b, const uint8_t *data, size_t n, int flush)
{
    size_t at = 0;
    for (;;) {
        size_t piece = n - at < PNG_ZLIB_PIECE ? n - at : PNG_ZLIB_PIECE;
        bool last_piece = at + piece == n;
        int f = last_piece ? flush : Z_NO_FLUSH;
        w->zs.next_in = (Bytef *)(uintptr_t)(data + at);
        w->zs.avail_in = (uInt)piece;
        for (;;) {
            if (b->cap - 4 - b->n == 0) {
                size_t grow = b->cap / 2 + 65536;
                if (b->cap > SIZE_MAX - grow) {
                    b->failure = Z_MEM_ERROR;
                    return false;
                }
                uint8_t *p = realloc(b->out, b->cap + grow);
                if (!p) {
                    b->failure = Z_MEM_ERROR;
                    return false;
                }
                b->out = p;
                b->cap += grow;
            }
            size_t room = b->cap - 4 - b->n;
            if (room > PNG_ZLIB_PIECE) room = PNG_ZLIB_PIECE;
            w->zs.next_out = b->out + b->n;
            w->zs.avail_out = (uInt)room;
            int r = deflate(&w->zs, f);
            b->n += room - w->zs.avail_out;
            if (r == Z_STREAM_ERROR) {
                b->failure = Z_STREAM_ERROR;
                return false;
            }
            if (f == Z_FINISH ? r == Z_STREAM_END : w->zs.avail_in == 0 && w->zs.avail_out != 0)
                break;
        }
        at += piece;
        if (last_piece) return true;
    }
}

static void maybe_report(png_enc *enc)
{
    uint32_t done = atomic_load_explicit(&enc->rows_done, memory_order_relaxed);
    if (done < enc->next_report || done >= enc->height) return;
    enc->next_report = (done / enc->report_every + 1) * enc->report_every;
    if (trn_progress_report(enc->progress, (double)done / enc->height, "write PNG")) {
        enc->cancelled = true;
        atomic_store(&enc->stop, true);
    }
}

/* Filter and compress band k (rows k*band_rows ...) into b. reporter: this is the calling
 * thread, which alone calls the progress callback. */
static void run_band(png_enc *enc, png_worker *w, png_band *b, size_t k, size_t bands,
                     bool reporter)
{
    uint32_t y0 = (uint32_t)(k * enc->band_rows);
    uint32_t y1 = enc->height - y0 < enc->band_rows ? enc->height : y0 + enc->band_rows;
    b->n = 0;
    b->failure = 0;
    b->adler = adler32(0L, Z_NULL, 0);
    b->in_n = (size_t)(y1 - y0) * enc->line_bytes;
    if (deflateReset(&w->zs) != Z_OK) {
        b->failure = Z_STREAM_ERROR;
        return;
    }
    size_t want = (size_t)deflateBound(&w->zs, (uLong)b->in_n) + 64 + 4;
    if (b->cap < want) {
        free(b->out);
        b->cap = 0;
        if (!(b->out = malloc(want))) {
            b->failure = Z_MEM_ERROR;
            return;
        }
        b->cap = want;
    }
    if (k == 0) {
        /* The zlib header, as deflate itself writes it (RFC 1950: CM 8, 32 KiB window, the
         * level class, check bits). */
        unsigned flags = enc->level < 2 ? 0u : enc->level < 6 ? 1u : enc->level == 6 ? 2u : 3u;
        unsigned header = (0x78u << 8) | (flags << 6);
        header += 31u - header % 31u;
        b->out[0] = (uint8_t)(header >> 8);
        b->out[1] = (uint8_t)header;
        b->n = 2;
    }
    if (y0 > 0 && enc->level > 0) {
        /* Prime with the filtered lines before the band (at most deflate's window). */
        uint32_t first = y0 > w->dict_rows ? y0 - (uint32_t)w->dict_rows : 0;
        size_t len = 0;
        for (uint32_t y = first; y < y0; y++, len += enc->line_bytes)
            memcpy(w->dict + len, filter_row(enc, w, y), enc->line_bytes);
        size_t use = len < PNG_DEFLATE_WINDOW ? len : PNG_DEFLATE_WINDOW;
        if (deflateSetDictionary(&w->zs, w->dict + len - use, (uInt)use) != Z_OK) {
            b->failure = Z_STREAM_ERROR;
            return;
        }
    }
    for (uint32_t y = y0; y < y1; y++) {
        if (atomic_load_explicit(&enc->stop, memory_order_relaxed)) return;
        const uint8_t *line = filter_row(enc, w, y);
        for (size_t at = 0; at < enc->line_bytes; at += PNG_ZLIB_PIECE) {
            size_t len =
                enc->line_bytes - at < PNG_ZLIB_PIECE ? enc->line_bytes - at : PNG_ZLIB_PIECE;
            b->adler = adler32(b->adler, line + at, (uInt)len);
        }
        int flush = y + 1 < y1 ? Z_NO_FLUSH : k + 1 < bands ? Z_SYNC_FLUSH : Z_FINISH;
        if (!band_deflate(w, b, line, enc->line_bytes, flush)) {
            atomic_store(&enc->stop, true);
            return;
        }
        atomic_fetch_add_explicit(&enc->rows_done, 1u, memory_order_relaxed);
        if (reporter) maybe_report(enc);
    }
    if (b->n <= PNG_UINT31_MAX) b->crc = chunk_crc("IDAT", b->out, b->n);
}

static void worker_dispose(png_worker *w)
{
    if (w->zs_ready) deflateEnd(&w->zs);
    free(w->swapped[0]);
    free(w->swapped[1]);
    free(w->zero_row);
    free(w->lines);
    free(w->dict);
    memset(w, 0, sizeof *w);
}

static bool worker_init(png_worker *w, const png_enc *enc)
{
    memset(w, 0, sizeof *w);
    /* memLevel 9 (a 2^16-entry hash, 384 KiB a stream): on 8192^2 terrain 6% faster at level 6
     * and 0.1-0.3% smaller than zlib's default 8. The default strategy: Z_FILTERED (libpng's
     * choice for filtered rows) was about 1.7x slower at the same size. Raw deflate (-15): the
     * zlib header and trailer are ours, around the bands. */
    if (deflateInit2(&w->zs, enc->level, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        return false;
    w->zs_ready = true;
    size_t candidates = enc->filter < 0 ? 5 : 1;
    w->dict_rows = (PNG_DEFLATE_WINDOW + enc->line_bytes - 1) / enc->line_bytes;
    w->zero_row = calloc(1, enc->row_bytes);
    w->lines = malloc(candidates * enc->line_bytes);
    w->dict = malloc(w->dict_rows * enc->line_bytes);
    if (enc->swap) {
        w->swapped[0] = malloc(enc->row_bytes);
        w->swapped[1] = malloc(enc->row_bytes);
        if (!w->swapped[0] || !w->swapped[1]) return false;
    }
    return w->zero_row && w->lines && w->dict;
}

/* The bands in flight: claimed in order by whichever thread is free, compressed into the slot
 * of their number modulo the window, and written in order by whichever thread completes the
 * next one to write. A band may start only when its slot's previous band has been written, so
 * memory stays at the window's bands whatever the image size; a thread that would have to
 * wait for that sleeps on a condition variable instead of spinning. */
typedef struct png_pipe {
    png_enc *enc;
    png_band *slots;
    bool *slot_done; /* slots[i] holds a compressed band not yet written */
    size_t window, bands;
    size_t claimed; /* bands handed to threads so far */
    size_t written; /* bands in the sink (a prefix: they are written in order) */
    bool writing;   /* a thread is writing; the others leave the next band to it */
    uLong adler;    /* of the filtered bytes of the bands written */
    png_sink *sink;
    int failure; /* the first band failure, 0 if none */
#ifdef _OPENMP
    pthread_mutex_t lock;
    pthread_cond_t freed; /* a slot was written (or the encoder stops) */
#endif
} png_pipe;

static bool pipe_init(png_pipe *p, png_enc *enc, png_band *slots, size_t window, size_t bands,
                      png_sink *sink)
{
    memset(p, 0, sizeof *p);
    p->enc = enc;
    p->slots = slots;
    p->window = window;
    p->bands = bands;
    p->sink = sink;
    p->adler = adler32(0L, Z_NULL, 0);
    if (!(p->slot_done = calloc(window, sizeof *p->slot_done))) return false;
#ifdef _OPENMP
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p->slot_done);
        return false;
    }
    if (pthread_cond_init(&p->freed, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        free(p->slot_done);
        return false;
    }
#endif
    return true;
}

static void pipe_dispose(png_pipe *p)
{
#ifdef _OPENMP
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->lock);
#endif
    free(p->slot_done);
}

static void pipe_lock(png_pipe *p)
{
#ifdef _OPENMP
    pthread_mutex_lock(&p->lock);
#else
    (void)p;
#endif
}

static void pipe_unlock(png_pipe *p)
{
#ifdef _OPENMP
    pthread_mutex_unlock(&p->lock);
#else
    (void)p;
#endif
}

/* Wake every thread waiting for a slot. */
static void pipe_wake(png_pipe *p)
{
#ifdef _OPENMP
    pthread_cond_broadcast(&p->freed);
#else
    (void)p;
#endif
}

/* Wait, holding the lock, for a slot to be written. Only ever called with threads that will
 * write it (so never on one thread: a band there is written before the next is claimed). */
static void pipe_wait(png_pipe *p)
{
#ifdef _OPENMP
    pthread_cond_wait(&p->freed, &p->lock);
#else
    (void)p;
#endif
}

static bool pipe_stopped(const png_pipe *p)
{
    return atomic_load_explicit(&p->enc->stop, memory_order_relaxed);
}

/* Called with the lock held by the thread that marked a band done, when no other thread is
 * writing: write every completed band from the next one on, in order, releasing the lock
 * while the bytes go out. */
static void pipe_drain(png_pipe *p)
{
    p->writing = true;
    while (p->written < p->bands && p->slot_done[p->written % p->window] && !pipe_stopped(p)) {
        const size_t k = p->written;
        png_band *b = &p->slots[k % p->window];
        pipe_unlock(p);
        p->adler = adler32_combine(p->adler, b->adler, (z_off_t)b->in_n);
        if (k + 1 == p->bands) {
            /* The zlib trailer after the last band; cap keeps 4 bytes spare for it. */
            put_be32(b->out + b->n, (uint32_t)p->adler);
            b->crc = (uint32_t)crc32(b->crc, b->out + b->n, 4);
            b->n += 4;
        }
        if (b->n <= PNG_UINT31_MAX)
            sink_chunk_crc(p->sink, "IDAT", b->out, (uint32_t)b->n, b->crc);
        else
            sink_idat(p->sink, b->out, b->n);
        if (sink_failed(p->sink)) atomic_store(&p->enc->stop, true);
        pipe_lock(p);
        p->slot_done[k % p->window] = false;
        p->written = k + 1;
        pipe_wake(p);
    }
    p->writing = false;
}

/* One thread's part: claim bands until none is left or the encoder stops. */
static void pipe_run(png_pipe *p, png_worker *w, bool reporter)
{
    pipe_lock(p);
    for (;;) {
        if (pipe_stopped(p) || p->claimed == p->bands) break;
        const size_t k = p->claimed++;
        while (k >= p->written + p->window && !pipe_stopped(p))
            pipe_wait(p);
        if (pipe_stopped(p)) break;
        pipe_unlock(p);
        png_band *b = &p->slots[k % p->window];
        run_band(p->enc, w, b, k, p->bands, reporter);
        pipe_lock(p);
        if (b->failure) {
            if (!p->failure) p->failure = b->failure;
            atomic_store(&p->enc->stop, true);
        }
        if (pipe_stopped(p)) break;
        p->slot_done[k % p->window] = true;
        if (!p->writing) pipe_drain(p);
    }
    /* Whoever stops the encoder wakes the threads waiting for a slot that will never be
     * written. */
    if (pipe_stopped(p)) pipe_wake(p);
    pipe_unlock(p);
}

/* The filter for every row (0-4), or -1 to choose per row. AUTO was measured on 8192^2 16-bit
 * terrain: "up" is about 2.5x faster than the per-row choice and no larger; see
 * bench/png_vs_gdal.sh. */
static int filter_type(const trn_image *img, int level, trn_png_filter filter)
{
    switch (filter) {
    case TRN_PNG_FILTER_NONE:
        return 0;
    case TRN_PNG_FILTER_SUB:
        return 1;
    case TRN_PNG_FILTER_UP:
        return 2;
    case TRN_PNG_FILTER_AVERAGE:
        return 3;
    case TRN_PNG_FILTER_PAETH:
        return 4;
    case TRN_PNG_FILTER_ADAPTIVE:
        return -1;
    case TRN_PNG_FILTER_AUTO:
        break;
    }
    if (level == 0) return 0;
    if (img->channels == 1 && img->bit_depth == 16) return 2;
    return -1;
}

static bool host_is_little_endian(void)
{
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

/* Encode img into the sink: signature, IHDR, sRGB when asked, IDAT bands, IEND. */
static trn_status encode(const trn_image *img, const trn_png_options *options, png_sink *sink,
                         const char *path, trn_progress_fn progress, void *user, trn_error *err)
{
    if (!img || !img->data)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "image is NULL");
    if (img->bit_depth == 32)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                             "PNG cannot hold float samples; quantise the image to 16 bits "
                             "first (trn_image_from_field)");
    if ((img->bit_depth != 8 && img->bit_depth != 16) || img->channels < 1 || img->channels > 4)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "image with %u channels of %u bits: PNG takes 1 to 4 channels of "
                             "8 or 16 bits",
                             img->channels, img->bit_depth);
    if (img->width == 0 || img->height == 0 || img->width > PNG_UINT31_MAX ||
        img->height > PNG_UINT31_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "image of %u x %u pixels: PNG takes 1 to 2^31-1 each way", img->width,
                             img->height);
    trn_png_options defaults;
    if (!options) {
        trn_png_options_default(&defaults);
        options = &defaults;
    }
    /* The default, zlib level 3: on terrain it writes files as small as level 6 (from 0.4%
     * smaller to 1.2% larger on the four terrains of bench/RESULTS.md) in a third to a half of
     * the time; levels 4-9 search longer match chains that "up"-filtered heights rarely repay. */
    int level = options->compression_level == -1 ? 3 : options->compression_level;
    if (level < 0 || level > 9)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "compression level %d: expected 0 to 9, or -1 for the default (3)",
                             options->compression_level);
    if ((unsigned)options->filter > TRN_PNG_FILTER_ADAPTIVE)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "unknown PNG filter %d",
                             (int)options->filter);
    size_t row_bytes = trn_image_row_bytes(img);
    if (row_bytes == 0 || row_bytes > SIZE_MAX / 8)
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, -1, "image rows are too large");

    trn_progress pr = trn_progress_make(progress, user);
    png_enc enc;
    memset(&enc, 0, sizeof enc);
    enc.pixels = img->data;
    enc.height = img->height;
    enc.row_bytes = row_bytes;
    enc.line_bytes = row_bytes + 1;
    enc.bpp = trn_image_pixel_bytes(img);
    enc.filter = filter_type(img, level, options->filter);
    enc.level = level;
    enc.swap = img->bit_depth == 16 && host_is_little_endian();
    size_t band_rows = PNG_BAND_BYTES / enc.line_bytes;
    if (band_rows < 1) band_rows = 1;
    if (band_rows > img->height) band_rows = img->height;
    enc.band_rows = (uint32_t)band_rows;
    enc.progress = &pr;
    /* Report about 128 times over the image, whatever its height. */
    enc.report_every = img->height / 128u ? img->height / 128u : 1u;
    enc.next_report = enc.report_every;
    atomic_init(&enc.rows_done, 0u);
    atomic_init(&enc.stop, false);
    size_t bands = (img->height + band_rows - 1) / band_rows;

    if (trn_progress_report(&pr, 0.0, "write PNG"))
        return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "PNG writing cancelled");

    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if (threads > PNG_MAX_THREADS) threads = PNG_MAX_THREADS;
    if ((size_t)threads > bands) threads = (int)bands;
    if (threads < 1) threads = 1;
    size_t window = 2 * (size_t)threads < bands ? 2 * (size_t)threads : bands;
    png_worker workers[PNG_MAX_THREADS];
    png_band *slots = calloc(window, sizeof *slots);
    bool ready = slots != NULL;
    int made = 0;
    for (; ready && made < threads; made++)
        if (!worker_init(&workers[made], &enc)) {
            worker_dispose(&workers[made]);
            ready = false;
        }
    trn_status st = TRN_OK;
    if (!ready) st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");

    static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
    uint8_t ihdr[13];
    put_be32(ihdr, img->width);
    put_be32(ihdr + 4, img->height);
    ihdr[8] = img->bit_depth;
    ihdr[9] = color_types[img->channels];
    ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filtering, no interlace */
    if (!st) {
        sink_write(sink, png_signature, sizeof png_signature);
        sink_chunk_crc(sink, "IHDR", ihdr, 13, chunk_crc("IHDR", ihdr, 13));
        if (options->srgb || img->srgb) {
            static const uint8_t perceptual = 0;
            sink_chunk_crc(sink, "sRGB", &perceptual, 1, chunk_crc("sRGB", &perceptual, 1));
        }
    }
    png_pipe pipe;
    if (!st && !pipe_init(&pipe, &enc, slots, window, bands, sink))
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    if (!st) {
        /* One parallel stage for the whole image: a thread that finishes a band takes the next
         * at once, and the bands are written as they complete, so no thread waits for a
         * window's slowest band nor for the writing (each such wait was a join, and with
         * OpenMP's default policy the waiting thread spins). The calling thread (0) reports
         * progress while it compresses. */
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
        {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            pipe_run(&pipe, &workers[t], t == 0);
        }
        if (enc.cancelled)
            st = trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "PNG writing cancelled");
        else if (pipe.failure)
            st = trn_error_set(
                err, pipe.failure == Z_MEM_ERROR ? TRN_ERR_NO_MEMORY : TRN_ERR_INVALID_ARGUMENT,
                path, -1, "cannot compress PNG rows: zlib says \"%s\"",
                pipe.failure == Z_MEM_ERROR ? "out of memory" : "stream error");
        pipe_dispose(&pipe);
    }
    if (!st) sink_chunk_crc(sink, "IEND", NULL, 0, chunk_crc("IEND", NULL, 0));
    for (int t = 0; t < made; t++)
        worker_dispose(&workers[t]);
    for (size_t i = 0; slots && i < window; i++)
        free(slots[i].out);
    free(slots);
    if (st) return st;
    if (sink->no_memory)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory holding the encoded PNG");
    if (sink->af && sink->af->failed)
        return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write PNG: %s",
                             strerror(sink->af->saved_errno ? sink->af->saved_errno : EIO));
    if (trn_progress_report(&pr, 1.0, "write PNG"))
        return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "PNG writing cancelled");
    return TRN_OK;
}

trn_status trn_png_encode(const trn_image *img, const trn_png_options *options, uint8_t **out_data,
                          size_t *out_size, trn_error *err)
{
    if (!out_data || !out_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "output is NULL");
    *out_data = NULL;
    *out_size = 0;
    png_sink sink;
    memset(&sink, 0, sizeof sink);
    trn_status st = encode(img, options, &sink, NULL, NULL, NULL, err);
    if (st) {
        free(sink.buf);
        return st;
    }
    *out_data = sink.buf;
    *out_size = sink.n;
    return TRN_OK;
}

trn_status trn_png_write(const char *path, const trn_image *img, const trn_png_options *options,
                         trn_progress_fn progress, void *user, trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, path, err);
    if (st) return st;
    png_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.af = &af;
    st = encode(img, options, &sink, path, progress, user, err);
    if (st) {
        trn_atomic_file_abort(&af);
        return st;
    }
    return trn_atomic_file_commit(&af, err);
}
