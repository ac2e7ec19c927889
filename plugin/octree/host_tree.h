/* SPDX-License-Identifier: Apache-2.0 */
/*
 * host_tree.h — the host (CPU) driver of the tree build: root cube, the
 * level-by-level octree and bottom-up moments, each a loop
 * over the per-element steps of gravplug_keys.h / tree.h / moments.h (OpenMP inside).
 * The CUDA plugin drives the same steps with its own kernels.
 *
 * Memory is owned by the gp_host_tree; functions return 0 on success and -1
 * when an allocation failed (the tree is then left empty but valid to free).
 */
#ifndef GP_CORE_HOST_TREE_H
#define GP_CORE_HOST_TREE_H

#include <stddef.h>
#include "gravplug_keys.h"
#include "octree/tree.h"
#include "octree/moments.h"

typedef struct gp_host_tree {
    gp_cell *cells;
    gp_moments *mom;                              /* per cell, after gp_host_tree_moments */
    uint32_t ncells;
    uint32_t nlevels;                             /* levels used, root = level 0 */
    uint32_t level_start[GP_KEY_MAX_LEVEL + 2];   /* cells of level L: [start[L], start[L+1]) */
    size_t cap;
} gp_host_tree;

/* The root cube over n points (x/y/z strided by `stride` doubles): lower
 * corner lo[3] and inv_cell = 2^21 / side. It is gp_host_cube_of_bounds of
 * gp_host_bounds (gravplug_keys.h, with the keys and their radix sort). */
typedef struct gp_cube { double lo[3], inv_cell; } gp_cube;   /* a root cube, as above */
void gp_host_root_cube(size_t n, const double *x, const double *y, const double *z,
                       size_t stride, double lo[3], double *inv_cell);

/* The octree over n sorted keys with leaves of at most leaf_size particles
 * (except at the deepest level). n must be >= 1. */
int gp_host_tree_build(gp_host_tree *t, const uint64_t *keys, uint32_t n, uint32_t leaf_size);

/* Moments of every cell from key-sorted particle arrays (SoA). Also the
 * refit: same topology, new positions. */
int gp_host_tree_moments(gp_host_tree *t, const double *x, const double *y, const double *z,
                         const double *m);

void gp_host_tree_free(gp_host_tree *t);

#endif /* GP_CORE_HOST_TREE_H */
