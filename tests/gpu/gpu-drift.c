/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-drift: cuda-tree's drifted tree (drift = on) through block steps of
 * the ABI 1.1 path (predict, get_positions, an active subset, forces,
 * set_state of the active ones), against drift = off and exact sums:
 *   - the block steps walk the drifted tree: no refit between the builds
 *     that rebuild = N asks for (drift = off refits at every step);
 *   - its forces are within the tree's error of exact sums: rms relative
 *     error at most 2x the refitted tree's, and below 1e-2;
 *   - predict is owed, not done, but every position and velocity read
 *     back is drift = off's bits: the active ones', a subset given a
 *     state since, every particle's, and a predict that would overflow
 *     is refused as drift = off refuses it;
 *   - two instances give the same bits (nothing depends on memory left
 *     from an earlier call);
 *   - a full call and compute_field after drifted steps refit: drift =
 *     off's bits again.
 * On the device build with a GPU, or on the emulated one
 * (build/emu/plugins through GP_BUILD); without a device: 1..0 # SKIP.
 * GP_GPU_TEST_N sets N (default 4096).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"

#define STEPS 8

static gp_solver *make(const gp_api *api, const char *drift)
{
    gp_solver *s = gpu_plugin_make(api, "eps", "0.01", "drift", drift);
    if (!s) bail("cuda-tree init failed");
    /* builds at fixed counts of updates, so that both settings build at
     * the same calls; mac = bmax: no dependence on the last call's |a| */
    if (api->set_param(s, "rebuild", "5") != GP_OK || api->set_param(s, "mac", "bmax") != GP_OK)
    {
        diag("%s", api->last_error(s));
        bail("cuda-tree refused a parameter");
    }
    return s;
}

