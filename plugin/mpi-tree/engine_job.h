/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine_job.h — how a force pass uses the cuda-tree engine
 * (engine_cuda.h): the local part runs on the engine's worker thread while
 * the calling thread exchanges and walks the LETs (Bonsai overlaps the
 * same two), and is added in front of the LET sums afterwards. Collective
 * where it agrees on statuses; engine_cuda.h itself never is.
 */
#ifndef GP_MPI_TREE_ENGINE_JOB_H
#define GP_MPI_TREE_ENGINE_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"
#include "engine_cuda.h"
#include "base/base_instance.h"

/* Masses the local tree and the engine see: p's, zero outside the source
 * subset in_src (NULL: all are sources). *tmp gets what to free (NULL when
 * p->mass itself is returned). NULL when out of memory. */
const double *mpi_tree_source_masses(const gp_particles *p, const uint8_t *in_src, double **tmp);

/* cuda-tree's acceleration MAC would judge cells by this rank's local |a|
 * only, not the global |a| the LET walk uses: refused rather than mixed.
 * GP_OK when there is no engine (e NULL) or the mac is another. */
gp_status mpi_tree_engine_check_mac(const mpi_tree_engine *e, int mac, gp_base *base, const char *fn);

/* Opens (want) or closes the engine *e so that it matches the engine
 * parameter; plugin is engine_plugin ("" : the default). Collective: on
 * failure every rank fails with the lowest failing rank's sentence, and
 * none keeps an engine it opened. */
gp_status mpi_tree_engine_switch(mpi_tree_engine **e, int want, const char *plugin,
                                 const mpi_tree_comm *c);

/* One pass's local part: forces on the active particles (points NULL; nt
 * of them) or the field at m points, into lacc (3 per target, in output
 * order) and lpot (when wanted). It touches nothing the pass writes: its
 * sentence goes to why, not to the instance. */
typedef struct mpi_tree_engine_job {
    mpi_tree_engine *e;
    gp_base *base;
    const uint8_t *in_src;
    size_t m, nt;
    const double *points;
    double *lacc, *lpot;
    gp_status st;
    uint64_t pp, pc;           /* cuda-tree's interactions in this call */
    int running;
    char why[GP_ERROR_LEN];
} mpi_tree_engine_job;

/* Starts the local part on the engine's worker thread (or here and now when
 * it has none); does nothing without an engine (e NULL). nt: the active
 * count (0 when none is active), used when points is NULL. */
void mpi_tree_engine_start(mpi_tree_engine_job *j, mpi_tree_engine *e, gp_base *base,
                           const uint8_t *in_src, size_t nt, size_t m, const double *points,
                           int want_pot);

/* Waits for the local part, agrees on it, and adds it in front of the LET
 * sums the pass (status pass) left in acc/pot: local + (LETs in rank
 * order), a fixed order. Returns pass without an engine. */
gp_status mpi_tree_engine_finish(mpi_tree_engine_job *j, const mpi_tree_comm *c, const char *fn,
                                 gp_status pass, double *acc, double *pot);

#endif /* GP_MPI_TREE_ENGINE_JOB_H */
