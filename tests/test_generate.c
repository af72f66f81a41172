/* Tests for surface context, biome rules, water distance and recipe generation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/recipe.h"
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

/* ---- generating recipes (built in code, independent of the JSON reader) ---- */

static trn_biome make_biome(const char *name, float r, float g, float b)
{
    trn_biome o;
    memset(&o, 0, sizeof o);
    o.name = (char *)name;
    o.color[0] = r;
    o.color[1] = g;
    o.color[2] = b;
    o.color[3] = 1.0f;
    o.texture_scale = 1.0;
    o.allow_snow = true;
    return o;
}

static trn_landform make_landform(const char *name, trn_profile profile, double base,
                                  double variation, double feature, uint32_t octaves)
{
    trn_landform l;
    memset(&l, 0, sizeof l);
    l.name = (char *)name;
    l.profile = profile;
    l.base_height = base;
    l.height_variation = variation;
    l.feature_size = feature;
    l.roughness = 0.5;
    l.octaves = octaves;
    l.warp_feature_size = 128.0;
    l.stretch = 1.0;
    return l;
}

/* Three recipes that exercise every part: an island with a warp and shore rules on
 * non-square cells, ridged stretched mountains with a derived sea level and moisture and
 * substrate rules, and plain hills without rules. */
typedef struct test_recipe {
    trn_recipe r;
    trn_landform land;
    trn_biome biomes[5];
    trn_rule rules[6];
} test_recipe;

static void recipe_island(test_recipe *t)
{
    memset(t, 0, sizeof *t);
    t->land = make_landform("island", TRN_PROFILE_FBM, -8.0, 40.0, 48.0, 5);
    t->land.warp_amplitude = 10.0;
    t->land.warp_feature_size = 40.0;
    t->biomes[0] = make_biome("grass", 0.36f, 0.58f, 0.26f);
    t->biomes[1] = make_biome("sand", 0.86f, 0.79f, 0.56f);
    t->biomes[2] = make_biome("rock", 0.47f, 0.45f, 0.42f);
    t->biomes[3] = make_biome("snow", 0.95f, 0.96f, 0.98f);
    t->rules[0] = make_rule("shoreline", 30, 1.5);
    t->rules[0].biome = (char *)"sand";
    t->rules[0].water_distance = band(0.0, 4.0);
    t->rules[1] = make_rule("cliffs", 20, 0);
    t->rules[1].biome = (char *)"rock";
    t->rules[1].slope = band(30.0, 90.0);
    t->rules[2] = make_rule("peaks", 20, 3.0);
    t->rules[2].biome = (char *)"snow";
    t->rules[2].elevation = band(18.0, 1000.0);
    t->r.size_x = 192.0;
    t->r.size_z = 120.0;
    t->r.cells_x = 96;
    t->r.cells_z = 80;
    t->r.seed = 3;
    t->r.chunk_cells = 32;
    t->r.has_sea_level = true;
    t->r.sea_level = 6.0;
    t->r.default_landform = t->land.name;
    t->r.landforms = &t->land;
    t->r.landform_count = 1;
    t->r.default_biome = (char *)"grass";
    t->r.biomes = t->biomes;
    t->r.biome_count = 4;
    t->r.rules = t->rules;
    t->r.rule_count = 3;
}

