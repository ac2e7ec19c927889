/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-collisions-hold.c — collisions inside a step: three head-on
 * pairs, far apart, that meet and part between two outer steps (they pass
 * through each other within one outer step of 0.25). hold and hold-kdk
 * report all three, at the drift where their fast pairs overlap, as
 * leapfrog (fixed steps of 0.01) and hermite (its steps shrink near the
 * encounter) do at the step that ends with them overlapping.
 */
#include "integrators-common.h"

#define N 6

int main(void)
{
    plan_lazy();
    double pos[3 * N] = { 0 }, vel[3 * N] = { 0 }, mass[N], radius[N];
    for (int k = 0; k < 3; ++k) {
        /* pair k at x = 100 k, bodies 2.3 apart closing at 4: they overlap
         * for t in (0.5625, 0.5875), inside one outer step of hold's (0.25)
         * and across fixed steps of 0.01 */
        pos[3 * (2 * k)] = 100.0 * k - 1.15;
        pos[3 * (2 * k + 1)] = 100.0 * k + 1.15;
        vel[3 * (2 * k)] = 2.0;
        vel[3 * (2 * k + 1)] = -2.0;
    }
    for (int i = 0; i < N; ++i) { mass[i] = 1e-6; radius[i] = 0.05; }
    const char *integs[] = { "hold", "hold-kdk", "leapfrog", "hermite" };
    for (size_t w = 0; w < sizeof integs / sizeof *integs; ++w) {
        gp_sim *sim = sim_on_direct("0");
        if (!sim) { ok(0, "%s: set up", integs[w]); continue; }
        int fixed = !strcmp(integs[w], "leapfrog");
        gp_status st = gp_sim_set_particles(sim, N, pos, vel, mass, NULL);
        if (st == GP_OK) st = gp_sim_set_integrator(sim, integs[w]);
        if (st == GP_OK) st = gp_sim_set_integrator_param(sim, "dt", fixed ? "0.01" : "0.25");
        if (st == GP_OK) st = gp_sim_set_radii(sim, radius);
        if (st == GP_OK) st = gp_sim_stop_enable(sim, GP_STOP_COLLISION, 1);
        /* each evolve stops at a collision; the pairs met are counted, once */
        int seen[3] = { 0, 0, 0 }, evolves = 0;
        while (st == GP_OK && gp_sim_time(sim) < 1.0 && evolves++ < 50) {
            st = gp_sim_evolve(sim, 1.0);
            size_t c = gp_sim_stop_count(sim, GP_STOP_COLLISION);
            uint64_t a[8], b[8];
            if (st == GP_OK && c && gp_sim_stop_particles(sim, GP_STOP_COLLISION, 8, a, b) == GP_OK)
                for (size_t k = 0; k < c && k < 8; ++k)
                    if (a[k] / 2 == b[k] / 2 && a[k] / 2 < 3) seen[a[k] / 2] = 1;
        }
        ok(st == GP_OK && seen[0] + seen[1] + seen[2] == 3,
           "%s: the three head-on pairs are reported (%d of 3)%s%s", integs[w],
           seen[0] + seen[1] + seen[2], st ? ": " : "", st ? gp_sim_last_error(sim) : "");
        gp_sim_free(sim);
    }
    return done_testing();
}
