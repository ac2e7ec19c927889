/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-eddington.t — the Eddington inversion in host_stub/ic/spherical.c
 * against distribution functions known in closed form (Hernquist 1990
 * eq. 17; Plummer f ~ E^(7/2)), and positivity of f(E) for the tapered
 * NFW halo and the galaxy's halo and bulge in their combined potential.
 */
#include <math.h>
#include <stdio.h>

#include "spherical.h"
#include "tap.h"

static double hernquist_shape(double r, const void *p)
{
    (void)p;
    return 1.0 / (r * pow(1 + r, 3));
}

static double plummer_shape(double r, const void *p)
{
    (void)p;
    return pow(1 + r * r, -2.5);
}

static double nfw_shape(double r, const void *p)
{
    double x = r / *(const double *)p;
    return 1.0 / (x * (1 + x) * (1 + x));
}

static double hernquist_scaled(double r, const void *p)
{
    double x = r / *(const double *)p;
    return 1.0 / (x * pow(1 + x, 3));
}

static double disk_sphere(double r, const void *p) { return exp(-r / *(const double *)p) / r; }

/* G = M = a = 1. */
static double hernquist_f(double E)
{
    double q = sqrt(E);
    return 1.0 / (8 * M_SQRT2 * pow(M_PI, 3)) / pow(1 - q * q, 2.5) *
           (3 * asin(q) + q * sqrt(1 - q * q) * (1 - 2 * q * q) * (8 * pow(q, 4) - 8 * q * q - 3));
}

static double plummer_f(double E) { return 24 * M_SQRT2 / (7 * pow(M_PI, 3)) * pow(E, 3.5); }

int main(void)
{
    plan(8);
    char err[256];
    ic_sph m;

    ic_sph_comp h = {hernquist_shape, NULL, 1, 0, 0, 1};
    if (ic_sph_build(&m, &h, 1, 1e-5, 1e6, 6000, err, sizeof err) == 0) {
        double worst = 0, worst_E = 0;
        for (double E = 1e-3; E < 0.99; E *= 1.2) {
            double rel = fabs(ic_sph_f(&m, 0, E) / hernquist_f(E) - 1);
            if (rel > worst) { worst = rel; worst_E = E; }
        }
        ok(worst < 2e-3, "Hernquist f(E) within 0.2%% of the closed form for 1e-3 < E < 0.99 "
                         "(worst %.2g at E = %.3g)", worst, worst_E);
        ok(fabs(ic_sph_psi(&m, 0.5) - 1 / 1.5) < 1e-5, "Hernquist Psi(0.5) = %.8f (want 2/3)", ic_sph_psi(&m, 0.5));
        ok(fabs(ic_sph_menc(&m, 2.0) - 4.0 / 9.0) < 1e-5, "Hernquist M(<2) = %.8f (want 4/9)", ic_sph_menc(&m, 2.0));
        ic_sph_free(&m);
    } else {
        diag("%s", err);
        skip(3, "Hernquist model did not build");
    }

    ic_sph_comp p = {plummer_shape, NULL, 1, 0, 0, 1};
    if (ic_sph_build(&m, &p, 1, 1e-5, 1e5, 6000, err, sizeof err) == 0) {
        double worst = 0;
        for (double E = 1e-2; E < 0.999; E *= 1.2) {
            double rel = fabs(ic_sph_f(&m, 0, E) / plummer_f(E) - 1);
            if (rel > worst) worst = rel;
        }
        ok(worst < 2e-3, "Plummer f(E) within 0.2%% of 24 sqrt2/(7 pi^3) E^(7/2) for 0.01 < E < 1 (worst %.2g)",
           worst);
        ic_sph_free(&m);
    } else skip(1, "Plummer model did not build");

    double rs = 1;
    ic_sph_comp n = {nfw_shape, &rs, 1, 10, 1, 1};
    if (ic_sph_build(&m, &n, 1, 1e-5, 100, 6000, err, sizeof err) == 0) {
        ok(m.neg_f_frac[0] == 0, "tapered NFW (c = 10): f(E) > 0 everywhere (negative share %g)", m.neg_f_frac[0]);
        ok(fabs(m.mcum[0][m.ng - 1] - 1) < 1e-12, "tapered NFW normalised to its mass, taper included");
        ic_sph_free(&m);
    } else skip(2, "NFW model did not build");

    double a = 0.1, rd = 0.2;
    ic_sph_comp g[3] = {{nfw_shape, &rs, 1, 10, 1, 1},
                        {hernquist_scaled, &a, 0.05, 10, 1, 1},
                        {disk_sphere, &rd, 0.05, 0, 0, 0}};
    if (ic_sph_build(&m, g, 3, 1e-6, 100, 8000, err, sizeof err) == 0) {
        ok(m.neg_f_frac[0] == 0 && m.neg_f_frac[1] == 0,
           "galaxy defaults: halo and bulge f(E) > 0 in the combined potential (negative shares %g, %g)",
           m.neg_f_frac[0], m.neg_f_frac[1]);
        double want = 1.1 / 40; /* beyond the taper: Psi = M_total / r */
        ok(fabs(ic_sph_psi(&m, 40) / want - 1) < 1e-3, "galaxy Psi(40) = %.6g (want M/r = %.6g)",
           ic_sph_psi(&m, 40), want);
        ic_sph_free(&m);
    } else skip(2, "galaxy model did not build");
    return done_testing();
}
