/* Tests: elevation, slope, path and polygon masks (known values, rejections, references,
 * invariances, thread counts), natural (warped) outlines and the height blend and offset
 * kernels. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/generate.h"
#include "terrane/masks.h"
#include "test.h"

static const double PI = 3.14159265358979323846;

static float at(const trn_mask *m, uint32_t i, uint32_t j)
{
    return m->values[(size_t)j * (m->cells_x + 1u) + i];
}

static size_t mask_count(const trn_mask *m)
{
    return ((size_t)m->cells_x + 1u) * ((size_t)m->cells_z + 1u);
}

static bool same_mask(const trn_mask *a, const trn_mask *b)
{
    return a->values && b->values && a->cells_x == b->cells_x && a->cells_z == b->cells_z &&
           memcmp(a->values, b->values, mask_count(a) * sizeof(float)) == 0;
}

/* The documented edge shape, for expected values. */
static float shape(double d, double falloff)
{
    if (d <= 0.0) return 1.0f;
    if (falloff <= 0.0) return 0.0f;
    const double t = d / falloff;
    if (t >= 1.0) return 0.0f;
    return (float)(1.0 - t * t * (3.0 - 2.0 * t));
}

static bool is_zeroed(const trn_mask *m)
{
    return m->values == NULL && m->cells_x == 0 && m->cells_z == 0;
}

/* Every rejection: the code, the message, no file offset, and *out left zeroed. */
static void check_rejected(trn_status st, const trn_error *e, const trn_mask *m, const char *text)
{
    CHECK_EQ_INT(st, TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(e->code, TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(e->offset, -1);
    CHECK_CONTAINS(e->message, text);
    if (m) CHECK(is_zeroed(m));
}

/* ---- elevation ---- */

static void test_elevation_values(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 7, 1, 70, 10, &e));
    const float h[8] = {0.0f, 2.5f, 5.0f, 7.5f, 10.0f, 15.0f, 20.0f, NAN};
    for (int j = 0; j < 2; j++)
        memcpy(f.heights + 8 * j, h, sizeof h);
    trn_mask m;
    CHECK_OK(trn_mask_elevation(&f, 5.0, 10.0, 10.0, &m, &e));
    CHECK_EQ_INT(m.cells_x, 7);
    CHECK_EQ_INT(m.cells_z, 1);
    /* d = 5 is the falloff midpoint; d = 2.5 is t = 0.25: 1 - 0.0625 * 2.5. */
    const float want[8] = {0.5f, 0.84375f, 1.0f, 1.0f, 1.0f, 0.5f, 0.0f, 0.0f};
    for (uint32_t j = 0; j < 2; j++)
        for (uint32_t i = 0; i < 8; i++)
            CHECK(at(&m, i, j) == want[i]);
    trn_mask_dispose(&m);

    /* Hard edge: exactly the band. */
    f.heights[1] = 4.9999995f;
    CHECK_OK(trn_mask_elevation(&f, 5.0, 10.0, 0.0, &m, &e));
    const float hard[8] = {0, 0, 1, 1, 1, 0, 0, 0};
    for (uint32_t i = 0; i < 8; i++)
        CHECK(at(&m, i, 0) == hard[i]);
    CHECK(at(&m, 1, 1) == 0.0f);
    trn_mask_dispose(&m);

    /* A degenerate band min == max still includes its one height. */
    CHECK_OK(trn_mask_elevation(&f, 7.5, 7.5, 0.0, &m, &e));
    CHECK(at(&m, 3, 0) == 1.0f && at(&m, 2, 0) == 0.0f && at(&m, 4, 0) == 0.0f);
    trn_mask_dispose(&m);
    trn_field_dispose(&f);
}

static void test_elevation_rejections(void)
{
    trn_field f;
    trn_error e;
    trn_mask m;
    CHECK_OK(trn_field_init(&f, 2, 2, 2, 2, &e));
    check_rejected(trn_mask_elevation(&f, NAN, 1, 0, &m, &e), &e, &m,
                   "elevation mask: min: expected a finite number, found nan");
    check_rejected(trn_mask_elevation(&f, 0, INFINITY, 0, &m, &e), &e, &m,
                   "elevation mask: max: expected a finite number, found inf");
    check_rejected(trn_mask_elevation(&f, 5, 1.5, 0, &m, &e), &e, &m,
                   "elevation mask: expected min <= max, found min 5 > max 1.5");
    check_rejected(trn_mask_elevation(&f, 0, 1, -0.25, &m, &e), &e, &m,
                   "elevation mask: falloff: expected a finite number >= 0, found -0.25");
    check_rejected(trn_mask_elevation(&f, 0, 1, INFINITY, &m, &e), &e, &m,
                   "falloff: expected a finite number >= 0, found inf");
    check_rejected(trn_mask_elevation(NULL, 0, 1, 0, &m, &e), &e, &m,
                   "elevation mask: field: expected a field with heights, found NULL");
    check_rejected(trn_mask_elevation(&f, 0, 1, 0, NULL, &e), &e, NULL,
                   "elevation mask: out: expected a mask to fill, found NULL");
    trn_field none;
    memset(&none, 0, sizeof none);
    check_rejected(trn_mask_elevation(&none, 0, 1, 0, &m, &e), &e, &m, "found no heights");
    trn_field_dispose(&f);
}

/* ---- slope ---- */

