/*
 * block-vs-shared.c — the point of block time steps, measured: on the
 * galaxy-like model, block-step RK2 (GOTHIC) against shared-step RK2 at
 * the same energy error, with the same tree solver.
 *
 *   block-vs-shared [--n N] [--t T] [--plugin P] [--eps E] [--theta TH]
 *                   [--dtmax D] [--eta ETA] [--shared K1,K2,...] [--seed S]
 *                   [--threads T] [--sample DT] [--criterion C] [--block NAME]
 *
 * One block run (dt_max D, criterion eta*sqrt(eps/|a|)) and shared-step
 * rk2 runs with dt = D / 2^K for each K. The energy error is the largest
 * |E(t) - E(0)| / |E(0)| over samples every DT (default D) up to T, with
 * energies from cpu-direct (exact) on a copy of the state, outside the
 * timed part, so the tree's own potential error does not enter. The shared
 * step that gives the block run's energy error is interpolated in
 * log(error)-log(dt) between the two bracketing shared runs, and the
 * shared run's cost there (force cost = particle forces, and wall time)
 * is divided by the block run's. Output: a TSV table and a summary.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_integrator.h"
#include "ic.h"

typedef struct result {
    const char *scheme;
    double dt, err, wall;
    uint64_t steps, force_calls, particle_forces, interactions;
    size_t levels;
    double build_s, moments_s, walk_s;
} result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, gp_sim *sim)
{
    fprintf(stderr, "block-vs-shared: %s: %s\n", what, gp_sim_last_error(sim));
    exit(1);
}

/* Exact energy of sim's state now, on a separate cpu-direct simulation so
 * the measured run's solver is not disturbed. */
static gp_sim *meas;
static double *mpos, *mvel, *mmass;

static double exact_energy(gp_sim *sim, const char *eps)
{
    size_t n = gp_sim_count(sim);
    if (!meas) {
        const char *nm[] = { "eps" }, *v[] = { eps };
        gp_sim_new(&meas);
        if (gp_sim_open_solver(meas, "cpu-direct", 1, nm, v) != GP_OK) die("cpu-direct", meas);
        mpos = malloc(3 * n * sizeof *mpos); mvel = malloc(3 * n * sizeof *mvel); mmass = malloc(n * sizeof *mmass);
    }
    if (gp_sim_get_particles(sim, mpos, mvel, mmass, NULL) != GP_OK) die("get", sim);
    if (gp_sim_set_particles(meas, n, mpos, mvel, mmass, NULL) != GP_OK) die("set", meas);
    double k, w;
    if (gp_sim_energies(meas, &k, &w) != GP_OK) die("energies", meas);
    return k + w;
}

static const char *threads; /* --threads: the plugin's threads parameter */
static double sample;        /* energy sampling interval (default dt_max) */
static const char *criterion = "softening";
static const char *block = "block-rk2";   /* --block: the block integrator */

static result run(const gp_ic *ic, const char *plugin, const char *eps, const char *theta,
                  const char *integ, double dt, double eta, double t_end, double e0)
{
    result r = { .scheme = integ, .dt = dt };
    gp_sim *sim;
    gp_sim_new(&sim);
    /* theta only for tree plugins (cpu-direct rejects it) */
    const char *n[3] = { "eps" }, *v[3] = { eps };
    size_t np = 1;
    if (strstr(plugin, "tree")) { n[np] = "theta"; v[np++] = theta; }
    if (threads) { n[np] = "threads"; v[np++] = threads; }
    if (gp_sim_open_solver(sim, plugin, np, n, v) != GP_OK) die(plugin, sim);
    if (gp_sim_set_particles(sim, ic->n, ic->pos, ic->vel, ic->mass, ic->id) != GP_OK) die("particles", sim);
    if (gp_sim_set_integrator(sim, integ) != GP_OK) die(integ, sim);
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
        double t0 = now();
        if (gp_sim_evolve(sim, k * sample) != GP_OK) die("evolve", sim);
        r.wall += now() - t0;
        double e = fabs((exact_energy(sim, eps) - e0) / e0);
        if (e > r.err) r.err = e;
        if (getenv("BVS_VERBOSE")) fprintf(stderr, "%s dt %g: t = %g dE_rel %.3e\n", integ, dt, k * sample, e);
    }
    gp_sim_counter(sim, "steps", &r.steps);
    gp_sim_counter(sim, "force_calls", &r.force_calls);
    gp_sim_counter(sim, "particle_forces", &r.particle_forces);
    gp_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    gp_sim_solver_stats(sim, &st);
    r.interactions = st.pp_interactions + st.pc_interactions;
    r.build_s = st.seconds_build;
    r.moments_s = st.seconds_moments;
    r.walk_s = st.seconds_walk;
    uint64_t counts[64];
    gp_sim_level_counts(sim, counts, 64, &r.levels);
    gp_sim_free(sim);
    return r;
}

