/* SPDX-License-Identifier: Apache-2.0 */
/* octree-kernels: the interaction kernels against exact sums, float against
 * double, the coincident-pair guard; moment combination against a direct
 * computation; the four MACs on cases with a known answer. */
#include "tap.h"
#include "octree/kernels.h"
#include "octree/mac.h"
#include "octree/moments.h"

static uint64_t rs = 88172645463325252u;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

#define NP 200
static double X[NP], Y[NP], Z[NP], M[NP];

/* field of the cluster at p, exact (double), monopole and quadrupole */
static void field(const gp_moments *mo, const double p[3], double eps2, double exact[4],
                  double mono[4], double quad[4])
{
    for (int k = 0; k < 4; k++) exact[k] = 0;
    for (int i = 0; i < NP; i++) {
        double a[4];
        gp_mono_d(X[i] - p[0], Y[i] - p[1], Z[i] - p[2], M[i], eps2, &a[0], &a[1], &a[2], &a[3]);
        for (int k = 0; k < 4; k++) exact[k] += a[k];
    }
    double d[3] = { mo->com[0] - p[0], mo->com[1] - p[1], mo->com[2] - p[2] };
    gp_mono_d(d[0], d[1], d[2], mo->m, eps2, &mono[0], &mono[1], &mono[2], &mono[3]);
    gp_quad_d(d[0], d[1], d[2], mo->m, mo->s, eps2, &quad[0], &quad[1], &quad[2], &quad[3]);
}

static double relerr_acc(const double a[4], const double b[4])
{
    double e = 0, n = 0;
    for (int k = 0; k < 3; k++) { e += (a[k] - b[k]) * (a[k] - b[k]); n += b[k] * b[k]; }
    return sqrt(e / n);
}

