/* Stream-power landscape evolution (Braun and Willett 2013) with diffusion and pit routing. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) on Linux */
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/bits.h"
#include "core/checked.h"
#include "core/huge_alloc.h"
#include "core/progress.h"
#include "core/rows.h"
#include "terrane/landscape.h"
#include "gen/d8.h"
#include "gen/stream_power_dep.h"
#include "gen/stream_power_tiled.h"
#include "terrane/comm.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Stage boundaries for profiling builds that include this file with their own definition:
 * SP_MARK(k) starts stage k of a step (0 uplift, 1 receivers and donors, 2 stack or routing,
 * 3 drainage area, 4 incision, 5 diffusion, 6 critical slope and border), SP_MARK(7) ends it. */
#ifndef SP_MARK
#define SP_MARK(stage) ((void)0)
#endif
/* And around each thread's share of a job: SP_JOB(fn, tid, 0) before it, SP_JOB(fn, tid, 1)
 * after; SP_WAIT(tid, 0) and SP_WAIT(tid, 1) around a crew thread's wait (the helper's for
 * the next post, the caller's for the helpers' shares). bench/sp_thread_cpu.h sums them by
 * each thread's CPU. */
#ifndef SP_JOB
#define SP_JOB(fn, tid, end) ((void)0)
#endif
#ifndef SP_WAIT
#define SP_WAIT(tid, end) ((void)0)
#endif

void trn_stream_power_params_default(trn_stream_power_params *p)
{
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->uplift = 1e-3;
    p->erodibility = 2e-5;
    p->m = 0.45;
    p->n = 1.0;
    p->diffusion = 0.01;
    p->critical_slope = 0.0;
    p->dt = 1000.0;
    p->steps = 100;
    p->sea_level = NAN;
    p->routing = TRN_ROUTING_RHO8;
}

#define SP_HUGE_PAGE ((size_t)2 << 20)
/* Stack positions ahead of the current one whose samples the passes in stack order prefetch:
 * breadth first, consecutive samples lie apart. */
#define SP_AHEAD 64u
/* Grids with fewer samples open no region per pass: a step runs about a dozen passes, and on
 * a quiet machine 100 steps on 257^2 took 0.17 s on two threads against 0.14 s on one (1.5x
 * the CPU), 362^2 gained 1.1x for 1.3x the CPU, 513^2 1.26x (bench_busy evolve, 2026-12-05).
 * Waiting threads sleep; they spun when this was 2^19, and 257^2 and 513^2 then ran 3-7 times
 * slower on two threads with other work on the cores. Such grids run on one thread, or on a
 * crew held through the run where cores are free (sp_crew_size). */
#define SP_PARALLEL_MIN_SAMPLES (1u << 17)

/* The implicit incision of one sample: Newton on g(x) = x - h0 + fd (x - hr)^n, x in (hr, h0],
 * with fd = F / d^n. The whole-grid and the tiled solvers share it, so their bytes agree. */
static double sp_newton(double h0, double hr, double fd, double n_exp)
{
    double x = h0;
    for (int it = 0; it < 50; it++) {
        const double dh = x - hr;
        const double g = x - h0 + fd * pow(dh, n_exp);
        const double gp = 1.0 + fd * n_exp * pow(dh, n_exp - 1.0);
        double nx = x - g / gp;
        if (nx <= hr) nx = hr + (x - hr) * 0.5;
        if (fabs(nx - x) <= 1e-12 * (fabs(x) + 1.0)) return nx;
        x = nx;
    }
    return x;
}

/* The most pieces the passes in stack order are cut into for threads. */
#define SP_MAX_CHUNKS 64u
/* Rows per block of the pits' trees taken as workers come free (sp_stack_basins). */
#define SP_PIT_ROWS 16u

#if defined(__GNUC__) || defined(__clang__)
#define SP_PREFETCH(...) __builtin_prefetch(__VA_ARGS__)
#else
#define SP_PREFETCH(...) ((void)0)
#endif

/* The per-sample arrays: on huge pages where the system offers them. The stages walk them in
 * stack order, all over the grid (fewer TLB misses), and a run touches each page for the first
 * time: 512 times fewer page faults, which some virtual machines make costly. free() releases
 * the block. */
static void *big_alloc(size_t bytes)
{
    return trn_huge_alloc(bytes, SP_HUGE_PAGE);
}

/* First writes of fresh per-sample arrays, spread over the threads: the kernel zeroes a page
 * (2 MiB on huge pages) on the thread that first writes it, and the set-up loop and the stages
 * that fill these arrays would otherwise do all of it on one thread (a tenth of a generate on
 * some virtual machines). The bytes written are overwritten before they are read. */
static void sp_first_touch(void *const *arrays, const size_t *bytes, int count, int threads)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
    for (int a = 0; a < count; a++) {
        unsigned char *b = arrays[a];
        const size_t pages = b ? (bytes[a] + 4095u) / 4096u : 0;
#pragma omp for schedule(static) nowait
        for (size_t q = 0; q < pages; q++)
            b[q * 4096u] = 0;
    }
#else
    (void)arrays;
    (void)bytes;
    (void)count;
    (void)threads;
#endif
}

/* The D8 neighbour offsets, code d: E, SE, S, SW, W, NW, N, NE (as drainage.h). */

typedef struct sp_state {
    uint32_t nx, nz; /* samples per row, rows */
    size_t n;
    double dx, dz, dd; /* spacings and the diagonal */
    double dist[8];
    double inv_dist[8];
    int32_t off[9]; /* index step of each D8 code; 0 for code 8 (none) */
    /* Per donor mask: the index steps of its set directions in code order, then zeros, and
     * how many (sp_run fills them): sp_tree appends a sample's donors as eight independent
     * stores and one add, where a store and an add per direction made a chain of eight. */
    int32_t don_off[256][8];
    uint8_t don_count[256];
    double *h;      /* heights (double during the run) */
    double *tmp;    /* diffusion buffer */
    float *dfac;    /* diffusion_rock: each sample's factor on Kd (NULL: uniform creep;
                     * floats, as the mask: half the memory of the 4097^2 fine steps' doubles) */
    double dfac_max; /* the largest of them, which sets diffusion's stability limit */
    float *ctan;     /* critical_rock: each sample's tan(critical slope) (NULL: one for all) */
    uint8_t *base;  /* 1: base level */
    uint32_t *ibase; /* interior base-level samples (under the sea), which diffusion keeps */
    size_t nibase;
    uint32_t *rcv;   /* receiver index (itself for base level and pits) */
    uint8_t *rcode;  /* receiver's D8 code, 8 for none */
    uint8_t *dmask;  /* bit d: the neighbour in direction d drains here (the donors) */
    uint32_t *stack; /* n + 8: sp_tree writes past its top */
    uint32_t *broot; /* the base-level samples in index order: the roots of the trees without pits
                      * (a base-level sample never has a receiver), fixed for the run */
    size_t nbroot;
    uint32_t *row_pits; /* per row: its interior pits, from the receivers of this step */
    uint32_t *row_at;   /* nz + 1: the pits before each row (basin q + 1 is the q-th pit) */
    uint32_t *tree_at; /* where each base-level sample's tree starts in the stack, then n */
    size_t ntrees;
    size_t nchunk;              /* the stack cut at tree starts for the threads */
    size_t chunk_at[SP_MAX_CHUNKS + 1];
    uint32_t *basin; /* closed-depression routing: each sample's basin */
    uint32_t *area;  /* samples draining through, itself included */
    double *pow_table;
    uint32_t pow_table_size;
    double *f_table; /* K dt A^m / d for counts under pow_table_size, per distance class */
    bool avx2;       /* run the AVX2 variants of the row kernels */
    /* Multiple flow directions (TRN_ROUTING_MFD): each sample's water level along the tree
     * (its height, or the level of the lake it is under), the drainage area in world units^2,
     * and each sample's count of donors left while ordering. The receivers' bits go into
     * dmask and the order into basin, both free by then. */
    double *lam;
    double *farea;
    uint8_t *mdeg;
    /* Deposition (G > 0): each sample's second coefficient (the first goes in tmp). */
    double *dep;
    /* Outlet borders: the grid carries a ring of samples outside the field's border; those
     * that are no outlet are walls (SP_WALL high, so nothing drains into them), each with the
     * sample inside it whose height it takes while diffusion runs (no flux across the edge). */
    uint32_t *wall, *wall_in;
    size_t nwall;
    struct sp_crew *crew; /* the threads held through the run (NULL: none) */
    void *arena;          /* small grids: the block h .. dep were cut from (sp_alloc) */
} sp_state;

/* A wall's height outside diffusion: no slope towards it is positive, no pass across it is
 * lower than one across the land. */
#define SP_WALL 1e30
#ifndef SP_OUTLET_SPAN
#define SP_OUTLET_SPAN 32u
#endif

/* scale times each rock factor of mask to the power given, as floats (NULL: out of memory),
 * and the largest of them into *max where max is not NULL. A pow per sample: on the threads
 * where the steps are (the largest is order-free). */
static float *sp_rock_powers(const float *mask, size_t n, double power, double scale, int team,
                             double *max)
{
    float *f = malloc(n * sizeof *f);
    if (!f) return NULL;
    double top = 0.0;
    (void)team; /* read by the pragma only */
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1) reduction(max : top)
    for (size_t k = 0; k < n; k++) {
        f[k] = (float)(scale * pow((double)mask[k], power));
        if (f[k] > top) top = f[k];
    }
    if (max) *max = top;
    return f;
}

/* The run's arrays h .. dep (dep with deposition). A small grid's arrays are each under a huge
 * page, where big_alloc leaves them to malloc, and every 4 KiB page of them was fresh, faulted
 * in by its first write in the set-up and the first step, on one thread. On a paravirtualised
 * machine (the project's 2-core VM) that first write costs a trap of 12-19 us a page
 * (MADV_POPULATE_WRITE beforehand still left 6 us), so the ~1,100 pages of a 257^2 run took
 * about 20 ms of a 0.14 s run of 100 steps; 4 MiB on huge pages took 0.3 ms. So where they
 * fill at least one huge page, they are cut from one block on huge pages (in 64-byte lines). */
static bool sp_alloc(sp_state *s, bool dep)
{
    const size_t n = s->n, tab = s->pow_table_size;
    /* h and tmp each also hold sp_stack_basins's 2 n + 16 indices (diffusion swaps them). */
    const size_t bytes[12] = {(n + 8u) * sizeof *s->h,
                              (n + 8u) * sizeof *s->tmp,
                              n,
                              n * sizeof *s->rcv,
                              n,
                              n,
                              (n + 8u) * sizeof *s->stack,
                              n * sizeof *s->basin,
                              n * sizeof *s->area,
                              tab * sizeof *s->pow_table,
                              3 * tab * sizeof *s->f_table,
                              dep ? n * sizeof *s->dep : 0};
    size_t at[12], total = 0;
    for (int k = 0; k < 12; k++) {
        at[k] = total;
        total += (bytes[k] + 63u) & ~(size_t)63u;
    }
    unsigned char *block = NULL;
    if (bytes[0] < SP_HUGE_PAGE && total >= SP_HUGE_PAGE) {
        block = big_alloc((total + SP_HUGE_PAGE - 1u) & ~(SP_HUGE_PAGE - 1u));
        if (!block) return false;
        s->arena = block;
    }
    void *b[12];
    for (int k = 0; k < 12; k++)
        b[k] = !bytes[k] ? NULL : block ? (void *)(block + at[k]) : big_alloc(bytes[k]);
    s->h = b[0];
    s->tmp = b[1];
    s->base = b[2];
    s->rcv = b[3];
    s->rcode = b[4];
    s->dmask = b[5];
    s->stack = b[6];
    s->basin = b[7];
    s->area = b[8];
    s->pow_table = b[9];
    s->f_table = b[10];
    s->dep = b[11];
    for (int k = 0; k < 12; k++)
        if (bytes[k] && !b[k]) return false;
    return true;
}

static void sp_free(sp_state *s)
{
    if (s->arena) {
        free(s->arena);
    } else {
        free(s->h);
        free(s->tmp);
        free(s->base);
        free(s->rcv);
        free(s->rcode);
        free(s->dmask);
        free(s->stack);
        free(s->basin);
        free(s->area);
        free(s->pow_table);
        free(s->f_table);
        free(s->dep);
    }
    free(s->dfac);
    free(s->ctan);
    free(s->ibase);
    free(s->broot);
    free(s->row_pits);
    free(s->row_at);
    free(s->tree_at);
    free(s->lam);
    free(s->farea);
    free(s->mdeg);
    free(s->wall);
    free(s->wall_in);
}

/* ---- Passes on threads: a crew held through the run, or a region per pass ----
 *
 * Each pass that splits is a job, fn(s, arg, tid, nt): thread tid of nt does its share (rows,
 * samples or the stack's pieces), and any split gives the same bytes. MFD runs a job in a
 * parallel region of its own; the others hold a crew (large grids: see sp_crew_size and
 * sp_crew_check). On small grids a region per pass cost more than the work (a
 * step runs about fourteen; with waiting threads asleep, as the command line sets them, each is
 * a round of wake-ups: 100 steps on 257^2 took 1.3x longer on two threads than on one), so
 * there the run holds a crew: the caller's thread runs the steps and posts each job to the
 * helpers that have joined, which wait for the next one by spinning for up to SP_SPIN_NS and
 * then sleeping. Where a helper has a core to itself the spin takes a job within a
 * microsecond; where it has not, the sleep gives the core up soon (well inside a time slice).
 * The spin outlasts a step's serial stretch on 257^2 (Kruskal, the breadth-first order: about
 * 0.1-0.2 ms): at 40 us the helper slept through it and woke late, and 100 steps there ran
 * 2-10% longer on two threads, for more CPU (a sleep and a wake-up cost more than the spin).
 * A helper may join while the run goes on (a cascade's thread that first makes the finer
 * levels' inputs): the caller splits each job among the helpers there when it posts it. */
#define SP_SPIN_NS 200000L
/* A helper on its caller's CPU moves off it at most once in this many jobs (a profiling build
 * may give 0xffffffff: never). */
#ifndef SP_NUDGE_POSTS
#define SP_NUDGE_POSTS 64u
#endif
/* The most threads in a crew (a post carries its count in 8 bits). */
#define SP_CREW_MOST 64

typedef void (*sp_job_fn)(sp_state *s, void *arg, int tid, int nt);

typedef struct sp_crew {
    sp_state *s;       /* the run's state, set before the first job */
    sp_job_fn fn;      /* the job posted */
    void *arg;
    int most;          /* the threads the run's pieces are cut for */
    atomic_bool quit;  /* the run is over: helpers leave */
    atomic_uint post;  /* jobs posted so far << 8 | the last one's nt */
    atomic_uint done;  /* helpers' finished shares so far */
    atomic_int joined; /* helpers that have joined */
    unsigned owed;     /* the caller's count of shares posted to helpers */
    atomic_int sleepers;
    atomic_long spin;   /* how long a wait spins before it sleeps, ns (0: sleeps at once) */
    bool solo;          /* the caller runs the jobs alone for now */
    bool asked;         /* an explicit thread count: never alone */
    bool (*idle)(void *arg); /* other work done while waiting (trn_sp_crew_idle) */
    void *idle_arg;
    bool idle_more; /* the caller's: idle may have work left */
    bool large;         /* a large grid's run: never alone, waits sleep at once when busy */
    atomic_long tids[SP_CREW_MOST]; /* the helpers' thread ids (trn_thread_wait_ns), by tid */
    long long waited[SP_CREW_MOST]; /* each thread's run delay at the last check (-1: none) */
    long checked_ns;                /* when the waits were last read (0: not yet) */
    atomic_int caller_cpu;          /* the CPU the caller posted its last job from (-1: none) */
    pthread_mutex_t lock;
    pthread_cond_t wake;
} sp_crew;

static inline void sp_relax(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
    __builtin_ia32_pause();
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
    __asm__ __volatile__("yield");
#endif
}

static long sp_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

/* Waits until the counter *word reaches target: spins up to c->spin ns, then sleeps until
 * sp_crew_add wakes it. */
static void sp_crew_wait(sp_crew *c, atomic_uint *word, unsigned target)
{
    const long spin = atomic_load_explicit(&c->spin, memory_order_relaxed);
    long t0 = 0;
    for (unsigned i = 0;; i++) {
        if ((int)(atomic_load_explicit(word, memory_order_acquire) - target) >= 0) return;
        if ((i & 63u) == 63u) {
            const long t = sp_now_ns();
            if (!t0) t0 = t;
            else if (t - t0 > spin) break;
        }
        sp_relax();
    }
    pthread_mutex_lock(&c->lock);
    /* Sequentially consistent: either sp_crew_add's load sees this count, or this load sees
     * the counter it added to. */
    atomic_fetch_add(&c->sleepers, 1);
    while ((int)(atomic_load(word) - target) < 0)
        pthread_cond_wait(&c->wake, &c->lock);
    atomic_fetch_sub(&c->sleepers, 1);
    pthread_mutex_unlock(&c->lock);
}

/* Wakes whoever sleeps waiting on a counter just changed. */
static void sp_crew_wake(sp_crew *c)
{
    if (atomic_load(&c->sleepers)) {
        pthread_mutex_lock(&c->lock);
        pthread_cond_broadcast(&c->wake);
        pthread_mutex_unlock(&c->lock);
    }
}

/* Adds to a counter and wakes whoever sleeps waiting on it. */
static void sp_crew_add(sp_crew *c, atomic_uint *word, unsigned add)
{
    atomic_fetch_add(word, add);
    sp_crew_wake(c);
}

/* The caller's side: the next job, split among nt threads (its fn and arg set before). */
static void sp_crew_post(sp_crew *c, int nt)
{
    atomic_store_explicit(&c->caller_cpu, trn_thread_cpu(), memory_order_relaxed);
    const unsigned seq = (atomic_load_explicit(&c->post, memory_order_relaxed) >> 8) + 1u;
    atomic_store(&c->post, seq << 8 | (unsigned)nt);
    sp_crew_wake(c);
}

static bool sp_crew_init(sp_crew *c, int most)
{
    memset(c, 0, sizeof *c);
    atomic_init(&c->quit, false);
    atomic_init(&c->post, 0u);
    atomic_init(&c->done, 0u);
    atomic_init(&c->joined, 0);
    atomic_init(&c->sleepers, 0);
    atomic_init(&c->spin, SP_SPIN_NS);
    c->most = most < SP_CREW_MOST ? most : SP_CREW_MOST;
    atomic_init(&c->caller_cpu, -1);
    for (int k = 0; k < SP_CREW_MOST; k++) {
        atomic_init(&c->tids[k], 0L);
        c->waited[k] = -1;
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) return false;
    if (pthread_cond_init(&c->wake, NULL) != 0) {
        pthread_mutex_destroy(&c->lock);
        return false;
    }
    return true;
}

static void sp_crew_dispose(sp_crew *c)
{
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
}

/* A helper: joins and runs its share of each job posted after it joined, until the run ends
 * (at once if it has). A job posted before the caller counted it gives it no share, and the
 * caller does not wait for it then, so it may miss posts: each post carries its thread count,
 * and the helper answers the latest one only. */
static void sp_crew_serve(sp_crew *c)
{
    unsigned seen = atomic_load(&c->post) >> 8;
    if (atomic_load(&c->quit)) return;
    unsigned nudged = seen - SP_NUDGE_POSTS;
    const int tid = atomic_fetch_add(&c->joined, 1) + 1;
    if (tid < SP_CREW_MOST) atomic_store(&c->tids[tid], trn_thread_self_id());
    bool more = c->idle != NULL;
    for (;;) {
        const unsigned target = (seen + 1u) << 8;
        /* While no job is posted (the caller's serial stretches, or its share outlasting this
         * one's), pieces of the other work given (a few microseconds each, so the next job
         * waits little for this thread), until none is left; then the wait as before. */
        SP_WAIT(tid, 0);
        while (more && (int)(atomic_load_explicit(&c->post, memory_order_acquire) - target) < 0)
            more = c->idle(c->idle_arg);
        sp_crew_wait(c, &c->post, target);
        SP_WAIT(tid, 1);
        const unsigned w = atomic_load_explicit(&c->post, memory_order_acquire);
        seen = w >> 8;
        if (atomic_load_explicit(&c->quit, memory_order_relaxed)) return;
        const int nt = (int)(w & 255u);
        if (tid >= nt) continue;
        /* On the caller's CPU while another is free (a new thread placed by the load the
         * last process left on the CPUs): off it, or the two take turns on one CPU until the
         * kernel moves one, 10-30 ms (100 steps on 257^2: 0.094 against 0.081 s). At most
         * once every SP_NUDGE_POSTS jobs, where the kernel puts it back. */
        if (seen - nudged >= SP_NUDGE_POSTS) {
            const int at = trn_thread_cpu();
            if (at >= 0 && at == atomic_load_explicit(&c->caller_cpu, memory_order_relaxed)) {
                trn_thread_leave_cpu(at);
                nudged = seen;
            }
        }
        SP_JOB(c->fn, tid, 0);
        c->fn(c->s, c->arg, tid, nt);
        SP_JOB(c->fn, tid, 1);
        sp_crew_add(c, &c->done, 1u);
    }
}

/* The caller's side at the end of the run: the helpers leave, and later ones do not join. */
static void sp_crew_quit(sp_crew *c)
{
    atomic_store(&c->quit, true);
    sp_crew_post(c, 1);
}

/* Cores no process is running on now, read until `want` are seen free or the readings over
 * `window` ns say otherwise (trn_cores_idle_within; the drainage's strips follow the same
 * rule); below 0, tasks are waiting for a core. A helper that shares its core with another
 * program waits a time slice for it at every job, so small grids run on one thread on a busy
 * machine; the bytes are the same either way. Profiling builds may define
 * SP_IDLE_CORES(want, window, flags) to a number: a shared machine's benchmark runs as if
 * that many cores were free. The readings span 100 us; at a start, and while the helpers wait
 * alone, this process's threads are not counted. Only the first reading's answer that would
 * change what the run does is read again (trn_cores_idle_steady). */
#ifndef SP_IDLE_CORES
/* The reading, replaced by tests' scripted ones (trn_sp_idle_reader_set). */
static long (*sp_idle_reader)(long want, long window_ns, unsigned flags) = trn_cores_idle_within;
#define SP_IDLE_CORES(want, window, flags) sp_idle_reader(want, window, flags)
void trn_sp_idle_reader_set(long (*read)(long want, long window_ns, unsigned flags))
{
    sp_idle_reader = read ? read : trn_cores_idle_within;
}
#else
void trn_sp_idle_reader_set(long (*read)(long want, long window_ns, unsigned flags))
{
    (void)read;
}
#endif

/* A thread's run delay (trn_thread_wait_ns), replaced by tests' scripted ones. */
static long long (*sp_wait_reader)(long tid) = trn_thread_wait_ns;
void trn_sp_wait_reader_set(long long (*read)(long tid))
{
    sp_wait_reader = read ? read : trn_thread_wait_ns;
}

/* The crew's waits for a core since the last check, summed over its threads (the caller and
 * the helpers that have joined; one read for the first time counts from now), ns, and in
 * *threads the threads summed; -1 where one cannot be read. */
static long long sp_crew_waited(sp_crew *c, int *threads)
{
    int n = atomic_load(&c->joined) + 1;
    if (n > SP_CREW_MOST) n = SP_CREW_MOST;
    long long sum = 0;
    *threads = 0;
    for (int k = 0; k < n; k++) {
        const long tid = k ? atomic_load(&c->tids[k]) : trn_thread_self_id();
        if (k && tid <= 0) continue; /* joined, its id not stored yet */
        const long long w = sp_wait_reader(tid);
        if (w < 0) return -1;
        if (c->waited[k] >= 0) {
            sum += w - c->waited[k];
            ++*threads;
        }
        c->waited[k] = w;
    }
    return sum;
}

/* The waits' next window starts at the next check. */
static void sp_crew_waits_forget(sp_crew *c)
{
    for (int k = 0; k < SP_CREW_MOST; k++)
        c->waited[k] = -1;
    c->checked_ns = 0;
}

/* Every SP_CREW_CHECK steps of a default run: where the crew's threads waited for a core over
 * 1/SP_CREW_WAIT_SHARE of the time since the last check (other programs started), the caller
 * runs the jobs alone, since a helper that shares its core waits a time slice at every job.
 * The waits are each thread's run delay; where they cannot be read, a reading of a task
 * waiting for a core (the crew's own threads count as running: a spinning helper is) does.
 * That reading said so at 1-4 of a quiet run's 12 checks (a kernel thread woken for
 * microseconds: 100 steps on 257^2 waited 0.1-3% of the time), and each sent 8 steps to one
 * thread; one busy loop started beside the run made the waits 20-47%. A large
 * grid's crew keeps its helpers (a job there is milliseconds, the helper's share is worth its
 * wait for a core, as a parallel region's threads' was) and checks every step (a step is tens
 * of milliseconds, the check microseconds): while a task waits for a core its waits sleep at
 * once, as OpenMP's passive threads do, since a spin would take the time slice the thread
 * being waited for needs. */
#define SP_CREW_CHECK 8u
#ifndef SP_LATE_FIRST
#define SP_LATE_FIRST 2u
#endif
#define SP_CREW_WAIT_SHARE 8
static void sp_crew_check(sp_crew *c, uint32_t step)
{
    if (c->large) {
        const bool busy = SP_IDLE_CORES(0, TRN_IDLE_WINDOW_NS, 0) < 0;
        atomic_store_explicit(&c->spin, busy ? 0L : SP_SPIN_NS, memory_order_relaxed);
        return;
    }
    if (c->asked || step % SP_CREW_CHECK) return;
    if (c->solo) {
        /* Alone, the helpers wait for no job: they come back only where a core is free for
         * each, this process's threads not counted (a helper still spinning is one of them).
         * Counted as running, as while they work, a core taken by another program left a
         * sleeping helper's reading at 0: the helpers came back onto it and went again at
         * the next check, and 100 steps on 257^2 beside one busy loop took 1.8 times one
         * thread's time. */
        const long helpers = c->most - 1; /* those that have joined or will */
        c->solo = SP_IDLE_CORES(helpers, TRN_IDLE_WINDOW_NS,
                                TRN_IDLE_OWN_ASLEEP | TRN_IDLE_CONFIRM_FREE) < helpers;
        if (!c->solo) sp_crew_waits_forget(c);
        return;
    }
    int threads;
    const long now = sp_now_ns();
    const long long waited = sp_crew_waited(c, &threads);
    if (waited < 0) {
        c->solo = SP_IDLE_CORES(0, TRN_IDLE_WINDOW_NS, 0) < 0;
    } else if (c->checked_ns && threads > 0) {
        c->solo = waited * SP_CREW_WAIT_SHARE > (long long)(now - c->checked_ns) * threads;
    }
    c->checked_ns = now;
}

/* Runs a job on the threads there are: the crew, a region of its own, or this thread. */
static void sp_par(sp_state *s, sp_job_fn fn, void *arg)
{
    sp_crew *c = s->crew;
    if (c) {
        int helpers = c->solo ? 0 : atomic_load(&c->joined);
        if (helpers > SP_CREW_MOST - 1) helpers = SP_CREW_MOST - 1;
        if (helpers > 0) {
            c->fn = fn;
            c->arg = arg;
            c->owed += (unsigned)helpers;
            sp_crew_post(c, 1 + helpers);
            SP_JOB(fn, 0, 0);
            fn(s, arg, 0, 1 + helpers);
            SP_JOB(fn, 0, 1);
            SP_WAIT(0, 0);
            /* While the helpers' shares outlast this one (the stack's pieces are uneven where
             * one river basin holds much of the grid), pieces of the other work given, as the
             * helpers make between jobs. */
            while (c->idle_more &&
                   (int)(atomic_load_explicit(&c->done, memory_order_acquire) - c->owed) < 0)
                c->idle_more = c->idle(c->idle_arg);
            sp_crew_wait(c, &c->done, c->owed);
            SP_WAIT(0, 1);
            return;
        }
    }
#ifdef _OPENMP
    if (!c && omp_get_max_threads() > 1 && !omp_in_parallel()) {
#pragma omp parallel
        fn(s, arg, omp_get_thread_num(), omp_get_num_threads());
        return;
    }
#endif
    SP_JOB(fn, 0, 0);
    fn(s, arg, 0, 1);
    SP_JOB(fn, 0, 1);
}

/* The threads the stack's pieces are cut for. */
static int sp_par_threads(const sp_state *s)
{
    if (s->crew) return s->crew->most;
#ifdef _OPENMP
    return omp_in_parallel() ? 1 : omp_get_max_threads();
#else
    return 1;
#endif
}

/* The crew's threads for a run of its own (1: none): not MFD, not already in a parallel
 * region; the threads asked for, or on a large grid OpenMP's count (the crew took the place of
 * a parallel region per job there: 20 steps on 1025^2 open 300, and each one's start and end
 * woke a sleeping thread, 30-50 us apiece, a tenth of the run on two threads), or on a small
 * one by default no more than the cores free now, read over 100 us (a 2 ms window, to see a
 * task at the start gone, cost a busy machine 2 ms of spinning at every run, 2% of 100 steps on
 * 257^2; the check after SP_LATE_FIRST steps sees it gone instead). A crew that starts alone
 * cost a busy machine more: its region's end waits for the helper's wake-up and then the
 * caller's, each a time slice there (the same 100 steps beside two busy loops: 1.34 times one
 * thread's time). So a small run that finds no core free starts
 * without one, and *late gets the most threads a crew it forms later may have (else 1): it
 * reads again after SP_LATE_FIRST steps, then after twice as many, and so on to every
 * SP_CREW_CHECK, as a crew's helpers waiting alone read. A task that held a core over the
 * start's readings (a kernel worker, the process's own exit beside it) had sent a run of 100
 * steps on 257^2 to one thread throughout (4 of 14 quiet runs); 2 steps later it was gone in 7
 * of 8 such starts. */
static int sp_crew_size(const sp_state *s, const trn_stream_power_params *p, bool mfd, int *late)
{
    *late = 1;
#ifdef _OPENMP
    if (mfd || omp_in_parallel()) return 1;
    if (p->threads > 0) return p->threads < SP_CREW_MOST ? p->threads : SP_CREW_MOST;
    const long most = omp_get_max_threads();
    if (s->n >= SP_PARALLEL_MIN_SAMPLES) return most < SP_CREW_MOST ? (int)most : SP_CREW_MOST;
    if (most < 2) return 1;
    const long idle = SP_IDLE_CORES(most - 1, TRN_IDLE_WINDOW_NS, TRN_IDLE_OWN_ASLEEP);
    if (idle < 1) {
        *late = most < SP_CREW_MOST ? (int)most : SP_CREW_MOST;
        return 1;
    }
    return (int)(most < 1 + idle ? most : 1 + idle);
#else
    (void)s;
    (void)p;
    (void)mfd;
    return 1;
#endif
}

trn_sp_crew *trn_sp_crew_new(int threads)
{
    sp_crew *c = malloc(sizeof *c);
    if (c && !sp_crew_init(c, threads > 1 ? threads : 1)) {
        free(c);
        c = NULL;
    }
    return c;
}

void trn_sp_crew_free(trn_sp_crew *c)
{
    if (!c) return;
    sp_crew_dispose(c);
    free(c);
}

void trn_sp_crew_idle(trn_sp_crew *c, bool (*piece)(void *arg), void *arg)
{
    if (!c) return;
    c->idle = piece;
    c->idle_arg = arg;
    c->idle_more = piece != NULL;
}

void trn_sp_crew_help(trn_sp_crew *c)
{
    /* Only with a core of its own: no task waiting for one (the run's thread and this one
     * are among those running). */
    if (c && SP_IDLE_CORES(0, TRN_IDLE_WINDOW_NS, 0) >= 0) sp_crew_serve(c);
}

/* Thread tid's share [*lo, *hi) of count items split in nt. */
static inline void sp_share(size_t count, int tid, int nt, size_t *lo, size_t *hi)
{
    *lo = count * (size_t)tid / (size_t)nt;
    *hi = count * (size_t)(tid + 1) / (size_t)nt;
}

/* What the passes' jobs read; the counters are set before each job. */
typedef struct sp_job_args {
    const trn_stream_power_params *p;
    double cell_area;
    bool rho8;
    uint32_t salt;
    atomic_ullong sum;  /* the receivers' pits */
    atomic_size_t next; /* the next of the stack's pieces to take */
    const double *h;    /* diffusion: from h into out */
    double *out;
    double ax, az, kdt;
} sp_job_args;

/* The next of count pieces for a job's thread, SIZE_MAX when none is left. */
static inline size_t sp_take(sp_job_args *a, size_t count)
{
    const size_t c = atomic_fetch_add_explicit(&a->next, 1u, memory_order_relaxed);
    return c < count ? c : SIZE_MAX;
}

#include "core/kernel.h"

/* The code (0..7) of the steepest positive slope, the first on ties, or 8 when none falls:
 * branch-free selects, so the row loops that call it vectorise. */
KERNEL uint8_t steepest(double s0, double s1, double s2, double s3, double s4, double s5,
                        double s6, double s7)
{
    double m = 0.0;
    m = s0 > m ? s0 : m;
    m = s1 > m ? s1 : m;
    m = s2 > m ? s2 : m;
    m = s3 > m ? s3 : m;
    m = s4 > m ? s4 : m;
    m = s5 > m ? s5 : m;
    m = s6 > m ? s6 : m;
    m = s7 > m ? s7 : m;
    int c = s7 == m ? 7 : 8;
    c = s6 == m ? 6 : c;
    c = s5 == m ? 5 : c;
    c = s4 == m ? 4 : c;
    c = s3 == m ? 3 : c;
    c = s2 == m ? 2 : c;
    c = s1 == m ? 1 : c;
    c = s0 == m ? 0 : c;
    return (uint8_t)(m > 0.0 ? c : 8);
}

