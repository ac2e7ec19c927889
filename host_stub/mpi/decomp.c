/* SPDX-License-Identifier: Apache-2.0 */
/* decomp.c — Peano-Hilbert decomposition by exact (weighted) quantiles (see decomp.h). */
#include "decomp.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_keys.h"

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

/* The deepest level set a row belongs to: its level, the last set holding
 * every deeper one. */
static int row_top_set(const double *row, int level_col)
{
    double l = row[level_col];
    return l > 0 ? (l < GP_DECOMP_LEVEL_SETS - 1 ? (int)l : GP_DECOMP_LEVEL_SETS - 1) : 0;
}

/* The level sets' row counts per piece (load[piece * C + c]: rows of level
 * >= c, the last set every deeper level too), summed over the ranks, and
 * each piece's owner. The aim is the time of a dt_max of block steps,
 * T = sum over c of s_c * (the largest count of set c on a rank), where s_c
 * is how many block steps make set c the active one (1 for c = 0, else
 * 2^(c - 1)): pieces are dealt largest work first (sum of s_c load), each
 * to the rank where it raises T least (ties: the rank with the least work,
 * then fewer pieces, then the lower rank), LPT scheduling over the sets.
 * Deep sets of a few rows weigh by the steps they cost, not by their
 * share, so they cannot pin the deal. The same sums on every rank, so the
 * same owners. Returns 0 or -1 (no memory on some rank: collective). */
static int assign_pieces(MPI_Comm comm, int P, int npieces, const kid *v, size_t n,
                         const int *piece, const double *d, size_t ncol, int level_col, int *owner)
{
    enum { C = GP_DECOMP_LEVEL_SETS };
    unsigned long long *load = calloc((size_t)npieces * C, sizeof *load);
    double *A = calloc((size_t)P * C, sizeof *A), *work = calloc((size_t)P, sizeof *work);
    int *order = malloc((size_t)npieces * sizeof *order), *held = calloc((size_t)P, sizeof *held);
    double *big = malloc((size_t)npieces * sizeof *big);
    int bad = !load || !A || !work || !order || !held || !big, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) { free(load); free(A); free(work); free(order); free(held); free(big); return -1; }
    for (size_t k = 0; k < n; k++) {
        int top = row_top_set(&d[v[k].row * ncol], level_col);
        for (int c = 0; c <= top; c++) load[(size_t)piece[k] * C + c]++;
    }
    MPI_Allreduce(MPI_IN_PLACE, load, npieces * C, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    double steps[C], most[C];
    for (int c = 0; c < C; c++) {
        steps[c] = c == 0 ? 1.0 : ldexp(1.0, c - 1);
        most[c] = 0;
    }
    for (int q = 0; q < npieces; q++) {
        order[q] = q;
        big[q] = 0;
        for (int c = 0; c < C; c++) big[q] += steps[c] * (double)load[q * C + c];
    }
    /* insertion sort by decreasing work, then index: npieces is 4 P */
    for (int a = 1; a < npieces; a++)
        for (int b = a; b > 0 && (big[order[b]] > big[order[b - 1]] ||
                                  (big[order[b]] == big[order[b - 1]] && order[b] < order[b - 1])); b--) {
            int t = order[b]; order[b] = order[b - 1]; order[b - 1] = t;
        }
    for (int a = 0; a < npieces; a++) {
        int q = order[a], best = -1;
        double best_rise = 0;
        for (int r = 0; r < P; r++) {
            double rise = 0;
            for (int c = 0; c < C; c++)
                rise += steps[c] * fmax(0.0, A[r * C + c] + (double)load[q * C + c] - most[c]);
            if (best < 0 || rise < best_rise ||
                (rise == best_rise && (work[r] < work[best] ||
                                       (work[r] == work[best] && held[r] < held[best])))) {
                best = r;
                best_rise = rise;
            }
        }
        owner[q] = best;
        held[best]++;
        work[best] += big[q];
        for (int c = 0; c < C; c++) {
            A[best * C + c] += (double)load[q * C + c];
            most[c] = fmax(most[c], A[best * C + c]);
        }
    }
    free(load); free(A); free(work); free(order); free(held); free(big);
    return 0;
}

