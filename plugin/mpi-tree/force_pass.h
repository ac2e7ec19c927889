/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_pass.h — one collective force pass of mpi-tree, for forces and for
 * field points alike: the ranks swap domains (domains.h), pack and swap
 * the LETs each domain needs (let.h), and walk every i-group over the
 * local tree and then the received LETs in rank order, so the sums come in
 * a fixed order (deterministic for a fixed P and distribution).
 */
#ifndef GP_MPI_TREE_FORCE_PASS_H
#define GP_MPI_TREE_FORCE_PASS_H

#include <stdint.h>

#include "comm.h"
#include "octree/cpu_spaces.h"
#include "octree/cpu_walk.h"
#include "octree/tree_drift.h"
#include "octree/tree_state.h"
#include "octree/tree_jerk.h"
#include "targets.h"

/* A jerk pass (on every rank, or on none): the local tree's jerk sources,
 * the targets' velocities (3 per target slot u) and where the jerk goes (by
 * the targets' slots); js NULL: no jerk. */
typedef struct mpi_tree_jerk_io {
    const oct_jerk_sources *js;
    const double *tv;
    double *jerk;
} mpi_tree_jerk_io;

/* What one pass needs besides the tree and the targets. */
typedef struct mpi_tree_pass {
    const char *fn;            /* the entry's name, for sentences          */
    int mac;
    double theta;
    oct_walk_params wp;        /* the walk's parameters for this mac       */
    int threads;               /* OpenMP threads of the walk               */
    int let_boxes;             /* coarse domain leaves (the parameter)     */
    uint64_t param_hash;       /* the parameters that shape forces         */
    int lets_only;             /* walk the LETs alone (engine = cuda-tree) */
    mpi_tree_jerk_io jk;       /* jk.js NULL: no jerk                      */
    oct_spaces *spaces;        /* the instance's kept walk workspaces      */
    oct_drift *drift;          /* the local tree drifted (drift = on's block
                                  step, made for this mac and theta): its
                                  cells and leaves made as the LET packer
                                  and the walk meet them; NULL: prepared    */
    int both_layouts;          /* an anchored tree keeps both cell layouts */
} mpi_tree_pass;

/* LET bytes of the last pass and in total. */
typedef struct mpi_tree_let_traffic {
    uint64_t sent, recv, sent_total, recv_total;
} mpi_tree_let_traffic;

/* The pass: prepares tree's cells for the mac, exchanges, walks; writes
 * acc (and pot, when not NULL) by the targets' slots and adds the
 * interactions to *pp / *pc. Collective: every rank returns the same
 * status, and the sentence is in c->base. */
gp_status mpi_tree_force_pass(const mpi_tree_comm *c, oct_tree *tree, const mpi_tree_pass *ps,
                              const mpi_tree_targets *T, double *acc, double *pot, uint64_t *pp,
                              uint64_t *pc, mpi_tree_let_traffic *traffic);

#endif /* GP_MPI_TREE_FORCE_PASS_H */
