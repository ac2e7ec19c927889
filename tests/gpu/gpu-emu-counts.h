/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-counts.h — what the CPU emulation of CUDA counts, per host
 * thread: the fixed costs of a call (kernel launches, copies, waits) that
 * a GPU pays whatever the work, so a test can pin them. The counters live
 * in their own small library (build/emu/lib/libgpemu-counts.so, from
 * gpu-emu-counts.cc) that the emulated plugins load, so a plugin still
 * exports gravplug_entry alone; a test finds GP_EMU_COUNTS_SYMBOL with
 * dlsym on the plugin's handle. C and C++.
 */
#ifndef GP_CUDA_EMU_COUNTS_H
#define GP_CUDA_EMU_COUNTS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gp_emu_counts {
    unsigned long long launches;     /* kernels started (GP_LAUNCH: emu::launch)        */
    unsigned long long cub_calls;    /* CUB algorithms run (a few kernels each on a GPU) */
    unsigned long long copies_h2d, copies_d2h, copies_d2d; /* cudaMemcpy(Async) calls   */
    unsigned long long bytes_h2d, bytes_d2h;
    unsigned long long memsets;      /* cudaMemset(Async)                               */
    unsigned long long stream_syncs; /* cudaStreamSynchronize                           */
    unsigned long long event_syncs;  /* cudaEventSynchronize                            */
    unsigned long long device_syncs; /* cudaDeviceSynchronize, and cudaMemcpy's own wait */
} gp_emu_counts;

#define GP_EMU_COUNTS_SYMBOL "gp_emu_thread_counts"
/* The calling thread's counters (never NULL); the caller may reset them. */
gp_emu_counts *gp_emu_thread_counts(void);
typedef gp_emu_counts *(*gp_emu_counts_fn)(void);

#if defined(GP_TEST_GPU_PLUGIN_H) && defined(GP_EMU_BUILD)
/* For a test of counts (after gpu-plugin.h, built with GP_EMU_BUILD): the
 * emulated build of plugin `name` (GP_BUILD, else GP_EMU_BUILD) in *p and
 * its counters; skips the whole test, saying why, where that is not it. */
static inline gp_emu_counts_fn gpu_emu_open_counted(gpu_plugin *p, const char *name)
{
    if (!getenv("GP_BUILD")) setenv("GP_BUILD", GP_EMU_BUILD, 1);
    char why[1200];
    if (gpu_plugin_open(p, name, why, sizeof why) != 0) skip_all(why);
    gp_emu_counts_fn f = (gp_emu_counts_fn)dlsym(p->handle, GP_EMU_COUNTS_SYMBOL);
    if (!f) {
        snprintf(why, sizeof why, "%s is not the emulated build (no " GP_EMU_COUNTS_SYMBOL ")", name);
        skip_all(why);
    }
    return f;
}
#endif

#ifdef __cplusplus
}
#endif

#endif /* GP_CUDA_EMU_COUNTS_H */
