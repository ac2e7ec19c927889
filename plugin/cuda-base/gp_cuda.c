/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gp_cuda.c — device selection, CUDA errors as sentences, memory sizing,
 * growing device buffers, copies. See gp_cuda.h.
 */
#include "cuda-base/gp_cuda.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Memory we leave free for the CUDA context, CUB's temporaries and other
 * processes: cudaMemGetInfo is a snapshot, not a promise. */
#define GP_CUDA_MARGIN ((size_t)256 << 20)

static gp_status device_fail(gp_base *b, cudaError_t e, const char *doing)
{
    const char *advice;
    switch (e) {
    case cudaErrorNoDevice:
        advice = "no CUDA-capable GPU is visible; run on a machine with an "
                 "NVIDIA GPU (check CUDA_VISIBLE_DEVICES) or use a CPU plugin "
                 "such as cpu-tree or cpu-direct";
        break;
    case cudaErrorInsufficientDriver:
        advice = "the NVIDIA driver is missing or older than this build's "
                 "CUDA 13 runtime needs; install a current driver or use a "
                 "CPU plugin such as cpu-tree or cpu-direct";
        break;
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
        advice = "this build has no kernels for this GPU; rebuild with "
                 "CUDA_ARCH set for it (make CUDA_ARCH='-gencode "
                 "arch=compute_XX,code=sm_XX')";
        break;
    case cudaErrorMemoryAllocation:
        advice = "the GPU is out of memory; use fewer particles or free the "
                 "GPU from other work";
        break;
    default:
        advice = "the GPU or its driver reported a failure; the instance may "
                 "be unusable: finalize it and init a new one (or use a CPU "
                 "plugin)";
        break;
    }
    return gp_fail(b, GP_ERR_DEVICE, "CUDA error while %s: %s (%s); %s",
                   doing, cudaGetErrorString(e), cudaGetErrorName(e), advice);
}

gp_status gp_cuda_check(gp_base *b, int err, const char *doing)
{
    if (err == (int)cudaSuccess) return GP_OK;
    return device_fail(b, (cudaError_t)err, doing);
}

gp_status gp_cuda_open(gp_base *b, gp_cuda *c, int (*probe)(void))
{
    memset(c, 0, sizeof *c);
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* clear it: the runtime stays usable */
        return gp_fail(b, GP_ERR_DEVICE,
                       "no usable CUDA device: cudaGetDeviceCount failed: %s "
                       "(%s); this plugin needs an NVIDIA GPU with a current "
                       "driver; use a CPU plugin such as cpu-tree or "
                       "cpu-direct on this machine",
                       cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (count <= 0)
        return gp_fail(b, GP_ERR_DEVICE,
                       "no CUDA device is visible (cudaGetDeviceCount = 0); "
                       "use a CPU plugin such as cpu-tree or cpu-direct, or "
                       "check CUDA_VISIBLE_DEVICES");
    int dev = b->device < 0 ? 0 : b->device;
    if (dev >= count)
        return gp_fail(b, GP_ERR_DEVICE,
                       "gp_init_args.device is %d but only %d CUDA device%s "
                       "visible (ordinals 0..%d); pass -1 for the default",
                       b->device, count, count == 1 ? " is" : "s are", count - 1);
    if ((e = cudaSetDevice(dev)) != cudaSuccess)
        return device_fail(b, e, "selecting the CUDA device");
    if ((e = cudaFree(0)) != cudaSuccess) /* creates the context now */
        return device_fail(b, e, "creating the CUDA context");

    struct cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, dev)) != cudaSuccess)
        return device_fail(b, e, "reading the device properties");
    c->device = dev;
    snprintf(c->name, sizeof c->name, "%s", prop.name);
    c->sm_count = prop.multiProcessorCount;
    c->cc_major = prop.major;
    c->cc_minor = prop.minor;
    c->total_mem = prop.totalGlobalMem;

    if (probe && (e = (cudaError_t)probe()) != cudaSuccess) {
        char doing[400];
        snprintf(doing, sizeof doing,
                 "loading this plugin's kernels on %s (compute capability %d.%d)",
                 c->name, c->cc_major, c->cc_minor);
        return device_fail(b, e, doing);
    }
    cudaStream_t st;
    if ((e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)) != cudaSuccess)
        return device_fail(b, e, "creating a CUDA stream");
    c->stream = st;
    for (int k = 0; k < 2; ++k) {
        cudaEvent_t ev;
        if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess) {
            gp_cuda_close(c);
            return device_fail(b, e, "creating a CUDA event");
        }
        c->ev[k] = ev;
        /* timed ones: gp_cuda_fetch's copies, gp_cuda_phase's work */
        void **timed[2] = {&c->tev[k], &c->pev[k]};
        for (int q = 0; q < 2; ++q) {
            if ((e = cudaEventCreateWithFlags(&ev, cudaEventDefault)) != cudaSuccess) {
                gp_cuda_close(c);
                return device_fail(b, e, "creating a CUDA event");
            }
            *timed[q] = ev;
        }
    }
    c->phase_pending = 0;
    c->open = 1;
    gp_log(b, GP_LOG_INFO, "using CUDA device %d: %s, %d SMs, compute %d.%d, %.1f GiB",
           dev, c->name, c->sm_count, c->cc_major, c->cc_minor,
           (double)c->total_mem / (1024.0 * 1024.0 * 1024.0));
    return GP_OK;
}