static void test_slope_values(void)
{
    trn_field f;
    trn_error e;
    /* A plane rising 1 m per metre along x: Horn gives exactly 45 degrees everywhere. */
    CHECK_OK(trn_field_init(&f, 8, 8, 8, 8, &e));
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            f.heights[j * 9 + i] = (float)i;
    CHECK(fabs(trn_field_slope_at(&f, 4, 4) - 45.0) < 1e-12);
    /* The edge columns replicate their sample, halving the gradient: atan(0.5) = 26.57. */
    CHECK(fabs(trn_field_slope_at(&f, 0, 4) - 26.565051177077990) < 1e-9);
    trn_mask m;
    CHECK_OK(trn_mask_slope(&f, 40, 50, 0, &m, &e));
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            CHECK(at(&m, i, j) == (i > 0 && i < 8 ? 1.0f : 0.0f));
    trn_mask_dispose(&m);
    CHECK_OK(trn_mask_slope(&f, 0, 30, 0, &m, &e));
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            CHECK(at(&m, i, j) == (i > 0 && i < 8 ? 0.0f : 1.0f));
    trn_mask_dispose(&m);
    /* d = 15 degrees past the band with falloff 30: the midpoint, within the slope's rounding. */
    CHECK_OK(trn_mask_slope(&f, 0, 30, 30, &m, &e));
    CHECK(fabs(at(&m, 4, 4) - 0.5f) < 1e-6f);
    trn_mask_dispose(&m);

    /* A bumpy field: every value is the band shape of trn_field_slope_at, edges included. */
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            f.heights[j * 9 + i] = (float)(3.0 * sin(0.9 * i) * cos(0.7 * j) + 0.3 * i * j);
    CHECK_OK(trn_mask_slope(&f, 20, 35, 10, &m, &e));
    int bad = 0;
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++) {
            const double s = trn_field_slope_at(&f, i, j);
            const float want = s >= 20 && s <= 35 ? 1.0f : shape(s < 20 ? 20 - s : s - 35, 10);
            if (at(&m, i, j) != want) bad++;
        }
    CHECK_EQ_INT(bad, 0);
    trn_mask_dispose(&m);

    check_rejected(trn_mask_slope(&f, -1, 30, 0, &m, &e), &e, &m,
                   "slope mask: min: expected a number in [0, 90], found -1");
    check_rejected(trn_mask_slope(&f, 0, 91, 0, &m, &e), &e, &m,
                   "slope mask: max: expected a number in [0, 90], found 91");
    check_rejected(trn_mask_slope(&f, 40, 30, 0, &m, &e), &e, &m,
                   "slope mask: expected min <= max, found min 40 > max 30");
    check_rejected(trn_mask_slope(&f, 0, 30, NAN, &m, &e), &e, &m,
                   "slope mask: falloff: expected a number in [0, 90], found nan");
    trn_field flat;
    CHECK_OK(trn_field_init(&flat, 0, 4, 1, 1, &e));
    check_rejected(trn_mask_slope(&flat, 0, 30, 0, &m, &e), &e, &m,
                   "slope mask: field: expected at least one cell per axis, found 0x4");
    trn_field_dispose(&flat);
    CHECK_OK(trn_field_init(&flat, 4, 4, 0, 1, &e));
    check_rejected(trn_mask_slope(&flat, 0, 30, 0, &m, &e), &e, &m,
                   "expected a positive finite size, found 0 x 1");
    trn_field_dispose(&flat);
    trn_field_dispose(&f);
}

/* ---- brute-force references (every sample against every segment) ---- */

static double ref_seg_dist(double px, double pz, double ax, double az, double bx, double bz)
{
    const double ex = bx - ax, ez = bz - az, l2 = ex * ex + ez * ez;
    double t = l2 > 0 ? ((px - ax) * ex + (pz - az) * ez) / l2 : 0.0;
    t = t < 0 ? 0 : (t > 1 ? 1 : t);
    const double dx = px - (ax + t * ex), dz = pz - (az + t * ez);
    return sqrt(dx * dx + dz * dz);
}

static float ref_path(double px, double pz, const double *p, uint32_t n, double width,
                      double falloff)
{
    double d = INFINITY;
    for (uint32_t k = 0; k + 1 < n; k++) {
        const double s = ref_seg_dist(px, pz, p[2 * k], p[2 * k + 1], p[2 * k + 2], p[2 * k + 3]);
        if (s < d) d = s;
    }
    return shape(d - width, falloff);
}

/* Even-odd by a ray to +x; -1 where the sample is within 1e-9 of an edge (ambiguous). */
static float ref_polygon(double px, double pz, const double *p, uint32_t n, double falloff)
{
    double d = INFINITY;
    bool in = false;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t k1 = (k + 1) % n;
        const double ax = p[2 * k], az = p[2 * k + 1], bx = p[2 * k1], bz = p[2 * k1 + 1];
        const double s = ref_seg_dist(px, pz, ax, az, bx, bz);
        if (s < d) d = s;
        if ((az <= pz) != (bz <= pz)) {
            const double x = ax + (pz - az) * (bx - ax) / (bz - az);
            if (x < px) in = !in;
        }
    }
    if (d < 1e-9) return -1.0f;
    return in ? 1.0f : shape(d, falloff);
}

/* Largest difference from the path reference over the grid (and count of exact mismatches
 * where the reference says 1 or 0, which must agree exactly). */
static double path_vs_ref(const trn_mask *m, double size_x, double size_z, const double *p,
                          uint32_t n, double width, double falloff, int *hard_mismatch)
{
    double worst = 0;
    *hard_mismatch = 0;
    for (uint32_t j = 0; j <= m->cells_z; j++)
        for (uint32_t i = 0; i <= m->cells_x; i++) {
            const double x = (double)i * size_x / m->cells_x, z = (double)j * size_z / m->cells_z;
            const float want = ref_path(x, z, p, n, width, falloff), got = at(m, i, j);
            const double diff = fabs((double)want - (double)got);
            if (diff > worst) worst = diff;
            if ((want == 0.0f || want == 1.0f) && diff > 1e-6) (*hard_mismatch)++;
        }
    return worst;
}

static double polygon_vs_ref(const trn_mask *m, double size_x, double size_z, const double *p,
                             uint32_t n, double falloff)
{
    double worst = 0;
    for (uint32_t j = 0; j <= m->cells_z; j++)
        for (uint32_t i = 0; i <= m->cells_x; i++) {
            const double x = (double)i * size_x / m->cells_x, z = (double)j * size_z / m->cells_z;
            float want = ref_polygon(x, z, p, n, falloff);
            if (want < 0) want = 1.0f; /* on an edge: 1 */
            const double diff = fabs((double)want - (double)at(m, i, j));
            if (diff > worst) worst = diff;
        }
    return worst;
}

