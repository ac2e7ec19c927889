/*
 * tree_dev.cu — the cuda-tree kernels. The per-element algorithms come from
 * plugin/core (keys.h, tree.h, moments.h, mac.h, kernels.h), compiled here
 * for the device through GP_HD; this file adds the GPU parts around them:
 *
 *   bounding box      block reductions (min/max: order-independent)
 *   keys              core/keys.h, one thread per particle
 *   sort              CUB DeviceRadixSort (stable)
 *   octree            core/tree.h count -> CUB scan -> split, one level per
 *                     launch, one thread per cell
 *   moments           core/moments.h, one level per launch, deepest first
 *   walk              GOTHIC 2.3: one warp per i-group of 32; the group's
 *                     enclosing sphere is the MAC's target; cells are taken
 *                     32 at a time off a per-warp stack, tested in parallel
 *                     (core/mac.h), accepted ones appended to a shared-memory
 *                     list flushed through the interaction kernel when it
 *                     holds 32, opened leaves summed particle by particle.
 *
 * Determinism: every sum for an i-particle is made by one lane in an order
 * fixed by the tree and the group (ballots and scans in lane order); the
 * only atomics hand out groups to warps and count interactions (integers).
 *
 * Particle-particle terms use rsqrtf (as cuda-direct) with the self term
 * skipped by index; cell terms use core/kernels.h (gp_quad_f/_d).
 */
#include "cuda-tree/tree_dev.h"
#include "core/keys.h"
#include "core/mac.h"
#include "core/kernels.h"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <float.h>
#include <type_traits>

#define WALK_WARPS 4
#define WALK_THREADS (WALK_WARPS * 32)
#define CLIST 64
#define FULL 0xffffffffu

static inline unsigned blocks_for(uint32_t n, unsigned t) { return (n + t - 1) / t; }

/* ---- bounding box ------------------------------------------------------ */

__global__ void bbox_partial(const double *pos, uint32_t n, double *part)
{
    __shared__ double s[6][256];
    double v[6] = {DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        for (int a = 0; a < 3; ++a) {
            double x = pos[3 * (size_t)i + a];
            v[a] = fmin(v[a], x);
            v[3 + a] = fmax(v[3 + a], x);
        }
    for (int a = 0; a < 6; ++a) s[a][threadIdx.x] = v[a];
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            for (int a = 0; a < 6; ++a)
                s[a][threadIdx.x] = a < 3 ? fmin(s[a][threadIdx.x], s[a][threadIdx.x + w])
                                          : fmax(s[a][threadIdx.x], s[a][threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int a = 0; a < 6; ++a) part[6 * blockIdx.x + a] = s[a][0];
}

__global__ void bbox_final(double *part, unsigned nblocks)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    for (unsigned b = 1; b < nblocks; ++b)
        for (int a = 0; a < 6; ++a)
            part[a] = a < 3 ? fmin(part[a], part[6 * b + a]) : fmax(part[a], part[6 * b + a]);
}

/* ---- keys, centre, gathers --------------------------------------------- */

__global__ void keys_kernel(const double *pos, uint32_t n, double lo0, double lo1, double lo2,
                            double inv_cell, uint64_t *keys, uint32_t *idx)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double lo[3] = {lo0, lo1, lo2};
    keys[i] = gp_key_of_position(GP_KEY_PEANO_HILBERT, pos[3 * (size_t)i], pos[3 * (size_t)i + 1],
                                 pos[3 * (size_t)i + 2], lo, inv_cell);
    if (idx) idx[i] = i;
}

__global__ void center_kernel(const double *pos, const uint32_t *perm, uint32_t n, double *center)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    uint32_t o = perm[n / 2];
    for (int a = 0; a < 3; ++a) center[a] = pos[3 * (size_t)o + a];
}

__global__ void gather_kernel(const double *pos, const double *mass, const uint32_t *perm, uint32_t n,
                              const double *center, double *x, double *y, double *z, double *m,
                              gp_f4 *f4, uint32_t *rank)
{
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    uint32_t o = perm[s];
    double px = pos[3 * (size_t)o] - center[0];
    double py = pos[3 * (size_t)o + 1] - center[1];
    double pz = pos[3 * (size_t)o + 2] - center[2];
    double pm = mass[o];
    x[s] = px; y[s] = py; z[s] = pz; m[s] = pm;
    f4[s] = gp_f4{(float)px, (float)py, (float)pz, (float)pm};
    if (rank) rank[o] = s;
}

