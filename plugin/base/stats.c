/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.c — get_stats's copy of the counters (only as far as the caller's
 * struct reaches) and the wall clock the plugins time their phases with.
 */
#include "base/base_instance.h"

#include <string.h>
#include <time.h>

gp_status gp_base_get_stats(gp_base *base, gp_stats *out)
{
    if (!out)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "get_stats was given a NULL gp_stats; pass a gp_stats "
                       "with struct_size = sizeof(gp_stats)");
    if (out->struct_size < sizeof(size_t))
        return gp_fail(base, GP_ERR_ABI_MISMATCH,
                       "gp_stats.struct_size is %zu, too small to hold any "
                       "counter; set it to sizeof(gp_stats)", out->struct_size);
    size_t keep = out->struct_size;
    size_t n = keep < sizeof(gp_stats) ? keep : sizeof(gp_stats);
    /* Copy the counters after struct_size, only as far as the caller's
     * struct reaches; struct_size itself stays the caller's. */
    memcpy((char *)out + sizeof(size_t), (const char *)&base->stats + sizeof(size_t),
           n - sizeof(size_t));
    return GP_OK;
}

double gp_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
