/* Tests: tiled drainage gives trn_drainage_compute's bytes for every tile size and process count. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gen/drainage_tiled_internal.h"
#include "terrane/drainage.h"
#include "terrane/drainage_tiled.h"
#include "comm_threads.h"
#include "test.h"

static trn_field make_field(uint32_t cx, uint32_t cz)
{
    trn_field f;
    trn_field_init(&f, cx, cz, (double)cx * 2.0, (double)cz * 3.0, NULL);
    return f;
}

/* Noise on coarse steps: many pits, flats and ties. */
static void rough(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double smooth = 20.0 * sin((double)i * 0.21) * cos((double)j * 0.17);
            const uint32_t r = trn_test_mix32((uint32_t)(j * nx + i) ^ trn_test_mix32(seed));
            f->heights[j * nx + i] = (float)floor(smooth + (double)(r % 7u));
        }
}

/* Smooth noise with fine values: few ties, long rivers across tiles. */
static void smooth(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i, z = (double)j;
            const double v = 30.0 * sin(x * 0.05 + seed) * cos(z * 0.07) + 10.0 * sin(x * 0.31) +
                             0.01 * (double)(trn_test_mix32((uint32_t)(j * nx + i) ^ seed) % 1000u);
            f->heights[j * nx + i] = (float)v;
        }
}

/* Big flat-floored basins: a lake wider than a tile, one touching the border, a plateau. */
static void basins(trn_field *f)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            float h = 10.0f;
            const double d1 = hypot((double)i - 20.0, (double)j - 25.0);
            if (d1 < 15.0) h = (float)floor(d1 / 3.0); /* terraced pit */
            const double d2 = hypot((double)i - (double)nx, (double)j - 10.0);
            if (d2 < 12.0) h = 4.0f; /* flat shelf against the east border */
            if (i > nx / 2 && j > nz / 2) h = 6.0f; /* a plateau */
            f->heights[j * nx + i] = h;
        }
    f->heights[(nz - 1) * nx + nx / 2] = 0.0f; /* a low notch on the south border */
}

static bool same(const trn_drainage *a, const trn_drainage *b, size_t n)
{
    return memcmp(a->filled, b->filled, n * sizeof(float)) == 0 &&
           memcmp(a->flow_dir, b->flow_dir, n) == 0 &&
           memcmp(a->accumulation, b->accumulation, n * sizeof(uint32_t)) == 0;
}

static void compare_tilings(const trn_field *f, double sea, const char *what)
{
    static const uint32_t tiles[] = {1, 2, 3, 5, 8, 13, 16, 31, 64, 1000};
    const size_t n = ((size_t)f->cells_x + 1u) * ((size_t)f->cells_z + 1u);
    trn_drainage whole;
    CHECK_OK(trn_drainage_compute(f, sea, &whole, NULL, NULL, NULL));
    for (size_t k = 0; k < sizeof tiles / sizeof *tiles; k++) {
        trn_drainage d;
        memset(&d, 0, sizeof d);
        trn_error err = {0};
        const trn_status st = trn_drainage_compute_tiled(f, sea, tiles[k], &d, NULL, NULL, &err);
        CHECK_OK(st);
        const bool ok = st == TRN_OK && same(&whole, &d, n);
        CHECK(ok);
        if (!ok) fprintf(stderr, "  %s: tile %u differs (%s)\n", what, tiles[k], err.message);
        CHECK_EQ_INT(d.basin_count, 0);
        trn_drainage_dispose(&d);
    }
    trn_drainage_dispose(&whole);
}

static void test_rough(void)
{
    trn_field f = make_field(61, 47);
    rough(&f, 7);
    compare_tilings(&f, NAN, "rough");
    compare_tilings(&f, -3.0, "rough with sea");
    trn_field_dispose(&f);
}

static void test_smooth(void)
{
    trn_field f = make_field(100, 77);
    smooth(&f, 3);
    compare_tilings(&f, NAN, "smooth");
    compare_tilings(&f, 0.0, "smooth with sea");
    trn_field_dispose(&f);
}

