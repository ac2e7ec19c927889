/*
 * mpi_tree.c — the mpi-tree plugin: cpu-tree across MPI ranks with a local
 * essential tree (LET) exchange, as in Bonsai, GOTHIC's MPI mode and
 * Gadget's tree (Warren & Salmon 1993; Bédorf et al. 2014).
 *
 * Every call but describe_params, get_param, get_stats and last_error is
 * collective over the instance's communicator (a duplicate of
 * gp_init_args.mpi_comm, or of MPI_COMM_WORLD): every rank calls it, with
 * its own particles, its own active subset, its own field points, and
 * indices local to itself. Particles may be spread over the ranks in any
 * way; the exchange is small when each rank's particles are compact in
 * space (a Peano-Hilbert slice). Without mpirun the plugin runs as P = 1
 * (comm.h says how MPI gets started).
 *
 * One force pass:
 *   1. each rank builds (or refits) its own tree with cpu-tree's code
 *      (tree_state.c: keys, sort, i-groups, source tree, moments);
 *   2. each rank forms its i-groups and their spheres, and describes
 *      their domain by a tree of boxes: a coarse one to every rank
 *      (MPI_Allgatherv), then, in rounds, each neighbour the pieces that
 *      face it, refined towards single groups (exchange_domains, boxes.h);
 *   3. each rank packs, for every other rank, the cells of its tree that
 *      that box needs (let.c), and the ranks swap them (MPI_Alltoallv);
 *   4. each group is walked with cpu-tree's walk (walk.c), over the local
 *      tree first and then over the received LETs in rank order; the sums
 *      are added in that order, so results are deterministic for a fixed
 *      P and distribution of particles.
 * With engine = cuda-tree (engine_cuda.h, README "Engines") step 4 walks
 * the LETs only; the local forces come from a cuda-tree instance, run in
 * a thread of its own meanwhile, and are added in front of the LET sums.
 * Before each exchange the ranks agree on success (comm.h): a failure on
 * one rank becomes the same status and sentence on every rank, no hang.
 *
 * Extensions of the ABI for ranks that hold nothing to evaluate:
 *   - set_active_subset(s, 0, index != NULL): no active particle on this
 *     rank (compute_forces then writes nothing, acc may be NULL);
 *     set_source_subset(s, 0, index != NULL): no source on this rank;
 *   - compute_field with m = 0: no points on this rank (acc may be NULL),
 *     as long as some rank passes points (m = 0 everywhere is rejected, as
 *     the ABI says);
 *   - set_particles with n = 0: no particles on this rank (pos and mass
 *     may be NULL), as long as some rank has particles.
 *
 * The acceleration MAC's first call (no previous |a| anywhere) runs the bh
 * pre-pass on every rank when any rank needs it.
 *
 * Threads: each instance talks over its own duplicate communicator, so
 * two instances may be used from two threads at once when MPI runs at
 * MPI_THREAD_MULTIPLE (what the plugin asks for when it starts MPI; a host
 * that starts MPI itself decides).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "base/plugin_base.h"
#include "octree/mac.h"
#include "boxes.h"
#include "let.h"
#include "engine_cuda.h"

#define PLUGIN_NAME "mpi-tree"


static const gp_param_info params[] = {
    {"G", GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant, in the host's units"},
    {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)",
     "Plummer softening length: 1/r becomes 1/sqrt(r^2 + eps^2)"},
    {"theta", GP_PARAM_DOUBLE, "0.5", "[0,inf)",
     "opening angle of the bh, bmax and multipole criteria (0: direct summation)"},
    {"mac", GP_PARAM_ENUM, "bmax", "bh|bmax|multipole|acceleration",
     "cell acceptance, as cpu-tree's (the LET is cut by the same criterion)"},
    {"delta_acc", GP_PARAM_DOUBLE, "0.0078125", "[0,inf)",
     "accuracy of the acceleration criterion: G M l^2/d^4 < delta_acc |a_old|"},
    {"order", GP_PARAM_ENUM, "quadrupole", "monopole|quadrupole", "multipole order of cells"},
    {"rebuild", GP_PARAM_ENUM, "auto", "auto|always|N",
     "after positions change: auto (refit until a rebuild pays off), always, or rebuild "
     "every N force calls and refit in between (each rank decides for its own tree)"},
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float interactions and sums; mixed: float interactions, double sums; double"},
    {"group_size", GP_PARAM_INT, "64", "[1,1024]",
     "most particles in one i-group (the unit of the walk)"},
    {"leaf_size", GP_PARAM_INT, "16", "[1,1024]", "most particles in a source leaf cell"},
    {"keys", GP_PARAM_ENUM, "peano-hilbert", "peano-hilbert|morton",
     "space-filling curve each rank sorts its particles along"},
    {"threads", GP_PARAM_INT, "0", "[0,4096]",
     "OpenMP threads per call on each rank; 0 uses the OpenMP default (OMP_NUM_THREADS)"},
    {"engine", GP_PARAM_ENUM, "cpu-tree", "cpu-tree|cuda-tree",
     "the local force engine of each rank: cpu-tree, or cuda-tree (the local tree's forces "
     "from the cuda-tree plugin on the rank's GPU, the received LETs walked on the CPU; "
     "loaded from engine_plugin = PATH, default gravplug-cuda-tree.so beside this plugin; "
     "mac = acceleration is refused with it)"},
    {"let_boxes", GP_PARAM_INT, "256", "[1,65536]",
     "leaf boxes of the coarse tree each rank describes its domain with (runs of its "
     "i-groups along the curve; leaves near another rank are then refined, for that rank, "
     "towards single groups)"},
    {"wide_split", GP_PARAM_DOUBLE, "16", "[0,inf)",
     "halve i-groups wider than this many times the median group radius (0: keep "
     "cpu-tree's groups exactly); a wide group makes every LET for its rank hold nearly "
     "everything"},
};
enum { P_G, P_EPS, P_THETA, P_MAC, P_DELTA, P_ORDER, P_REBUILD, P_PREC, P_GROUP, P_LEAF,
       P_KEYS, P_THREADS, P_ENGINE, P_BOXES, P_WIDE, N_PARAMS };
enum { REBUILD_AUTO = 0, REBUILD_ALWAYS = 1, REBUILD_EVERY = 2 };

struct gp_solver {
    gp_base base;              /* first: errors, params, particle copy, stats */
    MPI_Comm comm;             /* this instance's own duplicate              */
    int rank, size;
    oct_tree tree;
    int have_tree;
    int moved;                 /* positions changed since the tree was made  */
    int dirty;                 /* masses or sources changed: rebuild         */
    uint32_t built_group, built_leaf;
    int built_keys;
    uint64_t calls_since_build;
    double base_cost, excess;  /* rebuild=auto bookkeeping (as cpu-tree)     */
    double *aold;              /* previous |a| per particle, < 0: none yet   */
    uint8_t *in_src;           /* source subset membership; NULL: all        */
    int none_active;           /* set_active_subset(0, non-NULL)             */
    mpi_tree_engine *engine;         /* engine = cuda-tree: the local forces' solver */
    char engine_plugin[4096];  /* engine_plugin = PATH ("" : the default)     */
    /* LET traffic of the last force/field call and in total (bytes) */
    uint64_t let_sent, let_recv, let_sent_total, let_recv_total;
};

static int thread_count(const gp_solver *s)
{
    long long t = gp_param_int(&s->base, P_THREADS);
    return t > 0 ? (int)t : omp_get_max_threads();
}

static gp_status agree(gp_solver *s, gp_status mine)
{
    return mpi_tree_agree(&s->base, s->comm, mine);
}

/* ---- the local tree ------------------------------------------------------ */

/* Masses the tree sees: zero outside the source subset. */
static const double *source_masses(gp_solver *s, double **tmp)
{
    const gp_particles *p = &s->base.p;
    *tmp = NULL;
    if (!s->in_src) return p->mass;
    double *m = malloc(p->n * sizeof *m);
    if (!m) return NULL;
    for (size_t i = 0; i < p->n; i++) m[i] = s->in_src[i] ? p->mass[i] : 0.0;
    *tmp = m;
    return m;
}

static gp_status build_tree(gp_solver *s)
{
    double t0 = gp_wtime();
    const gp_particles *p = &s->base.p;
    if (p->n == 0) {            /* an empty rank: an empty tree */
        oct_tree_free(&s->tree);
        s->have_tree = 1;
        s->moved = s->dirty = 0;
        s->built_group = (uint32_t)gp_param_int(&s->base, P_GROUP);
        s->built_leaf = (uint32_t)gp_param_int(&s->base, P_LEAF);
        s->built_keys = gp_param_enum(&s->base, P_KEYS) == 1 ? GP_KEY_MORTON : GP_KEY_PEANO_HILBERT;
        return GP_OK;
    }
    uint32_t gsize = (uint32_t)gp_param_int(&s->base, P_GROUP);
    uint32_t lsize = (uint32_t)gp_param_int(&s->base, P_LEAF);
    gp_key_kind kind = gp_param_enum(&s->base, P_KEYS) == 1 ? GP_KEY_MORTON : GP_KEY_PEANO_HILBERT;
    double *tmp;
    const double *mass = source_masses(s, &tmp);
    oct_tree fresh;
    int rc = -1;
    if (mass) {
        int prev = omp_get_max_threads();
        omp_set_num_threads(thread_count(s));
        rc = oct_tree_build(&fresh, p->n, p->pos, mass, gsize, lsize, kind);
        omp_set_num_threads(prev);
    }
    free(tmp);
    if (rc)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "no memory to build the tree of %zu particles; free memory or use "
                       "more ranks", p->n);
    oct_tree_free(&s->tree);
    s->tree = fresh;
    s->have_tree = 1;
    s->moved = s->dirty = 0;
    s->built_group = gsize;
    s->built_leaf = lsize;
    s->built_keys = (int)kind;
    s->calls_since_build = 0;
    s->excess = 0;
    s->base.stats.tree_builds += 1;
    s->base.stats.seconds_build += gp_wtime() - t0;
    return GP_OK;
}

