/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_lists.c — cpu-direct's ABI 1.2 neighbour lists (see
 * direct_lists.h).
 *
 * For each active particle i, one pass over the sources j in index order,
 * with r = x_j - x_i and v = v_j - v_i at the positions' current time
 * (velocities from the held state, gp_state_velocity): j is listed when
 * |r|^2 < nb_radius_i^2 or tau_ij < nb_step (plugin/base/pair_step.h), or
 * (ABI 1.3) its even step < nb_step_even. The sources are the plugin's
 * own arrays, with their velocities, which the lane kernel reads
 * (base/direct_kernel.c, gp_direct_list_candidates); it drops, branch-free, the pairs that
 * pair_step_bound.h proves to have tau_ij >= nb_step, and the exact tau_ij
 * is evaluated here only for the few it leaves, so the lists are the brute
 * force's. Each thread appends to its own buffer, and the lists are copied
 * out in active order, each in ascending index order. Compiled with
 * -ffp-contract=off, so tau_ij is the shared expression bit for bit
 * (module.mk).
 */
#include "direct_lists.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/direct_kernel.h"
#include "base/pair_step.h"
#include "base/base_instance.h"
#include "base/base_params.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

typedef struct list_pass {
    const gp_particles *p;
    const gp_direct_sources *src;   /* the plugin's sources, index order */
    const gp_direct_vel *vel;       /* their velocities */
    const double *tv;               /* 3 per target: their velocities */
    const gp_field_points *at;     /* explicit targets, or NULL: the
                                       active particles */
    double G, eps2;
    const gp_outputs *out;
    int prune;                      /* the step bound may be trusted */
} list_pass;

/* tau_ij < T (even: the even step < T) for the pair of target i (at xi,
 * moving with vi) and source q, exactly: the shared expression of
 * pair_step.h, with the pair's r and v as the lane kernel forms them. */
static int step_below(const list_pass *e, double mi, const double vi[3], size_t q, double rx,
                      double ry, double rz, int even, double T)
{
    double vx = e->vel->vx[q] - vi[0], vy = e->vel->vy[q] - vi[1], vz = e->vel->vz[q] - vi[2];
    double Gmu = e->G * (mi + e->src->m[q]);
    if (even) return gp_pair_step_even(-rx, -ry, -rz, -vx, -vy, -vz, e->eps2, Gmu) < T;
    return gp_pair_step(-rx, -ry, -rz, -vx, -vy, -vz, e->eps2, Gmu) < T;
}

/* A growing list of neighbours, one per thread, with the thread's buffer
 * of candidates (nc). */
