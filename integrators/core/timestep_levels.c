/* SPDX-License-Identifier: Apache-2.0 */
/* timestep_levels.c — power-of-two level bookkeeping (see the header).
 * The O(n) scans run with OpenMP; their results (a maximum, an ordered
 * index list, counts) do not depend on the thread count.
 *
 * A block step with few active particles must not pay O(n): the particles
 * are kept filed by level (gp_level_bins, Gadget's "time bins" made
 * contiguous): bin[] holds every particle index, level 0's first, so the
 * particles active at a tick — every level from some l down — are one
 * run at the end of bin[], and the deepest occupied level is the last
 * non-empty run. A level change is a swap across each run boundary it
 * crosses. gp_levels_adjust (called from parallel loops) only notes the
 * particles it moved; they are refiled, in O(moved), when the bins are
 * next read. The run of active particles is radix-sorted into ascending
 * index order, so callers see exactly what the O(n) scan gives (the 1.0
 * force path relies on ascending order). Anything else that writes
 * level[] calls gp_levels_touched, and the bins are rebuilt (O(n)) at their
 * next use. */
#include "timestep_levels.h"
#include "par_min.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct gp_level_bins {
    size_t n;                        /* particles the arrays hold room for  */
    int valid;                       /* 0: rebuild before the next use      */
    size_t nmoved;                   /* entries in moved[] (atomic adds)    */
    uint32_t *bin;                   /* particle indices, by level          */
    uint32_t *where;                 /* where[i]: i's position in bin[]     */
    uint8_t *filed;                  /* filed[i]: the level i is filed under */
    uint32_t *moved;                 /* adjusted since the last refile; also
                                        the radix sort's scratch            */
    size_t start[GP_LEVELS_MAX + 2]; /* level l: bin[start[l] .. start[l+1]) */
};

static void bins_free(gp_level_bins *b)
{
    if (!b) return;
    free(b->bin); free(b->where); free(b->filed); free(b->moved);
    free(b);
}

int gp_levels_alloc(gp_levels *lv, size_t n)
{
    uint8_t *level = realloc(lv->level, n ? n : 1);
    if (!level) return -1;
    lv->level = level;
    uint64_t *t_last = realloc(lv->t_last, (n ? n : 1) * sizeof *t_last);
    if (!t_last) return -1;
    lv->t_last = t_last;
    lv->n = n;
    /* the bins are allocated at their first use: without them (out of
     * memory) every call takes the O(n) scans instead */
    bins_free(lv->bins);
    lv->bins = NULL;
    return 0;
}

void gp_levels_free(gp_levels *lv)
{
    free(lv->level);
    free(lv->t_last);
    bins_free(lv->bins);
    memset(lv, 0, sizeof *lv);
}

void gp_levels_touched(gp_levels *lv)
{
    if (lv->bins) lv->bins->valid = 0;
}

/* The bins, current for lv->level (rebuilt in O(n) when touched), or NULL
 * when there is no memory for them. */
static gp_level_bins *bins_current(const gp_levels *lv_const)
{
    gp_levels *lv = (gp_levels *)lv_const;   /* the bins are a cache */
    gp_level_bins *b = lv->bins;
    const size_t n = lv->n;
    if (n == 0 || n > UINT32_MAX) return NULL;
    if (!b || b->n != n) {
        bins_free(b);
        lv->bins = b = calloc(1, sizeof *b);
        if (!b) return NULL;
        b->n = n;
        b->bin = malloc(n * sizeof *b->bin);
        b->where = malloc(n * sizeof *b->where);
        b->filed = malloc(n);
        b->moved = malloc(n * sizeof *b->moved);
        if (!b->bin || !b->where || !b->filed || !b->moved) {
            bins_free(b);
            lv->bins = NULL;
            return NULL;
        }
    }
    if (!b->valid) {
        /* counting sort by level, stable: index order within each level */
        size_t count[GP_LEVELS_MAX + 2] = { 0 };
        for (size_t i = 0; i < n; ++i) count[lv->level[i] <= GP_LEVELS_MAX ? lv->level[i] : GP_LEVELS_MAX]++;
        size_t at = 0;
        for (int l = 0; l <= GP_LEVELS_MAX; ++l) { b->start[l] = at; at += count[l]; }
        b->start[GP_LEVELS_MAX + 1] = at;
        size_t next[GP_LEVELS_MAX + 1];
        memcpy(next, b->start, sizeof next);
        for (size_t i = 0; i < n; ++i) {
            int l = lv->level[i] <= GP_LEVELS_MAX ? lv->level[i] : GP_LEVELS_MAX;
            b->where[i] = (uint32_t)next[l];
            b->bin[next[l]++] = (uint32_t)i;
            b->filed[i] = (uint8_t)l;
        }
        b->nmoved = 0;
        b->valid = 1;
        return b;
    }
    /* refile what gp_levels_adjust moved: one swap per boundary crossed */
    for (size_t k = 0; k < b->nmoved; ++k) {
        uint32_t i = b->moved[k];
        int to = lv->level[i];
        while (b->filed[i] < to) {      /* down: swap to the end of its run */
            int l = b->filed[i];
            size_t last = b->start[l + 1] - 1;
            uint32_t j = b->bin[last];
            b->bin[b->where[i]] = j; b->where[j] = b->where[i];
            b->bin[last] = i; b->where[i] = (uint32_t)last;
            b->start[l + 1] = last;
            b->filed[i] = (uint8_t)(l + 1);
        }
        while (b->filed[i] > to) {      /* up: swap to the front of its run */
            int l = b->filed[i];
            size_t first = b->start[l];
            uint32_t j = b->bin[first];
            b->bin[b->where[i]] = j; b->where[j] = b->where[i];
            b->bin[first] = i; b->where[i] = (uint32_t)first;
            b->start[l] = first + 1;
            b->filed[i] = (uint8_t)(l - 1);
        }
    }
    b->nmoved = 0;
    return b;
}

