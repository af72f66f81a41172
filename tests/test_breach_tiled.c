/* Tests: breaching over tiles gives trn_drainage_breach's whole-grid bytes for every tiling. */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "comm_threads.h"
#include "terrane/drainage.h"
#include "terrane/drainage_tiled.h"
#include "test.h"

/* Smooth valleys with fine noise: long rivers across tiles, many pits to breach. */
static void valleys(trn_field *f, uint32_t seed)
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

/* Coarse steps: flats, ties and pits whose notches run several floats deep. */
static void terraces(trn_field *f, uint32_t seed)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const double smooth = 20.0 * sin((double)i * 0.21) * cos((double)j * 0.17);
            const uint32_t r = trn_test_mix32((uint32_t)(j * nx + i) ^ trn_test_mix32(seed));
            f->heights[j * nx + i] = (float)floor(smooth + (double)(r % 7u));
        }
}

/* Heights around zero of both signs and the smallest floats: the notch crosses +0 and -0. */
static void zeros(trn_field *f)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    static const float pick[] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, 2 * FLT_TRUE_MIN, 1.0f};
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++)
            f->heights[j * nx + i] = pick[trn_test_mix32((uint32_t)(j * nx + i)) % 6u];
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

static trn_status paste(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                        const float *values, trn_error *err)
{
    (void)err;
    float *out = user;
    const size_t nx = (size_t)g_field->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)(j0 + lj) * nx + i0, values + (size_t)lj * w, w * sizeof(float));
    return TRN_OK;
}

/* The whole grid's breach (on threads) against the tiled one, for each tile size. */
static void compare(const trn_field *f, double sea, const char *what)
{
    static const uint32_t sizes[] = {1, 2, 3, 7, 16, 23, 64, 1000};
    const size_t n = ((size_t)f->cells_x + 1u) * ((size_t)f->cells_z + 1u);
    float *whole = malloc(n * sizeof *whole), *tiled = malloc(n * sizeof *tiled);
    CHECK(whole && tiled);
    g_field = f;
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        trn_drainage d;
        CHECK_OK(trn_drainage_compute(f, sea, &d, NULL, NULL, NULL));
        trn_field w = *f;
        memcpy(whole, f->heights, n * sizeof *whole);
        w.heights = whole;
        CHECK_OK(trn_drainage_breach(&w, &d, NULL));
        CHECK(memcmp(whole, f->heights, n * sizeof *whole) != 0); /* something was breached */
        trn_drainage_dispose(&d);
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            trn_comm *comm = trn_comm_serial_new();
            trn_drainage_tiling g = {f->cells_x, f->cells_z, f->size_x, f->size_z,
                                     sea,        sizes[s],   0,         0};
            trn_drainage_tiles *t = NULL;
            CHECK_OK(
                trn_drainage_tiled_compute(comm, &g, field_heights, NULL, &t, NULL, NULL, NULL));
            memset(tiled, 0xff, n * sizeof *tiled);
            CHECK_OK(trn_drainage_tiles_breach(t, field_heights, NULL, paste, tiled, NULL));
            const bool ok = memcmp(whole, tiled, n * sizeof *tiled) == 0;
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "  %s: tiles of %u, %d threads differ\n", what, sizes[s], threads);
            trn_drainage_tiles_free(t);
            trn_comm_free(comm);
        }
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    free(whole);
    free(tiled);
}

static void test_valleys(void)
{
    trn_field f;
    trn_field_init(&f, 150, 97, 300.0, 194.0, NULL); /* 151 x 98: no tile size divides it */
    valleys(&f, 3);
    compare(&f, NAN, "valleys");
    compare(&f, 0.0, "valleys with sea");
    trn_field_dispose(&f);
}

static void test_terraces(void)
{
    trn_field f;
    trn_field_init(&f, 120, 88, 240.0, 176.0, NULL);
    terraces(&f, 5);
    compare(&f, NAN, "terraces");
    trn_field_dispose(&f);
}

static void test_zeros(void)
{
    trn_field f;
    trn_field_init(&f, 60, 45, 60.0, 45.0, NULL);
    zeros(&f);
    compare(&f, NAN, "zeros");
    trn_field_dispose(&f);
}

/* ---- several processes in one: threads meeting at a barrier (comm_threads.h) ---- */