/* The receiver codes of one interior row (samples 1 .. nx - 2): the steepest strict descent,
 * the first of equal slopes in code order, 8 when no neighbour is lower. Written as a maximum
 * and the first code reaching it, without branches, so it vectorises; the same comparisons of
 * the same slopes as a running "strictly steeper" search. */
KERNEL void receivers_row(const double *RESTRICT up, const double *RESTRICT mid,
                          const double *RESTRICT dn, uint8_t *RESTRICT code, uint32_t nx,
                          const double *RESTRICT inv)
{
    const double i0 = inv[0], i1 = inv[1], i2 = inv[2], i3 = inv[3], i4 = inv[4], i5 = inv[5],
                 i6 = inv[6], i7 = inv[7];
    for (uint32_t i = 1; i < nx - 1u; i++) {
        const double hk = mid[i];
        const double s0 = (hk - mid[i + 1]) * i0, s1 = (hk - dn[i + 1]) * i1,
                     s2 = (hk - dn[i]) * i2, s3 = (hk - dn[i - 1]) * i3,
                     s4 = (hk - mid[i - 1]) * i4, s5 = (hk - up[i - 1]) * i5,
                     s6 = (hk - up[i]) * i6, s7 = (hk - up[i + 1]) * i7;
        code[i] = steepest(s0, s1, s2, s3, s4, s5, s6, s7);
    }
}

/* Rho8 (Fairfield and Leymarie 1991, Water Resources Research 27): as receivers_row, but the
 * slope to each diagonal neighbour is the drop over (2 - r) cardinal cells, r uniform in [0, 1)
 * drawn per sample from a hash of its index and salt. On a plane whose gradient lies theta off
 * the nearest axis the diagonal wins with probability tan(theta), so flow paths follow the true
 * gradient on average instead of locking onto the eight grid directions, and valleys stop
 * running along them. inv_card: 1 / dx (codes 0, 4) and 1 / dz (codes 2, 6); inv_unit: 1 / the
 * cardinal cell the diagonal is measured in (dd / sqrt 2). Integer hash and IEEE operations
 * only, so every variant gives the same codes. */
KERNEL void receivers_row_rho8(const double *RESTRICT up, const double *RESTRICT mid,
                               const double *RESTRICT dn, uint8_t *RESTRICT code, uint32_t nx,
                               double inv_x, double inv_z, double inv_unit, uint32_t k0,
                               uint32_t salt)
{
    for (uint32_t i = 1; i < nx - 1u; i++) {
        uint32_t x = (k0 + i) * 0x9E3779B1u + salt;
        x ^= x >> 16;
        x *= 0x7feb352du;
        x ^= x >> 15;
        x *= 0x846ca68bu;
        x ^= x >> 16;
        const double r = (double)(int32_t)(x >> 8) * (1.0 / 16777216.0);
        const double id = inv_unit / (2.0 - r);
        const double hk = mid[i];
        const double s0 = (hk - mid[i + 1]) * inv_x, s1 = (hk - dn[i + 1]) * id,
                     s2 = (hk - dn[i]) * inv_z, s3 = (hk - dn[i - 1]) * id,
                     s4 = (hk - mid[i - 1]) * inv_x, s5 = (hk - up[i - 1]) * id,
                     s6 = (hk - up[i]) * inv_z, s7 = (hk - up[i + 1]) * id;
        code[i] = steepest(s0, s1, s2, s3, s4, s5, s6, s7);
    }
}

/* One explicit diffusion substep of one interior row (samples 1 .. nx - 2). */
KERNEL void diffuse_row(const double *RESTRICT up, const double *RESTRICT mid,
                        const double *RESTRICT dn, double *RESTRICT out, uint32_t nx, double ax,
                        double az, double kdt)
{
    for (uint32_t i = 1; i < nx - 1u; i++) {
        const double c = mid[i];
        const double lap = (mid[i - 1] - 2.0 * c + mid[i + 1]) * ax + (up[i] - 2.0 * c + dn[i]) * az;
        out[i] = c + kdt * lap;
    }
}

typedef void (*receivers_row_fn)(const double *, const double *, const double *, uint8_t *,
                                 uint32_t, const double *);
typedef void (*receivers_rho8_fn)(const double *, const double *, const double *, uint8_t *,
                                  uint32_t, double, double, double, uint32_t, uint32_t);
typedef void (*diffuse_row_fn)(const double *, const double *, const double *, double *,
                               uint32_t, double, double, double);

static void receivers_row_default(const double *up, const double *mid, const double *dn,
                                  uint8_t *code, uint32_t nx, const double *inv)
{
    receivers_row(up, mid, dn, code, nx, inv);
}

static void receivers_rho8_default(const double *up, const double *mid, const double *dn,
                                   uint8_t *code, uint32_t nx, double ix, double iz, double iu,
                                   uint32_t k0, uint32_t salt)
{
    receivers_row_rho8(up, mid, dn, code, nx, ix, iz, iu, k0, salt);
}

static void diffuse_row_default(const double *up, const double *mid, const double *dn,
                                double *out, uint32_t nx, double ax, double az, double kdt)
{
    diffuse_row(up, mid, dn, out, nx, ax, az, kdt);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void receivers_row_avx2(const double *up, const double *mid, const double *dn,
                                           uint8_t *code, uint32_t nx, const double *inv)
{
    receivers_row(up, mid, dn, code, nx, inv);
}

TARGET_AVX2 static void receivers_rho8_avx2(const double *up, const double *mid,
                                            const double *dn, uint8_t *code, uint32_t nx,
                                            double ix, double iz, double iu, uint32_t k0,
                                            uint32_t salt)
{
    receivers_row_rho8(up, mid, dn, code, nx, ix, iz, iu, k0, salt);
}

TARGET_AVX2 static void diffuse_row_avx2(const double *up, const double *mid, const double *dn,
                                         double *out, uint32_t nx, double ax, double az,
                                         double kdt)
{
    diffuse_row(up, mid, dn, out, nx, ax, az, kdt);
}
#endif

/* AVX2 where the processor has it: the same IEEE operations four at a time (no fused
 * multiply-add), so the results are the same bits. */
static bool use_avx2(void)
{
#if HAVE_AVX2_VARIANT
    return __builtin_cpu_supports("avx2") != 0;
#else
    return false;
#endif
}

/* The Rho8 draws' salt: the seed mixed (SplitMix64's finaliser). The draws stay the same for
 * every step of a run: a sample keeps its choice between a cardinal and a diagonal receiver
 * while the land around it keeps its shape, so channels settle into one network. Drawn afresh
 * each step, the network kept moving and spread its area over neighbouring paths, which made
 * drainage less hierarchical (the drainage-area exponent b of the Basin preset 0.58 instead
 * of 0.50, the Mountain Range's 0.54 instead of 0.52, with the same grid fingerprints). */
static uint32_t sp_salt(uint64_t seed)
{
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint32_t)(z ^ (z >> 32));
}

/* Steepest strict descent (or Rho8's randomised one) per sample; returns the number of interior
 * pits, and each row's in row_pits. Each sample reads only heights, so rows split over threads
 * give the same result. The border is base level, so interior samples need no bounds checks. */
static void receivers_job(sp_state *s, void *arg, int tid, int nt)
{
    sp_job_args *a = arg;
    const bool rho8 = a->rho8;
    const uint32_t salt = a->salt;
    const uint32_t nx = s->nx, nz = s->nz;
    const double *h = s->h;
    const uint8_t *base = s->base;
    uint8_t *rcode = s->rcode;
    uint32_t *rcv = s->rcv;
    const int32_t *off = s->off;
    receivers_row_fn row_fn = receivers_row_default;
#if HAVE_AVX2_VARIANT
    if (s->avx2) row_fn = receivers_row_avx2;
#endif
    receivers_rho8_fn rho8_fn = receivers_rho8_default;
#if HAVE_AVX2_VARIANT
    if (s->avx2) rho8_fn = receivers_rho8_avx2;
#endif
    const double inv_x = 1.0 / s->dx, inv_z = 1.0 / s->dz;
    const double inv_unit = 1.4142135623730951 / s->dd;
    uint64_t pits = 0;
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    for (uint32_t j = (uint32_t)j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        if (j == 0 || j + 1u == nz) {
            for (uint32_t i = 0; i < nx; i++) {
                rcv[row + i] = (uint32_t)(row + i);
                rcode[row + i] = 8;
            }
            s->row_pits[j] = 0;
            continue;
        }
        uint32_t row_pits = 0;
        if (rho8)
            rho8_fn(h + row - nx, h + row, h + row + nx, rcode + row, nx, inv_x, inv_z, inv_unit,
                    (uint32_t)row, salt);
        else
            row_fn(h + row - nx, h + row, h + row + nx, rcode + row, nx, s->inv_dist);
        rcode[row] = 8;
        rcode[row + nx - 1u] = 8;
        for (uint32_t i = 0; i < nx; i++) {
            const size_t k = row + i;
            uint8_t c = rcode[k];
            if (base[k]) c = rcode[k] = 8;
            else row_pits += c == 8;
            rcv[k] = (uint32_t)((int64_t)k + off[c]);
        }
        s->row_pits[j] = row_pits;
        pits += row_pits;
    }
    atomic_fetch_add_explicit(&a->sum, pits, memory_order_relaxed);
}

static uint64_t sp_receivers(sp_state *s, bool rho8, uint32_t salt)
{
    sp_job_args a = {.rho8 = rho8, .salt = salt};
    atomic_init(&a.sum, 0u);
    sp_par(s, receivers_job, &a);
    return atomic_load(&a.sum);
}

/* The donor masks from the receiver codes: bit d of dmask[v] is set when the neighbour in
 * direction d has v as its receiver (its code points back, (d + 4) mod 8). With arg non-NULL
 * (a crew's step that routes pits) each thread also claims its rows' basin labels for the
 * tree walk that follows (see sp_donors). */
static void donors_job(sp_state *s, void *arg, int tid, int nt)
{
    const uint32_t nx = s->nx, nz = s->nz;
    const uint8_t *rc = s->rcode;
    uint8_t *dm = s->dmask;
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    if (arg && nt > 1) memset(s->basin + j0 * nx, 0, (j1 - j0) * nx * sizeof *s->basin);
    for (uint32_t j = (uint32_t)j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        if (j == 0 || j + 1u == nz) {
            for (uint32_t i = 0; i < nx; i++) {
                unsigned m = 0;
                for (int d = 0; d < 8; d++) {
                    const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                    if (ii < 0 || jj < 0 || ii >= nx || jj >= nz) continue;
                    if (rc[(size_t)jj * nx + (size_t)ii] == ((d + 4) & 7)) m |= 1u << d;
                }
                dm[row + i] = (uint8_t)m;
            }
            continue;
        }
        const uint8_t *up = rc + row - nx, *mid = rc + row, *dn = rc + row + nx;
        /* The first and last samples of the row: no neighbour beyond the edge. */
        dm[row] = (uint8_t)((mid[1] == 4) | (dn[1] == 5) << 1 | (dn[0] == 6) << 2 |
                            (up[0] == 2) << 6 | (up[1] == 3) << 7);
        const uint32_t e = nx - 1u;
        dm[row + e] = (uint8_t)((dn[e] == 6) << 2 | (dn[e - 1] == 7) << 3 | (mid[e - 1] == 0) << 4 |
                                (up[e - 1] == 1) << 5 | (up[e] == 2) << 6);
        for (uint32_t i = 1; i < e; i++)
            dm[row + i] = (uint8_t)((mid[i + 1] == 4) | (dn[i + 1] == 5) << 1 | (dn[i] == 6) << 2 |
                                    (dn[i - 1] == 7) << 3 | (mid[i - 1] == 0) << 4 |
                                    (up[i - 1] == 1) << 5 | (up[i] == 2) << 6 |
                                    (up[i + 1] == 3) << 7);
    }
}

/* On a crew's step with pits, the basin labels the tree walk writes next were last read and
 * written all over the grid by both threads (the passes, Kruskal, the carving), so most of
 * the walk's scattered label writes waited for a cache line held by the other core: on two
 * threads a sample cost 1.5-1.9 times what it does on one (400 steps on 257^2: the walk's CPU
 * 0.19 s on one thread, 0.28-0.33 s on two, and 0.36 s with the caller walking alone beside
 * an idle helper). Each thread first writes its own rows' labels in order (a stream the
 * hardware fetches ahead, a microsecond or so); the walkers take trees from the top and the
 * bottom of the grid, so most of their writes then hit lines their own core holds. Large
 * grids' labels do not fit a core's cache: nothing to claim there. The values written are
 * all overwritten by the walk. */
static void sp_donors(sp_state *s, bool pits)
{
    sp_par(s, donors_job, pits && s->crew ? (void *)s : NULL);
}

/* The tree of donors below root, breadth first, appended to stack at top (the stack is its
 * own queue); labels each sample with id when label is given. Returns the new top. Every
 * direction is written and kept only when its donor bit is set: no branch on the donors, and
 * no chain of dependent loads as a depth-first walk has. stack has room for 8 past the end. */
static size_t sp_tree(const sp_state *s, uint32_t *stack, uint32_t root, size_t top,
                      uint32_t *label, uint32_t id)
{
    const uint8_t *dm = s->dmask;
    const int32_t(*don_off)[8] = s->don_off;
    const uint8_t *don_count = s->don_count;
    size_t head = top;
    stack[top++] = root;
    while (head < top) {
        if (head + SP_AHEAD < top) {
            const uint32_t w = stack[head + SP_AHEAD];
            SP_PREFETCH(&dm[w]);
            if (label) SP_PREFETCH(&label[w], 1);
        }
        const uint32_t v = stack[head++];
        if (label) label[v] = id;
        const unsigned m = dm[v];
        const int32_t *o = don_off[m];
        for (int i = 0; i < 8; i++)
            stack[top + (size_t)i] = (uint32_t)((int64_t)v + o[i]);
        top += don_count[m];
    }
    return top;
}

/* Braun and Willett's stack, each tree breadth first, from each base-level sample in index
 * order (without pits, or after routing, every tree has one). Any order with receivers before
 * donors gives the same results: each later stage reads a sample's receiver only after
 * finishing it. */
static void sp_stack(sp_state *s)
{
    size_t top = 0;
    for (size_t t = 0; t < s->nbroot; t++) {
        s->tree_at[t] = (uint32_t)top;
        top = sp_tree(s, s->stack, s->broot[t], top, NULL, 0);
    }
    s->tree_at[s->nbroot] = (uint32_t)top;
    s->ntrees = s->nbroot;
}

/* The stack cut into up to one piece per thread at tree starts (each tree holds every
 * receiver of its samples), about equal in samples: the passes in stack order run the pieces
 * side by side with the same results as one after the other. */
static void sp_chunks(sp_state *s)
{
    size_t want = (size_t)sp_par_threads(s);
    if (want > SP_MAX_CHUNKS) want = SP_MAX_CHUNKS;
    size_t c = 1;
    s->chunk_at[0] = 0;
    /* Each cut at the tree start nearest its share, before or after it (a river basin can hold
     * 40% of the samples: cutting after it whenever it spans the share left one piece with 59%
     * of a 1025^2 grid where 52% was possible). */
    for (size_t t = 1; t < s->ntrees && c < want; t++) {
        const size_t share = c * s->n / want;
        if (s->tree_at[t] < share) continue;
        const size_t before = s->tree_at[t - 1u], after = s->tree_at[t];
        const size_t at = t > 1 && before > s->chunk_at[c - 1u] && share - before < after - share
                              ? before
                              : after;
        s->chunk_at[c++] = at;
    }
    s->chunk_at[c] = s->n;
    s->nchunk = c;
}

/* With pits: the trees into buf, labelled with their basins (s->basin: 0 for every base-level
 * tree, 1.. for the pits' trees in index order; each base-level root's tree number in area,
 * which sp_area rewrites), by two workers (threads when there are): both take blocks of
 * SP_BASE_TREES base-level trees, then blocks of rows, as they come free, and walk the trees
 * (of the base-level roots; of the pits in the rows), the first into buf[0 ..), the second
 * into buf[n + 8 ..) (buf holds 2 n + 16). Base-level tree t fills buf[bseg[2 t] ..
 * bseg[2 t + 1]), basin b >= 1 buf[seg[2 b] .. seg[2 b + 1]), wherever they landed: the
 * labels and the trees' samples do not depend on which worker walked a tree. (The base-level
 * trees all went to the first worker once: a third of a 257^2 step's time on one thread.)
 * The first worker takes blocks from the first tree and row on, the second from the last
 * back: the two write labels far apart (neighbouring trees' labels share cache lines). */
#define SP_BASE_TREES 16u
typedef struct sp_basins_args {
    uint32_t *buf;
    size_t *seg, *bseg;
    atomic_size_t trees, rows; /* blocks taken, of base-level trees and of rows */
} sp_basins_args;

/* Worker w's k-th block of count, taking from the front (w 0) or the back (w 1) while any is
 * left (taken counts the blocks of both); SIZE_MAX when none is. */
static size_t sp_take_end(atomic_size_t *taken, size_t count, int w, size_t k)
{
    if (atomic_fetch_add_explicit(taken, 1u, memory_order_relaxed) >= count) return SIZE_MAX;
    return w ? count - 1u - k : k;
}

static void basins_job(sp_state *s, void *arg, int tid, int nt)
{
    sp_basins_args *a = arg;
    uint32_t *buf = a->buf;
    size_t *seg = a->seg;
    const uint32_t nx = s->nx, nz = s->nz;
    const uint32_t *row_at = s->row_at;
    for (int w = tid; w < 2; w += nt) {
        const size_t at = w ? s->n + 8u : 0;
        uint32_t *out = buf + at;
        size_t top = 0;
        const size_t tree_blocks = (s->nbroot + SP_BASE_TREES - 1u) / SP_BASE_TREES;
        for (size_t m = 0;; m++) {
            const size_t b = sp_take_end(&a->trees, tree_blocks, w, m);
            if (b == SIZE_MAX) break;
            const size_t t1 = s->nbroot - b * SP_BASE_TREES > SP_BASE_TREES
                                  ? (b + 1u) * SP_BASE_TREES
                                  : s->nbroot;
            for (size_t t = b * SP_BASE_TREES; t < t1; t++) {
                const uint32_t r = s->broot[t];
                s->area[r] = (uint32_t)t;
                a->bseg[2 * t] = at + top;
                top = sp_tree(s, out, r, top, s->basin, 0);
                a->bseg[2 * t + 1] = at + top;
            }
        }
        const size_t row_blocks = (nz + SP_PIT_ROWS - 1u) / SP_PIT_ROWS;
        for (size_t m = 0;; m++) {
            const size_t b = sp_take_end(&a->rows, row_blocks, w, m);
            if (b == SIZE_MAX) break;
            const uint32_t j0 = (uint32_t)(b * SP_PIT_ROWS);
            const uint32_t j1 = nz - j0 > SP_PIT_ROWS ? j0 + SP_PIT_ROWS : nz;
            for (uint32_t j = j0; j < j1; j++) {
                if (!s->row_pits[j]) continue;
                uint32_t q = row_at[j];
                for (size_t k = (size_t)j * nx; k < (size_t)(j + 1u) * nx; k++)
                    if (s->rcode[k] == 8 && !s->base[k]) {
                        seg[2 * (q + 1u)] = at + top;
                        top = sp_tree(s, out, (uint32_t)k, top, s->basin, q + 1u);
                        seg[2 * (q + 1u) + 1] = at + top;
                        q++;
                    }
            }
        }
    }
}

static void sp_stack_basins(sp_state *s, uint32_t *buf, size_t *seg, size_t *bseg)
{
    uint32_t *row_at = s->row_at;
    row_at[0] = 0;
    for (uint32_t j = 0; j < s->nz; j++)
        row_at[j + 1] = row_at[j] + s->row_pits[j];
    s->ntrees = s->nbroot;
    sp_basins_args a = {.buf = buf, .seg = seg, .bseg = bseg};
    atomic_init(&a.trees, 0u);
    atomic_init(&a.rows, 0u);
    sp_par(s, basins_job, &a);
}

/* A link between two basins across neighbouring samples a (in one) and b (in the other); the
 * water crossing it must rise to w = max(h[a], h[b]). */
typedef struct sp_edge {
    double w;
    uint32_t a, b;
} sp_edge;

static int edge_cmp(const void *x, const void *y)
{
    const sp_edge *e = x, *f = y;
    if (e->w != f->w) return e->w < f->w ? -1 : 1;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

/* edge_cmp's order, inline: (w, a, b) is unique to an edge (a pair of samples joins one pair of
 * basins), so any sort by it gives the order qsort gave. */
static inline bool edge_less(const sp_edge *e, const sp_edge *f)
{
    if (e->w != f->w) return e->w < f->w;
    if (e->a != f->a) return e->a < f->a;
    return e->b < f->b;
}

/* a[0 .. na) and b[0 .. nb), each sorted, merged into out. */
static void edge_merge(const sp_edge *a, size_t na, const sp_edge *b, size_t nb, sp_edge *out)
{
    size_t i = 0, j = 0, k = 0;
    while (i < na && j < nb)
        out[k++] = edge_less(&b[j], &a[i]) ? b[j++] : a[i++];
    while (i < na)
        out[k++] = a[i++];
    while (j < nb)
        out[k++] = b[j++];
}

/* Merge sort of a[0 .. n), tmp as scratch (n entries); short runs by insertion. */
static void edge_sort(sp_edge *a, sp_edge *tmp, size_t n)
{
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            const sp_edge x = a[i];
            size_t j = i;
            for (; j > 0 && edge_less(&x, &a[j - 1u]); j--)
                a[j] = a[j - 1u];
            a[j] = x;
        }
        return;
    }
    const size_t h = n / 2u;
    edge_sort(a, tmp, h);
    edge_sort(a + h, tmp + h, n - h);
    if (!edge_less(&a[h], &a[h - 1u])) return; /* already in order */
    edge_merge(a, h, a + h, n - h, tmp);
    memcpy(a, tmp, n * sizeof *a);
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* The D8 code from v to its neighbour q. */
static uint8_t neighbour_code(const sp_state *s, uint32_t v, uint32_t q)
{
    const int64_t di = (int64_t)(q % s->nx) - (int64_t)(v % s->nx);
    const int64_t dj = (int64_t)(q / s->nx) - (int64_t)(v / s->nx);
    for (uint8_t d = 0; d < 8; d++)
        if (TRN_D8_DI[d] == di && TRN_D8_DJ[d] == dj) return d;
    return 8;
}

/* The lowest passes between basins: an open-addressing table keyed by the pair of basins,
 * key and pass side by side (one cache line per probe). Most neighbouring samples across a
 * boundary join the same two basins as the sample before them in the row, or as the boundary
 * sample in the same column of the row before: the slots of those are tried first. */
typedef struct sp_pass_slot {
    uint64_t key; /* UINT64_MAX: empty */
    sp_edge e;
} sp_pass_slot;

typedef struct sp_pass_table {
    size_t cap, count;
    sp_pass_slot *slots;
    uint64_t *col_key; /* per column: the pair last looked up there, and its slot */
    uint32_t *col_slot;
    uint32_t nx;
} sp_pass_table;

