/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_dev.cuh — the kernels of state_dev.h (ABI 1.1 state on the
 * device). Included once by each CUDA plugin's .cu (real CUDA, or the
 * CPU emulation of tests/gpu/gpu-emu.h: launch.cuh picks).
 *
 * The prediction and the velocities are gravplug_predict.h's, the host's
 * expressions: in device code they are built of __dmul_rn / __dadd_rn,
 * which nvcc never contracts into an FMA, so the bits are the host's.
 */
#include "cuda-base/launch.cuh"
#include "cuda-base/state_dev.h"
#include "gravplug_predict.h"

__global__ void gp_state_scatter_kernel(const uint32_t *index, uint32_t n_sub, const double *in_pos,
                                        const double *in_vel, const double *in_acc, const double *in_jerk,
                                        const double *in_t, gp_state_dev_ptrs s, double *pos)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    size_t i = index ? (size_t)index[k] : (size_t)k;
    for (int d = 0; d < 3; ++d) {
        double x = in_pos[3 * (size_t)k + d];
        s.x0[3 * i + d] = x;
        pos[3 * i + d] = x;
        s.vel[3 * i + d] = in_vel[3 * (size_t)k + d];
        s.acc[3 * i + d] = in_acc[3 * (size_t)k + d];
        if (in_jerk) s.jerk[3 * i + d] = in_jerk[3 * (size_t)k + d];
    }
    s.t[i] = in_t[k];
    s.flag[i] = 1;
    if (s.owed_at) s.owed_at[i] = s.epoch;
    s.third[i] = in_jerk != NULL; /* set_state: second order again */
}

/* Coordinate d of particle i predicted dt ahead of its own time. */
__device__ __forceinline__ double gp_state_predict_one(const gp_state_dev_ptrs &s, size_t i, int d, double dt)
{
    size_t c = 3 * i + d;
    return s.third[i] ? gp_predict_coord3(s.x0[c], s.vel[c], s.acc[c], s.jerk[c], dt)
                      : gp_predict_coord(s.x0[c], s.vel[c], s.acc[c], dt);
}

__global__ void gp_state_predict_kernel(uint32_t n, double tp, gp_state_dev_ptrs s, double *pos, int *bad)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !s.flag[i]) return;
    double dt = __dsub_rn(tp, s.t[i]);
    int nonfinite = 0, fast = 0;
    for (int d = 0; d < 3; ++d) {
        size_t c = 3 * i + d;
        double x = gp_state_predict_one(s, i, d, dt);
        /* the velocity gp_state_velocity_kernel will give at tp */
        double v = __dadd_rn(s.vel[c], __dmul_rn(dt, s.acc[c]));
        if (s.third[i]) v = __dadd_rn(v, __dmul_rn(__dmul_rn(__dmul_rn(0.5, dt), dt), s.jerk[c]));
        nonfinite |= !isfinite(x);
        fast |= !isfinite(v);
        pos[3 * (size_t)i + d] = x;
    }
    /* the same value from every writer: no race; bad[1]: a velocity */
    if (nonfinite) bad[0] = 1;
    if (fast) bad[1] = 1;
}

__global__ void gp_state_finish_kernel(uint32_t n, int undo, double t_prev, gp_state_dev_ptrs s, double *pos)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !s.flag[i]) return;
    if (!undo) {
        s.flag[i] = 2;
        return;
    }
    double dt = __dsub_rn(t_prev, s.t[i]);
    for (int d = 0; d < 3; ++d) {
        size_t c = 3 * (size_t)i + d;
        pos[c] = s.flag[i] == 1 ? s.x0[c] : gp_state_predict_one(s, i, d, dt);
    }
}

/* The owed predict's position of particle i (state_dev.h's rule); with
 * settle, its flag as the done predict leaves it. */