/* ---- path ---- */

static void test_path_values(void)
{
    trn_error e;
    trn_mask m;
    /* Cell size 1; a horizontal line at z = 50. */
    const double line[4] = {0, 50, 100, 50};
    CHECK_OK(trn_mask_path(100, 100, 100, 100, line, 2, 10, 20, &m, &e));
    CHECK(at(&m, 30, 50) == 1.0f);
    /* width is the HALF width: both sides up to 10 are fully weighted. */
    CHECK(at(&m, 30, 60) == 1.0f);
    CHECK(at(&m, 30, 40) == 1.0f);
    CHECK(at(&m, 30, 61) == shape(1, 20));
    CHECK(at(&m, 30, 39) == shape(1, 20));
    CHECK(at(&m, 30, 61) < 1.0f);
    CHECK(at(&m, 30, 70) == 0.5f); /* falloff midpoint */
    CHECK(at(&m, 30, 30) == 0.5f);
    CHECK(at(&m, 30, 80) == 0.0f);
    CHECK(at(&m, 30, 95) == 0.0f);
    /* Past the end point the distance is to the end point. */
    CHECK(at(&m, 100, 50) == 1.0f);
    trn_mask_dispose(&m);

    /* Hard edge. */
    CHECK_OK(trn_mask_path(100, 100, 100, 100, line, 2, 10, 0, &m, &e));
    CHECK(at(&m, 5, 60) == 1.0f && at(&m, 5, 61) == 0.0f && at(&m, 5, 39) == 0.0f);
    trn_mask_dispose(&m);
    /* Width 0 and falloff 0: exactly the line. */
    CHECK_OK(trn_mask_path(100, 100, 100, 100, line, 2, 0, 0, &m, &e));
    CHECK(at(&m, 5, 50) == 1.0f && at(&m, 5, 51) == 0.0f && at(&m, 5, 49) == 0.0f);
    trn_mask_dispose(&m);

    /* Repeated points (all of one place): a disc around it. */
    const double dot[6] = {50, 50, 50, 50, 50, 50};
    CHECK_OK(trn_mask_path(100, 100, 100, 100, dot, 3, 10, 20, &m, &e));
    CHECK(at(&m, 50, 60) == 1.0f && at(&m, 50, 70) == 0.5f && at(&m, 56, 58) == 1.0f);
    CHECK(at(&m, 50, 81) == 0.0f && at(&m, 0, 0) == 0.0f);
    trn_mask_dispose(&m);
}

static void test_path_corridor_and_repeats(void)
{
    trn_error e;
    trn_mask m, r;
    /* A corridor entering and leaving the field (both points outside), a bend, on a
     * non-square grid with non-integer cells. */
    const double p[8] = {-40, -25, 47.5, 60, 60, 70, 180, 130};
    CHECK_OK(trn_mask_path(64, 48, 120, 90, p, 4, 7.5, 12, &m, &e));
    int hard = 0;
    CHECK(path_vs_ref(&m, 120, 90, p, 4, 7.5, 12, &hard) < 1e-6);
    CHECK_EQ_INT(hard, 0);
    /* On the corridor's centre line inside the field: 1; the far corner: 0. */
    CHECK(at(&m, 0, 0) > 0.0f && at(&m, 0, 0) < 1.0f);
    CHECK(at(&m, 64, 0) == 0.0f && at(&m, 0, 48) == 0.0f);
    /* Repeated and consecutive duplicate points give the same bytes. */
    const double rep[14] = {-40, -25, -40, -25, 47.5, 60, 47.5, 60, 47.5, 60, 60, 70, 180, 130};
    CHECK_OK(trn_mask_path(64, 48, 120, 90, rep, 7, 7.5, 12, &r, &e));
    CHECK(same_mask(&m, &r));
    trn_mask_dispose(&r);
    /* The reversed polyline too (distances do not depend on direction). */
    const double rev[8] = {180, 130, 60, 70, 47.5, 60, -40, -25};
    CHECK_OK(trn_mask_path(64, 48, 120, 90, rev, 4, 7.5, 12, &r, &e));
    CHECK(same_mask(&m, &r));
    trn_mask_dispose(&r);
    trn_mask_dispose(&m);

    /* A corridor wholly outside the field's reach: all zero. */
    const double away[4] = {-500, -500, -400, -500};
    CHECK_OK(trn_mask_path(16, 16, 16, 16, away, 2, 10, 10, &m, &e));
    int nonzero = 0;
    for (size_t k = 0; k < mask_count(&m); k++)
        nonzero += m.values[k] != 0.0f;
    CHECK_EQ_INT(nonzero, 0);
    trn_mask_dispose(&m);

    /* A long wiggly polyline (many short segments) against the brute-force reference. */
    enum { N = 400 };
    double *w = malloc(2 * N * sizeof(double));
    for (int k = 0; k < N; k++) {
        w[2 * k] = -10 + 220.0 * k / (N - 1);
        w[2 * k + 1] = 100 + 60 * sin(k * 0.11) + 7 * cos(k * 0.9);
    }
    CHECK_OK(trn_mask_path(100, 100, 200, 200, w, N, 3, 9, &m, &e));
    CHECK(path_vs_ref(&m, 200, 200, w, N, 3, 9, &hard) < 1e-6);
    CHECK_EQ_INT(hard, 0);
    trn_mask_dispose(&m);
    /* Huge width and falloff: the capped index still reaches everything. */
    CHECK_OK(trn_mask_path(20, 20, 200, 200, w, N, 1e308, 1e308, &m, &e));
    for (size_t k = 0; k < mask_count(&m); k++)
        CHECK(m.values[k] == 1.0f);
    trn_mask_dispose(&m);
    CHECK_OK(trn_mask_path(20, 20, 200, 200, w, N, 0, 1e300, &m, &e));
    CHECK(path_vs_ref(&m, 200, 200, w, N, 0, 1e300, &hard) < 1e-6);
    trn_mask_dispose(&m);
    free(w);

    /* Coordinates at the float range's edge are valid and give finite values in [0, 1]. */
    const double big[4] = {-FLT_MAX, -FLT_MAX, FLT_MAX, FLT_MAX};
    CHECK_OK(trn_mask_path(8, 8, 8, 8, big, 2, 1, 1, &m, &e));
    int odd = 0;
    for (size_t k = 0; k < mask_count(&m); k++)
        odd += !(m.values[k] >= 0.0f && m.values[k] <= 1.0f);
    CHECK_EQ_INT(odd, 0);
    trn_mask_dispose(&m);
}