/* ---- octree, level by level (core/tree.h) ------------------------------ */

__global__ void count_kernel(const uint64_t *keys, const gp_cell *cells, uint32_t b, uint32_t e,
                             uint32_t *counts)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (b + k >= e) return;
    counts[k] = gp_tree_count_children(keys, &cells[b + k], GP_TREE_LEAF_SIZE);
}

__global__ void total_kernel(const uint32_t *counts, const uint32_t *offsets, uint32_t count,
                             uint32_t *out)
{
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = offsets[count - 1] + counts[count - 1];
}

__global__ void split_kernel(const uint64_t *keys, gp_cell *cells, uint32_t b, uint32_t e,
                             const uint32_t *offsets)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (b + k >= e) return;
    uint32_t first = e + offsets[k];
    gp_tree_split_cell(keys, cells, b + k, GP_TREE_LEAF_SIZE, first, &cells[first]);
}

/* ---- moments and walk records ------------------------------------------ */

__global__ void moments_kernel(const double *x, const double *y, const double *z, const double *m,
                               const gp_cell *cells, uint32_t b, uint32_t e, gp_moments *mom)
{
    uint32_t c = b + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= e) return;
    gp_cell t = cells[c];
    gp_moments r;
    if (t.nchild == 0) gp_moments_leaf(x, y, z, m, t.begin, t.count, &r);
    else gp_moments_combine(&mom[t.child], t.nchild, &r);
    mom[c] = r;
}

__global__ void records_kernel(const gp_moments *mom, uint32_t ncells, int mac, double theta,
                               gp_wcell *rec)
{
    uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ncells) return;
    gp_moments mo = mom[c];
    double l = gp_moments_size(&mo);
    /* the acceleration MAC's per-cell part (M l^2) is formed in the walk;
     * rcrit holds bh's l / theta for groups without previous |a| */
    double rc = gp_mac_rcrit(mac == GP_MAC_ACCELERATION ? GP_MAC_BH : (gp_mac_kind)mac, theta, &mo);
    gp_wcell w;
    w.mc = gp_f4{(float)mo.com[0], (float)mo.com[1], (float)mo.com[2], (float)mo.m};
    w.sa = gp_f4{(float)mo.s[0], (float)mo.s[1], (float)mo.s[2], (float)mo.s[3]};
    w.sb = gp_f4{(float)mo.s[4], (float)mo.s[5], (float)rc, (float)l};
    float lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        double pad = GP_MAC_BOX_MARGIN * (mo.hi[a] - mo.lo[a]);
        /* round outwards so float never shrinks the box */
        lo[a] = __double2float_rd(mo.lo[a] - pad);
        hi[a] = __double2float_ru(mo.hi[a] + pad);
    }
    w.lo = gp_f4{lo[0], lo[1], lo[2], 0.f};
    w.hi = gp_f4{hi[0], hi[1], hi[2], 0.f};
    rec[c] = w;
}

/* ---- i-records --------------------------------------------------------- */

__global__ void irec_forces_kernel(const gp_f4 *f4, const uint32_t *perm, const float *aold,
                                   const uint32_t *ilist, const uint32_t *slot, uint32_t ni,
                                   gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                                   float *iaold)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ni) return;
    uint32_t s = ilist ? ilist[k] : k;
    uint32_t o = perm[s];
    gp_f4 p = f4[s];
    ipos[k] = gp_f4{p.x, p.y, p.z, 0.f};
    islot[k] = slot ? slot[k] : o;
    iself[k] = s;
    iorig[k] = o;
    iaold[k] = aold[o];
}

__global__ void active_keys_kernel(const uint32_t *index, const uint32_t *rank, uint32_t ni,
                                   uint32_t *key, uint32_t *val)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ni) return;
    key[k] = rank[index[k]];
    val[k] = k;
}

__global__ void irec_field_kernel(const double *pts, const uint32_t *order, uint32_t m,
                                  const double *center, gp_f4 *ipos, uint32_t *islot)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    uint32_t o = order[k];
    ipos[k] = gp_f4{(float)(pts[3 * (size_t)o] - center[0]), (float)(pts[3 * (size_t)o + 1] - center[1]),
                    (float)(pts[3 * (size_t)o + 2] - center[2]), 0.f};
    islot[k] = o;
}

