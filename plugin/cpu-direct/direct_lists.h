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
#include "base/base_outputs.h"
#include "base/direct_kernel.h"

/* The lists that out->nb_radius, out->nb_step and (read by
 * gp_outputs_read) out->nb_step_even ask for, for the active particles of
 * b (their velocities tv, 3 each) or, when at is not NULL, for its points
 * (vel never NULL there; tv unread), over the sources src (cpu-direct's
 * massive particles in index order, of the source subset if one is set)
 * with velocities vel, kept in b (gp_neighbours_keep). prune: the step
 * bound may be trusted for every pair (gp_step_bound_range_ok), else every
 * pair's step is exact. Returns GP_OK or GP_ERR_OUT_OF_MEMORY (sentence
 * set; nothing kept). */
gp_status gp_direct_lists(gp_base *b, const gp_direct_sources *src, const gp_direct_vel *vel,
                          const double *tv, int prune, double G, double eps2,
                          const gp_outputs *out, int nthreads, const gp_field_points *at);

#endif /* GP_DIRECT_LISTS_H */
