/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi11.c — holds a plugin to the ABI 1.1 contract (the end of
 * gravplug.h): set_state, predict, get_positions, set_source_subset and
 * update_masses. Part of the conformance program (conformance.c).
 *
 * What "equal" means here, by class:
 *   - predict / get_positions: bit for bit the host's evaluation of
 *     x + dt*v + (0.5*dt*dt)*a, for every plugin (CPU and GPU alike);
 *   - forces after set_state + predict against forces after
 *     update_positions of the same positions: bit for bit for CPU plugins
 *     (the integrators' 1.0/1.1 identity rests on it), within the class
 *     tolerance of the naive sum for GPU plugins;
 *   - source subsets and update_masses: bit for bit, for exact plugins,
 *     with a fresh set_particles of the same sources; within the class
 *     tolerance of the naive sum for approximate ones.
 * A plugin that speaks ABI 1.0 only gets one skip line with the reason.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#define TAP_SHARED_STATE
#include "tap.h"
#include "testlib.h"
#include "conformance_checks.h"
#include "conformance_abi11.h"

static const double EPS = 0.01;

static gp_solver *solver_with_eps(void)
{
    gp_solver *s = make_solver();
    if (has_param("eps")) api->set_param(s, "eps", "0.01");
    return s;
}

static double eps_used(void) { return has_param("eps") ? EPS : 0.0; }

/* The ABI's prediction, as a host evaluates it (this file is C11: no
 * contraction of the separate statements below). */
static void host_predict(size_t m, const double *x0, const double *v, const double *a,
                         const double *t0, double t, double *out)
{
    for (size_t k = 0; k < m; ++k) {
        double dt = t - t0[k];
        double h = 0.5 * dt * dt;
        for (int d = 0; d < 3; ++d) {
            double xv = x0[3 * k + d] + dt * v[3 * k + d];
            out[3 * k + d] = xv + h * a[3 * k + d];
        }
    }
}

static void fill_kinematics(size_t m, uint64_t seed, double *v, double *a, double *t0)
{
    tl_rng r = {seed};
    for (size_t k = 0; k < 3 * m; ++k) {
        v[k] = 2.0 * tl_uniform(&r) - 1.0;
        a[k] = 4.0 * tl_uniform(&r) - 2.0;
    }
    for (size_t k = 0; k < m; ++k) t0[k] = 0.25 * tl_uniform(&r);
}

static void shuffle(uint32_t *idx, size_t m, uint64_t seed)
{
    tl_rng r = {seed};
    for (size_t k = m; k > 1; --k) {
        size_t j = tl_next(&r) % k;
        uint32_t t = idx[k - 1]; idx[k - 1] = idx[j]; idx[j] = t;
    }
}

/* Reference forces on targets idx from the sources in src (others zeroed). */
static void ref_from_sources(size_t n, const double *pos, const double *mass, size_t n_src,
                             const uint32_t *src, size_t m, const uint32_t *idx,
                             double *acc, double *pot)
{
    double *mm = calloc(n, sizeof *mm);
    for (size_t k = 0; k < n_src; ++k) mm[src[k]] = mass[src[k]];
    tl_ref_forces(n, pos, mm, 1.0, eps_used(), m, idx, acc, pot);
    free(mm);
}

/* ---- presence and rejections --------------------------------------------- */

static void test_rejections11(size_t n, const double *pos, const double *mass)
{
    gp_solver *s = solver_with_eps();
    double buf[12] = {0}, tt[4] = {0};
    uint32_t one[1] = {0};
    rejects(api->set_state(s, 1, one, buf, buf, buf, tt), GP_ERR_BAD_STATE, s, "set_state before set_particles");
    rejects(api->predict(s, 1.0), GP_ERR_BAD_STATE, s, "predict before set_particles");
    rejects(api->get_positions(s, 1, one, buf), GP_ERR_BAD_STATE, s, "get_positions before set_particles");
    rejects(api->set_source_subset(s, 1, one), GP_ERR_BAD_STATE, s, "set_source_subset before set_particles");
    rejects(api->update_masses(s, 1, one, tt), GP_ERR_BAD_STATE, s, "update_masses before set_particles");

    double *acc0 = malloc(3 * n * sizeof *acc0), *acc1 = malloc(3 * n * sizeof *acc1);
    double *pot0 = malloc(n * sizeof *pot0), *pot1 = malloc(n * sizeof *pot1);
    double *got = malloc(3 * n * sizeof *got);
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->compute_forces(s, acc0, pot0) == GP_OK,
       "set_particles(%zu) and compute_forces", n);

    /* A valid 4-particle state, spoiled one way at a time. */
    uint32_t idx[4] = {1, 5, 9, 13};
    double p[12], v[12], a[12], t[4] = {0.1, 0.2, 0.3, 0.4};
    for (int k = 0; k < 12; ++k) { p[k] = pos[3 + k]; v[k] = 0.1 * k; a[k] = -0.05 * k; }
    rejects(api->set_state(s, 4, idx, NULL, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with pos = NULL");
    rejects(api->set_state(s, 4, idx, p, NULL, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with vel = NULL");
    rejects(api->set_state(s, 4, idx, p, v, NULL, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with acc = NULL");
    rejects(api->set_state(s, 4, idx, p, v, a, NULL), GP_ERR_INVALID_ARGUMENT, s, "set_state with t = NULL");
    double keep = p[4];
    p[4] = NAN;
    rejects(api->set_state(s, 4, idx, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with a NaN position");
    p[4] = keep;
    v[7] = INFINITY;
    rejects(api->set_state(s, 4, idx, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with an infinite velocity");
    v[7] = 0.7;
    a[11] = NAN;
    rejects(api->set_state(s, 4, idx, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with a NaN acceleration");
    a[11] = -0.55;
    t[2] = -INFINITY;
    rejects(api->set_state(s, 4, idx, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with an infinite time");
    t[2] = 0.3;
    uint32_t bad[4] = {1, 5, (uint32_t)n, 13}, rep[4] = {1, 5, 1, 13};
    rejects(api->set_state(s, 4, bad, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with an index >= n");
    rejects(api->set_state(s, 4, rep, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with a repeated index");
    rejects(api->set_state(s, 4, NULL, p, v, a, t), GP_ERR_INVALID_ARGUMENT, s, "set_state with n_sub != n and index = NULL");
    rejects(api->predict(s, NAN), GP_ERR_INVALID_ARGUMENT, s, "predict to a NaN time");
    rejects(api->predict(s, INFINITY), GP_ERR_INVALID_ARGUMENT, s, "predict to an infinite time");
    rejects(api->get_positions(s, 4, idx, NULL), GP_ERR_INVALID_ARGUMENT, s, "get_positions with pos = NULL");
    rejects(api->get_positions(s, 4, bad, got), GP_ERR_INVALID_ARGUMENT, s, "get_positions with an index >= n");
    rejects(api->get_positions(s, 3, NULL, got), GP_ERR_INVALID_ARGUMENT, s, "get_positions with n_sub != n and index = NULL");
    rejects(api->set_source_subset(s, 4, bad), GP_ERR_INVALID_ARGUMENT, s, "set_source_subset with an index >= n");
    rejects(api->set_source_subset(s, 4, rep), GP_ERR_INVALID_ARGUMENT, s, "set_source_subset with a repeated index");
    rejects(api->set_source_subset(s, 4, NULL), GP_ERR_INVALID_ARGUMENT, s, "set_source_subset with n_src > 0 and index = NULL");
    double nm[4] = {1.0, -1.0, 1.0, 1.0};
    rejects(api->update_masses(s, 4, idx, nm), GP_ERR_INVALID_ARGUMENT, s, "update_masses with a negative mass");
    nm[1] = NAN;
    rejects(api->update_masses(s, 4, idx, nm), GP_ERR_INVALID_ARGUMENT, s, "update_masses with a NaN mass");
    nm[1] = INFINITY;
    rejects(api->update_masses(s, 4, idx, nm), GP_ERR_INVALID_ARGUMENT, s, "update_masses with an infinite mass");
    rejects(api->update_masses(s, 4, idx, NULL), GP_ERR_INVALID_ARGUMENT, s, "update_masses with mass = NULL");
    nm[1] = 1.0;
    rejects(api->update_masses(s, 4, rep, nm), GP_ERR_INVALID_ARGUMENT, s, "update_masses with a repeated index");

    /* Nothing changed: the same forces, the same positions. */
    ok(api->compute_forces(s, acc1, pot1) == GP_OK && same_bits(acc0, acc1, 3 * n) &&
       (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot0, pot1, n)),
       "after every 1.1 rejection the forces are bit for bit those before");
    ok(api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, pos, 3 * n),
       "after every 1.1 rejection get_positions(n, NULL) returns the positions given");
    ok(api->set_state(s, 0, NULL, NULL, NULL, NULL, NULL) == GP_OK,
       "set_state of an empty subset is a no-op");
    api->finalize(s);
    free(acc0); free(acc1); free(pot0); free(pot1); free(got);
}

/* ---- predict and get_positions ------------------------------------------- */

static void test_predict(size_t n, const double *pos, const double *mass)
{
    gp_solver *s = solver_with_eps();
    double *got = malloc(3 * n * sizeof *got), *want = malloc(3 * n * sizeof *want);
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->predict(s, 1.5) == GP_OK &&
       api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, pos, 3 * n),
       "predict with no state leaves every particle where it is, bit for bit");

    /* A state for every third particle, shuffled. */
    size_t m = 0;
    uint32_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 0; i < n; i += 3) idx[m++] = (uint32_t)i;
    shuffle(idx, m, 31);
    double *x0 = malloc(3 * m * sizeof *x0), *v = malloc(3 * m * sizeof *v);
    double *a = malloc(3 * m * sizeof *a), *t0 = malloc(m * sizeof *t0);
    for (size_t k = 0; k < m; ++k)
        for (int d = 0; d < 3; ++d) x0[3 * k + d] = pos[3 * (size_t)idx[k] + d] * 0.999;
    fill_kinematics(m, 77, v, a, t0);
    ok(api->set_state(s, m, idx, x0, v, a, t0) == GP_OK, "set_state for %zu particles", m);
    double *sub = malloc(3 * m * sizeof *sub);
    ok(api->get_positions(s, m, idx, sub) == GP_OK && same_bits(sub, x0, 3 * m),
       "after set_state the source positions are the state's positions");

    const double T1 = 0.7, T2 = 0.3125;
    double *host = malloc(3 * m * sizeof *host);
    int fine = api->predict(s, T1) == GP_OK && api->get_positions(s, n, NULL, got) == GP_OK;
    host_predict(m, x0, v, a, t0, T1, host);
    memcpy(want, pos, 3 * n * sizeof *want);
    for (size_t k = 0; k < m; ++k) memcpy(&want[3 * (size_t)idx[k]], &host[3 * k], 3 * sizeof *want);
    ok(fine && same_bits(got, want, 3 * n),
       "predict(%g) equals the host's x + dt*v + (0.5*dt*dt)*a bit for bit; stateless particles stay", T1);
    fine = api->predict(s, T2) == GP_OK && api->get_positions(s, m, idx, sub) == GP_OK;
    host_predict(m, x0, v, a, t0, T2, host);
    ok(fine && same_bits(sub, host, 3 * m),
       "a second predict starts again from the state (not from the last prediction)");

    /* Any thread count. */
    int threads_same = 1;
    for (int th = 1; th <= 3; th += 2) {
        omp_set_num_threads(th);
        threads_same &= api->predict(s, T1) == GP_OK && api->get_positions(s, n, NULL, got) == GP_OK &&
                        same_bits(got, want, 3 * n);
    }
    omp_set_num_threads(omp_get_num_procs());
    ok(threads_same, "predict gives the same bits with 1 and 3 OpenMP threads");

    /* update_positions clears velocities and accelerations. */
    double *moved = malloc(3 * n * sizeof *moved);
    for (size_t i = 0; i < 3 * n; ++i) moved[i] = pos[i] * 1.001;
    ok(api->update_positions(s, moved) == GP_OK && api->predict(s, 5.0) == GP_OK &&
       api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, moved, 3 * n),
       "update_positions clears the state: a later predict leaves every particle in place");

    /* set_particles clears it too. */
    api->set_state(s, m, idx, x0, v, a, t0);
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->predict(s, T1) == GP_OK &&
       api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, pos, 3 * n),
       "set_particles clears the state: a later predict leaves every particle in place");

    /* The state of all particles at once, (n, NULL). */
    double *V = malloc(3 * n * sizeof *V), *A = malloc(3 * n * sizeof *A), *T0 = malloc(n * sizeof *T0);
    double *H = malloc(3 * n * sizeof *H);
    fill_kinematics(n, 99, V, A, T0);
    host_predict(n, pos, V, A, T0, T1, H);
    ok(api->set_state(s, n, NULL, pos, V, A, T0) == GP_OK && api->predict(s, T1) == GP_OK &&
       api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, H, 3 * n),
       "set_state(n, NULL) then predict: every particle as the host predicts it");

    /* A predict that overflows a position is refused and moves nothing, bit
     * for bit: with every particle stated and predicted before (undone to
     * that prediction), and with a part stated and never predicted (undone
     * to the state's positions; the rest stay where set_particles put them). */
    V[3 * (n / 2)] = 1e300;
    ok(api->set_state(s, n, NULL, pos, V, A, T0) == GP_OK && api->predict(s, T1) == GP_OK &&
       api->get_positions(s, n, NULL, want) == GP_OK,
       "set_state(n, NULL) with one speed of 1e300, predict(%g)", T1);
    rejects(api->predict(s, 1e10), GP_ERR_INVALID_ARGUMENT, s, "predict(1e10) that overflows a position");
    ok(api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, want, 3 * n),
       "the refused predict left every particle at the previous prediction, bit for bit");
    v[0] = 1e300;
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->set_state(s, m, idx, x0, v, a, t0) == GP_OK,
       "set_particles, then set_state for %zu particles, one with a speed of 1e300", m);
    rejects(api->predict(s, 1e10), GP_ERR_INVALID_ARGUMENT, s, "predict(1e10) that overflows a position");
    memcpy(want, pos, 3 * n * sizeof *want);
    for (size_t k = 0; k < m; ++k) memcpy(&want[3 * (size_t)idx[k]], &x0[3 * k], 3 * sizeof *want);
    ok(api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, want, 3 * n),
       "the refused predict left the stated particles at their states' positions, the rest in place");

    /* A predict whose velocity overflows while every position stays finite
     * (v = a = 1.2e308, dt = 0.5: x + 0.75e308, v + 0.6e308 = inf) is
     * refused too, naming the velocity, and moves nothing: it used to
     * return GP_OK with get_velocities inf. */
    memset(V, 0, 3 * n * sizeof *V);
    memset(A, 0, 3 * n * sizeof *A);
    memset(T0, 0, n * sizeof *T0);
    V[3 * (n / 3)] = A[3 * (n / 3)] = 1.2e308;
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->set_state(s, n, NULL, pos, V, A, T0) == GP_OK &&
       api->predict(s, 0.25) == GP_OK && api->get_positions(s, n, NULL, want) == GP_OK,
       "set_state with one speed and acceleration of 1.2e308, predict(0.25)");
    if (rejects(api->predict(s, 0.5), GP_ERR_INVALID_ARGUMENT, s, "predict(0.5) whose velocity overflows"))
        ok(strstr(api->last_error(s), "velocity") != NULL, "the sentence names the velocity: %s",
           api->last_error(s));
    else
        skip(1, "not refused");
    ok(api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, want, 3 * n),
       "the refused predict left every particle at the previous prediction, bit for bit");
    api->finalize(s);
    free(got); free(want); free(idx); free(x0); free(v); free(a); free(t0); free(sub);
    free(host); free(moved); free(V); free(A); free(T0); free(H);
}

/* ---- forces through the 1.1 path equal those through the 1.0 path ------- */

/* The same step through 1.1 (acc11) and 1.0 (acc10) for the m targets act
 * (NULL: all n): a CPU plugin bit for bit, a GPU plugin against the naive
 * sum at the host's positions X. */
static void same_forces(int cpu, size_t n, const double *X, const double *mass, size_t m,
                        const uint32_t *act, const double *acc11, const double *acc10, double *ref,
                        const char *bits_what, const char *ref_what)
{
    if (cpu) {
        ok(same_bits(acc11, acc10, 3 * m), "%s", bits_what);
    } else {
        tl_ref_forces(n, X, mass, 1.0, eps_used(), m, act, ref, NULL);
        close_to_ref(m, acc11, ref, NULL, NULL, ref_what);
    }
}

static void test_paths_agree(size_t n, const double *pos, const double *mass)
{
    const int cpu = !has_cap(GP_CAP_GPU);
    gp_solver *p11 = solver_with_eps(), *p10 = solver_with_eps();
    double *V = malloc(3 * n * sizeof *V), *A = malloc(3 * n * sizeof *A), *T0 = malloc(n * sizeof *T0);
    double *X = malloc(3 * n * sizeof *X), *acc11 = malloc(3 * n * sizeof *acc11);
    double *acc10 = malloc(3 * n * sizeof *acc10), *ref = malloc(3 * n * sizeof *ref);
    fill_kinematics(n, 5, V, A, T0);
    for (size_t i = 0; i < 3 * n; ++i) { V[i] *= 0.05; A[i] *= 0.05; }
    int fine = api->set_particles(p11, n, pos, mass) == GP_OK && api->compute_forces(p11, acc11, NULL) == GP_OK &&
               api->set_particles(p10, n, pos, mass) == GP_OK && api->compute_forces(p10, acc10, NULL) == GP_OK;
    /* Step 1: everybody predicted to T. */
    const double T = 0.5;
    host_predict(n, pos, V, A, T0, T, X);
    fine &= api->set_state(p11, n, NULL, pos, V, A, T0) == GP_OK && api->predict(p11, T) == GP_OK &&
            api->compute_forces(p11, acc11, NULL) == GP_OK;
    fine &= api->update_positions(p10, X) == GP_OK && api->compute_forces(p10, acc10, NULL) == GP_OK;
    ok(fine, "the same step through set_state + predict and through update_positions");
    same_forces(cpu, n, X, mass, n, NULL, acc11, acc10, ref,
                "CPU plugin: forces after predict equal those after "
                "update_positions of the host's prediction, bit for bit",
                "forces after predict vs the naive sum");
    /* Step 2, block-step shaped: a few particles get a new state, the
     * others keep theirs, all predicted to T2, an active subset computed. */
    size_t m = 0;
    uint32_t *act = malloc(n * sizeof *act);
    for (size_t i = 2; i < n; i += 11) act[m++] = (uint32_t)i;
    double *xs = malloc(3 * m * sizeof *xs), *vs = malloc(3 * m * sizeof *vs), *as = malloc(3 * m * sizeof *as);
    double *ts = malloc(m * sizeof *ts);
    for (size_t k = 0; k < m; ++k) {
        size_t i = act[k];
        for (int d = 0; d < 3; ++d) {
            xs[3 * k + d] = X[3 * i + d];
            vs[3 * k + d] = V[3 * i + d] * 0.5;
            as[3 * k + d] = acc10[3 * i + d] * 0.01;
            /* the host's own state of those particles changes the same way */
            V[3 * i + d] = vs[3 * k + d];
            A[3 * i + d] = as[3 * k + d];
        }
        ts[k] = T;
    }
    double *P0 = malloc(3 * n * sizeof *P0);
    memcpy(P0, pos, 3 * n * sizeof *P0);
    for (size_t k = 0; k < m; ++k) {
        memcpy(&P0[3 * (size_t)act[k]], &xs[3 * k], 3 * sizeof *P0);
        T0[act[k]] = T;
    }
    const double T2 = 0.625;
    host_predict(n, P0, V, A, T0, T2, X);
    fine = api->set_state(p11, m, act, xs, vs, as, ts) == GP_OK && api->predict(p11, T2) == GP_OK &&
           api->set_active_subset(p11, m, act) == GP_OK && api->compute_forces(p11, acc11, NULL) == GP_OK;
    fine &= api->update_positions(p10, X) == GP_OK && api->set_active_subset(p10, m, act) == GP_OK &&
            api->compute_forces(p10, acc10, NULL) == GP_OK;
    double *got = malloc(3 * m * sizeof *got), *want = malloc(3 * m * sizeof *want);
    for (size_t k = 0; k < m; ++k) memcpy(&want[3 * k], &X[3 * (size_t)act[k]], 3 * sizeof *want);
    fine &= api->get_positions(p11, m, act, got) == GP_OK;
    ok(fine && same_bits(got, want, 3 * m),
       "block step: get_positions of the %zu active particles equals the host's prediction", m);
    same_forces(cpu, n, X, mass, m, act, acc11, acc10, ref,
                "CPU plugin: active-subset forces through 1.1 equal those through 1.0, bit for bit",
                "active-subset forces after predict vs the naive sum");
    api->finalize(p11);
    api->finalize(p10);
    free(V); free(A); free(T0); free(X); free(acc11); free(acc10); free(ref); free(act);
    free(xs); free(vs); free(as); free(ts); free(P0); free(got); free(want);
}

/* ---- source subsets ------------------------------------------------------ */

static void test_source_subset(size_t n, const double *pos, const double *mass)
{
    gp_solver *s = solver_with_eps();
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *acc2 = malloc(3 * n * sizeof *acc2), *pot2 = malloc(n * sizeof *pot2);
    double *ref = malloc(3 * n * sizeof *ref), *rpot = malloc(n * sizeof *rpot);
    api->set_particles(s, n, pos, mass);
    api->compute_forces(s, acc, pot);
    gp_stats st_all = {.struct_size = sizeof st_all}, st0 = {.struct_size = sizeof st0};
    api->get_stats(s, &st0);
    api->compute_forces(s, acc2, NULL);
    api->get_stats(s, &st_all);
    uint64_t work_all = (st_all.pp_interactions + st_all.pc_interactions) -
                        (st0.pp_interactions + st0.pc_interactions);

    /* Every 4th particle (some of them massless), shuffled. */
    size_t ns = 0;
    uint32_t *src = malloc(n * sizeof *src);
    for (size_t i = 1; i < n; i += 4) src[ns++] = (uint32_t)i;
    shuffle(src, ns, 13);
    ok(api->set_source_subset(s, ns, src) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "set_source_subset(%zu) and compute_forces on all particles", ns);
    ref_from_sources(n, pos, mass, ns, src, n, NULL, ref, rpot);
    close_to_ref(n, acc2, ref, pot2, rpot, "source subset vs the naive sum over those sources");
    if (is_exact) {
        double *mm = calloc(n, sizeof *mm);
        for (size_t k = 0; k < ns; ++k) mm[src[k]] = mass[src[k]];
        gp_solver *f = solver_with_eps();
        double *af = malloc(3 * n * sizeof *af), *pf = malloc(n * sizeof *pf);
        api->set_particles(f, n, pos, mm);
        api->compute_forces(f, af, pf);
        ok(same_bits(af, acc2, 3 * n) && (!has_cap(GP_CAP_POTENTIAL) || same_bits(pf, pot2, n)),
           "exact plugin: a source subset gives the bits of set_particles with the other masses zero");
        api->finalize(f);
        free(af); free(pf); free(mm);
    }
    api->get_stats(s, &st0);
    api->compute_forces(s, acc2, NULL);
    gp_stats st_sub = {.struct_size = sizeof st_sub};
    api->get_stats(s, &st_sub);
    uint64_t work_sub = (st_sub.pp_interactions + st_sub.pc_interactions) -
                        (st0.pp_interactions + st0.pc_interactions);
    if (has_cap(GP_CAP_SOURCE_SUBSET))
        ok(work_sub * 2 <= work_all, "GP_CAP_SOURCE_SUBSET: a quarter of the sources costs at most "
           "half the interactions (%llu against %llu)", (unsigned long long)work_sub,
           (unsigned long long)work_all);
    else
        skip(1, "the plugin does not claim GP_CAP_SOURCE_SUBSET");

    /* With an active subset that straddles the sources: self still skipped. */
    size_t na = 0;
    uint32_t *act = malloc(n * sizeof *act);
    for (size_t i = 0; i < n; i += 6) act[na++] = (uint32_t)i;
    ok(api->set_active_subset(s, na, act) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "an active subset of %zu with the source subset", na);
    ref_from_sources(n, pos, mass, ns, src, na, act, ref, rpot);
    close_to_ref(na, acc2, ref, pot2, rpot, "active and source subsets vs the naive sum (self skipped)");

    /* compute_field sums the source subset too. */
    const size_t mpts = 16;
    double pts[3 * 16], fa[3 * 16], fp[16];
    for (size_t k = 0; k < mpts; ++k)
        for (int d = 0; d < 3; ++d) pts[3 * k + d] = pos[3 * (7 * k + 2) + d] + 0.01 * (d + 1);
    size_t N2 = n + mpts;
    double *pos2 = malloc(3 * N2 * sizeof *pos2), *mass2 = calloc(N2, sizeof *mass2);
    double rfa[3 * 16], rfp[16];
    uint32_t tgt[16];
    memcpy(pos2, pos, 3 * n * sizeof *pos2);
    memcpy(pos2 + 3 * n, pts, sizeof pts);
    for (size_t k = 0; k < ns; ++k) mass2[src[k]] = mass[src[k]];
    for (size_t k = 0; k < mpts; ++k) tgt[k] = (uint32_t)(n + k);
    tl_ref_forces(N2, pos2, mass2, 1.0, eps_used(), mpts, tgt, rfa, rfp);
    ok(api->compute_field(s, mpts, pts, fa, fp) == GP_OK, "compute_field with the source subset");
    close_to_ref(mpts, fa, rfa, fp, rfp, "field of the source subset vs the naive sum");
    free(pos2); free(mass2);

    /* (0, NULL) restores all sources. */
    ok(api->set_active_subset(s, 0, NULL) == GP_OK && api->set_source_subset(s, 0, NULL) == GP_OK &&
       api->compute_forces(s, acc2, pot2) == GP_OK, "set_source_subset(0, NULL)");
    if (is_exact)
        ok(same_bits(acc, acc2, 3 * n), "exact plugin: all sources again give the first call's bits");
    else {
        tl_ref_forces(n, pos, mass, 1.0, eps_used(), n, NULL, ref, rpot);
        close_to_ref(n, acc2, ref, pot2, rpot, "all sources again vs the naive sum");
    }
    /* set_particles restores all sources. */
    api->set_source_subset(s, ns, src);
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->compute_forces(s, acc2, NULL) == GP_OK &&
       (is_exact ? same_bits(acc, acc2, 3 * n) : 1), "set_particles restores all sources");
    if (!is_exact) {
        tl_ref_forces(n, pos, mass, 1.0, eps_used(), n, NULL, ref, NULL);
        close_to_ref(n, acc2, ref, NULL, NULL, "after set_particles: all sources vs the naive sum");
    }
    /* Deterministic. */
    gp_solver *d = solver_with_eps();
    double *ad = malloc(3 * n * sizeof *ad);
    api->set_particles(d, n, pos, mass);
    api->set_source_subset(s, ns, src);
    api->set_source_subset(d, ns, src);
    ok(api->compute_forces(s, acc2, NULL) == GP_OK && api->compute_forces(d, ad, NULL) == GP_OK &&
       same_bits(acc2, ad, 3 * n), "a source subset gives the same bits on two instances");
    api->finalize(d);
    api->finalize(s);
    free(ad); free(acc); free(pot); free(acc2); free(pot2); free(ref); free(rpot); free(src); free(act);
}

/* ---- update_masses -------------------------------------------------------- */

static void test_update_masses(size_t n, const double *pos, const double *mass)
{
    double *nm = malloc(n * sizeof *nm), *sub = malloc(n * sizeof *sub);
    uint32_t *idx = malloc(n * sizeof *idx);
    memcpy(nm, mass, n * sizeof *nm);
    size_t m = 0;
    for (size_t i = 0; i < n; i += 5) {
        /* massless ones gain mass, some lose it all, the others change */
        double w = mass[i] == 0.0 ? 1.0 / (double)n : (i % 15 == 5 ? 0.0 : mass[i] * 1.7);
        nm[i] = w;
        idx[m] = (uint32_t)i;
        sub[m++] = w;
    }
    shuffle(idx, m, 3);
    for (size_t k = 0; k < m; ++k) sub[k] = nm[idx[k]];
    gp_solver *s = solver_with_eps(), *f = solver_with_eps();
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *af = malloc(3 * n * sizeof *af), *pf = malloc(n * sizeof *pf);
    double *got = malloc(3 * n * sizeof *got);
    int fine = api->set_particles(s, n, pos, mass) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK;
    fine &= api->update_masses(s, m, idx, sub) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK;
    ok(fine, "update_masses of %zu particles (massless ones gaining mass, others losing it) "
       "and compute_forces", m);
    ok(api->get_positions(s, n, NULL, got) == GP_OK && same_bits(got, pos, 3 * n),
       "update_masses keeps the positions");
    api->set_particles(f, n, pos, nm);
    api->compute_forces(f, af, pf);
    if (is_exact) {
        ok(same_bits(acc, af, 3 * n) && (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot, pf, n)),
           "exact plugin: masses updated in place give the bits of a fresh set_particles");
    } else {
        double *ref = malloc(3 * n * sizeof *ref), *rpot = malloc(n * sizeof *rpot);
        tl_ref_forces(n, pos, nm, 1.0, eps_used(), n, NULL, ref, rpot);
        close_to_ref(n, acc, ref, pot, rpot, "masses updated in place vs the naive sum");
        tl_errstat e = tl_relerr(n, 3, acc, af);
        ok(e.median <= tol_median, "masses updated in place agree with a fresh set_particles "
           "(median rel %.3g)", e.median);
        free(ref); free(rpot);
    }
    /* All at once, (n, NULL), back to the first masses. */
    double *a0 = malloc(3 * n * sizeof *a0);
    api->set_particles(f, n, pos, mass);
    api->compute_forces(f, a0, NULL);
    fine = api->update_masses(s, n, NULL, mass) == GP_OK && api->compute_forces(s, acc, NULL) == GP_OK;
    if (is_exact)
        ok(fine && same_bits(acc, a0, 3 * n), "update_masses(n, NULL) back to the first masses: the first bits");
    else {
        tl_errstat e = tl_relerr(n, 3, acc, a0);
        ok(fine && e.median <= tol_median, "update_masses(n, NULL) back to the first masses "
           "(median rel %.3g against a fresh instance)", e.median);
    }
    api->finalize(s);
    api->finalize(f);
    free(nm); free(sub); free(idx); free(acc); free(pot); free(af); free(pf); free(got); free(a0);
}

void test_abi11(void)
{
    int all = GRAVPLUG_API_HAS(api, set_state) && GRAVPLUG_API_HAS(api, predict) &&
              GRAVPLUG_API_HAS(api, get_positions) && GRAVPLUG_API_HAS(api, set_source_subset) &&
              GRAVPLUG_API_HAS(api, update_masses);
    if (api->abi_minor < 1) {
        ok(api->capabilities >> 7 == 0, "an ABI 1.0 plugin claims no 1.1 capability bit");
        skip(1, "the plugin speaks ABI 1.0 (abi_minor 0): the 1.1 checks do not apply");
        return;
    }
    ok(all, "ABI 1.%u: every 1.1 function pointer is set, within struct_size %zu",
       (unsigned)api->abi_minor, api->struct_size);
    if (!all) return;
    const size_t n = quick ? 300 : 3000;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    make_set(n, 1101, pos, mass);
    test_rejections11(n, pos, mass);
    test_predict(n, pos, mass);
    test_paths_agree(n, pos, mass);
    test_source_subset(n, pos, mass);
    test_update_masses(n, pos, mass);
    free(pos);
    free(mass);
}
