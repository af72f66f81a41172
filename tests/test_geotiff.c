/* Tests for the GeoTIFF reader and writer on synthetic files written here with libtiff. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <tiffio.h>

#include "terrane/geotiff.h"
#include "terrane/resample.h"
#include "test.h"

static char tmp[512];

/* ---- writing test files with libtiff ------------------------------------------------- */

static const TIFFFieldInfo test_geo_fields[] = {
    {33550, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelPixelScaleTag"},
    {33922, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelTiepointTag"},
    {34264, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelTransformationTag"},
    {34735, -1, -1, TIFF_SHORT, FIELD_CUSTOM, 1, 1, (char *)"GeoKeyDirectoryTag"},
    {34736, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"GeoDoubleParamsTag"},
    {34737, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"GeoASCIIParamsTag"},
    {42113, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"GDALNoDataValue"},
};

typedef struct tspec {
    uint32_t w, h;
    uint16_t bps, format; /* SampleFormat 1/2/3 */
    uint16_t bands;
    bool separate;
    bool tiled;
    uint16_t compression, predictor;
    bool big_endian, bigtiff;
    /* georeferencing */
    const double *scale, *tiepoint, *matrix;
    const uint16_t *keys;
    int key_count;
    const char *ascii;
    const char *nodata;
} tspec;

/* The value of band 0 at (i, j); other bands are offset so a wrong band shows. */
static double test_value(const tspec *s, uint32_t i, uint32_t j)
{
    double v = (double)((i * 7 + j * 3) % 100);
    if (s->format == SAMPLEFORMAT_INT) v -= 40;
    if (s->format == SAMPLEFORMAT_IEEEFP) v = v * 1.5 - 20.25;
    return v;
}

static void store(uint8_t *p, const tspec *s, double v)
{
    switch (s->bps) {
    case 8:
        if (s->format == SAMPLEFORMAT_INT)
            *(int8_t *)p = (int8_t)v;
        else
            *p = (uint8_t)v;
        break;
    case 16:
        if (s->format == SAMPLEFORMAT_INT) {
            int16_t x = (int16_t)v;
            memcpy(p, &x, 2);
        } else {
            uint16_t x = (uint16_t)v;
            memcpy(p, &x, 2);
        }
        break;
    case 32:
        if (s->format == SAMPLEFORMAT_IEEEFP) {
            float x = (float)v;
            memcpy(p, &x, 4);
        } else if (s->format == SAMPLEFORMAT_INT) {
            int32_t x = (int32_t)v;
            memcpy(p, &x, 4);
        } else {
            uint32_t x = (uint32_t)v;
            memcpy(p, &x, 4);
        }
        break;
    case 64: {
        memcpy(p, &v, 8);
        break;
    }
    default:
        break;
    }
}

/* Write a TIFF by spec; values come from test_value unless override (w*h doubles, band 0). */
static bool write_tiff(const char *path, const tspec *s, const double *override)
{
    char mode[8] = "w";
    if (s->big_endian) strcat(mode, "b");
    if (s->bigtiff) strcat(mode, "8");
    TIFF *tif = TIFFOpen(path, mode);
    if (!tif) return false;
    TIFFMergeFieldInfo(tif, test_geo_fields, 7);
    uint16_t bands = s->bands ? s->bands : 1;
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, s->w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, s->h);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, bands);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, s->bps);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, s->format);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, bands >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG,
                 s->separate ? PLANARCONFIG_SEPARATE : PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_COMPRESSION, s->compression ? s->compression : COMPRESSION_NONE);
    if (s->predictor) TIFFSetField(tif, TIFFTAG_PREDICTOR, s->predictor);
    if (s->scale) TIFFSetField(tif, 33550, 3, s->scale);
    if (s->tiepoint) TIFFSetField(tif, 33922, 6, s->tiepoint);
    if (s->matrix) TIFFSetField(tif, 34264, 16, s->matrix);
    if (s->keys) TIFFSetField(tif, 34735, s->key_count, s->keys);
    if (s->ascii) TIFFSetField(tif, 34737, s->ascii);
    if (s->nodata) TIFFSetField(tif, 42113, s->nodata);
    size_t sb = s->bps / 8u;
    bool ok = true;
    if (s->tiled) {
        TIFFSetField(tif, TIFFTAG_TILEWIDTH, 16);
        TIFFSetField(tif, TIFFTAG_TILELENGTH, 16);
    } else {
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 5);
    }
    uint16_t planes = s->separate ? bands : 1;
    uint16_t per_px = s->separate ? 1 : bands;
    for (uint16_t plane = 0; plane < planes && ok; plane++) {
        if (s->tiled) {
            uint8_t *buf = calloc(16 * 16 * per_px, sb);
            for (uint32_t ty = 0; ty < s->h; ty += 16)
                for (uint32_t tx = 0; tx < s->w; tx += 16) {
                    memset(buf, 0, 16 * 16 * per_px * sb);
                    for (uint32_t r = 0; r < 16 && ty + r < s->h; r++)
                        for (uint32_t c = 0; c < 16 && tx + c < s->w; c++)
                            for (uint16_t b = 0; b < per_px; b++) {
                                uint32_t i = tx + c, j = ty + r;
                                double v =
                                    override ? override[(size_t)j * s->w + i] : test_value(s, i, j);
                                v += plane + b;
                                store(buf + ((r * 16 + c) * per_px + b) * sb, s, v);
                            }
                    if (TIFFWriteTile(tif, buf, tx, ty, 0, plane) < 0) ok = false;
                }
            free(buf);
        } else {
            uint8_t *row = calloc((size_t)s->w * per_px, sb);
            for (uint32_t j = 0; j < s->h; j++) {
                for (uint32_t i = 0; i < s->w; i++)
                    for (uint16_t b = 0; b < per_px; b++) {
                        double v = override ? override[(size_t)j * s->w + i] : test_value(s, i, j);
                        v += plane + b;
                        store(row + ((size_t)i * per_px + b) * sb, s, v);
                    }
                if (TIFFWriteScanline(tif, row, j, plane) < 0) ok = false;
            }
            free(row);
        }
    }
    TIFFClose(tif);
    return ok;
}

