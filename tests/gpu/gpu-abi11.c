/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-abi11.c — ABI 1.1 on the CUDA plugins (cuda-direct, cuda-tree),
 * against the host's own arithmetic and against cpu-direct:
 *   - predict equals x + dt*v + (0.5*dt*dt)*a evaluated here without FMA,
 *     bit for bit; particles without a state stay where they were;
 *   - get_positions of all and of a subset;
 *   - forces after set_state + predict equal those after update_positions
 *     with the same positions (bit for bit on cuda-tree: both refit the same
 *     tree; cuda-direct keeps its centre through predict, so to float
 *     rounding there) and cpu-direct's;
 *   - a source subset against cpu-direct with the same subset, active
 *     particles inside and outside it;
 *   - update_masses against a fresh set_particles, bit for bit, and as a
 *     refit (no rebuild) on cuda-tree;
 *   - cuda-tree block steps (set_state, predict, 1% active) refit and never
 *     rebuild;
 *   - cuda-tree's acceleration MAC takes |a_old| from the held state after
 *     set_particles, and bh where the state's accelerations are zero; a
 *     rebuild at another length scale converts the |a_old| it keeps;
 *   - rejections (NaN time, bad index, overflow undone exactly), and
 *     set_particles clearing the state;
 *   - both at extreme scales (positions 1e-30..1e30, masses
 *     1e-50..1e300): the right answer, or an error when the answer is
 *     outside double's range — never GP_OK with 0, NaN or inf;
 *   - the bytes a cuda-tree block step at 1% active moves between host and
 *     device (its debug log): O(n_active), never a copy of all n.
 * Runs on a GPU, and in `make test` on the CPU emulation of CUDA
 * (build/emu/plugins). Without a device: 1..0 # SKIP.
 */
#include <math.h>
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"

static size_t N = 1024;


static int forces(const gp_api *a, gp_solver *s, size_t na, const uint32_t *idx, double *acc, double *pot)
{
    if (a->set_active_subset(s, na, idx) != GP_OK || a->compute_forces(s, acc, pot) != GP_OK) {
        diag("%s: %s", a->name, a->last_error(s));
        return -1;
    }
    return 0;
}

static gp_stats stats(const gp_api *a, gp_solver *s)
{
    gp_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    a->get_stats(s, &st);
    return st;
}

