/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_abi13.c — holds a plugin to the ABI 1.3 contract (the end of
 * ABI.md; gravplug.h): gp_outputs.pair_step_even and nb_step_even,
 * set_source_groups and compute_field_ex. Part of the conformance program
 * (conformance.c).
 *
 * What "equal" means here, against an O(N^2) reference in this file
 * (sources in index order, long double sums):
 *   - pair_step_even: min over the sources of min(tau(r, v), tau(r, -v)),
 *     tau Huayno's timestep_ij (conformance_abi12.c's transcription): the
 *     same bits on exact plugins, never above it on others;
 *   - nn, nn_dist2 and every neighbour list (by radius, by step, by the
 *     even step, their union): exactly the reference, on every plugin;
 *   - acc and pot with groups or at points: within the plugin's class
 *     tolerance of the reference that skips the target's group (and the
 *     excluded particle); without groups compute_forces_ex's acc and pot
 *     keep compute_forces' bits whatever 1.3 output is asked;
 *   - a gp_outputs of 1.2's size is read as 1.2's: the 1.3 members beyond
 *     it are never touched;
 *   - every rejection with a sentence, and nothing changed by one.
 * A plugin below ABI 1.3 gets one skip line with the reason.
 */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#define TAP_SHARED_STATE
#include "tap.h"
#include "testlib.h"
#include "conformance_checks.h"
#include "conformance_abi12.h"
#include "conformance_abi13.h"

static const double EPS = 0.01;

static gp_solver *solver_with_eps(void)
{
    gp_solver *s = make_solver();
    if (has_param("eps")) api->set_param(s, "eps", "0.01");
    return s;
}

static double eps2_used(void) { return has_param("eps") ? EPS * EPS : 0.0; }

/* ---- the reference --------------------------------------------------------- */

/* The particles and the rules: sources are the massive particles with
 * in_src[j] (NULL: all), minus the target's self and, with groups, the
 * sources of its group. */
typedef struct world {
    size_t n;
    const double *pos, *vel, *mass;
    const uint8_t *in_src;
    const uint32_t *group;
} world;

/* Targets: m points tx[3m] with velocities tv[3m], self[k] their
 * particle (UINT32_MAX: none). */
typedef struct targets {
    size_t m;
    const double *x, *v;
    const uint32_t *self;
} targets;

typedef struct ref13 {
    double *acc, *pot, *jerk, *nn_dist2, *step, *even;
    uint32_t *nn;
    uint64_t *offset;
    uint32_t *list;
} ref13;

static void ref_free(ref13 *r)
{
    free(r->acc); free(r->pot); free(r->jerk); free(r->nn_dist2); free(r->step); free(r->even);
    free(r->nn); free(r->offset); free(r->list);
    memset(r, 0, sizeof *r);
}

static double even_tau(const double *xi, const double *vi, double mi, const double *xj,
                       const double *vj, double mj, double G, double eps2)
{
    double a = conf_huayno_tau(xi, vi, mi, xj, vj, mj, G, eps2);
    /* tau(r, -v): both velocities reversed reverse v_i - v_j exactly */
    double wi[3] = { -vi[0], -vi[1], -vi[2] }, wj[3] = { -vj[0], -vj[1], -vj[2] };
    double b = conf_huayno_tau(xi, wi, mi, xj, wj, mj, G, eps2);
    return b < a ? b : a;
}

