/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_tree.c — the cpu-tree plugin: a Barnes-Hut oct-tree on the CPU, built
 * from plugin/octree (keys, level-by-level tree, moments, MACs, kernels) and
 * driven with OpenMP over i-groups (octree/cpu_walk_group.c).
 *
 * One compute_forces call:
 *   0. an active subset of at most direct_max particles gets its exact
 *      sums over every source instead (exact_few.h): cheaper than the
 *      O(n) passes a moved tree needs, which wait for the next larger call;
 *   1. make the tree current: a full build after set_particles (at the
 *      first call that walks it, not in set_particles; none when
 *      set_particles brought back, bit for bit, the particles the tree was
 *      just built from, as a host re-sending them before each field call
 *      does: the same tree is kept); after
 *      update_positions either a refit (moments on the old topology) or a
 *      rebuild, as `rebuild` says (auto: when the extra interactions the
 *      aging tree costs pass a third of what a build costs, which measured
 *      best (octree/tree_state.h); both counted in interactions, so the
 *      decision is deterministic; each call is compared with an earlier
 *      call with about as many active particles, the same power of two,
 *      as cuda-tree does: block steps' deep levels are the dense centre,
 *      dearer on any tree; those
 *      baselines last from set_particles to set_particles, across auto's
 *      own rebuilds: oct_tree_rebuilt in octree/cpu_driver.h);
 *   2. the i-groups: the tree's groups when all particles are active; for
 *      an active subset, the active part of each tree group, each with a
 *      sphere around its active particles only;
 *   3. one walk per group (OpenMP, dynamic schedule; each particle's sum is
 *      made by one thread in a fixed order, so results do not depend on the
 *      thread count). The acceleration MAC needs the previous |a|: from the
 *      previous call, else from the particle's held state (set_state's
 *      acceleration, ABI 1.1: the same state gives the same choice, so a
 *      restart keeps its bits); where a particle has neither, a bh pass
 *      (monopoles, theta 1) runs first, as in GADGET-2. Its results
 *      therefore depend on the previous call, which is why the default MAC
 *      is the stateless bmax.
 *
 * Massless particles are i-particles only: the source tree holds the
 * massive ones. update_masses refits the moments on the old topology: a
 * source whose mass drops to 0 stays in the tree and adds exactly 0 until
 * the next rebuild; a massless particle that gains mass is not in the tree,
 * so that (rare) case rebuilds it at the next compute call.
 *
 * ABI 1.1: set_state / predict move p->pos (plugin/base/state.c) and then
 * mark the tree moved exactly as update_positions does, so a run through
 * predict sees the same refits, the same rebuild=auto decisions and the
 * same forces, bit for bit, as one through update_positions of the same
 * positions. A source subset gets a tree of its own (sub), built from the
 * subset alone (cost O(n_src log n_src)), refitted when particles move or
 * masses change and rebuilt when the main tree is or the subset changes;
 * its sources carry particle indices as ids, so active particles skip
 * themselves whether or not they are sources. The main tree still supplies
 * the i-groups (targets need not be sources); while a subset is set its
 * refits skip the moments, which it does not use.
 *
 * ABI 1.2: set_state_jerk and get_velocities are plugin/base's (third-order
 * prediction, then the same refit as predict). compute_forces_ex gives acc
 * and pot exactly as compute_forces, nearest neighbours and neighbour
 * lists by radius from exact searches of the source tree
 * (octree/tree_search.c), and pair_step and the lists by step exact, bit
 * for bit a pass over every source, from a pruned search
 * (octree/pair_search.c: ~100 tau_ij and ~200 cell bounds per active
 * particle on Plummer and galaxy models at N = 4096-16384). Still no
 * GP_CAP_NEIGHBOURS: measured at N = 16384, one thread, nn and pair_step
 * together cost 9-13x a force call (scalar double searches against the
 * vectorised walk; bench/results/abi-outputs/raw/abi12-outputs.md), not the same order.
 * The jerk (GP_CAP_JERK) as gravplug.h defines a tree's: exact for the sources
 * summed particle by particle, for an accepted cell the monopole jerk of
 * its mass moving with its mass-weighted velocity plus the time derivative
 * of its quadrupole force, so that the jerk is the derivative of this
 * plugin's own acc (octree/tree_jerk.c); the jerk pass of each group sums
 * the cells and particles its force walk recorded (oct_walk_recorded, float
 * kernels in the float modes). Sources
 * without a state (set_particles and update_positions only) move with
 * velocity zero. An active subset's groups hold its co-active particles, so
 * a particle's cells change with who else is active; subset_spheres =
 * whole walks each with its whole tree group's sphere instead, and a
 * particle gets a full call's bits (what Hermite's derivatives need).
 *
 * Groups are compact runs of the key order (octree/tree_state.c). Float modes
 * work in units of the typical leaf size and of the heaviest source mass
 * (octree/cpu_walk.h), so any input scale fits; a float-mode group that meets
 * coordinates or multipoles outside the float range is redone in double
 * (cpu_walk_group.c), so extreme coordinates cost time, never correctness. Results
 * that overflow double are refused with a sentence (gp_check_outputs).
 * compute_field sorts the points along the same curve and walks them in
 * groups the same way; so does compute_field_ex, whose points each skip
 * the source they exclude (field_walk).
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin_base.h"
#include "octree/mac.h"
#include "octree/tree_state.h"
#include "octree/cpu_walk.h"
#include "octree/cpu_spaces.h"
#include "octree/cpu_driver.h"
#include "octree/cpu_targets.h"
#include "octree/outputs_ex.h"
#include "octree/tree_jerk.h"
#include "octree/tree_drift.h"
#include "base/predict_lazy.h"
#include "cpu-tree/exact_few.h"

#define PLUGIN_NAME "cpu-tree"

static const gp_param_info params[] = {
    GP_PARAM_ROW_G,
    GP_PARAM_ROW_EPS,
    OCT_PARAM_ROWS_WALK,
    {"rebuild", GP_PARAM_ENUM, "auto", "auto|always|N",
     "after update_positions: auto (refit until a rebuild pays off), always, or rebuild "
     "every N force calls and refit in between"},
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float interactions and sums; mixed: float interactions, double sums (over "
     "blocks of 4 float terms, 16 on AVX2 and AVX-512); double"},
    OCT_PARAM_ROWS_GROUPS,
    {"keys", GP_PARAM_ENUM, "peano-hilbert", "peano-hilbert|morton",
     "space-filling curve the particles are sorted along"},
    GP_PARAM_ROW_THREADS,
    {"subset_spheres", GP_PARAM_ENUM, "active", "active|whole",
     "an active subset's i-group sphere: around its active particles (fewest interactions), or "
     "around its whole tree group, so that a particle's force does not depend on which others "
     "are active (smooth in time between rebuilds: for Hermite; with mac = acceleration the "
     "group's |a_old| still comes from its active particles)"},
    {"direct_max", GP_PARAM_INT, "8", "[0,1024]",
     "an active subset of at most this many particles, or a compute_field or compute_field_ex "
     "of at most this many points, gets exact forces, summed over every source, instead of a tree refit that "
     "would cost more (0: always the tree; an active subset not with subset_spheres = whole)"},
    OCT_PARAM_ROW_DRIFT,
};
/* indices: octree/cpu_driver.h, then cpu-tree's own */
enum { P_SPHERES = OCT_N_PARAMS, P_DIRECT, P_DRIFT, N_PARAMS };

