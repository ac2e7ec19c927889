/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gp_cuda.h — what both CUDA plugins need around their kernels: picking the
 * device, turning every CUDA error into GP_ERR_DEVICE with the CUDA string
 * and what was being done, sizing buffers from cudaMemGetInfo, device
 * buffers that grow, and a per-instance stream.
 *
 * Host-side C (compiled by gcc against cuda_runtime_api.h, linked with the
 * static CUDA runtime), so the plugins' book-keeping stays in .c files and
 * the .cu files hold kernels and their extern "C" launchers only.
 *
 * Nothing here calls exit or prints; failures become a status and a
 * sentence in the instance (gp_fail from plugin/base).
 */
#ifndef GP_CUDA_H
#define GP_CUDA_H

#include <stddef.h>
#include "base/base_instance.h"
#include "base/base_outputs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One instance's view of its GPU. */
typedef struct gp_cuda {
    int    device;           /* ordinal in use                               */
    void  *stream;           /* cudaStream_t, non-blocking, one per instance */
    char   name[256];        /* cudaDeviceProp.name                          */
    int    sm_count;         /* multiprocessors                              */
    int    cc_major, cc_minor;
    size_t total_mem;        /* bytes of device memory                       */
    int    open;             /* 1 after gp_cuda_open succeeded               */
    void  *ev[2];            /* cudaEvent_t: the two halves of the staging   */
    void  *tev[2];           /* cudaEvent_t with timing: gp_cuda_fetch's copies */
    void  *pev[2];           /* cudaEvent_t with timing: gp_cuda_phase's work */
    int    phase_pending;    /* pev holds a phase not yet read               */
    /* bytes copied between host and device since open: every copy of the
     * plugins goes through this file or gp_cuda_count */
    unsigned long long bytes_h2d, bytes_d2h;
} gp_cuda;

/* Picks device base->device (-1: device 0), checks that it exists and that
 * this build's kernels load on it (probe: a cudaError_t-returning function
 * from the plugin's .cu, e.g. cudaFuncGetAttributes on one kernel; may be
 * NULL), creates the stream. GP_ERR_DEVICE with a sentence otherwise. */
gp_status gp_cuda_open(gp_base *b, gp_cuda *c, int (*probe)(void));

/* gp_cuda_open as init's last step: a failure's sentence also goes to
 * last_error(NULL) (init's caller has no instance to ask), and success
 * leaves no sentence behind. */
gp_status gp_cuda_open_in_init(gp_base *b, gp_cuda *c, int (*probe)(void));

/* compute_field's checks (plugin/base) and the CUDA plugins' own limit:
 * the points of one call are counted in 32-bit integers on the device. */
gp_status gp_cuda_check_field(gp_base *b, size_t m, const double *points, const double *acc);

/* Destroys the stream. Safe on a zeroed or failed gp_cuda. */
void gp_cuda_close(gp_cuda *c);

/* Makes c's device current on the calling thread (every entry point calls
 * this first: the current device is per thread in CUDA). */
gp_status gp_cuda_enter(gp_base *b, gp_cuda *c);

/* ABI 1.3's groups and outputs at points on a CUDA plugin: the exact pass
 * on the host (base/exact_ex.c) over host copies of the device's positions
 * and velocities (get_pos, get_vel: the plugin's own get_positions and
 * get_velocities), with G and eps. Exact, but O(n) bytes each way per call,
 * so no GP_CAP_SOURCE_GROUPS. *buf (free it) holds the copies. The copies'
 * time counts as transfer. */
gp_status gp_cuda_exact_sources(gp_solver *s, gp_base *b, gp_cuda *c, double G, double eps,
                                gp_get_fn get_pos, gp_get_fn get_vel, gp_exact_sources *src,
                                double **buf);

/* Counts a host<->device copy made outside this file (upload: 1 for
 * host->device). */
void gp_cuda_count(gp_cuda *c, int upload, size_t bytes);

/* Logs at GP_LOG_DEBUG "<call>: host->device N bytes, device->host M
 * bytes, T ms", what was copied since the counters were h2d0 and d2h0 and
 * the wall time since t0 (taken at the start of the ABI call `call`), and
 * returns st unchanged. */
gp_status gp_cuda_log_bytes(gp_base *b, const gp_cuda *c, const char *call, unsigned long long h2d0,
                            unsigned long long d2h0, double t0, gp_status st);

/* err == cudaSuccess -> GP_OK; else GP_ERR_DEVICE with "while <doing>:
 * <cudaGetErrorName>: <cudaGetErrorString>" and advice. err is an int so
 * callers need not include the CUDA headers. */
gp_status gp_cuda_check(gp_base *b, int err, const char *doing);

/* Waits for the instance's stream; errors of earlier asynchronous work
 * surface here. */
gp_status gp_cuda_sync(gp_base *b, gp_cuda *c, const char *doing);

/* Checks that `bytes` more device memory fit in what cudaMemGetInfo says is
 * free (keeping a safety margin); GP_ERR_OUT_OF_MEMORY with a sentence
 * naming what (e.g. "tree buffers for n = 16777216 particles"), how much it
 * needs and how much is free otherwise. */
gp_status gp_cuda_fits(gp_base *b, gp_cuda *c, size_t bytes, const char *what);

/* A device buffer that is reallocated only when it must grow. */
typedef struct gp_dbuf {
    void  *ptr;
    size_t bytes;
} gp_dbuf;

