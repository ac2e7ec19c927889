/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-threads.t — gp_ic_make draws a sampled model's blocks on the OpenMP
 * threads (host_stub/ic/make.c): for every sampled model, at n
 * across several blocks, the set is bit for bit the one drawn on one
 * thread in one piece (gp_ic_make_range over [0, n) with no share), at
 * 2 and 3 threads, uniform with its second (virial) exchange too. A
 * model that fails on the threads (hernquist refuses its rtrunc while it
 * prepares, inside the threads' exchange) gives one thread's sentence on
 * 2 and 3 threads, no hang, and an empty set; a bad option is refused
 * before any thread starts, with the same sentence on 3 threads as on 1.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ic.h"
#include "tap.h"

static int same_set(const gp_ic *a, const gp_ic *b)
{
    return a->n == b->n && !memcmp(a->pos, b->pos, 3 * a->n * sizeof *a->pos) &&
           !memcmp(a->vel, b->vel, 3 * a->n * sizeof *a->vel) &&
           !memcmp(a->mass, b->mass, a->n * sizeof *a->mass) && !memcmp(a->id, b->id, a->n * sizeof *a->id);
}

static void check_model(const char *model, const gp_ic_opts *opts, const char *label)
{
    /* three blocks and a short fourth: slices of unequal length */
    const size_t n = 3 * GP_IC_BLOCK + 1234;
    char err[512];
    gp_ic ref;
    if (gp_ic_make_range(model, n, 7, opts, 0, n, NULL, NULL, &ref, err, sizeof err) != 0) {
        ok(0, "%s: the one-piece set (%s)", label, err);
        return;
    }
    static const int threads[] = { 2, 3 };
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; ++k) {
        omp_set_num_threads(threads[k]);
        gp_ic got;
        int rc = gp_ic_make(model, n, 7, opts, &got, err, sizeof err);
        ok(rc == 0 && same_set(&got, &ref), "%s, %d thread%s: the same %zu particles bit for bit%s%s", label,
           threads[k], threads[k] > 1 ? "s" : "", n, rc ? ": " : "", rc ? err : "");
        gp_ic_free(&got);
    }
    gp_ic_free(&ref);
}

int main(void)
{
    const char *const *models = gp_ic_models();
    for (size_t m = 0; models[m]; ++m)
        if (gp_ic_makes_ranges(models[m]) == 1) check_model(models[m], NULL, models[m]);

    gp_param virial[] = { { "virial_ratio", "0.5" } };
    gp_ic_opts vopts = { virial, 1 };
    check_model("uniform", &vopts, "uniform virial_ratio = 0.5");

    gp_param tiny[] = { { "rtrunc", "1e-6" } };
    gp_ic_opts topts = { tiny, 1 };
    char one[512];
    gp_ic h;
    omp_set_num_threads(1);
    int r = gp_ic_make("hernquist", 3 * GP_IC_BLOCK, 1, &topts, &h, one, sizeof one);
    for (int nt = 2; nt <= 3; ++nt) {
        char e[512] = "";
        omp_set_num_threads(nt);
        int rt = gp_ic_make("hernquist", 3 * GP_IC_BLOCK, 1, &topts, &h, e, sizeof e);
        ok(r == -1 && rt == -1 && one[0] && !strcmp(one, e) && h.n == 0 && !h.pos,
           "a failure inside the threads, %d threads: one sentence, as on one thread, no particles (%s)", nt, e);
    }

    gp_param bad[] = { { "no_such_option", "1" } };
    gp_ic_opts bopts = { bad, 1 };
    char e1[512], e3[512];
    gp_ic a, b;
    omp_set_num_threads(1);
    int r1 = gp_ic_make("galaxy", 3 * GP_IC_BLOCK, 1, &bopts, &a, e1, sizeof e1);
    omp_set_num_threads(3);
    int r3 = gp_ic_make("galaxy", 3 * GP_IC_BLOCK, 1, &bopts, &b, e3, sizeof e3);
    ok(r1 == -1 && r3 == -1 && e1[0] && !strcmp(e1, e3) && a.n == 0 && b.n == 0 && !b.pos,
       "a bad option: the same sentence on 3 threads as on 1, no particles (%s)", e3);
    return done_testing();
}
