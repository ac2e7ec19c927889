/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-accuracy.c — mpi-tree at P ranks against single-process cpu-tree and
 * cpu-direct on the same particles. Run under mpirun (tests/mpi/mpi-run.sh);
 * rank 0 prints TAP.
 *
 * Every rank makes the same global set (Plummer and the galaxy model from
 * the host library's generators, and a deliberately scattered set: far
 * clumps, a thin filament and outliers), keeps its share (compact: slabs
 * in x; scattered: round-robin, i.e. no spatial locality at all), and
 * calls mpi-tree with it. Rank 0 gathers the forces in global order and
 * compares them with cpu-direct (exact) and with cpu-tree run on all
 * particles in one process: mpi-tree's error must be within cpu-tree's
 * (at P = 1 the two are the same code on the same tree: bit-identical).
 * Also: active subsets, field points, the ABI 1.1 path (set_state +
 * predict equals update_positions bit for bit), source subsets and mass
 * updates, determinism, and a failure on one rank becoming the same
 * sentence on every rank. ABI 1.2: nearest neighbours, pair_step and the
 * neighbour lists over every rank's sources, named by global index
 * (rank order), equal to cpu-tree's on the whole set once mapped back.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug_loader.h"
#include "host_stub/ic/ic.h"
#include "plugin/octree/host_tree.h"
#include "tap.h"
#include "testlib.h"
#include "mpi-testlib.h"

static int rank, size;
static const gp_api *tree_api, *direct_api, *mpi_api;

/* TAP from rank 0 only; every rank computes the verdict collectively. */
static void check(int pass, const char *fmt, const char *what)
{
    mpi_test_ok(rank, pass, fmt, what);
}

typedef struct set {
    const char *name;
    size_t n;
    double *pos, *mass;
    int roundrobin;          /* 1: owner = i % P; 0: slabs in x */
    int curve;               /* 1: P runs of the Peano-Hilbert curve (gravhost-mpi's cut) */
} set;

/* ---- the particle sets -------------------------------------------------- */

static void from_ic(set *s, const char *model, size_t n, uint64_t seed)
{
    gp_ic ic;
    char err[256];
    if (gp_ic_make(model, n, seed, NULL, &ic, err, sizeof err) != 0) bail(err);
    s->n = ic.n;
    s->pos = malloc(3 * ic.n * sizeof *s->pos);
    s->mass = malloc(ic.n * sizeof *s->mass);
    memcpy(s->pos, ic.pos, 3 * ic.n * sizeof *s->pos);
    memcpy(s->mass, ic.mass, ic.n * sizeof *s->mass);
    gp_ic_free(&ic);
}

/* Clumps 1000 apart, a filament, a few outliers at 1e5, some massless. */
static void scattered(set *s, size_t n, uint64_t seed)
{
    tl_rng r = { seed };
    s->n = n;
    s->pos = malloc(3 * n * sizeof *s->pos);
    s->mass = malloc(n * sizeof *s->mass);
    const double centres[4][3] = { { 0, 0, 0 }, { 1000, 0, 0 }, { 0, -700, 300 }, { 5, 5, 5 } };
    for (size_t i = 0; i < n; i++) {
        double *p = &s->pos[3 * i];
        size_t kind = i % 10;
        if (kind < 7) {
            const double *c = centres[i % 4];
            double rr = 0.05 + tl_uniform(&r);
            tl_on_sphere(&r, rr * rr, p);
            for (int a = 0; a < 3; a++) p[a] += c[a];
        } else if (kind < 9) {
            double u = tl_uniform(&r);
            p[0] = -300 + 600 * u; p[1] = 20 + 0.01 * tl_uniform(&r); p[2] = -20;
        } else {
            tl_on_sphere(&r, (i % 20 == 9) ? 1e5 : 50 + 100 * tl_uniform(&r), p);
        }
        s->mass[i] = (i % 13 == 0) ? 0.0 : (0.5 + tl_uniform(&r)) / (double)n;
    }
}

typedef struct xi { double x; size_t i; } xi;

static int by_x(const void *a, const void *b)
{
    const xi *p = a, *q = b;
    if (p->x != q->x) return (p->x > q->x) - (p->x < q->x);
    return (p->i > q->i) - (p->i < q->i);
}

typedef struct ki { uint64_t key; size_t i; } ki;

static int by_key(const void *a, const void *b)
{
    const ki *p = a, *q = b;
    if (p->key != q->key) return (p->key > q->key) - (p->key < q->key);
    return (p->i > q->i) - (p->i < q->i);
}

/* owner[i] of every particle and this rank's global indices. */
static size_t *local_indices(const set *s, size_t *nl)
{
    int *owner = malloc(s->n * sizeof *owner);
    if (s->curve) {
        /* keys in the cube around all particles, cut into P equal runs */
        double lo[3], inv;
        gp_host_root_cube(s->n, s->pos, s->pos + 1, s->pos + 2, 3, lo, &inv);
        ki *v = malloc(s->n * sizeof *v);
        for (size_t i = 0; i < s->n; i++)
            v[i] = (ki){ gp_key_of_position(GP_KEY_PEANO_HILBERT, s->pos[3 * i], s->pos[3 * i + 1],
                                            s->pos[3 * i + 2], lo, inv), i };
        qsort(v, s->n, sizeof *v, by_key);
        for (size_t k = 0; k < s->n; k++) owner[v[k].i] = (int)(k * (size_t)size / s->n);
        free(v);
    } else if (s->roundrobin) {
        for (size_t i = 0; i < s->n; i++) owner[i] = (int)(i % (size_t)size);
    } else {
        /* slabs: the k-th smallest x goes to rank k * P / n */
        xi *v = malloc(s->n * sizeof *v);
        for (size_t i = 0; i < s->n; i++) v[i] = (xi){ s->pos[3 * i], i };
        qsort(v, s->n, sizeof *v, by_x);
        for (size_t k = 0; k < s->n; k++) owner[v[k].i] = (int)(k * (size_t)size / s->n);
        free(v);
    }
    size_t *idx = malloc(s->n * sizeof *idx), k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (owner[i] == rank) idx[k++] = i;
    free(owner);
    *nl = k;
    return idx;
}

