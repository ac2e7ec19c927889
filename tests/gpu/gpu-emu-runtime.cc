/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-runtime.cc — the CUDA runtime functions the plugins call, on the
 * CPU, for the emulated test build of cuda-direct and cuda-tree
 * (build/emu/plugins/): device memory is host memory (filled with 0xff
 * bytes, NaN as doubles, so a read of something never written shows up),
 * copies are memcpy, streams are no-ops, kernels run through
 * tests/gpu/gpu-emu.h. The declarations are the real cuda_runtime_api.h's, so
 * the plugins' host code is compiled exactly as for the GPU.
 *
 * Every copy, memset and wait is counted for the calling thread
 * (gpu-emu-counts.h), as emu::launch counts kernels.
 *
 * GP_CUDA_EMU_DEVICES (default 1) sets how many devices it pretends to
 * have; 0 reproduces a machine without a GPU.
 */
#include <cuda_runtime_api.h>

#include "gpu-emu-counts.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int emu_devices()
{
    const char *e = getenv("GP_CUDA_EMU_DEVICES");
    return e ? atoi(e) : 1;
}
static thread_local int current_device = 0;

static void count_copy(size_t bytes, enum cudaMemcpyKind kind)
{
    gp_emu_counts *c = gp_emu_thread_counts();
    if (kind == cudaMemcpyHostToDevice) { c->copies_h2d++; c->bytes_h2d += bytes; }
    else if (kind == cudaMemcpyDeviceToHost) { c->copies_d2h++; c->bytes_d2h += bytes; }
    else c->copies_d2d++;
}

extern "C" {

cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    *count = emu_devices();
    return *count > 0 ? cudaSuccess : cudaErrorNoDevice;
}
cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    if (device < 0 || device >= emu_devices()) return cudaErrorInvalidDevice;
    current_device = device;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetDevice(int *device) { *device = current_device; return cudaSuccess; }
cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (device < 0 || device >= emu_devices()) return cudaErrorInvalidDevice;
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "CPU emulation of a GPU (tests/gpu/gpu-emu.h)");
    prop->multiProcessorCount = 2;
    prop->major = 9;
    prop->minor = 0;
    prop->totalGlobalMem = (size_t)16 << 30;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    (void)device;
    *value = attr == cudaDevAttrMultiProcessorCount ? 2 : 0;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    (void)func;
    memset(attr, 0, sizeof *attr);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int block,
                                                                     size_t smem)
{
    (void)func; (void)block; (void)smem;
    *n = 1;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMalloc(void **p, size_t size)
{
    *p = malloc(size ? size : 1);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xff, size);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaFree(void *p) { free(p); return cudaSuccess; }
cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_b, size_t *total)
{
    *free_b = (size_t)8 << 30;
    *total = (size_t)16 << 30;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream)
{
    (void)stream;
    count_copy(count, kind);
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}
/* the synchronous copy waits for the device as well */
cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    count_copy(count, kind);
    gp_emu_thread_counts()->device_syncs++;
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    gp_emu_thread_counts()->memsets++;
    memset(dst, value, count);
    return cudaSuccess;
}
/* pinned host memory is ordinary host memory here */
cudaError_t CUDARTAPI cudaMallocHost(void **p, size_t size)
{
    *p = malloc(size ? size : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t CUDARTAPI cudaFreeHost(void *p) { free(p); return cudaSuccess; }
/* every emulated operation is finished when it returns: events are tokens */
cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    *e = (cudaEvent_t)malloc(16);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t e) { free((void *)e); return cudaSuccess; }
cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaSuccess; }
cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t e)
{
    (void)e;
    gp_emu_thread_counts()->event_syncs++;
    return cudaSuccess;
}
/* no device time passes between two events here */
cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    (void)start;
    (void)end;
    *ms = 0.0f;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    *s = (cudaStream_t)malloc(16);
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t s) { free((void *)s); return cudaSuccess; }
cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    gp_emu_thread_counts()->stream_syncs++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    gp_emu_thread_counts()->device_syncs++;
    return cudaSuccess;
}
cudaError_t CUDARTAPI cudaGetLastError(void) { return cudaSuccess; }
const char *CUDARTAPI cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorMemoryAllocation: return "out of memory";
    default: return "an emulated CUDA error";
    }
}
const char *CUDARTAPI cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    default: return "cudaErrorUnknown";
    }
}

} /* extern "C" */
