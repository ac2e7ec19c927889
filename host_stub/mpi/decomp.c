/* SPDX-License-Identifier: Apache-2.0 */
/* decomp.c — Peano-Hilbert decomposition by exact (weighted) quantiles (see decomp.h). */
#include "decomp.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "octree/host_tree.h"
#include "octree/keys.h"

typedef struct kid { uint64_t key, id; size_t row; } kid;

static int by_kid(const void *a, const void *b)
{
    const kid *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    return 0;
}

/* (key, id) pairs as one 128-bit order: is (k, i) < (k2, i2)? */
static int less(uint64_t k, uint64_t i, uint64_t k2, uint64_t i2)
{
    return k < k2 || (k == k2 && i < i2);
}

/* Rows of sorted v[0..n) below (k, i) (binary search). */
static size_t count_below(const kid *v, size_t n, uint64_t k, uint64_t i)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (less(v[mid].key, v[mid].id, k, i)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int fail_all(MPI_Comm comm, int mine, char *err, size_t errlen, const char *what)
{
    int any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) snprintf(err, errlen, "domain decomposition: no memory %s on some rank; use more "
                                   "ranks or fewer particles", what);
    return any;
}

/* n rows (x, y, z the first three of every `stride` doubles) with ids id[]
 * as (key, id, row) sorted by (key, id), or NULL when out of memory: the
 * keys vectorised (gp_host_make_keys) and a radix sort by key, then the
 * rare runs of equal keys (coincident particles) by id. The same order as
 * qsort with by_kid, which it replaced at 5-10x its speed. */
static kid *sorted_rows(size_t n, const double *rows, size_t stride, const uint64_t *id,
                        const double lo[3], double inv)
{
    kid *v = malloc((n ? n : 1) * sizeof *v);
    if (!v || n == 0) return v;
    if (n > UINT32_MAX) {
        /* more rows than a 32-bit permutation holds: one key at a time */
        for (size_t i = 0; i < n; i++)
            v[i] = (kid){ gp_key_of_position(GP_KEY_PEANO_HILBERT, rows[i * stride],
                                             rows[i * stride + 1], rows[i * stride + 2], lo, inv),
                          id[i], i };
        qsort(v, n, sizeof *v, by_kid);
        return v;
    }
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!key || !perm) { free(key); free(perm); free(v); return NULL; }
    gp_host_make_keys(n, rows, rows + 1, rows + 2, stride, GP_KEY_PEANO_HILBERT, lo, inv, key);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    if (gp_host_sort_keys(n, key, perm)) { free(key); free(perm); free(v); return NULL; }
    for (size_t k = 0; k < n; k++) v[k] = (kid){ key[k], id[perm[k]], perm[k] };
    for (size_t b = 0, e; b < n; b = e) {
        for (e = b + 1; e < n && v[e].key == v[b].key; e++) {}
        if (e - b > 1) qsort(v + b, e - b, sizeof *v, by_kid);
    }
    free(key);
    free(perm);
    return v;
}

int gp_mpi_decompose(MPI_Comm comm, size_t *n_io, size_t ncol, double **data_io, uint64_t **id_io,
                     char *err, size_t errlen)
{
    return gp_mpi_decompose_weighted(comm, n_io, ncol, -1, data_io, id_io, err, errlen);
}

/* A row's weight: 2^level, the times it is active per dt_max (capped so
 * that 2^32 rows cannot overflow a 64-bit sum). */
static uint64_t row_weight(const double *row, int level_col)
{
    if (level_col < 0) return 1;
    double l = row[level_col];
    int e = l > 0 ? (l < GP_DECOMP_MAX_WEIGHT_LEVEL ? (int)l : GP_DECOMP_MAX_WEIGHT_LEVEL) : 0;
    return UINT64_C(1) << e;
}

