/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ic-parallel — the initial conditions of a run under mpirun, two ways:
 *
 *   whole  every rank makes all n particles (gp_ic_make) and keeps its
 *          slice [n r/P, n (r+1)/P) as rows, as gravhost-mpi did before
 *          gh_par_set_ic;
 *   range  every rank makes only its slice (gp_ic_make_range, block sums
 *          shared by MPI_Allgatherv), as gh_par_set_ic does.
 *
 *   mpirun -np P build/bench/ic-parallel MODEL N whole|range [SEED]
 *
 * Prints the slowest rank's time, each rank's CPU time and peak resident
 * memory (getrusage; memory before and after), and a digest of the whole set that does
 * not depend on P or the way (a sum of per-particle hashes), so both ways
 * can be seen to make the same particles. bench/results/ic/raw/ic-parallel.md
 * has the runs.
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ic.h"

enum { NCOL = 7 };

static int share(void *ctx, int status, double *sums, size_t width, size_t n_blocks, size_t own_first,
                 size_t own_count, char *err, size_t errlen)
{
    (void)ctx;
    int size, any = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (any != 0 || n_blocks * width > (size_t)INT_MAX) {
        if (status == 0) snprintf(err, errlen, "another rank failed");
        return -1;
    }
    int mine[2] = {(int)(own_first * width), (int)(own_count * width)};
    int *all = malloc(2 * (size_t)size * sizeof *all), *cnt = malloc((size_t)size * sizeof *cnt),
        *off = malloc((size_t)size * sizeof *off);
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int q = 0; q < size; ++q) {
        off[q] = all[2 * q];
        cnt[q] = all[2 * q + 1];
    }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sums, cnt, off, MPI_DOUBLE, MPI_COMM_WORLD);
    free(all);
    free(cnt);
    free(off);
    return 0;
}

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static long peak_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 4 || (strcmp(argv[3], "whole") && strcmp(argv[3], "range"))) {
        if (!rank) fprintf(stderr, "usage: mpirun -np P %s MODEL N whole|range [SEED]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *model = argv[1];
    size_t n = strtoull(argv[2], NULL, 10);
    int whole = strcmp(argv[3], "whole") == 0;
    uint64_t seed = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
    size_t lo = n * (size_t)rank / (size_t)size, hi = n * (size_t)(rank + 1) / (size_t)size, k = hi - lo;
    long before = peak_kb();
    char err[512];
    gp_ic ic;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), c0 = cpu_s();
    int rc = whole ? gp_ic_make(model, n, seed, NULL, &ic, err, sizeof err)
                   : gp_ic_make_range(model, n, seed, NULL, lo, hi, share, NULL, &ic, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "rank %d: %s\n", rank, err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* this rank's slice as rows, as gravhost-mpi hands it to the decomposition */
    size_t at = whole ? lo : 0;
    double *rows = malloc(k * NCOL * sizeof *rows);
    uint64_t *ids = malloc(k * sizeof *ids);
    if (!rows || !ids) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < k; ++i) {
        memcpy(&rows[i * NCOL], &ic.pos[3 * (at + i)], 3 * sizeof(double));
        memcpy(&rows[i * NCOL + 3], &ic.vel[3 * (at + i)], 3 * sizeof(double));
        rows[i * NCOL + 6] = ic.mass[at + i];
        ids[i] = ic.id[at + i];
    }
    gp_ic_free(&ic);
    double t = MPI_Wtime() - t0, tmax = 0, cpu = cpu_s() - c0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    uint64_t digest = 0, total = 0;
    for (size_t i = 0; i < k; ++i) {
        uint64_t h = mix(ids[i]);
        const uint64_t *w = (const uint64_t *)&rows[i * NCOL];
        for (int c = 0; c < NCOL; ++c) h = mix(h ^ w[c]);
        digest += h;
    }
    MPI_Reduce(&digest, &total, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    long after = peak_kb(), kb[2] = {before, after};
    long *all = rank ? NULL : malloc(2 * (size_t)size * sizeof *all);
    double *cpus = rank ? NULL : malloc((size_t)size * sizeof *cpus);
    MPI_Gather(kb, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Gather(&cpu, 1, MPI_DOUBLE, cpus, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s n=%zu P=%d %s: %.3f s (slowest rank); digest %016llx; CPU s per rank:", model, n, size,
               argv[3], tmax, (unsigned long long)total);
        for (int q = 0; q < size; ++q) printf(" %.2f", cpus[q]);
        printf("; peak RSS per rank (MB, before -> after):");
        for (int q = 0; q < size; ++q) printf(" %.0f->%.0f", all[2 * q] / 1024.0, all[2 * q + 1] / 1024.0);
        printf("\n");
        free(all);
        free(cpus);
    }
    free(rows);
    free(ids);
    MPI_Finalize();
    return 0;
}
