/* SPDX-License-Identifier: Apache-2.0 */
/*
 * walk.cuh — the cuda-tree walk kernel (GOTHIC 2.3) and the per-cell walk
 * record, in a header of their own so that the same source is compiled by
 * nvcc into tree_dev.cu and, through tests/gpu/gpu-emu.h (a warp emulator), by
 * g++ into tests/gpu/gpu-walk-emu.cc, which runs the kernel on the CPU against
 * a direct sum. Everything here uses warp-synchronous primitives with the
 * full mask only, reached by all 32 lanes together (the emulator checks).
 */
#ifndef GP_CUDA_TREE_WALK_CUH
#define GP_CUDA_TREE_WALK_CUH

#include <float.h>
#include <math.h>
#include <type_traits>

#include "cuda-tree/walk_args.h"
#include "octree/moments.h"
#include "octree/mac.h"
#include "octree/kernels.h"
#include "gravplug_keys.h"

#define WALK_WARPS 4
#define WALK_THREADS (WALK_WARPS * 32)
#define CLIST 64
#define WALK_MIN_BLOCKS 8 /* 64 registers at most: 50% occupancy on sm_90 */
#define FULL 0xffffffffu

/* float(x) rounded down / up (the box must never shrink in float). */
static inline GP_HD float gp_float_down(double x)
{
    float f = (float)x;
    return (double)f > x ? nextafterf(f, -FLT_MAX) : f;
}
static inline GP_HD float gp_float_up(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, FLT_MAX) : f;
}

/* The walk record of one cell from its moments (octree/moments.h) for the
 * MAC `mac` (octree/mac.h) and opening angle theta. */
static inline GP_HD gp_wcell gp_wcell_make(const gp_moments *mo, int mac, double theta)
{
    double l = gp_moments_size(mo);
    /* the acceleration MAC's per-cell part (M l^2) is formed in the walk;
     * rcrit then holds bh's l / theta for groups without a previous |a| */
    double rc = gp_mac_rcrit(mac == GP_MAC_ACCELERATION ? GP_MAC_BH : (gp_mac_kind)mac, theta, mo);
    gp_wcell w;
    const double tr = mo->s[0] + mo->s[1] + mo->s[2];
    w.mc = gp_f4{(float)mo->com[0], (float)mo->com[1], (float)mo->com[2], (float)mo->m};
    w.qa = gp_f4{(float)(1.5 * mo->s[0]), (float)(1.5 * mo->s[1]), (float)(1.5 * mo->s[2]), (float)(1.5 * mo->s[3])};
    w.qb = gp_f4{(float)(1.5 * mo->s[4]), (float)(1.5 * mo->s[5]), (float)(0.5 * tr), (float)tr};
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        double pad = GP_MAC_BOX_MARGIN * (mo->hi[a] - mo->lo[a]);
        lo[a] = gp_float_down(mo->lo[a] - pad);
        hi[a] = gp_float_up(mo->hi[a] + pad);
    }
    w.lo = gp_f4{lo[0], lo[1], lo[2], (float)rc};
    w.hi = gp_f4{hi[0], hi[1], hi[2], gp_float_up(l)};
    /* moments beyond float (a cell spanning ~1e19 or more): never use the
     * cell as a whole; its children and particles are summed instead */
    float chk = w.mc.x + w.mc.y + w.mc.z + w.mc.w + w.qa.x + w.qa.y + w.qa.z + w.qa.w + w.qb.x + w.qb.y + w.qb.w;
    if (!(chk - chk == 0.f)) {
        w.lo.w = INFINITY;
        w.hi.w = INFINITY;
    }
    return w;
}

/* The current block of a lane's sums (float in single/mixed, double in
 * double mode). The blocked double sums (mixed, double) live in shared
 * memory (walk_kernel's dsum), not in registers: they are touched once per
 * block of <= 64 terms. */
/* Stores cell c's walk record w and topology t (walk_args.h's layout). */
static inline GP_HD void gp_wrec_store(gp_f4 *rec, uint32_t ncells, uint32_t c, const gp_wcell *w, const gp_cell *t)
{
    rec[GP_WREC_MC * (size_t)ncells + c] = w->mc;
    rec[GP_WREC_QA * (size_t)ncells + c] = w->qa;
    rec[GP_WREC_QB * (size_t)ncells + c] = w->qb;
    rec[GP_WREC_LO * (size_t)ncells + c] = w->lo;
    rec[GP_WREC_HI * (size_t)ncells + c] = w->hi;
    gp_wtopo *topo = (gp_wtopo *)(rec + GP_WREC_TOPO * (size_t)ncells);
    topo[c] = gp_wtopo{t->begin, t->count, t->child, t->nchild};
}

