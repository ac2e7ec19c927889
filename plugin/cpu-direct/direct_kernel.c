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

#include "base/pair_step.h"
#include "pair_step_bound.h"

/* One source j into lane l's accumulators; with the jerk and the
 * neighbour outputs (constants after inlining, so each caller's loop has
 * no branch) also their terms. The acceleration's operations are the same
 * whatever else is asked, so acc and pot have the same bits in every
 * variant. With nbr: lane l keeps its nearest source (j ascending within a
 * lane, and a strict <, so a tie keeps the lower index) and flags in
 * cand[l] a pair whose step pair_step_bound.h cannot prove >= the running
 * minimum; `any` says whether the block has one. */
#define LANE(j, l)                                                          \
    do {                                                                    \
        double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;              \
        double d2 = dx * dx + dy * dy + dz * dz;                            \
        double r2 = d2 + eps2;                                              \
        /* skip the self term and zero distances, without branches */      \
        double keep = (double)((r2 > 0.0) & (id[j] != self));               \
        double rinv = keep / sqrt(r2 > 0.0 ? r2 : 1.0);                     \
        double mr = m[j] * rinv;                                            \
        double mr3 = mr * rinv * rinv;                                      \
        ax[l] += mr3 * dx;                                                  \
        ay[l] += mr3 * dy;                                                  \
        az[l] += mr3 * dz;                                                  \
        ph[l] -= mr;                                                        \
        if (with_jerk || with_nbr) {                                        \
            double dvx = vx[j] - vxi, dvy = vy[j] - vyi, dvz = vz[j] - vzi; \
            double rv = dx * dvx + dy * dvy + dz * dvz;                     \
            double rv3 = 3.0 * rv * rinv * rinv;                            \
            if (with_jerk) {                                                \
                jx[l] += mr3 * (dvx - rv3 * dx);                            \
                jy[l] += mr3 * (dvy - rv3 * dy);                            \
                jz[l] += mr3 * (dvz - rv3 * dz);                            \
            }                                                               \
            if (with_nbr) {                                                 \
                long other = id[j] != self;                                 \
                long closer = other & (d2 < nd[l]);                         \
                nd[l] = closer ? d2 : nd[l];                                \
                ni[l] = closer ? id[j] : ni[l];                             \
                if (with_step) {                                            \
                    double dv2 = dvx * dvx + dvy * dvy + dvz * dvz;         \
                    double Gmu = G * (mi + m[j]);                           \
                    long c = (keep != 0.0) &                                \
                             !(gp_step_bound_pair_ok(rinv, dv2) &           \
                               gp_step_bound_passes(&bound, rinv, rv3, dv2, Gmu)); \
                    cand[l] = c;                                            \
                    any |= c;                                               \
                }                                                           \
            }                                                               \
        }                                                                   \
    } while (0)

/* The exact step of the flagged pairs among sources j0 .. j0+count-1,
 * into the running minimum (and its bound). Rare: pair_step_bound.h
 * leaves a handful of pairs per target. Compiled without contraction
 * (module.mk), so gp_pair_step has the shared expression's bits. */
static void settle(const gp_direct_sources *src, const gp_direct_vel *vel,
                   const gp_direct_target *t, double eps2, size_t j0, int count,
                   const long *cand, double *step, gp_step_bound *bound, size_t *evals)
{
    for (int l = 0; l < count; ++l) {
        if (!cand[l]) continue;
        size_t j = j0 + (size_t)l;
        double dx = t->x - src->x[j], dy = t->y - src->y[j], dz = t->z - src->z[j];
        double dvx = t->vx - vel->vx[j], dvy = t->vy - vel->vy[j], dvz = t->vz - vel->vz[j];
        double Gmu = t->G * (t->m + src->m[j]);
        /* an earlier lane may have lowered the minimum: test again */
        double r2 = dx * dx + dy * dy + dz * dz + eps2;
        if (gp_step_bound_holds(bound, 1.0 / sqrt(r2), dx * dvx + dy * dvy + dz * dvz,
                                dvx * dvx + dvy * dvy + dvz * dvz, Gmu))
            continue;
        double tau = gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu);
        ++*evals;
        if (tau < *step) {
            *step = tau;
            *bound = t->prune ? gp_step_bound_for(tau) : gp_step_bound_none();
        }
    }
}

/* The sum over all sources, lanes combined in a fixed pairwise order;
 * out[0..3] acc and pot, out[4..6] the jerk when with_jerk, out[7..9] the
 * nearest source and the step when with_nbr (GP_EX_*). */
