/* Terrain pictures: analytic hillshades, aspect, colour relief, material colours, legends,
 * orientation, threads, gdaldem itself, and the render verb. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <jansson.h>

#include "terrane/image.h"
#include "terrane/render.h"
#include "terrane/terragen.h"
#include "test.h"

#define PI 3.14159265358979323846
/* FNV-1a of the aspect of make_bumpy(300, 211, 2, 2). */
#define ASPECT_GOLDEN 0xdb0b902934bfad77ull

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

/* ---- aspect ---- */

static int aspect_byte(double degrees)
{
    return (int)((float)(1.0 + degrees * 254.0 / 360.0) + 0.5f);
}

static void test_aspect(void)
{
    static const struct {
        double a, b; /* h = a x + b z */
        bool trig;
        int want; /* hand-computed: the downhill direction */
    } planes[] = {
        {1, 0, false, 192},   /* rises east, faces west: 270 -> 1 + 190.5 */
        {-1, 0, false, 65},   /* faces east: 90 -> 1 + 63.5 */
        {0, 1, false, 128},   /* rises north, faces south: 180 */
        {0, -1, false, 1},    /* faces north: 0 */
        {1, 1, false, 160},   /* faces south-west: 225 -> 1 + 158.75 */
        {-2, 0.5, false, 74}, /* east by south: 90 + atan(1 / 4) = 104.04 -> 74.4 */
        {1, 0, true, 128},    /* trigonometric: west is 180 */
        {0, 1, true, 192},    /* south is 270 */
        {-1, 0, true, 1},     /* east is 0 */
    };
    trn_raster8 r;
    trn_error e;
    trn_render_options o;
    for (size_t k = 0; k < sizeof planes / sizeof planes[0]; k++) {
        trn_field f;
        make_plane(&f, 5, 4, 1.0, 1.0, planes[k].a, planes[k].b);
        trn_render_options_default(&o);
        o.trigonometric = planes[k].trig;
        CHECK_OK(trn_render_aspect(&f, &o, &r, NULL, NULL, &e));
        CHECK_EQ_INT(r.channels, 1);
        CHECK_EQ_INT(r.width, 6);
        CHECK_EQ_INT(r.height, 5);
        CHECK_EQ_INT(px(&r, 2, 3), planes[k].want);
        CHECK_EQ_INT(px(&r, 0, 2), planes[k].want); /* an edge row: extrapolated */
        trn_raster8_dispose(&r);
        trn_field_dispose(&f);
    }
    CHECK_EQ_INT(aspect_byte(90.0 + atan(0.25) * 180.0 / PI), 74);

    /* At a corner gdaldem clamps the neighbour column: the east-west sum is halved. */
    trn_field f;
    make_plane(&f, 5, 4, 1.0, 1.0, 1, 1);
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 0, 0), aspect_byte(270.0 - atan2(8.0, 4.0) * 180.0 / PI));
    CHECK_EQ_INT(px(&r, 0, 0), 147);
    trn_raster8_dispose(&r);
    /* Without compute_edges the border has no aspect. */
    trn_render_options_default(&o);
    o.compute_edges = false;
    CHECK_OK(trn_render_aspect(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 0, 2), 0);
    CHECK_EQ_INT(px(&r, 2, 0), 0);
    CHECK_EQ_INT(px(&r, 4, 2), 0);
    CHECK_EQ_INT(px(&r, 2, 5), 0);
    CHECK_EQ_INT(px(&r, 2, 2), 160);
    trn_raster8_dispose(&r);
    /* A NaN in the window: no aspect there, the rest untouched. */
    f.heights[2 * 6 + 2] = NAN; /* field (2, 2) = picture row 2, column 2 */
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 1, 1), 0);
    CHECK_EQ_INT(px(&r, 3, 3), 0);
    CHECK_EQ_INT(px(&r, 2, 4), 160);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);

    /* Non-square cells: like gdaldem, the window's differences alone (1 x 4 m cells, a plane
     * rising 1 m per metre both ways: 8 east, -32 south in the sums, not 225 degrees). */
    make_plane(&f, 5, 4, 1.0, 4.0, 1, 1);
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 2, 2), aspect_byte(270.0 - atan2(32.0, 8.0) * 180.0 / PI));
    CHECK_EQ_INT(px(&r, 2, 2), 138);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);

    /* Flat: no aspect (gdaldem -9999), or north with zero_for_flat. */
    make_plane(&f, 3, 3, 1.0, 1.0, 0, 0);
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 1, 1), 0);
    trn_raster8_dispose(&r);
    trn_render_options_default(&o);
    o.zero_for_flat = true;
    CHECK_OK(trn_render_aspect(&f, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 1, 1), 1);
    CHECK_EQ_INT(px(&r, 0, 0), 1);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);

    /* Almost due north from the west side: 359.x degrees is the top byte, 255 (never 0). */
    make_plane(&f, 4, 4, 1.0, 1.0, 0.001, -1);
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK_EQ_INT(px(&r, 2, 2), 255);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);

    /* Pinned bit for bit, and the same on any thread count. */
    make_bumpy(&f, 300, 211, 2.0, 2.0);
    trn_raster8 one;
