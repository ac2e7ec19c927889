/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hernquist.c — Hernquist (1990) sphere with isotropic velocities from the
 * Eddington formula (spherical.c).
 *
 *   rho(r) = M a / (2 pi r (r + a)^3),  M(<r) = M r^2 / (r + a)^2
 *
 * Units: G = 1, M = 1, a = 1 by default (E = -M^2/(12 a) untruncated).
 * By default the density is tapered exponentially beyond rtrunc = 100 a
 * (decay length decay * rtrunc), the mass option being the mass including
 * the taper. rtrunc = 0 gives the untruncated model (radii out to 10^6 a,
 * all but 2e-6 of the mass), whose r^-4 tail puts a few particles so far
 * out that the centre of mass of N particles lies several a from the
 * cusp: use frame = momentum with it.
 */
#include "model.h"
#include "spherical.h"

#include <math.h>

static const gp_ic_opt_info opts[] = {
    IC_OPT_ROW_MASS,
    {"scale", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "scale radius a"},
    {"rtrunc", GP_IC_OPT_DOUBLE, "100", "[0,inf)",
     "taper the density beyond this radius (0: untruncated)"},
    {"decay", GP_IC_OPT_DOUBLE, "0.1", "(0,inf)", "taper decay length in units of rtrunc"},
    IC_OPT_ROW_FRAME,
};

static double hernquist_shape(double r, const void *par)
{
    double a = *(const double *)par;
    double x = r / a;
    return 1.0 / (x * (1 + x) * (1 + x) * (1 + x));
}

static int prepare(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen)
{
    if (ic_require_n("hernquist", n, err, errlen) != 0) return -1;
    double a = ic_num(v, "scale");
    double rt = ic_num(v, "rtrunc");
    if (rt > 0 && rt < a * 1e-3)
        return ic_fail(err, errlen, "Option 'rtrunc' of model 'hernquist' must be 0 (untruncated) or "
                                    "at least 1e-3 times the scale radius; got %g.", rt);
    ic_sph_comp comp = {hernquist_shape, &a, ic_num(v, "mass"), rt, rt * ic_num(v, "decay"), 1};
    return ic_sph_stream_one(&comp, a, 1e-5 * a, 1e6 * a, n, s, err, errlen);
}

const ic_model ic_model_hernquist = {
    "hernquist",
    "Hernquist sphere tapered beyond 100 a, Eddington isotropic velocities; G = M = a = 1 by default",
    opts, sizeof opts / sizeof opts[0], .prepare = prepare,
};
