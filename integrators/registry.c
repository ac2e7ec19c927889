/*
 * registry.c — integrators registered by name.
 *
 * Each integrator's file registers its gp_integrator_def from a constructor
 * (GP_REGISTER_INTEGRATOR), so adding a scheme means adding one file: no
 * central list to edit. Lookups are by exact name; listing is sorted by
 * name so it does not depend on link order.
 */
#include <stdlib.h>
#include <string.h>

#include "sim_core.h"

#define GP_MAX_INTEGRATORS 32

static const gp_integrator_def *registry[GP_MAX_INTEGRATORS];
static size_t registry_count;

void gp_integrator_register_def(const gp_integrator_def *def)
{
    if (registry_count == GP_MAX_INTEGRATORS || gp_integrator_find(def->name)) return;
    /* insertion into the sorted list (runs at load time only) */
    size_t at = registry_count;
    while (at > 0 && strcmp(registry[at - 1]->name, def->name) > 0) {
        registry[at] = registry[at - 1];
        --at;
    }
    registry[at] = def;
    ++registry_count;
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

GRAVPLUG_EXPORT gp_status gp_integrator_param(const char *name, size_t index,
                                              const char **param_name,
                                              const char **default_value,
                                              const char **doc)
{
    const gp_integrator_def *def = gp_integrator_find(name);
    if (!def) return GP_ERR_INVALID_ARGUMENT;
    for (size_t i = 0; def->params[i]; ++i) {
        if (i != index) continue;
        if (param_name) *param_name = def->params[i];
        if (default_value) *default_value = def->defaults[i];
        if (doc) *doc = def->docs[i];
        return GP_OK;
    }
    return GP_ERR_INVALID_ARGUMENT;
}
