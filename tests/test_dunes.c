/* Dune fields have the shape of wind-blown sand: gentle stoss, slip faces at repose on the lee. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/dunes.h"
#include "terrane/generate.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "terrane/stats.h"
#include "test.h"

#define PI 3.14159265358979323846

/* Slopes of a field measured along the wind: central differences, in degrees. */
typedef struct dune_shape {
    double stoss_median, stoss_p90; /* samples rising downwind, steeper than 3 degrees */
    double lee_p50, lee_p90, lee_max; /* samples falling downwind, steeper than 3 degrees */
    double steep_on_lee;              /* of the samples steeper than 20 degrees, falling downwind */
    double flat_share;                /* samples under 1 degree (interdune floors) */
    double across_wind;               /* steep samples: mean |sin| of gradient against wind */
} dune_shape;

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)(q * (double)(n - 1));
    return v[k];
}

static void measure(const trn_field *f, double heading, dune_shape *out)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    const double dx = f->size_x / f->cells_x, dz = f->size_z / f->cells_z;
    const double c = cos(heading * PI / 180.0), s = sin(heading * PI / 180.0);
    double *lee = malloc(nx * nz * sizeof *lee), *stoss = malloc(nx * nz * sizeof *stoss);
    size_t nl = 0, ns = 0, steep = 0, steep_lee = 0, flat = 0, all = 0;
    double across = 0.0, lee_max = 0.0;
    for (size_t j = 1; j + 1 < nz; j++)
        for (size_t i = 1; i + 1 < nx; i++) {
            const float *h = f->heights;
            const double gx = (h[j * nx + i + 1] - h[j * nx + i - 1]) / (2.0 * dx);
            const double gz = (h[(j + 1) * nx + i] - h[(j - 1) * nx + i]) / (2.0 * dz);
            const double g = sqrt(gx * gx + gz * gz), slope = atan(g) * 180.0 / PI;
            all++;
            if (slope < 1.0) flat++;
            if (slope < 3.0) continue;
            const double along = gx * c + gz * s; /* rise per metre downwind */
            if (slope > 20.0) {
                steep++;
                steep_lee += along < 0.0;
                across += fabs(gx * -s + gz * c) / g;
            }
            if (along < 0.0) {
                lee[nl++] = slope;
                if (slope > lee_max) lee_max = slope;
            } else {
                stoss[ns++] = slope;
            }
        }
    out->stoss_median = pct(stoss, ns, 0.5);
    out->stoss_p90 = pct(stoss, ns, 0.9);
    out->lee_p50 = pct(lee, nl, 0.5);
    out->lee_p90 = pct(lee, nl, 0.9);
    out->lee_max = lee_max;
    out->steep_on_lee = steep ? (double)steep_lee / (double)steep : 0.0;
    out->across_wind = steep ? across / (double)steep : 0.0;
    out->flat_share = (double)flat / (double)all;
    free(lee);
    free(stoss);
}

static double steepest_pair(const trn_field *f);

static bool field_new(trn_field *f, uint32_t cells, double size)
{
    trn_error e;
    return trn_field_init(f, cells, cells, size, size, &e) == TRN_OK;
}

/* Transverse ridges: the windward side gentle (5-15 degrees, as measured on real dunes), the
 * lee a slip face near repose and never over it, nearly every steep face on the lee, and flat
 * floors between. Turning the wind turns the slip faces with it. Measured: stoss median 9.2,
 * p90 13.6; lee p90 32.1, max 33.4 (steepest pair of samples 32.0; without the avalanche pass
 * 39.4 and 39.0); 98% of the faces over 20 degrees on the lee; 52% flat. */