static ref13 reference(const world *w, const targets *t, const double *radius, double nb_step,
                       double nb_even)
{
    ref13 r;
    const double G = 1.0, eps2 = eps2_used();
    const size_t m = t->m;
    r.acc = calloc(3 * m + 1, sizeof *r.acc);
    r.pot = calloc(m + 1, sizeof *r.pot);
    r.jerk = calloc(3 * m + 1, sizeof *r.jerk);
    r.nn_dist2 = calloc(m + 1, sizeof *r.nn_dist2);
    r.step = calloc(m + 1, sizeof *r.step);
    r.even = calloc(m + 1, sizeof *r.even);
    r.nn = calloc(m + 1, sizeof *r.nn);
    r.offset = calloc(m + 1, sizeof *r.offset);
    size_t cap = 1024, total = 0;
    r.list = malloc(cap * sizeof *r.list);
    for (size_t k = 0; k < m; ++k) {
        const uint32_t self = t->self ? t->self[k] : UINT32_MAX;
        const uint32_t gi = w->group && self != UINT32_MAX ? w->group[self] : UINT32_MAX;
        const double *xi = &t->x[3 * k], *vi = &t->v[3 * k];
        const double mi = self != UINT32_MAX ? w->mass[self] : 0.0;
        long double ax = 0, ay = 0, az = 0, ph = 0, jx = 0, jy = 0, jz = 0;
        double best = HUGE_VAL, step = HUGE_VAL, even = HUGE_VAL;
        uint32_t nn = UINT32_MAX;
        for (size_t j = 0; j < w->n; ++j) {
            if (j == self || !(w->mass[j] > 0) || (w->in_src && !w->in_src[j])) continue;
            if (gi != UINT32_MAX && w->group[j] == gi) continue;
            const double *xj = &w->pos[3 * j], *vj = &w->vel[3 * j];
            double rx = xj[0] - xi[0], ry = xj[1] - xi[1], rz = xj[2] - xi[2];
            double d2 = rx * rx + ry * ry + rz * rz;
            if (d2 < best) { best = d2; nn = (uint32_t)j; }
            double tau = conf_huayno_tau(xi, vi, mi, xj, vj, w->mass[j], G, eps2);
            double tev = even_tau(xi, vi, mi, xj, vj, w->mass[j], G, eps2);
            if (tau < step) step = tau;
            if (tev < even) even = tev;
            if ((radius && d2 < radius[k] * radius[k]) || (nb_step > 0 && tau < nb_step) ||
                (nb_even > 0 && tev < nb_even)) {
                if (total == cap) r.list = realloc(r.list, (cap *= 2) * sizeof *r.list);
                r.list[total++] = (uint32_t)j;
            }
            double r2 = d2 + eps2;
            if (!(r2 > 0)) continue;
            double vx = vj[0] - vi[0], vy = vj[1] - vi[1], vz = vj[2] - vi[2];
            long double rinv = 1.0L / sqrtl((long double)r2), rinv3 = rinv * rinv * rinv;
            long double mr3 = w->mass[j] * rinv3;
            ax += mr3 * rx; ay += mr3 * ry; az += mr3 * rz;
            ph -= w->mass[j] * rinv;
            long double c = 3.0L * ((long double)rx * vx + (long double)ry * vy +
                                    (long double)rz * vz) * rinv * rinv;
            jx += mr3 * (vx - c * rx);
            jy += mr3 * (vy - c * ry);
            jz += mr3 * (vz - c * rz);
        }
        r.acc[3 * k] = (double)(G * ax); r.acc[3 * k + 1] = (double)(G * ay);
        r.acc[3 * k + 2] = (double)(G * az);
        r.pot[k] = (double)(G * ph);
        r.jerk[3 * k] = (double)(G * jx); r.jerk[3 * k + 1] = (double)(G * jy);
        r.jerk[3 * k + 2] = (double)(G * jz);
        r.nn[k] = nn;
        r.nn_dist2[k] = best;
        r.step[k] = step;
        r.even[k] = even;
        r.offset[k + 1] = total;
    }
    return r;
}

/* ---- what a plugin gives ----------------------------------------------------- */

typedef struct got13 {
    double *acc, *pot, *jerk, *nn_dist2, *step, *even;
    uint32_t *nn;
    uint64_t *offset;
    uint32_t *list;
    size_t total;
    gp_status st;
    int jerk_ok;
    int steps;      /* the pair steps were asked */
} got13;

static void got_free(got13 *g)
{
    free(g->acc); free(g->pot); free(g->jerk); free(g->nn_dist2); free(g->step); free(g->even);
    free(g->nn); free(g->offset); free(g->list);
    memset(g, 0, sizeof *g);
}

/* One compute_forces_ex (pts NULL) or compute_field_ex (at pts) with
 * every output (steps 0: all but the pair steps), and its lists. */
static got13 run_with(gp_solver *s, const targets *pts, size_t m, const double *radius, double nb_step,
                      double nb_even, int steps)
{
    got13 g;
    memset(&g, 0, sizeof g);
    g.acc = malloc((3 * m + 1) * sizeof *g.acc);
    g.pot = malloc((m + 1) * sizeof *g.pot);
    g.jerk = malloc((3 * m + 1) * sizeof *g.jerk);
    g.nn_dist2 = malloc((m + 1) * sizeof *g.nn_dist2);
    g.step = malloc((m + 1) * sizeof *g.step);
    g.even = malloc((m + 1) * sizeof *g.even);
    g.nn = malloc((m + 1) * sizeof *g.nn);
    g.offset = malloc((m + 1) * sizeof *g.offset);
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = g.acc;
    o.pot = g.pot;
    o.jerk = g.jerk;
    o.nn_index = g.nn;
    o.nn_dist2 = g.nn_dist2;
    o.pair_step = steps ? g.step : NULL;
    o.pair_step_even = steps ? g.even : NULL;
    g.steps = steps;
    o.nb_radius = radius;
    o.nb_step = nb_step;
    o.nb_step_even = nb_even;
    for (int attempt = 0; attempt < 2; ++attempt) {
        g.st = pts ? api->compute_field_ex(s, m, pts->x, pts->v, pts->self, &o)
                   : api->compute_forces_ex(s, &o);
        g.jerk_ok = g.st == GP_OK && o.jerk;
        if (!(g.st == GP_ERR_UNSUPPORTED && o.jerk && !has_cap(GP_CAP_JERK))) break;
        o.jerk = NULL;   /* a plugin without jerk: everything else */
    }
    if (g.st == GP_OK && (radius || nb_step > 0 || nb_even > 0)) {
        size_t need = 0;
        gp_status st = api->get_neighbours(s, 0, g.offset, NULL, &need);
        if (st == GP_OK || st == GP_ERR_INVALID_ARGUMENT) {
            g.total = need;
            g.list = malloc((need + 1) * sizeof *g.list);
            g.st = api->get_neighbours(s, need, g.offset, g.list, &need);
        } else {
            g.st = st;
        }
    }
    return g;
}

static got13 run(gp_solver *s, const targets *pts, size_t m, const double *radius, double nb_step,
                 double nb_even)
{
    return run_with(s, pts, m, radius, nb_step, nb_even, 1);
}

static int same_u32(const uint32_t *a, const uint32_t *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof *a) == 0;
}

