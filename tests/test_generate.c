/* Tests for surface context, biome rules, water distance and recipe generation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/render.h"
#include "test.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- substrate ---- */

static void test_substrate_thresholds(void)
{
    const double sea = 10.0;
    /* wet: on a wet sample only (TRN_WET_DISTANCE is 0), whatever the slope or height */
    CHECK_EQ_INT(trn_substrate_classify(5.0, 0.0, 0.0, sea), TRN_SUBSTRATE_WET);
    CHECK_EQ_INT(trn_substrate_classify(50.0, 80.0, 0.0, sea), TRN_SUBSTRATE_WET);
    CHECK_EQ_INT(trn_substrate_classify(11.0, 0.0, 1e-9, sea), TRN_SUBSTRATE_SAND);
    /* rock from 35 degrees, inclusive, even on the beach */
    CHECK_EQ_INT(trn_substrate_classify(100.0, 35.0, 50.0, sea), TRN_SUBSTRATE_ROCK);
    CHECK_EQ_INT(trn_substrate_classify(100.0, nextafter(35.0, 0.0), 50.0, sea),
                 TRN_SUBSTRATE_SOIL);
    CHECK_EQ_INT(trn_substrate_classify(11.0, 40.0, 3.0, sea), TRN_SUBSTRATE_ROCK);
    /* sand: at most 2 above sea level and flatter than 15 degrees */
    CHECK_EQ_INT(trn_substrate_classify(12.0, 14.9, 3.0, sea), TRN_SUBSTRATE_SAND);
    CHECK_EQ_INT(trn_substrate_classify(12.0, 15.0, 3.0, sea), TRN_SUBSTRATE_SOIL);
    CHECK_EQ_INT(trn_substrate_classify(nextafter(12.0, 13.0), 0.0, 3.0, sea), TRN_SUBSTRATE_SOIL);
    /* a dry pit below sea level (not connected to the sea) is a beach, not water */
    CHECK_EQ_INT(trn_substrate_classify(2.0, 0.0, 30.0, sea), TRN_SUBSTRATE_SAND);
    CHECK_EQ_INT(trn_substrate_classify(40.0, 10.0, INFINITY, sea), TRN_SUBSTRATE_SOIL);
}

/* ---- rules ---- */

static trn_rule make_rule(const char *id, double priority, double blend)
{
    trn_rule r;
    memset(&r, 0, sizeof r);
    r.id = (char *)id;
    r.biome = (char *)"b";
    r.priority = priority;
    r.blend = blend;
    return r;
}

static trn_band band(double lo, double hi)
{
    trn_band b = {true, lo, hi};
    return b;
}

static trn_sample_context context(double height, double slope, double moisture, double wd,
                                  trn_substrate sub)
{
    trn_sample_context c = {height, slope, moisture, wd, sub};
    return c;
}

