/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct_kernel.c — the vectorised, fixed-order pairwise sum (see
 * direct_kernel.h): cpu-direct's force kernel and cpu-tree's exact sums for
 * a few active particles. Compiled with -O3 -fno-math-errno
 * -fno-trapping-math (plugin/base/module.mk) so GCC turns the lane loop into SIMD; -std=c11 keeps FMA
 * contraction off, and no -ffast-math: the arithmetic is exactly what is
 * written here.
 */
#include "base/direct_kernel.h"

#include <math.h>

#include "base/pair_step.h"
#include "base/pair_step_bound.h"

/* One source j into lane l's accumulators, in three parts that LANE and
 * LANE_EX share word for word (so acc, pot and the jerk have the same bits
 * in every kernel): LANE_ACC the acceleration and potential, LANE_DV the
 * relative velocity and 3 (r.v) / r2, LANE_JERK the jerk terms. */
#define LANE_ACC(j, l)                                                      \
        double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;              \
        double r2 = dx * dx + dy * dy + dz * dz + eps2;                     \
        /* skip the self term, zero distances and (ABI 1.3, a constant  \
         * after inlining) the target's group, without branches */         \
        double keep = (double)((r2 > 0.0) & (id[j] != self) &               \
                               (with_groups ? g[j] != gi : 1));             \
        double rinv = keep / sqrt(r2 > 0.0 ? r2 : 1.0);                     \
        double mr = m[j] * rinv;                                            \
        double mr3 = mr * rinv * rinv;                                      \
        ax[l] += mr3 * dx;                                                  \
        ay[l] += mr3 * dy;                                                  \
        az[l] += mr3 * dz;                                                  \
        ph[l] -= mr;

#define LANE_DV(j)                                                          \
            double dvx = vx[j] - vxi, dvy = vy[j] - vyi, dvz = vz[j] - vzi; \
            double rv3 = 3.0 * (dx * dvx + dy * dvy + dz * dvz) * rinv * rinv;

#define LANE_JERK(l)                                                        \
            jx[l] += mr3 * (dvx - rv3 * dx);                                \
            jy[l] += mr3 * (dvy - rv3 * dy);                                \
            jz[l] += mr3 * (dvz - rv3 * dz);

/* compute_forces' lane; with the jerk (a constant after inlining, so each
 * caller's loop has no branch) also its jerk terms. The acceleration's
 * operations are the same either way, so acc and pot have the same bits
 * with or without the jerk. */
#define LANE(j, l)                                                          \
    do {                                                                    \
        LANE_ACC(j, l)                                                      \
        if (with_jerk) {                                                    \
            LANE_DV(j)                                                      \
            LANE_JERK(l)                                                    \
        }                                                                   \
    } while (0)

/* LANE with the neighbour outputs: lane l keeps its nearest source (j
 * ascending within a lane, and a strict <, so a tie keeps the lower index;
 * d2 is r2's unsoftened sum, shared); with the step it flags in cand[l] a
 * pair whose step pair_step_bound.h cannot prove >= the running minimum,
 * and `any` says whether the block has one (settle then evaluates those
 * exactly, between blocks). */
#define LANE_EX(j, l)                                                       \
    do {                                                                    \
        LANE_ACC(j, l)                                                      \
        LANE_DV(j)                                                          \
        if (with_jerk) {                                                    \
            LANE_JERK(l)                                                    \
        }                                                                   \
        double d2 = dx * dx + dy * dy + dz * dz;                            \
        long closer = (id[j] != self) & (d2 < nd[l]);                       \
        nd[l] = closer ? d2 : nd[l];                                        \
        ni[l] = closer ? id[j] : ni[l];                                     \
        if (with_step) {                                                    \
            double dv2 = dvx * dvx + dvy * dvy + dvz * dvz;                 \
            double Gmu = G * (mi + m[j]);                                   \
            long c = (keep != 0.0) &                                        \
                     !(gp_step_bound_pair_ok(rinv, dv2) &                   \
                       gp_step_bound_passes(&bound, rinv, rv3, dv2, Gmu) &  \
                       ((!with_even) |                                      \
                        gp_step_bound_passes(&bound, rinv, -rv3, dv2, Gmu))); \
            cand[l] = c;                                                    \
            any |= c;                                                       \
        }                                                                   \
    } while (0)

/* The lanes combined in a fixed pairwise order (both kernels, so their
 * sums have the same bits): out[0..3] acc and pot, out[4..6] the jerk
 * when with_jerk. */