/* x[0 .. m) sorted ascending (LSD radix, 11-bit digits, as many passes as
 * indices below n need), scratch tmp[m]. */
static void sort_indices(uint32_t *x, uint32_t *tmp, size_t m, size_t n)
{
    int passes = 0;
    for (size_t top = n ? n - 1 : 0; top; top >>= 11) passes++;
    uint32_t *src = x, *dst = tmp;
    for (int p = 0; p < passes; ++p) {
        const int sh = 11 * p;
        size_t count[2049] = { 0 };
        for (size_t k = 0; k < m; ++k) count[((src[k] >> sh) & 2047) + 1]++;
        for (int d = 0; d < 2048; ++d) count[d + 1] += count[d];
        for (size_t k = 0; k < m; ++k) dst[count[(src[k] >> sh) & 2047]++] = src[k];
        uint32_t *t = src; src = dst; dst = t;
    }
    if (src != x) memcpy(x, src, m * sizeof *x);
}

void gp_levels_anchor(gp_levels *lv, double t0, double dt_max, int max_level)
{
    if (max_level < 0) max_level = 0;
    if (max_level > GP_LEVELS_MAX) max_level = GP_LEVELS_MAX;
    lv->t0 = t0;
    lv->dt_max = dt_max;
    lv->max_level = max_level;
    lv->now = 0;
    gp_levels_touched(lv);
    if (!lv->n) return;   /* no arrays yet: memset must not see their NULL */
    memset(lv->level, 0, lv->n);
    memset(lv->t_last, 0, lv->n * sizeof *lv->t_last);
}

/* dt_max / 2^l for 0 <= l <= GP_LEVELS_MAX + 1: a multiplication by a
 * power of two, rounded as ldexp rounds (exact unless it leaves the normal
 * range) */
static double level_dt(double dt_max, int l)
{
    uint64_t bits = (uint64_t)(1023 - l) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return dt_max * scale;
}

int gp_levels_for_dt(const gp_levels *lv, double dt)
{
    if (!(dt > 0.0) || !isfinite(dt)) return dt == INFINITY ? 0 : lv->max_level;
    if (dt >= lv->dt_max) return 0;
    /* smallest l with dt_max / 2^l <= dt: the difference of the exponents
     * (>= 0 as dt < dt_max) is that l or one less (called per particle per
     * step: no log2) */
    int l = ilogb(lv->dt_max) - ilogb(dt);
    if (l > lv->max_level + 1) return lv->max_level;
    while (l < lv->max_level && level_dt(lv->dt_max, l) > dt) ++l;
    return l > lv->max_level ? lv->max_level : l;
}

int gp_levels_deepest(const gp_levels *lv)
{
    const gp_level_bins *b = bins_current(lv);
    if (b) {
        for (int l = GP_LEVELS_MAX; l > 0; --l)
            if (b->start[l + 1] > b->start[l]) return l;
        return 0;
    }
    return gp_levels_deepest_scan(lv);
}

int gp_levels_deepest_scan(const gp_levels *lv)
{
    int deepest = 0;
    const long long n = (long long)lv->n;
#pragma omp parallel for schedule(static) reduction(max : deepest) if (n > GP_PAR_SCAN_MIN)
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
    const size_t n = lv->n;
    const gp_level_bins *bins = bins_current(lv);
    if (bins && first <= GP_LEVELS_MAX) {
        size_t from = bins->start[first], na = n - from;
        /* a large active set: the ordered scan costs no more than the
         * sort */
        if (na <= n / 8) {
            memcpy(idx, bins->bin + from, na * sizeof *idx);
            sort_indices(idx, bins->moved, na, n);
            return na;
        }
    }
    return gp_levels_active_scan(lv, tick, idx);
}

size_t gp_levels_active_scan(const gp_levels *lv, uint64_t tick, uint32_t *idx)
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

/* Notes that particle i's level changed, for the next refile (several
 * threads may call this for distinct particles). A particle noted more
 * often than the room allows makes the bins stale instead. */
static void note_moved(gp_levels *lv, size_t i)
{
    gp_level_bins *b = lv->bins;
    if (!b || !b->valid) return;
    size_t k = __atomic_fetch_add(&b->nmoved, 1, __ATOMIC_RELAXED);
    if (k < b->n) b->moved[k] = (uint32_t)i;
    else __atomic_store_n(&b->valid, 0, __ATOMIC_RELAXED);
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
    if (lv->level[i] != l) note_moved(lv, i);
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
