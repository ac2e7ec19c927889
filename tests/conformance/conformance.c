/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance.c — holds ONE plugin to the whole gravplug ABI contract.
 *
 *     conformance PLUGIN   (a path, or a short name such as cpu-direct)
 *
 * Prints TAP. Every plugin the build produces is run through it by
 * `make test` (build/t/conformance-NAME.t), CPU plugins also under
 * valgrind (build/t/valgrind-NAME.t) with GP_CONFORMANCE_QUICK=1, which
 * shrinks the particle counts and cycle counts so it finishes quickly.
 *
 * Accuracy is judged by the plugin's capabilities, against a naive double
 * sum in tests/testlib.h (independent of every plugin):
 *   GP_CAP_EXACT, double precision (no `precision` parameter, or it reads
 *     "double"): per-particle relative error <= 1e-10;
 *   GP_CAP_EXACT otherwise (float interactions): median <= 1e-6,
 *     max <= 1e-4;
 *   approximate (GP_CAP_TREE, at its defaults): median <= 1e-2,
 *     99th percentile <= 1e-1.
 * "Equal" for the active-subset and update checks means bit-identical for
 * exact plugins and within the class tolerance for approximate ones.
 *
 * A GPU plugin whose init fails with GP_ERR_DEVICE makes the whole program
 * print `1..0 # SKIP <the plugin's sentence>`.
 *
 * The ABI 1.1 calls are judged in conformance_abi11.c (skipped, with the
 * reason, for a plugin that speaks 1.0 only), the 1.2 ones in
 * conformance_abi12.c (skipped for a plugin below 1.2); the plugin under test, its
 * class and the checks both parts use are in conformance_checks.c.
 */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
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
#include "conformance_abi11.h"
#include "conformance_abi12.h"
#include "conformance_abi13.h"

/* ---- 1. the table and its parameters ----------------------------------- */

static void test_table(const char *path)
{
    ok(api->abi_major == GRAVPLUG_ABI_MAJOR, "abi_major is %d", GRAVPLUG_ABI_MAJOR);
    ok(api->struct_size >= offsetof(gp_api, last_error) + sizeof api->last_error,
       "struct_size %zu covers the 1.0 table", api->struct_size);
    ok(api->name && api->name[0], "name is set ('%s')", api->name ? api->name : "");
    ok(api->version && api->version[0], "version is set ('%s')", api->version ? api->version : "");
    ok((api->capabilities & ~(uint64_t)0x1fff) == 0, "capabilities use only defined bits");
    ok(has_cap(GP_CAP_EXACT) != has_cap(GP_CAP_TREE), "exactly one of EXACT and TREE is set");
    ok(api->describe_params && api->init && api->finalize && api->set_param && api->get_param &&
       api->set_particles && api->update_positions && api->set_active_subset &&
       api->compute_forces && api->compute_field && api->get_stats && api->last_error,
       "every function pointer is set");
    (void)path;
}

static void test_describe_params(void)
{
    size_t n = 999;
    const gp_param_info *p = api->describe_params(&n);
    ok(p != NULL || n == 0, "describe_params returns %zu parameters", n);
    int good = 1;
    for (size_t k = 0; k < n && p; ++k) {
        int e = p[k].name && p[k].name[0] && p[k].default_value && p[k].doc && p[k].doc[0] &&
                (int)p[k].type >= 0 && (int)p[k].type <= 3 &&
                (p[k].type != GP_PARAM_ENUM || (p[k].allowed && p[k].allowed[0]));
        if (!e) diag("parameter %zu ('%s') lacks a name, default, doc or enum words",
                     k, p[k].name ? p[k].name : "(NULL)");
        good &= e;
    }
    ok(good, "every parameter has a name, a default, a doc line (and enum words)");
}

static void test_init_rejections(void)
{
    gp_solver *s = (gp_solver *)&s; /* poison: must become NULL */
    gp_init_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof(size_t); /* smaller than the first layout */
    a.device = -1;
    gp_status st = api->init(&s, &a);
    rejects(st, GP_ERR_ABI_MISMATCH, NULL, "init with struct_size smaller than the 1.0 layout");
    ok(s == NULL, "failed init sets *out to NULL");

    gp_param bad = {"no_such_parameter_xyz", "1"};
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.params = &bad;
    a.n_params = 1;
    a.device = -1;
    s = (gp_solver *)&s;
    st = api->init(&s, &a);
    rejects(st, GP_ERR_UNKNOWN_PARAMETER, NULL, "init with an unknown parameter");
    ok(s == NULL, "failed init sets *out to NULL");
    if (s && s != (gp_solver *)&s) api->finalize(s);

    a.params = NULL;
    a.n_params = 2;
    s = (gp_solver *)&s;
    st = api->init(&s, &a);
    rejects(st, GP_ERR_INVALID_ARGUMENT, NULL, "init with n_params = 2 and params = NULL");
    if (s && s != (gp_solver *)&s) api->finalize(s);

    if (has_param("eps")) {
        gp_param e = {"eps", "-1"};
        a.params = &e;
        a.n_params = 1;
        s = NULL;
        st = api->init(&s, &a);
        rejects(st, GP_ERR_INVALID_ARGUMENT, NULL, "init with eps = -1");
        if (s) api->finalize(s);
    }

    /* A good init with args and a log callback. */
    gp_param g = {has_param("eps") ? "eps" : NULL, "0.25"};
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.params = g.name ? &g : NULL;
    a.n_params = g.name ? 1 : 0;
    a.device = -1;
    s = NULL;
    st = api->init(&s, &a);
    ok(st == GP_OK && s, "init with explicit args succeeds");
    if (s && g.name) {
        char buf[64];
        st = api->get_param(s, "eps", buf, sizeof buf);
        ok(st == GP_OK && strtod(buf, NULL) == 0.25, "init's params are applied (eps = '%s')", buf);
    }
    api->finalize(s);
    api->finalize(NULL);
    ok(1, "finalize(NULL) is a no-op");
}

