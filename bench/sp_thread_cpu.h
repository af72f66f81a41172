/* Stream power's jobs by each thread's CPU for a profiling build: cmake -DCMAKE_C_FLAGS="-include $PWD/bench/sp_thread_cpu.h -Wno-unused-function" -DTRN_WERROR=OFF; sums on stderr at exit, jobs named by bench/sp_thread_cpu.py. */
/* Per grid size: each job's share on each thread (CLOCK_THREAD_CPUTIME_ID, and wall), each
 * thread's waits, and the caller's CPU per stage of the step (SP_MARK), whose remainder after
 * its shares and waits is its serial work. Thread CPU counts a spinning wait, as the process's
 * CPU does; a sleeping one not. Not thread-safe beyond what a run of the crew needs: one run
 * at a time (the cascade's runs are one after the other). */
/* Every feature on before the system headers: the file is included ahead of every source's own
 * feature macros. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#define SPT_SIZES 4
#define SPT_JOBS 24
#define SPT_THREADS 4

typedef struct spt_acc {
    double cpu, wall;
    long count;
} spt_acc;

static spt_acc spt_job[SPT_SIZES][SPT_JOBS][SPT_THREADS];
static spt_acc spt_wait[SPT_SIZES][8][SPT_THREADS];
static spt_acc spt_stage[SPT_SIZES][8];
static unsigned long spt_size[SPT_SIZES];
static long spt_steps[SPT_SIZES];
static void *_Atomic spt_fn[SPT_JOBS];
static int spt_first_stage[SPT_JOBS];
static volatile int spt_b, spt_cur_stage = -1;
static double spt_t0[SPT_THREADS][2], spt_w0[SPT_THREADS][2], spt_s0[2];

static inline double spt_clock(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int spt_slot(void *fn)
{
    for (int i = 0; i < SPT_JOBS; i++) {
        void *cur = atomic_load(&spt_fn[i]);
        if (cur == fn) return i;
        if (!cur) {
            void *expect = NULL;
            if (atomic_compare_exchange_strong(&spt_fn[i], &expect, fn)) {
                spt_first_stage[i] = spt_cur_stage;
                return i;
            }
            if (expect == fn) return i;
        }
    }
    return SPT_JOBS - 1;
}

static inline void spt_mark(int k, unsigned long n)
{
    const double c = spt_clock(CLOCK_THREAD_CPUTIME_ID), w = spt_clock(CLOCK_MONOTONIC);
    if (spt_cur_stage >= 0) {
        spt_acc *a = &spt_stage[spt_b][spt_cur_stage];
        a->cpu += c - spt_s0[0];
        a->wall += w - spt_s0[1];
        a->count++;
    }
    if (k == 0) {
        int b = 0;
        while (b < SPT_SIZES - 1 && spt_size[b] && spt_size[b] != n)
            b++;
        spt_size[b] = n;
        spt_b = b;
    }
    if (k == 7) spt_steps[spt_b]++;
    spt_cur_stage = k == 7 ? -1 : k;
    spt_s0[0] = c;
    spt_s0[1] = w;
}

static inline void spt_job_mark(void *fn, int tid, int end)
{
    if (tid >= SPT_THREADS || spt_cur_stage < 0) return;
    const double c = spt_clock(CLOCK_THREAD_CPUTIME_ID), w = spt_clock(CLOCK_MONOTONIC);
    if (!end) {
        spt_t0[tid][0] = c;
        spt_t0[tid][1] = w;
        return;
    }
    spt_acc *a = &spt_job[spt_b][spt_slot(fn)][tid];
    a->cpu += c - spt_t0[tid][0];
    a->wall += w - spt_t0[tid][1];
    a->count++;
}

static inline void spt_wait_mark(int tid, int end)
{
    if (tid >= SPT_THREADS) return;
    const double c = spt_clock(CLOCK_THREAD_CPUTIME_ID), w = spt_clock(CLOCK_MONOTONIC);
    if (!end) {
        spt_w0[tid][0] = c;
        spt_w0[tid][1] = w;
        return;
    }
    /* A helper's wait ends in the stage of the job that woke it. */
    const int k = spt_cur_stage < 0 ? 7 : spt_cur_stage;
    spt_acc *a = &spt_wait[spt_b][k][tid];
    a->cpu += c - spt_w0[tid][0];
    a->wall += w - spt_w0[tid][1];
    a->count++;
}

/* The executable's load address (PIE): a job's address less it is its symbol's in nm. */
static unsigned long spt_base(void)
{
    unsigned long base = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    if (f) {
        if (fscanf(f, "%lx", &base) != 1) base = 0;
        fclose(f);
    }
    return base;
}

__attribute__((destructor)) static void spt_dump(void)
{
    const unsigned long base = spt_base();
    for (int b = 0; b < SPT_SIZES; b++) {
        if (!spt_steps[b]) continue;
        fprintf(stderr, "spt n=%lu steps %ld\n", spt_size[b], spt_steps[b]);
        for (int k = 0; k < 7; k++)
            fprintf(stderr, "spt stage %d caller cpu %.4f wall %.4f\n", k, spt_stage[b][k].cpu,
                    spt_stage[b][k].wall);
        for (int k = 0; k < 8; k++)
            for (int t = 0; t < SPT_THREADS; t++)
                if (spt_wait[b][k][t].count)
                    fprintf(stderr, "spt wait stage %d tid %d cpu %.4f wall %.4f count %ld\n", k, t,
                            spt_wait[b][k][t].cpu, spt_wait[b][k][t].wall,
                            spt_wait[b][k][t].count);
        for (int j = 0; j < SPT_JOBS; j++) {
            void *fn = atomic_load(&spt_fn[j]);
            if (!fn) continue;
            for (int t = 0; t < SPT_THREADS; t++)
                if (spt_job[b][j][t].count)
                    fprintf(stderr, "spt job %lx stage %d tid %d cpu %.4f wall %.4f count %ld\n",
                            (unsigned long)fn - base,
                            spt_first_stage[j], t, spt_job[b][j][t].cpu, spt_job[b][j][t].wall,
                            spt_job[b][j][t].count);
        }
    }
}

#define SP_MARK(k) spt_mark(k, s->n)
#define SP_JOB(fn, tid, end) spt_job_mark((void *)(fn), tid, end)
#define SP_WAIT(tid, end) spt_wait_mark(tid, end)
