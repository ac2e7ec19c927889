/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-conformance.c — the conformance suite (tests/conformance/conformance.c, compiled
 * in unchanged) run against mpi-tree spread over P ranks.
 *
 * The suite is a single-process program: it hands n particles to one
 * solver and expects n results back. Here rank 0 runs it against a proxy
 * table that looks like one plugin: every call is broadcast to the other
 * ranks (which wait in serve()), each rank gives mpi-tree its share of the
 * particles (particle i on rank i % P: no spatial locality at all, the
 * hardest case for the LET), of the active subset, field points and state
 * subsets, with local indices, and the results are gathered back into the
 * suite's order. describe_params, get_param, get_stats and last_error are
 * answered by rank 0's instance alone (get_stats counts rank 0's work).
 *
 * The proxy speaks ABI 1.1: mpi-tree's 1.2 outputs name sources by global
 * index across ranks, which this round-robin mapping would have to undo;
 * they are checked at P = 1 by the plain conformance run and at P = 1..4
 * against cpu-tree by tests/mpi/mpi-accuracy.c.
 *
 * Only the mapping lives here; every check is the suite's own. The ranks
 * with no share of a call take part with an empty one (mpi-tree's
 * extensions for empty ranks: n = 0, m = 0, (0, non-NULL) subsets).
 */
#include <mpi.h>
#include <pthread.h>

#include "gravplug_loader.h"

static const gp_api *mpi_split_api(const gp_api *real);
#define gp_plugin_api(p) mpi_split_api(gp_plugin_api(p))
#define main conformance_main
#include "conformance.c"
#undef main
#undef gp_plugin_api

static const gp_api *real;
static gp_api proxy;
static MPI_Comm ctl;
static int me, P;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

enum { OP_QUIT, OP_INIT, OP_FINALIZE, OP_SET_PARAM, OP_SET_PARTICLES, OP_UPDATE_POSITIONS,
       OP_SET_ACTIVE, OP_FORCES, OP_FIELD, OP_SET_STATE, OP_PREDICT, OP_GET_POSITIONS,
       OP_SET_SOURCES, OP_UPDATE_MASSES };

typedef struct cmd {
    int32_t op, id;
    uint32_t nulls;          /* bit k: argument k was NULL */
    uint32_t pad;
    uint64_t n, m;           /* counts (global)            */
    double t;
} cmd;

/* rank 0's view of one instance */
typedef struct split {
    int id;
    gp_solver *s;            /* rank 0's mpi-tree instance */
    size_t n;                /* global particle count      */
    size_t na;               /* global active count, 0: all */
    uint32_t *active;        /* global active list          */
} split;

/* servers: id -> instance */
static gp_solver **inst;
static int ninst;
static int next_id;

static double dummy[3];
static uint32_t dummy_idx[1];

/* ---- broadcasting ---------------------------------------------------------- */

static void bcast(void *p, size_t bytes)
{
    if (bytes) MPI_Bcast(p, (int)bytes, MPI_BYTE, 0, ctl);
}

static char *bcast_string(const char *s, int present)
{
    int len = me == 0 && present ? (int)strlen(s) + 1 : 0;
    MPI_Bcast(&len, 1, MPI_INT, 0, ctl);
    if (!len) return NULL;
    char *c = malloc((size_t)len);
    if (me == 0) memcpy(c, s, (size_t)len);
    bcast(c, (size_t)len);
    return c;
}

/* A global array of count items of `item` bytes: rank 0 has it, others get
 * a copy (NULL when it was NULL). */
static void *bcast_array(const void *a, size_t count, size_t item, int null)
{
    if (null || count == 0) return null ? NULL : (void *)dummy;
    void *c = me == 0 ? (void *)a : malloc(count * item);
    bcast(c, count * item);
    return c;
}

static void free_array(void *a, const void *orig)
{
    if (me != 0 && a && a != (void *)dummy && a != orig) free(a);
}

/* ---- shares: global index g lives on rank g % P as local g / P --------------- */

static size_t share_count(size_t n, int r) { return n > (size_t)r ? (n - (size_t)r + P - 1) / P : 0; }

