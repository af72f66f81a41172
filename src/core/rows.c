/* Rows over the threads in one parallel region, with progress and cancel from the caller's thread.
 */
#define _GNU_SOURCE /* opendir and clock_gettime under -std=c11; sched_getcpu, CPU_SET */
#include "core/rows.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/syscall.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

int trn_rows_threads(size_t rows, int threads, size_t min_rows)
{
#ifdef _OPENMP
    if (threads <= 0) threads = omp_get_max_threads();
#endif
    if (threads < 1 || rows < min_rows || rows < 2) threads = 1;
    if ((size_t)threads > rows) threads = (int)rows;
    return threads;
}

/* One thread's block, [lo, hi); thread 0 reports. */
static bool run_block(size_t lo, size_t hi, int t, trn_row_fn fn, void *ctx, const trn_progress *pr,
                      const char *stage, atomic_bool *stop)
{
    const size_t n = hi - lo, every = n / 32u ? n / 32u : 1u;
    for (size_t r = lo; r < hi; r++) {
        if (atomic_load_explicit(stop, memory_order_relaxed)) return true;
        fn(ctx, r, t);
        if (t == 0 && (r - lo + 1u) % every == 0 && r + 1u < hi &&
            trn_progress_report(pr, (double)(r - lo + 1u) / (double)n, stage)) {
            atomic_store_explicit(stop, true, memory_order_relaxed);
            return true;
        }
    }
    return false;
}

bool trn_rows_run(size_t rows, int threads, size_t min_rows, trn_row_fn fn, void *ctx,
                  const trn_progress *pr, const char *stage)
{
    threads = trn_rows_threads(rows, threads, min_rows);
    atomic_bool stop;
    atomic_init(&stop, false);
    if (threads == 1) {
        if (run_block(0, rows, 0, fn, ctx, pr, stage, &stop)) return true;
    } else {
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const size_t lo = rows * (size_t)t / (size_t)nt,
                         hi = rows * (size_t)(t + 1) / (size_t)nt;
            (void)run_block(lo, hi, t, fn, ctx, pr, stage, &stop);
        }
#endif
        if (atomic_load(&stop)) return true;
    }
    return trn_progress_report(pr, 1.0, stage);
}

void trn_rows_nearest_starts(size_t fine_rows, size_t coarse_rows, double scale, size_t *first)
{
    for (size_t cj = 0, j = 0; cj <= coarse_rows + 1u; cj++) {
        while (j < fine_rows && (size_t)floor((double)j * scale + 0.5) < cj)
            j++;
        first[cj] = j;
    }
}

#define TRN_COPY_BLOCK ((size_t)1u << 20)

void trn_rows_copy(void *dst, const void *src, size_t bytes)
{
    const size_t blocks = (bytes + TRN_COPY_BLOCK - 1u) / TRN_COPY_BLOCK;
    if (blocks < 2) {
        if (bytes) memcpy(dst, src, bytes);
        return;
    }
#pragma omp parallel for schedule(static)
    for (size_t b = 0; b < blocks; b++) {
        const size_t at = b * TRN_COPY_BLOCK, left = bytes - at;
        memcpy((char *)dst + at, (const char *)src + at,
               left < TRN_COPY_BLOCK ? left : TRN_COPY_BLOCK);
    }
}

/* The online CPUs and the runnable tasks of /proc/loadavg; false where either cannot be read. */
static bool cores_running(long *cpus, long *running)
{
    *cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *running = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        double a, b, c;
        if (fscanf(f, "%lf %lf %lf %ld/", &a, &b, &c, running) != 4) *running = -1;
        fclose(f);
    }
    return *cpus >= 1 && *running >= 1;
}

static long idle_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)t.tv_sec * 1000000000L + t.tv_nsec;
}

static int long_order(const void *a, const void *b)
{
    const long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

long trn_cores_idle_steady(long want, trn_idle_read_fn read, void *arg, int tries, long gap_ns,
                           bool confirm_free)
{
    long got[TRN_IDLE_TRIES_MOST];
    got[0] = read(arg);
    if ((got[0] >= want) != confirm_free || tries < 2) return got[0];
    if (tries > TRN_IDLE_TRIES_MOST) tries = TRN_IDLE_TRIES_MOST;
    for (int k = 1; k < tries; k++) {
        /* A spin, not a sleep: on a busy machine a sleeping thread waits a time slice for its
         * core back. */
        for (const long t0 = idle_now_ns(); idle_now_ns() - t0 < gap_ns;)
            ;
        got[k] = read(arg);
    }
    qsort(got, (size_t)tries, sizeof got[0], long_order);
    return got[tries / 2];
}

/* This process's threads that are running or waiting for a core (state R), the calling one
 * among them; 1 where /proc/self/task cannot be read. */
static long own_running(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 1;
    long n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char path[64], stat[256];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const size_t got = fread(stat, 1, sizeof stat - 1u, f);
        fclose(f);
        stat[got] = '\0';
        /* "tid (comm) S ...": the name may hold spaces and parentheses, the state follows
         * the last ')'. */
        const char *close = strrchr(stat, ')');
        if (close && close[1] == ' ' && close[2] == 'R') n++;
    }
    closedir(d);
    return n > 0 ? n : 1;
}

/* A reading (trn_idle_read_fn); with arg, this process's running threads other than the caller
 * not counted. */
static long idle_read_loadavg(void *arg)
{
    long cpus, running;
    if (!cores_running(&cpus, &running)) return -1;
    return cpus - running + (arg ? own_running() - 1 : 0);
}

/* idle_read_loadavg's argument where this process's other threads do not count. */
static char not_own;

long trn_cores_idle_within(long want, long window_ns, unsigned flags)
{
    return trn_cores_idle_steady(want, idle_read_loadavg,
                                 flags & TRN_IDLE_OWN_ASLEEP ? &not_own : NULL, 5, window_ns / 4,
                                 (flags & TRN_IDLE_CONFIRM_FREE) != 0);
}

long trn_thread_self_id(void)
{
#if defined(__linux__) && defined(SYS_gettid)
    return (long)syscall(SYS_gettid);
#else
    return 0;
#endif
}

long long trn_thread_wait_ns(long tid)
{
    if (tid <= 0) return -1;
    char path[64], text[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    const int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    const ssize_t got = read(fd, text, sizeof text - 1u);
    close(fd);
    if (got <= 0) return -1;
    text[got] = '\0';
    /* "run_ns wait_ns timeslices" */
    unsigned long long run, wait;
    if (sscanf(text, "%llu %llu", &run, &wait) != 2 || wait > (unsigned long long)LLONG_MAX)
        return -1;
    return (long long)wait;
}

int trn_thread_cpu(void)
{
#ifdef __linux__
    return sched_getcpu();
#else
    return -1;
#endif
}

bool trn_thread_leave_cpu(int cpu)
{
#ifdef __linux__
    if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getcpu() != cpu) return false;
    cpu_set_t was, off;
    if (sched_getaffinity(0, sizeof was, &was) != 0 || !CPU_ISSET(cpu, &was) ||
        CPU_COUNT(&was) < 2)
        return false;
    off = was;
    CPU_CLR(cpu, &off);
    /* Off the CPU at once; the affinity given back leaves the thread where it went. */
    if (sched_setaffinity(0, sizeof off, &off) != 0) return false;
    const bool moved = sched_getcpu() != cpu;
    sched_setaffinity(0, sizeof was, &was);
    return moved;
#else
    (void)cpu;
    return false;
#endif
}