static void test_band_edges(void)
{
    trn_rule r = make_rule("edges", 0, 0);
    r.elevation = band(10.0, 20.0);
    r.slope = band(0.0, 30.0);
    r.moisture = band(0.25, 0.75);
    r.water_distance = band(0.0, 6.0);
    r.substrate_mask = (1u << TRN_SUBSTRATE_SAND) | (1u << TRN_SUBSTRATE_WET);
    trn_rule_test t;
    /* every band at its lower edge, then at its upper edge: inside (inclusive) */
    trn_sample_context c = context(10.0, 0.0, 0.25, 0.0, TRN_SUBSTRATE_SAND);
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.matched);
    CHECK_EQ_INT(t.first_rejected, -1);
    for (int b = 0; b < TRN_RULE_BAND_COUNT; b++)
        CHECK_EQ_INT(t.bands[b], TRN_BAND_INSIDE);
    c = context(20.0, 30.0, 0.75, 6.0, TRN_SUBSTRATE_WET);
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.matched);
    CHECK_EQ_INT(trn_rules_pick(&r, 1, &c), 0);
    /* one step past the upper edge of slope and moisture: the first in band order rejects */
    c = context(20.0, nextafter(30.0, 90.0), nextafter(0.75, 1.0), 6.0, TRN_SUBSTRATE_WET);
    trn_rule_test_sample(&r, &c, &t);
    CHECK(!t.matched);
    CHECK_EQ_INT(t.bands[TRN_RULE_BAND_ELEVATION], TRN_BAND_INSIDE);
    CHECK_EQ_INT(t.bands[TRN_RULE_BAND_SLOPE], TRN_BAND_OUTSIDE);
    CHECK_EQ_INT(t.bands[TRN_RULE_BAND_MOISTURE], TRN_BAND_OUTSIDE);
    CHECK_EQ_INT(t.first_rejected, TRN_RULE_BAND_SLOPE);
    CHECK_EQ_INT(trn_rules_pick(&r, 1, &c), -1);
    /* below the lower elevation edge; substrate outside too, elevation comes first */
    c = context(nextafter(10.0, 0.0), 5.0, 0.5, 1.0, TRN_SUBSTRATE_ROCK);
    trn_rule_test_sample(&r, &c, &t);
    CHECK_EQ_INT(t.first_rejected, TRN_RULE_BAND_ELEVATION);
    CHECK_EQ_INT(t.bands[TRN_RULE_BAND_SUBSTRATE], TRN_BAND_OUTSIDE);
    /* only the substrate rejects */
    c = context(15.0, 5.0, 0.5, 1.0, TRN_SUBSTRATE_SOIL);
    trn_rule_test_sample(&r, &c, &t);
    CHECK_EQ_INT(t.first_rejected, TRN_RULE_BAND_SUBSTRATE);
    /* water distance: infinite (no water anywhere) is outside a finite band */
    c = context(15.0, 5.0, 0.5, INFINITY, TRN_SUBSTRATE_SAND);
    trn_rule_test_sample(&r, &c, &t);
    CHECK_EQ_INT(t.first_rejected, TRN_RULE_BAND_WATER_DISTANCE);
    /* NaN is outside every band */
    c = context(NAN, 5.0, 0.5, 1.0, TRN_SUBSTRATE_SAND);
    trn_rule_test_sample(&r, &c, &t);
    CHECK_EQ_INT(t.first_rejected, TRN_RULE_BAND_ELEVATION);
    /* a rule without bands takes everything, all unconstrained */
    trn_rule any = make_rule("any", 0, 0);
    trn_rule_test_sample(&any, &c, &t);
    CHECK(t.matched);
    for (int b = 0; b < TRN_RULE_BAND_COUNT; b++)
        CHECK_EQ_INT(t.bands[b], TRN_BAND_UNCONSTRAINED);
    CHECK(t.strength == 1.0);
}

static void test_blend_strength(void)
{
    trn_rule r = make_rule("ramp", 0, 4.0);
    r.elevation = band(10.0, 100.0);
    trn_rule_test t;
    trn_sample_context c = context(11.0, 0, 0, 0, TRN_SUBSTRATE_SOIL);
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.strength == 0.25);
    c.height = 10.0;
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.strength == 0.0);
    CHECK(t.matched); /* a zero strength still matches: containment decides */
    c.height = 50.0;
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.strength == 1.0);
    /* no elevation band, or no blend: full strength */
    trn_rule flat = make_rule("flat", 0, 4.0);
    trn_rule_test_sample(&flat, &c, &t);
    CHECK(t.strength == 1.0);
    r.blend = 0.0;
    c.height = 10.0;
    trn_rule_test_sample(&r, &c, &t);
    CHECK(t.strength == 1.0);
}

