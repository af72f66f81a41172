/* Rows over the threads in one parallel region, with progress and cancel from the caller's thread.
 */
#include "core/rows.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
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

long trn_cores_idle(void)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/loadavg", "r");
    long running = -1;
    if (f) {
        double a, b, c;
        if (fscanf(f, "%lf %lf %lf %ld/", &a, &b, &c, &running) != 4) running = -1;
        fclose(f);
    }
    if (cpus < 1 || running < 1) return -1;
    return cpus - running;
}
