/* SPDX-License-Identifier: Apache-2.0 */
/*
 * outputs.c — the last check of a compute call: results that overflowed
 * double (inputs whose scale puts G m / r^2 beyond 1.8e308) are refused
 * with a sentence instead of being returned as inf or NaN with GP_OK.
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

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

/* The 1.3 members exist in out when its struct_size covers them. */
#define GP_OUT_HAS(out, member) \
    ((out)->struct_size >= offsetof(gp_outputs, member) + sizeof (out)->member)

gp_outputs gp_outputs_read(const gp_outputs *out)
{
    gp_outputs o;
    memset(&o, 0, sizeof o);
    size_t size = out->struct_size < sizeof o ? out->struct_size : sizeof o;
    memcpy(&o, out, size);
    if (!GP_OUT_HAS(out, pair_step_even)) o.pair_step_even = NULL;
    if (!GP_OUT_HAS(out, nb_step_even)) o.nb_step_even = 0.0;
    o.struct_size = sizeof o;
    return o;
}

/* What compute_forces_ex and compute_field_ex check of out alike, for
 * rows results (n_active, or the points). */
static gp_status check_outputs(gp_base *base, const char *fn, const gp_outputs *out,
                               size_t rows, const char *rows_name)
{
    if (!out)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL gp_outputs; pass one with struct_size = "
                       "sizeof(gp_outputs) and acc set", fn);
    if (!GP_OUT_HAS(out, nb_step))
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
                       "3*%s = %zu doubles", fn, rows_name, 3 * rows);
    if (!isfinite(out->nb_step) || out->nb_step < 0)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: nb_step is %g; pass a finite step >= 0 (0: no lists by step)", fn,
                       out->nb_step);
    if (GP_OUT_HAS(out, nb_step_even) && (!isfinite(out->nb_step_even) || out->nb_step_even < 0))
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: nb_step_even is %g; pass a finite step >= 0 (0: no lists by the "
                       "even step)", fn, out->nb_step_even);
    if (out->nb_radius) {
        for (size_t k = 0; k < rows; ++k) {
            double r = out->nb_radius[k];
            if (!isfinite(r) || r < 0)
                return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                               "%s: nb_radius[%zu] is %g; pass radii that are finite and "
                               ">= 0", fn, k, r);
        }
    }
    return GP_OK;
}

gp_status gp_check_outputs_ex(gp_base *base, const gp_outputs *out)
{
    static const char fn[] = "compute_forces_ex";
    gp_status st = check_outputs(base, fn, out, base->p.have ? base->p.n_active : 0, "n_active");
    if (st != GP_OK) return st;
    return gp_check_compute(base, out->acc);
}

gp_status gp_check_field_ex(gp_base *base, size_t n, const double *pos, const double *vel,
                            const uint32_t *exclude, const gp_outputs *out)
{
    static const char fn[] = "compute_field_ex";
    gp_status st = gp_need_particles(base, fn);
    if (st != GP_OK) return st;
    /* n = 0 is an empty call (pos, vel, exclude may be NULL): an MPI rank
     * with no points takes part in a collective call with it */
    if (n && !pos)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL pos for %zu points; pass their positions pos[3n]",
                       fn, n);
    if (n > UINT32_MAX)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: n = %zu points is more than 2^32 - 1; pass fewer per call", fn, n);
    if ((st = check_outputs(base, fn, out, n, "n")) != GP_OK) return st;
    size_t bad = gp_first_nonfinite(pos, 3 * n);
    if (bad != (size_t)-1)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: coordinate %zu of point %zu is not finite (%g); pass finite "
                       "positions", fn, bad % 3, bad / 3, pos[bad]);
    gp_outputs o = gp_outputs_read(out);
    const char *needs = o.jerk ? "jerk" : o.pair_step ? "pair_step"
                      : o.pair_step_even ? "pair_step_even" : o.nb_step > 0 ? "nb_step"
                      : o.nb_step_even > 0 ? "nb_step_even" : NULL;
    if (needs && !vel && n)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s was given a NULL vel but %s needs the points' velocities; pass "
                       "vel[3n] or leave %s out", fn, needs, needs);
    if (vel && (bad = gp_first_nonfinite(vel, 3 * n)) != (size_t)-1)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: velocity component %zu of point %zu is not finite (%g); pass "
                       "finite velocities", fn, bad % 3, bad / 3, vel[bad]);
    if (exclude && n)
        for (size_t k = 0; k < n; ++k)
            if (exclude[k] != UINT32_MAX && exclude[k] >= base->p.n)
                return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                               "%s: exclude[%zu] is %u but there are %zu particles; pass a "
                               "set_particles index or UINT32_MAX (none)", fn, k, exclude[k],
                               base->p.n);
    return GP_OK;
}

int gp_field_ex_in_kernel(const gp_base *base, const gp_outputs *out)
{
    return !base->p.group && !out->pair_step && !out->pair_step_even && !(out->nb_step > 0) &&
           !(out->nb_step_even > 0);
}