static bool pass_grow(sp_pass_table *t)
{
    /* Rehash every pair into a table twice the size; the column hints are dropped. */
    const size_t ncap = t->cap * 2;
    sp_pass_slot *ns = malloc(ncap * sizeof *ns);
    if (!ns) return false;
    for (size_t k = 0; k < ncap; k++)
        ns[k].key = UINT64_MAX;
    for (size_t k = 0; k < t->cap; k++) {
        if (t->slots[k].key == UINT64_MAX) continue;
        size_t h = (size_t)((t->slots[k].key * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
        while (ns[h].key != UINT64_MAX)
            h = (h + 1) & (ncap - 1);
        ns[h] = t->slots[k];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
    memset(t->col_key, 0xff, t->nx * sizeof *t->col_key);
    return true;
}

/* The slot of key (inserted with e when new); SIZE_MAX when out of memory. */
static size_t pass_slot(sp_pass_table *t, uint64_t key, const sp_edge *e)
{
    if (2 * (t->count + 1) > t->cap && !pass_grow(t)) return SIZE_MAX;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (t->cap - 1);
    while (t->slots[h].key != UINT64_MAX && t->slots[h].key != key)
        h = (h + 1) & (t->cap - 1);
    if (t->slots[h].key == UINT64_MAX) {
        t->slots[h].key = key;
        t->slots[h].e = *e;
        t->count++;
    }
    return h;
}

/* Every neighbouring pair (v, q = v + off[d], q > v) in different basins, v in rows j0 ..
 * j1 - 1: the pass between them kept when it is the lowest of its pair of basins (edge_cmp's
 * order). flags: a row's worth of bytes (nx rounded up to 8). */
static bool sp_passes(const sp_state *s, sp_pass_table *t, uint8_t *flags, uint32_t j0,
                      uint32_t j1)
{
    const uint32_t nx = s->nx, nz = s->nz;
    const uint32_t *b = s->basin;
    const double *h = s->h;
    uint64_t last_key = UINT64_MAX;
    size_t last = 0;
    for (uint32_t j = j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        const uint32_t *bm = b + row;
        if (j + 1u < nz) {
            /* Interior samples of the row (E, SE, S and SW all exist): a byte per sample with
             * a bit per neighbour in another basin (vectorises); the edge samples then get
             * theirs with bounds checks. */
            const uint32_t *bd = b + row + nx;
            for (uint32_t i = 1; i + 1u < nx; i++) {
                const uint32_t bv = bm[i];
                flags[i] = (uint8_t)((bv != bm[i + 1]) | (bv != bd[i + 1]) << 1 |
                                     (bv != bd[i]) << 2 | (bv != bd[i - 1]) << 3);
            }
        }
        for (uint32_t i = 0; i < nx; i++) {
            if (j + 1u < nz && i > 0 && i + 1u < nx) {
                i = nx - 2u;
                continue;
            }
            unsigned f = 0;
            for (int d = 0; d < 4; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii < 0 || ii >= nx || jj >= nz) continue;
                f |= (unsigned)(bm[i] != b[(size_t)jj * nx + (size_t)ii]) << d;
            }
            flags[i] = (uint8_t)f;
        }
        for (uint32_t i = nx; i < ((nx + 7u) & ~7u); i++)
            flags[i] = 0;
        /* The samples on a boundary, eight flags at a time. */
        for (uint32_t i0 = 0; i0 < nx; i0 += 8) {
            uint64_t w;
            memcpy(&w, flags + i0, sizeof w);
            while (w) {
                const int bit = trn_ctz64(w) & ~7;
                const uint32_t i = i0 + (uint32_t)(bit >> 3);
                unsigned f = (unsigned)(w >> bit) & 0xffu;
                w &= ~(0xffull << bit);
                const size_t v = row + i;
                const uint32_t bv = bm[i];
                const double hv = h[v];
                while (f) {
                    const int d = trn_ctz64(f);
                    f &= f - 1u;
                    const size_t q = (size_t)((int64_t)v + s->off[d]);
                    const uint32_t bq = b[q];
                    const sp_edge e = {hv > h[q] ? hv : h[q], (uint32_t)v, (uint32_t)q};
                    const uint64_t key =
                        bv < bq ? (uint64_t)bv << 32 | bq : (uint64_t)bq << 32 | bv;
                    if (key != last_key) {
                        if (key == t->col_key[i]) {
                            last = t->col_slot[i];
                        } else {
                            last = pass_slot(t, key, &e);
                            if (last == SIZE_MAX) return false;
                            t->col_key[i] = key;
                            t->col_slot[i] = (uint32_t)last;
                        }
                        last_key = key;
                    }
                    sp_edge *cur = &t->slots[last].e;
                    if (edge_cmp(&e, cur) < 0) *cur = e;
                }
            }
        }
        /* A grown table moved the slots: the row's hint must not outlive it. */
        last_key = UINT64_MAX;
    }
    return true;
}

/* Route closed depressions without changing heights (Cordonnier, Bovy and Braun 2019): the
 * basins of the receiver forest (every base-level sample in one outlet basin, each pit its own)
 * joined by their lowest passes in a minimum spanning tree grown from the outlet; in each basin
 * the receivers from its pass sample back to its pit are reversed ("carving"), so the basin
 * drains over its sill into the neighbouring sample on the downstream side. Lakes (samples not
 * above their new receiver) do not erode; the sill carries the basin's area and incision lowers
 * it. Leaves the stack of the routed forest; the donor masks follow the carving.
 * Returns false when out of memory. */
/* What sp_route_pits's jobs share. */
typedef struct sp_route_args {
    /* The passes: each worker's table, row flags, sorted list and its length, success. */
    sp_pass_table t[2];
    uint8_t *flags[2];
    sp_edge *part[2];
    size_t npart[2];
    bool wok[2];
    /* The base-level trees of the basins draining into the outlet basin. */
    const uint32_t *queue, *drains_to, *below;
    uint32_t *tree_of;
    size_t qt;
    /* The new stack, tree by tree. */
    const uint32_t *old, *order, *sill;
    const size_t *seg, *bseg, *first, *at;
    atomic_size_t next;
} sp_route_args;

/* Two workers over halves of the rows, each with its own table, whose passes it then sorts.
 * Each worker empties its own table first: emptied by the caller, the second worker's table
 * (64 KB and more) sat in the caller's cache and each of its lines came over to the other
 * core on first use (on 257^2 that half took 0.051 s against 0.040 s over 400 steps). */
static void passes_job(sp_state *s, void *arg, int tid, int nt)
{
    sp_route_args *a = arg;
    const uint32_t mid = s->nz / 2u;
    for (int w = tid; w < 2; w += nt) {
        sp_pass_table *t = &a->t[w];
        for (size_t k = 0; k < t->cap; k++)
            t->slots[k].key = UINT64_MAX;
        memset(t->col_key, 0xff, s->nx * sizeof *t->col_key);
        a->wok[w] = sp_passes(s, t, a->flags[w], w ? mid : 0, w ? s->nz : mid);
        const size_t c = t->count;
        a->part[w] = a->wok[w] ? malloc((c ? c : 1) * sizeof *a->part[w]) : NULL;
        sp_edge *scratch = a->part[w] ? malloc((c ? c : 1) * sizeof *scratch) : NULL;
        a->wok[w] = scratch != NULL;
        if (a->wok[w]) {
            size_t q = 0;
            for (size_t k = 0; k < t->cap; k++)
                if (t->slots[k].key != UINT64_MAX) a->part[w][q++] = t->slots[k].e;
            a->npart[w] = q;
            edge_sort(a->part[w], scratch, q);
        }
        free(scratch);
    }
}

/* Each basin draining into the outlet basin: its receivers there (which carving does not
 * change) followed to the root, in blocks of 16 of the breadth-first order. */
static void tree_of_job(sp_state *s, void *arg, int tid, int nt)
{
    (void)tid;
    (void)nt;
    sp_route_args *a = arg;
    for (;;) {
        const size_t q0 = 1u + 16u * atomic_fetch_add_explicit(&a->next, 1u, memory_order_relaxed);
        if (q0 >= a->qt) break;
        const size_t q1 = a->qt - q0 > 16u ? q0 + 16u : a->qt;
        for (size_t q = q0; q < q1; q++) {
            const uint32_t c = a->queue[q];
            if (a->drains_to[c] != 0) continue;
            uint32_t x = a->below[c];
            while (s->rcv[x] != x)
                x = s->rcv[x];
            a->tree_of[c] = s->area[x];
        }
    }
}

/* The new stack, base-level tree by tree in blocks of 64 trees (see sp_route_pits). A crew
 * of two takes blocks from the first and the last tree on, as the walk did (trees by their
 * roots' rows): each carves where it walked, in lines its core holds (small grids fit a
 * core's cache; large ones take blocks in turn as before). */
static void carve_job(sp_state *s, void *arg, int tid, int nt)
{
    sp_route_args *a = arg;
    const uint32_t *old = a->old, *order = a->order, *sill = a->sill, *below = a->below;
    const size_t *seg = a->seg, *first = a->first, *at = a->at;
    uint32_t *basin = s->basin;
    const size_t blocks = (s->ntrees + 63u) / 64u;
    for (size_t m = 0;; m++) {
        const size_t blk = nt == 2 && s->crew
                               ? sp_take_end(&a->next, blocks, tid, m)
                               : atomic_fetch_add_explicit(&a->next, 1u, memory_order_relaxed);
        if (blk >= blocks) break;
        const size_t i0 = 64u * blk;
        const size_t i1 = s->ntrees - i0 > 64u ? i0 + 64u : s->ntrees;
        for (size_t i = i0; i < i1; i++) {
            const size_t os = a->bseg[2 * i], oe = a->bseg[2 * i + 1];
            size_t top = at[i];
            memcpy(s->stack + top, old + os, (oe - os) * sizeof *old);
            top += oe - os;
            for (size_t o = i ? first[i - 1] : 0; o < first[i]; o++) {
                const uint32_t b = order[o];
                /* Carve: reverse the receivers from the basin's sill back to its
                 * pit, so the basin drains out over its sill to the downstream
                 * side, and the sill, carrying the basin's area, is the sample
                 * that erodes. Each reversed link moves its donor bit to the
                 * other end. The path goes on the stack as it is walked, and is
                 * marked so that the pass over the old segment skips it. */
                uint32_t prev = below[b], cur = sill[b];
                uint8_t code = neighbour_code(s, cur, prev);
                for (;;) {
                    const uint32_t nxt = s->rcv[cur];
                    const uint8_t oc = s->rcode[cur];
                    if (oc != 8) s->dmask[nxt] &= (uint8_t)~(1u << ((oc + 4u) & 7u));
                    s->rcv[cur] = prev;
                    s->rcode[cur] = code;
                    s->dmask[prev] |= (uint8_t)(1u << ((code + 4u) & 7u));
                    s->stack[top++] = cur;
                    basin[cur] = UINT32_MAX;
                    if (nxt == cur) break; /* the pit */
                    code = (uint8_t)((oc + 4u) & 7u); /* nxt now drains back to cur */
                    prev = cur;
                    cur = nxt;
                }
                for (size_t k = seg[2 * b]; k < seg[2 * b + 1]; k++) {
                    if (k + SP_AHEAD < seg[2 * b + 1])
                        SP_PREFETCH(&basin[old[k + SP_AHEAD]]);
                    const uint32_t v = old[k];
                    if (basin[v] != UINT32_MAX) s->stack[top++] = v;
                }
            }
        }
    }
}

static bool sp_route_pits(sp_state *s, uint64_t pits)
{
    const uint32_t nb = (uint32_t)pits + 1u;
    uint32_t *basin = s->basin;
    /* The forest before carving, in the diffusion buffer (free until diffusion). */
    uint32_t *old = (uint32_t *)(void *)s->tmp;
    size_t *seg = malloc(2 * (size_t)nb * sizeof *seg);
    size_t *bseg = malloc(2 * (s->nbroot ? s->nbroot : 1) * sizeof *bseg);
    if (!seg || !bseg) {
        free(seg);
        free(bseg);
        return false;
    }
    sp_stack_basins(s, old, seg, bseg);
    uint32_t *parent = malloc((size_t)nb * sizeof *parent);
    uint32_t *sill = NULL;    /* per basin: the sample its water leaves by (its pass's end) */
    uint32_t *below = NULL;   /* per basin: the sample across the pass it drains into */
    uint32_t *tree_of = NULL; /* per basin: the base-level tree it drains into */
    /* The passes, by two workers over halves of the rows, each with its own table, whose
     * passes it then sorts (edge_cmp's order); the two lists are merged. A pair of basins
     * met by both halves has a pass in each list: Kruskal meets the lower one first and
     * skips the other (the two basins are joined by then), as if only the lower were kept. */
    sp_route_args a = {.part = {NULL, NULL}, .npart = {0, 0}};
    atomic_init(&a.next, 0u);
    sp_pass_table *t = a.t;
    uint8_t **flags = a.flags;
    sp_edge **part = a.part;
    const size_t *npart = a.npart;
    bool ok = parent != NULL;
    for (int w = 0; w < 2; w++) {
        t[w] = (sp_pass_table){4096, 0, malloc(4096 * sizeof(sp_pass_slot)),
                               malloc(s->nx * sizeof(uint64_t)), malloc(s->nx * sizeof(uint32_t)),
                               s->nx};
        flags[w] = malloc(((size_t)s->nx + 7u) & ~(size_t)7u);
        ok = ok && t[w].slots && t[w].col_key && t[w].col_slot && flags[w];
    }
    if (ok) {
        sp_par(s, passes_job, &a);
        ok = a.wok[0] && a.wok[1];
    }
    for (int w = 0; w < 2; w++) {
        free(flags[w]);
        free(t[w].col_key);
        free(t[w].col_slot);
        free(t[w].slots);
    }
    const size_t count = npart[0] + npart[1];
    sp_edge *edges = ok ? malloc((count ? count : 1) * sizeof *edges) : NULL;
    ok = ok && edges;
    if (ok) edge_merge(part[0], npart[0], part[1], npart[1], edges);
    free(part[0]);
    free(part[1]);
    if (ok) {
        for (uint32_t b = 0; b < nb; b++)
            parent[b] = b;
        /* Kruskal: the chosen passes, kept in place at the front of edges. */
        size_t chosen = 0;
        for (size_t e = 0; e < count && chosen + 1u < nb; e++) {
            if (e + 16u < count) {
                SP_PREFETCH(&basin[edges[e + 16u].a]);
                SP_PREFETCH(&basin[edges[e + 16u].b]);
            }
            const uint32_t x = uf_find(parent, basin[edges[e].a]);
            const uint32_t y = uf_find(parent, basin[edges[e].b]);
            if (x == y) continue;
            parent[x] = y;
            edges[chosen++] = edges[e];
        }
        /* Orient from the outlet: breadth first over the tree's adjacency. Each basin's
         * pass, its side of it and the basin it drains into come from this order; carving
         * comes later, tree by tree on the threads (a basin's carving changes only its own
         * samples' receivers and the donor bits of those and of the sample below its pass,
         * which lies in the basin it drains into, in the same base-level tree). */
        uint32_t *off = calloc((size_t)nb + 1u, sizeof *off);
        uint32_t *adj = malloc((chosen ? 2 * chosen : 1) * sizeof *adj);
        uint32_t *queue = malloc((size_t)nb * sizeof *queue);
        uint8_t *seen = calloc(nb, 1);
        sill = malloc((size_t)nb * sizeof *sill);
        below = malloc((size_t)nb * sizeof *below);
        tree_of = malloc((size_t)nb * sizeof *tree_of);
        ok = off && adj && queue && seen && sill && below && tree_of;
        if (ok) {
            for (size_t e = 0; e < chosen; e++) {
                off[basin[edges[e].a] + 1]++;
                off[basin[edges[e].b] + 1]++;
            }
            for (uint32_t b = 0; b < nb; b++)
                off[b + 1] += off[b];
            uint32_t *fill = parent; /* union-find is done */
            memcpy(fill, off, (size_t)nb * sizeof *fill);
            for (size_t e = 0; e < chosen; e++) {
                adj[fill[basin[edges[e].a]]++] = (uint32_t)e;
                adj[fill[basin[edges[e].b]]++] = (uint32_t)e;
            }
            uint32_t *drains_to = parent; /* per basin: the basin it drains into */
            size_t qh = 0, qt = 0;
            queue[qt++] = 0;
            seen[0] = 1;
            while (qh < qt) {
                const uint32_t b = queue[qh++];
                for (uint32_t k = off[b]; k < off[b + 1]; k++) {
                    const sp_edge *e = &edges[adj[k]];
                    const uint32_t ba = basin[e->a], bb = basin[e->b];
                    const uint32_t child = ba == b ? bb : ba;
                    if (seen[child]) continue;
                    seen[child] = 1;
                    queue[qt++] = child;
                    sill[child] = ba == b ? e->b : e->a;
                    below[child] = ba == b ? e->a : e->b;
                    drains_to[child] = b;
                }
            }
            /* The base-level tree of each basin draining into basin 0: its receivers there
             * (which carving does not change) followed to the root, on the threads; the
             * others take their downstream basin's, in the breadth-first order. */
            a.queue = queue;
            a.qt = qt;
            a.drains_to = drains_to;
            a.below = below;
            a.tree_of = tree_of;
            atomic_store_explicit(&a.next, 0u, memory_order_relaxed);
            sp_par(s, tree_of_job, &a);
            for (size_t q = 1; q < qt; q++) {
                const uint32_t c = queue[q];
                if (drains_to[c] != 0) tree_of[c] = tree_of[drains_to[c]];
            }
            /* The basins of each base-level tree, in the order they joined. */
            size_t *first = calloc(s->ntrees + 1u, sizeof *first);
            uint32_t *order = malloc((qt ? qt : 1) * sizeof *order);
            ok = first && order;
            if (ok) {
                for (size_t q = 1; q < qt; q++)
                    first[tree_of[queue[q]] + 1]++;
                for (size_t i = 0; i < s->ntrees; i++)
                    first[i + 1] += first[i];
                for (size_t q = 1; q < qt; q++)
                    order[first[tree_of[queue[q]]]++] = queue[q];
                /* first[i] is now where tree i + 1's basins begin. */
                /* The new stack, tree by tree: the base-level tree as it was, then each basin
                 * that drains into it in the order it joined (after the basin it drains into):
                 * its carved path from the sill back to the pit (each now draining to the one
                 * before), then its other samples in their old order (their receivers did not
                 * change and come before them). */
                /* Each tree's place: its own samples and those of its basins (a basin's path
                 * and other samples are its old segment's). Then the trees side by side. */
                size_t *at = malloc((s->ntrees + 1u) * sizeof *at);
                ok = at != NULL;
                if (ok) {
                    at[0] = 0;
                    for (size_t i = 0; i < s->ntrees; i++) {
                        size_t size = bseg[2 * i + 1] - bseg[2 * i];
                        for (size_t o = i ? first[i - 1] : 0; o < first[i]; o++)
                            size += seg[2 * order[o] + 1] - seg[2 * order[o]];
                        at[i + 1] = at[i] + size;
                    }
                    sp_route_args *ra = &a;
                    ra->old = old;
                    ra->order = order;
                    ra->sill = sill;
                    ra->below = below;
                    ra->seg = seg;
                    ra->bseg = bseg;
                    ra->first = first;
                    ra->at = at;
                    atomic_store_explicit(&ra->next, 0u, memory_order_relaxed);
                    sp_par(s, carve_job, ra);
                    for (size_t i = 0; i <= s->ntrees; i++)
                        s->tree_at[i] = (uint32_t)at[i];
                }
                free(at);
            }
            free(first);
            free(order);
        }
        free(off);
        free(adj);
        free(queue);
        free(seen);
    }
    free(edges);
    free(parent);
    free(seg);
    free(bseg);
    free(sill);
    free(below);
    free(tree_of);
    return ok;
}

/* Drainage area in samples, donors before receivers (the stack backwards), piece by piece. */
static void area_job(sp_state *s, void *arg, int tid, int nt)
{
    (void)tid;
    (void)nt;
    uint32_t *area = s->area;
    const uint32_t *stack = s->stack, *rcv = s->rcv;
    for (size_t c; (c = sp_take(arg, s->nchunk)) != SIZE_MAX;) {
        const size_t lo = s->chunk_at[c];
        for (size_t t = s->chunk_at[c + 1]; t-- > lo;) {
            if (t >= lo + SP_AHEAD) {
                const uint32_t w = stack[t - SP_AHEAD];
                SP_PREFETCH(&rcv[w]);
                SP_PREFETCH(&area[w], 1);
            }
            const uint32_t v = stack[t], r = rcv[v];
            if (r != v) area[r] += area[v];
        }
    }
}

static void area_init_job(sp_state *s, void *arg, int tid, int nt)
{
    (void)arg;
    size_t lo, hi;
    sp_share(s->n, tid, nt, &lo, &hi);
    for (size_t k = lo; k < hi; k++)
        s->area[k] = 1;
}

static void sp_area(sp_state *s)
{
    sp_par(s, area_init_job, NULL);
    sp_job_args a = {.p = NULL};
    atomic_init(&a.next, 0u);
    sp_par(s, area_job, &a);
}

static trn_status check_param(trn_error *err, const char *name, bool ok, const char *expect,
                              double found)
{
    if (ok) return TRN_OK;
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "stream power: %s: expected %s, found %.17g", name, expect, found);
}

static trn_status check_params(const trn_stream_power_params *p, trn_error *err)
{
    trn_status st;
    if ((st = check_param(err, "uplift", isfinite(p->uplift) && p->uplift >= 0, ">= 0",
                          p->uplift)) ||
        (st = check_param(err, "erodibility", isfinite(p->erodibility) && p->erodibility > 0, "> 0",
                          p->erodibility)) ||
        (st = check_param(err, "m", isfinite(p->m) && p->m > 0 && p->m <= 2, "0 < m <= 2", p->m)) ||
        (st = check_param(err, "n", isfinite(p->n) && p->n > 0 && p->n <= 4, "0 < n <= 4", p->n)) ||
        (st = check_param(err, "diffusion", isfinite(p->diffusion) && p->diffusion >= 0, ">= 0",
                          p->diffusion)) ||
        (st = check_param(err, "diffusion_rock",
                          isfinite(p->diffusion_rock) && fabs(p->diffusion_rock) <= 4, "-4..4",
                          p->diffusion_rock)) ||
        (st = check_param(err, "channel_threshold",
                          isfinite(p->channel_threshold) && p->channel_threshold >= 0, ">= 0",
                          p->channel_threshold)) ||
        (st = check_param(err, "critical_slope",
                          p->critical_slope == 0 ||
                              (p->critical_slope > 0 && p->critical_slope < 90),
                          "0 (off) or between 0 and 90 degrees", p->critical_slope)) ||
        (st = check_param(err, "critical_rock",
                          isfinite(p->critical_rock) && fabs(p->critical_rock) <= 4, "-4..4",
                          p->critical_rock)) ||
        (st = check_param(err, "creep_slope",
                          p->creep_slope == 0 || (p->creep_slope > 0 && p->creep_slope < 90),
                          "0 (off) or between 0 and 90 degrees", p->creep_slope)) ||
        (st = check_param(err, "dt", isfinite(p->dt) && p->dt > 0, "> 0", p->dt)) ||
        (st = check_param(err, "steps", p->steps >= 1, "at least 1", (double)p->steps)) ||
        (st = check_param(err, "routing",
                          p->routing == TRN_ROUTING_D8 || p->routing == TRN_ROUTING_RHO8 ||
                              p->routing == TRN_ROUTING_MFD,
                          "0 (d8), 1 (rho8) or 2 (mfd)", (double)p->routing)) ||
        (st = check_param(err, "threads", p->threads >= 0, "0 (default) or more",
                          (double)p->threads)) ||
        (st = check_param(err, "deposition",
                          isfinite(p->deposition) && p->deposition >= 0 && p->deposition <= 1e3,
                          "0..1000", p->deposition)))
        return st;
    if (p->deposition > 0 && (p->n != 1.0 || p->routing == TRN_ROUTING_MFD))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power: deposition needs n = 1 and single-flow routing (d8 "
                             "or rho8), found n = %.17g with %s routing",
                             p->n, p->routing == TRN_ROUTING_MFD ? "mfd" : "single-flow");
    return TRN_OK;
}

/* Implicit incision along stack[lo .. hi), base level first. */
static void incise_range(sp_state *s, const trn_stream_power_params *p, double cell_area,
                         size_t lo, size_t hi)
{
    const double K = p->erodibility, dt = p->dt, n_exp = p->n, thr = p->channel_threshold;
    const bool linear = n_exp == 1.0;
    const float *kmask = p->erodibility_mask;
    const uint32_t *stack = s->stack, *rcv = s->rcv, *area = s->area;
    const uint8_t *rcode = s->rcode;
    double *h = s->h;
    const uint32_t tsize = s->pow_table_size;
    /* The distance class of each code (0: dx, 1: dz, 2: diagonal), indexing f_table. */
    static const uint8_t cls[9] = {0, 2, 1, 2, 0, 2, 1, 2, 0};
    for (size_t t = lo; t < hi; t++) {
        if (t + SP_AHEAD < hi) {
            const uint32_t w = stack[t + SP_AHEAD];
            SP_PREFETCH(&h[w], 1);
            SP_PREFETCH(&rcv[w]);
            SP_PREFETCH(&area[w]);
        }
        const uint32_t v = stack[t], r = rcv[v];
        if (r == v) continue;
        const double hr = h[r], h0 = h[v];
        if (h0 <= hr) continue; /* a lake below its sill: no incision */
        const uint32_t a = area[v];
        if ((double)a * cell_area < thr) continue; /* a hillslope */
        const uint8_t c = rcode[v];
        if (linear) {
            /* f = K dt A^m / d, from the table while the count is in it (same operations). */
            double f = a < tsize ? s->f_table[(size_t)cls[c] * tsize + a]
                                 : K * dt * pow((double)a * cell_area, p->m) / s->dist[c];
            if (kmask) f *= (double)kmask[v];
            h[v] = (h0 + f * hr) / (1.0 + f);
        } else {
            const double d = s->dist[c];
            double F = K * dt * (a < tsize ? s->pow_table[a] : pow((double)a * cell_area, p->m));
            if (kmask) F *= (double)kmask[v];
            h[v] = sp_newton(h0, hr, F / pow(d, n_exp), n_exp);
        }
    }
}

/* Multiple flow directions (Quinn et al. 1991; stream power over them as Schott et al. 2023
 * and fastscapelib's MultiFlowRouter): every sample above the water level drains to all its
 * lower neighbours, each in proportion to the slope to it, so water spreads over planar and
 * divergent ground (no parallel one-cell rills) and gathers only where the land converges;
 * valleys are as wide as the land makes them, not one cell along a grid direction. Samples
 * under a lake (not above the level of the lake their tree receiver lies in, after the
 * closed-depression routing) keep that one receiver, so lakes drain over their sills as
 * before. Levels: lam(v) = max(h(v), lam(receiver)), along the stack. */
static void sp_mfd_levels(sp_state *s)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t c = 0; c < s->nchunk; c++)
        for (size_t t = s->chunk_at[c]; t < s->chunk_at[c + 1]; t++) {
            const uint32_t v = s->stack[t], r = s->rcv[v];
            s->lam[v] = r == v || s->h[v] > s->lam[r] ? s->h[v] : s->lam[r];
        }
}

/* Each sample's receivers (bits of dmask, D8 codes): above the water level, every neighbour
 * lower than it and not under a lake at or above its height (so each link goes to a lower
 * level and the links cannot close a loop); under it, the tree receiver. Then the donor
 * counts, and the order (basin): Kahn's, donors before receivers, the drainage area (farea)
 * passed on as it goes, each share in proportion to the slope. Serial, in a fixed order:
 * the sums are the same on any thread count. */
static void sp_mfd_route(sp_state *s, double cell_area)
{
    const uint32_t nx = s->nx, nz = s->nz;
    const double *h = s->h, *lam = s->lam;
    uint8_t *mask = s->dmask, *deg = s->mdeg;
#pragma omp parallel for schedule(static)
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            const size_t v = (size_t)j * nx + i;
            unsigned m = 0;
            const uint32_t r = s->rcv[v];
            if (!s->base[v] && r != v) {
                if (!(h[v] > lam[r])) {
                    m = 1u << s->rcode[v];
                } else {
                    for (int d = 0; d < 8; d++) {
                        const size_t q = (size_t)((int64_t)v + s->off[d]);
                        m |= (unsigned)(h[q] < h[v] && lam[q] < h[v]) << d;
                    }
                }
            }
            mask[v] = (uint8_t)m;
        }
#pragma omp parallel for schedule(static)
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++) {
            unsigned c = 0;
            for (int d = 0; d < 8; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii < 0 || jj < 0 || ii >= nx || jj >= nz) continue;
                c += (mask[(size_t)jj * nx + (size_t)ii] >> ((d + 4) & 7)) & 1u;
            }
            deg[(size_t)j * nx + i] = (uint8_t)c;
        }
    uint32_t *order = s->basin;
    double *a = s->farea;
    size_t tail = 0;
    for (size_t k = 0; k < s->n; k++) {
        a[k] = cell_area;
        if (!deg[k]) order[tail++] = (uint32_t)k;
    }
    for (size_t head = 0; head < tail; head++) {
        if (head + 16u < tail) {
            /* The samples ahead in the queue lie all over the grid: fetch their rows. */
            const uint32_t w = order[head + 16u];
            SP_PREFETCH(&mask[w]);
            SP_PREFETCH(&h[w - nx]);
            SP_PREFETCH(&h[w]);
            SP_PREFETCH(&h[w + nx]);
            SP_PREFETCH(&a[w - nx], 1);
            SP_PREFETCH(&a[w], 1);
            SP_PREFETCH(&a[w + nx], 1);
            SP_PREFETCH(&deg[w - nx], 1);
            SP_PREFETCH(&deg[w + nx], 1);
        }
        const uint32_t v = order[head];
        unsigned m = mask[v];
        if (!m) continue;
        double sl[8], sum = 0;
        for (unsigned b = m; b; b &= b - 1u) {
            const int d = trn_ctz64(b);
            sl[d] = (h[v] - h[(size_t)((int64_t)v + s->off[d])]) * s->inv_dist[d];
            sum += sl[d];
        }
        const bool one = (m & (m - 1u)) == 0;
        for (; m; m &= m - 1u) {
            const int d = trn_ctz64(m);
            const uint32_t q = (uint32_t)((int64_t)v + s->off[d]);
            a[q] += one ? a[v] : a[v] * (sl[d] / sum);
            if (--deg[q] == 0) order[tail++] = q;
        }
    }
}

/* Implicit incision over the multiple receivers, receivers first (the order backwards): with
 * n = 1, z = (z_old + sum F_j z_j) / (1 + sum F_j), F_j = K dt A^m w_j / d_j, w_j the share of
 * the water going to receiver j (from the heights before incision, in tmp), exact and
 * unconditionally stable as the single-receiver scheme; other n by Newton's method on
 * z - z_old + sum F_j ((z - z_j) / d_j)^n = 0 (F_j = K dt A^m w_j). Samples under a lake, not
 * above their one receiver, do not erode. */
static void sp_mfd_incise(sp_state *s, const trn_stream_power_params *p)
{
    const double K = p->erodibility, dt = p->dt, n_exp = p->n, thr = p->channel_threshold;
    const bool linear = n_exp == 1.0;
    const uint32_t *order = s->basin;
    const uint8_t *mask = s->dmask;
    const double *old = s->tmp;
    double *h = s->h;
    memcpy(s->tmp, s->h, s->n * sizeof *s->h);
    const size_t nx = s->nx;
    for (size_t t = s->n; t-- > 0;) {
        if (t >= 16u) {
            const uint32_t w = order[t - 16u];
            SP_PREFETCH(&mask[w]);
            SP_PREFETCH(&s->farea[w]);
            SP_PREFETCH(&h[w - nx], 1);
            SP_PREFETCH(&h[w], 1);
            SP_PREFETCH(&h[w + nx], 1);
            SP_PREFETCH(&old[w - nx]);
            SP_PREFETCH(&old[w]);
            SP_PREFETCH(&old[w + nx]);
        }
        const uint32_t v = order[t];
        unsigned m = mask[v];
        if (!m) continue;
        const double A = s->farea[v];
        if (A < thr) continue;
        const double h0 = h[v];
        double hj[8], w[8], sum = 0, hmax = -INFINITY;
        for (unsigned b = m; b; b &= b - 1u) {
            const int d = trn_ctz64(b);
            const size_t q = (size_t)((int64_t)v + s->off[d]);
            hj[d] = h[q];
            w[d] = (old[v] - old[q]) * s->inv_dist[d];
            if (!(w[d] > 0)) w[d] = 0;
            sum += w[d];
            if (hj[d] > hmax) hmax = hj[d];
        }
        if (h0 <= hmax && (m & (m - 1u)) == 0) continue; /* a lake below its sill */
        if (!(sum > 0)) continue;
        const double F = K * dt * pow(A, p->m) *
                         (p->erodibility_mask ? (double)p->erodibility_mask[v] : 1.0);
        if (linear) {
            double num = h0, den = 1.0;
            for (unsigned b = m; b; b &= b - 1u) {
                const int d = trn_ctz64(b);
                const double f = F * (w[d] / sum) / s->dist[d];
                num += f * hj[d];
                den += f;
            }
            h[v] = num / den;
        } else {
            if (h0 <= hmax) continue;
            /* Newton on g(x) = x - h0 + sum fd_j (x - z_j)^n, x in (max z_j, h0]. */
            double fd[8];
            for (unsigned b = m; b; b &= b - 1u) {
                const int d = trn_ctz64(b);
                fd[d] = F * (w[d] / sum) / pow(s->dist[d], n_exp);
            }
            double x = h0;
            for (int it = 0; it < 50; it++) {
                double g = x - h0, gp = 1.0;
                for (unsigned b = m; b; b &= b - 1u) {
                    const int d = trn_ctz64(b);
                    const double dh = x - hj[d];
                    if (dh <= 0) continue;
                    g += fd[d] * pow(dh, n_exp);
                    gp += fd[d] * n_exp * pow(dh, n_exp - 1.0);
                }
                double nxt = x - g / gp;
                if (nxt <= hmax) nxt = hmax + (x - hmax) * 0.5;
                if (fabs(nxt - x) <= 1e-12 * (fabs(x) + 1.0)) {
                    x = nxt;
                    break;
                }
                x = nxt;
            }
            h[v] = x;
        }
    }
}

/* Incision with deposition (Yuan et al. 2019, n = 1, one receiver), implicit in the new
 * heights and exact in two passes over stack[lo .. hi). Over a step each sample i solves
 *   z_i = z0_i - F_i (z_i - z_r) + g_i (E_i + S_i),   g_i = G / a_i (a_i in samples),
 * E_j = z0_j - z_j the net erosion of sample j (uplift included, as z0 is after it) and S_i
 * the sum of E over everything upstream of i: the sediment flux, spread over the drainage
 * area and times G, is laid down. S_i needs the donors' new heights, the incision the
 * receiver's, so neither stack order alone solves it; but on a tree each z_j is affine in
 * its receiver's, z_j = alpha_j + beta_j z_r(j), and so the sum over the samples upstream of
 * i is affine in z_i: S_i = P_i + Q_i z_i. Donors first, P and Q gather from the donors and
 * give alpha_i = (z0_i (1 + g) + g P_i) / D, beta_i = F / D, D = 1 + F + g (1 - Q_i) (Q_i <=
 * 0, so D >= 1 + F and the scheme is unconditionally stable like the plain one); then base
 * level first, z_i = alpha_i + beta_i z_r. Samples not above their receiver (lakes) do not
 * incise (F = 0, marked by beta = -1) and fill at most to their receiver's new height.
 * The sums in a canonical order: each sample pulls its donors in code order (0 .. 7 of the
 * direction from it, dmask's bits), finishing each donor's alpha and beta as it adds it, so the
 * additions do not depend on the stack's order (which routing reshapes) and the tiled run
 * (trn_stream_power_run_tiled) makes them the same way across tiles. Whole trees per piece and
 * a fixed order inside it: the same bits on any thread count. */
static void deposit_range(sp_state *s, const trn_stream_power_params *p, double cell_area,
                          size_t lo, size_t hi)
{
    const double G = p->deposition, thr = p->channel_threshold;
    const uint32_t *stack = s->stack, *rcv = s->rcv, *area = s->area;
    const uint8_t *rcode = s->rcode, *dmask = s->dmask;
    const int32_t *off = s->off;
    double *h = s->h, *P = s->tmp, *Q = s->dep;
    const uint32_t tsize = s->pow_table_size;
    static const uint8_t cls[9] = {0, 2, 1, 2, 0, 2, 1, 2, 0};
    for (size_t t = hi; t-- > lo;) {
        if (t >= lo + SP_AHEAD) {
            const uint32_t w = stack[t - SP_AHEAD];
            SP_PREFETCH(&dmask[w]);
            SP_PREFETCH(&h[w]);
        }
        const uint32_t v = stack[t];
        const double zv = h[v];
        double pv = 0.0, qv = 0.0;
        /* The donors' bits from the lowest up: code order. */
        for (uint64_t m = dmask[v]; m; m &= m - 1u) {
            const uint32_t j = (uint32_t)((int64_t)v + off[trn_ctz64(m)]);
            const double z0 = h[j];
            const uint32_t a = area[j];
            double F = 0.0;
            const bool lake = z0 <= zv;
            if (!lake && (double)a * cell_area >= thr) {
                const uint8_t c = rcode[j];
                F = a < tsize
                        ? s->f_table[(size_t)cls[c] * tsize + a]
                        : p->erodibility * p->dt * pow((double)a * cell_area, p->m) / s->dist[c];
                if (p->erodibility_mask) F *= (double)p->erodibility_mask[j];
            }
            double cp, cq;
            sp_dep_link(G, F, a, lake, z0, P[j], Q[j], &P[j], &Q[j], &cp, &cq);
            pv += cp;
            qv += cq;
        }
        P[v] = pv;
        Q[v] = qv;
    }
    for (size_t t = lo; t < hi; t++) {
        if (t + SP_AHEAD < hi) {
            const uint32_t w = stack[t + SP_AHEAD];
            SP_PREFETCH(&h[w], 1);
            SP_PREFETCH(&rcv[w]);
        }
        const uint32_t v = stack[t], r = rcv[v];
        if (r == v) continue;
        h[v] = sp_dep_height(P[v], Q[v], h[v], h[r]);
    }
}

/* Implicit incision along the stack, piece by piece (each piece whole trees). */
static void incise_job(sp_state *s, void *arg, int tid, int nt)
{
    (void)tid;
    (void)nt;
    sp_job_args *a = arg;
    for (size_t c; (c = sp_take(a, s->nchunk)) != SIZE_MAX;) {
        if (a->p->deposition > 0)
            deposit_range(s, a->p, a->cell_area, s->chunk_at[c], s->chunk_at[c + 1]);
        else
            incise_range(s, a->p, a->cell_area, s->chunk_at[c], s->chunk_at[c + 1]);
    }
}

static void sp_incise(sp_state *s, const trn_stream_power_params *p, double cell_area)
{
    sp_job_args a = {.p = p, .cell_area = cell_area};
    atomic_init(&a.next, 0u);
    sp_par(s, incise_job, &a);
}

/* The first and last rows of a diffusion substep are copied whole (true); other rows are the
 * caller's. */
static inline bool diffuse_edge_row(const double *h, double *out, size_t row, uint32_t nx,
                                    uint32_t j, uint32_t nz)
{
    if (j != 0 && j + 1u != nz) return false;
    memcpy(out + row, h + row, nx * sizeof *out);
    return true;
}

/* One explicit diffusion substep, every sample from the previous values (the border and the
 * listed interior base-level samples are copied afterwards). */
static void diffuse_job(sp_state *s, void *arg, int tid, int nt)
{
    const sp_job_args *a = arg;
    const double *h = a->h, ax = a->ax, az = a->az, kdt = a->kdt;
    double *out = a->out;
    const uint32_t nx = s->nx, nz = s->nz;
    diffuse_row_fn row_fn = diffuse_row_default;
#if HAVE_AVX2_VARIANT
    if (s->avx2) row_fn = diffuse_row_avx2;
#endif
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    for (uint32_t j = (uint32_t)j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        if (diffuse_edge_row(h, out, row, nx, j, nz)) continue;
        row_fn(h + row - nx, h + row, h + row + nx, out + row, nx, ax, az, kdt);
        out[row] = h[row];
        out[row + nx - 1u] = h[row + nx - 1u];
    }
}

/* One row of diffusion with each sample's factor on Kd (fu, fm, fd: the factors of the rows
 * above, of this one and below): the flux between two samples goes with the mean of their
 * factors, so what leaves one sample reaches the other (mass is kept). Samples 1..nx-2; the
 * whole grid and the tiles both call it, so they do the same operations. */
static void diffuse_row_varied(const double *up, const double *mid, const double *down,
                               const float *fu, const float *fm, const float *fd, double *out,
                               uint32_t nx, double ax, double az, double kdt)
{
    for (uint32_t i = 1; i + 1u < nx; i++) {
        const double c = mid[i], fk = (double)fm[i];
        const double flux = ax * (0.5 * (fk + fm[i - 1]) * (mid[i - 1] - c) +
                                  0.5 * (fk + fm[i + 1]) * (mid[i + 1] - c)) +
                            az * (0.5 * (fk + fu[i]) * (up[i] - c) +
                                  0.5 * (fk + fd[i]) * (down[i] - c));
        out[i] = c + kdt * flux;
    }
}

/* diffuse_rows with each sample's factor on Kd (s->dfac). */
static void diffuse_varied_job(sp_state *s, void *arg, int tid, int nt)
{
    const sp_job_args *a = arg;
    const double *h = a->h, ax = a->ax, az = a->az, kdt = a->kdt;
    double *out = a->out;
    const uint32_t nx = s->nx, nz = s->nz;
    const float *f = s->dfac;
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    for (uint32_t j = (uint32_t)j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        if (diffuse_edge_row(h, out, row, nx, j, nz)) continue;
        out[row] = h[row];
        out[row + nx - 1u] = h[row + nx - 1u];
        diffuse_row_varied(h + row - nx, h + row, h + row + nx, f + row - nx, f + row,
                           f + row + nx, out + row, nx, ax, az, kdt);
    }
}

/* Nonlinear creep's factor on Kd between two samples dh apart at inverse spacing inv
 * (Roering, Kirchner and Dietrich 1999): 1 / (1 - (S / Sc)^2) for the gradient S, capped at
 * TRN_CREEP_FACTOR_MAX where S nears Sc (isc is 1 / Sc), so the explicit step stays stable. */
static inline double creep_factor(double dh, double inv, double isc)
{
    const double r = dh * inv * isc, r2 = r * r;
    const double lim = 1.0 - 1.0 / TRN_CREEP_FACTOR_MAX;
    return r2 >= lim ? TRN_CREEP_FACTOR_MAX : 1.0 / (1.0 - r2);
}

/* One substep of nonlinear creep (creep_slope): each of the four links' flux is the linear
 * one times creep_factor of its own gradient (and, with rock factors, the mean of the two
 * samples'), so what leaves one sample reaches the other. */
static void diffuse_nonlinear_job(sp_state *s, void *arg, int tid, int nt)
{
    const sp_job_args *a = arg;
    const double *h = a->h, ax = a->ax, az = a->az, kdt = a->kdt;
    const double ix = sqrt(ax), iz = sqrt(az);
    const double isc = 1.0 / tan(a->p->creep_slope * 3.14159265358979323846 / 180.0);
    double *out = a->out;
    const uint32_t nx = s->nx, nz = s->nz;
    const float *f = s->dfac;
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    for (uint32_t j = (uint32_t)j0; j < j1; j++) {
        const size_t row = (size_t)j * nx;
        if (diffuse_edge_row(h, out, row, nx, j, nz)) continue;
        const double *up = h + row - nx, *mid = h + row, *dn = h + row + nx;
        out[row] = mid[0];
        out[row + nx - 1u] = mid[nx - 1u];
        for (uint32_t i = 1; i + 1u < nx; i++) {
            const double c = mid[i];
            const double dw = mid[i - 1] - c, de = mid[i + 1] - c, du = up[i] - c,
                         dd = dn[i] - c;
            double gw = creep_factor(dw, ix, isc), ge = creep_factor(de, ix, isc),
                   gu = creep_factor(du, iz, isc), gd = creep_factor(dd, iz, isc);
            if (f) {
                const size_t k = row + i;
                const double fk = (double)f[k];
                gw *= 0.5 * (fk + f[k - 1]);
                ge *= 0.5 * (fk + f[k + 1]);
                gu *= 0.5 * (fk + f[k - nx]);
                gd *= 0.5 * (fk + f[k + nx]);
            }
            out[i + row] = c + kdt * (ax * (gw * dw + ge * de) + az * (gu * du + gd * dd));
        }
    }
}

