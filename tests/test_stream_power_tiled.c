/* Tests: stream power in tiles gives trn_stream_power_run's bytes for every tile size and process
 * count. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gen/stream_power_tiled.h"
#include "terrane/comm.h"
#include "terrane/landscape.h"
#include "comm_threads.h"
#include "test.h"

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
            const uint32_t r = trn_test_mix32((uint32_t)(j * nx + i) ^ trn_test_mix32(seed));
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
    double rock;  /* diffusion_rock: creep varying with the erodibility mask (0: uniform) */
    int threads;  /* 0: as many as OpenMP gives */
    double deposition; /* G (Yuan et al. 2019): 0 none */
} config;

/* The whole grid against tiles of each size (dividing the grid or not, one tile, tiles of one
 * sample), heights and drainage area. */
/* The uplift (0..1) and erodibility (0.5..2.5) masks every check draws from the sample index. */
static void fill_masks(float *um, float *km, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        um[k] = (float)(trn_test_mix32((uint32_t)k) % 100u) / 100.0f;
        km[k] = 0.5f + (float)(trn_test_mix32((uint32_t)k * 3u) % 100u) / 50.0f;
    }
}

/* The solver's parameters for a configuration: its routing, borders, sea, masks, creep,
 * threads and deposition, over `steps` steps, the drainage area into aw. */
static void config_params(const config *c, unsigned steps, float *um, float *km, float *aw,
                          trn_stream_power_params *out)
{
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = steps;
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
    p.diffusion_rock = c->rock;
    p.threads = c->threads;
    p.deposition = c->deposition;
    p.seed = 42;
    p.drainage_area = aw;
    *out = p;
}

static void check_config(const config *c, uint32_t cx, uint32_t cz, const char *dir)
{
    trn_field whole = rough(cx, cz, 7), tiled = rough(cx, cz, 7);
    const size_t n = trn_field_sample_count(&whole);
    float *um = malloc(n * sizeof *um), *km = malloc(n * sizeof *km);
    float *aw = malloc(n * sizeof *aw), *at = malloc(n * sizeof *at);
    fill_masks(um, km, n);
    trn_stream_power_params p;
    config_params(c, 4, um, km, aw, &p);
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
    {"rho8", TRN_ROUTING_RHO8, false, false, false, false, false, 1.0, 0, 0.05, false, 0, 0, 0},
    {"rho8 outlets", TRN_ROUTING_RHO8, true, false, false, false, false, 1.0, 0, 0.05, false, 0, 0,
     0},
    {"d8 fixed sea", TRN_ROUTING_D8, false, true, true, false, false, 1.0, 0, 0.05, false, 0, 0, 0},
    {"rho8 sea surface", TRN_ROUTING_RHO8, false, false, true, false, false, 1.0, 0, 0.05, true, 0,
     0, 0},
    {"rho8 outlets sea surface", TRN_ROUTING_RHO8, true, false, true, false, false, 1.0, 0, 0.05,
     true, 0, 0, 0},
    {"rho8 outlets masks", TRN_ROUTING_RHO8, true, false, true, true, true, 1.0, 0, 0.05, false, 0,
     0, 0},
    {"rho8 n 1.5 threshold", TRN_ROUTING_RHO8, false, false, false, false, false, 1.5, 5e4, 0.05,
     false, 0, 0, 0},
    {"d8 outlets no diffusion", TRN_ROUTING_D8, true, false, false, false, false, 1.0, 0, 0, false,
     0, 0, 0},
    /* 81 diffusion substeps a step: tiles run them 8 at a time on a wider halo. */
    {"rho8 outlets sea strong diffusion", TRN_ROUTING_RHO8, true, false, true, false, false, 1.0, 0,
     5.0, false, 0, 0, 0},
    /* Creep varying with the rock: the flux across a tile's edge takes the mean of the factors
     * on both sides (the halo holds the neighbour's), the substeps the largest factor over
     * the whole grid; one thread and several. */
    {"rho8 outlets masks creep -1", TRN_ROUTING_RHO8, true, false, true, true, true, 1.0, 0, 0.05,
     false, -1.0, 1, 0},
    {"rho8 outlets masks creep -1 threads", TRN_ROUTING_RHO8, true, false, true, true, true, 1.0, 0,
     0.05, false, -1.0, 3, 0},
    {"d8 masks strong creep 1.5", TRN_ROUTING_D8, false, false, false, true, true, 1.0, 0, 5.0,
     false, 1.5, 1, 0},
    {"rho8 outlets sea masks strong creep -1 threads", TRN_ROUTING_RHO8, true, false, true, true,
     true, 1.0, 0, 5.0, false, -1.0, 2, 0},
    {"rho8 masks creep 1.5 threads", TRN_ROUTING_RHO8, false, false, false, true, true, 1.5, 5e4,
     0.05, false, 1.5, 2, 0},
    /* Deposition: its sums gathered across tiles in upstream rounds (a tile of one sample: a
     * round per sample along a river), each in the whole grid's order; lakes (pits) fill, a
     * threshold leaves hillslopes unincised, the masks weight F. */
    {"rho8 deposition", TRN_ROUTING_RHO8, false, false, false, false, false, 1.0, 0, 0.05, false,
     0, 0, 1.0},
    {"d8 outlets sea deposition 2 threshold", TRN_ROUTING_D8, true, false, true, false, false, 1.0,
     5e4, 0.05, false, 0, 0, 2.0},
    {"rho8 outlets masks creep deposition threads", TRN_ROUTING_RHO8, true, false, true, true, true,
     1.0, 0, 0.05, false, -1.0, 2, 1.0},
    {"rho8 outlets sea surface deposition 0.3", TRN_ROUTING_RHO8, true, false, true, false, false,
     1.0, 0, 0, true, 0, 1, 0.3},
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
    check_config(&configs[16], 60, 47, dir); /* deposition's P and Q in files too */
}

