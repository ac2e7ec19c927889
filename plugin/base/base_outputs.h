/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base_outputs.h — what a compute call hands back (outputs.c, neighbours.c,
 * groups.c, exact_ex.c): the results' checks, ABI 1.2's outputs and
 * neighbour lists, ABI 1.3's source groups and exact pass.
 *
 * C and C++ compatible (CUDA plugins include it from .cu).
 */
#ifndef GP_BASE_OUTPUTS_H
#define GP_BASE_OUTPUTS_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"
#include "base/base_instance.h"

#ifdef __cplusplus
extern "C" {
#endif

/* After a compute call: every acc[3m] and pot[m] (pot may be NULL) finite,
 * else GP_ERR_INVALID_ARGUMENT with a sentence (the inputs' scale makes a
 * result overflow double). outputs.c. */
gp_status gp_check_outputs(gp_base *base, const char *fn, size_t m, const double *acc,
                           const double *pot);

/* compute_forces_ex's request, checked before anything runs (outputs.c):
 * out not NULL, its struct_size covering gp_outputs, acc not NULL, the
 * nb_radius values finite and >= 0, nb_step finite and >= 0; and the
 * plugin's base checks of compute_forces (particles set). */
gp_status gp_check_outputs_ex(gp_base *base, const gp_outputs *out);

/* Neighbour lists (neighbours.c). gp_neighbours_forget: the last lists
 * are gone (a new compute_forces_ex, set_particles); _keep takes
 * ownership of malloc'd offset[rows + 1] and list[offset[rows]];
 * gp_neighbours_get is the ABI's get_neighbours. */
void gp_neighbours_forget(gp_base *base);
void gp_neighbours_keep(gp_base *base, size_t rows, uint64_t *offset, uint32_t *list);
gp_status gp_neighbours_get(gp_base *base, size_t cap, uint64_t *offset, uint32_t *list,
                            size_t *needed);

/* ---- ABI 1.3 (outputs.c, groups.c, exact_ex.c) ------------------------ */

/* gp_outputs as a plugin reads it: a copy of out with the members its
 * struct_size does not cover (a 1.2 caller's pair_step_even,
 * nb_step_even) absent (NULL, 0). Call after gp_check_outputs_ex. */
gp_outputs gp_outputs_read(const gp_outputs *out);

/* compute_field_ex's points as targets: positions and velocities, 3 each
 * (vel NULL where nothing asked needs it), and the particle each excludes
 * (UINT32_MAX: none; exclude NULL: none excludes any). */
typedef struct gp_field_points {
    size_t n;
    const double *pos, *vel;
    const uint32_t *exclude;
} gp_field_points;

/* compute_field_ex's request, checked before anything runs: particles
 * set; n = 0 an empty call (pos, vel, exclude may then be NULL; out is
 * checked all the same); pos not NULL and finite; vel not NULL (and finite) when
 * jerk, pair_step, pair_step_even, nb_step or nb_step_even asks for it;
 * every exclude[k] < n_particles or UINT32_MAX; out as
 * gp_check_outputs_ex checks it, with n rows instead of n_active. */
gp_status gp_check_field_ex(gp_base *base, size_t n, const double *pos, const double *vel,
                            const uint32_t *exclude, const gp_outputs *out);

/* Whether out (as gp_outputs_read gives it) asks at points only for what
 * a direct force kernel makes beside acc: pot, the jerk, the nearest
 * source and lists by radius (what a GRAPE-6 call asks), with no source
 * groups set. The direct plugins run such a compute_field_ex in their
 * kernels, cpu-tree in its walk and tree searches, and the rest (pair
 * steps, lists by step, groups) through gp_field_ex_exact. */
int gp_field_ex_in_kernel(const gp_base *base, const gp_outputs *out);

/* set_source_groups: particles set (BAD_STATE); group NULL clears; else n
 * must be the particle count; stores a copy. Nothing changes on failure. */
gp_status gp_groups_set(gp_base *base, size_t n, const uint32_t *group);
void gp_groups_clear(gp_base *base);

/* The one rule of source groups: a target of group gi (UINT32_MAX: none)
 * feels nothing from source j of the same group. group NULL: no groups. */
static inline int gp_group_skips(const uint32_t *group, uint32_t gi, size_t j)
{
    return group && gi != UINT32_MAX && group[j] == gi;
}
/* The group of a target that is particle i (UINT32_MAX: a point that is
 * no particle, or no groups): the group it feels the rule as. */
static inline uint32_t gp_group_of(const uint32_t *group, uint32_t i)
{
    return group && i != UINT32_MAX ? group[i] : UINT32_MAX;
}

/* compute_forces while groups are set (the rule holds for every force
 * call): the plugin's compute_forces_ex with these outputs, acc and pot. */
static inline gp_outputs gp_outputs_forces(double *acc, double *pot)
{
    gp_outputs o = { sizeof o, acc, pot, NULL, NULL, NULL, NULL, NULL, 0.0, NULL, 0.0 };
    return o;
}

/* Whether compute_forces_ex needs ABI 1.3's exact pass: groups are set,
 * or out (as gp_outputs_read gives it) asks for an even step or lists by
 * it. */
static inline int gp_outputs_want_13(const gp_base *base, const gp_outputs *o)
{
    return base->p.group != NULL || o->pair_step_even != NULL || o->nb_step_even > 0;
}

/* The targets of gp_exact_ex: n points at pos[3n] moving with vel[3n]
 * (NULL when no output needs it); self[k] the particle point k is (its
 * self term skipped, its group's sources skipped, its mass in the pair
 * steps' mu), or UINT32_MAX; self NULL: none for all. */
typedef struct gp_exact_targets {
    size_t n;
    const double *pos, *vel;
    const uint32_t *self;
} gp_exact_targets;

/* Where the sources are: every particle's position pos[3n] (NULL: base's
 * p.pos) and velocity vel[3n] (NULL: the held state's, gp_state_velocity),
 * G, eps^2 and the threads of the pass. */
typedef struct gp_exact_sources {
    const double *pos, *vel;
    double G, eps2;
    int nthreads;
} gp_exact_sources;

/* Every output of out (as gp_outputs_read gives it) for the targets,
 * exact, in double, over the sources of base: massive particles of the
 * source subset, minus each target's self and group (gp_group_skips).
 * forces: also acc, pot and jerk (else they are left alone). Sums in
 * ascending source index, one target per thread, so the same bits on any
 * thread count; pair steps from base/pair_step.h bit for bit; the lists
 * (when nb_radius, nb_step or nb_step_even asks) replace base's,
 * ascending. fn names the call in sentences. OUT_OF_MEMORY (sentence
 * set, lists as they were) or GP_OK. */
gp_status gp_exact_ex(gp_base *base, const gp_exact_sources *src, const gp_exact_targets *tg,
                      const gp_outputs *out, int forces, const char *fn);
/* gp_exact_ex for the active particles (compute_forces_ex's targets):
 * each at its source position, with its velocity (src->vel's or the held
 * state's), itself excluded. */
gp_status gp_exact_active(gp_base *base, const gp_exact_sources *src, const gp_outputs *out,
                          int forces, const char *fn);

/* compute_forces_ex when gp_outputs_want_13: without groups acc, pot and
 * the jerk from the plugin's own 1.2 pass forces_12 (given a gp_outputs
 * with those three alone: compute_forces' bits), the rest from
 * gp_exact_active; with groups every output from gp_exact_active (exact,
 * so no tree cell is approximated across the exclusion). out as
 * gp_outputs_read gives it. */
typedef gp_status (*gp_forces_12_fn)(gp_solver *s, const gp_outputs *out);
gp_status gp_forces_ex_13(gp_solver *s, gp_base *base, gp_forces_12_fn forces_12,
                          const gp_exact_sources *src, const gp_outputs *out);

/* For a plugin whose state lives elsewhere (a GPU): src->pos and src->vel
 * become host copies of every particle's, made by its own get_positions
 * and get_velocities (so bit for bit what its passes see); free(*buf)
 * after the pass. */
typedef gp_status (*gp_get_fn)(gp_solver *s, size_t n_sub, const uint32_t *index, double *out);
gp_status gp_exact_fetch(gp_solver *s, gp_base *base, gp_get_fn get_pos, gp_get_fn get_vel,
                         gp_exact_sources *src, double **buf);

/* compute_field_ex by the exact pass: gp_check_field_ex, then
 * gp_exact_ex at the points (self = exclude), field_calls counted. */
gp_status gp_field_ex_exact(gp_base *base, const gp_exact_sources *src, size_t n,
                            const double *pos, const double *vel, const uint32_t *exclude,
                            const gp_outputs *out);

#ifdef __cplusplus
}
#endif

#endif /* GP_BASE_OUTPUTS_H */
