/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-path.c — block steps through ABI 1.1 (the plugin holds and
 * predicts the particles) give the same trajectory, bit for bit, as
 * through 1.0 (the host predicts and sends all positions): block-rk2 and
 * block-kdk, on cpu-direct and on cpu-tree when it offers 1.1, with a
 * diagnostic in between (a 1.0-style call that makes the 1.1 path resend
 * the full state), and across a checkpoint restart (saved on one path,
 * restarted on the other). Shared steps on cpu-tree under the
 * acceleration MAC hand the plugin their last accelerations (and keep
 * their bits across restarts). A 1.0-only plugin (tests/fixtures/sim-abi10.c) still
 * runs through gp_sim, on the 1.0 path, with the same bits as cpu-direct;
 * a plugin shaped exactly like ABI 1.1 (tests/fixtures/abi11.c) runs on
 * the 1.1 path with the bits of its own 1.0 path.
 */
#include <dlfcn.h>

#include "integrators-common.h"
#include "gravplug_predict.h" /* gp_predict_coord: the ABI's prediction */
#include "core/sim_core.h"

#define N 512

static double pos0[3 * N], vel0[3 * N], mass0[N];

static gp_sim *make(const char *plugin, const char *integ, const char *path)
{
    return sim_on_path(plugin, N, pos0, vel0, mass0, integ, 1, path);
}

typedef struct run_out {
    double pos[3 * N], vel[3 * N];
    uint64_t state_steps, state_resyncs, steps, levels;
    int good;
} run_out;

/* 12 block steps, energies (a full 1.0-style force call), 12 more, evolve
 * to t = 0.6 (off the dt_max grid: a synchronising step), 5 more steps. */
static void run(gp_sim *sim, run_out *o)
{
    memset(o, 0, sizeof *o);
    int good = sim != NULL;
    for (int s = 0; good && s < 12; ++s) good = gp_sim_step(sim, 10.0) == GP_OK;
    size_t nl = 0;
    uint64_t counts[64];
    if (good) gp_sim_level_counts(sim, counts, 64, &nl);
    double k, w;
    good = good && gp_sim_energies(sim, &k, &w) == GP_OK;
    for (int s = 0; good && s < 12; ++s) good = gp_sim_step(sim, 10.0) == GP_OK;
    good = good && gp_sim_evolve(sim, 0.6) == GP_OK;
    for (int s = 0; good && s < 5; ++s) good = gp_sim_step(sim, 10.0) == GP_OK;
    good = good && gp_sim_get_particles(sim, o->pos, o->vel, NULL, NULL) == GP_OK;
    if (!good && sim) diag("%s", gp_sim_last_error(sim));
    if (sim) {
        gp_sim_counter(sim, "state_steps", &o->state_steps);
        gp_sim_counter(sim, "state_resyncs", &o->state_resyncs);
        gp_sim_counter(sim, "steps", &o->steps);
    }
    o->levels = nl;
    o->good = good;
}

static int same(const run_out *a, const run_out *b)
{
    return a->good && b->good && memcmp(a->pos, b->pos, sizeof a->pos) == 0
        && memcmp(a->vel, b->vel, sizeof a->vel) == 0;
}

static void compare_paths(const char *plugin, const char *integ)
{
    static run_out a, b;
    gp_sim *s10 = make(plugin, integ, "1.0"), *s11 = make(plugin, integ, "1.1");
    ok(s11 && strcmp(gp_sim_solver_path_in_use(s11), "1.1") == 0
           && s10 && strcmp(gp_sim_solver_path_in_use(s10), "1.0") == 0,
       "%s on %s: the paths in use are 1.0 and 1.1 as set", integ, plugin);
    run(s10, &a);
    run(s11, &b);
    diag("%s on %s: %llu steps, %zu levels in use after 12; 1.1 path: %llu block steps, "
         "%llu full-state sends", integ, plugin, (unsigned long long)b.steps, (size_t)b.levels,
         (unsigned long long)b.state_steps, (unsigned long long)b.state_resyncs);
    ok(a.good && b.good && a.state_steps == 0 && b.state_steps > 20 && b.levels > 2
           && b.state_resyncs >= 2,
       "%s on %s: the 1.1 run stepped through 1.1 (resending the state after the diagnostic "
       "and the sync), the 1.0 run never did", integ, plugin);
    ok(same(&a, &b), "%s on %s: the 1.1 trajectory is bit-identical to the 1.0 one", integ, plugin);
    gp_sim_free(s10);
    gp_sim_free(s11);
}

/* Save mid-block (levels out of step) on path `from`, restart on `to`,
 * compare with the 1.0 run that saved a checkpoint at the same step and
 * went on (a checkpoint is a solver resync point: a tree plugin builds
 * afresh there, in both runs). */