static void check_plugin(const gp_api *P, const gp_api *R, const double *pos, const double *mass)
{
    const char *nm = P->name;
    int tree = !strcmp(nm, "cuda-tree");
    /* cuda-tree: bh theta 0.5; errors against the exact sums are tree errors */
    const char *k1 = tree ? "mac" : NULL, *v1 = tree ? "bh" : NULL;
    double tol_med = tree ? 2e-3 : 1e-5, tol_p99 = tree ? 2e-2 : 1e-4;
    size_t n = N;

    ok((P->capabilities & GP_CAP_PREDICT) && (P->capabilities & GP_CAP_SOURCE_SUBSET) &&
           GRAVPLUG_API_HAS(P, update_masses) && P->set_state && P->predict && P->get_positions &&
           P->set_source_subset && P->update_masses,
       "%s offers ABI 1.1 with GP_CAP_PREDICT and GP_CAP_SOURCE_SUBSET", nm);

    gp_solver *s = gpu_plugin_make(P, "eps", "0.01", k1, v1), *q = gpu_plugin_make(P, "eps", "0.01", k1, v1);
    gp_solver *r = gpu_plugin_make(R, "eps", "0.01", NULL, NULL);
    if (!s || !q || !r) { ok(0, "%s: instances", nm); return; }

    double *x0 = malloc(3 * n * sizeof *x0), *v = malloc(3 * n * sizeof *v), *a = malloc(3 * n * sizeof *a);
    double *t = malloc(n * sizeof *t), *want = malloc(3 * n * sizeof *want), *got = malloc(3 * n * sizeof *got);
    double *fa = malloc(3 * n * sizeof *fa), *fb = malloc(3 * n * sizeof *fb), *fr = malloc(3 * n * sizeof *fr);
    double *pa = malloc(n * sizeof *pa), *pb = malloc(n * sizeof *pb), *m2 = malloc(n * sizeof *m2);
    uint32_t *idx = malloc(n * sizeof *idx), *act = malloc(n * sizeof *act);
    if (!x0 || !v || !a || !t || !want || !got || !fa || !fb || !fr || !pa || !pb || !m2 || !idx || !act)
        bail("out of memory");

    /* ---- set_state + predict against the host's expression -------------- */
    ok(P->set_particles(s, n, pos, mass) == GP_OK && P->set_particles(q, n, pos, mass) == GP_OK,
       "%s set_particles", nm);
    ok(forces(P, s, 0, NULL, fa, NULL) == 0 && forces(P, q, 0, NULL, fb, NULL) == 0, "%s first forces", nm);
    gp_stats st0 = stats(P, s);
    size_t ns = 0; /* every third particle, in reverse order */
    for (size_t i = n; i-- > 0;)
        if (i % 3 == 1) idx[ns++] = (uint32_t)i;
    tl_rng g = {12345};
    for (size_t k = 0; k < ns; ++k) {
        for (int c = 0; c < 3; ++c) {
            x0[3 * k + c] = pos[3 * (size_t)idx[k] + c] + 1e-3 * (tl_uniform(&g) - 0.5);
            v[3 * k + c] = 0.3 * (tl_uniform(&g) - 0.5);
            a[3 * k + c] = 0.1 * (tl_uniform(&g) - 0.5);
        }
        t[k] = 0.01 * (double)(k % 7);
    }
    const double T = 0.0625 + 1.0 / 3.0;
    ok(P->set_state(s, ns, idx, x0, v, a, t) == GP_OK, "%s set_state of %zu particles", nm, ns);
    ok(P->predict(s, T) == GP_OK, "%s predict", nm);
    memcpy(want, pos, 3 * n * sizeof *want);
    for (size_t k = 0; k < ns; ++k)
        for (int c = 0; c < 3; ++c)
            want[3 * (size_t)idx[k] + c] = tl_predict_coord(x0[3 * k + c], v[3 * k + c], a[3 * k + c], T - t[k]);
    ok(P->get_positions(s, n, NULL, got) == GP_OK && memcmp(got, want, 3 * n * sizeof *got) == 0,
       "%s predict equals the unfused host expression bit for bit (unstated particles unmoved)", nm);
    size_t nsub = 0;
    for (size_t i = 0; i < n; i += 5) act[nsub++] = (uint32_t)((i * 7919) % n);
    int same = P->get_positions(s, nsub, act, got) == GP_OK;
    for (size_t k = 0; k < nsub && same; ++k) same = !memcmp(&got[3 * k], &want[3 * (size_t)act[k]], 3 * sizeof *got);
    ok(same, "%s get_positions of a subset of %zu", nm, nsub);

    /* ---- forces after predict == forces after update_positions ----------- */
    ok(P->update_positions(q, want) == GP_OK, "%s update_positions with the predicted positions", nm);
    ok(forces(P, s, 0, NULL, fa, pa) == 0 && forces(P, q, 0, NULL, fb, pb) == 0, "%s forces after both", nm);
    if (tree) {
        ok(!memcmp(fa, fb, 3 * n * sizeof *fa) && !memcmp(pa, pb, n * sizeof *pa),
           "%s: forces after set_state+predict are bit-identical to those after update_positions", nm);
        gp_stats st1 = stats(P, s);
        ok(st1.tree_builds == st0.tree_builds && st1.tree_refits == st0.tree_refits + 1,
           "%s: predict refit the tree (builds %llu -> %llu, refits %llu -> %llu)", nm,
           (unsigned long long)st0.tree_builds, (unsigned long long)st1.tree_builds,
           (unsigned long long)st0.tree_refits, (unsigned long long)st1.tree_refits);
    } else {
        tl_errstat e = tl_relerr(n, 3, fa, fb);
        ok(e.max <= 1e-5, "%s: forces after set_state+predict equal those after update_positions "
                          "(max rel. diff %.2g: centres differ)", nm, e.max);
    }
    ok(R->set_particles(r, n, want, mass) == GP_OK && forces(R, r, 0, NULL, fr, NULL) == 0, "cpu-direct reference");
    tl_errstat e = tl_relerr(n, 3, fa, fr);
    diag("%s after predict vs cpu-direct: median %.3g, 99th %.3g", nm, e.median, e.p99);
    ok(e.median <= tol_med && e.p99 <= tol_p99, "%s forces after predict match cpu-direct", nm);

    /* ---- block steps: set_state of the active ones, predict, 1% active -- */
    if (tree) {
        gp_stats sb = stats(P, s);
        int good = 1;
        double Tk = T;
        for (int step = 0; step < 6 && good; ++step) {
            size_t na = 0;
            for (size_t i = (size_t)step; i < n; i += 97) act[na++] = (uint32_t)i;
            good = P->get_positions(s, na, act, got) == GP_OK;
            for (size_t k = 0; k < na; ++k) t[k] = Tk;
            good = good && P->set_state(s, na, act, got, v, a, t) == GP_OK;
            Tk += 1.0 / 64.0;
            good = good && P->predict(s, Tk) == GP_OK && forces(P, s, na, act, fa, NULL) == 0;
        }
        gp_stats se = stats(P, s);
        ok(good && se.tree_builds == sb.tree_builds && se.tree_refits == sb.tree_refits + 6,
           "%s: 6 block steps with 1%% active refit and never rebuild (builds %llu -> %llu, refits %llu -> %llu)",
           nm, (unsigned long long)sb.tree_builds, (unsigned long long)se.tree_builds,
           (unsigned long long)sb.tree_refits, (unsigned long long)se.tree_refits);
    }

    /* ---- rejections ------------------------------------------------------- */
    ok(P->get_positions(s, n, NULL, want) == GP_OK, "%s positions before the rejections", nm);
    ok(P->predict(s, NAN) == GP_ERR_INVALID_ARGUMENT && P->last_error(s)[0], "%s predict(NaN) is rejected", nm);
    uint32_t badidx[2] = {3, (uint32_t)n};
    ok(P->set_state(s, 2, badidx, x0, v, a, t) == GP_ERR_INVALID_ARGUMENT, "%s set_state index >= n is rejected", nm);
    ok(P->set_state(s, 1, badidx, x0, NULL, a, t) == GP_ERR_INVALID_ARGUMENT, "%s set_state NULL vel is rejected", nm);
    double big[3] = {1e300, 1e300, 1e300}, tb = 0;
    ok(P->set_state(s, 1, badidx, pos + 9, big, big, &tb) == GP_OK, "%s set_state with huge v and a", nm);
    memcpy(&want[9], pos + 9, 3 * sizeof *want);
    ok(P->predict(s, 1e10) == GP_ERR_INVALID_ARGUMENT, "%s predict that overflows is rejected: %s", nm,
       P->last_error(s));
    ok(P->get_positions(s, n, NULL, got) == GP_OK && !memcmp(got, want, 3 * n * sizeof *got),
       "%s: the overflowing predict moved nothing (bit for bit)", nm);
    ok(P->set_particles(s, n, pos, mass) == GP_OK && P->predict(s, 5.0) == GP_OK &&
           P->get_positions(s, n, NULL, got) == GP_OK && !memcmp(got, pos, 3 * n * sizeof *got),
       "%s: set_particles clears the state (predict then moves nothing)", nm);
    gp_solver *fresh = gpu_plugin_make(P, NULL, NULL, NULL, NULL);
    ok(fresh && P->get_positions(fresh, n, NULL, got) == GP_ERR_BAD_STATE &&
           P->predict(fresh, 1.0) == GP_ERR_BAD_STATE,
       "%s: get_positions and predict before set_particles are GP_ERR_BAD_STATE", nm);
    if (fresh) P->finalize(fresh);

    /* ---- source subsets against cpu-direct -------------------------------- */
    size_t nsrc = 0, na = 0;
    for (size_t i = 0; i < n; ++i)
        if (i % 4 == 0 || i % 11 == 0) idx[nsrc++] = (uint32_t)(n - 1 - i);
    for (size_t i = 0; i < n; i += 6) act[na++] = (uint32_t)((i * 31) % n); /* sources and not */
    ok(R->set_particles(r, n, pos, mass) == GP_OK && R->set_source_subset(r, nsrc, idx) == GP_OK &&
           forces(R, r, na, act, fr, pb) == 0, "cpu-direct with a source subset of %zu", nsrc);
    ok(P->set_particles(s, n, pos, mass) == GP_OK && P->set_source_subset(s, nsrc, idx) == GP_OK &&
           forces(P, s, na, act, fa, pa) == 0, "%s with the same source subset", nm);
    e = tl_relerr(na, 3, fa, fr);
    tl_errstat ep = tl_relerr(na, 1, pa, pb);
    diag("%s source subset: acc median %.3g, 99th %.3g; pot median %.3g", nm, e.median, e.p99, ep.median);
    ok(e.median <= tol_med && e.p99 <= tol_p99 && ep.median <= tol_med,
       "%s source subset matches cpu-direct (active particles inside and outside it)", nm);
    ok(forces(P, s, 0, NULL, fa, NULL) == 0 && R->set_active_subset(r, 0, NULL) == GP_OK &&
           R->compute_forces(r, fr, NULL) == GP_OK,
       "%s all active with the source subset", nm);
    e = tl_relerr(n, 3, fa, fr);
    ok(e.median <= tol_med && e.p99 <= tol_p99, "%s all active, source subset: median %.3g", nm, e.median);
    ok(P->set_source_subset(s, 0, NULL) == GP_OK && R->set_source_subset(r, 0, NULL) == GP_OK &&
           forces(P, s, 0, NULL, fa, NULL) == 0 && forces(R, r, 0, NULL, fr, NULL) == 0,
       "%s source subset (0, NULL): all sources again", nm);
    e = tl_relerr(n, 3, fa, fr);
    ok(e.median <= tol_med && e.p99 <= tol_p99, "%s all sources again match cpu-direct", nm);

    /* ---- update_masses against a fresh set_particles ----------------------- */
    memcpy(m2, mass, n * sizeof *m2);
    size_t nm2 = 0;
    for (size_t i = 0; i < n; i += 7) {
        idx[nm2] = (uint32_t)i;
        got[nm2] = i % 2 ? 0.0 : mass[i] * 3.0; /* some become massless */
        m2[i] = got[nm2];
        ++nm2;
    }
    ok(P->set_particles(s, n, pos, mass) == GP_OK && forces(P, s, 0, NULL, fa, NULL) == 0, "%s forces before", nm);
    gp_stats sm0 = stats(P, s);
    ok(P->update_masses(s, nm2, idx, got) == GP_OK && forces(P, s, 0, NULL, fa, pa) == 0,
       "%s update_masses of %zu particles", nm, nm2);
    gp_stats sm1 = stats(P, s);
    ok(P->set_particles(q, n, pos, m2) == GP_OK && forces(P, q, 0, NULL, fb, pb) == 0, "%s fresh set_particles", nm);
    ok(!memcmp(fa, fb, 3 * n * sizeof *fa) && !memcmp(pa, pb, n * sizeof *pa),
       "%s: forces after update_masses are bit-identical to a fresh set_particles", nm);
    if (tree)
        ok(sm1.tree_builds == sm0.tree_builds && sm1.tree_refits == sm0.tree_refits + 1,
           "%s: update_masses refit the moments (builds %llu -> %llu, refits %llu -> %llu)", nm,
           (unsigned long long)sm0.tree_builds, (unsigned long long)sm1.tree_builds,
           (unsigned long long)sm0.tree_refits, (unsigned long long)sm1.tree_refits);
    double neg = -1.0;
    ok(P->update_masses(s, 1, idx, &neg) == GP_ERR_INVALID_ARGUMENT, "%s update_masses rejects a negative mass", nm);

    gp_stats sf = stats(P, s);
    diag("%s transfer seconds so far: %.3g (build %.3g, moments %.3g, walk %.3g)", nm, sf.seconds_transfer,
         sf.seconds_build, sf.seconds_moments, sf.seconds_walk);

    P->finalize(s); P->finalize(q); R->finalize(r);
    free(x0); free(v); free(a); free(t); free(want); free(got); free(fa); free(fb); free(fr);
    free(pa); free(pb); free(m2); free(idx); free(act);
}

