/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.h — the octree built from key-sorted particles, one level at a time.
 *
 * A cell is a key prefix: the particles of a cell are the contiguous run
 * [begin, begin + count) of the key-sorted array. The tree is stored
 * breadth-first: the children of a cell are `nchild` consecutive cells
 * starting at `child`, and all cells of one level are consecutive, so a
 * build is a loop over levels where every cell of the level is split
 * independently (one thread per cell on a GPU, an OpenMP loop on the host):
 *
 *   level L cells --gp_tree_count_children--> counts --exclusive scan-->
 *   child offsets --gp_tree_split_cell--> level L+1 cells
 *
 * A cell becomes a leaf when it holds at most `leaf_size` particles or sits
 * at the deepest level (21). A deepest-level leaf may hold more particles
 * than leaf_size (all particles quantised into one 2^-21 grid cell, e.g. the
 * whole bulk when one outlier sits at 1e30): forces stay correct (summed
 * particle by particle) and the depth stays bounded at 21, so no recursion
 * anywhere can run away on extreme coordinates.
 *
 * i-groups (the unit of the walk) are the leaves of a second tree over all
 * particles with leaf_size = the group size; deepest-level leaves bigger than
 * that are cut into chunks (gp_tree_group_chunks).
 */
#ifndef GP_CORE_TREE_H
#define GP_CORE_TREE_H

#include "octree/gp_hd.h"
#include "gravplug_keys.h"

typedef struct gp_cell {
    uint32_t begin;   /* first particle (key-sorted index)           */
    uint32_t count;   /* number of particles                          */
    uint32_t child;   /* index of the first child cell (if nchild > 0) */
    uint32_t nchild;  /* 0 for a leaf, else 1..8                      */
    uint32_t level;   /* 0 = root                                      */
    uint32_t parent;  /* index of the parent (root: itself)            */
} gp_cell;

/* Does this cell get split? */
static inline GP_HD int gp_tree_is_split(const gp_cell *c, uint32_t leaf_size)
{
    return c->count > leaf_size && c->level < GP_KEY_MAX_LEVEL;
}

/* First index in [lo, hi) whose digit at `level` is >= d (keys sorted and
 * sharing the level prefix, so digits are non-decreasing). */
static inline GP_HD uint32_t gp_tree_digit_lower_bound(const uint64_t *keys, uint32_t lo,
                                                       uint32_t hi, int level, unsigned d)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (gp_key_digit(keys[mid], level) < d) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Child boundaries of a cell: bounds[d]..bounds[d+1] is the run with digit d
 * at the next level. Returns the number of non-empty children. */
static inline GP_HD uint32_t gp_tree_child_bounds(const uint64_t *keys, const gp_cell *c,
                                                  uint32_t bounds[9])
{
    uint32_t n = 0, end = c->begin + c->count;
    bounds[0] = c->begin;
    bounds[8] = end;
    for (unsigned d = 1; d < 8; d++)
        bounds[d] = gp_tree_digit_lower_bound(keys, bounds[d - 1], end, (int)c->level, d);
    for (unsigned d = 0; d < 8; d++) n += bounds[d + 1] > bounds[d];
    return n;
}

/* Step 1 of a level: how many children will cell c get (0 for a leaf)? */
static inline GP_HD uint32_t gp_tree_count_children(const uint64_t *keys, const gp_cell *c,
                                                    uint32_t leaf_size)
{
    uint32_t bounds[9];
    if (!gp_tree_is_split(c, leaf_size)) return 0;
    return gp_tree_child_bounds(keys, c, bounds);
}

/* Step 2 of a level: write the children of cell `self` (stored at cells[self])
 * at out[0 .. nchild), which lie at global index `first_child`. Sets
 * cells[self].child/nchild. */
static inline GP_HD void gp_tree_split_cell(const uint64_t *keys, gp_cell *cells, uint32_t self,
                                            uint32_t leaf_size, uint32_t first_child, gp_cell *out)
{
    gp_cell *c = &cells[self];
    uint32_t bounds[9], k = 0;
    if (!gp_tree_is_split(c, leaf_size)) { c->nchild = 0; c->child = 0; return; }
    gp_tree_child_bounds(keys, c, bounds);
    for (unsigned d = 0; d < 8; d++) {
        if (bounds[d + 1] == bounds[d]) continue;
        gp_cell *ch = &out[k++];
        ch->begin = bounds[d];
        ch->count = bounds[d + 1] - bounds[d];
        ch->child = 0;
        ch->nchild = 0;
        ch->level = c->level + 1;
        ch->parent = self;
    }
    c->child = first_child;
    c->nchild = k;
}

/* How many i-groups of at most `group_size` particles a leaf is cut into. */
static inline GP_HD uint32_t gp_tree_group_chunks(uint32_t count, uint32_t group_size)
{
    return (count + group_size - 1) / group_size;
}

#endif /* GP_CORE_TREE_H */
