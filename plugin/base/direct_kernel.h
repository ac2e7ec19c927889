/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_kernel.h — the exact pairwise sum for one target point, in double.
 *
 * Sources are held as structure-of-arrays (x, y, z, m, id) so the j-loop
 * vectorises. The loop runs over j in blocks of GP_DIRECT_LANES; lane l of
 * every block accumulates into its own partial sums, and the lanes are
 * added in a fixed order at the end. The summation order therefore depends
 * only on the number of sources, never on threads or on the target, which
 * is what makes the output bit-identical whatever OMP_NUM_THREADS is.
 */
#ifndef GP_DIRECT_KERNEL_H
#define GP_DIRECT_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#define GP_DIRECT_LANES 8

/* Sources: only particles with m > 0 (massless ones source nothing). id[j]
 * is the source's particle index as a double (exact below 2^53), used to
 * skip the self term. */
typedef struct gp_direct_sources {
    size_t n;
    double *x, *y, *z, *m, *id;
    size_t cap;               /* allocated length (0 in chunk views) */
    const double *g;          /* ABI 1.3: each source's group as a double,
                                 for gp_direct_point_grouped (else NULL) */
} gp_direct_sources;

/* ABI 1.2: the sources' velocities (vx[j] .. of source j), for the jerk. */
typedef struct gp_direct_vel {
    const double *vx, *vy, *vz;
} gp_direct_vel;

/* Field at (xi, yi, zi) of all sources, skipping the source whose id equals
 * self (pass -1 for none) and pairs at zero softened distance.
 * out[0..2] = sum m (x_j - x_i) / r^3, out[3] = -sum m / r (G not applied). */
void gp_direct_point(const gp_direct_sources *src, double xi, double yi, double zi,
                     double self, double eps2, double out[4]);

/* gp_direct_point skipping, beside self, every source j with
 * src->g[j] == gi (ABI 1.3's source groups: pass gi = -1 for a target in
 * no group). The same operations in the same order: without a skipped
 * group, gp_direct_point's bits. */
void gp_direct_point_grouped(const gp_direct_sources *src, double xi, double yi, double zi,
                             double self, double gi, double eps2, double out[4]);

/* The same sum with the jerk beside it, for a target moving with velocity
 * (vxi, vyi, vzi): out[0..3] exactly gp_direct_point's (the same operations
 * in the same order), out[4..6] = sum m [v / r^3 - 3 (r.v) r / r^5] with
 * r = x_j - x_i, v = v_j - v_i (G not applied). */
void gp_direct_point_jerk(const gp_direct_sources *src, const gp_direct_vel *vel, double xi,
                          double yi, double zi, double vxi, double vyi, double vzi,
                          double self, double eps2, double out[7]);

/* ABI 1.2's neighbour outputs fused into the same pass: the target's mass
 * and G (for mu = G (m_i + m_j)), and what it writes beside acc and pot. */
typedef struct gp_direct_target {
    double x, y, z, vx, vy, vz;
    double self;              /* its particle index as a double, or -1 */
    double m, G;
    int prune;                /* gp_step_bound_range_ok held for the whole
                                 computation (else every pair is exact) */
    int even;                 /* ABI 1.3: the step is gp_pair_step_even,
                                 pruned over both signs of r.v */
} gp_direct_target;

enum {
    GP_EX_NN_D2 = 7,          /* smallest unsoftened |r|^2 (HUGE_VAL: none) */
    GP_EX_NN_ID = 8,          /* its source id, ties to the lower (-1: none) */
    GP_EX_STEP = 9,           /* min(seed, min over the sources of tau_ij)  */
    GP_EX_W = 10
};

/* Merges a nearest-source candidate (d2b, idb) into (*d2, *id): the
 * smaller d2, then the lower id; (HUGE_VAL, -1) is "none". */
static inline void gp_direct_nn_merge(double *d2, double *id, double d2b, double idb)
{
    if (d2b < *d2 || (d2b == *d2 && idb >= 0.0 && (*id < 0.0 || idb < *id))) {
        *d2 = d2b;
        *id = idb;
    }
}

/* The jerk kernel's sum (out[0..3] exactly gp_direct_point's; out[4..6] the
 * jerk when with_jerk, else 0) and, over the same sources (self excluded;
 * nn also over pairs at zero softened distance), the nearest source and,
 * with_step, the smallest pairwise step (plugin/base/pair_step.h; bit for
 * bit its minimum). out[GP_EX_STEP] is read first as a seed: a step
 * already known (from other sources) lets more pairs be skipped by
 * pair_step_bound.h; it never changes the minimum (without with_step it
 * is left as it is). *exact_evals (if not NULL) gets how many pairs were
 * evaluated exactly. */
void gp_direct_point_ex(const gp_direct_sources *src, const gp_direct_vel *vel,
                        const gp_direct_target *t, double eps2, int with_jerk, int with_step,
                        double out[GP_EX_W], size_t *exact_evals);

/* ABI 1.2/1.3's neighbour lists: a target and what it lists by. */
typedef struct gp_direct_list_target {
    double x, y, z, vx, vy, vz;
    double self;              /* its particle index as a double, or -1 */
    double m, G;
    double rad2;              /* nb_radius^2; < 0: no list by radius */
    double nb_step;           /* > 0: list tau_ij < nb_step */
    double nb_step_even;      /* > 0: list the even step < nb_step_even */
    int prune;                /* gp_step_bound_range_ok held for the whole
                                 call (else every pair's step is exact) */
} gp_direct_list_target;

/* The sources the target may list: the positions q (ascending) of every
 * source but self that lies within the radius, or whose step (either
 * asked) pair_step_bound.h cannot prove to be at least its threshold, or
 * at zero softened distance. A superset of the list: the caller decides
 * each candidate exactly. The bound's tests run branch-free over the
 * lanes, so a pair that is proven far costs a few vector operations and
 * no root or division of its own. Returns the count written to q (at
 * most src->n). */
size_t gp_direct_list_candidates(const gp_direct_sources *src, const gp_direct_vel *vel,
                                 const gp_direct_list_target *t, double eps2, uint32_t *q);

#endif /* GP_DIRECT_KERNEL_H */