/* ---- the walk ---------------------------------------------------------- */

template <typename P> struct Acc {
    P tx, ty, tz, tp;       /* current block (float in single/mixed)     */
    double bx, by, bz, bp;  /* blocked double sums (mixed, double)       */
};

/* Folds the block's partial sum into the double accumulator (Chamomile's
 * blocked accumulation). single keeps one float sum: no folding. */
template <int MODE, typename P>
__device__ __forceinline__ void fold(Acc<P> &a)
{
    if (MODE != 0) {
        a.bx += (double)a.tx; a.by += (double)a.ty; a.bz += (double)a.tz; a.bp += (double)a.tp;
        a.tx = a.ty = a.tz = a.tp = P(0);
    }
}

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

/* Sums the accepted cells in list[0..n) into every lane's accumulator. */
template <int MODE, typename P>
__device__ __forceinline__ void flush_cells(const gp_wcell *rec, const uint32_t *list, uint32_t n,
                                            int quad, P xi, P yi, P zi, P eps2, Acc<P> &a)
{
    for (uint32_t e = 0; e < n; ++e) {
        const gp_wcell *w = &rec[list[e]];
        gp_f4 mc = w->mc;
        P dx = (P)mc.x - xi, dy = (P)mc.y - yi, dz = (P)mc.z - zi;
        P ax, ay, az, phi;
        if (quad) {
            gp_f4 sa = w->sa, sb = w->sb;
            P s[6] = {(P)sa.x, (P)sa.y, (P)sa.z, (P)sa.w, (P)sb.x, (P)sb.y};
            if (MODE == 2) gp_quad_d(dx, dy, dz, (P)mc.w, (const double *)(const void *)s, eps2,
                                     (double *)(void *)&ax, (double *)(void *)&ay,
                                     (double *)(void *)&az, (double *)(void *)&phi);
            else gp_quad_f(dx, dy, dz, (P)mc.w, (const float *)(const void *)s, eps2,
                           (float *)(void *)&ax, (float *)(void *)&ay,
                           (float *)(void *)&az, (float *)(void *)&phi);
        } else {
            P r2 = dx * dx + dy * dy + dz * dz + eps2;
            P rinv = MODE == 2 ? P(1) / sqrt(r2) : (P)rsqrtf((float)r2);
            rinv = r2 > P(0) ? rinv : P(0);
            P mr = (P)mc.w * rinv, mr3 = mr * rinv * rinv;
            ax = mr3 * dx; ay = mr3 * dy; az = mr3 * dz; phi = -mr;
        }
        a.tx += ax; a.ty += ay; a.tz += az; a.tp -= phi;
    }
    fold<MODE>(a);
}