/* ---- several processes in one: threads meeting at a barrier (comm_threads.h) ---- */

typedef struct th_job {
    th_impl impl;
    trn_field field; /* the process's own copy */
    trn_stream_power_params p;
    float *area;
    uint32_t tile;
    const char *dir;
    bool fail;   /* this process's tile files cannot be made */
    bool cancel; /* this process cancels at its second step */
    bool p2p;    /* a transport with point-to-point blocks (else all-gathers only) */
    const uint32_t *bands; /* the result by bands of rows (NULL: whole on every process) */
    trn_spt_window win;    /* with use_win: the field, masks and area held by these rows */
    bool use_win;
    int reports;
    trn_status st;
    trn_stream_power_report report;
    trn_sp_tiled_stats stats;
    trn_error err;
} th_job;

static int job_progress(double done, const char *stage, void *user)
{
    (void)done;
    (void)stage;
    th_job *job = user;
    return job->cancel && ++job->reports == 2 ? TRN_CANCEL : 0;
}

static void *job_run(void *arg)
{
    th_job *job = arg;
    trn_comm *comm = trn_comm_new(job->p2p ? &th_ops_p2p : &th_ops, &job->impl, job->impl.rank,
                                  job->impl.sh->size);
    job->p.drainage_area = job->area;
    job->st = trn_stream_power_run_tiled_window(
        &job->field, &job->p, job->tile, job->fail ? "/nonexistent/folder" : job->dir, comm,
        job->bands, job->use_win ? &job->win : NULL, &job->stats, &job->report, job_progress,
        job, &job->err);
    trn_comm_free(comm);
    return NULL;
}

/* Runs the tiled solve as procs processes (threads) on copies of f; jobs[r] holds process r's
 * field, area and status. fail_rank: a process whose files fail, cancel_rank: one that cancels
 * at its second step (-1: none); p2p: the transport has point-to-point blocks; bands: each
 * process's rows (NULL: every row). */
static void run_procs_in(const trn_field *f, const trn_stream_power_params *p, uint32_t tile,
                         const char *dir, int procs, int fail_rank, int cancel_rank, bool p2p,
                         const uint32_t *bands, th_job *jobs)
{
    th_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.size = procs;
    pthread_barrier_init(&sh.bar, NULL, (unsigned)procs);
    pthread_t th[8];
    const size_t n = trn_field_sample_count(f);
    for (int r = 0; r < procs; r++) {
        memset(&jobs[r], 0, sizeof jobs[r]);
        jobs[r].impl = (th_impl){&sh, r};
        trn_field_init(&jobs[r].field, f->cells_x, f->cells_z, f->size_x, f->size_z, NULL);
        memcpy(jobs[r].field.heights, f->heights, n * sizeof(float));
        jobs[r].p = *p;
        jobs[r].area = calloc(n, sizeof(float));
        jobs[r].tile = tile;
        jobs[r].dir = dir;
        jobs[r].fail = r == fail_rank;
        jobs[r].cancel = r == cancel_rank;
        jobs[r].p2p = p2p;
        jobs[r].bands = bands;
        pthread_create(&th[r], NULL, job_run, &jobs[r]);
    }
    for (int r = 0; r < procs; r++)
        pthread_join(th[r], NULL);
    pthread_barrier_destroy(&sh.bar);
}

static void run_procs(const trn_field *f, const trn_stream_power_params *p, uint32_t tile,
                      const char *dir, int procs, int fail_rank, int cancel_rank, bool p2p,
                      th_job *jobs)
{
    run_procs_in(f, p, tile, dir, procs, fail_rank, cancel_rank, p2p, NULL, jobs);
}

/* The same with each process given only its band of rows (bands: procs + 1 row starts). */
static void run_procs_bands(const trn_field *f, const trn_stream_power_params *p, uint32_t tile,
                            int procs, bool p2p, const uint32_t *bands, th_job *jobs)
{
    run_procs_in(f, p, tile, NULL, procs, -1, -1, p2p, bands, jobs);
}

static void free_procs(th_job *jobs, int procs)
{
    for (int r = 0; r < procs; r++) {
        trn_field_dispose(&jobs[r].field);
        free(jobs[r].area);
    }
}

/* The tiles shared by 2, 3 and 4 processes: every process gets the whole grid's heights and
 * area, for tiles that do not divide the grid, more processes than rows of tiles, a process
 * with no tile; the frames and graphs crossed between them. With all-gathers and with
 * point-to-point blocks: the same bytes and graphs, and point to point each frame goes only to
 * the processes that read it, so fewer bytes of frames move where some tile is beyond every
 * tile of some other process. */
