/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin_base.h — backend-neutral helpers every gravplug plugin links in:
 * a plugin's main file includes this (every part, and the macros that
 * write its table); the other files include the part they use.
 *
 * Every plugin (cpu-direct, cpu-tree, cuda-direct, cuda-tree) has to do the
 * same book-keeping around its solver: an error sentence per instance, the
 * input validation gravplug.h requires (and which must leave the instance
 * unchanged on failure), a parameter table driven by its gp_param_info[],
 * a copy of the particles and of the active index list, and statistics.
 * This file does all of that once so the plugins hold only their algorithm.
 *
 * The parts, one header each: base/base_instance.h (gp_base, its life cycle,
 * errors and statistics: instance.c, errors.c, stats.c), base/base_params.h
 * (the parameter table: params.c), base/base_particles.h (1.0's checks and
 * particle store, threaded scans: particles.c, subsets.c, scan.c),
 * base/base_state.h (1.1's held state, predict, subsets, masses: state.c,
 * subsets.c), base/base_outputs.h (results' checks, 1.2's outputs and
 * neighbour lists, 1.3's groups and exact pass: outputs.c, neighbours.c,
 * groups.c, exact_ex.c).
 *
 * How a plugin uses it
 *
 *     struct gp_solver {           // the opaque type of gravplug.h
 *         gp_base base;            // FIRST member, always
 *         ... solver state ...
 *     };
 *
 *     static const gp_param_info params[] = {
 *         {"G",   GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant"},
 *         {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)", "Plummer softening length"},
 *     };
 *     enum { P_G, P_EPS };         // indices into params[], same order
 *
 *     init:          return gp_solver_create(out, sizeof **out, "cpu-direct",
 *                                            args, params, 2);
 *                    (on failure the sentence is already in last_error(NULL))
 *     finalize:      gp_base_free(&s->base); free(s);
 *     set_param:     return gp_base_set_param(&s->base, name, value);
 *     get_param:     return gp_base_get_param(&s->base, name, buf, buflen);
 *     set_particles: return gp_particles_set(&s->base, n, pos, mass);
 *                    (the copy is in s->base.p; rebuild your own structures
 *                    from it — if that can fail, validate FIRST with
 *                    gp_check_particles, build into temporaries, and only
 *                    then call gp_particles_set, so failure changes nothing)
 *     compute_forces: st = gp_check_compute(&s->base, acc); then use
 *                    s->base.p and gp_param_double(&s->base, P_EPS)
 *     last_error:    return gp_base_last_error(s ? &s->base : NULL);
 *
 * Every gp_check_* / gp_particles_* function validates completely before it
 * changes anything, and on failure returns the status after writing a
 * sentence with gp_fail. A NULL instance (s == NULL) is answered with
 * GP_ERR_INVALID_ARGUMENT by gp_null_instance().
 *
 * Thread safety: no global mutable state except the thread-local buffer for
 * init failures (last_error(NULL)), as the ABI asks. Each plugin .so links
 * its own copy of these objects (hidden visibility), so two plugins never
 * share anything.
 *
 * This header is C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_PLUGIN_BASE_H
#define GP_PLUGIN_BASE_H

#include "gravplug.h"
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_params.h"
#include "base/base_particles.h"
#include "base/base_state.h"



/* The five table entries that every plugin implements identically, given
 * that gp_base is the first member `base` of its struct gp_solver:
 * describe_params, set_param, get_param, get_stats, last_error. Expands to
 * static functions PREFIX_describe_params ... PREFIX_last_error. */
#define GP_PLUGIN_COMMON_ENTRIES(PREFIX, PLUGIN_NAME_, PARAMS, N_PARAMS_)                   \
    static const gp_param_info *PREFIX##_describe_params(size_t *count)                     \
    {                                                                                       \
        if (count) *count = (N_PARAMS_);                                                    \
        return (PARAMS);                                                                    \
    }                                                                                       \
    static gp_status PREFIX##_set_param(gp_solver *s, const char *name, const char *value)  \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "set_param");                         \
        return gp_base_set_param(&s->base, name, value);                                    \
    }                                                                                       \
    static gp_status PREFIX##_get_param(gp_solver *s, const char *name, char *buf,          \
                                        size_t buflen)                                      \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_param");                         \
        return gp_base_get_param(&s->base, name, buf, buflen);                              \
    }                                                                                       \
    static gp_status PREFIX##_get_stats(gp_solver *s, gp_stats *out)                        \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_stats");                         \
        return gp_base_get_stats(&s->base, out);                                            \
    }                                                                                       \
    static const char *PREFIX##_last_error(const gp_solver *s)                              \
    {                                                                                       \
        return gp_base_last_error(s ? &s->base : NULL);                                     \
    }

