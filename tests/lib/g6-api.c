/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6-api.c — libgravplug-g6 against an O(N^2) reference of GRAPE-6's
 * formulas, on the plugin named by GRAVPLUG_G6_PLUGIN (the wrappers of
 * host_stub/g6/module.mk run it on every CPU plugin and the emulated
 * cuda-direct). The reference predicts j-particles with GRAPE-6's
 * predictor (x + dt v + dt^2 a2 + dt^3 j6, v + 2 dt a2 + 3 dt^2 j6), sums
 * acc, jerk, pot over addresses [0, nj) whose index is not the
 * i-particle's, and finds the nearest neighbour (by index) and the lists
 * (|r|^2 < h2, sorted by index) by brute force, massless j-particles
 * (every 37th) included as GRAPE-6 lists them. Cases: nj < N, eps2
 * changes, j updates between calls, later times, j-memory growing past
 * its first allocation, repeated i-indices, field points (index -1),
 * list overflow, and the error returns. GP_G6_TEST_REL: the tolerance on
 * acc/jerk/pot relative to the magnitude (default 1e-10; the tree
 * wrappers loosen it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "g6.h"
#include "tap.h"
#include "testlib.h"

#define NMAX 1600

static double X[NMAX][3], V[NMAX][3], A2[NMAX][3], J6[NMAX][3], T[NMAX], M[NMAX];
static int IDX[NMAX];
static int n_j; /* addresses written */
static double rel_tol = 1e-10;
static int clid = 0;

static int set_j_failures;

static void set_j(int a)
{
    double k18[3] = {0, 0, 0}, dtj = 1.0 / 64;
    if (g6_set_j_particle_(&clid, &a, &IDX[a], &T[a], &dtj, &M[a], k18, J6[a], A2[a], V[a], X[a]) != 0 &&
        set_j_failures++ < 3)
        diag("g6_set_j_particle of address %d failed", a);
}

static void make_particle(tl_rng *r, int a, double t0)
{
    double p[3], m;
    tl_plummer(1, tl_next(r), 1.0, 8.0, p, &m);
    for (int k = 0; k < 3; ++k) {
        X[a][k] = p[k];
        V[a][k] = 0.3 * (tl_uniform(r) - 0.5);
        A2[a][k] = 0.1 * (tl_uniform(r) - 0.5);
        J6[a][k] = 0.05 * (tl_uniform(r) - 0.5);
    }
    T[a] = t0 - 0.01 * tl_uniform(r);
    M[a] = a % 37 == 5 ? 0.0 : (0.5 + tl_uniform(r)) / 800.0; /* some massless */
    IDX[a] = 1000 + 7 * a; /* not the address: the library must map */
}

static void predict(int a, double ti, double *xp, double *vp)
{
    double dt = ti - T[a];
    for (int k = 0; k < 3; ++k) {
        xp[k] = X[a][k] + dt * V[a][k] + dt * dt * A2[a][k] + dt * dt * dt * J6[a][k];
        vp[k] = V[a][k] + 2 * dt * A2[a][k] + 3 * dt * dt * J6[a][k];
    }
}

typedef struct ref_out {
    double acc[3], jerk[3], pot;
    int nn;
    double nn_d2;
    int nlist, list[NMAX];
} ref_out;

static void reference(int nj, double ti, int index, const double *xi, const double *vi, double eps2, double h2,
                      ref_out *o)
{
    memset(o, 0, sizeof *o);
    o->nn = -1;
    o->nn_d2 = INFINITY;
    for (int a = 0; a < nj; ++a) {
        if (IDX[a] == index) continue;
        double xp[3], vp[3], r[3], w[3];
        predict(a, ti, xp, vp);
        double d2 = 0, rv = 0;
        for (int k = 0; k < 3; ++k) {
            r[k] = xp[k] - xi[k];
            w[k] = vp[k] - vi[k];
            d2 += r[k] * r[k];
            rv += r[k] * w[k];
        }
        double r2 = d2 + eps2, rinv = 1 / sqrt(r2), rinv3 = rinv * rinv * rinv;
        for (int k = 0; k < 3; ++k) {
            o->acc[k] += M[a] * r[k] * rinv3;
            o->jerk[k] += M[a] * (w[k] * rinv3 - 3 * rv * r[k] * rinv3 * rinv * rinv);
        }
        o->pot -= M[a] * rinv;
        /* by distance alone: massless j-particles are neighbours too */
        if (d2 < o->nn_d2) {
            o->nn_d2 = d2;
            o->nn = IDX[a];
        }
        if (d2 < h2) o->list[o->nlist++] = IDX[a];
    }
    for (int p = 1; p < o->nlist; ++p) /* insertion sort by index */
        for (int q = p; q > 0 && o->list[q - 1] > o->list[q]; --q) {
            int t = o->list[q];
            o->list[q] = o->list[q - 1];
            o->list[q - 1] = t;
        }
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* One g6calc of ni i-particles against the reference; returns failures. */
static int check_call(const char *what, int nj, double ti, int ni, const int *index, double (*xi)[3],
                      double (*vi)[3], double eps2, const double *h2, int want_lists)
{
    static double acc[NMAX][3], jerk[NMAX][3], pot[NMAX], aold[NMAX][3], jold[NMAX][3];
    static int inn[NMAX];
    static ref_out ref;
    g6_set_ti_(&clid, &ti);
    g6calc_firsthalf_(&clid, &nj, &ni, (int *)index, xi, vi, aold, jold, pot, &eps2, (double *)h2);
    int rc = g6calc_lasthalf2_(&clid, &nj, &ni, (int *)index, xi, vi, &eps2, (double *)h2, acc, jerk, pot, inn);
    if (!ok(rc == 0, "%s: g6calc_lasthalf2 returns 0", what)) return 1;
    int bad_f = 0, bad_nn = 0, bad_l = 0;
    double worst = 0;
    int nmax = 0;
    for (int k = 0; k < ni; ++k) {
        reference(nj, ti, index[k], xi[k], vi[k], eps2, h2 ? h2[k] : 0, &ref);
        double ea = 0, ej = 0, ep;
        double sa = norm3(ref.acc), sj = norm3(ref.jerk);
        for (int d = 0; d < 3; ++d) {
            ea = fmax(ea, fabs(acc[k][d] - ref.acc[d]) / (sa > 0 ? sa : 1));
            ej = fmax(ej, fabs(jerk[k][d] - ref.jerk[d]) / (sj > 0 ? sj : 1));
        }
        ep = fabs(pot[k] - ref.pot) / (ref.pot != 0 ? fabs(ref.pot) : 1);
        double e = fmax(ea, fmax(ej, ep));
        if (e > worst) worst = e;
        if (e > rel_tol && bad_f++ < 3)
            diag("%s: i %d (index %d): acc err %.3g jerk err %.3g pot err %.3g", what, k, index[k], ea, ej, ep);
        if (inn[k] != ref.nn && bad_nn++ < 3)
            diag("%s: i %d (index %d): nn %d, want %d", what, k, index[k], inn[k], ref.nn);
        if (want_lists) {
            static int list[NMAX];
            int nb = -1, maxl = NMAX, pipe = k;
            int lr = g6_get_neighbour_list_(&clid, &pipe, &maxl, &nb, list);
            int same = lr == 0 && nb == ref.nlist && (nb == 0 || memcmp(list, ref.list, (size_t)nb * sizeof(int)) == 0);
            if (!same && bad_l++ < 3)
                diag("%s: i %d: list of %d (rc %d), want %d", what, k, nb, lr, ref.nlist);
            if (ref.nlist > nmax) nmax = ref.nlist;
        }
    }
    int fails = 0;
    fails += !ok(bad_f == 0, "%s: acc, jerk, pot of %d i-particles within %g of the reference (worst %.3g)", what,
                 ni, rel_tol, worst);
    fails += !ok(bad_nn == 0, "%s: nearest neighbours by index", what);
    if (want_lists) fails += !ok(bad_l == 0, "%s: neighbour lists sorted by index (longest %d)", what, nmax);
    return fails;
}

static int ni_of(int nj0, int n, int *index, double (*xi)[3], double (*vi)[3], double ti, int first)
{
    int m = 0;
    for (int a = first; a < n && m < nj0; ++a, ++m) {
        index[m] = IDX[a];
        predict(a, ti, xi[m], vi[m]);
    }
    return m;
}

int main(void)
{
    const char *plugin = getenv("GRAVPLUG_G6_PLUGIN");
    if (!plugin) skip_all("GRAVPLUG_G6_PLUGIN names no plugin");
    if (getenv("GP_G6_TEST_REL")) rel_tol = atof(getenv("GP_G6_TEST_REL"));
    plan_lazy();

    /* which route the library takes: compute_field_ex where it exists */
    {
        gp_plugin *p;
        char err[1024];
        if (gp_plugin_open(plugin, &p, err, sizeof err) != GP_OK) bail(err);
        const gp_api *api = gp_plugin_api(p);
        const char *forced = getenv("GRAVPLUG_G6_ROUTE");
        int field = GRAVPLUG_API_HAS(api, compute_field_ex) && !(forced && strcmp(forced, "held") == 0);
        diag("plugin %s (ABI %u.%u): the %s route", api->name, api->abi_major, api->abi_minor,
             field ? "compute_field_ex" : "held-slot");
        ok(1, "route: %s", field ? "field (compute_field_ex)" : "held slots (ABI 1.1/1.2)");
        gp_plugin_close(p);
    }

    /* errors come back as return codes, never as a crash */
    {
        double t = 0;
        ok(g6_set_ti_(&clid, &t) == -1, "g6_set_ti before g6_open returns -1");
        setenv("GRAVPLUG_G6_PLUGIN", "no-such-plugin-g6", 1);
        char *policy = getenv("OMP_WAIT_POLICY") ? strdup(getenv("OMP_WAIT_POLICY")) : NULL;
        unsetenv("OMP_WAIT_POLICY");
        int id = 0;
        ok(g6_open_(&id) == -1, "g6_open of a missing plugin returns -1");
        const char *now = getenv("OMP_WAIT_POLICY");
        ok(now && strcmp(now, "passive") == 0, "g6_open sets OMP_WAIT_POLICY=passive where it is unset (%s)",
           now ? now : "unset");
        setenv("OMP_WAIT_POLICY", "active", 1);
        ok(g6_open_(&id) == -1 && strcmp(getenv("OMP_WAIT_POLICY"), "active") == 0,
           "g6_open leaves an OMP_WAIT_POLICY the environment set");
        if (policy) setenv("OMP_WAIT_POLICY", policy, 1);
        else unsetenv("OMP_WAIT_POLICY");
        free(policy);
        setenv("GRAVPLUG_G6_PLUGIN", plugin, 1);
    }

    setenv("GRAVPLUG_G6_NBMAX", "8", 1);
    int id = 0;
    if (!ok(g6_open_(&id) == 0, "g6_open")) bail("g6_open failed");
    int npipes = g6_npipes_();
    ok(npipes == 256, "g6_npipes = %d", npipes);
    ok(get_device_count() >= 1, "get_device_count");

    tl_rng r = {12345};
    int n = 600;
    for (int a = 0; a < n; ++a) make_particle(&r, a, 0.0);
    for (int a = 0; a < n; ++a) set_j(a);
    n_j = n;

    static int index[NMAX];
    static double xi[NMAX][3], vi[NMAX][3], h2[NMAX];
    double eps2 = 1e-4, ti = 0.0;
    for (int k = 0; k < NMAX; ++k) h2[k] = 0.04;

    /* all i against all j, in pipes */
    int fails = 0;
    for (int first = 0; first < n; first += npipes) {
        int ni = ni_of(npipes, n, index, xi, vi, ti, first);
        char what[64];
        snprintf(what, sizeof what, "t=0 all j, i from %d", first);
        fails += check_call(what, n, ti, ni, index, xi, vi, eps2, h2, 1);
    }

    /* nj < N: the sources are addresses [0, nj); i from both sides */
    int ni = ni_of(npipes, n, index, xi, vi, ti, 300);
    fails += check_call("nj = 400", 400, ti, ni, index, xi, vi, eps2, h2, 1);

    /* eps2 changes */
    fails += check_call("eps2 = 0.01", 400, ti, ni, index, xi, vi, 0.01, h2, 1);

    /* j updates between calls, and a later time */
    for (int a = 0; a < n; a += 5) {
        make_particle(&r, a, 0.02);
        IDX[a] = 1000 + 7 * a;
        set_j(a);
    }
    ti = 0.03125;
    ni = ni_of(npipes, n, index, xi, vi, ti, 0);
    fails += check_call("after j updates, t = 1/32", n, ti, ni, index, xi, vi, eps2, h2, 1);

    /* j-memory grows past its first allocation */
    for (int a = n; a < 1500; ++a) make_particle(&r, a, ti);
    for (int a = n; a < 1500; ++a) set_j(a);
    n = 1500;
    ti = 0.0625;
    ni = ni_of(npipes, n, index, xi, vi, ti, 1300);
    fails += check_call("grown to 1500", n, ti, ni, index, xi, vi, eps2, h2, 1);

    /* repeated i-indices and field points (index -1) in one call */
    ni = ni_of(8, n, index, xi, vi, ti, 10);
    for (int k = 8; k < 16; ++k) {
        index[k] = index[k % 3];
        memcpy(xi[k], xi[k % 3], sizeof xi[k]);
        memcpy(vi[k], vi[k % 3], sizeof vi[k]);
    }
    for (int k = 16; k < 20; ++k) {
        index[k] = -1;
        for (int d = 0; d < 3; ++d) xi[k][d] = 0.1 * k - 1.5 + 0.01 * d, vi[k][d] = 0.0;
    }
    fails += check_call("repeated indices and field points", n, ti, 20, index, xi, vi, eps2, h2, 1);

    /* nj = 0: no sources, no neighbours */
    {
        int nj0 = 0, n4 = 4;
        double acc[4][3], jerk[4][3], pot[4];
        int inn[4];
        ni = ni_of(4, n, index, xi, vi, ti, 0);
        int rc = g6calc_lasthalf2_(&clid, &nj0, &n4, index, xi, vi, &eps2, h2, acc, jerk, pot, inn);
        int zero = 1;
        for (int k = 0; k < 4; ++k)
            zero &= acc[k][0] == 0 && acc[k][1] == 0 && acc[k][2] == 0 && jerk[k][0] == 0 && pot[k] == 0 &&
                    inn[k] == -1;
        ok(rc == 0 && zero, "nj = 0: zero acc, jerk and pot, no nearest neighbour");
    }

    /* no lists without h2 > 0 */
    ni = ni_of(16, n, index, xi, vi, ti, 0);
    fails += check_call("h2 = 0", n, ti, ni, index, xi, vi, eps2, NULL, 0);
    ok(g6_read_neighbour_list_(&clid) == -1, "g6_read_neighbour_list without lists returns -1");

    /* overflow: lists longer than nbmax (8 here), and than maxlength */
    for (int k = 0; k < ni; ++k) h2[k] = 1.0;
    fails += check_call("h2 = 1", n, ti, ni, index, xi, vi, eps2, h2, 1);
    ok(g6_read_neighbour_list_(&clid) == 1, "g6_read_neighbour_list reports the overflow past nbmax");
    {
        int pipe = 0, maxl = 2, nb = -1, list[2], rc = -1;
        for (pipe = 0; pipe < ni && nb <= 2; ++pipe) rc = g6_get_neighbour_list_(&clid, &pipe, &maxl, &nb, list);
        ok(rc == 1 && nb > 2, "g6_get_neighbour_list: 1 past maxlength, n_neighbours %d the full count", nb);
        pipe = ni;
        ok(g6_get_neighbour_list_(&clid, &pipe, &maxl, &nb, list) == -1, "a pipe past ni returns -1");
    }
    for (int k = 0; k < ni; ++k) h2[k] = 1e-3;
    fails += check_call("h2 = 1e-3", n, ti, ni, index, xi, vi, eps2, h2, 1);
    ok(g6_read_neighbour_list_(&clid) == 0, "g6_read_neighbour_list: 0 within nbmax");

    /* bad calls: refused with -1, the library still works after */
    {
        int big = npipes + 1, nj = n;
        ok(g6calc_lasthalf_(&clid, &nj, &big, index, xi, vi, &eps2, h2, xi, vi, h2) == -1, "ni > npipes: -1");
        double bad = NAN;
        int a = 3;
        double k18[3] = {0}, dtj = 0;
        ok(g6_set_j_particle_(&clid, &a, &IDX[a], &T[a], &dtj, &bad, k18, J6[a], A2[a], V[a], X[a]) == -1,
           "a NaN mass: -1");
        double save = X[a][0];
        X[a][0] = NAN;
        set_j(a); /* accepted into j-memory; the plugin refuses it at the next call */
        ni = ni_of(16, n, index, xi, vi, ti, 20); /* the i-particles stay finite */
        int ni16 = ni;
        double acc[16][3], jerk[16][3], pot[16];
        ok(g6calc_lasthalf_(&clid, &nj, &ni16, index, xi, vi, &eps2, NULL, acc, jerk, pot) == -1,
           "a NaN j-position: the call returns -1");
        X[a][0] = save;
        set_j(a);
        fails += check_call("after the refusals", n, ti, ni, index, xi, vi, eps2, NULL, 0);
    }

    /* g6_reset forgets j-memory: a smaller set replaces it */
    ok(g6_reset_(&clid) == 0, "g6_reset");
    for (int a = 0; a < 100; ++a) set_j(a);
    ni = ni_of(npipes, 100, index, xi, vi, ti, 0);
    fails += check_call("after g6_reset, 100 particles", 100, ti, ni, index, xi, vi, eps2, NULL, 0);

    ok(g6_close_(&clid) == 0, "g6_close");
    ok(g6_set_ti_(&clid, &ti) == -1, "calls after g6_close return -1");
    ok(set_j_failures == 0, "every g6_set_j_particle of a valid particle returned 0");
    diag("%d comparison failures", fails);
    return done_testing();
}
