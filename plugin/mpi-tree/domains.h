/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domains.h — each rank's domain for one force pass: a tree of boxes over
 * its i-groups, sent coarse to every rank and refined, round by round,
 * only where it faces a neighbour. A sender cuts its LET for a receiver
 * from the receiver's domain (let.h), so the finer the boxes near the
 * boundary, the smaller the LETs; boxes.h is their wire format.
 */
#ifndef GP_MPI_TREE_DOMAINS_H
#define GP_MPI_TREE_DOMAINS_H

#include <stdint.h>

#include "boxes.h"
#include "comm.h"
#include "targets.h"

/* This rank's coarse domain for the pass: a binary tree of boxes over its
 * groups in curve order, the widest runs split first, until it has
 * let_boxes leaves. mac, G and alpha (delta_acc) give node 0's gfac;
 * param_hash is stamped into it so that the ranks can check they agree.
 * Writes the nodes to out and the run of groups below each to r0/r1 (room
 * for 2 * let_boxes + 2); returns the number of nodes. */
int mpi_tree_my_boxes(const mpi_tree_targets *T, int mac, double G, double alpha, int let_boxes,
                      uint64_t param_hash, mpi_tree_box *out, uint32_t *r0, uint32_t *r1);

/* Every rank's domain tree as this rank needs it, into dom[0..P) (free
 * each with mpi_tree_domain_free): the coarse trees from every rank, then
 * refinement rounds between neighbours. mine[0..nmine) with r0/r1 is this
 * rank's coarse tree (mpi_tree_my_boxes). *bytes gets the box bytes this
 * rank sent, *rounds the rounds, *nodes the largest tree it sent.
 * Collective; fn names the entry in sentences. */
gp_status mpi_tree_exchange_domains(const mpi_tree_comm *c, const char *fn, const mpi_tree_targets *T,
                                    const mpi_tree_box *mine, int nmine, const uint32_t *r0,
                                    const uint32_t *r1, mpi_tree_domain *dom, uint64_t *bytes,
                                    int *rounds, int *nodes);

#endif /* GP_MPI_TREE_DOMAINS_H */
