/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair_bound.h — a lower bound of the pairwise step tau_ij (gp_pair_step,
 * base/pair_step.h) over every pair a particle i forms with the sources of
 * one tree cell, from what the cell knows: how near its position box
 * comes to x_i, how near and how far its velocity box lies from v_i, and
 * its largest mass. A search prunes a cell whose bound is at or above
 * what it looks for (octree/pair_search.c), so the bound must never
 * exceed the computed tau_ij of any pair in the cell.
 *
 * Derivation. Per pair: d^2 = |r|^2 + eps^2, w = |v|, mu = G (m_i + m_j),
 * s = r.v / d^2, so |s| <= |r| w / d^2 <= w / d. Writing each criterion as
 * its inverse, with c = min(dtau, 1) the clamped correction:
 *
 *   free fall: tau = sqrt(d^3 / (2 mu)), dtau = 1.5 tau s,
 *     1/step = (1 - c/2) / tau = 1/tau - min(0.75 s, 1/(2 tau))
 *            <= 1/tau + 0.75 |s| <= sqrt(2 mu / d^3) + 0.75 w / d;
 *   fly-by (only when w > 0): tau = d / w, dtau = tau s (1 + mu/(w^2 d)),
 *     1/step = w/d - min(s (1 + mu/(w^2 d)) / 2, w/(2d))
 *            <= w/d + |s| (1 + mu/(w^2 d)) / 2
 *            <= 1.5 w / d + mu / (2 w d^2).
 *
 * The clamp only ever limits a receding pair (dtau > 1); an approaching
 * pair's correction is unbounded, and the fly-by one grows like
 * mu / (2 w d^2) as w -> 0: a bound from the largest speed alone is no
 * bound. Both right-hand sides grow as d shrinks and as mu grows, so the
 * cell's smallest softened distance and largest mass give their worst
 * case; in w the free-fall side grows and the fly-by side is convex, so
 * the worst w is wmax or wmin. Hence, with w in [wmin, wmax],
 *
 *   tau_ij >= 1 / max(sqrt(2 mu/d^3) + 0.75 wmax/d, f(wmin), f(wmax)),
 *   f(w) = 1.5 w/d + mu/(2 w d^2),
 *
 * and 0 when wmin = 0 < wmax (v_i inside the velocity box: a pair may
 * approach arbitrarily slowly) or d = 0: the search must open the cell.
 * wmax = 0 means every v_j equals v_i: no fly-by term at all.
 *
 * Rounding. Box distances are computed with the expression's own
 * operations on the same doubles, and rounding is monotone, so they never
 * exceed the computed |r|^2 and |v|^2 of a pair in the box; what remains
 * (a few ulps through the roots, quotients and s) is covered by shaving
 * 1e-12 off the bound. Overflow gives inf or NaN terms, so 0 or NaN, and
 * a search prunes only on `bound >= threshold`, which NaN never passes.
 */
#ifndef GP_OCTREE_PAIR_BOUND_H
#define GP_OCTREE_PAIR_BOUND_H

#include <math.h>

#include "octree/gp_hd.h"

/* The approach rate. Beside |s| <= w / d, a box pair knows more: with
 * r = x_i - x_j and v = v_i - v_j in boxes, r.v >= smin, the sum over
 * the axes of each axis' smallest corner product (a product of two
 * intervals is smallest at a corner), so the approach rate
 * a = -(r.v) / d^2 <= A = max(0, -smin) / d^2 for every pair, and a pair
 * that cannot approach (A = 0) has no correction at all. With
 * k(w) = min(A, w/d), the pair's own bound a <= w/d kept,
 *
 *   free fall: 1/step <= sqrt(2 mu/d^3) + 0.75 k(wmax),
 *   fly-by:    1/step <= h(w) = w/d + k(w) (1 + mu/(w^2 d)) / 2,
 *
 * h convex on each side of w = A d (1.5 w/d + mu/(2 w d^2) below, w/d +
 * A/2 + A mu/(2 w^2 d) above), so its largest value on [wmin, wmax] is at
 * wmin, wmax or A d. A = inf gives the bound above. Rounding: the corner
 * differences and products are the pair's own operations on bounding
 * doubles, summed in the pair's order (x, y, z), so by monotone rounding
 * the computed smin is at or below every pair's computed r.v; the rest as
 * above. */
static inline GP_HD double oct_pair_rv_min_axis(double x, double lo, double hi, double v,
                                                double vlo, double vhi)
{
    double rl = x - hi, rh = x - lo, ul = v - vhi, uh = v - vlo;
    double p = rl * ul, q = rl * uh, r = rh * ul, t = rh * uh;
    double m = p < q ? p : q;
    m = r < m ? r : m;
    return t < m ? t : m;
}

/* Lower bound of gp_pair_step over pairs with |r|^2 >= r2min (unsoftened),
 * |v| in [wmin, wmax], G (m_i + m_j) <= Gmu_max (Gmu_max >= 0) and
 * -(r.v) <= sneg (>= 0; HUGE_VAL when unknown). Through id = 1/d (2
 * roots and 5 divisions, against 2 and 7 written as above: a few ulps
 * more, far inside the 1e-12) and branch-free, so a search bounds a
 * cell's children in SIMD lanes. */
static inline GP_HD double oct_pair_step_bound(double r2min, double eps2, double wmin,
                                               double wmax, double Gmu_max, double sneg)
{
    double d2 = r2min + eps2;
    double id = 1.0 / sqrt(d2), id2 = id * id;
    double A = sneg * id2;
    if (!(A <= HUGE_VAL)) A = HUGE_VAL;   /* NaN: nothing known */
    double kmax = wmax * id < A ? wmax * id : A;
    double inv = sqrt(2 * Gmu_max * (id2 * id)) + 0.75 * kmax;      /* free fall */
    double mu_id = Gmu_max * id;                                    /* fly-by:   */
    double wb = A * (d2 * id);                 /* the kink, A d, kept in [wmin, wmax] */
    wb = wb < wmin ? wmin : (wb > wmax ? wmax : wb);
    double w3[3] = { wmin, wmax, wb };
    for (int k = 0; k < 3; k++) {
        double w = w3[k], g = w * id, kk = g < A ? g : A;
        double h = g + 0.5 * kk * (1.0 + mu_id / (w * w));
        if (wmax > 0 && h > inv) inv = h;
    }
    double bound = (1.0 - 1e-12) / inv;
    /* zero distance, or v_i inside the velocity box: the search must open */
    return !(d2 > 0) || (wmax > 0 && !(wmin > 0)) ? 0 : bound;
}

#endif /* GP_OCTREE_PAIR_BOUND_H */
