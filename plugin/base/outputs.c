/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.c — the last check of a compute call: results that overflowed
 * double (inputs whose scale puts G m / r^2 beyond 1.8e308) are refused
 * with a sentence instead of being returned as inf or NaN with GP_OK.
 */
#include "base/plugin_base.h"

#include <math.h>

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