static void test_path_rejections(void)
{
    trn_error e;
    trn_mask m;
    const double ok[4] = {0, 0, 0, 100};
    check_rejected(trn_mask_path(10, 10, 10, 10, ok, 1, 20, 40, &m, &e), &e, &m,
                   "path mask: points: expected at least 2 [x, z] pairs, found 1");
    const double nan_pt[6] = {0, 0, NAN, 5, 1, 1};
    check_rejected(trn_mask_path(10, 10, 10, 10, nan_pt, 3, 20, 40, &m, &e), &e, &m,
                   "path mask: points[1][0]: expected a finite number within the float range, "
                   "found nan");
    const double big[8] = {0, 0, 1, 1, 2, 2, 3, 1e39};
    check_rejected(trn_mask_path(10, 10, 10, 10, big, 4, 20, 40, &m, &e), &e, &m,
                   "points[3][1]: expected a finite number within the float range, found 1e+39");
    const double inf_pt[4] = {0, -INFINITY, 1, 1};
    check_rejected(trn_mask_path(10, 10, 10, 10, inf_pt, 2, 20, 40, &m, &e), &e, &m,
                   "points[0][1]: expected a finite number within the float range, found -inf");
    check_rejected(trn_mask_path(10, 10, 10, 10, NULL, 2, 20, 40, &m, &e), &e, &m,
                   "points: expected 2 [x, z] pairs, found no array");
    check_rejected(trn_mask_path(10, 10, 10, 10, ok, 2, -1, 40, &m, &e), &e, &m,
                   "path mask: width: expected a finite half width >= 0, found -1");
    check_rejected(trn_mask_path(10, 10, 10, 10, ok, 2, 20, NAN, &m, &e), &e, &m,
                   "path mask: falloff: expected a finite number >= 0, found nan");
    check_rejected(trn_mask_path(0, 10, 10, 10, ok, 2, 20, 40, &m, &e), &e, &m,
                   "path mask: grid: expected at least one cell per axis, found 0x10");
    check_rejected(trn_mask_path(10, 10, 10, -3, ok, 2, 20, 40, &m, &e), &e, &m,
                   "path mask: size_z: expected a positive finite size, found -3");
    check_rejected(trn_mask_path(10, 10, 10, 10, ok, 2, 20, 40, NULL, &e), &e, NULL,
                   "path mask: out: expected a mask to fill, found NULL");
}

/* ---- polygon ---- */

static void test_polygon_values(void)
{
    trn_error e;
    trn_mask m;
    const double sq[8] = {10, 10, 90, 10, 90, 90, 10, 90};
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, sq, 4, 20, &m, &e));
    CHECK(at(&m, 50, 50) == 1.0f);
    CHECK(at(&m, 10, 50) == 1.0f && at(&m, 90, 50) == 1.0f); /* on edges */
    CHECK(at(&m, 50, 10) == 1.0f && at(&m, 50, 90) == 1.0f);
    CHECK(at(&m, 10, 10) == 1.0f && at(&m, 90, 90) == 1.0f); /* vertices */
    CHECK(at(&m, 0, 50) == 0.5f && at(&m, 100, 50) == 0.5f && at(&m, 50, 100) == 0.5f);
    CHECK(at(&m, 50, 0) == 0.5f);
    CHECK(at(&m, 9, 50) == shape(1, 20));
    CHECK(at(&m, 0, 0) == shape(sqrt(200.0), 20));
    trn_mask_dispose(&m);
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, sq, 4, 0, &m, &e));
    CHECK(at(&m, 10, 50) == 1.0f && at(&m, 9, 50) == 0.0f && at(&m, 91, 91) == 0.0f);
    CHECK(at(&m, 90, 90) == 1.0f && at(&m, 90, 91) == 0.0f && at(&m, 50, 90) == 1.0f);
    trn_mask_dispose(&m);

    /* Slanted edges whose on-edge samples have inexact projections: (0,0)-(70,30) passes
     * (7k, 3k). With a hard edge each such sample is 1, its neighbours across the edge 0. */
    const double tri[6] = {0, 0, 70, 30, 0, 60};
    CHECK_OK(trn_mask_polygon(80, 80, 80, 80, tri, 3, 0, &m, &e));
    for (uint32_t k = 1; k < 10; k++) {
        CHECK(at(&m, 7 * k, 3 * k) == 1.0f);
        CHECK(at(&m, 7 * k, 3 * k - 1) == 0.0f);
        CHECK(at(&m, 7 * k, 3 * k + 1) == 1.0f);
    }
    /* The upper edge (70,30)-(0,60) passes (70 - 7k, 30 + 3k). */
    for (uint32_t k = 1; k < 10; k++) {
        CHECK(at(&m, 70 - 7 * k, 30 + 3 * k) == 1.0f);
        CHECK(at(&m, 70 - 7 * k, 30 + 3 * k + 1) == 0.0f);
    }
    CHECK(at(&m, 70, 30) == 1.0f && at(&m, 71, 30) == 0.0f && at(&m, 0, 60) == 1.0f);
    trn_mask_dispose(&m);

    /* A left boundary (crossings there count for samples strictly to the right, so its own
     * samples are outside by parity) whose projections round: (3, 15) and (6, 30) on
     * (0,0)-(11,55) measure about 2e-15 away. On the boundary they are 1 all the same. */
    const double lean[6] = {0, 0, 11, 55, 40, 0};
    CHECK_OK(trn_mask_polygon(60, 60, 60, 60, lean, 3, 0, &m, &e));
    for (uint32_t k = 0; k <= 11; k++) {
        CHECK(at(&m, k, 5 * k) == 1.0f);
        if (k > 0) CHECK(at(&m, k - 1, 5 * k) == 0.0f);
        if (k < 11) CHECK(at(&m, k + 1, 5 * k) == 1.0f);
    }
    trn_mask_dispose(&m);

    /* Concave U: the notch is outside (distance 10 to both sides: the midpoint). */
    const double u[16] = {10, 10, 90, 10, 90, 90, 60, 90, 60, 40, 40, 40, 40, 90, 10, 90};
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, u, 8, 20, &m, &e));
    CHECK(at(&m, 50, 70) == 0.5f);
    CHECK(at(&m, 50, 30) == 1.0f && at(&m, 25, 70) == 1.0f && at(&m, 75, 70) == 1.0f);
    CHECK(at(&m, 50, 40) == 1.0f); /* the notch's floor is boundary */
    CHECK(polygon_vs_ref(&m, 100, 100, u, 8, 20) < 1e-6);
    trn_mask_dispose(&m);
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, u, 8, 0, &m, &e));
    CHECK(at(&m, 50, 70) == 0.0f && at(&m, 50, 41) == 0.0f && at(&m, 41, 70) == 0.0f);
    CHECK(at(&m, 40, 70) == 1.0f && at(&m, 60, 90) == 1.0f);
    trn_mask_dispose(&m);
}

