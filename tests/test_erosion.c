/* Tests of droplet erosion and thermal relaxation: ledger, determinism, analytic fields, presets,
 * cancel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen/erosion_internal.h"
#include "terrane/erosion.h"
#include "terrane/generate.h"
#include "test.h"

static uint64_t fnv_floats(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* A 128x128-cell ridged landform, 1 unit per cell, heights up to about 80. */
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

static void hydraulic_only(trn_erosion_params *p)
{
    trn_erosion_params_default(p, TRN_EROSION_FINAL);
    p->thermal_iterations = 0;
}

static void test_ledger_balance(void)
{
    trn_field f;
    make_terrain(&f, 128);
    trn_erosion_params p;
    hydraulic_only(&p);
    p.droplets = 40000;
    p.iterations = 2;
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 99, &r, NULL, NULL, NULL));
    const trn_erosion_ledger *l = &r.ledger;
    CHECK_EQ_INT(l->droplets, 80000);
    CHECK(l->steps > 80000 && l->steps <= 80000ull * 30u);
    CHECK(l->eroded > 1.0);
    CHECK(l->deposited > 0.1);
    CHECK(l->exported > 0.0);
    CHECK(l->suspended > 0.0);
    double out = l->deposited + l->exported + l->suspended;
    CHECK(fabs(l->eroded - out) <= 1e-6 * l->eroded);
    /* The field's net change is what stayed off it: deposited - eroded. */
    double net = 0.0;
    size_t n = trn_field_sample_count(&f);
    for (size_t i = 0; i < n; i++)
        net += (double)r.change[i];
    CHECK(fabs(net - (l->deposited - l->eroded)) <= 1e-3 * l->eroded);
    /* Masks: the largest rise and fall map to 1, all values in [0, 1]. */
    float dmax = 0.0f, emax = 0.0f;
    for (size_t i = 0; i < n; i++) {
        CHECK(r.deposition.values[i] >= 0.0f && r.deposition.values[i] <= 1.0f);
        CHECK(r.erosion.values[i] >= 0.0f && r.erosion.values[i] <= 1.0f);
        if (r.deposition.values[i] > dmax) dmax = r.deposition.values[i];
        if (r.erosion.values[i] > emax) emax = r.erosion.values[i];
        /* change is eroded - input in float, so adding it back is exact to a rounding or two
         * of the operands (a sample cut nearly to 0 from 50 m keeps the 50 m's rounding). */
        CHECK(fabsf(r.field.heights[i] - (f.heights[i] + r.change[i])) <=
              1e-6f * (fabsf(r.field.heights[i]) + fabsf(f.heights[i]) + 1.0f));
        if (r.change[i] > 0.0f) CHECK(r.erosion.values[i] == 0.0f);
    }
    CHECK(dmax == 1.0f);
    CHECK(emax == 1.0f);
    /* Each mask is its own side of the change over that side's largest value. */
    float rise = 0.0f, fall = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (r.change[i] > rise) rise = r.change[i];
        if (-r.change[i] > fall) fall = -r.change[i];
    }
    CHECK(rise > 0.0f && fall > 0.0f && rise != fall);
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        const float d = r.change[i];
        const float dep = d > 0.0f ? fminf(d / rise, 1.0f) : 0.0f;
        const float ero = d < 0.0f ? fminf(-d / fall, 1.0f) : 0.0f;
        off += r.deposition.values[i] != dep || r.erosion.values[i] != ero;
    }
    CHECK_EQ_INT(off, 0);
    trn_erosion_result_dispose(&r);
    trn_erosion_result_dispose(&r); /* disposed twice: a no-op */
    trn_erosion_result_dispose(NULL);
    trn_field_dispose(&f);
}

