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

#include "gp_sim.h"
#include "gravplug_loader.h"
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

/* cpu-direct (eps 0.01) behind a copy of its table cut to an older ABI
 * minor: *api gets the table (struct_size: the first entry left out),
 * *solver an instance. 1 on success; 0 with *solver NULL and the reason in
 * err otherwise. */
static TL_UNUSED int cpu_direct_as_abi(int minor, size_t struct_size, gp_plugin **plug, gp_api *api,
                                       gp_solver **solver, char *err, size_t errlen)
{
    *solver = NULL;
    err[0] = '\0';
    if (gp_plugin_open("cpu-direct", plug, err, errlen) != GP_OK) return 0;
    *api = *gp_plugin_api(*plug);
    api->abi_minor = minor;
    api->struct_size = struct_size;
    gp_param eps = { "eps", "0.01" };
    gp_init_args args = { sizeof args, &eps, 1, NULL, NULL, -1, NULL };
    if (api->init(solver, &args) == GP_OK) return 1;
    snprintf(err, errlen, "%s", api->last_error(NULL));
    return 0;
}

/* The largest |a[k] - b[k]| over k < m. */
static TL_UNUSED double max_diff(const double *a, const double *b, size_t m)
{
    double d = 0;
    for (size_t k = 0; k < m; ++k) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* The uninterrupted run a to t_mid, a checkpoint at ckpt, on to t_end; the
 * restarted b from that checkpoint to t_end; the final states into pa/va
 * (a) and pb/vb (b). 1 when every call succeeded (else a diagnostic). */
static TL_UNUSED int evolve_and_restart(gp_sim *a, gp_sim *b, const char *ckpt, double t_mid,
                                        double t_end, double *pa, double *va, double *pb,
                                        double *vb)
{
    int good = a && b && gp_sim_evolve(a, t_mid) == GP_OK
               && gp_sim_checkpoint_save(a, ckpt, NULL, 0) == GP_OK
               && gp_sim_evolve(a, t_end) == GP_OK
               && gp_sim_checkpoint_load(b, ckpt, NULL, 0, NULL) == GP_OK
               && gp_sim_evolve(b, t_end) == GP_OK
               && gp_sim_get_particles(a, pa, va, NULL, NULL) == GP_OK
               && gp_sim_get_particles(b, pb, vb, NULL, NULL) == GP_OK;
    if (!good) diag("%s / %s", a ? gp_sim_last_error(a) : "", b ? gp_sim_last_error(b) : "");
    return good;
}

/* The relative position error of the e = 0.5 Kepler orbit after one period
 * under integrator integ on cpu-direct (eps 0), dt 0.5, with eta and, when
 * not NULL, the integrator's own eps; -1 with a diagnostic on failure. */
static TL_UNUSED double kepler_period_error(const char *integ, const char *eta, const char *eps)
{
    double pos[6], vel[6], mass[2], x0[3];
    kepler_state(0.5, pos, vel, mass);
    for (int k = 0; k < 3; ++k) x0[k] = pos[3 + k] - pos[k];
    gp_sim *sim = sim_on_direct("0");
    double err = -1;
    size_t nl = 0;
    uint64_t counts[64];
    if (sim && gp_sim_set_particles(sim, 2, pos, vel, mass, NULL) == GP_OK
        && gp_sim_set_integrator(sim, integ) == GP_OK
        && gp_sim_set_integrator_param(sim, "eta", eta) == GP_OK
        && (!eps || gp_sim_set_integrator_param(sim, "eps", eps) == GP_OK)
        && gp_sim_set_integrator_param(sim, "dt", "0.5") == GP_OK
        && gp_sim_evolve(sim, 2.0 * M_PI) == GP_OK
        && gp_sim_get_particles(sim, pos, vel, NULL, NULL) == GP_OK) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            double d = pos[3 + k] - pos[k] - x0[k];
            d2 += d * d;
        }
        err = sqrt(d2);
        if (gp_sim_level_counts(sim, counts, 64, &nl) != GP_OK) nl = 0;
    } else if (sim) {
        diag("kepler: %s", gp_sim_last_error(sim));
    }
    diag("%s eta = %-6s position error after one period %.3e (last step's deepest level %zu)", integ, eta, err,
         nl ? nl - 1 : 0);
    gp_sim_free(sim);
    return err;
}

/* Two tests: the Kepler error falls as eta^2 (order 2 +- 0.3) from eta 0.04
 * to 0.02 to 0.01, for a second-order scheme integ. */
static TL_UNUSED void check_kepler_order_2(const char *integ, const char *eps)
{
    static const char *const etas[] = { "0.04", "0.02", "0.01" };
    double e[3];
    for (int i = 0; i < 3; ++i) e[i] = kepler_period_error(integ, etas[i], eps);
    for (int i = 1; i < 3; ++i) {
        double order = log2(e[i - 1] / e[i]);
        ok(e[i] > 0 && fabs(order - 2.0) < 0.3, "%s: measured order %.3f between eta %s and %s (want 2 +- 0.3)",
           integ, order, etas[i - 1], etas[i]);
    }
}

#endif
