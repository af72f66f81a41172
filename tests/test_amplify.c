/* Amplified landscape evolution: fine steps on the full grid organise the returned detail. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/landscape.h"
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

/* Noise of the given profile over cells x cells cells of 30 m, 400 m of relief, from a
 * recipe's landform (the library's own noise); each kind generated once and copied. */
static trn_field made[4];
static char made_profile[4][16];

static void make_noise(trn_field *out, const char *profile, uint32_t cells)
{
    trn_error e;
    int k = 0;
    for (; k < 4 && made[k].heights; k++)
        if (made[k].cells_x == cells && strcmp(made_profile[k], profile) == 0) break;
    if (k == 4) k = 3;
    if (!made[k].heights || made[k].cells_x != cells || strcmp(made_profile[k], profile) != 0) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"size\": [%u, %u], \"resolution\": [%u, %u], \"seed\": 7, \"sea_level\": "
                 "-1000, \"default_landform\": \"hills\", \"landforms\": {\"hills\": "
                 "{\"profile\": \"%s\", \"base_height\": 0, \"height_variation\": 400, "
                 "\"feature_size\": %u, \"octaves\": 7, \"roughness\": 0.5}}, "
                 "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}}",
                 cells * 30u, cells * 30u, cells, cells, profile, cells * 10u);
        trn_recipe r;
        trn_generated g;
        CHECK_OK(trn_recipe_parse(text, strlen(text), "noise.json", &r, NULL, &e));
        CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
        trn_field_dispose(&made[k]);
        made[k] = g.field;
        g.field.heights = NULL;
        snprintf(made_profile[k], sizeof made_profile[k], "%s", profile);
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    CHECK_OK(trn_field_init(out, cells, cells, made[k].size_x, made[k].size_z, &e));
    memcpy(out->heights, made[k].heights, trn_field_sample_count(out) * sizeof(float));
}

/* steps of the presets' law on a grid 4 times coarser, then amplified. */
static trn_evolve_options options(uint32_t steps, uint32_t fine_steps, int threads)
{
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.sp.steps = steps;
    o.sp.dt = 20000;
    o.sp.erodibility = 5e-5;
    o.sp.m = 0.5;
    o.sp.diffusion = 0.05;
    o.sp.threads = threads;
    o.coarsen = 4;
    o.fine_steps = fine_steps;
    return o;
}

static void stats_of(const trn_field *f, trn_terrain_stats *st)
{
    trn_stats_options so;
    trn_stats_options_default(&so);
    so.which = TRN_STATS_HEIGHTS | TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE;
    trn_error e;
    CHECK_OK(trn_terrain_stats_compute(f, &so, st, NULL, NULL, &e));
}

/* fine_steps 0 with D8 routing and Catmull-Rom upsampling is the amplification as it was
 * before those options: a pinned hash of the coarsened run (taken from the library before
 * fine_steps existed). */
static void test_default_unchanged(void)
{
    trn_field f;
    make_noise(&f, "ridged", 128);
    trn_evolve_options o = options(30, 0, 2);
    o.sp.routing = TRN_ROUTING_D8;
    o.upsample = TRN_UPSAMPLE_CUBIC;
    trn_evolve_options d;
    trn_evolve_options_default(&d);
    CHECK(d.fine_steps == 0);
    trn_error e;
    CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
    const uint64_t h = hash_field(&f);
    if (h != 0xdf19aebd4509fb1cull)
        fprintf(stderr, "amplified hash %016llx\n", (unsigned long long)h);
    CHECK(h == 0xdf19aebd4509fb1cull);
    trn_field_dispose(&f);
}

/* Fine steps carve the returned detail into the evolved network: fewer closed depressions and
 * a drainage-area exponent b no higher than the amplification alone's, for fbm and ridged
 * noise. Measured (257^2, coarsen 4, 2 fine steps, Rho8 routing and the warped spline): fbm
 * 2.68% -> 0.35%, b 0.445 -> 0.440; ridged 3.29% -> 0.43%, b 0.482 -> 0.462; the hypsometric
 * integral moves by 0.01 (D8 and Catmull-Rom gave fbm 2.84% -> 0.32%, b 0.449 -> 0.433,
 * ridged 3.21% -> 0.40%, b 0.479 -> 0.459). */