/* Merging the runs that arrive sorted from each sender: a row on the wire
 * is its ncol columns, then its id and key as 8 bytes each. The rows that
 * stay on this rank never go on the wire: their run (`self`) is read from
 * the sorted (key, id, row) list `own` and the rows themselves from `d`. */
typedef struct runs {
    const double *buf;
    size_t wide, ncol;
    size_t *next, *end;   /* each run's current and end row */
    int self;
    const kid *own;
    const double *d;
} runs;

/* Run r's current row's (key, id) and columns. */
static void run_head(const runs *R, int r, uint64_t *k, uint64_t *i, const double **row)
{
    if (r == R->self) {
        const kid *o = &R->own[R->next[r]];
        *k = o->key;
        *i = o->id;
        *row = &R->d[o->row * R->ncol];
        return;
    }
    const double *w = &R->buf[R->next[r] * R->wide];
    memcpy(i, &w[R->ncol], sizeof *i);
    memcpy(k, &w[R->ncol + 1], sizeof *k);
    *row = w;
}

/* Is run a's current row before run b's, in (key, id) order? */
static int run_less(const runs *R, int a, int b)
{
    uint64_t ka, ia, kb, ib;
    const double *row;
    run_head(R, a, &ka, &ia, &row);
    run_head(R, b, &kb, &ib, &row);
    return less(ka, ia, kb, ib);
}

/* Restores the min-heap h[0..nh) of runs below position c. */
static void sift_down(const runs *R, int *h, int nh, int c)
{
    int top = h[c];
    for (;;) {
        int l = 2 * c + 1;
        if (l >= nh) break;
        if (l + 1 < nh && run_less(R, h[l + 1], h[l])) l++;
        if (!run_less(R, h[l], top)) break;
        h[c] = h[l];
        c = l;
    }
    h[c] = top;
}

/* The decomposition: the curve cut into P * pieces_per_rank pieces of
 * equal weight; pieces_per_rank 1: piece q to rank q (contiguous domains),
 * else the pieces dealt by assign_pieces. */
