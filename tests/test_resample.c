/* Tests for heightfield resampling, cropping, padding, NaN filling and the 16-bit height scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/resample.h"
#include "test.h"

typedef double (*surface_fn)(double x, double z);

static double plane(double x, double z)
{
    return 3.0 + 0.5 * x - 0.25 * z;
}

static double quadratic(double x, double z)
{
    return 0.01 * x * x + 0.02 * x * z - 0.03 * z * z + x - 7.0;
}

static double saddle(double x, double z)
{
    return 0.05 * (x * x - z * z);
}

/* A field whose sample (i, j) holds f(i, j) (sample coordinates), spacing 2 x 3 metres. */
static void make_field(trn_field *f, uint32_t cells_x, uint32_t cells_z, surface_fn fn)
{
    CHECK_OK(trn_field_init(f, cells_x, cells_z, 2.0 * cells_x, 3.0 * cells_z, NULL));
    for (uint32_t j = 0; j <= cells_z; j++)
        for (uint32_t i = 0; i <= cells_x; i++)
            f->heights[(size_t)j * (cells_x + 1) + i] = (float)fn(i, j);
}

static void test_bilinear_exact_on_plane(void)
{
    trn_field src, dst;
    make_field(&src, 32, 16, plane);
    CHECK_OK(
        trn_field_resample(&src, NULL, 100, 50, TRN_RESAMPLE_BILINEAR, &dst, NULL, NULL, NULL));
    CHECK_EQ_INT(dst.cells_x, 100);
    CHECK_EQ_INT(dst.cells_z, 50);
    CHECK(fabs(dst.size_x - 64.0) < 1e-9 && fabs(dst.size_z - 48.0) < 1e-9);
    double worst = 0;
    for (uint32_t j = 0; j <= 50; j++)
        for (uint32_t i = 0; i <= 100; i++) {
            double x = 32.0 * i / 100, z = 16.0 * j / 50;
            double e = fabs(dst.heights[j * 101 + i] - plane(x, z));
            if (e > worst) worst = e;
        }
    CHECK(worst < 2e-5);
    trn_field_dispose(&dst);
    /* A fractional window: corners map to the window's corners. */
    trn_resample_window win = {2.5, 1.25, 20.75, 9.5};
    CHECK_OK(trn_field_resample(&src, &win, 40, 30, TRN_RESAMPLE_BILINEAR, &dst, NULL, NULL, NULL));
    CHECK(fabs(dst.size_x - 2.0 * 18.25) < 1e-9 && fabs(dst.size_z - 3.0 * 8.25) < 1e-9);
    worst = 0;
    for (uint32_t j = 0; j <= 30; j++)
        for (uint32_t i = 0; i <= 40; i++) {
            double x = 2.5 + 18.25 * i / 40, z = 1.25 + 8.25 * j / 30;
            double e = fabs(dst.heights[j * 41 + i] - plane(x, z));
            if (e > worst) worst = e;
        }
    CHECK(worst < 2e-5);
    CHECK(fabs(dst.heights[0] - plane(2.5, 1.25)) < 1e-5);
    trn_field_dispose(&dst);
    trn_field_dispose(&src);
}

static void test_bicubic_on_quadratic(void)
{
    trn_field src, dst;
    make_field(&src, 40, 30, quadratic);
    CHECK_OK(trn_field_resample(&src, NULL, 97, 71, TRN_RESAMPLE_BICUBIC, &dst, NULL, NULL, NULL));
    double interior = 0, edge = 0;
    for (uint32_t j = 0; j <= 71; j++)
        for (uint32_t i = 0; i <= 97; i++) {
            double x = 40.0 * i / 97, z = 30.0 * j / 71;
            double e = fabs(dst.heights[j * 98 + i] - quadratic(x, z));
            /* Taps clamp at the edges; away from them Keys' kernel is exact for quadratics. */
            bool inside = x >= 1 && x <= 39 && z >= 1 && z <= 29;
            if (inside && e > interior) interior = e;
            if (!inside && e > edge) edge = e;
        }
    CHECK(interior < 1e-4);
    /* Clamped edges: the repeated edge sample misses the slope (up to 3.3 per unit here) by the
     * outer tap's weight, at most 0.074: not exact, but bounded by 0.074 * 3.3. */
    CHECK(edge < 0.25);
    CHECK(edge > interior);
    trn_field_dispose(&dst);
    /* The quadratic is not reproduced by bilinear: it sags between samples. */
    CHECK_OK(trn_field_resample(&src, NULL, 97, 71, TRN_RESAMPLE_BILINEAR, &dst, NULL, NULL, NULL));
    double lin = 0;
    for (uint32_t j = 0; j <= 71; j++)
        for (uint32_t i = 0; i <= 97; i++) {
            double e = fabs(dst.heights[j * 98 + i] - quadratic(40.0 * i / 97, 30.0 * j / 71));
            if (e > lin) lin = e;
        }
    CHECK(lin > 1e-3);
    trn_field_dispose(&dst);
    /* Point sampling agrees with the resampler. */
    double v = trn_field_sample_bicubic(&src, 12.3, 17.8);
    CHECK(fabs(v - quadratic(12.3, 17.8)) < 1e-4);
    CHECK(fabs(trn_field_sample_bilinear(&src, 5.0, 6.0) - quadratic(5, 6)) < 1e-5);
    trn_field_dispose(&src);
}

