/* SPDX-License-Identifier: Apache-2.0 */
/*
 * comm.h — the MPI side of mpi-tree: getting a communicator, agreeing on
 * success before anything is exchanged, and the all-to-all of LET buffers.
 *
 * MPI start-up: when the host has not initialised MPI, the plugin does
 * (MPI_Init_thread asking for MPI_THREAD_MULTIPLE) and, in that case only,
 * registers an atexit handler that calls MPI_Finalize if nobody else has:
 * OpenMPI's mpirun reports a process that exits without MPI_Finalize as
 * failed. Without mpirun such a process is a singleton: P = 1. A host that
 * uses MPI itself initialises it before init and finalises it after the
 * last finalize of an instance.
 *
 * Agreement: mpi_tree_agree is called by every rank with its local status; the
 * lowest failing rank's status and sentence become every rank's ("mpi-tree:
 * rank R of P: <sentence>"), so a failure on one rank makes every rank
 * fail the same way and none waits for a partner that gave up.
 */
#ifndef GP_MPI_TREE_COMM_H
#define GP_MPI_TREE_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_instance.h"
#include "let.h"

/* One instance's place in MPI, as the collective steps need it: where its
 * sentences go (base), its own communicator, this rank and the rank count. */
typedef struct mpi_tree_comm {
    gp_base *base;
    MPI_Comm comm;
    int rank, size;
} mpi_tree_comm;

/* Makes sure MPI is initialised (see above). Returns 0, or -1 with a
 * sentence in why. */
int mpi_tree_mpi_start(char *why, size_t len);

/* Every rank's status in, the agreed status out (GP_OK when all were). On
 * failure base->error holds the same sentence on every rank. */
gp_status mpi_tree_agree(gp_base *base, MPI_Comm comm, gp_status mine);

/* The same for init, before an instance exists: the sentence is in the
 * thread's last_error(NULL) buffer; args is the caller's (for its log). */
gp_status mpi_tree_agree_init(const gp_init_args *args, MPI_Comm comm, gp_status mine,
                        const char *plugin_name);

/* All-to-all of byte buffers: send[r] goes to rank r, recv[r] comes from
 * rank r (recv buffers are allocated here; free them with mpi_tree_buf_free).
 * Collective; agrees on failure first (a pair over INT_MAX bytes or no
 * memory), so every rank returns the same status. */
gp_status mpi_tree_exchange(gp_base *base, MPI_Comm comm, int size, const mpi_tree_buf *send, mpi_tree_buf *recv);

#endif /* GP_MPI_TREE_COMM_H */