static void test_threads_bit_identical(void)
{
    trn_field f;
    make_terrain(&f, 160);
    size_t n = trn_field_sample_count(&f);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = 30000;
    trn_erosion_result r1, r2;
    p.threads = 1;
    CHECK_OK(trn_erosion_run(&f, &p, 1234, &r1, NULL, NULL, NULL));
    p.threads = 2;
    CHECK_OK(trn_erosion_run(&f, &p, 1234, &r2, NULL, NULL, NULL));
    CHECK(memcmp(r1.field.heights, r2.field.heights, n * sizeof(float)) == 0);
    CHECK(memcmp(r1.change, r2.change, n * sizeof(float)) == 0);
    CHECK(memcmp(&r1.ledger, &r2.ledger, sizeof r1.ledger) == 0);
    trn_erosion_result_dispose(&r2);
    /* Another seed moves the droplets. */
    CHECK_OK(trn_erosion_run(&f, &p, 1235, &r2, NULL, NULL, NULL));
    CHECK(memcmp(r1.field.heights, r2.field.heights, n * sizeof(float)) != 0);
    trn_erosion_result_dispose(&r2);
    trn_erosion_result_dispose(&r1);

    /* A grid large enough for the change and its masks to be made by rows on the threads:
     * the same bytes on 1 and 3 threads, each mask its side of the change over its largest. */
    trn_field big;
    make_terrain(&big, 300);
    const size_t bn = trn_field_sample_count(&big);
    p.droplets = 20000;
    p.threads = 1;
    CHECK_OK(trn_erosion_run(&big, &p, 99, &r1, NULL, NULL, NULL));
    p.threads = 3;
    CHECK_OK(trn_erosion_run(&big, &p, 99, &r2, NULL, NULL, NULL));
    CHECK(memcmp(r1.change, r2.change, bn * sizeof(float)) == 0);
    CHECK(memcmp(r1.deposition.values, r2.deposition.values, bn * sizeof(float)) == 0);
    CHECK(memcmp(r1.erosion.values, r2.erosion.values, bn * sizeof(float)) == 0);
    float rise = 0.0f, fall = 0.0f;
    for (size_t i = 0; i < bn; i++) {
        CHECK(r2.change[i] == r2.field.heights[i] - big.heights[i]);
        if (r2.change[i] > rise) rise = r2.change[i];
        if (-r2.change[i] > fall) fall = -r2.change[i];
    }
    size_t off = 0;
    for (size_t i = 0; i < bn; i++) {
        const float d = r2.change[i];
        off += r2.deposition.values[i] != (d > 0.0f ? fminf(d / rise, 1.0f) : 0.0f);
        off += r2.erosion.values[i] != (d < 0.0f ? fminf(-d / fall, 1.0f) : 0.0f);
    }
    CHECK(rise > 0.0f && fall > 0.0f);
    CHECK_EQ_INT(off, 0);
    trn_erosion_result_dispose(&r2);
    trn_erosion_result_dispose(&r1);
    trn_field_dispose(&big);

    /* Pinned: the hydraulic result of this seed and these parameters, on 2 threads. */
    hydraulic_only(&p);
    p.droplets = 30000;
    p.threads = 2;
    CHECK_OK(trn_erosion_run(&f, &p, 1234, &r1, NULL, NULL, NULL));
    uint64_t h = fnv_floats(r1.field.heights, n);
    if (h != 0x788694efe56d1fdcull)
        fprintf(stderr, "hydraulic hash %016llx\n", (unsigned long long)h);
    CHECK(h == 0x788694efe56d1fdcull);
    trn_erosion_result_dispose(&r1);
    trn_field_dispose(&f);
}

/* Short walks make small tiles, so many tiles of a phase run at once; 1, 2 and 3 threads agree. */
static void test_small_tiles_any_threads(void)
{
    trn_field f;
    make_terrain(&f, 200);
    size_t n = trn_field_sample_count(&f);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.lifetime = 4;
    p.radius = 2; /* reach 8, tiles of 18 samples: 12x12 tiles, 36 per phase */
    p.droplets = 100000;
    p.thermal_iterations = 3;
    trn_erosion_result r[3];
    for (int t = 0; t < 3; t++) {
        p.threads = t + 1;
        CHECK_OK(trn_erosion_run(&f, &p, 77, &r[t], NULL, NULL, NULL));
    }
    for (int t = 1; t < 3; t++) {
        CHECK(memcmp(r[0].field.heights, r[t].field.heights, n * sizeof(float)) == 0);
        CHECK(memcmp(&r[0].ledger, &r[t].ledger, sizeof r[0].ledger) == 0);
    }
    CHECK(r[0].ledger.steps <= 100000ull * 4u);
    CHECK(r[0].ledger.eroded > 0.0);
    for (int t = 0; t < 3; t++)
        trn_erosion_result_dispose(&r[t]);
    trn_field_dispose(&f);
}

