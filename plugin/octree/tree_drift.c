/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_drift.c — the drifted source tree (tree_drift.h): the anchor, the
 * cells and leaves made current on demand, a new state folded in.
 */
#include "octree/tree_drift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_state.h"

/* Stamps: an epoch, or an epoch with BUSY while one thread makes it. */
#define BUSY 0x80000000u

/* fmin without libm's call, as drift_kin.h's gp_drift_max (every value is finite) */
static inline double dmin(double a, double b) { return a < b ? a : b; }

void oct_drift_free(oct_drift *d)
{
    free(d->mom0); free(d->kin); free(d->coef); free(d->leaf_of);
    free((void *)d->cell_at); free((void *)d->leaf_at);
    memset(d, 0, sizeof *d);
}

static int reserve(oct_drift *d, uint32_t nc, uint32_t ns)
{
    if (nc > d->cap_cells) {
        free(d->mom0); free(d->kin); free((void *)d->cell_at); free((void *)d->leaf_at);
        d->mom0 = malloc((size_t)nc * sizeof *d->mom0);
        d->kin = malloc((size_t)nc * sizeof *d->kin);
        d->cell_at = malloc((size_t)nc * sizeof *d->cell_at);
        d->leaf_at = malloc((size_t)nc * sizeof *d->leaf_at);
        d->cap_cells = nc;
        if (!d->mom0 || !d->kin || !d->cell_at || !d->leaf_at) { d->cap_cells = 0; return -1; }
    }
    if (ns > d->cap_src) {
        free(d->coef); free(d->leaf_of);
        d->coef = malloc((size_t)ns * 12 * sizeof *d->coef);
        d->leaf_of = malloc((size_t)ns * sizeof *d->leaf_of);
        d->cap_src = ns;
        if (!d->coef || !d->leaf_of) { d->cap_src = 0; return -1; }
    }
    return 0;
}

/* Particle i's cubic about t0: c[0..2] position, c[3..5] velocity,
 * c[6..8] a/2, c[9..11] j/6, all at t0 (an unstated particle stands still);
 * position 0: c[0..2] left to the caller. */
static void cubic_of(const gp_particles *p, size_t i, double t0, double c[12], int position)
{
    if (position) gp_state_position_at(p, i, t0, c);
    gp_state_velocity_at(p, i, t0, c + 3);
    if (!p->stated || !p->stated[i]) {
        for (int k = 6; k < 12; k++) c[k] = 0;
        return;
    }
    const double dt = t0 - p->t[i];
    const int third = p->third && p->third[i];
    for (int a = 0; a < 3; a++) {
        double j = third ? p->jerk[3 * i + a] : 0.0;
        c[6 + a] = 0.5 * (p->acc[3 * i + a] + j * dt);
        c[9 + a] = j / 6.0;
    }
}

/* Resets every stamp when the epochs run out (once in 2^31 times). */
static void next_epoch(oct_drift *d)
{
    if (++d->epoch < BUSY) return;
    for (uint32_t c = 0; c < d->ncells; c++) {
        atomic_store_explicit(&d->cell_at[c], 0, memory_order_relaxed);
        atomic_store_explicit(&d->leaf_at[c], 0, memory_order_relaxed);
    }
    d->epoch = 1;
}

/* Cell c's motion from its sources (a leaf) or its children. */
static void combine(oct_drift *d, const oct_tree *t, uint32_t c)
{
    const gp_cell *cl = &t->st.cells[c];
    gp_drift_kin *K = &d->kin[c];
    gp_drift_kin_zero(K);
    double M = 0;
    if (!cl->nchild) {
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            d->leaf_of[k] = c;
            const double *q = &d->coef[12 * (size_t)k], w = t->sm[k];
            M += w;
            gp_drift_kin_add(K, w, q + 3, q + 6, q + 9);
        }
    } else {
        for (uint32_t h = cl->child; h < cl->child + cl->nchild; h++) {
            const double w = d->mom0[h].m;
            M += w;
            gp_drift_kin_add(K, w, d->kin[h].u, d->kin[h].A, d->kin[h].J);
        }
    }
    gp_drift_kin_mean(K, M);
    if (!cl->nchild) {
        for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
            const double *q = &d->coef[12 * (size_t)k];
            gp_drift_kin_bound_source(K, q + 3, q + 6, q + 9);
        }
        return;
    }
    for (uint32_t h = cl->child; h < cl->child + cl->nchild; h++) gp_drift_kin_bound_child(K, &d->kin[h]);
}

int oct_drift_anchor(oct_drift *d, oct_tree *t, const gp_particles *p, double t0, int mac,
                     double theta)
{
    d->anchored = 0;
    if (!t->src_alias || t->nsrc == 0) return -1;
    const uint32_t nc = t->st.ncells, ns = t->nsrc;
    if (reserve(d, nc, ns)) return -1;
    oct_tree_prepare_cells(t, mac, theta, OCT_PREPARE_RECORDS | OCT_PREPARE_COLUMNS);
    d->ncells = nc;
    d->nsrc = ns;
    d->tree = t;
    d->p = p;
    memcpy(d->mom0, t->st.mom, (size_t)nc * sizeof *d->mom0);
    #pragma omp parallel for schedule(static) if (ns > 8192)
    for (uint32_t k = 0; k < ns; k++) {
        double *q = &d->coef[12 * (size_t)k];
        cubic_of(p, t->order[k], t0, q, 0);
        q[0] = t->sx[k]; q[1] = t->sy[k]; q[2] = t->sz[k];   /* the refit's: the same bits */
    }
    /* bottom-up, a level at a time (a cell's children are on the next),
     * each cell from its own sources or children: any thread count */
    for (uint32_t L = t->st.nlevels; L-- > 0;) {
        const uint32_t lo = t->st.level_start[L], hi = t->st.level_start[L + 1];
#pragma omp parallel for schedule(static) if (hi - lo > 2048)
        for (uint32_t c = lo; c < hi; c++) combine(d, t, c);
    }
    /* everything is current at t0: the cells were just prepared, the
     * sources are at t0 */
    next_epoch(d);
    for (uint32_t c = 0; c < nc; c++) {
        atomic_store_explicit(&d->cell_at[c], d->epoch, memory_order_relaxed);
        atomic_store_explicit(&d->leaf_at[c], d->epoch, memory_order_relaxed);
    }
    d->t0 = d->T = t0;
    d->make_cell = oct_drift_make_cell;
    d->make_leaf = oct_drift_make_leaf;
    d->anchored = 1;
    return 0;
}

