/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_step.h — ABI 1.2's pairwise time step tau_ij, the one expression
 * every plugin evaluates (CPU, and CUDA through GP_PAIR_HD).
 *
 * Huayno's timestep_ij (Pelupessy, Janes & Portegies Zwart 2012) with
 * eta = 1 and both of its criteria: the pair's free-fall time
 * sqrt(r^3 / (2 G (m_i + m_j))) and its fly-by time r / |v|, each with
 * Huayno's first-order correction for the pair's approach rate, r and v
 * the relative position and velocity, r^2 softened with eps^2. The
 * correction takes the forward time direction (Huayno's dir = +1): an
 * approaching pair gets a smaller step, a receding one at most twice the
 * plain one. It depends on r and v only through |r|, |v| and r.v, so
 * tau_ij = tau_ji. HUGE_VAL for a pair without mass or at zero softened
 * distance. Evaluated in Huayno's order, operation for operation (with
 * dt_param = 1, dir = +1, mu = G (m_i + m_j)), so that a transcription of
 * timestep_ij gives the same bits (tests/conformance/conformance_abi12.c).
 */
#ifndef GP_PAIR_STEP_H
#define GP_PAIR_STEP_H

#include <math.h>

#if defined(__CUDACC__)
#define GP_PAIR_HD __host__ __device__
#else
#define GP_PAIR_HD
#endif

static inline GP_PAIR_HD double gp_pair_step(double dx, double dy, double dz, double dvx,
                                             double dvy, double dvz, double eps2, double Gmu)
{
    double dr2 = dx * dx + dy * dy + dz * dz + eps2;
    if (!(dr2 > 0) || !(Gmu > 0)) return HUGE_VAL;
    double dr = sqrt(dr2), dr3 = dr * dr2;
    double vdotdr2 = (dvx * dx + dvy * dy + dvz * dz) / dr2;
    double dv2 = dvx * dvx + dvy * dvy + dvz * dvz;
    /* free fall */
    double tau = (1.0 / 1.4142135623730951) * sqrt(dr3 / Gmu); /* Huayno: dt_param/M_SQRT2*sqrt(..) */
    double dtau = 1.5 * tau * vdotdr2;
    if (dtau > 1.0) dtau = 1.0;
    double step = tau / (1.0 - dtau / 2);
    /* fly-by */
    if (dv2 > 0) {
        tau = dr / sqrt(dv2);
        dtau = tau * vdotdr2 * (1.0 + Gmu / (dv2 * dr));
        if (dtau > 1.0) dtau = 1.0;
        tau /= 1.0 - dtau / 2;
        if (tau < step) step = tau;
    }
    return step;
}

/* ABI 1.3's even step: tau_ij made even in the relative velocity,
 * min(tau(r, v), tau(r, -v)), the time-symmetric split's criterion. */
static inline GP_PAIR_HD double gp_pair_step_even(double dx, double dy, double dz, double dvx,
                                                  double dvy, double dvz, double eps2,
                                                  double Gmu)
{
    double a = gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu);
    double b = gp_pair_step(dx, dy, dz, -dvx, -dvy, -dvz, eps2, Gmu);
    return b < a ? b : a;
}

#endif /* GP_PAIR_STEP_H */
