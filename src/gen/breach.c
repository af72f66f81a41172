/* Breaching closed depressions: notches cut along a drainage's directions, heights only lowered. */
#include <math.h>
#include <stdlib.h>

#include "gen/d8.h"
#include "terrane/drainage.h"

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
    uint32_t *count = calloc(n + 2u, sizeof *count);
    uint32_t *order = malloc((n ? n : 1u) * sizeof *order);
    if (!count || !order) {
        free(count);
        free(order);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "breach: out of memory");
    }
    /* Counting sort by accumulation (1..n), ties by index: every sample after its donors. */
    for (size_t k = 0; k < n; k++)
        count[d->accumulation[k] + 1u]++;
    for (size_t a = 1; a < n + 2u; a++)
        count[a] += count[a - 1u];
    for (size_t k = 0; k < n; k++)
        order[count[d->accumulation[k]]++] = (uint32_t)k;
    free(count);
    float *h = field->heights;
    for (size_t q = 0; q < n; q++) {
        const uint32_t k = order[q];
        const uint8_t code = d->flow_dir[k];
        if (code >= 8) continue; /* an outlet */
        const size_t i = k % nx, j = k / nx;
        const size_t r = (size_t)((int64_t)j + TRN_D8_DJ[code]) * nx +
                         (size_t)((int64_t)i + TRN_D8_DI[code]);
        if (!(h[r] < h[k])) h[r] = nextafterf(h[k], -INFINITY);
    }
    free(order);
    field->quantum = field->quantum_base = 0;
    return TRN_OK;
}