struct gp_solver {
    gp_base base;            /* first: errors, params, particle copy, stats */
    oct_tree tree;
    oct_tree_age age;        /* how it was built, how it has aged since     */
    double *aold;            /* previous |a| per particle, < 0: none yet    */
    int mass_dirty;          /* update_masses since the moments were made   */
    int rebase;              /* source subset changed: new base_cost        */
    /* ABI 1.1 source subset (base.p.src != NULL): its own tree */
    oct_tree sub;
    int sub_state;           /* SUB_CURRENT, SUB_REFIT or SUB_BUILD         */
    int sub_mass_dirty;
    uint32_t *sub_pid;       /* particle index of each of sub's sources     */
    double *sub_pos, *sub_mass; /* the subset gathered (3 n_src, n_src)     */
    exact_few_ws exact;      /* sources of the exact sums (exact_few)       */
    oct_spaces spaces;       /* the walks' per-thread workspaces            */
    gp_lazy_predict lazy;    /* predict owed (drift = on)                   */
    oct_drift drift;         /* the tree drifted with the held state        */
    int fast;                /* this call's walks read the drifted tree     */
    /* set_particles given the particles the tree was just built from (a
     * host re-sending them, as gp_sim does before each field call between
     * steps) keeps the tree for the first call that walks one, instead of
     * building the same tree again; kept_age: how it was built */
    int tree_kept;
    oct_tree_age kept_age;
};
enum { SUB_CURRENT = 0, SUB_REFIT = 1, SUB_BUILD = 2 };

/* rebuilt: a rebuild of moved particles (oct_tree_rebuilt), else a new tree */
static gp_status build_tree(gp_solver *s, size_t n, const double *pos, const double *mass, int rebuilt)
{
    double t0 = gp_wtime();
    oct_tree fresh;
    int rc = oct_build_threaded(&s->base, &fresh, n, pos, mass,
                                (uint32_t)gp_param_int(&s->base, OCT_P_GROUP),
                                (uint32_t)gp_param_int(&s->base, OCT_P_LEAF),
                                oct_param_keys(&s->base), NULL);
    if (rc)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "no memory to build the tree of %zu particles; free memory or use "
                       "fewer particles", n);
    oct_tree old = s->tree;
    s->tree = fresh;
    oct_tree_free(&old);
    s->drift.anchored = 0;
    if (rebuilt) oct_tree_rebuilt(&s->age, &s->base);
    else oct_tree_built(&s->age, &s->base);
    s->mass_dirty = 0;
    s->sub_state = SUB_BUILD;     /* the subset tree follows the main one */
    s->base.stats.tree_builds += 1;
    s->base.stats.seconds_build += gp_wtime() - t0;
    return GP_OK;
}

static gp_status ensure_main_tree(gp_solver *s);

static void sub_free(gp_solver *s)
{
    oct_tree_free(&s->sub);
    free(s->sub_pid); free(s->sub_pos); free(s->sub_mass);
    s->sub_pid = NULL; s->sub_pos = s->sub_mass = NULL;
    s->sub_state = SUB_BUILD;
}

/* Gathers the source subset's positions (and masses) from the base copy. */
static void sub_gather(gp_solver *s, int masses)
{
    const gp_particles *p = &s->base.p;
    const size_t ns = p->n_src;
#pragma omp parallel for schedule(static) num_threads(oct_param_threads(&s->base)) if (ns > 32768)
    for (size_t k = 0; k < ns; k++) {
        const double *x = &p->pos[3 * (size_t)p->src[k]];
        s->sub_pos[3 * k] = x[0]; s->sub_pos[3 * k + 1] = x[1]; s->sub_pos[3 * k + 2] = x[2];
        if (masses) s->sub_mass[k] = p->mass[p->src[k]];
    }
}

/* The subset tree matches the subset's positions and masses. */
static void sub_current(gp_solver *s)
{
    s->sub_state = SUB_CURRENT;
    s->sub_mass_dirty = 0;
}

/* The source subset's own tree, from the subset alone. */
static gp_status sub_build(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    const size_t ns = p->n_src;
    double t0 = gp_wtime();
    if (!s->sub_pos) {
        s->sub_pos = malloc(3 * ns * sizeof *s->sub_pos);
        s->sub_mass = malloc(ns * sizeof *s->sub_mass);
        s->sub_pid = malloc(ns * sizeof *s->sub_pid);
        if (!s->sub_pos || !s->sub_mass || !s->sub_pid) {
            sub_free(s);
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "no memory for the tree of %zu sources; free memory or use a "
                           "smaller source subset", ns);
        }
    }
    sub_gather(s, 1);
    oct_tree fresh;
    int rc = oct_build_threaded(&s->base, &fresh, ns, s->sub_pos, s->sub_mass, s->age.group,
                                s->age.leaf, (gp_key_kind)s->age.keys, NULL);
    if (rc) {
        sub_free(s);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "no memory for the tree of %zu sources; free memory or use a "
                       "smaller source subset", ns);
    }
    oct_tree_free(&s->sub);
    s->sub = fresh;
    for (uint32_t k = 0; k < fresh.nsrc; k++) s->sub_pid[k] = p->src[fresh.order[fresh.sid[k]]];
    sub_current(s);
    s->base.stats.tree_builds += 1;
    s->base.stats.seconds_build += gp_wtime() - t0;
    return GP_OK;
}

static gp_status sub_ensure(gp_solver *s)
{
    if (s->sub_state == SUB_BUILD) return sub_build(s);
    if (s->sub_state == SUB_CURRENT && !s->sub_mass_dirty) return GP_OK;
    double t0 = gp_wtime();
    int masses = s->sub_mass_dirty;
    sub_gather(s, masses);
    int rc = oct_refit_threaded(&s->base, &s->sub, s->sub_pos, masses ? s->sub_mass : NULL, 1);
    if (rc == 1) return sub_build(s);   /* a massless member gained mass */
    if (rc) return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory to refit the source tree");
    sub_current(s);
    s->base.stats.tree_refits += 1;
    s->base.stats.seconds_moments += gp_wtime() - t0;
    return GP_OK;
}

