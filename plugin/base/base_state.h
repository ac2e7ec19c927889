/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_state.h — ABI 1.1 and 1.2's held state (state.c, subsets.c): set_state,
 * predict and its undo, the jerk, velocities and positions of a subset,
 * source subsets, masses.
 *
 * C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_BASE_STATE_H
#define GP_BASE_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "gravplug_predict.h"
#include "base/base_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ABI 1.1 (state.c, subsets.c): held state, predict, subsets, masses */

/* The index rules of 1.1's subset calls, without changing anything:
 * n_sub == 0 is an empty subset (a no-op for the caller); index NULL
 * means all particles in order and needs n_sub == n; otherwise each index
 * < n and none repeated. fn names the entry point in the sentence. */
gp_status gp_check_subset(gp_base *base, const char *fn, size_t n_sub, const uint32_t *index);

/* set_state's and update_masses's checks alone, with their sentences: a
 * collective plugin (mpi-tree) checks on every rank and agrees before any
 * rank changes anything. */
gp_status gp_state_check(gp_base *base, size_t n_sub, const uint32_t *index,
                         const double *pos, const double *vel, const double *acc,
                         const double *t);
/* gp_state_check without the values' finiteness (the subset rules, no
 * NULL array): for a plugin that checks the values as it copies them
 * (gp_copy_finite) and calls gp_state_check for the sentence when one is
 * not finite. */
gp_status gp_state_check_args(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t);
gp_status gp_masses_check(gp_base *base, size_t n_sub, const uint32_t *index,
                          const double *mass);

/* set_state: validates (gp_state_check: subset rules, non-NULL arrays, all
 * finite), then stores x0/vel/acc/t for the subset and sets their source
 * positions to pos. Nothing changes on failure. */
gp_status gp_state_set(gp_base *base, size_t n_sub, const uint32_t *index,
                       const double *pos, const double *vel, const double *acc,
                       const double *t);

/* predict: moves every stated particle's source position to time t with
 * the ABI's expression (gp_predict_coord / gp_predict_coord3 of
 * gravplug_predict.h, which backends that loop themselves call too; no
 * FMA: state.c is compiled with -ffp-contract=off), OpenMP over particles
 * on the plugin's threads (gp_param_threads; each particle alone, so the
 * same bits on any count).
 * A non-finite t, or a prediction whose position or velocity overflows,
 * is GP_ERR_INVALID_ARGUMENT (naming the quantity and the first such
 * particle) and leaves every position as it was. *moved
 * (may be NULL) gets the number of particles predicted. */
gp_status gp_state_predict(gp_base *base, double t, size_t *moved);

/* A successful predict taken back (a plugin whose ranks or devices agree
 * on success after predicting: another one failed): each particle's
 * stated mark becomes was[] (p->n bytes, copied before the predict) and
 * its position what it was, x0 (1) or the prediction to t_was (2), third
 * order for a particle given a jerk, re-evaluated bit for bit; t_pred
 * becomes t_was. */
void gp_state_unpredict(gp_base *base, const uint8_t *was, double t_was);

/* ABI 1.2 set_state_jerk: set_state's checks and a finite jerk[3*n_sub],
 * then the state with the jerk: these particles are predicted to third
 * order (gravplug.h). Nothing changes on failure. */
gp_status gp_state_check_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *jerk, const double *t);
gp_status gp_state_set_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                            const double *pos, const double *vel, const double *acc,
                            const double *jerk, const double *t);

/* The velocity of particle i at the positions' current time: the
 * prediction to the last predict's time, or its stated velocity when it
 * was set since; a particle with no state (none given since set_particles
 * or update_positions) does not move and has velocity 0. */
void gp_state_velocity(const gp_particles *p, size_t i, double out[3]);

/* Particle i's position and velocity at time tp from its held state,
 * whatever the positions' current time: predict's expressions (bit for
 * bit what predict to tp would give it) for a stated particle; an
 * unstated one stays at its position with velocity 0. For a plugin that
 * predicts only the particles it needs (base/predict_lazy.h). */
void gp_state_position_at(const gp_particles *p, size_t i, double tp, double out[3]);
void gp_state_velocity_at(const gp_particles *p, size_t i, double tp, double out[3]);

/* get_velocities: gp_state_velocity of a subset (get_positions' rules). */
gp_status gp_velocities_get(gp_base *base, size_t n_sub, const uint32_t *index, double *vel);

/* get_positions' checks alone (the subset rules, a pos array), with their
 * sentences. */
gp_status gp_positions_check(gp_base *base, size_t n_sub, const uint32_t *index,
                             const double *pos);

/* get_positions: copies the current source positions of a subset. */
gp_status gp_positions_get(gp_base *base, size_t n_sub, const uint32_t *index, double *pos);

/* set_source_subset: (0, NULL) all (src = NULL, n_src = n); otherwise the
 * rules of set_active_subset. Stores a copy. */
gp_status gp_sources_set(gp_base *base, size_t n_src, const uint32_t *index);

/* gp_sources_set for a plugin that keeps structures built from the
 * sources: *changed is 0 only when all particles were the sources before
 * and are after (nothing to rebuild). */
gp_status gp_sources_replace(gp_base *base, size_t n_src, const uint32_t *index, int *changed);

/* The k-th source (k < base->p.n_src). */
static inline size_t gp_source_index(const gp_base *b, size_t k)
{
    return b->p.src ? (size_t)b->p.src[k] : k;
}

/* update_masses: validates (gp_masses_check: subset rules, finite, >= 0),
 * copies into base->p.mass. */
gp_status gp_masses_update(gp_base *base, size_t n_sub, const uint32_t *index,
                           const double *mass);

/* Forgets the held state (update_positions does this: every position
 * given anew, velocities and accelerations cleared). */
void gp_state_clear(gp_base *base);

#ifdef __cplusplus
}
#endif

#endif /* GP_BASE_STATE_H */
