/* SPDX-License-Identifier: Apache-2.0 */
/* tree-drift: cpu-tree's drifted tree (drift = on) through block steps of
 * the ABI 1.1 path (set_state, predict, get_positions, an active subset).
 *   - get_positions under the owed predict equals an eager predict's bits;
 *   - the block steps walk the drifted tree (fewer refits than drift = off);
 *   - its forces are within the tree's error of exact sums: rms relative
 *     error at most 2x a refitted tree's (1.70x measured over these 8
 *     steps: the anchor's second moments are kept, not drifted), and
 *     below 1e-2;
 *   - the same bits on 1 and 2 threads;
 *   - get_velocities and compute_field after a drifted step settle the
 *     owed predict: the same answers as drift = off.
 * Plugins are found through GP_BUILD (default: the build tree). */
#include <stdint.h>

#include "plugin-by-name.h"

#define N 8000
#define STEPS 8

static double pos[3 * N], vel[3 * N], acc0[3 * N], mass[N], tt[N];
static uint64_t rs = 424242;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static gp_solver *make(const gp_api *api, const char *kv)
{
    gp_solver *s;
    if (api->init(&s, NULL) != GP_OK) bail("init failed");
    tl_set_params(api, s, kv);
    return s;
}

int main(void)
{
    const gp_api *T = tl_plugin_by_name("cpu-tree"), *X = tl_plugin_by_name("cpu-direct");
    if (!T || !X) bail("plugins not found");
    plan(8);
    for (size_t i = 0; i < N; i++) {
        double r = 0.59 / sqrt(pow(urand() * 0.999, -2.0 / 3.0) - 1.0);
        double z = 2 * urand() - 1, ph = 6.283185307179586 * urand(), s = sqrt(1 - z * z);
        pos[3 * i] = r * s * cos(ph); pos[3 * i + 1] = r * s * sin(ph); pos[3 * i + 2] = r * z;
        for (int c = 0; c < 3; c++) { vel[3 * i + c] = 0.5 * (urand() - 0.5); acc0[3 * i + c] = 0; }
        mass[i] = 1.0 / N;
        tt[i] = 0;
    }
    const char *common = "eps=0.01 theta=0.5 mac=bmax rebuild=auto";
    char kv[256];
    snprintf(kv, sizeof kv, "%s drift=on threads=2", common);
    gp_solver *d2 = make(T, kv);
    snprintf(kv, sizeof kv, "%s drift=on threads=1", common);
    gp_solver *d1 = make(T, kv);
    snprintf(kv, sizeof kv, "%s drift=off threads=2", common);
    gp_solver *r = make(T, kv);
    gp_solver *x = make(X, "eps=0.01");
    gp_solver *tree[3] = { d2, d1, r };
    static double a_all[3 * N];
    for (int k = 0; k < 3; k++) {
        if (T->set_particles(tree[k], N, pos, mass) != GP_OK ||
            T->set_state(tree[k], N, NULL, pos, vel, acc0, tt) != GP_OK ||
            T->predict(tree[k], 0.0) != GP_OK || T->compute_forces(tree[k], a_all, NULL) != GP_OK)
            { diag("%s", T->last_error(tree[k])); bail("setup failed"); };
    }
    static uint32_t idx[N];
    static double p[3][3 * N], a[3][3 * N], ax[3 * N], all[3 * N], nv[3 * N], na[3 * N];
    int pos_same = 1, bits_same = 1, calls_ok = 1;
    double worst_ratio = 0, worst_err = 0;
    for (int step = 1; step <= STEPS; step++) {
        const double t = 0.01 * step;
        size_t m = 0;
        for (uint32_t i = 0; i < N; i++)
            if (urand() < 0.05) idx[m++] = i;
        for (int k = 0; k < 3; k++) {
            calls_ok &= T->predict(tree[k], t) == GP_OK;
            calls_ok &= T->get_positions(tree[k], m, idx, p[k]) == GP_OK;
            calls_ok &= T->set_active_subset(tree[k], m, idx) == GP_OK;
            calls_ok &= T->compute_forces(tree[k], a[k], NULL) == GP_OK;
        }
        pos_same &= memcmp(p[0], p[2], 3 * m * sizeof(double)) == 0 &&
                    memcmp(p[1], p[2], 3 * m * sizeof(double)) == 0;
        bits_same &= memcmp(a[0], a[1], 3 * m * sizeof(double)) == 0;
        /* exact sums at the same positions */
        calls_ok &= T->get_positions(r, N, NULL, all) == GP_OK;
        calls_ok &= X->set_particles(x, N, all, mass) == GP_OK;
        calls_ok &= X->set_active_subset(x, m, idx) == GP_OK;
        calls_ok &= X->compute_forces(x, ax, NULL) == GP_OK;
        double ed = tl_rms_rel(m, a[0], ax), er = tl_rms_rel(m, a[2], ax);
        worst_ratio = fmax(worst_ratio, ed / er);
        worst_err = fmax(worst_err, ed);
        /* the corrector: a kick with the new force, a new state at t */
        for (size_t k = 0; k < m; k++) {
            for (int c = 0; c < 3; c++) {
                nv[3 * k + c] = vel[3 * (size_t)idx[k] + c] + 0.01 * a[2][3 * k + c];
                na[3 * k + c] = a[2][3 * k + c];
            }
            tt[k] = t;
        }
        for (int k = 0; k < 3; k++)
            calls_ok &= T->set_state(tree[k], m, idx, p[2], nv, na, tt) == GP_OK;
    }
    ok(calls_ok, "every call of %d block steps succeeds", STEPS);
    ok(pos_same, "get_positions under an owed predict: the eager predict's bits");
    ok(bits_same, "the drifted tree's forces: the same bits on 1 and 2 threads");
    gp_stats sd = { .struct_size = sizeof sd }, sr = { .struct_size = sizeof sr };
    T->get_stats(d2, &sd);
    T->get_stats(r, &sr);
    ok(sd.tree_refits + sd.tree_builds < sr.tree_refits + sr.tree_builds,
       "block steps walk the drifted tree (%llu refits and builds, %llu with drift = off)",
       (unsigned long long)(sd.tree_refits + sd.tree_builds),
       (unsigned long long)(sr.tree_refits + sr.tree_builds));
    ok(worst_ratio <= 2.0, "drifted tree's rms force error at most 2x a refitted tree's (worst %.3f)",
       worst_ratio);
    ok(worst_err < 1e-2, "drifted tree's rms relative force error %.2e < 1e-2", worst_err);
    /* a drifted step, then calls that read every position */
    const double t = 0.01 * (STEPS + 1);
    static double v0[3 * N], v2[3 * N], f0[3 * N], f2[3 * N];
    const double pts[6] = { 0.1, 0.2, 0.3, -1.0, 0.5, 2.0 };
    for (int k = 0; k < 3; k += 2) {
        T->predict(tree[k], t);
        T->set_active_subset(tree[k], 16, idx);
        T->compute_forces(tree[k], a[k], NULL);
    }
    ok(T->get_velocities(d2, N, NULL, v0) == GP_OK && T->get_velocities(r, N, NULL, v2) == GP_OK &&
           memcmp(v0, v2, sizeof v0) == 0,
       "get_velocities after a drifted step: drift = off's bits");
    ok(T->compute_field(d2, 2, pts, f0, NULL) == GP_OK && T->compute_field(r, 2, pts, f2, NULL) == GP_OK &&
           memcmp(f0, f2, 6 * sizeof(double)) == 0,
       "compute_field after a drifted step: drift = off's bits (the tree refitted)");
    for (int k = 0; k < 3; k++) T->finalize(tree[k]);
    X->finalize(x);
    return done_testing();
}
