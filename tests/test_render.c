/* Terrain pictures: analytic hillshades, orientation, palette, threads, and gdaldem itself. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/image.h"
#include "terrane/render.h"
#include "terrane/terragen.h"
#include "test.h"

#define PI 3.14159265358979323846

/* Field of cells_x x cells_z cells, heights h(x, z) in world units (x east, z north). */
static void make_plane(trn_field *f, uint32_t cx, uint32_t cz, double cell_x, double cell_z,
                       double a, double b)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, cx, cz, cx * cell_x, cz * cell_z, &e));
    for (uint32_t j = 0; j <= cz; j++)
        for (uint32_t i = 0; i <= cx; i++)
            f->heights[(size_t)j * (cx + 1) + i] = (float)(a * i * cell_x + b * j * cell_z);
}

/* A bumpy deterministic terrain with fractional heights (so GDAL reads it as Float32). */
static void make_bumpy(trn_field *f, uint32_t cx, uint32_t cz, double cell_x, double cell_z)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, cx, cz, cx * cell_x, cz * cell_z, &e));
    uint32_t state = 12345u;
    for (uint32_t j = 0; j <= cz; j++)
        for (uint32_t i = 0; i <= cx; i++) {
            state = state * 1664525u + 1013904223u;
            double noise = (double)(state >> 8) / 16777216.0;
            double h = 40.0 * sin(i * 0.21) * cos(j * 0.17) + 25.0 * sin((i + 2.0 * j) * 0.05) +
                       3.0 * noise + 100.25;
            if (i > cx / 2 && j > cz / 2) h += 0.9 * (double)(i + j); /* a sharp ramp */
            f->heights[(size_t)j * (cx + 1) + i] = (float)h;
        }
}

/* gdaldem's byte for a shade value: 1 + 254 * cang, 1 in shadow, rounded half up. */
static int expect_byte(double cang)
{
    double v = cang <= 0.0 ? 1.0 : 1.0 + 254.0 * cang;
    return (int)((float)v + 0.5f);
}

/* Analytic shade of a plane h = a x + b z lit from (azimuth, altitude). */
static double plane_cang(double a, double b, double az_deg, double alt_deg)
{
    double az = az_deg * PI / 180.0, alt = alt_deg * PI / 180.0;
    /* normal (-a, -b, 1) (east, north, up); light (sin az cos alt, cos az cos alt, sin alt) */
    return (-a * sin(az) * cos(alt) - b * cos(az) * cos(alt) + sin(alt)) / sqrt(1 + a * a + b * b);
}

static int px(const trn_raster8 *r, uint32_t row, uint32_t col)
{
    return r->pixels[((size_t)row * r->width + col) * r->channels];
}

static void test_flat(void)
{
    trn_field f;
    make_plane(&f, 6, 4, 2.0, 3.0, 0.0, 0.0);
    for (size_t k = 0; k < 35; k++)
        f.heights[k] = 57.5f;
    trn_raster8 r;
    trn_error e;
    CHECK_OK(trn_render_hillshade(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(r.width, 7);
    CHECK_EQ_INT(r.height, 5);
    CHECK_EQ_INT(r.channels, 1);
    int bad = 0;
    for (size_t k = 0; k < 35; k++)
        bad += r.pixels[k] != 181; /* 1 + 254 sin 45 = 180.6 */
    CHECK_EQ_INT(bad, 0);
    trn_raster8_dispose(&r);

    trn_render_options o;
    trn_render_options_default(&o);
    o.altitude = 30.0; /* 1 + 254 * 0.5 */
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 2, 3), 128);
    CHECK_EQ_INT(px(&r, 0, 0), 128);
    trn_raster8_dispose(&r);
    o.multidirectional = true;
    o.altitude = 45.0;
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 4, 6), 181);
    trn_raster8_dispose(&r);
    CHECK_OK(trn_render_slope(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 1, 1), 0);
    trn_raster8_dispose(&r);
    CHECK_OK(trn_render_height(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 1, 1), 128); /* flat: mid grey */
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);
}

