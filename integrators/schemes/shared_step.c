/* SPDX-License-Identifier: Apache-2.0 */
/* shared_step.c — the step grid of the shared fixed-step schemes (see shared_step.h). */
#include "shared_step.h"

#include "solver/force.h"

const gp_setting gp_shared_step_settings[1] = {
    GP_SETTING_POSITIVE(gp_step_settings, dt, "0.01", "the shared time step"),
};

static double dt_setting(const gp_sim *sim) { return ((const gp_step_settings *)sim->settings)->dt; }

void gp_shared_step_anchor(gp_sim *sim)
{
    gp_levels_anchor(&sim->lv, sim->time, dt_setting(sim), 0);
}

gp_status gp_shared_step_start(gp_sim *sim)
{
    gp_shared_step_anchor(sim);
    return gp_force_all(sim, sim->pos, sim->acc, NULL);
}

double gp_shared_step_dt(gp_sim *sim, double t_end, int *partial)
{
    double t_next = gp_levels_time(&sim->lv, sim->lv.now + 1);
    double dt = sim->lv.dt_max;
    *partial = 0;
    if (t_next > t_end + 1e-9 * dt) {
        *partial = 1;
        return t_end - sim->time;
    }
    return dt;
}

gp_status gp_shared_step_done(gp_sim *sim, double t_end, int partial)
{
    if (partial) {
        gp_levels_anchor(&sim->lv, t_end, dt_setting(sim), 0);
        sim->time = t_end;
        return GP_OK;
    }
    sim->lv.now++;
    for (size_t i = 0; i < sim->n; ++i) sim->lv.t_last[i] = sim->lv.now;
    double t = gp_levels_time(&sim->lv, sim->lv.now);
    /* land exactly on an end time that lies on the grid */
    if (t != t_end && t > t_end - 1e-9 * dt_setting(sim) && t < t_end + 1e-9 * dt_setting(sim)) t = t_end;
    sim->time = t;
    return GP_OK;
}
