/* SPDX-License-Identifier: Apache-2.0 */
/* particle_set.c — gp_ic's one function (particle_set.h). */
#include "particle_set.h"

#include <stdlib.h>
#include <string.h>

GRAVPLUG_EXPORT void gp_ic_free(gp_ic *ic)
{
    if (!ic) return;
    free(ic->pos);
    free(ic->vel);
    free(ic->mass);
    free(ic->id);
    memset(ic, 0, sizeof *ic);
}
