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

#define GP_DIRECT_LANES 8

/* Sources: only particles with m > 0 (massless ones source nothing). id[j]
 * is the source's particle index as a double (exact below 2^53), used to
 * skip the self term. */
typedef struct gp_direct_sources {
    size_t n;
    double *x, *y, *z, *m, *id;
    size_t cap;               /* allocated length (0 in chunk views) */
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

/* The same sum with the jerk beside it, for a target moving with velocity
 * (vxi, vyi, vzi): out[0..3] exactly gp_direct_point's (the same operations
 * in the same order), out[4..6] = sum m [v / r^3 - 3 (r.v) r / r^5] with
 * r = x_j - x_i, v = v_j - v_i (G not applied). */
void gp_direct_point_jerk(const gp_direct_sources *src, const gp_direct_vel *vel, double xi,
                          double yi, double zi, double vxi, double vyi, double vzi,
                          double self, double eps2, double out[7]);

#endif /* GP_DIRECT_KERNEL_H */
