/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-cc.c — CC, the connected-components split
 * (integrators/schemes/cc.c), on cpu-direct: its components against a brute-force
 * search on an O(N^2) reference graph (pair steps from
 * plugin/base/pair_step.h's expression, here); second order on an
 * eccentric Kepler orbit; time-reversible over a top step; a restarted
 * run bit-identical to the uninterrupted one; a plugin without pair steps
 * refused with a sentence. two_body = "kepler" (unsoftened): a binary alone
 * follows its exact orbit with no force call; on the cluster it converges
 * to rk8pd's trajectory as the split does, in fewer force calls; reversible
 * and restartable like it; refused on softened forces.
 */
#include <stddef.h>

#include "gravplug_loader.h"
#include "integrators-common.h"
#include "integrators-pair-ref.h"
#include "core/sim_core.h"
#include "schemes/split_step.h"

#define N 64

static double pos0[3 * N], vel0[3 * N], mass0[N];
static const char *integ = "cc";
static const char *two_body;        /* NULL: the default */
static const char *soft = "0.01";   /* the solver's eps */

static gp_sim *make(gp_sim *sim, const char *eta, const char *dt)
{
    if (!sim) return NULL;
    if (gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) != GP_OK
        || gp_sim_set_integrator(sim, integ) != GP_OK
        || gp_sim_set_integrator_param(sim, "eta", eta) != GP_OK
        || gp_sim_set_integrator_param(sim, "dt", dt) != GP_OK
        || (two_body && gp_sim_set_integrator_param(sim, "two_body", two_body) != GP_OK)) {
        diag("%s", gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

/* Brute force: label[i] = the smallest index of i's component in the
 * graph of pairs with tau_ik < |h| / eta, or -1 when i is alone. */
static void ref_components(double eta, double h, long *label)
{
    static double xm[3 * N], vm[3 * N];
    static int adj[N][N];
    ref_midpoint(N, pos0, vel0, mass0, 0.01, h, xm, vm);
    double thr = fabs(h) / eta;
    for (size_t i = 0; i < N; ++i)
        for (size_t k = 0; k < N; ++k) adj[i][k] = i != k && ref_tau(xm, vm, mass0, 0.01, i, k) < thr;
    for (size_t i = 0; i < N; ++i) label[i] = -2;
    for (size_t i = 0; i < N; ++i) {
        if (label[i] != -2) continue;
        /* flood fill from i, the smallest unlabelled index */
        size_t stack[N], top = 0, size = 0;
        stack[top++] = i;
        label[i] = (long)i;
        while (top) {
            size_t a = stack[--top];
            ++size;
            for (size_t k = 0; k < N; ++k)
                if (adj[a][k] && label[k] == -2) label[k] = (long)i, stack[top++] = k;
        }
        if (size == 1) label[i] = -1;
    }
}

static void check_components(void)
{
    static uint32_t all[N], order[N];
    static size_t bounds[N / 2 + 1];
    static long want[N], got[N];
    for (uint32_t i = 0; i < N; ++i) all[i] = i;
    gp_sim *sim = make(sim_on_direct("0.01"), "0.1", "0.25");
    static const double hs[] = { 0.25, 0.05, 0.02, 0.005 };
    int split = 0;
    for (int t = 0; t < 4; ++t) {
        size_t m = 0;
        gp_status st = sim ? gp_cc_components(sim, all, N, hs[t], order, bounds, &m) : GP_ERR_BAD_STATE;
        if (st != GP_OK && sim) diag("%s", gp_sim_last_error(sim));
        ref_components(0.1, hs[t], want);
        int same = st == GP_OK, sorted = 1;
        for (size_t i = 0; i < N; ++i) got[i] = -1;
        for (size_t c = 0; same && c < m; ++c)
            for (size_t k = bounds[c]; k < bounds[c + 1]; ++k) {
                got[order[k]] = order[bounds[c]];
                if (k > bounds[c] && order[k] <= order[k - 1]) sorted = 0;   /* each in s order */
                if (c > 0 && k == bounds[c] && order[k] <= order[bounds[c - 1]]) sorted = 0;
            }
        for (size_t k = m ? bounds[m] : 0; k + 1 < N; ++k) if (order[k + 1] <= order[k]) sorted = 0;
        size_t ncomp = 0, nrest = 0;
        for (size_t i = 0; i < N; ++i) {
            if (got[i] != want[i]) same = 0;
            ncomp += want[i] == (long)i;
            nrest += want[i] == -1;
        }
        ok(same && sorted && ncomp == m,
           "cc's components at h = %g are the brute-force ones (%zu components, %zu alone)", hs[t], ncomp, nrest);
        split += ncomp >= 2 && nrest > 0;
    }
    ok(split >= 1, "the component checks include splits into several components beside a rest (%d)", split);
    gp_sim_free(sim);
}

/* The split is time-symmetric to O(h^3), not exactly (integrators-hold.c):
 * one top step with several levels. */
static void check_reversible(void)
{
    static double p[3 * N], v[3 * N];
    gp_sim *sim = make(sim_on_direct(soft), "0.1", "0.25");
    uint64_t counts[64];
    size_t nl = 0;
    int good = sim && gp_sim_evolve(sim, 0.25) == GP_OK && gp_sim_level_counts(sim, counts, 64, &nl) == GP_OK
               && gp_sim_get_particles(sim, p, v, NULL, NULL) == GP_OK;
    double moved = good ? max_diff(p, pos0, 3 * N) : 0;
    for (int k = 0; k < 3 * N; ++k) v[k] = -v[k];
    good = good && gp_sim_set_state(sim, NULL, v) == GP_OK && gp_sim_evolve(sim, 0.5) == GP_OK
           && gp_sim_get_particles(sim, p, v, NULL, NULL) == GP_OK;
    for (int k = 0; k < 3 * N; ++k) v[k] = -v[k];
    if (!good && sim) diag("%s", gp_sim_last_error(sim));
    double dx = max_diff(p, pos0, 3 * N), dv = max_diff(v, vel0, 3 * N);
    ok(good && nl >= 3 && moved > 0.01 && dx < 1e-11 && dv < 1e-11,
       "%s%s is time-reversible over a top step on %zu levels: forward, flipped, forward recovers the start "
       "(%.1e, %.1e)", integ, two_body ? " two_body = kepler" : "", nl, dx, dv);
    gp_sim_free(sim);
}

/* Against a reference run (rk8pd at tight tolerance) on the cluster over
 * half a time unit: the positions converge at second order in eta, which
 * they would not if a kick missed or double-counted an interaction
 * (between components, or inside one). */
static double cluster_error(const char *eta, const double *ref)
{
    static double p[3 * N];
    gp_sim *sim = make(sim_on_direct(soft), eta, "0.125");
    int good = sim && gp_sim_evolve(sim, 0.5) == GP_OK && gp_sim_get_particles(sim, p, NULL, NULL, NULL) == GP_OK;
    if (!good && sim) diag("%s", gp_sim_last_error(sim));
    gp_sim_free(sim);
    return good ? max_diff(p, ref, 3 * N) : -1;
}

static void check_cluster_order(void)
{
    static double ref[3 * N];
    gp_sim *e = sim_on_direct(soft);
    int good = e && gp_sim_set_particles(e, N, pos0, vel0, mass0, NULL) == GP_OK
               && gp_sim_set_integrator(e, "rk8pd") == GP_OK && gp_sim_set_integrator_param(e, "rtol", "1e-13") == GP_OK
               && gp_sim_evolve(e, 0.5) == GP_OK && gp_sim_get_particles(e, ref, NULL, NULL, NULL) == GP_OK;
    gp_sim_free(e);
    double e1 = good ? cluster_error("0.04", ref) : -1, e2 = good ? cluster_error("0.02", ref) : -1;
    double order = e1 > 0 && e2 > 0 ? log2(e1 / e2) : 0;
    ok(e1 > 0 && e2 > 0 && fabs(order - 2.0) < 0.5,
       "%s on the cluster against rk8pd: order %.2f between eta 0.04 and 0.02 (%.1e, %.1e; want 2 +- 0.5)", integ,
       order, e1, e2);
}

static void check_restart(void)
{
    const char *path = "integrators-cc.tmp.ckpt";
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    gp_sim *a = make(sim_on_direct(soft), "0.1", "0.25"), *b = sim_on_direct(soft);
    int good = a && b && gp_sim_evolve(a, 0.5) == GP_OK && gp_sim_checkpoint_save(a, path, NULL, 0) == GP_OK
               && gp_sim_evolve(a, 1.0) == GP_OK && gp_sim_checkpoint_load(b, path, NULL, 0, NULL) == GP_OK
               && gp_sim_evolve(b, 1.0) == GP_OK && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
               && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
    if (!good) diag("%s / %s", a ? gp_sim_last_error(a) : "", b ? gp_sim_last_error(b) : "");
    ok(good && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0 && gp_sim_time(a) == gp_sim_time(b),
       "%s%s: a restarted run is bit-identical to the uninterrupted one", integ,
       two_body ? " two_body = kepler" : "");
    remove(path);
    gp_sim_free(a);
    gp_sim_free(b);
}

/* cpu-direct with its table cut to the 1.1 layout: no pair steps. */
static void check_refusal(void)
{
    char err[1024];
    gp_plugin *plug = NULL;
    gp_solver *solver = NULL;
    static gp_api old;
    int good = cpu_direct_as_abi(1, offsetof(gp_api, set_state_jerk), &plug, &old, &solver, err, sizeof err);
    gp_sim *a = NULL;
    if (good && gp_sim_new(&a) == GP_OK && gp_sim_set_solver(a, &old, solver, 1) == GP_OK) a = make(a, "0.1", "0.25");
    gp_status st = a ? gp_sim_evolve(a, 0.25) : GP_ERR_BAD_STATE;
    ok(st == GP_ERR_UNSUPPORTED && strstr(gp_sim_last_error(a), "get_neighbours"),
       "%s on a 1.1 plugin is refused with a sentence: %s", integ, a ? gp_sim_last_error(a) : err);
    gp_sim_free(a);
    gp_plugin_close(plug);
}

/* cpu-direct cut to ABI 1.2: the graph's lists with +v and -v from two
 * calls and a kick call per component, against 1.3's union from one call
 * (the same components) and every component kicked in one call with
 * source groups: the same trajectory to rounding (the sums run over other
 * chunks of sources), in fewer force calls. */
static void check_abi12(void)
{
    static double p1[3 * N], v1[3 * N], p2[3 * N], v2[3 * N];
    char err[1024];
    gp_plugin *plug = NULL;
    gp_solver *solver = NULL;
    static gp_api old;
    int good = cpu_direct_as_abi(2, offsetof(gp_api, set_source_groups), &plug, &old, &solver, err,
                                 sizeof err);
    gp_sim *a = NULL, *b = make(sim_on_direct("0.01"), "0.1", "0.25");
    if (good && gp_sim_new(&a) == GP_OK && gp_sim_set_solver(a, &old, solver, 1) == GP_OK) a = make(a, "0.1", "0.25");
    good = good && a && b && gp_sim_evolve(a, 0.5) == GP_OK && gp_sim_evolve(b, 0.5) == GP_OK
           && gp_sim_get_particles(a, p1, v1, NULL, NULL) == GP_OK
           && gp_sim_get_particles(b, p2, v2, NULL, NULL) == GP_OK;
    if (!good) diag("%s", a ? gp_sim_last_error(a) : err);
    uint64_t fa = 0, fb = 0;
    if (good) {
        gp_sim_counter(a, "force_calls", &fa);
        gp_sim_counter(b, "force_calls", &fb);
    }
    double d = good ? fmax(max_diff(p1, p2, 3 * N), max_diff(v1, v2, 3 * N)) : -1;
    ok(good && d < 1e-12 && fb < fa,
       "%s: the graph from one call's even lists and the grouped kick (ABI 1.3) give the 1.2 "
       "trajectory to rounding (%.1e), in %llu force calls instead of %llu", integ, d,
       (unsigned long long)fb, (unsigned long long)fa);
    gp_sim_free(a);
    gp_sim_free(b);
    gp_plugin_close(plug);
}

/* A binary alone, unsoftened: one two-body component at the top, moved
 * along its orbit in closed form: it closes after each period to rounding,
 * with no force call at all. */
static void check_kepler_binary(void)
{
    double pos[6], vel[6], mass[2], x0[3];
    kepler_state(0.5, pos, vel, mass);
    for (int k = 0; k < 3; ++k) x0[k] = pos[3 + k] - pos[k];
    gp_sim *sim = sim_on_direct("0");
    uint64_t calls = 1;
    int good = sim && gp_sim_set_particles(sim, 2, pos, vel, mass, NULL) == GP_OK
               && gp_sim_set_integrator(sim, integ) == GP_OK
               && gp_sim_set_integrator_param(sim, "two_body", "kepler") == GP_OK
               && gp_sim_set_integrator_param(sim, "dt", "0.5") == GP_OK
               && gp_sim_evolve(sim, 20.0 * M_PI) == GP_OK && gp_sim_get_particles(sim, pos, vel, NULL, NULL) == GP_OK
               && gp_sim_counter(sim, "force_calls", &calls) == GP_OK;
    if (!good && sim) diag("%s", gp_sim_last_error(sim));
    double d = 0;
    for (int k = 0; k < 3; ++k) d = fmax(d, fabs(pos[3 + k] - pos[k] - x0[k]));
    ok(good && d < 1e-11 && calls == 0,
       "%s two_body = kepler: a binary (e = 0.5) closes after 10 periods to %.1e with %llu force calls", integ, d,
       (unsigned long long)calls);
    gp_sim_free(sim);
}

/* On the unsoftened cluster against rk8pd: the Kepler steps keep the
 * split's accuracy (within 2x of its error at the same eta) in fewer force
 * calls, since a pair's levels below its component are not walked. */
static void check_kepler_cluster(void)
{
    static double ref[3 * N], p[3 * N];
    gp_sim *e = sim_on_direct("0");
    int good = e && gp_sim_set_particles(e, N, pos0, vel0, mass0, NULL) == GP_OK
               && gp_sim_set_integrator(e, "rk8pd") == GP_OK && gp_sim_set_integrator_param(e, "rtol", "1e-13") == GP_OK
               && gp_sim_evolve(e, 0.5) == GP_OK && gp_sim_get_particles(e, ref, NULL, NULL, NULL) == GP_OK;
    gp_sim_free(e);
    double err[2] = { -1, -1 };
    uint64_t calls[2] = { 0, 0 };
    const char *saved = two_body;
    for (int k = 0; k < 2 && good; ++k) {
        two_body = k ? "kepler" : "split";
        gp_sim *sim = make(sim_on_direct("0"), "0.05", "0.125");
        if (sim && gp_sim_evolve(sim, 0.5) == GP_OK && gp_sim_get_particles(sim, p, NULL, NULL, NULL) == GP_OK) {
            err[k] = max_diff(p, ref, 3 * N);
            gp_sim_counter(sim, "force_calls", &calls[k]);
        } else if (sim) {
            diag("%s", gp_sim_last_error(sim));
        }
        gp_sim_free(sim);
    }
    two_body = saved;
    ok(err[0] > 0 && err[1] > 0 && err[1] < 2 * err[0] && calls[1] < calls[0],
       "%s on the unsoftened cluster: two_body = kepler %.1e from rk8pd in %llu force calls, split %.1e in %llu",
       integ, err[1], (unsigned long long)calls[1], err[0], (unsigned long long)calls[0]);
}

/* Softened forces: the Kepler orbit is not their two-body solution. */
static void check_kepler_refusals(void)
{
    const char *saved = two_body;
    two_body = "kepler";
    gp_sim *sim = make(sim_on_direct("0.01"), "0.1", "0.25");
    gp_status st = sim ? gp_sim_evolve(sim, 0.25) : GP_ERR_BAD_STATE;
    ok(st == GP_ERR_INVALID_ARGUMENT && strstr(gp_sim_last_error(sim), "eps = 0.01")
       && strstr(gp_sim_last_error(sim), "two_body = \"split\""),
       "%s two_body = kepler on softened forces is refused with a sentence: %s", integ,
       sim ? gp_sim_last_error(sim) : "");
    gp_sim_free(sim);
    two_body = saved;
    sim = sim_on_direct("0");
    st = sim && gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) == GP_OK
         && gp_sim_set_integrator(sim, integ) == GP_OK ? gp_sim_set_integrator_param(sim, "two_body", "exact")
                                                         : GP_ERR_BAD_STATE;
    ok(st == GP_ERR_INVALID_ARGUMENT && strstr(gp_sim_last_error(sim), "kepler"),
       "two_body = exact is refused, naming the choices: %s", sim ? gp_sim_last_error(sim) : "");
    gp_sim_free(sim);
}

int main(void)
{
    plan(28);
    small_cluster(N, 11, pos0, vel0, mass0);
    check_components();
    static const char *const variants[] = { "cc", "cc-kdk" };
    for (int v = 0; v < 2; ++v) {
        integ = variants[v];
        check_kepler_order_2(integ, NULL);
        check_cluster_order();
        check_reversible();
        check_restart();
        check_abi12();
    }
    for (int v = 0; v < 2; ++v) {
        integ = variants[v];
        check_kepler_binary();
        check_kepler_cluster();
        two_body = "kepler";
        soft = "0";
        check_reversible();
        check_restart();
        two_body = NULL;
        soft = "0.01";
    }
    integ = "cc";
    check_refusal();
    check_kepler_refusals();
    return done_testing();
}