template <typename P> struct Acc {
    P tx, ty, tz, tp;
};

__device__ __forceinline__ float warp_min(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fminf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}
__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, o));
    return v;
}

/* One cell's monopole + quadrupole on one i-particle, added to (ax, ay, az,
 * phi) (phi as a positive sum, negated at the end): octree/kernels.h's
 * gp_quad6 in float, factored for few instructions. With the walk record's
 * S' = 1.5 S (qa, qb), T = tr S / 2 and tr S,
 *   u = S' d, q = d.u, A = q / r^2 - T, B = 5 A + tr S,
 *   a = (M + B / r^2) d / r^3 - 2 u / r^5,   phi = (M + A / r^2) / r
 * (= M d/r^3 - 3 S d/r^5 + (7.5 dSd/r^7 - 1.5 tr S/r^5) d and
 * M/r + 1.5 dSd/r^5 - tr S/(2 r^3)), with the hardware rsqrt (MUFU.RSQ,
 * within 2 ulp: the accuracy class of the monopole and p-p terms) instead
 * of gp_rinv_f, the CPU's bit-exact software one (~13 instructions).
 * r2 = |d|^2 + eps^2 as the caller formed it; r2 == 0 contributes 0. GPU
 * walk only: the CPU plugins keep gp_quad6_f. */
__device__ __forceinline__ void quad_rsqrt_add(float dx, float dy, float dz, float r2, gp_f4 mc, gp_f4 qa,
                                               gp_f4 qb, float &ax, float &ay, float &az, float &phi)
{
    float rinv = rsqrtf(r2);
    rinv = r2 > 0.f ? rinv : 0.f;
    const float rinv2 = rinv * rinv;
    const float ux = qa.x * dx + qa.w * dy + qb.x * dz;
    const float uy = qa.w * dx + qa.y * dy + qb.y * dz;
    const float uz = qb.x * dx + qb.y * dy + qa.z * dz;
    const float q = dx * ux + dy * uy + dz * uz;
    const float A = q * rinv2 - qb.z;
    const float B = 5.f * A + qb.w;
    phi += rinv * (mc.w + rinv2 * A);
    const float rinv3 = rinv * rinv2;
    const float c1 = rinv3 * (mc.w + rinv2 * B);
    float c2 = rinv3 * rinv2;
    c2 = c2 + c2;
    ax += c1 * dx; /* two FMAs per axis */
    ax -= c2 * ux;
    ay += c1 * dy;
    ay -= c2 * uy;
    az += c1 * dz;
    az -= c2 * uz;
}

/* One cell's pull (monopole, or monopole + quadrupole) on one i-particle,
 * added to a's current block. In the float modes a pair whose r^2
 * overflows float (r > 1.8e19 in the units given) is done in double
 * instead, so a far outlier gives its true, tiny, contribution instead of
 * inf * 0 = NaN. SAFE: the caller has proven that no pair of this walk can
 * overflow (walk_is_safe), so the test and its branch are left out of the
 * loop. */
/* 1/sqrt(r2) in double for the far-outlier fall-back of the float modes
 * (r2 > FLT_MAX): the device's rsqrt (MUFU.RSQ64H and Newton steps, within
 * 1 ulp of double; the term is rounded to float anyway), far fewer
 * registers than IEEE sqrt and division. MODE 2 keeps gp_rinv_d. */
__device__ __forceinline__ double rinv_far(double r2)
{
#ifdef __CUDA_ARCH__
    return rsqrt(r2);
#else
    return 1.0 / sqrt(r2);
#endif
}

/* A cell's pull in double (MODE 2, and the float modes' outliers): the
 * factored form of quad_rsqrt_add in double on the same record. */
