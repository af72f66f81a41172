/* Stream-power landscape evolution: analytic steady states, lakes, limits and determinism. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rows.h"
#include "gen/stream_power_dep.h"
#include "gen/stream_power_tiled.h"
#include "terrane/generate.h"
#include "terrane/landscape.h"
#include "test.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#include <time.h>

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

/* Creep varying with the rock (diffusion_rock): each sample's Kd times its erodibility factor
 * to the power, the flux between two samples by the mean of their factors, so what one loses
 * the other gains. */
static void test_diffusion_rock(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 6, 6, 12.0, 6.0, &e)); /* dx 2, dz 1 */
    float mask[49];
    for (int k = 0; k < 49; k++)
        mask[k] = 1.0f;
    mask[3 * 7 + 4] = 0.25f; /* the east neighbour: weak rock, creep 4 times at -1 */
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.erodibility_mask = mask;
    p.uplift = 0.0;
    p.diffusion = 0.1;
    p.diffusion_rock = -1.0;
    p.dt = 0.5; /* limit 0.45 / (0.1 * 4 * (1/4 + 1)) = 0.9: one substep */
    p.steps = 1;
    for (int pass = 0; pass < 2; pass++) {
        memset(f.heights, 0, 49 * sizeof(float));
        f.heights[3 * 7 + 3] = 8.0f;
        CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
        const double kdt = 0.05, east = pass ? 1.0 : 2.5; /* the faces' mean factor */
        CHECK(fabs(f.heights[3 * 7 + 4] - kdt * east * 8.0 / 4.0) < 1e-6);
        CHECK(fabs(f.heights[3 * 7 + 2] - kdt * 8.0 / 4.0) < 1e-6); /* west: factor 1 */
        CHECK(fabs(f.heights[4 * 7 + 3] - kdt * 8.0) < 1e-6);
        CHECK(fabs(f.heights[3 * 7 + 3] - (8.0 - kdt * 8.0 * ((1.0 + east) / 4.0 + 2.0))) < 1e-6);
        double sum = 0;
        for (int k = 0; k < 49; k++)
            sum += f.heights[k];
        CHECK(fabs(sum - 8.0) < 1e-5);
        p.diffusion_rock = 0.0; /* then the same rock, one creep rate */
    }
    /* The largest factor sets the substeps: a long step overshoots nowhere. */
    for (int k = 0; k < 49; k++)
        mask[k] = (k % 7) >= 3 ? 1.0f / 16.0f : 1.0f; /* creep 16 times on the east half */
    p.diffusion_rock = -1.0;
    p.dt = 40.0;
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 8.0f;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    for (int k = 0; k < 49; k++)
        CHECK(f.heights[k] >= 0.0f && f.heights[k] <= 8.0f);
    /* Outside -4..4: refused. */
    p.diffusion_rock = 4.5;
    CHECK_STATUS(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "diffusion_rock") != NULL);
    trn_field_dispose(&f);
}

/* Nonlinear creep (creep_slope): each link's flux is the linear one times 1 / (1 - (S / Sc)^2)
 * of its own gradient, at most TRN_CREEP_FACTOR_MAX, so a steep side creeps faster than a
 * gentle one, what one sample loses its neighbours gain, and the substeps keep it stable. */
static void test_creep_slope(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 6, 6, 12.0, 6.0, &e)); /* dx 2, dz 1 */
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.uplift = 0.0;
    p.diffusion = 0.1;
    p.creep_slope = 45.0; /* Sc 1 */
    p.dt = 0.5;           /* limit 0.45 / (0.1 * 4 * (1/4 + 1)) = 0.9: one substep */
    p.steps = 1;
    const double kdt = 0.05;
    /* A bump of 0.5: gradients 0.25 east and west (over dx 2), 0.5 north and south. */
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 0.5f;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    const double fe = 1.0 / (1.0 - 0.0625), fn = 1.0 / (1.0 - 0.25);
    CHECK(fabs(f.heights[3 * 7 + 4] - kdt * fe * 0.5 / 4.0) < 1e-7);
    CHECK(fabs(f.heights[3 * 7 + 2] - kdt * fe * 0.5 / 4.0) < 1e-7);
    CHECK(fabs(f.heights[4 * 7 + 3] - kdt * fn * 0.5) < 1e-7);
    CHECK(fabs(f.heights[3 * 7 + 3] - (0.5 - kdt * 0.5 * (2.0 * fe / 4.0 + 2.0 * fn))) < 1e-7);
    double sum = 0;
    for (int k = 0; k < 49; k++)
        sum += f.heights[k];
    CHECK(fabs(sum - 0.5) < 1e-6);
    /* A spike of 8 stands over Sc on every side: the factor stops at its cap. */
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 8.0f;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    CHECK(fabs(f.heights[3 * 7 + 4] - kdt * TRN_CREEP_FACTOR_MAX * 8.0 / 4.0) < 1e-6);
    CHECK(fabs(f.heights[4 * 7 + 3] - kdt * TRN_CREEP_FACTOR_MAX * 8.0) < 1e-6);
    /* A step far over the limit is substepped for the cap: nothing overshoots. */
    memset(f.heights, 0, 49 * sizeof(float));
    f.heights[3 * 7 + 3] = 8.0f;
    p.dt = 100.0;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    for (int k = 0; k < 49; k++)
        CHECK(f.heights[k] >= 0.0f && f.heights[k] <= 8.0f);
    /* 90 degrees or more: refused. */
    p.creep_slope = 90.0;
    CHECK_STATUS(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "creep_slope: expected 0 (off) or between 0 and 90");
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

/* A field of hills around a hollow whose floor (a bowl down to 2 m) lies under a 20 m sea level:
 * the shape of an inland lake the evolution must treat as a base level. Land from 22 m at the
 * hollow's rim rising to 60 m at the border, which is walled off (fixed and high), so the hollow
 * is the only outlet. */
static void make_hollow(trn_field *f, uint32_t c)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, c, c, 10.0 * c, 10.0 * c, &e));
    const size_t nx = c + 1u;
    const double mid = c / 2.0;
    for (uint32_t j = 0; j <= c; j++)
        for (uint32_t i = 0; i <= c; i++) {
            const double r = hypot(i - mid, j - mid) / mid; /* 0 centre, 1 at the edge's middle */
            double h = r < 0.3 ? 2.0 + 6.0 * (r / 0.3) : 22.0 + 60.0 * (r - 0.3);
            /* Ribs so the land has valleys to cut, not one cone. */
            h += 3.0 * sin(atan2(j - mid, i - mid) * 7.0) * (r > 0.3 ? 1.0 : 0.0);
            if (i == 0 || j == 0 || i == c || j == c) h = 1000.0;
            f->heights[j * nx + i] = (float)h;
        }
}

