/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_energy.h — what the equal-energy-error benchmarks share
 * (block-vs-shared, hold-vs-shared): the energy of a run's state measured
 * by direct summation, apart from the run's own solver, the opening of a
 * run, and a wall clock.
 */
#ifndef GP_BENCH_EXACT_ENERGY_H
#define GP_BENCH_EXACT_ENERGY_H

#include "gp_sim.h"
#include "ic.h"

/* Kinetic + potential energy of sim's state now, on a separate simulation
 * with softening eps (a string, as the plugin parses it), so the measured
 * run's solver is not disturbed: cpu-direct, or what --energy named (where
 * an O(N^2) sum is out of reach, a tree opened tighter than the run's). On
 * failure prints "prog: what: sentence" and exits 1. */
double bench_exact_energy(const char *prog, gp_sim *sim, const char *eps);

/* The same for the initial conditions ic themselves (E(0) of every run). */
double bench_ic_energy(const char *prog, const gp_ic *ic, const char *eps);

/* What measures the energies: "cpu-direct" or --energy's value. */
const char *bench_energy_spec(void);

/* A run to measure: a gp_sim with plugin opened (eps; theta for tree
 * plugins, which cpu-direct would reject; threads when not NULL), the
 * particles of ic and the integrator named (NULL: none yet). On failure
 * prints "prog: what: sentence" and exits 1. */
gp_sim *bench_open_run(const char *prog, const gp_ic *ic, const char *plugin, const char *eps,
                       const char *theta, const char *threads, const char *integrator);

/* A finished run's cost: its steps, force calls, particle forces, the
 * levels of its last step, and its solver's interactions and timers. */
typedef struct bench_cost {
    uint64_t steps, force_calls, particle_forces, interactions;
    uint64_t criterion_forces, criterion_pairs;   /* time-step criterion calls' share */
    uint64_t criterion_calls, criterion_cpu_ns;   /* of force_calls; CPU time in the criterion */
    size_t levels;
    gp_stats stats;
} bench_cost;
bench_cost bench_run_cost(gp_sim *sim);

/* Where a bench keeps the options every energy bench takes. */
typedef struct bench_options {
    size_t *n;
    double *t_end;
    const char **plugin, **eps, **theta, **threads;
    unsigned long long *seed;
} bench_options;
/* Takes option a with value v when it is one of --n --t --plugin --eps
 * --theta --threads --seed --solver (more plugin parameters,
 * NAME=VALUE[,NAME=VALUE...], for every run bench_open_run opens after it)
 * --energy (PLUGIN[:NAME=VALUE,...], what measures the energies; default
 * cpu-direct): returns 1, else 0. */
int bench_common_option(const bench_options *o, const char *a, const char *v);

/* Prints "prog: what: sim's last error" and exits 1. */
void bench_fail(const char *prog, const char *what, gp_sim *sim);

/* Monotonic wall clock in seconds. */
double bench_now(void);

/* CPU seconds of the whole process (every thread): on a shared machine,
 * where a single-threaded run's wall time also counts the time other
 * tenants held its core, the work itself. */
double bench_cpu_now(void);

#endif
