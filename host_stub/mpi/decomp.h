/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decomp.h — Peano-Hilbert domain decomposition of particles over MPI ranks
 * (gravhost under mpirun: host_stub/mpi/par_mpi.c calls it for the initial
 * conditions and every migration, so each rank's particles stay compact in
 * space and the LETs small).
 *
 * Every rank passes its particles as rows of ncol doubles (the first three
 * columns the position; velocities, masses, integrator state ... follow,
 * carried along unchanged) and a unique 64-bit id per row. On return rank
 * q holds the rows whose (Peano-Hilbert key, id) order places them in
 * [q N / P, (q + 1) N / P) of the global order, sorted in that order: the
 * ranks' sets are contiguous pieces of the curve, balanced to one
 * particle, and — because the cut points are exact quantiles found by
 * bisection, not sampled — they do not depend on how the particles were
 * spread over the ranks before. Keys use the cube around all particles.
 *
 * Collective; returns 0, or -1 with the same sentence on every rank (no
 * memory) and the rows unchanged. Needs MPI; not part of libgravplug.
 */
#ifndef GP_HOST_MPI_DECOMP_H
#define GP_HOST_MPI_DECOMP_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* *n rows of ncol doubles in *data, ids in *id (malloc'd; replaced by
 * new malloc'd arrays). */
int gp_mpi_decompose(MPI_Comm comm, size_t *n, size_t ncol, double **data, uint64_t **id,
                     char *err, size_t errlen);

/* The same with each row weighted by 2^level, level = the row's column
 * level_col (block time steps: the times a particle is active per dt_max,
 * GP_DECOMP_MAX_WEIGHT_LEVEL at most), so that rank q holds the piece of
 * the curve whose weights lie in [q W / P, (q + 1) W / P) of the total W:
 * the deep levels' particles, which a galaxy keeps in its centre and one
 * Peano-Hilbert piece would hold alone, spread over the ranks, and every
 * rank gets about the same active work per dt_max (Gadget-2 balances its
 * domains by work likewise). level_col < 0: every weight 1, which is
 * gp_mpi_decompose. Deterministic: integer weights, exact quantiles. */
#define GP_DECOMP_MAX_WEIGHT_LEVEL 24
int gp_mpi_decompose_weighted(MPI_Comm comm, size_t *n, size_t ncol, int level_col, double **data,
                              uint64_t **id, char *err, size_t errlen);

#endif /* GP_HOST_MPI_DECOMP_H */
