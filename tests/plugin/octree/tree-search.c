/* SPDX-License-Identifier: Apache-2.0 */
/* tree-search: the exact neighbour searches of plugin/octree/tree_search.c
 * (nearest source, sources within a radius) give what brute force gives,
 * ties to the lower index, self skipped, massless particles not sources,
 * on clustered points, a lattice full of equal distances, and after a
 * refit that moved every point. The pruned pair search of
 * plugin/octree/pair_search.c gives brute force's pair_step bit for bit
 * and its lists by step, on clustered and uniform points with random,
 * co-moving and slowly approaching velocities, source subsets, massless
 * particles, one and two particles and ties; its cell bound
 * (pair_bound.h) stays below every pair it covers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "base/pair_step.h"
#include "octree/pair_bound.h"
#include "octree/pair_search.h"
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

/* ---- pair_step and the lists by step -------------------------------- */

typedef struct hitlist {
    uint32_t *v;
    size_t n, cap;
} hitlist;

static int hit_add(void *ctx, uint32_t j)
{
    hitlist *h = ctx;
    if (h->n == h->cap) {
        h->cap = h->cap ? 2 * h->cap : 64;
        h->v = realloc(h->v, h->cap * sizeof *h->v);
    }
    h->v[h->n++] = j;
    return 0;
}

/* The tree over the particles sub[0..ns) (NULL: all n) and the particle
 * index of each of its sources, as cpu-tree makes them. */
static uint32_t *subset_tree(oct_tree *t, size_t n, const double *pos, const double *mass,
                             const uint32_t *sub, size_t ns)
{
    size_t m = sub ? ns : n;
    double *sp = malloc((3 * m + 1) * sizeof *sp), *sm = malloc((m + 1) * sizeof *sm);
    for (size_t k = 0; k < m; k++) {
        size_t i = sub ? sub[k] : k;
        memcpy(&sp[3 * k], &pos[3 * i], 3 * sizeof *sp);
        sm[k] = mass[i];
    }
    memset(t, 0, sizeof *t);
    if (oct_tree_build(t, m, sp, sm, 32, 8, GP_KEY_PEANO_HILBERT)) bail("out of memory");
    uint32_t *pid = malloc((t->nsrc ? t->nsrc : 1) * sizeof *pid);
    for (uint32_t k = 0; k < t->nsrc; k++) {
        uint32_t q = t->order[t->sid[k]];
        pid[k] = sub ? sub[q] : q;
    }
    free(sp); free(sm);
    return pid;
}

/* Every particle as i, against brute force over the massive members of
 * sub (NULL: all); nb_step as given and, separately, pair_step alone
 * (different thresholds prune differently). Returns the disagreements;
 * *evals_per gets the pair evaluations per particle of the search. */
static int compare_pairs(size_t n, const double *pos, const double *vel, const double *mass,
                         const uint32_t *sub, size_t ns, double eps2, double nb_step,
                         double *evals_per)
{
    oct_tree t;
    uint32_t *pid = subset_tree(&t, n, pos, mass, sub, ns);
    /* both ways to the slow pairs: the velocity tree (many targets) and
     * the scan (few) */
    oct_pair_index ixs[2];
    if (oct_pair_index_build(&ixs[0], &t, pid, pos, vel, mass, SIZE_MAX) ||
        oct_pair_index_build(&ixs[1], &t, pid, pos, vel, mass, 0))
        bail("out of memory");
    uint8_t *in = calloc(n ? n : 1, 1);
    for (size_t k = 0; k < (sub ? ns : n); k++) in[sub ? sub[k] : k] = 1;
    const double G = 1.0;
    uint32_t *want = malloc((n ? n : 1) * sizeof *want);
    hitlist h = { 0 };
    size_t evals = 0;
    int bad = 0;
    /* tau_ij, then ABI 1.3's even step, both ways to the slow pairs */
    for (size_t wi = 0; wi < 4 * n; wi++) {
        const oct_pair_index *ix = &ixs[(wi / n) % 2];
        const int even = wi >= 2 * n;
        size_t i = wi % n;
        const double *x = &pos[3 * i], *v = &vel[3 * i];
        double best = HUGE_VAL;
        size_t nw = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i || !in[j] || !(mass[j] > 0)) continue;
            double dx = x[0] - pos[3 * j], dy = x[1] - pos[3 * j + 1], dz = x[2] - pos[3 * j + 2];
            double dvx = v[0] - vel[3 * j], dvy = v[1] - vel[3 * j + 1], dvz = v[2] - vel[3 * j + 2];
            double Gmu = G * (mass[i] + mass[j]);
            double tau = even ? gp_pair_step_even(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu)
                              : gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu);
            if (tau < best) best = tau;
            if (tau < nb_step) want[nw++] = (uint32_t)j;
        }
        oct_pair_query q = { pos, vel, mass, G, eps2, 1, nb_step, hit_add, &h, even };
        h.n = 0;
        double got = oct_pair_search(ix, &q, (uint32_t)i, HUGE_VAL, wi < n ? &evals : NULL);
        if (h.n > 1) qsort(h.v, h.n, sizeof *h.v, cmp_u32);   /* h.v is NULL until a hit */
        if (memcmp(&got, &best, sizeof got) || h.n != nw || (nw && memcmp(h.v, want, nw * sizeof *want)))
            bad++;
        q.nb_step = 0;   /* the minimum alone */
        got = oct_pair_search(ix, &q, (uint32_t)i, HUGE_VAL, NULL);
        if (memcmp(&got, &best, sizeof got)) bad++;
        q.want_min = 0;  /* the list alone */
        q.nb_step = nb_step;
        h.n = 0;
        oct_pair_search(ix, &q, (uint32_t)i, HUGE_VAL, NULL);
        if (h.n > 1) qsort(h.v, h.n, sizeof *h.v, cmp_u32);
        if (h.n != nw || (nw && memcmp(h.v, want, nw * sizeof *want))) bad++;
    }
    if (evals_per) *evals_per = n ? (double)evals / (double)n : 0;
    oct_tree_free(&t);
    oct_pair_index_free(&ixs[0]);
    oct_pair_index_free(&ixs[1]);
    free(pid); free(in); free(want); free(h.v);
    return bad;
}