/* Makes the tree current for the stored particles (see the file comment). */
static gp_status ensure_tree(gp_solver *s)
{
    gp_status st = ensure_main_tree(s);
    if (st != GP_OK) return st;
    if (s->base.p.src) return sub_ensure(s);
    if (s->tree.moments_stale) {
        double t0 = gp_wtime();
        int rc = oct_moments_threaded(&s->base, &s->tree);
        if (rc) return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory to refit the tree");
        s->base.stats.seconds_moments += gp_wtime() - t0;
    }
    return GP_OK;
}

/* Positions changed (update_positions, set_state, predict). */
static void mark_moved(gp_solver *s)
{
    s->age.moved = 1;
    s->tree_kept = 0;
    if (s->sub_state == SUB_CURRENT) s->sub_state = SUB_REFIT;
}

/* The kept tree as a fresh build would leave it (build_tree's state, with
 * no build counted): the same particles and layout give the same tree. */
static void reuse_kept_tree(gp_solver *s)
{
    s->tree_kept = 0;
    s->drift.anchored = 0;
    oct_tree_built(&s->age, &s->base);
    s->mass_dirty = 0;
    s->sub_state = SUB_BUILD;
}

static gp_status ensure_main_tree(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    if (oct_layout_changed(&s->age, &s->base)) {
        if (s->tree_kept && !oct_layout_changed(&s->kept_age, &s->base)) {
            reuse_kept_tree(s);
            return GP_OK;
        }
        return build_tree(s, p->n, p->pos, p->mass, 0);
    }
    if (!s->age.moved && !s->mass_dirty) return GP_OK;
    int rebuild = oct_rebuild_due(&s->base, &s->age, p->n);
    /* masses alone never rebuild: the moments are refitted */
    if (rebuild && s->age.moved) return build_tree(s, p->n, p->pos, p->mass, 1);
    double t0 = gp_wtime();
    /* with a source subset the main tree only groups the targets: its
     * moments wait until the subset is cleared (ensure_tree) */
    int rc = oct_refit_threaded(&s->base, &s->tree, p->pos, s->mass_dirty ? p->mass : NULL,
                                p->src == NULL);
    if (rc == 1) return build_tree(s, p->n, p->pos, p->mass, 0); /* a massless particle gained mass */
    if (rc)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory to refit the tree");
    s->age.moved = 0;
    s->age.refitted = 1;
    s->mass_dirty = 0;
    s->drift.anchored = 0;
    s->base.stats.tree_refits += 1;
    s->base.stats.seconds_moments += gp_wtime() - t0;
    return GP_OK;
}

/* The targets of one force pass: runs rb/rc (i-groups) over a sequence of
 * targets u, each the key-sorted particle tix[u] (NULL: u itself) at
 * (x, y, z)[u], its result written to slot[u] (NULL: its particle index). */
typedef struct cpu_tree_targets {
    uint32_t nruns;
    const uint32_t *rb, *rc;
    const uint32_t *tix;
    const double *x, *y, *z;
    const size_t *slot;
} cpu_tree_targets;

/* The sources of the next walk: the main tree, or the source subset's
 * tree (whose ids are particle indices). Prepares its cells (records too
 * when asked: the jerk walk reads them). */
static oct_sources walk_sources(gp_solver *s, int mac, double theta, int records)
{
    if (s->fast) {   /* cells made as the walk meets them (tree_drift.h) */
        oct_drift_to(&s->drift, s->lazy.t, mac, theta);
        oct_sources src = oct_tree_sources(&s->tree);
        src.drift = &s->drift;
        return src;
    }
    oct_tree *st = s->base.p.src ? &s->sub : &s->tree;
    /* a drifted tree makes its cells in both layouts */
    const int both = s->drift.anchored ? OCT_PREPARE_RECORDS | OCT_PREPARE_COLUMNS : 0;
    oct_tree_prepare_cells(st, mac, theta,
                           oct_walk_layouts((oct_precision)gp_param_enum(&s->base, OCT_P_PREC)) |
                               (records ? OCT_PREPARE_RECORDS : 0) | both);
    oct_sources src = oct_tree_sources(st);
    if (s->base.p.src) src.id = s->sub_pid;
    return src;
}

/* The sources' and cells' velocities for a jerk pass (jerk_sources_make). */
typedef struct jerk_input {
    oct_jerk_sources js;
    double *buf;            /* 3 nsrc source velocities + OCT_JERK_CELL ncells */
} jerk_input;

/* The jerk sources of the tree the walk reads (jerk_input.buf to free). */
static int jerk_sources_make(gp_solver *s, jerk_input *in)
{
    const oct_tree *st = s->base.p.src ? &s->sub : &s->tree;
    return oct_jerk_sources_make(st, s->base.p.src ? s->sub_pid : NULL, &s->base.p,
                                 oct_param_threads(&s->base), &in->buf, &in->js);
}

/* One force pass over the target groups. Writes acc/pot (and, with jin,
 * the jerk) by slot. Returns 0, or -1 when out of memory. */