/* base level surface (sea_surface): the hollow's samples stand at the sea level while the land
 * evolves, so no land beside the water is cut or worn below its surface (at bed level, rivers
 * and creep reach down toward the hollow's floor and leave land below the sea level: the band of
 * raw ground between a lake at the rim's level and the evolved hillsides), and the bed comes back
 * as it was, or filled to sea_surface_depth under the surface. */
static void test_sea_surface(void)
{
    const uint32_t c = 40;
    const size_t n = (size_t)(c + 1u) * (c + 1u);
    trn_field bed_run, surf_run, fill_run;
    make_hollow(&bed_run, c);
    make_hollow(&surf_run, c);
    make_hollow(&fill_run, c);
    float *in = malloc(n * sizeof *in);
    memcpy(in, bed_run.heights, n * sizeof *in);
    trn_stream_power_params p = quiet_params();
    p.uplift = 1e-3;
    p.erodibility = 5e-3;
    p.diffusion = 0.5;
    p.dt = 200.0;
    p.steps = 40;
    p.sea_level = 20.0;
    trn_error e;
    CHECK_OK(trn_stream_power_run(&bed_run, &p, NULL, NULL, NULL, &e));
    p.sea_surface = true;
    CHECK_OK(trn_stream_power_run(&surf_run, &p, NULL, NULL, NULL, &e));
    p.sea_surface_depth = 5.0;
    CHECK_OK(trn_stream_power_run(&fill_run, &p, NULL, NULL, NULL, &e));
    size_t bed_below = 0, surf_below = 0, wet = 0, changed = 0;
    double ring_min = INFINITY;
    const size_t nx = c + 1u;
    for (size_t k = 0; k < n; k++) {
        if (in[k] <= 20.0f) {
            wet++;
            CHECK(surf_run.heights[k] == in[k]); /* the bed as it came */
            CHECK(fill_run.heights[k] == (in[k] < 15.0f ? 15.0f : in[k])); /* filled to 15 */
            continue;
        }
        bed_below += bed_run.heights[k] < 20.0f;
        surf_below += surf_run.heights[k] < 20.0f;
        changed += surf_run.heights[k] != in[k];
        CHECK(fill_run.heights[k] == surf_run.heights[k]); /* the land does not see the fill */
        /* The land touching the water: the hillsides' foot, which drains into the lake. */
        const size_t i = k % nx, j = k / nx;
        if (i == 0 || j == 0 || i == c || j == c) continue; /* the wall */
        for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++) {
                const size_t q = (j + dj) * nx + (i + di);
                if (in[q] <= 20.0f && surf_run.heights[k] < ring_min)
                    ring_min = surf_run.heights[k];
            }
    }
    CHECK(wet > 50 && changed > n / 2);
    CHECK(bed_below > 0);   /* at bed level the land is worn below the lake's surface */
    CHECK(surf_below == 0); /* with the surface held, none is */
    /* The foot of the hillsides reaches down to the water (within a metre): no bench of land
     * standing above it. */
    CHECK(ring_min >= 20.0 && ring_min < 21.0);
    free(in);
    trn_field_dispose(&bed_run);
    trn_field_dispose(&surf_run);
    trn_field_dispose(&fill_run);
}

/* On a coarser evolution grid (coarsen 2 with fine steps) the levels run on the field held at
 * the sea level and the beds come back once at the end, filled to the depth and ramped up to the
 * shore at about 15 degrees: no pits or bumps from the splines ringing across a drop at the
 * shore, and no step from the land's foot down to a deep bed (a serrated line along the shore). */
