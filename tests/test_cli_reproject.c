/* Geographic DEMs reprojected with PROJ (library and CLI), GeoKeys through libgeotiff, CRS kept. */
#define _POSIX_C_SOURCE 200809L
#include <geo_normalize.h>
#include <jansson.h>
#include <geotiff.h>
#include <geotiffio.h>
#include <math.h>
#include <proj.h>
#include <stdlib.h>
#include <tiffio.h>
#include <xtiffio.h>

#include "terrane/beamng.h"
#include "terrane/geotiff.h"
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

/* The synthetic DEM: 0.001-degree pixels from (LON0, LAT0) at its north-west corner, heights
 * a north-south ramp of RAMP metres per degree of latitude (linear in latitude, so bilinear
 * interpolation reproduces it exactly wherever a sample lands). */
#define LON0 139.20
#define LAT0 35.80
#define STEP 0.001
#define RAMP 5000.0

static double ramp_height(double lat)
{
    return 1000.0 + RAMP * (lat - (LAT0 - 0.2));
}

/* A w x h float32 geographic GeoTIFF written here with libtiff (not the library under test):
 * ModelPixelScale, ModelTiepoint and a GeoKeyDirectory of model type 2, PixelIsArea,
 * GeographicTypeGeoKey code and degrees. */
static bool stripes; /* make_geo_dem writes rows alternating 0 and 100 m instead of the ramp */

static void make_geo_dem(const char *path, uint32_t w, uint32_t h, uint16_t gcs)
{
    static const TIFFFieldInfo fields[] = {
        {33550, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelPixelScale"},
        {33922, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelTiepoint"},
        {34735, -1, -1, TIFF_SHORT, FIELD_CUSTOM, 1, 1, (char *)"GeoKeyDirectory"},
    };
    TIFF *tif = TIFFOpen(path, "w");
    CHECK(tif != NULL);
    if (!tif) return;
    /* (Already known when libgeotiff's XTIFFOpen installed its tag extender.) */
    for (int k = 0; k < 3; k++)
        if (!TIFFFindField(tif, fields[k].field_tag, TIFF_ANY))
            CHECK(TIFFMergeFieldInfo(tif, &fields[k], 1) == 0);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 32);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, 16);
    double scale[3] = {STEP, STEP, 0};
    double tie[6] = {0, 0, 0, LON0, LAT0, 0};
    uint16_t keys[] = {1, 1, 0, 4, 1024, 0, 1, 2, 1025, 0, 1, 1, 2048, 0, 1, gcs, 2054, 0, 1, 9102};
    TIFFSetField(tif, 33550, 3, scale);
    TIFFSetField(tif, 33922, 6, tie);
    TIFFSetField(tif, 34735, (int)(sizeof keys / sizeof keys[0]), keys);
    float *row = malloc(w * sizeof *row);
    for (uint32_t r = 0; r < h; r++) {
        const double lat = LAT0 - (r + 0.5) * STEP; /* the pixel centre */
        for (uint32_t c = 0; c < w; c++)
            row[c] = stripes ? (float)(r % 2 ? 100.0 : 0.0) : (float)ramp_height(lat);
        CHECK(TIFFWriteScanline(tif, row, r, 0) == 1);
    }
    free(row);
    TIFFClose(tif);
}

static PJ *utm_to_geo(PJ_CONTEXT *ctx, uint32_t epsg)
{
    char def[32];
    snprintf(def, sizeof def, "EPSG:%u", epsg);
    PJ *op = proj_create_crs_to_crs(ctx, def, "EPSG:4326", NULL);
    PJ *norm = op ? proj_normalize_for_visualization(ctx, op) : NULL;
    proj_destroy(op);
    return norm;
}

/* Library: the default target is the centre's UTM zone; every kept sample lies inside the
 * source and carries the ramp's height at its own latitude (a PROJ round trip here, not the
 * library's transform); the grid's rows run north-south; the cell is the ground resolution. */
