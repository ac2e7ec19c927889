/* SPDX-License-Identifier: Apache-2.0 */
/*
 * groups.c — ABI 1.3's source groups on the plugin side: a copy of the
 * caller's group ids, one per particle, until cleared or set_particles.
 * The rule itself is gp_group_skips (plugin_base.h).
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"

#include <stdlib.h>
#include <string.h>

void gp_groups_clear(gp_base *base)
{
    free(base->p.group);
    base->p.group = NULL;
}

gp_status gp_groups_set(gp_base *base, size_t n, const uint32_t *group)
{
    static const char fn[] = "set_source_groups";
    gp_status st = gp_need_particles(base, fn);
    if (st != GP_OK) return st;
    if (!group) {
        gp_groups_clear(base);
        return GP_OK;
    }
    if (n != base->p.n)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given n = %zu groups but set_particles gave %zu particles; pass "
                       "one group per particle (or group NULL to clear them)", fn, n, base->p.n);
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!copy)
        return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the groups of %zu particles; free memory", fn, n);
    memcpy(copy, group, n * sizeof *copy);
    gp_groups_clear(base);
    base->p.group = copy;
    return GP_OK;
}