static void print_row(const result *r)
{
    printf("%s\t%.6g\t%.4e\t%llu\t%llu\t%llu\t%llu\t%zu\t%.2f\t%.2f\t%.2f\t%.2f\n", r->scheme, r->dt, r->err,
           (unsigned long long)r->steps, (unsigned long long)r->force_calls,
           (unsigned long long)r->particle_forces, (unsigned long long)r->interactions, r->levels, r->wall,
           r->build_s, r->moments_s, r->walk_s);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t n = 16384;
    double t_end = 1.0, dtmax = 0.25, eta = 0.2;
    const char *plugin = "cpu-tree", *eps = "0.01", *theta = "0.5", *shared = "3,4,5,6";
    unsigned long long seed = 42;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--n")) n = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--t")) t_end = atof(v);
        else if (!strcmp(a, "--plugin")) plugin = v;
        else if (!strcmp(a, "--eps")) eps = v;
        else if (!strcmp(a, "--theta")) theta = v;
        else if (!strcmp(a, "--dtmax")) dtmax = atof(v);
        else if (!strcmp(a, "--eta")) eta = atof(v);
        else if (!strcmp(a, "--shared")) shared = v;
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--threads")) threads = v;
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
    gp_sim *sim;
    gp_sim_new(&sim);
    if (gp_sim_set_particles(sim, ic.n, ic.pos, ic.vel, ic.mass, ic.id) != GP_OK) die("particles", sim);
    double e0 = exact_energy(sim, eps);
    gp_sim_free(sim);

    printf("# block-vs-shared: galaxy n = %zu seed %llu, %s eps = %s theta = %s threads = %s, t = 0 .. %g, block dt_max = %g eta = %g criterion %s\n",
           ic.n, seed, plugin, eps, theta, threads ? threads : "default", t_end, dtmax, eta, criterion);
    printf("# energy error: max over t = %g, %g, ... of |E(t) - E(0)| / |E(0)|, measured with cpu-direct; wall = evolve only\n",
           sample, 2 * sample);
    printf("scheme\tdt\tdE_rel\tsteps\tforce_calls\tparticle_forces\tinteractions\tlevels\twall_s\tbuild_s\tmoments_s\twalk_s\n");
    result blk = run(&ic, plugin, eps, theta, block, dtmax, eta, t_end, e0);
    print_row(&blk);
    result sh[16];
    int ns = 0;
    for (const char *p = shared; *p && ns < 16;) {
        int k = atoi(p);
        sh[ns] = run(&ic, plugin, eps, theta, "rk2", ldexp(dtmax, -k), eta, t_end, e0);
        print_row(&sh[ns++]);
        p = strchr(p, ',');
        if (!p) break;
        ++p;
    }
    /* bracket the block run's error between two shared runs */
    int lo = -1;
    for (int i = 0; i + 1 < ns; ++i)
        if ((sh[i].err - blk.err) * (sh[i + 1].err - blk.err) <= 0) lo = i;
    if (lo < 0) {
        printf("# the shared runs do not bracket the block run's energy error %.3e: widen --shared\n", blk.err);
        gp_ic_free(&ic);
        return 0;
    }
    const result *a = &sh[lo], *b = &sh[lo + 1];
    double s = log(blk.err / a->err) / log(b->err / a->err);   /* 0 at a, 1 at b */
    double dt_eq = exp(log(a->dt) + s * log(b->dt / a->dt));
    double pf_eq = (double)ic.n * t_end / dt_eq;
    double wall_per_step = exp(log(a->wall / (double)a->steps) + s * log((b->wall / (double)b->steps) / (a->wall / (double)a->steps)));
    double wall_eq = wall_per_step * t_end / dt_eq;
    printf("# shared rk2 step giving the block run's energy error (%.3e): dt = %.5g (interpolated between %g and %g)\n",
           blk.err, dt_eq, a->dt, b->dt);
    printf("# speedup of block over shared at equal energy error: force cost (particle forces) %.2fx, wall time %.2fx\n",
           pf_eq / (double)blk.particle_forces, wall_eq / blk.wall);
    printf("# bracketing measured runs: dt %g (err %.3e): force cost %.2fx, wall %.2fx; dt %g (err %.3e): force cost %.2fx, wall %.2fx\n",
           a->dt, a->err, (double)a->particle_forces / (double)blk.particle_forces, a->wall / blk.wall,
           b->dt, b->err, (double)b->particle_forces / (double)blk.particle_forces, b->wall / blk.wall);
    gp_ic_free(&ic);
    return 0;
}
