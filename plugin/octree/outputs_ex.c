/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs_ex.c — the tree plugins' ABI 1.2 outputs (see outputs_ex.h).
 *
 * Each active particle's neighbours come out in ascending index order:
 * the tree searches' hits by radius and by step, merged. pair_step and
 * the hits by step come from one pruned search (octree/pair_search.c),
 * seeded with the nearest source's tau when nn is asked for too.
 * Lists are made per particle and then packed into the CSR arrays, so
 * threads never share a buffer. Compiled with -ffp-contract=off, so
 * pair_step is the shared expression (base/pair_step.h) bit for bit.
 */
#include "octree/outputs_ex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"
#include "octree/pair_search.h"
#include "octree/tree_search.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

typedef struct hits {
    uint32_t *v;
    size_t n, cap;
} hits;

/* Room for `more` entries after the n already held; 0 or -1. */
static int hits_reserve(hits *h, size_t more)
{
    if (h->n + more <= h->cap) return 0;
    size_t cap = h->cap ? h->cap : 16;
    while (cap < h->n + more) cap *= 2;
    uint32_t *v = realloc(h->v, cap * sizeof *v);
    if (!v) return -1;
    h->v = v;
    h->cap = cap;
    return 0;
}

static int hits_push(hits *h, uint32_t x)
{
    if (hits_reserve(h, 1)) return -1;
    h->v[h->n++] = x;
    return 0;
}

/* oct_pair_search's hit(): one source below nb_step. */
static int hit_push(void *ctx, uint32_t j) { return hits_push(ctx, j); }

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorted, each index once (a source may be hit by radius and by step). */
static void sort_unique(hits *h)
{
    if (h->n < 2) return;   /* also keeps an empty list's NULL out of qsort */
    qsort(h->v, h->n, sizeof *h->v, cmp_u32);
    size_t w = 0;
    for (size_t r = 0; r < h->n; r++)
        if (w == 0 || h->v[r] != h->v[w - 1]) h->v[w++] = h->v[r];
    h->n = w;
}

gp_status oct_outputs_ex(gp_base *b, const oct_tree *t, const uint32_t *pid, const double *vel_in,
                         const gp_outputs *out, double G, double eps2, int nthreads,
                         const gp_field_points *at)
{
    const gp_particles *p = &b->p;
    const size_t n = p->n, na = at ? at->n : p->n_active;
    const char *fn = at ? "compute_field_ex" : "compute_forces_ex";
    const int by_step = out->nb_step > 0, by_even = out->nb_step_even > 0;
    const int lists = out->nb_radius || by_step || by_even;
    const int pass = out->pair_step || by_step, pass_even = out->pair_step_even || by_even;
    if (at && (pass || pass_even))
        return gp_fail(b, GP_ERR_UNSUPPORTED,
                       "%s: the tree's pair-step search runs from particles, not points; "
                       "take the exact pass (gp_field_ex_exact) for pair steps at points", fn);
    double *held = (pass || pass_even) && !vel_in ? malloc(3 * (n ? n : 1) * sizeof *held) : NULL;
    const double *vel = vel_in ? vel_in : held;
    oct_pair_index ix = { 0 };
    hits *h = lists ? calloc(na ? na : 1, sizeof *h) : NULL;
    int no_index = 0;
    if ((pass || pass_even) && vel) {
        if (held)
            for (size_t i = 0; i < n; ++i) gp_state_velocity(p, i, &held[3 * i]);
        no_index = oct_pair_index_build(&ix, t, pid, p->pos, vel, p->mass, na) != 0;
    }
    if (((pass || pass_even) && (!vel || no_index)) || (lists && !h)) {
        free(held); free(h);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the neighbour search of %zu particles; "
                       "free memory or use fewer particles", fn, na);
    }
    int failed = 0;
    const long long m = (long long)na;
#pragma omp parallel for schedule(dynamic, 16) num_threads(nthreads) reduction(| : failed)
    for (long long kk = 0; kk < m; ++kk) {
        const size_t k = (size_t)kk;
        /* i: the particle the target excludes (a point may exclude none) */
        const size_t i = at ? (at->exclude ? at->exclude[k] : UINT32_MAX) : gp_active_index(b, k);
        const double *x = at ? &at->pos[3 * k] : &p->pos[3 * i];
        uint32_t nn = UINT32_MAX;
        if (out->nn_index || out->nn_dist2) {
            double d2;
            oct_nearest(t, pid, x, (uint32_t)i, &nn, &d2);
            if (out->nn_index) out->nn_index[k] = nn;
            if (out->nn_dist2) out->nn_dist2[k] = d2;
        }
        if (out->nb_radius) {
            double r2 = out->nb_radius[k] * out->nb_radius[k];
            size_t c = oct_within(t, pid, x, r2, (uint32_t)i, NULL, 0);   /* count, then fill */
            if (!failed && !(failed = hits_reserve(&h[k], c) != 0)) {
                oct_within(t, pid, x, r2, (uint32_t)i, h[k].v + h[k].n, c);
                h[k].n += c;
            }
        }
        /* tau_ij, then (ABI 1.3) the even step: one pruned search each */
        for (int even = 0; even < 2; ++even) {
            if (failed || !(even ? pass_even : pass)) continue;
            double *dst = even ? out->pair_step_even : out->pair_step;
            oct_pair_query q = { p->pos, vel, p->mass, G, eps2, dst != NULL,
                                 even ? out->nb_step_even : out->nb_step, hit_push,
                                 lists ? &h[k] : NULL, even };
            double seed = HUGE_VAL;   /* the nearest source's step, when known */
            if (nn != UINT32_MAX && p->mass[nn] > 0) {
                const double *vi = &vel[3 * i], *xj = &p->pos[3 * (size_t)nn], *vj = &vel[3 * (size_t)nn];
                double dx = x[0] - xj[0], dy = x[1] - xj[1], dz = x[2] - xj[2];
                double dvx = vi[0] - vj[0], dvy = vi[1] - vj[1], dvz = vi[2] - vj[2];
                double Gmu = G * (p->mass[i] + p->mass[nn]);
                seed = even ? gp_pair_step_even(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu)
                            : gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu);
            }
            double step = oct_pair_search(&ix, &q, (uint32_t)i, seed, NULL);
            if (isnan(step)) failed = 1;
            else if (dst) dst[k] = step;
        }
        if (lists && !failed) sort_unique(&h[k]);
    }
    free(held);
    oct_pair_index_free(&ix);
    if (!lists) return GP_OK;
    uint64_t *offset = failed ? NULL : malloc((na + 1) * sizeof *offset);
    uint32_t *list = NULL;
    if (offset) {
        offset[0] = 0;
        for (size_t k = 0; k < na; ++k) offset[k + 1] = offset[k] + h[k].n;
        list = malloc((offset[na] ? offset[na] : 1) * sizeof *list);
        if (list)
            for (size_t k = 0; k < na; ++k)
                if (h[k].n) memcpy(list + offset[k], h[k].v, h[k].n * sizeof *list);
    }
    for (size_t k = 0; k < na; ++k) free(h[k].v);
    free(h);
    if (!offset || !list) {
        free(offset); free(list);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the neighbour lists; ask for fewer "
                       "(a smaller nb_radius or nb_step)", fn);
    }
    gp_neighbours_keep(b, na, offset, list);
    return GP_OK;
}