static void test_sea_surface_coarsened(void)
{
    const uint32_t c = 64;
    const size_t n = (size_t)(c + 1u) * (c + 1u), nx = c + 1u;
    trn_field f;
    make_hollow(&f, c);
    float *in = malloc(n * sizeof *in);
    memcpy(in, f.heights, n * sizeof *in);
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.sp = quiet_params();
    o.sp.uplift = 1e-3;
    o.sp.erodibility = 5e-3;
    o.sp.diffusion = 0.5;
    o.sp.dt = 200.0;
    o.sp.steps = 30;
    o.sp.sea_level = 20.0;
    o.sp.sea_surface = true;
    o.sp.sea_surface_depth = 5.0;
    o.coarsen = 2;
    o.fine_steps = 2;
    trn_error e;
    CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
    size_t floor_n = 0, deep = 0, wet = 0, shore = 0;
    const double diag = 10.0 * sqrt(2.0); /* the cells are 10 m */
    for (size_t k = 0; k < n; k++) {
        const float h = f.heights[k];
        CHECK(h >= 15.0f); /* never under the filled floor */
        if (in[k] < 15.0f) {
            deep++;
            floor_n += h == 15.0f; /* the deep bed is one flat floor away from the shore */
        }
        if (h >= 20.0f) continue;
        wet++;
        CHECK(h >= in[k]); /* under the water: the bed, filled or ramped up, never cut */
        /* Beside dry land: at most one ramp step under the surface. */
        const size_t i = k % nx, j = k / nx;
        bool by_land = false;
        for (int dj = -1; dj <= 1; dj++)
            for (int di = -1; di <= 1; di++)
                if (i + di < nx && j + dj < nx && f.heights[(j + dj) * nx + (i + di)] >= 20.0f)
                    by_land = true;
        if (!by_land) continue;
        shore++;
        CHECK(h >= 20.0 - 0.27 * diag - 1e-4);
    }
    CHECK(deep > 50 && floor_n > deep / 4);
    CHECK(wet > 100 && shore > 20);
    free(in);
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

/* The critical slope varying with the rock (critical_rock): each sample's tan(critical_slope)
 * times its erodibility factor to the power, so two equal bumps on strong and weak rock keep
 * different heights; at 0 the mask leaves the threshold alone. */
static void test_critical_rock(void)
{
    trn_field f;
    trn_error e;
    CHECK_OK(trn_field_init(&f, 8, 4, 8.0, 4.0, &e)); /* 9 x 5 samples, 1 unit apart */
    float mask[45];
    for (int k = 0; k < 45; k++)
        mask[k] = 1.0f;
    mask[2 * 9 + 2] = 0.5f; /* strong rock: gradient tan(45) x 2 at -1 */
    mask[2 * 9 + 6] = 2.0f; /* weak rock: tan(45) / 2 */
    trn_stream_power_params p = quiet_params();
    p.erodibility = 1e-300;
    p.erodibility_mask = mask;
    p.uplift = 0.0;
    p.critical_slope = 45.0;
    p.steps = 1;
    const double want[3][2] = {{2.0, 0.5}, {1.0, 1.0}, {0.25, 4.0}};
    const double power[3] = {-1.0, 0.0, 2.0};
    for (int pass = 0; pass < 3; pass++) {
        memset(f.heights, 0, 45 * sizeof(float));
        f.heights[2 * 9 + 2] = f.heights[2 * 9 + 6] = 6.0f;
        p.critical_rock = power[pass];
        CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
        /* Each bump's receiver is an orthogonal neighbour at 0, 1 unit away. */
        CHECK(fabs(f.heights[2 * 9 + 2] - want[pass][0]) < 1e-6);
        CHECK(fabs(f.heights[2 * 9 + 6] - want[pass][1]) < 1e-6);
    }
    /* Without a critical slope the rock's power does nothing. */
    memset(f.heights, 0, 45 * sizeof(float));
    f.heights[2 * 9 + 2] = f.heights[2 * 9 + 6] = 6.0f;
    p.critical_slope = 0.0;
    p.critical_rock = -1.0;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    CHECK(fabs(f.heights[2 * 9 + 2] - 6.0) < 1e-6 && fabs(f.heights[2 * 9 + 6] - 6.0) < 1e-6);
    /* Outside -4..4: refused by name. */
    p.critical_slope = 45.0;
    p.critical_rock = -4.5;
    CHECK_STATUS(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "critical_rock: expected -4..4") != NULL);
    p.critical_rock = -4.0;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
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
    /* Deposition (two passes over the stack, piece by piece) and outlet borders: 1, 2 and 5
     * threads, one pinned hash; deposition 0 is the pinned plain scheme above. */
    /* The drainage area written out (from the padded grid, by rows on the threads) too. */
    uint64_t first = 0, first_area = 0;
    for (int t = 1; t <= 5; t += t == 1 ? 1 : 3) {
        make_hills(&a, 96);
        trn_stream_power_params_default(&p);
        p.dt = 5000.0;
        p.steps = 40;
        p.threads = t;
        p.deposition = 1.0;
        p.border_outlets = true;
        trn_field area = a;
        area.heights = calloc(trn_field_sample_count(&a), sizeof *area.heights);
        CHECK(area.heights != NULL);
        if (!area.heights) return;
        p.drainage_area = area.heights;
        CHECK_OK(trn_stream_power_run(&a, &p, &ra, NULL, NULL, &e));
        if (t == 1) first = hash_field(&a);
        if (t == 1) first_area = hash_field(&area);
        CHECK(hash_field(&a) == first);
        CHECK(hash_field(&area) == first_area);
        /* Each sample drains at least itself, and the rivers much more. */
        float most = 0;
        size_t below_one = 0;
        for (size_t k = 0; k < trn_field_sample_count(&a); k++) {
            below_one += area.heights[k] < 900.0f;
            if (area.heights[k] > most) most = area.heights[k];
        }
        CHECK_EQ_INT(below_one, 0);
        CHECK(most > 100 * 900.0f);
        free(area.heights);
        trn_field_dispose(&a);
    }
    if (first != 0x2caa57c686c4e532ull)
        fprintf(stderr, "deposition hash %016llx\n", (unsigned long long)first);
    if (first_area != 0xc147e4f1dac9f5c6ull)
        fprintf(stderr, "deposition area hash %016llx\n", (unsigned long long)first_area);
    CHECK(first_area == 0xc147e4f1dac9f5c6ull);
    CHECK(first == 0x2caa57c686c4e532ull);
}

/* A grid above the size where the passes' threads were a parallel region per pass (2^17
 * samples; they are a crew held through the run now, as on small grids): 1, 2 and 3 threads
 * give the same bytes, plain and with deposition and outlet borders (the stack's pieces,
 * the routing's workers and the rows split as the threads come). */
static void test_determinism_large(void)
{
    const uint32_t cells = 363; /* 364^2 = 132,496 samples */
    CHECK((size_t)(cells + 1u) * (cells + 1u) >= (size_t)1 << 17);
    for (int dep = 0; dep < 2; dep++) {
        uint64_t first = 0;
        for (int t = 1; t <= 3; t++) {
            trn_field a;
            trn_stream_power_params p;
            trn_stream_power_report r;
            trn_error e;
            make_hills(&a, cells);
            trn_stream_power_params_default(&p);
            p.dt = 5000.0;
            p.steps = 4;
            p.threads = t;
            p.deposition = dep ? 1.0 : 0.0;
            p.border_outlets = dep != 0;
            CHECK_OK(trn_stream_power_run(&a, &p, &r, NULL, NULL, &e));
            CHECK(r.pits_routed > 0);
            if (t == 1) first = hash_field(&a);
            CHECK(hash_field(&a) == first);
            trn_field_dispose(&a);
        }
    }
}

#ifdef _OPENMP
/* Scripted free-core readings: the calls seen by kind, and from which late check on cores
 * are free (0: never). */
static struct {
    int start, late, crew, free_from;
    long long wait_step; /* each thread's run delay grows by this at each read (-1: unreadable) */
    long long waited[64];
    long tids[64];
} late_log;

static long long late_waits(long tid)
{
    if (late_log.wait_step < 0) return -1;
    for (int k = 0; k < 64; k++)
        if (late_log.tids[k] == tid || !late_log.tids[k]) {
            late_log.tids[k] = tid;
            return late_log.waited[k] += late_log.wait_step;
        }
    return 0;
}

static long late_reader(long want, long window_ns, unsigned flags)
{
    (void)want;
    if (flags == TRN_IDLE_OWN_ASLEEP) {
        CHECK(window_ns == TRN_IDLE_WINDOW_NS); /* a run's start reads over 100 us, no longer */
        late_log.start++;
        return 0;
    }
    if (flags == (TRN_IDLE_OWN_ASLEEP | TRN_IDLE_CONFIRM_FREE)) {
        late_log.late++;
        return late_log.free_from && late_log.late >= late_log.free_from ? 1 : 0;
    }
    late_log.crew++;
    return -1; /* a task waiting for a core */
}

/* Asks once, at 30%: a run that went on after it would not be asked again. */
static int cancel_at_third(double done, const char *stage, void *user)
{
    int *asked = user;
    (void)stage;
    if (done < 0.3 || *asked) return 0;
    *asked = 1;
    return TRN_CANCEL;
}

/* A small run whose start finds no core free steps alone and checks after 2, 4 and 8 steps,
 * then every 8; where a check finds a core, a crew runs the rest: the same bytes as one thread,
 * its checks from then on the crew's own. A cancel in the steps alone leaves the field as it
 * was. */
