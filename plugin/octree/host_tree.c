/* SPDX-License-Identifier: Apache-2.0 */
/* host_tree.c — CPU driver of the tree build (see host_tree.h). */
#include "octree/host_tree.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void gp_host_bounds(size_t n, const double *x, const double *y, const double *z, size_t stride,
                    double mn[3], double mx[3])
{
    for (int a = 0; a < 3; a++) { mn[a] = DBL_MAX; mx[a] = -DBL_MAX; }
    for (size_t i = 0; i < n; i++) {
        double p[3] = { x[i * stride], y[i * stride], z[i * stride] };
        for (int a = 0; a < 3; a++) {
            if (p[a] < mn[a]) mn[a] = p[a];
            if (p[a] > mx[a]) mx[a] = p[a];
        }
    }
}

void gp_host_cube_of_bounds(const double mn[3], const double mx[3], double lo[3], double *inv_cell)
{
    double side = 0;
    for (int a = 0; a < 3; a++)
        if (mx[a] - mn[a] > side) side = mx[a] - mn[a];
    /* a span like 1e308 - -1e308 overflows: cap it (outliers then clamp);
     * no points (mn > mx) gives the unit cube around 0 */
    if (!(side > 0)) side = 1.0;
    if (!(side <= 0.5 * DBL_MAX)) side = DBL_MAX;
    else side *= 1.0 + 1e-9;
    for (int a = 0; a < 3; a++)
        lo[a] = mn[a] <= mx[a] ? 0.5 * mn[a] + 0.5 * mx[a] - 0.5 * side : -0.5 * side;
    *inv_cell = (double)GP_KEY_GRID / side;
}

void gp_host_root_cube(size_t n, const double *x, const double *y, const double *z,
                       size_t stride, double lo[3], double *inv_cell)
{
    double mn[3], mx[3];
    gp_host_bounds(n, x, y, z, stride, mn, mx);
    gp_host_cube_of_bounds(mn, mx, lo, inv_cell);
}

/* The keys vectorised: the Peano-Hilbert encoding is branch-free integer
 * work (~500 operations a key), so 16 keys per AVX-512 vector beat one at a
 * time by ~5x. Same keys bit for bit as gp_key_of_position (integer
 * arithmetic). */
