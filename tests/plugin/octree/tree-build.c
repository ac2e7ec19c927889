/* SPDX-License-Identifier: Apache-2.0 */
/* tree-build: the level-by-level octree over sorted keys is a valid
 * partition (every cell = the union of its children, leaves small, depth
 * <= 21), its moments enclose their particles, and extreme coordinates
 * (1e30 outliers, all particles at one point) neither crash nor deepen it;
 * the key sort and the moments give the same bits on any number of
 * threads. */
#include "tap.h"
#include "octree/host_tree.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x2545F4914F6CDD1Du;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return (double)(rs >> 11) * (1.0 / 9007199254740992.0);
}

/* builds keys, sorts, builds the tree and moments; returns problems found */
static int check(const char *what, size_t n, double *x, double *y, double *z, double *m,
                 uint32_t leaf, gp_key_kind kind)
{
    double lo[3], inv;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *perm = malloc(n * sizeof *perm);
    double *sx = malloc(n * sizeof *sx), *sy = malloc(n * sizeof *sy), *sz = malloc(n * sizeof *sz),
           *sm = malloc(n * sizeof *sm);
    gp_host_root_cube(n, x, y, z, 1, lo, &inv);
    gp_host_make_keys(n, x, y, z, 1, kind, lo, inv, keys);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    int bad = gp_host_sort_keys(n, keys, perm) != 0;
    for (size_t i = 1; i < n; i++) bad += keys[i - 1] > keys[i];
    for (size_t i = 0; i < n; i++) {
        sx[i] = x[perm[i]]; sy[i] = y[perm[i]]; sz[i] = z[perm[i]]; sm[i] = m[perm[i]];
    }
    gp_host_tree t = { 0 };
    bad += gp_host_tree_build(&t, keys, (uint32_t)n, leaf) != 0;
    bad += gp_host_tree_moments(&t, sx, sy, sz, sm) != 0;
    uint32_t leaves = 0, maxlevel = 0, covered = 0;
    for (uint32_t c = 0; c < t.ncells; c++) {
        const gp_cell *cl = &t.cells[c];
        if (cl->level > maxlevel) maxlevel = cl->level;
        if (cl->nchild == 0) {
            leaves++;
            covered += cl->count;
            if (cl->count > leaf && cl->level < GP_KEY_MAX_LEVEL) bad++;
        } else {
            uint32_t next = cl->begin;
            for (uint32_t k = 0; k < cl->nchild; k++) {
                const gp_cell *ch = &t.cells[cl->child + k];
                if (ch->begin != next || ch->parent != c || ch->level != cl->level + 1) bad++;
                next += ch->count;
            }
            if (next != cl->begin + cl->count) bad++;
        }
        /* every particle lies in the box and within bmax of the com */
        const gp_moments *mo = &t.mom[c];
        for (uint32_t i = cl->begin; i < cl->begin + cl->count; i++) {
            double dx = sx[i] - mo->com[0], dy = sy[i] - mo->com[1], dz = sz[i] - mo->com[2];
            double r = sqrt(dx * dx + dy * dy + dz * dz);
            if (r > mo->bmax * (1 + 1e-12) + 1e-300) bad++;
            if (sx[i] < mo->lo[0] || sx[i] > mo->hi[0] || sz[i] < mo->lo[2] || sz[i] > mo->hi[2]) bad++;
        }
    }
    double mt = 0;
    for (size_t i = 0; i < n; i++) mt += m[i];
    if (fabs(t.mom[0].m - mt) > 1e-12 * mt) bad++;
    if (covered != n) bad++;
    diag("%s: %u cells, %u leaves, depth %u", what, t.ncells, leaves, maxlevel);
    gp_host_tree_free(&t);
    free(keys); free(perm); free(sx); free(sy); free(sz); free(sm);
    return bad + (maxlevel > GP_KEY_MAX_LEVEL);
}

/* The radix sort on 1..4 threads: keys in order, each key carried with
 * its index, ties in input order (stable), the same permutation for every
 * thread count. Keys from 5000 values spread over all 63 bits, so that
 * every pass moves keys and ties are many. Returns problems found. */
static int sort_check_threads(void)
{
    size_t n = 100000;
    uint64_t *orig = malloc(n * sizeof *orig), *keys = malloc(n * sizeof *keys);
    uint32_t *perm = malloc(n * sizeof *perm), *first = malloc(n * sizeof *first);
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        orig[i] = (uint64_t)(urand() * 5000) * UINT64_C(0x0000100001000011) & (UINT64_MAX >> 1);
    for (int threads = 1; threads <= 4; threads++) {
        omp_set_num_threads(threads);
        memcpy(keys, orig, n * sizeof *keys);
        for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
        int b = gp_host_sort_keys(n, keys, perm) != 0;
        for (size_t i = 0; i < n; i++) b += keys[i] != orig[perm[i]];
        for (size_t i = 1; i < n; i++)
            b += keys[i - 1] > keys[i] || (keys[i - 1] == keys[i] && perm[i - 1] > perm[i]);
        if (threads == 1) memcpy(first, perm, n * sizeof *perm);
        else b += memcmp(first, perm, n * sizeof *perm) != 0;
        if (b) diag("sort on %d threads: %d problems", threads, b);
        bad += b;
    }
    free(orig); free(keys); free(perm); free(first);
    return bad;
}

