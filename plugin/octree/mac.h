/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mac.h — multipole acceptance criteria: may a cell be used as one
 * (monopole or quadrupole) source for a whole i-group?
 *
 * The walk is per i-group (a sphere of centre gc, radius rg around the group's
 * particles), so every criterion is applied at the worst point of the group:
 * the distance is d = |com - gc| - rg. Each criterion then reads
 * "accept when d > r_crit", with r_crit depending on the cell only (and, for
 * `acceleration`, on the group's smallest previous |a|):
 *
 *   bh            l / theta                      Barnes & Hut (l: cell size)
 *   bmax          l / theta + s                  Nakasato 2012 (s: |com - box centre|)
 *   multipole     bmax/2 + sqrt(bmax^2/4 + sqrt(3 B2 / Delta))
 *                 Warren & Salmon 1993, with the tolerance Delta chosen
 *                 relative to the cell, Delta = theta^2 M / l^2 (G dropped
 *                 on both sides), so theta plays the role it has in bh and
 *                 the criterion needs no global scale: massive, spread-out
 *                 cells (large B2) are opened earlier, compact ones later.
 *   acceleration  (G M l^2 / (alpha |a_old|))^(1/4)   Springel 2005 (GADGET-2):
 *                 accept when G M l^2 / d^4 < alpha |a_old|, alpha =
 *                 delta_acc, |a_old| the smallest previous |a| in the group.
 *                 With no previous accelerations the caller runs a bh pass
 *                 first, as GADGET does. The walks also open every cell
 *                 with l/d > theta_max (GADGET-4's ErrTolThetaMax; the
 *                 parameter, default 1): alone, the criterion accepts far
 *                 cells at wide angles, and their errors share a sign in
 *                 the potentials (octree/cpu_walk.h oct_accel_rcrit).
 *
 * l is the largest side of the cell's tight bounding box (moments.h).
 * Every criterion also requires the group sphere to miss the cell's box
 * enlarged by GP_MAC_BOX_MARGIN on each side (GADGET's 10% safety test): a
 * group never accepts a cell it overlaps, whatever theta is.
 *
 * theta = 0 (or delta_acc = 0) accepts nothing and gives direct summation.
 */
#ifndef GP_CORE_MAC_H
#define GP_CORE_MAC_H

#include "octree/gp_hd.h"
#include "octree/moments.h"

typedef enum gp_mac_kind {
    GP_MAC_BH = 0,
    GP_MAC_BMAX = 1,
    GP_MAC_MULTIPOLE = 2,
    GP_MAC_ACCELERATION = 3
} gp_mac_kind;

#define GP_MAC_BOX_MARGIN 0.1

/* r_crit of the geometric criteria (bh, bmax, multipole); for acceleration
 * it returns M l^2, to be passed to gp_mac_rcrit_acceleration per group.
 * Returns +inf when the cell can never be accepted (theta <= 0). */
static inline GP_HD double gp_mac_rcrit(gp_mac_kind kind, double theta, const gp_moments *mo)
{
    double l = gp_moments_size(mo);
    if (kind == GP_MAC_ACCELERATION) return mo->m * l * l;
    if (!(theta > 0)) return HUGE_VAL;
    switch (kind) {
    case GP_MAC_BH:
        return l / theta;
    case GP_MAC_BMAX:
        return l / theta + gp_moments_offset(mo);
    case GP_MAC_MULTIPOLE: {
        double b = mo->bmax, b2 = gp_moments_b2(mo);
        if (!(mo->m > 0) || !(b2 > 0)) return b;      /* a point mass: exact */
        return 0.5 * b + sqrt(0.25 * b * b + l * sqrt(3.0 * b2 / mo->m) / theta);
    }
    default:
        return HUGE_VAL;
    }
}

/* The acceleration criterion's r_crit for one group: k = G M l^2 (from
 * gp_mac_rcrit times G), alpha_a = delta_acc * (smallest |a_old| of the group). */
static inline GP_HD double gp_mac_rcrit_acceleration(double k, double alpha_a)
{
    if (!(alpha_a > 0)) return HUGE_VAL;
    return sqrt(sqrt(k / alpha_a));
}

/* Does the sphere (gc, rg) miss the box [lo, hi] enlarged by the margin? */
static inline GP_HD int gp_mac_box_clear(const double gc[3], double rg, const double lo[3],
                                         const double hi[3])
{
    double d2 = 0;
    for (int a = 0; a < 3; a++) {
        double pad = GP_MAC_BOX_MARGIN * (hi[a] - lo[a]);
        double e = 0;
        if (gc[a] < lo[a] - pad) e = lo[a] - pad - gc[a];
        else if (gc[a] > hi[a] + pad) e = gc[a] - hi[a] - pad;
        d2 += e * e;
    }
    return d2 > rg * rg;
}

/* The same test against a box stored relative to the cell's com, already
 * enlarged by the margin and rounded outward (compact float storage):
 * (rx, ry, rz) = group centre - com. */
static inline GP_HD int gp_mac_box_clear_rel(const float blo[3], const float bhi[3], double rx,
                                             double ry, double rz, double rg)
{
    double r[3] = { rx, ry, rz }, d2 = 0;
    for (int a = 0; a < 3; a++) {
        double e = 0;
        if (r[a] < (double)blo[a]) e = (double)blo[a] - r[a];
        else if (r[a] > (double)bhi[a]) e = r[a] - (double)bhi[a];
        d2 += e * e;
    }
    return d2 > rg * rg;
}

/* The test itself: d2 = |com - gc|^2; accept when |com - gc| - rg > rcrit. */
static inline GP_HD int gp_mac_accept_distance(double d2, double rg, double rcrit)
{
    double r = rcrit + rg;
    return r * r < d2;
}

#endif /* GP_CORE_MAC_H */
