/* SPDX-License-Identifier: Apache-2.0 */
/*
 * launch.cuh — GP_LAUNCH, the one way the CUDA plugins start a kernel, so
 * that the same .cu source runs on a GPU (nvcc) and, in the tests, on the
 * CPU emulation of CUDA (g++ with GP_CUDA_EMULATE, tests/gpu/gpu-emu.h).
 * group: how many threads synchronise (only the CPU emulation uses it).
 */
#ifndef GP_CUDA_LAUNCH_CUH
#define GP_CUDA_LAUNCH_CUH

#ifdef GP_CUDA_EMULATE
#  include "gpu-emu.h"
#  define GP_LAUNCH(kernel, grid, block, group, stream, ...) \
       emu::launch(grid, block, group, [&] { (void)(stream); kernel(__VA_ARGS__); })
#else
#  include <cuda_runtime.h>
#  define GP_LAUNCH(kernel, grid, block, group, stream, ...) \
       kernel<<<grid, block, 0, stream>>>(__VA_ARGS__)
#endif

#endif /* GP_CUDA_LAUNCH_CUH */