#ifdef _OPENMP
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_render_aspect(&f, NULL, &one, NULL, NULL, &e));
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    CHECK_OK(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e));
    CHECK(memcmp(one.pixels, r.pixels, (size_t)r.width * r.height) == 0);
    uint64_t hash = 1469598103934665603ull;
    for (size_t k = 0; k < (size_t)r.width * r.height; k++)
        hash = (hash ^ r.pixels[k]) * 1099511628211ull;
    if (hash != ASPECT_GOLDEN)
        fprintf(stderr, "aspect golden hash is %016llx\n", (unsigned long long)hash);
    CHECK(hash == ASPECT_GOLDEN);
    trn_raster8_dispose(&one);
    trn_raster8_dispose(&r);
    trn_field_dispose(&f);
    CHECK_STATUS(trn_render_aspect(&f, NULL, &r, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
}

/* ---- colour tables ---- */

static trn_status parse_table(const char *text, trn_color_table *t, trn_error *e)
{
    return trn_color_table_parse(text, strlen(text), "c.txt", t, e);
}

static void test_color_table_parse(void)
{
    trn_color_table t;
    trn_error e;
    const char *text = "# heights\n/ also a comment\n\n100 10 20 30\n50%,white\nnv:0:0:0:0\n"
                       "  200\t1 2 3 4\n-5.5 Brown 128\r\n1e2 GREY\n0% 0 0 0 255\n100% aqua\n";
    CHECK_OK(parse_table(text, &t, &e));
    CHECK_EQ_INT(t.count, 8);
    if (t.count == 8) {
        const trn_color_entry *c = t.entries;
        CHECK(c[0].height == 100 && !c[0].percent && !c[0].nodata && c[0].line == 4);
        CHECK(c[0].rgba[0] == 10 && c[0].rgba[1] == 20 && c[0].rgba[2] == 30 &&
              c[0].rgba[3] == 255);
        CHECK(c[1].height == 50 && c[1].percent && c[1].line == 5);
        CHECK(c[1].rgba[0] == 255 && c[1].rgba[1] == 255 && c[1].rgba[2] == 255);
        CHECK(c[2].nodata && c[2].rgba[3] == 0 && c[2].line == 6);
        CHECK(c[3].height == 200 && c[3].rgba[3] == 4 && c[3].line == 7);
        CHECK(c[4].height == -5.5 && c[4].rgba[0] == 191 && c[4].rgba[1] == 127 &&
              c[4].rgba[2] == 63 && c[4].rgba[3] == 128 && c[4].line == 8);
        CHECK(c[5].height == 100 && c[5].rgba[0] == 191 && c[5].rgba[3] == 255);
        CHECK(c[6].height == 0 && c[6].percent);
        CHECK(c[7].height == 100 && c[7].percent && c[7].rgba[0] == 0 && c[7].rgba[1] == 191);
    }
    trn_color_table_dispose(&t);
    CHECK(t.entries == NULL && t.count == 0);
    trn_color_table_dispose(NULL);
    /* A UTF-8 byte order mark is skipped. */
    CHECK_OK(parse_table("\xef\xbb\xbf"
                         "7 1 2 3\n",
                         &t, &e));
    CHECK(t.count == 1 && t.entries[0].height == 7);
    trn_color_table_dispose(&t);

    /* Every error is located: line, column, offset, and says what was expected. */
    static const struct {
        const char *text;
        int line, column;
        const char *says;
    } bad[] = {
        {"100 10 20\n", 1, 10, "expected R G B [A] (whole numbers 0 to 255), found 2 numbers"},
        {"1 2 3 4\n100 10\n", 2, 7, "found 1 number"},
        {"abc 1 2 3\n", 1, 1, "expected a height (a number, 'P%' or 'nv'), found 'abc'"},
        {"# x\n101% 1 2 3\n", 2, 1, "expected a percentage 0% to 100%, found '101%'"},
        {"-0.5% 1 2 3\n", 1, 1, "expected a percentage"},
        {"5 256 0 0\n", 1, 3, "expected red as a whole number 0 to 255, found '256'"},
        {"5 0 -1 0\n", 1, 5, "expected green"},
        {"5 0 0 x\n", 1, 7, "expected blue"},
        {"5 0 0 0 256\n", 1, 9, "expected alpha as a whole number 0 to 255, found '256'"},
        {"5 white 300\n", 1, 9, "expected alpha"},
        {"5 1 2 3 4 5\n", 1, 11, "expected at most 5 fields (HEIGHT R G B A), found '5'"},
        {"5\n", 1, 2, "expected a colour after the height"},
        {"5 chartreuse\n", 1, 3, "expected R G B or a colour name"},
        {"nv 1 2 3\nNV 4 5 6\n", 2, 1, "a second 'nv' entry"},
        {"\xff\xfe"
         "1\0 2",
         1, 1, "UTF-16"},
        {"# COLOR_MODEL = RGB\n0 0 0 0\n", 1, 1, "a GMT colour palette"},
        {"1e999 1 2 3\n", 1, 1, "expected a height"},
        {"nan 1 2 3\n", 1, 1, "expected a height"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        trn_error_clear(&e);
        size_t len = strlen(bad[k].text);
        if (bad[k].text[0] == '\xff') len = 6;
        CHECK_STATUS(trn_color_table_parse(bad[k].text, len, "c.txt", &t, &e), TRN_ERR_FORMAT);
        CHECK_EQ_INT(e.line, bad[k].line);
        CHECK_EQ_INT(e.column, bad[k].column);
        CHECK_CONTAINS(e.message, bad[k].says);
        CHECK(strcmp(e.file, "c.txt") == 0);
        CHECK(t.entries == NULL && t.count == 0);
    }
    /* The offset is the byte of the column. */
    CHECK_STATUS(parse_table("0 0 0 0\n5 256 0 0\n", &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 10);
    /* A NUL byte inside a line. */
    CHECK_STATUS(trn_color_table_parse("1 2\0003 4\n", 8, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.column, 4);
    CHECK_CONTAINS(e.message, "NUL");
    /* Nothing but comments, blank lines and separators. */
    CHECK_STATUS(parse_table("# a\n\n , \n", &t, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "no colour entries");
    CHECK_STATUS(parse_table("", &t, &e), TRN_ERR_FORMAT);

    /* Files: the size limit itself is read, one byte more refused. */
    char dir[512], path[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/limit.txt", dir);
    size_t n = TRN_COLOR_TABLE_MAX_BYTES;
    char *big = malloc(n + 1);
    memset(big, '#', n + 1);
    memcpy(big + n - 9, "\n0 1 2 3\n", 9);
    CHECK(trn_test_write_file(path, big, n));
    CHECK_OK(trn_color_table_read(path, &t, &e));
    CHECK(t.count == 1 && t.entries[0].line == 2);
    trn_color_table_dispose(&t);
    memcpy(big + n - 8, "\n0 1 2 3\n", 9);
    CHECK(trn_test_write_file(path, big, n + 1));
    CHECK_STATUS(trn_color_table_read(path, &t, &e), TRN_ERR_LIMIT);
    free(big);
    snprintf(path, sizeof path, "%s/none.txt", dir);
    CHECK_STATUS(trn_color_table_read(path, &t, &e), TRN_ERR_NOT_FOUND);
}

/* A 4 x 1 cell field (5 x 2 samples) with the given 10 heights, picture order (north row
 * first). */
static void make_row_field(trn_field *f, const float north[5], const float south[5])
{
    trn_error e;
    CHECK_OK(trn_field_init(f, 4, 1, 4.0, 1.0, &e));
    for (int i = 0; i < 5; i++) {
        f->heights[5 + i] = north[i];
        f->heights[i] = south[i];
    }
}

static void expect_rgba(const trn_raster8 *r, uint32_t row, uint32_t col, int cr, int cg, int cb,
                        int ca, int line)
{
    const uint8_t *p = r->pixels + ((size_t)row * r->width + col) * r->channels;
    bool ok = p[0] == cr && p[1] == cg && p[2] == cb && (r->channels < 4 || p[3] == ca);
    CHECK(ok);
    if (!ok)
        fprintf(stderr, "  line %d: pixel (%u, %u) is %d %d %d %d, expected %d %d %d %d\n", line,
                row, col, p[0], p[1], p[2], r->channels == 4 ? p[3] : 255, cr, cg, cb, ca);
}
#define EXPECT_RGBA(r, row, col, cr, cg, cb, ca) expect_rgba(r, row, col, cr, cg, cb, ca, __LINE__)

static void test_color_relief(void)
{
    trn_color_table t;
    trn_error e;
    /* Two entries at 100 make a sharp step; file order is not height order. */
    CHECK_OK(parse_table("100 200 100 50\n200 255 255 255 128\n0 0 0 0\n100 0 0 255\n", &t, &e));
    const float north[5] = {-10, 0, 25, 50, 100}, south[5] = {150, 300, 200, 75, NAN};
    trn_field f;
    make_row_field(&f, north, south);
    trn_render_options o;
    trn_render_options_default(&o);
    o.color_alpha = true;
    trn_raster8 r;
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(r.channels, 4);
    CHECK_EQ_INT(r.width, 5);
    CHECK_EQ_INT(r.height, 2);
    EXPECT_RGBA(&r, 0, 0, 0, 0, 0, 255);       /* below the first entry: its colour */
    EXPECT_RGBA(&r, 0, 1, 0, 0, 0, 255);       /* on it */
    EXPECT_RGBA(&r, 0, 2, 50, 25, 13, 255);    /* (int)(0.5 + 0.25 * c): 50.5, 25.5, 13 */
    EXPECT_RGBA(&r, 0, 3, 100, 50, 25, 255);   /* half-way to the first entry at 100 */
    EXPECT_RGBA(&r, 0, 4, 200, 100, 50, 255);  /* at 100: the first of the two */
    EXPECT_RGBA(&r, 1, 0, 128, 128, 255, 192); /* from the last at 100 to 200 */
    EXPECT_RGBA(&r, 1, 1, 255, 255, 255, 128); /* above the last entry: its colour */
    EXPECT_RGBA(&r, 1, 2, 255, 255, 255, 128);
    EXPECT_RGBA(&r, 1, 3, 150, 75, 38, 255); /* 75: 150.5, 75.5, 38 */
    EXPECT_RGBA(&r, 1, 4, 0, 0, 0, 0);       /* NaN without an nv entry */
    trn_raster8_dispose(&r);

    /* RGB without alpha, as gdaldem without -alpha. */
    trn_render_options_default(&o);
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    CHECK_EQ_INT(r.channels, 3);
    EXPECT_RGBA(&r, 0, 3, 100, 50, 25, 255);
    trn_raster8_dispose(&r);

    /* Nearest: ties go up. */
    o.color_match = TRN_COLOR_NEAREST;
    o.color_alpha = true;
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    EXPECT_RGBA(&r, 0, 2, 0, 0, 0, 255);       /* 25: nearer 0 */
    EXPECT_RGBA(&r, 0, 3, 200, 100, 50, 255);  /* 50: half-way, the upper */
    EXPECT_RGBA(&r, 1, 0, 255, 255, 255, 128); /* 150: half-way, the upper */
    EXPECT_RGBA(&r, 1, 3, 200, 100, 50, 255);
    trn_raster8_dispose(&r);

    /* Exact: only entries; everything else transparent black, ends included. */
    o.color_match = TRN_COLOR_EXACT;
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    EXPECT_RGBA(&r, 0, 0, 0, 0, 0, 0);
    EXPECT_RGBA(&r, 0, 1, 0, 0, 0, 255);
    EXPECT_RGBA(&r, 0, 2, 0, 0, 0, 0);
    EXPECT_RGBA(&r, 0, 4, 200, 100, 50, 255);
    EXPECT_RGBA(&r, 1, 1, 0, 0, 0, 0);
    EXPECT_RGBA(&r, 1, 2, 255, 255, 255, 128);
    trn_raster8_dispose(&r);
    o.color_match = (trn_color_match)3;
    CHECK_STATUS(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_color_table_dispose(&t);

    /* Percentages of the finite range (-10 .. 300) and the nv colour. */
    CHECK_OK(parse_table("0% 0 0 0\n100% 250 250 250\nnv 9 8 7 6\n", &t, &e));
    o.color_match = TRN_COLOR_INTERPOLATE;
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    EXPECT_RGBA(&r, 0, 0, 0, 0, 0, 255);
    EXPECT_RGBA(&r, 1, 1, 250, 250, 250, 255);
    EXPECT_RGBA(&r, 1, 0, 129, 129, 129, 255); /* (150 + 10) / 310 * 250 = 129.03 */
    EXPECT_RGBA(&r, 1, 4, 9, 8, 7, 6);
    trn_raster8_dispose(&r);
    trn_color_table_dispose(&t);
    CHECK_OK(parse_table("50% 100 100 100\n", &t, &e));
    CHECK_OK(trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e));
    EXPECT_RGBA(&r, 1, 1, 100, 100, 100, 255);
    trn_raster8_dispose(&r);
    trn_color_table_dispose(&t);

    /* Bad arguments. */
    CHECK_OK(parse_table("nv 1 2 3\n", &t, &e));
    CHECK_STATUS(trn_render_color_relief(&f, &t, NULL, &r, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "only an 'nv' entry");
    trn_color_table_dispose(&t);
    CHECK_STATUS(trn_render_color_relief(&f, &t, NULL, &r, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_render_color_relief(&f, NULL, NULL, &r, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

/* ---- material colours and legends ---- */

static void test_material_colors(void)
{
    static const struct {
        const char *name, *keyword;
        uint8_t rgb[3];
    } cases[] = {
        {"Grass", "grass", {86, 152, 62}},         {"grass1_dry", "grass", {86, 152, 62}},
        {"BeachSand", "sand", {218, 194, 142}},    {"beach", "beach", {218, 194, 142}},
        {"dirt_grass", "dirt", {134, 96, 60}},     {"rock_desert", "rock", {128, 128, 128}},
        {"rocktest", "rock", {128, 128, 128}},     {"ROCKS", "rock", {128, 128, 128}},
        {"rockSnow", "snow", {244, 246, 250}},     {"Ice", "ice", {200, 226, 240}},
        {"seabed", "sea", {62, 118, 196}},         {"asphalt_road", "asphalt", {58, 58, 62}},
        {"road2", "road", {58, 58, 62}},           {"mud_wet", "mud", {92, 70, 50}},
        {"Gravel", "gravel", {150, 140, 126}},     {"m_forest_floor", "forest", {44, 104, 48}},
        {"desert", "desert", {222, 200, 152}},     {"clay", "clay", {176, 108, 76}},
        {"Concrete", "concrete", {168, 168, 162}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t rgb[3] = {1, 2, 3};
        const char *kw = trn_render_material_color(cases[k].name, rgb);
        CHECK(kw && strcmp(kw, cases[k].keyword) == 0);
        if (!kw || strcmp(kw, cases[k].keyword) != 0)
            fprintf(stderr, "  %s: keyword %s\n", cases[k].name, kw ? kw : "(none)");
        CHECK(memcmp(rgb, cases[k].rgb, 3) == 0);
    }
    /* A keyword inside a word is not a match; nothing is filled then. */
    static const char *const none[] = {"device", "research", "xyz", "", "Trice", "grasp"};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
        uint8_t rgb[3] = {1, 2, 3};
        CHECK(trn_render_material_color(none[k], rgb) == NULL);
        CHECK(rgb[0] == 1 && rgb[1] == 2 && rgb[2] == 3);
    }
    CHECK(trn_render_material_color(NULL, (uint8_t[3]){0, 0, 0}) == NULL);

    /* Label colours: keywords, shades of a repeated colour, the palette for the rest. */
    trn_labels l;
    trn_error e;
    CHECK_OK(trn_labels_init(&l, 1, 1, &e));
    static const char *const names[] = {"grass", "Grass2", "weird", "meadow", "grass",
                                        "grass", "grass",  "grass", "grass",  "grass"};
    for (size_t k = 0; k < 10; k++)
        CHECK_OK(trn_labels_add_name(&l, names[k], strlen(names[k]), &e));
    uint8_t c[256][4], want[4];
    const char *kw[256];
    trn_render_layer_colors(&l, c, kw);
    CHECK(c[0][0] == 86 && c[0][1] == 152 && c[0][2] == 62 && c[0][3] == 255);
    CHECK(c[1][0] == 65 && c[1][1] == 114 && c[1][2] == 47); /* 75% */
    trn_render_label_color(2, want);
    CHECK(memcmp(c[2], want, 4) == 0 && kw[2] == NULL);
    CHECK(c[3][0] == 145 && c[3][1] == 188 && c[3][2] == 130); /* 35% to white */
    CHECK(kw[3] && strcmp(kw[3], "meadow") == 0);
    CHECK(c[4][0] == 47 && c[4][1] == 84 && c[4][2] == 34);    /* 55% */
    CHECK(c[5][0] == 187 && c[5][1] == 214 && c[5][2] == 178); /* 60% to white */
    CHECK(c[6][0] == 76 && c[6][1] == 134 && c[6][2] == 55);   /* 88% */
    CHECK(c[7][0] == 116 && c[7][1] == 171 && c[7][2] == 97);  /* 18% to white */
    CHECK(c[8][0] == 34 && c[8][1] == 61 && c[8][2] == 25);    /* 40% */
    CHECK(memcmp(c[9], c[0], 4) == 0);                         /* the cycle restarts */
    trn_render_label_color(10, want);
    CHECK(memcmp(c[10], want, 4) == 0); /* past the names: the palette */
    CHECK(c[255][3] == 0 && c[255][0] == 0);
    trn_render_layer_colors(NULL, c, NULL);
    trn_render_label_color(0, want);
    CHECK(memcmp(c[0], want, 4) == 0);
    trn_labels_dispose(&l);
}

static const uint8_t *rgba_at(const trn_raster8 *r, uint32_t x, uint32_t y)
{
    return r->pixels + ((size_t)y * r->width + x) * 4;
}

static bool is_rgba(const uint8_t *p, int cr, int cg, int cb, int ca)
{
    return p[0] == cr && p[1] == cg && p[2] == cb && p[3] == ca;
}

static void test_legend(void)
{
    uint8_t grey[4] = {10, 20, 30, 40};
    trn_raster8 pic = {2, 2, 1, grey}, out;
    trn_error e;
    trn_legend_entry entries[3] = {
        {"ab", {255, 0, 0, 255}}, {"hole", {0, 0, 0, 0}}, {"\xc3\xa9", {0, 0, 255, 255}}};
    CHECK_OK(trn_render_legend(&pic, entries, 3, &out, &e));
    /* Scale 1: pad 4, swatch 7, gap 3, 6 pixels a letter, 11 a line. */
    CHECK_EQ_INT(out.channels, 4);
    CHECK_EQ_INT(out.width, 2 + 4 + 7 + 3 + 4 * 6 + 4);
    CHECK_EQ_INT(out.height, 4 + 3 * 11 - 4 + 4);
    CHECK(is_rgba(rgba_at(&out, 1, 0), 20, 20, 20, 255)); /* grey, opaque */
    CHECK(is_rgba(rgba_at(&out, 0, 1), 30, 30, 30, 255));
    CHECK(is_rgba(rgba_at(&out, 1, 2), 0, 0, 0, 0));         /* below the picture */
    CHECK(is_rgba(rgba_at(&out, 2, 0), 255, 255, 255, 255)); /* the panel */
    CHECK(is_rgba(rgba_at(&out, 6, 4), 64, 64, 64, 255));    /* swatch outline */
    CHECK(is_rgba(rgba_at(&out, 12, 10), 64, 64, 64, 255));
    CHECK(is_rgba(rgba_at(&out, 7, 5), 255, 0, 0, 255)); /* swatch colour */
    CHECK(is_rgba(rgba_at(&out, 11, 9), 255, 0, 0, 255));
    CHECK(is_rgba(rgba_at(&out, 7, 16), 255, 255, 255, 255)); /* an empty swatch */
    CHECK(is_rgba(rgba_at(&out, 6, 15), 64, 64, 64, 255));
    CHECK(is_rgba(rgba_at(&out, 7, 27), 0, 0, 255, 255));
    /* 'a' at x 16: its top row is blank, its third row .###. */
    CHECK(is_rgba(rgba_at(&out, 17, 4), 255, 255, 255, 255));
    CHECK(is_rgba(rgba_at(&out, 16, 6), 255, 255, 255, 255));
    CHECK(is_rgba(rgba_at(&out, 17, 6), 0, 0, 0, 255));
    CHECK(is_rgba(rgba_at(&out, 19, 6), 0, 0, 0, 255));
    CHECK(is_rgba(rgba_at(&out, 20, 6), 255, 255, 255, 255));
    /* 'b' at x 22: its left column is ink from the top. */
    CHECK(is_rgba(rgba_at(&out, 22, 4), 0, 0, 0, 255));
    /* Bytes outside printable ASCII are '?': top row .###. at y 26. */
    CHECK(is_rgba(rgba_at(&out, 16, 26), 255, 255, 255, 255));
    CHECK(is_rgba(rgba_at(&out, 17, 26), 0, 0, 0, 255));
    CHECK(is_rgba(rgba_at(&out, 23, 26), 0, 0, 0, 255));
    trn_raster8_dispose(&out);

    /* RGB and RGBA pictures keep their pixels; no entries: the picture as RGBA. */
    uint8_t rgb[6] = {1, 2, 3, 4, 5, 6};
    trn_raster8 pic3 = {2, 1, 3, rgb};
    CHECK_OK(trn_render_legend(&pic3, NULL, 0, &out, &e));
    CHECK(out.width == 2 && out.height == 1);
    CHECK(is_rgba(rgba_at(&out, 1, 0), 4, 5, 6, 255));
    trn_raster8_dispose(&out);
    uint8_t rgba[4] = {7, 8, 9, 10};
    trn_raster8 pic4 = {1, 1, 4, rgba};
    CHECK_OK(trn_render_legend(&pic4, NULL, 0, &out, &e));
    CHECK(is_rgba(rgba_at(&out, 0, 0), 7, 8, 9, 10));
    trn_raster8_dispose(&out);

    /* Texts are cut to 40 characters, the last three dots. */
    const char *longer = "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz";
    trn_legend_entry one = {longer, {1, 1, 1, 255}};
    CHECK_OK(trn_render_legend(&pic, &one, 1, &out, &e));
    CHECK_EQ_INT(out.width, 2 + 4 + 7 + 3 + 40 * 6 + 4);
    /* '.' is ink on rows 5 and 6, columns 1 and 2: the 40th letter at x 16 + 39 * 6. */
    CHECK(is_rgba(rgba_at(&out, 16 + 39 * 6 + 1, 4 + 6), 0, 0, 0, 255));
    CHECK(is_rgba(rgba_at(&out, 16 + 39 * 6 + 1, 4 + 0), 255, 255, 255, 255));
    trn_raster8_dispose(&out);

    /* The scale: height / 256, 1 to 4. */
    static const struct {
        uint32_t height, scale;
    } scales[] = {{255, 1}, {511, 1}, {512, 2}, {1279, 4}, {1280, 4}, {4096, 4}};
    trn_legend_entry x = {"x", {1, 1, 1, 255}};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        uint8_t *column = calloc(scales[k].height, 1);
        trn_raster8 tall = {1, scales[k].height, 1, column};
        CHECK_OK(trn_render_legend(&tall, &x, 1, &out, &e));
        CHECK_EQ_INT(out.width, 1 + 24 * scales[k].scale);
        trn_raster8_dispose(&out);
        free(column);
    }

    /* Limits and bad pictures. */
    trn_legend_entry *many = calloc(4097, sizeof *many);
    for (size_t k = 0; k < 4097; k++)
        many[k] = x;
    CHECK_OK(trn_render_legend(&pic, many, 4096, &out, &e));
    CHECK_EQ_INT(out.height, 4 + 4096 * 11 - 4 + 4);
    trn_raster8_dispose(&out);
    CHECK_STATUS(trn_render_legend(&pic, many, 4097, &out, &e), TRN_ERR_LIMIT);
    free(many);
    trn_raster8 two = {2, 2, 2, grey};
    CHECK_STATUS(trn_render_legend(&two, &x, 1, &out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_render_legend(&pic, NULL, 1, &out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_render_legend(NULL, &x, 1, &out, &e), TRN_ERR_INVALID_ARGUMENT);
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
 * and one hole at x 3, y 0 (the south-east corner); materials a and b. */
static bool write_named_ter(const char *path, const char *m0, const char *m1)
{
    uint8_t b[5 + 32 + 16 + 4 + 2 + 2 * 255];
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
    b[n++] = (uint8_t)strlen(m0);
    memcpy(b + n, m0, strlen(m0)), n += strlen(m0);
    b[n++] = (uint8_t)strlen(m1);
    memcpy(b + n, m1, strlen(m1)), n += strlen(m1);
    return trn_test_write_file(path, b, n);
}

static bool write_small_ter(const char *path)
{
    return write_named_ter(path, "a", "b");
}

static const uint8_t *image_px(const trn_image *img, uint32_t x, uint32_t y)
{
    return img->data + ((size_t)y * img->width + x) * img->channels;
}

/* The new modes and the legend through the verb. */
static void test_cli_modes(void)
{
    char dir[512], in[600], out[600], table[600];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    char *so = NULL, *se = NULL;
    trn_image img;
    trn_error e;
    snprintf(in, sizeof in, "%s/small.ter", dir);
    CHECK(write_small_ter(in));

    /* The map alone: one pixel a sample, palette colours for names without a keyword. */
    snprintf(out, sizeof out, "%s/bare.png", dir);
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' --mode layers --no-legend --format json",
                                   &so, &se, in, out),
                 0);
    json_t *j = json_loads(so ? so : "", 0, NULL);
    CHECK(j != NULL);
    CHECK(json_is_false(json_object_get(j, "legend_drawn")));
    json_t *legend = json_object_get(j, "legend");
    CHECK_EQ_INT(json_object_size(legend), 6);
    static const char *const keys[6] = {"a", "b", "layer 2", "layer 3", "layer 4", "hole"};
    static const int samples[6] = {3, 4, 4, 3, 1, 1};
    static const int labels[6] = {0, 1, 2, 3, 4, 255};
    json_t *layers = json_object_get(j, "materials");
    CHECK_EQ_INT(json_array_size(layers), 6);
    for (int k = 0; k < 6 && json_array_size(layers) == 6; k++) {
        uint8_t want[4];
        char hex[16];
        trn_render_label_color((uint32_t)labels[k], want);
        if (want[3] == 255)
            snprintf(hex, sizeof hex, "#%02x%02x%02x", want[0], want[1], want[2]);
        else
            snprintf(hex, sizeof hex, "#%02x%02x%02x%02x", want[0], want[1], want[2], want[3]);
        const char *got = json_string_value(json_object_get(legend, keys[k]));
        CHECK(got && strcmp(got, hex) == 0);
        json_t *layer = json_array_get(layers, (size_t)k);
        CHECK_EQ_INT(json_integer_value(json_object_get(layer, "index")), labels[k]);
        CHECK_EQ_INT(json_integer_value(json_object_get(layer, "samples")), samples[k]);
        CHECK(json_is_null(json_object_get(layer, "keyword")));
    }
    json_decref(j);
    free(so), free(se);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.width, 4);
        CHECK_EQ_INT(img.height, 4);
        trn_image_dispose(&img);
    }

    /* With its legend (the default): the map at the top left, the panel to its right. */
    snprintf(out, sizeof out, "%s/legend.png", dir);
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' --mode layers -q", NULL, NULL, in, out), 0);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.width, 4 + 4 + 7 + 3 + 7 * 6 + 4); /* "layer 2" is the longest */
        CHECK_EQ_INT(img.height, 4 + 6 * 11 - 4 + 4);
        uint8_t want[4];
        trn_render_label_color(1, want);
        CHECK(memcmp(image_px(&img, 0, 0), want, 4) == 0);
        CHECK_EQ_INT(image_px(&img, 3, 3)[3], 0);  /* the hole */
        CHECK_EQ_INT(image_px(&img, 0, 10)[3], 0); /* below the map */
        CHECK(memcmp(image_px(&img, 4, 0), (uint8_t[4]){255, 255, 255, 255}, 4) == 0);
        trn_render_label_color(0, want);
        CHECK(memcmp(image_px(&img, 4 + 5, 5), want, 4) == 0); /* the first swatch: "a" */
        trn_image_dispose(&img);
    } else {
        CHECK(!"legend.png unreadable");
    }

    /* Material names pick the colours. */
    snprintf(in, sizeof in, "%s/named.ter", dir);
    CHECK(write_named_ter(in, "Grass", "BeachSand"));
    snprintf(out, sizeof out, "%s/named.png", dir);
    CHECK_EQ_INT(
        trn_test_run_clif("render '%s' -o '%s' --mode layers --format json", &so, &se, in, out), 0);
    CHECK_CONTAINS(so, "\"Grass\": \"#56983e\"");
    CHECK_CONTAINS(so, "\"BeachSand\": \"#dac28e\"");
    CHECK_CONTAINS(so, "\"keyword\": \"sand\"");
    free(so), free(se);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK(memcmp(image_px(&img, 0, 1), (uint8_t[4]){86, 152, 62, 255}, 4) == 0);
        CHECK(memcmp(image_px(&img, 1, 1), (uint8_t[4]){218, 194, 142, 255}, 4) == 0);
        trn_image_dispose(&img);
    }

    /* Aspect: rising north (and a little east), so facing south, a little west. */
    snprintf(in, sizeof in, "%s/small.ter", dir);
    snprintf(out, sizeof out, "%s/aspect.png", dir);
    CHECK_EQ_INT(
        trn_test_run_clif("render '%s' -o '%s' --mode aspect --format json", &so, &se, in, out), 0);
    CHECK_CONTAINS(so, "\"mode\": \"aspect\"");
    CHECK_CONTAINS(so, "\"zero_for_flat\": false");
    free(so), free(se);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.channels, 1);
        CHECK_EQ_INT(image_px(&img, 1, 1)[0], 128); /* 180.57 degrees */
        trn_image_dispose(&img);
    }

    /* Colour relief from a table: 0 m black to 100 m white; the north-west sample is 93.75 m. */
    snprintf(table, sizeof table, "%s/colours.txt", dir);
    CHECK(trn_test_write_file(table, "0 0 0 0\n100 white\n", 18));
    snprintf(out, sizeof out, "%s/relief.png", dir);
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' --mode color-relief --color-table '%s' "
                                   "--format json",
                                   &so, &se, in, out, table),
                 0);
    CHECK_CONTAINS(so, "\"mode\": \"colour-relief\"");
    CHECK_CONTAINS(so, "\"color_match\": \"interpolate\"");
    free(so), free(se);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.channels, 3);
        CHECK(memcmp(image_px(&img, 0, 0), (uint8_t[3]){239, 239, 239}, 3) == 0);
        trn_image_dispose(&img);
    }
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' --mode colour-relief --colour-table '%s' "
                                   "--alpha --nearest-color-entry -q",
                                   NULL, NULL, in, out, table),
                 0);
    if (trn_png_read(out, NULL, &img, &e) == TRN_OK) {
        CHECK_EQ_INT(img.channels, 4);
        CHECK(memcmp(image_px(&img, 0, 0), (uint8_t[4]){255, 255, 255, 255}, 4) == 0);
        trn_image_dispose(&img);
    }
    /* A bad table is the work failing, located. */
    CHECK(trn_test_write_file(table, "0 0 0 0\n5 256 0 0\n", 18));
    CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' --mode colour-relief --color-table '%s'",
                                   &so, &se, in, out, table),
                 1);
    CHECK_CONTAINS(se, "colours.txt:2:3: expected red as a whole number 0 to 255, found '256'");
    free(so), free(se);

    /* Options of another mode, and the table's mode without a table. */
    static const struct {
        const char *args, *says;
    } usage[] = {
        {"--mode colour-relief", "--mode colour-relief needs --color-table FILE"},
        {"--color-table t.txt", "--color-table is for --mode colour-relief, not hillshade"},
        {"--zero-for-flat", "--zero-for-flat is for --mode aspect, not hillshade"},
        {"--mode slope --trigonometric", "--trigonometric is for --mode aspect, not slope"},
        {"--mode layers --alpha", "--alpha is for --mode colour-relief, not layers"},
        {"--mode aspect --no-legend", "--no-legend is for --mode layers, not aspect"},
        {"--mode height --exact-color-entry", "--exact-color-entry is for --mode colour-relief"},
        {"--mode color-relief --color-table t --exact-color-entry --nearest-colour-entry",
         "exclude each other"},
    };
    for (size_t k = 0; k < sizeof usage / sizeof usage[0]; k++) {
        CHECK_EQ_INT(trn_test_run_clif("render '%s' -o '%s' %s", &so, &se, in, out, usage[k].args),
                     2);
        CHECK_CONTAINS(se, usage[k].says);
        free(so), free(se);
    }
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
    snprintf(args, sizeof args, "render '%s' -o '%s' --mode layers --format json --no-legend", in,
             out);
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
        {"render IN -o x.png --mode contour", 2,
         "--mode takes hillshade, height, slope, aspect, colour-relief (color-relief) or layers"},
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
    RUN(test_aspect);
    RUN(test_color_table_parse);
    RUN(test_color_relief);
    RUN(test_material_colors);
    RUN(test_legend);
    RUN(test_threads_progress_cancel);
    RUN(test_gdaldem);
    RUN(test_cli);
    RUN(test_cli_modes);
    return trn_test_finish();
}
