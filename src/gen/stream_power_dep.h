/* Deposition's link and height rules, shared by the whole-grid and tiled stream power (internal). */
#ifndef TRN_GEN_STREAM_POWER_DEP_H
#define TRN_GEN_STREAM_POWER_DEP_H

#include <stdbool.h>
#include <stdint.h>

/* Here rather than in stream_power.c so the tests can pin their doubles: the tiled and whole
 * solves agree whatever order these use, so only pinned values see a change of it. */

/* One link of the deposition solve (deposit_range), shared by the whole grid and the tiles so
 * both make the same operations: a sample with the sums P, Q gathered from its donors, its
 * height z0, count a and weight F (0 for a lake or a hillslope) gives its alpha (*alpha) and
 * beta (*beta, -1 for a lake) and what it adds to its receiver's sums (*cp, *cq). */
static inline void sp_dep_link(double G, double F, uint32_t a, bool lake, double z0, double pv,
                               double qv, double *alpha, double *beta, double *cp, double *cq)
{
    const double g = G / (double)a;
    const double D = 1.0 + F + g * (1.0 - qv);
    const double al = (z0 * (1.0 + g) + g * pv) / D, be = F / D;
    *cp = z0 + pv + (qv - 1.0) * al;
    *cq = (qv - 1.0) * be;
    *alpha = al;
    *beta = lake ? -1.0 : be;
}

/* The new height of a sample from its alpha, beta (deposit_range's second pass). */
static inline double sp_dep_height(double alpha, double beta, double h0, double hr)
{
    if (beta < 0) {
        /* A lake sample: filled by what comes in, never above its way out. */
        const double top = h0 > hr ? h0 : hr;
        return alpha < top ? alpha : top;
    }
    return alpha + beta * hr;
}

#endif
