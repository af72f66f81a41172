/* Tests of erosion's transport mode: flat fills and fans, no pits, ledger, determinism, limits,
 * the graph node's parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/erosion.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"
#include "terrane/stats.h"
#include "test.h"

static uint64_t fnv_floats(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* A ridged landform, 1 unit per cell, heights up to about 80: many closed basins. */
static void make_terrain(trn_field *f, uint32_t cells)
{
    CHECK_OK(trn_field_init(f, cells, cells, (double)cells, (double)cells, NULL));
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "test";
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 80.0;
    lf.feature_size = 96.0;
    lf.roughness = 0.5;
    lf.octaves = 5;
    lf.warp_feature_size = 128.0;
    lf.stretch = 1.0;
    CHECK_OK(trn_landform_fill(&lf, 7, f, NULL, NULL, NULL));
}

/* A cone of slope 0.5 with 23 radial gullies, out to radius 0.3 * cells, on an apron falling
 * 0.02 per cell to the edges: a slope break all round the foot. */
static void make_cone(trn_field *f, uint32_t cells)
{
    CHECK_OK(trn_field_init(f, cells, cells, (double)cells, (double)cells, NULL));
    const size_t nx = cells + 1u;
    const double r_foot = 0.3 * cells, r_edge = 0.75 * cells;
    for (size_t z = 0; z < nx; z++)
        for (size_t x = 0; x < nx; x++) {
            const double dx = (double)x - cells / 2.0, dz = (double)z - cells / 2.0;
            const double d = sqrt(dx * dx + dz * dz);
            double h =
                d < r_foot ? (r_foot - d) * 0.5 + (r_edge - r_foot) * 0.02 : (r_edge - d) * 0.02;
            h += sin((double)x * 0.37) * 0.15 + cos((double)z * 0.23 + (double)x * 0.11) * 0.15;
            if (d < r_foot) h += sin(atan2(dz, dx) * 23.0);
            f->heights[z * nx + x] = (float)h;
        }
}

static void transport_params(trn_erosion_params *p)
{
    trn_erosion_params_default(p, TRN_EROSION_FINAL);
    p->mode = TRN_EROSION_TRANSPORT;
    p->thermal_iterations = 0;
    p->capacity = 16.0; /* four times the default: 40 steps show the landforms well */
}

static double depression_fraction(const trn_field *f)
{
    trn_stats_options o;
    trn_stats_options_default(&o);
    o.which = TRN_STATS_DEPRESSIONS;
    trn_terrain_stats s;
    CHECK_OK(trn_terrain_stats_compute(f, &o, &s, NULL, NULL, NULL));
    return s.depression_fraction;
}

/* Interior samples strictly lower than all eight neighbours: pits. */
static size_t pits(const float *h, size_t nx, size_t nz)
{
    size_t count = 0;
    for (size_t z = 1; z + 1 < nz; z++)
        for (size_t x = 1; x + 1 < nx; x++) {
            const float c = h[z * nx + x];
            bool pit = true;
            for (int oz = -1; oz <= 1 && pit; oz++)
                for (int ox = -1; ox <= 1; ox++)
                    if ((ox || oz) &&
                        h[(z + (size_t)(oz + 1) - 1) * nx + x + (size_t)(ox + 1) - 1] <= c) {
                        pit = false;
                        break;
                    }
            count += pit;
        }
    return count;
}

/* Interior samples the run raised that stand above all eight neighbours: spikes of deposit. */
static size_t raised_peaks(const trn_erosion_result *r)
{
    const size_t nx = r->field.cells_x + 1u, nz = r->field.cells_z + 1u;
    const float *h = r->field.heights;
    size_t count = 0;
    for (size_t z = 1; z + 1 < nz; z++)
        for (size_t x = 1; x + 1 < nx; x++) {
            const float c = h[z * nx + x];
            bool peak = r->change[z * nx + x] > 0.0f;
            for (size_t k = 0; k < 9 && peak; k++)
                if (k != 4 && h[(z + k / 3 - 1) * nx + x + k % 3 - 1] >= c) peak = false;
            count += peak;
        }
    return count;
}

/* Mean Horn gradient (degrees) of the result over samples the run raised by more than min. */
static double deposit_slope(const trn_erosion_result *r, float min, double r0, double r1,
                            size_t *count)
{
    const size_t nx = r->field.cells_x + 1u, nz = r->field.cells_z + 1u;
    const double cx = 0.5 * (double)r->field.cells_x, cz = 0.5 * (double)r->field.cells_z;
    double *row = malloc(nx * sizeof *row), sum = 0.0;
    *count = 0;
    for (size_t z = 0; z < nz; z++) {
        trn_field_slope_row(&r->field, (uint32_t)z, row);
        for (size_t x = 0; x < nx; x++) {
            const double d = hypot((double)x - cx, (double)z - cz);
            if (r->change[z * nx + x] > min && d >= r0 && d <= r1) {
                sum += row[x];
                (*count)++;
            }
        }
    }
    free(row);
    return *count ? sum / (double)*count : 0.0;
}