/* set_state / get_positions of 2^20 particles: more than the 16 MiB of
 * pinned staging, so the copies go array by array through its two halves,
 * three 8 MiB pieces for each array of 3n doubles (the pipelined path:
 * a half reused after its last copy finished); still bit for bit the
 * host's prediction. */
static void check_large_state(const gp_api *P)
{
    size_t n = (size_t)1 << 20;
    double *pos = malloc(3 * n * sizeof *pos), *v = malloc(3 * n * sizeof *v), *a = malloc(3 * n * sizeof *a);
    double *t = malloc(n * sizeof *t), *m = malloc(n * sizeof *m), *got = malloc(3 * n * sizeof *got);
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!pos || !v || !a || !t || !m || !got || !idx) bail("out of memory");
    tl_rng g = {777};
    for (size_t i = 0; i < 3 * n; ++i) {
        pos[i] = tl_uniform(&g);
        v[i] = tl_uniform(&g) - 0.5;
        a[i] = tl_uniform(&g) - 0.5;
    }
    for (size_t i = 0; i < n; ++i) {
        m[i] = 1.0 / (double)n;
        t[i] = 0.001 * (double)(i % 5);
        idx[i] = (uint32_t)(n - 1 - i);
    }
    gp_solver *s = gpu_plugin_make(P, NULL, NULL, NULL, NULL);
    int good = s && P->set_particles(s, n, pos, m) == GP_OK && P->set_state(s, n, idx, pos, v, a, t) == GP_OK &&
               P->predict(s, 0.37) == GP_OK && P->get_positions(s, n, idx, got) == GP_OK;
    size_t bad = 0;
    for (size_t k = 0; good && k < n; ++k)
        for (int c = 0; c < 3; ++c)
            bad += got[3 * k + c] != tl_predict_coord(pos[3 * k + c], v[3 * k + c], a[3 * k + c], 0.37 - t[k]);
    ok(good && bad == 0, "%s: set_state, predict and get_positions of %zu particles (chunked copies): %zu mismatches",
       P->name, n, bad);
    if (s) P->finalize(s);
    free(pos); free(v); free(a); free(t); free(m); free(got); free(idx);
}

