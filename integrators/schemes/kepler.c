/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kepler.c — see kepler.h. Universal variables: with r0 = |dx|,
 * eta0 = dx.dv and beta = 2 mu / r0 - |dv|^2 (mu / a), the anomaly s solves
 *
 *     dt = r0 G1(s) + eta0 G2(s) + mu G3(s),   G_k(s) = s^k c_k(beta s^2),
 *
 * whose derivative in s is r(s) = r0 G0 + eta0 G1 + mu G2 > 0: the left
 * side grows monotonically with s, so a Newton iteration kept inside a
 * bracket (bisection where Newton would leave it) always converges. On an
 * ellipse dt is first reduced by whole periods, to |dt| <= P / 2, where
 * |s| < 2 pi / sqrt(beta) brackets it; otherwise the bracket grows from
 * dt / r0 by doubling. Then f = 1 - mu G2 / r0, g = r0 G1 + eta0 G2,
 * f' = -mu G1 / (r r0), g' = 1 - mu G2 / r.
 */
#include "kepler.h"

#include <math.h>

/* Stumpff's c_0 .. c_3 at z: series below |z| = 1 (no cancellation),
 * trigonometric or hyperbolic forms above. */
static void stumpff(double z, double c[4])
{
    if (fabs(z) < 1.0) {
        /* c_k = sum_j (-z)^j / (k + 2 j)!, twelve terms: the next is below
         * 1e-26 of the first */
        double t2 = 0.5, t3 = 1.0 / 6.0, s2 = 0.0, s3 = 0.0;
        for (int j = 0; j < 12; ++j) {
            s2 += t2;
            s3 += t3;
            t2 *= -z / ((2.0 * j + 3.0) * (2.0 * j + 4.0));
            t3 *= -z / ((2.0 * j + 4.0) * (2.0 * j + 5.0));
        }
        c[2] = s2;
        c[3] = s3;
    } else if (z > 0.0) {
        double x = sqrt(z), h = sin(0.5 * x);
        c[2] = 2.0 * h * h / z;
        c[3] = (x - sin(x)) / (z * x);
    } else {
        double y = sqrt(-z), h = sinh(0.5 * y);
        c[2] = 2.0 * h * h / -z;
        c[3] = (sinh(y) - y) / (-z * y);
    }
    /* c_k = 1 / k! - z c_{k+2} */
    c[0] = 1.0 - z * c[2];
    c[1] = 1.0 - z * c[3];
}

typedef struct orbit { double r0, eta0, mu, beta; } orbit;

/* The time at anomaly s (less dt) and its derivative r; g[0..3] = G_k(s). */
static double kepler_time(const orbit *o, double s, double dt, double *r, double g[4])
{
    double c[4];
    stumpff(o->beta * s * s, c);
    g[0] = c[0];
    g[1] = s * c[1];
    g[2] = s * s * c[2];
    g[3] = s * s * s * c[3];
    *r = o->r0 * g[0] + o->eta0 * g[1] + o->mu * g[2];
    return o->r0 * g[1] + o->eta0 * g[2] + o->mu * g[3] - dt;
}

int gp_kepler_step(double mu, double dx[3], double dv[3], double dt)
{
    if (dt == 0.0) return 0;
    double r0 = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    double v2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
    if (!(mu > 0.0) || !isfinite(mu) || !(r0 > 0.0) || !isfinite(r0) || !isfinite(v2) || !isfinite(dt)) return -1;
    orbit o = { r0, dx[0] * dv[0] + dx[1] * dv[1] + dx[2] * dv[2], mu, 2.0 * mu / r0 - v2 };
    double lo, hi, s, g[4], r;
    if (o.beta > 0.0) {
        double period = 2.0 * M_PI * mu / (o.beta * sqrt(o.beta));
        dt -= period * nearbyint(dt / period);
        if (dt == 0.0) return 0;   /* whole periods: back at the start */
        hi = 2.0 * M_PI / sqrt(o.beta);
        lo = -hi;
        s = dt * o.beta / mu;   /* the mean rate of s over an orbit */
    } else {
        /* grow a bracket [0, hi] (or [lo, 0]) from dt / r0 */
        double step = dt / r0;
        for (int k = 0;; ++k) {
            double f = kepler_time(&o, step, dt, &r, g);
            if (!isfinite(f) || k == 200) return -1;
            if ((dt > 0.0) == (f >= 0.0)) break;
            step *= 2.0;
        }
        lo = dt > 0.0 ? 0.0 : step;
        hi = dt > 0.0 ? step : 0.0;
        s = 0.5 * (lo + hi);
    }
    if (!(s > lo && s < hi)) s = 0.5 * (lo + hi);
    int done = 0;
    for (int it = 0; it < 200 && !done; ++it) {
        double f = kepler_time(&o, s, dt, &r, g);
        if (!isfinite(f)) return -1;
        if (f == 0.0) { done = 1; break; }   /* the root itself */
        if (f < 0.0) lo = s;
        else hi = s;
        double next = s - f / r;
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        done = fabs(next - s) <= 4.0 * 2.220446049250313e-16 * fabs(next) || next == lo || next == hi;
        s = next;
    }
    if (!done) return -1;
    kepler_time(&o, s, dt, &r, g);
    double f = 1.0 - mu * g[2] / r0, gg = r0 * g[1] + o.eta0 * g[2];
    double fd = -mu * g[1] / (r * r0), gd = 1.0 - mu * g[2] / r;
    for (int c = 0; c < 3; ++c) {
        double x = f * dx[c] + gg * dv[c], v = fd * dx[c] + gd * dv[c];
        dx[c] = x;
        dv[c] = v;
    }
    return 0;
}
