/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-pair-ref.h — O(N^2) references for the pairwise schemes'
 * tests (integrators-hold.c, integrators-cc.c): what hold's criterion and
 * cc's step graph should be, from plugin/base/pair_step.h's expression
 * summed over all pairs here, with no plugin involved. G = 1, softening
 * eps, every particle a source.
 *
 * The schemes take the pairwise steps at the middle of a step of length h,
 * predicted from its start by Taylor series with the acceleration and
 * jerk there, once with the predicted velocities and once with their
 * opposites (integrators/solver/force_pair.c): ref_midpoint builds that state,
 * ref_tau the pair's step as the smaller of the two.
 */
#ifndef GP_INTEGRATORS_PAIR_REF_H
#define GP_INTEGRATORS_PAIR_REF_H

#include <math.h>
#include <stddef.h>

#include "base/pair_step.h"

/* Softened acceleration and jerk of every particle from all the others. */
static void ref_acc_jerk(size_t n, const double *x, const double *v, const double *m, double eps,
                         double *a, double *j)
{
    for (size_t i = 0; i < n; ++i) {
        double ai[3] = { 0, 0, 0 }, ji[3] = { 0, 0, 0 };
        for (size_t k = 0; k < n; ++k) {
            if (k == i) continue;
            double r[3], u[3];
            for (int c = 0; c < 3; ++c) r[c] = x[3 * k + c] - x[3 * i + c], u[c] = v[3 * k + c] - v[3 * i + c];
            double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + eps * eps;
            double inv = 1.0 / sqrt(r2), inv3 = inv * inv * inv, rv = r[0] * u[0] + r[1] * u[1] + r[2] * u[2];
            for (int c = 0; c < 3; ++c) {
                ai[c] += m[k] * r[c] * inv3;
                ji[c] += m[k] * (u[c] * inv3 - 3 * rv * r[c] * inv3 * inv * inv);
            }
        }
        for (int c = 0; c < 3; ++c) a[3 * i + c] = ai[c], j[3 * i + c] = ji[c];
    }
}

/* The predicted midpoint (xm, vm) of a step of length h from (x, v). */
static void ref_midpoint(size_t n, const double *x, const double *v, const double *m, double eps, double h,
                         double *xm, double *vm)
{
    double *a = malloc(6 * n * sizeof *a), *j = a + 3 * n;
    ref_acc_jerk(n, x, v, m, eps, a, j);
    double d = 0.5 * h;
    for (size_t k = 0; k < 3 * n; ++k) {
        xm[k] = x[k] + d * v[k] + 0.5 * d * d * a[k] + d * d * d / 6 * j[k];
        vm[k] = v[k] + d * a[k] + 0.5 * d * d * j[k];
    }
    free(a);
}

/* tau_ij (eta = 1) at the midpoint state: the smaller of the steps with
 * the velocities and with their opposites. */
static double ref_tau(const double *xm, const double *vm, const double *m, double eps, size_t i, size_t k)
{
    double r[3], u[3];
    for (int c = 0; c < 3; ++c) r[c] = xm[3 * k + c] - xm[3 * i + c], u[c] = vm[3 * k + c] - vm[3 * i + c];
    double fwd = gp_pair_step(r[0], r[1], r[2], u[0], u[1], u[2], eps * eps, m[i] + m[k]);
    double back = gp_pair_step(r[0], r[1], r[2], -u[0], -u[1], -u[2], eps * eps, m[i] + m[k]);
    return fwd < back ? fwd : back;
}

#endif /* GP_INTEGRATORS_PAIR_REF_H */
