/*
 * exact_energy.c — see exact_energy.h. One cpu-direct simulation is kept
 * for the life of the program (the benchmarks measure runs of one size).
 */
#include "exact_energy.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static gp_sim *meas;
static double *mpos, *mvel, *mmass;
static size_t mcap;

static void fail(const char *prog, const char *what, gp_sim *sim)
{
    fprintf(stderr, "%s: %s: %s\n", prog, what, gp_sim_last_error(sim));
    exit(1);
}

double bench_exact_energy(const char *prog, gp_sim *sim, const char *eps)
{
    size_t n = gp_sim_count(sim);
    if (!meas) {
        const char *nm[] = { "eps" }, *v[] = { eps };
        gp_sim_new(&meas);
        if (gp_sim_open_solver(meas, "cpu-direct", 1, nm, v) != GP_OK) fail(prog, "cpu-direct", meas);
    }
    if (n > mcap) {
        free(mpos); free(mvel); free(mmass);
        mpos = malloc(3 * n * sizeof *mpos); mvel = malloc(3 * n * sizeof *mvel); mmass = malloc(n * sizeof *mmass);
        if (!mpos || !mvel || !mmass) { fprintf(stderr, "%s: out of memory\n", prog); exit(1); }
        mcap = n;
    }
    if (gp_sim_get_particles(sim, mpos, mvel, mmass, NULL) != GP_OK) fail(prog, "get", sim);
    if (gp_sim_set_particles(meas, n, mpos, mvel, mmass, NULL) != GP_OK) fail(prog, "set", meas);
    double k, w;
    if (gp_sim_energies(meas, &k, &w) != GP_OK) fail(prog, "energies", meas);
    return k + w;
}

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