/* The threads own runs of a phase's tiles and of a thermal pass's row chunks and take from
 * another's run only when theirs is empty: with every item given to the first thread (1) or to
 * none (2), the others take them from its back, and every tile and chunk still runs once per
 * stage, so the bytes and ledger are one thread's. Hook 2 steals every item: 4 rounds of the
 * 12x12 tiles and 3 thermal passes of 13 chunks of 16 rows (201 rows). */
static void test_queue_stealing(void)
{
    trn_field f;
    make_terrain(&f, 200);
    const size_t n = trn_field_sample_count(&f);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.lifetime = 4;
    p.radius = 2; /* tiles of 18 samples: 12x12 tiles */
    p.droplets = 60000;
    p.thermal_iterations = 3;
    p.threads = 1;
    trn_erosion_result r0, r;
    CHECK_OK(trn_erosion_run(&f, &p, 31, &r0, NULL, NULL, NULL));
    for (int hook = 1; hook <= 2; hook++)
        for (int t = 1; t <= 3; t++) {
            trn_erosion_queue_test = hook;
            atomic_store(&trn_erosion_stolen, 0u);
            p.threads = t;
            CHECK_OK(trn_erosion_run(&f, &p, 31, &r, NULL, NULL, NULL));
            trn_erosion_queue_test = 0;
            CHECK(memcmp(r0.field.heights, r.field.heights, n * sizeof(float)) == 0);
            CHECK(memcmp(&r0.ledger, &r.ledger, sizeof r.ledger) == 0);
            const unsigned long long stolen = atomic_load(&trn_erosion_stolen);
            if (hook == 2) CHECK_EQ_INT(stolen, 4u * 144u + 3u * 13u);
            if (hook == 1 && t == 1) CHECK_EQ_INT(stolen, 0);
            trn_erosion_result_dispose(&r);
        }
    trn_erosion_result_dispose(&r0);
    trn_field_dispose(&f);
}

/* A grid smaller than the brush and than one tile: every brush is clipped at the edges and
 * the ledger still balances. */
static void test_tiny_grid(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 5, 3, 10.0, 6.0, NULL));
    const size_t nx = 6, nz = 4, n = nx * nz;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f.heights[z * nx + x] = (float)((x * 7 + z * 3) % 5) + 0.25f * (float)x;
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.lifetime = 512;
    p.radius = 16;
    p.droplets = 3000;
    p.thermal_iterations = 0;
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 9, &r, NULL, NULL, NULL));
    const trn_erosion_ledger *l = &r.ledger;
    CHECK(l->eroded > 0.0);
    CHECK(fabs(l->eroded - (l->deposited + l->exported + l->suspended)) <= 1e-6 * l->eroded);
    double net = 0.0;
    for (size_t i = 0; i < n; i++) {
        CHECK(isfinite(r.field.heights[i]));
        net += (double)r.change[i];
    }
    CHECK(fabs(net - (l->deposited - l->eroded)) <= 1e-4 * l->eroded + 1e-4);
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

static void test_flat_does_nothing(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 64, 48, 64.0, 48.0, NULL));
    size_t n = trn_field_sample_count(&f);
    for (size_t i = 0; i < n; i++)
        f.heights[i] = 12.5f;
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 5, &r, NULL, NULL, NULL));
    CHECK(memcmp(r.field.heights, f.heights, n * sizeof(float)) == 0);
    int nonzero = 0;
    for (size_t i = 0; i < n; i++)
        nonzero +=
            r.change[i] != 0.0f || r.deposition.values[i] != 0.0f || r.erosion.values[i] != 0.0f;
    CHECK_EQ_INT(nonzero, 0);
    CHECK(r.ledger.eroded == 0.0 && r.ledger.deposited == 0.0 && r.ledger.exported == 0.0 &&
          r.ledger.suspended == 0.0);
    CHECK_EQ_INT(r.ledger.droplets, (uint64_t)(0.5 * (double)n + 0.5));
    CHECK_EQ_INT(r.ledger.steps, 0); /* every droplet stops where it starts */
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