static void test_polygon_even_odd(void)
{
    trn_error e;
    trn_mask m;
    /* Bow-tie: left and right lobes inside, the wedges above and below the crossing outside. */
    const double bow[8] = {10, 10, 90, 90, 90, 10, 10, 90};
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, bow, 4, 0, &m, &e));
    CHECK(at(&m, 20, 50) == 1.0f && at(&m, 80, 50) == 1.0f);
    CHECK(at(&m, 50, 30) == 0.0f && at(&m, 50, 70) == 0.0f);
    CHECK(at(&m, 50, 50) == 1.0f); /* the self-crossing point is on both edges */
    CHECK(at(&m, 30, 30) == 1.0f); /* on the diagonal */
    CHECK(polygon_vs_ref(&m, 100, 100, bow, 4, 0) < 1e-6);
    trn_mask_dispose(&m);

    /* Pentagram drawn as one self-intersecting ring: the central pentagon is crossed twice, so
     * even-odd leaves it a hole; the tips are inside. */
    double star[10];
    for (int k = 0; k < 5; k++) {
        const double a = PI / 2 + 2 * PI * (double)((2 * k) % 5) / 5;
        star[2 * k] = 50 + 40 * cos(a);
        star[2 * k + 1] = 50 + 40 * sin(a);
    }
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, star, 5, 0, &m, &e));
    CHECK(at(&m, 50, 50) == 0.0f);
    CHECK(at(&m, 50, 84) == 1.0f); /* the top tip (50, 90) pointing up */
    CHECK(polygon_vs_ref(&m, 100, 100, star, 5, 0) < 1e-6);
    trn_mask_dispose(&m);
    CHECK_OK(trn_mask_polygon(100, 100, 100, 100, star, 5, 15, &m, &e));
    CHECK(at(&m, 50, 50) > 0.0f && at(&m, 50, 50) < 1.0f);
    CHECK(polygon_vs_ref(&m, 100, 100, star, 5, 15) < 1e-6);
    trn_mask_dispose(&m);
}

static void test_polygon_invariance(void)
{
    trn_error e;
    trn_mask m, r;
    /* An irregular concave polygon with slanted edges, partly outside the field. */
    const double p[14] = {-12.5, 8, 61, -20, 97.25, 33, 70, 49.5, 88, 103, 31, 71.75, 12, 40};
    CHECK_OK(trn_mask_polygon(72, 56, 100, 80, p, 7, 9.5, &m, &e));
    CHECK(polygon_vs_ref(&m, 100, 80, p, 7, 9.5) < 1e-6);
    /* Reversed winding: the same bytes. */
    double rev[14];
    for (int k = 0; k < 7; k++) {
        rev[2 * k] = p[2 * (6 - k)];
        rev[2 * k + 1] = p[2 * (6 - k) + 1];
    }
    CHECK_OK(trn_mask_polygon(72, 56, 100, 80, rev, 7, 9.5, &r, &e));
    CHECK(same_mask(&m, &r));
    trn_mask_dispose(&r);
    /* Another starting vertex: the same bytes. */
    double rot[14];
    for (int k = 0; k < 7; k++) {
        rot[2 * k] = p[2 * ((k + 3) % 7)];
        rot[2 * k + 1] = p[2 * ((k + 3) % 7) + 1];
    }
    CHECK_OK(trn_mask_polygon(72, 56, 100, 80, rot, 7, 9.5, &r, &e));
    CHECK(same_mask(&m, &r));
    trn_mask_dispose(&r);
    /* Repeated points and an explicit closing point: the same bytes. */
    const double rep[20] = {-12.5, 8,    -12.5, 8,   61, -20,   97.25, 33, 70,    49.5,
                            70,    49.5, 88,    103, 31, 71.75, 12,    40, -12.5, 8};
    CHECK_OK(trn_mask_polygon(72, 56, 100, 80, rep, 10, 9.5, &r, &e));
    CHECK(same_mask(&m, &r));
    trn_mask_dispose(&r);
    trn_mask_dispose(&m);

    /* A 1000-gon circle: inside exactly 1, and the reference everywhere. */
    enum { N = 1000 };
    double *c = malloc(2 * N * sizeof(double));
    for (int k = 0; k < N; k++) {
        c[2 * k] = 100 + 70 * cos(2 * PI * k / N);
        c[2 * k + 1] = 100 + 70 * sin(2 * PI * k / N);
    }
    CHECK_OK(trn_mask_polygon(128, 128, 200, 200, c, N, 25, &m, &e));
    CHECK(polygon_vs_ref(&m, 200, 200, c, N, 25) < 1e-6);
    CHECK(at(&m, 64, 64) == 1.0f && at(&m, 0, 0) == 0.0f);
    trn_mask_dispose(&m);
    free(c);
}

