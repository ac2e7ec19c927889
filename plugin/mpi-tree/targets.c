/* SPDX-License-Identifier: Apache-2.0 */
/*
 * targets.c — a rank's i-groups for one force pass (targets.h): cpu-tree's
 * groups (plugin/octree/cpu_targets.c), their spheres, and the halving of
 * wide groups that only a distributed walk needs (a wide group makes every
 * other rank's LET for this one hold nearly everything).
 */
#include "targets.h"

#include <stdlib.h>
#include <string.h>

#include "octree/cpu_targets.h"
#include "octree/moments.h"

void mpi_tree_targets_free(mpi_tree_targets *T)
{
    for (int k = 0; k < 8; k++) free(T->owned[k]);
    memset(T, 0, sizeof *T);
}

/* Allocates the per-target and per-run arrays for m targets and nruns runs. */
static int targets_alloc(mpi_tree_targets *T, size_t m, uint32_t nruns)
{
    size_t mm = m ? m : 1, nr = nruns ? nruns : 1;
    T->x = T->owned[0] = malloc(3 * mm * sizeof *T->x);
    T->self = T->owned[1] = malloc(mm * sizeof *T->self);
    T->slot = T->owned[2] = malloc(mm * sizeof *T->slot);
    T->centre = T->owned[3] = malloc(4 * nr * sizeof *T->centre);
    if (!T->rb) T->rb = T->owned[4] = malloc(nr * sizeof *T->rb);
    if (!T->rc) T->rc = T->owned[5] = malloc(nr * sizeof *T->rc);
    if (!T->x || !T->self || !T->slot || !T->centre || !T->rb || !T->rc) return -1;
    T->y = T->x + mm;
    T->z = T->x + 2 * mm;
    T->radius = T->centre + 3 * nr;
    T->nruns = nruns;
    return 0;
}

