/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_kernel.cuh — the cuda-direct kernels themselves (see direct_dev.cu
 * for the scheme), in a header so that nvcc compiles them into
 * direct_dev.cu and g++ compiles the same source, through tests/gpu-emu.h
 * (a CUDA thread emulator), into tests/gpu-walk-emu.cc, which runs them on
 * the CPU against a double-precision direct sum.
 */
#ifndef GP_CUDA_DIRECT_KERNEL_CUH
#define GP_CUDA_DIRECT_KERNEL_CUH

#include <stdint.h>
#include <type_traits>

#include "cuda-base/vec4.h"

#define DIRECT_BLOCK 128 /* threads per block = j-tile length            */
#define DIRECT_NI 4      /* i-particles per thread                        */
#define DIRECT_IPB (DIRECT_BLOCK * DIRECT_NI)

/* Precision traits: P is the type of positions and interactions, A of the
 * per-tile partial sum. */
template <typename P> struct vec4;
template <> struct vec4<float>  { typedef float4 type; };
template <> struct vec4<double> { typedef gp_d4 type; };

__device__ __forceinline__ float  rsqrt_p(float x)  { return rsqrtf(x); }
__device__ __forceinline__ double rsqrt_p(double x) { return 1.0 / sqrt(x); }

/* One j on one i: adds m/r^3 * d to a and -m/r to p (the sign of the
 * potential is applied on the host). CHECK: skip j == self; GUARD: skip
 * r2 + eps2 == 0 (only needed when eps == 0). */
template <typename P, bool CHECK, bool GUARD>
__device__ __forceinline__ void pair(P xi, P yi, P zi, uint32_t self,
                                     P xj, P yj, P zj, P mj, uint32_t jidx,
                                     P eps2, P &ax, P &ay, P &az, P &pt)
{
    P dx = xj - xi, dy = yj - yi, dz = zj - zi;
    P r2 = eps2 + dx * dx + dy * dy + dz * dz; /* three FMAs */
    P rinv = rsqrt_p(r2);
    if (GUARD) rinv = r2 > P(0) ? rinv : P(0);
    if (CHECK) rinv = jidx != self ? rinv : P(0);
    P mr = mj * rinv;
    P mr3 = mr * rinv * rinv;
    ax += mr3 * dx;
    ay += mr3 * dy;
    az += mr3 * dz;
    pt += mr;
}

/*
 * out_seg[s * m + i] = (sum over segment s of the j's pull on i) as
 * gp_d4 (ax, ay, az, sum m/r). Grid: x = i-blocks, y = j-segments.
 * MODE 0 single (float sums over the whole segment), 1 mixed (float per
 * tile, double across tiles), 2 double.
 */
template <int MODE, bool GUARD>
__global__ void __launch_bounds__(DIRECT_BLOCK)
direct_kernel(const typename vec4<typename std::conditional<MODE == 2, double, float>::type>::type *jp,
              uint32_t nj, uint32_t tiles_per_seg,
              const typename vec4<typename std::conditional<MODE == 2, double, float>::type>::type *ip,
              const uint32_t *self, int identity, uint32_t ni, double eps2_d, gp_d4 *out_seg)
{
    typedef typename std::conditional<MODE == 2, double, float>::type P;
    typedef typename vec4<P>::type P4;
    __shared__ P4 tile[DIRECT_BLOCK];

    const P eps2 = (P)eps2_d;
    P xi[DIRECT_NI], yi[DIRECT_NI], zi[DIRECT_NI];
    uint32_t si[DIRECT_NI];
    P ax[DIRECT_NI], ay[DIRECT_NI], az[DIRECT_NI], pt[DIRECT_NI];       /* tile (or all) */
    double bx[DIRECT_NI], by[DIRECT_NI], bz[DIRECT_NI], bp[DIRECT_NI]; /* blocked sums  */

    const uint32_t ibase = blockIdx.x * DIRECT_IPB;
#pragma unroll
    for (int k = 0; k < DIRECT_NI; ++k) {
        uint32_t i = ibase + k * DIRECT_BLOCK + threadIdx.x;
        P4 p = i < ni ? ip[i] : P4{P(0), P(0), P(0), P(0)};
        xi[k] = p.x; yi[k] = p.y; zi[k] = p.z;
        si[k] = i >= ni ? 0xffffffffu : self ? self[i] : identity ? i : 0xffffffffu;
        ax[k] = ay[k] = az[k] = pt[k] = P(0);
        bx[k] = by[k] = bz[k] = bp[k] = 0.0;
    }

    const uint32_t ntiles = (nj + DIRECT_BLOCK - 1) / DIRECT_BLOCK;
    const uint32_t t0 = blockIdx.y * tiles_per_seg;
    const uint32_t t1 = min(ntiles, t0 + tiles_per_seg);
    for (uint32_t t = t0; t < t1; ++t) {
        const uint32_t jb = t * DIRECT_BLOCK;
        __syncthreads(); /* the previous tile is consumed */
        {
            uint32_t j = jb + threadIdx.x;
            /* padding: zero mass at the origin adds exactly nothing */
            tile[threadIdx.x] = j < nj ? jp[j] : P4{P(0), P(0), P(0), P(0)};
        }
        int mine = 0;
#pragma unroll
        for (int k = 0; k < DIRECT_NI; ++k)
            mine |= (si[k] - jb) < (uint32_t)DIRECT_BLOCK;
        if (__syncthreads_or(mine)) {
            for (int jj = 0; jj < DIRECT_BLOCK; ++jj) {
                P4 q = tile[jj];
#pragma unroll
                for (int k = 0; k < DIRECT_NI; ++k)
                    pair<P, true, true>(xi[k], yi[k], zi[k], si[k], q.x, q.y, q.z, q.w,
                                        jb + jj, eps2, ax[k], ay[k], az[k], pt[k]);
            }
        } else {
#pragma unroll 8
            for (int jj = 0; jj < DIRECT_BLOCK; ++jj) {
                P4 q = tile[jj];
#pragma unroll
                for (int k = 0; k < DIRECT_NI; ++k)
                    pair<P, false, GUARD>(xi[k], yi[k], zi[k], 0u, q.x, q.y, q.z, q.w,
                                          0u, eps2, ax[k], ay[k], az[k], pt[k]);
            }
        }
        if (MODE == 1) { /* Chamomile: fold the tile's float sum into double */
#pragma unroll
            for (int k = 0; k < DIRECT_NI; ++k) {
                bx[k] += (double)ax[k]; by[k] += (double)ay[k];
                bz[k] += (double)az[k]; bp[k] += (double)pt[k];
                ax[k] = ay[k] = az[k] = pt[k] = P(0);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < DIRECT_NI; ++k) {
        uint32_t i = ibase + k * DIRECT_BLOCK + threadIdx.x;
        if (i >= ni) continue;
        gp_d4 r;
        if (MODE == 1) r = gp_d4{bx[k], by[k], bz[k], bp[k]};
        else r = gp_d4{(double)ax[k], (double)ay[k], (double)az[k], (double)pt[k]};
        out_seg[(size_t)blockIdx.y * ni + i] = r;
    }
}

/* out[i] = sum over s in order of seg[s * ni + i]: fixed order, so the
 * result does not depend on which block ran when. */
__global__ void direct_reduce(const gp_d4 *seg, uint32_t nseg, uint32_t ni, gp_d4 *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= ni) return;
    gp_d4 s = seg[i];
    for (uint32_t k = 1; k < nseg; ++k) {
        gp_d4 v = seg[(size_t)k * ni + i];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    out[i] = s;
}

#endif /* GP_CUDA_DIRECT_KERNEL_CUH */
