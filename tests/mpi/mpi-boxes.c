/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-boxes.c — mpi-tree's domain boxes on the wire (plugin/mpi-tree/
 * boxes.c), without MPI: every decoded box must contain the box that was
 * encoded (the LET is correct only if each box holds its groups' spheres:
 * a box rounded inward would let a sender close a cell that a group just
 * outside the box opens), and no looser than a few float steps; nodes sent
 * in increments must link up as the sender's tree; malformed input is
 * refused; the nearness test must agree with a brute-force scan of the
 * leaves. Boxes of every scale and offset, including the ones where
 * rounding to the nearest float would fall inside (counted, so the test
 * shows it exercises the outward step).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi-tree/boxes.h"
#include "tap.h"
#include "testlib.h"

/* A random binary tree of nested boxes, n nodes (odd), children in pairs
 * after their parent, as mpi-tree builds them. */
static int random_tree(tl_rng *r, mpi_tree_box *b, int n, double scale, double offset)
{
    mpi_tree_box root = { .gfac = 1.5, .param_hash = 42, .has = 1, .left = -1, .right = -1, .parent = -1 };
    for (int a = 0; a < 3; a++) {
        double c = offset * (2 * tl_uniform(r) - 1);
        root.lo[a] = c - scale * (0.5 + tl_uniform(r));
        root.hi[a] = c + scale * (0.5 + tl_uniform(r));
    }
    b[0] = root;
    int m = 1;
    while (m + 2 <= n) {
        int k = (int)(tl_uniform(r) * m) % m;     /* split a random leaf */
        if (b[k].left >= 0) continue;
        for (int c = 0; c < 2; c++) {
            mpi_tree_box x = b[k];
            x.left = x.right = -1;
            x.parent = k;
            for (int a = 0; a < 3; a++) {
                double w = b[k].hi[a] - b[k].lo[a];
                double u = tl_uniform(r), v = tl_uniform(r);
                x.lo[a] = b[k].lo[a] + w * 0.5 * fmin(u, v);
                x.hi[a] = b[k].hi[a] - w * 0.5 * fmin(1 - u, 1 - v) * tl_uniform(r);
            }
            b[m + c] = x;
        }
        b[k].left = m;
        b[k].right = m + 1;
        m += 2;
    }
    return m;
}

/* How far apart, in floats, the encoded offset is from the exact one. */
static double float_steps(double origin, double exact, double decoded)
{
    double d = fabs(exact - origin);
    double ulp = d > 0 ? nextafterf((float)d, INFINITY) - (float)d : 1e-45;
    return fabs(decoded - exact) / ulp;
}

