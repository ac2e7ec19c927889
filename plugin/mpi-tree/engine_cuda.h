/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine_cuda.h — mpi-tree's `engine = cuda-tree`: each rank's local
 * forces come from an instance of the cuda-tree plugin (dlopen'ed), the
 * received LETs are still walked on the CPU by mpi-tree's own walk.
 *
 * The engine mirrors the rank's particles into the sub-instance lazily:
 * mpi-tree marks what changed (mpi_tree_engine_mark), and mpi_tree_engine_forces / mpi_tree_engine_field bring
 * the sub-instance up to date (set_particles with the source masses, or
 * update_positions; the active subset; the mapped parameters) before they
 * call it. Nothing here is collective; mpi-tree agrees on the statuses.
 */
#ifndef GP_MPI_TREE_ENGINE_CUDA_H
#define GP_MPI_TREE_ENGINE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "base/base_instance.h"

typedef struct mpi_tree_engine mpi_tree_engine;

enum { MTE_POSITIONS = 1, MTE_PARTICLES = 2 };

/* Loads the cuda-tree plugin from path (NULL or "": gravplug-cuda-tree.so
 * beside mpi-tree's own .so) and starts an instance on the host's device
 * choice. Returns 0, or -1 with one sentence in why (what failed and what
 * to do). */
int mpi_tree_engine_open(mpi_tree_engine **out, const char *path, int device, char *why, size_t len);
void mpi_tree_engine_close(mpi_tree_engine *e);

/* Marks what changed in the rank's particles since the last call. */
void mpi_tree_engine_mark(mpi_tree_engine *e, int what);

/* The sub-instance's accelerations (and potentials, pot may be NULL) for
 * the active particles of p (in the order of p's active subset), with
 * source masses mass (zero outside the source subset). base supplies the
 * parameters to map (by name: G, eps, theta, mac, order, precision).
 * Returns 0, or -1 with a sentence in why. */
int mpi_tree_engine_forces(mpi_tree_engine *e, gp_base *base, const double *mass, double *acc, double *pot,
               char *why, size_t len);

/* The sub-instance's field at m points (m > 0). */
int mpi_tree_engine_field(mpi_tree_engine *e, gp_base *base, const double *mass, size_t m, const double *points,
              double *acc, double *pot, char *why, size_t len);

/* Runs job(arg) on the engine's own worker thread (started with the
 * engine and kept for its life: one thread per instance, not one per
 * call), or here and now when it has none; mpi_tree_engine_wait waits for it. Every
 * sub-instance call but init and finalize is made from inside a job when
 * mpi-tree overlaps; cuda-tree selects its device on each entry. */
void mpi_tree_engine_run(mpi_tree_engine *e, void (*job)(void *), void *arg);
void mpi_tree_engine_wait(mpi_tree_engine *e);

/* cuda-tree's cumulative interaction counts (0 when it has none). */
void mpi_tree_engine_interactions(mpi_tree_engine *e, uint64_t *pp, uint64_t *pc);

/* The parameters handed to cuda-tree, for the docs and the tests. */
extern const char *const mpi_tree_engine_mapped_params[];

#endif /* GP_MPI_TREE_ENGINE_CUDA_H */
