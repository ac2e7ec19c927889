/* SPDX-License-Identifier: Apache-2.0 */
/*
 * physics-direct.c — cpu-direct against physics, not against code:
 *   1. two bodies at several separations and orientations: the analytic
 *      Newtonian (and Plummer-softened) force and potential;
 *   2. Newton's third law: sum_i m_i a_i vanishes to 1e-12 of sum |m_i a_i|;
 *   3. a 20,000-particle Plummer sphere: in ten radial shells of equal
 *      count, the mean of a_r / (-G M(r)/r^2) is 1 within its statistical
 *      error (interior-mass Poisson noise plus the scatter in the shell);
 *   4. Gauss's law through compute_field: the radial field averaged over
 *      points on a sphere equals -G M_inside / r^2 of the actual sample.
 * The plugin is found by short name (GRAVPLUG_PATH, then the build tree).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "tap.h"
#include "testlib.h"

static const gp_api *api;

static gp_solver *solver(const char *G, const char *eps)
{
    gp_param p[2] = {{"G", G}, {"eps", eps}};
    gp_init_args a = {sizeof a, p, 2, NULL, NULL, -1, NULL};
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));
    return s;
}

static void two_body(void)
{
    tl_rng r = {2024};
    double worst = 0, worst_pot = 0;
    for (int t = 0; t < 50; ++t) {
        double G = 0.5 + tl_uniform(&r), eps = t % 2 ? 0.3 * tl_uniform(&r) : 0.0;
        double m[2] = {tl_uniform(&r), 10 * tl_uniform(&r)}, d[3], pos[6], acc[6], pot[2];
        double sep = pow(10.0, 6 * tl_uniform(&r) - 3); /* 1e-3 .. 1e3 */
        tl_on_sphere(&r, sep, d);
        for (int c = 0; c < 3; ++c) {
            pos[c] = 5 * tl_uniform(&r) - 2.5;
            pos[3 + c] = pos[c] + d[c];
        }
        char gs[40], es[40];
        snprintf(gs, sizeof gs, "%.17g", G);
        snprintf(es, sizeof es, "%.17g", eps);
        gp_solver *s = solver(gs, es);
        api->set_particles(s, 2, pos, m);
        api->compute_forces(s, acc, pot);
        api->finalize(s);
        /* recompute the separation as the plugin sees it */
        double dd[3], r2 = 0;
        for (int c = 0; c < 3; ++c) { dd[c] = pos[3 + c] - pos[c]; r2 += dd[c] * dd[c]; }
        double s2 = r2 + eps * eps, inv3 = 1.0 / (s2 * sqrt(s2));
        for (int c = 0; c < 3; ++c) {
            double w0 = G * m[1] * dd[c] * inv3, w1 = -G * m[0] * dd[c] * inv3;
            double scale = G * m[1] * sqrt(r2) * inv3 + G * m[0] * sqrt(r2) * inv3;
            worst = fmax(worst, fabs(acc[c] - w0) / scale);
            worst = fmax(worst, fabs(acc[3 + c] - w1) / scale);
        }
        worst_pot = fmax(worst_pot, fabs(pot[0] + G * m[1] / sqrt(s2)) / (G * m[1] / sqrt(s2)));
        worst_pot = fmax(worst_pot, fabs(pot[1] + G * m[0] / sqrt(s2)) / (G * m[0] / sqrt(s2)));
    }
    ok(worst < 1e-14, "50 random pairs: force = G m r / (r^2+eps^2)^(3/2) (worst rel %.2g)", worst);
    ok(worst_pot < 1e-14, "50 random pairs: potential = -G m / sqrt(r^2+eps^2) (worst rel %.2g)", worst_pot);
}

static void third_law(void)
{
    const size_t n = 2000;
    double *pos = malloc(3 * n * sizeof *pos), *m = malloc(n * sizeof *m), *acc = malloc(3 * n * sizeof *acc);
    tl_plummer(n, 77, 1.0, 50.0, pos, m);
    tl_rng r = {5};
    for (size_t i = 0; i < n; ++i) m[i] *= 0.1 + 2 * tl_uniform(&r); /* unequal masses */
    for (int soft = 0; soft < 2; ++soft) {
        gp_solver *s = solver("1", soft ? "0.05" : "0");
        api->set_particles(s, n, pos, m);
        api->compute_forces(s, acc, NULL);
        api->finalize(s);
        double sum[3] = {0, 0, 0}, mag = 0;
        for (size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c) {
                sum[c] += m[i] * acc[3 * i + c];
                mag += fabs(m[i] * acc[3 * i + c]);
            }
        double net = sqrt(sum[0] * sum[0] + sum[1] * sum[1] + sum[2] * sum[2]);
        ok(net <= 1e-12 * mag, "Newton's third law (eps = %s): |sum m a| / sum |m a| = %.2g",
           soft ? "0.05" : "0", net / mag);
    }
    free(pos); free(m); free(acc);
}

