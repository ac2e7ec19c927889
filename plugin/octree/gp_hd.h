/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gp_hd.h — the one switch that lets plugin/octree be compiled for host and device.
 *
 * Every per-element function in plugin/octree is `static inline GP_HD`: under
 * nvcc (__CUDACC__) that is `__host__ __device__`, under a C compiler it is
 * nothing. Code marked GP_HD uses no OpenMP, no malloc, no libc I/O and no
 * globals, so a CUDA kernel can call it per thread and the CPU plugin can
 * call it per element inside its own (OpenMP, SIMD) loops.
 *
 * Precision: functions that exist in float and double come in pairs with an
 * `_f` / `_d` suffix (see kernels.h); the caller chooses per precision mode.
 */
#ifndef GP_CORE_HD_H
#define GP_CORE_HD_H

#include <stdint.h>
#include <math.h>

#if defined(__CUDACC__)
#  define GP_HD __host__ __device__
#  define GP_RESTRICT __restrict__
#else
#  define GP_HD
#  define GP_RESTRICT restrict
#endif

/* The keys and their grid (GP_KEY_*) are the ABI's: gravplug_keys.h. */

#endif /* GP_CORE_HD_H */