static void test_ledger_and_threads(void)
{
    trn_field f;
    make_terrain(&f, 128);
    const size_t n = trn_field_sample_count(&f);
    trn_erosion_params p;
    transport_params(&p);
    trn_erosion_result r1, r2;
    p.threads = 1;
    CHECK_OK(trn_erosion_run(&f, &p, 99, &r1, NULL, NULL, NULL));
    p.threads = 2;
    CHECK_OK(trn_erosion_run(&f, &p, 99, &r2, NULL, NULL, NULL));
    CHECK(memcmp(r1.field.heights, r2.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(&r1.ledger, &r2.ledger, sizeof r1.ledger) == 0);
    /* Pinned: any change to the scheme shows here. */
    const uint64_t digest = fnv_floats(r1.field.heights, n);
    if (digest != 0x8f4c566b5557a376ull)
        fprintf(stderr, "transport digest %016llx\n", (unsigned long long)digest);
    CHECK(digest == 0x8f4c566b5557a376ull);
    const trn_erosion_ledger *l = &r1.ledger;
    CHECK_EQ_INT(l->droplets, 0);
    CHECK_EQ_INT(l->steps, 40);
    CHECK(l->suspended == 0.0);
    CHECK(l->eroded > 100.0);
    CHECK(l->deposited > 0.5 * l->eroded);
    CHECK(l->exported > 0.0);
    CHECK(fabs(l->eroded - (l->deposited + l->exported)) <= 1e-9 * l->eroded);
    double net = 0.0;
    for (size_t i = 0; i < n; i++)
        net += (double)r1.change[i];
    CHECK(fabs(net - (l->deposited - l->eroded)) <= 1e-4 * l->eroded);
    /* The seed does not matter: nothing is random. */
    trn_erosion_result r3;
    CHECK_OK(trn_erosion_run(&f, &p, 12345, &r3, NULL, NULL, NULL));
    CHECK(memcmp(r1.field.heights, r3.field.heights, n * sizeof(float)) == 0);
    trn_erosion_result_dispose(&r1);
    trn_erosion_result_dispose(&r2);
    trn_erosion_result_dispose(&r3);
    trn_field_dispose(&f);
}

/* Transport fills basins and digs no pits; droplets leave as many closed depressions as before
 * or more. */
static void test_fewer_depressions(void)
{
    trn_field f;
    make_terrain(&f, 128);
    const size_t nx = 129, n = trn_field_sample_count(&f);
    trn_erosion_params pt, pd;
    transport_params(&pt);
    trn_erosion_params_default(&pd, TRN_EROSION_FINAL);
    pd.thermal_iterations = 0;
    trn_erosion_result rt, rd;
    CHECK_OK(trn_erosion_run(&f, &pt, 3, &rt, NULL, NULL, NULL));
    CHECK_OK(trn_erosion_run(&f, &pd, 3, &rd, NULL, NULL, NULL));
    const double in = depression_fraction(&f), t = depression_fraction(&rt.field),
                 d = depression_fraction(&rd.field);
    CHECK(in > 0.1);
    CHECK(d > 0.05);
    CHECK(t < 0.005);
    const size_t pits_in = pits(f.heights, nx, nx);
    CHECK(pits_in > 0);
    CHECK(pits(rt.field.heights, nx, nx) <= pits_in);
    CHECK(pits(rd.field.heights, nx, nx) >= pits_in); /* 87 and 87 with these starts */
    /* Without diffusion too: no closed depression, no pit. */
    trn_erosion_result r0;
    pt.diffusion = 0.0;
    CHECK_OK(trn_erosion_run(&f, &pt, 3, &r0, NULL, NULL, NULL));
    CHECK(depression_fraction(&r0.field) < 0.005);
    CHECK_EQ_INT(pits(r0.field.heights, nx, nx), 0);
    CHECK_EQ_INT(raised_peaks(&rt), 0);
    trn_erosion_result_dispose(&r0);
    (void)n;
    trn_erosion_result_dispose(&rt);
    trn_erosion_result_dispose(&rd);
    trn_field_dispose(&f);
}

/* At the cone's foot the gullies' load settles as fans flatter than what droplets leave, and no
 * closed depression is left. */
static void test_fans_at_slope_break(void)
{
    trn_field f;
    make_cone(&f, 160);
    const size_t nx = 161;
    trn_erosion_params pt, pd;
    transport_params(&pt);
    trn_erosion_params_default(&pd, TRN_EROSION_FINAL);
    pd.thermal_iterations = 0;
    trn_erosion_result rt, rd;
    CHECK_OK(trn_erosion_run(&f, &pt, 3, &rt, NULL, NULL, NULL));
    CHECK_OK(trn_erosion_run(&f, &pd, 3, &rd, NULL, NULL, NULL));
    /* Fans: the net deposits ring the foot (radius 48), hardly any on the upper cone. */
    double ring = 0.0, top = 0.0, all = 0.0;
    for (size_t z = 0; z < nx; z++)
        for (size_t x = 0; x < nx; x++) {
            const double dx = (double)x - 80.0, dz = (double)z - 80.0;
            const double d = sqrt(dx * dx + dz * dz);
            const float c = rt.change[z * nx + x];
            if (c <= 0.0f) continue;
            all += c;
            if (d >= 40.0 && d <= 60.0) ring += c;
            if (d < 30.0) top += c;
        }
    CHECK_EQ_INT(raised_peaks(&rt), 0);
    CHECK(ring > 0.6 * all);
    CHECK(top < 0.1 * all);
    size_t ct = 0, cd = 0;
    const double st = deposit_slope(&rt, 0.05f, 40.0, 60.0, &ct),
                 sd = deposit_slope(&rd, 0.05f, 40.0, 60.0, &cd);
    CHECK(ct > 200 && cd > 200);
    CHECK(st < 0.8 * sd);
    CHECK(st < 10.0);
    CHECK(depression_fraction(&f) > 0.05);
    CHECK(depression_fraction(&rt.field) < 0.005);
    CHECK(depression_fraction(&rd.field) > 0.02);
    trn_erosion_result_dispose(&rt);
    trn_erosion_result_dispose(&rd);
    trn_field_dispose(&f);
}

/* A bowl with no outlet but its rim: the sediment washed in settles as one flat floor below the
 * spill level. */
static void test_lake_fills_flat(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 64, 64, 64.0, 64.0, NULL));
    const size_t nx = 65, n = trn_field_sample_count(&f);
    for (size_t z = 0; z < nx; z++)
        for (size_t x = 0; x < nx; x++) {
            const double dx = (double)x - 32.0, dz = (double)z - 32.0;
            const double d = sqrt(dx * dx + dz * dz);
            /* Walls rise 0.4 per cell to a rim at radius 24, then fall 0.1 per cell outwards. */
            f.heights[z * nx + x] = (float)(d < 24.0 ? d * 0.4 : 9.6 - (d - 24.0) * 0.1);
        }
    trn_erosion_params p;
    transport_params(&p);
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, NULL));
    float lowest = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (r.field.heights[i] < lowest) lowest = r.field.heights[i];
    size_t floor_count = 0;
    for (size_t i = 0; i < n; i++)
        floor_count += r.field.heights[i] == lowest;
    /* The bottom was one sample at 0; now a flat floor, raised, still under the rim. */
    CHECK(lowest > 0.1f);
    CHECK(lowest < 9.0f);
    CHECK(floor_count >= 20);
    CHECK(pits(r.field.heights, nx, nx) == 0);
    CHECK(r.ledger.exported < r.ledger.eroded);
    CHECK_EQ_INT(raised_peaks(&r), 0);
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