int main(void)
{
    tl_rng r = { 2026 };
    enum { NODES = 255, TREES = 400 };
    mpi_tree_box *b = malloc(NODES * sizeof *b);
    mpi_tree_wire_box *w = malloc(NODES * sizeof *w);
    long long inward_if_nearest = 0, checked = 0;
    int superset = 1, tight = 1, links = 1, fields = 1;
    double worst_steps = 0;
    for (int t = 0; t < TREES; t++) {
        /* scales from 1e-7 to 1e7, centres up to 1e6 away from 0 */
        double scale = pow(10, -7 + 14 * tl_uniform(&r));
        double offset = t % 3 == 0 ? 0 : pow(10, -3 + 9 * tl_uniform(&r));
        int n = random_tree(&r, b, NODES, scale, offset);
        mpi_tree_box_head h = mpi_tree_box_head_make(b, n);
        /* the coarse part, then the rest as one increment */
        int split = 1 + 2 * (int)(tl_uniform(&r) * (n / 2));
        mpi_tree_box_encode(&h, b, split, w);
        mpi_tree_box_encode(&h, b + split, n - split, w + split);
        mpi_tree_domain d = { .head = h };
        if (mpi_tree_domain_append(&d, w, split) || mpi_tree_domain_append(&d, w + split, n - split)) {
            links = 0;
            mpi_tree_domain_free(&d);
            continue;
        }
        links &= d.n == n;
        for (int k = 0; k < n && k < d.n; k++) {
            links &= d.b[k].left == b[k].left && d.b[k].right == b[k].right &&
                     d.b[k].parent == b[k].parent;
            fields &= d.b[k].gfac == 1.5 && d.b[k].param_hash == 42 && d.b[k].has == 1;
            for (int a = 0; a < 3; a++) {
                checked += 2;
                superset &= d.b[k].lo[a] <= b[k].lo[a] && d.b[k].hi[a] >= b[k].hi[a];
                inward_if_nearest += h.origin[a] + (double)(float)(b[k].lo[a] - h.origin[a]) > b[k].lo[a];
                inward_if_nearest += h.origin[a] + (double)(float)(b[k].hi[a] - h.origin[a]) < b[k].hi[a];
                double s = fmax(float_steps(h.origin[a], b[k].lo[a], d.b[k].lo[a]),
                                float_steps(h.origin[a], b[k].hi[a], d.b[k].hi[a]));
                worst_steps = fmax(worst_steps, s);
            }
        }
        mpi_tree_domain_free(&d);
    }
    tight = worst_steps <= 2;
    ok(superset, "every decoded box contains the encoded one (%lld coordinates)", checked);
    ok(inward_if_nearest > checked / 10,
       "the cases include ones where the nearest float falls inside (%lld of %lld)",
       inward_if_nearest, checked);
    ok(tight, "decoded boxes are within 2 float steps of the exact ones (worst %.2f)", worst_steps);
    ok(links, "nodes sent in two increments link up as the sender's tree");
    ok(fields, "every node carries the header's gfac, param_hash and has");

    /* far from the origin with a tiny extent: still a superset (floats
     * are offsets from the tree's own origin, not from 0) */
    {
        mpi_tree_box far[1] = { { .lo = { 1e6, -1e6, 3e5 }, .hi = { 1e6 + 1e-4, -1e6 + 1e-4, 3e5 + 1e-4 },
                            .has = 1, .left = -1, .right = -1, .parent = -1 } };
        mpi_tree_box_head h = mpi_tree_box_head_make(far, 1);
        mpi_tree_wire_box fw;
        mpi_tree_box_encode(&h, far, 1, &fw);
        mpi_tree_domain d = { .head = h };
        int good = mpi_tree_domain_append(&d, &fw, 1) == 0;
        for (int a = 0; a < 3 && good; a++)
            good = d.b[0].lo[a] <= far[0].lo[a] && d.b[0].hi[a] >= far[0].hi[a] &&
                   d.b[0].hi[a] - d.b[0].lo[a] < 1.001e-4;
        ok(good, "a box of width 1e-4 at 1e6 from 0 decodes as a superset within 0.1%%");
        mpi_tree_domain_free(&d);
    }

    /* malformed increments */
    {
        int n = random_tree(&r, b, 7, 1, 0);
        mpi_tree_box_head h = mpi_tree_box_head_make(b, n);
        mpi_tree_box_encode(&h, b, n, w);
        mpi_tree_domain d = { .head = h };
        mpi_tree_wire_box bad = w[3];
        bad.parent = 99;
        int rc1 = mpi_tree_domain_append(&d, w, 3) == 0 ? mpi_tree_domain_append(&d, &bad, 1) : 0;
        mpi_tree_domain_free(&d);
        d = (mpi_tree_domain){ .head = h };
        mpi_tree_wire_box third[4] = { w[0], w[1], w[2], w[1] };   /* node 0 gets three children */
        int rc2 = mpi_tree_domain_append(&d, third, 4);
        mpi_tree_domain_free(&d);
        d = (mpi_tree_domain){ .head = h };
        mpi_tree_wire_box noroot = w[1];
        int rc3 = mpi_tree_domain_append(&d, &noroot, 1);
        mpi_tree_domain_free(&d);
        ok(rc1 == -2 && rc2 == -2 && rc3 == -2,
           "a parent out of range, a third child and a first node with a parent are refused "
           "(%d %d %d)", rc1, rc2, rc3);
    }

    /* nearness: the tree descent against every leaf */
    {
        int agree = 1, near = 0, trials = 2000;
        int n = random_tree(&r, b, NODES, 1, 0);
        for (int t = 0; t < trials; t++) {
            mpi_tree_box q = { .has = 1 };
            double reach = 0.5 * tl_uniform(&r);
            for (int a = 0; a < 3; a++) {
                q.lo[a] = -1.5 + 3 * tl_uniform(&r);
                q.hi[a] = q.lo[a] + 0.2 * tl_uniform(&r);
            }
            int brute = 0;
            for (int k = 0; k < n; k++)
                if (b[k].left < 0 && mpi_tree_box_gap2(&q, &b[k]) < reach * reach) brute = 1;
            agree &= brute == mpi_tree_box_near_tree(&q, reach * reach, b, n);
            near += brute;
        }
        ok(agree, "the nearness test agrees with a scan of the leaves");
        ok(near > trials / 10 && near < trials * 9 / 10, "both answers occur (%d of %d near)",
           near, trials);
    }
    free(b);
    free(w);
    return done_testing();
}
