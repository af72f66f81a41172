/* The MPI transport of a tiled run (built only with -DTRN_MPI=ON and OpenMPI present). */
#ifndef TRN_MPI_COMM_MPI_H
#define TRN_MPI_COMM_MPI_H

#include <mpi.h>

#include "terrane/comm.h"

/* A transport over the processes of mpi_comm (MPI_COMM_WORLD for mpirun's): rank and size are
 * MPI's. MPI must be initialised and stay so until trn_comm_free. NULL on no memory. */
trn_comm *trn_comm_mpi_new(MPI_Comm mpi_comm);

#endif
