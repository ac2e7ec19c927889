/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_step_bound.h — a cheap test that proves gp_pair_step(...) >= T for a
 * pair, so that cpu-direct evaluates the exact step (3 roots, 6 divisions)
 * only for the few pairs that may go below the running minimum T, or below
 * nb_step. No root and no division per pair: products compared, squared,
 * with thresholds made once per T.
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

/* 1 when tau_ij >= T is proven (see above) for a pair with c = 1/sqrt(r2),
 * s = r.v, v2 = |v|^2 and Gmu = G (m_i + m_j); 0 when it may be below.
 * Branch-free (comparisons combined with &), so it vectorises over lanes. */
static inline int gp_step_bound_holds(const gp_step_bound *b, double c, double s, double v2,
                                      double Gmu)
{
    double c2 = c * c, mc = Gmu * c, mc3 = mc * c2;
    double sc = s * c2;                   /* -a */
    double D = b->X + 0.75 * sc;          /* X - 0.75 a */
    double w = v2 * c2;                   /* g^2 */
    double E = b->X * v2 + 0.5 * sc * (v2 + mc);
    int trusted = (c2 >= GP_STEP_BOUND_LO) & (c2 <= GP_STEP_BOUND_HI) &
                  (Gmu >= GP_STEP_BOUND_LO) & (Gmu <= GP_STEP_BOUND_HI) &
                  (v2 <= GP_STEP_BOUND_HI) & ((v2 >= GP_STEP_BOUND_LO) | (v2 == 0.0));
    return trusted & (mc3 <= b->ff) & (D >= 0.0) & (2 * mc3 <= D * D) & (w <= b->fly) &
           (E >= 0.0) & (w * v2 * v2 <= E * E);
}

#endif /* GP_PAIR_STEP_BOUND_H */
