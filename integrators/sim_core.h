/*
 * sim_core.h — what the integrators see of a gp_sim (not installed).
 *
 * An integrator is a gp_integrator_def: a name, a table of its parameters
 * (settings.h) and a few callbacks, in its own file, listed by name in
 * registry.c (see docs/INTEGRATORS.md). The simulation keeps
 * the per-particle arrays every scheme shares (positions, velocities, the
 * last accelerations, per-particle times and levels), so checkpoints and
 * solver swaps work for every integrator without its help.
 */
#ifndef GP_SIM_CORE_H
#define GP_SIM_CORE_H

#include <stdio.h>

#include "gp_integrator.h"
#include "settings.h"
#include "timestep_levels.h"

typedef struct gp_integrator_def gp_integrator_def;

struct gp_sim {
    /* solver */
    const gp_api *api;
    gp_solver *solver;
    int own_solver;
    void *plugin_handle;      /* loader handle when the sim opened the plugin */
    int solver_fresh;         /* 0: next force call must set_particles */
    int subset_all;           /* the solver's active subset is "all" */
    int solver_path;          /* GP_PATH_*: how block steps talk to it */
    int state_fresh;          /* 1.1: the solver holds every particle's
                                 state (set_state since its last
                                 set_particles / update_positions) */
    double *pack;             /* 1.1: scratch packing a subset's state */
    size_t pack_cap;          /* particles pack has room for */
    char solver_name[64];

    /* particles: pos/vel at each particle's own time t_i (= time when
     * synchronised); acc is the acceleration at (pos, t_i). */
    size_t n;
    double *pos, *vel, *mass, *acc;
    uint64_t *ids;
    double *work;             /* 3n scratch: predicted positions */
    double *work2;            /* 3n scratch: new accelerations   */
    uint32_t *active;         /* n scratch: active indices        */

    /* time */
    double time;
    gp_levels lv;             /* time-step levels (block-rk2), ticks */

    /* integrator */
    const gp_integrator_def *integ;
    void *settings;           /* the scheme's own settings struct, described
                                 by integ->settings (settings.h) */
    void *priv;               /* integrator's private state */
    int started;              /* integrator has its initial accelerations */

    /* counters */
    uint64_t steps, force_calls, particle_forces, diag_force_calls;
    uint64_t last_active, solver_swaps, syncs;
    uint64_t mass_updates;    /* gp_sim_set_masses calls that changed a mass */
    uint64_t state_steps, state_resyncs;  /* block steps through 1.1, full
                                             state sends */

    volatile int stop_requested;
    char err[512];
    struct gp_stopping *stopping;  /* stopping conditions (stopping.c); NULL: none */

    /* several processes share one collective solver (gp_sim_set_collective):
     * the reductions that keep their solver calls in step; NULL: one process */
    int64_t (*reduce)(void *ctx, int64_t x, int op);
    void *reduce_ctx;
};

/* x reduced over the processes that share the solver (x itself for one
 * process): the decisions that decide whether a solver call happens. */
static inline int64_t gp_sim_global_max(const gp_sim *sim, int64_t x)
{
    return sim->reduce ? sim->reduce(sim->reduce_ctx, x, GP_SIM_REDUCE_MAX) : x;
}
static inline int64_t gp_sim_global_sum(const gp_sim *sim, int64_t x)
{
    return sim->reduce ? sim->reduce(sim->reduce_ctx, x, GP_SIM_REDUCE_SUM) : x;
}
/* The next block tick of every process: the deepest level over all. */
static inline uint64_t gp_sim_next_block(const gp_sim *sim)
{
    return gp_levels_next_for(&sim->lv, (int)gp_sim_global_max(sim, gp_levels_deepest(&sim->lv)));
}
/* Whether na active particles (of sim->n) are "all" on every process: the
 * choice between the subset "all" and a list must be the same everywhere. */
static inline int gp_sim_all_active(const gp_sim *sim, size_t na)
{
    return !gp_sim_global_max(sim, na != sim->n);
}

struct gp_integrator_def {
    const char *name;
    const char *summary;
    /* Its parameters: a table of n_settings rows describing the fields of
     * its own settings struct of settings_size bytes (sim->settings). */
    const gp_setting *settings;
    size_t n_settings, settings_size;
    /* Called when the state is synchronised at sim->time and the
     * integrator must (re)start there: compute initial accelerations,
     * levels, private state. */
    gp_status (*start)(gp_sim *sim);
    /* One step, not past t_end (t_end > sim->time). */
    gp_status (*step)(gp_sim *sim, double t_end);
    /* Optional: leave a synchronised state (pos, vel at sim->time) before
     * the integrator is restarted (block schemes; called whenever it is
     * set and the integrator has started). */
    gp_status (*synchronize)(gp_sim *sim);
    /* Optional: the state at sim->time into pos/vel (either may be NULL),
     * for schemes whose stored vel is not the velocity at t_last (KDK).
     * Default: second-order prediction from (pos, vel, acc) at t_last. */
    void (*predict)(const gp_sim *sim, double *pos, double *vel);
    /* Optional: free private state. */
    void (*stop)(gp_sim *sim);
    /* Optional: private state for checkpoints (a few doubles). */
    size_t n_saved;
    void (*save)(const gp_sim *sim, double *out);
    gp_status (*load)(gp_sim *sim, const double *in); /* recreates priv */
};

