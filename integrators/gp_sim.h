/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gp_sim.h — the host-side simulation API of libgravplug.so (gp_sim_*,
 * gp_integrator_*, the scheme definition's GP_SCHEME_* flags).
 *
 * A gp_sim owns the time: particle positions, velocities, masses and ids,
 * the integrator (leapfrog, rk4, rk2, block-rk2, rk8pd, ... chosen by name)
 * and its time-step bookkeeping. It drives one gravity plugin (a gp_api and
 * a gp_solver instance) through active-subset force calls, and can swap
 * that plugin mid-run without disturbing the trajectory.
 *
 * Shaped for ctypes/cffi and for AMUSE-style drivers: every function takes
 * plain pointers and sizes, nothing is passed by value except scalars, and
 * every failure returns a gp_status with a sentence in gp_sim_last_error().
 *
 *   gp_sim *sim;
 *   gp_sim_new(&sim);
 *   gp_sim_open_solver(sim, "auto", 1, (const char*[]){"eps"},
 *                      (const char*[]){"0.01"});       // or gp_sim_set_solver
 *   gp_sim_set_particles(sim, n, pos, vel, mass, NULL);
 *   gp_sim_set_integrator(sim, "block-rk2");
 *   gp_sim_set_integrator_param(sim, "eta", "0.2");
 *   gp_sim_evolve(sim, 10.0);                          // evolve_model(t)
 *   gp_sim_energies(sim, &kin, &pot);
 *   gp_sim_get_particles(sim, pos, vel, NULL, NULL);
 *   gp_sim_free(sim);
 *
 * Arrays: pos, vel, acc and points are interleaved xyz (3*n doubles); mass
 * and pot are n doubles; ids are n uint64_t. The caller owns every array;
 * the simulation copies what it keeps.
 *
 * Threads: one gp_sim is used by one thread at a time; distinct gp_sim
 * objects are independent.
 *
 * Determinism: the same inputs, integrator, parameters and plugin give
 * bit-identical trajectories. Solver resync points: wherever the plugin is
 * re-fed with set_particles (a tree plugin then builds afresh, dropping any
 * refit history) — at the start, after gp_sim_checkpoint_save and _load,
 * after new particles, masses or a new solver, and after every step that
 * ends with all particles synchronised on the dt_max grid (every step of a
 * shared-step scheme, every dt_max boundary or synchronising step of a
 * block scheme). A diagnostic's force call there (gp_sim_energies,
 * gp_sim_field_at) leaves it a resync point, so output intervals that are
 * multiples of dt_max never change the trajectory, even with a plugin that
 * keeps a history (cpu-tree's rebuild = auto weighs the calls since its
 * last build). The guarantee: a run restarted from a checkpoint written
 * at a resync point of the uninterrupted run continues bit for bit like it
 * — a scheduled checkpoint always is one; gravhost's checkpoint on SIGINT
 * or SIGTERM waits for the next one (gp_sim_at_resync_point). A checkpoint
 * written elsewhere restarts with a fresh tree where the uninterrupted run
 * refits, so the two agree to the solver's accuracy, not bit for bit.
 * Plugins whose results depend on their previous call (cpu-tree's
 * mac=acceleration) are bit-identical only across scheduled checkpoints.
 */
#ifndef GP_SIM_H
#define GP_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_sim gp_sim;

/* ---- lifetime ----------------------------------------------------------- */

/* A new, empty simulation: no solver, no particles, time 0, integrator
 * "block-rk2" with its defaults. */
GRAVPLUG_EXPORT gp_status gp_sim_new(gp_sim **out);

/* Frees the simulation, finalises a solver it owns and closes a plugin it
 * opened. NULL is a no-op. */
GRAVPLUG_EXPORT void gp_sim_free(gp_sim *sim);

/* A sentence about the last failure on sim ("" if none), valid until the
 * next call on sim. gp_sim_last_error(NULL) reports a failed gp_sim_new. */