static void test_late_crew(void)
{
    trn_field ref, f;
    trn_stream_power_params p;
    trn_stream_power_report rr, r;
    trn_error e;
    make_hills(&ref, 96);
    trn_stream_power_params_default(&p);
    p.dt = 5000.0;
    p.steps = 40;
    p.threads = 1;
    CHECK_OK(trn_stream_power_run(&ref, &p, &rr, NULL, NULL, &e));
    const int saved = omp_get_max_threads();
    omp_set_num_threads(2);
    trn_sp_idle_reader_set(late_reader);
    trn_sp_wait_reader_set(late_waits);
    p.threads = 0;
    /* Free from the second check (step 4): the crew runs the rest. Its threads never wait
     * for a core, so a reading of a task waiting (a kernel worker's moment) does not send it
     * back to one thread. */
    memset(&late_log, 0, sizeof late_log);
    late_log.free_from = 2;
    make_hills(&f, 96);
    CHECK_OK(trn_stream_power_run(&f, &p, &r, NULL, NULL, &e));
    CHECK(hash_field(&f) == hash_field(&ref));
    CHECK(r.steps == 40 && r.pits_routed == rr.pits_routed);
    CHECK(r.last_max_change == rr.last_max_change);
    CHECK_EQ_INT(late_log.start, 1);
    CHECK_EQ_INT(late_log.late, 2);
    CHECK_EQ_INT(late_log.crew, 0);
    trn_field_dispose(&f);
    /* Its threads waiting a second for a core between checks: alone after the first window
     * (step 16: its waits first read at 8); at step 24 back, at 32 its waits read afresh, not
     * judged; alone at 40. */
    memset(&late_log, 0, sizeof late_log);
    late_log.free_from = 2;
    late_log.wait_step = 1000000000LL;
    make_hills(&f, 96);
    p.steps = 48;
    CHECK_OK(trn_stream_power_run(&f, &p, &r, NULL, NULL, &e));
    CHECK_EQ_INT(late_log.late, 3);
    CHECK_EQ_INT(late_log.crew, 0);
    trn_field_dispose(&f);
    /* Waits that cannot be read: the crew goes by the readings, alone at step 8 (a task
     * waiting), back at 16, alone at 24, back at 32. */
    memset(&late_log, 0, sizeof late_log);
    late_log.free_from = 2;
    late_log.wait_step = -1;
    make_hills(&f, 96);
    p.steps = 40;
    CHECK_OK(trn_stream_power_run(&f, &p, &r, NULL, NULL, &e));
    CHECK(hash_field(&f) == hash_field(&ref));
    CHECK_EQ_INT(late_log.late, 4);
    CHECK_EQ_INT(late_log.crew, 2);
    trn_field_dispose(&f);
    /* Never free: a check at steps 2, 4, 8, 16, 24 and 32, and no crew. */
    memset(&late_log, 0, sizeof late_log);
    make_hills(&f, 96);
    CHECK_OK(trn_stream_power_run(&f, &p, &r, NULL, NULL, &e));
    CHECK(hash_field(&f) == hash_field(&ref));
    CHECK(r.steps == 40);
    CHECK_EQ_INT(late_log.late, 6);
    CHECK_EQ_INT(late_log.crew, 0);
    /* Cancelled at step 12, alone: nothing written back. */
    trn_field_dispose(&f);
    make_hills(&f, 96);
    const uint64_t before = hash_field(&f);
    int asked = 0;
    CHECK(trn_stream_power_run(&f, &p, &r, cancel_at_third, &asked, &e) == TRN_ERR_CANCELLED);
    CHECK(hash_field(&f) == before);
    CHECK(r.steps == 12);
    /* MFD (its routing serial between the passes) reads no cores and takes no crew. */
    memset(&late_log, 0, sizeof late_log);
    late_log.free_from = 1;
    trn_field_dispose(&f);
    make_hills(&f, 96);
    p.routing = TRN_ROUTING_MFD;
    p.steps = 20;
    CHECK_OK(trn_stream_power_run(&f, &p, &r, NULL, NULL, &e));
    CHECK_EQ_INT(late_log.start + late_log.late + late_log.crew, 0);
    trn_sp_idle_reader_set(NULL);
    trn_sp_wait_reader_set(NULL);
    omp_set_num_threads(saved);
    trn_field_dispose(&f);
    trn_field_dispose(&ref);
}
#endif

/* Deposition at steady state under uniform uplift: the sediment flux is U A, so the term
 * G Qs / A lays down G U and the channel must cut (1 + G) U: every drop is (1 + G) times the
 * plain law's, exactly (the discrete scheme is exact at steady state too). */
static void test_deposition_steady_state(void)
{
    const uint32_t rows = 12;
    const double gs[2] = {0.5, 2.0};
    for (int k = 0; k < 2; k++) {
        trn_field f;
        make_channel(&f, rows);
        trn_stream_power_params p = quiet_params();
        p.uplift = 1e-3;
        p.erodibility = 1e-3;
        p.m = 0.5;
        p.dt = 500.0;
        p.steps = 4000;
        p.deposition = gs[k];
        trn_stream_power_report rep;
        trn_error e;
        CHECK_OK(trn_stream_power_run(&f, &p, &rep, NULL, NULL, &e));
        CHECK(fabs(rep.last_mean_change) < 1e-9);
        const double cell_area = 10.0 * 10.0;
        for (uint32_t j = 1; j < rows; j++) {
            const double area = (double)(rows - j) * cell_area;
            const double want = (1.0 + gs[k]) * 10.0 * p.uplift / (p.erodibility * sqrt(area));
            const double got =
                (double)f.heights[j * 3u + 1] - (double)f.heights[(j - 1) * 3u + 1];
            if (fabs(got - want) > 1e-4 * want) {
                fprintf(stderr, "G %g row %u: drop %.9g, expected %.9g\n", gs[k], j, got, want);
                CHECK(false);
            }
        }
        trn_field_dispose(&f);
    }
}

/* A mountain block beside a plain: the block rises (uplift mask 1), the plain does not (0) and
 * drains to the far border. Without deposition the plain only erodes; with it the sediment
 * from the block builds a fan: the plain at the mountain front stands above where it started
 * and above the plain further out, and above the run without deposition. */