static int decompose(MPI_Comm comm, size_t *n_io, size_t ncol, int level_col, int pieces_per_rank,
                     double **data_io, uint64_t **id_io, char *err, size_t errlen)
{
    int rank, P;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &P);
    size_t n = *n_io;
    const double *d = *data_io;
    /* the cube around every particle (gravplug_keys.h's root cube, globally:
     * the one mpi-tree's trees are built in, so the pieces are runs of
     * their keys) */
    double mn[3], mx[3];
    gp_host_bounds(n, d, d + 1, d + 2, ncol, mn, mx);
    double gmn[3], gmx[3];
    MPI_Allreduce(mn, gmn, 3, MPI_DOUBLE, MPI_MIN, comm);
    MPI_Allreduce(mx, gmx, 3, MPI_DOUBLE, MPI_MAX, comm);
    unsigned long long nl = n, N = 0;
    MPI_Allreduce(&nl, &N, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
    if (N == 0) return 0;
    if (level_col >= (int)ncol) level_col = -1;
    if (level_col < 0) pieces_per_rank = 1;
    double lo[3], inv;
    gp_host_cube_of_bounds(gmn, gmx, lo, &inv);

    kid *v = sorted_rows(n, d, ncol, *id_io, lo, inv);
    if (fail_all(comm, v == NULL, err, errlen, "for the keys")) { free(v); return -1; }
    /* pw[k]: the weight of the first k sorted rows (pw[k] = k unweighted) */
    uint64_t *pw = malloc((n + 1) * sizeof *pw);
    if (fail_all(comm, pw == NULL, err, errlen, "for the weights")) { free(v); free(pw); return -1; }
    pw[0] = 0;
    if (pieces_per_rank > 1 && level_col >= 0) {
        /* pieces: each level set weighs the same in all (a row 2^58 / the
         * set's global count for each set it is in: at most 2^61 in all),
         * so the few deep rows are cut as finely as the many shallow ones
         * and every set spans pieces enough to be dealt out evenly */
        enum { C = GP_DECOMP_LEVEL_SETS };
        unsigned long long cnt_set[C] = { 0 };
        uint64_t wset[C];
        for (size_t k = 0; k < n; k++)
            for (int c = 0, top = row_top_set(&d[k * ncol], level_col); c <= top; c++) cnt_set[c]++;
        MPI_Allreduce(MPI_IN_PLACE, cnt_set, C, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);
        for (int c = 0; c < C; c++) wset[c] = cnt_set[c] ? (UINT64_C(1) << 58) / cnt_set[c] : 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t w = 0;
            for (int c = 0, top = row_top_set(&d[v[k].row * ncol], level_col); c <= top; c++) w += wset[c];
            pw[k + 1] = pw[k] + w;
        }
    } else {
        for (size_t k = 0; k < n; k++) pw[k + 1] = pw[k] + row_weight(&d[v[k].row * ncol], level_col);
    }
    unsigned long long wl = pw[n], W = 0;
    MPI_Allreduce(&wl, &W, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm);

    /* the npieces - 1 cut points: the smallest (key, id) with at least
     * q W / npieces of the weight below it, by bisection over keys, then
     * over ids */
    const int npieces = P * pieces_per_rank, nc = npieces - 1;
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
                unsigned long long want = (unsigned long long)((unsigned __int128)(q + 1) * W / (unsigned)npieces);
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
    /* each sorted row's piece (the number of cuts at or below it), each
     * piece's rank, then each row's rank */
    int *sc = calloc((size_t)P, sizeof *sc), *rc = calloc((size_t)P, sizeof *rc);
    int *sd = calloc((size_t)P, sizeof *sd), *rd = calloc((size_t)P, sizeof *rd);
    int *owner = malloc((size_t)npieces * sizeof *owner), *dest = malloc((n ? n : 1) * sizeof *dest);
    const size_t wide = ncol + 2;   /* a row on the wire: its columns, id, key */
    double *sbuf = malloc((n ? n : 1) * wide * sizeof *sbuf);
    int bad = !sc || !rc || !sd || !rd || !sbuf || !owner || !dest || n * wide > (size_t)INT_MAX;
    free(pw);
    pw = NULL;
    if (!fail_all(comm, bad, err, errlen, "for the exchange")) {
        for (size_t k = 0, piece = 0; k < n; k++) {   /* dest: each row's piece first */
            while ((int)piece < nc && !less(v[k].key, v[k].id, ck[piece], ci[piece])) piece++;
            dest[k] = (int)piece;
        }
        for (int q = 0; q < npieces; q++) owner[q] = q;
        if (pieces_per_rank > 1 &&
            assign_pieces(comm, P, npieces, v, n, dest, d, ncol, level_col, owner)) {
            snprintf(err, errlen, "domain decomposition: no memory for the pieces on some rank; "
                                  "use more ranks or fewer particles");
            bad = 1;
        }
    } else {
        bad = 1;
    }
    if (bad) {
        free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
        free(sc); free(rc); free(sd); free(rd); free(sbuf); free(owner); free(dest);
        return -1;
    }
    size_t nown = 0;   /* rows that stay here */
    for (size_t k = 0; k < n; k++) {
        dest[k] = owner[dest[k]];
        if (dest[k] == rank) nown++;
        else sc[dest[k]] += (int)wide;
    }
    /* the rows for other ranks grouped by rank, each group in (key, id)
     * order; the staying ones (most of them after the first migration)
     * keep their place in v, compacted to its front in the same order,
     * and skip the send buffer and the exchange: at 2^20 and P = 2 each of
     * those was a freshly mapped 100 MB copy */
    for (int r = 0, so = 0; r < P; r++) { sd[r] = so; so += sc[r]; }
    for (size_t k = 0, o = 0; k < n; k++) {
        if (dest[k] == rank) { v[o++] = v[k]; continue; }
        double *row = &sbuf[sd[dest[k]]];
        sd[dest[k]] += (int)wide;
        memcpy(row, &d[v[k].row * ncol], ncol * sizeof *row);
        memcpy(&row[ncol], &v[k].id, sizeof v[k].id);   /* id and key ride as 8 bytes each */
        memcpy(&row[ncol + 1], &v[k].key, sizeof v[k].key);
    }
    free(owner);
    free(dest);
    if (level_col >= 0) {
        /* a rank left without rows (one row outweighs a rank's share: few
         * particles on deep levels) would hold nothing: cut by count instead */
        int empty = 0;
        for (int q = 0; q < P; q++) rc[q] = sc[q] > 0 || (q == rank && nown > 0);   /* rows to q from here? */
        MPI_Allreduce(MPI_IN_PLACE, rc, P, MPI_INT, MPI_MAX, comm);
        for (int q = 0; q < P; q++) empty |= rc[q] == 0;
        if (empty) {
            free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
            free(sc); free(rc); free(sd); free(rd); free(sbuf);
            return decompose(comm, n_io, ncol, -1, 1, data_io, id_io, err, errlen);
        }
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
    long long rtot = 0;
    for (int r = 0, so = 0; r < P; r++) { sd[r] = so; so += sc[r]; rd[r] = (int)rtot; rtot += rc[r]; }
    double *rbuf = malloc((size_t)(rtot ? rtot : 1) * sizeof *rbuf);
    size_t m = (size_t)rtot / wide + nown;
    double *nd = malloc((m ? m : 1) * ncol * sizeof *nd);
    uint64_t *ni = malloc((m ? m : 1) * sizeof *ni);
    int *heap = malloc((size_t)P * sizeof *heap);
    size_t *next = malloc((size_t)P * sizeof *next), *end = malloc((size_t)P * sizeof *end);
    bad = !rbuf || !nd || !ni || !heap || !next || !end || rtot > INT_MAX;
    if (!fail_all(comm, bad, err, errlen, "for the received particles")) {
        MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rc, rd, MPI_DOUBLE, comm);
        /* each sender's rows came in (key, id) order: merging the P runs
         * gives the sorted whole without computing the keys again and
         * sorting (0.03-0.05 s per migration at 2^20, P = 2) */
        runs R = { rbuf, wide, ncol, next, end, rank, v, d };
        int nh = 0;
        for (int r = 0; r < P; r++) {
            next[r] = r == rank ? 0 : (size_t)rd[r] / wide;
            end[r] = r == rank ? nown : next[r] + (size_t)rc[r] / wide;
            if (next[r] < end[r]) heap[nh++] = r;
        }
        for (int c = nh / 2 - 1; c >= 0; c--) sift_down(&R, heap, nh, c);
        for (size_t k = 0; k < m; k++) {
            int r = heap[0];
            uint64_t key;
            const double *row;
            run_head(&R, r, &key, &ni[k], &row);
            memcpy(&nd[k * ncol], row, ncol * sizeof *nd);
            if (++next[r] == end[r]) heap[0] = heap[--nh];
            if (nh > 0) sift_down(&R, heap, nh, 0);
        }
        free(*data_io);
        free(*id_io);
        *data_io = nd;
        *id_io = ni;
        *n_io = m;
        nd = NULL;
        ni = NULL;
    } else {
        bad = 1;
    }
    free(heap); free(next); free(end);
    free(v); free(ck); free(ci); free(cnt); free(tot); free(klo); free(khi);
    free(sc); free(rc); free(sd); free(rd); free(sbuf); free(rbuf); free(nd); free(ni);
    return bad ? -1 : 0;
}

int gp_mpi_decompose_weighted(MPI_Comm comm, size_t *n_io, size_t ncol, int level_col, double **data_io,
                              uint64_t **id_io, char *err, size_t errlen)
{
    return decompose(comm, n_io, ncol, level_col, 1, data_io, id_io, err, errlen);
}

int gp_mpi_decompose_levels(MPI_Comm comm, size_t *n_io, size_t ncol, int level_col, double **data_io,
                            uint64_t **id_io, char *err, size_t errlen)
{
    return decompose(comm, n_io, ncol, level_col, GP_DECOMP_PIECES_PER_RANK, data_io, id_io, err,
                     errlen);
}
