/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi12.c — holds a plugin to the ABI 1.2 contract (the end of
 * gravplug.h, with its gp_outputs): set_state_jerk, get_velocities,
 * compute_forces_ex and get_neighbours. Part of the conformance program
 * (conformance.c).
 *
 * What "equal" means here:
 *   - predict with jerks, get_velocities: bit for bit the host's
 *     evaluation of the ABI's expressions, for every plugin;
 *   - acc and pot of compute_forces_ex: bit for bit compute_forces';
 *   - jerk: against a naive sum over the sources (this file) at the
 *     positions and velocities the plugin reports (exact plugins: relative
 *     1e-12 per particle; others: the class tolerance, or
 *     GP_ERR_UNSUPPORTED with a sentence without GP_CAP_JERK), and against
 *     a central finite difference of acc along the predicted trajectory;
 *     bit-identical run after run and with 1, 2 and 3 OpenMP threads;
 *   - nn_index, nn_dist2, the neighbour lists: exactly the brute force
 *     here, ties included (lattice positions, equal distances: the lower
 *     index), on every plugin;
 *   - pair_step: a transcription of Huayno's timestep_ij (eta = 1, dir =
 *     +1) minimised over the sources: the same bits on exact plugins,
 *     cpu-tree and cuda-tree (a pruned but exact search), never above it
 *     on others (with the distribution of plugin/exact);
 *   - every output over the current sources (massive members of the
 *     source subset) and in active-list order.
 * A plugin that speaks ABI 1.0 or 1.1 only gets one skip line with the
 * reason.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#define TAP_SHARED_STATE
#include "tap.h"
#include "testlib.h"
#include "conformance_checks.h"
#include "conformance_abi12.h"

static const double EPS = 0.01;
static const double JERK_REL = 1e-12;   /* exact plugins, per particle */

static gp_solver *solver_with_eps(void)
{
    gp_solver *s = make_solver();
    if (has_param("eps")) api->set_param(s, "eps", "0.01");
    return s;
}

static double eps2_used(void) { return has_param("eps") ? EPS * EPS : 0.0; }

static void shuffle(uint32_t *idx, size_t m, uint64_t seed)
{
    tl_rng r = {seed};
    for (size_t k = m; k > 1; --k) {
        size_t j = tl_next(&r) % k;
        uint32_t t = idx[k - 1]; idx[k - 1] = idx[j]; idx[j] = t;
    }
}

static gp_outputs outputs(double *acc)
{
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = acc;
    return o;
}

/* ---- the host's expressions (C11: no contraction across statements) ---- */

static void host_predict3(const double *x0, const double *v, const double *a, const double *j,
                          double dt, double *x, double *vel)
{
    double h = 0.5 * dt * dt, c = (dt * dt * dt) / 6;
    for (int d = 0; d < 3; ++d) {
        double xv = x0[d] + dt * v[d];
        double xa = xv + h * a[d];
        x[d] = xa + c * j[d];
        double va = v[d] + dt * a[d];
        vel[d] = va + h * j[d];
    }
}

static void host_predict2(const double *x0, const double *v, const double *a, double dt,
                          double *x, double *vel)
{
    double h = 0.5 * dt * dt;
    for (int d = 0; d < 3; ++d) {
        double xv = x0[d] + dt * v[d];
        x[d] = xv + h * a[d];
        vel[d] = v[d] + dt * a[d];
    }
}

/* Whether the na particles idx[] (state p, v, a at t[]) sit at x (and,
 * vel not NULL, move with vel) as 1.1's second-order prediction to tp puts
 * them, bit for bit. */
static int at_second_order(const double *x, const double *vel, size_t na, const uint32_t *idx,
                           const double *p, const double *v, const double *a, const double *t,
                           double tp)
{
    int same = 1;
    for (size_t k = 0; k < na; ++k) {
        double ex[3], ev[3];
        host_predict2(&p[3 * k], &v[3 * k], &a[3 * k], tp - t[k], ex, ev);
        same &= same_bits(&x[3 * idx[k]], ex, 3) && (!vel || same_bits(&vel[3 * idx[k]], ev, 3));
    }
    return same;
}

/* Huayno's timestep_ij (Pelupessy et al. 2012; AMUSE's huayno evolve.c),
 * transcribed with dt_param = 1, dir = +1 and mu = G (m_i + m_j): the
 * reference for pair_step and the lists by step (conformance_abi13.c's too). */
double conf_huayno_tau(const double *xi, const double *vi, double mi, const double *xj,
                         const double *vj, double mj, double G, double eps2)
{
    const double dt_param = 1.0, dir = 1.0;
    double timestep = HUGE_VAL;
    double dx[3], dv[3], dr2, dr, dr3, dv2, mu, vdotdr2, tau, dtau;
    dx[0] = xi[0] - xj[0];
    dx[1] = xi[1] - xj[1];
    dx[2] = xi[2] - xj[2];
    dr2 = dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2] + eps2;
    mu = G * (mi + mj);
    if (dr2 > 0 && mu > 0) {
        dr = sqrt(dr2);
        dr3 = dr * dr2;
        dv[0] = vi[0] - vj[0];
        dv[1] = vi[1] - vj[1];
        dv[2] = vi[2] - vj[2];
        vdotdr2 = (dv[0] * dx[0] + dv[1] * dx[1] + dv[2] * dx[2]) / dr2;
        dv2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
        tau = dt_param / M_SQRT2 * sqrt(dr3 / mu);
        dtau = 3 / 2. * dir * tau * vdotdr2;
        if (dtau > 1.) dtau = 1.;
        tau /= (1 - dtau / 2);
        if (tau < timestep) timestep = tau;
        if (dv2 > 0) {
            tau = dt_param * dr / sqrt(dv2);
            dtau = dir * tau * vdotdr2 * (1 + mu / (dv2 * dr));
            if (dtau > 1.) dtau = 1.;
            tau /= (1 - dtau / 2);
            if (tau < timestep) timestep = tau;
        }
    }
    return timestep;
}

/* ---- the brute-force reference ------------------------------------------ */

typedef struct ref12 {
    double *jerk, *nn_dist2, *step;
    uint32_t *nn;
    uint64_t *offset;          /* m + 1 */
    uint32_t *list;
} ref12;

static void ref_free(ref12 *r)
{
    free(r->jerk); free(r->nn_dist2); free(r->step); free(r->nn); free(r->offset); free(r->list);
    memset(r, 0, sizeof *r);
}

