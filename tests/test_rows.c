/* Rows over the threads in one region: every row once, progress from the caller, cancel. */
#define _GNU_SOURCE /* access, sysconf and clock_gettime under -std=c11; CPU_SET */
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/rows.h"
#include "test.h"

typedef struct visit {
    atomic_int *count;
    int *thread_of;
    int threads_seen_max;
} visit;

static void mark(void *ctx, size_t row, int thread)
{
    visit *v = ctx;
    atomic_fetch_add(&v->count[row], 1);
    v->thread_of[row] = thread;
}

typedef struct prog {
    double last;
    int calls;
    bool monotone;
    int cancel_after; /* cancel on this call (0: never) */
    bool off_caller;  /* a report came from another thread */
} prog;

static int on_progress(double done, const char *stage, void *user)
{
    prog *p = user;
    if (strcmp(stage, "rows") != 0) p->monotone = false;
    if (done < p->last) p->monotone = false;
    p->last = done;
    p->calls++;
#ifdef _OPENMP
    if (omp_get_thread_num() != 0) p->off_caller = true;
#endif
    return p->cancel_after && p->calls >= p->cancel_after ? TRN_CANCEL : TRN_CONTINUE;
}

static void run(size_t rows, int threads, size_t min_rows, int expect_threads)
{
    visit v = {calloc(rows, sizeof(atomic_int)), calloc(rows, sizeof(int)), 0};
    prog p = {0.0, 0, true, 0, false};
    trn_progress pr = trn_progress_make(on_progress, &p);
    CHECK_EQ_INT(trn_rows_threads(rows, threads, min_rows), expect_threads);
    CHECK(!trn_rows_run(rows, threads, min_rows, mark, &v, &pr, "rows"));
    for (size_t r = 0; r < rows; r++) {
        CHECK_EQ_INT(atomic_load(&v.count[r]), 1);
        CHECK(v.thread_of[r] >= 0 && v.thread_of[r] < expect_threads);
        /* Contiguous blocks: the thread never decreases along the rows. */
        if (r) CHECK(v.thread_of[r] >= v.thread_of[r - 1]);
    }
    CHECK(p.monotone);
    CHECK(!p.off_caller);
    CHECK(p.last == 1.0);
    CHECK(p.calls >= 1);
    free(v.count);
    free(v.thread_of);
}

static void test_every_row_once(void)
{
    run(1000, 1, 1, 1);
    run(1000, 3, 1, 3);
    run(7, 4, 1, 4);
    run(3, 8, 1, 3);   /* never more threads than rows */
    run(63, 4, 64, 1); /* below the minimum: one thread */
    run(64, 2, 64, 2);
}

/* A cancel from the caller's progress stops the rows: the others are not all done. */
static void test_cancel(void)
{
    const size_t rows = 4096;
    for (int threads = 1; threads <= 3; threads++) {
        visit v = {calloc(rows, sizeof(atomic_int)), calloc(rows, sizeof(int)), 0};
        prog p = {0.0, 0, true, 2, false};
        trn_progress pr = trn_progress_make(on_progress, &p);
        CHECK(trn_rows_run(rows, threads, 1, mark, &v, &pr, "rows"));
        size_t done = 0;
        for (size_t r = 0; r < rows; r++)
            done += (size_t)atomic_load(&v.count[r]);
        CHECK(done < rows);
        CHECK_EQ_INT(p.calls, 2);
        free(v.count);
        free(v.thread_of);
    }
}

/* A copy in blocks over the threads: the bytes of the source on 1 and 3 threads, for sizes of
 * one block, a whole number of blocks and a part block at the end; nothing past the end. */
