/* Breaching closed depressions: notches cut along a drainage's directions, heights only lowered. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen/d8.h"
#include "terrane/drainage.h"

/* Grids from this many samples scan for seeds on threads (a pass over every sample). */
#define BREACH_PARALLEL_MIN_SAMPLES ((size_t)1u << 18)

static size_t breach_receiver(size_t nx, size_t k, uint8_t code)
{
    const size_t i = k % nx, j = k / nx;
    return (size_t)((int64_t)j + TRN_D8_DJ[code]) * nx + (size_t)((int64_t)i + TRN_D8_DI[code]);
}

/* The whole grid in order of increasing accumulation, ties by index (the order the header
 * states). Used where a height is NaN: then a sample whose receiver was lower can still act
 * (a NaN donor makes its receiver NaN, which the next donor replaces), so no sample may be
 * left out. Returns false when out of memory. */
static bool breach_all(float *h, const trn_drainage *d, size_t n, size_t nx)
{
    uint32_t *count = calloc(n + 2u, sizeof *count);
    uint32_t *order = malloc((n ? n : 1u) * sizeof *order);
    if (!count || !order) {
        free(count);
        free(order);
        return false;
    }
    for (size_t k = 0; k < n; k++)
        count[d->accumulation[k] + 1u]++;
    for (size_t a = 1; a < n + 2u; a++)
        count[a] += count[a - 1u];
    for (size_t k = 0; k < n; k++)
        order[count[d->accumulation[k]]++] = (uint32_t)k;
    free(count);
    for (size_t q = 0; q < n; q++) {
        const uint32_t k = order[q];
        const uint8_t code = d->flow_dir[k];
        if (code >= 8) continue; /* an outlet */
        const size_t r = breach_receiver(nx, k, code);
        if (!(h[r] < h[k])) h[r] = nextafterf(h[k], -INFINITY);
    }
    free(order);
    return true;
}

/* Stable LSD radix sort of keys (accumulation << 32 | index) by their accumulation, whose
 * highest bit is below top_bit; tmp holds as many. Returns where the sorted keys are. */
static uint64_t *breach_sort(uint64_t *keys, uint64_t *tmp, size_t count, unsigned top_bit)
{
    size_t bins[2048];
    for (unsigned shift = 32; shift < 32u + top_bit; shift += 11) {
        memset(bins, 0, sizeof bins);
        for (size_t q = 0; q < count; q++)
            bins[(keys[q] >> shift) & 2047u]++;
        size_t at = 0;
        for (size_t b = 0; b < 2048; b++) {
            const size_t c = bins[b];
            bins[b] = at;
            at += c;
        }
        for (size_t q = 0; q < count; q++)
            tmp[bins[(keys[q] >> shift) & 2047u]++] = keys[q];
        uint64_t *swap = keys;
        keys = tmp;
        tmp = swap;
    }
    return keys;
}

trn_status trn_drainage_breach(trn_field *field, const trn_drainage *d, trn_error *err)
{
    if (!field || !field->heights || !d || !d->flow_dir || !d->accumulation)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "breach: a field with heights and its drainage are needed");
    if (field->cells_x != d->cells_x || field->cells_z != d->cells_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "breach: the field is %u x %u cells, its drainage %u x %u",
                             field->cells_x, field->cells_z, d->cells_x, d->cells_z);
    const size_t n = trn_field_sample_count(field), nx = (size_t)field->cells_x + 1u;
    const size_t nz = (size_t)field->cells_z + 1u;
    float *h = field->heights;
    /* Only the samples below a seed can change anything: a seed drains into a receiver not
     * lower than itself. Any other sample drains into a lower receiver that is only ever
     * lowered, while its own height stays as it was unless a seed lies above it; so taking
     * the seeds and everything downstream of them, in the same order, gives the same heights
     * as taking every sample (on the Mountain Range at 1025^2, 3% of them, and the random
     * reads of a whole grid in accumulation order were most of the time). */
    uint8_t *mark = calloc(n ? n : 1u, 1);
    if (!mark) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "breach: out of memory");
    size_t seeds = 0;
    bool nan = false;
#pragma omp parallel for schedule(static) reduction(+ : seeds) reduction(|| : nan) \
    if (n >= BREACH_PARALLEL_MIN_SAMPLES)
    for (size_t j = 0; j < nz; j++)
        for (size_t k = j * nx; k < (j + 1u) * nx; k++) {
            const uint8_t code = d->flow_dir[k];
            if (isnan(h[k])) nan = true;
            if (code >= 8) continue;
            const size_t r = breach_receiver(nx, k, code);
            if (h[r] < h[k]) continue;
            mark[k] = 1;
            seeds++;
        }
    if (nan) {
        free(mark);
        if (!breach_all(h, d, n, nx))
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "breach: out of memory");
        field->quantum = field->quantum_base = 0;
        return TRN_OK;
    }
    /* Everything downstream of a seed (mark 2), each walk stopping where an earlier one ran. */
    size_t count = 0;
    uint32_t top = 0;
    for (size_t k = 0; k < n && seeds; k++) {
        if (mark[k] != 1) continue;
        for (size_t v = k;;) {
            mark[v] = 2;
            count++;
            if (d->accumulation[v] > top) top = d->accumulation[v];
            const uint8_t code = d->flow_dir[v];
            if (code >= 8) break;
            v = breach_receiver(nx, v, code);
            if (mark[v] == 2) break;
        }
    }
    uint64_t *keys = malloc((count ? count : 1u) * 2u * sizeof *keys);
    if (!keys) {
        free(mark);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "breach: out of memory");
    }
    size_t c = 0;
    for (size_t k = 0; k < n && c < count; k++)
        if (mark[k] == 2) keys[c++] = (uint64_t)d->accumulation[k] << 32 | k;
    free(mark);
    unsigned bits = 0;
    while (bits < 32 && (top >> bits) != 0)
        bits++;
    /* Index order in, so ties stay by index: increasing accumulation, ties by index. */
    const uint64_t *order = breach_sort(keys, keys + count, count, bits);
    for (size_t q = 0; q < count; q++) {
        const size_t k = (size_t)(uint32_t)order[q];
        const uint8_t code = d->flow_dir[k];
        if (code >= 8) continue; /* an outlet */
        const size_t r = breach_receiver(nx, k, code);
        if (!(h[r] < h[k])) h[r] = nextafterf(h[k], -INFINITY);
    }
    free(keys);
    field->quantum = field->quantum_base = 0;
    return TRN_OK;
}