static void recipe_mountains(test_recipe *t)
{
    memset(t, 0, sizeof *t);
    t->land = make_landform("range", TRN_PROFILE_RIDGED, -20.0, 300.0, 400.0, 4);
    t->land.roughness = 0.35;
    t->land.warp_amplitude = 60.0;
    t->land.warp_feature_size = 300.0;
    t->land.stretch = 2.0;
    t->land.heading = 30.0;
    t->biomes[0] = make_biome("meadow", 0.42f, 0.56f, 0.3f);
    t->biomes[1] = make_biome("forest", 0.16f, 0.33f, 0.2f);
    t->biomes[2] = make_biome("cliff", 0.4f, 0.38f, 0.36f);
    t->biomes[3] = make_biome("beach", 0.8f, 0.75f, 0.5f);
    t->biomes[4] = make_biome("snow", 0.94f, 0.95f, 0.98f);
    t->rules[0] = make_rule("forest_belt", 10, 0);
    t->rules[0].biome = (char *)"forest";
    t->rules[0].moisture = band(0.45, 1.0);
    t->rules[0].elevation = band(0.0, 150.0);
    t->rules[1] = make_rule("cliffs", 20, 0);
    t->rules[1].biome = (char *)"cliff";
    t->rules[1].substrate_mask = 1u << TRN_SUBSTRATE_ROCK;
    t->rules[2] = make_rule("beach", 15, 0);
    t->rules[2].biome = (char *)"beach";
    t->rules[2].substrate_mask = (1u << TRN_SUBSTRATE_SAND) | (1u << TRN_SUBSTRATE_WET);
    t->rules[3] = make_rule("snowcap", 20, 25.0);
    t->rules[3].biome = (char *)"snow";
    t->rules[3].elevation = band(150.0, 1000.0);
    t->rules[3].slope = band(0.0, 45.0);
    t->r.size_x = t->r.size_z = 1024.0;
    t->r.cells_x = t->r.cells_z = 128;
    t->r.seed = 20240611;
    t->r.chunk_cells = 32;
    t->r.default_landform = t->land.name;
    t->r.landforms = &t->land;
    t->r.landform_count = 1;
    t->r.default_biome = (char *)"meadow";
    t->r.biomes = t->biomes;
    t->r.biome_count = 5;
    t->r.rules = t->rules;
    t->r.rule_count = 4;
}

static void recipe_hills(test_recipe *t)
{
    memset(t, 0, sizeof *t);
    t->land = make_landform("rolling", TRN_PROFILE_FBM, 0.0, 60.0, 300.0, 5);
    t->biomes[0] = make_biome("grass", 0.38f, 0.6f, 0.28f);
    t->r.size_x = 500.0;
    t->r.size_z = 700.0;
    t->r.cells_x = 50;
    t->r.cells_z = 70;
    t->r.seed = 4242;
    t->r.chunk_cells = 32;
    t->r.default_landform = t->land.name;
    t->r.landforms = &t->land;
    t->r.landform_count = 1;
    t->r.default_biome = (char *)"grass";
    t->r.biomes = t->biomes;
    t->r.biome_count = 1;
}

static uint64_t hash_of(const void *data, size_t size)
{
    return (uint64_t)XXH64(data, size, 0);
}

static bool generated_equal(const trn_generated *a, const trn_generated *b)
{
    const size_t n = trn_field_sample_count(&a->field);
    return n == trn_field_sample_count(&b->field) &&
           memcmp(a->field.heights, b->field.heights, n * sizeof(float)) == 0 &&
           memcmp(a->biomes.values, b->biomes.values, n) == 0 &&
           memcmp(a->sources, b->sources, n) == 0 &&
           memcmp(a->rule_index, b->rule_index, n * sizeof(int16_t)) == 0 &&
           memcmp(a->water_distance, b->water_distance, n * sizeof(float)) == 0 &&
           a->cache_key == b->cache_key && a->sea_level == b->sea_level;
}

/* Every sample's stored assignment is what the rules say about its context, as explain
 * recomputes it; and the context's moisture is trn_moisture_at's. */
static int check_consistent(const trn_recipe *r, const trn_generated *g)
{
    int bad = 0;
    const int default_biome = trn_recipe_find_biome(r, r->default_biome);
    for (uint32_t j = 0; j <= r->cells_z; j++)
        for (uint32_t i = 0; i <= r->cells_x; i++) {
            const size_t k = (size_t)j * (r->cells_x + 1u) + i;
            trn_sample_context c;
            trn_generated_context(g, r, i, j, &c);
            const int pick = trn_rules_pick(r->rules, r->rule_count, &c);
            const int biome =
                pick >= 0 ? trn_recipe_find_biome(r, r->rules[pick].biome) : default_biome;
            bad += g->rule_index[k] != pick;
            bad += g->biomes.values[k] != biome;
            bad += g->sources[k] != (pick >= 0 ? TRN_BIOME_FROM_RULE : TRN_BIOME_FROM_DEFAULT);
            bad += c.height != (double)g->field.heights[k];
            bad += c.water_distance != (double)g->water_distance[k];
            bad += c.moisture != trn_moisture_at(r->seed, (double)i * r->size_x / r->cells_x,
                                                 (double)j * r->size_z / r->cells_z);
            bad += !(c.moisture >= 0.0 && c.moisture <= 1.0);
        }
    return bad;
}