static void test_library_utm(void)
{
    const uint32_t w = 400, h = 300;
    make_geo_dem(tp("geo.tif"), w, h, 4326);
    trn_geotiff dem;
    trn_error e;
    CHECK_OK(trn_geotiff_read(tp("geo.tif"), NULL, &dem, NULL, NULL, &e));
    trn_geotiff_georef sg = dem.info.georef;
    CHECK(sg.geographic);
    CHECK_EQ_INT(sg.epsg, 4326);
    /* libgeotiff's normalisation: the WGS 84 datum. */
    CHECK(sg.crs_normalised);
    CHECK_EQ_INT(sg.datum_epsg, 6326);
    trn_field f;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, &e));
    trn_geotiff_dispose(&dem);

    trn_geotiff_reproject_options ro;
    memset(&ro, 0, sizeof ro);
    trn_field out;
    trn_geotiff_georef dg;
    trn_geotiff_reproject_result res;
    CHECK_OK(trn_geotiff_reproject(&f, &sg, &ro, &out, &dg, &res, NULL, NULL, &e));
    /* Centre 139.4 E, 35.65 N: zone 54 (138..144 E), north. */
    CHECK_EQ_INT(res.target_epsg, 32654);
    CHECK(res.utm_default);
    CHECK_CONTAINS(res.target_name, "UTM zone 54N");
    CHECK_EQ_INT(dg.projected_epsg, 32654);
    CHECK(!dg.geographic);
    /* The cell: sqrt of the area of one pixel at the centre, close to the ellipsoid's own
     * figures (tmerc's scale there is 0.9996 + a little). */
    const double expect = sqrt(sg.metres_per_pixel_x * sg.metres_per_pixel_y);
    CHECK(fabs(res.cell_metres - expect) / expect < 2e-3);
    CHECK(fabs(out.size_x / out.cells_x - res.cell_metres) < 1e-9);
    CHECK(fabs(dg.transform[1] - res.cell_metres) < 1e-9 && dg.transform[5] == -dg.transform[1]);
    CHECK_EQ_INT(out.cells_x + 1, res.width);
    /* The kept rectangle is most of the outline (the tile turns by the grid convergence). */
    CHECK(res.width * (double)res.height / res.footprint_samples > 0.9);
    CHECK(res.width * (double)res.height <= res.footprint_samples * 1.01);

    PJ_CONTEXT *ctx = proj_context_create();
    PJ *inv = utm_to_geo(ctx, 32654);
    CHECK(inv != NULL);
    const uint32_t ow = out.cells_x + 1, oh = out.cells_z + 1;
    double worst = 0, min_lon = 1e9, max_lon = -1e9, min_lat = 1e9, max_lat = -1e9;
    /* Every 7th sample and the last row and column. */
    for (uint32_t j = 0; j < oh; j = j + 1 == oh ? oh : j + 7 < oh ? j + 7 : oh - 1)
        for (uint32_t i = 0; i < ow; i = i + 1 == ow ? ow : i + 7 < ow ? i + 7 : ow - 1) {
            /* Field row j (south first) is raster row oh - 1 - j; PixelIsArea centres. */
            PJ_COORD c = proj_coord(dg.transform[0] + (i + 0.5) * dg.transform[1],
                                    dg.transform[3] + (oh - 1 - j + 0.5) * dg.transform[5], 0, 0);
            PJ_COORD g = proj_trans(inv, PJ_FWD, c);
            const double lon = g.lp.lam, lat = g.lp.phi;
            min_lon = fmin(min_lon, lon), max_lon = fmax(max_lon, lon);
            min_lat = fmin(min_lat, lat), max_lat = fmax(max_lat, lat);
            const double d = fabs(out.heights[(size_t)j * ow + i] - ramp_height(lat));
            if (d > worst) worst = d;
        }
    /* float32 heights near 1000..2500 m: 2^-13 m apart. */
    CHECK(worst < 2e-3);
    if (worst >= 2e-3) fprintf(stderr, "worst height error %g m\n", worst);
    /* Inside the source's pixel centres, and reaching within two cells of them. */
    const double margin = 2.0 * res.cell_metres / 111000.0;
    CHECK(min_lon >= LON0 + 0.5 * STEP - 1e-9 && max_lon <= LON0 + (w - 0.5) * STEP + 1e-9);
    CHECK(min_lat >= LAT0 - (h - 0.5) * STEP - 1e-9 && max_lat <= LAT0 - 0.5 * STEP + 1e-9);
    CHECK(min_lat - (LAT0 - (h - 0.5) * STEP) < margin && (LAT0 - 0.5 * STEP) - max_lat < margin);
    /* North-south stays north-south: every row is higher than the one south of it, and a row
     * varies far less along it than between its ends. */
    for (uint32_t j = 1; j < oh; j++)
        if (!(out.heights[(size_t)j * ow + ow / 2] > out.heights[(size_t)(j - 1) * ow + ow / 2])) {
            CHECK(!"rows rise northwards");
            break;
        }
    const double ns = out.heights[(size_t)(oh - 1) * ow + ow / 2] - out.heights[ow / 2];
    const double ew = fabs(out.heights[(size_t)(oh / 2) * ow + ow - 1] -
                           out.heights[(size_t)(oh / 2) * ow]);
    CHECK(ns > 1000.0 && ew < 0.05 * ns);
    proj_destroy(inv);
    proj_context_destroy(ctx);

    /* The same with a given cell, and refusals that name the code. */
    ro.cell_metres = 250;
    trn_field o2;
    trn_geotiff_georef g2;
    CHECK_OK(trn_geotiff_reproject(&f, &sg, &ro, &o2, &g2, &res, NULL, NULL, &e));
    CHECK(res.cell_metres == 250.0 && fabs(o2.size_x - 250.0 * o2.cells_x) < 1e-6);
    trn_field_dispose(&o2);
    ro.cell_metres = 0;
    ro.target_epsg = 32799;
    CHECK_STATUS(trn_geotiff_reproject(&f, &sg, &ro, &o2, &g2, NULL, NULL, NULL, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "EPSG:32799 is not a CRS PROJ knows");
    ro.target_epsg = 4269;
    CHECK_STATUS(trn_geotiff_reproject(&f, &sg, &ro, &o2, &g2, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "EPSG:4269 (NAD83) is a geographic (degrees) CRS, not a projected");
    ro.target_epsg = 0;
    ro.max_samples = 1000;
    CHECK_STATUS(trn_geotiff_reproject(&f, &sg, &ro, &o2, &g2, NULL, NULL, NULL, &e),
                 TRN_ERR_LIMIT);
    trn_field_dispose(&out);
    trn_field_dispose(&f);
}

/* --resample average under a coarse cell takes the area mean (stripes one pixel wide become
 * their mean), where bilinear point-samples them. */
static void test_library_average(void)
{
    stripes = true;
    make_geo_dem(tp("stripes.tif"), 200, 200, 4326);
    stripes = false;
    trn_geotiff dem;
    trn_error e;
    CHECK_OK(trn_geotiff_read(tp("stripes.tif"), NULL, &dem, NULL, NULL, &e));
    trn_geotiff_georef sg = dem.info.georef;
    trn_field f;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, &e));
    trn_geotiff_dispose(&dem);
    trn_geotiff_reproject_options ro;
    memset(&ro, 0, sizeof ro);
    ro.cell_metres = 1000; /* about 9 pixels of 0.001 degree */
    double spread[2];
    for (int k = 0; k < 2; k++) {
        ro.filter = k ? TRN_RESAMPLE_AVERAGE : TRN_RESAMPLE_BILINEAR;
        trn_field out;
        trn_geotiff_georef dg;
        CHECK_OK(trn_geotiff_reproject(&f, &sg, &ro, &out, &dg, NULL, NULL, NULL, &e));
        double lo = 1e9, hi = -1e9;
        const size_t n = trn_field_sample_count(&out);
        for (size_t i = 0; i < n; i++)
            lo = fmin(lo, out.heights[i]), hi = fmax(hi, out.heights[i]);
        spread[k] = hi - lo;
        if (k) CHECK(lo > 40.0 && hi < 60.0);
        trn_field_dispose(&out);
    }
    CHECK(spread[0] > 50.0 && spread[1] < 20.0);
    trn_field_dispose(&f);
}

