/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.c — the last check of a compute call: results that overflowed
 * double (inputs whose scale puts G m / r^2 beyond 1.8e308) are refused
 * with a sentence instead of being returned as inf or NaN with GP_OK.
 */
#include "base/plugin_base.h"

#include <math.h>
#include <stddef.h>

gp_status gp_check_outputs(gp_base *base, const char *fn, size_t m, const double *acc,
                           const double *pot)
{
    size_t bad_a = gp_first_nonfinite(acc, 3 * m);
    size_t bad_p = pot ? gp_first_nonfinite(pot, m) : (size_t)-1;
    if (bad_a == (size_t)-1 && bad_p == (size_t)-1) return GP_OK;
    size_t k = bad_a != (size_t)-1 ? bad_a / 3 : bad_p;
    return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                   "%s: the %s of result %zu overflows double (the masses are too large for "
                   "the distances between the particles: G m / r^2 or G m / r exceeds "
                   "1.8e308); choose units (G, masses, lengths) that keep the results "
                   "within double's range", fn,
                   bad_a != (size_t)-1 ? "acceleration" : "potential", k);
}

gp_status gp_check_outputs_ex(gp_base *base, const gp_outputs *out)
{
    static const char fn[] = "compute_forces_ex";
    if (!out)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL gp_outputs; pass one with struct_size = "
                       "sizeof(gp_outputs) and acc set", fn);
    if (out->struct_size < offsetof(gp_outputs, nb_step) + sizeof out->nb_step)
        return gp_fail(base, GP_ERR_ABI_MISMATCH,
                       "%s: gp_outputs.struct_size is %zu but ABI 1.2's gp_outputs needs %zu; "
                       "set struct_size = sizeof(gp_outputs) from a gravplug.h of 1.2 or "
                       "later", fn, out->struct_size,
                       offsetof(gp_outputs, nb_step) + sizeof out->nb_step);
    gp_status st = gp_need_particles(base, fn);
    if (st != GP_OK) return st;
    if (!out->acc)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL acc in gp_outputs; acc is required: pass room for "
                       "3*n_active = %zu doubles", fn, 3 * base->p.n_active);
    st = gp_check_compute(base, out->acc);
    if (st != GP_OK) return st;
    if (!isfinite(out->nb_step) || out->nb_step < 0)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: nb_step is %g; pass a finite step >= 0 (0: no lists by step)", fn,
                       out->nb_step);
    if (out->nb_radius) {
        size_t na = base->p.n_active;
        for (size_t k = 0; k < na; ++k) {
            double r = out->nb_radius[k];
            if (!isfinite(r) || r < 0)
                return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                               "%s: nb_radius[%zu] is %g; pass radii that are finite and "
                               ">= 0", fn, k, r);
        }
    }
    return GP_OK;
}