/* The cell bound against pairs drawn inside random boxes, many of them
 * approaching slowly: returns how many pairs fell below their bound. */
static int bound_violations(void)
{
    int bad = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double lo[3], hi[3], vlo[3], vhi[3], x[3], v[3];
        double scale = pow(10.0, 4 * urand() - 2), vs = pow(10.0, 6 * urand() - 5);
        for (int a = 0; a < 3; a++) {
            lo[a] = scale * (2 * urand() - 1); hi[a] = lo[a] + scale * urand();
            vlo[a] = vs * (2 * urand() - 1); vhi[a] = vlo[a] + vs * urand() * (trial % 3 ? 1 : 1e-3);
            x[a] = 3 * scale * (2 * urand() - 1);
            v[a] = vs * (2 * urand() - 1);
        }
        double mi = urand(), mmax = pow(10.0, -6 * urand()), eps2 = trial % 2 ? 0 : 1e-4 * scale * scale;
        double r2 = 0, w2 = 0, W2 = 0;
        for (int a = 0; a < 3; a++) {
            double e = x[a] < lo[a] ? lo[a] - x[a] : (x[a] > hi[a] ? x[a] - hi[a] : 0);
            double f = v[a] < vlo[a] ? vlo[a] - v[a] : (v[a] > vhi[a] ? v[a] - vhi[a] : 0);
            double g = v[a] - vlo[a] > vhi[a] - v[a] ? v[a] - vlo[a] : vhi[a] - v[a];
            r2 += e * e; w2 += f * f; W2 += g * g;
        }
        double smin = 0;
        for (int a = 0; a < 3; a++) {
            double p = oct_pair_rv_min_axis(x[a], lo[a], hi[a], v[a], vlo[a], vhi[a]);
            smin = a ? smin + p : p;
        }
        /* without and with the approach rate from the boxes' corners */
        double bound = oct_pair_step_bound(r2, eps2, sqrt(w2), sqrt(W2), mi + mmax, HUGE_VAL);
        double bound_rv = oct_pair_step_bound(r2, eps2, sqrt(w2), sqrt(W2), mi + mmax,
                                              smin < 0 ? -smin : 0);
        if (bound_rv > bound) bound = bound_rv;   /* both must hold */
        if (!(bound_rv >= 0)) bad++;
        for (int k = 0; k < 20; k++) {
            double xj[3], vj[3];
            for (int a = 0; a < 3; a++) {
                /* corners and faces as often as the inside */
                double u = urand(), w = urand();
                xj[a] = u < 0.25 ? lo[a] : u < 0.5 ? hi[a] : lo[a] + (hi[a] - lo[a]) * urand();
                vj[a] = w < 0.25 ? vlo[a] : w < 0.5 ? vhi[a] : vlo[a] + (vhi[a] - vlo[a]) * urand();
            }
            double mj = mmax * urand();
            double tau = gp_pair_step(x[0] - xj[0], x[1] - xj[1], x[2] - xj[2], v[0] - vj[0],
                                      v[1] - vj[1], v[2] - vj[2], eps2, mi + mj);
            if (tau < bound) bad++;
        }
    }
    return bad;
}

/* n points: a clump and a background (clustered) or a uniform cube, with
 * random velocities; every 5th pair co-moving (equal velocities) and
 * every 7th approaching its partner slowly (relative speed 1e-9). */
