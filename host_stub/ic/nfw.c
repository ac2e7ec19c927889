/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nfw.c — truncated NFW halo with isotropic velocities from the Eddington
 * formula (spherical.c).
 *
 *   rho(r) ~ 1 / ((r/rs) (1 + r/rs)^2)   for r <= rvir = c rs,
 *   rho(rvir) (r/rvir)^k exp(-(r - rvir)/rdecay) beyond
 *
 * (Kazantzidis, Magorrian & Moore 2004; k keeps the log slope continuous,
 * rdecay = decay * rvir). Units: G = 1, rs = 1, total mass (taper
 * included) 1 by default.
 */
#include "model.h"
#include "spherical.h"

#include <math.h>

static const gp_ic_opt_info opts[] = {
    {"mass", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "total mass, taper included"},
    {"scale", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "scale radius rs"},
    {"concentration", GP_IC_OPT_DOUBLE, "10", "[1,1000]", "c = rvir / rs: where the taper begins"},
    {"decay", GP_IC_OPT_DOUBLE, "0.1", "(0,10]", "taper decay length in units of rvir"},
    IC_OPT_ROW_FRAME,
};

double ic_nfw_shape(double r, const void *par);
double ic_nfw_shape(double r, const void *par)
{
    double x = r / *(const double *)par;
    return 1.0 / (x * (1 + x) * (1 + x));
}

static int prepare(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen)
{
    if (ic_require_n("nfw", n, err, errlen) != 0) return -1;
    double rs = ic_num(v, "scale");
    double rvir = rs * ic_num(v, "concentration");
    ic_sph_comp comp = {ic_nfw_shape, &rs, ic_num(v, "mass"), rvir, rvir * ic_num(v, "decay"), 1};
    return ic_sph_stream_one(&comp, rs, 1e-5 * rs, 10 * rvir, n, s, err, errlen);
}

const ic_model ic_model_nfw = {
    "nfw",
    "NFW halo truncated at c*rs with an exponential taper, Eddington isotropic velocities; "
    "G = rs = M = 1 by default",
    opts, sizeof opts / sizeof opts[0], .prepare = prepare,
};
