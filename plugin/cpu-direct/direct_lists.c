/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_lists.c — cpu-direct's ABI 1.2 neighbour lists (see
 * direct_lists.h).
 *
 * For each active particle i, one loop over the sources j in index order,
 * with r = x_j - x_i and v = v_j - v_i at the positions' current time
 * (velocities from the held state, gp_state_velocity): j is listed when
 * |r|^2 < nb_radius_i^2 or tau_ij < nb_step (plugin/base/pair_step.h), or
 * (ABI 1.3) its even step < nb_step_even.
 * The exact tau_ij is evaluated only for the pairs that
 * pair_step_bound.h cannot prove to have tau_ij >= nb_step. The loop runs
 * over the sources only (gathered once per call), and once: each thread
 * appends to its own buffer, and the lists are copied out in active order,
 * each in ascending index order. Compiled with -ffp-contract=off, so
 * tau_ij is the shared expression bit for bit (module.mk).
 */
#include "direct_lists.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"
#include "base/pair_step_bound.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

typedef struct list_pass {
    const gp_particles *p;
    const uint8_t *in_src;
    const double *vel;       /* 3n: every particle's velocity; NULL when no
                                list by step is asked for */
    double G, eps2;
    const gp_outputs *out;
    gp_step_bound bound;     /* proves tau_ij >= nb_step */
    gp_step_bound bound_even;/* ABI 1.3: the even step >= nb_step_even */
} list_pass;

static int is_source(const list_pass *e, size_t j)
{
    return e->p->mass[j] > 0.0 && (!e->in_src || e->in_src[j]);
}

/* tau_ij < nb_step (even: the even step < nb_step_even), evaluated
 * exactly only where the bound cannot say no (for both signs of r.v when
 * even). */
static int step_below(const list_pass *e, size_t i, size_t j, double rx, double ry, double rz,
                      int even)
{
    const double *vi = &e->vel[3 * i], *vj = &e->vel[3 * j];
    double vx = vj[0] - vi[0], vy = vj[1] - vi[1], vz = vj[2] - vi[2];
    double Gmu = e->G * (e->p->mass[i] + e->p->mass[j]);
    double r2 = rx * rx + ry * ry + rz * rz + e->eps2;
    const gp_step_bound *bd = even ? &e->bound_even : &e->bound;
    if (r2 > 0.0) {
        double c = 1.0 / sqrt(r2), rv = rx * vx + ry * vy + rz * vz, v2 = vx * vx + vy * vy + vz * vz;
        if (gp_step_bound_holds(bd, c, rv, v2, Gmu) &&
            (!even || gp_step_bound_holds(bd, c, -rv, v2, Gmu)))
            return 0;
    }
    if (even)
        return gp_pair_step_even(-rx, -ry, -rz, -vx, -vy, -vz, e->eps2, Gmu) < e->out->nb_step_even;
    return gp_pair_step(-rx, -ry, -rz, -vx, -vy, -vz, e->eps2, Gmu) < e->out->nb_step;
}

/* A growing list of neighbours, one per thread. */
typedef struct list_buf {
    uint32_t *v;
    size_t n, cap;
} list_buf;

static int push(list_buf *b, uint32_t j)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        uint32_t *grown = realloc(b->v, cap * sizeof *grown);
        if (!grown) return -1;
        b->v = grown;
        b->cap = cap;
    }
    b->v[b->n++] = j;
    return 0;
}

/* One active particle (the k-th, particle i): its neighbours among the
 * candidate sources cand[0..nc) appended to b, in index order. */
static int one(const list_pass *e, size_t k, size_t i, const uint32_t *cand, size_t nc, list_buf *b)
{
    const gp_particles *p = e->p;
    const gp_outputs *o = e->out;
    const double *xi = &p->pos[3 * i];
    const double rad2 = o->nb_radius ? o->nb_radius[k] * o->nb_radius[k] : -1.0;
    for (size_t c = 0; c < nc; ++c) {
        size_t j = cand[c];
        if (j == i) continue;
        double rx = p->pos[3 * j] - xi[0], ry = p->pos[3 * j + 1] - xi[1], rz = p->pos[3 * j + 2] - xi[2];
        double d2 = rx * rx + ry * ry + rz * rz;
        if ((o->nb_radius && d2 < rad2) || (o->nb_step > 0 && step_below(e, i, j, rx, ry, rz, 0)) ||
            (o->nb_step_even > 0 && step_below(e, i, j, rx, ry, rz, 1)))
            if (push(b, (uint32_t)j) != 0) return -1;
    }
    return 0;
}

