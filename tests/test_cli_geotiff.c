/* Command-line tests for GeoTIFF DEMs: info, convert with resampling/crops, render. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "terrane/beamng.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "test.h"

static char tmp[512];

static const char *tp(const char *name)
{
    static char bufs[4][1024];
    static int k;
    char *b = bufs[k++ & 3];
    snprintf(b, 1024, "%s/%s", tmp, name);
    return b;
}

static double dem_height(uint32_t i, uint32_t j)
{
    return 200.0 + 3.0 * i + 1.5 * j + 0.01 * i * j;
}

/* A w x h UTM 33N DEM (30 m pixels, corner 500000, 4100000) written by the library; the
 * value of raster pixel (i, j) (row 0 north) is dem_height(i, j). nan_at >= 0 makes that
 * raster index NaN (NoData). */
static void make_dem(const char *path, uint32_t w, uint32_t h, long nan_at)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, w - 1, h - 1, 30.0 * (w - 1), 30.0 * (h - 1), NULL));
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++) {
            float v = (float)dem_height(i, j);
            if (nan_at >= 0 && (size_t)nan_at == (size_t)j * w + i) v = NAN;
            f.heights[(size_t)(h - 1 - j) * w + i] = v; /* field row 0 = south */
        }
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    double t[6] = {500000, 30, 0, 4100000, 0, -30};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, w, h);
    CHECK_OK(trn_geotiff_write(path, &f, &g, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    trn_field_dispose(&f);
}

static void test_info(void)
{
    make_dem(tp("dem.tif"), 40, 30, 5 * 40 + 7);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("dem.tif")), 0);
    CHECK_CONTAINS(out, "GeoTIFF, 40 x 30, 1 band");
    CHECK_CONTAINS(out, "float32");
    CHECK_CONTAINS(out, "EPSG:32633 (projected)");
    CHECK_CONTAINS(out, "30.0000 x 30.0000 m per pixel");
    CHECK_CONTAINS(out, "origin:    500000, 4100000");
    CHECK_CONTAINS(out, "(GDAL_NODATA tag): 1 samples");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --format json", &out, &err, tp("dem.tif")), 0);
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    CHECK(doc != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "crs"), "epsg")), 32633);
    CHECK_EQ_INT(json_integer_value(json_object_get(doc, "width")), 40);
    json_t *nd = json_object_get(doc, "nodata");
    CHECK_EQ_INT(json_integer_value(json_object_get(nd, "count")), 1);
    json_t *mpp = json_object_get(doc, "metres_per_pixel");
    CHECK(json_real_value(json_array_get(mpp, 0)) == 30.0);
    json_t *hs = json_object_get(doc, "heights");
    CHECK(fabs(json_real_value(json_object_get(hs, "min")) - 200.0) < 1e-3);
    CHECK(fabs(json_real_value(json_object_get(hs, "max")) - dem_height(39, 29)) < 1e-3);
    json_decref(doc);
    free(out), free(err);
}

static void test_convert_r32_exact(void)
{
    /* Without NoData or resampling, the R32 (row 0 = north) holds the DEM's floats. */
    make_dem(tp("plain.tif"), 33, 21, -1);
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' -q", &out, &err, tp("plain.tif"), tp("plain.r32")), 0);
    free(out), free(err);
    size_t size;
    float *v = (float *)trn_test_read_file(tp("plain.r32"), &size);
    CHECK_EQ_INT(size, 33 * 21 * 4);
    bool same = v != NULL;
    for (uint32_t j = 0; j < 21 && same; j++)
        for (uint32_t i = 0; i < 33; i++)
            if (v[j * 33 + i] != (float)dem_height(i, j)) same = false;
    CHECK(same);
    free(v);
}

