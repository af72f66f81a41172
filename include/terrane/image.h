/* Generic raster images: 8/16-bit PNG (grey, RGB, RGBA), headerless RAW/R16 and float R32. */
#ifndef TERRANE_IMAGE_H
#define TERRANE_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Thread safety: no function here keeps state between calls, so different images and files
 * can be read and written from different threads at once. */

/* An image as pixels: row 0 is the top row (north), x fastest, channels interleaved, rows
 * packed (no padding). bit_depth 8 (data is uint8_t), 16 (uint16_t, host byte order) or 32
 * (float). The image owns data; trn_image_dispose frees it. */
typedef struct trn_image {
    uint32_t width, height;
    uint8_t channels;  /* 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    uint8_t bit_depth; /* 8, 16 or 32 (float) */
    void *data;
    bool srgb; /* PNG carried an sRGB chunk (or a gAMA of 1/2.2 within 1%) */
} trn_image;

/* The default max_samples of the PNG and headerless readers: what 8 GiB of working memory holds
 * at 12 bytes a sample, the most a pixel takes on its way to a float field (up to 8 bytes
 * decoded, 16-bit RGBA, plus the field's 4-byte float): 8 GiB / 12 = 715,827,882 samples, a
 * square of 26754 x 26754. */
#define TRN_IMAGE_DEFAULT_MAX_SAMPLES (((uint64_t)8 << 30) / 12u)

/* Bounds a reader checks before allocating anything. Fill with trn_image_limits_default and
 * tighten; a NULL limits pointer means the defaults. */
typedef struct trn_image_limits {
    uint32_t max_width, max_height; /* default 65536 each */
    uint64_t max_bytes;             /* decoded bytes; default 8 GiB */
    /* PNG only: the largest ancillary chunk kept in memory (text, iCCP, EXIF, ...) and all
     * such chunks together. Defaults 16 MiB and 64 MiB. Exceeding either is TRN_ERR_LIMIT. */
    size_t max_chunk_bytes;
    size_t max_chunk_cache_bytes;
    /* width * height; default TRN_IMAGE_DEFAULT_MAX_SAMPLES. More is TRN_ERR_LIMIT, with the
     * file, the size, the sample count and the limit in the message, before any allocation. */
    uint64_t max_samples;
} trn_image_limits;

void trn_image_limits_default(trn_image_limits *limits);

/* Allocate a zeroed width x height image. channels 1-4, bit_depth 8, 16 or 32; width and height
 * at least 1. TRN_ERR_INVALID_ARGUMENT, TRN_ERR_OVERFLOW or TRN_ERR_NO_MEMORY on failure, and
 * then img is zeroed. */
trn_status trn_image_init(trn_image *img, uint32_t width, uint32_t height, uint8_t channels,
                          uint8_t bit_depth, trn_error *err);
/* Free the pixels and zero the struct. NULL is a no-op. */
void trn_image_dispose(trn_image *img);
/* Bytes per pixel (channels * bit_depth / 8) and per row; 0 on overflow. */
size_t trn_image_pixel_bytes(const trn_image *img);
size_t trn_image_row_bytes(const trn_image *img);

/* One channel of an image as 8-bit samples, for masks and opacity maps ("a chosen channel: R,
 * G, B or A" is channel 0, 1, 2 or 3). out holds width*height bytes in the image's own row
 * order (row 0 = top; flipping to a terrain's order is the caller's choice). 8-bit channels
 * are copied; 16-bit channels are scaled to 8 bits by rounding v/257 (65535 -> 255,
 * 32896 -> 128). Float images are TRN_ERR_UNSUPPORTED; a channel the image does not have is
 * TRN_ERR_INVALID_ARGUMENT. */
trn_status trn_image_channel_u8(const trn_image *img, uint8_t channel, uint8_t *out,
                                trn_error *err);
/* The same as 16-bit samples: 16-bit channels are copied; 8-bit channels are widened
 * v/255*65535, which is exactly v*257 (BeamNG's rule for 8-bit heightmaps). */
trn_status trn_image_channel_u16(const trn_image *img, uint8_t channel, uint16_t *out,
                                 trn_error *err);

/* A tileable image (a texture that repeats: its right edge continues at its left, its bottom at
 * its top) as a width x height image of `channels` 8-bit channels: 1 (grey: the source's first
 * channel, the red of a colour image), 3 (RGB: a grey source repeated) or 4 (RGBA: the source's
 * alpha, else opaque). Each axis is resampled on its own. Along an axis that grows (or keeps
 * its size) a texel is interpolated linearly between the two source texels around its centre;
 * along one that shrinks it is the mean of the source texels its footprint covers, each
 * weighted by the length it shares with the footprint (a box filter), so detail finer than an
 * output texel averages out rather than aliasing into stripes or moire. The same size is an
 * exact copy. 8- and 16-bit sources; float images are TRN_ERR_UNSUPPORTED. */
