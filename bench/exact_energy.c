/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_energy.c — see exact_energy.h. One measuring simulation (cpu-direct
 * unless --energy names another) is kept for the life of the program (the
 * benchmarks measure runs of one size).
 */
#include "exact_energy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gp_sim *meas;
/* --solver's NAME=VALUE pairs, given to every measured run's plugin */
static char solver_extra[512];
/* --energy's PLUGIN[:NAME=VALUE,...]: what measures the energies */
static char energy_spec[512] = "cpu-direct";
static double *mpos, *mvel, *mmass;
static size_t mcap;

void bench_fail(const char *prog, const char *what, gp_sim *sim)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, gp_sim_last_error(sim));
    exit(1);
}

/* text's NAME=VALUE[,NAME=VALUE...] appended to n[], v[] (their strings
 * in text, cut in place) up to max entries in all; a pair without '=' or one too
 * many prints "prog: OPTION wants USAGE, got 'whole'" and exits 2. */
static void add_pairs(const char *prog, const char *option, const char *usage, const char *whole, char *text,
                      const char **n, const char **v, size_t *np, size_t max)
{
    size_t room = max - *np;
    for (char *save = NULL, *kv = text ? strtok_r(text, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || *np == max) {
            fprintf(stderr, "%s: %s wants %s (at most %zu pairs), got '%s'\n", prog, option, usage, room, whole);
            exit(2);
        }
        *eq = '\0';
        n[*np] = kv;
        v[(*np)++] = eq + 1;
    }
}

gp_sim *bench_open_run(const char *prog, const gp_ic *ic, const char *plugin, const char *eps,
                       const char *theta, const char *threads, const char *integrator)
{
    gp_sim *sim;
    if (gp_sim_new(&sim) != GP_OK) { fprintf(stderr, "%s: out of memory\n", prog); exit(1); }
    const char *n[19] = { "eps" }, *v[19] = { eps };
    size_t np = 1;
    if (strstr(plugin, "tree")) { n[np] = "theta"; v[np++] = theta; }
    if (threads) { n[np] = "threads"; v[np++] = threads; }
    char extra[sizeof solver_extra];
    memcpy(extra, solver_extra, sizeof extra);
    add_pairs(prog, "--solver", "NAME=VALUE[,NAME=VALUE...]", solver_extra, extra, n, v, &np, 19);
    if (gp_sim_open_solver(sim, plugin, np, n, v) != GP_OK) bench_fail(prog, plugin, sim);
    if (gp_sim_set_particles(sim, ic->n, ic->pos, ic->vel, ic->mass, ic->id) != GP_OK)
        bench_fail(prog, "particles", sim);
    if (integrator && gp_sim_set_integrator(sim, integrator) != GP_OK) bench_fail(prog, integrator, sim);
    return sim;
}

double bench_exact_energy(const char *prog, gp_sim *sim, const char *eps)
{
    size_t n = gp_sim_count(sim);
    if (!meas) {
        /* spec: the plugin, then its NAME=VALUE pairs after eps */
        static char spec[sizeof energy_spec];
        memcpy(spec, energy_spec, sizeof spec);
        char *pairs = strchr(spec, ':');
        if (pairs) *pairs++ = '\0';
        const char *nm[17] = { "eps" }, *v[17] = { eps };
        size_t np = 1;
        add_pairs(prog, "--energy", "PLUGIN[:NAME=VALUE,...]", energy_spec, pairs, nm, v, &np, 17);
        if (gp_sim_new(&meas) != GP_OK) { fprintf(stderr, "%s: out of memory\n", prog); exit(1); }
        if (gp_sim_open_solver(meas, spec, np, nm, v) != GP_OK) bench_fail(prog, spec, meas);
    }
    if (n > mcap) {
        free(mpos); free(mvel); free(mmass);
        mpos = malloc(3 * n * sizeof *mpos); mvel = malloc(3 * n * sizeof *mvel); mmass = malloc(n * sizeof *mmass);
        if (!mpos || !mvel || !mmass) { fprintf(stderr, "%s: out of memory\n", prog); exit(1); }
        mcap = n;
    }
    if (gp_sim_get_particles(sim, mpos, mvel, mmass, NULL) != GP_OK) bench_fail(prog, "get", sim);
    if (gp_sim_set_particles(meas, n, mpos, mvel, mmass, NULL) != GP_OK) bench_fail(prog, "set", meas);
    double k, w;
    if (gp_sim_energies(meas, &k, &w) != GP_OK) bench_fail(prog, "energies", meas);
    return k + w;
}

const char *bench_energy_spec(void)
{
    return energy_spec;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double bench_ic_energy(const char *prog, const gp_ic *ic, const char *eps)
{
    gp_sim *sim = NULL;
    if (gp_sim_new(&sim) != GP_OK) bench_fail(prog, "gp_sim_new", sim);
    if (gp_sim_set_particles(sim, ic->n, ic->pos, ic->vel, ic->mass, ic->id) != GP_OK)
        bench_fail(prog, "particles", sim);
    double e0 = bench_exact_energy(prog, sim, eps);
    gp_sim_free(sim);
    return e0;
}

bench_cost bench_run_cost(gp_sim *sim)
{
    bench_cost c;
    memset(&c, 0, sizeof c);
    gp_sim_counter(sim, "steps", &c.steps);
    gp_sim_counter(sim, "force_calls", &c.force_calls);
    gp_sim_counter(sim, "particle_forces", &c.particle_forces);
    gp_sim_counter(sim, "criterion_forces", &c.criterion_forces);
    gp_sim_counter(sim, "criterion_pairs", &c.criterion_pairs);
    gp_sim_counter(sim, "criterion_calls", &c.criterion_calls);
    gp_sim_counter(sim, "criterion_cpu_ns", &c.criterion_cpu_ns);
    c.stats.struct_size = sizeof c.stats;
    gp_sim_solver_stats(sim, &c.stats);
    c.interactions = c.stats.pp_interactions + c.stats.pc_interactions;
    uint64_t counts[64];
    gp_sim_level_counts(sim, counts, 64, &c.levels);
    return c;
}

int bench_common_option(const bench_options *o, const char *a, const char *v)
{
    if (!strcmp(a, "--n")) *o->n = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--t")) *o->t_end = atof(v);
    else if (!strcmp(a, "--plugin")) *o->plugin = v;
    else if (!strcmp(a, "--eps")) *o->eps = v;
    else if (!strcmp(a, "--theta")) *o->theta = v;
    else if (!strcmp(a, "--threads")) *o->threads = v;
    else if (!strcmp(a, "--seed")) *o->seed = strtoull(v, NULL, 10);
    else if (!strcmp(a, "--solver")) snprintf(solver_extra, sizeof solver_extra, "%s", v);
    else if (!strcmp(a, "--energy")) snprintf(energy_spec, sizeof energy_spec, "%s", v);
    else return 0;
    return 1;
}