/* ---- the bytes a block step moves (cuda-tree's debug log) --------------- */
typedef struct byte_log {
    unsigned long long h2d, d2h;
    int calls; /* entry points that logged their bytes */
} byte_log;

static void count_bytes(void *user, int level, const char *msg)
{
    byte_log *b = user;
    const char *p = strstr(msg, "host->device ");
    unsigned long long h, d;
    if (level == GP_LOG_DEBUG && p && sscanf(p, "host->device %llu bytes, device->host %llu bytes", &h, &d) == 2) {
        b->h2d += h;
        b->d2h += d;
        b->calls++;
    }
}

/* A cuda-tree instance (eps 0.01, bh) whose debug log adds its bytes to
 * *bl; NULL (and a failed test line) when init refuses. */
static gp_solver *logged_tree(const gp_api *T, byte_log *bl)
{
    gp_param kv[2] = {{"eps", "0.01"}, {"mac", "bh"}};
    gp_init_args ia;
    memset(&ia, 0, sizeof ia);
    ia.struct_size = sizeof ia;
    ia.params = kv;
    ia.n_params = 2;
    ia.device = -1;
    ia.log = count_bytes;
    ia.log_user = bl;
    gp_solver *s = NULL;
    if (T->init(&s, &ia) != GP_OK) {
        ok(0, "cuda-tree with a log: %s", T->last_error(NULL));
        return NULL;
    }
    return s;
}

/* Block steps through ABI 1.1 at 1% active (get_positions of the active,
 * set_state, predict, subset, compute_forces) move at most a fixed 2 KiB
 * plus 256 bytes per active particle (the copies themselves are ~150: index,
 * state in, positions out, results out); a copy of all n positions (24 n
 * bytes) is 8 times that bound. And the counters do see O(n) copies: an
 * ABI 1.0 update_positions moves all of them. */
