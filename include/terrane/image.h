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

/* An image as pixels: row 0 is the top row (north), x fastest, channels interleaved.
 * bit_depth 8 (data is uint8_t), 16 (uint16_t, native endianness) or 32 (float). */
typedef struct trn_image {
    uint32_t width, height;
    uint8_t channels;   /* 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    uint8_t bit_depth;  /* 8, 16 or 32 (float) */
    void *data;
    bool srgb;          /* PNG carried an sRGB chunk (or gAMA ~2.2) */
} trn_image;

typedef struct trn_image_limits {
    uint32_t max_width, max_height; /* default 65536 each */
    uint64_t max_bytes;             /* decoded bytes; default 8 GiB */
} trn_image_limits;

void trn_image_limits_default(trn_image_limits *limits);

trn_status trn_image_init(trn_image *img, uint32_t width, uint32_t height, uint8_t channels,
                          uint8_t bit_depth, trn_error *err);
void trn_image_dispose(trn_image *img);

/* PNG header facts without decoding (for validate). */
typedef struct trn_png_info {
    uint32_t width, height;
    uint8_t bit_depth, color_type; /* PNG IHDR values */
    bool has_srgb, has_gama, has_iccp;
    uint32_t gama; /* gAMA * 100000 when has_gama */
} trn_png_info;

bool trn_png_sniff(const uint8_t *data, size_t size);
trn_status trn_png_read_info(const char *path, trn_png_info *info, trn_error *err);

/* Decode a PNG to 8- or 16-bit samples with its own channel count (palette expands to RGB(A),
 * 1/2/4-bit grey expands to 8). */
trn_status trn_png_read(const char *path, const trn_image_limits *limits, trn_image *img,
                        trn_error *err);
trn_status trn_png_decode(const uint8_t *data, size_t size, const char *path,
                          const trn_image_limits *limits, trn_image *img, trn_error *err);

/* Encode 8/16-bit grey, grey+alpha, RGB or RGBA. level: zlib level 0-9, -1 = default (6). */
typedef struct trn_png_options {
    int compression_level;
    bool srgb; /* write an sRGB chunk */
} trn_png_options;

trn_status trn_png_write(const char *path, const trn_image *img, const trn_png_options *options,
                         trn_progress_fn progress, void *user, trn_error *err);

/* Headerless rasters. */
typedef enum trn_raw_type {
    TRN_RAW_U16_LE = 0, /* R16 / RAW, Windows byte order */
    TRN_RAW_U16_BE = 1, /* Mac byte order */
    TRN_RAW_U8 = 2,
    TRN_RAW_F32_LE = 3, /* R32 */
} trn_raw_type;

/* width/height 0 = infer a square from the file length (error if not square). */
trn_status trn_raw_read(const char *path, trn_raw_type type, uint32_t width, uint32_t height,
                        trn_image *img, trn_error *err);
trn_status trn_raw_write(const char *path, const trn_image *img, trn_raw_type type,
                         trn_error *err);

/* Image <-> field. Image row 0 is the north edge (max z), so rows are reversed relative to the
 * field (whose row 0 is z = 0). 16-bit values map to metres as base + value * quantum;
 * 8-bit values are first widened v/255*65535 (BeamNG's rule). Float images copy metres. */
trn_status trn_image_to_field(const trn_image *img, uint8_t channel, double quantum, double base,
                              double cell_size, trn_field *field, trn_error *err);
/* Quantise a field to a 1-channel 16-bit image: value = round((h - base) / quantum), clamped.
 * quantum 0 = use field->quantum/quantum_base if set, else stretch min..max over 0..65535. */
trn_status trn_image_from_field(const trn_field *field, double quantum, double base,
                                trn_image *img, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
