/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-criteria.c — the block schemes (block-rk2, block-kdk) take
 * the time-step criterion they are given: on a small cluster, each of
 * softening, jerk, min and velocity gives its own levels, so its own count
 * of particle forces; min (the smaller of softening's and the jerk's steps)
 * never asks for fewer forces than the jerk criterion over the first top
 * step, where both start from the same accelerations.
 */
#include "integrators-common.h"

#define N 64

static double pos[3 * N], vel[3 * N], mass[N];

/* Particle forces of one run of scheme with criterion crit to t_end. */
static uint64_t forces_with(const char *scheme, const char *crit, double t_end)
{
    gp_sim *sim = sim_on_direct("0.05");
    uint64_t pf = 0;
    if (sim && gp_sim_set_particles(sim, N, pos, vel, mass, NULL) == GP_OK &&
        gp_sim_set_integrator(sim, scheme) == GP_OK &&
        gp_sim_set_integrator_param(sim, "dt", "0.25") == GP_OK &&
        gp_sim_set_integrator_param(sim, "eta", "0.1") == GP_OK &&
        gp_sim_set_integrator_param(sim, "criterion", crit) == GP_OK &&
        gp_sim_evolve(sim, t_end) == GP_OK)
        gp_sim_counter(sim, "particle_forces", &pf);
    else
        diag("%s, %s: %s", scheme, crit, sim ? gp_sim_last_error(sim) : "no simulation");
    gp_sim_free(sim);
    return pf;
}

int main(void)
{
    small_cluster(N, 5, pos, vel, mass);
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
    }
    done_testing();
}