static void check_block_bytes(const gp_api *T)
{
    size_t n = N > 4096 ? N : 4096;
    byte_log bl = {0, 0, 0};
    gp_solver *s = logged_tree(T, &bl);
    if (!s) return;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass), *x = malloc(3 * n * sizeof *x);
    double *v = calloc(3 * n, sizeof *v), *a = calloc(3 * n, sizeof *a), *t = calloc(n, sizeof *t);
    double *acc = malloc(3 * n * sizeof *acc);
    uint32_t *act = malloc(n * sizeof *act);
    if (!pos || !mass || !x || !v || !a || !t || !acc || !act) bail("out of memory");
    tl_plummer(n, 20261124, 1.0, 30.0, pos, mass);
    for (size_t k = 0; k < 3 * n; ++k) v[k] = 0.01 * (double)((k * 7919) % 101) / 101.0 - 0.005;
    size_t na = 0;
    for (size_t i = 0; i < n; i += 97) act[na++] = (uint32_t)i;
    int good = T->set_particles(s, n, pos, mass) == GP_OK && T->set_active_subset(s, na, act) == GP_OK &&
               T->compute_forces(s, acc, NULL) == GP_OK;
    double Tk = 0;
    unsigned long long worst = 0, worst_bound = 0;
    size_t worst_na = 0;
    int steps_ok = good, logged = 1;
    for (int step = 0; step < 4 && good; ++step) {
        na = 0;
        for (size_t i = (size_t)step; i < n; i += 97) act[na++] = (uint32_t)i;
        bl.h2d = bl.d2h = 0;
        bl.calls = 0;
        good = T->get_positions(s, na, act, x) == GP_OK;
        for (size_t k = 0; k < na; ++k) t[k] = Tk;
        good = good && T->set_state(s, na, act, x, v, a, t) == GP_OK;
        Tk += 1.0 / 64.0;
        good = good && T->predict(s, Tk) == GP_OK && T->set_active_subset(s, na, act) == GP_OK &&
               T->compute_forces(s, acc, NULL) == GP_OK;
        unsigned long long bytes = bl.h2d + bl.d2h, bound = 2048 + 256 * (unsigned long long)na;
        logged = logged && bl.calls == 4; /* get_positions, set_state, predict, compute_forces */
        if (bytes > worst) { worst = bytes; worst_bound = bound; worst_na = na; }
        if (bytes > bound) steps_ok = 0;
        diag("cuda-tree block step %d, %zu of %zu active: host->device %llu bytes, device->host %llu bytes",
             step, na, n, bl.h2d, bl.d2h);
    }
    if (!good) diag("cuda-tree: %s", T->last_error(s));
    ok(good && logged, "cuda-tree logs the bytes of each block-step call (GP_LOG_DEBUG)");
    ok(good && steps_ok && worst > 0,
       "cuda-tree block steps at 1%% active move O(n_active) bytes: worst %llu <= %llu (%zu active; all "
       "positions would be %zu)", worst, worst_bound, worst_na, 24 * n);
    bl.h2d = bl.d2h = 0;
    good = T->update_positions(s, pos) == GP_OK;
    ok(good && bl.h2d >= 24 * n, "update_positions counts its O(n) upload: %llu bytes >= %zu", bl.h2d, 24 * n);
    T->finalize(s);
    free(pos); free(mass); free(x); free(v); free(a); free(t); free(acc); free(act);
}

/* The H100's gpu-accuracy test 50 in small: full calls, then a sparse 1%
 * subset (whose groups cost far more per particle than all particles'),
 * then update_positions: that must refit. The old rebuild model (each
 * call's count scaled to n, least-squares slope over the calls, GOTHIC eq.
 * 12) rebuilt whenever the subset's scaled cost exceeded the full calls'
 * by 427 n here (4 calls since the build: slope 0.3 D, so 1 >= sqrt(2 *
 * 64 n / (0.3 D)) when D >= 427 n); the diag line says whether it would. */
/* cuda-tree's acceleration MAC after set_particles: |a_old| from the held
 * state's accelerations (the same bits as after a call that gave them, and
 * no bh fallback), and bh where the state's are zero, as without a state */
static void check_aold_from_state(const gp_api *T)
{
    size_t n = 2048;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass), *vel = calloc(3 * n, sizeof *vel);
    double *a1 = malloc(3 * n * sizeof *a1), *a2 = malloc(3 * n * sizeof *a2), *b1 = malloc(3 * n * sizeof *b1);
    double *c1 = malloc(3 * n * sizeof *c1), *d1 = malloc(3 * n * sizeof *d1), *zero = calloc(3 * n, sizeof *zero);
    double *t0 = calloc(n, sizeof *t0);
    if (!pos || !mass || !vel || !a1 || !a2 || !b1 || !c1 || !d1 || !zero || !t0) bail("out of memory");
    tl_plummer(n, 20261127, 1.0, 30.0, pos, mass);
    gp_solver *s[4];
    for (int k = 0; k < 4; ++k) s[k] = gpu_plugin_make(T, "mac", "acceleration", "eps", "0.01");
    int good = s[0] && s[1] && s[2] && s[3];
    good = good && T->set_particles(s[0], n, pos, mass) == GP_OK && forces(T, s[0], 0, NULL, a1, NULL) == 0 &&
           T->update_positions(s[0], pos) == GP_OK && forces(T, s[0], 0, NULL, a2, NULL) == 0;
    good = good && T->set_particles(s[1], n, pos, mass) == GP_OK &&
           T->set_state(s[1], n, NULL, pos, vel, a1, t0) == GP_OK && forces(T, s[1], 0, NULL, b1, NULL) == 0;
    good = good && T->set_particles(s[2], n, pos, mass) == GP_OK &&
           T->set_state(s[2], n, NULL, pos, vel, zero, t0) == GP_OK && forces(T, s[2], 0, NULL, c1, NULL) == 0;
    good = good && T->set_particles(s[3], n, pos, mass) == GP_OK && T->update_positions(s[3], pos) == GP_OK &&
           forces(T, s[3], 0, NULL, d1, NULL) == 0;
    ok(good && !memcmp(a2, b1, 3 * n * sizeof *a2),
       "cuda-tree, acceleration MAC after set_particles + set_state: |a_old| from the state, the same bits as "
       "after a call that gave those accelerations");
    ok(good && memcmp(a1, b1, 3 * n * sizeof *a1) != 0 && !memcmp(c1, d1, 3 * n * sizeof *c1),
       "... not the first call's bh fallback; zero state accelerations give bh, as no state does");
    for (int k = 0; k < 4; ++k) if (s[k]) T->finalize(s[k]);
    free(pos); free(mass); free(vel); free(a1); free(a2); free(b1); free(c1); free(d1); free(zero); free(t0);
}

