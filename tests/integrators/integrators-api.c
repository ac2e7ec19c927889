/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-api.c — the gp_sim API refuses bad input with a status and a
 * sentence and never crashes; evolve lands on the asked time; predicted
 * state, counters, levels, field and energies behave.
 */
#include "integrators-common.h"

#define N 64

/* gp_sim_set_log's receiver: the lines and the last one */
static int log_lines;
static char log_last[256];
static void count_log(void *user, int level, const char *message)
{
    (void)level;
    ++*(int *)user;
    snprintf(log_last, sizeof log_last, "%s", message);
}

int main(void)
{
    plan(30);
    static double pos[3 * N], vel[3 * N], mass[N];
    small_cluster(N, 11, pos, vel, mass);
    gp_sim *sim = NULL;
    is_int(gp_sim_new(&sim), GP_OK, "gp_sim_new");
    is_int(gp_sim_new(NULL), GP_ERR_INVALID_ARGUMENT, "gp_sim_new(NULL) is refused");

    is_int(gp_sim_evolve(sim, 1.0), GP_ERR_BAD_STATE, "evolve without particles: bad state");
    ok(strstr(gp_sim_last_error(sim), "gp_sim_set_particles") != NULL, "... and the sentence says what to do");
    is_int(gp_sim_set_particles(sim, 0, pos, vel, mass, NULL), GP_ERR_INVALID_ARGUMENT, "n = 0 refused");
    is_int(gp_sim_set_particles(sim, N, NULL, vel, mass, NULL), GP_ERR_INVALID_ARGUMENT, "NULL positions refused");
    double saved = pos[5];
    pos[5] = NAN;
    is_int(gp_sim_set_particles(sim, N, pos, vel, mass, NULL), GP_ERR_INVALID_ARGUMENT, "NaN refused");
    pos[5] = saved;
    mass[3] = -1;
    is_int(gp_sim_set_particles(sim, N, pos, vel, mass, NULL), GP_ERR_INVALID_ARGUMENT, "negative mass refused");
    mass[3] = 1.0 / N;
    is_int(gp_sim_set_particles(sim, N, pos, vel, mass, NULL), GP_OK, "valid particles accepted");
    is_int(gp_sim_evolve(sim, 1.0), GP_ERR_BAD_STATE, "evolve without a solver: bad state");
    is_int(gp_sim_open_solver(sim, "no-such-plugin", 0, NULL, NULL), GP_ERR_INVALID_ARGUMENT,
           "an unknown plugin is refused");
    const char *bn[] = { "no_such_param" }, *bv[] = { "1" };
    ok(gp_sim_open_solver(sim, "cpu-direct", 1, bn, bv) == GP_ERR_UNKNOWN_PARAMETER
       && strstr(gp_sim_last_error(sim), "no_such_param"),
       "an unknown plugin parameter is refused with the plugin's sentence: %s", gp_sim_last_error(sim));
    const char *en[] = { "eps" }, *ev[] = { "0.05" };
    is_int(gp_sim_open_solver(sim, "cpu-direct", 1, en, ev), GP_OK, "cpu-direct opened");

    ok(gp_sim_set_integrator(sim, "euler") == GP_ERR_UNKNOWN_PARAMETER
       && strstr(gp_sim_last_error(sim), "block-rk2"),
       "an unknown integrator is refused, naming the known ones: %s", gp_sim_last_error(sim));
    is_int(gp_sim_set_integrator_param(sim, "rtol", "1e-6"), GP_ERR_UNKNOWN_PARAMETER,
           "block-rk2 has no rtol");
    is_int(gp_sim_set_integrator_param(sim, "eta", "-1"), GP_ERR_INVALID_ARGUMENT, "eta must be > 0");
    is_int(gp_sim_set_integrator_param(sim, "criterion", "magic"), GP_ERR_INVALID_ARGUMENT, "unknown criterion refused");
    is_int(gp_sim_set_integrator_param(sim, "dt", "0.125"), GP_OK, "dt_max set");
    char buf[64];
    ok(gp_sim_get_integrator_param(sim, "dt", buf, sizeof buf) == GP_OK && strcmp(buf, "0.125") == 0,
       "get_integrator_param returns what was set (%s)", buf);

    is_int(gp_sim_evolve(sim, 0.3), GP_OK, "evolve to an off-grid time");
    ok(gp_sim_time(sim) == 0.3 && gp_sim_synchronised(sim), "lands exactly on t = 0.3, synchronised");
    is_int(gp_sim_evolve(sim, 0.1), GP_ERR_INVALID_ARGUMENT, "evolving backwards is refused");
    uint64_t fc = 0, pf = 0, syncs = 0;
    gp_sim_counter(sim, "force_calls", &fc);
    gp_sim_counter(sim, "particle_forces", &pf);
    gp_sim_counter(sim, "syncs", &syncs);
    ok(fc > 0 && pf >= fc && pf <= fc * N && syncs == 1,
       "counters: %llu force calls, %llu particle forces, %llu sync", (unsigned long long)fc,
       (unsigned long long)pf, (unsigned long long)syncs);
    uint64_t x;
    is_int(gp_sim_counter(sim, "bogus", &x), GP_ERR_UNKNOWN_PARAMETER, "unknown counter refused");

    /* a step leaves some particles unsynchronised; the predicted state is
     * close to a synchronised one */
    gp_sim_step(sim, 10.0);
    size_t nl = 0;
    uint64_t counts[32];
    gp_sim_level_counts(sim, counts, 32, &nl);
    diag("after one block step: %zu levels in use, synchronised %d", nl, gp_sim_synchronised(sim));
    ok(nl >= 1, "levels reported");

    /* field at a far point: acceleration ~ -M r / |r|^3 */
    double p[3] = { 100, 0, 0 }, a[3] = { 0 }, phi = 0;
    gp_status fst = gp_sim_field_at(sim, 1, p, a, &phi);
    ok(fst == GP_OK && fabs(a[0] + 1e-4) < 1e-6 && fabs(phi + 0.01) < 1e-4,
       "field far away is -GM/r^2 (%g) and -GM/r (%g)", a[0], phi);
    double k = 0, w = 0;
    gp_status est = gp_sim_energies(sim, &k, &w);
    ok(est == GP_OK && k > 0 && w < 0, "energies: K = %g, W = %g", k, w);
    is_int(gp_sim_checkpoint_load(sim, "/nonexistent/ckpt", NULL, 0, NULL), GP_ERR_INVALID_ARGUMENT,
           "loading a missing checkpoint is refused");

    /* gp_sim_set_log: the plugins opened after it log there (here the
     * sentence of a refused parameter); NULL silences the next ones */
    gp_sim_set_log(sim, count_log, &log_lines);
    gp_sim_open_solver(sim, "cpu-direct", 1, en, ev);
    gp_sim_set_solver_param(sim, "eps", "-1");
    ok(log_lines >= 1 && strstr(log_last, "eps"), "a plugin opened after gp_sim_set_log logs there (%d: %s)",
       log_lines, log_last);
    gp_sim_set_log(sim, NULL, NULL);
    gp_sim_open_solver(sim, "cpu-direct", 1, en, ev);
    int before = log_lines;
    gp_sim_set_solver_param(sim, "eps", "-1");
    ok(log_lines == before, "after gp_sim_set_log(NULL) the next plugin is silent (%d lines)", log_lines - before);
    gp_sim_free(sim);
    gp_sim_free(NULL);
    return done_testing();
}
