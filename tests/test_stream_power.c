/* Stream-power landscape evolution: analytic steady states, lakes, limits and determinism. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/landscape.h"
#include "test.h"

#define WALL 1e6f

/* A channel one sample wide: column i = 1 of a 3-sample-wide grid draining south (j = 0, the
 * outlet row at height 0); the other borders are walls no water crosses. */
static void make_channel(trn_field *f, uint32_t rows)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, 2, rows, 20.0, 10.0 * rows, &e));
    for (uint32_t j = 0; j <= rows; j++)
        for (uint32_t i = 0; i <= 2; i++) {
            float h = 0.0f;
            if (j > 0) h = (i == 1 && j < rows) ? (float)j * 0.01f : WALL;
            f->heights[j * 3u + i] = h;
        }
}

static trn_stream_power_params quiet_params(void)
{
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.diffusion = 0.0;
    p.threads = 1;
    p.fixed_border = true;
    return p;
}

/* At steady state each step of the channel drops U d / (K A^m) (n = 1), or
 * d (U / (K A^m))^(1/n): the discrete stream-power law, exactly. */
static void check_channel_steady(double n_exp)
{
    const uint32_t rows = 12;
    trn_field f;
    make_channel(&f, rows);
    trn_stream_power_params p = quiet_params();
    p.uplift = 1e-3;
    p.erodibility = 1e-3;
    p.m = 0.5;
    p.n = n_exp;
    p.dt = 500.0;
    p.steps = 3000;
    trn_stream_power_report rep;
    trn_error e;
    CHECK_OK(trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e));
    CHECK(rep.steps == 3000);
    CHECK(fabs(rep.last_mean_change) < 1e-9);
    const double dz = 10.0, cell_area = 10.0 * 10.0;
    for (uint32_t j = 1; j < rows; j++) {
        const double area = (double)(rows - j) * cell_area;
        const double want = dz * pow(p.uplift / (p.erodibility * pow(area, p.m)), 1.0 / n_exp);
        const double got = (double)f.heights[j * 3u + 1] - (double)f.heights[(j - 1) * 3u + 1];
        if (fabs(got - want) > 1e-4 * want) {
            fprintf(stderr, "n %g row %u: drop %.9g, expected %.9g\n", n_exp, j, got, want);
            CHECK(false);
        }
    }
    CHECK(rep.max_area == (double)(rows - 1) * cell_area);
    trn_field_dispose(&f);
}

static void test_channel_steady_state(void)
{
    check_channel_steady(1.0);
    check_channel_steady(2.0);
    check_channel_steady(0.7);
}

/* Uplift: with no incision (tiny K) every non-base sample rises by U dt x mask; the border and
 * samples at or below the sea do not. */
static void test_uplift_mask_and_base_level(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 4, 4, 4.0, 4.0, &e));
    float mask[25];
    for (uint32_t k = 0; k < 25; k++) {
        f.heights[k] = (float)(k % 5) * 10.0f;
        mask[k] = (float)(k % 3) * 0.5f;
    }
    f.heights[12] = 5.0f; /* centre: under the sea at 6 */
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.uplift = 0.25;
    p.dt = 2.0;
    p.steps = 1;
    p.uplift_mask = mask;
    p.sea_level = 6.0;
    float before[25];
    memcpy(before, f.heights, sizeof before);
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    for (uint32_t k = 0; k < 25; k++) {
        const uint32_t i = k % 5, j = k / 5;
        const bool border = i == 0 || j == 0 || i == 4 || j == 4;
        const float want = border || k == 12 ? before[k] : before[k] + 0.5f * mask[k];
        CHECK(f.heights[k] == want);
    }
    /* A NaN sea level: only the border is base level, so the centre rises too. */
    memcpy(f.heights, before, sizeof before);
    p.sea_level = NAN;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    CHECK(f.heights[12] == before[12] + 0.5f * mask[12]);
    trn_field_dispose(&f);
}

/* Diffusion: one explicit step of the 5-point Laplacian when dt is under the stability limit;
 * split into substeps above it, and stable. */
