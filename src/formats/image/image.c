/* Image buffers and limits, channel extraction, and image <-> heightfield conversion. */
#define _DEFAULT_SOURCE /* posix_memalign, madvise(MADV_HUGEPAGE) on Linux (core/huge_alloc.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image_private.h"
#include "core/huge_alloc.h"
#include "terrane/image.h"

void trn_image_limits_default(trn_image_limits *limits)
{
    if (!limits) return;
    memset(limits, 0, sizeof *limits);
    limits->max_width = 65536;
    limits->max_height = 65536;
    limits->max_bytes = 8ull << 30;
    limits->max_chunk_bytes = (size_t)16 << 20;
    limits->max_chunk_cache_bytes = (size_t)64 << 20;
    limits->max_samples = TRN_IMAGE_DEFAULT_MAX_SAMPLES;
}

/* The size from which an image's pixels are put on huge pages. */
#define IMAGE_HUGE_MIN ((size_t)8 << 20)

/* Zeroed pixels. Large blocks go on huge pages where the system offers them: a fresh 4 KiB
 * page costs a fault when first written (a 4096^2 16-bit image: 8192 of them, a tenth of a
 * `convert`'s CPU on some virtual machines), a huge page 512 times fewer. The zeroing is then
 * ours, spread over the threads so that no one thread takes every fault. Smaller blocks come
 * from calloc, whose pages are only touched when written. free() releases either. */
static void *pixels_alloc(size_t bytes)
{
    if (bytes < IMAGE_HUGE_MIN) return calloc(bytes, 1);
    unsigned char *b = trn_huge_alloc(bytes, IMAGE_HUGE_MIN);
    if (!b) return NULL;
    const long pieces = (long)((bytes + TRN_HUGE_PAGE - 1) / TRN_HUGE_PAGE);
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (long k = 0; k < pieces; k++) {
        const size_t at = (size_t)k * TRN_HUGE_PAGE;
        memset(b + at, 0, bytes - at < TRN_HUGE_PAGE ? bytes - at : TRN_HUGE_PAGE);
    }
    return b;
}

trn_status trn_image_init(trn_image *img, uint32_t width, uint32_t height, uint8_t channels,
                          uint8_t bit_depth, trn_error *err)
{
    if (!img) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "image is NULL");
    memset(img, 0, sizeof *img);
    if (width == 0 || height == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "image of %u x %u pixels: width and height must be at least 1", width,
                             height);
    if (channels < 1 || channels > 4)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "image with %u channels: expected 1 to 4", channels);
    if (bit_depth != 8 && bit_depth != 16 && bit_depth != 32)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "image bit depth %u: expected 8, 16 or 32 (float)", bit_depth);
    size_t bytes;
    if (!trn_image_layout_bytes(width, height, channels, bit_depth, &bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "image of %u x %u pixels with %u channels of %u bits is too large "
                             "for this machine",
                             width, height, channels, bit_depth);
    img->data = pixels_alloc(bytes);
    if (!img->data)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "out of memory for a %u x %u image (%zu bytes)", width, height, bytes);
    img->width = width;
    img->height = height;
    img->channels = channels;
    img->bit_depth = bit_depth;
    return TRN_OK;
}

void trn_image_dispose(trn_image *img)
{
    if (!img) return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

size_t trn_image_pixel_bytes(const trn_image *img)
{
    if (!img) return 0;
    return (size_t)img->channels * (size_t)(img->bit_depth / 8u);
}

size_t trn_image_row_bytes(const trn_image *img)
{
    size_t row;
    if (!img || !trn_mul_size((size_t)img->width, trn_image_pixel_bytes(img), &row)) return 0;
    return row;
}

static const char *channel_name(uint8_t channels, uint8_t channel)
{
    static const char *const grey[] = {"grey", "alpha"};
    static const char *const rgba[] = {"R", "G", "B", "A"};
    if (channels <= 2) return channel < 2 ? grey[channel] : "?";
    return channel < 4 ? rgba[channel] : "?";
}

/* Common checks for reading one channel: a real image, a channel it has, a sample count. */
static trn_status check_channel(const trn_image *img, uint8_t channel, const void *out,
                                size_t *count, trn_error *err)
{
    if (!img || !img->data || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "image or output buffer is NULL");
    if (channel >= img->channels)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "channel %u requested but the image has %u channel%s (0 to %u)",
                             channel, img->channels, img->channels == 1 ? "" : "s",
                             img->channels - 1u);
    if (!trn_mul_size((size_t)img->width, (size_t)img->height, count))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "image is too large");
    return TRN_OK;
}

