/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree-groups.c — the i-groups of a CPU tree build (tree_state.c).
 *
 * - oct_runs_of_tree over a tree of smaller leaves gives the runs of a
 *   tree built with group-size leaves (oct_make_runs) exactly: the build
 *   takes its groups from the source tree that way, without a second tree.
 * - oct_tree_build's groups, ranks and scaled masses are the same on 1-4
 *   threads (the index passes and the loose-group test run on the threads
 *   from 128k particles), every particle is in exactly one group, and no
 *   group is larger than a group.
 * - oct_active_groups (cpu_targets.c) puts an active subset in key order
 *   with each target's slot, and cuts it at the tree groups, for subsets
 *   sorted by comparison, by a scan of all ranks, and by radix (from 2048,
 *   threaded from 64k), on 1-4 threads.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "octree/cpu_targets.h"
#include "octree/tree_state.h"

static uint64_t rs = 0x9E3779B97F4A7C15u;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

/* A centrally concentrated cloud (the galaxy's dense centre in small). */
static void cloud(size_t n, double *pos, double *mass)
{
    for (size_t i = 0; i < n; i++) {
        double r = pow(urand(), 3.0);
        for (int a = 0; a < 3; a++) pos[3 * i + a] = r * (urand() - 0.5);
        mass[i] = 1.0 / (double)n;
    }
}

/* Runs from a tree of leaf size `leaf` against runs from a tree of
 * group-size leaves, over the same sorted keys. Returns problems found. */
static int runs_match(const char *what, size_t n, const double *pos, uint32_t leaf, uint32_t group)
{
    double lo[3], inv;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *perm = malloc(n * sizeof *perm);
    gp_host_root_cube(n, pos, pos + 1, pos + 2, 3, lo, &inv);
    gp_host_make_keys(n, pos, pos + 1, pos + 2, 3, GP_KEY_PEANO_HILBERT, lo, inv, keys);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    int bad = gp_host_sort_keys(n, keys, perm) != 0;
    uint32_t na = 0, nb = 0, *ba = NULL, *ca = NULL, *bb = NULL, *cb = NULL;
    bad += oct_make_runs(keys, (uint32_t)n, group, &na, &ba, &ca) != 0;
    gp_host_tree tr = { 0 };
    bad += gp_host_tree_build(&tr, keys, (uint32_t)n, leaf) != 0;
    bad += oct_runs_of_tree(&tr, group, &nb, &bb, &cb) != 0;
    if (!bad) {
        bad += na != nb;
        for (uint32_t g = 0; g < na && g < nb; g++) bad += ba[g] != bb[g] || ca[g] != cb[g];
    }
    diag("%s: %u runs from the group tree, %u from the tree of leaf size %u", what, na, nb, leaf);
    gp_host_tree_free(&tr);
    free(keys); free(perm); free(ba); free(ca); free(bb); free(cb);
    return bad;
}

/* Whether group [b, b + c) of the key-sorted points is loose: its sphere
 * (about its box centre) over 1e4 times the smallest nonzero step between
 * consecutive points (tree_state.h, oct_split_loose_groups). */
static int loose(const oct_tree *t, uint32_t b, uint32_t c)
{
    double lo[3] = { t->x[b], t->y[b], t->z[b] }, hi[3] = { t->x[b], t->y[b], t->z[b] };
    double s2 = HUGE_VAL, r2 = 0;
    for (uint32_t i = b; i < b + c; i++) {
        double p[3] = { t->x[i], t->y[i], t->z[i] };
        for (int a = 0; a < 3; a++) { lo[a] = fmin(lo[a], p[a]); hi[a] = fmax(hi[a], p[a]); }
        if (i > b) {
            double dx = p[0] - t->x[i - 1], dy = p[1] - t->y[i - 1], dz = p[2] - t->z[i - 1];
            double d2 = dx * dx + dy * dy + dz * dz;
            if (d2 > 0 && d2 < s2) s2 = d2;
        }
    }
    for (uint32_t i = b; i < b + c; i++) {
        double dx = t->x[i] - 0.5 * (lo[0] + hi[0]), dy = t->y[i] - 0.5 * (lo[1] + hi[1]),
               dz = t->z[i] - 0.5 * (lo[2] + hi[2]);
        r2 = fmax(r2, dx * dx + dy * dy + dz * dz);
    }
    return c > 1 && s2 < HUGE_VAL && r2 > 1e8 * s2 * (1 + 1e-9);
}

