/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-backward.c — gp_sim_evolve to an earlier time, on cpu-direct:
 * an integrator with GP_SCHEME_BACKWARD reaches t_end < t (time and
 * particles), its backward run is the forward run of the reversed state,
 * reversed (as Huayno's test27 asks); one with GP_SCHEME_TIME_SYMMETRIC
 * returns from a forward-then-back run to rounding; every other one is
 * refused with a sentence, its state untouched.
 */
#include "integrators-common.h"

#define N 16

static gp_sim *cluster_sim(const char *integ, const double *pos, const double *vel, const double *mass)
{
    gp_sim *sim = sim_on_direct("0.05");
    if (!sim) return NULL;
    if (gp_sim_set_particles(sim, N, pos, vel, mass, NULL) != GP_OK
        || gp_sim_set_integrator(sim, integ) != GP_OK
        || (strcmp(integ, "rk8pd") && gp_sim_set_integrator_param(sim, "dt", "0.03125") != GP_OK)) {
        diag("%s: %s", integ, gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

int main(void)
{
    plan_lazy();
    double pos[3 * N], vel[3 * N], rvel[3 * N], mass[N];
    small_cluster(N, 11, pos, vel, mass);
    for (size_t k = 0; k < 3 * N; ++k) rvel[k] = -vel[k];
    const double T = 0.25;
    int backward_seen = 0, refused_seen = 0;
    for (size_t i = 0; i < gp_integrator_count(); ++i) {
        const char *name = gp_integrator_name(i);
        unsigned flags = 0;
        if (gp_integrator_flags(name, &flags) != GP_OK) { ok(0, "%s: flags", name); continue; }
        gp_sim *fw = cluster_sim(name, pos, vel, mass), *bw = cluster_sim(name, pos, rvel, mass);
        if (!fw || !bw) { ok(0, "%s: set up", name); gp_sim_free(fw); gp_sim_free(bw); continue; }
        gp_status st = gp_sim_evolve(bw, -T);
        if (flags & GP_SCHEME_BACKWARD) {
            backward_seen++;
            double pf[3 * N], vf[3 * N], pb[3 * N], vb[3 * N];
            ok(st == GP_OK && gp_sim_time(bw) == -T, "%s: evolve to t = -%g reaches it (t = %g)%s%s",
               name, T, gp_sim_time(bw), st ? ": " : "", st ? gp_sim_last_error(bw) : "");
            gp_sim_evolve(fw, T);
            gp_sim_get_particles(fw, pf, vf, NULL, NULL);
            gp_sim_get_particles(bw, pb, vb, NULL, NULL);
            for (size_t k = 0; k < 3 * N; ++k) vb[k] = -vb[k];
            double dp = max_diff(pf, pb, 3 * N), dv = max_diff(vf, vb, 3 * N);
            ok(dp <= 1e-14 && dv <= 1e-14,
               "%s: backward from (x, -v) is the forward run from (x, v), mirrored (|dx| %.2g, |dv| %.2g)",
               name, dp, dv);
            /* forward, then back to the start */
            gp_status s2 = gp_sim_evolve(fw, 0.0);
            gp_sim_get_particles(fw, pf, vf, NULL, NULL);
            double rp = max_diff(pf, pos, 3 * N), rv = max_diff(vf, vel, 3 * N);
            ok(s2 == GP_OK && gp_sim_time(fw) == 0.0, "%s: back from t = %g to 0", name, T);
            if (flags & GP_SCHEME_TIME_SYMMETRIC)
                ok(rp <= 1e-12 && rv <= 1e-12, "%s (time-symmetric): forward then back returns to "
                   "rounding (|dx| %.2g, |dv| %.2g)", name, rp, rv);
            else
                diag("%s: forward then back misses the start by |dx| %.2g, |dv| %.2g "
                     "(not flagged time-symmetric)", name, rp, rv);
        } else {
            refused_seen++;
            double pb[3 * N];
            gp_sim_get_particles(bw, pb, NULL, NULL, NULL);
            ok(st == GP_ERR_INVALID_ARGUMENT && strstr(gp_sim_last_error(bw), "cannot evolve backwards")
               && strstr(gp_sim_last_error(bw), "leapfrog") && gp_sim_time(bw) == 0.0
               && max_diff(pb, pos, 3 * N) == 0.0,
               "%s (not backward): refused with a sentence naming those that can, state kept: %s",
               name, gp_sim_last_error(bw));
        }
        gp_sim_free(fw);
        gp_sim_free(bw);
    }
    ok(backward_seen > 0 && refused_seen > 0, "both kinds seen (%d backward, %d not)", backward_seen, refused_seen);
    return done_testing();
}
