/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_dev.cu — the cuda-direct kernels: direct summation in the
 * Chamomile scheme (Hamada & Iitaka 2007).
 *
 *   - j-particles are read in tiles ("J-BAGs") of DIRECT_BLOCK particles
 *     into shared memory; every thread keeps DIRECT_NI i-particles in
 *     registers and sums the tile's pull on each of them;
 *   - blocked accumulation (precision = mixed): the interactions and the
 *     sum over one tile are float, the tile's partial sum is then added to a
 *     double accumulator — the Chamomile scheme's "current" and "backup"
 *     force registers, which keep the accumulated error near 1e-7 instead
 *     of the 1e-6..1e-5 of one long float sum;
 *   - ij-parallelism for few i-particles: the j range is cut into S
 *     segments handled by different blocks; segment sums go to a buffer and
 *     a second kernel adds them in segment order. S depends on the number
 *     of i and j only, never on the GPU, so results are bit-identical on
 *     any device and any launch shape; nothing uses atomics.
 *
 * Self terms: compute_forces passes each i-particle's own index (or
 * `identity` when i-particle k is j-particle k); a tile
 * that holds one of the block's own particles takes a slower loop that
 * skips j == i (block-uniform decision, rare: the diagonal tiles). With
 * eps = 0, pairs at zero distance are skipped (the ABI's rule).
 *
 * The host side (direct.c) talks to this file through direct_dev.h only.
 */
#include "cuda-base/launch.cuh"
#include <stdint.h>
#include <type_traits>

#include "cuda-direct/direct_dev.h"

#include "cuda-direct/direct_kernel.cuh"
#include "cuda-base/state_dev.cuh"

/* Gathers the active particles (by index) as i-particles. */
template <typename P4>
__global__ void direct_gather(const P4 *jp, const uint32_t *index, uint32_t ni, P4 *ip)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < ni) ip[i] = jp[index[i]];
}

/* j-records of the sources from the double positions on the device:
 * {x - c, y - c, z - c, m} exactly as the host once wrote them (a double
 * subtraction, then a rounding to float); srank[o] = j when given. */
template <typename P4>
__global__ void direct_records(const double *pos, const double *mass, const uint32_t *src, uint32_t nj,
                               double cx, double cy, double cz, double il, double im, P4 *jp, uint32_t *srank)
{
    uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nj) return;
    size_t o = src ? src[j] : j;
    typedef decltype(jp->x) T;
    /* il, im: powers of two (exact), 1 for ordinary data */
    jp[j] = P4{(T)((pos[3 * o] - cx) * il), (T)((pos[3 * o + 1] - cy) * il), (T)((pos[3 * o + 2] - cz) * il),
               (T)(mass[o] * im)};
    if (srank) srank[o] = j;
}

/* i-records of particles index[k] (k if NULL) from the double positions;
 * self[k] = srank[o] (not a source: 0xffffffff) */
template <typename P4>
__global__ void direct_irecords(const double *pos, const uint32_t *index, uint32_t ni, double cx, double cy,
                                double cz, double il, const uint32_t *srank, P4 *ip, uint32_t *self)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ni) return;
    size_t o = index ? index[k] : k;
    typedef decltype(ip->x) T;
    ip[k] = P4{(T)((pos[3 * o] - cx) * il), (T)((pos[3 * o + 1] - cy) * il), (T)((pos[3 * o + 2] - cz) * il), (T)0};
    self[k] = srank[o];
}

/* Velocity records {vx, vy, vz, 0} * il of particles map[k] (k if NULL). */
template <typename P4>
__global__ void direct_vrecords(const double *vel, const uint32_t *map, uint32_t count, double il, P4 *rec)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    size_t o = map ? map[k] : k;
    typedef decltype(rec->x) T;
    rec[k] = P4{(T)(vel[3 * o] * il), (T)(vel[3 * o + 1] * il), (T)(vel[3 * o + 2] * il), (T)0};
}

