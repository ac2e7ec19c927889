/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs_ex.h — the tree plugins' ABI 1.2 outputs beside acc and pot: nearest
 * neighbours and neighbour lists by radius from exact tree searches
 * (octree/tree_search.c); pair_step and the lists by step exact (bit for
 * bit a pass over every source) from a pruned search of the same tree and
 * of one over the velocities (octree/pair_search.c). No jerk: the cells
 * carry no velocities.
 */
#ifndef GP_OCTREE_OUTPUTS_EX_H
#define GP_OCTREE_OUTPUTS_EX_H

#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "octree/tree_state.h"

/* For the active particles of b, or (at not NULL) for at's points, each
 * excluding the particle it names: out->nn_index, nn_dist2, pair_step and
 * pair_step_even (those not NULL) and, when nb_radius, nb_step or
 * nb_step_even asks, the neighbour lists (kept in b). out as
 * gp_outputs_read gives it (its 1.3 members present or absent); no
 * groups (a grouped call takes base/exact_ex.c's pass); at points no pair
 * steps and no lists by step (gp_field_ex_in_kernel's outputs: the pruned
 * search starts from a particle). t is the tree of the current sources,
 * pid[k] the particle index of its k-th source. vel: every particle's
 * velocity (3 doubles each), or NULL to take them from b's held state
 * (gp_state_velocity); cuda-tree, whose state lives on the GPU, passes
 * the device's. Returns GP_OK, GP_ERR_UNSUPPORTED (a pair step asked at
 * points) or GP_ERR_OUT_OF_MEMORY (sentence set, nothing kept). */
gp_status oct_outputs_ex(gp_base *b, const oct_tree *t, const uint32_t *pid, const double *vel,
                         const gp_outputs *out, double G, double eps2, int nthreads,
                         const gp_field_points *at);

#endif /* GP_OCTREE_OUTPUTS_EX_H */
