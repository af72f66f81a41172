/* Command-line tests for GeoTIFF DEMs: info, convert with resampling/crops, render. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <tiffio.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/terragen.h"
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
    CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(doc, "grid"), 0)), 40);
    json_t *nd = json_object_get(doc, "nodata");
    CHECK_EQ_INT(json_integer_value(json_object_get(nd, "count")), 1);
    json_t *mpp = json_object_get(doc, "metres_per_pixel");
    CHECK(json_real_value(json_array_get(mpp, 0)) == 30.0);
    json_t *hs = json_object_get(doc, "height_range");
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
    /* --pow2plus1 makes a square: the middle 30 x 30 of the 40 x 30 DEM is kept first (real
     * ground, square cells), then resampled. */
    CHECK_CONTAINS(err, "kept the middle 30 x 30 of 40 x 30 samples (--fit crop, the default)");
    CHECK_CONTAINS(err, "resampled 30 x 30 -> 33 x 33 samples (bicubic)");
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
    /* A non-square DEM becomes a square .ter of real ground by default: its middle 30 x 30. */
    make_dem(tp("rect.tif"), 40, 30, -1);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-height 1000", &out, &err,
                                   tp("rect.tif"), tp("crop.ter")),
                 0);
    CHECK_CONTAINS(err, "kept the middle 30 x 30 of 40 x 30 samples (--fit crop, the default)");
    free(out), free(err);
    CHECK_OK(trn_ter_read(tp("crop.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 30);
    /* .ter row 0 is the DEM's south row (raster row 29), column 0 its column 5. */
    CHECK(ter.heights[0] == (uint16_t)floor(dem_height(5, 29) * 65536.0 / 1000.0 + 0.5));
    trn_ter_dispose(&ter);
    /* --fit pad: 40 x 30 -> 40 x 40, the DEM in the middle (5 rows north, 5 south) and the added
     * ground falling smoothly to --pad-height: the outer rows at that height, no row a repeat
     * of the edge. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-height 1000 --fit pad --pad-height 50",
                                   &out, &err, tp("rect.tif"), tp("rect.ter")),
                 0);
    CHECK_CONTAINS(err, "padded 40 x 30 -> 40 x 40 samples (--fit pad)");
    CHECK_CONTAINS(err, "falls smoothly from its edges to 50 m (--pad-height)");
    CHECK_CONTAINS(err, "squareSize 30 m and position z 0 m");
    free(out), free(err);
    CHECK_OK(trn_ter_read(tp("rect.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 40);
    const uint16_t at_base = (uint16_t)floor(50.0 * 65536.0 / 1000.0 + 0.5);
    size_t repeats = 0, border = 0, data = 0, between = 0;
    for (uint32_t i = 0; i < 40; i++) {
        for (uint32_t r = 0; r < 4; r++) {
            repeats += ter.heights[r * 40 + i] == ter.heights[5 * 40 + i];
            repeats += ter.heights[(36 + r) * 40 + i] == ter.heights[34 * 40 + i];
        }
        border += ter.heights[i] == at_base && ter.heights[39 * 40 + i] == at_base;
        data +=
            ter.heights[5 * 40 + i] == (uint16_t)floor(dem_height(i, 29) * 65536.0 / 1000.0 + 0.5);
        /* Row 3, two samples out: between the base and the edge's own range. */
        const uint16_t a = ter.heights[3 * 40 + i], e = ter.heights[5 * 40 + i];
        between += (a >= at_base && a <= e) || (a <= at_base && a >= e);
    }
    CHECK(repeats < 8);
    CHECK_EQ_INT(border, 40);
    CHECK_EQ_INT(data, 40);
    CHECK(between >= 36);
    trn_ter_dispose(&ter);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --fit pad --pad-height high", &out, &err,
                                   tp("rect.tif"), tp("bad.ter")),
                 2);
    CHECK_CONTAINS(err, "--pad-height takes a height in metres");
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
    CHECK(json_is_null(json_object_get(json_object_get(doc, "height_range"), "min")));
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

/* A DEM of w x h pixels of the given metres (cell size) whose heights run from lo to hi in
 * raster order (row 0 north), every pixel a different height; no CRS when spacing is 0. */