/* Spheres of the runs (as cpu-tree's force_pass makes them). */
static void targets_spheres(mpi_tree_targets *T)
{
#pragma omp parallel for schedule(static) if (T->nruns > 256)
    for (uint32_t r = 0; r < T->nruns; r++)
        gp_group_sphere(T->x, T->y, T->z, NULL, T->rb[r], T->rc[r], &T->centre[3 * r],
                        &T->radius[r]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* oct_split_runs' test for split_wide: more than one target and a sphere
 * wider than the limit *ctx. */
static int wider_than(const double *x, const double *y, const double *z, uint32_t b, uint32_t c,
                      const void *ctx)
{
    double centre[3], rad;
    if (c < 2) return 0;
    gp_group_sphere(x, y, z, NULL, b, c, centre, &rad);
    return rad > *(const double *)ctx;
}

/* Wide groups: a group-size leaf of a nearly empty cube (the outskirts of
 * a halo) can have a sphere as large as the system, which makes its walk
 * open everything near it, and makes every other rank's LET for this rank
 * hold nearly all of that rank's particles, whatever the decomposition.
 * Such runs are halved along the curve until each piece is within `wide`
 * (the wide_split parameter) times the median group radius, or a single
 * target. (cpu-tree keeps them whole; its oct_split_loose_groups splits
 * only far looser ones.) Smaller spheres accept more cells, so forces
 * come closer to the MAC's nominal error (cpu-tree's wide groups are
 * needlessly exact) at fewer interactions. Deterministic: depends on the
 * targets alone. Returns 0 or -1 (memory). */
static int split_wide(mpi_tree_targets *T, double wide)
{
    uint32_t n = T->nruns;
    if (n < 2 || !(wide > 0)) return 0;
    double *r = malloc(n * sizeof *r);
    if (!r) return -1;
    memcpy(r, T->radius, n * sizeof *r);
    qsort(r, n, sizeof *r, cmp_double);
    double lim = wide * r[n / 2];
    free(r);
    uint32_t nwide = 0;
    for (uint32_t k = 0; k < n; k++) nwide += T->radius[k] > lim && T->rc[k] > 1;
    if (!nwide || !(lim > 0)) return 0;
    uint32_t out, *nb, *nc;
    if (oct_split_runs(T->x, T->y, T->z, n, T->rb, T->rc, wider_than, &lim, &out, &nb, &nc))
        return -1;
    double *cr = malloc(4 * (size_t)out * sizeof *cr);
    if (!cr) { free(nb); free(nc); return -1; }
    free(T->owned[3]); free(T->owned[4]); free(T->owned[5]);
    T->rb = T->owned[4] = nb;
    T->rc = T->owned[5] = nc;
    T->centre = T->owned[3] = cr;
    T->radius = cr + 3 * (size_t)out;
    T->nruns = out;
    targets_spheres(T);
    return 0;
}

int mpi_tree_targets_forces(const oct_tree *t, int none_active, size_t na, const uint32_t *active,
                            double wide, int whole, int nthreads, mpi_tree_targets *T)
{
    memset(T, 0, sizeof *T);
    if (none_active) return targets_alloc(T, 0, 0);
    if (!active) {
        size_t n = t->n;
        T->rb = t->gbegin;
        T->rc = t->gcount;
        if (targets_alloc(T, n, t->ngroups)) return -1;
        for (size_t u = 0; u < n; u++) {
            T->x[u] = t->x[u]; T->y[u] = t->y[u]; T->z[u] = t->z[u];
            T->self[u] = (int32_t)u;
            T->slot[u] = t->order[u];
        }
    } else {
        T->rb = T->owned[4] = malloc((na ? na : 1) * sizeof *T->rb);
        T->rc = T->owned[5] = malloc((na ? na : 1) * sizeof *T->rc);
        if (targets_alloc(T, na, (uint32_t)na)) return -1;
        /* self holds the key-sorted index (< 2^31), as the shared code's tix */
        if (oct_active_groups(t, na, active, nthreads, (uint32_t *)T->self, T->slot, T->x, T->y,
                              T->z, T->rb, T->rc, &T->nruns))
            return -1;
    }
    if (whole && active) {   /* each run with its tree group's sphere (cpu-tree's rule) */
#pragma omp parallel for schedule(static) if (T->nruns > 256)
        for (uint32_t r = 0; r < T->nruns; r++)
            oct_whole_group_sphere(t, (uint32_t)T->self[T->rb[r]], &T->centre[3 * r],
                                   &T->radius[r]);
        return 0;
    }
    targets_spheres(T);
    return whole ? 0 : split_wide(T, wide);
}

int mpi_tree_targets_field(const oct_tree *t, size_t m, const double *points, double wide,
                           mpi_tree_targets *T)
{
    memset(T, 0, sizeof *T);
    if (m == 0) return targets_alloc(T, 0, 0);
    uint32_t *perm = malloc(m * sizeof *perm);
    const uint32_t G = t->max_group ? t->max_group : 64;
    uint32_t nruns = (uint32_t)((m + G - 1) / G);
    int rc = -1;
    if (perm && !targets_alloc(T, m, nruns)) {
        /* the points' own cube, not the local tree's: points far outside
         * this rank's particles would otherwise clamp to its faces and form
         * wide groups, whose float-relative coordinates lose precision */
        double lo[3], inv_cell;
        gp_host_root_cube(m, points, points + 1, points + 2, 3, lo, &inv_cell);
        /* the split reallocates the run arrays: hand them over */
        T->owned[4] = T->owned[5] = NULL;
        rc = oct_field_groups(m, points, t->keys, lo, inv_cell, G, perm, T->x, T->y, T->z,
                              &T->nruns, &T->rb, &T->rc) ? -1 : 0;
        T->owned[4] = T->rb;
        T->owned[5] = T->rc;
        for (size_t i = 0; i < m && !rc; i++) {
            T->self[i] = -1;
            T->slot[i] = perm[i];
        }
        if (!rc) {
            free(T->centre);
            T->centre = T->owned[3] = malloc(4 * (size_t)(T->nruns ? T->nruns : 1) * sizeof *T->centre);
            if (!T->centre) rc = -1;
            else T->radius = T->centre + 3 * (size_t)T->nruns;
        }
    }
    free(perm);
    if (!rc) targets_spheres(T);
    if (!rc) rc = split_wide(T, wide);
    return rc;
}
