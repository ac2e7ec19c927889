/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim.c — the driver: the public gp_sim API's life cycle, solver,
 * particles, integrator choice and parameters, step and evolve. It sits on
 * top: it calls the schemes (through their gp_integrator_def), the force
 * path, stopping conditions and the core (sim_core.c), none of which call
 * back into it. Diagnostics are in diagnostics.c, checkpoints in
 * checkpoint.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "gravplug_loader.h"
#include "gravplug_params.h"
#include "solver/force_held.h"
#include "schemes/registry.h"
#include "core/stopping.h"
#include "solver/solver_cache.h"

static _Thread_local char new_error[256];

GRAVPLUG_EXPORT const char *gp_sim_last_error(const gp_sim *sim)
{
    return sim ? sim->err : new_error;
}

/* ---- lifetime ------------------------------------------------------------ */

static gp_status apply_defaults(gp_sim *sim);

GRAVPLUG_EXPORT gp_status gp_sim_new(gp_sim **out)
{
    if (!out) {
        snprintf(new_error, sizeof new_error, "gp_sim_new needs a place for the result (out is NULL)");
        return GP_ERR_INVALID_ARGUMENT;
    }
    gp_sim *sim = calloc(1, sizeof *sim);
    *out = sim;
    if (!sim) {
        snprintf(new_error, sizeof new_error, "out of memory creating a simulation");
        return GP_ERR_OUT_OF_MEMORY;
    }
    sim->integ = gp_integrator_find("block-rk2");
    if (!sim->integ) {
        free(sim);
        *out = NULL;
        snprintf(new_error, sizeof new_error, "no integrators are registered: libgravplug was built without integrators/");
        return GP_ERR_INTERNAL;
    }
    if (apply_defaults(sim) != GP_OK) {
        free(sim);
        *out = NULL;
        snprintf(new_error, sizeof new_error, "out of memory creating a simulation");
        return GP_ERR_OUT_OF_MEMORY;
    }
    snprintf(sim->solver_name, sizeof sim->solver_name, "%s", "");
    return GP_OK;
}

/* An OpenMP plugin may be the one that brought libgomp into the process;
 * closing it would unmap libgomp under its idle worker threads (a crash).
 * Pin libgomp, if loaded, for the life of the process before closing. */
static void pin_openmp_runtime(void)
{
    void *h = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    (void)h; /* intentionally never closed */
}

static void release_solver(gp_sim *sim)
{
    if (sim->own_solver && sim->api && sim->solver) sim->api->finalize(sim->solver);
    if (sim->plugin_handle) {
        pin_openmp_runtime();
        gp_plugin_close(sim->plugin_handle);
    }
    sim->api = NULL;
    sim->solver = NULL;
    sim->plugin_handle = NULL;
    sim->own_solver = 0;
    gp_solver_cache_stale(sim);
    gp_solver_state_stale(sim);
    sim->solver_name[0] = '\0';
}

static void stop_integrator(gp_sim *sim)
{
    if (sim->integ && sim->integ->stop) sim->integ->stop(sim);
    sim->priv = NULL;
    sim->started = 0;
}

static void free_particles(gp_sim *sim)
{
    free(sim->pos); free(sim->vel); free(sim->mass); free(sim->acc);
    free(sim->ids); free(sim->work); free(sim->work2); free(sim->active); free(sim->pack);
    sim->pos = sim->vel = sim->mass = sim->acc = sim->work = sim->work2 = sim->pack = NULL;
    sim->pack_cap = 0;
    sim->ids = NULL;
    sim->active = NULL;
    sim->n = 0;
}

GRAVPLUG_EXPORT void gp_sim_free(gp_sim *sim)
{
    if (!sim) return;
    stop_integrator(sim);
    release_solver(sim);
    free_particles(sim);
    gp_levels_free(&sim->lv);
    gp_stopping_free(sim);
    free(sim->settings);
    free(sim);
}

/* ---- solver ---------------------------------------------------------------- */

