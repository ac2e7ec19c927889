/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_state.h — everything a CPU tree plugin (cpu-tree, mpi-tree) derives from the particles: the key
 * order, the i-groups, and the source tree over the massive particles.
 *
 * Built in one go by oct_tree_build (keys, sort, groups, source tree,
 * moments) and refreshed cheaply by oct_tree_refit (new positions, same
 * order and topology, moments recomputed). oct_tree_prepare_cells derives the
 * per-cell MAC data for the current mac/theta.
 */
#ifndef GP_OCTREE_TREE_STATE_H
#define GP_OCTREE_TREE_STATE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "octree/host_tree.h"
#include "octree/cpu_walk.h"

typedef struct oct_tree {
    size_t n;
    double lo[3], inv_cell;             /* root cube of the last build        */
    gp_key_kind keys;
    uint32_t *order;                    /* key-sorted index -> particle index */
    uint32_t *rank;                     /* particle index -> key-sorted index */
    double *x, *y, *z, *m;              /* all particles, key order           */
    uint32_t ngroups;
    uint32_t *gbegin, *gcount;          /* i-groups: runs of the key order    */
    uint32_t *group_of;                 /* key-sorted index -> group          */
    uint32_t max_group;
    uint32_t nsrc;                      /* massive particles, key order:      */
    double *sx, *sy, *sz, *sm;          /*   sm in units of 2^e_mass          */
    int e_mass;                         /* 2^e_mass: the heaviest source mass
                                           rounded down to a power of two, so
                                           moments never overflow (tree_state.c) */
    uint32_t *sid;                      /*   their key-sorted index           */
    int src_alias;                      /* every particle a source: sx/sy/sz
                                           are x/y/z (sid the identity), not a
                                           copy refilled at every refit       */
    gp_host_tree st;                    /* source tree over them              */
    oct_wcell *wcells;                   /* per source cell, for the walk      */
    oct_payload_f *payf;                 /* per source cell, float payload     */
    oct_cell_columns col;                /* wcells + payf as columns (one block) */
    void *col_block;
    int e_len;                          /* float payload length unit 2^e_len
                                           (set by oct_tree_prepare_cells)     */
    int e_len_given;                    /* 1: e_len came with the tree (a LET:
                                           its sender's), not measured here   */
    int moments_stale;                  /* refitted without the moments       */
    /* what the cells were last prepared for (oct_tree_prepare_cells):
     * prepared = 0 after a build or new moments */
    int prepared, prepared_mac, prepared_layouts;
    double prepared_theta;
} oct_tree;

/* Builds from interleaved pos[3n] and mass[n]. Returns 0, or -1 when out
 * of memory (t is then empty). t must be zeroed or freed before. */
int oct_tree_build(oct_tree *t, size_t n, const double *pos, const double *mass,
                  uint32_t group_size, uint32_t leaf_size, gp_key_kind keys);
/* The same in a given root cube (NULL: the particles' own, as above).
 * Particles outside it get clamped keys: a correct tree, with looser
 * cells. mpi-tree builds every rank's tree in one cube, so that a region
 * two ranks share is split along cells of one octree. */
int oct_tree_build_in(oct_tree *t, size_t n, const double *pos, const double *mass,
                      uint32_t group_size, uint32_t leaf_size, gp_key_kind keys,
                      const gp_cube *cube);

/* Same particles, new positions pos[3n] and, when mass is not NULL, new
 * masses mass[n]: re-sorts nothing, recomputes the moments on the old
 * topology (moments = 0: later, by oct_tree_moments; meanwhile only the
 * key-sorted positions, the i-groups' data, are current). A source whose
 * mass dropped to 0 stays in the tree (it adds exactly 0). Returns 0, -1
 * (out of memory), or 1 when a particle outside the source tree gained
 * mass: the tree must then be rebuilt (nothing was changed). */
int oct_tree_refit(oct_tree *t, const double *pos, const double *mass, int moments);

/* The moments from the current positions and masses (after a refit that
 * left them stale). Returns 0 or -1 (out of memory). */
int oct_tree_moments(oct_tree *t);

/* Cuts n sorted keys into i-group runs of at most group_size: the leaves of
 * a tree with that leaf size, consecutive siblings merged while they fit.
 * begin/count are malloc'd (n_runs entries). Returns 0 or -1 (out of memory). */
int oct_make_runs(const uint64_t *keys, uint32_t n, uint32_t group_size, uint32_t *n_runs,
                 uint32_t **begin, uint32_t **count);

/* The same runs from a tree already built over those keys with leaf size
 * at most group_size (its cells of more than group_size particles are the
 * cells of a tree with that leaf size): no second build. */
int oct_runs_of_tree(const gp_host_tree *tr, uint32_t group_size, uint32_t *n_runs,
                     uint32_t **begin, uint32_t **count);

