/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-counts.cc — the emulator's counters (gpu-emu-counts.h), one set
 * per host thread: kernels run on the thread that launches them, so a
 * test's calls are counted apart from any other thread's.
 */
#include "gpu-emu-counts.h"

extern "C" __attribute__((visibility("default"))) gp_emu_counts *gp_emu_thread_counts(void)
{
    static thread_local gp_emu_counts c;
    return &c;
}