static void check_procs(const config *c, uint32_t cx, uint32_t cz, const char *dir)
{
    trn_field whole = rough(cx, cz, 7), start = rough(cx, cz, 7);
    const size_t n = trn_field_sample_count(&whole);
    float *um = malloc(n * sizeof *um), *km = malloc(n * sizeof *km);
    float *aw = malloc(n * sizeof *aw);
    fill_masks(um, km, n);
    trn_stream_power_params p;
    config_params(c, 4, um, km, aw, &p);
    trn_stream_power_report rw;
    CHECK_OK(trn_stream_power_run(&whole, &p, &rw, NULL, NULL, NULL));
    const uint64_t hw = hash_floats(whole.heights, n), haw = hash_floats(aw, n);
    uint64_t all_halo = 0, all_graph = 0, all_rounds = 0, all_result = 0;
    static const struct {
        uint32_t tile;
        int procs;
    } runs[] = {{5, 2}, {16, 3}, {23, 4}, {64, 3}, {1000, 2}};
    th_job jobs[4];
    for (size_t s = 0; s < 2 * (sizeof runs / sizeof *runs); s++) {
        const size_t i = s / 2;
        const bool p2p = s % 2 == 1;
        if (dir && runs[i].tile != 23) continue;
        run_procs(&start, &p, runs[i].tile, dir, runs[i].procs, -1, -1, p2p, jobs);
        uint64_t graph = 0, halo = 0, rounds = 0, result = 0;
        for (int r = 0; r < runs[i].procs; r++) {
            CHECK_OK(jobs[r].st);
            if (jobs[r].st) fprintf(stderr, "process %d: %s\n", r, jobs[r].err.message);
            const uint64_t ht = hash_floats(jobs[r].field.heights, n);
            const uint64_t hat = hash_floats(jobs[r].area, n);
            if (ht != hw || hat != haw)
                fprintf(stderr,
                        "%s %ux%u tile %u, %d processes%s, process %d: heights %s, area %s\n",
                        c->name, cx + 1u, cz + 1u, runs[i].tile, runs[i].procs,
                        p2p ? " point to point" : "", r, ht == hw ? "same" : "DIFFER",
                        hat == haw ? "same" : "DIFFER");
            CHECK(ht == hw);
            CHECK(hat == haw);
            CHECK(jobs[r].report.pits_routed == rw.pits_routed);
            CHECK(jobs[r].report.steps_with_pits == rw.steps_with_pits);
            CHECK(jobs[r].report.max_area == rw.max_area);
            CHECK(jobs[r].stats.steps == p.steps);
            halo += jobs[r].stats.received[0];
            graph += jobs[r].stats.received[1];
            rounds += jobs[r].stats.received[2];
            result += jobs[r].stats.received[3];
        }
        /* More than one tile: frames and graphs crossed between the processes. */
        if (jobs[0].stats.tiles > 1) CHECK(halo > 0 && graph > 0);
        if (!p2p) {
            all_halo = halo;
            all_graph = graph;
            all_rounds = rounds;
            all_result = result;
        } else {
            CHECK(graph == all_graph && rounds == all_rounds);
            /* The result moves a tile at a time from its owner to every other process: the
             * same samples, with a largest area (4 bytes) a tile instead of a process. */
            const int64_t extra =
                4 * (int64_t)(runs[i].procs - 1) * ((int64_t)jobs[0].stats.tiles - runs[i].procs);
            CHECK((int64_t)result - (int64_t)all_result == extra);
            /* Some tile lies beyond every tile of another process (13 x 10 tiles of 5,
             * 4 x 4 of 16, 3 x 3 of 23), or there is one tile and the processes without one
             * read no frame: fewer bytes of frames than each to all. */
            CHECK(halo < all_halo);
        }
        free_procs(jobs, runs[i].procs);
    }
    trn_field_dispose(&whole);
    trn_field_dispose(&start);
    free(um);
    free(km);
    free(aw);
}

/* The result by bands of rows: each process's band is the whole grid's rows, bit for bit, the
 * rest of its field and area as they came (nothing written there), the report the same; and,
 * point to point, a process receives only its band's rows of the tiles it meets (heights as
 * doubles and areas, 12 bytes a sample, and the tile's largest area), then every process's
 * largest area: never the whole result. Bands of 0 rows, of less than a tile, over a tile's
 * edge. */
