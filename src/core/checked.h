/* Overflow-checked size arithmetic (internal). */
#ifndef TRN_CORE_CHECKED_H
#define TRN_CORE_CHECKED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* *out = a * b; false on overflow (and *out untouched). */
static inline bool trn_mul_size(size_t a, size_t b, size_t *out)
{
    if (b != 0 && a > SIZE_MAX / b) return false;
    *out = a * b;
    return true;
}

/* *out = a + b; false on overflow. */
static inline bool trn_add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b) return false;
    *out = a + b;
    return true;
}

/* 64-bit variants for file offsets. */
static inline bool trn_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (b != 0 && a > UINT64_MAX / b) return false;
    *out = a * b;
    return true;
}

static inline bool trn_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a > UINT64_MAX - b) return false;
    *out = a + b;
    return true;
}

#endif
