/* SPDX-License-Identifier: Apache-2.0 */
/*
 * par.h — what `gravhost run` needs from the ranks of a parallel run.
 * Two implementations: par_serial.c (gravhost: one process,
 * every call trivial, no MPI anywhere) and mpi/par_mpi.c (gravhost-mpi,
 * built when mpicc is found: MPI_COMM_WORLD, mpi-tree as the solver).
 * run.c and diagnostics.c call these at the few places where a rank's
 * view must become the run's view; every call is collective.
 */
#ifndef GH_PAR_H
#define GH_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "gp_sim.h"

int gh_par_init(int *argc, char ***argv);   /* 0 or -1 (message printed) */
void gh_par_finalize(void);
int gh_par_rank(void);
int gh_par_size(void);

/* Sums over the ranks, in place. */
void gh_par_sum(double *x, size_t n);
uint64_t gh_par_sum_u64(uint64_t x);
int gh_par_max_int(int x);

/* rc (0, -1, or GH_PAR_ELSEWHERE) of every rank: -1 when any rank failed,
 * and then err holds the sentence of the lowest failing rank on every
 * rank, a rank that failed only because another did (GH_PAR_ELSEWHERE:
 * gp_sim_failed_elsewhere) counting after those that failed for a reason
 * of their own. A rank that failed while the others went on (to a
 * collective call of their own) ends the job after a minute, with its
 * sentence (mpi/par_mpi.c). */
enum { GH_PAR_ELSEWHERE = -2 };
int gh_par_agree(int rc, char *err, size_t errlen);

/* The rc a failure (failed != 0) of a call on sim (NULL: none made yet)
 * takes to gh_par_agree. */
static inline int gh_par_rc(const gp_sim *sim, int failed)
{
    return !failed ? 0 : sim && gp_sim_failed_elsewhere(sim) ? GH_PAR_ELSEWHERE : -1;
}

/* Every rank started alike: the same arguments, and the same GRAVPLUG_*
 * and OMP_* environment variables, which change results. 0, or -1 on
 * every rank with a sentence naming the first rank that differs (a rank
 * that went its own way would leave the others waiting in a collective
 * call). Called first thing after gh_par_init. */
int gh_par_same_start(int argc, char **argv, char *err, size_t errlen);

/* Rank 0's text on every rank (the config file, read by rank 0 alone):
 * rank 0 passes *text (malloc'd) and rc, the status of its read; the
 * others get a malloc'd copy in *text. -1 on every rank, with rank 0's
 * sentence in err, when rank 0's rc was -1 or memory ran out anywhere. */
int gh_par_share_text(char **text, int rc, char *err, size_t errlen);

/* Every rank's x, in rank order, into all[0 .. size) on every rank. */
void gh_par_allgather_u64(uint64_t x, uint64_t *all);

/* All ranks' particles on rank 0, in id order (malloc'd; NULL elsewhere;
 * any of the out-arrays may be NULL). *n_all: the global count on every
 * rank. -1 with err on every rank on failure. */
int gh_par_gather(gp_sim *sim, size_t *n_all, double **pos, double **vel, double **mass,
                  uint64_t **ids, char *err, size_t errlen);

/* Keeps this rank's share of n particles (all ranks pass the same
 * arrays): a contiguous slice, then the domain decomposition. Calls
 * gp_sim_set_particles with the result. */
int gh_par_set_particles(gp_sim *sim, size_t n, const double *pos, const double *vel,
                         const double *mass, const uint64_t *ids, char *err, size_t errlen);

/* Makes the initial conditions (gp_ic_make's model, n, seed and
 * options) and gives each rank its share, through the domain
 * decomposition (this replaces gp_ic_make + gh_par_set_particles). A
 * sampled model is made in slices: rank r draws only particles
 * [n r/P, n (r+1)/P) with gp_ic_make_range, and the set is the one a
 * single process makes, bit for bit, whatever P. A model that is read
 * (file, snapshot) or fixed (kepler) is made whole on every rank, which
 * keeps its slice. With n = 0 (a file's own count) the count read is
 * checked against the memory (gh_memory_check). -1 with the same sentence
 * on every rank on failure. */
int gh_par_set_ic(gp_sim *sim, const char *model, size_t n, uint64_t seed, const void *opts, char *err,
                  size_t errlen);

/* Re-decomposes the particles, with their whole integrator state, at a
 * solver resync point (gp_sim_at_resync_point; elsewhere it does nothing):
 * migration. The integrator goes on as if nothing moved. Returns 1 after
 * a migration, 0 when none was due (one rank, or not a resync point), -1
 * with the same sentence on every rank on failure. */
int gh_par_migrate(gp_sim *sim, char *err, size_t errlen);

/* Makes sim's collective decisions (block time steps, who calls the
 * solver) agree over the ranks: gp_sim_set_collective with MPI_Allreduce.
 * One process: nothing. Call once after gp_sim_new. */
void gh_par_attach(gp_sim *sim);

/* Refuses what this rank count cannot run (0, or -1 with a sentence). */
int gh_par_check_run(const char *plugin, const char *integrator, size_t n_switches, char *err,
                     size_t errlen);

/* This rank's checkpoint file for base (P = 1: base itself). On a restart
 * (restart != 0) checks the file exists and, when it does not but another
 * rank count's does, says so. */
int gh_par_ckpt_path(const char *base, int restart, char *out, size_t len, char *err, size_t errlen);

#endif