static int force_pass(gp_solver *s, int mac, double theta, int prepass, const cpu_tree_targets *T,
                      double *acc, double *pot, const jerk_input *jin, double *jerk,
                      uint64_t *pp_out, uint64_t *pc_out)
{
    const oct_tree *t = &s->tree;
    const oct_sources src = walk_sources(s, mac, theta, jerk != NULL);
    const int pid_self = s->base.p.src != NULL;
    const oct_walk_params wp = oct_param_walk(&s->base, mac, prepass);
    const uint32_t G = t->max_group;
    int failed = 0;
    uint64_t pp = 0, pc = 0;
    /* only the acceleration MAC reads a group's smallest |a_old|; the
     * other MACs skip the load, a cache miss per target (key order is not
     * the particles' order) */
    const double *aold = mac == GP_MAC_ACCELERATION ? s->aold : NULL;
    const uint32_t ng = T->nruns;
    const int whole = gp_param_enum(&s->base, P_SPHERES) == 1;
    const int threads = oct_param_threads(&s->base);
    if (oct_spaces_reserve(&s->spaces, threads, G)) return -1;

#pragma omp parallel num_threads(threads) reduction(+ : pp, pc) reduction(| : failed)
    {
        oct_workspace *ws = oct_spaces_walk(&s->spaces, omp_get_thread_num());
        double *buf = malloc((jerk ? 13 : 7) * (size_t)G * sizeof *buf);
        int32_t *self = malloc((size_t)G * sizeof *self);
        size_t *out = malloc((size_t)G * sizeof *out);
        oct_jerk_workspace *jws = jerk ? oct_spaces_jerk(&s->spaces, omp_get_thread_num()) : NULL;
        int ok_mem = ws && buf && self && out && (!jerk || jws);
        if (!ok_mem) failed = 1;
        else oct_workspace_record(ws, jerk != NULL);   /* the jerk reads the walk's lists */
#pragma omp for schedule(dynamic, 1)
        for (uint32_t k = 0; k < ng; k++) {
            if (!ok_mem) continue;
            uint32_t b = T->rb[k], e = b + T->rc[k], nt = 0;
            double *x = buf, *y = buf + G, *z = buf + 2 * G;
            double amin = HUGE_VAL;
            for (uint32_t u = b; u < e; u++) {
                uint32_t i = T->tix ? T->tix[u] : u;
                x[nt] = T->x[u]; y[nt] = T->y[u]; z[nt] = T->z[u];
                self[nt] = (int32_t)(pid_self ? t->order[i] : i);
                out[nt] = T->slot ? T->slot[u] : t->order[i];
                if (aold) {
                    double a = aold[t->order[i]];
                    amin = a < amin ? a : amin;
                }
                nt++;
            }
            oct_group grp = { .n = nt, .x = x, .y = y, .z = z, .self = self, .amin = amin,
                             .ax = buf + 3 * G, .ay = buf + 4 * G, .az = buf + 5 * G,
                             .pot = buf + 6 * G };
            if (whole && T->tix)
                oct_whole_group_sphere(t, T->tix[b], grp.centre, &grp.radius);
            else
                gp_group_sphere(x, y, z, NULL, 0, nt, grp.centre, &grp.radius);
            oct_walk_group(&src, &wp, ws, &grp, &pp, &pc);
            for (uint32_t j = 0; j < nt; j++) {
                acc[3 * out[j]] = grp.ax[j];
                acc[3 * out[j] + 1] = grp.ay[j];
                acc[3 * out[j] + 2] = grp.az[j];
                if (pot) pot[out[j]] = grp.pot[j];
            }
            if (!jerk) continue;
            /* the same group (sphere, |a_old|), so the same cells */
            double *tv = buf + 7 * G, *jg = buf + 10 * G;
            for (uint32_t u = b, j = 0; u < e; u++, j++)
                gp_state_velocity(&s->base.p, t->order[T->tix ? T->tix[u] : u], &tv[3 * j]);
            if (oct_jerk_group(&src, &jin->js, &wp, jws, &grp, oct_walk_recorded(ws, &src, &grp), tv, jg)) {
                failed = 1;
                continue;
            }
            for (uint32_t j = 0; j < nt; j++)
                for (int d = 0; d < 3; d++) jerk[3 * out[j] + d] = jg[3 * j + d];
        }
        free(buf); free(self); free(out);
    }
    *pp_out += pp;
    *pc_out += pc;
    return failed ? -1 : 0;
}

/* ---- the ABI entry points ----------------------------------------------- */

GP_PLUGIN_COMMON_ENTRIES(cpu_tree, PLUGIN_NAME, params, N_PARAMS)

static gp_status cpu_tree_init(gp_solver **out, const gp_init_args *args)
{
    return gp_solver_create(out, sizeof **out, PLUGIN_NAME, args, params, N_PARAMS);
}

static void cpu_tree_finalize(gp_solver *s)
{
    if (!s) return;
    oct_tree_free(&s->tree);
    sub_free(s);
    exact_few_free(&s->exact);
    oct_spaces_free(&s->spaces);
    oct_drift_free(&s->drift);
    gp_lazy_free(&s->lazy);
    free(s->aold);
    gp_base_free(&s->base);
    free(s);
}

static int drift_on(const gp_solver *s);

static gp_status cpu_tree_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_particles");
    gp_status st = gp_check_particles(&s->base, n, pos, mass);
    if (st != GP_OK) return st;
    if (n > (size_t)INT32_MAX)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "set_particles: %zu particles is more than cpu-tree's limit of %d "
                       "(31-bit indices); split the set or use another plugin", n, INT32_MAX);
    double *aold = malloc(n * sizeof *aold);
    if (!aold)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "set_particles: no memory for %zu particles; free memory or use fewer", n);
    /* the tree stays when it is what a build of these particles gives:
     * made from the stored ones (not refitted, nothing moved or reweighed
     * since) and they are these, bit for bit */
    const gp_particles *p = &s->base.p;
    const int fresh = (s->tree_kept || (s->age.have && !s->age.moved && !s->age.refitted)) && !s->mass_dirty &&
                      !s->tree.moments_stale && !drift_on(s);
    const int keep = fresh && p->have && p->n == n && memcmp(p->pos, pos, 3 * n * sizeof *pos) == 0 &&
                     memcmp(p->mass, mass, n * sizeof *mass) == 0;
    /* stored first: a failure leaves the instance as it was */
    st = gp_particles_store(&s->base, n, pos, mass);
    if (st != GP_OK) {
        free(aold);
        return st;
    }
    /* otherwise the tree is built by the first call that walks it: a few
     * field points or active particles take exact sums and need none (a
     * host that re-sends the particles before each field call, as gp_sim
     * does between steps, would otherwise build one every time) */
    if (keep && !s->tree_kept) s->kept_age = s->age;
    s->tree_kept = keep;
    if (!keep) oct_tree_free(&s->tree);
    s->age.have = 0;
    s->drift.anchored = 0;
    for (size_t i = 0; i < n; i++) aold[i] = -1;
    free(s->aold);
    s->aold = aold;
    sub_free(s);            /* set_particles restores all sources */
    s->mass_dirty = 0;
    gp_lazy_reset(&s->lazy);
    return GP_OK;
}

static gp_status cpu_tree_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status st = gp_particles_update(&s->base, pos);
    if (st != GP_OK) return st;
    gp_lazy_reset(&s->lazy);   /* every position given, the state forgotten */
    s->drift.anchored = 0;
    mark_moved(s);
    return GP_OK;
}

static gp_status cpu_tree_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    return gp_particles_set_active(&s->base, n_active, index);
}

/* ---- ABI 1.1 ------------------------------------------------------------- */

static int drift_on(const gp_solver *s)
{
    return gp_param_enum(&s->base, P_DRIFT) == 1;
}

/* Pays an owed predict (drift = on) before anything that reads every
 * position. */
static gp_status settle(gp_solver *s)
{
    return gp_lazy_settle(&s->lazy, &s->base);
}

/* A state given to a subset: the positions moved; a drifted tree takes
 * the new paths into its cells, or, for a subset it does not take
 * (gp_drift_takes), is anchored anew at the next call. */
static void state_given(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                        const double *vel, const double *acc, const double *jerk,
                        const double *t)
{
    gp_lazy_note_state(&s->lazy, n_sub, index, pos, vel, acc, jerk, t);
    oct_drift_update(&s->drift, n_sub, index);
    mark_moved(s);
}

