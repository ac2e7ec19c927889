/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree_dev.cu — the cuda-tree kernels. The per-element algorithms come from
 * plugin/octree (tree.h, moments.h, mac.h, kernels.h), compiled here
 * for the device through GP_HD; this file adds the GPU parts around them:
 *
 *   bounding box      block reductions (min/max: order-independent)
 *   keys              gravplug_keys.h (abi/), one thread per particle
 *   sort              CUB DeviceRadixSort (stable)
 *   octree            octree/tree.h count -> CUB scan -> split, one level per
 *                     launch, one thread per cell
 *   moments           octree/moments.h, one level per launch, deepest first
 *   walk              GOTHIC 2.3: one warp per i-group of 32; the group's
 *                     enclosing sphere is the MAC's target; cells are taken
 *                     32 at a time off a per-warp stack, tested in parallel
 *                     (octree/mac.h), accepted ones appended to a shared-memory
 *                     list flushed through the interaction kernel when it
 *                     holds 32, opened leaves summed particle by particle.
 *
 * Determinism: every sum for an i-particle is made by one lane in an order
 * fixed by the tree and the group (ballots and scans in lane order); the
 * only atomics hand out groups to warps and count interactions (integers).
 *
 * Particle-particle terms use rsqrtf (as cuda-direct) with the self term
 * skipped by index; cell terms use rsqrtf too, on a factored form of
 * octree/kernels.h's quadrupole (walk.cuh quad_rsqrt_add), in double in
 * MODE 2 and for pairs beyond float.
 */
#include "cuda-base/launch.cuh"
#ifdef GP_CUDA_EMULATE
/* The test build: CUB's sorts and scans emulated on the CPU too. */
#  include "gpu-emu-cub.h"
#else
#  include <cub/device/device_radix_sort.cuh>
#  include <cub/device/device_scan.cuh>
#endif
#include <float.h>
#include <type_traits>

#include "cuda-tree/tree_dev.h"
#include "gravplug_keys.h"
#include "octree/mac.h"
#include "octree/kernels.h"
#include "octree/drift_kin.h"
#include "cuda-tree/walk.cuh"
#include "cuda-base/state_dev.cuh"


static inline unsigned blocks_for(uint32_t n, unsigned t) { return (n + t - 1) / t; }

/* ---- bounding box ------------------------------------------------------ */

