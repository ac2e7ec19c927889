/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gp_integrator.h — the simulation API's name before gp_sim.h, kept so
 * that programs written against it still compile: it declares nothing of
 * its own. New code includes <gp_sim.h>.
 */
#ifndef GP_INTEGRATOR_H
#define GP_INTEGRATOR_H

#include "gp_sim.h"

#endif /* GP_INTEGRATOR_H */