template <int MODE>
__global__ void __launch_bounds__(WALK_THREADS)
walk_kernel(gp_walk_args A)
{
    typedef typename std::conditional<MODE == 2, double, float>::type P;
    __shared__ uint32_t clist_s[WALK_WARPS][CLIST];
    __shared__ gp_f4 pbuf_s[WALK_WARPS][32];
    const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    uint32_t *clist = clist_s[wib];
    gp_f4 *pbuf = pbuf_s[wib];
    const uint32_t slot = blockIdx.x * WALK_WARPS + wib;
    uint32_t *stack = A.stacks + (size_t)slot * GP_TREE_STACK;
    const uint32_t ngroups = (A.ni + GP_TREE_GROUP - 1) / GP_TREE_GROUP;
    const unsigned lt_mask = (1u << lane) - 1u;
    const P eps2 = (P)A.eps2;

    for (;;) {
        uint32_t g = 0;
        if (lane == 0) g = atomicAdd(A.next_group, 1u);
        g = __shfl_sync(FULL, g, 0);
        if (g >= ngroups) break;

        const uint32_t k0 = g * GP_TREE_GROUP, k = k0 + lane;
        const bool valid = k < A.ni;
        const uint32_t nvalid = min(GP_TREE_GROUP, A.ni - k0);
        gp_f4 me = A.ipos[valid ? k : k0];
        const uint32_t self = valid && A.iself ? A.iself[k] : GP_TREE_NONE;

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
        const float alpha = A.delta_acc * amin;

        Acc<P> acc;
        acc.tx = acc.ty = acc.tz = acc.tp = P(0);
        acc.bx = acc.by = acc.bz = acc.bp = 0.0;
        const P xi = (P)me.x, yi = (P)me.y, zi = (P)me.z;
        unsigned long long npp = 0, npc = 0;
        uint32_t ncl = 0, top = 1;
        if (lane == 0) stack[0] = 0; /* the root */
        __syncwarp();
        bool overflow = false;

        while (top > 0) {
            const uint32_t take = min(32u, top), base = top - take;
            const bool has = (uint32_t)lane < take;
            const uint32_t c = has ? stack[base + lane] : 0u;
            top = base;
            __syncwarp();
            bool accept = false, leaf = false;
            uint32_t nch = 0, child = 0, pbegin = 0, pcount = 0;
            if (has) {
                gp_cell t = A.cells[c];
                const gp_wcell *w = &A.rec[c];
                gp_f4 mc = w->mc, sb = w->sb, lo = w->lo, hi = w->hi;
                float ex = fmaxf(fmaxf(lo.x - gx, gx - hi.x), 0.f);
                float ey = fmaxf(fmaxf(lo.y - gy, gy - hi.y), 0.f);
                float ez = fmaxf(fmaxf(lo.z - gz, gz - hi.z), 0.f);
                bool clear = ex * ex + ey * ey + ez * ez > rg * rg;
                float rc = use_accel ? sqrtf(sqrtf(A.G * mc.w * sb.w * sb.w / alpha)) : sb.z;
                float dx = mc.x - gx, dy = mc.y - gy, dz = mc.z - gz;
                float r = rc + rg;
                accept = clear && r * r < dx * dx + dy * dy + dz * dz;
                leaf = !accept && t.nchild == 0;
                nch = (!accept && !leaf) ? t.nchild : 0u;
                child = t.child;
                pbegin = t.begin;
                pcount = t.count;
            }
            /* accepted cells -> the shared list, in lane order */
            unsigned ab = __ballot_sync(FULL, accept);
            if (accept) clist[ncl + __popc(ab & lt_mask)] = c;
            ncl += __popc(ab);
            npc += (unsigned long long)__popc(ab) * nvalid;
            __syncwarp();
            if (ncl >= 32) {
                flush_cells<MODE>(A.rec, clist, ncl, A.quad, xi, yi, zi, eps2, acc);
                ncl = 0;
                __syncwarp();
            }
            /* opened internal cells -> children onto the stack, lane order */
            uint32_t incl = nch;
            for (int o = 1; o < 32; o <<= 1) {
                uint32_t v = __shfl_up_sync(FULL, incl, o);
                if (lane >= o) incl += v;
            }
            const uint32_t total = __shfl_sync(FULL, incl, 31);
            if (top + total > GP_TREE_STACK) { overflow = true; break; }
            for (uint32_t t = 0; t < nch; ++t) stack[top + incl - nch + t] = child + t;
            top += total;
            __syncwarp();
            /* opened leaves: their particles, leaf by leaf in lane order */
            unsigned lb = __ballot_sync(FULL, leaf);
            while (lb) {
                const int src = __ffs(lb) - 1;
                lb &= lb - 1;
                const uint32_t b0 = __shfl_sync(FULL, pbegin, src);
                const uint32_t cnt = __shfl_sync(FULL, pcount, src);
                for (uint32_t c0 = 0; c0 < cnt; c0 += 32) {
                    const uint32_t mcount = min(32u, cnt - c0);
                    if ((uint32_t)lane < mcount) pbuf[lane] = A.ppos[b0 + c0 + lane];
                    __syncwarp();
                    for (uint32_t j = 0; j < mcount; ++j) {
                        gp_f4 q = pbuf[j];
                        P dx = (P)q.x - xi, dy = (P)q.y - yi, dz = (P)q.z - zi;
                        P r2 = dx * dx + dy * dy + dz * dz + eps2;
                        P rinv = MODE == 2 ? P(1) / sqrt(r2) : (P)rsqrtf((float)r2);
                        rinv = (r2 > P(0) && b0 + c0 + j != self) ? rinv : P(0);
                        P mr = (P)q.w * rinv, mr3 = mr * rinv * rinv;
                        acc.tx += mr3 * dx; acc.ty += mr3 * dy; acc.tz += mr3 * dz; acc.tp += mr;
                    }
                    fold<MODE>(acc);
                    npp += (unsigned long long)mcount * nvalid;
                    __syncwarp();
                }
            }
        }
        if (ncl > 0 && !overflow) flush_cells<MODE>(A.rec, clist, ncl, A.quad, xi, yi, zi, eps2, acc);
        __syncwarp();
        if (MODE == 0) { acc.bx = acc.tx; acc.by = acc.ty; acc.bz = acc.tz; acc.bp = acc.tp; }
        if (valid) {
            A.out[A.islot[k]] = gp_d4{acc.bx, acc.by, acc.bz, acc.bp};
            if (A.iorig && A.aold)
                A.aold[A.iorig[k]] = (float)((double)A.G * sqrt(acc.bx * acc.bx + acc.by * acc.by + acc.bz * acc.bz));
        }
        if (lane == 0) {
            atomicAdd(&A.counters[0], npp);
            atomicAdd(&A.counters[1], npc);
            if (overflow) atomicAdd(&A.counters[2], 1ull);
        }
    }
}