/* steps: the same bits on exact plugins, never above elsewhere */
static int steps_ok(const double *got, const double *ref, size_t m)
{
    for (size_t k = 0; k < m; ++k)
        if (is_exact ? memcmp(&got[k], &ref[k], sizeof got[k]) != 0 : !(got[k] <= ref[k]))
            return 0;
    return 1;
}

/* Every output of g against r: forces within the class tolerance (when
 * check_forces), the rest as the header says. */
static void judge(const got13 *g, const ref13 *r, size_t m, int check_forces, const char *what)
{
    ok(g->st == GP_OK, "%s: the call succeeds", what);
    if (g->st != GP_OK) {
        diag("  %s: %s", gp_status_name(g->st), api->last_error(NULL));
        return;
    }
    if (check_forces) close_to_ref(m, g->acc, r->acc, g->pot, r->pot, what);
    if (check_forces && g->jerk_ok) {
        tl_errstat ej = tl_relerr(m, 3, g->jerk, r->jerk);
        ok(ej.median <= tol_median * 10 && (is_exact ? ej.max : ej.p99) <= tol_high * 10,
           "%s: jerk within the class tolerance", what);
        diag("  jerk relative error: median %.3g, 99%% %.3g, max %.3g", ej.median, ej.p99, ej.max);
    }
    ok(same_u32(g->nn, r->nn, m) && same_bits(g->nn_dist2, r->nn_dist2, m),
       "%s: nn_index and nn_dist2 exactly the brute force", what);
    if (g->steps) {
        ok(steps_ok(g->step, r->step, m), "%s: pair_step %s the brute force", what,
           is_exact ? "bit for bit" : "never above");
        ok(steps_ok(g->even, r->even, m), "%s: pair_step_even %s the brute force", what,
           is_exact ? "bit for bit" : "never above");
        int le = 1;
        for (size_t k = 0; k < m; ++k) le &= g->even[k] <= g->step[k];
        ok(le, "%s: pair_step_even <= pair_step for every target", what);
    }
    if (g->list)
        ok(g->total == r->offset[m] && memcmp(g->offset, r->offset, (m + 1) * sizeof *g->offset) == 0 &&
           same_u32(g->list, r->list, g->total),
           "%s: the lists (radius, step, even step) exactly the brute force (%zu entries, %llu "
           "expected)", what, g->total, (unsigned long long)r->offset[m]);
}

/* ---- the tests -------------------------------------------------------------- */

typedef struct setup {
    size_t n;
    double *pos, *vel, *mass, *acc0, *t;
    gp_solver *s;
} setup;

/* A Plummer set (every 10th massless) with random velocities, as the
 * plugin's held state at t = 0. */
static setup make_setup(size_t n, uint64_t seed)
{
    setup u;
    u.n = n;
    u.pos = malloc(3 * n * sizeof *u.pos);
    u.vel = malloc(3 * n * sizeof *u.vel);
    u.acc0 = calloc(3 * n, sizeof *u.acc0);
    u.mass = malloc(n * sizeof *u.mass);
    u.t = calloc(n, sizeof *u.t);
    make_set(n, seed, u.pos, u.mass);
    tl_rng r = {seed + 1};
    for (size_t i = 0; i < 3 * n; ++i) u.vel[i] = 0.6 * tl_uniform(&r) - 0.3;
    u.s = solver_with_eps();
    gp_status a = api->set_particles(u.s, n, u.pos, u.mass);
    gp_status b = api->set_state(u.s, n, NULL, u.pos, u.vel, u.acc0, u.t);
    ok(a == GP_OK && b == GP_OK, "set_particles and set_state of %zu particles", n);
    return u;
}

static void setup_free(setup *u)
{
    api->finalize(u->s);
    free(u->pos); free(u->vel); free(u->mass); free(u->acc0); free(u->t);
}

static targets active_targets(const setup *u, size_t m, const uint32_t *act, double **x, double **v,
                              uint32_t **self)
{
    *x = malloc((3 * m + 1) * sizeof **x);
    *v = malloc((3 * m + 1) * sizeof **v);
    *self = malloc((m + 1) * sizeof **self);
    for (size_t k = 0; k < m; ++k) {
        size_t i = act ? act[k] : k;
        memcpy(&(*x)[3 * k], &u->pos[3 * i], 3 * sizeof **x);
        memcpy(&(*v)[3 * k], &u->vel[3 * i], 3 * sizeof **v);
        (*self)[k] = (uint32_t)i;
    }
    targets t = { m, *x, *v, *self };
    return t;
}

static double median_of(const double *v, size_t m)
{
    double *c = malloc(m * sizeof *c);
    memcpy(c, v, m * sizeof *c);
    qsort(c, m, sizeof *c, tl_cmp_double);
    double x = c[m / 2];
    free(c);
    return x;
}

/* The even step and its lists without groups: acc and pot keep
 * compute_forces' bits; the rest against the reference. */
