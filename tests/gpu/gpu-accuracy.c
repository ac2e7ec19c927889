/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-accuracy.c — the CUDA plugins against cpu-direct (the exact double
 * reference) on a Plummer sphere: cuda-direct to Chamomile's ~1e-6 in mixed
 * precision, cuda-tree's median/99th-percentile force errors per MAC,
 * theta = 0 (the walk without approximation), active subsets, refits,
 * compute_field and bit-identical reruns. Without a device: 1..0 # SKIP.
 *
 * Bounds: cuda-direct's come from Hamada & Iitaka's Table 2 (max 4.3e-7 at
 * N = 16384 for their blocked scheme); the max with eps = 0 gets room for
 * float positions (a close pair's separation carries the coordinates'
 * rounding, ~6e-8 of the system size);
 * cuda-tree's are the usual tree-code numbers for theta = 0.5 with
 * quadrupoles (median ~1e-4) with a margin of ~10. They were written
 * without a GPU to run on: the first run on one reports the measured values
 * (diag lines) next to each bound.
 */
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"

/* GP_GPU_TEST_N overrides the size (the CPU-emulated run uses a small one) */
static size_t N = 16384;

static gpu_plugin ref_p, dir_p, tree_p;


static void set(const gp_api *api, gp_solver *s, const char *k, const char *v)
{
    if (api->set_param(s, k, v) != GP_OK) diag("%s set %s=%s: %s", api->name, k, v, api->last_error(s));
}

/* forces (and potentials) of the active subset (NULL: all) */
static int forces(const gp_api *api, gp_solver *s, size_t n, const double *pos, const double *mass,
                  size_t na, const uint32_t *idx, double *acc, double *pot)
{
    if (pos && api->set_particles(s, n, pos, mass) != GP_OK) goto fail;
    if (api->set_active_subset(s, idx ? na : 0, idx) != GP_OK) goto fail;
    if (api->compute_forces(s, acc, pot) != GP_OK) goto fail;
    return 0;
fail:
    diag("%s: %s", api->name, api->last_error(s));
    return -1;
}

static void check_err(const char *what, size_t n, int dim, const double *got, const double *want,
                      double max_median, double max_p99, double max_max)
{
    tl_errstat e = tl_relerr(n, dim, got, want);
    diag("%s: median %.3g, 99th %.3g, max %.3g", what, e.median, e.p99, e.max);
    ok(e.median <= max_median && e.p99 <= max_p99 && e.max <= max_max,
       "%s within (median %.0e, 99th %.0e, max %.0e)", what, max_median, max_p99, max_max);
}

