/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kepler.c — two bodies on a Kepler orbit in the x-y plane, in their
 * centre-of-mass frame, starting at pericentre (on +x for the relative
 * vector, moving in +y) or apocentre. Units: G = 1; with the defaults
 * (m1 = m2 = 0.5, a = 1) the period is 2 pi and the energy
 * -G m1 m2 / (2a) = -0.125.
 */
#include "model.h"

#include <math.h>
#include <string.h>

static const gp_ic_opt_info opts[] = {
    {"m1", GP_IC_OPT_DOUBLE, "0.5", "[0,inf)", "mass of body 1"},
    {"m2", GP_IC_OPT_DOUBLE, "0.5", "[0,inf)", "mass of body 2"},
    {"a", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "semi-major axis"},
    {"e", GP_IC_OPT_DOUBLE, "0.5", "[0,1)", "eccentricity"},
    {"start", GP_IC_OPT_ENUM, "pericenter", "pericenter|apocenter", "where the orbit starts"},
};

static int make(size_t n, gsl_rng *rng, const ic_vals *v, gp_ic *out, char *err, size_t errlen)
{
    (void)rng;
    if (n != 0 && n != 2)
        return ic_fail(err, errlen, "Model 'kepler' has exactly 2 particles; asked for %zu (use 2 or 0).", n);
    double m1 = ic_num(v, "m1"), m2 = ic_num(v, "m2"), a = ic_num(v, "a"), e = ic_num(v, "e");
    double M = m1 + m2;
    if (!(M > 0))
        return ic_fail(err, errlen, "Model 'kepler' needs m1 + m2 > 0; both masses were 0.");
    if (ic_alloc(out, 2, err, errlen) != 0) return -1;
    int peri = strcmp(ic_str(v, "start"), "pericenter") == 0;
    double r = peri ? a * (1 - e) : a * (1 + e);
    double speed = peri ? sqrt(M * (1 + e) / (a * (1 - e))) : sqrt(M * (1 - e) / (a * (1 + e)));
    out->mass[0] = m1;
    out->mass[1] = m2;
    out->pos[0] = -m2 / M * r;
    out->pos[3] = m1 / M * r;
    out->vel[1] = -m2 / M * speed;
    out->vel[4] = m1 / M * speed;
    return 0;
}

const ic_model ic_model_kepler = {
    "kepler",
    "two bodies on a Kepler orbit (a, e, m1, m2) in the x-y plane; G = 1, period 2 pi by default",
    opts, sizeof opts / sizeof opts[0], make, NULL,
};