/* Makes this rank's tree current (cpu-tree's policy; local, no exchange). */
static gp_status ensure_tree(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    gp_key_kind kind = gp_param_enum(&s->base, P_KEYS) == 1 ? GP_KEY_MORTON : GP_KEY_PEANO_HILBERT;
    if (!s->have_tree || s->dirty || s->built_group != (uint32_t)gp_param_int(&s->base, P_GROUP) ||
        s->built_leaf != (uint32_t)gp_param_int(&s->base, P_LEAF) || s->built_keys != (int)kind)
        return build_tree(s);
    if (!s->moved) return GP_OK;
    if (p->n == 0) { s->moved = 0; return GP_OK; }
    int mode = gp_param_enum(&s->base, P_REBUILD);
    if (mode == REBUILD_ALWAYS ||
        (mode == REBUILD_EVERY && s->calls_since_build >= (uint64_t)gp_param_int(&s->base, P_REBUILD)) ||
        (mode == REBUILD_AUTO && s->excess > OCT_BUILD_COST_PER_PARTICLE * (double)p->n))
        return build_tree(s);
    double t0 = gp_wtime();
    int prev = omp_get_max_threads();
    omp_set_num_threads(thread_count(s));
    int rc = oct_tree_refit(&s->tree, p->pos, NULL, 1);
    omp_set_num_threads(prev);
    if (rc == 1) return build_tree(s);   /* cannot happen without new masses */
    if (rc) return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory to refit the tree");
    s->moved = 0;
    s->base.stats.tree_refits += 1;
    s->base.stats.seconds_moments += gp_wtime() - t0;
    return GP_OK;
}

/* ---- targets: i-groups with their spheres --------------------------------- */

/* A pass's targets: runs rb/rc over target slots u, at x/y/z[u], skipping
 * local source self[u] (-1: none), result to output slot[u]. */
typedef struct mpi_tree_targets {
    uint32_t nruns;
    uint32_t *rb, *rc;
    double *x, *y, *z;
    int32_t *self;
    size_t *slot;
    double *centre, *radius;   /* per run */
    double *amin;              /* per run, acceleration MAC; NULL otherwise */
    void *owned[8];            /* freed by targets_free */
} mpi_tree_targets;

static void targets_free(mpi_tree_targets *T)
{
    for (int k = 0; k < 8; k++) free(T->owned[k]);
    memset(T, 0, sizeof *T);
}

typedef struct rank_slot { uint32_t rank, k; } rank_slot;

static int by_rank(const void *a, const void *b)
{
    uint32_t x = ((const rank_slot *)a)->rank, y = ((const rank_slot *)b)->rank;
    return (x > y) - (x < y);
}

/* Allocates the per-target and per-run arrays for m targets and nruns runs. */
static int targets_alloc(mpi_tree_targets *T, size_t m, uint32_t nruns)
{
    size_t mm = m ? m : 1, nr = nruns ? nruns : 1;
    T->x = T->owned[0] = malloc(3 * mm * sizeof *T->x);
    T->self = T->owned[1] = malloc(mm * sizeof *T->self);
    T->slot = T->owned[2] = malloc(mm * sizeof *T->slot);
    T->centre = T->owned[3] = malloc(4 * nr * sizeof *T->centre);
    if (!T->rb) T->rb = T->owned[4] = malloc(nr * sizeof *T->rb);
    if (!T->rc) T->rc = T->owned[5] = malloc(nr * sizeof *T->rc);
    if (!T->x || !T->self || !T->slot || !T->centre || !T->rb || !T->rc) return -1;
    T->y = T->x + mm;
    T->z = T->x + 2 * mm;
    T->radius = T->centre + 3 * nr;
    T->nruns = nruns;
    return 0;
}

