/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_gather.h — mpi-tree's ABI 1.3 outputs (source groups, the even
 * pair step and the lists by it, compute_field_ex's points): every rank's
 * particles are gathered on every rank (positions, masses, source flags,
 * velocities and groups: 9 doubles each, O(N) bytes per call) and the
 * rank's targets are summed over them with plugin/base's exact pass
 * (base/exact_ex.c), exact and in double: so mpi-tree has no
 * GP_CAP_SOURCE_GROUPS. Indices as outputs_gather.h: global (a source on
 * this rank is offset + its index there); a target's self (its particle,
 * or a point's exclude, a set_particles index on this rank) likewise.
 */
#ifndef GP_MPI_TREE_EXACT_GATHER_H
#define GP_MPI_TREE_EXACT_GATHER_H

#include "comm.h"

/* Collective. Targets: this rank's active particles (points 0; none when
 * none_active) or (points 1) its n points pos[3n], vel[3n] (may be NULL) and
 * exclude[n] (may be NULL). out as gp_outputs_read gives it; forces: acc,
 * pot and jerk too. in_src: the source subset's membership (NULL: all).
 * Returns this rank's status (the caller agrees); lists kept in c->base. */
gp_status mpi_tree_exact_gather(const mpi_tree_comm *c, const uint8_t *in_src, int none_active,
                                int points, size_t n, const double *pos, const double *vel,
                                const uint32_t *exclude, const gp_outputs *out, int forces,
                                double G, double eps2, int nthreads, const char *fn);

#endif /* GP_MPI_TREE_EXACT_GATHER_H */