static gp_status cpu_tree_set_state(gp_solver *s, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state");
    gp_status st = gp_lazy_reserve(&s->lazy, &s->base, n_sub);
    if (st == GP_OK) st = gp_state_set(&s->base, n_sub, index, pos, vel, acc, t);
    if (st == GP_OK && n_sub) state_given(s, n_sub, index, pos, vel, acc, NULL, t);
    return st;
}

/* Predicts with OpenMP (state.c), then the tree is refitted or rebuilt at
 * the next compute call exactly as after update_positions: a predict counts
 * as one position update, moved or not, so both paths make the same
 * rebuild decisions. */
static gp_status cpu_tree_predict(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    gp_status st = gp_lazy_predict_to(&s->lazy, &s->base, t, drift_on(s));
    if (st == GP_OK) mark_moved(s);
    return st;
}

/* Under an owed predict, the subset's predictions alone. */
static gp_status cpu_tree_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    return gp_lazy_positions(&s->lazy, &s->base, n_sub, index, pos);
}

static gp_status cpu_tree_get_velocities(gp_solver *s, size_t n_sub, const uint32_t *index,
                                         double *vel)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_velocities");
    gp_status st = settle(s);
    return st != GP_OK ? st : gp_velocities_get(&s->base, n_sub, index, vel);
}

static gp_status cpu_tree_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset,
                                         uint32_t *list, size_t *needed)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_neighbours");
    return gp_neighbours_get(&s->base, cap, offset, list, needed);
}

static gp_status cpu_tree_set_source_subset(gp_solver *s, size_t n_src, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_source_subset");
    gp_status st = gp_sources_set(&s->base, n_src, index);
    if (st != GP_OK) return st;
    sub_free(s);             /* built from the new subset at the next call */
    s->rebase = 1;
    return GP_OK;
}

static gp_status cpu_tree_update_masses(gp_solver *s, size_t n_sub, const uint32_t *index,
                                  const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_masses");
    gp_status st = gp_masses_update(&s->base, n_sub, index, mass);
    if (st == GP_OK && n_sub) {
        s->tree_kept = 0;
        s->mass_dirty = 1;       /* moments refitted at the next call */
        s->sub_mass_dirty = 1;
    }
    return st;
}

/* Active subsets: the active particles of each tree group form a group of
 * their own, with a sphere around them only, listed in the tree's key
 * order. (Merging sparse neighbouring groups along the curve, GOTHIC's
 * remedy for the low-N_i regime, was tried: with merged spheres up to 1.5x
 * a tree group's, a random 1% cost 2.5x the interactions for no measurable
 * gain on the shared test machine, and the clustered "inner" case got
 * slower; see bench/results/cpu-tree/raw/cpu-tree.md.) The groups depend only
 * on the particles and the active set, never on threads or on the order the
 * caller listed them in; memory and work are O(n_active log n_active). */
typedef struct subset_groups {
    uint32_t nruns, *rb, *rc;
    uint32_t *tix;
    double *x, *y, *z;
    size_t *slot;
} subset_groups;

static void subset_groups_free(subset_groups *g)
{
    free(g->rb); free(g->rc); free(g->tix); free(g->x); free(g->slot);
    memset(g, 0, sizeof *g);
}

static int make_subset_groups(const oct_tree *t, const gp_particles *p, int nthreads,
                              subset_groups *g)
{
    size_t na = p->n_active, m = na ? na : 1;
    g->tix = malloc(m * sizeof *g->tix);
    g->x = malloc(3 * m * sizeof *g->x);
    g->slot = malloc(m * sizeof *g->slot);
    g->rb = malloc(m * sizeof *g->rb);
    g->rc = malloc(m * sizeof *g->rc);
    if (!g->tix || !g->x || !g->slot || !g->rb || !g->rc) return -1;
    g->y = g->x + na;
    g->z = g->x + 2 * na;
    return oct_active_groups(t, na, p->active, nthreads, g->tix, g->slot, g->x, g->y, g->z, g->rb,
                             g->rc, &g->nruns);
}

/* The end of a walk: its buffers could not all be had (failed), or the
 * n results it wrote, checked for values outside double's range. */
static gp_status walk_finished(gp_solver *s, const char *fn, int failed, size_t n, const double *acc,
                               const double *pot)
{
    if (failed)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the walk buffers; free memory or use fewer threads", fn);
    return gp_check_outputs(&s->base, fn, n, acc, pot);
}

/* A handful of active particles: their exact sums over every source cost
 * less than the refit, key-order copy and cell preparation a moved tree
 * needs (cpu-tree/exact_few.h), so the tree is left as it is for the next
 * larger call. Returns GP_OK with *done = 1 when it answered; *done = 0
 * when the tree must (too many targets, whole spheres, or a result out of
 * double's range). */
static gp_status exact_few(gp_solver *s, const char *fn, double *acc, double *pot, double *jerk,
                           int *done)
{
    const gp_particles *p = &s->base.p;
    *done = 0;
    if (!p->active || p->n_active > (size_t)gp_param_int(&s->base, P_DIRECT) ||
        gp_param_enum(&s->base, P_SPHERES) == 1)
        return GP_OK;
    double t0 = gp_wtime(), eps = gp_param_double(&s->base, OCT_P_EPS);
    uint64_t pairs;
    int rc = exact_few_forces(&s->exact, p, gp_param_double(&s->base, OCT_P_G), eps * eps,
                              oct_param_threads(&s->base), acc, pot, jerk, &pairs);
    if (rc < 0)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory to gather %zu sources for their exact sums; free "
                       "memory", fn, p->n);
    if (rc > 0) return GP_OK;
    oct_store_abs_acc(&s->base, p->n_active, acc, s->aold);
    s->base.stats.force_calls += 1;
    s->base.stats.pp_interactions += pairs;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    *done = 1;
    return GP_OK;
}

/* Whether this call can walk the drifted tree (drift = on): a block
 * step's active subset (one gp_drift_takes) after a predict with no state
 * given since, acc and pot only, on
 * a tree anchored and not due for a rebuild. Anything else settles the
 * owed predict and refits, and anchors the tree anew (anchor_drift). */
static int drift_fast(const gp_solver *s, const double *jerk)
{
    const gp_particles *p = &s->base.p;
    return drift_on(s) && s->drift.anchored && !jerk && gp_lazy_all_predicted(&s->lazy) &&
           p->active && gp_drift_takes(p->n_active, p->n) && !p->src && !p->group && !s->mass_dirty &&
           gp_param_enum(&s->base, P_SPHERES) == 0 && !oct_layout_changed(&s->age, &s->base) &&
           !oct_rebuild_due(&s->base, &s->age, p->n);
}