/* A plane sloping down along +x to x = 80, then a level floor to x = 127. */
static void test_tilted_plane(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 127, 63, 127.0, 63.0, NULL));
    const size_t nx = 128, nz = 64;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f.heights[z * nx + x] = x < 80 ? (float)(80 - x) * 0.05f : 0.0f;
    trn_erosion_params p;
    hydraulic_only(&p);
    p.droplets = 5000;
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 3, &r, NULL, NULL, NULL));
    double up = 0.0, down = 0.0;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++) {
            if (x < 70) up += r.change[z * nx + x];
            if (x >= 80) down += r.change[z * nx + x];
        }
    CHECK(up < -1.0);
    CHECK(down > 0.5);
    /* Nothing is taken from the floor itself far from the slope's foot. */
    float floor_min = 0.0f;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 100; x < nx; x++)
            if (r.change[z * nx + x] < floor_min) floor_min = r.change[z * nx + x];
    CHECK(floor_min > -0.02f);
    CHECK(r.ledger.eroded > r.ledger.exported);
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

static double max_step(const trn_field *f)
{
    const size_t nx = f->cells_x + 1u, nz = f->cells_z + 1u;
    double m = 0.0;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x + 1 < nx; x++) {
            double d = fabs((double)f->heights[z * nx + x + 1] - f->heights[z * nx + x]);
            if (d > m) m = d;
        }
    return m;
}

static void test_thermal(void)
{
    /* A cliff: 0 then 20 along x, 1 unit per sample, so 87 degrees. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 63, 15, 63.0, 15.0, NULL));
    const size_t nx = 64, nz = 16, n = nx * nz;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f.heights[z * nx + x] = x < 32 ? 0.0f : 20.0f;
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplet_density = 0.0; /* thermal only */
    p.talus_angle = 30.0;
    p.thermal_strength = 1.0;
    p.thermal_iterations = 3000;
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, NULL));
    CHECK_EQ_INT(r.ledger.droplets, 0);
    double before = 0.0, after = 0.0;
    for (size_t i = 0; i < n; i++) {
        before += f.heights[i];
        after += r.field.heights[i];
    }
    /* Exact per pair; only the float sums of each sample round (3000 passes over 1024). */
    CHECK(fabs(after - before) < 1e-5 * before);
    const double talus = tan(30.0 * 3.14159265358979323846 / 180.0);
    double m = max_step(&r.field);
    /* Brought down towards the talus slope, not flattened below it. */
    CHECK(m < 20.0 * 0.1);
    CHECK(m < talus * 1.5);
    CHECK(m > talus * 0.9);
    /* A slope already gentler than the talus angle does not move. */
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f.heights[z * nx + x] = (float)x * 0.25f;
    trn_erosion_result r2;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r2, NULL, NULL, NULL));
    CHECK(memcmp(r2.field.heights, f.heights, n * sizeof(float)) == 0);
    trn_erosion_result_dispose(&r2);
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

static void test_preview_differs(void)
{
    trn_field f;
    make_terrain(&f, 96);
    size_t n = trn_field_sample_count(&f);
    trn_erosion_params pf, pp;
    trn_erosion_params_default(&pf, TRN_EROSION_FINAL);
    trn_erosion_params_default(&pp, TRN_EROSION_PREVIEW);
    /* Preview changes only droplet count, walk length, transport steps and the thermal pass. */
    CHECK(pp.droplet_density < pf.droplet_density);
    CHECK(pp.transport_steps < pf.transport_steps);
    CHECK(pp.lifetime < pf.lifetime);
    CHECK_EQ_INT(pp.thermal_iterations, 0);
    CHECK(pf.thermal_iterations > 0);
    trn_erosion_params same = pp;
    same.droplet_density = pf.droplet_density;
    same.lifetime = pf.lifetime;
    same.thermal_iterations = pf.thermal_iterations;
    same.transport_steps = pf.transport_steps;
    CHECK(memcmp(&same, &pf, sizeof same) == 0);
    trn_erosion_result rf, rp;
    CHECK_OK(trn_erosion_run(&f, &pf, 42, &rf, NULL, NULL, NULL));
    CHECK_OK(trn_erosion_run(&f, &pp, 42, &rp, NULL, NULL, NULL));
    CHECK(rp.ledger.droplets < rf.ledger.droplets);
    CHECK(rp.ledger.eroded < rf.ledger.eroded);
    CHECK(memcmp(rf.field.heights, rp.field.heights, n * sizeof(float)) != 0);
    trn_erosion_result_dispose(&rf);
    trn_erosion_result_dispose(&rp);
    trn_field_dispose(&f);
}

