/* Landscape evolution free of the grid: Rho8 and MFD routing, the warped spline upsampling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/landscape.h"
#include "terrane/resample.h"
#include "terrane/stats.h"
#include "test.h"

static uint64_t hash_field(const trn_field *f)
{
    uint64_t h = 1469598103934665603ull;
    const size_t n = trn_field_sample_count(f);
    const unsigned char *b = (const unsigned char *)f->heights;
    for (size_t k = 0; k < n * sizeof(float); k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

/* fbm noise over cells x cells cells of 30 m, 400 m of relief, from a recipe's landform (the
 * library's own noise), generated once and copied. */
static trn_field made;

static void make_noise(trn_field *out, uint32_t cells)
{
    trn_error e;
    if (!made.heights || made.cells_x != cells) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"size\": [%u, %u], \"resolution\": [%u, %u], \"seed\": 7, \"sea_level\": "
                 "-1000, \"default_landform\": \"hills\", \"landforms\": {\"hills\": "
                 "{\"profile\": \"fbm\", \"base_height\": 0, \"height_variation\": 400, "
                 "\"feature_size\": %u, \"octaves\": 7, \"roughness\": 0.5}}, "
                 "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}}",
                 cells * 30u, cells * 30u, cells, cells, cells * 10u);
        trn_recipe r;
        trn_generated g;
        CHECK_OK(trn_recipe_parse(text, strlen(text), "noise.json", &r, NULL, &e));
        CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
        trn_field_dispose(&made);
        made = g.field;
        g.field.heights = NULL;
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    CHECK_OK(trn_field_init(out, cells, cells, made.size_x, made.size_z, &e));
    memcpy(out->heights, made.heights, trn_field_sample_count(out) * sizeof(float));
}

/* The presets' law (K 5e-5, m 0.5, Kd 0.05, dt 2e4, 30 m cells). */
static trn_evolve_options options(uint32_t steps, trn_flow_routing routing, int threads)
{
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.sp.steps = steps;
    o.sp.dt = 20000;
    o.sp.erodibility = 5e-5;
    o.sp.m = 0.5;
    o.sp.diffusion = 0.05;
    o.sp.threads = threads;
    o.sp.routing = routing;
    o.sp.seed = 11;
    return o;
}

static void fingerprints(const trn_field *f, trn_terrain_stats *st)
{
    trn_stats_options so;
    trn_stats_options_default(&so);
    so.which = TRN_STATS_FINGERPRINTS | TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE;
    trn_error e;
    CHECK_OK(trn_terrain_stats_compute(f, &so, st, NULL, NULL, &e));
}

/* D8 carves the detail returned to a fine grid into rills along the grid's axes and
 * diagonals, so slopes face multiples of 45 degrees far more often than chance; Rho8 and MFD
 * bring that back to real land's (at most 1.08). Measured on 257^2 fbm evolved 8 times coarser
 * (40 steps), then 4 fine steps: D8 1.26, Rho8 1.05, MFD 0.95 (chance 1; real DEMs
 * 0.96-1.01), every one draining (under 1% of the area in closed depressions). */
static void test_routing_fingerprint(void)
{
    const trn_flow_routing routes[3] = {TRN_ROUTING_D8, TRN_ROUTING_RHO8, TRN_ROUTING_MFD};
    const char *names[3] = {"d8", "rho8", "mfd"};
    double ratio[3];
    for (int r = 0; r < 3; r++) {
        trn_field f;
        make_noise(&f, 256);
        trn_evolve_options o = options(40, routes[r], 0);
        o.coarsen = 8;
        o.fine_steps = 4;
        trn_error e;
        CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
        trn_terrain_stats st;
        fingerprints(&f, &st);
        ratio[r] = st.axis45_ratio;
        printf("%s: 45-degree aspects %.3f x chance, axes %.3f, periodic %.2f, depressions "
               "%.2f%%, b %.3f\n",
               names[r], st.axis45_ratio, st.axis_share, st.periodic_curvature_ratio,
               100 * st.depression_fraction, st.area_exponent);
        CHECK(st.depression_fraction < 0.01);
        CHECK(st.periodic_curvature_ratio <= 2.0);
        trn_field_dispose(&f);
    }
    CHECK(ratio[0] > 1.15);
    CHECK(ratio[1] <= 1.08);
    CHECK(ratio[2] <= 1.08);
}

