/* Tests: drainage on analytic surfaces (cone, bowl with one spill point, tilted planes, flats),
 * sea outlets, a brute-force fill reference, invariants, pinned hashes, memory and cancel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gen/drainage_internal.h"
#include "terrane/drainage.h"
#include "test.h"

static const int di8[8] = {1, 1, 0, -1, -1, -1, 0, 1};
static const int dj8[8] = {0, 1, 1, 1, 0, -1, -1, -1};

static size_t nx_of(const trn_drainage *d)
{
    return (size_t)d->cells_x + 1u;
}

static size_t count_of(const trn_drainage *d)
{
    return ((size_t)d->cells_x + 1u) * ((size_t)d->cells_z + 1u);
}

/* The sample a non-outlet sample drains to. */
static size_t down(const trn_drainage *d, size_t k)
{
    const size_t nx = nx_of(d);
    const int c = d->flow_dir[k];
    return (size_t)((ptrdiff_t)k + di8[c] + (ptrdiff_t)dj8[c] * (ptrdiff_t)nx);
}

/* Steps from k to an outlet; SIZE_MAX when the walk loops. */
static size_t steps_to_outlet(const trn_drainage *d, size_t k, size_t *outlet)
{
    const size_t n = count_of(d);
    size_t steps = 0;
    while (d->flow_dir[k] != TRN_DRAIN_OUTLET) {
        if (d->flow_dir[k] > 7 || ++steps > n) return SIZE_MAX;
        k = down(d, k);
    }
    if (outlet) *outlet = k;
    return steps;
}

/* Invariants every result must satisfy, whatever the input. */
static void check_invariants(const trn_field *f, const trn_drainage *d, double sea)
{
    const size_t nx = nx_of(d), nz = (size_t)d->cells_z + 1u, n = count_of(d);
    CHECK_EQ_INT(d->cells_x, f->cells_x);
    CHECK_EQ_INT(d->cells_z, f->cells_z);
    CHECK(d->size_x == f->size_x && d->size_z == f->size_z);
    uint64_t outlet_sum = 0, raised = 0;
    int bad_outlet = 0, bad_fill = 0, bad_dir = 0, bad_acc = 0, loops = 0;
    uint32_t *inflow = calloc(n, sizeof *inflow);
    for (size_t k = 0; k < n; k++)
        if (d->flow_dir[k] != TRN_DRAIN_OUTLET) inflow[down(d, k)] += d->accumulation[k];
    for (size_t j = 0; j < nz; j++) {
        for (size_t i = 0; i < nx; i++) {
            const size_t k = j * nx + i;
            const float h = f->heights[k], w = d->filled[k];
            const bool edge = i == 0 || j == 0 || i + 1 == nx || j + 1 == nz;
            const bool outlet = edge || (!isnan(sea) && (double)h <= sea);
            if (outlet != (d->flow_dir[k] == TRN_DRAIN_OUTLET)) bad_outlet++;
            if (d->accumulation[k] != 1u + inflow[k]) bad_acc++;
            if (outlet) {
                outlet_sum += d->accumulation[k];
                if (w != h) bad_fill++;
                continue;
            }
            raised += w > h;
            /* The fill's fixed point: max(own height, lowest neighbouring water level). */
            float lo = INFINITY;
            for (int c = 0; c < 8; c++) {
                const float v =
                    d->filled[k + (size_t)di8[c] + (size_t)((ptrdiff_t)dj8[c] * (ptrdiff_t)nx)];
                if (v < lo) lo = v;
            }
            if (w != (h > lo ? h : lo)) bad_fill++;
            if (d->flow_dir[k] > 7 || d->filled[down(d, k)] > w) bad_dir++;
            if (steps_to_outlet(d, k, NULL) == SIZE_MAX) loops++;
        }
    }
    free(inflow);
    CHECK_EQ_INT(bad_outlet, 0);
    CHECK_EQ_INT(bad_fill, 0);
    CHECK_EQ_INT(bad_dir, 0);
    CHECK_EQ_INT(bad_acc, 0);
    CHECK_EQ_INT(loops, 0);
    CHECK_EQ_INT(outlet_sum, n); /* every sample's water leaves somewhere */
    uint64_t basin_area = 0;
    uint8_t *seen = calloc(n, 1);
    size_t *stack = malloc(n * sizeof *stack);
    for (size_t b = 0; b < d->basin_count; b++) {
        const trn_basin *bs = &d->basins[b];
        basin_area += bs->area;
        CHECK_EQ_INT(bs->id, (uint64_t)bs->sink_j * nx + bs->sink_i);
        if (b) CHECK(d->basins[b - 1].id < bs->id);
        const size_t sk = (size_t)bs->id, sp = (size_t)bs->spill_j * nx + bs->spill_i;
        CHECK(bs->sink_height == f->heights[sk]);
        CHECK(d->filled[sk] == bs->spill_level && bs->sink_height < bs->spill_level);
        CHECK(f->heights[sp] == bs->spill_level && d->filled[sp] == bs->spill_level);
        /* The basin is the 8-connected raised region around its sink: its size is the area,
         * and the spill sample (whichever of several equal candidates the flood entered by)
         * touches it. */
        uint64_t area = 0;
        bool spill_touches = false;
        size_t top = 0;
        if (f->heights[sk] < d->filled[sk] && !seen[sk]) {
            seen[sk] = 1;
            stack[top++] = sk;
        }
        while (top) {
            const size_t k = stack[--top];
            area++;
            const size_t ki = k % nx, kj = k / nx;
            for (int c = 0; c < 8; c++) {
                const ptrdiff_t ni = (ptrdiff_t)ki + di8[c], nj = (ptrdiff_t)kj + dj8[c];
                if (ni < 0 || nj < 0 || ni >= (ptrdiff_t)nx || nj >= (ptrdiff_t)nz) continue;
                const size_t m = (size_t)nj * nx + (size_t)ni;
                if (m == sp) spill_touches = true;
                if (!seen[m] && f->heights[m] < d->filled[m]) {
                    seen[m] = 1;
                    stack[top++] = m;
                }
            }
        }
        CHECK_EQ_INT(area, bs->area);
        CHECK(spill_touches);
    }
    free(seen);
    free(stack);
    CHECK_EQ_INT(basin_area, raised);
}