typedef struct cancel_state {
    const char *stage; /* cancel on the first report of this stage after `after` reports */
    int after, seen;
    double last;
    int backwards;
} cancel_state;

static int cancel_cb(double done, const char *stage, void *user)
{
    cancel_state *s = user;
    if (done < s->last) s->backwards++;
    s->last = done;
    if (s->stage && strcmp(stage, s->stage) == 0 && s->seen++ >= s->after) return TRN_CANCEL;
    return TRN_CONTINUE;
}

static void test_cancel_and_errors(void)
{
    trn_field f;
    make_terrain(&f, 64);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = 70000; /* two batches */
    trn_erosion_result r;
    memset(&r, 0x5a, sizeof r);
    trn_erosion_result sentinel = r;
    trn_error err;
    cancel_state s = {"erosion", 1, 0, 0.0, 0};
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, cancel_cb, &s, &err), TRN_ERR_CANCELLED);
    CHECK_EQ_INT(err.code, TRN_ERR_CANCELLED);
    CHECK_CONTAINS(err.message, "erosion: cancelled");
    CHECK(memcmp(&r, &sentinel, sizeof r) == 0);
    cancel_state t = {"thermal", 4, 0, 0.0, 0};
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, cancel_cb, &t, &err), TRN_ERR_CANCELLED);
    CHECK_CONTAINS(err.message, "thermal: cancelled");
    CHECK_EQ_INT(t.seen, 5);
    CHECK(memcmp(&r, &sentinel, sizeof r) == 0);
    /* Progress runs forwards to 1 when nobody cancels. */
    cancel_state u = {NULL, 0, 0, 0.0, 0};
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, cancel_cb, &u, &err));
    CHECK_EQ_INT(u.backwards, 0);
    CHECK(u.last == 1.0);
    trn_erosion_result_dispose(&r);

    trn_erosion_params bad = p;
    bad.radius = 0;
    CHECK_STATUS(trn_erosion_run(&f, &bad, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "radius must be 1..16");
    bad = p;
    bad.inertia = 1.5;
    CHECK_STATUS(trn_erosion_run(&f, &bad, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "inertia must be in [0, 1]");
    bad = p;
    bad.talus_angle = 90.0;
    CHECK_STATUS(trn_erosion_run(&f, &bad, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "talus_angle");
    memset(&r, 0x5a, sizeof r);
    f.heights[3 * 65 + 7] = NAN;
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "sample 202 (x 7, z 3) is not a finite height");
    CHECK(memcmp(&r, &sentinel, sizeof r) == 0);
    trn_field_dispose(&f);
    trn_field tiny;
    CHECK_OK(trn_field_init(&tiny, 1, 1, 1.0, 1.0, NULL));
    tiny.cells_z = 0;
    CHECK_STATUS(trn_erosion_run(&tiny, &p, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "at least 2x2 samples");
    tiny.cells_z = 1;
    trn_field_dispose(&tiny);
}

/* Every parameter's range, at its ends: the limit itself runs, one step beyond is refused
 * (a 2 x 2 grid and one droplet keep the largest counts quick). */
static void test_param_limits(void)
{
    trn_field f;
    make_terrain(&f, 1);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = 1;
    trn_erosion_result r;
    trn_error err;
    static const struct {
        const char *name;
        int field; /* which field below */
        double ok, bad;
    } cases[] = {
        {"iterations must be 0..1000", 0, 1000, 1001},
        {"lifetime must be 1..512", 1, 512, 513},
        {"lifetime must be 1..512", 1, 1, 0},
        {"radius must be 1..16", 2, 16, 17},
        {"thermal_iterations must be 0..10000", 3, 10000, 10001},
        {"droplet_density must be in [0, 64]", 4, 64, 64.001},
        {"talus_angle must be in [0, 89] degrees", 5, 89, 89.001},
        {"erosion_rate must be in [0, 1]", 6, 1, 1.001},
        {"droplet_cell must be in [0, 1e6]", 7, 1e6, -0.001},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int k = 0; k < 2; k++) {
            trn_erosion_params q = p;
            const double v = k ? cases[c].bad : cases[c].ok;
            switch (cases[c].field) {
            case 0:
                q.iterations = (uint32_t)v;
                break;
            case 1:
                q.lifetime = (uint32_t)v;
                break;
            case 2:
                q.radius = (uint32_t)v;
                break;
            case 3:
                q.thermal_iterations = (uint32_t)v;
                break;
            case 4:
                q.droplets = 0;
                q.droplet_density = v;
                break;
            case 5:
                q.talus_angle = v;
                break;
            case 6:
                q.erosion_rate = v;
                break;
            default:
                q.droplet_cell = v;
                break;
            }
            trn_status st = trn_erosion_run(&f, &q, 1, &r, NULL, NULL, &err);
            if (k) {
                CHECK_STATUS(st, TRN_ERR_INVALID_ARGUMENT);
                CHECK_CONTAINS(err.message, cases[c].name);
            } else {
                CHECK_OK(st);
                if (!st) trn_erosion_result_dispose(&r);
            }
        }
    }
    trn_field_dispose(&f);
}

/* One thermal pass, exactly: a 16 m spike on a flat 3 x 3 field, talus 0, strength 0.5. Each
 * of the 8 neighbours takes strength / 16 of the difference (0.5 m), the spike keeps 12 m. */
static void test_thermal_one_pass(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 2, 2, 2.0, 2.0, NULL));
    f.heights[4] = 16.0f;
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplet_density = 0.0;
    p.talus_angle = 0.0;
    p.thermal_strength = 0.5;
    p.thermal_iterations = 1;
    trn_erosion_result r;
    CHECK_OK(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, NULL));
    for (int i = 0; i < 9; i++)
        CHECK(r.field.heights[i] == (i == 4 ? 12.0f : 0.5f));
    trn_erosion_result_dispose(&r);
    trn_field_dispose(&f);
}