static void check_bands(const config *c, uint32_t cx, uint32_t cz)
{
    trn_field whole = rough(cx, cz, 7), start = rough(cx, cz, 7);
    const size_t nx = (size_t)cx + 1u, nz = (size_t)cz + 1u, n = nx * nz;
    float *aw = malloc(n * sizeof *aw);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 3;
    p.dt = 2000;
    p.erodibility = 4e-5;
    p.routing = c->routing;
    p.border_outlets = c->outlets;
    p.sea_level = c->sea ? 10.0 : NAN;
    p.sea_surface = c->surface;
    p.sea_surface_depth = c->surface ? 3.0 : 0.0;
    p.diffusion = c->diffusion;
    p.deposition = c->deposition;
    p.seed = 42;
    p.drainage_area = aw;
    trn_stream_power_report rw;
    CHECK_OK(trn_stream_power_run(&whole, &p, &rw, NULL, NULL, NULL));
    static const struct {
        uint32_t tile;
        int procs;
        uint32_t bands[5];
    } runs[] = {{5, 2, {0, 20, 48}},
                {16, 3, {0, 0, 31, 48}},
                {23, 4, {0, 3, 24, 25, 48}},
                {16, 4, {0, 12, 24, 36, 48}}};
    th_job jobs[4];
    for (size_t s = 0; s < 2 * (sizeof runs / sizeof *runs); s++) {
        const size_t i = s / 2;
        const bool p2p = s % 2 == 1;
        const int P = runs[i].procs;
        const uint32_t *b = runs[i].bands;
        run_procs_bands(&start, &p, runs[i].tile, P, p2p, b, jobs);
        /* The solver's tiles: the grid with its ring of outlets (pad), row by row. */
        const uint32_t pad = c->outlets ? 1u : 0u, T = runs[i].tile;
        const uint32_t gx = (uint32_t)nx + 2u * pad, gz = (uint32_t)nz + 2u * pad;
        const uint32_t tnx = (gx + T - 1u) / T, tnz = (gz + T - 1u) / T, tiles = tnx * tnz;
        for (int r = 0; r < P; r++) {
            CHECK_OK(jobs[r].st);
            if (jobs[r].st) fprintf(stderr, "process %d: %s\n", r, jobs[r].err.message);
            size_t wrong = 0;
            for (size_t j = 0; j < nz; j++) {
                const bool mine = j >= b[r] && j < b[r + 1];
                for (size_t k = j * nx; k < (j + 1u) * nx; k++) {
                    const float hv = mine ? whole.heights[k] : start.heights[k];
                    const float av = mine ? aw[k] : 0.0f;
                    if (memcmp(&jobs[r].field.heights[k], &hv, sizeof hv) != 0 ||
                        memcmp(&jobs[r].area[k], &av, sizeof av) != 0)
                        wrong++;
                }
            }
            if (wrong)
                fprintf(stderr,
                        "%s bands, tile %u, %d processes%s, process %d: %zu samples wrong\n",
                        c->name, T, P, p2p ? " point to point" : "", r, wrong);
            CHECK(wrong == 0);
            CHECK(jobs[r].report.pits_routed == rw.pits_routed);
            CHECK(jobs[r].report.max_area == rw.max_area);
            if (!p2p) continue;
            /* What the band needs from other processes' tiles, and the largest areas. */
            uint64_t expect = 4u * (uint64_t)(P - 1);
            const uint32_t first = (uint32_t)((uint64_t)tiles * (uint64_t)r / (uint64_t)P);
            const uint32_t last = (uint32_t)((uint64_t)tiles * (uint64_t)(r + 1) / (uint64_t)P);
            for (uint32_t t = 0; t < tiles; t++) {
                const uint32_t tx = t % tnx, tz = t / tnx;
                const uint32_t z0 = tz * T, z1 = z0 + T < gz ? z0 + T : gz;
                const uint32_t x0 = tx * T, x1 = x0 + T < gx ? x0 + T : gx;
                /* The band's rows of the tile (the grid's rows with the ring). */
                const uint32_t a = z0 > b[r] + pad ? z0 : b[r] + pad;
                const uint32_t e = z1 < b[r + 1] + pad ? z1 : b[r + 1] + pad;
                if (t >= first && t < last) continue;
                if (a < e) expect += (uint64_t)(x1 - x0) * (e - a) * 12u + 4u;
            }
            if (jobs[r].stats.received[3] != expect)
                fprintf(stderr,
                        "%s bands, tile %u, %d processes, process %d: result received %llu, "
                        "expected %llu\n",
                        c->name, T, P, r, (unsigned long long)jobs[r].stats.received[3],
                        (unsigned long long)expect);
            CHECK(jobs[r].stats.received[3] == expect);
            /* Less than the whole result (12 bytes a sample of the grid with its ring). */
            CHECK(jobs[r].stats.received[3] < (uint64_t)gx * gz * 12u);
        }
        free_procs(jobs, P);
    }
    /* Bands that do not cover the rows in order are refused, naming the rows. */
    static const uint32_t bad[3] = {0, 30, 20};
    run_procs_bands(&start, &p, 16, 2, true, bad, jobs);
    CHECK_STATUS(jobs[0].st, TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(jobs[0].err.message, "bands of rows");
    free_procs(jobs, 2);
    trn_field_dispose(&whole);
    trn_field_dispose(&start);
    free(aw);
}

/* Fields held by windows of rows: each process gets, in arrays of its window's size (the
 * sanitizers catch a read past them), only the rows trn_spt_window_rows names of the heights,
 * the uplift and erodibility masks and the area, with the field's edges: its band is the
 * whole grid's bytes, the creep's substeps set by the largest factor of every window (it lies
 * in one); the windows are smaller than the grid. A window short of a row is refused, naming
 * the rows. */
static void check_windows(const config *c, uint32_t cx, uint32_t cz)
{
    trn_field whole = rough(cx, cz, 7), start = rough(cx, cz, 7);
    const size_t nx = (size_t)cx + 1u, nz = (size_t)cz + 1u, n = nx * nz;
    float *aw = malloc(n * sizeof *aw), *um = malloc(n * sizeof *um), *km = malloc(n * sizeof *km);
    fill_masks(um, km, n);
    /* The grid's largest factor (for a positive exponent, then a negative one) in one sample
     * near the last row: only the last windows hold it, and the others' substeps must be set
     * by it too. */
    km[(nz - 3u) * nx + nx / 2u] = 4.0f;
    km[(nz - 3u) * nx + nx / 2u + 1u] = 0.1f;
    float *edge[4] = {malloc(nx * sizeof(float)), malloc(nx * sizeof(float)),
                      malloc(nz * sizeof(float)), malloc(nz * sizeof(float))};
    for (size_t i = 0; i < nx; i++) {
        edge[0][i] = start.heights[i];
        edge[1][i] = start.heights[(nz - 1u) * nx + i];
    }
    for (size_t j = 0; j < nz; j++) {
        edge[2][j] = start.heights[j * nx];
        edge[3][j] = start.heights[j * nx + nx - 1u];
    }
    trn_stream_power_params p;
    config_params(c, 3, um, km, aw, &p);
    trn_stream_power_report rw;
    CHECK_OK(trn_stream_power_run(&whole, &p, &rw, NULL, NULL, NULL));
    static const struct {
        uint32_t tile;
        int procs;
        uint32_t bands[5];
        int short_rank; /* a process given a window a row short (-1: none) */
    } runs[] = {{5, 2, {0, 20, 48}, -1},
                {16, 3, {0, 0, 31, 48}, -1},
                {16, 4, {0, 12, 24, 36, 48}, -1},
                {16, 2, {0, 24, 48}, 1}};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        const int P = runs[i].procs;
        const uint32_t *b = runs[i].bands;
        th_shared sh;
        memset(&sh, 0, sizeof sh);
        sh.size = P;
        pthread_barrier_init(&sh.bar, NULL, (unsigned)P);
        pthread_t th[4];
        th_job jobs[4];
        float *wu[4], *wk[4];
        int smaller = 0;
        for (int r = 0; r < P; r++) {
            memset(&jobs[r], 0, sizeof jobs[r]);
            jobs[r].impl = (th_impl){&sh, r};
            uint32_t r0, r1;
            trn_comm *me = trn_comm_new(&th_ops_p2p, &jobs[r].impl, r, P);
            trn_spt_window_rows(cx, cz, runs[i].tile, c->outlets, me, b, &r0, &r1);
            trn_comm_free(me);
            if (r == runs[i].short_rank) r1--;
            const size_t wn = (size_t)(r1 - r0) * nx, at = (size_t)r0 * nx;
            jobs[r].field = start;
            jobs[r].field.heights = malloc((wn ? wn : 1) * sizeof(float));
            jobs[r].area = calloc(wn ? wn : 1, sizeof(float));
            wu[r] = malloc((wn ? wn : 1) * sizeof(float));
            wk[r] = malloc((wn ? wn : 1) * sizeof(float));
            memcpy(jobs[r].field.heights, start.heights + at, wn * sizeof(float));
            memcpy(wu[r], um + at, wn * sizeof(float));
            memcpy(wk[r], km + at, wn * sizeof(float));
            jobs[r].p = p;
            jobs[r].p.uplift_mask = c->umask ? wu[r] : NULL;
            jobs[r].p.erodibility_mask = c->kmask ? wk[r] : NULL;
            jobs[r].tile = runs[i].tile;
            jobs[r].p2p = true;
            jobs[r].bands = b;
            jobs[r].use_win = true;
            jobs[r].win = (trn_spt_window){r0, r1 - r0, {edge[0], edge[1], edge[2], edge[3]}};
            smaller += r1 - r0 < nz;
            pthread_create(&th[r], NULL, job_run, &jobs[r]);
        }
        for (int r = 0; r < P; r++)
            pthread_join(th[r], NULL);
        pthread_barrier_destroy(&sh.bar);
        /* Some process's window is smaller than the grid (its band and its tiles' rows with
         * their halo; a band and tiles far apart take the rows between). */
        CHECK(smaller > 0);
        for (int r = 0; r < P; r++) {
            if (runs[i].short_rank >= 0) {
                /* The short window is refused, naming the rows; the others stop with it. */
                if (r == runs[i].short_rank) {
                    CHECK_STATUS(jobs[r].st, TRN_ERR_INVALID_ARGUMENT);
                    CHECK_CONTAINS(jobs[r].err.message, "window holds rows");
                } else {
                    CHECK_STATUS(jobs[r].st, TRN_ERR_MISMATCH);
                }
            } else {
                CHECK_OK(jobs[r].st);
                if (jobs[r].st) fprintf(stderr, "process %d: %s\n", r, jobs[r].err.message);
                size_t wrong = 0;
                const size_t r0 = jobs[r].win.row0;
                for (size_t j = b[r]; j < b[r + 1]; j++)
                    for (size_t k = j * nx; k < (j + 1u) * nx; k++)
                        if (memcmp(&jobs[r].field.heights[k - r0 * nx], &whole.heights[k],
                                   sizeof(float)) != 0 ||
                            memcmp(&jobs[r].area[k - r0 * nx], &aw[k], sizeof(float)) != 0)
                            wrong++;
                if (wrong)
                    fprintf(stderr, "%s windows, tile %u, %d processes, process %d: %zu wrong\n",
                            c->name, runs[i].tile, P, r, wrong);
                CHECK(wrong == 0);
                CHECK(jobs[r].report.pits_routed == rw.pits_routed);
            }
            free(jobs[r].field.heights);
            free(jobs[r].area);
            free(wu[r]);
            free(wk[r]);
        }
    }
    for (int e = 0; e < 4; e++)
        free(edge[e]);
    trn_field_dispose(&whole);
    trn_field_dispose(&start);
    free(aw);
    free(um);
    free(km);
}