/* The walls take the heights of the samples inside them (land: no flux across the edge) or
 * go back to SP_WALL. */
static void sp_walls(sp_state *s, bool land)
{
    for (size_t q = 0; q < s->nwall; q++)
        s->h[s->wall[q]] = land ? s->h[s->wall_in[q]] : SP_WALL;
}

/* Explicit diffusion (5-point Laplacian), base level fixed, substeps for stability. Each
 * sample reads the previous values only, so threads cannot change the result. */
static void sp_diffuse(sp_state *s, const trn_stream_power_params *p)
{
    if (p->diffusion <= 0) return;
    const double ax = 1.0 / (s->dx * s->dx), az = 1.0 / (s->dz * s->dz);
    /* Creep varying with the rock: stable for the largest factor. */
    const double fmax =
        (s->dfac ? s->dfac_max : 1.0) * (p->creep_slope > 0 ? TRN_CREEP_FACTOR_MAX : 1.0);
    const double limit = 0.45 / (p->diffusion * fmax * (ax + az));
    uint32_t sub = (uint32_t)ceil(p->dt / limit);
    if (sub < 1) sub = 1;
    const double kdt = p->diffusion * p->dt / (double)sub;
    for (uint32_t it = 0; it < sub; it++) {
        sp_walls(s, true);
        sp_job_args a = {.p = p, .h = s->h, .out = s->tmp, .ax = ax, .az = az, .kdt = kdt};
        sp_par(s,
               p->creep_slope > 0 ? diffuse_nonlinear_job
               : s->dfac          ? diffuse_varied_job
                                  : diffuse_job,
               &a);
        for (size_t q = 0; q < s->nibase; q++)
            s->tmp[s->ibase[q]] = s->h[s->ibase[q]];
        double *t = s->h;
        s->h = s->tmp;
        s->tmp = t;
    }
    sp_walls(s, false);
}

/* The border follows the land down: each border sample (not under the sea) is lowered to its
 * lowest non-border neighbour when that is lower. Reads only interior samples, which this
 * does not change, so the order does not matter: a job by rows, so that each thread writes
 * the border samples of its own rows, whose lines the uplift that follows reads. Done by the
 * caller alone, the second thread's share of the uplift (its rows' first and last samples, its
 * last row) began with lines held by the caller's core: on 257^2 that share took twice the
 * caller's (0.011-0.014 s against 0.005 s over 400 steps). */
static void border_job(sp_state *s, void *arg, int tid, int nt)
{
    const trn_stream_power_params *p = ((const sp_job_args *)arg)->p;
    const uint32_t nx = s->nx, nz = s->nz;
    const bool sea = isfinite(p->sea_level);
    size_t j0, j1;
    sp_share(nz, tid, nt, &j0, &j1);
    for (uint32_t j = (uint32_t)j0; j < j1; j++)
        for (uint32_t i = 0; i < nx; i++) {
            if (!(i == 0 || j == 0 || i == nx - 1u || j == nz - 1u)) {
                if (j > 0 && j + 1u < nz) i = nx - 2u; /* skip to the east border */
                continue;
            }
            const size_t k = (size_t)j * nx + i;
            if (sea && s->h[k] <= p->sea_level) continue;
            if (s->h[k] >= SP_WALL) continue;
            double lo = s->h[k];
            for (int d = 0; d < 8; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii <= 0 || jj <= 0 || ii >= (int64_t)nx - 1 || jj >= (int64_t)nz - 1) continue;
                const double h = s->h[(size_t)jj * nx + (size_t)ii];
                if (h < lo) lo = h;
            }
            s->h[k] = lo;
        }
}

static void sp_follow_border(sp_state *s, const trn_stream_power_params *p)
{
    if (p->fixed_border) return;
    sp_job_args a = {.p = p};
    sp_par(s, border_job, &a);
}

/* Uplift of every sample above base level (a select, so the loop vectorises). */
static void uplift_job(sp_state *s, void *arg, int tid, int nt)
{
    const trn_stream_power_params *p = ((const sp_job_args *)arg)->p;
    const double u = p->uplift * p->dt;
    const uint8_t *base = s->base;
    double *h = s->h;
    const float *mask = p->uplift_mask;
    size_t lo, hi;
    sp_share(s->n, tid, nt, &lo, &hi);
    if (mask) {
        for (size_t k = lo; k < hi; k++)
            h[k] = base[k] ? h[k] : h[k] + u * (double)mask[k];
    } else {
        for (size_t k = lo; k < hi; k++)
            h[k] = base[k] ? h[k] : h[k] + u * 1.0;
    }
}

static void sp_uplift(sp_state *s, const trn_stream_power_params *p)
{
    sp_job_args a = {.p = p};
    sp_par(s, uplift_job, &a);
}

static void critical_job(sp_state *s, void *arg, int tid, int nt)
{
    (void)tid;
    (void)nt;
    sp_job_args *a = arg;
    const double tc = tan(a->p->critical_slope * 3.14159265358979323846 / 180.0);
    const float *ct = s->ctan;
    for (size_t c; (c = sp_take(a, s->nchunk)) != SIZE_MAX;)
        for (size_t t = s->chunk_at[c]; t < s->chunk_at[c + 1]; t++) {
            const uint32_t v = s->stack[t], r = s->rcv[v];
            if (r == v) continue;
            /* The sample's own rock sets how steeply it may stand above its receiver. */
            const double top = s->h[r] + (ct ? (double)ct[v] : tc) * s->dist[s->rcode[v]];
            if (s->h[v] > top) s->h[v] = top;
        }
}

static void sp_critical(sp_state *s, const trn_stream_power_params *p)
{
    if (p->critical_slope <= 0) return;
    sp_job_args a = {.p = p};
    atomic_init(&a.next, 0u);
    sp_par(s, critical_job, &a);
}

/* Outlet borders: the ring outside the field's border (the grid is one sample larger each
 * way). A ring sample is an outlet, base level at the height of the border sample inside it,
 * where that border sample is the lowest of the edge within a tenth of the edge's length
 * either side (the first of equal ones), or is under the sea; every other one is a wall. The
 * input's valleys meet the edge at such low points, so its rivers leave there and the rest of
 * the border stays land. Returns false when out of memory. */
static bool sp_ring(sp_state *s, const trn_field *field, double sea_level)
{
    const uint32_t fnx = field->cells_x + 1u, fnz = field->cells_z + 1u, nx = s->nx, nz = s->nz;
    const float *hf = field->heights;
    s->wall = malloc(2 * ((size_t)nx + nz) * sizeof *s->wall);
    s->wall_in = malloc(2 * ((size_t)nx + nz) * sizeof *s->wall_in);
    if (!s->wall || !s->wall_in) return false;
    for (int e = 0; e < 4; e++) {
        const uint32_t len = e < 2 ? fnx : fnz;
        const uint32_t reach = len / SP_OUTLET_SPAN > 2u ? len / SP_OUTLET_SPAN : 2u;
        for (uint32_t q = 0; q < len; q++) {
            /* Edge e's q-th border sample (north, south, west, east) and the ring outside. */
            const uint32_t fi = e < 2 ? q : e == 2 ? 0 : fnx - 1u;
            const uint32_t fj = e < 2 ? (e == 0 ? 0 : fnz - 1u) : q;
            const size_t ring = e < 2 ? (size_t)(e == 0 ? 0 : nz - 1u) * nx + q + 1u
                                      : (size_t)(q + 1u) * nx + (e == 2 ? 0 : nx - 1u);
            const size_t in = (size_t)(fj + 1u) * nx + fi + 1u;
            const double hq = hf[(size_t)fj * fnx + fi];
            bool low = isfinite(sea_level) && hq <= sea_level;
            if (!low) {
                low = true;
                const uint32_t w0 = q > reach ? q - reach : 0;
                const uint32_t w1 = q + reach < len ? q + reach : len - 1u;
                for (uint32_t w = w0; w <= w1 && low; w++) {
                    if (w == q) continue;
                    const uint32_t wi = e < 2 ? w : fi, wj = e < 2 ? fj : w;
                    const double hw = hf[(size_t)wj * fnx + wi];
                    low = hw > hq || (hw == hq && w > q);
                }
            }
            s->h[ring] = low ? hq : SP_WALL;
            if (!low) {
                s->wall[s->nwall] = (uint32_t)ring;
                s->wall_in[s->nwall++] = (uint32_t)in;
            }
        }
    }
    /* The four corners: walls. */
    const size_t corner[4] = {0, nx - 1u, (size_t)(nz - 1u) * nx, (size_t)nz * nx - 1u};
    const size_t inner[4] = {nx + 1u, 2u * nx - 2u, (size_t)(nz - 2u) * nx + 1u,
                             (size_t)(nz - 1u) * nx - 2u};
    for (int c = 0; c < 4; c++) {
        s->h[corner[c]] = SP_WALL;
        s->wall[s->nwall] = (uint32_t)corner[c];
        s->wall_in[s->nwall++] = (uint32_t)inner[c];
    }
    return true;
}

/* What both solvers need before any work: a field of at least 3 x 3 samples, valid
 * parameters, every height finite, the uplift mask finite and >= 0, the erodibility mask finite
 * and > 0. */
static trn_status sp_check_run(const trn_field *field, const trn_stream_power_params *p,
                               trn_error *err)
{
    if (!field || !field->heights || !p)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power: a field with heights and parameters are needed");
    if (field->cells_x < 2 || field->cells_z < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power: the grid needs at least 3 x 3 samples, found %u x %u",
                             field->cells_x + 1u, field->cells_z + 1u);
    trn_status st = check_params(p, err);
    if (st) return st;
    const size_t fnx = (size_t)field->cells_x + 1u, fn = trn_field_sample_count(field);
    for (size_t k = 0; k < fn; k++) {
        if (!isfinite(field->heights[k]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: sample (%zu, %zu) has no finite height", k % fnx,
                                 k / fnx);
        if (p->uplift_mask && !(isfinite(p->uplift_mask[k]) && p->uplift_mask[k] >= 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: uplift_mask at sample (%zu, %zu): expected a "
                                 "finite number >= 0, found %g",
                                 k % fnx, k / fnx, (double)p->uplift_mask[k]);
        if (p->erodibility_mask &&
            !(isfinite(p->erodibility_mask[k]) && p->erodibility_mask[k] > 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: erodibility_mask at sample (%zu, %zu): expected "
                                 "a finite number > 0, found %g",
                                 k % fnx, k / fnx, (double)p->erodibility_mask[k]);
    }
    return TRN_OK;
}

bool trn_sp_one_thread(const trn_field *field, const trn_stream_power_params *p)
{
    const size_t pad = p->border_outlets ? 2u : 0u;
    const size_t n = ((size_t)field->cells_x + 1u + pad) * ((size_t)field->cells_z + 1u + pad);
    return p->threads == 0 && n < SP_PARALLEL_MIN_SAMPLES;
}

double trn_sp_surface_floor(const trn_stream_power_params *p)
{
    return p->sea_surface_depth > 0 ? p->sea_level - p->sea_surface_depth : -INFINITY;
}

/* Steps [from, to) of trn_stream_power_run's p->steps on the caller's thread (with s->crew,
 * its passes shared with the crew's helpers). */
static trn_status sp_steps(sp_state *s, const trn_stream_power_params *p, uint32_t from,
                           uint32_t to, bool rho8, uint32_t salt, bool mfd, double cell_area,
                           trn_progress *pr, trn_stream_power_report *report, double **before,
                           trn_error *err)
{
    trn_status st = TRN_OK;
    for (uint32_t step = from; step < to && !st; step++) {
        if (s->crew) sp_crew_check(s->crew, step);
        if (trn_progress_report(pr, (double)step / (double)p->steps, "stream power")) {
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "stream power: cancelled");
            break;
        }
        const bool last = step + 1 == p->steps;
        if (last && report) {
            *before = big_alloc(s->n * sizeof *before);
            if (*before) memcpy(*before, s->h, s->n * sizeof *before);
        }
        SP_MARK(0);
        sp_uplift(s, p);
        SP_MARK(1);
        const uint64_t pits = sp_receivers(s, rho8, salt);
        sp_donors(s, pits != 0);
        SP_MARK(2);
        if (!pits) sp_stack(s);
        if (pits) {
            if (!sp_route_pits(s, pits)) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                   "stream power: out of memory routing %llu closed depressions",
                                   (unsigned long long)pits);
                break;
            }
            if (report) {
                report->pits_routed += pits;
                report->steps_with_pits++;
            }
        }
        sp_chunks(s);
        SP_MARK(3);
        if (mfd) {
            sp_mfd_levels(s);
            sp_mfd_route(s, cell_area);
        } else {
            sp_area(s);
        }
        SP_MARK(4);
        if (mfd) sp_mfd_incise(s, p);
        else sp_incise(s, p, cell_area);
        SP_MARK(5);
        sp_diffuse(s, p);
        SP_MARK(6);
        sp_critical(s, p);
        sp_follow_border(s, p);
        SP_MARK(7);
        if (report) report->steps = step + 1u;
    }
    if (s->crew) sp_crew_quit(s->crew);
    return st;
}

static trn_status sp_run(trn_field *field, const trn_stream_power_params *p, trn_sp_crew *helped,
                         trn_stream_power_report *report, trn_progress_fn progress, void *user,
                         trn_error *err);

trn_status trn_stream_power_run(trn_field *field, const trn_stream_power_params *p,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err)
{
    return sp_run(field, p, NULL, report, progress, user, err);
}

trn_status trn_stream_power_run_crew(trn_field *field, const trn_stream_power_params *p,
                                     trn_sp_crew *crew, trn_stream_power_report *report,
                                     trn_progress_fn progress, void *user, trn_error *err)
{
    const trn_status st = sp_run(field, p, crew, report, progress, user, err);
    /* However the run ended (a refused parameter, out of memory, a grid the crew does not
     * serve): helpers waiting in trn_sp_crew_help leave, later ones do not stay. */
    if (crew) sp_crew_quit(crew);
    return st;
}

static trn_status sp_run(trn_field *field, const trn_stream_power_params *p, trn_sp_crew *helped,
                         trn_stream_power_report *report, trn_progress_fn progress, void *user,
                         trn_error *err)
{
    if (report) memset(report, 0, sizeof *report);
    trn_status st = sp_check_run(field, p, err);
    if (st) return st;
    sp_state s;
    memset(&s, 0, sizeof s);
    /* Outlet borders run on the field with a ring around it (pad 1). */
    const uint32_t pad = p->border_outlets ? 1u : 0u;
    const uint32_t fnx = field->cells_x + 1u, fnz = field->cells_z + 1u;
    s.nx = fnx + 2u * pad;
    s.nz = fnz + 2u * pad;
    s.n = (size_t)s.nx * s.nz;
    if (s.n >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "stream power: %zu samples, at most 4294967294", s.n);
    /* The uplift mask on the padded grid (0 on the ring, which is base level anyway). */
    trn_stream_power_params padded = *p;
    float *pad_mask = NULL, *pad_kmask = NULL;
    if (pad) {
        if (p->uplift_mask) {
            pad_mask = calloc(s.n, sizeof *pad_mask);
            if (!pad_mask)
                return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                     "stream power: out of memory for %zu samples", s.n);
            for (uint32_t j = 0; j < fnz; j++)
                memcpy(pad_mask + (size_t)(j + 1u) * s.nx + 1u, p->uplift_mask + (size_t)j * fnx,
                       fnx * sizeof *pad_mask);
            padded.uplift_mask = pad_mask;
        }
        if (p->erodibility_mask) {
            /* 1 on the ring: its samples are base level or walls and never incise. */
            pad_kmask = malloc(s.n * sizeof *pad_kmask);
            if (!pad_kmask) {
                free(pad_mask);
                return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                     "stream power: out of memory for %zu samples", s.n);
            }
            for (size_t k = 0; k < s.n; k++)
                pad_kmask[k] = 1.0f;
            for (uint32_t j = 0; j < fnz; j++)
                memcpy(pad_kmask + (size_t)(j + 1u) * s.nx + 1u,
                       p->erodibility_mask + (size_t)j * fnx, fnx * sizeof *pad_kmask);
            padded.erodibility_mask = pad_kmask;
        }
        p = &padded;
    }
    s.dx = field->size_x / field->cells_x;
    s.dz = field->size_z / field->cells_z;
    s.dd = sqrt(s.dx * s.dx + s.dz * s.dz);
    for (int d = 0; d < 8; d++)
        s.dist[d] = TRN_D8_DI[d] && TRN_D8_DJ[d] ? s.dd : TRN_D8_DI[d] ? s.dx : s.dz;
    for (int d = 0; d < 8; d++) {
        s.inv_dist[d] = 1.0 / s.dist[d];
        s.off[d] = TRN_D8_DJ[d] * (int32_t)s.nx + TRN_D8_DI[d];
    }
    s.off[8] = 0;
    for (unsigned m = 0; m < 256u; m++) {
        unsigned c = 0;
        for (int d = 0; d < 8; d++)
            if (m >> d & 1u) s.don_off[m][c++] = s.off[d];
        s.don_count[m] = (uint8_t)c;
        while (c < 8u)
            s.don_off[m][c++] = 0;
    }
    s.avx2 = use_avx2();
    const double cell_area = s.dx * s.dz;
    s.pow_table_size = s.n < 65536u ? (uint32_t)s.n + 1u : 65536u;
    if (!sp_alloc(&s, p->deposition > 0) || (pad && !sp_ring(&s, field, p->sea_level))) {
        free(pad_mask);
        free(pad_kmask);
        sp_free(&s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "stream power: out of memory for %zu samples", s.n);
    }
#ifdef _OPENMP
    {
        const int team = p->threads > 0 ? p->threads : omp_get_max_threads();
        void *const arrays[9] = {s.h,    s.tmp, s.rcv,  s.stack, s.basin,
                                 s.area, s.dep, s.base, s.rcode};
        const size_t bytes[9] = {s.n * sizeof *s.h,
                                 (s.n + 8u) * sizeof *s.tmp,
                                 s.n * sizeof *s.rcv,
                                 (s.n + 8u) * sizeof *s.stack,
                                 s.n * sizeof *s.basin,
                                 s.n * sizeof *s.area,
                                 s.dep ? s.n * sizeof *s.dep : 0,
                                 s.n,
                                 s.n};
        /* Only where the arrays are large enough for their pages to be fresh ones. */
        if (team > 1 && s.n * sizeof *s.h >= SP_HUGE_PAGE) sp_first_touch(arrays, bytes, 9, team);
    }
#endif
    /* The set-up and the output below are passes over every sample (and 65,536 calls of pow),
     * each value on its own: on threads where the steps run on threads, the same bytes. */
    int setup_team = 1;
#ifdef _OPENMP
    setup_team = p->threads > 0 ? p->threads : omp_get_max_threads();
    if (p->threads == 0 && s.n < SP_PARALLEL_MIN_SAMPLES) setup_team = 1;
#endif
    (void)setup_team; /* read by the pragmas only */
#pragma omp parallel for schedule(static) num_threads(setup_team) if (setup_team > 1)
    for (uint32_t c = 0; c < s.pow_table_size; c++) {
        s.pow_table[c] = pow((double)c * cell_area, p->m);
        /* As sp_incise would compute it: F = K dt A^m, then F / d. */
        const double F = p->erodibility * p->dt * s.pow_table[c];
        s.f_table[c] = F / s.dx;
        s.f_table[s.pow_table_size + c] = F / s.dz;
        s.f_table[2 * (size_t)s.pow_table_size + c] = F / s.dd;
    }
    const bool sea = isfinite(p->sea_level);
    size_t nibase = 0;
#pragma omp parallel for schedule(static) num_threads(setup_team) if (setup_team > 1) \
    reduction(+ : nibase)
    for (uint32_t j = 0; j < s.nz; j++)
        for (uint32_t i = 0; i < s.nx; i++) {
            const size_t k = (size_t)j * s.nx + i;
            const bool border = i == 0 || j == 0 || i + 1u == s.nx || j + 1u == s.nz;
            if (!(pad && border))
                s.h[k] = (double)field->heights[(size_t)(j - pad) * fnx + (i - pad)];
            s.base[k] = (uint8_t)(border || (sea && s.h[k] <= p->sea_level));
            nibase += s.base[k] && !border;
            /* sea_surface: the water's surface is the base level (its bed comes back below). */
            if (p->sea_surface && sea && s.h[k] <= p->sea_level) s.h[k] = p->sea_level;
        }
    s.nibase = nibase;

    /* Creep varying with the rock (its factor on Kd) and a critical slope varying with it
     * (each sample's tan of the slope). */
    const bool dfac = p->diffusion > 0 && p->diffusion_rock != 0 && p->erodibility_mask;
    const bool ctan = p->critical_slope > 0 && p->critical_rock != 0 && p->erodibility_mask;
    if (dfac)
        s.dfac = sp_rock_powers(p->erodibility_mask, s.n, p->diffusion_rock, 1.0, setup_team,
                                &s.dfac_max);
    if (ctan)
        s.ctan = sp_rock_powers(p->erodibility_mask, s.n, p->critical_rock,
                                tan(p->critical_slope * 3.14159265358979323846 / 180.0),
                                setup_team, NULL);
    if ((dfac && !s.dfac) || (ctan && !s.ctan)) {
        free(pad_mask);
        free(pad_kmask);
        sp_free(&s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "stream power: out of memory for %zu samples", s.n);
    }
    const bool mfd = p->routing == TRN_ROUTING_MFD;
    if (mfd) {
        s.lam = big_alloc(s.n * sizeof *s.lam);
        s.farea = big_alloc(s.n * sizeof *s.farea);
        s.mdeg = big_alloc(s.n);
        if (!s.lam || !s.farea || !s.mdeg) {
            free(pad_mask);
            free(pad_kmask);
            sp_free(&s);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "stream power: out of memory for %zu samples", s.n);
        }
    }
    s.ibase = malloc((s.nibase ? s.nibase : 1) * sizeof *s.ibase);
    /* A tree per base-level sample: the border and the interior under the sea. */
    const size_t nbase = 2 * ((size_t)s.nx + s.nz) + s.nibase;
    s.tree_at = malloc((nbase + 1u) * sizeof *s.tree_at);
    s.broot = malloc(nbase * sizeof *s.broot);
    s.row_pits = malloc((size_t)s.nz * sizeof *s.row_pits);
    s.row_at = malloc(((size_t)s.nz + 1u) * sizeof *s.row_at);
    if (!s.ibase || !s.tree_at || !s.broot || !s.row_pits || !s.row_at) {
        free(pad_mask);
        free(pad_kmask);
        sp_free(&s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "stream power: out of memory for %zu samples", s.n);
    }
    /* The interior samples under the sea, which diffusion keeps as they are, and every
     * base-level sample (the border too) in index order. */
    for (uint32_t j = 0, q = 0; j < s.nz; j++)
        for (uint32_t i = 0; i < s.nx; i++) {
            const size_t k = (size_t)j * s.nx + i;
            if (!s.base[k]) continue;
            s.broot[s.nbroot++] = (uint32_t)k;
            if (i > 0 && j > 0 && i + 1u < s.nx && j + 1u < s.nz) s.ibase[q++] = (uint32_t)k;
        }
#ifdef _OPENMP
    const int saved_threads = omp_get_max_threads();
    if (p->threads > 0) omp_set_num_threads(p->threads);
    /* Runs not MFD (whose routing is serial pieces between its passes) hold a crew through
     * the run: the threads asked for, on large grids OpenMP's count, on small ones by default
     * no more than the cores free now. Otherwise a step opens about twenty parallel regions,
     * and on small grids their wake-ups cost more than the work, so by default one thread runs
     * them (an explicit thread count is kept: the results are the same). */
    int late_most = 1;
    int crew_size = helped ? 1 : sp_crew_size(&s, p, mfd, &late_most);
    if (p->threads == 0 && s.n < SP_PARALLEL_MIN_SAMPLES) omp_set_num_threads(1);
    sp_crew own;
    if (crew_size > 1 && sp_crew_init(&own, crew_size)) {
        s.crew = &own;
        own.asked = p->threads > 0;
        own.large = s.n >= SP_PARALLEL_MIN_SAMPLES;
    }
#endif
    if (helped && !mfd && s.n < SP_PARALLEL_MIN_SAMPLES) s.crew = helped;
    if (s.crew) s.crew->s = &s;
    trn_progress pr = trn_progress_make(progress, user);
    /* MFD's tree (lakes, levels, stack) comes from Rho8 receivers too. */
    const bool rho8 = p->routing != TRN_ROUTING_D8;
    const uint32_t salt = sp_salt(p->seed);
    double *before = NULL;
    /* With a crew of its own, the helpers wait in the region for jobs while the caller's
     * thread runs the steps. Without, no region at all: regions opened inside one (even of one
     * thread) do not reuse the threads OpenMP keeps between regions. */
    uint32_t from = 0;
#ifdef _OPENMP
    /* A small run that started alone: its steps by 2, 2, 4, then SP_CREW_CHECK until the cores
     * it could use are free (read as sp_crew_check reads for helpers waiting alone), then a
     * crew for the rest; on a busy machine no region is opened, as before. */
    while (!s.crew && late_most > 1 && from < p->steps && !st) {
        const uint32_t len = from >= SP_CREW_CHECK ? SP_CREW_CHECK : from ? from : SP_LATE_FIRST;
        const uint32_t to = p->steps - from > len ? from + len : p->steps;
        st = sp_steps(&s, p, from, to, rho8, salt, mfd, cell_area, &pr, report, &before, err);
        from = to;
        if (st || from == p->steps) break;
        const long idle = SP_IDLE_CORES(late_most - 1, TRN_IDLE_WINDOW_NS,
                                        TRN_IDLE_OWN_ASLEEP | TRN_IDLE_CONFIRM_FREE);
        if (idle < 1) continue;
        crew_size = late_most < 1 + idle ? late_most : (int)(1 + idle);
        if (sp_crew_init(&own, crew_size)) {
            s.crew = &own;
            own.s = &s;
        }
    }
    if (s.crew && s.crew == &own) {
#pragma omp parallel num_threads(crew_size)
        {
            if (omp_get_thread_num() > 0) sp_crew_serve(s.crew);
            else
                st = sp_steps(&s, p, from, p->steps, rho8, salt, mfd, cell_area, &pr, report,
                              &before, err);
        }
        from = p->steps;
    }
#endif
    if (!st && from < p->steps)
        st = sp_steps(&s, p, from, p->steps, rho8, salt, mfd, cell_area, &pr, report, &before,
                      err);
#ifdef _OPENMP
    if (s.crew == &own) sp_crew_dispose(&own);
    s.crew = NULL;
    omp_set_num_threads(saved_threads);
#endif
    if (!st) {
        if (report) {
            double mx = 0, sum = 0;
            uint64_t cnt = 0;
            uint32_t amax = 0;
            double fmax = 0;
            for (size_t k = 0; k < s.n; k++) {
                if (mfd && s.farea[k] > fmax && !s.base[k]) fmax = s.farea[k];
                if (s.area[k] > amax && !s.base[k]) amax = s.area[k];
                if (s.base[k] || !before) continue;
                const double dz = s.h[k] - before[k];
                if (fabs(dz) > mx) mx = fabs(dz);
                sum += dz;
                cnt++;
            }
            report->last_max_change = mx;
            report->last_mean_change = cnt ? sum / (double)cnt : 0.0;
            report->max_area = mfd ? fmax : (double)amax * cell_area;
        }
        /* Under the sea with sea_surface: the bed as it came in (held at the sea level, which
         * nothing changes, all along). */
        const bool surface = p->sea_surface && sea;
        const double floor_at = trn_sp_surface_floor(p);
#pragma omp parallel for schedule(static) num_threads(setup_team) if (setup_team > 1)
        for (uint32_t j = 0; j < fnz; j++)
            for (size_t k = (size_t)j * fnx; k < (size_t)(j + 1u) * fnx; k++) {
                const size_t q = (size_t)(j + pad) * s.nx + (k - (size_t)j * fnx) + pad;
                if (!(surface && (double)field->heights[k] <= p->sea_level))
                    field->heights[k] = (float)s.h[q];
                else if ((double)field->heights[k] < floor_at)
                    field->heights[k] = (float)floor_at;
                if (p->drainage_area)
                    p->drainage_area[k] =
                        (float)(mfd ? s.farea[q] : (double)s.area[q] * cell_area);
            }
        trn_progress_report(&pr, 1.0, "stream power");
    }
    free(before);
    free(pad_mask);
    free(pad_kmask);
    sp_free(&s);
    return st;
}

/* ---- Tiled runs: the same steps with the grid in tiles, held in memory or in a file ---- */

/* A grid of fixed-size elements, in memory or in an unlinked temporary file, read and written
 * by windows of rows. */
typedef struct spt_grid {
    uint8_t *mem;
    int fd;
    size_t elem;
    uint32_t nx, nz;
} spt_grid;

static bool spt_grid_open(spt_grid *g, const char *dir, uint32_t nx, uint32_t nz, size_t elem)
{
    g->nx = nx;
    g->nz = nz;
    g->elem = elem;
    g->mem = NULL;
    g->fd = -1;
    const size_t bytes = (size_t)nx * nz * elem;
    if (!dir) {
        g->mem = malloc(bytes ? bytes : 1);
        return g->mem != NULL;
    }
    char path[4096];
    if (snprintf(path, sizeof path, "%s/terrane-sp-XXXXXX", dir) >= (int)sizeof path) return false;
    const int fd = mkstemp(path);
    if (fd < 0) return false;
    unlink(path); /* gone with the descriptor, whatever happens */
    if (ftruncate(fd, (off_t)bytes) != 0) {
        close(fd);
        return false;
    }
    g->fd = fd;
    return true;
}

static void spt_grid_close(spt_grid *g)
{
    free(g->mem);
    if (g->fd >= 0) close(g->fd);
    g->mem = NULL;
    g->fd = -1;
}

/* Rows z0 .. z0 + h - 1, columns x0 .. x0 + w - 1, to or from buf (rows stride elements apart). */
static bool spt_io(const spt_grid *g, bool write, uint32_t x0, uint32_t z0, uint32_t w, uint32_t h,
                   void *buf, size_t stride)
{
    uint8_t *b = buf;
    const size_t rowb = (size_t)w * g->elem;
    for (uint32_t j = 0; j < h; j++) {
        const size_t at = ((size_t)(z0 + j) * g->nx + x0) * g->elem;
        uint8_t *row = b + (size_t)j * stride * g->elem;
        if (g->mem) {
            if (write)
                memcpy(g->mem + at, row, rowb);
            else
                memcpy(row, g->mem + at, rowb);
            continue;
        }
        size_t done = 0;
        while (done < rowb) {
            const ssize_t r = write ? pwrite(g->fd, row + done, rowb - done, (off_t)(at + done))
                                    : pread(g->fd, row + done, rowb - done, (off_t)(at + done));
            if (r <= 0) return false;
            done += (size_t)r;
        }
    }
    return true;
}

/* A root of a tile's part of the receiver forest: a base-level sample, a pit, or an exit (a
 * sample whose receiver lies in another tile). */
enum { SPT_BASE = 0, SPT_PIT = 1, SPT_EXIT = 2 };
/* Samples are numbered in the whole grid (j * nx + i) in 64 bits, as a grid may hold more than
 * 2^32 (65537^2 with its ring); inside a tile (local roots, work buffers) in 32. Roots, basins
 * and tiles are numbered in 32 bits (trn_spt_tiled_limits, SPT_MAX_ROOTS). */
typedef struct spt_root {
    uint64_t v, target; /* the sample; an exit's receiver (SPT_NONE64 for the others) */
    uint32_t basin;     /* its basin (exits: the basin of the tree they join) */
    uint32_t count;     /* after routing: an exit's samples draining through it in its tile */
    uint8_t kind;
} spt_root;

#define SPT_NONE64 UINT64_MAX
/* Roots (and so basins, exits and inflows) in one step: their numbers are 32-bit, UINT32_MAX
 * marking none. */
#define SPT_MAX_ROOTS (UINT32_MAX - 1u)

/* A pass between two basins: sp_edge's level and samples (64-bit here), the two basins and the
 * local roots of its two samples (where carving starts), each an index in its sample's tile. */
typedef struct spt_edge {
    double w;
    uint64_t a, b;
    uint32_t ba, bb, la, lb;
} spt_edge;

/* edge_cmp's order (level, then samples) on the 64-bit samples: the same order as the whole
 * grid's wherever its 32-bit indices exist. */