/* A value outside a range "[lo,hi)" etc., or NULL when unbounded. */
static const char *out_of_range(const char *allowed, char *buf, size_t len)
{
    double lo, hi;
    char lb, hb;
    if (!allowed || sscanf(allowed, " %c", &lb) != 1 || (lb != '[' && lb != '(')) return NULL;
    const char *c = strchr(allowed, ',');
    if (!c) return NULL;
    lo = strtod(allowed + 1, NULL);
    hi = strtod(c + 1, NULL);
    hb = allowed[strlen(allowed) - 1];
    if (isfinite(lo) && strncmp(allowed + 1, "-inf", 4) != 0) {
        snprintf(buf, len, "%.17g", lb == '(' ? lo : lo - 1.0);
        return buf;
    }
    if (isfinite(hi) && strncmp(c + 1, "inf", 3) != 0) {
        snprintf(buf, len, "%.17g", hb == ')' ? hi : hi + 1.0);
        return buf;
    }
    return NULL;
}

static void test_params(gp_solver *s)
{
    size_t n = 0;
    const gp_param_info *p = api->describe_params(&n);
    char buf[256], again[256], before[256];
    int all_rt = 1, all_default = 1;
    for (size_t k = 0; k < n; ++k) {
        gp_status st = api->get_param(s, p[k].name, buf, sizeof buf);
        if (st != GP_OK) { all_rt = 0; diag("get_param('%s') failed: %s", p[k].name, api->last_error(s)); continue; }
        st = api->set_param(s, p[k].name, buf);
        if (st != GP_OK) { all_rt = 0; diag("set_param('%s', '%s') failed: %s", p[k].name, buf, api->last_error(s)); continue; }
        api->get_param(s, p[k].name, again, sizeof again);
        if (strcmp(buf, again) != 0) { all_rt = 0; diag("'%s': '%s' came back as '%s'", p[k].name, buf, again); }
        st = api->set_param(s, p[k].name, p[k].default_value);
        if (st != GP_OK) { all_default = 0; diag("default '%s' of '%s' rejected: %s", p[k].default_value, p[k].name, api->last_error(s)); }
    }
    ok(all_rt, "get_param's answer round-trips through set_param for every parameter");
    ok(all_default, "every described default is accepted by set_param");

    rejects(api->set_param(s, "no_such_parameter_xyz", "1"), GP_ERR_UNKNOWN_PARAMETER, s,
            "set_param with an unknown name");
    rejects(api->get_param(s, "no_such_parameter_xyz", buf, sizeof buf), GP_ERR_UNKNOWN_PARAMETER, s,
            "get_param with an unknown name");
    if (n > 0) {
        rejects(api->get_param(s, p[0].name, buf, 1), GP_ERR_INVALID_ARGUMENT, s,
                "get_param with a 1-byte buffer");
        rejects(api->set_param(s, p[0].name, NULL), GP_ERR_INVALID_ARGUMENT, s,
                "set_param with a NULL value");
    }
    rejects(api->set_param(s, NULL, "1"), GP_ERR_INVALID_ARGUMENT, s, "set_param with a NULL name");

    for (size_t k = 0; k < n; ++k) {
        api->get_param(s, p[k].name, before, sizeof before);
        char what[300];
        snprintf(what, sizeof what, "set_param('%s', 'banana')", p[k].name);
        rejects(api->set_param(s, p[k].name, "banana"), GP_ERR_INVALID_ARGUMENT, s, what);
        if (p[k].type == GP_PARAM_DOUBLE) {
            snprintf(what, sizeof what, "set_param('%s', 'nan')", p[k].name);
            rejects(api->set_param(s, p[k].name, "nan"), GP_ERR_INVALID_ARGUMENT, s, what);
        }
        if (p[k].type == GP_PARAM_DOUBLE || p[k].type == GP_PARAM_INT) {
            char v[64];
            const char *bad = out_of_range(p[k].allowed, v, sizeof v);
            if (bad) {
                snprintf(what, sizeof what, "set_param('%s', '%s') outside %s", p[k].name, bad, p[k].allowed);
                rejects(api->set_param(s, p[k].name, bad), GP_ERR_INVALID_ARGUMENT, s, what);
            }
        }
        api->get_param(s, p[k].name, again, sizeof again);
        ok(strcmp(before, again) == 0, "'%s' unchanged by the rejected values ('%s')", p[k].name, again);
    }
}

/* ---- 2. call order and input rejections -------------------------------- */

static void test_before_particles(gp_solver *s)
{
    double pos[3] = {0, 0, 0}, acc[3], pot[1];
    rejects(api->compute_forces(s, acc, pot), GP_ERR_BAD_STATE, s, "compute_forces before set_particles");
    rejects(api->compute_field(s, 1, pos, acc, pot), GP_ERR_BAD_STATE, s, "compute_field before set_particles");
    rejects(api->update_positions(s, pos), GP_ERR_BAD_STATE, s, "update_positions before set_particles");
}

/* Forces of the current state into acc/pot (n_out entries). */
static gp_status forces(gp_solver *s, double *acc, double *pot)
{
    return api->compute_forces(s, acc, pot);
}