static void pair_set(size_t n, int clustered, double *pos, double *vel, double *mass)
{
    for (size_t i = 0; i < n; i++) {
        double s = clustered && i % 3 ? 0.05 : 1.0;
        for (int a = 0; a < 3; a++) {
            pos[3 * i + a] = s * (2 * urand() - 1);
            vel[3 * i + a] = 0.3 * (2 * urand() - 1);
        }
        mass[i] = i % 11 == 4 ? 0.0 : (0.5 + urand()) / (double)n;
    }
    for (size_t i = 1; i < n; i += 2) {
        double *x = &pos[3 * i], *v = &vel[3 * i];
        const double *xp = &pos[3 * (i - 1)], *vp = &vel[3 * (i - 1)];
        for (int a = 0; a < 3; a++) x[a] = xp[a] + 1e-3 * (2 * urand() - 1);
        if (i % 10 == 1) memcpy(v, vp, 3 * sizeof *v);
        else if (i % 14 == 1)
            for (int a = 0; a < 3; a++) v[a] = vp[a] - 1e-9 * (x[a] - xp[a]);
    }
}

/* The pair search's tests (several ok lines). */
static void pair_tests(void)
{
    is_int(bound_violations(), 0, "cell bound: no pair in a box (corners, faces, inside; slow "
           "approaches, eps 0 and not) has tau_ij below the bound, with or without the approach "
           "rate from the boxes' corners");
    const size_t n = 2000;
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *mass = malloc(n * sizeof *mass), per;
    for (int clustered = 0; clustered < 2; clustered++) {
        pair_set(n, clustered, pos, vel, mass);
        for (int e = 0; e < 2; e++) {
            double eps2 = e ? 1e-4 : 0.0;
            is_int(compare_pairs(n, pos, vel, mass, NULL, 0, eps2, 0.02, &per), 0,
                   "%s, eps2 %g: pair_step, the even step and their lists (0.02) equal brute force, bit for "
                   "bit (co-moving, slowly approaching and massless particles among them)",
                   clustered ? "clustered" : "uniform", eps2);
            diag("  %.0f tau_ij evaluated per particle of %zu", per, n);
        }
    }
    /* a source subset: every 3rd particle, some of them massless */
    uint32_t *sub = malloc(n * sizeof *sub);
    size_t ns = 0;
    for (size_t i = 0; i < n; i += 3) sub[ns++] = (uint32_t)i;
    is_int(compare_pairs(n, pos, vel, mass, sub, ns, 1e-4, 0.05, NULL), 0,
           "source subset: only its massive members count, for members and others alike");
    /* ties: a lattice, all at rest or all moving together */
    const size_t side = 6, nl = side * side * side;
    double *lat = malloc(3 * nl * sizeof *lat), *lv = calloc(3 * nl, sizeof *lv), *lm = malloc(nl * sizeof *lm);
    for (size_t i = 0; i < nl; i++) {
        lat[3 * i] = (double)(i % side); lat[3 * i + 1] = (double)(i / side % side);
        lat[3 * i + 2] = (double)(i / side / side);
        lm[i] = 1.0;
    }
    int bad = compare_pairs(nl, lat, lv, lm, NULL, 0, 0.0, 3.0, NULL);
    for (size_t i = 0; i < nl; i++) lv[3 * i] = 0.5;
    bad += compare_pairs(nl, lat, lv, lm, NULL, 0, 0.0, 3.0, NULL);
    is_int(bad, 0, "a lattice at rest and co-moving: equal taus everywhere, same minimum and lists");
    /* one and two particles; two massless */
    double p2[6] = { 0, 0, 0, 1, 0, 0 }, v2[6] = { 0, 0, 0, -1e-12, 0, 0 }, m2[2] = { 1, 1 };
    bad = compare_pairs(1, p2, v2, m2, NULL, 0, 0.0, 1.0, NULL);
    bad += compare_pairs(2, p2, v2, m2, NULL, 0, 0.0, 1e9, NULL);
    double m0[2] = { 0, 0 };
    bad += compare_pairs(2, p2, v2, m0, NULL, 0, 0.0, 1e9, NULL);
    oct_tree t;
    uint32_t *pid = subset_tree(&t, 1, p2, m2, NULL, 0);
    oct_pair_index ix;
    if (oct_pair_index_build(&ix, &t, pid, p2, v2, m2, 1)) bail("out of memory");
    oct_pair_query q = { p2, v2, m2, 1.0, 0.0, 1, 0, NULL, NULL, 0 };
    ok(bad == 0 && oct_pair_search(&ix, &q, 0, HUGE_VAL, NULL) == HUGE_VAL,
       "one particle: no source, HUGE_VAL; two (approaching at 1e-12): brute force's tau; "
       "two massless: none");
    oct_pair_index_free(&ix);
    oct_tree_free(&t);
    free(pid);
    free(pos); free(vel); free(mass); free(sub); free(lat); free(lv); free(lm);
}

int main(void)
{
    plan(12);
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
    pair_tests();
    free(pos); free(mass); free(lat); free(lm);
    return done_testing();
}