/* Rows i % P == me of a global array of n rows of `per` doubles. */
static double *share_rows(const double *a, size_t n, int per)
{
    if (!a) return NULL;
    size_t k = share_count(n, me);
    double *o = malloc((k ? k : 1) * per * sizeof *o);
    for (size_t i = (size_t)me, j = 0; i < n; i += (size_t)P, j++)
        memcpy(&o[per * j], &a[per * i], per * sizeof *o);
    return o;
}

/* The part of a global index list (and of rows packed in its order) that
 * lives here, as local indices; *k gets its length. */
static uint32_t *share_index(const uint32_t *idx, size_t count, size_t *k)
{
    uint32_t *o = malloc((count ? count : 1) * sizeof *o);
    size_t j = 0;
    for (size_t q = 0; q < count; q++)
        if (idx[q] % (uint32_t)P == (uint32_t)me) o[j++] = idx[q] / (uint32_t)P;
    *k = j;
    return o;
}

static double *share_packed(const double *a, const uint32_t *idx, size_t count, int per)
{
    if (!a) return NULL;
    double *o = malloc((count ? count : 1) * per * sizeof *o);
    size_t j = 0;
    for (size_t q = 0; q < count; q++)
        if (idx[q] % (uint32_t)P == (uint32_t)me) memcpy(&o[per * j++], &a[per * q], per * sizeof *o);
    return o;
}

/* Gathers k local rows of `per` doubles to rank 0 and puts them back in the
 * global order given by owner-of(q) = rank_of[q] (rows of one rank in their
 * order). out may be NULL (nothing written). */
static void gather_rows(const double *loc, size_t k, int per, size_t count, const int *rank_of,
                        double *out)
{
    int c = (int)(k * (size_t)per), *cnt = NULL, *dis = NULL;
    double *all = NULL;
    if (me == 0) { cnt = malloc((size_t)P * sizeof *cnt); dis = malloc((size_t)P * sizeof *dis); }
    MPI_Gather(&c, 1, MPI_INT, cnt, 1, MPI_INT, 0, ctl);
    if (me == 0) {
        int tot = 0;
        for (int r = 0; r < P; r++) { dis[r] = tot; tot += cnt[r]; }
        all = malloc((size_t)(tot ? tot : 1) * sizeof *all);
    }
    MPI_Gatherv(loc ? loc : dummy, c, MPI_DOUBLE, all, cnt, dis, MPI_DOUBLE, 0, ctl);
    if (me == 0 && out) {
        int *next = calloc((size_t)P, sizeof *next);
        for (size_t q = 0; q < count; q++) {
            int r = rank_of[q];
            memcpy(&out[per * q], &all[dis[r] + per * next[r]++], per * sizeof *out);
        }
        free(next);
    }
    free(all); free(cnt); free(dis);
}

/* ---- one operation, on every rank ------------------------------------------ */

static gp_solver *instance(int id) { return id >= 0 && id < ninst ? inst[id] : NULL; }

/* Runs c on this rank; rank 0 passes its arguments in a (else NULL). */
typedef struct args {
    const gp_init_args *ia; gp_solver **out;
    const char *s1, *s2;
    const double *d1, *d2, *d3, *d4;
    const uint32_t *idx;
    double *o1, *o2;
} args;

