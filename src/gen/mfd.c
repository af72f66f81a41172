/* Multiple-flow-direction accumulation (Freeman 1991) over a drainage's filled surface. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/drainage.h"
#include "gen/d8.h"

trn_status trn_drainage_mfd_accumulation(const trn_drainage *d, double exponent, float *out,
                                         trn_error *err)
{
    if (!d || !d->filled || !d->flow_dir || !out || d->cells_x == 0 || d->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "MFD accumulation: a drainage result and an output are needed");
    if (!(isfinite(exponent) && exponent > 0 && exponent <= 100))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "MFD accumulation: exponent: expected a number > 0 and <= 100, "
                             "found %g",
                             exponent);
    const uint32_t nx = d->cells_x + 1u, nz = d->cells_z + 1u;
    const size_t n = (size_t)nx * nz;
    const double dx = d->size_x / d->cells_x, dz = d->size_z / d->cells_z;
    double dist[8];
    for (int k = 0; k < 8; k++)
        dist[k] = TRN_D8_DI[k] && TRN_D8_DJ[k] ? sqrt(dx * dx + dz * dz) : TRN_D8_DI[k] ? dx : dz;
    uint8_t *indeg = calloc(n, 1);
    uint32_t *queue = malloc(n * sizeof *queue);
    double *acc = malloc(n * sizeof *acc);
    if (!indeg || !queue || !acc) {
        free(indeg);
        free(queue);
        free(acc);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "MFD accumulation: out of memory for %zu samples", n);
    }
    const float *h = d->filled;
    /* The receivers of v: its strictly lower neighbours, else its D8 direction (none for an
     * outlet). Bit k of the mask is neighbour k. */
#define RECEIVERS(v, i, j, mask)                                                                   \
    do {                                                                                           \
        mask = 0;                                                                                  \
        if (d->flow_dir[v] == TRN_DRAIN_OUTLET) break;                                             \
        for (int k = 0; k < 8; k++) {                                                              \
            const int64_t ii = (int64_t)(i) + TRN_D8_DI[k], jj = (int64_t)(j) + TRN_D8_DJ[k];      \
            if (ii < 0 || jj < 0 || ii >= nx || jj >= nz) continue;                                \
            if (h[(size_t)jj * nx + (size_t)ii] < h[v]) mask |= 1u << k;                           \
        }                                                                                          \
        if (!mask) mask = 1u << d->flow_dir[v];                                                    \
    } while (0)
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            const size_t v = (size_t)j * nx + i;
            unsigned mask;
            RECEIVERS(v, i, j, mask);
            for (int k = 0; k < 8; k++)
                if (mask >> k & 1u)
                    indeg[(size_t)((int64_t)v + TRN_D8_DJ[k] * (int64_t)nx + TRN_D8_DI[k])]++;
        }
    size_t head = 0, tail = 0;
    for (size_t v = 0; v < n; v++) {
        acc[v] = 1.0;
        if (!indeg[v]) queue[tail++] = (uint32_t)v;
    }
    while (head < tail) {
        const size_t v = queue[head++];
        const uint32_t i = (uint32_t)(v % nx), j = (uint32_t)(v / nx);
        unsigned mask;
        RECEIVERS(v, i, j, mask);
        if (!mask) continue;
        double w[8], total = 0;
        for (int k = 0; k < 8; k++) {
            w[k] = 0;
            if (!(mask >> k & 1u)) continue;
            const size_t q = (size_t)((int64_t)v + TRN_D8_DJ[k] * (int64_t)nx + TRN_D8_DI[k]);
            const double drop = (double)h[v] - (double)h[q];
            /* A flat's single D8 step carries everything. */
            w[k] = drop > 0 ? pow(drop / dist[k], exponent) : 1.0;
            total += w[k];
        }
        for (int k = 0; k < 8; k++) {
            if (!(mask >> k & 1u)) continue;
            const size_t q = (size_t)((int64_t)v + TRN_D8_DJ[k] * (int64_t)nx + TRN_D8_DI[k]);
            acc[q] += acc[v] * (w[k] / total);
            if (--indeg[q] == 0) queue[tail++] = (uint32_t)q;
        }
    }
#undef RECEIVERS
    for (size_t v = 0; v < n; v++)
        out[v] = (float)acc[v];
    free(indeg);
    free(queue);
    free(acc);
    return TRN_OK;
}