__global__ void bbox_partial(const double *pos, const uint32_t *src, uint32_t n, double *part)
{
    __shared__ double s[6][256];
    double v[6] = {DBL_MAX, DBL_MAX, DBL_MAX, -DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        for (int a = 0; a < 3; ++a) {
            double x = pos[3 * (size_t)(src ? src[i] : i) + a];
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

/* keys[i] = key of particle o = sel ? sel[i] : i in the root cube (lo0..2,
 * inv_cell); out[i] = i when out_rank, else o (out may be NULL). */
__global__ void keys_kernel(const double *pos, const uint32_t *sel, uint32_t n, double lo0, double lo1,
                            double lo2, double inv_cell, uint64_t *keys, uint32_t *out, int out_rank)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    size_t o = sel ? sel[i] : i;
    const double lo[3] = {lo0, lo1, lo2};
    keys[i] = gp_key_of_position(GP_KEY_PEANO_HILBERT, pos[3 * o], pos[3 * o + 1], pos[3 * o + 2], lo, inv_cell);
    if (out) out[i] = out_rank ? i : (uint32_t)o;
}

/* |x - center| (max norm) of `count` particles spread evenly over the n
 * tree particles: the host takes their median as the length scale */
__global__ void sample_kernel(const double *pos, const uint32_t *perm, uint32_t n, uint32_t count,
                              const double *center, double *out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    size_t o = perm[(uint32_t)((uint64_t)k * n / count)];
    double d = 0;
    for (int a = 0; a < 3; ++a) d = fmax(d, fabs(pos[3 * o + a] - center[a]));
    out[k] = d;
}

__global__ void center_kernel(const double *pos, const uint32_t *perm, uint32_t n, double *center)
{
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    uint32_t o = perm[n / 2];
    for (int a = 0; a < 3; ++a) center[a] = pos[3 * (size_t)o + a];
}

__global__ void gather_kernel(const double *pos, const double *mass, const uint32_t *perm, uint32_t n,
                              const double *center, double inv_len, double inv_mass, double *x, double *y,
                              double *z, double *m, gp_f4 *f4, uint32_t *rank)
{
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    uint32_t o = perm[s];
    /* scales are powers of two: exact, and 1 for ordinary data */
    double px = (pos[3 * (size_t)o] - center[0]) * inv_len;
    double py = (pos[3 * (size_t)o + 1] - center[1]) * inv_len;
    double pz = (pos[3 * (size_t)o + 2] - center[2]) * inv_len;
    double pm = mass[o] * inv_mass;
    x[s] = px; y[s] = py; z[s] = pz; m[s] = pm;
    f4[s] = gp_f4{(float)px, (float)py, (float)pz, (float)pm};
    if (rank) rank[o] = s;
}

/* ---- octree, level by level (octree/tree.h) ------------------------------ */

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

__global__ void records_kernel(const gp_moments *mom, const gp_cell *cells, uint32_t ncells, int mac, double theta,
                               gp_f4 *rec)
{
    uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ncells) return;
    gp_moments mo = mom[c];
    gp_cell t = cells[c];
    gp_wcell w = gp_wcell_make(&mo, mac, theta);
    gp_wrec_store(rec, ncells, c, &w, &t);
}

/* ---- the drifted tree (octree/drift_kin.h) ------------------------------ */

/* Particle o's path re-expanded about t0, in the walk's units: c1 the
 * velocity, c2 = a/2, c3 = j/6 at t0 (zero for a particle with no state,
 * which predict leaves where it is). */
__device__ static inline void drift_cubic(const gp_state_dev_ptrs &S, uint32_t o, double t0, double inv_len,
                                          gp_f4 &c1, gp_f4 &c2, gp_f4 &c3)
{
    c1 = c2 = c3 = gp_f4{0.f, 0.f, 0.f, 0.f};
    if (!S.flag[o]) return;
    const double dt = t0 - S.t[o];
    const int third = S.third[o] != 0;
    float q[3][3];
    for (int a = 0; a < 3; ++a) {
        const size_t c = 3 * (size_t)o + a;
        const double j = third ? S.jerk[c] : 0.0;
        const double v = third ? gp_predict_vel3(S.vel[c], S.acc[c], j, dt) : gp_predict_vel2(S.vel[c], S.acc[c], dt);
        q[0][a] = (float)(v * inv_len);
        q[1][a] = (float)(0.5 * (S.acc[c] + j * dt) * inv_len);
        q[2][a] = (float)(j / 6.0 * inv_len);
    }
    c1 = gp_f4{q[0][0], q[0][1], q[0][2], 0.f};
    c2 = gp_f4{q[1][0], q[1][1], q[1][2], 0.f};
    c3 = gp_f4{q[2][0], q[2][1], q[2][2], 0.f};
}

__global__ void drift_sources_kernel(const uint32_t *perm, uint32_t n, gp_state_dev_ptrs S, double t0, double inv_len,
                                     gp_f4 *cub)
{
    uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    drift_cubic(S, perm[s], t0, inv_len, cub[s], cub[n + s], cub[2 * (size_t)n + s]);
}

/* A new state of particle index[k]: its position at t0 and its cubic, and
 * its cells, the leaf up to the root, marked with epoch. A thread that
 * meets a cell marked in this epoch stops: the thread that marked it marks
 * the cells above. */
__global__ void drift_update_kernel(const uint32_t *index, uint32_t n_sub, const uint32_t *rank, gp_state_dev_ptrs S,
                                    double t0, const double *center, double inv_len, uint32_t n, double *x,
                                    double *y, double *z, gp_f4 *f4, gp_f4 *cub, const gp_cell *cells,
                                    const uint32_t *leaf_of, uint32_t *mark, uint32_t epoch)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    const uint32_t o = index[k], s = rank[o];
    if (s >= n) return;
    const double dt = t0 - S.t[o];
    double p[3];
    for (int a = 0; a < 3; ++a) p[a] = (gp_state_predict_one(S, o, a, dt) - center[a]) * inv_len;
    x[s] = p[0]; y[s] = p[1]; z[s] = p[2];
    f4[s] = gp_f4{(float)p[0], (float)p[1], (float)p[2], f4[s].w};
    drift_cubic(S, o, t0, inv_len, cub[s], cub[n + s], cub[2 * (size_t)n + s]);
    for (uint32_t c = leaf_of[s];; c = cells[c].parent) {
        if (mark[c] == epoch) break;
        mark[c] = epoch;
        if (c == 0) break;
    }
}