/* A row-band run over a field in memory: reads in order, writes checked to come in order. */
typedef struct rows_mem {
    const float *in;
    float *out;
    size_t nx, next_read, next_write, max_chunk;
} rows_mem;

static trn_status rows_read(void *user, size_t z0, size_t count, float *rows, trn_error *err)
{
    (void)err;
    rows_mem *m = user;
    CHECK(z0 == m->next_read);
    CHECK(count <= m->max_chunk);
    m->next_read = z0 + count;
    memcpy(rows, m->in + z0 * m->nx, count * m->nx * sizeof(float));
    return TRN_OK;
}

static trn_status rows_write(void *user, size_t z0, size_t count, const float *rows, trn_error *err)
{
    (void)err;
    rows_mem *m = user;
    CHECK(z0 == m->next_write);
    CHECK(count <= m->max_chunk);
    m->next_write = z0 + count;
    memcpy(m->out + z0 * m->nx, rows, count * m->nx * sizeof(float));
    return TRN_OK;
}

/* The row-band run gives the whole-grid run's heights and ledger bit for bit: droplets with
 * tiles of 2 * (lifetime + radius + 2) + 2 samples (20 here, 44 with the default walk), two
 * passes, thermal passes with their halo, chunks of 1, 7, 20, 64 and more rows than the grid,
 * on grids the tiles and chunks do not divide, one and two threads. */
