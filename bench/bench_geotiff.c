/* GeoTIFF DEM benchmark: read a float32 DEM, fill NoData, resample, and convert to a 16-bit PNG. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/resample.h"

/* usage: bench_geotiff OUT_DIR [SIZE] [RUNS]
 * Writes OUT_DIR/bench_dem.tif (SIZE x SIZE float32, uncompressed, UTM 33N, 30 m pixels) for
 * bench/geotiff_vs_gdal.sh, then times the library path of `terrane convert in.tif out.png
 * --compression 1` (read, rows to a field, quantise, PNG level 1), best of RUNS. */
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_geotiff OUT_DIR [SIZE] [RUNS]\n");
        return 2;
    }
    const char *dir = argv[1];
    uint32_t size = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 8192;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (size < 16 || runs < 1) return 2;
    char tif[1024], png[1024];
    snprintf(tif, sizeof tif, "%s/bench_dem.tif", dir);
    snprintf(png, sizeof png, "%s/bench_terrane.png", dir);

    trn_field f;
    trn_error e;
    if (fractal_dem(&f, size, -300.0)) return 1;
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    double t[6] = {500000, 30, 0, 4100000, 0, -30};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, size, size);
    double t0 = now_s();
    if (trn_geotiff_write(tif, &f, &g, TRN_GEOTIFF_COMPRESS_NONE, &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    printf("wrote %s (%u x %u float32, uncompressed) in %.3f s\n", tif, size, size, now_s() - t0);
    trn_field_dispose(&f);

    double best_read = 1e30, best_total = 1e30;
    for (int r = 0; r < runs; r++) {
        double a = now_s();
        trn_geotiff dem;
        if (trn_geotiff_read(tif, NULL, &dem, NULL, NULL, &e)) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        if (trn_geotiff_to_field(&dem, &f, &e)) return 1;
        trn_geotiff_dispose(&dem);
        double b = now_s();
        trn_image img;
        if (trn_image_from_field(&f, 0, 0, &img, &e)) return 1;
        trn_field_dispose(&f);
        trn_png_options po;
        trn_png_options_default(&po);
        po.compression_level = 1;
        if (trn_png_write(png, &img, &po, NULL, NULL, &e)) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        trn_image_dispose(&img);
        double c = now_s();
        if (b - a < best_read) best_read = b - a;
        if (c - a < best_total) best_total = c - a;
    }
    printf("read + field:             best of %d %.3f s (%.0f MB/s of float32)\n", runs, best_read,
           (double)size * size * 4 / 1e6 / best_read);
    printf("read + 16-bit PNG level 1: best of %d %.3f s\n", runs, best_total);

    /* NoData fill: 2% of the samples in 40 square holes of 1/50 of the side. */
    trn_geotiff dem;
    if (trn_geotiff_read(tif, NULL, &dem, NULL, NULL, &e)) return 1;
    uint32_t side = size / 50;
    uint64_t holes = 0;
    for (uint32_t k = 0; k < 40; k++) {
        uint32_t x0 = hash3(k, 1, 99) % (size - side), y0 = hash3(k, 2, 99) % (size - side);
        for (uint32_t j = y0; j < y0 + side; j++)
            for (uint32_t i = x0; i < x0 + side; i++) {
                float *v = &dem.values[(size_t)j * size + i];
                if (!isnan(*v)) holes++;
                *v = NAN;
            }
    }
    dem.nodata_count = holes;
    uint64_t filled = 0;
    double a = now_s();
    if (trn_geotiff_fill_nodata(&dem, &filled, NULL, NULL, &e)) return 1;
    printf("fill %llu NoData samples (%.1f%%): %.3f s\n", (unsigned long long)filled,
           100.0 * (double)filled / ((double)size * size), now_s() - a);
    if (trn_geotiff_to_field(&dem, &f, &e)) return 1;
    trn_geotiff_dispose(&dem);
    uint32_t target = trn_resample_nearest_pow2plus1(size) / 2 + 1;
    for (int filter = 0; filter < 2; filter++) {
        trn_field out;
        a = now_s();
        if (trn_field_resample(&f, NULL, target - 1, target - 1, (trn_resample_filter)filter, &out,
                               NULL, NULL, &e))
            return 1;
        printf("resample %u^2 -> %u^2 %s: %.3f s\n", size, target,
               trn_resample_filter_name((trn_resample_filter)filter), now_s() - a);
        trn_field_dispose(&out);
    }
    trn_field_dispose(&f);
    return 0;
}
