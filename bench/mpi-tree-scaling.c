/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-tree-scaling.c — one force evaluation of mpi-tree at P ranks:
 * wall time and LET bytes per rank. Run under mpirun:
 *
 *     mpirun -np P build/bench/mpi-tree-scaling MODEL N [REPEATS] [THETA]
 *
 * Every rank makes the same global set (gp_ic_make, seed 1) and keeps a
 * Peano-Hilbert slice of it: keys over the whole set, sorted, cut into P
 * equal runs — the decomposition a host would make (compact domains).
 * Times: set_particles (tree build) and compute_forces (boxes, LETs,
 * exchange, walks), the slowest rank's, median of REPEATS (default 3),
 * each started after a barrier. Bytes: what each rank sends in the force
 * call (max and mean over ranks; received totals are the same overall).
 * Prints one line: model N P build_s force_s let_max_bytes let_mean_bytes
 * box_bytes_sent_per_rank (mean) interactions_per_particle
 * let_cells_sent (mean per rank) let_particles_sent (mean per rank)
 * force_cpu_s (the slowest rank's CPU seconds in compute_forces: less
 * sensitive than wall time to other jobs on a shared machine)
 * box_max_bytes (the domain-box bytes of the rank that sent most)
 * refinement_rounds (of the domain boxes; -1 for a plugin that does not
 * report them).
 *
 * GP_ACTIVE_FRACTION=f (0 < f < 1) times a block step's force call
 * instead: after the first full call, each repeat is update_positions
 * (the same positions: a refit), set_active_subset, compute_forces, with
 * the active particles the central fraction f of the global set by radius
 * (where a galaxy's deepest levels are; GP_ACTIVE_PICK=spread takes every
 * (1/f)-th particle of the global order instead). It prints a second
 * line: "active" model N P f active_max active_mean update_s force_s
 * force_cpu_s (slowest rank, median) let_mean_bytes interactions_per_
 * active — where active_max / active_mean is the load imbalance — and a
 * third: "phases" model N P, then the block step's call in ms (each
 * rank's median, the largest over the ranks): the tree's refit (with the
 * wait for the slowest rank), the active groups, the cells prepared, domain
 * boxes, LET pack, LET exchange (with the wait for the slowest pack),
 * LETs unpacked and prepared, walk (the smallest and the largest rank's),
 * wait for the slowest walk.
 * GP_ACTIVE_BALANCE=1 cuts the curve by weight instead of by count, the
 * active particles weighing 1/f ("(balanced)" in the line).
 * GP_ACTIVE_BALANCE=levels decomposes as gravhost-mpi's migrations do
 * (gp_mpi_decompose_levels, host_stub/mpi/decomp.h): the active particles
 * on level round(log2(1/f)), the rest on level 0, the curve cut into 4
 * pieces a rank and the pieces dealt so that both level sets are shared
 * ("(levels)" in the line). The weight cut leaves a rank inside the
 * centre with twice the mean of active particles; this one does not.
 * GP_DRIFT=tau moves every particle by tau times its velocity after the
 * ranks are cut and before the plugin gets them: the state of a run some
 * time after its last migration, when particles have crossed the cuts.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "octree/host_tree.h"
#include "host_stub/mpi/decomp.h"
#include "gravplug_loader.h"
#include "host_stub/ic/ic.h"

static unsigned long long last_sent, last_box, last_cells, last_parts;
static int last_rounds = -1;   /* -1: a plugin that does not say (before 2026-11-23) */
static double last_ph[9];      /* tree, groups, then the force pass's phases (ms): debug lines */

static void logger(void *user, int level, const char *msg)
{
    unsigned long long s, r, b;
    int nb;
    (void)user;
    if (level == GP_LOG_DEBUG &&
        sscanf(msg, "mpi-tree: compute_forces: LET bytes sent %llu received %llu; domain %d boxes, "
               "%llu bytes; sent %llu cells %llu", &s, &r, &nb, &b, &last_cells, &last_parts) == 6) {
        last_sent = s;
        last_box = b;
        const char *q = strrchr(msg, ';');
        if (!q || sscanf(q, "; %d refinement rounds", &last_rounds) != 1) last_rounds = -1;
    }
    double ph[7];
    if (level == GP_LOG_DEBUG &&
        sscanf(msg, "mpi-tree: compute_forces: tree (build or refit, with the wait for the slowest rank) "
               "%lf ms, active groups %lf ms", &ph[0], &ph[1]) == 2) {
        last_ph[0] = ph[0];
        last_ph[1] = ph[1];
    }
    if (level == GP_LOG_DEBUG &&
        sscanf(msg, "mpi-tree: compute_forces: phases (ms): cells %lf, domain boxes %lf, LET pack %lf, "
               "LET exchange (with the wait for the slowest pack) %lf, LETs unpacked and prepared %lf, "
               "walk %lf, wait for the slowest walk %lf", &ph[0], &ph[1], &ph[2], &ph[3], &ph[4], &ph[5],
               &ph[6]) == 7)
        memcpy(last_ph + 2, ph, sizeof ph);
}

/* This process's CPU seconds (one OpenMP thread per rank: the rank's). */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Stops every rank when a call failed (a benchmark has nothing to save). */
static void must(const gp_api *api, gp_solver *s, gp_status st)
{
    if (st == GP_OK) return;
    fprintf(stderr, "%s\n", api->last_error(s));
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One repeat's times, the slowest rank's: a preparing call's wall time,
 * the force call's wall and CPU seconds, into a[r], b[r], c[r]. */
static void slowest(double prep, double call, double cpu, int r, double *a, double *b, double *c)
{
    double mine[3] = { prep, call, cpu }, worst[3];
    MPI_Allreduce(mine, worst, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    a[r] = worst[0];
    b[r] = worst[1];
    c[r] = worst[2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 3) {
        if (rank == 0) fprintf(stderr, "usage: mpirun -np P %s MODEL N [REPEATS] [THETA]\n", argv[0]);
        MPI_Finalize();
        return 2;
    }
    const char *model = argv[1];
    size_t n = strtoull(argv[2], NULL, 10);
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    const double drift = getenv("GP_DRIFT") ? atof(getenv("GP_DRIFT")) : 0.0;
    const char *theta = argc > 4 ? argv[4] : "0.5";
    gp_ic ic;
    char err[512];
    if (gp_ic_make(model, n, 1, NULL, &ic, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    n = ic.n;
    /* Peano-Hilbert slice of the global set */
    double lo[3], inv;
    uint64_t *keys = malloc(n * sizeof *keys);
    uint32_t *perm = malloc(n * sizeof *perm);
    gp_host_root_cube(n, ic.pos, ic.pos + 1, ic.pos + 2, 3, lo, &inv);
    gp_host_make_keys(n, ic.pos, ic.pos + 1, ic.pos + 2, 3, GP_KEY_PEANO_HILBERT, lo, inv, keys);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    gp_host_sort_keys(n, keys, perm);
    /* GP_ACTIVE_FRACTION: the central fraction (or every k-th) of the global set */
    const char *fenv = getenv("GP_ACTIVE_FRACTION"), *pick = getenv("GP_ACTIVE_PICK");
    double frac = fenv ? atof(fenv) : 0.0, r_cut = 0.0;
    int spread = pick && strcmp(pick, "spread") == 0;
    unsigned char *is_active = NULL;
    if (frac > 0.0 && frac < 1.0) {
        is_active = calloc(n, 1);
        double *r2 = malloc(n * sizeof *r2);
        for (size_t i = 0; i < n; i++) {
            const double *x = &ic.pos[3 * i];
            r2[i] = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
        }
        double *sorted = malloc(n * sizeof *sorted);
        memcpy(sorted, r2, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cmp_d);
        size_t k = (size_t)(frac * (double)n);
        r_cut = sorted[k > 0 ? k - 1 : 0];
        size_t step = (size_t)(1.0 / frac + 0.5);
        for (size_t i = 0; i < n; i++) is_active[i] = spread ? i % step == 0 : r2[i] <= r_cut;
        free(sorted); free(r2);
    }
    size_t b = n * (size_t)rank / (size_t)size, e = n * (size_t)(rank + 1) / (size_t)size, nl = e - b;
    if (is_active && getenv("GP_ACTIVE_BALANCE") && strcmp(getenv("GP_ACTIVE_BALANCE"), "levels") != 0) {
        /* cut the curve by weight, active particles weighing 1/f, the rest
         * 1 (gravhost-mpi weighs by 2^level, the same idea for a block
         * step's mix: decomp.h) */
        double wa = 1.0 / frac, W = 0, acc_w = 0;
        for (size_t i = 0; i < n; i++) W += is_active[perm[i]] ? wa : 1.0;
        b = e = n;
        for (size_t i = 0; i < n; i++) {
            if (b == n && acc_w >= W * rank / size) b = i;
            if (e == n && acc_w >= W * (rank + 1) / size) e = i;
            acc_w += is_active[perm[i]] ? wa : 1.0;
        }
        if (rank == size - 1) e = n;
        if (b > e) b = e;
        nl = e - b;
    }
    const char *bal = getenv("GP_ACTIVE_BALANCE");
    int levels = is_active && bal && strcmp(bal, "levels") == 0;
    /* this rank's particles (global indices) */
    uint32_t *mine = malloc((nl ? nl : 1) * sizeof *mine);
    for (size_t k = 0; k < nl; k++) mine[k] = perm[b + k];
    if (levels) {
        /* rows x y z level, id the global index: gravhost-mpi's cut */
        const int lev = (int)(log2(1.0 / frac) + 0.5);
        double *rows = malloc(4 * (nl ? nl : 1) * sizeof *rows);
        uint64_t *ids = malloc((nl ? nl : 1) * sizeof *ids);
        for (size_t k = 0; k < nl; k++) {
            memcpy(&rows[4 * k], &ic.pos[3 * (size_t)mine[k]], 3 * sizeof *rows);
            rows[4 * k + 3] = is_active[mine[k]] ? lev : 0;
            ids[k] = mine[k];
        }
        if (gp_mpi_decompose_levels(MPI_COMM_WORLD, &nl, 4, 3, &rows, &ids, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        free(mine);
        mine = malloc((nl ? nl : 1) * sizeof *mine);
        for (size_t k = 0; k < nl; k++) mine[k] = (uint32_t)ids[k];
        free(rows); free(ids);
    }
    uint32_t *active = malloc((nl ? nl : 1) * sizeof *active);
    size_t na = 0;
    for (size_t k = 0; k < nl && is_active; k++)
        if (is_active[mine[k]]) active[na++] = (uint32_t)k;
    free(is_active);
    double *pos = malloc(3 * (nl ? nl : 1) * sizeof *pos), *mass = malloc((nl ? nl : 1) * sizeof *mass);
    for (size_t k = 0; k < nl; k++) {
        for (int a = 0; a < 3; a++)
            pos[3 * k + a] = ic.pos[3 * (size_t)mine[k] + a] + drift * ic.vel[3 * (size_t)mine[k] + a];
        mass[k] = ic.mass[mine[k]];
    }
    free(mine);
    free(keys); free(perm);
    gp_ic_free(&ic);

    gp_plugin *pl;
    if (gp_plugin_open("mpi-tree", &pl, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const gp_api *api = gp_plugin_api(pl);
    /* GP_LET_BOXES and GP_WIDE_SPLIT override mpi-tree's let_boxes and
     * wide_split (for the comparisons in
     * bench/results/mpi-tree/raw/mpi-tree.md) */
    const char *boxes = getenv("GP_LET_BOXES"), *wide = getenv("GP_WIDE_SPLIT");
    gp_param kv[3] = { { "theta", theta } };
    size_t nkv = 1;
    if (boxes) kv[nkv++] = (gp_param){ "let_boxes", boxes };
    if (wide) kv[nkv++] = (gp_param){ "wide_split", wide };
    gp_init_args ia = { .struct_size = sizeof ia, .params = kv, .n_params = nkv, .device = -1,
                        .log = logger };
    gp_solver *s;
    if (api->init(&s, &ia)) {
        fprintf(stderr, "%s\n", api->last_error(NULL));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double *acc = malloc(3 * (nl ? nl : 1) * sizeof *acc);
    double *tb = malloc((size_t)reps * sizeof *tb), *tf = malloc((size_t)reps * sizeof *tf);
    double *tc = malloc((size_t)reps * sizeof *tc);
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        must(api, s, api->set_particles(s, nl, pos, mass));
        double t1 = MPI_Wtime(), c1 = cpu_now();
        must(api, s, api->compute_forces(s, acc, NULL));
        double t2 = MPI_Wtime(), c2 = cpu_now();
        slowest(t1 - t0, t2 - t1, c2 - c1, r, tb, tf, tc);
    }
    /* the full call's exchange figures, for the first line */
    unsigned long long full[4] = { last_sent, last_box, last_cells, last_parts };
    int full_rounds = last_rounds;
    gp_stats stt = { .struct_size = sizeof stt };   /* the full calls' */
    api->get_stats(s, &stt);
    if (frac > 0.0 && frac < 1.0) {   /* block-step calls: refit, active subset, forces */
        gp_stats before = stt;
        double *tu = malloc((size_t)reps * sizeof *tu), *ta = malloc((size_t)reps * sizeof *ta);
        double *tac = malloc((size_t)reps * sizeof *tac), *tph = malloc(9 * (size_t)reps * sizeof *tph);
        for (int r = 0; r < reps; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            must(api, s, api->update_positions(s, pos));
            double t1 = MPI_Wtime(), c1 = cpu_now();
            /* (0, non-NULL): none on this rank (mpi-tree's extension) */
            must(api, s, api->set_active_subset(s, na, active));
            must(api, s, api->compute_forces(s, acc, NULL));
            double t2 = MPI_Wtime(), c2 = cpu_now();
            slowest(t1 - t0, t2 - t1, c2 - c1, r, tu, ta, tac);
            for (int k = 0; k < 9; k++) tph[(size_t)k * reps + r] = last_ph[k];
        }
        /* each phase's median on this rank, then the largest over the ranks
         * (and the walk's smallest: the spread is the imbalance) */
        double med[9], mx[9], mn = 0;
        for (int k = 0; k < 9; k++) {
            qsort(tph + (size_t)k * reps, (size_t)reps, sizeof *tph, cmp_d);
            med[k] = tph[(size_t)k * reps + reps / 2];
        }
        MPI_Reduce(med, mx, 9, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&med[7], &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        free(tph);
        qsort(tu, (size_t)reps, sizeof *tu, cmp_d);
        qsort(ta, (size_t)reps, sizeof *ta, cmp_d);
        qsort(tac, (size_t)reps, sizeof *tac, cmp_d);
        gp_stats after = { .struct_size = sizeof after };
        api->get_stats(s, &after);
        unsigned long long nmax = 0, nsum = 0, nn = na, asent = last_sent, asum = 0;
        double inter_act = (double)(after.pp_interactions + after.pc_interactions - before.pp_interactions
                             - before.pc_interactions) / (double)reps, iasum = 0;
        MPI_Reduce(&nn, &nmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&nn, &nsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&asent, &asum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Reduce(&inter_act, &iasum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("active\t%s\t%zu\t%d\t%g%s%s\t%llu\t%.0f\t%.4f\t%.4f\t%.4f\t%.0f\t%.0f\n", model, n, size, frac,
                   spread ? "(spread)" : "", !bal ? "" : strcmp(bal, "levels") == 0 ? "(levels)" : "(balanced)", nmax, (double)nsum / size, tu[reps / 2], ta[reps / 2], tac[reps / 2],
                   (double)asum / size, nsum ? iasum / (double)nsum : 0.0);
        if (rank == 0)
            printf("phases\t%s\t%zu\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", model, n,
                   size, mx[0], mx[1], mx[2], mx[3], mx[4], mx[5], mx[6], mn, mx[7], mx[8]);
        free(tu); free(ta); free(tac);
    }
    last_sent = full[0]; last_box = full[1]; last_cells = full[2]; last_parts = full[3];
    last_rounds = full_rounds;
    qsort(tb, (size_t)reps, sizeof *tb, cmp_d);
    qsort(tf, (size_t)reps, sizeof *tf, cmp_d);
    qsort(tc, (size_t)reps, sizeof *tc, cmp_d);
    unsigned long long sent = last_sent, smax = 0, ssum = 0, bsum = 0, cp[2] = { last_cells, last_parts }, cps[2];
    MPI_Reduce(cp, cps, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sent, &smax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sent, &ssum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&last_box, &bsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long bmax = 0;
    MPI_Reduce(&last_box, &bmax, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (getenv("GP_BENCH_STATS"))
        fprintf(stderr, "rank %d: build %.3f s, moments %.3f s, LET (pack, exchange, unpack) %.3f s, "
                "force calls %.3f s in total over %d repeats\n", rank, stt.seconds_build,
                stt.seconds_moments, stt.seconds_transfer, stt.seconds_walk, reps);
    double inter = (double)(stt.pp_interactions + stt.pc_interactions) / (double)reps, itot = 0;
    MPI_Reduce(&inter, &itot, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s\t%zu\t%d\t%.4f\t%.4f\t%llu\t%.0f\t%.0f\t%.1f\t%.0f\t%.0f\t%.4f\t%llu\t%d\n", model, n,
               size, tb[reps / 2], tf[reps / 2], smax, (double)ssum / size,
               (double)bsum / size, itot / (double)n,
               (double)cps[0] / size, (double)cps[1] / size, tc[reps / 2], bmax, last_rounds);
    api->finalize(s);
    gp_plugin_close(pl);
    free(pos); free(mass); free(acc); free(tb); free(tf); free(tc); free(active);
    MPI_Finalize();
    return 0;
}