/* cuda-tree keeps the previous |a| in its walk's units: a rebuild that
 * picks another length scale converts them. Positions far from 1 (a side
 * of ~2^40, so the scale follows the median distance) grow 4x between two
 * calls; the second call must equal a fresh instance given the first
 * call's accelerations as its state, bit for bit. */
static void check_aold_rescale(const gp_api *T)
{
    size_t n = 1024;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass), *vel = calloc(3 * n, sizeof *vel);
    double *a1 = malloc(3 * n * sizeof *a1), *a2 = malloc(3 * n * sizeof *a2), *c1 = malloc(3 * n * sizeof *c1);
    double *t0 = calloc(n, sizeof *t0);
    if (!pos || !mass || !vel || !a1 || !a2 || !c1 || !t0) bail("out of memory");
    tl_plummer(n, 20261128, 1.0, 30.0, pos, mass);
    for (size_t i = 0; i < 3 * n; ++i) pos[i] = ldexp(pos[i], 40);
    gp_solver *a = gpu_plugin_make(T, "mac", "acceleration", "rebuild", "always");
    gp_solver *c = gpu_plugin_make(T, "mac", "acceleration", "rebuild", "always");
    int good = a && c && T->set_particles(a, n, pos, mass) == GP_OK && forces(T, a, 0, NULL, a1, NULL) == 0;
    for (size_t i = 0; i < 3 * n; ++i) pos[i] *= 4.0;
    good = good && T->update_positions(a, pos) == GP_OK && forces(T, a, 0, NULL, a2, NULL) == 0;
    good = good && T->set_particles(c, n, pos, mass) == GP_OK &&
           T->set_state(c, n, NULL, pos, vel, a1, t0) == GP_OK && forces(T, c, 0, NULL, c1, NULL) == 0;
    ok(good && !memcmp(a2, c1, 3 * n * sizeof *a2),
       "cuda-tree: a rebuild at a 4x length scale converts the previous |a| (the same bits as the state's)");
    if (a) T->finalize(a);
    if (c) T->finalize(c);
    free(pos); free(mass); free(vel); free(a1); free(a2); free(c1); free(t0);
}

static void check_refit_after_sparse_subset(const gp_api *T)
{
    size_t n = 2048;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *acc = malloc(3 * n * sizeof *acc);
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!pos || !mass || !acc || !idx) bail("out of memory");
    tl_plummer(n, 20260522, 1.0, 30.0, pos, mass);
    gp_solver *t = gpu_plugin_make(T, "mac", "bh", "eps", "0.01");
    int good = t && T->set_particles(t, n, pos, mass) == GP_OK;
    for (int k = 0; k < 2 && good; ++k) good = forces(T, t, 0, NULL, acc, NULL) == 0;
    gp_stats f0 = stats(T, t);
    good = good && forces(T, t, 0, NULL, acc, NULL) == 0;
    gp_stats f1 = stats(T, t);
    size_t na = 0;
    for (size_t i = 0; i < n; i += 97) idx[na++] = (uint32_t)((i * 7919) % n);
    good = good && forces(T, t, na, idx, acc, NULL) == 0;
    gp_stats f2 = stats(T, t);
    double full = (double)(f1.pp_interactions + f1.pc_interactions - f0.pp_interactions - f0.pc_interactions) / (double)n;
    double sub = (double)(f2.pp_interactions + f2.pc_interactions - f1.pp_interactions - f1.pc_interactions) / (double)na;
    diag("interactions per particle: all %.0f, sparse subset of %zu %.0f; the old model %s rebuilt", full, na, sub,
         sub - full >= 427.0 ? "would have" : "would not have");
    for (size_t i = 0; i < 3 * n; ++i) pos[i] = pos[i] * 1.01 + 0.001 * (double)(i % 3);
    gp_stats a = stats(T, t);
    good = good && T->update_positions(t, pos) == GP_OK && forces(T, t, 0, NULL, acc, NULL) == 0;
    gp_stats b = stats(T, t);
    ok(good && b.tree_builds == a.tree_builds && b.tree_refits == a.tree_refits + 1,
       "cuda-tree N = %zu: update_positions after a sparse subset refits (builds %llu -> %llu, refits %llu -> %llu)",
       n, (unsigned long long)a.tree_builds, (unsigned long long)b.tree_builds,
       (unsigned long long)a.tree_refits, (unsigned long long)b.tree_refits);
    if (t) T->finalize(t);
    free(pos); free(mass); free(acc); free(idx);
}