static void test_fine_steps_drain_detail(void)
{
    const char *profiles[] = {"fbm", "ridged"};
    for (int k = 0; k < 2; k++) {
        trn_field plain, fine;
        make_noise(&plain, profiles[k], 256);
        make_noise(&fine, profiles[k], 256);
        trn_evolve_options o = options(100, 0, 2);
        trn_error e;
        CHECK_OK(trn_landscape_evolve(&plain, &o, NULL, NULL, NULL, &e));
        o = options(100, 2, 2);
        CHECK_OK(trn_landscape_evolve(&fine, &o, NULL, NULL, NULL, &e));
        trn_terrain_stats a, b;
        stats_of(&plain, &a);
        stats_of(&fine, &b);
        printf("%s: depressions %.2f%% -> %.2f%%, b %.3f -> %.3f, HI %.3f -> %.3f\n", profiles[k],
               100 * a.depression_fraction, 100 * b.depression_fraction, a.area_exponent,
               b.area_exponent, a.hypsometric_integral, b.hypsometric_integral);
        CHECK(a.depression_fraction > 0.02);
        CHECK(b.depression_fraction < 0.006 && b.depression_fraction < 0.2 * a.depression_fraction);
        CHECK(b.area_exponent < a.area_exponent);
        CHECK(b.area_exponent > 0.4 && b.area_exponent < 0.47);
        /* The large shape stays: the hypsometric integral moves by little. */
        CHECK(fabs(b.hypsometric_integral - a.hypsometric_integral) < 0.03);
        trn_field_dispose(&plain);
        trn_field_dispose(&fine);
    }
}

/* The fine steps, with an uplift mask (interpolated to the full grid) and the fine drainage
 * area returned, give the same bits on 1 and 2 threads. */
static void test_deterministic(void)
{
    trn_field a, b;
    make_noise(&a, "fbm", 128);
    make_noise(&b, "fbm", 128);
    /* The coarse grid: 32 x 32 cells, 33^2 samples. */
    float mask[33 * 33];
    for (int j = 0; j < 33; j++)
        for (int i = 0; i < 33; i++)
            mask[j * 33 + i] = (float)(0.3 + 0.7 * i / 32.0);
    const size_t n = trn_field_sample_count(&a);
    float *area_a = malloc(n * sizeof *area_a), *area_b = malloc(n * sizeof *area_b);
    CHECK(area_a && area_b);
    trn_evolve_options o = options(30, 3, 1);
    o.sp.uplift_mask = mask;
    o.sp.drainage_area = area_a;
    trn_error e;
    CHECK_OK(trn_landscape_evolve(&a, &o, NULL, NULL, NULL, &e));
    o.sp.threads = 2;
    o.sp.drainage_area = area_b;
    CHECK_OK(trn_landscape_evolve(&b, &o, NULL, NULL, NULL, &e));
    CHECK(hash_field(&a) == hash_field(&b));
    CHECK(memcmp(area_a, area_b, n * sizeof *area_a) == 0);
    /* The fine drainage area: a single cell (900 m^2) on the ridges. */
    float least = area_a[0];
    for (size_t k = 0; k < n; k++)
        if (area_a[k] < least) least = area_a[k];
    CHECK(fabs(least - 900.0) < 1.0);
    free(area_a);
    free(area_b);
    trn_field_dispose(&a);
    trn_field_dispose(&b);
}

/* Counts progress calls; cancels at the limit-th (0: never). */
typedef struct cancel_count {
    int calls, limit;
} cancel_count;

static int cancel_at(double done, const char *stage, void *user)
{
    (void)done;
    (void)stage;
    cancel_count *c = user;
    return ++c->calls == c->limit ? 1 : 0;
}