static void compare_restart(const char *plugin, const char *integ, const char *from, const char *to)
{
    const char *ckpt = "integrators-path.tmp.ckpt";
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    gp_sim *a = make(plugin, integ, "1.0"), *b = make(plugin, integ, from);
    gp_sim *c = make(plugin, integ, to);
    int good = a && b && c, synced = 1;
    for (int s = 0; good && s < 9; ++s)
        good = gp_sim_step(a, 10.0) == GP_OK && gp_sim_step(b, 10.0) == GP_OK;
    if (good) synced = gp_sim_synchronised(b);
    good = good && gp_sim_checkpoint_save(a, ckpt, NULL, 0) == GP_OK
                && gp_sim_checkpoint_save(b, ckpt, NULL, 0) == GP_OK
                && gp_sim_checkpoint_load(c, ckpt, NULL, 0, NULL) == GP_OK;
    good = good && gp_sim_evolve(a, 1.0) == GP_OK && gp_sim_evolve(c, 1.0) == GP_OK
                && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
                && gp_sim_get_particles(c, pb, vb, NULL, NULL) == GP_OK;
    if (!good) diag("%s / %s / %s", a ? gp_sim_last_error(a) : "", b ? gp_sim_last_error(b) : "",
                    c ? gp_sim_last_error(c) : "");
    ok(good && !synced && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0,
       "%s on %s: saved mid-block on path %s, restarted on %s: bit-identical to the "
       "1.0 run that went on", integ, plugin, from, to);
    remove(ckpt);
    gp_sim_free(a);
    gp_sim_free(b);
    gp_sim_free(c);
}

/* The host's prediction against cpu-direct's predict, value by value: zeros
 * of both signs, dt = 0, tiny and huge values. */
static void compare_expression(void)
{
    static const double vals[] = { 0.0, -0.0, 1.0, -1.0, 0.1, -3.7e-310, 1e-300, 2.5e150, -7.25 };
    enum { NV = sizeof vals / sizeof vals[0], M = NV * NV * NV };
    static double x[3 * M], v[3 * M], a[3 * M], t[M], mass[M], got[3 * M];
    for (size_t k = 0; k < M; ++k) {
        x[3 * k] = vals[k % NV]; v[3 * k] = vals[k / NV % NV]; a[3 * k] = vals[k / NV / NV];
        x[3 * k + 1] = -x[3 * k]; v[3 * k + 1] = v[3 * k]; a[3 * k + 1] = -a[3 * k];
        x[3 * k + 2] = 0.5; v[3 * k + 2] = -v[3 * k]; a[3 * k + 2] = a[3 * k];
        t[k] = k % 3 == 0 ? 0.75 : k % 3 == 1 ? 0.5 : -0.125;
        mass[k] = 1.0;
    }
    gp_sim *sim = NULL;
    int good = gp_sim_new(&sim) == GP_OK && gp_sim_open_solver(sim, "cpu-direct", 0, NULL, NULL) == GP_OK;
    const gp_api *api = good ? sim->api : NULL;
    good = good && api->set_particles(sim->solver, M, x, mass) == GP_OK
                && api->set_state(sim->solver, M, NULL, x, v, a, t) == GP_OK;
    size_t bad = 0;
    for (int rep = 0; good && rep < 2; ++rep) {
        double tp = rep ? 0.75 : 2.0;   /* dt = 0 for a third of them, then dt > 0 / < 0 */
        good = api->predict(sim->solver, tp) == GP_OK && api->get_positions(sim->solver, M, NULL, got) == GP_OK;
        for (size_t k = 0; good && k < 3 * M; ++k) {
            double want = gp_predict_coord(x[k], v[k], a[k], tp - t[k / 3]);
            bad += memcmp(&want, &got[k], sizeof want) != 0;
        }
    }
    ok(good && bad == 0, "the host's prediction equals cpu-direct's predict bit for bit over %d "
       "coordinates, signed zeros and dt = 0 included (%zu differ)", 6 * M, bad);
    gp_sim_free(sim);
}

/* A shared-step scheme on cpu-tree under the acceleration MAC, on solver
 * path `path`: the opening criterion needs each particle's previous |a|,
 * which every step's set_particles (a resync point) clears. */