/* Every 1.2 output for targets act[0..m) (NULL: 0..m) from the massive
 * particles with in_src[j] (NULL: all), by brute force in index order. */
static ref12 reference(size_t n, const double *pos, const double *vel, const double *mass,
                       const uint8_t *in_src, size_t m, const uint32_t *act,
                       const double *radius, double nb_step)
{
    ref12 r;
    const double G = 1.0, eps2 = eps2_used();
    r.jerk = calloc(3 * m + 1, sizeof *r.jerk);
    r.nn_dist2 = calloc(m + 1, sizeof *r.nn_dist2);
    r.step = calloc(m + 1, sizeof *r.step);
    r.nn = calloc(m + 1, sizeof *r.nn);
    r.offset = calloc(m + 1, sizeof *r.offset);
    size_t cap = 1024, total = 0;
    r.list = malloc(cap * sizeof *r.list);
    for (size_t k = 0; k < m; ++k) {
        size_t i = act ? act[k] : k;
        const double *xi = &pos[3 * i], *vi = &vel[3 * i];
        long double jx = 0, jy = 0, jz = 0;
        double best = HUGE_VAL, step = HUGE_VAL;
        uint32_t nn = UINT32_MAX;
        for (size_t j = 0; j < n; ++j) {
            if (j == i || !(mass[j] > 0) || (in_src && !in_src[j])) continue;
            const double *xj = &pos[3 * j], *vj = &vel[3 * j];
            double rx = xj[0] - xi[0], ry = xj[1] - xi[1], rz = xj[2] - xi[2];
            double d2 = rx * rx + ry * ry + rz * rz;
            if (d2 < best) { best = d2; nn = (uint32_t)j; }
            double tau = conf_huayno_tau(xi, vi, mass[i], xj, vj, mass[j], G, eps2);
            if (tau < step) step = tau;
            int listed = (radius && d2 < radius[k] * radius[k]) || (nb_step > 0 && tau < nb_step);
            if (listed) {
                if (total == cap) r.list = realloc(r.list, (cap *= 2) * sizeof *r.list);
                r.list[total++] = (uint32_t)j;
            }
            double r2 = d2 + eps2;
            if (!(r2 > 0)) continue;
            double vx = vj[0] - vi[0], vy = vj[1] - vi[1], vz = vj[2] - vi[2];
            long double rinv = 1.0L / sqrtl((long double)r2);
            long double rinv3 = rinv * rinv * rinv;
            long double rv = (long double)rx * vx + (long double)ry * vy + (long double)rz * vz;
            long double c = 3.0L * rv * rinv * rinv;
            jx += mass[j] * rinv3 * (vx - c * rx);
            jy += mass[j] * rinv3 * (vy - c * ry);
            jz += mass[j] * rinv3 * (vz - c * rz);
        }
        r.jerk[3 * k] = (double)(G * jx);
        r.jerk[3 * k + 1] = (double)(G * jy);
        r.jerk[3 * k + 2] = (double)(G * jz);
        r.nn[k] = nn;
        r.nn_dist2[k] = nn == UINT32_MAX ? HUGE_VAL : best;
        r.step[k] = step;
        r.offset[k + 1] = total;
    }
    return r;
}

/* What a plugin gave: every output of one compute_forces_ex. */
typedef struct got12 {
    double *acc, *pot, *jerk, *nn_dist2, *step;
    uint32_t *nn;
    uint64_t *offset;
    uint32_t *list;
    size_t total;
    gp_status st;
    int jerk_ok;          /* the jerk was computed (else UNSUPPORTED) */
} got12;

static void got_free(got12 *g)
{
    free(g->acc); free(g->pot); free(g->jerk); free(g->nn_dist2); free(g->step); free(g->nn);
    free(g->offset); free(g->list);
    memset(g, 0, sizeof *g);
}

static got12 run_ex(gp_solver *s, size_t m, const double *radius, double nb_step)
{
    got12 g;
    memset(&g, 0, sizeof g);
    g.acc = malloc((3 * m + 1) * sizeof *g.acc);
    g.pot = malloc((m + 1) * sizeof *g.pot);
    g.jerk = malloc((3 * m + 1) * sizeof *g.jerk);
    g.nn_dist2 = malloc((m + 1) * sizeof *g.nn_dist2);
    g.step = malloc((m + 1) * sizeof *g.step);
    g.nn = malloc((m + 1) * sizeof *g.nn);
    g.offset = malloc((m + 1) * sizeof *g.offset);
    gp_outputs o = outputs(g.acc);
    o.pot = g.pot;
    o.jerk = g.jerk;
    o.nn_index = g.nn;
    o.nn_dist2 = g.nn_dist2;
    o.pair_step = g.step;
    o.nb_radius = radius;
    o.nb_step = nb_step;
    g.st = api->compute_forces_ex(s, &o);
    g.jerk_ok = g.st == GP_OK;
    if (g.st == GP_ERR_UNSUPPORTED && !has_cap(GP_CAP_JERK)) {
        /* a plugin without jerk: everything else, without it */
        o.jerk = NULL;
        g.st = api->compute_forces_ex(s, &o);
    }
    if (g.st == GP_OK && (radius || nb_step > 0)) {
        size_t need = 0;
        gp_status st = api->get_neighbours(s, 0, g.offset, NULL, &need);
        if (st == GP_OK || st == GP_ERR_INVALID_ARGUMENT) {
            g.total = need;
            g.list = malloc((need + 1) * sizeof *g.list);
            g.st = api->get_neighbours(s, need, g.offset, g.list, &need);
        } else {
            g.st = st;
        }
    }
    return g;
}

