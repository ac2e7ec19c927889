/*
 * shared_step.h — what the shared fixed-step schemes (leapfrog, rk2, rk4)
 * have in common: their one setting dt and the bookkeeping of a step on
 * the grid t0 + k dt.
 */
#ifndef GP_SHARED_STEP_H
#define GP_SHARED_STEP_H

#include "sim_core.h"

typedef struct gp_step_settings {
    double dt;          /* the shared step */
} gp_step_settings;

#define GP_STEP_SETTINGS GP_SETTING_POSITIVE(gp_step_settings, dt, "0.01", "the shared time step")

/* Anchors the step grid at sim->time with the setting dt. */
void gp_shared_step_anchor(gp_sim *sim);
/* A start that anchors the grid and computes every acceleration (the
 * schemes with one force call a step, leapfrog and rk2). */
gp_status gp_shared_step_start(gp_sim *sim);

/* Shared-step schemes count steps in ticks of dt from an anchor time, so
 * t = t0 + k dt never drifts; a last partial step reaches an off-grid end
 * time and re-anchors there. Returns the step to take. */
double gp_shared_step_dt(gp_sim *sim, double t_end, int *partial);

/* Records the time after a shared step (every particle synchronised). */
void gp_shared_step_done(gp_sim *sim, double t_end, int partial);

#endif /* GP_SHARED_STEP_H */