template <int MODE, bool QUAD, typename P>
__device__ __forceinline__ void cell_term_d(gp_f4 mc, gp_f4 qa, gp_f4 qb, P xi, P yi, P zi, P eps2, Acc<P> &a)
{
    const double dx = (double)mc.x - (double)xi, dy = (double)mc.y - (double)yi, dz = (double)mc.z - (double)zi;
    const double r2 = dx * dx + dy * dy + dz * dz + (double)eps2;
    const double rinv = MODE == 2 ? gp_rinv_d(r2) : rinv_far(r2), rinv2 = rinv * rinv, m = mc.w;
    double c1, phi, ux = 0, uy = 0, uz = 0, c2 = 0;
    if (QUAD) {
        ux = (double)qa.x * dx + (double)qa.w * dy + (double)qb.x * dz;
        uy = (double)qa.w * dx + (double)qa.y * dy + (double)qb.y * dz;
        uz = (double)qb.x * dx + (double)qb.y * dy + (double)qa.z * dz;
        const double A = (dx * ux + dy * uy + dz * uz) * rinv2 - (double)qb.z;
        phi = rinv * (m + rinv2 * A);
        c1 = rinv * rinv2 * (m + rinv2 * (5.0 * A + (double)qb.w));
        c2 = 2.0 * rinv * rinv2 * rinv2;
    } else {
        phi = m * rinv;
        c1 = phi * rinv2;
    }
    a.tx += (P)(c1 * dx - c2 * ux); a.ty += (P)(c1 * dy - c2 * uy); a.tz += (P)(c1 * dz - c2 * uz);
    a.tp += (P)phi;
}
template <int MODE, bool QUAD, bool SAFE, typename P>
__device__ __forceinline__ void cell_term(gp_f4 mc, gp_f4 sa, gp_f4 sb, P xi, P yi, P zi, P eps2, Acc<P> &a)
{
    if constexpr (MODE == 2) {
        cell_term_d<MODE, QUAD>(mc, sa, sb, xi, yi, zi, eps2, a);
    } else {
        float dx = mc.x - xi, dy = mc.y - yi, dz = mc.z - zi;
        float r2 = eps2 + dx * dx + dy * dy + dz * dz; /* three FMAs */
        if (!SAFE && !(r2 <= FLT_MAX)) {
            cell_term_d<MODE, QUAD>(mc, sa, sb, xi, yi, zi, eps2, a);
        } else if (QUAD) {
            quad_rsqrt_add(dx, dy, dz, r2, mc, sa, sb, a.tx, a.ty, a.tz, a.tp);
        } else {
            float rinv = rsqrtf(r2);
            rinv = r2 > 0.f ? rinv : 0.f;
            float mr = mc.w * rinv, mr3 = mr * rinv * rinv;
            a.tx += mr3 * dx; a.ty += mr3 * dy; a.tz += mr3 * dz; a.tp += mr;
        }
    }
}

/* One particle's pull on one i-particle (self and r = 0 skipped); the same
 * double fallback as cell_term for r^2 beyond float, unless SAFE. */
template <int MODE, bool SAFE, typename P>
__device__ __forceinline__ void particle_term(gp_f4 q, P xi, P yi, P zi, P eps2, bool skip, Acc<P> &a)
{
    P dx = (P)q.x - xi, dy = (P)q.y - yi, dz = (P)q.z - zi;
    P r2 = eps2 + dx * dx + dy * dy + dz * dz; /* three FMAs */
    if (MODE != 2 && !SAFE && !(r2 <= (P)FLT_MAX)) {
        const double ddx = (double)q.x - (double)xi, ddy = (double)q.y - (double)yi, ddz = (double)q.z - (double)zi;
        const double rinv = rinv_far(ddx * ddx + ddy * ddy + ddz * ddz + (double)eps2);
        const double mr = skip ? 0.0 : (double)q.w * rinv, mr3 = mr * rinv * rinv;
        a.tx += (P)(mr3 * ddx); a.ty += (P)(mr3 * ddy); a.tz += (P)(mr3 * ddz); a.tp += (P)mr;
        return;
    }
    P rinv = MODE == 2 ? P(1) / sqrt(r2) : (P)rsqrtf((float)r2);
    rinv = (r2 > P(0) && !skip) ? rinv : P(0);
    P mr = (P)q.w * rinv, mr3 = mr * rinv * rinv;
    a.tx += mr3 * dx; a.ty += mr3 * dy; a.tz += mr3 * dz; a.tp += mr;
}

