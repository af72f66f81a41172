/* The D8 direction rules shared by the whole-grid and the tiled drainage, so both give the same bytes. */
#ifndef TRN_GEN_D8_RULES_H
#define TRN_GEN_D8_RULES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "gen/d8.h"

/* Flat distance of a sample that drains by a strict descent or is an outlet. */
#define TRN_D8_FLAT_EXIT 0u
/* Flat distance not known yet. */
#define TRN_D8_FLAT_UNKNOWN UINT32_MAX

/* 1 / the true length of each of the 8 steps for a sample spacing of dx by dz. */
static inline void trn_d8_inverse_lengths(double dx, double dz, double inv[8])
{
    for (int d = 0; d < 8; d++)
        inv[d] = 1.0 / sqrt((TRN_D8_DI[d] ? dx * dx : 0.0) + (TRN_D8_DJ[d] ? dz * dz : 0.0));
}

/* The steepest strict descent from f[0] (drop over the step length, ties to the lowest code) or
 * -1 when no neighbour is lower. off[d] is the offset of neighbour d in f. */
static inline int trn_d8_steepest(const float *f, const ptrdiff_t off[8], const double inv[8])
{
    const float fc = f[0];
    int best = -1;
    double best_slope = 0.0;
    for (int d = 0; d < 8; d++) {
        const float fn = f[off[d]];
        if (fn < fc) {
            const double slope = ((double)fc - (double)fn) * inv[d];
            if (slope > best_slope) {
                best_slope = slope;
                best = d;
            }
        }
    }
    return best;
}

/* On a flat (no lower neighbour), the neighbour of equal filled height that is fewest steps
 * from the flat's edge (dist: 0 at a sample with a strict descent or an outlet); ties to the
 * shorter step (E, S, W, N before the diagonals), then the lowest code. Distances strictly fall
 * along these links, so no cycle forms, and they depend only on the filled surface, never on
 * the order samples were visited in: a tiled run finds the same ones. */
static inline int trn_d8_flat_pick(const float *f, const uint32_t *dist, const ptrdiff_t off[8])
{
    static const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    const float fc = f[0];
    int best = -1;
    uint32_t best_dist = TRN_D8_FLAT_UNKNOWN;
    for (int k = 0; k < 8; k++) {
        const int d = order[k];
        if (f[off[d]] != fc) continue;
        const uint32_t dn = dist[off[d]];
        if (dn < best_dist) {
            best_dist = dn;
            best = d;
        }
    }
    return best;
}

#endif