static void check_recipe(const char *name, const trn_recipe *r, uint64_t want_heights,
                         uint64_t want_biomes, uint64_t want_water)
{
    trn_generated one, two, opt;
    test_set_threads(1);
    CHECK_OK(trn_recipe_generate(r, NULL, &one, NULL, NULL, NULL));
    test_set_threads(2);
    CHECK_OK(trn_recipe_generate(r, NULL, &two, NULL, NULL, NULL));
    /* the threads option, whatever OpenMP's default is */
    trn_generate_options go = {
        .threads = 3, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    CHECK_OK(trn_recipe_generate(r, &go, &opt, NULL, NULL, NULL));
    CHECK(generated_equal(&one, &two));
    CHECK(generated_equal(&one, &opt));
    const size_t n = trn_field_sample_count(&one.field);
    CHECK_EQ_INT(n, (size_t)(r->cells_x + 1u) * (r->cells_z + 1u));
    const uint64_t hh = hash_of(one.field.heights, n * sizeof(float));
    const uint64_t hb = hash_of(one.biomes.values, n);
    const uint64_t hw = hash_of(one.water_distance, n * sizeof(float));
    if (hh != want_heights || hb != want_biomes || hw != want_water)
        fprintf(stderr, "%s: heights 0x%016llxull, biomes 0x%016llxull, water 0x%016llxull\n", name,
                (unsigned long long)hh, (unsigned long long)hb, (unsigned long long)hw);
    CHECK(hh == want_heights);
    CHECK(hb == want_biomes);
    CHECK(hw == want_water);
    uint64_t key = 0;
    CHECK_OK(trn_recipe_cache_key(r, &key, NULL));
    CHECK(one.cache_key == key);
    trn_sea_level_source src;
    CHECK(one.sea_level == trn_recipe_sea_level(r, &src, NULL, 0));
    CHECK_EQ_INT(one.sea_level_source, src);
    CHECK_EQ_INT(one.biomes.name_count, r->biome_count);
    for (uint32_t b = 0; b < r->biome_count && b < one.biomes.name_count; b++)
        CHECK(strcmp(one.biomes.names[b], r->biomes[b].name) == 0);
    CHECK_EQ_INT(check_consistent(r, &one), 0);
    trn_generated_dispose(&one);
    trn_generated_dispose(&two);
    trn_generated_dispose(&opt);
}

static void test_generate_golden(void)
{
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
#endif
    test_recipe t;
    recipe_island(&t);
    check_recipe("island", &t.r, 0x13aac61ddadd62b4ull, 0x77766a29af463125ull,
                 0xcc3234518deeee58ull);
    recipe_mountains(&t);
    CHECK(!t.r.has_sea_level); /* derived */
    check_recipe("mountains", &t.r, 0xb5b2830774971a50ull, 0xeb3c4216048f36a9ull,
                 0x039ea7d054bb3044ull);
    recipe_hills(&t);
    check_recipe("hills", &t.r, 0xa237f261b140cac6ull, 0xaca850e58a4f3d73ull,
                 0x5555e49f6ac39ca8ull);
#ifdef _OPENMP
    test_set_threads(saved);
#endif
}

/* The recipes above really reach every source of a biome. */
static void test_generate_coverage(void)
{
    test_recipe t;
    recipe_island(&t);
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, NULL));
    const size_t n = trn_field_sample_count(&g.field);
    size_t per_rule[4] = {0, 0, 0, 0}, wet = 0;
    for (size_t k = 0; k < n; k++) {
        per_rule[g.rule_index[k] + 1]++;
        wet += g.water_distance[k] == 0.0f;
    }
    CHECK(per_rule[0] > 0); /* default */
    CHECK(per_rule[1] > 0); /* shoreline */
    CHECK(per_rule[2] > 0); /* cliffs */
    CHECK(per_rule[3] > 0); /* peaks */
    CHECK(wet > 0);
    trn_generated_dispose(&g);
    /* no rules: every sample has the default, from the default */
    recipe_hills(&t);
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, NULL));
    int bad = 0;
    for (size_t k = 0; k < trn_field_sample_count(&g.field); k++)
        bad += g.biomes.values[k] != 0 || g.sources[k] != TRN_BIOME_FROM_DEFAULT ||
               g.rule_index[k] != -1;
    CHECK_EQ_INT(bad, 0);
    /* The derived sea level (a quarter of the relief) puts ground under water: heights span
     * the landform's range (generator version 1 left 12..45 of 0..60 and nothing wet). */
    CHECK(!t.r.has_sea_level);
    size_t wet_hills = 0;
    float lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < trn_field_sample_count(&g.field); k++) {
        wet_hills += g.water_distance[k] == 0.0f;
        lo = g.field.heights[k] < lo ? g.field.heights[k] : lo;
        hi = g.field.heights[k] > hi ? g.field.heights[k] : hi;
    }
    CHECK(wet_hills > trn_field_sample_count(&g.field) / 20u);
    CHECK(wet_hills < trn_field_sample_count(&g.field) / 3u);
    CHECK(lo >= 0.0f && lo < 6.0f && hi <= 60.0f && hi > 54.0f);
    trn_generated_dispose(&g);
}