static gp_status perform(cmd *c, const args *a, gp_solver *s)
{
    gp_status st = GP_OK;
    switch (c->op) {
    case OP_INIT: {
        /* the init arguments, NULL-ness kept */
        gp_init_args ia = { 0 };
        int has = !(c->nulls & 1);
        if (me == 0 && has) ia = *a->ia;
        bcast(&ia, sizeof ia);
        size_t np = has ? ia.n_params : 0;
        int params_null = has && ia.params == NULL;
        MPI_Bcast(&params_null, 1, MPI_INT, 0, ctl);
        gp_param *kv = calloc(np ? np : 1, sizeof *kv);
        if (!params_null)
            for (size_t k = 0; k < np; k++) {
                kv[k].name = bcast_string(me == 0 ? a->ia->params[k].name : NULL,
                                          me == 0 ? a->ia->params[k].name != NULL : 0);
                kv[k].value = bcast_string(me == 0 ? a->ia->params[k].value : NULL,
                                           me == 0 ? a->ia->params[k].value != NULL : 0);
            }
        ia.params = params_null ? NULL : kv;
        ia.log = me == 0 && has ? a->ia->log : NULL;
        ia.log_user = me == 0 && has ? a->ia->log_user : NULL;
        ia.mpi_comm = NULL;
        gp_solver *made = NULL;
        st = real->init((c->nulls & 2) ? NULL : &made, has ? &ia : NULL);
        if (me == 0) *a->out = made;
        else {
            if (c->id >= ninst) {
                inst = realloc(inst, (size_t)(c->id + 1) * sizeof *inst);
                for (int k = ninst; k <= c->id; k++) inst[k] = NULL;
                ninst = c->id + 1;
            }
            inst[c->id] = made;
        }
        for (size_t k = 0; k < np && !params_null; k++) { free((void *)kv[k].name); free((void *)kv[k].value); }
        free(kv);
        break;
    }
    case OP_FINALIZE:
        real->finalize(s);
        if (me != 0 && c->id < ninst) inst[c->id] = NULL;
        break;
    case OP_SET_PARAM: {
        char *k = bcast_string(a ? a->s1 : NULL, !(c->nulls & 1));
        char *v = bcast_string(a ? a->s2 : NULL, !(c->nulls & 2));
        st = real->set_param(s, k, v);
        free(k); free(v);
        break;
    }
    case OP_SET_PARTICLES:
    case OP_UPDATE_POSITIONS: {
        size_t n = c->n, k = share_count(n, me);
        const double *gp = bcast_array(a ? a->d1 : NULL, 3 * n, sizeof(double), c->nulls & 1);
        const double *gm = c->op == OP_SET_PARTICLES
                               ? bcast_array(a ? a->d2 : NULL, n, sizeof(double), c->nulls & 2) : NULL;
        double *lp = gp && n ? share_rows(gp, n, 3) : NULL, *lm = gm && n ? share_rows(gm, n, 1) : NULL;
        if (c->op == OP_SET_PARTICLES)
            st = real->set_particles(s, k, gp && n ? (k ? lp : dummy) : NULL,
                                     gm && n ? (k ? lm : dummy) : NULL);
        else
            st = real->update_positions(s, gp ? (k ? lp : dummy) : NULL);
        free(lp); free(lm);
        free_array((void *)gp, a ? a->d1 : NULL);
        free_array((void *)gm, a ? a->d2 : NULL);
        break;
    }
    case OP_SET_ACTIVE:
    case OP_SET_SOURCES: {
        size_t cnt = c->n, k = 0;
        const uint32_t *gi = bcast_array(a ? a->idx : NULL, cnt, sizeof(uint32_t), c->nulls & 1);
        uint32_t *li = NULL;
        if (cnt == 0) {
            st = c->op == OP_SET_ACTIVE ? real->set_active_subset(s, 0, NULL)
                                        : real->set_source_subset(s, 0, NULL);
        } else if (!gi) {
            st = c->op == OP_SET_ACTIVE ? real->set_active_subset(s, cnt, NULL)
                                        : real->set_source_subset(s, cnt, NULL);
        } else {
            li = share_index(gi, cnt, &k);
            /* none here: (0, non-NULL) */
            st = c->op == OP_SET_ACTIVE ? real->set_active_subset(s, k, k ? li : dummy_idx)
                                        : real->set_source_subset(s, k, k ? li : dummy_idx);
        }
        free(li);
        free_array((void *)gi, a ? a->idx : NULL);
        break;
    }
    default:
        break;
    }
    return st;
}

/* Rank 0: sends the command, runs it, returns rank 0's status (which the
 * plugin made the same on every rank). */
static gp_status run(cmd *c, const args *a, gp_solver *s)
{
    MPI_Bcast(c, (int)sizeof *c, MPI_BYTE, 0, ctl);
    return perform(c, a, s);
}

/* ---- computing calls: results come back in the suite's order ---------------- */

/* Active subset of split x as a rank_of list (NULL: all particles). */
static int *owners_of(const uint32_t *idx, size_t count, size_t n)
{
    int *o = malloc((count ? count : 1) * sizeof *o);
    for (size_t q = 0; q < count; q++) o[q] = idx ? (int)(idx[q] % (uint32_t)P) : (int)(q % (size_t)P);
    (void)n;
    return o;
}

