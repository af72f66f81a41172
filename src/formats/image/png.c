/* PNG: header and chunk walk of our own (info, limits, error offsets), pixels via libspng. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <spng.h>
#include <zlib.h>

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

/* libspng's filter choice for ours. AUTO was measured on 8192^2 16-bit terrain: "up" with the
 * default zlib strategy is about 2.5x faster than adaptive filtering with Z_FILTERED (what
 * libpng and so GDAL do) and no larger; see bench/png_vs_gdal.sh. */
static int spng_filter_choice(const trn_image *img, int level, trn_png_filter filter)
{
    switch (filter) {
    case TRN_PNG_FILTER_NONE:
        return SPNG_FILTER_CHOICE_NONE;
    case TRN_PNG_FILTER_SUB:
        return SPNG_FILTER_CHOICE_SUB;
    case TRN_PNG_FILTER_UP:
        return SPNG_FILTER_CHOICE_UP;
    case TRN_PNG_FILTER_AVERAGE:
        return SPNG_FILTER_CHOICE_AVG;
    case TRN_PNG_FILTER_PAETH:
        return SPNG_FILTER_CHOICE_PAETH;
    case TRN_PNG_FILTER_ADAPTIVE:
        return SPNG_FILTER_CHOICE_ALL;
    case TRN_PNG_FILTER_AUTO:
        break;
    }
    if (level == 0) return SPNG_FILTER_CHOICE_NONE;
    if (img->channels == 1 && img->bit_depth == 16) return SPNG_FILTER_CHOICE_UP;
    return SPNG_FILTER_CHOICE_ALL;
}

static int write_to_atomic_file(spng_ctx *ctx, void *user, void *src, size_t length)
{
    (void)ctx;
    trn_atomic_file *af = user;
    trn_atomic_file_write(af, src, length);
    return af->failed ? SPNG_IO_ERROR : 0;
}

/* Encode img into af, or into a buffer returned in *out_data when af is NULL. */
static trn_status encode(const trn_image *img, const trn_png_options *options, trn_atomic_file *af,
                         const char *path, trn_progress_fn progress, void *user, uint8_t **out_data,
                         size_t *out_size, trn_error *err)
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
    int level = options->compression_level == -1 ? 6 : options->compression_level;
    if (level < 0 || level > 9)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "compression level %d: expected 0 to 9, or -1 for the default (6)",
                             options->compression_level);
    if ((unsigned)options->filter > TRN_PNG_FILTER_ADAPTIVE)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "unknown PNG filter %d",
                             (int)options->filter);
    size_t row_bytes = trn_image_row_bytes(img);
    if (row_bytes == 0 || row_bytes > SIZE_MAX / 2)
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, -1, "image rows are too large");

    spng_ctx *ctx = spng_ctx_new(SPNG_CTX_ENCODER);
    if (!ctx) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    static const uint8_t color_types[5] = {0, 0, 4, 2, 6};
    struct spng_ihdr ihdr;
    memset(&ihdr, 0, sizeof ihdr);
    ihdr.width = img->width;
    ihdr.height = img->height;
    ihdr.bit_depth = img->bit_depth;
    ihdr.color_type = color_types[img->channels];
    int e = af ? spng_set_png_stream(ctx, write_to_atomic_file, af)
               : spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1);
    if (!e) e = spng_set_ihdr(ctx, &ihdr);
    if (!e && (options->srgb || img->srgb)) e = spng_set_srgb(ctx, 0); /* perceptual */
    if (!e) e = spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, level);
    if (!e)
        e = spng_set_option(ctx, SPNG_FILTER_CHOICE,
                            spng_filter_choice(img, level, options->filter));
    /* Z_FILTERED (libpng's choice for filtered rows) was ~1.7x slower at equal size here. */
    if (!e) e = spng_set_option(ctx, SPNG_IMG_COMPRESSION_STRATEGY, Z_DEFAULT_STRATEGY);
    trn_progress pr = trn_progress_make(progress, user);
    bool cancelled = trn_progress_report(&pr, 0.0, "write PNG");
    if (!e && !cancelled)
        e = spng_encode_image(ctx, NULL, 0, SPNG_FMT_PNG,
                              SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
    /* Report about 128 times over the image, whatever its height. */
    uint32_t band = img->height / 128u ? img->height / 128u : 1u;
    const uint8_t *rows = img->data;
    for (uint32_t y = 0; !e && !cancelled && y < img->height; y++) {
        e = spng_encode_row(ctx, rows + (size_t)y * row_bytes, row_bytes);
        if (e == SPNG_EOI && y + 1 == img->height) e = 0;
        if (!e && (y + 1) % band == 0 && y + 1 < img->height)
            cancelled = trn_progress_report(&pr, (double)(y + 1) / img->height, "write PNG");
    }
    if (!e && !cancelled) cancelled = trn_progress_report(&pr, 1.0, "write PNG");
    trn_status st = TRN_OK;
    if (cancelled) {
        st = trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "PNG writing cancelled");
    } else if (e == SPNG_IO_ERROR && af) {
        st = trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write PNG: %s",
                           strerror(af->saved_errno ? af->saved_errno : EIO));
    } else if (e) {
        st = trn_error_set(err, e == SPNG_EMEM ? TRN_ERR_NO_MEMORY : TRN_ERR_INVALID_ARGUMENT, path,
                           -1, "cannot encode PNG: libspng says \"%s\"", spng_strerror(e));
    } else if (!af) {
        size_t len = 0;
        void *buf = spng_get_png_buffer(ctx, &len, &e);
        if (!buf || e) {
            free(buf);
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                               "cannot take the encoded PNG: libspng says \"%s\"",
                               spng_strerror(e ? e : SPNG_EMEM));
        } else {
            *out_data = buf;
            *out_size = len;
        }
    }
    spng_ctx_free(ctx);
    return st;
}

trn_status trn_png_encode(const trn_image *img, const trn_png_options *options, uint8_t **out_data,
                          size_t *out_size, trn_error *err)
{
    if (!out_data || !out_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "output is NULL");
    *out_data = NULL;
    *out_size = 0;
    return encode(img, options, NULL, NULL, NULL, NULL, out_data, out_size, err);
}

trn_status trn_png_write(const char *path, const trn_image *img, const trn_png_options *options,
                         trn_progress_fn progress, void *user, trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, path, err);
    if (st) return st;
    st = encode(img, options, &af, path, progress, user, NULL, NULL, err);
    if (st) {
        trn_atomic_file_abort(&af);
        return st;
    }
    return trn_atomic_file_commit(&af, err);
}
