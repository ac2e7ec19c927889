/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi_tree.c — the mpi-tree plugin: cpu-tree across MPI ranks with a local
 * essential tree (LET) exchange, as in Bonsai, GOTHIC's MPI mode and
 * Gadget's tree (Warren & Salmon 1993; Bédorf et al. 2014). This file holds
 * the instance, its parameters and the ABI entries; the steps of a pass
 * live in the files named below.
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
 *      (octree/tree_state.c: keys, sort, i-groups, source tree, moments),
 *      all ranks together and in one root cube around every rank's
 *      particles (agree_cube), so that their cells are parts of one octree;
 *   2. each rank forms its i-groups and their spheres (targets.c), and
 *      describes their domain by a tree of boxes: a coarse one to every
 *      rank (MPI_Allgatherv), then, in rounds, each neighbour the pieces
 *      that face it, refined towards single groups (domains.c, boxes.h);
 *   3. each rank packs, for every other rank, the cells of its tree that
 *      that box needs (let.c), and the ranks swap them (MPI_Alltoallv);
 *   4. each group is walked with cpu-tree's walk (octree/cpu_walk_group.c), over
 *      the local tree first and then over the received LETs in rank order
 *      (force_pass.c); the sums are added in that order, so results are
 *      deterministic for a fixed P and distribution of particles.
 * With engine = cuda-tree (engine_cuda.h, engine_job.h, README "Engines")
 * step 4 walks the LETs only; the local forces come from a cuda-tree
 * instance, run in a thread of its own meanwhile, and are added in front
 * of the LET sums.
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
 * The acceleration MAC's |a_old| comes from the previous call, else from
 * the held state's acceleration (oct_aold_from_state); a call where some
 * active particle on some rank has neither runs the bh pre-pass on every
 * rank.
 *
 * ABI 1.2: set_state_jerk, get_velocities and get_neighbours are the
 * base's, agreed over the ranks. compute_forces_ex gives acc and pot
 * exactly as compute_forces; the jerk as cpu-tree's (octree/tree_jerk.h),
 * a pass in which every LET also carries its cells' velocities and dS/dt
 * and its particles' velocities (let.h), run when any rank asks for the
 * jerk (with engine = cuda-tree: GP_ERR_UNSUPPORTED, its cells have no
 * velocities); and the neighbour outputs over every rank's sources by gathering them
 * (outputs_gather.h: O(N) bytes per call, so no GP_CAP_NEIGHBOURS). A
 * source in nn_index and the lists is named by its global index: its
 * index on its rank plus the particle counts of all lower ranks.
 *
 * drift = on (with engine = cpu-tree): each rank's tree is drifted
 * through block steps as cpu-tree's (octree/tree_drift.h), and its LETs
 * are cut from the drifted cells (let.h). predict is owed on every rank
 * or on none (when every rank's states prove it safe, so it cannot fail);
 * whether a force call drifts is each rank's own choice (drift_fast); a
 * build stays collective, and a rank that drifted pays its owed predict
 * first.
 *
 * Threads: each instance talks over its own duplicate communicator, so
 * two instances may be used from two threads at once when MPI runs at
 * MPI_THREAD_MULTIPLE (what the plugin asks for when it starts MPI; a host
 * that starts MPI itself decides). init's calls over the parent
 * communicator take turns in a process (parent_calls), and instances pair
 * up across the ranks by the order of their init calls there: the same
 * order on every rank, or a parent communicator per thread.
 *
 * Parameters: init and every set_param end with every rank holding the
 * same values (agree_values: a hash of them all, compared with rank 0's)
 * or refused on every rank, before engine = cuda-tree, or anything else a
 * value starts, makes a collective call.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin_base.h"
#include "base/predict_lazy.h"
#include "comm.h"
#include "engine_job.h"
#include "force_pass.h"
#include "octree/cpu_driver.h"
#include "octree/mac.h"
#include "octree/tree_drift.h"
#include "octree/tree_params.h"
#include "exact_gather.h"
#include "outputs_gather.h"
#include "targets.h"

#define PLUGIN_NAME "mpi-tree"

/* init's collective calls over the parent communicator: MPI
 * lets only one thread at a time make collective calls on one
 * communicator, so two threads that create instances at once take turns
 * here (the header comment, "Threads", says how instances pair up). */
static pthread_mutex_t parent_calls = PTHREAD_MUTEX_INITIALIZER;


static const gp_param_info params[] = {
    GP_PARAM_ROW_G,
    GP_PARAM_ROW_EPS,
    OCT_PARAM_ROWS_WALK,   /* the LET is cut by the same criterion */
    {"rebuild", GP_PARAM_ENUM, "auto", "auto|always|N",
     "after positions change: auto (refit until a rebuild pays off), always, or rebuild "
     "every N force calls and refit in between (when one rank's tree is due, every rank "
     "rebuilds: the trees share one root cube)"},
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float interactions and sums; mixed: float interactions, double sums; double"},
    OCT_PARAM_ROWS_GROUPS,
    {"keys", GP_PARAM_ENUM, "peano-hilbert", "peano-hilbert|morton",
     "space-filling curve each rank sorts its particles along"},
    {GP_PARAM_THREADS, GP_PARAM_INT, "0", "[0,4096]",
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
    {"subset_spheres", GP_PARAM_ENUM, "active", "active|whole",
     "an active subset's i-group sphere: around its active particles (fewest interactions), or "
     "around its whole tree group, so that a particle's force does not depend on which others "
     "are active (for Hermite; wide_split then does not apply; with mac = acceleration the "
     "group's |a_old| still comes from its active particles)"},
    OCT_PARAM_ROW_DRIFT,   /* each rank's own tree; with engine = cpu-tree only */
};
/* cpu-tree's parameters first (indices: octree/cpu_driver.h), then ours */
enum { P_ENGINE = OCT_N_PARAMS, P_BOXES, P_WIDE, P_SPHERES, P_DRIFT, N_PARAMS };

struct gp_solver {
    gp_base base;              /* first: errors, params, particle copy, stats */
    MPI_Comm comm;             /* this instance's own duplicate              */
    int rank, size;
    oct_tree tree;
    oct_tree_age age;          /* how it was built, how it has aged since    */
    oct_spaces spaces;         /* the walks' per-thread workspaces           */
    int dirty;                 /* masses or sources changed: rebuild         */
    double *aold;              /* previous |a| per particle, < 0: none yet   */
    uint8_t *in_src;           /* source subset membership; NULL: all        */
    int none_active;           /* set_active_subset(0, non-NULL)             */
    int any_groups;            /* some rank has source groups (agreed)      */
    mpi_tree_engine *engine;   /* engine = cuda-tree: the local forces' solver */
    char engine_plugin[4096];  /* engine_plugin = PATH ("" : the default)     */
    mpi_tree_let_traffic let;  /* LET bytes of the last call and in total   */
    gp_lazy_predict lazy;      /* predict owed (drift = on)                  */
    oct_drift drift;           /* the local tree drifted with the held state */
    int fast;                  /* this call's passes read the drifted tree  */
};

static gp_status agree(gp_solver *s, gp_status mine)
{
    return mpi_tree_agree(&s->base, s->comm, mine);
}

/* The instance's place in MPI, for the collective steps of the pass. */
static mpi_tree_comm comm_of(gp_solver *s)
{
    return (mpi_tree_comm){ &s->base, s->comm, s->rank, s->size };
}

/* ---- the local tree ------------------------------------------------------ */

/* The root cube of all ranks' particles (collective): every rank builds
 * its tree in it, so that each rank's cells are cells of one octree. Where
 * two ranks' particles meet, a walk then finds the parts of the cells one
 * tree over all particles would have; trees in cubes of their own cut that
 * region along unrelated planes, and the walk opens both sets of cells
 * deeper (on the galaxy at P = 2: 17% more interactions at 1% active, 9%
 * in a full call, and twice the LET bytes;
 * bench/results/mpi-tree/raw/mpi-tree.md). */
static void agree_cube(gp_solver *s, size_t n, const double *pos, gp_cube *c)
{
    static const double none[3];
    double mn[3], mx[3], b[6];
    gp_host_bounds(n, n ? pos : none, n ? pos + 1 : none, n ? pos + 2 : none, 3, mn, mx);
    for (int a = 0; a < 3; a++) { b[a] = mn[a]; b[3 + a] = -mx[a]; }
    MPI_Allreduce(MPI_IN_PLACE, b, 6, MPI_DOUBLE, MPI_MIN, s->comm);
    for (int a = 0; a < 3; a++) { mn[a] = b[a]; mx[a] = -b[3 + a]; }
    gp_host_cube_of_bounds(mn, mx, c->lo, &c->inv_cell);
}

/* rebuilt: a rebuild of moved particles (oct_tree_rebuilt), else a new
 * tree; in the cube agree_cube gave (local: no collective here) */
static gp_status build_tree(gp_solver *s, int rebuilt, const gp_cube *cube)
{
    double t0 = gp_wtime();
    const gp_particles *p = &s->base.p;
    s->drift.anchored = 0;      /* a new tree: anchored anew (anchor_drift) */
    if (p->n == 0) {            /* an empty rank: an empty tree */
        oct_tree_free(&s->tree);
        oct_tree_built(&s->age, &s->base);
        s->dirty = 0;
        return GP_OK;
    }
    double *tmp;
    const double *mass = mpi_tree_source_masses(&s->base.p, s->in_src, &tmp);
    oct_tree fresh;
    int rc = -1;
    if (mass)
        rc = oct_build_threaded(&s->base, &fresh, p->n, p->pos, mass,
                                (uint32_t)gp_param_int(&s->base, OCT_P_GROUP),
                                (uint32_t)gp_param_int(&s->base, OCT_P_LEAF),
                                oct_param_keys(&s->base), cube);
    free(tmp);
    if (rc)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "no memory to build the tree of %zu particles; free memory or use "
                       "more ranks", p->n);
    oct_tree_free(&s->tree);
    s->tree = fresh;
    if (rebuilt) oct_tree_rebuilt(&s->age, &s->base);
    else oct_tree_built(&s->age, &s->base);
    s->dirty = 0;
    s->base.stats.tree_builds += 1;
    s->base.stats.seconds_build += gp_wtime() - t0;
    return GP_OK;
}

static gp_status settle(gp_solver *s);

/* Makes this rank's tree current (cpu-tree's policy). Collective: when
 * any rank needs a build, every rank builds, in one agreed cube; a refit
 * keeps the cube of the last build. *fast: this rank's block step walks
 * its drifted tree (drift_fast, decided by each rank alone: it needs no
 * build of its own), which is then neither refitted nor rebuilt, unless
 * another rank's build makes every rank build: *fast is then cleared and
 * the owed predict paid first. */
static gp_status ensure_tree(gp_solver *s, int *fast)
{
    const gp_particles *p = &s->base.p;
    int fresh = s->dirty || oct_layout_changed(&s->age, &s->base);
    int mine = fresh || (s->age.moved && p->n && oct_rebuild_due(&s->base, &s->age, p->n));
    int any = mine;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, s->comm);
    if (any) {
        /* settled before the cube; a failure still takes part in it */
        gp_status st = *fast ? settle(s) : GP_OK;
        *fast = 0;
        gp_cube c;
        agree_cube(s, p->n, p->pos, &c);
        return st != GP_OK ? st : build_tree(s, !fresh, &c);
    }
    if (*fast) return GP_OK;
    if (!s->age.moved) return GP_OK;
    if (p->n == 0) { s->age.moved = 0; return GP_OK; }
    double t0 = gp_wtime();
    int rc = oct_refit_threaded(&s->base, &s->tree, p->pos, NULL, 1);
    gp_cube last = { { s->tree.lo[0], s->tree.lo[1], s->tree.lo[2] }, s->tree.inv_cell };
    if (rc == 1) return build_tree(s, 0, &last);   /* cannot happen without new masses */
    if (rc) return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory to refit the tree");
    s->drift.anchored = 0;
    s->age.moved = 0;
    s->age.refitted = 1;
    s->base.stats.tree_refits += 1;
    s->base.stats.seconds_moments += gp_wtime() - t0;
    return GP_OK;
}

/* ---- the drifted tree (drift = on: octree/tree_drift.h) ------------------ */

static int drift_on(const gp_solver *s)
{
    return gp_param_enum(&s->base, P_DRIFT) == 1 && !s->engine;
}

/* Pays an owed predict (drift = on) before anything that reads every
 * position. Local. */
static gp_status settle(gp_solver *s)
{
    return gp_lazy_settle(&s->lazy, &s->base);
}

/* Whether this rank's force call can walk its drifted tree, decided by
 * the rank alone (its cells, sources and targets are its own; only a
 * build is collective, ensure_tree): cpu-tree's rule, a block step's
 * active subset (one gp_drift_takes) after a predict with no state given
 * since, acc and pot only, on a tree anchored and not due for a rebuild,
 * with no source subset or groups. */
static int drift_fast(const gp_solver *s, int jerk_pass_on)
{
    const gp_particles *p = &s->base.p;
    const size_t na = s->none_active ? 0 : p->n_active;
    return drift_on(s) && s->drift.anchored && !jerk_pass_on && gp_lazy_all_predicted(&s->lazy) &&
           (p->active || s->none_active) && gp_drift_takes(na, p->n) && !s->in_src && !s->dirty &&
           !s->any_groups && gp_param_enum(&s->base, P_SPHERES) == 0 &&
           !oct_layout_changed(&s->age, &s->base) && !oct_rebuild_due(&s->base, &s->age, p->n);
}

/* After the normal path made the tree current: anchors the drift there
 * when the next block steps can use it. Out of memory only leaves it
 * unanchored (the normal path then serves). */
static void anchor_drift(gp_solver *s, int mac, double theta)
{
    if (!drift_on(s) || s->drift.anchored || !gp_lazy_all_predicted(&s->lazy) || s->in_src ||
        !s->tree.src_alias || s->base.p.n == 0)
        return;
    double t0 = gp_wtime();
    (void)oct_drift_anchor(&s->drift, &s->tree, &s->base.p, s->lazy.t, mac, theta);
    s->base.stats.seconds_moments += gp_wtime() - t0;
}

/* A state given to a subset: the positions moved; the drifted tree takes
 * the new paths into its cells, or is anchored anew at the next call. */
static void state_given(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                        const double *vel, const double *acc, const double *jerk,
                        const double *t)
{
    gp_lazy_note_state(&s->lazy, n_sub, index, pos, vel, acc, jerk, t);
    oct_drift_update(&s->drift, n_sub, index);
    s->age.moved = 1;
    mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
}

/* ---- what a pass needs from the instance --------------------------------- */

/* FNV-1a over the values that shape forces (all but threads). */
static uint64_t param_hash(const gp_solver *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (int k = 0; k < N_PARAMS; k++) {
        if (k == OCT_P_THREADS) continue;
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

/* param_hash and engine_plugin: every value a rank holds that may start a
 * collective (engine = cuda-tree opens its engine on every rank) or shape
 * the forces. */
static uint64_t values_hash(const gp_solver *s)
{
    uint64_t h = param_hash(s);
    for (const char *p = s->engine_plugin; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

/* After fn (init, a set_param) every rank holds the same values, or fn is
 * refused on every rank with one sentence naming the first rank that
 * differs: checked before anything the new values start, so that a rank
 * given other values never enters a collective of its own alone. */
static gp_status agree_values(gp_solver *s, const char *fn)
{
    if (s->size == 1) return GP_OK;
    uint64_t mine = values_hash(s), first = mine;
    MPI_Bcast(&first, 1, MPI_UINT64_T, 0, s->comm);
    int me = mine != first ? s->rank : s->size, differs = s->size;
    MPI_Allreduce(&me, &differs, 1, MPI_INT, MPI_MIN, s->comm);
    if (differs == s->size) return GP_OK;
    return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                   "%s: rank %d of %d then holds other parameter values than rank 0 (init and set_param "
                   "are collective: every rank passes the same names and values); pass the same values "
                   "on every rank", fn, differs, s->size);
}

/* Opens or closes the cuda-tree engine to match the engine parameter. */
static gp_status engine_apply(gp_solver *s)
{
    mpi_tree_comm c = comm_of(s);
    return mpi_tree_engine_switch(&s->engine, gp_param_enum(&s->base, P_ENGINE) == 1,
                                  s->engine_plugin, &c);
}

/* One collective pass over the targets (force_pass.h). */
static gp_status force_pass(gp_solver *s, const char *fn, int mac, double theta, int prepass,
                            const mpi_tree_targets *T, int lets_only, double *acc, double *pot,
                            const mpi_tree_jerk_io *jp, uint64_t *pp, uint64_t *pc)
{
    mpi_tree_comm c = comm_of(s);
    mpi_tree_pass ps = { .fn = fn, .mac = mac, .theta = theta,
                         .wp = oct_param_walk(&s->base, mac, prepass),
                         .threads = oct_param_threads(&s->base),
                         .let_boxes = (int)gp_param_int(&s->base, P_BOXES),
                         .param_hash = param_hash(s), .lets_only = lets_only,
                         .spaces = &s->spaces, .drift = s->fast ? &s->drift : NULL,
                         .both_layouts = s->drift.anchored };
    if (s->fast) oct_drift_to(&s->drift, s->lazy.t, mac, theta);
    if (jp) ps.jk = *jp;
    return mpi_tree_force_pass(&c, &s->tree, &ps, T, acc, pot, pp, pc, &s->let);
}

/* drift = on drifts the ranks' own trees, which engine = cuda-tree does
 * not walk: said once whenever the two meet, as the values are set. */
static void note_drift_engine(gp_solver *s)
{
    if (gp_param_enum(&s->base, P_DRIFT) == 1 && gp_param_enum(&s->base, P_ENGINE) == 1)
        gp_log(&s->base, GP_LOG_WARNING,
               "drift = on has no effect with engine = cuda-tree (its local trees are cuda-tree's "
               "own, refitted each call); use engine = cpu-tree to drift them");
}

/* ---- the ABI entry points ----------------------------------------------- */

static const gp_param_info *mpi_tree_describe_params(size_t *count)
{
    if (count) *count = N_PARAMS;
    return params;
}

/* The final pass of a compute call: the local engine's job (na active
 * particles, or m field points) started, the tree pass with theta over the
 * targets T, the engine's results merged; T is freed. */
static gp_status engine_and_pass(gp_solver *s, const char *fn, int mac, mpi_tree_targets *T, size_t na,
                                 size_t m, const double *points, double *acc, double *pot,
                                 const mpi_tree_jerk_io *jp, uint64_t *pp, uint64_t *pc)
{
    mpi_tree_engine_job job;
    mpi_tree_engine_start(&job, s->engine, &s->base, s->in_src, na, m, points, pot != NULL);
    gp_status st = force_pass(s, fn, mac, gp_param_double(&s->base, OCT_P_THETA), 0, T,
                              s->engine != NULL, acc, pot, jp, pp, pc);
    mpi_tree_comm c = comm_of(s);
    st = mpi_tree_engine_finish(&job, &c, fn, st, acc, pot);
    mpi_tree_targets_free(T);
    /* a result that overflows double on one rank fails the call on all */
    return agree(s, st == GP_OK ? gp_check_outputs(&s->base, fn, na + m, acc, pot) : st);
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
    oct_spaces_free(&s->spaces);
    oct_drift_free(&s->drift);
    gp_lazy_free(&s->lazy);
    free(s->aold);
    free(s->in_src);
    int done = 0;
    MPI_Finalized(&done);
    if (!done && s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
    gp_base_free(&s->base);
    free(s);
}

/* An instance's sentence for gp_init_fail, which names the plugin itself. */
static const char *unprefixed(const char *msg)
{
    static const char prefix[] = PLUGIN_NAME ": ";
    return strncmp(msg, prefix, sizeof prefix - 1) == 0 ? msg + sizeof prefix - 1 : msg;
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
    /* the collectives over the parent, one thread of this process at a time */
    pthread_mutex_lock(&parent_calls);
    st = mpi_tree_agree_init(args, parent, st, PLUGIN_NAME);
    if (st == GP_OK) MPI_Comm_dup(parent, &s->comm);
    pthread_mutex_unlock(&parent_calls);
    if (st != GP_OK) {
        if (s) { s->comm = MPI_COMM_NULL; mpi_tree_finalize(s); }
        if (out) *out = NULL;
        return st;
    }
    MPI_Comm_rank(s->comm, &s->rank);
    MPI_Comm_size(s->comm, &s->size);
    if ((st = agree_values(s, "init")) != GP_OK) {
        st = gp_init_fail(args, PLUGIN_NAME, st, "%s", unprefixed(s->base.error));
        mpi_tree_finalize(s);
        return st;
    }
    if (gp_param_enum(&s->base, P_ENGINE) == 1 && (st = engine_apply(s)) != GP_OK) {
        st = gp_init_fail(args, PLUGIN_NAME, st, "%s", unprefixed(s->base.error));
        mpi_tree_finalize(s);
        return st;
    }
    note_drift_engine(s);
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
    st = agree_values(s, "set_param('engine_plugin')");
    if (st == GP_OK && s->engine) st = engine_apply(s);
    if (st != GP_OK) memcpy(s->engine_plugin, keep, sizeof keep);
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
    if (st == GP_OK) {
        char fn[96];
        snprintf(fn, sizeof fn, "set_param('%.64s')", name ? name : "");
        st = agree_values(s, fn);
    }
    if (st == GP_OK && name && !strcmp(name, "engine") &&
        (gp_param_enum(&s->base, P_ENGINE) == 1) != (s->engine != NULL))
        st = engine_apply(s);
    if (st != GP_OK) memcpy(s->base.param, keep, sizeof keep);
    else if (name && (!strcmp(name, "drift") || !strcmp(name, "engine"))) note_drift_engine(s);
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
    gp_groups_clear(base);
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
    oct_tree_age had = s->age;
    int had_dirty = s->dirty;
    uint8_t *keep_src = s->in_src;
    s->in_src = NULL;
    memset(&s->tree, 0, sizeof s->tree);
    gp_particles old = s->base.p;
    gp_particles tmp = { .have = 1, .n = n, .pos = (double *)pos, .mass = (double *)mass,
                         .n_active = n };
    s->base.p = tmp;           /* build_tree reads the particles from base.p */
    gp_cube cube;
    agree_cube(s, n, pos, &cube);
    st = aold ? build_tree(s, 0, &cube)
              : gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                        "set_particles: no memory for %zu particles; use more ranks", n);
    s->base.p = old;
    if (st == GP_OK) st = n ? gp_particles_set(&s->base, n, pos, mass) : particles_empty(&s->base);
    st = agree(s, st);
    if (st != GP_OK) {
        oct_tree_free(&s->tree);
        s->tree = keep;
        s->age = had;
        s->dirty = had_dirty;
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
    s->any_groups = 0;         /* set_particles clears the groups, on every rank */
    gp_lazy_reset(&s->lazy);   /* positions given anew, the state forgotten */
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
        gp_lazy_reset(&s->lazy);
        s->drift.anchored = 0;
        s->age.moved = 1;
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

/* compute_forces, and compute_forces_ex's acc, pot and (jerk_pass, agreed
 * by every rank) jerk: the same acc and pot bits either way. */
static gp_status compute_pass(gp_solver *s, const char *fn, double *acc, double *pot,
                              int jerk_pass_on, double *jerk)
{
    gp_status st = GP_OK;
    int nothing = s->base.p.have && (s->none_active || s->base.p.n == 0);
    if (!(nothing && !acc)) st = gp_check_compute(&s->base, acc);
    if (st == GP_OK) st = mpi_tree_engine_check_mac(s->engine, gp_param_enum(&s->base, OCT_P_MAC), &s->base, fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    const double tt = gp_wtime();   /* the tree's build or refit, for the debug line */
    int fast = drift_fast(s, jerk_pass_on);
    if ((st = agree(s, fast ? GP_OK : settle(s))) != GP_OK) return st;
    if ((st = agree(s, ensure_tree(s, &fast))) != GP_OK) return st;
    double t0 = gp_wtime();
    const gp_particles *p = &s->base.p;
    size_t na = s->none_active ? 0 : p->n_active;
    mpi_tree_targets T;
    int mac = gp_param_enum(&s->base, OCT_P_MAC);
    int accel = mac == GP_MAC_ACCELERATION;
    const double theta = gp_param_double(&s->base, OCT_P_THETA);
    if (fast)
        oct_drift_targets(&s->drift, s->lazy.t, mac, theta, na, p->active,
                          oct_param_threads(&s->base));
    else
        anchor_drift(s, mac, theta);
    if (mpi_tree_targets_forces(&s->tree, s->none_active, p->n_active, p->active,
                                gp_param_double(&s->base, P_WIDE),
                                gp_param_enum(&s->base, P_SPHERES) == 1,
                                oct_param_threads(&s->base), &T))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory to group %zu active particles; free memory", fn, na);
    if (st == GP_OK && accel && T.nruns) {
        T.amin = T.owned[6] = malloc(T.nruns * sizeof *T.amin);
        if (!T.amin) st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory", fn);
    }
    if ((st = agree(s, st)) != GP_OK) { mpi_tree_targets_free(&T); return st; }
    gp_log(&s->base, GP_LOG_DEBUG, "%s: tree (%s, with the wait for the slowest rank) "
           "%.3f ms, active groups %.3f ms", fn, fast ? "drifted" : "build or refit",
           1e3 * (t0 - tt), 1e3 * (gp_wtime() - t0));
    uint64_t pp = 0, pc = 0;
    s->fast = fast;
    if (accel) {
        /* GADGET-2's start, on every rank when any rank lacks an |a| */
        int missing = oct_aold_from_state(&s->base, na, s->aold) > 0, any = 0;
        MPI_Allreduce(&missing, &any, 1, MPI_INT, MPI_MAX, s->comm);
        if (any) {
            for (uint32_t r = 0; r < T.nruns; r++) T.amin[r] = 0;
            uint64_t pp0 = 0, pc0 = 0;
            st = force_pass(s, fn, GP_MAC_BH, OCT_PREPASS_THETA, 1, &T, 0, acc, NULL, NULL, &pp0,
                            &pc0);
            if (st != GP_OK) { mpi_tree_targets_free(&T); return st; }
            oct_store_abs_acc(&s->base, na, acc, s->aold);
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
    /* a jerk pass: the local tree's jerk sources and each target's velocity */
    double *jbuf = NULL, *tv = NULL;
    oct_jerk_sources js;
    mpi_tree_jerk_io jp = { NULL, NULL, jerk };
    if (jerk_pass_on) {
        int bad = oct_jerk_sources_make(&s->tree, NULL, &s->base.p, oct_param_threads(&s->base),
                                        &jbuf, &js);
        uint32_t nu = 0;
        for (uint32_t r = 0; r < T.nruns; r++) nu = T.rb[r] + T.rc[r] > nu ? T.rb[r] + T.rc[r] : nu;
        tv = malloc((3 * (size_t)nu + 1) * sizeof *tv);
        for (uint32_t u = 0; tv && u < nu; u++)
            gp_state_velocity(&s->base.p, s->tree.order[T.self[u]], &tv[3 * u]);
        if (bad || !tv)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "%s: no memory for the velocities of the sources and cells; free memory",
                         fn);
        jp.js = &js;
        jp.tv = tv;
    }
    if ((st = agree(s, st)) != GP_OK) {
        free(jbuf); free(tv);
        mpi_tree_targets_free(&T);
        return st;
    }
    st = engine_and_pass(s, fn, mac, &T, na, 0, NULL, acc, pot, jerk_pass_on ? &jp : NULL, &pp, &pc);
    free(jbuf); free(tv);
    if (st == GP_OK && jerk)
        st = agree(s, gp_check_outputs(&s->base, fn, na, jerk, NULL));
    if (st != GP_OK) return st;
    oct_store_abs_acc(&s->base, na, acc, s->aold);
    /* the drifted tree's cells are no longer the positions' moments: a
     * normal call refits first (moved stays set), and this call's cost
     * counts as an aged tree's */
    if (fast) s->age.refitted = 1;
    oct_count_force_call(&s->base, &s->age, 0, pp, pc, na, t0);
    return GP_OK;
}

/* compute_pass, its passes on the drifted tree when it chose so. */
static gp_status compute(gp_solver *s, const char *fn, double *acc, double *pot, int jerk_pass_on,
                         double *jerk)
{
    gp_status st = compute_pass(s, fn, acc, pot, jerk_pass_on, jerk);
    s->fast = 0;
    return st;
}

static gp_status mpi_tree_compute_forces_ex(gp_solver *s, const gp_outputs *out);

static gp_status mpi_tree_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    if (s->any_groups) {   /* the groups' rule (on some rank): through compute_forces_ex */
        gp_outputs o = gp_outputs_forces(acc, pot);
        return mpi_tree_compute_forces_ex(s, &o);
    }
    return compute(s, "compute_forces", acc, pot, 0, NULL);
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
    if (st == GP_OK) st = mpi_tree_engine_check_mac(s->engine, gp_param_enum(&s->base, OCT_P_MAC), &s->base, fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    /* m = 0 is how a rank without points takes part; on every rank it is
     * the ABI's rejection */
    unsigned long long mine = m, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, s->comm);
    if (total == 0)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "compute_field was given m = 0 points on every rank; pass at least one "
                       "point (a rank may pass m = 0 when another passes points)");
    int fast = 0;
    if ((st = agree(s, settle(s))) != GP_OK) return st;
    if ((st = agree(s, ensure_tree(s, &fast))) != GP_OK) return st;
    double t0 = gp_wtime();
    mpi_tree_targets T;
    if (mpi_tree_targets_field(&s->tree, m, points, gp_param_double(&s->base, P_WIDE), &T))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory to sort %zu points; pass fewer at a time", fn, m);
    if ((st = agree(s, st)) != GP_OK) { mpi_tree_targets_free(&T); return st; }
    int mac = gp_param_enum(&s->base, OCT_P_MAC);
    if (mac == GP_MAC_ACCELERATION) mac = GP_MAC_BH;
    uint64_t pp = 0, pc = 0;
    st = engine_and_pass(s, fn, mac, &T, 0, m, points, acc, pot, NULL, &pp, &pc);
    if (st != GP_OK) return st;
    oct_count_field_call(&s->base, pp, pc, t0);
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
    st = agree(s, gp_lazy_reserve(&s->lazy, &s->base, n_sub));
    if (st == GP_OK) st = agree(s, gp_state_set(&s->base, n_sub, index, pos, vel, acc, t));
    if (st == GP_OK && n_sub) state_given(s, n_sub, index, pos, vel, acc, NULL, t);
    return st;
}

/* drift = on: owed (predict_lazy.h) when every rank may defer it, which
 * cannot fail, else paid and done at once on every rank. */
static gp_status mpi_tree_predict(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    gp_particles *p = &s->base.p;
    int may = drift_on(s) && p->have && gp_lazy_safe_to_defer(&s->lazy, t), defer = 0;
    MPI_Allreduce(&may, &defer, 1, MPI_INT, MPI_MIN, s->comm);
    if (defer) {
        gp_status st = agree(s, gp_lazy_predict_to(&s->lazy, &s->base, t, 1));
        if (st == GP_OK && p->n_stated) {
            s->age.moved = 1;
            mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
        }
        return st;
    }
    gp_status st = agree(s, settle(s));
    if (st != GP_OK) return st;
    /* keep what undoing needs: which particles were stated how, and t_pred */
    uint8_t *was = NULL;
    if (p->have && p->n_stated) {
        was = malloc(p->n);
        if (!was)
            st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                         "predict: no memory for %zu bytes; free memory", p->n);
        else memcpy(was, p->stated, p->n);
    }
    double t_was = p->t_pred;
    size_t moved = 0;
    if (st == GP_OK) st = gp_state_predict(&s->base, t, &moved);
    gp_status mine = st;
    st = agree(s, st);
    if (st != GP_OK && mine == GP_OK && moved) {
        /* another rank failed: undo this rank's prediction exactly */
        gp_state_unpredict(&s->base, was, t_was);
    } else if (st == GP_OK && moved) {
        s->age.moved = 1;
        mpi_tree_engine_mark(s->engine, MTE_POSITIONS);
    }
    if (st == GP_OK) gp_lazy_predicted(&s->lazy, t);
    free(was);
    return st;
}

static gp_status mpi_tree_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    return agree(s, gp_lazy_positions(&s->lazy, &s->base, n_sub, index, pos));
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

/* ---- ABI 1.2 (collective, as every call; indices as outputs_gather.h) ---- */

static gp_status mpi_tree_set_state_jerk(gp_solver *s, size_t n_sub, const uint32_t *index,
                                         const double *pos, const double *vel, const double *acc,
                                         const double *jerk, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state_jerk");
    /* validated on every rank first, then applied */
    gp_status st = agree(s, gp_state_check_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t));
    if (st != GP_OK) return st;
    st = agree(s, gp_lazy_reserve(&s->lazy, &s->base, n_sub));
    if (st == GP_OK) st = agree(s, gp_state_set_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t));
    if (st == GP_OK && n_sub) state_given(s, n_sub, index, pos, vel, acc, jerk, t);
    return st;
}

static gp_status mpi_tree_get_velocities(gp_solver *s, size_t n_sub, const uint32_t *index, double *vel)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_velocities");
    gp_status st = settle(s);
    return agree(s, st != GP_OK ? st : gp_velocities_get(&s->base, n_sub, index, vel));
}

static gp_status mpi_tree_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset, uint32_t *list,
                                         size_t *needed)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_neighbours");
    return agree(s, gp_neighbours_get(&s->base, cap, offset, list, needed));
}