GRAVPLUG_EXPORT gp_status gp_sim_set_solver(gp_sim *sim, const gp_api *api,
                                            gp_solver *solver, int take_ownership)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!api || !solver)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_set_solver needs a plugin table and an instance (got NULL)");
    int swapping = sim->solver != NULL && sim->started;
    release_solver(sim);
    sim->api = api;
    sim->solver = solver;
    sim->own_solver = take_ownership != 0;
    snprintf(sim->solver_name, sizeof sim->solver_name, "%s", api->name ? api->name : "?");
    if (swapping) sim->solver_swaps++;
    return GP_OK;
}

GRAVPLUG_EXPORT void gp_sim_set_log(gp_sim *sim, gp_log_fn fn, void *user)
{
    if (!sim) return;
    sim->log = fn;
    sim->log_user = fn ? user : NULL;
}

/* The parameter list an opened plugin's init takes (*out NULL when none). */
static gp_status make_params(gp_sim *sim, gp_plugin *plugin, size_t n_params, const char *const *names,
                             const char *const *values, gp_param **out)
{
    *out = NULL;
    if (n_params == 0) return GP_OK;
    gp_param *params = calloc(n_params, sizeof *params);
    if (!params)
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory for the %zu parameters of the %s solver",
                           n_params, gp_plugin_api(plugin)->name);
    for (size_t i = 0; i < n_params; ++i) {
        params[i].name = names[i];
        params[i].value = values[i];
    }
    *out = params;
    return GP_OK;
}

/* Creates an instance of an opened plugin with the given parameters. */
static gp_status init_instance(gp_sim *sim, gp_plugin *plugin, gp_param *params, size_t n_params, gp_solver **out)
{
    const gp_api *api = gp_plugin_api(plugin);
    gp_init_args args = { sizeof args, params, n_params, sim->log, sim->log_user, -1, NULL };
    gp_status st = api->init(out, &args);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "the %s plugin could not start: %s",
                           api->name, api->last_error(NULL));
    return GP_OK;
}

/* One plugin, by short name or path, opened, started with the parameters
 * and attached. For "auto" (tried not NULL) a plugin that cannot be
 * opened or started sets *next and adds its sentence to tried, so the
 * next may be tried; a parameter it refuses is the user's error and ends
 * the search. label names it in those sentences. */
static gp_status open_one(gp_sim *sim, const char *name, const char *label, size_t n_params,
                          const char *const *names, const char *const *values,
                          char *tried, size_t triedlen, int *next)
{
    const int is_auto = tried != NULL;
    char err[1024];
    gp_plugin *p = NULL;
    gp_param *params = NULL;
    *next = 0;
    gp_status st = gp_plugin_open(name, &p, err, sizeof err);
    if (st == GP_OK) st = make_params(sim, p, n_params, names, values, &params);
    else if (!is_auto) gp_sim_fail(sim, st, "%s", err);
    /* A plugin shared by several processes starts collectively (its
     * init takes part in their communication). */
    if (!is_auto) st = gp_sim_agree(sim, st, "the solver was not started");
    if (st != GP_OK) {
        const int opened = p != NULL;
        free(params);
        if (p) gp_plugin_close(p);
        if (!is_auto) return st;
        size_t len = strlen(tried);
        if (opened) snprintf(tried + len, triedlen - len, "%s%s", len ? "; " : "", sim->err);
        else snprintf(tried + len, triedlen - len, "%s%s: %s", len ? "; " : "", label, err);
        *next = 1;
        return st;
    }
    gp_solver *s = NULL;
    st = init_instance(sim, p, params, n_params, &s);
    free(params);
    if (st != GP_OK) {
        gp_plugin_close(p);
        /* A parameter the plugin rejects is the user's error, not a
         * reason to fall back to another plugin. */
        if (!is_auto || st == GP_ERR_UNKNOWN_PARAMETER || st == GP_ERR_INVALID_ARGUMENT)
            return st;
        size_t len = strlen(tried);
        snprintf(tried + len, triedlen - len, "%s%s", len ? "; " : "", sim->err);
        *next = 1;
        return st;
    }
    st = gp_sim_set_solver(sim, gp_plugin_api(p), s, 1);
    if (st != GP_OK) {
        gp_plugin_api(p)->finalize(s);
        gp_plugin_close(p);
        return st;
    }
    sim->plugin_handle = p;
    return GP_OK;
}

