/* SPDX-License-Identifier: Apache-2.0 */
/*
 * testlib.h — small helpers shared by the C tests (header only):
 * a fixed-seed RNG, a Plummer-sphere sampler, a naive O(N^2) reference
 * force sum written as plainly as possible, error statistics, and memory
 * measurements. Independent of every plugin, so the plugins are checked
 * against code that shares nothing with them.
 */
#ifndef GP_TESTLIB_H
#define GP_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#  define TL_UNUSED __attribute__((unused))
#else
#  define TL_UNUSED
#endif

/* ---- RNG: splitmix64, fixed seed, same numbers on every machine -------- */
typedef struct tl_rng { uint64_t s; } tl_rng;

static TL_UNUSED uint64_t tl_next(tl_rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1), never 0 or 1. */
static TL_UNUSED double tl_uniform(tl_rng *r)
{
    return ((double)(tl_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Isotropic unit vector times radius into p[3]. */
static TL_UNUSED void tl_on_sphere(tl_rng *r, double radius, double *p)
{
    double cth = 2.0 * tl_uniform(r) - 1.0, phi = 2.0 * M_PI * tl_uniform(r);
    double sth = sqrt(1.0 - cth * cth);
    p[0] = radius * sth * cos(phi);
    p[1] = radius * sth * sin(phi);
    p[2] = radius * cth;
}

/* Plummer sphere, total mass M, scale radius a = 1, radii truncated at
 * rmax (by rejection). Equal masses M/n. Enclosed mass:
 * M(r) = M r^3 / (r^2 + 1)^(3/2). */
static TL_UNUSED void tl_plummer(size_t n, uint64_t seed, double M, double rmax,
                                 double *pos, double *mass)
{
    tl_rng r = {seed};
    for (size_t i = 0; i < n; ++i) {
        double rad;
        do {
            double X = tl_uniform(&r);
            rad = 1.0 / sqrt(pow(X, -2.0 / 3.0) - 1.0);
        } while (!(rad < rmax));
        tl_on_sphere(&r, rad, &pos[3 * i]);
        mass[i] = M / (double)n;
    }
}

/* ---- reference sums: the formulas of gravplug.h, literally ------------- */

/* Forces on targets idx[0..m) (NULL: 0..n) from all n particles. */
static TL_UNUSED void tl_ref_forces(size_t n, const double *pos, const double *mass,
                                    double G, double eps, size_t m, const uint32_t *idx,
                                    double *acc, double *pot)
{
    for (size_t k = 0; k < m; ++k) {
        size_t i = idx ? idx[k] : k;
        double ax = 0, ay = 0, az = 0, ph = 0;
        for (size_t j = 0; j < n; ++j) {
            if (j == i || mass[j] == 0.0) continue;
            double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1],
                   dz = pos[3 * j + 2] - pos[3 * i + 2];
            double r2 = dx * dx + dy * dy + dz * dz + eps * eps;
            if (r2 == 0.0) continue;
            double rinv = 1.0 / sqrt(r2);
            ax += mass[j] * dx * rinv * rinv * rinv;
            ay += mass[j] * dy * rinv * rinv * rinv;
            az += mass[j] * dz * rinv * rinv * rinv;
            ph -= mass[j] * rinv;
        }
        acc[3 * k] = G * ax;
        acc[3 * k + 1] = G * ay;
        acc[3 * k + 2] = G * az;
        if (pot) pot[k] = G * ph;
    }
}

/* ---- error statistics --------------------------------------------------- */
typedef struct tl_errstat { double median, p99, max; } tl_errstat;

static TL_UNUSED int tl_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Relative error per vector (dim 3) or scalar (dim 1): |a-b| / |b|, with
 * |b| == 0 giving |a - b| (absolute). NaN counts as an infinite error. */
static TL_UNUSED tl_errstat tl_relerr(size_t n, int dim, const double *a, const double *b)
{
    tl_errstat e = {0, 0, 0};
    if (n == 0) return e;
    double *r = (double *)malloc(n * sizeof *r); /* also C++ (gpu-walk-emu.cc) */
    if (!r) { e.median = e.p99 = e.max = INFINITY; return e; }
    for (size_t i = 0; i < n; ++i) {
        double d2 = 0, b2 = 0;
        for (int c = 0; c < dim; ++c) {
            double d = a[dim * i + c] - b[dim * i + c];
            d2 += d * d;
            b2 += b[dim * i + c] * b[dim * i + c];
        }
        double v = b2 > 0 ? sqrt(d2 / b2) : sqrt(d2);
        r[i] = isnan(v) ? INFINITY : v;
    }
    qsort(r, n, sizeof *r, tl_cmp_double);
    e.median = r[n / 2];
    e.p99 = r[(size_t)(0.99 * (double)(n - 1))];
    e.max = r[n - 1];
    free(r);
    return e;
}

/* Root mean square over n vectors of |a - ref|^2 / |ref|^2 (ref nonzero). */
static TL_UNUSED double tl_rms_rel(size_t n, const double *a, const double *ref)
{
    double s = 0;
    for (size_t k = 0; k < n; k++) {
        double d2 = 0, r2 = 0;
        for (int c = 0; c < 3; c++) {
            double d = a[3 * k + c] - ref[3 * k + c];
            d2 += d * d;
            r2 += ref[3 * k + c] * ref[3 * k + c];
        }
        s += d2 / r2;
    }
    return sqrt(s / (double)n);
}

/* ---- memory ------------------------------------------------------------- */

/* Resident set size in bytes from /proc/self/statm (0 if unavailable). */
static TL_UNUSED size_t tl_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return 0;
    unsigned long size = 0, rss = 0;
    int ok = fscanf(f, "%lu %lu", &size, &rss) == 2;
    fclose(f);
    return ok ? (size_t)rss * 4096u : 0;
}

/* Built with AddressSanitizer (make sanitize): freed memory waits in its
 * quarantine, so a process's RSS grows by design. */
static TL_UNUSED int tl_sanitized(void)
{
#if defined(__SANITIZE_ADDRESS__)   /* GCC's name for it */
    return 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)   /* clang's */
    return 1;
#else
    return 0;
#endif
#else
    return 0;
#endif
}

/* Running under valgrind? (LD_PRELOAD holds vgpreload_*) */
static TL_UNUSED int tl_under_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload") != NULL;
}

/* The ABI's prediction of one coordinate, unfused whatever the compiler
 * flags: the volatile products cannot be contracted into the additions. */
static TL_UNUSED double tl_predict_coord(double x, double v, double a, double dt)
{
    double h = 0.5 * dt * dt;
    volatile double dv = dt * v;
    double xv = x + dv;
    volatile double ha = h * a;
    return xv + ha;
}

#endif /* GP_TESTLIB_H */
