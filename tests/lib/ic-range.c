/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-range.t — initial conditions made in slices (gp_ic_make_range), as
 * the ranks of gravhost-mpi make them: for every sampled model the set
 * made whole equals the concatenation of slices made separately, bit for
 * bit, for several ways of cutting it (mid-block, on block boundaries,
 * one-particle and empty slices), at n above and below one block
 * (GP_IC_BLOCK); sets of up to one block are unchanged from before blocks
 * existed (checksums below); the block seeding is the reference
 * init_by_array; a failure on one "rank" fails all of them, no hang; bad
 * ranges are refused with a sentence.
 *
 * The ranks are threads here: each calls gp_ic_make_range on its slice,
 * and the share function swaps block sums through shared memory with
 * barriers, as par_mpi.c does with MPI_Allgatherv.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ic.h"
#include "model.h"
#include "tap.h"

enum { MAXP = 8 };

/* ---- ranks as threads -------------------------------------------------------- */

typedef struct world {
    int P, fail_rank; /* fail_rank >= 0: that rank reports a failure */
    pthread_barrier_t bar;
    pthread_mutex_t lock;
    double *table;
    size_t table_len;
    int *owners;      /* how many ranks claimed each block */
    int status[MAXP];
    char msg[MAXP][256];
    int calls[MAXP];  /* share calls per rank */
} world;

typedef struct rank_job {
    world *w;
    int rank;
    const char *model;
    size_t n, lo, hi;
    uint64_t seed;
    const gp_ic_opts *opts;
    gp_ic out;
    int rc;
    char err[512];
} rank_job;

static int share(void *ctx, int status, double *sums, size_t width, size_t n_blocks, size_t own_first,
                 size_t own_count, char *err, size_t errlen)
{
    rank_job *j = ctx;
    world *w = j->w;
    w->calls[j->rank]++;
    if (j->rank == w->fail_rank && status == 0) {
        status = -1;
        snprintf(err, errlen, "rank %d ran out of memory (simulated)", j->rank);
    }
    w->status[j->rank] = status;
    if (status != 0) snprintf(w->msg[j->rank], sizeof w->msg[j->rank], "%s", err);
    else if (n_blocks * width <= w->table_len) {
        pthread_mutex_lock(&w->lock);
        for (size_t b = own_first; b < own_first + own_count; ++b) {
            w->owners[b]++;
            memcpy(&w->table[b * width], &sums[b * width], width * sizeof *sums);
        }
        pthread_mutex_unlock(&w->lock);
    }
    pthread_barrier_wait(&w->bar);
    int failed = -1;
    for (int q = 0; q < w->P && failed < 0; ++q)
        if (w->status[q] != 0) failed = q;
    if (failed >= 0) snprintf(err, errlen, "%s", w->msg[failed]);
    else memcpy(sums, w->table, n_blocks * width * sizeof *sums);
    pthread_barrier_wait(&w->bar); /* nobody refills the table before all have read it */
    return failed >= 0 ? -1 : 0;
}

static void *run_rank(void *arg)
{
    rank_job *j = arg;
    j->rc = gp_ic_make_range(j->model, j->n, j->seed, j->opts, j->lo, j->hi, share, j, &j->out, j->err,
                             sizeof j->err);
    return NULL;
}

/* Makes the set in slices cut at cuts[0] = 0 < ... <= cuts[P] = n, one
 * thread each. Returns the number of ranks that failed; *each_once is 1
 * when every block was claimed by exactly one rank in every exchange. */
static int make_sliced(world *w, const char *model, size_t n, uint64_t seed, const gp_ic_opts *opts,
                       const size_t *cuts, int P, rank_job *jobs, int *each_once)
{
    size_t nb = (n + GP_IC_BLOCK - 1) / GP_IC_BLOCK;
    memset(w->status, 0, sizeof w->status);
    memset(w->calls, 0, sizeof w->calls);
    w->P = P;
    w->table_len = nb * 7;
    w->table = calloc(w->table_len, sizeof *w->table);
    w->owners = calloc(nb, sizeof *w->owners);
    pthread_barrier_init(&w->bar, NULL, (unsigned)P);
    pthread_mutex_init(&w->lock, NULL);
    pthread_t th[MAXP];
    for (int r = 0; r < P; ++r) {
        jobs[r] = (rank_job){w, r, model, n, cuts[r], cuts[r + 1], seed, opts, {0}, 0, ""};
        pthread_create(&th[r], NULL, run_rank, &jobs[r]);
    }
    int failed = 0;
    for (int r = 0; r < P; ++r) {
        pthread_join(th[r], NULL);
        failed += jobs[r].rc != 0;
    }
    /* each exchange adds one claim per block */
    int calls = w->calls[0];
    *each_once = 1;
    for (size_t b = 0; b < nb; ++b)
        if (w->owners[b] != calls) *each_once = 0;
    pthread_barrier_destroy(&w->bar);
    pthread_mutex_destroy(&w->lock);
    free(w->table);
    free(w->owners);
    return failed;
}

