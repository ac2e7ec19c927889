/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-kepler-solver.c — the closed-form two-body step
 * (integrators/schemes/kepler.c) against the classical solutions: an
 * ellipse by its eccentric anomaly, a hyperbola by its hyperbolic anomaly,
 * a parabola by Barker's equation; then what any exact solution keeps
 * (energy, angular momentum, the Laplace-Runge-Lenz vector), steps that
 * compose, reversal, many periods at once, and bad input refused with the
 * state untouched.
 */
#include <math.h>
#include <string.h>

#include "tap.h"
#include "schemes/kepler.h"

/* The state on a conic of pericentre distance q, eccentricity e, in the
 * x-y plane (pericentre on +x), mu = 1, at time t after pericentre. */
static void conic_state(double q, double e, double t, double x[3], double v[3])
{
    x[2] = v[2] = 0.0;
    if (e < 1.0) {
        double a = q / (1.0 - e), n = sqrt(1.0 / (a * a * a)), m = n * t, E = m;
        for (int k = 0; k < 100; ++k) E -= (E - e * sin(E) - m) / (1.0 - e * cos(E));
        double b = a * sqrt(1.0 - e * e), edot = n / (1.0 - e * cos(E));
        x[0] = a * (cos(E) - e);
        x[1] = b * sin(E);
        v[0] = -a * sin(E) * edot;
        v[1] = b * cos(E) * edot;
    } else if (e > 1.0) {
        double a = q / (e - 1.0), n = sqrt(1.0 / (a * a * a)), m = n * t, F = asinh(m / e);
        for (int k = 0; k < 100; ++k) F -= (e * sinh(F) - F - m) / (e * cosh(F) - 1.0);
        double b = a * sqrt(e * e - 1.0), fdot = n / (e * cosh(F) - 1.0);
        x[0] = a * (e - cosh(F));
        x[1] = b * sinh(F);
        v[0] = -a * sinh(F) * fdot;
        v[1] = b * cosh(F) * fdot;
    } else {
        /* Barker: tan(f/2) = D, t = sqrt(2 q^3) (D + D^3 / 3) */
        double w = 3.0 * t / sqrt(8.0 * q * q * q), D = cbrt(w + sqrt(w * w + 1.0)) - cbrt(sqrt(w * w + 1.0) - w);
        double r = q * (1.0 + D * D), p = 2.0 * q, f = 2.0 * atan(D);
        x[0] = r * cos(f);
        x[1] = r * sin(f);
        v[0] = -sqrt(1.0 / p) * sin(f);
        v[1] = sqrt(1.0 / p) * (1.0 + cos(f));
    }
}

static double dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Stepping from t0 to t1 against the classical state at t1; returns the
 * larger of the position and velocity errors, relative to the state. */
static double conic_error(double q, double e, double t0, double t1)
{
    double x[3], v[3], xr[3], vr[3];
    conic_state(q, e, t0, x, v);
    if (gp_kepler_step(1.0, x, v, t1 - t0) != 0) return INFINITY;
    conic_state(q, e, t1, xr, vr);
    double ex = dist(x, xr) / sqrt(xr[0] * xr[0] + xr[1] * xr[1]);
    double ev = dist(v, vr) / sqrt(vr[0] * vr[0] + vr[1] * vr[1]);
    return ex > ev ? ex : ev;
}

/* Energy, angular momentum and the Laplace-Runge-Lenz vector (mu = 1). */
static void invariants(const double x[3], const double v[3], double out[7])
{
    double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    double L[3] = { x[1] * v[2] - x[2] * v[1], x[2] * v[0] - x[0] * v[2], x[0] * v[1] - x[1] * v[0] };
    out[0] = 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - 1.0 / r;
    for (int c = 0; c < 3; ++c) out[1 + c] = L[c];
    double vxl[3] = { v[1] * L[2] - v[2] * L[1], v[2] * L[0] - v[0] * L[2], v[0] * L[1] - v[1] * L[0] };
    for (int c = 0; c < 3; ++c) out[4 + c] = vxl[c] - x[c] / r;
}

static double max_change(const double a[7], const double b[7])
{
    double m = 0.0, scale = 0.0;
    for (int k = 0; k < 7; ++k) scale = fmax(scale, fabs(a[k]));
    for (int k = 0; k < 7; ++k) m = fmax(m, fabs(a[k] - b[k]));
    return m / scale;
}

static void check_conics(void)
{
    double worst = 0.0;
    /* e from circular to 0.99, a span of times from a sliver to 3 periods */
    static const double es[] = { 0.0, 0.1, 0.5, 0.9, 0.99 };
    for (size_t k = 0; k < sizeof es / sizeof es[0]; ++k) {
        double period = 2.0 * M_PI;   /* pericentre 1 - e: a = 1 */
        static const double spans[] = { 1e-6, 0.013, 0.25, 0.5, 0.77, 1.0, 3.3 };
        for (size_t j = 0; j < sizeof spans / sizeof spans[0]; ++j)
            worst = fmax(worst, conic_error(1.0 - es[k], es[k], -0.1 * period, (spans[j] - 0.1) * period));
    }
    ok(worst < 1e-10, "ellipses, e = 0 .. 0.99, from a sliver to 3.3 periods: the eccentric anomaly's state to %.1e",
       worst);
    worst = 0.0;
    static const double eh[] = { 1.0001, 1.5, 3.0, 30.0 };
    for (size_t k = 0; k < sizeof eh / sizeof eh[0]; ++k)
        for (double t = -5.0; t <= 5.0; t += 2.5) worst = fmax(worst, conic_error(0.5, eh[k], t, t + 1.7));
    ok(worst < 1e-10, "hyperbolas, e = 1.0001 .. 30, through pericentre and out: the hyperbolic anomaly's to %.1e",
       worst);
    worst = 0.0;
    for (double t = -3.0; t <= 3.0; t += 1.5) worst = fmax(worst, conic_error(0.7, 1.0, t, t + 0.9));
    ok(worst < 1e-10, "a parabola, through pericentre: Barker's equation's state to %.1e", worst);
}