/* Plummer enclosed-mass fraction, a = 1. */
static double plummer_frac(double r) { return r * r * r / pow(r * r + 1.0, 1.5); }

typedef struct rq { double r, q; } rq;
static int by_r(const void *a, const void *b)
{
    double x = ((const rq *)a)->r, y = ((const rq *)b)->r;
    return (x > y) - (x < y);
}

static void plummer_sphere(void)
{
    const size_t n = 20000;
    const double rmax = 100.0, M = 1.0;
    double *pos = malloc(3 * n * sizeof *pos), *m = malloc(n * sizeof *m), *acc = malloc(3 * n * sizeof *acc);
    tl_plummer(n, 20000, M, rmax, pos, m);
    gp_solver *s = solver("1", "0");
    ok(api->set_particles(s, n, pos, m) == GP_OK && api->compute_forces(s, acc, NULL) == GP_OK,
       "forces on a %zu-particle Plummer sphere", n);

    /* q_i = a_r,i / expected, where the expected radial acceleration of a
     * sample particle is -G (N-1)/N M(r)/r^2 (the others, shell theorem),
     * with M(r) normalised to the truncation radius. */
    rq *v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; ++i) {
        double *x = &pos[3 * i], *a = &acc[3 * i];
        double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        double ar = (a[0] * x[0] + a[1] * x[1] + a[2] * x[2]) / r;
        double want = -(double)(n - 1) / (double)n * M * plummer_frac(r) / plummer_frac(rmax) / (r * r);
        v[i].r = r;
        v[i].q = ar / want;
    }
    qsort(v, n, sizeof *v, by_r);
    const int shells = 10;
    size_t per = n / (size_t)shells;
    int all = 1;
    for (int k = 0; k < shells; ++k) {
        double sum = 0, sum2 = 0;
        for (size_t i = k * per; i < (k + 1) * per; ++i) { sum += v[i].q; sum2 += v[i].q * v[i].q; }
        double mean = sum / per, var = sum2 / per - mean * mean;
        double p = (double)((k + 0.5) * per) / n; /* enclosed fraction mid-shell */
        double sigma = sqrt((1 - p) / (n * p) + var / per);
        int good = fabs(mean - 1.0) <= 4.0 * sigma;
        all &= good;
        diag("shell %d: r %.3f..%.3f  <a_r/a_model> = %.4f +- %.4f%s", k, v[k * per].r,
             v[(k + 1) * per - 1].r, mean, sigma, good ? "" : "  <-- off");
    }
    ok(all, "shell-averaged radial acceleration = -GM(r)/r^2 within 4 sigma in all %d shells", shells);

    /* Gauss's law with compute_field: average a_r over points on spheres. */
    const size_t npts = 4000;
    double *pts = malloc(3 * npts * sizeof *pts), *fa = malloc(3 * npts * sizeof *fa);
    double radii[3] = {0.5, 1.0, 3.0};
    int gauss = 1;
    tl_rng r = {99};
    for (int k = 0; k < 3; ++k) {
        for (size_t i = 0; i < npts; ++i) tl_on_sphere(&r, radii[k], &pts[3 * i]);
        api->compute_field(s, npts, pts, fa, NULL);
        double sum = 0, sum2 = 0, inside = 0;
        for (size_t i = 0; i < npts; ++i) {
            double ar = (fa[3 * i] * pts[3 * i] + fa[3 * i + 1] * pts[3 * i + 1] + fa[3 * i + 2] * pts[3 * i + 2]) / radii[k];
            sum += ar; sum2 += ar * ar;
        }
        for (size_t i = 0; i < n; ++i) if (v[i].r < radii[k]) inside += M / n;
        double mean = sum / npts, sd = sqrt(fmax(sum2 / npts - mean * mean, 0) / npts);
        double want = -inside / (radii[k] * radii[k]);
        int good = fabs(mean - want) <= 4 * sd;
        gauss &= good;
        diag("sphere r = %.1f: <a_r> = %.6f +- %.6f, -G M_in/r^2 = %.6f", radii[k], mean, sd, want);
    }
    ok(gauss, "Gauss's law: mean radial field on spheres = -G M_inside / r^2 within 4 sigma");
    api->finalize(s);
    free(pts); free(fa); free(v); free(pos); free(m); free(acc);
}

int main(void)
{
    gp_plugin *p = NULL;
    char err[1024];
    plan_lazy();
    if (gp_plugin_open("cpu-direct", &p, err, sizeof err) != GP_OK) bail(err);
    api = gp_plugin_api(p);
    two_body();
    third_law();
    plummer_sphere();
    gp_plugin_close(p);
    return done_testing();
}
