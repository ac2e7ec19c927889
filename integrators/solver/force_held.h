/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_held.h — block steps through ABI 1.1 (force_held.c): the solver
 * holds each particle's state (x_i, v_i, a_i, t_i) and predicts it, so a
 * block step moves O(n_active) data across the ABI.
 */
#ifndef GP_FORCE_HELD_H
#define GP_FORCE_HELD_H

#include "core/sim_core.h"

/* 1 when block steps go through set_state/predict/get_positions: the
 * setting allows it and the solver's table has the 1.1 calls. */
int gp_held_path(const gp_sim *sim);
/* GP_OK, or GP_ERR_UNSUPPORTED with a sentence when the setting demands
 * the 1.1 path ("1.1") and the solver lacks it. */
gp_status gp_held_path_check(gp_sim *sim);
/* set_state for m particles idx[] (NULL: all n in order) from sim->pos and
 * sim->vel at their own times gp_levels_time(t_last[i]), with
 * accelerations from acc[3n] (NULL: zero, a pure drift). */
gp_status gp_held_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *acc);
/* One block step's force call through 1.1: the full state first if the
 * solver lacks it (acc as for gp_held_send), predict(t), get_positions of
 * the na active particles idx[] into xp[3na] and their accelerations into
 * anew[3na] (both packed in idx order). */
gp_status gp_held_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                               const double *acc, double *xp, double *anew);

/* The core of both held-state paths: with jerk NULL the 1.1 calls
 * (set_state, compute_forces), with jerks the 1.2 ones (set_state_jerk,
 * get_velocities into vp, compute_forces_ex for anew and jnew);
 * force_jerk.c is the 1.2 caller. gp_held_send_state packs m particles
 * idx[] (NULL: all n) at pos[3n] (NULL: sim->pos) with acc (NULL: zero)
 * and the jerk; gp_held_force makes one block step's force call, sending
 * the full state first if the solver lacks it. */
gp_status gp_held_send_state(gp_sim *sim, size_t m, const uint32_t *idx, const double *pos,
                             const double *acc, const double *jerk);
gp_status gp_held_force(gp_sim *sim, double t, size_t na, const uint32_t *idx, const double *acc,
                        const double *jerk, double *xp, double *vp, double *anew, double *jnew);

#endif /* GP_FORCE_HELD_H */
