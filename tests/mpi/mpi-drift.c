/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-drift.c — mpi-tree's drifted trees (drift = on) through block steps
 * of the ABI 1.1 path (set_state, predict, get_positions, an active
 * subset on every rank), the particles in slabs along x, one per rank:
 *   - get_positions under the owed predict equals an eager predict's bits;
 *   - the block steps walk the drifted trees (fewer refits and builds,
 *     over all ranks, than drift = off);
 *   - their forces are within the tree's error of exact sums over every
 *     rank's particles: rms relative error at most 2x the refitted trees'
 *     (the anchor's second moments are kept, not drifted; the LETs are cut
 *     from the drifted cells), and below 1e-2; on a last step a long way
 *     on (0.23 time units), below 2e-3;
 *   - the same bits on 1 and 2 threads a rank;
 *   - at P = 1, cpu-tree's drifted tree's bits (wide_split = 0);
 *   - get_velocities and compute_field after a drifted step settle the
 *     owed predict: the same answers as drift = off.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "testlib.h"
#include "mpi-testlib.h"

#define N 8000
#define STEPS 8
#define DT 0.01
#define T_LONG 0.3

static int rank, P;
static uint64_t rs = 424242;
static double urand(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* every rank's init, then kv's set_param calls (collective for mpi-tree) */
static gp_solver *make(const gp_api *api, int mpi, const char *kv)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    gp_init_args a = { .struct_size = sizeof a, .device = -1, .mpi_comm = mpi ? &comm : NULL };
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));
    char buf[256];
    snprintf(buf, sizeof buf, "%s", kv);
    for (char *save = NULL, *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) bail("a parameter is not name=value");
        *eq = 0;
        if (api->set_param(s, tok, eq + 1) != GP_OK) bail(api->last_error(s));
    }
    return s;
}

