/* SPDX-License-Identifier: Apache-2.0 */
/* direct-step-prune: cpu-direct skips the exact pairwise step of a pair
 * when pair_step_bound.h proves tau_ij >= the running minimum. Checked
 * here:
 *   - the bound is sound on adversarial pairs (co-moving, slowly
 *     approaching, at rest, grazing, every scale, T within 1e-15 of tau):
 *     a pair it passes never has gp_pair_step(...) < T;
 *   - the adversarial set would catch a bound that forgot the fly-by
 *     correction of slowly approaching pairs (such a bound fails here);
 *   - the bound is tight (it passes nearly every pair with tau clearly
 *     above T), so the pruning is real;
 *   - the fused kernel (gp_direct_point_ex) gives the plain kernels' acc,
 *     pot and jerk, the brute-force minimum of gp_pair_step and the
 *     brute-force nearest source, bit for bit, on
 *     clustered sets with a hard binary, co-moving groups, slowly
 *     approaching pairs, massless targets and source counts that are not
 *     multiples of the lane width, whatever seed it is given, while
 *     evaluating few pairs exactly;
 *   - the neighbour lists' lane kernel (gp_direct_list_candidates) keeps
 *     every pair the brute force lists (by radius, by tau_ij < nb_step, by
 *     the even step < nb_step_even), in ascending order without self, on
 *     the same sets and on coincident and nearly coincident pairs, while
 *     dropping most of the others. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tap.h"
#include "base/pair_step.h"
#include "base/direct_kernel.h"
#include "base/pair_step_bound.h"

static uint64_t rng_state = 0x2545f4914f6cdd1du;
static double uni(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static double logu(double lo, double hi) { return lo * pow(hi / lo, uni()); }
static void unit(double *u)
{
    double n;
    do {
        for (int d = 0; d < 3; ++d) u[d] = 2 * uni() - 1;
        n = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    } while (n > 1 || n < 1e-6);
    n = sqrt(n);
    for (int d = 0; d < 3; ++d) u[d] /= n;
}

/* One adversarial pair: r, v (relative), eps2, Gmu. */
typedef struct pair { double r[3], v[3], eps2, Gmu; } pair;

static pair make_pair(int kind)
{
    pair p;
    double ur[3], uv[3], R = logu(1e-22, 1e22), V = logu(1e-22, 1e22);
    unit(ur);
    unit(uv);
    p.eps2 = uni() < 0.3 ? 0.0 : R * R * logu(1e-6, 10.0);
    p.Gmu = logu(1e-44, 1e44);
    if (kind % 4 == 0) {   /* typical scales */
        R = logu(1e-3, 1e3);
        V = logu(1e-3, 1e3);
        p.eps2 = uni() < 0.5 ? 0.0 : 1e-4;
        p.Gmu = logu(1e-6, 1.0);
    }
    for (int d = 0; d < 3; ++d) p.r[d] = R * ur[d];
    switch (kind % 6) {
    case 0: case 1:   /* any direction */
        for (int d = 0; d < 3; ++d) p.v[d] = V * uv[d];
        break;
    case 2:           /* at rest, or co-moving (equal velocities) */
        for (int d = 0; d < 3; ++d) p.v[d] = 0.0;
        break;
    case 3: {         /* slowly approaching, nearly head on: the fly-by term */
        double slow = V * logu(1e-12, 1e-2);
        for (int d = 0; d < 3; ++d) p.v[d] = -slow * ur[d] + 1e-3 * slow * uv[d];
        break;
    }
    case 4:           /* receding, head on (the clamp) */
        for (int d = 0; d < 3; ++d) p.v[d] = V * ur[d];
        break;
    default:          /* grazing: v nearly perpendicular to r */
        for (int d = 0; d < 3; ++d) p.v[d] = V * (uv[d] - (uv[0] * ur[0] + uv[1] * ur[1] + uv[2] * ur[2]) * ur[d]);
        break;
    }
    return p;
}

