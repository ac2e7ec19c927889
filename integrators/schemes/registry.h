/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.h — the integrators by name (registry.c; the public listing
 * calls are in gp_sim.h).
 */
#ifndef GP_REGISTRY_H
#define GP_REGISTRY_H

#include "core/sim_core.h"

/* The registry (registry.c): the built-in schemes are listed there, one
 * line each; a scheme of one's own (integrator research, a test) is
 * registered with gp_integrator_register_def before a gp_sim uses it.
 * Returns 0, or -1 when the name is taken or the registry is full. */
int gp_integrator_register_def(const gp_integrator_def *def);
const gp_integrator_def *gp_integrator_find(const char *name);

#endif /* GP_REGISTRY_H */