static void test_rejections(void)
{
    const size_t n = quick ? 64 : 500;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *acc0 = malloc(3 * n * sizeof *acc0), *pot0 = malloc(n * sizeof *pot0);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *bad = malloc(3 * n * sizeof *bad), *badm = malloc(n * sizeof *badm);
    make_set(n, 11, pos, mass);

    gp_solver *s = make_solver();
    const char *fresh = api->last_error(s);
    ok(fresh && fresh[0] == '\0', "a fresh instance's last_error is \"\"");
    test_before_particles(s);
    ok(api->set_particles(s, n, pos, mass) == GP_OK, "set_particles(%zu) succeeds", n);
    uint32_t act[5] = {7, 3, 41, 0, 19};
    ok(api->set_active_subset(s, 5, act) == GP_OK, "set_active_subset(5) succeeds");
    ok(forces(s, acc0, pot0) == GP_OK, "compute_forces succeeds");

    /* After every rejection the same compute must give the same bits. */
#define UNCHANGED(what)                                                                 \
    do {                                                                                \
        gp_status st_ = forces(s, acc, pot);                                            \
        ok(st_ == GP_OK && same_bits(acc, acc0, 15) &&                                  \
               (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot, pot0, 5)),                 \
           "  ... and the instance is unchanged and usable after %s", what);             \
    } while (0)

    rejects(api->set_particles(s, 0, pos, mass), GP_ERR_INVALID_ARGUMENT, s, "set_particles with n = 0");
    UNCHANGED("n = 0");
    rejects(api->set_particles(s, n, NULL, mass), GP_ERR_INVALID_ARGUMENT, s, "set_particles with pos = NULL");
    UNCHANGED("pos = NULL");
    rejects(api->set_particles(s, n, pos, NULL), GP_ERR_INVALID_ARGUMENT, s, "set_particles with mass = NULL");
    UNCHANGED("mass = NULL");

    const double nan = NAN, inf = INFINITY;
    struct { const char *what; size_t at; double v; int in_mass; } cases[] = {
        {"a NaN position", 3 * (n - 1) + 2, nan, 0},
        {"an infinite position", 4, inf, 0},
        {"a -inf position", 0, -inf, 0},
        {"a NaN mass", n / 2, nan, 1},
        {"an infinite mass", 1, inf, 1},
        {"a negative mass", n - 1, -1e-3, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        memcpy(bad, pos, 3 * n * sizeof *bad);
        memcpy(badm, mass, n * sizeof *badm);
        if (cases[c].in_mass) badm[cases[c].at] = cases[c].v;
        else bad[cases[c].at] = cases[c].v;
        char what[200];
        snprintf(what, sizeof what, "set_particles with %s", cases[c].what);
        rejects(api->set_particles(s, n, bad, badm), GP_ERR_INVALID_ARGUMENT, s, what);
        UNCHANGED(cases[c].what);
        if (!cases[c].in_mass) {
            snprintf(what, sizeof what, "update_positions with %s", cases[c].what);
            rejects(api->update_positions(s, bad), GP_ERR_INVALID_ARGUMENT, s, what);
            UNCHANGED(what);
        }
    }
    rejects(api->update_positions(s, NULL), GP_ERR_INVALID_ARGUMENT, s, "update_positions with NULL");
    UNCHANGED("update_positions(NULL)");

    uint32_t out_of_range[3] = {1, (uint32_t)n, 2};
    rejects(api->set_active_subset(s, 3, out_of_range), GP_ERR_INVALID_ARGUMENT, s,
            "set_active_subset with an index == n");
    UNCHANGED("an out-of-range index");
    uint32_t huge[1] = {UINT32_MAX};
    rejects(api->set_active_subset(s, 1, huge), GP_ERR_INVALID_ARGUMENT, s,
            "set_active_subset with index UINT32_MAX");
    UNCHANGED("index UINT32_MAX");
    uint32_t repeated[4] = {5, 9, 2, 9};
    rejects(api->set_active_subset(s, 4, repeated), GP_ERR_INVALID_ARGUMENT, s,
            "set_active_subset with a repeated index");
    UNCHANGED("a repeated index");
    /* the indices of the refused lists (their check marks) leave no trace */
    uint32_t again[5] = {9, 5, 2, 1, 0};
    ok(api->set_active_subset(s, 5, again) == GP_OK && api->set_active_subset(s, 5, act) == GP_OK,
       "the indices of the refused lists are accepted in the next one");
    UNCHANGED("accepting them");
    /* a plugin may remember the last list that passed (a block step hands
     * the same one to several calls): a changed list, or the same one
     * after set_particles with fewer particles, is still checked */
    uint32_t kept[4] = {4, 6, 8, 3};
    ok(api->set_active_subset(s, 4, kept) == GP_OK, "set_active_subset({4, 6, 8, 3}) succeeds");
    kept[3] = 6;
    rejects(api->set_active_subset(s, 4, kept), GP_ERR_INVALID_ARGUMENT, s,
            "the same array with its last index changed into a repeated one");
    rejects(api->set_active_subset(s, 5, (uint32_t[5]){4, 6, 8, 3, 4}), GP_ERR_INVALID_ARGUMENT, s,
            "the accepted list with a repeated index appended");
    kept[3] = 3;
    ok(api->set_active_subset(s, 4, kept) == GP_OK && api->set_particles(s, 5, pos, mass) == GP_OK,
       "the list accepted again, then set_particles(5)");
    rejects(api->set_active_subset(s, 4, kept), GP_ERR_INVALID_ARGUMENT, s,
            "the list accepted before set_particles(5), now with indices >= 5");
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->set_active_subset(s, 5, act) == GP_OK,
       "set_particles(%zu) and the first active subset again", n);
    UNCHANGED("the lists checked again");
    rejects(api->set_active_subset(s, 3, NULL), GP_ERR_INVALID_ARGUMENT, s,
            "set_active_subset(3, NULL)");
    UNCHANGED("set_active_subset(3, NULL)");

    rejects(api->compute_forces(s, NULL, pot), GP_ERR_INVALID_ARGUMENT, s, "compute_forces with acc = NULL");
    UNCHANGED("acc = NULL");
    double pt[6] = {0.1, 0.2, 0.3, 1, 2, 3}, fa[6], fp[2];
    rejects(api->compute_field(s, 0, pt, fa, fp), GP_ERR_INVALID_ARGUMENT, s, "compute_field with m = 0");
    rejects(api->compute_field(s, 2, NULL, fa, fp), GP_ERR_INVALID_ARGUMENT, s, "compute_field with points = NULL");
    rejects(api->compute_field(s, 2, pt, NULL, fp), GP_ERR_INVALID_ARGUMENT, s, "compute_field with acc = NULL");
    pt[4] = nan;
    rejects(api->compute_field(s, 2, pt, fa, fp), GP_ERR_INVALID_ARGUMENT, s, "compute_field with a NaN point");
    pt[4] = inf;
    rejects(api->compute_field(s, 2, pt, fa, fp), GP_ERR_INVALID_ARGUMENT, s, "compute_field with an infinite point");
    UNCHANGED("the rejected compute_field calls");

    /* get_stats: NULL rejected; a short struct gets only what fits. */
    gp_stats st1;
    ok(api->get_stats(s, NULL) != GP_OK && api->last_error(s)[0], "get_stats(NULL) is rejected with a sentence");
    memset(&st1, 0xAB, sizeof st1);
    st1.struct_size = offsetof(gp_stats, field_calls);
    gp_status gst = api->get_stats(s, &st1);
    uint64_t canary;
    memset(&canary, 0xAB, sizeof canary);
    ok(gst == GP_OK && st1.force_calls >= 1 && st1.field_calls == canary &&
       st1.struct_size == offsetof(gp_stats, field_calls),
       "get_stats fills only the members inside a short struct_size");
    gp_stats full = {.struct_size = sizeof full};
    api->get_stats(s, &full);
    uint64_t before_calls = full.force_calls;
    forces(s, acc, pot);
    api->compute_forces(s, NULL, pot); /* fails: not counted */
    api->get_stats(s, &full);
    ok(full.force_calls == before_calls + 1, "force_calls counts successful compute_forces only (%llu -> %llu)",
       (unsigned long long)before_calls, (unsigned long long)full.force_calls);
    ok(full.pp_interactions + full.pc_interactions > 0, "interactions are counted (%llu pp, %llu pc)",
       (unsigned long long)full.pp_interactions, (unsigned long long)full.pc_interactions);
    uint64_t field_before = full.field_calls;
    double fpt[3] = {0.5, 0.5, 0.5}, facc[3];
    api->compute_field(s, 1, fpt, facc, NULL);
    api->get_stats(s, &full);
    ok(full.field_calls == field_before + 1, "field_calls counts compute_field");
    /* compute_field leaves the active subset alone */
    double *big = malloc((3 * n) * sizeof *big);
    for (size_t k = 0; k < 3 * n; ++k) big[k] = 12345.0;
    ok(forces(s, big, NULL) == GP_OK && big[15] == 12345.0 && same_bits(big, acc0, 15),
       "compute_field leaves the active subset alone (pot = NULL accepted)");
    free(big);
    const char *le = api->last_error(s);
    ok(le != NULL, "last_error is never NULL");
    api->finalize(s);