/* acc and pot from compute_forces (the same bits), then the neighbour
 * outputs over every rank's sources (outputs_gather.c); 1.3's through
 * exact_gather.c. */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out);

static gp_status mpi_tree_compute_forces_ex(gp_solver *s, const gp_outputs *out)
{
    static const char fn[] = "compute_forces_ex";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    int nothing = s->base.p.have && (s->none_active || s->base.p.n == 0);
    gp_status st = GP_OK;
    if (!out || out->struct_size < offsetof(gp_outputs, nb_step) + sizeof out->nb_step || !nothing) {
        st = gp_check_outputs_ex(&s->base, out);
    } else if (out->acc || !isfinite(out->nb_step) || out->nb_step < 0) {
        /* a rank with no active particle: nothing of n_active's length to
         * check (its radii, say), but the rest must hold as anywhere */
        gp_outputs none = *out;
        none.nb_radius = NULL;
        size_t keep = s->base.p.n_active;
        s->base.p.n_active = 0;
        st = gp_check_outputs_ex(&s->base, &none);
        s->base.p.n_active = keep;
    }
    if (st == GP_OK && out->jerk && s->engine)
        st = gp_fail(&s->base, GP_ERR_UNSUPPORTED,
                     "%s: with engine = cuda-tree mpi-tree computes no jerk (cuda-tree's cells "
                     "carry no velocities); leave jerk NULL, or use engine = cpu-tree", fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    /* groups on any rank: the exact pass over every rank's particles
     * (exact_gather.c); else the even step is outputs_gather.c's tree
     * search's, as the 1.2 outputs are */
    gp_outputs o = gp_outputs_read(out);
    int grouped = s->base.p.group != NULL, any_grouped = 0;
    MPI_Allreduce(&grouped, &any_grouped, 1, MPI_INT, MPI_MAX, s->comm);
    if (!any_grouped) return forces_ex_12(s, &o);
    if ((st = agree(s, settle(s))) != GP_OK) return st;
    double t0 = gp_wtime();
    mpi_tree_comm c = comm_of(s);
    double eps = gp_param_double(&s->base, OCT_P_EPS);
    st = mpi_tree_exact_gather(&c, s->in_src, s->none_active, 0, 0, NULL, NULL, NULL, &o, 1,
                               gp_param_double(&s->base, OCT_P_G), eps * eps,
                               oct_param_threads(&s->base), fn);
    s->base.stats.seconds_walk += gp_wtime() - t0;
    if (st == GP_OK) {
        s->base.stats.force_calls++;
        size_t na = s->none_active ? 0 : s->base.p.n_active;
        st = gp_check_outputs(&s->base, fn, na, o.acc, o.pot);
    }
    return agree(s, st);
}

/* 1.2's outputs, after compute_forces_ex's checks */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out)
{
    static const char fn[] = "compute_forces_ex";
    gp_status st = GP_OK;
    gp_neighbours_forget(&s->base);
    /* a jerk pass when any rank asks (the LETs carry velocities then); a
     * rank that did not ask sums its jerk into scratch */
    int asked = out->jerk != NULL, jerk_pass_on = 0;
    MPI_Allreduce(&asked, &jerk_pass_on, 1, MPI_INT, MPI_MAX, s->comm);
    size_t na = s->none_active ? 0 : s->base.p.n_active;
    double *scratch = jerk_pass_on && !asked ? malloc((3 * na + 1) * sizeof *scratch) : NULL;
    if (jerk_pass_on && !asked && !scratch)
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for a jerk pass", fn);
    /* another rank's failure leaves this rank's scratch to free */
    if ((st = agree(s, st)) != GP_OK) { free(scratch); return st; }
    st = compute(s, fn, out->acc, out->pot, jerk_pass_on, asked ? out->jerk : scratch);
    free(scratch);
    if (st != GP_OK) return st;
    /* whether any rank wants a neighbour output, and a pairwise step */
    int want[2] = { out->nn_index || out->nn_dist2 || out->pair_step || out->pair_step_even ||
                        out->nb_radius || out->nb_step > 0 || out->nb_step_even > 0,
                    out->pair_step || out->nb_step > 0 || out->pair_step_even ||
                        out->nb_step_even > 0 };
    int any[2] = { 0, 0 };
    MPI_Allreduce(want, any, 2, MPI_INT, MPI_MAX, s->comm);
    if (!any[0]) return GP_OK;
    if ((st = agree(s, settle(s))) != GP_OK) return st;   /* the gather reads every position */
    double t0 = gp_wtime();
    mpi_tree_comm c = comm_of(s);
    double eps = gp_param_double(&s->base, OCT_P_EPS);
    st = mpi_tree_outputs_gather(&c, s->in_src, s->none_active, any[1], out,
                                 gp_param_double(&s->base, OCT_P_G), eps * eps,
                                 (uint32_t)gp_param_int(&s->base, OCT_P_GROUP),
                                 (uint32_t)gp_param_int(&s->base, OCT_P_LEAF), oct_param_keys(&s->base));
    s->base.stats.seconds_walk += gp_wtime() - t0;
    st = agree(s, st);
    if (st != GP_OK) gp_neighbours_forget(&s->base);
    return st;
}

