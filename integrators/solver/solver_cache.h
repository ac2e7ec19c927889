/* SPDX-License-Identifier: Apache-2.0 */
/*
 * solver_cache.h — what the plugin holds of the particles, as the
 * integrators know it: gp_sim's solver_fresh (its copy of the positions
 * is current), subset_all (its active subset is "all") and state_fresh
 * (ABI 1.1: it holds every particle's state). The force bridge
 * (solver/force*.c) alone sets and reads them; every other file only says
 * the cache is stale, through these two calls.
 */
#ifndef GP_SOLVER_CACHE_H
#define GP_SOLVER_CACHE_H

#include "core/sim_core.h"

/* The solver's copy of the particles is stale: the next force call sends
 * them all (set_particles), which also drops any state it held. */
static inline void gp_solver_cache_stale(gp_sim *sim) { sim->solver_fresh = 0; }
/* The state the solver holds (ABI 1.1) is stale: the next held-state call
 * sends every particle's. */
static inline void gp_solver_state_stale(gp_sim *sim) { sim->state_fresh = 0; }

#endif /* GP_SOLVER_CACHE_H */
