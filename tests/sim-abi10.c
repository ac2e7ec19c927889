/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim-abi10.c — a test fixture: cpu-direct dressed as an ABI 1.0 plugin.
 * It forwards every 1.0 call to the real cpu-direct (opened from the path
 * GP_CPU_DIRECT_SO) and reports abi_minor 0 and the struct_size of the 1.0
 * table, so a host must take the 1.0 path with it (tests/integrators-path.c,
 * tests/integrators-masses.c). Not the loader's fixture (tests/fixtures/abi10.c).
 */
#include <dlfcn.h>
#include <stddef.h>

#include "gravplug.h"

static gp_api table;

GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)
{
    if (abi_major != GRAVPLUG_ABI_MAJOR) return NULL;
    if (!table.init) {
        void *h = dlopen(GP_CPU_DIRECT_SO, RTLD_NOW | RTLD_LOCAL);
        gravplug_entry_fn entry = h ? (gravplug_entry_fn)dlsym(h, GRAVPLUG_ENTRY_SYMBOL) : NULL;
        const gp_api *real = entry ? entry(abi_major) : NULL;
        if (!real) return NULL;
        gp_api t = *real;
        t.abi_minor = 0;
        t.struct_size = offsetof(gp_api, set_state);   /* the 1.0 layout */
        t.name = "cpu-direct-abi10";
        t.capabilities &= ~(GP_CAP_PREDICT | GP_CAP_SOURCE_SUBSET);
        /* past struct_size: a host must not read these; poison them anyway */
        t.set_state = NULL;
        t.predict = NULL;
        t.get_positions = NULL;
        t.set_source_subset = NULL;
        t.update_masses = NULL;
        table = t;
    }
    return &table;
}
