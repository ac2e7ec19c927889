/* SPDX-License-Identifier: Apache-2.0 */
/*
 * targets.h — what one rank walks in a force pass: its i-groups (runs of
 * targets along the curve), each with the sphere the walk, the domain
 * boxes and the LET cut all measure from. Kept apart from the pass so that
 * forces and field points, which group differently, feed the same pass.
 */
#ifndef GP_MPI_TREE_TARGETS_H
#define GP_MPI_TREE_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "octree/tree_state.h"

/* A pass's targets: runs rb/rc over target slots u, at x/y/z[u], skipping
 * local source self[u] (-1: none), result to output slot[u]. */
typedef struct mpi_tree_targets {
    uint32_t nruns;
    uint32_t *rb, *rc;
    double *x, *y, *z;
    int32_t *self;
    size_t *slot;
    double *centre, *radius;   /* per run */
    double *amin;              /* per run, acceleration MAC; NULL otherwise */
    void *owned[8];            /* freed by mpi_tree_targets_free */
} mpi_tree_targets;

void mpi_tree_targets_free(mpi_tree_targets *T);

/* The active particles as targets: the tree's groups when all are active
 * (active == NULL); for a subset active[0..na), the active part of each
 * tree group (cpu-tree's rule); none_active: no target at all. Groups
 * wider than `wide` times the median are halved (wide_split). whole
 * (subset_spheres = whole): every run keeps the sphere of its whole tree
 * group and none is halved, so a particle's groups do not depend on which
 * others are active. A large subset is sorted on up to nthreads threads.
 * Returns 0 or -1 (memory). */
int mpi_tree_targets_forces(const oct_tree *t, int none_active, size_t na, const uint32_t *active,
                            double wide, int whole, int nthreads, mpi_tree_targets *T);

/* Field points points[3m] as targets: sorted along the tree's curve (in a
 * cube around the points), runs of group_size, loose runs split (cpu-tree's
 * compute_field), then wide runs halved as above. Returns 0 or -1. */
int mpi_tree_targets_field(const oct_tree *t, size_t m, const double *points, double wide,
                           mpi_tree_targets *T);

#endif /* GP_MPI_TREE_TARGETS_H */
