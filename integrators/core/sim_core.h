/* SPDX-License-Identifier: Apache-2.0 */
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

#include "gp_sim.h"
#include "gravplug_predict.h"
#include "par_min.h"
#include "settings.h"
#include "timestep_levels.h"

typedef struct gp_integrator_def gp_integrator_def;

struct gp_sim {
    /* solver */
    const gp_api *api;
    gp_solver *solver;
    int own_solver;
    void *plugin_handle;      /* loader handle when the sim opened the plugin */
    /* The solver cache, what the plugin holds of the particles: owned by
     * the force bridge (solver/solver_cache.h says how others mark it
     * stale). */
    int solver_fresh;         /* 0: next force call must set_particles */
    int subset_all;           /* the solver's active subset is "all" */
    int solver_path;          /* GP_PATH_*: how block steps talk to it */
    int state_fresh;          /* 1.1: the solver holds every particle's
                                 state (set_state since its last
                                 set_particles / update_positions) */
    double *pack;             /* 1.1: scratch packing a subset's state */
    size_t pack_cap;          /* doubles pack has room for */
    char solver_name[64];
    gp_log_fn log;            /* given to the plugins it opens (may be NULL) */
    void *log_user;

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
    uint64_t criterion_forces;  /* of particle_forces: time-step criterion calls
                                   (hold's criterion, cc's graph) */
    uint64_t criterion_pairs;   /* their active x source counts (pair work on
                                   a direct plugin); not in checkpoints */
    uint64_t criterion_calls;   /* of force_calls: those criterion calls */
    uint64_t criterion_cpu_ns;  /* process CPU time inside the criterion
                                   (its calls, lists and host work) */

    volatile int stop_requested;
    char err[512];
    struct gp_stopping *stopping;  /* stopping conditions (stopping.c); NULL: none */

    /* several processes share one collective solver (gp_sim_set_collective):
     * the reductions that keep their solver calls in step; NULL: one process */
    int64_t (*reduce)(void *ctx, int64_t x, int op);
    void *reduce_ctx;
    /* the last failure was only the agreement with another process's
     * (gp_sim_failed_elsewhere) */
    int failed_elsewhere;
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
    unsigned flags;           /* GP_SCHEME_* (gp_sim.h) */
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
    /* Optional: per-particle private state for checkpoints, n_particle_saved
     * doubles per particle (at most 4), particle i's at
     * particle_saved(sim)[n_particle_saved * i ...] while started (hermite's
     * jerks). A checkpoint saves them and, after load, writes them back
     * there. Rows of gp_sim_export_state do not carry them: such a scheme
     * is refused by gp_sim_import_state. */
    size_t n_particle_saved;
    double *(*particle_saved)(const gp_sim *sim);
};


/* A descriptor's settings fields from its table and its settings struct. */
#define GP_SETTINGS_TABLE(TABLE, STRUCT)                                                  \
    .settings = (TABLE), .n_settings = sizeof(TABLE) / sizeof (TABLE)[0],               \
    .settings_size = sizeof(STRUCT)


/* ---- the core (sim_core.c): below every other file of integrators/ ---- */

/* Failure with a sentence (printf-like); returns the status. */
gp_status gp_sim_fail(gp_sim *sim, gp_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Before a collective solver call (several processes sharing the solver,
 * gp_sim_set_collective), st being this process's status so far: all
 * agree, so that none goes into the call while another failed before it
 * and will not come. A process that did not fail itself then fails too,
 * saying what was not done (not_done) and that another process failed
 * first (gp_sim_failed_elsewhere). One process: st, unchanged. */
gp_status gp_sim_agree(gp_sim *sim, gp_status st, const char *not_done);

/* GP_ERR_BAD_STATE with a sentence when no solver is attached. */
gp_status gp_sim_need_solver(gp_sim *sim);
/* GP_ERR_BAD_STATE with a sentence when no particles were given yet. */
gp_status gp_sim_need_particles(gp_sim *sim);
/* st (not GP_OK) from the solver refusing what ("the particle
 * positions", "set_state"): gp_sim_fail with the solver's own sentence. */
gp_status gp_sim_solver_refused(gp_sim *sim, gp_status st, const char *what);
/* Every particle's position and velocity (either may be NULL) at
 * sim->time: synchronised particles as stored, the others as the
 * integrator predicts them (its predict, or second order in position from
 * (pos, vel, acc) at t_last). */
void gp_sim_predict_state(const gp_sim *sim, double *pos, double *vel);
/* Every particle predicted to time t into out[3n] from (pos, vel, acc) at
 * its own time with the ABI's expression (gp_predict_coord of
 * gravplug_predict.h; the integrators are compiled with -ffp-contract=off);
 * acc NULL: a straight drift (a = 0); with jerk[3n], to third order
 * (gp_predict_coord3). What a 1.1 (1.2) plugin's predict gives, bit for
 * bit, signed zeros included. */
void gp_sim_predict_all(const gp_sim *sim, double t, const double *acc, const double *jerk,
                        double *out);

/* The integrator's own OpenMP loops take the solver's threads
 * (GP_PARAM_THREADS of abi/gravplug_params.h) between
 * gp_sim_threads_begin and gp_sim_threads_end, which the public calls
 * that run them (gp_sim_step, gp_sim_evolve, gp_sim_energies,
 * gp_sim_get_particles) wrap: threads = 1 is then one core, not the
 * plugin on one and the corrector on OpenMP's default. A solver that
 * lists no such parameter, or leaves it at 0, changes nothing. begin
 * returns what end restores (0: nothing). */
int gp_sim_threads_begin(const gp_sim *sim);
void gp_sim_threads_end(int saved);

/* How block steps talk to the solver (gp_sim_set_solver_path). */
enum { GP_PATH_AUTO = 0, GP_PATH_10 = 1, GP_PATH_11 = 2 };

/* The process's CPU time in nanoseconds (all threads), for the
 * criterion_cpu_ns counter; 0 where the clock is missing. */
uint64_t gp_sim_cpu_ns(void);

/* The first repeat among ids[0..n), in index order: 1 with *b the
 * smallest index whose id came before and *a that id's first index
 * (*a < *b), 0 when all are distinct, -1 when out of memory. Particle
 * ids name particles in snapshots, migrations and restarts, so a copy is
 * a damaged input, never a second particle. */
int gp_sim_find_duplicate_id(const uint64_t *ids, size_t n, size_t *a, size_t *b);

#endif /* GP_SIM_CORE_H */
