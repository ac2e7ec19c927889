/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6calc-cost.c — what one GRAPE-6 call costs a plugin through ABI 1.3:
 * predict (every source moves, as g6_set_ti makes it) and then
 * compute_field_ex at ni points with what g6calc asks (acc, pot, jerk,
 * nn_index, nn_dist2), each point on a particle and excluding it, as
 * libgravplug-g6's field route sends a client's i-particles. Microseconds
 * per call, the mean over CALLS calls of a fresh set of points each; the
 * predict is outside the timing, the refit it causes inside.
 *
 *   g6calc-cost PLUGIN [N1,N2,...] [NI1,NI2,...] [CALLS]
 *
 * On a Plummer sphere (seed 42, eps 0.01) with random velocities as the
 * held state. Where a tree plugin's walk starts to pay against exact sums
 * shows as the ni at which two plugins (or builds) cross. Results:
 * bench/results/grape6/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check(gp_status st, const gp_api *api, gp_solver *s, const char *what)
{
    if (st == GP_OK) return;
    fprintf(stderr, "g6calc-cost: %s: %s\n", what, api->last_error(s));
    exit(1);
}

/* One N: the mean seconds of CALLS predict + compute_field_ex(ni) calls. */
static double per_call(const gp_api *api, size_t n, size_t ni, int calls)
{
    gp_ic ic;
    char why[256] = "the model gave another N";
    if (gp_ic_make("plummer", n, 42, NULL, &ic, why, sizeof why) || ic.n != n) {
        fprintf(stderr, "g6calc-cost: %s\n", why);
        exit(1);
    }
    gp_solver *s = NULL;
    check(api->init(&s, NULL), api, NULL, "init");
    check(api->set_param(s, "eps", "0.01"), api, s, "eps");
    check(api->set_particles(s, n, ic.pos, ic.mass), api, s, "set_particles");
    double *a0 = calloc(3 * n, sizeof *a0), *t0 = calloc(n, sizeof *t0);
    check(api->set_state(s, n, NULL, ic.pos, ic.vel, a0, t0), api, s, "set_state");
    double *x = malloc(3 * ni * sizeof *x), *v = malloc(3 * ni * sizeof *v);
    double *acc = malloc(3 * ni * sizeof *acc), *pot = malloc(ni * sizeof *pot);
    double *jerk = malloc(3 * ni * sizeof *jerk), *nnd = malloc(ni * sizeof *nnd);
    uint32_t *ex = malloc(ni * sizeof *ex), *nn = malloc(ni * sizeof *nn);
    const int has_jerk = (api->capabilities & GP_CAP_JERK) != 0;
    double spent = 0;
    for (int c = 0; c < calls; c++) {
        check(api->predict(s, 1e-4 * (c + 1)), api, s, "predict");
        for (size_t k = 0; k < ni; k++) ex[k] = (uint32_t)((k * 7919u + (size_t)c * 104729u) % n);
        check(api->get_positions(s, ni, ex, x), api, s, "get_positions");
        check(api->get_velocities(s, ni, ex, v), api, s, "get_velocities");
        gp_outputs o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.acc = acc; o.pot = pot; o.jerk = has_jerk ? jerk : NULL;
        o.nn_index = nn; o.nn_dist2 = nnd;
        double t1 = now();
        check(api->compute_field_ex(s, ni, x, v, ex, &o), api, s, "compute_field_ex");
        spent += now() - t1;
    }
    api->finalize(s);
    gp_ic_free(&ic);
    free(a0); free(t0); free(x); free(v); free(acc); free(pot); free(jerk); free(nnd);
    free(ex); free(nn);
    return spent / calls;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: g6calc-cost PLUGIN [N1,N2,...] [NI1,NI2,...] [CALLS]\n");
        return 2;
    }
    char err[512];
    gp_plugin *plug = NULL;
    if (gp_plugin_open(argv[1], &plug, err, sizeof err) != GP_OK) {
        fprintf(stderr, "g6calc-cost: %s\n", err);
        return 1;
    }
    const gp_api *api = gp_plugin_api(plug);
    if (api->abi_minor < 3 || !GRAVPLUG_API_HAS(api, compute_field_ex)) {
        fprintf(stderr, "g6calc-cost: plugin %s speaks ABI 1.%u: no compute_field_ex\n", api->name,
                (unsigned)api->abi_minor);
        return 1;
    }
    char *ns = strdup(argc > 2 ? argv[2] : "1024,4096,16384");
    const char *nis = argc > 3 ? argv[3] : "4,8,16,64,256";
    const int calls = argc > 4 ? atoi(argv[4]) : 200;
    printf("# plugin %s %s, %d calls of predict + compute_field_ex (acc, pot, jerk, nn) each\n",
           api->name, api->version, calls);
    printf("%8s %6s %12s\n", "N", "ni", "us_per_call");
    for (char *tn = strtok(ns, ","); tn; tn = strtok(NULL, ",")) {
        char *list = strdup(nis), *save = NULL;
        for (char *ti = strtok_r(list, ",", &save); ti; ti = strtok_r(NULL, ",", &save)) {
            size_t n = (size_t)atol(tn), ni = (size_t)atol(ti);
            printf("%8zu %6zu %12.1f\n", n, ni, 1e6 * per_call(api, n, ni, calls));
            fflush(stdout);
        }
        free(list);
    }
    free(ns);
    gp_plugin_close(plug);
    return 0;
}
