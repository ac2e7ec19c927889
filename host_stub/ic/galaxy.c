/* SPDX-License-Identifier: Apache-2.0 */
/*
 * galaxy.c — a galaxy-like model: a Hernquist bulge inside a truncated NFW
 * halo, optionally with an exponential disk.
 *
 * Halo and bulge (both tapered beyond the halo's rvir): isotropic velocities from the Eddington formula of each
 * component in the combined potential (spherical.c). The disk enters that
 * potential spherically averaged (mass M_d [1 - (1 + r/Rd) e^(-r/Rd)]
 * inside r) — the usual approximation of simple galaxy generators.
 *
 * Disk: Sigma(R) ~ exp(-R/Rd) (cut at 10 Rd), rho ~ sech^2(z/z0).
 * Velocities in the epicyclic approximation (Hernquist 1993, ApJS 86,
 * 389): sigma_z^2 = pi G Sigma(R) z0 (isothermal sheet), sigma_R =
 * disk_sigma_ratio * sigma_z, sigma_phi^2 = sigma_R^2 kappa^2 / (4 Omega^2),
 * mean v_phi^2 = v_c^2 + sigma_R^2 (1 - kappa^2/(4 Omega^2) - 2R/Rd)
 * (clamped at 0), with v_c^2 = G M_halo+bulge(<R)/R plus the exact
 * thin-exponential-disk term (Freeman 1970). Rotation is counter-clockwise
 * about +z, the disk in the x-y plane.
 *
 * Units: G = 1, halo scale radius 1, halo mass 1. Particles have equal
 * masses within a component; component particle counts follow the masses
 * (rounded). IDs: halo first, then bulge, then disk.
 */
#include "model.h"
#include "spherical.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_bessel.h>
#include <math.h>
#include <stdlib.h>

static const gp_ic_opt_info opts[] = {
    {"halo_mass", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "NFW halo mass, taper included"},
    {"halo_scale", GP_IC_OPT_DOUBLE, "1", "(0,inf)", "NFW scale radius rs"},
    {"halo_concentration", GP_IC_OPT_DOUBLE, "10", "[1,1000]", "rvir / rs, where the taper begins"},
    {"halo_decay", GP_IC_OPT_DOUBLE, "0.1", "(0,10]", "taper decay length in units of rvir"},
    {"bulge_mass", GP_IC_OPT_DOUBLE, "0.05", "[0,inf)", "Hernquist bulge mass (0: no bulge)"},
    {"bulge_scale", GP_IC_OPT_DOUBLE, "0.1", "(0,inf)", "Hernquist scale radius a"},
    {"disk_mass", GP_IC_OPT_DOUBLE, "0.05", "[0,inf)", "exponential disk mass (0: no disk)"},
    {"disk_scale", GP_IC_OPT_DOUBLE, "0.2", "(0,inf)", "disk scale length Rd"},
    {"disk_height", GP_IC_OPT_DOUBLE, "0.02", "(0,inf)", "disk scale height z0 (sech^2 profile)"},
    {"disk_sigma_ratio", GP_IC_OPT_DOUBLE, "2", "[0,10]",
     "sigma_R / sigma_z in the disk (2: Toomre Q about 1.5 at 2 Rd with the defaults)"},
    IC_OPT_ROW_FRAME,
};

static double nfw_shape(double r, const void *par)
{
    double x = r / *(const double *)par;
    return 1.0 / (x * (1 + x) * (1 + x));
}

static double hernquist_shape(double r, const void *par)
{
    double x = r / *(const double *)par;
    return 1.0 / (x * (1 + x) * (1 + x) * (1 + x));
}

/* The spherical stand-in for the disk: dM/dr = M_d r e^(-r/Rd) / Rd^2. */
static double disk_sphere_shape(double r, const void *par)
{
    double rd = *(const double *)par;
    return exp(-r / rd) / r;
}

typedef struct disk_ctx {
    const ic_sph *sph;
    size_t c_halo, c_bulge;
    int has_bulge;
    double md, rd;
} disk_ctx;

