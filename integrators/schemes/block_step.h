/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block_step.h — the bookkeeping the block-step schemes (block-kdk,
 * block-rk2) share: which block comes next, the level grid after a block
 * step, and the grid restarted after a synchronisation.
 */
#ifndef GP_BLOCK_STEP_H
#define GP_BLOCK_STEP_H

#include "core/sim_core.h"

/* The next block tick of every process (*T) and its time (*t_new).
 * Returns 0 when that time lies past t_end: the scheme then synchronises
 * at t_end instead of stepping. */
int gp_block_next(gp_sim *sim, double t_end, uint64_t *T, double *t_new);

/* After the block at tick T: the grid stands at T and sim->time at its
 * time, exactly t_end when the block lands on it. */
void gp_block_stepped(gp_sim *sim, uint64_t T, double t_new, double t_end);

/* After every particle was brought to time t: the level grid restarts
 * there (the scheme's settings dt and max_level) and the sync is counted.
 * Returns GP_OK, so a synchronisation can end with it. */
gp_status gp_block_synchronised(gp_sim *sim, double t);

#endif /* GP_BLOCK_STEP_H */