GRAVPLUG_EXPORT const char *gp_sim_last_error(const gp_sim *sim);

/* ---- the gravity solver ------------------------------------------------- */

/* Opens a plugin by short name ("cpu-direct", "cpu-tree", "cuda-tree"), by
 * path to a .so, or "auto": the first plugin on the search path whose init
 * succeeds, in the loader's order of preference by capabilities
 * (gp_plugin_list_preferred of gravplug_loader.h: a GPU tree, a CPU tree,
 * a GPU then a CPU exact sum; one that spreads over MPI processes,
 * GP_CAP_MPI, is opened by name only), creates an instance with the n_params name/value pairs
 * (unknown names are rejected with the plugin's own sentence) and makes it
 * the simulation's solver. The simulation owns both. Replaces (and frees)
 * any previous solver: usable mid-run to swap solvers seamlessly. */
GRAVPLUG_EXPORT gp_status gp_sim_open_solver(gp_sim *sim, const char *plugin,
                                             size_t n_params,
                                             const char *const *names,
                                             const char *const *values);

/* Where the plugins that gp_sim_open_solver opens from now on send their
 * log lines (gp_init_args.log: the device they use, warnings, per-call
 * debug lines such as mpi-tree's phases): fn(user, level, message) for
 * every level, the caller filters. fn NULL (the default): they stay
 * silent. A solver already open keeps what it was given. */
GRAVPLUG_EXPORT void gp_sim_set_log(gp_sim *sim, gp_log_fn fn, void *user);

/* Uses an instance the caller created from a plugin it opened itself.
 * take_ownership != 0: gp_sim_free (or the next swap) finalises it.
 * The plugin's .so must stay loaded while the simulation uses it. */
GRAVPLUG_EXPORT gp_status gp_sim_set_solver(gp_sim *sim, const gp_api *api,
                                            gp_solver *solver, int take_ownership);

/* The current solver's plugin name ("" if none). */
GRAVPLUG_EXPORT const char *gp_sim_solver_name(const gp_sim *sim);
/* The current solver's GP_CAP_* bits (0 if none). */
GRAVPLUG_EXPORT uint64_t gp_sim_solver_capabilities(const gp_sim *sim);
/* The current solver's softening (GP_PARAM_SOFTENING of
 * gravplug_params.h) into *eps: 1, or 0 (*eps = 0) when there is no solver
 * or it lists none. */
GRAVPLUG_EXPORT int gp_sim_solver_softening(gp_sim *sim, double *eps);

/* Passes a parameter to the current solver (its set_param). */
GRAVPLUG_EXPORT gp_status gp_sim_set_solver_param(gp_sim *sim, const char *name,
                                                  const char *value);
GRAVPLUG_EXPORT gp_status gp_sim_get_solver_param(gp_sim *sim, const char *name,
                                                  char *buf, size_t buflen);

/* How the block-step integrators (block-rk2, block-kdk) talk to the solver:
 *   "auto" (default)  through ABI 1.1 when the plugin offers set_state,
 *                     predict and get_positions, else through 1.0;
 *   "1.0"             always through 1.0: the host predicts all n particles
 *                     and sends them with update_positions every block
 *                     step; masses changed by gp_sim_set_masses go with a
 *                     fresh set_particles;
 *   "1.1"             always through 1.1; GP_ERR_UNSUPPORTED (here, or at
 *                     the next block step after a swap to such a plugin)
 *                     when the plugin lacks it.
 * Through 1.1 the plugin holds each particle's state (x_i, v_i, a_i, t_i)
 * and predicts it: a block step sends the corrected particles (set_state),
 * predict(T), fetches the active positions (get_positions) and computes
 * their forces, O(n_active) data instead of O(n). With a CPU plugin both
 * paths give bit-identical trajectories (tests/integrators/integrators-path.c), so the
 * setting is not saved in checkpoints. The shared-step integrators always
 * use 1.0: every particle's velocity changes every step, so set_state would
 * move more data than update_positions. Takes effect at the next step. */