static double vc2(const disk_ctx *d, double R)
{
    double m = ic_sph_menc_comp(d->sph, d->c_halo, R);
    if (d->has_bulge) m += ic_sph_menc_comp(d->sph, d->c_bulge, R);
    double y = R / (2 * d->rd);
    /* Freeman (1970): v^2 = 4 pi G Sigma0 Rd y^2 [I0 K0 - I1 K1](y); the
     * scaled Bessel functions keep the products finite at large y. */
    double bes = gsl_sf_bessel_I0_scaled(y) * gsl_sf_bessel_K0_scaled(y) -
                 gsl_sf_bessel_I1_scaled(y) * gsl_sf_bessel_K1_scaled(y);
    double disk = 2.0 * d->md / d->rd * y * y * bes;
    return m / R + disk;
}

static void disk_velocity(const disk_ctx *d, double R, double z0, double ratio, gsl_rng *rng,
                          double *vR, double *vphi, double *vz)
{
    double sigma0 = d->md / (2 * M_PI * d->rd * d->rd);
    double Sigma = sigma0 * exp(-R / d->rd);
    double sz = sqrt(M_PI * Sigma * z0);
    double sR = ratio * sz;
    double v2 = vc2(d, R);
    double h = 1e-3;
    double om2 = v2 / (R * R);
    double om2p = vc2(d, R * (1 + h)) / (R * R * (1 + h) * (1 + h));
    double om2m = vc2(d, R * (1 - h)) / (R * R * (1 - h) * (1 - h));
    double kappa2 = R * (om2p - om2m) / (2 * h * R) + 4 * om2;
    double k4 = kappa2 > 0 ? kappa2 / (4 * om2) : 0;
    double mean2 = v2 + sR * sR * (1 - k4 - 2 * R / d->rd);
    double sphi = sR * sqrt(k4);
    *vR = sR * gsl_ran_ugaussian(rng);
    *vz = sz * gsl_ran_ugaussian(rng);
    *vphi = (mean2 > 0 ? sqrt(mean2) : 0) + sphi * gsl_ran_ugaussian(rng);
}

/* The per-set data: the combined model, the component counts (particles
 * [0, nh) are the halo, [nh, nh + nb) the bulge, the rest the disk), the
 * shapes' parameters (the model points at them) and the disk's. */
typedef struct galaxy {
    ic_sph sph;
    disk_ctx disk;
    size_t nh, nb;
    double rs, a, rd, z0, ratio;
    double m_halo, m_bulge, m_disk; /* particle masses */
} galaxy;

static void draw_disk(galaxy *g, gsl_rng *rng, double *pos, double *vel)
{
    const double rd = g->rd;
    double R;
    do R = rd * gsl_ran_gamma(rng, 2.0, 1.0); /* Sigma ~ exp(-R/Rd): R/Rd ~ Gamma(2) */
    while (R > 10 * rd);
    double phi = 2 * M_PI * gsl_rng_uniform(rng);
    double z = g->z0 * atanh(2 * gsl_rng_uniform_pos(rng) - 1); /* sech^2 */
    double vR, vphi, vz;
    disk_velocity(&g->disk, R, g->z0, g->ratio, rng, &vR, &vphi, &vz);
    double c = cos(phi), s = sin(phi);
    pos[0] = R * c;
    pos[1] = R * s;
    pos[2] = z;
    vel[0] = vR * c - vphi * s;
    vel[1] = vR * s + vphi * c;
    vel[2] = vz;
}