/* The kernel's inputs to the bound, computed as the kernel does. */
static int passes(const pair *p, double T, int without_flyby)
{
    const double *r = p->r, *v = p->v;
    double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + p->eps2;
    if (!(r2 > 0)) return 0;
    double s = r[0] * v[0] + r[1] * v[1] + r[2] * v[2];
    double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    gp_step_bound b = gp_step_bound_for(T);
    if (without_flyby) {
        /* a wrong bound for the check of the check: B2 without K */
        double c = 1.0 / sqrt(r2), c2 = c * c, mc3 = p->Gmu * c * c2, D = b.X + 0.75 * s * c2;
        return (mc3 <= b.ff) & (D >= 0) & (2 * mc3 <= D * D) & (v2 * c2 <= b.X * b.X);
    }
    return gp_step_bound_holds(&b, 1.0 / sqrt(r2), s, v2, p->Gmu);
}

static double tau_of(const pair *p)
{
    return gp_pair_step(-p->r[0], -p->r[1], -p->r[2], -p->v[0], -p->v[1], -p->v[2], p->eps2,
                        p->Gmu);
}

static void test_bound(void)
{
    static const double rel[] = {-1e-9, -1e-12, -2e-13, -1e-15, 0.0, 1e-15, 1e-13, 1e-12,
                                 1e-9, 0.1, 1.0};
    const int nrel = (int)(sizeof rel / sizeof rel[0]);
    long wrong = 0, wrong_noflyby = 0, tested = 0, clear = 0, clear_passed = 0;
    long by_kind[6] = {0};
    for (int q = 0; q < 120000; ++q) {
        pair p = make_pair(q);
        double tau = tau_of(&p);
        if (!(tau < HUGE_VAL)) continue;
        for (int k = 0; k < nrel + 4; ++k) {
            /* T near tau: relative steps, then 1 to 4 ulps above it */
            double T = tau * (1.0 + rel[k < nrel ? k : 0]);
            if (k >= nrel) {
                T = tau;
                for (int u = nrel; u <= k; ++u) T = nextafter(T, HUGE_VAL);
            }
            ++tested;
            if (passes(&p, T, 0) && tau < T) {
                if (wrong < 5)
                    diag("passes with tau %.17g < T %.17g (kind %d)", tau, T, q % 6);
                ++wrong;
            }
            if (passes(&p, T, 1) && tau < T) ++wrong_noflyby;
        }
        /* tightness, where the bound is trusted: T clearly below tau */
        double T = tau * 0.999;
        if (q % 4 == 0 && T >= 1e-90 && T <= 1e90) {
            ++clear;
            if (passes(&p, T, 0)) { ++clear_passed; ++by_kind[q % 6]; }
        }
    }
    ok(wrong == 0, "the bound never passes a pair with gp_pair_step < T (%ld pair/T tried)",
       tested);
    ok(wrong_noflyby > 0, "the set catches a bound without the fly-by correction (%ld wrong "
       "passes)", wrong_noflyby);
    ok(clear_passed >= clear * 99 / 100, "tight: it passes %ld of %ld typical pairs with tau "
       ">= T / 0.999", clear_passed, clear);

    /* Out of range: never passes (nothing to trust). */
    pair p = make_pair(1);
    ok(!passes(&p, 1e-200, 0) && !passes(&p, NAN, 0) && !passes(&p, HUGE_VAL, 0),
       "no pass for T = 1e-200, NaN or +inf");
}

/* ---- the kernel against brute force --------------------------------------- */

enum { NMAX = 1200 };
static double X[NMAX], Y[NMAX], Z[NMAX], M[NMAX], ID[NMAX], VX[NMAX], VY[NMAX], VZ[NMAX];

/* A cluster with structure: a hard binary, co-moving groups, pairs
 * approaching slowly head on, massless particles, at rest or moving. */
