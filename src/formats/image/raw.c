/* Headerless rasters: R16/RAW (u16 little or big endian), u8 and float32 R32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cursor.h"
#include "core/fileio.h"
#include "image_private.h"
#include "terrane/image.h"

size_t trn_raw_sample_bytes(trn_raw_type type)
{
    switch (type) {
    case TRN_RAW_U16_LE:
    case TRN_RAW_U16_BE:
        return 2;
    case TRN_RAW_U8:
        return 1;
    case TRN_RAW_F32_LE:
        return 4;
    }
    return 0;
}

static const char *raw_type_name(trn_raw_type type)
{
    switch (type) {
    case TRN_RAW_U16_LE:
        return "16-bit little-endian";
    case TRN_RAW_U16_BE:
        return "16-bit big-endian";
    case TRN_RAW_U8:
        return "8-bit";
    case TRN_RAW_F32_LE:
        return "32-bit float";
    }
    return "unknown";
}

static uint8_t raw_bit_depth(trn_raw_type type)
{
    return type == TRN_RAW_U8 ? 8 : type == TRN_RAW_F32_LE ? 32 : 16;
}

/* Largest s with s * s <= n. */
static uint64_t isqrt_u64(uint64_t n)
{
    uint64_t s = (uint64_t)sqrt((double)n);
    while (s > 0 && (s > UINT32_MAX || s * s > n))
        s--;
    while (s + 1 <= UINT32_MAX && (s + 1) * (s + 1) <= n)
        s++;
    return s;
}

/* Work out width and height from the file length when either is 0. */
static trn_status infer_size(size_t size, const char *path, trn_raw_type type, uint32_t *width,
                             uint32_t *height, trn_error *err)
{
    size_t sb = trn_raw_sample_bytes(type);
    if (size % sb != 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)(size - size % sb),
                             "length %zu bytes is not a whole number of %zu-byte %s samples", size,
                             sb, raw_type_name(type));
    uint64_t n = size / sb;
    if (*width == 0 && *height == 0) {
        uint64_t s = isqrt_u64(n);
        if (s * s != n)
            return trn_error_set(
                err, TRN_ERR_FORMAT, path, -1,
                "length %zu bytes is %llu %s samples, which is not a square (%llu x %llu is "
                "%llu bytes, %llu x %llu is %llu); give the size with --size WxH",
                size, (unsigned long long)n, raw_type_name(type), (unsigned long long)s,
                (unsigned long long)s, (unsigned long long)(s * s * sb),
                (unsigned long long)(s + 1), (unsigned long long)(s + 1),
                (unsigned long long)((s + 1) * (s + 1) * sb));
        *width = *height = (uint32_t)s;
        return TRN_OK;
    }
    uint32_t known = *width ? *width : *height;
    if (n % known != 0 || n / known > UINT32_MAX)
        return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                             "length %zu bytes is %llu %s samples, not a whole number of %s of "
                             "%u; give the size with --size WxH",
                             size, (unsigned long long)n, raw_type_name(type),
                             *width ? "rows" : "columns", known);
    if (*width)
        *height = (uint32_t)(n / known);
    else
        *width = (uint32_t)(n / known);
    return TRN_OK;
}

/* Samples from which a raster is decoded on every core. */
#define RAW_PARALLEL_SAMPLES ((size_t)1 << 20)

trn_status trn_raw_decode(const uint8_t *data, size_t size, const char *path, trn_raw_type type,
                          uint32_t width, uint32_t height, const trn_image_limits *limits,
                          trn_image *img, trn_error *err)
{
    size_t sb = trn_raw_sample_bytes(type);
    if (sb == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "unknown RAW type %d",
                             (int)type);
    if (!img || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "image or data is NULL");
    trn_image_limits defaults;
    if (!limits) {
        trn_image_limits_default(&defaults);
        limits = &defaults;
    }
    if (size == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0, "file is empty, expected %s samples",
                             raw_type_name(type));
    if (width == 0 || height == 0) {
        trn_status st = infer_size(size, path, type, &width, &height, err);
        if (st) return st;
    }
    if (width > limits->max_width || height > limits->max_height)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "raster of %u x %u samples is larger than the limit of %u x %u", width,
                             height, limits->max_width, limits->max_height);
    uint64_t samples = (uint64_t)width * height;
    if (samples > limits->max_samples)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "raster of %u x %u = %llu samples is more than the limit of %llu "
                             "(raise the limits' max_samples; terrane: --max-samples N)",
                             width, height, (unsigned long long)samples,
                             (unsigned long long)limits->max_samples);
    uint8_t depth = raw_bit_depth(type);
    uint64_t expected;
    if (!trn_image_layout_bytes64(width, height, 1, depth, &expected))
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, -1,
                             "raster of %u x %u samples is too large", width, height);
    if (expected > limits->max_bytes)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "raster of %u x %u samples needs %llu bytes, more than the limit of "
                             "%llu",
                             width, height, (unsigned long long)expected,
                             (unsigned long long)limits->max_bytes);
    if ((uint64_t)size < expected)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size,
                             "file is %zu bytes, expected %llu bytes for %u x %u %s samples", size,
                             (unsigned long long)expected, width, height, raw_type_name(type));
    if ((uint64_t)size > expected)
        return trn_error_set(err, TRN_ERR_TRAILING_DATA, path, (int64_t)expected,
                             "file is %zu bytes, expected %llu bytes for %u x %u %s samples", size,
                             (unsigned long long)expected, width, height, raw_type_name(type));
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    const uint8_t *p = trn_cursor_take(&c, (size_t)expected);
    if (!p) /* cannot happen after the checks above; kept so the cursor stays the authority */
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size, "file is too short");
    trn_image out;
    trn_status st = trn_image_init(&out, width, height, 1, depth, err);
    if (st) {
        if (err) snprintf(err->file, sizeof err->file, "%s", path ? path : "");
        return st;
    }
    const size_t n = (size_t)width * height;
    /* Every sample on its own: large rasters on every core (an 8192^2 R16 took 80 ms on one). */
    const bool team = n >= RAW_PARALLEL_SAMPLES;
    (void)team; /* read by the pragmas only */
    if (type == TRN_RAW_U8) {
        memcpy(out.data, p, n);
    } else if (type == TRN_RAW_U16_LE) {
        uint16_t *dst = out.data;
        /* Assembling bytes is byte-order independent and compiles to plain loads. */
#pragma omp parallel for schedule(static) if (team)
        for (size_t i = 0; i < n; i++)
            dst[i] = (uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
    } else if (type == TRN_RAW_U16_BE) {
        uint16_t *dst = out.data;
#pragma omp parallel for schedule(static) if (team)
        for (size_t i = 0; i < n; i++)
            dst[i] = (uint16_t)((p[2 * i] << 8) | p[2 * i + 1]);
    } else {
        float *dst = out.data;
#pragma omp parallel for schedule(static) if (team)
        for (size_t i = 0; i < n; i++) {
            const uint8_t *q = p + 4 * i;
            uint32_t u = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) |
                         ((uint32_t)q[3] << 24);
            memcpy(&dst[i], &u, sizeof u);
        }
    }
    *img = out;
    return TRN_OK;
}

