/* The transport of a tiled run: collectives over a pluggable backend, a serial one built in. */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "terrane/comm.h"

struct trn_comm {
    const trn_comm_ops *ops;
    void *impl;
    int rank, size;
    uint64_t sent, received;
    double wall, cpu; /* seconds inside the backend's collectives */
};

static double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Around each call of the backend: the time it took, waiting for the other processes
 * included (an MPI backend may spin while it waits, so its CPU time counts too). */
typedef struct comm_clock {
    double wall, cpu;
} comm_clock;

static comm_clock clock_start(void)
{
    return (comm_clock){clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID)};
}

static void clock_stop(trn_comm *comm, comm_clock c)
{
    comm->wall += clock_s(CLOCK_MONOTONIC) - c.wall;
    comm->cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - c.cpu;
}

/* ---- the serial backend: one process, so every collective hands the block back ---- */

static trn_status serial_share_counts(void *impl, uint64_t mine, uint64_t *counts, trn_error *err)
{
    (void)impl;
    (void)err;
    counts[0] = mine;
    return TRN_OK;
}

static trn_status serial_allgather(void *impl, const void *mine, uint64_t bytes, void *all,
                                   const uint64_t *counts, trn_error *err)
{
    (void)impl;
    (void)counts;
    (void)err;
    if (bytes) memcpy(all, mine, (size_t)bytes);
    return TRN_OK;
}

static trn_status serial_broadcast(void *impl, void *data, uint64_t bytes, trn_error *err)
{
    (void)impl;
    (void)data;
    (void)bytes;
    (void)err;
    return TRN_OK;
}

static trn_status serial_max_int(void *impl, int mine, int *out, trn_error *err)
{
    (void)impl;
    (void)err;
    *out = mine;
    return TRN_OK;
}

static void serial_free(void *impl)
{
    (void)impl;
}

static const trn_comm_ops serial_ops = {serial_share_counts, serial_allgather, serial_allgather,
                                        serial_broadcast,    serial_max_int,   serial_free,
                                        NULL};

trn_comm *trn_comm_new(const trn_comm_ops *ops, void *impl, int rank, int size)
{
    if (!ops || size < 1 || rank < 0 || rank >= size) return NULL;
    trn_comm *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ops = ops;
    c->impl = impl;
    c->rank = rank;
    c->size = size;
    return c;
}

trn_comm *trn_comm_serial_new(void)
{
    return trn_comm_new(&serial_ops, NULL, 0, 1);
}

void trn_comm_free(trn_comm *comm)
{
    if (!comm) return;
    comm->ops->free(comm->impl);
    free(comm);
}

int trn_comm_rank(const trn_comm *comm)
{
    return comm->rank;
}

int trn_comm_size(const trn_comm *comm)
{
    return comm->size;
}

size_t trn_comm_first_tile(const trn_comm *comm, int rank, size_t tiles)
{
    /* Exact for up to 2^32 tiles and 2^31 processes. */
    return (size_t)((uint64_t)tiles * (uint64_t)rank / (uint64_t)comm->size);
}

int trn_comm_tile_owner(const trn_comm *comm, size_t tile, size_t tiles)
{
    int lo = 0, hi = comm->size - 1;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (trn_comm_first_tile(comm, mid, tiles) <= tile)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void trn_comm_traffic(const trn_comm *comm, uint64_t *sent, uint64_t *received)
{
    if (sent) *sent = comm->sent;
    if (received) *received = comm->received;
}

void trn_comm_time(const trn_comm *comm, double *wall, double *cpu)
{
    if (wall) *wall = comm->wall;
    if (cpu) *cpu = comm->cpu;
}

static trn_status counts_total(trn_comm *comm, uint64_t mine, uint64_t **counts_out,
                               uint64_t *total, trn_error *err)
{
    uint64_t *counts = malloc((size_t)comm->size * sizeof *counts);
    if (!counts) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "comm: out of memory");
    const comm_clock c = clock_start();
    trn_status st = comm->ops->share_counts(comm->impl, mine, counts, err);
    clock_stop(comm, c);
    if (st != TRN_OK) {
        free(counts);
        return st;
    }
    *total = 0;
    for (int r = 0; r < comm->size; r++)
        *total += counts[r];
    *counts_out = counts;
    return TRN_OK;
}