/* Read a GeoTIFF's keys back with libgeotiff (XTIFFOpen registers the GeoTIFF tags). */
static char citation[256]; /* the last geokeys() call's GTCitationGeoKey, "" when none */

static bool geokeys(const char *path, GTIFDefn *defn, double scale[2])
{
    TIFF *tif = XTIFFOpen(path, "r");
    if (!tif) return false;
    GTIF *gtif = GTIFNew(tif);
    bool ok = gtif && GTIFGetDefn(gtif, defn);
    uint16_t n = 0;
    double *s = NULL;
    if (ok && TIFFGetField(tif, 33550, &n, &s) && n >= 2) {
        scale[0] = s[0];
        scale[1] = s[1];
    }
    citation[0] = '\0';
    if (ok) GTIFKeyGet(gtif, GTCitationGeoKey, citation, 0, 256);
    if (gtif) GTIFFree(gtif);
    XTIFFClose(tif);
    return ok;
}

static uint64_t fnv1a(const char *path)
{
    size_t n = 0;
    uint8_t *b = trn_test_read_file(path, &n);
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; b && k < n; k++)
        h = (h ^ b[k]) * 1099511628211ull;
    free(b);
    return h;
}

/* CLI: .tif keeps the geographic CRS; --crs writes the new one (libgeotiff reads them back);
 * an engine output is reprojected by default and says so; thread counts agree. */
