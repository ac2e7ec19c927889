/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block-vs-shared.c — the point of block time steps, measured: on the
 * galaxy-like model, block-step RK2 (GOTHIC) against shared-step RK2 at
 * the same energy error, with the same tree solver.
 *
 *   block-vs-shared [--n N] [--t T] [--plugin P] [--eps E] [--theta TH]
 *                   [--dtmax D] [--eta ETA1,ETA2,...] [--shared K1,K2,...] [--seed S]
 *                   [--threads T] [--sample DT] [--criterion C] [--block NAME]
 *
 * Block runs (dt_max D, criterion eta*sqrt(eps/|a|) by default), one per
 * listed eta, and shared-step rk2 runs with dt = D / 2^K for each K. Two
 * energy errors per run: the largest |E(t) - E(0)| / |E(0)| over samples
 * every DT (default D) up to T ("max"), and the one at T ("end"), with
 * energies from cpu-direct (exact) on a copy of the state, outside the
 * timed part, so the tree's own potential error does not enter. For each
 * block run and each error measure, the shared runs' cost curve (force
 * cost = particle forces, and wall time, against error) is interpolated in
 * log-log between the two bracketing shared runs at the block run's error,
 * and divided by the block run's cost. Output: a TSV table and a summary.
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
    const char *scheme;
    double dt, eta, err, err_end, wall;
    bench_cost cost;
} result;

static void die(const char *what, gp_sim *sim)
{
    bench_fail("block-vs-shared", what, sim);
}

static const char *threads; /* --threads: the plugin's threads parameter */
static double sample;        /* energy sampling interval (default dt_max) */
static const char *criterion = "softening";
static const char *block = "block-rk2";   /* --block: the block integrator */

static result run(const gp_ic *ic, const char *plugin, const char *eps, const char *theta,
                  const char *integ, double dt, double eta, double t_end, double e0)
{
    result r = { .scheme = integ, .dt = dt, .eta = strncmp(integ, "block", 5) == 0 ? eta : 0.0 };
    gp_sim *sim = bench_open_run("block-vs-shared", ic, plugin, eps, theta, threads, integ);
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", dt);
    if (gp_sim_set_integrator_param(sim, "dt", buf) != GP_OK) die("dt", sim);
    if (strncmp(integ, "block", 5) == 0) {
        snprintf(buf, sizeof buf, "%.17g", eta);
        if (gp_sim_set_integrator_param(sim, "eta", buf) != GP_OK) die("eta", sim);
        if (gp_sim_set_integrator_param(sim, "criterion", criterion) != GP_OK) die("criterion", sim);
    }
    /* the energy error is the largest over samples every `sample` time units
     * (multiples of dt_max keep the block run synchronised: no extra work) */
    for (int k = 1; k * sample <= t_end * (1 + 1e-12); ++k) {
        double t0 = bench_now();
        if (gp_sim_evolve(sim, k * sample) != GP_OK) die("evolve", sim);
        r.wall += bench_now() - t0;
        double e = fabs((bench_exact_energy("block-vs-shared", sim, eps) - e0) / e0);
        if (e > r.err) r.err = e;
        r.err_end = e;
        if (getenv("BVS_VERBOSE")) fprintf(stderr, "%s dt %g: t = %g dE_rel %.3e\n", integ, dt, k * sample, e);
    }
    r.cost = bench_run_cost(sim);
    gp_sim_free(sim);
    return r;
}

