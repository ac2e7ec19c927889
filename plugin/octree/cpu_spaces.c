/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_spaces.c — per-thread workspaces kept between calls (cpu_spaces.h). */
#include "octree/cpu_spaces.h"

#include <stdlib.h>

int oct_spaces_reserve(oct_spaces *sp, int threads, uint32_t max_group)
{
    if (threads < 1) threads = 1;
    if (sp->max_group != max_group) {
        for (int k = 0; k < sp->n; k++) {
            oct_workspace_free(sp->walk[k]);
            sp->walk[k] = NULL;
        }
        sp->max_group = max_group;
    }
    if (threads <= sp->n) return 0;
    oct_workspace **w = realloc(sp->walk, (size_t)threads * sizeof *w);
    if (!w) return -1;
    sp->walk = w;
    oct_jerk_workspace **j = realloc(sp->jerk, (size_t)threads * sizeof *j);
    if (!j) return -1;
    sp->jerk = j;
    for (int k = sp->n; k < threads; k++) { w[k] = NULL; j[k] = NULL; }
    sp->n = threads;
    return 0;
}

oct_workspace *oct_spaces_walk(oct_spaces *sp, int k)
{
    if (k >= sp->n) return NULL;
    if (!sp->walk[k]) sp->walk[k] = oct_workspace_new(sp->max_group);
    return sp->walk[k];
}

oct_jerk_workspace *oct_spaces_jerk(oct_spaces *sp, int k)
{
    if (k >= sp->n) return NULL;
    if (!sp->jerk[k]) sp->jerk[k] = oct_jerk_workspace_new();
    return sp->jerk[k];
}

void oct_spaces_free(oct_spaces *sp)
{
    for (int k = 0; k < sp->n; k++) {
        oct_workspace_free(sp->walk[k]);
        oct_jerk_workspace_free(sp->jerk[k]);
    }
    free(sp->walk);
    free(sp->jerk);
    *sp = (oct_spaces){ 0 };
}
