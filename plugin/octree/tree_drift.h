/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_drift.h — a source tree that follows the held state without a pass
 * over every particle: cpu-tree's block step with no O(N) pass (its
 * `drift` parameter).
 *
 * At an anchor (a build or refit at time t0, every source at its
 * prediction to t0) each source's path is the cubic of its held state
 * re-expanded about t0, and each cell moves with its sources' mean path
 * in a box grown by bounds on their departures (drift_kin.h, the rule
 * cuda-tree's kernels share). The second moment stays the anchor's (its
 * change is of the order of g over the cell's size; the grown box opens
 * such cells sooner, and rebuild = auto weighs the extra interactions
 * against a rebuild as it does for a refitted tree).
 *
 * Nothing is moved ahead of need. The walk (cpu_traverse.h) makes a cell
 * current when it is about to decide it, and a leaf's sources current
 * (their positions predicted with the ABI's expressions, the bits predict
 * would store) when it opens the leaf, each once per time: a stamp per
 * cell says for which epoch it was last made, claimed by one thread with
 * a compare-and-swap while others wait for it. Every value is a function
 * of the anchor and the time alone, so the results do not depend on the
 * thread count or on which thread made a cell.
 *
 * A particle given a new state (set_state) changes its cubic: its cells,
 * the leaf up to the root, take the difference into their means and widen
 * their bounds to cover it and the means' own shift (O(depth) a
 * particle). The bounds only grow until the next anchor.
 *
 * Needs a tree whose sources are all its particles (src_alias) and cells
 * prepared in both layouts at the anchor.
 */
#ifndef GP_OCTREE_TREE_DRIFT_H
#define GP_OCTREE_TREE_DRIFT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_instance.h"
#include "octree/drift_kin.h"
#include "octree/tree_state.h"

typedef struct oct_drift {
    int anchored;                 /* matches the tree and the held state    */
    double t0;                    /* the anchor's time                       */
    double T;                     /* the time cells are made for             */
    uint32_t epoch;               /* stamps equal to it are current          */
    uint32_t ncells, nsrc, cap_cells, cap_src;
    gp_moments *mom0;             /* per cell: the anchor's moments          */
    gp_drift_kin *kin;             /* per cell                                */
    double *coef;                 /* per source: c0 c1 c2 c3, 12 doubles     */
    uint32_t *leaf_of;            /* per source: its leaf                    */
    _Atomic uint32_t *cell_at;    /* per cell: the epoch its data were made for */
    _Atomic uint32_t *leaf_at;    /* per leaf: the epoch its sources were    */
    oct_tree *tree;
    const gp_particles *p;        /* the held state the sources follow       */
    /* the hooks' out-of-line halves, oct_drift_make_cell and _leaf, called
     * through these so that the walk's objects link without this file */
    void (*make_cell)(struct oct_drift *d, uint32_t c);
    void (*make_leaf)(struct oct_drift *d, uint32_t c);
} oct_drift;

/* Anchors d to tree t at time t0: every source is at its prediction to t0
 * (gp_lazy_all_predicted) and t's cells are prepared for mac and theta in
 * both layouts (done here). Returns 0, or -1 when out of memory (d is then
 * not anchored). */
int oct_drift_anchor(oct_drift *d, oct_tree *t, const gp_particles *p, double t0, int mac,
                     double theta);

/* After set_state of a subset (index NULL: all n_sub = n): its cubics
 * replaced in the cells above each particle, when the drifted tree takes
 * the subset (gp_drift_takes); otherwise d is no longer anchored (the
 * next call refits and anchors anew). Nothing when d is not anchored. */
void oct_drift_update(oct_drift *d, size_t n_sub, const uint32_t *index);

/* The next walks are at time T, for mac and theta: cells and leaves made
 * for anything else become stale. */
void oct_drift_to(oct_drift *d, double T, int mac, double theta);

/* oct_drift_to, then the leaves of the na particles active[] made current
 * (a force call's targets read their positions), on up to threads threads. */
void oct_drift_targets(oct_drift *d, double T, int mac, double theta, size_t na,
                       const uint32_t *active, int threads);

void oct_drift_free(oct_drift *d);

/* The out-of-line halves of the hooks below. */
void oct_drift_make_cell(oct_drift *d, uint32_t c);
void oct_drift_make_leaf(oct_drift *d, uint32_t c);

/* Cells first .. first + n - 1 current (before the walk decides them). */
static inline void oct_drift_cells(oct_drift *d, uint32_t first, uint32_t n)
{
    const uint32_t e = d->epoch;
    for (uint32_t k = 0; k < n; k++)
        if (atomic_load_explicit(&d->cell_at[first + k], memory_order_acquire) != e)
            d->make_cell(d, first + k);
}

/* Leaf c's sources current (before the walk reads them). */
static inline void oct_drift_leaf(oct_drift *d, uint32_t c)
{
    if (atomic_load_explicit(&d->leaf_at[c], memory_order_acquire) != d->epoch)
        d->make_leaf(d, c);
}

#endif /* GP_OCTREE_TREE_DRIFT_H */
