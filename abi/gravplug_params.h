/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug_params.h — the parameters whose meaning the ABI fixes, so that
 * a host can ask a plugin for a quantity without knowing the plugin.
 *
 * gravplug.h's gp_param_info has no field that says what a row is for. The
 * convention, within ABI 1.x: a row of one of the names below means what
 * is written here and nothing else, whatever plugin lists it; a plugin
 * without the concept lists no such row. A host finds the row in
 * describe_params before it calls get_param, so a plugin without it is
 * asked nothing (a refused get_param would leave its sentence as the
 * plugin's last error). Every other name is the plugin's own: a host
 * passes it through from its user and never reads it.
 *
 * Header-only (static inline), C99.
 */
#ifndef GRAVPLUG_PARAMS_H
#define GRAVPLUG_PARAMS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"

/* GP_PARAM_DOUBLE >= 0: the Plummer softening length of the forces, r^2 +
 * eps^2 in gravplug.h's sums. A time-step criterion that scales with the
 * softening reads it. */
#define GP_PARAM_SOFTENING "eps"

/* GP_PARAM_DOUBLE > 0: the gravitational constant the forces carry, in the
 * host's units; a plugin that lists none computes with G = 1. A host that
 * moves bodies by a closed-form orbit (a Kepler step) reads it. */
#define GP_PARAM_GRAVITY "G"

/* GP_PARAM_ENUM: the cell-opening criterion of a tree. Its word
 * GP_OPENING_RELATIVE (GADGET's relative criterion) bounds each particle's
 * error by a fraction of its previous |a|, which the plugin takes from the
 * acc of set_state; after set_particles, which forgets it, a host that
 * holds the last accelerations gives them with set_state, or the plugin
 * pays an extra pass to estimate them. */
#define GP_PARAM_OPENING "mac"
#define GP_OPENING_RELATIVE "acceleration"

/* GP_PARAM_INT >= 0: the OpenMP threads of the plugin's calls (0: OpenMP's
 * default, OMP_NUM_THREADS). A host whose own loops run in the same
 * process (an integrator's corrector, the state it sends) reads it and
 * takes as many, so that threads = 1 means one core. */
#define GP_PARAM_THREADS "threads"

/* Whether the plugin lists a parameter of this name. */
static inline int gp_params_lists(const gp_api *api, const char *name)
{
    size_t n = 0;
    const gp_param_info *info = api && api->describe_params ? api->describe_params(&n) : NULL;
    for (size_t k = 0; info && k < n; ++k)
        if (info[k].name && strcmp(info[k].name, name) == 0) return 1;
    return 0;
}

/* The instance's value of a listed parameter into buf: GP_OK, or
 * GP_ERR_UNKNOWN_PARAMETER (not listed: nothing asked), or get_param's
 * refusal. */
static inline gp_status gp_params_read(const gp_api *api, gp_solver *s, const char *name,
                                       char *buf, size_t buflen)
{
    if (!gp_params_lists(api, name) || !api->get_param) return GP_ERR_UNKNOWN_PARAMETER;
    return api->get_param(s, name, buf, buflen);
}

/* The instance's softening (GP_PARAM_SOFTENING) into *eps: 1, or 0 (and
 * *eps = 0) when it lists none or answers no finite value >= 0. */
static inline int gp_params_softening(const gp_api *api, gp_solver *s, double *eps)
{
    char buf[64], *end;
    *eps = 0.0;
    if (gp_params_read(api, s, GP_PARAM_SOFTENING, buf, sizeof buf) != GP_OK) return 0;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v) || v < 0.0) return 0;
    *eps = v;
    return 1;
}

/* The instance's gravitational constant (GP_PARAM_GRAVITY) into *g: 1 when
 * it lists one with a finite value > 0, else 0 (and *g = 1, the ABI's
 * default units). */
static inline int gp_params_gravity(const gp_api *api, gp_solver *s, double *g)
{
    char buf[64], *end;
    *g = 1.0;
    if (gp_params_read(api, s, GP_PARAM_GRAVITY, buf, sizeof buf) != GP_OK) return 0;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v) || !(v > 0.0)) return 0;
    *g = v;
    return 1;
}

/* The instance's threads (GP_PARAM_THREADS) into *threads: 1 when it lists
 * the parameter with a value >= 1, else 0 (and *threads = 0: OpenMP's
 * default). */
static inline int gp_params_threads(const gp_api *api, gp_solver *s, int *threads)
{
    char buf[32], *end;
    *threads = 0;
    if (gp_params_read(api, s, GP_PARAM_THREADS, buf, sizeof buf) != GP_OK) return 0;
    long v = strtol(buf, &end, 10);
    if (end == buf || v < 1 || v > 1 << 20) return 0;
    *threads = (int)v;
    return 1;
}

/* Whether the instance's forces read each particle's previous |a| from
 * set_state (GP_PARAM_OPENING is GP_OPENING_RELATIVE). */
static inline int gp_params_reads_last_acc(const gp_api *api, gp_solver *s)
{
    char buf[32];
    return gp_params_read(api, s, GP_PARAM_OPENING, buf, sizeof buf) == GP_OK
        && strcmp(buf, GP_OPENING_RELATIVE) == 0;
}

#endif /* GRAVPLUG_PARAMS_H */