static void make_ramp(const char *path, uint32_t w, uint32_t h, double spacing, double lo,
                      double hi)
{
    trn_field f;
    const double sp = spacing > 0 ? spacing : 1.0;
    CHECK_OK(trn_field_init(&f, w - 1, h - 1, sp * (w - 1), sp * (h - 1), NULL));
    const double n = (double)w * h - 1.0;
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++)
            f.heights[(size_t)(h - 1 - j) * w + i] = (float)(lo + (hi - lo) * (j * w + i) / n);
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    double t[6] = {500000, sp, 0, 4100000, 0, -sp};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, w, h);
    CHECK_OK(trn_geotiff_write(path, &f, spacing > 0 ? &g : NULL, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    trn_field_dispose(&f);
}

/* Distinct values of n 16-bit samples. */
static uint32_t distinct_u16(const uint16_t *v, size_t n)
{
    static uint8_t seen[65536];
    memset(seen, 0, sizeof seen);
    uint32_t count = 0;
    for (size_t k = 0; k < n; k++) {
        count += !seen[v[k]];
        seen[v[k]] = 1;
    }
    return count;
}

/* A 1000 x 800 DEM of 30 m pixels to a power-of-two square keeps its aspect (the middle
 * square of real ground by default, a padded square on request) and its metres (square cells,
 * the squareSize printed); stretching is only on request and says the cell sizes. */
static void test_fit_to_square(void)
{
    make_ramp(tp("wide.tif"), 1000, 800, 30.0, 100.0, 900.0);
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' --pow2", &out, &err, tp("wide.tif"), tp("mid.ter")),
        0);
    CHECK_CONTAINS(err, "kept the middle 800 x 800 of 1000 x 800 samples (--fit crop, the default)");
    CHECK_CONTAINS(err, "--fit pad keeps it all");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --pow2 --fit pad", &out, &err,
                                   tp("wide.tif"), tp("wide.ter")),
                 0);
    CHECK_CONTAINS(err, "padded 1000 x 800 -> 1000 x 1000 samples (--fit pad)");
    CHECK_CONTAINS(err, "resampled 1000 x 1000 -> 1024 x 1024 samples");
    /* 999 cells of 30 m over 1023 cells. */
    CHECK_CONTAINS(err, "squareSize 29.2961877 m");
    CHECK(!strstr(err ? err : "", "not square"));
    free(out), free(err);
    trn_ter ter;
    CHECK_OK(trn_ter_read(tp("wide.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 1024);
    /* The padding (100 field rows a side: .ter rows past 920.6 and before 102.4) falls from the
     * DEM's edge rows to the lowest height, 100 m (stored 0): the outer rows hold it, and no
     * padding row repeats the edge row. */
    size_t at_base = 0, repeated = 0;
    for (uint32_t i = 0; i < 1024; i++) {
        at_base += ter.heights[1023 * 1024 + i] == 0 && ter.heights[i] == 0;
        repeated += ter.heights[960 * 1024 + i] == ter.heights[921 * 1024 + i];
        repeated += ter.heights[60 * 1024 + i] == ter.heights[102 * 1024 + i];
    }
    CHECK_EQ_INT(at_base, 1024);
    CHECK(repeated < 20);
    trn_ter_dispose(&ter);

    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --pow2 --fit crop", &out, &err,
                                   tp("wide.tif"), tp("crop.ter")),
                 0);
    CHECK_CONTAINS(err, "kept the middle 800 x 800 of 1000 x 800 samples (--fit crop)");
    CHECK_CONTAINS(err, "resampled 800 x 800 -> 1024 x 1024 samples");
    CHECK_CONTAINS(err, "squareSize 23.431085 m"); /* 799 * 30 / 1023 */
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --pow2 --fit stretch", &out, &err,
                                   tp("wide.tif"), tp("stretch.ter")),
                 0);
    CHECK_CONTAINS(err, "resampled 1000 x 800 -> 1024 x 1024 samples");
    CHECK_CONTAINS(err, "the cells are now 29.2962 x 23.4311 m (not square)");
    CHECK_CONTAINS(err, "a TerrainBlock has one squareSize");
    free(out), free(err);

    /* A BeamNG level: the padded square validates, its TerrainBlock has the true squareSize;
     * stretched cells are refused with what works. */
    char level[700];
    snprintf(level, sizeof level, "%s/game/levels/wide", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s' --pow2 --fit stretch", &out, &err,
                                   tp("wide.tif"), level),
                 1);
    CHECK_CONTAINS(err, "e.g. --pow2 --fit crop");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s' --pow2 --fit pad", &out, &err,
                                   tp("wide.tif"), level),
                 0);
    CHECK_CONTAINS(err, "0 error(s)");
    free(out), free(err);
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 1);
    if (count == 1) {
        CHECK(fabs(blocks[0].square_size - 999.0 * 30.0 / 1023.0) < 1e-9);
        CHECK(blocks[0].position[2] == 100.0); /* the lowest height, stored 0 */
    }
    trn_terrain_blocks_free(blocks, count);
}