__device__ static inline void f4_xyz(gp_f4 v, double out[3])
{
    out[0] = v.x; out[1] = v.y; out[2] = v.z;
}

/* Cells [b, e) of one level, deeper levels done first: each cell's motion
 * from its sources (a leaf, which also names itself their leaf) or its
 * children. With mark: only the cells marked after epoch `clean`, their
 * moments made again first (from the sources' positions at t0). */
__global__ void drift_cells_kernel(const double *x, const double *y, const double *z, const double *m,
                                   const gp_cell *cells, uint32_t b, uint32_t e, const gp_f4 *cub, uint32_t n,
                                   gp_moments *mom, gp_drift_kin *kin, uint32_t *leaf_of, const uint32_t *mark,
                                   uint32_t clean)
{
    uint32_t c = b + blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= e) return;
    if (mark && mark[c] <= clean) return;
    const gp_cell t = cells[c];
    if (mark) {
        gp_moments r;
        if (t.nchild == 0) gp_moments_leaf(x, y, z, m, t.begin, t.count, &r);
        else gp_moments_combine(&mom[t.child], t.nchild, &r);
        mom[c] = r;
    }
    gp_drift_kin K;
    gp_drift_kin_zero(&K);
    double M = 0, c1[3], c2[3], c3[3];
    if (t.nchild == 0) {
        for (uint32_t k = t.begin; k < t.begin + t.count; ++k) {
            leaf_of[k] = c;
            f4_xyz(cub[k], c1); f4_xyz(cub[n + k], c2); f4_xyz(cub[2 * (size_t)n + k], c3);
            M += m[k];
            gp_drift_kin_add(&K, m[k], c1, c2, c3);
        }
        gp_drift_kin_mean(&K, M);
        for (uint32_t k = t.begin; k < t.begin + t.count; ++k) {
            f4_xyz(cub[k], c1); f4_xyz(cub[n + k], c2); f4_xyz(cub[2 * (size_t)n + k], c3);
            gp_drift_kin_bound_source(&K, c1, c2, c3);
        }
    } else {
        for (uint32_t h = t.child; h < t.child + t.nchild; ++h) {
            M += mom[h].m;
            gp_drift_kin_add(&K, mom[h].m, kin[h].u, kin[h].A, kin[h].J);
        }
        gp_drift_kin_mean(&K, M);
        for (uint32_t h = t.child; h < t.child + t.nchild; ++h) gp_drift_kin_bound_child(&K, &kin[h]);
    }
    kin[c] = K;
}

/* Walk records of the anchor's cells moved tau ahead. */
__global__ void drift_records_kernel(const gp_moments *mom, const gp_drift_kin *kin, const gp_cell *cells,
                                     uint32_t ncells, double tau, int mac, double theta, gp_f4 *rec)
{
    uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= ncells) return;
    gp_moments mo = mom[c];
    gp_drift_moments_at(&mo, &kin[c], tau);
    gp_cell t = cells[c];
    gp_wcell w = gp_wcell_make(&mo, mac, theta);
    gp_wrec_store(rec, ncells, c, &w, &t);
}