#undef UNCHANGED
    free(pos); free(mass); free(acc0); free(pot0); free(acc); free(pot); free(bad); free(badm);
}

/* ---- 3. physics and semantics ------------------------------------------ */

static void test_two_body(void)
{
    gp_solver *s = make_solver();
    double pos[6] = {0.5, -1.0, 2.0, 0.5, 1.0, 2.0}; /* distance 2 along y */
    double mass[2] = {1.0, 3.0}, acc[6], pot[2];
    int g2 = has_param("G");
    if (g2) api->set_param(s, "G", "2");
    double G = g2 ? 2.0 : 1.0;
    ok(api->set_particles(s, 2, pos, mass) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK,
       "two-body forces computed");
    double rel = exact_double ? 1e-14 : 1e-6;
    is_double(acc[1], G * 3.0 / 4.0, rel, "two-body: a_y of particle 0 = G m1 / r^2");
    is_double(acc[4], -G * 1.0 / 4.0, rel, "two-body: a_y of particle 1 = -G m0 / r^2");
    ok(fabs(acc[0]) + fabs(acc[2]) + fabs(acc[3]) + fabs(acc[5]) <= 1e-12 * G,
       "two-body: no x or z acceleration");
    if (has_cap(GP_CAP_POTENTIAL)) {
        is_double(pot[0], -G * 3.0 / 2.0, rel, "two-body: pot of particle 0 = -G m1 / r");
        is_double(pot[1], -G * 1.0 / 2.0, rel, "two-body: pot of particle 1 = -G m0 / r");
    }
    if (has_param("eps")) {
        api->set_param(s, "eps", "1.5");
        api->compute_forces(s, acc, pot);
        /* r^2 + eps^2 = 4 + 2.25 = 6.25 = 2.5^2 */
        is_double(acc[1], G * 3.0 * 2.0 / (2.5 * 2.5 * 2.5), rel, "two-body with eps = 1.5: Plummer-softened force");
        if (has_cap(GP_CAP_POTENTIAL))
            is_double(pot[1], -G * 1.0 / 2.5, rel, "two-body with eps = 1.5: softened potential");
    }
    /* A massless test particle feels the field and sources none. */
    mass[0] = 0.0;
    api->set_param(s, "eps", "0");
    ok(api->set_particles(s, 2, pos, mass) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK,
       "a massless particle is accepted");
    ok(acc[3] == 0.0 && acc[4] == 0.0 && acc[5] == 0.0, "a massless particle exerts no force");
    is_double(acc[1], G * 3.0 / 4.0, rel, "a massless particle feels the field");
    /* One particle alone feels nothing. */
    ok(api->set_particles(s, 1, pos, mass + 1) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK &&
       acc[0] == 0.0 && acc[1] == 0.0 && acc[2] == 0.0 && (!has_cap(GP_CAP_POTENTIAL) || pot[0] == 0.0),
       "a single particle has zero acceleration and potential");
    api->finalize(s);
}

