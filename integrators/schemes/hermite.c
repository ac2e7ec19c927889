/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hermite.c — the fourth-order Hermite predictor-corrector on block
 * (power-of-two) time steps (Makino & Aarseth 1992; Makino 1991), the
 * scheme of NBODY6, ph4 and the GRAPE codes.
 *
 * State per particle: x_i, v_i, a_i, j_i (jerk) at its own time t_i
 * (sim->pos, vel, acc at t_last; the jerk in priv). One block step to the
 * next block tick T (the levels of timestep_levels.h):
 *   1. the plugin predicts every particle to third order,
 *          x_p = x + dt v + dt^2/2 a + dt^3/6 j,   v_p = v + dt a + dt^2/2 j,
 *      and returns the active ones' x_p, v_p and their acceleration a1 and
 *      jerk j1 there (ABI 1.2, force_jerk.c: O(n_active) across the ABI);
 *   2. the corrector, from a0, j0 (at t_i) and a1, j1 (at T), dt = T - t_i:
 *          a2 = (-6 (a0 - a1) - dt (4 j0 + 2 j1)) / dt^2      (at t_i)
 *          a3 = (12 (a0 - a1) + 6 dt (j0 + j1)) / dt^3
 *          x1 = x_p + dt^4/24 a2 + dt^5/120 a3
 *          v1 = v_p + dt^3/6 a2 + dt^4/24 a3
 *   3. the next step from Aarseth's criterion at T (a2 moved to T:
 *      a2 + dt a3),
 *          dt = sqrt(eta (|a||a2| + |j|^2) / (|j||a3| + |a2|^2)),
 *      as a level: deeper at once, shallower only where the levels
 *      synchronise (gp_levels_adjust); then set_state_jerk of the
 *      corrected particles.
 * The first step of each particle comes from the start-up criterion
 * dt = eta_start |a| / |j| with a and j from one force call for all.
 * End times off the dt_max grid are reached by one synchronising step
 * (every particle corrected over its own t - t_i), as in block-rk2.
 *
 * The jerk is computed by the plugin (GP_CAP_JERK): a plugin without
 * compute_forces_ex or the jerk is refused at the start with a sentence.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"
#include "solver/force_jerk.h"
#include "block_step.h"
#include "solver/solver_cache.h"

typedef struct hermite_settings {
    double dt;          /* dt_max: level 0; level l steps dt_max / 2^l */
    double eta;         /* Aarseth's criterion */
    double eta_start;   /* start-up step eta_start |a| / |j|; < 0: eta / 10 */
    int max_level;      /* deepest level below dt_max */
} hermite_settings;

#define HSET(sim) ((const hermite_settings *)(sim)->settings)

static const gp_setting settings[] = {
    GP_SETTING_POSITIVE(hermite_settings, dt, "0.0625",
                        "dt_max: the largest step (level 0); levels below it are dt_max / 2^l"),
    GP_SETTING_POSITIVE(hermite_settings, eta, "0.02",
                        "accuracy of Aarseth's criterion sqrt(eta (|a||a2| + |j|^2) / (|j||a3| + |a2|^2))"),
    /* auto: eta / 10. A fixed 0.01 let a Plummer sphere of 4096 start a
     * few particles on steps too long for their first correction (|dE/E|
     * 1.1e-6 at t = 0.0625, against 3.8e-9 with 0.002; the error then
     * stays), at eta 0.02 as at 0.005: the start must be as careful as
     * the run is asked to be (docs/INTEGRATORS.md). */
    { "eta_start", GP_SETTING_DOUBLE, "auto",
      "accuracy of the start-up step eta_start |a| / |j|; auto: eta / 10",
      offsetof(hermite_settings, eta_start), 0.0, 0.0, 1, NULL, "auto", -1.0 },
    { "max_level", GP_SETTING_INT, "20", "deepest level allowed (smallest step dt_max / 2^max_level)",
      offsetof(hermite_settings, max_level), 0, GP_LEVELS_MAX, 0, NULL, NULL, 0 },
};

/* Private state: the jerk of every particle at its t_i (saved in
 * checkpoints), and scratch for the predicted velocities and new jerks. */
typedef struct hermite_priv {
    double *jerk, *vp, *jn;   /* 3n each */
} hermite_priv;

#define PRIV(sim) ((hermite_priv *)(sim)->priv)

static void stop(gp_sim *sim)
{
    hermite_priv *p = PRIV(sim);
    if (!p) return;
    free(p->jerk); free(p->vp); free(p->jn);
    free(p);
    sim->priv = NULL;
}

/* priv for sim->n particles, jerks zero. */
static gp_status alloc_priv(gp_sim *sim)
{
    stop(sim);
    hermite_priv *p = calloc(1, sizeof *p);
    if (p) {
        sim->priv = p;
        p->jerk = calloc(3 * sim->n, sizeof *p->jerk);
        p->vp = malloc(3 * sim->n * sizeof *p->vp);
        p->jn = malloc(3 * sim->n * sizeof *p->jn);
    }
    if (!p || !p->jerk || !p->vp || !p->jn) {
        stop(sim);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory starting hermite (%zu particles)", sim->n);
    }
    return GP_OK;
}