static void test_deposition_fan(void)
{
    const uint32_t cx = 60, cz = 60, nx = cx + 1u, front = 30;
    const size_t n = (size_t)nx * (cz + 1u);
    float *mask = malloc(n * sizeof *mask), *init = malloc(n * sizeof *init);
    CHECK(mask && init);
    for (uint32_t j = 0; j <= cz; j++)
        for (uint32_t i = 0; i <= cx; i++) {
            const size_t k = (size_t)j * nx + i;
            const bool mountain = j > front;
            mask[k] = mountain ? 1.0f : 0.0f;
            /* The plain tilts gently south (to row 0); the block starts 100 m up. */
            init[k] = (float)(mountain ? 100.0 + 3.0 * sin(i * 0.7) * cos(j * 0.5)
                                       : 0.05 * j + 0.02 * sin(i * 1.3));
        }
    double front_mean[2], far_mean[2];
    for (int g = 0; g < 2; g++) {
        trn_field f;
        trn_error e;
        CHECK_OK(trn_field_init(&f, cx, cz, 10.0 * cx, 10.0 * cz, &e));
        memcpy(f.heights, init, n * sizeof *init);
        trn_stream_power_params p;
        trn_stream_power_params_default(&p);
        p.uplift = 2e-3;
        p.erodibility = 2e-4;
        p.diffusion = 0.0;
        p.dt = 1000.0;
        p.steps = 60;
        p.threads = 1;
        p.uplift_mask = mask;
        p.deposition = g ? 1.0 : 0.0;
        CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
        double fs = 0, fi = 0, xs = 0, xi = 0;
        for (uint32_t i = 2; i + 2 <= cx; i++) {
            for (uint32_t j = front - 4; j <= front; j++) {
                fs += f.heights[(size_t)j * nx + i];
                fi += init[(size_t)j * nx + i];
            }
            for (uint32_t j = 3; j <= 7; j++) {
                xs += f.heights[(size_t)j * nx + i];
                xi += init[(size_t)j * nx + i];
            }
        }
        /* Change from the start at the front and further out, per sample. */
        const double per = 5.0 * (cx - 3);
        front_mean[g] = (fs - fi) / per;
        far_mean[g] = (xs - xi) / per;
        trn_field_dispose(&f);
    }
    if (!(front_mean[1] > 0.5 && front_mean[1] > far_mean[1] + 0.25 &&
          front_mean[1] > front_mean[0] + 0.5))
        fprintf(stderr, "fan: front %+.3f m (G 0: %+.3f m), further out %+.3f m\n",
                front_mean[1], front_mean[0], far_mean[1]);
    CHECK(front_mean[1] > 0.5);
    CHECK(front_mean[1] > far_mean[1] + 0.25);
    CHECK(front_mean[1] > front_mean[0] + 0.5);
    CHECK(front_mean[0] <= 1e-9); /* without deposition the plain never rises */
    free(mask);
    free(init);
}

/* The mean heights of the samples lying [a, b) and [b, c) samples from the nearest edge. */
static void edge_bands(const trn_field *f, uint32_t a, uint32_t b, uint32_t c, double *outer,
                       double *next)
{
    const uint32_t nx = f->cells_x + 1u, nz = f->cells_z + 1u;
    double s[2] = {0, 0};
    size_t n[2] = {0, 0};
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            uint32_t d = i < j ? i : j;
            if (nx - 1u - i < d) d = nx - 1u - i;
            if (nz - 1u - j < d) d = nz - 1u - j;
            if (d < a || d >= c) continue;
            s[d >= b] += f->heights[(size_t)j * nx + i];
            n[d >= b]++;
        }
    *outer = s[0] / (double)n[0];
    *next = s[1] / (double)n[1];
}

/* Outlet borders. With every border sample base level the evolved land ramps down to the
 * edge: the outer 4 samples stand far below the next 16 (a gutter along every edge) and the
 * outer 20 below the next 20. With base level only at the edges' low points, the rest of the
 * border rises with the land: the gutter shrinks to under 2/3 and the ramp to under 7/8 of
 * the plain border's (the rivers still leave at the outlets, so the land near them is low).
 * A border sample that is no outlet rises; the same bits on any thread count. */
/* Broad hills (a few per side) with finer ripples, 30 m cells. */
static void make_broad_hills(trn_field *f, uint32_t cells)
{
    trn_error e;
    CHECK_OK(trn_field_init(f, cells, cells, 30.0 * cells, 30.0 * cells, &e));
    const size_t nx = cells + 1u;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f->heights[j * nx + i] =
                (float)(20.0 + 15.0 * sin(i * 0.05 + 0.3) * cos(j * 0.04 + 0.5) +
                        4.0 * sin((i + 2 * j) * 0.31) + 3.0 * sin(i * 0.21 - j * 0.13));
}

/* Holds the first stream-power run (a cascade's innermost, on one thread) for 50 ms at its
 * first step, so the other threads surely make the enclosing levels' details while it runs. */
static int hold_first_run(double done, const char *stage, void *user)
{
    int *calls = user;
    if (strcmp(stage, "stream power") == 0 && done == 0.0 && (*calls)++ == 0) {
        const struct timespec wait = {0, 50000000L};
        nanosleep(&wait, NULL);
    }
    return 0;
}

/* A cascade (129^2 from 65^2 from 33^2) with the library's own thread use: the 33^2 run's crew
 * makes the two finer levels' details and factors ahead while it waits; the bytes are those of
 * one thread, whatever the count, with the masks (uplift, erodibility) on as in the presets.
 * The work ahead is also cut short (trn_evolve_ahead_limit): on two threads the helper alone
 * makes it while the run is held, the factors first (the 65^2 level's in 1 + 65 pieces, the
 * 129^2 level's in 2 + 129 x 2), then the details (65, then 129 x 2), so 30 pieces end inside
 * the first level's factors, 75 half-way through a row of the second's, and 412 half-way
 * through a row of the second level's details: those rows are made by the levels. Without the
 * masks (no factors made ahead) the details' pieces keep the warped positions themselves (65,
 * then 129 x 2 pieces: 30 end inside the first level, 100 half-way through a row of the second);
 * with them the factors' pieces keep them. */
