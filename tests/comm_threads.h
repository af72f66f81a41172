/* An in-process transport for the tiled solvers' tests: each "process" is a thread, the
 * collectives meet at a barrier, so several processes run in one test program. */
#ifndef TRN_TEST_COMM_THREADS_H
#define TRN_TEST_COMM_THREADS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "terrane/comm.h"

typedef struct th_shared {
    pthread_barrier_t bar;
    int size;
    const void *ptr[8];
    uint64_t bytes[8];
    int ival[8];
} th_shared;

typedef struct th_impl {
    th_shared *sh;
    int rank;
} th_impl;

static trn_status th_counts(void *impl, uint64_t mine, uint64_t *counts, trn_error *err)
{
    (void)err;
    th_impl *t = impl;
    t->sh->bytes[t->rank] = mine;
    pthread_barrier_wait(&t->sh->bar);
    for (int r = 0; r < t->sh->size; r++)
        counts[r] = t->sh->bytes[r];
    pthread_barrier_wait(&t->sh->bar);
    return TRN_OK;
}

static trn_status th_collect(th_impl *t, bool everyone, const void *mine, void *all,
                             const uint64_t *counts)
{
    t->sh->ptr[t->rank] = mine;
    pthread_barrier_wait(&t->sh->bar);
    if (everyone || t->rank == 0) {
        uint64_t at = 0;
        for (int r = 0; r < t->sh->size; r++) {
            if (counts[r]) memcpy((uint8_t *)all + at, t->sh->ptr[r], (size_t)counts[r]);
            at += counts[r];
        }
    }
    pthread_barrier_wait(&t->sh->bar);
    return TRN_OK;
}

static trn_status th_allgather(void *impl, const void *mine, uint64_t bytes, void *all,
                               const uint64_t *counts, trn_error *err)
{
    (void)bytes;
    (void)err;
    return th_collect(impl, true, mine, all, counts);
}

static trn_status th_gather(void *impl, const void *mine, uint64_t bytes, void *all,
                            const uint64_t *counts, trn_error *err)
{
    (void)bytes;
    (void)err;
    return th_collect(impl, false, mine, all, counts);
}

static trn_status th_broadcast(void *impl, void *data, uint64_t bytes, trn_error *err)
{
    (void)err;
    th_impl *t = impl;
    if (t->rank == 0) t->sh->ptr[0] = data;
    pthread_barrier_wait(&t->sh->bar);
    if (t->rank != 0 && bytes) memcpy(data, t->sh->ptr[0], (size_t)bytes);
    pthread_barrier_wait(&t->sh->bar);
    return TRN_OK;
}

static trn_status th_max(void *impl, int mine, int *out, trn_error *err)
{
    (void)err;
    th_impl *t = impl;
    t->sh->ival[t->rank] = mine;
    pthread_barrier_wait(&t->sh->bar);
    int m = mine;
    for (int r = 0; r < t->sh->size; r++)
        if (t->sh->ival[r] > m) m = t->sh->ival[r];
    pthread_barrier_wait(&t->sh->bar);
    *out = m;
    return TRN_OK;
}

static void th_free(void *impl)
{
    (void)impl;
}

/* Point to point: each posts its block and whom it is for; after the barrier each reads the
 * block of the process it receives from. */
static trn_status th_sendrecv(void *impl, const void *send, uint64_t bytes, int to, void *recv,
                              uint64_t rbytes, int from, trn_error *err)
{
    th_impl *t = impl;
    t->sh->ptr[t->rank] = send;
    t->sh->bytes[t->rank] = bytes;
    t->sh->ival[t->rank] = to;
    pthread_barrier_wait(&t->sh->bar);
    trn_status st = TRN_OK;
    if (from >= 0) {
        if (t->sh->ival[from] != t->rank || t->sh->bytes[from] != rbytes)
            st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1, "threads: unmatched send");
        else if (rbytes)
            memcpy(recv, t->sh->ptr[from], (size_t)rbytes);
    }
    pthread_barrier_wait(&t->sh->bar);
    return st;
}

static const trn_comm_ops th_ops = {th_counts, th_allgather, th_gather,  th_broadcast,
                                    th_max,    th_free,      th_sendrecv};

#endif
