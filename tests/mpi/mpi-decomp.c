/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-decomp.c — host_stub/mpi/decomp.c under mpirun: the Peano-Hilbert
 * decomposition puts every particle on exactly one rank, balanced to one
 * particle, in global curve order, with its payload, and the result does
 * not depend on how the particles were spread before (round-robin, blocks
 * in reverse, all on rank 0); weighted by 2^level, every rank holds the
 * same weight to one row's, and a row that outweighs every share makes
 * it cut by count; with every level set balanced (pieces dealt to the
 * ranks), each set's largest share stays within 1.5x the mean, from any
 * start, with every row kept. Rank 0 prints TAP.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_keys.h"
#include "host_stub/mpi/decomp.h"
#include "tap.h"
#include "testlib.h"
#include "mpi-testlib.h"

enum { NCOL = 7 };
static int rank, P;
static unsigned long long first_levels_hash;
static double T_levels;

static void check(int pass, const char *what)
{
    mpi_test_ok(rank, pass, "%s", what);
}

/* Row i for the weighted decompositions: position, level (column 3; given,
 * or by radius when level < 0: 0 outside 1.6 .. 6 inside 0.05, deep in the
 * centre as a galaxy's block steps put them), two zeros, mass. */
static void level_row(const double *pos, const double *mass, size_t i, int level, double *row)
{
    const double *x = &pos[3 * i];
    double r = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    if (level < 0)
        level = r < 0.05 ? 6 : r < 0.1 ? 5 : r < 0.2 ? 4 : r < 0.4 ? 3 : r < 0.8 ? 2 : r < 1.6 ? 1 : 0;
    memcpy(row, x, 3 * sizeof *row);
    row[3] = (double)level;
    row[4] = row[5] = 0.0;
    row[6] = mass[i];
}

