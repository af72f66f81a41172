/* Radix-2 decimation-in-time FFT: iterative, table twiddles, no allocation per call. */
#include "gen/fft.h"

#include <math.h>
#include <stdlib.h>

bool trn_fft_plan_init(trn_fft_plan *plan, size_t n)
{
    plan->n = 0;
    plan->cos_table = plan->sin_table = NULL;
    plan->reverse = NULL;
    if (n == 0 || (n & (n - 1)) != 0) return false;
    const size_t half = n / 2 ? n / 2 : 1;
    plan->cos_table = malloc(half * sizeof *plan->cos_table);
    plan->sin_table = malloc(half * sizeof *plan->sin_table);
    plan->reverse = malloc(n * sizeof *plan->reverse);
    if (!plan->cos_table || !plan->sin_table || !plan->reverse) {
        trn_fft_plan_dispose(plan);
        return false;
    }
    const double pi = 3.14159265358979323846;
    for (size_t k = 0; k < half; k++) {
        const double a = 2.0 * pi * (double)k / (double)n;
        plan->cos_table[k] = cos(a);
        plan->sin_table[k] = -sin(a);
    }
    unsigned bits = 0;
    while (((size_t)1 << bits) < n)
        bits++;
    for (size_t k = 0; k < n; k++) {
        size_t r = 0;
        for (unsigned b = 0; b < bits; b++)
            r |= ((k >> b) & 1u) << (bits - 1u - b);
        plan->reverse[k] = r;
    }
    plan->n = n;
    return true;
}

void trn_fft_plan_dispose(trn_fft_plan *plan)
{
    if (!plan) return;
    free(plan->cos_table);
    free(plan->sin_table);
    free(plan->reverse);
    plan->cos_table = plan->sin_table = NULL;
    plan->reverse = NULL;
    plan->n = 0;
}

void trn_fft_run(const trn_fft_plan *plan, double *re, double *im, bool inverse)
{
    const size_t n = plan->n;
    for (size_t k = 0; k < n; k++) {
        const size_t r = plan->reverse[k];
        if (r > k) {
            double t = re[k];
            re[k] = re[r];
            re[r] = t;
            t = im[k];
            im[k] = im[r];
            im[r] = t;
        }
    }
    const double sign = inverse ? -1.0 : 1.0;
    for (size_t len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2, step = n / len;
        for (size_t start = 0; start < n; start += len) {
            for (size_t j = 0; j < half; j++) {
                const double wr = plan->cos_table[j * step];
                const double wi = sign * plan->sin_table[j * step];
                const size_t a = start + j, b = a + half;
                const double xr = re[b] * wr - im[b] * wi;
                const double xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
        }
    }
}
