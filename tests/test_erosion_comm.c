/* Tests: the droplet erosion shared by processes (threads meeting at a barrier for the
 * transport) gives the whole grid's bytes for every band and tile size and process count. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gen/erosion_internal.h"
#include "terrane/comm.h"
#include "terrane/generate.h"
#include "comm_threads.h"
#include "test.h"

/* The same transport without point to point: the library sends through allgather. */
static const trn_comm_ops th_ops_collective = {th_counts, th_allgather, th_gather, th_broadcast,
                                               th_max,    th_free,      NULL};

/* Ridges and a slope across the rows, so droplets run far and cross band borders. */
static void make_field(trn_field *f, uint32_t cx, uint32_t cz)
{
    CHECK_OK(trn_field_init(f, cx, cz, cx * 1.5, cz * 1.5, NULL));
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
    const size_t nx = (size_t)cx + 1u, nz = (size_t)cz + 1u;
    for (size_t z = 0; z < nz; z++)
        for (size_t x = 0; x < nx; x++)
            f->heights[z * nx + x] += 0.05f * (float)z;
}

/* One process's io: reads from the shared input (any rows, in order), writes to its own copy
 * (every row once, in order, in chunks). */
typedef struct proc_io {
    const float *in;
    float *out;
    size_t nx, next_read, next_write, chunk;
    int bad;
    bool fail; /* every read fails (a tile cache that cannot be read) */
} proc_io;

static trn_status io_read(void *user, size_t z0, size_t count, float *rows, trn_error *err)
{
    proc_io *m = user;
    if (m->fail) return trn_error_set(err, TRN_ERR_IO, "cache", -1, "cannot read rows %zu", z0);
    if (z0 < m->next_read || count > m->chunk) m->bad = 1;
    m->next_read = z0 + count;
    memcpy(rows, m->in + z0 * m->nx, count * m->nx * sizeof(float));
    return TRN_OK;
}

static trn_status io_write(void *user, size_t z0, size_t count, const float *rows, trn_error *err)
{
    (void)err;
    proc_io *m = user;
    if (z0 != m->next_write || count > m->chunk) m->bad = 1;
    m->next_write = z0 + count;
    memcpy(m->out + z0 * m->nx, rows, count * m->nx * sizeof(float));
    return TRN_OK;
}

typedef struct job {
    th_shared *sh;
    const trn_comm_ops *ops;
    int rank, size;
    const trn_field *f;
    const trn_erosion_params *p;
    float lo, hi;
    proc_io io;
    trn_erosion_ledger ledger;
    uint64_t droplets, sent;
    trn_status st;
    trn_error err;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    th_impl impl = {j->sh, j->rank};
    trn_comm *comm = trn_comm_new(j->ops, &impl, j->rank, j->size);
    const size_t nx = (size_t)j->f->cells_x + 1u, nz = (size_t)j->f->cells_z + 1u;
    const trn_erosion_rows_io io = {io_read, io_write, &j->io, j->io.chunk};
    j->st = trn_erosion_run_rows_comm(nx, nz, j->f->size_x, j->f->size_z, j->p, 41, j->lo, j->hi,
                                      &io, comm, &j->ledger, &j->droplets, NULL, NULL, &j->err);
    trn_comm_traffic(comm, &j->sent, NULL);
    trn_comm_free(comm);
    return NULL;
}

/* Runs p on f as `size` processes; every one must hold the whole grid's heights and ledger,
 * and the droplets must be shared out (split) or run by each. */
static void check_split(const trn_field *f, const trn_erosion_params *p,
                        const trn_erosion_result *whole, int size, size_t chunk,
                        const trn_comm_ops *ops, bool split, const char *what)
{
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    float lo, hi;
    trn_field_range(f, &lo, &hi);
    th_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.size = size;
    pthread_barrier_init(&sh.bar, NULL, (unsigned)size);
    job jobs[8];
    pthread_t th[8];
    for (int r = 0; r < size; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].sh = &sh;
        jobs[r].ops = ops;
        jobs[r].rank = r;
        jobs[r].size = size;
        jobs[r].f = f;
        jobs[r].p = p;
        jobs[r].lo = lo;
        jobs[r].hi = hi;
        jobs[r].io.in = f->heights;
        jobs[r].io.out = calloc(nx * nz, sizeof(float));
        jobs[r].io.nx = nx;
        jobs[r].io.chunk = chunk;
        pthread_create(&th[r], NULL, run_job, &jobs[r]);
    }
    uint64_t total = 0, sent = 0;
    int busy = 0;
    for (int r = 0; r < size; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < size; r++) {
        job *j = &jobs[r];
        CHECK_OK(j->st);
        if (j->st) fprintf(stderr, "%s: %s\n", what, j->err.message);
        CHECK(!j->io.bad && j->io.next_write == nz);
        const bool same = memcmp(j->io.out, whole->field.heights, nx * nz * sizeof(float)) == 0;
        if (!same)
            fprintf(stderr, "%s: process %d of %d differs from the whole grid\n", what, r, size);
        CHECK(same);
        CHECK(j->ledger.eroded == whole->ledger.eroded);
        CHECK(j->ledger.deposited == whole->ledger.deposited);
        CHECK(j->ledger.exported == whole->ledger.exported);
        CHECK(j->ledger.steps == whole->ledger.steps);
        CHECK(j->ledger.droplets == whole->ledger.droplets);
        total += j->droplets;
        sent += j->sent;
        busy += j->droplets > 0;
        free(j->io.out);
    }
    pthread_barrier_destroy(&sh.bar);
    /* Split: the droplets shared out, each run once; else every process ran them all. */
    if (split) {
        CHECK(total == whole->ledger.droplets);
        CHECK(busy > 1);
        CHECK(sent > 0);
    } else {
        CHECK(total == whole->ledger.droplets * (uint64_t)size);
    }
}

