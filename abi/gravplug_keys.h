/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug_keys.h — 63-bit space-filling-curve keys: Peano-Hilbert (the
 * order the tree plugins build their trees in, and the order gravhost-mpi
 * cuts into the ranks' slices) and Morton (for comparison and tests). The
 * order is a contract between a host's decomposition and the tree plugins,
 * so it lives here, once, for both sides (and gravplug_keys.c, the host's
 * loops over many points: bounds, root cube, keys, radix sort).
 *
 * A position is first quantised to a 2^21 grid over the root cube
 * (gp_key_quantise), then the three 21-bit integer coordinates are turned
 * into one 63-bit key. Both curves are nested: the top 3L bits of a key name
 * the level-L cell holding the point, so a tree cell is a key prefix and the
 * particles of a cell are a contiguous run of the key-sorted array.
 *
 * Peano-Hilbert: John Skilling, "Programming the Hilbert curve", AIP Conf.
 * Proc. 707 (2004) — the transpose form, the same curve GOTHIC's appendix A
 * describes. Consecutive PH keys are face-adjacent grid cells (tested), which
 * is what makes i-groups of consecutive particles compact.
 *
 * The inline functions are pure, branch-light integer code, GP_KEY_FN:
 * host and device under nvcc, plain C otherwise.
 */
#ifndef GRAVPLUG_KEYS_H
#define GRAVPLUG_KEYS_H

#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#  define GP_KEY_FN static inline __host__ __device__
#else
#  define GP_KEY_FN static inline
#endif

/* Keys are 63 bits: 21 bits per axis, 3 bits per tree level. */
#define GP_KEY_BITS_PER_AXIS 21
#define GP_KEY_MAX_LEVEL     21
#define GP_KEY_GRID          (1u << GP_KEY_BITS_PER_AXIS) /* cells per axis at the deepest level */

/* Spreads the low 21 bits of v so that bit b lands on bit 3b. */
GP_KEY_FN uint64_t gp_key_spread3(uint32_t v)
{
    uint64_t x = v & 0x1fffffu;
    x = (x | x << 32) & UINT64_C(0x001f00000000ffff);
    x = (x | x << 16) & UINT64_C(0x001f0000ff0000ff);
    x = (x | x << 8)  & UINT64_C(0x100f00f00f00f00f);
    x = (x | x << 4)  & UINT64_C(0x10c30c30c30c30c3);
    x = (x | x << 2)  & UINT64_C(0x1249249249249249);
    return x;
}

/* Inverse of gp_key_spread3: gathers bits 0, 3, 6, ... into 21 bits. */
GP_KEY_FN uint32_t gp_key_compact3(uint64_t x)
{
    x &= UINT64_C(0x1249249249249249);
    x = (x ^ (x >> 2))  & UINT64_C(0x10c30c30c30c30c3);
    x = (x ^ (x >> 4))  & UINT64_C(0x100f00f00f00f00f);
    x = (x ^ (x >> 8))  & UINT64_C(0x001f0000ff0000ff);
    x = (x ^ (x >> 16)) & UINT64_C(0x001f00000000ffff);
    x = (x ^ (x >> 32)) & UINT64_C(0x00000000001fffff);
    return (uint32_t)x;
}

/* Quantises one coordinate to [0, 2^21 - 1] given the root cube's lower
 * corner and 2^21 / side. NaN and values outside the cube are clamped, so
 * any finite input (1e30, far outliers) gives a valid key. */
GP_KEY_FN uint32_t gp_key_quantise(double x, double lo, double inv_cell)
{
    double q = (x - lo) * inv_cell;
    if (!(q > 0.0)) return 0;                       /* also catches NaN */
    if (q >= (double)(GP_KEY_GRID - 1)) return GP_KEY_GRID - 1;
    return (uint32_t)q;
}

/* Morton (Z-order) key: x bits most significant within each 3-bit digit. */
GP_KEY_FN uint64_t gp_morton_encode(uint32_t ix, uint32_t iy, uint32_t iz)
{
    return (gp_key_spread3(ix) << 2) | (gp_key_spread3(iy) << 1) | gp_key_spread3(iz);
}

GP_KEY_FN void gp_morton_decode(uint64_t key, uint32_t *ix, uint32_t *iy, uint32_t *iz)
{
    *ix = gp_key_compact3(key >> 2);
    *iy = gp_key_compact3(key >> 1);
    *iz = gp_key_compact3(key);
}

/* Peano-Hilbert key (Skilling's AxestoTranspose, then bit interleave). */
GP_KEY_FN uint64_t gp_ph_encode(uint32_t ix, uint32_t iy, uint32_t iz)
{
    uint32_t X[3] = { ix & 0x1fffffu, iy & 0x1fffffu, iz & 0x1fffffu };
    const uint32_t M = 1u << (GP_KEY_BITS_PER_AXIS - 1);
    for (uint32_t Q = M; Q > 1; Q >>= 1) {           /* inverse undo */
        uint32_t P = Q - 1;
        for (int i = 0; i < 3; i++) {                /* branch-free: no divergence */
            uint32_t on = 0u - ((X[i] & Q) != 0);    /* all ones when the bit is set */
            X[0] ^= P & on;                          /* set: invert low bits of X[0] */
            uint32_t t = (X[0] ^ X[i]) & P & ~on;    /* clear: swap low bits          */
            X[0] ^= t;
            X[i] ^= t;
        }
    }
    X[1] ^= X[0];                                    /* Gray encode */
    X[2] ^= X[1];
    uint32_t t = 0;
    for (uint32_t Q = M; Q > 1; Q >>= 1)
        t ^= (Q - 1) & (0u - ((X[2] & Q) != 0));
    X[0] ^= t; X[1] ^= t; X[2] ^= t;
    return gp_morton_encode(X[0], X[1], X[2]);
}

/* Inverse of gp_ph_encode (Skilling's TransposetoAxes). */
GP_KEY_FN void gp_ph_decode(uint64_t key, uint32_t *ix, uint32_t *iy, uint32_t *iz)
{
    uint32_t X[3];
    gp_morton_decode(key, &X[0], &X[1], &X[2]);
    uint32_t t = X[2] >> 1;                          /* Gray decode */
    X[2] ^= X[1];
    X[1] ^= X[0];
    X[0] ^= t;
    for (uint32_t Q = 2; Q != GP_KEY_GRID; Q <<= 1) { /* undo excess work */
        uint32_t P = Q - 1;
        for (int i = 2; i >= 0; i--) {
            uint32_t on = 0u - ((X[i] & Q) != 0);
            X[0] ^= P & on;
            uint32_t u = (X[0] ^ X[i]) & P & ~on;
            X[0] ^= u;
            X[i] ^= u;
        }
    }
    *ix = X[0]; *iy = X[1]; *iz = X[2];
}

/* Which curve a tree is built along. */
typedef enum gp_key_kind { GP_KEY_PEANO_HILBERT = 0, GP_KEY_MORTON = 1 } gp_key_kind;

GP_KEY_FN uint64_t gp_key_encode(gp_key_kind kind, uint32_t ix, uint32_t iy, uint32_t iz)
{
    return kind == GP_KEY_MORTON ? gp_morton_encode(ix, iy, iz) : gp_ph_encode(ix, iy, iz);
}

/* The key of a position inside the root cube (lo = lower corner, side). */
GP_KEY_FN uint64_t gp_key_of_position(gp_key_kind kind, double x, double y, double z,
                                                const double lo[3], double inv_cell)
{
    return gp_key_encode(kind, gp_key_quantise(x, lo[0], inv_cell),
                         gp_key_quantise(y, lo[1], inv_cell),
                         gp_key_quantise(z, lo[2], inv_cell));
}

/* The 3-bit child digit of a key below a cell at `level` (0 = root). */
GP_KEY_FN unsigned gp_key_digit(uint64_t key, int level)
{
    return (unsigned)(key >> (3 * (GP_KEY_MAX_LEVEL - 1 - level))) & 7u;
}

/* The level-`level` cell prefix of a key. */
GP_KEY_FN uint64_t gp_key_prefix(uint64_t key, int level)
{
    return level <= 0 ? 0 : key >> (3 * (GP_KEY_MAX_LEVEL - level));
}

/* The host's loops, gravplug_keys.c (C functions, callable from C++). */
#ifdef __cplusplus
extern "C" {
#endif

/* The bounds of n points (x/y/z strided by `stride` doubles);
 * n = 0: mn = DBL_MAX, mx = -DBL_MAX. */
void gp_host_bounds(size_t n, const double *x, const double *y, const double *z, size_t stride,
                    double mn[3], double mx[3]);
/* The root cube of those bounds: lower corner lo[3] and inv_cell = 2^21 /
 * side. Handles one point, coincident points and extreme (finite)
 * coordinates. Two halves, so that MPI ranks can agree on one cube (the
 * bounds reduced over the ranks) and their trees' cells are cells of one
 * octree. */
void gp_host_cube_of_bounds(const double mn[3], const double mx[3], double lo[3], double *inv_cell);

/* keys[i] of n points (strided like above), vectorised (baseline, AVX2 and
 * AVX-512 builds chosen at load time) and threaded: the same keys as
 * gp_key_of_position, one at a time. The tree builds and gravhost-mpi's
 * domain decomposition both take their keys from here. */
void gp_host_make_keys(size_t n, const double *x, const double *y, const double *z,
                       size_t stride, gp_key_kind kind, const double lo[3], double inv_cell,
                       uint64_t *keys);

/* Stable LSD radix sort of keys[0..n) carrying perm[] along, on OpenMP's
 * threads from 64k keys (the same result for any number). Returns -1 on
 * allocation failure (inputs untouched). */
int gp_host_sort_keys(size_t n, uint64_t *keys, uint32_t *perm);

#ifdef __cplusplus
}
#endif

#endif /* GRAVPLUG_KEYS_H */