/* A coarse run brought back by Catmull-Rom leaves a crease at every coarse sample: the
 * curvature repeats with the coarse period, many times a shuffled profile's strongest period.
 * The warped C2 spline leaves none (at most 2). Measured on 257^2 fbm evolved 4 times coarser
 * (40 steps): cubic 31 at a period of 4, warped spline 1.2. */
static void test_upsample_creases(void)
{
    double ratio[2];
    for (int k = 0; k < 2; k++) {
        trn_field f;
        make_noise(&f, 256);
        trn_evolve_options o = options(40, TRN_ROUTING_RHO8, 0);
        o.coarsen = 4;
        o.upsample = k ? TRN_UPSAMPLE_WARPED_SPLINE : TRN_UPSAMPLE_CUBIC;
        trn_error e;
        CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
        trn_terrain_stats st;
        fingerprints(&f, &st);
        ratio[k] = st.periodic_curvature_ratio;
        printf("%s: periodic curvature %.2f (%c, period %.3g), 45-degree aspects %.3f\n",
               k ? "warped spline" : "cubic", st.periodic_curvature_ratio, st.periodic_axis,
               st.periodic_axis == 'z' ? st.periodic_period_z : st.periodic_period_x,
               st.axis45_ratio);
        if (!k) {
            const double period =
                st.periodic_axis == 'z' ? st.periodic_period_z : st.periodic_period_x;
            CHECK(fabs(period - 4.0) < 0.05);
        }
        trn_field_dispose(&f);
    }
    CHECK(ratio[0] > 4.0);
    CHECK(ratio[1] <= 2.0);
}

/* Rho8 draws and MFD sums are the same on any thread count, coarse and fine steps included;
 * the seed changes Rho8's draws. Pinned hashes catch changes to either scheme. */
static void test_deterministic(void)
{
    const trn_flow_routing routes[2] = {TRN_ROUTING_RHO8, TRN_ROUTING_MFD};
    const uint64_t pinned[2] = {0x5a18de9b23262b3eull, 0x034a399496537a26ull};
    for (int r = 0; r < 2; r++) {
        uint64_t h[3];
        const int threads[3] = {1, 2, 3};
        for (int t = 0; t < 3; t++) {
            trn_field f;
            make_noise(&f, 128);
            trn_evolve_options o = options(20, routes[r], threads[t]);
            o.coarsen = 2;
            o.fine_steps = 2;
            trn_error e;
            CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
            h[t] = hash_field(&f);
            trn_field_dispose(&f);
        }
        CHECK(h[0] == h[1] && h[0] == h[2]);
        if (h[0] != pinned[r])
            fprintf(stderr, "routing %d hash %016llx\n", (int)routes[r], (unsigned long long)h[0]);
        CHECK(h[0] == pinned[r]);
    }
    /* Another seed, other Rho8 draws: another surface. */
    trn_field a, b;
    make_noise(&a, 64);
    make_noise(&b, 64);
    trn_evolve_options o = options(10, TRN_ROUTING_RHO8, 1);
    trn_error e;
    CHECK_OK(trn_landscape_evolve(&a, &o, NULL, NULL, NULL, &e));
    o.sp.seed = 12;
    CHECK_OK(trn_landscape_evolve(&b, &o, NULL, NULL, NULL, &e));
    CHECK(hash_field(&a) != hash_field(&b));
    trn_field_dispose(&a);
    trn_field_dispose(&b);
}

/* MFD passes every sample's water on whole: on a tilted plane with low bumps, the drainage
 * area reaching the border is the map's area (to rounding), and water spreads: on the plane
 * the largest interior area stays far below the single-receiver routing's longest flow line. */
static void test_mfd_conserves(void)
{
    trn_error e;
    const uint32_t cells = 64;
    const size_t nx = cells + 1u, n = nx * nx;
    float *area = malloc(n * sizeof *area);
    CHECK(area != NULL);
    double largest[2];
    for (int k = 0; k < 2; k++) {
        trn_field f;
        CHECK_OK(trn_field_init(&f, cells, cells, 64.0, 64.0, &e));
        for (size_t j = 0; j < nx; j++)
            for (size_t i = 0; i < nx; i++) {
                const double x = (double)i, z = (double)j;
                f.heights[j * nx + i] =
                    (float)(0.5 * x + 0.2 * z + 0.01 * sin(1.7 * x) * cos(2.3 * z));
            }
        trn_stream_power_params p;
        trn_stream_power_params_default(&p);
        p.routing = k ? TRN_ROUTING_MFD : TRN_ROUTING_RHO8;
        p.steps = 1;
        p.uplift = 0;
        p.erodibility = 1e-9;
        p.diffusion = 0;
        p.fixed_border = true;
        p.drainage_area = area;
        CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
        double border = 0, most = 0;
        for (size_t j = 0; j < nx; j++)
            for (size_t i = 0; i < nx; i++) {
                const bool edge = i == 0 || j == 0 || i + 1 == nx || j + 1 == nx;
                const double a = area[j * nx + i];
                if (edge) border += a;
                else if (a > most) most = a;
            }
        largest[k] = most;
        if (k) CHECK(fabs(border - (double)n) < 1e-3 * (double)n);
        trn_field_dispose(&f);
    }
    printf("largest interior area on a plane: rho8 %.0f, mfd %.0f cells\n", largest[0],
           largest[1]);
    CHECK(largest[1] < 0.5 * largest[0]);
    free(area);
}