/* trn_drainage_basins from the source and a filled surface lists the basins the whole grid's
 * drainage lists, byte for byte (with a sea and without); a tiled drainage's filled surface
 * gives them too. */
static void check_basins_from_filled(const trn_field *f, double sea)
{
    trn_drainage whole, tiled;
    CHECK_OK(trn_drainage_compute(f, sea, &whole, NULL, NULL, NULL));
    CHECK_OK(trn_drainage_compute_tiled(f, sea, 16, &tiled, NULL, NULL, NULL));
    CHECK(whole.basin_count > 0);
    const float *filled[2] = {whole.filled, tiled.filled};
    for (int k = 0; k < 2; k++) {
        trn_basin *b = NULL;
        size_t n = 0;
        CHECK_OK(trn_drainage_basins(f, filled[k], &b, &n, NULL));
        CHECK_EQ_INT(n, whole.basin_count);
        CHECK(b && memcmp(b, whole.basins, n * sizeof *b) == 0);
        free(b);
    }
    trn_drainage_dispose(&whole);
    trn_drainage_dispose(&tiled);
}

static void test_basins_and_flats(void)
{
    trn_field f = make_field(64, 50);
    basins(&f);
    compare_tilings(&f, NAN, "basins");
    check_basins_from_filled(&f, NAN);
    check_basins_from_filled(&f, -0.5);
    trn_basin *none = NULL;
    size_t nn = 7;
    CHECK_EQ_INT(trn_drainage_basins(&f, NULL, &none, &nn, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK(none == NULL && nn == 0);
    /* All flat: every sample drains by flat distances crossing many tiles. */
    for (size_t k = 0; k < 65u * 51u; k++)
        f.heights[k] = 1.0f;
    compare_tilings(&f, NAN, "flat");
    /* Both zeros: a pit at -1 whose rim is -0 on one side, +0 on the other, the zeros
     * reaching the south border. */
    for (size_t k = 0; k < 65u * 51u; k++)
        f.heights[k] = 5.0f;
    for (size_t j = 0; j < 40; j++)
        for (size_t i = 10; i < 50; i++)
            f.heights[j * 65 + i] = (i > 12 && i < 47 && j > 12 && j < 37) ? -1.0f
                                    : i < 30                               ? -0.0f
                                                                           : 0.0f;
    compare_tilings(&f, NAN, "signed zeros");
    trn_field_dispose(&f);
    /* Thin grids: tiles of one row or column. */
    trn_field g = make_field(40, 1);
    rough(&g, 11);
    compare_tilings(&g, NAN, "one row");
    trn_field_dispose(&g);
    g = make_field(1, 30);
    rough(&g, 12);
    compare_tilings(&g, NAN, "one column");
    trn_field_dispose(&g);
}

static const trn_field *g_field;

static trn_status field_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                float *out, trn_error *err)
{
    (void)user;
    (void)err;
    const size_t nx = (size_t)g_field->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)lj * w, g_field->heights + (size_t)(j0 + lj) * nx + i0,
               w * sizeof(float));
    return TRN_OK;
}

/* A flat wider than a tile needs several halo rounds; the graphs are what they should be. */
static void test_stats(void)
{
    trn_field f = make_field(64, 50);
    for (size_t k = 0; k < 65u * 51u; k++)
        f.heights[k] = 1.0f;
    g_field = &f;
    trn_comm *comm = trn_comm_serial_new();
    trn_drainage_tiling g = {64, 50, 64.0, 50.0, NAN, 8, 0, 0};
    trn_drainage_tiles *t = NULL;
    CHECK_OK(trn_drainage_tiled_compute(comm, &g, field_heights, NULL, &t, NULL, NULL, NULL));
    trn_drainage_tiled_stats s;
    trn_drainage_tiles_stats(t, &s);
    CHECK_EQ_INT(s.tiles, 9 * 7);
    CHECK_EQ_INT(s.tiles_owned, 9 * 7);
    /* The middle of the flat is 25 samples from the border: 3 tiles, so 3+ rounds. */
    CHECK(s.flat_rounds >= 3);
    CHECK(s.flow_links > 0);
    CHECK(s.spill_nodes > 1);
    uint32_t i0, j0, w, h;
    const float *fl;
    const uint8_t *dir;
    const uint32_t *acc;
    CHECK_OK(trn_drainage_tiles_tile(t, 62, &i0, &j0, &w, &h, &fl, &dir, &acc));
    CHECK_EQ_INT(i0, 64);
    CHECK_EQ_INT(j0, 48);
    CHECK_EQ_INT(w, 1);
    CHECK_EQ_INT(h, 3);
    CHECK(fl && dir && acc && fl[0] == 1.0f);
    trn_drainage_tiles_free(t);
    trn_comm_free(comm);
    trn_field_dispose(&f);
}

