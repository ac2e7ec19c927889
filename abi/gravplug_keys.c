/* SPDX-License-Identifier: Apache-2.0 */
/* gravplug_keys.c — the host's loops over many points for the key rule of
 * gravplug_keys.h: bounds, root cube, keys, radix sort. Linked by the tree
 * plugins (GP_OCTREE_OBJS) and by gravhost-mpi's decomposition. */
#include "gravplug_keys.h"

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

/* The keys vectorised: the Peano-Hilbert encoding is branch-free integer
 * work (~500 operations a key), so 16 keys per AVX-512 vector beat one at a
 * time by ~5x. Same keys bit for bit as gp_key_of_position (integer
 * arithmetic). */
static inline __attribute__((always_inline)) uint64_t ph_encode_unrolled(uint32_t ix, uint32_t iy,
                                                                           uint32_t iz)
{
    /* gp_ph_encode (gravplug_keys.h) with its loops unrolled, so the loop over
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