static void test_evolve_details_ahead(void)
{
    const uint32_t cells = 128, c = 4;
    const size_t cn = (size_t)(cells / c + 1u) * (cells / c + 1u);
    float *um = malloc(cn * sizeof *um), *km = malloc(cn * sizeof *km);
    CHECK(um && km);
    if (!um || !km) return;
    for (size_t k = 0; k < cn; k++) {
        um[k] = (float)(0.5 + 0.5 * sin(0.3 * (double)k));
        km[k] = (float)(1.0 + 0.5 * cos(0.17 * (double)k));
    }
    enum { RUNS = 9, BARE = 7 };
    uint64_t h[RUNS], hb[BARE];
    const int threads[RUNS] = {1, 2, 3, 2, 3, 2, 3, 2, 3};
    const size_t limit[RUNS] = {0, 0, 0, 30, 30, 75, 75, 412, 412};
    const size_t bare_limit[BARE] = {0, 0, 0, 30, 30, 100, 100};
    for (int t = 0; t < RUNS + BARE; t++) {
        const bool masks = t < RUNS;
        const int b = t - RUNS, nth = threads[masks ? t : b];
#ifdef _OPENMP
        const int saved = omp_get_max_threads();
        omp_set_num_threads(nth);
#endif
        trn_evolve_ahead_limit = masks ? limit[t] : bare_limit[b];
        trn_field f;
        make_broad_hills(&f, cells);
        trn_evolve_options o;
        trn_evolve_options_default(&o);
        o.sp.threads = 0;
        o.sp.uplift_mask = masks ? um : NULL;
        o.sp.erodibility_mask = masks ? km : NULL;
        o.sp.diffusion = 0.05;
        o.sp.dt = 2000.0;
        o.sp.steps = 10;
        o.coarsen = c;
        o.cascade_steps = 2;
        o.fine_steps = 2;
        int calls = 0;
        trn_error e;
        CHECK_OK(trn_landscape_evolve(&f, &o, NULL, hold_first_run, &calls, &e));
        if (masks)
            h[t] = hash_field(&f);
        else
            hb[b] = hash_field(&f);
        trn_field_dispose(&f);
        trn_evolve_ahead_limit = 0;
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
    }
    if (h[0] != 0x2ab301cf8ee95ed4ull)
        fprintf(stderr, "details ahead hash %016llx\n", (unsigned long long)h[0]);
    for (int t = 1; t < RUNS; t++) {
        if (h[t] != h[0])
            fprintf(stderr, "details ahead: %d threads, %zu pieces: %016llx\n", threads[t],
                    limit[t], (unsigned long long)h[t]);
        CHECK(h[t] == h[0]);
    }
    CHECK(h[0] == 0x2ab301cf8ee95ed4ull);
    if (hb[0] != 0x738d229e6d219788ull)
        fprintf(stderr, "details ahead, no masks: hash %016llx\n", (unsigned long long)hb[0]);
    for (int b = 1; b < BARE; b++) {
        if (hb[b] != hb[0])
            fprintf(stderr, "details ahead, no masks: %d threads, %zu pieces: %016llx\n",
                    threads[b], bare_limit[b], (unsigned long long)hb[b]);
        CHECK(hb[b] == hb[0]);
    }
    CHECK(hb[0] == 0x738d229e6d219788ull);
    CHECK(hb[0] != h[0]);
    free(um);
    free(km);
}

/* Deposition is refused where the exact solve does not hold: MFD, n other than 1, G < 0. */
static void test_deposition_errors(void)
{
    trn_field f;
    make_hills(&f, 16);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.deposition = 1.0;
    p.routing = TRN_ROUTING_MFD;
    trn_error e;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "deposition needs n = 1") != NULL);
    p.routing = TRN_ROUTING_RHO8;
    p.n = 1.5;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    p.n = 1.0;
    p.deposition = -0.5;
    CHECK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "deposition") != NULL);
    p.deposition = 0.5;
    p.steps = 2;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    trn_field_dispose(&f);
}

static void test_border_outlets(void)
{
    const uint32_t cells = 128;
    double gutter[2], ramp[2];
    uint64_t hashes[2] = {0, 0};
    for (int o = 0; o < 2; o++) {
        trn_field f;
        make_broad_hills(&f, cells);
        trn_stream_power_params p;
        trn_stream_power_params_default(&p);
        p.erodibility = 5e-5;
        p.diffusion = 0.05;
        p.dt = 20000.0;
        p.steps = 60;
        p.threads = 1;
        p.border_outlets = o == 1;
        trn_error e;
        CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
        double b4, b4_20, b20, b20_40;
        edge_bands(&f, 0, 4, 20, &b4, &b4_20);
        edge_bands(&f, 0, 20, 40, &b20, &b20_40);
        float lo = f.heights[0], hi = f.heights[0];
        for (size_t k = 0; k < trn_field_sample_count(&f); k++) {
            if (f.heights[k] < lo) lo = f.heights[k];
            if (f.heights[k] > hi) hi = f.heights[k];
        }
        gutter[o] = (b4_20 - b4) / (hi - lo);
        ramp[o] = (b20_40 - b20) / (hi - lo);
        hashes[o] = hash_field(&f);
        if (o == 1) {
            for (int t = 2; t <= 5; t += 3) {
                trn_field g;
                make_broad_hills(&g, cells);
                p.threads = t;
                CHECK_OK(trn_stream_power_run(&g, &p, NULL, NULL, NULL, &e));
                CHECK(hash_field(&g) == hashes[1]);
                trn_field_dispose(&g);
            }
            /* Along the south edge the border is land: most of it ends above where it started
             * (a base-level border only ever comes down). */
            trn_field g;
            make_broad_hills(&g, cells);
            uint32_t rose = 0;
            for (uint32_t i = 0; i <= cells; i++)
                rose += f.heights[i] > g.heights[i] + 1.0f;
            if (rose <= (cells + 1u) / 2) fprintf(stderr, "border rose: %u\n", rose);
            CHECK(rose > (cells + 1u) / 2);
            trn_field_dispose(&g);
        }
        trn_field_dispose(&f);
    }
    if (!(gutter[1] < gutter[0] * 2.0 / 3.0 && ramp[1] < ramp[0] * 7.0 / 8.0 && gutter[0] > 0.1))
        fprintf(stderr, "edge: gutter %.3f -> %.3f, ramp %.3f -> %.3f of the relief\n",
                gutter[0], gutter[1], ramp[0], ramp[1]);
    CHECK(gutter[0] > 0.1);
    CHECK(gutter[1] < gutter[0] * 2.0 / 3.0);
    CHECK(ramp[1] < ramp[0] * 7.0 / 8.0);
    CHECK(hashes[0] != hashes[1]);
}

/* Evolved hills drain: after enough steps every interior sample has a strictly lower
 * neighbour or lies in a routed lake, and relief is bounded by uplift. */