GRAVPLUG_EXPORT gp_status gp_sim_set_solver_path(gp_sim *sim, const char *path);
/* The setting ("auto", "1.0" or "1.1"), and the path a block step would
 * take now with the current solver ("1.1" or "1.0"; "" without a solver). */
GRAVPLUG_EXPORT const char *gp_sim_solver_path(const gp_sim *sim);
GRAVPLUG_EXPORT const char *gp_sim_solver_path_in_use(const gp_sim *sim);

/* The solver's cumulative counters (gp_stats, caller sets struct_size). */
GRAVPLUG_EXPORT gp_status gp_sim_solver_stats(gp_sim *sim, gp_stats *out);

/* ---- particles ---------------------------------------------------------- */

/* Replaces all particles: n >= 1, pos[3n], vel[3n], mass[n] >= 0 (all
 * finite), ids[n] (NULL: 0..n-1). The simulation time is kept; the
 * integrator restarts from this synchronised state at the next step. */
GRAVPLUG_EXPORT gp_status gp_sim_set_particles(gp_sim *sim, size_t n,
                                               const double *pos, const double *vel,
                                               const double *mass, const uint64_t *ids);

/* Number of particles (0 before gp_sim_set_particles). */
GRAVPLUG_EXPORT size_t gp_sim_count(const gp_sim *sim);

/* Copies the state at the current time into the arrays that are not NULL.
 * Under block time steps, particles not synchronised with the current time
 * are predicted to it (second order, as the integrator predicts them);
 * after gp_sim_evolve every particle is synchronised. */
GRAVPLUG_EXPORT gp_status gp_sim_get_particles(gp_sim *sim, double *pos, double *vel,
                                               double *mass, uint64_t *ids);

/* Overwrites positions and/or velocities (either may be NULL) of the same
 * n particles at the current time, e.g. a framework's kick; the integrator
 * restarts from this synchronised state. Synchronises first if needed. */
GRAVPLUG_EXPORT gp_status gp_sim_set_state(gp_sim *sim, const double *pos,
                                           const double *vel);

/* Overwrites masses (n doubles, finite, >= 0) at the current time, mid-run:
 * the integrator goes on from its current state (no synchronisation, no
 * restart; each particle's next force evaluation sees the new masses, and
 * the accelerations held from before enter its next correction as they
 * would for any field change). Only the masses that changed go to the
 * solver, in place through ABI 1.1 update_masses (a tree plugin refits, the
 * state it holds stays); a plugin without update_masses, or the "1.0"
 * solver path, gets a fresh set_particles at the next force call instead.
 * With cpu-direct both give the same bits (tests/integrators/integrators-masses.c). */
GRAVPLUG_EXPORT gp_status gp_sim_set_masses(gp_sim *sim, const double *mass);

/* Current simulation time, and setting it (only between runs: the
 * integrator restarts there). */
GRAVPLUG_EXPORT double gp_sim_time(const gp_sim *sim);
GRAVPLUG_EXPORT gp_status gp_sim_set_time(gp_sim *sim, double t);

/* ---- integrators -------------------------------------------------------- */

/* The registered integrators: count, and name/one-line summary by index
 * (NULL past the end). */
GRAVPLUG_EXPORT size_t gp_integrator_count(void);
GRAVPLUG_EXPORT const char *gp_integrator_name(size_t index);
GRAVPLUG_EXPORT const char *gp_integrator_summary(size_t index);

/* What an integrator is, in bits it declares in its own definition, so a
 * host asks instead of listing names (gp_integrator_flags). */