void oct_drift_update(oct_drift *d, size_t n_sub, const uint32_t *index)
{
    if (!d->anchored || n_sub == 0) return;
    if (!index || !gp_drift_takes(n_sub, d->p->n)) {
        d->anchored = 0;
        return;
    }
    oct_tree *t = d->tree;
    const gp_cell *cells = t->st.cells;
    for (size_t k = 0; k < n_sub; k++) {
        const size_t i = index ? index[k] : k;
        const uint32_t s = t->rank[i];
        double nw[12], dl[12];
        cubic_of(d->p, i, d->t0, nw, 1);
        double *old = &d->coef[12 * (size_t)s];
        for (int q = 0; q < 12; q++) dl[q] = nw[q] - old[q];
        const double m = t->sm[s];
        for (uint32_t c = d->leaf_of[s];; c = cells[c].parent) {
            gp_moments *m0 = &d->mom0[c];
            gp_drift_kin *K = &d->kin[c];
            const double w = m0->m > 0 ? m / m0->m : 0.0;
            double shift2 = 0, r2 = 0;
            for (int a = 0; a < 3; a++) {
                const double dc = w * dl[a], du = w * dl[3 + a], dA = w * dl[6 + a],
                             dJ = w * dl[9 + a];
                m0->com[a] += dc;
                K->u[a] += du; K->A[a] += dA; K->J[a] += dJ;
                m0->lo[a] = dmin(m0->lo[a], nw[a]);
                m0->hi[a] = gp_drift_max(m0->hi[a], nw[a]);
                K->vb[a] = gp_drift_max(K->vb[a] + fabs(du), fabs(nw[3 + a] - K->u[a]));
                K->ab[a] = gp_drift_max(K->ab[a] + fabs(dA), fabs(nw[6 + a] - K->A[a]));
                K->jb[a] = gp_drift_max(K->jb[a] + fabs(dJ), fabs(nw[9 + a] - K->J[a]));
                shift2 += dc * dc;
                const double r = nw[a] - m0->com[a];
                r2 += r * r;
            }
            m0->bmax = gp_drift_max(m0->bmax + sqrt(shift2), sqrt(r2));
            if (c == 0) break;
        }
        memcpy(old, nw, sizeof nw);
    }
    next_epoch(d);
}

void oct_drift_to(oct_drift *d, double T, int mac, double theta)
{
    oct_tree *t = d->tree;
    if (T == d->T && t->prepared_mac == mac && t->prepared_theta == theta) return;
    t->prepared_mac = mac;
    t->prepared_theta = theta;
    d->T = T;
    next_epoch(d);
}

void oct_drift_targets(oct_drift *d, double T, int mac, double theta, size_t na,
                       const uint32_t *active, int threads)
{
    oct_drift_to(d, T, mac, theta);
    const uint32_t *rank = d->tree->rank;
#pragma omp parallel for schedule(static) num_threads(threads) if (na > 4096)
    for (size_t k = 0; k < na; k++) oct_drift_leaf(d, d->leaf_of[rank[active[k]]]);
}

/* Claims stamp *at for this epoch: 1 when the caller must make it (and
 * then publish), 0 when another thread made it (waited for). */
static int claim(_Atomic uint32_t *at, uint32_t e)
{
    uint32_t seen = atomic_load_explicit(at, memory_order_acquire);
    while (seen != e) {
        if (seen == (e | BUSY)) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            seen = atomic_load_explicit(at, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(at, &seen, e | BUSY, memory_order_acquire,
                                                  memory_order_acquire))
            return 1;
    }
    return 0;
}

void oct_drift_make_cell(oct_drift *d, uint32_t c)
{
    const uint32_t e = d->epoch;
    if (!claim(&d->cell_at[c], e)) return;
    gp_moments mo = d->mom0[c];
    gp_drift_moments_at(&mo, &d->kin[c], d->T - d->t0);
    oct_tree *t = d->tree;
    t->st.mom[c] = mo;   /* the double walk's payload */
    oct_tree_prepare_cell(t, c, &mo);
    atomic_store_explicit(&d->cell_at[c], e, memory_order_release);
}

void oct_drift_make_leaf(oct_drift *d, uint32_t c)
{
    const uint32_t e = d->epoch;
    if (!claim(&d->leaf_at[c], e)) return;
    oct_tree *t = d->tree;
    const gp_cell *cl = &t->st.cells[c];
    for (uint32_t k = cl->begin; k < cl->begin + cl->count; k++) {
        double x[3];
        gp_state_position_at(d->p, t->order[k], d->T, x);
        t->sx[k] = x[0]; t->sy[k] = x[1]; t->sz[k] = x[2];
    }
    atomic_store_explicit(&d->leaf_at[c], e, memory_order_release);
}
