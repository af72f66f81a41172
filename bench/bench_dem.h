/* The reprojection benchmarks' DEM: a geographic grid that reprojects to UTM zone 54. */
#ifndef TRN_BENCH_DEM_H
#define TRN_BENCH_DEM_H

#include <stdbool.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/geotiff.h"

/* side^2 samples at 1 arc second from 138 E, 36 N (the north-west corner, EPSG:4326), as an
 * SRTM tile N35E138: hills of value noise on a west-east tilt. False where f cannot be made. */
static inline bool bench_geographic_dem(uint32_t side, trn_field *f, trn_geotiff_georef *g)
{
    const double step = 1.0 / 3600.0;
    if (side < 2 || trn_field_init(f, side - 1, side - 1, 1, 1, NULL)) return false;
    for (uint32_t j = 0; j < side; j++)
        for (uint32_t i = 0; i < side; i++)
            f->heights[(size_t)j * side + i] =
                (float)(2000.0 * value_noise(i / 97.0, j / 97.0, 7) + 30.0 * i / side);
    memset(g, 0, sizeof *g);
    g->has_transform = true;
    const double t[6] = {138.0 - step / 2, step, 0, 36.0 + step / 2, 0, -step};
    memcpy(g->transform, t, sizeof t);
    g->has_geokeys = true;
    g->model_type = TRN_GEOTIFF_MODEL_GEOGRAPHIC;
    g->geographic_epsg = 4326;
    return true;
}

#endif