/* Sums the accepted cells in list[0..n) into every lane's accumulator,
 * 32 at a time: the warp first copies their records into shared memory
 * (cb, 32 x 3 float4, one cell a lane), so the summation loop reads
 * broadcasts from shared memory instead of waiting on one global load per
 * cell. Called by all 32 lanes with the same n. One loop per kind of cell
 * (QUAD) and per overflow regime (SAFE): nothing is decided per cell. */
template <int MODE, bool QUAD, bool SAFE, typename P>
__device__ __forceinline__ void flush_cells(const gp_f4 *rec, uint32_t ncells, const uint32_t *list, uint32_t n,
                                            gp_f4 (*cb)[3], P xi, P yi, P zi, P eps2, Acc<P> &a)
{
    const uint32_t lane = threadIdx.x & 31;
    for (uint32_t e0 = 0; e0 < n; e0 += 32) {
        const uint32_t m = min(32u, n - e0);
        if (lane < m) {
            const uint32_t c = list[e0 + lane];
            cb[lane][0] = rec[c];
            if (QUAD) {
                cb[lane][1] = rec[GP_WREC_QA * ncells + c];
                cb[lane][2] = rec[GP_WREC_QB * ncells + c];
            }
        }
        __syncwarp();
        /* the outlier loops (!SAFE) are not unrolled: their double
         * fall-back would take the registers of two iterations */
#pragma unroll(SAFE && MODE != 2 ? 2 : 1)
        for (uint32_t e = 0; e < m; ++e)
            cell_term<MODE, QUAD, SAFE>(cb[e][0], QUAD ? cb[e][1] : gp_f4{}, QUAD ? cb[e][2] : gp_f4{}, xi, yi,
                                        zi, eps2, a);
        __syncwarp(); /* cb (and the list) are refilled after this */
    }
}

/* The particles pb[0..n) (one leaf's chunk of <= 32) on every lane's
 * i-particle; `selfrel` is the lane's own index relative to the chunk. */
template <int MODE, bool SAFE, typename P>
__device__ __forceinline__ void sum_particles(const gp_f4 *pb, uint32_t n, uint32_t selfrel, P xi, P yi, P zi,
                                              P eps2, Acc<P> &a)
{
    /* unrolled by 2 at most (by 4 the loop alone would need ~70 registers);
     * the outlier loop (!SAFE) not at all */
#pragma unroll(SAFE && MODE != 2 ? 2 : 1)
    for (uint32_t j = 0; j < n; ++j) particle_term<MODE, SAFE>(pb[j], xi, yi, zi, eps2, j == selfrel, a);
}

/* Whether no pair of this group's walk can overflow float: every source
 * (particle or cell com) lies in the root's box (enlarged, walk_args.h),
 * every i-particle within rg of (gx, gy, gz); the largest possible r^2,
 * with eps^2, must stay 4x below FLT_MAX (room for the rounding of the
 * loops' float r^2). Warp-uniform; inf or NaN anywhere answers false. */
/* Sorted source j as the walk sums it: its record, or on the drifted tree
 * its position tau after the anchor (the mass stays). */
__device__ __forceinline__ gp_f4 source_at(const gp_walk_args &A, uint32_t j)
{
    gp_f4 q = A.ppos[j];
    if (A.cub) {
        const gp_f4 c1 = A.cub[j], c2 = A.cub[A.ncub + j], c3 = A.cub[2 * (size_t)A.ncub + j];
        const float t = A.tau;
        q.x += t * (c1.x + t * (c2.x + t * c3.x));
        q.y += t * (c1.y + t * (c2.y + t * c3.y));
        q.z += t * (c1.z + t * (c2.z + t * c3.z));
    }
    return q;
}

__device__ __forceinline__ bool walk_is_safe(const gp_f4 *rec, uint32_t ncells, float gx, float gy, float gz, float rg,
                                             float eps2)
{
    const gp_f4 lo = rec[GP_WREC_LO * ncells], hi = rec[GP_WREC_HI * ncells]; /* the root, cell 0 */
    float fx = fmaxf(fabsf(lo.x - gx), fabsf(hi.x - gx)) + rg;
    float fy = fmaxf(fabsf(lo.y - gy), fabsf(hi.y - gy)) + rg;
    float fz = fmaxf(fabsf(lo.z - gz), fabsf(hi.z - gz)) + rg;
    float far2 = eps2 + fx * fx + fy * fy + fz * fz;
    return far2 <= 0.25f * FLT_MAX;
}