/* fine_steps out of range is named; a cancelled run leaves the field as it was. */
static void test_validation(void)
{
    trn_field f;
    make_noise(&f, "fbm", 128);
    const uint64_t before = hash_field(&f);
    trn_evolve_options o = options(30, 1001, 1);
    trn_error e;
    CHECK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "fine_steps: expected 0..1000, found 1001");
    CHECK(hash_field(&f) == before);
    /* Cancelled during the fine steps (after the coarse run's progress calls). */
    o = options(1, 0, 1);
    trn_field copy;
    CHECK_OK(trn_field_init(&copy, f.cells_x, f.cells_z, f.size_x, f.size_z, &e));
    memcpy(copy.heights, f.heights, trn_field_sample_count(&f) * sizeof(float));
    cancel_count count = {0, 0};
    CHECK_OK(trn_landscape_evolve(&copy, &o, NULL, cancel_at, &count, &e));
    trn_field_dispose(&copy);
    o.fine_steps = 1000;
    count.limit = count.calls + 2;
    count.calls = 0;
    CHECK(trn_landscape_evolve(&f, &o, NULL, cancel_at, &count, &e) == TRN_ERR_CANCELLED);
    CHECK(hash_field(&f) == before);
    trn_field_dispose(&f);
}

/* A landform evolved by a Stream Power node on a grid 4 times coarser. */
#define NODE_RECIPE(FINE_STEPS)                                                                    \
    "{\"size\": [960, 960], \"resolution\": [64, 64], \"seed\": 5, \"sea_level\": 3,"              \
    " \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": 0,"            \
    " \"height_variation\": 60, \"feature_size\": 300}}, \"default_biome\": \"g\","                \
    " \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"graph\": {\"format_version\": 1,"          \
    " \"output\": \"out\", \"nodes\": [{\"id\": \"lf\", \"type\": \"landform\"},"                  \
    " {\"id\": \"sp\", \"type\": \"stream_power\", \"inputs\": {\"field\": {\"node\": "            \
    "\"lf\"}}, \"params\": {\"steps\": 12, \"dt\": 10000, \"erodibility\": 1e-4,"                  \
    " \"diffusion\": 0.01, \"coarsen\": 4, \"fine_steps\": " FINE_STEPS "}},"                      \
    " {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\":"          \
    " \"sp\", \"pin\": \"field\"}}}]}}"

/* The Stream Power node's fine_steps: the library's result, named in the node's note; an
 * out-of-range value is refused when the recipe is read. */
static void test_graph_node(void)
{
    const char *text = NODE_RECIPE("3");
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e));
    trn_generated g;
    trn_generate_options go = {.threads = 2};
    CHECK_OK(trn_recipe_generate(&r, &go, &g, NULL, NULL, &e));
    CHECK(g.node_count == 3 && strstr(g.nodes[1].note, "then 3 steps on 65 x 65") != NULL);
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
    o.sp.sea_level = 3;
    o.coarsen = 4;
    o.fine_steps = 3;
    o.sp.seed = trn_subseed(r.seed, "stream_power");
    CHECK_OK(trn_landscape_evolve(&base.field, &o, NULL, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&g.field);
    CHECK(memcmp(g.field.heights, base.field.heights, n * sizeof(float)) == 0);
    trn_generated_dispose(&g);
    trn_generated_dispose(&base);
    trn_recipe_dispose(&r);
    trn_recipe_dispose(&plain);
    /* The work budget counts a cascade's level: coarsen 4 over 64 cells runs cascade_steps on
     * the grid twice as coarse as the output (32 x 32 cells; counted as 34 x 34 samples) at
     * 4 units a sample and step, on top of the same run without it. */
    uint64_t plain_work[3], cascade_work[3];
    trn_graph pg, cg;
    text = NODE_RECIPE("3");
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&r, &pg, NULL));
    CHECK_OK(trn_graph_work(&pg, &r, TRN_EROSION_FINAL, plain_work, NULL));
    trn_graph_dispose(&pg);
    trn_recipe_dispose(&r);
    text = NODE_RECIPE("3, \"cascade_steps\": 5");
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&r, &cg, NULL));
    CHECK_OK(trn_graph_work(&cg, &r, TRN_EROSION_FINAL, cascade_work, NULL));
    CHECK(cascade_work[1] == plain_work[1] + 34u * 34u * 5u * 4u);
    trn_graph_dispose(&cg);
    /* ... and runs it: the node's result differs from the plain run's. */
    trn_generated cgen;
    CHECK_OK(trn_recipe_generate(&r, &go, &cgen, NULL, NULL, &e));
    trn_recipe_dispose(&r);
    text = NODE_RECIPE("3");
    CHECK_OK(trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e));
    CHECK_OK(trn_recipe_generate(&r, &go, &g, NULL, NULL, &e));
    CHECK(memcmp(g.field.heights, cgen.field.heights, n * sizeof(float)) != 0);
    trn_generated_dispose(&g);
    trn_generated_dispose(&cgen);
    trn_recipe_dispose(&r);
    text = NODE_RECIPE("1001");
    trn_status st = trn_recipe_parse(text, strlen(text), "sp.json", &r, NULL, &e);
    if (!st) {
        st = trn_recipe_generate(&r, &go, &g, NULL, NULL, &e);
        if (!st) trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
    }
    CHECK(st != TRN_OK);
    CHECK_CONTAINS(e.message, "fine_steps");
    printf("out of range: %s\n", e.message);
}