static void test_accuracy_subset_field(void)
{
    const size_t n = quick ? 300 : 3000;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *ref = malloc(3 * n * sizeof *ref), *rpot = malloc(n * sizeof *rpot);
    double *acc2 = malloc((3 * n + 3) * sizeof *acc2), *pot2 = malloc((n + 1) * sizeof *pot2);
    make_set(n, 42, pos, mass);
    const double eps = 0.01;

    gp_solver *s = make_solver();
    char epsbuf[32];
    snprintf(epsbuf, sizeof epsbuf, "%.17g", eps);
    int has_eps = has_param("eps");
    if (has_eps) api->set_param(s, "eps", epsbuf);
    ok(api->set_particles(s, n, pos, mass) == GP_OK && api->compute_forces(s, acc, pot) == GP_OK,
       "forces on %zu particles (10%% massless)", n);
    tl_ref_forces(n, pos, mass, 1.0, has_eps ? eps : 0.0, n, NULL, ref, rpot);
    close_to_ref(n, acc, ref, pot, rpot, "all active vs the naive double sum");

    /* Bit-identical reruns, on the same instance and on a fresh one. */
    api->compute_forces(s, acc2, pot2);
    ok(same_bits(acc, acc2, 3 * n) && (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot, pot2, n)),
       "a second compute_forces gives bit-identical results");
    gp_solver *s2 = make_solver();
    if (has_eps) api->set_param(s2, "eps", epsbuf);
    api->set_particles(s2, n, pos, mass);
    api->compute_forces(s2, acc2, pot2);
    ok(same_bits(acc, acc2, 3 * n) && (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot, pot2, n)),
       "a fresh instance gives bit-identical results");
    api->finalize(s2);

    /* Whatever the number of OpenMP threads. */
    int threads_same = 1;
    int counts[3] = {1, 2, 3};
    for (int t = 0; t < 3; ++t) {
        omp_set_num_threads(counts[t]);
        api->compute_forces(s, acc2, pot2);
        if (!same_bits(acc, acc2, 3 * n) || (has_cap(GP_CAP_POTENTIAL) && !same_bits(pot, pot2, n))) {
            threads_same = 0;
            diag("differs with OMP threads = %d", counts[t]);
        }
    }
    omp_set_num_threads(omp_get_num_procs());
    ok(threads_same, "bit-identical with 1, 2 and 3 OpenMP threads");

    /* Active subset: shuffled every 7th particle, including massless ones. */
    size_t na = 0;
    uint32_t *idx = malloc(n * sizeof *idx);
    for (size_t i = 3; i < n; i += 7) idx[na++] = (uint32_t)i;
    tl_rng r = {7};
    for (size_t k = na; k > 1; --k) {
        size_t j = tl_next(&r) % k;
        uint32_t t = idx[k - 1]; idx[k - 1] = idx[j]; idx[j] = t;
    }
    double *sub = malloc(3 * na * sizeof *sub), *subp = malloc(na * sizeof *subp);
    double *rsub = malloc(3 * na * sizeof *rsub), *rsubp = malloc(na * sizeof *rsubp);
    for (size_t k = 0; k < 3 * n + 3; ++k) acc2[k] = 12345.0;
    ok(api->set_active_subset(s, na, idx) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "forces on an active subset of %zu", na);
    ok(acc2[3 * na] == 12345.0, "only 3*n_active accelerations are written");
    for (size_t k = 0; k < na; ++k) {
        memcpy(&sub[3 * k], &acc[3 * (size_t)idx[k]], 3 * sizeof *sub);
        subp[k] = pot[idx[k]];
    }
    if (is_exact) {
        ok(same_bits(acc2, sub, 3 * na) && (!has_cap(GP_CAP_POTENTIAL) || same_bits(pot2, subp, na)),
           "active-subset forces equal the same entries of the all-active forces, bit for bit");
    } else {
        tl_ref_forces(n, pos, mass, 1.0, has_eps ? eps : 0.0, na, idx, rsub, rsubp);
        close_to_ref(na, acc2, rsub, pot2, rsubp, "active subset vs the naive sum");
    }
    ok(api->compute_forces(s, acc2, pot2) == GP_OK && acc2[3 * na] == 12345.0,
       "the subset stays in force for the next call");
    /* A tiny subset (a plugin may schedule it differently), any thread count. */
    if (is_exact) {
        uint32_t tiny[3] = {(uint32_t)(n - 1), 0, (uint32_t)(n / 2)};
        int tiny_same = api->set_active_subset(s, 3, tiny) == GP_OK;
        for (int t = 1; t <= 3 && tiny_same; t += 2) {
            omp_set_num_threads(t);
            tiny_same &= api->compute_forces(s, acc2, pot2) == GP_OK;
            for (int k = 0; k < 3; ++k)
                tiny_same &= same_bits(&acc2[3 * k], &acc[3 * (size_t)tiny[k]], 3) &&
                             (!has_cap(GP_CAP_POTENTIAL) || same_bits(&pot2[k], &pot[tiny[k]], 1));
        }
        omp_set_num_threads(omp_get_num_procs());
        ok(tiny_same, "a 3-particle subset equals the all-active entries bit for bit (1 and 3 threads)");
        api->set_active_subset(s, na, idx);
    }
    ok(api->set_active_subset(s, 0, NULL) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK &&
       acc2[3 * (n - 1)] != 12345.0 && (is_exact ? same_bits(acc, acc2, 3 * n) : 1),
       "set_active_subset(0, NULL) makes all particles active again");
    api->set_active_subset(s, na, idx);
    api->set_particles(s, n, pos, mass);
    for (size_t k = 0; k < 3 * n + 3; ++k) acc2[k] = 12345.0;
    ok(api->compute_forces(s, acc2, pot2) == GP_OK && acc2[3 * (n - 1)] != 12345.0,
       "set_particles resets the active subset to all particles");

    /* compute_field far away: the monopole of the centre of mass. */
    double M = 0, com[3] = {0, 0, 0}, rmax = 0;
    for (size_t i = 0; i < n; ++i) {
        M += mass[i];
        for (int c = 0; c < 3; ++c) com[c] += mass[i] * pos[3 * i + c];
        double rr = sqrt(pos[3 * i] * pos[3 * i] + pos[3 * i + 1] * pos[3 * i + 1] + pos[3 * i + 2] * pos[3 * i + 2]);
        if (rr > rmax) rmax = rr;
    }
    for (int c = 0; c < 3; ++c) com[c] /= M;
    double far[9], fa[9], fp[3];
    double dirs[3][3] = {{1, 0, 0}, {0.6, -0.8, 0}, {-0.36, 0.48, 0.8}};
    for (int k = 0; k < 3; ++k)
        for (int c = 0; c < 3; ++c) far[3 * k + c] = com[c] + 1e4 * rmax * dirs[k][c];
    ok(api->compute_field(s, 3, far, fa, fp) == GP_OK, "compute_field at 3 far points");
    int mono = 1;
    for (int k = 0; k < 3; ++k) {
        double d[3], d2 = 0;
        for (int c = 0; c < 3; ++c) { d[c] = far[3 * k + c] - com[c]; d2 += d[c] * d[c]; }
        double dr = sqrt(d2), want[3];
        for (int c = 0; c < 3; ++c) want[c] = -M * d[c] / (d2 * dr);
        tl_errstat e = tl_relerr(1, 3, &fa[3 * k], want);
        if (e.max > 1e-6) { mono = 0; diag("point %d: relative error %.3g", k, e.max); }
        if (has_cap(GP_CAP_POTENTIAL) && fabs(fp[k] - (-M / dr)) > 1e-6 * M / dr) {
            mono = 0; diag("point %d: potential %.17g, monopole %.17g", k, fp[k], -M / dr);
        }
    }
    ok(mono, "far-field acceleration (and potential) match the monopole -GM r/|r|^3 to 1e-6");

    /* compute_field on top of the particles: no self term excluded. The
     * self term adds nothing to the acceleration, and -G m_i / eps to the
     * potential. */
    if (is_exact && has_eps) {
        double *fpa = malloc(3 * n * sizeof *fpa), *fpp = malloc(n * sizeof *fpp);
        ok(api->compute_field(s, n, pos, fpa, fpp) == GP_OK, "compute_field at the %zu particle positions", n);
        tl_errstat e = tl_relerr(n, 3, fpa, acc);
        ok(e.max <= (exact_double ? 1e-12 : 1e-5), "field at a particle = its force (self term adds no acceleration), max rel %.3g", e.max);
        if (has_cap(GP_CAP_POTENTIAL)) {
            for (size_t i = 0; i < n; ++i) fpp[i] += mass[i] / eps;
            tl_errstat ep = tl_relerr(n, 1, fpp, pot);
            ok(ep.max <= (exact_double ? 1e-12 : 1e-5), "field potential at a particle includes its own -G m/eps, max rel %.3g", ep.max);
        }
        free(fpa); free(fpp);
    }

    /* update_positions: the same as set_particles with the new positions. */
    double *moved = malloc(3 * n * sizeof *moved);
    for (size_t i = 0; i < 3 * n; ++i) moved[i] = pos[i] * 1.01 + 0.002 * sin((double)i);
    ok(api->update_positions(s, moved) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "update_positions then compute_forces");
    tl_ref_forces(n, moved, mass, 1.0, has_eps ? eps : 0.0, n, NULL, ref, rpot);
    close_to_ref(n, acc2, ref, pot2, rpot, "after update_positions vs the naive sum");
    if (is_exact) {
        gp_solver *s3 = make_solver();
        if (has_eps) api->set_param(s3, "eps", epsbuf);
        api->set_particles(s3, n, moved, mass);
        api->compute_forces(s3, acc, pot);
        ok(same_bits(acc, acc2, 3 * n), "update_positions gives the same bits as set_particles");
        api->finalize(s3);
    }
    /* A move that scrambles any tree: positions permuted among particles.
     * A refitting plugin must stay right (or rebuild). */
    for (size_t i = 0; i < n; ++i) {
        size_t j = (i * 7919 + 13) % n;
        memcpy(&moved[3 * i], &pos[3 * j], 3 * sizeof *moved);
    }
    ok(api->update_positions(s, moved) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "update_positions with the positions permuted");
    tl_ref_forces(n, moved, mass, 1.0, has_eps ? eps : 0.0, n, NULL, ref, rpot);
    close_to_ref(n, acc2, ref, pot2, rpot, "after a scrambling update_positions");

    /* The same sequence of calls on a fresh instance: the same bits
     * (refit/rebuild decisions are deterministic too). */
    {
        gp_solver *s4 = make_solver();
        if (has_eps) api->set_param(s4, "eps", epsbuf);
        double *a4 = malloc(3 * n * sizeof *a4);
        double *m1 = malloc(3 * n * sizeof *m1);
        for (size_t i = 0; i < 3 * n; ++i) m1[i] = pos[i] * 1.01 + 0.002 * sin((double)i);
        int same_seq = api->set_particles(s4, n, pos, mass) == GP_OK;
        same_seq &= api->compute_forces(s4, a4, NULL) == GP_OK;
        same_seq &= api->update_positions(s4, m1) == GP_OK;
        same_seq &= api->compute_forces(s4, a4, NULL) == GP_OK;
        same_seq &= api->update_positions(s4, moved) == GP_OK;
        same_seq &= api->compute_forces(s4, a4, NULL) == GP_OK;
        ok(same_seq && same_bits(a4, acc2, 3 * n),
           "the same set/update/compute sequence on a fresh instance gives the same bits");
        api->finalize(s4);
        free(a4);
        free(m1);
    }

    /* n may change between set_particles calls. */
    ok(api->set_particles(s, n / 2, pos, mass) == GP_OK && api->compute_forces(s, acc2, pot2) == GP_OK,
       "set_particles with a different n (%zu)", n / 2);
    tl_ref_forces(n / 2, pos, mass, 1.0, has_eps ? eps : 0.0, n / 2, NULL, ref, rpot);
    close_to_ref(n / 2, acc2, ref, pot2, rpot, "after changing n");

    api->finalize(s);
    free(pos); free(mass); free(acc); free(pot); free(ref); free(rpot); free(acc2); free(pot2);
    free(idx); free(sub); free(subp); free(rsub); free(rsubp); free(moved);
}