/* A warp's group, kept in shared memory instead of registers (warp-uniform
 * values that the MAC and the end of a group read, once per 32 cells or
 * once per group): the walk's live state must fit 64 registers. */
struct WalkGroup {
    float gx, gy, gz, rg; /* the group's enclosing sphere                 */
    float ga;             /* acceleration MAC: G / alpha; 0: rcrit          */
    uint32_t k0, nvalid, part;
    uint32_t safe, npp, npc, overflow;
    uint32_t self[32];    /* the lanes' own source index, or GP_TREE_NONE  */
};

template <int MODE>
__global__ void __launch_bounds__(WALK_THREADS, WALK_MIN_BLOCKS)
walk_kernel(gp_walk_args A)
{
    typedef typename std::conditional<MODE == 2, double, float>::type P;
    __shared__ uint32_t clist_s[WALK_WARPS][CLIST];
    /* a warp's staging buffer: 32 cells' records (flush_cells), or, at
     * other times, 32 particles (a leaf's chunk) in its first 512 bytes */
    __shared__ gp_f4 buf_s[WALK_WARPS][32][3];
    __shared__ double dsum_s[WALK_WARPS][4][32]; /* blocked double sums, [component][lane] */
    __shared__ WalkGroup grp_s[WALK_WARPS];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    /* Chamomile's blocked accumulation: the block's partial sum folded into
     * the double sums (mixed, double); single keeps one float sum */
    auto fold = [&](Acc<P> &a) {
        if (MODE != 0) {
            double(*ds)[32] = dsum_s[wib];
            ds[0][lane] += (double)a.tx; ds[1][lane] += (double)a.ty;
            ds[2][lane] += (double)a.tz; ds[3][lane] += (double)a.tp;
            a.tx = a.ty = a.tz = a.tp = P(0);
        }
    };
    uint32_t *clist = clist_s[wib];
    gp_f4 (*cbuf)[3] = buf_s[wib];
    gp_f4 *pbuf = &buf_s[wib][0][0];
    WalkGroup &G = grp_s[wib];
    uint32_t *stack = A.stacks + (size_t)(blockIdx.x * WALK_WARPS + wib) * GP_TREE_STACK;
    const uint32_t parts = A.parts > 1 ? A.parts : 1;
    const P eps2 = (P)A.eps2;

    for (;;) {
        uint32_t w = 0;
        if (lane == 0) w = atomicAdd(A.next_group, 1u);
        w = __shfl_sync(FULL, w, 0);
        {
            const uint32_t ngroups = A.gstart ? A.ngroups : (A.ni + GP_TREE_GROUP - 1) / GP_TREE_GROUP;
            if (w >= ngroups * parts) break;
        }
        P xi, yi, zi;
        {
            const uint32_t g = w / parts, part = w % parts;
            const uint32_t k0 = A.gstart ? A.gstart[g] : g * GP_TREE_GROUP;
            const uint32_t nvalid = A.gstart ? A.gstart[g + 1] - k0 : min(GP_TREE_GROUP, A.ni - k0);
            const uint32_t k = k0 + lane;
            const bool valid = (uint32_t)lane < nvalid;
            gp_f4 me = A.ipos[valid ? k : k0];
            G.self[lane] = valid && A.iself ? A.iself[k] : GP_TREE_NONE;

            /* the group's enclosing sphere (centre of the box, farthest member) */
            float gx = 0.5f * (warp_min(me.x) + warp_max(me.x));
            float gy = 0.5f * (warp_min(me.y) + warp_max(me.y));
            float gz = 0.5f * (warp_min(me.z) + warp_max(me.z));
            float ddx = me.x - gx, ddy = me.y - gy, ddz = me.z - gz;
            float rg = sqrtf(warp_max(ddx * ddx + ddy * ddy + ddz * ddz));
            rg = rg * (1.0f + 1e-5f) + 1e-30f; /* float rounding must not shrink it */

            /* acceleration MAC: the group's smallest previous |a|; a group
             * with any unknown one uses bh this time (as GADGET's first step) */
            float aold = valid && A.iaold ? A.iaold[k] : (valid ? 0.f : FLT_MAX);
            float amin = warp_min(aold);
            const bool use_accel = A.accel && amin > 0.f;
            if (lane == 0) {
                G.gx = gx; G.gy = gy; G.gz = gz; G.rg = rg;
                G.ga = use_accel ? A.G / (A.delta_acc * amin) : 0.f;
                G.k0 = k0; G.nvalid = nvalid; G.part = part;
                /* double mode: every pair is in double anyway */
                G.safe = MODE == 2 || walk_is_safe(A.rec, A.ncells, gx, gy, gz, rg, (float)A.eps2);
                G.npp = G.npc = G.overflow = 0;
            }
            xi = (P)me.x; yi = (P)me.y; zi = (P)me.z;
            if (MODE != 0)
                for (int c = 0; c < 4; ++c) dsum_s[wib][c][lane] = 0.0;
        }
        Acc<P> acc;
        acc.tx = acc.ty = acc.tz = acc.tp = P(0);
        uint32_t ncl = 0, top = 1;
        if (parts == 1) {
            if (lane == 0) stack[0] = 0; /* the root */
        } else {                         /* this part's share of the cut */
            const uint32_t part = w % parts, c0 = A.cut_off[part], c1 = A.cut_off[part + 1];
            top = c1 - c0;
            if (top > GP_TREE_STACK) { top = 0; if (lane == 0) G.overflow = 1; }
            for (uint32_t t = lane; t < top; t += 32) stack[t] = A.cut[c0 + t];
        }
        __syncwarp();

        while (top > 0) {
            const uint32_t take = min(32u, top), base = top - take;
            const bool has = (uint32_t)lane < take;
            uint32_t c = has ? stack[base + lane] : 0u;
            top = base;
            bool accept = false, leaf = false;
            uint32_t nch = 0, child = 0;
            if (has) {
                const gp_f4 mc = A.rec[c], lo = A.rec[GP_WREC_LO * A.ncells + c],
                            hi = A.rec[GP_WREC_HI * A.ncells + c];
                const float gx = G.gx, gy = G.gy, gz = G.gz, rg = G.rg, ga = G.ga;
                float ex = fmaxf(fmaxf(lo.x - gx, gx - hi.x), 0.f);
                float ey = fmaxf(fmaxf(lo.y - gy, gy - hi.y), 0.f);
                float ez = fmaxf(fmaxf(lo.z - gz, gz - hi.z), 0.f);
                bool clear = ex * ex + ey * ey + ez * ez > rg * rg;
                /* acceleration: (G M l^2 / alpha_a)^(1/4), at least l / theta_max */
                float rc = ga > 0.f ? fmaxf(sqrtf(sqrtf(ga * mc.w * hi.w * hi.w)), hi.w * A.tmax_inv) : lo.w;
                float dx = mc.x - gx, dy = mc.y - gy, dz = mc.z - gz;
                float r = rc + rg;
                accept = clear && r * r < dx * dx + dy * dy + dz * dz;
                if (!accept) {
                    const gp_wtopo t = ((const gp_wtopo *)(A.rec + GP_WREC_TOPO * A.ncells))[c];
                    nch = t.nchild;
                    leaf = nch == 0;
                    child = leaf ? t.begin : t.child; /* a leaf's particles */
                    if (leaf) c = t.count;            /* c is no longer needed */
                }
            }
            /* accepted cells -> the shared list, in lane order */
            const unsigned ab = __ballot_sync(FULL, accept);
            if (accept) clist[ncl + __popc(ab & ((1u << lane) - 1u))] = c;
            ncl += __popc(ab);
            /* opened internal cells -> children onto the stack, lane order */
            uint32_t incl = nch;
            for (int o = 1; o < 32; o <<= 1) {
                uint32_t v = __shfl_up_sync(FULL, incl, o);
                if (lane >= o) incl += v;
            }
            const uint32_t total = __shfl_sync(FULL, incl, 31);
            if (top + total > GP_TREE_STACK) {
                if (lane == 0) G.overflow = 1;
                break;
            }
            if (!leaf)
                for (uint32_t t = 0; t < nch; ++t) stack[top + incl - nch + t] = child + t;
            top += total;
            /* opened leaves: their particles, leaf by leaf in lane order */
            unsigned lb = __ballot_sync(FULL, leaf);
            if (lane == 0) G.npc += __popc(ab);
            __syncwarp();
            while (lb) {
                const int src = __ffs(lb) - 1;
                lb &= lb - 1;
                const uint32_t b0 = __shfl_sync(FULL, child, src);
                const uint32_t cnt = __shfl_sync(FULL, c, src);
                for (uint32_t c0 = 0; c0 < cnt; c0 += 32) {
                    const uint32_t mcount = min(32u, cnt - c0);
                    if ((uint32_t)lane < mcount) pbuf[lane] = source_at(A, b0 + c0 + lane);
                    __syncwarp();
                    const uint32_t selfrel = G.self[lane] - (b0 + c0); /* GP_TREE_NONE: no match below 32 */
                    const bool safe = MODE == 2 || G.safe;
                    if (safe) sum_particles<MODE, true>(pbuf, mcount, selfrel, xi, yi, zi, eps2, acc);
                    else sum_particles<MODE, false>(pbuf, mcount, selfrel, xi, yi, zi, eps2, acc);
                    fold(acc);
                    __syncwarp();
                    if (lane == 0) G.npp += mcount;
                }
            }
            /* the accepted cells, 32 or more at a time, and the rest at the
             * end (one call site for the four loops) */
            if (ncl >= 32 || (top == 0 && ncl > 0)) {
                const bool safe = MODE == 2 || G.safe;
                if (A.quad) {
                    if (safe) flush_cells<MODE, true, true>(A.rec, A.ncells, clist, ncl, cbuf, xi, yi, zi, eps2, acc);
                    else flush_cells<MODE, true, false>(A.rec, A.ncells, clist, ncl, cbuf, xi, yi, zi, eps2, acc);
                } else {
                    if (safe) flush_cells<MODE, false, true>(A.rec, A.ncells, clist, ncl, cbuf, xi, yi, zi, eps2, acc);
                    else flush_cells<MODE, false, false>(A.rec, A.ncells, clist, ncl, cbuf, xi, yi, zi, eps2, acc);
                }
                fold(acc);
                ncl = 0;
            }
            __syncwarp();
        }
        __syncwarp();
        gp_d4 sum;
        if (MODE == 0) sum = gp_d4{acc.tx, acc.ty, acc.tz, acc.tp};
        else sum = gp_d4{dsum_s[wib][0][lane], dsum_s[wib][1][lane], dsum_s[wib][2][lane], dsum_s[wib][3][lane]};
        const uint32_t k = G.k0 + lane, nvalid = G.nvalid;
        if ((uint32_t)lane < nvalid) {
            if (parts > 1) {
                A.seg[(size_t)G.part * A.ni + k] = sum;
            } else {
                A.out[A.islot[k]] = sum;
                if (A.iorig && A.aold)
                    A.aold[A.iorig[k]] = (float)((double)A.G * sqrt(sum.x * sum.x + sum.y * sum.y + sum.z * sum.z));
            }
        }
        if (lane == 0) {
            atomicAdd(&A.counters[0], (unsigned long long)G.npp * nvalid);
            atomicAdd(&A.counters[1], (unsigned long long)G.npc * nvalid);
            if (G.overflow) atomicAdd(&A.counters[2], 1ull);
            /* what the warp iterated over, whatever its occupancy: the cost */
            atomicAdd(&A.counters[3], (unsigned long long)G.npp + G.npc);
        }
        __syncwarp(); /* G is rewritten by the next group */
    }
}

