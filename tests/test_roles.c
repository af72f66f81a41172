/* Tests of automatic surface roles: thresholds, precedence, triangles, role maps, windows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/generate.h"
#include "terrane/roles.h"
#include "test.h"

static size_t idx(const trn_field *f, uint32_t i, uint32_t j)
{
    return (size_t)j * (f->cells_x + 1u) + i;
}

/* A plane rising along +x with the given gradient (metres per metre), 1 m cells. */
static void plane(trn_field *f, uint32_t cells, double gradient)
{
    CHECK_OK(trn_field_init(f, cells, cells, cells, cells, NULL));
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f->heights[idx(f, i, j)] = (float)(gradient * i);
}

static uint8_t *classify(const trn_roles_input *in, const trn_roles_params *p)
{
    uint8_t *roles = malloc(trn_field_sample_count(in->field));
    CHECK(roles != NULL);
    CHECK_OK(trn_roles_classify(in, p, roles, NULL));
    return roles;
}

static void test_defaults(void)
{
    trn_roles_params p;
    memset(&p, 0xff, sizeof p);
    trn_roles_params_default(&p);
    CHECK(p.cliff_slope == 55.0);
    CHECK(p.rock_slope == 35.0);
    CHECK(isinf(p.snow_height) && p.snow_height > 0);
    CHECK(p.shore_distance == 4.0);
    CHECK(p.sand_slope == 15.0);
    CHECK(p.cut_depth == 0.05);
    CHECK(p.deposit_depth == 0.05);
    CHECK_EQ_INT(p.channel_accumulation, 1024);
    CHECK(p.channel_sediment_slope == 8.0);
    CHECK(p.grass_moisture == 0.55);
    CHECK(p.grass_slope == 25.0);
    CHECK_EQ_INT(p.threads, 0);
    trn_roles_params_default(NULL); /* no-op */
}

/* Flat ground with nothing else is ground; moisture at the threshold is grass. */
static void test_flat(void)
{
    trn_field f;
    plane(&f, 4, 0.0);
    trn_roles_params p;
    trn_roles_params_default(&p);
    trn_roles_input in = {.field = &f};
    uint8_t *roles = classify(&in, &p);
    for (size_t k = 0; k < 25; k++)
        CHECK_EQ_INT(roles[k], TRN_ROLE_GROUND);
    free(roles);

    float moisture[25];
    for (size_t k = 0; k < 25; k++)
        moisture[k] = 0.5f;
    moisture[3] = 0.75f;
    moisture[4] = nextafterf(0.75f, 0.0f);
    p.grass_moisture = 0.75;
    in.moisture = moisture;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[3], TRN_ROLE_GRASS);
    CHECK_EQ_INT(roles[4], TRN_ROLE_GROUND);
    CHECK_EQ_INT(roles[0], TRN_ROLE_GROUND);
    free(roles);
    trn_field_dispose(&f);
}

/* Every slope threshold compares trn_field_slope_at's angle exactly: at the angle a sample
 * has, and one ulp above it. */
static void test_slope_thresholds(void)
{
    trn_field f;
    plane(&f, 8, tan(35.0 * 3.14159265358979323846 / 180.0));
    const double s = trn_field_slope_at(&f, 4, 4);
    CHECK(fabs(s - 35.0) < 1e-4);
    const double above = nextafter(s, INFINITY);
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.cliff_slope = 80.0;
    trn_roles_input in = {.field = &f};

    p.rock_slope = s;
    uint8_t *roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_ROCK);
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            CHECK_EQ_INT(roles[idx(&f, i, j)],
                         trn_field_slope_at(&f, i, j) >= s ? TRN_ROLE_ROCK : TRN_ROLE_GROUND);
    free(roles);
    p.rock_slope = above;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_GROUND);
    free(roles);

    /* Cliff at its threshold, rock just below it. */
    p.rock_slope = 10.0;
    p.cliff_slope = s;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_CLIFF);
    free(roles);
    p.cliff_slope = above;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_ROCK);
    free(roles);

    /* Grass needs slope < grass_slope. */
    p.rock_slope = 80.0;
    p.cliff_slope = 80.0;
    float moisture[81];
    for (size_t k = 0; k < 81; k++)
        moisture[k] = 1.0f;
    in.moisture = moisture;
    p.grass_slope = s;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_GROUND);
    free(roles);
    p.grass_slope = above;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_GRASS);
    free(roles);
    in.moisture = NULL;

    /* Sand needs slope < sand_slope; a steeper shore is wet ground. */
    float distance[81];
    for (size_t k = 0; k < 81; k++)
        distance[k] = 1.0f;
    in.water_distance = distance;
    p.sand_slope = s;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_WET_GROUND);
    free(roles);
    p.sand_slope = above;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_SAND);
    free(roles);
    in.water_distance = NULL;

    /* A channel is sediment below channel_sediment_slope, else wet ground. */
    uint32_t acc[81];
    for (size_t k = 0; k < 81; k++)
        acc[k] = 5000u;
    in.accumulation = acc;
    p.channel_sediment_slope = s;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_WET_GROUND);
    free(roles);
    p.channel_sediment_slope = above;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_SEDIMENT);
    free(roles);
    trn_field_dispose(&f);

    /* Thresholds of 0 hold everywhere; near 90 degrees the angle itself decides. */
    plane(&f, 8, 100.0);
    const double steep = trn_field_slope_at(&f, 4, 4);
    CHECK(steep > 89.0 && steep < 90.0);
    trn_roles_params_default(&p);
    trn_roles_input flat_in = {.field = &f};
    p.cliff_slope = steep;
    roles = classify(&flat_in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_CLIFF);
    free(roles);
    p.cliff_slope = nextafter(steep, INFINITY);
    roles = classify(&flat_in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_ROCK);
    free(roles);
    p.cliff_slope = 90.0;
    p.rock_slope = 90.0;
    roles = classify(&flat_in, &p);
    CHECK_EQ_INT(roles[idx(&f, 4, 4)], TRN_ROLE_GROUND);
    free(roles);
    trn_field_dispose(&f);

    plane(&f, 4, 0.0);
    p.rock_slope = 0.0;
    roles = classify(&flat_in, &p);
    for (size_t k = 0; k < 25; k++)
        CHECK_EQ_INT(roles[k], TRN_ROLE_ROCK);
    free(roles);
    trn_field_dispose(&f);
}