static int spt_edge_cmp(const void *x, const void *y)
{
    const spt_edge *e = x, *f = y;
    if (e->w != f->w) return e->w < f->w ? -1 : 1;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

/* A task for one tile: reverse the receivers from start (draining to prev) down its tree. Also
 * used for inflows: sample start receives prev samples from other tiles. */
typedef struct spt_task {
    uint64_t start, prev; /* whole-grid samples (an inflow's prev: its count) */
    uint32_t tile;
    uint32_t exit; /* incision: the exit this target feeds */
} spt_task;

static int spt_task_cmp(const void *x, const void *y)
{
    const spt_task *a = x, *b = y;
    if (a->tile != b->tile) return a->tile < b->tile ? -1 : 1;
    return (a->start > b->start) - (a->start < b->start);
}

typedef struct spt_run {
    sp_state s; /* dist, off, tables and the kernels' choice; no per-sample arrays */
    uint32_t T, tnx, tnz, ntiles, pad, fnx, fnz;
    spt_grid H, H2, BASE, CODE, LR, AREA;
    spt_grid PG, QG; /* deposition: each sample's P and Q, then its alpha and beta */
    /* Per tile: its roots (sorted by sample) and its perimeter's local roots. */
    size_t *root_at;
    spt_root *roots;
    size_t nroots, root_cap;
    size_t *perim_at;
    uint32_t *perim;
    /* Work buffers of a tile with its halo. */
    double *wh, *wo;
    uint8_t *wb, *wc;
    uint32_t *wl, *wa, *wq, *wd;
    uint8_t *wk;
    double *wp, *wq2; /* deposition: P and Q over the tile */
    uint32_t *wf;     /* deposition: each tile sample's first inflow from other tiles */
    double *wd2, *wo2; /* diffusion: the tile grown by SPT_SUBSTEPS samples */
    uint8_t *wb2;
    float *wf2;  /* diffusion_rock: the factors on Kd over the grown tile (NULL: uniform) */
    double rock; /* diffusion_rock */
    const float *umask, *kmask; /* field layout, from the field's row row0 */
    /* The field's rows held by its heights, masks and area (trn_spt_window): row0 .. row0 +
     * rows - 1; edge: the heights of its first and last rows and columns (NULL: read from the
     * whole field). */
    uint32_t row0, rows;
    const float *edge[4];
    /* Across processes: comm NULL is one process holding every tile. This process works on
     * tiles first .. last - 1 (trn_comm_first_tile's run); the others' samples it reads are
     * copies brought by the frame exchanges, the small graphs are shared whole. */
    trn_comm *comm;
    uint32_t first, last;
    uint8_t *need; /* per tile: a frame this process reads (scratch of spt_exchange) */
    bool peer_failed;
    bool too_many; /* more than SPT_MAX_ROOTS roots in a step */
    trn_sp_tiled_stats *stats;
    /* NULL: every process gets the whole result; else process k only the field's rows
     * bands[k] .. bands[k + 1] - 1 (trn_stream_power_run_tiled_rows). */
    const uint32_t *bands;
} spt_run;

static void spt_tile_box(const spt_run *r, uint32_t t, uint32_t *x0, uint32_t *z0, uint32_t *x1,
                         uint32_t *z1)
{
    const uint32_t ti = t % r->tnx, tj = t / r->tnx;
    *x0 = ti * r->T;
    *z0 = tj * r->T;
    *x1 = *x0 + r->T < r->s.nx ? *x0 + r->T : r->s.nx;
    *z1 = *z0 + r->T < r->s.nz ? *z0 + r->T : r->s.nz;
}

uint32_t trn_spt_tile_of(uint32_t nx, uint32_t tile, uint64_t v)
{
    const uint32_t tnx = (nx + tile - 1u) / tile;
    return (uint32_t)(v / nx) / tile * tnx + (uint32_t)(v % nx) / tile;
}

uint64_t trn_spt_sample_index(uint32_t nx, uint32_t nz, uint32_t tile, uint32_t t, uint32_t k)
{
    const uint32_t tnx = (nx + tile - 1u) / tile;
    const uint32_t x0 = t % tnx * tile, z0 = t / tnx * tile;
    const uint32_t w = x0 + tile < nx ? tile : nx - x0;
    (void)nz; /* the last row of tiles is cut below, which does not move its rows' starts */
    return ((uint64_t)z0 + k / w) * nx + x0 + k % w;
}

static uint32_t spt_tile_of(const spt_run *r, uint64_t v)
{
    return trn_spt_tile_of(r->s.nx, r->T, v);
}

/* Sample k of tile t (row-major inside it) in the whole grid. */
static uint64_t spt_global(const spt_run *r, uint32_t t, uint32_t k)
{
    return trn_spt_sample_index(r->s.nx, r->s.nz, r->T, t, k);
}

/* Where sample v (on its tile's perimeter) sits in that tile's perimeter list. */
static size_t spt_perim_index(const spt_run *r, uint64_t v)
{
    const uint32_t t = spt_tile_of(r, v);
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t i = (uint32_t)(v % r->s.nx), j = (uint32_t)(v / r->s.nx), w = x1 - x0,
                   h = z1 - z0;
    size_t k;
    if (j == z0)
        k = i - x0;
    else if (j == z1 - 1u)
        k = w + (i - x0);
    else if (i == x0)
        k = 2u * (size_t)w + (j - z0);
    else
        k = 2u * (size_t)w + h + (j - z0);
    return r->perim_at[t] + k;
}

/* The perimeter slots of a tile's sample (i, j): up to two (corners), SIZE_MAX when none. */
static void spt_perim_put(spt_run *r, uint32_t t, uint32_t i, uint32_t j, uint32_t value)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t w = x1 - x0, h = z1 - z0;
    uint32_t *p = r->perim + r->perim_at[t];
    if (j == z0) p[i - x0] = value;
    if (j == z1 - 1u) p[w + (i - x0)] = value;
    if (i == x0) p[2u * w + (j - z0)] = value;
    if (i == x1 - 1u) p[2u * w + h + (j - z0)] = value;
}

static spt_root *spt_root_find(spt_run *r, uint32_t t, uint64_t v)
{
    size_t lo = r->root_at[t], hi = r->root_at[t + 1];
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (r->roots[mid].v < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->root_at[t + 1] && r->roots[lo].v == v ? &r->roots[lo] : NULL;
}

/* The root of the tile's tree that sample v (on a tile's perimeter) belongs to (the perimeter
 * holds its local root, an index in the tile). */
static spt_root *spt_root_of(spt_run *r, uint64_t v)
{
    const uint32_t t = spt_tile_of(r, v);
    return spt_root_find(r, t, spt_global(r, t, r->perim[spt_perim_index(r, v)]));
}

static bool spt_root_add(spt_run *r, uint64_t v, uint64_t target, uint8_t kind)
{
    if (r->nroots >= SPT_MAX_ROOTS) {
        r->too_many = true;
        return false;
    }
    if (r->nroots == r->root_cap) {
        const size_t cap = r->root_cap ? 2 * r->root_cap : 4096;
        spt_root *n = realloc(r->roots, cap * sizeof *n);
        if (!n) return false;
        r->roots = n;
        r->root_cap = cap;
    }
    r->roots[r->nroots++] = (spt_root){v, target, UINT32_MAX, 0, kind};
    return true;
}

/* The D8 code from sample v to its neighbour q. */
static uint8_t spt_code_to(const spt_run *r, uint64_t v, uint64_t q)
{
    const int64_t di = (int64_t)(q % r->s.nx) - (int64_t)(v % r->s.nx);
    const int64_t dj = (int64_t)(q / r->s.nx) - (int64_t)(v / r->s.nx);
    for (uint8_t d = 0; d < 8; d++)
        if (TRN_D8_DI[d] == di && TRN_D8_DJ[d] == dj) return d;
    return 8;
}

/* The tile's trees: for each sample of the tile (local index) its receiver in the tile or
 * UINT32_MAX (a root), and the local root (lab, the root's local index) of every sample
 * (which 2) or of the perimeter's (which 1; the others' lab on the way) or of none (which 0).
 * codes in wc (tile layout). Labels set along each path walked keep it linear. */
static void spt_label(spt_run *r, uint32_t x0, uint32_t z0, uint32_t w, uint32_t h, int which)
{
    const size_t tn = (size_t)w * h;
    uint32_t *rec = r->wq, *lab = r->wl;
    for (size_t k = 0; k < tn; k++) {
        const uint32_t i = x0 + (uint32_t)(k % w), j = z0 + (uint32_t)(k / w);
        const uint8_t c = r->wc[k];
        rec[k] = UINT32_MAX;
        lab[k] = UINT32_MAX;
        if (c == 8) continue;
        const int64_t ii = (int64_t)i + TRN_D8_DI[c], jj = (int64_t)j + TRN_D8_DJ[c];
        if (ii < x0 || jj < z0 || ii >= (int64_t)x0 + w || jj >= (int64_t)z0 + h) continue;
        rec[k] = (uint32_t)((size_t)(jj - z0) * w + (size_t)(ii - x0));
    }
    if (!which) return;
    uint32_t *path = r->wd;
    for (size_t k = 0; k < tn; k++) {
        if (lab[k] != UINT32_MAX) continue;
        if (which == 1) {
            const uint32_t i = (uint32_t)(k % w), j = (uint32_t)(k / w);
            if (!(i == 0 || j == 0 || i + 1u == w || j + 1u == h)) {
                k = (size_t)j * w + w - 2u; /* on to the row's last sample */
                continue;
            }
        }
        size_t np = 0;
        uint32_t x = (uint32_t)k;
        while (lab[x] == UINT32_MAX && rec[x] != UINT32_MAX) {
            path[np++] = x;
            x = rec[x];
        }
        const uint32_t root = lab[x] != UINT32_MAX ? lab[x] : x;
        lab[x] = root;
        while (np)
            lab[path[--np]] = root;
    }
}

/* a + b held at UINT32_MAX: drainage counts stay 32-bit (4 bytes a sample in AREA); only a grid
 * of more than 2^32 samples can gather more above one sample, whose incision then takes 2^32-1
 * samples' area. Below that no sum reaches it, so the bytes stay the whole grid's. */
static inline uint32_t spt_count_add(uint32_t a, uint64_t b)
{
    return b >= (uint64_t)(UINT32_MAX - a) ? UINT32_MAX : a + (uint32_t)b;
}

/* Samples draining through each sample within the tile (1 each plus inflow already in wa), in
 * any order with donors first (whole counts: the order does not change the sums). */
static void spt_accumulate(spt_run *r, size_t tn)
{
    uint32_t *rec = r->wq, *deg = r->wd, *area = r->wa, *queue = r->wl;
    for (size_t k = 0; k < tn; k++)
        deg[k] = 0;
    for (size_t k = 0; k < tn; k++)
        if (rec[k] != UINT32_MAX) deg[rec[k]]++;
    size_t qh = 0, qt = 0;
    for (size_t k = 0; k < tn; k++)
        if (!deg[k]) queue[qt++] = (uint32_t)k;
    while (qh < qt) {
        const uint32_t v = queue[qh++], x = rec[v];
        if (x == UINT32_MAX) continue;
        area[x] = spt_count_add(area[x], area[v]);
        if (--deg[x] == 0) queue[qt++] = x;
    }
}

/* The implicit incision of one sample given its receiver's new height hr: incise_range's
 * operations for it. */
static double spt_incise_one(const spt_run *r, const trn_stream_power_params *p, double cell_area,
                             uint64_t v, uint8_t c, double h0, double hr, uint32_t a)
{
    static const uint8_t cls[9] = {0, 2, 1, 2, 0, 2, 1, 2, 0};
    const sp_state *s = &r->s;
    if (h0 <= hr) return h0;
    if ((double)a * cell_area < p->channel_threshold) return h0;
    float km = 1.0f;
    if (r->kmask) {
        const uint32_t i = (uint32_t)(v % s->nx), j = (uint32_t)(v / s->nx);
        const bool ring = r->pad && (i == 0 || j == 0 || i + 1u == s->nx || j + 1u == s->nz);
        if (!ring) km = r->kmask[(size_t)(j - r->pad - r->row0) * r->fnx + (i - r->pad)];
    }
    const uint32_t tsize = s->pow_table_size;
    if (p->n == 1.0) {
        double f = a < tsize
                       ? s->f_table[(size_t)cls[c] * tsize + a]
                       : p->erodibility * p->dt * pow((double)a * cell_area, p->m) / s->dist[c];
        if (r->kmask) f *= (double)km;
        return (h0 + f * hr) / (1.0 + f);
    }
    const double d = s->dist[c], n_exp = p->n;
    double F =
        p->erodibility * p->dt * (a < tsize ? s->pow_table[a] : pow((double)a * cell_area, p->m));
    if (r->kmask) F *= (double)km;
    return sp_newton(h0, hr, F / pow(d, n_exp), n_exp);
}

static void spt_free(spt_run *r)
{
    spt_grid *g[8] = {&r->H, &r->H2, &r->BASE, &r->CODE, &r->LR, &r->AREA, &r->PG, &r->QG};
    for (int k = 0; k < 8; k++)
        spt_grid_close(g[k]);
    free(r->root_at);
    free(r->roots);
    free(r->perim_at);
    free(r->perim);
    free(r->wh);
    free(r->wo);
    free(r->wb);
    free(r->wc);
    free(r->wl);
    free(r->wa);
    free(r->wq);
    free(r->wd);
    free(r->wk);
    free(r->wp);
    free(r->wq2);
    free(r->wf);
    free(r->wd2);
    free(r->wo2);
    free(r->wb2);
    free(r->wf2);
    free(r->need);
    free(r->s.pow_table);
    free(r->s.f_table);
}

/* The halo window of tile t: one sample around it, cut at the grid's edge. */
static void spt_halo(const spt_run *r, uint32_t x0, uint32_t z0, uint32_t x1, uint32_t z1,
                     uint32_t *wx0, uint32_t *wz0, uint32_t *ww, uint32_t *wh)
{
    *wx0 = x0 ? x0 - 1u : 0;
    *wz0 = z0 ? z0 - 1u : 0;
    *ww = (x1 < r->s.nx ? x1 + 1u : x1) - *wx0;
    *wh = (z1 < r->s.nz ? z1 + 1u : z1) - *wz0;
}

/* Uplift (the tile and its halo, each sample as sp_uplift) and the receivers of the tile's
 * samples (sp_receivers on the halo's heights); codes to CODE, heights back to H. Counts
 * pits. */
static bool spt_pass_receivers(spt_run *r, const trn_stream_power_params *p, uint32_t t, bool rho8,
                               uint32_t salt, uint64_t *pits)
{
    const uint32_t NX = r->s.nx, NZ = r->s.nz;
    uint32_t x0, z0, x1, z1, wx0, wz0, ww, wh;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    spt_halo(r, x0, z0, x1, z1, &wx0, &wz0, &ww, &wh);
    if (!spt_io(&r->H, false, wx0, wz0, ww, wh, r->wh, ww) ||
        !spt_io(&r->BASE, false, wx0, wz0, ww, wh, r->wb, ww))
        return false;
    const double u = p->uplift * p->dt;
    for (uint32_t j = 0; j < wh; j++)
        for (uint32_t i = 0; i < ww; i++) {
            const size_t k = (size_t)j * ww + i;
            const uint32_t gi = wx0 + i, gj = wz0 + j;
            /* The halo's samples in earlier tiles (the row above, the column to the left) are
             * uplifted already when they are this process's: tiles go in order. Another
             * process's are the copies of the step's start. */
            if (r->wb[k] & 1u) continue;
            if ((gj < z0 || (gj < z1 && gi < x0)) &&
                spt_tile_of(r, (uint64_t)gj * NX + gi) >= r->first)
                continue;
            if (r->umask) {
                /* Not base level, so inside the ring. */
                r->wh[k] =
                    r->wh[k] +
                    u * (double)r->umask[(size_t)(gj - r->pad - r->row0) * r->fnx + (gi - r->pad)];
            } else {
                r->wh[k] = r->wh[k] + u * 1.0;
            }
        }
    const size_t off = (size_t)(z0 - wz0) * ww + (x0 - wx0);
    if (!spt_io(&r->H, true, x0, z0, x1 - x0, z1 - z0, r->wh + off, ww)) return false;
    receivers_row_fn row_fn = receivers_row_default;
    receivers_rho8_fn rho8_fn = receivers_rho8_default;
#if HAVE_AVX2_VARIANT
    if (r->s.avx2) {
        row_fn = receivers_row_avx2;
        rho8_fn = receivers_rho8_avx2;
    }
#endif
    const double inv_x = 1.0 / r->s.dx, inv_z = 1.0 / r->s.dz;
    const double inv_unit = 1.4142135623730951 / r->s.dd;
    const uint32_t w = x1 - x0;
    uint8_t *seg = r->wk;
    for (uint32_t j = z0; j < z1; j++) {
        uint8_t *code = r->wc + (size_t)(j - z0) * w;
        if (j == 0 || j + 1u == NZ) {
            memset(code, 8, w);
            continue;
        }
        const uint32_t cs = (x0 > 1u ? x0 : 1u) - 1u;
        const uint32_t ce = (x1 < NX - 1u ? x1 : NX - 1u) + 1u;
        const double *mid = r->wh + (size_t)(j - wz0) * ww + (cs - wx0);
        if (rho8)
            rho8_fn(mid - ww, mid, mid + ww, seg, ce - cs, inv_x, inv_z, inv_unit,
                    (uint32_t)((size_t)j * NX + cs), salt);
        else
            row_fn(mid - ww, mid, mid + ww, seg, ce - cs, r->s.inv_dist);
        for (uint32_t i = x0; i < x1; i++) {
            uint8_t c = i == 0 || i + 1u == NX ? 8 : seg[i - cs];
            if (r->wb[(size_t)(j - wz0) * ww + (i - wx0)] & 1u)
                c = 8;
            else
                *pits += c == 8;
            code[i - x0] = c;
        }
    }
    return spt_io(&r->CODE, true, x0, z0, w, z1 - z0, r->wc, w);
}

/* The tile's trees before routing: local roots to LR, the roots (in sample order) and the
 * perimeter's local roots to the tables. Tiles in order. */
static bool spt_pass_trees(spt_run *r, uint32_t t)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t w = x1 - x0, h = z1 - z0, NX = r->s.nx;
    if (!spt_io(&r->CODE, false, x0, z0, w, h, r->wc, w) ||
        !spt_io(&r->BASE, false, x0, z0, w, h, r->wb, w))
        return false;
    spt_label(r, x0, z0, w, h, 2);
    r->root_at[t] = r->nroots;
    for (size_t k = 0; k < (size_t)w * h; k++) {
        const uint32_t i = x0 + (uint32_t)(k % w), j = z0 + (uint32_t)(k / w);
        const uint64_t v = (uint64_t)j * NX + i;
        if (r->wq[k] == UINT32_MAX) {
            const uint8_t c = r->wc[k];
            const bool ok =
                c == 8 ? spt_root_add(r, v, SPT_NONE64, (r->wb[k] & 1u) ? SPT_BASE : SPT_PIT)
                       : spt_root_add(r, v, (uint64_t)((int64_t)v + r->s.off[c]), SPT_EXIT);
            if (!ok) return false;
        }
        if (j == z0 || j + 1u == z1 || i == x0 || i + 1u == x1) spt_perim_put(r, t, i, j, r->wl[k]);
    }
    r->root_at[t + 1] = r->nroots;
    return spt_io(&r->LR, true, x0, z0, w, h, r->wl, w);
}

/* Each root's basin: base level 0, pits numbered, exits that of the tree they flow into.
 * Returns the number of basins. */
static uint32_t spt_resolve(spt_run *r, uint32_t **stack_buf)
{
    uint32_t nb = 1;
    for (size_t q = 0; q < r->nroots; q++) {
        spt_root *x = &r->roots[q];
        x->basin = x->kind == SPT_BASE ? 0 : x->kind == SPT_PIT ? nb++ : UINT32_MAX;
    }
    uint32_t *st = *stack_buf;
    for (size_t q = 0; q < r->nroots; q++) {
        if (r->roots[q].basin != UINT32_MAX) continue;
        size_t n = 0;
        spt_root *x = &r->roots[q];
        while (x->basin == UINT32_MAX) {
            st[n++] = (uint32_t)(x - r->roots);
            x = spt_root_of(r, x->target);
        }
        while (n)
            r->roots[st[--n]].basin = x->basin;
    }
    return nb;
}

/* The lowest pass of every pair of basins (the table keyed by the pair). */
typedef struct spt_table {
    size_t cap, count;
    uint64_t *keys;
    spt_edge *edges;
} spt_table;

static bool spt_table_put(spt_table *t, uint64_t key, const spt_edge *e)
{
    if (2 * (t->count + 1) > t->cap) {
        const size_t ncap = t->cap ? 2 * t->cap : 4096;
        uint64_t *nk = malloc(ncap * sizeof *nk);
        spt_edge *ne = malloc(ncap * sizeof *ne);
        if (!nk || !ne) {
            free(nk);
            free(ne);
            return false;
        }
        for (size_t k = 0; k < ncap; k++)
            nk[k] = UINT64_MAX;
        for (size_t k = 0; k < t->cap; k++) {
            if (t->keys[k] == UINT64_MAX) continue;
            size_t hh = (size_t)((t->keys[k] * 0x9E3779B97F4A7C15ull) >> 20) & (ncap - 1);
            while (nk[hh] != UINT64_MAX)
                hh = (hh + 1) & (ncap - 1);
            nk[hh] = t->keys[k];
            ne[hh] = t->edges[k];
        }
        free(t->keys);
        free(t->edges);
        t->keys = nk;
        t->edges = ne;
        t->cap = ncap;
    }
    size_t hh = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (t->cap - 1);
    while (t->keys[hh] != UINT64_MAX && t->keys[hh] != key)
        hh = (hh + 1) & (t->cap - 1);
    if (t->keys[hh] == UINT64_MAX) {
        t->keys[hh] = key;
        t->edges[hh] = *e;
        t->count++;
    } else if (spt_edge_cmp(e, &t->edges[hh]) < 0) {
        t->edges[hh] = *e;
    }
    return true;
}

/* The basin of a sample whose local root is lr, in tile t (a one-entry cache per call site). */
static uint32_t spt_basin(spt_run *r, uint32_t t, uint32_t lr, uint32_t *ct, uint32_t *clr,
                          uint32_t *cb)
{
    if (t == *ct && lr == *clr) return *cb;
    *ct = t;
    *clr = lr;
    *cb = spt_root_find(r, t, spt_global(r, t, lr))->basin;
    return *cb;
}

/* Every neighbouring pair (v, q > v) with v in the tile and the two in different basins:
 * sp_passes's edges on the uplifted heights. */
static bool spt_pass_passes(spt_run *r, uint32_t t, spt_table *tab)
{
    const uint32_t NX = r->s.nx, NZ = r->s.nz;
    uint32_t x0, z0, x1, z1, wx0, wz0, ww, wh;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    spt_halo(r, x0, z0, x1, z1, &wx0, &wz0, &ww, &wh);
    if (!spt_io(&r->H, false, wx0, wz0, ww, wh, r->wh, ww) ||
        !spt_io(&r->LR, false, wx0, wz0, ww, wh, r->wl, ww))
        return false;
    uint32_t c1t = UINT32_MAX, c1l = UINT32_MAX, c1b = 0, c2t = UINT32_MAX, c2l = UINT32_MAX,
             c2b = 0;
    for (uint32_t j = z0; j < z1; j++)
        for (uint32_t i = x0; i < x1; i++) {
            const size_t kv = (size_t)(j - wz0) * ww + (i - wx0);
            const uint32_t lv = r->wl[kv];
            for (int d = 0; d < 4; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii < 0 || ii >= NX || jj >= NZ) continue;
                const size_t kq = (size_t)(jj - wz0) * ww + (size_t)(ii - wx0);
                const uint32_t lq = r->wl[kq];
                /* Local roots are indices in their own tile: equal ones in two tiles differ. */
                const bool inside = ii >= x0 && ii < x1 && jj >= z0 && jj < z1;
                if (inside && lq == lv) continue;
                const uint64_t v = (uint64_t)j * NX + i, q = (uint64_t)jj * NX + (uint64_t)ii;
                const uint32_t bv = spt_basin(r, t, lv, &c1t, &c1l, &c1b);
                const uint32_t bq =
                    spt_basin(r, inside ? t : spt_tile_of(r, q), lq, &c2t, &c2l, &c2b);
                if (bv == bq) continue;
                const double hv = r->wh[kv], hq = r->wh[kq];
                const spt_edge e = {hv > hq ? hv : hq, v, q, bv, bq, lv, lq};
                const uint64_t key = bv < bq ? (uint64_t)bv << 32 | bq : (uint64_t)bq << 32 | bv;
                if (!spt_table_put(tab, key, &e)) return false;
            }
        }
    return true;
}

/* Kruskal's tree over the lowest passes, oriented from the outlet basin (0), as
 * sp_route_pits; the carving tasks of every child basin, per tile: from its pass sample down
 * its old receivers to its pit, one task per tile the path crosses. */
static bool spt_route(spt_run *r, spt_table *tab, uint32_t nb, spt_task **tasks_out,
                      size_t *ntasks_out)
{
    spt_edge *edges = malloc((tab->count ? tab->count : 1) * sizeof *edges);
    uint32_t *parent = malloc((size_t)nb * sizeof *parent);
    uint32_t *off = calloc((size_t)nb + 1u, sizeof *off);
    uint32_t *queue = malloc((size_t)nb * sizeof *queue);
    uint8_t *seen = calloc(nb, 1);
    uint32_t *adj = NULL;
    spt_task *tasks = NULL;
    size_t ntasks = 0, task_cap = 0;
    bool ok = edges && parent && off && queue && seen;
    if (ok) {
        size_t c = 0;
        for (size_t k = 0; k < tab->cap; k++)
            if (tab->keys[k] != UINT64_MAX) edges[c++] = tab->edges[k];
        qsort(edges, c, sizeof *edges, spt_edge_cmp);
        for (uint32_t b = 0; b < nb; b++)
            parent[b] = b;
        size_t chosen = 0;
        for (size_t e = 0; e < c && chosen + 1u < nb; e++) {
            const uint32_t x = uf_find(parent, edges[e].ba), y = uf_find(parent, edges[e].bb);
            if (x == y) continue;
            parent[x] = y;
            edges[chosen++] = edges[e];
        }
        adj = malloc((chosen ? 2 * chosen : 1) * sizeof *adj);
        ok = adj != NULL;
        if (ok) {
            for (size_t e = 0; e < chosen; e++) {
                off[edges[e].ba + 1]++;
                off[edges[e].bb + 1]++;
            }
            for (uint32_t b = 0; b < nb; b++)
                off[b + 1] += off[b];
            memcpy(parent, off, (size_t)nb * sizeof *parent);
            for (size_t e = 0; e < chosen; e++) {
                adj[parent[edges[e].ba]++] = (uint32_t)e;
                adj[parent[edges[e].bb]++] = (uint32_t)e;
            }
            size_t qh = 0, qt = 0;
            queue[qt++] = 0;
            seen[0] = 1;
            while (qh < qt && ok) {
                const uint32_t b = queue[qh++];
                for (uint32_t k = off[b]; k < off[b + 1] && ok; k++) {
                    const spt_edge *e = &edges[adj[k]];
                    const uint32_t child = e->ba == b ? e->bb : e->ba;
                    if (seen[child]) continue;
                    seen[child] = 1;
                    queue[qt++] = child;
                    uint64_t cur = e->ba == b ? e->b : e->a;
                    uint64_t prev = e->ba == b ? e->a : e->b;
                    const uint32_t ct = spt_tile_of(r, cur);
                    const spt_root *x =
                        spt_root_find(r, ct, spt_global(r, ct, e->ba == b ? e->lb : e->la));
                    for (;;) {
                        if (ntasks == task_cap) {
                            task_cap = task_cap ? 2 * task_cap : 1024;
                            spt_task *n = realloc(tasks, task_cap * sizeof *n);
                            if (!n) {
                                ok = false;
                                break;
                            }
                            tasks = n;
                        }
                        tasks[ntasks++] = (spt_task){cur, prev, spt_tile_of(r, cur), 0};
                        if (x->kind != SPT_EXIT) break; /* the pit */
                        prev = x->v;
                        cur = x->target;
                        x = spt_root_of(r, cur);
                    }
                }
            }
        }
    }
    free(edges);
    free(parent);
    free(off);
    free(queue);
    free(seen);
    free(adj);
    if (ok && ntasks) qsort(tasks, ntasks, sizeof *tasks, spt_task_cmp);
    if (!ok) {
        free(tasks);
        tasks = NULL;
        ntasks = 0;
    }
    *tasks_out = tasks;
    *ntasks_out = ntasks;
    return ok;
}

/* The carving in one tile: each task's receivers reversed down to its pit or the tile's edge. */
static bool spt_pass_carve(spt_run *r, uint32_t t, const spt_task *task, size_t n)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t w = x1 - x0, h = z1 - z0, NX = r->s.nx;
    if (!spt_io(&r->CODE, false, x0, z0, w, h, r->wc, w)) return false;
    for (size_t q = 0; q < n; q++) {
        uint64_t cur = task[q].start, prev = task[q].prev;
        for (;;) {
            const size_t k = (size_t)(cur / NX - z0) * w + (size_t)(cur % NX - x0);
            const uint8_t oc = r->wc[k];
            r->wc[k] = spt_code_to(r, cur, prev);
            if (oc == 8) break;
            const uint64_t nxt = (uint64_t)((int64_t)cur + r->s.off[oc]);
            const uint32_t ni = (uint32_t)(nxt % NX), nj = (uint32_t)(nxt / NX);
            if (ni < x0 || ni >= x1 || nj < z0 || nj >= z1) break;
            prev = cur;
            cur = nxt;
        }
    }
    return spt_io(&r->CODE, true, x0, z0, w, h, r->wc, w);
}

/* The routed forest in one tile: its roots (base level and exits, each exit with the samples
 * draining through it here) and its perimeter's local roots. With inflow (tasks sorted by
 * sample: samples arriving from other tiles), the tile's full drainage area to AREA. */
static bool spt_pass_area(spt_run *r, uint32_t t, const spt_task *in, size_t nin, bool final)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t w = x1 - x0, h = z1 - z0, NX = r->s.nx;
    const size_t tn = (size_t)w * h;
    if (!spt_io(&r->CODE, false, x0, z0, w, h, r->wc, w)) return false;
    spt_label(r, x0, z0, w, h, final ? 0 : 1);
    if (!final) {
        r->root_at[t] = r->nroots;
        for (size_t k = 0; k < tn; k++) {
            const uint32_t i = x0 + (uint32_t)(k % w), j = z0 + (uint32_t)(k / w);
            const uint64_t v = (uint64_t)j * NX + i;
            if (r->wq[k] == UINT32_MAX) {
                const uint8_t c = r->wc[k];
                if (!spt_root_add(r, v, c == 8 ? SPT_NONE64 : (uint64_t)((int64_t)v + r->s.off[c]),
                                  c == 8 ? SPT_BASE : SPT_EXIT))
                    return false;
            }
            if (j == z0 || j + 1u == z1 || i == x0 || i + 1u == x1)
                spt_perim_put(r, t, i, j, r->wl[k]);
        }
        r->root_at[t + 1] = r->nroots;
    }
    for (size_t k = 0; k < tn; k++)
        r->wa[k] = 1;
    for (size_t q = 0; q < nin; q++) {
        const uint64_t v = in[q].start;
        uint32_t *a = &r->wa[(size_t)(v / NX - z0) * w + (size_t)(v % NX - x0)];
        *a = spt_count_add(*a, in[q].prev);
    }
    spt_accumulate(r, tn);
    if (final) return spt_io(&r->AREA, true, x0, z0, w, h, r->wa, w);
    for (size_t q = r->root_at[t]; q < r->root_at[t + 1]; q++) {
        const uint64_t v = r->roots[q].v;
        r->roots[q].count = r->wa[(size_t)(v / NX - z0) * w + (size_t)(v % NX - x0)];
    }
    return true;
}

/* Incision in upstream rounds. Each exit (a root of the routed forest, index into roots) waits
 * for its receiver's new height (hr, set when known); a tile solves every tree whose root can
 * go (base level on the first visit, exits whose receiver is known), donors after receivers, each
 * sample once from the same operands as incise_range, and hands the new heights of samples
 * that other tiles' exits drain into to those exits. A tile's first visit reads the whole tile
 * and notes the box of every tree it leaves waiting; a later visit reads only the box around the
 * trees that can go then (most are small trees along the tile's edge: at 4097^2 in tiles of
 * 1024, the later visits solved a fifth of what whole-tile reads brought in). */
typedef struct spt_incision {
    double *hr;
    uint8_t *known, *done;
    const spt_task *feeds; /* per tile (sorted by tile, sample): sample start feeds exit */
    const size_t *feed_at;
    uint8_t *visited;
    uint8_t *boxed;  /* per tile: the waiting trees' boxes are known (it was read whole) */
    uint32_t *box;   /* per root: its tree's samples x0, z0, x1, z1 (exclusive), in the grid */
    /* Across processes: the new heights for exits in other processes' tiles, sent after the
     * round. */
    struct spt_handoff *out;
    size_t nout, out_cap;
} spt_incision;

/* A new height that exit q (a root index) drains into. */
typedef struct spt_handoff {
    uint32_t q, unused;
    double hr;
} spt_handoff;