static void test_even(setup *u)
{
    const size_t n = u->n;
    double *a0 = malloc(3 * n * sizeof *a0), *p0 = malloc(n * sizeof *p0);
    ok(api->compute_forces(u->s, a0, p0) == GP_OK, "even: compute_forces for the bits");
    double *x, *v;
    uint32_t *self;
    targets t = active_targets(u, n, NULL, &x, &v, &self);
    world w = { n, u->pos, u->vel, u->mass, NULL, NULL };
    ref13 r0 = reference(&w, &t, NULL, 0, 0);
    double st_med = median_of(r0.step, n), ev_med = median_of(r0.even, n);
    ref_free(&r0);
    double *rad = malloc(n * sizeof *rad);
    for (size_t i = 0; i < n; ++i) rad[i] = i % 3 ? 0.05 : 0.0;
    ref13 r = reference(&w, &t, rad, 0.05 * st_med, 0.2 * ev_med);
    got13 g = run(u->s, NULL, n, rad, 0.05 * st_med, 0.2 * ev_med);
    judge(&g, &r, n, 0, "even, all active");
    ok(g.st == GP_OK && same_bits(g.acc, a0, 3 * n) && same_bits(g.pot, p0, n),
       "even: acc and pot are compute_forces' bits");
    got13 g2 = run(u->s, NULL, n, rad, 0.05 * st_med, 0.2 * ev_med);
    ok(g2.st == GP_OK && same_bits(g.even, g2.even, n) && g.total == g2.total &&
       same_u32(g.list, g2.list, g.total), "even: bit-identical run after run");
    if (has_param("threads")) {
        api->set_param(u->s, "threads", "3");
        got13 g3 = run(u->s, NULL, n, rad, 0.05 * st_med, 0.2 * ev_med);
        ok(g3.st == GP_OK && same_bits(g.even, g3.even, n) && same_bits(g.step, g3.step, n) &&
           g.total == g3.total && same_u32(g.list, g3.list, g.total),
           "even: the same bits on 3 threads");
        api->set_param(u->s, "threads", "0");
        got_free(&g3);
    }
    got_free(&g2);
    got_free(&g);
    ref_free(&r);
    /* lists by the even step alone */
    r = reference(&w, &t, NULL, 0, 0.3 * ev_med);
    g = run(u->s, NULL, n, NULL, 0, 0.3 * ev_med);
    judge(&g, &r, n, 0, "lists by nb_step_even alone");
    got_free(&g);
    ref_free(&r);
    free(x); free(v); free(self); free(rad); free(a0); free(p0);
}

/* A gp_outputs of ABI 1.2's size: the members beyond it are never read
 * (poison there would be refused or written through). */
static void test_short_outputs(setup *u)
{
    const size_t n = u->n;
    double *a = malloc(3 * n * sizeof *a), *b = malloc(3 * n * sizeof *b);
    double *s1 = malloc(n * sizeof *s1), *s2 = malloc(n * sizeof *s2);
    gp_outputs full;
    memset(&full, 0, sizeof full);
    full.struct_size = sizeof full;
    full.acc = a;
    full.pair_step = s1;
    gp_status st1 = api->compute_forces_ex(u->s, &full);
    gp_outputs shrt;
    memset(&shrt, 0, sizeof shrt);
    shrt.struct_size = offsetof(gp_outputs, nb_step) + sizeof shrt.nb_step;
    shrt.acc = b;
    shrt.pair_step = s2;
    shrt.pair_step_even = (double *)(uintptr_t)8;   /* beyond struct_size: poison */
    shrt.nb_step_even = -1.0;                      /* would be refused if read */
    gp_status st2 = api->compute_forces_ex(u->s, &shrt);
    ok(st1 == GP_OK && st2 == GP_OK && same_bits(a, b, 3 * n) && same_bits(s1, s2, n),
       "a 1.2-sized gp_outputs works, its 1.3 members unread (compute_forces_ex)");
    double pt[3] = { 0.1, 0.2, 0.3 }, pv[3] = { 0, 0, 0 };
    st2 = api->compute_field_ex(u->s, 1, pt, pv, NULL, &shrt);
    ok(st2 == GP_OK, "a 1.2-sized gp_outputs works in compute_field_ex");
    free(a); free(b); free(s1); free(s2);
}

/* Groups: against the brute force that skips the target's group, with
 * subsets; cleared again by NULL and by set_particles. */