trn_status trn_raw_read_limited(const char *path, trn_raw_type type, uint32_t width,
                                uint32_t height, const trn_image_limits *limits, trn_image *img,
                                trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_raw_decode(mf.data, mf.size, path, type, width, height, limits, img, err);
    trn_mapped_file_close(&mf);
    return st;
}

trn_status trn_raw_read(const char *path, trn_raw_type type, uint32_t width, uint32_t height,
                        trn_image *img, trn_error *err)
{
    return trn_raw_read_limited(path, type, width, height, NULL, img, err);
}

static trn_status check_writable(const trn_image *img, trn_raw_type type, const char *path,
                                 trn_error *err)
{
    if (trn_raw_sample_bytes(type) == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "unknown RAW type %d",
                             (int)type);
    if (!img || !img->data)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "image is NULL");
    if (img->channels != 1 || img->bit_depth != raw_bit_depth(type))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "a %s RAW file holds 1 channel of %u bits; the image has %u "
                             "channel%s of %u bits",
                             raw_type_name(type), raw_bit_depth(type), img->channels,
                             img->channels == 1 ? "" : "s", img->bit_depth);
    size_t bytes;
    if (!trn_image_layout_bytes(img->width, img->height, 1, img->bit_depth, &bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, -1, "image is too large");
    return TRN_OK;
}

/* Serialise samples [first, first + count) of img into dst in the file's byte order. */
static void store_samples(const trn_image *img, trn_raw_type type, size_t first, size_t count,
                          uint8_t *dst)
{
    if (type == TRN_RAW_U8) {
        memcpy(dst, (const uint8_t *)img->data + first, count);
    } else if (type == TRN_RAW_F32_LE) {
        const float *src = (const float *)img->data + first;
        for (size_t i = 0; i < count; i++) {
            uint32_t u;
            memcpy(&u, &src[i], sizeof u);
            dst[4 * i] = (uint8_t)u;
            dst[4 * i + 1] = (uint8_t)(u >> 8);
            dst[4 * i + 2] = (uint8_t)(u >> 16);
            dst[4 * i + 3] = (uint8_t)(u >> 24);
        }
    } else {
        const uint16_t *src = (const uint16_t *)img->data + first;
        int hi = type == TRN_RAW_U16_BE ? 0 : 1;
        for (size_t i = 0; i < count; i++) {
            dst[2 * i + (size_t)hi] = (uint8_t)(src[i] >> 8);
            dst[2 * i + (size_t)(1 - hi)] = (uint8_t)src[i];
        }
    }
}

trn_status trn_raw_encode(const trn_image *img, trn_raw_type type, uint8_t **out_data,
                          size_t *out_size, trn_error *err)
{
    if (!out_data || !out_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "output is NULL");
    trn_status st = check_writable(img, type, NULL, err);
    if (st) return st;
    size_t n = (size_t)img->width * img->height, bytes = n * trn_raw_sample_bytes(type);
    uint8_t *buf = malloc(bytes);
    if (!buf)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory (%zu bytes)", bytes);
    store_samples(img, type, 0, n, buf);
    *out_data = buf;
    *out_size = bytes;
    return TRN_OK;
}

trn_status trn_raw_write(const char *path, const trn_image *img, trn_raw_type type, trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "path is NULL");
    trn_status st = check_writable(img, type, path, err);
    if (st) return st;
    /* Stream through a small buffer so a big raster is never copied whole. */
    enum { BLOCK_SAMPLES = 1 << 18 };
    size_t sb = trn_raw_sample_bytes(type);
    uint8_t *buf = malloc(BLOCK_SAMPLES * sb);
    if (!buf) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    trn_atomic_file af;
    st = trn_atomic_file_open(&af, path, err);
    if (st) {
        free(buf);
        return st;
    }
    size_t n = (size_t)img->width * img->height;
    for (size_t first = 0; first < n && !af.failed; first += BLOCK_SAMPLES) {
        size_t count = n - first < BLOCK_SAMPLES ? n - first : BLOCK_SAMPLES;
        store_samples(img, type, first, count, buf);
        trn_atomic_file_write(&af, buf, count * sb);
    }
    free(buf);
    return trn_atomic_file_commit(&af, err);
}
