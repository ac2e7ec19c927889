/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug_predict.h — the ABI's prediction (gravplug.h: predict,
 * set_state_jerk, get_velocities), written once for every side of it: the
 * plugins' predict on the CPU (plugin/base) and on the GPU
 * (plugin/cuda-base), the integrators that predict on the host for ABI 1.0
 * and must give the same bits as a 1.1 plugin, and any host that wants to.
 *
 * Evaluated in double, left to right, with no fused multiply-add: a C or
 * C++ caller compiles with -ffp-contract=off (implied by -std=c11); in CUDA
 * device code the products and sums are the _rn intrinsics, which nvcc
 * never contracts. dt is the target time minus the particle's own time.
 */
#ifndef GRAVPLUG_PREDICT_H
#define GRAVPLUG_PREDICT_H

#if defined(__CUDACC__)
#  define GP_PREDICT_FN static inline __host__ __device__
#else
#  define GP_PREDICT_FN static inline
#endif

/* One rounded product, sum or quotient: a hardware FMA never merges two. */
#if defined(__CUDA_ARCH__)
#  define GP_PREDICT_MUL(a, b) __dmul_rn((a), (b))
#  define GP_PREDICT_ADD(a, b) __dadd_rn((a), (b))
#  define GP_PREDICT_DIV(a, b) __ddiv_rn((a), (b))
#else
#  define GP_PREDICT_MUL(a, b) ((a) * (b))
#  define GP_PREDICT_ADD(a, b) ((a) + (b))
#  define GP_PREDICT_DIV(a, b) ((a) / (b))
#endif

/* ABI 1.1: x + dt*v + (0.5*dt*dt)*a, as ((x + dt*v) + ((0.5*dt)*dt)*a). */
GP_PREDICT_FN double gp_predict_coord(double x, double v, double a, double dt)
{
    double h = GP_PREDICT_MUL(GP_PREDICT_MUL(0.5, dt), dt);
    double xv = GP_PREDICT_ADD(x, GP_PREDICT_MUL(dt, v));
    return GP_PREDICT_ADD(xv, GP_PREDICT_MUL(h, a));
}

/* ABI 1.2, a particle given a jerk: the 1.1 expression plus
 * (((dt*dt)*dt)/6)*j, added last. */
GP_PREDICT_FN double gp_predict_coord3(double x, double v, double a, double j, double dt)
{
    double h = GP_PREDICT_MUL(GP_PREDICT_MUL(0.5, dt), dt);
    double c = GP_PREDICT_DIV(GP_PREDICT_MUL(GP_PREDICT_MUL(dt, dt), dt), 6.0);
    double xv = GP_PREDICT_ADD(x, GP_PREDICT_MUL(dt, v));
    double xa = GP_PREDICT_ADD(xv, GP_PREDICT_MUL(h, a));
    return GP_PREDICT_ADD(xa, GP_PREDICT_MUL(c, j));
}

/* The velocity that goes with gp_predict_coord: v + dt*a. */
GP_PREDICT_FN double gp_predict_vel2(double v, double a, double dt)
{
    return GP_PREDICT_ADD(v, GP_PREDICT_MUL(dt, a));
}

/* The velocity that goes with gp_predict_coord3: (v + dt*a) + ((0.5*dt)*dt)*j. */
GP_PREDICT_FN double gp_predict_vel3(double v, double a, double j, double dt)
{
    double h = GP_PREDICT_MUL(GP_PREDICT_MUL(0.5, dt), dt);
    double va = GP_PREDICT_ADD(v, GP_PREDICT_MUL(dt, a));
    return GP_PREDICT_ADD(va, GP_PREDICT_MUL(h, j));
}

#endif /* GRAVPLUG_PREDICT_H */