/* ---- helpers -------------------------------------------------------------- */

/* The MAC of the tree solvers in the current set (NULL: their default). */
static const char *cur_mac;
static const char *cur_delta, *cur_tmax;   /* delta_acc, theta_max (NULL: defaults) */

/* The jerk of mpi-tree against cpu-tree's at theta 0.25, relative,
 * worst rank: measured median 1.5e-4 to 1.7e-4, 99% 1.7e-3 to 2.2e-3 at
 * P = 2..4 (0 and 1.9e-4 at P = 1); with the LET cells' dS/dt dropped the
 * median was 7e-4, with their velocities dropped 4.9e-3 */
#define JERK_MEDIAN 3.5e-4
#define JERK_P99 1e-2

static gp_solver *make(const gp_api *api, const char *theta)
{
    gp_param kv[5] = { { "theta", theta }, { "eps", "0.001" } };
    size_t nkv = 2;
    if (cur_mac) kv[nkv++] = (gp_param){ "mac", cur_mac };
    if (cur_delta) kv[nkv++] = (gp_param){ "delta_acc", cur_delta };
    if (cur_tmax) kv[nkv++] = (gp_param){ "theta_max", cur_tmax };
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = nkv, .device = -1 };
    if (api == direct_api) a.params = kv + 1, a.n_params = 1;   /* eps only */
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));
    return s;
}

/* Gathers nl local results (acc 3, pot 1 per entry, global index gidx) into
 * g_acc/g_pot on rank 0 (n entries). */
static void gather(size_t nl, const size_t *gidx, const double *acc, const double *pot, size_t n,
                   double *g_acc, double *g_pot)
{
    int cnt = (int)nl, *counts = malloc((size_t)size * sizeof *counts);
    int *displs = malloc((size_t)size * sizeof *displs);
    MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int tot = 0;
    for (int r = 0; r < size && rank == 0; r++) { displs[r] = tot; tot += counts[r]; }
    double *mine = malloc((nl ? nl : 1) * 5 * sizeof *mine);
    for (size_t k = 0; k < nl; k++) {
        mine[5 * k] = (double)gidx[k];
        for (int d = 0; d < 3; d++) mine[5 * k + 1 + d] = acc[3 * k + d];
        mine[5 * k + 4] = pot ? pot[k] : 0;
    }
    int *c5 = malloc((size_t)size * sizeof *c5), *d5 = malloc((size_t)size * sizeof *d5);
    for (int r = 0; r < size && rank == 0; r++) { c5[r] = 5 * counts[r]; d5[r] = 5 * displs[r]; }
    double *all = rank == 0 ? malloc((size_t)(tot ? tot : 1) * 5 * sizeof *all) : NULL;
    MPI_Gatherv(mine, 5 * cnt, MPI_DOUBLE, all, c5, d5, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int k = 0; k < tot; k++) {
            size_t i = (size_t)all[5 * k];
            if (i >= n) continue;
            for (int d = 0; d < 3; d++) g_acc[3 * i + d] = all[5 * k + 1 + d];
            if (g_pot) g_pot[i] = all[5 * k + 4];
        }
    }
    free(all); free(mine); free(counts); free(displs); free(c5); free(d5);
}

typedef struct errs { tl_errstat a, p; } errs;

static errs compare(size_t n, const double *acc, const double *pot, const double *racc,
                    const double *rpot)
{
    errs e = { tl_relerr(n, 3, acc, racc), tl_relerr(n, 1, pot, rpot) };
    return e;
}

/* mpi-tree within cpu-tree's error (both against cpu-direct). mpi-tree
 * halves cpu-tree's wide groups (wide_split), whose spheres made cpu-tree
 * needlessly exact there, so its errors come closer to the MAC's nominal
 * ones: the bound is 2x (median) and 3x (99th percentile) cpu-tree's. */
static int within(errs m, errs c)
{
    return m.a.median <= 2 * c.a.median + 1e-7 && m.a.p99 <= 3 * c.a.p99 + 1e-6 &&
           m.p.median <= 2 * c.p.median + 1e-7 && m.p.p99 <= 3 * c.p.p99 + 1e-6;
}

/* let_boxes of mpi-tree in the current set (NULL: its default) */
static const char *cur_boxes;

static unsigned long long let_sent;
static int let_rounds;     /* refinement rounds of the domain boxes, last call */
static void logger(void *user, int level, const char *msg)
{
    (void)user;
    unsigned long long s, r;
    if (level == GP_LOG_DEBUG && sscanf(msg, "mpi-tree: compute_forces: LET bytes sent %llu received %llu", &s, &r) == 2) {
        let_sent = s;
        const char *q = strrchr(msg, ';');
        if (!q || sscanf(q, "; %d refinement rounds", &let_rounds) != 1) let_rounds = -1;
    }
}

/* ---- one particle set ----------------------------------------------------- */