/* On a bumpy surface with unequal cell sizes, every sample's rock test agrees with
 * trn_field_slope_at for thresholds taken at many samples' own slopes (edges included). */
static void test_slope_matches_field_slope(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 30, 20, 45.0, 70.0, NULL));
    for (uint32_t j = 0; j <= 20; j++)
        for (uint32_t i = 0; i <= 30; i++)
            f.heights[idx(&f, i, j)] =
                (float)(9.0 * sin(i * 0.37 + 0.2) * cos(j * 0.29) + 3.0 * cos(i * 1.3 - j * 0.8));
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.cliff_slope = 90.0;
    trn_roles_input in = {.field = &f};
    const uint32_t probes[][2] = {{0, 0},  {30, 20}, {0, 20}, {30, 0}, {7, 0},
                                  {0, 11}, {15, 10}, {3, 17}, {22, 5}, {29, 19}};
    size_t mismatches = 0, rock = 0, total = 0;
    for (size_t q = 0; q < sizeof probes / sizeof probes[0]; q++) {
        const double s = trn_field_slope_at(&f, probes[q][0], probes[q][1]);
        const double thresholds[2] = {s, nextafter(s, INFINITY)};
        for (int t = 0; t < 2; t++) {
            p.rock_slope = thresholds[t];
            uint8_t *roles = classify(&in, &p);
            for (uint32_t j = 0; j <= 20; j++)
                for (uint32_t i = 0; i <= 30; i++) {
                    const bool want = trn_field_slope_at(&f, i, j) >= thresholds[t];
                    mismatches += (roles[idx(&f, i, j)] == TRN_ROLE_ROCK) != want;
                    rock += want;
                    total++;
                }
            CHECK_EQ_INT(roles[idx(&f, probes[q][0], probes[q][1])],
                         t == 0 ? TRN_ROLE_ROCK : TRN_ROLE_GROUND);
            free(roles);
        }
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK(rock > total / 10 && rock < total * 9 / 10);
    trn_field_dispose(&f);
}

/* A pit holding water: wet samples underwater, a gentle shore sand, a steep one wet ground,
 * ground beyond the shore distance, the distance itself inclusive. */
