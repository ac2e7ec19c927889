/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-criteria.c — the block schemes (block-rk2, block-kdk) take
 * the time-step criterion they are given: on a small cluster, each of
 * softening, jerk, min and velocity gives its own levels, so its own count
 * of particle forces; min (the smaller of softening's and the jerk's steps)
 * never asks for fewer forces than the jerk criterion over the first top
 * step, where both start from the same accelerations. And the jerk bound
 * (parameter eta_jerk, gp_jerk_bound): its arithmetic, no change where it
 * never binds, more forces where it does.
 */
#include "integrators-common.h"
#include "schemes/timestep_criteria.h"

#define N 64

static double pos[3 * N], vel[3 * N], mass[N];

/* Particle forces of one run of scheme with criterion crit (and eta_jerk,
 * when not NULL) to t_end; its final positions to x when not NULL. */
static uint64_t forces_jerk(const char *scheme, const char *crit, const char *eta_jerk, double t_end,
                            double *x)
{
    gp_sim *sim = sim_on_direct("0.05");
    uint64_t pf = 0;
    if (sim && gp_sim_set_particles(sim, N, pos, vel, mass, NULL) == GP_OK &&
        gp_sim_set_integrator(sim, scheme) == GP_OK &&
        gp_sim_set_integrator_param(sim, "dt", "0.25") == GP_OK &&
        gp_sim_set_integrator_param(sim, "eta", "0.1") == GP_OK &&
        gp_sim_set_integrator_param(sim, "criterion", crit) == GP_OK &&
        (!eta_jerk || gp_sim_set_integrator_param(sim, "eta_jerk", eta_jerk) == GP_OK) &&
        gp_sim_evolve(sim, t_end) == GP_OK &&
        (!x || gp_sim_get_particles(sim, x, NULL, NULL, NULL) == GP_OK))
        gp_sim_counter(sim, "particle_forces", &pf);
    else
        diag("%s, %s: %s", scheme, crit, sim ? gp_sim_last_error(sim) : "no simulation");
    gp_sim_free(sim);
    return pf;
}

static uint64_t forces_with(const char *scheme, const char *crit, double t_end)
{
    return forces_jerk(scheme, crit, NULL, t_end, NULL);
}

static void jerk_bound_arithmetic(void)
{
    const double a[3] = { 1.0, 0.0, 0.0 }, a_old[3] = { 0.5, 0.0, 0.0 };
    /* da/dt = 0.5 / 0.25 = 2: eta_jerk |a| / |da/dt| = 0.5 at eta_jerk 1 */
    ok(gp_jerk_bound(1.0, 1.0, a, a_old, 0.25) == 0.5, "gp_jerk_bound: eta_jerk |a| / |da/dt| where shorter");
    ok(gp_jerk_bound(0.25, 1.0, a, a_old, 0.25) == 0.25, "gp_jerk_bound: the criterion's step where shorter");
    ok(gp_jerk_bound(1.0, 0.0, a, a_old, 0.25) == 1.0 && gp_jerk_bound(1.0, 1.0, a, NULL, 0.25) == 1.0 &&
           gp_jerk_bound(1.0, 1.0, a, a_old, 0.0) == 1.0 && gp_jerk_bound(1.0, 1.0, a, a, 0.25) == 1.0,
       "gp_jerk_bound: no bound when off, without a previous acceleration or step, or with a constant a");
}

int main(void)
{
    small_cluster(N, 5, pos, vel, mass);
    jerk_bound_arithmetic();
    const char *schemes[] = { "block-rk2", "block-kdk" };
    for (int s = 0; s < 2; ++s) {
        uint64_t soft = forces_with(schemes[s], "softening", 1.0);
        uint64_t jerk = forces_with(schemes[s], "jerk", 1.0);
        uint64_t velo = forces_with(schemes[s], "velocity", 1.0);
        uint64_t mn = forces_with(schemes[s], "min", 0.25), jerk1 = forces_with(schemes[s], "jerk", 0.25);
        diag("%s particle forces to t = 1: softening %llu, jerk %llu, velocity %llu; to t = 0.25: "
             "min %llu, jerk %llu", schemes[s], (unsigned long long)soft, (unsigned long long)jerk,
             (unsigned long long)velo, (unsigned long long)mn, (unsigned long long)jerk1);
        ok(soft && jerk && velo && jerk != soft && velo != soft,
           "%s: the jerk and velocity criteria give levels of their own", schemes[s]);
        ok(mn && mn >= jerk1, "%s: min asks for at least the jerk criterion's forces", schemes[s]);
        static double x0[3 * N], x1[3 * N];
        uint64_t loose = forces_jerk(schemes[s], "softening", "1e9", 1.0, x1);
        uint64_t tight = forces_jerk(schemes[s], "softening", "0.05", 1.0, NULL);
        forces_jerk(schemes[s], "softening", NULL, 1.0, x0);
        diag("%s softening to t = 1 with eta_jerk: off %llu, 1e9 %llu, 0.05 %llu particle forces", schemes[s],
             (unsigned long long)soft, (unsigned long long)loose, (unsigned long long)tight);
        ok(loose == soft && memcmp(x0, x1, sizeof x0) == 0,
           "%s: a jerk bound that never binds changes no bit", schemes[s]);
        ok(tight > soft, "%s: a tight jerk bound asks for more forces", schemes[s]);
    }
    done_testing();
}