static void test_processes_windows(void)
{
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++)
        check_windows(&configs[c], 60, 47);
}

static void test_processes_bands(void)
{
    check_bands(&configs[0], 60, 47);
    check_bands(&configs[1], 60, 47);
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++)
        if (configs[c].deposition > 0 || configs[c].surface) check_bands(&configs[c], 60, 47);
}


static void test_processes(void)
{
    for (size_t c = 0; c < sizeof configs / sizeof *configs; c++)
        check_procs(&configs[c], 60, 47, NULL);
}

/* In files, each process its own: the same bytes. A process whose files cannot be made says
 * why; the others stop with "another process failed"; nobody waits forever. */
static void test_processes_files(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    check_procs(&configs[1], 60, 47, dir);
    check_procs(&configs[16], 60, 47, dir);
    trn_field f = rough(60, 47, 7);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 2;
    th_job jobs[3];
    for (int p2p = 0; p2p < 2; p2p++) {
        run_procs(&f, &p, 16, dir, 3, 1, -1, p2p, jobs);
        CHECK_STATUS(jobs[1].st, TRN_ERR_IO);
        CHECK_CONTAINS(jobs[1].err.message, "could not make the tile files");
        CHECK_STATUS(jobs[0].st, TRN_ERR_MISMATCH);
        CHECK_CONTAINS(jobs[0].err.message, "another process failed");
        CHECK_STATUS(jobs[2].st, TRN_ERR_MISMATCH);
        free_procs(jobs, 3);
        /* One process cancelled at its second step: it says so, the others stop with it. */
        run_procs(&f, &p, 16, dir, 3, -1, 2, p2p, jobs);
        CHECK_STATUS(jobs[2].st, TRN_ERR_CANCELLED);
        CHECK_STATUS(jobs[0].st, TRN_ERR_MISMATCH);
        CHECK_STATUS(jobs[1].st, TRN_ERR_MISMATCH);
        CHECK(jobs[0].stats.steps == 1);
        free_procs(jobs, 3);
    }
    trn_field_dispose(&f);
}

