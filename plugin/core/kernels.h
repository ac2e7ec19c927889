/*
 * kernels.h — one source, one target: the softened interaction kernels.
 *
 * Each function returns the contribution of one source to one target, with
 * (dx, dy, dz) = source - target and eps2 = eps^2; the caller multiplies by G
 * and accumulates in the type its precision mode asks for:
 *
 *   single  float kernels, float sums
 *   mixed   float kernels, double sums (the caller converts each term)
 *   double  double kernels, double sums
 *
 *   gp_mono_{f,d}  point mass (a particle, or a cell's monopole):
 *                  a += m d / r^3,  phi -= m / r,  r^2 = |d|^2 + eps^2.
 *                  r^2 == 0 (a coincident pair with eps = 0) contributes 0;
 *                  the self term is excluded by the caller passing m = 0.
 *   gp_quad_{f,d}  a cell's monopole + quadrupole, from its mass and its
 *                  second moment s (xx yy zz xy xz yz, about the com; see
 *                  moments.h). The Taylor expansion of the softened
 *                  potential -sum m / sqrt(|c + s_j - x|^2 + eps^2) to second
 *                  order about the com c:
 *                     phi = -[ M/r + (3 dSd / r^5 - tr S / r^3) / 2 ]
 *                     a   =  M d/r^3 - 3 S d/r^5 + (7.5 dSd/r^7 - 1.5 tr S/r^5) d
 *                  (exact to second order for the softened potential too).
 *
 * Pure arithmetic, no branches but selects, so loops over them vectorise.
 */
#ifndef GP_CORE_KERNELS_H
#define GP_CORE_KERNELS_H

#include "core/gp_hd.h"

#define GP_DEFINE_KERNELS(T, SFX, SQRT)                                                       \
    static inline GP_HD void gp_mono_##SFX(T dx, T dy, T dz, T m, T eps2,                     \
                                           T *ax, T *ay, T *az, T *phi)                       \
    {                                                                                          \
        T r2 = dx * dx + dy * dy + dz * dz + eps2;                                             \
        T rinv = r2 > (T)0 ? (T)1 / SQRT(r2) : (T)0;                                           \
        T mr = m * rinv;                                                                       \
        T mr3 = mr * rinv * rinv;                                                              \
        *ax = mr3 * dx; *ay = mr3 * dy; *az = mr3 * dz; *phi = -mr;                            \
    }                                                                                          \
    static inline GP_HD void gp_quad_##SFX(T dx, T dy, T dz, T m, const T s[6], T eps2,       \
                                           T *ax, T *ay, T *az, T *phi)                       \
    {                                                                                          \
        T r2 = dx * dx + dy * dy + dz * dz + eps2;                                             \
        T rinv = r2 > (T)0 ? (T)1 / SQRT(r2) : (T)0;                                           \
        T rinv2 = rinv * rinv;                                                                 \
        T rinv3 = rinv * rinv2;                                                                \
        T rinv5 = rinv3 * rinv2;                                                               \
        T tr = s[0] + s[1] + s[2];                                                             \
        T sdx = s[0] * dx + s[3] * dy + s[4] * dz;                                             \
        T sdy = s[3] * dx + s[1] * dy + s[5] * dz;                                             \
        T sdz = s[4] * dx + s[5] * dy + s[2] * dz;                                             \
        T dsd = dx * sdx + dy * sdy + dz * sdz;                                                \
        T c = m * rinv3 + (T)7.5 * dsd * rinv5 * rinv2 - (T)1.5 * tr * rinv5;                 \
        T q = (T)3 * rinv5;                                                                    \
        *ax = c * dx - q * sdx; *ay = c * dy - q * sdy; *az = c * dz - q * sdz;               \
        *phi = -(m * rinv + (T)1.5 * dsd * rinv5 - (T)0.5 * tr * rinv3);                      \
    }

GP_DEFINE_KERNELS(float, f, sqrtf)
GP_DEFINE_KERNELS(double, d, sqrt)

#undef GP_DEFINE_KERNELS

#endif /* GP_CORE_KERNELS_H */
