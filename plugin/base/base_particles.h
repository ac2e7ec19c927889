/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_particles.h — the ABI 1.0 particle calls' checks and store
 * (particles.c, subsets.c) and the threaded scans over large arrays they
 * use (scan.c). Every check validates completely before anything changes.
 *
 * C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_BASE_PARTICLES_H
#define GP_BASE_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "base/base_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Validation (never changes state)                                          */
/* ------------------------------------------------------------------------ */

/* n > 0, pos and mass not NULL, every pos finite, every mass finite and
 * >= 0, n fits in uint32_t indices. */
gp_status gp_check_particles(gp_base *base, size_t n, const double *pos, const double *mass);

/* pos not NULL, all finite; requires a previous set_particles (BAD_STATE). */
gp_status gp_check_positions(gp_base *base, const double *pos);

/* n_active == 0 means all (index ignored). Otherwise index not NULL, each
 * < n, none repeated (O(n) bitmap). Requires set_particles (BAD_STATE). */
gp_status gp_check_active(gp_base *base, size_t n_active, const uint32_t *index);

/* compute_forces preconditions: set_particles done (BAD_STATE), acc not
 * NULL. */
gp_status gp_check_compute(gp_base *base, const double *acc);

/* compute_field preconditions: set_particles done, m > 0, points and acc
 * not NULL, every point finite. */
gp_status gp_check_field(gp_base *base, size_t m, const double *points, const double *acc);

/* A finite-check over count doubles; returns the index of the first
 * non-finite value, or (size_t)-1 if all are finite. */
size_t gp_first_nonfinite(const double *v, size_t count);

/* The first of n masses that is not finite or is negative, or n. */
size_t gp_first_bad_mass(const double *mass, size_t n);

/* The finite check and a copy in one pass: copies count doubles from src
 * to dst and returns 1 if all were finite, else 0 (dst holds the copy all
 * the same; gp_first_nonfinite finds the culprit for the sentence). For a
 * GPU plugin packing a block step's state for upload, where a check and
 * then a copy read the arrays twice. Spread over the threads from 65,536
 * values. */
int gp_copy_finite(double *dst, const double *src, size_t count);

/* memcpy of count doubles, split over the threads for large copies. */
void gp_copy_doubles(double *dst, const double *src, size_t count);

/* BAD_STATE with a sentence naming fn unless set_particles came first. */
gp_status gp_need_particles(gp_base *base, const char *fn);

/* ------------------------------------------------------------------------ */
/* Particle storage (validate, then copy; failure changes nothing)           */
/* ------------------------------------------------------------------------ */

/* set_particles: validates, copies n/pos/mass into base->p (reusing the
 * buffers when n is unchanged), resets the active subset to all. */
gp_status gp_particles_set(gp_base *base, size_t n, const double *pos, const double *mass);

/* The same without the validation, for a plugin that called
 * gp_check_particles itself first (to build its own structures before
 * anything changes): large inputs are then scanned once, not twice. Only
 * GP_ERR_OUT_OF_MEMORY can fail here. */
gp_status gp_particles_store(gp_base *base, size_t n, const double *pos, const double *mass);

/* update_positions: validates and copies pos into base->p.pos. */
gp_status gp_particles_update(gp_base *base, const double *pos);

/* set_active_subset: validates and stores a copy of the index list
 * (n_active == 0: all active, active = NULL). */
gp_status gp_particles_set_active(gp_base *base, size_t n_active, const uint32_t *index);

/* Stores a copy of an index list already checked (m == 0: none, *list =
 * NULL and *count = n, meaning all particles); OUT_OF_MEMORY leaves both
 * as they were. Shared by the active and the source subsets. */
gp_status gp_index_list_store(gp_base *base, const char *fn, size_t m, const uint32_t *index,
                              uint32_t **list, size_t *count);

/* The i-th active particle (i < base->p.n_active). */
static inline size_t gp_active_index(const gp_base *b, size_t i)
{
    return b->p.active ? (size_t)b->p.active[i] : i;
}

#ifdef __cplusplus
}
#endif

#endif /* GP_BASE_PARTICLES_H */
