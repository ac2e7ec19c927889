/* SPDX-License-Identifier: Apache-2.0 */
/* comm.c — MPI start-up, collective agreement, LET exchange (see comm.h). */
#include "comm.h"
#include "base/base_instance.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void finalize_at_exit(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

int mpi_tree_mpi_start(char *why, size_t len)
{
    int up = 0, done = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&done);
    if (done) {
        snprintf(why, len, "MPI has already been finalised in this process; create "
                           "mpi-tree instances before MPI_Finalize");
        return -1;
    }
    if (up) return 0;
    int provided = 0;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        snprintf(why, len, "MPI_Init_thread failed; run under mpirun, or initialise MPI in "
                           "the host before init");
        return -1;
    }
    atexit(finalize_at_exit);
    return 0;
}

/* The sentence without its "mpi-tree: " prefix (and without an earlier
 * "rank R of P: " that an inner agreement already added). */
static const char *strip(const char *msg, const char *plugin_name)
{
    size_t k = strlen(plugin_name);
    if (strncmp(msg, plugin_name, k) == 0 && msg[k] == ':' && msg[k + 1] == ' ') msg += k + 2;
    return msg;
}

typedef struct verdict {
    int32_t status;
    char msg[GP_ERROR_LEN];
} verdict;

/* The lowest failing rank, or size when none failed; then its verdict. */
static int first_failure(MPI_Comm comm, gp_status mine, const char *sentence, verdict *v)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int me = mine != GP_OK ? rank : size, first = size;
    MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == size) return size;
    if (rank == first) {
        v->status = (int32_t)mine;
        snprintf(v->msg, sizeof v->msg, "%s", sentence);
    }
    MPI_Bcast(v, (int)sizeof *v, MPI_BYTE, first, comm);
    return first;
}

gp_status mpi_tree_agree(gp_base *base, MPI_Comm comm, gp_status mine)
{
    verdict v;
    int size;
    MPI_Comm_size(comm, &size);
    if (size == 1) return mine;   /* the sentence is already this rank's */
    int first = first_failure(comm, mine, base->error, &v);
    if (first == size) return GP_OK;
    const char *text = strip(v.msg, base->plugin_name);
    if (strncmp(text, "rank ", 5) == 0) /* already agreed once: keep it */
        return gp_fail(base, (gp_status)v.status, "%s", text);
    return gp_fail(base, (gp_status)v.status, "rank %d of %d: %s", first, size, text);
}

gp_status mpi_tree_agree_init(const gp_init_args *args, MPI_Comm comm, gp_status mine,
                        const char *plugin_name)
{
    verdict v;
    int size;
    MPI_Comm_size(comm, &size);
    if (size == 1) return mine;
    char local[GP_ERROR_LEN];
    snprintf(local, sizeof local, "%s", gp_base_last_error(NULL));
    int first = first_failure(comm, mine, local, &v);
    if (first == size) return GP_OK;
    return gp_init_fail(args, plugin_name, (gp_status)v.status, "rank %d of %d: %s", first,
                        size, strip(v.msg, plugin_name));
}

gp_status mpi_tree_exchange(gp_base *base, MPI_Comm comm, int size, const mpi_tree_buf *send, mpi_tree_buf *recv)
{
    unsigned long long *scount = calloc((size_t)size, sizeof *scount);
    unsigned long long *rcount = calloc((size_t)size, sizeof *rcount);
    int *sc = malloc((size_t)size * sizeof *sc), *rc = malloc((size_t)size * sizeof *rc);
    int *sd = malloc((size_t)size * sizeof *sd), *rd = malloc((size_t)size * sizeof *rd);
    char *sbuf = NULL, *rbuf = NULL;
    gp_status st = GP_OK;
    for (int r = 0; r < size; r++) memset(&recv[r], 0, sizeof recv[r]);
    if (!scount || !rcount || !sc || !rc || !sd || !rd)
        st = gp_fail(base, GP_ERR_OUT_OF_MEMORY, "no memory for the LET exchange tables");
    if ((st = mpi_tree_agree(base, comm, st)) != GP_OK) goto out;
    for (int r = 0; r < size; r++) scount[r] = send[r].n;
    MPI_Alltoall(scount, 1, MPI_UNSIGNED_LONG_LONG, rcount, 1, MPI_UNSIGNED_LONG_LONG, comm);
    unsigned long long stot = 0, rtot = 0;
    for (int r = 0; r < size; r++) { stot += scount[r]; rtot += rcount[r]; }
    if (stot > INT_MAX || rtot > INT_MAX)
        st = gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                     "the local essential trees of this rank come to %llu bytes sent and %llu "
                     "received, over MPI's 2 GiB limit of one exchange; use more ranks or a "
                     "smaller theta", stot, rtot);
    if (st == GP_OK) {
        sbuf = malloc(stot ? stot : 1);
        rbuf = malloc(rtot ? rtot : 1);
        if (!sbuf || !rbuf)
            st = gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                         "no memory for %llu bytes of local essential trees; use more ranks",
                         stot + rtot);
    }
    if ((st = mpi_tree_agree(base, comm, st)) != GP_OK) goto out;
    int so = 0, ro = 0;
    for (int r = 0; r < size; r++) {
        sc[r] = (int)scount[r]; sd[r] = so; so += sc[r];
        rc[r] = (int)rcount[r]; rd[r] = ro; ro += rc[r];
        if (sc[r]) memcpy(sbuf + sd[r], send[r].p, (size_t)sc[r]);
    }
    MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, comm);
    for (int r = 0; r < size && st == GP_OK; r++) {
        if (!rc[r]) continue;
        recv[r].p = malloc((size_t)rc[r]);
        if (!recv[r].p) {
            st = gp_fail(base, GP_ERR_OUT_OF_MEMORY, "no memory for a received LET");
            break;
        }
        memcpy(recv[r].p, rbuf + rd[r], (size_t)rc[r]);
        recv[r].n = recv[r].cap = (size_t)rc[r];
    }
    st = mpi_tree_agree(base, comm, st);
    if (st != GP_OK)
        for (int r = 0; r < size; r++) mpi_tree_buf_free(&recv[r]);
out:
    free(scount); free(rcount); free(sc); free(rc); free(sd); free(rd);
    free(sbuf); free(rbuf);
    return st;
}
