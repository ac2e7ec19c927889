/* SPDX-License-Identifier: Apache-2.0 */
/*
 * let.h — the local essential tree (LET): what one rank's tree sends to a
 * remote domain, and how the receiver turns it back into a tree that
 * cpu-tree's walk (plugin/octree/cpu_walk.h) can walk unchanged.
 *
 * The remote domain is a box that contains the sphere of every i-group the
 * receiver will walk in this call (mpi_tree_box, computed by the receiver from
 * its own groups). The sender descends its source tree breadth-first:
 *   - a cell that every group inside the box would accept (the same MAC
 *     and box test as the walk, evaluated at the box's nearest point, with
 *     a relative safety margin of 1e-9 against rounding) is sent as a
 *     closed cell: its moments only;
 *   - a leaf that is not accepted is sent with its particles;
 *   - an internal cell that is not accepted is sent with all its children,
 *     which are decided the same way.
 * Since a group's sphere lies inside the box, |com - centre| - radius is at
 * least the box distance: the receiver's walk accepts every closed cell,
 * and reaches the particles of every leaf it opens. Everything closer is
 * opened exactly as on the sender, so the walk over local tree + LETs sees
 * the same cells a walk over one global tree with the same cells would.
 *
 * A closed cell carries two half-mass particles at its com as its "leaf"
 * (built by the receiver, never sent): should rounding ever make a group
 * open it after all, the walk still reads valid memory and gets the
 * monopole. By the margin above that does not happen. Its box and bmax
 * are not sent: the receiver gives it a box of zero size at its com, so
 * its r_crit is 0 under every MAC and the walk accepts it exactly where
 * it accepted it with its own box (always, by the sender's test), and the
 * forces are the same bit for bit with 56 of the cell's 152 bytes saved.
 *
 * Wire format (one buffer per sender/receiver pair; empty when the
 * receiver has no targets or the sender no sources):
 *     uint32 ncells, uint32 nparticles, int32 e_mass (masses, the moments'
 *     m and s, are in the sender's unit 2^e_mass, as in its tree), int32
 *     e_len (the LET tree's float length unit, measured by the sender on
 *     the cells it sends as the receiver would measure it on them whole),
 *     ncells x {count, nchild, first, closed} uint32 (breadth-first:
 *     children consecutive),
 *     per cell in that order its moments: a closed cell only m, com and s
 *     (10 doubles: the receiver accepts it whatever its box, and walks it
 *     with those), every other cell its whole gp_moments,
 *     nparticles x {x, y, z, m} doubles,
 *   and in a jerk pass (every rank knows it is one):
 *     ncells x OCT_JERK_CELL doubles (velocity, dS/dt: tree_jerk.h),
 *     nparticles x {vx, vy, vz} doubles.
 */
#ifndef GP_MPI_TREE_LET_H
#define GP_MPI_TREE_LET_H

#include <stddef.h>
#include <stdint.h>

#include "octree/tree_drift.h"
#include "octree/tree_state.h"
#include "octree/tree_jerk.h"

/* A receiver's domain for one force pass, as all ranks see it (decoded
 * from the wire format of boxes.h, every box rounded outward): a binary
 * tree of boxes. Node 0 holds every group sphere of the pass; a node's
 * children (left/right, -1 for none) split its run of groups (consecutive
 * along the curve) in two, the widest runs first, so that a few outlying
 * groups, or a jump of the curve, do not make the whole domain one huge
 * box. A cell is closed for a node when it is closed for the node's box,
 * or for both its children. has, gfac and param_hash are set in node 0. */
typedef struct mpi_tree_box {
    double lo[3], hi[3];     /* contains every group sphere below the node */
    double gfac;             /* acceleration MAC: (G / (delta_acc min|a_old|))^(1/4),
                                the largest of the receiver's groups        */
    uint64_t param_hash;     /* the parameters that shape forces: must agree */
    int32_t has;             /* 0: no targets on that rank (send nothing) */
    int32_t left, right;     /* children, or -1                          */
    int32_t parent;          /* -1 for node 0 (boxes.h: sent with the node) */
} mpi_tree_box;

/* One cell as the packer collects it (on the wire: its four numbers, then
 * its moments, all or a closed cell's m, com and s). first: internal ->
 * LET index of the first child; open leaf -> first of its particles in the
 * buffer; closed -> unused. */
typedef struct mpi_tree_let_cell {
    gp_moments mo;
    uint32_t count, nchild, first, closed;
} mpi_tree_let_cell;

/* A growable byte buffer. */
typedef struct mpi_tree_buf {
    char *p;
    size_t n, cap;
} mpi_tree_buf;

void mpi_tree_buf_free(mpi_tree_buf *b);

/* The LET of tree t (cells prepared for mac by oct_tree_prepare_cells, or
 * drifted by drift, which makes each cell current before it is read and
 * each sent leaf's sources) for
 * the domain tree box[0..nbox), appended to out; lcap is the walk's
 * (oct_walk_params: the acceleration MAC's theta_max bound, 0 for none).
 * With js (a jerk pass, the jerk sources of t) also each LET cell's
 * OCT_JERK_CELL numbers and each particle's velocity. *ncells / *npart get what was packed. Returns 0, or
 * -1 when out of memory. */
int mpi_tree_let_pack(const oct_tree *t, oct_drift *drift, int mac, double lcap,
                      const mpi_tree_box *box, int nbox, const oct_jerk_sources *js,
                      mpi_tree_buf *out, uint32_t *ncells, uint32_t *npart);

/* Builds a source-only oct_tree (sx/sy/sz/sm/sid, st, wcells, payf,
 * columns) from one received buffer; ids are -4 (never a local target).
 * bytes == 0 gives an empty tree. jerk_buf (a jerk pass: the buffer holds
 * the jerk block): *jerk_buf gets a malloc'd block behind *js, the LET's
 * jerk sources (NULL for an empty tree). Returns 0, -1 when out of memory,
 * -2 when the buffer is malformed. Free with oct_tree_free (and free). */
int mpi_tree_let_unpack(const void *data, size_t bytes, oct_tree *let, double **jerk_buf,
                        oct_jerk_sources *js);

#endif /* GP_MPI_TREE_LET_H */