/* "auto": the plugins in the loader's order of preference (by their
 * capabilities, gp_plugin_list_preferred), the first that starts. */
typedef struct auto_search {
    gp_sim *sim;
    size_t n_params;
    const char *const *names, *const *values;
    gp_status st;
    int done;
    char listed[256], tried[1536];
} auto_search;

static int try_preferred(const char *path, const char *short_name, uint64_t capabilities, void *user)
{
    auto_search *a = user;
    size_t len = strlen(a->listed);
    snprintf(a->listed + len, sizeof a->listed - len, "%s%s", len ? ", " : "", short_name);
    int next;
    a->st = open_one(a->sim, path, short_name, a->n_params, a->names, a->values,
                     a->tried, sizeof a->tried, &next);
    a->done = !next;
    return a->done;
}

GRAVPLUG_EXPORT gp_status gp_sim_open_solver(gp_sim *sim, const char *plugin,
                                             size_t n_params,
                                             const char *const *names,
                                             const char *const *values)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!plugin)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_open_solver needs a plugin name, a path, or \"auto\"");
    if (n_params && (!names || !values))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_open_solver: %zu parameters announced but names or values is NULL",
                           n_params);
    int next;
    if (strcmp(plugin, "auto") != 0)
        return open_one(sim, plugin, plugin, n_params, names, values, NULL, 0, &next);
    /* a plugin that spreads one evaluation over processes (GP_CAP_MPI)
     * is chosen by name, where its processes are started */
    auto_search a = { sim, n_params, names, values, GP_ERR_UNSUPPORTED, 0, "", "" };
    gp_plugin_list_preferred(0, GP_CAP_MPI, try_preferred, &a);
    if (a.done) return a.st;
    if (!a.listed[0])
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "no plugin could be opened for \"auto\": none was found on the search "
                           "path (GRAVPLUG_PATH, next to libgravplug.so, the build tree, the "
                           "installed plugin directory)");
    return gp_sim_fail(sim, GP_ERR_UNSUPPORTED, "no plugin could be opened for \"auto\" (tried %s): %s",
                       a.listed, a.tried);
}

GRAVPLUG_EXPORT gp_status gp_sim_set_collective(gp_sim *sim,
                                                int64_t (*reduce)(void *ctx, int64_t x, int op),
                                                void *ctx)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    sim->reduce = reduce;
    sim->reduce_ctx = reduce ? ctx : NULL;
    return GP_OK;
}

GRAVPLUG_EXPORT int gp_sim_failed_elsewhere(const gp_sim *sim)
{
    return sim ? sim->failed_elsewhere : 0;
}

GRAVPLUG_EXPORT const char *gp_sim_solver_name(const gp_sim *sim)
{
    return sim ? sim->solver_name : "";
}

GRAVPLUG_EXPORT uint64_t gp_sim_solver_capabilities(const gp_sim *sim)
{
    return sim && sim->api ? sim->api->capabilities : 0;
}

GRAVPLUG_EXPORT int gp_sim_solver_softening(gp_sim *sim, double *eps)
{
    double e = 0.0;
    int listed = sim && sim->api && sim->solver && gp_params_softening(sim->api, sim->solver, &e);
    if (eps) *eps = e;
    return listed;
}

static const char *const path_names[] = { "auto", "1.0", "1.1" };

GRAVPLUG_EXPORT gp_status gp_sim_set_solver_path(gp_sim *sim, const char *path)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    int p = -1;
    for (int k = 0; k < 3; ++k)
        if (path && strcmp(path, path_names[k]) == 0) p = k;
    if (p < 0)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "solver path \"%s\" is not one of auto (1.1 when the plugin "
                           "offers it), 1.0, 1.1", path ? path : "(null)");
    int old = sim->solver_path;
    sim->solver_path = p;
    gp_status st = gp_held_path_check(sim);
    if (st != GP_OK) sim->solver_path = old;
    return st;
}

