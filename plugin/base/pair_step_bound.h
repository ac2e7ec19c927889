/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_step_bound.h — a cheap test that proves gp_pair_step(...) >= T for a
 * pair, so that cpu-direct (per pair, in the force kernel's lanes) and
 * the tree plugins' pair search (per pair of an opened leaf,
 * octree/pair_search.c) evaluate the exact step (3 roots, 6 divisions)
 * only for the few pairs that may go below the running minimum T, or below
 * nb_step. No root and no division per pair given c = 1/sqrt(r2): products
 * compared, squared, with thresholds made once per T.
 *
 * With r2 = |r|^2 + eps2 (softened, as pair_step.h), c = 1/sqrt(r2),
 * mu = G (m_i + m_j), s = r.v, v2 = |v|^2 and the signed approach rate
 * a = -s / r2 = -s c^2 (> 0 approaching), pair_step.h computes
 * tau = min(step_ff, step_fb) with
 *   free fall: t = sqrt(r^3 / (2 mu)), d = 1.5 t s / r2 clamped to d <= 1,
 *              step_ff = t / (1 - d/2);
 *   fly-by:    t = r / |v|, d = t (s / r2) (1 + mu / (v2 r)) clamped the same,
 *              step_fb = t / (1 - d/2)    (only when v2 > 0).
 * Since 1/step = 1/t - min(d, 1) / (2t), exactly
 *   F = 1/step_ff = max(f/2, f + 0.75 a),        f = sqrt(2 mu c^3) = 1/t,
 *   B = 1/step_fb = max(g/2, g + K),  g = |v| c, K = (a/2) (1 + mu c / v2),
 * the clamp giving the first terms (a receding pair: at most twice t), the
 * second the first-order correction. K is the fly-by correction of a
 * slowly approaching pair: it grows like mu / (2 |v| r^2) as |v| -> 0, so
 * it cannot be left out. tau >= T  <=>  max(F, B) <= X = 1/T, that is
 *   (F1) f/2 <= X:         mu c^3 <= 2 X^2
 *   (F2) f + 0.75 a <= X:  D = X - 0.75 a >= 0  and  2 mu c^3 <= D^2
 *   (B1) g/2 <= X:         v2 c^2 <= 4 X^2
 *   (B2) g + K <= X:       times v2 (> 0), with E = X v2 - (a/2)(v2 + mu c):
 *                          E >= 0  and  v2^3 c^2 <= E^2
 * (v2 = 0: s = 0, so a = 0 and E = 0, and B1, B2 pass, as pair_step.h
 * skips the fly-by time). The test is therefore as tight as the exact
 * comparison, without its roots and divisions.
 *
 * Rounding: X carries a relative margin GP_STEP_BOUND_MARGIN (1e-12,
 * against some 10^-14 of rounding in the products here and in pair_step.h's
 * own evaluation; F1 and B1 keep D and E within a few X, so the
 * subtractions lose nothing the margin does not cover), so a pair that
 * passes has, as computed, tau > T strictly, and the minimum (and the list
 * by nb_step) stays bit for bit the brute force's. The products are only
 * trusted for normal numbers: a pair with c^2, mu or a nonzero v2 outside
 * GP_STEP_BOUND_LO .. HI, and any pair when T is outside 1e-100 .. 1e100,
 * is never pruned, so nothing can overflow or underflow into a wrong
 * "passes" (with c, |v| <= 1e20, mu <= 1e40 and X <= 1e100 every product
 * and square here stays below 1e300, and above 1e-200 where not zero).
 */
#ifndef GP_PAIR_STEP_BOUND_H
#define GP_PAIR_STEP_BOUND_H

#include <math.h>

#define GP_STEP_BOUND_MARGIN 1e-12
#define GP_STEP_BOUND_LO 1e-40   /* c^2, mu, v2: distances and speeds 1e-20 .. 1e20 */
#define GP_STEP_BOUND_HI 1e40

/* The per-pair tests are inlined into the lane loops that call them
 * several times a pair (a call would keep a loop from vectorising). */
#if defined(__GNUC__)
#define GP_STEP_BOUND_LANE static inline __attribute__((always_inline))
#else
#define GP_STEP_BOUND_LANE static inline
#endif

/* The thresholds for a running minimum T: NaN (nothing passes) where T is
 * out of the trusted range; X = 0 for T = inf (nothing passes F1, since
 * mu c^3 > 0). */