static void test_cli_convert(void)
{
    make_geo_dem(tp("g.tif"), 300, 200, 4326);
    char *out, *err;
    GTIFDefn *defn = GTIFAllocDefn();
    double scale[2] = {0, 0};
    /* A geographic DEM to .tif keeps EPSG:4326 and its degrees. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("g.tif"), tp("keep.tif")), 0);
    CHECK(err && !strstr(err, "reprojected"));
    free(out), free(err);
    CHECK(geokeys(tp("keep.tif"), defn, scale));
    CHECK_EQ_INT(defn->Model, ModelTypeGeographic);
    CHECK_EQ_INT(defn->GCS, 4326);
    CHECK(fabs(scale[0] - STEP) < 1e-15 && fabs(scale[1] - STEP) < 1e-15);

    /* --crs EPSG:3857 to .tif: the new CRS, metres, the given cell. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs EPSG:3857 --cell 150", &out, &err,
                                   tp("g.tif"), tp("merc.tif")),
                 0);
    CHECK_CONTAINS(err, "reprojected from EPSG:4326 (WGS 84) to EPSG:3857 (WGS 84 / Pseudo-Mercator");
    CHECK_CONTAINS(err, "150 m cells (--cell)");
    free(out), free(err);
    CHECK(geokeys(tp("merc.tif"), defn, scale));
    CHECK_EQ_INT(defn->Model, ModelTypeProjected);
    CHECK_EQ_INT(defn->PCS, 3857);
    CHECK(defn->UOMLengthInMeters == 1.0);
    CHECK(scale[0] == 150.0 && scale[1] == 150.0);
    CHECK_CONTAINS(citation, "WGS 84 / Pseudo-Mercator");

    /* The default for an engine output: the centre's UTM zone, named. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("g.tif"), tp("a.r32")), 0);
    CHECK_CONTAINS(err, "reprojected from EPSG:4326 (WGS 84) to EPSG:32654 (WGS 84 / UTM zone 54N, "
                        "the UTM zone of its centre");
    free(out), free(err);
    /* --format json says the same. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err, tp("g.tif"),
                                   tp("a.r32")),
                 0);
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    json_t *rp = json_object_get(doc, "reprojected");
    CHECK_EQ_INT(json_integer_value(json_object_get(rp, "from_epsg")), 4326);
    CHECK_EQ_INT(json_integer_value(json_object_get(rp, "to_epsg")), 32654);
    CHECK(json_is_true(json_object_get(rp, "utm_of_centre")));
    const double kept = json_real_value(json_object_get(rp, "area_kept"));
    CHECK(kept > 0.9 && kept <= 1.0);
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --format json", &out, &err, tp("g.tif"),
                                   tp("k.tif")),
                 0);
    doc = json_loads(out ? out : "", 0, NULL);
    CHECK(json_is_null(json_object_get(doc, "reprojected")));
    json_decref(doc);
    free(out), free(err);
    /* --crs utm on a .tif: a UTM GeoTIFF that libgeotiff reads as EPSG:32654. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs utm", &out, &err, tp("g.tif"),
                                   tp("utm.tif")),
                 0);
    free(out), free(err);
    CHECK(geokeys(tp("utm.tif"), defn, scale));
    CHECK_EQ_INT(defn->PCS, 32654);
    /* ... and converting that one again keeps it (no second reprojection). */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("utm.tif"), tp("utm2.tif")),
                 0);
    CHECK(err && !strstr(err, "reprojected"));
    free(out), free(err);
    CHECK(geokeys(tp("utm2.tif"), defn, scale));
    CHECK_EQ_INT(defn->PCS, 32654);
    /* --cell alone on a projected DEM: square cells of that size in its own CRS. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --cell 200", &out, &err, tp("utm.tif"),
                                   tp("utm200.tif")),
                 0);
    CHECK_CONTAINS(err, "reprojected from EPSG:32654 (WGS 84 / UTM zone 54N) to EPSG:32654");
    free(out), free(err);
    CHECK(geokeys(tp("utm200.tif"), defn, scale));
    CHECK_EQ_INT(defn->PCS, 32654);
    CHECK(scale[0] == 200.0 && scale[1] == 200.0);
    /* unity export reprojects a geographic DEM as convert does. */
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --fit resample --resolution 129", &out,
                                   &err, tp("g.tif"), tp("unity")),
                 0);
    CHECK_CONTAINS(err, "reprojected from EPSG:4326 (WGS 84) to EPSG:32654");
    free(out), free(err);
    GTIFFreeDefn(defn);

    /* Determinism: one thread and four give the same bytes, and the bytes are pinned. */
    setenv("OMP_NUM_THREADS", "1", 1);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --resample bicubic", &out, &err,
                                   tp("g.tif"), tp("t1.r32")),
                 0);
    free(out), free(err);
    setenv("OMP_NUM_THREADS", "4", 1);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --resample bicubic", &out, &err,
                                   tp("g.tif"), tp("t4.r32")),
                 0);
    free(out), free(err);
    unsetenv("OMP_NUM_THREADS");
    CHECK(trn_test_same_bytes(tp("t1.r32"), tp("t4.r32")));
    const uint64_t h = fnv1a(tp("t1.r32"));
    CHECK(h == 0x56a4d2643d3351feull);
    if (h != 0x56a4d2643d3351feull) fprintf(stderr, "reprojected r32 fnv1a 0x%016llx\n", (unsigned long long)h);
}