static void test_copy(void)
{
    const size_t sizes[] = {0, 5, (size_t)1 << 20, (size_t)3 << 20, ((size_t)3 << 20) + 4093};
    const size_t most = ((size_t)3 << 20) + 4093;
    unsigned char *src = malloc(most), *dst = malloc(most + 64);
    for (size_t k = 0; k < most; k++)
        src[k] = (unsigned char)(k * 2654435761u >> 13);
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
#endif
    for (int t = 1; t <= 3; t += 2) {
#ifdef _OPENMP
        omp_set_num_threads(t);
#endif
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            memset(dst, 0xA5, most + 64);
            trn_rows_copy(dst, src, sizes[s]);
            CHECK(memcmp(dst, src, sizes[s]) == 0);
            size_t past = 0;
            for (size_t k = sizes[s]; k < sizes[s] + 64; k++)
                past += dst[k] != 0xA5;
            CHECK(past == 0);
        }
    }
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    free(src);
    free(dst);
}

/* A scripted sequence of readings: each call returns the next, the last repeated. */
typedef struct readings {
    const long *v;
    int n, calls;
} readings;

static long next_reading(void *arg)
{
    readings *r = arg;
    const int k = r->calls < r->n ? r->calls : r->n - 1;
    r->calls++;
    return r->v[k];
}

static void test_idle_steady(void)
{
    /* Enough at the first reading: no other. */
    const long quiet[] = {1, -1};
    readings r = {quiet, 2, 0};
    CHECK(trn_cores_idle_steady(0, next_reading, &r, 5, 0, false) == 1);
    CHECK(r.calls == 1);
    /* Exactly as many as wanted is enough. */
    const long just[] = {2, -1};
    r = (readings){just, 2, 0};
    CHECK(trn_cores_idle_steady(2, next_reading, &r, 5, 0, false) == 2);
    CHECK(r.calls == 1);
    /* A task for two readings of five, then gone: the median shows the core. */
    const long blip[] = {-1, 0, 1, 1, 1};
    r = (readings){blip, 5, 0};
    CHECK(trn_cores_idle_steady(1, next_reading, &r, 5, 1000, false) == 1);
    CHECK(r.calls == 5);
    /* A core seen free in one reading of five on a busy machine does not count. */
    const long miscount[] = {-1, -1, 0, -1, -1};
    r = (readings){miscount, 5, 0};
    CHECK(trn_cores_idle_steady(0, next_reading, &r, 5, 0, false) == -1);
    /* The median, not the last or the first: sorted -4 -3 -2 -1 0. */
    const long worse[] = {-1, 0, -2, -3, -4};
    r = (readings){worse, 5, 0};
    CHECK(trn_cores_idle_steady(1, next_reading, &r, 5, 0, false) == -2);
    CHECK(r.calls == 5);
    /* Confirming a free core instead: a first reading of too few is taken at once, one of
     * enough is read again and the median taken. */
    const long seen_free[] = {1, -1, -1, 0, -1};
    r = (readings){seen_free, 5, 0};
    CHECK(trn_cores_idle_steady(1, next_reading, &r, 5, 0, true) == -1);
    CHECK(r.calls == 5);
    r = (readings){worse, 5, 0};
    CHECK(trn_cores_idle_steady(1, next_reading, &r, 5, 0, true) == -1);
    CHECK(r.calls == 1);
    /* No more than TRN_IDLE_TRIES_MOST readings. */
    const long busy[] = {-1};
    r = (readings){busy, 1, 0};
    CHECK(trn_cores_idle_steady(0, next_reading, &r, 50, 0, false) == -1);
    CHECK(r.calls == TRN_IDLE_TRIES_MOST);
    /* A busy machine is read no more than `tries` times. */
    r = (readings){busy, 1, 0};
    CHECK(trn_cores_idle_steady(0, next_reading, &r, 3, 0, false) == -1);
    CHECK(r.calls == 3);
    r = (readings){busy, 1, 0};
    CHECK(trn_cores_idle_steady(0, next_reading, &r, 1, 0, false) == -1);
    CHECK(r.calls == 1);
}

/* This process's threads busy beside the caller count as running, unless they are meant to be
 * asleep: a thread spinning here is seen in every reading. */
