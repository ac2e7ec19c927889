/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_kernel.cuh — the cuda-direct kernels themselves (see direct_dev.cu
 * for the scheme), in a header so that nvcc compiles them into
 * direct_dev.cu and g++ compiles the same source, through tests/gpu/gpu-emu.h
 * (a CUDA thread emulator), into tests/gpu/gpu-walk-emu.cc, which runs them on
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
 * potential is applied on the host), and hands back d, 1/r and m/r^3 for
 * the jerk. CHECK: skip j == self; GUARD: skip r2 + eps2 == 0 (only
 * needed when eps == 0); a skipped pair has rinv = 0 and adds exactly 0. */
template <typename P, bool CHECK, bool GUARD>
__device__ __forceinline__ void pair_core(P xi, P yi, P zi, uint32_t self,
                                          P xj, P yj, P zj, P mj, uint32_t jidx,
                                          P eps2, P &ax, P &ay, P &az, P &pt,
                                          P &dx, P &dy, P &dz, P &rinv, P &mr3)
{
    dx = xj - xi, dy = yj - yi, dz = zj - zi;
    P r2 = eps2 + dx * dx + dy * dy + dz * dz; /* three FMAs */
    rinv = rsqrt_p(r2);
    if (GUARD) rinv = r2 > P(0) ? rinv : P(0);
    if (CHECK) rinv = jidx != self ? rinv : P(0);
    P mr = mj * rinv;
    mr3 = mr * rinv * rinv;
    ax += mr3 * dx;
    ay += mr3 * dy;
    az += mr3 * dz;
    pt += mr;
}

/* The force alone. */
template <typename P, bool CHECK, bool GUARD>
__device__ __forceinline__ void pair(P xi, P yi, P zi, uint32_t self,
                                     P xj, P yj, P zj, P mj, uint32_t jidx,
                                     P eps2, P &ax, P &ay, P &az, P &pt)
{
    P dx, dy, dz, rinv, mr3;
    pair_core<P, CHECK, GUARD>(xi, yi, zi, self, xj, yj, zj, mj, jidx, eps2, ax, ay, az, pt,
                               dx, dy, dz, rinv, mr3);
}

/* The force with the jerk beside it (ABI 1.2): the acceleration's
 * operations are pair()'s (pair_core), so acc and pot keep their bits; then
 * j += m/r^3 [v - 3 (r.v)/r^2 r], v = v_j - v_i. */
template <typename P, bool CHECK, bool GUARD>
__device__ __forceinline__ void pair_jerk(P xi, P yi, P zi, P vxi, P vyi, P vzi, uint32_t self,
                                          P xj, P yj, P zj, P mj, P vxj, P vyj, P vzj, uint32_t jidx,
                                          P eps2, P &ax, P &ay, P &az, P &pt, P &jx, P &jy, P &jz)
{
    P dx, dy, dz, rinv, mr3;
    pair_core<P, CHECK, GUARD>(xi, yi, zi, self, xj, yj, zj, mj, jidx, eps2, ax, ay, az, pt,
                               dx, dy, dz, rinv, mr3);
    P dvx = vxj - vxi, dvy = vyj - vyi, dvz = vzj - vzi;
    P rv3 = P(3) * (dx * dvx + dy * dvy + dz * dvz) * rinv * rinv;
    jx += mr3 * (dvx - rv3 * dx);
    jy += mr3 * (dvy - rv3 * dy);
    jz += mr3 * (dvz - rv3 * dz);
}

template <int MODE> struct direct_types {
    typedef typename std::conditional<MODE == 2, double, float>::type P;
    typedef typename vec4<P>::type P4;
};