static void make_cluster(size_t n, int moving)
{
    for (size_t i = 0; i < n; ++i) {
        double u[3];
        unit(u);
        double R = cbrt(uni());
        X[i] = R * u[0]; Y[i] = R * u[1]; Z[i] = R * u[2];
        M[i] = i % 29 == 7 ? 0.0 : logu(1e-4, 1e-2);
        unit(u);
        double V = moving ? 0.3 * uni() : 0.0;
        VX[i] = V * u[0]; VY[i] = V * u[1]; VZ[i] = V * u[2];
        ID[i] = (double)i;
    }
    /* a hard binary: 3 and 4, close and fast */
    X[4] = X[3] + 1e-5; Y[4] = Y[3]; Z[4] = Z[3];
    VX[4] = VX[3]; VY[4] = VY[3] + 3.0; VZ[4] = VZ[3];
    M[3] = M[4] = 0.05;
    /* co-moving groups: every 10th shares the velocity of the one before */
    for (size_t i = 10; i < n; i += 10) { VX[i] = VX[i - 1]; VY[i] = VY[i - 1]; VZ[i] = VZ[i - 1]; }
    /* slowly approaching pairs, head on: 20+k towards 21+k */
    for (size_t i = 20; i + 1 < n && i < 200; i += 13) {
        X[i + 1] = X[i] + 0.01; Y[i + 1] = Y[i]; Z[i + 1] = Z[i];
        VX[i + 1] = VX[i] - 1e-7; VY[i + 1] = VY[i]; VZ[i + 1] = VZ[i];
    }
}

/* The cluster's sources: its massive particles, as cpu-direct keeps them. */
static double sx[NMAX], sy[NMAX], sz[NMAX], sm[NMAX], sid[NMAX], svx[NMAX], svy[NMAX], svz[NMAX];

static size_t gather_sources(size_t n)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!(M[i] > 0)) continue;
        sx[ns] = X[i]; sy[ns] = Y[i]; sz[ns] = Z[i]; sm[ns] = M[i]; sid[ns] = ID[i];
        svx[ns] = VX[i]; svy[ns] = VY[i]; svz[ns] = VZ[i];
        ++ns;
    }
    return ns;
}

static void test_kernel(const char *what, size_t n, int moving, double eps2)
{
    make_cluster(n, moving);
    gp_direct_sources src = {0};
    gp_direct_vel vel = {VX, VY, VZ};
    size_t ns = gather_sources(n);
    src.n = ns; src.x = sx; src.y = sy; src.z = sz; src.m = sm; src.id = sid;
    vel.vx = svx; vel.vy = svy; vel.vz = svz;
    const double G = 1.0;
    size_t bad_step = 0, bad_nn = 0, bad_seed = 0, bad_sums = 0, evals = 0, pairs = 0;
    size_t bad_even = 0;
    for (size_t i = 0; i < n; ++i) {
        double best = HUGE_VAL, bestd = HUGE_VAL, bestid = -1, best_even = HUGE_VAL;
        for (size_t j = 0; j < ns; ++j) {
            if (sid[j] == (double)i) continue;
            double dx = sx[j] - X[i], dy = sy[j] - Y[i], dz = sz[j] - Z[i];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 < bestd) { bestd = d2; bestid = sid[j]; }
            double tau = gp_pair_step(-dx, -dy, -dz, VX[i] - svx[j], VY[i] - svy[j],
                                      VZ[i] - svz[j], eps2, G * (M[i] + sm[j]));
            if (tau < best) best = tau;
            double tev = gp_pair_step_even(-dx, -dy, -dz, VX[i] - svx[j], VY[i] - svy[j],
                                           VZ[i] - svz[j], eps2, G * (M[i] + sm[j]));
            if (tev < best_even) best_even = tev;
        }
        gp_direct_target t = {X[i], Y[i], Z[i], VX[i], VY[i], VZ[i], (double)i, M[i], G, 1, 0};
        /* ABI 1.3's even step, pruned over both signs of r.v */
        gp_direct_target te = t;
        te.even = 1;
        double oe[GP_EX_W];
        oe[GP_EX_STEP] = HUGE_VAL;
        gp_direct_point_ex(&src, &vel, &te, eps2, (int)(i % 2), 1, oe, NULL);
        bad_even += memcmp(&oe[GP_EX_STEP], &best_even, sizeof best_even) != 0;
        double out[GP_EX_W];
        size_t e = 0;
        out[GP_EX_STEP] = HUGE_VAL;
        gp_direct_point_ex(&src, &vel, &t, eps2, (int)(i % 2), 1, out, &e);
        evals += e;
        pairs += ns;
        /* acc, pot (and the jerk) are the plain kernels' bits */
        double plain[7];
        if (i % 2) {
            gp_direct_point_jerk(&src, &vel, X[i], Y[i], Z[i], VX[i], VY[i], VZ[i], (double)i,
                                 eps2, plain);
            bad_sums += memcmp(plain, out, 7 * sizeof *out) != 0;
        } else {
            gp_direct_point(&src, X[i], Y[i], Z[i], (double)i, eps2, plain);
            bad_sums += memcmp(plain, out, 4 * sizeof *out) != 0;
        }
        bad_step += memcmp(&out[GP_EX_STEP], &best, sizeof best) != 0;
        bad_nn += out[GP_EX_NN_ID] != bestid || memcmp(&out[GP_EX_NN_D2], &bestd, sizeof bestd);
        /* seeded with the answer, or with less: the same minimum, or the seed */
        out[GP_EX_STEP] = best;
        gp_direct_point_ex(&src, &vel, &t, eps2, 0, 1, out, NULL);
        bad_seed += memcmp(&out[GP_EX_STEP], &best, sizeof best) != 0;
        out[GP_EX_STEP] = 0.5 * best;
        gp_direct_point_ex(&src, &vel, &t, eps2, 1, 1, out, NULL);
        bad_seed += out[GP_EX_STEP] != 0.5 * best;
    }
    ok(bad_step == 0, "%s: pair_step is the brute-force minimum of gp_pair_step, bit for bit "
       "(%zu differ)", what, bad_step);
    ok(bad_nn == 0, "%s: nearest source and its d2 equal the brute force (%zu differ)", what,
       bad_nn);
    ok(bad_even == 0, "%s: the even step is the brute-force minimum of gp_pair_step_even, bit "
       "for bit (%zu differ)", what, bad_even);
    ok(bad_seed == 0, "%s: seeded with the minimum: the same bits; with half of it: the seed",
       what);
    ok(bad_sums == 0, "%s: acc, pot and jerk are gp_direct_point(_jerk)'s bits (%zu differ)",
       what, bad_sums);
    if (n >= 500)
        ok(evals * 10 < pairs, "%s: %zu of %zu pairs evaluated exactly (%.1f per target)",
           what, evals, pairs, (double)evals / (double)n);
}

