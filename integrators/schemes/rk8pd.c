/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rk8pd.c — reference integrator: GSL odeiv2's adaptive Prince-Dormand
 * 8(9) (gsl_odeiv2_step_rk8pd) on y = (x, v) with the standard error
 * control |err_i| <= atol + rtol |y_i|. For few-body accuracy checks: every
 * stage is a full force call (13 a step), so it is slow for large N.
 */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"
#include "solver/force.h"

typedef struct rk8_settings {
    double rtol, atol;  /* the local error control */
    double h0;          /* first trial step */
} rk8_settings;

static const gp_setting settings[] = {
    GP_SETTING_NONNEGATIVE(rk8_settings, rtol, "1e-10", "relative tolerance of the local error control"),
    GP_SETTING_NONNEGATIVE(rk8_settings, atol, "1e-12", "absolute tolerance of the local error control"),
    GP_SETTING_POSITIVE(rk8_settings, h0, "0.001", "first trial step"),
};
#define SET(sim) ((const rk8_settings *)(sim)->settings)

typedef struct rk8_state {
    gsl_odeiv2_step *step;
    gsl_odeiv2_control *control;
    gsl_odeiv2_evolve *evolve;
    gsl_odeiv2_system sys;
    double *y;      /* 6n: x then v */
    double h;       /* next trial step (checkpointed) */
    gp_status failure;
    gp_sim *sim;
} rk8_state;

static int rhs(double t, const double *y, double *dydt, void *user)
{
    (void)t;
    rk8_state *s = user;
    gp_sim *sim = s->sim;
    size_t m = 3 * sim->n;
    gp_status st = gp_force_all(sim, y, dydt + m, NULL);
    if (st != GP_OK) { s->failure = st; return GSL_EBADFUNC; }
    memcpy(dydt, y + m, m * sizeof *dydt);
    return GSL_SUCCESS;
}

static void stop(gp_sim *sim)
{
    rk8_state *s = sim->priv;
    if (!s) return;
    if (s->evolve) gsl_odeiv2_evolve_free(s->evolve);
    if (s->control) gsl_odeiv2_control_free(s->control);
    if (s->step) gsl_odeiv2_step_free(s->step);
    free(s->y);
    free(s);
    sim->priv = NULL;
}

static gp_status alloc_state(gp_sim *sim)
{
    size_t dim = 6 * sim->n;
    rk8_state *s = calloc(1, sizeof *s);
    sim->priv = s;
    if (!s) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory starting rk8pd");
    s->sim = sim;
    s->step = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, dim);
    s->control = gsl_odeiv2_control_standard_new(SET(sim)->atol, SET(sim)->rtol, 1.0, 0.0);
    s->evolve = gsl_odeiv2_evolve_alloc(dim);
    s->y = malloc(dim * sizeof *s->y);
    if (!s->step || !s->control || !s->evolve || !s->y) {
        stop(sim);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory starting rk8pd");
    }
    s->sys = (gsl_odeiv2_system){ rhs, NULL, dim, s };
    s->h = SET(sim)->h0;
    return GP_OK;
}

static gp_status start(gp_sim *sim)
{
    if (SET(sim)->rtol == 0.0 && SET(sim)->atol == 0.0)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "rk8pd needs rtol or atol > 0");
    gp_levels_anchor(&sim->lv, sim->time, 1.0, 0);
    return alloc_state(sim);
}

static gp_status step(gp_sim *sim, double t_end)
{
    rk8_state *s = sim->priv;
    size_t m = 3 * sim->n;
    memcpy(s->y, sim->pos, m * sizeof *s->y);
    memcpy(s->y + m, sim->vel, m * sizeof *s->y);
    double t = sim->time;
    s->failure = GP_OK;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    int rc = gsl_odeiv2_evolve_apply(s->evolve, s->control, s->step, &s->sys, &t, t_end, &s->h, s->y);
    gsl_set_error_handler(old);
    if (s->failure != GP_OK) return s->failure;
    if (rc != GSL_SUCCESS)
        return gp_sim_fail(sim, GP_ERR_INTERNAL, "rk8pd: GSL odeiv2 failed at t = %g: %s (try a smaller h0 or looser tolerances)",
                           t, gsl_strerror(rc));
    memcpy(sim->pos, s->y, m * sizeof *s->y);
    memcpy(sim->vel, s->y + m, m * sizeof *s->y);
    sim->time = t;
    /* keep the level grid on the time (t0 = time, tick 0), as every scheme
     * does, so a checkpoint can check time against it */
    gp_levels_anchor(&sim->lv, t, 1.0, 0);
    return GP_OK;
}

static void save(const gp_sim *sim, double *out)
{
    const rk8_state *s = sim->priv;
    out[0] = s ? s->h : SET(sim)->h0;
}

static gp_status load(gp_sim *sim, const double *in)
{
    gp_status st = alloc_state(sim);
    if (st == GP_OK) ((rk8_state *)sim->priv)->h = in[0];
    return st;
}

const gp_integrator_def gp_scheme_rk8pd = {
    .name = "rk8pd",
    /* not GP_SCHEME_MPI: its adaptive step is chosen from each rank's own error estimate */
    .flags = 0,
    .summary = "GSL odeiv2 Prince-Dormand 8(9), adaptive step (reference for few-body accuracy)",
    GP_SETTINGS_TABLE(settings, rk8_settings),
    .start = start, .step = step, .stop = stop, .n_saved = 1, .save = save, .load = load,
};