enum {
    GP_SCHEME_BLOCK_STEPS = 1u << 0, /* particles on their own time-step
                                        levels (per-particle dt) */
    GP_SCHEME_TOP_STEPS   = 1u << 1, /* one gp_sim_step is a whole top step
                                        of many force calls, ending where
                                        every particle is synchronised */
    GP_SCHEME_MPI         = 1u << 2, /* its solver calls depend only on the
                                        shared state, so every rank makes
                                        the same ones: runs under
                                        gravhost-mpi */
    GP_SCHEME_NEEDS_JERK  = 1u << 3, /* asks the solver for the jerk, and its
                                        step criterion reads it */
    GP_SCHEME_TIME_SYMMETRIC = 1u << 4, /* forward then back returns to
                                           rounding */
    GP_SCHEME_BACKWARD    = 1u << 5, /* evolves to an earlier time */
};

/* The GP_SCHEME_* bits of integrator `name` into *flags.
 * GP_ERR_INVALID_ARGUMENT for an unknown integrator or flags NULL. */
GRAVPLUG_EXPORT gp_status gp_integrator_flags(const char *name, unsigned *flags);

/* Parameters of integrator `name`, by index: writes pointers to static
 * strings (any output may be NULL). GP_ERR_INVALID_ARGUMENT past the end
 * or for an unknown integrator. */
GRAVPLUG_EXPORT gp_status gp_integrator_param(const char *name, size_t index,
                                              const char **param_name,
                                              const char **default_value,
                                              const char **doc);

/* Chooses the integrator by name (GP_ERR_UNKNOWN_PARAMETER with the list
 * of known names otherwise). Keeps the particles and time; synchronises
 * first when switching mid-run. Parameters reset to the new integrator's
 * defaults. */
GRAVPLUG_EXPORT gp_status gp_sim_set_integrator(gp_sim *sim, const char *name);
GRAVPLUG_EXPORT const char *gp_sim_integrator(const gp_sim *sim);

/* Integrator parameters as strings, checked against the integrator's
 * table (unknown names: GP_ERR_UNKNOWN_PARAMETER naming the accepted
 * ones). The common ones:
 *   dt         shared step (leapfrog, rk2, rk4), or dt_max (block-rk2)
 *   eta        accuracy of the time-step criterion (block-rk2)
 *   criterion  block-rk2: "softening" eta*sqrt(eps/|a|), "jerk"
 *              eta*|a|/|da/dt| (Aarseth-like, from two force calls), "min"
 *   eps        softening used by the criterion; "solver" (default) reads
 *              the solver's eps parameter
 *   max_level  deepest power-of-two level below dt_max (block-rk2)
 *   rtol, atol, h0   rk8pd tolerances and first step
 * A change takes effect at the next step (block-rk2 synchronises first). */
GRAVPLUG_EXPORT gp_status gp_sim_set_integrator_param(gp_sim *sim, const char *name,
                                                      const char *value);
GRAVPLUG_EXPORT gp_status gp_sim_get_integrator_param(gp_sim *sim, const char *name,
                                                      char *buf, size_t buflen);

/* ---- running ------------------------------------------------------------ */

/* Advances to time t_end and leaves every particle synchronised at t_end.
 * Under block-rk2, t_end on the dt_max grid costs nothing extra; elsewhere
 * the particles are brought to t_end with one synchronising step and the
 * level grid restarts there. An earlier t_end integrates backward where
 * the integrator has GP_SCHEME_BACKWARD (the forward run of the state with
 * time and velocities reversed, reversed back; the integrator restarts at
 * both ends), and is refused with a sentence naming those that can where
 * it has not. */
GRAVPLUG_EXPORT gp_status gp_sim_evolve(gp_sim *sim, double t_end);

/* One integrator step (one block step under block-rk2), not past t_end. */
GRAVPLUG_EXPORT gp_status gp_sim_step(gp_sim *sim, double t_end);

/* 1 when every particle is synchronised with the current time. */
GRAVPLUG_EXPORT int gp_sim_synchronised(const gp_sim *sim);

/* Asks a running gp_sim_evolve to return at the next step boundary with
 * GP_OK and the time reached (async-signal-safe: it sets a flag). */