static gp_status forces_everywhere(cmd *c, split *x, gp_solver *s, double *acc, double *pot)
{
    /* every rank knows the global active list from its own set_active
     * (servers keep no copy): rank 0 broadcasts it again */
    uint64_t na = x ? x->na : 0, n = x ? x->n : 0;
    MPI_Bcast(&na, 1, MPI_UINT64_T, 0, ctl);
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, ctl);
    uint32_t *gl = na ? bcast_array(x ? x->active : NULL, na, sizeof(uint32_t), 0) : NULL;
    size_t k = 0;
    if (na) {
        uint32_t *li = share_index(gl, na, &k);
        free(li);
    } else {
        k = share_count(n, me);
    }
    double *la = malloc(3 * (k ? k : 1) * sizeof *la), *lp = malloc((k ? k : 1) * sizeof *lp);
    gp_status st = real->compute_forces(s, (c->nulls & 1) ? NULL : la, (c->nulls & 2) ? NULL : lp);
    size_t count = na ? na : n;
    int *own = owners_of(na ? gl : NULL, count, n);
    if (st == GP_OK) {
        gather_rows(la, k, 3, count, own, me == 0 ? acc : NULL);
        gather_rows(lp, k, 1, count, own, me == 0 && !(c->nulls & 2) ? pot : NULL);
    }
    free(own); free(la); free(lp);
    free_array(gl, x ? x->active : NULL);
    return st;
}

static gp_status field_everywhere(cmd *c, const double *points, double *acc, double *pot,
                                  gp_solver *s)
{
    size_t m = c->m;
    const double *gp = bcast_array(points, 3 * m, sizeof(double), c->nulls & 1);
    size_t k = share_count(m, me);
    double *lpts = gp && m ? share_rows(gp, m, 3) : NULL;
    double *la = malloc(3 * (k ? k : 1) * sizeof *la), *lp = malloc((k ? k : 1) * sizeof *lp);
    gp_status st = real->compute_field(s, k, gp ? (k ? lpts : dummy) : NULL,
                                       (c->nulls & 2) ? NULL : la, (c->nulls & 4) ? NULL : lp);
    int *own = owners_of(NULL, m, m);
    if (st == GP_OK) {
        gather_rows(la, k, 3, m, own, me == 0 ? acc : NULL);
        gather_rows(lp, k, 1, m, own, me == 0 && !(c->nulls & 4) ? pot : NULL);
    }
    free(own); free(la); free(lp); free(lpts);
    free_array((void *)gp, points);
    return st;
}

/* set_state / get_positions / update_masses: a subset (global indices or
 * NULL for all) with rows packed in its order. */