static double xs[N];
static int by_x(const void *a, const void *b)
{
    double u = xs[*(const uint32_t *)a], v = xs[*(const uint32_t *)b];
    return (u > v) - (u < v);
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &P);
    gp_plugin *pt, *pd, *pm;
    const gp_api *T, *X, *M;
    mpi_test_open_solvers(&pt, &pd, &pm, &T, &X, &M);

    /* the same Plummer sphere on every rank; rank r holds the r-th slab in x */
    static double gpos[3 * N], gvel[3 * N], gmass[N];
    for (size_t i = 0; i < N; i++) {
        double r = 0.59 / sqrt(pow(urand() * 0.999, -2.0 / 3.0) - 1.0);
        double z = 2 * urand() - 1, ph = 6.283185307179586 * urand(), s = sqrt(1 - z * z);
        gpos[3 * i] = r * s * cos(ph); gpos[3 * i + 1] = r * s * sin(ph); gpos[3 * i + 2] = r * z;
        for (int c = 0; c < 3; c++) gvel[3 * i + c] = 0.5 * (urand() - 0.5);
        gmass[i] = 1.0 / N;
        xs[i] = gpos[3 * i];
    }
    static uint32_t order[N], gid[N];
    static int32_t loc[N];
    for (uint32_t i = 0; i < N; i++) order[i] = i;
    qsort(order, N, sizeof *order, by_x);
    const size_t lo = (size_t)rank * N / (size_t)P, hi = (size_t)(rank + 1) * N / (size_t)P;
    const size_t n = hi - lo;
    for (uint32_t i = 0; i < N; i++) loc[i] = -1;
    static double pos[3 * N], vel[3 * N], acc0[3 * N], mass[N], tt[N];
    for (size_t k = 0; k < n; k++) {
        gid[k] = order[lo + k];
        loc[gid[k]] = (int32_t)k;
        memcpy(&pos[3 * k], &gpos[3 * (size_t)gid[k]], 3 * sizeof *pos);
        memcpy(&vel[3 * k], &gvel[3 * (size_t)gid[k]], 3 * sizeof *vel);
        mass[k] = gmass[gid[k]];
        tt[k] = 0;
    }

    const char *common = "eps=0.01 theta=0.5 mac=bmax rebuild=auto";
    char kv[256];
    snprintf(kv, sizeof kv, "%s wide_split=0 drift=on threads=2", common);
    gp_solver *d2 = make(M, 1, kv);
    snprintf(kv, sizeof kv, "%s wide_split=0 drift=on threads=1", common);
    gp_solver *d1 = make(M, 1, kv);
    snprintf(kv, sizeof kv, "%s wide_split=0 drift=off threads=2", common);
    gp_solver *r = make(M, 1, kv);
    gp_solver *solo = NULL;   /* P = 1: cpu-tree's drifted tree beside */
    if (P == 1) {
        snprintf(kv, sizeof kv, "%s drift=on threads=2", common);
        solo = make(T, 0, kv);
    }
    gp_solver *x = make(X, 0, "eps=0.01");
    gp_solver *tree[3] = { d2, d1, r };
    static double a_all[3 * N];
    for (int k = 0; k < 3; k++)
        if (M->set_particles(tree[k], n, pos, mass) != GP_OK ||
            M->set_state(tree[k], n, NULL, pos, vel, acc0, tt) != GP_OK ||
            M->predict(tree[k], 0.0) != GP_OK || M->compute_forces(tree[k], a_all, NULL) != GP_OK)
            bail(M->last_error(tree[k]));
    if (solo && (T->set_particles(solo, n, pos, mass) != GP_OK ||
                 T->set_state(solo, n, NULL, pos, vel, acc0, tt) != GP_OK ||
                 T->predict(solo, 0.0) != GP_OK || T->compute_forces(solo, a_all, NULL) != GP_OK))
        bail(T->last_error(solo));

    static uint32_t idx[N], gidx[N];
    static double p[3][3 * N], a[3][3 * N], as[3 * N], ax[3 * N], mine[3 * N], all[3 * N];
    static double nv[3 * N], na[3 * N], ts[N];
    int pos_same = 1, bits_same = 1, solo_same = 1, calls_ok = 1;
    double worst_ratio = 0, worst_err = 0, long_err[2] = { 0, 0 };
    for (int step = 1; step <= STEPS; step++) {
        /* the last step a long way on: a cell or leaf not made current
         * for it (the LET packer's, say) would be off by far more than
         * the tree's error */
        const double t = step < STEPS ? DT * step : T_LONG;
        size_t m = 0;   /* about 5% active, drawn over all particles alike */
        for (uint32_t i = 0; i < N; i++)
            if (urand() < 0.05 && loc[i] >= 0) { idx[m] = (uint32_t)loc[i]; gidx[m++] = i; }
        for (int k = 0; k < 3; k++) {
            calls_ok &= M->predict(tree[k], t) == GP_OK;
            calls_ok &= M->get_positions(tree[k], m, idx, p[k]) == GP_OK;
            calls_ok &= M->set_active_subset(tree[k], m, m ? idx : gidx) == GP_OK;
            calls_ok &= M->compute_forces(tree[k], m ? a[k] : NULL, NULL) == GP_OK;
        }
        if (solo) {
            calls_ok &= T->predict(solo, t) == GP_OK;
            calls_ok &= T->set_active_subset(solo, m, idx) == GP_OK;
            calls_ok &= T->compute_forces(solo, as, NULL) == GP_OK;
            solo_same &= memcmp(as, a[0], 3 * m * sizeof(double)) == 0;
        }
        pos_same &= memcmp(p[0], p[2], 3 * m * sizeof(double)) == 0 &&
                    memcmp(p[1], p[2], 3 * m * sizeof(double)) == 0;
        bits_same &= memcmp(a[0], a[1], 3 * m * sizeof(double)) == 0;
        /* exact sums at the same positions over every rank's particles */
        calls_ok &= M->get_positions(r, n, NULL, mine) == GP_OK;
        memset(all, 0, sizeof all);
        for (size_t k = 0; k < n; k++) memcpy(&all[3 * (size_t)gid[k]], &mine[3 * k], 3 * sizeof *all);
        MPI_Allreduce(MPI_IN_PLACE, all, 3 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        calls_ok &= X->set_particles(x, N, all, gmass) == GP_OK;
        /* the rms over every rank's active particles */
        double sq[3] = { 0, 0, (double)m };
        if (m) {
            calls_ok &= X->set_active_subset(x, m, gidx) == GP_OK;
            calls_ok &= X->compute_forces(x, ax, NULL) == GP_OK;
            const double ed = tl_rms_rel(m, a[0], ax), er = tl_rms_rel(m, a[2], ax);
            sq[0] = ed * ed * (double)m;
            sq[1] = er * er * (double)m;
        }
        MPI_Allreduce(MPI_IN_PLACE, sq, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        const double ed = sqrt(sq[0] / sq[2]), er = sqrt(sq[1] / sq[2]);
        if (step < STEPS) {
            worst_ratio = fmax(worst_ratio, ed / er);
            worst_err = fmax(worst_err, ed);
        } else {
            long_err[0] = ed;
            long_err[1] = er;
        }
        /* the corrector: a kick with the refitted trees' force, a new state at t */
        for (size_t k = 0; k < m; k++) {
            for (int c = 0; c < 3; c++) {
                nv[3 * k + c] = vel[3 * (size_t)idx[k] + c] + DT * a[2][3 * k + c];
                na[3 * k + c] = a[2][3 * k + c];
            }
            ts[k] = t;
        }
        for (int k = 0; k < 3; k++)
            calls_ok &= M->set_state(tree[k], m, m ? idx : gidx, p[2], nv, na, ts) == GP_OK;
        if (solo) calls_ok &= T->set_state(solo, m, idx, p[2], nv, na, ts) == GP_OK;
    }
    char what[160];
    snprintf(what, sizeof what, "every call of %d block steps succeeds (P = %d)", STEPS, P);
    mpi_test_ok(rank, calls_ok, "%s", what);
    mpi_test_ok(rank, pos_same, "%s", "get_positions under an owed predict: the eager predict's bits");
    mpi_test_ok(rank, bits_same, "%s", "the drifted trees' forces: the same bits on 1 and 2 threads");
    gp_stats sd = { .struct_size = sizeof sd }, sr = { .struct_size = sizeof sr };
    M->get_stats(d2, &sd);
    M->get_stats(r, &sr);
    unsigned long long made[2] = { sd.tree_refits + sd.tree_builds, sr.tree_refits + sr.tree_builds };
    MPI_Allreduce(MPI_IN_PLACE, made, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "block steps walk the drifted trees (%llu refits and builds over the "
             "ranks, %llu with drift = off)", made[0], made[1]);
    mpi_test_ok(rank, made[0] < made[1], "%s", what);
    snprintf(what, sizeof what, "drifted trees' rms force error at most 2x the refitted trees' "
             "(worst %.3f)", worst_ratio);
    mpi_test_ok(rank, worst_ratio <= 2.0, "%s", what);
    snprintf(what, sizeof what, "drifted trees' rms relative force error %.2e < 1e-2", worst_err);
    mpi_test_ok(rank, worst_err < 1e-2, "%s", what);
    /* the second moments are the anchor's a long way off; cells left as
     * they were made for an earlier step give about 2e-2 */
    snprintf(what, sizeof what, "the long step's rms relative force error %.2e < 2e-3 (refitted: %.2e)",
             long_err[0], long_err[1]);
    mpi_test_ok(rank, long_err[0] < 2e-3, "%s", what);
    if (P == 1) mpi_test_ok(rank, solo_same, "%s", "P = 1: cpu-tree's drifted tree's bits");

    /* a drifted step, then each call that reads every position */
    double t = T_LONG + DT;
    static double v0[3 * N], v2[3 * N];
    enum { NPT = 64 };
    static double pts[3 * NPT], f0[3 * NPT], f2[3 * NPT], fx[3 * NPT];
    for (int k = 0; k < 3 * NPT; k++) pts[k] = 1.2 * (urand() - 0.5);
    const size_t few = n < 16 ? n : 16;
    for (size_t k = 0; k < few; k++) idx[k] = (uint32_t)k;
    for (int k = 0; k < 3; k += 2) {
        M->predict(tree[k], t);
        M->set_active_subset(tree[k], few, idx);
        M->compute_forces(tree[k], a[k], NULL);
    }
    mpi_test_ok(rank, M->get_velocities(d2, n, NULL, v0) == GP_OK &&
                          M->get_velocities(r, n, NULL, v2) == GP_OK &&
                          memcmp(v0, v2, 3 * n * sizeof *v0) == 0,
                "%s", "get_velocities after a drifted step: drift = off's bits");
    t += DT;   /* another drifted step: get_velocities paid the last one */
    for (int k = 0; k < 3; k += 2) {
        M->predict(tree[k], t);
        M->set_active_subset(tree[k], few, idx);
        M->compute_forces(tree[k], a[k], NULL);
    }
    /* the trees' shapes differ (drift = off refitted each step, so the
     * rebuild policy chose otherwise), so not the bits: within the tree's
     * error of exact sums at the positions the owed predict gives (the
     * positions before it are off by several percent of the field) */
    const size_t mp = rank == 0 ? NPT : 0;
    int field_ok = M->compute_field(d2, mp, pts, f0, NULL) == GP_OK &&
                   M->compute_field(r, mp, pts, f2, NULL) == GP_OK &&
                   M->get_positions(r, n, NULL, mine) == GP_OK;
    memset(all, 0, sizeof all);
    for (size_t k = 0; k < n; k++) memcpy(&all[3 * (size_t)gid[k]], &mine[3 * k], 3 * sizeof *all);
    MPI_Allreduce(MPI_IN_PLACE, all, 3 * N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    field_ok &= X->set_particles(x, N, all, gmass) == GP_OK &&
                X->compute_field(x, NPT, pts, fx, NULL) == GP_OK;
    const double fd = tl_rms_rel(NPT, f0, fx), fr = tl_rms_rel(NPT, f2, fx);
    snprintf(what, sizeof what, "compute_field after a drifted step: rms error %.2e against "
             "drift = off's %.2e (the owed predict paid)", fd, fr);
    mpi_test_ok(rank, field_ok && (rank != 0 || (fd <= 2 * fr && fd < 1e-2)), "%s", what);
    for (int k = 0; k < 3; k++) M->finalize(tree[k]);
    if (solo) T->finalize(solo);
    X->finalize(x);
    gp_plugin_close(pt);
    gp_plugin_close(pd);
    gp_plugin_close(pm);
    return mpi_test_done(rank);
}