GRAVPLUG_EXPORT void gp_sim_request_stop(gp_sim *sim);
GRAVPLUG_EXPORT int gp_sim_stop_requested(const gp_sim *sim);

/* ---- diagnostics -------------------------------------------------------- */

/* Kinetic and potential energy of the (synchronised or predicted) state;
 * either output may be NULL. The potential needs a solver with
 * GP_CAP_POTENTIAL and costs one force call (counted as diagnostic). */
GRAVPLUG_EXPORT gp_status gp_sim_energies(gp_sim *sim, double *kinetic, double *potential);

/* Total momentum p[3], angular momentum L[3] about the origin and the
 * centre of mass com[3]; any may be NULL. */
GRAVPLUG_EXPORT gp_status gp_sim_momenta(gp_sim *sim, double *p, double *L, double *com);

/* The field of all particles at m points (AMUSE get_gravity_at_point /
 * get_potential_at_point): acc[3m] and/or pot[m] (either may be NULL). */
GRAVPLUG_EXPORT gp_status gp_sim_field_at(gp_sim *sim, size_t m, const double *points,
                                          double *acc, double *pot);

/* Counters by name (GP_ERR_UNKNOWN_PARAMETER for others):
 *   steps             integrator steps (block steps under block-rk2)
 *   force_calls       compute_forces calls made by the integrator
 *   particle_forces   sum of active counts over those calls: the force cost
 *   diag_force_calls  compute_forces calls made for diagnostics
 *   last_active       active particles in the last step
 *   solver_swaps      solvers replaced mid-run
 *   syncs             forced synchronisations (off-grid evolve ends, ...)
 *   state_steps       block steps taken through ABI 1.1 (the plugin predicts)
 *   state_resyncs     full-state sends (set_state of all n) on that path:
 *                     after new particles, a solver swap, a checkpoint, or a
 *                     1.0-style call (a synchronising step, a diagnostic)
 *   criterion_forces  of particle_forces, those of time-step criterion calls
 *                     (hold's criterion, cc's step graph)
 *   criterion_pairs   their active x source products (the pair work on a
 *                     direct-summation plugin)
 *   criterion_calls   of force_calls, those criterion calls
 *   criterion_cpu_ns  process CPU nanoseconds spent in the criterion (its
 *                     calls, cc's lists and components, all threads): its
 *                     share of the run's CPU time; the criterion counters
 *                     are not kept in checkpoints */
GRAVPLUG_EXPORT gp_status gp_sim_counter(const gp_sim *sim, const char *name, uint64_t *value);

/* Each particle's time step now into dt[0..n): dt_max / 2^level under
 * block steps (the first step's levels before the first evolve: the
 * integrator starts, one force call), the shared dt otherwise;
 * GP_ERR_UNSUPPORTED for an integrator with neither (rk8pd). */
GRAVPLUG_EXPORT gp_status gp_sim_particle_timesteps(gp_sim *sim, double *dt);

/* Particles per time-step level now: counts[l] for l = 0 (dt_max) to
 * max_count-1; *n_levels gets the number of levels in use (deepest + 1).
 * Shared-step integrators put everybody on level 0. */
GRAVPLUG_EXPORT gp_status gp_sim_level_counts(const gp_sim *sim, uint64_t *counts,
                                              size_t max_count, size_t *n_levels);

/* ---- stopping conditions (stopping.c) ------------------------------------ */

/* AMUSE-style stopping conditions. Enabled ones are checked after every
 * integrator step of gp_sim_evolve (every block step under block-rk2) on
 * the state at the simulation time, and collisions also after every drift
 * inside a step of hold, hold-kdk and cc (their fast pairs meet and part
 * within one step); when one is met, gp_sim_evolve returns
 * GP_OK early, at that step's time (particles not synchronised there are
 * predicted on read, as gp_sim_get_particles says). The conditions met are
 * cleared when the next gp_sim_evolve begins. Radii and settings are not
 * part of checkpoints. */