/* After the normal path made the tree current: anchors the drift there
 * when the next block steps can use it. Out of memory only leaves it
 * unanchored (the normal path then serves). */
static void anchor_drift(gp_solver *s, int mac, double theta)
{
    const gp_particles *p = &s->base.p;
    if (!drift_on(s) || s->drift.anchored || !gp_lazy_all_predicted(&s->lazy) || p->src ||
        !s->tree.src_alias)
        return;
    double t0 = gp_wtime();
    (void)oct_drift_anchor(&s->drift, &s->tree, p, s->lazy.t, mac, theta);
    s->base.stats.seconds_moments += gp_wtime() - t0;
}

/* The drifted tree at the owed predict's time: the active particles'
 * leaves made current (the targets read their positions). */
static void drift_targets(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    oct_drift_targets(&s->drift, s->lazy.t, gp_param_enum(&s->base, OCT_P_MAC),
                      gp_param_double(&s->base, OCT_P_THETA), p->n_active, p->active,
                      oct_param_threads(&s->base));
}

/* compute_forces, and compute_forces_ex's acc, pot and jerk (jerk NULL:
 * none; the acc and pot are the same bits either way). may_drift: the
 * caller asks nothing the drifted tree cannot answer. */
static gp_status compute(gp_solver *s, const char *fn, double *acc, double *pot, double *jerk,
                         int may_drift)
{
    gp_status st;
    const int fast = may_drift && drift_fast(s, jerk);
    if (fast) {
        drift_targets(s);
    } else {
        if ((st = settle(s)) != GP_OK) return st;
        int done;
        st = exact_few(s, fn, acc, pot, jerk, &done);
        if (st != GP_OK || done) return st;
        st = ensure_tree(s);
        if (st != GP_OK) return st;
        anchor_drift(s, gp_param_enum(&s->base, OCT_P_MAC), gp_param_double(&s->base, OCT_P_THETA));
    }
    double t0 = gp_wtime();
    jerk_input jin = { 0 };
    if (jerk && jerk_sources_make(s, &jin))
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the velocities of the sources and cells; free "
                       "memory", fn);
    oct_tree *t = &s->tree;
    const gp_particles *p = &s->base.p;
    size_t na = p->n_active;
    int all = p->active == NULL;
    cpu_tree_targets T = { .nruns = t->ngroups, .rb = t->gbegin, .rc = t->gcount, .tix = NULL,
                     .x = t->x, .y = t->y, .z = t->z, .slot = NULL };
    subset_groups sub = { 0 };
    if (!all) {
        if (make_subset_groups(t, p, oct_param_threads(&s->base), &sub)) {
            subset_groups_free(&sub);
            free(jin.buf);
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "%s: no memory to group %zu active particles; free "
                           "memory or use fewer threads", fn, na);
        }
        T = (cpu_tree_targets){ .nruns = sub.nruns, .rb = sub.rb, .rc = sub.rc, .tix = sub.tix,
                          .x = sub.x, .y = sub.y, .z = sub.z, .slot = sub.slot };
    }
    int mac = gp_param_enum(&s->base, OCT_P_MAC);
    uint64_t pp = 0, pc = 0;
    int rc = 0;
    s->fast = fast;
    if (mac == GP_MAC_ACCELERATION) {
        if (oct_aold_from_state(&s->base, na, s->aold)) {
            /* GADGET-2's start, for particles with neither an earlier |a|
               nor a held state's: a bh pass gives the |a| the criterion
               needs; it only sets a tolerance, so a coarse one
               (OCT_PREPASS_THETA, monopoles) does */
            uint64_t pp0 = 0, pc0 = 0;
            rc = force_pass(s, GP_MAC_BH, OCT_PREPASS_THETA, 1, &T, acc, NULL, NULL, NULL, &pp0,
                            &pc0);
            if (!rc) oct_store_abs_acc(&s->base, na, acc, s->aold);
            s->base.stats.pp_interactions += pp0;
            s->base.stats.pc_interactions += pc0;
        }
    }
    if (!rc)
        rc = force_pass(s, mac, gp_param_double(&s->base, OCT_P_THETA), 0, &T, acc, pot, &jin,
                        jerk, &pp, &pc);
    s->fast = 0;
    /* the drifted tree's sources and cells are no longer the positions'
     * moments: a normal call refits first (moved stays set), and this
     * call's cost counts as an aged tree's */
    if (fast) s->age.refitted = 1;
    subset_groups_free(&sub);
    free(jin.buf);
    if ((st = walk_finished(s, fn, rc, na, acc, pot)) != GP_OK) return st;
    if (jerk && (st = gp_check_outputs(&s->base, fn, na, jerk, NULL)) != GP_OK) return st;
    oct_store_abs_acc(&s->base, na, acc, s->aold);
    /* rebuild=auto bookkeeping, in interactions (deterministic) */
    oct_count_force_call(&s->base, &s->age, s->rebase, pp, pc, na, t0);
    s->rebase = 0;
    return GP_OK;
}

static gp_status cpu_tree_compute_forces_ex(gp_solver *s, const gp_outputs *out);

static gp_status cpu_tree_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    if (s->base.p.group) {   /* the groups' rule: through compute_forces_ex */
        gp_outputs o = gp_outputs_forces(acc, pot);
        return cpu_tree_compute_forces_ex(s, &o);
    }
    gp_status st = gp_check_compute(&s->base, acc);
    if (st != GP_OK) return st;
    return compute(s, "compute_forces", acc, pot, NULL, 1);
}

static gp_status field_ex_few(gp_solver *s, const char *fn, const gp_field_points *at,
                              const gp_outputs *o, int *done);

/* The field at the points of at (compute_field and compute_field_ex):
 * points sorted along the tree's curve and cut into groups of group_size,
 * then the same walk (bh in place of acceleration, which has no previous
 * |a| at a point). A point that excludes a particle skips it as a target
 * skips itself, by index in an opened leaf; its group's sphere reaches
 * the excluded particle too, so that no accepted cell holds it (the MAC
 * never accepts a cell whose box the sphere touches): a point far from
 * the particle it excludes costs its group more cells, never accuracy.
 * jerk (not NULL): the tree jerk at the points with their velocities. */