/* ---- several processes in one: threads meeting at a barrier (comm_threads.h) ---- */

typedef struct th_job {
    th_impl impl;
    const trn_field *field;
    double sea;
    uint32_t tile;
    uint32_t nan_rank; /* a process whose heights are broken (UINT32_MAX: none) */
    bool p2p;          /* border strips point to point (else all-gathered) */
    trn_status st;
    trn_drainage out;
    trn_drainage_tiled_stats stats;
    trn_error err;
} th_job;

static trn_status job_heights(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                              float *out, trn_error *err)
{
    (void)err;
    const th_job *job = user;
    const size_t nx = (size_t)job->field->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)lj * w, job->field->heights + (size_t)(j0 + lj) * nx + i0,
               w * sizeof(float));
    if ((uint32_t)job->impl.rank == job->nan_rank) out[0] = NAN;
    return TRN_OK;
}

static void *job_run(void *arg)
{
    th_job *job = arg;
    trn_comm *comm = trn_comm_new(job->p2p ? &th_ops_p2p : &th_ops, &job->impl, job->impl.rank,
                                  job->impl.sh->size);
    const trn_field *f = job->field;
    trn_drainage_tiling g = {f->cells_x, f->cells_z, f->size_x, f->size_z, job->sea, job->tile,
                             0, 0};
    trn_drainage_tiles *t = NULL;
    job->st = trn_drainage_tiled_compute(comm, &g, job_heights, job, &t, NULL, NULL, &job->err);
    if (job->st == TRN_OK) {
        trn_drainage_tiles_stats(t, &job->stats);
        job->st = trn_drainage_tiles_gather(t, comm, &job->out, &job->err);
    }
    trn_drainage_tiles_free(t);
    trn_comm_free(comm);
    return NULL;
}

static void run_procs(const trn_field *f, double sea, uint32_t tile, int procs, uint32_t nan_rank,
                      bool p2p, th_job *jobs)
{
    th_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.size = procs;
    pthread_barrier_init(&sh.bar, NULL, (unsigned)procs);
    pthread_t th[8];
    for (int r = 0; r < procs; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].impl = (th_impl){&sh, r};
        jobs[r].field = f;
        jobs[r].sea = sea;
        jobs[r].tile = tile;
        jobs[r].nan_rank = nan_rank;
        jobs[r].p2p = p2p;
        pthread_create(&th[r], NULL, job_run, &jobs[r]);
    }
    for (int r = 0; r < procs; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&sh.bar);
}

