/* Tests: stream power in tiles gives trn_stream_power_run's bytes for every tile size. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/stream_power_tiled.h"
#include "terrane/landscape.h"
#include "test.h"

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

/* Waves and noise on coarse steps: many pits, flats and ties, and land under a sea level. */
static trn_field rough(uint32_t cx, uint32_t cz, uint32_t seed)
{
    trn_field f;
    trn_field_init(&f, cx, cz, (double)cx * 30.0, (double)cz * 20.0, NULL);
    const size_t nx = (size_t)cx + 1u, nz = (size_t)cz + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double smooth =
                40.0 * sin((double)i * 0.11) * cos((double)j * 0.07) + 0.3 * (double)(i + j);
            const uint32_t r = mix((uint32_t)(j * nx + i) ^ mix(seed));
            f.heights[j * nx + i] = (float)floor(smooth + (double)(r % 9u));
        }
    return f;
}

static uint64_t hash_floats(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n; k++) {
        uint32_t b;
        memcpy(&b, &v[k], sizeof b);
        h = (h ^ b) * 1099511628211ull;
    }
    return h;
}

typedef struct config {
    const char *name;
    trn_flow_routing routing;
    bool outlets, fixed, sea, umask, kmask;
    double n, threshold, diffusion;
    bool surface; /* base level at the sea's surface, the beds back filled 3 under it */
} config;

/* The whole grid against tiles of each size (dividing the grid or not, one tile, tiles of one
 * sample), heights and drainage area. */
static void check_config(const config *c, uint32_t cx, uint32_t cz, const char *dir)
{
    trn_field whole = rough(cx, cz, 7), tiled = rough(cx, cz, 7);
    const size_t n = trn_field_sample_count(&whole);
    float *um = malloc(n * sizeof *um), *km = malloc(n * sizeof *km);
    float *aw = malloc(n * sizeof *aw), *at = malloc(n * sizeof *at);
    for (size_t k = 0; k < n; k++) {
        um[k] = (float)(mix((uint32_t)k) % 100u) / 100.0f;
        km[k] = 0.5f + (float)(mix((uint32_t)k * 3u) % 100u) / 50.0f;
    }
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 4;
    p.dt = 2000;
    p.erodibility = 4e-5;
    p.routing = c->routing;
    p.border_outlets = c->outlets;
    p.fixed_border = c->fixed;
    p.sea_level = c->sea ? 10.0 : NAN;
    p.sea_surface = c->surface;
    p.sea_surface_depth = c->surface ? 3.0 : 0.0;
    p.uplift_mask = c->umask ? um : NULL;
    p.erodibility_mask = c->kmask ? km : NULL;
    p.n = c->n;
    p.channel_threshold = c->threshold;
    p.diffusion = c->diffusion;
    p.seed = 42;
    p.drainage_area = aw;
    trn_stream_power_report rw, rt;
    CHECK_OK(trn_stream_power_run(&whole, &p, &rw, NULL, NULL, NULL));
    const uint64_t hw = hash_floats(whole.heights, n), haw = hash_floats(aw, n);
    CHECK(rw.pits_routed > 0);
    const uint32_t sizes[] = {1, 5, 16, 23, 64, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        if (dir && sizes[s] != 23) continue;
        memcpy(tiled.heights, tiled.heights, 0);
        trn_field t = rough(cx, cz, 7);
        p.drainage_area = at;
        trn_error err = {0};
        const trn_status st =
            trn_stream_power_run_tiled(&t, &p, sizes[s], dir, &rt, NULL, NULL, &err);
        CHECK_OK(st);
        if (st) fprintf(stderr, "%s\n", err.message);
        const uint64_t ht = hash_floats(t.heights, n), hat = hash_floats(at, n);
        if (ht != hw || hat != haw)
            fprintf(stderr, "%s %ux%u tile %u: heights %s, area %s\n", c->name, cx + 1u, cz + 1u,
                    sizes[s], ht == hw ? "same" : "DIFFER", hat == haw ? "same" : "DIFFER");
        CHECK(ht == hw);
        CHECK(hat == haw);
        CHECK(rt.pits_routed == rw.pits_routed);
        CHECK(rt.steps_with_pits == rw.steps_with_pits);
        CHECK(rt.max_area == rw.max_area);
        trn_field_dispose(&t);
        p.drainage_area = aw;
    }
    trn_field_dispose(&whole);
    trn_field_dispose(&tiled);
    free(um);
    free(km);
    free(aw);
    free(at);
}

static const config configs[] = {
    {"rho8", TRN_ROUTING_RHO8, false, false, false, false, false, 1.0, 0, 0.05, false},
    {"rho8 outlets", TRN_ROUTING_RHO8, true, false, false, false, false, 1.0, 0, 0.05, false},
    {"d8 fixed sea", TRN_ROUTING_D8, false, true, true, false, false, 1.0, 0, 0.05, false},
    {"rho8 sea surface", TRN_ROUTING_RHO8, false, false, true, false, false, 1.0, 0, 0.05, true},
    {"rho8 outlets sea surface", TRN_ROUTING_RHO8, true, false, true, false, false, 1.0, 0, 0.05,
     true},
    {"rho8 outlets masks", TRN_ROUTING_RHO8, true, false, true, true, true, 1.0, 0, 0.05, false},
    {"rho8 n 1.5 threshold", TRN_ROUTING_RHO8, false, false, false, false, false, 1.5, 5e4, 0.05,
     false},
    {"d8 outlets no diffusion", TRN_ROUTING_D8, true, false, false, false, false, 1.0, 0, 0, false},
    /* 81 diffusion substeps a step: tiles run them 8 at a time on a wider halo. */
    {"rho8 outlets sea strong diffusion", TRN_ROUTING_RHO8, true, false, true, false, false, 1.0, 0,
     5.0, false},
};

static void test_configs(void)
{
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++)
        check_config(&configs[c], 60, 47, NULL);
}

/* The tiles in files under a folder: the same bytes. */
static void test_files(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    check_config(&configs[1], 60, 47, dir);
}

/* Unsupported configurations are refused by name, the field untouched. */
static void test_refused(void)
{
    trn_field f = rough(20, 20, 3);
    const uint64_t h0 = hash_floats(f.heights, trn_field_sample_count(&f));
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 2;
    trn_error err = {0};
    p.routing = TRN_ROUTING_MFD;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "mfd routing is not supported in tiles");
    p.routing = TRN_ROUTING_RHO8;
    p.deposition = 1;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "deposition");
    p.deposition = 0;
    p.critical_slope = 30;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "critical slope");
    p.critical_slope = 0;
    CHECK(hash_floats(f.heights, trn_field_sample_count(&f)) == h0);
    /* Creep varying with the rock is refused; the same rock with one creep rate runs. */
    const size_t n = trn_field_sample_count(&f);
    float *rock = malloc(n * sizeof *rock);
    CHECK(rock != NULL);
    if (!rock) {
        trn_field_dispose(&f);
        return;
    }
    for (size_t k = 0; k < n; k++)
        rock[k] = k % 3u ? 0.5f : 2.0f;
    p.erodibility_mask = rock;
    p.diffusion_rock = -1;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "diffusion_rock");
    CHECK(hash_floats(f.heights, n) == h0);
    p.diffusion_rock = 0;
    CHECK_OK(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err));
    free(rock);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_configs);
    RUN(test_files);
    RUN(test_refused);
    return trn_test_finish();
}
