/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spherical.c — multi-component spherical models with Eddington f(E).
 * See spherical.h for the method.
 */
#include "spherical.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Raw (unnormalised) density of component c, taper included. */
static double raw_density(const ic_sph *m, size_t c, double r)
{
    const ic_sph_comp *k = &m->comp[c];
    if (k->rtrunc > 0 && r > k->rtrunc)
        return k->rho(k->rtrunc, k->par) * pow(r / k->rtrunc, m->taper_k[c]) *
               exp(-(r - k->rtrunc) / k->rdecay);
    return k->rho(r, k->par);
}

double ic_sph_density(const ic_sph *m, size_t c, double r)
{
    return m->norm[c] * raw_density(m, c, r);
}

/* Linear interpolation on the uniform ln r grid; below the grid the first
 * value, beyond it `beyond`. */
static double grid_interp(const ic_sph *m, const double *y, double r, double beyond)
{
    double x = (log(r) - m->lr[0]) / m->dlr;
    if (!(x > 0)) return y[0];
    if (x >= (double)(m->ng - 1)) return beyond;
    size_t i = (size_t)x;
    double t = x - (double)i;
    return (1 - t) * y[i] + t * y[i + 1];
}

double ic_sph_psi(const ic_sph *m, double r)
{
    double mt = m->mtot[m->ng - 1];
    if (r >= m->r[m->ng - 1]) return mt / r;
    return grid_interp(m, m->psi, r, mt / r);
}

double ic_sph_menc(const ic_sph *m, double r)
{
    double mt = m->mtot[m->ng - 1];
    if (r <= m->r[0]) return m->mtot[0] * pow(r / m->r[0], 3.0);
    return grid_interp(m, m->mtot, r, mt);
}

double ic_sph_menc_comp(const ic_sph *m, size_t c, double r)
{
    const double *mc = m->mcum[c];
    if (r <= m->r[0]) return mc[0] * pow(r / m->r[0], 3.0);
    return grid_interp(m, mc, r, mc[m->ng - 1]);
}

double ic_sph_f(ic_sph *m, size_t c, double E)
{
    if (!(E > 0) || !m->fint[c]) return 0;
    double le = log(E);
    size_t ng = m->ng;
    if (le < m->lnE[0]) return 0;
    if (le > m->lnE[ng - 1]) le = m->lnE[ng - 1];
    return exp(gsl_interp_eval(m->fint[c], m->lnE, m->lnf[c], le, m->facc[c]));
}

void ic_sph_free(ic_sph *m)
{
    free(m->lr);
    free(m->r);
    free(m->psi);
    free(m->mtot);
    free(m->lnE);
    for (size_t c = 0; c < IC_SPH_MAX_COMP; ++c) {
        free(m->rho[c]);
        free(m->mcum[c]);
        free(m->lnf[c]);
        if (m->fint[c]) gsl_interp_free(m->fint[c]);
        if (m->facc[c]) gsl_interp_accel_free(m->facc[c]);
    }
    memset(m, 0, sizeof *m);
}

/* The Abel integral int_{Psi_lo}^{E} g dPsi / sqrt(E - Psi) for g linear
 * between (pa, ga) and (pb, gb), pa < pb <= E, done exactly. */
static double abel_segment(double E, double pa, double ga, double pb, double gb)
{
    double s = (gb - ga) / (pb - pa);
    double wa = E - pa, wb = fmax(0.0, E - pb);
    double sa = sqrt(wa), sb = sqrt(wb);
    return (ga + s * wa) * 2.0 * (sa - sb) - s * (2.0 / 3.0) * (wa * sa - wb * sb);
}

