/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-masses.c — gp_sim_set_masses mid-run. Through ABI 1.1 the
 * changed masses go to the plugin in place (update_masses: no set_particles,
 * the state it holds stays, no full-state resend); through 1.0 (the "1.0"
 * path, or a 1.0-only plugin) the plugin gets a fresh set_particles. With
 * cpu-direct the two trajectories after the change are bit-identical (the
 * same masses and positions give the same sums; a tree plugin would differ
 * by its force error, a refit tree against a fresh build: measured here
 * against the effect of the mass change itself). Mass changes
 * both between runs (synchronised) and mid-block (levels out of step).
 */
#include "integrators-common.h"

#define N 384

static double pos0[3 * N], vel0[3 * N], mass0[N];

static gp_sim *make(const char *plugin, const char *integ, const char *path)
{
    return sim_on_path(plugin, N, pos0, vel0, mass0, integ, strncmp(integ, "block", 5) == 0, path);
}

typedef struct out { double pos[3 * N], vel[3 * N]; uint64_t resyncs_before, resyncs_after; int good; } out;

/* Evolve to 0.5, lose mass (every 7th particle keeps 60%), evolve to 1.0;
 * 7 block steps, every 5th particle gains 30% mid-block, evolve to 1.5.
 * change == 0: the same run without the mass changes. */
static void run(gp_sim *sim, int change, out *o)
{
    static double m[N];
    memset(o, 0, sizeof *o);
    memcpy(m, mass0, sizeof m);
    int good = sim && gp_sim_evolve(sim, 0.5) == GP_OK;
    if (sim) gp_sim_counter(sim, "state_resyncs", &o->resyncs_before);
    for (size_t i = 0; i < N; i += 7) m[i] *= 0.6;
    good = good && (!change || gp_sim_set_masses(sim, m) == GP_OK) && gp_sim_evolve(sim, 1.0) == GP_OK;
    for (int s = 0; good && s < 7; ++s) good = gp_sim_step(sim, 1.25) == GP_OK;
    for (size_t i = 0; i < N; i += 5) m[i] *= 1.3;
    good = good && (!change || gp_sim_set_masses(sim, m) == GP_OK);
    if (sim) gp_sim_counter(sim, "state_resyncs", &o->resyncs_after);
    good = good && gp_sim_evolve(sim, 1.5) == GP_OK
                && gp_sim_get_particles(sim, o->pos, o->vel, NULL, NULL) == GP_OK;
    if (!good && sim) diag("%s", gp_sim_last_error(sim));
    o->good = good;
}

static int same(const out *a, const out *b)
{
    return a->good && b->good && memcmp(a->pos, b->pos, sizeof a->pos) == 0
        && memcmp(a->vel, b->vel, sizeof a->vel) == 0;
}

static void check(const char *integ)
{
    static out a, b, c, d;
    gp_sim *sa = make("cpu-direct", integ, "auto"), *sb = make("cpu-direct", integ, "1.0");
    gp_sim *sc = make(GP_SIM_ABI10, integ, "auto"), *sd = make("cpu-direct", integ, "auto");
    run(sa, 1, &a);
    run(sb, 1, &b);
    run(sc, 1, &c);
    run(sd, 0, &d);
    ok(same(&a, &b), "%s: masses changed in place (update_masses) give the same bits as a "
       "fresh set_particles (path 1.0)", integ);
    ok(same(&a, &c), "%s: ... and as a 1.0-only plugin", integ);
    ok(a.good && d.good && !same(&a, &d), "%s: the mass changes change the trajectory", integ);
    if (strncmp(integ, "block", 5) == 0)
        /* The run resends the full state at its resync points (every
         * synchronised dt boundary) anyway: the mass changes add none. */
        ok(a.good && d.good && a.resyncs_after - a.resyncs_before == d.resyncs_after - d.resyncs_before,
           "%s: the mass changes add no full-state resend on the 1.1 path (%llu with them, %llu without)",
           integ, (unsigned long long)(a.resyncs_after - a.resyncs_before),
           (unsigned long long)(d.resyncs_after - d.resyncs_before));
    gp_sim_free(sa);
    gp_sim_free(sb);
    gp_sim_free(sc);
    gp_sim_free(sd);
}

/* cpu-tree: a refit tree (update_masses) against a fresh build (path 1.0)
 * differ by the tree's force error, not by rounding: measured and bounded. */
static void check_tree(void)
{
    static out a, b, d;
    gp_sim *sa = make("cpu-tree", "block-rk2", "auto"), *sb = make("cpu-tree", "block-rk2", "1.0");
    gp_sim *sd = make("cpu-tree", "block-rk2", "auto");
    run(sa, 1, &a);
    run(sb, 1, &b);
    run(sd, 0, &d);
    double dx = 0, dchange = 0;
    for (int k = 0; k < 3 * N; ++k) {
        dx = fmax(dx, fabs(a.pos[k] - b.pos[k]));
        dchange = fmax(dchange, fabs(a.pos[k] - d.pos[k]));
    }
    ok(a.good && b.good && d.good && dx < 0.05 * dchange,
       "cpu-tree: masses in place (refit) and a fresh build agree to the tree's error: max position "
       "difference %.1e, against %.1e made by the mass change itself", dx, dchange);
    gp_sim_free(sa);
    gp_sim_free(sb);
    gp_sim_free(sd);
}

int main(void)
{
    plan(4 + 4 + 3 + 1 + 3);
    small_cluster(N, 9, pos0, vel0, mass0);
    check("block-rk2");
    check("block-kdk");
    check("leapfrog");
    check_tree();

    gp_sim *sim = make("cpu-direct", "block-rk2", "auto");
    double m[N], got[N];
    memcpy(m, mass0, sizeof m);
    m[17] = -1.0;
    ok(sim && gp_sim_evolve(sim, 0.25) == GP_OK && gp_sim_set_masses(sim, m) == GP_ERR_INVALID_ARGUMENT
           && strstr(gp_sim_last_error(sim), "17"),
       "a negative mass is refused, naming the particle: %s", sim ? gp_sim_last_error(sim) : "");
    m[17] = NAN;
    ok(sim && gp_sim_set_masses(sim, m) == GP_ERR_INVALID_ARGUMENT && gp_sim_set_masses(sim, NULL) == GP_ERR_INVALID_ARGUMENT,
       "NaN masses and a NULL array are refused");
    ok(sim && gp_sim_get_particles(sim, NULL, NULL, got, NULL) == GP_OK && memcmp(got, mass0, sizeof got) == 0,
       "... and leave the masses as they were");
    gp_sim_free(sim);
    return done_testing();
}
