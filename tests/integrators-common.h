/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-common.h — helpers for the integrators-* tests: a Kepler
 * two-body orbit, a small Plummer-like cluster, and a gp_sim on cpu-direct.
 */
#ifndef GP_INTEGRATORS_COMMON_H
#define GP_INTEGRATORS_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_integrator.h"
#include "tap.h"
#include "testlib.h"

/* Two bodies of mass 1/2 each (G = 1, M = 1) on an orbit of semi-major
 * axis 1 and eccentricity e, starting at pericentre; period 2 pi. */
static TL_UNUSED void kepler_state(double e, double *pos, double *vel, double *mass)
{
    double r = 1.0 - e, v = sqrt((1.0 + e) / (1.0 - e));
    double p[6] = { -0.5 * r, 0, 0, 0.5 * r, 0, 0 };
    double u[6] = { 0, -0.5 * v, 0, 0, 0.5 * v, 0 };
    memcpy(pos, p, sizeof p);
    memcpy(vel, u, sizeof u);
    mass[0] = mass[1] = 0.5;
}

/* n equal-mass particles (total mass 1) drawn from a Plummer sphere (scale
 * radius 1) with isotropic velocities, seed fixed: an honest little
 * cluster for cross-checks, independent of host_stub/ic. */
static TL_UNUSED void small_cluster(size_t n, uint64_t seed, double *pos, double *vel, double *mass)
{
    tl_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        double r = 1.0 / sqrt(pow(tl_uniform(&rng), -2.0 / 3.0) - 1.0);
        if (r > 10) r = 10;
        double ct = 2 * tl_uniform(&rng) - 1, ph = 2 * M_PI * tl_uniform(&rng), st = sqrt(1 - ct * ct);
        pos[3 * i] = r * st * cos(ph); pos[3 * i + 1] = r * st * sin(ph); pos[3 * i + 2] = r * ct;
        double vesc = sqrt(2.0) * pow(1 + r * r, -0.25), q;
        do { q = tl_uniform(&rng); } while (0.1 * tl_uniform(&rng) > q * q * pow(1 - q * q, 3.5));
        double v = q * vesc;
        ct = 2 * tl_uniform(&rng) - 1; ph = 2 * M_PI * tl_uniform(&rng); st = sqrt(1 - ct * ct);
        vel[3 * i] = v * st * cos(ph); vel[3 * i + 1] = v * st * sin(ph); vel[3 * i + 2] = v * ct;
        mass[i] = 1.0 / (double)n;
    }
}

/* A gp_sim on cpu-direct with softening eps (a string), or NULL with a
 * diagnostic. */
static TL_UNUSED gp_sim *sim_on_direct(const char *eps)
{
    gp_sim *sim = NULL;
    if (gp_sim_new(&sim) != GP_OK) { diag("gp_sim_new: %s", gp_sim_last_error(NULL)); return NULL; }
    const char *names[] = { "eps" }, *values[] = { eps };
    if (gp_sim_open_solver(sim, "cpu-direct", 1, names, values) != GP_OK) {
        diag("open cpu-direct: %s", gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

/* A gp_sim on plugin (eps 0.05) with the n particles given, integrator
 * integ with dt 0.25 (and eta 0.05 when eta_too), on solver path path; or
 * NULL with a diagnostic. */
static TL_UNUSED gp_sim *sim_on_path(const char *plugin, size_t n, const double *pos, const double *vel,
                                     const double *mass, const char *integ, int eta_too, const char *path)
{
    gp_sim *sim = NULL;
    if (gp_sim_new(&sim) != GP_OK) return NULL;
    const char *names[] = { "eps" }, *values[] = { "0.05" };
    if (gp_sim_open_solver(sim, plugin, 1, names, values) != GP_OK
        || gp_sim_set_particles(sim, n, pos, vel, mass, NULL) != GP_OK
        || gp_sim_set_integrator(sim, integ) != GP_OK
        || (eta_too && gp_sim_set_integrator_param(sim, "eta", "0.05") != GP_OK)
        || gp_sim_set_integrator_param(sim, "dt", "0.25") != GP_OK
        || gp_sim_set_solver_path(sim, path) != GP_OK) {
        diag("%s on %s, path %s: %s", integ, plugin, path, gp_sim_last_error(sim));
        gp_sim_free(sim);
        return NULL;
    }
    return sim;
}

#endif