gp_status gp_cuda_open_in_init(gp_base *b, gp_cuda *c, int (*probe)(void))
{
    b->in_init = 1;
    gp_status st = gp_cuda_open(b, c, probe);
    b->in_init = 0;
    if (st == GP_OK) b->error[0] = '\0';
    return st;
}

gp_status gp_cuda_check_field(gp_base *b, size_t m, const double *points, const double *acc)
{
    gp_status st = gp_check_field(b, m, points, acc);
    if (st != GP_OK) return st;
    if (m > (size_t)INT32_MAX)
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                       "m = %zu points is more than one call handles (2^31 - 1); "
                       "split the points into several calls", m);
    return GP_OK;
}

void gp_cuda_close(gp_cuda *c)
{
    if (!c || (!c->open && !c->stream)) return;
    (void)cudaSetDevice(c->device);
    for (int k = 0; k < 2; ++k) {
        if (c->ev[k]) (void)cudaEventDestroy((cudaEvent_t)c->ev[k]);
        if (c->tev[k]) (void)cudaEventDestroy((cudaEvent_t)c->tev[k]);
        if (c->pev[k]) (void)cudaEventDestroy((cudaEvent_t)c->pev[k]);
        c->ev[k] = c->tev[k] = c->pev[k] = NULL;
    }
    if (c->stream) (void)cudaStreamDestroy((cudaStream_t)c->stream);
    c->stream = NULL;
    c->open = 0;
}

gp_status gp_cuda_enter(gp_base *b, gp_cuda *c)
{
    if (!c->open)
        return gp_fail(b, GP_ERR_BAD_STATE,
                       "the instance has no open CUDA device; init a new one");
    cudaError_t e = cudaSetDevice(c->device);
    return e == cudaSuccess ? GP_OK : device_fail(b, e, "selecting the CUDA device");
}

void gp_cuda_count(gp_cuda *c, int upload, size_t bytes)
{
    if (upload) c->bytes_h2d += bytes;
    else c->bytes_d2h += bytes;
}

gp_status gp_cuda_log_bytes(gp_base *b, const gp_cuda *c, const char *call, unsigned long long h2d0,
                            unsigned long long d2h0, double t0, gp_status st)
{
    gp_log(b, GP_LOG_DEBUG, "%s: host->device %llu bytes, device->host %llu bytes, %.3f ms", call,
           c->bytes_h2d - h2d0, c->bytes_d2h - d2h0, 1e3 * (gp_wtime() - t0));
    return st;
}

gp_status gp_cuda_sync(gp_base *b, gp_cuda *c, const char *doing)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)c->stream);
    return e == cudaSuccess ? GP_OK : device_fail(b, e, doing);
}