/* oct_tree_build on 1..4 threads: groups, ranks and source masses the same
 * as on one thread; the groups a partition of the key order, none larger
 * than group, none loose. Returns problems found. */
static int build_threads(size_t n, const double *pos, const double *mass, uint32_t group,
                         uint32_t leaf)
{
    oct_tree first = { 0 };
    int bad = 0;
    for (int threads = 1; threads <= 4 && !bad; threads++) {
        omp_set_num_threads(threads);
        oct_tree t = { 0 };
        if (oct_tree_build(&t, n, pos, mass, group, leaf, GP_KEY_PEANO_HILBERT)) return 1;
        int b = 0;
        uint32_t next = 0;
        for (uint32_t g = 0; g < t.ngroups; g++) {
            b += t.gbegin[g] != next || t.gcount[g] == 0 || t.gcount[g] > group;
            for (uint32_t i = t.gbegin[g]; i < t.gbegin[g] + t.gcount[g]; i++) b += t.group_of[i] != g;
            next = t.gbegin[g] + t.gcount[g];
        }
        b += next != n;
        uint32_t nloose = 0;
        for (uint32_t g = 0; g < t.ngroups; g++) nloose += loose(&t, t.gbegin[g], t.gcount[g]);
        if (nloose) diag("%u loose groups left", nloose);
        b += nloose;
        if (threads == 1) {
            first = t;
        } else {
            b += t.ngroups != first.ngroups || t.nsrc != first.nsrc || t.e_mass != first.e_mass;
            if (!b) {
                b += memcmp(t.gbegin, first.gbegin, t.ngroups * sizeof *t.gbegin) != 0;
                b += memcmp(t.gcount, first.gcount, t.ngroups * sizeof *t.gcount) != 0;
                b += memcmp(t.rank, first.rank, n * sizeof *t.rank) != 0;
                b += memcmp(t.sm, first.sm, t.nsrc * sizeof *t.sm) != 0;
            }
            oct_tree_free(&t);
        }
        if (b) diag("build on %d threads: %d problems", threads, b);
        bad += b;
    }
    oct_tree_free(&first);
    omp_set_num_threads(1);
    return bad;
}

/* An active subset of na particles (a random draw without repeats, in
 * random order) through oct_active_groups on 1..4 threads: targets in key
 * order, each with its slot in active[] and its position; runs that are
 * the active part of each tree group. Returns problems found. */