/* ---- ABI 1.3 (collective; indices as exact_gather.h) ---- */

static gp_status mpi_tree_set_source_groups(gp_solver *s, size_t n, const uint32_t *group)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_source_groups");
    gp_status st = agree(s, gp_groups_set(&s->base, n, group));
    int mine = s->base.p.group != NULL;
    MPI_Allreduce(&mine, &s->any_groups, 1, MPI_INT, MPI_MAX, s->comm);
    return st;
}

/* Exact at each rank's points over every rank's sources (exact_gather.c);
 * a rank with no points passes n = 0 and takes part. */
static gp_status mpi_tree_compute_field_ex(gp_solver *s, size_t n, const double *pos,
                                           const double *vel, const uint32_t *exclude,
                                           const gp_outputs *out)
{
    static const char fn[] = "compute_field_ex";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st = gp_check_field_ex(&s->base, n, pos, vel, exclude, out);
    if (st == GP_OK && out->jerk && s->engine)
        st = gp_fail(&s->base, GP_ERR_UNSUPPORTED,
                     "%s: with engine = cuda-tree mpi-tree computes no jerk (cuda-tree's cells "
                     "carry no velocities); leave jerk NULL, or use engine = cpu-tree", fn);
    if ((st = agree(s, st)) != GP_OK) return st;
    if ((st = agree(s, settle(s))) != GP_OK) return st;
    gp_outputs o = gp_outputs_read(out);
    double t0 = gp_wtime();
    mpi_tree_comm c = comm_of(s);
    double eps = gp_param_double(&s->base, OCT_P_EPS);
    st = mpi_tree_exact_gather(&c, s->in_src, s->none_active, 1, n, pos, vel, exclude, &o, 1, gp_param_double(&s->base, OCT_P_G), eps * eps,
                               oct_param_threads(&s->base), fn);
    s->base.stats.seconds_walk += gp_wtime() - t0;
    if (st == GP_OK) {
        s->base.stats.field_calls++;
        st = gp_check_outputs(&s->base, fn, n, o.acc, o.pot);
    }
    return agree(s, st);
}

static const gp_api api = GP_PLUGIN_API_13(mpi_tree, PLUGIN_NAME,
    GP_CAP_TREE | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL |
    GP_CAP_REFIT | GP_CAP_PREDICT | GP_CAP_MPI | GP_CAP_JERK);

GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)
{
    return abi_major == GRAVPLUG_ABI_MAJOR ? &api : NULL;
}