static gp_status subset_everywhere(cmd *c, const uint32_t *index, const double *r1,
                                   const double *r2, const double *r3, const double *tt,
                                   double *out, gp_solver *s, size_t n)
{
    size_t cnt = c->n;
    uint64_t nn = n;
    MPI_Bcast(&nn, 1, MPI_UINT64_T, 0, ctl);
    int inull = c->nulls & 1;
    const uint32_t *gi = inull ? NULL : bcast_array(index, cnt, sizeof(uint32_t), 0);
    int per1 = c->op == OP_UPDATE_MASSES ? 1 : 3;
    const double *g1 = c->op == OP_GET_POSITIONS ? NULL : bcast_array(r1, per1 * cnt, sizeof(double), c->nulls & 2);
    const double *g2 = c->op == OP_SET_STATE ? bcast_array(r2, 3 * cnt, sizeof(double), c->nulls & 4) : NULL;
    const double *g3 = c->op == OP_SET_STATE ? bcast_array(r3, 3 * cnt, sizeof(double), c->nulls & 8) : NULL;
    const double *g4 = c->op == OP_SET_STATE ? bcast_array(tt, cnt, sizeof(double), c->nulls & 16) : NULL;
    size_t k;
    uint32_t *li = NULL;
    double *l1 = NULL, *l2 = NULL, *l3 = NULL, *l4 = NULL;
    const uint32_t *pass_idx;
    int *own = NULL;
    if (cnt == 0) {
        k = 0; pass_idx = gi;
    } else if (inull) {
        /* all in order needs cnt == n; otherwise a count that cannot match */
        k = cnt == nn ? share_count(nn, me) : share_count(nn, me) + 1 + cnt;
        pass_idx = NULL;
        if (cnt == nn) {
            l1 = g1 ? share_rows(g1, nn, per1) : NULL;
            l2 = g2 ? share_rows(g2, nn, 3) : NULL;
            l3 = g3 ? share_rows(g3, nn, 3) : NULL;
            l4 = g4 ? share_rows(g4, nn, 1) : NULL;
        }
        own = owners_of(NULL, cnt, nn);
    } else {
        li = share_index(gi, cnt, &k);
        pass_idx = k ? li : dummy_idx;
        l1 = g1 ? share_packed(g1, gi, cnt, per1) : NULL;
        l2 = g2 ? share_packed(g2, gi, cnt, 3) : NULL;
        l3 = g3 ? share_packed(g3, gi, cnt, 3) : NULL;
        l4 = g4 ? share_packed(g4, gi, cnt, 1) : NULL;
        own = owners_of(gi, cnt, nn);
    }
    /* an empty share of a non-empty call: (0, non-NULL) is a no-op */
    const double *a1 = g1 ? (l1 ? l1 : dummy) : NULL, *a2 = g2 ? (l2 ? l2 : dummy) : NULL;
    const double *a3 = g3 ? (l3 ? l3 : dummy) : NULL, *a4 = g4 ? (l4 ? l4 : dummy) : NULL;
    gp_status st = GP_OK;
    double *lo = NULL;
    switch (c->op) {
    case OP_SET_STATE: st = real->set_state(s, k, pass_idx, a1, a2, a3, a4); break;
    case OP_UPDATE_MASSES: st = real->update_masses(s, k, pass_idx, a1); break;
    case OP_GET_POSITIONS:
        lo = malloc(3 * (k ? k : 1) * sizeof *lo);
        st = real->get_positions(s, k, pass_idx, (c->nulls & 2) ? NULL : lo);
        if (st == GP_OK && cnt) gather_rows(lo, k, 3, cnt, own, me == 0 ? out : NULL);
        break;
    }
    free(lo); free(li); free(l1); free(l2); free(l3); free(l4); free(own);
    free_array((void *)gi, index);
    free_array((void *)g1, r1); free_array((void *)g2, r2);
    free_array((void *)g3, r3); free_array((void *)g4, tt);
    return st;
}

/* ---- the proxy table (rank 0) ------------------------------------------------ */

#define X(s) ((split *)(s))
#define LOCKED(expr) do { pthread_mutex_lock(&lock); gp_status st_ = (expr); pthread_mutex_unlock(&lock); return st_; } while (0)

static gp_status px_init(gp_solver **out, const gp_init_args *a)
{
    pthread_mutex_lock(&lock);
    int id = next_id++;
    cmd c = { .op = OP_INIT, .id = id, .nulls = (a ? 0u : 1u) | (out ? 0u : 2u) };
    gp_solver *made = NULL;
    args ar = { .ia = a, .out = &made };
    gp_status st = run(&c, &ar, NULL);
    pthread_mutex_unlock(&lock);
    if (!out) return st;
    *out = NULL;
    if (st != GP_OK) return st;
    split *x = calloc(1, sizeof *x);
    x->id = id;
    x->s = made;
    *out = (gp_solver *)x;
    return GP_OK;
}

static void px_finalize(gp_solver *s)
{
    if (!s) return;
    pthread_mutex_lock(&lock);
    cmd c = { .op = OP_FINALIZE, .id = X(s)->id };
    run(&c, NULL, X(s)->s);
    pthread_mutex_unlock(&lock);
    free(X(s)->active);
    free(s);
}

static gp_status px_set_param(gp_solver *s, const char *k, const char *v)
{
    if (!s) return real->set_param(NULL, k, v);
    cmd c = { .op = OP_SET_PARAM, .id = X(s)->id, .nulls = (k ? 0u : 1u) | (v ? 0u : 2u) };
    args a = { .s1 = k, .s2 = v };
    LOCKED(run(&c, &a, X(s)->s));
}

static gp_status px_get_param(gp_solver *s, const char *k, char *buf, size_t len)
{
    return real->get_param(s ? X(s)->s : NULL, k, buf, len);
}

static gp_status px_get_stats(gp_solver *s, gp_stats *o) { return real->get_stats(s ? X(s)->s : NULL, o); }
static const char *px_last_error(const gp_solver *s) { return real->last_error(s ? X(s)->s : NULL); }

