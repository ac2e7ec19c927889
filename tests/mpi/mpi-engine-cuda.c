/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-engine-cuda.c — mpi-tree's engine = cuda-tree under mpirun: each
 * rank's local forces from cuda-tree built on the CPU emulation of CUDA
 * (argv[1]), the received LETs walked on the CPU. Rank 0 prints TAP.
 *
 * Every rank makes the same Plummer set and keeps a slab in x. Checked:
 * forces and potentials against cpu-direct (exact) within cpu-tree's tree
 * error, and close to engine = cpu-tree; repeated calls give the same
 * bits; an active subset (none on the last rank); moved positions (the
 * mirror follows update_positions); a source subset; the field at points
 * given by rank 0 only; mac = acceleration refused. Then the real
 * cuda-tree build without a device (argv[2]) and a missing file: the
 * engine is refused on every rank with a sentence saying what to do, by
 * set_param and by init, and the instance still works as cpu-tree; and
 * drift = on with this engine is said to have no effect.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "tap.h"
#include "testlib.h"
#include "mpi-testlib.h"

#define N 2048

static int rank, size;
static const gp_api *tree_api, *direct_api, *mpi_api;
static const char *emu_path, *real_path;

static void check(int pass, const char *fmt, const char *what)
{
    mpi_test_ok(rank, pass, fmt, what);
}

/* a log callback keeping the last warning */
static void keep_warning(void *user, int level, const char *message)
{
    if (level == GP_LOG_WARNING) snprintf(user, 512, "%s", message);
}

static gp_solver *make(const gp_api *api, const char *engine, const char *plugin)
{
    gp_param kv[] = { { "eps", "0.01" }, { "theta", "0.6" }, { "engine", engine },
                      { "engine_plugin", plugin } };
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .device = -1,
                       .n_params = api == mpi_api ? (plugin ? 4 : 3) : api == tree_api ? 2 : 1 };
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));
    return s;
}

/* Relative errors of the nl local results against the global reference
 * at gidx, as one statistic over all ranks (gathered on every rank). */