typedef struct bp_job {
    th_impl impl;
    const trn_field *field;
    double sea;
    uint32_t tile;
    bool p2p;
    float *out;     /* every process pastes its own tiles: they do not overlap */
    size_t emitted; /* tiles this process emitted */
    trn_status st;
} bp_job;

static trn_status job_paste(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                            const float *values, trn_error *err)
{
    bp_job *job = user;
    job->emitted++;
    return paste(job->out, i0, j0, w, h, values, err);
}

static void *bp_run(void *arg)
{
    bp_job *job = arg;
    trn_comm *comm = trn_comm_new(job->p2p ? &th_ops_p2p : &th_ops, &job->impl, job->impl.rank,
                                  job->impl.sh->size);
    const trn_field *f = job->field;
    trn_drainage_tiling g = {f->cells_x, f->cells_z, f->size_x, f->size_z,
                             job->sea,   job->tile,  0,         0};
    trn_drainage_tiles *t = NULL;
    job->st = trn_drainage_tiled_compute(comm, &g, field_heights, NULL, &t, NULL, NULL, NULL);
    if (!job->st)
        job->st =
            trn_drainage_tiles_breach_split(t, comm, field_heights, NULL, job_paste, job, NULL);
    trn_drainage_tiles_free(t);
    trn_comm_free(comm);
    return NULL;
}

/* The breach split across processes (threads) gives the one-process tiled bytes, each process
 * emitting only its own tiles. */
static void test_processes(void)
{
    trn_field f;
    trn_field_init(&f, 150, 97, 300.0, 194.0, NULL); /* no tile size divides 151 x 98 */
    valleys(&f, 7);
    g_field = &f;
    const size_t n = 151u * 98u;
    float *one = malloc(n * sizeof *one), *split = malloc(n * sizeof *split);
    CHECK(one && split);
    static const int procs[] = {1, 2, 3, 4, 7};
    static const uint32_t tiles[] = {9, 16, 40};
    for (size_t k = 0; k < sizeof tiles / sizeof *tiles; k++) {
        trn_comm *comm = trn_comm_serial_new();
        trn_drainage_tiling g = {f.cells_x, f.cells_z, f.size_x, f.size_z, NAN, tiles[k], 0, 0};
        trn_drainage_tiles *t = NULL;
        CHECK_OK(trn_drainage_tiled_compute(comm, &g, field_heights, NULL, &t, NULL, NULL, NULL));
        trn_drainage_tiled_stats s;
        trn_drainage_tiles_stats(t, &s);
        CHECK_OK(trn_drainage_tiles_breach(t, field_heights, NULL, paste, one, NULL));
        trn_drainage_tiles_free(t);
        trn_comm_free(comm);
        for (size_t p = 0; p < sizeof procs / sizeof *procs; p++) {
            memset(split, 0xff, n * sizeof *split);
            th_shared sh;
            memset(&sh, 0, sizeof sh);
            sh.size = procs[p];
            pthread_barrier_init(&sh.bar, NULL, (unsigned)procs[p]);
            pthread_t th[8];
            bp_job jobs[8];
            for (int r = 0; r < procs[p]; r++) {
                memset(&jobs[r], 0, sizeof jobs[r]);
                jobs[r] = (bp_job){{&sh, r}, &f, NAN, tiles[k], (p & 1u) != 0, split, 0, TRN_OK};
                pthread_create(&th[r], NULL, bp_run, &jobs[r]);
            }
            size_t emitted = 0;
            for (int r = 0; r < procs[p]; r++) {
                pthread_join(th[r], NULL);
                CHECK_OK(jobs[r].st);
                emitted += jobs[r].emitted;
            }
            pthread_barrier_destroy(&sh.bar);
            CHECK(emitted == s.tiles); /* each tile once, by its own process */
            const bool ok = memcmp(one, split, n * sizeof *split) == 0;
            CHECK(ok);
            if (!ok) fprintf(stderr, "  tiles of %u, %d processes differ\n", tiles[k], procs[p]);
        }
    }
    free(one);
    free(split);
    trn_field_dispose(&f);
}

static void test_errors(void)
{
    CHECK_STATUS(trn_drainage_tiles_breach(NULL, field_heights, NULL, paste, NULL, NULL),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(
        trn_drainage_tiles_breach_split(NULL, NULL, field_heights, NULL, paste, NULL, NULL),
        TRN_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN(test_valleys);
    RUN(test_terraces);
    RUN(test_zeros);
    RUN(test_processes);
    RUN(test_errors);
    return trn_test_finish();
}
