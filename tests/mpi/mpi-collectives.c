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
 *
 *   mpi-collectives PLUGIN                 the cases above
 *   mpi-collectives PLUGIN fuzz CASES SEED one rank's parameter other than
 *                                          the rest (bench/results/fuzz.md)
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

/* ---- fuzz mode: one rank's parameter other than the rest ----------------- */

/* A value for a parameter: one of its enum words, a number in or out of
 * its range, or text that is no value at all. */
static const char *fuzz_value(const gp_param_info *p, tl_rng *r, char *buf, size_t len)
{
    static const char *const odd[] = { "", "abc", "nan", "inf", "-inf", "-1", "0", "1e300", "1e-300", "0x10",
                                       "1,5", " 0.5", "0.5 ", "true", "2147483648", "/nonexistent/x.so" };
    uint64_t k = tl_next(r) % 4;
    if (k == 0 || !p) return odd[tl_next(r) % (sizeof odd / sizeof *odd)];
    if (k == 1 && p->default_value) return p->default_value;
    if (p->type == GP_PARAM_ENUM && p->allowed) {
        /* the n-th word of "a|b|c" */
        int words = 1, want;
        for (const char *c = p->allowed; *c; c++) words += *c == '|';
        want = (int)(tl_next(r) % (uint64_t)words);
        const char *c = p->allowed;
        for (int w = 0; w < want; w++) c = strchr(c, '|') + 1;
        snprintf(buf, len, "%.*s", (int)strcspn(c, "|"), c);
        return buf;
    }
    snprintf(buf, len, "%.17g", ldexp(tl_uniform(r), (int)(tl_next(r) % 12) - 6));
    return buf;
}

/* CASES cases from SEED: a parameter, drawn with its value on rank 0, and
 * on one rank (drawn) another value or the same, given at init or by
 * set_param. Every rank must get the same status, and the same sentence
 * when refused; the instance then still computes (status agreed); no case
 * hangs (alarm). */
static int fuzz(int cases, uint64_t seed)
{
    size_t np = 0;
    const gp_param_info *info = api->describe_params(&np);
    static double acc[3 * N];
    gp_solver *s = NULL;
    if (make(&s, "cpu-tree") != GP_OK) bail(api->last_error(NULL));
    int failures = 0, tally[3] = { 0, 0, 0 };   /* accepted, refused as differing, refused as invalid */
    for (int c = 0; c < cases; c++) {
        alarm(60);
        tl_rng r = { seed * 1000003u + (uint64_t)c };   /* the same draws on every rank */
        size_t k = tl_next(&r) % (np + 1);
        const gp_param_info *p = k < np ? &info[k] : NULL;
        const char *name = p ? p->name : "engine_plugin";
        int odd_rank = (int)(tl_next(&r) % (uint64_t)size), differ = tl_next(&r) % 10 < 7, at_init = tl_next(&r) % 3 == 0;
        char b0[64], b1[64];
        const char *v0 = fuzz_value(p, &r, b0, sizeof b0), *v1 = differ ? fuzz_value(p, &r, b1, sizeof b1) : v0;
        const char *v = rank == odd_rank ? v1 : v0;
        gp_status st;
        const char *why;
        gp_solver *t = NULL;
        if (at_init) {
            gp_param kv[] = { { "eps", "0.01" }, { name, v } };
            gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = 2, .device = -1 };
            st = api->init(&t, &a);
            why = st == GP_OK ? "" : api->last_error(NULL);
        } else {
            st = api->set_param(s, name, v);
            why = st == GP_OK ? "" : api->last_error(s);
        }
        int sts[2] = { (int)st, -(int)st }, agreed[2];
        MPI_Allreduce(sts, agreed, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        int same_words = same_sentence(why);   /* collective: on every rank, every case */
        int pass = agreed[0] == -agreed[1] && same_words;
        gp_solver *use = at_init ? t : s;
        gp_status fs = use ? forces(use, acc) : GP_OK;
        int fss[2] = { (int)fs, -(int)fs }, fagreed[2];
        MPI_Allreduce(fss, fagreed, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        pass = pass && fagreed[0] == -fagreed[1];
        if (t) api->finalize(t);
        /* back to the default on every rank (engine_plugin: the path make gives) */
        if (!at_init) api->set_param(s, name, p && p->default_value ? p->default_value
                                                 : "/nonexistent/gravplug-cuda-tree.so");
        int all = 0;
        MPI_Allreduce(&pass, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        failures += !all;
        tally[st == GP_OK ? 0 : strstr(why, "then holds other parameter values") ? 1 : 2]++;
        if (rank == 0 && (!all || c < 20 || c % 1000 == 0))
            diag("case %d: %s = '%s' (rank %d: '%s') by %s: %s%s%s", c, name, v0, odd_rank, v1,
                 at_init ? "init" : "set_param", all ? "agreed" : "NOT AGREED", *why ? ": " : "", why);
    }
    alarm(0);
    api->finalize(s);
    if (rank == 0) diag("%d accepted, %d refused as differing between the ranks, %d refused as invalid", tally[0],
                        tally[1], tally[2]);
    if (rank == 0) ok(failures == 0, "%d parameter cases (seed %llu): every status and sentence agreed, no hang (%d not)",
                      cases, (unsigned long long)seed, failures);
    return failures;
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
    if (argc > 2 && !strcmp(argv[2], "fuzz")) {
        fuzz(argc > 3 ? atoi(argv[3]) : 200, argc > 4 ? strtoull(argv[4], NULL, 10) : 1);
        gp_plugin_close(pm);
        return mpi_test_done(rank);
    }

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
