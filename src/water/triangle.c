/* Heights on the terrain triangles: each cell split from sample (i, j) to sample (i+1, j+1). */
#include <math.h>

#include "water/water_internal.h"
#include "terrane/water.h"

double trn_grid_value_at(const float *values, uint32_t cells_x, uint32_t cells_z, double size_x,
                         double size_z, double x, double z)
{
    if (!values || cells_x == 0 || cells_z == 0 || !(size_x > 0.0) || !(size_z > 0.0)) return NAN;
    if (isnan(x) || isnan(z)) return NAN;
    uint32_t i, j;
    double u, v;
    trn_tri_locate(x, z, cells_x, cells_z, size_x, size_z, &i, &j, &u, &v);
    const size_t nx = (size_t)cells_x + 1u, k = (size_t)j * nx + i;
    return trn_tri_interp(values[k], values[k + 1], values[k + nx], values[k + nx + 1], u, v);
}

double trn_field_height_at(const trn_field *field, double x, double z)
{
    if (!field) return NAN;
    return trn_grid_value_at(field->heights, field->cells_x, field->cells_z, field->size_x,
                             field->size_z, x, z);
}
