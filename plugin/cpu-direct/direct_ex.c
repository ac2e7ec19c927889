/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_ex.c — cpu-direct's ABI 1.2 outputs (see direct_ex.h).
 *
 * For each active particle i, one loop over the sources j in index order,
 * with r = x_j - x_i and v = v_j - v_i at the positions' current time
 * (velocities from the held state, gp_state_velocity):
 *   nn: the smallest unsoftened |r|^2, ties to the lower index;
 *   pair_step: min tau_ij (plugin/base/pair_step.h);
 *   neighbours: |r|^2 < nb_radius_i^2, or tau_ij < nb_step.
 * (The jerk comes with acc from direct_kernel.c's jerk kernel.) Neighbour
 * lists are made in two passes (count, then fill),
 * so they need no reallocation and come out in ascending index order.
 * Compiled with -ffp-contract=off, so pair_step is the shared expression
 * bit for bit (module.mk).
 */
#include "direct_ex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"

typedef struct ex_pass {
    const gp_particles *p;
    const uint8_t *in_src;
    const double *vel;       /* 3n: every particle's velocity; NULL when no
                                pairwise step is asked for */
    double G, eps2;
    const gp_outputs *out;
    int lists;
} ex_pass;

static int is_source(const ex_pass *e, size_t j)
{
    return e->p->mass[j] > 0.0 && (!e->in_src || e->in_src[j]);
}

static int listed(const ex_pass *e, size_t k, double d2, double tau)
{
    const gp_outputs *o = e->out;
    if (o->nb_radius && d2 < o->nb_radius[k] * o->nb_radius[k]) return 1;
    return o->nb_step > 0 && tau < o->nb_step;
}

/* One active particle (the k-th, particle i). Writes its outputs; with
 * list != NULL writes its neighbours there, else only counts them. */
static size_t one(const ex_pass *e, size_t k, size_t i, uint32_t *list)
{
    const gp_particles *p = e->p;
    const gp_outputs *o = e->out;
    const double *xi = &p->pos[3 * i], *vi = e->vel ? &e->vel[3 * i] : NULL;
    const double mi = p->mass[i];
    double best = HUGE_VAL, step = HUGE_VAL;
    uint32_t nn = UINT32_MAX;
    size_t nl = 0;
    for (size_t j = 0; j < p->n; ++j) {
        if (j == i || !is_source(e, j)) continue;
        double rx = p->pos[3 * j] - xi[0], ry = p->pos[3 * j + 1] - xi[1], rz = p->pos[3 * j + 2] - xi[2];
        double d2 = rx * rx + ry * ry + rz * rz;
        if (d2 < best) { best = d2; nn = (uint32_t)j; }   /* ascending j: ties to the lower */
        double tau = HUGE_VAL;
        if (vi) {   /* velocities only where a pairwise step is asked for */
            double vx = e->vel[3 * j] - vi[0], vy = e->vel[3 * j + 1] - vi[1], vz = e->vel[3 * j + 2] - vi[2];
            tau = gp_pair_step(-rx, -ry, -rz, -vx, -vy, -vz, e->eps2, e->G * (mi + p->mass[j]));
            if (tau < step) step = tau;
        }
        if (e->lists && listed(e, k, d2, tau)) {
            if (list) list[nl] = (uint32_t)j;
            nl++;
        }
    }
    if (!list) {   /* the first (or only) pass writes the outputs */
        if (o->nn_index) o->nn_index[k] = nn;
        if (o->nn_dist2) o->nn_dist2[k] = nn == UINT32_MAX ? HUGE_VAL : best;
        if (o->pair_step) o->pair_step[k] = step;
    }
    return nl;
}

gp_status gp_direct_ex(gp_base *b, double G, double eps2, const uint8_t *in_src,
                       const gp_outputs *out, int nthreads)
{
    const gp_particles *p = &b->p;
    const size_t n = p->n, na = p->n_active;
    const int lists = out->nb_radius != NULL || out->nb_step > 0;
    const int need_tau = out->pair_step || out->nb_step > 0;
    double *vel = need_tau ? malloc(3 * (n ? n : 1) * sizeof *vel) : NULL;
    uint64_t *offset = lists ? malloc((na + 1) * sizeof *offset) : NULL;
    if ((need_tau && !vel) || (lists && !offset)) {
        free(vel); free(offset);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory for the velocities of %zu particles; "
                       "free memory or use fewer particles", n);
    }
    if (vel)
        for (size_t i = 0; i < n; ++i) gp_state_velocity(p, i, &vel[3 * i]);
    ex_pass e = { .p = p, .in_src = in_src, .vel = vel, .G = G, .eps2 = eps2, .out = out,
                  .lists = lists };
    const long long m = (long long)na;
    /* Threads only for work worth waking them (each k is independent, so
     * the results do not depend on it). */
    const int par = (unsigned long long)na * (unsigned long long)n >= (1ull << 18) && na > 1;
#pragma omp parallel for schedule(dynamic, 16) num_threads(nthreads) if (par)
    for (long long k = 0; k < m; ++k) {
        size_t c = one(&e, (size_t)k, gp_active_index(b, (size_t)k), NULL);
        if (lists) offset[k + 1] = c;
    }
    if (!lists) {
        free(vel);
        return GP_OK;
    }
    offset[0] = 0;
    for (size_t k = 0; k < na; ++k) offset[k + 1] += offset[k];
    uint32_t *list = malloc((offset[na] ? offset[na] : 1) * sizeof *list);
    if (!list) {
        unsigned long long total = (unsigned long long)offset[na];
        free(vel); free(offset);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory for %llu neighbours; ask for fewer "
                       "(a smaller nb_radius or nb_step)", total);
    }
#pragma omp parallel for schedule(dynamic, 16) num_threads(nthreads) if (par)
    for (long long k = 0; k < m; ++k)
        one(&e, (size_t)k, gp_active_index(b, (size_t)k), list + offset[k]);
    free(vel);
    gp_neighbours_keep(b, na, offset, list);
    return GP_OK;
}