trn_status trn_image_resample_tiled(const trn_image *src, uint32_t width, uint32_t height,
                                    uint8_t channels, trn_image *dst, trn_error *err);

/* ---- PNG ---------------------------------------------------------------------------------- */

/* PNG header facts without decoding pixels (for validate). Only the chunks before the first
 * IDAT are read, so this is cheap on any file size. */
typedef struct trn_png_info {
    uint32_t width, height;
    uint8_t bit_depth, color_type; /* PNG IHDR values */
    uint8_t interlace_method;      /* 0 none, 1 Adam7 */
    uint8_t channels;              /* channels trn_png_read returns (palette: 3, or 4 with tRNS) */
    bool has_srgb, has_gama, has_iccp;
    bool has_plte, has_trns;
    uint32_t gama;       /* gAMA * 100000 when has_gama (45455 for 1/2.2) */
    uint8_t srgb_intent; /* rendering intent when has_srgb */
} trn_png_info;

/* True when data starts with the 8-byte PNG signature. */
bool trn_png_sniff(const uint8_t *data, size_t size);
/* Read and check the signature, IHDR and the chunks before IDAT (lengths, CRCs, gAMA and
 * sRGB sizes). Errors: TRN_ERR_FORMAT (not a PNG, bad CRC, bad IHDR) and TRN_ERR_TRUNCATED
 * (file ends before IDAT), with the byte offset of the offending field. */
trn_status trn_png_read_info(const char *path, trn_png_info *info, trn_error *err);
/* The same on a buffer; path (may be NULL) is only used in messages. */
trn_status trn_png_decode_info(const uint8_t *data, size_t size, const char *path,
                               trn_png_info *info, trn_error *err);

/* Decode a PNG to 8- or 16-bit samples with its own channel count: palette expands to RGB, or
 * RGBA when it has a tRNS chunk; 1/2/4-bit grey expands to 8 bits scaled to 0..255; grey and
 * RGB tRNS chunks are ignored (no alpha channel is added). 16-bit samples come back in host
 * byte order. No gamma is applied. Limits are checked from the IHDR before decoding.
 * Errors: TRN_ERR_FORMAT (not a PNG, corrupt data; the message has libspng's words),
 * TRN_ERR_TRUNCATED, TRN_ERR_LIMIT, TRN_ERR_NO_MEMORY; offset is the start of the chunk at fault
 * when one can be named. img is untouched on failure. */
trn_status trn_png_read(const char *path, const trn_image_limits *limits, trn_image *img,
                        trn_error *err);
trn_status trn_png_decode(const uint8_t *data, size_t size, const char *path,
                          const trn_image_limits *limits, trn_image *img, trn_error *err);

/* Row filter for the encoder. AUTO: none at level 0; "up" for 1-channel 16-bit images
 * (heightmaps: measured fastest and smallest, bench/png_vs_gdal.sh); adaptive per-row choice,
 * as libpng does, for everything else. */
typedef enum trn_png_filter {
    TRN_PNG_FILTER_AUTO = 0,
    TRN_PNG_FILTER_NONE = 1,
    TRN_PNG_FILTER_SUB = 2,
    TRN_PNG_FILTER_UP = 3,
    TRN_PNG_FILTER_AVERAGE = 4,
    TRN_PNG_FILTER_PAETH = 5,
    TRN_PNG_FILTER_ADAPTIVE = 6,
} trn_png_filter;

/* Encoder options. A NULL options pointer means the defaults. Beware that a zeroed struct asks
 * for level 0 (stored, no compression): start from trn_png_options_default. */
typedef struct trn_png_options {
    int compression_level; /* zlib level 0-9, -1 = default (3) */
    bool srgb;             /* write an sRGB chunk (perceptual intent); also when img->srgb */
    trn_png_filter filter;
} trn_png_options;

/* Level -1 (3), no sRGB chunk, TRN_PNG_FILTER_AUTO. */
void trn_png_options_default(trn_png_options *options);