/* A coarsened evolution with deposition sends its fine steps to the tiles: with tiles in a
 * folder that cannot be used it fails there (the whole grid would not read fine_dir), in a
 * usable one it gives the whole grid's bytes; with a cascade each level's steps too, and with
 * coarsen 8 the cascade's level of a sixteenth of the cells runs on the whole grid between tiled
 * ones. */
static void test_evolve_deposition(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    for (int cascade = 0; cascade < 3; cascade++) {
        trn_evolve_options o;
        trn_evolve_options_default(&o);
        o.coarsen = cascade == 2 ? 8u : 4u;
        o.fine_steps = 2;
        o.cascade_steps = cascade ? 2u : 0u;
        o.sp.steps = 6;
        o.sp.dt = 2000;
        o.sp.erodibility = 4e-5;
        o.sp.deposition = 1.0;
        o.sp.border_outlets = true;
        trn_field whole = rough(64, 48, 5);
        const size_t n = trn_field_sample_count(&whole);
        CHECK_OK(trn_landscape_evolve(&whole, &o, NULL, NULL, NULL, NULL));
        trn_field t = rough(64, 48, 5);
        o.fine_tile = 16;
        o.fine_dir = "/nonexistent/folder";
        trn_error err = {0};
        CHECK_STATUS(trn_landscape_evolve(&t, &o, NULL, NULL, NULL, &err), TRN_ERR_IO);
        CHECK_CONTAINS(err.message, "tile files");
        trn_field_dispose(&t);
        t = rough(64, 48, 5);
        o.fine_dir = dir;
        CHECK_OK(trn_landscape_evolve(&t, &o, NULL, NULL, NULL, NULL));
        CHECK(hash_floats(t.heights, n) == hash_floats(whole.heights, n));
        trn_field_dispose(&t);
        trn_field_dispose(&whole);
    }
}

/* ---- a coarsened evolution's fine steps by bands across processes (threads) ---- */

/* What this process's evolution said it made of the output grid (trn_evolve_window_hook). */
static _Thread_local uint32_t made_row0, made_row1;
static _Thread_local size_t made_bytes;

static void window_hook(uint32_t row0, uint32_t row1, size_t bytes)
{
    made_row0 = row0;
    made_row1 = row1;
    made_bytes = bytes;
}

typedef struct evolve_job {
    th_impl impl;
    trn_field field;
    trn_evolve_options o;
    float *area;
    uint32_t row0, row1;
    size_t bytes;
    trn_status st;
    trn_error err;
} evolve_job;

static void *evolve_run(void *arg)
{
    evolve_job *job = arg;
    trn_comm *comm = trn_comm_new(&th_ops_p2p, &job->impl, job->impl.rank, job->impl.sh->size);
    job->o.fine_comm = comm;
    job->o.sp.drainage_area = job->area;
    made_row0 = made_row1 = UINT32_MAX;
    job->st = trn_landscape_evolve(&job->field, &job->o, NULL, NULL, NULL, &job->err);
    job->row0 = made_row0;
    job->row1 = made_row1;
    job->bytes = made_bytes;
    trn_comm_free(comm);
    return NULL;
}

/* The output grid's fine steps by bands across 2 and 4 processes, with the ring of outlets,
 * an erodibility mask and creep varying with it: each process makes the upsampled surface and
 * its factors only on its window of rows (trn_spt_window_rows: its tiles' rows with their halo
 * and its band, fewer than the grid's), and its band is the whole run's bytes, heights and
 * drainage area. */
