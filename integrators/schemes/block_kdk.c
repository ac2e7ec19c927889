/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_kdk.c — kick-drift-kick leapfrog with block (power-of-two) time
 * steps, as in Gadget-2 (Springel 2005, section 4): every particle is
 * drifted to each block time (x += v dt, exact for the drift), and only
 * the active particles are kicked, half a step at each end of their own
 * step. With one level it is the shared leapfrog. With many it is no longer
 * symplectic: particles changing level make its energy drift, measured as
 * large as block-rk2's (bench/results/block-steps/raw/block-vs-shared.md).
 *
 * Stored state (in gp_sim): pos of each particle at its t_last (the start
 * of its current step); vel its *half-kicked* velocity (after the opening
 * kick of its current step); acc the acceleration at t_last; levels and
 * t_last as in block-rk2. Between its kicks a particle moves on a straight
 * line, x(t) = x_i + (t - t_i) v_i: the ABI 1.1 prediction with a = 0,
 * evaluated in one go from t_i (not accumulated block by block), so the
 * plugin can do it.
 * One block step, to the next block tick T:
 *   1. drift every particle to T: x_i + (T - t_i) v_i (1.0: the host
 *      predicts all and sends them with update_positions; 1.1: the plugin
 *      predicts, force_held.c, and get_positions returns the active);
 *   2. one force call for the active particles (set_active_subset,
 *      compute_forces);
 *   3. active: x_i = x(T), closing kick v += dt_i/2 a(T); new level from
 *      the criterion and the jerk bound (same rules as block-rk2); opening kick
 *      v += dt_new/2 a(T); through 1.1, set_state(x_i, v_i, a = 0, T).
 */
#include <math.h>

#include "core/sim_core.h"
#include "solver/force.h"
#include "solver/force_block.h"
#include "block_step.h"
#include "timestep_criteria.h"

static const gp_setting settings[] = { GP_BLOCK_SETTINGS, GP_BLOCK_SHADOW_SETTING, GP_BLOCK_JERK_SETTING };

/* Level wanted by particle i; a_old (NULL: none yet) and dt_prev for the
 * jerk and min criteria's estimate (a - a_old) / dt_prev, as block-rk2's. */
static int wanted_level(gp_sim *sim, double eps, size_t i, const double *a_old, double dt_prev,
                        const double *v)
{
    const gp_block_settings *set = GP_BLOCK_SET(sim);
    double dt = gp_criterion_dt(set->criterion, set->eta, eps, sim->acc + 3 * i, a_old, dt_prev, v);
    dt = gp_jerk_bound(dt, set->eta_jerk, sim->acc + 3 * i, a_old, dt_prev);
    return gp_levels_for_dt(&sim->lv, dt);
}

/* Opening half kick of particle i (its level already chosen). */
static void open_kick(gp_sim *sim, size_t i)
{
    double h = 0.5 * gp_levels_dt(&sim->lv, i);
    for (int k = 0; k < 3; ++k) sim->vel[3 * i + k] += h * sim->acc[3 * i + k];
}

/* Levels for everybody from synchronised velocities, then opening kicks. */
static void open_all(gp_sim *sim)
{
    double eps;
    gp_sim_criterion_eps(sim, GP_BLOCK_SET(sim)->eps, &eps);
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        sim->lv.level[i] = (uint8_t)wanted_level(sim, eps, (size_t)i, NULL, 0.0, sim->vel + 3 * i);
        open_kick(sim, (size_t)i);
    }
    gp_levels_touched(&sim->lv);
}

/* Position of particle i at time t on its drift line (the ABI's
 * prediction with a = 0, as the 1.1 plugin evaluates it). */
static void drift_to(const gp_sim *sim, size_t i, double t, double *x)
{
    double dt = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
    for (int k = 0; k < 3; ++k)
        x[k] = gp_predict_coord(sim->pos[3 * i + k], sim->vel[3 * i + k], 0.0, dt);
}

static gp_status start(gp_sim *sim)
{
    gp_levels_anchor(&sim->lv, sim->time, GP_BLOCK_SET(sim)->dt, GP_BLOCK_SET(sim)->max_level);
    gp_status st = gp_force_all(sim, sim->pos, sim->acc, NULL);
    if (st != GP_OK) return st;
    open_all(sim);
    return GP_OK;
}

/* Synchronised velocity of particle i at time t (between its t_last and
 * the end of its step): undo the opening kick, kick with a over t - t_i. */
static void sync_velocity(const gp_sim *sim, size_t i, double t, double *v)
{
    double h = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
    double back = 0.5 * gp_levels_dt(&sim->lv, i);
    for (int k = 0; k < 3; ++k)
        v[k] = sim->vel[3 * i + k] + (h - back) * sim->acc[3 * i + k];
}