static void test_same_size_is_a_copy(void)
{
    trn_field src, dst;
    make_field(&src, 17, 9, quadratic);
    for (int f = 0; f < 2; f++) {
        CHECK_OK(
            trn_field_resample(&src, NULL, 17, 9, (trn_resample_filter)f, &dst, NULL, NULL, NULL));
        CHECK(memcmp(dst.heights, src.heights, 18 * 10 * sizeof(float)) == 0);
        trn_field_dispose(&dst);
    }
    trn_field_dispose(&src);
}

static void test_resample_errors(void)
{
    trn_field src, dst;
    trn_error e;
    make_field(&src, 8, 8, plane);
    CHECK_STATUS(trn_field_resample(&src, NULL, 0, 4, TRN_RESAMPLE_BILINEAR, &dst, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(e.offset, -1);
    trn_resample_window bad = {1, 1, 9, 4};
    CHECK_STATUS(trn_field_resample(&src, &bad, 4, 4, TRN_RESAMPLE_BICUBIC, &dst, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "not inside");
    CHECK(dst.heights == NULL);
    CHECK_STATUS(trn_field_resample(&src, NULL, 4, 4, (trn_resample_filter)7, &dst, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&src);
}

static int cancel_at_once(double done, const char *stage, void *user)
{
    (void)done;
    (void)stage;
    (void)user;
    return TRN_CANCEL;
}

static void test_crop(void)
{
    trn_field src, dst;
    trn_error e;
    make_field(&src, 20, 10, plane);
    src.quantum = 0.5;
    CHECK_OK(trn_field_crop(&src, 3, 2, 6, 5, &dst, NULL));
    CHECK_EQ_INT(dst.cells_x, 5);
    CHECK_EQ_INT(dst.cells_z, 4);
    CHECK(fabs(dst.size_x - 10.0) < 1e-12 && fabs(dst.size_z - 12.0) < 1e-12);
    CHECK(dst.quantum == 0.5);
    CHECK(dst.heights[0] == (float)plane(3, 2));
    CHECK(dst.heights[4 * 6 + 5] == (float)plane(8, 6));
    trn_field_dispose(&dst);
    CHECK_STATUS(trn_field_crop(&src, 18, 0, 4, 2, &dst, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "do not fit");
    CHECK_STATUS(trn_field_crop(&src, 0, 0, 1, 2, &dst, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&src);
}

static void test_pow2(void)
{
    CHECK_EQ_INT(trn_resample_nearest_pow2(3601), 4096);
    CHECK_EQ_INT(trn_resample_nearest_pow2(1201), 1024);
    CHECK_EQ_INT(trn_resample_nearest_pow2(1448), 1024); /* 1448^2 < 2 * 1024^2 */
    CHECK_EQ_INT(trn_resample_nearest_pow2(1449), 2048);
    CHECK_EQ_INT(trn_resample_nearest_pow2(1), 2);
    CHECK_EQ_INT(trn_resample_nearest_pow2plus1(3601), 4097);
    CHECK_EQ_INT(trn_resample_nearest_pow2plus1(1025), 1025);
    CHECK_EQ_INT(trn_resample_nearest_pow2plus1(1201), 1025);
    CHECK_EQ_INT(trn_resample_nearest_pow2plus1(2), 3);
}

/* Punch a NaN rectangle; returns how many samples it covers. */
static size_t punch(trn_field *f, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h)
{
    size_t n = 0;
    for (uint32_t j = j0; j < j0 + h; j++)
        for (uint32_t i = i0; i < i0 + w; i++) {
            f->heights[(size_t)j * (f->cells_x + 1) + i] = NAN;
            n++;
        }
    return n;
}

static double fill_error(const trn_field *f, surface_fn fn, bool *any_nan)
{
    double worst = 0;
    *any_nan = false;
    for (uint32_t j = 0; j <= f->cells_z; j++)
        for (uint32_t i = 0; i <= f->cells_x; i++) {
            float v = f->heights[(size_t)j * (f->cells_x + 1) + i];
            if (isnan(v)) *any_nan = true;
            double e = fabs(v - fn(i, j));
            if (e > worst) worst = e;
        }
    return worst;
}

static void test_fill_plane_and_saddle(void)
{
    /* Planes and x^2 - z^2 are harmonic: the fill reproduces them inside a hole. */
    surface_fn fns[2] = {plane, saddle};
    for (int k = 0; k < 2; k++) {
        trn_field f;
        make_field(&f, 80, 60, fns[k]);
        size_t holes = punch(&f, 20, 15, 25, 18) + punch(&f, 60, 40, 3, 3);
        uint64_t filled = 0;
        CHECK_OK(trn_field_fill_nan(&f, &filled, NULL, NULL, NULL));
        CHECK_EQ_INT(filled, holes);
        bool any_nan;
        double err = fill_error(&f, fns[k], &any_nan);
        CHECK(!any_nan);
        CHECK(err < 2e-3);
        trn_field_dispose(&f);
    }
}

static double bowl(double x, double z)
{
    return 0.02 * ((x - 30) * (x - 30) + (z - 20) * (z - 20));
}

static void test_fill_paraboloid_no_spikes(void)
{
    trn_field f;
    make_field(&f, 64, 48, bowl);
    float lo = INFINITY, hi = -INFINITY;
    trn_field_range(&f, &lo, &hi);
    /* A 9 x 9 hole in a bowl of curvature 2a = 0.04 per unit^2 in both axes. */
    size_t holes = punch(&f, 36, 10, 9, 9);
    /* And a hole touching the edge (mirrored boundary). */
    holes += punch(&f, 0, 30, 6, 10);
    uint64_t filled;
    CHECK_OK(trn_field_fill_nan(&f, &filled, NULL, NULL, NULL));
    CHECK_EQ_INT(filled, holes);
    double worst_inner = 0;
    for (uint32_t j = 10; j < 19; j++)
        for (uint32_t i = 36; i < 45; i++) {
            double e = fabs(f.heights[j * 65 + i] - bowl(i, j));
            if (e > worst_inner) worst_inner = e;
        }
    /* The harmonic fill differs from the bowl by the solution of Poisson's equation with
     * source 4a on the hole (a square of half-width 5 between its fixed borders): at the
     * centre 0.2947 * 4a * 5^2 = 0.589 (the continuous value; the grid's is 0.585). So the
     * fill is the exact harmonic interpolant, not merely "close". */
    CHECK(worst_inner < 0.595);
    CHECK(worst_inner > 0.5);
    bool any_nan = false;
    for (size_t k = 0; k < 65 * 49; k++) {
        if (isnan(f.heights[k])) any_nan = true;
        /* The maximum principle: nothing outside the valid range (no spikes). */
        CHECK(f.heights[k] >= lo - 1e-4 && f.heights[k] <= hi + 1e-4);
    }
    CHECK(!any_nan);
    trn_field_dispose(&f);
}

static void test_fill_deterministic_and_errors(void)
{
    trn_field a, b;
    make_field(&a, 50, 50, bowl);
    make_field(&b, 50, 50, bowl);
    punch(&a, 5, 5, 30, 20);
    punch(&b, 5, 5, 30, 20);
    CHECK_OK(trn_field_fill_nan(&a, NULL, NULL, NULL, NULL));
    CHECK_OK(trn_field_fill_nan(&b, NULL, NULL, NULL, NULL));
    CHECK(memcmp(a.heights, b.heights, 51 * 51 * sizeof(float)) == 0);
    trn_field_dispose(&a);
    trn_field_dispose(&b);

    /* Cancelling leaves the holes as they were. */
    make_field(&a, 20, 20, plane);
    size_t holes = punch(&a, 4, 4, 5, 5);
    trn_error e;
    CHECK_STATUS(trn_field_fill_nan(&a, NULL, cancel_at_once, NULL, &e), TRN_ERR_CANCELLED);
    size_t nan_count = 0;
    for (size_t k = 0; k < 21 * 21; k++)
        nan_count += isnan(a.heights[k]);
    CHECK_EQ_INT(nan_count, holes);
    /* All NoData: nothing to fill from. */
    punch(&a, 0, 0, 21, 21);
    CHECK_STATUS(trn_field_fill_nan(&a, NULL, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "all 441 samples are NoData");
    trn_field_dispose(&a);
    /* No holes: untouched. */
    make_field(&a, 10, 10, plane);
    uint64_t filled = 99;
    CHECK_OK(trn_field_fill_nan(&a, &filled, NULL, NULL, NULL));
    CHECK_EQ_INT(filled, 0);
    trn_field_dispose(&a);
}

/* Shrinking a checkerboard by 4: bilinear point-samples it (all 0 or all 1), the area average
 * gives its mean; a constant stays exact; growing an axis interpolates like bilinear. */
static void test_average_shrinks_without_aliasing(void)
{
    trn_field src, avg, lin;
    CHECK_OK(trn_field_init(&src, 256, 256, 256.0, 256.0, NULL));
    for (uint32_t j = 0; j <= 256; j++)
        for (uint32_t i = 0; i <= 256; i++)
            src.heights[(size_t)j * 257u + i] = (float)((i + j) & 1u);
    CHECK_OK(trn_field_resample(&src, NULL, 64, 64, TRN_RESAMPLE_AVERAGE, &avg, NULL, NULL, NULL));
    CHECK_OK(trn_field_resample(&src, NULL, 64, 64, TRN_RESAMPLE_BILINEAR, &lin, NULL, NULL, NULL));
    CHECK(avg.size_x == 256.0 && avg.cells_x == 64);
    double worst = 0.0;
    for (uint32_t j = 1; j < 64; j++)
        for (uint32_t i = 1; i < 64; i++) {
            const double d = fabs((double)avg.heights[(size_t)j * 65u + i] - 0.5);
            if (d > worst) worst = d;
        }
    /* A 4-sample footprint covers 4 x 4 cells: 5 x 5 samples, the edge ones half weighted. */
    CHECK(worst < 0.04);
    CHECK(lin.heights[65u + 1u] == 0.0f || lin.heights[65u + 1u] == 1.0f);
    trn_field_dispose(&avg);
    trn_field_dispose(&lin);
    for (size_t k = 0; k < 257u * 257u; k++)
        src.heights[k] = 12.5f;
    CHECK_OK(trn_field_resample(&src, NULL, 37, 91, TRN_RESAMPLE_AVERAGE, &avg, NULL, NULL, NULL));
    bool exact = true;
    for (size_t k = 0; k < 38u * 92u; k++)
        exact = exact && avg.heights[k] == 12.5f;
    CHECK(exact);
    trn_field_dispose(&avg);
    /* x grows (256 -> 512 cells), z shrinks: x interpolates linearly on a plane in x. */
    for (uint32_t j = 0; j <= 256; j++)
        for (uint32_t i = 0; i <= 256; i++)
            src.heights[(size_t)j * 257u + i] = (float)i;
    CHECK_OK(trn_field_resample(&src, NULL, 512, 32, TRN_RESAMPLE_AVERAGE, &avg, NULL, NULL, NULL));
    CHECK(avg.heights[5u * 513u + 3u] == 1.5f);
    CHECK(strcmp(trn_resample_filter_name(TRN_RESAMPLE_AVERAGE), "average") == 0);
    trn_field_dispose(&avg);
    trn_field_dispose(&src);
}

/* Padding repeats the nearest edge sample, keeps the spacing and the 16-bit scale. */
static void test_pad(void)
{
    trn_field f, p;
    make_field(&f, 3, 2, plane); /* 4 x 3 samples, 2 x 3 m */
    f.quantum = 0.5;
    f.quantum_base = -7.0;
    trn_error e;
    CHECK_OK(trn_field_pad(&f, 2, 1, 3, 4, &p, &e));
    CHECK_EQ_INT(p.cells_x, 3 + 2 + 3);
    CHECK_EQ_INT(p.cells_z, 2 + 1 + 4);
    CHECK(p.size_x == 2.0 * 8 && p.size_z == 3.0 * 7);
    CHECK(p.quantum == 0.5 && p.quantum_base == -7.0);
    size_t wrong = 0;
    for (uint32_t j = 0; j <= p.cells_z; j++)
        for (uint32_t i = 0; i <= p.cells_x; i++) {
            /* Output (i, j) repeats source (clamp(i - 2, 0, 3), clamp(j - 1, 0, 2)). */
            int si = (int)i - 2, sj = (int)j - 1;
            si = si < 0 ? 0 : si > 3 ? 3 : si;
            sj = sj < 0 ? 0 : sj > 2 ? 2 : sj;
            wrong += p.heights[j * 9 + i] != f.heights[sj * 4 + si];
        }
    CHECK_EQ_INT(wrong, 0);
    trn_field_dispose(&p);
    /* Nothing added: a copy. */
    CHECK_OK(trn_field_pad(&f, 0, 0, 0, 0, &p, &e));
    CHECK(p.cells_x == 3 && p.cells_z == 2 &&
          memcmp(p.heights, f.heights, 12 * sizeof(float)) == 0);
    trn_field_dispose(&p);
    /* Sides past 2^32 - 1 samples are refused before allocating; an empty field too. */
    CHECK_STATUS(trn_field_pad(&f, UINT32_MAX - 3u, 0, 0, 0, &p, &e), TRN_ERR_OVERFLOW);
    CHECK_STATUS(trn_field_pad(&f, 0, UINT32_MAX - 2u, 0, 0, &p, &e), TRN_ERR_OVERFLOW);
    CHECK(p.heights == NULL);
    trn_field empty;
    memset(&empty, 0, sizeof empty);
    CHECK_STATUS(trn_field_pad(&empty, 1, 1, 1, 1, &p, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

/* Padding that falls to a base: the source kept, the outer border at the base, heights
 * between the edge and the base, and a one-sample spike on the edge fading as it leaves. */
static void test_pad_fall(void)
{
    trn_field f, p;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 20, 4, 20.0, 4.0, &e));
    for (size_t k = 0; k < 21u * 5u; k++)
        f.heights[k] = 10.0f;
    f.heights[4 * 21 + 10] = 30.0f; /* a spike on the north edge row */
    CHECK_OK(trn_field_pad_fall(&f, 0, 3, 0, 8, 2.0, &p, &e));
    CHECK_EQ_INT(p.cells_z, 4 + 3 + 8);
    size_t kept = 0, border = 0, between = 0;
    for (uint32_t j = 0; j <= 4; j++)
        for (uint32_t i = 0; i <= 20; i++)
            kept += p.heights[(j + 3) * 21 + i] == f.heights[j * 21 + i];
    for (uint32_t i = 0; i <= 20; i++) {
        border += p.heights[i] == 2.0f && p.heights[15 * 21 + i] == 2.0f;
        for (uint32_t j = 1; j < 3; j++)
            between += p.heights[j * 21 + i] > 2.0f && p.heights[j * 21 + i] < 10.0f;
    }
    CHECK_EQ_INT(kept, 21 * 5);
    CHECK_EQ_INT(border, 21);
    CHECK_EQ_INT(between, 2 * 21);
    /* The spike: one row out it still stands above its neighbours, four rows out it has been
     * averaged over 5 edge samples (a fifth of its excess), less than half of it left. */
    const float near = p.heights[8 * 21 + 10], far = p.heights[11 * 21 + 10];
    const float near_side = p.heights[8 * 21 + 5], far_side = p.heights[11 * 21 + 5];
    CHECK(near > near_side + 5.0f);
    CHECK(far - far_side < 0.5f * (near - near_side));
    /* Monotone fall along a column away from the edge. */
    size_t rising = 0;
    for (uint32_t j = 8; j < 15; j++)
        rising += p.heights[(j + 1) * 21 + 5] > p.heights[j * 21 + 5];
    CHECK_EQ_INT(rising, 0);
    trn_field_dispose(&p);
    CHECK_STATUS(trn_field_pad_fall(&f, 1, 1, 1, 1, NAN, &p, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "base height");
    CHECK(p.heights == NULL);
    trn_field_dispose(&f);
}

/* The 16-bit height scale: gdal_translate -scale's mapping, the stretch default, rounding half
 * up, clamping at both ends, and the level counts. */
static void test_height_scale(void)
{
    trn_height_scale s;
    trn_error e;
    /* 0 .. 100 m stored as 1000 .. 2000: 0.1 m a step, stored 0 at -100 m. */
    CHECK_OK(trn_height_scale_from_range(0, 100, 1000, 2000, &s, &e));
    CHECK(s.quantum == 0.1 && s.base == -100.0);
    CHECK_EQ_INT(trn_height_scale_store(&s, 0.0), 1000);
    CHECK_EQ_INT(trn_height_scale_store(&s, 100.0), 2000);
    CHECK_OK(trn_height_scale_from_range(-5, 5, 0, 65535, &s, &e));
    CHECK(s.base == -5.0 && s.quantum == 10.0 / 65535.0);
    CHECK_STATUS(trn_height_scale_from_range(5, 5, 0, 65535, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_height_scale_from_range(0, NAN, 0, 65535, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_height_scale_from_range(0, 1, -1, 65535, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_height_scale_from_range(0, 1, 0, 65536, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_height_scale_from_range(0, 1, 7, 7, &s, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_height_scale_from_range(0, 1, 0, 65535, &s, &e)); /* the limits themselves */
    CHECK_OK(trn_height_scale_from_range(0, 1, 65534, 65535, &s, &e));
    /* Rounding: half a step up goes up; below -0.5 steps is clamped (and counted). */
    trn_height_scale unit = {0.0, 1.0};
    CHECK_EQ_INT(trn_height_scale_store(&unit, 2.5), 3);
    CHECK_EQ_INT(trn_height_scale_store(&unit, 2.49), 2);
    CHECK_EQ_INT(trn_height_scale_store(&unit, -0.5), 0);
    CHECK_EQ_INT(trn_height_scale_store(&unit, -7.0), 0);
    CHECK_EQ_INT(trn_height_scale_store(&unit, 65535.49), 65535);
    CHECK_EQ_INT(trn_height_scale_store(&unit, 1e9), 65535);
    CHECK_EQ_INT(trn_height_scale_store(&unit, NAN), 0);
    const float hs[9] = {-0.5f, -0.51f, 2.5f, 3.0f, 3.4f, 65535.4f, 65535.5f, NAN, 3.0f};
    trn_height_levels lv;
    CHECK_OK(trn_height_levels_count(hs, 9, &unit, &lv, &e));
    /* Levels 0 (-0.5 and -0.51), 3 (2.5, 3.0, 3.4, 3.0), 65535 (65535.4, 65535.5). */
    CHECK_EQ_INT(lv.levels, 3);
    CHECK_EQ_INT(lv.below, 1);
    CHECK_EQ_INT(lv.above, 1);
    CHECK_EQ_INT(lv.nan, 1);
    /* Samples unlike the first height on their level: -0.51 (level 0 began with -0.5), 3.0,
     * 3.4 and the last 3.0 (level 3 began with 2.5), 65535.5. */
    CHECK_EQ_INT(lv.merged, 5);
    CHECK(lv.stored_min == 0 && lv.stored_max == 65535);
    /* Stretch: lowest at 0, highest at 65535; NaN and infinities ignored; flat keeps 1 m. */
    const float ramp[5] = {NAN, 10.0f, INFINITY, 30.0f, 20.0f};
    trn_height_scale_stretch(ramp, 5, &s);
    CHECK(s.base == 10.0 && s.quantum == 20.0 / 65535.0);
    CHECK_EQ_INT(trn_height_scale_store(&s, 30.0), 65535);
    CHECK_EQ_INT(trn_height_scale_store(&s, 20.0), 32768);
    CHECK_OK(trn_height_levels_count(ramp + 1, 1, &s, &lv, &e));
    CHECK(lv.levels == 1 && lv.stored_min == 0 && lv.stored_max == 0 && lv.merged == 0);
    const float flat[3] = {4.0f, 4.0f, 4.0f};
    trn_height_scale_stretch(flat, 3, &s);
    CHECK(s.base == 4.0 && s.quantum == 1.0 / 65536.0);
    CHECK_OK(trn_height_levels_count(flat, 3, &s, &lv, &e));
    CHECK(lv.levels == 1 && lv.merged == 0);
    trn_height_scale_stretch(NULL, 0, &s);
    CHECK(s.base == 0.0 && s.quantum == 1.0 / 65536.0);
    CHECK_OK(trn_height_levels_count(NULL, 0, &s, &lv, &e));
    CHECK(lv.levels == 0 && lv.stored_min == 0 && lv.stored_max == 0);
}

/* trn_height_levels_count as one pass over the samples in order (its definition). */
static void levels_reference(const float *h, size_t n, const trn_height_scale *sc,
                             trn_height_levels *out)
{
    memset(out, 0, sizeof *out);
    static float first[65536];
    static bool seen[65536];
    memset(seen, 0, sizeof seen);
    uint32_t lo = 65535, hi = 0;
    for (size_t k = 0; k < n; k++) {
        const double v = floor(((double)h[k] - sc->base) / sc->quantum + 0.5);
        if (isnan(v)) {
            out->nan++;
            continue;
        }
        const uint32_t s = v < 0         ? (out->below++, 0u)
                           : v > 65535.0 ? (out->above++, 65535u)
                                         : (uint32_t)v;
        if (!seen[s]) {
            seen[s] = true;
            first[s] = h[k];
            out->levels++;
        } else if (first[s] != h[k]) {
            out->merged++;
        }
        lo = s < lo ? s : lo;
        hi = s > hi ? s : hi;
    }
    if (out->levels) {
        out->stored_min = (uint16_t)lo;
        out->stored_max = (uint16_t)hi;
    }
}

/* Large arrays are counted in blocks side by side: the same counts on 1, 2 and 3 threads as
 * one pass in order, where each block's own first height on a level differs from the array's
 * and the array's comes back later (merged is measured against the array's first), where
 * they agree (whole levels, as a 16-bit input gives), and with NaN and clamped samples. */
static void test_levels_blocks(void)
{
    const size_t n = 200003; /* not a multiple of 2 or 3 */
    float *h = malloc(n * sizeof *h);
    CHECK(h != NULL);
    if (!h) return;
    trn_height_scale sc = {0.0, 1.0};
    uint32_t x = 12345u;
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
#endif
    for (int pass = 0; pass < 3; pass++) {
        for (size_t k = 0; k < n; k++) {
            x = x * 1664525u + 1013904223u;
            const float level = (float)(x >> 24); /* 256 levels */
            if (pass == 0) /* four heights a level, in an order that differs block to block */
                h[k] = level + 0.125f * (float)((x >> 8) & 3u);
            else if (pass == 1) /* whole levels */
                h[k] = level;
            else /* and NaN, below 0 and above 65535 now and then */
                h[k] = (x & 0xffu) == 7u    ? NAN
                       : (x & 0xffu) == 9u  ? -3.0f
                       : (x & 0xffu) == 11u ? 70000.0f + (float)(x >> 28)
                                            : level + 0.25f * (float)((x >> 10) & 1u);
        }
        trn_height_levels want;
        levels_reference(h, n, &sc, &want);
        CHECK(want.merged > 0 || pass == 1);
        for (int threads = 1; threads <= 3; threads++) {
            test_set_threads(threads);
            trn_height_levels got;
            trn_error e;
            CHECK_OK(trn_height_levels_count(h, n, &sc, &got, &e));
            CHECK_EQ_INT(got.levels, want.levels);
            CHECK_EQ_INT(got.merged, want.merged);
            CHECK_EQ_INT(got.nan, want.nan);
            CHECK_EQ_INT(got.below, want.below);
            CHECK_EQ_INT(got.above, want.above);
            CHECK_EQ_INT(got.stored_min, want.stored_min);
            CHECK_EQ_INT(got.stored_max, want.stored_max);
        }
    }
#ifdef _OPENMP
    test_set_threads(saved);
#endif
    free(h);
}

int main(void)
{
    RUN(test_levels_blocks);
    RUN(test_bilinear_exact_on_plane);
    RUN(test_bicubic_on_quadratic);
    RUN(test_same_size_is_a_copy);
    RUN(test_average_shrinks_without_aliasing);
    RUN(test_resample_errors);
    RUN(test_crop);
    RUN(test_pow2);
    RUN(test_fill_plane_and_saddle);
    RUN(test_fill_paraboloid_no_spikes);
    RUN(test_fill_deterministic_and_errors);
    RUN(test_pad);
    RUN(test_pad_fall);
    RUN(test_height_scale);
    return trn_test_finish();
}
