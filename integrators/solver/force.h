/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force.h — the integrators' force calls through the plugin ABI (force.c):
 * the host gives every particle's position, the plugin the accelerations.
 * A block scheme calls gp_force_block (force_block.h) instead, which also
 * takes the ABI 1.1 path.
 */
#ifndef GP_FORCE_H
#define GP_FORCE_H

#include "core/sim_core.h"

/* Positions pos[3n] of all particles (predicted); accelerations of all
 * particles into acc[3n] (pot may be NULL). */
gp_status gp_force_all(gp_sim *sim, const double *pos, double *acc, double *pot);
/* Same, for the na active particles idx[] (acc[3na] in idx order). */
gp_status gp_force_active(gp_sim *sim, const double *pos, size_t na,
                          const uint32_t *idx, double *acc);
/* Forces on the na particles idx[] from the ns sources src[] only (ABI
 * 1.1 set_source_subset; a 1.0 plugin gets them through masked masses,
 * mass_mask: n doubles of scratch). acc[3na] in idx order. (hold.c) */
gp_status gp_force_from_sources(gp_sim *sim, const double *pos, size_t na, const uint32_t *idx,
                                size_t ns, const uint32_t *src, double *mass_mask, double *acc);

/* ABI 1.3 source groups: whether the solver takes them at a call's cost
 * (GP_CAP_SOURCE_GROUPS, one process); and one call giving the na
 * particles idx[] the forces of the ns sources src[] outside their own
 * group (group[n] by particle, UINT32_MAX: none), acc[3na] in idx order.
 * (cc.c: every component kicked from the others at once) */
int gp_force_has_groups(const gp_sim *sim);
gp_status gp_force_grouped(gp_sim *sim, const double *pos, size_t na, const uint32_t *idx,
                           size_t ns, const uint32_t *src, const uint32_t *group, double *acc);
int gp_force_has_source_subset(const gp_sim *sim);
/* The positions pos[3n] to the solver: set_particles when its copy is
 * stale, else update_positions (either clears a 1.1 plugin's held state). */
gp_status gp_force_send_positions(gp_sim *sim, const double *pos);
/* Counts a force call for na active particles as the integrator's cost. */
void gp_force_count_call(gp_sim *sim, size_t na);
/* The softening a time-step criterion uses: the setting eps, or, when
 * the setting is negative ("solver"), the solver's softening
 * (GP_PARAM_SOFTENING of gravplug_params.h; 0 for a solver without one). */
gp_status gp_sim_criterion_eps(gp_sim *sim, double setting, double *eps);

#endif /* GP_FORCE_H */
