/* SPDX-License-Identifier: Apache-2.0 */
/* boxes.c — domain trees on the wire, and the nearness test (see boxes.h). */
#include "boxes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a receiver decodes from f: one double addition, nothing else (no
 * contraction possible), so the sender's check below is what it will see. */
static double decode(double origin, float f)
{
    return origin + (double)f;
}

/* The largest float whose decoded value is <= v. */
static float round_down(double origin, double v)
{
    float f = (float)(v - origin);
    while (decode(origin, f) > v) f = nextafterf(f, -INFINITY);
    return f;
}

/* The smallest float whose decoded value is >= v. */
static float round_up(double origin, double v)
{
    float f = (float)(v - origin);
    while (decode(origin, f) < v) f = nextafterf(f, INFINITY);
    return f;
}

mpi_tree_box_head mpi_tree_box_head_make(const mpi_tree_box *b, int nnodes)
{
    mpi_tree_box_head h = { .gfac = b->gfac, .param_hash = b->param_hash, .has = b->has,
                      .nnodes = nnodes };
    for (int a = 0; a < 3; a++) {
        double c = 0.5 * (b->lo[a] + b->hi[a]);
        h.origin[a] = isfinite(c) ? c : 0.0;
    }
    return h;
}

void mpi_tree_box_encode(const mpi_tree_box_head *h, const mpi_tree_box *b, int n, mpi_tree_wire_box *out)
{
    for (int k = 0; k < n; k++) {
        mpi_tree_wire_box w = { .parent = b[k].parent, .reserved = 0 };
        for (int a = 0; a < 3; a++) {
            w.lo[a] = round_down(h->origin[a], b[k].lo[a]);
            w.hi[a] = round_up(h->origin[a], b[k].hi[a]);
        }
        out[k] = w;
    }
}

int mpi_tree_domain_append(mpi_tree_domain *d, const mpi_tree_wire_box *w, int n)
{
    if (n < 0) return -2;
    if (d->n + n > d->cap) {
        int cap = d->cap ? d->cap : 64;
        while (cap < d->n + n) cap *= 2;
        mpi_tree_box *nb = realloc(d->b, (size_t)cap * sizeof *nb);
        if (!nb) return -1;
        d->b = nb;
        d->cap = cap;
    }
    for (int j = 0; j < n; j++) {
        int k = d->n;
        int32_t p = w[j].parent;
        if (k == 0 ? p != -1 : (p < 0 || p >= k || d->b[p].right >= 0)) return -2;
        mpi_tree_box *b = &d->b[k];
        *b = (mpi_tree_box){ .gfac = d->head.gfac, .param_hash = d->head.param_hash,
                       .has = d->head.has, .left = -1, .right = -1, .parent = p };
        for (int a = 0; a < 3; a++) {
            b->lo[a] = decode(d->head.origin[a], w[j].lo[a]);
            b->hi[a] = decode(d->head.origin[a], w[j].hi[a]);
        }
        if (p >= 0) {
            if (d->b[p].left < 0) d->b[p].left = k;
            else d->b[p].right = k;
        }
        d->n++;
    }
    return 0;
}

void mpi_tree_domain_free(mpi_tree_domain *d)
{
    free(d->b);
    memset(d, 0, sizeof *d);
}

double mpi_tree_box_gap2(const mpi_tree_box *a, const mpi_tree_box *b)
{
    double d2 = 0;
    for (int k = 0; k < 3; k++) {
        double g = fmax(0.0, fmax(a->lo[k] - b->hi[k], b->lo[k] - a->hi[k]));
        d2 += g * g;
    }
    return d2;
}

int mpi_tree_box_near_tree(const mpi_tree_box *b, double reach2, const mpi_tree_box *t, int n)
{
    if (n <= 0 || !t[0].has) return 0;
    int stack[256], sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        int k = stack[--sp];
        if (mpi_tree_box_gap2(b, &t[k]) >= reach2) continue;
        int l = t[k].left, r = t[k].right;
        /* a leaf, or a node whose children cannot be followed: near */
        if (l < 0 || r < 0 || l >= n || r >= n || sp + 2 > (int)(sizeof stack / sizeof *stack))
            return 1;
        stack[sp++] = r;
        stack[sp++] = l;
    }
    return 0;
}
