/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_rk2.c — GOTHIC's hierarchical (block time step) second-order
 * predictor-corrector (Miki & Umemura 2017, section 2.7).
 *
 * Every particle i has a power-of-two level below dt_max and the time t_i
 * of its last correction (timestep_levels.h). One block step:
 *   1. T = the next block time (the deepest occupied level decides);
 *      the active particles are those whose step ends at T.
 *   2. Predict every j-particle to T from its own t_i (eqs. 15-16):
 *          x_j(T) = x_j + dt_j v_j + dt_j^2/2 a_j,   dt_j = T - t_j.
 *   3. One force call: update_positions(all predicted), set_active_subset
 *      (the active ones), compute_forces. Through ABI 1.1 (force_held.c)
 *      the plugin predicts instead: set_state of the particles corrected
 *      in the previous step, predict(T), get_positions(active),
 *      set_active_subset, compute_forces; the same bits with a CPU plugin.
 *   4. Correct the active particles (eq. 17):
 *          x_i = x_i(T),   v_i += dt_i/2 (a_i + a_i(T)),   a_i = a_i(T),
 *      and choose their next level from the criterion (and the jerk
 *      bound, eta_jerk > 0: gp_jerk_bound): deeper at once,
 *      shallower only where the larger step's boundaries meet T. With
 *      shadow = k > 0, a particle whose level changed is moved by
 *      k (h_old^2 - h_new^2) a (gp_shadow_shift: no drift from switches).
 * The end time of gp_sim_evolve is reached exactly when it lies on the
 * dt_max grid (everyone is synchronised there); otherwise one synchronising
 * step brings every particle to it and the grid restarts there.
 */
#include <math.h>

#include "core/sim_core.h"
#include "solver/force.h"
#include "solver/force_block.h"
#include "block_step.h"
#include "timestep_criteria.h"

static const gp_setting settings[] = { GP_BLOCK_SETTINGS, GP_BLOCK_SHADOW_SETTING, GP_BLOCK_JERK_SETTING };

static gp_status criterion_setup(gp_sim *sim, double *eps)
{
    gp_sim_criterion_eps(sim, GP_BLOCK_SET(sim)->eps, eps);
    return GP_OK;
}

/* Level wanted by particle i; a_old/dt_prev for the jerk estimate. */
static int wanted_level(gp_sim *sim, double eps, size_t i, const double *a_old, double dt_prev)
{
    const gp_block_settings *set = GP_BLOCK_SET(sim);
    double dt = gp_criterion_dt(set->criterion, set->eta, eps, sim->acc + 3 * i, a_old, dt_prev,
                                sim->vel + 3 * i);
    dt = gp_jerk_bound(dt, set->eta_jerk, sim->acc + 3 * i, a_old, dt_prev);
    return gp_levels_for_dt(&sim->lv, dt);
}

/* Fresh levels for everybody from the stored accelerations. */
static void assign_levels(gp_sim *sim, double eps)
{
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i)
        sim->lv.level[i] = (uint8_t)wanted_level(sim, eps, (size_t)i, NULL, 0.0);
    gp_levels_touched(&sim->lv);
}

static gp_status start(gp_sim *sim)
{
    gp_levels_anchor(&sim->lv, sim->time, GP_BLOCK_SET(sim)->dt, GP_BLOCK_SET(sim)->max_level);
    gp_status st = gp_force_all(sim, sim->pos, sim->acc, NULL);
    if (st != GP_OK) return st;
    double eps;
    criterion_setup(sim, &eps);
    assign_levels(sim, eps);
    return GP_OK;
}

/* Corrects active particle i to its predicted position xp and new
 * acceleration anew over dt. */
static void correct(gp_sim *sim, size_t i, const double *xp, const double *anew, double dt,
                    double *a_old)
{
    double *x = sim->pos + 3 * i, *v = sim->vel + 3 * i, *a = sim->acc + 3 * i;
    for (int k = 0; k < 3; ++k) {
        x[k] = xp[k];
        v[k] += 0.5 * dt * (a[k] + anew[k]);
        a_old[k] = a[k];
        a[k] = anew[k];
    }
}

/* Brings every particle to time t with one full force call, then restarts
 * the level grid at t (levels chosen afresh). */
static gp_status sync_to(gp_sim *sim, double t)
{
    gp_sim_predict_all(sim, t, sim->acc, NULL, sim->work);
    gp_status st = gp_force_all(sim, sim->work, sim->work2, NULL);
    if (st != GP_OK) return st;
    double eps;
    criterion_setup(sim, &eps);
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double dt = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]), a_old[3];
        if (dt == 0.0) {
            for (int k = 0; k < 3; ++k) sim->acc[3 * i + k] = sim->work2[3 * i + k];
            continue;
        }
        correct(sim, (size_t)i, sim->work + 3 * i, sim->work2 + 3 * i, dt, a_old);
    }
    gp_block_synchronised(sim, t);
    assign_levels(sim, eps);
    return GP_OK;
}

static gp_status step(gp_sim *sim, double t_end)
{
    uint64_t T;
    double t_new;
    if (!gp_block_next(sim, t_end, &T, &t_new)) return sync_to(sim, t_end);
    gp_levels *lv = &sim->lv;
    double tick = gp_levels_tick(lv);

    size_t na = gp_levels_active(lv, T, sim->active);
    /* the active particles' positions at T (xp) and accelerations there */
    gp_status st = gp_force_block(sim, t_new, na, sim->active, sim->acc, sim->work, sim->work2);
    if (st != GP_OK) return st;

    double eps;
    criterion_setup(sim, &eps);
    const long long nact = (long long)na;
#pragma omp parallel for schedule(static) if (nact > GP_PAR_ACTIVE_MIN)
    for (long long k = 0; k < nact; ++k) {
        size_t i = sim->active[k];
        double dt = (double)(T - lv->t_last[i]) * tick, a_old[3];
        correct(sim, i, sim->work + 3 * k, sim->work2 + 3 * k, dt, a_old);
        lv->t_last[i] = T;
        int l_old = lv->level[i];
        if (gp_levels_adjust(lv, i, wanted_level(sim, eps, i, a_old, dt), T) != l_old
            && GP_BLOCK_SET(sim)->shadow > 0.0)
            gp_shadow_shift(sim->pos + 3 * i, sim->acc + 3 * i, GP_BLOCK_SET(sim)->shadow, dt,
                            gp_levels_dt(lv, i));
    }
    gp_block_stepped(sim, T, t_new, t_end);
    /* a plugin holding the state takes the corrected one (pos, vel, acc at T) */
    return gp_force_block_done(sim, na, sim->active, sim->acc);
}

static gp_status synchronize(gp_sim *sim)
{
    /* sync_to makes a force call: every process or none */
    return gp_sim_global_max(sim, !gp_sim_synchronised(sim)) ? sync_to(sim, sim->time) : GP_OK;
}

const gp_integrator_def gp_scheme_block_rk2 = {
    .name = "block-rk2",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS | GP_SCHEME_MPI,
    .summary = "GOTHIC's 2nd-order predictor-corrector with block (power-of-two) time steps below dt",
    GP_SETTINGS_TABLE(settings, gp_block_settings),
    .start = start, .step = step, .synchronize = synchronize,
};
