/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_ex.h — cpu-direct's ABI 1.2 neighbour outputs beside acc, pot and
 * jerk (those come from direct_kernel.c): the nearest neighbour, the
 * pairwise step and the neighbour lists, all exact, in one pass over the
 * sources per active particle.
 */
#ifndef GP_DIRECT_EX_H
#define GP_DIRECT_EX_H

#include "base/plugin_base.h"

/* Fills out->nn_index, nn_dist2 and pair_step (those not NULL) for
 * the active particles of b, over the massive particles of b->p (those with
 * in_src[i] != 0 when in_src is not NULL), in index order; and, when
 * nb_radius or nb_step asks, the neighbour lists, kept in b
 * (gp_neighbours_keep). Returns GP_OK or GP_ERR_OUT_OF_MEMORY (sentence
 * set; nothing kept). */
gp_status gp_direct_ex(gp_base *b, double G, double eps2, const uint8_t *in_src,
                       const gp_outputs *out, int nthreads);

#endif /* GP_DIRECT_EX_H */