static void test_rows_equal_whole(void)
{
    const uint32_t sizes[2][2] = {{130, 97}, {61, 200}};
    for (int g = 0; g < 2; g++) {
        trn_field f;
        make_terrain(&f, 128);
        trn_field shaped;
        CHECK_OK(trn_field_init(&shaped, sizes[g][0], sizes[g][1], sizes[g][0] * 1.5,
                                sizes[g][1] * 1.5, NULL));
        const size_t nx = sizes[g][0] + 1u, nz = sizes[g][1] + 1u;
        for (size_t z = 0; z < nz; z++)
            for (size_t x = 0; x < nx; x++)
                shaped.heights[z * nx + x] =
                    f.heights[(z % 129) * 129 + x % 129] + 0.01f * (float)z;
        trn_erosion_params p;
        trn_erosion_params_default(&p, TRN_EROSION_FINAL);
        p.lifetime = g ? 30 : 6;
        p.radius = g ? 3 : 2;
        p.iterations = g ? 1 : 2;
        p.droplet_density = 0.7;
        p.thermal_iterations = g ? 10 : 3;
        p.talus_angle = 25.0;
        trn_erosion_result whole;
        CHECK_OK(trn_erosion_run(&shaped, &p, 41, &whole, NULL, NULL, NULL));
        float lo, hi;
        trn_field_range(&shaped, &lo, &hi);
        const size_t chunks[5] = {1, 7, 20, 64, 1000};
        for (int c = 0; c < 5; c++)
            for (int threads = 1; threads <= 2; threads++) {
                float *out = calloc(nx * nz, sizeof(float));
                rows_mem m = {shaped.heights, out, nx, 0, 0, chunks[c]};
                trn_erosion_rows_io io = {rows_read, rows_write, &m, chunks[c], false};
                trn_erosion_ledger l;
                p.threads = threads;
                CHECK_OK(trn_erosion_run_rows(nx, nz, shaped.size_x, shaped.size_z, &p, 41, lo, hi,
                                              &io, &l, NULL, NULL, NULL));
                CHECK(m.next_read == nz && m.next_write == nz);
                CHECK(memcmp(out, whole.field.heights, nx * nz * sizeof(float)) == 0);
                CHECK(l.eroded == whole.ledger.eroded && l.deposited == whole.ledger.deposited);
                CHECK(l.steps == whole.ledger.steps && l.droplets == whole.ledger.droplets);
                free(out);
            }
        p.threads = 0;
        /* What it refuses: a rate scale, the transport mode. */
        rows_mem m = {shaped.heights, NULL, nx, 0, 0, 8};
        trn_erosion_rows_io io = {rows_read, rows_write, &m, 8, false};
        trn_erosion_ledger l;
        p.mode = TRN_EROSION_TRANSPORT;
        CHECK(trn_erosion_run_rows(nx, nz, 1, 1, &p, 41, lo, hi, &io, &l, NULL, NULL, NULL) ==
              TRN_ERR_UNSUPPORTED);
        trn_erosion_result_dispose(&whole);
        trn_field_dispose(&shaped);
        trn_field_dispose(&f);
    }
}

/* The same ridged world, 256 x 256 units, on a grid of cells x cells. */
static void make_world(trn_field *f, uint32_t cells)
{
    CHECK_OK(trn_field_init(f, cells, cells, 256.0, 256.0, NULL));
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "world";
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 80.0;
    lf.feature_size = 160.0;
    lf.roughness = 0.5;
    lf.octaves = 4;
    lf.warp_feature_size = 256.0;
    lf.stretch = 1.0;
    CHECK_OK(trn_landform_fill(&lf, 11, f, NULL, NULL, NULL));
}

/* The droplets' gully spacing in world units: the mean distance along rows and columns between
 * the gullies they cut (lowered samples, lowered more than both neighbours). */
static double gully_spacing(const trn_field *f, const float *change)
{
    const size_t nx = (size_t)f->cells_x + 1, nz = (size_t)f->cells_z + 1;
    size_t valleys = 0;
    for (size_t z = 1; z + 1 < nz; z++)
        for (size_t x = 1; x + 1 < nx; x++) {
            const float c = change[z * nx + x];
            if (!(c < 0.0f)) continue;
            valleys += c < change[z * nx + x - 1] && c < change[z * nx + x + 1];
            valleys += c < change[(z - 1) * nx + x] && c < change[(z + 1) * nx + x];
        }
    return valleys ? 2.0 * (double)(nz - 2) * f->size_x / (double)valleys : 1e30;
}

/* droplet_cell makes the droplets' sizes those of the world: the same world on a grid four
 * times as fine gets gullies as far apart as on the coarse grid (with the brush, steps and
 * density in samples they come four times as close), on any thread count; on a grid as coarse
 * as the droplet cell it changes nothing. */