GRAVPLUG_EXPORT const char *gp_sim_solver_path(const gp_sim *sim)
{
    return sim ? path_names[sim->solver_path] : "";
}

GRAVPLUG_EXPORT const char *gp_sim_solver_path_in_use(const gp_sim *sim)
{
    if (!sim || !sim->api) return "";
    return gp_held_path(sim) ? "1.1" : "1.0";
}

GRAVPLUG_EXPORT gp_status gp_sim_set_solver_param(gp_sim *sim, const char *name, const char *value)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_status st = gp_sim_need_solver(sim);
    if (st != GP_OK) return st;
    st = sim->api->set_param(sim->solver, name, value);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "%s", sim->api->last_error(sim->solver));
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_get_solver_param(gp_sim *sim, const char *name,
                                                  char *buf, size_t buflen)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_status st = gp_sim_need_solver(sim);
    if (st != GP_OK) return st;
    st = sim->api->get_param(sim->solver, name, buf, buflen);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "%s", sim->api->last_error(sim->solver));
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_solver_stats(gp_sim *sim, gp_stats *out)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_status st = gp_sim_need_solver(sim);
    if (st != GP_OK) return st;
    if (!out) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_solver_stats: out is NULL");
    st = sim->api->get_stats(sim->solver, out);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "%s", sim->api->last_error(sim->solver));
    return GP_OK;
}

/* ---- particles ------------------------------------------------------------ */

static int all_finite(const double *a, size_t m)
{
    for (size_t i = 0; i < m; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* Restart the integrator from the synchronised state at sim->time. */
static void restart_integrator(gp_sim *sim)
{
    stop_integrator(sim);
}

GRAVPLUG_EXPORT gp_status gp_sim_set_particles(gp_sim *sim, size_t n,
                                               const double *pos, const double *vel,
                                               const double *mass, const uint64_t *ids)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (n == 0)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_set_particles needs at least one particle (n = 0)");
    if (n > UINT32_MAX)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_set_particles: n = %zu exceeds the ABI's 32-bit active indices", n);
    if (!pos || !vel || !mass)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_set_particles needs pos, vel and mass arrays (one is NULL)");
    if (!all_finite(pos, 3 * n) || !all_finite(vel, 3 * n) || !all_finite(mass, n))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_set_particles: positions, velocities and masses must be finite (found NaN or Inf)");
    for (size_t i = 0; i < n; ++i)
        if (mass[i] < 0)
            return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                               "gp_sim_set_particles: particle %zu has a negative mass (%g)", i, mass[i]);
    size_t d1, d2;
    int dup = gp_sim_find_duplicate_id(ids, n, &d1, &d2);
    if (dup < 0) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory checking %zu particle ids", n);
    if (dup)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_set_particles: particles %zu and %zu both have id %llu; ids must be distinct",
                           d1, d2, (unsigned long long)ids[d1]);
    double *p = malloc(3 * n * sizeof *p), *v = malloc(3 * n * sizeof *v);
    double *m = malloc(n * sizeof *m), *a = calloc(3 * n, sizeof *a);
    double *w = malloc(3 * n * sizeof *w), *w2 = malloc(3 * n * sizeof *w2);
    uint64_t *id = malloc(n * sizeof *id);
    uint32_t *act = malloc(n * sizeof *act);
    gp_levels lv_new = { 0 };
    if (!p || !v || !m || !a || !w || !w2 || !id || !act || gp_levels_alloc(&lv_new, n) != 0) {
        free(p); free(v); free(m); free(a); free(w); free(w2); free(id); free(act);
        gp_levels_free(&lv_new);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory storing %zu particles", n);
    }
    memcpy(p, pos, 3 * n * sizeof *p);
    memcpy(v, vel, 3 * n * sizeof *v);
    memcpy(m, mass, n * sizeof *m);
    for (size_t i = 0; i < n; ++i) id[i] = ids ? ids[i] : (uint64_t)i;
    restart_integrator(sim);
    free_particles(sim);
    gp_levels_free(&sim->lv);
    sim->lv = lv_new;
    gp_levels_anchor(&sim->lv, sim->time, 1.0, 0);
    sim->n = n;
    sim->pos = p; sim->vel = v; sim->mass = m; sim->acc = a;
    sim->work = w; sim->work2 = w2; sim->ids = id; sim->active = act;
    gp_solver_cache_stale(sim);
    gp_solver_state_stale(sim);
    return GP_OK;
}