static void test_groups(setup *u)
{
    const size_t n = u->n;
    uint32_t *grp = malloc(n * sizeof *grp);
    for (size_t i = 0; i < n; ++i) grp[i] = i % 5 == 3 ? UINT32_MAX : (uint32_t)((i * 7) % 11);
    gp_status st = api->set_source_groups(u->s, n, grp);
    ok(st == GP_OK, "set_source_groups(%zu groups)", n);
    if (st != GP_OK) diag("  %s", api->last_error(u->s));
    double *x, *v;
    uint32_t *self;
    world w = { n, u->pos, u->vel, u->mass, NULL, grp };
    targets t = active_targets(u, n, NULL, &x, &v, &self);
    double *rad = malloc(n * sizeof *rad);
    for (size_t i = 0; i < n; ++i) rad[i] = i % 2 ? 0.08 : 0.0;
    ref13 r0 = reference(&w, &t, NULL, 0, 0);
    double st_med = median_of(r0.step, n), ev_med = median_of(r0.even, n);
    ref_free(&r0);
    ref13 r = reference(&w, &t, rad, 0.1 * st_med, 0.1 * ev_med);
    got13 g = run(u->s, NULL, n, rad, 0.1 * st_med, 0.1 * ev_med);
    judge(&g, &r, n, 1, "groups, all active");
    {   /* compute_forces follows the groups too, as compute_forces_ex does */
        double *ga = malloc(3 * n * sizeof *ga), *gp = malloc(n * sizeof *gp);
        ok(g.st == GP_OK && api->compute_forces(u->s, ga, gp) == GP_OK && same_bits(ga, g.acc, 3 * n) &&
           same_bits(gp, g.pot, n), "groups: compute_forces gives compute_forces_ex's acc and pot");
        free(ga); free(gp);
    }
    got_free(&g); ref_free(&r);
    free(x); free(v); free(self);

    /* with active and source subsets */
    uint32_t *act = malloc(n * sizeof *act), *src = malloc(n * sizeof *src);
    uint8_t *in = calloc(n, 1);
    size_t m = 0, ns = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i % 3 == 1) act[m++] = (uint32_t)(n - 1 - i);
        if (i % 4 != 2) { src[ns++] = (uint32_t)(n - 1 - i); in[n - 1 - i] = 1; }
    }
    int sub_ok = api->set_active_subset(u->s, m, act) == GP_OK &&
                 api->set_source_subset(u->s, ns, src) == GP_OK;
    ok(sub_ok, "groups: active subset of %zu, source subset of %zu", m, ns);
    w.in_src = in;
    if (sub_ok) {   /* (else, out of memory say, the plugin's targets are not these) */
        t = active_targets(u, m, act, &x, &v, &self);
        r = reference(&w, &t, rad, 0.1 * st_med, 0.1 * ev_med);
        g = run(u->s, NULL, m, rad, 0.1 * st_med, 0.1 * ev_med);
        judge(&g, &r, m, 1, "groups with active and source subsets");
        got_free(&g); ref_free(&r);
        /* points under groups and subsets: a point feels the rule as the
         * particle it excludes would */
        r = reference(&w, &t, rad, 0.1 * st_med, 0);
        g = run(u->s, &t, m, rad, 0.1 * st_med, 0);
        judge(&g, &r, m, 1, "compute_field_ex at the active particles, groups and subsets");
        got_free(&g); ref_free(&r);
        free(x); free(v); free(self);
    }
    ok(api->set_active_subset(u->s, 0, NULL) == GP_OK && api->set_source_subset(u->s, 0, NULL) == GP_OK,
       "groups: all active, all sources again");

    /* one group for all: no source at all */
    for (size_t i = 0; i < n; ++i) grp[i] = 4;
    ok(api->set_source_groups(u->s, n, grp) == GP_OK, "set_source_groups: every particle in group 4");
    g = run(u->s, NULL, n, NULL, 0, 0);
    int none = g.st == GP_OK;
    for (size_t k = 0; k < n && none; ++k)
        none = g.acc[3 * k] == 0 && g.acc[3 * k + 1] == 0 && g.acc[3 * k + 2] == 0 &&
               g.nn[k] == UINT32_MAX && g.nn_dist2[k] == HUGE_VAL && g.step[k] == HUGE_VAL &&
               g.even[k] == HUGE_VAL;
    ok(none, "one group for all: acc 0, no nearest source, infinite steps");
    got_free(&g);

    /* cleared: compute_forces' bits again */
    double *a0 = malloc(3 * n * sizeof *a0), *a1 = malloc(3 * n * sizeof *a1);
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = a1;
    ok(api->set_source_groups(u->s, 0, NULL) == GP_OK && api->compute_forces(u->s, a0, NULL) == GP_OK &&
       api->compute_forces_ex(u->s, &o) == GP_OK && same_bits(a0, a1, 3 * n),
       "set_source_groups(NULL) clears them: compute_forces' bits again");
    /* set_particles clears them too */
    for (size_t i = 0; i < n; ++i) grp[i] = (uint32_t)(i % 2);
    double *a2 = malloc(3 * n * sizeof *a2);
    ok(api->set_source_groups(u->s, n, grp) == GP_OK && api->set_particles(u->s, n, u->pos, u->mass) == GP_OK &&
       api->compute_forces(u->s, a0, NULL) == GP_OK && api->compute_forces_ex(u->s, &o) == GP_OK &&
       same_bits(a0, a1, 3 * n) && api->set_source_groups(u->s, 0, NULL) == GP_OK,
       "set_particles clears the groups");
    api->set_state(u->s, n, NULL, u->pos, u->vel, u->acc0, u->t);
    free(a0); free(a1); free(a2);
    free(act); free(src); free(in); free(rad); free(grp);
}

/* compute_field_ex at points: on particles (excluding them, or not),
 * duplicates, anywhere; the held state unchanged. */
