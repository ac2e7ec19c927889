/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_params.h — the parameter rows of the tree walk that every tree
 * plugin (cpu-tree, mpi-tree, cuda-tree) lists: the opening criteria
 * (octree/mac.h) and the cells' multipole order. Written once, so the
 * plugins accept the same names, defaults and ranges and say the same
 * about them; each plugin's own rows (rebuild, precision, ...) stay in its
 * table, because they describe what differs.
 */
#ifndef GP_OCTREE_TREE_PARAMS_H
#define GP_OCTREE_TREE_PARAMS_H

/* theta, mac, delta_acc, theta_max, order: in this order, right after
 * GP_PARAM_ROW_G and GP_PARAM_ROW_EPS (the plugins' index enums count on
 * it). delta_acc = 0, like theta = 0, accepts no cell: direct summation. */
#define OCT_PARAM_ROWS_WALK                                                                 \
    {"theta", GP_PARAM_DOUBLE, "0.5", "[0,inf)",                                            \
     "opening angle of the bh, bmax and multipole criteria (0: direct summation)"},         \
    {"mac", GP_PARAM_ENUM, "bmax", "bh|bmax|multipole|acceleration",                        \
     "cell acceptance: bh l/d<theta, bmax l/theta+s<d, multipole Warren-Salmon with B2, "   \
     "acceleration GADGET-2 relative to the previous call's |a|, else the held state's (bh " \
     "for a group with neither): fewest interactions for a given error, but results then "  \
     "depend on the call history"},                                                         \
    {"delta_acc", GP_PARAM_DOUBLE, "0.0078125", "[0,inf)",                                  \
     "accuracy of the acceleration criterion: G M l^2/d^4 < delta_acc |a_old|"},            \
    {"theta_max", GP_PARAM_DOUBLE, "1", "[0,inf)",                                          \
     "the acceleration criterion also opens every cell seen at more than this angle, "      \
     "l/d > theta_max (GADGET-4's ErrTolThetaMax): wide far cells bias the potentials; 0: " \
     "no bound"},                                                                           \
    {"order", GP_PARAM_ENUM, "quadrupole", "monopole|quadrupole", "multipole order of cells"}

/* drift (cpu-tree, cuda-tree, mpi-tree): the drifted tree of octree/drift_kin.h. */
#define OCT_PARAM_ROW_DRIFT                                                                    \
    {"drift", GP_PARAM_ENUM, "off", "off|on",                                                  \
     "on: a block step through predict and an active subset touches only what its walk reads: " \
     "the tree is not refitted but drifted with the held velocities (cells moved with their "  \
     "mass-weighted motion, boxes grown by bounds on their particles' departures from it, "    \
     "sources predicted where the walk opens a leaf); forces within the tree's error of a "    \
     "refitted tree's, not its bits, and not the ABI 1.0 path's"}

#endif /* GP_OCTREE_TREE_PARAMS_H */