/* The moments of one tree on 1..4 threads: the same bits as on one (the
 * threaded pass hands whole subtrees to threads and combines the top
 * after). Returns problems found. */
static int moments_check_threads(const char *what, size_t n, const double *x, const double *y,
                                 const double *z, const double *m, uint32_t leaf)
{
    double lo[3], inv;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *perm = malloc(n * sizeof *perm);
    double *s = malloc(4 * n * sizeof *s);
    gp_host_root_cube(n, x, y, z, 1, lo, &inv);
    gp_host_make_keys(n, x, y, z, 1, GP_KEY_PEANO_HILBERT, lo, inv, keys);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    int bad = gp_host_sort_keys(n, keys, perm) != 0;
    for (size_t i = 0; i < n; i++) {
        s[i] = x[perm[i]]; s[n + i] = y[perm[i]]; s[2 * n + i] = z[perm[i]]; s[3 * n + i] = m[perm[i]];
    }
    gp_host_tree t = { 0 };
    bad += gp_host_tree_build(&t, keys, (uint32_t)n, leaf) != 0;
    gp_moments *first = NULL;
    for (int threads = 1; threads <= 4 && !bad; threads++) {
        omp_set_num_threads(threads);
        bad += gp_host_tree_moments(&t, s, s + n, s + 2 * n, s + 3 * n) != 0;
        if (threads == 1) {
            first = malloc(t.ncells * sizeof *first);
            memcpy(first, t.mom, t.ncells * sizeof *first);
        } else {
            int b = memcmp(first, t.mom, t.ncells * sizeof *first) != 0;
            if (b) diag("%s: moments on %d threads differ from one thread's", what, threads);
            bad += b;
        }
        /* a refit must not reuse what the last call left */
        memset(t.mom, 0xff, t.ncells * sizeof *t.mom);
    }
    omp_set_num_threads(1);
    gp_host_tree_free(&t);
    free(first); free(keys); free(perm); free(s);
    return bad;
}

int main(void)
{
    plan(10);
    size_t n = 20000;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z),
           *m = malloc(n * sizeof *m);
    /* a centrally concentrated cloud */
    for (size_t i = 0; i < n; i++) {
        double r = pow(urand(), 3.0);
        x[i] = r * (urand() - 0.5); y[i] = r * (urand() - 0.5); z[i] = r * (urand() - 0.5);
        m[i] = 1.0 / n;
    }
    ok(check("cloud, PH", n, x, y, z, m, 8, GP_KEY_PEANO_HILBERT) == 0, "PH tree over a cloud is valid");
    ok(check("cloud, Morton", n, x, y, z, m, 8, GP_KEY_MORTON) == 0, "Morton tree over a cloud is valid");
    ok(check("cloud, leaf 1", n, x, y, z, m, 1, GP_KEY_PEANO_HILBERT) == 0, "leaf size 1 tree is valid");
    ok(moments_check_threads("cloud", n, x, y, z, m, 8) == 0,
       "moments of a cloud on 1-4 threads: the bits of one thread");
    ok(moments_check_threads("cloud, leaf 1", n, x, y, z, m, 1) == 0,
       "moments of a leaf-size-1 tree on 1-4 threads: the bits of one thread");
    x[7] = 1e30; y[7] = -1e30; z[123] = -3e29;
    ok(check("two 1e30 outliers", n, x, y, z, m, 8, GP_KEY_PEANO_HILBERT) == 0,
       "1e30 outliers: valid, depth bounded");
    for (size_t i = 0; i < n; i++) x[i] = y[i] = z[i] = 0.25;
    ok(moments_check_threads("one point", n, x, y, z, m, 8) == 0,
       "moments of a tree with one deepest leaf on 1-4 threads: the bits of one thread");
    ok(check("all at one point", n, x, y, z, m, 8, GP_KEY_PEANO_HILBERT) == 0,
       "all particles at one point: valid");
    ok(check("one particle", 1, x, y, z, m, 8, GP_KEY_PEANO_HILBERT) == 0, "one particle: valid");
    free(x); free(y); free(z); free(m);
    ok(sort_check_threads() == 0,
       "key sort on 1-4 threads: ordered, stable, the same permutation for every count");
    return done_testing();
}