static void run_set(set *S, const char *theta)
{
    size_t n = S->n, nl;
    size_t *gidx = local_indices(S, &nl);
    double *lpos = malloc(3 * (nl ? nl : 1) * sizeof *lpos), *lmass = malloc((nl ? nl : 1) * sizeof *lmass);
    for (size_t k = 0; k < nl; k++) {
        memcpy(&lpos[3 * k], &S->pos[3 * gidx[k]], 3 * sizeof *lpos);
        lmass[k] = S->mass[gidx[k]];
    }
    double *acc = malloc(3 * (nl ? nl : 1) * sizeof *acc), *pot = malloc((nl ? nl : 1) * sizeof *pot);
    double *acc2 = malloc(3 * (nl ? nl : 1) * sizeof *acc2), *pot2 = malloc((nl ? nl : 1) * sizeof *pot2);
    double *g_acc = calloc(3 * n, sizeof *g_acc), *g_pot = calloc(n, sizeof *g_pot);
    double *r_acc = calloc(3 * n, sizeof *r_acc), *r_pot = calloc(n, sizeof *r_pot);
    double *t_acc = calloc(3 * n, sizeof *t_acc), *t_pot = calloc(n, sizeof *t_pot);
    char what[200];

    /* references on rank 0: cpu-direct and cpu-tree over everything */
    unsigned long long t_inter = 0;
    if (rank == 0) {
        gp_solver *d = make(direct_api, "0"), *t = make(tree_api, theta);
        gp_stats ts = { .struct_size = sizeof ts };
        if (direct_api->set_particles(d, n, S->pos, S->mass) || direct_api->compute_forces(d, r_acc, r_pot) ||
            tree_api->set_particles(t, n, S->pos, S->mass) || tree_api->compute_forces(t, t_acc, t_pot) ||
            tree_api->get_stats(t, &ts))
            bail("reference forces failed");
        t_inter = ts.pp_interactions + ts.pc_interactions;
        direct_api->finalize(d);
        tree_api->finalize(t);
    }

    /* mpi-tree, all active */
    gp_param kv[6] = { { "theta", theta }, { "eps", "0.001" } };
    size_t nkv = 2;
    if (cur_mac) kv[nkv++] = (gp_param){ "mac", cur_mac };
    if (cur_delta) kv[nkv++] = (gp_param){ "delta_acc", cur_delta };
    if (cur_tmax) kv[nkv++] = (gp_param){ "theta_max", cur_tmax };
    if (cur_boxes) kv[nkv++] = (gp_param){ "let_boxes", cur_boxes };
    gp_init_args ia = { .struct_size = sizeof ia, .params = kv, .n_params = nkv,
                        .device = -1, .log = logger };
    gp_solver *m = NULL;
    gp_status st = mpi_api->init(&m, &ia);
    check(st == GP_OK, "%s: init", S->name);
    if (st != GP_OK) bail(mpi_api->last_error(NULL));
    st = mpi_api->set_particles(m, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc, pot);
    snprintf(what, sizeof what, "%s (P = %d, %s): set_particles and compute_forces succeed", S->name,
             size, S->roundrobin ? "round-robin" : S->curve ? "runs of the curve" : "slabs");
    check(st == GP_OK, "%s", what);
    if (st != GP_OK && rank == 0) diag("%s", mpi_api->last_error(m));
    unsigned long long sent = let_sent, maxsent = 0;
    MPI_Reduce(&sent, &maxsent, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (cur_boxes && size > 1) {
        /* a coarse tree of let_boxes leaves: the rest of each domain's
         * description comes from the refinement rounds, which this set
         * must therefore have gone through */
        snprintf(what, sizeof what, "%s: the domain boxes were refined (%d rounds)", S->name,
                 let_rounds);
        check(st == GP_OK && let_rounds >= 1, "%s", what);
    }
    gather(nl, gidx, acc, pot, n, g_acc, g_pot);
    int pass = 1;
    if (rank == 0) {
        errs em = compare(n, g_acc, g_pot, r_acc, r_pot), ec = compare(n, t_acc, t_pot, r_acc, r_pot);
        pass = within(em, ec);
        diag("  %s: mpi-tree vs direct: acc median %.3g 99%% %.3g max %.3g; cpu-tree: %.3g %.3g %.3g",
             S->name, em.a.median, em.a.p99, em.a.max, ec.a.median, ec.a.p99, ec.a.max);
        diag("  %s: LET bytes sent, largest rank: %llu (n = %zu)", S->name, maxsent, n);
    }
    snprintf(what, sizeof what, "%s: forces within cpu-tree's error", S->name);
    check(pass, "%s", what);

    /* runs of the curve: the ranks' trees share one root cube, so their
     * cells are parts of the cells of one tree over all particles, and the
     * interactions are about cpu-tree's (trees in cubes of their own cut
     * the shared regions along unrelated planes: 11% more here at P = 2,
     * 13% at P = 4) */
    if (S->curve && size > 1) {
        gp_stats ms = { .struct_size = sizeof ms };
        unsigned long long mine = 0, all = 0;
        if (st == GP_OK && mpi_api->get_stats(m, &ms) == GP_OK)
            mine = ms.pp_interactions + ms.pc_interactions;
        MPI_Reduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        double ratio = rank == 0 && t_inter ? (double)all / (double)t_inter : 0;
        if (rank == 0) diag("  %s: interactions at P = %d over cpu-tree's: %.4f", S->name, size, ratio);
        snprintf(what, sizeof what, "%s: interactions within 3%% of cpu-tree's on all particles",
                 S->name);
        check(rank != 0 || (ratio > 0.9 && ratio < 1.03), "%s", what);
    }

    /* with cpu-tree's own groups (wide_split = 0) and P = 1, the same code
     * on the same tree: the same bits */
    if (size == 1) {
        gp_solver *m0 = NULL;
        mpi_api->init(&m0, &ia);
        st = mpi_api->set_param(m0, "wide_split", "0");
        if (st == GP_OK) st = mpi_api->set_particles(m0, nl, lpos, lmass);
        if (st == GP_OK) st = mpi_api->compute_forces(m0, acc2, pot2);
        snprintf(what, sizeof what, "%s: P = 1 with wide_split = 0 is bit-identical to cpu-tree", S->name);
        check(st == GP_OK && memcmp(acc2, t_acc, 3 * n * sizeof *acc2) == 0 &&
              memcmp(pot2, t_pot, n * sizeof *pot2) == 0, "%s", what);
        mpi_api->finalize(m0);
    }

    /* determinism: a second instance, same call, same bits */
    gp_solver *m2 = NULL;
    mpi_api->init(&m2, &ia);
    st = mpi_api->set_particles(m2, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(m2, acc2, pot2);
    snprintf(what, sizeof what, "%s: a second run gives the same bits", S->name);
    check(st == GP_OK && memcmp(acc, acc2, 3 * nl * sizeof *acc) == 0 &&
          memcmp(pot, pot2, nl * sizeof *pot) == 0, "%s", what);

    /* the LET cut reads the cells' geometry from the layout the walk
     * prepared (records in double, the AVX-512 walk's columns in the float
     * modes where the CPU has it): the same cells either way, so the same
     * bytes to every rank */
    gp_solver *m3 = NULL;
    mpi_api->init(&m3, &ia);
    st = mpi_api->set_param(m3, "precision", "double");
    let_sent = 0;
    if (st == GP_OK) st = mpi_api->set_particles(m3, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(m3, acc2, pot2);
    int differ = st != GP_OK || let_sent != sent, any_differ = 0;
    MPI_Allreduce(&differ, &any_differ, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    snprintf(what, sizeof what, "%s: precision = double sends the same LET bytes as the default "
             "(the cut does not depend on the cell layout)", S->name);
    check(!any_differ, "%s", what);
    mpi_api->finalize(m3);

    /* active subset: every 7th local particle (none on the last rank when P > 1) */
    uint32_t *act = malloc((nl ? nl : 1) * sizeof *act);
    size_t na = 0;
    if (!(size > 1 && rank == size - 1))
        for (size_t k = 0; k < nl; k += 7) act[na++] = (uint32_t)k;
    st = mpi_api->set_active_subset(m, na, act);   /* (0, non-NULL): none here */
    if (st == GP_OK) st = mpi_api->compute_forces(m, acc2, pot2);
    /* other groups than with all active (spheres around the active ones
     * only, as cpu-tree makes them): the same forces within tree error */
    double *sub_ref = calloc(3 * (na ? na : 1), sizeof *sub_ref);
    for (size_t k = 0; k < na; k++) memcpy(&sub_ref[3 * k], &acc[3 * act[k]], 3 * sizeof *acc);
    tl_errstat es = tl_relerr(na, 3, acc2, sub_ref);
    int same = na == 0 || (es.median < 1e-3 && es.max < 2e-2);
    free(sub_ref);
    snprintf(what, sizeof what, "%s: an active subset (none on the last rank) matches the all-active "
             "forces within tree error", S->name);
    check(st == GP_OK && same, "%s", what);
    mpi_api->set_active_subset(m, 0, NULL);

    /* field points: 200 per rank, none on rank 0 when P > 1; each rank
     * checks its own against cpu-direct and cpu-tree over all particles */
    size_t mp = (size > 1 && rank == 0) ? 0 : 200;
    double pts[600], fa[600], fp[200];
    tl_rng rr = { 77 + (uint64_t)rank };
    for (size_t k = 0; k < mp; k++) {
        size_t i = (size_t)(tl_uniform(&rr) * (double)n) % n;
        for (int a = 0; a < 3; a++) pts[3 * k + a] = S->pos[3 * i + a] + 0.01 * (tl_uniform(&rr) - 0.5);
    }
    /* in double: sparse points make wide groups, whose float-relative
     * coordinates (mixed mode) would blur the comparison of tree errors */
    st = mpi_api->set_param(m, "precision", "double");
    if (st == GP_OK) st = mpi_api->compute_field(m, mp, mp ? pts : NULL, mp ? fa : NULL, mp ? fp : NULL);
    int fpass = st == GP_OK;
    if (fpass && mp) {
        gp_solver *d = make(direct_api, "0"), *t = make(tree_api, theta);
        double ra[600], rp[200], ta[600], tp[200];
        direct_api->set_particles(d, n, S->pos, S->mass);
        direct_api->compute_field(d, mp, pts, ra, rp);
        tree_api->set_param(t, "precision", "double");
        tree_api->set_particles(t, n, S->pos, S->mass);
        tree_api->compute_field(t, mp, pts, ta, tp);
        direct_api->finalize(d);
        tree_api->finalize(t);
        errs em = compare(mp, fa, fp, ra, rp), et = compare(mp, ta, tp, ra, rp);
        /* other groups and trees than cpu-tree's; sparse points make wide
         * groups that open nearly everything (errors far below the tree's
         * usual 1e-4), so the slack is the force error scale of theta 0.5
         * (cpu-tree's own 99th percentile for forces here: ~6e-4) */
        fpass = em.a.median <= 3 * et.a.median + 1e-5 && em.a.p99 <= 4 * et.a.p99 + 3e-4;
        if (!fpass)
            fprintf(stderr, "# rank %d field: median %.3g 99%% %.3g; cpu-tree %.3g %.3g\n", rank,
                    em.a.median, em.a.p99, et.a.median, et.a.p99);
    }
    snprintf(what, sizeof what, "%s: compute_field (no points on rank 0 when P > 1) within "
             "cpu-tree's error", S->name);
    check(fpass, "%s", what);

    free(act);
    mpi_api->finalize(m);
    mpi_api->finalize(m2);
    free(gidx); free(lpos); free(lmass); free(acc); free(pot); free(acc2); free(pot2);
    free(g_acc); free(g_pot); free(r_acc); free(r_pot); free(t_acc); free(t_pot);
}

/* ---- ABI 1.1 across ranks, and failures ------------------------------------ */

static void run_abi11(set *S)
{
    size_t n = S->n, nl;
    size_t *gidx = local_indices(S, &nl);
    size_t nn = nl ? nl : 1;
    double *lpos = malloc(3 * nn * sizeof *lpos), *lmass = malloc(nn * sizeof *lmass);
    double *vel = malloc(3 * nn * sizeof *vel), *ac = malloc(3 * nn * sizeof *ac), *t = malloc(nn * sizeof *t);
    double *xp = malloc(3 * nn * sizeof *xp);
    double *a1 = malloc(3 * nn * sizeof *a1), *a2 = malloc(3 * nn * sizeof *a2);
    tl_rng r = { 5 };
    for (size_t k = 0; k < nl; k++) {
        memcpy(&lpos[3 * k], &S->pos[3 * gidx[k]], 3 * sizeof *lpos);
        lmass[k] = S->mass[gidx[k]];
        t[k] = 0.001 * (double)(gidx[k] % 4);
        for (int d = 0; d < 3; d++) {
            vel[3 * k + d] = tl_uniform(&r) - 0.5;
            ac[3 * k + d] = tl_uniform(&r) - 0.5;
            double dt = 0.01 - t[k];
            double h = 0.5 * dt * dt;
            double xv = lpos[3 * k + d] + dt * vel[3 * k + d];
            xp[3 * k + d] = xv + h * ac[3 * k + d];
        }
    }
    gp_solver *m1 = make(mpi_api, "0.5"), *m2 = make(mpi_api, "0.5");
    gp_status st = mpi_api->set_particles(m1, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->set_state(m1, nl, NULL, lpos, vel, ac, t);
    if (st == GP_OK) st = mpi_api->predict(m1, 0.01);
    if (st == GP_OK) st = mpi_api->compute_forces(m1, a1, NULL);
    if (st == GP_OK) st = mpi_api->set_particles(m2, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->update_positions(m2, xp);
    if (st == GP_OK) st = mpi_api->compute_forces(m2, a2, NULL);
    double *gp = malloc(3 * nn * sizeof *gp);
    if (st == GP_OK) st = mpi_api->get_positions(m1, nl, NULL, gp);
    check(st == GP_OK && memcmp(a1, a2, 3 * nl * sizeof *a1) == 0 &&
          memcmp(gp, xp, 3 * nl * sizeof *gp) == 0,
          "%s", "1.1: set_state + predict on every rank gives update_positions' forces bit for bit");

    /* source subset (every other local particle) and mass updates vs direct */
    uint32_t *src = malloc(nn * sizeof *src);
    size_t ns = 0;
    for (size_t k = 0; k < nl; k += 2) src[ns++] = (uint32_t)k;
    double *newm = malloc(nn * sizeof *newm);
    for (size_t k = 0; k < nl; k++) newm[k] = lmass[k] * (1.0 + (double)(gidx[k] % 3));
    st = mpi_api->set_particles(m1, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->update_masses(m1, nl, NULL, newm);
    if (st == GP_OK) st = mpi_api->set_source_subset(m1, ns, src);
    if (st == GP_OK) st = mpi_api->compute_forces(m1, a1, NULL);
    double *g_acc = calloc(3 * n, sizeof *g_acc), *r_acc = calloc(3 * n, sizeof *r_acc);
    gather(nl, gidx, a1, NULL, n, g_acc, NULL);
    int pass = st == GP_OK;
    if (rank == 0 && pass) {
        double *em = calloc(n, sizeof *em);
        /* global masses: new ones on the sources, 0 elsewhere */
        set tmp = *S;
        for (int rr = 0; rr < size; rr++) {
            int keep = rank;
            rank = rr;
            size_t nr;
            size_t *gi = local_indices(&tmp, &nr);
            rank = keep;
            for (size_t k = 0; k < nr; k += 2) em[gi[k]] = S->mass[gi[k]] * (1.0 + (double)(gi[k] % 3));
            free(gi);
        }
        gp_solver *d = make(direct_api, "0");
        direct_api->set_particles(d, n, S->pos, em);
        direct_api->compute_forces(d, r_acc, NULL);
        direct_api->finalize(d);
        tl_errstat e = tl_relerr(n, 3, g_acc, r_acc);
        diag("  source subset + update_masses: acc median %.3g 99%% %.3g", e.median, e.p99);
        pass = e.median < 2e-3 && e.p99 < 2e-2;
        free(em);
    }
    check(pass, "%s", "1.1: source subsets and update_masses (local indices) match direct");

    /* a failure on the last rank only: every rank fails with one sentence */
    gp_solver *m3 = make(mpi_api, "0.5");
    double keep0 = lpos[0];
    if (rank == size - 1 && nl) lpos[0] = NAN;
    st = mpi_api->set_particles(m3, nl, lpos, lmass);
    lpos[0] = keep0;
    char msg[1024] = { 0 }, msg0[1024] = { 0 };
    snprintf(msg, sizeof msg, "%s", mpi_api->last_error(m3));
    if (rank == 0) memcpy(msg0, msg, sizeof msg);
    MPI_Bcast(msg0, (int)sizeof msg0, MPI_CHAR, 0, MPI_COMM_WORLD);
    check(st == GP_ERR_INVALID_ARGUMENT && strcmp(msg, msg0) == 0 && strstr(msg, "NaN") != NULL,
          "%s", "NaN on the last rank: every rank fails with the same sentence");
    if (rank == 0) diag("  \"%s\"", msg0);
    st = mpi_api->set_particles(m3, nl, lpos, lmass);
    gp_status st2 = st == GP_OK ? mpi_api->compute_forces(m3, rank == size - 1 ? NULL : a1, NULL) : st;
    check(st == GP_OK && st2 == GP_ERR_INVALID_ARGUMENT, "%s",
          "acc = NULL on the last rank: compute_forces fails on every rank, no hang");
    st = mpi_api->compute_forces(m3, a1, NULL);
    check(st == GP_OK, "%s", "and the next call works again");
    mpi_api->finalize(m1); mpi_api->finalize(m2); mpi_api->finalize(m3);
    free(gidx); free(lpos); free(lmass); free(vel); free(ac); free(t); free(xp); free(a1); free(a2);
    free(gp); free(src); free(newm); free(g_acc); free(r_acc);
}

/* ABI 1.2's neighbour outputs: each rank compares its own active
 * particles' answers with cpu-tree's on the whole set, in this process. */
static void run_abi12(set *S)
{
    size_t n = S->n, nl;
    size_t *gidx = local_indices(S, &nl);
    size_t nn = nl ? nl : 1;
    /* mpi-tree's global index (rank order) -> the set's index */
    size_t *g2s = malloc(n * sizeof *g2s), off = 0;
    for (int rr = 0; rr < size; rr++) {
        int keep = rank;
        rank = rr;
        size_t nr;
        size_t *gi = local_indices(S, &nr);
        rank = keep;
        for (size_t k = 0; k < nr; k++) g2s[off + k] = gi[k];
        off += nr;
        free(gi);
    }
    /* velocities of every particle, the same on every rank */
    double *vel = malloc(3 * n * sizeof *vel), *zero = calloc(3 * n, sizeof *zero), *t0 = calloc(n, sizeof *t0);
    tl_rng r = { 23 };
    for (size_t i = 0; i < 3 * n; i++) vel[i] = tl_uniform(&r) - 0.5;
    double *lpos = malloc(3 * nn * sizeof *lpos), *lmass = malloc(nn * sizeof *lmass);
    double *lvel = malloc(3 * nn * sizeof *lvel);
    uint32_t *lact = malloc(nn * sizeof *lact), *ract = malloc(nn * sizeof *ract);
    size_t na = 0;
    for (size_t k = 0; k < nl; k++) {
        memcpy(&lpos[3 * k], &S->pos[3 * gidx[k]], 3 * sizeof *lpos);
        memcpy(&lvel[3 * k], &vel[3 * gidx[k]], 3 * sizeof *lvel);
        lmass[k] = S->mass[gidx[k]];
        if (gidx[k] % 3 == 0) { lact[na] = (uint32_t)k; ract[na++] = (uint32_t)gidx[k]; }
    }
    size_t nA = na ? na : 1;
    double *acc = malloc(3 * nA * sizeof *acc), *d2 = malloc(nA * sizeof *d2), *ps = malloc(nA * sizeof *ps);
    double *rd2 = malloc(nA * sizeof *rd2), *rps = malloc(nA * sizeof *rps), *rad = malloc(nA * sizeof *rad);
    uint32_t *nni = malloc(nA * sizeof *nni), *rnn = malloc(nA * sizeof *rnn);
    for (size_t k = 0; k < na; k++) rad[k] = 0.02 + 0.01 * (double)(k % 3);
    gp_outputs o = { .struct_size = sizeof o, .acc = acc, .nn_index = nni, .nn_dist2 = d2,
                     .pair_step = ps, .nb_radius = rad, .nb_step = 0.05 };
    gp_solver *m = make(mpi_api, "0.5");
    gp_status st = mpi_api->set_particles(m, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->set_state(m, nl, NULL, lpos, lvel, zero, t0);
    if (st == GP_OK) st = mpi_api->predict(m, 0.0);
    if (st == GP_OK) st = mpi_api->set_active_subset(m, na, lact);   /* (0, non-NULL): none here */
    if (st == GP_OK) st = mpi_api->compute_forces_ex(m, &o);
    size_t need = 0;
    uint64_t *offs = malloc((na + 1) * sizeof *offs);
    if (st == GP_OK) mpi_api->get_neighbours(m, 0, offs, NULL, &need);
    uint32_t *lst = malloc((need ? need : 1) * sizeof *lst);
    if (st == GP_OK) st = mpi_api->get_neighbours(m, need, offs, lst, &need);
    int pass = st == GP_OK;
    if (!pass) diag("  rank %d: %s", rank, mpi_api->last_error(m));
    /* the reference: cpu-tree on the whole set, this rank's active only */
    gp_solver *c = make(tree_api, "0.5");
    gp_outputs ro = o;
    ro.nn_index = rnn; ro.nn_dist2 = rd2; ro.pair_step = rps;
    gp_status rs = tree_api->set_particles(c, n, S->pos, S->mass);
    if (rs == GP_OK) rs = tree_api->set_state(c, n, NULL, S->pos, vel, zero, t0);
    if (rs == GP_OK) rs = tree_api->predict(c, 0.0);
    if (rs == GP_OK && na) rs = tree_api->set_active_subset(c, na, ract);
    size_t rneed = 0;
    uint64_t *roffs = malloc((na + 1) * sizeof *roffs);
    uint32_t *rlst = NULL;
    if (rs == GP_OK && na) {
        rs = tree_api->compute_forces_ex(c, &ro);
        if (rs == GP_OK) tree_api->get_neighbours(c, 0, roffs, NULL, &rneed);
        rlst = malloc((rneed ? rneed : 1) * sizeof *rlst);
        if (rs == GP_OK) rs = tree_api->get_neighbours(c, rneed, roffs, rlst, &rneed);
    }
    pass = pass && rs == GP_OK;
    size_t bad_nn = 0, bad_ps = 0, bad_list = 0;
    for (size_t k = 0; pass && k < na; k++) {
        if (nni[k] >= n || g2s[nni[k]] != rnn[k] || memcmp(&d2[k], &rd2[k], sizeof *d2)) bad_nn++;
        if (memcmp(&ps[k], &rps[k], sizeof *ps)) bad_ps++;
        size_t len = (size_t)(offs[k + 1] - offs[k]);
        if (len != (size_t)(roffs[k + 1] - roffs[k])) { bad_list++; continue; }
        /* mapped back and sorted, the set's indices ascending as cpu-tree's */
        uint32_t *v = malloc((len ? len : 1) * sizeof *v);
        for (size_t q = 0; q < len; q++) v[q] = (uint32_t)g2s[lst[offs[k] + q]];
        for (size_t a = 1; a < len; a++)
            for (size_t b = a; b > 0 && v[b - 1] > v[b]; b--) { uint32_t x = v[b]; v[b] = v[b - 1]; v[b - 1] = x; }
        if (len && memcmp(v, rlst + roffs[k], len * sizeof *v)) bad_list++;
        free(v);
    }
    unsigned long long tot[5] = { na, bad_nn, bad_ps, bad_list, need }, sum[5];
    MPI_Reduce(tot, sum, 5, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        diag("  1.2 on %s: %llu active over %d ranks, %llu neighbours listed; mismatches: nn %llu, "
             "pair_step %llu, lists %llu", S->name, sum[0], size, sum[4], sum[1], sum[2], sum[3]);
    unsigned long long na_all = 0, na_mine = na;
    MPI_Allreduce(&na_mine, &na_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    check(pass && !bad_nn && !bad_ps && !bad_list && na_all > 0, "%s",
          "1.2: nn, pair_step and lists over every rank's sources (global indices) equal cpu-tree's");
    /* the jerk (the LETs carry their cells' velocities and dS/dt): within a
     * tree's error of cpu-tree's on the whole set; and a rank that does
     * not ask for it still takes part in the pass */
    double *jk = malloc(3 * nA * sizeof *jk), *jk2 = malloc(3 * nA * sizeof *jk2);
    double *rjk = malloc(3 * nA * sizeof *rjk), *acc2 = malloc(3 * nA * sizeof *acc2);
    /* at theta 0.25 both trees are close to exact, so a term missing from
     * the LETs' cells (their velocity, their dS/dt) stands out */
    gp_solver *mj = make(mpi_api, "0.25"), *cj = make(tree_api, "0.25");
    st = mpi_api->set_particles(mj, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->set_state(mj, nl, NULL, lpos, lvel, zero, t0);
    if (st == GP_OK) st = mpi_api->predict(mj, 0.0);
    if (st == GP_OK) st = mpi_api->set_active_subset(mj, na, lact);
    rs = tree_api->set_particles(cj, n, S->pos, S->mass);
    if (rs == GP_OK) rs = tree_api->set_state(cj, n, NULL, S->pos, vel, zero, t0);
    if (rs == GP_OK) rs = tree_api->predict(cj, 0.0);
    if (rs == GP_OK && na) rs = tree_api->set_active_subset(cj, na, ract);
    gp_outputs oj = { .struct_size = sizeof oj, .acc = acc, .jerk = jk };
    if (st == GP_OK) st = mpi_api->compute_forces_ex(mj, &oj);
    gp_outputs roj = { .struct_size = sizeof roj, .acc = acc2, .jerk = rjk };
    if (rs == GP_OK && na) rs = tree_api->compute_forces_ex(cj, &roj);
    if (st != GP_OK) diag("  rank %d: %s", rank, mpi_api->last_error(m));
    tl_errstat ej = tl_relerr(na, 3, jk, rjk);
    double worst[2] = { na ? ej.median : 0, na ? ej.p99 : 0 }, wmax[2];
    MPI_Allreduce(worst, wmax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        diag("  jerk against cpu-tree's on the whole set: median %.2e, 99%% %.2e (worst rank)",
             wmax[0], wmax[1]);
    check(st == GP_OK && rs == GP_OK && wmax[0] < JERK_MEDIAN && wmax[1] < JERK_P99, "%s",
          "1.2: the jerk over every rank's sources is cpu-tree's to the tree's error (theta 0.25)");
    gp_outputs oj0 = { .struct_size = sizeof oj0, .acc = acc2, .jerk = rank == 0 ? jk2 : NULL };
    st = mpi_api->compute_forces_ex(mj, &oj0);
    check(st == GP_OK && (rank != 0 || memcmp(jk, jk2, 3 * na * sizeof *jk) == 0), "%s",
          "1.2: the jerk asked on rank 0 alone: the same bits there");
    mpi_api->finalize(m); mpi_api->finalize(mj);
    tree_api->finalize(c); tree_api->finalize(cj);
    free(jk); free(jk2); free(rjk); free(acc2); free(gidx); free(g2s); free(vel); free(zero); free(t0); free(lpos); free(lmass); free(lvel);
    free(lact); free(ract); free(acc); free(d2); free(ps); free(rd2); free(rps); free(rad); free(nni);
    free(rnn); free(offs); free(lst); free(roffs); free(rlst);
}

/* subset_spheres = whole: on every rank an active subset's forces are the
 * bits of the full call's, whoever else is active (the groups keep their
 * tree groups' spheres; the LETs may differ, the accepted cells do not). */
static void run_whole(set *S)
{
    size_t nl;
    size_t *gidx = local_indices(S, &nl);
    size_t nn = nl ? nl : 1, na = 0;
    double *lpos = malloc(3 * nn * sizeof *lpos), *lmass = malloc(nn * sizeof *lmass);
    double *full = malloc(3 * nn * sizeof *full), *part = malloc(3 * nn * sizeof *part);
    uint32_t *act = malloc(nn * sizeof *act);
    for (size_t k = 0; k < nl; k++) {
        memcpy(&lpos[3 * k], &S->pos[3 * gidx[k]], 3 * sizeof *lpos);
        lmass[k] = S->mass[gidx[k]];
        if (gidx[k] % 7 == 2) act[na++] = (uint32_t)k;
    }
    gp_solver *m = make(mpi_api, "0.5");
    gp_status st = mpi_api->set_param(m, "subset_spheres", "whole");
    if (st == GP_OK) st = mpi_api->set_particles(m, nl, lpos, lmass);
    if (st == GP_OK) st = mpi_api->compute_forces(m, full, NULL);
    if (st == GP_OK) st = mpi_api->set_active_subset(m, na, act);
    if (st == GP_OK) st = mpi_api->compute_forces(m, part, NULL);
    unsigned long long bad = st != GP_OK, all = 0;
    for (size_t k = 0; k < na && st == GP_OK; k++)
        bad += memcmp(&part[3 * k], &full[3 * act[k]], 3 * sizeof *part) != 0;
    MPI_Allreduce(&bad, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all) diag("  %llu active particles differ from the full call", all);
    check(all == 0, "%s", "subset_spheres = whole: a 1-in-7 subset gets the full call's bits on every rank");
    mpi_api->finalize(m);
    free(gidx); free(lpos); free(lmass); free(full); free(part); free(act);
}

int main(int argc, char **argv)
{
    mpi_test_start(&argc, &argv, &rank, &size);
    gp_plugin *pt = NULL, *pd = NULL, *pm = NULL;
    mpi_test_open_solvers(&pt, &pd, &pm, &tree_api, &direct_api, &mpi_api);
    if (rank == 0) diag("mpi-tree at P = %d", size);

    set sets[5] = { { .name = "plummer" }, { .name = "galaxy" }, { .name = "scattered" },
                    { .name = "plummer" }, { .name = "galaxy, runs of the curve" } };
    from_ic(&sets[0], "plummer", 6000, 11);
    from_ic(&sets[1], "galaxy", 6000, 12);
    scattered(&sets[2], 5000, 13);
    sets[2].roundrobin = 1;
    sets[3] = sets[0];
    sets[3].roundrobin = 1;
    sets[3].name = "plummer round-robin";
    run_set(&sets[0], "0.5");
    run_set(&sets[1], "0.5");
    run_set(&sets[2], "0.5");
    run_set(&sets[3], "0.7");
    from_ic(&sets[4], "galaxy", 20000, 14);
    sets[4].curve = 1;
    run_set(&sets[4], "0.5");
    /* the acceleration MAC: its r_crit travels in the domain (gfac), and
     * its first call's bh pre-pass is collective */
    set acc_set = sets[1];
    acc_set.name = "galaxy, mac = acceleration";
    cur_mac = "acceleration";
    run_set(&acc_set, "0.5");
    /* a loose delta_acc bounded by theta_max: the LET must be cut with the
     * bound too, or the remote cells come at the unbounded criterion's error */
    acc_set.name = "galaxy, mac = acceleration, delta_acc 0.05, theta_max 0.5";
    cur_delta = "0.05";
    cur_tmax = "0.5";
    run_set(&acc_set, "0.5");
    cur_delta = cur_tmax = NULL;
    cur_mac = NULL;
    /* domain boxes refined in rounds: with let_boxes = 2 the coarse tree
     * is 3 boxes, so forces within tree error here need every refined box
     * to hold its groups (compact slabs, and round-robin: every rank's
     * boxes overlap every other's) */
    cur_boxes = "2";
    set refine[3] = { sets[0], sets[1], sets[2] };
    refine[0].name = "plummer, let_boxes = 2";
    refine[1].name = "galaxy, let_boxes = 2";
    refine[2].name = "scattered, let_boxes = 2";
    for (int k = 0; k < 3; k++) run_set(&refine[k], "0.5");
    cur_boxes = NULL;
    run_abi11(&sets[0]);
    run_abi12(&sets[0]);
    run_abi12(&sets[2]);
    run_whole(&sets[1]);
    run_whole(&sets[3]);
    for (int k = 0; k < 5; k++) {
        if (k == 3) continue;   /* sets[0]'s arrays */
        free(sets[k].pos); free(sets[k].mass);
    }
    gp_plugin_close(pm);
    gp_plugin_close(pd);
    gp_plugin_close(pt);
    return mpi_test_done(rank);
}