/* ---- extern "C" launchers ---------------------------------------------- */

#define CHECK_LAUNCH() return (int)cudaGetLastError()

extern "C" {

int gp_tree_probe(void)
{
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, walk_kernel<1>);
}

int gp_tree_bbox(const double *pos, uint32_t n, double *scratch, double *box_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    unsigned nb = blocks_for(n, 256);
    if (nb > 1024) nb = 1024;
    if (nb < 1) nb = 1;
    bbox_partial<<<nb, 256, 0, st>>>(pos, n, scratch);
    bbox_final<<<1, 1, 0, st>>>(scratch, nb);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(box_host, scratch, 6 * sizeof(double), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return (int)e;
}

int gp_tree_keys(const double *pos, uint32_t n, double lo0, double lo1, double lo2, double inv_cell,
                 uint64_t *keys, uint32_t *idx, void *stream)
{
    if (n == 0) return 0;
    keys_kernel<<<blocks_for(n, 256), 256, 0, (cudaStream_t)stream>>>(pos, n, lo0, lo1, lo2, inv_cell, keys, idx);
    CHECK_LAUNCH();
}

int gp_tree_sort64(void *tmp, size_t *tmp_bytes, const uint64_t *kin, uint64_t *kout,
                   const uint32_t *vin, uint32_t *vout, uint32_t n, void *stream)
{
    return (int)cub::DeviceRadixSort::SortPairs(tmp, *tmp_bytes, kin, kout, vin, vout, (int)n, 0, 63,
                                                (cudaStream_t)stream);
}

int gp_tree_sort32(void *tmp, size_t *tmp_bytes, const uint32_t *kin, uint32_t *kout,
                   const uint32_t *vin, uint32_t *vout, uint32_t n, int end_bit, void *stream)
{
    return (int)cub::DeviceRadixSort::SortPairs(tmp, *tmp_bytes, kin, kout, vin, vout, (int)n, 0, end_bit,
                                                (cudaStream_t)stream);
}

int gp_tree_scan(void *tmp, size_t *tmp_bytes, const uint32_t *in, uint32_t *out, uint32_t n, void *stream)
{
    return (int)cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, in, out, (int)n, (cudaStream_t)stream);
}

int gp_tree_set_center(const double *pos, const uint32_t *perm, uint32_t n, double *center, void *stream)
{
    center_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(pos, perm, n, center);
    CHECK_LAUNCH();
}

int gp_tree_gather(const double *pos, const double *mass, const uint32_t *perm, uint32_t n,
                   const double *center, double *x, double *y, double *z, double *m,
                   gp_f4 *f4, uint32_t *rank, void *stream)
{
    if (n == 0) return 0;
    gather_kernel<<<blocks_for(n, 256), 256, 0, (cudaStream_t)stream>>>(pos, mass, perm, n, center, x, y, z, m, f4, rank);
    CHECK_LAUNCH();
}

int gp_tree_count(const uint64_t *keys, const gp_cell *cells, uint32_t b, uint32_t e,
                  uint32_t *counts, void *stream)
{
    if (e <= b) return 0;
    count_kernel<<<blocks_for(e - b, 128), 128, 0, (cudaStream_t)stream>>>(keys, cells, b, e, counts);
    CHECK_LAUNCH();
}