/* Encode 8/16-bit grey, grey+alpha, RGB or RGBA (float images: TRN_ERR_UNSUPPORTED). The rows
 * are compressed on every OpenMP thread in fixed bands of about 1 MiB, a few bands per thread
 * in flight (no second copy of the image is made); the bytes written are the same whatever the
 * thread count. The file is written atomically: on any failure, or when progress returns
 * TRN_CANCEL (TRN_ERR_CANCELLED), an existing file at path is left untouched. progress (may be
 * NULL) is called every few rows, always on the calling thread. */
trn_status trn_png_write(const char *path, const trn_image *img, const trn_png_options *options,
                         trn_progress_fn progress, void *user, trn_error *err);
/* The same into a malloc'd buffer (*out_data, *out_size; caller frees). */
trn_status trn_png_encode(const trn_image *img, const trn_png_options *options, uint8_t **out_data,
                          size_t *out_size, trn_error *err);

/* ---- Headerless rasters ------------------------------------------------------------------- */

typedef enum trn_raw_type {
    TRN_RAW_U16_LE = 0, /* R16 / RAW, Windows byte order */
    TRN_RAW_U16_BE = 1, /* Mac byte order */
    TRN_RAW_U8 = 2,
    TRN_RAW_F32_LE = 3, /* R32 */
} trn_raw_type;

/* Bytes per sample of a type (2, 2, 1, 4); 0 for an unknown type. */
size_t trn_raw_sample_bytes(trn_raw_type type);

/* Read a headerless raster as a 1-channel image (bit depth 16, 8 or 32). width and height 0 =
 * infer a square from the file length (TRN_ERR_FORMAT naming the length when it is not a
 * square; pass the size explicitly then); one of them 0 = infer it from the other. With an
 * explicit size the length must match exactly: TRN_ERR_TRUNCATED (offset = file length) when
 * short, TRN_ERR_TRAILING_DATA (offset = expected length) when long. The size is checked
 * against the limits (TRN_ERR_LIMIT) before the length and before anything is allocated. Rows
 * are as stored (row 0 = first in the file). trn_raw_read uses the default limits;
 * trn_raw_read_limited takes them (NULL = defaults). */
trn_status trn_raw_read(const char *path, trn_raw_type type, uint32_t width, uint32_t height,
                        trn_image *img, trn_error *err);
trn_status trn_raw_read_limited(const char *path, trn_raw_type type, uint32_t width,
                                uint32_t height, const trn_image_limits *limits, trn_image *img,
                                trn_error *err);
trn_status trn_raw_decode(const uint8_t *data, size_t size, const char *path, trn_raw_type type,
                          uint32_t width, uint32_t height, const trn_image_limits *limits,
                          trn_image *img, trn_error *err);
/* Write a 1-channel image whose bit depth matches the type (16 for U16, 8 for U8, 32 for F32;
 * otherwise TRN_ERR_INVALID_ARGUMENT), atomically. */
trn_status trn_raw_write(const char *path, const trn_image *img, trn_raw_type type, trn_error *err);
/* The same into a malloc'd buffer (caller frees). */
trn_status trn_raw_encode(const trn_image *img, trn_raw_type type, uint8_t **out_data,
                          size_t *out_size, trn_error *err);

/* ---- Image <-> field ---------------------------------------------------------------------- */

/* Image row 0 is the north edge (max z), so rows are reversed relative to the field (whose row
 * 0 is z = 0): image row r becomes field row height-1-r. The field has width-1 x height-1
 * cells of cell_size units (so size = cells * cell_size); the image must be at least 2 x 2.
 * channel picks the channel of a multi-channel image. 16-bit values map to metres as
 * base + value * quantum; 8-bit values are first widened v/255*65535 = v*257 (BeamNG's rule),
 * then mapped the same way; for both, field->quantum and quantum_base are set to quantum and
 * base so writers can recover the stored values. Float images copy metres (quantum and base are
 * ignored, field->quantum stays 0). field is initialised by the call (not disposed first). */
trn_status trn_image_to_field(const trn_image *img, uint8_t channel, double quantum, double base,
                              double cell_size, trn_field *field, trn_error *err);
/* Quantise a field to a 1-channel 16-bit image: value = round((h - base) / quantum), clamped to
 * 0..65535 (NaN -> 0), rows reversed back. quantum 0 = use field->quantum/quantum_base when
 * set, else stretch min..max over 0..65535 (a flat field gives all 0). Exact inverse of
 * trn_image_to_field for 16-bit and widened 8-bit images while |h| / quantum stays below 2^22
 * (float heights keep 24 bits). img is initialised by the call. */
trn_status trn_image_from_field(const trn_field *field, double quantum, double base, trn_image *img,
                                trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