/* i-groups that respect the tree (GOTHIC 2.4's concern: a group should
 * not straddle distant regions). A group lives in one "group cell": the
 * coarsest tree cell holding at most `cell_max` particles (sources) that
 * contains the record, or the empty octant it falls in. Bounding the group
 * cell by its source count, not by the number of i-records, is what keeps a
 * sparse active subset cheap: 32 records spread over a big cell would open
 * everything near all of them (a walk close to N per group), whereas a few
 * records in a small cell cost one ordinary group walk. Records come in key
 * order, so a group cell's records are one run; runs are cut into groups of
 * at most GP_TREE_GROUP. group_cell_of names the cell by one 64-bit code:
 * a 1 bit above its key prefix, so cells of different levels differ (the
 * octant's prefix, one level down, for an empty octant; keys have 63 bits,
 * so the code fits at every level). */
__device__ __forceinline__ uint64_t group_cell_of(uint64_t key, const gp_cell *cells, const uint64_t *tkeys,
                                                  uint32_t cell_max)
{
    gp_cell c = cells[0];
    int level = 0;
    while (c.count > cell_max && c.nchild > 0) {
        const unsigned d = gp_key_digit(key, level);
        uint32_t next = 0xffffffffu;
        for (uint32_t j = 0; j < c.nchild; ++j)
            if (gp_key_digit(tkeys[cells[c.child + j].begin], level) == d) { next = c.child + j; break; }
        ++level;
        if (next == 0xffffffffu) break; /* an empty octant: a region of its own */
        c = cells[next];
    }
    return (UINT64_C(1) << (3 * level)) | gp_key_prefix(key, level);
}

