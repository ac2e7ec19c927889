/* SPDX-License-Identifier: Apache-2.0 */
/*
 * par_min.h — from how many items the integrators' loops take OpenMP
 * threads (below that a team costs more than it saves). How many threads
 * they take is the solver's (gp_sim_threads_begin, sim_core.h).
 */
#ifndef GP_PAR_MIN_H
#define GP_PAR_MIN_H

/* A block step's loops over its active particles (corrector, criterion,
 * the state sent to the plugin): 1024 of them cost more than starting a
 * team does, and a typical block step has several times that many active
 * (bench/results/abi11-block-step/raw/abi11-block-step.md,
 * "GP_PAR_ACTIVE_MIN"). */
#define GP_PAR_ACTIVE_MIN 1024

/* Loops over every particle with a few dozen flops each (predictions,
 * kicks, the levels of a full step). */
#define GP_PAR_ALL_MIN 16384

/* Reductions that only read a byte or a word a particle (the deepest
 * level, whether all are synchronised). */
#define GP_PAR_SCAN_MIN 65536

#endif /* GP_PAR_MIN_H */