static int build_df(ic_sph *m, size_t c, char *err, size_t errlen)
{
    size_t ng = m->ng;
    double *h = malloc(ng * sizeof *h), *g = malloc(ng * sizeof *g);
    m->lnf[c] = malloc(ng * sizeof(double));
    if (!h || !g || !m->lnf[c]) {
        free(h);
        free(g);
        return ic_fail(err, errlen, "Out of memory building the distribution function.");
    }
    const double *rho = m->rho[c], *psi = m->psi;
    /* drho/dPsi and d2rho/dPsi2 by centred differences (Psi falls with i). */
    for (size_t i = 0; i < ng; ++i) {
        size_t lo = i ? i - 1 : 0, hi = i + 1 < ng ? i + 1 : ng - 1;
        h[i] = (rho[hi] - rho[lo]) / (psi[hi] - psi[lo]);
    }
    for (size_t i = 0; i < ng; ++i) {
        size_t lo = i ? i - 1 : 0, hi = i + 1 < ng ? i + 1 : ng - 1;
        g[i] = (h[hi] - h[lo]) / (psi[hi] - psi[lo]);
    }
    const double pref = 1.0 / (sqrt(8.0) * M_PI * M_PI);
    double neg_mass = 0, all_mass = 0;
    double fmin_pos = INFINITY;
    double *f = malloc(ng * sizeof *f);
    if (!f) {
        free(h);
        free(g);
        return ic_fail(err, errlen, "Out of memory building the distribution function.");
    }
    for (size_t j = 0; j < ng; ++j) {
        double E = psi[j], sum = 0;
        /* Segments [psi[i+1], psi[i]] for i >= j all lie below E. */
        for (size_t i = ng - 1; i > j; --i)
            sum += abel_segment(E, psi[i], g[i], psi[i - 1], g[i - 1]);
        sum += h[ng - 1] / sqrt(E);
        f[j] = pref * sum;
        double dm = m->mcum[c][j] - (j ? m->mcum[c][j - 1] : 0);
        all_mass += dm;
        if (!(f[j] > 0)) neg_mass += dm;
        else if (f[j] < fmin_pos) fmin_pos = f[j];
    }
    m->neg_f_frac[c] = all_mass > 0 ? neg_mass / all_mass : 0;
    if (!isfinite(fmin_pos)) {
        free(h);
        free(g);
        free(f);
        return ic_fail(err, errlen,
                       "The Eddington distribution function is nowhere positive for this model; "
                       "check its options (masses and radii).");
    }
    /* Ascending E: reverse. Non-positive f (numerical noise in the far
     * taper, or a truly unphysical model) is clamped far below the rest. */
    double floor_f = fmin_pos * 1e-30;
    for (size_t j = 0; j < ng; ++j) {
        size_t src = ng - 1 - j;
        m->lnf[c][j] = log(f[src] > 0 ? f[src] : floor_f);
    }
    free(h);
    free(g);
    free(f);
    m->fint[c] = gsl_interp_alloc(gsl_interp_steffen, ng);
    m->facc[c] = gsl_interp_accel_alloc();
    if (!m->fint[c] || !m->facc[c])
        return ic_fail(err, errlen, "Out of memory building the distribution function.");
    gsl_interp_init(m->fint[c], m->lnE, m->lnf[c], ng);
    return 0;
}

int ic_sph_build(ic_sph *m, const ic_sph_comp *comps, size_t nc, double rmin, double rmax,
                 size_t ng, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (nc == 0 || nc > IC_SPH_MAX_COMP || ng < 16 || !(rmin > 0) || !(rmax > rmin))
        return ic_fail(err, errlen, "Bad spherical model setup (a bug in gravplug).");
    m->ng = ng;
    m->nc = nc;
    for (size_t c = 0; c < nc; ++c) {
        m->comp[c] = comps[c];
        const ic_sph_comp *k = &comps[c];
        if (k->rtrunc > 0) {
            /* Continuous log slope at rtrunc: k = slope + rtrunc / rdecay. */
            double hstep = 1e-4;
            double s = (log(k->rho(k->rtrunc * (1 + hstep), k->par)) -
                        log(k->rho(k->rtrunc * (1 - hstep), k->par))) /
                       (log1p(hstep) - log1p(-hstep));
            m->taper_k[c] = s + k->rtrunc / k->rdecay;
            double rend = k->rtrunc + 45.0 * k->rdecay;
            if (rend > rmax) rmax = rend;
        }
    }
    m->lr = malloc(ng * sizeof(double));
    m->r = malloc(ng * sizeof(double));
    m->psi = malloc(ng * sizeof(double));
    m->mtot = calloc(ng, sizeof(double));
    m->lnE = malloc(ng * sizeof(double));
    if (!m->lr || !m->r || !m->psi || !m->mtot || !m->lnE) goto oom;
    m->dlr = (log(rmax) - log(rmin)) / (double)(ng - 1);
    for (size_t i = 0; i < ng; ++i) {
        m->lr[i] = log(rmin) + m->dlr * (double)i;
        m->r[i] = exp(m->lr[i]);
    }
    double *outer = calloc(ng, sizeof(double)); /* int_r^rmax 4 pi r rho dr */
    if (!outer) goto oom;
    for (size_t c = 0; c < nc; ++c) {
        m->norm[c] = 1.0;
        m->rho[c] = malloc(ng * sizeof(double));
        m->mcum[c] = malloc(ng * sizeof(double));
        if (!m->rho[c] || !m->mcum[c]) {
            free(outer);
            goto oom;
        }
        for (size_t i = 0; i < ng; ++i) m->rho[c][i] = raw_density(m, c, m->r[i]);
        /* Mass inside rmin as a uniform core (negligible by design), then
         * the trapezoid rule in ln r: dM = 4 pi r^3 rho dln r. */
        m->mcum[c][0] = 4.0 * M_PI / 3.0 * pow(m->r[0], 3) * m->rho[c][0];
        for (size_t i = 1; i < ng; ++i)
            m->mcum[c][i] = m->mcum[c][i - 1] +
                            0.5 * m->dlr * 4.0 * M_PI *
                                (pow(m->r[i - 1], 3) * m->rho[c][i - 1] + pow(m->r[i], 3) * m->rho[c][i]);
        double total = m->mcum[c][ng - 1];
        if (!(total > 0) || !isfinite(total)) {
            free(outer);
            ic_sph_free(m);
            return ic_fail(err, errlen, "A model component has no finite mass; check its radii.");
        }
        m->norm[c] = comps[c].mass / total;
        for (size_t i = 0; i < ng; ++i) {
            m->rho[c][i] *= m->norm[c];
            m->mcum[c][i] *= m->norm[c];
            m->mtot[i] += m->mcum[c][i];
        }
    }
    /* Psi(r) = M(<r)/r + int_r^inf 4 pi r' rho dr' (G = 1). */
    for (size_t i = ng - 1; i-- > 0;) {
        double a = 0, b = 0;
        for (size_t c = 0; c < nc; ++c) {
            a += m->rho[c][i];
            b += m->rho[c][i + 1];
        }
        outer[i] = outer[i + 1] +
                   0.5 * m->dlr * 4.0 * M_PI * (m->r[i] * m->r[i] * a + m->r[i + 1] * m->r[i + 1] * b);
    }
    for (size_t i = 0; i < ng; ++i) {
        m->psi[i] = m->mtot[i] / m->r[i] + outer[i];
        m->lnE[ng - 1 - i] = log(m->psi[i]);
    }
    free(outer);
    for (size_t i = 1; i < ng; ++i)
        if (!(m->lnE[i] > m->lnE[i - 1])) {
            ic_sph_free(m);
            return ic_fail(err, errlen,
                           "The potential is not monotonic on the model grid; check the model's radii.");
        }
    for (size_t c = 0; c < nc; ++c)
        if (comps[c].live && build_df(m, c, err, errlen) != 0) {
            ic_sph_free(m);
            return -1;
        }
    return 0;
oom:
    ic_sph_free(m);
    return ic_fail(err, errlen, "Out of memory building a spherical model.");
}