static int active_groups_check(const oct_tree *t, size_t na)
{
    size_t n = t->n;
    uint32_t *active = malloc(n * sizeof *active), *tix = malloc(na * sizeof *tix);
    uint32_t *rb = malloc(na * sizeof *rb), *rc = malloc(na * sizeof *rc);
    uint32_t *first = malloc(na * sizeof *first);
    size_t *slot = malloc(na * sizeof *slot);
    double *x = malloc(3 * na * sizeof *x);
    unsigned char *seen = calloc(na, 1);
    for (size_t i = 0; i < n; i++) active[i] = (uint32_t)i;
    for (size_t i = 0; i < na; i++) {   /* a partial Fisher-Yates shuffle */
        size_t j = i + (size_t)(urand() * (double)(n - i));
        uint32_t tmp = active[i]; active[i] = active[j]; active[j] = tmp;
    }
    int bad = 0;
    for (int threads = 1; threads <= 4 && !bad; threads++) {
        uint32_t nr = 0;
        if (oct_active_groups(t, na, active, threads, tix, slot, x, x + na, x + 2 * na, rb, rc, &nr))
            return 1;
        memset(seen, 0, na);
        for (size_t u = 0; u < na; u++) {
            bad += u > 0 && tix[u] <= tix[u - 1];
            bad += slot[u] >= na || seen[slot[u] < na ? slot[u] : 0]++;
            if (slot[u] < na) bad += tix[u] != t->rank[active[slot[u]]];
            bad += x[u] != t->x[tix[u]] || x[na + u] != t->y[tix[u]] || x[2 * na + u] != t->z[tix[u]];
        }
        size_t next = 0;
        for (uint32_t r = 0; r < nr; r++) {
            bad += rb[r] != next || rc[r] == 0;
            for (uint32_t u = rb[r]; u < rb[r] + rc[r] && u < na; u++)
                bad += t->group_of[tix[u]] != t->group_of[tix[rb[r]]];
            if (r > 0) bad += t->group_of[tix[rb[r]]] == t->group_of[tix[rb[r] - 1]];
            next = rb[r] + rc[r];
        }
        bad += next != na;
        if (threads == 1) memcpy(first, tix, na * sizeof *tix);
        else bad += memcmp(first, tix, na * sizeof *tix) != 0;
        if (bad) diag("%zu active on %d threads: %d problems", na, threads, bad);
    }
    free(active); free(tix); free(rb); free(rc); free(first); free(slot); free(x); free(seen);
    return bad;
}

int main(void)
{
    plan(7);
    size_t n = 20000;
    double *pos = malloc(3 * 200000 * sizeof *pos), *mass = malloc(200000 * sizeof *mass);
    cloud(n, pos, mass);
    ok(runs_match("cloud", n, pos, 16, 64) == 0 && runs_match("cloud", n, pos, 1, 64) == 0 &&
           runs_match("cloud", n, pos, 64, 64) == 0,
       "runs from trees of leaf size 1, 16 and 64: those of a tree of group-size leaves");
    ok(runs_match("few", 40, pos, 16, 64) == 0, "fewer particles than a group: one run");
    for (size_t i = 0; i < 300; i++) pos[3 * i] = pos[3 * i + 1] = pos[3 * i + 2] = 0.125;
    ok(runs_match("a clump at one point", n, pos, 16, 64) == 0,
       "300 particles at one point (a deepest-level leaf larger than a group): the same chunks");

    n = 200000;   /* over 128k: the threaded index passes run */
    cloud(n, pos, mass);
    ok(build_threads(n, pos, mass, 64, 16) == 0,
       "a build's groups, ranks and masses on 1-4 threads: the same; a partition, none over 64");
    {
        oct_tree t = { 0 };
        int b = oct_tree_build(&t, n, pos, mass, 64, 16, GP_KEY_PEANO_HILBERT) != 0;
        const size_t sizes[] = { 1, 100, 1500, 30000, 70000, 200000 };
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0] && !b; k++)
            b += active_groups_check(&t, sizes[k]);
        oct_tree_free(&t);
        ok(b == 0, "active subsets of 1 to 200,000 (compared, scanned, radix-sorted on 1-4 "
                   "threads): key order, slots, positions, runs at the tree groups");
    }
    /* clumps of 12 particles 1e-9 apart: each shares a leaf of the group
     * tree with particles ~1e-2 away, a loose group the build must cut */
    for (size_t k = 0; k < 50; k++) {
        size_t i0 = 1000 + 40 * k;
        for (size_t i = i0; i < i0 + 12; i++)
            for (int a = 0; a < 3; a++) pos[3 * i + a] = pos[3 * i0 + a] + 1e-9 * (double)(i - i0);
    }
    pos[0] = 1e30; pos[3 * 7 + 1] = -1e30;
    ok(build_threads(n, pos, mass, 64, 16) == 0,
       "the same with clumps and outliers at 1e30: the loose groups cut");
    for (size_t i = 0; i < n; i += 3) mass[i] = 0;   /* sources a subset: the group tree is built */
    ok(build_threads(n, pos, mass, 64, 16) == 0, "the same with a third of the particles massless");
    free(pos); free(mass);
    return done_testing();
}