static void test_pit_with_water(void)
{
    enum { N = 40 };
    trn_field f;
    CHECK_OK(trn_field_init(&f, N, N, N, N, NULL));
    uint8_t *wet = calloc(trn_field_sample_count(&f), 1);
    float *distance = malloc(trn_field_sample_count(&f) * sizeof(float));
    CHECK(wet && distance);
    for (uint32_t j = 0; j <= N; j++)
        for (uint32_t i = 0; i <= N; i++) {
            const double dx = (double)i - N / 2, dz = (double)j - N / 2,
                         r = sqrt(dx * dx + dz * dz);
            /* A flat-bottomed bowl: gentle on the west, steep on the east. */
            const double rim = r > 8.0 ? (r - 8.0) * (dx > 0 ? 1.0 : 0.1) : 0.0;
            f.heights[idx(&f, i, j)] = (float)rim;
            wet[idx(&f, i, j)] = r <= 8.0;
        }
    CHECK_OK(trn_water_distance_fill_wet(&f, wet, distance, NULL, NULL, NULL));
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.shore_distance = 3.0;
    trn_roles_input in = {.field = &f, .wet = wet, .water_distance = distance};
    uint8_t *roles = classify(&in, &p);
    for (uint32_t j = 0; j <= N; j++)
        for (uint32_t i = 0; i <= N; i++) {
            const size_t k = idx(&f, i, j);
            const double s = trn_field_slope_at(&f, i, j);
            int want;
            if (wet[k])
                want = TRN_ROLE_UNDERWATER;
            else if (s >= p.cliff_slope)
                want = TRN_ROLE_CLIFF;
            else if (distance[k] <= 3.0f)
                want = s < p.sand_slope ? TRN_ROLE_SAND : TRN_ROLE_WET_GROUND;
            else
                want = s >= p.rock_slope ? TRN_ROLE_ROCK : TRN_ROLE_GROUND;
            CHECK_EQ_INT(roles[k], want);
        }
    /* The centre is wet, the west shore (1 and 3 units out) sand, 4 units out ground; the east
     * shore wet ground. */
    CHECK_EQ_INT(roles[idx(&f, N / 2, N / 2)], TRN_ROLE_UNDERWATER);
    CHECK(distance[idx(&f, N / 2 - 11, N / 2)] == 3.0f);
    CHECK_EQ_INT(roles[idx(&f, N / 2 - 11, N / 2)], TRN_ROLE_SAND);
    CHECK_EQ_INT(roles[idx(&f, N / 2 - 9, N / 2)], TRN_ROLE_SAND);
    CHECK_EQ_INT(roles[idx(&f, N / 2 - 12, N / 2)], TRN_ROLE_GROUND);
    CHECK_EQ_INT(roles[idx(&f, N / 2 + 10, N / 2)], TRN_ROLE_WET_GROUND);
    free(roles);

    /* Without coverage, a distance of 0 is wet. */
    in.wet = NULL;
    uint8_t *again = classify(&in, &p);
    CHECK_EQ_INT(again[idx(&f, N / 2, N / 2)], TRN_ROLE_UNDERWATER);
    CHECK_EQ_INT(again[idx(&f, N / 2 - 11, N / 2)], TRN_ROLE_SAND);
    free(again);
    /* Coverage wins over the distance: a dry sample at distance 0 is shore. */
    in.wet = wet;
    wet[idx(&f, N / 2, N / 2)] = 0;
    again = classify(&in, &p);
    CHECK_EQ_INT(again[idx(&f, N / 2, N / 2)], TRN_ROLE_SAND);
    free(again);
    free(wet);
    free(distance);
    trn_field_dispose(&f);
}

/* Signed transport: cuts expose rock, deposition is sediment, at the thresholds exactly. */
static void test_transport(void)
{
    trn_field f;
    plane(&f, 3, 0.0);
    float change[16] = {0};
    change[0] = -0.25f;
    change[1] = nextafterf(-0.25f, 0.0f);
    change[2] = 0.5f;
    change[3] = nextafterf(0.5f, 0.0f);
    change[4] = -3.0f;
    change[5] = 7.0f;
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.cut_depth = 0.25;
    p.deposit_depth = 0.5;
    trn_roles_input in = {.field = &f, .transport = change};
    uint8_t *roles = classify(&in, &p);
    CHECK_EQ_INT(roles[0], TRN_ROLE_ROCK);
    CHECK_EQ_INT(roles[1], TRN_ROLE_GROUND);
    CHECK_EQ_INT(roles[2], TRN_ROLE_SEDIMENT);
    CHECK_EQ_INT(roles[3], TRN_ROLE_GROUND);
    CHECK_EQ_INT(roles[4], TRN_ROLE_ROCK);
    CHECK_EQ_INT(roles[5], TRN_ROLE_SEDIMENT);
    CHECK_EQ_INT(roles[6], TRN_ROLE_GROUND);
    free(roles);

    /* Concentrated flow at the threshold is a channel. */
    uint32_t acc[16];
    for (size_t k = 0; k < 16; k++)
        acc[k] = 1u;
    acc[7] = 1024u;
    acc[8] = 1023u;
    in.transport = NULL;
    in.accumulation = acc;
    trn_roles_params_default(&p);
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[7], TRN_ROLE_SEDIMENT);
    CHECK_EQ_INT(roles[8], TRN_ROLE_GROUND);
    free(roles);
    trn_field_dispose(&f);
}

/* The snow line and each biome's allow_snow. */
static void test_snow(void)
{
    trn_field f;
    plane(&f, 3, 0.0);
    for (size_t k = 0; k < 16; k++)
        f.heights[k] = 100.0f;
    f.heights[15] = nextafterf(100.0f, 0.0f);
    uint8_t biomes[16] = {0};
    biomes[1] = 1;
    biomes[2] = 2;
    biomes[3] = TRN_LABEL_NONE;
    const bool allow[2] = {true, false};
    trn_roles_params p;
    trn_roles_params_default(&p);
    trn_roles_input in = {
        .field = &f, .biomes = biomes, .allow_snow = allow, .allow_snow_count = 2};
    uint8_t *roles = classify(&in, &p);
    for (size_t k = 0; k < 16; k++)
        CHECK_EQ_INT(roles[k], TRN_ROLE_GROUND); /* no snow line */
    free(roles);
    p.snow_height = 100.0;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[0], TRN_ROLE_SNOW);
    CHECK_EQ_INT(roles[1], TRN_ROLE_GROUND);  /* allow_snow false */
    CHECK_EQ_INT(roles[2], TRN_ROLE_SNOW);    /* beyond the table */
    CHECK_EQ_INT(roles[3], TRN_ROLE_SNOW);    /* no biome */
    CHECK_EQ_INT(roles[15], TRN_ROLE_GROUND); /* just below the line */
    free(roles);
    in.allow_snow = NULL;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[1], TRN_ROLE_SNOW);
    free(roles);
    in.allow_snow = allow;
    in.biomes = NULL;
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[1], TRN_ROLE_SNOW);
    free(roles);
    trn_field_dispose(&f);
}

