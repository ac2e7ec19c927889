/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-models.t — each initial-condition model against its analytic
 * description: the radial mass profile (binned counts against the analytic
 * cumulative mass, a chi-square test at about 4 sigma), the virial ratio
 * 2K/|W| (direct O(N^2) potential energy on 3000 particles: the scatter
 * between seeds is about 0.015 there, so 0.06 is a 4-sigma band), the
 * centre-of-mass frame, and Hernquist's velocity dispersion against the
 * analytic isotropic Jeans solution.
 *
 * Profiles are checked with frame = momentum (positions as sampled, so
 * the density centre is the origin); the default frame is checked apart.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>

#include "ic.h"
#include "tap.h"

/* ---- helpers ------------------------------------------------------------ */

static int make(const char *model, size_t n, uint64_t seed, gp_ic *ic, size_t nkv, const char *const *kv)
{
    gp_param p[16];
    for (size_t i = 0; i < nkv; ++i) {
        p[i].name = kv[2 * i];
        p[i].value = kv[2 * i + 1];
    }
    gp_ic_opts o = {p, nkv};
    char err[512];
    int rc = gp_ic_make(model, n, seed, &o, ic, err, sizeof err);
    if (rc != 0) diag("%s: %s", model, err);
    return rc;
}

static double radius(const double *x) { return sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]); }

typedef double (*cum_fn)(double r, const void *par); /* cumulative mass fraction */

/* Radius where cum = q, by bisection on [lo, hi]. */
static double cum_inverse(cum_fn F, const void *par, double q, double lo, double hi)
{
    for (int it = 0; it < 200; ++it) {
        double mid = sqrt(lo * hi);
        if (F(mid, par) < q) lo = mid;
        else hi = mid;
    }
    return sqrt(lo * hi);
}

/* Chi-square of counts in nb log bins between the radii enclosing q_lo and
 * q_hi of the mass, against the analytic cumulative fraction F. */
static void check_profile(const char *what, const double *r, size_t n, cum_fn F, const void *par,
                          double q_lo, double q_hi, int nb, double rmin, double rmax)
{
    double lo = cum_inverse(F, par, q_lo, rmin, rmax), hi = cum_inverse(F, par, q_hi, rmin, rmax);
    double chi2 = 0, zmax = 0;
    for (int b = 0; b < nb; ++b) {
        double e0 = lo * pow(hi / lo, (double)b / nb), e1 = lo * pow(hi / lo, (double)(b + 1) / nb);
        size_t count = 0;
        for (size_t i = 0; i < n; ++i)
            if (r[i] >= e0 && r[i] < e1) ++count;
        double expect = (double)n * (F(e1, par) - F(e0, par));
        double z = ((double)count - expect) / sqrt(expect);
        chi2 += z * z;
        if (fabs(z) > fabs(zmax)) zmax = z;
    }
    double limit = nb + 4.0 * sqrt(2.0 * nb);
    ok(chi2 < limit, "%s: radial profile matches (chi2 %.1f for %d bins, limit %.1f, worst bin %+.2f sigma)",
       what, chi2, nb, limit, zmax);
}

static void energies(const gp_ic *ic, double *K, double *W)
{
    *K = 0;
    *W = 0;
    for (size_t i = 0; i < ic->n; ++i) {
        const double *v = &ic->vel[3 * i];
        *K += 0.5 * ic->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        double wi = 0;
        for (size_t j = i + 1; j < ic->n; ++j) {
            double d[3] = {ic->pos[3 * i] - ic->pos[3 * j], ic->pos[3 * i + 1] - ic->pos[3 * j + 1],
                           ic->pos[3 * i + 2] - ic->pos[3 * j + 2]};
            wi += ic->mass[j] / radius(d);
        }
        *W -= ic->mass[i] * wi;
    }
}

static void check_virial(const char *model, size_t nkv, const char *const *kv)
{
    gp_ic ic;
    if (make(model, 3000, 7, &ic, nkv, kv) != 0) {
        ok(0, "%s: made 3000 particles for the virial check", model);
        return;
    }
    double K, W;
    energies(&ic, &K, &W);
    double q = 2 * K / fabs(W);
    ok(fabs(q - 1) < 0.06, "%s: virial ratio 2K/|W| = %.4f (N = 3000, want 1 +- 0.06)", model, q);
    gp_ic_free(&ic);
}

