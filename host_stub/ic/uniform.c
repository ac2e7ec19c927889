/*
 * uniform.c — a homogeneous sphere, cold by default (the classic cold
 * collapse test). Units: G = 1, M = 1, R = 1 by default; the free-fall time
 * is pi/2 * sqrt(R^3 / (2 G M)) = 1.1107 and W = -3 G M^2 / (5 R).
 * virial_ratio > 0 adds isotropic Gaussian velocities scaled so that
 * 2K/|W| equals it (measured K, analytic W).
 */
#include "ic_internal.h"

#include <gsl/gsl_randist.h>
#include <math.h>

static const gp_ic_opt_info opts[] = {
    {"mass", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "total mass"},
    {"radius", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "sphere radius R"},
    {"virial_ratio", GP_IC_OPT_DOUBLE, "0", "[0,10]",
     "2K/|W| of random isotropic velocities (0: cold)"},
    {"frame", GP_IC_OPT_ENUM, "com", "com|momentum|none",
     "com: centre-of-mass frame; momentum: zero momentum only, density centre kept at the origin"},
};

static int make(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out, char *err, size_t errlen)
{
    if (ic_require_n("uniform", n, err, errlen) != 0) return -1;
    if (ic_alloc(out, n, err, errlen) != 0) return -1;
    const double M = ic_num(v, "mass"), R = ic_num(v, "radius"), Q = ic_num(v, "virial_ratio");
    for (size_t i = 0; i < n; ++i) {
        ic_isotropic(rng, R * cbrt(gsl_rng_uniform(rng)), &out->pos[3 * i]);
        out->mass[i] = M / (double)n;
    }
    if (Q > 0) {
        for (size_t i = 0; i < 3 * n; ++i) out->vel[i] = gsl_ran_ugaussian(rng);
    }
    ic_apply_frame(out, v);
    if (Q > 0 && n > 1) {
        double K = 0;
        for (size_t i = 0; i < n; ++i) {
            const double *w = &out->vel[3 * i];
            K += 0.5 * out->mass[i] * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        }
        double W = -0.6 * M * M / R;
        double s = K > 0 ? sqrt(Q * fabs(W) / (2 * K)) : 0;
        for (size_t i = 0; i < 3 * n; ++i) out->vel[i] *= s;
    }
    return 0;
}

const ic_model ic_model_uniform = {
    "uniform",
    "homogeneous sphere, cold by default; G = M = R = 1 (free-fall time 1.1107)",
    opts, sizeof opts / sizeof opts[0], make,
};
