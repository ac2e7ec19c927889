/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-timesteps.c — gp_sim_particle_timesteps: every particle's
 * step, as ph4 and Huayno users read particles.timestep: dt_max / 2^level
 * under block steps (matching gp_sim_level_counts), the shared dt under
 * leapfrog, and a refusal with a sentence under rk8pd.
 */
#include "integrators-common.h"

#define N 32

int main(void)
{
    plan_lazy();
    double pos[3 * N], vel[3 * N], mass[N], dt[N];
    small_cluster(N, 5, pos, vel, mass);
    const char *integs[] = { "hermite", "hold", "block-rk2", "leapfrog" };
    for (size_t w = 0; w < sizeof integs / sizeof *integs; ++w) {
        gp_sim *sim = sim_on_direct("0.01");
        if (!sim || gp_sim_set_particles(sim, N, pos, vel, mass, NULL) != GP_OK
            || gp_sim_set_integrator(sim, integs[w]) != GP_OK
            || gp_sim_set_integrator_param(sim, "dt", "0.125") != GP_OK) {
            ok(0, "%s: set up", integs[w]);
            gp_sim_free(sim);
            continue;
        }
        gp_status st = gp_sim_evolve(sim, 0.25);
        if (st == GP_OK) st = gp_sim_particle_timesteps(sim, dt);
        uint64_t counts[41] = { 0 };
        size_t used = 0;
        gp_sim_level_counts(sim, counts, 41, &used);
        int agree = st == GP_OK;
        uint64_t per[41] = { 0 };
        for (size_t i = 0; i < N && agree; ++i) {
            double l = -log2(dt[i] / 0.125);
            int li = (int)lround(l);
            agree = dt[i] > 0 && dt[i] <= 0.125 && fabs(l - li) < 1e-12 && li < 41;
            if (agree) per[li]++;
        }
        for (size_t l = 0; l < 41 && agree; ++l) agree = per[l] == counts[l];
        ok(agree, "%s: every step is 0.125 / 2^level, as many on each level as "
           "gp_sim_level_counts says (%zu levels)%s%s", integs[w], used,
           st ? ": " : "", st ? gp_sim_last_error(sim) : "");
        gp_sim_free(sim);
    }
    gp_sim *sim = sim_on_direct("0.01");
    gp_sim_set_particles(sim, N, pos, vel, mass, NULL);
    gp_sim_set_integrator(sim, "rk8pd");
    gp_status st = gp_sim_particle_timesteps(sim, dt);
    ok(st == GP_ERR_UNSUPPORTED && strstr(gp_sim_last_error(sim), "rk8pd"),
       "rk8pd: no per-particle step, saying why: %s", gp_sim_last_error(sim));
    gp_sim_free(sim);
    return done_testing();
}