static int same_u32(const uint32_t *a, const uint32_t *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

static int same_got(const got12 *a, const got12 *b, size_t m)
{
    return same_bits(a->acc, b->acc, 3 * m) && same_bits(a->pot, b->pot, m) &&
           (!a->jerk_ok || same_bits(a->jerk, b->jerk, 3 * m)) && same_u32(a->nn, b->nn, m) &&
           same_bits(a->nn_dist2, b->nn_dist2, m) && same_bits(a->step, b->step, m) &&
           a->total == b->total && (!a->list || same_u32(a->list, b->list, a->total));
}

/* Judges one compute_forces_ex of s (positions and velocities as the
 * plugin reports them) against the brute force over the sources in_src. */
static void judge(gp_solver *s, size_t n, const double *mass, size_t m, const uint32_t *act,
                  const uint8_t *in_src, const double *radius, double nb_step, const char *what)
{
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    int fine = api->get_positions(s, n, NULL, pos) == GP_OK &&
               api->get_velocities(s, n, NULL, vel) == GP_OK;
    got12 g = run_ex(s, m, radius, nb_step);
    ok(fine && g.st == GP_OK, "%s: compute_forces_ex with every output and get_neighbours", what);
    if (g.st != GP_OK) diag("  %s: %s", gp_status_name(g.st), api->last_error(s));
    if (!fine || g.st != GP_OK) {
        got_free(&g); free(pos); free(vel);
        return;
    }
    ref12 r = reference(n, pos, vel, mass, in_src, m, act, radius, nb_step);

    /* acc and pot: compute_forces' bits */
    double *a0 = malloc((3 * m + 1) * sizeof *a0), *p0 = malloc((m + 1) * sizeof *p0);
    ok(api->compute_forces(s, a0, p0) == GP_OK && same_bits(a0, g.acc, 3 * m) &&
       same_bits(p0, g.pot, m), "%s: acc and pot are compute_forces' bits", what);

    if (g.jerk_ok) {
        tl_errstat e = tl_relerr(m, 3, g.jerk, r.jerk);
        if (is_exact && exact_double)
            ok(e.max <= JERK_REL, "%s: jerk against the naive sum, every particle within %g "
               "(max %.3g)", what, JERK_REL, e.max);
        else
            ok(e.median <= tol_median && e.p99 <= tol_high, "%s: jerk against the naive sum "
               "within the class tolerance", what);
        diag("  jerk relative error: median %.3g, 99%% %.3g, max %.3g", e.median, e.p99, e.max);
    } else {
        ok(!has_cap(GP_CAP_JERK) && api->last_error(s)[0],
           "%s: no jerk (GP_ERR_UNSUPPORTED with a sentence, no GP_CAP_JERK)", what);
    }

    size_t bad_nn = (size_t)-1;
    for (size_t k = 0; k < m && bad_nn == (size_t)-1; ++k)
        if (g.nn[k] != r.nn[k] || memcmp(&g.nn_dist2[k], &r.nn_dist2[k], sizeof(double)))
            bad_nn = k;
    ok(bad_nn == (size_t)-1, "%s: nn_index and nn_dist2 equal the brute force (ties: the lower "
       "index)", what);
    if (bad_nn != (size_t)-1)
        diag("  active %zu: got %u at %.17g, brute force %u at %.17g", bad_nn,
             (unsigned)g.nn[bad_nn], g.nn_dist2[bad_nn], (unsigned)r.nn[bad_nn],
             r.nn_dist2[bad_nn]);

    /* cpu-tree's pruned search (cuda-tree runs the same code on a host
     * tree) evaluates every pair it cannot rule out with the shared
     * expression, so its minimum is exact too; other tree plugins may
     * still give a lower bound */
    if (is_exact || !strcmp(api->name, "cpu-tree") || !strcmp(api->name, "cuda-tree")) {
        size_t bad = (size_t)-1;
        for (size_t k = 0; k < m && bad == (size_t)-1; ++k)
            if (memcmp(&g.step[k], &r.step[k], sizeof(double))) bad = k;
        ok(bad == (size_t)-1, "%s: pair_step is Huayno's timestep_ij minimised over the "
           "sources, bit for bit", what);
        if (bad != (size_t)-1)
            diag("  active %zu: got %.17g, Huayno %.17g", bad, g.step[bad], r.step[bad]);
    } else {
        size_t above = 0;
        double *q = malloc((m + 1) * sizeof *q);
        for (size_t k = 0; k < m; ++k) {
            above += g.step[k] > r.step[k];
            q[k] = isinf(r.step[k]) ? 1.0 : g.step[k] / r.step[k];
        }
        qsort(q, m, sizeof *q, tl_cmp_double);
        ok(above == 0, "%s: pair_step never above the exact minimum (%zu above)", what, above);
        if (m) diag("  pair_step plugin/exact: min %.3g, median %.3g, max %.3g", q[0], q[m / 2],
                    q[m - 1]);
        free(q);
    }

    if (radius || nb_step > 0) {
        int same = g.total == (size_t)r.offset[m] &&
                   memcmp(g.offset, r.offset, (m + 1) * sizeof *g.offset) == 0 &&
                   same_u32(g.list, r.list, g.total);
        ok(same, "%s: neighbour lists (%s) equal the brute force, ascending (%zu entries)", what,
           radius && nb_step > 0 ? "radius or step: the union" : radius ? "radius, strictly inside"
                                                                 : "step", g.total);
        if (!same)
            diag("  got %zu entries, brute force %llu", g.total,
                 (unsigned long long)r.offset[m]);
    }

    /* run after run, and with 1, 2 and 3 OpenMP threads (quick mode, under
     * valgrind, where threads run one at a time: once more, on 2) */
    int again = 1;
    static const int counts[] = {1, 2, 3};
    const int reruns = quick ? 1 : 4;
    for (int t = 0; t < reruns; ++t) {
        if (quick) omp_set_num_threads(2);
        else if (t) omp_set_num_threads(counts[t - 1]);
        got12 h = run_ex(s, m, radius, nb_step);
        if (h.st != GP_OK || !same_got(&g, &h, m)) {
            again = 0;
            diag("  differs (%s) on run %d", gp_status_name(h.st), t);
        }
        got_free(&h);
    }
    omp_set_num_threads(omp_get_num_procs());
    ok(again, "%s: every output bit-identical run after run and with %s threads", what,
       quick ? "2" : "1, 2 and 3");

    free(a0); free(p0);
    ref_free(&r);
    got_free(&g);
    free(pos); free(vel);
}

/* ---- kinematics ---------------------------------------------------------- */

typedef struct kin {
    double *v, *a, *j, *t;
} kin;

static kin make_kin(size_t n, uint64_t seed)
{
    kin k;
    k.v = malloc(3 * n * sizeof *k.v);
    k.a = malloc(3 * n * sizeof *k.a);
    k.j = malloc(3 * n * sizeof *k.j);
    k.t = malloc(n * sizeof *k.t);
    tl_rng r = {seed};
    for (size_t i = 0; i < 3 * n; ++i) {
        k.v[i] = 0.6 * tl_uniform(&r) - 0.3;
        k.a[i] = 0.4 * tl_uniform(&r) - 0.2;
        k.j[i] = 0.2 * tl_uniform(&r) - 0.1;
    }
    for (size_t i = 0; i < n; ++i) k.t[i] = 0.25 * tl_uniform(&r);
    return k;
}

static void kin_free(kin *k)
{
    free(k->v); free(k->a); free(k->j); free(k->t);
}

/* ---- rejections, and nothing changed by one ----------------------------- */

static void test_rejections12(size_t n, const double *pos, const double *mass, const kin *K)
{
    gp_solver *s = solver_with_eps();
    double buf[12] = {0}, tt[4] = {0}, acc1[3 * 4];
    uint32_t one[1] = {0};
    gp_outputs o = outputs(acc1);
    rejects(api->set_state_jerk(s, 1, one, buf, buf, buf, buf, tt), GP_ERR_BAD_STATE, s,
            "set_state_jerk before set_particles");
    rejects(api->get_velocities(s, 1, one, buf), GP_ERR_BAD_STATE, s,
            "get_velocities before set_particles");
    rejects(api->compute_forces_ex(s, &o), GP_ERR_BAD_STATE, s,
            "compute_forces_ex before set_particles");
    uint64_t off[8];
    size_t need = 12345;
    rejects(api->get_neighbours(s, 8, off, one, &need), GP_ERR_BAD_STATE, s,
            "get_neighbours before set_particles");

    double *acc = malloc(3 * n * sizeof *acc), *vel = malloc(3 * n * sizeof *vel);
    double *x = malloc(3 * n * sizeof *x), *x1 = malloc(3 * n * sizeof *x1);
    double *v1 = malloc(3 * n * sizeof *v1);
    ok(api->set_particles(s, n, pos, mass) == GP_OK, "set_particles(%zu)", n);
    rejects(api->get_neighbours(s, 8, off, one, &need), GP_ERR_BAD_STATE, s,
            "get_neighbours before any compute_forces_ex asked for lists");
    o = outputs(acc);
    rejects(api->compute_forces_ex(s, NULL), GP_ERR_INVALID_ARGUMENT, s, "compute_forces_ex(NULL)");
    o.struct_size = offsetof(gp_outputs, nb_step);
    rejects(api->compute_forces_ex(s, &o), GP_ERR_ABI_MISMATCH, s,
            "compute_forces_ex with a struct_size short of gp_outputs");
    o.struct_size = sizeof o;
    o.acc = NULL;
    o.pot = vel;
    rejects(api->compute_forces_ex(s, &o), GP_ERR_INVALID_ARGUMENT, s,
            "compute_forces_ex with acc = NULL (and pot set)");
    o = outputs(acc);
    static const double bad_steps[] = {-1.0, NAN, INFINITY};
    static const char *const bad_step_names[] = {"-1", "NaN", "+inf"};
    for (int b = 0; b < 3; ++b) {
        o.nb_step = bad_steps[b];
        char what[80];
        snprintf(what, sizeof what, "compute_forces_ex with nb_step = %s", bad_step_names[b]);
        rejects(api->compute_forces_ex(s, &o), GP_ERR_INVALID_ARGUMENT, s, what);
    }
    o.nb_step = 0;
    double *rad = malloc(n * sizeof *rad);
    for (size_t i = 0; i < n; ++i) rad[i] = 0.1;
    o.nb_radius = rad;
    static const double bad_radii[] = {-0.5, NAN, INFINITY};
    static const char *const bad_radius_names[] = {"-0.5", "NaN", "+inf"};
    for (int b = 0; b < 3; ++b) {
        rad[n - 1] = bad_radii[b];   /* the last one: the check runs over all */
        char what[80];
        snprintf(what, sizeof what, "compute_forces_ex with the last nb_radius = %s",
                 bad_radius_names[b]);
        rejects(api->compute_forces_ex(s, &o), GP_ERR_INVALID_ARGUMENT, s, what);
    }
    rejects(api->get_neighbours(s, 8, off, one, &need), GP_ERR_BAD_STATE, s,
            "get_neighbours after refused compute_forces_ex calls only");

    /* Lists made; then a refused call must leave them. */
    rad[n - 1] = 0.1;
    ok(api->compute_forces_ex(s, &o) == GP_OK, "compute_forces_ex with nb_radius 0.1 for all");
    size_t total = 0;
    gp_status st = api->get_neighbours(s, 0, NULL, NULL, &total);
    rejects(st, GP_ERR_INVALID_ARGUMENT, s, "get_neighbours with offset = NULL");
    uint64_t *offs = malloc((n + 1) * sizeof *offs), *offs2 = malloc((n + 1) * sizeof *offs2);
    need = 0;
    memset(offs, 0xa5, (n + 1) * sizeof *offs);
    uint32_t poison = 0xdeadbeefu;
    if (total > 0) {
        st = api->get_neighbours(s, total - 1, offs, &poison, &need);
        int untouched = poison == 0xdeadbeefu;
        for (size_t k = 0; k <= n; ++k) untouched &= offs[k] == UINT64_C(0xa5a5a5a5a5a5a5a5);
        rejects(st, GP_ERR_INVALID_ARGUMENT, s, "get_neighbours with cap one short of the total");
        ok(need == total && untouched, "a cap too small writes *needed (%zu) and nothing else", need);
    } else {
        skip(2, "no neighbours within 0.1: cap too small cannot be tried");
    }
    uint32_t *list = malloc((total + 1) * sizeof *list), *list2 = malloc((total + 1) * sizeof *list2);
    ok(api->get_neighbours(s, total, offs, list, &need) == GP_OK && need == total &&
       offs[0] == 0 && offs[n] == total, "get_neighbours with cap = *needed (%zu)", total);
    ok(api->get_neighbours(s, total, offs2, list2, NULL) == GP_OK,
       "get_neighbours with needed = NULL");
    rad[3] = NAN;
    rejects(api->compute_forces_ex(s, &o), GP_ERR_INVALID_ARGUMENT, s,
            "compute_forces_ex with a NaN radius, after lists were made");
    rad[3] = 0.1;
    memset(offs2, 0, (n + 1) * sizeof *offs2);
    ok(api->get_neighbours(s, total, offs2, list2, &need) == GP_OK &&
       memcmp(offs, offs2, (n + 1) * sizeof *offs) == 0 && same_u32(list, list2, total),
       "a refused compute_forces_ex leaves the last lists as they were");
    o.nb_radius = NULL;
    ok(api->compute_forces_ex(s, &o) == GP_OK, "compute_forces_ex asking for no lists");
    rejects(api->get_neighbours(s, total, offs2, list2, &need), GP_ERR_BAD_STATE, s,
            "get_neighbours after a compute_forces_ex that asked for no lists");

    /* set_state_jerk and get_velocities, spoiled one way at a time. */
    uint32_t idx[4] = {1, 5, 9, 13};
    double p[12], v[12], a[12], j[12], t[4] = {0.1, 0.2, 0.3, 0.4};
    for (int k = 0; k < 12; ++k) { p[k] = pos[3 + k]; v[k] = 0.1 * k; a[k] = -0.05 * k; j[k] = 0.01 * k; }
    rejects(api->set_state_jerk(s, 4, idx, NULL, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with pos = NULL");
    rejects(api->set_state_jerk(s, 4, idx, p, NULL, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with vel = NULL");
    rejects(api->set_state_jerk(s, 4, idx, p, v, NULL, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with acc = NULL");
    rejects(api->set_state_jerk(s, 4, idx, p, v, a, NULL, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with jerk = NULL");
    rejects(api->set_state_jerk(s, 4, idx, p, v, a, j, NULL), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with t = NULL");
    uint32_t badi[4] = {1, 5, (uint32_t)n, 13}, rep[4] = {1, 5, 1, 13};
    rejects(api->set_state_jerk(s, 4, badi, p, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with an index >= n");
    rejects(api->set_state_jerk(s, 4, rep, p, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with a repeated index");
    rejects(api->get_velocities(s, 4, idx, NULL), GP_ERR_INVALID_ARGUMENT, s, "get_velocities with vel = NULL");
    rejects(api->get_velocities(s, 4, badi, vel), GP_ERR_INVALID_ARGUMENT, s, "get_velocities with an index >= n");
    rejects(api->get_velocities(s, 3, NULL, vel), GP_ERR_INVALID_ARGUMENT, s, "get_velocities with n_sub != n and index = NULL");

    /* No partial update: a state with jerks for all, predicted; then a
     * refused set_state_jerk (the last jerk NaN) changes nothing. */
    ok(api->set_state_jerk(s, n, NULL, pos, K->v, K->a, K->j, K->t) == GP_OK &&
       api->predict(s, 0.3) == GP_OK && api->get_positions(s, n, NULL, x) == GP_OK &&
       api->get_velocities(s, n, NULL, vel) == GP_OK, "set_state_jerk of all, predict(0.3)");
    j[11] = NAN;
    rejects(api->set_state_jerk(s, 4, idx, p, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with a NaN jerk (the last)");
    j[11] = INFINITY;
    rejects(api->set_state_jerk(s, 4, idx, p, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with an infinite jerk");
    v[11] = NAN;
    j[11] = 0.11;
    rejects(api->set_state_jerk(s, 4, idx, p, v, a, j, t), GP_ERR_INVALID_ARGUMENT, s, "set_state_jerk with a NaN velocity");
    ok(api->get_positions(s, n, NULL, x1) == GP_OK && api->get_velocities(s, n, NULL, v1) == GP_OK &&
       same_bits(x, x1, 3 * n) && same_bits(vel, v1, 3 * n),
       "refused set_state_jerk calls change no position and no velocity");
    ok(api->predict(s, 0.3) == GP_OK && api->get_positions(s, n, NULL, x1) == GP_OK &&
       same_bits(x, x1, 3 * n), "... nor the held state (predict again: the same bits)");

    api->finalize(s);
    free(acc); free(vel); free(x); free(x1); free(v1); free(rad); free(offs); free(offs2);
    free(list); free(list2);
}

/* ---- third-order predict and get_velocities ---------------------------- */

static void test_predict3(size_t n, const double *pos, const double *mass, const kin *K)
{
    gp_solver *s = solver_with_eps();
    /* A (shuffled) third with jerks, a third with set_state, a third with none. */
    uint32_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; ++i) idx[i] = (uint32_t)i;
    shuffle(idx, n, 1203);
    size_t na = n / 3, nb = n / 3;
    double *p = malloc(3 * n * sizeof *p), *v = malloc(3 * n * sizeof *v);
    double *a = malloc(3 * n * sizeof *a), *j = malloc(3 * n * sizeof *j);
    double *t = malloc(n * sizeof *t);
    for (size_t k = 0; k < n; ++k) {
        size_t i = idx[k];
        memcpy(&p[3 * k], &pos[3 * i], 3 * sizeof *p);
        memcpy(&v[3 * k], &K->v[3 * i], 3 * sizeof *v);
        memcpy(&a[3 * k], &K->a[3 * i], 3 * sizeof *a);
        memcpy(&j[3 * k], &K->j[3 * i], 3 * sizeof *j);
        t[k] = K->t[i];
    }
    double *x = malloc(3 * n * sizeof *x), *vel = malloc(3 * n * sizeof *vel);
    double *hx = malloc(3 * n * sizeof *hx), *hv = malloc(3 * n * sizeof *hv);
    int fine = api->set_particles(s, n, pos, mass) == GP_OK &&
               api->set_state_jerk(s, na, idx, p, v, a, j, t) == GP_OK &&
               api->set_state(s, nb, idx + na, p + 3 * na, v + 3 * na, a + 3 * na, t + na) == GP_OK;
    ok(fine, "set_state_jerk of %zu particles, set_state of %zu, none for %zu", na, nb, n - na - nb);
    /* Before predict: stated velocities; none: 0. */
    fine &= api->get_velocities(s, n, NULL, vel) == GP_OK;
    int at_own = 1;
    for (size_t k = 0; k < n; ++k) {
        size_t i = idx[k];
        double want[3] = {0, 0, 0};
        if (k < na + nb) memcpy(want, &v[3 * k], sizeof want);
        at_own &= same_bits(&vel[3 * i], want, 3);
    }
    ok(fine && at_own, "before predict: get_velocities is the stated vel (0 for a particle "
       "without state)");
    const double times[] = {0.7, -0.4, 0.125};
    for (int r = 0; r < 3; ++r) {
        double tp = times[r];
        fine = api->predict(s, tp) == GP_OK && api->get_positions(s, n, NULL, x) == GP_OK &&
               api->get_velocities(s, n, NULL, vel) == GP_OK;
        for (size_t k = 0; k < n; ++k) {
            size_t i = idx[k];
            if (k < na)
                host_predict3(&p[3 * k], &v[3 * k], &a[3 * k], &j[3 * k], tp - t[k], &hx[3 * i], &hv[3 * i]);
            else if (k < na + nb)
                host_predict2(&p[3 * k], &v[3 * k], &a[3 * k], tp - t[k], &hx[3 * i], &hv[3 * i]);
            else {
                memcpy(&hx[3 * i], &pos[3 * i], 3 * sizeof *hx);
                hv[3 * i] = hv[3 * i + 1] = hv[3 * i + 2] = 0.0;
            }
        }
        ok(fine && same_bits(x, hx, 3 * n), "predict(%g): positions are the host's expressions bit "
           "for bit (third order with a jerk, 1.1's without, unmoved without state)", tp);
        ok(fine && same_bits(vel, hv, 3 * n), "predict(%g): get_velocities is v + dt*a + "
           "(0.5*dt*dt)*j, v + dt*a or 0, bit for bit", tp);
    }
    /* A subset, in a shuffled order. */
    uint32_t sub[5] = {idx[n - 1], idx[0], idx[na], idx[na + 1], idx[2]};
    double vs[15];
    fine = api->get_velocities(s, 5, sub, vs) == GP_OK;
    int subs = 1;
    for (int k = 0; k < 5; ++k) subs &= same_bits(&vs[3 * k], &hv[3 * sub[k]], 3);
    ok(fine && subs, "get_velocities of a shuffled subset of 5: the same bits, in its order");
    /* set_state over a particle with a jerk: back to 1.1's expressions. */
    fine = api->set_state(s, na, idx, p, v, a, t) == GP_OK && api->predict(s, 0.7) == GP_OK &&
           api->get_positions(s, n, NULL, x) == GP_OK && api->get_velocities(s, n, NULL, vel) == GP_OK;
    int second = at_second_order(x, vel, na, idx, p, v, a, t, 0.7);
    ok(fine && second, "set_state over particles that had a jerk: predicted with 1.1's "
       "expressions again (zero jerk), bit for bit");
    /* set_particles forgets the jerks. */
    fine = api->set_state_jerk(s, na, idx, p, v, a, j, t) == GP_OK &&
           api->set_particles(s, n, pos, mass) == GP_OK &&
           api->set_state(s, na, idx, p, v, a, t) == GP_OK && api->predict(s, 0.7) == GP_OK &&
           api->get_positions(s, n, NULL, x) == GP_OK;
    second = at_second_order(x, NULL, na, idx, p, v, a, t, 0.7);
    ok(fine && second, "set_particles forgets the jerks (set_state after it: second order)");
    /* update_positions clears the state, jerks included. */
    fine = api->set_state_jerk(s, na, idx, p, v, a, j, t) == GP_OK &&
           api->update_positions(s, pos) == GP_OK && api->predict(s, 0.9) == GP_OK &&
           api->get_positions(s, n, NULL, x) == GP_OK && api->get_velocities(s, n, NULL, vel) == GP_OK;
    int zero = 1;
    for (size_t i = 0; i < 3 * n; ++i) zero &= vel[i] == 0.0;
    ok(fine && same_bits(x, pos, 3 * n) && zero, "update_positions clears the state: predict "
       "moves nobody and every velocity is 0");
    fine = api->set_state(s, na, idx, p, v, a, t) == GP_OK && api->predict(s, 0.7) == GP_OK &&
           api->get_positions(s, n, NULL, x) == GP_OK;
    second = at_second_order(x, NULL, na, idx, p, v, a, t, 0.7);
    ok(fine && second, "... jerks included (set_state after it: second order)");
    api->finalize(s);
    free(idx); free(p); free(v); free(a); free(j); free(t); free(x); free(vel); free(hx); free(hv);
}

/* ---- the jerk against a finite difference of acc ----------------------- */

/* acc of all particles at time tp along the predicted trajectory: the
 * plugin's own when it is exact in double (own_acc), the naive sum at the
 * plugin's predicted positions otherwise (float accelerations differ by
 * their rounding across 2h, which swamps the difference). */
static int acc_at(gp_solver *s, size_t n, const double *mass, double tp, double *acc, double *x,
                  int own_acc)
{
    if (api->predict(s, tp) != GP_OK || api->get_positions(s, n, NULL, x) != GP_OK) return 0;
    if (own_acc) return api->compute_forces(s, acc, NULL) == GP_OK;
    tl_ref_forces(n, x, mass, 1.0, sqrt(eps2_used()), n, NULL, acc, NULL);
    return 1;
}

/* prec: a value for the plugin's "precision" parameter, or NULL for its
 * default. In double, an exact plugin's jerk is also held to the naive
 * sum within JERK_REL. */
static void test_jerk_fd(size_t n, const double *pos, const double *mass, const kin *K, const char *prec)
{
    gp_solver *s = solver_with_eps();
    int dbl = prec ? strcmp(prec, "double") == 0 : exact_double;
    if (prec && api->set_param(s, "precision", prec) != GP_OK) {
        ok(0, "set_param(precision, %s)", prec);
        api->finalize(s);
        return;
    }
    const char *with = prec ? prec : "its default";
    double *jk = malloc(3 * n * sizeof *jk), *acc = malloc(3 * n * sizeof *acc);
    double *ap = malloc(3 * n * sizeof *ap), *am = malloc(3 * n * sizeof *am);
    double *fd = malloc(3 * n * sizeof *fd), *x = malloc(3 * n * sizeof *x);
    double *v = malloc(3 * n * sizeof *v);
    const double t0 = 0.3, h = 1e-5;
    gp_outputs o = outputs(acc);
    o.jerk = jk;
    int fine = api->set_particles(s, n, pos, mass) == GP_OK &&
               api->set_state_jerk(s, n, NULL, pos, K->v, K->a, K->j, K->t) == GP_OK &&
               api->predict(s, t0) == GP_OK;
    gp_status st = fine ? api->compute_forces_ex(s, &o) : GP_ERR_BAD_STATE;
    if (st == GP_ERR_UNSUPPORTED && !has_cap(GP_CAP_JERK)) {
        skip(1, "no jerk from this plugin (GP_ERR_UNSUPPORTED, no GP_CAP_JERK)");
    } else {
        if (is_exact && dbl && st == GP_OK && api->get_positions(s, n, NULL, x) == GP_OK &&
            api->get_velocities(s, n, NULL, v) == GP_OK) {
            ref12 r = reference(n, x, v, mass, NULL, n, NULL, NULL, 0.0);
            tl_errstat e = tl_relerr(n, 3, jk, r.jerk);
            ok(e.max <= JERK_REL, "precision %s: jerk against the naive sum, every particle within %g "
               "(max %.3g)", with, JERK_REL, e.max);
            ref_free(&r);
        }
        int own = is_exact && dbl;
        fine &= st == GP_OK && acc_at(s, n, mass, t0 + h, ap, x, own) && acc_at(s, n, mass, t0 - h, am, x, own);
        for (size_t i = 0; i < 3 * n; ++i) fd[i] = (ap[i] - am[i]) / (2 * h);
        tl_errstat e = tl_relerr(n, 3, jk, fd);
        /* a tree's jerk is as far from the exact derivative as its acc is
         * from the exact force: the class tolerance (tests/plugin/cpu-tree/tree-jerk.c holds
         * it to the derivative of the tree's own acc) */
        double lim_median = is_exact ? 1e-6 : tol_median, lim_high = is_exact ? 1e-3 : tol_high;
        ok(fine && e.median <= lim_median && e.p99 <= lim_high,
           "precision %s: jerk at t = %g against (acc(t+h) - acc(t-h)) / 2h along the predicted "
           "trajectory (h = %g, %s acc): median rel %.3g, 99%% %.3g", with, t0, h,
           own ? "the plugin's" : "the naive sum's", e.median, e.p99);
    }
    api->finalize(s);
    free(jk); free(acc); free(ap); free(am); free(fd); free(x); free(v);
}

/* ---- ties: a lattice, every distance repeated ---------------------------- */

static void test_ties(void)
{
    const size_t side = 6, n = side * side * side;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *rad = malloc(n * sizeof *rad);
    for (size_t i = 0; i < n; ++i) {
        pos[3 * i] = (double)(i % side);
        pos[3 * i + 1] = (double)(i / side % side);
        pos[3 * i + 2] = (double)(i / (side * side));
        mass[i] = i % 7 == 3 ? 0.0 : 1.0 / (double)n;
        rad[i] = (double)(i % 3);     /* 0, 1, 2: exactly lattice distances */
    }
    gp_solver *s = solver_with_eps();
    ok(api->set_particles(s, n, pos, mass) == GP_OK, "a %zux%zux%zu lattice (every 7th massless)",
       side, side, side);
    judge(s, n, mass, n, NULL, NULL, rad, 0.0, "lattice, radii 0/1/2");
    /* Velocities on the lattice too: pair steps tie as well. */
    double *v = calloc(3 * n, sizeof *v), *a = calloc(3 * n, sizeof *a), *t = calloc(n, sizeof *t);
    for (size_t i = 0; i < n; ++i) v[3 * i] = (double)(i % 2) * 0.5;
    ok(api->set_state(s, n, NULL, pos, v, a, t) == GP_OK, "lattice velocities (set_state)");
    judge(s, n, mass, n, NULL, NULL, rad, 3.0, "lattice, radii and nb_step 3");
    api->finalize(s);
    free(pos); free(mass); free(rad); free(v); free(a); free(t);
}

/* ---- every output, all active, active subsets, source subsets ---------- */

static double median_step(gp_solver *s, size_t n)
{
    double *acc = malloc(3 * n * sizeof *acc), *st = malloc(n * sizeof *st);
    gp_outputs o = outputs(acc);
    o.pair_step = st;
    double med = 0.1;
    if (api->compute_forces_ex(s, &o) == GP_OK) {
        qsort(st, n, sizeof *st, tl_cmp_double);
        med = st[n / 20];   /* the 5th percentile: short lists */
    }
    free(acc); free(st);
    return med;
}

static void test_outputs(size_t n, const double *pos, const double *mass, const kin *K)
{
    gp_solver *s = solver_with_eps();
    int fine = api->set_particles(s, n, pos, mass) == GP_OK &&
               api->set_state_jerk(s, n, NULL, pos, K->v, K->a, K->j, K->t) == GP_OK &&
               api->predict(s, 0.3) == GP_OK;
    ok(fine, "%zu particles with jerks, predicted to t = 0.3", n);
    double *rad = malloc(n * sizeof *rad);
    tl_rng r = {1207};
    for (size_t i = 0; i < n; ++i) rad[i] = 0.3 * tl_uniform(&r);
    double step = median_step(s, n);
    judge(s, n, mass, n, NULL, NULL, NULL, 0.0, "all active, no lists");
    judge(s, n, mass, n, NULL, NULL, rad, 0.0, "all active, lists by radius");
    judge(s, n, mass, n, NULL, NULL, NULL, step, "all active, lists by step");
    judge(s, n, mass, n, NULL, NULL, rad, step, "all active, lists by radius and step");

    /* Active subsets: a shuffled 1% (at least 3), and a shuffled half. */
    uint32_t *act = malloc(n * sizeof *act);
    for (size_t i = 0; i < n; ++i) act[i] = (uint32_t)i;
    shuffle(act, n, 1209);
    size_t sizes[2] = {n / 100 > 3 ? n / 100 : 3, n / 2};
    int taken = 0;   /* judged only when taken: a refused subset leaves the
                        previous one, and outputs sized for m would be overrun */
    for (int q = 0; q < 2; ++q) {
        size_t m = sizes[q];
        char what[96];
        snprintf(what, sizeof what, "%zu shuffled active particles", m);
        taken = api->set_active_subset(s, m, act) == GP_OK;
        ok(taken, "set_active_subset(%zu, shuffled)", m);
        if (taken) judge(s, n, mass, m, act, NULL, rad, step, what);
    }
    /* A source subset (every third particle and a few more), active half. */
    uint8_t *in = calloc(n, 1);
    uint32_t *src = malloc(n * sizeof *src);
    size_t ns = 0;
    for (size_t i = 0; i < n; ++i)
        if (i % 3 == 0 || i % 17 == 5) { in[i] = 1; src[ns++] = (uint32_t)i; }
    shuffle(src, ns, 1211);
    int src_ok = api->set_source_subset(s, ns, src) == GP_OK;
    ok(src_ok, "set_source_subset(%zu, shuffled)", ns);
    if (taken && src_ok) judge(s, n, mass, sizes[1], act, in, rad, step, "source subset, half active");
    ok(api->set_active_subset(s, 0, NULL) == GP_OK, "set_active_subset(0, NULL)");
    judge(s, n, mass, n, NULL, in, rad, step, "source subset, all active");
    ok(api->set_source_subset(s, 0, NULL) == GP_OK, "set_source_subset(0, NULL)");
    /* set_particles forgets the lists. */
    uint64_t off[4];
    size_t need = 0;
    ok(api->set_particles(s, n, pos, mass) == GP_OK, "set_particles again");
    rejects(api->get_neighbours(s, 4, off, NULL, &need), GP_ERR_BAD_STATE, s,
            "get_neighbours after set_particles (the lists are forgotten)");
    api->finalize(s);
    free(rad); free(act); free(in); free(src);
}

/* ---- sets that stress a pruned pair_step ---------------------------------- */

/* A plugin may skip the exact tau_ij of pairs it can bound from below; the
 * pairs where such a bound is easiest to get wrong: co-moving pairs (equal
 * velocities, v = 0), pairs approaching slowly head on (Huayno's fly-by
 * correction grows like 1/|v| there), a hard binary inside the cluster,
 * massless particles, a count that is not a multiple of any SIMD width,
 * every particle at rest; with active and source subsets. */
static void test_pruning_sets(void)
{
    const size_t n = 301;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *v = calloc(3 * n, sizeof *v), *a = calloc(3 * n, sizeof *a), *t = calloc(n, sizeof *t);
    double *rad = malloc(n * sizeof *rad);
    tl_rng r = {1213};
    for (size_t i = 0; i < n; ++i) {
        double x, y, z;
        do {
            x = 2 * tl_uniform(&r) - 1; y = 2 * tl_uniform(&r) - 1; z = 2 * tl_uniform(&r) - 1;
        } while (x * x + y * y + z * z > 1);
        pos[3 * i] = x; pos[3 * i + 1] = y; pos[3 * i + 2] = z;
        mass[i] = i % 13 == 5 ? 0.0 : (0.5 + tl_uniform(&r)) / (double)n;
        for (int d = 0; d < 3; ++d) v[3 * i + d] = 0.4 * tl_uniform(&r) - 0.2;
        rad[i] = 0.2 * tl_uniform(&r);
    }
    /* a hard binary (1, 2): close, heavy, fast */
    for (int d = 0; d < 3; ++d) { pos[6 + d] = pos[3 + d]; v[6 + d] = v[3 + d]; }
    pos[6] += 2e-4; v[7] += 2.0; mass[1] = mass[2] = 0.05;
    /* co-moving: every 7th moves with the one before */
    for (size_t i = 7; i < n; i += 7)
        for (int d = 0; d < 3; ++d) v[3 * i + d] = v[3 * (i - 1) + d];
    /* slowly approaching head on: i + 1 just beside i, closing at 1e-6 */
    for (size_t i = 20; i + 1 < n; i += 17) {
        for (int d = 0; d < 3; ++d) { pos[3 * (i + 1) + d] = pos[3 * i + d]; v[3 * (i + 1) + d] = v[3 * i + d]; }
        pos[3 * (i + 1)] += 0.003;
        v[3 * (i + 1)] -= 1e-6;
    }
    gp_solver *s = solver_with_eps();
    int fine = api->set_particles(s, n, pos, mass) == GP_OK &&
               api->set_state(s, n, NULL, pos, v, a, t) == GP_OK;
    ok(fine, "pruning set: %zu particles, a hard binary, co-moving and slowly approaching pairs, "
       "massless ones", n);
    double step = median_step(s, n);
    judge(s, n, mass, n, NULL, NULL, rad, step, "pruning set, all active");
    uint32_t *act = malloc(n * sizeof *act);
    for (size_t i = 0; i < n; ++i) act[i] = (uint32_t)i;
    shuffle(act, n, 1215);
    /* judged only when taken: a refused subset leaves all n active, and
     * the outputs sized for 37 would be overrun */
    int act_ok = api->set_active_subset(s, 37, act) == GP_OK;
    ok(act_ok, "pruning set: set_active_subset(37, shuffled)");
    if (act_ok) judge(s, n, mass, 37, act, NULL, rad, step, "pruning set, 37 active");
    uint8_t *in = calloc(n, 1);
    uint32_t *src = malloc(n * sizeof *src);
    size_t ns = 0;
    for (size_t i = 0; i < n; ++i)
        if (i % 2 == 1 || i % 17 == 4) { in[i] = 1; src[ns++] = (uint32_t)i; }
    int src_ok = api->set_source_subset(s, ns, src) == GP_OK;
    ok(src_ok, "pruning set: set_source_subset(%zu)", ns);
    if (act_ok && src_ok) judge(s, n, mass, 37, act, in, rad, step, "pruning set, source subset, 37 active");
    ok(api->set_source_subset(s, 0, NULL) == GP_OK && api->set_active_subset(s, 0, NULL) == GP_OK,
       "pruning set: all sources and all active again");
    /* every particle at rest: tau_ij is the free-fall time alone */
    memset(v, 0, 3 * n * sizeof *v);
    ok(api->set_state(s, n, NULL, pos, v, a, t) == GP_OK, "pruning set: all at rest (set_state)");
    judge(s, n, mass, n, NULL, NULL, NULL, median_step(s, n), "pruning set at rest");
    api->finalize(s);
    free(pos); free(mass); free(v); free(a); free(t); free(rad); free(act); free(in); free(src);
}

void test_abi12(void)
{
    if (api->abi_minor < 2 ||
        api->struct_size < offsetof(gp_api, get_neighbours) + sizeof api->get_neighbours) {
        ok((api->capabilities & (GP_CAP_JERK | GP_CAP_NEIGHBOURS)) == 0,
           "an ABI 1.%u plugin claims no 1.2 capability bit", (unsigned)api->abi_minor);
        char why[160];
        snprintf(why, sizeof why, "the plugin speaks ABI 1.%u (abi_minor %u, struct_size %zu): "
                 "the 1.2 checks do not apply", (unsigned)api->abi_minor,
                 (unsigned)api->abi_minor, api->struct_size);
        skip(1, why);
        return;
    }
    int all = GRAVPLUG_API_HAS(api, set_state_jerk) && GRAVPLUG_API_HAS(api, get_velocities) &&
              GRAVPLUG_API_HAS(api, compute_forces_ex) && GRAVPLUG_API_HAS(api, get_neighbours);
    ok(all, "ABI 1.%u: every 1.2 function pointer is set, within struct_size %zu",
       (unsigned)api->abi_minor, api->struct_size);
    if (!all) return;
    const size_t n = quick ? 300 : 1500;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    make_set(n, 1201, pos, mass);
    kin K = make_kin(n, 1202);
    test_rejections12(n, pos, mass, &K);
    test_predict3(n, pos, mass, &K);
    test_jerk_fd(n, pos, mass, &K, NULL);
    /* a plugin with a float default: its double path too */
    if (is_exact && !exact_double && has_param("precision")) test_jerk_fd(n, pos, mass, &K, "double");
    test_ties();
    test_outputs(n, pos, mass, &K);
    test_pruning_sets();
    kin_free(&K);
    free(pos);
    free(mass);
}