/* Ensures buf holds at least `bytes` (contents are NOT kept when it grows).
 * GP_ERR_OUT_OF_MEMORY with a sentence naming `what` when it cannot. */
gp_status gp_dbuf_reserve(gp_base *b, gp_dbuf *buf, size_t bytes, const char *what);

/* As gp_dbuf_reserve, but keeps the first `keep` bytes when it grows. */
gp_status gp_dbuf_grow_keep(gp_base *b, gp_cuda *c, gp_dbuf *buf, size_t bytes,
                            size_t keep, const char *what);

void gp_dbuf_free(gp_dbuf *buf);

/* A kernel's results in the caller's units. rec holds ni records of four
 * doubles {ax, ay, az, sum m/r} computed in scaled units (lengths / len_scale,
 * masses / mass_scale, both exact powers of two: 1 for ordinary data) and
 * without G or sign; written out as G (M / L^2) a into acc[3ni] and
 * -G (M / L) phi into pot[ni] (may be NULL). A value that leaves double's
 * range (inf, or 0 from a nonzero sum) is GP_ERR_INVALID_ARGUMENT with a
 * sentence, never GP_OK with inf or 0. */
gp_status gp_cuda_unscale_results(gp_base *b, double G, double mass_scale, double len_scale,
                                  const double *rec, size_t ni, double *acc, double *pot);

/* Host<->device copies on the instance's stream, then synchronised (the
 * host buffers are ordinary pageable memory). */
gp_status gp_cuda_upload(gp_base *b, gp_cuda *c, void *dst, const void *src,
                         size_t bytes, const char *what);
gp_status gp_cuda_download(gp_base *b, gp_cuda *c, void *dst, const void *src,
                           size_t bytes, const char *what);

/* Work enqueued between gp_cuda_phase_begin and _end is timed on the
 * device, with no wait of its own; gp_cuda_phase_seconds, called after a
 * later wait on the stream, gives its seconds once (0 when none is
 * pending or the runtime cannot time it). */
gp_status gp_cuda_phase_begin(gp_base *b, gp_cuda *c, const char *what);
gp_status gp_cuda_phase_end(gp_base *b, gp_cuda *c, const char *what);
double gp_cuda_phase_seconds(gp_cuda *c);

/* A host->device copy enqueued on the stream without a wait of its own,
 * for a call that waits on the stream later (a fetch, a staged download,
 * gp_cuda_sync) before it returns: src must stay unchanged until then. */
gp_status gp_cuda_send(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes, const char *what);

/* Device->host copies enqueued behind the work already on the stream and
 * waited for together, once: gp_cuda_fetch_begin, any number of
 * gp_cuda_fetch, then gp_cuda_fetch_wait, which gives the copies' own
 * seconds (timed on the device, so the work before them is not counted;
 * 0 where the runtime cannot time them). dst should be pinned memory
 * (gp_hbuf) for the copies to run asynchronously. */
gp_status gp_cuda_fetch_begin(gp_base *b, gp_cuda *c, const char *what);
gp_status gp_cuda_fetch(gp_base *b, gp_cuda *c, void *dst, const void *src, size_t bytes,
                        const char *what);
gp_status gp_cuda_fetch_wait(gp_base *b, gp_cuda *c, const char *what, double *copy_seconds);

/* A host buffer in page-locked (pinned) memory, kept for the life of the
 * instance and grown only when it must: copies from it run at the bus's
 * speed and asynchronously. Falls back to malloc (pinned = 0) where the
 * driver refuses page-locked memory. */
typedef struct gp_hbuf {
    void  *ptr;
    size_t bytes;
    int    pinned;
} gp_hbuf;

gp_status gp_hbuf_reserve(gp_base *b, gp_hbuf *buf, size_t bytes, const char *what);
void gp_hbuf_free(gp_hbuf *buf);

/* memcpy with OpenMP threads for large copies (a pageable -> pinned copy
 * on one core runs at a fraction of the bus's speed). */
void gp_copy_parallel(void *dst, const void *src, size_t bytes);

/* Host<->device copies of pageable memory through the instance's pinned
 * staging `stage` (GP_STAGE_CHUNK bytes per half, two halves): the host
 * copy into one half overlaps the DMA of the other. Synchronised on
 * return. The seconds spent are added to *seconds (may be NULL). */
#define GP_STAGE_CHUNK ((size_t)8 << 20)
gp_status gp_cuda_upload_staged(gp_base *b, gp_cuda *c, gp_hbuf *stage, void *dst,
                                const void *src, size_t bytes, const char *what);
gp_status gp_cuda_download_staged(gp_base *b, gp_cuda *c, gp_hbuf *stage, void *dst,
                                  const void *src, size_t bytes, const char *what);

/* A coordinate shift that keeps float coordinates accurate: the per-axis
 * median of pos[3n] (robust to a few particles far outside the bulk, which
 * would drag a mean or a box centre away); above GP_MEDIAN_SAMPLE
 * particles the median of every (n / GP_MEDIAN_SAMPLE)-th one, so it costs
 * O(1) and not three passes over n. Uses scratch[min(n, sample)] doubles. */
#define GP_MEDIAN_SAMPLE ((size_t)1 << 16)
void gp_median_center(const double *pos, size_t n, double *scratch, double out[3]);

#ifdef __cplusplus
}
#endif

#endif /* GP_CUDA_H */
