/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timestep_levels.h — power-of-two time-step levels (block time steps).
 *
 * Level l has the step dt_l = dt_max / 2^l, l = 0 .. max_level. Time is
 * counted in integer ticks of dt_max / 2^max_level from an anchor time t0,
 * so block boundaries are exact and never drift. A particle on level l
 * always has its last correction tick t_last on a multiple of span(l) =
 * 2^(max_level - l) ticks (the invariant every rule below keeps), hence:
 *   - the next block time is the next multiple of the deepest occupied
 *     level's span;
 *   - at tick T the active particles are those whose span divides T, i.e.
 *     every level >= max_level - ctz(T);
 *   - a particle may move to a deeper level (smaller step) at any of its
 *     own boundaries, and up (larger step) only at a tick where the larger
 *     span also divides T: where the levels synchronise.
 * Shared-step integrators use the same bookkeeping with max_level = 0
 * (one tick = one step).
 */
#ifndef GP_TIMESTEP_LEVELS_H
#define GP_TIMESTEP_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#define GP_LEVELS_MAX 40 /* deepest level accepted (2^40 ticks per dt_max) */

/* The particles filed by level (timestep_levels.c), so that a block step
 * finds its active particles and the deepest level in O(n_active) and
 * O(levels) instead of scanning all n: a cache, rebuilt in O(n) whenever
 * it may be stale. */
typedef struct gp_level_bins gp_level_bins;

typedef struct gp_levels {
    size_t n;
    int max_level;
    double dt_max;
    double t0;           /* anchor: time of tick 0 */
    uint64_t now;        /* current tick */
    uint8_t *level;      /* n: each particle's level */
    uint64_t *t_last;    /* n: tick of each particle's last correction */
    gp_level_bins *bins; /* level[] filed by level; see gp_levels_touched */
} gp_levels;

/* (Re)allocates for n particles; returns 0 on success, -1 out of memory. */
int gp_levels_alloc(gp_levels *lv, size_t n);
void gp_levels_free(gp_levels *lv);

/* Code that writes level[] directly (not through gp_levels_adjust) calls
 * this afterwards: the filing by level is then rebuilt (O(n)) at its next
 * use. gp_levels_alloc and gp_levels_anchor do it themselves. */
void gp_levels_touched(gp_levels *lv);

/* Restarts the grid at time t0: every particle synchronised at tick 0 on
 * level 0. */
void gp_levels_anchor(gp_levels *lv, double t0, double dt_max, int max_level);

static inline uint64_t gp_levels_span(const gp_levels *lv, int level)
{
    return UINT64_C(1) << (lv->max_level - level);
}
static inline double gp_levels_tick(const gp_levels *lv)
{
    return lv->dt_max / (double)(UINT64_C(1) << lv->max_level);
}
static inline double gp_levels_time(const gp_levels *lv, uint64_t tick)
{
    return lv->t0 + (double)tick * gp_levels_tick(lv);
}
/* Step of particle i, in time units. */
static inline double gp_levels_dt(const gp_levels *lv, size_t i)
{
    return (double)gp_levels_span(lv, lv->level[i]) * gp_levels_tick(lv);
}

/* The level whose step is the largest not above dt (clamped to
 * 0..max_level; a non-finite or non-positive dt gives max_level). */
int gp_levels_for_dt(const gp_levels *lv, double dt);

/* The next block tick after lv->now is decided by the deepest occupied
 * level, in two parts so that processes sharing one solver can agree on
 * that level first (the maximum over all of them, gp_sim_next_block): the
 * deepest occupied level here (0 without particles), and the next block
 * tick for a given deepest level. */
int gp_levels_deepest(const gp_levels *lv);
/* The same by an O(n) scan of level[] (what gp_levels_deepest does when it
 * has no bins; tests and bench/level-bins compare against it). */
int gp_levels_deepest_scan(const gp_levels *lv);
uint64_t gp_levels_next_for(const gp_levels *lv, int deepest);

/* The shallowest level active at tick T (levels >= it are active). */
int gp_levels_first_active(const gp_levels *lv, uint64_t tick);

/* Indices of the particles active at tick T into idx (n entries room), in
 * ascending order; returns their count. O(n_active) while the filing by
 * level is current (the active levels' bins, radix-sorted), else O(n). */
size_t gp_levels_active(const gp_levels *lv, uint64_t tick, uint32_t *idx);
/* The same by an ordered O(n) scan of level[] (used for large active sets,
 * where it costs no more than the sort). */
size_t gp_levels_active_scan(const gp_levels *lv, uint64_t tick, uint32_t *idx);

/* Applies the level-change rules to particle i, just corrected at tick T
 * (its t_last), wanting level `wanted`: deeper at once, shallower only
 * while the larger span divides T. Returns the new level. Safe to call
 * for distinct particles from several threads; the particles it moves are
 * refiled under their new levels at the next gp_levels_active or
 * gp_levels_deepest (O(moved)). */
int gp_levels_adjust(gp_levels *lv, size_t i, int wanted, uint64_t tick);

/* Particles per level: counts[0 .. max_count-1]; returns deepest used + 1. */
size_t gp_levels_counts(const gp_levels *lv, uint64_t *counts, size_t max_count);

#endif /* GP_TIMESTEP_LEVELS_H */
