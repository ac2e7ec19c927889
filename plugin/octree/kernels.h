/* SPDX-License-Identifier: Apache-2.0 */
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
 *   gp_quad_{f,d}  (and gp_quad6_{f,d}, the same with s as six scalars)
 *                  a cell's monopole + quadrupole, from its mass and its
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

#include "octree/gp_hd.h"

/* 1/sqrt(r2), and 0 for r2 == 0. Branch-free (computed on a safe value,
 * then selected), so loops over the kernels vectorise.
 *   double: 1 / sqrt, correctly rounded.
 *   float:  the bit-level initial guess plus three Newton steps (relative
 *           error ~2e-7, i.e. float rounding), plain multiplies and adds:
 *           several times faster than sqrt + divide in SIMD, and the same
 *           bits on every IEEE machine (no hardware rsqrt approximation).
 *           Requires r2 finite; r2 below FLT_MIN counts as FLT_MIN. */
static inline GP_HD double gp_rinv_d(double r2)
{
    double rsafe = r2 > 0.0 ? r2 : 1.0;
    double rinv = 1.0 / sqrt(rsafe);
    return r2 > 0.0 ? rinv : 0.0;
}

static inline GP_HD float gp_rinv_f(float r2)
{
    const float tiny = 1.17549435e-38f;            /* FLT_MIN */
    float x = r2 > tiny ? r2 : tiny;
    union { float f; uint32_t u; } b;
    b.f = x;
    b.u = 0x5f375a86u - (b.u >> 1);
    float y = b.f;
    float hx = 0.5f * x;
    y = y * (1.5f - hx * y * y);                   /* 3.4e-2 -> 1.8e-3 */
    y = y * (1.5f - hx * y * y);                   /*        -> 4.7e-6 */
    y = y * (1.5f - hx * y * y);                   /*        -> float rounding */
    return r2 > 0.0f ? y : 0.0f;
}

#define GP_DEFINE_KERNELS(T, SFX, SQRT)                                                       \
    static inline GP_HD void gp_mono_##SFX(T dx, T dy, T dz, T m, T eps2,                     \
                                           T *ax, T *ay, T *az, T *phi)                       \
    {                                                                                          \
        T rinv = gp_rinv_##SFX(dx * dx + dy * dy + dz * dz + eps2);                            \
        T mr = m * rinv;                                                                       \
        T mr3 = mr * rinv * rinv;                                                              \
        *ax = mr3 * dx; *ay = mr3 * dy; *az = mr3 * dz; *phi = -mr;                            \
    }                                                                                          \
    /* the second moment as six scalars (xx yy zz xy xz yz): SIMD-friendly */                 \
    static inline GP_HD void gp_quad6_##SFX(T dx, T dy, T dz, T m, T sxx, T syy, T szz,        \
                                            T sxy, T sxz, T syz, T eps2,                       \
                                            T *ax, T *ay, T *az, T *phi)                      \
    {                                                                                          \
        T rinv = gp_rinv_##SFX(dx * dx + dy * dy + dz * dz + eps2);                            \
        T rinv2 = rinv * rinv;                                                                 \
        T rinv3 = rinv * rinv2;                                                                \
        T rinv5 = rinv3 * rinv2;                                                               \
        T tr = sxx + syy + szz;                                                                \
        T sdx = sxx * dx + sxy * dy + sxz * dz;                                                \
        T sdy = sxy * dx + syy * dy + syz * dz;                                                \
        T sdz = sxz * dx + syz * dy + szz * dz;                                                \
        T dsd = dx * sdx + dy * sdy + dz * sdz;                                                \
        T c = m * rinv3 + (T)7.5 * dsd * rinv5 * rinv2 - (T)1.5 * tr * rinv5;                 \
        T q = (T)3 * rinv5;                                                                    \
        *ax = c * dx - q * sdx; *ay = c * dy - q * sdy; *az = c * dz - q * sdz;               \
        *phi = -(m * rinv + (T)1.5 * dsd * rinv5 - (T)0.5 * tr * rinv3);                      \
    }                                                                                          \
    static inline GP_HD void gp_quad_##SFX(T dx, T dy, T dz, T m, const T s[6], T eps2,       \
                                           T *ax, T *ay, T *az, T *phi)                       \
    {                                                                                          \
        gp_quad6_##SFX(dx, dy, dz, m, s[0], s[1], s[2], s[3], s[4], s[5], eps2,                \
                       ax, ay, az, phi);                                                       \
    }

GP_DEFINE_KERNELS(float, f, sqrtf)
GP_DEFINE_KERNELS(double, d, sqrt)

#undef GP_DEFINE_KERNELS

#endif /* GP_CORE_KERNELS_H */