/* Gathers every rank's ids in rank order to rank 0 (N entries). */
static uint64_t *gather_ids(size_t n, const uint64_t *id, size_t N, int *counts)
{
    int c = (int)n, *displs = malloc((size_t)P * sizeof *displs);
    MPI_Gather(&c, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int tot = 0;
    for (int r = 0; r < P && rank == 0; r++) { displs[r] = tot; tot += counts[r]; }
    uint64_t *all = rank == 0 ? malloc((N ? N : 1) * sizeof *all) : NULL;
    MPI_Gatherv(id, c, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    free(displs);
    return all;
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &P);
    const size_t N = 20011;            /* not a multiple of P */
    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    tl_plummer(N, 7, 1.0, 30.0, pos, mass);
    for (size_t i = 0; i < N; i += 97) memcpy(&pos[3 * i], &pos[3 * (i / 2)], 3 * sizeof *pos);
    if (rank == 0) diag("decomposition at P = %d, N = %zu (some coincident positions)", P, N);
    uint64_t *first = NULL;
    int counts[256];
    for (int layout = 0; layout < 3; layout++) {
        /* 0: round-robin; 1: blocks, rank r gets block P-1-r; 2: all on rank 0 */
        size_t n = 0;
        double *d = malloc(N * NCOL * sizeof *d);
        uint64_t *id = malloc(N * sizeof *id);
        for (size_t i = 0; i < N; i++) {
            int owner = layout == 0 ? (int)(i % (size_t)P)
                      : layout == 1 ? P - 1 - (int)(i * (size_t)P / N) : 0;
            if (owner != rank) continue;
            memcpy(&d[n * NCOL], &pos[3 * i], 3 * sizeof *d);
            d[n * NCOL + 3] = (double)i; d[n * NCOL + 4] = -(double)i; d[n * NCOL + 5] = 0.5 * (double)i;
            d[n * NCOL + 6] = mass[i];
            id[n++] = i;
        }
        char err[256];
        int rc = gp_mpi_decompose(MPI_COMM_WORLD, &n, NCOL, &d, &id, err, sizeof err);
        char what[160];
        snprintf(what, sizeof what, "layout %d: gp_mpi_decompose succeeds", layout);
        check(rc == 0, what);
        /* balanced to one particle: exactly the quantile counts */
        size_t want = (size_t)(rank + 1) * N / (size_t)P - (size_t)rank * N / (size_t)P;
        snprintf(what, sizeof what, "layout %d: rank r holds [r N/P, (r+1) N/P) of the curve", layout);
        check(n == want, what);
        /* payload travelled with its id */
        int carried = 1;
        for (size_t k = 0; k < n; k++) {
            uint64_t i = id[k];
            carried &= i < N && memcmp(&d[k * NCOL], &pos[3 * i], 3 * sizeof *d) == 0 &&
                        d[k * NCOL + 3] == (double)i && d[k * NCOL + 4] == -(double)i &&
                        d[k * NCOL + 6] == mass[i];
        }
        snprintf(what, sizeof what, "layout %d: every row keeps its payload", layout);
        check(carried, what);
        uint64_t *all = gather_ids(n, id, N, counts);
        int good = 1;
        if (rank == 0) {
            /* each id once, and the concatenation is in (key, id) order */
            unsigned char *seen = calloc(N, 1);
            for (size_t k = 0; k < N; k++) { good &= all[k] < N && !seen[all[k]]; if (all[k] < N) seen[all[k]] = 1; }
            free(seen);
            double lo[3], inv, mn[3], mx[3];
            for (int a = 0; a < 3; a++) { mn[a] = mx[a] = pos[a]; }
            for (size_t i = 0; i < N; i++)
                for (int a = 0; a < 3; a++) {
                    mn[a] = pos[3 * i + a] < mn[a] ? pos[3 * i + a] : mn[a];
                    mx[a] = pos[3 * i + a] > mx[a] ? pos[3 * i + a] : mx[a];
                }
            double side = 0;
            for (int a = 0; a < 3; a++) side = mx[a] - mn[a] > side ? mx[a] - mn[a] : side;
            side *= 1.0 + 1e-9;
            for (int a = 0; a < 3; a++) lo[a] = 0.5 * mn[a] + 0.5 * mx[a] - 0.5 * side;
            inv = (double)GP_KEY_GRID / side;
            for (size_t k = 1; k < N && good; k++) {
                const double *p = &pos[3 * all[k - 1]], *q = &pos[3 * all[k]];
                uint64_t a = gp_key_of_position(GP_KEY_PEANO_HILBERT, p[0], p[1], p[2], lo, inv);
                uint64_t b = gp_key_of_position(GP_KEY_PEANO_HILBERT, q[0], q[1], q[2], lo, inv);
                good &= a < b || (a == b && all[k - 1] < all[k]);
            }
        }
        snprintf(what, sizeof what, "layout %d: every particle once, ranks in global curve order", layout);
        check(good, what);
        if (layout == 0) first = all;
        else {
            int same = rank != 0 || memcmp(first, all, N * sizeof *all) == 0;
            snprintf(what, sizeof what, "layout %d: the same sets as from round-robin", layout);
            check(same, what);
            free(all);
        }
        free(d);
        free(id);
    }
    /* weighted by 2^level (block steps): levels deep in the centre */
    for (int extreme = 0; extreme < 2; extreme++) {
        size_t n = 0, Nw = extreme ? (size_t)P * 3 : N;
        double *d = malloc(Nw * NCOL * sizeof *d);
        uint64_t *id = malloc(Nw * sizeof *id);
        for (size_t i = 0; i < Nw; i++) {
            if ((int)(i % (size_t)P) != rank) continue;
            level_row(pos, mass, i, extreme ? (i == 0 ? 40 : 0) : -1, &d[n * NCOL]);
            id[n++] = i;   /* extreme: one row of level 40 outweighs every share */
        }
        char err[256], what[200];
        int rc = gp_mpi_decompose_weighted(MPI_COMM_WORLD, &n, NCOL, 3, &d, &id, err, sizeof err);
        snprintf(what, sizeof what, "%s: gp_mpi_decompose_weighted succeeds",
                 extreme ? "one row of level 40 among 3P" : "levels 0-6 by radius");
        check(rc == 0, what);
        unsigned long long w = 0, wmax = 0, W = 0, cnt = n, cmin = 0, cmax = 0, ctot = 0;
        for (size_t k = 0; k < n; k++) {
            int l = (int)d[k * NCOL + 3];
            unsigned long long wk = 1ULL << (l < GP_DECOMP_MAX_WEIGHT_LEVEL ? l : GP_DECOMP_MAX_WEIGHT_LEVEL);
            w += wk;
            wmax = wk > wmax ? wk : wmax;
        }
        unsigned long long wmax_all = 0;
        MPI_Allreduce(&w, &W, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&wmax, &wmax_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&cnt, &cmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&cnt, &cmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(&cnt, &ctot, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (!extreme) {
            double share = (double)W / P;
            snprintf(what, sizeof what, "levels 0-6: every rank's weight within one row's weight of W/P "
                     "(W = %llu, largest row %llu)", W, wmax_all);
            check(fabs((double)w - share) <= (double)wmax_all, what);
            if (rank == 0) diag("weighted: particles per rank from %llu to %llu", cmin, cmax);
            snprintf(what, sizeof what, "levels 0-6: the centre's ranks hold fewer particles (counts %llu to %llu)",
                     cmin, cmax);
            check(P == 1 || cmax > 2 * cmin, what);
        } else {
            snprintf(what, sizeof what, "one heavy row: every rank keeps rows (cut by count instead: %llu to %llu)",
                     cmin, cmax);
            check(cmin >= 1 && cmax - cmin <= 1, what);
        }
        snprintf(what, sizeof what, "%s: every particle kept (%llu)", extreme ? "one heavy row" : "levels 0-6", ctot);
        check(ctot == Nw, what);
        free(d);
        free(id);
    }
    /* every level set balanced (gp_mpi_decompose_levels): the same levels
     * by radius, from round-robin and from all rows on rank 0 */
    unsigned long long worst_contig = 0;
    for (int mode = 0; mode < 3; mode++) {
        /* 0: levels, round-robin; 1: levels, all on rank 0; 2: the
         * contiguous weighted cut, for comparison */
        size_t n = 0;
        double *d = malloc(N * NCOL * sizeof *d);
        uint64_t *id = malloc(N * sizeof *id);
        for (size_t i = 0; i < N; i++) {
            if (mode == 1 ? rank != 0 : (int)(i % (size_t)P) != rank) continue;
            level_row(pos, mass, i, -1, &d[n * NCOL]);
            id[n++] = i;
        }
        char err[256], what[240];
        int rc = mode < 2 ? gp_mpi_decompose_levels(MPI_COMM_WORLD, &n, NCOL, 3, &d, &id, err, sizeof err)
                          : gp_mpi_decompose_weighted(MPI_COMM_WORLD, &n, NCOL, 3, &d, &id, err, sizeof err);
        if (mode < 2) {
            snprintf(what, sizeof what, "levels (%s): gp_mpi_decompose_levels succeeds",
                     mode ? "all rows on rank 0" : "round-robin");
            check(rc == 0, what);
        }
        /* rows of level >= c on this rank, c = 0 .. 6 */
        unsigned long long set[7] = { 0 }, smax[7], ssum[7];
        for (size_t k = 0; k < n; k++)
            for (int c = 0; c <= (int)d[k * NCOL + 3]; c++) set[c]++;
        MPI_Allreduce(set, smax, 7, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(set, ssum, 7, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        /* the worst set among those of >= 20 rows a rank: its largest
         * share over the mean, in percent */
        unsigned long long worst = 0;
        if (rank == 0 && getenv("GP_TEST_VERBOSE"))
            for (int c = 0; c < 7; c++) diag("mode %d set %d: max %llu sum %llu", mode, c, smax[c], ssum[c]);
        for (int c = 0; c < 7; c++)
            if (ssum[c] >= 20ULL * (unsigned long long)P) {
                unsigned long long pct = 100ULL * smax[c] * (unsigned long long)P / ssum[c];
                worst = pct > worst ? pct : worst;
            }
        /* a dt_max's block steps wait for the busiest rank: T = sum over
         * the sets of (steps making set c the active one) x largest count */
        double T = 0;
        for (int c = 0; c < 7; c++) T += (c ? ldexp(1.0, c - 1) : 1.0) * (double)smax[c];
        if (mode == 0) T_levels = T;
        if (mode == 2) {
            worst_contig = worst;
            if (P > 1) {
                snprintf(what, sizeof what, "levels: a dt_max's block steps wait less than with the "
                         "contiguous weighted cut (T %.0f against %.0f)", T_levels, T);
                check(T_levels < T, what);
            }
        } else {
            snprintf(what, sizeof what, "levels (%s): every particle kept (%llu), every level set's "
                     "largest share <= 1.5 x the mean (worst %llu%%)",
                     mode ? "all rows on rank 0" : "round-robin", ssum[0], worst);
            check(ssum[0] == N && worst <= 150, what);
        }
        if (mode == 0) {
            /* the same rows on every rank whatever the start: ids hashed */
            unsigned long long h = 0, hall = 0;
            for (size_t k = 0; k < n; k++) h += (id[k] * 0x9e3779b97f4a7c15ULL) ^ (unsigned long long)rank;
            MPI_Allreduce(&h, &hall, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            first_levels_hash = hall;
        } else if (mode == 1) {
            unsigned long long h = 0, hall = 0;
            for (size_t k = 0; k < n; k++) h += (id[k] * 0x9e3779b97f4a7c15ULL) ^ (unsigned long long)rank;
            MPI_Allreduce(&h, &hall, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
            check(hall == first_levels_hash, "levels: every row on the same rank from either start");
        }
        free(d);
        free(id);
    }
    if (rank == 0) diag("level sets' worst share over the mean: contiguous weighted cut %llu%%", worst_contig);
    {
        /* one row of level 40 among 3P: it outweighs most pieces, which stay
         * empty, and a rank without rows makes the deal a cut by count */
        size_t n = 0, Nx = (size_t)P * 3;
        double *d = malloc(Nx * NCOL * sizeof *d);
        uint64_t *id = malloc(Nx * sizeof *id);
        for (size_t i = 0; i < Nx; i++) {
            if ((int)(i % (size_t)P) != rank) continue;
            level_row(pos, mass, i, i == 0 ? 40 : 0, &d[n * NCOL]);
            id[n++] = i;
        }
        char err[256], what[200];
        int rc = gp_mpi_decompose_levels(MPI_COMM_WORLD, &n, NCOL, 3, &d, &id, err, sizeof err);
        unsigned long long cnt = n, cmin = 0, ctot = 0;
        MPI_Allreduce(&cnt, &cmin, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&cnt, &ctot, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "levels, one heavy row among 3P: every rank keeps rows (fewest %llu), "
                 "every row kept (%llu)", cmin, ctot);
        check(rc == 0 && cmin >= 1 && ctot == Nx, what);
        free(d);
        free(id);
    }
    free(first); free(pos); free(mass);
    return mpi_test_done(rank);
}
