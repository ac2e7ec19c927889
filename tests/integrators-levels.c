/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-levels.c — the block time-step bookkeeping rules
 * (integrators/timestep_levels.c): level from a step, next block time,
 * active sets, and the level-change rules (deeper at once, shallower only
 * where the levels synchronise).
 */
#include "tap.h"
#include "timestep_levels.h"

int main(void)
{
    plan(16);
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
    return done_testing();
}