static inline __attribute__((always_inline)) void point_sum(
    const gp_direct_sources *src, const gp_direct_vel *vel, double xi, double yi, double zi,
    double vxi, double vyi, double vzi, double self, double eps2, const int with_jerk,
    const gp_direct_target *t, const int with_step, double *out, size_t *evals)
{
    const int with_nbr = t != NULL;
    enum { L = GP_DIRECT_LANES };
    const double *restrict x = src->x, *restrict y = src->y, *restrict z = src->z;
    const double *restrict m = src->m, *restrict id = src->id;
    const double *restrict vx = with_jerk || with_nbr ? vel->vx : NULL;
    const double *restrict vy = with_jerk || with_nbr ? vel->vy : NULL;
    const double *restrict vz = with_jerk || with_nbr ? vel->vz : NULL;
    const double mi = with_nbr ? t->m : 0.0, G = with_nbr ? t->G : 0.0;
    double ax[L] = {0}, ay[L] = {0}, az[L] = {0}, ph[L] = {0};
    double jx[L] = {0}, jy[L] = {0}, jz[L] = {0};
    double nd[L], ni[L];
    long cand[L] = {0};
    for (int l = 0; l < L; ++l) {
        nd[l] = HUGE_VAL;
        ni[l] = -1.0;
    }
    double step = with_step ? out[GP_EX_STEP] : HUGE_VAL;
    gp_step_bound bound = with_step && t->prune ? gp_step_bound_for(step) : gp_step_bound_none();
    size_t n = src->n, nfull = n - n % L;

    if (!with_nbr) {
        long any = 0;   /* unused without nbr */
        (void)any;
        for (size_t jb = 0; jb < nfull; jb += L) {
#pragma omp simd
            for (int l = 0; l < L; ++l) LANE(jb + l, l);
        }
    } else {
        for (size_t jb = 0; jb < nfull; jb += L) {
            long any = 0;
#pragma omp simd reduction(| : any)
            for (int l = 0; l < L; ++l) LANE(jb + l, l);
            if (with_step && any) settle(src, vel, t, eps2, jb, L, cand, &step, &bound, evals);
        }
    }
    {
        long any = 0;
        for (size_t j = nfull; j < n; ++j) LANE(j, (int)(j - nfull));
        if (with_step && any)
            settle(src, vel, t, eps2, nfull, (int)(n - nfull), cand, &step, &bound, evals);
    }

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
    if (with_nbr) {
        if (!with_jerk) out[4] = out[5] = out[6] = 0.0;
        /* the lanes' nearest: the smallest d2, then the lowest index */
        out[GP_EX_NN_D2] = HUGE_VAL;
        out[GP_EX_NN_ID] = -1.0;
        for (int l = 0; l < L; ++l) gp_direct_nn_merge(&out[GP_EX_NN_D2], &out[GP_EX_NN_ID], nd[l], ni[l]);
        if (with_step) out[GP_EX_STEP] = step;
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
    point_sum(src, NULL, xi, yi, zi, 0, 0, 0, self, eps2, 0, NULL, 0, out, NULL);
}

GP_DIRECT_CLONES
void gp_direct_point_jerk(const gp_direct_sources *src, const gp_direct_vel *vel, double xi,
                          double yi, double zi, double vxi, double vyi, double vzi,
                          double self, double eps2, double out[7])
{
    point_sum(src, vel, xi, yi, zi, vxi, vyi, vzi, self, eps2, 1, NULL, 0, out, NULL);
}

GP_DIRECT_CLONES
void gp_direct_point_ex(const gp_direct_sources *src, const gp_direct_vel *vel,
                        const gp_direct_target *t, double eps2, int with_jerk, int with_step,
                        double out[GP_EX_W], size_t *exact_evals)
{
    size_t evals = 0;
    /* one instance per kind, so that no loop tests what it computes */
#define GP_EX_SUM(jerk, step)                                                         \
    point_sum(src, vel, t->x, t->y, t->z, t->vx, t->vy, t->vz, t->self, eps2, jerk, t, \
              step, out, &evals)
    if (with_jerk && with_step)
        GP_EX_SUM(1, 1);
    else if (with_jerk)
        GP_EX_SUM(1, 0);
    else if (with_step)
        GP_EX_SUM(0, 1);
    else
        GP_EX_SUM(0, 0);
#undef GP_EX_SUM
    if (exact_evals) *exact_evals = evals;
}