static void test_diffusion(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 6, 6, 12.0, 6.0, &e)); /* dx 2, dz 1 */
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 8.0f;
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.uplift = 0.0;
    p.diffusion = 0.1;
    p.dt = 1.0; /* limit 0.45 / (0.1 * (1/4 + 1)) = 3.6: one substep */
    p.steps = 1;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    const double kdt = 0.1;
    CHECK(fabs(f.heights[3 * 7 + 3] - (8.0 - kdt * 8.0 * (2.0 / 4.0 + 2.0))) < 1e-6);
    CHECK(fabs(f.heights[3 * 7 + 4] - kdt * 8.0 / 4.0) < 1e-6); /* east: over dx^2 */
    CHECK(fabs(f.heights[4 * 7 + 3] - kdt * 8.0) < 1e-6);       /* north: over dz^2 */
    CHECK(f.heights[3 * 7 + 0] == 0.0f);                        /* the border is fixed */
    /* A step far over the limit is substepped: no sample overshoots below 0 or above 8. */
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 8.0f;
    p.dt = 100.0;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    for (uint32_t k = 0; k < 49; k++)
        CHECK(f.heights[k] >= 0.0f && f.heights[k] <= 8.0f);
    trn_field_dispose(&f);
}

/* A closed depression is routed over its sill: the lake floor does not erode, the sill (which
 * carries the basin's area) does. Heights are never raised to fill it. */
static void test_lake_drains_over_sill(void)
{
    trn_field f;
    trn_error e;
    const uint32_t c = 10;
    CHECK_OK(trn_field_init(&f, c, c, 100.0, 100.0, &e));
    const size_t nx = c + 1u;
    /* A plateau at 20 sloping to the west border, a bowl at 5 in the middle behind a rim at 20,
     * the rim's lowest point (the sill) at 12 on the west side. */
    for (uint32_t j = 0; j <= c; j++)
        for (uint32_t i = 0; i <= c; i++) {
            float h = 10.0f + (float)i;
            if (i == 0 || j == 0 || i == c || j == c) h = i == 0 ? 0.0f : 100.0f;
            f.heights[j * nx + i] = h;
        }
    for (uint32_t j = 3; j <= 7; j++)
        for (uint32_t i = 4; i <= 8; i++)
            f.heights[j * nx + i] = (j == 3 || j == 7 || i == 4 || i == 8) ? 30.0f : 5.0f;
    const size_t sill = 5 * nx + 4, pit = 5 * nx + 6;
    f.heights[sill] = 25.0f;
    trn_stream_power_params p = quiet_params();
    p.uplift = 0.0;
    p.erodibility = 1e-2;
    p.dt = 1.0;
    p.steps = 1;
    trn_stream_power_report rep;
    float before[121];
    memcpy(before, f.heights, sizeof before);
    CHECK_OK(trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e));
    CHECK(rep.pits_routed >= 1 && rep.steps_with_pits == 1);
    CHECK(f.heights[pit] == before[pit]);  /* the lake floor stays */
    CHECK(f.heights[sill] < before[sill]); /* the sill erodes */
    for (size_t k = 0; k < 121; k++)
        CHECK(f.heights[k] <= before[k]); /* nothing filled */
    /* The sill drains the whole bowl: 9 lake samples and itself at least. */
    CHECK(rep.max_area >= 10.0 * 100.0);
    trn_field_dispose(&f);
}

