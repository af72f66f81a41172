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

/* th_ops_p2p: point to point (as MPI); th_ops: without it, so the library sends through
 * allgather. */

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
 * (every row once, in order, in chunks; keeping its own rows: its chunks in order, each noted in
 * wrote). */
typedef struct proc_io {
    const float *in;
    float *out;
    size_t nx, next_read, next_write, chunk;
    int bad;
    bool fail;      /* every read fails (a tile cache that cannot be read) */
    bool keep;      /* own_rows */
    uint8_t *wrote; /* per row: written by this process */
    size_t rows_written;
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
    if (m->keep ? z0 < m->next_write || z0 % m->chunk != 0 : z0 != m->next_write) m->bad = 1;
    if (count > m->chunk) m->bad = 1;
    /* A last chunk of one row goes with the chunk before it (a tile cache stores them
     * together). */
    if (m->keep && count == 1 && m->chunk > 1 && z0 > 0 && !m->wrote[z0 - 1]) m->bad = 1;
    m->next_write = z0 + count;
    memcpy(m->out + z0 * m->nx, rows, count * m->nx * sizeof(float));
    memset(m->wrote + z0, 1, count);
    m->rows_written += count;
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
    uint64_t droplets, sent, received;
    trn_status st;
    trn_error err;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    th_impl impl = {j->sh, j->rank};
    trn_comm *comm = trn_comm_new(j->ops, &impl, j->rank, j->size);
    const size_t nx = (size_t)j->f->cells_x + 1u, nz = (size_t)j->f->cells_z + 1u;
    const trn_erosion_rows_io io = {io_read, io_write, &j->io, j->io.chunk, j->io.keep};
    j->st = trn_erosion_run_rows_comm(nx, nz, j->f->size_x, j->f->size_z, j->p, 41, j->lo, j->hi,
                                      &io, comm, &j->ledger, &j->droplets, NULL, NULL, &j->err);
    trn_comm_traffic(comm, &j->sent, &j->received);
    trn_comm_free(comm);
    return NULL;
}

/* Runs p on f as `size` processes; every one must hold the whole grid's heights and ledger
 * (keep: every row written by exactly one process, none writing them all, the rows together the
 * whole grid's), and the droplets must be shared out (split) or run by each. Returns the bytes
 * the processes received in all. */
static uint64_t check_run(const trn_field *f, const trn_erosion_params *p,
                          const trn_erosion_result *whole, int size, size_t chunk,
                          const trn_comm_ops *ops, bool split, bool keep, const char *what)
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
        jobs[r].io.keep = keep;
        jobs[r].io.wrote = calloc(nz, 1);
        pthread_create(&th[r], NULL, run_job, &jobs[r]);
    }
    uint64_t total = 0, sent = 0, received = 0;
    float *kept = calloc(nx * nz, sizeof(float));
    uint8_t *writers = calloc(nz, 1);
    int busy = 0;
    for (int r = 0; r < size; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < size; r++) {
        job *j = &jobs[r];
        CHECK_OK(j->st);
        if (j->st) fprintf(stderr, "%s: %s\n", what, j->err.message);
        CHECK(!j->io.bad);
        if (keep) {
            /* Its own rows only: fewer than the grid's (unless one chunk and a last row of
             * one sample stored with it make the whole grid). */
            CHECK(j->io.rows_written < nz || chunk >= nz - 1);
            for (size_t z = 0; z < nz; z++)
                if (j->io.wrote[z]) {
                    writers[z]++;
                    memcpy(kept + z * nx, j->io.out + z * nx, nx * sizeof(float));
                }
        } else {
            CHECK(j->io.next_write == nz && j->io.rows_written == nz);
            const bool same = memcmp(j->io.out, whole->field.heights, nx * nz * sizeof(float)) == 0;
            if (!same)
                fprintf(stderr, "%s: process %d of %d differs from the whole grid\n", what, r,
                        size);
            CHECK(same);
        }
        CHECK(j->ledger.eroded == whole->ledger.eroded);
        CHECK(j->ledger.deposited == whole->ledger.deposited);
        CHECK(j->ledger.exported == whole->ledger.exported);
        CHECK(j->ledger.steps == whole->ledger.steps);
        CHECK(j->ledger.droplets == whole->ledger.droplets);
        total += j->droplets;
        sent += j->sent;
        received += j->received;
        busy += j->droplets > 0;
        free(j->io.out);
        free(j->io.wrote);
    }
    if (keep) {
        size_t once = 0;
        for (size_t z = 0; z < nz; z++)
            once += writers[z] == 1;
        CHECK(once == nz);
        const bool same = memcmp(kept, whole->field.heights, nx * nz * sizeof(float)) == 0;
        if (!same) fprintf(stderr, "%s: the rows kept differ from the whole grid\n", what);
        CHECK(same);
    }
    free(kept);
    free(writers);
    pthread_barrier_destroy(&sh.bar);
    /* Split: the droplets shared out, each run once; else every process ran them all. */
    if (split) {
        CHECK(total == whole->ledger.droplets);
        CHECK(busy > 1);
        CHECK(sent > 0);
    } else {
        CHECK(total == whole->ledger.droplets * (uint64_t)size);
    }
    return received;
}