/* Spheres of the runs (as cpu-tree's force_pass makes them). */
static void targets_spheres(mpi_tree_targets *T)
{
#pragma omp parallel for schedule(static) if (T->nruns > 256)
    for (uint32_t r = 0; r < T->nruns; r++)
        gp_group_sphere(T->x, T->y, T->z, NULL, T->rb[r], T->rc[r], &T->centre[3 * r],
                        &T->radius[r]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Wide groups: a group-size leaf of a nearly empty cube (the outskirts of
 * a halo) can have a sphere as large as the system, which makes its walk
 * open everything near it, and makes every other rank's LET for this rank
 * hold nearly all of that rank's particles, whatever the decomposition.
 * Such runs are halved along the curve until each piece is within `wide`
 * (the wide_split parameter) times the median group radius, or a single
 * target. (cpu-tree keeps them whole; its oct_split_loose_groups splits
 * only far looser ones.) Smaller spheres accept more cells, so forces
 * come closer to the MAC's nominal error (cpu-tree's wide groups are
 * needlessly exact) at fewer interactions. Deterministic: depends on the
 * targets alone. Returns 0 or -1 (memory). */
static int split_wide(mpi_tree_targets *T, double wide)
{
    uint32_t n = T->nruns;
    if (n < 2 || !(wide > 0)) return 0;
    double *r = malloc(n * sizeof *r);
    if (!r) return -1;
    memcpy(r, T->radius, n * sizeof *r);
    qsort(r, n, sizeof *r, cmp_double);
    double lim = wide * r[n / 2];
    free(r);
    uint32_t nwide = 0;
    for (uint32_t k = 0; k < n; k++) nwide += T->radius[k] > lim && T->rc[k] > 1;
    if (!nwide || !(lim > 0)) return 0;
    size_t cap = (size_t)n + 64, out = 0;
    uint32_t *nb = malloc(cap * sizeof *nb), *nc = malloc(cap * sizeof *nc);
    if (!nb || !nc) { free(nb); free(nc); return -1; }
    uint32_t stack[2 * 32][2];
    for (uint32_t k = 0; k < n; k++) {
        int sp = 0;
        stack[sp][0] = T->rb[k]; stack[sp][1] = T->rc[k]; sp++;
        while (sp > 0) {
            sp--;
            uint32_t b = stack[sp][0], c = stack[sp][1];
            double centre[3], rad;
            gp_group_sphere(T->x, T->y, T->z, NULL, b, c, centre, &rad);
            if (c > 1 && rad > lim && sp + 2 <= (int)(sizeof stack / sizeof stack[0])) {
                uint32_t h = c / 2;         /* second half first: curve order kept */
                stack[sp][0] = b + h; stack[sp][1] = c - h; sp++;
                stack[sp][0] = b; stack[sp][1] = h; sp++;
                continue;
            }
            if (out == cap) {
                cap *= 2;
                uint32_t *tb = realloc(nb, cap * sizeof *nb);
                if (tb) nb = tb;
                uint32_t *tc = tb ? realloc(nc, cap * sizeof *nc) : NULL;
                if (!tb || !tc) { free(nb); free(nc); return -1; }
                nc = tc;
            }
            nb[out] = b; nc[out] = c; out++;
        }
    }
    double *cr = malloc(4 * out * sizeof *cr);
    if (!cr) { free(nb); free(nc); return -1; }
    free(T->owned[3]); free(T->owned[4]); free(T->owned[5]);
    T->rb = T->owned[4] = nb;
    T->rc = T->owned[5] = nc;
    T->centre = T->owned[3] = cr;
    T->radius = cr + 3 * out;
    T->nruns = (uint32_t)out;
    targets_spheres(T);
    return 0;
}

/* The active particles as targets: the tree's groups when all are active;
 * for a subset, the active part of each tree group (cpu-tree's rule). */
static int targets_forces(const gp_solver *s, mpi_tree_targets *T)
{
    const oct_tree *t = &s->tree;
    const gp_particles *p = &s->base.p;
    memset(T, 0, sizeof *T);
    if (s->none_active) return targets_alloc(T, 0, 0);
    if (!p->active) {
        size_t n = t->n;
        T->rb = t->gbegin;
        T->rc = t->gcount;
        if (targets_alloc(T, n, t->ngroups)) return -1;
        for (size_t u = 0; u < n; u++) {
            T->x[u] = t->x[u]; T->y[u] = t->y[u]; T->z[u] = t->z[u];
            T->self[u] = (int32_t)u;
            T->slot[u] = t->order[u];
        }
    } else {
        size_t na = p->n_active;
        rank_slot *rs = malloc((na ? na : 1) * sizeof *rs);
        T->rb = T->owned[4] = malloc((na ? na : 1) * sizeof *T->rb);
        T->rc = T->owned[5] = malloc((na ? na : 1) * sizeof *T->rc);
        if (!rs || targets_alloc(T, na, (uint32_t)na)) { free(rs); return -1; }
        for (size_t k = 0; k < na; k++) rs[k] = (rank_slot){ t->rank[p->active[k]], (uint32_t)k };
        qsort(rs, na, sizeof *rs, by_rank);
        for (size_t u = 0; u < na; u++) {
            uint32_t i = rs[u].rank;
            T->self[u] = (int32_t)i;
            T->slot[u] = rs[u].k;
            T->x[u] = t->x[i]; T->y[u] = t->y[i]; T->z[u] = t->z[i];
        }
        free(rs);
        uint32_t nr = 0;
        for (size_t u = 0; u < na;) {
            uint32_t g = t->group_of[T->self[u]];
            size_t e = u + 1;
            while (e < na && t->group_of[T->self[e]] == g) e++;
            T->rb[nr] = (uint32_t)u;
            T->rc[nr] = (uint32_t)(e - u);
            nr++;
            u = e;
        }
        T->nruns = nr;
    }
    targets_spheres(T);
    return split_wide(T, gp_param_double(&s->base, P_WIDE));
}

/* Field points as targets: sorted along the tree's curve (in a cube
 * around the points), runs of group_size, loose runs split (cpu-tree's
 * compute_field). */
static int targets_field(const gp_solver *s, size_t m, const double *points, mpi_tree_targets *T)
{
    const oct_tree *t = &s->tree;
    memset(T, 0, sizeof *T);
    if (m == 0) return targets_alloc(T, 0, 0);
    uint64_t *keys = malloc(m * sizeof *keys);
    uint32_t *perm = malloc(m * sizeof *perm);
    const uint32_t G = t->max_group ? t->max_group : 64;
    uint32_t nruns = (uint32_t)((m + G - 1) / G);
    int rc = -1;
    if (keys && perm) {
        /* the points' own cube, not the local tree's: points far outside
         * this rank's particles would otherwise clamp to its faces and form
         * wide groups, whose float-relative coordinates lose precision */
        double lo[3], inv_cell;
        gp_host_root_cube(m, points, points + 1, points + 2, 3, lo, &inv_cell);
        gp_host_make_keys(m, points, points + 1, points + 2, 3, t->keys, lo, inv_cell, keys);
        for (size_t i = 0; i < m; i++) perm[i] = (uint32_t)i;
        if (!gp_host_sort_keys(m, keys, perm) && !targets_alloc(T, m, nruns)) {
            for (size_t i = 0; i < m; i++) {
                const double *q = &points[3 * (size_t)perm[i]];
                T->x[i] = q[0]; T->y[i] = q[1]; T->z[i] = q[2];
                T->self[i] = -1;
                T->slot[i] = perm[i];
            }
            for (uint32_t r = 0; r < nruns; r++) {
                T->rb[r] = r * G;
                T->rc[r] = (uint32_t)(m - T->rb[r] < G ? m - T->rb[r] : G);
            }
            /* the split reallocates the run arrays: hand them over */
            T->owned[4] = T->owned[5] = NULL;
            rc = oct_split_loose_groups(T->x, T->y, T->z, &T->nruns, &T->rb, &T->rc);
            T->owned[4] = T->rb;
            T->owned[5] = T->rc;
            if (!rc) {
                free(T->centre);
                T->centre = T->owned[3] = malloc(4 * (size_t)(T->nruns ? T->nruns : 1) * sizeof *T->centre);
                if (!T->centre) rc = -1;
                else T->radius = T->centre + 3 * (size_t)T->nruns;
            }
        }
    }
    free(keys);
    free(perm);
    if (!rc) targets_spheres(T);
    if (!rc) rc = split_wide(T, gp_param_double(&s->base, P_WIDE));
    return rc;
}

/* ---- one force pass over local tree + LETs -------------------------------- */

static oct_walk_params walk_params(const gp_solver *s, int mac, int prepass)
{
    double eps = gp_param_double(&s->base, P_EPS);
    oct_walk_params w = {
        .mac = mac,
        .quadrupole = !prepass && gp_param_enum(&s->base, P_ORDER) == 1,
        .prec = (oct_precision)gp_param_enum(&s->base, P_PREC),
        .eps2 = eps * eps,
        .G = gp_param_double(&s->base, P_G),
        .alpha = gp_param_double(&s->base, P_DELTA),
    };
    return w;
}

/* FNV-1a over the values that shape forces (all but threads). */
static uint64_t param_hash(const gp_solver *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (int k = 0; k < N_PARAMS; k++) {
        if (k == P_THREADS) continue;
        const gp_param_value *v = &s->base.param[k];
        unsigned char b[sizeof v->d + sizeof v->i + 2 * sizeof(int)];
        memcpy(b, &v->d, sizeof v->d);
        memcpy(b + sizeof v->d, &v->i, sizeof v->i);
        memcpy(b + sizeof v->d + sizeof v->i, &v->b, sizeof v->b);
        memcpy(b + sizeof v->d + sizeof v->i + sizeof v->b, &v->word, sizeof v->word);
        for (size_t j = 0; j < sizeof b; j++) h = (h ^ b[j]) * 1099511628211ULL;
    }
    return h;
}

/* The box around the group spheres of runs [r0, r1), padded outward by
 * a hair so that rounding in a sphere never pokes out. */
static void runs_box(const mpi_tree_targets *T, uint32_t r0, uint32_t r1, mpi_tree_box *b)
{
    for (int a = 0; a < 3; a++) { b->lo[a] = HUGE_VAL; b->hi[a] = -HUGE_VAL; }
    for (uint32_t r = r0; r < r1; r++)
        for (int a = 0; a < 3; a++) {
            double c = T->centre[3 * r + a], rg = T->radius[r];
            if (c - rg < b->lo[a]) b->lo[a] = c - rg;
            if (c + rg > b->hi[a]) b->hi[a] = c + rg;
        }
    for (int a = 0; a < 3; a++) {
        double pad = 1e-12 * (b->hi[a] - b->lo[a] + fabs(b->lo[a]) + fabs(b->hi[a]));
        b->lo[a] -= pad;
        b->hi[a] += pad;
    }
}

/* Splits node k's run of groups in two halves: nodes n (left), n + 1. */
static void split_node(const mpi_tree_targets *T, mpi_tree_box *b, uint32_t *r0, uint32_t *r1, int k, int n)
{
    uint32_t mid = r0[k] + (r1[k] - r0[k]) / 2;
    for (int c = 0; c < 2; c++) {
        mpi_tree_box x = b[0];
        x.left = x.right = -1;
        x.parent = k;
        b[n + c] = x;
        r0[n + c] = c ? mid : r0[k];
        r1[n + c] = c ? r1[k] : mid;
        runs_box(T, r0[n + c], r1[n + c], &b[n + c]);
    }
    b[k].left = n;
    b[k].right = n + 1;
}

/* This rank's domain for the pass (let.h): a binary tree of boxes over
 * its groups in curve order, splitting the widest run first (width times
 * its number of groups), until it has
 * let_boxes leaves (or no run of two groups is left). Returns the number
 * of nodes written to out (room for 2 * let_boxes). */
static int my_boxes(const gp_solver *s, const mpi_tree_targets *T, int mac, const oct_walk_params *wp,
                    mpi_tree_box *out, uint32_t *r0, uint32_t *r1)
{
    mpi_tree_box b = { .has = T->nruns > 0, .param_hash = param_hash(s), .gfac = HUGE_VAL,
                 .left = -1, .right = -1, .parent = -1 };
    double amin = HUGE_VAL;
    for (uint32_t r = 0; r < T->nruns && T->amin; r++) amin = T->amin[r] < amin ? T->amin[r] : amin;
    if (mac == GP_MAC_ACCELERATION) {
        double alpha_a = wp->alpha * amin;
        b.gfac = alpha_a > 0 ? sqrt(sqrt(fabs(wp->G) / alpha_a)) * (1 + 1e-12) : HUGE_VAL;
    }
    out[0] = b;
    if (!b.has) return 1;
    runs_box(T, 0, T->nruns, &out[0]);
    r0[0] = 0;
    r1[0] = T->nruns;
    int nodes = 1, leaves = 1, want = (int)gp_param_int(&s->base, P_BOXES);
    while (leaves < want) {
        /* the leaf with the largest width x groups that still holds two
         * (width alone spends the budget on the sparse outskirts; the
         * LET's size is decided where the groups are many) */
        int pick = -1;
        double wmax = -1;
        for (int k = 0; k < nodes; k++) {
            if (out[k].left >= 0 || r1[k] - r0[k] < 2) continue;
            double w = 0;
            for (int a = 0; a < 3; a++) w = fmax(w, out[k].hi[a] - out[k].lo[a]);
            w *= (double)(r1[k] - r0[k]);
            if (w > wmax) { wmax = w; pick = k; }
        }
        if (pick < 0) break;
        split_node(T, out, r0, r1, pick, nodes);
        nodes += 2;
        leaves++;
    }
    return nodes;
}

/* Walks every run over the local tree and then the LETs lets[0..nlet),
 * adding in that order; results to acc/pot by slot. lets_only: the LETs
 * alone (engine = cuda-tree, whose local part is added afterwards). */
static int walk_all(gp_solver *s, const oct_walk_params *wp, const mpi_tree_targets *T,
                    const oct_tree *lets, int nlet, int lets_only, double *acc, double *pot,
                    uint64_t *pp_out, uint64_t *pc_out)
{
    const uint32_t G = s->tree.max_group ? s->tree.max_group : 64;
    uint32_t maxrun = 0;
    for (uint32_t r = 0; r < T->nruns; r++) maxrun = T->rc[r] > maxrun ? T->rc[r] : maxrun;
    const uint32_t W = maxrun > G ? maxrun : G;
    oct_sources local = oct_tree_sources(&s->tree);
    oct_sources *remote = malloc((size_t)(nlet ? nlet : 1) * sizeof *remote);
    if (!remote) return -1;
    for (int k = 0; k < nlet; k++) remote[k] = oct_tree_sources(&lets[k]);
    uint64_t pp = 0, pc = 0;
    int failed = 0;
#pragma omp parallel num_threads(thread_count(s)) reduction(+ : pp, pc) reduction(| : failed)
    {
        oct_workspace *ws = oct_workspace_new(W);
        double *buf = malloc(8 * (size_t)W * sizeof *buf);
        int ok_mem = ws && buf;
        if (!ok_mem) failed = 1;
#pragma omp for schedule(dynamic, 1)
        for (uint32_t r = 0; r < T->nruns; r++) {
            if (!ok_mem) continue;
            uint32_t b = T->rb[r], nt = T->rc[r];
            double *sum = buf + 4 * (size_t)W;
            oct_group grp = { .n = nt, .x = T->x + b, .y = T->y + b, .z = T->z + b,
                             .self = T->self + b, .amin = T->amin ? T->amin[r] : 0,
                             .radius = T->radius[r], .ax = buf, .ay = buf + W, .az = buf + 2 * W,
                             .pot = buf + 3 * W };
            memcpy(grp.centre, &T->centre[3 * r], sizeof grp.centre);
            if (lets_only) {   /* engine = cuda-tree adds the local part later */
                for (uint32_t j = 0; j < 4 * W; j++) sum[j] = 0;
            } else {
                oct_walk_group(&local, wp, ws, &grp, &pp, &pc);
                for (uint32_t j = 0; j < nt; j++) {
                    sum[j] = grp.ax[j]; sum[W + j] = grp.ay[j];
                    sum[2 * W + j] = grp.az[j]; sum[3 * W + j] = grp.pot[j];
                }
            }
            for (int k = 0; k < nlet; k++) {
                if (remote[k].n == 0) continue;
                oct_walk_group(&remote[k], wp, ws, &grp, &pp, &pc);
                for (uint32_t j = 0; j < nt; j++) {
                    sum[j] += grp.ax[j]; sum[W + j] += grp.ay[j];
                    sum[2 * W + j] += grp.az[j]; sum[3 * W + j] += grp.pot[j];
                }
            }
            for (uint32_t j = 0; j < nt; j++) {
                size_t o = T->slot[b + j];
                acc[3 * o] = sum[j]; acc[3 * o + 1] = sum[W + j]; acc[3 * o + 2] = sum[2 * W + j];
                if (pot) pot[o] = sum[3 * W + j];
            }
        }
        oct_workspace_free(ws);
        free(buf);
    }
    free(remote);
    *pp_out += pp;
    *pc_out += pc;
    return failed ? -1 : 0;
}

/* Levels of refinement per round: each round splits the pieces that lie
 * near a neighbour three times (halving their width, about), and the
 * next round tests them against the neighbour's pieces of this one, so
 * the refinement follows the boundary as the neighbour describes it, not
 * as its coarse boxes (which can reach deep into this domain) do. */
#define MT_REFINE_LEVELS 3

/* A piece is refined for a neighbour when it lies within this fraction of
 * its width of the neighbour's pieces. The sender's cells that a finer
 * box lets it close are the small ones right at the boundary, so pieces
 * that nearly touch the neighbour's carry nearly all of the gain: measured
 * (2^20 particles, P = 2..16), 0.25 sends 30% fewer box bytes than 1 for
 * LETs at most 0.07% larger; 0.1 saves 8% more for LETs 0.15% larger;
 * 0 (no refinement) doubles the LETs. */
#define MT_NEAR_REACH 0.25

/* Is box b within MT_NEAR_REACH of its width of a leaf of domain d (as
 * its rank has described it so far)? */
static int near_domain(const mpi_tree_box *b, const mpi_tree_domain *d)
{
    double w = 0;
    for (int k = 0; k < 3; k++) w = fmax(w, b->hi[k] - b->lo[k]);
    w *= MT_NEAR_REACH;
    return mpi_tree_box_near_tree(b, w * w, d->b, d->n);
}

/* This rank's domain tree as one neighbour will see it: the coarse tree,
 * refined where it lies near that neighbour; the runs of groups below each
 * node; the pieces still to refine. Grows as needed. */
typedef struct own_tree {
    mpi_tree_box *b;
    uint32_t *r0, *r1;
    int n, cap;
    int *front, *next;
    int nfront, nnext;
} own_tree;

static void own_free(own_tree *t)
{
    free(t->b); free(t->r0); free(t->r1); free(t->front); free(t->next);
    memset(t, 0, sizeof *t);
}

static int own_reserve(own_tree *t, int need)
{
    if (need <= t->cap) return 0;
    int cap = t->cap ? t->cap : 64;
    while (cap < need) cap *= 2;
    mpi_tree_box *b = realloc(t->b, (size_t)cap * sizeof *b);
    if (b) t->b = b;
    uint32_t *r0 = b ? realloc(t->r0, (size_t)cap * sizeof *r0) : NULL;
    if (r0) t->r0 = r0;
    uint32_t *r1 = r0 ? realloc(t->r1, (size_t)cap * sizeof *r1) : NULL;
    if (r1) t->r1 = r1;
    int *f = r1 ? realloc(t->front, (size_t)cap * sizeof *f) : NULL;
    if (f) t->front = f;
    int *x = f ? realloc(t->next, (size_t)cap * sizeof *x) : NULL;
    if (x) t->next = x;
    if (!x) return -1;
    t->cap = cap;
    return 0;
}

/* One refinement round for one neighbour (domain d): each frontier node
 * that still lies near d is split, and so are its pieces while they lie
 * near it, MT_REFINE_LEVELS levels down (or to single groups); the pieces
 * at that depth that still lie near it are the next round's frontier.
 * Returns 0, or -1 when out of memory. */
static int refine_round(const mpi_tree_targets *T, own_tree *t, const mpi_tree_domain *d)
{
    const int levels = MT_REFINE_LEVELS;
    t->nnext = 0;
    for (int f = 0; f < t->nfront; f++) {
        int k = t->front[f];
        if (!near_domain(&t->b[k], d)) continue;
        int stack[2 * MT_REFINE_LEVELS + 4][2], sp = 0;
        stack[sp][0] = k; stack[sp][1] = 0; sp++;
        while (sp > 0) {
            sp--;
            int q = stack[sp][0], depth = stack[sp][1];
            if (t->r1[q] - t->r0[q] < 2) continue;
            if (own_reserve(t, t->n + 2)) return -1;
            int n = t->n;
            split_node(T, t->b, t->r0, t->r1, q, n);
            t->n += 2;
            for (int c = 1; c >= 0; c--) {
                int m = n + c;
                if (t->r1[m] - t->r0[m] < 2 || !near_domain(&t->b[m], d)) continue;
                if (depth + 1 < levels) {
                    stack[sp][0] = m; stack[sp][1] = depth + 1; sp++;
                } else {
                    t->next[t->nnext++] = m;
                }
            }
        }
    }
    int *x = t->front; t->front = t->next; t->next = x;
    t->nfront = t->nnext;
    return 0;
}

/* Every rank's domain tree (boxes.h) as this rank needs it, decoded into
 * dom[0..P): first the coarse trees, to every rank (MPI_Allgatherv);
 * then refinement rounds, point to point: for each neighbour (a rank one
 * of whose coarse leaves lies near one of this rank's), the pieces of
 * this domain that lie near that neighbour's, at the scale of the
 * neighbour's pieces of the previous round, until no rank has a piece
 * left to refine. Each neighbour gets only the boundary it faces, so the
 * boxes a rank sends grow with its surface, like the LETs, not with its
 * volume or with its number of neighbours times its surface. *bytes gets
 * what this rank sent, *rounds the number of rounds, *nodes the largest
 * tree it sent. Collective. */
static gp_status exchange_domains(gp_solver *s, const char *fn, const mpi_tree_targets *T,
                                  const mpi_tree_box *mine, int nmine, const uint32_t *r0,
                                  const uint32_t *r1, mpi_tree_domain *dom, uint64_t *bytes,
                                  int *rounds, int *nodes)
{
    const int P = s->size;
    gp_status st = GP_OK;
    *bytes = 0;
    *rounds = 0;
    *nodes = nmine;
    const mpi_tree_box_head head = mpi_tree_box_head_make(mine, nmine);
    size_t mybytes = sizeof head + (size_t)nmine * sizeof(mpi_tree_wire_box);
    char *buf = malloc(mybytes), *all = NULL;
    int *cnt = malloc((size_t)P * sizeof *cnt), *disp = malloc((size_t)P * sizeof *disp);
    own_tree *own = calloc((size_t)P, sizeof *own);
    mpi_tree_buf *tsend = calloc((size_t)P, sizeof *tsend), *trecv = calloc((size_t)P, sizeof *trecv);
    if (!buf || !cnt || !disp || !own || !tsend || !trecv || mybytes > INT32_MAX)
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for %d domain boxes; lower let_boxes", fn, nmine);
    if ((st = agree(s, st)) != GP_OK) goto out;
    memcpy(buf, &head, sizeof head);
    mpi_tree_box_encode(&head, mine, nmine, (mpi_tree_wire_box *)(buf + sizeof head));
    int mb = (int)mybytes;
    MPI_Allgather(&mb, 1, MPI_INT, cnt, 1, MPI_INT, s->comm);
    long long total = 0;
    for (int r = 0; r < P; r++) { disp[r] = (int)total; total += cnt[r]; }
    all = total < INT32_MAX ? malloc((size_t)total) : NULL;
    if (!all)
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for %lld bytes of domain boxes; lower let_boxes", fn, total);
    if ((st = agree(s, st)) != GP_OK) goto out;
    MPI_Allgatherv(buf, mb, MPI_BYTE, all, cnt, disp, MPI_BYTE, s->comm);
    *bytes += (uint64_t)mybytes * (uint64_t)(P - 1);
    for (int r = 0; r < P && st == GP_OK; r++) {
        int rc = -2;
        if ((size_t)cnt[r] >= sizeof(mpi_tree_box_head)) {
            memcpy(&dom[r].head, all + disp[r], sizeof dom[r].head);
            int nn = dom[r].head.nnodes;
            if (nn >= 1 && (size_t)cnt[r] == sizeof(mpi_tree_box_head) + (size_t)nn * sizeof(mpi_tree_wire_box))
                rc = mpi_tree_domain_append(&dom[r], (const mpi_tree_wire_box *)(all + disp[r] + sizeof(mpi_tree_box_head)), nn);
        }
        if (rc == -1)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the domain boxes", fn);
        else if (rc == -2)
            st = gp_fail(&s->base, GP_ERR_INTERNAL,
                         "%s: the domain boxes from rank %d are malformed; please report this", fn, r);
    }
    if ((st = agree(s, st)) != GP_OK) goto out;
    for (int r = 1; r < P; r++)
        if (dom[r].head.param_hash != dom[0].head.param_hash) {
            /* every rank sees the same table, so every rank says the same */
            st = gp_fail(&s->base, GP_ERR_BAD_STATE,
                         "%s: the ranks' parameters differ (rank %d's from rank 0's); set the "
                         "same values on every rank", fn, r);
            goto out;
        }
    /* each neighbour's first frontier: the coarse leaves near its domain */
    for (int q = 0; q < P && st == GP_OK && mine[0].has; q++) {
        if (q == s->rank) continue;
        own_tree *t = &own[q];
        for (int k = 0; k < nmine && st == GP_OK; k++) {
            if (mine[k].left >= 0 || r1[k] - r0[k] < 2 || !near_domain(&mine[k], &dom[q])) continue;
            if (t->n == 0) {       /* the first piece near q: q gets a tree of its own */
                if (own_reserve(t, nmine)) {
                    st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                    break;
                }
                memcpy(t->b, mine, (size_t)nmine * sizeof *mine);
                memcpy(t->r0, r0, (size_t)nmine * sizeof *r0);
                memcpy(t->r1, r1, (size_t)nmine * sizeof *r1);
                t->n = nmine;
            }
            t->front[t->nfront++] = k;
        }
    }
    if ((st = agree(s, st)) != GP_OK) goto out;
    for (;;) {
        int go = 0, any = 0;
        for (int q = 0; q < P; q++) go |= own[q].nfront > 0;
        MPI_Allreduce(&go, &any, 1, MPI_INT, MPI_MAX, s->comm);
        if (!any) break;
        (*rounds)++;
        /* refine each neighbour's tree, and send it the nodes this round added */
        for (int q = 0; q < P && st == GP_OK; q++) {
            own_tree *t = &own[q];
            if (!t->nfront) continue;
            int start = t->n;
            if (refine_round(T, t, &dom[q])) {
                st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                break;
            }
            size_t add = (size_t)(t->n - start) * sizeof(mpi_tree_wire_box);
            if (!add) continue;
            tsend[q].p = malloc(add);
            if (!tsend[q].p) {
                st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for domain boxes", fn);
                break;
            }
            mpi_tree_box_encode(&head, t->b + start, t->n - start, (mpi_tree_wire_box *)tsend[q].p);
            tsend[q].n = tsend[q].cap = add;
            *bytes += add;
            if (t->n > *nodes) *nodes = t->n;
        }
        if ((st = agree(s, st)) != GP_OK) goto out;
        st = mpi_tree_exchange(&s->base, s->comm, P, tsend, trecv);
        for (int q = 0; q < P; q++) mpi_tree_buf_free(&tsend[q]);
        if (st != GP_OK) goto out;
        for (int r = 0; r < P && st == GP_OK; r++) {
            if (!trecv[r].n) continue;
            int rc = trecv[r].n % sizeof(mpi_tree_wire_box) || r == s->rank
                         ? -2
                         : mpi_tree_domain_append(&dom[r], (const mpi_tree_wire_box *)trecv[r].p,
                                            (int)(trecv[r].n / sizeof(mpi_tree_wire_box)));
            if (rc == -1)
                st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the domain boxes", fn);
            else if (rc == -2)
                st = gp_fail(&s->base, GP_ERR_INTERNAL,
                             "%s: the domain boxes from rank %d are malformed; please report this",
                             fn, r);
        }
        for (int r = 0; r < P; r++) mpi_tree_buf_free(&trecv[r]);
        if ((st = agree(s, st)) != GP_OK) goto out;
    }
out:
    for (int r = 0; r < P; r++) {
        if (tsend) mpi_tree_buf_free(&tsend[r]);
        if (trecv) mpi_tree_buf_free(&trecv[r]);
        if (own) own_free(&own[r]);
    }
    free(buf); free(all); free(cnt); free(disp); free(own); free(tsend); free(trecv);
    return st;
}

/* One collective pass: boxes, LETs, walks. */
static gp_status force_pass(gp_solver *s, const char *fn, int mac, double theta, int prepass,
                            const mpi_tree_targets *T, int lets_only, double *acc, double *pot,
                            uint64_t *pp, uint64_t *pc)
{
    const int P = s->size;
    gp_status st = GP_OK;
    oct_tree_prepare_cells(&s->tree, mac, theta);
    oct_walk_params wp = walk_params(s, mac, prepass);
    /* the coarse tree; exchange_domains refines it per neighbour */
    const int maxbox = 2 * (int)gp_param_int(&s->base, P_BOXES) + 2;
    mpi_tree_box *mine = malloc((size_t)maxbox * sizeof *mine);
    uint32_t *r0 = malloc((size_t)maxbox * sizeof *r0), *r1 = malloc((size_t)maxbox * sizeof *r1);
    int nmine = mine && r0 && r1 ? my_boxes(s, T, mac, &wp, mine, r0, r1) : 0;
    mpi_tree_domain *dom = calloc((size_t)P, sizeof *dom);
    mpi_tree_buf *send = calloc((size_t)P, sizeof *send), *recv = calloc((size_t)P, sizeof *recv);
    oct_tree *lets = calloc((size_t)(P > 1 ? P - 1 : 1), sizeof *lets);
    if (!mine || !r0 || !r1 || !dom || !send || !recv || !lets)
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for the exchange tables", fn);
    if ((st = agree(s, st)) != GP_OK) goto out;
    uint64_t box_bytes = 0;
    int rounds = 0, nodes = nmine;
    st = exchange_domains(s, fn, T, mine, nmine, r0, r1, dom, &box_bytes, &rounds, &nodes);
    if (st != GP_OK) goto out;
    double t0 = gp_wtime();
    uint64_t sent = 0, got = 0, sent_cells = 0, sent_parts = 0;
    for (int r = 0; r < P && st == GP_OK; r++) {
        if (r == s->rank) continue;
        uint32_t nc, np;
        /* rank r's domain: refined where it faces another, when r counted
         * this rank as a neighbour; else its coarse tree */
        if (mpi_tree_let_pack(&s->tree, mac, dom[r].b, dom[r].n, &send[r], &nc, &np))
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for the local essential tree of rank %d; use more "
                         "ranks or a smaller theta", fn, r);
        sent += send[r].n;
        sent_cells += nc;
        sent_parts += np;
    }
    if ((st = agree(s, st)) != GP_OK) goto out;
    if ((st = mpi_tree_exchange(&s->base, s->comm, P, send, recv)) != GP_OK) goto out;
    int nlet = 0;
    for (int r = 0; r < P && st == GP_OK; r++) {
        if (r == s->rank) continue;
        got += recv[r].n;
        int rc = mpi_tree_let_unpack(recv[r].p, recv[r].n, &lets[nlet]);
        if (rc == -1)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for the local essential tree from rank %d", fn, r);
        else if (rc == -2)
            st = gp_fail(&s->base, GP_ERR_INTERNAL,
                         "%s: the local essential tree from rank %d is malformed; please "
                         "report this", fn, r);
        else {
            oct_tree_prepare_cells(&lets[nlet], mac, theta);
            nlet++;
        }
        mpi_tree_buf_free(&recv[r]);
    }
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    s->let_sent = sent;
    s->let_recv = got;
    s->let_sent_total += sent;
    s->let_recv_total += got;
    if ((st = agree(s, st)) != GP_OK) goto out;
    if (walk_all(s, &wp, T, lets, nlet, lets_only, acc, pot, pp, pc))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for the walk buffers; free memory or use fewer threads", fn);
    st = agree(s, st);
    /* the numbers bench/mpi-tree-scaling and tests/mpi-accuracy read: LET
     * bytes this rank sent and received, its domain's nodes and the bytes
     * of domain boxes it sent (the coarse tree to every rank, the
     * refinement rounds to its neighbours) */
    gp_log(&s->base, GP_LOG_DEBUG,
           "%s: LET bytes sent %llu received %llu; domain %d boxes, %llu bytes; sent %llu cells "
           "%llu particles (rank %d of %d); %d refinement rounds",
           fn, (unsigned long long)sent, (unsigned long long)got, nodes,
           (unsigned long long)box_bytes, (unsigned long long)sent_cells,
           (unsigned long long)sent_parts, s->rank, P, rounds);
out:
    for (int r = 0; r < P - 1 && lets; r++) oct_tree_free(&lets[r]);
    for (int r = 0; r < P; r++) {
        if (send) mpi_tree_buf_free(&send[r]);
        if (recv) mpi_tree_buf_free(&recv[r]);
        if (dom) mpi_tree_domain_free(&dom[r]);
    }
    free(mine); free(r0); free(r1); free(dom);
    free(send); free(recv); free(lets);
    return st;
}