/* A flat floor at base level (a lake or sea bed) ringed by land comes back flat: the spline's
 * ripple a hair above the sea is not lifted by the fine steps' uplift into concentric terraces
 * around it. */
static void test_flat_floor_stays_flat(void)
{
    trn_error e;
    trn_field f;
    const uint32_t cells = 128;
    CHECK_OK(trn_field_init(&f, cells, cells, cells * 30.0, cells * 30.0, &e));
    const size_t nx = cells + 1u;
    const double c = cells / 2.0, floor_r = 40.0;
    for (size_t j = 0; j < nx; j++)
        for (size_t i = 0; i < nx; i++) {
            const double r = hypot((double)i - c, (double)j - c);
            f.heights[j * nx + i] =
                r > floor_r ? (float)(12.0 * (r - floor_r) + 3.0 * sin(0.37 * (double)i) * sin(0.29 * (double)j))
                            : 0.0f;
        }
    trn_evolve_options o = options(30, 2, 1);
    o.sp.sea_level = 0.0;
    CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
    double worst = -INFINITY;
    for (size_t j = 0; j < nx; j++)
        for (size_t i = 0; i < nx; i++)
            if (hypot((double)i - c, (double)j - c) < floor_r - 12.0 &&
                f.heights[j * nx + i] > worst)
                worst = f.heights[j * nx + i];
    /* A fine step's uplift is U dt / coarsen = 5 m: a lifted ring would stand that high. */
    printf("highest sample well inside the floor: %.4g m\n", worst);
    CHECK(worst <= 1e-3);
    trn_field_dispose(&f);
}

/* Curvature energy of f averaged over blocks of k x k samples: the variance of the five-point
 * Laplacian of the block means, the valleys and ridges of about 2k-8k samples. */
static double block_curvature(const trn_field *f, uint32_t k)
{
    const size_t nx = f->cells_x + 1u, m = f->cells_x / k;
    double *b = calloc(m * m, sizeof *b);
    CHECK(b != NULL);
    for (size_t j = 0; j < m * k; j++)
        for (size_t i = 0; i < m * k; i++)
            b[(j / k) * m + i / k] += f->heights[j * nx + i] / (double)(k * k);
    double sum = 0, sum2 = 0;
    size_t n = 0;
    for (size_t j = 1; j + 1 < m; j++)
        for (size_t i = 1; i + 1 < m; i++) {
            const double c = b[j * m + i - 1] + b[j * m + i + 1] + b[(j - 1) * m + i] +
                             b[(j + 1) * m + i] - 4 * b[j * m + i];
            sum += c;
            sum2 += c * c;
            n++;
        }
    free(b);
    const double count = (double)n;
    return sum2 / count - (sum / count) * (sum / count);
}

/* cascade_steps: a run 8 times coarser comes back through the grids 4 and 2 times coarser than
 * the output, each running steps of its own, and cuts valleys at those scales into input that
 * has none there (noise smoothed below 8 samples, as a range's few octaves are on a fine
 * grid): the curvature of the 2 x 2 and 4 x 4 block means grows many times over the straight
 * way back's, while the map still drains (under 1% in closed depressions, b in the range of
 * real land) and the large shape stays (the levels add the time of 8 / 4 + 8 / 2 coarse steps
 * to the coarse run's 100). Measured (256^2, 30 m cells, 8 steps a level): curvature of 2 x 2
 * blocks x17.8, 4 x 4 x8.9; 32 x 32 block means moved by 0.10 of their relief; 0.03% in
 * depressions, b 0.461. The same bits on 1 and 2 threads with uplift and erodibility masks. */