trn_status trn_image_channel_u8(const trn_image *img, uint8_t channel, uint8_t *out, trn_error *err)
{
    size_t n = 0;
    trn_status st = check_channel(img, channel, out, &n, err);
    if (st) return st;
    size_t stride = img->channels;
    if (img->bit_depth == 8) {
        const uint8_t *src = (const uint8_t *)img->data + channel;
        for (size_t i = 0; i < n; i++)
            out[i] = src[i * stride];
    } else if (img->bit_depth == 16) {
        const uint16_t *src = (const uint16_t *)img->data + channel;
        /* round(v / 257) in integers: floor((2v + 257) / 514); 65535 maps to 255. */
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)((2u * (uint32_t)src[i * stride] + 257u) / 514u);
    } else {
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "channel %s of a float image has no 8-bit value; quantise it first",
                             channel_name(img->channels, channel));
    }
    return TRN_OK;
}

trn_status trn_image_channel_u16(const trn_image *img, uint8_t channel, uint16_t *out,
                                 trn_error *err)
{
    size_t n = 0;
    trn_status st = check_channel(img, channel, out, &n, err);
    if (st) return st;
    size_t stride = img->channels;
    if (img->bit_depth == 8) {
        const uint8_t *src = (const uint8_t *)img->data + channel;
        /* v / 255 * 65535 is exactly v * 257, so no rounding is involved. */
        for (size_t i = 0; i < n; i++)
            out[i] = (uint16_t)(src[i * stride] * 257u);
    } else if (img->bit_depth == 16) {
        const uint16_t *src = (const uint16_t *)img->data + channel;
        for (size_t i = 0; i < n; i++)
            out[i] = src[i * stride];
    } else {
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "channel %s of a float image has no 16-bit value; quantise it first",
                             channel_name(img->channels, channel));
    }
    return TRN_OK;
}

/* Below this many samples a conversion stays on the calling thread: waking the others costs
 * more than the pass. */
#define IMAGE_PARALLEL_SAMPLES ((size_t)1 << 16)

trn_status trn_image_to_field(const trn_image *img, uint8_t channel, double quantum, double base,
                              double cell_size, trn_field *field, trn_error *err)
{
    if (!img || !img->data || !field)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "image or field is NULL");
    if (channel >= img->channels)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "channel %u requested but the image has %u channel%s", channel,
                             img->channels, img->channels == 1 ? "" : "s");
    if (img->width < 2 || img->height < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "image is %u x %u pixels; a heightfield needs at least 2 x 2",
                             img->width, img->height);
    if (!(cell_size > 0.0) || !isfinite(cell_size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "cell size %g: expected a positive finite number", cell_size);
    bool integer = img->bit_depth != 32;
    if (integer && (!(quantum > 0.0) || !isfinite(quantum) || !isfinite(base)))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "quantum %g and base %g: expected a positive quantum (metres per "
                             "stored unit) and a finite base",
                             quantum, base);
    uint32_t w = img->width, h = img->height;
    trn_status st = trn_field_init(field, w - 1u, h - 1u, (double)(w - 1u) * cell_size,
                                   (double)(h - 1u) * cell_size, err);
    if (st) return st;
    size_t stride = img->channels;
    /* Rows are independent: on every core (a serial pass here was a tenth of `convert`'s time
     * on two threads). */
    const long rows = (long)h;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((size_t)w * h >= IMAGE_PARALLEL_SAMPLES)
