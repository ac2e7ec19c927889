/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-blocksim.c — the block-step integrators (block-kdk, block-rk2, hermite) and
 * HOLD (hold, hold-kdk) of gp_sim under mpirun with mpi-tree, and migration with the whole
 * integrator state, as gravhost-mpi runs them. Every rank runs a gp_sim over its own
 * particles with the collective hook (gp_sim_set_collective: the next
 * block time and every solver call agreed through MPI_Allreduce), to
 * t = 0.5 in legs of dt_max, on two clusters (a compact one on some ranks,
 * a loose one on others: ranks idle in the deepest block steps take part
 * in every call with nothing active). Checked, for each scheme:
 *   - migrating at every dt_max boundary (gp_sim_export_state, the
 *     Peano-Hilbert decomposition, gp_sim_import_state) moves particles
 *     between ranks and costs no force call: force_calls = steps + 1 (the
 *     start), where restarting the integrator would add one per migration
 *     (hold: as many force calls as without migration);
 *   - the run with migration ends with the energy of the run without, and
 *     the energy error of cpu-tree in one process, within tree error;
 *   - in one process (cpu-tree, rank 0), importing its own exported rows
 *     at every dt_max boundary continues bit for bit like not doing so
 *     (for hermite only if its jerks travel in the rows);
 * and that rows off the level grid, or with a jerk that is not finite,
 * are refused naming the row.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "host_stub/ic/ic.h"
#include "host_stub/mpi/decomp.h"
#include "integrators/gp_sim.h"
#include "tap.h"
#include "mpi-testlib.h"

static int rank, P;
static const double DT_MAX = 0.0625, T_END = 0.5;

static int64_t reduce_world(void *ctx, int64_t x, int op)
{
    (void)ctx;
    int64_t r = 0;
    MPI_Allreduce(&x, &r, 1, MPI_INT64_T, op == GP_SIM_REDUCE_SUM ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
    return r;
}

static void must(gp_sim *sim, gp_status st)
{
    if (st != GP_OK) bail(gp_sim_last_error(sim));
}

static gp_sim *make_sim(const char *plugin, const char *integ, int mpi, size_t n, const double *d,
                        const uint64_t *id)
{
    gp_sim *sim = NULL;
    /* hermite: whole-group spheres, so a particle's force does not depend on
     * which others are active (docs/INTEGRATORS.md, "On a tree") */
    const char *names[] = { "eps", "theta", "subset_spheres" }, *values[] = { "0.05", "0.5", "whole" };
    int nparams = strcmp(integ, "hermite") == 0 ? 3 : 2;
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel), *m = malloc(n * sizeof *m);
    mpi_test_split_rows(n, d, pos, vel, m);
    if (gp_sim_new(&sim)) bail("gp_sim_new failed");
    if (mpi) must(sim, gp_sim_set_collective(sim, reduce_world, NULL));
    must(sim, gp_sim_open_solver(sim, plugin, nparams, names, values));
    must(sim, gp_sim_set_integrator(sim, integ));
    must(sim, gp_sim_set_integrator_param(sim, "dt", "0.0625"));
    must(sim, gp_sim_set_integrator_param(sim, "eta", "0.05"));   /* several levels */
    must(sim, gp_sim_set_integrator_param(sim, "max_level", "6"));
    must(sim, gp_sim_set_particles(sim, n, pos, vel, m, id));
    free(pos); free(vel); free(m);
    return sim;
}