gp_status gp_cuda_fits(gp_base *b, gp_cuda *c, size_t bytes, const char *what)
{
    (void)c;
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return device_fail(b, e, "querying free device memory");
    size_t usable = free_b > GP_CUDA_MARGIN ? free_b - GP_CUDA_MARGIN : 0;
    if (bytes <= usable) return GP_OK;
    return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                   "%s need %.1f MiB of GPU memory but only %.1f MiB are free "
                   "(of %.1f MiB, keeping %.0f MiB in reserve); use fewer "
                   "particles, a GPU with more memory, or a CPU plugin",
                   what, (double)bytes / 1048576.0, (double)free_b / 1048576.0,
                   (double)total_b / 1048576.0, (double)GP_CUDA_MARGIN / 1048576.0);
}

gp_status gp_dbuf_reserve(gp_base *b, gp_dbuf *buf, size_t bytes, const char *what)
{
    if (bytes <= buf->bytes && buf->ptr) return GP_OK;
    if (bytes == 0) bytes = 1;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "cannot allocate %.1f MiB of GPU memory for %s (%s); "
                       "use fewer particles or a GPU with more free memory",
                       (double)bytes / 1048576.0, what, cudaGetErrorString(e));
    }
    if (buf->ptr) (void)cudaFree(buf->ptr);
    buf->ptr = p;
    buf->bytes = bytes;
    return GP_OK;
}

gp_status gp_dbuf_grow_keep(gp_base *b, gp_cuda *c, gp_dbuf *buf, size_t bytes,
                            size_t keep, const char *what)
{
    if (bytes <= buf->bytes && buf->ptr) return GP_OK;
    gp_dbuf fresh = {0, 0};
    gp_status st = gp_dbuf_reserve(b, &fresh, bytes, what);
    if (st != GP_OK) return st;
    if (buf->ptr && keep) {
        if (keep > buf->bytes) keep = buf->bytes;
        cudaError_t e = cudaMemcpyAsync(fresh.ptr, buf->ptr, keep,
                                        cudaMemcpyDeviceToDevice,
                                        (cudaStream_t)c->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize((cudaStream_t)c->stream);
        if (e != cudaSuccess) {
            gp_dbuf_free(&fresh);
            return device_fail(b, e, what);
        }
    }
    gp_dbuf_free(buf);
    *buf = fresh;
    return GP_OK;
}

void gp_dbuf_free(gp_dbuf *buf)
{
    if (buf->ptr) (void)cudaFree(buf->ptr);
    buf->ptr = NULL;
    buf->bytes = 0;
}

/* One copy enqueued on the plugin's stream, counted. */
static gp_status enqueue_copy(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes,
                              enum cudaMemcpyKind kind, const char *what)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind, (cudaStream_t)c->stream);
    if (e != cudaSuccess) return device_fail(b, e, what);
    gp_cuda_count(c, kind == cudaMemcpyHostToDevice, bytes);
    return GP_OK;
}

/* One copy on the plugin's stream, waited for. */
static gp_status copy_and_wait(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes,
                               enum cudaMemcpyKind kind, const char *what)
{
    gp_status st = enqueue_copy(b, c, dst, src, bytes, kind, what);
    return st == GP_OK ? gp_cuda_sync(b, c, what) : st;
}

gp_status gp_cuda_upload(gp_base *b, gp_cuda *c, void *dst, const void *src,
                         size_t bytes, const char *what)
{
    return copy_and_wait(b, c, dst, src, bytes, cudaMemcpyHostToDevice, what);
}

gp_status gp_cuda_download(gp_base *b, gp_cuda *c, void *dst, const void *src,
                           size_t bytes, const char *what)
{
    return copy_and_wait(b, c, dst, src, bytes, cudaMemcpyDeviceToHost, what);
}

static double elapsed_seconds(void *from, void *to)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, (cudaEvent_t)from, (cudaEvent_t)to) != cudaSuccess) {
        (void)cudaGetLastError(); /* untimed: not an error of the work */
        return 0;
    }
    return 1e-3 * (double)ms;
}

