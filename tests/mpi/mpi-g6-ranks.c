/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-g6-ranks.c — libgravplug-g6 under mpirun (P >= 2; rank 0 prints
 * TAP): every rank an identical client making the same g6 calls. On
 * mpi-tree, g6_open returns -1 on every rank, with a sentence that names
 * the ranks, and nothing hangs (each rank's copy of j-memory would be a
 * source for every rank: the library runs mpi-tree at P = 1 only,
 * docs/GRAPE6.md); the library stays closed and usable after it. A
 * one-process plugin on each rank (cpu-direct) opens and computes as in
 * one process: the model of a parallel GRAPE code, whose ranks each hold
 * their own j-memory.
 *
 *   mpi-g6-ranks MPI_TREE_SO CPU_DIRECT_SO
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "g6.h"
#include "mpi-testlib.h"

static int rank, size;

/* g6_open_ with stderr caught into said (the library's sentence). */
static int open_caught(char *said, size_t len)
{
    char path[] = "/tmp/gp-g6-ranks-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    if (fd < 0 || saved < 0) bail("mkstemp or dup failed");
    fflush(stderr);
    dup2(fd, 2);
    int id = 0, rc = g6_open_(&id);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t got = pread(fd, said, len - 1, 0);
    while (got > 0 && said[got - 1] == '\n') --got;
    said[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &size);
    if (argc != 3) bail("usage: mpi-g6-ranks MPI_TREE_SO CPU_DIRECT_SO");
    if (rank == 0) plan_lazy();
    alarm(120); /* a hang (ranks out of step) fails */

    char said[4096], want[64];
    setenv("GRAVPLUG_G6_PLUGIN", argv[1], 1);
    int rc = open_caught(said, sizeof said);
    snprintf(want, sizeof want, "runs on %d MPI ranks", size);
    mpi_test_ok(rank, rc == -1, "%s: g6_open returns -1 on every rank", "mpi-tree");
    mpi_test_ok(rank, strstr(said, "gravplug-g6: g6_open: plugin mpi-tree") != NULL && strstr(said, want) != NULL,
                "%s", "the sentence names the plugin and the number of ranks");
    if (rank == 0) diag("rank 0 was told: %s", said);
    double t = 0.0;
    int clid = 0;
    mpi_test_ok(rank, g6_set_ti_(&clid, &t) == -1, "%s", "the library stays closed after the refusal");

    /* each rank its own one-process plugin and j-memory */
    setenv("GRAVPLUG_G6_PLUGIN", argv[2], 1);
    rc = open_caught(said, sizeof said);
    mpi_test_ok(rank, rc == 0, "%s: g6_open returns 0 on every rank", "cpu-direct");
    int a = 0, idx = 10 + rank, nj = 1, ni = 1, iidx = -1;
    double dtj = 0.0, m = 1.0 + rank, zero[3] = {0, 0, 0}, xj[3] = {0, 0, 0};
    double xi[1][3] = {{2.0, 0, 0}}, vi[1][3] = {{0, 0, 0}}, eps2 = 0.0, h2[1] = {0.0};
    double acc[1][3], jerk[1][3], pot[1];
    int okj = g6_set_j_particle_(&clid, &a, &idx, &t, &dtj, &m, zero, zero, zero, zero, xj) == 0;
    okj = okj && g6_set_ti_(&clid, &t) == 0;
    okj = okj && g6calc_lasthalf_(&clid, &nj, &ni, &iidx, xi, vi, &eps2, h2, acc, jerk, pot) == 0;
    /* this rank's j-particle alone: a = -m / 4 along x, pot = -m / 2 */
    mpi_test_ok(rank, okj && fabs(acc[0][0] + m / 4) < 1e-15 && fabs(pot[0] + m / 2) < 1e-15,
                "%s", "cpu-direct: each rank's force from its own j-memory alone");
    mpi_test_ok(rank, g6_close_(&clid) == 0, "%s", "g6_close");
    return mpi_test_done(rank);
}