static void test_rules_pick(void)
{
    trn_sample_context c = context(12.0, 5.0, 0.5, 3.0, TRN_SUBSTRATE_SOIL);
    /* no rules: the default */
    CHECK_EQ_INT(trn_rules_pick(NULL, 0, &c), -1);
    /* priority beats order and strength */
    trn_rule rules[4];
    rules[0] = make_rule("low", 1, 0);
    rules[1] = make_rule("high", 5, 10.0);
    rules[1].elevation = band(11.0, 20.0); /* strength 0.1 */
    CHECK_EQ_INT(trn_rules_pick(rules, 2, &c), 1);
    /* a higher priority that does not match loses to a matching lower one */
    rules[1].elevation = band(13.0, 20.0);
    CHECK_EQ_INT(trn_rules_pick(rules, 2, &c), 0);
    /* equal priority: the stronger blend wins, wherever it is in the list */
    rules[0] = make_rule("weak", 3, 8.0);
    rules[0].elevation = band(10.0, 30.0); /* (12-10)/8 = 0.25 */
    rules[1] = make_rule("strong", 3, 4.0);
    rules[1].elevation = band(10.0, 30.0); /* 0.5 */
    CHECK_EQ_INT(trn_rules_pick(rules, 2, &c), 1);
    rules[2] = rules[0];
    rules[0] = rules[1];
    rules[1] = rules[2];
    CHECK_EQ_INT(trn_rules_pick(rules, 2, &c), 0);
    /* full tie (priority and strength): the earlier rule */
    rules[0] = make_rule("first", 2, 0);
    rules[1] = make_rule("second", 2, 0);
    rules[2] = make_rule("third", 2, 2.0);
    rules[2].elevation = band(0.0, 30.0); /* saturated: strength 1, a tie too */
    CHECK_EQ_INT(trn_rules_pick(rules, 3, &c), 0);
    CHECK_EQ_INT(trn_rules_pick(rules + 1, 2, &c), 0);
    /* a later rule with a higher priority beats the tie */
    rules[3] = make_rule("later", 2.5, 0);
    CHECK_EQ_INT(trn_rules_pick(rules, 4, &c), 3);
    /* negative priorities still order */
    rules[0] = make_rule("a", -5, 0);
    rules[1] = make_rule("b", -1, 0);
    CHECK_EQ_INT(trn_rules_pick(rules, 2, &c), 1);
}

/* ---- slope ---- */

static void test_slope(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 8, 6, 16.0, 6.0, NULL)); /* cells 2 x 1 */
    const size_t nx = 9;
    /* a plane rising 0.5 per unit along x: 26.565 degrees inside, edges replicated give half
     * the gradient on the first and last columns */
    for (size_t j = 0; j <= 6; j++)
        for (size_t i = 0; i <= 8; i++)
            f.heights[j * nx + i] = (float)(0.5 * 2.0 * (double)i);
    const double want = atan(0.5) * 180.0 / 3.14159265358979323846;
    CHECK(fabs(trn_field_slope_at(&f, 4, 3) - want) < 1e-12);
    CHECK(fabs(trn_field_slope_at(&f, 4, 0) - want) < 1e-12); /* replicated rows: no change */
    CHECK(fabs(trn_field_slope_at(&f, 0, 3) - atan(0.25) * 180.0 / 3.14159265358979323846) < 1e-12);
    double row[9];
    trn_field_slope_row(&f, 6, row);
    for (uint32_t i = 0; i <= 8; i++)
        CHECK(row[i] == trn_field_slope_at(&f, i, 6));
    /* along z with the other cell size */
    for (size_t j = 0; j <= 6; j++)
        for (size_t i = 0; i <= 8; i++)
            f.heights[j * nx + i] = (float)(3.0 * (double)j); /* 3 per unit */
    CHECK(fabs(trn_field_slope_at(&f, 2, 2) - atan(3.0) * 180.0 / 3.14159265358979323846) < 1e-12);
    trn_field_dispose(&f);

    /* Bumpy ground: interior samples are the angles render --mode slope draws. */
    CHECK_OK(trn_field_init(&f, 40, 30, 80.0, 45.0, NULL));
    const size_t w = 41;
    for (size_t j = 0; j <= 30; j++)
        for (size_t i = 0; i <= 40; i++)
            f.heights[j * w + i] = (float)(7.0 * sin(0.3 * (double)i) * cos(0.45 * (double)j) +
                                           0.05 * (double)(i * j));
    trn_raster8 pic = {0, 0, 0, NULL};
    CHECK_OK(trn_render_slope(&f, NULL, &pic, NULL, NULL, NULL));
    int mismatches = 0;
    for (uint32_t j = 1; j < 30; j++)
        for (uint32_t i = 1; i < 40; i++) {
            const double deg = trn_field_slope_at(&f, i, j);
            const float v = (float)(deg * (255.0 / 90.0));
            const uint8_t byte = v >= 255.0f ? 255 : v <= 0.0f ? 0 : (uint8_t)(v + 0.5f);
            mismatches += pic.pixels[(size_t)(30 - j) * 41 + i] != byte; /* north-up picture */
        }
    CHECK_EQ_INT(mismatches, 0);
    trn_raster8_dispose(&pic);
    trn_field_dispose(&f);
}

