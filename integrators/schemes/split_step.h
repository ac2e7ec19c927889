/* SPDX-License-Identifier: Apache-2.0 */
/*
 * split_step.h — what the recursive-split schemes share (split_step.c):
 * hold.c (HOLD, a slow/fast split) and cc.c (CC, connected components).
 * Both keep the block schemes' grid (dt, max_level): every particle is
 * synchronised at the top-step boundaries and its recursion depth is
 * recorded as its level. Drifts and kicks move sets given as index lists;
 * each particle remembers the time of its position while a step is under
 * way.
 */
#ifndef GP_SPLIT_STEP_H
#define GP_SPLIT_STEP_H

#include "core/sim_core.h"

typedef struct gp_split_priv {
    double *ptime;      /* n: time of each particle's position (held or drifted) */
    double *mask;       /* n: masked masses for a 1.0 plugin */
    uint32_t *all;      /* n: 0 .. n-1 */
    double eps;         /* per-particle criterion softening */
    double gravity;     /* cc's Kepler pairs: the solver's G, read each top step */
    int pair;           /* this step splits with the plugin's pairwise steps */
    int acc_valid;      /* hold-kdk: sim->acc = a(all <- all) at the current positions */
    uint64_t acc_swaps, acc_masses;   /* sim's solver_swaps, mass_updates when it was */
} gp_split_priv;

/* The private state for sim->n particles into sim->priv (the old freed). */
gp_status gp_split_make_priv(gp_sim *sim, const char *scheme);
void gp_split_stop(gp_sim *sim);
gp_status gp_split_oom(gp_sim *sim, const char *scheme);

/* The grid anchored at t0; the next top step (partial when the grid's next
 * boundary lies past t_end); the grid advanced after it. */
void gp_split_anchor(gp_sim *sim, double t0);
double gp_split_top_step(const gp_sim *sim, double t_end, int *partial);
/* After a top step: the grid moved on (or re-anchored after a partial
 * step), sim->time set, the levels recorded during the step kept. */
gp_status gp_split_top_step_done(gp_sim *sim, double t_end, int partial, const char *scheme);

/* Kicks the na particles a[] by dt * acc (acc in a[] order); drifts them
 * over dt, to position time t. */
void gp_split_kick(gp_sim *sim, const uint32_t *a, size_t na, const double *acc, double dt);
void gp_split_drift(gp_sim *sim, const uint32_t *a, size_t na, double dt, double t);

/* Records depth as the level of the na particles a[] (within the grid). */
void gp_split_levels(gp_sim *sim, const uint32_t *a, size_t na, int depth);

/* The schemes' decisions, open to tests. hold.c: eta * the pairwise step
 * of each of the ns particles s[] over s for a step of length h from the
 * current positions and velocities (gp_pair_midpoint). cc.c: the connected
 * components of s[] in the graph of pairs with eta * tau_ij < |h|, from
 * the plugin's lists: s reordered into order[ns] as the components of two
 * or more particles, each in s order, the components ordered by their
 * first member's place in s, then the rest (singletons) in s order;
 * bounds[0..*ncomp] the components' starts (bounds[*ncomp] where the rest
 * starts). bounds needs ns / 2 + 1 entries. */
gp_status gp_hold_pair_steps(gp_sim *sim, const uint32_t *s, size_t ns, double h, double *tau);
gp_status gp_cc_components(gp_sim *sim, const uint32_t *s, size_t ns, double h, uint32_t *order,
                           size_t *bounds, size_t *ncomp);

#endif /* GP_SPLIT_STEP_H */
