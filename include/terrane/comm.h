/* Transport between the processes of one tiled run: a serial one in the library, MPI when built with it. */
#ifndef TERRANE_COMM_H
#define TERRANE_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The few collectives a tiled run needs. Every process of the run calls each one in the same
 * order (SPMD); process 0 is the root. Sizes are bytes. */
typedef struct trn_comm_ops {
    /* counts[r] = bytes of process r (every process learns every count). */
    trn_status (*share_counts)(void *impl, uint64_t mine, uint64_t *counts, trn_error *err);
    /* Every process receives all blocks, concatenated in process order (counts from
     * share_counts). */
    trn_status (*allgather)(void *impl, const void *mine, uint64_t bytes, void *all,
                            const uint64_t *counts, trn_error *err);
    /* As allgather, but only the root receives (all is NULL elsewhere). */
    trn_status (*gather)(void *impl, const void *mine, uint64_t bytes, void *all,
                         const uint64_t *counts, trn_error *err);
    /* The root's bytes to every process (the size is known to all). */
    trn_status (*broadcast)(void *impl, void *data, uint64_t bytes, trn_error *err);
    /* The largest of every process's value (used to agree that a step failed somewhere). */
    trn_status (*max_int)(void *impl, int mine, int *out, trn_error *err);
    void (*free)(void *impl);
    /* Point to point: send bytes to process to and receive rbytes from process from, at once
     * (either may be -1: none). Every process calls it in the same step. NULL: done through
     * allgather (every block to every process). */
    trn_status (*sendrecv)(void *impl, const void *send, uint64_t bytes, int to, void *recv,
                           uint64_t rbytes, int from, trn_error *err);
} trn_comm_ops;

typedef struct trn_comm trn_comm;

/* One process holding every tile: the collectives copy. */
trn_comm *trn_comm_serial_new(void);
/* A transport over ops (an MPI one: tools/mpi/comm_mpi.c). rank in [0, size). NULL on no memory;
 * ops->free(impl) is then not called. */
trn_comm *trn_comm_new(const trn_comm_ops *ops, void *impl, int rank, int size);
void trn_comm_free(trn_comm *comm);

int trn_comm_rank(const trn_comm *comm);
int trn_comm_size(const trn_comm *comm);
/* Tiles are dealt out in contiguous runs of the row-major tile order, the first
 * tiles * rank / size of them before rank's: the same on every process and every run. */
size_t trn_comm_first_tile(const trn_comm *comm, int rank, size_t tiles);
int trn_comm_tile_owner(const trn_comm *comm, size_t tile, size_t tiles);

/* Bytes this process has sent and received through the collectives so far (a serial
 * transport counts what an MPI one would move for one process). */
void trn_comm_traffic(const trn_comm *comm, uint64_t *sent, uint64_t *received);
/* Seconds this process has spent inside the collectives so far, of the clock and of its CPU:
 * waiting for the other processes included (MPI may spin while it waits), so what a process
 * spent outside them is its own work. */
void trn_comm_time(const trn_comm *comm, double *wall, double *cpu);

/* Collectives with their buffers allocated here (free them with free()). */
/* Every process's block to every process: *all (concatenated in process order) and, when
 * counts is not NULL, *counts (size() entries, malloc'ed). */
trn_status trn_comm_allgather(trn_comm *comm, const void *mine, uint64_t bytes, void **all,
                              uint64_t **counts, trn_error *err);
/* Every process's block to the root only (*all is NULL elsewhere). */
trn_status trn_comm_gather(trn_comm *comm, const void *mine, uint64_t bytes, void **all,
                           uint64_t **counts, trn_error *err);
/* The root's block (*data, *bytes there) to every process: elsewhere *data is a new buffer. */
trn_status trn_comm_broadcast(trn_comm *comm, void **data, uint64_t *bytes, trn_error *err);
/* Send bytes to process to and receive rbytes (the size the sender sends) from process from
 * (-1: none); every process calls it in the same step, so pairs meet (a chain of neighbours:
 * each sends up and receives from below). */
trn_status trn_comm_sendrecv(trn_comm *comm, const void *send, uint64_t bytes, int to, void *recv,
                             uint64_t rbytes, int from, trn_error *err);
/* Agree whether every process succeeded: returns local when it is an error, else
 * TRN_ERR_MISMATCH ("another process failed") when some process failed, else TRN_OK. */
trn_status trn_comm_agree(trn_comm *comm, trn_status local, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
