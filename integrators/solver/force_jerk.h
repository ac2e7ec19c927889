/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_jerk.h — block steps through ABI 1.2 for the Hermite scheme
 * (force_jerk.c): the plugin holds every particle's state with its jerk,
 * (x_i, v_i, a_i, j_i, t_i), predicts it to third order, and returns the
 * accelerations and jerks of the active particles. One block step moves
 * O(n_active) data across the ABI. There is no 1.0/1.1 fallback: the jerk
 * is computed by the plugin or not at all.
 */
#ifndef GP_FORCE_JERK_H
#define GP_FORCE_JERK_H

#include "core/sim_core.h"

/* GP_OK when the solver offers the 1.2 jerk path (set_state_jerk,
 * predict, get_positions, get_velocities, compute_forces_ex and
 * GP_CAP_JERK) and the solver path setting allows it; otherwise
 * GP_ERR_UNSUPPORTED with a sentence naming the plugin, what it lacks and
 * what to use, for the scheme named. */
gp_status gp_jerk_path_check(gp_sim *sim, const char *scheme);

/* set_state_jerk for m particles idx[] (NULL: all n in order) from
 * sim->pos, sim->vel, sim->acc and jerk[3n] at their own times
 * gp_levels_time(t_last[i]). */
gp_status gp_jerk_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *jerk);

/* One force call through 1.2: the full state first if the solver lacks it
 * (jerk as for gp_jerk_send), predict(t), get_positions and
 * get_velocities of the na active particles idx[] into xp[3na] and
 * vp[3na], their accelerations and jerks into anew[3na] and jnew[3na]
 * (all packed in idx order; na == n with idx 0..n-1 is "all"). */
gp_status gp_jerk_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                               const double *jerk, double *xp, double *vp, double *anew,
                               double *jnew);

#endif /* GP_FORCE_JERK_H */
