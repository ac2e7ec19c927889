/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_search.h — ABI 1.2's pair_step (the smallest tau_ij over the
 * sources, base/pair_step.h) and the lists by step (the sources with
 * tau_ij < nb_step) from a pruned search of a source tree, exact: a cell
 * is skipped only when a rigorous lower bound of tau_ij over its sources
 * (octree/pair_bound.h) is at or above what is sought, a pair of an
 * opened leaf only when base/pair_step_bound.h proves its tau_ij at or
 * above it (the root-free per-pair test cpu-direct uses, tight enough
 * that about 2 pairs per particle remain), and every pair not skipped is
 * evaluated with gp_pair_step itself, so the minimum and the lists are
 * those of a pass over every source, bit for bit.
 *
 * The bound needs per cell, beside the position box of the moments
 * (lo/hi, current after a build or refit with moments), the box of the
 * sources' velocities and their largest mass. It falls to 0 for a cell
 * whose velocity box holds v_i: an approaching pair's fly-by step shrinks
 * without limit as its relative speed w -> 0. With velocity dispersion
 * that is most cells down to the leaves (Plummer, galaxy: ~40% of all
 * pairs evaluated), so the pairs are split by w: those with w below a
 * small W (the slow pairs; W = 1/1024 of the velocity extent) come from
 * a search of a second tree, over the sources' velocities, within W of
 * v_i, and the position search bounds
 * only pairs with w >= W, which prunes far cells whatever their velocity
 * boxes hold. Both sides use one predicate (|v_i - v_j|^2 < W^2, computed
 * once per pair), so each pair is evaluated by one side exactly.
 * oct_pair_index_build makes all this, O(sources log sources), once per
 * call (velocities are the state's, known only when the outputs are
 * asked for); with few targets it leaves the velocity tree out, and each
 * search finds its slow pairs by a vectorised scan of the sources'
 * velocities instead.
 *
 * Sources count as the brute force counts them: the tree's sources with
 * mass > 0 (a source whose mass dropped to 0 stays in a refitted tree),
 * never particle i itself. pid[k] is the particle index of the tree's
 * k-th source; positions, velocities and masses are by particle index.
 */
#ifndef GP_OCTREE_PAIR_SEARCH_H
#define GP_OCTREE_PAIR_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "octree/tree_state.h"

/* What the bound knows of a source cell beyond its position box. */
typedef struct oct_pair_cell {
    double vlo[3], vhi[3];   /* box of the sources' velocities */
    double mmax;             /* largest source mass            */
} oct_pair_cell;

/* Sources' positions, velocities and masses in the order of a tree's
 * leaves (one block), so a leaf's pairs are screened from contiguous
 * columns. */
typedef struct oct_pair_columns {
    double *x, *y, *z, *vx, *vy, *vz, *m;
    double *block;
} oct_pair_columns;

/* The columns of oct_pair_index.box: position box, velocity box, mass. */
enum { BOX_PLO = 0, BOX_PHI = 3, BOX_VLO = 6, BOX_VHI = 9, BOX_MMAX = 12, BOX_FIELDS = 13 };

typedef struct oct_pair_index {
    const oct_tree *t;       /* the source tree (positions)             */
    const uint32_t *pid;     /* particle index of t's k-th source       */
    oct_pair_cell *pc;       /* per cell of t                           */
    double *box;             /* per cell of t, as columns: BOX_* * ncells */
    oct_tree vt;             /* the massive sources' velocities, as points */
    uint32_t *vpid;          /* particle index of vt's k-th source      */
    double w2_split;         /* W^2: slower pairs are found through vt  */
    oct_pair_columns src;    /* t's sources, in t's order               */
    oct_pair_columns vsrc;   /* vt's sources, in vt's order             */
} oct_pair_index;

/* The index of t's sources with positions pos, velocities vel and masses
 * mass (by particle index; queries must pass the same values), for about
 * ntargets searches: with few, the slow pairs are found by a scan of the
 * sources' velocities instead of a velocity tree (vt then empty), which
 * costs more per search than the tree's build saves. Returns 0, or -1
 * when out of memory (ix then empty). */
int oct_pair_index_build(oct_pair_index *ix, const oct_tree *t, const uint32_t *pid,
                         const double *pos, const double *vel, const double *mass,
                         size_t ntargets);
void oct_pair_index_free(oct_pair_index *ix);

typedef struct oct_pair_query {
    const double *pos, *vel, *mass;   /* every particle, interleaved xyz
                                         (vel, mass: the index's)           */
    double G, eps2;
    int want_min;                     /* the minimum is sought             */
    double nb_step;                   /* > 0: hit() each source below it   */
    int (*hit)(void *ctx, uint32_t j);/* nonzero return: stop (no memory)  */
    void *ctx;
    int even;                         /* ABI 1.3: the even step
                                         (gp_pair_step_even) instead of
                                         tau_ij, every bound taken over
                                         both signs of the velocity        */
} oct_pair_query;

/* For particle i: calls q->hit for each source j with tau_ij < nb_step
 * (in no particular order) and, when q->want_min, returns the smallest
 * tau_ij (HUGE_VAL when there is no source). seed is some source's tau_ij
 * (e.g. the nearest one's), or HUGE_VAL: it only lets pruning start
 * early. *evals (when not NULL) grows by the number of tau_ij evaluated.
 * Returns NAN when hit() asked to stop. */
double oct_pair_search(const oct_pair_index *ix, const oct_pair_query *q, uint32_t i,
                       double seed, size_t *evals);

#endif /* GP_OCTREE_PAIR_SEARCH_H */
