/* Water internals shared by bodies, resolution and queries: sample positions, the terrain
 * triangle and exact polygon predicates. */
#ifndef TRN_GEN_WATER_INTERNAL_H
#define TRN_GEN_WATER_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "terrane/water.h"

/* World position of sample index i along an axis of `cells` cells over `size` units. */
static inline double trn_water_sample_pos(uint32_t i, uint32_t cells, double size)
{
    return (double)i * size / (double)cells;
}

/* The cell holding (x, z), clamped to the grid, and the position inside it (u, v in 0..1).
 * cells_x and cells_z must be at least 1. */
static inline void trn_tri_locate(double x, double z, uint32_t cells_x, uint32_t cells_z,
                                  double size_x, double size_z, uint32_t *i, uint32_t *j, double *u,
                                  double *v)
{
    double fx = x * (double)cells_x / size_x, fz = z * (double)cells_z / size_z;
    if (!(fx > 0.0)) fx = 0.0; /* also NaN: callers check finiteness first */
    if (!(fz > 0.0)) fz = 0.0;
    if (fx > (double)cells_x) fx = (double)cells_x;
    if (fz > (double)cells_z) fz = (double)cells_z;
    double fi = floor(fx), fj = floor(fz);
    if (fi > (double)(cells_x - 1u)) fi = (double)(cells_x - 1u);
    if (fj > (double)(cells_z - 1u)) fj = (double)(cells_z - 1u);
    *i = (uint32_t)fi;
    *j = (uint32_t)fj;
    *u = fx - fi;
    *v = fz - fj;
}

/* Linear interpolation on the cell's triangles split from corner 00 to corner 11: u >= v is the
 * triangle 00-10-11, otherwise 00-01-11. */
static inline double trn_tri_interp(double h00, double h10, double h01, double h11, double u,
                                    double v)
{
    if (u >= v) return h00 + u * (h10 - h00) + v * (h11 - h10);
    return h00 + v * (h01 - h00) + u * (h11 - h01);
}

/* Sign (-1, 0, 1) of the orientation of (a, b, c) in the XZ plane, computed exactly: positive
 * when c lies to the left of a -> b with x to the right and z up. */
int trn_water_orient(double ax, double az, double bx, double bz, double cx, double cz);

/* Boundary vertices after dropping one repeated closing vertex. */
uint32_t trn_water_boundary_count(const trn_water_body *body);

/* True when (px, pz) lies inside the polygon of n XZ pairs or on its edge (exact). */
bool trn_water_polygon_contains(const double *xz, uint32_t n, double px, double pz);

/* Validation of the river fields alone (the ones trn_water_body_sample_path reads). */
trn_status trn_water_check_river_controls(const trn_water_body *body, const char **field,
                                          trn_error *err);

/* Fill water->wet_bits from water->wet (no-op without wet); false when out of memory. */
bool trn_water_index_wet(trn_water *water);

#endif
