/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-testlib.h — what the tests under mpirun share: starting MPI, a TAP
 * verdict every rank agrees on (rank 0 prints it), the solvers they compare
 * mpi-tree with, and the particle rows (x y z vx vy vz m) that
 * host_stub/mpi/decomp.h moves between ranks. Header-only (static inline),
 * so each test links only what it uses.
 */
#ifndef GP_TESTS_MPI_TESTLIB_H
#define GP_TESTS_MPI_TESTLIB_H

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* Columns of a particle row: position, velocity, mass. */
enum { MPI_TEST_NCOL = 7 };

/* MPI_Init, then this process's rank and the number of ranks. */
static inline void mpi_test_start(int *argc, char ***argv, int *rank, int *size)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* One TAP line from rank 0; it passes only when pass holds on every rank.
 * Collective. */
static inline void mpi_test_ok(int rank, int pass, const char *fmt, const char *what)
{
    int all = 0;
    MPI_Allreduce(&pass, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0) ok(all, fmt, what);
}

/* The end of main: rank 0's TAP plan and verdict, MPI_Finalize; returns
 * main's exit status. Collective. */
static inline int mpi_test_done(int rank)
{
    int rc = rank == 0 ? done_testing() : 0;
    MPI_Finalize();
    return rc;
}

#ifdef GRAVPLUG_LOADER_H
/* cpu-tree, cpu-direct and mpi-tree from the build's plugin folder, as
 * *pt, *pd, *pm (to close) and their tables (bails out when one does not
 * open). Declared when gravplug_loader.h is included first. */
static inline void mpi_test_open_solvers(gp_plugin **pt, gp_plugin **pd, gp_plugin **pm,
                                         const gp_api **tree, const gp_api **direct,
                                         const gp_api **mpi)
{
    char err[1024];
    if (gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-cpu-tree.so", pt, err, sizeof err) ||
        gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-cpu-direct.so", pd, err, sizeof err) ||
        gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-mpi-tree.so", pm, err, sizeof err))
        bail(err);
    *tree = gp_plugin_api(*pt);
    *direct = gp_plugin_api(*pd);
    *mpi = gp_plugin_api(*pm);
}
#endif

/* Rows rows[N * MPI_TEST_NCOL] from separate arrays. */
static inline void mpi_test_rows(size_t N, const double *pos, const double *vel,
                                 const double *mass, double *rows)
{
    for (size_t i = 0; i < N; i++) {
        memcpy(&rows[i * MPI_TEST_NCOL], &pos[3 * i], 3 * sizeof *rows);
        memcpy(&rows[i * MPI_TEST_NCOL + 3], &vel[3 * i], 3 * sizeof *rows);
        rows[i * MPI_TEST_NCOL + 6] = mass[i];
    }
}

/* The other way: n rows into pos[3n], vel[3n], m[n]. */
static inline void mpi_test_split_rows(size_t n, const double *rows, double *pos, double *vel,
                                       double *m)
{
    for (size_t k = 0; k < n; k++) {
        memcpy(&pos[3 * k], &rows[k * MPI_TEST_NCOL], 3 * sizeof *pos);
        memcpy(&vel[3 * k], &rows[k * MPI_TEST_NCOL + 3], 3 * sizeof *vel);
        m[k] = rows[k * MPI_TEST_NCOL + 6];
    }
}

/* Rank `rank`'s rows of all[N] when they are dealt round-robin (row i to
 * rank i % P), with ids i, into fresh *d / *id (room for N); returns how
 * many. */
static inline size_t mpi_test_deal_rows(int rank, int P, size_t N, const double *all, double **d,
                                        uint64_t **id)
{
    size_t n = 0;
    *d = malloc((N ? N : 1) * MPI_TEST_NCOL * sizeof **d);
    *id = malloc((N ? N : 1) * sizeof **id);
    for (size_t i = 0; i < N; i++)
        if ((int)(i % (size_t)P) == rank) {
            memcpy(&(*d)[n * MPI_TEST_NCOL], &all[i * MPI_TEST_NCOL], MPI_TEST_NCOL * sizeof **d);
            (*id)[n++] = i;
        }
    return n;
}

#ifdef GP_IC_H
/* A seeded Plummer sphere of N particles as fresh rows (bails out when it
 * cannot be made). Declared when host_stub/ic/ic.h is included first. */
static inline double *mpi_test_plummer_rows(size_t N, uint64_t seed)
{
    gp_ic ic;
    char err[256];
    if (gp_ic_make("plummer", N, seed, NULL, &ic, err, sizeof err)) bail(err);
    double *all = malloc(N * MPI_TEST_NCOL * sizeof *all);
    mpi_test_rows(N, ic.pos, ic.vel, ic.mass, all);
    gp_ic_free(&ic);
    return all;
}
#endif

#endif /* GP_TESTS_MPI_TESTLIB_H */