/* Bad routing and upsampling values are refused, by name. */
static void test_validation(void)
{
    trn_field f;
    make_noise(&f, 32);
    trn_evolve_options o = options(2, TRN_ROUTING_RHO8, 0);
    trn_error e;
    o.sp.routing = (trn_flow_routing)7;
    CHECK_STATUS(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "routing");
    o = options(2, TRN_ROUTING_SAME, 0);
    CHECK_STATUS(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    o = options(2, TRN_ROUTING_RHO8, 0);
    o.coarsen = 2;
    o.upsample = (trn_upsample_method)5;
    CHECK_STATUS(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "upsample");
    o.upsample = TRN_UPSAMPLE_WARPED_SPLINE;
    o.fine_routing = (trn_flow_routing)9;
    CHECK_STATUS(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "fine_routing");
    trn_field_dispose(&f);
}

/* Enlarging a field 4x: bicubic leaves a crease every coarse sample (a periodic curvature many
 * times a shuffled profile); the warped spline does not, keeps the land where it was, and gives
 * the same bytes on any thread count. */
static void test_upsample_spline(void)
{
    trn_field coarse, spline, cubic;
    make_noise(&coarse, 128);
    trn_error e;
    CHECK_OK(trn_field_upsample_spline(&coarse, 512, 512, 5, &spline, &e));
    CHECK_OK(trn_field_resample(&coarse, NULL, 512, 512, TRN_RESAMPLE_BICUBIC, &cubic, NULL, NULL,
                                &e));
    trn_terrain_stats a, b;
    fingerprints(&spline, &a);
    fingerprints(&cubic, &b);
    printf("  periodic curvature: spline %.2f, bicubic %.2f\n", a.periodic_curvature_ratio,
           b.periodic_curvature_ratio);
    /* This noise carries detail up to a few coarse cells: its spline still varies a little with
     * the knots (2.5), a tenth of what bicubic leaves (29). */
    CHECK(a.periodic_curvature_ratio <= 3.0);
    CHECK(b.periodic_curvature_ratio > 4.0);
    CHECK(a.periodic_curvature_ratio < 0.15 * b.periodic_curvature_ratio);
    /* The same land: the warp moves it by half a coarse cell at most, so the spline stays within
     * 15% of the 400 m relief of bicubic even on the steepest slopes, and the edges, where the
     * warp fades out, match the coarse samples. */
    double worst = 0;
    for (size_t k = 0; k < trn_field_sample_count(&spline); k++)
        worst = fmax(worst, fabs((double)spline.heights[k] - cubic.heights[k]));
    printf("  largest difference from bicubic %.2f m\n", worst);
    CHECK(worst < 60.0);
    CHECK(spline.heights[0] == coarse.heights[0]);
    CHECK(fabsf(spline.heights[512] - coarse.heights[128]) < 1e-3f);
    /* Deterministic: another run gives the same bytes. */
    trn_field again;
    CHECK_OK(trn_field_upsample_spline(&coarse, 512, 512, 5, &again, &e));
    CHECK(hash_field(&again) == hash_field(&spline));
    trn_field_dispose(&again);
    CHECK_STATUS(trn_field_upsample_spline(&coarse, 64, 512, 5, &again, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&spline);
    trn_field_dispose(&cubic);
    trn_field_dispose(&coarse);
}

int main(void)
{
    RUN(test_routing_fingerprint);
    RUN(test_upsample_creases);
    RUN(test_upsample_spline);
    RUN(test_deterministic);
    RUN(test_mfd_conserves);
    RUN(test_validation);
    trn_field_dispose(&made);
    return trn_test_finish();
}