static void test_evolve_windows(void)
{
    const uint32_t cx = 64, cz = 96;
    const size_t nx = cx + 1u, nz = cz + 1u, n = nx * nz;
    trn_evolve_options o;
    trn_evolve_options_default(&o);
    o.coarsen = 4;
    o.fine_steps = 2;
    o.sp.steps = 4;
    o.sp.dt = 2000;
    o.sp.erodibility = 4e-5;
    o.sp.border_outlets = true;
    o.sp.diffusion = 0.02;
    o.sp.diffusion_rock = 1.5;
    const size_t ccx = cx / 4u + 1u, ccz = cz / 4u + 1u;
    float *km = malloc(ccx * ccz * sizeof *km);
    for (size_t k = 0; k < ccx * ccz; k++)
        km[k] = 0.5f + (float)(trn_test_mix32((uint32_t)k * 7u) % 100u) / 40.0f;
    o.sp.erodibility_mask = km;
    trn_field whole = rough(cx, cz, 5);
    float *aw = calloc(n, sizeof *aw);
    o.sp.drainage_area = aw;
    trn_evolve_window_hook = window_hook;
    CHECK_OK(trn_landscape_evolve(&whole, &o, NULL, NULL, NULL, NULL));
    /* Alone, every row is made. */
    CHECK(made_row0 == 0 && made_row1 == nz);
    static const uint32_t b2[3] = {0, 40, 97}, b4[5] = {0, 24, 48, 72, 97};
    for (int P = 2; P <= 4; P += 2) {
        const uint32_t *b = P == 2 ? b2 : b4;
        th_shared sh;
        memset(&sh, 0, sizeof sh);
        sh.size = P;
        pthread_barrier_init(&sh.bar, NULL, (unsigned)P);
        pthread_t th[4];
        evolve_job jobs[4];
        for (int r = 0; r < P; r++) {
            memset(&jobs[r], 0, sizeof jobs[r]);
            jobs[r].impl = (th_impl){&sh, r};
            jobs[r].field = rough(cx, cz, 5);
            jobs[r].o = o;
            jobs[r].o.fine_tile = 16;
            jobs[r].o.fine_bands = b;
            jobs[r].area = calloc(n, sizeof(float));
            pthread_create(&th[r], NULL, evolve_run, &jobs[r]);
        }
        for (int r = 0; r < P; r++)
            pthread_join(th[r], NULL);
        pthread_barrier_destroy(&sh.bar);
        for (int r = 0; r < P; r++) {
            CHECK_OK(jobs[r].st);
            if (jobs[r].st) fprintf(stderr, "process %d: %s\n", r, jobs[r].err.message);
            /* Its window, not the whole grid: the rows made and their bytes. */
            th_impl im = {&sh, r};
            trn_comm *me = trn_comm_new(&th_ops_p2p, &im, r, P);
            uint32_t w0, w1;
            trn_spt_window_rows(cx, cz, 16, true, me, b, &w0, &w1);
            trn_comm_free(me);
            CHECK(jobs[r].row0 == w0 && jobs[r].row1 == w1);
            CHECK(w1 - w0 < nz);
            CHECK(jobs[r].bytes == (size_t)(w1 - w0) * nx * 2u * sizeof(float));
            size_t wrong = 0;
            for (size_t k = (size_t)b[r] * nx; k < (size_t)b[r + 1] * nx && !jobs[r].st; k++)
                wrong += memcmp(&jobs[r].field.heights[k], &whole.heights[k], sizeof(float)) != 0 ||
                         memcmp(&jobs[r].area[k], &aw[k], sizeof(float)) != 0;
            if (wrong) fprintf(stderr, "evolve by windows, process %d of %d: %zu wrong\n", r, P,
                               wrong);
            CHECK(wrong == 0);
            trn_field_dispose(&jobs[r].field);
            free(jobs[r].area);
        }
    }
    trn_evolve_window_hook = NULL;
    trn_field_dispose(&whole);
    free(aw);
    free(km);
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
    p.critical_slope = 30;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "critical slope");
    p.critical_rock = -1;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "varying with the rock (critical_rock) is not supported in tiles");
    p.critical_rock = 0;
    p.critical_slope = 0;
    p.creep_slope = 30;
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 8, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.message, "nonlinear creep (creep_slope) is not supported in tiles");
    p.creep_slope = 0;
    CHECK(hash_floats(f.heights, trn_field_sample_count(&f)) == h0);
    trn_field_dispose(&f);
}

/* Samples of the whole grid are numbered in 64 bits: on a 65537^2 grid (the largest a recipe
 * asks for) in tiles of 1024, 65 tiles a row, the last one a sample wide, the far corner is past
 * 2^32. */
static void test_sample_index_64(void)
{
    const uint32_t n = 65537;
    /* The last tile, (64, 64): one sample, the grid's last. */
    CHECK(trn_spt_sample_index(n, n, 1024, 64u * 65u + 64u, 0) == UINT64_C(65537) * 65537 - 1);
    CHECK(trn_spt_tile_of(n, 1024, UINT64_C(65537) * 65537 - 1) == 64u * 65u + 64u);
    /* Tile (63, 63)'s last sample: (65535, 65535). */
    CHECK(trn_spt_sample_index(n, n, 1024, 63u * 65u + 63u, 1024u * 1024u - 1u) ==
          UINT64_C(65535) * 65537 + 65535);
    /* Row 65535's sample 5 is 2^32 + 4: tile (0, 63), not tile 0 where 4 lies. */
    CHECK(trn_spt_sample_index(n, n, 1024, 63u * 65u, 1023u * 1024u + 5u) ==
          UINT64_C(0x100000004));
    CHECK(trn_spt_tile_of(n, 1024, UINT64_C(0x100000004)) == 63u * 65u);
    /* The last column of tiles, one sample wide: its rows are a sample apart. */
    CHECK(trn_spt_sample_index(n, n, 1024, 64u, 3) == UINT64_C(3) * 65537 + 65536);
}

/* Tiles far apart on a 65537^2 grid whose samples' indices are equal modulo 2^32 (row 65535's
 * sample i is i - 1 + 2^32): the tiled solver's roots, perimeters and inflows must keep them
 * apart. Tiles of 1024: A (0, 0) and B (1, 0) in the first row of tiles, C (0, 63) and D
 * (1, 63), whose last row is the grid's row 65535. Every sample drains west to its tile's
 * first column (base level), except A's (1023, 0), which drains east into B's (1024, 0), and
 * D's (1024, 65535), which drains west into C's (1023, 65535). The two exits' samples (1023
 * and 1023 + 2^32) and A's target and D's sample's neighbour meet modulo 2^32. */
static void test_area_far_rows(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    const uint32_t T = 1024, tn = T * T;
    uint8_t *code[4];
    uint32_t *area[4];
    trn_spt_tile_area tiles[4];
    const uint32_t num[4] = {0, 1, 63u * 65u, 63u * 65u + 1u};
    for (int t = 0; t < 4; t++) {
        code[t] = malloc(tn);
        area[t] = calloc(tn, sizeof *area[t]);
        for (uint32_t k = 0; k < tn; k++)
            code[t][k] = k % T ? 4 : 8; /* west, the first column base level */
        tiles[t] = (trn_spt_tile_area){num[t], code[t], area[t]};
    }
    code[0][T - 1u] = 0;       /* A's (1023, 0) east into B */
    code[3][(T - 1u) * T] = 4; /* D's (1024, 65535) west into C */
    trn_error err = {0};
    const trn_status st = trn_spt_area_tiles(65537, 65537, T, dir, 4, tiles, &err);
    CHECK_OK(st);
    if (st) fprintf(stderr, "%s\n", err.message);
    const uint32_t last = (T - 1u) * T; /* the tile's last row */
    CHECK_EQ_INT(area[0][T - 1u], 1);   /* A's exit: itself */
    CHECK_EQ_INT(area[0][0], T - 1u);   /* A's row 0 without its exit */
    CHECK_EQ_INT(area[0][T], T);        /* A's row 1 */
    CHECK_EQ_INT(area[1][0], T + 1u);   /* B's (1024, 0): its row and A's exit */
    CHECK_EQ_INT(area[1][last], T);
    CHECK_EQ_INT(area[3][last], T);     /* D's exit: its row */
    CHECK_EQ_INT(area[2][last + T - 1u], T + 1u); /* C's (1023, 65535): itself and D's row */
    CHECK_EQ_INT(area[2][last], 2u * T); /* C's (0, 65535): its row and D's */
    CHECK_EQ_INT(area[2][0], T);
    for (int t = 0; t < 4; t++) {
        free(code[t]);
        free(area[t]);
    }
}