static gp_sim *tree_accel(const char *integ, const char *dt, const char *path)
{
    gp_sim *sim = NULL;
    if (gp_sim_new(&sim) != GP_OK) return NULL;
    const char *names[] = { "eps", "mac", "delta_acc" }, *values[] = { "0.05", "acceleration", "0.005" };
    if (gp_sim_open_solver(sim, "cpu-tree", 3, names, values) != GP_OK
        || gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) != GP_OK
        || gp_sim_set_integrator(sim, integ) != GP_OK
        || gp_sim_set_integrator_param(sim, "dt", dt) != GP_OK
        || gp_sim_set_solver_path(sim, path) != GP_OK) {
        diag("%s on cpu-tree, mac = acceleration: %s", integ, gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

static uint64_t tree_interactions(gp_sim *sim)
{
    gp_stats st = { 0 };
    st.struct_size = sizeof st;
    if (!sim || gp_sim_solver_stats(sim, &st) != GP_OK) return 0;
    return st.pp_interactions + st.pc_interactions;
}

/* The host sends the last accelerations with set_state after a shared
 * step's set_particles (force.c), so the plugin skips the coarse pass that
 * finds |a| without them (the 1.0 path keeps that pass); a restart sends
 * the same accelerations from its checkpoint, bit for bit. */
static void shared_steps_last_acc(void)
{
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    gp_sim *a = tree_accel("leapfrog", "0.015625", "auto"), *b = tree_accel("leapfrog", "0.015625", "1.0");
    int good = a && b && gp_sim_evolve(a, 0.0) == GP_OK && gp_sim_evolve(b, 0.0) == GP_OK;
    uint64_t a0 = tree_interactions(a), b0 = tree_interactions(b);
    good = good && gp_sim_evolve(a, 0.25) == GP_OK && gp_sim_evolve(b, 0.25) == GP_OK
                && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
                && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
    if (!good) diag("%s / %s", a ? gp_sim_last_error(a) : "", b ? gp_sim_last_error(b) : "");
    double ia = (double)(tree_interactions(a) - a0), ib = (double)(tree_interactions(b) - b0);
    double dx = max_diff(pa, pb, 3 * N);
    ok(good && ia < 0.85 * ib && dx < 1e-3,
       "leapfrog on cpu-tree, mac = acceleration: %.0f interactions in 16 steps with the last "
       "accelerations sent, %.0f on path 1.0 (a coarse pass per step); positions agree to %.1e",
       ia, ib, dx);
    gp_sim_free(a);
    gp_sim_free(b);

    /* a plugin without `mac` is not asked for it: no refusal is left as its
     * last error */
    gp_sim *d = sim_on_path("cpu-direct", N, pos0, vel0, mass0, "leapfrog", 0, "auto");
    good = d && gp_sim_evolve(d, 0.25) == GP_OK;
    const char *why = good ? d->api->last_error(d->solver) : "";
    ok(good && why && why[0] == '\0',
       "leapfrog on cpu-direct (path 1.1): no failed get_param behind its steps (last error \"%s\")",
       why ? why : "(null)");
    gp_sim_free(d);

    static const char *const schemes[2][2] = { { "leapfrog", "0.015625" }, { "rk4", "0.03125" } };
    for (int k = 0; k < 2; ++k) {
        const char *ckpt = "integrators-path-shared.tmp.ckpt";
        gp_sim *u = tree_accel(schemes[k][0], schemes[k][1], "auto");
        gp_sim *r = tree_accel(schemes[k][0], schemes[k][1], "auto");
        good = evolve_and_restart(u, r, ckpt, 0.25, 0.5, pa, va, pb, vb);
        ok(good && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0,
           "... %s: restarted at t = 0.25, bit-identical to the run that went on", schemes[k][0]);
        remove(ckpt);
        gp_sim_free(u);
        gp_sim_free(r);
    }
}

/* Does the named plugin offer ABI 1.1 (predict in its table)? */
static int offers_11(const char *plugin)
{
    gp_sim *sim = NULL;
    int yes = gp_sim_new(&sim) == GP_OK && gp_sim_open_solver(sim, plugin, 0, NULL, NULL) == GP_OK
              && strcmp(gp_sim_solver_path_in_use(sim), "1.1") == 0;
    gp_sim_free(sim);
    return yes;
}

/* Both block schemes on both paths, then four restarts across paths. */
static void compare_plugin(const char *plugin, const char *const restarts[4][3])
{
    compare_paths(plugin, "block-rk2");
    compare_paths(plugin, "block-kdk");
    for (int k = 0; k < 4; ++k) compare_restart(plugin, restarts[k][0], restarts[k][1], restarts[k][2]);
}

int main(void)
{
    plan(1 + 10 + 14 + 7 + 2);
    small_cluster(N, 5, pos0, vel0, mass0);
    compare_expression();

    /* restarts: scheme, the path before the checkpoint, the path after */
    static const char *const direct_restarts[4][3] = {
        {"block-rk2", "1.1", "1.1"}, {"block-rk2", "1.0", "1.1"},
        {"block-kdk", "1.1", "1.1"}, {"block-kdk", "1.1", "1.0"},
    };
    static const char *const tree_restarts[4][3] = {
        {"block-rk2", "1.1", "1.1"}, {"block-kdk", "1.0", "1.1"},
        {"block-rk2", "1.1", "1.0"}, {"block-kdk", "1.1", "1.0"},
    };
    compare_plugin("cpu-direct", direct_restarts);
    if (offers_11("cpu-tree")) {
        compare_plugin("cpu-tree", tree_restarts);
        shared_steps_last_acc();
    } else {
        skip(14, "cpu-tree does not offer ABI 1.1 in this build (set_state/predict/get_positions)");
    }

    /* A 1.0-only plugin: the 1.0 path, the same bits as cpu-direct. */
    gp_sim *old = make(GP_SIM_ABI10, "block-rk2", "auto");
    ok(old && strcmp(gp_sim_solver_path_in_use(old), "1.0") == 0,
       "a 1.0 plugin (abi_minor 0, the 1.0 table size) is driven through the 1.0 path");
    ok(old && gp_sim_set_solver_path(old, "1.1") == GP_ERR_UNSUPPORTED
           && strstr(gp_sim_last_error(old), "1.1") && strcmp(gp_sim_solver_path(old), "auto") == 0,
       "... asking it for the 1.1 path is refused with a sentence and changes nothing: %s",
       old ? gp_sim_last_error(old) : "");
    static run_out r10, r11;
    run(old, &r10);
    gp_sim *cur = make("cpu-direct", "block-rk2", "auto");
    run(cur, &r11);
    ok(r10.good && r10.state_steps == 0 && r11.state_steps > 0 && same(&r10, &r11),
       "... and runs block-rk2 bit for bit like cpu-direct through 1.1");
    double mass[N];
    memcpy(mass, mass0, sizeof mass);
    mass[3] *= 0.5;
    ok(old && gp_sim_set_masses(old, mass) == GP_OK && gp_sim_evolve(old, 1.5) == GP_OK,
       "... and takes a mass change (fresh set_particles) and goes on");
    gp_sim_free(old);

    /* A plugin exactly as ABI 1.1 published it (tests/fixtures/abi11.c: the
     * table ends at update_masses, before a guard page): the 1.1 path, the
     * same bits as its own 1.0 path. */
    gp_sim *f11 = make(GP_ABI11_FIXTURE, "block-rk2", "auto");
    gp_sim *f10 = make(GP_ABI11_FIXTURE, "block-rk2", "1.0");
    ok(f11 && strcmp(gp_sim_solver_path_in_use(f11), "1.1") == 0,
       "a 1.1-shaped plugin (abi_minor 1, the 1.1 table size) is driven through the 1.1 path");
    static run_out q11, q10;
    run(f11, &q11);
    run(f10, &q10);
    ok(q11.good && q10.good && q11.state_steps > 0 && q10.state_steps == 0 && same(&q11, &q10),
       "... and runs block-rk2 bit for bit like itself through 1.0");
    gp_sim_free(f11);
    gp_sim_free(f10);

    /* A swap to a 1.0 plugin mid-run under "1.1" fails at the next step. */
    ok(cur && gp_sim_set_solver_path(cur, "1.1") == GP_OK, "path 1.1 accepted with cpu-direct");
    void *h = dlopen(GP_SIM_ABI10, RTLD_NOW | RTLD_LOCAL);
    gravplug_entry_fn entry = h ? (gravplug_entry_fn)dlsym(h, GRAVPLUG_ENTRY_SYMBOL) : NULL;
    const gp_api *api = entry ? entry(GRAVPLUG_ABI_MAJOR) : NULL;
    gp_solver *s = NULL;
    int swapped = api && api->init(&s, NULL) == GP_OK && gp_sim_set_solver(cur, api, s, 1) == GP_OK;
    gp_status st = swapped ? gp_sim_step(cur, 10.0) : GP_ERR_INTERNAL;
    ok(st == GP_ERR_UNSUPPORTED && strstr(gp_sim_last_error(cur), "cpu-direct-abi10"),
       "after a swap to a 1.0 plugin, a block step on path 1.1 is refused: %s",
       cur ? gp_sim_last_error(cur) : "");
    ok(cur && gp_sim_set_solver_path(cur, "1.0") == GP_OK && gp_sim_step(cur, 10.0) == GP_OK
           && gp_sim_set_solver_path(cur, "2.0") == GP_ERR_INVALID_ARGUMENT,
       "... path 1.0 goes on; an unknown path is refused (%s)", cur ? gp_sim_last_error(cur) : "");
    gp_sim_free(cur);
    return done_testing();
}
