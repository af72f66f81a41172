/* Hand-built resolved water for tests: bodies over a field with owner, wet and surface set by
 * rule, so mesh and export tests do not depend on resolution. */
#ifndef TRN_TEST_WATER_HELPERS_H
#define TRN_TEST_WATER_HELPERS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/water.h"
#include "test.h"

/* Ground shapes the water tests share: a ramp rising along x, a diamond pit centred on (4, 4),
 * flat ground at 0. */
static inline double ramp(double x, double z)
{
    (void)z;
    return x;
}

static inline double diamond(double x, double z)
{
    return fabs(x - 4.0) + fabs(z - 4.0);
}

static inline double flat(double x, double z)
{
    (void)x;
    (void)z;
    return 0.0;
}

/* A surface plane y = c + cx * x + cz * z (a level body: cx = cz = 0). */
typedef struct water_plane {
    double c, cx, cz;
} water_plane;

static inline double water_plane_at(const water_plane *p, double x, double z)
{
    return p->c + p->cx * x + p->cz * z;
}

/* A field of cells_x x cells_z cells spaced dx, dz whose sample (i, j) holds fn(x, z). */
static inline void water_test_field(trn_field *f, uint32_t cells_x, uint32_t cells_z, double dx,
                                    double dz, double (*fn)(double x, double z))
{
    CHECK_OK(trn_field_init(f, cells_x, cells_z, dx * cells_x, dz * cells_z, NULL));
    for (uint32_t j = 0; j <= cells_z; j++)
        for (uint32_t i = 0; i <= cells_x; i++)
            f->heights[(size_t)j * (cells_x + 1) + i] = (float)fn(i * dx, j * dz);
}

/* Empty water on ground's grid with count default bodies of kind (ids "b0", "b1", ...). */
static inline void water_test_init(trn_water *w, const trn_field *g, uint32_t count,
                                   trn_water_kind kind)
{
    memset(w, 0, sizeof *w);
    w->cells_x = g->cells_x;
    w->cells_z = g->cells_z;
    w->size_x = g->size_x;
    w->size_z = g->size_z;
    size_t n = (size_t)(g->cells_x + 1) * (g->cells_z + 1);
    w->bodies = calloc(count, sizeof *w->bodies);
    w->body_count = count;
    w->owner = malloc(n * sizeof *w->owner);
    w->wet = calloc(n, 1);
    w->surface = malloc(n * sizeof *w->surface);
    w->segment = calloc(n, sizeof *w->segment);
    for (size_t k = 0; k < n; k++) {
        w->owner[k] = -1;
        w->surface[k] = NAN;
    }
    for (uint32_t b = 0; b < count; b++) {
        char id[16];
        snprintf(id, sizeof id, "b%u", b);
        trn_water_body_init(&w->bodies[b], kind, id);
    }
}

/* Every sample back to nobody's. */
static inline void water_test_clear(trn_water *w)
{
    size_t n = (size_t)(w->cells_x + 1) * (w->cells_z + 1);
    for (size_t k = 0; k < n; k++) {
        w->owner[k] = -1;
        w->wet[k] = 0;
        w->surface[k] = NAN;
    }
}

/* Body b takes every unowned sample in columns i0..i1 and rows j0..j1 whose ground is below
 * its surface plane. */
static inline void water_test_cover(trn_water *w, const trn_field *g, int32_t b,
                                    const water_plane *p, uint32_t i0, uint32_t i1, uint32_t j0,
                                    uint32_t j1)
{
    const size_t nx = (size_t)g->cells_x + 1;
    for (uint32_t j = j0; j <= j1; j++)
        for (uint32_t i = i0; i <= i1; i++) {
            size_t k = j * nx + i;
            double x = i * g->size_x / g->cells_x, z = j * g->size_z / g->cells_z;
            double s = water_plane_at(p, x, z);
            if (w->owner[k] != -1 || !((double)g->heights[k] < s)) continue;
            w->owner[k] = b;
            w->wet[k] = 1;
            w->surface[k] = (float)s;
        }
}

/* Dry unowned samples next to (8 neighbours) a wet one become its owner's shoreline corners,
 * with that body's surface plane (planes[owner]). */
static inline void water_test_shore(trn_water *w, const trn_field *g, const water_plane *planes)
{
    const size_t nx = (size_t)g->cells_x + 1, nz = (size_t)g->cells_z + 1;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            size_t k = j * nx + i;
            if (w->owner[k] != -1) continue;
            for (int dj = -1; dj <= 1 && w->owner[k] == -1; dj++)
                for (int di = -1; di <= 1; di++) {
                    long ni = (long)i + di, nj = (long)j + dj;
                    if (ni < 0 || nj < 0 || ni >= (long)nx || nj >= (long)nz) continue;
                    size_t q = (size_t)nj * nx + (size_t)ni;
                    if (!w->wet[q]) continue;
                    w->owner[k] = w->owner[q];
                    double x = (double)i * g->size_x / g->cells_x,
                           z = (double)j * g->size_z / g->cells_z;
                    w->surface[k] = (float)water_plane_at(&planes[w->owner[q]], x, z);
                    break;
                }
        }
}

#endif