/* ---- water distance ---- */

static uint64_t rng_state;

static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Reference: wet by repeated relaxation from the border, distances by trying every pair. */
static void brute_water(const trn_field *f, double sea, double *out)
{
    const size_t nx = f->cells_x + 1u, nz = f->cells_z + 1u, n = nx * nz;
    uint8_t *wet = calloc(n, 1);
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            if ((x == 0 || z == 0 || x == nx - 1 || z == nz - 1) &&
                (double)f->heights[z * nx + x] < sea)
                wet[z * nx + x] = 1;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t z = 0; z < nz; z++)
            for (size_t x = 0; x < nx; x++) {
                size_t k = z * nx + x;
                if (wet[k] || !((double)f->heights[k] < sea)) continue;
                if ((x > 0 && wet[k - 1]) || (x + 1 < nx && wet[k + 1]) || (z > 0 && wet[k - nx]) ||
                    (z + 1 < nz && wet[k + nx])) {
                    wet[k] = 1;
                    changed = true;
                }
            }
    }
    const double cx = f->size_x / f->cells_x, cz = f->size_z / f->cells_z;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++) {
            double best = INFINITY;
            for (size_t w = 0; w < nz; w++)
                for (size_t v = 0; v < nx; v++) {
                    if (!wet[w * nx + v]) continue;
                    double dx = ((double)x - (double)v) * cx, dz = ((double)z - (double)w) * cz;
                    double d = sqrt(dx * dx + dz * dz);
                    if (d < best) best = d;
                }
            out[z * nx + x] = best;
        }
    free(wet);
}