static void test_droplet_cell_world_size(void)
{
    trn_field coarse, fine;
    make_world(&coarse, 64);
    make_world(&fine, 256);
    trn_erosion_params p;
    hydraulic_only(&p);
    p.droplet_density = 4.0;
    trn_erosion_result rc, rc0, rf, rf0, rf1;
    CHECK_OK(trn_erosion_run(&coarse, &p, 5, &rc0, NULL, NULL, NULL));
    p.droplet_cell = 4.0;
    CHECK_OK(trn_erosion_run(&coarse, &p, 5, &rc, NULL, NULL, NULL));
    const size_t nc = trn_field_sample_count(&coarse), nf = trn_field_sample_count(&fine);
    CHECK(memcmp(rc.field.heights, rc0.field.heights, nc * sizeof(float)) == 0);
    p.threads = 2;
    CHECK_OK(trn_erosion_run(&fine, &p, 5, &rf, NULL, NULL, NULL));
    p.threads = 1;
    CHECK_OK(trn_erosion_run(&fine, &p, 5, &rf1, NULL, NULL, NULL));
    CHECK(memcmp(rf.field.heights, rf1.field.heights, nf * sizeof(float)) == 0);
    /* The droplets ran on the 65^2 droplet grid: its density, its samples. */
    CHECK_EQ_INT(rf.ledger.droplets, rc.ledger.droplets);
    CHECK_EQ_INT(rf.ledger.droplets, 4 * 65 * 65);
    /* Material in the field's samples: the field's net change is what left it, as on any grid. */
    double net = 0.0;
    for (size_t i = 0; i < nf; i++)
        net += (double)rf.change[i];
    const double left = rf.ledger.exported + rf.ledger.suspended;
    CHECK(left > 0.0 && fabs(net + left) < 0.1 * left);
    CHECK(fabs(rf.ledger.eroded - (rf.ledger.deposited + left)) <= 1e-6 * rf.ledger.eroded);
    p.droplet_cell = 0.0;
    CHECK_OK(trn_erosion_run(&fine, &p, 5, &rf0, NULL, NULL, NULL));
    const double sc = gully_spacing(&coarse, rc.change);
    const double sf = gully_spacing(&fine, rf.change);
    const double sf0 = gully_spacing(&fine, rf0.change);
    CHECK(sc > 4.0 && sc < 256.0);
    CHECK(sf > 0.75 * sc && sf < 1.33 * sc);
    CHECK(sf0 < 0.5 * sc);
    trn_erosion_result_dispose(&rc);
    trn_erosion_result_dispose(&rc0);
    trn_erosion_result_dispose(&rf);
    trn_erosion_result_dispose(&rf0);
    trn_erosion_result_dispose(&rf1);
    trn_field_dispose(&coarse);
    trn_field_dispose(&fine);
}

/* On a grid scanned by rows on the threads, a height that is not finite is found whichever
 * thread's rows hold it, and the first one (in sample order) is named, on the field's own grid
 * and with a droplet grid. */
static void test_not_finite_on_threads(void)
{
    trn_field f;
    make_terrain(&f, 300); /* 301^2 samples: scanned on the threads */
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = 100;
    p.threads = 3;
    f.heights[295 * 301 + 3] = INFINITY;
    f.heights[290 * 301 + 17] = NAN;
    trn_erosion_result r;
    memset(&r, 0, sizeof r);
    trn_error err;
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "sample 87307 (x 17, z 290) is not a finite height");
    p.droplet_cell = 4.0;
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "sample 87307 (x 17, z 290) is not a finite height");
    f.heights[290 * 301 + 17] = 1.0f;
    p.droplet_cell = 0.0;
    CHECK_STATUS(trn_erosion_run(&f, &p, 1, &r, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "sample 88798 (x 3, z 295) is not a finite height");
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_rows_equal_whole);
    RUN(test_ledger_balance);
    RUN(test_threads_bit_identical);
    RUN(test_small_tiles_any_threads);
    RUN(test_queue_stealing);
    RUN(test_tiny_grid);
    RUN(test_flat_does_nothing);
    RUN(test_tilted_plane);
    RUN(test_thermal);
    RUN(test_thermal_one_pass);
    RUN(test_preview_differs);
    RUN(test_cancel_and_errors);
    RUN(test_not_finite_on_threads);
    RUN(test_param_limits);
    RUN(test_droplet_cell_world_size);
    return trn_test_finish();
}