/*
 * The body of both kernels below: out_seg[s * m + i] = (sum over segment
 * s of the j's pull on i) as gp_d4 (ax, ay, az, sum m/r), and with JERK
 * the jerk as gp_d4 (jx, jy, jz, 0) in jerk_seg, from velocity records
 * jv / iv ({vx, vy, vz, -}) beside the position records (Sapporo2's
 * layout: one more tile in shared memory, one more set of accumulators).
 * Grid: x = i-blocks, y = j-segments. MODE 0 single (float sums over the
 * whole segment), 1 mixed (float per tile, double across tiles), 2 double.
 */
template <int MODE, bool GUARD, bool JERK>
__device__ __forceinline__ void direct_body(const typename direct_types<MODE>::P4 *jp,
                                            const typename direct_types<MODE>::P4 *jv, uint32_t nj,
                                            uint32_t tiles_per_seg, const typename direct_types<MODE>::P4 *ip,
                                            const typename direct_types<MODE>::P4 *iv, const uint32_t *self,
                                            int identity, uint32_t ni, double eps2_d, gp_d4 *out_seg,
                                            gp_d4 *jerk_seg)
{
    typedef typename direct_types<MODE>::P P;
    typedef typename direct_types<MODE>::P4 P4;
    __shared__ P4 tile[DIRECT_BLOCK];
    __shared__ P4 vtile[JERK ? DIRECT_BLOCK : 1];

    const P eps2 = (P)eps2_d;
    P xi[DIRECT_NI], yi[DIRECT_NI], zi[DIRECT_NI];
    uint32_t si[DIRECT_NI];
    P ax[DIRECT_NI], ay[DIRECT_NI], az[DIRECT_NI], pt[DIRECT_NI];       /* tile (or all) */
    double bx[DIRECT_NI], by[DIRECT_NI], bz[DIRECT_NI], bp[DIRECT_NI]; /* blocked sums  */
    /* the jerk's (unused without JERK: the compiler drops them) */
    P vxi[DIRECT_NI], vyi[DIRECT_NI], vzi[DIRECT_NI], jx[DIRECT_NI], jy[DIRECT_NI], jz[DIRECT_NI];
    double bjx[DIRECT_NI], bjy[DIRECT_NI], bjz[DIRECT_NI];

    const uint32_t ibase = blockIdx.x * DIRECT_IPB;
#pragma unroll
    for (int k = 0; k < DIRECT_NI; ++k) {
        uint32_t i = ibase + k * DIRECT_BLOCK + threadIdx.x;
        P4 p = i < ni ? ip[i] : P4{P(0), P(0), P(0), P(0)};
        xi[k] = p.x; yi[k] = p.y; zi[k] = p.z;
        si[k] = i >= ni ? 0xffffffffu : self ? self[i] : identity ? i : 0xffffffffu;
        ax[k] = ay[k] = az[k] = pt[k] = P(0);
        bx[k] = by[k] = bz[k] = bp[k] = 0.0;
        if (JERK) {
            P4 v = i < ni ? iv[i] : P4{P(0), P(0), P(0), P(0)};
            vxi[k] = v.x; vyi[k] = v.y; vzi[k] = v.z;
            jx[k] = jy[k] = jz[k] = P(0);
            bjx[k] = bjy[k] = bjz[k] = 0.0;
        }
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
            if (JERK) vtile[threadIdx.x] = j < nj ? jv[j] : P4{P(0), P(0), P(0), P(0)};
        }
        int mine = 0;
#pragma unroll
        for (int k = 0; k < DIRECT_NI; ++k)
            mine |= (si[k] - jb) < (uint32_t)DIRECT_BLOCK;
        if (__syncthreads_or(mine)) {
            for (int jj = 0; jj < DIRECT_BLOCK; ++jj) {
                P4 q = tile[jj];
                if (JERK) {
                    P4 w = vtile[jj];
#pragma unroll
                    for (int k = 0; k < DIRECT_NI; ++k)
                        pair_jerk<P, true, true>(xi[k], yi[k], zi[k], vxi[k], vyi[k], vzi[k], si[k], q.x, q.y,
                                                 q.z, q.w, w.x, w.y, w.z, jb + jj, eps2, ax[k], ay[k], az[k],
                                                 pt[k], jx[k], jy[k], jz[k]);
                } else {
#pragma unroll
                    for (int k = 0; k < DIRECT_NI; ++k)
                        pair<P, true, true>(xi[k], yi[k], zi[k], si[k], q.x, q.y, q.z, q.w,
                                            jb + jj, eps2, ax[k], ay[k], az[k], pt[k]);
                }
            }
        } else {
#pragma unroll 8
            for (int jj = 0; jj < DIRECT_BLOCK; ++jj) {
                P4 q = tile[jj];
                if (JERK) {
                    P4 w = vtile[jj];
#pragma unroll
                    for (int k = 0; k < DIRECT_NI; ++k)
                        pair_jerk<P, false, GUARD>(xi[k], yi[k], zi[k], vxi[k], vyi[k], vzi[k], 0u, q.x, q.y,
                                                   q.z, q.w, w.x, w.y, w.z, 0u, eps2, ax[k], ay[k], az[k],
                                                   pt[k], jx[k], jy[k], jz[k]);
                } else {
#pragma unroll
                    for (int k = 0; k < DIRECT_NI; ++k)
                        pair<P, false, GUARD>(xi[k], yi[k], zi[k], 0u, q.x, q.y, q.z, q.w,
                                              0u, eps2, ax[k], ay[k], az[k], pt[k]);
                }
            }
        }
        if (MODE == 1) { /* Chamomile: fold the tile's float sum into double */
#pragma unroll
            for (int k = 0; k < DIRECT_NI; ++k) {
                bx[k] += (double)ax[k]; by[k] += (double)ay[k];
                bz[k] += (double)az[k]; bp[k] += (double)pt[k];
                ax[k] = ay[k] = az[k] = pt[k] = P(0);
                if (JERK) {
                    bjx[k] += (double)jx[k]; bjy[k] += (double)jy[k]; bjz[k] += (double)jz[k];
                    jx[k] = jy[k] = jz[k] = P(0);
                }
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
        if (JERK) {
            if (MODE == 1) r = gp_d4{bjx[k], bjy[k], bjz[k], 0.0};
            else r = gp_d4{(double)jx[k], (double)jy[k], (double)jz[k], 0.0};
            jerk_seg[(size_t)blockIdx.y * ni + i] = r;
        }
    }
}

/* Forces only (compute_forces, compute_field). */
template <int MODE, bool GUARD>
__global__ void __launch_bounds__(DIRECT_BLOCK)
direct_kernel(const typename direct_types<MODE>::P4 *jp, uint32_t nj, uint32_t tiles_per_seg,
              const typename direct_types<MODE>::P4 *ip, const uint32_t *self, int identity, uint32_t ni,
              double eps2_d, gp_d4 *out_seg)
{
    direct_body<MODE, GUARD, false>(jp, NULL, nj, tiles_per_seg, ip, NULL, self, identity, ni, eps2_d,
                                    out_seg, NULL);
}

/* Forces and the jerk in one pass (compute_forces_ex with jerk). */
template <int MODE, bool GUARD>
__global__ void __launch_bounds__(DIRECT_BLOCK)
direct_jerk_kernel(const typename direct_types<MODE>::P4 *jp, const typename direct_types<MODE>::P4 *jv,
                   uint32_t nj, uint32_t tiles_per_seg, const typename direct_types<MODE>::P4 *ip,
                   const typename direct_types<MODE>::P4 *iv, const uint32_t *self, int identity, uint32_t ni,
                   double eps2_d, gp_d4 *out_seg, gp_d4 *jerk_seg)
{
    direct_body<MODE, GUARD, true>(jp, jv, nj, tiles_per_seg, ip, iv, self, identity, ni, eps2_d, out_seg,
                                   jerk_seg);
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