static void test_points(setup *u)
{
    const size_t n = u->n, m = 40;
    double *x = malloc(3 * m * sizeof *x), *v = malloc(3 * m * sizeof *v);
    uint32_t *ex = malloc(m * sizeof *ex);
    tl_rng rng = {1307};
    for (size_t k = 0; k < m; ++k) {
        size_t i = (k * 37) % n;
        if (k % 4 == 0) {           /* on particle i, excluding it */
            memcpy(&x[3 * k], &u->pos[3 * i], 3 * sizeof *x);
            memcpy(&v[3 * k], &u->vel[3 * i], 3 * sizeof *v);
            ex[k] = (uint32_t)i;
        } else if (k % 4 == 1) {    /* the previous point again, excluding none */
            memcpy(&x[3 * k], &x[3 * (k - 1)], 3 * sizeof *x);
            memcpy(&v[3 * k], &v[3 * (k - 1)], 3 * sizeof *v);
            ex[k] = UINT32_MAX;
        } else if (k % 4 == 2) {    /* a duplicate of the point before last */
            memcpy(&x[3 * k], &x[3 * (k - 2)], 3 * sizeof *x);
            memcpy(&v[3 * k], &v[3 * (k - 2)], 3 * sizeof *v);
            ex[k] = ex[k - 2];
        } else {                    /* anywhere, excluding some particle */
            for (int d = 0; d < 3; ++d) {
                x[3 * k + d] = 2.0 * tl_uniform(&rng) - 1.0;
                v[3 * k + d] = 0.4 * tl_uniform(&rng) - 0.2;
            }
            ex[k] = (uint32_t)((k * 11) % n);
        }
    }
    double *p0 = malloc(3 * n * sizeof *p0), *p1 = malloc(3 * n * sizeof *p1);
    double *v0 = malloc(3 * n * sizeof *v0), *v1 = malloc(3 * n * sizeof *v1);
    double *a0 = malloc(3 * n * sizeof *a0), *a1 = malloc(3 * n * sizeof *a1);
    api->get_positions(u->s, n, NULL, p0);
    api->get_velocities(u->s, n, NULL, v0);
    api->compute_forces(u->s, a0, NULL);
    world w = { n, u->pos, u->vel, u->mass, NULL, NULL };
    targets t = { m, x, v, ex };
    double rad[40];
    for (size_t k = 0; k < m; ++k) rad[k] = k % 2 ? 0.1 : 0.0;
    ref13 r = reference(&w, &t, rad, 0.02, 0.02);
    got13 g = run(u->s, &t, m, rad, 0.02, 0.02);
    judge(&g, &r, m, 1, "compute_field_ex at 40 points (on particles, duplicates, anywhere)");
    int dup = g.st == GP_OK;
    for (size_t k = 2; k < m && dup; k += 4)
        dup = same_bits(&g.acc[3 * k], &g.acc[3 * (k - 2)], 3) && g.step[k] == g.step[k - 2];
    ok(dup, "compute_field_ex: duplicate points get the same bits");
    got_free(&g); ref_free(&r);
    /* every point excluding none, and NULL exclude: the same */
    for (size_t k = 0; k < m; ++k) ex[k] = UINT32_MAX;
    r = reference(&w, &t, NULL, 0, 0);
    got13 ga = run(u->s, &t, m, NULL, 0, 0);
    targets tn = { m, x, v, NULL };
    got13 gb = run(u->s, &tn, m, NULL, 0, 0);
    judge(&ga, &r, m, 1, "compute_field_ex excluding none");
    ok(ga.st == GP_OK && gb.st == GP_OK && same_bits(ga.acc, gb.acc, 3 * m) &&
       same_bits(ga.even, gb.even, m), "compute_field_ex: exclude NULL is every point excluding none");
    /* compute_field agrees (no exclusion, no groups) */
    double *fa = malloc(3 * m * sizeof *fa);
    if (api->compute_field(u->s, m, x, fa, NULL) == GP_OK)
        close_to_ref(m, ga.acc, fa, NULL, NULL, "compute_field_ex against compute_field");
    free(fa);
    got_free(&ga); got_free(&gb); ref_free(&r);
    /* velocities NULL when nothing needs them */
    double *acc = malloc(3 * m * sizeof *acc);
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = acc;
    ok(api->compute_field_ex(u->s, m, x, NULL, NULL, &o) == GP_OK,
       "compute_field_ex: vel NULL with acc alone");
    ok(api->compute_field_ex(u->s, 0, NULL, NULL, NULL, &o) == GP_OK,
       "compute_field_ex: n = 0 (pos NULL) is an empty call");
    free(acc);
    api->get_positions(u->s, n, NULL, p1);
    api->get_velocities(u->s, n, NULL, v1);
    api->compute_forces(u->s, a1, NULL);
    ok(same_bits(p0, p1, 3 * n) && same_bits(v0, v1, 3 * n) && same_bits(a0, a1, 3 * n),
       "compute_field_ex leaves the held state as it was (positions, velocities, forces)");
    free(x); free(v); free(ex); free(p0); free(p1); free(v0); free(v1); free(a0); free(a1);
}

/* compute_field_ex with what a GRAPE-6 call asks (acc, pot, jerk, the
 * nearest source, lists by radius; no pair steps), at points on particles
 * excluding them and anywhere, over more sources than one chunk of a
 * direct kernel: the brute force's outputs, and the same bits with 1 and
 * 3 OpenMP threads. */
