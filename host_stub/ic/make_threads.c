/* SPDX-License-Identifier: Apache-2.0 */
/*
 * make_threads.c — a sampled model's whole set made on the OpenMP threads:
 * each thread makes its slice of whole blocks with gp_ic_make_range, the
 * threads share their block sums as MPI ranks do (a barrier instead of an
 * allgather), and the slices are joined in order. gp_ic_make_range's
 * contract (the same bits for any tiling) makes the set the same for any
 * thread count. Initial conditions of 2^20 particles and more are a
 * visible part of a run's setup otherwise.
 */
#include "model.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shared_sums {
    double *rows;      /* n_blocks x width, each thread writes the rows it owns */
    int *status;       /* one per thread */
    char (*errs)[512]; /* one per thread */
} shared_sums;

/* gp_ic_share_fn over the threads of the enclosing parallel region; every
 * thread calls it the same number of times (gp_ic_make_range's rule). */
static int share_by_barrier(void *ctx, int status, double *sums, size_t width, size_t n_blocks,
                            size_t own_first, size_t own_count, char *err, size_t errlen)
{
    shared_sums *s = ctx;
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    s->status[t] = status;
    if (status != 0) snprintf(s->errs[t], sizeof s->errs[t], "%s", err ? err : "");
    memcpy(s->rows + own_first * width, sums + own_first * width, own_count * width * sizeof *sums);
#pragma omp barrier
    int failed = -1;
    for (int k = 0; k < nt && failed < 0; ++k)
        if (s->status[k] != 0) failed = k;
    if (failed >= 0) {
        if (err && errlen) snprintf(err, errlen, "%s", s->errs[failed]);
    } else {
        memcpy(sums, s->rows, n_blocks * width * sizeof *sums);
    }
    /* nobody writes the rows again (a second exchange) before all have read */
#pragma omp barrier
    return failed >= 0 ? -1 : 0;
}

static int join(gp_ic *parts, int nt, size_t n, gp_ic *out, char *err, size_t errlen)
{
    if (ic_alloc(out, n, err, errlen) != 0) return -1;
    size_t at = 0;
    for (int t = 0; t < nt; ++t) {
        size_t k = parts[t].n;
        memcpy(out->pos + 3 * at, parts[t].pos, 3 * k * sizeof *out->pos);
        memcpy(out->vel + 3 * at, parts[t].vel, 3 * k * sizeof *out->vel);
        memcpy(out->mass + at, parts[t].mass, k * sizeof *out->mass);
        memcpy(out->id + at, parts[t].id, k * sizeof *out->id);
        at += k;
    }
    return 0;
}

int ic_make_on_threads(const char *model, size_t n, uint64_t seed, const void *opts, gp_ic *out,
                       char *err, size_t errlen)
{
    size_t n_blocks = (n + GP_IC_BLOCK - 1) / GP_IC_BLOCK;
    int nt = omp_in_parallel() ? 1 : omp_get_max_threads();
    if ((size_t)nt > n_blocks) nt = (int)n_blocks;
    if (nt <= 1) return gp_ic_make_range(model, n, seed, opts, 0, n, NULL, NULL, out, err, errlen);

    gp_ic *parts = calloc((size_t)nt, sizeof *parts);
    shared_sums s = { calloc(n_blocks * IC_FRAME_SUMS, sizeof(double)), calloc((size_t)nt, sizeof(int)),
                      calloc((size_t)nt, sizeof *s.errs) };
    int rc = 0;
    if (!parts || !s.rows || !s.status || !s.errs) {
        rc = ic_fail(err, errlen, "Out of memory setting up the threads for %zu particles.", n);
    } else {
#pragma omp parallel num_threads(nt)
        {
            int t = omp_get_thread_num(), got = omp_get_num_threads();
            /* whole blocks per thread, so each block is drawn once */
            size_t lo = n_blocks * (size_t)t / (size_t)got * GP_IC_BLOCK;
            size_t hi = n_blocks * (size_t)(t + 1) / (size_t)got * GP_IC_BLOCK;
            if (hi > n) hi = n;
            if (lo > n) lo = n;
            if (gp_ic_make_range(model, n, seed, opts, lo, hi, share_by_barrier, &s, &parts[t], s.errs[t],
                                 sizeof s.errs[t]) != 0) {
#pragma omp atomic write
                rc = -1;
            }
#pragma omp single
            nt = got;
        }
        if (rc != 0) {
            for (int t = 0; t < nt; ++t)
                if (s.errs[t][0]) {
                    if (err && errlen) snprintf(err, errlen, "%s", s.errs[t]);
                    break;
                }
        } else {
            rc = join(parts, nt, n, out, err, errlen);
        }
    }
    for (int t = 0; parts && t < nt; ++t) gp_ic_free(&parts[t]);
    free(parts);
    free(s.rows);
    free(s.status);
    free(s.errs);
    return rc;
}