static void print_row(const result *r)
{
    printf("%s\t%.6g\t%.3g\t%.4e\t%.4e\t%llu\t%llu\t%llu\t%llu\t%zu\t%.2f\t%.2f\t%.2f\t%.2f\n", r->scheme, r->dt, r->eta, r->err, r->err_end,
           (unsigned long long)r->cost.steps, (unsigned long long)r->cost.force_calls,
           (unsigned long long)r->cost.particle_forces, (unsigned long long)r->cost.interactions, r->cost.levels, r->wall,
           r->cost.stats.seconds_build, r->cost.stats.seconds_moments, r->cost.stats.seconds_walk);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t n = 16384;
    double t_end = 1.0, dtmax = 0.25;
    const char *plugin = "cpu-tree", *eps = "0.01", *theta = "0.5", *shared = "3,4,5,6", *etas = "0.2";
    unsigned long long seed = 42;
    const bench_options common = {&n, &t_end, &plugin, &eps, &theta, &threads, &seed};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (bench_common_option(&common, a, v)) continue;
        if (!strcmp(a, "--dtmax")) dtmax = atof(v);
        else if (!strcmp(a, "--eta")) etas = v;
        else if (!strcmp(a, "--shared")) shared = v;
        else if (!strcmp(a, "--sample")) sample = atof(v);
        else if (!strcmp(a, "--criterion")) criterion = v;
        else if (!strcmp(a, "--block")) block = v;
        else { fprintf(stderr, "block-vs-shared: unknown option %s\n", a); return 2; }
    }
    if (!(sample > 0)) sample = dtmax;
    gp_ic ic;
    char err[512];
    if (gp_ic_make("galaxy", n, seed, NULL, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "block-vs-shared: %s\n", err);
        return 1;
    }
    double e0 = bench_ic_energy("block-vs-shared", &ic, eps);

    printf("# block-vs-shared: galaxy n = %zu seed %llu, %s eps = %s theta = %s threads = %s, t = 0 .. %g, block dt_max = %g eta = %s criterion %s\n",
           ic.n, seed, plugin, eps, theta, threads ? threads : "default", t_end, dtmax, etas, criterion);
    printf("# energy error: max over t = %g, %g, ... of |E(t) - E(0)| / |E(0)|, measured with cpu-direct; wall = evolve only\n",
           sample, 2 * sample);
    printf("scheme\tdt\teta\tdE_max\tdE_end\tsteps\tforce_calls\tparticle_forces\tinteractions\tlevels\twall_s\tbuild_s\tmoments_s\twalk_s\n");
    result blk[16], sh[16];
    int nb = 0, ns = 0;
    for (const char *p = etas; *p && nb < 16;) {
        blk[nb] = run(&ic, plugin, eps, theta, block, dtmax, atof(p), t_end, e0);
        print_row(&blk[nb++]);
        p = strchr(p, ',');
        if (!p) break;
        ++p;
    }
    for (const char *p = shared; *p && ns < 16;) {
        int k = atoi(p);
        sh[ns] = run(&ic, plugin, eps, theta, "rk2", ldexp(dtmax, -k), 0.0, t_end, e0);
        print_row(&sh[ns++]);
        p = strchr(p, ',');
        if (!p) break;
        ++p;
    }
    printf("# speedup of block over shared at equal energy error (shared cost interpolated in log-log at the block run's error)\n");
    printf("# eta\tmeasure\tdE\tblock_pf\tshared_dt_eq\tshared_pf_eq\tspeedup_force\tspeedup_wall\tblock_us_per_pf\tshared_us_per_pf\n");
    for (int b = 0; b < nb; ++b)
        for (int m = 0; m < 2; ++m) {
            const result *B = &blk[b];
            double eb = m ? B->err_end : B->err;
            /* the two shared runs (adjacent in dt) that bracket eb */
            int lo = -1;
            for (int i = 0; i + 1 < ns; ++i) {
                double ea = m ? sh[i].err_end : sh[i].err, ec = m ? sh[i + 1].err_end : sh[i + 1].err;
                if ((ea - eb) * (ec - eb) <= 0 && lo < 0) lo = i;
            }
            if (lo < 0) {
                printf("%g\t%s\t%.3e\t%llu\tnot bracketed by the shared runs (widen --shared)\n", B->eta,
                       m ? "end" : "max", eb, (unsigned long long)B->cost.particle_forces);
                continue;
            }
            const result *a = &sh[lo], *c = &sh[lo + 1];
            double ea = m ? a->err_end : a->err, ec = m ? c->err_end : c->err;
            double f = ea == ec ? 0.0 : log(eb / ea) / log(ec / ea);   /* 0 at a, 1 at c */
            double dt_eq = exp(log(a->dt) + f * log(c->dt / a->dt));
            double pf_eq = exp(log((double)a->cost.particle_forces) + f * log((double)c->cost.particle_forces / (double)a->cost.particle_forces));
            double wall_eq = exp(log(a->wall) + f * log(c->wall / a->wall));
            printf("%g\t%s\t%.3e\t%llu\t%.5g\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\n", B->eta, m ? "end" : "max", eb,
                   (unsigned long long)B->cost.particle_forces, dt_eq, pf_eq, pf_eq / (double)B->cost.particle_forces,
                   wall_eq / B->wall, 1e6 * B->wall / (double)B->cost.particle_forces,
                   1e6 * wall_eq / pf_eq);
        }
    gp_ic_free(&ic);
    return 0;
}