static void test_processes(void)
{
    trn_field f = make_field(90, 70);
    smooth(&f, 5);
    for (size_t k = 0; k < 91u * 71u; k += 13)
        f.heights[k] = floorf(f.heights[k]); /* some ties */
    const size_t n = 91u * 71u;
    trn_drainage whole;
    CHECK_OK(trn_drainage_compute(&f, -5.0, &whole, NULL, NULL, NULL));
    static const int procs[] = {1, 2, 3, 4, 7};
    static const uint32_t tiles[] = {9, 16, 40};
    for (size_t p = 0; p < sizeof procs / sizeof *procs; p++)
        for (size_t k = 0; k < sizeof tiles / sizeof *tiles; k++) {
            /* Border strips all-gathered, then point to point to the neighbours' owners only:
             * the same bytes and flat rounds, and less received once a process has tiles that
             * do not touch another's. */
            uint64_t received[2] = {0, 0};
            size_t rounds[2] = {0, 0};
            for (int mode = 0; mode < 2; mode++) {
                th_job jobs[8];
                run_procs(&f, -5.0, tiles[k], procs[p], UINT32_MAX, mode == 1, jobs);
                rounds[mode] = jobs[0].stats.flat_rounds;
                for (int r = 0; r < procs[p]; r++)
                    received[mode] += jobs[r].stats.bytes_received;
                for (int r = 0; r < procs[p]; r++)
                    CHECK_OK(jobs[r].st);
                const bool ok = jobs[0].st == TRN_OK && same(&whole, &jobs[0].out, n);
                CHECK(ok);
                if (!ok) fprintf(stderr, "  %d processes, tile %u differ\n", procs[p], tiles[k]);
                /* Only process 0 holds the assembled grid; every process owns its share. */
                size_t owned = 0;
                for (int r = 0; r < procs[p]; r++) {
                    owned += jobs[r].stats.tiles_owned;
                    if (r > 0) CHECK(jobs[r].out.filled == NULL);
                    trn_drainage_dispose(&jobs[r].out);
                }
                CHECK_EQ_INT(owned, jobs[0].stats.tiles);
                if (procs[p] > 1) CHECK(jobs[1].stats.bytes_sent > 0);
                if (procs[p] == 1) CHECK_EQ_INT(jobs[0].stats.bytes_sent, 0);
            }
            CHECK_EQ_INT(rounds[0], rounds[1]);
            if (procs[p] >= 3 && tiles[k] == 9) CHECK(received[1] < received[0]);
            if (procs[p] == 1) CHECK_EQ_INT(received[1], 0);
        }
    /* One process's heights are broken: it names the sample, the others say another failed. */
    th_job jobs[8];
    run_procs(&f, -5.0, 16, 3, 2, true, jobs);
    CHECK_EQ_INT(jobs[2].st, TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(jobs[2].err.message, "NaN at sample");
    CHECK_EQ_INT(jobs[0].st, TRN_ERR_MISMATCH);
    CHECK_CONTAINS(jobs[0].err.message, "another process failed");
    trn_drainage_dispose(&whole);
    trn_field_dispose(&f);
}

static void test_errors(void)
{
    trn_field f = make_field(10, 10);
    rough(&f, 1);
    trn_drainage d;
    trn_error err = {0};
    CHECK_STATUS(trn_drainage_compute_tiled(&f, NAN, 0, &d, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "tile of at least 1 sample");
    f.heights[3 * 11 + 4] = NAN;
    CHECK_STATUS(trn_drainage_compute_tiled(&f, NAN, 4, &d, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "NaN at sample (4, 3)");
    trn_field_dispose(&f);
}

static int cancel_at_half(double done, const char *stage, void *user)
{
    (void)stage;
    (void)user;
    return done >= 0.5 ? TRN_CANCEL : 0;
}

static void test_cancel(void)
{
    trn_field f = make_field(30, 30);
    rough(&f, 2);
    trn_drainage d;
    CHECK_STATUS(trn_drainage_compute_tiled(&f, NAN, 8, &d, cancel_at_half, NULL, NULL),
                 TRN_ERR_CANCELLED);
    trn_field_dispose(&f);
}

/* Sample indices of the whole grid are 64-bit: on a 65537^2 grid (the largest a recipe asks
 * for) the far corner is past 2^32. */
static void test_sample_index_64(void)
{
    const size_t nx = 65537;
    /* Sample 5 of a tile 4 wide at (65533, 65535): (65534, 65536). */
    CHECK(trn_dt_sample_index(nx, 65533, 65535, 4, 5) == UINT64_C(65536) * nx + 65534);
    CHECK(trn_dt_sample_index(nx, 65536, 65536, 1, 0) == UINT64_C(65537) * 65537 - 1);
    /* A tall thin grid: 3 samples a row, row 2^31. */
    CHECK(trn_dt_sample_index(3, 1, 0x7FFFFFFFu, 2, 3) == UINT64_C(0x80000000) * 3 + 2);
}

/* Tiles far apart on a 65537^2 grid whose samples' indices are equal modulo 2^32 (row 65535's
 * sample i is i - 1 + 2^32): Barnes 2017's flow graph must keep their exits and entries apart.
 * Only these five tiles are held. In row 0, A = (0, 0) flows east into B = (1, 0), an outlet.
 * In row 65535, C = (3) flows west into D = (2, 1), whose entry flows west and leaves through
 * (1) into E = (0), an outlet. With 32-bit indices A's exit and D's share a key, and so do
 * B's entry and D's. */
static void test_flow_graph_far_rows(void)
{
    const uint8_t east = 0, west = 4;
    uint8_t dir_a[1] = {east}, dir_b[1] = {TRN_DRAIN_OUTLET}, dir_c[1] = {west};
    uint8_t dir_d[2] = {west, west}, dir_e[1] = {TRN_DRAIN_OUTLET};
    uint8_t no[2] = {0, 0}, in_b[1] = {1}, in_d[2] = {0, 1}, in_e[1] = {1};
    uint32_t acc_a[1], acc_b[1], acc_c[1], acc_d[2], acc_e[1];
    trn_dt_tile_flow tiles[5] = {
        {0, 0, 1, 1, dir_a, no, acc_a},       {1, 0, 1, 1, dir_b, in_b, acc_b},
        {3, 65535, 1, 1, dir_c, no, acc_c},   {1, 65535, 2, 1, dir_d, in_d, acc_d},
        {0, 65535, 1, 1, dir_e, in_e, acc_e},
    };
    trn_error err = {0};
    CHECK_OK(trn_dt_flow_tiles(65537, 65537, 5, tiles, &err));
    CHECK_EQ_INT(acc_a[0], 1);
    CHECK_EQ_INT(acc_b[0], 2); /* itself and A */
    CHECK_EQ_INT(acc_c[0], 1);
    CHECK_EQ_INT(acc_d[1], 2); /* itself and C */
    CHECK_EQ_INT(acc_d[0], 3);
    CHECK_EQ_INT(acc_e[0], 4); /* everything in row 65535 */
}

static trn_status first_tile_only(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                                  float *out, trn_error *err)
{
    (void)out;
    uint32_t *seen = user;
    seen[0] = i0;
    seen[1] = j0;
    seen[2] = w;
    seen[3] = h;
    return trn_error_set(err, TRN_ERR_IO, NULL, -1, "stop after the first tile");
}

/* A grid of more than 2^32 samples is taken (only tiles are held): the solver starts on its
 * first tile, where the test stops it. */
static void test_grid_above_2_32(void)
{
    trn_comm *comm = trn_comm_serial_new();
    const trn_drainage_tiling g = {65536, 65536, 65536.0, 65536.0, NAN, 1024, 0, 0};
    uint32_t seen[4] = {9, 9, 9, 9};
    trn_drainage_tiles *t = NULL;
    trn_error err = {0};
    CHECK_STATUS(trn_drainage_tiled_compute(comm, &g, first_tile_only, seen, &t, NULL, NULL, &err),
                 TRN_ERR_IO);
    CHECK_CONTAINS(err.message, "stop after the first tile");
    CHECK(seen[0] == 0 && seen[1] == 0 && seen[2] == 1024 && seen[3] == 1024);
    CHECK(t == NULL);
    /* A tile of 2^32 samples or more is refused: its own indices are 32-bit. */
    const trn_drainage_tiling big = {65536, 65536, 65536.0, 65536.0, NAN, 65537, 0, 0};
    CHECK_STATUS(
        trn_drainage_tiled_compute(comm, &big, first_tile_only, seen, &t, NULL, NULL, &err),
        TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(err.message, "tiles of fewer than 2^32-3 samples, found 65537x65537");
    trn_comm_free(comm);
}

int main(void)
{
    RUN(test_rough);
    RUN(test_smooth);
    RUN(test_basins_and_flats);
    RUN(test_stats);
    RUN(test_processes);
    RUN(test_errors);
    RUN(test_cancel);
    RUN(test_sample_index_64);
    RUN(test_flow_graph_far_rows);
    RUN(test_grid_above_2_32);
    return trn_test_finish();
}