gp_status gp_cuda_phase_begin(gp_base *b, gp_cuda *c, const char *what)
{
    c->phase_pending = 0;
    cudaError_t e = cudaEventRecord((cudaEvent_t)c->pev[0], (cudaStream_t)c->stream);
    return e == cudaSuccess ? GP_OK : device_fail(b, e, what);
}

gp_status gp_cuda_phase_end(gp_base *b, gp_cuda *c, const char *what)
{
    cudaError_t e = cudaEventRecord((cudaEvent_t)c->pev[1], (cudaStream_t)c->stream);
    if (e != cudaSuccess) return device_fail(b, e, what);
    c->phase_pending = 1;
    return GP_OK;
}

double gp_cuda_phase_seconds(gp_cuda *c)
{
    if (!c->phase_pending) return 0;
    c->phase_pending = 0;
    return elapsed_seconds(c->pev[0], c->pev[1]);
}

gp_status gp_cuda_send(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes, const char *what)
{
    return enqueue_copy(b, c, dst, src, bytes, cudaMemcpyHostToDevice, what);
}

gp_status gp_cuda_fetch_begin(gp_base *b, gp_cuda *c, const char *what)
{
    cudaError_t e = cudaEventRecord((cudaEvent_t)c->tev[0], (cudaStream_t)c->stream);
    return e == cudaSuccess ? GP_OK : device_fail(b, e, what);
}

gp_status gp_cuda_fetch(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes,
                        const char *what)
{
    return enqueue_copy(b, c, dst, src, bytes, cudaMemcpyDeviceToHost, what);
}

gp_status gp_cuda_fetch_wait(gp_base *b, gp_cuda *c, const char *what, double *copy_seconds)
{
    cudaError_t e = cudaEventRecord((cudaEvent_t)c->tev[1], (cudaStream_t)c->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize((cudaEvent_t)c->tev[1]);
    if (e != cudaSuccess) return device_fail(b, e, what);
    *copy_seconds = elapsed_seconds(c->tev[0], c->tev[1]);
    return GP_OK;
}

gp_status gp_hbuf_reserve(gp_base *b, gp_hbuf *buf, size_t bytes, const char *what)
{
    if (bytes <= buf->bytes && buf->ptr) return GP_OK;
    if (bytes == 0) bytes = 1;
    void *p = NULL;
    int pinned = 1;
    if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        (void)cudaGetLastError();
        pinned = 0;
        p = malloc(bytes);
        if (!p)
            return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                           "cannot allocate %.1f MiB of host memory for %s; use fewer "
                           "particles", (double)bytes / 1048576.0, what);
        gp_log(b, GP_LOG_DEBUG, "page-locked memory refused for %s: staging through pageable memory", what);
    }
    gp_hbuf_free(buf);
    buf->ptr = p;
    buf->bytes = bytes;
    buf->pinned = pinned;
    return GP_OK;
}

void gp_hbuf_free(gp_hbuf *buf)
{
    if (buf->ptr) {
        if (buf->pinned) (void)cudaFreeHost(buf->ptr);
        else free(buf->ptr);
    }
    buf->ptr = NULL;
    buf->bytes = 0;
    buf->pinned = 0;
}

void gp_copy_parallel(void *dst, const void *src, size_t bytes)
{
    const size_t piece = (size_t)1 << 20;
    if (bytes < 4 * piece) {
        if (bytes) memcpy(dst, src, bytes);
        return;
    }
    long long pieces = (long long)((bytes + piece - 1) / piece);
#pragma omp parallel for schedule(static)
    for (long long k = 0; k < pieces; ++k) {
        size_t off = (size_t)k * piece, len = bytes - off < piece ? bytes - off : piece;
        memcpy((char *)dst + off, (const char *)src + off, len);
    }
}

/* A staged copy of `bytes` goes in n pieces of `chunk` bytes through the
 * two halves of the pinned buffer: piece k through half k & 1. */
typedef struct staging {
    size_t bytes, chunk, n;
    char *half[2];
    cudaStream_t stream;
} staging;