static void predict(const gp_sim *sim, double *pos, double *vel)
{
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        if (pos) drift_to(sim, (size_t)i, sim->time, pos + 3 * i);
        if (vel) sync_velocity(sim, (size_t)i, sim->time, vel + 3 * i);
    }
}

/* Brings everybody to time t (>= now) with a proper KDK step of each
 * particle's elapsed length h = t - t_i: positions are corrected for the
 * opening kick that assumed the full step, one full force call, closing
 * kicks. Leaves synchronised velocities (no opening kick). */
static gp_status sync_to(gp_sim *sim, double t)
{
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double h = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
        double dti = gp_levels_dt(&sim->lv, (size_t)i), x[3];
        /* drift to t, then replace the full-step opening kick's
         * contribution (dti/2 a) by the actual one (h/2 a) */
        drift_to(sim, (size_t)i, t, x);
        for (int k = 0; k < 3; ++k)
            sim->pos[3 * i + k] = x[k] + h * 0.5 * (h - dti) * sim->acc[3 * i + k];
    }
    gp_status st = gp_force_all(sim, sim->pos, sim->work2, NULL);
    if (st != GP_OK) return st;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double h = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
        double dti = gp_levels_dt(&sim->lv, (size_t)i);
        for (int k = 0; k < 3; ++k) {
            double *v = sim->vel + 3 * i + k;
            *v += 0.5 * (h - dti) * sim->acc[3 * i + k] + 0.5 * h * sim->work2[3 * i + k];
            sim->acc[3 * i + k] = sim->work2[3 * i + k];
        }
    }
    return gp_block_synchronised(sim, t);
}

static gp_status step(gp_sim *sim, double t_end)
{
    uint64_t T;
    double t_new;
    if (!gp_block_next(sim, t_end, &T, &t_new)) {
        gp_status st = sync_to(sim, t_end);
        if (st == GP_OK) open_all(sim);      /* the run goes on from t_end */
        return st;
    }
    gp_levels *lv = &sim->lv;
    size_t na = gp_levels_active(lv, T, sim->active);
    /* the active particles' positions at T (a straight drift since their
     * last kick: a = 0) and their accelerations there */
    gp_status st = gp_force_block(sim, t_new, na, sim->active, NULL, sim->work, sim->work2);
    if (st != GP_OK) return st;

    double eps;
    gp_sim_criterion_eps(sim, GP_BLOCK_SET(sim)->eps, &eps);
    const long long nact = (long long)na;
#pragma omp parallel for schedule(static) if (nact > GP_PAR_ACTIVE_MIN)
    for (long long k = 0; k < nact; ++k) {
        size_t i = sim->active[k];
        const double *xp = sim->work + 3 * (size_t)k;
        double h = 0.5 * gp_levels_dt(lv, i), vs[3], a_old[3];
        for (int c = 0; c < 3; ++c) {
            a_old[c] = sim->acc[3 * i + c];
            sim->pos[3 * i + c] = xp[c];
            sim->acc[3 * i + c] = sim->work2[3 * k + c];
            sim->vel[3 * i + c] += h * sim->acc[3 * i + c];   /* closing kick */
            vs[c] = sim->vel[3 * i + c];
        }
        lv->t_last[i] = T;
        int l_old = lv->level[i];
        if (gp_levels_adjust(lv, i, wanted_level(sim, eps, i, a_old, 2.0 * h, vs), T) != l_old
            && GP_BLOCK_SET(sim)->shadow > 0.0)
            gp_shadow_shift(sim->pos + 3 * i, sim->acc + 3 * i, GP_BLOCK_SET(sim)->shadow, 2.0 * h,
                            gp_levels_dt(lv, i));
        open_kick(sim, i);
    }
    gp_block_stepped(sim, T, t_new, t_end);
    /* a plugin holding the state takes the kicked one (x at T, half-kicked
     * v, a = 0: a straight drift until the next kick) */
    return gp_force_block_done(sim, na, sim->active, NULL);
}

/* Leaves synchronised velocities at sim->time (the integrator restarts). */
static gp_status synchronize(gp_sim *sim)
{
    return sync_to(sim, sim->time);
}

const gp_integrator_def gp_scheme_block_kdk = {
    .name = "block-kdk",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_TOP_STEPS | GP_SCHEME_MPI,
    .summary = "kick-drift-kick leapfrog with block (power-of-two) time steps below dt (Gadget-2 style)",
    GP_SETTINGS_TABLE(settings, gp_block_settings),
    .start = start, .step = step, .synchronize = synchronize, .predict = predict,
};