int gp_mpi_decompose_weighted(MPI_Comm comm, size_t *n_io, size_t ncol, int level_col, double **data_io,
                              uint64_t **id_io, char *err, size_t errlen)
{
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    size_t n = *n_io;
    const double *d = *data_io;
    /* the cube around every particle (gp_host_root_cube's rule, globally) */
    double mn[3] = { DBL_MAX, DBL_MAX, DBL_MAX }, mx[3] = { -DBL_MAX, -DBL_MAX, -DBL_MAX };
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            double x = d[i * ncol + a];
            mn[a] = x < mn[a] ? x : mn[a];
            mx[a] = x > mx[a] ? x : mx[a];
        }
    double gmn[3], gmx[3];
    MPI_Allreduce(mn, gmn, 3, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(mx, gmx, 3, MPI_DOUBLE, MPI_MAX, comm);
    unsigned long long nl = n, N = 0;
    MPI_Allreduce(&nl, &N, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    if (N == 0) return 0;
    if (level_col >= (int)ncol) level_col = -1;
    double side = 0, lo[3];
    for (int a = 0; a < 3; a++) side = gmx[a] - gmn[a] > side ? gmx[a] - gmn[a] : side;
    if (!(side > 0)) side = 1.0;
    if (!(side <= 0.5 * DBL_MAX)) side = DBL_MAX; else side *= 1.0 + 1e-9;
    for (int a = 0; a < 3; a++) lo[a] = 0.5 * gmn[a] + 0.5 * gmx[a] - 0.5 * side;
    double inv = (double)GP_KEY_GRID / side;

    kid *v = sorted_rows(n, d, ncol, *id_io, lo, inv);
    if (fail_all(comm, v == NULL, err, errlen, "for the keys")) { free(v); return -1; }
    /* pw[k]: the weight of the first k sorted rows (pw[k] = k unweighted) */
    uint64_t *pw = malloc((n + 1) * sizeof *pw);
    if (fail_all(comm, pw == NULL, err, errlen, "for the weights")) { free(v); free(pw); return -1; }
    pw[0] = 0;
    for (size_t k = 0; k < n; k++) pw[k + 1] = pw[k] + row_weight(&d[v[k].row * ncol], level_col);
    unsigned long long wl = pw[n], W = 0;
    MPI_Allreduce(&wl, &W, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);

    /* the P - 1 cut points: the smallest (key, id) with at least
     * q N / P rows below it, by bisection over keys, then over ids */
    int nc = P - 1;
    uint64_t *ck = calloc((size_t)(nc ? nc : 1), sizeof *ck), *ci = calloc((size_t)(nc ? nc : 1), sizeof *ci);
    unsigned long long *cnt = malloc((size_t)(nc ? nc : 1) * sizeof *cnt),
                       *tot = malloc((size_t)(nc ? nc : 1) * sizeof *tot);
    uint64_t *klo = malloc((size_t)(nc ? nc : 1) * sizeof *klo), *khi = malloc((size_t)(nc ? nc : 1) * sizeof *khi);
    if (fail_all(comm, !ck || !ci || !cnt || !tot || !klo || !khi, err, errlen, "for the cuts")) {
        free(v); free(pw); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
        return -1;
    }
    for (int stage = 0; stage < 2; stage++) {
        /* stage 0: the key (id 0); stage 1: the id within that key */
        for (int q = 0; q < nc; q++) { klo[q] = 0; khi[q] = UINT64_MAX; }
        for (int it = 0; it < 65; it++) {
            for (int q = 0; q < nc; q++) {
                uint64_t mid = klo[q] + (khi[q] - klo[q]) / 2;
                /* rows below (mid + 1): is the cut at or below mid? */
                size_t below = stage == 0 ? count_below(v, n, mid + (mid < UINT64_MAX), 0)
                                          : count_below(v, n, ck[q], mid + (mid < UINT64_MAX));
                if (mid == UINT64_MAX) below = n;
                cnt[q] = pw[below];
            }
            MPI_Allreduce(cnt, tot, nc, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
            for (int q = 0; q < nc; q++) {
                unsigned long long want = (unsigned long long)((unsigned __int128)(q + 1) * W / (unsigned)P);
                uint64_t mid = klo[q] + (khi[q] - klo[q]) / 2;
                if (tot[q] > want) khi[q] = mid;
                else klo[q] = mid + 1;
            }
        }
        /* stage 0: the key of the row at position want (the smallest key
         * with more than want rows at or below it); stage 1: its id */
        for (int q = 0; q < nc; q++) {
            if (stage == 0) ck[q] = klo[q];
            else ci[q] = klo[q];
        }
    }
    /* destination of each sorted row: the number of cuts at or below it */
    int *sc = calloc((size_t)P, sizeof *sc), *rc = calloc((size_t)P, sizeof *rc);
    int *sd = calloc((size_t)P, sizeof *sd), *rd = calloc((size_t)P, sizeof *rd);
    double *sbuf = malloc((n ? n : 1) * (ncol + 1) * sizeof *sbuf);
    int bad = !sc || !rc || !sd || !rd || !sbuf || n * (ncol + 1) > (size_t)INT_MAX;
    free(pw);
    pw = NULL;
    if (fail_all(comm, bad, err, errlen, "for the exchange")) {
        free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
        free(sc); free(rc); free(sd); free(rd); free(sbuf);
        return -1;
    }
    int dest = 0;
    for (size_t k = 0; k < n; k++) {
        while (dest < nc && !less(v[k].key, v[k].id, ck[dest], ci[dest])) dest++;
        sc[dest] += (int)(ncol + 1);
        double *row = &sbuf[k * (ncol + 1)];
        memcpy(row, &d[v[k].row * ncol], ncol * sizeof *row);
        memcpy(&row[ncol], &v[k].id, sizeof v[k].id);   /* the id rides as 8 bytes */
    }
    if (level_col >= 0) {
        /* a rank left without rows (one row outweighs a rank's share: few
         * particles on deep levels) would hold nothing: cut by count instead */
        int empty = 0;
        for (int q = 0; q < P; q++) rc[q] = sc[q] > 0;   /* rows to q from here? */
        MPI_Allreduce(MPI_IN_PLACE, rc, P, MPI_INT, MPI_MAX, comm);
        for (int q = 0; q < P; q++) empty |= rc[q] == 0;
        if (empty) {
            free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
            free(sc); free(rc); free(sd); free(rd); free(sbuf);
            return gp_mpi_decompose_weighted(comm, n_io, ncol, -1, data_io, id_io, err, errlen);
        }
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
    long long rtot = 0;
    for (int r = 0, so = 0; r < P; r++) { sd[r] = so; so += sc[r]; rd[r] = (int)rtot; rtot += rc[r]; }
    double *rbuf = malloc((size_t)(rtot ? rtot : 1) * sizeof *rbuf);
    size_t m = (size_t)rtot / (ncol + 1);
    double *nd = malloc((m ? m : 1) * ncol * sizeof *nd);
    uint64_t *ni = malloc((m ? m : 1) * sizeof *ni);
    kid *w = NULL;
    bad = !rbuf || !nd || !ni || rtot > INT_MAX;
    if (!fail_all(comm, bad, err, errlen, "for the received particles")) {
        MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rc, rd, MPI_DOUBLE, comm);
        /* the pieces from each rank are sorted; sort the whole by (key, id)
         * (the ids, 8 bytes after each row, into ni first) */
        for (size_t k = 0; k < m; k++) memcpy(&ni[k], &rbuf[k * (ncol + 1) + ncol], sizeof *ni);
        w = sorted_rows(m, rbuf, ncol + 1, ni, lo, inv);
        bad = fail_all(comm, w == NULL, err, errlen, "for the received particles' keys");
    } else {
        bad = 1;
    }
    if (!bad) {
        for (size_t k = 0; k < m; k++) {
            memcpy(&nd[k * ncol], &rbuf[w[k].row * (ncol + 1)], ncol * sizeof *nd);
            ni[k] = w[k].id;
        }
        free(*data_io);
        free(*id_io);
        *data_io = nd;
        *id_io = ni;
        *n_io = m;
        nd = NULL;
        ni = NULL;
    }
    free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
    free(sc); free(rc); free(sd); free(rd); free(sbuf); free(rbuf); free(nd); free(ni); free(w);
    return bad ? -1 : 0;
}