/* As check_run, every process writing every row. */
static void check_split(const trn_field *f, const trn_erosion_params *p,
                        const trn_erosion_result *whole, int size, size_t chunk,
                        const trn_comm_ops *ops, bool split, const char *what)
{
    (void)check_run(f, p, whole, size, chunk, ops, split, false, what);
}

/* Each process keeping its own rows (own_rows) writes each row once between them, and receives
 * less than when every process writes the whole result by (size - 1) grids, less fewer than a
 * chunk from each process: none gathers the whole result. */
static void check_keep(const trn_field *f, const trn_erosion_params *p,
                       const trn_erosion_result *whole, int size, size_t chunk,
                       const trn_comm_ops *ops, bool split, const char *what)
{
    const uint64_t all = check_run(f, p, whole, size, chunk, ops, split, false, what);
    const uint64_t own = check_run(f, p, whole, size, chunk, ops, split, true, what);
    const uint64_t row = ((uint64_t)f->cells_x + 1u) * sizeof(float);
    const uint64_t grid = row * ((uint64_t)f->cells_z + 1u);
    if (ops == &th_ops_p2p && split) {
        const bool less = own + (uint64_t)(size - 1) * grid <= all + (uint64_t)size * chunk * row;
        if (!less)
            fprintf(stderr, "%s: %llu bytes received keeping own rows, %llu writing all\n", what,
                    (unsigned long long)own, (unsigned long long)all);
        CHECK(less);
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
                check_split(&f, &p, &whole, procs[q], chunks[c], &th_ops_p2p, true, what);
            }
        check_split(&f, &p, &whole, 3, 20, &th_ops, true, "through allgather");
        /* Each process keeping its own rows: chunks smaller and larger than a band, a last
         * chunk of one row (98 and 201 rows: chunk 97 and 200), processes without a band. */
        const size_t keeps[4] = {1, 7, 64, g ? 200 : 97};
        for (int q = 0; q < 4; q++)
            for (int c = 0; c < 4; c++) {
                char what[96];
                snprintf(what, sizeof what, "keep: grid %d, %d processes, chunk %zu", g, procs[q],
                         keeps[c]);
                check_keep(&f, &p, &whole, procs[q], keeps[c], &th_ops_p2p, true, what);
            }
        check_keep(&f, &p, &whole, 3, 20, &th_ops, true, "keep through allgather");
        p.threads = 2;
        check_split(&f, &p, &whole, 2, 20, &th_ops_p2p, true, "two threads");
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
    check_split(&f, &p, &whole, 3, 16, &th_ops_p2p, false, "wide thermal");
    check_keep(&f, &p, &whole, 3, 16, &th_ops_p2p, false, "wide thermal, keep");
    check_keep(&f, &p, &whole, 3, 90, &th_ops_p2p, false, "wide thermal, keep, last row");
    p.thermal_iterations = 22; /* the widest that is shared */
    trn_erosion_result_dispose(&whole);
    CHECK_OK(trn_erosion_run(&f, &p, 41, &whole, NULL, NULL, NULL));
    check_split(&f, &p, &whole, 3, 16, &th_ops_p2p, true, "thermal as wide as a tile");
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
        jobs[r].ops = &th_ops_p2p;
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
        jobs[r].io.wrote = calloc(nz, 1);
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
    for (int r = 0; r < 3; r++) {
        free(jobs[r].io.out);
        free(jobs[r].io.wrote);
    }
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