/* A plane falling to the south-east (faces away from the default north-west light). */
static void test_tilted_plane(void)
{
    const double a = -0.4, b = 0.3; /* h falls to the east, rises to the north */
    trn_field f;
    make_plane(&f, 9, 7, 5.0, 2.5, a, b);
    trn_render_options o;
    trn_render_options_default(&o);
    trn_raster8 r;
    trn_error e;
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    int want = expect_byte(plane_cang(a, b, 315, 45));
    CHECK(want < 181);
    int bad = 0;
    for (uint32_t row = 0; row < r.height; row++)
        for (uint32_t col = 0; col < r.width; col++) {
            bool corner = (row == 0 || row == r.height - 1) && (col == 0 || col == r.width - 1);
            /* gdaldem clamps the neighbour column at the corners, halving the east-west
             * gradient there: the corner sees a plane with half of a. */
            int w = corner ? expect_byte(plane_cang(a / 2, b, 315, 45)) : want;
            if (px(&r, row, col) != w) bad++;
        }
    CHECK_EQ_INT(bad, 0);
    trn_raster8_dispose(&r);

    /* Light from the south-east, z-factor 2, scale 2 (cancel out), altitude 60. */
    o.azimuth = 135;
    o.altitude = 60;
    o.z_factor = 2;
    o.scale = 2;
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 3, 4), expect_byte(plane_cang(a, b, 135, 60)));
    CHECK(px(&r, 3, 4) > 181);
    trn_raster8_dispose(&r);

    /* Steep enough to be in full shadow: 1, never 0 (0 is nodata). */
    trn_field steep;
    make_plane(&steep, 4, 4, 1.0, 1.0, -5.0, 5.0);
    trn_render_options_default(&o);
    CHECK_OK(trn_render_hillshade(&steep, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 2, 2), 1);
    trn_raster8_dispose(&r);
    trn_field_dispose(&steep);

    /* Without compute_edges the border is nodata and the inside unchanged. */
    o.compute_edges = false;
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 0, 3), 0);
    CHECK_EQ_INT(px(&r, 3, 0), 0);
    CHECK_EQ_INT(px(&r, r.height - 1, 3), 0);
    CHECK_EQ_INT(px(&r, 3, r.width - 1), 0);
    CHECK_EQ_INT(px(&r, 3, 3), want);
    trn_raster8_dispose(&r);

    /* Multidirectional on the plane: 1 + 127 * sum over azimuths 225..360 of
     * sin^2(aspect - azimuth) * max(0, shade), aspect = atan2(north-south, west-east). */
    trn_render_options_default(&o);
    o.multidirectional = true;
    CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
    double aspect = atan2(b, -a), sum = 0;
    const double azimuths[4] = {225, 270, 315, 360};
    for (int k = 0; k < 4; k++) {
        double s = sin(aspect - azimuths[k] * PI / 180.0);
        sum += s * s * fmax(0.0, plane_cang(a, b, azimuths[k], 45));
    }
    CHECK_EQ_INT(px(&r, 3, 4), (int)((float)(1.0 + 127.0 * sum) + 0.5f));
    trn_raster8_dispose(&r);

    /* Slope: atan(|gradient|) in degrees over 0..90 -> 0..255. */
    CHECK_OK(trn_render_slope(&f, &o, &r, NULL, NULL, &e));
    double deg = atan(sqrt(a * a + b * b)) * 180.0 / PI;
    CHECK_EQ_INT(px(&r, 3, 4), (int)(deg * 255.0 / 90.0 + 0.5));
    CHECK_EQ_INT(px(&r, 0, 4), (int)(deg * 255.0 / 90.0 + 0.5)); /* edge extrapolated */
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);
}

