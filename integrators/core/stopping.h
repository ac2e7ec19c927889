/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stopping.h — the stopping conditions' hooks in gp_sim_evolve and
 * gp_sim_free (stopping.c; the public calls are in gp_sim.h).
 */
#ifndef GP_STOPPING_H
#define GP_STOPPING_H

#include "sim_core.h"

/* Stopping conditions (stopping.c), hooked into gp_sim_evolve and
 * gp_sim_free: begin resets them (and checks the radii) when an evolve
 * starts; after_step returns 1 when an enabled one is met. */
typedef struct gp_stopping gp_stopping;
gp_status gp_stopping_begin(gp_sim *sim);
int gp_stopping_after_step(gp_sim *sim);
void gp_stopping_free(gp_sim *sim);

/* Collisions among the na particles a[] that a drift inside a step has
 * just moved to one time (split_step.c's drifts: hold, hold-kdk, cc): the
 * pairs found are reported with those of the check after the step, which
 * then stops the evolve. Nothing unless collision detection is on. */
void gp_stopping_after_drift(gp_sim *sim, const uint32_t *a, size_t na);

/* Collisions by nearest neighbours (stopping.c): a force call through
 * compute_forces_ex asks for the buffer (na entries for its active
 * particles; NULL: collisions are not wanted that way now, or no memory)
 * and, when the call succeeded with nn_index written there, says whose
 * neighbours they are (idx[0..na), NULL: all n in order); the next check
 * then tests those pairs instead of sweeping. */
uint32_t *gp_stopping_nn_buffer(gp_sim *sim, size_t na);
void gp_stopping_nn_done(gp_sim *sim, size_t na, const uint32_t *idx);

#endif /* GP_STOPPING_H */