int main(void)
{
    char why[1200];
    if (gpu_plugin_open(&dir_p, "cuda-direct", why, sizeof why) != 0) skip_all(why);
    if (gpu_plugin_open(&tree_p, "cuda-tree", why, sizeof why) != 0) skip_all(why);
    if (gpu_plugin_open(&ref_p, "cpu-direct", why, sizeof why) != 0) skip_all(why);
    const gp_api *R = ref_p.api, *D = dir_p.api, *T = tree_p.api;
    {
        gp_solver *probe = NULL;
        gp_status st = D->init(&probe, NULL);
        if (st == GP_ERR_DEVICE) {
            snprintf(why, sizeof why, "no CUDA device: %s", D->last_error(NULL));
            skip_all(why);
        }
        if (st == GP_OK) D->finalize(probe);
    }
    plan_lazy();
    if (getenv("GP_GPU_TEST_N")) N = (size_t)atol(getenv("GP_GPU_TEST_N"));
    if (N < 1024) N = 1024;

    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    double *pos2 = malloc(3 * N * sizeof *pos2);
    double *ra = malloc(3 * N * sizeof *ra), *rp = malloc(N * sizeof *rp);
    double *ra_e = malloc(3 * N * sizeof *ra_e), *rp_e = malloc(N * sizeof *rp_e);
    double *ga = malloc(3 * N * sizeof *ga), *gpot = malloc(N * sizeof *gpot);
    double *gb = malloc(3 * N * sizeof *gb);
    uint32_t *idx = malloc(N * sizeof *idx);
    if (!pos || !mass || !pos2 || !ra || !rp || !ra_e || !rp_e || !ga || !gpot || !gb || !idx) bail("out of memory");
    tl_plummer(N, 20260522, 1.0, 30.0, pos, mass);
    mass[7] = 0.0; /* a massless test particle */

    gp_solver *ref = gpu_plugin_make(R, NULL, NULL, NULL, NULL);
    gp_solver *ref_e = gpu_plugin_make(R, "eps", "0.01", NULL, NULL);
    if (!ref || !ref_e) bail("cpu-direct does not init");
    if (forces(R, ref, N, pos, mass, 0, NULL, ra, rp) || forces(R, ref_e, N, pos, mass, 0, NULL, ra_e, rp_e))
        bail("cpu-direct reference failed");

    /* ---- cuda-direct ---------------------------------------------------- */
    gp_solver *d = gpu_plugin_make(D, NULL, NULL, NULL, NULL);
    ok(d != NULL, "cuda-direct init");
    if (d) {
        ok(forces(D, d, N, pos, mass, 0, NULL, ga, gpot) == 0, "cuda-direct mixed, eps = 0");
        check_err("cuda-direct mixed acc", N, 3, ga, ra, 2e-6, 2e-5, 5e-4);
        check_err("cuda-direct mixed pot", N, 1, gpot, rp, 1e-6, 1e-5, 1e-4);
        ok(forces(D, d, N, NULL, NULL, 0, NULL, gb, NULL) == 0 && memcmp(ga, gb, 3 * N * sizeof *ga) == 0,
           "cuda-direct: a second call gives the same bits");
        set(D, d, "precision", "double");
        ok(forces(D, d, N, NULL, NULL, 0, NULL, ga, gpot) == 0, "cuda-direct double");
        check_err("cuda-direct double acc", N, 3, ga, ra, 1e-12, 1e-11, 1e-10);
        check_err("cuda-direct double pot", N, 1, gpot, rp, 1e-12, 1e-11, 1e-10);
        set(D, d, "precision", "single");
        ok(forces(D, d, N, NULL, NULL, 0, NULL, ga, NULL) == 0, "cuda-direct single");
        check_err("cuda-direct single acc", N, 3, ga, ra, 2e-5, 2e-4, 1e-3);
        set(D, d, "precision", "mixed");
        set(D, d, "eps", "0.01");
        ok(forces(D, d, N, NULL, NULL, 0, NULL, ga, gpot) == 0, "cuda-direct mixed, eps = 0.01");
        check_err("cuda-direct eps acc", N, 3, ga, ra_e, 2e-6, 2e-5, 1e-4);
        check_err("cuda-direct eps pot", N, 1, gpot, rp_e, 1e-6, 1e-5, 1e-4);
        /* every 13th particle, in reverse order */
        size_t na = 0;
        for (size_t i = N; i-- > 0;) if (i % 13 == 0) idx[na++] = (uint32_t)i;
        double *want = malloc(3 * na * sizeof *want);
        for (size_t k = 0; k < na; ++k) memcpy(&want[3 * k], &ra_e[3 * idx[k]], 3 * sizeof *want);
        ok(forces(D, d, N, NULL, NULL, na, idx, ga, NULL) == 0, "cuda-direct active subset of %zu", na);
        check_err("cuda-direct subset acc", na, 3, ga, want, 2e-6, 2e-5, 1e-4);
        free(want);
        /* the field at points, one of them on top of particle 3 */
        size_t m = 257;
        for (size_t k = 0; k < m; ++k)
            for (int c = 0; c < 3; ++c) pos2[3 * k + c] = pos[3 * (k * 61 % N) + c] * 1.1 + 0.01;
        memcpy(&pos2[0], &pos[9], 3 * sizeof *pos2);
        double *fa = malloc(3 * m * sizeof *fa), *fp = malloc(m * sizeof *fp);
        ok(R->compute_field(ref_e, m, pos2, fa, fp) == GP_OK, "cpu-direct field");
        ok(D->compute_field(d, m, pos2, ga, gpot) == GP_OK, "cuda-direct field");
        check_err("cuda-direct field acc", m, 3, ga, fa, 2e-6, 2e-5, 1e-4);
        check_err("cuda-direct field pot", m, 1, gpot, fp, 1e-6, 1e-5, 1e-4);
        free(fa);
        free(fp);
        D->finalize(d);
    }

    /* ---- cuda-tree: each MAC at its usual setting ------------------------ */
    static const struct { const char *mac, *key, *val; double med, p99; } macs[] = {
        {"bh", "theta", "0.5", 1e-3, 1e-2},
        {"bmax", "theta", "0.5", 1e-3, 1e-2},
        {"multipole", "theta", "0.5", 1e-3, 1e-2},
        {"acceleration", "delta_acc", "0.0078125", 5e-3, 3e-2},
    };
    for (size_t k = 0; k < sizeof macs / sizeof macs[0]; ++k) {
        gp_solver *t = gpu_plugin_make(T, "mac", macs[k].mac, macs[k].key, macs[k].val);
        if (!t) { ok(0, "cuda-tree init with mac = %s", macs[k].mac); continue; }
        char what[128];
        int fail = forces(T, t, N, pos, mass, 0, NULL, ga, gpot);
        /* the acceleration MAC needs previous accelerations: second call */
        if (!fail && !strcmp(macs[k].mac, "acceleration")) fail = forces(T, t, N, NULL, NULL, 0, NULL, ga, gpot);
        ok(!fail, "cuda-tree mac = %s runs", macs[k].mac);
        snprintf(what, sizeof what, "cuda-tree %s acc", macs[k].mac);
        check_err(what, N, 3, ga, ra, macs[k].med, macs[k].p99, 1.0);
        snprintf(what, sizeof what, "cuda-tree %s pot", macs[k].mac);
        check_err(what, N, 1, gpot, rp, macs[k].med, macs[k].p99, 1.0);
        T->finalize(t);
    }

    gp_solver *t = gpu_plugin_make(T, "mac", "bh", "theta", "0");
    ok(t != NULL, "cuda-tree init with theta = 0");
    if (t) {
        ok(forces(T, t, N, pos, mass, 0, NULL, ga, gpot) == 0, "cuda-tree theta = 0 (every cell opened)");
        check_err("cuda-tree theta=0 acc", N, 3, ga, ra, 2e-6, 2e-5, 5e-4);
        check_err("cuda-tree theta=0 pot", N, 1, gpot, rp, 1e-6, 1e-5, 1e-4);
        T->finalize(t);
    }

    t = gpu_plugin_make(T, "mac", "bh", "eps", "0.01");
    ok(t != NULL, "cuda-tree init (bh, eps = 0.01)");
    if (t) {
        ok(forces(T, t, N, pos, mass, 0, NULL, ga, gpot) == 0, "cuda-tree bh, eps = 0.01");
        check_err("cuda-tree eps acc", N, 3, ga, ra_e, 1e-3, 1e-2, 1.0);
        ok(forces(T, t, N, NULL, NULL, 0, NULL, gb, NULL) == 0 && memcmp(ga, gb, 3 * N * sizeof *ga) == 0,
           "cuda-tree: a second call gives the same bits");
        set(T, t, "order", "monopole");
        ok(forces(T, t, N, NULL, NULL, 0, NULL, ga, NULL) == 0, "cuda-tree monopole");
        check_err("cuda-tree monopole acc", N, 3, ga, ra_e, 5e-3, 5e-2, 1.0);
        set(T, t, "order", "quadrupole");
        for (int p = 0; p < 2; ++p) {
            const char *prec = p ? "double" : "single";
            set(T, t, "precision", prec);
            ok(forces(T, t, N, NULL, NULL, 0, NULL, ga, NULL) == 0, "cuda-tree precision = %s", prec);
            char what[64];
            snprintf(what, sizeof what, "cuda-tree %s acc", prec);
            check_err(what, N, 3, ga, ra_e, 1e-3, 1e-2, 1.0);
        }
        set(T, t, "precision", "mixed");

        /* 1% active, scattered, in a mixed-up order */
        size_t na = 0;
        for (size_t i = 0; i < N; i += 97) idx[na++] = (uint32_t)((i * 7919) % N);
        double *want = malloc(3 * na * sizeof *want);
        for (size_t k = 0; k < na; ++k) memcpy(&want[3 * k], &ra_e[3 * idx[k]], 3 * sizeof *want);
        ok(forces(T, t, N, NULL, NULL, na, idx, ga, NULL) == 0, "cuda-tree active subset of %zu", na);
        check_err("cuda-tree subset acc", na, 3, ga, want, 1e-3, 1e-2, 1.0);
        free(want);

        /* refit: move everything a little, then compare with a fresh reference */
        for (size_t i = 0; i < 3 * (size_t)N; ++i) pos2[i] = pos[i] * 1.01 + 0.001 * (double)(i % 3);
        gp_stats st0 = {.struct_size = sizeof st0}, st1 = {.struct_size = sizeof st1};
        T->get_stats(t, &st0);
        ok(T->update_positions(t, pos2) == GP_OK, "cuda-tree update_positions");
        ok(T->set_active_subset(t, 0, NULL) == GP_OK && T->compute_forces(t, ga, NULL) == GP_OK,
           "cuda-tree forces after update_positions");
        T->get_stats(t, &st1);
        ok(st1.tree_refits == st0.tree_refits + 1 && st1.tree_builds == st0.tree_builds,
           "the update was a refit (builds %llu -> %llu, refits %llu -> %llu)",
           (unsigned long long)st0.tree_builds, (unsigned long long)st1.tree_builds,
           (unsigned long long)st0.tree_refits, (unsigned long long)st1.tree_refits);
        if (forces(R, ref_e, N, pos2, mass, 0, NULL, gb, NULL) == 0)
            check_err("cuda-tree refit acc", N, 3, ga, gb, 1e-3, 1e-2, 1.0);

        /* the field at points */
        size_t m = 1000;
        for (size_t k = 0; k < m; ++k)
            for (int c = 0; c < 3; ++c) pos2[3 * k + c] = pos[3 * (k * 13 % N) + c] * 0.9 - 0.02;
        double *fa = malloc(3 * m * sizeof *fa);
        ok(R->set_particles(ref_e, N, pos, mass) == GP_OK && R->compute_field(ref_e, m, pos2, fa, NULL) == GP_OK,
           "cpu-direct field");
        ok(T->set_particles(t, N, pos, mass) == GP_OK && T->compute_field(t, m, pos2, ga, NULL) == GP_OK,
           "cuda-tree field");
        check_err("cuda-tree field acc", m, 3, ga, fa, 1e-3, 1e-2, 1.0);
        free(fa);

        /* an outlier at 1e30: no failure, no NaN for the bulk */
        memcpy(pos2, pos, 3 * N * sizeof *pos);
        pos2[3 * 11] = 1e30;
        int okk = forces(T, t, N, pos2, mass, 0, NULL, ga, NULL) == 0;
        size_t bad = 0;
        for (size_t i = 0; i < 3 * (size_t)N; ++i) bad += !isfinite(ga[i]);
        ok(okk && bad == 0, "cuda-tree with one particle at 1e30: %zu non-finite results", bad);
        T->finalize(t);
    }

    R->finalize(ref);
    R->finalize(ref_e);
    free(pos); free(mass); free(pos2); free(ra); free(rp); free(ra_e); free(rp_e);
    free(ga); free(gpot); free(gb); free(idx);
    return done_testing();
}