static inline __attribute__((always_inline)) uint64_t ph_encode_unrolled(uint32_t ix, uint32_t iy,
                                                                           uint32_t iz)
{
    /* gp_ph_encode (keys.h) with its loops unrolled, so the loop over
     * particles vectorises; same operations, same keys */
    uint32_t X0 = ix & 0x1fffffu, X1 = iy & 0x1fffffu, X2 = iz & 0x1fffffu;
#pragma GCC unroll 32
    for (int b = GP_KEY_BITS_PER_AXIS - 1; b > 0; b--) {
        uint32_t Q = 1u << b, P = Q - 1;
        uint32_t on = 0u - ((X0 & Q) != 0);
        X0 ^= P & on;                                  /* i = 0: the swap is a no-op */
        on = 0u - ((X1 & Q) != 0);
        X0 ^= P & on;
        uint32_t t = (X0 ^ X1) & P & ~on;
        X0 ^= t; X1 ^= t;
        on = 0u - ((X2 & Q) != 0);
        X0 ^= P & on;
        t = (X0 ^ X2) & P & ~on;
        X0 ^= t; X2 ^= t;
    }
    X1 ^= X0;
    X2 ^= X1;
    uint32_t t = 0;
#pragma GCC unroll 32
    for (int b = GP_KEY_BITS_PER_AXIS - 1; b > 0; b--)
        t ^= ((1u << b) - 1) & (0u - ((X2 >> b) & 1u));
    X0 ^= t; X1 ^= t; X2 ^= t;
    return (gp_key_spread3(X0) << 2) | (gp_key_spread3(X1) << 1) | gp_key_spread3(X2);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#endif
void gp_host_make_keys(size_t n, const double *x, const double *y, const double *z,
                       size_t stride, gp_key_kind kind, const double lo[3], double inv_cell,
                       uint64_t *keys)
{
    const double l0 = lo[0], l1 = lo[1], l2 = lo[2];
#pragma omp parallel for simd schedule(static) if (n > 4096)
    for (size_t i = 0; i < n; i++) {
        uint32_t ix = gp_key_quantise(x[i * stride], l0, inv_cell);
        uint32_t iy = gp_key_quantise(y[i * stride], l1, inv_cell);
        uint32_t iz = gp_key_quantise(z[i * stride], l2, inv_cell);
        keys[i] = kind == GP_KEY_MORTON ? gp_morton_encode(ix, iy, iz) : ph_encode_unrolled(ix, iy, iz);
    }
}

/* Below this many keys one thread sorts: at 50k keys two threads gained
 * nothing (the passes wait on memory), from 128k they sort 1.9x faster. */
#define SORT_PARALLEL_MIN 65536

int gp_host_sort_keys(size_t n, uint64_t *keys, uint32_t *perm)
{
    enum { BITS = 11, RADIX = 1 << BITS, PASSES = 6 }; /* 66 >= 63 bits */
    if (n < 2) return 0;
    int nt = 1;
#ifdef _OPENMP
    if (n >= SORT_PARALLEL_MIN) nt = omp_get_max_threads();
#endif
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint32_t *p2 = malloc(n * sizeof *p2);
    size_t *count = malloc((size_t)nt * RADIX * sizeof *count);
    if (!k2 || !p2 || !count) { free(k2); free(p2); free(count); return -1; }
    int in_keys = 1;   /* where the last pass left the keys: keys/perm or k2/p2 */
    /* Each thread counts and scatters its own contiguous block; a digit's
     * slots go to the blocks in block order, so every pass is stable and
     * the result (key order, ties in input order) is the same for any
     * number of threads. */
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        int t = 0, T = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        T = omp_get_num_threads();
#endif
        const size_t lo = n * (size_t)t / (size_t)T, hi = n * (size_t)(t + 1) / (size_t)T;
        size_t *mine = count + (size_t)t * RADIX;
        uint64_t *ks = keys, *kd = k2;
        uint32_t *ps = perm, *pd = p2;
        for (int pass = 0; pass < PASSES; pass++) {
            const int shift = pass * BITS;
            memset(mine, 0, RADIX * sizeof *mine);
            for (size_t i = lo; i < hi; i++) mine[(ks[i] >> shift) & (RADIX - 1)]++;
#pragma omp barrier
            /* every thread sees the same counts, so all skip a pass whose
             * keys share one digit, or none does */
            const size_t d0 = (ks[0] >> shift) & (RADIX - 1);
            size_t same = 0;
            for (int u = 0; u < T; u++) same += count[(size_t)u * RADIX + d0];
#pragma omp barrier
            if (same == n) continue;
#pragma omp single
            {
                size_t sum = 0;
                for (size_t d = 0; d < RADIX; d++)
                    for (int u = 0; u < T; u++) {
                        size_t c = count[(size_t)u * RADIX + d];
                        count[(size_t)u * RADIX + d] = sum;
                        sum += c;
                    }
            }   /* its implied barrier: the offsets are ready */
            for (size_t i = lo; i < hi; i++) {
                size_t d = mine[(ks[i] >> shift) & (RADIX - 1)]++;
                kd[d] = ks[i];
                pd[d] = ps[i];
            }
#pragma omp barrier
            uint64_t *tk = ks; ks = kd; kd = tk;
            uint32_t *tp = ps; ps = pd; pd = tp;
        }
        if (t == 0) in_keys = ks == keys;
    }
    if (!in_keys) {
        memcpy(keys, k2, n * sizeof *keys);
        memcpy(perm, p2, n * sizeof *perm);
    }
    free(k2); free(p2); free(count);
    return 0;
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