/* Refusals: each names what failed, and none suggests a flag that cannot help. */
static void test_cli_refusals(void)
{
    /* A user-defined geographic CRS (no EPSG code): the default reprojection cannot place it
     * and says so, naming --crs keep, which works. */
    make_geo_dem(tp("user.tif"), 50, 40, 32767);
    char *out, *err;
    CHECK(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("user.tif"), tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "has no EPSG code");
    CHECK_CONTAINS(err, "--crs keep uses the degrees as they are");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs keep", &out, &err, tp("user.tif"),
                                   tp("x.r32")),
                 0);
    free(out), free(err);
    make_geo_dem(tp("g.tif"), 120, 100, 4326);
    CHECK(trn_test_run_clif("convert '%s' '%s' --crs EPSG:32799", &out, &err, tp("g.tif"),
                            tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "EPSG:32799 is not a CRS PROJ knows");
    free(out), free(err);
    CHECK(trn_test_run_clif("convert '%s' '%s' --crs EPSG:4326", &out, &err, tp("g.tif"),
                            tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "EPSG:4326 (WGS 84) is a geographic (degrees) CRS, not a projected one");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs mercator", &out, &err, tp("g.tif"),
                                   tp("x.r32")),
                 2);
    CHECK_CONTAINS(err, "--crs takes EPSG:N");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --cell -3", &out, &err, tp("g.tif"),
                                   tp("x.r32")),
                 2);
    free(out), free(err);
    CHECK(trn_test_run_clif("convert '%s' '%s' --crs keep --cell 30", &out, &err, tp("g.tif"),
                            tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "give one");
    free(out), free(err);
    /* A DEM without a CRS cannot be reprojected. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs keep", &out, &err, tp("g.tif"),
                                   tp("plain.png")),
                 0);
    free(out), free(err);
    CHECK(trn_test_run_clif("convert '%s' '%s' --crs utm", &out, &err, tp("plain.png"),
                            tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "has no coordinate system");
    free(out), free(err);
    /* --crs keep to a level: cells of unequal metres. The refusal names --cell, and not the
     * --fit that already ran. */
    CHECK(trn_test_run_clif("convert '%s' 'beamng:%s' --pow2 --crs keep", &out, &err, tp("g.tif"),
                            tp("lv/levels/k")) != 0);
    CHECK_CONTAINS(err, "--cell M resamples it onto square cells");
    CHECK_CONTAINS(err, "without --crs keep it is reprojected");
    CHECK(err && !strstr(err, "--fit crop (or"));
    free(out), free(err);
    /* Without --crs keep the same DEM becomes a level. */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s' --pow2", &out, &err, tp("g.tif"),
                                   tp("lv/levels/k")),
                 0);
    CHECK_CONTAINS(err, "validated");
    free(out), free(err);
}