/* ---- engine = cuda-tree (engine_cuda.h) ----------------------------------- */

/* cuda-tree's acceleration MAC would judge cells by this rank's local |a|
 * only, not the global |a| the LET walk uses: refused rather than mixed. */
static gp_status engine_check_mac(gp_solver *s, const char *fn)
{
    if (!s->engine || gp_param_enum(&s->base, P_MAC) != GP_MAC_ACCELERATION) return GP_OK;
    return gp_fail(&s->base, GP_ERR_UNSUPPORTED,
                   "%s: mac = acceleration is not available with engine = cuda-tree (cuda-tree "
                   "would open cells by this rank's local |a| only); use mac = bmax, bh or "
                   "multipole, or engine = cpu-tree", fn);
}

/* The local part of a pass from the cuda-tree sub-instance: forces on the
 * active particles (points NULL) or the field at m points, into arrays
 * lacc (3 per target, in output order) and lpot (when want_pot). It runs
 * on the engine's worker thread while the calling thread exchanges and
 * walks the LETs (Bonsai overlaps the same two), so it touches nothing the
 * pass writes: its sentence goes to job->why, not to the instance. */
typedef struct engine_job {
    gp_solver *s;
    size_t m, nt;
    const double *points;
    double *lacc, *lpot;
    gp_status st;
    uint64_t pp, pc;           /* cuda-tree's interactions in this call */
    int running;
    char why[GP_ERROR_LEN];
} engine_job;