GRAVPLUG_EXPORT size_t gp_sim_count(const gp_sim *sim) { return sim ? sim->n : 0; }


GRAVPLUG_EXPORT gp_status gp_sim_get_particles(gp_sim *sim, double *pos, double *vel,
                                               double *mass, uint64_t *ids)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    const int saved = gp_sim_threads_begin(sim);
    gp_sim_predict_state(sim, pos, vel);
    gp_sim_threads_end(saved);
    if (mass) memcpy(mass, sim->mass, sim->n * sizeof *mass);
    if (ids) memcpy(ids, sim->ids, sim->n * sizeof *ids);
    return GP_OK;
}

/* Brings every particle to sim->time (a block scheme's sync step). */
static gp_status synchronise(gp_sim *sim)
{
    if (!sim->started) return GP_OK;
    if (sim->integ->synchronize) return sim->integ->synchronize(sim);
    if (!gp_sim_synchronised(sim))
        return gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator %s left particles unsynchronised", sim->integ->name);
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_set_state(gp_sim *sim, const double *pos, const double *vel)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    if ((pos && !all_finite(pos, 3 * sim->n)) || (vel && !all_finite(vel, 3 * sim->n)))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_set_state: values must be finite (found NaN or Inf)");
    gp_status st = synchronise(sim);
    if (st != GP_OK) return st;
    if (pos) memcpy(sim->pos, pos, 3 * sim->n * sizeof *pos);
    if (vel) memcpy(sim->vel, vel, 3 * sim->n * sizeof *vel);
    restart_integrator(sim);
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_set_masses(gp_sim *sim, const double *mass)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    if (!mass || !all_finite(mass, sim->n))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_set_masses needs n finite masses");
    for (size_t i = 0; i < sim->n; ++i)
        if (mass[i] < 0)
            return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                               "gp_sim_set_masses: particle %zu has a negative mass (%g)", i, mass[i]);
    /* Only the masses that changed go to the solver, in place (ABI 1.1
     * update_masses: no rebuild, the held state stays); a plugin without
     * it, or the "1.0" path, gets a fresh set_particles at the next force
     * call instead. Either way the run goes on from here. */
    size_t n = sim->n, changed = 0;
    for (size_t i = 0; i < n; ++i) changed += memcmp(&mass[i], &sim->mass[i], sizeof *mass) != 0;
    /* with a collective solver every process calls it when any has a
     * change (one with none passes (0, non-NULL): a no-op) */
    int any = (int)gp_sim_global_max(sim, changed > 0);
    if (any && sim->solver_fresh && sim->solver_path != GP_PATH_10 && sim->api->abi_minor >= 1
        && GRAVPLUG_API_HAS(sim->api, update_masses)) {
        uint32_t *idx = changed < n ? malloc((changed ? changed : 1) * sizeof *idx) : NULL;
        double *m = changed < n ? malloc((changed ? changed : 1) * sizeof *m) : NULL;
        gp_status st = GP_ERR_OUT_OF_MEMORY;
        if (!gp_sim_global_max(sim, !(changed == n || (idx && m)))) {   /* the call happens everywhere or nowhere */
            size_t k = 0;
            for (size_t i = 0; i < n && changed < n; ++i)
                if (memcmp(&mass[i], &sim->mass[i], sizeof *mass) != 0) { idx[k] = (uint32_t)i; m[k++] = mass[i]; }
            st = changed == n ? sim->api->update_masses(sim->solver, n, NULL, mass)
                              : sim->api->update_masses(sim->solver, changed, idx, m);
        }
        free(idx);
        free(m);
        if (st != GP_OK) gp_solver_cache_stale(sim);   /* fall back to a fresh set_particles */
    } else if (any) {
        gp_solver_cache_stale(sim);
    }
    if (any) sim->mass_updates++;
    memcpy(sim->mass, mass, n * sizeof *mass);
    return GP_OK;
}