double ic_sph_draw_radius(const ic_sph *m, size_t c, gsl_rng *rng)
{
    const double *mc = m->mcum[c];
    size_t ng = m->ng;
    double target = gsl_rng_uniform_pos(rng) * mc[ng - 1];
    if (target <= mc[0]) return m->r[0] * cbrt(target / mc[0]);
    size_t lo = 0, hi = ng - 1; /* mc[lo] < target <= mc[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (mc[mid] < target) lo = mid;
        else hi = mid;
    }
    double t = (target - mc[lo]) / (mc[hi] - mc[lo]);
    return exp(m->lr[lo] + t * m->dlr);
}

void ic_sph_draw_velocity(ic_sph *m, size_t c, double r, gsl_rng *rng, double *v)
{
    double psi = ic_sph_psi(m, r);
    double vesc = sqrt(2.0 * psi);
    /* Bound of v^2 f(Psi - v^2/2) on [0, vesc] from a scan, with margin. */
    enum { SCAN = 48 };
    double pmax = 0;
    for (int i = 0; i < SCAN; ++i) {
        double u = (i + 0.5) / SCAN;
        double p = u * u * ic_sph_f(m, c, psi * (1.0 - u * u));
        if (p > pmax) pmax = p;
    }
    double speed = 0;
    if (pmax > 0) {
        pmax *= 1.3;
        for (int tries = 0; tries < 100000; ++tries) {
            double u = gsl_rng_uniform(rng);
            double p = u * u * ic_sph_f(m, c, psi * (1.0 - u * u));
            if (gsl_rng_uniform(rng) * pmax <= p) {
                speed = u * vesc;
                break;
            }
        }
    }
    ic_isotropic(rng, speed, v);
}

void ic_sph_draw_particles(ic_sph *m, size_t c, double mass_each, gsl_rng *rng, size_t count,
                           double *pos, double *vel, double *mass)
{
    for (size_t i = 0; i < count; ++i) {
        double r = ic_sph_draw_radius(m, c, rng);
        ic_isotropic(rng, r, &pos[3 * i]);
        ic_sph_draw_velocity(m, c, r, rng, &vel[3 * i]);
        mass[i] = mass_each;
    }
}

/* A one-component sphere: the model, its shape's parameter (kept here, as
 * the model points at it) and the particle mass. */
typedef struct sph_one {
    ic_sph model;
    double par, mass_each;
} sph_one;

static void one_draw(void *state, gsl_rng *rng, size_t first, size_t count, double *pos, double *vel,
                     double *mass)
{
    (void)first;
    sph_one *o = state;
    ic_sph_draw_particles(&o->model, 0, o->mass_each, rng, count, pos, vel, mass);
}

static void one_release(void *state)
{
    sph_one *o = state;
    ic_sph_free(&o->model);
    free(o);
}

int ic_sph_stream_one(const ic_sph_comp *comp, double par, double rmin, double rmax, size_t n,
                      ic_stream *s, char *err, size_t errlen)
{
    sph_one *o = calloc(1, sizeof *o);
    if (!o) return ic_fail(err, errlen, "Out of memory building a spherical model.");
    o->par = par;
    o->mass_each = comp->mass / (double)n;
    ic_sph_comp k = *comp;
    k.par = &o->par;
    if (ic_sph_build(&o->model, &k, 1, rmin, rmax, 6000, err, errlen) != 0) {
        free(o);
        return -1;
    }
    *s = (ic_stream){.state = o, .draw = one_draw, .release = one_release};
    return 0;
}