static void engine_local(void *arg)
{
    engine_job *j = arg;
    gp_solver *s = j->s;
    const gp_particles *p = &s->base.p;
    if (j->nt == 0 || p->n == 0) return;          /* nothing here: zeros */
    double *tmp;
    const double *mass = source_masses(s, &tmp);
    if (!mass) {
        j->st = GP_ERR_OUT_OF_MEMORY;
        snprintf(j->why, sizeof j->why, "no memory for the source masses; free memory");
        return;
    }
    double total = 0;
    for (size_t i = 0; i < p->n; i++) total += mass[i];
    int rc = 0;
    uint64_t pp0, pc0, pp1, pc1;
    mpi_tree_engine_interactions(s->engine, &pp0, &pc0);
    if (total > 0)
        rc = j->points ? mpi_tree_engine_field(s->engine, &s->base, mass, j->m, j->points, j->lacc, j->lpot,
                                   j->why, sizeof j->why)
                       : mpi_tree_engine_forces(s->engine, &s->base, mass, j->lacc, j->lpot, j->why,
                                    sizeof j->why);
    free(tmp);
    if (rc) j->st = GP_ERR_DEVICE;
    mpi_tree_engine_interactions(s->engine, &pp1, &pc1);
    j->pp = pp1 - pp0;
    j->pc = pc1 - pc0;
}