/* A CUDA plugin at positions x L and masses x M against cpu-direct. */
static void check_scales(const gp_api *T, const gp_api *R, const double *pos, const double *mass)
{
    int tree = !strcmp(T->name, "cuda-tree");
    double tol_med = tree ? 2e-3 : 1e-5, tol_p99 = tree ? 2e-2 : 1e-4;
    static const double Ls[] = {1e-30, 1.0, 1e30}, Ms[] = {1e-50, 1.0, 1e300};
    size_t n = N;
    double *p = malloc(3 * n * sizeof *p), *m = malloc(n * sizeof *m);
    double *fa = malloc(3 * n * sizeof *fa), *fr = malloc(3 * n * sizeof *fr);
    double *pa = malloc(n * sizeof *pa), *pr = malloc(n * sizeof *pr);
    if (!p || !m || !fa || !fr || !pa || !pr) bail("out of memory");
    for (size_t li = 0; li < 3; ++li)
        for (size_t mi = 0; mi < 3; ++mi) {
            double L = Ls[li], M = Ms[mi];
            char eps[64];
            snprintf(eps, sizeof eps, "%.17g", 0.01 * L);
            gp_solver *t = gpu_plugin_make(T, "eps", eps, tree ? "mac" : NULL, tree ? "bh" : NULL),
                      *r = gpu_plugin_make(R, "eps", eps, NULL, NULL);
            if (!t || !r) { ok(0, "instances"); continue; }
            for (size_t i = 0; i < 3 * n; ++i) p[i] = pos[i] * L;
            for (size_t i = 0; i < n; ++i) m[i] = mass[i] * M;
            int rok = R->set_particles(r, n, p, m) == GP_OK && R->compute_forces(r, fr, pr) == GP_OK;
            size_t rbad = 0;
            for (size_t i = 0; i < 3 * n; ++i) rbad += !isfinite(fr[i]) || fr[i] == 0;
            for (size_t i = 0; i < n; ++i) rbad += !isfinite(pr[i]);
            gp_status st = T->set_particles(t, n, p, m);
            if (st == GP_OK) st = T->compute_forces(t, fa, pa);
            if (!rok || rbad) {
                /* the exact answer is not representable: an error is right */
                ok(st != GP_OK && T->last_error(t)[0],
                   "%s L = %g, M = %g: answer outside double's range -> error (%s)", T->name, L, M,
                   st != GP_OK ? T->last_error(t) : "GP_OK");
            } else {
                size_t bad = 0;
                for (size_t i = 0; i < 3 * n && st == GP_OK; ++i) bad += !isfinite(fa[i]) || fa[i] == 0;
                /* compare in units of the reference's typical size (squares
                 * of 1e240 overflow) */
                double sa = fabs(fr[0]) + fabs(fr[1]) + fabs(fr[2]), sp = fabs(pr[0]);
                for (size_t i = 0; i < 3 * n; ++i) { fa[i] /= sa; fr[i] /= sa; }
                for (size_t i = 0; i < n; ++i) { pa[i] /= sp; pr[i] /= sp; }
                tl_errstat e = tl_relerr(n, 3, fa, fr), ep = tl_relerr(n, 1, pa, pr);
                ok(st == GP_OK && bad == 0 && e.median <= tol_med && e.p99 <= tol_p99 && ep.median <= tol_med,
                   "%s L = %g, M = %g: %s, %zu bad, acc median %.2g 99th %.2g, pot median %.2g", T->name, L, M,
                   st == GP_OK ? "GP_OK" : T->last_error(t), bad, e.median, e.p99, ep.median);
            }
            T->finalize(t);
            R->finalize(r);
        }
    free(p); free(m); free(fa); free(fr); free(pa); free(pr);
}

/* set_particles of the particles the tree was just built from keeps it:
 * no build, nothing uploaded, a fresh instance's bits; one coordinate moved
 * by an ulp, an update_positions or an update_masses after the keep build
 * again, with a fresh instance's bits */
