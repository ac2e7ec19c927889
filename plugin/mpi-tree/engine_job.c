/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine_job.c — a force pass's local part on the cuda-tree engine
 * (engine_job.h): started before the LET exchange, added after it. Apart
 * from engine_cuda.c, which only mirrors the particles into the
 * sub-instance and knows nothing of MPI.
 */
#include "engine_job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octree/mac.h"
#include "base/base_instance.h"

const double *mpi_tree_source_masses(const gp_particles *p, const uint8_t *in_src, double **tmp)
{
    *tmp = NULL;
    if (!in_src) return p->mass;
    double *m = malloc(p->n * sizeof *m);
    if (!m) return NULL;
    for (size_t i = 0; i < p->n; i++) m[i] = in_src[i] ? p->mass[i] : 0.0;
    *tmp = m;
    return m;
}

gp_status mpi_tree_engine_check_mac(const mpi_tree_engine *e, int mac, gp_base *base, const char *fn)
{
    if (!e || mac != GP_MAC_ACCELERATION) return GP_OK;
    return gp_fail(base, GP_ERR_UNSUPPORTED,
                   "%s: mac = acceleration is not available with engine = cuda-tree (cuda-tree "
                   "would open cells by this rank's local |a| only); use mac = bmax, bh or "
                   "multipole, or engine = cpu-tree", fn);
}

gp_status mpi_tree_engine_switch(mpi_tree_engine **e, int want, const char *plugin,
                                 const mpi_tree_comm *c)
{
    if (!want) {
        mpi_tree_engine_close(*e);
        *e = NULL;
        return GP_OK;
    }
    mpi_tree_engine *fresh = NULL;
    char why[GP_ERROR_LEN];
    gp_status st = mpi_tree_engine_open(&fresh, plugin, c->base->device, why, sizeof why)
                       ? gp_fail(c->base, GP_ERR_DEVICE, "%s", why) : GP_OK;
    if ((st = mpi_tree_agree(c->base, c->comm, st)) != GP_OK) {
        mpi_tree_engine_close(fresh);
        return st;
    }
    mpi_tree_engine_close(*e);
    *e = fresh;
    return GP_OK;
}

/* The job itself, on the worker thread. */
static void engine_local(void *arg)
{
    mpi_tree_engine_job *j = arg;
    const gp_particles *p = &j->base->p;
    if (j->nt == 0 || p->n == 0) return;          /* nothing here: zeros */
    double *tmp;
    const double *mass = mpi_tree_source_masses(p, j->in_src, &tmp);
    if (!mass) {
        j->st = GP_ERR_OUT_OF_MEMORY;
        snprintf(j->why, sizeof j->why, "no memory for the source masses; free memory");
        return;
    }
    double total = 0;
    for (size_t i = 0; i < p->n; i++) total += mass[i];
    int rc = 0;
    uint64_t pp0, pc0, pp1, pc1;
    mpi_tree_engine_interactions(j->e, &pp0, &pc0);
    if (total > 0)
        rc = j->points ? mpi_tree_engine_field(j->e, j->base, mass, j->m, j->points, j->lacc, j->lpot,
                                               j->why, sizeof j->why)
                       : mpi_tree_engine_forces(j->e, j->base, mass, j->lacc, j->lpot, j->why,
                                                sizeof j->why);
    free(tmp);
    if (rc) j->st = GP_ERR_DEVICE;
    mpi_tree_engine_interactions(j->e, &pp1, &pc1);
    j->pp = pp1 - pp0;
    j->pc = pc1 - pc0;
}

void mpi_tree_engine_start(mpi_tree_engine_job *j, mpi_tree_engine *e, gp_base *base,
                           const uint8_t *in_src, size_t nt, size_t m, const double *points,
                           int want_pot)
{
    memset(j, 0, sizeof *j);
    if (!e) return;
    j->e = e;
    j->base = base;
    j->in_src = in_src;
    j->m = m;
    j->points = points;
    j->nt = points ? m : nt;
    j->lacc = calloc(3 * (j->nt ? j->nt : 1), sizeof *j->lacc);
    j->lpot = want_pot ? calloc(j->nt ? j->nt : 1, sizeof *j->lpot) : NULL;
    if (!j->lacc || (want_pot && !j->lpot)) {
        j->st = GP_ERR_OUT_OF_MEMORY;
        snprintf(j->why, sizeof j->why, "no memory for the local engine's %zu results; free memory",
                 j->nt);
        return;
    }
    j->running = 1;
    mpi_tree_engine_run(e, engine_local, j);
}

gp_status mpi_tree_engine_finish(mpi_tree_engine_job *j, const mpi_tree_comm *c, const char *fn,
                                 gp_status pass, double *acc, double *pot)
{
    if (!j->e) return pass;
    if (j->running) mpi_tree_engine_wait(j->e);
    gp_status st = pass;
    if (pass == GP_OK) {
        st = j->st == GP_OK ? GP_OK : gp_fail(c->base, j->st, "%s: %s", fn, j->why);
        st = mpi_tree_agree(c->base, c->comm, st);
    }
    if (st == GP_OK) {
        for (size_t k = 0; k < j->nt; k++) {
            for (int d = 0; d < 3; d++) acc[3 * k + d] = j->lacc[3 * k + d] + acc[3 * k + d];
            if (pot) pot[k] = (j->lpot ? j->lpot[k] : 0) + pot[k];
        }
        c->base->stats.pp_interactions += j->pp;
        c->base->stats.pc_interactions += j->pc;
    }
    free(j->lacc);
    free(j->lpot);
    return st;
}
