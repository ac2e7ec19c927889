/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_block.h — a block step's force call, whichever way the solver is
 * talked to (force_block.c). The block schemes call these two and never
 * ask which ABI path is in use.
 */
#ifndef GP_FORCE_BLOCK_H
#define GP_FORCE_BLOCK_H

#include "core/sim_core.h"

/* The na active particles idx[] (ascending) at time t: their predicted
 * positions into xp[3na] and their accelerations into anew[3na], both
 * packed in idx order. Every particle is predicted from (pos, vel, acc) at
 * its own time with the ABI's expression, acc NULL meaning a straight
 * drift (a = 0). Through ABI 1.1 the plugin predicts (force_held.c);
 * through 1.0 the host predicts all n into sim->work and sends them
 * (force.c). xp may be sim->work. */
gp_status gp_force_block(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                         const double *acc, double *xp, double *anew);
/* After the scheme corrected the active particles: a plugin that holds
 * the state takes theirs (acc as for gp_force_block); 1.0: nothing. */
gp_status gp_force_block_done(gp_sim *sim, size_t na, const uint32_t *idx, const double *acc);

#endif /* GP_FORCE_BLOCK_H */
