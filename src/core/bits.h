/* Bit tricks on 64-bit words that the compilers offer as builtins, with a portable fallback. */
#ifndef TRN_CORE_BITS_H
#define TRN_CORE_BITS_H

#include <stdint.h>

/* The index of the lowest set bit of x (x not 0). */
static inline int trn_ctz64(uint64_t x)
{
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int n = 0;
    while (!(x & 1u)) {
        x >>= 1;
        n++;
    }
    return n;
#endif
}

#endif
