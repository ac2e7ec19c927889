/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_pair.h — pairwise time steps and step graphs through ABI 1.2
 * (force_pair.c), for hold.c and cc.c: the plugin's pair_step (Huayno's
 * timestep_ij with eta = 1, the minimum over the sources) and the lists of
 * sources with tau_ij < nb_step (get_neighbours), from the velocities the
 * host sends with set_state.
 */
#ifndef GP_FORCE_PAIR_H
#define GP_FORCE_PAIR_H

#include "core/sim_core.h"

/* 1 when the solver offers compute_forces_ex (and, with lists, also
 * get_neighbours) and one process drives it; fast additionally needs
 * GP_CAP_NEIGHBOURS (pair steps at the cost of a force call). */
int gp_pair_available(const gp_sim *sim, int lists);
int gp_pair_fast(const gp_sim *sim);

/* One force call at the positions pos[3n]: active the na particles
 * idx[], sources the ns particles src[] (every idx[] among them) with the
 * velocities vel[3n] (by particle; NULL: zero). Fills pair_step[na]
 * (eta = 1; may be NULL) and, with nb_step > 0, asks for the lists read by
 * gp_pair_lists. acc[3na] receives the forces the ABI computes beside
 * them. Counted as a force call of na particles. */
gp_status gp_pair_call(gp_sim *sim, const double *pos, const double *vel, size_t na, const uint32_t *idx,
                       size_t ns, const uint32_t *src, double nb_step, double *acc, double *jerk,
                       double *pair_step);
/* Whether the solver also gives the jerk (GP_CAP_JERK; jerk non-NULL above). */
int gp_pair_has_jerk(const gp_sim *sim);

/* A pair (k: place in s, j: particle index) of a step graph. */
typedef void (*gp_pair_edge)(void *ctx, size_t k, uint32_t j);

/* The time-symmetric pairwise steps of the ns particles s[] (all at one
 * time) among themselves for a step of length h from there: taken at the
 * step's midpoint predicted from the start by Taylor series with the
 * acceleration and jerk there (from s, one call; the jerk where the
 * plugin has GP_CAP_JERK), once with the predicted velocities and once
 * with their opposites, so that a backward step from the other end finds
 * the same values to O(h^3) in the velocities, O(h^4) in the positions
 * (O(h^2), O(h^3) without the jerk): the
 * plugin's approach-rate correction is odd in the velocities (it takes
 * the forward direction, and extrapolates over the pair's own step, not
 * over h). step[k] (eta = 1; NULL: not asked) is the smaller of the two;
 * with nb_step > 0 every pair listed by either call goes to edge(ctx, k, j).
 * Three force calls of ns particles; two where gp_pair_even (the lists
 * then by the even step, each pair once). */
gp_status gp_pair_midpoint(gp_sim *sim, const uint32_t *s, size_t ns, double h, double nb_step, double *step,
                           gp_pair_edge edge, void *ctx);

/* Whether the solver gives ABI 1.3's even step (pair_step_even,
 * nb_step_even): then gp_pair_midpoint takes the step or the lists from
 * one call at the midpoint instead of two (the same bits; the same
 * pairs, each listed once). */
int gp_pair_even(const gp_sim *sim);

/* The lists of the last gp_pair_call (na active): offset[na + 1] and the
 * neighbours (set_particles indices) in *list, grown with realloc
 * (*cap entries). */
gp_status gp_pair_lists(gp_sim *sim, size_t na, uint64_t *offset, uint32_t **list, size_t *cap);

#endif /* GP_FORCE_PAIR_H */
