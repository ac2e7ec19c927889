/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_jerk.h — the jerk (da/dt) of a tree walk, for Hermite integrators
 * on cpu-tree (ABI 1.2's GP_CAP_JERK).
 *
 * gravplug.h defines a tree's jerk: the sources summed particle by particle
 * give their exact pairwise jerk, an accepted cell gives the monopole jerk
 * of its mass at its centre of mass moving with its mass-weighted velocity,
 *     j = G m [ v / r2^(3/2) - 3 (r.v) r / r2^(5/2) ],  r2 = |r|^2 + eps^2,
 * as McMillan & Aarseth (1993) did for their tree Hermite code. The walk
 * here visits the cells the force walk visits and takes the same
 * decisions (the same MAC and box tests on the same records, with the same
 * group sphere and |a_old|), so a cell is a cell for the jerk exactly when
 * it is one for the acceleration. It runs in double precision on the
 * records layout of the cells (OCT_PREPARE_RECORDS); the acceleration is
 * not touched, so compute_forces_ex with a jerk gives compute_forces' bits.
 *
 * With quadrupoles (order = 2) a cell also gives the time derivative of its
 * quadrupole force, the same order as the quadrupole in the force: through
 * its motion relative to the target, and through dS/dt = sum m (dx dv +
 * dv dx), the change of its second moment. The latter matters most: the
 * particles' velocities about the mean do not cancel at first order as
 * their positions about the com do. Measured on conformance's Plummer set
 * (theta 0.5, bmax), relative error of the jerk against the naive sum,
 * median / 99th percentile: monopole jerk 1.4e-3 / 2.5e-2; with dS/dt
 * 3.5e-4 / 9.5e-3; with both terms 1.9e-4 / 4.3e-3.
 */
#ifndef GP_OCTREE_TREE_JERK_H
#define GP_OCTREE_TREE_JERK_H

#include <stdint.h>

#include "octree/cpu_walk.h"
#include "octree/host_tree.h"
#include "octree/tree_state.h"
#include "base/base_instance.h"

/* Per cell in oct_jerk_sources.cv: its mass-weighted velocity (3), then
 * the time derivative of its second moment about the com (6, the order of
 * gp_moments.s). */
#define OCT_JERK_CELL 9

/* The sources' velocities (source order, as oct_sources' x/y/z) and every
 * cell's OCT_JERK_CELL numbers, for one jerk pass. */
typedef struct oct_jerk_sources {
    const double *vx, *vy, *vz;
    const double *cv;
} oct_jerk_sources;

/* Doubles of scratch oct_cell_velocities needs per cell. */
#define OCT_JERK_SCRATCH 6

/* cv[OCT_JERK_CELL * ncells] of tree st (moments current) over its
 * sources at (x, y, z) with masses m (any common unit) and velocities
 * (vx, vy, vz): leaves summed in source order, internal cells combined
 * from their children (through scratch[OCT_JERK_SCRATCH * ncells]); a
 * massless cell moves with the plain mean of its sources. */
void oct_cell_velocities(const gp_host_tree *st, const double *x, const double *y,
                         const double *z, const double *m, const double *vx, const double *vy,
                         const double *vz, int threads, double *scratch, double *cv);

/* The jerk sources of tree t (moments current): every source's velocity at
 * the positions' time from the plugin's state (gp_state_velocity: zero for
 * a particle without one), source k being particle pid[k] (NULL: t's own
 * t->order[t->sid[k]]), and every cell's numbers, in one malloc'd block
 * *buf (the caller frees it). Returns 0, or -1 when out of memory. */
struct gp_particles;
int oct_jerk_sources_make(const oct_tree *t, const uint32_t *pid, const struct gp_particles *p,
                          int threads, double **buf, oct_jerk_sources *js);

typedef struct oct_jerk_workspace oct_jerk_workspace;

/* NULL when out of memory. */
oct_jerk_workspace *oct_jerk_workspace_new(void);
void oct_jerk_workspace_free(oct_jerk_workspace *ws);

/* The jerk of group g's targets (velocities tv[3k]) from the sources src
 * (records prepared for p->mac) moving with js: G applied, written to
 * jerk[3k..3k+2]. The cells and particles are those the force walk of g
 * summed: its record when there is one (lists, oct_walk_recorded), else
 * the same traversal again. Returns 0, or -1 when out of memory. */
int oct_jerk_group(const oct_sources *src, const oct_jerk_sources *js, const oct_walk_params *p,
                   oct_jerk_workspace *ws, const oct_group *g, const oct_walk_lists *lists,
                   const double *tv, double *jerk);

#endif /* GP_OCTREE_TREE_JERK_H */
