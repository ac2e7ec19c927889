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
 * gp_mpi_decompose. Deterministic: integer weights, exact quantiles.
 * gravhost-mpi's migrations balance every level set instead
 * (gp_mpi_decompose_levels, below); this contiguous cut stays for callers
 * that want one piece of the curve per rank, and as its yardstick. */
#define GP_DECOMP_MAX_WEIGHT_LEVEL 24
int gp_mpi_decompose_weighted(MPI_Comm comm, size_t *n, size_t ncol, int level_col, double **data,
                              uint64_t **id, char *err, size_t errlen);

/* Block time steps over the ranks: every level set balanced, not only the
 * total. A block step's active particles are those of level >= L, and the
 * step waits for the rank with the most of them; a contiguous cut by weight
 * (above) balances the sum over a dt_max but, in a galaxy, hands the deep
 * levels of the centre to one rank (measured at 2^20, P = 2: 400 against
 * 43000 active particles on the deepest steps,
 * bench/results/mpi-tree/raw/mpi-tree.md). So the curve is cut into
 * GP_DECOMP_PIECES_PER_RANK * P pieces of equal weight, each level set
 * weighing the same in all (a row weighs, for each
 * set it is in, 1 / that set's global count), and the pieces are dealt to
 * the ranks to shorten a dt_max: T = sum over the sets c = 0 ..
 * GP_DECOMP_LEVEL_SETS - 1 (the last holding every deeper level) of the
 * block steps that make set c the active one times the largest count of
 * set c on a rank, largest pieces first, each where it raises T least (LPT
 * scheduling; Gadget-4 balances its time bins with more domain pieces than
 * ranks likewise). A rank's domain is then a few pieces of the curve, each
 * compact; 4 pieces per rank measured best at 2^20, P = 2 (8: 7-9%
 * slower, more LET and interactions). The same guarantees otherwise:
 * deterministic, every row kept, sorted by (key, id) on its rank, a rank
 * never left empty. */
#define GP_DECOMP_PIECES_PER_RANK 4
#define GP_DECOMP_LEVEL_SETS 8
int gp_mpi_decompose_levels(MPI_Comm comm, size_t *n, size_t ncol, int level_col, double **data,
                            uint64_t **id, char *err, size_t errlen);

#endif /* GP_HOST_MPI_DECOMP_H */