/* 1 if the slices, in order, are the whole set bit for bit. */
static int same_as_whole(const gp_ic *whole, const rank_job *jobs, int P)
{
    size_t at = 0;
    for (int r = 0; r < P; ++r) {
        const gp_ic *s = &jobs[r].out;
        if (s->n != jobs[r].hi - jobs[r].lo || jobs[r].lo != at || at + s->n > whole->n) return 0;
        if (s->n && (memcmp(s->pos, &whole->pos[3 * at], 3 * s->n * sizeof *s->pos) ||
                     memcmp(s->vel, &whole->vel[3 * at], 3 * s->n * sizeof *s->vel) ||
                     memcmp(s->mass, &whole->mass[at], s->n * sizeof *s->mass) ||
                     memcmp(s->id, &whole->id[at], s->n * sizeof *s->id)))
            return 0;
        at += s->n;
    }
    return at == whole->n;
}

static gp_ic_opts make_opts(gp_param *p, const char *const *kv)
{
    size_t k = 0;
    for (; kv && kv[2 * k]; ++k) {
        p[k].name = kv[2 * k];
        p[k].value = kv[2 * k + 1];
    }
    return (gp_ic_opts){p, k};
}

/* The whole set against each way of cutting it. */
static void check_cuts(const char *model, size_t n, uint64_t seed, const char *const *kv,
                       const size_t (*cuts)[MAXP + 1], const int *Ps, int n_cuts)
{
    gp_param p[8];
    gp_ic_opts o = make_opts(p, kv);
    gp_ic whole;
    char err[512];
    if (gp_ic_make(model, n, seed, &o, &whole, err, sizeof err) != 0) {
        ok(0, "%s n = %zu: %s", model, n, err);
        return;
    }
    for (int c = 0; c < n_cuts; ++c) {
        world w = {.fail_rank = -1};
        rank_job jobs[MAXP];
        int once = 0;
        int failed = make_sliced(&w, model, n, seed, &o, cuts[c], Ps[c], jobs, &once);
        char what[256];
        int used = snprintf(what, sizeof what, "%s%s%s n = %zu, cut at", model, kv ? " " : "",
                            kv ? kv[0] : "", n);
        for (int r = 1; r < Ps[c] && used < (int)sizeof what; ++r)
            used += snprintf(what + used, sizeof what - (size_t)used, " %zu", cuts[c][r]);
        if (failed) diag("%s", jobs[0].err);
        ok(!failed && once && same_as_whole(&whole, jobs, Ps[c]),
           "%s: the slices are the whole set, bit for bit%s", what,
           failed ? " (a rank failed)" : !once ? " (a block not owned exactly once)" : "");
        for (int r = 0; r < Ps[c]; ++r) gp_ic_free(&jobs[r].out);
    }
    gp_ic_free(&whole);
}

/* ---- sets of up to one block: as before blocks existed ----------------------- */

/* FNV-1a over n and the bytes of every array. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t len)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < len; ++i) {
        h ^= c[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

static uint64_t checksum(const gp_ic *ic)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv1a(h, &ic->n, sizeof ic->n);
    h = fnv1a(h, ic->pos, 3 * ic->n * sizeof *ic->pos);
    h = fnv1a(h, ic->vel, 3 * ic->n * sizeof *ic->vel);
    h = fnv1a(h, ic->mass, ic->n * sizeof *ic->mass);
    h = fnv1a(h, ic->id, ic->n * sizeof *ic->id);
    return h;
}

/* Computed with gp_ic_make of main at 55df817 (before blocks), x86-64,
 * Debian's glibc libm and GSL 2: a different libm may round pow/exp/log
 * differently and change them (then derive them again from that commit). */
