/* SPDX-License-Identifier: Apache-2.0 */
/*
 * boxes.h — a rank's domain tree (let.h's mpi_tree_box) on the wire, and the
 * "is this box near that domain" test the refinement uses.
 *
 * On the wire a domain is one header (the values every node shares: an
 * origin, gfac, param_hash, has) and 32-byte nodes: float corners relative
 * to the origin, rounded outward, so that the box the receiver decodes
 * contains the box the sender encoded (the LET's correctness rests on
 * every box holding its groups' spheres, let.h); and the node's parent,
 * so that nodes can be sent in increments (a refinement round sends only
 * the nodes it added; children come in pairs, left first). The coarse
 * tree goes to every rank with its header; a neighbour receives the
 * refinement rounds' nodes after it.
 *
 * Encoding and decoding use the same double arithmetic (origin + (double)f,
 * one rounding), so the sender can check what the receiver will see: it
 * steps each float outward until the decoded value lies outside the exact
 * one.
 */
#ifndef GP_MPI_TREE_BOXES_H
#define GP_MPI_TREE_BOXES_H

#include <stddef.h>
#include <stdint.h>

#include "let.h"

typedef struct mpi_tree_box_head {
    double origin[3];        /* node corners are float offsets from here */
    double gfac;             /* as mpi_tree_box                                */
    uint64_t param_hash;
    int32_t has;
    int32_t nnodes;          /* nodes that follow (the coarse tree)      */
} mpi_tree_box_head;

typedef struct mpi_tree_wire_box {
    float lo[3], hi[3];      /* offsets from the origin, rounded outward */
    int32_t parent;          /* -1 for node 0                            */
    uint32_t reserved;       /* 0                                        */
} mpi_tree_wire_box;

/* A rank's decoded domain, growing as refinement rounds arrive. */
typedef struct mpi_tree_domain {
    mpi_tree_box_head head;
    mpi_tree_box *b;
    int n, cap;
} mpi_tree_domain;

/* The header for the tree b[0..): origin at the centre of b[0]. */
mpi_tree_box_head mpi_tree_box_head_make(const mpi_tree_box *b, int nnodes);

/* Encodes b[0..n) (parents in b[k].parent) relative to h's origin. */
void mpi_tree_box_encode(const mpi_tree_box_head *h, const mpi_tree_box *b, int n, mpi_tree_wire_box *out);

/* Appends n wire nodes to d (decoding with d->head), linking each to its
 * parent. Returns 0, -1 (no memory) or -2 (malformed: a parent that is
 * not an earlier node, or a third child). */
int mpi_tree_domain_append(mpi_tree_domain *d, const mpi_tree_wire_box *w, int n);

void mpi_tree_domain_free(mpi_tree_domain *d);

/* Is some leaf of domain tree t[0..n) closer to b than sqrt(reach2)?
 * (Descends from the root, skipping nodes farther than that.) */
int mpi_tree_box_near_tree(const mpi_tree_box *b, double reach2, const mpi_tree_box *t, int n);

/* Squared gap between two boxes (0 when they overlap). */
double mpi_tree_box_gap2(const mpi_tree_box *a, const mpi_tree_box *b);

#endif /* GP_MPI_TREE_BOXES_H */
