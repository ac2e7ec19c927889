/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_driver.h — what the drivers of the CPU tree (cpu-tree, and mpi-tree
 * on each rank) share around tree_state.h and cpu_walk.h: the layout of
 * their common parameters, what the walk, the thread count and the
 * rebuild policy read from them, and what a call records. mpi-tree's
 * local work is cpu-tree's, so one copy serves both: both parameter tables
 * list these first, in this order (each plugin words its own help text),
 * then their own.
 */
#ifndef GP_OCTREE_CPU_DRIVER_H
#define GP_OCTREE_CPU_DRIVER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base_instance.h"
#include "octree/cpu_walk.h"
#include "gravplug_keys.h"
#include "octree/tree_params.h"
#include "octree/tree_state.h"

/* The CPU trees' i-group and leaf sizes (their walk's rows: tree_params.h). */
#define OCT_PARAM_ROWS_GROUPS                                                               \
    {"group_size", GP_PARAM_INT, "64", "[1,1024]",                                          \
     "most particles in one i-group (the unit of the walk)"},                               \
    {"leaf_size", GP_PARAM_INT, "16", "[1,1024]", "most particles in a source leaf cell"}

/* Indices into the parameter table of a CPU tree plugin. */
enum { OCT_P_G, OCT_P_EPS, OCT_P_THETA, OCT_P_MAC, OCT_P_DELTA, OCT_P_TMAX, OCT_P_ORDER,
       OCT_P_REBUILD, OCT_P_PREC, OCT_P_GROUP, OCT_P_LEAF, OCT_P_KEYS, OCT_P_THREADS, OCT_N_PARAMS };
/* The rebuild parameter's values (N is REBUILD_EVERY with its number). */
enum { OCT_REBUILD_AUTO = 0, OCT_REBUILD_ALWAYS = 1, OCT_REBUILD_EVERY = 2 };

/* OpenMP threads for one call: threads, or the OpenMP default for 0. */
int oct_param_threads(const gp_base *b);

/* The space-filling curve the keys parameter names. */
gp_key_kind oct_param_keys(const gp_base *b);

/* oct_tree_build_in, oct_tree_refit and oct_tree_moments (tree_state.h)
 * run on the threads parameter's count of threads; the caller's OpenMP
 * default is restored after. cube NULL: the particles' own root cube. */
int oct_build_threaded(const gp_base *b, oct_tree *t, size_t n, const double *pos,
                       const double *mass, uint32_t group_size, uint32_t leaf_size,
                       gp_key_kind keys, const gp_cube *cube);
int oct_refit_threaded(const gp_base *b, oct_tree *t, const double *pos, const double *mass,
                       int moments);
int oct_moments_threaded(const gp_base *b, oct_tree *t);

/* The walk's parameters for mac; prepass: the acceleration MAC's first bh
 * pass, which walks monopoles only. */
oct_walk_params oct_param_walk(const gp_base *b, int mac, int prepass);

/* One rebuild baseline per power of two of the active count. */
#define OCT_AGE_BUCKETS 64

/* How the tree was built and how it has aged since: what decides between
 * keeping, refitting and rebuilding it. */
typedef struct oct_tree_age {
    int have;                  /* a tree exists                            */
    int moved;                 /* positions changed since it was made      */
    int refitted;              /* refitted since it was made: no longer fresh */
    uint32_t group, leaf;      /* the sizes it was built with              */
    int keys;                  /* and its curve (gp_key_kind)              */
    uint64_t calls;            /* force calls since the build              */
    /* interactions per active particle on the fresh tree, by
     * floor(log2(active count)): in block steps the deep levels are the
     * dense centre, dearer per particle on any tree, so each active-set
     * size is compared with itself (cuda-tree keeps the same model) */
    double base_cost[OCT_AGE_BUCKETS];
    double excess;             /* extra interactions paid since the build  */
} oct_tree_age;

/* Whether the parameters ask for another tree than a's (or there is none). */
int oct_layout_changed(const oct_tree_age *a, const gp_base *b);

/* a after a fresh build with the parameters' sizes and curve. */
void oct_tree_built(oct_tree_age *a, const gp_base *b);

/* a after a rebuild of moved particles (oct_rebuild_due): as
 * oct_tree_built, but each size class keeps its cost baseline, and a
 * call on the new tree before its first refit sets its own class's anew
 * (oct_age_observe's fresh). A class's first
 * call after a build comes some calls later, on a tree already aged; where
 * the deep levels age fast (a galaxy's centre at 2^20: 1,688 interactions
 * a particle one call after the build, 6,752 three calls after) a
 * baseline reset at every rebuild would be read from an aged tree each
 * time and hide the aging that the rule is there to see. set_particles
 * still resets them (oct_tree_built), so a restart, which re-sends every
 * particle, decides as the run it continues. */
void oct_tree_rebuilt(oct_tree_age *a, const gp_base *b);

/* Whether moved particles rebuild the tree rather than refit it: always,
 * every N calls, or (auto) when the extra interactions an aging tree cost
 * since the build (a->excess) pass OCT_REBUILD_EXCESS_PER_PARTICLE times n,
 * a third of what a build of n particles costs (tree_state.h says why). */
int oct_rebuild_due(const gp_base *b, const oct_tree_age *a, size_t n);

/* rebuild = auto's measure of an aging tree, shared with cuda-tree: a call
 * of `interactions` on na > 0 active particles sets the cost per particle
 * of its size class, base_cost[floor(log2 na)] (nbuckets of them), when
 * that is still 0, and otherwise adds what it cost beyond that baseline
 * to *excess, signed so that the scatter between equal-sized subsets
 * cancels, never below 0. fresh: the call walked a tree built for it, so
 * its cost is its class's baseline whatever was there. */
void oct_age_observe(double *base_cost, int nbuckets, double *excess, size_t na, double interactions,
                     int fresh);

/* What a force call of pp + pc interactions on na active particles,
 * started at t0 (gp_wtime), records: rebuild = auto's bookkeeping (the
 * first call of its active-set size since set_particles or a rebase, and
 * any call on a tree not refitted since it was made, set that size's cost
 * per particle; the others add what they cost beyond it to a->excess,
 * signed so that the scatter between equal-sized subsets cancels, never
 * below 0), one more call since the build, and b's statistics. */
void oct_count_force_call(gp_base *b, oct_tree_age *a, int rebase, uint64_t pp, uint64_t pc,
                          size_t na, double t0);

/* What a field call of pp + pc interactions started at t0 records. */
void oct_count_field_call(gp_base *b, uint64_t pp, uint64_t pc, double t0);

/* |a|, as the acceleration MAC keeps it (one expression, so an |a_old|
 * taken from a held state has the bits of one a call stored). */
static inline double oct_abs_acc(const double a[3])
{
    return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* aold[p] = |acc of active particle k| for the active particles (the
 * acceleration MAC's |a_old|). */
void oct_store_abs_acc(const gp_base *b, size_t na, const double *acc, double *aold);

/* The acceleration MAC's |a_old| for the na active particles that have none
 * from an earlier call (aold < 0: none since set_particles): the |a| of
 * their held state (set_state's a_i, ABI 1.1), where it is finite and not
 * zero. That is the particle's last force, the tolerance GADGET's criterion
 * wants, so the bh pass that would otherwise give it is not needed. It
 * comes with the state, so a run that sends the same state (a restart from
 * a checkpoint, which re-sends every particle) makes the same choice and
 * gets the same bits. Returns how many active particles still have none. */
size_t oct_aold_from_state(const gp_base *b, size_t na, double *aold);

#endif /* GP_OCTREE_CPU_DRIVER_H */