static void test_points_grape6(size_t n)
{
    setup u = make_setup(n, 1309);
    const size_t m = 48;
    double *x = malloc(3 * m * sizeof *x), *v = malloc(3 * m * sizeof *v), rad[48];
    uint32_t *ex = malloc(m * sizeof *ex);
    tl_rng rng = {1311};
    for (size_t k = 0; k < m; ++k) {
        size_t i = (k * 53) % n;
        if (k % 3 != 2) {   /* on particle i, excluding it */
            memcpy(&x[3 * k], &u.pos[3 * i], 3 * sizeof *x);
            memcpy(&v[3 * k], &u.vel[3 * i], 3 * sizeof *v);
            ex[k] = (uint32_t)i;
        } else {
            for (int d = 0; d < 3; ++d) {
                x[3 * k + d] = 2.0 * tl_uniform(&rng) - 1.0;
                v[3 * k + d] = 0.4 * tl_uniform(&rng) - 0.2;
            }
            ex[k] = UINT32_MAX;
        }
        rad[k] = 0.05 + 0.1 * (double)(k % 4);
    }
    world w = { n, u.pos, u.vel, u.mass, NULL, NULL };
    targets t = { m, x, v, ex };
    ref13 r = reference(&w, &t, rad, 0, 0);
    char what[96];
    snprintf(what, sizeof what, "compute_field_ex with GRAPE-6's outputs, %zu sources", n);
    omp_set_num_threads(1);
    got13 g1 = run_with(u.s, &t, m, rad, 0, 0, 0);
    omp_set_num_threads(3);
    got13 g3 = run_with(u.s, &t, m, rad, 0, 0, 0);
    omp_set_num_threads(omp_get_num_procs());
    judge(&g1, &r, m, 1, what);
    ok(g1.st == GP_OK && g3.st == GP_OK && same_bits(g1.acc, g3.acc, 3 * m) && same_bits(g1.pot, g3.pot, m) &&
       (!g1.jerk_ok || same_bits(g1.jerk, g3.jerk, 3 * m)) && same_u32(g1.nn, g3.nn, m) &&
       g1.total == g3.total && same_u32(g1.list, g3.list, g1.total),
       "%s: the same bits with 1 and 3 OpenMP threads", what);
    got_free(&g1); got_free(&g3); ref_free(&r);
    /* a call of a few points (what a client's small block sends; a tree
     * plugin may sum those exactly): the same outputs */
    targets t5 = { 5, x, v, ex };
    for (int lists = 0; lists < 2; ++lists) {
        r = reference(&w, &t5, lists ? rad : NULL, 0, 0);
        snprintf(what, sizeof what, "compute_field_ex with GRAPE-6's outputs at 5 points%s, %zu sources",
                 lists ? "" : " (no lists)", n);
        g1 = run_with(u.s, &t5, 5, lists ? rad : NULL, 0, 0, 0);
        judge(&g1, &r, 5, 1, what);
        got_free(&g1); ref_free(&r);
    }
    /* exclude NULL: no point excludes a particle */
    for (size_t k = 0; k < m; ++k) ex[k] = UINT32_MAX;
    r = reference(&w, &t, rad, 0, 0);
    targets tn = { m, x, v, NULL };
    snprintf(what, sizeof what, "compute_field_ex with GRAPE-6's outputs, exclude NULL, %zu sources", n);
    g1 = run_with(u.s, &tn, m, rad, 0, 0, 0);
    judge(&g1, &r, m, 1, what);
    got_free(&g1); ref_free(&r);
    free(x); free(v); free(ex);
    setup_free(&u);
}

/* compute_field_ex at points that exclude a heavy particle far from them,
 * in a tight clump whose cell a tree would accept as a whole: the
 * exclusion must hold all the same (a tree opens every cell that holds
 * an excluded particle), so the points feel the clump without it. */
static void test_points_far_exclusion(void)
{
    const size_t nb = 380, nc = 20, n = nb + nc, m = 12;
    double *pos = malloc(3 * n * sizeof *pos), *vel = calloc(3 * n, sizeof *vel);
    double *mass = malloc(n * sizeof *mass), *acc0 = calloc(3 * n, sizeof *acc0);
    double *t0 = calloc(n, sizeof *t0);
    make_set(nb, 1313, pos, mass);
    tl_rng rng = {1317};
    for (size_t i = nb; i < n; ++i) {   /* the clump at (8, 0, 0), the last particle heavy */
        for (int d = 0; d < 3; ++d) pos[3 * i + d] = (d == 0 ? 8.0 : 0.0) + 0.05 * tl_uniform(&rng);
        mass[i] = i == n - 1 ? 50.0 : 1.0 / (double)n;
    }
    gp_solver *s = solver_with_eps();
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->set_state(s, n, NULL, pos, vel, acc0, t0) == GP_OK,
       "set_particles and set_state: a sphere and a far clump with one heavy particle");
    double x[3 * 12], v[3 * 12], rad[12];
    uint32_t ex[12];
    for (size_t k = 0; k < m; ++k) {   /* in the sphere, each excluding the heavy particle */
        for (int d = 0; d < 3; ++d) {
            x[3 * k + d] = 0.6 * tl_uniform(&rng) - 0.3;
            v[3 * k + d] = 0.0;
        }
        ex[k] = (uint32_t)(n - 1);
        rad[k] = 0.2;
    }
    world w = { n, pos, vel, mass, NULL, NULL };
    targets tg = { m, x, v, ex };
    ref13 r = reference(&w, &tg, rad, 0, 0);
    got13 g = run_with(s, &tg, m, rad, 0, 0, 0);
    judge(&g, &r, m, 1, "compute_field_ex excluding a heavy particle in a far clump");
    got_free(&g); ref_free(&r);
    api->finalize(s);
    free(pos); free(vel); free(mass); free(acc0); free(t0);
}