/* Bands of 1 to 10 tile rows (tiles of 22 and 44 samples), processes without a tile row,
 * two passes, thermal passes with their halo, chunks that do not divide the grid; point to
 * point and through the collective. */
static void test_split_equals_whole(void)
{
    const uint32_t sizes[2][2] = {{130, 97}, {61, 200}};
    for (int g = 0; g < 2; g++) {
        trn_field f;
        make_field(&f, sizes[g][0], sizes[g][1]);
        trn_erosion_params p;
        trn_erosion_params_default(&p, TRN_EROSION_FINAL);
        p.lifetime = g ? 16 : 6; /* tiles of 44 and 22 samples: 5 and 5 rows of tiles */
        p.radius = g ? 3 : 2;
        p.iterations = g ? 1 : 2;
        p.droplet_density = 0.7;
        p.thermal_iterations = g ? 10 : 3;
        p.talus_angle = 25.0;
        p.threads = 1;
        trn_erosion_result whole;
        CHECK_OK(trn_erosion_run(&f, &p, 41, &whole, NULL, NULL, NULL));
        const int procs[4] = {2, 3, 4, 7};
        const size_t chunks[3] = {1, 7, 64};
        for (int q = 0; q < 4; q++)
            for (int c = 0; c < 3; c++) {
                char what[96];
                snprintf(what, sizeof what, "grid %d, %d processes, chunk %zu", g, procs[q],
                         chunks[c]);
                check_split(&f, &p, &whole, procs[q], chunks[c], &th_ops, true, what);
            }
        check_split(&f, &p, &whole, 3, 20, &th_ops_collective, true, "through allgather");
        p.threads = 2;
        check_split(&f, &p, &whole, 2, 20, &th_ops, true, "two threads");
        trn_erosion_result_dispose(&whole);
        trn_field_dispose(&f);
    }
}

/* More thermal passes than a tile row's samples: each process runs the whole grid (the
 * same bytes, nothing shared). */
static void test_wide_thermal_whole(void)
{
    trn_field f;
    make_field(&f, 70, 90);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.lifetime = 6;
    p.radius = 2;
    p.droplet_density = 0.5;
    p.thermal_iterations = 23; /* tiles of 22 */
    p.threads = 1;
    trn_erosion_result whole;
    CHECK_OK(trn_erosion_run(&f, &p, 41, &whole, NULL, NULL, NULL));
    check_split(&f, &p, &whole, 3, 16, &th_ops, false, "wide thermal");
    p.thermal_iterations = 22; /* the widest that is shared */
    trn_erosion_result_dispose(&whole);
    CHECK_OK(trn_erosion_run(&f, &p, 41, &whole, NULL, NULL, NULL));
    check_split(&f, &p, &whole, 3, 16, &th_ops, true, "thermal as wide as a tile");
    trn_erosion_result_dispose(&whole);
    trn_field_dispose(&f);
}

/* A process whose input cannot be read reports its own error; the others stop with "another
 * process failed", none hanging in an exchange. */
static void test_failure_agreed(void)
{
    trn_field f;
    make_field(&f, 70, 90);
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.lifetime = 6;
    p.radius = 2;
    p.thermal_iterations = 2;
    p.threads = 1;
    const size_t nx = 71, nz = 91;
    float lo, hi;
    trn_field_range(&f, &lo, &hi);
    th_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.size = 3;
    pthread_barrier_init(&sh.bar, NULL, 3);
    job jobs[3];
    pthread_t th[3];
    for (int r = 0; r < 3; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].sh = &sh;
        jobs[r].ops = &th_ops;
        jobs[r].rank = r;
        jobs[r].size = 3;
        jobs[r].f = &f;
        jobs[r].p = &p;
        jobs[r].lo = lo;
        jobs[r].hi = hi;
        jobs[r].io.in = f.heights;
        jobs[r].io.out = calloc(nx * nz, sizeof(float));
        jobs[r].io.nx = nx;
        jobs[r].io.chunk = 16;
        jobs[r].io.fail = r == 1;
        pthread_create(&th[r], NULL, run_job, &jobs[r]);
    }
    for (int r = 0; r < 3; r++)
        pthread_join(th[r], NULL);
    CHECK_STATUS(jobs[1].st, TRN_ERR_IO);
    CHECK_CONTAINS(jobs[1].err.message, "cannot read rows");
    for (int r = 0; r < 3; r += 2) {
        CHECK_STATUS(jobs[r].st, TRN_ERR_MISMATCH);
        CHECK_CONTAINS(jobs[r].err.message, "another process failed");
        CHECK(jobs[r].io.next_write == 0);
    }
    for (int r = 0; r < 3; r++)
        free(jobs[r].io.out);
    pthread_barrier_destroy(&sh.bar);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_split_equals_whole);
    RUN(test_wide_thermal_whole);
    RUN(test_failure_agreed);
    return trn_test_finish();
}
