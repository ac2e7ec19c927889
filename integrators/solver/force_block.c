/* SPDX-License-Identifier: Apache-2.0 */
/* force_block.c — a block step's force call on either ABI path (see force_block.h). */
#include "force_block.h"

#include <string.h>

#include "force.h"
#include "force_held.h"

gp_status gp_force_block(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                         const double *acc, double *xp, double *anew)
{
    int held = gp_held_path(sim);
    gp_status st = gp_held_path_check(sim);
    if (st != GP_OK) return st;
    if (held) return gp_held_force_active(sim, t, na, idx, acc, xp, anew);
    gp_sim_predict_all(sim, t, acc, NULL, sim->work);
    st = gp_force_active(sim, sim->work, na, idx, anew);
    if (st != GP_OK) return st;
    /* the active positions packed, as 1.1 hands them back; in place is
     * safe because idx ascends (idx[k] >= k) */
    for (size_t k = 0; k < na; ++k) memmove(xp + 3 * k, sim->work + 3 * (size_t)idx[k], 3 * sizeof *xp);
    return GP_OK;
}

gp_status gp_force_block_done(gp_sim *sim, size_t na, const uint32_t *idx, const double *acc)
{
    return gp_held_path(sim) ? gp_held_send(sim, na, idx, acc) : GP_OK;
}
