/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk_args.h — what the cuda-tree walk kernel reads: the tree's sizes,
 * the per-cell walk record and the walk's parameters. Shared by the
 * launchers (tree_dev.h, tree.c) and the kernel itself (walk.cuh), which
 * the emulator test compiles without the launchers.
 */
#ifndef GP_CUDA_TREE_WALK_ARGS_H
#define GP_CUDA_TREE_WALK_ARGS_H

#include <stdint.h>

#include "octree/tree.h"
#include "cuda-base/vec4.h"

#define GP_TREE_NONE 0xffffffffu
#define GP_TREE_LEAF_SIZE 16u   /* particles per leaf (deepest level: any)  */
#define GP_TREE_GROUP 32u       /* i-particles per group = one warp         */
#define GP_TREE_STACK 8192u     /* walk stack entries per warp              */

/* A cell as the walk reads it: five float4 (gp_wcell, made by walk.cuh's
 * gp_wcell_make) and its topology (gp_wtopo), 96 bytes in all, stored as
 * six arrays of ncells 16-byte words (structure of arrays, GP_WREC_*): a
 * warp reading one field of consecutive cells reads consecutive words,
 * whole 32-byte sectors, one LDG.128 per lane. Field f of cell c is
 * rec[f * ncells + c] (walk.cuh gp_wrec_store). */
enum { GP_WREC_MC, GP_WREC_QA, GP_WREC_QB, GP_WREC_LO, GP_WREC_HI, GP_WREC_TOPO, GP_WREC_FIELDS };
#define GP_WREC_BYTES (GP_WREC_FIELDS * 16u) /* per cell */
typedef struct __attribute__((aligned(16))) gp_wcell {
    gp_f4 mc;   /* com (relative to center), mass                          */
    gp_f4 qa;   /* 1.5 x second moment s[0..3] (xx yy zz xy)               */
    gp_f4 qb;   /* 1.5 s[4], 1.5 s[5] (xz yz), tr s / 2, tr s (the walk's
                   factored quadrupole, walk.cuh quad_rsqrt_add)            */
    gp_f4 lo;   /* tight box enlarged by GP_MAC_BOX_MARGIN (octree/mac.h),
                   rcrit (geometric MACs, or bh for the acceleration MAC's
                   fallback)                                                */
    gp_f4 hi;   /* the same box's upper corner, l (tight box side)          */
} gp_wcell;
/* the first 16 bytes of the cell's gp_cell (octree/tree.h) */
typedef struct __attribute__((aligned(16))) gp_wtopo {
    uint32_t begin, count, child, nchild;
} gp_wtopo;

/* The walk's parameters. */
typedef struct gp_walk_args {
    const gp_f4 *ipos;
    const uint32_t *islot, *iself, *iorig; /* iself, iorig may be NULL     */
    const float *iaold;                     /* previous |a| per i, or NULL  */
    uint32_t ni;
    const gp_f4 *ppos;                      /* sorted particles             */
    /* the drifted tree: NULL, or the sources' cubics (tree_dev.h
     * gp_tree_drift_sources' layout, ncub sources), a source then read
     * at ppos + tau (c1 + tau (c2 + tau c3)) */
    const gp_f4 *cub;
    uint32_t ncub;
    float tau;
    const gp_cell *cells;                   /* not read by the walk: rec holds the topology */
    const gp_f4 *rec;                       /* GP_WREC_FIELDS x ncells      */
    uint32_t ncells;
    uint32_t *stacks;                       /* GP_TREE_STACK per warp slot  */
    uint32_t warp_slots;
    uint32_t *next_group;                   /* zeroed by the launcher       */
    unsigned long long *counters;           /* [0] pp, [1] pc, [2] overflow, [3] warp lists */
    int mode;                               /* 0 single, 1 mixed, 2 double  */
    int quad;                               /* quadrupole cells             */
    int accel;                              /* acceleration MAC             */
    float G, delta_acc;
    float tmax_inv;                         /* acceleration MAC: r_crit >= l x
                                               this (1 / theta_max); 0: none */
    double eps2;
    gp_d4 *out;                             /* by islot                     */
    float *aold;                            /* by iorig: |a| written back   */
    /* ij-parallelism (GOTHIC 2.5) for few groups: 0 or 1 walks the whole
     * tree from the root; parts > 1 gives each group `parts` warps, warp p
     * starting from the cut cells cut[cut_off[p] .. cut_off[p + 1]) (a cut:
     * disjoint cells covering every particle, in key order; everything
     * above it is opened) and writing its partial sums to seg[p * ni + k];
     * gp_tree_walk_reduce then adds the parts in order. */
    uint32_t parts;
    const uint32_t *cut, *cut_off;
    gp_d4 *seg;
    /* i-groups: NULL: 32 consecutive i-records each; else group g is
     * [gstart[g], gstart[g + 1]) (at most 32), g < ngroups */
    const uint32_t *gstart;
    uint32_t ngroups;
} gp_walk_args;

#endif /* GP_CUDA_TREE_WALK_ARGS_H */