static void test_polygon_rejections(void)
{
    trn_error e;
    trn_mask m;
    const double two[4] = {0, 0, 10, 10};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, two, 2, 20, &m, &e), &e, &m,
                   "polygon mask: points: expected at least 3 [x, z] pairs, found 2");
    const double line[8] = {0, 0, 10, 5, 30, 15, -20, -10};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, line, 4, 20, &m, &e), &e, &m,
                   "polygon mask: points: all 4 points are collinear; a polygon needs three that "
                   "are not");
    /* Collinear with a repeated point and a closing point is still collinear. */
    const double line2[10] = {0, 0, 0.1, 0.3, 0.1, 0.3, 0.3, 0.9, 0, 0};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, line2, 5, 20, &m, &e), &e, &m,
                   "all 5 points are collinear");
    const double same[6] = {4, 2.5, 4, 2.5, 4, 2.5};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, same, 3, 20, &m, &e), &e, &m,
                   "points: all 3 points are at the same position (4, 2.5)");
    const double bad[6] = {0, 0, 10, 0, 5, -3.5e38};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, bad, 3, 20, &m, &e), &e, &m,
                   "polygon mask: points[2][1]: expected a finite number within the float "
                   "range, found -3.5e+38");
    const double tri[6] = {0, 0, 10, 0, 5, 5};
    check_rejected(trn_mask_polygon(10, 10, 10, 10, tri, 3, -1e-3, &m, &e), &e, &m,
                   "polygon mask: falloff: expected a finite number >= 0, found -0.001");
    check_rejected(trn_mask_polygon(10, 10, 10, 10, tri, 3, INFINITY, &m, &e), &e, &m, "found inf");
    check_rejected(trn_mask_polygon(10, 10, NAN, 10, tri, 3, 1, &m, &e), &e, &m,
                   "polygon mask: size_x: expected a positive finite size, found nan");
    /* Nearly but not exactly collinear (a sliver 1e-3 high): accepted. */
    const double sliver[6] = {0, 0, 100, 0, 50, 1e-3};
    CHECK_OK(trn_mask_polygon(10, 10, 100, 10, sliver, 3, 0, &m, &e));
    CHECK(at(&m, 5, 0) == 1.0f && at(&m, 5, 1) == 0.0f);
    trn_mask_dispose(&m);
}