/* Step 1: run starts. rkeys: the records' keys, rkeys[iself[k]] (records
 * that are tree particles) or rkeys[k] (iself NULL: field points, targets
 * outside a source subset); tkeys: the tree's sorted keys. Each record's
 * cell is found once; the previous record's comes from the lane below
 * (a warp's first lane finds it itself), so every lane reaches the
 * shuffle before any returns. */
__global__ void group_runs(const uint64_t *rkeys, const uint32_t *iself, uint32_t ni, const gp_cell *cells,
                           const uint64_t *tkeys, uint32_t cell_max, uint32_t *flag)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    const uint64_t code = k < ni ? group_cell_of(rkeys[iself ? iself[k] : k], cells, tkeys, cell_max) : 0;
    uint64_t prev = __shfl_up_sync(0xffffffffu, code, 1);
    if (k >= ni) return;
    if (k == 0) { flag[k] = 1; return; }
    if ((threadIdx.x & 31u) == 0) prev = group_cell_of(rkeys[iself ? iself[k - 1] : k - 1], cells, tkeys, cell_max);
    flag[k] = code != prev;
}
/* Step 2 (after an exclusive scan of flag into off): where each run starts. */
__global__ void group_run_starts(const uint32_t *flag, const uint32_t *off, uint32_t ni, uint32_t *runstart)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < ni && flag[k]) runstart[off[k]] = k;
}
/* Step 3: a group starts at a run start and every GP_TREE_GROUP inside a run. */
__global__ void group_flags(const uint32_t *flag, const uint32_t *off, const uint32_t *runstart, uint32_t ni,
                            uint32_t *gflag)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ni) return;
    const uint32_t run = off[k] + flag[k] - 1; /* inclusive count - 1 */
    gflag[k] = (k - runstart[run]) % GP_TREE_GROUP == 0;
}
/* Step 4 (after an exclusive scan of gflag into goff): gstart[g] = first k. */
__global__ void group_starts(const uint32_t *gflag, const uint32_t *goff, uint32_t ni, uint32_t ngroups,
                             uint32_t *gstart)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < ni && gflag[k]) gstart[goff[k]] = k;
    if (k == 0) gstart[ngroups] = ni;
}