static const char *tpath(const char *name)
{
    static char buf[1024];
    snprintf(buf, sizeof buf, "%s/%s", tmp, name);
    return buf;
}

static bool values_match(const trn_geotiff *g, const tspec *s)
{
    for (uint32_t j = 0; j < s->h; j++)
        for (uint32_t i = 0; i < s->w; i++) {
            float want = (float)test_value(s, i, j);
            if (g->values[(size_t)j * s->w + i] != want) {
                fprintf(stderr, "  (%u, %u): %g, expected %g\n", i, j,
                        (double)g->values[(size_t)j * s->w + i], (double)want);
                return false;
            }
        }
    return true;
}

/* ---- sample types, layouts, compressions --------------------------------------------- */

static void test_sample_types(void)
{
    static const struct {
        uint16_t bps, format;
        trn_geotiff_sample sample;
    } types[] = {
        {8, 1, TRN_GEOTIFF_SAMPLE_U8},   {8, 2, TRN_GEOTIFF_SAMPLE_I8},
        {16, 1, TRN_GEOTIFF_SAMPLE_U16}, {16, 2, TRN_GEOTIFF_SAMPLE_I16},
        {32, 1, TRN_GEOTIFF_SAMPLE_U32}, {32, 2, TRN_GEOTIFF_SAMPLE_I32},
        {32, 3, TRN_GEOTIFF_SAMPLE_F32}, {64, 3, TRN_GEOTIFF_SAMPLE_F64},
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        for (int tiled = 0; tiled < 2; tiled++) {
            tspec s = {37,   29,    types[k].bps, types[k].format,
                       1,    false, tiled != 0,   0,
                       0,    false, false,        NULL,
                       NULL, NULL,  NULL,         0,
                       NULL, NULL};
            const char *p = tpath("types.tif");
            CHECK(write_tiff(p, &s, NULL));
            trn_geotiff g;
            trn_error e;
            CHECK_OK(trn_geotiff_read(p, NULL, &g, NULL, NULL, &e));
            CHECK_EQ_INT(g.info.width, 37);
            CHECK_EQ_INT(g.info.height, 29);
            CHECK_EQ_INT(g.info.sample, types[k].sample);
            CHECK_EQ_INT(g.info.tiled, tiled);
            CHECK(values_match(&g, &s));
            CHECK_EQ_INT(g.nodata_count, 0);
            CHECK_EQ_INT(g.nodata_source, TRN_GEOTIFF_NODATA_NONE);
            CHECK(!g.info.has_georef);
            trn_geotiff_dispose(&g);
        }
    }
    CHECK(strcmp(trn_geotiff_sample_name(TRN_GEOTIFF_SAMPLE_I16), "int16") == 0);
}

