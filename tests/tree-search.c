/* SPDX-License-Identifier: Apache-2.0 */
/* tree-search: the exact neighbour searches of plugin/octree/tree_search.c
 * (nearest source, sources within a radius) give what brute force gives,
 * ties to the lower index, self skipped, massless particles not sources,
 * on clustered points, a lattice full of equal distances, and after a
 * refit that moved every point. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "octree/tree_search.h"

static uint64_t rs = 0x9E3779B97F4A7C15u;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

/* pid[k]: particle index of the tree's k-th source. */
static uint32_t *source_pids(const oct_tree *t)
{
    uint32_t *pid = malloc((t->nsrc ? t->nsrc : 1) * sizeof *pid);
    for (uint32_t k = 0; k < t->nsrc; k++) pid[k] = t->order[t->sid[k]];
    return pid;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Every particle as the query point: nearest and within r against brute
 * force. Returns the number of disagreements. */
static int compare(const oct_tree *t, size_t n, const double *pos, const double *mass, double r)
{
    uint32_t *pid = source_pids(t), *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const double *x = &pos[3 * i];
        uint32_t nn, bn = UINT32_MAX;
        double d2, bd2 = HUGE_VAL;
        oct_nearest(t, pid, x, (uint32_t)i, &nn, &d2);
        size_t nw = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i || !(mass[j] > 0)) continue;
            double dx = pos[3 * j] - x[0], dy = pos[3 * j + 1] - x[1], dz = pos[3 * j + 2] - x[2];
            double e2 = dx * dx + dy * dy + dz * dz;
            if (e2 < bd2) { bd2 = e2; bn = (uint32_t)j; }
            if (e2 < r * r) want[nw++] = (uint32_t)j;
        }
        if (nn != bn || d2 != bd2) bad++;
        size_t ng = oct_within(t, pid, x, r * r, (uint32_t)i, got, n);
        if (ng != nw) { bad++; continue; }
        qsort(got, ng, sizeof *got, cmp_u32);
        if (ng && memcmp(got, want, ng * sizeof *got)) bad++;
        /* too little room: the count still comes back, the room untouched beyond cap */
        if (nw > 1) {
            uint32_t small[1] = { 0xdeadbeef };
            if (oct_within(t, pid, x, r * r, (uint32_t)i, small, 0) != nw || small[0] != 0xdeadbeef) bad++;
        }
    }
    free(pid); free(got); free(want);
    return bad;
}

int main(void)
{
    plan(4);
    const size_t n = 3000;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    /* a Plummer-like clump plus a uniform background; every 10th massless */
    for (size_t i = 0; i < n; i++) {
        double s = i % 3 ? 0.05 : 1.0;
        for (int a = 0; a < 3; a++) pos[3 * i + a] = s * (2 * urand() - 1);
        mass[i] = i % 10 == 7 ? 0.0 : 1.0 / (double)n;
    }
    oct_tree t = { 0 };
    if (oct_tree_build(&t, n, pos, mass, 32, 8, GP_KEY_PEANO_HILBERT)) bail("out of memory");
    is_int(compare(&t, n, pos, mass, 0.02), 0, "clustered points: nearest and within r = 0.02 as brute force, "
           "self skipped, massless particles not sources");
    /* a lattice: six neighbours at exactly the same distance, ties to the lower index */
    const size_t side = 8, nl = side * side * side;
    double *lat = malloc(3 * nl * sizeof *lat), *lm = malloc(nl * sizeof *lm);
    for (size_t i = 0; i < nl; i++) {
        lat[3 * i] = (double)(i % side); lat[3 * i + 1] = (double)(i / side % side);
        lat[3 * i + 2] = (double)(i / side / side);
        lm[i] = 1.0;
    }
    oct_tree tl = { 0 };
    if (oct_tree_build(&tl, nl, lat, lm, 16, 4, GP_KEY_MORTON)) bail("out of memory");
    is_int(compare(&tl, nl, lat, lm, 1.5), 0, "a lattice: equal distances go to the lower index; "
           "within 1.5 the 6-18 lattice neighbours");
    /* every point moved: a refit keeps the boxes tight around the new positions */
    for (size_t i = 0; i < 3 * n; i++) pos[i] += 0.01 * (2 * urand() - 1);
    if (oct_tree_refit(&t, pos, NULL, 1)) bail("refit failed");
    is_int(compare(&t, n, pos, mass, 0.02), 0, "after a refit of moved points: still exact");
    /* one source only (itself): nothing found */
    double one[3] = { 0, 0, 0 }, m1[1] = { 1 };
    oct_tree t1 = { 0 };
    if (oct_tree_build(&t1, 1, one, m1, 32, 8, GP_KEY_PEANO_HILBERT)) bail("out of memory");
    uint32_t pid1[1] = { 0 }, nn;
    double d2;
    oct_nearest(&t1, pid1, one, 0, &nn, &d2);
    ok(nn == UINT32_MAX && d2 == HUGE_VAL && oct_within(&t1, pid1, one, 1.0, 0, NULL, 0) == 0,
       "a lone particle has no nearest source and no neighbours");
    oct_tree_free(&t); oct_tree_free(&tl); oct_tree_free(&t1);
    free(pos); free(mass); free(lat); free(lm);
    return done_testing();
}
