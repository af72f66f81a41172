/* Tests: breaching over tiles gives trn_drainage_breach's whole-grid bytes for every tiling. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/drainage.h"
#include "terrane/drainage_tiled.h"
#include "test.h"

/* Smooth valleys with fine noise: long rivers across tiles, many pits to breach. */
static void valleys(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i, z = (double)j;
            const double v = 30.0 * sin(x * 0.05 + seed) * cos(z * 0.07) + 10.0 * sin(x * 0.31) +
                             0.01 * (double)(trn_test_mix32((uint32_t)(j * nx + i) ^ seed) % 1000u);
            f->heights[j * nx + i] = (float)v;
        }
}

/* Coarse steps: flats, ties and pits whose notches run several floats deep. */
static void terraces(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double smooth = 20.0 * sin((double)i * 0.21) * cos((double)j * 0.17);
            const uint32_t r = trn_test_mix32((uint32_t)(j * nx + i) ^ trn_test_mix32(seed));
            f->heights[j * nx + i] = (float)floor(smooth + (double)(r % 7u));
        }
}

/* Heights around zero of both signs and the smallest floats: the notch crosses +0 and -0. */
static void zeros(trn_field *f)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    static const float pick[] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 2 * FLT_TRUE_MIN, 1.0f};
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++)
            f->heights[j * nx + i] = pick[trn_test_mix32((uint32_t)(j * nx + i)) % 6u];
}

static const trn_field *g_field;

static trn_status field_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                float *out, trn_error *err)
{
    (void)user;
    (void)err;
    const size_t nx = (size_t)g_field->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)lj * w, g_field->heights + (size_t)(j0 + lj) * nx + i0,
               w * sizeof(float));
    return TRN_OK;
}

static trn_status paste(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                        const float *values, trn_error *err)
{
    (void)err;
    float *out = user;
    const size_t nx = (size_t)g_field->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)(j0 + lj) * nx + i0, values + (size_t)lj * w, w * sizeof(float));
    return TRN_OK;
}

/* The whole grid's breach (on threads) against the tiled one, for each tile size. */
static void compare(const trn_field *f, double sea, const char *what)
{
    static const uint32_t sizes[] = {1, 2, 3, 7, 16, 23, 64, 1000};
    const size_t n = ((size_t)f->cells_x + 1u) * ((size_t)f->cells_z + 1u);
    float *whole = malloc(n * sizeof *whole), *tiled = malloc(n * sizeof *tiled);
    CHECK(whole && tiled);
    g_field = f;
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        trn_drainage d;
        CHECK_OK(trn_drainage_compute(f, sea, &d, NULL, NULL, NULL));
        trn_field w = *f;
        memcpy(whole, f->heights, n * sizeof *whole);
        w.heights = whole;
        CHECK_OK(trn_drainage_breach(&w, &d, NULL));
        CHECK(memcmp(whole, f->heights, n * sizeof *whole) != 0); /* something was breached */
        trn_drainage_dispose(&d);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            trn_comm *comm = trn_comm_serial_new();
            trn_drainage_tiling g = {f->cells_x, f->cells_z, f->size_x, f->size_z,
                                     sea,        sizes[s],   0,         0};
            trn_drainage_tiles *t = NULL;
            CHECK_OK(
                trn_drainage_tiled_compute(comm, &g, field_heights, NULL, &t, NULL, NULL, NULL));
            memset(tiled, 0xff, n * sizeof *tiled);
            CHECK_OK(trn_drainage_tiles_breach(t, field_heights, NULL, paste, tiled, NULL));
            const bool ok = memcmp(whole, tiled, n * sizeof *tiled) == 0;
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "  %s: tiles of %u, %d threads differ\n", what, sizes[s], threads);
            trn_drainage_tiles_free(t);
            trn_comm_free(comm);
        }
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    free(whole);
    free(tiled);
}

static void test_valleys(void)
{
    trn_field f;
    trn_field_init(&f, 150, 97, 300.0, 194.0, NULL); /* 151 x 98: no tile size divides it */
    valleys(&f, 3);
    compare(&f, NAN, "valleys");
    compare(&f, 0.0, "valleys with sea");
    trn_field_dispose(&f);
}

static void test_terraces(void)
{
    trn_field f;
    trn_field_init(&f, 120, 88, 240.0, 176.0, NULL);
    terraces(&f, 5);
    compare(&f, NAN, "terraces");
    trn_field_dispose(&f);
}

static void test_zeros(void)
{
    trn_field f;
    trn_field_init(&f, 60, 45, 60.0, 45.0, NULL);
    zeros(&f);
    compare(&f, NAN, "zeros");
    trn_field_dispose(&f);
}

static void test_errors(void)
{
    CHECK_STATUS(trn_drainage_tiles_breach(NULL, field_heights, NULL, paste, NULL, NULL),
                 TRN_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN(test_valleys);
    RUN(test_terraces);
    RUN(test_zeros);
    RUN(test_errors);
    return trn_test_finish();
}