/* A level plane does not change at all; a tilted one stays the same across the flow, with no
 * pit and a profile that still falls all the way. */
static void test_planes(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 48, 32, 48.0, 32.0, NULL));
    const size_t nx = 49, nz = 33, n = trn_field_sample_count(&f);
    for (size_t i = 0; i < n; i++)
        f.heights[i] = 7.25f;
    trn_erosion_params p;
    transport_params(&p);
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, NULL));
    CHECK(memcmp(r.field.heights, f.heights, n * sizeof(float)) == 0);
    CHECK(r.ledger.eroded == 0.0 && r.ledger.deposited == 0.0 && r.ledger.exported == 0.0);
    trn_erosion_result_dispose(&r);

    /* Tilted, without diffusion (which would carry the outlet rows' difference inwards). */
    p.diffusion = 0.0;

    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f.heights[z * nx + x] = (float)x * 0.2f;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, NULL));
    CHECK(r.ledger.eroded > 1.0);
    for (size_t z = 2; z + 2 < nz; z++)
        CHECK(memcmp(r.field.heights + z * nx, r.field.heights + nx, nx * sizeof(float)) == 0);
    for (size_t x = 1; x < nx; x++)
        CHECK(r.field.heights[nx + x] > r.field.heights[nx + x - 1]);
    CHECK(pits(r.field.heights, nx, nz) == 0);
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

