/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_lists.h — cpu-direct's ABI 1.2 neighbour lists (nb_radius,
 * nb_step), exact, in one pass over the sources per active particle. (The
 * jerk, the nearest source and pair_step come with acc from
 * base/direct_kernel.c.)
 */
#ifndef GP_DIRECT_LISTS_H
#define GP_DIRECT_LISTS_H

#include "base/base_instance.h"

/* The lists that out->nb_radius, out->nb_step and (read by
 * gp_outputs_read) out->nb_step_even ask for, for the active
 * particles of b, over the massive particles of b->p (those with
 * in_src[i] != 0 when in_src is not NULL), kept in b (gp_neighbours_keep).
 * Returns GP_OK or GP_ERR_OUT_OF_MEMORY (sentence set; nothing kept). */
gp_status gp_direct_lists(gp_base *b, double G, double eps2, const uint8_t *in_src,
                          const gp_outputs *out, int nthreads);

#endif /* GP_DIRECT_LISTS_H */