static void check_com(const char *model, const gp_ic *ic)
{
    double x[3] = {0, 0, 0}, p[3] = {0, 0, 0}, scale = 0;
    for (size_t i = 0; i < ic->n; ++i) {
        for (int k = 0; k < 3; ++k) {
            x[k] += ic->mass[i] * ic->pos[3 * i + k];
            p[k] += ic->mass[i] * ic->vel[3 * i + k];
            scale += ic->mass[i] * fabs(ic->pos[3 * i + k]) + ic->mass[i] * fabs(ic->vel[3 * i + k]);
        }
    }
    double worst = 0;
    for (int k = 0; k < 3; ++k) worst = fmax(worst, fmax(fabs(x[k]), fabs(p[k])));
    ok(worst <= 1e-12 * scale, "%s: default frame is the centre-of-mass frame (|sum m x|, |sum m v| = %.2g)",
       model, worst);
}

static double *radii(const gp_ic *ic, size_t from, size_t to)
{
    double *r = malloc((to - from) * sizeof *r);
    for (size_t i = from; i < to; ++i) r[i - from] = radius(&ic->pos[3 * i]);
    return r;
}

/* ---- analytic profiles ---------------------------------------------- */

typedef struct tapered {
    double scale, rt, rd; /* rt = 0: untruncated */
    int kind;             /* 0: Hernquist, 1: NFW */
    double m_inside_rt, m_taper, k;
} tapered;

static double shape(const tapered *t, double r)
{
    double x = r / t->scale;
    return t->kind == 0 ? 1.0 / (x * pow(1 + x, 3)) : 1.0 / (x * (1 + x) * (1 + x));
}

/* Mass of the untapered shape inside r (shape units). */
static double m_shape(const tapered *t, double r)
{
    double x = r / t->scale, a3 = pow(t->scale, 3);
    return t->kind == 0 ? 2 * M_PI * a3 * x * x / ((1 + x) * (1 + x))
                        : 4 * M_PI * a3 * (log1p(x) - x / (1 + x));
}

static double taper_density(double r, void *par)
{
    const tapered *t = par;
    return 4 * M_PI * r * r * shape(t, t->rt) * pow(r / t->rt, t->k) * exp(-(r - t->rt) / t->rd);
}

/* Sets up the analytic taper (independent of spherical.c): the log slope
 * of the shape at rt is -(1+4x)/(1+x) (Hernquist) or -(1+3x)/(1+x) (NFW). */
static void tapered_init(tapered *t)
{
    if (t->rt <= 0) {
        t->m_inside_rt = t->kind == 0 ? 2 * M_PI * pow(t->scale, 3) : INFINITY;
        t->m_taper = 0;
        return;
    }
    double x = t->rt / t->scale;
    double slope = t->kind == 0 ? -(1 + 4 * x) / (1 + x) : -(1 + 3 * x) / (1 + x);
    t->k = slope + t->rt / t->rd;
    t->m_inside_rt = m_shape(t, t->rt);
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(1000);
    gsl_function f = {taper_density, t};
    double res, abserr;
    gsl_integration_qagiu(&f, t->rt, 0, 1e-10, 1000, w, &res, &abserr);
    gsl_integration_workspace_free(w);
    t->m_taper = res;
}

static double tapered_cum(double r, const void *par)
{
    const tapered *t = par;
    double total = t->m_inside_rt + t->m_taper;
    if (t->rt <= 0 || r <= t->rt) return m_shape(t, r) / total;
    return 1.0; /* profiles are only binned inside rt */
}

static double plummer_cum(double r, const void *par)
{
    const double *p = par; /* a, mass_cut */
    return pow(r * r / (r * r + p[0] * p[0]), 1.5) / p[1];
}

static double uniform_cum(double r, const void *par)
{
    (void)par;
    return r >= 1 ? 1 : r * r * r;
}

static double disk_cum(double R, const void *par)
{
    double rd = *(const double *)par;
    double cut = 1 - 11 * exp(-10.0);
    return (1 - (1 + R / rd) * exp(-R / rd)) / cut;
}

/* Hernquist (1990) eq. 10: isotropic sigma_r^2, G = M = a = 1. */
static double hernquist_sigma2(double r)
{
    return (1.0 / 12) * (12 * r * pow(1 + r, 3) * log((1 + r) / r) -
                         r / (1 + r) * (25 + 52 * r + 42 * r * r + 12 * r * r * r));
}

