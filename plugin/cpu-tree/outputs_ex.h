/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs_ex.h — cpu-tree's ABI 1.2 outputs beside acc and pot: nearest
 * neighbours and neighbour lists by radius from exact tree searches
 * (octree/tree_search.c); pair_step and the lists by step exact, by a
 * pass over every source per active particle (O(n) each: so cpu-tree does
 * not claim GP_CAP_NEIGHBOURS). No jerk: the cells carry no velocities.
 */
#ifndef GP_CPU_TREE_OUTPUTS_EX_H
#define GP_CPU_TREE_OUTPUTS_EX_H

#include "base/plugin_base.h"
#include "octree/tree_state.h"

/* For the active particles of b: out->nn_index, nn_dist2 and pair_step
 * (those not NULL) and, when nb_radius or nb_step asks, the neighbour
 * lists (kept in b). t is the tree of the current sources, pid[k] the
 * particle index of its k-th source. vel: every particle's velocity (3
 * doubles each), or NULL to take them from b's held state
 * (gp_state_velocity); cuda-tree, whose state lives on the GPU, passes
 * the device's. Returns GP_OK or GP_ERR_OUT_OF_MEMORY (sentence set,
 * nothing kept). */
gp_status cpu_tree_outputs_ex(gp_base *b, const oct_tree *t, const uint32_t *pid,
                              const double *vel, const gp_outputs *out, double G, double eps2,
                              int nthreads);

#endif /* GP_CPU_TREE_OUTPUTS_EX_H */
