/* Reprojection of a 1-arc-second geographic DEM (an SRTM tile, 3601^2) to UTM with PROJ. */
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "bench_dem.h"
#include "bench_util.h"
#include "terrane/geotiff.h"

/* usage: bench_reproject [SIDE] [RUNS] -- SIDE samples a side (default 3601), RUNS per thread
 * count (default 5); prints the median and best wall time for 1 thread and for all. */
int main(int argc, char **argv)
{
    const uint32_t side = argc > 1 ? (uint32_t)atoi(argv[1]) : 3601u;
    const int runs = argc > 2 ? atoi(argv[2]) : 5;
    if (side < 2 || runs < 1 || runs > 64) return 2;
    trn_field f;
    trn_geotiff_georef g;
    trn_error e;
    if (!bench_geographic_dem(side, &f, &g)) return 1;
    trn_geotiff_georef_derive(&g, side, side);
    f.size_x = g.metres_per_pixel_x * (side - 1);
    f.size_z = g.metres_per_pixel_y * (side - 1);

#ifdef _OPENMP
    const int all = omp_get_max_threads();
#else
    const int all = 1;
#endif
    printf("bench_reproject: %u x %u EPSG:4326 -> UTM 54N, bilinear, load %.2f\n", side, side,
           load_average());
    for (int pass = 0; pass < 2; pass++) {
        const int threads = pass ? all : 1;
        if (pass && all == 1) break;
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        double times[64];
        trn_geotiff_reproject_result res;
        for (int r = 0; r < runs; r++) {
            trn_field out;
            trn_geotiff_georef dg;
            trn_geotiff_reproject_options o;
            memset(&o, 0, sizeof o);
            const double t0 = now_s();
            if (trn_geotiff_reproject(&f, &g, &o, &out, &dg, &res, NULL, NULL, &e)) {
                fprintf(stderr, "%s\n", e.message);
                return 1;
            }
            times[r] = now_s() - t0;
            trn_field_dispose(&out);
        }
        qsort(times, (size_t)runs, sizeof times[0], cmp_double);
        printf("  %d thread%s: %u x %u samples of %.3f m (%.1f%% of the tile kept), median %.3f s, "
               "best %.3f s (%d runs), %.2f M samples/s at the median\n",
               threads, threads == 1 ? "" : "s", res.width, res.height, res.cell_metres,
               100.0 * res.width * (double)res.height / res.footprint_samples,
               times[runs / 2], times[0], runs,
               (double)res.full_width * res.full_height / times[runs / 2] * 1e-6);
    }
    trn_field_dispose(&f);
    return 0;
}