extern "C" {

int gp_direct_vrecords(const double *vel, const uint32_t *map, uint32_t count, double inv_len, int dbl,
                       void *rec, void *stream)
{
    if (count == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned blocks = (count + 255) / 256;
    if (dbl)
        GP_LAUNCH(direct_vrecords<gp_d4>, blocks, 256, 256, st, vel, map, count, inv_len, (gp_d4 *)rec);
    else
        GP_LAUNCH(direct_vrecords<float4>, blocks, 256, 256, st, vel, map, count, inv_len, (float4 *)rec);
    return (int)cudaGetLastError();
}

int gp_direct_records(const double *pos, const double *mass, const uint32_t *src, uint32_t nj,
                      const double *center, double inv_len, double inv_mass, int dbl, void *jp, uint32_t *srank,
                      void *stream)
{
    if (nj == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned blocks = (nj + 255) / 256;
    if (dbl)
        GP_LAUNCH(direct_records<gp_d4>, blocks, 256, 256, st, pos, mass, src, nj, center[0], center[1], center[2],
                  inv_len, inv_mass, (gp_d4 *)jp, srank);
    else
        GP_LAUNCH(direct_records<float4>, blocks, 256, 256, st, pos, mass, src, nj, center[0], center[1], center[2],
                  inv_len, inv_mass, (float4 *)jp, srank);
    return (int)cudaGetLastError();
}

int gp_direct_irecords(const double *pos, const uint32_t *index, uint32_t ni, const double *center,
                       double inv_len, const uint32_t *srank, int dbl, void *ip, uint32_t *self, void *stream)
{
    if (ni == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned blocks = (ni + 255) / 256;
    if (dbl)
        GP_LAUNCH(direct_irecords<gp_d4>, blocks, 256, 256, st, pos, index, ni, center[0], center[1], center[2],
                  inv_len, srank, (gp_d4 *)ip, self);
    else
        GP_LAUNCH(direct_irecords<float4>, blocks, 256, 256, st, pos, index, ni, center[0], center[1], center[2],
                  inv_len, srank, (float4 *)ip, self);
    return (int)cudaGetLastError();
}

int gp_direct_probe(void)
{
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, (const void *)direct_kernel<1, false>);
}

uint32_t gp_direct_segments(uint32_t ni, uint32_t nj)
{
    /* Enough blocks to fill any current GPU (~4 per SM on 132 SMs) when
     * few i are active, but a segment never shorter than 8 tiles; chosen
     * from ni and nj only (determinism across devices). */
    const uint32_t want_blocks = 1024;
    uint32_t iblocks = (ni + DIRECT_IPB - 1) / DIRECT_IPB;
    uint32_t ntiles = (nj + DIRECT_BLOCK - 1) / DIRECT_BLOCK;
    uint32_t s = iblocks >= want_blocks ? 1 : (want_blocks + iblocks - 1) / iblocks;
    uint32_t max_s = ntiles / 8 > 0 ? ntiles / 8 : 1;
    if (s > max_s) s = max_s;
    if (s > 4096) s = 4096;
    return s < 1 ? 1 : s;
}

int gp_direct_gather(const void *jp, const uint32_t *index, uint32_t ni, void *ip,
                     int dbl, void *stream)
{
    if (ni == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    unsigned blocks = (ni + 255) / 256;
    if (dbl)
        GP_LAUNCH(direct_gather<gp_d4>, blocks, 256, 256, st, (const gp_d4 *)jp, index, ni, (gp_d4 *)ip);
    else
        GP_LAUNCH(direct_gather<float4>, blocks, 256, 256, st, (const float4 *)jp, index, ni, (float4 *)ip);
    return (int)cudaGetLastError();
}

int gp_direct_launch(int mode, const void *jp, uint32_t nj, const void *ip,
                     const uint32_t *self, int identity, uint32_t ni, double eps2,
                     uint32_t nseg, void *seg_v, void *out_v, void *stream)
{
    if (ni == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    gp_d4 *seg = (gp_d4 *)seg_v, *out = (gp_d4 *)out_v;
    uint32_t ntiles = (nj + DIRECT_BLOCK - 1) / DIRECT_BLOCK;
    uint32_t tps = (ntiles + nseg - 1) / nseg;
    dim3 grid((ni + DIRECT_IPB - 1) / DIRECT_IPB, nseg);
    gp_d4 *dst = nseg == 1 ? out : seg;
    bool guard = eps2 == 0.0;
    /* pick the instance, then launch it through a pointer (one launch
     * site, and no template arguments inside the launch macro) */
    typedef void (*kernel_f)(const float4 *, uint32_t, uint32_t, const float4 *, const uint32_t *, int,
                             uint32_t, double, gp_d4 *);
    typedef void (*kernel_d)(const gp_d4 *, uint32_t, uint32_t, const gp_d4 *, const uint32_t *, int,
                             uint32_t, double, gp_d4 *);
    if (mode == 2) {
        kernel_d k = guard ? direct_kernel<2, true> : direct_kernel<2, false>;
        GP_LAUNCH(k, grid, DIRECT_BLOCK, DIRECT_BLOCK, st, (const gp_d4 *)jp, nj, tps, (const gp_d4 *)ip, self,
                  identity, ni, eps2, dst);
    } else {
        kernel_f k = mode == 0 ? (guard ? direct_kernel<0, true> : direct_kernel<0, false>)
                               : (guard ? direct_kernel<1, true> : direct_kernel<1, false>);
        GP_LAUNCH(k, grid, DIRECT_BLOCK, DIRECT_BLOCK, st, (const float4 *)jp, nj, tps, (const float4 *)ip, self,
                  identity, ni, eps2, dst);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || nseg == 1) return (int)e;
    GP_LAUNCH(direct_reduce, (ni + 255) / 256, 256, 256, st, seg, nseg, ni, out);
    return (int)cudaGetLastError();
}

int gp_direct_launch_jerk(int mode, const void *jp, const void *jv, uint32_t nj, const void *ip,
                          const void *iv, const uint32_t *self, int identity, uint32_t ni, double eps2,
                          uint32_t nseg, void *seg_v, void *jseg_v, void *out_v, void *jerk_v, void *stream)
{
    if (ni == 0) return (int)cudaSuccess;
    cudaStream_t st = (cudaStream_t)stream;
    gp_d4 *seg = (gp_d4 *)seg_v, *jseg = (gp_d4 *)jseg_v, *out = (gp_d4 *)out_v, *jerk = (gp_d4 *)jerk_v;
    /* the segments and tiles of gp_direct_launch: the same sums in the
     * same order, so acc and pot keep their bits */
    uint32_t ntiles = (nj + DIRECT_BLOCK - 1) / DIRECT_BLOCK;
    uint32_t tps = (ntiles + nseg - 1) / nseg;
    dim3 grid((ni + DIRECT_IPB - 1) / DIRECT_IPB, nseg);
    gp_d4 *dst = nseg == 1 ? out : seg, *jdst = nseg == 1 ? jerk : jseg;
    bool guard = eps2 == 0.0;
    typedef void (*kernel_f)(const float4 *, const float4 *, uint32_t, uint32_t, const float4 *, const float4 *,
                             const uint32_t *, int, uint32_t, double, gp_d4 *, gp_d4 *);
    typedef void (*kernel_d)(const gp_d4 *, const gp_d4 *, uint32_t, uint32_t, const gp_d4 *, const gp_d4 *,
                             const uint32_t *, int, uint32_t, double, gp_d4 *, gp_d4 *);
    if (mode == 2) {
        kernel_d k = guard ? direct_jerk_kernel<2, true> : direct_jerk_kernel<2, false>;
        GP_LAUNCH(k, grid, DIRECT_BLOCK, DIRECT_BLOCK, st, (const gp_d4 *)jp, (const gp_d4 *)jv, nj, tps,
                  (const gp_d4 *)ip, (const gp_d4 *)iv, self, identity, ni, eps2, dst, jdst);
    } else {
        kernel_f k = mode == 0 ? (guard ? direct_jerk_kernel<0, true> : direct_jerk_kernel<0, false>)
                               : (guard ? direct_jerk_kernel<1, true> : direct_jerk_kernel<1, false>);
        GP_LAUNCH(k, grid, DIRECT_BLOCK, DIRECT_BLOCK, st, (const float4 *)jp, (const float4 *)jv, nj, tps,
                  (const float4 *)ip, (const float4 *)iv, self, identity, ni, eps2, dst, jdst);
    }
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess || nseg == 1) return (int)e;
    GP_LAUNCH(direct_reduce, (ni + 255) / 256, 256, 256, st, seg, nseg, ni, out);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    GP_LAUNCH(direct_reduce, (ni + 255) / 256, 256, 256, st, jseg, nseg, ni, jerk);
    return (int)cudaGetLastError();
}

} /* extern "C" */