static gp_status no_memory(gp_base *b, size_t n)
{
    return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                   "compute_forces_ex: no memory for the neighbour lists of %zu particles; "
                   "free memory or ask for fewer (a smaller nb_radius or nb_step)", n);
}

gp_status gp_direct_lists(gp_base *b, double G, double eps2, const uint8_t *in_src,
                          const gp_outputs *out, int nthreads)
{
    const gp_particles *p = &b->p;
    const size_t n = p->n, na = p->n_active;
    const int need_tau = out->nb_step > 0 || out->nb_step_even > 0;
    /* Threads only for work worth waking them (each k is independent, so
     * the results do not depend on it). */
    const int par = (unsigned long long)na * (unsigned long long)n >= (1ull << 18) && na > 1;
    const int nt = par && nthreads > 1 ? nthreads : 1;
    double *vel = need_tau ? malloc(3 * (n ? n : 1) * sizeof *vel) : NULL;
    uint32_t *cand = malloc((n ? n : 1) * sizeof *cand);
    uint64_t *offset = malloc((na + 1) * sizeof *offset), *start = malloc((na ? na : 1) * sizeof *start);
    int *owner = malloc((na ? na : 1) * sizeof *owner);
    list_buf *bufs = calloc((size_t)nt, sizeof *bufs);
    uint32_t *list = NULL;
    gp_status st = GP_OK;
    if ((need_tau && !vel) || !cand || !offset || !start || !owner || !bufs) { st = no_memory(b, n); goto out; }
    if (vel)
        for (size_t i = 0; i < n; ++i) gp_state_velocity(p, i, &vel[3 * i]);
    list_pass e = { .p = p, .in_src = in_src, .vel = vel, .G = G, .eps2 = eps2, .out = out,
                  .bound = gp_step_bound_for(out->nb_step > 0 ? out->nb_step : HUGE_VAL),
                  .bound_even = gp_step_bound_for(out->nb_step_even > 0 ? out->nb_step_even : HUGE_VAL) };
    /* the sources once, so a small subset costs its size, not n, per
     * active particle */
    size_t nc = 0;
    for (size_t j = 0; j < n; ++j)
        if (is_source(&e, j)) cand[nc++] = (uint32_t)j;
    /* one pass: each pair's step evaluated once, each list kept in its
     * thread's buffer, then copied in active order */
    const long long m = (long long)na;
    int failed = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        list_buf *mine = &bufs[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 16)
        for (long long k = 0; k < m; ++k) {
            size_t s0 = mine->n;
            if (one(&e, (size_t)k, gp_active_index(b, (size_t)k), cand, nc, mine) != 0) {
#pragma omp atomic write
                failed = 1;
            }
            owner[k] = omp_get_thread_num();
            start[k] = s0;
            offset[k + 1] = mine->n - s0;
        }
    }
    if (failed) { st = no_memory(b, n); goto out; }
    offset[0] = 0;
    for (size_t k = 0; k < na; ++k) offset[k + 1] += offset[k];
    list = malloc((offset[na] ? offset[na] : 1) * sizeof *list);
    if (!list) { st = no_memory(b, n); goto out; }
    for (size_t k = 0; k < na; ++k)   /* an empty list may have no buffer */
        if (offset[k + 1] > offset[k])
            memcpy(list + offset[k], bufs[owner[k]].v + start[k], (offset[k + 1] - offset[k]) * sizeof *list);
    gp_neighbours_keep(b, na, offset, list);
    offset = NULL;   /* kept */
    list = NULL;
out:
    for (int t = 0; bufs && t < nt; ++t) free(bufs[t].v);
    free(bufs); free(owner); free(start); free(offset); free(list); free(cand); free(vel);
    return st;
}