/* ---- 4. threads, memory, symbols, extremes ------------------------------ */

typedef struct job {
    size_t n;
    const double *pos, *mass;
    double *acc, *pot;
    int reps;
    gp_status st;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    gp_solver *s = NULL;
    j->st = api->init(&s, NULL);
    if (j->st != GP_OK) return NULL;
    for (int r = 0; r < j->reps && j->st == GP_OK; ++r) {
        j->st = api->set_particles(s, j->n, j->pos, j->mass);
        if (j->st == GP_OK) j->st = api->compute_forces(s, j->acc, j->pot);
    }
    api->finalize(s);
    return NULL;
}

static void test_two_threads(void)
{
    const size_t n = quick ? 200 : 2000;
    double *pa = malloc(3 * n * sizeof *pa), *ma = malloc(n * sizeof *ma);
    double *pb = malloc(3 * n * sizeof *pb), *mb = malloc(n * sizeof *mb);
    make_set(n, 101, pa, ma);
    make_set(n, 202, pb, mb);
    double *alone[2], *apot[2], *both[2], *bpot[2];
    job jobs[2];
    for (int k = 0; k < 2; ++k) {
        alone[k] = malloc(3 * n * sizeof(double)); apot[k] = malloc(n * sizeof(double));
        both[k] = malloc(3 * n * sizeof(double)); bpot[k] = malloc(n * sizeof(double));
        jobs[k] = (job){n, k ? pb : pa, k ? mb : ma, alone[k], apot[k], 1, GP_OK};
        run_job(&jobs[k]);
        jobs[k].acc = both[k];
        jobs[k].pot = bpot[k];
        jobs[k].reps = quick ? 2 : 5;
    }
    pthread_t th[2];
    int started = pthread_create(&th[0], NULL, run_job, &jobs[0]) == 0;
    started &= pthread_create(&th[1], NULL, run_job, &jobs[1]) == 0;
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    int same = started && jobs[0].st == GP_OK && jobs[1].st == GP_OK;
    for (int k = 0; k < 2 && same; ++k)
        same = same_bits(alone[k], both[k], 3 * n) &&
               (!has_cap(GP_CAP_POTENTIAL) || same_bits(apot[k], bpot[k], n));
    ok(same, "two instances on two threads at once give the same bits as alone");
    for (int k = 0; k < 2; ++k) { free(alone[k]); free(apot[k]); free(both[k]); free(bpot[k]); }
    free(pa); free(ma); free(pb); free(mb);
}

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void test_cycles(void)
{
    const size_t n = quick ? 64 : 1000;
    const int cycles = quick ? 10 : 200, warm = quick ? 2 : 20;
    double *pos = malloc(3 * n * sizeof *pos), *mass = malloc(n * sizeof *mass);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    make_set(n, 5, pos, mass);
    size_t rss0 = 0, heap0 = 0;
    int fine = 1;
    for (int c = 0; c < cycles; ++c) {
        if (c == warm) { rss0 = tl_rss_bytes(); heap0 = heap_in_use(); }
        gp_solver *s = NULL;
        if (api->init(&s, NULL) != GP_OK) { fine = 0; break; }
        uint32_t sub[2] = {1, 3};
        fine &= api->set_particles(s, n, pos, mass) == GP_OK;
        fine &= api->compute_forces(s, acc, pot) == GP_OK;
        fine &= api->set_active_subset(s, 2, sub) == GP_OK;
        fine &= api->compute_forces(s, acc, pot) == GP_OK;
        fine &= api->compute_field(s, 2, pos, acc, pot) == GP_OK;
        api->set_param(s, "no_such_parameter_xyz", "1"); /* an error path too */
        api->finalize(s);
    }
    size_t rss1 = tl_rss_bytes(), heap1 = heap_in_use();
    ok(fine, "%d init/set_particles/compute/finalize cycles succeed", cycles);
    if (tl_under_valgrind() || tl_sanitized()) {
        skip(1, tl_sanitized() ? "AddressSanitizer's quarantine keeps freed memory: valgrind's runs measure "
                                 "the growth"
                               : "memory growth is measured by valgrind's leak check here");
    } else {
        long long drss = (long long)rss1 - (long long)rss0, dheap = (long long)heap1 - (long long)heap0;
        ok(dheap <= 256 * 1024 && drss <= 4 * 1024 * 1024,
           "no memory growth over %d cycles (heap %+lld bytes, RSS %+lld bytes)",
           cycles - warm, dheap, drss);
    }
    free(pos); free(mass); free(acc); free(pot);
}