/* A projected code whose unit only the CRS states (NAD83 / New York Long Island, US survey
 * feet, no ProjLinearUnitsGeoKey): libgeotiff's normalisation gives the feet. */
static void test_implied_units(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 9, 9, 9, 9, NULL));
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    const double t[6] = {1000000, 10, 0, 200000, 0, -10};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.projected_epsg = 2263;
    CHECK_OK(trn_geotiff_write(tp("ft.tif"), &f, &g, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    trn_field_dispose(&f);
    trn_geotiff_info info;
    trn_error e;
    CHECK_OK(trn_geotiff_read_info(tp("ft.tif"), NULL, &info, &e));
    CHECK_EQ_INT(info.georef.linear_units, 0);
    CHECK(fabs(info.georef.crs_unit_metres - 1200.0 / 3937.0) < 1e-12);
    CHECK(fabs(info.georef.metres_per_pixel_x - 12000.0 / 3937.0) < 1e-9);
    CHECK(info.georef.units_known);

    /* A code PROJ does not know: read, and nothing printed by PROJ. */
    CHECK_OK(trn_field_init(&f, 9, 9, 9, 9, NULL));
    g.projected_epsg = 32799;
    CHECK_OK(trn_geotiff_write(tp("unknown.tif"), &f, &g, TRN_GEOTIFF_COMPRESS_NONE, NULL));
    trn_field_dispose(&f);
    CHECK_OK(trn_geotiff_read_info(tp("unknown.tif"), NULL, &info, &e));
    CHECK_EQ_INT(info.georef.projected_epsg, 32799);
    CHECK(info.georef.linear_unit_metres == 1.0); /* no unit key: metre, as before */
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("ft.tif")), 0);
    CHECK_CONTAINS(out, "EPSG:2263 (projected), datum EPSG:6269, unit 0.3048006096 m (implied by "
                        "the code)");
    CHECK_CONTAINS(out, "3.0480 x 3.0480 m per pixel");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, tp("unknown.tif")), 0);
    CHECK_CONTAINS(out, "EPSG:32799");
    CHECK(err && !strstr(err, "proj") && !strstr(err, "crs not found"));
    free(out), free(err);
    /* ... and reprojecting from it names the code. */
    CHECK(trn_test_run_clif("convert '%s' '%s' --crs utm", &out, &err, tp("unknown.tif"),
                            tp("x.r32")) != 0);
    CHECK_CONTAINS(err, "EPSG:32799 (the DEM's CRS) is not a CRS PROJ knows");
    free(out), free(err);
}

/* Heights in feet (VerticalUnitsGeoKey 9002) stay feet through convert to .tif: the key is
 * kept and the metres the loader made are written back in feet, so readers get 30.48 m. */