/* The border follows the land down unless fixed; samples under the sea stay. */
static void test_border_follows(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 4, 4, 4.0, 4.0, &e));
    for (uint32_t k = 0; k < 25; k++)
        f.heights[k] = 50.0f;
    for (uint32_t j = 1; j <= 3; j++)
        for (uint32_t i = 1; i <= 3; i++)
            f.heights[j * 5 + i] = (float)(10 * j + i); /* 11..33 */
    f.heights[0 * 5 + 2] = 5.0f;                        /* a low border sample stays */
    f.heights[4 * 5 + 4] = -3.0f;                       /* under the sea */
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.uplift = 0.0;
    p.steps = 1;
    p.sea_level = -1.0;
    p.fixed_border = false;
    float before[25];
    memcpy(before, f.heights, sizeof before);
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    CHECK(f.heights[0 * 5 + 0] == 11.0f); /* corner: its one interior neighbour */
    CHECK(f.heights[0 * 5 + 1] == 11.0f); /* neighbours 11, 12 */
    CHECK(f.heights[0 * 5 + 2] == 5.0f);  /* already lower than 11, 12, 13 */
    CHECK(f.heights[2 * 5 + 4] == 13.0f); /* east: 13, 23, 33 */
    CHECK(f.heights[4 * 5 + 2] == 31.0f); /* north: 31, 32, 33 */
    CHECK(f.heights[4 * 5 + 4] == -3.0f); /* the sea */
    for (uint32_t j = 1; j <= 3; j++)
        for (uint32_t i = 1; i <= 3; i++)
            CHECK(f.heights[j * 5 + i] == before[j * 5 + i]);
    memcpy(f.heights, before, sizeof before);
    p.fixed_border = true;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    CHECK(memcmp(f.heights, before, sizeof before) == 0);
    trn_field_dispose(&f);
}

/* The critical slope: no sample stands higher above its receiver than tan(c) x distance. */
static void test_critical_slope(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 4, 4, 4.0, 4.0, &e));
    memset(f.heights, 0, 25 * sizeof(float));
    f.heights[2 * 5 + 2] = 10.0f;
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.uplift = 0.0;
    p.critical_slope = 45.0;
    p.steps = 1;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    /* Its receiver is an orthogonal neighbour at 0 (steeper than the diagonal), 1 unit away. */
    CHECK(fabs(f.heights[2 * 5 + 2] - 1.0) < 1e-6);
    trn_field_dispose(&f);
}

static uint64_t hash_field(const trn_field *f)
{
    uint64_t h = 1469598103934665603ull;
    const size_t n = trn_field_sample_count(f);
    const unsigned char *b = (const unsigned char *)f->heights;
    for (size_t k = 0; k < n * sizeof(float); k++)
        h = (h ^ b[k]) * 1099511628211ull;
    return h;
}

static void make_hills(trn_field *f, uint32_t cells)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, cells, cells, 30.0 * cells, 30.0 * cells, &e));
    const size_t nx = cells + 1u;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f->heights[j * nx + i] = (float)(20.0 + 15.0 * sin(i * 0.37) * cos(j * 0.23) +
                                             7.0 * sin((i + 2 * j) * 0.91));
}

/* Threads never change the result; pinned hashes catch accidental changes to the schemes.
 * D8's is the hash from before Rho8 existed: the D8 path is unchanged bit for bit. */
static void test_determinism(void)
{
    trn_field a, b;
    trn_stream_power_params p;
    trn_stream_power_report ra, rb;
    trn_error e;
    const trn_flow_routing routes[2] = {TRN_ROUTING_D8, TRN_ROUTING_RHO8};
    const uint64_t pinned[2] = {0x1f2b736c43826957ull, 0xd6347d0173ae9448ull};
    for (int k = 0; k < 2; k++) {
        make_hills(&a, 96);
        make_hills(&b, 96);
        trn_stream_power_params_default(&p);
        p.routing = routes[k];
        p.dt = 5000.0;
        p.steps = 40;
        p.threads = 1;
        CHECK_OK(trn_stream_power_run(&a, &p, &ra, NULL, NULL, &e));
        p.threads = 2;
        CHECK_OK(trn_stream_power_run(&b, &p, &rb, NULL, NULL, &e));
        CHECK(hash_field(&a) == hash_field(&b));
        CHECK(ra.pits_routed == rb.pits_routed && ra.pits_routed > 0);
        if (hash_field(&a) != pinned[k])
            fprintf(stderr, "stream power hash %016llx\n", (unsigned long long)hash_field(&a));
        CHECK(hash_field(&a) == pinned[k]);
        /* More threads than the routing's two workers: the stack is cut into more pieces. */
        trn_field_dispose(&b);
        make_hills(&b, 96);
        p.threads = 5;
        CHECK_OK(trn_stream_power_run(&b, &p, &rb, NULL, NULL, &e));
        CHECK(hash_field(&a) == hash_field(&b));
        trn_field_dispose(&a);
        trn_field_dispose(&b);
    }
    /* Interior base level (a sea), the slope exponent's Newton solve, the critical slope and a
     * channel threshold, on 1 and 3 threads. */
    make_hills(&a, 96);
    make_hills(&b, 96);
    p.sea_level = 12.0;
    p.n = 1.5;
    p.critical_slope = 30.0;
    p.channel_threshold = 3 * 900.0;
    p.threads = 1;
    CHECK_OK(trn_stream_power_run(&a, &p, &ra, NULL, NULL, &e));
    p.threads = 3;
    CHECK_OK(trn_stream_power_run(&b, &p, &rb, NULL, NULL, &e));
    CHECK(hash_field(&a) == hash_field(&b));
    CHECK(ra.pits_routed == rb.pits_routed && ra.pits_routed > 0);
    CHECK(ra.max_area == rb.max_area);
    trn_field_dispose(&a);
    trn_field_dispose(&b);
}

