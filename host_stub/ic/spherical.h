/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spherical.h — spherical equilibrium models with isotropic velocities
 * from the Eddington formula, for one or several components sharing one
 * potential (G = 1).
 *
 *   f(E) = 1/(sqrt(8) pi^2) [ int_0^E d2rho/dPsi2 dPsi / sqrt(E - Psi)
 *                             + (drho/dPsi)|_(Psi=0) / sqrt(E) ]
 *
 * with Psi the relative potential (positive, zero at infinity) and E the
 * relative energy Psi - v^2/2. Everything is tabulated on a logarithmic
 * radius grid: enclosed masses by the trapezoid rule in ln r, the
 * derivatives by centred differences, and the Abel integral exactly for a
 * d2rho/dPsi2 that is linear between grid points (so the 1/sqrt
 * singularity costs nothing). ln f is interpolated in ln E with GSL
 * (Steffen, monotone); radii are drawn by inverting the cumulative mass;
 * speeds by rejection from v^2 f(Psi(r) - v^2/2).
 *
 * A component may be truncated: beyond rtrunc its density continues as
 * rho(rtrunc) (r/rtrunc)^k exp(-(r - rtrunc)/rdecay), with k chosen so the
 * logarithmic slope is continuous (Kazantzidis, Magorrian & Moore 2004),
 * which keeps f(E) smooth and positive where a sharp edge would not.
 */
#ifndef GP_IC_SPHERICAL_H
#define GP_IC_SPHERICAL_H

#include <stddef.h>

#include <gsl/gsl_interp.h>
#include <gsl/gsl_rng.h>

#define IC_SPH_MAX_COMP 4

/* A density shape, up to normalisation. */
typedef double (*ic_density_fn)(double r, const void *par);

typedef struct ic_sph_comp {
    ic_density_fn rho;
    const void *par;
    double mass;    /* the component's total mass, taper included */
    double rtrunc;  /* > 0: exponential taper beyond this radius */
    double rdecay;  /* the taper's decay length (> 0 when rtrunc > 0) */
    int live;       /* 1: particles are drawn from it (f(E) is built);
                       0: it only contributes to the potential */
} ic_sph_comp;

typedef struct ic_sph {
    size_t ng, nc;
    double dlr;                     /* grid step in ln r */
    double *lr, *r, *psi, *mtot;    /* ln r, r, Psi(r), total M(<r) */
    ic_sph_comp comp[IC_SPH_MAX_COMP];
    double taper_k[IC_SPH_MAX_COMP];
    double norm[IC_SPH_MAX_COMP];   /* factor from the raw shape to density */
    double *rho[IC_SPH_MAX_COMP];   /* normalised density on the grid */
    double *mcum[IC_SPH_MAX_COMP];  /* enclosed mass of the component */
    double *lnE;                    /* ln E, ascending (E grid = Psi grid) */
    double *lnf[IC_SPH_MAX_COMP];   /* ln f(E) on that grid */
    double neg_f_frac[IC_SPH_MAX_COMP]; /* mass-weighted share of E where f < 0 (clamped) */
    gsl_interp *fint[IC_SPH_MAX_COMP];
    gsl_interp_accel *facc[IC_SPH_MAX_COMP];
} ic_sph;

/* Builds the model on ng log-spaced radii from rmin to rmax (rmax is raised
 * to cover every taper). Returns 0, or -1 with a sentence in err. */
int ic_sph_build(ic_sph *m, const ic_sph_comp *comps, size_t nc, double rmin, double rmax,
                 size_t ng, char *err, size_t errlen);
void ic_sph_free(ic_sph *m);

/* A one-component sphere as a stream (model.h), for the
 * single-profile models (hernquist, nfw): builds the model for comp (radii
 * rmin..rmax; comp->par is replaced by a copy of the double par, so the
 * caller's may go) and draws n equal-mass particles with isotropic
 * positions and Eddington velocities. Returns 0 or -1 with err. */
struct ic_stream;
int ic_sph_stream_one(const ic_sph_comp *comp, double par, double rmin, double rmax, size_t n,
                      struct ic_stream *s, char *err, size_t errlen);

/* count particles of component c, each of mass mass_each: a radius from
 * the mass profile, an isotropic position, an Eddington velocity, in that
 * order of draws for each particle. */
void ic_sph_draw_particles(ic_sph *m, size_t c, double mass_each, gsl_rng *rng, size_t count,
                           double *pos, double *vel, double *mass);

/* The normalised density of component c (taper included) at radius r. */
double ic_sph_density(const ic_sph *m, size_t c, double r);
/* Psi(r), interpolated (beyond the grid: M/r). */
double ic_sph_psi(const ic_sph *m, double r);
/* The total enclosed mass M(<r) of all components, interpolated. */
double ic_sph_menc(const ic_sph *m, double r);
/* The enclosed mass of component c alone, interpolated. */
double ic_sph_menc_comp(const ic_sph *m, size_t c, double r);
/* f(E) of a live component (0 outside the table). */
double ic_sph_f(ic_sph *m, size_t c, double E);
/* A radius drawn from component c's mass profile. */
double ic_sph_draw_radius(const ic_sph *m, size_t c, gsl_rng *rng);
/* A velocity (isotropic, speed from the DF) at radius r, into v[3]. */
void ic_sph_draw_velocity(ic_sph *m, size_t c, double r, gsl_rng *rng, double *v);

#endif /* GP_IC_SPHERICAL_H */