static gp_status field_walk(gp_solver *s, const char *fn, const gp_field_points *at, double *acc,
                            double *pot, double *jerk)
{
    const size_t m = at->n;
    const double *points = at->pos;
    gp_status st = settle(s);
    if (st == GP_OK) st = ensure_tree(s);
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    oct_tree *t = &s->tree;
    uint32_t *perm = malloc(m * sizeof *perm);
    if (!perm || m > UINT32_MAX) {
        free(perm);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory to sort %zu points; pass fewer at a time", fn, m);
    }
    /* points in key order, cut into runs of G, loose runs split */
    const uint32_t G = t->max_group;
    uint32_t nruns = (uint32_t)((m + G - 1) / G);
    double *px = malloc(3 * m * sizeof *px);
    uint32_t *rb = malloc((size_t)nruns * sizeof *rb), *rc = malloc((size_t)nruns * sizeof *rc);
    int grouped = px && rb && rc ? oct_field_groups(m, points, t->keys, t->lo, t->inv_cell, G, perm,
                                                    px, px + m, px + 2 * m, &nruns, &rb, &rc)
                                 : -2;
    if (grouped) {
        free(px); free(rb); free(rc); free(perm);
        if (grouped == -1)
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "%s: no memory to sort %zu points; pass fewer at a time", fn, m);
        if (grouped == -3)
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory to sort points", fn);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory to group %zu points; pass fewer at a time", fn, m);
    }
    jerk_input jin = { 0 };
    if (jerk && jerk_sources_make(s, &jin)) {
        free(px); free(rb); free(rc); free(perm);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the velocities of the sources and cells; free "
                       "memory", fn);
    }
    int mac = gp_param_enum(&s->base, OCT_P_MAC);
    if (mac == GP_MAC_ACCELERATION) mac = GP_MAC_BH;
    const oct_sources src = walk_sources(s, mac, gp_param_double(&s->base, OCT_P_THETA), jerk != NULL);
    const oct_walk_params wp = oct_param_walk(&s->base, mac, 0);
    /* the walk's self ids: key-sorted indices of the main tree, particle
     * indices of a source subset's (cpu_walk.h) */
    const uint32_t *ex = at->exclude;
    const int pid_self = s->base.p.src != NULL;
    const double *ppos = s->base.p.pos;
    uint64_t pp = 0, pc = 0;
    int failed = 0;
    const int threads = oct_param_threads(&s->base);
    /* out of memory here leaves slots missing: their threads fail below */
    (void)oct_spaces_reserve(&s->spaces, threads, G);
#pragma omp parallel num_threads(threads) reduction(+ : pp, pc) reduction(| : failed)
    {
        oct_workspace *ws = oct_spaces_walk(&s->spaces, omp_get_thread_num());
        /* results (4 G), the sphere's points (6 G: the targets and the
         * particles they exclude), jerk velocities and results (6 G) */
        double *buf = malloc((jerk ? 16 : 10) * (size_t)G * sizeof *buf);
        int32_t *self = ex ? malloc((size_t)G * sizeof *self) : NULL;
        oct_jerk_workspace *jws = jerk ? oct_spaces_jerk(&s->spaces, omp_get_thread_num()) : NULL;
        int ok_mem = ws && buf && (!ex || self) && (!jerk || jws);
        if (!ok_mem) failed = 1;
        else oct_workspace_record(ws, jerk != NULL);   /* the jerk reads the walk's lists */
#pragma omp for schedule(dynamic, 1)
        for (uint32_t g = 0; g < nruns; g++) {
            if (!ok_mem) continue;
            size_t b = rb[g];
            uint32_t nt = rc[g], ns = nt;
            oct_group grp = { .n = nt, .x = px + b, .y = px + m + b, .z = px + 2 * m + b,
                             .self = self, .amin = 0, .ax = buf, .ay = buf + G, .az = buf + 2 * G,
                             .pot = buf + 3 * G };
            double *sx = buf + 4 * G, *sy = sx + 2 * G, *sz = sy + 2 * G;
            for (uint32_t j = 0; j < nt; j++) {
                sx[j] = grp.x[j]; sy[j] = grp.y[j]; sz[j] = grp.z[j];
                if (!ex) continue;
                const uint32_t i = ex[perm[b + j]];
                self[j] = i == UINT32_MAX ? -1 : (int32_t)(pid_self ? i : t->rank[i]);
                if (i == UINT32_MAX) continue;
                sx[ns] = ppos[3 * (size_t)i]; sy[ns] = ppos[3 * (size_t)i + 1];
                sz[ns] = ppos[3 * (size_t)i + 2];
                ns++;
            }
            gp_group_sphere(sx, sy, sz, NULL, 0, ns, grp.centre, &grp.radius);
            oct_walk_group(&src, &wp, ws, &grp, &pp, &pc);
            for (uint32_t j = 0; j < nt; j++) {
                size_t o = perm[b + j];
                acc[3 * o] = grp.ax[j]; acc[3 * o + 1] = grp.ay[j]; acc[3 * o + 2] = grp.az[j];
                if (pot) pot[o] = grp.pot[j];
            }
            if (!jerk) continue;
            /* the same group (sphere), so the same cells */
            double *tv = buf + 10 * G, *jg = buf + 13 * G;
            for (uint32_t j = 0; j < nt; j++)
                memcpy(&tv[3 * j], &at->vel[3 * (size_t)perm[b + j]], 3 * sizeof *tv);
            if (oct_jerk_group(&src, &jin.js, &wp, jws, &grp, oct_walk_recorded(ws, &src, &grp), tv, jg)) {
                failed = 1;
                continue;
            }
            for (uint32_t j = 0; j < nt; j++)
                memcpy(&jerk[3 * (size_t)perm[b + j]], &jg[3 * j], 3 * sizeof *jg);
        }
        free(buf); free(self);
    }
    free(px); free(rb); free(rc);
    free(perm);
    free(jin.buf);
    if ((st = walk_finished(s, fn, failed, m, acc, pot)) != GP_OK) return st;
    if (jerk && (st = gp_check_outputs(&s->base, fn, m, jerk, NULL)) != GP_OK) return st;
    oct_count_field_call(&s->base, pp, pc, t0);
    return GP_OK;
}

static gp_status cpu_tree_compute_field(gp_solver *s, size_t m, const double *points, double *acc,
                                  double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    gp_status st = gp_check_field(&s->base, m, points, acc);
    if (st != GP_OK) return st;
    const gp_field_points at = { m, points, NULL, NULL };
    if (m <= (size_t)gp_param_int(&s->base, P_DIRECT)) {   /* as compute_field_ex's few */
        if ((st = settle(s)) != GP_OK) return st;
        const gp_outputs o = { .struct_size = sizeof o, .acc = acc, .pot = pot };
        int done;
        if ((st = field_ex_few(s, "compute_field", &at, &o, &done)) != GP_OK || done) return st;
    }
    return field_walk(s, "compute_field", &at, acc, pot, NULL);
}

/* ---- ABI 1.2 ------------------------------------------------------------- */

