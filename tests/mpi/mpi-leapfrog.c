/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-leapfrog.c — mpi-tree and gp_mpi_decompose together, as gravhost
 * under mpirun would use them: a Plummer sphere integrated with a shared
 * time step leapfrog (kick-drift-kick) for 40 steps, the particles
 * re-decomposed along the Peano-Hilbert curve every 10 steps (migration
 * with their velocities and accelerations: the state rides as columns),
 * energy and Lagrangian radii from global reductions. Rank 0 integrates
 * the same particles alone with cpu-tree and checks that the energy error
 * and the 10/50/90% Lagrangian radii agree within tree error.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "host_stub/mpi/decomp.h"
#include "tap.h"
#include "testlib.h"
#include "mpi-testlib.h"

enum { NCOL = 10 };            /* x y z vx vy vz m ax ay az */
static int rank, P;
static const double DT = 1.0 / 128;   /* eps = 0.01 in run() */

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Energy and the 10/50/90% mass radii (equal masses) of n rows (on rank 0:
 * all rows; the MPI version gathers first). pot[k] is the potential. */
static void diagnose(size_t n, const double *d, const double *pot, double *E, double lr[3])
{
    double e = 0, *r = malloc((n ? n : 1) * sizeof *r);
    for (size_t k = 0; k < n; k++) {
        const double *q = &d[k * NCOL];
        e += 0.5 * q[6] * (q[3] * q[3] + q[4] * q[4] + q[5] * q[5]) + 0.5 * q[6] * pot[k];
        r[k] = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    }
    qsort(r, n, sizeof *r, cmp_d);
    *E = e;
    lr[0] = r[n / 10]; lr[1] = r[n / 2]; lr[2] = r[9 * n / 10];
    free(r);
}

/* One solver's whole run; comm: the ranks taking part (mpi-tree) or NULL
 * (cpu-tree alone). Returns the relative energy error, fills lr (final
 * Lagrangian radii, on rank 0). */
