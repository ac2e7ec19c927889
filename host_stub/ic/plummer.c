/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plummer.c — Plummer sphere with isotropic velocities, drawn from the
 * exact distribution function by the method of Aarseth, Henon & Wielen
 * (1974, A&A 37, 183).
 *
 *   rho(r) = 3 M / (4 pi a^3) (1 + r^2/a^2)^(-5/2),  E = -3 pi G M^2 / (64 a)
 *
 * Henon units by default: G = M = 1 and a = 3 pi / 16, so E = -1/4 and the
 * virial radius is 1. The mass is cut at the fraction mass_cut (0.999 by
 * default, as in the paper; that radius is 22.8 in Henon units) so that a
 * few particles do not land at enormous radii.
 */
#include "model.h"

#include <math.h>
#include <stdlib.h>

static const gp_ic_opt_info opts[] = {
    IC_OPT_ROW_MASS,
    {"scale", GP_IC_OPT_DOUBLE, "0.58904862254808621", "(0,inf)",
     "Plummer radius a; the default 3*pi/16 gives E = -1/4 for M = 1 (Henon units)"},
    {"mass_cut", GP_IC_OPT_DOUBLE, "0.999", "(0,1]",
     "sample radii only inside this fraction of the mass (1: no cut)"},
    IC_OPT_ROW_FRAME,
};

typedef struct plummer { double a, cut, vscale, mass_each; } plummer;

static void draw(void *state, gsl_rng *rng, size_t first, size_t count, double *pos, double *vel,
                 double *mass)
{
    (void)first;
    const plummer *p = state;
    const double a = p->a;
    for (size_t i = 0; i < count; ++i) {
        /* Radius from the inverse cumulative mass M(r)/M = (1 + a^2/r^2)^(-3/2). */
        double m = p->cut * gsl_rng_uniform_pos(rng);
        double r = a / sqrt(pow(m, -2.0 / 3.0) - 1.0);
        ic_isotropic(rng, r, &pos[3 * i]);
        /* q = v / v_esc has density proportional to q^2 (1 - q^2)^(7/2),
         * whose maximum is below 0.1: von Neumann rejection. */
        double q, y;
        do {
            q = gsl_rng_uniform(rng);
            y = 0.1 * gsl_rng_uniform(rng);
        } while (y > q * q * pow(1.0 - q * q, 3.5));
        double vesc = M_SQRT2 * p->vscale * pow(1.0 + r * r / (a * a), -0.25);
        ic_isotropic(rng, q * vesc, &vel[3 * i]);
        mass[i] = p->mass_each;
    }
}

static int prepare(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen)
{
    if (ic_require_n("plummer", n, err, errlen) != 0) return -1;
    plummer *p = malloc(sizeof *p);
    if (!p) return ic_fail(err, errlen, "Out of memory preparing model 'plummer'.");
    const double M = ic_num(v, "mass");
    p->a = ic_num(v, "scale");
    p->cut = ic_num(v, "mass_cut");
    p->vscale = sqrt(M / p->a); /* G = 1 */
    p->mass_each = M / (double)n;
    *s = (ic_stream){.state = p, .draw = draw, .release = free};
    return 0;
}

const ic_model ic_model_plummer = {
    "plummer",
    "Plummer sphere, isotropic velocities; Henon units (G = M = 1, E = -1/4) by default",
    opts, sizeof opts / sizeof opts[0], .prepare = prepare,
};