typedef struct sum_case {
    const char *model;
    size_t n;
    uint64_t seed;
    const char *kv[5];
    uint64_t sum;
} sum_case;
static const sum_case before_blocks[] = {
    {"plummer", 1000, 1, {0}, 0x0edf7d51d2ca432bULL},
    {"plummer", 65536, 2, {0}, 0xf83471339c2968e4ULL},
    {"plummer", 777, 0, {"frame", "momentum", 0}, 0x262ae66e74d0ad26ULL},
    {"plummer", 3000, 0x0123456789abcdefULL, {0}, 0x41f6b2d8e6032510ULL},
    {"hernquist", 2000, 3, {0}, 0x19bddcbafa269295ULL},
    {"nfw", 2000, 4, {"frame", "none", 0}, 0x720f4abd323d6240ULL},
    {"galaxy", 5000, 5, {0}, 0xa7e2d52ea6e8dd3fULL},
    {"galaxy", 3000, 6, {"bulge_mass", "0", 0}, 0xd99d6380a5721dd0ULL},
    {"uniform", 1500, 7, {0}, 0xacbb4d6cc864745fULL},
    {"uniform", 1500, 8, {"virial_ratio", "0.5", 0}, 0xb13585b1560c080aULL},
    {"galaxy", 65536, 10, {0}, 0xa0c8b2e844739a21ULL},
    {"uniform", 65536, 9, {"virial_ratio", "1", "frame", "momentum", 0}, 0xef6b736517366b0dULL},
};

static void check_before_blocks(void)
{
    for (size_t k = 0; k < sizeof before_blocks / sizeof *before_blocks; ++k) {
        const sum_case *c = &before_blocks[k];
        gp_param p[4];
        gp_ic_opts o = make_opts(p, c->kv);
        gp_ic ic;
        char err[512];
        if (gp_ic_make(c->model, c->n, c->seed, &o, &ic, err, sizeof err) != 0) {
            ok(0, "%s n = %zu: %s", c->model, c->n, err);
            continue;
        }
        uint64_t h = checksum(&ic);
        ok(h == c->sum, "%s n = %zu seed %llu%s%s: as before blocks (checksum %016llx)", c->model, c->n,
           (unsigned long long)c->seed, c->kv[0] ? " " : "", c->kv[0] ? c->kv[0] : "",
           (unsigned long long)h);
        gp_ic_free(&ic);
    }
}

/* ---- the rest ---------------------------------------------------------------- */

/* mt19937ar.c's own test: init_by_array({0x123, 0x234, 0x345, 0x456})
 * gives 1067595299 955945823 477289528 4107218783 4228976476 first
 * (mt19937ar.out, Matsumoto & Nishimura). */
static void check_seeding(void)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    const uint32_t key[4] = {0x123, 0x234, 0x345, 0x456};
    const unsigned long want[5] = {1067595299UL, 955945823UL, 477289528UL, 4107218783UL, 4228976476UL};
    int rc = ic_mt_seed_array(rng, key, 4), same = rc == 0;
    for (int i = 0; i < 5 && same; ++i) same = gsl_rng_get(rng) == want[i];
    ok(same, "block seeding is the reference init_by_array (mt19937ar.out's first five numbers)");
    /* blocks 1 and 2 of one seed, and block 1 of two seeds, start apart */
    unsigned long a, b, c;
    ic_seed_block(rng, 7, 1);
    a = gsl_rng_get(rng);
    ic_seed_block(rng, 7, 2);
    b = gsl_rng_get(rng);
    ic_seed_block(rng, 8, 1);
    c = gsl_rng_get(rng);
    ok(a != b && a != c, "blocks 1 and 2 of seed 7 and block 1 of seed 8 draw different numbers");
    gsl_rng_free(rng);
}

