/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conformance_checks.c — what both parts of the conformance program
 * (conformance.c: the 1.0 contract, conformance_abi11.c: the 1.1 one)
 * share: the plugin under test, its accuracy class and the checks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#define TAP_SHARED_STATE
#define TAP_DEFINE_STATE
#include "tap.h"
#include "testlib.h"
#include "conformance_checks.h"

const gp_api *api;
int quick;            /* GP_CONFORMANCE_QUICK: small sizes (valgrind) */
int is_exact, exact_double;
double tol_median, tol_high; /* class tolerances (see the top) */

int has_cap(uint64_t c) { return (api->capabilities & c) != 0; }

gp_solver *make_solver(void)
{
    gp_solver *s = NULL;
    gp_status st = api->init(&s, NULL);
    if (st != GP_OK || !s) {
        char why[1200];
        snprintf(why, sizeof why, "init failed (%s): %s", gp_status_name(st),
                 api->last_error(NULL));
        bail(why);
    }
    return s;
}

int has_param(const char *name)
{
    size_t n = 0;
    const gp_param_info *p = api->describe_params(&n);
    for (size_t k = 0; k < n; ++k)
        if (strcmp(p[k].name, name) == 0) return 1;
    return 0;
}

/* Expects status want and a non-empty sentence from last_error(s). */
int rejects(gp_status got, gp_status want, gp_solver *s, const char *what)
{
    const char *msg = api->last_error(s);
    int pass = got == want && msg && msg[0];
    ok(pass, "%s -> %s with a sentence", what, gp_status_name(want));
    if (!pass)
        diag("got %s, sentence '%s'", gp_status_name(got), msg ? msg : "(NULL)");
    else if (getenv("GP_CONFORMANCE_VERBOSE"))
        diag("  \"%s\"", msg);
    return pass;
}

int same_bits(const double *a, const double *b, size_t n)
{
    return memcmp(a, b, n * sizeof *a) == 0;
}

/* Compares acc (and pot) with a reference by the plugin's class. */
int close_to_ref(size_t m, const double *acc, const double *ref_acc,
                        const double *pot, const double *ref_pot, const char *what)
{
    tl_errstat ea = tl_relerr(m, 3, acc, ref_acc);
    /* exact plugins: every particle; approximate ones: the 99th percentile */
    int pass = ea.median <= tol_median && (is_exact ? ea.max : ea.p99) <= tol_high;
    ok(pass, "%s: accelerations within the %s tolerance", what,
       exact_double ? "exact-double" : is_exact ? "exact" : "approximate");
    diag("  acc relative error: median %.3g, 99%% %.3g, max %.3g", ea.median, ea.p99, ea.max);
    if (pot && ref_pot && has_cap(GP_CAP_POTENTIAL)) {
        tl_errstat ep = tl_relerr(m, 1, pot, ref_pot);
        int pp = ep.median <= tol_median && (is_exact ? ep.max : ep.p99) <= tol_high;
        ok(pp, "%s: potentials within tolerance", what);
        diag("  pot relative error: median %.3g, 99%% %.3g, max %.3g", ep.median, ep.p99, ep.max);
        pass &= pp;
    }
    return pass;
}

/* A Plummer sphere with every 10th particle massless. */
void make_set(size_t n, uint64_t seed, double *pos, double *mass)
{
    tl_plummer(n, seed, 1.0, 30.0, pos, mass);
    for (size_t i = 0; i < n; i += 10) mass[i] = 0.0;
}