int main(void)
{
    plan(16);
    for (int i = 0; i < NP; i++) {
        X[i] = urand() - 0.5; Y[i] = 0.5 * (urand() - 0.5); Z[i] = 0.3 * urand();
        M[i] = 0.5 + urand();
    }
    gp_moments mo;
    gp_moments_leaf(X, Y, Z, M, 0, NP, &mo);

    /* quadrupole beats monopole and converges one order faster */
    double em[3], eq[3], ep[3], dist[3] = { 4, 8, 16 };
    for (int t = 0; t < 3; t++) {
        double p[3] = { mo.com[0] + dist[t] * 0.48, mo.com[1] - dist[t] * 0.6, mo.com[2] + dist[t] * 0.64 };
        double ex[4], mn[4], qd[4];
        field(&mo, p, 0.0, ex, mn, qd);
        em[t] = relerr_acc(mn, ex);
        eq[t] = relerr_acc(qd, ex);
        ep[t] = fabs(qd[3] - ex[3]) / fabs(ex[3]);
    }
    diag("rel. acc. error at d = 4, 8, 16: monopole %.2e %.2e %.2e, quadrupole %.2e %.2e %.2e",
         em[0], em[1], em[2], eq[0], eq[1], eq[2]);
    ok(eq[0] < 0.3 * em[0] && eq[1] < 0.2 * em[1] && eq[2] < 0.1 * em[2],
       "quadrupole error well below monopole error at d = 4, 8, 16");
    ok(em[1] / em[2] > 3.0 && em[1] / em[2] < 5.0, "monopole error falls like d^-2 (ratio %.2f)", em[1] / em[2]);
    ok(eq[1] / eq[2] > 6.0 && eq[1] / eq[2] < 10.0, "quadrupole error falls like d^-3 (ratio %.2f)", eq[1] / eq[2]);
    ok(ep[2] < 1e-5, "quadrupole potential at d = 16 within 1e-5 (%.2e)", ep[2]);

    /* with softening the expansion is still right to second order */
    {
        double p[3] = { mo.com[0] + 6, mo.com[1] + 1, mo.com[2] - 2 }, ex[4], mn[4], qd[4];
        field(&mo, p, 0.25, ex, mn, qd);
        double a = relerr_acc(mn, ex), b = relerr_acc(qd, ex);
        ok(b < 0.1 * a, "softened (eps 0.5): quadrupole %.2e vs monopole %.2e", b, a);
    }

    /* float kernels agree with double ones */
    {
        double worst = 0;
        for (int t = 0; t < 1000; t++) {
            double dx = urand() * 4 - 2, dy = urand() * 4 - 2, dz = urand() * 4 - 2, m = urand();
            double s[6] = { urand(), urand(), urand(), 0.1 * urand(), 0.1 * urand(), 0.1 * urand() };
            float sf[6] = { (float)s[0], (float)s[1], (float)s[2], (float)s[3], (float)s[4], (float)s[5] };
            double a[4]; float b[4];
            gp_quad_d(dx, dy, dz, m, s, 0.01, &a[0], &a[1], &a[2], &a[3]);
            gp_quad_f((float)dx, (float)dy, (float)dz, (float)m, sf, 0.01f, &b[0], &b[1], &b[2], &b[3]);
            double nrm = fabs(a[0]) + fabs(a[1]) + fabs(a[2]);
            for (int k = 0; k < 3; k++) {
                double e = fabs(a[k] - b[k]) / nrm;
                worst = e > worst ? e : worst;
            }
        }
        ok(worst < 1e-5, "float quadrupole kernel matches double to %.1e relative", worst);
    }

    /* coincident pair with eps = 0 contributes exactly nothing */
    {
        double a[4]; float b[4];
        gp_mono_d(0, 0, 0, 1.0, 0.0, &a[0], &a[1], &a[2], &a[3]);
        gp_mono_f(0, 0, 0, 1.0f, 0.0f, &b[0], &b[1], &b[2], &b[3]);
        ok(a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0 && b[0] == 0 && b[3] == 0,
           "r = 0 with eps = 0 gives zero force and potential, not NaN");
        gp_mono_d(0, 0, 0, 2.0, 0.25, &a[0], &a[1], &a[2], &a[3]);
        ok(a[0] == 0 && a[3] == -4.0, "r = 0 with eps = 0.5: zero force, potential -m/eps");
    }

    /* combining children == computing the union directly */
    {
        gp_moments ch[3], comb;
        gp_moments_leaf(X, Y, Z, M, 0, 50, &ch[0]);
        gp_moments_leaf(X, Y, Z, M, 50, 120, &ch[1]);
        gp_moments_leaf(X, Y, Z, M, 170, 30, &ch[2]);
        gp_moments_combine(ch, 3, &comb);
        double e = fabs(comb.m - mo.m) / mo.m;
        for (int a = 0; a < 3; a++) e = fmax(e, fabs(comb.com[a] - mo.com[a]));
        for (int k = 0; k < 6; k++) e = fmax(e, fabs(comb.s[k] - mo.s[k]) / gp_moments_b2(&mo));
        ok(e < 1e-13, "combined moments equal direct ones (worst %.1e)", e);
        int inside = 1;
        for (int i = 0; i < NP; i++) {
            double dx = X[i] - comb.com[0], dy = Y[i] - comb.com[1], dz = Z[i] - comb.com[2];
            inside &= sqrt(dx * dx + dy * dy + dz * dz) <= comb.bmax * (1 + 1e-12);
        }
        ok(inside && comb.bmax >= mo.bmax * (1 - 1e-12),
           "combined bmax (%.4f) encloses every particle (exact %.4f)", comb.bmax, mo.bmax);
    }

    /* MACs */
    {
        double l = gp_moments_size(&mo);
        double rb = gp_mac_rcrit(GP_MAC_BH, 0.5, &mo);
        ok(fabs(rb - 2 * l) < 1e-12, "bh r_crit = l/theta");
        double rm = gp_mac_rcrit(GP_MAC_BMAX, 0.5, &mo);
        ok(rm > rb && fabs(rm - rb - gp_moments_offset(&mo)) < 1e-12, "bmax r_crit = l/theta + s");
        double rw = gp_mac_rcrit(GP_MAC_MULTIPOLE, 0.5, &mo);
        ok(rw > mo.bmax && rw < 4 * l, "multipole r_crit %.3f lies between bmax %.3f and 4 l", rw, mo.bmax);
        ok(gp_mac_rcrit(GP_MAC_BH, 0.0, &mo) == HUGE_VAL && gp_mac_rcrit(GP_MAC_BMAX, 0.0, &mo) == HUGE_VAL,
           "theta = 0 never accepts");
        /* acceleration: G M l^2 / d^4 < alpha a  <=>  d > rcrit */
        double k = gp_mac_rcrit(GP_MAC_ACCELERATION, 0, &mo), alpha_a = 1e-3 * 0.7;
        double rc = gp_mac_rcrit_acceleration(k, alpha_a);
        ok(fabs(mo.m * l * l / pow(rc, 4) - alpha_a) < 1e-12 * alpha_a,
           "acceleration r_crit solves G M l^2 / d^4 = alpha |a|");
        double gc[3] = { mo.com[0], mo.com[1], mo.com[2] + 100 };
        ok(gp_mac_box_clear(gc, 1.0, mo.lo, mo.hi) && !gp_mac_box_clear(gc, 100.0, mo.lo, mo.hi)
           && gp_mac_accept_distance(100.0 * 100.0, 1.0, 50.0) && !gp_mac_accept_distance(100.0 * 100.0, 60.0, 50.0),
           "box test and distance test on a far and an overlapping group");
    }
    return done_testing();
}