enum {
    GP_STOP_COLLISION = 1u << 0,        /* |x_i - x_j| < r_i + r_j */
    GP_STOP_NUMBER_OF_STEPS = 1u << 1,  /* number_of_steps steps in this evolve */
    GP_STOP_TIMEOUT = 1u << 2,          /* more than timeout wall-clock seconds */
    GP_STOP_OUT_OF_BOX = 1u << 3        /* |x_i - c| > out_of_box_size */
};

/* Particle radii for collision detection: n radii (finite, >= 0) of the
 * current particles, or NULL (all 0: no collisions). Set them again after
 * gp_sim_set_particles (gp_sim_evolve refuses radii of another count). */
GRAVPLUG_EXPORT gp_status gp_sim_set_radii(gp_sim *sim, const double *radius);

/* Enables (on != 0) or disables the GP_STOP_* conditions in the mask. */
GRAVPLUG_EXPORT gp_status gp_sim_stop_enable(gp_sim *sim, unsigned conditions, int on);
GRAVPLUG_EXPORT unsigned gp_sim_stop_enabled(const gp_sim *sim);

/* Parameters, AMUSE's names and defaults: number_of_steps (an integer
 * >= 1, default 1), timeout (seconds > 0, default 4), out_of_box_size
 * (>= 0, default 0), out_of_box_use_center_of_mass (1: c is the centre of
 * mass, default; 0: the origin); and collision_by_neighbours (1, default:
 * where the integrator's force calls go through compute_forces_ex, as the
 * Hermite scheme's do, collisions are the pairs of each step's active
 * particles with their nearest neighbours from the plugin, ph4's rule:
 * with equal radii every overlapping pair with an active body; 0: the
 * exact sweep over all pairs after every step). */
GRAVPLUG_EXPORT gp_status gp_sim_stop_set_param(gp_sim *sim, const char *name, double value);
GRAVPLUG_EXPORT gp_status gp_sim_stop_get_param(gp_sim *sim, const char *name, double *value);

/* The conditions met during the last gp_sim_evolve (a GP_STOP_* mask). */
GRAVPLUG_EXPORT unsigned gp_sim_stop_set(const gp_sim *sim);

/* Entries of one condition met: colliding pairs (GP_STOP_COLLISION),
 * particles out of the box (GP_STOP_OUT_OF_BOX), 1 for the others, 0 when
 * not met. At most 1024 are kept per condition. */
GRAVPLUG_EXPORT size_t gp_sim_stop_count(const gp_sim *sim, unsigned condition);

/* Copies up to max entries as particle ids (those of gp_sim_set_particles):
 * collision pairs into first[k], second[k] (second may be NULL), particles
 * out of the box into first[k]. */
GRAVPLUG_EXPORT gp_status gp_sim_stop_particles(gp_sim *sim, unsigned condition, size_t max,
                                                uint64_t *first, uint64_t *second);

/* ---- several processes, one collective solver (gravhost-mpi) ------------- */

/* For a solver whose every call is collective over P processes (mpi-tree,
 * GP_CAP_MPI), each process runs a gp_sim over its own particles, and the
 * gp_sims must make the same solver calls in the same order. The block
 * schemes' decisions that depend on a process's particles (the next block
 * time, whether the active subset is "all", whether a process with no
 * active particle still takes part) go through reduce(ctx, x, op), which
 * must return the maximum (GP_SIM_REDUCE_MAX) or the sum
 * (GP_SIM_REDUCE_SUM) of x over the processes (MPI_Allreduce), called
 * collectively. A process with no active particle then passes (0, a
 * non-NULL index) to set_active_subset ("none on this rank", mpi-tree's
 * convention) and takes part in compute_forces and set_state.
 * reduce = NULL (the default): one process, nothing changes. The integrator
 * library itself never calls MPI. */
enum { GP_SIM_REDUCE_MAX = 0, GP_SIM_REDUCE_SUM = 1 };
GRAVPLUG_EXPORT gp_status gp_sim_set_collective(gp_sim *sim,
                                                int64_t (*reduce)(void *ctx, int64_t x, int op),
                                                void *ctx);