static double norm3(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

/* The level of a wanted step: no finite step (no force, or no change of
 * it) is level 0. */
static int level_for(const gp_levels *lv, double dt)
{
    return dt < HUGE_VAL ? gp_levels_for_dt(lv, dt) : 0;
}

/* Aarseth's criterion from a, j, a2, a3 at the same time. */
static double aarseth_dt(double eta, const double *a, const double *j, const double *a2, const double *a3)
{
    double A = norm3(a), J = norm3(j), A2 = norm3(a2), A3 = norm3(a3);
    double num = A * A2 + J * J, den = J * A3 + A2 * A2;
    return den > 0 ? sqrt(eta * num / den) : HUGE_VAL;
}

/* The start-up criterion eta_start |a| / |j|. */
static double startup_dt(double eta_s, const double *a, const double *j)
{
    double J = norm3(j);
    return J > 0 ? eta_s * norm3(a) / J : HUGE_VAL;
}

/* Corrects particle i over dt from its prediction (xp, vp) and the new
 * acceleration and jerk (a1, j1); returns Aarseth's step at its new time. */
static double correct(gp_sim *sim, size_t i, const double *xp, const double *vp, const double *a1,
                      const double *j1, double dt)
{
    double *x = sim->pos + 3 * i, *v = sim->vel + 3 * i, *a0 = sim->acc + 3 * i, *j0 = PRIV(sim)->jerk + 3 * i;
    double dt2 = dt * dt, dt3 = dt2 * dt, dt4 = dt3 * dt, dt5 = dt4 * dt;
    double a2e[3], a3v[3];
    for (int c = 0; c < 3; ++c) {
        double da = a0[c] - a1[c];
        double a2 = (-6.0 * da - dt * (4.0 * j0[c] + 2.0 * j1[c])) / dt2;
        double a3 = (12.0 * da + 6.0 * dt * (j0[c] + j1[c])) / dt3;
        x[c] = xp[c] + (dt4 / 24.0) * a2 + (dt5 / 120.0) * a3;
        v[c] = vp[c] + (dt3 / 6.0) * a2 + (dt4 / 24.0) * a3;
        a0[c] = a1[c];
        j0[c] = j1[c];
        a2e[c] = a2 + dt * a3;   /* the second derivative at the new time */
        a3v[c] = a3;
    }
    return aarseth_dt(HSET(sim)->eta, a1, j1, a2e, a3v);
}

/* The grid restarts at t with every particle synchronised there. */
static void anchor(gp_sim *sim, double t)
{
    gp_levels_anchor(&sim->lv, t, HSET(sim)->dt, HSET(sim)->max_level);
    sim->time = t;
}

/* One force call for every particle at time t (xp, vp, a1, j1 packed in
 * particle order into work, vp, work2, jn). */
static gp_status force_all(gp_sim *sim, double t)
{
    hermite_priv *p = PRIV(sim);
    for (size_t i = 0; i < sim->n; ++i) sim->active[i] = (uint32_t)i;
    return gp_jerk_force_active(sim, t, sim->n, sim->active, p->jerk, sim->work, p->vp, sim->work2, p->jn);
}

static gp_status start(gp_sim *sim)
{
    gp_status st = gp_jerk_path_check(sim, "hermite");
    if (st == GP_OK) st = alloc_priv(sim);
    /* the first force call below is collective under a shared solver */
    st = gp_sim_agree(sim, st, "hermite was not started");
    if (st != GP_OK) return st;
    hermite_priv *p = PRIV(sim);
    anchor(sim, sim->time);
    memset(sim->acc, 0, 3 * sim->n * sizeof *sim->acc);
    gp_solver_state_stale(sim);
    st = force_all(sim, sim->time);
    if (st != GP_OK) return st;
    memcpy(sim->acc, sim->work2, 3 * sim->n * sizeof *sim->acc);
    memcpy(p->jerk, p->jn, 3 * sim->n * sizeof *p->jerk);
    double eta_s = HSET(sim)->eta_start > 0 ? HSET(sim)->eta_start : 0.1 * HSET(sim)->eta;
    for (size_t i = 0; i < sim->n; ++i)
        sim->lv.level[i] = (uint8_t)level_for(&sim->lv, startup_dt(eta_s, sim->acc + 3 * i, p->jerk + 3 * i));
    gp_levels_touched(&sim->lv);
    gp_solver_state_stale(sim);   /* the plugin holds a = j = 0: send the real state */
    return GP_OK;
}

/* Brings every particle to time t (>= each t_i) with one force call for
 * all and a correction over each one's own t - t_i, then restarts the
 * grid at t: the corrected particles take Aarseth's step, the ones
 * already at t keep the step they had. */
static gp_status sync_to(gp_sim *sim, double t)
{
    hermite_priv *p = PRIV(sim);
    gp_status st = force_all(sim, t);
    if (st != GP_OK) return st;
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double dt = t - gp_levels_time(&sim->lv, sim->lv.t_last[i]), want;
        if (dt == 0.0) {
            memcpy(sim->acc + 3 * i, sim->work2 + 3 * i, 3 * sizeof *sim->acc);
            memcpy(p->jerk + 3 * i, p->jn + 3 * i, 3 * sizeof *p->jerk);
            want = gp_levels_dt(&sim->lv, (size_t)i);
        } else {
            want = correct(sim, (size_t)i, sim->work + 3 * i, p->vp + 3 * i, sim->work2 + 3 * i, p->jn + 3 * i, dt);
        }
        p->vp[3 * i] = want;   /* its own slot, read */
    }
    anchor(sim, t);
    sim->syncs++;
    for (long long i = 0; i < n; ++i) sim->lv.level[i] = (uint8_t)level_for(&sim->lv, p->vp[3 * i]);
    gp_levels_touched(&sim->lv);
    gp_solver_state_stale(sim);   /* everybody moved: the next call sends all */
    return GP_OK;
}

