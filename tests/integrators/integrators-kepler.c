/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-kepler.c — measured convergence order of each integrator on
 * an eccentric (e = 0.5) Kepler orbit, integrated over one period on
 * cpu-direct: leapfrog 2, rk2 2, rk4 4, block-rk2 and block-kdk 2 (halving
 * eta halves every block step), rk8pd within a small multiple of its tolerance.
 * The error is the distance of the relative position from its starting
 * point after one period (the exact orbit closes).
 */
#include "integrators-common.h"

static const double E = 0.5, PERIOD = 2.0 * M_PI;

/* Runs one period with integrator `name` and parameter key = value; returns
 * the position error (negative on failure) and the relative energy error. */
static double orbit_error(const char *name, const char *key, const char *value,
                          const char *key2, const char *value2, double *de)
{
    double pos[6], vel[6], mass[2], x0[3];
    kepler_state(E, pos, vel, mass);
    for (int k = 0; k < 3; ++k) x0[k] = pos[3 + k] - pos[k];
    gp_sim *sim = sim_on_direct("0");
    if (!sim) return -1;
    double err = -1, k0, w0, k1, w1;
    if (gp_sim_set_particles(sim, 2, pos, vel, mass, NULL) != GP_OK
        || gp_sim_set_integrator(sim, name) != GP_OK
        || gp_sim_set_integrator_param(sim, key, value) != GP_OK
        || (key2 && gp_sim_set_integrator_param(sim, key2, value2) != GP_OK)
        || gp_sim_energies(sim, &k0, &w0) != GP_OK
        || gp_sim_evolve(sim, PERIOD) != GP_OK
        || gp_sim_energies(sim, &k1, &w1) != GP_OK
        || gp_sim_get_particles(sim, pos, vel, NULL, NULL) != GP_OK) {
        diag("%s: %s", name, gp_sim_last_error(sim));
    } else {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) {
            double d = pos[3 + k] - pos[k] - x0[k];
            d2 += d * d;
        }
        err = sqrt(d2);
        *de = fabs((k1 + w1 - k0 - w0) / (k0 + w0));
    }
    gp_sim_free(sim);
    return err;
}

/* Order measured between successive halvings of the step; checks the last
 * two lie within tol of want. */
static void check_order(const char *name, const char *key, const char *const *values,
                        int count, double want, double tol, const char *key2, const char *value2)
{
    double errs[8], de;
    for (int i = 0; i < count; ++i) {
        errs[i] = orbit_error(name, key, values[i], key2, value2, &de);
        diag("%-9s %s = %-8s position error %.3e, |dE/E| %.3e", name, key, values[i], errs[i], de);
    }
    for (int i = 1; i < count; ++i) {
        double order = log2(errs[i - 1] / errs[i]);
        if (i >= count - 2)
            ok(errs[i] > 0 && fabs(order - want) < tol,
               "%s: measured order %.3f between %s = %s and %s (want %.0f +- %.2f)",
               name, order, key, values[i - 1], values[i], want, tol);
        else
            diag("%s: order %.3f", name, order);
    }
}

int main(void)
{
    plan(11);
    static const char *const dt2[] = { "0.04", "0.02", "0.01", "0.005" };
    static const char *const dt4[] = { "0.05", "0.025", "0.0125", "0.00625" };
    static const char *const etas[] = { "0.08", "0.04", "0.02", "0.01" };
    check_order("leapfrog", "dt", dt2, 4, 2.0, 0.15, NULL, NULL);
    check_order("rk2", "dt", dt2, 4, 2.0, 0.15, NULL, NULL);
    check_order("rk4", "dt", dt4, 4, 4.0, 0.3, NULL, NULL);
    /* eps for the criterion only (the force is unsoftened) */
    check_order("block-rk2", "eta", etas, 4, 2.0, 0.3, "eps", "0.1");
    check_order("block-kdk", "eta", etas, 4, 2.0, 0.3, "eps", "0.1");

    double de, err = orbit_error("rk8pd", "rtol", "1e-10", NULL, NULL, &de);
    diag("rk8pd rtol 1e-10: position error %.3e, |dE/E| %.3e", err, de);
    ok(err >= 0 && err < 1e-7 && de < 1e-8,
       "rk8pd reaches its tolerance: position error %.2e < 1e-7, energy error %.2e < 1e-8", err, de);
    return done_testing();
}
