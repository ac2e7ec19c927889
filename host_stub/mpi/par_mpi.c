/* SPDX-License-Identifier: Apache-2.0 */
/*
 * par_mpi.c — par.h over MPI_COMM_WORLD (gravhost-mpi): one run of gravhost
 * spread over the ranks, each holding and integrating its own particles.
 *
 * Rank 0 reads the config file and sends its text (gh_par_share_text);
 * every rank parses that text, deterministically, so every rank gets the
 * same settings or the same error (and the file need only be readable on
 * rank 0's node). Each rank makes only its contiguous
 * slice of the initial conditions (gp_ic_make_range: the seeded stream
 * comes in blocks with their own generators, and the frame shift's block
 * sums travel by MPI_Allgatherv; models read from files are read whole
 * by every rank), then gp_mpi_decompose (host_stub/mpi/decomp.c) hands
 * each rank its piece of the Peano-Hilbert curve: the particles do not
 * depend on P, only their distribution does.
 *
 * Migration re-runs the decomposition at solver resync points (after a
 * shared step, at a dt_max boundary of a block scheme; run.c says which),
 * moving each particle's whole integrator state (position, velocity as
 * stored, mass, acceleration, level, t_last: gp_sim_export_state and
 * gp_sim_import_state, integrators/sim/migrate.c) as rows of
 * gp_sim_state_columns doubles: the integrator goes on without a restart
 * or an extra force call. The block schemes (block-rk2, block-kdk) agree
 * on the next block time and on every solver call through the collective
 * hook gh_par_attach sets (gp_sim_set_collective: MPI_Allreduce), and so
 * does hold's recursive split (the fast set's size summed over the ranks).
 * rk8pd is refused: its adaptive step follows a local error norm.
 */
#include "par.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt_path.h"
#include "decomp.h"
#include "ic.h"
#include "memory.h"
#include "gravplug_loader.h"

enum { NCOL = 7 };   /* x y z vx vy vz m */
static int rank_, size_ = 1;

/* gh_par_agree's own communicator. A rank that failed alone (out of
 * memory, say) may reach the agreement while the others wait in another
 * collective call: the plugin's, or the run's next sum. On a communicator
 * of its own its call cannot be matched with theirs; it waits for them
 * ALONE_WAIT_S seconds, and then, since they will not come, ends the job
 * with its sentence rather than leave it hanging until the batch system's
 * limit. A failure all ranks share meets at once. */
static MPI_Comm agree_comm = MPI_COMM_NULL;
enum { ALONE_WAIT_S = 60 };

int gh_par_init(int *argc, char ***argv)
{
    int up = 0, provided = 0;
    MPI_Initialized(&up);
    /* MULTIPLE, as mpi-tree asks for when it initialises MPI itself */
    if (!up && MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "gravhost-mpi: MPI_Init_thread failed: run under mpirun, or use gravhost\n");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &agree_comm) != MPI_SUCCESS) {
        fprintf(stderr, "gravhost-mpi: rank %d: MPI_Comm_dup failed\n", rank_);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return 0;
}

void gh_par_finalize(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (done) return;
    if (agree_comm != MPI_COMM_NULL) MPI_Comm_free(&agree_comm);
    MPI_Finalize();
}

int gh_par_rank(void) { return rank_; }
int gh_par_size(void) { return size_; }

