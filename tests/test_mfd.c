/* Multiple-flow-direction accumulation: conservation, a plane's exact values, limits, the node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/drainage.h"
#include "terrane/generate.h"
#include "test.h"

static void plane_west(trn_field *f, uint32_t cx, uint32_t cz)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, cx, cz, (double)cx * 2.0, (double)cz, &e));
    for (uint32_t j = 0; j <= cz; j++)
        for (uint32_t i = 0; i <= cx; i++)
            f->heights[j * (cx + 1u) + i] = (float)i * 0.5f;
}

/* On a plane falling west, rows away from the north and south borders carry exactly the
 * columns upstream of them (the east border is an outlet and sends nothing). */
static void test_plane(void)
{
    trn_field f;
    plane_west(&f, 9, 40);
    trn_drainage d;
    trn_error e;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&f);
    float *acc = malloc(n * sizeof *acc);
    CHECK_OK(trn_drainage_mfd_accumulation(&d, 1.1, acc, &e));
    for (uint32_t i = 1; i <= 8; i++) {
        const float want = (float)(9 - i);
        const float got = acc[20 * 10 + i];
        if (fabsf(got - want) > 1e-5f * want) {
            fprintf(stderr, "column %u: %.9g, expected %.9g\n", i, got, want);
            CHECK(false);
        }
    }
    /* The west border (outlets) gathers what reaches it: more than its own sample. */
    CHECK(acc[20 * 10 + 0] > 8.0f);
    free(acc);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* Every sample's water leaves through the outlets, lakes and flats included. */
static void test_conservation(void)
{
    trn_field f;
    trn_error e;
    const uint32_t c = 64;
    CHECK_OK(trn_field_init(&f, c, c, 128.0, 128.0, &e));
    for (uint32_t j = 0; j <= c; j++)
        for (uint32_t i = 0; i <= c; i++)
            f.heights[j * (c + 1u) + i] =
                (float)(20.0 + 8.0 * sin(i * 0.31) * cos(j * 0.27) + 3.0 * sin((i * 3 + j) * 0.7));
    /* A flat-bottomed pit the fill turns into a lake. */
    for (uint32_t j = 20; j < 30; j++)
        for (uint32_t i = 20; i < 30; i++)
            f.heights[j * (c + 1u) + i] = 1.0f;
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, 12.0, &d, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&f);
    float *acc = malloc(n * sizeof *acc);
    CHECK_OK(trn_drainage_mfd_accumulation(&d, 1.1, acc, &e));
    double out = 0;
    for (size_t k = 0; k < n; k++) {
        CHECK(acc[k] >= 1.0f);
        if (d.flow_dir[k] == TRN_DRAIN_OUTLET) out += acc[k];
    }
    CHECK(fabs(out - (double)n) < 1e-5 * (double)n);
    /* Water spreads: fewer samples carry nothing but themselves than under D8. */
    size_t single_mfd = 0, single_d8 = 0;
    for (size_t k = 0; k < n; k++) {
        single_mfd += acc[k] == 1.0f;
        single_d8 += d.accumulation[k] == 1u;
    }
    CHECK(single_mfd < single_d8);
    /* A large exponent sends nearly everything down the steepest way, as D8 does: far more
     * samples then carry D8's amount (within 1%) than with Freeman's 1.1. */
    size_t close_low = 0, close_high = 0;
    for (size_t k = 0; k < n; k++)
        close_low += fabs((double)acc[k] - (double)d.accumulation[k]) <= 0.01 * d.accumulation[k];
    CHECK_OK(trn_drainage_mfd_accumulation(&d, 100.0, acc, &e));
    for (size_t k = 0; k < n; k++)
        close_high += fabs((double)acc[k] - (double)d.accumulation[k]) <= 0.01 * d.accumulation[k];
    CHECK(close_high > n * 8 / 10);
    CHECK(close_high > close_low + n / 10);
    /* Limits: the bounds themselves pass, beyond them is refused by name. */
    CHECK(trn_drainage_mfd_accumulation(&d, 0.0, acc, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "exponent: expected a number > 0 and <= 100, found 0");
    CHECK(trn_drainage_mfd_accumulation(&d, 100.0001, acc, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_drainage_mfd_accumulation(&d, NAN, acc, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_drainage_mfd_accumulation(&d, 1.1, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_drainage_mfd_accumulation(NULL, 1.1, acc, &e) == TRN_ERR_INVALID_ARGUMENT);
    free(acc);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* The Flow Accumulation node: d8 is the Drainage node's own mask, bit for bit; mfd peaks at 1
 * off the outlets and is 0 on them. */
static void test_node(void)
{
    static const char text[] =
        "{\"size\": [256, 256], \"resolution\": [64, 64], \"seed\": 3, \"sea_level\": -50,"
        " \"default_landform\": \"h\", \"landforms\": {\"h\": {\"height_variation\": 40,"
        " \"feature_size\": 90}}, \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\":"
        " [0, 1, 0, 1]}}, \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": ["
        " {\"id\": \"lf\", \"type\": \"landform\"},"
        " {\"id\": \"dr\", \"type\": \"drainage\", \"inputs\": {\"field\": {\"node\": \"lf\"}}},"
        " {\"id\": \"d8\", \"type\": \"flow_accumulation\", \"params\": {\"method\": \"d8\"},"
        "  \"inputs\": {\"drainage\": {\"node\": \"dr\", \"pin\": \"drainage\"}}},"
        " {\"id\": \"mfd\", \"type\": \"flow_accumulation\","
        "  \"inputs\": {\"drainage\": {\"node\": \"dr\", \"pin\": \"drainage\"}}},"
        " {\"id\": \"o1\", \"type\": \"height_offset\", \"params\": {\"offset\": 0}, \"inputs\":"
        "  {\"field\": {\"node\": \"lf\"}, \"mask\": {\"node\": \"d8\"}}},"
        " {\"id\": \"o2\", \"type\": \"height_offset\", \"params\": {\"offset\": 0}, \"inputs\":"
        "  {\"field\": {\"node\": \"o1\"}, \"mask\": {\"node\": \"mfd\"}}},"
        " {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\":"
        " \"o2\"}}}]}}";
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "mfd.json", &r, NULL, &e));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    trn_graph_run *run = NULL;
    CHECK_OK(trn_graph_evaluate(&g, &r, NULL, &run, NULL, NULL, &e));
    trn_graph_value own, d8, mfd;
    CHECK_OK(trn_graph_run_output(run, "dr", "accumulation", &own, &e));
    CHECK_OK(trn_graph_run_output(run, "d8", "mask", &d8, &e));
    CHECK_OK(trn_graph_run_output(run, "mfd", "mask", &mfd, &e));
    const size_t n = 65u * 65u;
    CHECK(memcmp(own.values, d8.values, n * sizeof(float)) == 0);
    float top = 0;
    size_t zero_border = 0;
    for (size_t k = 0; k < n; k++) {
        if (mfd.values[k] > top) top = mfd.values[k];
        const size_t i = k % 65, j = k / 65;
        if (i == 0 || j == 0 || i == 64 || j == 64) zero_border += mfd.values[k] == 0.0f;
    }
    CHECK(top == 1.0f);
    CHECK_EQ_INT(zero_border, 256);
    CHECK(memcmp(mfd.values, d8.values, n * sizeof(float)) != 0);
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_plane);
    RUN(test_conservation);
    RUN(test_node);
    return trn_test_finish();
}