__global__ void gp_state_owed_kernel(const uint32_t *index, uint32_t n_sub, double tp, int settle,
                                     gp_state_dev_ptrs s, double *pos)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    size_t i = index ? (size_t)index[k] : (size_t)k;
    if (!s.flag[i] || s.owed_at[i] == s.epoch) return;
    double dt = __dsub_rn(tp, s.t[i]);
    for (int d = 0; d < 3; ++d) pos[3 * i + d] = gp_state_predict_one(s, i, d, dt);
    if (settle) s.flag[i] = 2;
}

/* gp_state_velocity of plugin/base (gp_predict_vel2 / _vel3) */
__global__ void gp_state_velocity_kernel(const uint32_t *index, uint32_t n_sub, double t_pred,
                                         gp_state_dev_ptrs s, double *out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    size_t i = index ? (size_t)index[k] : (size_t)k;
    double dt = __dsub_rn(t_pred, s.t[i]);
    for (int d = 0; d < 3; ++d) {
        size_t c = 3 * i + d;
        double v;
        if (s.flag[i] == 0) {
            v = 0.0;
        } else if (s.flag[i] == 1 && (!s.owed_at || s.owed_at[i] == s.epoch)) {
            v = s.vel[c]; /* a state given since the last predict, owed or done */
        } else {
            v = s.third[i] ? gp_predict_vel3(s.vel[c], s.acc[c], s.jerk[c], dt)
                           : gp_predict_vel2(s.vel[c], s.acc[c], dt);
        }
        out[3 * (size_t)k + d] = v;
    }
}

__global__ void gp_state_gather_kernel(const double *pos, const uint32_t *index, uint32_t n_sub,
                                       double *out)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    size_t i = index[k];
    for (int d = 0; d < 3; ++d) out[3 * (size_t)k + d] = pos[3 * i + d];
}

__global__ void gp_state_masses_kernel(const uint32_t *index, uint32_t n_sub, const double *in,
                                       double *mass)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    mass[index ? (size_t)index[k] : (size_t)k] = in[k];
}

extern "C" {

int gp_state_dev_scatter(const uint32_t *index, uint32_t n_sub, const double *in_pos,
                         const double *in_vel, const double *in_acc, const double *in_jerk,
                         const double *in_t, gp_state_dev_ptrs s, double *pos, void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_scatter_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, index, n_sub,
              in_pos, in_vel, in_acc, in_jerk, in_t, s, pos);
    return (int)cudaGetLastError();
}

int gp_state_dev_predict(uint32_t n, double tp, gp_state_dev_ptrs s, double *pos, int *bad, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(bad, 0, 2 * sizeof(int), st);
    if (e != cudaSuccess || n == 0) return (int)e;
    GP_LAUNCH(gp_state_predict_kernel, (n + 255) / 256, 256, 256, st, n, tp, s, pos, bad);
    return (int)cudaGetLastError();
}

int gp_state_dev_finish(uint32_t n, int undo, double t_prev, gp_state_dev_ptrs s, double *pos, void *stream)
{
    if (n == 0) return 0;
    GP_LAUNCH(gp_state_finish_kernel, (n + 255) / 256, 256, 256, (cudaStream_t)stream, n, undo, t_prev, s, pos);
    return (int)cudaGetLastError();
}

int gp_state_dev_velocity(const uint32_t *index, uint32_t n_sub, double t_pred, gp_state_dev_ptrs s,
                          double *out, void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_velocity_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, index, n_sub,
              t_pred, s, out);
    return (int)cudaGetLastError();
}

int gp_state_dev_owed(const uint32_t *index, uint32_t n_sub, double tp, int settle, gp_state_dev_ptrs s,
                      double *pos, void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_owed_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, index, n_sub, tp,
              settle, s, pos);
    return (int)cudaGetLastError();
}

int gp_state_dev_gather(const double *pos, const uint32_t *index, uint32_t n_sub, double *out,
                        void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_gather_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, pos, index, n_sub,
              out);
    return (int)cudaGetLastError();
}

int gp_state_dev_masses(const uint32_t *index, uint32_t n_sub, const double *in, double *mass,
                        void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_masses_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, index, n_sub, in,
              mass);
    return (int)cudaGetLastError();
}

} /* extern "C" */