/* ---- i-records --------------------------------------------------------- */

__global__ void scale_exp_kernel(float *a, uint32_t n, int e)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) a[k] = ldexpf(a[k], e);
}

/* |a_old| of particle o (gp_aold_state): the last call's, else the held
 * state's in the walk's units, else 0 (the walk then uses bh) */
__device__ static inline float aold_of(const float *aold, gp_aold_state as, uint32_t o)
{
    float a = aold[o];
    if (a > 0.f || !as.acc || !as.flag || !as.flag[o]) return a;
    const double *q = as.acc + 3 * (size_t)o;
    double m = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) * as.afac;
    return m > 0 && m < (double)FLT_MAX ? (float)m : 0.f;
}

__global__ void irec_forces_kernel(const gp_f4 *f4, const uint32_t *perm, const float *aold,
                                   gp_aold_state as, const uint32_t *ilist, const uint32_t *slot, uint32_t ni,
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
    iaold[k] = aold_of(aold, as, o);
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
                                  const double *center, double inv_len, gp_f4 *ipos, uint32_t *islot)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    uint32_t o = order[k];
    ipos[k] = gp_f4{(float)((pts[3 * (size_t)o] - center[0]) * inv_len),
                    (float)((pts[3 * (size_t)o + 1] - center[1]) * inv_len),
                    (float)((pts[3 * (size_t)o + 2] - center[2]) * inv_len), 0.f};
    islot[k] = o;
}

/* i-records of active particles that need not be in the tree (a source
 * subset): k-th in key order is active entry j = order[k], particle o */
__global__ void irec_any_kernel(const double *pos, const uint32_t *active, const uint32_t *order, uint32_t m,
                                const double *center, double inv_len, const uint32_t *rank, const float *aold,
                                gp_aold_state as, gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                                float *iaold)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    uint32_t j = order[k];
    uint32_t o = active ? active[j] : j;
    ipos[k] = gp_f4{(float)((pos[3 * (size_t)o] - center[0]) * inv_len),
                    (float)((pos[3 * (size_t)o + 1] - center[1]) * inv_len),
                    (float)((pos[3 * (size_t)o + 2] - center[2]) * inv_len), 0.f};
    islot[k] = j;
    iself[k] = rank[o]; /* GP_TREE_NONE when o is not a source */
    iorig[k] = o;
    iaold[k] = aold_of(aold, as, o);
}

/* ---- extern "C" launchers ---------------------------------------------- */

#define CHECK_LAUNCH() return (int)cudaGetLastError()
#define WALK_GROUP 32 /* the walk synchronises warps only */

extern "C" {

int gp_tree_probe(void)
{
    cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, (const void *)walk_kernel<1>);
}