int gp_tree_total(const uint32_t *counts, const uint32_t *offsets, uint32_t count,
                  uint32_t *scratch, uint32_t *total_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    total_kernel<<<1, 1, 0, st>>>(counts, offsets, count, scratch);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(total_host, scratch, sizeof(uint32_t), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return (int)e;
}

int gp_tree_split(const uint64_t *keys, gp_cell *cells, uint32_t b, uint32_t e,
                  const uint32_t *offsets, void *stream)
{
    if (e <= b) return 0;
    split_kernel<<<blocks_for(e - b, 128), 128, 0, (cudaStream_t)stream>>>(keys, cells, b, e, offsets);
    CHECK_LAUNCH();
}

int gp_tree_moments(const double *x, const double *y, const double *z, const double *m,
                    const gp_cell *cells, uint32_t b, uint32_t e, gp_moments *mom, void *stream)
{
    if (e <= b) return 0;
    moments_kernel<<<blocks_for(e - b, 128), 128, 0, (cudaStream_t)stream>>>(x, y, z, m, cells, b, e, mom);
    CHECK_LAUNCH();
}

int gp_tree_records(const gp_moments *mom, uint32_t ncells, int mac, double theta, gp_wcell *rec, void *stream)
{
    if (ncells == 0) return 0;
    records_kernel<<<blocks_for(ncells, 128), 128, 0, (cudaStream_t)stream>>>(mom, ncells, mac, theta, rec);
    CHECK_LAUNCH();
}

int gp_tree_irecords_forces(const gp_f4 *f4, const uint32_t *perm, const float *aold,
                            const uint32_t *ilist, const uint32_t *slot, uint32_t ni,
                            gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                            float *iaold, void *stream)
{
    if (ni == 0) return 0;
    irec_forces_kernel<<<blocks_for(ni, 256), 256, 0, (cudaStream_t)stream>>>(f4, perm, aold, ilist, slot, ni,
                                                                             ipos, islot, iself, iorig, iaold);
    CHECK_LAUNCH();
}

int gp_tree_active_keys(const uint32_t *index, const uint32_t *rank, uint32_t ni,
                        uint32_t *key, uint32_t *val, void *stream)
{
    if (ni == 0) return 0;
    active_keys_kernel<<<blocks_for(ni, 256), 256, 0, (cudaStream_t)stream>>>(index, rank, ni, key, val);
    CHECK_LAUNCH();
}

int gp_tree_irecords_field(const double *points, const uint32_t *order, uint32_t m,
                           const double *center, gp_f4 *ipos, uint32_t *islot, void *stream)
{
    if (m == 0) return 0;
    irec_field_kernel<<<blocks_for(m, 256), 256, 0, (cudaStream_t)stream>>>(points, order, m, center, ipos, islot);
    CHECK_LAUNCH();
}

static const void *walk_fn(int mode)
{
    return mode == 0 ? (const void *)walk_kernel<0> : mode == 1 ? (const void *)walk_kernel<1>
                                                              : (const void *)walk_kernel<2>;
}

int gp_tree_walk_slots(int mode, uint32_t *slots)
{
    int dev = 0, sms = 0, per_sm = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, walk_fn(mode), WALK_THREADS, 0);
    if (e != cudaSuccess) return (int)e;
    if (per_sm < 1) per_sm = 1;
    *slots = (uint32_t)sms * (uint32_t)per_sm * WALK_WARPS;
    return 0;
}

int gp_tree_walk(const gp_walk_args *a, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (a->ni == 0) return 0;
    cudaError_t e = cudaMemsetAsync(a->next_group, 0, sizeof(uint32_t), st);
    if (e != cudaSuccess) return (int)e;
    uint32_t ngroups = (a->ni + GP_TREE_GROUP - 1) / GP_TREE_GROUP;
    uint32_t blocks = (a->warp_slots + WALK_WARPS - 1) / WALK_WARPS;
    uint32_t need = (ngroups + WALK_WARPS - 1) / WALK_WARPS;
    if (need < blocks) blocks = need;
    if (blocks < 1) blocks = 1;
    if (a->mode == 0) walk_kernel<0><<<blocks, WALK_THREADS, 0, st>>>(*a);
    else if (a->mode == 1) walk_kernel<1><<<blocks, WALK_THREADS, 0, st>>>(*a);
    else walk_kernel<2><<<blocks, WALK_THREADS, 0, st>>>(*a);
    CHECK_LAUNCH();
}

} /* extern "C" */