static void check_refusals(void)
{
    gp_ic ic;
    char err[512];
    int rc = gp_ic_make_range("plummer", 100, 1, NULL, 50, 101, NULL, NULL, &ic, err, sizeof err);
    ok(rc != 0 && strstr(err, "[50, 101) does not lie inside the 100 particles") && ic.n == 0,
       "a range past n is refused: %s", err);
    rc = gp_ic_make_range("plummer", 100, 1, NULL, 60, 50, NULL, NULL, &ic, err, sizeof err);
    ok(rc != 0 && strstr(err, "does not lie inside"), "a range with lo > hi is refused");
    rc = gp_ic_make_range("plummer", 100, 1, NULL, 0, 50, NULL, NULL, &ic, err, sizeof err);
    ok(rc != 0 && strstr(err, "need a share function"), "a slice without a share function is refused: %s",
       err);
    rc = gp_ic_make_range("plumber", 100, 1, NULL, 0, 100, NULL, NULL, &ic, err, sizeof err);
    ok(rc != 0 && strstr(err, "Unknown initial-condition model"), "an unknown model is refused");
    rc = gp_ic_make_range("plummer", 0, 1, NULL, 0, 0, NULL, NULL, &ic, err, sizeof err);
    ok(rc != 0 && strstr(err, "at least one particle"), "n = 0 is refused for a sampled model");
    ok(gp_ic_makes_ranges("galaxy") == 1 && gp_ic_makes_ranges("uniform") == 1 &&
           gp_ic_makes_ranges("kepler") == 0 && gp_ic_makes_ranges("file") == 0 &&
           gp_ic_makes_ranges("nope") == -1,
       "gp_ic_makes_ranges: sampled models 1, kepler and file 0, unknown -1");
    /* a whole-set model: the range of what it makes */
    gp_ic whole;
    rc = gp_ic_make("kepler", 2, 1, NULL, &whole, err, sizeof err);
    int rc2 = gp_ic_make_range("kepler", 2, 1, NULL, 1, 2, NULL, NULL, &ic, err, sizeof err);
    ok(rc == 0 && rc2 == 0 && ic.n == 1 && ic.id[0] == 1 && memcmp(ic.pos, &whole.pos[3], 3 * sizeof(double)) == 0,
       "kepler: [1, 2) is the whole set's second body");
    gp_ic_free(&ic);
    gp_ic_free(&whole);
}

/* One rank fails after its options parsed (as if out of memory): every
 * rank returns -1 with that rank's sentence and an empty set. */
static void check_one_fails(void)
{
    const size_t cuts[] = {0, 40000, 100000, 150000};
    world w = {.fail_rank = 1};
    rank_job jobs[MAXP];
    int once;
    int failed = make_sliced(&w, "uniform", 150000, 3, NULL, cuts, 3, jobs, &once);
    int same = 1;
    for (int r = 0; r < 3; ++r) {
        same = same && strstr(jobs[r].err, "rank 1 ran out of memory") && jobs[r].out.n == 0 &&
               !jobs[r].out.pos;
        gp_ic_free(&jobs[r].out);
    }
    ok(failed == 3 && same, "rank 1 of 3 fails: all three return -1 with its sentence and nothing made");
}

int main(void)
{
    plan(41);
    alarm(600); /* a rank left waiting in an exchange would hang: be killed instead */
    check_seeding();
    check_before_blocks();
    check_refusals();

    /* above one block: 150000 particles are blocks of 65536, 65536, 18928 */
    const size_t n = 150000;
    static const size_t cuts[][MAXP + 1] = {
        {0, 75000, n},                        /* mid-block */
        {0, 65536, 65537, n},                 /* on a boundary, a one-particle slice */
        {0, 1, 131072, 131072, n},            /* an empty slice */
        {0, 30000, 40000, 100000, 149999, n}, /* five, two inside one block */
    };
    static const int Ps[] = {2, 3, 4, 5};
    check_cuts("plummer", n, 11, NULL, cuts, Ps, 4);
    check_cuts("galaxy", n, 12, NULL, cuts + 1, Ps + 1, 1); /* slow: its tables on every rank */
    check_cuts("galaxy", n, 12, NULL, cuts + 3, Ps + 3, 1);
    static const char *const virial[] = {"virial_ratio", "0.5", NULL};
    check_cuts("uniform", n, 13, virial, cuts, Ps, 4);
    static const char *const momentum[] = {"frame", "momentum", NULL};
    check_cuts("hernquist", n, 14, momentum, cuts, Ps, 1);
    check_cuts("nfw", n, 15, NULL, cuts + 3, Ps + 3, 1);

    /* up to one block: one generator, cut anywhere */
    static const size_t small[][MAXP + 1] = {{0, 1234, 5000}, {0, 0, 2500, 4999, 5000}};
    static const int Ps_small[] = {2, 4};
    check_cuts("galaxy", 5000, 16, NULL, small, Ps_small, 2);
    check_cuts("uniform", 5000, 17, virial, small, Ps_small, 2);
    check_cuts("plummer", 5000, 18, NULL, small + 1, Ps_small + 1, 1);
    check_cuts("hernquist", 5000, 19, NULL, small + 1, Ps_small + 1, 1);
    check_cuts("nfw", 5000, 20, momentum, small + 1, Ps_small + 1, 1);

    check_one_fails();
    return done_testing();
}
