/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-collectives.c — every collective of mpi-tree entered by all ranks or
 * by none (P = 2, MPI_THREAD_MULTIPLE; rank 0 prints TAP). Parameters that
 * differ between the ranks, at init (engine = cuda-tree on rank 1 only)
 * and by set_param (engine, engine_plugin, theta), are refused on every
 * rank with one sentence naming the rank, and the instance goes on as it
 * was; two threads that create and use an instance each at once, on one
 * communicator, finish with the forces of one instance made alone, bit for
 * bit. An alarm turns a hang into a failure.
 */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gravplug_loader.h"
#include "tap.h"
#include "testlib.h"
#include "mpi-testlib.h"

#define N 1024

static int rank, size;
static const gp_api *api;
static double pos[3 * N], mass[N];
static size_t lo, hi;   /* this rank's slice */

static void check(int pass, const char *fmt, const char *what)
{
    mpi_test_ok(rank, pass, fmt, what);
}

static gp_status make(gp_solver **s, const char *engine)
{
    gp_param kv[] = { { "eps", "0.01" }, { "theta", "0.6" }, { "engine", engine },
                      { "engine_plugin", "/nonexistent/gravplug-cuda-tree.so" } };
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = 4, .device = -1 };
    return api->init(s, &a);
}

/* This rank's forces from s into acc[3 * (hi - lo)]. */
static gp_status forces(gp_solver *s, double *acc)
{
    gp_status st = api->set_particles(s, hi - lo, &pos[3 * lo], &mass[lo]);
    return st == GP_OK ? api->compute_forces(s, acc, NULL) : st;
}

/* The same sentence on every rank: rank 0's, broadcast and compared. */
static int same_sentence(const char *mine)
{
    char first[1024];
    snprintf(first, sizeof first, "%s", mine);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    return strcmp(first, mine) == 0;
}

typedef struct job {
    gp_status st;
    double acc[3 * N];
} job;

static void *thread_job(void *arg)
{
    job *j = arg;
    gp_solver *s = NULL;
    j->st = make(&s, "cpu-tree");
    if (j->st == GP_OK) j->st = forces(s, j->acc);
    if (s) api->finalize(s);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    alarm(120);   /* a rank left alone in a collective fails the test instead of blocking it */
    if (argc < 2) bail("usage: mpi-collectives PATH/gravplug-mpi-tree.so");
    gp_plugin *pm = NULL;
    char err[1024];
    if (gp_plugin_open(argv[1], &pm, err, sizeof err)) bail(err);
    api = gp_plugin_api(pm);
    tl_plummer(N, 7, 1.0, 20.0, pos, mass);
    lo = N * (size_t)rank / (size_t)size;
    hi = N * (size_t)(rank + 1) / (size_t)size;

    /* the reference: one instance, made alone */
    static double ref[3 * N], acc[3 * N];
    gp_solver *s = NULL;
    if (make(&s, "cpu-tree") != GP_OK || forces(s, ref) != GP_OK) bail(api->last_error(s));

    /* init with engine = cuda-tree on the last rank only */
    gp_solver *t = NULL;
    gp_status st = make(&t, rank == size - 1 ? "cuda-tree" : "cpu-tree");
    const char *why = api->last_error(NULL);
    check(st == GP_ERR_INVALID_ARGUMENT && !t, "%s", "init with engine = cuda-tree on one rank: refused on every rank");
    check(strstr(why, "then holds other parameter values than rank 0") != NULL && same_sentence(why), "%s",
          "with one sentence naming the rank");
    if (rank == 0) diag("%s", why);
    if (t) api->finalize(t);

    /* set_param: engine, engine_plugin and theta other on the last rank */
    static const char *const names[] = { "engine", "engine_plugin", "theta" };
    static const char *const mine[] = { "cpu-tree", "/nonexistent/a.so", "0.6" };
    static const char *const other[] = { "cuda-tree", "/nonexistent/b.so", "0.5" };
    for (int k = 0; k < 3; k++) {
        st = api->set_param(s, names[k], rank == size - 1 ? other[k] : mine[k]);
        why = api->last_error(s);
        char what[160];
        snprintf(what, sizeof what, "set_param('%s') other on one rank: refused on every rank, one sentence", names[k]);
        check(st == GP_ERR_INVALID_ARGUMENT && strstr(why, "then holds other parameter values") && same_sentence(why),
              "%s", what);
        char back[64] = "";
        if (k != 1) api->get_param(s, names[k], back, sizeof back);
        snprintf(what, sizeof what, "and the value stays as it was (%s)", k == 1 ? "engine_plugin" : back);
        check(k == 1 || strcmp(back, mine[k]) == 0, "%s", what);
    }
    st = forces(s, acc);
    check(st == GP_OK && memcmp(acc, ref, 3 * (hi - lo) * sizeof *acc) == 0, "%s",
          "the instance goes on: its forces are the same bits");
    api->finalize(s);

    /* two threads, an instance each on MPI_COMM_WORLD, made and used at once */
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) skip(1, "MPI gave no MPI_THREAD_MULTIPLE");
    } else {
        static job jobs[2];
        pthread_t th[2];
        for (int k = 0; k < 2; k++) pthread_create(&th[k], NULL, thread_job, &jobs[k]);
        for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
        int same = 1;
        for (int k = 0; k < 2; k++)
            same &= jobs[k].st == GP_OK && memcmp(jobs[k].acc, ref, 3 * (hi - lo) * sizeof *ref) == 0;
        check(same, "%s", "two threads making and using an instance each at once: no hang, the same forces");
    }
    gp_plugin_close(pm);
    return mpi_test_done(rank);
}