/* Row 0 of the picture is north (the field's last row); column 0 is west. */
static void test_orientation(void)
{
    trn_field f;
    make_plane(&f, 4, 3, 1.0, 1.0, 0.0, 1.0); /* rises to the north */
    trn_raster8 r;
    trn_error e;
    CHECK_OK(trn_render_height(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 0, 0), 255);
    CHECK_EQ_INT(px(&r, 3, 4), 0);
    CHECK_EQ_INT(px(&r, 1, 2), 170); /* 2/3 of the way up */
    trn_raster8_dispose(&r);
    /* Rising to the north, the slope faces south, away from the north-west light. */
    CHECK_OK(trn_render_hillshade(&f, NULL, &r, NULL, NULL, &e));
    CHECK(px(&r, 1, 1) < 181);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);

    make_plane(&f, 4, 3, 1.0, 1.0, 1.0, 0.0); /* rises to the east */
    trn_render_options o;
    trn_render_options_default(&o);
    o.height_min = 1.0;
    o.height_max = 3.0; /* clamps below 1 and above 3 */
    CHECK_OK(trn_render_height(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 0, 0), 0);
    CHECK_EQ_INT(px(&r, 2, 1), 0);
    CHECK_EQ_INT(px(&r, 2, 2), 128);
    CHECK_EQ_INT(px(&r, 2, 4), 255);
    trn_raster8_dispose(&r);
    f.heights[0] = NAN; /* field (0, 0) = picture bottom-left */
    CHECK_OK(trn_render_height(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 3, 0), 0);
    CHECK_EQ_INT(px(&r, 3, 4), 255);
    trn_raster8_dispose(&r);
    CHECK_OK(trn_render_hillshade(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 3, 0), 0); /* NaN in the window: nodata */
    CHECK_EQ_INT(px(&r, 0, 4), expect_byte(plane_cang(0.5, 0, 315, 45))); /* corner: a/2 */
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);
}