/* ij-parallel walks: out[islot[k]] = the sum of the parts in part order
 * (fixed, so the bits do not depend on which warp finished first). */
__global__ void walk_reduce(gp_walk_args A)
{
    const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= A.ni) return;
    gp_d4 s = A.seg[k];
    for (uint32_t p = 1; p < A.parts; ++p) {
        gp_d4 v = A.seg[(size_t)p * A.ni + k];
        s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
    }
    A.out[A.islot[k]] = s;
    if (A.iorig && A.aold)
        A.aold[A.iorig[k]] = (float)((double)A.G * sqrt(s.x * s.x + s.y * s.y + s.z * s.z));
}

/* The cut's cells: level `level`, or leaves above it. */
__global__ void cut_flags(const gp_cell *cells, uint32_t level_end, uint32_t level, uint32_t *flags)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= level_end) return;
    gp_cell t = cells[c];
    flags[c] = t.level == level || (t.level < level && t.nchild == 0);
}

__global__ void cut_scatter(const gp_cell *cells, uint32_t level_end, const uint32_t *flags,
                            const uint32_t *offs, uint32_t *keys, uint32_t *ids)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= level_end || !flags[c]) return;
    keys[offs[c]] = cells[c].begin; /* disjoint cells: key order = order of begin */
    ids[offs[c]] = c;
}

#endif /* GP_CUDA_TREE_WALK_CUH */