/* gp_direct_list_candidates against the brute-force lists of the same
 * cluster: by radius rad (< 0: none), by nb_step, by nb_step_even. */
static void test_lists(const char *what, size_t n, int moving, double eps2, double rad,
                       double nb_step, double nb_step_even)
{
    make_cluster(n, moving);
    static uint32_t q[NMAX];
    static unsigned char want[NMAX];
    size_t ns = gather_sources(n);
    gp_direct_sources src = { .n = ns, .x = sx, .y = sy, .z = sz, .m = sm, .id = sid };
    gp_direct_vel vel = { svx, svy, svz };
    const double G = 1.0;
    size_t missed = 0, disorder = 0, kept = 0, pairs = 0, unpruned_missing = 0;
    for (size_t i = 0; i < n; ++i) {
        size_t nw = 0;
        for (size_t j = 0; j < ns; ++j) {
            want[j] = 0;
            if (sid[j] == (double)i) continue;
            double dx = sx[j] - X[i], dy = sy[j] - Y[i], dz = sz[j] - Z[i];
            double dvx = svx[j] - VX[i], dvy = svy[j] - VY[i], dvz = svz[j] - VZ[i];
            double d2 = dx * dx + dy * dy + dz * dz, Gmu = G * (M[i] + sm[j]);
            want[j] = (rad >= 0 && d2 < rad * rad) ||
                      (nb_step > 0 && gp_pair_step(-dx, -dy, -dz, -dvx, -dvy, -dvz, eps2, Gmu) < nb_step) ||
                      (nb_step_even > 0 &&
                       gp_pair_step_even(-dx, -dy, -dz, -dvx, -dvy, -dvz, eps2, Gmu) < nb_step_even);
            nw += want[j];
        }
        gp_direct_list_target t = { .x = X[i], .y = Y[i], .z = Z[i], .vx = VX[i], .vy = VY[i],
                                    .vz = VZ[i], .self = (double)i, .m = M[i], .G = G,
                                    .rad2 = rad >= 0 ? rad * rad : -1.0, .nb_step = nb_step,
                                    .nb_step_even = nb_step_even, .prune = 1 };
        size_t nq = gp_direct_list_candidates(&src, &vel, &t, eps2, q);
        for (size_t c = 0; c < nq; ++c) {
            if ((c && q[c] <= q[c - 1]) || q[c] >= ns || sid[q[c]] == (double)i) ++disorder;
            else if (want[q[c]]) { want[q[c]] = 0; --nw; }
        }
        missed += nw;
        kept += nq;
        pairs += ns;
        /* without pruning every source but self is a candidate */
        t.prune = 0;
        size_t all = gp_direct_list_candidates(&src, &vel, &t, eps2, q);
        unpruned_missing += (nb_step > 0 || nb_step_even > 0) && all + (M[i] > 0) != ns;
    }
    ok(missed == 0 && disorder == 0, "%s: the candidates hold every listed pair, ascending, "
       "without self (%zu missed, %zu out of order)", what, missed, disorder);
    ok(unpruned_missing == 0, "%s: with prune = 0 every source but self is a candidate", what);
    if (n >= 500)
        ok(kept * 10 < pairs, "%s: %zu of %zu pairs left for the exact test", what, kept, pairs);
}