/* Reserves the pinned buffer (nothing to do for 0 bytes). */
static gp_status stage_begin(gp_base *b, gp_cuda *c, gp_hbuf *stage, size_t bytes, staging *g)
{
    g->bytes = bytes;
    g->chunk = bytes < GP_STAGE_CHUNK ? bytes : GP_STAGE_CHUNK;
    g->n = bytes ? (bytes + g->chunk - 1) / g->chunk : 0;
    g->stream = (cudaStream_t)c->stream;
    if (bytes == 0) return GP_OK;
    gp_status st = gp_hbuf_reserve(b, stage, 2 * g->chunk, "the pinned staging buffer");
    if (st != GP_OK) return st;
    g->half[0] = (char *)stage->ptr;
    g->half[1] = g->half[0] + g->chunk;
    return GP_OK;
}

static size_t piece_offset(const staging *g, size_t k) { return k * g->chunk; }
static size_t piece_length(const staging *g, size_t k)
{
    size_t off = piece_offset(g, k);
    return g->bytes - off < g->chunk ? g->bytes - off : g->chunk;
}

/* Waits for the stream and turns its error into a status. */
static gp_status stage_end(gp_base *b, const staging *g, cudaError_t e, const char *what)
{
    if (e == cudaSuccess) e = cudaStreamSynchronize(g->stream);
    return e == cudaSuccess ? GP_OK : device_fail(b, e, what);
}

/* Starts the DMA of piece k between its half and the device (dev: the
 * device side of the whole copy), recorded on the half's event. */
static cudaError_t dma_piece(gp_cuda *c, const staging *g, int upload, void *dev, size_t k)
{
    int half = (int)(k & 1);
    char *d = (char *)dev + piece_offset(g, k);
    cudaError_t e = upload ? cudaMemcpyAsync(d, g->half[half], piece_length(g, k), cudaMemcpyHostToDevice, g->stream)
                           : cudaMemcpyAsync(g->half[half], d, piece_length(g, k), cudaMemcpyDeviceToHost, g->stream);
    if (e == cudaSuccess) e = cudaEventRecord((cudaEvent_t)c->ev[half], g->stream);
    return e;
}

/* A copy through the two halves: while the CPU fills (upload) or empties
 * (download) one half, the DMA of the other half runs. A half is touched
 * by the CPU only after its last DMA finished (its event). */
static gp_status copy_staged(gp_base *b, gp_cuda *c, gp_hbuf *stage, int upload, void *dev,
                             char *host, size_t bytes, const char *what)
{
    staging g;
    gp_status st = stage_begin(b, c, stage, bytes, &g);
    if (st != GP_OK || g.n == 0) return st;
    gp_cuda_count(c, upload, bytes);
    cudaError_t e = cudaSuccess;
    /* a download starts with the first two pieces in flight */
    for (size_t k = 0; !upload && k < g.n && k < 2 && e == cudaSuccess; ++k) e = dma_piece(c, &g, 0, dev, k);
    for (size_t k = 0; k < g.n && e == cudaSuccess; ++k) {
        int half = (int)(k & 1);
        if ((!upload || k >= 2) && (e = cudaEventSynchronize((cudaEvent_t)c->ev[half])) != cudaSuccess) break;
        char *h = host + piece_offset(&g, k);
        if (upload) {
            gp_copy_parallel(g.half[half], h, piece_length(&g, k));
            e = dma_piece(c, &g, 1, dev, k);
        } else {
            gp_copy_parallel(h, g.half[half], piece_length(&g, k));
            if (k + 2 < g.n) e = dma_piece(c, &g, 0, dev, k + 2);
        }
    }
    /* a download has waited for its last piece's event, which reports the
     * errors of the work before it too: no second wait */
    if (!upload) return e == cudaSuccess ? GP_OK : device_fail(b, e, what);
    return stage_end(b, &g, e, what);
}

gp_status gp_cuda_upload_staged(gp_base *b, gp_cuda *c, gp_hbuf *stage, void *dst,
                                const void *src, size_t bytes, const char *what)
{
    /* the host side is only read on an upload */
    return copy_staged(b, c, stage, 1, dst, (char *)(uintptr_t)src, bytes, what);
}