static gp_status set_particles_locked(split *x, size_t n, const double *pos, const double *mass)
{
    cmd c = { .op = OP_SET_PARTICLES, .id = x->id, .n = n,
              .nulls = (pos ? 0u : 1u) | (mass ? 0u : 2u) };
    args a = { .d1 = pos, .d2 = mass };
    gp_status st = run(&c, &a, x->s);
    if (st == GP_OK) { x->n = n; x->na = 0; free(x->active); x->active = NULL; }
    return st;
}

static gp_status px_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return real->set_particles(NULL, n, pos, mass);
    LOCKED(set_particles_locked(X(s), n, pos, mass));
}

static gp_status px_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return real->update_positions(NULL, pos);
    cmd c = { .op = OP_UPDATE_POSITIONS, .id = X(s)->id, .n = X(s)->n, .nulls = pos ? 0u : 1u };
    args a = { .d1 = pos };
    LOCKED(run(&c, &a, X(s)->s));
}

static gp_status set_active_locked(split *x, size_t na, const uint32_t *idx)
{
    cmd c = { .op = OP_SET_ACTIVE, .id = x->id, .n = na, .nulls = idx ? 0u : 1u };
    args a = { .idx = idx };
    gp_status st = run(&c, &a, x->s);
    if (st == GP_OK) {
        free(x->active);
        x->active = NULL;
        x->na = na;
        if (na) { x->active = malloc(na * sizeof *x->active); memcpy(x->active, idx, na * sizeof *idx); }
    }
    return st;
}

static gp_status px_set_active_subset(gp_solver *s, size_t na, const uint32_t *idx)
{
    if (!s) return real->set_active_subset(NULL, na, idx);
    LOCKED(set_active_locked(X(s), na, idx));
}

static gp_status px_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return real->compute_forces(NULL, acc, pot);
    cmd c = { .op = OP_FORCES, .id = X(s)->id, .nulls = (acc ? 0u : 1u) | (pot ? 0u : 2u) };
    pthread_mutex_lock(&lock);
    MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
    gp_status st = forces_everywhere(&c, X(s), X(s)->s, acc, pot);
    pthread_mutex_unlock(&lock);
    return st;
}

static gp_status px_compute_field(gp_solver *s, size_t m, const double *pts, double *acc, double *pot)
{
    if (!s) return real->compute_field(NULL, m, pts, acc, pot);
    cmd c = { .op = OP_FIELD, .id = X(s)->id, .m = m,
              .nulls = (pts ? 0u : 1u) | (acc ? 0u : 2u) | (pot ? 0u : 4u) };
    pthread_mutex_lock(&lock);
    MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
    gp_status st = field_everywhere(&c, pts, acc, pot, X(s)->s);
    pthread_mutex_unlock(&lock);
    return st;
}

static gp_status subset_call(gp_solver *s, int op, size_t cnt, const uint32_t *idx,
                             const double *r1, const double *r2, const double *r3,
                             const double *tt, double *out, int out_null)
{
    cmd c = { .op = op, .id = X(s)->id, .n = cnt,
              .nulls = (idx ? 0u : 1u) | ((op == OP_GET_POSITIONS ? out_null : !r1) ? 2u : 0u) |
                       (r2 ? 0u : 4u) | (r3 ? 0u : 8u) | (tt ? 0u : 16u) };
    pthread_mutex_lock(&lock);
    MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
    gp_status st = subset_everywhere(&c, idx, r1, r2, r3, tt, out, X(s)->s, X(s)->n);
    pthread_mutex_unlock(&lock);
    return st;
}

static gp_status px_set_state(gp_solver *s, size_t k, const uint32_t *idx, const double *p,
                              const double *v, const double *a, const double *t)
{
    if (!s) return real->set_state(NULL, k, idx, p, v, a, t);
    return subset_call(s, OP_SET_STATE, k, idx, p, v, a, t, NULL, 0);
}

static gp_status px_update_masses(gp_solver *s, size_t k, const uint32_t *idx, const double *m)
{
    if (!s) return real->update_masses(NULL, k, idx, m);
    return subset_call(s, OP_UPDATE_MASSES, k, idx, m, NULL, NULL, NULL, NULL, 0);
}

