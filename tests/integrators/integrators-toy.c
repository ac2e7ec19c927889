/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-toy.c — adding an integrator is one file and one
 * registration, as docs/INTEGRATORS.md says: a scheme written here, outside
 * the library (as integrator research would), with its own settings struct
 * and descriptor table, registered with gp_integrator_register_def, then
 * driven through the public gp_sim API. Its parameters are listed, parsed,
 * refused and printed from the table alone, it integrates, and a checkpoint
 * brings its settings and its run back bit for bit.
 */
#include "integrators-common.h"
#include "core/sim_core.h"
#include "solver/force.h"
#include "schemes/registry.h"

#define N 64

/* A symplectic Euler (kick then drift) with a shared step, its step a
 * fraction of dt: enough to have a double, an int and a choice setting. */
typedef struct toy_settings {
    double dt;
    int substeps;       /* steps per dt */
    int order;          /* 0: kick-drift, 1: drift-kick */
} toy_settings;

static const char *const toy_orders[] = { "kick-drift", "drift-kick", NULL };

static const gp_setting toy_table[] = {
    GP_SETTING_POSITIVE(toy_settings, dt, "0.05", "the outer step"),
    { "substeps", GP_SETTING_INT, "2", "steps per dt", offsetof(toy_settings, substeps), 1, 8, 0, NULL, NULL, 0 },
    { "order", GP_SETTING_CHOICE, "kick-drift", "kick-drift or drift-kick",
      offsetof(toy_settings, order), 0, 0, 0, toy_orders, NULL, 0 },
};

static const toy_settings *toy(const gp_sim *sim) { return sim->settings; }

static gp_status toy_start(gp_sim *sim)
{
    gp_levels_anchor(&sim->lv, sim->time, toy(sim)->dt / toy(sim)->substeps, 0);
    return gp_force_all(sim, sim->pos, sim->acc, NULL);
}

static gp_status toy_step(gp_sim *sim, double t_end)
{
    double h = sim->lv.dt_max;
    if (sim->time + h > t_end) h = t_end - sim->time;
    size_t m = 3 * sim->n;
    double *x = sim->pos, *v = sim->vel, *a = sim->acc;
    if (toy(sim)->order == 0) {
        for (size_t k = 0; k < m; ++k) { v[k] += h * a[k]; x[k] += h * v[k]; }
        gp_status st = gp_force_all(sim, x, a, NULL);
        if (st != GP_OK) return st;
    } else {
        for (size_t k = 0; k < m; ++k) x[k] += h * v[k];
        gp_status st = gp_force_all(sim, x, a, NULL);
        if (st != GP_OK) return st;
        for (size_t k = 0; k < m; ++k) v[k] += h * a[k];
    }
    gp_levels_anchor(&sim->lv, sim->time + h, sim->lv.dt_max, 0);
    sim->time += h;
    return GP_OK;
}

static const gp_integrator_def toy_def = {
    .name = "toy-euler",
    .summary = "a test's own scheme: symplectic Euler, substeps per dt",
    GP_SETTINGS_TABLE(toy_table, toy_settings),
    .start = toy_start, .step = toy_step,
};

static double pos0[3 * N], vel0[3 * N], mass0[N];

static gp_sim *make(void)
{
    gp_sim *sim = sim_on_direct("0.05");
    if (sim && (gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) != GP_OK
                || gp_sim_set_integrator(sim, "toy-euler") != GP_OK)) {
        diag("%s", gp_sim_last_error(sim));
        gp_sim_free(sim);
        sim = NULL;
    }
    return sim;
}

static int param_is(gp_sim *sim, const char *name, const char *want)
{
    char buf[64] = "";
    gp_status st = gp_sim_get_integrator_param(sim, name, buf, sizeof buf);
    if (st != GP_OK || strcmp(buf, want) != 0) diag("%s = \"%s\" (want \"%s\")", name, buf, want);
    return st == GP_OK && strcmp(buf, want) == 0;
}

