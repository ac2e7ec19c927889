/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-levels.c — the block time-step bookkeeping rules
 * (integrators/core/timestep_levels.c): level from a step, next block time,
 * active sets, and the level-change rules (deeper at once, shallower only
 * where the levels synchronise), and the filing by level that finds the
 * active particles without scanning everyone, against the ordered scan
 * (gp_levels_active_scan, the plain loop over level[] it replaces).
 */
#include <math.h>
#include <stdlib.h>

#include "tap.h"
#include "core/timestep_levels.h"

/* Block steps with random level wishes, as the schemes make them: at each
 * block tick the active particles are corrected and adjusted; the filed
 * active sets and deepest levels must equal the scan's at every step,
 * also across a direct write of level[] announced by gp_levels_touched. */
static void random_steps(size_t n, int max_level, int steps, uint64_t seed)
{
    gp_levels lv = { 0 };
    uint32_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b || gp_levels_alloc(&lv, n) != 0) bail("out of memory");
    gp_levels_anchor(&lv, 0.0, 1.0, max_level);
    uint64_t r = seed;
#define RND() (r = r * 6364136223846793005ULL + 1442695040888963407ULL, (unsigned)(r >> 33))
    for (size_t i = 0; i < n; ++i) lv.level[i] = (uint8_t)(RND() % (unsigned)(max_level + 1));
    gp_levels_touched(&lv);
    int same = 1, steps_done = 0, sorted = 1;
    size_t active_total = 0;
    for (int s = 0; s < steps && same; ++s) {
        int d = gp_levels_deepest(&lv);
        if (d != gp_levels_deepest_scan(&lv)) same = 0;
        uint64_t T = gp_levels_next_for(&lv, d);
        size_t na = gp_levels_active(&lv, T, a), nb = gp_levels_active_scan(&lv, T, b);
        if (na != nb) { same = 0; break; }
        for (size_t k = 0; k < na; ++k) {
            if (a[k] != b[k]) same = 0;
            if (k && a[k] <= a[k - 1]) sorted = 0;
        }
        active_total += na;
        for (size_t k = 0; k < na; ++k) {
            lv.t_last[a[k]] = T;
            /* mostly stay, sometimes deeper or shallower by up to 3 */
            int w = lv.level[a[k]] + (int)(RND() % 7) - 3;
            if (RND() % 4 == 0) gp_levels_adjust(&lv, a[k], w, T);
        }
        lv.now = T;
        if (s == steps / 2) {          /* a direct write, announced */
            for (size_t i = 0; i < n; i += 7)
                if (lv.t_last[i] % gp_levels_span(&lv, max_level) == 0 && (lv.now % gp_levels_span(&lv, 0)) == 0)
                    lv.level[i] = (uint8_t)max_level;
            gp_levels_touched(&lv);
        }
        if (T % gp_levels_span(&lv, 0) == 0) {   /* a new dt_max: re-anchor, as the schemes' syncs do */
            for (size_t i = 0; i < n; ++i) lv.t_last[i] = T;
        }
        steps_done++;
    }
    ok(same && sorted, "n = %zu, %d levels: the filed active sets and deepest levels equal the scan's "
       "over %d block steps (%zu active particles in all), in ascending order",
       n, max_level + 1, steps_done, active_total);
    free(a); free(b);
    gp_levels_free(&lv);
}

/* The level of a step by its definition: the smallest l in 0..max_level
 * with dt_max / 2^l <= dt, else max_level (ldexp, one level at a time). */
static int level_by_definition(double dt_max, int max_level, double dt)
{
    if (dt == INFINITY) return 0;
    if (!(dt > 0.0) || !isfinite(dt)) return max_level;
    for (int l = 0; l <= max_level; ++l)
        if (ldexp(dt_max, -l) <= dt) return l;
    return max_level;
}

/* gp_levels_for_dt against the definition on steps around every level
 * boundary (the boundary itself and its neighbouring doubles) and at
 * random, for dt_max from 1e-300 to 1e300 and every max_level. */
static void levels_for_dt_agree(void)
{
    uint64_t r = 12345;
    long long checked = 0, wrong = 0;
    double first_dt = 0, first_max = 0;
    for (int e = -996; e <= 996; e += 12) {
        for (int ml = 0; ml <= GP_LEVELS_MAX; ml += 1 + (ml > 8) * 7) {
            gp_levels lv = { 0 };
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            double dt_max = ldexp(1.0 + (double)(r >> 11) * 0x1p-53, e);
            gp_levels_anchor(&lv, 0.0, dt_max, ml);
            for (int l = -2; l <= ml + 3; ++l) {
                double b = ldexp(dt_max, -l);
                double tries[5] = {b, nextafter(b, 0.0), nextafter(b, INFINITY),
                                   b * (0.5 + (double)((r >> 20) % 1000) / 1000.0), 0.0};
                r = r * 6364136223846793005ULL + 1442695040888963407ULL;
                tries[4] = ldexp(1.0 + (double)(r >> 11) * 0x1p-53, e - (int)((r >> 5) % 50));
                for (int k = 0; k < 5; ++k) {
                    int got = gp_levels_for_dt(&lv, tries[k]), want = level_by_definition(dt_max, ml, tries[k]);
                    checked++;
                    if (got != want && wrong++ == 0) { first_dt = tries[k]; first_max = dt_max; }
                }
            }
        }
    }
    ok(wrong == 0, "gp_levels_for_dt equals its definition on %lld steps (dt_max 1e-300 .. 1e300, every "
       "max_level, level boundaries and their neighbours)%s", checked, wrong ? ": not for all" : "");
    if (wrong) diag("%lld wrong; the first: dt %.17g with dt_max %.17g", wrong, first_dt, first_max);
}

int main(void)
{
    plan(20);
    levels_for_dt_agree();
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
    gp_levels_free(&lv);

    random_steps(1000, 6, 400, 1);
    random_steps(100000, 10, 300, 2);      /* large enough for the sorted path */
    random_steps(5, 3, 100, 3);
    return done_testing();
}
