/* SPDX-License-Identifier: Apache-2.0 */
/* timestep_levels.c — power-of-two level bookkeeping (see the header).
 * The O(n) scans run with OpenMP; their results (a maximum, an ordered
 * index list, counts) do not depend on the thread count. */
#include "timestep_levels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gp_levels_alloc(gp_levels *lv, size_t n)
{
    uint8_t *level = realloc(lv->level, n ? n : 1);
    if (!level) return -1;
    lv->level = level;
    uint64_t *t_last = realloc(lv->t_last, (n ? n : 1) * sizeof *t_last);
    if (!t_last) return -1;
    lv->t_last = t_last;
    lv->n = n;
    return 0;
}

void gp_levels_free(gp_levels *lv)
{
    free(lv->level);
    free(lv->t_last);
    memset(lv, 0, sizeof *lv);
}

void gp_levels_anchor(gp_levels *lv, double t0, double dt_max, int max_level)
{
    if (max_level < 0) max_level = 0;
    if (max_level > GP_LEVELS_MAX) max_level = GP_LEVELS_MAX;
    lv->t0 = t0;
    lv->dt_max = dt_max;
    lv->max_level = max_level;
    lv->now = 0;
    memset(lv->level, 0, lv->n);
    memset(lv->t_last, 0, lv->n * sizeof *lv->t_last);
}

int gp_levels_for_dt(const gp_levels *lv, double dt)
{
    if (!(dt > 0.0) || !isfinite(dt)) return dt == INFINITY ? 0 : lv->max_level;
    if (dt >= lv->dt_max) return 0;
    /* smallest l with dt_max / 2^l <= dt */
    double r = ceil(log2(lv->dt_max / dt));
    if (!(r <= lv->max_level + 1)) return lv->max_level;   /* also a ratio that overflows to inf */
    int l = (int)r;
    while (l > 0 && ldexp(lv->dt_max, -(l - 1)) <= dt) --l;   /* log2 rounding */
    while (l < lv->max_level && ldexp(lv->dt_max, -l) > dt) ++l;
    return l > lv->max_level ? lv->max_level : l;
}

int gp_levels_deepest(const gp_levels *lv)
{
    int deepest = 0;
    const long long n = (long long)lv->n;
#pragma omp parallel for schedule(static) reduction(max : deepest) if (n > 65536)
    for (long long i = 0; i < n; ++i)
        if (lv->level[i] > deepest) deepest = lv->level[i];
    return deepest;
}

uint64_t gp_levels_next_for(const gp_levels *lv, int deepest)
{
    uint64_t span = gp_levels_span(lv, deepest);
    return (lv->now / span + 1) * span;
}

int gp_levels_first_active(const gp_levels *lv, uint64_t tick)
{
    if (tick == 0) return 0;
    int tz = __builtin_ctzll(tick);
    int first = lv->max_level - tz;
    return first < 0 ? 0 : first;
}

enum { ACTIVE_BLOCK = 65536, ACTIVE_MAX_BLOCKS = 8192 };  /* beyond 2^29: one thread */

size_t gp_levels_active(const gp_levels *lv, uint64_t tick, uint32_t *idx)
{
    int first = gp_levels_first_active(lv, tick);
    const size_t n = lv->n, nb = (n + ACTIVE_BLOCK - 1) / ACTIVE_BLOCK;
    size_t counts[ACTIVE_MAX_BLOCKS];
    if (nb < 2 || nb > ACTIVE_MAX_BLOCKS) {
        size_t na = 0;
        for (size_t i = 0; i < n; ++i)
            if (lv->level[i] >= first) idx[na++] = (uint32_t)i;
        return na;
    }
    /* in index order: count per fixed block, offsets, then fill */
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < (long long)nb; ++b) {
        size_t i0 = (size_t)b * ACTIVE_BLOCK, i1 = i0 + ACTIVE_BLOCK < n ? i0 + ACTIVE_BLOCK : n, c = 0;
        for (size_t i = i0; i < i1; ++i) c += lv->level[i] >= first;
        counts[b] = c;
    }
    size_t na = 0;
    for (size_t b = 0; b < nb; ++b) { size_t c = counts[b]; counts[b] = na; na += c; }
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < (long long)nb; ++b) {
        size_t i0 = (size_t)b * ACTIVE_BLOCK, i1 = i0 + ACTIVE_BLOCK < n ? i0 + ACTIVE_BLOCK : n;
        size_t k = counts[b];
        for (size_t i = i0; i < i1; ++i)
            if (lv->level[i] >= first) idx[k++] = (uint32_t)i;
    }
    return na;
}

int gp_levels_adjust(gp_levels *lv, size_t i, int wanted, uint64_t tick)
{
    int l = lv->level[i];
    if (wanted < 0) wanted = 0;
    if (wanted > lv->max_level) wanted = lv->max_level;
    if (wanted > l) {
        l = wanted;                       /* smaller step: always allowed */
    } else {
        while (l > wanted && tick % gp_levels_span(lv, l - 1) == 0)
            --l;                          /* larger step: only in sync */
    }
    lv->level[i] = (uint8_t)l;
    return l;
}

size_t gp_levels_counts(const gp_levels *lv, uint64_t *counts, size_t max_count)
{
    if (counts && max_count) memset(counts, 0, max_count * sizeof *counts);
    size_t used = 0;
    for (size_t i = 0; i < lv->n; ++i) {
        size_t l = lv->level[i];
        if (l + 1 > used) used = l + 1;
        if (counts && l < max_count) ++counts[l];
    }
    return used;
}
