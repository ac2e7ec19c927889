/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shared_step.h — what the shared fixed-step schemes (leapfrog, rk2, rk4)
 * have in common: their one setting dt and the bookkeeping of a step on
 * the grid t0 + k dt.
 */
#ifndef GP_SHARED_STEP_H
#define GP_SHARED_STEP_H

#include "core/sim_core.h"

typedef struct gp_step_settings {
    double dt;          /* the shared step */
} gp_step_settings;

/* Their one settings table (dt), shared by all of them. */
extern const gp_setting gp_shared_step_settings[1];

/* A shared-step scheme's descriptor: its name, its summary, then its
 * functions (.start, .step, ...) as designated initialisers. */
#define GP_SHARED_STEP_SCHEME(NAME, SUMMARY, ...)                                          \
    { .name = (NAME), .summary = (SUMMARY), .settings = gp_shared_step_settings,        \
      .n_settings = 1, .settings_size = sizeof(gp_step_settings), __VA_ARGS__ }

/* Anchors the step grid at sim->time with the setting dt. */
void gp_shared_step_anchor(gp_sim *sim);
/* A start that anchors the grid and computes every acceleration (the
 * schemes with one force call a step, leapfrog and rk2). */
gp_status gp_shared_step_start(gp_sim *sim);

/* Shared-step schemes count steps in ticks of dt from an anchor time, so
 * t = t0 + k dt never drifts; a last partial step reaches an off-grid end
 * time and re-anchors there. Returns the step to take. */
double gp_shared_step_dt(gp_sim *sim, double t_end, int *partial);

/* Records the time after a shared step (every particle synchronised);
 * returns GP_OK, so a step can end with it. */
gp_status gp_shared_step_done(gp_sim *sim, double t_end, int partial);

#endif /* GP_SHARED_STEP_H */