#endif
    for (long rr = 0; rr < rows; rr++) {
        const uint32_t r = (uint32_t)rr;
        /* Image row 0 is the north edge; field row 0 is z = 0 (south). */
        float *dst = field->heights + (size_t)(h - 1u - r) * w;
        size_t first = (size_t)r * w * stride + channel;
        if (img->bit_depth == 16) {
            const uint16_t *src = (const uint16_t *)img->data + first;
            for (uint32_t i = 0; i < w; i++)
                dst[i] = (float)(base + (double)src[i * stride] * quantum);
        } else if (img->bit_depth == 8) {
            const uint8_t *src = (const uint8_t *)img->data + first;
            for (uint32_t i = 0; i < w; i++)
                dst[i] = (float)(base + (double)(src[i * stride] * 257u) * quantum);
        } else {
            const float *src = (const float *)img->data + first;
            for (uint32_t i = 0; i < w; i++)
                dst[i] = src[i * stride];
        }
    }
    if (integer) {
        field->quantum = quantum;
        field->quantum_base = base;
    }
    return TRN_OK;
}

trn_status trn_image_from_field(const trn_field *field, double quantum, double base, trn_image *img,
                                trn_error *err)
{
    if (!field || !field->heights || !img)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "field or image is NULL");
    if (field->cells_x == UINT32_MAX || field->cells_z == UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "field of %u x %u cells has more samples per row than an image can",
                             field->cells_x, field->cells_z);
    if (quantum < 0.0 || !isfinite(quantum) || !isfinite(base))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "quantum %g and base %g: expected a quantum >= 0 (0 = automatic) "
                             "and a finite base",
                             quantum, base);
    if (quantum == 0.0) {
        if (field->quantum > 0.0 && isfinite(field->quantum) && isfinite(field->quantum_base)) {
            quantum = field->quantum;
            base = field->quantum_base;
        } else {
            float lo, hi;
            trn_field_range(field, &lo, &hi);
            if (!isfinite(lo) || !isfinite(hi))
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "field heights are not finite (%g .. %g); cannot stretch "
                                     "them over 0..65535",
                                     (double)lo, (double)hi);
            base = lo;
            /* A flat field maps every sample to 0 whatever the quantum. */
            quantum = hi > lo ? ((double)hi - (double)lo) / 65535.0 : 1.0;
        }
    }
    uint32_t w = field->cells_x + 1u, h = field->cells_z + 1u;
    trn_status st = trn_image_init(img, w, h, 1, 16, err);
    if (st) return st;
    uint16_t *out = img->data;
    const long rows = (long)h;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if ((size_t)w * h >= IMAGE_PARALLEL_SAMPLES)
#endif
    for (long jj = 0; jj < rows; jj++) {
        const uint32_t j = (uint32_t)jj;
        const float *src = field->heights + (size_t)j * w;
        uint16_t *dst = out + (size_t)(h - 1u - j) * w;
        for (uint32_t i = 0; i < w; i++) {
            double v = ((double)src[i] - base) / quantum;
            /* !(v >= 0) also catches NaN. Adding 0.5 and truncating rounds half up. */
            if (!(v >= 0.0))
                dst[i] = 0;
            else if (v >= 65535.0)
                dst[i] = 65535;
            else
                dst[i] = (uint16_t)(v + 0.5);
        }
    }
    return TRN_OK;
}

/* ---- resampling a tileable image ---- */

/* The source texels and weights of each output texel along one axis (src texels wrap). */
typedef struct resample_axis {
    uint32_t *first; /* per output texel: index into taps */
    uint32_t *index; /* source texel of each tap */
    double *weight;
} resample_axis;

static void axis_dispose(resample_axis *a)
{
    free(a->first);
    free(a->index);
    free(a->weight);
}

/* Taps for n output texels over m source texels: linear between the two texels around the
 * output texel's centre when n >= m, else the box n/m source texels wide that the output texel
 * covers (its partly covered end texels weighted by the part covered). */