/* Starts the local part (engine = cuda-tree; else does nothing) on the
 * engine's worker thread (or here and now when it has none). */
static void engine_start(gp_solver *s, engine_job *j, size_t m, const double *points, int want_pot)
{
    const gp_particles *p = &s->base.p;
    memset(j, 0, sizeof *j);
    if (!s->engine) return;
    j->s = s;
    j->m = m;
    j->points = points;
    j->nt = points ? m : (s->none_active ? 0 : p->n_active);
    j->lacc = calloc(3 * (j->nt ? j->nt : 1), sizeof *j->lacc);
    j->lpot = want_pot ? calloc(j->nt ? j->nt : 1, sizeof *j->lpot) : NULL;
    if (!j->lacc || (want_pot && !j->lpot)) {
        j->st = GP_ERR_OUT_OF_MEMORY;
        snprintf(j->why, sizeof j->why, "no memory for the local engine's %zu results; free memory",
                 j->nt);
        return;
    }
    j->running = 1;
    mpi_tree_engine_run(s->engine, engine_local, j);
}

/* Waits for the local part, agrees on it, and adds it in front of the LET
 * sums the pass left in acc/pot: local + (LETs in rank order), a fixed
 * order, so results are deterministic for a fixed P and distribution. */
static gp_status engine_finish(gp_solver *s, const char *fn, engine_job *j, gp_status pass,
                               double *acc, double *pot)
{
    if (!s->engine) return pass;
    if (j->running) mpi_tree_engine_wait(s->engine);
    gp_status st = pass;
    if (pass == GP_OK) {
        st = j->st == GP_OK ? GP_OK : gp_fail(&s->base, j->st, "%s: %s", fn, j->why);
        st = agree(s, st);
    }
    if (st == GP_OK) {
        for (size_t k = 0; k < j->nt; k++) {
            for (int d = 0; d < 3; d++) acc[3 * k + d] = j->lacc[3 * k + d] + acc[3 * k + d];
            if (pot) pot[k] = (j->lpot ? j->lpot[k] : 0) + pot[k];
        }
        s->base.stats.pp_interactions += j->pp;
        s->base.stats.pc_interactions += j->pc;
    }
    free(j->lacc);
    free(j->lpot);
    return st;
}

/* Opens (engine = cuda-tree) or closes (cpu-tree) the sub-instance so that
 * it matches the engine parameter. Collective: on failure every rank
 * fails with the lowest failing rank's sentence, and none keeps one. */
static gp_status engine_apply(gp_solver *s)
{
    int want = gp_param_enum(&s->base, P_ENGINE) == 1;
    if (!want) {
        mpi_tree_engine_close(s->engine);
        s->engine = NULL;
        return GP_OK;
    }
    mpi_tree_engine *e = NULL;
    char why[GP_ERROR_LEN];
    gp_status st = mpi_tree_engine_open(&e, s->engine_plugin, s->base.device, why, sizeof why)
                       ? gp_fail(&s->base, GP_ERR_DEVICE, "%s", why) : GP_OK;
    if ((st = agree(s, st)) != GP_OK) {
        mpi_tree_engine_close(e);
        return st;
    }
    mpi_tree_engine_close(s->engine);
    s->engine = e;
    return GP_OK;
}

/* ---- the ABI entry points ----------------------------------------------- */

static const gp_param_info *mpi_tree_describe_params(size_t *count)
{
    if (count) *count = N_PARAMS;
    return params;
}

static gp_status mpi_tree_get_param(gp_solver *s, const char *name, char *buf, size_t buflen)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_param");
    if (name && !strcmp(name, "engine_plugin")) {
        if (!buf || buflen <= strlen(s->engine_plugin))
            return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                           "get_param('engine_plugin') needs a buffer of %zu bytes; pass a "
                           "larger one", strlen(s->engine_plugin) + 1);
        memcpy(buf, s->engine_plugin, strlen(s->engine_plugin) + 1);
        return GP_OK;
    }
    return gp_base_get_param(&s->base, name, buf, buflen);
}

static gp_status mpi_tree_get_stats(gp_solver *s, gp_stats *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_stats");
    return gp_base_get_stats(&s->base, out);
}

static const char *mpi_tree_last_error(const gp_solver *s)
{
    return gp_base_last_error(s ? &s->base : NULL);
}