typedef struct cancel_probe {
    const char *stage; /* cancel on the first report of this stage */
    int calls;
    double last;
    bool monotonic;
} cancel_probe;

static int probe_progress(double done, const char *stage, void *user)
{
    cancel_probe *p = user;
    p->calls++;
    if (done < p->last) p->monotonic = false;
    p->last = done;
    return p->stage && stage && strcmp(stage, p->stage) == 0 ? TRN_CANCEL : TRN_CONTINUE;
}

static bool is_empty(const trn_generated *g)
{
    trn_generated zero;
    memset(&zero, 0, sizeof zero);
    return memcmp(g, &zero, sizeof zero) == 0;
}

static void test_generate_cancel(void)
{
    test_recipe t;
    recipe_island(&t);
    /* The implicit graph's landform node reports as "node landform: landform". */
    static const char *const stages[] = {"node landform: landform", "water distance", "biomes"};
    for (int s = 0; s < 3; s++) {
        cancel_probe p = {stages[s], 0, 0.0, true};
        trn_generated g;
        memset(&g, 0x5a, sizeof g);
        trn_error e;
        CHECK_STATUS(trn_recipe_generate(&t.r, NULL, &g, probe_progress, &p, &e),
                     TRN_ERR_CANCELLED);
        CHECK(is_empty(&g));
        CHECK_CONTAINS(e.message, "cancelled");
    }
    /* without cancelling: progress only goes forward and ends at 1 */
    cancel_probe p = {NULL, 0, 0.0, true};
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, probe_progress, &p, NULL));
    CHECK(p.monotonic);
    CHECK(p.calls > 5);
    CHECK(p.last == 1.0);
    trn_generated_dispose(&g);
    trn_generated_dispose(&g); /* disposing twice, and NULL, are no-ops */
    trn_generated_dispose(NULL);
}

static void test_generate_errors(void)
{
    test_recipe t;
    recipe_island(&t);
    trn_generated g;
    trn_error e;
    /* validation runs first: a rule naming a missing biome */
    t.rules[1].biome = (char *)"lava";
    memset(&g, 0x5a, sizeof g);
    trn_status st = trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, &e);
    CHECK(st != TRN_OK);
    CHECK(is_empty(&g));
    CHECK_CONTAINS(e.message, "lava");
    recipe_island(&t);
    trn_generate_options bad_threads = {
        .threads = -1, .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
    CHECK_STATUS(trn_recipe_generate(&t.r, &bad_threads, &g, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK(is_empty(&g));
    CHECK_STATUS(trn_recipe_generate(NULL, NULL, &g, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_recipe_generate(&t.r, NULL, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    /* more biomes than a byte label holds */
    trn_biome *many = calloc(256, sizeof *many);
    char(*names)[16] = calloc(256, sizeof *names);
    for (int b = 0; b < 256; b++) {
        snprintf(names[b], sizeof names[b], "b%d", b);
        many[b] = make_biome(names[b], 0.5f, 0.5f, 0.5f);
    }
    t.r.biomes = many;
    t.r.biome_count = 256;
    t.r.default_biome = names[0];
    t.r.rule_count = 0;
    st = trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, &e);
    CHECK(st == TRN_ERR_LIMIT || st == TRN_ERR_VALIDATION);
    CHECK(is_empty(&g));
    t.r.biome_count = 255; /* the most that fits */
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, &e));
    trn_generated_dispose(&g);
    free(many);
    free(names);
}

static void test_generate_precision_diagnostic(void)
{
    test_recipe t;
    recipe_hills(&t);
    /* a tiny feature size with many octaves over a large terrain: the finest octave's
     * coordinates pass 2^22, so generation reports it and still gives finite heights */
    t.land.feature_size = 0.05;
    t.land.octaves = 16;
    t.r.size_x = t.r.size_z = 60000.0;
    t.r.cells_x = t.r.cells_z = 16;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, NULL));
    CHECK_EQ_INT(g.diagnostic_count, 1);
    if (g.diagnostic_count) CHECK_CONTAINS(g.diagnostics[0], "rolling");
    int bad = 0;
    for (size_t k = 0; k < trn_field_sample_count(&g.field); k++)
        bad += !isfinite(g.field.heights[k]);
    CHECK_EQ_INT(bad, 0);
    trn_generated_dispose(&g);
    recipe_hills(&t);
    CHECK_OK(trn_recipe_generate(&t.r, NULL, &g, NULL, NULL, NULL));
    CHECK_EQ_INT(g.diagnostic_count, 0);
    trn_generated_dispose(&g);
}

