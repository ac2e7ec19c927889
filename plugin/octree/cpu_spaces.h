/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_spaces.h — the walk's and the jerk's per-thread workspaces, kept by a
 * plugin instance from call to call. Made afresh every call, their lists
 * (thousands of entries a group) came from new pages each time, and
 * touching those cost a small call (a GRAPE-6 block of 16 i-particles) a
 * quarter of its time in page faults.
 *
 * Use: oct_spaces_reserve before a parallel region of up to `threads`
 * threads, then thread k takes slot k (omp_get_thread_num) with
 * oct_spaces_walk / oct_spaces_jerk; nothing is shared between slots.
 */
#ifndef GP_OCTREE_CPU_SPACES_H
#define GP_OCTREE_CPU_SPACES_H

#include <stdint.h>

#include "octree/cpu_walk.h"
#include "octree/tree_jerk.h"

typedef struct oct_spaces {
    int n;                       /* slots                                   */
    uint32_t max_group;          /* the walk workspaces' group size         */
    oct_workspace **walk;        /* per slot, NULL until first taken        */
    oct_jerk_workspace **jerk;
} oct_spaces;   /* zero-initialised: empty */

/* Room for `threads` slots of walk workspaces for groups of max_group
 * (those of another size are dropped). Returns 0, or -1 when out of memory. */
int oct_spaces_reserve(oct_spaces *sp, int threads, uint32_t max_group);

/* Slot k's workspaces, made on first use; NULL when out of memory. */
oct_workspace *oct_spaces_walk(oct_spaces *sp, int k);
oct_jerk_workspace *oct_spaces_jerk(oct_spaces *sp, int k);

void oct_spaces_free(oct_spaces *sp);

#endif /* GP_OCTREE_CPU_SPACES_H */