/* One 16-bit rule: a float DEM of 0.016 .. 0.041 m (every pixel different) is stretched over
 * the whole 0..65535 range in every 16-bit output, so each of its 16,384 pixels gets a level
 * of its own (the old .ter rule, maxHeight 1 m, kept 1,639 of them). */
static void test_one_scale_rule(void)
{
    make_ramp(tp("thin.tif"), 128, 128, 2.0, 0.016, 0.041);
    char *out, *err;
    static const char *const outs[] = {"thin.ter", "thin.png", "thin.r16"};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err,
                                       tp("thin.tif"), tp(outs[k])),
                     0);
        json_t *doc = json_loads(out ? out : "", 0, NULL);
        json_t *hs = json_object_get(doc, "heights");
        CHECK_EQ_INT(json_integer_value(json_object_get(hs, "levels")), 16384);
        CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_min")), 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_max")), 65535);
        CHECK(strcmp(json_string_value(json_object_get(hs, "rule")), "lowest to highest") == 0);
        CHECK(fabs(json_real_value(json_object_get(hs, "base")) - 0.016) < 1e-7);
        json_decref(doc);
        CHECK(!strstr(err ? err : "", "expect terraces"));
        free(out), free(err);
    }
    /* The files hold those levels. */
    trn_ter ter;
    CHECK_OK(trn_ter_read(tp("thin.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(distinct_u16(ter.heights, 128 * 128), 16384);
    trn_ter_dispose(&ter);
    trn_image img;
    CHECK_OK(trn_png_read(tp("thin.png"), NULL, &img, NULL));
    CHECK_EQ_INT(distinct_u16(img.data, 128 * 128), 16384);
    trn_image_dispose(&img);
    CHECK_OK(trn_raw_read(tp("thin.r16"), TRN_RAW_U16_LE, 128, 128, &img, NULL));
    CHECK_EQ_INT(distinct_u16(img.data, 128 * 128), 16384);
    trn_image_dispose(&img);
    /* The .ter says how to get the metres back: maxHeight and the TerrainBlock's z. */
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("thin.tif"), tp("thin2.ter")), 0);
    CHECK_CONTAINS(err, "maxHeight 0.025000381");
    CHECK_CONTAINS(err, "position z 0.0160000008");
    free(out), free(err);
    /* A BeamNG level: the same levels, stored 0 at the TerrainBlock's z. */
    char level[700], ter_path[800];
    snprintf(level, sizeof level, "%s/game/levels/thin", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s'", &out, &err, tp("thin.tif"), level),
                 0);
    free(out), free(err);
    snprintf(ter_path, sizeof ter_path, "%s/theTerrain.ter", level);
    CHECK_OK(trn_ter_read(ter_path, NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(distinct_u16(ter.heights, 128 * 128), 16384);
    trn_ter_dispose(&ter);

    /* --max-height 1: 0 m at 0, 1/65536 m a step: 1,639 levels, warned about. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --max-height 1 --format json", &out, &err,
                                   tp("thin.tif"), tp("mh.ter")),
                 0);
    CHECK_CONTAINS(err, "uses 1639 distinct 16-bit levels (fewer than 4096): expect terraces");
    /* The heights have 16384 values: a wider scale would keep them, and it says so. */
    CHECK_CONTAINS(err, "--scale or --height-range can spread the heights over more");
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "heights"), "levels")),
                 1639);
    json_decref(doc);
    free(out), free(err);
    CHECK_OK(trn_ter_read(tp("mh.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(distinct_u16(ter.heights, 128 * 128), 1639);
    trn_ter_dispose(&ter);
    /* --scale like gdal_translate: 0 .. 0.05 m over 0..65535 (32,767 of whose levels the data
     * spans), and 0.016 .. 0.041 over 1000 .. 2000 (1,001 levels). */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --scale 0 0.05 --format json", &out, &err,
                                   tp("thin.tif"), tp("s.png")),
                 0);
    doc = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "heights"), "levels")),
                 16384);
    CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(doc, "heights"), "stored_max")),
                 53739);
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --scale 0.016 0.041 1000 2000 --format json",
                                   &out, &err, tp("thin.tif"), tp("s2.png")),
                 0);
    doc = json_loads(out ? out : "", 0, NULL);
    json_t *hs = json_object_get(doc, "heights");
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "levels")), 1001);
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_min")), 1000);
    CHECK_EQ_INT(json_integer_value(json_object_get(hs, "stored_max")), 2000);
    json_decref(doc);
    free(out), free(err);
    CHECK_OK(trn_png_read(tp("s2.png"), NULL, &img, NULL));
    CHECK_EQ_INT(distinct_u16(img.data, 128 * 128), 1001);
    trn_image_dispose(&img);
    /* --height-range LO,HI: LO at 0, HI at 65535; heights outside are clipped, and said. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --height-range 0.02,0.03", &out, &err,
                                   tp("thin.tif"), tp("hr.png")),
                 0);
    CHECK_CONTAINS(err, "2622 samples below 0.02 m stored as 0 and 7209 above 0.03 m");
    free(out), free(err);
    /* Formats of metres take no 16-bit scale. */
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' --scale 0 1", &out, &err, tp("thin.tif"), tp("x.r32")),
        2);
    CHECK_CONTAINS(err, "stores metres as they are");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' --scale 1 1", &out, &err, tp("thin.tif"), tp("x.png")),
        2);
    CHECK_CONTAINS(err, "must be finite and increasing");
    free(out), free(err);

    /* Terragen keeps its own scale (a whole HeightScale over SCAL.z = the 2 m spacing: 2 / 65536
     * m a step at best): the levels it kept are counted and, being few, warned about. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --of terragen", &out, &err, tp("thin.tif"),
                                   tp("thin.tg")),
                 0);
    trn_terragen tg;
    CHECK_OK(trn_terragen_read(tp("thin.tg"), NULL, &tg, NULL));
    CHECK_EQ_INT(tg.xpts, 128);
    const uint32_t tg_levels = distinct_u16((const uint16_t *)tg.elevations, 128 * 128);
    CHECK(tg_levels > 1 && tg_levels < 4096);
    char want[160];
    snprintf(want, sizeof want, "thin.tg uses %u distinct 16-bit levels (fewer than 4096)",
             tg_levels);
    CHECK_CONTAINS(err, want);
    trn_terragen_dispose(&tg);
    free(out), free(err);
    /* A PNG's note says what a BeamNG import needs, the squareSize too. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("thin.tif"), tp("n.png")),
                 0);
    CHECK_CONTAINS(err,
                   "BeamNG import: maxHeight 0.0250003818, squareSize 2 and the TerrainBlock's "
                   "position z 0.0160000008");
    free(out), free(err);

    /* info counts the levels a conversion would use, and warns below 4096. */
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("thin.tif")), 0);
    CHECK_CONTAINS(out, "levels:    16384 distinct 16-bit levels");
    CHECK(!strstr(out ? out : "", "terraces"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --max-height 1", &out, &err, tp("thin.tif")), 0);
    CHECK_CONTAINS(out, "levels:    1639 distinct 16-bit levels");
    CHECK_CONTAINS(out, "fewer than 4096 levels: 16-bit outputs will show terraces");
    free(out), free(err);
}

/* The warning's edge: 4096 levels over 4096 samples pass, 4095 are warned about. */
static void test_level_warning_edge(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 63, 63, 63.0, 63.0, NULL));
    for (uint32_t k = 0; k < 4096; k++)
        f.heights[k] = (float)k;
    CHECK_OK(trn_geotiff_write(tp("l4096.tif"), &f, NULL, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    f.heights[4095] = 4094.0f;
    CHECK_OK(trn_geotiff_write(tp("l4095.tif"), &f, NULL, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    trn_field_dispose(&f);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --format json", &out, &err, tp("l4096.tif")), 0);
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(
        json_integer_value(json_object_get(json_object_get(doc, "levels_16bit"), "levels")), 4096);
    CHECK(json_is_false(json_object_get(doc, "few_levels")));
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("l4095.tif")), 0);
    CHECK_CONTAINS(out, "levels:    4095 distinct 16-bit levels");
    CHECK_CONTAINS(out, "fewer than 4096 levels");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("l4096.tif"), tp("l4096.png")), 0);
    CHECK(!strstr(err ? err : "", "expect terraces"));
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("l4095.tif"), tp("l4095.png")), 0);
    CHECK_CONTAINS(err, "uses 4095 distinct 16-bit levels (fewer than 4096)");
    /* Whole metres: the terraces are in the source, and no --scale helps; it says so. */
    CHECK_CONTAINS(err, "the heights themselves take only 4095 values (steps of 1 m)");
    CHECK(!strstr(err ? err : "", "--scale or --height-range"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("l4095.tif")), 0);
    CHECK_CONTAINS(out, "the heights themselves take only 4095 values (steps of 1 m)");
    free(out), free(err);
}