/* 1 when the last call failed only because another process sharing the
 * solver failed before a collective solver call (opening the solver, the
 * potential energy's force call): all of them stop there, and this one's
 * message says so, while the other's says why. A host that reports one
 * sentence for all should prefer that one. 0 otherwise. */
GRAVPLUG_EXPORT int gp_sim_failed_elsewhere(const gp_sim *sim);

/* Moving particles between processes with their integrator state
 * (migrate.c), so a rebalancing does not restart the integrator.
 * A row holds one particle's complete state, gp_sim_state_columns()
 * doubles: x y z, vx vy vz (as stored: a block-kdk velocity is half-kicked),
 * mass, ax ay az (the last acceleration), level, t_last (the tick of its
 * last correction, its 64 bits stored in a double: copy rows bytewise),
 * then what the integrator keeps per particle between steps (hermite: the
 * jerk, 3 more; the count depends on the integrator set, so ask after
 * gp_sim_set_integrator). The position comes first, so a domain
 * decomposition can sort rows. */
GRAVPLUG_EXPORT size_t gp_sim_state_columns(const gp_sim *sim);
/* The level's column (a domain decomposition weighs rows by 2^level). */
#define GP_SIM_STATE_COL_LEVEL 10
/* This process's particles as n rows (rows[n * columns]) and ids[n]. */
GRAVPLUG_EXPORT gp_status gp_sim_export_state(const gp_sim *sim, double *rows, uint64_t *ids);
/* Replaces the particles by n >= 1 rows from gp_sim_export_state of gp_sims
 * on the same time grid (the same time, dt_max and level ticks: the
 * processes of one run), keeping the integrator started: its next step goes
 * on from the imported state with no extra force call; the solver gets
 * them with set_particles at the next call. Before the integrator has
 * started this is gp_sim_set_particles. Done at a solver resync point
 * (gp_sim_at_resync_point: after every shared step, at dt_max boundaries of
 * a block scheme) it changes nothing but which process holds a particle.
 * Collision radii (gp_sim_set_radii) do not travel: set them again. */
GRAVPLUG_EXPORT gp_status gp_sim_import_state(gp_sim *sim, size_t n, const double *rows,
                                              const uint64_t *ids);

/* ---- checkpoint / restart ----------------------------------------------- */

/* 1 when the next force call re-sends all particles (a solver resync point,
 * see "Determinism" above): a checkpoint written now restarts bit for bit
 * like the run that goes on. 0 otherwise, or for NULL / no particles. */
GRAVPLUG_EXPORT int gp_sim_at_resync_point(const gp_sim *sim);

/* Writes the complete state (time, particles, integrator, its parameters
 * and time-step bookkeeping, counters) to path, atomically (a temporary
 * file, fsync, renamed into place, the directory synced), plus an opaque
 * caller blob (may be NULL/0, at most 1 MiB). Format version 2: CRC-32C
 * checksums over header and payload (integrators/sim/checkpoint.c).
 * Marks a solver resync point: the next force call re-sends all particles. */
GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_save(gp_sim *sim, const char *path,
                                                 const void *user, size_t user_len);

/* Restores a state written by gp_sim_checkpoint_save into sim (which needs
 * a solver, set before or after). user_buf (may be NULL) receives up to
 * buflen bytes of the caller blob; *user_len (may be NULL) its full size.
 * A file that is truncated, longer than its header says, fails a checksum,
 * or holds any field out of range is refused (GP_ERR_INVALID_ARGUMENT, a
 * sentence naming the field) and sim is left as it was; a file of another
 * format version gives GP_ERR_ABI_MISMATCH. */
GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_load(gp_sim *sim, const char *path,
                                                 void *user_buf, size_t buflen,
                                                 size_t *user_len);

#ifdef __cplusplus
}
#endif

#endif /* GP_SIM_H */