/* ABI 1.2 entry points every plugin on plugin/base answers the same way:
 * get_velocities from the held state, get_neighbours from the kept lists. */
#define GP_PLUGIN_12_ENTRIES(PREFIX, PLUGIN_NAME_)                                          \
    static gp_status PREFIX##_get_velocities(gp_solver *s, size_t n_sub,                    \
                                             const uint32_t *index, double *vel)            \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_velocities");                    \
        return gp_velocities_get(&s->base, n_sub, index, vel);                              \
    }                                                                                       \
    static gp_status PREFIX##_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset,    \
                                             uint32_t *list, size_t *needed)                \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "get_neighbours");                    \
        return gp_neighbours_get(&s->base, cap, offset, list, needed);                      \
    }

/* ABI 1.3's set_source_groups, the same in every plugin that keeps the
 * groups in plugin/base (the passes read base->p.group). */
#define GP_PLUGIN_13_ENTRIES(PREFIX, PLUGIN_NAME_)                                          \
    static gp_status PREFIX##_set_source_groups(gp_solver *s, size_t n,                     \
                                                const uint32_t *group)                      \
    {                                                                                       \
        if (!s) return gp_null_instance(PLUGIN_NAME_, "set_source_groups");                 \
        return gp_groups_set(&s->base, n, group);                                           \
    }


/* The plugin's one exported symbol: its table for the ABI major it was
 * built for, NULL for any other. */
#define GP_PLUGIN_ENTRY(API)                                                                \
    GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)                        \
    {                                                                                       \
        return abi_major == GRAVPLUG_ABI_MAJOR ? &(API) : NULL;                             \
    }

/* A plugin's function table for this ABI (1.0 and 1.1 entries), every entry
 * point named PREFIX_<entry> (cpu_tree_init, cpu_tree_compute_forces, ...):
 * one prefix per plugin, and a missing entry point is a compile error.
 *     static const gp_api api = GP_PLUGIN_API(cpu_tree, PLUGIN_NAME, GP_CAP_TREE | ...);
 *     GP_PLUGIN_ENTRY(api) */
#define GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES)                      \
        .abi_major = GRAVPLUG_ABI_MAJOR,                                                    \
        .struct_size = sizeof(gp_api), .name = (PLUGIN_NAME_), .version = GP_VERSION,       \
        .capabilities = (CAPABILITIES),                                                     \
        .describe_params = PREFIX##_describe_params, .init = PREFIX##_init,                 \
        .finalize = PREFIX##_finalize, .set_param = PREFIX##_set_param,                     \
        .get_param = PREFIX##_get_param, .set_particles = PREFIX##_set_particles,           \
        .update_positions = PREFIX##_update_positions,                                      \
        .set_active_subset = PREFIX##_set_active_subset,                                    \
        .compute_forces = PREFIX##_compute_forces, .compute_field = PREFIX##_compute_field, \
        .get_stats = PREFIX##_get_stats, .last_error = PREFIX##_last_error,                 \
        .set_state = PREFIX##_set_state, .predict = PREFIX##_predict,                       \
        .get_positions = PREFIX##_get_positions,                                            \
        .set_source_subset = PREFIX##_set_source_subset,                                    \
        .update_masses = PREFIX##_update_masses

/* A plugin that implements ABI 1.1 (its 1.2 members NULL: a host's
 * GRAVPLUG_API_HAS says no). */
#define GP_PLUGIN_API(PREFIX, PLUGIN_NAME_, CAPABILITIES)                                  \
    { GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES), .abi_minor = 1 }

/* The 1.2 members of a plugin's table. */
#define GP_PLUGIN_API_12_MEMBERS(PREFIX)                                                  \
        .set_state_jerk = PREFIX##_set_state_jerk, .get_velocities = PREFIX##_get_velocities, \
        .compute_forces_ex = PREFIX##_compute_forces_ex,                                    \
        .get_neighbours = PREFIX##_get_neighbours

/* A plugin that implements ABI 1.3 (every real plugin). */
#define GP_PLUGIN_API_13(PREFIX, PLUGIN_NAME_, CAPABILITIES)                               \
    {                                                                                       \
        GP_PLUGIN_API_11_MEMBERS(PREFIX, PLUGIN_NAME_, CAPABILITIES),                       \
        .abi_minor = GRAVPLUG_ABI_MINOR,                                                    \
        GP_PLUGIN_API_12_MEMBERS(PREFIX),                                                   \
        .set_source_groups = PREFIX##_set_source_groups,                                    \
        .compute_field_ex = PREFIX##_compute_field_ex,                                      \
    }

#endif /* GP_PLUGIN_BASE_H */
