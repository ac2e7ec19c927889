/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs_gather.h — mpi-tree's ABI 1.2 outputs beside acc and pot: the
 * nearest neighbours, neighbour lists and pair_step of a rank's active
 * particles over the sources of every rank.
 *
 * Every rank's particles are gathered on every rank (positions, masses,
 * source flags, and the predicted velocities when a pairwise step is
 * asked for: 7 or 4 doubles each, O(N) bytes per call, which is why
 * mpi-tree does not claim GP_CAP_NEIGHBOURS), a tree is built of all
 * sources, and the rank's active particles are searched in it with the
 * tree plugins' code (octree/outputs_ex.h), so at P = 1 the answers are
 * cpu-tree's, bit for bit.
 *
 * Indices: nn_index and the lists name a source by its global index, its
 * index on its own rank plus the particles of all lower ranks (rank
 * order); at P = 1 that is the set_particles index. A source on this
 * rank is thus offset + i, where offset is what mpi_tree_outputs_gather
 * reports.
 */
#ifndef GP_MPI_TREE_OUTPUTS_GATHER_H
#define GP_MPI_TREE_OUTPUTS_GATHER_H

#include "comm.h"
#include "octree/cpu_driver.h"

/* Collective. For this rank's n_active active particles (none when
 * none_active) fills out's nn_index, nn_dist2 and pair_step (those not
 * NULL) and, when out asks for lists, keeps them in c->base. in_src: the
 * source subset's membership (NULL: all); need_vel: some rank asks for a
 * pairwise step (every rank must pass the same); tree shape as the
 * plugin's parameters. Returns this rank's status (the caller agrees);
 * on failure the sentence is in c->base. */
gp_status mpi_tree_outputs_gather(const mpi_tree_comm *c, const uint8_t *in_src, int none_active,
                                  int need_vel, const gp_outputs *out, double G, double eps2,
                                  uint32_t group, uint32_t leaf, gp_key_kind keys);

#endif /* GP_MPI_TREE_OUTPUTS_GATHER_H */