typedef struct gp_step_bound {
    double X;      /* 1/T, less the margin */
    double ff;     /* 2 X^2 (F1) */
    double fly;    /* 4 X^2 (B1) */
} gp_step_bound;

static inline gp_step_bound gp_step_bound_for(double T)
{
    gp_step_bound b;
    if (T == HUGE_VAL) {
        b.X = b.ff = b.fly = 0.0;
    } else if (!(T >= 1e-100 && T <= 1e100)) {
        b.X = b.ff = b.fly = NAN;
    } else {
        double X = (1.0 - GP_STEP_BOUND_MARGIN) / T;
        b.X = X;
        b.ff = 2 * X * X;
        b.fly = 4 * X * X;
    }
    return b;
}

/* The four tests for a pair in the trusted range (see gp_step_bound_holds
 * for the guards): c = 1/sqrt(r2), s3 = 3 (r.v) c^2 (written as the jerk
 * writes it, so a caller computing both shares it), v2 = |v|^2, Gmu =
 * G (m_i + m_j). With a = -s3/3: D = X + s3/4, 6E = 6 X v2 + s3 (v2 + mu c),
 * and B2 reads 36 v2^3 c^2 <= (6E)^2; D|D| and E|E| are the signed squares
 * (a negative D or E fails). Branch-free, so it vectorises over lanes. */
GP_STEP_BOUND_LANE int gp_step_bound_passes(const gp_step_bound *b, double c, double s3, double v2,
                                       double Gmu)
{
    double c2 = c * c, mc = Gmu * c, mc3 = mc * c2;
    double D = b->X + 0.25 * s3;
    double w = v2 * c2;                                /* g^2 */
    double E6 = 6.0 * b->X * v2 + s3 * (v2 + mc);
    return (mc3 <= b->ff) & (2.0 * mc3 <= D * fabs(D)) & (w <= b->fly) &
           (36.0 * (w * v2 * v2) <= E6 * fabs(E6));
}

/* Whether every pair of a computation is in the trusted range but for
 * the two things only a pair knows (its r2 >= 1/GP_STEP_BOUND_HI and a
 * nonzero v2 >= GP_STEP_BOUND_LO, which gp_step_bound_pair_ok checks):
 * every |coordinate| of positions (xmax) and velocities (vmax) at most
 * 1e19, eps2 at most 1e39, G m between GP_STEP_BOUND_LO (the lightest
 * source, gm_min) and GP_STEP_BOUND_HI / 2 (the heaviest particle, gm_max).
 * A caller that gets 0 does not prune (gp_step_bound_none). */
static inline int gp_step_bound_range_ok(double xmax, double vmax, double eps2, double gm_min,
                                         double gm_max)
{
    return xmax <= 1e19 && vmax <= 1e19 && eps2 <= 1e39 && gm_min >= GP_STEP_BOUND_LO &&
           gm_max <= 0.5 * GP_STEP_BOUND_HI;
}

GP_STEP_BOUND_LANE int gp_step_bound_pair_ok(double c, double v2)
{
    return (c * c <= GP_STEP_BOUND_HI) & ((v2 >= GP_STEP_BOUND_LO) | (v2 == 0.0));
}

/* Thresholds that nothing passes (pruning off). */
static inline gp_step_bound gp_step_bound_none(void)
{
    gp_step_bound b = {NAN, NAN, NAN};
    return b;
}

/* 1 when tau_ij >= T is proven for any pair (every guard per pair, for
 * callers without gp_step_bound_range_ok): c = 1/sqrt(r2), s = r.v,
 * v2 = |v|^2, Gmu = G (m_i + m_j); 0 when it may be below. */
static inline int gp_step_bound_holds(const gp_step_bound *b, double c, double s, double v2,
                                      double Gmu)
{
    double c2 = c * c;
    int trusted = (c2 >= GP_STEP_BOUND_LO) & (Gmu >= GP_STEP_BOUND_LO) &
                  (Gmu <= GP_STEP_BOUND_HI) & (v2 <= GP_STEP_BOUND_HI) &
                  gp_step_bound_pair_ok(c, v2);
    return trusted & gp_step_bound_passes(b, c, 3.0 * s * c * c, v2, Gmu);
}

#endif /* GP_PAIR_STEP_BOUND_H */