static void test_transverse_shape(void)
{
    trn_dune_params p;
    trn_dune_params_default(&p);
    p.height = 24;
    p.wavelength = 320;
    p.crest_warp = 80;
    p.warp_feature_size = 900;
    p.defect_spacing = 1000;
    p.horn = 0.6;
    const double headings[] = {20.0, 200.0};
    for (int w = 0; w < 2; w++) {
        p.wind_heading = headings[w];
        trn_field f;
        CHECK(field_new(&f, 512, 2048.0));
        trn_error e;
        CHECK_OK(trn_dunes_fill(&p, 202, &f, 0, NULL, &e));
        dune_shape d;
        measure(&f, p.wind_heading, &d);
        fprintf(stderr, "heading %.0f: stoss median %.1f p90 %.1f, lee p50 %.1f p90 %.1f max %.2f, "
                        "steepest pair %.3f, steep on lee %.3f, flat %.2f\n",
                p.wind_heading, d.stoss_median, d.stoss_p90, d.lee_p50, d.lee_p90, d.lee_max,
                steepest_pair(&f), d.steep_on_lee, d.flat_share);
        CHECK(d.stoss_median >= 5.0 && d.stoss_median <= 15.0);
        CHECK(d.stoss_p90 <= 15.0);
        CHECK(d.lee_p90 >= p.repose_angle - 2.0 && d.lee_p90 <= p.repose_angle + 0.5);
        /* No pair of samples (16 directions) steeper than repose: the avalanche pass; the
         * slope a user measures (central differences over two cells) stays within 2 degrees. */
        CHECK(steepest_pair(&f) <= p.repose_angle + 0.001);
        CHECK(d.lee_max <= p.repose_angle + 2.0);
        CHECK(d.lee_p90 > 2.0 * d.stoss_p90);
        CHECK(d.steep_on_lee > 0.95);
        CHECK(d.flat_share > 0.2);
        trn_field_dispose(&f);
    }
}

/* Linear (seif) dunes run along the wind: their steep faces look across it. */
static void test_linear_along_wind(void)
{
    trn_dune_params p;
    trn_dune_params_default(&p);
    p.pattern = TRN_DUNES_LINEAR;
    p.height = 30;
    p.wavelength = 500;
    p.stoss_angle = 14;
    p.wind_heading = 20;
    trn_field f;
    CHECK(field_new(&f, 256, 2048.0));
    trn_error e;
    CHECK_OK(trn_dunes_fill(&p, 7, &f, 0, NULL, &e));
    dune_shape d;
    measure(&f, p.wind_heading, &d);
    CHECK(d.across_wind > 0.8);
    trn_field_dispose(&f);
    /* The same field as transverse ridges faces along the wind. */
    p.pattern = TRN_DUNES_TRANSVERSE;
    CHECK(field_new(&f, 256, 2048.0));
    CHECK_OK(trn_dunes_fill(&p, 7, &f, 0, NULL, &e));
    measure(&f, p.wind_heading, &d);
    CHECK(d.across_wind < 0.5);
    trn_field_dispose(&f);
}

/* The steepest drop between two samples of f, 16 directions (the 8 nearest and the knight's
 * moves), in degrees. */
static double steepest_pair(const trn_field *f)
{
    static const int di[16] = {1, -1, 0, 0, 1, -1, 1, -1, 2, -2, 2, -2, 1, -1, 1, -1};
    static const int dj[16] = {0, 0, 1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 2, 2, -2, -2};
    const long nx = (long)f->cells_x + 1, nz = (long)f->cells_z + 1;
    const double dx = f->size_x / f->cells_x, dz = f->size_z / f->cells_z;
    double worst = 0.0;
    for (long j = 0; j < nz; j++)
        for (long i = 0; i < nx; i++)
            for (int n = 0; n < 16; n++) {
                const long a = i + di[n], b = j + dj[n];
                if (a < 0 || b < 0 || a >= nx || b >= nz) continue;
                const double dist = sqrt(di[n] * di[n] * dx * dx + dj[n] * dj[n] * dz * dz);
                const double t = (f->heights[j * nx + i] - f->heights[b * nx + a]) / dist;
                if (t > worst) worst = t;
            }
    return atan(worst) * 180.0 / PI;
}

/* The avalanche pass leaves no neighbour pair (16 directions) steeper than repose, only ever
 * raises, and keeps the top: a 20 m spike on a flat floor becomes a cone at repose. */
