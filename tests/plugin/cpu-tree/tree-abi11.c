/* SPDX-License-Identifier: Apache-2.0 */
/* tree-abi11: cpu-tree's ABI 1.1 calls.
 *   - predict equals the host's own evaluation of the ABI expression bit
 *     for bit (this file is compiled with -ffp-contract=off), for 1 and 2
 *     threads;
 *   - a block-step run driven through set_state + predict + get_positions
 *     gives the same positions, forces, builds and refits, bit for bit, as
 *     one driven through update_positions of the host's prediction, with
 *     rebuild=auto (and a rebuild seen on the way), always and 3;
 *   - a source subset: forces within tree error of cpu-direct with the same
 *     subset, exact at theta = 0 in double; active particles that are and
 *     are not sources; compute_field; the same bits for 1 and 2 threads;
 *     (0, NULL) restores the very same forces as before; interactions (from
 *     get_stats) scale with the subset, not with n;
 *   - the acceleration MAC takes |a_old| from the held state's
 *     accelerations where no earlier call gave one (no bh pass), and runs
 *     the bh pass where the state's are zero;
 *   - update_masses refits (no build) and equals a fresh set_particles with
 *     the new masses: bit for bit while positions and the set of massive
 *     particles are those of the last build, within tree error (exact at
 *     theta = 0) when particles gain or lose all their mass.
 * Plugins are found through GP_BUILD (default: the build tree it was
 * compiled in). */
#include "tap.h"

#include <stdint.h>

#include "gravplug.h"
#include "gravplug_loader.h"

#define N 20000

static double pos[3 * N], vel[3 * N], mass[N];
static const gp_api *T, *D;
static gp_plugin *plugins[2];
static int nplugins;

static uint64_t rs = 99991;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static void plummer(void)
{
    for (size_t i = 0; i < N; i++) {
        double r = 0.59 / sqrt(pow(urand() * 0.999, -2.0 / 3.0) - 1.0);
        double z = 2 * urand() - 1, ph = 6.283185307179586 * urand(), s = sqrt(1 - z * z);
        pos[3 * i] = r * s * cos(ph); pos[3 * i + 1] = r * s * sin(ph); pos[3 * i + 2] = r * z;
        for (int c = 0; c < 3; c++) vel[3 * i + c] = 0.5 * (urand() - 0.5);
        mass[i] = (0.5 + urand()) / N;
    }
}

static const gp_api *load(const char *name)
{
    const char *b = getenv("GP_BUILD");
    char path[4096], err[1024];
    if (b) snprintf(path, sizeof path, "%s/plugins/gravplug-%s.so", b, name);
    else snprintf(path, sizeof path, "%s/gravplug-%s.so", GP_BUILD_PLUGIN_DIR, name);
    gp_plugin *pl;
    if (gp_plugin_open(path, &pl, err, sizeof err) != GP_OK) {
        diag("%s", err);
        return NULL;
    }
    plugins[nplugins++] = pl;
    return gp_plugin_api(pl);
}

static gp_solver *make(const gp_api *api, const char *kv)
{
    gp_solver *s;
    if (api->init(&s, NULL) != GP_OK) bail("init failed");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", kv);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        *eq = 0;
        if (api->set_param(s, tok, eq + 1) != GP_OK) bail("set_param failed");
    }
    return s;
}

/* The ABI's prediction, as a host evaluates it (no FMA: -ffp-contract=off). */
static double host_predict(double x, double v, double a, double dt)
{
    double h = 0.5 * dt * dt;
    double xv = x + dt * v;
    return xv + h * a;
}

static gp_stats stats(const gp_api *api, gp_solver *s)
{
    gp_stats st = { .struct_size = sizeof st };
    api->get_stats(s, &st);
    return st;
}

