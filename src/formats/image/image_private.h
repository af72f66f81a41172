/* Shared size arithmetic for the image readers and writers (internal). */
#ifndef TRN_FORMATS_IMAGE_PRIVATE_H
#define TRN_FORMATS_IMAGE_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/checked.h"

/* Bytes of a packed width x height image; false on overflow of size_t. */
static inline bool trn_image_layout_bytes(uint32_t width, uint32_t height, uint8_t channels,
                                          uint8_t bit_depth, size_t *bytes)
{
    size_t px = (size_t)channels * (size_t)(bit_depth / 8u), row;
    return trn_mul_size((size_t)width, px, &row) && trn_mul_size(row, (size_t)height, bytes);
}

/* The same in 64 bits, for comparing against limits before anything is allocated. */
static inline bool trn_image_layout_bytes64(uint32_t width, uint32_t height, uint8_t channels,
                                            uint8_t bit_depth, uint64_t *bytes)
{
    uint64_t px = (uint64_t)channels * (uint64_t)(bit_depth / 8u), row;
    return trn_mul_u64((uint64_t)width, px, &row) && trn_mul_u64(row, (uint64_t)height, bytes);
}

#endif
