/*
 * exact_energy.h — what the equal-energy-error benchmarks share
 * (block-vs-shared, hold-vs-shared): the energy of a run's state measured
 * by direct summation, apart from the run's own solver, and a wall clock.
 */
#ifndef GP_BENCH_EXACT_ENERGY_H
#define GP_BENCH_EXACT_ENERGY_H

#include "gp_integrator.h"

/* Kinetic + potential energy of sim's state now, on a separate cpu-direct
 * simulation with softening eps (a string, as the plugin parses it), so the
 * measured run's solver is not disturbed. On failure prints "prog: what:
 * sentence" and exits 1. */
double bench_exact_energy(const char *prog, gp_sim *sim, const char *eps);

/* Monotonic wall clock in seconds. */
double bench_now(void);

#endif