static void draw(void *state, gsl_rng *rng, size_t first, size_t count, double *pos, double *vel,
                 double *mass)
{
    galaxy *g = state;
    size_t end = first + count, i = 0;
    /* the halo, the bulge and the disk parts of [first, end), in order */
    size_t h_end = g->nh < end ? g->nh : end;
    size_t b_end = g->nh + g->nb < end ? g->nh + g->nb : end;
    if (first < h_end) {
        ic_sph_draw_particles(&g->sph, g->disk.c_halo, g->m_halo, rng, h_end - first, pos, vel, mass);
        i = h_end - first;
    }
    if (first + i < b_end) {
        size_t k = b_end - (first + i);
        ic_sph_draw_particles(&g->sph, g->disk.c_bulge, g->m_bulge, rng, k, &pos[3 * i], &vel[3 * i],
                              &mass[i]);
        i += k;
    }
    for (; i < count; ++i) {
        draw_disk(g, rng, &pos[3 * i], &vel[3 * i]);
        mass[i] = g->m_disk;
    }
}

static void release(void *state)
{
    galaxy *g = state;
    ic_sph_free(&g->sph);
    free(g);
}

static int prepare(size_t n, const ic_vals *v, ic_stream *s, char *err, size_t errlen)
{
    if (ic_require_n("galaxy", n, err, errlen) != 0) return -1;
    double rs = ic_num(v, "halo_scale"), mh = ic_num(v, "halo_mass");
    double rvir = rs * ic_num(v, "halo_concentration");
    double a = ic_num(v, "bulge_scale"), mb = ic_num(v, "bulge_mass");
    double rd = ic_num(v, "disk_scale"), md = ic_num(v, "disk_mass");
    double mt = mh + mb + md;
    size_t nb = (size_t)llround((double)n * mb / mt), nd = (size_t)llround((double)n * md / mt);
    if (nb + nd >= n || (mb > 0 && nb == 0) || (md > 0 && nd == 0))
        return ic_fail(err, errlen, "Model 'galaxy' with %zu particles cannot give each component "
                                    "(halo %g, bulge %g, disk %g of the mass) at least one particle; "
                                    "use more particles.", n, mh / mt, mb / mt, md / mt);
    size_t nh = n - nb - nd;
    galaxy *g = calloc(1, sizeof *g);
    if (!g) return ic_fail(err, errlen, "Out of memory preparing model 'galaxy'.");
    g->rs = rs;
    g->a = a;
    g->rd = rd;
    g->z0 = ic_num(v, "disk_height");
    g->ratio = ic_num(v, "disk_sigma_ratio");
    g->nh = nh;
    g->nb = nb;
    g->m_halo = mh / (double)nh;
    g->m_bulge = nb ? mb / (double)nb : 0;
    g->m_disk = nd ? md / (double)nd : 0;

    ic_sph_comp comps[3];
    size_t nc = 0, c_halo = 0, c_bulge = 0;
    comps[nc++] = (ic_sph_comp){nfw_shape, &g->rs, mh, rvir, rvir * ic_num(v, "halo_decay"), 1};
    if (mb > 0) {
        c_bulge = nc;
        /* The bulge shares the halo's taper, so its r^-4 tail stays bounded. */
        comps[nc++] = (ic_sph_comp){hernquist_shape, &g->a, mb, rvir, rvir * ic_num(v, "halo_decay"), 1};
    }
    if (md > 0) comps[nc++] = (ic_sph_comp){disk_sphere_shape, &g->rd, md, 0, 0, 0};
    double rmin = 1e-5 * fmin(rs, fmin(mb > 0 ? a : rs, md > 0 ? rd : rs));
    double rmax = fmax(10 * rvir, fmax(mb > 0 ? 1e4 * a : 0, md > 0 ? 60 * rd : 0));
    if (ic_sph_build(&g->sph, comps, nc, rmin, rmax, 8000, err, errlen) != 0) {
        free(g);
        return -1;
    }
    g->disk = (disk_ctx){&g->sph, c_halo, c_bulge, mb > 0, md, rd};
    *s = (ic_stream){.state = g, .draw = draw, .release = release};
    return 0;
}

const ic_model ic_model_galaxy = {
    "galaxy",
    "Hernquist bulge + NFW halo (Eddington velocities) + exponential disk; G = 1, halo rs = 1, "
    "halo mass 1",
    opts, sizeof opts / sizeof opts[0], .prepare = prepare,
};
