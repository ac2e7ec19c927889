/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vec4.h — the four-component records the CUDA plugins' host code (gcc)
 * and kernels (nvcc, or g++ through the emulator) share: particles
 * {x, y, z, m} and results {ax, ay, az, sum m/r}.
 */
#ifndef GP_CUDA_VEC4_H
#define GP_CUDA_VEC4_H

/* Four doubles, 32-byte aligned (CUDA 13 deprecates double4). */
typedef struct __attribute__((aligned(32))) gp_d4 { double x, y, z, w; } gp_d4;
/* Four floats, 16-byte aligned: the layout of CUDA's float4. */
typedef struct __attribute__((aligned(16))) gp_f4 { float x, y, z, w; } gp_f4;

#endif /* GP_CUDA_VEC4_H */