typedef struct list_buf {
    uint32_t *v;
    size_t n, cap;
    uint32_t *q;
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

/* The k-th target (the k-th active particle, or point): its neighbours
 * among the sources appended to b, in index order. The lane kernel drops
 * the pairs proven unlisted; each of the rest is decided exactly here. */
static int one(const list_pass *e, const gp_base *base, size_t k, list_buf *b)
{
    const gp_particles *p = e->p;
    const gp_outputs *o = e->out;
    const gp_direct_sources *S = e->src;
    const uint32_t self = !e->at ? (uint32_t)gp_active_index(base, k)
                          : e->at->exclude ? e->at->exclude[k] : UINT32_MAX;
    const double *xi = e->at ? &e->at->pos[3 * k] : &p->pos[3 * (size_t)self], *vi = &e->tv[3 * k];
    const double mi = self != UINT32_MAX ? p->mass[self] : 0.0;
    const double rad2 = o->nb_radius ? o->nb_radius[k] * o->nb_radius[k] : -1.0;
    gp_direct_list_target t = { .x = xi[0], .y = xi[1], .z = xi[2], .vx = vi[0], .vy = vi[1],
                                .vz = vi[2], .self = self != UINT32_MAX ? (double)self : -1.0, .m = mi, .G = e->G,
                                .rad2 = rad2, .nb_step = o->nb_step,
                                .nb_step_even = o->nb_step_even, .prune = e->prune };
    size_t nq = gp_direct_list_candidates(S, e->vel, &t, e->eps2, b->q);
    for (size_t c = 0; c < nq; ++c) {
        size_t q = b->q[c], j = (size_t)S->id[q];
        double rx = S->x[q] - xi[0], ry = S->y[q] - xi[1], rz = S->z[q] - xi[2];
        double d2 = rx * rx + ry * ry + rz * rz;
        if ((o->nb_radius && d2 < rad2) ||
            (o->nb_step > 0 && step_below(e, mi, vi, q, rx, ry, rz, 0, o->nb_step)) ||
            (o->nb_step_even > 0 && step_below(e, mi, vi, q, rx, ry, rz, 1, o->nb_step_even)))
            if (push(b, (uint32_t)j) != 0) return -1;
    }
    return 0;
}

/* The list of the k-th target, appended to thread me's buffer mine, with
 * where it lies. Returns -1 when out of memory. */
static int list_of(const list_pass *e, const gp_base *b, size_t k, int me, list_buf *mine,
                   int *owner, uint64_t *start, uint64_t *offset)
{
    size_t s0 = mine->n;
    int rc = one(e, b, k, mine);
    owner[k] = me;
    start[k] = s0;
    offset[k + 1] = mine->n - s0;
    return rc;
}

static gp_status no_memory(gp_base *b, size_t n)
{
    return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                   "compute_forces_ex: no memory for the neighbour lists of %zu particles; "
                   "free memory or ask for fewer (a smaller nb_radius or nb_step)", n);
}

gp_status gp_direct_lists(gp_base *b, const gp_direct_sources *src, const gp_direct_vel *vel,
                          const double *tv, int prune, double G, double eps2,
                          const gp_outputs *out, int nthreads, const gp_field_points *at)
{
    const gp_particles *p = &b->p;
    const size_t n = p->n, na = at ? at->n : p->n_active, nc = src->n;
    /* each target is independent, so the results do not depend on nt */
    const int nt = gp_threads_for(nthreads, na, na * nc);
    uint64_t *offset = malloc((na + 1) * sizeof *offset), *start = malloc((na ? na : 1) * sizeof *start);
    int *owner = malloc((na ? na : 1) * sizeof *owner);
    list_buf *bufs = calloc((size_t)nt, sizeof *bufs);
    uint32_t *list = NULL;
    gp_status st = GP_OK;
    if (!offset || !start || !owner || !bufs) { st = no_memory(b, n); goto out; }
    for (int t = 0; t < nt; ++t)
        if (!(bufs[t].q = malloc((nc ? nc : 1) * sizeof *bufs[t].q))) { st = no_memory(b, n); goto out; }
    list_pass e = { .p = p, .src = src, .vel = vel, .tv = at ? at->vel : tv, .at = at, .G = G,
                    .eps2 = eps2, .out = out, .prune = prune };
    /* one pass: each pair's step evaluated once, each list kept in its
     * thread's buffer, then copied in active order */
    const long long m = (long long)na;
    int failed = 0;
    if (nt > 1) {
#pragma omp parallel num_threads(nt)
        {
            const int me = omp_get_thread_num();
#pragma omp for schedule(dynamic, 16)
            for (long long k = 0; k < m; ++k)
                if (list_of(&e, b, (size_t)k, me, &bufs[me], owner, start, offset) != 0) {
#pragma omp atomic write
                    failed = 1;
                }
        }
    } else {   /* serial below the threshold: base_params.h says why */
        for (long long k = 0; k < m; ++k)
            if (list_of(&e, b, (size_t)k, 0, &bufs[0], owner, start, offset) != 0) failed = 1;
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
    for (int t = 0; bufs && t < nt; ++t) { free(bufs[t].v); free(bufs[t].q); }
    free(bufs); free(owner); free(start); free(offset); free(list);
    return st;
}