/* What is still 32-bit is named: a tile with one sample around it holds fewer than 2^32-1
 * samples, and there are fewer than 2^32-1 tiles. */
static void test_limits(void)
{
    trn_error err = {0};
    /* 65537^2 with its ring of outlets. */
    CHECK_OK(trn_spt_tiled_limits(65539, 65539, 1024, &err));
    CHECK_OK(trn_spt_tiled_limits(65539, 65539, 65533, &err));
    CHECK_STATUS(trn_spt_tiled_limits(65539, 65539, 65534, &err), TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(err.message, "tiles of fewer than 2^32-1 samples with one sample around them, "
                                "found 65534x65534");
    CHECK_OK(trn_spt_tiled_limits(65539, 65539, 2, &err));
    CHECK_STATUS(trn_spt_tiled_limits(65539, 65539, 1, &err), TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(err.message, "fewer than 2^32-1 tiles, found 4295360521 tiles of 1 samples");
    /* A tile larger than a small grid covers it. */
    CHECK_OK(trn_spt_tiled_limits(100, 3, 70000, &err));
}

/* A grid of more than 2^32 samples is taken: 65536 x 65536 cells with outlets (65539^2 with the
 * ring) in tiles of 1024 passes the limits and goes on to read the heights (here only the first,
 * a NaN, which stops it: the whole grid's heights would be 16 GiB); in tiles of 65536 it is
 * refused before reading any. */
static void test_grid_above_2_32(void)
{
    float h[1] = {NAN};
    trn_field f;
    memset(&f, 0, sizeof f);
    f.cells_x = f.cells_z = 65536;
    f.size_x = f.size_z = 65536.0;
    f.heights = h;
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 1;
    p.border_outlets = true;
    trn_error err = {0};
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 1024, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "sample (0, 0) has no finite height");
    CHECK_STATUS(trn_stream_power_run_tiled(&f, &p, 65536, NULL, NULL, NULL, NULL, &err),
                 TRN_ERR_OVERFLOW);
    CHECK_CONTAINS(err.message, "found 65536x65536 tiles: use smaller tiles");
    CHECK(isnan(h[0]));
}

/* Deposition's gather sums a sample's donors in code order in tiles as on the whole grid
 * (deposit_range), which shows in the bytes only where the sums cancel: a quarter of the
 * samples here are 1e9 above or below their neighbours (mirrored about the middle column), so
 * a donor's share of a sum is rounded at 1e9's precision, and three or more of them summed in
 * another order change the heights' bytes within 6 steps (found by a search over such fields;
 * the other tests' gentler fields hide the order below float precision). */
static void test_deposition_gather_order(void)
{
    const uint32_t cx = 31, cz = 20, nx = cx + 1u;
    trn_field whole, tiled;
    trn_field_init(&whole, cx, cz, cx * 30.0, cz * 20.0, NULL);
    trn_field_init(&tiled, cx, cz, cx * 30.0, cz * 20.0, NULL);
    const size_t n = trn_field_sample_count(&whole);
    for (size_t k = 0; k < n; k++) {
        const size_t i = k % nx, j = k / nx, ii = i > (nx - 1u) / 2u ? nx - 1u - i : i;
        const double smooth =
            40.0 * sin((double)ii * 0.11) * cos((double)j * 0.07) + 0.3 * (double)(ii + j);
        const uint32_t r = trn_test_mix32((uint32_t)(j * nx + ii) ^ trn_test_mix32(589));
        const uint32_t q = trn_test_mix32(r) % 8u;
        const double big = q == 0 ? 1e9 : q == 1 ? -1e9 : 0.0;
        whole.heights[k] = tiled.heights[k] = (float)(floor(smooth + (double)(r % 7u)) + big);
    }
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.steps = 6;
    p.dt = 2000;
    p.erodibility = 4e-5;
    p.deposition = 1.0;
    p.border_outlets = true;
    p.routing = TRN_ROUTING_D8;
    p.seed = 42;
    CHECK_OK(trn_stream_power_run(&whole, &p, NULL, NULL, NULL, NULL));
    CHECK_OK(trn_stream_power_run_tiled(&tiled, &p, 4, NULL, NULL, NULL, NULL, NULL));
    CHECK(hash_floats(tiled.heights, n) == hash_floats(whole.heights, n));
    trn_field_dispose(&whole);
    trn_field_dispose(&tiled);
}

int main(void)
{
    RUN(test_configs);
    RUN(test_files);
    RUN(test_processes);
    RUN(test_processes_files);
    RUN(test_processes_bands);
    RUN(test_processes_windows);
    RUN(test_evolve_deposition);
    RUN(test_evolve_windows);
    RUN(test_refused);
    RUN(test_sample_index_64);
    RUN(test_area_far_rows);
    RUN(test_limits);
    RUN(test_grid_above_2_32);
    RUN(test_deposition_gather_order);
    return trn_test_finish();
}