static void test_cascade_nests_valleys(void)
{
    trn_field plain, nested;
    make_noise(&plain, "ridged", 256);
    const size_t nx = 257;
    /* Smooth below about 8 samples: three passes of a 5 x 5 box (edges clamped). */
    float *tmp = malloc(nx * nx * sizeof *tmp);
    CHECK(tmp != NULL);
    for (int pass = 0; pass < 3; pass++) {
        for (size_t j = 0; j < nx; j++)
            for (size_t i = 0; i < nx; i++) {
                double acc = 0;
                for (int dj = -2; dj <= 2; dj++)
                    for (int di = -2; di <= 2; di++) {
                        long a = (long)i + di, c = (long)j + dj;
                        a = a < 0 ? 0 : a > 256 ? 256 : a;
                        c = c < 0 ? 0 : c > 256 ? 256 : c;
                        acc += plain.heights[(size_t)c * nx + (size_t)a];
                    }
                tmp[j * nx + i] = (float)(acc / 25.0);
            }
        memcpy(plain.heights, tmp, nx * nx * sizeof *tmp);
    }
    free(tmp);
    trn_error e;
    CHECK_OK(trn_field_init(&nested, 256, 256, plain.size_x, plain.size_z, &e));
    memcpy(nested.heights, plain.heights, nx * nx * sizeof(float));
    trn_field again;
    CHECK_OK(trn_field_init(&again, 256, 256, plain.size_x, plain.size_z, &e));
    memcpy(again.heights, plain.heights, nx * nx * sizeof(float));
    trn_evolve_options o = options(100, 2, 2);
    o.coarsen = 8;
    CHECK_OK(trn_landscape_evolve(&plain, &o, NULL, NULL, NULL, &e));
    o.cascade_steps = 8;
    CHECK_OK(trn_landscape_evolve(&nested, &o, NULL, NULL, NULL, &e));
    const double r2 = block_curvature(&nested, 2) / block_curvature(&plain, 2);
    const double r4 = block_curvature(&nested, 4) / block_curvature(&plain, 4);
    /* The large shape: the means of 32 x 32 blocks (4 x 4 evolution cells), the RMS of their
     * change about its mean over the relief (the levels' steps add time, so uplift raises the
     * whole map a little more; a relief-input node stretches that back). */
    double diff = 0, diff2 = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t bj = 0; bj < 8; bj++)
        for (size_t bi = 0; bi < 8; bi++) {
            double a = 0, b = 0;
            for (size_t j = bj * 32; j < bj * 32 + 32; j++)
                for (size_t i = bi * 32; i < bi * 32 + 32; i++) {
                    a += plain.heights[j * nx + i] / 1024.0;
                    b += nested.heights[j * nx + i] / 1024.0;
                }
            diff += (a - b) / 64.0;
            diff2 += (a - b) * (a - b) / 64.0;
            if (a < lo) lo = a;
            if (a > hi) hi = a;
        }
    const double shape = sqrt(diff2 - diff * diff) / (hi - lo);
    trn_terrain_stats st;
    stats_of(&nested, &st);
    printf("cascade: curvature of 2 x 2 blocks x%.2f, 4 x 4 x%.2f; 32 x 32 block means moved "
           "by %.4f of their relief (RMS about the mean); depressions %.2f%%, b %.3f\n",
           r2, r4, shape, 100 * st.depression_fraction, st.area_exponent);
    CHECK(r2 > 2.5 && r4 > 2.0);
    CHECK(shape < 0.15);
    CHECK(st.depression_fraction < 0.01);
    CHECK(st.area_exponent > 0.38 && st.area_exponent < 0.58);
    /* Threads, with both masks on the evolution grid (32 x 32 cells). */
    float umask[33 * 33], kmask[33 * 33];
    for (int j = 0; j < 33; j++)
        for (int i = 0; i < 33; i++) {
            umask[j * 33 + i] = (float)(0.3 + 0.7 * i / 32.0);
            kmask[j * 33 + i] = (float)(0.5 + 1.5 * j / 32.0);
        }
    trn_field one;
    CHECK_OK(trn_field_init(&one, 256, 256, again.size_x, again.size_z, &e));
    memcpy(one.heights, again.heights, nx * nx * sizeof(float));
    o.sp.uplift_mask = umask;
    o.sp.erodibility_mask = kmask;
    o.sp.threads = 1;
    CHECK_OK(trn_landscape_evolve(&one, &o, NULL, NULL, NULL, &e));
    o.sp.threads = 2;
    CHECK_OK(trn_landscape_evolve(&again, &o, NULL, NULL, NULL, &e));
    CHECK(hash_field(&one) == hash_field(&again));
    CHECK(hash_field(&one) != hash_field(&nested));
    o.cascade_steps = 1001;
    CHECK(trn_landscape_evolve(&one, &o, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "cascade_steps: expected 0..1000, found 1001");
    trn_field_dispose(&one);
    trn_field_dispose(&again);
    trn_field_dispose(&plain);
    trn_field_dispose(&nested);
}