static inline __attribute__((always_inline)) void lanes_out(
    double *ax, double *ay, double *az, double *ph, double *jx, double *jy, double *jz,
    const int with_jerk, double *out)
{
    enum { L = GP_DIRECT_LANES };
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

/* The sum over all sources, lanes combined in a fixed pairwise order;
 * out[0..3] acc and pot, out[4..6] the jerk when with_jerk. */
static inline __attribute__((always_inline)) void point_sum(
    const gp_direct_sources *src, const gp_direct_vel *vel, double xi, double yi, double zi,
    double vxi, double vyi, double vzi, double self, double eps2, const int with_jerk,
    const int with_groups, double gi, double *out)
{
    enum { L = GP_DIRECT_LANES };
    const double *restrict g = with_groups ? src->g : NULL;
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

    lanes_out(ax, ay, az, ph, jx, jy, jz, with_jerk, out);
}

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
        double c = 1.0 / sqrt(r2), rv = dx * dvx + dy * dvy + dz * dvz;
        double dv2 = dvx * dvx + dvy * dvy + dvz * dvz;
        if (gp_step_bound_holds(bound, c, rv, dv2, Gmu) &&
            (!t->even || gp_step_bound_holds(bound, c, -rv, dv2, Gmu)))
            continue;
        double tau = t->even ? gp_pair_step_even(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu)
                             : gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu);
        ++*evals;
        if (tau < *step) {
            *step = tau;
            *bound = t->prune ? gp_step_bound_for(tau) : gp_step_bound_none();
        }
    }
}

/* point_sum with the nearest source and, with_step, the pairwise step
 * (GP_EX_*): the same sums in the same order, so out[0..6] have
 * point_sum's bits. */
