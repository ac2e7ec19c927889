/*
 * leapfrog.c — kick-drift-kick leapfrog, one shared fixed step (symplectic,
 * second order). One force call per step: the acceleration at the end of a
 * step is the first kick of the next.
 */
#include "sim_core.h"

static const char *const params[] = { "dt", NULL };
static const char *const defaults[] = { "0.01", NULL };
static const char *const docs[] = { "the shared time step", NULL };

/* Shared-step schemes count steps in ticks of dt from an anchor time, so
 * t = t0 + k dt never drifts; a last partial step reaches an off-grid end
 * time and re-anchors there. Returns the step to take. */
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

/* Records the time after a shared step of dt. */
void gp_shared_step_done(gp_sim *sim, double t_end, int partial)
{
    if (partial) {
        gp_levels_anchor(&sim->lv, t_end, sim->set.dt, 0);
        sim->time = t_end;
        return;
    }
    sim->lv.now++;
    for (size_t i = 0; i < sim->n; ++i) sim->lv.t_last[i] = sim->lv.now;
    double t = gp_levels_time(&sim->lv, sim->lv.now);
    /* land exactly on an end time that lies on the grid */
    if (t != t_end && t > t_end - 1e-9 * sim->set.dt && t < t_end + 1e-9 * sim->set.dt) t = t_end;
    sim->time = t;
}

static gp_status start(gp_sim *sim)
{
    gp_levels_anchor(&sim->lv, sim->time, sim->set.dt, 0);
    return gp_force_all(sim, sim->pos, sim->acc, NULL);
}

static gp_status step(gp_sim *sim, double t_end)
{
    int partial;
    double dt = gp_shared_step_dt(sim, t_end, &partial);
    size_t m = 3 * sim->n;
    double *x = sim->pos, *v = sim->vel, *a = sim->acc;
    for (size_t k = 0; k < m; ++k) {
        v[k] += 0.5 * dt * a[k];
        x[k] += dt * v[k];
    }
    gp_status st = gp_force_all(sim, x, a, NULL);
    if (st != GP_OK) return st;   /* state is half-stepped: the run is over */
    for (size_t k = 0; k < m; ++k) v[k] += 0.5 * dt * a[k];
    gp_shared_step_done(sim, t_end, partial);
    return GP_OK;
}

static const gp_integrator_def leapfrog = {
    .name = "leapfrog",
    .summary = "kick-drift-kick leapfrog, shared fixed step dt (symplectic, 2nd order)",
    .params = params, .defaults = defaults, .docs = docs,
    .start = start, .step = step,
};
GP_REGISTER_INTEGRATOR(leapfrog)