static gp_status step(gp_sim *sim, double t_end)
{
    gp_status st = gp_jerk_path_check(sim, "hermite");   /* a solver swapped in since */
    if (st != GP_OK) return st;
    uint64_t T;
    double t_new;
    if (!gp_block_next(sim, t_end, &T, &t_new)) return sync_to(sim, t_end);
    hermite_priv *p = PRIV(sim);
    gp_levels *lv = &sim->lv;
    double tick = gp_levels_tick(lv);
    size_t na = gp_levels_active(lv, T, sim->active);
    st = gp_jerk_force_active(sim, t_new, na, sim->active, p->jerk, sim->work, p->vp, sim->work2, p->jn);
    if (st != GP_OK) return st;
    const long long nact = (long long)na;
#pragma omp parallel for schedule(static) if (nact > GP_PAR_ACTIVE_MIN)
    for (long long k = 0; k < nact; ++k) {
        size_t i = sim->active[k];
        double dt = (double)(T - lv->t_last[i]) * tick;
        double want = correct(sim, i, sim->work + 3 * k, p->vp + 3 * k, sim->work2 + 3 * k, p->jn + 3 * k, dt);
        lv->t_last[i] = T;
        gp_levels_adjust(lv, i, level_for(lv, want), T);
    }
    gp_block_stepped(sim, T, t_new, t_end);
    /* the plugin takes the corrected particles' state */
    return gp_jerk_send(sim, na, sim->active, p->jerk);
}

static gp_status synchronize(gp_sim *sim)
{
    return gp_sim_synchronised(sim) ? GP_OK : sync_to(sim, sim->time);
}

/* The state at sim->time: third order from (x, v, a, j) at each t_i, the
 * plugin's prediction bit for bit. */
static void predict(const gp_sim *sim, double *pos, double *vel)
{
    const hermite_priv *p = PRIV(sim);
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double dt = 0.0;
        if (sim->lv.t_last[i] != sim->lv.now) dt = sim->time - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
        for (int c = 0; c < 3; ++c) {
            size_t k = 3 * (size_t)i + (size_t)c;
            double x = sim->pos[k], v = sim->vel[k], a = sim->acc[k], j = p->jerk[k];
            if (pos) pos[k] = dt == 0.0 ? x : gp_predict_coord3(x, v, a, j, dt);
            if (vel) vel[k] = dt == 0.0 ? v : gp_predict_vel3(v, a, j, dt);
        }
    }
}

/* Restart from a checkpoint or an import: priv afresh; the jerks come
 * back through particle_saved. */
static gp_status load(gp_sim *sim, const double *in)
{
    (void)in;
    return alloc_priv(sim);
}

static double *particle_saved(const gp_sim *sim)
{
    return PRIV(sim) ? PRIV(sim)->jerk : NULL;
}

const gp_integrator_def gp_scheme_hermite = {
    .name = "hermite",
    .flags = GP_SCHEME_BLOCK_STEPS | GP_SCHEME_MPI | GP_SCHEME_NEEDS_JERK | GP_SCHEME_BACKWARD,
    .summary = "4th-order Hermite predictor-corrector (Makino & Aarseth 1992), block time steps "
               "below dt, Aarseth's criterion; needs a plugin with the jerk (ABI 1.2, e.g. cpu-direct)",
    GP_SETTINGS_TABLE(settings, hermite_settings),
    .start = start, .step = step, .synchronize = synchronize, .predict = predict, .stop = stop,
    .load = load, .n_particle_saved = 3, .particle_saved = particle_saved,
};