static void test_compressions_and_byte_orders(void)
{
    static const struct {
        uint16_t compression, predictor;
        const char *name;
    } comps[] = {{COMPRESSION_NONE, 0, "None"},
                 {COMPRESSION_ADOBE_DEFLATE, 0, "AdobeDeflate"},
                 {COMPRESSION_ADOBE_DEFLATE, 2, "AdobeDeflate"},
                 {COMPRESSION_LZW, 0, "LZW"},
                 {COMPRESSION_LZW, 2, "LZW"}};
    for (size_t k = 0; k < sizeof comps / sizeof comps[0]; k++)
        for (int be = 0; be < 2; be++)
            for (int big = 0; big < 2; big++)
                for (int tiled = 0; tiled < 2; tiled++) {
                    tspec s = {40,
                               33,
                               16,
                               2,
                               1,
                               false,
                               tiled != 0,
                               comps[k].compression,
                               comps[k].predictor,
                               be != 0,
                               big != 0,
                               NULL,
                               NULL,
                               NULL,
                               NULL,
                               0,
                               NULL,
                               NULL};
                    const char *p = tpath("comp.tif");
                    CHECK(write_tiff(p, &s, NULL));
                    trn_geotiff g;
                    CHECK_OK(trn_geotiff_read(p, NULL, &g, NULL, NULL, NULL));
                    CHECK(values_match(&g, &s));
                    CHECK_EQ_INT(g.info.big_endian, be);
                    CHECK_EQ_INT(g.info.bigtiff, big);
                    CHECK_EQ_INT(g.info.compression, comps[k].compression);
                    CHECK(strcmp(g.info.compression_name, comps[k].name) == 0);
                    trn_geotiff_dispose(&g);
                }
    /* float32 with the floating-point predictor, tiles. (Only little-endian: libtiff 4.5
     * itself writes big-endian predictor-3 tiles that neither it nor GDAL read back.) */
    tspec s = {50,   21,   32,   3,    1, false, true, COMPRESSION_ADOBE_DEFLATE, 3, false, false,
               NULL, NULL, NULL, NULL, 0, NULL,  NULL};
    CHECK(write_tiff(tpath("fp.tif"), &s, NULL));
    trn_geotiff g;
    CHECK_OK(trn_geotiff_read(tpath("fp.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK(values_match(&g, &s));
    CHECK_EQ_INT(g.info.predictor, 3);
    trn_geotiff_dispose(&g);
    /* Big-endian floats and doubles, strips and tiles, plain and deflated. */
    for (int k = 0; k < 8; k++) {
        tspec b = {31,
                   17,
                   (uint16_t)(k & 1 ? 64 : 32),
                   3,
                   1,
                   false,
                   (k & 2) != 0,
                   (uint16_t)(k & 4 ? COMPRESSION_ADOBE_DEFLATE : COMPRESSION_NONE),
                   0,
                   true,
                   false,
                   NULL,
                   NULL,
                   NULL,
                   NULL,
                   0,
                   NULL,
                   NULL};
        CHECK(write_tiff(tpath("befloat.tif"), &b, NULL));
        CHECK_OK(trn_geotiff_read(tpath("befloat.tif"), NULL, &g, NULL, NULL, NULL));
        CHECK(g.info.big_endian);
        CHECK(values_match(&g, &b));
        trn_geotiff_dispose(&g);
    }
}

static void test_multiband(void)
{
    for (int sep = 0; sep < 2; sep++)
        for (int tiled = 0; tiled < 2; tiled++) {
            tspec s = {23,    19,    8,    1,    3,    sep != 0, tiled != 0, 0,    0,
                       false, false, NULL, NULL, NULL, NULL,     0,          NULL, NULL};
            CHECK(write_tiff(tpath("rgb.tif"), &s, NULL));
            trn_geotiff g;
            CHECK_OK(trn_geotiff_read(tpath("rgb.tif"), NULL, &g, NULL, NULL, NULL));
            CHECK_EQ_INT(g.info.bands, 3);
            CHECK_EQ_INT(g.info.planar_separate, sep);
            CHECK(values_match(&g, &s)); /* band 1 only */
            trn_geotiff_dispose(&g);
        }
}

/* ---- georeferencing ------------------------------------------------------------------ */

static void test_projected_georef(void)
{
    double scale[3] = {30, 30, 0};
    double tie[6] = {0, 0, 0, 500000, 4100000, 0};
    uint16_t keys[] = {1, 1, 0,    4,     1024, 0, 1,    1, 1025, 0,
                       1, 1, 1026, 34737, 22,   0, 3072, 0, 1,    32633};
    tspec s = {64,
               48,
               16,
               2,
               1,
               false,
               false,
               0,
               0,
               false,
               false,
               scale,
               tie,
               NULL,
               keys,
               20,
               "WGS 84 / UTM zone 33N|",
               NULL};
    CHECK(write_tiff(tpath("utm.tif"), &s, NULL));
    trn_geotiff_info info;
    CHECK_OK(trn_geotiff_read_info(tpath("utm.tif"), NULL, &info, NULL));
    const trn_geotiff_georef *g = &info.georef;
    CHECK(info.has_georef && g->has_transform && g->has_geokeys && g->kept_keys);
    CHECK_EQ_INT(g->epsg, 32633);
    CHECK(!g->geographic);
    CHECK_EQ_INT(g->model_type, 1);
    CHECK_EQ_INT(g->raster_type, 1);
    CHECK(strcmp(g->citation, "WGS 84 / UTM zone 33N") == 0);
    CHECK(g->transform[0] == 500000 && g->transform[1] == 30 && g->transform[3] == 4100000 &&
          g->transform[5] == -30 && g->transform[2] == 0 && g->transform[4] == 0);
    CHECK(g->metres_per_pixel_x == 30 && g->metres_per_pixel_y == 30);
    CHECK(g->units_known);

    /* To a field: 63 x 47 cells of 30 m, rows reversed (south first). */
    trn_geotiff dem;
    trn_field f;
    CHECK_OK(trn_geotiff_read(tpath("utm.tif"), NULL, &dem, NULL, NULL, NULL));
    CHECK_OK(trn_geotiff_to_field(&dem, &f, NULL));
    CHECK(dem.values == NULL);
    CHECK_EQ_INT(f.cells_x, 63);
    CHECK_EQ_INT(f.cells_z, 47);
    CHECK(f.size_x == 63 * 30.0 && f.size_z == 47 * 30.0);
    CHECK(f.heights[0] == (float)test_value(&s, 0, 47));
    CHECK(f.heights[47 * 64 + 5] == (float)test_value(&s, 5, 0));
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);

    /* Feet: ProjLinearUnits US survey foot and VerticalUnits international foot. */
    uint16_t feet[] = {1, 1,    0,    4, 1024, 0,    1,    1, 3072, 0,
                       1, 2263, 3076, 0, 1,    9003, 4099, 0, 1,    9002};
    tspec sf = s;
    sf.keys = feet;
    sf.ascii = NULL;
    CHECK(write_tiff(tpath("feet.tif"), &sf, NULL));
    CHECK_OK(trn_geotiff_read(tpath("feet.tif"), NULL, &dem, NULL, NULL, NULL));
    CHECK(fabs(dem.info.georef.metres_per_pixel_x - 30 * 1200.0 / 3937.0) < 1e-9);
    CHECK(dem.info.georef.vertical_unit_metres == 0.3048);
    CHECK_OK(trn_geotiff_to_field(&dem, &f, NULL));
    CHECK(f.heights[0] == (float)(test_value(&s, 0, 47) * 0.3048));
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);
}

static void test_geographic_georef(void)
{
    /* 1 arc-second pixels centred on latitude 45 N: the WGS84 lengths of a degree there are
     * 111,132.95 m (latitude) and 78,846.8 m (longitude), so a pixel is 30.870 x 21.902 m. */
    uint32_t w = 60, h = 40;
    double scale[3] = {1.0 / 3600, 1.0 / 3600, 0};
    double tie[6] = {0, 0, 0, 10.0, 45.0 + (h / 2.0) / 3600, 0};
    uint16_t keys[] = {1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, 4326};
    tspec s = {w,     h,     32,    3,   1,    false, true, 0,    0,
               false, false, scale, tie, NULL, keys,  16,   NULL, NULL};
    CHECK(write_tiff(tpath("geo.tif"), &s, NULL));
    trn_geotiff_info info;
    CHECK_OK(trn_geotiff_read_info(tpath("geo.tif"), NULL, &info, NULL));
    const trn_geotiff_georef *g = &info.georef;
    CHECK_EQ_INT(g->epsg, 4326);
    CHECK(g->geographic);
    CHECK(fabs(g->centre_latitude - 45.0) < 1e-12);
    CHECK(fabs(g->metres_per_pixel_y - 111132.95 / 3600) < 0.001);
    CHECK(fabs(g->metres_per_pixel_x - 78846.8 / 3600) < 0.001);

    /* PixelIsPoint: the tiepoint names a pixel centre, so the corner is half a pixel out. */
    uint16_t point[] = {1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 2, 2048, 0, 1, 4326};
    s.keys = point;
    CHECK(write_tiff(tpath("point.tif"), &s, NULL));
    CHECK_OK(trn_geotiff_read_info(tpath("point.tif"), NULL, &info, NULL));
    CHECK_EQ_INT(info.georef.raster_type, TRN_GEOTIFF_RASTER_PIXEL_IS_POINT);
    CHECK(fabs(info.georef.transform[0] - (10.0 - 0.5 / 3600)) < 1e-12);
    CHECK(fabs(info.georef.transform[3] - (tie[4] + 0.5 / 3600)) < 1e-12);
}

static void test_transformation_matrix(void)
{
    /* Rotated 2 x 3 m pixels: x = 1000 + 2 col - 0.5 row, y = 2000 + 0.5 col - 3 row. */
    double m[16] = {2, -0.5, 0, 1000, 0.5, -3, 0, 2000, 0, 0, 0, 0, 0, 0, 0, 1};
    uint16_t keys[] = {1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 3857};
    tspec s = {20,    20,    16,   1,    1, false, false, 0,    0,
               false, false, NULL, NULL, m, keys,  12,    NULL, NULL};
    CHECK(write_tiff(tpath("rot.tif"), &s, NULL));
    trn_geotiff_info info;
    CHECK_OK(trn_geotiff_read_info(tpath("rot.tif"), NULL, &info, NULL));
    const double *t = info.georef.transform;
    CHECK(t[0] == 1000 && t[1] == 2 && t[2] == -0.5 && t[3] == 2000 && t[4] == 0.5 && t[5] == -3);
    CHECK(fabs(info.georef.metres_per_pixel_x - hypot(2, 0.5)) < 1e-12);
    double col, row, x, y;
    trn_geotiff_pixel_to_model(&info.georef, 3.5, 7.25, &x, &y);
    CHECK(trn_geotiff_model_to_pixel(&info.georef, x, y, &col, &row));
    CHECK(fabs(col - 3.5) < 1e-9 && fabs(row - 7.25) < 1e-9);
}

/* ---- NoData -------------------------------------------------------------------------- */

static double slope(uint32_t i, uint32_t j)
{
    return 100.0 + 0.75 * i - 0.5 * j;
}

static void test_nodata(void)
{
    uint32_t w = 70, h = 50;
    double *v = malloc((size_t)w * h * sizeof(double));
    size_t hole = 0;
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++) {
            bool in = i >= 20 && i < 35 && j >= 10 && j < 22;
            v[(size_t)j * w + i] = in ? -500.0 : slope(i, j);
            hole += in;
        }
    tspec s = {w,     h,     32,   3,    1,    false, false, 0,    0,
               false, false, NULL, NULL, NULL, NULL,  0,     NULL, "-500"};
    CHECK(write_tiff(tpath("nd.tif"), &s, v));
    trn_geotiff g;
    CHECK_OK(trn_geotiff_read(tpath("nd.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK(g.info.has_nodata_tag);
    CHECK(strcmp(g.info.nodata_text, "-500") == 0);
    CHECK_EQ_INT(g.nodata_source, TRN_GEOTIFF_NODATA_TAG);
    CHECK(g.nodata_value == -500.0);
    CHECK_EQ_INT(g.nodata_count, hole);
    CHECK(g.min == (float)slope(0, h - 1) && g.max == (float)slope(w - 1, 0));
    uint64_t filled = 0;
    CHECK_OK(trn_geotiff_fill_nodata(&g, &filled, NULL, NULL, NULL));
    CHECK_EQ_INT(filled, hole);
    double worst = 0;
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++) {
            float x = g.values[(size_t)j * w + i];
            CHECK(!isnan(x));
            double e = fabs(x - slope(i, j));
            if (e > worst) worst = e;
        }
    CHECK(worst < 1e-3); /* a plane is harmonic: filled exactly */
    trn_geotiff_dispose(&g);

    /* -32768 in int16 without a tag (SRTM voids). */
    for (uint32_t k = 0; k < (size_t)w * h; k++)
        v[k] = (k % 97 == 5) ? -32768.0 : (double)(k % 50);
    tspec si = {w,     h,     16,   2,    1,    false, false, 0,    0,
                false, false, NULL, NULL, NULL, NULL,  0,     NULL, NULL};
    CHECK(write_tiff(tpath("srtm.tif"), &si, v));
    CHECK_OK(trn_geotiff_read(tpath("srtm.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK_EQ_INT(g.nodata_source, TRN_GEOTIFF_NODATA_MINUS_32768);
    CHECK_EQ_INT(g.nodata_count, ((size_t)w * h + 91) / 97);
    CHECK(strcmp(trn_geotiff_nodata_source_name(g.nodata_source), "-32768 convention") == 0);
    trn_geotiff_dispose(&g);

    /* -9999 and NaN in float32. */
    for (uint32_t k = 0; k < (size_t)w * h; k++)
        v[k] = k == 7 ? -9999.0 : k == 8 ? NAN : 12.5;
    CHECK(write_tiff(tpath("esri.tif"),
                     &(tspec){w, h, 32, 3, 1, false, false, 0, 0, false, false, NULL, NULL, NULL,
                              NULL, 0, NULL, NULL},
                     v));
    CHECK_OK(trn_geotiff_read(tpath("esri.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK_EQ_INT(g.nodata_source, TRN_GEOTIFF_NODATA_MINUS_9999);
    CHECK_EQ_INT(g.nodata_count, 2);
    CHECK_OK(trn_geotiff_fill_nodata(&g, &filled, NULL, NULL, NULL));
    CHECK(g.values[7] == 12.5f && g.values[8] == 12.5f);
    trn_geotiff_dispose(&g);

    /* uint16 has no convention: 0 is an elevation. */
    for (uint32_t k = 0; k < (size_t)w * h; k++)
        v[k] = (double)(k % 3);
    CHECK(write_tiff(tpath("u16.tif"),
                     &(tspec){w, h, 16, 1, 1, false, false, 0, 0, false, false, NULL, NULL, NULL,
                              NULL, 0, NULL, NULL},
                     v));
    CHECK_OK(trn_geotiff_read(tpath("u16.tif"), NULL, &g, NULL, NULL, NULL));
    CHECK_EQ_INT(g.nodata_count, 0);
    CHECK_EQ_INT(g.nodata_source, TRN_GEOTIFF_NODATA_NONE);
    trn_geotiff_dispose(&g);
    free(v);
}

/* ---- rejections ---------------------------------------------------------------------- */

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* Offset of the classic little-endian IFD entry for tag, or 0. */
static size_t find_entry(const uint8_t *d, uint16_t tag)
{
    uint32_t ifd = le32(d + 4);
    uint16_t n = le16(d + ifd);
    for (uint16_t k = 0; k < n; k++) {
        size_t at = ifd + 2 + 12u * k;
        if (le16(d + at) == tag) return at;
    }
    return 0;
}

static void test_rejections(void)
{
    double scale[3] = {30, 30, 0};
    double tie[6] = {0, 0, 0, 500000, 4100000, 0};
    uint16_t keys[] = {1, 1, 0, 2, 1024, 0, 1, 1, 1026, 34737, 5, 0};
    tspec s = {16,    16,    16,    1,   1,    false, false, 0,       0,
               false, false, scale, tie, NULL, keys,  12,    "abcd|", "7"};
    CHECK(write_tiff(tpath("good.tif"), &s, NULL));
    size_t size;
    uint8_t *good = trn_test_read_file(tpath("good.tif"), &size);
    uint8_t *d = malloc(size);
    trn_geotiff g;
    trn_geotiff_info info;
    trn_error e;
    uint32_t ifd = le32(good + 4);

    CHECK_STATUS(trn_geotiff_decode(good, 3, "t.tif", NULL, &g, NULL, NULL, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 2);
    memcpy(d, good, size);
    d[0] = 'X';
    CHECK_STATUS(trn_geotiff_decode(d, size, "t.tif", NULL, &g, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK(g.values == NULL);
    memcpy(d, good, size);
    d[2] = 41;
    CHECK_STATUS(trn_geotiff_decode(d, size, "t.tif", NULL, &g, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 2);
    CHECK_CONTAINS(e.message, "found 41");
    memcpy(d, good, size);
    put32(d + 4, (uint32_t)size + 10);
    CHECK_STATUS(trn_geotiff_decode(d, size, "t.tif", NULL, &g, NULL, NULL, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 4);
    /* The IFD cut short: the entry that does not fit is named. */
    CHECK_STATUS(trn_geotiff_decode(good, ifd + 2 + 12 * 3 + 5, "t.tif", NULL, &g, NULL, NULL, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, ifd + 2 + 12 * 3);

    trn_geotiff_limits lim;
    trn_geotiff_limits_default(&lim);
    lim.max_ifd_entries = 5;
    CHECK_STATUS(trn_geotiff_decode(good, size, "t.tif", &lim, &g, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, ifd);
    trn_geotiff_limits_default(&lim);
    lim.max_width = 15;
    CHECK_STATUS(trn_geotiff_decode(good, size, "t.tif", &lim, &g, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, find_entry(good, 256));
    trn_geotiff_limits_default(&lim);
    CHECK(lim.max_samples == (uint64_t)1 << 30); /* 8 GiB at 8 bytes a sample */
    lim.max_samples = 255;
    CHECK_STATUS(trn_geotiff_decode(good, size, "t.tif", &lim, &g, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, find_entry(good, 257));
    CHECK(strcmp(e.file, "t.tif") == 0);
    CHECK_CONTAINS(e.message, "16 x 16 = 256 samples, more than the limit of 255");
    CHECK_CONTAINS(e.message, "--max-samples");
    lim.max_samples = 256;
    CHECK_OK(trn_geotiff_decode(good, size, "t.tif", &lim, &g, NULL, NULL, &e));
    trn_geotiff_dispose(&g);
    trn_geotiff_limits_default(&lim);
    lim.max_tag_values = 5;
    CHECK_STATUS(trn_geotiff_decode_info(good, size, "t.tif", &lim, &info, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "tag 33922 has 6 values"); /* the first entry over 5 */
    CHECK_EQ_INT(e.offset, find_entry(good, 33922) + 4);
    trn_geotiff_limits_default(&lim);
    lim.max_geokeys = 1;
    CHECK_STATUS(trn_geotiff_decode_info(good, size, "t.tif", &lim, &info, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, le32(good + find_entry(good, 34735) + 8) + 6);

    /* Tag data pointing past the end. */
    memcpy(d, good, size);
    size_t tp = find_entry(d, 33922);
    put32(d + tp + 8, (uint32_t)size - 8);
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, tp + 8);
    /* GeoKey directory version 2, a key past the ASCII params, a zero pixel scale. */
    memcpy(d, good, size);
    size_t kd = le32(d + find_entry(d, 34735) + 8);
    d[kd] = 2;
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, kd);
    memcpy(d, good, size);
    d[kd + 8 + 8 + 4] = 9; /* key 1026's count: 9 characters of a 6-byte tag */
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, kd + 16);
    CHECK_CONTAINS(e.message, "GeoAsciiParams");
    memcpy(d, good, size);
    size_t ps = le32(d + find_entry(d, 33550) + 8);
    memset(d + ps, 0, 8);
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, ps);
    /* The pixel scale stored as FLOAT instead of DOUBLE. */
    memcpy(d, good, size);
    size_t pe = find_entry(d, 33550);
    d[pe + 2] = 11;
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, pe + 2);
    /* GDAL_NODATA that is not a number (its 2 bytes sit inside the entry). */
    memcpy(d, good, size);
    size_t ne = find_entry(d, 42113);
    d[ne + 8] = 'x';
    CHECK_STATUS(trn_geotiff_decode_info(d, size, "t.tif", NULL, &info, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, ne + 8);
    /* Corrupt strip data: the first strip's offset beyond the file. */
    memcpy(d, good, size);
    size_t so = find_entry(d, 273);
    uint32_t first_strip =
        le16(d + so + 2) == 4 && le32(d + so + 4) == 1 ? (uint32_t)(so + 8) : le32(d + so + 8);
    put32(d + first_strip, (uint32_t)size + 1000);
    CHECK_STATUS(trn_geotiff_decode(d, size, "t.tif", NULL, &g, NULL, NULL, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "strip 0: expected ");
    char ends[64];
    snprintf(ends, sizeof ends, "at offset %zu, the file ends at offset %zu", size + 1000, size);
    CHECK_CONTAINS(e.message, ends);
    CHECK(!strstr(e.message, "18446744")); /* libtiff's negative count, printed unsigned */
    CHECK_EQ_INT(e.offset, (int64_t)size + 1000);

    /* 1-bit images are not elevation. */
    tspec bits = {16,    16,    16,   1,    1,    false, false, 0,    0,
                  false, false, NULL, NULL, NULL, NULL,  0,     NULL, NULL};
    CHECK(write_tiff(tpath("bits.tif"), &bits, NULL));
    uint8_t *b = trn_test_read_file(tpath("bits.tif"), &size);
    size_t be = find_entry(b, 258);
    b[be + 8] = 12;
    CHECK_STATUS(trn_geotiff_decode(b, size, "b.tif", NULL, &g, NULL, NULL, &e),
                 TRN_ERR_UNSUPPORTED);
    CHECK_EQ_INT(e.offset, be);
    CHECK_CONTAINS(e.message, "12 bits");
    free(b);
    free(d);
    free(good);
}

/* ---- writing -------------------------------------------------------------------------- */

static void test_write_round_trip(void)
{
    double scale[3] = {30, 30, 0};
    double tie[6] = {0, 0, 0, 500000, 4100000, 0};
    uint16_t keys[] = {1, 1, 0,    4,     1024, 0, 1,    1, 1025, 0,
                       1, 1, 1026, 34737, 22,   0, 3072, 0, 1,    32633};
    tspec s = {64,
               48,
               32,
               3,
               1,
               false,
               false,
               0,
               0,
               false,
               false,
               scale,
               tie,
               NULL,
               keys,
               20,
               "WGS 84 / UTM zone 33N|",
               NULL};
    CHECK(write_tiff(tpath("src.tif"), &s, NULL));
    trn_geotiff dem, back;
    trn_field f;
    CHECK_OK(trn_geotiff_read(tpath("src.tif"), NULL, &dem, NULL, NULL, NULL));
    trn_geotiff_georef georef = dem.info.georef;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, NULL));
    for (int c = 0; c < 3; c++) {
        CHECK_OK(
            trn_geotiff_write(tpath("out.tif"), &f, &georef, (trn_geotiff_compression)c, NULL));
        CHECK_OK(trn_geotiff_read(tpath("out.tif"), NULL, &back, NULL, NULL, NULL));
        CHECK(values_match(&back, &s));
        const trn_geotiff_georef *b = &back.info.georef;
        CHECK(memcmp(b->transform, georef.transform, sizeof b->transform) == 0);
        CHECK_EQ_INT(b->epsg, 32633);
        CHECK(strcmp(b->citation, "WGS 84 / UTM zone 33N") == 0);
        CHECK_EQ_INT(b->key_shorts, georef.key_shorts);
        CHECK(memcmp(b->keys, georef.keys, georef.key_shorts * 2) == 0);
        CHECK_EQ_INT(back.info.compression, c == 0 ? 1 : c == 1 ? 8 : 5);
        CHECK(!back.info.has_nodata_tag);
        trn_geotiff_dispose(&back);
    }

    /* A crop keeps the ground position: remap to pixels 10.. and rows 5.. at full step. */
    trn_geotiff_georef sub;
    trn_geotiff_georef_remap(&georef, 10, 5, 1, 1, 20, 10, &sub);
    CHECK(sub.transform[0] == 500000 + 300 && sub.transform[3] == 4100000 - 150);
    trn_geotiff_georef_remap(&georef, 0, 0, 2, 2, 32, 24, &sub); /* half resolution */
    CHECK(sub.transform[1] == 60 && sub.transform[5] == -60);
    /* The first output pixel is centred on the first input pixel's centre (15 m in). */
    CHECK(sub.transform[0] == 500000 - 15 && sub.transform[3] == 4100000 + 15);
    CHECK(sub.metres_per_pixel_x == 60);

    /* NaN samples get GDAL_NODATA "nan"; a field without georef gets its own frame. */
    f.heights[3] = NAN;
    CHECK_OK(trn_geotiff_write(tpath("plain.tif"), &f, NULL, TRN_GEOTIFF_COMPRESS_DEFLATE, NULL));
    CHECK_OK(trn_geotiff_read(tpath("plain.tif"), NULL, &back, NULL, NULL, NULL));
    CHECK(back.info.has_nodata_tag && isnan(back.info.nodata_tag_value));
    CHECK_EQ_INT(back.nodata_count, 1);
    CHECK(back.info.georef.has_transform);
    CHECK(back.info.georef.transform[1] == 30 && back.info.georef.transform[5] == -30);
    CHECK(back.info.georef.transform[0] == -15);
    CHECK(back.info.georef.transform[3] == 47 * 30 + 15);
    CHECK_EQ_INT(back.info.georef.epsg, 0);
    /* No CRS is claimed: no GeoKeyDirectory at all (a lone raster-type key made GDAL invent an
     * "unnamed" local CRS of unknown units). */
    CHECK(!back.info.georef.has_geokeys);
    CHECK(back.info.georef.units_known);
    trn_geotiff_dispose(&back);
    /* A georef with neither a transform nor keys: no georeferencing tags at all. */
    trn_geotiff_georef none;
    memset(&none, 0, sizeof none);
    CHECK_OK(trn_geotiff_write(tpath("bare.tif"), &f, &none, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    CHECK_OK(trn_geotiff_read(tpath("bare.tif"), NULL, &back, NULL, NULL, NULL));
    CHECK(!back.info.has_georef && !back.info.georef.has_transform);
    CHECK(back.info.has_nodata_tag); /* the NaN sample is still said */
    trn_geotiff_dispose(&back);

    /* A failed write leaves an existing file untouched. */
    trn_error e;
    CHECK_STATUS(trn_geotiff_write(tpath("out.tif"), &f, NULL, (trn_geotiff_compression)9, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_geotiff_read_info(tpath("out.tif"), NULL, &back.info, NULL));
    CHECK_EQ_INT(back.info.compression, 5);
    CHECK_STATUS(trn_geotiff_write("/nonexistent-dir/x.tif", &f, NULL, 0, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.file, "/nonexistent-dir/x.tif");
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);
}

/* GDAL, when installed, reads our georeferencing the same way. */
static void test_gdalinfo_agrees(void)
{
    if (system("gdalinfo --version >/dev/null 2>&1") != 0) {
        fprintf(stderr, "  (gdalinfo not installed: GDAL cross-check skipped)\n");
        return;
    }
    double scale[3] = {1.0 / 1200, 1.0 / 1200, 0};
    double tie[6] = {0, 0, 0, 6.5, 46.25, 0};
    uint16_t keys[] = {1, 1, 0, 3, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, 4326};
    tspec s = {30,    20,    16,    2,   1,    false, false, 0,    0,
               false, false, scale, tie, NULL, keys,  16,    NULL, NULL};
    CHECK(write_tiff(tpath("g_in.tif"), &s, NULL));
    trn_geotiff dem;
    trn_field f;
    CHECK_OK(trn_geotiff_read(tpath("g_in.tif"), NULL, &dem, NULL, NULL, NULL));
    trn_geotiff_georef georef = dem.info.georef;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, NULL));
    f.heights[0] = NAN;
    CHECK_OK(trn_geotiff_write(tpath("g_out.tif"), &f, &georef, TRN_GEOTIFF_COMPRESS_LZW, NULL));
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "gdalinfo -json '%s' 2>/dev/null", tpath("g_out.tif"));
    FILE *p = popen(cmd, "r");
    CHECK(p != NULL);
    json_error_t je;
    json_t *doc = p ? json_loadf(p, 0, &je) : NULL;
    if (p) pclose(p);
    CHECK(doc != NULL);
    json_t *gt = json_object_get(doc, "geoTransform");
    CHECK(json_array_size(gt) == 6);
    for (size_t k = 0; k < 6 && json_array_size(gt) == 6; k++)
        CHECK(fabs(json_number_value(json_array_get(gt, k)) - georef.transform[k]) < 1e-12);
    json_t *cs = json_object_get(json_object_get(doc, "coordinateSystem"), "wkt");
    CHECK_CONTAINS(json_string_value(cs), "ID[\"EPSG\",4326]");
    json_t *band = json_array_get(json_object_get(doc, "bands"), 0);
    CHECK(strcmp(json_string_value(json_object_get(band, "type")), "Float32") == 0);
    json_t *nd = json_object_get(band, "noDataValue");
    CHECK(nd && (json_is_string(nd) ? strcmp(json_string_value(nd), "NaN") == 0 : false));
    json_t *size = json_object_get(doc, "size");
    CHECK(json_integer_value(json_array_get(size, 0)) == 30);
    json_decref(doc);
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);
}

static void test_sniff_and_free(void)
{
    CHECK(trn_geotiff_sniff((const uint8_t *)"II*\0", 4));
    CHECK(trn_geotiff_sniff((const uint8_t *)"MM\0*", 4));
    CHECK(trn_geotiff_sniff((const uint8_t *)"II+\0", 4));
    CHECK(trn_geotiff_sniff((const uint8_t *)"MM\0+", 4));
    CHECK(!trn_geotiff_sniff((const uint8_t *)"II*", 3));
    CHECK(!trn_geotiff_sniff((const uint8_t *)"\x89PNG", 4));
    trn_geotiff_dispose(NULL);
    trn_error e;
    trn_geotiff g;
    CHECK_STATUS(trn_geotiff_read(tpath("missing.tif"), NULL, &g, NULL, NULL, &e),
                 TRN_ERR_NOT_FOUND);
}

/* Non-square pixels (10 m across, 20 m down): each axis of the field takes its own pixel size,
 * x from the row spacing and z from the column spacing. */
static void test_non_square_pixels(void)
{
    double scale[3] = {10, 20, 0};
    double tie[6] = {0, 0, 0, 500000, 4100000, 0};
    uint16_t keys[] = {1, 1, 0, 3, 1024, 0, 1, 1, 1025, 0, 1, 1, 3072, 0, 1, 32633};
    tspec s;
    memset(&s, 0, sizeof s);
    s.w = 9;
    s.h = 5;
    s.bps = 16;
    s.format = SAMPLEFORMAT_UINT;
    s.bands = 1;
    s.scale = scale;
    s.tiepoint = tie;
    s.keys = keys;
    s.key_count = 16;
    CHECK(write_tiff(tpath("nonsquare.tif"), &s, NULL));
    trn_geotiff dem;
    CHECK_OK(trn_geotiff_read(tpath("nonsquare.tif"), NULL, &dem, NULL, NULL, NULL));
    CHECK(dem.info.georef.metres_per_pixel_x == 10 && dem.info.georef.metres_per_pixel_y == 20);
    trn_field f;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, NULL));
    CHECK_EQ_INT(f.cells_x, 8);
    CHECK_EQ_INT(f.cells_z, 4);
    CHECK(f.size_x == 80.0);
    CHECK(f.size_z == 80.0);
    CHECK(f.size_x == 8 * 10.0 && f.size_z == 4 * 20.0);
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_sample_types);
    RUN(test_compressions_and_byte_orders);
    RUN(test_multiband);
    RUN(test_projected_georef);
    RUN(test_geographic_georef);
    RUN(test_transformation_matrix);
    RUN(test_nodata);
    RUN(test_rejections);
    RUN(test_write_round_trip);
    RUN(test_gdalinfo_agrees);
    RUN(test_sniff_and_free);
    RUN(test_non_square_pixels);
    return trn_test_finish();
}