static void test_vertical_feet(void)
{
    trn_error e;
    /* Written by hand (not by the library under test). */
    static const TIFFFieldInfo fields[] = {
        {33550, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelPixelScale"},
        {33922, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelTiepoint"},
        {34735, -1, -1, TIFF_SHORT, FIELD_CUSTOM, 1, 1, (char *)"GeoKeyDirectory"},
    };
    TIFF *tif = TIFFOpen(tp("feet2.tif"), "w");
    CHECK(tif != NULL);
    if (!tif) return;
    for (int k = 0; k < 3; k++)
        if (!TIFFFindField(tif, fields[k].field_tag, TIFF_ANY))
            TIFFMergeFieldInfo(tif, &fields[k], 1);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, 4);
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, 4);
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 32);
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1);
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP);
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK);
    double scale[3] = {1, 1, 0}, tie[6] = {0, 0, 0, 500000, 4000000, 0};
    uint16_t keys[] = {1, 1, 0, 3, 1024, 0, 1, 1, 3072, 0, 1, 32633, 4099, 0, 1, 9002};
    TIFFSetField(tif, 33550, 3, scale);
    TIFFSetField(tif, 33922, 6, tie);
    TIFFSetField(tif, 34735, (int)(sizeof keys / sizeof keys[0]), keys);
    float row[4] = {100, 100, 100, 100};
    for (uint32_t r = 0; r < 4; r++)
        TIFFWriteScanline(tif, row, r, 0);
    TIFFClose(tif);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s'", &out, &err, tp("feet2.tif"),
                                   tp("feet_m.tif")),
                 0);
    free(out), free(err);
    trn_geotiff dem;
    CHECK_OK(trn_geotiff_read(tp("feet_m.tif"), NULL, &dem, NULL, NULL, &e));
    CHECK_EQ_INT(dem.info.georef.vertical_units, 9002);
    CHECK(dem.values && fabs(dem.values[0] - 100.0) < 1e-4);
    trn_field f;
    CHECK_OK(trn_geotiff_to_field(&dem, &f, &e));
    CHECK(fabs(f.heights[0] - 30.48) < 1e-4);
    trn_field_dispose(&f);
    trn_geotiff_dispose(&dem);
    /* Reprojected, the heights are metres and the file says so (no feet key). */
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s' --crs utm", &out, &err, tp("feet2.tif"),
                                   tp("feet_utm.tif")),
                 0);
    CHECK_CONTAINS(err, "to EPSG:32633");
    free(out), free(err);
    CHECK_OK(trn_geotiff_read(tp("feet_utm.tif"), NULL, &dem, NULL, NULL, &e));
    CHECK_EQ_INT(dem.info.georef.vertical_units, 0);
    CHECK(dem.values && fabs(dem.values[0] - 30.48) < 1e-4);
    trn_geotiff_dispose(&dem);
}

/* The shipped 30-arc-second SRTM tile of central Japan (EPSG:4326, 35.7 N) to a BeamNG level. */
static void test_real_srtm_level(void)
{
    char buf[1024];
    const char *dem = trn_test_real_path("dem_srtm30_central_japan.tif", buf, sizeof buf);
    if (!dem) {
        fprintf(stderr, "skip: ../shared/testdata/real is absent\n");
        return;
    }
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' 'beamng:%s' --pow2", &out, &err, dem,
                                   tp("jp/levels/jp")),
                 0);
    CHECK_CONTAINS(err, "reprojected from EPSG:4326 (WGS 84) to EPSG:32654 (WGS 84 / UTM zone "
                        "54N");
    CHECK_CONTAINS(err, "835.141 m cells");
    CHECK_CONTAINS(err, "validated");
    CHECK_CONTAINS(err, "0 error(s)");
    free(out), free(err);
    CHECK(trn_test_exists(tp("jp/levels/jp/theTerrain.ter")));
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_library_utm);
    RUN(test_library_average);
    RUN(test_cli_convert);
    RUN(test_cli_refusals);
    RUN(test_implied_units);
    RUN(test_vertical_feet);
    RUN(test_real_srtm_level);
    return trn_test_finish();
}