static void test_points_check(void)
{
    char msg[128];
    const double ok[6] = {0, 0, 1, 0, 0, 1};
    CHECK_OK(trn_points_check(ok, 3, 3, true, msg, sizeof msg));
    CHECK(msg[0] == '\0');
    CHECK_OK(trn_points_check(ok, 3, 2, false, NULL, 0));
    CHECK_OK(trn_points_check(NULL, 0, 0, false, msg, sizeof msg));
    const double maxf[4] = {FLT_MAX, -FLT_MAX, 0, 0};
    CHECK_OK(trn_points_check(maxf, 2, 2, false, msg, sizeof msg));
    /* Just above FLT_MAX: the message shows the value exactly enough to see why. */
    const double over[4] = {0, 0, nextafter((double)FLT_MAX, INFINITY), 0};
    CHECK_STATUS(trn_points_check(over, 2, 2, false, msg, sizeof msg), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(msg, "points[1][0]: expected a finite number within the float range, found "
                        "3.402823466385289e+38");
    CHECK_STATUS(trn_points_check(over, 2, 2, false, NULL, 0), TRN_ERR_INVALID_ARGUMENT);
    /* A short buffer truncates but stays terminated. */
    char tiny[8];
    CHECK_STATUS(trn_points_check(ok, 1, 2, false, tiny, sizeof tiny), TRN_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(tiny, "points:") == 0);
    /* Collinear checks only when asked. */
    const double col[6] = {0, 0, 1, 1, 2, 2};
    CHECK_OK(trn_points_check(col, 3, 3, false, msg, sizeof msg));
    CHECK_STATUS(trn_points_check(col, 3, 3, true, msg, sizeof msg), TRN_ERR_INVALID_ARGUMENT);
    CHECK(strncmp(msg, "points", 6) == 0);
    CHECK_CONTAINS(msg, "points: all 3 points are collinear; a polygon needs three that are not");
}

/* ---- thread counts ---- */

static void test_threads_identical(void)
{
#ifdef _OPENMP
    const int before = omp_get_max_threads();
    trn_error e;
    trn_mask a[3], b[3];
    trn_field f;
    CHECK_OK(trn_field_init(&f, 300, 211, 600, 420, &e));
    for (uint32_t j = 0; j <= 211; j++)
        for (uint32_t i = 0; i <= 300; i++)
            f.heights[j * 301 + i] = (float)(40 * sin(i * 0.05) * cos(j * 0.07) + 0.1 * i);
    double star[14];
    for (int k = 0; k < 7; k++) {
        const double t = PI / 2 + 2 * PI * (double)((3 * k) % 7) / 7;
        star[2 * k] = 300 + 250 * cos(t);
        star[2 * k + 1] = 210 + 230 * sin(t);
    }
    const double path[10] = {-50, 10, 200, 300, 350, 120, 420, 400, 700, -30};
    for (int pass = 0; pass < 2; pass++) {
        omp_set_num_threads(pass == 0 ? 1 : 3);
        trn_mask *o = pass == 0 ? a : b;
        CHECK_OK(trn_mask_slope(&f, 5, 20, 7, &o[0], &e));
        CHECK_OK(trn_mask_path(300, 211, 600, 420, path, 5, 12, 30, &o[1], &e));
        CHECK_OK(trn_mask_polygon(300, 211, 600, 420, star, 7, 25, &o[2], &e));
        trn_mask exact = o[2];
        CHECK_OK(trn_mask_warp(&exact, 600, 420, 30, 90, 5, 3, &o[2], &e));
        trn_mask_dispose(&exact);
    }
    omp_set_num_threads(2);
    trn_mask c;
    CHECK_OK(trn_mask_polygon(300, 211, 600, 420, star, 7, 25, &c, &e));
    trn_mask exact = c;
    CHECK_OK(trn_mask_warp(&exact, 600, 420, 30, 90, 5, 3, &c, &e));
    trn_mask_dispose(&exact);
    CHECK(same_mask(&a[2], &c));
    trn_mask_dispose(&c);
    omp_set_num_threads(before);
    for (int k = 0; k < 3; k++) {
        CHECK(same_mask(&a[k], &b[k]));
        trn_mask_dispose(&a[k]);
        trn_mask_dispose(&b[k]);
    }
    trn_field_dispose(&f);
#else
    fprintf(stderr, "note: built without OpenMP; thread-count comparison not run\n");
#endif
}

/* ---- blend and offset ---- */

static void test_blend(void)
{
    trn_error e;
    const float a[6] = {0.0f, 10.0f, -5.0f, 1e30f, 3.0f, 7.0f};
    const float b[6] = {10.0f, 20.0f, 5.0f, 1e-30f, 5.0f, 9.0f};
    const float mask[6] = {0.0f, 0.5f, 1.0f, 1.0f, NAN, 2.0f};
    float out[6];
    CHECK_OK(trn_heights_blend(a, b, mask, 1.0, 6, out, &e));
    /* mask 1 gives b bit for bit even where b - a rounds; NaN counts 0, 2 clamps to 1. */
    const float want[6] = {0.0f, 15.0f, 5.0f, 1e-30f, 3.0f, 9.0f};
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == want[k]);
    CHECK_OK(trn_heights_blend(a, b, NULL, 0.5, 6, out, &e));
    const float half[6] = {5.0f, 15.0f, 0.0f, 5e29f, 4.0f, 8.0f};
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == half[k]);
    CHECK_OK(trn_heights_blend(a, b, mask, 0.5, 6, out, &e));
    const float quarter[6] = {0.0f, 12.5f, 0.0f, 5e29f, 3.0f, 8.0f};
    for (int k = 0; k < 6; k++)
        CHECK(out[k] == quarter[k]);
    CHECK_OK(trn_heights_blend(a, b, NULL, 0.0, 6, out, &e));
    CHECK(memcmp(out, a, sizeof a) == 0);
    /* In place over a and over b. */
    float x[6], y[6];
    memcpy(x, a, sizeof x);
    CHECK_OK(trn_heights_blend(x, b, mask, 1.0, 6, x, &e));
    for (int k = 0; k < 6; k++)
        CHECK(x[k] == want[k]);
    memcpy(y, b, sizeof y);
    CHECK_OK(trn_heights_blend(a, y, NULL, 0.5, 6, y, &e));
    for (int k = 0; k < 6; k++)
        CHECK(y[k] == half[k]);
    /* Large counts take the parallel path and agree with the element formula. */
    enum { N = 100000 };
    float *la = malloc(N * sizeof(float)), *lb = malloc(N * sizeof(float));
    float *lm = malloc(N * sizeof(float)), *lo = malloc(N * sizeof(float));
    for (int k = 0; k < N; k++) {
        la[k] = (float)(k % 977) * 0.37f;
        lb[k] = (float)(k % 313) * -1.1f;
        lm[k] = (float)(k % 101) / 100.0f;
    }
    CHECK_OK(trn_heights_blend(la, lb, lm, 0.75, N, lo, &e));
    int bad = 0;
    for (int k = 0; k < N; k++) {
        const double w = 0.75 * (double)lm[k];
        const float r = w == 0.0   ? la[k]
                        : w == 1.0 ? lb[k]
                                   : (float)((double)la[k] + ((double)lb[k] - (double)la[k]) * w);
        bad += lo[k] != r;
    }
    CHECK_EQ_INT(bad, 0);
    free(la);
    free(lb);
    free(lm);
    free(lo);

    CHECK_STATUS(trn_heights_blend(a, b, NULL, 1.5, 6, out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "height blend: amount: expected a number in [0, 1], found 1.5");
    CHECK_EQ_INT(e.offset, -1);
    CHECK_STATUS(trn_heights_blend(a, b, NULL, NAN, 6, out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "amount: expected a number in [0, 1], found nan");
    CHECK_STATUS(trn_heights_blend(a, NULL, NULL, 1, 6, out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "found NULL b");
    CHECK_OK(trn_heights_blend(NULL, NULL, NULL, 1, 0, NULL, &e));
}

static void test_offset(void)
{
    trn_error e;
    const float a[5] = {0.0f, 10.0f, -5.0f, 3e38f, -3e38f};
    const float mask[5] = {0.0f, 0.5f, 1.0f, 1.0f, 1.0f};
    float out[5];
    CHECK_OK(trn_heights_offset(a, mask, 4.0, 5, out, &e));
    CHECK(out[0] == 0.0f && out[1] == 12.0f && out[2] == -1.0f);
    CHECK_OK(trn_heights_offset(a, NULL, -2.5, 3, out, &e));
    CHECK(out[0] == -2.5f && out[1] == 7.5f && out[2] == -7.5f);
    /* Sums beyond the float range saturate so heights stay finite. */
    CHECK_OK(trn_heights_offset(a, mask, 1e38, 5, out, &e));
    CHECK(out[3] == FLT_MAX && out[4] == (float)((double)a[4] + 1e38));
    CHECK_OK(trn_heights_offset(a, mask, -1e38, 5, out, &e));
    CHECK(out[4] == -FLT_MAX && out[3] == (float)((double)a[3] - 1e38));
    /* In place. */
    float x[5];
    memcpy(x, a, sizeof x);
    CHECK_OK(trn_heights_offset(x, mask, 4.0, 3, x, &e));
    CHECK(x[0] == 0.0f && x[1] == 12.0f && x[2] == -1.0f);

    CHECK_STATUS(trn_heights_offset(a, NULL, INFINITY, 5, out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message,
                   "height offset: offset: expected a finite number within the float range, "
                   "found inf");
    CHECK_STATUS(trn_heights_offset(a, NULL, 1e39, 5, out, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "found 1e+39");
    CHECK_STATUS(trn_heights_offset(a, NULL, 1, 5, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "found NULL out");
    CHECK_EQ_INT(e.offset, -1);
}

/* ---- natural outlines ---- */

/* A square polygon warped: its outline wanders (no longer straight), never farther than the
 * amplitude, values stay in [0, 1], and amplitude 0 is an exact copy. */
static void test_warp_outline(void)
{
    trn_error e;
    const double square[8] = {100, 100, 300, 100, 300, 300, 100, 300};
    trn_mask exact, warped, again, other, copy;
    CHECK_OK(trn_mask_polygon(400, 400, 400, 400, square, 4, 0, &exact, &e));
    CHECK_OK(trn_mask_warp(&exact, 400, 400, 0, 64, 5, 7, &copy, &e));
    CHECK(same_mask(&exact, &copy));
    CHECK_OK(trn_mask_warp(&exact, 400, 400, 20, 64, 5, 7, &warped, &e));
    CHECK_OK(trn_mask_warp(&exact, 400, 400, 20, 64, 5, 7, &again, &e));
    CHECK(same_mask(&warped, &again));
    CHECK_OK(trn_mask_warp(&exact, 400, 400, 20, 64, 5, 8, &other, &e));
    CHECK(!same_mask(&warped, &other));
    size_t changed = 0, far_changed = 0, out_of_range = 0;
    for (uint32_t j = 0; j <= 400; j++)
        for (uint32_t i = 0; i <= 400; i++) {
            const float w = at(&warped, i, j);
            if (!(w >= 0.0f && w <= 1.0f)) out_of_range++;
            if (w == at(&exact, i, j)) continue;
            changed++;
            /* Distance to the square's outline: a change there needs a displacement that far. */
            const double dx = fmax(fmax(100.0 - i, (double)i - 300.0), 0.0);
            const double dz = fmax(fmax(100.0 - j, (double)j - 300.0), 0.0);
            const double outside = hypot(dx, dz);
            const double inside = fmin(fmin((double)i - 100.0, 300.0 - i),
                                       fmin((double)j - 100.0, 300.0 - j));
            if (outside > 20.0 * sqrt(2.0) + 1.0 || inside > 20.0 * sqrt(2.0) + 1.0) far_changed++;
        }
    CHECK_EQ_INT(out_of_range, 0);
    CHECK_EQ_INT(far_changed, 0);
    /* The outline moved along its whole length, not in a few spots. */
    CHECK(changed > 4000);
    /* Along the south edge the crossing row wanders: not one straight line. */
    uint32_t lo = 400, hi = 0;
    for (uint32_t i = 120; i <= 280; i++) {
        uint32_t j = 60;
        while (j < 140 && at(&warped, i, j) < 0.5f) j++;
        if (j < lo) lo = j;
        if (j > hi) hi = j;
    }
    CHECK(hi - lo >= 6);
    CHECK(hi - lo <= 40);
    /* A uniform mask stays uniform whatever the warp. */
    for (size_t k = 0; k < mask_count(&copy); k++) copy.values[k] = 0.25f;
    trn_mask flat;
    CHECK_OK(trn_mask_warp(&copy, 400, 400, 50, 30, 3, 1, &flat, &e));
    for (size_t k = 0; k < mask_count(&flat); k++) CHECK(flat.values[k] == 0.25f);
    trn_mask_dispose(&flat);
    trn_mask_dispose(&exact);
    trn_mask_dispose(&warped);
    trn_mask_dispose(&again);
    trn_mask_dispose(&other);
    trn_mask_dispose(&copy);
}

static void test_warp_rejections(void)
{
    trn_error e;
    trn_mask m, out;
    CHECK_OK(trn_mask_init(&m, 8, 8, &e));
    check_rejected(trn_mask_warp(&m, 8, 8, -1, 10, 4, 1, &out, &e), &e, &out, "amplitude");
    check_rejected(trn_mask_warp(&m, 8, 8, NAN, 10, 4, 1, &out, &e), &e, &out, "amplitude");
    check_rejected(trn_mask_warp(&m, 8, 8, 1, 0, 4, 1, &out, &e), &e, &out, "feature_size");
    check_rejected(trn_mask_warp(&m, 8, 8, 1, INFINITY, 4, 1, &out, &e), &e, &out,
                   "feature_size");
    check_rejected(trn_mask_warp(&m, 8, 8, 1, 10, 0, 1, &out, &e), &e, &out, "octaves");
    check_rejected(trn_mask_warp(&m, 8, 8, 1, 10, 17, 1, &out, &e), &e, &out, "octaves");
    check_rejected(trn_mask_warp(&m, 0, 8, 1, 10, 4, 1, &out, &e), &e, &out, "size_x");
    check_rejected(trn_mask_warp(NULL, 8, 8, 1, 10, 4, 1, &out, &e), &e, &out, "found NULL");
    CHECK_STATUS(trn_mask_warp(&m, 8, 8, 1, 10, 4, 1, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_mask_warp(&m, 8, 8, 1, 10, 16, 1, &out, &e));
    trn_mask_dispose(&out);
    trn_mask_dispose(&m);
}

int main(void)
{
    RUN(test_elevation_values);
    RUN(test_elevation_rejections);
    RUN(test_slope_values);
    RUN(test_path_values);
    RUN(test_path_corridor_and_repeats);
    RUN(test_path_rejections);
    RUN(test_polygon_values);
    RUN(test_polygon_even_odd);
    RUN(test_polygon_invariance);
    RUN(test_polygon_rejections);
    RUN(test_points_check);
    RUN(test_threads_identical);
    RUN(test_blend);
    RUN(test_offset);
    RUN(test_warp_outline);
    RUN(test_warp_rejections);
    return trn_test_finish();
}
