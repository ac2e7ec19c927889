/* SPDX-License-Identifier: Apache-2.0 */
/* host_tree.c — CPU driver of the tree build (see host_tree.h); its keys
 * and their sort are gravplug_keys.c's. */
#include "octree/host_tree.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void gp_host_root_cube(size_t n, const double *x, const double *y, const double *z,
                       size_t stride, double lo[3], double *inv_cell)
{
    double mn[3], mx[3];
    gp_host_bounds(n, x, y, z, stride, mn, mx);
    gp_host_cube_of_bounds(mn, mx, lo, inv_cell);
}

static int reserve(gp_host_tree *t, size_t need)
{
    if (need <= t->cap) return 0;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < need) cap *= 2;
    gp_cell *c = realloc(t->cells, cap * sizeof *c);
    if (!c) return -1;
    t->cells = c;
    t->cap = cap;
    return 0;
}

int gp_host_tree_build(gp_host_tree *t, const uint64_t *keys, uint32_t n, uint32_t leaf_size)
{
    uint32_t *counts = NULL;
    size_t counts_cap = 0;
    if (leaf_size < 1) leaf_size = 1;
    t->ncells = 0;
    t->nlevels = 0;
    if (reserve(t, 1)) goto oom;
    t->cells[0] = (gp_cell){ .begin = 0, .count = n, .child = 0, .nchild = 0, .level = 0,
                             .parent = 0 };
    t->ncells = 1;
    t->level_start[0] = 0;
    for (uint32_t level = 0;; level++) {
        uint32_t lo = t->level_start[level], hi = t->ncells, m = hi - lo;
        t->level_start[level + 1] = hi;
        t->nlevels = level + 1;
        if (m == 0 || level >= GP_KEY_MAX_LEVEL) {
            for (uint32_t c = lo; c < hi; c++) t->cells[c].nchild = 0;
            break;
        }
        if (m + 1 > counts_cap) {
            free(counts);
            counts_cap = 2 * (size_t)m + 1;
            counts = malloc(counts_cap * sizeof *counts);
            if (!counts) goto oom;
        }
        const gp_cell *cells = t->cells;
#pragma omp parallel for schedule(static) if (m > 1024)
        for (uint32_t c = 0; c < m; c++)
            counts[c] = gp_tree_count_children(keys, &cells[lo + c], leaf_size);
        uint32_t sum = 0;                            /* exclusive scan */
        for (uint32_t c = 0; c < m; c++) { uint32_t k = counts[c]; counts[c] = sum; sum += k; }
        if (sum == 0) {
            for (uint32_t c = lo; c < hi; c++) t->cells[c].nchild = 0;
            break;
        }
        if (reserve(t, (size_t)hi + sum)) goto oom;
        gp_cell *cw = t->cells;
#pragma omp parallel for schedule(static) if (m > 1024)
        for (uint32_t c = 0; c < m; c++)
            gp_tree_split_cell(keys, cw, lo + c, leaf_size, hi + counts[c], &cw[hi + counts[c]]);
        t->ncells = hi + sum;
    }
    free(counts);
    return 0;
oom:
    free(counts);
    t->ncells = 0;
    t->nlevels = 0;
    return -1;
}

/* One cell's moments: a leaf from its particles, else from its children. */
static inline void moments_of_cell(const gp_cell *cells, uint32_t c, const double *x,
                                   const double *y, const double *z, const double *m,
                                   gp_moments *mo)
{
    if (cells[c].nchild == 0)
        gp_moments_leaf(x, y, z, m, cells[c].begin, cells[c].count, &mo[c]);
    else
        gp_moments_combine(&mo[cells[c].child], cells[c].nchild, &mo[c]);
}

/* The subtree under cell r, bottom-up: its descendants on each level are a
 * contiguous run of that level (cells are stored level by level, children
 * contiguous and in their parents' order), found top-down first. */
