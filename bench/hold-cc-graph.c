/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hold-cc-graph.c — would the connected-components split (CC, Pelupessy,
 * Jänes & Portegies Zwart 2012, section 2.3) save force work over HOLD on
 * the galaxy model? A measurement on the initial conditions.
 *
 *   hold-cc-graph [--n N] [--seed S] [--model M] [--eps E] [--dt DT]
 *                 [--eta ETA] [--levels K]
 *
 * CC splits a set into the connected components of the graph whose edges
 * are the pairs with a pairwise time step tau_ij below the level's step
 * h; components are evolved one by one below h, and the interactions
 * between components are kicked at h. It saves over HOLD only where the
 * fast set falls apart into several components. This program computes,
 * by direct summation over all pairs, the paper's pairwise time steps
 *
 *     tau_ij = eta * min( sqrt(r^3 / (G (m_i + m_j))),  r / |v_i - v_j| ),
 *     r = sqrt(|x_i - x_j|^2 + eps^2)
 *
 * (free-fall and fly-by times; Huayno adds first-order corrections that
 * make them time-symmetric, left out here: they move a step by a fraction,
 * not the structure of the graph), and for every level k (h = dt / 2^k)
 * the pairwise fast set F_k (particles with a pair below h), its
 * components, and the share of F_k's internal pairs that lie inside one
 * component: the F-F interactions CC would keep on the deep steps (1.0:
 * CC is HOLD). For comparison it prints the fast set of hold.c's
 * per-particle criterion, eta_p * sqrt(eps / |a_i|) with eta_p = 0.2, from
 * the exact accelerations.
 * O(N^2) time; N = 16384 takes seconds. Results:
 * bench/results/hold/raw/hold.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic.h"

enum { MAX_LEVELS = 24 };

static size_t find(size_t *parent, size_t i)
{
    while (parent[i] != i) {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    return i;
}

static void unite(size_t *parent, size_t *size, size_t a, size_t b)
{
    a = find(parent, a);
    b = find(parent, b);
    if (a == b) return;
    if (size[a] < size[b]) { size_t t = a; a = b; b = t; }
    parent[b] = a;
    size[a] += size[b];
}

static void usage(void)
{
    fprintf(stderr, "usage: hold-cc-graph [--n N] [--seed S] [--model M] [--eps E] [--dt DT] [--eta ETA] [--levels K]\n");
}

int main(int argc, char **argv)
{
    size_t n = 16384;
    unsigned long long seed = 42;
    const char *model = "galaxy";
    double eps = 0.01, dt = 0.125, eta = 0.1, eta_p = 0.2;
    int levels = 10;
    for (int a = 1; a < argc; a += 2) {   /* flag, value */
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) { usage(); return 2; }
        if (!strcmp(argv[a], "--n")) n = strtoull(v, NULL, 10);
        else if (!strcmp(argv[a], "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(argv[a], "--model")) model = v;
        else if (!strcmp(argv[a], "--eps")) eps = atof(v);
        else if (!strcmp(argv[a], "--dt")) dt = atof(v);
        else if (!strcmp(argv[a], "--eta")) eta = atof(v);
        else if (!strcmp(argv[a], "--levels")) levels = atoi(v);
        else { usage(); return 2; }
    }
    if (n < 2 || !(eps >= 0) || !(dt > 0) || !(eta > 0) || levels < 1 || levels > MAX_LEVELS) {
        fprintf(stderr, "hold-cc-graph: need n >= 2, eps >= 0, dt > 0, eta > 0, 1 <= levels <= %d\n", MAX_LEVELS);
        return 2;
    }
    gp_ic ic;
    char err[256];
    if (gp_ic_make(model, n, seed, NULL, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "hold-cc-graph: %s\n", err);
        return 1;
    }
    n = ic.n;
    /* per level: union-find over the pairwise fast edges */
    size_t *parent = malloc((size_t)levels * n * sizeof *parent);
    size_t *csize = malloc((size_t)levels * n * sizeof *csize);
    unsigned char *fast = calloc((size_t)levels * n, 1);
    double *acc = calloc(3 * n, sizeof *acc);
    if (!parent || !csize || !fast || !acc) { fprintf(stderr, "hold-cc-graph: out of memory\n"); return 1; }
    for (int k = 0; k < levels; ++k)
        for (size_t i = 0; i < n; ++i) { parent[k * n + i] = i; csize[k * n + i] = 1; }

    const double *x = ic.pos, *v = ic.vel, *m = ic.mass;
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i + 1; j < n; ++j) {
            double d[3], dv[3];
            for (int c = 0; c < 3; ++c) { d[c] = x[3 * j + c] - x[3 * i + c]; dv[c] = v[3 * j + c] - v[3 * i + c]; }
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps * eps, r = sqrt(r2);
            double inv3 = 1.0 / (r2 * r);
            for (int c = 0; c < 3; ++c) { acc[3 * i + c] += m[j] * d[c] * inv3; acc[3 * j + c] -= m[i] * d[c] * inv3; }
            double dv2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
            double tff = sqrt(r2 * r / (m[i] + m[j])), tfb = dv2 > 0 ? r / sqrt(dv2) : INFINITY;
            double tau = eta * (tff < tfb ? tff : tfb);
            /* fast at every level whose step exceeds tau */
            for (int k = 0; k < levels && tau < ldexp(dt, -k); ++k) {
                unite(parent + k * n, csize + k * n, i, j);
                fast[k * n + i] = fast[k * n + j] = 1;
            }
        }
    }
    printf("# hold-cc-graph: %s n = %zu seed %llu, eps = %g, dt = %g, pairwise eta = %g (per-particle eta %g)\n",
           model, n, seed, eps, dt, eta, eta_p);
    printf("level\th\tF_pair\tcomponents\tlargest\tintra_share\tF_particle\n");
    size_t *count = calloc(n, sizeof *count);
    for (int k = 0; k < levels; ++k) {
        double h = ldexp(dt, -k);
        size_t nf = 0, ncomp = 0, largest = 0;
        double intra = 0;
        memset(count, 0, n * sizeof *count);
        for (size_t i = 0; i < n; ++i)
            if (fast[k * n + i]) { ++nf; ++count[find(parent + k * n, i)]; }
        for (size_t i = 0; i < n; ++i)
            if (count[i]) {
                ++ncomp;
                if (count[i] > largest) largest = count[i];
                intra += (double)count[i] * (double)(count[i] - 1);
            }
        size_t np = 0;   /* per-particle criterion's fast set at this level */
        for (size_t i = 0; i < n; ++i) {
            double a = sqrt(acc[3 * i] * acc[3 * i] + acc[3 * i + 1] * acc[3 * i + 1] + acc[3 * i + 2] * acc[3 * i + 2]);
            if (eta_p * sqrt(eps / a) < h) ++np;
        }
        double share = nf > 1 ? intra / ((double)nf * (double)(nf - 1)) : 0.0;
        printf("%d\t%g\t%zu\t%zu\t%zu\t%.3f\t%zu\n", k, h, nf, ncomp, largest, share, np);
    }
    free(count); free(parent); free(csize); free(fast); free(acc);
    gp_ic_free(&ic);
    return 0;
}
