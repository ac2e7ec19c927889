/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_solver.c — the solver of a gravhost run: opening a plugin with the
 * config's parameters (naming the config line a refusal is about), the
 * switches between solvers, and the interactions a solver has counted.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "par.h"
#include "runner.h"

const gh_params *params_for(const runner *r, int32_t from)
{
    if (from >= 0 && r->cfg->switches[from].has_params) return &r->cfg->switches[from].params;
    return &r->cfg->solver_params;
}

/* Is name among a plugin's described parameters? */
static int describes(const gp_param_info *info, size_t count, const char *name)
{
    for (size_t i = 0; i < count; ++i)
        if (strcmp(info[i].name, name) == 0) return 1;
    return 0;
}

/* The parameter a plugin's message is about: the one it quotes ('name' or
 * "name"), else the first named as a whole word; -1 if none. Quoted first,
 * so "no parameter 'nosuch'; the accepted names are: G, eps" names nosuch. */
static long blamed_param(const gh_params *p, const char *msg)
{
    for (int quote = 0; quote < 2; ++quote)
        for (size_t i = 0; i < p->n; ++i) {
            char q[300];
            snprintf(q, sizeof q, quote ? "\"%s\"" : "'%s'", p->items[i].name);
            if (strstr(msg, q)) return (long)i;
        }
    for (size_t i = 0; i < p->n; ++i) {
        size_t len = strlen(p->items[i].name);
        for (const char *m = strstr(msg, p->items[i].name); m; m = strstr(m + 1, p->items[i].name)) {
            int left = m == msg || !(isalnum((unsigned char)m[-1]) || m[-1] == '_');
            int right = !(isalnum((unsigned char)m[len]) || m[len] == '_');
            if (left && right) return (long)i;
        }
    }
    return -1;
}

/* Opens plugin spec with a params list on sim (r->sim, or a throwaway one
 * to check a switch before the run starts; NULL when that one could not be
 * made: out of memory, agreed like any failure here); on failure names the
 * config line. */
int open_solver_on(runner *r, gp_sim *sim, const char *plugin, const gh_params *p, int inherited,
                          const char *where, int line)
{
    const char **names = calloc(p->n + 1, sizeof *names), **values = calloc(p->n + 1, sizeof *values);
    int failed = !sim || !names || !values;
    if (failed)
        snprintf(r->err, sizeof r->err, "%s:%d: %s.plugin: out of memory %s %s", r->cfg->path, line, where,
                 sim ? "passing the parameters to" : "for a simulation to check", plugin);
    /* A switch without params of its own inherits solver.params, but only
     * the names the new plugin describes: switching cpu-tree -> cpu-direct
     * must not fail on theta. Parameters written for the plugin itself stay
     * strict, and "auto" is picked and checked by gp_sim_open_solver. */
    gp_plugin *pl = NULL;
    const gp_param_info *info = NULL;
    size_t count = 0;
    if (!failed && inherited && p->n > 0 && strcmp(plugin, "auto") != 0) {
        char why[sizeof r->err];
        failed = gp_plugin_open(plugin, &pl, why, sizeof why) != GP_OK;
        if (failed) snprintf(r->err, sizeof r->err, "%s:%d: %s.plugin: %s", r->cfg->path, line, where, why);
        else info = gp_plugin_api(pl)->describe_params(&count);
    }
    /* Under MPI the plugin's start below is collective: a rank that failed
     * up to here must not leave the others waiting in it. */
    if (gh_par_agree(failed ? -1 : 0, r->err, sizeof r->err) != 0) {
        if (pl) gp_plugin_close(pl);
        free(names);
        free(values);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->n; ++i) {
        if (pl && !describes(info, count, p->items[i].name)) continue;
        names[k] = p->items[i].name;
        values[k++] = p->items[i].value;
    }
    if (pl) gp_plugin_close(pl);
    gp_status st = gp_sim_open_solver(sim, plugin, k, names, values);
    free(names);
    free(values);
    if (st == GP_OK) return 0;
    const char *msg = gp_sim_last_error(sim);
    /* point at the parameter the plugin complained about, if named */
    long i = blamed_param(p, msg);
    if (i >= 0) {
        snprintf(r->err, sizeof r->err, "%s:%d: %s.params.%s: %s", r->cfg->path, p->lines[i], where,
                 p->items[i].name, msg);
        return -1;
    }
    snprintf(r->err, sizeof r->err, "%s:%d: %s.plugin: %s", r->cfg->path, line, where, msg);
    return -1;
}

int open_solver(runner *r, const char *plugin, const gh_params *p, int inherited, const char *where, int line)
{
    return open_solver_on(r, r->sim, plugin, p, inherited, where, line);
}

uint64_t solver_interactions(runner *r)
{
    gp_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    if (gp_sim_solver_stats(r->sim, &s) != GP_OK) return 0;
    return s.pp_interactions + s.pc_interactions;
}

int do_switch(runner *r, size_t i)
{
    const gh_switch *sw = &r->cfg->switches[i];
    uint64_t before = solver_interactions(r);
    char where[32];
    snprintf(where, sizeof where, "switch[%zu]", i);
    if (open_solver(r, sw->plugin, params_for(r, (int32_t)i), !sw->has_params, where, sw->line) != 0) return -1;
    r->st.interactions += before;
    r->st.switch_fired |= UINT64_C(1) << i;
    r->st.params_from = (int32_t)i;
    snprintf(r->st.plugin, sizeof r->st.plugin, "%s", sw->plugin);
    return 0;
}