/* The precedence order: peel one condition at a time off a sample that meets them all. */
static void test_precedence(void)
{
    trn_field f;
    plane(&f, 2, 0.0);
    float change[9], moisture[9], distance[9];
    uint32_t acc[9];
    uint8_t wet[9];
    for (size_t k = 0; k < 9; k++) {
        change[k] = -1.0f;
        moisture[k] = 1.0f;
        distance[k] = 0.0f;
        acc[k] = 1u << 20;
        wet[k] = 1;
    }
    trn_roles_params p;
    trn_roles_params_default(&p);
    p.cliff_slope = 0.0;
    p.rock_slope = 0.0;
    p.sand_slope = 15.0;
    p.snow_height = -1.0;
    p.channel_sediment_slope = 0.0;
    trn_roles_input in = {.field = &f,
                          .transport = change,
                          .accumulation = acc,
                          .moisture = moisture,
                          .wet = wet,
                          .water_distance = distance};
    const int order[] = {TRN_ROLE_UNDERWATER, TRN_ROLE_CLIFF,    TRN_ROLE_SNOW,  TRN_ROLE_SAND,
                         TRN_ROLE_WET_GROUND, TRN_ROLE_ROCK,     TRN_ROLE_ROCK,  TRN_ROLE_SEDIMENT,
                         TRN_ROLE_WET_GROUND, TRN_ROLE_SEDIMENT, TRN_ROLE_GRASS, TRN_ROLE_GROUND};
    for (size_t step = 0; step < sizeof order / sizeof order[0]; step++) {
        uint8_t *roles = classify(&in, &p);
        for (size_t k = 0; k < 9; k++)
            CHECK_EQ_INT(roles[k], order[step]);
        free(roles);
        switch (step) {
        case 0:
            memset(wet, 0, sizeof wet);
            break;
        case 1:
            p.cliff_slope = 90.0;
            break;
        case 2:
            p.snow_height = INFINITY;
            break;
        case 3:
            p.sand_slope = 0.0;
            break;
        case 4:
            in.water_distance = NULL;
            break;
        case 5:
            p.rock_slope = 90.0;
            break;
        case 6:
            for (size_t k = 0; k < 9; k++)
                change[k] = 1.0f;
            break;
        case 7:
            in.transport = NULL;
            break;
        case 8:
            p.channel_sediment_slope = 15.0;
            break;
        case 9:
            in.accumulation = NULL;
            break;
        case 10:
            p.grass_slope = 0.0;
            break;
        default:
            break;
        }
    }
    /* A height that is not finite has no role. */
    f.heights[4] = NAN;
    uint8_t *roles = classify(&in, &p);
    CHECK_EQ_INT(roles[4], TRN_ROLE_NONE);
    /* Its neighbours have no slope, so no "at least" threshold holds (0 neither) and "below"
     * ones do: moist, so grass. */
    CHECK_EQ_INT(roles[0], TRN_ROLE_GRASS);
    p.rock_slope = 0.0;
    p.cliff_slope = 0.0;
    free(roles);
    roles = classify(&in, &p);
    CHECK_EQ_INT(roles[0], TRN_ROLE_GRASS);
    free(roles);
    trn_field_dispose(&f);
}