/* Stopping conditions (stopping.c), hooked into gp_sim_evolve and
 * gp_sim_free: begin resets them (and checks the radii) when an evolve
 * starts; after_step returns 1 when an enabled one is met. */
typedef struct gp_stopping gp_stopping;
gp_status gp_stopping_begin(gp_sim *sim);
int gp_stopping_after_step(gp_sim *sim);
void gp_stopping_free(gp_sim *sim);

/* The registry (registry.c): the built-in schemes are listed there, one
 * line each; a scheme of one's own (integrator research, a test) is
 * registered with gp_integrator_register_def before a gp_sim uses it.
 * Returns 0, or -1 when the name is taken or the registry is full. */
int gp_integrator_register_def(const gp_integrator_def *def);
const gp_integrator_def *gp_integrator_find(const char *name);

/* ---- the core (sim_core.c): below every other file of integrators/ ---- */

/* Failure with a sentence (printf-like); returns the status. */
gp_status gp_sim_fail(gp_sim *sim, gp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* GP_ERR_BAD_STATE with a sentence when no solver is attached. */
gp_status gp_sim_need_solver(gp_sim *sim);
/* Every particle's position and velocity (either may be NULL) at
 * sim->time: synchronised particles as stored, the others as the
 * integrator predicts them (its predict, or second order in position from
 * (pos, vel, acc) at t_last). */
void gp_sim_predict_state(const gp_sim *sim, double *pos, double *vel);

/* Forces (force.c). Positions pos[3n] of all particles (predicted);
 * compute accelerations of all particles into acc[3n] (pot may be NULL). */
gp_status gp_force_all(gp_sim *sim, const double *pos, double *acc, double *pot);
/* Same, for the na active particles idx[] (acc[3na] in idx order). */
gp_status gp_force_active(gp_sim *sim, const double *pos, size_t na,
                          const uint32_t *idx, double *acc);
/* The ABI 1.1 path (solver_state.c): the solver holds each particle's
 * state (x_i, v_i, a_i, t_i) and predicts it. */
enum { GP_PATH_AUTO = 0, GP_PATH_10 = 1, GP_PATH_11 = 2 };
/* 1 when block steps go through set_state/predict/get_positions: the
 * setting allows it and the solver's table has the 1.1 calls. */
int gp_state_path(const gp_sim *sim);
/* GP_OK, or GP_ERR_UNSUPPORTED with a sentence when the setting demands
 * the 1.1 path ("1.1") and the solver lacks it. */
gp_status gp_state_path_check(gp_sim *sim);
/* set_state for m particles idx[] (NULL: all n in order) from sim->pos and
 * sim->vel at their own times gp_levels_time(t_last[i]), with
 * accelerations from acc[3n] (NULL: zero, a pure drift). */
gp_status gp_state_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *acc);
/* One block step's force call through 1.1: the full state first if the
 * solver lacks it (acc as for gp_state_send), predict(t), get_positions of
 * the na active particles idx[] into xp[3na] and their accelerations into
 * anew[3na] (both packed in idx order). */
gp_status gp_state_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                                const double *acc, double *xp, double *anew);
/* The ABI's prediction of one coordinate, evaluated exactly as
 * gp_predict_coord of plugin/base/plugin_base.h (the integrators are
 * compiled with -ffp-contract=off, so no fused multiply-add): a CPU
 * plugin's predict gives the same bits, signed zeros included. */
static inline double gp_sim_predict_coord(double x, double v, double a, double dt)
{
    double h = 0.5 * dt * dt;
    double xv = x + dt * v;
    return xv + h * a;
}

/* Forces on the na particles idx[] from the ns sources src[] only (ABI
 * 1.1 set_source_subset; a 1.0 plugin gets them through masked masses,
 * mass_mask: n doubles of scratch). acc[3na] in idx order. (hold.c) */
gp_status gp_force_from_sources(gp_sim *sim, const double *pos, size_t na, const uint32_t *idx,
                                size_t ns, const uint32_t *src, double *mass_mask, double *acc);
int gp_force_has_source_subset(const gp_sim *sim);
/* The softening a time-step criterion uses: the setting eps, or the
 * solver's eps when the setting is negative ("solver"). */
gp_status gp_sim_criterion_eps(gp_sim *sim, double setting, double *eps);

#endif /* GP_SIM_CORE_H */