GRAVPLUG_EXPORT double gp_sim_time(const gp_sim *sim) { return sim ? sim->time : 0.0; }

GRAVPLUG_EXPORT gp_status gp_sim_set_time(gp_sim *sim, double t)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!isfinite(t)) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_set_time: t must be finite");
    gp_status st = synchronise(sim);
    if (st != GP_OK) return st;
    sim->time = t;
    restart_integrator(sim);
    return GP_OK;
}

/* ---- integrator choice and parameters --------------------------------------- */

/* A fresh settings struct for def with its defaults, or NULL (out of memory). */
static void *default_settings(const gp_integrator_def *def)
{
    void *set = calloc(1, def->settings_size ? def->settings_size : 1);
    if (set) gp_setting_defaults(def->settings, def->n_settings, set);
    return set;
}

/* The scheme's settings back to their defaults (a new scheme was chosen). */
static gp_status apply_defaults(gp_sim *sim)
{
    void *set = default_settings(sim->integ);
    if (!set) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory for the settings of %s", sim->integ->name);
    free(sim->settings);
    sim->settings = set;
    sim->err[0] = '\0';
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_set_integrator(gp_sim *sim, const char *name)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const gp_integrator_def *def = gp_integrator_find(name);
    if (!def) {
        char list[512] = "";
        for (size_t i = 0; i < gp_integrator_count(); ++i) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", gp_integrator_name(i));
        }
        return gp_sim_fail(sim, GP_ERR_UNKNOWN_PARAMETER,
                           "unknown integrator \"%s\": choose one of %s", name ? name : "(null)", list);
    }
    void *set = default_settings(def);
    if (!set) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory for the settings of %s", def->name);
    gp_status st = synchronise(sim);
    if (st != GP_OK) { free(set); return st; }
    restart_integrator(sim);
    sim->integ = def;
    free(sim->settings);
    sim->settings = set;
    sim->err[0] = '\0';
    return GP_OK;
}

GRAVPLUG_EXPORT const char *gp_sim_integrator(const gp_sim *sim)
{
    return sim && sim->integ ? sim->integ->name : "";
}

/* The row of the current scheme's table named name, or NULL with the
 * sentence that lists what it accepts. */
static const gp_setting *find_setting(gp_sim *sim, const char *name)
{
    const gp_integrator_def *def = sim->integ;
    const gp_setting *row = gp_setting_find(def->settings, def->n_settings, name);
    if (row) return row;
    char list[256] = "";
    for (size_t i = 0; i < def->n_settings; ++i) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", def->settings[i].name);
    }
    gp_sim_fail(sim, GP_ERR_UNKNOWN_PARAMETER, "integrator %s has no parameter \"%s\": it accepts %s",
                def->name, name ? name : "(null)", list[0] ? list : "none");
    return NULL;
}

