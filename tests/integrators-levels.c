/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-levels.c — the block time-step bookkeeping rules
 * (integrators/timestep_levels.c): level from a step, next block time,
 * active sets, and the level-change rules (deeper at once, shallower only
 * where the levels synchronise), and the shadow-energy shift of the
 * parameter shadow of block-rk2 / block-kdk (gp_shadow_shift) on a
 * harmonic oscillator.
 */
#include <math.h>

#include "tap.h"
#include "timestep_criteria.h"
#include "timestep_levels.h"

/* A 1-D harmonic oscillator (omega 1) integrated with kick-drift-kick
 * leapfrog, its step switched between h and h/2 every few steps with the
 * switches placed where |a| is large going in and small coming out (as a
 * block scheme's late level changes place them); returns the largest
 * |E - E0| over the last 10% of the run. With shift, gp_shadow_shift is
 * applied at each switch. */
static double oscillator_drift(int shift)
{
    double x[3] = { 1.0, 0.0, 0.0 }, v[3] = { 0.0, 0.0, 0.0 }, a[3] = { -1.0, 0.0, 0.0 };
    double h_big = 0.1, h = h_big, t = 0.0, worst = 0.0;
    const double e0 = 0.5;
    const long steps = 200000;
    for (long s = 0; s < steps; ++s) {
        v[0] += 0.5 * h * a[0];
        x[0] += h * v[0];
        a[0] = -x[0];
        v[0] += 0.5 * h * a[0];
        t += h;
        /* deep while |x| > 0.7 and moving outwards (late in), shallow
         * once moving inwards (late out): not mirror images in time */
        double h_new = fabs(x[0]) > 0.7 && x[0] * v[0] > 0.0 ? 0.5 * h_big : (x[0] * v[0] < 0.0 ? h_big : h);
        if (h_new != h) {
            if (shift) gp_shadow_shift(x, a, 0.125, h, h_new);
            a[0] = -x[0];
            h = h_new;
        }
        double e = 0.5 * v[0] * v[0] + 0.5 * x[0] * x[0];
        if (s > steps * 9 / 10 && fabs(e - e0) > worst) worst = fabs(e - e0);
    }
    (void)t;
    return worst;
}

int main(void)
{
    plan(19);
    gp_levels lv = { 0 };
    if (gp_levels_alloc(&lv, 4) != 0) bail("out of memory");
    gp_levels_anchor(&lv, 10.0, 1.0, 4);   /* dt_max 1, levels 0..4, 16 ticks per dt_max */

    is_int(gp_levels_for_dt(&lv, 2.0), 0, "a step above dt_max gives level 0");
    is_int(gp_levels_for_dt(&lv, 0.5), 1, "exactly dt_max/2 gives level 1");
    is_int(gp_levels_for_dt(&lv, 0.49), 2, "just below dt_max/2 gives level 2");
    is_int(gp_levels_for_dt(&lv, 1e-9), 4, "tiny steps clamp to max_level");
    is_int(gp_levels_for_dt(&lv, 0.0), 4, "a zero step gives max_level");

    lv.level[0] = 0; lv.level[1] = 1; lv.level[2] = 3; lv.level[3] = 3;
    is_int((long long)gp_levels_next_for(&lv, gp_levels_deepest(&lv)), 2, "the next block tick follows the deepest level (span 2)");
    uint32_t idx[4];
    is_int((long long)gp_levels_active(&lv, 2, idx), 2, "at tick 2 only level-3 particles are active");
    is_int((long long)gp_levels_active(&lv, 8, idx), 3, "at tick 8 levels 1..3 are active");
    is_int((long long)gp_levels_active(&lv, 16, idx), 4, "at tick 16 (dt_max) everybody is active");
    ok(gp_levels_time(&lv, 8) == 10.5, "tick 8 is t0 + dt_max/2 exactly");

    /* particle 2 on level 3 corrected at tick 2 wants level 1: 2 is not a
     * multiple of span(2) = 4, so it stays on 3 */
    lv.t_last[2] = 2;
    is_int(gp_levels_adjust(&lv, 2, 1, 2), 3, "no step increase off the synchronisation points");
    /* at tick 4: span(2) = 4 divides 4, span(1) = 8 does not: up one level */
    lv.t_last[2] = 4;
    is_int(gp_levels_adjust(&lv, 2, 1, 4), 2, "one level up where only that level synchronises");
    /* at tick 8 it can climb to level 1 */
    lv.t_last[2] = 8;
    is_int(gp_levels_adjust(&lv, 2, 0, 8), 1, "climbs as far as the levels synchronise (tick 8: level 1)");
    is_int(gp_levels_adjust(&lv, 2, 4, 8), 4, "a smaller step is taken at once");

    uint64_t counts[8];
    size_t used = gp_levels_counts(&lv, counts, 8);
    ok(used == 5 && counts[0] == 1 && counts[1] == 1 && counts[3] == 1 && counts[4] == 1,
       "particles per level are counted");
    /* invariant: t_last on a multiple of the span after every adjustment */
    int good = 1;
    for (size_t i = 0; i < 4; ++i) {
        if (lv.t_last[i] % gp_levels_span(&lv, lv.level[i]) != 0) good = 0;
    }
    ok(good, "every particle's last tick is a multiple of its span");

    /* the shadow shift: x += (h_old^2 - h_new^2)/8 a */
    double x[3] = { 1.0, 2.0, 3.0 }, acc[3] = { 8.0, -16.0, 0.0 };
    gp_shadow_shift(x, acc, 0.125, 0.5, 0.25);   /* (0.25 - 0.0625)/8 = 0.0234375 */
    ok(x[0] == 1.0 + 0.1875 && x[1] == 2.0 - 0.375 && x[2] == 3.0, "gp_shadow_shift with k = 1/8 moves x by (h_old^2 - h_new^2)/8 a");
    double plain = oscillator_drift(0), shifted = oscillator_drift(1);
    diag("harmonic oscillator, switches not time-symmetric: |dE| late in the run %.3e plain, %.3e shifted", plain, shifted);
    ok(plain > 1e-3, "without the shift the switching makes the energy drift (%.2e late in 2e5 steps)", plain);
    ok(shifted < 0.1 * plain, "with the shift it stays bounded (%.2e, at most a tenth of the plain drift)", shifted);
    gp_levels_free(&lv);
    return done_testing();
}