static void mpi_tree_finalize(gp_solver *s)
{
    if (!s) return;
    mpi_tree_engine_close(s->engine);
    oct_tree_free(&s->tree);
    free(s->aold);
    free(s->in_src);
    int done = 0;
    MPI_Finalized(&done);
    if (!done && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    gp_base_free(&s->base);
    free(s);
}

static gp_status mpi_tree_init(gp_solver **out, const gp_init_args *args)
{
    char why[512];
    gp_init_clear_error();
    if (out) *out = NULL;
    if (mpi_tree_mpi_start(why, sizeof why))
        return gp_init_fail(args, PLUGIN_NAME, GP_ERR_UNSUPPORTED, "%s", why);
    MPI_Comm parent = MPI_COMM_WORLD;
    if (args && args->struct_size >= offsetof(gp_init_args, mpi_comm) + sizeof args->mpi_comm &&
        args->mpi_comm)
        parent = *(const MPI_Comm *)args->mpi_comm;
    /* engine_plugin is not in the parameter table (a string): taken out
     * of the list here, applied below */
    gp_init_args own;
    const gp_init_args *use = args;
    gp_param *rest = NULL;
    const char *plugin_path = NULL;
    gp_status st = GP_OK;
    if (args && args->struct_size >= GP_INIT_ARGS_V1_SIZE && args->n_params && args->params) {
        memset(&own, 0, sizeof own);
        memcpy(&own, args, args->struct_size < sizeof own ? args->struct_size : sizeof own);
        rest = malloc(args->n_params * sizeof *rest);
        if (!rest)
            st = gp_init_fail(args, PLUGIN_NAME, GP_ERR_OUT_OF_MEMORY, "init: no memory");
        size_t k = 0;
        for (size_t j = 0; rest && j < args->n_params; j++) {
            if (args->params[j].name && !strcmp(args->params[j].name, "engine_plugin"))
                plugin_path = args->params[j].value;
            else
                rest[k++] = args->params[j];
        }
        own.params = rest;
        own.n_params = k;
        use = &own;
    }
    gp_solver *s = NULL;
    if (st == GP_OK)
        st = out ? gp_solver_create(&s, sizeof *s, PLUGIN_NAME, use, params, N_PARAMS)
                 : gp_init_fail(args, PLUGIN_NAME, GP_ERR_INVALID_ARGUMENT,
                                "init was given a NULL out pointer; pass the address of a "
                                "gp_solver *");
    free(rest);
    if (st == GP_OK && plugin_path) {
        if (strlen(plugin_path) >= sizeof s->engine_plugin)
            st = gp_init_fail(args, PLUGIN_NAME, GP_ERR_INVALID_ARGUMENT,
                              "init: engine_plugin needs a path of fewer than %zu bytes",
                              sizeof s->engine_plugin);
        else
            snprintf(s->engine_plugin, sizeof s->engine_plugin, "%s", plugin_path);
    }
    st = mpi_tree_agree_init(args, parent, st, PLUGIN_NAME);
    if (st != GP_OK) {
        if (s) { s->comm = MPI_COMM_NULL; mpi_tree_finalize(s); }
        if (out) *out = NULL;
        return st;
    }
    MPI_Comm_dup(parent, &s->comm);
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    if (gp_param_enum(&s->base, P_ENGINE) == 1 && (st = engine_apply(s)) != GP_OK) {
        st = gp_init_fail(args, PLUGIN_NAME, st, "%s", s->base.error);
        mpi_tree_finalize(s);
        return st;
    }
    *out = s;
    return GP_OK;
}

/* engine_plugin = PATH: a string, which the parameter table cannot hold,
 * so it is kept here; it takes effect at the next engine = cuda-tree (or
 * at once, when that engine is running). */
static gp_status set_engine_plugin(gp_solver *s, const char *value)
{
    gp_status st = GP_OK;
    if (!value || strlen(value) >= sizeof s->engine_plugin)
        st = gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                     "set_param('engine_plugin') needs a path of fewer than %zu bytes; pass "
                     "the path of gravplug-cuda-tree.so", sizeof s->engine_plugin);
    if ((st = agree(s, st)) != GP_OK) return st;
    char keep[sizeof s->engine_plugin];
    memcpy(keep, s->engine_plugin, sizeof keep);
    snprintf(s->engine_plugin, sizeof s->engine_plugin, "%s", value);
    if (s->engine && (st = engine_apply(s)) != GP_OK) memcpy(s->engine_plugin, keep, sizeof keep);
    return st;
}

/* set_param is collective: the ranks must hold the same values. */
static gp_status mpi_tree_set_param(gp_solver *s, const char *name, const char *value)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_param");
    if (name && !strcmp(name, "engine_plugin")) return set_engine_plugin(s, value);
    gp_param_value keep[GP_MAX_PARAMS];
    memcpy(keep, s->base.param, sizeof keep);
    gp_status st = agree(s, gp_base_set_param(&s->base, name, value));
    if (st == GP_OK && name && !strcmp(name, "engine") &&
        (gp_param_enum(&s->base, P_ENGINE) == 1) != (s->engine != NULL))
        st = engine_apply(s);
    if (st != GP_OK) memcpy(s->base.param, keep, sizeof keep);
    return st;
}

/* An empty rank's particle store: set, with n = 0, both subsets cleared. */
static gp_status particles_empty(gp_base *base)
{
    gp_particles *p = &base->p;
    free(p->pos); free(p->mass); free(p->active); free(p->src);
    free(p->x0); free(p->vel); free(p->acc); free(p->t); free(p->stated);
    p->pos = p->mass = p->x0 = p->vel = p->acc = p->t = NULL;
    p->stated = NULL;
    p->active = p->src = NULL;
    p->n = p->n_active = p->n_src = p->n_stated = 0;
    p->have = 1;
    return GP_OK;
}

static gp_status mpi_tree_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_particles");
    /* n = 0 is how a rank without particles takes part; on every rank it
     * is the ABI's rejection */
    unsigned long long mine = n, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, s->comm);
    gp_status st = n == 0 && total > 0 ? GP_OK : gp_check_particles(&s->base, n, pos, mass);
    if (st == GP_OK && n > (size_t)INT32_MAX)
        st = gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                     "set_particles: %zu particles on one rank is more than the limit of %d "
                     "(31-bit indices); use more ranks", n, INT32_MAX);
    if ((st = agree(s, st)) != GP_OK) return st;
    /* build aside: a failure on any rank leaves every rank as it was */
    double *aold = malloc((n ? n : 1) * sizeof *aold);
    oct_tree keep = s->tree;
    int had = s->have_tree;
    uint32_t had_group = s->built_group, had_leaf = s->built_leaf;
    int had_keys = s->built_keys, had_moved = s->moved, had_dirty = s->dirty;
    uint64_t had_calls = s->calls_since_build;
    double had_excess = s->excess;
    uint8_t *keep_src = s->in_src;
    s->in_src = NULL;
    memset(&s->tree, 0, sizeof s->tree);
    gp_particles old = s->base.p;
    gp_particles tmp = { .have = 1, .n = n, .pos = (double *)pos, .mass = (double *)mass,
                         .n_active = n };
    s->base.p = tmp;           /* build_tree reads the particles from base.p */
    st = aold ? build_tree(s)
              : gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                        "set_particles: no memory for %zu particles; use more ranks", n);
    s->base.p = old;
    if (st == GP_OK) st = n ? gp_particles_set(&s->base, n, pos, mass) : particles_empty(&s->base);
    st = agree(s, st);
    if (st != GP_OK) {
        oct_tree_free(&s->tree);
        s->tree = keep;
        s->have_tree = had;
        s->built_group = had_group;
        s->built_leaf = had_leaf;
        s->built_keys = had_keys;
        s->moved = had_moved;
        s->dirty = had_dirty;
        s->calls_since_build = had_calls;
        s->excess = had_excess;
        s->in_src = keep_src;
        free(aold);
        return st;
    }
    oct_tree_free(&keep);
    free(keep_src);
    for (size_t i = 0; i < n; i++) aold[i] = -1;
    free(s->aold);
    s->aold = aold;
    s->none_active = 0;
    mpi_tree_engine_mark(s->engine, MTE_PARTICLES);
    return GP_OK;
}

static gp_status mpi_tree_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    int empty = s->base.p.have && s->base.p.n == 0;
    gp_status st = agree(s, empty ? GP_OK : gp_check_positions(&s->base, pos));
    if (st != GP_OK) return st;
    st = empty ? GP_OK : gp_particles_update(&s->base, pos);   /* validated: cannot fail now */
    if (st == GP_OK) {
        gp_state_clear(&s->base);
        s->moved = 1;
        mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
    }
    return st;
}

static gp_status mpi_tree_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    gp_status st = gp_check_active(&s->base, n_active, index);
    if ((st = agree(s, st)) != GP_OK) return st;
    st = agree(s, gp_particles_set_active(&s->base, n_active, index));
    if (st == GP_OK) s->none_active = n_active == 0 && index != NULL;
    return st;
}