/* ---- the shipped example recipes look like their names ---- */

typedef struct example_stats {
    double wet, border_wet, centre_wet; /* shares of samples */
    double biome[8], rule[8];           /* shares per biome index, per rule index */
    float lowest, highest, p1, p99;
} example_stats;

static int compare_heights(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static bool example_generate(const char *name, trn_recipe *r, trn_generated *g, example_stats *st)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/examples/recipes/%s", TRN_SOURCE_DIR, name);
    trn_error e;
    trn_status status = trn_recipe_read(path, r, NULL, &e);
    CHECK_OK(status);
    if (status) return false;
    status = trn_recipe_generate(r, NULL, g, NULL, NULL, &e);
    CHECK_OK(status);
    if (status) {
        trn_recipe_dispose(r);
        return false;
    }
    memset(st, 0, sizeof *st);
    const uint32_t w = r->cells_x + 1u, h = r->cells_z + 1u;
    const size_t n = (size_t)w * h;
    size_t wet = 0, border = 0, border_wet = 0, centre = 0, centre_wet = 0;
    size_t biomes[8] = {0}, rules[8] = {0};
    for (uint32_t j = 0; j < h; j++)
        for (uint32_t i = 0; i < w; i++) {
            const size_t k = (size_t)j * w + i;
            const bool is_wet = g->water_distance[k] == 0.0f;
            wet += is_wet;
            if (i == 0 || j == 0 || i == w - 1u || j == h - 1u) {
                border++;
                border_wet += is_wet;
            }
            if (i > w / 4u && i < 3u * w / 4u && j > h / 4u && j < 3u * h / 4u) {
                centre++;
                centre_wet += is_wet;
            }
            if (g->biomes.values[k] < 8u) biomes[g->biomes.values[k]]++;
            if (g->rule_index[k] >= 0 && g->rule_index[k] < 8) rules[g->rule_index[k]]++;
        }
    st->wet = (double)wet / (double)n;
    st->border_wet = (double)border_wet / (double)border;
    st->centre_wet = (double)centre_wet / (double)centre;
    for (int b = 0; b < 8; b++) {
        st->biome[b] = (double)biomes[b] / (double)n;
        st->rule[b] = (double)rules[b] / (double)n;
    }
    float *sorted = malloc(n * sizeof *sorted);
    CHECK(sorted != NULL);
    if (sorted) {
        memcpy(sorted, g->field.heights, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, compare_heights);
        st->lowest = sorted[0];
        st->highest = sorted[n - 1];
        st->p1 = sorted[n / 100];
        st->p99 = sorted[n - 1 - n / 100];
        free(sorted);
    }
    fprintf(stderr, "  %s: heights %.1f..%.1f, %.1f%% wet\n", name, (double)st->lowest,
            (double)st->highest, 100.0 * st->wet);
    return true;
}

static int rule_named(const trn_recipe *r, const char *id)
{
    for (uint32_t k = 0; k < r->rule_count; k++)
        if (strcmp(r->rules[k].id, id) == 0) return (int)k;
    return -1;
}

/* Coarse facts about examples/recipes/ that the docs, the demo and the README rely on, so a
 * change to the noise that spoils them fails here (the pictures were checked by eye). */
