/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state_dev.cuh — the kernels of state_dev.h (ABI 1.1 state on the
 * device). Included once by each CUDA plugin's .cu (real CUDA, or the
 * CPU emulation of tests/gpu-emu.h: launch.cuh picks).
 *
 * The prediction uses __dmul_rn / __dadd_rn: nvcc contracts a*b + c into
 * an FMA by default, and the ABI asks for exactly the host's unfused
 * expression (plugin/base gp_predict_coord).
 */
#include "cuda-base/launch.cuh"
#include "cuda-base/state_dev.h"

__global__ void gp_state_scatter_kernel(const uint32_t *index, uint32_t n_sub, const double *in_pos,
                                        const double *in_vel, const double *in_acc, const double *in_t,
                                        double *x0, double *pos, double *vel, double *acc, double *t,
                                        uint8_t *flag)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n_sub) return;
    size_t i = index ? (size_t)index[k] : (size_t)k;
    for (int d = 0; d < 3; ++d) {
        double x = in_pos[3 * (size_t)k + d];
        x0[3 * i + d] = x;
        pos[3 * i + d] = x;
        vel[3 * i + d] = in_vel[3 * (size_t)k + d];
        acc[3 * i + d] = in_acc[3 * (size_t)k + d];
    }
    t[i] = in_t[k];
    flag[i] = 1;
}

/* gp_predict_coord, unfused */
__device__ __forceinline__ double gp_state_predict_coord(double x, double v, double a, double dt)
{
    double h = __dmul_rn(__dmul_rn(0.5, dt), dt);
    double xv = __dadd_rn(x, __dmul_rn(dt, v));
    return __dadd_rn(xv, __dmul_rn(h, a));
}

__global__ void gp_state_predict_kernel(uint32_t n, double tp, const double *x0, const double *vel,
                                        const double *acc, const double *t, const uint8_t *flag,
                                        double *pos, int *bad)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !flag[i]) return;
    double dt = __dsub_rn(tp, t[i]);
    int nonfinite = 0;
    for (int d = 0; d < 3; ++d) {
        size_t c = 3 * (size_t)i + d;
        double x = gp_state_predict_coord(x0[c], vel[c], acc[c], dt);
        nonfinite |= !isfinite(x);
        pos[c] = x;
    }
    if (nonfinite) *bad = 1; /* the same value from every writer: no race */
}

__global__ void gp_state_finish_kernel(uint32_t n, int undo, double t_prev, const double *x0,
                                       const double *vel, const double *acc, const double *t,
                                       uint8_t *flag, double *pos)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || !flag[i]) return;
    if (!undo) {
        flag[i] = 2;
        return;
    }
    double dt = __dsub_rn(t_prev, t[i]);
    for (int d = 0; d < 3; ++d) {
        size_t c = 3 * (size_t)i + d;
        pos[c] = flag[i] == 1 ? x0[c] : gp_state_predict_coord(x0[c], vel[c], acc[c], dt);
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
                         const double *in_vel, const double *in_acc, const double *in_t,
                         double *x0, double *pos, double *vel, double *acc, double *t,
                         uint8_t *flag, void *stream)
{
    if (n_sub == 0) return 0;
    GP_LAUNCH(gp_state_scatter_kernel, (n_sub + 255) / 256, 256, 256, (cudaStream_t)stream, index, n_sub,
              in_pos, in_vel, in_acc, in_t, x0, pos, vel, acc, t, flag);
    return (int)cudaGetLastError();
}

int gp_state_dev_predict(uint32_t n, double tp, const double *x0, const double *vel,
                         const double *acc, const double *t, const uint8_t *flag, double *pos,
                         int *bad, void *stream)
{
    cudaStream_t st = (cudaStream_t)stream;
    cudaError_t e = cudaMemsetAsync(bad, 0, sizeof(int), st);
    if (e != cudaSuccess || n == 0) return (int)e;
    GP_LAUNCH(gp_state_predict_kernel, (n + 255) / 256, 256, 256, st, n, tp, x0, vel, acc, t, flag, pos, bad);
    return (int)cudaGetLastError();
}

int gp_state_dev_finish(uint32_t n, int undo, double t_prev, const double *x0, const double *vel,
                        const double *acc, const double *t, uint8_t *flag, double *pos, void *stream)
{
    if (n == 0) return 0;
    GP_LAUNCH(gp_state_finish_kernel, (n + 255) / 256, 256, 256, (cudaStream_t)stream, n, undo, t_prev, x0,
              vel, acc, t, flag, pos);
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