int main(void)
{
    gpu_plugin T, X;
    char why[1200];
    if (gpu_plugin_open(&T, "cuda-tree", why, sizeof why) != 0) skip_all(why);
    if (gpu_plugin_open(&X, "cpu-direct", why, sizeof why) != 0) skip_all(why);
    {
        gp_solver *probe = NULL;
        if (T.api->init(&probe, NULL) == GP_ERR_DEVICE) {
            snprintf(why, sizeof why, "no CUDA device: %s", T.api->last_error(NULL));
            skip_all(why);
        }
        if (probe) T.api->finalize(probe);
    }
    const gp_api *P = T.api, *R = X.api;
    size_t n = 4096;
    if (getenv("GP_GPU_TEST_N")) n = (size_t)atol(getenv("GP_GPU_TEST_N"));
    if (n < 512) n = 512;
    plan(10);

    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel), *acc = calloc(3 * n, sizeof *acc),
           *mass = malloc(n * sizeof *mass), *tt = calloc(n, sizeof *tt), *all = malloc(3 * n * sizeof *all),
           *ax = malloc(3 * n * sizeof *ax), *nv = malloc(3 * n * sizeof *nv), *na = malloc(3 * n * sizeof *na),
           *nt = malloc(n * sizeof *nt);
    double *p[3], *a[3];
    for (int k = 0; k < 3; k++) {
        p[k] = malloc(3 * n * sizeof *p[k]);
        a[k] = malloc(3 * n * sizeof *a[k]);
        if (!p[k] || !a[k]) bail("out of memory");
    }
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!pos || !vel || !acc || !mass || !tt || !all || !ax || !nv || !na || !nt || !idx) bail("out of memory");
    tl_plummer(n, 20261204, 1.0, 20.0, pos, mass);
    tl_rng g = {55};
    for (size_t i = 0; i < 3 * n; i++) vel[i] = 0.5 * (tl_uniform(&g) - 0.5);

    /* [0], [1]: drift = on twice; [2]: drift = off */
    gp_solver *s[3] = {make(P, "on"), make(P, "on"), make(P, "off")};
    gp_solver *x = gpu_plugin_make(R, "eps", "0.01", NULL, NULL);
    if (!x) bail("cpu-direct init failed");
    int calls_ok = 1;
    for (int k = 0; k < 3; k++)
        calls_ok &= P->set_particles(s[k], n, pos, mass) == GP_OK &&
                    P->set_state(s[k], n, NULL, pos, vel, acc, tt) == GP_OK && P->predict(s[k], 0.0) == GP_OK &&
                    P->compute_forces(s[k], a[k], NULL) == GP_OK;
    if (!calls_ok) {
        diag("%s", P->last_error(s[0]));
        bail("setup failed");
    }
    memcpy(acc, a[2], 3 * n * sizeof *acc);

    const uint64_t refits0 = gpu_plugin_stats(P, s[0]).tree_refits;
    int pos_same = 1, bits_same = 1, fresh_same = 1;
    double worst_ratio = 0, worst_err = 0;
    for (int step = 1; step <= STEPS; step++) {
        const double t = 0.01 * step;
        size_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            if (tl_uniform(&g) < 0.05) idx[m++] = i;
        for (int k = 0; k < 3; k++) {
            calls_ok &= P->predict(s[k], t) == GP_OK;
            calls_ok &= P->get_positions(s[k], m, idx, p[k]) == GP_OK;
            calls_ok &= P->set_active_subset(s[k], m, idx) == GP_OK;
            calls_ok &= P->compute_forces(s[k], a[k], NULL) == GP_OK;
        }
        pos_same &= memcmp(p[0], p[2], 3 * m * sizeof(double)) == 0;
        bits_same &= memcmp(a[0], a[1], 3 * m * sizeof(double)) == 0;
        /* exact sums at the same positions */
        calls_ok &= P->get_positions(s[2], n, NULL, all) == GP_OK;
        calls_ok &= R->set_particles(x, n, all, mass) == GP_OK && R->set_active_subset(x, m, idx) == GP_OK &&
                    R->compute_forces(x, ax, NULL) == GP_OK;
        const double ed = tl_rms_rel(m, a[0], ax), er = tl_rms_rel(m, a[2], ax);
        diag("step %d, %zu active: rms relative error %.3e drifted, %.3e refitted", step, m, ed, er);
        worst_ratio = fmax(worst_ratio, ed / er);
        worst_err = fmax(worst_err, ed);
        /* the corrector: a kick with drift = off's force, a new state,
         * stamped a little before t so that its position (x0 until the
         * next predict) is not its prediction to t */
        for (size_t k = 0; k < m; k++) {
            for (int c = 0; c < 3; c++) {
                nv[3 * k + c] = vel[3 * (size_t)idx[k] + c] + 0.01 * a[2][3 * k + c];
                na[3 * k + c] = a[2][3 * k + c];
            }
            nt[k] = t - 0.001;
        }
        for (int k = 0; k < 3; k++) calls_ok &= P->set_state(s[k], m, idx, p[2], nv, na, nt) == GP_OK;
        /* a state given under the owed predict holds its position */
        for (int k = 0; k < 3; k += 2) calls_ok &= P->get_positions(s[k], m, idx, p[k]) == GP_OK;
        fresh_same &= memcmp(p[0], p[2], 3 * m * sizeof(double)) == 0;
    }
    if (!calls_ok) diag("%s / %s", P->last_error(s[0]), P->last_error(s[2]));
    ok(calls_ok, "every call of %d block steps succeeds", STEPS);
    const gp_stats sd = gpu_plugin_stats(P, s[0]), sr = gpu_plugin_stats(P, s[2]);
    ok(sd.tree_refits == refits0 && sd.tree_builds == sr.tree_builds && sr.tree_refits > refits0,
       "the block steps walk the drifted tree: %llu refits (drift = off %llu), %llu builds as drift = off's",
       (unsigned long long)(sd.tree_refits - refits0), (unsigned long long)(sr.tree_refits - refits0),
       (unsigned long long)sd.tree_builds);
    ok(worst_ratio <= 2.0 && worst_err < 1e-2,
       "drifted tree's rms force error at most 2x a refitted tree's (worst %.3f) and below 1e-2 (worst %.2e)",
       worst_ratio, worst_err);
    ok(pos_same, "the active particles' positions under the owed predict: drift = off's bits");
    ok(fresh_same, "positions of particles given a state since the owed predict: drift = off's bits");
    ok(bits_same, "two drifted instances: the same bits");

    /* a drifted step, then a full call and a field call: both refit */
    const double t = 0.01 * (STEPS + 1);
    for (int k = 0; k < 3; k += 2) {
        P->predict(s[k], t);
        P->set_active_subset(s[k], 16, idx);
        P->compute_forces(s[k], a[k], NULL);
    }
    ok(P->get_velocities(s[0], n, NULL, nv) == GP_OK && P->get_velocities(s[2], n, NULL, na) == GP_OK &&
           memcmp(nv, na, 3 * n * sizeof(double)) == 0,
       "every velocity under the owed predict: drift = off's bits");
    const double pts[6] = {0.1, 0.2, 0.3, -1.0, 0.5, 2.0};
    double f0[6], f2[6];
    ok(P->compute_field(s[0], 2, pts, f0, NULL) == GP_OK && P->compute_field(s[2], 2, pts, f2, NULL) == GP_OK &&
           memcmp(f0, f2, sizeof f0) == 0,
       "compute_field after a drifted step: drift = off's bits (the tree refitted)");
    int full = 1;
    for (int k = 0; k < 3; k += 2)
        full &= P->set_active_subset(s[k], 0, NULL) == GP_OK && P->compute_forces(s[k], a[k], NULL) == GP_OK;
    ok(full && memcmp(a[0], a[2], 3 * n * sizeof(double)) == 0, "a full call after drifted steps: drift = off's bits");

    /* a drifted step, then a predict that overflows: refused, nothing moved */
    for (int k = 0; k < 3; k += 2) {
        P->predict(s[k], t + 0.01);
        P->set_active_subset(s[k], 16, idx);
        P->compute_forces(s[k], a[k], NULL);
    }
    const gp_status r0 = P->predict(s[0], 1e300), r2 = P->predict(s[2], 1e300);
    ok(r0 == r2 && r0 != GP_OK && P->get_positions(s[0], n, NULL, p[0]) == GP_OK &&
           P->get_positions(s[2], n, NULL, p[2]) == GP_OK && memcmp(p[0], p[2], 3 * n * sizeof(double)) == 0,
       "a predict that overflows after an owed one: refused as drift = off refuses it, every position as there");

    for (int k = 0; k < 3; k++) P->finalize(s[k]);
    R->finalize(x);
    for (int k = 0; k < 3; k++) { free(p[k]); free(a[k]); }
    free(pos); free(vel); free(acc); free(mass); free(tt); free(all); free(ax); free(nv); free(na); free(nt); free(idx);
    return done_testing();
}