GRAVPLUG_EXPORT gp_status gp_sim_set_integrator_param(gp_sim *sim, const char *name, const char *value)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const gp_setting *row = find_setting(sim, name);
    if (!row) return GP_ERR_UNKNOWN_PARAMETER;
    /* parse into a copy: a refused value, or a failed synchronisation,
     * changes nothing */
    size_t size = sim->integ->settings_size ? sim->integ->settings_size : 1;
    void *set = malloc(size);
    if (!set) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory for the settings of %s", sim->integ->name);
    memcpy(set, sim->settings, size);
    gp_status st = gp_setting_parse(row, value, set, sim->err, sizeof sim->err);
    if (st == GP_OK) st = synchronise(sim);
    if (st != GP_OK) { free(set); return st; }
    free(sim->settings);
    sim->settings = set;
    restart_integrator(sim);
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_get_integrator_param(gp_sim *sim, const char *name,
                                                      char *buf, size_t buflen)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const gp_setting *row = gp_setting_find(sim->integ->settings, sim->integ->n_settings, name);
    if (!row)
        return gp_sim_fail(sim, GP_ERR_UNKNOWN_PARAMETER, "integrator %s has no parameter \"%s\"",
                           sim->integ->name, name ? name : "(null)");
    if (!buf || buflen == 0)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_get_integrator_param needs a buffer");
    int len = gp_setting_format(row, sim->settings, buf, buflen);
    if (len < 0 || (size_t)len >= buflen)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "buffer of %zu bytes too small for %s", buflen, name);
    return GP_OK;
}

/* ---- running -------------------------------------------------------------- */

/* Solver resync points (gp_sim.h): the start, and a step that ends
 * with every particle synchronised on the dt_max grid (every step of a
 * shared-step scheme), make the next force call re-send all particles, in
 * every run alike; a checkpoint or a diagnostic there leaves the solver's
 * next state as it would have been without it. */
static void mark_resync_point(gp_sim *sim)
{
    if (sim->lv.now % gp_levels_span(&sim->lv, 0) == 0) gp_solver_cache_stale(sim);
}

static gp_status ensure_started(gp_sim *sim)
{
    if (sim->started) return GP_OK;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    gp_status st = gp_sim_need_solver(sim);
    if (st != GP_OK) return st;
    /* A start's scratch can fail on one process alone, and its steps call
     * the solver collectively: agreed (a start that calls the solver after
     * its allocations agrees before that call itself, as hermite does). */
    st = gp_sim_agree(sim, sim->integ->start(sim), "the integrator was not started");
    if (st != GP_OK) {
        stop_integrator(sim);
        return st;
    }
    sim->started = 1;
    mark_resync_point(sim);
    return GP_OK;
}

/* A step that leaves time where it was, behind it, or not finite would
 * loop forever or run backwards: an inconsistent state, never silent. */
static gp_status check_time_moved(gp_sim *sim, double before)
{
    if (isfinite(sim->time) && sim->time > before) return GP_OK;
    return gp_sim_fail(sim, GP_ERR_INTERNAL,
                       "integrator %s stepped from t = %.17g to t = %.17g: its state is inconsistent "
                       "(from a damaged checkpoint?); restart from an earlier checkpoint or the initial conditions",
                       sim->integ->name, before, sim->time);
}

GRAVPLUG_EXPORT int gp_sim_at_resync_point(const gp_sim *sim)
{
    return sim && sim->n && !sim->solver_fresh;
}

static gp_status step_to(gp_sim *sim, double t_end)
{
    if (!isfinite(t_end))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the end time must be finite");
    gp_status st = ensure_started(sim);
    if (st != GP_OK) return st;
    if (t_end <= sim->time) return GP_OK;
    double before = sim->time;
    st = sim->integ->step(sim, t_end);
    if (st == GP_OK) st = check_time_moved(sim, before);
    if (st == GP_OK) { sim->steps++; mark_resync_point(sim); }
    return st;
}

GRAVPLUG_EXPORT gp_status gp_sim_step(gp_sim *sim, double t_end)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const int saved = gp_sim_threads_begin(sim);
    gp_status st = step_to(sim, t_end);
    gp_sim_threads_end(saved);
    return st;
}

static gp_status evolve_to(gp_sim *sim, double t_end);

/* Time and every velocity negated: gravity depends on the positions
 * alone, so the run from the mirrored state forward over a span is the run
 * backward over it, mirrored. The integrator restarts (its held state, a
 * jerk, a level, is of the other direction). */
static void mirror_time(gp_sim *sim)
{
    for (size_t k = 0; k < 3 * sim->n; ++k) sim->vel[k] = -sim->vel[k];
    sim->time = -sim->time;
    restart_integrator(sim);
}