static bool axis_taps(uint32_t m, uint32_t n, resample_axis *a)
{
    const size_t per = n >= m ? 2u : (size_t)(m / n) + 2u;
    a->first = malloc(((size_t)n + 1u) * sizeof *a->first);
    a->index = malloc((size_t)n * per * sizeof *a->index);
    a->weight = malloc((size_t)n * per * sizeof *a->weight);
    if (!a->first || !a->index || !a->weight) return false;
    uint32_t t = 0;
    for (uint32_t k = 0; k < n; k++) {
        a->first[k] = t;
        if (n >= m) {
            const double f = ((double)k + 0.5) * m / n - 0.5, f0 = floor(f), w = f - f0;
            const int64_t i0 = (int64_t)f0;
            a->index[t] = (uint32_t)(((i0 % m) + m) % m);
            a->weight[t++] = 1.0 - w;
            a->index[t] = (uint32_t)((((i0 + 1) % m) + m) % m);
            a->weight[t++] = w;
        } else {
            /* The footprint [lo, hi) in source texels, hi - lo = m / n > 1. */
            const double lo = (double)k * m / n, hi = (double)(k + 1u) * m / n;
            for (uint32_t i = (uint32_t)floor(lo); (double)i < hi; i++) {
                const double a0 = (double)i > lo ? (double)i : lo;
                const double a1 = (double)i + 1.0 < hi ? (double)i + 1.0 : hi;
                if (a1 <= a0) continue;
                a->index[t] = i % m;
                a->weight[t++] = (a1 - a0) * n / m;
            }
        }
    }
    a->first[n] = t;
    return true;
}

/* Channel c of texel (x, y) in 0..1; channel -1 is opaque (1). */
static double texel_value(const trn_image *img, uint32_t x, uint32_t y, int c)
{
    if (c < 0) return 1.0;
    const size_t i = ((size_t)y * img->width + x) * img->channels + (size_t)c;
    if (img->bit_depth == 16) return ((const uint16_t *)img->data)[i] / 65535.0;
    return ((const uint8_t *)img->data)[i] / 255.0;
}

trn_status trn_image_resample_tiled(const trn_image *src, uint32_t width, uint32_t height,
                                    uint8_t channels, trn_image *dst, trn_error *err)
{
    if (dst) memset(dst, 0, sizeof *dst);
    if (!src || !src->data || !dst || !width || !height ||
        (channels != 1 && channels != 3 && channels != 4))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_image_resample_tiled: a source image, a size of at least 1 x 1 "
                             "and 1, 3 or 4 channels are required");
    if (src->bit_depth != 8 && src->bit_depth != 16)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "trn_image_resample_tiled: a %u-bit image has no 8-bit texels; "
                             "quantise it first",
                             (unsigned)src->bit_depth);
    /* Which source channel each output channel reads. */
    const bool colour = src->channels >= 3, alpha = src->channels == 2 || src->channels == 4;
    int from[4];
    for (int c = 0; c < channels; c++)
        from[c] = c < 3 ? (colour && channels > 1 ? c : 0)
                        : (alpha ? (int)src->channels - 1 : -1);
    trn_status st = trn_image_init(dst, width, height, channels, 8, err);
    if (st) return st;
    resample_axis ax, ay;
    memset(&ax, 0, sizeof ax);
    memset(&ay, 0, sizeof ay);
    double *row = NULL;
    if (!axis_taps(src->width, width, &ax) || !axis_taps(src->height, height, &ay) ||
        !(row = malloc((size_t)width * channels * sizeof *row))) {
        axis_dispose(&ax);
        axis_dispose(&ay);
        trn_image_dispose(dst);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory resampling a map");
    }
    uint8_t *px = dst->data;
    for (uint32_t y = 0; y < height; y++) {
        memset(row, 0, (size_t)width * channels * sizeof *row);
        for (uint32_t ty = ay.first[y]; ty < ay.first[y + 1u]; ty++) {
            const uint32_t sy = ay.index[ty];
            const double wy = ay.weight[ty];
            for (uint32_t x = 0; x < width; x++)
                for (uint32_t tx = ax.first[x]; tx < ax.first[x + 1u]; tx++)
                    for (int c = 0; c < channels; c++)
                        row[(size_t)x * channels + (size_t)c] +=
                            wy * ax.weight[tx] * texel_value(src, ax.index[tx], sy, from[c]);
        }
        for (size_t k = 0; k < (size_t)width * channels; k++) {
            const double v = row[k] * 255.0;
            px[(size_t)y * width * channels + k] =
                (uint8_t)(v <= 0.0 ? 0 : v >= 255.0 ? 255 : lrint(v));
        }
    }
    free(row);
    axis_dispose(&ax);
    axis_dispose(&ay);
    return TRN_OK;
}