/* A Byte GeoTIFF (8-bit integer elevations, as some DEM exports are): loading it warns of its
 * 256 values, as an 8-bit PNG's import does; a 16-bit one does not. */
static void test_byte_dem_warning(void)
{
    for (int bits = 8; bits <= 16; bits += 8) {
        const char *path = tp(bits == 8 ? "byte.tif" : "u16.tif");
        TIFF *tif = TIFFOpen(path, "w");
        CHECK(tif != NULL);
        if (!tif) return;
        TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 64);
        TIFFSetField(tif, TIFFTAG_IMAGELENGTH, 64);
        TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
        TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, bits);
        TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_UINT);
        TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
        TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 64);
        uint8_t row[128];
        for (uint32_t j = 0; j < 64; j++) {
            for (uint32_t i = 0; i < 64; i++) {
                const uint32_t v = (i * 3 + j) % 200;
                if (bits == 8)
                    row[i] = (uint8_t)v;
                else {
                    const uint16_t w = (uint16_t)(v * 300u);
                    memcpy(row + 2 * i, &w, 2);
                }
            }
            CHECK(TIFFWriteScanline(tif, row, j, 0) >= 0);
        }
        TIFFClose(tif);
        char *out, *err;
        CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, path, tp("dem8.png")), 0);
        if (bits == 8)
            CHECK_CONTAINS(err, "stores 8-bit elevations: 256 height values at most");
        else
            CHECK(!strstr(err ? err : "", "8-bit elevations"));
        free(out), free(err);
        CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, path), 0);
        if (bits == 8)
            CHECK_CONTAINS(err, "stores 8-bit elevations");
        else
            CHECK(!strstr(err ? err : "", "8-bit elevations"));
        free(out), free(err);
    }
}

