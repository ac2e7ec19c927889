/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hold-vs-shared.c — energy error against force work for any integrators
 * on the same model and solver: HOLD (integrators/schemes/hold.c) against the
 * block schemes and the shared-step leapfrog/rk2
 * (bench/results/hold/raw/hold.md).
 *
 *   hold-vs-shared [--n N] [--t T] [--plugin P] [--eps E] [--theta TH]
 *                  [--threads K] [--sample DT] [--model M] [--seed S]
 *                  [--ic NAME=VALUE[,NAME=VALUE...]] [--series FILE] [--ic-path FILE]
 *                  [--solver NAME=VALUE,...] [--energy PLUGIN[:NAME=VALUE,...]]
 *                  --run SPEC [--run SPEC ...]
 *
 * SPEC: integrator[:name=value,name=value...], e.g. "hold:dt=0.125,eta=0.2"
 * or "leapfrog:dt=0.0078125". Each run evolves the model to T, sampling
 * |E(t) - E(0)| / |E(0)| every DT (energies from cpu-direct, or what
 * --energy names, on a copy of the state, outside the timing). Per run, one TSV row: the largest error
 * ("max"), the error at T ("end"), the slope of a least-squares line
 * through the sampled errors (signed, per unit time: secular drift), the
 * force work (particle forces = the sum of active counts over the force
 * calls; force calls), the solver's interactions (pp + pc; with
 * cpu-direct, active x source counts: the source-subset sizes), levels of
 * the last step, wall seconds in evolve, and the share of the time-step
 * criterion calls (hold's criterion, cc's step graph) in particle forces
 * and in active x source pairs, and the process's CPU seconds in evolve
 * (all threads: on a shared machine a one-thread run's cpu_s leaves out
 * the time other tenants held its core, which wall_s counts); last, what
 * the criterion costs: its plugin calls, the force calls per top step
 * (all, and the criterion's), its CPU seconds (calls, lists, host work)
 * and their share of cpu_s, and its share of the pair work
 * (criterion_pairs / interactions: on cpu-direct both count active x
 * sources). Then, for
 * every run that is not a leapfrog run, the leapfrog cost at its max
 * error (log-log interpolation between the two bracketing leapfrog runs)
 * and the ratios (particle forces, wall time, interactions).
 * --series FILE appends "spec t dE" lines (signed error) for plots;
 * --ic-path FILE reads the particles from a text file (the `file` model,
 * as bench/huayno-hold.py writes it) instead of --model; --ic sets the
 * model's options (docs/IC.md): `--ic disk_mass=0.1` is `make run`'s galaxy.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_sim.h"
#include "ic.h"
#include "exact_energy.h"

typedef struct result {
    char spec[128];
    double err, err_end, slope, wall, cpu;
    bench_cost cost;
} result;

static void die(const char *what, gp_sim *sim)
{
    bench_fail("hold-vs-shared", what, sim);
}

static const char *plugin = "cpu-direct", *eps = "0.01", *theta = "0.5", *threads;
static double sample = 0.5;
static FILE *series;

static result run(const gp_ic *ic, const char *spec, double t_end, double e0)
{
    result r;
    memset(&r, 0, sizeof r);
    snprintf(r.spec, sizeof r.spec, "%s", spec);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *colon = strchr(buf, ':');
    if (colon) *colon = '\0';
    gp_sim *sim = bench_open_run("hold-vs-shared", ic, plugin, eps, theta, threads, buf);
    for (char *p = colon ? colon + 1 : NULL; p && *p;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        char *eq = strchr(p, '=');
        if (!eq) { fprintf(stderr, "hold-vs-shared: %s: expected name=value\n", p); exit(2); }
        *eq = '\0';
        if (gp_sim_set_integrator_param(sim, p, eq + 1) != GP_OK) die(p, sim);
        p = comma ? comma + 1 : NULL;
    }
    double st = 0, se = 0, stt = 0, ste = 0;
    int ns = 0;
    for (int k = 1; k * sample <= t_end * (1 + 1e-12); ++k) {
        double t0 = bench_now(), c0 = bench_cpu_now();
        if (gp_sim_evolve(sim, k * sample) != GP_OK) die("evolve", sim);
        r.wall += bench_now() - t0;
        r.cpu += bench_cpu_now() - c0;
        double e = (bench_exact_energy("hold-vs-shared", sim, eps) - e0) / fabs(e0), t = k * sample;
        if (fabs(e) > r.err) r.err = fabs(e);
        r.err_end = fabs(e);
        st += t; se += e; stt += t * t; ste += t * e; ++ns;
        if (series) fprintf(series, "%s\t%g\t%.6e\n", spec, t, e);
    }
    if (ns > 1) r.slope = (ns * ste - st * se) / (ns * stt - st * st);
    r.cost = bench_run_cost(sim);
    gp_sim_free(sim);
    return r;
}

int main(int argc, char **argv)
{
    size_t n = 4096;
    double t_end = 10.0;
    const char *model = "galaxy", *runs[64], *ic_path = NULL;
    int nr = 0;
    enum { MAX_IC = 16 };
    gp_param icopt[MAX_IC + 1];
    int nic = 0;
    unsigned long long seed = 42;
    const bench_options common = {&n, &t_end, &plugin, &eps, &theta, &threads, &seed};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (bench_common_option(&common, a, v)) continue;
        if (!strcmp(a, "--sample")) sample = atof(v);
        else if (!strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--series")) series = fopen(v, "a");
        else if (!strcmp(a, "--ic-path")) { ic_path = v; model = "file"; n = 0; }
        else if (!strcmp(a, "--ic")) {
            /* name=value[,name=value...]; the strings live as long as argv */
            for (char *p = argv[i + 1]; p && *p;) {
                char *comma = strchr(p, ','), *eq = strchr(p, '=');
                if (comma) *comma = '\0';
                if (!eq || (comma && eq > comma) || nic == MAX_IC) {
                    fprintf(stderr, "hold-vs-shared: --ic wants name=value[,name=value...] (at most %d)\n", MAX_IC);
                    return 2;
                }
                *eq = '\0';
                icopt[nic++] = (gp_param){ p, eq + 1 };
                p = comma ? comma + 1 : NULL;
            }
        }
        else if (!strcmp(a, "--run") && nr < 64) runs[nr++] = v;
        else { fprintf(stderr, "hold-vs-shared: unknown option %s\n", a); return 2; }
    }
    gp_ic ic;
    char err[512];
    if (ic_path) icopt[nic++] = (gp_param){ "path", ic_path };
    gp_ic_opts opts = { icopt, (size_t)nic };
    if (gp_ic_make(model, n, seed, nic ? &opts : NULL, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "hold-vs-shared: %s\n", err);
        return 1;
    }
    double e0 = bench_ic_energy("hold-vs-shared", &ic, eps);
    printf("# hold-vs-shared: %s n = %zu seed %llu", model, ic.n, seed);
    for (int k = 0; k < nic; ++k) printf("%s %s = %s", k ? "," : "", icopt[k].name, icopt[k].value);
    printf(", %s eps = %s theta = %s threads = %s, t = 0 .. %g, samples every %g, energies from %s\n", plugin,
           eps, theta, threads ? threads : "default", t_end, sample, bench_energy_spec());
    printf("run\tdE_max\tdE_end\tdE_slope\tsteps\tforce_calls\tparticle_forces\tinteractions\tsrc_per_pf\tlevels\twall_s"
           "\tcriterion_pf\tcriterion_pairs\tcpu_s\tpp\tbuilds\trefits\tbuild_s\tmoments_s\twalk_s"
           "\tcriterion_calls\tcalls_per_step\tcriterion_calls_per_step\tcriterion_cpu_s\tcriterion_cpu_share"
           "\tcriterion_pair_share\n");
    result r[64];
    for (int i = 0; i < nr; ++i) {
        r[i] = run(&ic, runs[i], t_end, e0);
        const bench_cost *c = &r[i].cost;
        double steps = c->steps ? (double)c->steps : 1.0, crit_cpu = 1e-9 * (double)c->criterion_cpu_ns;
        printf("%s\t%.4e\t%.4e\t%+.3e\t%llu\t%llu\t%llu\t%llu\t%.0f\t%zu\t%.4f\t%llu\t%llu\t%.4f"
               "\t%llu\t%llu\t%llu\t%.3f\t%.3f\t%.3f\t%llu\t%.1f\t%.1f\t%.3f\t%.3f\t%.3f\n", r[i].spec, r[i].err,
               r[i].err_end, r[i].slope, (unsigned long long)r[i].cost.steps, (unsigned long long)r[i].cost.force_calls,
               (unsigned long long)r[i].cost.particle_forces, (unsigned long long)r[i].cost.interactions,
               (double)r[i].cost.interactions / (double)r[i].cost.particle_forces, r[i].cost.levels, r[i].wall,
               (unsigned long long)r[i].cost.criterion_forces, (unsigned long long)r[i].cost.criterion_pairs,
               r[i].cpu, (unsigned long long)r[i].cost.stats.pp_interactions,
               (unsigned long long)r[i].cost.stats.tree_builds,
               (unsigned long long)r[i].cost.stats.tree_refits, r[i].cost.stats.seconds_build,
               r[i].cost.stats.seconds_moments, r[i].cost.stats.seconds_walk,
               (unsigned long long)c->criterion_calls, (double)c->force_calls / steps,
               (double)c->criterion_calls / steps, crit_cpu, r[i].cpu > 0 ? crit_cpu / r[i].cpu : 0.0,
               c->interactions ? (double)c->criterion_pairs / (double)c->interactions : 0.0);
        fflush(stdout);
    }
    printf("# against leapfrog at the same max error (leapfrog cost interpolated in log-log between the bracketing leapfrog runs)\n");
    printf("# run\tdE_max\tparticle_forces\tleapfrog_pf_eq\tforce_ratio\twall_ratio\tinteraction_ratio\n");
    for (int b = 0; b < nr; ++b) {
        if (!strncmp(r[b].spec, "leapfrog", 8)) continue;
        int lo = -1, hi = -1;
        for (int i = 0; i < nr; ++i) {
            if (strncmp(r[i].spec, "leapfrog", 8)) continue;
            if (r[i].err >= r[b].err && (lo < 0 || r[i].err < r[lo].err)) lo = i;
            if (r[i].err <= r[b].err && (hi < 0 || r[i].err > r[hi].err)) hi = i;
        }
        if (lo < 0 || hi < 0) {
            printf("%s\t%.3e\t%llu\tnot bracketed by the leapfrog runs\n", r[b].spec, r[b].err,
                   (unsigned long long)r[b].cost.particle_forces);
            continue;
        }
        double f = r[lo].err == r[hi].err ? 0.0 : log(r[b].err / r[lo].err) / log(r[hi].err / r[lo].err);
        double pf = exp(log((double)r[lo].cost.particle_forces) + f * log((double)r[hi].cost.particle_forces / (double)r[lo].cost.particle_forces));
        double wall = exp(log(r[lo].wall) + f * log(r[hi].wall / r[lo].wall));
        /* interactions (pp + pc) too: a kick from a small source subset is
         * cheap on a tree, so particle forces overstate hold's deep kicks */
        double in = exp(log((double)r[lo].cost.interactions) + f * log((double)r[hi].cost.interactions / (double)r[lo].cost.interactions));
        printf("%s\t%.3e\t%llu\t%.0f\t%.2f\t%.2f\t%.2f\n", r[b].spec, r[b].err, (unsigned long long)r[b].cost.particle_forces, pf,
               pf / (double)r[b].cost.particle_forces, wall / r[b].wall, in / (double)r[b].cost.interactions);
    }
    if (series) fclose(series);
    gp_ic_free(&ic);
    return 0;
}