static void check_invariants_and_symmetry(void)
{
    /* an inclined eccentric orbit, off-axis pericentre */
    double x0[3] = { 0.3, -0.8, 0.25 }, v0[3] = { 0.9, 0.35, -0.4 };
    double x[3], v[3], i0[7], i1[7];
    invariants(x0, v0, i0);
    double worst = 0.0;
    memcpy(x, x0, sizeof x);
    memcpy(v, v0, sizeof v);
    int fails = 0;
    for (int k = 0; k < 1000; ++k) {
        fails += gp_kepler_step(1.0, x, v, 0.0173 * (1 + k % 7)) != 0;
        invariants(x, v, i1);
        worst = fmax(worst, max_change(i0, i1));
    }
    ok(!fails && worst < 1e-12, "1,000 steps of an inclined orbit: energy, L and the Runge-Lenz vector kept to %.1e",
       worst);
    /* steps compose: t1 then t2 is t1 + t2 */
    double xa[3], va[3], xb[3], vb[3];
    memcpy(xa, x0, sizeof xa); memcpy(va, v0, sizeof va);
    memcpy(xb, x0, sizeof xb); memcpy(vb, v0, sizeof vb);
    gp_kepler_step(2.0, xa, va, 0.37);
    gp_kepler_step(2.0, xa, va, 1.21);
    gp_kepler_step(2.0, xb, vb, 1.58);
    ok(dist(xa, xb) < 1e-13 && dist(va, vb) < 1e-13, "two steps compose into one (to %.1e)", dist(xa, xb));
    /* forward then back returns the start, to rounding */
    memcpy(x, x0, sizeof x); memcpy(v, v0, sizeof v);
    for (int k = 0; k < 100; ++k) gp_kepler_step(1.0, x, v, 0.31);
    for (int k = 0; k < 100; ++k) gp_kepler_step(1.0, x, v, -0.31);
    ok(dist(x, x0) < 1e-12 && dist(v, v0) < 1e-12, "100 steps forward and 100 back return the start (to %.1e)",
       dist(x, x0));
    /* many periods at once: reduced by whole periods first */
    double period = 2.0 * M_PI * pow(-0.5 / i0[0], 1.5);
    memcpy(xa, x0, sizeof xa); memcpy(va, v0, sizeof va);
    memcpy(xb, x0, sizeof xb); memcpy(vb, v0, sizeof vb);
    gp_kepler_step(1.0, xa, va, 1000.0 * period + 0.3);
    gp_kepler_step(1.0, xb, vb, 0.3);
    ok(dist(xa, xb) < 1e-9, "1,000 periods and 0.3 land where 0.3 does (to %.1e)", dist(xa, xb));
    /* a radial orbit (L = 0) outward, not reaching the collision */
    double xr[3] = { 1.0, 0.0, 0.0 }, vr[3] = { 0.5, 0.0, 0.0 }, ir0[7], ir1[7];
    invariants(xr, vr, ir0);
    int rc = gp_kepler_step(1.0, xr, vr, 0.8);
    invariants(xr, vr, ir1);
    ok(rc == 0 && fabs(ir1[0] - ir0[0]) < 1e-13 && fabs(xr[1]) == 0.0 && xr[0] > 1.0,
       "a radial orbit: energy kept (%.1e), the motion stays on its line", fabs(ir1[0] - ir0[0]));
}

static void check_refusals(void)
{
    double x[3] = { 1, 0, 0 }, v[3] = { 0, 1, 0 }, x0[3], v0[3];
    memcpy(x0, x, sizeof x0); memcpy(v0, v, sizeof v0);
    double zero[3] = { 0, 0, 0 };
    int r1 = gp_kepler_step(0.0, x, v, 1.0), r2 = gp_kepler_step(-1.0, x, v, 1.0),
        r3 = gp_kepler_step(NAN, x, v, 1.0), r4 = gp_kepler_step(1.0, x, v, INFINITY);
    ok(r1 == -1 && r2 == -1 && r3 == -1 && r4 == -1 && !memcmp(x, x0, sizeof x) && !memcmp(v, v0, sizeof v),
       "mu 0, negative or NaN and an infinite step are refused, the state untouched");
    ok(gp_kepler_step(1.0, zero, v, 1.0) == -1, "coincident bodies are refused");
    ok(gp_kepler_step(1.0, x, v, 0.0) == 0 && !memcmp(x, x0, sizeof x), "a zero step changes nothing");
}

int main(void)
{
    plan(11);
    check_conics();
    check_invariants_and_symmetry();
    check_refusals();
    return done_testing();
}