static void check_same_particles(const gp_api *T)
{
    enum { M = 48 };
    size_t n = N;
    byte_log bl = {0, 0, 0};
    gp_solver *s = logged_tree(T, &bl), *f = s ? logged_tree(T, &bl) : NULL;
    if (!f) {
        if (s) T->finalize(s);
        return;
    }
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass), *p3 = malloc(3 * n * sizeof *p3);
    double *acc = malloc(3 * n * sizeof *acc), *facc = malloc(3 * n * sizeof *facc);
    double pts[3 * M], fa[3 * M], ga[3 * M];
    if (!pos || !mass || !p3 || !acc || !facc) bail("out of memory");
    tl_plummer(n, 20261204, 1.0, 30.0, pos, mass);
    for (int i = 0; i < 3 * M; ++i) pts[i] = 0.37 * (double)((i * 7919) % 211) / 211.0 - 0.2;
    int good = T->set_particles(f, n, pos, mass) == GP_OK && T->compute_field(f, M, pts, ga, NULL) == GP_OK &&
               T->set_particles(s, n, pos, mass) == GP_OK && T->compute_field(s, M, pts, fa, NULL) == GP_OK;
    const uint64_t b0 = stats(T, s).tree_builds;
    int same = good;
    unsigned long long up = 0;
    for (int round = 0; round < 3 && good; ++round) {
        bl.h2d = 0;
        good = T->set_particles(s, n, pos, mass) == GP_OK;
        up += bl.h2d;
        good = good && T->compute_field(s, M, pts, fa, NULL) == GP_OK;
        same = same && good && memcmp(fa, ga, sizeof fa) == 0;
    }
    good = good && T->set_particles(s, n, pos, mass) == GP_OK && T->compute_forces(s, acc, NULL) == GP_OK &&
           T->set_particles(f, n, pos, mass) == GP_OK && T->compute_forces(f, facc, NULL) == GP_OK;
    same = same && good && memcmp(acc, facc, 3 * n * sizeof *acc) == 0;
    const uint64_t kept_builds = stats(T, s).tree_builds - b0;
    if (!good) diag("cuda-tree: %s", T->last_error(s));
    ok(same && kept_builds == 0 && up == 0,
       "cuda-tree: set_particles of the same particles keeps the tree (%llu builds, %llu bytes up in 3 calls), "
       "a fresh instance's bits", (unsigned long long)kept_builds, up);
    /* one ulp moved */
    memcpy(p3, pos, 3 * n * sizeof *p3);
    p3[3 * 11 + 2] = nextafter(p3[3 * 11 + 2], 10.0);
    uint64_t b1 = stats(T, s).tree_builds;
    good = T->set_particles(s, n, p3, mass) == GP_OK && T->compute_field(s, M, pts, fa, NULL) == GP_OK;
    const uint64_t ulp_builds = stats(T, s).tree_builds - b1;
    /* kept, then moved or reweighed before any walk */
    for (size_t k = 0; k < 3 * n; ++k) p3[k] = pos[k] + 0.001 * (double)((k * 104729) % 97) / 97.0;
    good = good && T->set_particles(s, n, pos, mass) == GP_OK && T->compute_field(s, M, pts, fa, NULL) == GP_OK &&
           T->set_particles(s, n, pos, mass) == GP_OK && T->update_positions(s, p3) == GP_OK &&
           T->compute_field(s, M, pts, fa, NULL) == GP_OK && T->set_particles(f, n, p3, mass) == GP_OK &&
           T->compute_field(f, M, pts, ga, NULL) == GP_OK;
    int same_moved = good && memcmp(fa, ga, sizeof fa) == 0;
    const uint32_t i7 = 7;
    const double m7 = 3 * mass[7];
    good = good && T->set_particles(s, n, p3, mass) == GP_OK && T->update_masses(s, 1, &i7, &m7) == GP_OK &&
           T->compute_field(s, M, pts, fa, NULL) == GP_OK;
    mass[7] = m7;
    good = good && T->set_particles(f, n, p3, mass) == GP_OK && T->compute_field(f, M, pts, ga, NULL) == GP_OK;
    int same_reweighed = good && memcmp(fa, ga, sizeof fa) == 0;
    if (!good) diag("cuda-tree: %s", T->last_error(s));
    ok(good && ulp_builds == 1 && same_moved && same_reweighed,
       "... and builds again when a coordinate moves by an ulp (%llu), after an update_positions (%s) or "
       "an update_masses (%s) following the keep: a fresh instance's bits", (unsigned long long)ulp_builds,
       same_moved ? "same" : "differs", same_reweighed ? "same" : "differs");
    T->finalize(s);
    T->finalize(f);
    free(pos); free(mass); free(p3); free(acc); free(facc);
}

int main(void)
{
    gpu_plugin D, T, R;
    char why[1200];
    if (gpu_plugin_open(&D, "cuda-direct", why, sizeof why) != 0) skip_all(why);
    if (gpu_plugin_open(&T, "cuda-tree", why, sizeof why) != 0) skip_all(why);
    if (gpu_plugin_open(&R, "cpu-direct", why, sizeof why) != 0) skip_all(why);
    {
        gp_solver *probe = NULL;
        if (D.api->init(&probe, NULL) == GP_ERR_DEVICE) {
            snprintf(why, sizeof why, "no CUDA device: %s", D.api->last_error(NULL));
            skip_all(why);
        }
        if (probe) D.api->finalize(probe);
    }
    plan_lazy();
    if (getenv("GP_GPU_TEST_N")) N = (size_t)atol(getenv("GP_GPU_TEST_N"));
    if (N < 256) N = 256;
    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    if (!pos || !mass) bail("out of memory");
    tl_plummer(N, 20261123, 1.0, 30.0, pos, mass);
    mass[5] = 0.0; /* a massless particle */
    check_plugin(D.api, R.api, pos, mass);
    check_plugin(T.api, R.api, pos, mass);
    check_scales(D.api, R.api, pos, mass);
    check_scales(T.api, R.api, pos, mass);
    check_refit_after_sparse_subset(T.api);
    check_aold_from_state(T.api);
    check_aold_rescale(T.api);
    check_block_bytes(T.api);
    check_same_particles(T.api);
    check_large_state(D.api);
    check_large_state(T.api);
    free(pos);
    free(mass);
    return done_testing();
}
