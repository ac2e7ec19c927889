/* SPDX-License-Identifier: Apache-2.0 */
/*
 * drift_kin.h — a drifted cell's motion, the per-cell steps both drifted
 * trees use (cpu-tree's tree_drift.c, cuda-tree's kernels): GP_HD, double.
 *
 * At an anchor each source's path is a cubic about t0,
 *     x(t0 + tau) = c0 + c1 tau + c2 tau^2 + c3 tau^3,
 * and each cell keeps the mass-weighted means of its sources' c1, c2, c3
 * (u, A, J) and bounds per axis on their departures from them (vb, ab,
 * jb): a leaf from its sources, a cell above from its children. At
 * t0 + tau the cell's centre of mass is the anchor's moved by
 * tau (u + tau (A + tau J)), exactly, and its sources lie in the anchor's
 * box moved with it and grown on each side by
 *     g = |tau| (vb + |tau| (ab + |tau| jb)),
 * bmax by |g|: bounds, not estimates, so the MACs tested on the grown box
 * keep their meaning. The second moment stays the anchor's.
 */
#ifndef GP_OCTREE_DRIFT_KIN_H
#define GP_OCTREE_DRIFT_KIN_H

#include <math.h>
#include <stddef.h>

#include "octree/gp_hd.h"
#include "octree/moments.h"

/* Whether a subset of n_sub of n particles (a set_state, an active
 * subset) is taken on the drifted tree: up to a quarter; for more a refit
 * and a new anchor cost less (and the drifted boxes of big steps age the
 * energy error: bench/results/block-steps/raw/block-pays.md). */
static inline GP_HD int gp_drift_takes(size_t n_sub, size_t n) { return 4 * n_sub <= n; }

/* A cell's motion: the means of its sources' c1, c2, c3 and the bounds on
 * the departures from them, per axis. */
typedef struct gp_drift_kin {
    double u[3], A[3], J[3];
    double vb[3], ab[3], jb[3];
} gp_drift_kin;

/* fmax without libm's call (every value here is finite) */
static inline GP_HD double gp_drift_max(double a, double b) { return a > b ? a : b; }

static inline GP_HD void gp_drift_kin_zero(gp_drift_kin *K)
{
    for (int a = 0; a < 3; a++)
        K->u[a] = K->A[a] = K->J[a] = K->vb[a] = K->ab[a] = K->jb[a] = 0.0;
}

/* The means, step 1 of 2: a source's (or a child's means') share, weight w. */
static inline GP_HD void gp_drift_kin_add(gp_drift_kin *K, double w, const double c1[3], const double c2[3],
                                          const double c3[3])
{
    for (int a = 0; a < 3; a++) {
        K->u[a] += w * c1[a]; K->A[a] += w * c2[a]; K->J[a] += w * c3[a];
    }
}

/* The means, step 2 of 2: divided by the summed weight M (none: 0 stays). */
static inline GP_HD void gp_drift_kin_mean(gp_drift_kin *K, double M)
{
    if (M > 0)
        for (int a = 0; a < 3; a++) { K->u[a] /= M; K->A[a] /= M; K->J[a] /= M; }
}

/* The bounds, once the means are made: a leaf's source ... */
static inline GP_HD void gp_drift_kin_bound_source(gp_drift_kin *K, const double c1[3], const double c2[3],
                                                   const double c3[3])
{
    for (int a = 0; a < 3; a++) {
        K->vb[a] = gp_drift_max(K->vb[a], fabs(c1[a] - K->u[a]));
        K->ab[a] = gp_drift_max(K->ab[a], fabs(c2[a] - K->A[a]));
        K->jb[a] = gp_drift_max(K->jb[a], fabs(c3[a] - K->J[a]));
    }
}

/* ... or a child's bounds about its own means. */
static inline GP_HD void gp_drift_kin_bound_child(gp_drift_kin *K, const gp_drift_kin *C)
{
    for (int a = 0; a < 3; a++) {
        K->vb[a] = gp_drift_max(K->vb[a], C->vb[a] + fabs(C->u[a] - K->u[a]));
        K->ab[a] = gp_drift_max(K->ab[a], C->ab[a] + fabs(C->A[a] - K->A[a]));
        K->jb[a] = gp_drift_max(K->jb[a], C->jb[a] + fabs(C->J[a] - K->J[a]));
    }
}

/* The anchor's moments mo of a cell with motion K, moved tau ahead: the
 * centre of mass moved, the box moved and grown, bmax grown. */
static inline GP_HD void gp_drift_moments_at(gp_moments *mo, const gp_drift_kin *K, double tau)
{
    const double at = fabs(tau);
    double g2 = 0;
    for (int a = 0; a < 3; a++) {
        const double dc = tau * (K->u[a] + tau * (K->A[a] + tau * K->J[a]));
        const double g = at * (K->vb[a] + at * (K->ab[a] + at * K->jb[a]));
        mo->com[a] += dc;
        mo->lo[a] += dc - g;
        mo->hi[a] += dc + g;
        g2 += g * g;
    }
    mo->bmax += sqrt(g2);
}

#endif /* GP_OCTREE_DRIFT_KIN_H */