static void test_errors(void)
{
    trn_field f;
    plane(&f, 2, 0.0);
    trn_roles_params p;
    trn_roles_params_default(&p);
    trn_roles_input in = {.field = &f};
    uint8_t roles[9];
    trn_error e;
    struct {
        double *field;
        double value;
        const char *message;
    } cases[] = {
        {&p.cut_depth, 0.0, "cut_depth: expected > 0, found 0"},
        {&p.deposit_depth, 0.0, "deposit_depth: expected > 0, found 0"},
        {&p.cliff_slope, -1.0, "cliff_slope: expected degrees >= 0, found -1"},
        {&p.rock_slope, NAN, "rock_slope: expected degrees >= 0, found nan"},
        {&p.sand_slope, -0.5, "sand_slope: expected degrees >= 0"},
        {&p.channel_sediment_slope, -1.0, "channel_sediment_slope: expected degrees >= 0"},
        {&p.grass_slope, -1.0, "grass_slope: expected degrees >= 0"},
        {&p.snow_height, NAN, "snow_height: expected a height or INFINITY"},
        {&p.shore_distance, -1.0, "shore_distance: expected world units >= 0, found -1"},
        {&p.grass_moisture, NAN, "grass_moisture: expected a moisture"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trn_roles_params_default(&p);
        *cases[c].field = cases[c].value;
        memset(roles, 0xaa, sizeof roles);
        CHECK_STATUS(trn_roles_classify(&in, &p, roles, &e), TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, cases[c].message);
        CHECK_EQ_INT(roles[0], 0xaa);
        CHECK_STATUS(trn_roles_classify_window(&in, &p, 0, 0, 3, 3, 0, roles, NULL, NULL, &e),
                     TRN_ERR_INVALID_ARGUMENT);
        CHECK_EQ_INT(roles[8], 0xaa);
    }
    /* The limits themselves are accepted. */
    trn_roles_params_default(&p);
    p.cliff_slope = p.rock_slope = p.sand_slope = p.grass_slope = p.channel_sediment_slope = 0.0;
    p.shore_distance = 0.0;
    p.snow_height = -INFINITY;
    CHECK_OK(trn_roles_classify(&in, &p, roles, NULL));
    trn_roles_params_default(&p);
    CHECK_STATUS(trn_roles_classify(NULL, &p, roles, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "expected a field with heights");
    CHECK_STATUS(trn_roles_classify(&in, NULL, roles, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "expected parameters");
    CHECK_STATUS(trn_roles_classify(&in, &p, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "expected an output buffer");
    trn_roles_input none = {0};
    CHECK_STATUS(trn_roles_classify(&none, &p, roles, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_field no_heights = f;
    no_heights.heights = NULL;
    none.field = &no_heights;
    CHECK_STATUS(trn_roles_classify(&none, &p, roles, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "expected a field with heights");
    /* A grid whose sample count overflows is refused before anything is read. */
    trn_field huge = f;
    huge.cells_x = huge.cells_z = UINT32_MAX;
    in.field = &huge;
    CHECK_STATUS(trn_roles_classify(&in, &p, roles, &e), TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(e.message, "overflow the sample count");
    trn_field zero = f;
    zero.cells_z = 0;
    in.field = &zero;
    CHECK_STATUS(trn_roles_classify(&in, &p, roles, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "found 2 x 0");
    trn_field_dispose(&f);
}

/* Majority of the three vertices, else the first vertex, in the documented vertex order. */
static void test_triangles(void)
{
    /* One cell: samples (0,0)=a, (1,0)=b, (0,1)=c, (1,1)=d. */
    struct {
        uint8_t a, b, c, d;
        uint8_t t0, t1;
    } cases[] = {
        {1, 1, 1, 1, 1, 1}, /* all equal */
        {1, 1, 2, 2, 1, 2}, /* t0 (a,b,d)=1,1,2 -> 1; t1 (a,d,c)=1,2,2 -> 2 */
        {1, 2, 3, 2, 2, 1}, /* t0 1,2,2 -> 2; t1 1,2,3 -> first 1 */
        {1, 2, 1, 3, 1, 1}, /* t0 1,2,3 -> 1; t1 1,3,1 -> 1 */
        {4, 5, 6, 7, 4, 4}, /* all different: the first vertex */
        {2, 3, 2, 2, 2, 2}, /* t0 2,3,2 -> 2 (first and third) */
        {5, 6, 7, 6, 6, 5}, /* t0 (5,6,6) -> 6; t1 (5,6,7) -> 5 */
        {9, 8, 9, 8, 8, 9}, /* t0 (9,8,8) -> 8; t1 (9,8,9) -> 9 */
        {255, 1, 1, 255, 255, 255},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const uint8_t s[4] = {cases[c].a, cases[c].b, cases[c].c, cases[c].d};
        uint8_t t[2] = {0, 0};
        CHECK_OK(trn_roles_triangles(1, 1, s, t, NULL));
        CHECK_EQ_INT(t[0], cases[c].t0);
        CHECK_EQ_INT(t[1], cases[c].t1);
    }
    /* Triangle numbering over a 2 x 2 grid: cell (i, j) owns 2 * (j * 2 + i) and the next. */
    uint8_t s[9], t[8];
    for (uint8_t k = 0; k < 9; k++)
        s[k] = k;
    s[4] = 4;
    CHECK_OK(trn_roles_triangles(2, 2, s, t, NULL));
    const uint8_t want[8] = {0, 0, 1, 1, 3, 3, 4, 4};
    for (size_t k = 0; k < 8; k++)
        CHECK_EQ_INT(t[k], want[k]);
    /* Cell (1, 1): vertices 4,5,8 and 4,8,7; make the second triangle's last two agree. */
    s[7] = 8;
    CHECK_OK(trn_roles_triangles(2, 2, s, t, NULL));
    CHECK_EQ_INT(t[6], 4);
    CHECK_EQ_INT(t[7], 8);
    s[5] = 8;
    CHECK_OK(trn_roles_triangles(2, 2, s, t, NULL));
    CHECK_EQ_INT(t[6], 8);

    trn_error e;
    CHECK_STATUS(trn_roles_triangles(0, 2, s, t, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_roles_triangles(2, 2, NULL, t, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "no samples");
    CHECK_STATUS(trn_roles_triangles(2, 2, s, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "no triangles");
    CHECK_STATUS(trn_roles_triangles(UINT32_MAX, UINT32_MAX, s, t, &e), TRN_ERR_OVERFLOW);
}

static void test_colors_and_map(void)
{
    const uint8_t want[TRN_ROLE_COUNT][3] = {{134, 96, 60},   {86, 152, 62},   {128, 128, 128},
                                             {72, 68, 66},    {176, 150, 104}, {218, 194, 142},
                                             {244, 246, 250}, {92, 70, 50},    {62, 118, 196}};
    for (uint8_t r = 0; r < TRN_ROLE_COUNT; r++) {
        uint8_t c[4];
        trn_roles_color(r, c);
        CHECK(c[0] == want[r][0] && c[1] == want[r][1] && c[2] == want[r][2] && c[3] == 255);
    }
    uint8_t c[4];
    trn_roles_color(TRN_ROLE_NONE, c);
    CHECK(c[0] == 0 && c[1] == 0 && c[2] == 0 && c[3] == 0);
    trn_roles_color(TRN_ROLE_COUNT, c);
    CHECK(c[3] == 0);

    /* 3 x 2 samples: row j = 0 is the picture's last row. */
    const uint8_t roles[6] = {TRN_ROLE_GROUND,     TRN_ROLE_ROCK, TRN_ROLE_ROCK,
                              TRN_ROLE_UNDERWATER, TRN_ROLE_NONE, 77};
    trn_roles_map map;
    CHECK_OK(trn_roles_map_render(2, 1, roles, &map, NULL));
    CHECK_EQ_INT(map.picture.width, 3);
    CHECK_EQ_INT(map.picture.height, 2);
    CHECK_EQ_INT(map.picture.channels, 4);
    const uint8_t *px = map.picture.pixels;
    CHECK(px[0] == 62 && px[1] == 118 && px[2] == 196 && px[3] == 255); /* (0, 1) underwater */
    CHECK(px[4] == 0 && px[7] == 0);                                    /* (1, 1) none */
    CHECK(px[12] == 134 && px[13] == 96 && px[14] == 60);               /* (0, 0) ground */
    CHECK(px[16] == 128 && px[23] == 255);                              /* (1, 0), (2, 0) rock */
    CHECK_EQ_INT(map.counts[TRN_ROLE_GROUND], 1);
    CHECK_EQ_INT(map.counts[TRN_ROLE_ROCK], 2);
    CHECK_EQ_INT(map.counts[TRN_ROLE_UNDERWATER], 1);
    CHECK_EQ_INT(map.counts[TRN_ROLE_COUNT], 2);
    CHECK(strcmp(
              map.legend_json,
              "{\"roles\": [{\"role\": \"ground\", \"color\": [134, 96, 60, 255], \"samples\": 1}, "
              "{\"role\": \"grass\", \"color\": [86, 152, 62, 255], \"samples\": 0}, "
              "{\"role\": \"rock\", \"color\": [128, 128, 128, 255], \"samples\": 2}, "
              "{\"role\": \"cliff\", \"color\": [72, 68, 66, 255], \"samples\": 0}, "
              "{\"role\": \"sediment\", \"color\": [176, 150, 104, 255], \"samples\": 0}, "
              "{\"role\": \"sand\", \"color\": [218, 194, 142, 255], \"samples\": 0}, "
              "{\"role\": \"snow\", \"color\": [244, 246, 250, 255], \"samples\": 0}, "
              "{\"role\": \"wet_ground\", \"color\": [92, 70, 50, 255], \"samples\": 0}, "
              "{\"role\": \"underwater\", \"color\": [62, 118, 196, 255], \"samples\": 1}], "
              "\"none\": {\"color\": [0, 0, 0, 0], \"samples\": 2}, \"samples\": 6}\n") == 0);
    trn_roles_map_dispose(&map);
    CHECK(map.legend_json == NULL && map.picture.pixels == NULL);
    trn_roles_map_dispose(NULL);

    trn_error e;
    CHECK_STATUS(trn_roles_map_render(0, 1, roles, &map, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(map.legend_json == NULL);
    CHECK_STATUS(trn_roles_map_render(2, 1, NULL, &map, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "no roles");
    CHECK_STATUS(trn_roles_map_render(UINT32_MAX, UINT32_MAX, roles, &map, &e), TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(e.message, "overflow the picture size");
    CHECK_STATUS(trn_roles_map_render(2, 1, roles, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
}

/* A bumpy terrain with every input, for windows and threads. */
typedef struct scene {
    trn_field field;
    float *change, *moisture, *distance;
    uint32_t *acc;
    uint8_t *biomes;
    bool allow[3];
    trn_roles_input in;
} scene;

static void scene_make(scene *s, uint32_t cx, uint32_t cz)
{
    CHECK_OK(trn_field_init(&s->field, cx, cz, cx * 2.0, cz * 2.0, NULL));
    const size_t n = trn_field_sample_count(&s->field);
    s->change = malloc(n * sizeof(float));
    s->moisture = malloc(n * sizeof(float));
    s->distance = malloc(n * sizeof(float));
    s->acc = malloc(n * sizeof(uint32_t));
    s->biomes = malloc(n);
    CHECK(s->change && s->moisture && s->distance && s->acc && s->biomes);
    for (uint32_t j = 0; j <= cz; j++)
        for (uint32_t i = 0; i <= cx; i++) {
            const size_t k = idx(&s->field, i, j);
            s->field.heights[k] =
                (float)(40.0 * sin(i * 0.07) * cos(j * 0.05) + 12.0 * sin(i * 0.31 + j * 0.23));
            s->change[k] = (float)(0.3 * sin(i * 0.9 + j * 0.4));
            s->moisture[k] = (float)(0.5 + 0.5 * sin(i * 0.11 - j * 0.13));
            s->distance[k] = s->field.heights[k] < -20.0f ? 0.0f : (float)((i * 7 + j * 3) % 11);
            s->acc[k] = (uint32_t)((i * 131u + j * 71u) % 3000u);
            s->biomes[k] = (uint8_t)((i / 10 + j / 10) % 4);
        }
    s->allow[0] = true;
    s->allow[1] = false;
    s->allow[2] = true;
    s->in = (trn_roles_input){.field = &s->field,
                              .transport = s->change,
                              .accumulation = s->acc,
                              .moisture = s->moisture,
                              .water_distance = s->distance,
                              .biomes = s->biomes,
                              .allow_snow = s->allow,
                              .allow_snow_count = 3};
}

static void scene_free(scene *s)
{
    free(s->change);
    free(s->moisture);
    free(s->distance);
    free(s->acc);
    free(s->biomes);
    trn_field_dispose(&s->field);
}

static void scene_params(trn_roles_params *p)
{
    trn_roles_params_default(p);
    p->snow_height = 30.0;
    p->rock_slope = 20.0;
    p->cliff_slope = 40.0;
}

/* A windowed recompute after an edit equals a full one, and reports the chunks that changed. */
static void test_window(void)
{
    scene s;
    scene_make(&s, 150, 100);
    trn_roles_params p;
    scene_params(&p);
    const size_t n = trn_field_sample_count(&s.field), nx = 151;
    uint8_t *before = classify(&s.in, &p);
    /* Raise a block of heights and cut into it: slopes change one sample beyond it. */
    const uint32_t i0 = 37, j0 = 20, i1 = 70, j1 = 33;
    for (uint32_t j = j0; j < j1; j++)
        for (uint32_t i = i0; i < i1; i++) {
            s.field.heights[j * nx + i] += 25.0f;
            s.change[j * nx + i] = -1.0f;
        }
    uint8_t *after = classify(&s.in, &p);
    uint8_t *window = malloc(n);
    CHECK(window != NULL);
    memcpy(window, before, n);
    uint32_t chunks_x, chunks_z;
    trn_roles_chunk_grid(150, 100, 16, &chunks_x, &chunks_z);
    CHECK_EQ_INT(chunks_x, 10);
    CHECK_EQ_INT(chunks_z, 7);
    uint8_t chunks[70];
    memset(chunks, 0xee, sizeof chunks);
    uint32_t count = 999;
    CHECK_OK(
        trn_roles_classify_window(&s.in, &p, i0, j0, i1, j1, 16, window, chunks, &count, NULL));
    CHECK(memcmp(window, after, n) == 0);
    /* The expected chunks: every chunk with a sample (its own or a border one) that changed. */
    uint8_t want[70] = {0};
    uint32_t want_count = 0;
    bool outside_changed = false;
    for (uint32_t j = 0; j <= 100; j++)
        for (uint32_t i = 0; i <= 150; i++) {
            if (before[j * nx + i] == after[j * nx + i]) continue;
            if (i < i0 || i >= i1 || j < j0 || j >= j1) outside_changed = true;
            for (uint32_t cz = 0; cz < 7; cz++)
                for (uint32_t cx = 0; cx < 10; cx++)
                    if (i >= cx * 16 && i <= (cx + 1) * 16 && j >= cz * 16 && j <= (cz + 1) * 16)
                        want[cz * 10 + cx] = 1;
        }
    CHECK(outside_changed); /* the one-sample margin mattered */
    for (size_t k = 0; k < 70; k++) {
        CHECK_EQ_INT(chunks[k], want[k]);
        want_count += want[k];
    }
    CHECK_EQ_INT(count, want_count);
    CHECK(count > 0 && count < 70);

    /* Without the margin the window would not match: shrinking it by one shows that. */
    memcpy(window, before, n);
    CHECK_OK(trn_roles_classify_window(&s.in, &p, i0 + 1, j0 + 1, i1 - 1, j1 - 1, 16, window, NULL,
                                       &count, NULL));
    CHECK(memcmp(window, after, n) != 0);

    /* Again: nothing changes now; an empty or clamped window is fine. */
    memcpy(window, after, n);
    CHECK_OK(
        trn_roles_classify_window(&s.in, &p, 0, 0, 1000, 1000, 16, window, chunks, &count, NULL));
    CHECK_EQ_INT(count, 0);
    CHECK(memcmp(window, after, n) == 0);
    for (size_t k = 0; k < 70; k++)
        CHECK_EQ_INT(chunks[k], 0);
    CHECK_OK(trn_roles_classify_window(&s.in, &p, 5, 5, 5, 9, 16, window, NULL, &count, NULL));
    CHECK_EQ_INT(count, 0);
    free(before);
    free(after);
    free(window);
    scene_free(&s);
}

/* A sample on a chunk border is a vertex of both chunks; default chunks are 64 cells. */
static void test_window_borders(void)
{
    trn_field f;
    plane(&f, 128, 0.0);
    const size_t n = trn_field_sample_count(&f);
    float *change = calloc(n, sizeof(float));
    uint8_t *roles = malloc(n);
    CHECK(change && roles);
    trn_roles_params p;
    trn_roles_params_default(&p);
    trn_roles_input in = {.field = &f, .transport = change};
    uint32_t cx, cz;
    trn_roles_chunk_grid(128, 128, 0, &cx, &cz);
    CHECK_EQ_INT(cx, 2);
    CHECK_EQ_INT(cz, 2);
    trn_roles_chunk_grid(129, 1, 64, &cx, &cz);
    CHECK_EQ_INT(cx, 3);
    CHECK_EQ_INT(cz, 1);
    trn_roles_chunk_grid(64, 65, 64, NULL, &cz);
    CHECK_EQ_INT(cz, 2);
    trn_roles_chunk_grid(64, 65, 64, &cx, NULL);
    CHECK_EQ_INT(cx, 1);
    CHECK_OK(trn_roles_classify(&in, &p, roles, NULL));
    struct {
        uint32_t i, j;
        uint8_t chunks[4];
    } cases[] = {
        {64, 10, {1, 1, 0, 0}},  {65, 10, {0, 1, 0, 0}},   {63, 10, {1, 0, 0, 0}},
        {128, 10, {0, 1, 0, 0}}, {0, 0, {1, 0, 0, 0}},     {64, 64, {1, 1, 1, 1}},
        {10, 64, {1, 0, 1, 0}},  {128, 128, {0, 0, 0, 1}}, {10, 65, {0, 0, 1, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t k = idx(&f, cases[c].i, cases[c].j);
        change[k] = -1.0f;
        uint8_t chunks[4];
        uint32_t count = 0, count_alone = 0;
        uint8_t *copy = malloc(n);
        CHECK(copy != NULL);
        memcpy(copy, roles, n);
        CHECK_OK(trn_roles_classify_window(&in, &p, cases[c].i, cases[c].j, cases[c].i + 1,
                                           cases[c].j + 1, 0, roles, chunks, &count, NULL));
        CHECK_EQ_INT(roles[k], TRN_ROLE_ROCK);
        uint32_t want = 0;
        for (size_t q = 0; q < 4; q++) {
            CHECK_EQ_INT(chunks[q], cases[c].chunks[q]);
            want += cases[c].chunks[q];
        }
        CHECK_EQ_INT(count, want);
        /* The same count without chunk flags. */
        CHECK_OK(trn_roles_classify_window(&in, &p, cases[c].i, cases[c].j, cases[c].i + 1,
                                           cases[c].j + 1, 0, copy, NULL, &count_alone, NULL));
        CHECK_EQ_INT(count_alone, want);
        free(copy);
        change[k] = 0.0f;
        CHECK_OK(trn_roles_classify_window(&in, &p, cases[c].i, cases[c].j, cases[c].i + 1,
                                           cases[c].j + 1, 0, roles, NULL, NULL, NULL));
        CHECK_EQ_INT(roles[k], TRN_ROLE_GROUND);
    }
    free(change);
    free(roles);
    trn_field_dispose(&f);
}

/* The same roles whatever the thread count. */
static void test_threads(void)
{
    scene s;
    scene_make(&s, 1100, 1000); /* over 2^20 samples: rows run in parallel */
    trn_roles_params p;
    scene_params(&p);
    const size_t n = trn_field_sample_count(&s.field);
    p.threads = 1;
    uint8_t *one = classify(&s.in, &p);
    size_t seen[TRN_ROLE_COUNT] = {0};
    for (size_t k = 0; k < n; k++)
        if (one[k] < TRN_ROLE_COUNT) seen[one[k]]++;
    for (int r = 0; r < TRN_ROLE_COUNT; r++)
        CHECK(seen[r] > 0); /* every role appears */
    for (int t = 2; t <= 4; t++) {
        p.threads = t;
        uint8_t *many = classify(&s.in, &p);
        CHECK(memcmp(one, many, n) == 0);
        free(many);
    }
    free(one);
    scene_free(&s);
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_flat);
    RUN(test_slope_thresholds);
    RUN(test_slope_matches_field_slope);
    RUN(test_pit_with_water);
    RUN(test_transport);
    RUN(test_snow);
    RUN(test_precedence);
    RUN(test_errors);
    RUN(test_triangles);
    RUN(test_colors_and_map);
    RUN(test_window);
    RUN(test_window_borders);
    RUN(test_threads);
    return trn_test_finish();
}