static void moments_of_subtree(const gp_cell *cells, uint32_t r, const double *x,
                               const double *y, const double *z, const double *m,
                               gp_moments *mo)
{
    uint32_t lo[GP_KEY_MAX_LEVEL + 2], hi[GP_KEY_MAX_LEVEL + 2];
    int depth = 0;
    for (uint32_t a = r, b = r + 1; a < b && depth < GP_KEY_MAX_LEVEL + 2; depth++) {
        lo[depth] = a;
        hi[depth] = b;
        uint32_t f = a, e = b;
        while (f < b && cells[f].nchild == 0) f++;
        if (f == b) { depth++; break; }
        while (cells[e - 1].nchild == 0) e--;
        a = cells[f].child;
        b = cells[e - 1].child + cells[e - 1].nchild;
    }
    for (int d = depth - 1; d >= 0; d--)
        for (uint32_t c = lo[d]; c < hi[d]; c++) moments_of_cell(cells, c, x, y, z, m, mo);
}

static int by_count_desc(const void *a, const void *b, void *cells_)
{
    const gp_cell *cells = cells_;
    uint32_t ca = cells[*(const uint32_t *)a].count, cb = cells[*(const uint32_t *)b].count;
    if (ca != cb) return ca < cb ? 1 : -1;
    uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
    return ia < ib ? -1 : ia > ib;
}

/* Below this many particles the moments run on one thread. */
#define MOMENTS_PARALLEL_MIN 4096
/* A subtree handed to one thread holds at most n / (this x threads)
 * particles: enough pieces for the dynamic schedule to even out a
 * galaxy's dense centre. */
#define MOMENTS_PIECES_PER_THREAD 8

int gp_host_tree_moments(gp_host_tree *t, const double *x, const double *y, const double *z,
                         const double *m)
{
    gp_moments *mo = realloc(t->mom, (t->ncells ? t->ncells : 1) * sizeof *mo);
    if (!mo) return -1;
    t->mom = mo;
    const gp_cell *cells = t->cells;
    const uint32_t n = t->ncells ? cells[0].count : 0;
    int nt = 1;
#ifdef _OPENMP
    nt = omp_get_max_threads();
#endif
    if (nt < 2 || n < MOMENTS_PARALLEL_MIN || t->nlevels < 2) {
        for (int level = (int)t->nlevels - 1; level >= 0; level--)
            for (uint32_t c = t->level_start[level]; c < t->level_start[level + 1]; c++)
                moments_of_cell(cells, c, x, y, z, m, mo);
        return 0;
    }
    /* Cells holding more than `cap` particles are the top of the tree;
     * their children that hold fewer are the roots of subtrees, each done
     * whole by one thread in a single parallel region. (A region per level
     * costs a fork and a join each, about 7 a refit at 50k, and with
     * OMP_WAIT_POLICY=passive they cost more than the work:
     * bench/results/cpu-tree/raw/cpu-tree.md, "moments in one region".) The
     * top is combined afterwards, children before parents. Every cell is
     * computed by the same formula from the same inputs: the same bits
     * for any number of threads. */
    const uint32_t cap = n / ((uint32_t)MOMENTS_PIECES_PER_THREAD * (uint32_t)nt);
    size_t max_top = (size_t)MOMENTS_PIECES_PER_THREAD * (size_t)nt * t->nlevels + 1;
    uint32_t *top = malloc(max_top * sizeof *top);
    uint32_t *roots = malloc((8 * max_top + 1) * sizeof *roots);
    uint32_t *stack = malloc((8 * max_top + 1) * sizeof *stack);
    if (!top || !roots || !stack) { free(top); free(roots); free(stack); return -1; }
    size_t ntop = 0, nroots = 0, sp = 0;
    stack[sp++] = 0;
    while (sp) {
        uint32_t c = stack[--sp];
        if (cells[c].count > cap && cells[c].nchild > 0 && ntop < max_top) {
            top[ntop++] = c;
            for (uint32_t k = 0; k < cells[c].nchild; k++) stack[sp++] = cells[c].child + k;
        } else {
            roots[nroots++] = c;
        }
    }
    qsort_r(roots, nroots, sizeof *roots, by_count_desc, (void *)cells);
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t k = 0; k < nroots; k++) moments_of_subtree(cells, roots[k], x, y, z, m, mo);
    for (size_t k = ntop; k-- > 0;) moments_of_cell(cells, top[k], x, y, z, m, mo);
    free(top); free(roots); free(stack);
    return 0;
}

void gp_host_tree_free(gp_host_tree *t)
{
    free(t->cells);
    free(t->mom);
    memset(t, 0, sizeof *t);
}