/* Coincident (r2 = 0 at eps 0) and nearly coincident sources are always
 * candidates when lists by step are asked: the bound cannot be trusted
 * there, and the exact test decides. The masses are the lightest the
 * bound trusts (G m >= 1e-40), where a wrong 1/r for a tiny r2 would let
 * the bound pass a pair whose free-fall time is 1e-15. */
static void test_lists_coincident(void)
{
    double x[9] = {0}, y[9] = {0}, z[9] = {0}, m[9], id[9], vx[9] = {0}, vy[9] = {0}, vz[9] = {0};
    for (int j = 0; j < 9; ++j) { m[j] = 5e-40; id[j] = j + 1; x[j] = 100.0 + j; }
    x[0] = 0.0;             /* at the target */
    x[1] = 1e-23;           /* r2 = 1e-46, below the bound's range */
    x[2] = 1e-19;           /* r2 = 1e-38, inside it, close: listed */
    gp_direct_sources src = { .n = 9, .x = x, .y = y, .z = z, .m = m, .id = id };
    gp_direct_vel vel = { vx, vy, vz };
    gp_direct_list_target t = { .self = -1, .m = 5e-40, .G = 1.0, .rad2 = -1.0,
                                .nb_step_even = 1e-4, .prune = 1 };
    uint32_t q[9];
    size_t nq = gp_direct_list_candidates(&src, &vel, &t, 0.0, q);
    ok(nq == 3 && q[0] == 0 && q[1] == 1 && q[2] == 2,
       "coincident and nearly coincident sources are candidates, the far ones not (%zu)", nq);
}

int main(void)
{
    plan(4 + 3 * 6 + 5 + 3 * 3 + 2 * 2 + 1);
    test_bound();
    test_kernel("1003 moving, eps 0.01", 1003, 1, 1e-4);
    test_kernel("1003 at rest, eps 0.01", 1003, 0, 1e-4);
    test_kernel("517 moving, eps 0", 517, 1, 0.0);
    test_kernel("8 moving, eps 0.01", 8, 1, 1e-4);
    test_lists("lists by the even step, 1003 moving, eps 0.01", 1003, 1, 1e-4, -1, 0, 0.05);
    test_lists("lists by step, 517 moving, eps 0", 517, 1, 0.0, -1, 0.02, 0);
    test_lists("lists by radius and both steps, 1003 at rest", 1003, 0, 1e-4, 0.05, 0.02, 0.05);
    test_lists("lists by radius, 8 moving", 8, 1, 1e-4, 0.3, 0, 0);
    test_lists("lists by step, 9 moving", 9, 1, 0.0, -1, 0.5, 0.5);
    test_lists_coincident();
    return done_testing();
}