/* Backward, where the scheme declares it can (GP_SCHEME_BACKWARD): the
 * scheme's own steps run forward on the mirrored state, so the backward
 * trajectory is the forward one with the velocities reversed, step for
 * step. */
static gp_status evolve_backward(gp_sim *sim, double t_end)
{
    if (!(sim->integ->flags & GP_SCHEME_BACKWARD)) {
        char can[256] = "";
        for (size_t i = 0; i < gp_integrator_count(); ++i) {
            unsigned f = 0;
            const char *name = gp_integrator_name(i);
            if (gp_integrator_flags(name, &f) == GP_OK && (f & GP_SCHEME_BACKWARD))
                snprintf(can + strlen(can), sizeof can - strlen(can), "%s%s", can[0] ? ", " : "", name);
        }
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "integrator %s cannot evolve backwards (the simulation is at t = %.17g, "
                           "the end time is %.17g): choose one that can (%s)",
                           sim->integ->name, sim->time, t_end, can);
    }
    gp_status st = synchronise(sim);
    if (st != GP_OK) return st;
    mirror_time(sim);
    st = evolve_to(sim, -t_end);
    gp_status back = synchronise(sim);
    mirror_time(sim);
    return st != GP_OK ? st : back;
}

static gp_status evolve_to(gp_sim *sim, double t_end)
{
    if (!isfinite(t_end))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the end time must be finite");
    if (t_end < sim->time) {
        if (sim->n == 0)
            return gp_sim_fail(sim, GP_ERR_BAD_STATE, "no particles yet: call gp_sim_set_particles first");
        return evolve_backward(sim, t_end);
    }
    gp_status st = ensure_started(sim);
    if (st == GP_OK) st = gp_stopping_begin(sim);
    if (st != GP_OK) return st;
    /* a stop seen by one process of a collective solver stops them all
     * at the same step (each checks its own particles' conditions) */
    while (sim->time < t_end && !gp_sim_global_max(sim, sim->stop_requested != 0)) {
        double before = sim->time;
        st = sim->integ->step(sim, t_end);
        if (st == GP_OK) st = check_time_moved(sim, before);
        if (st != GP_OK) return st;
        sim->steps++;
        mark_resync_point(sim);
        if (gp_sim_global_max(sim, gp_stopping_after_step(sim))) break;
    }
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_evolve(gp_sim *sim, double t_end)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const int saved = gp_sim_threads_begin(sim);
    gp_status st = evolve_to(sim, t_end);
    gp_sim_threads_end(saved);
    return st;
}

GRAVPLUG_EXPORT gp_status gp_sim_particle_timesteps(gp_sim *sim, double *dt)
{
    if (!sim || !dt) return GP_ERR_INVALID_ARGUMENT;
    if (sim->n == 0)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE, "no particles yet: call gp_sim_set_particles first");
    if (sim->integ->flags & GP_SCHEME_BLOCK_STEPS) {
        gp_status st = ensure_started(sim);          /* the levels of the first step */
        if (st != GP_OK) return st;
        for (size_t i = 0; i < sim->n; ++i) dt[i] = gp_levels_dt(&sim->lv, i);
        return GP_OK;
    }
    char buf[64];
    if (gp_sim_get_integrator_param(sim, "dt", buf, sizeof buf) != GP_OK)
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "integrator %s chooses its step as it goes (no dt, no levels): "
                           "it has no per-particle time step to report", sim->integ->name);
    sim->err[0] = '\0';
    double shared = strtod(buf, NULL);
    for (size_t i = 0; i < sim->n; ++i) dt[i] = shared;
    return GP_OK;
}

GRAVPLUG_EXPORT void gp_sim_request_stop(gp_sim *sim)
{
    if (sim) sim->stop_requested = 1;
}

GRAVPLUG_EXPORT int gp_sim_stop_requested(const gp_sim *sim)
{
    return sim ? sim->stop_requested : 0;
}

