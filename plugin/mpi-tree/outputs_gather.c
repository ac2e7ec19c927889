/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs_gather.c — mpi-tree's ABI 1.2 neighbour outputs over every
 * rank's sources (see outputs_gather.h).
 *
 * The searches run on a stand-in instance: a gp_base whose particles are
 * all ranks' particles in rank order (so a particle's index there is its
 * global index), whose velocities are the gathered predicted ones (every
 * particle "at its own time", stated = 1), and whose active set is this
 * rank's active particles at their global indices. oct_outputs_ex then
 * answers exactly as it does for cpu-tree, and its lists are handed over
 * to the real instance.
 */
#include "outputs_gather.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "octree/outputs_ex.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

/* Doubles per particle on the wire: x y z m source [vx vy vz]. */
enum { W_POS = 0, W_MASS = 3, W_SRC = 4, W_VEL = 5 };

gp_status mpi_tree_outputs_gather(const mpi_tree_comm *c, const uint8_t *in_src, int none_active,
                                  int need_vel, const gp_outputs *out, double G, double eps2,
                                  uint32_t group, uint32_t leaf, gp_key_kind keys)
{
    gp_base *b = c->base;
    const gp_particles *p = &b->p;
    const int per = need_vel ? 8 : 5;
    const size_t n = p->n, na = none_active ? 0 : p->n_active;

    /* how many each rank holds, and where its particles start globally */
    unsigned long long mine = n;
    unsigned long long *count = malloc((size_t)c->size * sizeof *count);
    int *rc = malloc((size_t)c->size * sizeof *rc), *disp = malloc((size_t)c->size * sizeof *disp);
    int ok = count && rc && disp;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        free(count); free(rc); free(disp);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY, "compute_forces_ex: no memory for %d ranks' counts", c->size);
    }
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, count, 1, MPI_UNSIGNED_LONG_LONG, c->comm);
    unsigned long long total = 0, offset = 0;
    for (int r = 0; r < c->size; ++r) {
        if (r == c->rank) offset = total;
        total += count[r];
    }
    /* the same on every rank, so every rank refuses together */
    if (total * (unsigned long long)per > (unsigned long long)INT_MAX || total >= UINT32_MAX) {
        free(count); free(rc); free(disp);
        return gp_fail(b, GP_ERR_UNSUPPORTED,
                       "compute_forces_ex: the neighbour outputs gather every rank's particles, and "
                       "%llu particles are more than one gather holds (%d doubles); ask for acc and "
                       "pot only, or run fewer particles", total, INT_MAX);
    }
    for (int r = 0; r < c->size; ++r) {
        rc[r] = (int)(count[r] * (unsigned long long)per);
        disp[r] = r ? disp[r - 1] + rc[r - 1] : 0;
    }
    free(count);

    double *send = malloc((n ? n : 1) * (size_t)per * sizeof *send);
    double *all = malloc((total ? total : 1) * (size_t)per * sizeof *all);
    ok = send && all;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        free(send); free(all); free(rc); free(disp);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory to gather %llu particles for the neighbour "
                       "outputs; ask for acc and pot only, or use more memory", total);
    }
    for (size_t i = 0; i < n; ++i) {
        double *w = &send[(size_t)per * i];
        memcpy(&w[W_POS], &p->pos[3 * i], 3 * sizeof *w);
        w[W_MASS] = p->mass[i];
        w[W_SRC] = !in_src || in_src[i];
        if (need_vel) gp_state_velocity(p, i, &w[W_VEL]);
    }
    MPI_Allgatherv(send, rc[c->rank], MPI_DOUBLE, all, rc, disp, MPI_DOUBLE, c->comm);
    free(send); free(rc); free(disp);

    /* the stand-in: all particles, their velocities, the sources' tree */
    size_t N = (size_t)total, ns = 0;
    double *pos = malloc(3 * (N ? N : 1) * sizeof *pos), *mass = malloc((N ? N : 1) * sizeof *mass);
    double *vel = need_vel ? malloc(3 * (N ? N : 1) * sizeof *vel) : NULL;
    uint8_t *stated = need_vel ? malloc(N ? N : 1) : NULL;
    uint32_t *act = malloc((na ? na : 1) * sizeof *act), *sid = malloc((N ? N : 1) * sizeof *sid);
    double *spos = malloc(3 * (N ? N : 1) * sizeof *spos), *smass = malloc((N ? N : 1) * sizeof *smass);
    uint32_t *pid = NULL;
    oct_tree t;
    memset(&t, 0, sizeof t);
    gp_status st = GP_OK;
    if (!pos || !mass || (need_vel && (!vel || !stated)) || !act || !sid || !spos || !smass)
        st = gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                     "compute_forces_ex: no memory for the %zu gathered particles", N);
    if (st == GP_OK) {
        for (size_t i = 0; i < N; ++i) {
            const double *w = &all[(size_t)per * i];
            memcpy(&pos[3 * i], &w[W_POS], 3 * sizeof *pos);
            mass[i] = w[W_MASS];
            if (need_vel) { memcpy(&vel[3 * i], &w[W_VEL], 3 * sizeof *vel); stated[i] = 1; }
            if (w[W_SRC] != 0) {
                memcpy(&spos[3 * ns], &w[W_POS], 3 * sizeof *spos);
                smass[ns] = w[W_MASS];
                sid[ns++] = (uint32_t)i;
            }
        }
        for (size_t k = 0; k < na; ++k) act[k] = (uint32_t)(offset + gp_active_index(b, k));
        if (ns == 0)   /* every rank passed an empty source subset: refused before here */
            st = gp_fail(b, GP_ERR_BAD_STATE, "compute_forces_ex: no rank holds a source");
        else if (oct_build_threaded(b, &t, ns, spos, smass, group, leaf, keys, NULL))
            st = gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                         "compute_forces_ex: no memory for the tree of the %zu gathered sources", ns);
    }
    if (st == GP_OK && !(pid = malloc((t.nsrc ? t.nsrc : 1) * sizeof *pid)))
        st = gp_fail(b, GP_ERR_OUT_OF_MEMORY, "compute_forces_ex: no memory for %u source indices", t.nsrc);
    if (st == GP_OK) {
        for (uint32_t k = 0; k < t.nsrc; ++k) pid[k] = sid[t.order[t.sid[k]]];
        gp_base g;
        memset(&g, 0, sizeof g);
        g.plugin_name = b->plugin_name;
        g.p.have = 1;
        g.p.n = N;
        g.p.pos = pos;
        g.p.mass = mass;
        g.p.n_active = na;
        g.p.active = act;
        g.p.vel = vel;
        g.p.stated = stated;
        g.p.n_stated = need_vel ? N : 0;
        g.p.n_src = N;
        st = oct_outputs_ex(&g, &t, pid, NULL, out, G, eps2, oct_param_threads(b), NULL);
        if (st != GP_OK) memcpy(b->error, g.error, sizeof b->error);
        else if (g.nb_offset) gp_neighbours_keep(b, g.nb_rows, g.nb_offset, g.nb_list);
    }
    oct_tree_free(&t);
    free(pid); free(all); free(pos); free(mass); free(vel); free(stated); free(act); free(sid);
    free(spos); free(smass);
    return st;
}