static bool spt_pass_incise(spt_run *r, const trn_stream_power_params *p, double cell_area,
                            uint32_t t, spt_incision *inc, uint32_t *wake, size_t *nwake,
                            uint8_t *queued)
{
    /* Nothing to do (no base level left to start from, no exit newly known): no reading. */
    bool any = false;
    for (size_t q = r->root_at[t]; q < r->root_at[t + 1] && !any; q++) {
        const spt_root *x = &r->roots[q];
        any = x->kind == SPT_BASE ? !inc->visited[t] : inc->known[q] && !inc->done[q];
    }
    if (!any) {
        inc->visited[t] = 1;
        return true;
    }
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t NX = r->s.nx;
    /* The window read: the whole tile, or the box of the trees that can go now. */
    const bool whole = !inc->boxed[t];
    if (!whole) {
        uint32_t bx0 = x1, bz0 = z1, bx1 = x0, bz1 = z0;
        for (size_t q = r->root_at[t]; q < r->root_at[t + 1]; q++) {
            if (r->roots[q].kind == SPT_BASE || inc->done[q] || !inc->known[q]) continue;
            const uint32_t *b = inc->box + 4 * q;
            if (b[0] < bx0) bx0 = b[0];
            if (b[1] < bz0) bz0 = b[1];
            if (b[2] > bx1) bx1 = b[2];
            if (b[3] > bz1) bz1 = b[3];
        }
        x0 = bx0;
        z0 = bz0;
        x1 = bx1;
        z1 = bz1;
    }
    const uint32_t w = x1 - x0, h = z1 - z0;
    const size_t tn = (size_t)w * h;
    const bool dep = p->deposition > 0;
    if (!spt_io(&r->CODE, false, x0, z0, w, h, r->wc, w) ||
        !spt_io(&r->AREA, false, x0, z0, w, h, r->wa, w) ||
        !spt_io(&r->H, false, x0, z0, w, h, r->wh, w) ||
        (dep && (!spt_io(&r->PG, false, x0, z0, w, h, r->wp, w) ||
                 !spt_io(&r->QG, false, x0, z0, w, h, r->wq2, w))))
        return false;
    /* Donors in the window as lists (counting sort by receiver). A tree that can go lies in the
     * window whole, so a receiver outside it is never one of its samples'. */
    uint32_t *rec = r->wq, *start = r->wd, *don = r->wl;
    for (size_t k = 0; k <= tn; k++)
        start[k] = 0;
    for (size_t k = 0; k < tn; k++) {
        const uint8_t c = r->wc[k];
        rec[k] = UINT32_MAX;
        if (c == 8) continue;
        const int64_t ii = (int64_t)(x0 + k % w) + TRN_D8_DI[c];
        const int64_t jj = (int64_t)(z0 + k / w) + TRN_D8_DJ[c];
        if (ii < x0 || jj < z0 || ii >= x1 || jj >= z1) continue;
        rec[k] = (uint32_t)((size_t)(jj - z0) * w + (size_t)(ii - x0));
        start[rec[k] + 1]++;
    }
    for (size_t k = 0; k < tn; k++)
        start[k + 1] += start[k];
    /* don[start[x] ..) the donors of x; the fill positions in wo's bytes. */
    uint32_t *fill = (uint32_t *)(void *)r->wo;
    memcpy(fill, start, tn * sizeof *fill);
    for (size_t k = 0; k < tn; k++)
        if (rec[k] != UINT32_MAX) don[fill[rec[k]]++] = (uint32_t)k;
    /* The queue: breadth first from each root that can go now. */
    uint32_t *queue = (uint32_t *)(void *)r->wo;
    uint8_t *fresh = r->wb;
    memset(fresh, 0, tn);
    size_t qt = 0;
    for (size_t q = r->root_at[t]; q < r->root_at[t + 1]; q++) {
        spt_root *x = &r->roots[q];
        const size_t k = (size_t)(x->v / NX - z0) * w + (size_t)(x->v % NX - x0);
        if (x->kind == SPT_BASE) {
            if (inc->visited[t]) continue;
        } else {
            if (inc->done[q] || !inc->known[q]) continue;
            r->wh[k] = dep ? sp_dep_height(r->wp[k], r->wq2[k], r->wh[k], inc->hr[q])
                           : spt_incise_one(r, p, cell_area, x->v, r->wc[k], r->wh[k],
                                            inc->hr[q], r->wa[k]);
            inc->done[q] = 1;
        }
        fresh[k] = 1;
        queue[qt++] = (uint32_t)k;
    }
    inc->visited[t] = 1;
    for (size_t qh = 0; qh < qt; qh++) {
        const uint32_t x = queue[qh];
        for (uint32_t d = start[x]; d < start[x + 1]; d++) {
            const uint32_t k = don[d];
            const uint64_t v = ((uint64_t)z0 + k / w) * NX + x0 + k % w;
            r->wh[k] = dep ? sp_dep_height(r->wp[k], r->wq2[k], r->wh[k], r->wh[x])
                           : spt_incise_one(r, p, cell_area, v, r->wc[k], r->wh[k], r->wh[x],
                                            r->wa[k]);
            fresh[k] = 1;
            queue[qt++] = k;
        }
    }
    /* Read whole: the box of each tree left waiting (its samples breadth first after the
     * queue's, which they never meet). */
    if (whole) {
        inc->boxed[t] = 1;
        for (size_t q = r->root_at[t]; q < r->root_at[t + 1]; q++) {
            if (r->roots[q].kind == SPT_BASE || inc->done[q]) continue;
            const uint64_t v = r->roots[q].v;
            uint32_t bx0 = (uint32_t)(v % NX), bz0 = (uint32_t)(v / NX), bx1 = bx0 + 1u,
                     bz1 = bz0 + 1u;
            size_t head = qt, tail = qt;
            queue[tail++] = (uint32_t)((size_t)(bz0 - z0) * w + (bx0 - x0));
            while (head < tail) {
                const uint32_t x = queue[head++];
                const uint32_t i = x0 + x % w, j = z0 + x / w;
                if (i < bx0) bx0 = i;
                if (i + 1u > bx1) bx1 = i + 1u;
                if (j < bz0) bz0 = j;
                if (j + 1u > bz1) bz1 = j + 1u;
                for (uint32_t d = start[x]; d < start[x + 1]; d++)
                    queue[tail++] = don[d];
            }
            uint32_t *b = inc->box + 4 * q;
            b[0] = bx0;
            b[1] = bz0;
            b[2] = bx1;
            b[3] = bz1;
        }
    }
    /* Hand on the new heights of the samples that other tiles' exits drain into. */
    for (size_t f = inc->feed_at[t]; f < inc->feed_at[t + 1]; f++) {
        const uint64_t v = inc->feeds[f].start;
        const uint32_t vi = (uint32_t)(v % NX), vj = (uint32_t)(v / NX);
        if (vi < x0 || vi >= x1 || vj < z0 || vj >= z1) continue;
        const size_t k = (size_t)(vj - z0) * w + (vi - x0);
        if (!fresh[k]) continue;
        const uint32_t q = inc->feeds[f].exit;
        const uint32_t to = spt_tile_of(r, r->roots[q].v);
        if (to < r->first || to >= r->last) {
            if (inc->nout == inc->out_cap) {
                const size_t cap = inc->out_cap ? 2 * inc->out_cap : 256;
                spt_handoff *n = realloc(inc->out, cap * sizeof *n);
                if (!n) return false;
                inc->out = n;
                inc->out_cap = cap;
            }
            inc->out[inc->nout++] = (spt_handoff){q, 0, r->wh[k]};
            continue;
        }
        inc->hr[q] = r->wh[k];
        inc->known[q] = 1;
        if (!queued[to]) {
            queued[to] = 1;
            wake[(*nwake)++ % r->ntiles] = to;
        }
    }
    return !qt || spt_io(&r->H, true, x0, z0, w, h, r->wh, w);
}

/* Deposition's weight F of sample v (code c, count a): deposit_range's operations for it, 0 for
 * a lake or a hillslope. */
static double spt_dep_weight(const spt_run *r, const trn_stream_power_params *p, double cell_area,
                             uint64_t v, uint8_t c, uint32_t a, bool lake)
{
    static const uint8_t cls[9] = {0, 2, 1, 2, 0, 2, 1, 2, 0};
    const sp_state *s = &r->s;
    if (lake || (double)a * cell_area < p->channel_threshold) return 0.0;
    const uint32_t tsize = s->pow_table_size;
    double F = a < tsize ? s->f_table[(size_t)cls[c] * tsize + a]
                         : p->erodibility * p->dt * pow((double)a * cell_area, p->m) / s->dist[c];
    if (r->kmask) {
        const uint32_t i = (uint32_t)(v % s->nx), j = (uint32_t)(v / s->nx);
        const bool ring = r->pad && (i == 0 || j == 0 || i + 1u == s->nx || j + 1u == s->nz);
        const float km =
            ring ? 1.0f : r->kmask[(size_t)(j - r->pad - r->row0) * r->fnx + (i - r->pad)];
        F *= (double)km;
    }
    return F;
}

/* Deposition's first pass across tiles (deposit_range's, donors first), in upstream rounds as
 * Barnes 2017 accumulates across tiles, but with every sum made in deposit_range's order: a
 * sample gathers once all its donors have, pulling them in code order; a donor in another tile
 * is an exit there, which hands what it adds (cp, cq) to the sample it drains into. A tile
 * solves every sample whose donors are all known, keeps P and Q (the sums, then alpha and beta
 * once the receiver has pulled them) in PG and QG (NaN in P: not gathered yet), and wakes the
 * tiles whose samples its exits complete. A tile's first visit reads the whole tile; a later
 * one only the box of the samples still waiting, grown by one sample within the tile for their
 * donors (a waiting sample's receiver in the tile waits too, so the box holds every sample a
 * later visit can gather, and every waiting donor of each: the counts stay whole). */
typedef struct spt_gather {
    double *cp, *cq;       /* per root (exits): what it adds to its receiver's sums */
    uint32_t *feed_of;     /* per root (exits): its inflow task */
    uint32_t *group, *wait; /* per inflow task: the first task into the same sample; there,
                             * how many of that sample's exits are not known yet */
    const spt_task *feeds; /* inflow tasks by tile, sample: exit feeds sample start */
    const size_t *feed_at;
    uint8_t *visited;
    uint32_t *box; /* per visited tile: its waiting samples' box and a sample around it, within
                    * the tile, x0, z0, x1, z1 (exclusive; x0 == x1: none) */
    struct spt_dep_handoff *out; /* for exits into other processes' tiles, sent after a round */
    size_t nout, out_cap;
} spt_gather;

typedef struct spt_dep_handoff {
    uint32_t q, unused;
    double cp, cq;
} spt_dep_handoff;

/* Exit q's contribution becomes known on this process: its sample may be complete. */
static void spt_gather_arrive(spt_run *r, spt_gather *g, uint32_t q, double cp, double cq,
                              uint32_t *wake, size_t *nwake, uint8_t *queued)
{
    g->cp[q] = cp;
    g->cq[q] = cq;
    const uint32_t f = g->feed_of[q], first = g->group[f];
    if (--g->wait[first]) return;
    const uint32_t to = g->feeds[f].tile;
    if (!queued[to]) {
        queued[to] = 1;
        wake[(*nwake)++ % r->ntiles] = to;
    }
}

static bool spt_pass_gather(spt_run *r, const trn_stream_power_params *p, double cell_area,
                            uint32_t t, spt_gather *g, uint32_t *wake, size_t *nwake,
                            uint8_t *queued)
{
    uint32_t x0, z0, x1, z1, wx0, wz0, ww, wh;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t tx0 = x0, tz0 = z0, tx1 = x1, tz1 = z1;
    uint32_t *box = g->box + 4u * (size_t)t;
    if (g->visited[t]) {
        if (box[0] == box[2]) return true; /* nothing waits */
        x0 = box[0];
        z0 = box[1];
        x1 = box[2];
        z1 = box[3];
    }
    spt_halo(r, x0, z0, x1, z1, &wx0, &wz0, &ww, &wh);
    const uint32_t w = x1 - x0, h = z1 - z0, NX = r->s.nx, NZ = r->s.nz;
    const size_t tn = (size_t)w * h;
    double *P = r->wp, *Q = r->wq2;
    if (!spt_io(&r->CODE, false, x0, z0, w, h, r->wc, w) ||
        !spt_io(&r->AREA, false, x0, z0, w, h, r->wa, w) ||
        !spt_io(&r->H, false, wx0, wz0, ww, wh, r->wh, ww))
        return false;
    if (g->visited[t]) {
        if (!spt_io(&r->PG, false, x0, z0, w, h, P, w) ||
            !spt_io(&r->QG, false, x0, z0, w, h, Q, w))
            return false;
    } else {
        for (size_t k = 0; k < tn; k++)
            P[k] = NAN;
    }
    g->visited[t] = 1;
    /* Each sample's donors not gathered yet, in the tile and beyond it. */
    uint32_t *rec = r->wq, *pend = r->wd, *queue = r->wl, *fl = r->wf;
    for (size_t k = 0; k < tn; k++) {
        pend[k] = 0;
        fl[k] = UINT32_MAX;
    }
    for (size_t k = 0; k < tn; k++) {
        const uint8_t c = r->wc[k];
        rec[k] = UINT32_MAX;
        if (c == 8) continue;
        const int64_t ii = (int64_t)(x0 + k % w) + TRN_D8_DI[c];
        const int64_t jj = (int64_t)(z0 + k / w) + TRN_D8_DJ[c];
        if (ii < x0 || jj < z0 || ii >= x1 || jj >= z1) continue;
        rec[k] = (uint32_t)((size_t)(jj - z0) * w + (size_t)(ii - x0));
        if (isnan(P[k])) pend[rec[k]]++;
    }
    for (size_t f = g->feed_at[t]; f < g->feed_at[t + 1]; f++) {
        if (g->group[f] != f) continue;
        const uint64_t v = g->feeds[f].start;
        /* Outside the box: gathered already (a waiting sample lies in it). */
        if (v % NX < x0 || v % NX >= x1 || v / NX < z0 || v / NX >= z1) continue;
        const size_t k = (size_t)(v / NX - z0) * w + (size_t)(v % NX - x0);
        fl[k] = (uint32_t)f;
        pend[k] += g->wait[f];
    }
    size_t qt = 0;
    for (size_t k = 0; k < tn; k++)
        if (isnan(P[k]) && !pend[k]) queue[qt++] = (uint32_t)k;
    const double G = p->deposition;
#define SPT_H(gi, gj) r->wh[(size_t)((gj) - wz0) * ww + ((gi) - wx0)]
    for (size_t qh = 0; qh < qt; qh++) {
        const uint32_t k = queue[qh];
        const uint32_t i = x0 + k % w, j = z0 + k / w;
        const uint64_t v = (uint64_t)j * NX + i;
        const double zv = SPT_H(i, j);
        double pv = 0.0, qv = 0.0;
        for (int d = 0; d < 8; d++) {
            const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
            if (ii < 0 || jj < 0 || ii >= NX || jj >= NZ) continue;
            double cp, cq;
            if (ii >= x0 && jj >= z0 && ii < x1 && jj < z1) {
                const size_t kk = (size_t)(jj - z0) * w + (size_t)(ii - x0);
                const uint8_t c = r->wc[kk];
                if (c != ((d + 4) & 7)) continue;
                const double z0k = SPT_H((uint32_t)ii, (uint32_t)jj);
                const bool lake = z0k <= zv;
                const uint32_t a = r->wa[kk];
                const double F = spt_dep_weight(r, p, cell_area, (uint64_t)(jj * NX + ii), c, a,
                                                lake);
                sp_dep_link(G, F, a, lake, z0k, P[kk], Q[kk], &P[kk], &Q[kk], &cp, &cq);
            } else {
                /* An exit of the neighbouring tile when it drains here. */
                const uint64_t nb = (uint64_t)(jj * NX + ii);
                uint32_t f = fl[k];
                if (f == UINT32_MAX) continue;
                while (f < g->feed_at[t + 1] && g->feeds[f].start == v &&
                       r->roots[g->feeds[f].exit].v != nb)
                    f++;
                if (f == g->feed_at[t + 1] || g->feeds[f].start != v) continue;
                cp = g->cp[g->feeds[f].exit];
                cq = g->cq[g->feeds[f].exit];
            }
            pv += cp;
            qv += cq;
        }
        const uint8_t c = r->wc[k];
        if (rec[k] != UINT32_MAX || c == 8) {
            P[k] = pv;
            Q[k] = qv;
            if (rec[k] != UINT32_MAX && --pend[rec[k]] == 0) queue[qt++] = rec[k];
            continue;
        }
        /* An exit: finished here, its contribution to the sample it drains into. */
        const uint64_t to = (uint64_t)((int64_t)v + r->s.off[c]);
        const bool lake = zv <= SPT_H((uint32_t)(to % NX), (uint32_t)(to / NX));
        const uint32_t a = r->wa[k];
        const double F = spt_dep_weight(r, p, cell_area, v, c, a, lake);
        double cp, cq;
        sp_dep_link(G, F, a, lake, zv, pv, qv, &P[k], &Q[k], &cp, &cq);
        const spt_root *x = spt_root_find(r, t, v);
        if (!x) return false;
        const uint32_t q = (uint32_t)(x - r->roots), tt = spt_tile_of(r, to);
        if (tt >= r->first && tt < r->last) {
            spt_gather_arrive(r, g, q, cp, cq, wake, nwake, queued);
            continue;
        }
        if (g->nout == g->out_cap) {
            const size_t cap = g->out_cap ? 2 * g->out_cap : 256;
            spt_dep_handoff *n = realloc(g->out, cap * sizeof *n);
            if (!n) return false;
            g->out = n;
            g->out_cap = cap;
        }
        g->out[g->nout++] = (spt_dep_handoff){q, 0, cp, cq};
    }
#undef SPT_H
    /* The box the next visit reads: the samples still waiting, and a sample around them. */
    uint32_t bx0 = x1, bz0 = z1, bx1 = x0, bz1 = z0;
    for (size_t k = 0; k < tn; k++) {
        if (!isnan(P[k])) continue;
        const uint32_t i = x0 + (uint32_t)(k % w), j = z0 + (uint32_t)(k / w);
        if (i < bx0) bx0 = i;
        if (i + 1u > bx1) bx1 = i + 1u;
        if (j < bz0) bz0 = j;
        if (j + 1u > bz1) bz1 = j + 1u;
    }
    if (bx0 < bx1) {
        box[0] = bx0 > tx0 ? bx0 - 1u : tx0;
        box[1] = bz0 > tz0 ? bz0 - 1u : tz0;
        box[2] = bx1 < tx1 ? bx1 + 1u : tx1;
        box[3] = bz1 < tz1 ? bz1 + 1u : tz1;
    } else {
        box[0] = box[2] = tx0;
        box[1] = box[3] = tz0;
    }
    return spt_io(&r->PG, true, x0, z0, w, h, P, w) && spt_io(&r->QG, true, x0, z0, w, h, Q, w);
}

/* Diffusion substeps run this many at a time on a tile grown by as many samples: one read and
 * one write of the heights for them all. */
#define SPT_SUBSTEPS 8u

/* subs diffusion substeps of a tile, H to H2, on the tile grown by subs samples (cut at the
 * grid's edge): each substep, the walls take the heights of the samples inside them, the border
 * and base level keep theirs, every other sample diffuse_rows's operations on the previous
 * substep's values. A window sample next to the window's cut edge has no value for a
 * neighbour there and gets a wrong one, which moves one sample inward a substep: the tile,
 * subs samples in, never sees it. */
static bool spt_pass_diffuse(spt_run *r, uint32_t t, uint32_t subs, double ax, double az,
                             double kdt)
{
    const uint32_t NX = r->s.nx, NZ = r->s.nz;
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t wx0 = x0 > subs ? x0 - subs : 0, wz0 = z0 > subs ? z0 - subs : 0;
    const uint32_t wx1 = x1 + subs < NX ? x1 + subs : NX, wz1 = z1 + subs < NZ ? z1 + subs : NZ;
    const uint32_t ww = wx1 - wx0, wh = wz1 - wz0;
    double *a = r->wd2, *b = r->wo2;
    if (!spt_io(&r->H, false, wx0, wz0, ww, wh, a, ww) ||
        !spt_io(&r->BASE, false, wx0, wz0, ww, wh, r->wb2, ww))
        return false;
    /* The factors over the whole window, the halo's from the neighbours' rock: the flux across
     * the tile's edge takes the mean of the factors on both sides. Computed as the whole grid
     * does (the ring outside the field: factor 1). */
    float *f = r->wf2;
    if (f)
        for (uint32_t j = 0; j < wh; j++)
            for (uint32_t i = 0; i < ww; i++) {
                const uint32_t gi = wx0 + i, gj = wz0 + j;
                const bool ring = r->pad && (gi == 0 || gj == 0 || gi + 1u == NX || gj + 1u == NZ);
                const float km =
                    ring ? 1.0f
                         : r->kmask[(size_t)(gj - r->pad - r->row0) * r->fnx + (gi - r->pad)];
                f[(size_t)j * ww + i] = (float)pow((double)km, r->rock);
            }
    diffuse_row_fn row_fn = diffuse_row_default;
#if HAVE_AVX2_VARIANT
    if (r->s.avx2) row_fn = diffuse_row_avx2;
#endif
    for (uint32_t it = 0; it < subs; it++) {
        for (uint32_t j = 0; j < wh; j++)
            for (uint32_t i = 0; i < ww; i++) {
                const size_t k = (size_t)j * ww + i;
                if (!(r->wb2[k] & 2u)) continue;
                const uint32_t gi = wx0 + i, gj = wz0 + j;
                const uint32_t ci = gi < 1u ? 1u : gi > NX - 2u ? NX - 2u : gi;
                const uint32_t cj = gj < 1u ? 1u : gj > NZ - 2u ? NZ - 2u : gj;
                if (ci < wx0 || ci >= wx1 || cj < wz0 || cj >= wz1) continue;
                a[k] = a[(size_t)(cj - wz0) * ww + (ci - wx0)];
            }
        for (uint32_t j = 0; j < wh; j++) {
            const uint32_t gj = wz0 + j;
            double *out = b + (size_t)j * ww;
            const double *mid = a + (size_t)j * ww;
            const uint8_t *base = r->wb2 + (size_t)j * ww;
            if (gj == 0 || gj + 1u == NZ || j == 0 || j + 1u == wh) {
                memcpy(out, mid, ww * sizeof *out);
                continue;
            }
            if (ww >= 3u) {
                if (f) {
                    const float *fm = f + (size_t)j * ww;
                    diffuse_row_varied(mid - ww, mid, mid + ww, fm - ww, fm, fm + ww, out, ww, ax,
                                       az, kdt);
                } else {
                    row_fn(mid - ww, mid, mid + ww, out, ww, ax, az, kdt);
                }
            }
            out[0] = mid[0];
            out[ww - 1u] = mid[ww - 1u];
            for (uint32_t i = 0; i < ww; i++)
                if (base[i] & 1u) out[i] = mid[i];
        }
        double *swap = a;
        a = b;
        b = swap;
    }
    return spt_io(&r->H2, true, x0, z0, x1 - x0, z1 - z0, a + (size_t)(z0 - wz0) * ww + (x0 - wx0),
                  ww);
}

/* The walls back to SP_WALL and the border following the land (sp_follow_border), for the
 * tiles on the grid's edge. */
static bool spt_pass_border(spt_run *r, const trn_stream_power_params *p, uint32_t t)
{
    const uint32_t NX = r->s.nx, NZ = r->s.nz;
    uint32_t x0, z0, x1, z1, wx0, wz0, ww, wh;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    if (!(x0 == 0 || z0 == 0 || x1 == NX || z1 == NZ)) return true;
    spt_halo(r, x0, z0, x1, z1, &wx0, &wz0, &ww, &wh);
    if (!spt_io(&r->H, false, wx0, wz0, ww, wh, r->wh, ww) ||
        !spt_io(&r->BASE, false, wx0, wz0, ww, wh, r->wb, ww))
        return false;
    for (size_t k = 0; k < (size_t)ww * wh; k++)
        if (r->wb[k] & 2u) r->wh[k] = SP_WALL;
    const bool sea = isfinite(p->sea_level);
    double *out = r->wo;
    const uint32_t w = x1 - x0;
    for (uint32_t j = z0; j < z1; j++)
        for (uint32_t i = x0; i < x1; i++) {
            const size_t k = (size_t)(j - wz0) * ww + (i - wx0);
            double hk = r->wh[k];
            out[(size_t)(j - z0) * w + (i - x0)] = hk;
            if (p->fixed_border || !(i == 0 || j == 0 || i == NX - 1u || j == NZ - 1u)) continue;
            if (sea && hk <= p->sea_level) continue;
            if (hk >= SP_WALL) continue;
            for (int d = 0; d < 8; d++) {
                const int64_t ii = (int64_t)i + TRN_D8_DI[d], jj = (int64_t)j + TRN_D8_DJ[d];
                if (ii <= 0 || jj <= 0 || ii >= (int64_t)NX - 1 || jj >= (int64_t)NZ - 1) continue;
                const double hn = r->wh[(size_t)(jj - wz0) * ww + (size_t)(ii - wx0)];
                if (hn < hk) hk = hn;
            }
            out[(size_t)(j - z0) * w + (i - x0)] = hk;
        }
    return spt_io(&r->H, true, x0, z0, w, z1 - z0, out, w);
}

/* ---- Across processes: the exchanges between the passes (no-ops on one process) ---- */

/* Whether every process's ok is true (a collective). A process that failed keeps its own
 * message; the others learn that one did. */
static bool spt_agree(spt_run *r, bool ok)
{
    if (!r->comm) return ok;
    trn_error scratch = {0};
    const trn_status st = trn_comm_agree(r->comm, ok ? TRN_OK : TRN_ERR_IO, &scratch);
    if (ok && st != TRN_OK) r->peer_failed = true;
    return ok && st == TRN_OK;
}

/* Bytes received since *mark into one of the stats' counters; *mark moves on. */
static void spt_count(spt_run *r, int what, uint64_t *mark_sent, uint64_t *mark_received)
{
    uint64_t sent = 0, received = 0;
    trn_comm_traffic(r->comm, &sent, &received);
    if (r->stats) {
        r->stats->sent[what] += sent - *mark_sent;
        r->stats->received[what] += received - *mark_received;
    }
    *mark_sent = sent;
    *mark_received = received;
}

/* The frame of tile t that is width samples deep (all of it where the tile is narrower), as
 * up to four windows (x0, z0, w, h): the bottom rows, the top rows, then the left and right
 * columns of the rows between. Returns how many. */
static int spt_frame(const spt_run *r, uint32_t t, uint32_t width, uint32_t win[4][4])
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const uint32_t w = x1 - x0, h = z1 - z0;
    const uint32_t bot = width < h ? width : h, top = width < h - bot ? width : h - bot;
    const uint32_t mid = h - bot - top;
    const uint32_t left = width < w ? width : w, right = width < w - left ? width : w - left;
    const uint32_t all[4][4] = {{x0, z0, w, bot},
                                {x0, z1 - top, w, top},
                                {x0, z0 + bot, left, mid},
                                {x1 - right, z0 + bot, right, mid}};
    int n = 0;
    for (int k = 0; k < 4; k++)
        if (all[k][2] && all[k][3]) memcpy(win[n++], all[k], sizeof all[k]);
    return n;
}

/* The rows and columns of tiles a0..a1, b0..b1 within width samples of tile t (t among them).
 * The relation is symmetric (the gap between two tiles' boxes is at most width both ways), so
 * the owner of t and the owner of a tile in this range agree on which frames cross. */
static void spt_near(const spt_run *r, uint32_t t, uint32_t width, uint32_t *a0, uint32_t *b0,
                     uint32_t *a1, uint32_t *b1)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    *a0 = (x0 > width ? x0 - width : 0) / r->T;
    *b0 = (z0 > width ? z0 - width : 0) / r->T;
    *a1 = ((x1 + width < r->s.nx ? x1 + width : r->s.nx) - 1u) / r->T;
    *b1 = ((z1 + width < r->s.nz ? z1 + width : r->s.nz) - 1u) / r->T;
}

/* The bytes of tile t's frame width samples deep in grid g. */
static size_t spt_frame_bytes(const spt_run *r, const spt_grid *g, uint32_t t, uint32_t width)
{
    uint32_t win[4][4];
    const int n = spt_frame(r, t, width, win);
    size_t bytes = 0;
    for (int k = 0; k < n; k++)
        bytes += (size_t)win[k][2] * win[k][3] * g->elem;
    return bytes;
}

/* spt_exchange through the transport's point-to-point blocks: each of this process's tiles'
 * frames goes only to the processes owning a tile within width of it (those that read it),
 * in tile order; from each process, the frames of its tiles within width of one of this
 * process's, in tile order. What each process writes is what the all-gather wrote: the same
 * frames of the same tiles. */
static bool spt_exchange_p2p(spt_run *r, spt_grid *g, uint32_t width, bool ok)
{
    const int P = trn_comm_size(r->comm);
    uint64_t *scount = calloc(2u * (size_t)P, sizeof *scount);
    uint8_t **sbuf = calloc(2u * (size_t)P, sizeof *sbuf);
    uint8_t *mark = malloc((size_t)P);
    ok = ok && scount && sbuf && mark;
    uint64_t *rcount = scount ? scount + P : NULL;
    uint8_t **rbuf = sbuf ? sbuf + P : NULL;
    /* The tiles this process reads (need) and, per process, the bytes either way. */
    if (ok) memset(r->need, 0, r->ntiles);
    for (uint32_t t = r->first; t < r->last && ok; t++) {
        uint32_t a0, b0, a1, b1;
        spt_near(r, t, width, &a0, &b0, &a1, &b1);
        memset(mark, 0, (size_t)P);
        for (uint32_t b = b0; b <= b1; b++)
            for (uint32_t a = a0; a <= a1; a++) {
                const uint32_t u = b * r->tnx + a;
                if (u >= r->first && u < r->last) continue;
                r->need[u] = 1;
                mark[trn_comm_tile_owner(r->comm, u, r->ntiles)] = 1;
            }
        const size_t fb = spt_frame_bytes(r, g, t, width);
        for (int q = 0; q < P; q++)
            if (mark[q]) scount[q] += fb;
    }
    for (uint32_t u = 0; u < r->ntiles && ok; u++)
        if (r->need[u])
            rcount[trn_comm_tile_owner(r->comm, u, r->ntiles)] += spt_frame_bytes(r, g, u, width);
    for (int q = 0; q < P && ok; q++) {
        if (scount[q]) ok = (sbuf[q] = malloc((size_t)scount[q])) != NULL;
        if (ok && rcount[q]) ok = (rbuf[q] = malloc((size_t)rcount[q])) != NULL;
    }
    /* Each frame read once, copied to every process that reads it. */
    uint64_t *at = ok ? calloc((size_t)P, sizeof *at) : NULL;
    uint8_t *frame = NULL;
    ok = ok && at;
    for (uint32_t t = r->first; t < r->last && ok; t++) {
        uint32_t a0, b0, a1, b1, win[4][4];
        spt_near(r, t, width, &a0, &b0, &a1, &b1);
        memset(mark, 0, (size_t)P);
        for (uint32_t b = b0; b <= b1; b++)
            for (uint32_t a = a0; a <= a1; a++) {
                const uint32_t u = b * r->tnx + a;
                if (u < r->first || u >= r->last)
                    mark[trn_comm_tile_owner(r->comm, u, r->ntiles)] = 1;
            }
        int first = -1;
        for (int q = 0; q < P && first < 0; q++)
            if (mark[q]) first = q;
        if (first < 0) continue;
        frame = sbuf[first] + at[first];
        const int n = spt_frame(r, t, width, win);
        size_t fb = 0;
        for (int k = 0; k < n && ok; k++) {
            ok = spt_io(g, false, win[k][0], win[k][1], win[k][2], win[k][3], frame + fb,
                        win[k][2]);
            fb += (size_t)win[k][2] * win[k][3] * g->elem;
        }
        for (int q = 0; q < P; q++)
            if (mark[q]) {
                if (q != first) memcpy(sbuf[q] + at[q], frame, fb);
                at[q] += fb;
            }
    }
    free(at);
    free(mark);
    ok = spt_agree(r, ok) &&
         trn_comm_exchange(r->comm, (const void *const *)sbuf, scount, (void *const *)rbuf,
                           rcount, NULL) == TRN_OK;
    /* The frames received, in tile order from each process. */
    uint64_t *got = ok ? calloc((size_t)P, sizeof *got) : NULL;
    ok = ok && got;
    for (uint32_t u = 0; u < r->ntiles && ok; u++) {
        if (!r->need[u]) continue;
        const int q = trn_comm_tile_owner(r->comm, u, r->ntiles);
        uint32_t win[4][4];
        const int n = spt_frame(r, u, width, win);
        for (int k = 0; k < n && ok; k++) {
            ok = spt_io(g, true, win[k][0], win[k][1], win[k][2], win[k][3], rbuf[q] + got[q],
                        win[k][2]);
            got[q] += (uint64_t)win[k][2] * win[k][3] * g->elem;
        }
    }
    free(got);
    for (int q = 0; sbuf && q < 2 * P; q++)
        free(sbuf[q]);
    free(sbuf);
    free(scount);
    return ok;
}

/* Every tile's frame width samples deep, from its process to the processes whose tiles read
 * it (the halo: receivers, passes and the border read one sample around a tile, diffusion
 * up to SPT_SUBSTEPS). With point-to-point blocks each frame goes to those processes only
 * (spt_exchange_p2p); else each process sends its tiles' frames, in tile order, to all (an
 * all-gather) and writes in the frames of the other processes' tiles within width of its
 * own. */