static void test_generate_examples(void)
{
    trn_recipe r;
    trn_generated g;
    example_stats st;
    /* island: sea all round an island, about half the map; 10,110 is sand by "shoreline" in
     * the sea, as in the README's explain example; snow only on the top */
    if (example_generate("island.json", &r, &g, &st)) {
        /* sea level 0 since landscape evolution (was 8.5): a larger island, a third wet */
        CHECK(st.wet > 0.25 && st.wet < 2.0 / 3.0);
        CHECK(st.border_wet > 0.7 && st.centre_wet < 0.05);
        const uint32_t i = 10, j = 110; /* x 320, z 3520: 32 m a cell */
        const size_t k = (size_t)j * (r.cells_x + 1u) + i;
        CHECK_EQ_INT(g.rule_index[k], rule_named(&r, "shoreline"));
        CHECK_EQ_INT(g.biomes.values[k], trn_recipe_find_biome(&r, "sand"));
        const int snow = trn_recipe_find_biome(&r, "snow");
        CHECK(snow >= 0 && st.biome[snow] > 0.005 && st.biome[snow] < 0.05);
        CHECK(st.biome[trn_recipe_find_biome(&r, "grass")] > 0.15);
        CHECK(st.biome[trn_recipe_find_biome(&r, "rock")] > 0.02);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    /* hills: gentle (few steep banks), its 6 m sea level leaves a little water in the
     * lowest valley mouths, every biome has its share (the sea level and bands moved up with
     * its open border, whose land no longer falls to the edges: the median height 17.4 m ->
     * 21.4 m; with varied rock the strong rock holds the tops and the rest sits lower, so the
     * dry tops start at 22 m, not 25: 7.3% of the map, 4.4% at 25 m) */
    if (example_generate("hills.json", &r, &g, &st)) {
        CHECK(r.has_sea_level && r.sea_level == 6.0);
        CHECK(st.wet > 0.01 && st.wet < 0.15);
        CHECK(st.rule[rule_named(&r, "steep_banks")] < 0.15);
        for (uint32_t b = 0; b < r.biome_count && b < 8u; b++)
            CHECK(st.biome[b] > 0.05);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    /* valley: its graph publishes evolved ridges (landscape evolution replaced the droplet
     * erosion) with a flat floor along the path, and every node but the comment is evaluated */
    if (example_generate("valley.json", &r, &g, &st)) {
        const uint32_t i = 150, j = 235; /* x 1200, z 1880: on the path, 8 m a cell */
        const float floor_h = g.field.heights[(size_t)j * (r.cells_x + 1u) + i];
        CHECK(floor_h > 6.0f && floor_h < 36.0f); /* the 18 m floor */
        CHECK(st.p99 > 180.0f);
        uint32_t evaluated = 0;
        bool evolved = false;
        for (uint32_t k = 0; k < g.node_count; k++) {
            evaluated += g.nodes[k].outcome == TRN_NODE_EVALUATED;
            if (strcmp(g.nodes[k].type, "stream_power") == 0)
                evolved = g.nodes[k].outcome == TRN_NODE_EVALUATED;
        }
        CHECK_EQ_INT(evaluated, 7);
        CHECK(evolved && g.biome_rules);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    /* mountains: the relief spans most of height_variation, snow covers the high ground */
    if (example_generate("mountains.json", &r, &g, &st)) {
        const trn_landform *range = &r.landforms[trn_recipe_find_landform(&r, "range")];
        /* 0.6 since landscape evolution through rock of varied strength: the valleys cut deep,
         * the peaks are narrow (1% of the ground above 526 m of the 750) */
        CHECK((double)(st.p99 - st.p1) > 0.6 * range->height_variation);
        const int snow = trn_recipe_find_biome(&r, "snow");
        CHECK(snow >= 0 && st.biome[snow] > 0.05 && st.biome[snow] < 0.3);
        CHECK(st.wet == 0.0);
        for (uint32_t b = 0; b < r.biome_count && b < 8u; b++)
            CHECK(st.biome[b] > 0.05);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
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
    RUN(test_generate_golden);
    RUN(test_generate_coverage);
    RUN(test_generate_cancel);
    RUN(test_generate_errors);
    RUN(test_generate_precision_diagnostic);
    RUN(test_generate_examples);
    return trn_test_finish();
}
