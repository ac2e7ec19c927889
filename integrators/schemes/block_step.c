/* SPDX-License-Identifier: Apache-2.0 */
/* block_step.c — the grid bookkeeping of the block-step schemes (see block_step.h). */
#include "block_step.h"

#include <math.h>

#include "timestep_criteria.h"

/* how close to t_end, in ticks of the finest level, counts as on it */
#define ON_TIME 1e-6

int gp_block_next(gp_sim *sim, double t_end, uint64_t *T, double *t_new)
{
    *T = gp_sim_next_block(sim);   /* the same on every process */
    *t_new = gp_levels_time(&sim->lv, *T);
    return !(*t_new > t_end + ON_TIME * gp_levels_tick(&sim->lv));
}

void gp_block_stepped(gp_sim *sim, uint64_t T, double t_new, double t_end)
{
    sim->lv.now = T;
    sim->time = fabs(t_new - t_end) <= ON_TIME * gp_levels_tick(&sim->lv) ? t_end : t_new;
}

gp_status gp_block_synchronised(gp_sim *sim, double t)
{
    gp_levels_anchor(&sim->lv, t, GP_BLOCK_SET(sim)->dt, GP_BLOCK_SET(sim)->max_level);
    sim->time = t;
    sim->syncs++;
    return GP_OK;
}