static void test_network_forms(void)
{
    trn_field f;
    make_broad_hills(&f, 64);
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

/* Rock of varied strength: the erodibility mask multiplies K per sample. At steady state each
 * channel step drops U d / (mask K A^m) exactly (n = 1), so rows of strong rock (mask 0.5)
 * drop twice and rows of weak rock (mask 2) half what uniform rock drops; a mask of ones is
 * no mask, bit for bit, with outlet borders (the padded copy), deposition and MFD; a mask
 * that is not positive is refused by name. */
static void test_erodibility_mask(void)
{
    const uint32_t rows = 12;
    trn_field f;
    make_channel(&f, rows);
    float mask[3 * 13];
    for (uint32_t k = 0; k < 3 * 13; k++)
        mask[k] = (k / 3u) % 2u ? 0.5f : 2.0f;
    trn_stream_power_params p = quiet_params();
    p.uplift = 1e-3;
    p.erodibility = 1e-3;
    p.m = 0.5;
    p.dt = 500.0;
    p.steps = 3000;
    p.erodibility_mask = mask;
    trn_error e;
    CHECK_OK(trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e));
    const double dz = 10.0, cell_area = 10.0 * 10.0;
    for (uint32_t j = 1; j < rows; j++) {
        const double area = (double)(rows - j) * cell_area;
        const double want = dz * p.uplift / (mask[j * 3u + 1] * p.erodibility * pow(area, p.m));
        const double got = (double)f.heights[j * 3u + 1] - (double)f.heights[(j - 1) * 3u + 1];
        if (fabs(got - want) > 1e-4 * want) {
            fprintf(stderr, "row %u: drop %.9g, expected %.9g\n", j, got, want);
            CHECK(false);
        }
    }
    trn_field_dispose(&f);

    const uint32_t cells = 48;
    const size_t n = (size_t)(cells + 1u) * (cells + 1u);
    float *ones = malloc(n * sizeof *ones), *weak = malloc(n * sizeof *weak);
    CHECK(ones && weak);
    for (size_t k = 0; ones && weak && k < n; k++) {
        ones[k] = 1.0f;
        weak[k] = k % 7u ? 1.0f : 3.0f;
    }
    for (int variant = 0; variant < 3 && ones && weak; variant++) {
        trn_stream_power_params q;
        trn_stream_power_params_default(&q);
        q.erodibility = 5e-5;
        q.diffusion = 0.05;
        q.dt = 20000.0;
        q.steps = 8;
        q.threads = 1;
        q.border_outlets = variant == 0;
        q.deposition = variant == 1 ? 1.0 : 0.0;
        q.routing = variant == 2 ? TRN_ROUTING_MFD : TRN_ROUTING_RHO8;
        uint64_t h[3];
        for (int m = 0; m < 3; m++) {
            trn_field g;
            make_broad_hills(&g, cells);
            q.erodibility_mask = m == 0 ? NULL : m == 1 ? ones : weak;
            CHECK_OK(trn_stream_power_run(&g, &q, NULL, NULL, NULL, &e));
            h[m] = hash_field(&g);
            trn_field_dispose(&g);
        }
        CHECK(h[0] == h[1]);
        CHECK(h[0] != h[2]);
    }
    trn_field g;
    make_broad_hills(&g, cells);
    trn_stream_power_params q = quiet_params();
    if (weak) weak[3 * (cells + 1u) + 2] = 0.0f;
    q.erodibility_mask = weak;
    CHECK(trn_stream_power_run(&g, &q, NULL, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "erodibility_mask at sample (2, 3)");
    trn_field_dispose(&g);
    free(ones);
    free(weak);
}

/* The fine steps of a coarsened run take the erodibility mask from the coarse grid,
 * interpolated: a mask of 2 everywhere gives (to rounding) what twice the erodibility gives,
 * and clearly not what uniform rock gives. */
static void test_evolve_erodibility_mask(void)
{
    const uint32_t cells = 64, c = 4;
    const size_t cn = (size_t)(cells / c + 1u) * (cells / c + 1u);
    float *two = malloc(cn * sizeof *two);
    CHECK(two != NULL);
    if (!two) return;
    for (size_t k = 0; k < cn; k++)
        two[k] = 2.0f;
    trn_field f[3];
    for (int v = 0; v < 3; v++) {
        make_broad_hills(&f[v], cells);
        trn_evolve_options o;
        trn_evolve_options_default(&o);
        o.sp.erodibility = v == 1 ? 1e-4 : 5e-5;
        o.sp.erodibility_mask = v == 0 ? two : NULL;
        o.sp.diffusion = 0.05;
        o.sp.dt = 20000.0;
        o.sp.steps = 10;
        o.coarsen = c;
        o.fine_steps = 2;
        trn_error e;
        CHECK_OK(trn_landscape_evolve(&f[v], &o, NULL, NULL, NULL, &e));
    }
    double same = 0, differ = 0;
    for (size_t k = 0; k < trn_field_sample_count(&f[0]); k++) {
        same = fmax(same, fabs((double)f[0].heights[k] - f[1].heights[k]));
        differ = fmax(differ, fabs((double)f[0].heights[k] - f[2].heights[k]));
    }
    if (!(same < 1e-3 && differ > 1.0))
        fprintf(stderr, "mask 2 vs K x 2: %g, vs K: %g\n", same, differ);
    CHECK(same < 1e-3);
    CHECK(differ > 1.0);
    for (int v = 0; v < 3; v++)
        trn_field_dispose(&f[v]);
    free(two);
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

/* rock_variation: the node's erodibility mask is 2^(v (2 fbm - 1)) of 4 octaves of fbm at the
 * evolution grid's world positions (sub-seed "stream_power_rock"), bit for bit. */
static void test_graph_node_rock(void)
{
    const char *text =
        "{\"size\": [960, 960], \"resolution\": [32, 32], \"seed\": 5, \"sea_level\": -50,"
        " \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": 0,"
        " \"height_variation\": 60, \"feature_size\": 300}}, \"default_biome\": \"g\","
        " \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"graph\": {\"format_version\": 1,"
        " \"output\": \"out\", \"nodes\": [{\"id\": \"lf\", \"type\": \"landform\"},"
        " {\"id\": \"sp\", \"type\": \"stream_power\", \"inputs\": {\"field\": {\"node\": "
        "\"lf\"}}, \"params\": {\"steps\": 12, \"dt\": 10000, \"erodibility\": 1e-4,"
        " \"rock_variation\": 1.5, \"rock_feature_size\": 400}},"
        " {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\":"
        " \"sp\", \"pin\": \"field\"}}}]}}";
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "rock.json", &r, NULL, &e));
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
    trn_recipe plain;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "rock.json", &plain, NULL, &e));
    free(plain.graph_json);
    plain.graph_json = NULL;
    trn_generated base;
    CHECK_OK(trn_recipe_generate(&plain, NULL, &base, NULL, NULL, &e));
    float rock[33 * 33];
    const uint64_t seed = trn_subseed(r.seed, "stream_power_rock");
    float lo = 10, hi = 0;
    for (uint32_t j = 0; j < 33; j++) {
        trn_fractal_row(seed, TRN_PROFILE_FBM, 4, 400.0, 0.5, 0.0, 30.0, j * 30.0, 33,
                        rock + j * 33u);
        for (uint32_t i = 0; i < 33; i++) {
            float *v = &rock[j * 33u + i];
            *v = (float)exp2(1.5 * (2.0 * (double)*v - 1.0));
            lo = fminf(lo, *v);
            hi = fmaxf(hi, *v);
        }
    }
    CHECK(lo < 0.6f && hi > 1.7f); /* the rock varies: weak and strong zones */
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.sp.steps = 12;
    o.sp.dt = 10000;
    o.sp.erodibility = 1e-4;
    o.sp.diffusion = 0.05;
    o.sp.m = 0.45;
    o.sp.sea_level = -50;
    o.sp.erodibility_mask = rock;
    o.sp.seed = trn_subseed(r.seed, "stream_power");
    trn_field f = base.field;
    CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, &e));
    base.field = f;
    const size_t n = trn_field_sample_count(&g.field);
    CHECK(memcmp(g.field.heights, base.field.heights, n * sizeof(float)) == 0);
    /* Uniform rock differs. */
    o.sp.erodibility_mask = NULL;
    trn_generated uni;
    CHECK_OK(trn_recipe_generate(&plain, NULL, &uni, NULL, NULL, &e));
    CHECK_OK(trn_landscape_evolve(&uni.field, &o, NULL, NULL, NULL, &e));
    CHECK(memcmp(g.field.heights, uni.field.heights, n * sizeof(float)) != 0);
    trn_generated_dispose(&uni);
    /* rock_creep is the evolution's diffusion_rock. */
    char creep[2048];
    const char *at = strstr(text, "\"rock_feature_size\": 400");
    CHECK(at != NULL);
    snprintf(creep, sizeof creep, "%.*s\"rock_creep\": -1, %s", (int)(at - text), text, at);
    trn_recipe rc;
    CHECK_OK(trn_recipe_parse(creep, strlen(creep), "rock.json", &rc, NULL, &e));
    trn_generated gc, bc;
    CHECK_OK(trn_recipe_generate(&rc, NULL, &gc, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&plain, NULL, &bc, NULL, NULL, &e));
    o.sp.erodibility_mask = rock;
    o.sp.diffusion_rock = -1;
    CHECK_OK(trn_landscape_evolve(&bc.field, &o, NULL, NULL, NULL, &e));
    CHECK(memcmp(gc.field.heights, bc.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(gc.field.heights, g.field.heights, n * sizeof(float)) != 0);
    trn_generated_dispose(&gc);
    trn_generated_dispose(&bc);
    trn_recipe_dispose(&rc);
    /* rock_critical is the evolution's critical_rock (with a critical slope). */
    snprintf(creep, sizeof creep, "%.*s\"critical_slope\": 20, \"rock_critical\": -1, %s",
             (int)(at - text), text, at);
    CHECK_OK(trn_recipe_parse(creep, strlen(creep), "rock.json", &rc, NULL, &e));
    CHECK_OK(trn_recipe_generate(&rc, NULL, &gc, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&plain, NULL, &bc, NULL, NULL, &e));
    o.sp.diffusion_rock = 0;
    o.sp.critical_slope = 20;
    trn_generated flat; /* the same critical slope on every rock */
    CHECK_OK(trn_recipe_generate(&plain, NULL, &flat, NULL, NULL, &e));
    CHECK_OK(trn_landscape_evolve(&flat.field, &o, NULL, NULL, NULL, &e));
    o.sp.critical_rock = -1;
    CHECK_OK(trn_landscape_evolve(&bc.field, &o, NULL, NULL, NULL, &e));
    CHECK(memcmp(gc.field.heights, bc.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(gc.field.heights, flat.field.heights, n * sizeof(float)) != 0);
    trn_generated_dispose(&flat);
    trn_generated_dispose(&gc);
    trn_generated_dispose(&bc);
    trn_recipe_dispose(&rc);
    trn_generated_dispose(&g);
    trn_generated_dispose(&base);
    trn_recipe_dispose(&r);
    trn_recipe_dispose(&plain);
}

/* Deposition's link and height rules (shared by the whole-grid and tiled solves, which agree
 * whatever order they use) pinned to the double: inputs where regrouping a sum, (z0 + pv) + x
 * against z0 + (pv + x), 1 + F + y against 1 + (F + y), z0 (1 + g) against z0 + z0 g, or fusing
 * a product into a sum (fma) moves the last bit. */
static void test_deposition_link_order(void)
{
    double al, be, cp, cq;
    sp_dep_link(0x1.199999999999ap-1, 0x1.f333333333333p+0, 66, false, 0x1.eb4f578f05646p+6,
                0x1.6c08p+14, -0x1.46c427e56710ap+8, &al, &be, &cp, &cq);
    CHECK(al == 0x1.bfc7930de3e74p+5);
    CHECK(be == 0x1.5f76ad0f3701fp-2);
    CHECK(cp == 0x1.3d2f2e86402fcp+12);
    CHECK(cq == -0x1.c1fde4b0f5ef5p+6);
    /* The same sums are what the tiles pass on; a lake keeps its alpha and says so in beta. */
    double al2, be2, cp2, cq2;
    sp_dep_link(0x1.199999999999ap-1, 0x1.f333333333333p+0, 66, true, 0x1.eb4f578f05646p+6,
                0x1.6c08p+14, -0x1.46c427e56710ap+8, &al2, &be2, &cp2, &cq2);
    CHECK(al2 == al && be2 == -1.0 && cp2 == cp && cq2 == cq);
    CHECK(sp_dep_height(al, be, 0.0, 0x1.905a72acd1f7fp+5) == 0x1.24987cf9093f6p+6);
    /* A lake fills to what comes in, at most its way out (or its own height when higher). */
    CHECK(sp_dep_height(60.0, -1.0, 40.0, 50.0) == 50.0);
    CHECK(sp_dep_height(60.0, -1.0, 55.0, 50.0) == 55.0);
    CHECK(sp_dep_height(45.0, -1.0, 40.0, 50.0) == 45.0);
}

int main(void)
{
    RUN(test_channel_steady_state);
    RUN(test_deposition_link_order);
    RUN(test_uplift_mask_and_base_level);
    RUN(test_diffusion);
    RUN(test_diffusion_rock);
    RUN(test_creep_slope);
    RUN(test_lake_drains_over_sill);
    RUN(test_sea_surface);
    RUN(test_sea_surface_coarsened);
    RUN(test_critical_slope);
    RUN(test_critical_rock);
    RUN(test_border_follows);
    RUN(test_determinism);
    RUN(test_determinism_large);
#ifdef _OPENMP
    RUN(test_late_crew);
#endif
    RUN(test_network_forms);
    RUN(test_deposition_steady_state);
    RUN(test_deposition_fan);
    RUN(test_border_outlets);
    RUN(test_erodibility_mask);
    RUN(test_evolve_erodibility_mask);
    RUN(test_evolve_details_ahead);
    RUN(test_deposition_errors);
    RUN(test_errors_and_cancel);
    RUN(test_graph_node);
    RUN(test_graph_node_rock);
    return trn_test_finish();
}