static gp_status mpi_tree_compute_forces(gp_solver *s, double *acc, double *pot)
{
    static const char fn[] = "compute_forces";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st = GP_OK;
    int nothing = s->base.p.have && (s->none_active || s->base.p.n == 0);
    if (!(nothing && !acc)) st = gp_check_compute(&s->base, acc);
    if (st == GP_OK) st = engine_check_mac(s, fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    if ((st = agree(s, ensure_tree(s))) != GP_OK) return st;
    double t0 = gp_wtime();
    const gp_particles *p = &s->base.p;
    size_t na = s->none_active ? 0 : p->n_active;
    mpi_tree_targets T;
    int mac = gp_param_enum(&s->base, P_MAC);
    int accel = mac == GP_MAC_ACCELERATION;
    if (targets_forces(s, &T))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory to group %zu active particles; free memory", fn, na);
    if (st == GP_OK && accel && T.nruns) {
        T.amin = T.owned[6] = malloc(T.nruns * sizeof *T.amin);
        if (!T.amin) st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory", fn);
    }
    if ((st = agree(s, st)) != GP_OK) { targets_free(&T); return st; }
    uint64_t pp = 0, pc = 0;
    if (accel) {
        /* GADGET-2's start, on every rank when any rank lacks an |a| */
        int missing = 0, any = 0;
        for (size_t k = 0; k < na && !missing; k++)
            missing = s->aold[gp_active_index(&s->base, k)] < 0;
        MPI_Allreduce(&missing, &any, 1, MPI_INT, MPI_MAX, s->comm);
        if (any) {
            for (uint32_t r = 0; r < T.nruns; r++) T.amin[r] = 0;
            uint64_t pp0 = 0, pc0 = 0;
            st = force_pass(s, fn, GP_MAC_BH, OCT_PREPASS_THETA, 1, &T, 0, acc, NULL, &pp0, &pc0);
            if (st != GP_OK) { targets_free(&T); return st; }
            for (size_t k = 0; k < na; k++) {
                const double *a = &acc[3 * k];
                s->aold[gp_active_index(&s->base, k)] = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
            }
            s->base.stats.pp_interactions += pp0;
            s->base.stats.pc_interactions += pc0;
        }
        for (uint32_t r = 0; r < T.nruns; r++) {
            double amin = HUGE_VAL;
            for (uint32_t u = T.rb[r]; u < T.rb[r] + T.rc[r]; u++) {
                double a = s->aold[s->tree.order[T.self[u]]];
                amin = a < amin ? a : amin;
            }
            T.amin[r] = amin;
        }
    }
    engine_job job;
    engine_start(s, &job, 0, NULL, pot != NULL);
    st = force_pass(s, fn, mac, gp_param_double(&s->base, P_THETA), 0, &T, s->engine != NULL,
                    acc, pot, &pp, &pc);
    st = engine_finish(s, fn, &job, st, acc, pot);
    targets_free(&T);
    if (st != GP_OK) return st;
    for (size_t k = 0; k < na; k++) {
        const double *a = &acc[3 * k];
        s->aold[gp_active_index(&s->base, k)] = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    }
    double cost = na ? (double)(pp + pc) / (double)na : 0;
    if (s->calls_since_build == 0) s->base_cost = cost;
    else if (cost > s->base_cost) s->excess += (cost - s->base_cost) * (double)na;
    s->calls_since_build++;
    s->base.stats.force_calls += 1;
    s->base.stats.pp_interactions += pp;
    s->base.stats.pc_interactions += pc;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

static gp_status mpi_tree_compute_field(gp_solver *s, size_t m, const double *points, double *acc,
                                  double *pot)
{
    static const char fn[] = "compute_field";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st;
    if (m == 0)
        st = s->base.p.have ? GP_OK
                            : gp_fail(&s->base, GP_ERR_BAD_STATE,
                                      "compute_field was called before set_particles; call "
                                      "set_particles first");
    else
        st = gp_check_field(&s->base, m, points, acc);
    if (st == GP_OK) st = engine_check_mac(s, fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    /* m = 0 is how a rank without points takes part; on every rank it is
     * the ABI's rejection */
    unsigned long long mine = m, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, s->comm);
    if (total == 0)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "compute_field was given m = 0 points on every rank; pass at least one "
                       "point (a rank may pass m = 0 when another passes points)");
    if ((st = agree(s, ensure_tree(s))) != GP_OK) return st;
    double t0 = gp_wtime();
    mpi_tree_targets T;
    if (targets_field(s, m, points, &T))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory to sort %zu points; pass fewer at a time", fn, m);
    if ((st = agree(s, st)) != GP_OK) { targets_free(&T); return st; }
    int mac = gp_param_enum(&s->base, P_MAC);
    if (mac == GP_MAC_ACCELERATION) mac = GP_MAC_BH;
    uint64_t pp = 0, pc = 0;
    engine_job job;
    engine_start(s, &job, m, points, pot != NULL);
    st = force_pass(s, fn, mac, gp_param_double(&s->base, P_THETA), 0, &T, s->engine != NULL,
                    acc, pot, &pp, &pc);
    st = engine_finish(s, fn, &job, st, acc, pot);
    targets_free(&T);
    if (st != GP_OK) return st;
    s->base.stats.field_calls += 1;
    s->base.stats.pp_interactions += pp;
    s->base.stats.pc_interactions += pc;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

/* ---- ABI 1.1: held state, predict, subsets, masses (indices local) ------- */

static gp_status mpi_tree_set_state(gp_solver *s, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t)
{
    static const char fn[] = "set_state";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    /* validate on every rank first, then apply */
    gp_status st = agree(s, gp_state_check(&s->base, n_sub, index, pos, vel, acc, t));
    if (st != GP_OK) return st;
    /* only an allocation can fail now; the ranks that succeeded keep the
     * new state (there is nothing to roll back to cheaply) */
    st = agree(s, gp_state_set(&s->base, n_sub, index, pos, vel, acc, t));
    if (st == GP_OK && n_sub) {
        s->moved = 1;
        mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
    }
    return st;
}

static gp_status mpi_tree_predict(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    gp_particles *p = &s->base.p;
    /* keep what undoing needs: which particles were stated how, and t_pred */
    uint8_t *was = NULL;
    gp_status st = GP_OK;
    if (p->have && p->n_stated) {
        was = malloc(p->n);
        if (!was)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "predict: no memory for %zu bytes; free memory", p->n);
        else memcpy(was, p->stated, p->n);
    }
    double t_was = p->t_pred;
    size_t moved = 0;
    if (st == GP_OK) st = gp_state_predict(&s->base, t, thread_count(s), &moved);
    gp_status mine = st;
    st = agree(s, st);
    if (st != GP_OK && mine == GP_OK && moved) {
        /* another rank failed: undo this rank's prediction exactly */
        for (size_t i = 0; i < p->n; i++) {
            if (was[i] == 1) memcpy(&p->pos[3 * i], &p->x0[3 * i], 3 * sizeof(double));
            else if (was[i] == 2)
                for (int d = 0; d < 3; d++)
                    p->pos[3 * i + d] = gp_predict_coord(p->x0[3 * i + d], p->vel[3 * i + d],
                                                         p->acc[3 * i + d], t_was - p->t[i]);
        }
        memcpy(p->stated, was, p->n);
        p->t_pred = t_was;
    } else if (st == GP_OK && moved) {
        s->moved = 1;
        mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
    }
    free(was);
    return st;
}

static gp_status mpi_tree_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    return agree(s, gp_positions_get(&s->base, n_sub, index, pos));
}

static gp_status mpi_tree_set_source_subset(gp_solver *s, size_t n_src, const uint32_t *index)
{
    static const char fn[] = "set_source_subset";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st = GP_OK;
    if (!s->base.p.have)
        st = gp_fail(&s->base, GP_ERR_BAD_STATE,
                     "%s was called before set_particles; call set_particles first", fn);
    else if (n_src && !index)
        st = gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                     "%s was given n_src = %zu but a NULL index array; pass the indices, or "
                     "(0, NULL) for all particles", fn, n_src);
    else if (n_src)
        st = gp_check_subset(&s->base, fn, n_src, index);
    /* (0, non-NULL): no source on this rank (as for active subsets) */
    int none = n_src == 0 && index != NULL;
    uint8_t *member = NULL;
    if (st == GP_OK && (n_src || none)) {
        member = calloc(s->base.p.n ? s->base.p.n : 1, 1);
        if (!member)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for a %zu-byte membership map", fn, s->base.p.n);
    }
    if ((st = agree(s, st)) != GP_OK) { free(member); return st; }
    st = agree(s, gp_sources_set(&s->base, n_src, index));
    if (st != GP_OK) { free(member); return st; }
    for (size_t k = 0; k < n_src; k++) member[index[k]] = 1;
    free(s->in_src);
    s->in_src = member;
    s->dirty = 1;
    mpi_tree_engine_mark(s->engine, MTE_PARTICLES);
    return GP_OK;
}

static gp_status mpi_tree_update_masses(gp_solver *s, size_t n_sub, const uint32_t *index,
                                  const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_masses");
    /* validate on every rank first, then apply */
    gp_status st = gp_masses_check(&s->base, n_sub, index, mass);
    if ((st = agree(s, st)) != GP_OK) return st;
    st = agree(s, gp_masses_update(&s->base, n_sub, index, mass));
    if (st == GP_OK && n_sub) {
        s->dirty = 1;
        mpi_tree_engine_mark(s->engine, MTE_PARTICLES);
    }
    return st;
}

static const gp_api api = {
    .abi_major = GRAVPLUG_ABI_MAJOR,
    .abi_minor = GRAVPLUG_ABI_MINOR,
    .struct_size = sizeof(gp_api),
    .name = PLUGIN_NAME,
    .version = GP_VERSION,
    .capabilities = GP_CAP_TREE | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL |
                    GP_CAP_REFIT | GP_CAP_PREDICT | GP_CAP_MPI,
    .describe_params = mpi_tree_describe_params,
    .init = mpi_tree_init,
    .finalize = mpi_tree_finalize,
    .set_param = mpi_tree_set_param,
    .get_param = mpi_tree_get_param,
    .set_particles = mpi_tree_set_particles,
    .update_positions = mpi_tree_update_positions,
    .set_active_subset = mpi_tree_set_active_subset,
    .compute_forces = mpi_tree_compute_forces,
    .compute_field = mpi_tree_compute_field,
    .get_stats = mpi_tree_get_stats,
    .last_error = mpi_tree_last_error,
    .set_state = mpi_tree_set_state,
    .predict = mpi_tree_predict,
    .get_positions = mpi_tree_get_positions,
    .set_source_subset = mpi_tree_set_source_subset,
    .update_masses = mpi_tree_update_masses,
};

GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)
{
    return abi_major == GRAVPLUG_ABI_MAJOR ? &api : NULL;
}