static bool spt_exchange(spt_run *r, spt_grid *g, uint32_t width, bool ok)
{
    if (!r->comm) return ok;
    uint64_t ms = 0, mr = 0;
    if (trn_comm_can_exchange(r->comm)) {
        trn_comm_traffic(r->comm, &ms, &mr);
        ok = spt_exchange_p2p(r, g, width, ok);
        spt_count(r, 0, &ms, &mr);
        return ok;
    }
    trn_comm_traffic(r->comm, &ms, &mr);
    uint32_t win[4][4];
    size_t bytes = 0;
    for (uint32_t t = r->first; t < r->last; t++) {
        const int n = spt_frame(r, t, width, win);
        for (int k = 0; k < n; k++)
            bytes += (size_t)win[k][2] * win[k][3] * g->elem;
    }
    uint8_t *mine = ok ? malloc(bytes ? bytes : 1) : NULL;
    ok = ok && mine;
    size_t at = 0;
    for (uint32_t t = r->first; t < r->last && ok; t++) {
        const int n = spt_frame(r, t, width, win);
        for (int k = 0; k < n && ok; k++) {
            ok = spt_io(g, false, win[k][0], win[k][1], win[k][2], win[k][3], mine + at, win[k][2]);
            at += (size_t)win[k][2] * win[k][3] * g->elem;
        }
    }
    void *all = NULL;
    ok = spt_agree(r, ok) &&
         trn_comm_allgather(r->comm, mine, ok ? bytes : 0, &all, NULL, NULL) == TRN_OK;
    free(mine);
    if (ok) {
        /* The tiles this process reads: those within width of one of its own. */
        memset(r->need, 0, r->ntiles);
        for (uint32_t t = r->first; t < r->last; t++) {
            uint32_t x0, z0, x1, z1;
            spt_tile_box(r, t, &x0, &z0, &x1, &z1);
            const uint32_t a0 = (x0 > width ? x0 - width : 0) / r->T;
            const uint32_t b0 = (z0 > width ? z0 - width : 0) / r->T;
            const uint32_t a1 = ((x1 + width < r->s.nx ? x1 + width : r->s.nx) - 1u) / r->T;
            const uint32_t b1 = ((z1 + width < r->s.nz ? z1 + width : r->s.nz) - 1u) / r->T;
            for (uint32_t b = b0; b <= b1; b++)
                for (uint32_t a = a0; a <= a1; a++)
                    r->need[b * r->tnx + a] = 1;
        }
        at = 0;
        for (uint32_t t = 0; t < r->ntiles && ok; t++) {
            const int n = spt_frame(r, t, width, win);
            const bool put = r->need[t] && (t < r->first || t >= r->last);
            for (int k = 0; k < n && ok; k++) {
                if (put)
                    ok = spt_io(g, true, win[k][0], win[k][1], win[k][2], win[k][3],
                                (uint8_t *)all + at, win[k][2]);
                at += (size_t)win[k][2] * win[k][3] * g->elem;
            }
        }
    }
    free(all);
    spt_count(r, 0, &ms, &mr);
    return ok;
}

/* The roots and perimeters of every tile, from the processes that made them (each made its
 * own tiles' after resetting nroots): afterwards every process holds the whole forest's roots
 * as one process would, in tile order. */
static bool spt_share_roots(spt_run *r, bool ok)
{
    if (!r->comm) return ok;
    uint64_t ms = 0, mr = 0;
    trn_comm_traffic(r->comm, &ms, &mr);
    const uint32_t own = r->last - r->first;
    uint32_t *cnt = malloc((own ? own : 1) * sizeof *cnt);
    ok = ok && cnt;
    for (uint32_t k = 0; k < own && ok; k++)
        cnt[k] = (uint32_t)(r->root_at[r->first + k + 1] - r->root_at[r->first + k]);
    void *counts = NULL, *roots = NULL, *perim = NULL;
    ok = spt_agree(r, ok) &&
         trn_comm_allgather(r->comm, cnt, (uint64_t)own * sizeof *cnt, &counts, NULL, NULL) ==
             TRN_OK &&
         trn_comm_allgather(r->comm, r->roots, (uint64_t)r->nroots * sizeof *r->roots, &roots, NULL,
                            NULL) == TRN_OK &&
         trn_comm_allgather(r->comm, r->perim + r->perim_at[r->first],
                            (uint64_t)(r->perim_at[r->last] - r->perim_at[r->first]) *
                                sizeof *r->perim,
                            &perim, NULL, NULL) == TRN_OK;
    free(cnt);
    if (ok) {
        const uint32_t *c = counts;
        r->root_at[0] = 0;
        for (uint32_t t = 0; t < r->ntiles; t++)
            r->root_at[t + 1] = r->root_at[t] + c[t];
        /* Each process's own were fewer; every process finds the same total. */
        if (r->root_at[r->ntiles] > SPT_MAX_ROOTS) {
            r->too_many = true;
            ok = false;
        }
    }
    if (ok) {
        free(r->roots);
        r->roots = roots;
        roots = NULL;
        r->nroots = r->root_cap = r->root_at[r->ntiles];
        memcpy(r->perim, perim, r->perim_at[r->ntiles] * sizeof *r->perim);
    }
    free(counts);
    free(roots);
    free(perim);
    spt_count(r, 1, &ms, &mr);
    return ok;
}

/* The sum over the processes of a count (a collective; 0 where it fails). */
static bool spt_sum(spt_run *r, bool ok, uint64_t *value)
{
    if (!r->comm) return ok;
    void *all = NULL;
    ok = spt_agree(r, ok) &&
         trn_comm_allgather(r->comm, value, sizeof *value, &all, NULL, NULL) == TRN_OK;
    uint64_t sum = 0;
    for (int k = 0; ok && k < trn_comm_size(r->comm); k++) {
        uint64_t v;
        memcpy(&v, (uint8_t *)all + (size_t)k * sizeof v, sizeof v);
        sum += v;
    }
    free(all);
    *value = ok ? sum : 0;
    return ok;
}

/* Process 0's tasks (*tasks, *ntasks there) to every process. */
static bool spt_share_tasks(spt_run *r, bool ok, spt_task **tasks, size_t *ntasks)
{
    if (!r->comm) return ok;
    uint64_t ms = 0, mr = 0;
    trn_comm_traffic(r->comm, &ms, &mr);
    uint64_t bytes = trn_comm_rank(r->comm) == 0 ? (uint64_t)*ntasks * sizeof **tasks : 0;
    if (trn_comm_rank(r->comm) != 0) {
        free(*tasks);
        *tasks = NULL;
        *ntasks = 0;
    }
    void *data = *tasks;
    ok = spt_agree(r, ok) && trn_comm_broadcast(r->comm, &data, &bytes, NULL) == TRN_OK;
    if (ok) {
        *tasks = data;
        *ntasks = (size_t)(bytes / sizeof **tasks);
    }
    spt_count(r, 1, &ms, &mr);
    return ok;
}

/* Kruskal's tree over every process's lowest passes, on process 0 (each process's table
 * holds the pairs met from its own tiles; the lowest of each pair under edge_cmp's strict
 * order is the same whoever found it), its carving tasks to every process. */
static bool spt_route_shared(spt_run *r, bool ok, spt_table *tab, uint32_t nb, spt_task **tasks,
                             size_t *ntasks)
{
    *tasks = NULL;
    *ntasks = 0;
    if (!r->comm) return ok && spt_route(r, tab, nb, tasks, ntasks);
    uint64_t ms = 0, mr = 0;
    trn_comm_traffic(r->comm, &ms, &mr);
    spt_edge *mine = malloc((tab->count ? tab->count : 1) * sizeof *mine);
    ok = ok && mine;
    size_t c = 0;
    for (size_t k = 0; ok && k < tab->cap; k++)
        if (tab->keys[k] != UINT64_MAX) mine[c++] = tab->edges[k];
    void *all = NULL;
    uint64_t *counts = NULL;
    ok = spt_agree(r, ok) &&
         trn_comm_gather(r->comm, mine, (uint64_t)c * sizeof *mine, &all, &counts, NULL) == TRN_OK;
    free(mine);
    if (ok && trn_comm_rank(r->comm) == 0) {
        uint64_t total = 0;
        for (int k = 0; k < trn_comm_size(r->comm); k++)
            total += counts[k];
        const spt_edge *e = all;
        for (size_t k = 0; k < (size_t)(total / sizeof *e) && ok; k++) {
            const uint32_t a = e[k].ba, b = e[k].bb;
            const uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
            ok = spt_table_put(tab, key, &e[k]);
        }
        ok = ok && spt_route(r, tab, nb, tasks, ntasks);
    }
    free(all);
    free(counts);
    spt_count(r, 1, &ms, &mr);
    return spt_share_tasks(r, ok, tasks, ntasks);
}

/* The counts that cross tiles: each exit's count (the samples draining through it in its tile)
 * added down the chain of exits it drains through (in an order with each exit after every exit
 * draining into it: whole counts, so the order of the additions does not matter), then one
 * inflow task per exit: its receiver in the next tile gets its total. On process 0, the tasks
 * to every process; tasks sorted by tile, task_at[t] the first of tile t. */
static bool spt_inflows(spt_run *r, bool ok, spt_task **tasks_out, size_t *ntasks_out,
                        size_t *task_at)
{
    spt_task *tasks = NULL;
    size_t ntasks = 0;
    const bool solve = !r->comm || trn_comm_rank(r->comm) == 0;
    uint32_t *down = NULL, *deg = NULL, *order = NULL;
    if (ok && solve) {
        down = malloc((r->nroots ? r->nroots : 1) * sizeof *down);
        deg = calloc(r->nroots ? r->nroots : 1, sizeof *deg);
        order = malloc((r->nroots ? r->nroots : 1) * sizeof *order);
        tasks = malloc((r->nroots ? r->nroots : 1) * sizeof *tasks);
        ok = down && deg && order && tasks;
    }
    if (ok && solve) {
        for (size_t q = 0; q < r->nroots; q++) {
            const spt_root *x = &r->roots[q];
            down[q] = UINT32_MAX;
            if (x->kind != SPT_EXIT) continue;
            const spt_root *y = spt_root_of(r, x->target);
            if (y->kind == SPT_EXIT) {
                down[q] = (uint32_t)(y - r->roots);
                deg[down[q]]++;
            }
        }
        size_t qt = 0;
        for (size_t q = 0; q < r->nroots; q++)
            if (r->roots[q].kind == SPT_EXIT && !deg[q]) order[qt++] = (uint32_t)q;
        for (size_t qh = 0; qh < qt; qh++) {
            const uint32_t q = order[qh];
            if (down[q] != UINT32_MAX) {
                r->roots[down[q]].count =
                    spt_count_add(r->roots[down[q]].count, r->roots[q].count);
                if (--deg[down[q]] == 0) order[qt++] = down[q];
            }
        }
        /* Each exit's count arrives at its receiver in the next tile. */
        for (size_t q = 0; q < r->nroots; q++) {
            const spt_root *x = &r->roots[q];
            if (x->kind != SPT_EXIT) continue;
            tasks[ntasks++] =
                (spt_task){x->target, x->count, spt_tile_of(r, x->target), (uint32_t)q};
        }
        qsort(tasks, ntasks, sizeof *tasks, spt_task_cmp);
    }
    free(down);
    free(deg);
    free(order);
    ok = spt_share_tasks(r, ok, &tasks, &ntasks);
    if (ok)
        for (uint32_t t = 0, q = 0; t <= r->ntiles; t++) {
            while (q < ntasks && tasks[q].tile < t)
                q++;
            task_at[t] = q;
        }
    *tasks_out = tasks;
    *ntasks_out = ntasks;
    return ok;
}

/* A pass over this process's tiles that visits each as what its exits wait for becomes known:
 * visit runs one tile (it may queue others), arrive takes one handoff from another process
 * (handoff bytes each, queued by the pass in *out, *nout) and queues the tile it is for. */
typedef struct spt_rounds {
    bool (*visit)(spt_run *r, void *pass, uint32_t t, uint32_t *wake, size_t *nw, uint8_t *queued);
    void (*arrive)(spt_run *r, void *pass, const void *h, uint32_t *wake, size_t *nw,
                   uint8_t *queued);
    /* The handoffs queued for other processes and their count (the driver clears it). */
    void (*outbox)(void *pass, const void **out, size_t **nout);
    void *pass;
    size_t handoff;
    uint32_t *rounds; /* counts the rounds that carried any handoff (NULL: not counted) */
} spt_rounds;

/* First in first out over this process's tiles; across processes in rounds: each process runs
 * until none of its tiles can go, then every process's handoffs for other processes' tiles are
 * all-gathered, and the rounds end when no process has any to send. */
static bool spt_rounds_run(spt_run *r, const spt_rounds *d, uint32_t *wake, uint8_t *queued,
                           bool ok)
{
    size_t nw = 0, head = 0;
    for (uint32_t t = r->first; t < r->last && ok; t++) {
        wake[nw++] = t;
        queued[t] = 1;
    }
    for (;;) {
        /* A ring of the tiles to visit, each in it at most once: a tile's exits that become
         * known while it waits are solved in one visit. */
        while (head < nw && ok) {
            const uint32_t t = wake[head++ % r->ntiles];
            queued[t] = 0;
            ok = d->visit(r, d->pass, t, wake, &nw, queued);
        }
        if (!r->comm) return ok;
        uint64_t ms = 0, mr = 0;
        trn_comm_traffic(r->comm, &ms, &mr);
        void *all = NULL;
        uint64_t *counts = NULL;
        const void *out = NULL;
        size_t *nout = NULL;
        d->outbox(d->pass, &out, &nout);
        ok = spt_agree(r, ok) &&
             trn_comm_allgather(r->comm, out, (uint64_t)(*nout * d->handoff), &all, &counts,
                                NULL) == TRN_OK;
        *nout = 0;
        uint64_t total = 0;
        for (int k = 0; ok && k < trn_comm_size(r->comm); k++)
            total += counts[k];
        for (size_t k = 0; ok && k < (size_t)(total / d->handoff); k++)
            d->arrive(r, d->pass, (const uint8_t *)all + k * d->handoff, wake, &nw, queued);
        free(all);
        free(counts);
        spt_count(r, 2, &ms, &mr);
        if (d->rounds && ok && total) (*d->rounds)++;
        if (!ok || !total) return ok;
    }
}

typedef struct spt_incise_pass {
    const trn_stream_power_params *p;
    double cell_area;
    spt_incision *inc;
} spt_incise_pass;

static bool spt_incise_visit(spt_run *r, void *pass, uint32_t t, uint32_t *wake, size_t *nw,
                             uint8_t *queued)
{
    spt_incise_pass *ip = pass;
    return spt_pass_incise(r, ip->p, ip->cell_area, t, ip->inc, wake, nw, queued);
}

static void spt_incise_outbox(void *pass, const void **out, size_t **nout)
{
    spt_incision *inc = ((spt_incise_pass *)pass)->inc;
    *out = inc->out;
    *nout = &inc->nout;
}

/* A new height for an exit draining into one of this process's tiles. */
static void spt_incise_arrive(spt_run *r, void *pass, const void *handoff, uint32_t *wake,
                              size_t *nw, uint8_t *queued)
{
    spt_incision *inc = ((spt_incise_pass *)pass)->inc;
    spt_handoff h;
    memcpy(&h, handoff, sizeof h);
    const uint32_t to = spt_tile_of(r, r->roots[h.q].v);
    if (to < r->first || to >= r->last) return;
    inc->hr[h.q] = h.hr;
    inc->known[h.q] = 1;
    if (!queued[to]) {
        queued[to] = 1;
        wake[(*nw)++ % r->ntiles] = to;
    }
}

/* Incision over this process's tiles, in rounds (spt_rounds_run) as the heights their exits
 * drain into become known. Each sample is computed once from the same operands whatever the
 * order of the visits. */
static bool spt_incise_all(spt_run *r, const trn_stream_power_params *p, double cell_area,
                           spt_incision *inc, uint32_t *wake, uint8_t *queued, bool ok)
{
    if (ok) {
        memset(inc->visited, 0, r->ntiles);
        memset(inc->boxed, 0, r->ntiles);
        memset(queued, 0, r->ntiles);
    }
    spt_incise_pass ip = {p, cell_area, inc};
    const spt_rounds d = {spt_incise_visit, spt_incise_arrive, spt_incise_outbox, &ip,
                          sizeof *inc->out, r->stats ? &r->stats->incision_rounds : NULL};
    return spt_rounds_run(r, &d, wake, queued, ok);
}

/* The step's gathering state over the routed forest's roots and inflow tasks. */
static bool spt_gather_setup(spt_run *r, spt_gather *g, const spt_task *feeds, size_t nfeeds,
                             const size_t *feed_at)
{
    const size_t nr = r->nroots ? r->nroots : 1, nf = nfeeds ? nfeeds : 1;
    free(g->cp);
    free(g->cq);
    free(g->feed_of);
    free(g->group);
    free(g->wait);
    g->cp = malloc(nr * sizeof *g->cp);
    g->cq = malloc(nr * sizeof *g->cq);
    g->feed_of = malloc(nr * sizeof *g->feed_of);
    g->group = malloc(nf * sizeof *g->group);
    g->wait = calloc(nf, sizeof *g->wait);
    if (!g->cp || !g->cq || !g->feed_of || !g->group || !g->wait) return false;
    for (size_t f = 0; f < nfeeds; f++) {
        g->feed_of[feeds[f].exit] = (uint32_t)f;
        g->group[f] = f && feeds[f - 1].start == feeds[f].start ? g->group[f - 1] : (uint32_t)f;
        g->wait[g->group[f]]++;
    }
    g->feeds = feeds;
    g->feed_at = feed_at;
    g->nout = 0;
    return true;
}

static void spt_gather_free(spt_gather *g)
{
    free(g->cp);
    free(g->cq);
    free(g->feed_of);
    free(g->group);
    free(g->wait);
    free(g->visited);
    free(g->box);
    free(g->out);
}

typedef struct spt_gather_pass {
    const trn_stream_power_params *p;
    double cell_area;
    spt_gather *g;
} spt_gather_pass;

static bool spt_gather_visit(spt_run *r, void *pass, uint32_t t, uint32_t *wake, size_t *nw,
                             uint8_t *queued)
{
    spt_gather_pass *gp = pass;
    return spt_pass_gather(r, gp->p, gp->cell_area, t, gp->g, wake, nw, queued);
}

static void spt_gather_outbox(void *pass, const void **out, size_t **nout)
{
    spt_gather *g = ((spt_gather_pass *)pass)->g;
    *out = g->out;
    *nout = &g->nout;
}

/* An exit's contribution to a sample of one of this process's tiles. */
static void spt_gather_handoff(spt_run *r, void *pass, const void *handoff, uint32_t *wake,
                               size_t *nw, uint8_t *queued)
{
    spt_dep_handoff h;
    memcpy(&h, handoff, sizeof h);
    const uint32_t to = spt_tile_of(r, r->roots[h.q].target);
    if (to < r->first || to >= r->last) return;
    spt_gather_arrive(r, ((spt_gather_pass *)pass)->g, h.q, h.cp, h.cq, wake, nw, queued);
}

/* Deposition's first pass over this process's tiles, in rounds (spt_rounds_run) as the exits
 * into their samples become known. Each sample is gathered once, from the same operands in the
 * same order, whatever the order of the visits. */
static bool spt_gather_all(spt_run *r, const trn_stream_power_params *p, double cell_area,
                           spt_gather *g, uint32_t *wake, uint8_t *queued, bool ok)
{
    if (ok) {
        memset(g->visited, 0, r->ntiles);
        memset(queued, 0, r->ntiles);
    }
    spt_gather_pass gp = {p, cell_area, g};
    const spt_rounds d = {spt_gather_visit, spt_gather_handoff, spt_gather_outbox, &gp,
                          sizeof *g->out, NULL};
    return spt_rounds_run(r, &d, wake, queued, ok);
}

/* Tiles f0 .. f1 - 1's results (heights as doubles, then areas, tile by tile; then their
 * largest area off base level) into the field as the one-process run writes them, only the
 * field's rows of this process's band when the result goes by bands; *amax grows to theirs. */
static void spt_result_put(const spt_run *r, const trn_stream_power_params *p, trn_field *field,
                           double cell_area, uint32_t f0, uint32_t f1, const uint8_t *block,
                           uint32_t *amax)
{
    const size_t per = sizeof(double) + sizeof(uint32_t);
    const bool sea = isfinite(p->sea_level);
    const uint32_t pad = r->pad, fnx = r->fnx, fnz = r->fnz;
    const int me = r->bands ? trn_comm_rank(r->comm) : 0;
    const uint32_t b0 = r->bands ? r->bands[me] : 0, b1 = r->bands ? r->bands[me + 1] : fnz;
    size_t at = 0;
    for (uint32_t t = f0; t < f1; t++) {
        uint32_t x0, z0, x1, z1;
        spt_tile_box(r, t, &x0, &z0, &x1, &z1);
        const uint32_t w = x1 - x0;
        const size_t tn = (size_t)w * (z1 - z0);
        const uint8_t *hh = block + at;
        const uint8_t *aa = hh + tn * sizeof(double);
        for (size_t k = 0; k < tn; k++) {
            const uint32_t i = x0 + (uint32_t)(k % w), j = z0 + (uint32_t)(k / w);
            if (i < pad || j < pad || i - pad >= fnx || j - pad < b0 || j - pad >= b1) continue;
            double hv;
            uint32_t av;
            memcpy(&hv, hh + k * sizeof hv, sizeof hv);
            memcpy(&av, aa + k * sizeof av, sizeof av);
            const size_t at_f = (size_t)(j - pad - r->row0) * fnx + (i - pad);
            float *fh = &field->heights[at_f];
            if (!(p->sea_surface && sea && (double)*fh <= p->sea_level))
                *fh = (float)hv;
            else if ((double)*fh < trn_sp_surface_floor(p))
                *fh = (float)trn_sp_surface_floor(p);
            if (p->drainage_area) p->drainage_area[at_f] = (float)((double)av * cell_area);
        }
        at += tn * per;
    }
    uint32_t m;
    memcpy(&m, block + at, sizeof m);
    if (m > *amax) *amax = m;
}

/* The bytes of tiles f0 .. f1 - 1's block of results (spt_result_put). */
static size_t spt_result_bytes(const spt_run *r, uint32_t f0, uint32_t f1)
{
    size_t n = 0;
    for (uint32_t t = f0; t < f1; t++) {
        uint32_t x0, z0, x1, z1;
        spt_tile_box(r, t, &x0, &z0, &x1, &z1);
        n += (size_t)(x1 - x0) * (z1 - z0);
    }
    return n * (sizeof(double) + sizeof(uint32_t)) + sizeof(uint32_t);
}

/* This process's tiles f0 .. f1 - 1 (its own) as spt_result_put reads them, into block. */
static bool spt_result_get(spt_run *r, uint32_t f0, uint32_t f1, uint8_t *block)
{
    uint32_t most = 0;
    size_t at = 0;
    bool ok = true;
    for (uint32_t t = f0; t < f1 && ok; t++) {
        uint32_t x0, z0, x1, z1;
        spt_tile_box(r, t, &x0, &z0, &x1, &z1);
        const uint32_t w = x1 - x0, h = z1 - z0;
        const size_t tn = (size_t)w * h;
        double *hh = (double *)(void *)(block + at);
        uint32_t *aa = (uint32_t *)(void *)(block + at + tn * sizeof(double));
        ok = spt_io(&r->H, false, x0, z0, w, h, hh, w) &&
             spt_io(&r->AREA, false, x0, z0, w, h, aa, w) &&
             spt_io(&r->BASE, false, x0, z0, w, h, r->wb, w);
        for (size_t k = 0; k < tn && ok; k++)
            if (aa[k] > most && !(r->wb[k] & 1u)) most = aa[k];
        at += tn * (sizeof(double) + sizeof(uint32_t));
    }
    if (ok) memcpy(block + at, &most, sizeof most);
    return ok;
}

/* Whether tile t holds any of the field's rows of process k's band (bands set): then its rows
 * [*a, *b) (the grid's, with the ring) are those. */
static bool spt_band_rows(const spt_run *r, int k, uint32_t t, uint32_t *a, uint32_t *b)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    /* The band's rows on the grid with the ring (pad rows before the field's first). */
    const uint32_t b0 = r->bands[k] + r->pad, b1 = r->bands[k + 1] + r->pad;
    *a = z0 > b0 ? z0 : b0;
    *b = z1 < b1 ? z1 : b1;
    return *a < *b;
}

/* Tile t's rows, and the bytes of one of them in its block of results (a height as a double,
 * an area). */
static uint32_t z_rows(const spt_run *r, uint32_t t)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    return z1 - z0;
}

static size_t row_bytes(const spt_run *r, uint32_t t)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    return (size_t)(x1 - x0) * (sizeof(double) + sizeof(uint32_t));
}

/* Rows [a, b) of tile t's block of results (spt_result_get) into part: their heights, their
 * areas, the tile's largest area; or back (from part into block: into, true). */
static void spt_result_rows(const spt_run *r, uint32_t t, uint32_t a, uint32_t b, uint8_t *block,
                            uint8_t *part, bool into)
{
    uint32_t x0, z0, x1, z1;
    spt_tile_box(r, t, &x0, &z0, &x1, &z1);
    const size_t w = x1 - x0, tn = w * (z1 - z0), pn = w * (b - a), skip = w * (a - z0);
    uint8_t *bh = block + skip * sizeof(double);
    uint8_t *ba = block + tn * sizeof(double) + skip * sizeof(uint32_t);
    uint8_t *bm = block + tn * (sizeof(double) + sizeof(uint32_t));
    uint8_t *ph = part, *pa = part + pn * sizeof(double), *pm = pa + pn * sizeof(uint32_t);
    memcpy(into ? bh : ph, into ? ph : bh, pn * sizeof(double));
    memcpy(into ? ba : pa, into ? pa : ba, pn * sizeof(uint32_t));
    memcpy(into ? bm : pm, into ? pm : bm, sizeof(uint32_t));
}

/* The result on every process: each process's tiles (heights, drainage area) into the field as
 * the one-process run writes it; the largest area off base level, agreed. With point-to-point
 * blocks, one tile at a time goes from its owner to all the others (a round per tile), so a
 * process holds one tile's block besides the field, not every process's (12 bytes a sample
 * of the whole grid); else all-gathered. By bands (r->bands), a tile goes only to the
 * processes whose band of rows it meets, and each writes its band's rows only: no process
 * receives the whole result (without point-to-point blocks it is all-gathered still). */
static bool spt_result_shared(spt_run *r, const trn_stream_power_params *p, trn_field *field,
                              double cell_area, uint32_t *amax, bool ok)
{
    uint64_t ms = 0, mr = 0;
    trn_comm_traffic(r->comm, &ms, &mr);
    const int P = trn_comm_size(r->comm), me = trn_comm_rank(r->comm);
    *amax = 0;
    if (trn_comm_can_exchange(r->comm)) {
        size_t most = 0;
        for (uint32_t t = 0; t < r->ntiles; t++)
            if (spt_result_bytes(r, t, t + 1u) > most) most = spt_result_bytes(r, t, t + 1u);
        uint8_t *block = ok ? malloc(most) : NULL;
        const void **send = calloc((size_t)P, sizeof *send);
        void **recv = calloc((size_t)P, sizeof *recv);
        uint64_t *count = calloc(2u * (size_t)P, sizeof *count);
        /* By bands, each receiver's rows of the tile (parts[k]; parts[me]: what comes in). */
        uint8_t **parts = r->bands ? calloc((size_t)P, sizeof *parts) : NULL;
        ok = spt_agree(r, ok && block && send && recv && count && (!r->bands || parts));
        for (uint32_t t = 0; t < r->ntiles && ok; t++) {
            const int q = trn_comm_tile_owner(r->comm, t, r->ntiles);
            const size_t bytes = spt_result_bytes(r, t, t + 1u);
            memset(count, 0, 2u * (size_t)P * sizeof *count);
            for (int k = 0; k < P; k++) {
                send[k] = NULL;
                recv[k] = NULL;
            }
            if (q == me) {
                /* A failed read is agreed on in the exchange's stead: the others wait. */
                bool got = spt_result_get(r, t, t + 1u, block);
                for (int k = 0; k < P && got; k++) {
                    uint32_t a, b;
                    if (k == me) continue;
                    if (!r->bands) {
                        send[k] = block;
                        count[k] = bytes;
                    } else if (spt_band_rows(r, k, t, &a, &b)) {
                        /* Only the rows of k's band: the ring puts a tile's last row in the
                         * cache's next tile row, so a band often needs one row of a tile. */
                        const size_t pb = spt_result_bytes(r, t, t + 1u) -
                                          (size_t)(z_rows(r, t) - (b - a)) * row_bytes(r, t);
                        got = (parts[k] = malloc(pb)) != NULL;
                        if (got) {
                            spt_result_rows(r, t, a, b, block, parts[k], false);
                            send[k] = parts[k];
                            count[k] = pb;
                        }
                    }
                }
                /* A failed read is agreed on in the exchange's stead: the others wait. */
                ok = spt_agree(r, got);
            } else {
                uint32_t a, b;
                bool ready = ok;
                if (!r->bands) {
                    recv[q] = block;
                    count[P + q] = bytes;
                } else if (spt_band_rows(r, me, t, &a, &b)) {
                    /* Into the part, then its rows into the block (the others, outside the
                     * band, are not written). */
                    recv[q] = parts[me] = malloc(bytes);
                    count[P + q] = bytes - (size_t)(z_rows(r, t) - (b - a)) * row_bytes(r, t);
                    ready = ready && parts[me];
                }
                ok = spt_agree(r, ready);
            }
            ok = ok && trn_comm_exchange(r->comm, send, count, recv, count + P, NULL) == TRN_OK;
            if (ok && r->bands && q != me && count[P + q]) {
                uint32_t a, b;
                spt_band_rows(r, me, t, &a, &b);
                spt_result_rows(r, t, a, b, block, parts[me], true);
            }
            if (ok && (q == me || count[P + q]))
                spt_result_put(r, p, field, cell_area, t, t + 1u, block, amax);
            for (int k = 0; r->bands && parts && k < P; k++) {
                free(parts[k]);
                parts[k] = NULL;
            }
        }
        free(parts);
        /* By bands a process saw only some tiles' largest areas; every tile its owner's. */
        if (r->bands) {
            void *all = NULL;
            uint64_t *counts = NULL;
            ok = spt_agree(r, ok) &&
                 trn_comm_allgather(r->comm, amax, sizeof *amax, &all, &counts, NULL) == TRN_OK;
            for (int k = 0; k < P && ok; k++) {
                uint32_t m;
                memcpy(&m, (const uint8_t *)all + (size_t)k * sizeof m, sizeof m);
                if (m > *amax) *amax = m;
            }
            free(all);
            free(counts);
        }
        free(block);
        free(send);
        free(recv);
        free(count);
        spt_count(r, 3, &ms, &mr);
        return ok;
    }
    const size_t bytes = spt_result_bytes(r, r->first, r->last);
    uint8_t *mine = ok ? malloc(bytes) : NULL;
    ok = ok && mine && spt_result_get(r, r->first, r->last, mine);
    void *all = NULL;
    uint64_t *counts = NULL;
    ok = spt_agree(r, ok) &&
         trn_comm_allgather(r->comm, mine, ok ? bytes : 0, &all, &counts, NULL) == TRN_OK;
    free(mine);
    size_t at = 0;
    for (int q = 0; ok && q < P; q++) {
        const uint32_t f0 = (uint32_t)trn_comm_first_tile(r->comm, q, r->ntiles);
        const uint32_t f1 = q + 1 == P ? r->ntiles
                                       : (uint32_t)trn_comm_first_tile(r->comm, q + 1, r->ntiles);
        spt_result_put(r, p, field, cell_area, f0, f1, (const uint8_t *)all + at, amax);
        at += (size_t)counts[q];
    }
    free(all);
    free(counts);
    spt_count(r, 3, &ms, &mr);
    return ok;
}