gp_status gp_cuda_download_staged(gp_base *b, gp_cuda *c, gp_hbuf *stage, void *dst,
                                  const void *src, size_t bytes, const char *what)
{
    /* the device side is only read on a download */
    return copy_staged(b, c, stage, 0, (void *)(uintptr_t)src, dst, bytes, what);
}

/* Hoare's selection of the k-th smallest of v[0..n) (v is reordered). */
static double select_kth(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot) ++i;
            while (v[j] > pivot) --j;
            if (i <= j) {
                double t = v[i]; v[i] = v[j]; v[j] = t;
                ++i;
                if (j == 0) break;
                --j;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else break;
    }
    return v[k];
}

void gp_median_center(const double *pos, size_t n, double *scratch, double out[3])
{
    /* above GP_MEDIAN_SAMPLE particles, the median of an evenly strided
     * sample: a point of the bulk all the same, without three O(n) passes
     * on one core (~0.1 s at 2^24) */
    size_t m = n > GP_MEDIAN_SAMPLE ? GP_MEDIAN_SAMPLE : n;
    for (int d = 0; d < 3; ++d) {
        if (n == 0) { out[d] = 0.0; continue; }
        for (size_t k = 0; k < m; ++k) scratch[k] = pos[3 * (m == n ? k : (size_t)((uint64_t)k * n / m)) + d];
        out[d] = select_kth(scratch, m, m / 2);
    }
}

gp_status gp_cuda_unscale_results(gp_base *b, double G, double mass_scale, double len_scale,
                                  const double *rec, size_t ni, double *acc, double *pot)
{
    const int em = ilogb(mass_scale), el = ilogb(len_scale);
    const int ea = em - 2 * el, ep = em - el;
    const long long m = (long long)ni;
    long long bad = 0;
    /* x * 2^e rounds exactly as ldexp(x, e) does (both are correctly
     * rounded, subnormal and infinite results included) as long as 2^e
     * itself is a normal double; the multiplication is several times
     * faster than the library call (bench/results/gpu/raw/gpu-H200.md, "ldexp"). */
    const int normal = ea >= DBL_MIN_EXP - 1 && ea < DBL_MAX_EXP && ep >= DBL_MIN_EXP - 1 && ep < DBL_MAX_EXP;
    const double fa = normal ? ldexp(1.0, ea) : 0, fp = normal ? ldexp(1.0, ep) : 0;
#pragma omp parallel for schedule(static) reduction(+ : bad) if (m > 65536)
    for (long long k = 0; k < m; ++k) {
        const double *r = rec + 4 * k;
        double in[4] = {r[0], r[1], r[2], -r[3]}, out[4];
        for (int c = 0; c < 4; ++c) {
            out[c] = normal ? (G * in[c]) * (c < 3 ? fa : fp) : ldexp(G * in[c], c < 3 ? ea : ep);
            bad += !isfinite(out[c]) || (out[c] == 0 && in[c] != 0);
        }
        acc[3 * k] = out[0];
        acc[3 * k + 1] = out[1];
        acc[3 * k + 2] = out[2];
        if (pot) pot[k] = out[3];
    }
    if (bad)
        return gp_fail(b, GP_ERR_INVALID_ARGUMENT,
                       "%lld acceleration or potential component(s) are outside the range of a double "
                       "(the masses, G and the distances give values above 1.8e308 or below 2.2e-308); "
                       "choose units in which masses and distances are nearer 1", bad);
    return GP_OK;
}

gp_status gp_cuda_exact_sources(gp_solver *s, gp_base *b, gp_cuda *c, double G, double eps,
                                gp_get_fn get_pos, gp_get_fn get_vel, gp_exact_sources *src,
                                double **buf)
{
    gp_exact_sources e = { NULL, NULL, G, eps * eps, 0 };
    *src = e;
    gp_status st = gp_cuda_enter(b, c);
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    st = gp_exact_fetch(s, b, get_pos, get_vel, src, buf);
    b->stats.seconds_transfer += gp_wtime() - t0;
    return st;
}
