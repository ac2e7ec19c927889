/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_gather.c — see exact_gather.h.
 */
#include "exact_gather.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Doubles per particle on the wire: x y z m source vx vy vz group. */
enum { W_POS = 0, W_MASS = 3, W_SRC = 4, W_VEL = 5, W_GROUP = 8, PER = 9 };

gp_status mpi_tree_exact_gather(const mpi_tree_comm *c, const uint8_t *in_src, int none_active,
                                int points, size_t n_pts, const double *pts, const double *pvel,
                                const uint32_t *exclude, const gp_outputs *out, int forces,
                                double G, double eps2, int nthreads, const char *fn)
{
    gp_base *b = c->base;
    const gp_particles *p = &b->p;
    const size_t n = p->n;
    unsigned long long mine = n, total = 0, offset = 0;
    unsigned long long *count = malloc((size_t)c->size * sizeof *count);
    int *rc = malloc((size_t)c->size * sizeof *rc), *disp = malloc((size_t)c->size * sizeof *disp);
    int ok = count && rc && disp, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        free(count); free(rc); free(disp);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY, "%s: no memory for %d ranks' counts", fn, c->size);
    }
    MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG_LONG, count, 1, MPI_UNSIGNED_LONG_LONG, c->comm);
    for (int r = 0; r < c->size; ++r) {
        if (r == c->rank) offset = total;
        total += count[r];
    }
    if (total * PER > (unsigned long long)INT_MAX || total >= UINT32_MAX) {
        free(count); free(rc); free(disp);
        return gp_fail(b, GP_ERR_UNSUPPORTED,
                       "%s: groups, even steps and points gather every rank's particles, and %llu "
                       "particles are more than one gather holds; run fewer particles", fn, total);
    }
    for (int r = 0; r < c->size; ++r) {
        rc[r] = (int)(count[r] * PER);
        disp[r] = r ? disp[r - 1] + rc[r - 1] : 0;
    }
    free(count);
    int grouped = p->group != NULL, any_grouped = 0;
    MPI_Allreduce(&grouped, &any_grouped, 1, MPI_INT, MPI_MAX, c->comm);

    const size_t N = (size_t)total;
    double *send = malloc((n ? n : 1) * PER * sizeof *send);
    double *all = malloc((N ? N : 1) * PER * sizeof *all);
    ok = send && all;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, c->comm);
    if (!all_ok) {
        free(send); free(all); free(rc); free(disp);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY, "%s: no memory to gather %llu particles", fn, total);
    }
    for (size_t i = 0; i < n; ++i) {
        double *w = &send[PER * i];
        memcpy(&w[W_POS], &p->pos[3 * i], 3 * sizeof *w);
        w[W_MASS] = p->mass[i];
        w[W_SRC] = !in_src || in_src[i];
        gp_state_velocity(p, i, &w[W_VEL]);
        w[W_GROUP] = p->group ? (double)p->group[i] : (double)UINT32_MAX;
    }
    MPI_Allgatherv(send, rc[c->rank], MPI_DOUBLE, all, rc, disp, MPI_DOUBLE, c->comm);
    free(send); free(rc); free(disp);

    /* the stand-in: every rank's particles as one set, sources as the subset */
    const size_t m = points ? n_pts : none_active ? 0 : p->n_active;
    double *pos = malloc(6 * (N ? N : 1) * sizeof *pos), *mass = malloc((N ? N : 1) * sizeof *mass);
    uint32_t *grp = malloc((N ? N : 1) * sizeof *grp), *src = malloc((N ? N : 1) * sizeof *src);
    double *tx = malloc(6 * (m ? m : 1) * sizeof *tx);
    uint32_t *self = malloc((m ? m : 1) * sizeof *self);
    gp_status st = GP_OK;
    if (!pos || !mass || !grp || !src || !tx || !self)
        st = gp_fail(b, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the %zu gathered particles", fn, N);
    if (st == GP_OK) {
        double *vel = pos + 3 * N;
        size_t ns = 0;
        for (size_t i = 0; i < N; ++i) {
            const double *w = &all[PER * i];
            memcpy(&pos[3 * i], &w[W_POS], 3 * sizeof *pos);
            memcpy(&vel[3 * i], &w[W_VEL], 3 * sizeof *vel);
            mass[i] = w[W_MASS];
            grp[i] = (uint32_t)w[W_GROUP];
            if (w[W_SRC] != 0) src[ns++] = (uint32_t)i;
        }
        for (size_t k = 0; k < m; ++k) {
            if (points) {
                memcpy(&tx[3 * k], &pts[3 * k], 3 * sizeof *tx);
                if (pvel) memcpy(&tx[3 * m + 3 * k], &pvel[3 * k], 3 * sizeof *tx);
                else memset(&tx[3 * m + 3 * k], 0, 3 * sizeof *tx);
                uint32_t e = exclude ? exclude[k] : UINT32_MAX;
                self[k] = e == UINT32_MAX ? UINT32_MAX : (uint32_t)(offset + e);
            } else {
                size_t i = gp_active_index(b, k);
                memcpy(&tx[3 * k], &p->pos[3 * i], 3 * sizeof *tx);
                gp_state_velocity(p, i, &tx[3 * m + 3 * k]);
                self[k] = (uint32_t)(offset + i);
            }
        }
        gp_base g;
        memset(&g, 0, sizeof g);
        g.plugin_name = b->plugin_name;
        g.p.have = 1;
        g.p.n = N;
        g.p.pos = pos;
        g.p.mass = mass;
        g.p.group = any_grouped ? grp : NULL;
        g.p.src = src;
        g.p.n_src = ns;
        const gp_exact_sources es = { pos, vel, G, eps2, nthreads };
        const gp_exact_targets tg = { m, tx, tx + 3 * m, self };
        st = gp_exact_ex(&g, &es, &tg, out, forces, fn);
        b->stats.pp_interactions += g.stats.pp_interactions;
        if (st != GP_OK) memcpy(b->error, g.error, sizeof b->error);
        else if (g.nb_offset) gp_neighbours_keep(b, g.nb_rows, g.nb_offset, g.nb_list);
        else gp_neighbours_forget(b);
    }
    free(all); free(pos); free(mass); free(grp); free(src); free(tx); free(self);
    return st;
}