static trn_status collect(trn_comm *comm, bool everyone, const void *mine, uint64_t bytes,
                          void **all, uint64_t **counts_out, trn_error *err)
{
    *all = NULL;
    uint64_t *counts = NULL, total = 0;
    trn_status st = counts_total(comm, bytes, &counts, &total, err);
    if (st != TRN_OK) return st;
    void *buf = NULL;
    if (everyone || comm->rank == 0) {
        buf = malloc(total ? (size_t)total : 1);
        if (!buf) {
            free(counts);
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "comm: out of memory for %llu bytes",
                                 (unsigned long long)total);
        }
    }
    const comm_clock c = clock_start();
    st = everyone ? comm->ops->allgather(comm->impl, mine, bytes, buf, counts, err)
                  : comm->ops->gather(comm->impl, mine, bytes, buf, counts, err);
    clock_stop(comm, c);
    if (st != TRN_OK) {
        free(buf);
        free(counts);
        return st;
    }
    if (comm->size > 1) {
        comm->sent += everyone ? bytes * (uint64_t)(comm->size - 1) : (comm->rank ? bytes : 0);
        if (everyone || comm->rank == 0) comm->received += total - bytes;
    }
    *all = buf;
    if (counts_out)
        *counts_out = counts;
    else
        free(counts);
    return TRN_OK;
}

trn_status trn_comm_allgather(trn_comm *comm, const void *mine, uint64_t bytes, void **all,
                              uint64_t **counts, trn_error *err)
{
    return collect(comm, true, mine, bytes, all, counts, err);
}

trn_status trn_comm_gather(trn_comm *comm, const void *mine, uint64_t bytes, void **all,
                           uint64_t **counts, trn_error *err)
{
    return collect(comm, false, mine, bytes, all, counts, err);
}

trn_status trn_comm_broadcast(trn_comm *comm, void **data, uint64_t *bytes, trn_error *err)
{
    uint64_t n = comm->rank == 0 ? *bytes : 0;
    /* The size first (the root's count), then the block. */
    comm_clock c = clock_start();
    trn_status st = comm->ops->broadcast(comm->impl, &n, sizeof n, err);
    clock_stop(comm, c);
    if (st != TRN_OK) return st;
    if (comm->rank != 0) {
        *data = malloc(n ? (size_t)n : 1);
        if (!*data) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "comm: out of memory");
        *bytes = n;
    }
    c = clock_start();
    st = comm->ops->broadcast(comm->impl, *data, n, err);
    clock_stop(comm, c);
    if (st != TRN_OK) {
        if (comm->rank != 0) {
            free(*data);
            *data = NULL;
        }
        return st;
    }
    if (comm->size > 1) {
        if (comm->rank == 0)
            comm->sent += n * (uint64_t)(comm->size - 1);
        else
            comm->received += n;
    }
    return TRN_OK;
}

trn_status trn_comm_agree(trn_comm *comm, trn_status local, trn_error *err)
{
    int worst = 0;
    trn_error scratch = {0};
    const comm_clock c = clock_start();
    trn_status st = comm->ops->max_int(comm->impl, local != TRN_OK, &worst,
                                       local != TRN_OK ? &scratch : err);
    clock_stop(comm, c);
    if (local != TRN_OK) return local;
    if (st != TRN_OK) return st;
    if (worst)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "tiled run: another process failed (its own message says why)");
    return TRN_OK;
}

trn_status trn_comm_sendrecv(trn_comm *comm, const void *send, uint64_t bytes, int to, void *recv,
                             uint64_t rbytes, int from, trn_error *err)
{
    if (to >= comm->size || from >= comm->size || to == comm->rank || from == comm->rank)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "comm: process %d sends to %d and receives from %d of %d",
                             comm->rank, to, from, comm->size);
    if (to < 0) bytes = 0;
    if (comm->ops->sendrecv) {
        const comm_clock c = clock_start();
        trn_status st = comm->ops->sendrecv(comm->impl, send, bytes, to, recv,
                                            from < 0 ? 0 : rbytes, from, err);
        clock_stop(comm, c);
        if (st != TRN_OK) return st;
        comm->sent += bytes;
        if (from >= 0) comm->received += rbytes;
        return TRN_OK;
    }
    /* Through the collective: every process's block (and whom it is for) to every process. */
    uint8_t *mine = malloc((size_t)bytes + sizeof(int));
    if (!mine) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "comm: out of memory");
    memcpy(mine, &to, sizeof(int));
    if (bytes) memcpy(mine + sizeof(int), send, (size_t)bytes);
    void *all = NULL;
    uint64_t *counts = NULL;
    trn_status st = trn_comm_allgather(comm, mine, bytes + sizeof(int), &all, &counts, err);
    free(mine);
    if (st != TRN_OK) return st;
    uint64_t at = 0;
    for (int r = 0; r < comm->size && from >= 0; r++) {
        int dest;
        memcpy(&dest, (uint8_t *)all + at, sizeof(int));
        if (r == from) {
            if (dest != comm->rank || counts[r] - sizeof(int) != rbytes) {
                st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                   "comm: process %d sent %llu bytes to %d, process %d expected "
                                   "%llu",
                                   r, (unsigned long long)(counts[r] - sizeof(int)), dest,
                                   comm->rank, (unsigned long long)rbytes);
                break;
            }
            if (rbytes) memcpy(recv, (uint8_t *)all + at + sizeof(int), (size_t)rbytes);
        }
        at += counts[r];
    }
    free(all);
    free(counts);
    return st;
}