/* A terrain without a CRS gives a GeoTIFF without one: no GeoKeyDirectory (GDAL would read a
 * lone raster-type key as an "unnamed" local CRS); a spacing the input states becomes the
 * pixel scale, one it does not state is not invented. */
static void test_no_crs_out(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 15, 15, 15.0, 15.0, NULL));
    for (uint32_t k = 0; k < 256; k++)
        f.heights[k] = (float)k;
    trn_ter ter;
    CHECK_OK(trn_ter_from_field(&f, 2048.0, NULL, "default", &ter, NULL));
    CHECK_OK(trn_ter_write(tp("plain.ter"), &ter, 9, NULL, NULL, NULL));
    trn_ter_dispose(&ter);
    trn_field_dispose(&f);
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("plain.ter"), tp("plain.tif")), 0);
    CHECK_CONTAINS(err, "no CRS and no pixel scale");
    free(out), free(err);
    trn_geotiff_info gi;
    CHECK_OK(trn_geotiff_read_info(tp("plain.tif"), NULL, &gi, NULL));
    CHECK(!gi.has_georef && !gi.georef.has_geokeys && !gi.georef.has_transform);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("plain.tif")), 0);
    CHECK_CONTAINS(out, "crs:       none (no GeoKeyDirectory)");
    CHECK_CONTAINS(out, "format:    TIFF,");
    free(out), free(err);
    /* --square-size states one: the pixel scale, still no keys. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --square-size 2", &out, &err, tp("plain.ter"),
                                   tp("sq.tif")),
                 0);
    CHECK_CONTAINS(err, "only the sample spacing, 2 x 2 m, as the pixel scale");
    free(out), free(err);
    CHECK_OK(trn_geotiff_read_info(tp("sq.tif"), NULL, &gi, NULL));
    CHECK(!gi.georef.has_geokeys && gi.georef.has_transform && gi.georef.has_pixel_scale);
    CHECK(gi.georef.transform[1] == 2.0 && gi.georef.transform[5] == -2.0);
    CHECK_EQ_INT(gi.georef.epsg, 0);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("sq.tif")), 0);
    CHECK_CONTAINS(out, "crs:       none (no GeoKeyDirectory)");
    CHECK_CONTAINS(out, "2.0000 x 2.0000 m per pixel");
    CHECK(!strstr(out ? out : "", "unknown units"));
    free(out), free(err);
    /* A DEM with a CRS keeps it. */
    make_dem(tp("crs.tif"), 8, 8, -1);
    CHECK_EQ_INT(
        trn_test_run_clif("convert '%s' '%s' -q", &out, &err, tp("crs.tif"), tp("crs2.tif")), 0);
    free(out), free(err);
    CHECK_OK(trn_geotiff_read_info(tp("crs2.tif"), NULL, &gi, NULL));
    CHECK_EQ_INT(gi.georef.epsg, 32633);
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
    RUN(test_fit_to_square);
    RUN(test_one_scale_rule);
    RUN(test_level_warning_edge);
    RUN(test_byte_dem_warning);
    RUN(test_no_crs_out);
    return trn_test_finish();
}
