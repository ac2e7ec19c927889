/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_search.h — exact neighbour searches in a source tree (ABI 1.2's
 * nearest neighbours and neighbour lists for the tree plugins): no source
 * is missed because a cell is far, since a cell is skipped only when its
 * tight bounding box (the moments' lo/hi, current after a refit) lies
 * beyond the distance sought.
 *
 * Distances are unsoftened, |x_j - x|^2, from the tree's own copies of the
 * source positions. pid[k] is the particle index of the tree's k-th source
 * (key order); the source whose particle index is `self` is skipped.
 */
#ifndef GP_OCTREE_TREE_SEARCH_H
#define GP_OCTREE_TREE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "octree/tree_state.h"

/* The nearest source to x other than self: *nn its particle index (ties:
 * the lower index) and *d2 its squared distance; UINT32_MAX and HUGE_VAL
 * when the tree has no other source. */
void oct_nearest(const oct_tree *t, const uint32_t *pid, const double x[3], uint32_t self,
                 uint32_t *nn, double *d2);

/* The sources strictly within distance^2 r2 of x, other than self: their
 * particle indices go to out[0 .. cap) in the tree's order; returns how
 * many there are (which may exceed cap: then call again with more room). */
size_t oct_within(const oct_tree *t, const uint32_t *pid, const double x[3], double r2,
                  uint32_t self, uint32_t *out, size_t cap);

#endif /* GP_OCTREE_TREE_SEARCH_H */