static int cancel_in_transport(double done, const char *stage, void *user)
{
    (void)done;
    int *calls = user;
    if (strcmp(stage, "transport") == 0 && ++*calls == 3) return TRN_CANCEL;
    return 0;
}

static void test_cancel_and_limits(void)
{
    trn_field f;
    make_terrain(&f, 32);
    trn_erosion_params p;
    transport_params(&p);
    trn_erosion_result r;
    memset(&r, 0x5a, sizeof r);
    trn_erosion_result before = r;
    int calls = 0;
    trn_error err;
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, cancel_in_transport, &calls, &err),
                 TRN_ERR_CANCELLED);
    CHECK_EQ_INT(calls, 3);
    CHECK_CONTAINS(err.message, "transport: cancelled");
    CHECK(memcmp(&r, &before, sizeof r) == 0);
    trn_field_dispose(&f);

    make_terrain(&f, 1);
    static const struct {
        int mode;
        uint32_t steps;
        double diffusion;
        const char *message; /* NULL: accepted */
    } cases[] = {
        {TRN_EROSION_TRANSPORT, 10000, 0.02, NULL},
        {TRN_EROSION_TRANSPORT, 10001, 0.02, "transport_steps must be 1..10000"},
        {TRN_EROSION_TRANSPORT, 1, 0.02, NULL},
        {TRN_EROSION_TRANSPORT, 0, 0.02, "transport_steps must be 1..10000"},
        {TRN_EROSION_DETACH, 0, 0.02, "transport_steps must be 1..10000"},
        {TRN_EROSION_DETACH, 40, 0.02, NULL},
        {2, 40, 0.02, "mode must be TRN_EROSION_DETACH or TRN_EROSION_TRANSPORT"},
        {-1, 40, 0.02, "mode must be TRN_EROSION_DETACH or TRN_EROSION_TRANSPORT"},
        {TRN_EROSION_TRANSPORT, 40, 0.25, NULL},
        {TRN_EROSION_TRANSPORT, 40, 0.2501, "diffusion must be in [0, 0.25]"},
        {TRN_EROSION_TRANSPORT, 40, 0.0, NULL},
        {TRN_EROSION_TRANSPORT, 40, -0.0001, "diffusion must be in [0, 0.25]"},
        {TRN_EROSION_DETACH, 40, NAN, "diffusion must be in [0, 0.25]"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trn_erosion_params q = p;
        q.droplets = 1;
        q.mode = (trn_erosion_mode)cases[c].mode;
        q.transport_steps = cases[c].steps;
        q.diffusion = cases[c].diffusion;
        trn_status st = trn_erosion_run(&f, &q, 1, &r, NULL, NULL, &err);
        if (cases[c].message) {
            CHECK_STATUS(st, TRN_ERR_INVALID_ARGUMENT);
            CHECK_CONTAINS(err.message, cases[c].message);
        } else {
            CHECK_OK(st);
            if (!st) {
                if (q.mode == TRN_EROSION_TRANSPORT)
                    CHECK_EQ_INT(r.ledger.steps, q.transport_steps);
                trn_erosion_result_dispose(&r);
            }
        }
    }
    trn_field_dispose(&f);
}

/* ---- the graph node ---- */

static bool load_recipe(trn_recipe *r)
{
    static const char text[] =
        "{\"size\":[128,128],\"resolution\":[48,48],\"seed\":77,"
        "\"default_landform\":\"hills\",\"landforms\":{\"hills\":{\"base_height\":0,"
        "\"height_variation\":60,\"feature_size\":60,\"octaves\":4}},"
        "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}}}";
    trn_error e;
    trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    return st == TRN_OK;
}

/* noise -> erosion (with these params) -> output. */
static bool parse_graph(const char *params, trn_graph *g)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
             "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":50,"
             "\"feature_size\":40}},"
             "{\"id\":\"er\",\"type\":\"erosion\",\"params\":{%s},"
             "\"inputs\":{\"field\":{\"node\":\"base\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
             "\"er\",\"pin\":\"field\"}}}]}",
             params);
    trn_error e;
    trn_status st = trn_graph_parse(text, strlen(text), "g.json", g, &e);
    if (st) fprintf(stderr, "graph refused: %s\n", e.message);
    return st == TRN_OK;
}

