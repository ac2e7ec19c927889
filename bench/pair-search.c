/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pair-search.c — what the pruned pair search (plugin/octree/pair_search.c)
 * costs against the pass over every source it replaced: per model and N,
 * the tau_ij evaluated per particle (pair_step only, seeded with the
 * nearest source's tau as cpu-tree seeds it), the seconds of the search
 * over all particles, and the seconds of brute force on a 1% sample
 * scaled to all particles (thread CPU seconds; `index s`: the part of the
 * search's spent building its index). One thread; the tree is built as cpu-tree
 * builds it by default (groups 64, leaves of LEAF, Peano-Hilbert).
 *
 *   pair-search [MODEL,...] [N,...] [LEAF] [EPS]
 *
 * Models are gp_ic_make's (uniform, plummer, galaxy, ...). Results:
 * bench/results/abi-outputs/raw/abi12-outputs.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ic.h"
#include "base/pair_step.h"
#include "octree/pair_search.h"
#include "octree/tree_search.h"

/* CPU seconds of this thread: what other processes on a shared machine
 * take by time slicing does not count. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double tau(const double *pos, const double *vel, const double *mass, size_t i, size_t j,
                  double eps2)
{
    const double *x = &pos[3 * i], *v = &vel[3 * i], *xj = &pos[3 * j], *vj = &vel[3 * j];
    return gp_pair_step(x[0] - xj[0], x[1] - xj[1], x[2] - xj[2], v[0] - vj[0], v[1] - vj[1],
                        v[2] - vj[2], eps2, mass[i] + mass[j]);
}

int main(int argc, char **argv)
{
    char *models = strdup(argc > 1 ? argv[1] : "uniform,plummer,galaxy");
    const char *ns = argc > 2 ? argv[2] : "4096,16384";
    unsigned leaf = argc > 3 ? (unsigned)atoi(argv[3]) : 16;
    double eps = argc > 4 ? atof(argv[4]) : 0.01, eps2 = eps * eps;
    printf("# leaf %u, eps %g, G 1, 1 thread; brute force timed on a 1%% sample\n", leaf, eps);
    printf("%-8s %7s %12s %10s %12s %10s %12s %8s %6s\n", "model", "N", "evals/part", "evals/N",
           "tree s", "index s", "brute s", "brute/tree", "exact");
    for (char *m = strtok(models, ","); m; m = strtok(NULL, ",")) {
        char *nl = strdup(ns), *save = NULL;
        for (char *tok = strtok_r(nl, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            size_t n = (size_t)atol(tok);
            gp_ic ic;
            char err[256];
            if (gp_ic_make(m, n, 42, NULL, &ic, err, sizeof err)) {
                fprintf(stderr, "pair-search: %s\n", err);
                return 1;
            }
            n = ic.n;
            oct_tree t = { 0 };
            if (oct_tree_build(&t, n, ic.pos, ic.mass, 64, leaf, GP_KEY_PEANO_HILBERT)) return 1;
            uint32_t *pid = malloc(t.nsrc * sizeof *pid);
            for (uint32_t k = 0; k < t.nsrc; k++) pid[k] = t.order[t.sid[k]];
            double *step = malloc(n * sizeof *step);
            size_t evals = 0;
            double t0 = now();
            oct_pair_index ix;
            if (oct_pair_index_build(&ix, &t, pid, ic.pos, ic.vel, ic.mass, n)) return 1;
            double t_index = now() - t0;
            oct_pair_query q = { ic.pos, ic.vel, ic.mass, 1.0, eps2, 1, 0, NULL, NULL, 0 };
            for (size_t i = 0; i < n; i++) {
                uint32_t nn;
                double d2, seed = HUGE_VAL;
                oct_nearest(&t, pid, &ic.pos[3 * i], (uint32_t)i, &nn, &d2);
                if (nn != UINT32_MAX) seed = tau(ic.pos, ic.vel, ic.mass, i, nn, eps2);
                step[i] = oct_pair_search(&ix, &q, (uint32_t)i, seed, &evals);
            }
            double t1 = now();
            size_t stride = 100, same = 1, sampled = 0;
            for (size_t i = 0; i < n; i += stride, sampled++) {
                double best = HUGE_VAL;
                for (size_t j = 0; j < n; j++) {
                    if (j == i || !(ic.mass[j] > 0)) continue;
                    double u = tau(ic.pos, ic.vel, ic.mass, i, j, eps2);
                    if (u < best) best = u;
                }
                same &= memcmp(&best, &step[i], sizeof best) == 0;
            }
            double brute = (now() - t1) * (double)n / (double)sampled;
            printf("%-8s %7zu %12.1f %10.4f %12.4f %10.4f %12.4f %8.1f %6s\n", m, n,
                   (double)evals / (double)n, (double)evals / ((double)n * (double)n), t1 - t0,
                   t_index, brute, brute / (t1 - t0), same ? "yes" : "NO");
            fflush(stdout);
            oct_tree_free(&t);
            oct_pair_index_free(&ix);
            free(pid); free(step);
            gp_ic_free(&ic);
        }
        free(nl);
    }
    free(models);
    return 0;
}