int gp_tree_bbox(const double *pos, const uint32_t *src, uint32_t n, double *scratch, double *box_host,
                 void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    unsigned nb = blocks_for(n, 256);
    if (nb > 1024) nb = 1024;
    if (nb < 1) nb = 1;
    GP_LAUNCH(bbox_partial, nb, 256, 256, st, pos, src, n, scratch);
    GP_LAUNCH(bbox_final, 1, 1, 1, st, scratch, nb);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(box_host, scratch, 6 * sizeof(double), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return (int)e;
}

int gp_tree_keys(const double *pos, const uint32_t *sel, uint32_t n, double lo0, double lo1, double lo2,
                 double inv_cell, uint64_t *keys, uint32_t *out, int out_rank, void *stream)
{
    if (n == 0) return 0;
    GP_LAUNCH(keys_kernel, blocks_for(n, 256), 256, 256, (cudaStream_t)stream, pos, sel, n, lo0, lo1, lo2, inv_cell,
              keys, out, out_rank);
    CHECK_LAUNCH();
}

int gp_tree_sample(const double *pos, const uint32_t *perm, uint32_t n, uint32_t count, const double *center,
                   double *out, double *out_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (count == 0) return 0;
    GP_LAUNCH(sample_kernel, blocks_for(count, 256), 256, 256, st, pos, perm, n, count, center, out);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(out_host, out, count * sizeof(double), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return (int)e;
}

int gp_tree_scale_exp(float *a, uint32_t n, int e, void *stream)
{
    if (n == 0 || e == 0) return 0;
    GP_LAUNCH(scale_exp_kernel, blocks_for(n, 256), 256, 256, (cudaStream_t)stream, a, n, e);
    CHECK_LAUNCH();
}

int gp_tree_irecords_any(const double *pos, const uint32_t *active, const uint32_t *order, uint32_t m,
                         const double *center, double inv_len, const uint32_t *rank, const float *aold,
                         const gp_aold_state *as, gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                         float *iaold, void *stream)
{
    if (m == 0) return 0;
    GP_LAUNCH(irec_any_kernel, blocks_for(m, 256), 256, 256, (cudaStream_t)stream, pos, active, order, m, center,
              inv_len, rank, aold, *as, ipos, islot, iself, iorig, iaold);
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
    GP_LAUNCH(center_kernel, 1, 1, 1, (cudaStream_t)stream, pos, perm, n, center);
    CHECK_LAUNCH();
}

int gp_tree_gather(const double *pos, const double *mass, const uint32_t *perm, uint32_t n,
                   const double *center, double inv_len, double inv_mass, double *x, double *y, double *z,
                   double *m, gp_f4 *f4, uint32_t *rank, void *stream)
{
    if (n == 0) return 0;
    GP_LAUNCH(gather_kernel, blocks_for(n, 256), 256, 256, (cudaStream_t)stream, pos, mass, perm, n, center, inv_len,
              inv_mass, x, y, z, m, f4, rank);
    CHECK_LAUNCH();
}

int gp_tree_count(const uint64_t *keys, const gp_cell *cells, uint32_t b, uint32_t e,
                  uint32_t *counts, void *stream)
{
    if (e <= b) return 0;
    GP_LAUNCH(count_kernel, blocks_for(e - b, 128), 128, 128, (cudaStream_t)stream, keys, cells, b, e, counts);
    CHECK_LAUNCH();
}

int gp_tree_total(const uint32_t *counts, const uint32_t *offsets, uint32_t count,
                  uint32_t *scratch, uint32_t *total_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    GP_LAUNCH(total_kernel, 1, 1, 1, st, counts, offsets, count, scratch);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaMemcpyAsync(total_host, scratch, sizeof(uint32_t), cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    return (int)e;
}

int gp_tree_split(const uint64_t *keys, gp_cell *cells, uint32_t b, uint32_t e,
                  const uint32_t *offsets, void *stream)
{
    if (e <= b) return 0;
    GP_LAUNCH(split_kernel, blocks_for(e - b, 128), 128, 128, (cudaStream_t)stream, keys, cells, b, e, offsets);
    CHECK_LAUNCH();
}

int gp_tree_moments(const double *x, const double *y, const double *z, const double *m,
                    const gp_cell *cells, uint32_t b, uint32_t e, gp_moments *mom, void *stream)
{
    if (e <= b) return 0;
    GP_LAUNCH(moments_kernel, blocks_for(e - b, 128), 128, 128, (cudaStream_t)stream, x, y, z, m, cells, b, e, mom);
    CHECK_LAUNCH();
}

int gp_tree_records(const gp_moments *mom, const gp_cell *cells, uint32_t ncells, int mac, double theta, void *rec,
                    void *stream)
{
    if (ncells == 0) return 0;
    GP_LAUNCH(records_kernel, blocks_for(ncells, 128), 128, 128, (cudaStream_t)stream, mom, cells, ncells, mac, theta,
              (gp_f4 *)rec);
    CHECK_LAUNCH();
}

int gp_tree_drift_sources(const uint32_t *perm, uint32_t n, gp_state_dev_ptrs S, double t0, double inv_len,
                          gp_f4 *cub, void *stream)
{
    if (n == 0) return 0;
    GP_LAUNCH(drift_sources_kernel, blocks_for(n, 256), 256, 256, (cudaStream_t)stream, perm, n, S, t0, inv_len, cub);
    CHECK_LAUNCH();
}

int gp_tree_drift_update(const uint32_t *index, uint32_t n_sub, const uint32_t *rank, gp_state_dev_ptrs S, double t0,
                         const double *center, double inv_len, uint32_t n, double *x, double *y, double *z,
                         gp_f4 *f4, gp_f4 *cub, const gp_cell *cells, const uint32_t *leaf_of, uint32_t *mark,
                         uint32_t epoch, void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(drift_update_kernel, blocks_for(n_sub, 128), 128, 128, (cudaStream_t)stream, index, n_sub, rank, S, t0,
              center, inv_len, n, x, y, z, f4, cub, cells, leaf_of, mark, epoch);
    CHECK_LAUNCH();
}

int gp_tree_drift_cells(const double *x, const double *y, const double *z, const double *m, const gp_cell *cells,
                        uint32_t b, uint32_t e, const gp_f4 *cub, uint32_t n, gp_moments *mom, gp_drift_kin *kin,
                        uint32_t *leaf_of, const uint32_t *mark, uint32_t clean, void *stream)
{
    if (e <= b) return 0;
    GP_LAUNCH(drift_cells_kernel, blocks_for(e - b, 128), 128, 128, (cudaStream_t)stream, x, y, z, m, cells, b, e,
              cub, n, mom, kin, leaf_of, mark, clean);
    CHECK_LAUNCH();
}

int gp_tree_drift_records(const gp_moments *mom, const gp_drift_kin *kin, const gp_cell *cells, uint32_t ncells,
                          double tau, int mac, double theta, void *rec, void *stream)
{
    if (ncells == 0) return 0;
    GP_LAUNCH(drift_records_kernel, blocks_for(ncells, 128), 128, 128, (cudaStream_t)stream, mom, kin, cells, ncells,
              tau, mac, theta, (gp_f4 *)rec);
    CHECK_LAUNCH();
}

int gp_tree_irecords_forces(const gp_f4 *f4, const uint32_t *perm, const float *aold,
                            const gp_aold_state *as, const uint32_t *ilist, const uint32_t *slot, uint32_t ni,
                            gp_f4 *ipos, uint32_t *islot, uint32_t *iself, uint32_t *iorig,
                            float *iaold, void *stream)
{
    if (ni == 0) return 0;
    GP_LAUNCH(irec_forces_kernel, blocks_for(ni, 256), 256, 256, (cudaStream_t)stream, f4, perm, aold, *as, ilist, slot, ni,
                                                                             ipos, islot, iself, iorig, iaold);
    CHECK_LAUNCH();
}

int gp_tree_active_keys(const uint32_t *index, const uint32_t *rank, uint32_t ni,
                        uint32_t *key, uint32_t *val, void *stream)
{
    if (ni == 0) return 0;
    GP_LAUNCH(active_keys_kernel, blocks_for(ni, 256), 256, 256, (cudaStream_t)stream, index, rank, ni, key, val);
    CHECK_LAUNCH();
}

int gp_tree_irecords_field(const double *points, const uint32_t *order, uint32_t m,
                           const double *center, double inv_len, gp_f4 *ipos, uint32_t *islot, void *stream)
{
    if (m == 0) return 0;
    GP_LAUNCH(irec_field_kernel, blocks_for(m, 256), 256, 256, (cudaStream_t)stream, points, order, m, center,
              inv_len, ipos, islot);
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
    uint32_t ngroups = a->gstart ? a->ngroups : (a->ni + GP_TREE_GROUP - 1) / GP_TREE_GROUP;
    ngroups *= a->parts > 1 ? a->parts : 1; /* work items */
    uint32_t blocks = (a->warp_slots + WALK_WARPS - 1) / WALK_WARPS;
    uint32_t need = (ngroups + WALK_WARPS - 1) / WALK_WARPS;
    if (need < blocks) blocks = need;
    if (blocks < 1) blocks = 1;
    if (a->mode == 0) GP_LAUNCH(walk_kernel<0>, blocks, WALK_THREADS, WALK_GROUP, st, *a);
    else if (a->mode == 1) GP_LAUNCH(walk_kernel<1>, blocks, WALK_THREADS, WALK_GROUP, st, *a);
    else GP_LAUNCH(walk_kernel<2>, blocks, WALK_THREADS, WALK_GROUP, st, *a);
    if (a->parts <= 1) CHECK_LAUNCH();
    e = cudaGetLastError();
    if (e != cudaSuccess) return (int)e;
    GP_LAUNCH(walk_reduce, blocks_for(a->ni, 256), 256, 256, st, *a);
    CHECK_LAUNCH();
}

int gp_tree_groups(const uint64_t *rkeys, const uint32_t *iself, uint32_t ni, const gp_cell *cells,
                   const uint64_t *tkeys, uint32_t cell_max, uint32_t *flag,
                   uint32_t *off, uint32_t *runstart, uint32_t *gflag, uint32_t *goff, uint32_t *gstart,
                   void *tmp, size_t *tmp_bytes, uint32_t *scalar, uint32_t *ngroups_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    if (!tmp) return (int)cub::DeviceScan::ExclusiveSum(NULL, *tmp_bytes, flag, off, (int)ni, st);
    GP_LAUNCH(group_runs, blocks_for(ni, 256), 256, 256, st, rkeys, iself, ni, cells, tkeys, cell_max, flag);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, flag, off, (int)ni, st);
    if (e != cudaSuccess) return (int)e;
    GP_LAUNCH(group_run_starts, blocks_for(ni, 256), 256, 256, st, flag, off, ni, runstart);
    GP_LAUNCH(group_flags, blocks_for(ni, 256), 256, 256, st, flag, off, runstart, ni, gflag);
    e = cudaGetLastError();
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, gflag, goff, (int)ni, st);
    if (e != cudaSuccess) return (int)e;
    int r = gp_tree_total(gflag, goff, ni, scalar, ngroups_host, stream);
    if (r != 0) return r;
    GP_LAUNCH(group_starts, blocks_for(ni, 256), 256, 256, st, gflag, goff, ni, *ngroups_host, gstart);
    CHECK_LAUNCH();
}

int gp_tree_cut(const gp_cell *cells, uint32_t level_end, uint32_t level, uint32_t n,
                uint32_t *flags, uint32_t *offs, uint32_t *keys, uint32_t *ids_tmp, uint32_t *cut,
                void *tmp, size_t *tmp_bytes, uint32_t *scalar, uint32_t *count_host, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    int end_bit = 1;
    while (end_bit < 32 && (n >> end_bit) != 0) ++end_bit;
    if (!tmp) {
        size_t a = 0, b = 0;
        cudaError_t e = cub::DeviceScan::ExclusiveSum(NULL, a, flags, offs, (int)level_end, st);
        if (e == cudaSuccess)
            e = cub::DeviceRadixSort::SortPairs(NULL, b, keys, keys + level_end, ids_tmp, ids_tmp + level_end,
                                                (int)level_end, 0, end_bit, st);
        *tmp_bytes = a > b ? a : b;
        return (int)e;
    }
    GP_LAUNCH(cut_flags, blocks_for(level_end, 256), 256, 256, st, cells, level_end, level, flags);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, *tmp_bytes, flags, offs, (int)level_end, st);
    if (e != cudaSuccess) return (int)e;
    int r = gp_tree_total(flags, offs, level_end, scalar, count_host, stream);
    if (r != 0) return r;
    GP_LAUNCH(cut_scatter, blocks_for(level_end, 256), 256, 256, st, cells, level_end, flags, offs, keys, ids_tmp);
    e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cub::DeviceRadixSort::SortPairs(tmp, *tmp_bytes, keys, keys + level_end, ids_tmp, cut,
                                            (int)*count_host, 0, end_bit, st);
    return (int)e;
}

} /* extern "C" */
