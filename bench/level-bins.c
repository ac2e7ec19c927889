/* SPDX-License-Identifier: Apache-2.0 */
/*
 * level-bins.c — the host's bookkeeping of one block step: finding the
 * deepest occupied level and the active particles, with the particles
 * filed by level (integrators/core/timestep_levels.c) against the O(n) scans
 * that did it before (gp_levels_deepest_scan, gp_levels_active_scan), on
 * the same levels, in one run.
 *
 *   level-bins [LOG2_N] [STEPS]      (default 24 and 20)
 *
 * Levels: 1% of the particles on level 6, 9% on level 3, the rest on
 * level 1 (a fixed random draw), max_level 10; each step asks for the
 * particles active at a level-3 boundary (10% active) and at a level-6
 * one (1%). Prints milliseconds per step for each, and the one-off O(n)
 * filing that follows a synchronisation or a restart. Results in
 * bench/results/block-steps/raw/block-pays.md.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/timestep_levels.h"

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 24, steps = argc > 2 ? atoi(argv[2]) : 20;
    if (lg < 10 || lg > 30 || steps < 1) {
        fprintf(stderr, "usage: level-bins [LOG2_N 10..30] [STEPS >= 1]\n");
        return 2;
    }
    size_t n = (size_t)1 << lg;
    gp_levels lv = { 0 };
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!idx || gp_levels_alloc(&lv, n) != 0) {
        fprintf(stderr, "level-bins: no memory for 2^%d particles\n", lg);
        return 1;
    }
    gp_levels_anchor(&lv, 0.0, 1.0, 10);
    uint64_t r = 1;
    for (size_t i = 0; i < n; ++i) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned u = (unsigned)(r >> 33) % 1000;
        lv.level[i] = u < 10 ? 6 : u < 100 ? 3 : 1;
    }
    gp_levels_touched(&lv);
    /* ticks: span(6) = 16, span(3) = 128 of 1024 per dt_max */
    const uint64_t tick1 = 16, tick10 = 128;
    double t0 = omp_get_wtime();
    int d = gp_levels_deepest(&lv);
    double t_file = omp_get_wtime() - t0;
    size_t na1 = 0, na10 = 0, sa = 0;
    double t_bins1 = 0, t_bins10 = 0, t_scan1 = 0, t_scan10 = 0;
    for (int s = 0; s < steps; ++s) {
        t0 = omp_get_wtime();
        d += gp_levels_deepest(&lv);
        na1 = gp_levels_active(&lv, tick1, idx);
        t_bins1 += omp_get_wtime() - t0;
        t0 = omp_get_wtime();
        d += gp_levels_deepest_scan(&lv);
        sa = gp_levels_active_scan(&lv, tick1, idx);
        t_scan1 += omp_get_wtime() - t0;
        if (sa != na1) { fprintf(stderr, "level-bins: the two disagree\n"); return 1; }
        t0 = omp_get_wtime();
        d += gp_levels_deepest(&lv);
        na10 = gp_levels_active(&lv, tick10, idx);
        t_bins10 += omp_get_wtime() - t0;
        t0 = omp_get_wtime();
        d += gp_levels_deepest_scan(&lv);
        sa = gp_levels_active_scan(&lv, tick10, idx);
        t_scan10 += omp_get_wtime() - t0;
        if (sa != na10) { fprintf(stderr, "level-bins: the two disagree\n"); return 1; }
    }
    printf("# level-bins: n = 2^%d, %d steps, one thread (deepest level %d)\n", lg, steps, d / (4 * steps + 1));
    printf("# active\tfiled_ms\tscan_ms\tratio\n");
    printf("%zu (%.1f%%)\t%.3f\t%.3f\t%.1f\n", na1, 100.0 * (double)na1 / (double)n, 1e3 * t_bins1 / steps,
           1e3 * t_scan1 / steps, t_scan1 / t_bins1);
    printf("%zu (%.1f%%)\t%.3f\t%.3f\t%.1f\n", na10, 100.0 * (double)na10 / (double)n, 1e3 * t_bins10 / steps,
           1e3 * t_scan10 / steps, t_scan10 / t_bins10);
    printf("# filing all particles once (after a synchronisation or a restart): %.1f ms\n", 1e3 * t_file);
    gp_levels_free(&lv);
    free(idx);
    return 0;
}