/* ---- tests -------------------------------------------------------------- */

/* One spherical model's density profile over radial quantiles 0.01 .. q_hi
 * (radii up to rmax), then its virial ratio. */
static void check_spherical(const char *model, uint64_t seed, cum_fn F, const void *par,
                            double q_hi, double rmax)
{
    static const char *const momentum[] = {"frame", "momentum"};
    gp_ic ic;
    if (make(model, 20000, seed, &ic, 1, momentum) == 0) {
        double *r = radii(&ic, 0, ic.n);
        check_profile(model, r, ic.n, F, par, 0.01, q_hi, 14, 1e-6, rmax);
        free(r);
        gp_ic_free(&ic);
    } else ok(0, "%s made", model);
    check_virial(model, 0, NULL);
}

int main(void)
{
    plan(21);
    const size_t N = 20000;
    static const char *const momentum[] = {"frame", "momentum"};
    gp_ic ic;

    /* Plummer. */
    const double plummer_par[2] = {3 * M_PI / 16, 0.999};
    check_spherical("plummer", 1, plummer_cum, plummer_par, 0.98, 1e3);
    if (make("plummer", 3000, 7, &ic, 0, NULL) == 0) {
        double K, W;
        energies(&ic, &K, &W);
        ok(fabs(K + W + 0.25) < 0.02, "plummer: Henon units, E = %.4f (want -0.25 +- 0.02 at N = 3000)", K + W);
        check_com("plummer", &ic);
        gp_ic_free(&ic);
    } else skip(2, "plummer failed");

    /* Hernquist, default taper at 100 a. */
    tapered hernquist = {1, 100, 10, 0, 0, 0, 0};
    tapered_init(&hernquist);
    check_spherical("hernquist", 2, tapered_cum, &hernquist, 0.95, 100);

    /* Untruncated Hernquist: velocity dispersion against Jeans. */
    static const char *const untrunc[] = {"frame", "momentum", "rtrunc", "0"};
    if (make("hernquist", N, 3, &ic, 2, untrunc) == 0) {
        static const double edges[] = {0.05, 0.15, 0.4, 1.0, 2.5, 8.0};
        double worst = 0;
        int good = 1;
        for (int b = 0; b < 5; ++b) {
            double s = 0, s2 = 0, rs = 0;
            size_t c = 0;
            for (size_t i = 0; i < ic.n; ++i) {
                double r = radius(&ic.pos[3 * i]);
                if (r < edges[b] || r >= edges[b + 1]) continue;
                const double *v = &ic.vel[3 * i];
                double v2 = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) / 3;
                s += v2;
                s2 += v2 * v2;
                rs += hernquist_sigma2(r);
                ++c;
            }
            double mean = s / c, sd = sqrt((s2 / c - mean * mean) / c);
            double want = rs / c; /* the Jeans sigma^2 averaged over the same particles */
            double z = (mean - want) / sd;
            if (fabs(z) > fabs(worst)) worst = z;
            if (fabs(z) > 4) good = 0;
        }
        ok(good, "hernquist: <v^2>/3 in 5 radial bins matches the Jeans sigma^2 (worst %+.2f sigma)", worst);
        gp_ic_free(&ic);
    } else ok(0, "hernquist untruncated made");

    /* NFW, c = 10, decay 0.1. */
    tapered nfw = {1, 10, 1, 1, 0, 0, 0};
    tapered_init(&nfw);
    check_spherical("nfw", 4, tapered_cum, &nfw, 0.8, 10);
    if (make("nfw", 2000, 4, &ic, 0, NULL) == 0) {
        check_com("nfw", &ic);
        gp_ic_free(&ic);
    } else ok(0, "nfw made");

    /* Galaxy: halo, bulge, disk each against its own profile. */
    if (make("galaxy", N, 5, &ic, 1, momentum) == 0) {
        double mt = 1.1;
        size_t nb = (size_t)llround(N * 0.05 / mt), nd = (size_t)llround(N * 0.05 / mt), nh = N - nb - nd;
        tapered halo = {1, 10, 1, 1, 0, 0, 0}, bulge = {0.1, 10, 1, 0, 0, 0, 0};
        tapered_init(&halo);
        tapered_init(&bulge);
        double *r = radii(&ic, 0, nh);
        check_profile("galaxy halo", r, nh, tapered_cum, &halo, 0.01, 0.8, 12, 1e-6, 10);
        free(r);
        r = radii(&ic, nh, nh + nb);
        check_profile("galaxy bulge", r, nb, tapered_cum, &bulge, 0.02, 0.9, 6, 1e-7, 10);
        free(r);
        double *R = malloc(nd * sizeof *R), rd = 0.2, zs = 0;
        for (size_t i = 0; i < nd; ++i) {
            const double *x = &ic.pos[3 * (nh + nb + i)];
            R[i] = hypot(x[0], x[1]);
            zs += fabs(x[2]);
        }
        check_profile("galaxy disk (surface density)", R, nd, disk_cum, &rd, 0.03, 0.95, 6, 1e-6, 2);
        /* sech^2(z/z0): <|z|> = z0 ln 2. */
        double zmean = zs / nd, zsd = 0.02 * sqrt(M_PI * M_PI / 12 - log(2) * log(2)) / sqrt((double)nd);
        ok(fabs(zmean - 0.02 * log(2)) < 4 * zsd, "galaxy disk: <|z|> = %.5f (want z0 ln 2 = %.5f +- %.5f)",
           zmean, 0.02 * log(2), 4 * zsd);
        /* The disk rotates: mean v_phi well above the dispersion. */
        double vphi = 0;
        for (size_t i = nh + nb; i < N; ++i) {
            const double *x = &ic.pos[3 * i], *v = &ic.vel[3 * i];
            vphi += (x[0] * v[1] - x[1] * v[0]) / hypot(x[0], x[1]);
        }
        vphi /= nd;
        ok(vphi > 0.3, "galaxy disk rotates counter-clockwise about +z (mean v_phi = %.3f)", vphi);
        free(R);
        gp_ic_free(&ic);
    } else skip(5, "galaxy failed");
    check_virial("galaxy", 0, NULL);

    /* Uniform sphere. */
    if (make("uniform", N, 6, &ic, 1, momentum) == 0) {
        double *r = radii(&ic, 0, ic.n);
        check_profile("uniform", r, ic.n, uniform_cum, NULL, 0.01, 0.99, 10, 1e-6, 1);
        double vmax = 0;
        for (size_t i = 0; i < 3 * ic.n; ++i) vmax = fmax(vmax, fabs(ic.vel[i]));
        ok(vmax == 0, "uniform: cold (largest velocity component %g)", vmax);
        free(r);
        gp_ic_free(&ic);
    } else skip(2, "uniform failed");
    static const char *const warm[] = {"virial_ratio", "0.5"};
    if (make("uniform", 3000, 6, &ic, 1, warm) == 0) {
        double K, W;
        energies(&ic, &K, &W);
        ok(fabs(2 * K / fabs(W) - 0.5) < 0.03, "uniform virial_ratio=0.5: 2K/|W| = %.4f (want 0.5 +- 0.03)",
           2 * K / fabs(W));
        gp_ic_free(&ic);
    } else ok(0, "uniform warm made");

    /* Kepler: exact orbit elements. */
    static const char *const kep[] = {"m1", "0.8", "m2", "0.2", "a", "2", "e", "0.6"};
    if (make("kepler", 2, 0, &ic, 4, kep) == 0) {
        double d[3], w[3];
        for (int k = 0; k < 3; ++k) {
            d[k] = ic.pos[3 + k] - ic.pos[k];
            w[k] = ic.vel[3 + k] - ic.vel[k];
        }
        double r = radius(d), v2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
        double E = 0.5 * 0.8 * 0.2 / 1.0 * v2 - 0.8 * 0.2 / r;
        ok(fabs(r - 2 * 0.4) < 1e-14 && fabs(E + 0.8 * 0.2 / (2 * 2)) < 1e-14,
           "kepler: starts at pericentre a(1-e) = %.15g with E = -m1 m2/(2a) = %.15g", r, E);
        double px = 0.8 * ic.vel[1] + 0.2 * ic.vel[4], cx = 0.8 * ic.pos[0] + 0.2 * ic.pos[3];
        ok(fabs(px) < 1e-15 && fabs(cx) < 1e-15, "kepler: centre-of-mass frame");
        gp_ic_free(&ic);
    } else skip(2, "kepler failed");

    return done_testing();
}