int main(void)
{
    small_cluster(N, 11, pos0, vel0, mass0);

    ok(gp_integrator_register_def(&toy_def) == 0, "a scheme from outside the library registers");
    ok(gp_integrator_register_def(&toy_def) == -1, "its name cannot be registered twice");
    int listed = 0;
    for (size_t i = 0; i < gp_integrator_count(); ++i) listed |= strcmp(gp_integrator_name(i), "toy-euler") == 0;
    ok(listed, "it is listed among the integrators");
    const char *name = NULL, *deflt = NULL, *doc = NULL;
    gp_status listed_row = gp_integrator_param("toy-euler", 1, &name, &deflt, &doc);
    ok(listed_row == GP_OK && strcmp(name, "substeps") == 0
       && strcmp(deflt, "2") == 0 && strcmp(doc, "steps per dt") == 0,
       "its parameters are listed from its table (row 1: %s = %s)", name ? name : "?", deflt ? deflt : "?");
    ok(gp_integrator_param("toy-euler", 3, &name, &deflt, &doc) == GP_ERR_INVALID_ARGUMENT, "and no more rows than it has");

    gp_sim *a = make();
    ok(a != NULL, "a gp_sim runs it");
    if (!a) return done_testing();
    ok(param_is(a, "dt", "0.050000000000000003") && param_is(a, "substeps", "2") && param_is(a, "order", "kick-drift"),
       "the defaults come from the table");
    ok(gp_sim_set_integrator_param(a, "substeps", "9") == GP_ERR_INVALID_ARGUMENT
       && strstr(gp_sim_last_error(a), "is not an integer in [1, 8]"), "an int out of its range is refused: %s",
       gp_sim_last_error(a));
    ok(gp_sim_set_integrator_param(a, "order", "leapfrog") == GP_ERR_INVALID_ARGUMENT
       && strstr(gp_sim_last_error(a), "is not one of kick-drift, drift-kick"), "an unknown choice is refused: %s",
       gp_sim_last_error(a));
    ok(gp_sim_set_integrator_param(a, "dt", "-1") == GP_ERR_INVALID_ARGUMENT
       && strstr(gp_sim_last_error(a), "must be > 0"), "a double below its bound is refused: %s", gp_sim_last_error(a));
    ok(gp_sim_set_integrator_param(a, "eta", "0.1") == GP_ERR_UNKNOWN_PARAMETER
       && strstr(gp_sim_last_error(a), "it accepts dt, substeps, order"), "a name not in the table is refused: %s",
       gp_sim_last_error(a));
    ok(param_is(a, "substeps", "2") && param_is(a, "order", "kick-drift"), "refusals change nothing");
    ok(gp_sim_set_integrator_param(a, "substeps", "4") == GP_OK && gp_sim_set_integrator_param(a, "order", "drift-kick") == GP_OK
       && gp_sim_set_integrator_param(a, "dt", "0.1") == GP_OK
       && param_is(a, "substeps", "4") && param_is(a, "order", "drift-kick") && param_is(a, "dt", "0.10000000000000001"),
       "good values are taken and printed back");

    double k0 = 0, w0 = 0, k1 = 0, w1 = 0;   /* printed even when a call failed */
    int good = gp_sim_energies(a, &k0, &w0) == GP_OK && gp_sim_evolve(a, 0.5) == GP_OK
               && gp_sim_energies(a, &k1, &w1) == GP_OK;
    uint64_t steps = 0;
    gp_sim_counter(a, "steps", &steps);
    ok(good && steps == 20 && fabs((k1 + w1) - (k0 + w0)) < 1e-2 * fabs(k0 + w0),
       "it integrates: %llu steps of dt/4 to t = 0.5, energy %.6g -> %.6g", (unsigned long long)steps, k0 + w0, k1 + w1);

    const char *path = "integrators-toy.tmp.ckpt";
    static double pa[3 * N], va[3 * N], pb[3 * N], vb[3 * N];
    gp_sim *b = sim_on_direct("0.05");
    good = b && gp_sim_checkpoint_save(a, path, NULL, 0) == GP_OK && gp_sim_evolve(a, 1.0) == GP_OK
           && gp_sim_checkpoint_load(b, path, NULL, 0, NULL) == GP_OK;
    if (!good) diag("%s / %s", gp_sim_last_error(a), b ? gp_sim_last_error(b) : "no sim");
    ok(good && param_is(b, "substeps", "4") && param_is(b, "order", "drift-kick") && param_is(b, "dt", "0.10000000000000001"),
       "a checkpoint brings its settings back from the table");
    good = good && gp_sim_evolve(b, 1.0) == GP_OK && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
           && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
    ok(good && memcmp(pa, pb, sizeof pa) == 0 && memcmp(va, vb, sizeof va) == 0,
       "and the restarted run continues bit for bit");
    remove(path);
    gp_sim_free(a);
    gp_sim_free(b);
    return done_testing();
}
