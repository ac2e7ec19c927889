/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_targets.h — the i-groups (targets) a CPU force pass walks, formed the
 * same way by cpu-tree and mpi-tree so that mpi-tree at P = 1 walks
 * cpu-tree's groups: for an active subset, the active part of each tree
 * group; for field points, the points sorted along the tree's curve and cut
 * into runs of group_size, loose runs split (tree_state.h). Index work and
 * copies only: the group spheres are left to the caller.
 */
#ifndef GP_OCTREE_CPU_TARGETS_H
#define GP_OCTREE_CPU_TARGETS_H

#include <stddef.h>
#include <stdint.h>

#include "octree/tree_state.h"

/* The active particles active[0..na) of tree t in the tree's key order
 * (never the caller's order, never the threads'): target u is key-sorted
 * particle tix[u] at (x, y, z)[u], its result goes to slot[u] (its place
 * in active[]); runs rb/rc (*nruns of them) are the active part of each
 * tree group. Every array has room for na (at least 1). Returns 0, or -1
 * when out of memory. O(na) from 256 active particles (a radix sort of
 * their ranks on up to nthreads threads), O(na log na) below. */
int oct_active_groups(const oct_tree *t, size_t na, const uint32_t *active, int nthreads,
                      uint32_t *tix, size_t *slot, double *x, double *y, double *z, uint32_t *rb,
                      uint32_t *rc, uint32_t *nruns);

/* The sphere of the whole tree group holding key-sorted particle i
 * (subset_spheres = whole: a run of active particles walked as its group
 * would be in a full call). */
void oct_whole_group_sphere(const oct_tree *t, uint32_t i, double centre[3], double *radius);

/* Field points points[3m] (m > 0) as targets: keys of kind in the cube
 * lo/inv_cell, sorted; target i is point perm[i] at (x, y, z)[i]; runs of
 * G along the curve, loose runs split. perm, x, y, z have room for m;
 * rb and rc point to malloc'd arrays with room for ceil(m / G) runs,
 * which the split reallocates (*nruns runs on return). Returns 0, -1 (no memory for the
 * keys), -3 (no memory to sort them) or -2 (no memory to split runs). */
int oct_field_groups(size_t m, const double *points, gp_key_kind kind, const double lo[3],
                     double inv_cell, uint32_t G, uint32_t *perm, double *x, double *y,
                     double *z, uint32_t *nruns, uint32_t **rb, uint32_t **rc);

#endif /* GP_OCTREE_CPU_TARGETS_H */