static void test_convert_png_pow2plus1(void)
{
    make_dem(tp("dem.tif"), 40, 30, 5 * 40 + 7);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --pow2plus1 --resample bicubic", &out, &err,
                                   tp("dem.tif"), tp("dem.png")),
                 0);
    CHECK_CONTAINS(err, "filled 1 NoData samples");
    CHECK_CONTAINS(err, "resampled 40 x 30 -> 33 x 33 samples (bicubic)");
    free(out), free(err);
    trn_png_info pi;
    CHECK_OK(trn_png_read_info(tp("dem.png"), &pi, NULL));
    CHECK_EQ_INT(pi.width, 33);
    CHECK_EQ_INT(pi.height, 33);
    CHECK_EQ_INT(pi.bit_depth, 16);
    /* --size chooses the grid; --pow2 too. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --size 64x48 -q", &out, &err, tp("dem.tif"),
                                   tp("big.png")),
                 0);
    free(out), free(err);
    CHECK_OK(trn_png_read_info(tp("big.png"), &pi, NULL));
    CHECK(pi.width == 64 && pi.height == 48);
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' --pow2 -q", &out, &err, tp("dem.tif"), tp("p2.png")),
        0);
    free(out), free(err);
    CHECK_OK(trn_png_read_info(tp("p2.png"), &pi, NULL));
    CHECK(pi.width == 32 && pi.height == 32);
}

static void test_convert_to_ter(void)
{
    make_dem(tp("sq.tif"), 65, 65, -1);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --pow2 --max-height 1000", &out, &err,
                                   tp("sq.tif"), tp("level.ter")),
                 0);
    free(out), free(err);
    trn_ter ter;
    CHECK_OK(trn_ter_read(tp("level.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 64);
    /* The south-west sample (DEM row 64, column 0) -> terrain (0, 0), about 296 m of 1000. */
    double sw = ter.heights[0] * 1000.0 / 65536.0;
    CHECK(fabs(sw - dem_height(0, 64)) < 1.0);
    trn_ter_dispose(&ter);
    /* A non-square DEM cannot become a .ter. */
    make_dem(tp("rect.tif"), 40, 30, -1);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("rect.tif"), tp("rect.ter")),
                 1);
    CHECK_CONTAINS(err, "square");
    free(out), free(err);
}

static void test_crop_and_window_keep_georef(void)
{
    make_dem(tp("dem.tif"), 40, 30, -1);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crop 5,4,10,8 -q", &out, &err,
                                   tp("dem.tif"), tp("crop.tif")),
                 0);
    free(out), free(err);
    trn_geotiff g;
    CHECK_OK(trn_geotiff_read(tp("crop.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK(g.info.width == 10 && g.info.height == 8);
    CHECK(g.info.georef.transform[0] == 500000 + 5 * 30);
    CHECK(g.info.georef.transform[3] == 4100000 - 4 * 30);
    CHECK_EQ_INT(g.info.georef.epsg, 32633);
    CHECK(g.values[0] == (float)dem_height(5, 4));
    CHECK(g.values[7 * 10 + 9] == (float)dem_height(14, 11));
    trn_geotiff_dispose(&g);

    /* World window: pixels whose centres lie in x 500100..500400, y 4099500..4099800. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --window 500100,4099500,500400,4099800 -q",
                                   &out, &err, tp("dem.tif"), tp("win.tif")),
                 0);
    free(out), free(err);
    CHECK_OK(trn_geotiff_read(tp("win.tif"), NULL, &g, NULL, NULL, NULL));
    /* Centres 500115 .. 500385 -> columns 3..12; 4099785 .. 4099515 -> rows 7..16. */
    CHECK_EQ_INT(g.info.width, 10);
    CHECK_EQ_INT(g.info.height, 10);
    CHECK(g.info.georef.transform[0] == 500090 && g.info.georef.transform[3] == 4099800 - 10);
    CHECK(g.values[0] == (float)dem_height(3, 7));
    trn_geotiff_dispose(&g);

    /* Resampled output: the grid's corners stay on the input's corner pixel centres. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --size 79x59 -q", &out, &err, tp("dem.tif"),
                                   tp("half.tif")),
                 0);
    free(out), free(err);
    CHECK_OK(trn_geotiff_read(tp("half.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK(g.info.georef.transform[1] == 15 && g.info.georef.transform[5] == -15);
    CHECK(g.info.georef.transform[0] == 500000 + 15 - 7.5);
    CHECK(fabs(g.values[2 * 79 + 2] - dem_height(1, 1)) < 1e-3);
    trn_geotiff_dispose(&g);
}

static void test_errors_and_render(void)
{
    make_dem(tp("dem.tif"), 40, 30, -1);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crop 5,4,1,8", &out, &err, tp("dem.tif"),
                                   tp("x.tif")),
                 2);
    CHECK_CONTAINS(err, "at least 2 x 2");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --resample lanczos", &out, &err,
                                   tp("dem.tif"), tp("x.tif")),
                 2);
    CHECK_CONTAINS(err, "bilinear, bicubic or average");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crop 35,0,10,10", &out, &err, tp("dem.tif"),
                                   tp("x.tif")),
                 1);
    CHECK_CONTAINS(err, "leaves the 40 x 30 input");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --window 0,0,10,10", &out, &err,
                                   tp("dem.tif"), tp("x.tif")),
                 1);
    CHECK_CONTAINS(err, "fewer than 2 x 2");
    free(out), free(err);
    CHECK(!trn_test_exists(tp("x.tif")));
    /* --window needs georeferencing: a PNG has none. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' -q", &out, &err, tp("dem.tif"), tp("d.png")),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --window 0,0,10,10", &out, &err, tp("d.png"),
                                   tp("x.png")),
                 1);
    CHECK_CONTAINS(err, "needs a georeferenced input");
    free(out), free(err);
    /* A truncated GeoTIFF names the offset. */
    size_t size;
    uint8_t *d = trn_test_read_file(tp("dem.tif"), &size);
    CHECK(trn_test_write_file(tp("cut.tif"), d, 6));
    free(d);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("cut.tif")), 1);
    CHECK_CONTAINS(err, "offset 4");
    free(out), free(err);
    /* render loads DEMs like any heightmap. */
    CHECK_EQ_INT(
        trn_test_run_clif("render '%s' '%s' -q", &out, &err, tp("dem.tif"), tp("shade.png")), 0);
    free(out), free(err);
    CHECK(trn_test_exists(tp("shade.png")));
}