/* The evolution treats x and z alike: the input transposed (cells 1.25 times longer along x
 * than along z, so a dx used for a dz shows) comes back as the output transposed, through the
 * whole cascade (two levels, fine steps, diffusion, border outlets). D8 routing and the plain
 * cubic upsampling, because Rho8's draws (hashed by the row-major index) and the warp's waves
 * (drawn per axis) differ under a transposition by design; with them the land's curvature
 * across the columns over that across the rows, times the same of the transposed run, came to
 * 0.94-1.02 on these grids (the draws' scatter), and D8 with the warped spline 0.98-1.01. The
 * Mountain Range's periodic curvature at 1025^2 (2.09 x a shuffled profile, along x for its
 * seed, along z for three of seeds 1-5) is no such bias: it is its valleys' one spacing
 * (docs/landscape.md, "Valleys within valleys"). */
static void test_evolution_isotropic(void)
{
    static const char *const profiles[] = {"fbm", "ridged", "ridged"};
    static const uint32_t sizes[] = {128, 128, 96};
    for (int q = 0; q < 3; q++) {
        trn_field f, t;
        const uint32_t c = sizes[q];
        const size_t n = (size_t)c + 1u;
        make_noise(&f, profiles[q], c);
        f.size_x *= 1.25;
        trn_error e;
        CHECK_OK(trn_field_init(&t, c, c, f.size_z, f.size_x, &e));
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                t.heights[i * n + j] = f.heights[j * n + i];
        trn_evolve_options o = options(40, 2, 1);
        o.cascade_steps = 6;
        o.sp.border_outlets = true;
        o.sp.routing = TRN_ROUTING_D8;
        o.upsample = TRN_UPSAMPLE_CUBIC;
        CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
        CHECK_OK(trn_landscape_evolve(&t, &o, NULL, NULL, NULL, &e));
        /* Exact but for the odd tie between equal slopes, which D8 breaks by its code order. */
        double lo = INFINITY, hi = -INFINITY;
        for (size_t k = 0; k < n * n; k++) {
            lo = fmin(lo, f.heights[k]);
            hi = fmax(hi, f.heights[k]);
        }
        size_t off = 0;
        for (size_t j = 0; j < n; j++)
            for (size_t i = 0; i < n; i++)
                off += fabs((double)f.heights[j * n + i] - t.heights[i * n + j]) > 1e-4 * (hi - lo);
        fprintf(stderr, "isotropy (%s, %u^2): %zu of %zu samples differ from the transposed run\n",
                profiles[q], c + 1u, off, n * n);
        CHECK(off * 100u < n * n);
        trn_field_dispose(&f);
        trn_field_dispose(&t);
    }
}

int main(void)
{
    RUN(test_default_unchanged);
    RUN(test_fine_steps_drain_detail);
    RUN(test_deterministic);
    RUN(test_validation);
    RUN(test_graph_node);
    RUN(test_flat_floor_stays_flat);
    RUN(test_cascade_nests_valleys);
    RUN(test_evolution_isotropic);
    for (int k = 0; k < 4; k++)
        trn_field_dispose(&made[k]);
    return trn_test_finish();
}