static tl_errstat errs_all(size_t nl, const size_t *gidx, const uint32_t *sub, size_t nsub,
                           int dim, const double *v, const double *ref)
{
    size_t m = sub ? nsub : nl;
    double *a = malloc((m ? m : 1) * dim * sizeof *a), *b = malloc((m ? m : 1) * dim * sizeof *b);
    for (size_t k = 0; k < m; k++) {
        size_t i = gidx[sub ? sub[k] : k];
        for (int d = 0; d < dim; d++) {
            a[dim * k + d] = v[dim * k + d];
            b[dim * k + d] = ref[dim * i + d];
        }
    }
    int cnt = (int)(m * dim), *counts = malloc(size * sizeof *counts), *disp = malloc(size * sizeof *disp);
    MPI_Allgather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    int tot = 0;
    for (int r = 0; r < size; r++) { disp[r] = tot; tot += counts[r]; }
    double *A = malloc((tot ? tot : 1) * sizeof *A), *B = malloc((tot ? tot : 1) * sizeof *B);
    MPI_Allgatherv(a, cnt, MPI_DOUBLE, A, counts, disp, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgatherv(b, cnt, MPI_DOUBLE, B, counts, disp, MPI_DOUBLE, MPI_COMM_WORLD);
    tl_errstat e = tl_relerr((size_t)tot / dim, dim, A, B);
    free(a); free(b); free(A); free(B); free(counts); free(disp);
    return e;
}

/* Within cpu-tree's error (both against cpu-direct), with the slack
 * tests/mpi/mpi-accuracy.c allows mpi-tree's split groups. */
static int within(tl_errstat m, tl_errstat c)
{
    return m.median <= 2 * c.median + 1e-7 && m.p99 <= 3 * c.p99 + 1e-6;
}

/* Reference forces of the whole set on every rank: cpu-direct, cpu-tree. */
static void reference(const double *pos, const double *mass, const uint32_t *src, size_t nsrc,
                      double *dacc, double *dpot, double *tacc, double *tpot)
{
    gp_solver *d = make(direct_api, NULL, NULL), *t = make(tree_api, NULL, NULL);
    if (direct_api->set_particles(d, N, pos, mass) || tree_api->set_particles(t, N, pos, mass) ||
        (src && (direct_api->set_source_subset(d, nsrc, src) || tree_api->set_source_subset(t, nsrc, src))) ||
        direct_api->compute_forces(d, dacc, dpot) || tree_api->compute_forces(t, tacc, tpot))
        bail("the reference solvers failed");
    direct_api->finalize(d);
    tree_api->finalize(t);
}

static int same_everywhere(const char *msg)
{
    /* every rank's sentence equals rank 0's */
    char mine[1024] = "", first[1024];
    snprintf(mine, sizeof mine, "%s", msg ? msg : "");
    memcpy(first, mine, sizeof first);
    MPI_Bcast(first, sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    return strcmp(mine, first) == 0;
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &size);
    if (argc < 3) bail("usage: mpi-engine-cuda EMULATED-CUDA-TREE.so REAL-CUDA-TREE.so");
    emu_path = argv[1];
    real_path = argv[2];
    gp_plugin *pt = NULL, *pd = NULL, *pm = NULL;
    mpi_test_open_solvers(&pt, &pd, &pm, &tree_api, &direct_api, &mpi_api);
    if (rank == 0) plan(18);

    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    tl_plummer(N, 14, 1.0, 20.0, pos, mass);
    /* this rank's slab in x: particles with rank * N / P <= (rank of x) < ... */
    size_t *gidx = malloc(N * sizeof *gidx), nl = 0;
    for (size_t i = 0; i < N; i++) {
        size_t below = 0;
        for (size_t j = 0; j < N; j++) below += pos[3 * j] < pos[3 * i] || (pos[3 * j] == pos[3 * i] && j < i);
        if ((int)(below * (size_t)size / N) == rank) gidx[nl++] = i;
    }
    double *lpos = malloc(3 * (nl ? nl : 1) * sizeof *lpos), *lmass = malloc((nl ? nl : 1) * sizeof *lmass);
    for (size_t k = 0; k < nl; k++) {
        memcpy(&lpos[3 * k], &pos[3 * gidx[k]], 3 * sizeof *pos);
        lmass[k] = mass[gidx[k]];
    }
    double *dacc = malloc(3 * N * sizeof *dacc), *dpot = malloc(N * sizeof *dpot);
    double *tacc = malloc(3 * N * sizeof *tacc), *tpot = malloc(N * sizeof *tpot);
    reference(pos, mass, NULL, 0, dacc, dpot, tacc, tpot);
    tl_errstat tree_a = tl_relerr(N, 3, tacc, dacc);
    tl_errstat tree_p = tl_relerr(N, 1, tpot, dpot);

    char what[256];
    double *acc = malloc(3 * (nl ? nl : 1) * sizeof *acc), *pot = malloc((nl ? nl : 1) * sizeof *pot);
    double *acc2 = malloc(3 * (nl ? nl : 1) * sizeof *acc2), *pot2 = malloc((nl ? nl : 1) * sizeof *pot2);

    /* 1-3: engine = cuda-tree (emulated) against cpu-direct and engine = cpu-tree */
    gp_solver *m = make(mpi_api, "cuda-tree", emu_path);
    gp_status st = mpi_api->set_particles(m, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc, pot);
    if (st != GP_OK) diag("%s", mpi_api->last_error(m));
    tl_errstat ea = errs_all(nl, gidx, NULL, 0, 3, acc, dacc), ep = errs_all(nl, gidx, NULL, 0, 1, pot, dpot);
    if (rank == 0)
        diag("P = %d: cuda-tree engine acc median %.2e p99 %.2e, pot median %.2e; cpu-tree acc median "
             "%.2e p99 %.2e", size, ea.median, ea.p99, ep.median, tree_a.median, tree_a.p99);
    /* the local part's interactions are counted too: at P = 1 there are
     * no LETs, so all of them are cuda-tree's */
    gp_stats gs = { .struct_size = sizeof gs };
    int counted = mpi_api->get_stats(m, &gs) == GP_OK && gs.pp_interactions + gs.pc_interactions > 0;
    check(st == GP_OK && within(ea, tree_a) && within(ep, tree_p) && counted,
          "%s", "engine = cuda-tree: forces and potentials within cpu-tree's error of cpu-direct");
    gp_solver *c = make(mpi_api, "cpu-tree", NULL);
    st = mpi_api->set_particles(c, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(c, acc2, pot2);
    tl_errstat ec = errs_all(nl, gidx, NULL, 0, 3, acc2, dacc);
    /* the two engines against each other: apart by about the tree error */
    tl_errstat ee = tl_relerr(nl, 3, acc, acc2);
    snprintf(what, sizeof what, "engine = cuda-tree agrees with engine = cpu-tree within tree "
             "error (cpu-tree engine median %.2e; between them median %.2e max %.2e)", ec.median,
             ee.median, ee.max);
    check(st == GP_OK && within(ec, tree_a) && ea.median <= 3 * ec.median + 1e-7 &&
          ee.median <= 3 * ec.median + 1e-7 && ee.max < 0.05, "%s", what);
    st = mpi_api->compute_forces(m, acc2, pot2);
    check(st == GP_OK && !memcmp(acc, acc2, 3 * nl * sizeof *acc) && !memcmp(pot, pot2, nl * sizeof *pot),
          "%s", "engine = cuda-tree: a second call gives the same bits");

    /* 4: an active subset, none on the last rank when P > 1 */
    uint32_t *act = malloc((nl ? nl : 1) * sizeof *act);
    size_t na = 0;
    if (!(size > 1 && rank == size - 1))
        for (size_t k = 0; k < nl; k += 5) act[na++] = (uint32_t)k;
    st = mpi_api->set_active_subset(m, na, act);
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
    tl_errstat es = errs_all(nl, gidx, act, na, 3, acc2, dacc);
    check(st == GP_OK && within(es, tree_a), "%s",
          "engine = cuda-tree: an active subset (none on the last rank) within tree error");
    mpi_api->set_active_subset(m, 0, NULL);

    /* 5: moved positions (the sub-instance must follow update_positions) */
    double *pos2 = malloc(3 * N * sizeof *pos2), *lpos2 = malloc(3 * (nl ? nl : 1) * sizeof *lpos2);
    for (size_t i = 0; i < 3 * N; i++) pos2[i] = 1.05 * pos[i] + 0.01;
    for (size_t k = 0; k < nl; k++) memcpy(&lpos2[3 * k], &pos2[3 * gidx[k]], 3 * sizeof *pos2);
    double *dacc2 = malloc(3 * N * sizeof *dacc2), *dpot2 = malloc(N * sizeof *dpot2);
    double *tacc2 = malloc(3 * N * sizeof *tacc2), *tpot2 = malloc(N * sizeof *tpot2);
    reference(pos2, mass, NULL, 0, dacc2, dpot2, tacc2, tpot2);
    tl_errstat tree_a2 = tl_relerr(N, 3, tacc2, dacc2);
    st = mpi_api->update_positions(m, lpos2);
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
    es = errs_all(nl, gidx, NULL, 0, 3, acc2, dacc2);
    check(st == GP_OK && within(es, tree_a2), "%s",
          "engine = cuda-tree: after update_positions, forces of the moved set within tree error");

    /* 6: a source subset: the even global indices */
    uint32_t *src = malloc(N * sizeof *src), *lsrc = malloc((nl ? nl : 1) * sizeof *lsrc);
    size_t ns = 0, nls = 0;
    for (size_t i = 0; i < N; i += 2) src[ns++] = (uint32_t)i;
    for (size_t k = 0; k < nl; k++)
        if (gidx[k] % 2 == 0) lsrc[nls++] = (uint32_t)k;
    reference(pos2, mass, src, ns, dacc2, dpot2, tacc2, tpot2);
    tree_a2 = tl_relerr(N, 3, tacc2, dacc2);
    st = mpi_api->set_source_subset(m, nls, lsrc);
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
    es = errs_all(nl, gidx, NULL, 0, 3, acc2, dacc2);
    check(st == GP_OK && within(es, tree_a2), "%s",
          "engine = cuda-tree: a source subset (even indices) within tree error");
    mpi_api->set_source_subset(m, 0, NULL);
    mpi_api->update_positions(m, lpos);

    /* 7: the field at points that rank 0 alone passes */
    enum { M = 64 };
    double pts[3 * M], facc[3 * M], fpot[M], racc[3 * M], rpot[M];
    for (int k = 0; k < M; k++)
        for (int d = 0; d < 3; d++) pts[3 * k + d] = pos[3 * (31 * k) + d] + 0.003 * (d + 1);
    gp_solver *d = make(direct_api, NULL, NULL);
    direct_api->set_particles(d, N, pos, mass);
    st = direct_api->compute_field(d, M, pts, racc, rpot);
    direct_api->finalize(d);
    size_t mine = rank == 0 ? M : 0;
    if (st == GP_OK) st = mpi_api->compute_field(m, mine, pts, facc, fpot);
    int fok = st == GP_OK;
    if (rank == 0 && fok) {
        tl_errstat ef = tl_relerr(M, 3, facc, racc);
        fok = ef.median <= 2 * tree_a.median + 1e-6 && ef.max < 0.05;
        diag("field: acc median %.2e max %.2e", ef.median, ef.max);
    }
    check(fok, "%s", "engine = cuda-tree: compute_field (points on rank 0 only) within tree error");

    /* 8: the 1.1 path: set_state + predict must move the sub-instance too:
     * the same bits as update_positions to the predicted positions */
    {
        double *vel = malloc(3 * (nl ? nl : 1) * sizeof *vel), *a0 = malloc(3 * (nl ? nl : 1) * sizeof *a0);
        double *t0 = calloc(nl ? nl : 1, sizeof *t0), *xp = malloc(3 * (nl ? nl : 1) * sizeof *xp);
        for (size_t k = 0; k < 3 * nl; k++) { vel[k] = 0.3 * sin(1.7 * (double)k); a0[k] = 0.1 * cos((double)k); }
        st = mpi_api->set_state(m, nl, NULL, lpos, vel, a0, t0);
        if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);   /* the sub at x0 */
        if (st == GP_OK) st = mpi_api->predict(m, 0.25);
        if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
        if (st == GP_OK) st = mpi_api->get_positions(m, nl, NULL, xp);
        gp_solver *u = make(mpi_api, "cuda-tree", emu_path);
        double *acc3 = malloc(3 * (nl ? nl : 1) * sizeof *acc3), *pot3 = malloc((nl ? nl : 1) * sizeof *pot3);
        if (st == GP_OK) st = mpi_api->set_particles(u, nl, lpos, lmass);
        if (st == GP_OK) st = mpi_api->compute_forces(u, acc3, pot3);
        if (st == GP_OK) st = mpi_api->update_positions(u, xp);
        if (st == GP_OK) st = mpi_api->compute_forces(u, acc3, pot3);
        check(st == GP_OK && !memcmp(acc2, acc3, 3 * nl * sizeof *acc2) &&
              !memcmp(pot2, pot3, nl * sizeof *pot2), "%s",
              "engine = cuda-tree: set_state + predict gives update_positions' bits");
        mpi_api->finalize(u);
        mpi_api->update_positions(m, lpos);
        free(vel); free(a0); free(t0); free(xp); free(acc3); free(pot3);
    }

    /* 9: mac = acceleration is refused, the same sentence on every rank */
    st = mpi_api->set_param(m, "mac", "acceleration");
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
    const char *msg = mpi_api->last_error(m);
    check(st == GP_ERR_UNSUPPORTED && strstr(msg, "engine = cuda-tree") && same_everywhere(msg), "%s",
          "engine = cuda-tree: mac = acceleration refused with one sentence on every rank");
    mpi_api->set_param(m, "mac", "bmax");
    mpi_api->finalize(m);

    /* 9-12: the real cuda-tree build without a device, and a missing file */
    st = mpi_api->set_param(c, "engine_plugin", real_path);
    if (st == GP_OK) st = mpi_api->set_param(c, "engine", "cuda-tree");
    msg = mpi_api->last_error(c);
    if (rank == 0) diag("set_param refusal: %s", msg);
    check(st != GP_OK && strstr(msg, "engine cuda-tree") && strstr(msg, "use engine = cpu-tree") &&
          same_everywhere(msg), "%s",
          "device-less cuda-tree: set_param(engine, cuda-tree) refused on every rank with the sentence");
    char v[64] = "";
    mpi_api->get_param(c, "engine", v, sizeof v);
    st = mpi_api->compute_forces(c, acc2, pot2);
    check(st == GP_OK && !strcmp(v, "cpu-tree"), "%s",
          "after the refusal the instance still runs as engine = cpu-tree");
    gp_param kv[] = { { "engine_plugin", real_path }, { "engine", "cuda-tree" } };
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = 2, .device = -1 };
    gp_solver *x = NULL;
    st = mpi_api->init(&x, &a);
    msg = mpi_api->last_error(NULL);
    check(st != GP_OK && !x && strstr(msg, "engine cuda-tree") && strstr(msg, "use engine = cpu-tree") &&
          same_everywhere(msg), "%s", "device-less cuda-tree: init with engine = cuda-tree refused on every rank");
    st = mpi_api->set_param(c, "engine_plugin", "/nonexistent/gravplug-cuda-tree.so");
    if (st == GP_OK) st = mpi_api->set_param(c, "engine", "cuda-tree");
    msg = mpi_api->last_error(c);
    check(st != GP_OK && strstr(msg, "cannot load") && same_everywhere(msg), "%s",
          "a missing cuda-tree file: refused on every rank, saying it cannot be loaded");

    /* 13-16: the engine switched on and off on a live instance (set_param) */
    st = mpi_api->set_param(c, "engine_plugin", emu_path);
    if (st == GP_OK) st = mpi_api->set_param(c, "engine", "cuda-tree");
    if (st == GP_OK) st = mpi_api->compute_forces(c, acc2, pot2);
    check(st == GP_OK && !memcmp(acc, acc2, 3 * nl * sizeof *acc), "%s",
          "set_param(engine, cuda-tree) on a live instance: the same bits as an engine set at init");
    st = mpi_api->set_param(c, "engine", "cpu-tree");
    if (st == GP_OK) st = mpi_api->compute_forces(c, acc2, pot2);
    es = errs_all(nl, gidx, NULL, 0, 3, acc2, dacc);
    check(st == GP_OK && !memcmp(&es, &ec, sizeof es), "%s",
          "back to engine = cpu-tree: cpu-tree's forces again");
    char pbuf[4096] = "";
    st = mpi_api->get_param(c, "engine_plugin", pbuf, sizeof pbuf);
    check(st == GP_OK && !strcmp(pbuf, emu_path), "%s", "get_param(engine_plugin) returns the path");
    st = mpi_api->set_param(c, "engine", "gpu");
    check(st == GP_ERR_INVALID_ARGUMENT, "%s", "engine = gpu (not a choice) is rejected");
    mpi_api->finalize(c);

    /* 18: drift = on with engine = cuda-tree is said to have no effect */
    static char said[512];
    gp_param kd[] = { { "engine_plugin", emu_path }, { "engine", "cuda-tree" } };
    gp_init_args ad = { .struct_size = sizeof ad, .params = kd, .n_params = 2, .device = -1,
                        .log = keep_warning, .log_user = said };
    gp_solver *w = NULL;
    st = mpi_api->init(&w, &ad);
    if (st == GP_OK) st = mpi_api->set_param(w, "drift", "on");
    if (rank == 0) diag("%s", said);
    check(st == GP_OK && strstr(said, "no effect with engine = cuda-tree") && strstr(said, "engine = cpu-tree"),
          "%s", "drift = on with engine = cuda-tree: a warning says it has no effect and what to use");
    if (w) mpi_api->finalize(w);

    free(pos); free(mass); free(gidx); free(lpos); free(lmass); free(dacc); free(dpot); free(tacc);
    free(tpot); free(acc); free(pot); free(acc2); free(pot2); free(act); free(pos2);
    free(lpos2); free(dacc2); free(dpot2); free(tacc2); free(tpot2); free(src); free(lsrc);
    gp_plugin_close(pt);
    gp_plugin_close(pd);
    gp_plugin_close(pm);
    return mpi_test_done(rank);
}