static void test_water_distance_brute_force(void)
{
    rng_state = 12345;
    int bad = 0, cases = 0, wet_cases = 0, dry_cases = 0;
    for (int trial = 0; trial < 300; trial++) {
        const uint32_t cx = 1 + (uint32_t)(rnd() * 24), cz = 1 + (uint32_t)(rnd() * 24);
        const double sx = cx * (0.25 + rnd() * 3.0), sz = cz * (0.25 + rnd() * 3.0);
        trn_field f;
        CHECK_OK(trn_field_init(&f, cx, cz, sx, sz, NULL));
        const size_t n = (size_t)(cx + 1) * (cz + 1);
        /* Smooth-ish bumps plus noise, so there are seas, islands and inland pits. */
        const double fa = 0.2 + rnd(), fb = 0.2 + rnd(), ph = rnd() * 6;
        const double level = rnd() * 2.5 - 1.5;
        for (size_t z = 0; z <= cz; z++)
            for (size_t x = 0; x <= cx; x++)
                f.heights[z * (cx + 1) + x] =
                    (float)(sin(fa * (double)x + ph) * cos(fb * (double)z) + 0.3 * (rnd() - 0.5));
        float *got = malloc(n * sizeof *got);
        double *want = malloc(n * sizeof *want);
        CHECK_OK(trn_water_distance_fill(&f, level, got, NULL, NULL, NULL));
        brute_water(&f, level, want);
        bool any_wet = false;
        for (size_t k = 0; k < n; k++) {
            if (want[k] == 0.0) any_wet = true;
            bool ok;
            if (isinf(want[k]))
                ok = isinf(got[k]);
            else if (want[k] == 0.0)
                ok = got[k] == 0.0f;
            else
                ok = fabs((double)got[k] - want[k]) <= 1e-6 * want[k];
            if (!ok && bad < 5)
                fprintf(stderr, "trial %d sample %zu: got %.9g want %.9g\n", trial, k,
                        (double)got[k], want[k]);
            bad += !ok;
        }
        wet_cases += any_wet;
        dry_cases += !any_wet;
        cases++;
        free(got);
        free(want);
        trn_field_dispose(&f);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(cases, 300);
    CHECK(wet_cases > 100); /* the random grids cover both cases */
    CHECK(dry_cases > 10);
}

static void test_water_distance_cases(void)
{
    /* An island ring: the sea outside, a lake below sea level inside that the ring closes. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 10, 10, 20.0, 10.0, NULL)); /* cells 2 x 1 */
    const size_t nx = 11;
    for (size_t z = 0; z <= 10; z++)
        for (size_t x = 0; x <= 10; x++) {
            const bool ring = x >= 2 && x <= 8 && z >= 2 && z <= 8;
            const bool inner = x >= 4 && x <= 6 && z >= 4 && z <= 6;
            f.heights[z * nx + x] = inner ? -3.0f : ring ? 5.0f : -1.0f;
        }
    float out[121];
    CHECK_OK(trn_water_distance_fill(&f, 0.0, out, NULL, NULL, NULL));
    CHECK(out[0] == 0.0f);
    CHECK(out[1 * nx + 1] == 0.0f);
    CHECK(out[5 * nx + 5] > 0.0f); /* the inland pit is dry */
    /* (5,5) to the nearest sea sample: (5,1) is 4 rows of 1, (1,5) 4 columns of 2 */
    CHECK(out[5 * nx + 5] == 4.0f);
    CHECK(out[2 * nx + 2] == 1.0f); /* one row from the sea below it */
    CHECK(out[2 * nx + 5] == 1.0f);
    CHECK(out[5 * nx + 2] == 2.0f); /* one column (2 units) from the sea to its west */
    /* A sample exactly at sea level is not below it. */
    for (size_t k = 0; k < 121; k++)
        f.heights[k] = 0.0f;
    CHECK_OK(trn_water_distance_fill(&f, 0.0, out, NULL, NULL, NULL));
    CHECK(isinf(out[0]) && isinf(out[60]));
    /* All below: all wet. */
    CHECK_OK(trn_water_distance_fill(&f, 0.5, out, NULL, NULL, NULL));
    CHECK(out[0] == 0.0f && out[60] == 0.0f && out[120] == 0.0f);
    /* Bad arguments. */
    trn_error e;
    CHECK_STATUS(trn_water_distance_fill(&f, NAN, out, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "sea level");
    CHECK_STATUS(trn_water_distance_fill(&f, 0.0, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

static int cancel_at(double done, const char *stage, void *user)
{
    (void)stage;
    const double *limit = user;
    return done >= *limit ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_water_distance_threads_and_cancel(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 600, 500, 1200.0, 600.0, NULL));
    const size_t nx = 601, n = nx * 501;
    for (size_t z = 0; z <= 500; z++)
        for (size_t x = 0; x <= 600; x++)
            f.heights[z * nx + x] =
                (float)(10.0 * sin(0.021 * (double)x) * cos(0.017 * (double)z) + 0.004 * (double)x);
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    CHECK_OK(trn_water_distance_fill(&f, 0.5, a, NULL, NULL, NULL));
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    CHECK_OK(trn_water_distance_fill(&f, 0.5, b, NULL, NULL, NULL));
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    CHECK(memcmp(a, b, n * sizeof *a) == 0);
    double limit = 0.5;
    trn_error e;
    CHECK_STATUS(trn_water_distance_fill(&f, 0.5, b, cancel_at, &limit, &e), TRN_ERR_CANCELLED);
    CHECK_CONTAINS(e.message, "water distance: cancelled");
    free(a);
    free(b);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_substrate_thresholds);
    RUN(test_band_edges);
    RUN(test_blend_strength);
    RUN(test_rules_pick);
    RUN(test_slope);
    RUN(test_water_distance_brute_force);
    RUN(test_water_distance_cases);
    RUN(test_water_distance_threads_and_cancel);
    return trn_test_finish();
}