static void test_exports(const char *path)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s' 2>/dev/null", path);
    FILE *f = popen(cmd, "r");
    if (!f) { skip(1, "nm is not available"); return; }
    char line[1024];
    int entry = 0, others = 0;
    while (fgets(line, sizeof line, f)) {
        char addr[64], type[8], name[900];
        if (sscanf(line, "%63s %7s %899s", addr, type, name) != 3) continue;
        char *at = strchr(name, '@');
        if (at) *at = '\0';
        if (strcmp(name, "gravplug_entry") == 0) entry = 1;
        else { ++others; diag("also exported: %s", name); }
    }
    int rc = pclose(f);
    if (rc != 0 && !entry) { skip(1, "nm -D failed on the plugin"); return; }
    ok(entry && others == 0, "nm -D --defined-only lists gravplug_entry alone");
}

static void test_extremes(void)
{
    gp_solver *s = make_solver();
    const size_t n = 40;
    double pos[3 * 40], mass[40], acc[3 * 40], pot[40];
    make_set(n, 9, pos, mass);
    for (size_t i = 0; i < n; ++i) mass[i] = 1.0 / n;
    pos[0] = 1e30; pos[1] = -1e30; pos[2] = 1e30;  /* one particle very far out */
    pos[3] = pos[6]; pos[4] = pos[7]; pos[5] = pos[8]; /* two coincident particles */
    gp_status st = api->set_particles(s, n, pos, mass);
    if (st == GP_OK) st = api->compute_forces(s, acc, pot);
    int finite = 1;
    for (size_t i = 3; i < 3 * n && st == GP_OK; ++i) finite &= isfinite(acc[i]) != 0;
    ok((st == GP_OK && finite) || (st != GP_OK && api->last_error(s)[0]),
       "a particle at 1e30 and two coincident particles: finite forces or a clear refusal (%s)",
       gp_status_name(st));
    if (st == GP_OK) {
        double ref[3 * 40], rpot[40];
        tl_ref_forces(n, pos, mass, 1.0, 0.0, n, NULL, ref, rpot);
        /* the bulk (not the far one): class tolerance */
        tl_errstat e = tl_relerr(n - 1, 3, acc + 3, ref + 3);
        ok(e.median <= tol_median, "bulk forces stay right with an outlier at 1e30 (median rel %.3g)", e.median);
    }
    /* The whole system far from the origin. */
    for (size_t i = 0; i < n; ++i) {
        pos[3 * i] = 1e30 + 1e29 * (double)(i % 7);
        pos[3 * i + 1] = 1e30 * (double)(i % 3);
        pos[3 * i + 2] = -1e30 + 1e29 * (double)i;
    }
    st = api->set_particles(s, n, pos, mass);
    if (st == GP_OK) st = api->compute_forces(s, acc, pot);
    finite = 1;
    for (size_t i = 0; i < 3 * n && st == GP_OK; ++i) finite &= isfinite(acc[i]) != 0;
    ok((st == GP_OK && finite) || (st != GP_OK && api->last_error(s)[0]),
       "every coordinate near 1e30: finite forces or a clear refusal (%s)", gp_status_name(st));
    api->finalize(s);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PLUGIN (a path or a short name)\n", argv[0]);
        return 2;
    }
    quick = getenv("GP_CONFORMANCE_QUICK") && atoi(getenv("GP_CONFORMANCE_QUICK")) > 0;
    gp_plugin *plug = NULL;
    char err[1024];
    if (gp_plugin_open(argv[1], &plug, err, sizeof err) != GP_OK) {
        plan_lazy();
        ok(0, "load %s", argv[1]);
        diag("%s", err);
        return done_testing();
    }
    api = gp_plugin_api(plug);

    /* A GPU plugin on a machine without a GPU: skip, with its reason. */
    gp_solver *probe = NULL;
    gp_status st = api->init(&probe, NULL);
    if (st == GP_ERR_DEVICE) {
        const char *why = api->last_error(NULL);
        if (why && why[0]) {
            char line[1200];
            snprintf(line, sizeof line, "%s", why);
            for (char *c = line; *c; ++c) if (*c == '\n') *c = ' ';
            gp_plugin_close(plug);
            skip_all(line);
        }
        plan_lazy();
        ok(0, "init failed with GP_ERR_DEVICE but no sentence in last_error(NULL)");
        return done_testing();
    }
    plan_lazy();
    ok(st == GP_OK && probe, "init(&s, NULL) succeeds (%s)", st == GP_OK ? "defaults" : api->last_error(NULL));
    if (st != GP_OK) bail("init with defaults failed; nothing else can be tested");

    is_exact = has_cap(GP_CAP_EXACT);
    char prec[64] = "double";
    if (has_param("precision")) api->get_param(probe, "precision", prec, sizeof prec);
    exact_double = is_exact && strcmp(prec, "double") == 0;
    tol_median = exact_double ? 1e-10 : is_exact ? 1e-6 : 1e-2;
    tol_high = exact_double ? 1e-10 : is_exact ? 1e-4 : 1e-1;
    diag("plugin %s %s from %s, capabilities 0x%llx, class %s%s", api->name, api->version,
         gp_plugin_path(plug), (unsigned long long)api->capabilities,
         exact_double ? "exact-double" : is_exact ? "exact" : "approximate",
         quick ? " (quick mode)" : "");

    test_table(gp_plugin_path(plug));
    test_describe_params();
    test_params(probe);
    api->finalize(probe);
    test_init_rejections();
    test_rejections();
    test_two_body();
    test_accuracy_subset_field();
    test_two_threads();
    test_cycles();
    test_exports(gp_plugin_path(plug));
    test_extremes();
    test_abi11();
    test_abi12();
    test_abi13();

    gp_plugin_close(plug);
    return done_testing();
}
