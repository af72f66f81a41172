/* Rows over the threads in one region: every row once, progress from the caller, cancel. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
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

int main(void)
{
    RUN(test_every_row_once);
    RUN(test_cancel);
    return trn_test_finish();
}