/* The erosion node's key (node 1) for these params at a quality; 0 when refused (err says
 * why). */
static uint64_t erosion_key(const char *params, trn_erosion_quality q, trn_error *err)
{
    trn_recipe r;
    trn_graph g;
    uint64_t keys[3] = {0, 0, 0};
    if (!load_recipe(&r)) return 0;
    if (parse_graph(params, &g)) {
        if (trn_graph_keys(&g, &r, q, keys, err) != TRN_OK) keys[1] = 0;
        trn_graph_dispose(&g);
    }
    trn_recipe_dispose(&r);
    return keys[1];
}

static void test_graph_params(void)
{
    trn_error err;
    const uint64_t plain = erosion_key("", TRN_EROSION_FINAL, &err);
    CHECK(plain != 0);
    /* Writing the defaults is the same node. */
    CHECK(erosion_key("\"mode\":\"detach\",\"transport_steps\":40", TRN_EROSION_FINAL, &err) ==
          plain);
    const uint64_t tr = erosion_key("\"mode\":\"transport\"", TRN_EROSION_FINAL, &err);
    CHECK(tr != 0 && tr != plain);
    const uint64_t st =
        erosion_key("\"mode\":\"transport\",\"transport_steps\":41", TRN_EROSION_FINAL, &err);
    CHECK(st != 0 && st != tr);
    CHECK(erosion_key("\"mode\":\"transport\"", TRN_EROSION_PREVIEW, &err) != tr);

    /* The node's ranges: the limits are accepted, one beyond is refused by name. */
    CHECK(erosion_key("\"transport_steps\":10000", TRN_EROSION_FINAL, &err) != 0);
    CHECK(erosion_key("\"transport_steps\":1", TRN_EROSION_FINAL, &err) != 0);
    CHECK(erosion_key("\"transport_steps\":10001", TRN_EROSION_FINAL, &err) == 0);
    CHECK_CONTAINS(err.message, "transport_steps");
    CHECK(erosion_key("\"transport_steps\":0", TRN_EROSION_FINAL, &err) == 0);
    CHECK_CONTAINS(err.message, "transport_steps");
    CHECK(erosion_key("\"diffusion\":0.25", TRN_EROSION_FINAL, &err) != 0);
    CHECK(erosion_key("\"diffusion\":0.2501", TRN_EROSION_FINAL, &err) == 0);
    CHECK_CONTAINS(err.message, "diffusion");
    CHECK(erosion_key("\"mode\":\"transport\",\"diffusion\":0.03", TRN_EROSION_FINAL, &err) != tr);
    CHECK(erosion_key("\"mode\":\"carry\"", TRN_EROSION_FINAL, &err) == 0);
    CHECK_CONTAINS(err.message, "mode");

    /* Evaluated: transport runs (no droplets, the node's steps), preview runs 40% of them. */
    trn_recipe r;
    trn_graph g;
    CHECK(load_recipe(&r));
    CHECK(parse_graph("\"mode\":\"transport\",\"transport_steps\":10", &g));
    /* The work budget counts two droplet steps per sample and step, plus thermal passes
     * (preview: 4 steps, no thermal pass); 49 x 49 samples. */
    uint64_t work[3] = {0, 0, 0};
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
    CHECK_EQ_INT(work[1], 2401u + 10u * 2401u * 2u + 10u * 2401u);
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_PREVIEW, work, NULL));
    CHECK_EQ_INT(work[1], 2401u + 4u * 2401u * 2u);
    for (int q = 0; q < 2; q++) {
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = 1;
        o.quality = q ? TRN_EROSION_PREVIEW : TRN_EROSION_FINAL;
        trn_graph_run *run = NULL;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, NULL));
        uint32_t count = 0;
        const trn_node_report *reps = run ? trn_graph_run_report(run, &count) : NULL;
        const trn_node_report *er = NULL;
        for (uint32_t k = 0; reps && k < count; k++)
            if (strcmp(reps[k].id, "er") == 0) er = &reps[k];
        CHECK(er != NULL);
        if (er) {
            CHECK(er->has_ledger);
            CHECK_EQ_INT(er->ledger.droplets, 0);
            CHECK_EQ_INT(er->ledger.steps, q ? 4 : 10);
            CHECK(er->ledger.eroded > 0.0);
        }
        trn_graph_run_free(run);
    }
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_ledger_and_threads);
    RUN(test_fewer_depressions);
    RUN(test_fans_at_slope_break);
    RUN(test_lake_fills_flat);
    RUN(test_planes);
    RUN(test_cancel_and_limits);
    RUN(test_graph_params);
    return trn_test_finish();
}