/* Evolved hills drain: after enough steps every interior sample has a strictly lower
 * neighbour or lies in a routed lake, and relief is bounded by uplift. */
static void test_network_forms(void)
{
    trn_field f;
    make_hills(&f, 64);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.erodibility = 5e-5;
    p.diffusion = 0.0;
    p.dt = 20000.0;
    p.steps = 200;
    trn_stream_power_report rep;
    trn_error e;
    CHECK_OK(trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e));
    /* Without diffusion the carved network leaves no closed depression. */
    const size_t nx = 65;
    size_t pits = 0;
    for (uint32_t j = 1; j < 64; j++)
        for (uint32_t i = 1; i < 64; i++) {
            const float h = f.heights[j * nx + i];
            bool lower = false;
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++)
                    if (f.heights[(j + dj) * nx + (i + di)] < h) lower = true;
            pits += !lower;
        }
    CHECK(pits == 0);
    CHECK(fabs(rep.last_mean_change) < 0.05 * p.uplift * p.dt);
    trn_field_dispose(&f);
}

static int cancel_now(double done, const char *stage, void *user)
{
    (void)done;
    (void)user;
    return strcmp(stage, "stream power") == 0 ? TRN_CANCEL : 0;
}

static void test_errors_and_cancel(void)
{
    trn_field f;
    make_channel(&f, 6);
    trn_error e;
    trn_stream_power_params p = quiet_params();
    struct {
        double *field;
        double value;
        const char *name;
    } bad[] = {
        {&p.uplift, -1.0, "uplift: expected >= 0, found -1"},
        {&p.erodibility, 0.0, "erodibility: expected > 0, found 0"},
        {&p.m, 0.0, "m: expected 0 < m <= 2, found 0"},
        {&p.m, 2.0000001, "m: expected 0 < m <= 2"},
        {&p.n, 4.5, "n: expected 0 < n <= 4, found 4.5"},
        {&p.diffusion, -0.1, "diffusion: expected >= 0"},
        {&p.critical_slope, 90.0, "critical_slope: expected 0 (off) or between 0 and 90"},
        {&p.critical_slope, -5.0, "critical_slope"},
        {&p.dt, 0.0, "dt: expected > 0, found 0"},
        {&p.dt, INFINITY, "dt: expected > 0, found inf"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        p = quiet_params();
        *bad[k].field = bad[k].value;
        CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, bad[k].name);
    }
    /* The limits themselves are accepted. */
    p = quiet_params();
    p.m = 2.0;
    p.n = 4.0;
    p.steps = 1;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    p = quiet_params();
    p.steps = 0;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "steps: expected at least 1");
    p = quiet_params();
    float mask[21];
    for (int k = 0; k < 21; k++)
        mask[k] = 1.0f;
    mask[4] = -1.0f;
    p.uplift_mask = mask;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "uplift_mask at sample (1, 1)");
    p = quiet_params();
    const float keep = f.heights[7];
    f.heights[7] = NAN;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "sample (1, 2) has no finite height");
    f.heights[7] = keep;
    /* Cancel: the field is left as it was. */
    const uint64_t before = hash_field(&f);
    p = quiet_params();
    CHECK(trn_stream_power_run(&f, &p, NULL, cancel_now, NULL, &e) == TRN_ERR_CANCELLED);
    CHECK(hash_field(&f) == before);
    trn_field small;
    CHECK_OK(trn_field_init(&small, 1, 4, 1.0, 4.0, &e));
    CHECK(trn_stream_power_run(&small, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "at least 3 x 3 samples, found 2 x 5");
    CHECK(trn_stream_power_run(NULL, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&small);
    trn_field_dispose(&f);
}

/* The Stream Power graph node runs trn_landscape_evolve on its input with its parameters and
 * the recipe's sea level; preview runs a quarter of the steps over the same span. */
static void test_graph_node(void)
{
    const char *text =
        "{\"size\": [960, 960], \"resolution\": [32, 32], \"seed\": 5, \"sea_level\": 3,"
        " \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": 0,"
        " \"height_variation\": 60, \"feature_size\": 300}}, \"default_biome\": \"g\","
        " \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"graph\": {\"format_version\": 1,"
        " \"output\": \"out\", \"nodes\": [{\"id\": \"lf\", \"type\": \"landform\"},"
        " {\"id\": \"sp\", \"type\": \"stream_power\", \"inputs\": {\"field\": {\"node\": "
        "\"lf\"}}, \"params\": {\"steps\": 12, \"dt\": 10000, \"erodibility\": 1e-4,"
        " \"diffusion\": 0.01, \"channel_threshold\": 5000, \"coarsen\": 2, \"detail\": 0.5}},"
        " {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\":"
        " \"sp\", \"pin\": \"field\"}}}]}}";
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e));
    trn_generated g, pv;
    trn_generate_options go = {.threads = 2};
    CHECK_OK(trn_recipe_generate(&r, &go, &g, NULL, NULL, &e));
    go.quality = TRN_EROSION_PREVIEW;
    CHECK_OK(trn_recipe_generate(&r, &go, &pv, NULL, NULL, &e));
    /* By hand: the landform alone (the same recipe without the graph), then the library. */
    trn_recipe plain;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &plain, NULL, &e));
    free(plain.graph_json);
    plain.graph_json = NULL;
    trn_generated base;
    CHECK_OK(trn_recipe_generate(&plain, NULL, &base, NULL, NULL, &e));
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.sp.steps = 12;
    o.sp.dt = 10000;
    o.sp.erodibility = 1e-4;
    o.sp.diffusion = 0.01;
    o.sp.channel_threshold = 5000;
    o.sp.sea_level = 3;
    o.coarsen = 2;
    o.detail = 0.5;
    o.sp.seed = trn_subseed(r.seed, "stream_power");
    trn_field f = base.field;
    CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
    base.field = f;
    const size_t n = trn_field_sample_count(&g.field);
    CHECK(memcmp(g.field.heights, base.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(pv.field.heights, base.field.heights, n * sizeof(float)) != 0);
    CHECK(g.node_count == 3 && strstr(g.nodes[1].note, "12 steps") != NULL);
    CHECK(strstr(pv.nodes[1].note, "3 steps") != NULL);
    trn_generated_dispose(&g);
    trn_generated_dispose(&pv);
    trn_generated_dispose(&base);
    trn_recipe_dispose(&r);
    trn_recipe_dispose(&plain);
}

int main(void)
{
    RUN(test_channel_steady_state);
    RUN(test_uplift_mask_and_base_level);
    RUN(test_diffusion);
    RUN(test_lake_drains_over_sill);
    RUN(test_critical_slope);
    RUN(test_border_follows);
    RUN(test_determinism);
    RUN(test_network_forms);
    RUN(test_errors_and_cancel);
    RUN(test_graph_node);
    return trn_test_finish();
}
