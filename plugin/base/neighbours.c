/* SPDX-License-Identifier: Apache-2.0 */
/*
 * neighbours.c — ABI 1.2's neighbour lists on the plugin side: the CSR
 * lists of the last compute_forces_ex that asked for them, kept in the
 * instance until get_neighbours copies them out.
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"

#include <stdlib.h>
#include <string.h>

void gp_neighbours_forget(gp_base *base)
{
    free(base->nb_offset);
    free(base->nb_list);
    base->nb_offset = NULL;
    base->nb_list = NULL;
    base->nb_rows = 0;
}

void gp_neighbours_keep(gp_base *base, size_t rows, uint64_t *offset, uint32_t *list)
{
    gp_neighbours_forget(base);
    base->nb_offset = offset;
    base->nb_list = list;
    base->nb_rows = rows;
}

gp_status gp_neighbours_get(gp_base *base, size_t cap, uint64_t *offset, uint32_t *list,
                            size_t *needed)
{
    static const char fn[] = "get_neighbours";
    if (!base->nb_offset)
        return gp_fail(base, GP_ERR_BAD_STATE,
                       "%s: there are no neighbour lists; call compute_forces_ex with "
                       "nb_radius or nb_step first (set_particles forgets them)", fn);
    size_t total = (size_t)base->nb_offset[base->nb_rows];
    if (needed) *needed = total;
    if (!offset)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL offset array; pass room for %zu entries (the "
                       "active particles of that call, plus one)", fn, base->nb_rows + 1);
    if (cap < total)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: the lists hold %zu neighbours but cap is %zu; call again with "
                       "room for *needed entries", fn, total, cap);
    if (total && !list)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL list with %zu neighbours to copy; pass room for "
                       "them", fn, total);
    memcpy(offset, base->nb_offset, (base->nb_rows + 1) * sizeof *offset);
    if (total) memcpy(list, base->nb_list, total * sizeof *list);
    return GP_OK;
}
