/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-gpsim.c — gp_sim (libgravplug's integrators, unchanged) under
 * mpirun with mpi-tree: every rank runs a gp_sim over its own particles
 * with the shared-step leapfrog, so every rank makes the same solver calls
 * and mpi-tree's collectives line up. At each synchronisation point (every
 * 8 steps of dt) the particles migrate: gp_sim_get_particles, the
 * Peano-Hilbert decomposition (host_stub/mpi/decomp.c, velocities riding
 * along), gp_sim_set_particles. Energies are global reductions of each
 * rank's gp_sim_energies. Rank 0 runs the same in one process with
 * cpu-tree: the energy errors must agree within tree error. Twice: with
 * bmax, and with the acceleration MAC, under which every step also sends
 * the last accelerations (integrators/solver/force.c), a collective set_state.
 *
 * The block-step integrators, whose schedule follows each rank's own
 * particles, need the collective hook (gp_sim_set_collective) and are
 * tested in tests/mpi/mpi-blocksim.c.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "host_stub/ic/ic.h"
#include "host_stub/mpi/decomp.h"
#include "integrators/gp_sim.h"
#include "tap.h"
#include "mpi-testlib.h"

static int rank, P;

/* mac: the tree's opening criterion ("bmax", or "acceleration" at delta_acc
 * 0.005, whose |a_old| the shared steps send as a state after every
 * step's set_particles: a collective set_state on mpi-tree) */
static gp_sim *make_sim(const char *plugin, size_t n, const double *d, const uint64_t *id, double t,
                        const char *mac)
{
    gp_sim *sim = NULL;
    const char *names[] = { "eps", "theta", "mac", "delta_acc" },
               *values[] = { "0.01", "0.5", mac, "0.005" };
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel), *m = malloc(n * sizeof *m);
    mpi_test_split_rows(n, d, pos, vel, m);
    if (gp_sim_new(&sim) || gp_sim_open_solver(sim, plugin, 4, names, values) ||
        gp_sim_set_integrator(sim, "leapfrog") || gp_sim_set_integrator_param(sim, "dt", "0.0078125") ||
        gp_sim_set_particles(sim, n, pos, vel, m, id) || gp_sim_set_time(sim, t))
        bail(sim ? gp_sim_last_error(sim) : "gp_sim_new failed");
    free(pos); free(vel); free(m);
    return sim;
}

/* Total energy: a global sum when mpi. */
static double energy(gp_sim *sim, int mpi)
{
    double k, w, e[2], g[2];
    if (gp_sim_energies(sim, &k, &w)) bail(gp_sim_last_error(sim));
    e[0] = k; e[1] = w;
    if (mpi) MPI_Allreduce(e, g, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else { g[0] = e[0]; g[1] = e[1]; }
    return g[0] + g[1];
}

/* Runs 4 legs of 8 steps; returns |dE/E|. d and id are freed when mpi. */
static double run(const char *plugin, int mpi, size_t n, double *d, uint64_t *id, const char *mac)
{
    char err[256];
    double t = 0, E0 = 0, E = 0;
    for (int leg = 0; leg < 4; leg++) {
        if (mpi && gp_mpi_decompose(MPI_COMM_WORLD, &n, MPI_TEST_NCOL, &d, &id, err, sizeof err)) bail(err);
        gp_sim *sim = make_sim(plugin, n, d, id, t, mac);
        if (leg == 0) E0 = energy(sim, mpi);
        t += 8 * 0.0078125;
        if (gp_sim_evolve(sim, t)) bail(gp_sim_last_error(sim));
        if (leg == 3) E = energy(sim, mpi);
        /* the synchronised state back into the rows, to migrate */
        double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
        if (gp_sim_get_particles(sim, pos, vel, NULL, NULL)) bail(gp_sim_last_error(sim));
        for (size_t k = 0; k < n; k++) {
            memcpy(&d[k * MPI_TEST_NCOL], &pos[3 * k], 3 * sizeof *pos);
            memcpy(&d[k * MPI_TEST_NCOL + 3], &vel[3 * k], 3 * sizeof *vel);
        }
        free(pos); free(vel);
        gp_sim_free(sim);
    }
    if (mpi) { free(d); free(id); }
    return fabs((E - E0) / E0);
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &P);
    const size_t N = 3000;
    double *all = mpi_test_plummer_rows(N, 5);
    /* rank r starts with the i % P == r rows (the decomposition sorts it out) */
    static const char *const macs[2] = { "bmax", "acceleration" };
    for (int k = 0; k < 2; k++) {
        double *d;
        uint64_t *id;
        size_t n = mpi_test_deal_rows(rank, P, N, all, &d, &id);
        double de_mpi = run("mpi-tree", 1, n, d, id, macs[k]);
        if (rank == 0) {
            uint64_t *ids = malloc(N * sizeof *ids);
            double *copy = malloc(N * MPI_TEST_NCOL * sizeof *copy);
            for (size_t i = 0; i < N; i++) ids[i] = i;
            memcpy(copy, all, N * MPI_TEST_NCOL * sizeof *copy);
            double de_one = run("cpu-tree", 0, N, copy, ids, macs[k]);
            free(ids);
            free(copy);
            diag("P = %d, mac = %s: gp_sim leapfrog, 32 steps, migration every 8: |dE/E| %.3g "
                 "(cpu-tree alone %.3g)", P, macs[k], de_mpi, de_one);
            ok(de_mpi < 3 * de_one + 1e-4,
               "gp_sim with mpi-tree, mac = %s: energy error within tree error of one process", macs[k]);
        }
    }
    free(all);
    return mpi_test_done(rank);
}