/* Groups must be compact: a group whose sphere is more than 1e4 times the
 * smallest nonzero step between its key-consecutive particles (a particle at 1e30 grouped
 * with a bulk at 1) is cut in halves along the key order until every piece
 * is compact or a single particle. Otherwise the MAC, measured from the
 * group's sphere, cannot resolve the bulk at that scale. Works on the runs
 * begin[]/count[] (n_runs of them, arrays reallocated as needed) over points
 * x/y/z in run order. Returns 0 or -1 (out of memory). */
int oct_split_loose_groups(const double *x, const double *y, const double *z, uint32_t *n_runs,
                          uint32_t **begin, uint32_t **count);

/* The halving both splits share (loose groups here, mpi-tree's wide
 * ones): each run begin[g]/count[g] over x/y/z is cut in halves along the
 * key order while split(x, y, z, b, c, ctx) says so, halves in key order.
 * The new runs go to fresh malloc'd arrays (*n_out of them); the old ones
 * are left alone. Returns 0 or -1 (out of memory). */
typedef int (*oct_split_test)(const double *x, const double *y, const double *z, uint32_t b,
                              uint32_t c, const void *ctx);
int oct_split_runs(const double *x, const double *y, const double *z, uint32_t n_runs,
                   const uint32_t *begin, const uint32_t *count, oct_split_test split,
                   const void *ctx, uint32_t *n_out, uint32_t **begin_out, uint32_t **count_out);

/* The float length unit's exponent from the leaves' sizes: each leaf adds
 * its size with oct_length_leaf (sum and count of ilogb(size) over the
 * leaves of positive, finite size, integers: any order), then
 * oct_length_exponent takes the mean, or the root's size for a tree without
 * such leaves. oct_tree_prepare_cells applies the rule, and a LET's sender
 * applies it to the cells it sends (the receiver must get the same unit). */
static inline void oct_length_leaf(double size, long long *sum, long long *count)
{
    if (size > 0 && isfinite(size)) { *sum += ilogb(size); ++*count; }
}
int oct_length_exponent(long long sum, long long count, double root_size);

/* Fills the cells' walk data for a MAC and theta in the layouts asked for
 * (OCT_PREPARE_RECORDS: t->wcells and the float payload; _COLUMNS: the
 * AVX-512 walk's columns, plus the root's record), lengths in units of the
 * length scale (oct_sources.e_len, from the sources' tight box). Nothing
 * is redone for a layout already prepared on the same moments, mac and
 * theta. The walk reads the columns only when they were prepared. */
void oct_tree_prepare_cells(oct_tree *t, int mac, double theta, int layouts);

/* One cell's walk data again, from moments mo (a drifted cell's,
 * tree_drift.h), for the mac, theta and layouts the cells were last
 * prepared for; the length unit stays. */
void oct_tree_prepare_cell(oct_tree *t, uint32_t c, const gp_moments *mo);

/* Tuning shared by every driver of this tree (cpu-tree, and mpi-tree on
 * each rank, so a rank's local work is cpu-tree's):
 * rebuild=auto rebuilds once a refitted tree's extra interactions since
 * the last build pass this many per particle. A full build costs about
 * 150-190 interactions a particle (keys, sort, two trees, moments; gpbench
 * on the galaxy, 8k to 1M particles, one thread), but rebuilding at a third
 * of that is what measured best: block runs 2-4% faster at 50k and 2^20,
 * the same at 4k-8k (bench/results/block-steps/raw/block-pays.md). Weighing
 * past excess against a build is the right rule when aging grows linearly;
 * the deep levels of a block run age faster than that (4x in two calls at
 * 2^20, bench/results/mpi-tree/raw/mpi-tree.md), so waiting for the full
 * cost comes late; */
#define OCT_REBUILD_EXCESS_PER_PARTICLE 50.0
/* and the opening angle of the bh pass that gives the acceleration MAC its
 * first |a_old|. It only sets a tolerance scale, so a coarse one does:
 * monopoles at theta 1 (|a| median error ~1%, ~4x cheaper than quadrupoles
 * at 0.8). */
#define OCT_PREPASS_THETA 1.0

/* Allocates t->col (the AVX-512 walk's cell columns, one 64-byte aligned
 * block) for t->st.ncells cells, replacing any block t had (oct_tree_build
 * allocates one); 0 on success, -1 out of memory (t unchanged). Also used
 * by mpi-tree for the trees it receives. */
int oct_tree_alloc_columns(oct_tree *t);

/* The walk's view of the sources (after oct_tree_prepare_cells); not
 * const: a walk may add the records to the cells it prepared. */
oct_sources oct_tree_sources(oct_tree *t);

void oct_tree_free(oct_tree *t);

#endif /* GP_OCTREE_TREE_STATE_H */