static uint64_t interactions(const gp_api *api, gp_solver *s)
{
    gp_stats st = stats(api, s);
    return st.pp_interactions + st.pc_interactions;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median and max relative acceleration error of m results */
static void errs(size_t m, const double *a, const double *r, double *med, double *max)
{
    static double e[N];
    for (size_t k = 0; k < m; k++) {
        double d2 = 0, n2 = 0;
        for (int c = 0; c < 3; c++) {
            d2 += (a[3 * k + c] - r[3 * k + c]) * (a[3 * k + c] - r[3 * k + c]);
            n2 += r[3 * k + c] * r[3 * k + c];
        }
        e[k] = sqrt(d2 / n2);
    }
    qsort(e, m, sizeof *e, cmpd);
    *med = e[m / 2];
    *max = e[m - 1];
}

/* ---- predict against the host expression --------------------------------- */
static void test_predict(void)
{
    static double x[3 * N], v[3 * N], a[3 * N], t[N], got[3 * N], want[3 * N], got2[3 * N];
    for (size_t i = 0; i < 3 * N; i++) {
        x[i] = pos[i];
        v[i] = vel[i] * (1 + urand());
        a[i] = 3 * (urand() - 0.5);
    }
    for (size_t i = 0; i < N; i++) t[i] = 0.01 * (double)(i % 7) + 1e-3 * urand();
    const double tp = 0.1234567;
    for (size_t i = 0; i < N; i++)
        for (int c = 0; c < 3; c++)
            want[3 * i + c] = host_predict(x[3 * i + c], v[3 * i + c], a[3 * i + c], tp - t[i]);
    gp_solver *s1 = make(T, "threads=1"), *s2 = make(T, "threads=2");
    gp_status st = T->set_particles(s1, N, pos, mass);
    st |= T->set_particles(s2, N, pos, mass);
    st |= T->set_state(s1, N, NULL, x, v, a, t);
    st |= T->set_state(s2, N, NULL, x, v, a, t);
    st |= T->predict(s1, tp);
    st |= T->predict(s2, tp);
    st |= T->get_positions(s1, N, NULL, got);
    st |= T->get_positions(s2, N, NULL, got2);
    ok(st == GP_OK && memcmp(got, want, sizeof got) == 0,
       "predict (1 thread) equals the host's expression bit for bit (%d particles)", N);
    ok(st == GP_OK && memcmp(got2, want, sizeof got2) == 0, "predict (2 threads) too");
    ok((T->capabilities & GP_CAP_PREDICT) && (T->capabilities & GP_CAP_SOURCE_SUBSET),
       "cpu-tree advertises GP_CAP_PREDICT and GP_CAP_SOURCE_SUBSET");
    T->finalize(s1);
    T->finalize(s2);
}

/* ---- a block-step run through 1.1 and through 1.0 ------------------------ */
static void test_paths(const char *kv, int want_auto_rebuild)
{
    enum { STEPS = 24 };
    static double x[3 * N], v[3 * N], a[3 * N], t[N], xp[3 * N];
    static double accA[3 * N], accB[3 * N], potA[N], potB[N], gotA[3 * N];
    static uint32_t act[N];
    const double dt = 0.03;
    gp_solver *A = make(T, kv), *B = make(T, kv);
    memcpy(x, pos, sizeof x);
    memcpy(v, vel, sizeof v);
    for (size_t i = 0; i < 3 * N; i++) a[i] = 0;
    for (size_t i = 0; i < N; i++) t[i] = 0;
    gp_status st = T->set_particles(A, N, x, mass);
    st |= T->set_particles(B, N, x, mass);
    st |= T->set_state(A, N, NULL, x, v, a, t);
    int same_pos = 1, same_force = 1, same_stats = 1;
    for (int step = 1; step <= STEPS && st == GP_OK; step++) {
        double tn = step * dt;
        /* the host's prediction of everyone (the 1.0 path ships all of it) */
        for (size_t i = 0; i < N; i++)
            for (int c = 0; c < 3; c++)
                xp[3 * i + c] = host_predict(x[3 * i + c], v[3 * i + c], a[3 * i + c], tn - t[i]);
        /* active: a quarter, rotating; every sixth step all */
        size_t na = 0;
        for (size_t i = 0; i < N; i++)
            if (step % 6 == 0 || (i + (size_t)step) % 4 == 0) act[na++] = (uint32_t)i;
        st |= T->predict(A, tn);
        st |= T->get_positions(A, na, act, gotA);
        for (size_t k = 0; k < na && same_pos; k++)
            same_pos = memcmp(&gotA[3 * k], &xp[3 * (size_t)act[k]], 3 * sizeof(double)) == 0;
        st |= T->update_positions(B, xp);
        st |= T->set_active_subset(A, na == N ? 0 : na, act);
        st |= T->set_active_subset(B, na == N ? 0 : na, act);
        st |= T->compute_forces(A, accA, potA);
        st |= T->compute_forces(B, accB, potB);
        same_force &= memcmp(accA, accB, 3 * na * sizeof(double)) == 0 &&
                      memcmp(potA, potB, na * sizeof(double)) == 0;
        gp_stats sa = stats(T, A), sb = stats(T, B);
        same_stats &= sa.tree_builds == sb.tree_builds && sa.tree_refits == sb.tree_refits &&
                      sa.pp_interactions == sb.pp_interactions && sa.pc_interactions == sb.pc_interactions;
        /* correct the active ones: new state at tn */
        for (size_t k = 0; k < na; k++) {
            size_t i = act[k];
            for (int c = 0; c < 3; c++) {
                x[3 * i + c] = gotA[3 * k + c];
                v[3 * i + c] += dt * accA[3 * k + c];
                a[3 * i + c] = accA[3 * k + c];
            }
            t[i] = tn;
        }
        static double xs[3 * N], vs[3 * N], as[3 * N], ts[N];
        for (size_t k = 0; k < na; k++) {
            size_t i = act[k];
            memcpy(&xs[3 * k], &x[3 * i], 3 * sizeof(double));
            memcpy(&vs[3 * k], &v[3 * i], 3 * sizeof(double));
            memcpy(&as[3 * k], &a[3 * i], 3 * sizeof(double));
            ts[k] = tn;
        }
        st |= T->set_state(A, na, act, xs, vs, as, ts);
    }
    gp_stats sa = stats(T, A);
    ok(st == GP_OK && same_pos, "%s: get_positions after predict = the host's prediction, %d steps", kv, STEPS);
    ok(st == GP_OK && same_force, "%s: forces through set_state+predict = through update_positions, bit for bit", kv);
    ok(st == GP_OK && same_stats, "%s: same builds (%llu), refits (%llu) and interactions on both paths", kv,
       (unsigned long long)sa.tree_builds, (unsigned long long)sa.tree_refits);
    if (want_auto_rebuild)
        ok(sa.tree_builds > 1 && sa.tree_refits > 0,
           "%s: the run saw rebuild=auto decide a rebuild (%llu builds, %llu refits)", kv,
           (unsigned long long)sa.tree_builds, (unsigned long long)sa.tree_refits);
    T->finalize(A);
    T->finalize(B);
}

/* ---- the acceleration MAC's |a_old| from the held state ------------------- */

/* After set_particles the acceleration MAC has no previous |a|. A held state
 * (set_state's a_i) supplies it, so no bh pass runs: the forces are those of
 * an instance whose previous call gave the same |a| (update_positions keeps
 * |a_old|), bit for bit, with the same interactions. A state with zero
 * accelerations supplies nothing: the bh pass runs, as without a state. */
static void test_aold_from_state(void)
{
    static double a1[3 * N], a2[3 * N], b1[3 * N], c1[3 * N], d1[3 * N], zero[3 * N], t0[N];
    const char *kv = "eps=0.01 mac=acceleration delta_acc=0.002";
    gp_solver *A = make(T, kv), *B = make(T, kv), *C = make(T, kv), *Dd = make(T, kv);
    gp_status st = T->set_particles(A, N, pos, mass);
    st |= T->compute_forces(A, a1, NULL);                 /* bh pass, then the MAC */
    uint64_t i_first = interactions(T, A);
    st |= T->update_positions(A, pos);
    st |= T->compute_forces(A, a2, NULL);                 /* |a_old| = |a1| */
    uint64_t i_second = interactions(T, A) - i_first;
    st |= T->set_particles(B, N, pos, mass);
    st |= T->set_state(B, N, NULL, pos, vel, a1, t0);
    st |= T->compute_forces(B, b1, NULL);                 /* |a_old| from the state */
    ok(st == GP_OK && memcmp(a2, b1, sizeof a2) == 0,
       "acceleration MAC after set_particles + set_state: |a_old| from the state's accelerations, "
       "the same bits as after a call that gave them");
    ok(st == GP_OK && interactions(T, B) == i_second && i_second < i_first,
       "... and no bh pass: %llu interactions, as the second call's (the first, with it: %llu)",
       (unsigned long long)interactions(T, B), (unsigned long long)i_first);
    st |= T->set_particles(C, N, pos, mass);
    st |= T->set_state(C, N, NULL, pos, vel, zero, t0);
    st |= T->compute_forces(C, c1, NULL);
    st |= T->set_particles(Dd, N, pos, mass);
    st |= T->update_positions(Dd, pos);
    st |= T->compute_forces(Dd, d1, NULL);
    ok(st == GP_OK && memcmp(c1, d1, sizeof c1) == 0 && interactions(T, C) == interactions(T, Dd),
       "a state with zero accelerations gives no |a_old|: the bh pass runs, as without a state");
    T->finalize(A);
    T->finalize(B);
    T->finalize(C);
    T->finalize(Dd);
}

/* ---- source subsets -------------------------------------------------------- */
static void test_sources(void)
{
    enum { NSRC = 4000, NACT = 3000, M = 500 };
    static uint32_t src[NSRC], act[NACT];
    static double at[3 * NACT], pt[NACT], ad[3 * NACT], pd[NACT], all0[3 * NACT], all1[3 * NACT];
    static double pts[3 * M], ft[3 * M], fd[3 * M], a1[3 * NACT], a2[3 * NACT];
    /* sources: every 5th particle; active: every 7th and some outside the
     * sources, so targets both are and are not sources */
    for (int k = 0; k < NSRC; k++) src[k] = (uint32_t)(5 * k);
    for (int k = 0; k < NACT; k++) act[k] = (uint32_t)((7 * k + 3) % N);
    for (int i = 0; i < 3 * M; i++) pts[i] = 2 * (urand() - 0.5);
    int n_in = 0;
    for (int k = 0; k < NACT; k++) n_in += act[k] % 5 == 0;

    gp_solver *d = make(D, "eps=0.01");
    gp_status st = D->set_particles(d, N, pos, mass);
    st |= D->set_source_subset(d, NSRC, src);
    st |= D->set_active_subset(d, NACT, act);
    st |= D->compute_forces(d, ad, pd);
    st |= D->compute_field(d, M, pts, fd, NULL);

    gp_solver *s = make(T, "eps=0.01");
    st |= T->set_particles(s, N, pos, mass);
    st |= T->set_active_subset(s, NACT, act);
    st |= T->compute_forces(s, all0, NULL);
    uint64_t i0 = interactions(T, s);
    st |= T->compute_forces(s, all0, NULL);
    uint64_t i_all = interactions(T, s) - i0;
    st |= T->set_source_subset(s, NSRC, src);
    uint64_t i1 = interactions(T, s);
    st |= T->compute_forces(s, at, pt);
    uint64_t i_sub = interactions(T, s) - i1;
    double med, max, fmed, fmax;
    errs(NACT, at, ad, &med, &max);
    ok(st == GP_OK && med < 3e-4 && max < 2e-2,
       "source subset of %d, %d active (%d of them sources): median %.1e, max %.1e vs cpu-direct "
       "with the same subset", NSRC, NACT, n_in, med, max);
    st |= T->compute_field(s, M, pts, ft, NULL);
    errs(M, ft, fd, &fmed, &fmax);
    ok(st == GP_OK && fmed < 3e-4 && fmax < 2e-2, "compute_field uses the subset: median %.1e, max %.1e",
       fmed, fmax);
    ok(i_sub < 0.6 * (double)i_all,
       "interactions follow the sources: %.0f per target with %d of %d sources, %.0f with all",
       (double)i_sub / NACT, NSRC, N, (double)i_all / NACT);
    /* 200 sources: at most 200 particle interactions per target */
    st |= T->set_source_subset(s, 200, src);
    uint64_t i2 = interactions(T, s);
    st |= T->compute_forces(s, at, NULL);
    ok(st == GP_OK && (double)(interactions(T, s) - i2) <= 200.0 * NACT,
       "200 sources: %.0f interactions per target (<= 200)", (double)(interactions(T, s) - i2) / NACT);
    st |= T->set_source_subset(s, 0, NULL);
    st |= T->compute_forces(s, all1, NULL);
    ok(st == GP_OK && memcmp(all0, all1, sizeof all0) == 0,
       "set_source_subset(0, NULL) restores the very forces of all sources");

    /* all active, threads 1 vs 2 */
    {
        static double b1[3 * N], b2[3 * N];
        gp_solver *s1 = make(T, "eps=0.01 threads=1"), *s2 = make(T, "eps=0.01 threads=2");
        st |= T->set_particles(s1, N, pos, mass);
        st |= T->set_particles(s2, N, pos, mass);
        st |= T->set_source_subset(s1, NSRC, src);
        st |= T->set_source_subset(s2, NSRC, src);
        st |= T->compute_forces(s1, b1, NULL);
        st |= T->compute_forces(s2, b2, NULL);
        ok(st == GP_OK && memcmp(b1, b2, sizeof b1) == 0,
           "source subset, all %d active: 1 and 2 threads give the same bits", N);
        T->finalize(s1);
        T->finalize(s2);
    }
    /* exact: theta 0 in double */
    {
        gp_solver *x = make(T, "eps=0.01 theta=0 precision=double");
        st |= T->set_particles(x, N, pos, mass);
        st |= T->set_source_subset(x, NSRC, src);
        st |= T->set_active_subset(x, NACT, act);
        st |= T->compute_forces(x, a1, NULL);
        errs(NACT, a1, ad, &med, &max);
        ok(st == GP_OK && max < 1e-12, "theta 0, double: the source subset sum is exact (max %.1e)", max);
        /* positions move: the subset tree is refitted, still exact */
        static double moved[3 * N];
        for (size_t i = 0; i < 3 * N; i++) moved[i] = pos[i] + 0.01 * (urand() - 0.5);
        st |= T->update_positions(x, moved);
        st |= T->compute_forces(x, a1, NULL);
        st |= D->update_positions(d, moved);
        st |= D->compute_forces(d, a2, NULL);
        errs(NACT, a1, a2, &med, &max);
        ok(st == GP_OK && max < 1e-12, "after update_positions the subset tree follows (max %.1e)", max);
        st |= D->update_positions(d, pos);
        T->finalize(x);
    }
    /* moves while a subset is set skip the main tree's moments; clearing
     * the subset brings them back: the same bits as a solver that never
     * had a subset */
    {
        static double moved[3 * N], c1[3 * N], c2[3 * N];
        for (size_t i = 0; i < 3 * N; i++) moved[i] = pos[i] + 0.01 * (urand() - 0.5);
        gp_solver *x = make(T, "eps=0.01"), *y = make(T, "eps=0.01");
        st |= T->set_particles(x, N, pos, mass);
        st |= T->set_particles(y, N, pos, mass);
        st |= T->set_source_subset(x, NSRC, src);
        st |= T->update_positions(x, moved);
        st |= T->compute_forces(x, c1, NULL);
        st |= T->set_source_subset(x, 0, NULL);
        st |= T->compute_forces(x, c1, NULL);
        st |= T->update_positions(y, moved);
        st |= T->compute_forces(y, c2, NULL);
        ok(st == GP_OK && memcmp(c1, c2, sizeof c1) == 0,
           "moved under a source subset, then cleared: the same bits as without the subset");
        T->finalize(x);
        T->finalize(y);
    }
    T->finalize(s);
    D->finalize(d);
}

/* ---- update_masses ----------------------------------------------------------- */
/* update_masses against a fresh set_particles, on a tree solver and an
 * exact one (theta 0, double): both start from masses `before` (forces
 * computed first when forces_first), take update_masses(k, idx, m), and
 * their forces are compared with those of fresh solvers given `after`.
 * builds: the tree builds the update and its force call made. */
typedef struct mass_change { double med, max, max_exact; uint64_t builds; } mass_change;
static mass_change update_vs_fresh(const double *before, int forces_first,
                                   size_t k, const uint32_t *idx, const double *m, const double *after,
                                   gp_status *st)
{
    static const char exact[] = "eps=0.01 theta=0 precision=double";
    static double a[3 * N], ae[3 * N], af[3 * N], aef[3 * N];
    gp_solver *t = make(T, "eps=0.01"), *e = make(T, exact);
    gp_solver *tf = make(T, "eps=0.01"), *ef = make(T, exact);
    *st |= T->set_particles(t, N, pos, before);
    *st |= T->set_particles(e, N, pos, before);
    if (forces_first) {
        *st |= T->compute_forces(t, a, NULL);
        *st |= T->compute_forces(e, ae, NULL);
    }
    gp_stats b0 = stats(T, t);
    *st |= T->update_masses(t, k, idx, m);
    *st |= T->update_masses(e, k, idx, m);
    *st |= T->compute_forces(t, a, NULL);
    *st |= T->compute_forces(e, ae, NULL);
    gp_stats b1 = stats(T, t);
    *st |= T->set_particles(tf, N, pos, after);
    *st |= T->set_particles(ef, N, pos, after);
    *st |= T->compute_forces(tf, af, NULL);
    *st |= T->compute_forces(ef, aef, NULL);
    mass_change c;
    double med_exact;
    errs(N, a, af, &c.med, &c.max);
    errs(N, ae, aef, &med_exact, &c.max_exact);
    c.builds = b1.tree_builds - b0.tree_builds;
    T->finalize(t); T->finalize(e); T->finalize(tf); T->finalize(ef);
    return c;
}

static void test_masses(void)
{
    enum { K = 3000 };
    static double m2[N], newm[K], a1[3 * N], a2[3 * N], p1[N], p2[N];
    static uint32_t idx[K];
    for (int k = 0; k < K; k++) {
        idx[k] = (uint32_t)((k * 13 + 1) % N);
        newm[k] = mass[idx[k]] * (0.3 + urand());
    }
    memcpy(m2, mass, sizeof m2);
    for (int k = 0; k < K; k++) m2[idx[k]] = newm[k];
    gp_solver *s = make(T, "eps=0.01"), *f = make(T, "eps=0.01");
    gp_status st = T->set_particles(s, N, pos, mass);
    st |= T->compute_forces(s, a1, p1);
    gp_stats s0 = stats(T, s);
    st |= T->update_masses(s, K, idx, newm);
    st |= T->compute_forces(s, a1, p1);
    gp_stats s1 = stats(T, s);
    st |= T->set_particles(f, N, pos, m2);
    st |= T->compute_forces(f, a2, p2);
    ok(st == GP_OK && s1.tree_builds == s0.tree_builds && s1.tree_refits == s0.tree_refits + 1,
       "update_masses refits (builds %llu -> %llu, refits %llu -> %llu)",
       (unsigned long long)s0.tree_builds, (unsigned long long)s1.tree_builds,
       (unsigned long long)s0.tree_refits, (unsigned long long)s1.tree_refits);
    ok(st == GP_OK && memcmp(a1, a2, sizeof a1) == 0 && memcmp(p1, p2, sizeof p1) == 0,
       "same positions, same massive set: update_masses = a fresh set_particles, bit for bit");

    /* some lose all their mass: they stay in the tree with mass 0 (refit) */
    {
        enum { Z = 300 };
        static double mz[N];
        uint32_t zi[Z];
        double zm[Z];
        memcpy(mz, mass, sizeof mz);
        for (int k = 0; k < Z; k++) { zi[k] = (uint32_t)((k * 61 + 5) % N); zm[k] = 0; mz[zi[k]] = 0; }
        /* forces first: a tree to refit (set_particles leaves the build to
         * the first call that walks one) */
        mass_change c = update_vs_fresh(mass, 1, Z, zi, zm, mz, &st);
        ok(st == GP_OK && c.builds == 0 && c.med < 3e-4 && c.max < 2e-2 && c.max_exact < 1e-12,
           "masses > 0 -> 0: a refit, no build; fresh set_particles to tree error (median %.1e, "
           "max %.1e), exact at theta 0 (max %.1e)", c.med, c.max, c.max_exact);
    }

    /* some lose all their mass, some massless ones gain mass */
    {
        static double m3[N], m4[N];
        memcpy(m3, m2, sizeof m3);
        for (int i = 0; i < N; i += 10) m3[i] = 0;          /* massless from the start */
        memcpy(m4, m3, sizeof m4);
        enum { J = 200 };
        uint32_t jdx[J];
        double jm[J];
        for (int k = 0; k < J; k++) {
            jdx[k] = (uint32_t)(k * 50 + (k % 2 ? 0 : 3));   /* even k: massive -> 0, odd: 0 -> massive */
            jm[k] = k % 2 ? 2.0 / N : 0.0;
            m4[jdx[k]] = jm[k];
        }
        mass_change c = update_vs_fresh(m3, 1, J, jdx, jm, m4, &st);
        ok(st == GP_OK && c.med < 3e-4 && c.max < 2e-2,
           "masses 0 <-> > 0: update_masses matches a fresh set_particles to tree error (median %.1e, max %.1e)",
           c.med, c.max);
        ok(st == GP_OK && c.max_exact < 1e-12, "... and exactly at theta 0 in double (max %.1e)", c.max_exact);
        ok(c.builds == 1, "a massless particle gaining mass rebuilds the tree once (it was not a source)");
    }

    /* with a source subset: its tree is refitted with the new masses */
    {
        enum { NS = 5000 };
        static uint32_t src[NS];
        static double ad[3 * N], at[3 * N];
        for (int k = 0; k < NS; k++) src[k] = (uint32_t)(4 * k);
        gp_solver *d = make(D, "eps=0.01"), *z = make(T, "eps=0.01 theta=0 precision=double");
        st |= D->set_particles(d, N, pos, mass);
        st |= T->set_particles(z, N, pos, mass);
        st |= D->set_source_subset(d, NS, src);
        st |= T->set_source_subset(z, NS, src);
        st |= T->compute_forces(z, at, NULL);
        st |= D->update_masses(d, K, idx, newm);
        st |= T->update_masses(z, K, idx, newm);
        st |= D->compute_forces(d, ad, NULL);
        st |= T->compute_forces(z, at, NULL);
        double med, max;
        errs(N, at, ad, &med, &max);
        ok(st == GP_OK && max < 1e-12, "update_masses with a source subset: exact at theta 0 (max %.1e)", max);
        D->finalize(d);
        T->finalize(z);
    }
    T->finalize(s); T->finalize(f);
}

int main(void)
{
    T = load("cpu-tree");
    D = load("cpu-direct");
    if (!T || !D) skip_all("cpu-tree or cpu-direct plugin not built");
    if (!GRAVPLUG_API_HAS(T, update_masses)) bail("cpu-tree lacks the ABI 1.1 calls");
    plan_lazy();
    plummer();
    test_predict();
    test_paths("eps=0.01", 1);
    test_paths("eps=0.01 rebuild=always", 0);
    test_paths("eps=0.01 rebuild=3 mac=acceleration", 0);
    test_aold_from_state();
    test_sources();
    test_masses();
    for (int k = 0; k < nplugins; k++) gp_plugin_close(plugins[k]);
    return done_testing();
}
