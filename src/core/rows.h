/* Rows over the threads in one parallel region, with progress and cancel from the caller's thread.
 */
#ifndef TRN_CORE_ROWS_H
#define TRN_CORE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/progress.h"

/* Computes row `row` using thread `thread`'s scratch (0 .. threads - 1). A row's result must
 * depend only on its index, never on the thread or the order. */
typedef void (*trn_row_fn)(void *ctx, size_t row, int thread);

/* Runs fn on rows 0 .. rows - 1 in one parallel region of `threads` threads (0: OpenMP's
 * count; one thread below min_rows rows): each thread takes one contiguous block of rows (a
 * static schedule, so a row's data stays on its thread), and no thread waits for another until
 * the end. Opening a region per band of rows to report progress between them made every band
 * wait for the slowest thread, a whole time slice when another program holds its core. The
 * calling thread (thread 0) reports progress (0..1 of pr, with stage) after each 1/32 of its own
 * block and at the end; a cancel stops every thread before its next row. Returns true when
 * cancelled (the rows are then partly done). */
bool trn_rows_run(size_t rows, int threads, size_t min_rows, trn_row_fn fn, void *ctx,
                  const trn_progress *pr, const char *stage);

/* Samples of row work below which a pass runs on the calling thread: waking a team costs more
 * than the rows, and a team's region waits for its slowest thread, a whole time slice when
 * another program holds that thread's core. */
#define TRN_ROWS_PARALLEL_SAMPLES ((uint64_t)1 << 15)

/* threads for a pass over `samples` samples, or 1 below TRN_ROWS_PARALLEL_SAMPLES. */
static inline int trn_rows_team(uint64_t samples, int threads)
{
    return samples >= TRN_ROWS_PARALLEL_SAMPLES ? threads : 1;
}

/* The thread count trn_rows_run uses for these arguments (for sizing per-thread scratch). */
int trn_rows_threads(size_t rows, int threads, size_t min_rows);

/* A reading of the cores free now: the online CPUs less the runnable tasks of /proc/loadavg
 * (the calling thread among them), the cores no process is running on; below 0, tasks are
 * waiting for a core; -1 also where it cannot be read. For choosing how many threads to wake,
 * never what they compute. */
typedef long (*trn_idle_read_fn)(void *arg);

/* The cores free: the first of `tries` readings `gap_ns` apart where it shows `want` or more
 * (with confirm_free: fewer), else the median of them all (at most TRN_IDLE_TRIES_MOST). One
 * reading is a snapshot: a task that runs for microseconds (a kernel worker, a process started
 * beside this one) makes an idle machine look busy, and a task moved between cores as it is
 * read may not be counted on a busy one; a program that keeps a core busy is seen in most
 * readings. Only the answer that would change what the caller does is read again. */
#define TRN_IDLE_TRIES_MOST 9
long trn_cores_idle_steady(long want, trn_idle_read_fn read, void *arg, int tries, long gap_ns,
                           bool confirm_free);

/* How trn_cores_idle_within reads. */
enum {
    /* A run's start, or helpers asleep: this process's other threads do not count, those of
     * them still running or waiting for a core too (a thread on its way to sleep after a
     * parallel region held a core for milliseconds on a virtual machine: its wake-up, and so
     * its sleep, waits for the hypervisor to run its virtual CPU). */
    TRN_IDLE_OWN_ASLEEP = 1u,
    /* The caller's helpers are asleep and come back only onto the cores found: a reading of
     * too few is taken at once (a wrong one costs a few steps alone), a reading of enough is
     * confirmed (a wrong one puts a helper on a busy core). Without: the other way round. */
    TRN_IDLE_CONFIRM_FREE = 2u,
};

/* trn_cores_idle_steady of /proc/loadavg: up to five readings over window_ns (flags: the
 * TRN_IDLE_ values). */
long trn_cores_idle_within(long want, long window_ns, unsigned flags);

/* The readings' usual span: 100 us. */
#define TRN_IDLE_WINDOW_NS 100000L

/* The calling thread's id for trn_thread_wait_ns (0 where the system has none). */
long trn_thread_self_id(void);

/* How long thread tid of this process has been runnable and waiting for a core, all told (the
 * scheduler's run delay, /proc/self/task/TID/schedstat), ns; -1 where it cannot be read. Time
 * the thread lost to others on its core shows here, time it slept does not: unlike a reading of
 * the cores free, a task that holds a core for microseconds counts only for those. */
long long trn_thread_wait_ns(long tid);

/* The CPU the calling thread runs on now (-1 where the system does not say). */
int trn_thread_cpu(void);

/* Moves the calling thread off cpu when it is running there and its CPU affinity allows
 * another, then gives the affinity back as it was; true when it moved. A helper thread placed
 * on the CPU of the thread it helps (a new thread placed by the load the last process left on
 * the CPUs, as on a virtual machine) shared it with that thread for 10-30 ms while the other
 * CPU idled. */
bool trn_thread_leave_cpu(int cpu);

/* Fine rows 0 .. fine_rows - 1 read onto coarse rows by nearest row (fine row j to coarse row
 * floor(j * scale + 0.5), which never decreases with j): first[cj] (coarse_rows + 2 entries,
 * cj = 0 .. coarse_rows + 1) is the first fine row of coarse row cj, so its rows are first[cj]
 * .. first[cj + 1] - 1. A coarse row summed by one thread in that order gives the same sums on
 * any thread count. */
void trn_rows_nearest_starts(size_t fine_rows, size_t coarse_rows, double scale, size_t *first);

/* dst <- src (bytes; the two do not overlap) in blocks of 1 MiB over OpenMP's threads when there
 * are two or more blocks: a fresh buffer's pages are then faulted in by every thread, not by the
 * caller alone, and the copy of a whole grid no longer runs on one thread while the others wait.
 * The bytes are those of memcpy on any thread count. */
void trn_rows_copy(void *dst, const void *src, size_t bytes);

#endif