static gp_status cpu_tree_set_state_jerk(gp_solver *s, size_t n_sub, const uint32_t *index,
                                         const double *pos, const double *vel, const double *acc,
                                         const double *jerk, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state_jerk");
    gp_status st = gp_lazy_reserve(&s->lazy, &s->base, n_sub);
    if (st == GP_OK) st = gp_state_set_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t);
    if (st == GP_OK && n_sub) state_given(s, n_sub, index, pos, vel, acc, jerk, t);
    return st;
}

/* acc and pot from compute_forces (the same bits), then the neighbour
 * outputs (outputs_ex.c) over the tree of the current sources. */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out);
static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out);

static gp_status cpu_tree_compute_forces_ex(gp_solver *s, const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces_ex");
    gp_status st = gp_check_outputs_ex(&s->base, out);
    if (st != GP_OK) return st;
    gp_outputs o = gp_outputs_read(out);
    /* the even step is the tree search's too; groups take the exact pass */
    return s->base.p.group ? forces_ex_13(s, &o) : forces_ex_12(s, &o);
}

/* The neighbour outputs (octree/outputs_ex.c) over the tree of the
 * current sources, for the active particles (at NULL) or at points. */
static gp_status tree_outputs_ex(gp_solver *s, const char *fn, const gp_outputs *out,
                                 const gp_field_points *at)
{
    gp_status st;
    if ((st = settle(s)) != GP_OK || (st = ensure_tree(s)) != GP_OK) return st;
    double t0 = gp_wtime();
    const oct_tree *t = s->base.p.src ? &s->sub : &s->tree;
    uint32_t *pid = s->base.p.src ? NULL : malloc((t->nsrc ? t->nsrc : 1) * sizeof *pid);
    if (!s->base.p.src && !pid)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "%s: no memory for %u source indices", fn,
                       t->nsrc);
    if (pid)
        for (uint32_t k = 0; k < t->nsrc; k++) pid[k] = t->order[t->sid[k]];
    double eps = gp_param_double(&s->base, OCT_P_EPS);
    st = oct_outputs_ex(&s->base, t, pid ? pid : s->sub_pid, NULL, out,
                        gp_param_double(&s->base, OCT_P_G), eps * eps, oct_param_threads(&s->base),
                        at);
    free(pid);
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return st;
}

static int asks_neighbours(const gp_outputs *out)
{
    return out->nn_index || out->nn_dist2 || out->pair_step || out->pair_step_even ||
           out->nb_radius || out->nb_step > 0 || out->nb_step_even > 0;
}

/* 1.2's outputs */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out)
{
    gp_status st;
    gp_neighbours_forget(&s->base);
    st = compute(s, "compute_forces_ex", out->acc, out->pot, out->jerk, !asks_neighbours(out));
    if (st != GP_OK || !asks_neighbours(out)) return st;
    /* an exact call (exact_few) leaves the tree as it was */
    return tree_outputs_ex(s, "compute_forces_ex", out, NULL);
}

/* ---- ABI 1.3 ------------------------------------------------------------- */

static gp_exact_sources exact_sources(const gp_solver *s)
{
    const double eps = gp_param_double(&s->base, OCT_P_EPS);
    gp_exact_sources src = { NULL, NULL, gp_param_double(&s->base, OCT_P_G), eps * eps,
                             oct_param_threads(&s->base) };
    return src;
}

/* Groups through the exact pass (base/exact_ex.c: O(n_active n), hence
 * no GP_CAP_SOURCE_GROUPS): every output exact, so no cell is ever
 * approximated across a group's exclusion. */
static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out)
{
    gp_status st = settle(s);
    if (st != GP_OK) return st;
    const gp_exact_sources src = exact_sources(s);
    return gp_forces_ex_13(s, &s->base, forces_ex_12, &src, out);
}

GP_PLUGIN_13_ENTRIES(cpu_tree, PLUGIN_NAME)

/* A few points' exact sums (exact_few_points): *done = 1 when it
 * answered, 0 when a result left double's range (the caller's pass then
 * says so). */
static gp_status field_ex_few(gp_solver *s, const char *fn, const gp_field_points *at,
                              const gp_outputs *o, int *done)
{
    double t0 = gp_wtime(), eps = gp_param_double(&s->base, OCT_P_EPS);
    uint64_t pairs;
    *done = 0;
    int rc = exact_few_points(&s->exact, &s->base.p, at, gp_param_double(&s->base, OCT_P_G),
                              eps * eps, oct_param_threads(&s->base), o->acc, o->pot, o->jerk,
                              o->nn_index, o->nn_dist2, &pairs);
    if (rc < 0)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory to gather %zu sources for their exact sums; free memory",
                       fn, s->base.p.n);
    if (rc > 0) return GP_OK;
    gp_neighbours_forget(&s->base);
    s->base.stats.field_calls += 1;
    s->base.stats.pp_interactions += pairs;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    *done = 1;
    return GP_OK;
}

/* At the points through the tree (field_walk, then the tree searches)
 * where that makes every output asked (gp_field_ex_in_kernel), else the
 * exact pass (base/exact_ex.c: pair steps, lists by step, groups).
 * direct_max points or fewer take exact sums, which cost less than the
 * refit a moved tree needs (a GRAPE-6 client's small blocks): exact_few's
 * vectorised kernel where no list is asked, else the exact pass. */
static gp_status cpu_tree_compute_field_ex(gp_solver *s, size_t n, const double *pos,
                                         const double *vel, const uint32_t *exclude,
                                         const gp_outputs *out)
{
    static const char fn[] = "compute_field_ex";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st = gp_check_field_ex(&s->base, n, pos, vel, exclude, out);
    if (st == GP_OK) st = settle(s);
    if (st != GP_OK) return st;
    const gp_outputs o = gp_outputs_read(out);
    const int in_tree = gp_field_ex_in_kernel(&s->base, &o);
    const int few = n <= (size_t)gp_param_int(&s->base, P_DIRECT);
    const gp_field_points at = { n, pos, vel, exclude };
    if (in_tree && few && !o.nb_radius) {
        int done;
        if ((st = field_ex_few(s, fn, &at, &o, &done)) != GP_OK || done) return st;
    }
    if (!in_tree || few) {
        const gp_exact_sources src = exact_sources(s);
        return gp_field_ex_exact(&s->base, &src, n, pos, vel, exclude, out);
    }
    gp_neighbours_forget(&s->base);
    if (n > 0 && (st = field_walk(s, fn, &at, o.acc, o.pot, o.jerk)) != GP_OK) return st;
    return asks_neighbours(&o) ? tree_outputs_ex(s, fn, &o, &at) : GP_OK;
}

static const gp_api api = GP_PLUGIN_API_13(cpu_tree, PLUGIN_NAME,
    GP_CAP_TREE | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL |
    GP_CAP_REFIT | GP_CAP_PREDICT | GP_CAP_SOURCE_SUBSET | GP_CAP_JERK);

GP_PLUGIN_ENTRY(api)