void gh_par_sum(double *x, size_t n)
{
    MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

uint64_t gh_par_sum_u64(uint64_t x)
{
    uint64_t s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

void gh_par_allgather_u64(uint64_t x, uint64_t *all)
{
    MPI_Allgather(&x, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
}

int gh_par_max_int(int x)
{
    int m = 0;
    MPI_Allreduce(&x, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* A failed rank's wait for the others (see agree_comm). */
static void wait_or_end_job(MPI_Request *req, const char *err)
{
    double t0 = MPI_Wtime();
    for (;;) {
        int done = 0;
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done) return;
        if (MPI_Wtime() - t0 > ALONE_WAIT_S) break;
        usleep(2000);
    }
    fprintf(stderr, "gravhost: rank %d: %s\n"
            "gravhost: rank %d stopped on that error and the other ranks did not within %d s (they wait for it "
            "in a call of their own): ending the job\n", rank_, err, rank_, (int)ALONE_WAIT_S);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int gh_par_agree(int rc, char *err, size_t errlen)
{
    /* the sentence chosen: the lowest rank that failed for a reason of its
     * own, else the lowest that failed because another did */
    int mine = rc == 0 ? 2 * size_ : rc == GH_PAR_ELSEWHERE ? size_ + rank_ : rank_, first = 2 * size_;
    MPI_Request req;
    MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, agree_comm, &req);
    if (rc == 0 || size_ == 1) MPI_Wait(&req, MPI_STATUS_IGNORE);
    else wait_or_end_job(&req, err);
    if (first == 2 * size_) return 0;
    err[errlen - 1] = '\0';
    MPI_Bcast(err, (int)errlen, MPI_CHAR, first % size_, agree_comm);
    return -1;
}

int gh_par_share_text(char **text, int rc, char *err, size_t errlen)
{
    /* rank 0's status first, so a read error is its sentence everywhere */
    int fail = rank_ == 0 ? rc != 0 : 0;
    MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (fail) {
        err[errlen - 1] = '\0';
        MPI_Bcast(err, (int)errlen, MPI_CHAR, 0, MPI_COMM_WORLD);
        return -1;
    }
    unsigned long long len = rank_ == 0 ? strlen(*text) : 0;
    MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int mine = 0;
    if (rank_ != 0) {
        *text = len < 0x7fffffffULL ? malloc((size_t)len + 1) : NULL;
        if (!*text) {
            snprintf(err, errlen, "no memory for the config text (%llu bytes) on rank %d", len, rank_);
            mine = -1;
        }
    }
    if (gh_par_agree(mine, err, errlen) != 0) {
        if (rank_ != 0) { free(*text); *text = NULL; }
        return -1;
    }
    MPI_Bcast(*text, (int)len + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    return 0;
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The arguments, then the sorted GRAVPLUG_* and OMP_* variables, one per
 * line (malloc'd; NULL when out of memory). */
static char *start_text(int argc, char **argv)
{
    extern char **environ;
    size_t ne = 0, len = 1;
    for (char **e = environ; e && *e; ++e) ne++;
    char **keep = malloc((ne ? ne : 1) * sizeof *keep);
    if (!keep) return NULL;
    size_t nk = 0;
    for (char **e = environ; e && *e; ++e)
        if (strncmp(*e, "GRAVPLUG", 8) == 0 || strncmp(*e, "OMP_", 4) == 0) keep[nk++] = *e;
    qsort(keep, nk, sizeof *keep, by_string);
    for (int i = 0; i < argc; ++i) len += strlen(argv[i]) + 1;
    for (size_t i = 0; i < nk; ++i) len += strlen(keep[i]) + 1;
    char *text = malloc(len), *p = text;
    for (int i = 0; text && i < argc; ++i) p += sprintf(p, "%s\n", argv[i]);
    for (size_t i = 0; text && i < nk; ++i) p += sprintf(p, "%s\n", keep[i]);
    if (text) *p = '\0';
    free(keep);
    return text;
}

/* The first line where a and b differ, quoted into out. */
static void first_difference(const char *a, const char *b, char *out, size_t len)
{
    while (*a && *a == *b) {
        const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');
        if (!na || !nb || na - a != nb - b || strncmp(a, b, (size_t)(na - a)) != 0) break;
        a = na + 1;
        b = nb + 1;
    }
    int la = (int)strcspn(a, "\n"), lb = (int)strcspn(b, "\n");
    snprintf(out, len, "\"%.*s\" where rank 0 has \"%.*s\"", la > 120 ? 120 : la, a, lb > 120 ? 120 : lb, b);
}

int gh_par_same_start(int argc, char **argv, char *err, size_t errlen)
{
    char *mine = start_text(argc, argv);
    char *rank0 = rank_ == 0 ? mine : NULL;
    int rc = mine ? 0 : -1;
    if (!mine) snprintf(err, errlen, "out of memory comparing the command lines of the ranks");
    if (gh_par_share_text(&rank0, rc, err, errlen) != 0) {
        free(mine);
        return -1;
    }
    int differ = rank_ != 0 && (!mine || strcmp(mine, rank0) != 0);
    if (differ) {
        char where[400];
        if (mine) first_difference(mine, rank0, where, sizeof where);
        else snprintf(where, sizeof where, "(out of memory)");
        snprintf(err, errlen, "rank %d was started unlike rank 0: %s (arguments, then the GRAVPLUG_* and OMP_* "
                 "environment); start every rank with the same command line and environment", rank_, where);
    }
    if (rank_ != 0) free(rank0);
    free(mine);
    return gh_par_agree(differ ? -1 : 0, err, errlen);
}

/* The particles of sim as rows (NCOL doubles) and ids. */
static int to_rows(gp_sim *sim, size_t n, double **rows, uint64_t **ids, char *err, size_t errlen)
{
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel), *m = malloc(n * sizeof *m);
    *rows = malloc(n * NCOL * sizeof **rows);
    *ids = malloc(n * sizeof **ids);
    int rc = -1;
    if (!pos || !vel || !m || !*rows || !*ids) snprintf(err, errlen, "out of memory holding %zu particles", n);
    else if (gp_sim_get_particles(sim, pos, vel, m, *ids) != GP_OK) snprintf(err, errlen, "%s", gp_sim_last_error(sim));
    else {
        for (size_t k = 0; k < n; ++k) {
            memcpy(&(*rows)[k * NCOL], &pos[3 * k], 3 * sizeof *pos);
            memcpy(&(*rows)[k * NCOL + 3], &vel[3 * k], 3 * sizeof *vel);
            (*rows)[k * NCOL + 6] = m[k];
        }
        rc = 0;
    }
    free(pos); free(vel); free(m);
    if (rc) { free(*rows); free(*ids); *rows = NULL; *ids = NULL; }
    return rc;
}

/* Decomposes the rows and gives this rank's to sim. Frees rows and ids. */
static int decompose_into(gp_sim *sim, size_t n, double *rows, uint64_t *ids, char *err, size_t errlen)
{
    if (gp_mpi_decompose(MPI_COMM_WORLD, &n, NCOL, &rows, &ids, err, errlen) != 0) {
        free(rows); free(ids);
        return -1;   /* the same sentence on every rank already */
    }
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel), *m = malloc(n * sizeof *m);
    int rc = -1;
    if (!pos || !vel || !m) snprintf(err, errlen, "out of memory holding %zu particles", n);
    else {
        for (size_t k = 0; k < n; ++k) {
            memcpy(&pos[3 * k], &rows[k * NCOL], 3 * sizeof *pos);
            memcpy(&vel[3 * k], &rows[k * NCOL + 3], 3 * sizeof *vel);
            m[k] = rows[k * NCOL + 6];
        }
        if (gp_sim_set_particles(sim, n, pos, vel, m, ids) == GP_OK) rc = 0;
        else snprintf(err, errlen, "%s", gp_sim_last_error(sim));
    }
    free(pos); free(vel); free(m); free(rows); free(ids);
    return gh_par_agree(rc, err, errlen);
}

int gh_par_set_particles(gp_sim *sim, size_t n, const double *pos, const double *vel,
                         const double *mass, const uint64_t *ids, char *err, size_t errlen)
{
    if (n < (size_t)size_) {
        snprintf(err, errlen, "%zu particles on %d ranks: every rank needs at least one; run on at most %zu ranks",
                 n, size_, n);
        return -1;   /* n is the same on every rank */
    }
    size_t lo = n * (size_t)rank_ / (size_t)size_, hi = n * (size_t)(rank_ + 1) / (size_t)size_, k = hi - lo;
    double *rows = malloc(k * NCOL * sizeof *rows);
    uint64_t *id = malloc(k * sizeof *id);
    int rc = rows && id ? 0 : -1;
    if (rc) snprintf(err, errlen, "out of memory holding %zu particles", k);
    if (gh_par_agree(rc, err, errlen) != 0) { free(rows); free(id); return -1; }
    for (size_t i = 0; i < k; ++i) {
        memcpy(&rows[i * NCOL], &pos[3 * (lo + i)], 3 * sizeof *pos);
        memcpy(&rows[i * NCOL + 3], &vel[3 * (lo + i)], 3 * sizeof *vel);
        rows[i * NCOL + 6] = mass[lo + i];
        id[i] = ids ? ids[lo + i] : (uint64_t)(lo + i);
    }
    return decompose_into(sim, k, rows, id, err, errlen);
}

/* gp_ic_share_fn over MPI_COMM_WORLD: agrees on the status, then every
 * rank's own rows of block sums to every rank. */
static int share_block_sums(void *ctx, int status, double *sums, size_t width, size_t n_blocks,
                            size_t own_first, size_t own_count, char *err, size_t errlen)
{
    (void)ctx;
    int rc = status;
    if (rc == 0 && n_blocks * width > (size_t)INT_MAX) {
        snprintf(err, errlen, "%zu blocks of initial conditions are too many to share in one message; "
                 "use fewer particles", n_blocks);
        rc = -1;
    }
    int *cnt = malloc((size_t)size_ * sizeof *cnt), *off = malloc((size_t)size_ * sizeof *off);
    if (rc == 0 && (!cnt || !off)) { snprintf(err, errlen, "out of memory"); rc = -1; }
    if (gh_par_agree(rc, err, errlen) != 0) { free(cnt); free(off); return -1; }
    int mine[2] = { (int)(own_first * width), (int)(own_count * width) }, *all = malloc(2 * (size_t)size_ * sizeof *all);
    rc = all ? 0 : -1;
    if (rc) snprintf(err, errlen, "out of memory");
    if (gh_par_agree(rc, err, errlen) != 0) { free(cnt); free(off); free(all); return -1; }
    MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int q = 0; q < size_; ++q) { off[q] = all[2 * q]; cnt[q] = all[2 * q + 1]; }
    MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, sums, cnt, off, MPI_DOUBLE, MPI_COMM_WORLD);
    free(cnt); free(off); free(all);
    return 0;
}

int gh_par_set_ic(gp_sim *sim, const char *model, size_t n, uint64_t seed, const void *opts, char *err,
                  size_t errlen)
{
    gp_ic ic;
    if (gp_ic_makes_ranges(model) != 1) {
        /* read or fixed (or an unknown name, which gp_ic_make words): whole on every rank */
        int rc = gp_ic_make(model, n, seed, opts, &ic, err, errlen);
        if (rc == 0 && n == 0)
            rc = gh_memory_check(ic.n, gp_sim_solver_name(sim), gp_sim_solver_capabilities(sim), err, errlen);
        if (gh_par_agree(rc, err, errlen) != 0) { gp_ic_free(&ic); return -1; }
        rc = gh_par_set_particles(sim, ic.n, ic.pos, ic.vel, ic.mass, ic.id, err, errlen);
        gp_ic_free(&ic);
        return rc;
    }
    if (n < (size_t)size_) {
        snprintf(err, errlen, "%zu particles on %d ranks: every rank needs at least one; run on at most %zu ranks",
                 n, size_, n);
        return -1;   /* n is the same on every rank */
    }
    size_t lo = n * (size_t)rank_ / (size_t)size_, hi = n * (size_t)(rank_ + 1) / (size_t)size_, k = hi - lo;
    int rc = gp_ic_make_range(model, n, seed, opts, lo, hi, share_block_sums, NULL, &ic, err, errlen);
    double *rows = rc == 0 ? malloc(k * NCOL * sizeof *rows) : NULL;
    uint64_t *id = rc == 0 ? malloc(k * sizeof *id) : NULL;
    if (rc == 0 && (!rows || !id)) { snprintf(err, errlen, "out of memory holding %zu particles", k); rc = -1; }
    if (gh_par_agree(rc, err, errlen) != 0) { gp_ic_free(&ic); free(rows); free(id); return -1; }
    for (size_t i = 0; i < k; ++i) {
        memcpy(&rows[i * NCOL], &ic.pos[3 * i], 3 * sizeof *ic.pos);
        memcpy(&rows[i * NCOL + 3], &ic.vel[3 * i], 3 * sizeof *ic.vel);
        rows[i * NCOL + 6] = ic.mass[i];
        id[i] = ic.id[i];
    }
    gp_ic_free(&ic);
    return decompose_into(sim, k, rows, id, err, errlen);
}

/* The collective hook of gp_sim (gp_sim_set_collective). */
static int64_t reduce_world(void *ctx, int64_t x, int op)
{
    (void)ctx;
    int64_t r = 0;
    MPI_Allreduce(&x, &r, 1, MPI_INT64_T, op == GP_SIM_REDUCE_SUM ? MPI_SUM : MPI_MAX, MPI_COMM_WORLD);
    return r;
}

void gh_par_attach(gp_sim *sim)
{
    if (size_ > 1) gp_sim_set_collective(sim, reduce_world, NULL);
}

/* Migration: rows of the whole per-particle state (integrators/sim/migrate.c)
 * through the decomposition; only at resync points, where the solver gets
 * every particle afresh anyway, so nothing is lost but the old placement. */
int gh_par_migrate(gp_sim *sim, char *err, size_t errlen)
{
    if (size_ == 1 || !gp_sim_at_resync_point(sim)) return 0;   /* the same answer on every rank */
    size_t n = gp_sim_count(sim), ncol = gp_sim_state_columns(sim);
    double *rows = malloc(n * ncol * sizeof *rows);
    uint64_t *ids = malloc(n * sizeof *ids);
    int rc = -1;
    if (!rows || !ids) snprintf(err, errlen, "out of memory holding %zu particles to migrate", n);
    else if (gp_sim_export_state(sim, rows, ids) != GP_OK) snprintf(err, errlen, "%s", gp_sim_last_error(sim));
    else rc = 0;
    if (gh_par_agree(rc, err, errlen) != 0) { free(rows); free(ids); return -1; }
    /* every level set balanced: each block step's active particles shared
     * over the ranks (decomp.h; bench/results/mpi-tree/raw/mpi-tree.md, "Block
     * steps over the ranks") */
    if (gp_mpi_decompose_levels(MPI_COMM_WORLD, &n, ncol, GP_SIM_STATE_COL_LEVEL, &rows, &ids, err,
                                errlen) != 0) {
        free(rows); free(ids);
        return -1;   /* the same sentence on every rank already */
    }
    rc = gp_sim_import_state(sim, n, rows, ids) == GP_OK ? 0 : -1;
    if (rc) snprintf(err, errlen, "%s", gp_sim_last_error(sim));
    free(rows); free(ids);
    return gh_par_agree(rc, err, errlen) == 0 ? 1 : -1;
}

typedef struct row_ref { uint64_t id; size_t at; } row_ref;
static int by_id(const void *a, const void *b)
{
    uint64_t x = ((const row_ref *)a)->id, y = ((const row_ref *)b)->id;
    return (x > y) - (x < y);
}

int gh_par_gather(gp_sim *sim, size_t *n_all, double **pos, double **vel, double **mass,
                  uint64_t **ids, char *err, size_t errlen)
{
    size_t n = gp_sim_count(sim);
    double *rows = NULL, *all = NULL;
    uint64_t *id = NULL, *all_id = NULL;
    int rc = to_rows(sim, n, &rows, &id, err, errlen);
    int *cnt = calloc((size_t)size_, sizeof *cnt), *off = calloc((size_t)size_, sizeof *off);
    int *cnt7 = calloc((size_t)size_, sizeof *cnt7), *off7 = calloc((size_t)size_, sizeof *off7);
    if (!rc && (!cnt || !off || !cnt7 || !off7)) { snprintf(err, errlen, "out of memory"); rc = -1; }
    if (!rc && n * NCOL > (size_t)0x7fffffff) {
        snprintf(err, errlen, "%zu particles on one rank are too many to gather in one message; use more ranks", n);
        rc = -1;
    }
    if (gh_par_agree(rc, err, errlen) != 0) goto fail;
    int mine = (int)n;
    MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int q = 0; q < size_; ++q) {
        off[q] = (int)total;
        off7[q] = (int)(total * NCOL);
        cnt7[q] = cnt[q] * NCOL;
        total += (size_t)cnt[q];
    }
    *n_all = total;
    if (rank_ == 0) {
        all = malloc(total * NCOL * sizeof *all);
        all_id = malloc(total * sizeof *all_id);
        if (!all || !all_id) { snprintf(err, errlen, "out of memory gathering %zu particles on rank 0", total); rc = -1; }
    }
    if (gh_par_agree(rc, err, errlen) != 0) goto fail;
    MPI_Gatherv(rows, (int)(n * NCOL), MPI_DOUBLE, all, cnt7, off7, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gatherv(id, (int)n, MPI_UINT64_T, all_id, cnt, off, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
        /* id order: the order of the initial conditions, as one process has it */
        row_ref *ref = malloc(total * sizeof *ref);
        double *p = pos ? malloc(3 * total * sizeof *p) : NULL, *v = vel ? malloc(3 * total * sizeof *v) : NULL;
        double *m = mass ? malloc(total * sizeof *m) : NULL;
        uint64_t *ii = ids ? malloc(total * sizeof *ii) : NULL;
        if (!ref || (pos && !p) || (vel && !v) || (mass && !m) || (ids && !ii)) {
            free(ref); free(p); free(v); free(m); free(ii);
            snprintf(err, errlen, "out of memory gathering %zu particles on rank 0", total);
            rc = -1;
        } else {
            for (size_t k = 0; k < total; ++k) ref[k] = (row_ref){ all_id[k], k };
            qsort(ref, total, sizeof *ref, by_id);
            for (size_t k = 0; k < total; ++k) {
                const double *r = &all[ref[k].at * NCOL];
                if (p) memcpy(&p[3 * k], r, 3 * sizeof *p);
                if (v) memcpy(&v[3 * k], r + 3, 3 * sizeof *v);
                if (m) m[k] = r[6];
                if (ii) ii[k] = ref[k].id;
            }
            free(ref);
            if (pos) *pos = p;
            if (vel) *vel = v;
            if (mass) *mass = m;
            if (ids) *ids = ii;
        }
    } else {
        if (pos) *pos = NULL;
        if (vel) *vel = NULL;
        if (mass) *mass = NULL;
        if (ids) *ids = NULL;
    }
    if (gh_par_agree(rc, err, errlen) != 0) goto fail;
    free(rows); free(id); free(all); free(all_id); free(cnt); free(off); free(cnt7); free(off7);
    return 0;
fail:
    free(rows); free(id); free(all); free(all_id); free(cnt); free(off); free(cnt7); free(off7);
    return -1;
}

/* Whether the plugin (a short name or a path; "auto" never is) says it
 * spreads one force evaluation over the ranks (GP_CAP_MPI). */
static int spreads_over_ranks(const char *plugin)
{
    gp_plugin *p;
    if (gp_plugin_open(plugin, &p, NULL, 0) != GP_OK) return 0;
    int spreads = (gp_plugin_api(p)->capabilities & GP_CAP_MPI) != 0;
    gp_plugin_close(p);
    return spreads;
}

static int first_name(const char *path, const char *short_name, uint64_t capabilities, void *user)
{
    snprintf(user, 64, "%s", short_name);
    return 1;
}

int gh_par_check_run(const char *plugin, const char *integrator, size_t n_switches, char *err, size_t errlen)
{
    if (size_ == 1) return 0;
    if (!spreads_over_ranks(plugin)) {
        char name[64] = "";
        gp_plugin_list_preferred(GP_CAP_MPI, 0, first_name, name);
        snprintf(err, errlen, "solver.plugin is \"%s\", but a run on %d ranks needs a plugin that spreads one "
                 "force evaluation over the ranks: use %s, or run gravhost without mpirun", plugin, size_,
                 name[0] ? name : "one with GP_CAP_MPI (none is on the plugin search path)");
        return -1;
    }
    unsigned flags = 0;
    if (gp_integrator_flags(integrator, &flags) == GP_OK && !(flags & GP_SCHEME_MPI)) {
        char names[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < gp_integrator_count(); ++k) {
            unsigned f = 0;
            const char *name = gp_integrator_name(k);
            if (gp_integrator_flags(name, &f) != GP_OK || !(f & GP_SCHEME_MPI) || used >= sizeof names) continue;
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", name);
        }
        snprintf(err, errlen, "integrator.name is \"%s\", but on %d ranks only the integrators whose solver "
                 "calls every rank makes alike run (%s): choose one of them, or run without mpirun",
                 integrator, size_, names);
        return -1;
    }
    if (n_switches) {
        snprintf(err, errlen, "the config has %zu solver switches, which a run on %d ranks does not support: "
                 "remove them, or run without mpirun", n_switches, size_);
        return -1;
    }
    return 0;
}

int gh_par_ckpt_path(const char *base, int restart, char *out, size_t len, char *err, size_t errlen)
{
    return gh_ckpt_path(base, rank_, size_, restart, out, len, err, errlen);
}