/* --max-samples: info describes a DEM over the limit from its tags alone; convert refuses it
 * with the numbers; the limit itself is accepted. */
static void test_max_samples(void)
{
    make_dem(tp("big.tif"), 40, 30, 5 * 40 + 7);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-samples 1199", &out, &err, tp("big.tif")), 0);
    CHECK_CONTAINS(out, "GeoTIFF, 40 x 30, 1 band");
    CHECK_CONTAINS(out, "EPSG:32633 (projected)");
    CHECK_CONTAINS(out, "values:    not read: 40 x 30 = 1200 samples, more than the limit of 1199 "
                        "(--max-samples N reads them)");
    CHECK(out && !strstr(out, "heights:"));
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("info '%s' --max-samples 1199 --format json", &out, &err, tp("big.tif")),
        0);
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    CHECK(doc != NULL);
    CHECK(json_is_false(json_object_get(doc, "values_read")));
    CHECK_EQ_INT(json_integer_value(json_object_get(doc, "samples")), 1200);
    CHECK(json_is_null(json_object_get(json_object_get(doc, "heights"), "min")));
    CHECK(json_is_null(json_object_get(json_object_get(doc, "nodata"), "count")));
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-samples 1200", &out, &err, tp("big.tif")), 0);
    CHECK_CONTAINS(out, "(GDAL_NODATA tag): 1 samples");
    CHECK_CONTAINS(out, "heights:   200.0000");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-samples 1199", &out, &err,
                                   tp("big.tif"), tp("big.r32")),
                 1);
    CHECK_CONTAINS(err, "big.tif: offset ");
    CHECK_CONTAINS(err, "40 x 30 = 1200 samples, more than the limit of 1199");
    CHECK(!trn_test_exists(tp("big.r32")));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-samples 1200 -q", &out, &err,
                                   tp("big.tif"), tp("big.r32")),
                 0);
    free(out), free(err);
    CHECK(trn_test_exists(tp("big.r32")));
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_info);
    RUN(test_convert_r32_exact);
    RUN(test_convert_png_pow2plus1);
    RUN(test_convert_to_ter);
    RUN(test_crop_and_window_keep_georef);
    RUN(test_errors_and_render);
    RUN(test_max_samples);
    return trn_test_finish();
}