static double run(const gp_api *api, int use_mpi, size_t n, double *d, uint64_t *id, double lr[3])
{
    MPI_Comm comm = MPI_COMM_WORLD;
    gp_param kv[] = { { "eps", "0.01" }, { "theta", "0.5" } };
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = 2, .device = -1,
                       .mpi_comm = use_mpi ? &comm : NULL };
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));
    double *pos = NULL, *mass = NULL, *acc = NULL, *pot = NULL, E0 = 0, E = 0;
    char err[256];
    for (int step = 0; step <= 40; step++) {
        if (use_mpi && step % 10 == 0 &&
            gp_mpi_decompose(MPI_COMM_WORLD, &n, NCOL, &d, &id, err, sizeof err))
            bail(err);
        free(pos); free(mass); free(acc); free(pot);
        pos = malloc(3 * (n ? n : 1) * sizeof *pos); mass = malloc((n ? n : 1) * sizeof *mass);
        acc = malloc(3 * (n ? n : 1) * sizeof *acc); pot = malloc((n ? n : 1) * sizeof *pot);
        for (size_t k = 0; k < n; k++) {
            memcpy(&pos[3 * k], &d[k * NCOL], 3 * sizeof *pos);
            mass[k] = d[k * NCOL + 6];
        }
        if (api->set_particles(s, n, pos, mass) || api->compute_forces(s, acc, pot))
            bail(api->last_error(s));
        for (size_t k = 0; k < n; k++) memcpy(&d[k * NCOL + 7], &acc[3 * k], 3 * sizeof *acc);
        if (step > 0)                           /* second half kick */
            for (size_t k = 0; k < n; k++)
                for (int c = 0; c < 3; c++) d[k * NCOL + 3 + c] += 0.5 * DT * d[k * NCOL + 7 + c];
        if (step == 0 || step == 40) {
            /* diagnostics: gather everything to rank 0 (small n) */
            int c = (int)(n * NCOL), *cnt = malloc((size_t)P * sizeof *cnt), *dis = malloc((size_t)P * sizeof *dis);
            int cp = (int)n, *cntp = malloc((size_t)P * sizeof *cntp), *disp = malloc((size_t)P * sizeof *disp);
            size_t tot = n;
            double *all = d, *allp = pot;
            if (use_mpi) {
                MPI_Gather(&c, 1, MPI_INT, cnt, 1, MPI_INT, 0, comm);
                MPI_Gather(&cp, 1, MPI_INT, cntp, 1, MPI_INT, 0, comm);
                int t = 0, tp = 0;
                for (int r = 0; r < P && rank == 0; r++) { dis[r] = t; t += cnt[r]; disp[r] = tp; tp += cntp[r]; }
                tot = (size_t)tp;
                all = rank == 0 ? malloc((size_t)(t ? t : 1) * sizeof *all) : NULL;
                allp = rank == 0 ? malloc((size_t)(tp ? tp : 1) * sizeof *allp) : NULL;
                MPI_Gatherv(d, c, MPI_DOUBLE, all, cnt, dis, MPI_DOUBLE, 0, comm);
                MPI_Gatherv(pot, cp, MPI_DOUBLE, allp, cntp, disp, MPI_DOUBLE, 0, comm);
            }
            if (rank == 0) diagnose(tot, all, allp, step == 0 ? &E0 : &E, lr);
            if (all != d) free(all);
            if (allp != pot) free(allp);
            free(cnt); free(dis); free(cntp); free(disp);
        }
        if (step == 40) break;
        for (size_t k = 0; k < n; k++)          /* kick, drift */
            for (int c = 0; c < 3; c++) {
                d[k * NCOL + 3 + c] += 0.5 * DT * d[k * NCOL + 7 + c];
                d[k * NCOL + c] += DT * d[k * NCOL + 3 + c];
            }
    }
    api->finalize(s);
    free(pos); free(mass); free(acc); free(pot);
    if (use_mpi) { free(d); free(id); }
    return rank == 0 ? fabs((E - E0) / E0) : 0;
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &P);
    gp_plugin *pm, *pt;
    char err[1024];
    if (gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-mpi-tree.so", &pm, err, sizeof err) ||
        gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-cpu-tree.so", &pt, err, sizeof err))
        bail(err);
    const size_t N = 4000;
    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    tl_plummer(N, 3, 1.0, 10.0, pos, mass);
    /* velocities: isotropic, virial-ish (sigma^2 ~ |phi| / 6 at r), from the seed */
    tl_rng rng = { 99 };
    double *all = malloc(N * NCOL * sizeof *all);
    for (size_t i = 0; i < N; i++) {
        double r = sqrt(pos[3 * i] * pos[3 * i] + pos[3 * i + 1] * pos[3 * i + 1] + pos[3 * i + 2] * pos[3 * i + 2]);
        double sig = sqrt(1.0 / (6.0 * sqrt(r * r + 0.35)));
        memcpy(&all[i * NCOL], &pos[3 * i], 3 * sizeof *all);
        for (int c = 0; c < 3; c++) all[i * NCOL + 3 + c] = sig * (2 * tl_uniform(&rng) - 1) * 1.7;
        all[i * NCOL + 6] = mass[i];
        for (int c = 0; c < 3; c++) all[i * NCOL + 7 + c] = 0;
    }
    /* the MPI run: rank r starts with the i % P == r rows */
    size_t n = 0;
    double *d = malloc(N * NCOL * sizeof *d);
    uint64_t *id = malloc(N * sizeof *id);
    for (size_t i = 0; i < N; i++)
        if ((int)(i % (size_t)P) == rank) { memcpy(&d[n * NCOL], &all[i * NCOL], NCOL * sizeof *d); id[n++] = i; }
    double lr_mpi[3], lr_one[3];
    double de_mpi = run(gp_plugin_api(pm), 1, n, d, id, lr_mpi);
    if (rank == 0) {
        double de_one = run(gp_plugin_api(pt), 0, N, all, NULL, lr_one);
        diag("P = %d: |dE/E| %.3g (cpu-tree alone %.3g); Lagrangian radii %.4f %.4f %.4f (alone %.4f %.4f %.4f)",
             P, de_mpi, de_one, lr_mpi[0], lr_mpi[1], lr_mpi[2], lr_one[0], lr_one[1], lr_one[2]);
        ok(de_mpi < 3 * de_one + 2e-4, "energy error within tree error of cpu-tree's alone");
        int close = 1;
        for (int k = 0; k < 3; k++) close &= fabs(lr_mpi[k] - lr_one[k]) < 0.01 * lr_one[k];
        ok(close, "10/50/90%% Lagrangian radii within 1%% of cpu-tree's alone");
    }
    free(pos); free(mass); free(all);
    gp_plugin_close(pm);
    gp_plugin_close(pt);
    return mpi_test_done(rank);
}
