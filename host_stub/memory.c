/* SPDX-License-Identifier: Apache-2.0 */
/*
 * memory.c — an up-front estimate of a run's memory, so that n = 3e8 on a
 * 23 GB machine is refused at once with the numbers instead of swapping
 * for an hour. The ABI has no call that asks a plugin for its needs, so the
 * plugin's share is a figure of what a plugin of its kind (its GP_CAP_*
 * bits, never its name) holds per particle.
 *
 * Per particle, at the run's peak (the IC arrays and the simulation's
 * arrays live together while the particles are handed over; the snapshot
 * writer copies pos/vel/mass/id at output times):
 *   host  224 B: gp_sim pos, vel, acc, two 3n scratch arrays, mass, id,
 *         active list, levels and the integrator's own arrays (rk4 keeps
 *         three more 3n arrays), plus the IC or snapshot copy (64 B);
 *   a GPU plugin       96 B on the host (staging; device memory is the
 *                      plugin's own check, it answers GP_ERR_OUT_OF_MEMORY),
 *   an MPI plugin     256 B (its tree and the other ranks' cells it imports),
 *   a tree plugin     192 B (particles in Peano-Hilbert order, keys, nodes
 *                      with multipoles, group lists; cpu-tree),
 *   an exact plugin    64 B (its copy of positions and masses, and the
 *                      state; cpu-direct),
 *   any other         256 B;
 * plus 64 MiB for the program, libraries and thread stacks. The figures
 * come from max RSS of real runs (bench/results/cpu-tree/raw/cpu-tree.md, "gravhost's
 * memory estimate"); the estimate should stay within a few percent.
 */
#include "memory.h"
#include "gravplug.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_BYTES 224
#define BASE_BYTES (UINT64_C(64) << 20)

static uint64_t plugin_bytes(uint64_t caps)
{
    if (caps & GP_CAP_GPU) return 96;
    if (caps & GP_CAP_MPI) return 256;
    if (caps & GP_CAP_TREE) return 192;
    if (caps & GP_CAP_EXACT) return 64;
    return 256;
}

uint64_t gh_memory_needed(uint64_t n, uint64_t caps)
{
    uint64_t per = HOST_BYTES + plugin_bytes(caps);
    if (n > (UINT64_MAX - BASE_BYTES) / per) return UINT64_MAX;
    return BASE_BYTES + n * per;
}

/* The first number in a small file, or 0 ("max", missing, unreadable). */
static uint64_t read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    if (fscanf(f, "%llu", &v) != 1) v = 0;
    fclose(f);
    return v;
}

uint64_t gh_memory_available(char *what, size_t whatlen)
{
    uint64_t avail = 0;
    snprintf(what, whatlen, "unknown");
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                avail = (uint64_t)kb * 1024;
                snprintf(what, whatlen, "MemAvailable in /proc/meminfo");
            }
        fclose(f);
    }
    /* cgroup v2, then v1; a limit near 2^63 means "none" */
    static const char *const limits[][2] = {
        { "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current" },
        { "/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes" },
    };
    for (int k = 0; k < 2; ++k) {
        uint64_t limit = read_number(limits[k][0]);
        if (limit == 0 || limit >= (UINT64_C(1) << 62)) continue;
        uint64_t used = read_number(limits[k][1]);
        uint64_t left = limit > used ? limit - used : 0;
        if (avail == 0 || left < avail) {
            avail = left;
            snprintf(what, whatlen, "the cgroup limit %s minus its usage", limits[k][0]);
        }
        break;
    }
    return avail;
}

int gh_memory_check(uint64_t n, const char *plugin, uint64_t caps, char *err, size_t errlen)
{
    char what[128];
    uint64_t avail = gh_memory_available(what, sizeof what);
    uint64_t need = gh_memory_needed(n, caps);
    if (avail == 0 || need <= avail) return 0;
    snprintf(err, errlen,
             "%" PRIu64 " particles on %s need about %.3g GB of memory (%" PRIu64 " bytes a particle, "
             "docs/CONFIG.md) but only %.3g GB is available (%s): use fewer particles or a machine "
             "with more memory",
             n, plugin ? plugin : "this plugin", (double)need / 1e9, (need - BASE_BYTES) / (n ? n : 1),
             (double)avail / 1e9, what);
    return -1;
}