static gp_status px_get_positions(gp_solver *s, size_t k, const uint32_t *idx, double *pos)
{
    if (!s) return real->get_positions(NULL, k, idx, pos);
    return subset_call(s, OP_GET_POSITIONS, k, idx, NULL, NULL, NULL, NULL, pos, pos == NULL);
}

static gp_status px_predict(gp_solver *s, double t)
{
    if (!s) return real->predict(NULL, t);
    cmd c = { .op = OP_PREDICT, .id = X(s)->id, .t = t };
    pthread_mutex_lock(&lock);
    MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
    gp_status st = real->predict(X(s)->s, t);
    pthread_mutex_unlock(&lock);
    return st;
}

static gp_status px_set_source_subset(gp_solver *s, size_t k, const uint32_t *idx)
{
    if (!s) return real->set_source_subset(NULL, k, idx);
    cmd c = { .op = OP_SET_SOURCES, .id = X(s)->id, .n = k, .nulls = idx ? 0u : 1u };
    args a = { .idx = idx };
    LOCKED(run(&c, &a, X(s)->s));
}

static const gp_api *mpi_split_api(const gp_api *r)
{
    real = r;
    proxy = *r;
    if (GRAVPLUG_API_HAS(r, update_masses)) {   /* 1.1 at most (above) */
        proxy.abi_minor = r->abi_minor < 1 ? r->abi_minor : 1;
        proxy.struct_size = offsetof(gp_api, update_masses) + sizeof proxy.update_masses;
        /* and so none of 1.2's capability bits */
        proxy.capabilities &= ~(uint64_t)(GP_CAP_JERK | GP_CAP_NEIGHBOURS);
    }
    proxy.init = px_init;
    proxy.finalize = px_finalize;
    proxy.set_param = px_set_param;
    proxy.get_param = px_get_param;
    proxy.get_stats = px_get_stats;
    proxy.last_error = px_last_error;
    proxy.set_particles = px_set_particles;
    proxy.update_positions = px_update_positions;
    proxy.set_active_subset = px_set_active_subset;
    proxy.compute_forces = px_compute_forces;
    proxy.compute_field = px_compute_field;
    if (GRAVPLUG_API_HAS(r, set_state)) {
        proxy.set_state = px_set_state;
        proxy.predict = px_predict;
        proxy.get_positions = px_get_positions;
        proxy.set_source_subset = px_set_source_subset;
        proxy.update_masses = px_update_masses;
    }
    return &proxy;
}

/* ---- the other ranks --------------------------------------------------------- */

static void serve(void)
{
    for (;;) {
        cmd c;
        MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
        gp_solver *s = instance(c.id);
        if (getenv("GP_MPI_CONF_TRACE")) fprintf(stderr, "rank %d: op %d id %d n %llu nulls %u\n", me, c.op, c.id, (unsigned long long)c.n, c.nulls);
        switch (c.op) {
        case OP_QUIT: return;
        case OP_FORCES: forces_everywhere(&c, NULL, s, NULL, NULL); break;
        case OP_FIELD: field_everywhere(&c, NULL, NULL, NULL, s); break;
        case OP_SET_STATE:
        case OP_UPDATE_MASSES:
        case OP_GET_POSITIONS: subset_everywhere(&c, NULL, NULL, NULL, NULL, NULL, NULL, s, 0); break;
        case OP_PREDICT: real->predict(s, c.t); break;
        default: perform(&c, NULL, s); break;
        }
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
    int rc = 0;
    if (argc < 2) {
        if (me == 0) fprintf(stderr, "usage: mpirun -np P %s PLUGIN\n", argv[0]);
        rc = 2;
    } else if (me == 0) {
        if (provided < MPI_THREAD_SERIALIZED) diag("MPI gives thread level %d only", provided);
        rc = conformance_main(argc, argv);
        cmd c = { .op = OP_QUIT };
        MPI_Bcast(&c, (int)sizeof c, MPI_BYTE, 0, ctl);
    } else {
        gp_plugin *pl = NULL;
        char err[1024];
        if (gp_plugin_open(argv[1], &pl, err, sizeof err) != GP_OK) {
            fprintf(stderr, "%s\n", err);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        real = gp_plugin_api(pl);
        serve();
        gp_plugin_close(pl);
    }
    MPI_Comm_free(&ctl);
    MPI_Finalize();
    return rc;
}