static inline __attribute__((always_inline)) void point_sum_ex(
    const gp_direct_sources *src, const gp_direct_vel *vel, const gp_direct_target *t,
    double eps2, const int with_jerk, const int with_step, const int with_even, double *out,
    size_t *evals)
{
    enum { L = GP_DIRECT_LANES };
    const double *restrict x = src->x, *restrict y = src->y, *restrict z = src->z;
    const double *restrict m = src->m, *restrict id = src->id;
    const double *restrict vx = vel->vx, *restrict vy = vel->vy, *restrict vz = vel->vz;
    const double xi = t->x, yi = t->y, zi = t->z, vxi = t->vx, vyi = t->vy, vzi = t->vz;
    const double self = t->self, mi = t->m, G = t->G;
    const int with_groups = 0;              /* LANE_ACC's: no groups here */
    const double *restrict g = NULL, gi = 0.0;
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

    for (size_t jb = 0; jb < nfull; jb += L) {
        long any = 0;
#pragma omp simd reduction(| : any)
        for (int l = 0; l < L; ++l) LANE_EX(jb + l, l);
        if (with_step && any) settle(src, vel, t, eps2, jb, L, cand, &step, &bound, evals);
    }
    long any = 0;
    for (size_t j = nfull; j < n; ++j) LANE_EX(j, (int)(j - nfull));
    if (with_step && any)
        settle(src, vel, t, eps2, nfull, (int)(n - nfull), cand, &step, &bound, evals);

    lanes_out(ax, ay, az, ph, jx, jy, jz, with_jerk, out);
    if (!with_jerk) out[4] = out[5] = out[6] = 0.0;
    /* the lanes' nearest: the smallest d2, then the lowest index */
    out[GP_EX_NN_D2] = HUGE_VAL;
    out[GP_EX_NN_ID] = -1.0;
    for (int l = 0; l < L; ++l)
        gp_direct_nn_merge(&out[GP_EX_NN_D2], &out[GP_EX_NN_ID], nd[l], ni[l]);
    if (with_step) out[GP_EX_STEP] = step;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(GP_NO_CLONES)
/* Baseline, AVX2 and AVX-512 versions, chosen at load time, as the tree
 * walk's. All do the same correctly rounded operations in the same order
 * (-ffp-contract=off: no fused multiply-add), so they agree bit for bit;
 * the AVX-512 one (masked divisions, 32 registers) is 1.4x faster per pair
 * than AVX2 on an AMD EPYC (bench/results/abi-outputs/raw/abi12-outputs.md). */
#define GP_DIRECT_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define GP_DIRECT_CLONES
#endif

GP_DIRECT_CLONES
void gp_direct_point(const gp_direct_sources *src, double xi, double yi, double zi,
                     double self, double eps2, double out[4])
{
    point_sum(src, NULL, xi, yi, zi, 0, 0, 0, self, eps2, 0, 0, 0.0, out);
}

GP_DIRECT_CLONES
void gp_direct_point_grouped(const gp_direct_sources *src, double xi, double yi, double zi,
                             double self, double gi, double eps2, double out[4])
{
    point_sum(src, NULL, xi, yi, zi, 0, 0, 0, self, eps2, 0, 1, gi, out);
}

GP_DIRECT_CLONES
void gp_direct_point_jerk(const gp_direct_sources *src, const gp_direct_vel *vel, double xi,
                          double yi, double zi, double vxi, double vyi, double vzi,
                          double self, double eps2, double out[7])
{
    point_sum(src, vel, xi, yi, zi, vxi, vyi, vzi, self, eps2, 1, 0, 0.0, out);
}

GP_DIRECT_CLONES
void gp_direct_point_ex(const gp_direct_sources *src, const gp_direct_vel *vel,
                        const gp_direct_target *t, double eps2, int with_jerk, int with_step,
                        double out[GP_EX_W], size_t *exact_evals)
{
    size_t evals = 0;
    /* one instance per kind, so that no loop tests what it computes */
    if (with_step && t->even)
        if (with_jerk) point_sum_ex(src, vel, t, eps2, 1, 1, 1, out, &evals);
        else point_sum_ex(src, vel, t, eps2, 0, 1, 1, out, &evals);
    else if (with_jerk && with_step)
        point_sum_ex(src, vel, t, eps2, 1, 1, 0, out, &evals);
    else if (with_jerk)
        point_sum_ex(src, vel, t, eps2, 1, 0, 0, out, &evals);
    else if (with_step)
        point_sum_ex(src, vel, t, eps2, 0, 1, 0, out, &evals);
    else
        point_sum_ex(src, vel, t, eps2, 0, 0, 0, out, &evals);
    if (exact_evals) *exact_evals = evals;
}

/* One lane of gp_direct_list_candidates: flag[l] = 1 where source j may be
 * listed (the test of direct_lists.c's pair). The range guards of
 * gp_step_bound_holds that hold for the whole call are the caller's
 * (t->prune), so only the pair's own are tested here, branch-free. */
#define LANE_LIST(j, l)                                                     \
    do {                                                                    \
        double dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;              \
        double dvx = vx[j] - vxi, dvy = vy[j] - vyi, dvz = vz[j] - vzi;     \
        double d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;           \
        /* no select (GCC then cannot vectorise the masks): r2 + 1e-300 is \
         * r2 for every r2 >= 1e-40 that pair_ok accepts, and r2 = 0 gets  \
         * c = 1e150, which it refuses */                                  \
        double c = 1.0 / sqrt(r2 + 1e-300);                                 \
        double s3 = 3.0 * (dx * dvx + dy * dvy + dz * dvz) * c * c;         \
        double v2 = dvx * dvx + dvy * dvy + dvz * dvz;                      \
        double Gmu = G * (mi + m[j]);                                       \
        long ok = gp_step_bound_pair_ok(c, v2);                             \
        long far_odd = (!odd) | gp_step_bound_passes(&bo, c, s3, v2, Gmu);  \
        long far_even = (!even) | (gp_step_bound_passes(&be, c, s3, v2, Gmu) & \
                                   gp_step_bound_passes(&be, c, -s3, v2, Gmu)); \
        long near = with_rad & (d2 < rad2);                                 \
        flag[l] = (id[j] != self) & (near | (by_step & !(ok & far_odd & far_even))); \
        any |= flag[l];                                                     \
    } while (0)

/* gp_direct_list_candidates for one kind of list (odd, even, with_rad:
 * constants after inlining, so no lane tests what it does not need). */
static inline __attribute__((always_inline)) size_t list_candidates(
    const gp_direct_sources *src, const gp_direct_vel *vel, const gp_direct_list_target *t,
    double eps2, uint32_t *q, const long odd, const long even, const long with_rad)
{
    enum { L = GP_DIRECT_LANES };
    const double *restrict x = src->x, *restrict y = src->y, *restrict z = src->z;
    const double *restrict m = src->m, *restrict id = src->id;
    const double *restrict vx = vel->vx, *restrict vy = vel->vy, *restrict vz = vel->vz;
    /* the target in locals, so the lanes read nothing through t */
    const double xi = t->x, yi = t->y, zi = t->z, vxi = t->vx, vyi = t->vy, vzi = t->vz;
    const double self = t->self, mi = t->m, G = t->G, rad2 = t->rad2;
    const long by_step = odd | even;
    const gp_step_bound bo = odd && t->prune ? gp_step_bound_for(t->nb_step) : gp_step_bound_none();
    const gp_step_bound be = even && t->prune ? gp_step_bound_for(t->nb_step_even) : gp_step_bound_none();
    long flag[L];
    size_t n = src->n, nfull = n - n % L, k = 0;
    for (size_t jb = 0; jb < nfull; jb += L) {
        long any = 0;
#pragma omp simd reduction(| : any)
        for (int l = 0; l < L; ++l) LANE_LIST(jb + l, l);
        if (!any) continue;
        for (int l = 0; l < L; ++l)
            if (flag[l]) q[k++] = (uint32_t)(jb + (size_t)l);
    }
    long any = 0;
    for (size_t j = nfull; j < n; ++j) LANE_LIST(j, (int)(j - nfull));
    for (size_t j = nfull; any && j < n; ++j)
        if (flag[j - nfull]) q[k++] = (uint32_t)j;
    return k;
}

GP_DIRECT_CLONES
size_t gp_direct_list_candidates(const gp_direct_sources *src, const gp_direct_vel *vel,
                                 const gp_direct_list_target *t, double eps2, uint32_t *q)
{
    const int odd = t->nb_step > 0, even = t->nb_step_even > 0, rad = t->rad2 >= 0.0;
    /* one instance per kind that a scheme asks for; the rest share the
     * general one */
    if (even && !odd && !rad) return list_candidates(src, vel, t, eps2, q, 0, 1, 0);
    if (odd && !even && !rad) return list_candidates(src, vel, t, eps2, q, 1, 0, 0);
    if (rad && !odd && !even) return list_candidates(src, vel, t, eps2, q, 0, 0, 1);
    return list_candidates(src, vel, t, eps2, q, odd, even, rad);
}