/* Every rejection with a sentence, and nothing changed by one. */
static void test_rejections13(setup *u)
{
    const size_t n = u->n;
    gp_solver *fresh = solver_with_eps();
    uint32_t g1[1] = {0};
    double pt[6] = { 0.1, 0.2, 0.3, 0.0, 0.0, 0.0 }, pv[6] = {0}, acc[6], step[2];
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = acc;
    rejects(api->set_source_groups(fresh, 1, g1), GP_ERR_BAD_STATE, fresh,
            "set_source_groups before set_particles");
    rejects(api->compute_field_ex(fresh, 1, pt, pv, NULL, &o), GP_ERR_BAD_STATE, fresh,
            "compute_field_ex before set_particles");
    api->finalize(fresh);
    rejects(api->set_source_groups(NULL, 1, g1), GP_ERR_INVALID_ARGUMENT, NULL,
            "set_source_groups(NULL instance)");
    rejects(api->compute_field_ex(NULL, 1, pt, pv, NULL, &o), GP_ERR_INVALID_ARGUMENT, NULL,
            "compute_field_ex(NULL instance)");

    gp_solver *s = u->s;
    double *a0 = malloc(3 * n * sizeof *a0), *a1 = malloc(3 * n * sizeof *a1);
    api->compute_forces(s, a0, NULL);
    uint32_t *grp = malloc(n * sizeof *grp);
    for (size_t i = 0; i < n; ++i) grp[i] = (uint32_t)(i % 3);
    rejects(api->set_source_groups(s, n - 1, grp), GP_ERR_INVALID_ARGUMENT, s,
            "set_source_groups with n not the particle count");
    gp_outputs bad = o;
    bad.nb_step_even = -1.0;
    rejects(api->compute_forces_ex(s, &bad), GP_ERR_INVALID_ARGUMENT, s, "compute_forces_ex, nb_step_even -1");
    bad.nb_step_even = NAN;
    rejects(api->compute_forces_ex(s, &bad), GP_ERR_INVALID_ARGUMENT, s, "compute_forces_ex, nb_step_even NaN");
    rejects(api->compute_field_ex(s, 2, pt, pv, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, nb_step_even NaN");
    rejects(api->compute_field_ex(s, 2, pt, pv, NULL, NULL), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, out NULL");
    bad = o;
    bad.struct_size = offsetof(gp_outputs, pair_step);
    rejects(api->compute_field_ex(s, 2, pt, pv, NULL, &bad), GP_ERR_ABI_MISMATCH, s,
            "compute_field_ex, struct_size short of 1.2's");
    bad = o;
    bad.acc = NULL;
    rejects(api->compute_field_ex(s, 2, pt, pv, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, acc NULL");
    rejects(api->compute_field_ex(s, 2, NULL, pv, NULL, &o), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, pos NULL with n = 2");
    double nanpt[6] = { 0.1, NAN, 0.3, 0, 0, 0 }, infv[6] = { 0, 0, 0, 0, INFINITY, 0 };
    rejects(api->compute_field_ex(s, 2, nanpt, pv, NULL, &o), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, a point not finite");
    bad = o;
    bad.pair_step = step;
    rejects(api->compute_field_ex(s, 2, pt, infv, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, a velocity not finite");
    rejects(api->compute_field_ex(s, 2, pt, NULL, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, vel NULL with pair_step");
    bad = o;
    bad.pair_step_even = step;
    rejects(api->compute_field_ex(s, 2, pt, NULL, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, vel NULL with pair_step_even");
    bad = o;
    bad.jerk = a1;
    rejects(api->compute_field_ex(s, 2, pt, NULL, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, vel NULL with jerk");
    bad = o;
    bad.nb_step_even = 0.1;
    rejects(api->compute_field_ex(s, 2, pt, NULL, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, vel NULL with nb_step_even");
    uint32_t exb[2] = { 0, (uint32_t)n };
    rejects(api->compute_field_ex(s, 2, pt, pv, exb, &o), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, exclude out of range");
    double negr[2] = { 0.1, -1.0 };
    bad = o;
    bad.nb_radius = negr;
    rejects(api->compute_field_ex(s, 2, pt, pv, NULL, &bad), GP_ERR_INVALID_ARGUMENT, s,
            "compute_field_ex, a negative nb_radius");
    /* nothing changed: the same forces, no groups */
    ok(api->compute_forces(s, a1, NULL) == GP_OK && same_bits(a0, a1, 3 * n),
       "the rejections changed nothing (compute_forces' bits)");
    free(a0); free(a1); free(grp);
}

void test_abi13(void)
{
    if (api->abi_minor < 3 ||
        api->struct_size < offsetof(gp_api, compute_field_ex) + sizeof api->compute_field_ex) {
        ok((api->capabilities & GP_CAP_SOURCE_GROUPS) == 0,
           "an ABI 1.%u plugin claims no 1.3 capability bit", (unsigned)api->abi_minor);
        char why[160];
        snprintf(why, sizeof why, "the plugin speaks ABI 1.%u (abi_minor %u, struct_size %zu): "
                 "the 1.3 checks do not apply", (unsigned)api->abi_minor,
                 (unsigned)api->abi_minor, api->struct_size);
        skip(1, why);
        return;
    }
    int all = GRAVPLUG_API_HAS(api, set_source_groups) && GRAVPLUG_API_HAS(api, compute_field_ex);
    ok(all, "ABI 1.%u: every 1.3 function pointer is set, within struct_size %zu",
       (unsigned)api->abi_minor, api->struct_size);
    if (!all) return;
    setup u = make_setup(quick ? 300 : 1000, 1301);
    test_rejections13(&u);
    test_short_outputs(&u);
    test_even(&u);
    test_groups(&u);
    test_points(&u);
    setup_free(&u);
    test_points_grape6(quick ? 1500 : 3000);
    test_points_far_exclusion();
}
