/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_kernel.c — the vectorised, fixed-order pairwise sum (see
 * direct_kernel.h). Compiled with -O3 -fno-math-errno -fno-trapping-math
 * (module.mk) so GCC turns the lane loop into SIMD; -std=c11 keeps FMA
 * contraction off, and no -ffast-math: the arithmetic is exactly what is
 * written here.
 */
#include "direct_kernel.h"

#include <math.h>

/* One source j into lane l's accumulators; with the jerk (a constant after
 * inlining, so each caller's loop has no branch) also its jerk terms. The
 * acceleration's operations are the same either way, so acc and pot have
 * the same bits with or without the jerk. */
#define LANE(j, l)                                                          \
    do {                                                                    \
        double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;              \
        double r2 = dx * dx + dy * dy + dz * dz + eps2;                     \
        /* skip the self term and zero distances, without branches */      \
        double keep = (double)((r2 > 0.0) & (id[j] != self));               \
        double rinv = keep / sqrt(r2 > 0.0 ? r2 : 1.0);                     \
        double mr = m[j] * rinv;                                            \
        double mr3 = mr * rinv * rinv;                                      \
        ax[l] += mr3 * dx;                                                  \
        ay[l] += mr3 * dy;                                                  \
        az[l] += mr3 * dz;                                                  \
        ph[l] -= mr;                                                        \
        if (with_jerk) {                                                    \
            double dvx = vx[j] - vxi, dvy = vy[j] - vyi, dvz = vz[j] - vzi; \
            double rv3 = 3.0 * (dx * dvx + dy * dvy + dz * dvz) * rinv * rinv; \
            jx[l] += mr3 * (dvx - rv3 * dx);                                \
            jy[l] += mr3 * (dvy - rv3 * dy);                                \
            jz[l] += mr3 * (dvz - rv3 * dz);                                \
        }                                                                   \
    } while (0)

/* The sum over all sources, lanes combined in a fixed pairwise order;
 * out[0..3] acc and pot, out[4..6] the jerk when with_jerk. */
static inline __attribute__((always_inline)) void point_sum(
    const gp_direct_sources *src, const gp_direct_vel *vel, double xi, double yi, double zi,
    double vxi, double vyi, double vzi, double self, double eps2, const int with_jerk,
    double *out)
{
    enum { L = GP_DIRECT_LANES };
    const double *restrict x = src->x, *restrict y = src->y, *restrict z = src->z;
    const double *restrict m = src->m, *restrict id = src->id;
    const double *restrict vx = with_jerk ? vel->vx : NULL;
    const double *restrict vy = with_jerk ? vel->vy : NULL;
    const double *restrict vz = with_jerk ? vel->vz : NULL;
    double ax[L] = {0}, ay[L] = {0}, az[L] = {0}, ph[L] = {0};
    double jx[L] = {0}, jy[L] = {0}, jz[L] = {0};
    size_t n = src->n, nfull = n - n % L;

    for (size_t jb = 0; jb < nfull; jb += L) {
#pragma omp simd
        for (int l = 0; l < L; ++l) LANE(jb + l, l);
    }
    for (size_t j = nfull; j < n; ++j) LANE(j, (int)(j - nfull));

    for (int w = L / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l) {
            ax[l] += ax[l + w];
            ay[l] += ay[l + w];
            az[l] += az[l + w];
            ph[l] += ph[l + w];
            jx[l] += jx[l + w];
            jy[l] += jy[l + w];
            jz[l] += jz[l + w];
        }
    out[0] = ax[0];
    out[1] = ay[0];
    out[2] = az[0];
    out[3] = ph[0];
    if (with_jerk) {
        out[4] = jx[0];
        out[5] = jy[0];
        out[6] = jz[0];
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(GP_NO_CLONES)
/* AVX2 and baseline versions, chosen at load time. Both do the same
 * operations in the same order (no FMA under -std=c11), so they agree. */
#define GP_DIRECT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GP_DIRECT_CLONES
#endif

GP_DIRECT_CLONES
void gp_direct_point(const gp_direct_sources *src, double xi, double yi, double zi,
                     double self, double eps2, double out[4])
{
    point_sum(src, NULL, xi, yi, zi, 0, 0, 0, self, eps2, 0, out);
}

GP_DIRECT_CLONES
void gp_direct_point_jerk(const gp_direct_sources *src, const gp_direct_vel *vel, double xi,
                          double yi, double zi, double vxi, double vyi, double vzi,
                          double self, double eps2, double out[7])
{
    point_sum(src, vel, xi, yi, zi, vxi, vyi, vzi, self, eps2, 1, out);
}
