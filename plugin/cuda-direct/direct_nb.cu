/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_nb.cu — cuda-direct's ABI 1.2 neighbour outputs (direct_nb.h).
 *
 * One thread per active particle walks the sources in index order, as
 * cpu-direct's direct_kernel.c does on the host: ascending j gives the lower
 * index on ties with a strict `<`, and the lists come out ascending with no
 * sort. The lists take two launches — a count pass (which also writes nn,
 * nn_dist2 and pair_step), then, after the host has prefix-summed the
 * counts into the CSR offsets it must hold anyway, a fill pass into the
 * exact room: no atomics, no reallocation, the same bits on every device.
 * The cost is n_active x n_src pair evaluations, the force kernel's
 * order, so cuda-direct claims GP_CAP_NEIGHBOURS.
 *
 * Compiled with -fmad=false (module.mk): the squared distances and
 * gp_pair_step (base/pair_step.h, GP_PAIR_HD) are then the host's unfused
 * double expressions bit for bit (division and sqrt are IEEE-rounded by
 * default), which the conformance suite checks against a transcription of
 * Huayno's timestep_ij.
 */
#include "cuda-base/launch.cuh"
#include <math.h>
#include <stdint.h>

#include "base/pair_step.h"
#include "cuda-direct/direct_nb.h"

__global__ void direct_nb_kernel(const double *pos, const double *vel, const double *mass, const uint32_t *src,
                                 uint32_t nj, const uint32_t *index, const double *ipos, const uint32_t *iself,
                                 uint32_t ni, double G, double eps2, const double *radius, double nb_step,
                                 uint32_t *nn, double *nd2, double *step, uint32_t *count, const uint64_t *offset,
                                 uint32_t *list)
{
    uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= ni) return;
    /* the target: active particle i, or point k excluding particle i */
    const size_t i = ipos ? (iself ? (size_t)iself[k] : (size_t)UINT32_MAX) : index ? (size_t)index[k] : (size_t)k;
    const double *xp = ipos ? &ipos[3 * (size_t)k] : &pos[3 * i];
    const double xi = xp[0], yi = xp[1], zi = xp[2];
    const int vi_known = vel && !ipos;
    const double vxi = vi_known ? vel[3 * i] : 0.0, vyi = vi_known ? vel[3 * i + 1] : 0.0,
                 vzi = vi_known ? vel[3 * i + 2] : 0.0;
    const double mi = i != (size_t)UINT32_MAX ? mass[i] : 0.0;
    const double r2max = radius ? radius[k] * radius[k] : -1.0; /* -1: no list by radius */
    uint32_t *out = list ? list + offset[k] : NULL;
    double best = HUGE_VAL, smin = HUGE_VAL;
    uint32_t near = UINT32_MAX, c = 0;
    for (uint32_t q = 0; q < nj; ++q) {
        const size_t j = src ? (size_t)src[q] : (size_t)q;
        if (j == i) continue;
        double rx = pos[3 * j] - xi, ry = pos[3 * j + 1] - yi, rz = pos[3 * j + 2] - zi;
        double d2 = rx * rx + ry * ry + rz * rz;
        if (d2 < best) {
            best = d2;
            near = (uint32_t)j;
        }
        double tau = HUGE_VAL;
        if (vel) {
            double vx = vel[3 * j] - vxi, vy = vel[3 * j + 1] - vyi, vz = vel[3 * j + 2] - vzi;
            tau = gp_pair_step(-rx, -ry, -rz, -vx, -vy, -vz, eps2, G * (mi + mass[j]));
            if (tau < smin) smin = tau;
        }
        if (d2 < r2max || (nb_step > 0 && tau < nb_step)) {
            if (out) out[c] = (uint32_t)j;
            ++c;
        }
    }
    if (list) return; /* the fill pass writes the lists only */
    if (nn) nn[k] = near;
    if (nd2) nd2[k] = near == UINT32_MAX ? HUGE_VAL : best;
    if (step) step[k] = smin;
    if (count) count[k] = c;
}

extern "C" int gp_direct_nb(const double *pos, const double *vel, const double *mass, const uint32_t *src,
                            uint32_t nj, const uint32_t *index, const double *ipos, const uint32_t *iself,
                            uint32_t ni, double G, double eps2,
                            const double *radius, double nb_step, uint32_t *nn, double *nd2, double *step,
                            uint32_t *count, const uint64_t *offset, uint32_t *list, void *stream)
{
    if (ni == 0) return (int)cudaSuccess;
    GP_LAUNCH(direct_nb_kernel, (ni + 127) / 128, 128, 128, (cudaStream_t)stream, pos, vel, mass, src, nj, index,
              ipos, iself, ni, G, eps2, radius, nb_step, nn, nd2, step, count, offset, list);
    return (int)cudaGetLastError();
}