static void test_avalanche(void)
{
    trn_field f;
    CHECK(field_new(&f, 64, 128.0));
    const size_t nx = 65;
    memset(f.heights, 0, nx * nx * sizeof *f.heights);
    f.heights[32 * nx + 32] = 20.0f;
    f.heights[10 * nx + 50] = 5.0f; /* a cliff from a step */
    for (size_t i = 0; i < nx; i++) f.heights[40 * nx + i] += 8.0f;
    float *before = malloc(nx * nx * sizeof *before);
    memcpy(before, f.heights, nx * nx * sizeof *before);
    const uint64_t raised = trn_dunes_avalanche(&f, 32.0);
    CHECK(raised > 100);
    CHECK(f.heights[32 * nx + 32] == 20.0f);
    const double t = tan(32.0 * PI / 180.0);
    static const int di[16] = {1, -1, 0, 0, 1, -1, 1, -1, 2, -2, 2, -2, 1, -1, 1, -1};
    static const int dj[16] = {0, 0, 1, -1, 1, 1, -1, -1, 1, 1, -1, -1, 2, 2, -2, -2};
    double worst = 0.0;
    bool lowered = false;
    for (long j = 0; j < 65; j++)
        for (long i = 0; i < 65; i++) {
            const float h = f.heights[j * 65 + i];
            if (h < before[j * 65 + i]) lowered = true;
            for (int n = 0; n < 16; n++) {
                const long a = i + di[n], b = j + dj[n];
                if (a < 0 || b < 0 || a > 64 || b > 64) continue;
                const double dist = 2.0 * sqrt((double)(di[n] * di[n] + dj[n] * dj[n]));
                const double over = (h - f.heights[b * 65 + a]) - t * dist;
                if (over > worst) worst = over;
            }
        }
    CHECK(!lowered);
    CHECK(worst < 1e-4);
    /* The cone's foot: 20 m at tan 32 reaches 32 m out, 16 samples. */
    CHECK(f.heights[32 * nx + 32 + 15] > 0.0f && f.heights[32 * nx + 32 + 17] == 0.0f);
    free(before);
    trn_field_dispose(&f);
}

/* Each sample before the avalanche depends on its position alone, and the avalanche is a
 * fixed raster order: one thread and two give the same bytes. Bad parameters are refused. */
static void test_threads_and_params(void)
{
    trn_dune_params p;
    trn_dune_params_default(&p);
    trn_field a, b;
    CHECK(field_new(&a, 200, 1500.0) && field_new(&b, 200, 1500.0));
    trn_error e;
    CHECK_OK(trn_dunes_fill(&p, 99, &a, 1, NULL, &e));
    CHECK_OK(trn_dunes_fill(&p, 99, &b, 2, NULL, &e));
    CHECK(memcmp(a.heights, b.heights, 201u * 201u * sizeof *a.heights) == 0);
    p.stoss_angle = 24;
    p.repose_angle = 22;
    CHECK_STATUS(trn_dunes_fill(&p, 99, &a, 1, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "stoss_angle must be under repose_angle");
    trn_dune_params_default(&p);
    p.sand_supply = 1.5;
    CHECK_STATUS(trn_dunes_fill(&p, 99, &a, 1, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "sand_supply");
    trn_field_dispose(&a);
    trn_field_dispose(&b);
}

/* The desert dunes preset on its own grid: no closed hollows (its interdune floors are open),
 * no grid fingerprints, no gullies (no sample on the floor below it), crests at 24 m at most.
 * Measured: 0.0% in depressions, 45-degree aspects 0.54 x chance, periodic 0.77. */
static void test_preset(void)
{
    const char *id = "builtin://terrain/desert-dunes";
    const char *text = trn_builtin_preset_text(id);
    CHECK(text != NULL);
    if (!text) return;
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), id, &r, NULL, &e));
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
    trn_stats_options so;
    trn_stats_options_default(&so);
    so.which = TRN_STATS_DEPRESSIONS | TRN_STATS_FINGERPRINTS;
    trn_terrain_stats st;
    CHECK_OK(trn_terrain_stats_compute(&g.field, &so, &st, NULL, NULL, &e));
    fprintf(stderr, "preset: depressions %.4f, 45-degree %.3f, periodic %.2f\n",
            st.depression_fraction, st.axis45_ratio, st.periodic_curvature_ratio);
    CHECK(st.depression_fraction < 0.03);
    CHECK(st.axis45_ratio <= 1.08);
    CHECK(st.periodic_curvature_ratio <= 2.0);
    const size_t n = (size_t)(g.field.cells_x + 1u) * (g.field.cells_z + 1u);
    float lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < n; k++) {
        lo = g.field.heights[k] < lo ? g.field.heights[k] : lo;
        hi = g.field.heights[k] > hi ? g.field.heights[k] : hi;
    }
    CHECK(lo == 0.0f && hi <= 24.0f && hi > 15.0f);
    dune_shape d;
    measure(&g.field, 20.0, &d);
    CHECK(d.steep_on_lee > 0.95 && d.lee_p90 > 30.0 && d.stoss_median < 12.0);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_transverse_shape);
    RUN(test_linear_along_wind);
    RUN(test_avalanche);
    RUN(test_threads_and_params);
    RUN(test_preset);
    return trn_test_finish();
}
