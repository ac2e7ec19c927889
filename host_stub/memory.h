/* SPDX-License-Identifier: Apache-2.0 */
/* memory.h — will a run of n particles fit in this machine's memory? */
#ifndef GH_MEMORY_H
#define GH_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Bytes a gravhost run of n particles on a plugin with the capabilities
 * caps (GP_CAP_*) needs on the host, at its peak: see memory.c for where
 * the figures come from. */
uint64_t gh_memory_needed(uint64_t n, uint64_t caps);

/* Bytes this process may still use: MemAvailable from /proc/meminfo, or
 * the cgroup's limit minus its usage when that is smaller. 0: unknown.
 * what gets a few words naming the source. */
uint64_t gh_memory_available(char *what, size_t whatlen);

/* 0 if the run fits (or the available memory is unknown); else -1 and a
 * sentence with both numbers in err, naming the plugin (its short name). */
int gh_memory_check(uint64_t n, const char *plugin, uint64_t caps, char *err, size_t errlen);

#endif
