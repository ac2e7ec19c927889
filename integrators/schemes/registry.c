/* SPDX-License-Identifier: Apache-2.0 */
/*
 * registry.c — the integrators, found by name.
 *
 * The built-in schemes are listed below, one line each: adding a scheme is
 * its own file (a gp_integrator_def named gp_scheme_NAME with its settings
 * table) plus one line here. A scheme of one's own, outside the library
 * (integrator research, a test), is registered with
 * gp_integrator_register_def. Lookups are by exact name; listing is sorted
 * by name.
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"

#define GP_BUILTIN_SCHEMES(X) \
    X(block_kdk) X(block_rk2) X(cc) X(cc_kdk) X(hermite) X(hold) X(hold_kdk) X(leapfrog) X(rk2) X(rk4) \
    X(rk8pd)

/* A build may add its own line without editing this file, e.g.
 * -D'GP_EXTRA_SCHEMES(X)=X(toy_euler)' (tests/integrators/toy-scheme.sh's library:
 * a scheme file and this one line, nothing else). */
#ifndef GP_EXTRA_SCHEMES
#define GP_EXTRA_SCHEMES(X)
#endif
#define GP_ALL_SCHEMES(X) GP_BUILTIN_SCHEMES(X) GP_EXTRA_SCHEMES(X)

#define GP_DECLARE_SCHEME(name) extern const gp_integrator_def gp_scheme_##name;
GP_ALL_SCHEMES(GP_DECLARE_SCHEME)

#define GP_MAX_INTEGRATORS 32

static const gp_integrator_def *registry[GP_MAX_INTEGRATORS];
static size_t registry_count;

int gp_integrator_register_def(const gp_integrator_def *def)
{
    if (!def || !def->name || registry_count == GP_MAX_INTEGRATORS || gp_integrator_find(def->name))
        return -1;
    /* insertion into the sorted list */
    size_t at = registry_count;
    while (at > 0 && strcmp(registry[at - 1]->name, def->name) > 0) {
        registry[at] = registry[at - 1];
        --at;
    }
    registry[at] = def;
    ++registry_count;
    return 0;
}

/* The built-ins are there as soon as the library is loaded. */
__attribute__((constructor)) static void register_builtins(void)
{
#define GP_REGISTER_SCHEME(name) (void)gp_integrator_register_def(&gp_scheme_##name);
    GP_ALL_SCHEMES(GP_REGISTER_SCHEME)
}

const gp_integrator_def *gp_integrator_find(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < registry_count; ++i)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

GRAVPLUG_EXPORT size_t gp_integrator_count(void) { return registry_count; }

GRAVPLUG_EXPORT const char *gp_integrator_name(size_t index)
{
    return index < registry_count ? registry[index]->name : NULL;
}

GRAVPLUG_EXPORT const char *gp_integrator_summary(size_t index)
{
    return index < registry_count ? registry[index]->summary : NULL;
}

GRAVPLUG_EXPORT gp_status gp_integrator_flags(const char *name, unsigned *flags)
{
    const gp_integrator_def *def = gp_integrator_find(name);
    if (!def || !flags) return GP_ERR_INVALID_ARGUMENT;
    *flags = def->flags;
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_integrator_param(const char *name, size_t index,
                                              const char **param_name,
                                              const char **default_value,
                                              const char **doc)
{
    const gp_integrator_def *def = gp_integrator_find(name);
    if (!def || index >= def->n_settings) return GP_ERR_INVALID_ARGUMENT;
    if (param_name) *param_name = def->settings[index].name;
    if (default_value) *default_value = def->settings[index].deflt;
    if (doc) *doc = def->settings[index].doc;
    return GP_OK;
}