static double energy(gp_sim *sim, int mpi)
{
    double e[2], g[2];
    must(sim, gp_sim_energies(sim, &e[0], &e[1]));
    if (mpi) MPI_Allreduce(e, g, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else { g[0] = e[0]; g[1] = e[1]; }
    return g[0] + g[1];
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Migration at a dt_max boundary: mpi, through the decomposition (returns
 * the particles that changed rank, summed); else the sim's own rows back. */
static uint64_t migrate(gp_sim *sim, int mpi)
{
    if (!gp_sim_at_resync_point(sim)) bail("a dt_max boundary of a block scheme is not a resync point");
    size_t n = gp_sim_count(sim), ncol = gp_sim_state_columns(sim);
    double *rows = malloc(n * ncol * sizeof *rows);
    uint64_t *ids = malloc(n * sizeof *ids), *before = malloc(n * sizeof *before), moved = 0;
    char err[256];
    must(sim, gp_sim_export_state(sim, rows, ids));
    memcpy(before, ids, n * sizeof *ids);
    qsort(before, n, sizeof *before, by_u64);
    size_t n_before = n;
    if (mpi && gp_mpi_decompose(MPI_COMM_WORLD, &n, ncol, &rows, &ids, err, sizeof err)) bail(err);
    for (size_t k = 0; k < n; k++)
        moved += bsearch(&ids[k], before, n_before, sizeof *before, by_u64) == NULL;
    must(sim, gp_sim_import_state(sim, n, rows, ids));
    free(rows); free(ids); free(before);
    if (mpi) MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return moved;
}

/* One process's sim evolved over one dt_max, then its n rows (*ncol
 * columns each) and ids. */
static double *rows_after_one_leg(gp_sim *sim, size_t n, size_t *ncol, uint64_t **ids)
{
    must(sim, gp_sim_evolve(sim, DT_MAX));
    *ncol = gp_sim_state_columns(sim);
    double *rows = malloc(n * *ncol * sizeof *rows);
    *ids = malloc(n * sizeof **ids);
    if (!rows || !*ids) bail("out of memory");
    must(sim, gp_sim_export_state(sim, rows, *ids));
    return rows;
}

typedef struct result {
    double E0, E;
    uint64_t steps, force_calls, moved, idle;   /* idle: steps a rank had no active particle */
    double *pos, *vel;   /* the final state (one process only) */
} result;

/* One run to T_END in legs of dt_max; mig: migrate after every leg. */
static result run(const char *plugin, const char *integ, int mpi, int mig, size_t n, const double *d,
                  const uint64_t *id)
{
    result r = { 0 };
    gp_sim *sim = make_sim(plugin, integ, mpi, n, d, id);
    r.E0 = energy(sim, mpi);
    for (int leg = 1; leg * DT_MAX <= T_END + 1e-12; leg++) {
        while (gp_sim_time(sim) < leg * DT_MAX) {
            must(sim, gp_sim_step(sim, leg * DT_MAX));
            uint64_t na = 0;
            must(sim, gp_sim_counter(sim, "last_active", &na));
            int none = na == 0, any = none;
            if (mpi) MPI_Allreduce(&none, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            r.idle += any;
        }
        if (mig && leg * DT_MAX < T_END) r.moved += migrate(sim, mpi);
    }
    r.E = energy(sim, mpi);
    must(sim, gp_sim_counter(sim, "steps", &r.steps));
    must(sim, gp_sim_counter(sim, "force_calls", &r.force_calls));
    if (!mpi) {
        r.pos = malloc(3 * n * sizeof *r.pos);
        r.vel = malloc(3 * n * sizeof *r.vel);
        must(sim, gp_sim_get_particles(sim, r.pos, r.vel, NULL, NULL));
    }
    gp_sim_free(sim);
    return r;
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &P);
    const size_t N = 1500;
    char err[256];
    double *all = mpi_test_plummer_rows(N, 7);
    uint64_t *all_id = malloc(N * sizeof *all_id);
    for (size_t i = 0; i < N; i++) {
        all_id[i] = i;
        /* two clusters: a compact one (deep levels) on some ranks, a loose
         * one (shallow levels) on others, so that ranks sit idle in the
         * deepest block steps and must still take part in every call */
        int compact = i < N / 2;
        double scale = compact ? 0.25 : 1.0, vscale = compact ? sqrt(2.0) : sqrt(0.5);
        for (int c = 0; c < 3; c++) {
            all[i * MPI_TEST_NCOL + c] = scale * all[i * MPI_TEST_NCOL + c] + (c == 0 ? (compact ? -2.0 : 2.0) : 0.0);
            all[i * MPI_TEST_NCOL + 3 + c] *= vscale;
        }
    }
    /* this rank's piece of the curve, as gravhost-mpi starts */
    double *d;
    uint64_t *id;
    size_t n = mpi_test_deal_rows(rank, P, N, all, &d, &id);
    if (gp_mpi_decompose(MPI_COMM_WORLD, &n, MPI_TEST_NCOL, &d, &id, err, sizeof err)) bail(err);

    static const char *const schemes[] = { "block-kdk", "block-rk2", "hold", "hold-kdk", "hermite" };
    for (int s = 0; s < 5; s++) {
        const char *integ = schemes[s];
        int block = strncmp(integ, "hold", 4) != 0;   /* hold: one gp_sim_step is a whole recursive top step */
        result a = run("mpi-tree", integ, 1, 1, n, d, id);   /* migrating */
        result b = run("mpi-tree", integ, 1, 0, n, d, id);   /* staying */
        if (rank != 0) continue;
        result c = run("cpu-tree", integ, 0, 0, N, all, all_id);
        result e = run("cpu-tree", integ, 0, 1, N, all, all_id);   /* own rows back */
        double dea = fabs((a.E - a.E0) / a.E0), dec = fabs((c.E - c.E0) / c.E0);
        double dab = fabs((a.E - b.E) / a.E0);
        diag("P = %d, %s: %llu steps (%llu with an idle rank), %llu force calls (no migration %llu, cpu-tree "
             "%llu), %llu particle moves; |dE/E| %.3g (no migration %.3g, cpu-tree alone %.3g); E with and "
             "without migration differ by %.3g",
             P, integ, (unsigned long long)a.steps, (unsigned long long)a.idle, (unsigned long long)a.force_calls,
             (unsigned long long)b.force_calls, (unsigned long long)c.force_calls,
             (unsigned long long)a.moved, dea, fabs((b.E - b.E0) / b.E0), dec, dab);
        ok(a.idle > 0, "%s at P = %d: in some steps a rank ends with no active particle (%llu)", integ, P,
           (unsigned long long)a.idle);
        ok(a.moved > 0, "%s at P = %d: migration at dt_max boundaries moves particles between ranks (%llu)",
           integ, P, (unsigned long long)a.moved);
        if (block)
            ok(a.force_calls == a.steps + 1,
               "%s at P = %d: no force call for migrating (%llu force calls = %llu steps + the start)", integ, P,
               (unsigned long long)a.force_calls, (unsigned long long)a.steps);
        else   /* the same steps, the same calls: migration adds none */
            ok(a.force_calls == b.force_calls, "%s at P = %d: migrating changes no force call (%llu, as without)",
               integ, P, (unsigned long long)a.force_calls);
        ok(dab < 1e-4, "%s at P = %d: the energy with migration matches without, within tree error", integ, P);
        ok(dea < 3 * dec + 1e-4, "%s at P = %d: energy error within tree error of cpu-tree alone", integ, P);
        int same = e.force_calls == c.force_calls && e.steps == c.steps &&
                   memcmp(e.pos, c.pos, 3 * N * sizeof *e.pos) == 0 &&
                   memcmp(e.vel, c.vel, 3 * N * sizeof *e.vel) == 0;
        ok(same, "%s, one process: exporting and importing its own state at every dt_max boundary continues "
           "bit for bit", integ);
        free(c.pos); free(c.vel); free(e.pos); free(e.vel);
    }
    {   /* new masses on rank 0 alone, mid-run: every rank still makes the same calls */
        gp_sim *sim = make_sim("mpi-tree", "block-kdk", 1, n, d, id);
        must(sim, gp_sim_evolve(sim, DT_MAX));
        (void)energy(sim, 1);   /* the solver holds the particles now: masses go in place (update_masses) */
        double *m = malloc(n * sizeof *m);
        must(sim, gp_sim_get_particles(sim, NULL, NULL, m, NULL));
        if (rank == 0) m[0] *= 1.5;
        must(sim, gp_sim_set_masses(sim, m));
        must(sim, gp_sim_evolve(sim, 2 * DT_MAX));
        double E = energy(sim, 1);
        if (rank == 0) ok(isfinite(E), "block-kdk at P = %d: a mass changed on rank 0 alone, the run goes on", P);
        free(m);
        gp_sim_free(sim);
    }
    {   /* a stopping condition met on rank 0 alone stops every rank at the same step */
        gp_sim *sim = make_sim("mpi-tree", "block-kdk", 1, n, d, id);
        if (rank == 0) {
            must(sim, gp_sim_stop_enable(sim, GP_STOP_NUMBER_OF_STEPS, 1));
            must(sim, gp_sim_stop_set_param(sim, "number_of_steps", 3));
        }
        must(sim, gp_sim_evolve(sim, T_END));
        double t = gp_sim_time(sim), tmin, tmax;
        MPI_Allreduce(&t, &tmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            ok(tmin == tmax && t < T_END, "a stopping condition on rank 0 alone stops all %d ranks at t = %g", P, t);
        gp_sim_free(sim);
    }
    if (rank == 0) {   /* rows that do not belong to the run: refused with a sentence, sim unchanged */
        gp_sim *sim = make_sim("cpu-tree", "block-kdk", 0, N, all, all_id);
        size_t ncol;
        uint64_t *ids;
        double *rows = rows_after_one_leg(sim, N, &ncol, &ids);
        rows[5 * ncol + 10] = 99;   /* level 99: beyond max_level 6 */
        gp_status st = gp_sim_import_state(sim, N, rows, ids);
        ok(st == GP_ERR_INVALID_ARGUMENT && strstr(gp_sim_last_error(sim), "row 5") &&
           gp_sim_count(sim) == N, "a row off the level grid is refused, naming the row: %s", gp_sim_last_error(sim));
        ok(gp_sim_import_state(sim, 0, rows, ids) == GP_ERR_INVALID_ARGUMENT, "no rows: refused");
        free(rows); free(ids);
        gp_sim_free(sim);
    }
    if (rank == 0) {   /* hermite's rows carry its jerks: a jerk that is not finite is refused */
        gp_sim *sim = make_sim("cpu-tree", "hermite", 0, N, all, all_id);
        size_t ncol;
        uint64_t *ids;
        double *rows = rows_after_one_leg(sim, N, &ncol, &ids);
        ok(ncol == 15, "hermite's rows: the 12 columns and its jerk (%zu)", ncol);
        rows[7 * ncol + 13] = NAN;
        gp_status st = gp_sim_import_state(sim, N, rows, ids);
        ok(st == GP_ERR_INVALID_ARGUMENT && strstr(gp_sim_last_error(sim), "row 7") &&
           gp_sim_count(sim) == N, "a jerk that is not finite is refused, naming the row: %s", gp_sim_last_error(sim));
        free(rows); free(ids);
        gp_sim_free(sim);
    }
    free(all); free(all_id); free(d); free(id);
    return mpi_test_done(rank);
}