trn_status trn_spt_tiled_limits(uint32_t nx, uint32_t nz, uint32_t tile, trn_error *err)
{
    if (tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power in tiles: tile: expected at least 1, found 0");
    /* The run's tile (trn_stream_power_run_tiled_comm): one covering the grid when larger. */
    const uint32_t T = tile > nx && tile > nz ? (nx > nz ? nx : nz) : tile;
    const uint64_t tw = T < nx ? T : nx, th = T < nz ? T : nz;
    /* A tile with one sample around it is indexed in 32 bits, UINT32_MAX marking none. */
    if ((tw + 2u) * (th + 2u) >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "stream power in tiles: expected tiles of fewer than 2^32-1 samples "
                             "with one sample around them, found %" PRIu64 "x%" PRIu64
                             " tiles: use smaller tiles",
                             tw, th);
    const uint64_t tiles = ((uint64_t)nx + T - 1u) / T * (((uint64_t)nz + T - 1u) / T);
    if (tiles >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "stream power in tiles: expected fewer than 2^32-1 tiles, found "
                             "%" PRIu64 " tiles of %" PRIu32 " samples: use larger tiles",
                             tiles, tile);
    return TRN_OK;
}

trn_status trn_stream_power_run_tiled(trn_field *field, const trn_stream_power_params *p,
                                      uint32_t tile, const char *dir,
                                      trn_stream_power_report *report, trn_progress_fn progress,
                                      void *user, trn_error *err)
{
    return trn_stream_power_run_tiled_comm(field, p, tile, dir, NULL, NULL, report, progress, user,
                                           err);
}

trn_status trn_stream_power_run_tiled_comm(trn_field *field, const trn_stream_power_params *p,
                                           uint32_t tile, const char *dir, trn_comm *comm,
                                           trn_sp_tiled_stats *stats,
                                           trn_stream_power_report *report,
                                           trn_progress_fn progress, void *user, trn_error *err)
{
    return trn_stream_power_run_tiled_rows(field, p, tile, dir, comm, NULL, stats, report,
                                           progress, user, err);
}

trn_status trn_stream_power_run_tiled_rows(trn_field *field, const trn_stream_power_params *p,
                                           uint32_t tile, const char *dir, trn_comm *comm,
                                           const uint32_t *bands, trn_sp_tiled_stats *stats,
                                           trn_stream_power_report *report,
                                           trn_progress_fn progress, void *user, trn_error *err)
{
    return trn_stream_power_run_tiled_window(field, p, tile, dir, comm, bands, NULL, stats, report,
                                             progress, user, err);
}

void trn_spt_window_rows(uint32_t cells_x, uint32_t cells_z, uint32_t tile, bool border_outlets,
                         const trn_comm *comm, const uint32_t *bands, uint32_t *row0,
                         uint32_t *row1)
{
    /* As the run numbers its tiles: on the grid with its ring, a tile covering it when larger. */
    const uint32_t pad = border_outlets ? 1u : 0u;
    const uint32_t fnz = cells_z + 1u, nx = cells_x + 1u + 2u * pad, nz = fnz + 2u * pad;
    const uint32_t T = tile > nx && tile > nz ? (nx > nz ? nx : nz) : tile;
    const uint32_t tnx = (nx + T - 1u) / T, ntiles = tnx * ((nz + T - 1u) / T);
    const int me = trn_comm_rank(comm), P = trn_comm_size(comm);
    const uint32_t first = (uint32_t)trn_comm_first_tile(comm, me, ntiles);
    const uint32_t last =
        me + 1 < P ? (uint32_t)trn_comm_first_tile(comm, me + 1, ntiles) : ntiles;
    uint32_t a = bands[me], b = bands[me + 1];
    if (first < last) {
        /* The tiles' grid rows with the substeps' halo (the heights read at the start), as
         * field rows. */
        const uint32_t z0 = first / tnx * T, z1e = (last - 1u) / tnx * T + T;
        const uint32_t z1 = z1e < nz ? z1e : nz;
        const uint32_t g0 = z0 > SPT_SUBSTEPS ? z0 - SPT_SUBSTEPS : 0;
        const uint32_t g1 = z1 + SPT_SUBSTEPS < nz ? z1 + SPT_SUBSTEPS : nz;
        const uint32_t f0 = g0 > pad ? g0 - pad : 0, f1 = g1 - pad < fnz ? g1 - pad : fnz;
        if (a == b) {
            a = f0;
            b = f1;
        } else {
            if (f0 < a) a = f0;
            if (f1 > b) b = f1;
        }
    }
    *row0 = a;
    *row1 = b;
}

/* The field's checks (sp_check_run) on a window's rows only, the samples named in the whole
 * field's coordinates. */
static trn_status spt_check_window(const trn_field *field, const trn_stream_power_params *p,
                                   const trn_spt_window *win, trn_error *err)
{
    if (!field || !field->heights || !p || field->cells_x < 2 || field->cells_z < 2)
        return sp_check_run(field, p, err); /* says which (before it reads a sample) */
    trn_status st = check_params(p, err);
    if (st) return st;
    for (int e = 0; e < 4; e++)
        if (!win->edge[e])
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power in tiles: a window needs the field's edges");
    const size_t fnx = (size_t)field->cells_x + 1u, fn = fnx * win->rows;
    for (size_t k = 0; k < fn; k++) {
        const size_t i = k % fnx, j = win->row0 + k / fnx;
        if (!isfinite(field->heights[k]))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: sample (%zu, %zu) has no finite height", i, j);
        if (p->uplift_mask && !(isfinite(p->uplift_mask[k]) && p->uplift_mask[k] >= 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: uplift_mask at sample (%zu, %zu): expected a "
                                 "finite number >= 0, found %g",
                                 i, j, (double)p->uplift_mask[k]);
        if (p->erodibility_mask &&
            !(isfinite(p->erodibility_mask[k]) && p->erodibility_mask[k] > 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power: erodibility_mask at sample (%zu, %zu): expected "
                                 "a finite number > 0, found %g",
                                 i, j, (double)p->erodibility_mask[k]);
    }
    return TRN_OK;
}

trn_status trn_stream_power_run_tiled_window(trn_field *field, const trn_stream_power_params *p,
                                             uint32_t tile, const char *dir, trn_comm *comm,
                                             const uint32_t *bands, const trn_spt_window *win,
                                             trn_sp_tiled_stats *stats,
                                             trn_stream_power_report *report,
                                             trn_progress_fn progress, void *user, trn_error *err)
{
    if (report) memset(report, 0, sizeof *report);
    if (stats) memset(stats, 0, sizeof *stats);
    trn_status st;
    /* What is numbered in 32 bits, before the heights are read: the grid with its ring may hold
     * more than 2^32 samples, its tiles may not. */
    if (field && p && field->cells_x >= 2 && field->cells_z >= 2) {
        const uint64_t ring = p->border_outlets ? 2u : 0u;
        const uint64_t gx = (uint64_t)field->cells_x + 1u + ring;
        const uint64_t gz = (uint64_t)field->cells_z + 1u + ring;
        if (gx >= UINT32_MAX || gz >= UINT32_MAX)
            return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                                 "stream power in tiles: expected fewer than 2^32-1 samples a "
                                 "side, found %" PRIu64 "x%" PRIu64,
                                 gx, gz);
        if ((st = trn_spt_tiled_limits((uint32_t)gx, (uint32_t)gz, tile, err))) return st;
    }
    if (win && !(comm && bands))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power in tiles: a window of rows needs processes and bands");
    if (win) {
        uint32_t a, b;
        st = spt_check_window(field, p, win, err);
        bool valid = !st && bands[0] == 0 && bands[trn_comm_size(comm)] == field->cells_z + 1u;
        for (int k = 0; k < trn_comm_size(comm) && valid; k++)
            valid = bands[k] <= bands[k + 1];
        if (!st && !valid)
            st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                               "stream power in tiles: the bands of rows must run from row 0 to "
                               "the field's last row (%u), in order",
                               field->cells_z);
        if (!st) {
            trn_spt_window_rows(field->cells_x, field->cells_z, tile, p->border_outlets, comm,
                                bands, &a, &b);
            if (win->row0 > a || (uint64_t)win->row0 + win->rows < b ||
                (uint64_t)win->row0 + win->rows > field->cells_z + 1u)
                st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                   "stream power in tiles: this process's window holds rows "
                                   "%u to %u; it reads and writes rows %u to %u",
                                   win->row0, win->row0 + win->rows, a, b);
        }
        /* One window's bad sample stops every process (the others' windows may be fine). */
        st = trn_comm_agree(comm, st, err);
    } else {
        st = sp_check_run(field, p, err);
    }
    if (st) return st;
    if (bands) {
        const int P = comm ? trn_comm_size(comm) : 1;
        bool valid = bands[0] == 0 && bands[P] == field->cells_z + 1u;
        for (int k = 0; k < P && valid; k++)
            valid = bands[k] <= bands[k + 1];
        if (!valid)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power in tiles: the bands of rows must run from row 0 "
                                 "to the field's last row (%u), in order",
                                 field->cells_z);
    }
    if (tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stream power in tiles: tile: expected at least 1, found 0");
    if (p->routing == TRN_ROUTING_MFD || p->critical_slope > 0 || p->creep_slope > 0)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "stream power in tiles: %s is not supported in tiles yet (d8 or "
                             "rho8 routing without a critical slope or nonlinear creep is); "
                             "run it on the whole grid",
                             p->routing == TRN_ROUTING_MFD ? "mfd routing"
                             : p->critical_slope > 0 && p->critical_rock != 0
                                 ? "a critical slope varying with the rock (critical_rock)"
                             : p->critical_slope > 0 ? "a critical slope"
                                                           : "nonlinear creep (creep_slope)");
    const bool dep = p->deposition > 0;
    const uint32_t pad = p->border_outlets ? 1u : 0u;
    const uint32_t fnx = field->cells_x + 1u, fnz = field->cells_z + 1u;
    spt_run r;
    memset(&r, 0, sizeof r);
    r.H.fd = r.H2.fd = r.BASE.fd = r.CODE.fd = r.LR.fd = r.AREA.fd = r.PG.fd = r.QG.fd = -1;
    sp_state *s = &r.s;
    s->nx = fnx + 2u * pad;
    s->nz = fnz + 2u * pad;
    s->n = (size_t)s->nx * s->nz;
    r.pad = pad;
    r.fnx = fnx;
    r.fnz = fnz;
    r.umask = p->uplift_mask;
    r.kmask = p->erodibility_mask;
    r.row0 = win ? win->row0 : 0;
    r.rows = win ? win->rows : fnz;
    for (int e = 0; e < 4; e++)
        r.edge[e] = win ? win->edge[e] : NULL;
    r.rock = p->diffusion_rock;
    /* Creep varying with the rock: the substeps are set by the largest factor over the whole
     * grid (the ring outside the field has factor 1), as the whole grid sets them. A process
     * holding the whole mask finds it without a message; by windows, each over its rows, then
     * the largest of the processes' (the windows cover the grid). A max does not depend on the
     * order the threads or the processes take the samples in. */
    const bool dvar = p->diffusion > 0 && p->diffusion_rock != 0 && p->erodibility_mask;
    double dfac_max = 0;
    if (dvar) {
        float fmax = pad ? 1.0f : 0.0f;
        const size_t fn = (size_t)fnx * r.rows;
        const float *km = p->erodibility_mask;
        const double rock = p->diffusion_rock;
        int team = 1;
#ifdef _OPENMP
        team = p->threads > 0 ? p->threads : omp_get_max_threads();
        if (p->threads == 0 && fn < SP_PARALLEL_MIN_SAMPLES) team = 1;
#endif
        (void)team; /* read by the pragma only */
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1) reduction(max : fmax)
        for (size_t k = 0; k < fn; k++) {
            const float f = (float)pow((double)km[k], rock);
            if (f > fmax) fmax = f;
        }
        dfac_max = fmax;
    }
    if (dvar && win) {
        void *all = NULL;
        uint64_t *counts = NULL;
        const double mine = dfac_max;
        st = trn_comm_allgather(comm, &mine, sizeof mine, &all, &counts, err);
        for (int k = 0; !st && k < trn_comm_size(comm); k++) {
            double v;
            memcpy(&v, (const uint8_t *)all + (size_t)k * sizeof v, sizeof v);
            if (v > dfac_max) dfac_max = v;
        }
        free(all);
        free(counts);
        if (st) return st;
    }
    r.T = tile;
    if (r.T > s->nx && r.T > s->nz) r.T = s->nx > s->nz ? s->nx : s->nz;
    r.tnx = (s->nx + r.T - 1u) / r.T;
    r.tnz = (s->nz + r.T - 1u) / r.T;
    r.ntiles = r.tnx * r.tnz;
    r.comm = comm;
    r.bands = comm ? bands : NULL;
    r.stats = stats;
    r.first = comm ? (uint32_t)trn_comm_first_tile(comm, trn_comm_rank(comm), r.ntiles) : 0;
    r.last = comm && trn_comm_rank(comm) + 1 < trn_comm_size(comm)
                 ? (uint32_t)trn_comm_first_tile(comm, trn_comm_rank(comm) + 1, r.ntiles)
                 : r.ntiles;
    if (stats) {
        stats->tiles = r.ntiles;
        stats->tiles_owned = r.last - r.first;
    }
    s->dx = field->size_x / field->cells_x;
    s->dz = field->size_z / field->cells_z;
    s->dd = sqrt(s->dx * s->dx + s->dz * s->dz);
    for (int d = 0; d < 8; d++)
        s->dist[d] = TRN_D8_DI[d] && TRN_D8_DJ[d] ? s->dd : TRN_D8_DI[d] ? s->dx : s->dz;
    for (int d = 0; d < 8; d++) {
        s->inv_dist[d] = 1.0 / s->dist[d];
        s->off[d] = TRN_D8_DJ[d] * (int32_t)s->nx + TRN_D8_DI[d];
    }
    s->off[8] = 0;
    s->avx2 = use_avx2();
    const double cell_area = s->dx * s->dz;
    s->pow_table_size = s->n < 65536u ? (uint32_t)s->n + 1u : 65536u;
    s->pow_table = malloc(s->pow_table_size * sizeof *s->pow_table);
    s->f_table = malloc(3 * (size_t)s->pow_table_size * sizeof *s->f_table);
    const uint32_t tw = r.T < s->nx ? r.T : s->nx, th = r.T < s->nz ? r.T : s->nz;
    const size_t wn = ((size_t)tw + 2u) * ((size_t)th + 2u);
    size_t perim = 0;
    r.perim_at = malloc(((size_t)r.ntiles + 1u) * sizeof *r.perim_at);
    r.root_at = malloc(((size_t)r.ntiles + 1u) * sizeof *r.root_at);
    r.need = malloc(r.ntiles);
    bool ok = s->pow_table && s->f_table && r.perim_at && r.root_at && r.need;
    if (ok) {
        for (uint32_t t = 0; t < r.ntiles; t++) {
            uint32_t x0, z0, x1, z1;
            spt_tile_box(&r, t, &x0, &z0, &x1, &z1);
            r.perim_at[t] = perim;
            perim += 2u * ((size_t)(x1 - x0) + (z1 - z0));
        }
        r.perim_at[r.ntiles] = perim;
        r.perim = malloc((perim ? perim : 1) * sizeof *r.perim);
        r.wh = malloc(wn * sizeof *r.wh);
        r.wo = malloc((wn + tw + 2u) * sizeof *r.wo);
        r.wb = malloc(wn);
        r.wc = malloc(wn);
        r.wk = malloc((size_t)tw + 2u);
        r.wl = malloc(wn * sizeof *r.wl);
        r.wa = malloc(wn * sizeof *r.wa);
        r.wq = malloc(wn * sizeof *r.wq);
        r.wd = malloc((wn + 1u) * sizeof *r.wd);
        const size_t dn = ((size_t)tw + 2u * SPT_SUBSTEPS) * ((size_t)th + 2u * SPT_SUBSTEPS);
        if (p->diffusion > 0) {
            r.wd2 = malloc(dn * sizeof *r.wd2);
            r.wo2 = malloc(dn * sizeof *r.wo2);
            r.wb2 = malloc(dn);
            if (dvar) r.wf2 = malloc(dn * sizeof *r.wf2);
        }
        if (dep) {
            r.wp = malloc(wn * sizeof *r.wp);
            r.wq2 = malloc(wn * sizeof *r.wq2);
            r.wf = malloc(wn * sizeof *r.wf);
        }
        ok = r.perim && r.wh && r.wo && r.wb && r.wc && r.wk && r.wl && r.wa && r.wq && r.wd &&
             (p->diffusion <= 0 || (r.wd2 && r.wo2 && r.wb2 && (!dvar || r.wf2))) &&
             (!dep || (r.wp && r.wq2 && r.wf));
    }
    ok = ok && spt_grid_open(&r.H, dir, s->nx, s->nz, sizeof(double)) &&
         (p->diffusion <= 0 || spt_grid_open(&r.H2, dir, s->nx, s->nz, sizeof(double))) &&
         spt_grid_open(&r.BASE, dir, s->nx, s->nz, 1) &&
         spt_grid_open(&r.CODE, dir, s->nx, s->nz, 1) &&
         spt_grid_open(&r.LR, dir, s->nx, s->nz, sizeof(uint32_t)) &&
         spt_grid_open(&r.AREA, dir, s->nx, s->nz, sizeof(uint32_t)) &&
         (!dep || (spt_grid_open(&r.PG, dir, s->nx, s->nz, sizeof(double)) &&
                   spt_grid_open(&r.QG, dir, s->nx, s->nz, sizeof(double))));
    if (!spt_agree(&r, ok)) {
        const bool peer = r.peer_failed;
        spt_free(&r);
        if (peer)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "stream power in tiles: another process failed (its own "
                                 "message says why)");
        return trn_error_set(err, dir ? TRN_ERR_IO : TRN_ERR_NO_MEMORY, NULL, -1,
                             "stream power in tiles: %s for %zu samples",
                             dir ? "could not make the tile files" : "out of memory", s->n);
    }
    for (uint32_t c = 0; c < s->pow_table_size; c++) {
        s->pow_table[c] = pow((double)c * cell_area, p->m);
        const double F = p->erodibility * p->dt * s->pow_table[c];
        s->f_table[c] = F / s->dx;
        s->f_table[s->pow_table_size + c] = F / s->dz;
        s->f_table[2 * (size_t)s->pow_table_size + c] = F / s->dd;
    }
    /* The initial heights and base level, row by row: the ring as sp_ring makes it. */
    const bool sea = isfinite(p->sea_level);
    {
        double *hrow = r.wh;
        uint8_t *brow = r.wb;
        if ((size_t)s->nx > wn) {
            hrow = malloc(s->nx * sizeof *hrow);
            brow = malloc(s->nx);
        }
        ok = hrow && brow;
        /* Across processes, the rows this process's tiles read: theirs and the halo. */
        uint32_t j0 = 0, j1 = s->nz;
        if (comm) {
            uint32_t x0, z0, x1, z1;
            j1 = 0;
            if (r.first < r.last) {
                spt_tile_box(&r, r.first, &x0, &z0, &x1, &z1);
                j0 = z0 > SPT_SUBSTEPS ? z0 - SPT_SUBSTEPS : 0;
                spt_tile_box(&r, r.last - 1u, &x0, &z0, &x1, &z1);
                j1 = z1 + SPT_SUBSTEPS < s->nz ? z1 + SPT_SUBSTEPS : s->nz;
            }
        }
        for (uint32_t j = j0; j < j1 && ok; j++) {
            for (uint32_t i = 0; i < s->nx; i++) {
                const bool border = i == 0 || j == 0 || i + 1u == s->nx || j + 1u == s->nz;
                double hk;
                uint8_t wall = 0;
                if (!(pad && border)) {
                    hk = (double)field->heights[(size_t)(j - pad - r.row0) * fnx + (i - pad)];
                } else if ((i == 0 || i + 1u == s->nx) && (j == 0 || j + 1u == s->nz)) {
                    hk = SP_WALL; /* the corners */
                    wall = 2;
                } else {
                    /* Edge e's q-th border sample: north, south, west, east. */
                    const int e = j == 0 ? 0 : j + 1u == s->nz ? 1 : i == 0 ? 2 : 3;
                    const uint32_t q = e < 2 ? i - 1u : j - 1u;
                    const uint32_t len = e < 2 ? fnx : fnz;
                    const uint32_t reach = len / SP_OUTLET_SPAN > 2u ? len / SP_OUTLET_SPAN : 2u;
                    const uint32_t fi = e < 2 ? q : e == 2 ? 0 : fnx - 1u;
                    const uint32_t fj = e < 2 ? (e == 0 ? 0 : fnz - 1u) : q;
                    /* The edges' heights: from the window's edges when it has them. */
                    const float *line = r.edge[e];
                    const double hq = line ? line[q] : field->heights[(size_t)fj * fnx + fi];
                    bool low = sea && hq <= p->sea_level;
                    if (!low) {
                        low = true;
                        const uint32_t w0 = q > reach ? q - reach : 0;
                        const uint32_t w1 = q + reach < len ? q + reach : len - 1u;
                        for (uint32_t wq = w0; wq <= w1 && low; wq++) {
                            if (wq == q) continue;
                            const uint32_t wi = e < 2 ? wq : fi, wj = e < 2 ? fj : wq;
                            const double hw =
                                line ? line[wq] : field->heights[(size_t)wj * fnx + wi];
                            low = hw > hq || (hw == hq && wq > q);
                        }
                    }
                    hk = low ? hq : SP_WALL;
                    wall = low ? 0 : 2;
                }
                brow[i] = (uint8_t)((border || (sea && hk <= p->sea_level)) | wall);
                /* sea_surface: as on the whole grid, held at the surface, the bed back at
                 * the end. */
                if (p->sea_surface && sea && hk <= p->sea_level) hk = p->sea_level;
                hrow[i] = hk;
            }
            ok = spt_io(&r.H, true, 0, j, s->nx, 1, hrow, s->nx) &&
                 spt_io(&r.BASE, true, 0, j, s->nx, 1, brow, s->nx);
        }
        if (hrow != r.wh) {
            free(hrow);
            free(brow);
        }
    }
    trn_progress pr = trn_progress_make(progress, user);
    const bool rho8 = p->routing != TRN_ROUTING_D8;
    const uint32_t salt = sp_salt(p->seed);
    spt_table tab = {0, 0, NULL, NULL};
    spt_task *tasks = NULL;
    size_t ntasks = 0;
    uint32_t *chase = NULL;
    spt_incision inc;
    memset(&inc, 0, sizeof inc);
    spt_gather gat;
    memset(&gat, 0, sizeof gat);
    gat.visited = dep ? malloc(r.ntiles) : NULL;
    gat.box = dep ? malloc(4u * (size_t)r.ntiles * sizeof *gat.box) : NULL;
    uint32_t *wake = NULL;
    uint8_t *queued = NULL;
    size_t *task_at = malloc(((size_t)r.ntiles + 1u) * sizeof *task_at);
    wake = malloc((size_t)r.ntiles * sizeof *wake);
    queued = malloc(r.ntiles);
    inc.visited = malloc(r.ntiles);
    inc.boxed = malloc(r.ntiles);
    ok = ok && task_at && wake && queued && inc.visited && inc.boxed &&
         (!dep || (gat.visited && gat.box));
    /* Across processes every collective below is called by every process in the same order:
     * what decides whether a block runs (the pits' total, the parameters) is the same on all,
     * and each collective first agrees that no process has failed. */
    ok = spt_agree(&r, ok);
    const uint32_t T0 = r.first, T1 = r.last;
    for (uint32_t step = 0; step < p->steps && ok; step++) {
        if (trn_progress_report(&pr, (double)step / (double)p->steps, "stream power")) {
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "stream power: cancelled");
            ok = false;
        }
        /* Uplift and receivers. */
        uint64_t pits = 0;
        for (uint32_t t = T0; t < T1 && ok; t++)
            ok = spt_pass_receivers(&r, p, t, rho8, salt, &pits);
        ok = spt_sum(&r, ok, &pits);
        /* Closed depressions: the tiles' trees, their basins, the passes, the carving. */
        if (ok && pits) {
            ok = spt_exchange(&r, &r.H, 1, ok); /* the uplifted heights around each tile */
            r.nroots = 0;
            for (uint32_t t = T0; t < T1 && ok; t++)
                ok = spt_pass_trees(&r, t);
            ok = spt_exchange(&r, &r.LR, 1, ok);
            ok = spt_share_roots(&r, ok);
            free(chase);
            chase = ok ? malloc((r.nroots ? r.nroots : 1) * sizeof *chase) : NULL;
            ok = ok && chase;
            const uint32_t nb = ok ? spt_resolve(&r, &chase) : 0;
            tab.count = 0;
            for (size_t k = 0; k < tab.cap; k++)
                tab.keys[k] = UINT64_MAX;
            for (uint32_t t = T0; t < T1 && ok; t++)
                ok = spt_pass_passes(&r, t, &tab);
            free(tasks);
            ok = spt_route_shared(&r, ok, &tab, nb, &tasks, &ntasks);
            for (size_t q = 0; q < ntasks && ok;) {
                size_t e = q;
                while (e < ntasks && tasks[e].tile == tasks[q].tile)
                    e++;
                if (tasks[q].tile >= T0 && tasks[q].tile < T1)
                    ok = spt_pass_carve(&r, tasks[q].tile, tasks + q, e - q);
                q = e;
            }
            if (report) {
                report->pits_routed += pits;
                report->steps_with_pits++;
            }
        }
        /* The routed forest's roots and counts per tile, then the counts that cross tiles. */
        r.nroots = 0;
        for (uint32_t t = T0; t < T1 && ok; t++)
            ok = spt_pass_area(&r, t, NULL, 0, false);
        ok = spt_share_roots(&r, ok);
        free(tasks);
        tasks = NULL;
        ntasks = 0;
        ok = spt_inflows(&r, ok, &tasks, &ntasks, task_at);
        for (uint32_t t = T0; t < T1 && ok; t++)
            ok = spt_pass_area(&r, t, tasks + task_at[t], task_at[t + 1] - task_at[t], true);
        /* Incision, tiles woken as the heights their exits drain into become known. */
        if (ok) {
            free(inc.hr);
            free(inc.known);
            free(inc.done);
            free(inc.box);
            inc.hr = malloc((r.nroots ? r.nroots : 1) * sizeof *inc.hr);
            inc.box = malloc(4 * (r.nroots ? r.nroots : 1) * sizeof *inc.box);
            inc.known = calloc(r.nroots ? r.nroots : 1, 1);
            inc.done = calloc(r.nroots ? r.nroots : 1, 1);
            ok = inc.hr && inc.known && inc.done && inc.box;
            inc.feeds = tasks;
            inc.feed_at = task_at;
            inc.nout = 0;
        }
        /* Deposition: its first pass, donors first across the tiles (the heights around each
         * tile uplifted: the lakes' test reads an exit's receiver). */
        if (dep) {
            if (!pits) ok = spt_exchange(&r, &r.H, 1, ok);
            ok = ok && spt_gather_setup(&r, &gat, tasks, ntasks, task_at);
            ok = spt_gather_all(&r, p, cell_area, &gat, wake, queued, ok);
        }
        ok = spt_incise_all(&r, p, cell_area, &inc, wake, queued, ok);
        /* Diffusion substeps, H and H2 taking turns, each group on the heights around the tile
         * as the group before left them. */
        if (p->diffusion > 0) {
            const double ax = 1.0 / (s->dx * s->dx), az = 1.0 / (s->dz * s->dz);
            const double fmax = dvar ? dfac_max : 1.0;
            const double limit = 0.45 / (p->diffusion * fmax * (ax + az));
            uint32_t sub = (uint32_t)ceil(p->dt / limit);
            if (sub < 1) sub = 1;
            const double kdt = p->diffusion * p->dt / (double)sub;
            /* Every group on every process, whatever failed where (spt_exchange agrees on it):
             * the processes must call the same collectives. */
            for (uint32_t it = 0; it < sub && (ok || comm); it += SPT_SUBSTEPS) {
                const uint32_t subs = sub - it < SPT_SUBSTEPS ? sub - it : SPT_SUBSTEPS;
                ok = spt_exchange(&r, &r.H, subs, ok);
                for (uint32_t t = T0; t < T1 && ok; t++)
                    ok = spt_pass_diffuse(&r, t, subs, ax, az, kdt);
                const spt_grid g = r.H;
                r.H = r.H2;
                r.H2 = g;
            }
        }
        ok = spt_exchange(&r, &r.H, 1, ok);
        for (uint32_t t = T0; t < T1 && ok; t++)
            ok = spt_pass_border(&r, p, t);
        /* The next step's receivers read one sample around each tile. */
        if (step + 1u < p->steps) ok = spt_exchange(&r, &r.H, 1, ok);
        ok = spt_agree(&r, ok);
        if (ok && report) report->steps = step + 1u;
        if (ok && stats) stats->steps = step + 1u;
    }
    /* The result: on one process row by row, across processes gathered from each. */
    if (ok && !st && comm) {
        uint32_t amax = 0;
        ok = spt_result_shared(&r, p, field, cell_area, &amax, ok);
        if (report) report->max_area = (double)amax * cell_area;
        if (ok) trn_progress_report(&pr, 1.0, "stream power");
    } else if (ok && !st) {
        double *hrow = malloc(s->nx * sizeof *hrow);
        uint32_t *arow = malloc(s->nx * sizeof *arow);
        uint8_t *brow = malloc(s->nx);
        ok = hrow && arow && brow;
        uint32_t amax = 0;
        for (uint32_t j = 0; j < fnz && ok; j++) {
            ok = spt_io(&r.H, false, 0, j + pad, s->nx, 1, hrow, s->nx) &&
                 spt_io(&r.AREA, false, 0, j + pad, s->nx, 1, arow, s->nx);
            for (uint32_t i = 0; i < fnx && ok; i++) {
                float *fh = &field->heights[(size_t)j * fnx + i];
                if (!(p->sea_surface && sea && (double)*fh <= p->sea_level))
                    *fh = (float)hrow[i + pad];
                else if ((double)*fh < trn_sp_surface_floor(p))
                    *fh = (float)trn_sp_surface_floor(p);
                if (p->drainage_area)
                    p->drainage_area[(size_t)j * fnx + i] =
                        (float)((double)arow[i + pad] * cell_area);
            }
        }
        for (uint32_t j = 0; j < s->nz && ok && report; j++) {
            ok = spt_io(&r.AREA, false, 0, j, s->nx, 1, arow, s->nx) &&
                 spt_io(&r.BASE, false, 0, j, s->nx, 1, brow, s->nx);
            for (uint32_t i = 0; i < s->nx; i++)
                if (arow[i] > amax && !(brow[i] & 1u)) amax = arow[i];
        }
        if (report) report->max_area = (double)amax * cell_area;
        free(hrow);
        free(arow);
        free(brow);
        if (ok) trn_progress_report(&pr, 1.0, "stream power");
    }
    if (!ok && !st && r.too_many)
        st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                           "stream power in tiles: more than %" PRIu32 " roots of the tiles' "
                           "trees (exits across the tiles' borders, pits, base level) in a step, "
                           "expected fewer: use larger tiles",
                           (uint32_t)SPT_MAX_ROOTS);
    else if (!ok && !st && r.peer_failed)
        st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                           "stream power in tiles: another process failed (its own message "
                           "says why)");
    else if (!ok && !st)
        st = trn_error_set(err, dir ? TRN_ERR_IO : TRN_ERR_NO_MEMORY, NULL, -1,
                           "stream power in tiles: %s",
                           dir ? "reading or writing the tile files failed" : "out of memory");
    free(inc.out);
    free(tab.keys);
    free(tab.edges);
    free(tasks);
    free(task_at);
    free(chase);
    free(inc.hr);
    free(inc.known);
    free(inc.done);
    free(inc.box);
    free(inc.visited);
    free(inc.boxed);
    spt_gather_free(&gat);
    free(wake);
    free(queued);
    spt_free(&r);
    return st;
}

trn_status trn_spt_area_tiles(uint32_t nx, uint32_t nz, uint32_t tile, const char *dir,
                              size_t count, const trn_spt_tile_area *tiles, trn_error *err)
{
    trn_status st = trn_spt_tiled_limits(nx, nz, tile, err);
    if (st) return st;
    spt_run r;
    memset(&r, 0, sizeof r);
    r.H.fd = r.H2.fd = r.BASE.fd = r.CODE.fd = r.LR.fd = r.AREA.fd = r.PG.fd = r.QG.fd = -1;
    sp_state *s = &r.s;
    s->nx = nx;
    s->nz = nz;
    s->n = (size_t)nx * nz;
    for (int d = 0; d < 8; d++)
        s->off[d] = TRN_D8_DJ[d] * (int32_t)nx + TRN_D8_DI[d];
    s->off[8] = 0;
    /* The run's tiles (trn_stream_power_run_tiled_comm's set-up). */
    r.T = tile > nx && tile > nz ? (nx > nz ? nx : nz) : tile;
    r.tnx = (nx + r.T - 1u) / r.T;
    r.tnz = (nz + r.T - 1u) / r.T;
    r.ntiles = r.tnx * r.tnz;
    r.last = r.ntiles;
    for (size_t k = 0; k < count; k++)
        if (tiles[k].tile >= r.ntiles || (k && tiles[k].tile <= tiles[k - 1].tile))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stream power in tiles: tile %" PRIu32 ": expected tiles in "
                                 "increasing order below %" PRIu32,
                                 tiles[k].tile, r.ntiles);
    const uint32_t tw = r.T < nx ? r.T : nx, th = r.T < nz ? r.T : nz;
    const size_t wn = ((size_t)tw + 2u) * ((size_t)th + 2u);
    r.perim_at = malloc(((size_t)r.ntiles + 1u) * sizeof *r.perim_at);
    r.root_at = malloc(((size_t)r.ntiles + 1u) * sizeof *r.root_at);
    size_t *task_at = malloc(((size_t)r.ntiles + 1u) * sizeof *task_at);
    r.wc = malloc(wn);
    r.wl = malloc(wn * sizeof *r.wl);
    r.wa = malloc(wn * sizeof *r.wa);
    r.wq = malloc(wn * sizeof *r.wq);
    r.wd = malloc((wn + 1u) * sizeof *r.wd);
    bool ok = r.perim_at && r.root_at && task_at && r.wc && r.wl && r.wa && r.wq && r.wd;
    size_t perim = 0;
    for (uint32_t t = 0; ok && t < r.ntiles; t++) {
        uint32_t x0, z0, x1, z1;
        spt_tile_box(&r, t, &x0, &z0, &x1, &z1);
        r.perim_at[t] = perim;
        perim += 2u * ((size_t)(x1 - x0) + (z1 - z0));
    }
    if (ok) {
        r.perim_at[r.ntiles] = perim;
        r.perim = malloc((perim ? perim : 1) * sizeof *r.perim);
        ok = r.perim && spt_grid_open(&r.CODE, dir, nx, nz, 1) &&
             spt_grid_open(&r.AREA, dir, nx, nz, sizeof(uint32_t));
    }
    for (size_t k = 0; k < count && ok; k++) {
        uint32_t x0, z0, x1, z1;
        spt_tile_box(&r, tiles[k].tile, &x0, &z0, &x1, &z1);
        ok = spt_io(&r.CODE, true, x0, z0, x1 - x0, z1 - z0, (void *)(uintptr_t)tiles[k].code,
                    x1 - x0);
    }
    /* The routed forest's roots, tiles in order (the others hold none), then the counts that
     * cross tiles and each tile's area with its inflows. */
    size_t next = 0;
    if (ok) r.root_at[0] = 0;
    for (uint32_t t = 0; t < r.ntiles && ok; t++) {
        if (next < count && tiles[next].tile == t) {
            ok = spt_pass_area(&r, t, NULL, 0, false);
            next++;
        } else {
            r.root_at[t + 1] = r.nroots;
        }
    }
    spt_task *tasks = NULL;
    size_t ntasks = 0;
    ok = ok && spt_inflows(&r, ok, &tasks, &ntasks, task_at);
    for (size_t k = 0; k < count && ok; k++) {
        const uint32_t t = tiles[k].tile;
        uint32_t x0, z0, x1, z1;
        spt_tile_box(&r, t, &x0, &z0, &x1, &z1);
        ok = spt_pass_area(&r, t, tasks + task_at[t], task_at[t + 1] - task_at[t], true) &&
             spt_io(&r.AREA, false, x0, z0, x1 - x0, z1 - z0, tiles[k].area, x1 - x0);
    }
    if (!ok && r.too_many)
        st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                           "stream power in tiles: more than %" PRIu32 " roots",
                           (uint32_t)SPT_MAX_ROOTS);
    else if (!ok)
        st = trn_error_set(err, dir ? TRN_ERR_IO : TRN_ERR_NO_MEMORY, NULL, -1,
                           "stream power in tiles: %s",
                           dir ? "reading or writing the tile files failed" : "out of memory");
    free(tasks);
    free(task_at);
    spt_free(&r);
    return st;
}