static void test_palette(void)
{
    uint8_t c[32][4];
    for (uint32_t k = 0; k < 32; k++) {
        trn_render_label_color(k, c[k]);
        CHECK_EQ_INT(c[k][3], 255);
        int sum = c[k][0] + c[k][1] + c[k][2];
        CHECK(sum > 60 && sum < 3 * 240); /* neither black nor white */
    }
    int close = 0;
    for (int i = 0; i < 32; i++)
        for (int j = i + 1; j < 32; j++) {
            int d = abs(c[i][0] - c[j][0]) + abs(c[i][1] - c[j][1]) + abs(c[i][2] - c[j][2]);
            if (d < 45) close++;
        }
    CHECK_EQ_INT(close, 0);
    uint8_t hole[4], dark[4], again[4];
    trn_render_label_color(255, hole);
    CHECK(hole[0] == 0 && hole[1] == 0 && hole[2] == 0 && hole[3] == 0);
    trn_render_label_color(32, dark);
    CHECK_EQ_INT(dark[0], (c[0][0] * 70 + 50) / 100);
    trn_render_label_color(128, again);
    CHECK(memcmp(again, c[0], 4) == 0);

    trn_labels l;
    trn_error e;
    CHECK_OK(trn_labels_init(&l, 3, 2, &e));
    l.values[2 * 4 + 0] = 5;   /* field (0, 2): north-west corner */
    l.values[0 * 4 + 3] = 255; /* field (3, 0): south-east corner, a hole */
    l.values[1 * 4 + 1] = 40;
    trn_raster8 r;
    CHECK_OK(trn_render_layers(&l, &r, NULL, NULL, &e));
    CHECK_EQ_INT(r.channels, 4);
    CHECK_EQ_INT(r.width, 4);
    CHECK_EQ_INT(r.height, 3);
    uint8_t want[4];
    trn_render_label_color(5, want);
    CHECK(memcmp(r.pixels, want, 4) == 0);
    CHECK(memcmp(r.pixels + (2 * 4 + 3) * 4, hole, 4) == 0);
    trn_render_label_color(40, want);
    CHECK(memcmp(r.pixels + (1 * 4 + 1) * 4, want, 4) == 0);
    CHECK(memcmp(r.pixels + (1 * 4 + 2) * 4, c[0], 4) == 0);
    trn_raster8_dispose(&r);
    trn_labels_dispose(&l);
    CHECK_STATUS(trn_render_layers(&l, &r, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
}

typedef struct progress_log {
    int calls, cancel_at;
    double last;
    bool monotonic;
} progress_log;

static int on_progress(double done, const char *stage, void *user)
{
    progress_log *p = user;
    (void)stage;
    if (done < p->last) p->monotonic = false;
    p->last = done;
    p->calls++;
    return p->calls == p->cancel_at ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_threads_progress_cancel(void)
{
    trn_field f;
    make_bumpy(&f, 300, 211, 2.0, 2.0);
    trn_render_options o;
    trn_render_options_default(&o);
    trn_raster8 one, many;
    trn_error e;
#ifdef _OPENMP
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_render_hillshade(&f, &o, &one, NULL, NULL, &e));
#ifdef _OPENMP
    omp_set_num_threads(7);
#endif
    CHECK_OK(trn_render_hillshade(&f, &o, &many, NULL, NULL, &e));
    CHECK(memcmp(one.pixels, many.pixels, (size_t)one.width * one.height) == 0);
    trn_raster8_dispose(&one);
    trn_raster8_dispose(&many);
    o.multidirectional = true;
    CHECK_OK(trn_render_hillshade(&f, &o, &many, NULL, NULL, &e));
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_render_hillshade(&f, &o, &one, NULL, NULL, &e));
    CHECK(memcmp(one.pixels, many.pixels, (size_t)one.width * one.height) == 0);
    trn_raster8_dispose(&one);
    trn_raster8_dispose(&many);
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif

    /* Golden hash of the default hillshade (FNV-1a): pins the output bit for bit. */
    trn_render_options_default(&o);
    CHECK_OK(trn_render_hillshade(&f, &o, &one, NULL, NULL, &e));
    uint64_t hash = 1469598103934665603ull;
    for (size_t k = 0; k < (size_t)one.width * one.height; k++)
        hash = (hash ^ one.pixels[k]) * 1099511628211ull;
    if (hash != 0x24fc52ae70bbbbfaull)
        fprintf(stderr, "hillshade golden hash is %016llx\n", (unsigned long long)hash);
    CHECK(hash == 0x24fc52ae70bbbbfaull);
    trn_raster8_dispose(&one);

    progress_log log = {0, 0, -1.0, true};
    CHECK_OK(trn_render_slope(&f, &o, &one, on_progress, &log, &e));
    CHECK(log.calls >= 3);
    CHECK(log.monotonic);
    CHECK(log.last == 1.0);
    trn_raster8_dispose(&one);

    trn_raster8 untouched = {7, 7, 7, NULL};
    progress_log stop = {0, 2, -1.0, true};
    CHECK_STATUS(trn_render_hillshade(&f, &o, &untouched, on_progress, &stop, &e),
                 TRN_ERR_CANCELLED);
    CHECK(untouched.width == 7 && untouched.pixels == NULL);
    CHECK_EQ_INT(stop.calls, 2);
    trn_field_dispose(&f);

    /* Bad arguments. */
    CHECK_STATUS(trn_render_hillshade(&f, &o, &untouched, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    make_plane(&f, 2, 2, 1.0, 1.0, 0, 0);
    o.scale = 0;
    CHECK_STATUS(trn_render_hillshade(&f, &o, &untouched, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    f.size_x = -1;
    CHECK_STATUS(trn_render_slope(&f, NULL, &untouched, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "cell size");
    trn_field_dispose(&f);
}

/* ---- gdaldem equivalence ---- */

static bool have_gdaldem(void)
{
    return system("command -v gdaldem >/dev/null 2>&1") == 0;
}

/* Esri ASCII grid, north row first; dx/dy lines (GDAL's extension) for non-square cells. */
static bool write_asc(const char *path, const trn_field *f)
{
    FILE *fp = fopen(path, "w");
    if (!fp) return false;
    uint32_t w = f->cells_x + 1, h = f->cells_z + 1;
    double dx = f->size_x / f->cells_x, dy = f->size_z / f->cells_z;
    fprintf(fp, "ncols %u\nnrows %u\nxllcorner 0\nyllcorner 0\n", w, h);
    if (dx == dy)
        fprintf(fp, "cellsize %.17g\n", dx);
    else
        fprintf(fp, "dx %.17g\ndy %.17g\n", dx, dy);
    for (uint32_t r = 0; r < h; r++) {
        for (uint32_t c = 0; c < w; c++)
            fprintf(fp, "%s%.9g", c ? " " : "", (double)f->heights[(size_t)(h - 1 - r) * w + c]);
        fputc('\n', fp);
    }
    return fclose(fp) == 0;
}

/* Run gdaldem with extra options on in.asc, read its raw ENVI Byte output. */
static uint8_t *run_gdaldem(const char *dir, const char *mode, const char *extra, size_t expect)
{
    char cmd[2048], out[600];
    snprintf(out, sizeof out, "%s/out_%s.bin", dir, mode);
    snprintf(cmd, sizeof cmd, "gdaldem %s -q -compute_edges %s -of ENVI '%s/in.asc' '%s'", mode,
             extra, dir, out);
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        return NULL;
    }
    size_t size;
    uint8_t *data = trn_test_read_file(out, &size);
    if (data && size != expect) {
        fprintf(stderr, "%s: %zu bytes, expected %zu\n", out, size, expect);
        free(data);
        return NULL;
    }
    return data;
}

static int compare_with_gdal(const char *dir, const trn_field *f, const trn_render_options *o,
                             const char *extra, const char *label)
{
    trn_raster8 r;
    trn_error e;
    CHECK_OK(trn_render_hillshade(f, o, &r, NULL, NULL, &e));
    size_t n = (size_t)r.width * r.height;
    uint8_t *g = run_gdaldem(dir, "hillshade", extra, n);
    CHECK(g != NULL);
    int max_diff = 0;
    size_t differ = 0;
    if (g) {
        for (size_t k = 0; k < n; k++) {
            int d = abs((int)r.pixels[k] - (int)g[k]);
            if (d) differ++;
            if (d > max_diff) max_diff = d;
        }
        printf("gdaldem hillshade %-40s %zu pixels: max difference %d, %zu differ\n", label, n,
               max_diff, differ);
    }
    CHECK(max_diff <= 1);
    CHECK(differ * 1000 <= n); /* off-by-one rounding at most on 0.1% of pixels */
    free(g);
    trn_raster8_dispose(&r);
    return max_diff;
}

static void test_gdaldem(void)
{
    if (!have_gdaldem()) {
        printf("gdaldem not found: equivalence test skipped\n");
        return;
    }
    char dir[512], path[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/in.asc", dir);

    trn_field f;
    make_bumpy(&f, 120, 90, 10.0, 10.0);
    CHECK(write_asc(path, &f));
    trn_render_options o;
    trn_render_options_default(&o);
    compare_with_gdal(dir, &f, &o, "", "defaults");
    o.azimuth = 200;
    o.altitude = 30;
    o.z_factor = 2.5;
    compare_with_gdal(dir, &f, &o, "-az 200 -alt 30 -z 2.5", "-az 200 -alt 30 -z 2.5");
    trn_render_options_default(&o);
    o.multidirectional = true;
    compare_with_gdal(dir, &f, &o, "-multidirectional", "-multidirectional");
    o.z_factor = 4;
    o.altitude = 55;
    compare_with_gdal(dir, &f, &o, "-multidirectional -z 4 -alt 55",
                      "-multidirectional -z 4 -alt 55");
    trn_render_options_default(&o);
    o.scale = 3;
    compare_with_gdal(dir, &f, &o, "-s 3", "-s 3");
    trn_field_dispose(&f);

    /* Non-square cells take gdaldem's general path. */
    make_bumpy(&f, 77, 64, 4.0, 6.5);
    CHECK(write_asc(path, &f));
    trn_render_options_default(&o);
    compare_with_gdal(dir, &f, &o, "", "non-square cells 4 x 6.5");
    o.multidirectional = true;
    compare_with_gdal(dir, &f, &o, "-multidirectional", "non-square cells, -multidirectional");

    /* gdaldem slope (Float32 degrees) against our 0..90 -> 0..255 bytes. */
    {
        trn_raster8 r;
        trn_error e;
        trn_render_options_default(&o);
        CHECK_OK(trn_render_slope(&f, &o, &r, NULL, NULL, &e));
        size_t n = (size_t)r.width * r.height;
        uint8_t *g = run_gdaldem(dir, "slope", "", n * 4);
        CHECK(g != NULL);
        int max_diff = 0;
        for (size_t k = 0; g && k < n; k++) {
            float deg;
            memcpy(&deg, g + 4 * k, 4);
            int want = (int)((float)(deg * (255.0 / 90.0)) + 0.5f);
            int d = abs(want - (int)r.pixels[k]);
            if (d > max_diff) max_diff = d;
        }
        printf("gdaldem slope (non-square cells): max difference %d\n", max_diff);
        CHECK(max_diff <= 1);
        free(g);
        trn_raster8_dispose(&r);
    }
    trn_field_dispose(&f);

    /* Steep terrain: a lot of pixels in shadow (value 1). */
    make_bumpy(&f, 50, 50, 0.5, 0.5);
    CHECK(write_asc(path, &f));
    trn_render_options_default(&o);
    compare_with_gdal(dir, &f, &o, "", "steep (0.5 m cells)");
    trn_field_dispose(&f);
}

/* ---- the render verb ---- */

/* A version-9 BeamNG .ter of 4 x 4 samples: heights rise to the north, layer = x + (y == 3),
 * and one hole at x 3, y 0 (the south-east corner). */
static bool write_small_ter(const char *path)
{
    uint8_t b[5 + 32 + 16 + 4 + 4];
    size_t n = 0;
    b[n++] = 9;
    b[n++] = 4, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++) {
            uint16_t h = (uint16_t)(1000 * y + 10 * x);
            b[n++] = (uint8_t)h, b[n++] = (uint8_t)(h >> 8);
        }
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            b[n++] = (uint8_t)(x == 3 && y == 0 ? 255 : x + (y == 3));
    b[n++] = 2, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    b[n++] = 1, b[n++] = 'a';
    b[n++] = 1, b[n++] = 'b';
    return trn_test_write_file(path, b, n);
}

static void test_cli(void)
{
    char dir[512], in[600], out[600], args[2048];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    char *so = NULL, *se = NULL;
    int rc;

    rc = trn_test_run_cli("render --help", &so, &se);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(so, "examples:");
    CHECK_CONTAINS(so, "--multidirectional");
    free(so), free(se);

    /* Layers of a small BeamNG .ter, north up, holes transparent. */
    snprintf(in, sizeof in, "%s/small.ter", dir);
    snprintf(out, sizeof out, "%s/layers.png", dir);
    CHECK(write_small_ter(in));
    snprintf(args, sizeof args, "render '%s' -o '%s' --mode layers --format json", in, out);
    rc = trn_test_run_cli(args, &so, &se);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(so, "\"mode\": \"layers\"");
    CHECK_CONTAINS(so, "\"channels\": 4");
    free(so), free(se);
    trn_image img;
    trn_error e;
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.width, 4);
        CHECK_EQ_INT(img.channels, 4);
        const uint8_t *p = img.data;
        uint8_t want[4];
        trn_render_label_color(0 + 1, want); /* top-left = x 0 of the north row (y 3) */
        CHECK(memcmp(p, want, 4) == 0);
        trn_render_label_color(2, want); /* row 1 = y 2, x 2 */
        CHECK(memcmp(p + (1 * 4 + 2) * 4, want, 4) == 0);
        CHECK_EQ_INT(p[(3 * 4 + 3) * 4 + 3], 0); /* bottom-right: the hole */
        trn_image_dispose(&img);
    } else {
        CHECK(!"layers.png unreadable");
    }

    /* Height mode on the same file: north row white. */
    snprintf(out, sizeof out, "%s/height.png", dir);
    snprintf(args, sizeof args, "render '%s' -o '%s' --mode height -q", in, out);
    CHECK_EQ_INT(trn_test_run_cli(args, NULL, NULL), 0);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        const uint8_t *p = img.data;
        CHECK_EQ_INT(img.channels, 1);
        CHECK_EQ_INT(p[3], 255);
        CHECK_EQ_INT(p[12], 0);
        trn_image_dispose(&img);
    }

    /* Layers of a file without any: a clear error, exit 1. */
    char real[1024];
    const char *tg = trn_test_real_path("terragen_RealisticTerrain.ter", real, sizeof real);
    if (tg) {
        snprintf(args, sizeof args, "render '%s' -o '%s/x.png' --mode layers", tg, dir);
        rc = trn_test_run_cli(args, &so, &se);
        CHECK_EQ_INT(rc, 1);
        CHECK_CONTAINS(se, "has no material layers");
        free(so), free(se);

        /* The verb's hillshade is the library's, pixel for pixel. */
        snprintf(out, sizeof out, "%s/relief.png", dir);
        snprintf(args, sizeof args, "render '%s' '%s' --multidirectional -q", tg, out);
        CHECK_EQ_INT(trn_test_run_cli(args, NULL, NULL), 0);
        trn_terragen t;
        trn_field f;
        trn_raster8 r;
        trn_render_options o;
        trn_render_options_default(&o);
        o.multidirectional = true;
        CHECK_OK(trn_terragen_read(tg, NULL, &t, &e));
        CHECK_OK(trn_terragen_to_field(&t, &f, &e));
        CHECK_OK(trn_render_hillshade(&f, &o, &r, NULL, NULL, &e));
        if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
            CHECK_EQ_INT(img.width, 257);
            CHECK_EQ_INT(img.height, 257);
            CHECK(memcmp(img.data, r.pixels, 257u * 257u) == 0);
            trn_image_dispose(&img);
        } else {
            CHECK(!"relief.png unreadable");
        }
        trn_raster8_dispose(&r);
        trn_field_dispose(&f);
        trn_terragen_dispose(&t);
    }

    /* Usage errors exit 2 and say what is wrong; failures exit 1. */
    static const struct {
        const char *args;
        int rc;
        const char *text;
    } cases[] = {
        {"render", 2, "needs an input file"},
        {"render IN", 2, "needs an output picture"},
        {"render IN -o out.jpg", 2, "name the output .png"},
        {"render IN -o x.png --mode contour", 2, "--mode takes hillshade"},
        {"render IN -o x.png --altitude 95", 2, "--altitude must be 0 to 90"},
        {"render IN -o x.png --altitude 90.5", 2, "--altitude must be 0 to 90 degrees, not 90.5"},
        {"render IN -o x.png --altitude -0.5", 2, "--altitude must be 0 to 90"},
        {"render IN -o x.png --z-factor abc", 2, "expects a finite number"},
        {"render IN -o x.png --z-factor 0", 2, "--z-factor must be positive"},
        {"render IN -o x.png --height-range 5,1", 2, "--height-range expects LO,HI"},
        {"render IN -o x.png --frobnicate 1", 2, "unknown option"},
        {"render IN -o x.png --azimuth", 2, "needs a value"},
        {"render x.png -o x.png", 2, "same file"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char a[1024];
        const char *at = strstr(cases[k].args, "IN");
        if (at)
            snprintf(a, sizeof a, "%.*s'%s'%s", (int)(at - cases[k].args), cases[k].args, in,
                     at + 2);
        else
            snprintf(a, sizeof a, "%s", cases[k].args);
        rc = trn_test_run_cli(a, &so, &se);
        CHECK_EQ_INT(rc, cases[k].rc);
        CHECK_CONTAINS(se, cases[k].text);
        free(so), free(se);
    }
    snprintf(args, sizeof args, "render '%s/missing.ter' -o '%s/m.png'", dir, dir);
    rc = trn_test_run_cli(args, &so, &se);
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(se, "missing.ter");
    free(so), free(se);
}

int main(void)
{
    RUN(test_flat);
    RUN(test_tilted_plane);
    RUN(test_orientation);
    RUN(test_palette);
    RUN(test_threads_progress_cancel);
    RUN(test_gdaldem);
    RUN(test_cli);
    return trn_test_finish();
}
