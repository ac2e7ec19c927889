/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_targets.c — the i-groups of a CPU force pass (cpu_targets.h), one
 * copy for cpu-tree and mpi-tree: the two must group alike for mpi-tree at
 * P = 1 to give cpu-tree's forces bit for bit.
 */
#include "octree/cpu_targets.h"

#include <omp.h>
#include <stdlib.h>

typedef struct rank_slot { uint32_t rank, k; } rank_slot;

static int by_rank(const void *a, const void *b)
{
    uint32_t x = ((const rank_slot *)a)->rank, y = ((const rank_slot *)b)->rank;
    return (x > y) - (x < y);
}

/* From this many active particles their ranks are radix-sorted
 * (gp_host_sort_keys: a few passes over them, on the threads from 64k),
 * below that compared: qsort wins for a hundred, radix from about a
 * thousand (bench/results/cpu-tree/raw/cpu-tree.md, "ACTIVE_RADIX_MIN"). */
#define ACTIVE_RADIX_MIN 256
/* ... and the gather of their positions runs on the threads */
#define ACTIVE_GATHER_PARALLEL_MIN 65536

int oct_active_groups(const oct_tree *t, size_t na, const uint32_t *active, int nthreads,
                      uint32_t *tix, size_t *slot, double *x, double *y, double *z, uint32_t *rb,
                      uint32_t *rc, uint32_t *nruns)
{
    /* the tree's key order of the active particles: ranks (keys) with their
     * slots in active[] (perm); ranks are distinct, so both sorts give the
     * same order */
    uint64_t *keys = malloc((na ? na : 1) * sizeof *keys);
    uint32_t *perm = malloc((na ? na : 1) * sizeof *perm);
    if (!keys || !perm) { free(keys); free(perm); return -1; }
    int failed = 0;
    if (na >= ACTIVE_RADIX_MIN) {
        for (size_t k = 0; k < na; k++) { keys[k] = t->rank[active[k]]; perm[k] = (uint32_t)k; }
        int prev = omp_get_max_threads();
        omp_set_num_threads(nthreads);
        failed = gp_host_sort_keys(na, keys, perm) != 0;
        omp_set_num_threads(prev);
    } else {
        rank_slot rs[ACTIVE_RADIX_MIN];
        for (size_t k = 0; k < na; k++) rs[k] = (rank_slot){ t->rank[active[k]], (uint32_t)k };
        qsort(rs, na, sizeof *rs, by_rank);
        for (size_t u = 0; u < na; u++) { keys[u] = rs[u].rank; perm[u] = rs[u].k; }
    }
    if (failed) { free(keys); free(perm); return -1; }
#pragma omp parallel for num_threads(nthreads) schedule(static) if (na >= ACTIVE_GATHER_PARALLEL_MIN)
    for (size_t u = 0; u < na; u++) {
        uint32_t i = (uint32_t)keys[u];
        tix[u] = i;
        slot[u] = perm[u];
        x[u] = t->x[i]; y[u] = t->y[i]; z[u] = t->z[i];
    }
    free(keys); free(perm);
    /* the active part of each tree group */
    uint32_t nr = 0;
    for (size_t u = 0; u < na;) {
        uint32_t g = t->group_of[tix[u]];
        size_t e = u + 1;
        while (e < na && t->group_of[tix[e]] == g) e++;
        rb[nr] = (uint32_t)u;
        rc[nr] = (uint32_t)(e - u);
        nr++;
        u = e;
    }
    *nruns = nr;
    return 0;
}

int oct_field_groups(size_t m, const double *points, gp_key_kind kind, const double lo[3],
                     double inv_cell, uint32_t G, uint32_t *perm, double *x, double *y,
                     double *z, uint32_t *nruns, uint32_t **rb, uint32_t **rc)
{
    uint64_t *keys = malloc(m * sizeof *keys);
    if (!keys) return -1;
    gp_host_make_keys(m, points, points + 1, points + 2, 3, kind, lo, inv_cell, keys);
    for (size_t i = 0; i < m; i++) perm[i] = (uint32_t)i;
    int sorted = gp_host_sort_keys(m, keys, perm);
    free(keys);
    if (sorted) return -3;
    for (size_t i = 0; i < m; i++) {
        const double *q = &points[3 * (size_t)perm[i]];
        x[i] = q[0]; y[i] = q[1]; z[i] = q[2];
    }
    uint32_t n = (uint32_t)((m + G - 1) / G);
    for (uint32_t r = 0; r < n; r++) {
        (*rb)[r] = r * G;
        (*rc)[r] = (uint32_t)(m - (*rb)[r] < G ? m - (*rb)[r] : G);
    }
    *nruns = n;
    return oct_split_loose_groups(x, y, z, nruns, rb, rc) ? -2 : 0;
}

void oct_whole_group_sphere(const oct_tree *t, uint32_t i, double centre[3], double *radius)
{
    const uint32_t g = t->group_of[i], b = t->gbegin[g];
    gp_group_sphere(t->x + b, t->y + b, t->z + b, NULL, 0, t->gcount[g], centre, radius);
}
