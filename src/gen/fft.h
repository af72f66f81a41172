/* Radix-2 complex FFT in double precision (the spectral statistics and their tests). */
#ifndef TRN_GEN_FFT_H
#define TRN_GEN_FFT_H

#include <stdbool.h>
#include <stddef.h>

/* Twiddles and the bit-reversal permutation for one power-of-two length. */
typedef struct trn_fft_plan {
    size_t n;
    double *cos_table, *sin_table; /* n / 2 entries: cos and -sin of 2 pi k / n */
    size_t *reverse;               /* n entries */
} trn_fft_plan;

/* Plan for n, a power of two >= 1. False when n is not one or memory runs out. */
bool trn_fft_plan_init(trn_fft_plan *plan, size_t n);
void trn_fft_plan_dispose(trn_fft_plan *plan);

/* In place: X[k] = sum x[t] exp(-+2 pi i k t / n) (inverse: the + sign, unscaled). The same
 * inputs give the same bits on every run and thread. */
void trn_fft_run(const trn_fft_plan *plan, double *re, double *im, bool inverse);

#endif
