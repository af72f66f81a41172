/* The MPI transport: each collective of terrane/comm.h as the MPI collective of the same name. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/comm_mpi.h"

typedef struct mpi_impl {
    MPI_Comm comm;
    int size;
} mpi_impl;

static trn_status mpi_fail(trn_error *err, int code, const char *what)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) snprintf(text, sizeof text, "code %d", code);
    return trn_error_set(err, TRN_ERR_IO, NULL, -1, "MPI %s failed: %s", what, text);
}

/* MPI counts are ints. The tiled run's gathered blocks are border strips and graphs, far below
 * 2 GiB in all; a larger gather is refused with a message rather than truncated. */
static trn_status int_counts(const mpi_impl *m, const uint64_t *counts, int *icounts, int *displs,
                             trn_error *err)
{
    uint64_t at = 0;
    for (int r = 0; r < m->size; r++) {
        if (counts[r] > INT_MAX || at > INT_MAX)
            return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                                 "MPI: a block of %llu bytes at offset %llu is more than one "
                                 "collective moves (2 GiB); use smaller tiles or more processes",
                                 (unsigned long long)counts[r], (unsigned long long)at);
        icounts[r] = (int)counts[r];
        displs[r] = (int)at;
        at += counts[r];
    }
    return TRN_OK;
}

static trn_status m_share_counts(void *impl, uint64_t mine, uint64_t *counts, trn_error *err)
{
    mpi_impl *m = impl;
    int rc = MPI_Allgather(&mine, 1, MPI_UINT64_T, counts, 1, MPI_UINT64_T, m->comm);
    return rc == MPI_SUCCESS ? TRN_OK : mpi_fail(err, rc, "Allgather");
}

static trn_status m_collect(mpi_impl *m, int everyone, const void *mine, uint64_t bytes, void *all,
                            const uint64_t *counts, trn_error *err)
{
    int *icounts = malloc((size_t)m->size * sizeof *icounts);
    int *displs = malloc((size_t)m->size * sizeof *displs);
    trn_status st = TRN_OK;
    if (!icounts || !displs) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "MPI: out of memory");
        goto done;
    }
    st = int_counts(m, counts, icounts, displs, err);
    if (st != TRN_OK) goto done;
    int rc = everyone ? MPI_Allgatherv(mine, (int)bytes, MPI_BYTE, all, icounts, displs, MPI_BYTE,
                                       m->comm)
                      : MPI_Gatherv(mine, (int)bytes, MPI_BYTE, all, icounts, displs, MPI_BYTE, 0,
                                    m->comm);
    if (rc != MPI_SUCCESS) st = mpi_fail(err, rc, everyone ? "Allgatherv" : "Gatherv");
done:
    free(icounts);
    free(displs);
    return st;
}

static trn_status m_allgather(void *impl, const void *mine, uint64_t bytes, void *all,
                              const uint64_t *counts, trn_error *err)
{
    return m_collect(impl, 1, mine, bytes, all, counts, err);
}

static trn_status m_gather(void *impl, const void *mine, uint64_t bytes, void *all,
                           const uint64_t *counts, trn_error *err)
{
    return m_collect(impl, 0, mine, bytes, all, counts, err);
}

static trn_status m_broadcast(void *impl, void *data, uint64_t bytes, trn_error *err)
{
    mpi_impl *m = impl;
    /* In pieces of up to 1 GiB, so any size goes. */
    uint8_t *p = data;
    while (bytes) {
        const int piece = bytes > (1u << 30) ? (1 << 30) : (int)bytes;
        int rc = MPI_Bcast(p, piece, MPI_BYTE, 0, m->comm);
        if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "Bcast");
        p += piece;
        bytes -= (uint64_t)piece;
    }
    return TRN_OK;
}

static trn_status m_max_int(void *impl, int mine, int *out, trn_error *err)
{
    mpi_impl *m = impl;
    int rc = MPI_Allreduce(&mine, out, 1, MPI_INT, MPI_MAX, m->comm);
    return rc == MPI_SUCCESS ? TRN_OK : mpi_fail(err, rc, "Allreduce");
}

static void m_free(void *impl)
{
    free(impl);
}

static trn_status m_sendrecv(void *impl, const void *send, uint64_t bytes, int to, void *recv,
                             uint64_t rbytes, int from, trn_error *err)
{
    mpi_impl *m = impl;
    if (bytes > INT_MAX || rbytes > INT_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "MPI: a block of %llu bytes is more than one send moves (2 GiB); "
                             "use more processes",
                             (unsigned long long)(bytes > rbytes ? bytes : rbytes));
    int rc = MPI_Sendrecv(send, (int)bytes, MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 29, recv,
                          (int)rbytes, MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, 29, m->comm,
                          MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? TRN_OK : mpi_fail(err, rc, "Sendrecv");
}

static const trn_comm_ops mpi_ops = {m_share_counts, m_allgather, m_gather,  m_broadcast,
                                     m_max_int,      m_free,      m_sendrecv};

trn_comm *trn_comm_mpi_new(MPI_Comm mpi_comm)
{
    mpi_impl *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    int rank = 0;
    m->comm = mpi_comm;
    MPI_Comm_rank(mpi_comm, &rank);
    MPI_Comm_size(mpi_comm, &m->size);
    /* Errors come back as codes (the tiled run then reports them) instead of aborting. */
    MPI_Comm_set_errhandler(mpi_comm, MPI_ERRORS_RETURN);
    trn_comm *c = trn_comm_new(&mpi_ops, m, rank, m->size);
    if (!c) free(m);
    return c;
}
