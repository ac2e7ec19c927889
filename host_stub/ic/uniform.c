/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uniform.c — a homogeneous sphere, cold by default (the classic cold
 * collapse test). Units: G = 1, M = 1, R = 1 by default; the free-fall time
 * is pi/2 * sqrt(R^3 / (2 G M)) = 1.1107 and W = -3 G M^2 / (5 R).
 * virial_ratio > 0 adds isotropic Gaussian velocities scaled so that
 * 2K/|W| equals it (measured K, analytic W).
 */
#include "model.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>

static const gp_ic_opt_info opts[] = {
    IC_OPT_ROW_MASS,
    {"radius", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "sphere radius R"},
    {"virial_ratio", GP_IC_OPT_DOUBLE, "0", "[0,10]",
     "2K/|W| of random isotropic velocities (0: cold)"},
    IC_OPT_ROW_FRAME,
};

typedef struct uniform { double R, Q, W, mass_each; } uniform;

/* A block's positions first, then its velocities (so a cold sphere draws
 * no velocities at all). */
static void draw(void *state, gsl_rng *rng, size_t first, size_t count, double *pos, double *vel,
                 double *mass)
{
    (void)first;
    const uniform *u = state;
    for (size_t i = 0; i < count; ++i) {
        ic_isotropic(rng, u->R * cbrt(gsl_rng_uniform(rng)), &pos[3 * i]);
        mass[i] = u->mass_each;
    }
    if (u->Q > 0) {
        for (size_t i = 0; i < 3 * count; ++i) vel[i] = gsl_ran_ugaussian(rng);
    }
}

/* The kinetic energy (after the frame shift), then the velocity scaling
 * that makes 2K/|W| = Q with the set's K (measured) and W (analytic). */
static double kinetic(void *state, size_t count, const double *vel, const double *mass)
{
    (void)state;
    double K = 0;
    for (size_t i = 0; i < count; ++i) {
        const double *w = &vel[3 * i];
        K += 0.5 * mass[i] * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    }
    return K;
}

static void rescale(void *state, double K, size_t count, double *vel)
{
    const uniform *u = state;
    double s = K > 0 ? sqrt(u->Q * fabs(u->W) / (2 * K)) : 0;
    for (size_t i = 0; i < 3 * count; ++i) vel[i] *= s;
}

static int prepare(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen)
{
    if (ic_require_n("uniform", n, err, errlen) != 0) return -1;
    uniform *u = malloc(sizeof *u);
    if (!u) return ic_fail(err, errlen, "Out of memory preparing model 'uniform'.");
    const double M = ic_num(v, "mass");
    u->R = ic_num(v, "radius");
    u->Q = ic_num(v, "virial_ratio");
    u->W = -0.6 * M * M / u->R;
    u->mass_each = M / (double)n;
    *s = (ic_stream){.state = u, .draw = draw, .release = free};
    if (u->Q > 0 && n > 1) {
        s->block_sum = kinetic;
        s->apply_total = rescale;
    }
    return 0;
}

const ic_model ic_model_uniform = {
    "uniform",
    "homogeneous sphere, cold by default; G = M = R = 1 (free-fall time 1.1107)",
    opts, sizeof opts / sizeof opts[0], .prepare = prepare,
};