static trn_field make_field(uint32_t cx, uint32_t cz)
{
    trn_field f;
    trn_field_init(&f, cx, cz, (double)cx, (double)cz, NULL);
    return f;
}

/* ---- analytic surfaces ---- */

static void test_cone(void)
{
    trn_field f = make_field(32, 32);
    for (size_t j = 0; j <= 32; j++)
        for (size_t i = 0; i <= 32; i++) {
            const double r = hypot((double)i - 16.0, (double)j - 16.0);
            f.heights[j * 33 + i] = (float)(30.0 - r);
        }
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    CHECK_EQ_INT(d.basin_count, 0);
    int inward = 0;
    uint32_t max_inner = 0, max_rim = 0;
    for (size_t j = 1; j < 32; j++)
        for (size_t i = 1; i < 32; i++) {
            const size_t k = j * 33 + i, t = down(&d, k);
            const double r = hypot((double)i - 16.0, (double)j - 16.0);
            const double rt = hypot((double)(t % 33) - 16.0, (double)(t / 33) - 16.0);
            if (!(rt > r)) inward++;
            CHECK(d.filled[k] == f.heights[k]);
            if (r < 5.0 && d.accumulation[k] > max_inner) max_inner = d.accumulation[k];
            if (r >= 13.0 && r < 15.0 && d.accumulation[k] > max_rim) max_rim = d.accumulation[k];
        }
    CHECK_EQ_INT(inward, 0); /* everything flows away from the apex */
    CHECK(max_rim > 2 * max_inner);
    /* Along the ray from the apex to the west rim accumulation never falls. */
    for (size_t i = 15; i >= 2; i--)
        CHECK(d.accumulation[16 * 33 + i - 1] >= d.accumulation[16 * 33 + i]);
    trn_mask m;
    CHECK_OK(trn_drainage_accumulation_mask(&d, &m, NULL));
    float top = 0.0f;
    for (size_t k = 0; k < 33 * 33; k++) {
        if (d.flow_dir[k] == TRN_DRAIN_OUTLET) CHECK(m.values[k] == 0.0f);
        if (m.values[k] > top) top = m.values[k];
    }
    CHECK(top == 1.0f);
    trn_mask_dispose(&m);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* A bowl h = r around (16, 16) with one notch at (16, 0): one basin filled to 15. */
static void make_bowl(trn_field *f)
{
    *f = make_field(32, 32);
    for (size_t j = 0; j <= 32; j++)
        for (size_t i = 0; i <= 32; i++) {
            const double d2 =
                ((double)i - 16.0) * ((double)i - 16.0) + ((double)j - 16.0) * ((double)j - 16.0);
            f->heights[j * 33 + i] = (float)sqrt(d2);
        }
    f->heights[16] = 10.0f;
}

static void test_bowl(void)
{
    trn_field f;
    make_bowl(&f);
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    uint64_t area = 0;
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 32; i++)
            area += (i - 16) * (i - 16) + (j - 16) * (j - 16) < 225;
    CHECK_EQ_INT(d.basin_count, 1);
    if (d.basin_count == 1) {
        const trn_basin *b = &d.basins[0];
        CHECK_EQ_INT(b->id, 16 * 33 + 16);
        CHECK_EQ_INT(b->sink_i, 16);
        CHECK_EQ_INT(b->sink_j, 16);
        CHECK(b->sink_height == 0.0f);
        CHECK(b->spill_level == 15.0f);
        CHECK_EQ_INT(b->spill_i, 16);
        CHECK_EQ_INT(b->spill_j, 1);
        CHECK_EQ_INT(b->area, area);
    }
    CHECK(d.filled[16 * 33 + 16] == 15.0f);
    CHECK(d.filled[33 + 1] == f.heights[33 + 1]);
    /* The lake drains breadth-first to its spill: 15 steps from the sink, then the notch. */
    size_t outlet = 0;
    CHECK_EQ_INT(steps_to_outlet(&d, 16 * 33 + 16, &outlet), 16);
    CHECK_EQ_INT(outlet, 16);
    /* Every interior sample ends at the notch. */
    CHECK_EQ_INT(d.accumulation[16], 1 + 31 * 31);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_tilted_planes(void)
{
    /* h = j: flow north (code 6), accumulation = samples upstream in the column. */
    trn_field f = make_field(20, 12);
    for (size_t j = 0; j <= 12; j++)
        for (size_t i = 0; i <= 20; i++)
            f.heights[j * 21 + i] = (float)j;
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    CHECK_EQ_INT(d.basin_count, 0);
    int wrong_dir = 0, wrong_acc = 0;
    for (size_t j = 1; j < 12; j++)
        for (size_t i = 1; i < 20; i++) {
            wrong_dir += d.flow_dir[j * 21 + i] != 6;
            wrong_acc += d.accumulation[j * 21 + i] != 12 - j;
        }
    CHECK_EQ_INT(wrong_dir, 0);
    CHECK_EQ_INT(wrong_acc, 0);
    CHECK_EQ_INT(d.accumulation[5], 12); /* border outlet: its own sample plus 11 upstream */
    CHECK_EQ_INT(d.accumulation[21 * 12 + 5], 1);
    trn_mask m;
    CHECK_OK(trn_drainage_accumulation_mask(&d, &m, NULL));
    CHECK(m.values[21 + 7] == 1.0f);
    CHECK(fabsf(m.values[21 * 6 + 7] - 6.0f / 11.0f) < 1e-6f);
    CHECK(m.values[7] == 0.0f && m.values[21 * 6] == 0.0f);
    trn_mask_dispose(&m);
    trn_drainage_dispose(&d);

    /* h = 2i on cells 0.5 wide in x and 3 deep in z: flow west (code 4). */
    f.size_x = 10.0;
    f.size_z = 36.0;
    for (size_t j = 0; j <= 12; j++)
        for (size_t i = 0; i <= 20; i++)
            f.heights[j * 21 + i] = (float)(2 * i);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    wrong_dir = wrong_acc = 0;
    for (size_t j = 1; j < 12; j++)
        for (size_t i = 1; i < 20; i++) {
            wrong_dir += d.flow_dir[j * 21 + i] != 4;
            wrong_acc += d.accumulation[j * 21 + i] != 20 - i;
        }
    CHECK_EQ_INT(wrong_dir, 0);
    CHECK_EQ_INT(wrong_acc, 0);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_sea_level(void)
{
    trn_field f;
    make_bowl(&f);
    trn_drainage d;
    /* The bowl's floor below sea level drains out: no basin, nothing filled. */
    CHECK_OK(trn_drainage_compute(&f, 0.5, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, 0.5);
    CHECK_EQ_INT(d.basin_count, 0);
    CHECK_EQ_INT(d.flow_dir[16 * 33 + 16], TRN_DRAIN_OUTLET);
    CHECK(isnan(d.sea_level) == 0 && d.sea_level == 0.5);
    int raised = 0;
    for (size_t k = 0; k < 33 * 33; k++)
        raised += d.filled[k] != f.heights[k];
    CHECK_EQ_INT(raised, 0);
    CHECK(d.accumulation[16 * 33 + 16] > 600);
    trn_mask m;
    CHECK_OK(trn_drainage_accumulation_mask(&d, &m, NULL));
    CHECK(m.values[16 * 33 + 16] == 0.0f);
    trn_mask_dispose(&m);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);

    /* A plane h = j with the sea at 3.5: rows 0..3 are outlets. */
    f = make_field(10, 10);
    for (size_t j = 0; j <= 10; j++)
        for (size_t i = 0; i <= 10; i++)
            f.heights[j * 11 + i] = (float)j - 2.0f;
    CHECK_OK(trn_drainage_compute(&f, 1.5, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, 1.5);
    CHECK_EQ_INT(d.flow_dir[3 * 11 + 5], TRN_DRAIN_OUTLET);
    CHECK_EQ_INT(d.flow_dir[4 * 11 + 5], 6);
    CHECK_EQ_INT(d.accumulation[4 * 11 + 5], 6);
    CHECK_EQ_INT(d.accumulation[3 * 11 + 5], 7);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_flats(void)
{
    /* A flat field drains to the nearest border: path length = chessboard distance. */
    trn_field f = make_field(16, 10);
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    CHECK_EQ_INT(d.basin_count, 0);
    int wrong = 0;
    for (size_t j = 1; j < 10; j++)
        for (size_t i = 1; i < 16; i++) {
            size_t want = i < j ? i : j;
            if (16 - i < want) want = 16 - i;
            if (10 - j < want) want = 10 - j;
            wrong += steps_to_outlet(&d, j * 17 + i, NULL) != want;
        }
    CHECK_EQ_INT(wrong, 0);
    trn_drainage_dispose(&d);

    /* A flat-bottomed pit (3x3 at 0 in a plateau at 5 with one exit at 2 on the border):
     * one basin, sink the smallest index of the tied floor. */
    for (size_t k = 0; k < 17 * 11; k++)
        f.heights[k] = 5.0f;
    for (size_t j = 4; j <= 6; j++)
        for (size_t i = 7; i <= 9; i++)
            f.heights[j * 17 + i] = 0.0f;
    f.heights[0 * 17 + 3] = 2.0f;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    CHECK_EQ_INT(d.basin_count, 1);
    if (d.basin_count == 1) {
        CHECK_EQ_INT(d.basins[0].id, 4 * 17 + 7);
        CHECK_EQ_INT(d.basins[0].area, 9);
        CHECK(d.basins[0].spill_level == 5.0f);
    }
    /* The plateau drains like a flat to the border at its own height, except next to the
     * lower border sample (3, 0), which takes the strict descent. */
    CHECK_EQ_INT(d.flow_dir[17 + 3], 6);
    CHECK_EQ_INT(d.flow_dir[17 + 2], 7);
    CHECK_EQ_INT(d.flow_dir[17 + 4], 5);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* ---- a pseudo-random rough terrain, a brute-force reference and pinned hashes ---- */

static void rough_terrain(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double smooth = 20.0 * sin((double)i * 0.21) * cos((double)j * 0.17);
            const uint32_t r = trn_test_mix32((uint32_t)(j * nx + i) ^ trn_test_mix32(seed));
            /* Coarse steps make ties and flats common. */
            f->heights[j * nx + i] = (float)floor(smooth + (double)(r % 7u));
        }
}

static void test_reference_and_hash(void)
{
    trn_field f = make_field(61, 47);
    const size_t nx = 62, nz = 48, n = nx * nz;
    rough_terrain(&f, 7);
    trn_drainage d, d2;
    CHECK_OK(trn_drainage_compute(&f, -3.0, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, -3.0);
    CHECK(d.basin_count > 10);
    /* Brute force (Planchon-Darboux style relaxation from +inf) gives the same fill. */
    float *w = malloc(n * sizeof *w);
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const size_t k = j * nx + i;
            const bool out =
                i == 0 || j == 0 || i + 1 == nx || j + 1 == nz || (double)f.heights[k] <= -3.0;
            w[k] = out ? f.heights[k] : INFINITY;
        }
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t j = 1; j + 1 < nz; j++)
            for (size_t i = 1; i + 1 < nx; i++) {
                const size_t k = j * nx + i;
                if (w[k] == f.heights[k]) continue;
                for (int c = 0; c < 8; c++) {
                    const float v = w[(size_t)((ptrdiff_t)k + di8[c] + dj8[c] * (ptrdiff_t)nx)];
                    const float nv = v > f.heights[k] ? v : f.heights[k];
                    if (nv < w[k]) {
                        w[k] = nv;
                        changed = true;
                    }
                }
            }
    }
    CHECK(memcmp(w, d.filled, n * sizeof *w) == 0);
    free(w);
    /* Same grid, same answer; pinned so a change of rule is seen. */
    CHECK_OK(trn_drainage_compute(&f, -3.0, &d2, NULL, NULL, NULL));
    CHECK(memcmp(d.flow_dir, d2.flow_dir, n) == 0);
    CHECK(memcmp(d.accumulation, d2.accumulation, n * sizeof(uint32_t)) == 0);
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, d.filled, n * sizeof(float));
    XXH64_update(st, d.flow_dir, n);
    XXH64_update(st, d.accumulation, n * sizeof(uint32_t));
    XXH64_update(st, d.basins, d.basin_count * sizeof *d.basins);
    const unsigned long long got = (unsigned long long)XXH64_digest(st);
    XXH64_freeState(st);
    trn_test_checks++;
    /* 0x2738030102d186bc until basins took the smallest-index spill sample (the flood's order
     * picked among candidates before; filled, directions and accumulation are unchanged). */
    if (got != 0x2fc9c22dcffab560ull) {
        trn_test_failures++;
        fprintf(stderr, "drainage hash: got 0x%016llxull (basins %zu)\n", got, d.basin_count);
    }
    trn_drainage_dispose(&d);
    trn_drainage_dispose(&d2);
    trn_field_dispose(&f);
}

/* ---- the parallel fill: every strip count gives the whole-grid flood's bytes ---- */

static bool same_drainage(const trn_drainage *a, const trn_drainage *b)
{
    const size_t n = count_of(a);
    return memcmp(a->filled, b->filled, n * sizeof(float)) == 0 &&
           memcmp(a->flow_dir, b->flow_dir, n) == 0 &&
           memcmp(a->accumulation, b->accumulation, n * sizeof(uint32_t)) == 0 &&
           a->basin_count == b->basin_count &&
           (a->basin_count == 0 ||
            memcmp(a->basins, b->basins, a->basin_count * sizeof *a->basins) == 0);
}

static void test_strips(void)
{
    /* Rough ground with ties, with and without sea; a lake across every strip boundary; zeros of
     * both signs (a raised sample holds +0 whichever strip its level came from). */
    static const uint32_t sizes[4][2] = {{61, 47}, {130, 97}, {40, 200}, {257, 255}};
    for (int v = 0; v < 4; v++) {
        trn_field f = make_field(sizes[v][0], sizes[v][1]);
        const size_t nx = sizes[v][0] + 1u, nz = sizes[v][1] + 1u;
        rough_terrain(&f, 3u + (uint32_t)v);
        if (v == 2)
            for (size_t j = 0; j < nz; j++)
                for (size_t i = 0; i < nx; i++) {
                    const double r = hypot((double)i - 20.0, (double)j - 100.0);
                    f.heights[j * nx + i] = r < 90.0 ? (float)floor(r * 0.05) - 10.0f : 30.0f;
                }
        if (v == 3)
            for (size_t k = 0; k < nx * nz; k++)
                if (f.heights[k] == 0.0f) f.heights[k] = (k % 3) ? -0.0f : 0.0f;
        const double seas[2] = {NAN, -3.0};
        for (int sv = 0; sv < 2; sv++) {
            trn_drainage whole;
            CHECK_OK(trn_drainage_compute_strips(&f, seas[sv], 1, &whole, NULL, NULL, NULL));
            check_invariants(&f, &whole, seas[sv]);
            for (int strips = 2; strips <= 9; strips++) {
                trn_drainage d;
                CHECK_OK(trn_drainage_compute_strips(&f, seas[sv], strips, &d, NULL, NULL, NULL));
                const bool same = same_drainage(&whole, &d);
                CHECK(same);
                if (!same)
                    fprintf(stderr, "  grid %d sea %d: %d strips differ from one\n", v, sv, strips);
                trn_drainage_dispose(&d);
            }
            trn_drainage_dispose(&whole);
        }
        trn_field_dispose(&f);
    }
}

/* ---- memory, errors, cancel ---- */

static void test_memory(void)
{
    trn_field f = make_field(511, 511);
    rough_terrain(&f, 11);
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    const size_t n = 512 * 512;
    /* Documented: the watershed graph or the flats' queue. This terrain is noise on every
     * sample, a pit every few samples: the largest graph there is. */
    CHECK(d.temp_bytes_peak >= n);
    CHECK(d.temp_bytes_peak <= 6 * n);
    fprintf(stderr, "  rough: temp peak %zu bytes for %zu samples, %zu basins\n", d.temp_bytes_peak,
            n, d.basin_count);
    trn_drainage_dispose(&d);
    /* Smooth hills: a few dozen watersheds. */
    for (size_t j = 0; j < 512; j++)
        for (size_t i = 0; i < 512; i++)
            f.heights[j * 512 + i] =
                (float)(20.0 * sin((double)i * 0.05) * cos((double)j * 0.04) + 0.01 * (double)i);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    check_invariants(&f, &d, NAN);
    CHECK(d.temp_bytes_peak <= n / 2);
    fprintf(stderr, "  smooth: temp peak %zu bytes for %zu samples, %zu basins\n",
            d.temp_bytes_peak, n, d.basin_count);
    trn_drainage_dispose(&d);
    trn_drainage_dispose(&d);
    trn_drainage_dispose(NULL);
    trn_field_dispose(&f);
}

static void test_errors(void)
{
    trn_error err;
    trn_drainage d;
    memset(&d, 0xAB, sizeof d);
    trn_drainage before = d;
    CHECK_STATUS(trn_drainage_compute(NULL, NAN, &d, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(err.offset, -1);
    trn_field f = make_field(4, 3);
    f.heights[2 * 5 + 3] = NAN;
    CHECK_STATUS(trn_drainage_compute(&f, NAN, &d, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "NaN at sample (3, 2)");
    f.heights[2 * 5 + 3] = 0.0f;
    f.size_x = 0.0;
    CHECK_STATUS(trn_drainage_compute(&f, NAN, &d, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "positive finite field size");
    f.size_x = 4.0;
    trn_field empty = f;
    empty.heights = NULL;
    CHECK_STATUS(trn_drainage_compute(&empty, NAN, &d, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "no heights");
    CHECK(memcmp(&d, &before, sizeof d) == 0);
    trn_mask m;
    CHECK_STATUS(trn_drainage_accumulation_mask(NULL, &m, &err), TRN_ERR_INVALID_ARGUMENT);
    /* One cell: every sample is an outlet, the mask is all 0. */
    trn_field one = make_field(1, 1);
    CHECK_OK(trn_drainage_compute(&one, NAN, &d, NULL, NULL, NULL));
    CHECK_OK(trn_drainage_accumulation_mask(&d, &m, NULL));
    CHECK(m.values[0] == 0.0f && m.values[3] == 0.0f);
    trn_mask_dispose(&m);
    trn_drainage_dispose(&d);
    trn_field_dispose(&one);
    trn_field_dispose(&f);
}

typedef struct cancel_ctx {
    int calls, cancel_at;
    double last;
    bool backwards;
} cancel_ctx;

static int cancel_cb(double done, const char *stage, void *user)
{
    cancel_ctx *c = user;
    if (done < c->last || strcmp(stage, "drainage") != 0) c->backwards = true;
    c->last = done;
    return ++c->calls == c->cancel_at ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_cancel(void)
{
    trn_field f = make_field(1200, 1000);
    rough_terrain(&f, 3);
    cancel_ctx all = {0, -1, 0.0, false};
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, cancel_cb, &all, NULL));
    CHECK(!all.backwards);
    CHECK(all.last == 1.0);
    CHECK(all.calls > 3);
    trn_drainage_dispose(&d);
    /* Cancelling at every report point stops with CANCELLED, leaks nothing (ASan) and leaves
     * the output untouched. */
    for (int at = 1; at <= all.calls; at++) {
        cancel_ctx c = {0, at, 0.0, false};
        trn_error err;
        memset(&d, 0x5A, sizeof d);
        trn_drainage before = d;
        CHECK_STATUS(trn_drainage_compute(&f, NAN, &d, cancel_cb, &c, &err), TRN_ERR_CANCELLED);
        CHECK_EQ_INT(c.calls, at);
        CHECK(memcmp(&d, &before, sizeof d) == 0);
    }
    trn_field_dispose(&f);
}

/* Breaching a closed bowl with a flat floor: afterwards every non-outlet sample drains to a
 * strictly lower receiver (a receiver of equal height is lowered too, so no flat is left),
 * and heights only fell. */
static void test_breach(void)
{
    trn_field f = make_field(24, 24);
    for (size_t j = 0; j <= 24; j++)
        for (size_t i = 0; i <= 24; i++) {
            const double r = hypot((double)i - 12.0, (double)j - 12.0);
            /* A rim at r 9, a flat floor of 10 inside r 5, falling outside the rim. */
            f.heights[j * 25 + i] = (float)(r < 5.0 ? 10.0 : r < 9.0 ? 10.0 + (r - 5.0) : 14.0 - (r - 9.0));
        }
    float *before = malloc(25 * 25 * sizeof *before);
    CHECK(before != NULL);
    if (!before) return;
    memcpy(before, f.heights, 25 * 25 * sizeof *before);
    trn_drainage d;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK(d.basin_count >= 1);
    CHECK_OK(trn_drainage_breach(&f, &d, NULL));
    int not_lower = 0, raised = 0, floor_lowered = 0;
    for (size_t k = 0; k < 25 * 25; k++) {
        if (f.heights[k] > before[k]) raised++;
        if (d.flow_dir[k] >= 8) continue;
        const size_t t = down(&d, k);
        if (!(f.heights[t] < f.heights[k])) not_lower++;
        const size_t i = k % 25, j = k / 25;
        if (hypot((double)i - 12.0, (double)j - 12.0) < 5.0 && f.heights[k] < 10.0f)
            floor_lowered++;
    }
    CHECK_EQ_INT(not_lower, 0);
    CHECK_EQ_INT(raised, 0);
    CHECK(floor_lowered > 0); /* the flat floor itself got a gradient */
    trn_drainage_dispose(&d);
    /* The breached surface has no closed depression left. */
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK_EQ_INT(d.basin_count, 0);
    trn_drainage_dispose(&d);
    free(before);
    trn_field_dispose(&f);
}

/* The breach as the header states it, over every sample: increasing accumulation, ties by
 * index, each receiver not lower than its donor lowered to the next float under it. */
static void breach_reference(float *h, const trn_drainage *d)
{
    const size_t n = count_of(d);
    uint32_t *order = malloc(n * sizeof *order), *at = calloc(n + 2u, sizeof *at);
    CHECK(order && at);
    if (!order || !at) return;
    for (size_t k = 0; k < n; k++) /* a counting sort: stable, so ties stay by index */
        at[d->accumulation[k] + 1u]++;
    for (size_t a = 1; a < n + 2u; a++)
        at[a] += at[a - 1u];
    for (size_t k = 0; k < n; k++)
        order[at[d->accumulation[k]]++] = (uint32_t)k;
    free(at);
    for (size_t q = 0; q < n; q++) {
        const size_t k = order[q];
        if (d->flow_dir[k] >= 8) continue;
        const size_t r = down(d, k);
        if (!(h[r] < h[k])) h[r] = nextafterf(h[k], -INFINITY);
    }
    free(order);
}

/* The breach takes only the samples below a receiver not lower than its donor: the same
 * heights, bit for bit, as taking every sample in the documented order, on rough terrain full
 * of flats and pits (large enough for its scan to run on threads), on 1 and 3 threads, and
 * with a NaN put in after the drainage (where every sample must be taken). */
static void test_breach_reference(void)
{
    static const uint32_t sizes[3][2] = {{61, 47}, {600, 520}, {9, 300}};
    for (int v = 0; v < 3; v++) {
        trn_field f = make_field(sizes[v][0], sizes[v][1]);
        rough_terrain(&f, 11u + (uint32_t)v);
        const size_t n = trn_field_sample_count(&f);
        trn_drainage d;
        CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
        float *src = malloc(n * sizeof *src), *want = malloc(n * sizeof *want);
        CHECK(src && want);
        if (!src || !want) return;
        memcpy(src, f.heights, n * sizeof *src);
        for (int nan = 0; nan < 2; nan++) {
            if (nan) src[(n / 2u) | 1u] = NAN;
            memcpy(want, src, n * sizeof *want);
            breach_reference(want, &d);
            size_t lowered = 0;
            for (size_t k = 0; k < n; k++)
                lowered += want[k] < src[k];
            CHECK(lowered > 0);
            for (int t = 1; t <= 3; t += 2) {
#ifdef _OPENMP
                const int saved = omp_get_max_threads();
                omp_set_num_threads(t);
#endif
                memcpy(f.heights, src, n * sizeof *src);
                CHECK_OK(trn_drainage_breach(&f, &d, NULL));
#ifdef _OPENMP
                omp_set_num_threads(saved);
#endif
                CHECK(memcmp(f.heights, want, n * sizeof *want) == 0);
            }
        }
        free(src);
        free(want);
        trn_drainage_dispose(&d);
        trn_field_dispose(&f);
    }
}

int main(void)
{
    RUN(test_cone);
    RUN(test_bowl);
    RUN(test_tilted_planes);
    RUN(test_sea_level);
    RUN(test_flats);
    RUN(test_breach);
    RUN(test_breach_reference);
    RUN(test_reference_and_hash);
    RUN(test_strips);
    RUN(test_memory);
    RUN(test_errors);
    RUN(test_cancel);
    return trn_test_finish();
}