static void test_idle_own_threads(void)
{
#ifdef _OPENMP
    atomic_int stop;
    atomic_init(&stop, 0);
    long with = 0, without = 0;
    int team = 1;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 1) {
            while (!atomic_load(&stop))
                ;
        } else if ((team = omp_get_num_threads()) == 2) {
            /* The spinning thread's reading is taken more than once: it runs throughout. */
            for (int k = 0; k < 20; k++) {
                with += trn_cores_idle_within(100, 0, 0);
                without += trn_cores_idle_within(100, 0, TRN_IDLE_OWN_ASLEEP);
            }
        }
        atomic_store(&stop, 1);
    }
    /* Not counting it frees one core a reading (others' tasks move either sum alike: the
     * readings alternate). */
    if (team == 2) CHECK(without - with >= 10);
#endif
}

/* A thread's run delay: this thread's own, none for a thread not of this process; threads
 * that outnumber the cores wait for them. */
static void test_thread_wait(void)
{
    CHECK(trn_thread_wait_ns(0) == -1);
    CHECK(trn_thread_wait_ns(-3) == -1);
    if (access("/proc/thread-self/schedstat", R_OK) != 0) {
        fprintf(stderr, "  (no per-thread scheduler statistics here: the rest skipped)\n");
        return;
    }
    const long self = trn_thread_self_id();
    CHECK(self > 0);
    const long long w0 = trn_thread_wait_ns(self);
    CHECK(w0 >= 0);
    CHECK(trn_thread_wait_ns(self) >= w0);
#ifdef _OPENMP
    /* One spinning thread more than the cores for 60 ms: their waits add up to about 60 ms. */
    const int team = (int)sysconf(_SC_NPROCESSORS_ONLN) + 1;
    long long waited = 0;
    int got = 0;
#pragma omp parallel num_threads(team) reduction(+ : waited, got)
    {
        const long me = trn_thread_self_id();
        const long long before = trn_thread_wait_ns(me);
        struct timespec t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do
            clock_gettime(CLOCK_MONOTONIC, &t);
        while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 60000000L);
        const long long after = trn_thread_wait_ns(me);
        if (before >= 0 && after >= before) {
            waited += after - before;
            got++;
        }
    }
    if (got == team) {
        CHECK(waited > 15000000LL);
    } else {
        fprintf(stderr, "  (%d of %d threads ran: the waits not checked)\n", got, team);
    }
#endif
}

/* A thread moved off its CPU goes to another it may run on, and keeps the affinity it had; off
 * a CPU it is not on, or with nowhere else to go, it stays. */
static void test_leave_cpu(void)
{
    CHECK(!trn_thread_leave_cpu(-1));
#ifdef __linux__
    cpu_set_t was, now, one;
    CHECK(sched_getaffinity(0, sizeof was, &was) == 0);
    const int at = trn_thread_cpu();
    CHECK(at >= 0 && CPU_ISSET(at, &was));
    if (CPU_COUNT(&was) >= 2) {
        CHECK(trn_thread_leave_cpu(at));
        CHECK(trn_thread_cpu() != at);
        CHECK(sched_getaffinity(0, sizeof now, &now) == 0);
        CHECK(CPU_EQUAL(&was, &now));
        /* Not on that CPU any more: nothing to do. */
        CHECK(!trn_thread_leave_cpu(at));
    } else {
        fprintf(stderr, "  (one CPU to run on: the move not checked)\n");
    }
    /* Only one CPU allowed: it stays, and that CPU stays its only one. */
    const int here = trn_thread_cpu();
    CPU_ZERO(&one);
    CPU_SET(here, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0);
    CHECK(!trn_thread_leave_cpu(here));
    CHECK(trn_thread_cpu() == here);
    CHECK(sched_getaffinity(0, sizeof now, &now) == 0);
    CHECK(CPU_EQUAL(&one, &now));
    CHECK(sched_setaffinity(0, sizeof was, &was) == 0);
#endif
}

int main(void)
{
    RUN(test_every_row_once);
    RUN(test_cancel);
    RUN(test_copy);
    RUN(test_idle_steady);
    RUN(test_idle_own_threads);
    RUN(test_thread_wait);
    RUN(test_leave_cpu);
    return trn_test_finish();
}
