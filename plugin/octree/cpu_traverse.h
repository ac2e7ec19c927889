/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_traverse.h — the CPU walk's one traversal of the source tree, which
 * the force walk (every instruction set: cpu_walk*.c) and the jerk's
 * gather (tree_jerk.c) all run.
 *
 * The stack holds batches: runs of consecutive cells to decide together.
 * A batch is decided by the caller's `decide` (the MAC test and taking
 * the accepted cells in: oct_walk_accepts one cell at a time, or its
 * vector form over a cell's children), which answers the mask of the
 * accepted ones. Of the others, the leaves go to `leaf` in ascending
 * order, then the inner cells open: their children become batches.
 *
 * Two shapes of batch, two orders, both fixed by the tree and the group
 * alone (never by threads):
 *   OCT_BATCH_CELL    one cell a batch; an inner cell's children pushed
 *                     last first, so the walk is depth-first in key order
 *                     (the portable walk, the jerk's gather);
 *   OCT_BATCH_FAMILY  all the children of an opened cell one batch (at
 *                     most 8: one vector), inner children pushed in
 *                     ascending order, so popped last first (the AVX walks).
 * The root is a batch of one in both.
 *
 * A drifted tree's cells are made current before they are decided, and
 * a leaf's sources before the leaf is read (tree_drift.h).
 *
 * decide and leaf are passed as constants into a function inlined into
 * its caller: the compiler calls (and inlines) them directly.
 */
#ifndef GP_OCTREE_CPU_TRAVERSE_H
#define GP_OCTREE_CPU_TRAVERSE_H

#include <stdint.h>

#include "octree/cpu_walk.h"
#include "octree/tree_drift.h"

#define OCT_STACK_CAP 512   /* depth 21 x 8 children fits easily */

enum { OCT_BATCH_CELL = 0, OCT_BATCH_FAMILY = 1 };

/* A run of n consecutive cells from first, to be decided together. */
typedef struct oct_batch { uint32_t first, n; } oct_batch;

/* Cells first .. first + n - 1 of a batch: the mask of the accepted ones
 * (bit k: cell first + k), each already taken in; -1 stops the walk. */
typedef int (*oct_decide_fn)(void *ctx, uint32_t first, uint32_t n);
/* The sources first .. first + count - 1 of an opened leaf; nonzero stops
 * the walk. */
typedef int (*oct_leaf_fn)(void *ctx, uint32_t first, uint32_t count);

/* Walks src's tree. cols: read the cells' shape from src->col (else from
 * src->cells). Adds the accepted cells to *ncell and the opened leaves'
 * sources to *npart; returns 1 when decide or leaf stopped the walk. */
static inline __attribute__((always_inline)) int
oct_traverse(const oct_sources *src, oct_batch stack[OCT_STACK_CAP], const int shape, const int cols,
             const oct_decide_fn decide, const oct_leaf_fn leaf, void *ctx, uint64_t *ncell,
             uint64_t *npart)
{
    const oct_cell_columns *col = src->col;
    const oct_wcell *rec = src->cells;
#define OCT_SHAPE(field, c) (cols ? col->field[c] : rec[c].field)
    uint32_t sp = 0;
    stack[sp++] = (oct_batch){ 0, 1 };
    while (sp > 0) {
        const oct_batch b = stack[--sp];
        const uint32_t n = shape == OCT_BATCH_CELL ? 1 : b.n;   /* a constant where it can be */
        if (src->drift) oct_drift_cells(src->drift, b.first, n);
        const int acc = decide(ctx, b.first, n);
        if (acc < 0) return 1;
        *ncell += (uint64_t)__builtin_popcount((unsigned)acc);
        const unsigned open = ((1u << n) - 1) & ~(unsigned)acc;
        for (unsigned o = open; o; o &= o - 1) {
            const uint32_t c = b.first + (uint32_t)__builtin_ctz(o);
            if (OCT_SHAPE(nchild, c)) continue;
            const uint32_t count = OCT_SHAPE(count, c);
            if (src->drift) oct_drift_leaf(src->drift, c);
            if (leaf(ctx, OCT_SHAPE(first, c), count)) return 1;
            *npart += count;
        }
        for (unsigned o = open; o; o &= o - 1) {
            const uint32_t c = b.first + (uint32_t)__builtin_ctz(o);
            const uint32_t nchild = OCT_SHAPE(nchild, c), first = OCT_SHAPE(first, c);
            if (!nchild) continue;
            if (shape == OCT_BATCH_FAMILY)
                stack[sp++] = (oct_batch){ first, nchild };
            else
                for (uint32_t k = nchild; k-- > 0;) stack[sp++] = (oct_batch){ first + k, 1 };
        }
    }
#undef OCT_SHAPE
    return 0;
}

#endif /* GP_OCTREE_CPU_TRAVERSE_H */
