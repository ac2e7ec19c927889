/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.c — the cuda-tree plugin: a GPU oct-tree solver in the line of
 * GOTHIC (Miki & Umemura 2017). Host side only: parameters, validation and
 * particle copies through plugin/base, device memory and errors through
 * plugin/cuda-base, and the order of the pipeline; every step over
 * particles or cells runs on the GPU (tree_dev.cu).
 *
 *   set_particles      copy positions and masses to the GPU; next compute
 *                      builds the tree
 *   update_positions   copy positions; next compute refits the moments on
 *                      the old topology or rebuilds, as `rebuild` says
 *                      (auto: GOTHIC 2.6's linear model of the walk cost)
 *   compute_forces     [build or refit] -> walk records for the MAC ->
 *                      i-groups of 32 active particles in key order ->
 *                      warp-per-group walk -> only the active results back
 *   compute_field      the same walk for arbitrary points (sorted by key
 *                      so that groups of 32 are compact)
 *
 * Active subsets: only the active particles are put into i-groups, in key
 * order, 32 to a group, so few active particles still make full warps
 * (GOTHIC's low-N_i regime) and the cost follows the active count.
 *
 * rebuild = auto is decided from interaction counts, not from timers, so
 * the same inputs give the same tree and the same bits on every run. The
 * measured walk cost of a call is its interaction count; what a refitted
 * tree costs more than a fresh one is that count minus n_active times the
 * interactions per active particle of the first call after the build with
 * about as many active particles (same power of two: a sparse subset's
 * groups cost far more per particle than all particles', so calls are only
 * compared with their like). The tree is rebuilt at the next position
 * update once that excess, summed since the build, reaches the cost of a
 * build, t_make = GP_TREE_BUILD_COST * n_tree interaction equivalents: for
 * a cost that grows linearly this is GOTHIC's optimum (eq. 12: rebuild
 * after sqrt(2 t_make / slope) steps, when the summed excess slope*k^2/2
 * equals t_make), and it needs no fit across calls of different sizes.
 *
 * ABI 1.1 (cuda-base/dev_state.h): the kinematic state lives on the GPU;
 * set_state uploads the subset, predict is a kernel on d.pos_in and then
 * refits (or rebuilds by the rule above), get_positions downloads the
 * subset. The host copy base.p.pos is then older than the device's
 * (host_stale) and is brought back only when something needs it. A source
 * subset builds the tree from those particles alone; active particles are
 * then read from the unsorted positions (they need not be sources).
 *
 * ABI 1.2: set_state_jerk keeps the jerks on the GPU beside the state
 * (third-order predict there, cuda-base/state_dev.cuh), get_velocities
 * computes the subset's there. compute_forces_ex gives acc and pot as
 * compute_forces does (the same bits) and no jerk (GP_ERR_UNSUPPORTED:
 * the cells carry no velocities; cuda-direct has it). Nearest neighbours,
 * pair_step and the neighbour lists are exact and come from the CPU tree
 * plugins' own code (octree/outputs_ex.c: tree_search.c, pair_search.c)
 * run on a host tree of the current sources, built from the device's current positions
 * (and velocities, when a pairwise step is asked for) brought back for
 * it: O(n) bytes over PCIe and an O(n log n) host build per such call, so
 * no GP_CAP_NEIGHBOURS (README.md).
 *
 * Extreme scales: the float data of the walk are (x - centre) / L and m /
 * M, with L and M powers of two (exact) chosen from the data when it is far
 * from 1 (the median distance from the centre, the largest mass); results
 * are scaled back in double, and a result outside double's range is an
 * error, never a silent 0 or inf.
 */
#include "base/plugin_base.h"
#include "base/predict_lazy.h"
#include "cuda-base/gp_cuda.h"
#include "cuda-base/dev_state.h"
#include "cuda-tree/tree_dev.h"
#include "octree/cpu_driver.h"
#include "octree/outputs_ex.h"
#include "octree/mac.h"
#include "octree/tree_params.h"

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "cuda-tree"
/* A build plus moments costs about as much as this many interactions per
 * particle (keys, a radix sort, ~22 level launches, moments); a fixed
 * constant keeps rebuild = auto deterministic. */
#define GP_TREE_BUILD_COST 64.0
/* rebuild = auto never refits more than this many calls in a row. */
#define GP_TREE_MAX_REFITS 256u
/* Few i-groups (few active particles or field points): each group is
 * walked by up to GP_TREE_MAX_PARTS warps over disjoint parts of the tree
 * (GOTHIC 2.5's ij-parallelism), aiming at GP_TREE_WORK_TARGET work items.
 * Both are constants, not device properties, so results do not depend on
 * the GPU. */
#define GP_TREE_WORK_TARGET 4096u
#define GP_TREE_MAX_PARTS 32u
/* Length and mass scales stay 1 (bit-identical to unscaled float data)
 * inside these ranges; outside, the data are divided by a power of two. */
#define GP_TREE_LEN_RANGE 0x1p20
#define GP_TREE_MASS_RANGE 0x1p60
#define GP_TREE_SAMPLE 1024u

static const gp_param_info params[] = {
    GP_PARAM_ROW_G,
    GP_PARAM_ROW_EPS,
    OCT_PARAM_ROWS_WALK, /* octree/tree_params.h, as cpu-tree and mpi-tree */
    {"rebuild", GP_PARAM_ENUM, "auto", "auto|always|N",
     "auto: GOTHIC's model of the walk cost; always; or every N position updates"},
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float sums; mixed: float interactions, float sums per block of "
     "<= 64 terms added into double; double: double arithmetic"},
    /* group_cell (make_groups), default 4096: a sparse subset's walk
     * gains most from it at a small cost to a full walk, and neither a
     * smaller or larger cell nor one scaled with n / n_active did better
     * overall (bench/results/gpu/raw/gpu-H200.md, gpu-H100.md). A parameter, so
     * that a device run can sweep it (bench/gpu/run-all.sh group-cells). */
    {"group_cell", GP_PARAM_INT, "4096", "[32,1073741824]",
     "an i-group of <= 32 active particles is cut from the coarsest tree cell with at most this "
     "many sources: smaller keeps a sparse subset's groups tighter (fewer interactions each), "
     "larger fills more of them"},
    OCT_PARAM_ROW_DRIFT,
};
enum { P_G, P_EPS, P_THETA, P_MAC, P_DELTA_ACC, P_THETA_MAX, P_ORDER, P_REBUILD, P_PRECISION, P_GROUP_CELL,
       P_DRIFT };

typedef struct dev_buffers {
    gp_dbuf pos_in, mass_in;                /* unsorted, as the host gave them */
    gp_dbuf keys_a, keys_b, perm_a, perm, rank;
    gp_dbuf x, y, z, m, f4, center;         /* key order, relative to center   */
    gp_dbuf cells, mom, rec;
    gp_dbuf counts, offsets, scalar, bbox;
    gp_dbuf cub;
    gp_dbuf aold;                           /* |a| of the last call, by index  */
    gp_dbuf idx, akey_a, akey_b, aval_a, aval_b;
    gp_dbuf ipos, islot, iself, iorig, iaold, out;
    gp_dbuf stacks, next_group, counters;
    gp_dbuf fpts, fkey_a, fkey_b, fidx_a, fidx_b; /* compute_field        */
    gp_dbuf cut, cut_flags, cut_offs, cut_keys, cut_ids, cut_off, seg; /* ij-parallel walks */
    gp_dbuf g_flag, g_off, g_run, g_gflag, g_goff, g_start;             /* i-groups          */
    gp_dbuf src, sample;                    /* source subset; length-scale sample  */
    gp_dbuf cubic, kin, leaf_of, mark;      /* the drifted tree (drift = on)       */
} dev_buffers;

struct gp_solver {
    gp_base base;
    gp_cuda cu;
    dev_buffers d;
    uint32_t walk_slots;
    int slots_mode;

    int dev_valid;       /* pos_in / mass_in hold base.p                 */
    int have_tree;       /* cells / moments exist for the current n      */
    int need_build;      /* the next compute rebuilds                    */
    int need_refit;      /* positions moved since the moments            */
    int moved;           /* positions moved since the last rebuild decision */
    int idx_valid;       /* d.idx holds base.p.active                    */
    int tree_fresh;      /* the tree was built from base.p's particles (all
                          * of them), nothing moved, reweighed or refitted
                          * since: set_particles of the same ones keeps it */
    int tree_kept;       /* kept so, and not walked yet: a move or a new
                          * mass before the walk builds, as after any
                          * set_particles */
    uint32_t ncells, nlevels;
    uint32_t builds;     /* trees built by this instance: names the topology */
    /* the ij-parallel walk's cut, kept while the topology stays (a refit
     * moves no cell): the build it was made for, its level, parts, cells */
    uint32_t cut_build, cut_level, cut_parts, cut_n;
    double root_lo[3], inv_cell;   /* the root cube of the last build   */
    uint32_t level_start[GP_KEY_MAX_LEVEL + 3];
    size_t cell_cap;

    /* rebuild = auto: the walk's excess cost since the build (see top) */
    unsigned updates_since_build;
    double excess;
    double base_cost[33];       /* interactions per active particle, by log2(n_active) */
    double base_key[5];         /* the MAC parameters the baselines were taken with */

    gp_dstate ds;               /* ABI 1.1: x0, v, a, t on the device      */
    gp_hbuf stage;              /* pinned staging for the life of the instance */
    int host_stale;             /* base.p.pos is older than d.pos_in       */
    int src_dev_valid;          /* d.src holds base.p.src                  */
    uint32_t n_tree;            /* particles in the tree: n or the sources */
    size_t n_cap;               /* particles the per-particle buffers hold */
    double len_scale, mass_scale; /* powers of two; 1 for ordinary data    */

    /* drift = on: the tree anchored at drift_t0 (octree/drift_kin.h);
     * cells marked after epoch drift_clean have new states below them */
    int drift_anchored;
    int all_predicted;          /* no set_state since the last good predict */
    int drift_marks;
    int drifted;                /* this call walks the drifted tree        */
    gp_lazy_predict bounds;     /* the states' bounds: may predict be owed */
    double drift_t0;
    uint32_t drift_epoch, drift_clean;

    gp_hbuf hout;               /* the results, pinned                     */
    gp_dbuf vel;                /* ABI 1.2: every velocity, for pair_step  */
};

/* ---- small helpers ----------------------------------------------------- */

static gp_status dev(gp_solver *s, int err, const char *doing)
{
    return gp_cuda_check(&s->base, err, doing);
}

static gp_status reserve(gp_solver *s, gp_dbuf *b, size_t bytes, const char *what)
{
    return gp_dbuf_reserve(&s->base, b, bytes, what);
}

static void free_all(dev_buffers *d)
{
    gp_dbuf *b = (gp_dbuf *)d;
    for (size_t k = 0; k < sizeof *d / sizeof(gp_dbuf); ++k) gp_dbuf_free(&b[k]);
}

static int mode_of(const gp_solver *s) { return gp_param_enum(&s->base, P_PRECISION); }

/* Device bytes for n particles with all active (what set_particles checks). */
static size_t bytes_for(size_t n, size_t stack_bytes)
{
    size_t per = 24 + 8            /* positions, masses in          */
               + 16 + 8 + 4        /* keys x2, perm x2, rank        */
               + 32 + 16           /* sorted SoA, float records     */
               + 4 + 4 + 16 + 16   /* aold, index, active keys/vals */
               + 16 + 12 + 4 + 32  /* i-records, results           */
               + 24                /* CUB temporaries (about)       */
               + 86;               /* cells: ~n/3 x 256 bytes       */
    return n * per + stack_bytes + ((size_t)64 << 20);
}

/* The drifted tree's bytes for n particles: cubics and leaves, and each
 * cell's motion and mark (cells: ~n/3). */
static size_t drift_bytes_for(size_t n)
{
    return n * (48 + 4 + (sizeof(gp_drift_kin) + 4) / 3);
}

/* ---- build, refit ------------------------------------------------------ */

static gp_status cub_reserve(gp_solver *s, size_t bytes)
{
    return reserve(s, &s->d.cub, bytes, "CUB temporary storage");
}

/* A power of two near x (2^ilogb(x)); 1 for x inside [1/range, range],
 * x == 0 or x not finite. */
static double scale_for(double x, double range)
{
    if (!(x > 0) || !isfinite(x) || (x >= 1.0 / range && x <= range)) return 1.0;
    return ldexp(1.0, ilogb(x));
}

/* The length scale L of the float data: 1 unless the root cube's side is
 * far from 1; then the median distance from the centre of a fixed sample
 * of the tree's particles (robust to a few particles far outside the
 * bulk, which set the side), or the side when that median is 0. */
static gp_status choose_len_scale(gp_solver *s, double side)
{
    s->len_scale = 1.0;
    if (side >= 1.0 / GP_TREE_LEN_RANGE && side <= GP_TREE_LEN_RANGE) return GP_OK;
    dev_buffers *d = &s->d;
    uint32_t count = s->n_tree < GP_TREE_SAMPLE ? s->n_tree : GP_TREE_SAMPLE;
    double host[GP_TREE_SAMPLE];
    gp_status r = reserve(s, &d->sample, GP_TREE_SAMPLE * sizeof(double), "the length-scale sample");
    if (r != GP_OK) return r;
    if ((r = dev(s, gp_tree_sample(d->pos_in.ptr, d->perm.ptr, s->n_tree, count, d->center.ptr, d->sample.ptr, host,
                                   s->cu.stream), "sampling the particle distances")) != GP_OK) return r;
    gp_cuda_count(&s->cu, 0, count * sizeof(double));
    /* the median, by insertion sort (count <= 1024, once per build) */
    for (uint32_t i = 1; i < count; ++i) {
        double v = host[i];
        uint32_t j = i;
        while (j > 0 && host[j - 1] > v) { host[j] = host[j - 1]; --j; }
        host[j] = v;
    }
    double med = host[count / 2];
    if (!(med > 0)) med = side;
    s->len_scale = med > 0 && isfinite(med) ? ldexp(1.0, ilogb(med)) : 1.0;
    gp_log(&s->base, GP_LOG_DEBUG, "length scale 2^%d (root side %g, median distance %g)", ilogb(s->len_scale),
           side, med);
    return GP_OK;
}

/* The mass scale M: 1 unless the largest mass is far from 1. O(n) over the
 * host copy of the masses (set_particles, update_masses). */
static void choose_mass_scale(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    double mmax = 0;
    const long long n = (long long)p->n;
#pragma omp parallel for reduction(max : mmax) schedule(static) if (n > 65536)
    for (long long i = 0; i < n; ++i)
        if (p->mass[i] > mmax) mmax = p->mass[i];
    s->mass_scale = scale_for(mmax, GP_TREE_MASS_RANGE);
}

/* The previous |a| are kept in the walk's units, |a| len_scale^2 /
 * (G mass_scale): when a build or new masses change a scale (powers of
 * two), they are converted, so the acceleration MAC keeps its tolerance. */
static gp_status rescale_aold(gp_solver *s, double old_len, double old_mass)
{
    int e = 2 * (ilogb(s->len_scale) - ilogb(old_len)) - (ilogb(s->mass_scale) - ilogb(old_mass));
    size_t n = s->d.aold.bytes / sizeof(float) < s->base.p.n ? s->d.aold.bytes / sizeof(float) : s->base.p.n;
    if (e == 0 || !s->d.aold.ptr || n == 0) return GP_OK;
    return dev(s, gp_tree_scale_exp((float *)s->d.aold.ptr, (uint32_t)n, e, s->cu.stream),
               "converting the previous accelerations to the new scales");
}

static gp_status build_tree(gp_solver *s)
{
    dev_buffers *d = &s->d;
    void *st = s->cu.stream;
    gp_status r;
    double t0 = gp_wtime();

    /* root cube: the bounding box, as octree/host_tree.c makes it */
    double box[6];
    const gp_particles *p = &s->base.p;
    if (p->src && !s->src_dev_valid) {
        if ((r = reserve(s, &d->src, p->n_src * sizeof(uint32_t), "the source subset")) != GP_OK) return r;
        double tu = gp_wtime();
        if ((r = gp_cuda_upload(&s->base, &s->cu, d->src.ptr, p->src, p->n_src * sizeof(uint32_t),
                                "copying the source subset to the GPU")) != GP_OK) return r;
        s->base.stats.seconds_transfer += gp_wtime() - tu;
        s->src_dev_valid = 1;
    }
    const uint32_t *src = p->src ? (const uint32_t *)d->src.ptr : NULL;
    const uint32_t n = (uint32_t)(p->src ? p->n_src : p->n); /* the tree's particles */
    s->n_tree = n;
    if ((r = reserve(s, &d->bbox, 6 * 1024 * sizeof(double), "the bounding-box scratch")) != GP_OK) return r;
    if ((r = dev(s, gp_tree_bbox(d->pos_in.ptr, src, n, d->bbox.ptr, box, st), "computing the bounding box")) != GP_OK) return r;
    gp_cuda_count(&s->cu, 0, 6 * sizeof(double));
    double side = 0, lo[3];
    for (int a = 0; a < 3; ++a)
        if (box[3 + a] - box[a] > side) side = box[3 + a] - box[a];
    if (!(side > 0)) side = 1.0;
    if (!(side <= 0.5 * DBL_MAX)) side = DBL_MAX;
    else side *= 1.0 + 1e-9;
    for (int a = 0; a < 3; ++a) lo[a] = 0.5 * box[a] + 0.5 * box[3 + a] - 0.5 * side;
    double inv_cell = (double)GP_KEY_GRID / side;
    for (int a = 0; a < 3; ++a) s->root_lo[a] = lo[a];
    s->inv_cell = inv_cell;

    /* Peano-Hilbert keys, sorted with the particle indices */
    if ((r = dev(s, gp_tree_keys(d->pos_in.ptr, src, n, lo[0], lo[1], lo[2], inv_cell, d->keys_a.ptr,
                                 d->perm_a.ptr, 0, st), "computing the Peano-Hilbert keys")) != GP_OK) return r;
    size_t tmp = 0;
    if ((r = dev(s, gp_tree_sort64(NULL, &tmp, NULL, NULL, NULL, NULL, n, st), "sizing the key sort")) != GP_OK) return r;
    if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
    tmp = d->cub.bytes;
    if ((r = dev(s, gp_tree_sort64(d->cub.ptr, &tmp, d->keys_a.ptr, d->keys_b.ptr, d->perm_a.ptr, d->perm.ptr, n, st),
                 "sorting the keys")) != GP_OK) return r;
    if ((r = dev(s, gp_tree_set_center(d->pos_in.ptr, d->perm.ptr, n, d->center.ptr, st), "choosing the centre")) != GP_OK) return r;
    const double old_len = s->len_scale;
    if ((r = choose_len_scale(s, side)) != GP_OK) return r;
    if ((r = rescale_aold(s, old_len, s->mass_scale)) != GP_OK) return r;
    if (src) { /* particles outside the tree have no rank */
        int e = (int)cudaMemsetAsync(d->rank.ptr, 0xff, s->base.p.n * sizeof(uint32_t), (cudaStream_t)st);
        if ((r = dev(s, e, "clearing the ranks")) != GP_OK) return r;
    }
    if ((r = dev(s, gp_tree_gather(d->pos_in.ptr, d->mass_in.ptr, d->perm.ptr, n, d->center.ptr, 1.0 / s->len_scale,
                                   1.0 / s->mass_scale, d->x.ptr, d->y.ptr, d->z.ptr, d->m.ptr, d->f4.ptr, d->rank.ptr, st),
                 "reordering the particles")) != GP_OK) return r;

    /* the octree, one level per step (octree/tree.h) */
    gp_cell root = {0, n, 0, 0, 0, 0};
    if (s->cell_cap < 1 || !d->cells.ptr) {
        size_t cap = n / 2 + 64;
        if ((r = reserve(s, &d->cells, cap * sizeof(gp_cell), "the tree cells")) != GP_OK) return r;
        s->cell_cap = cap;
    }
    if ((r = gp_cuda_upload(&s->base, &s->cu, d->cells.ptr, &root, sizeof root, "initialising the root cell")) != GP_OK) return r;
    uint32_t b = 0, e = 1, level = 0;
    s->level_start[0] = 0;
    for (;;) {
        uint32_t width = e - b, total = 0;
        if ((r = reserve(s, &d->counts, width * sizeof(uint32_t), "the tree build counts")) != GP_OK) return r;
        if ((r = reserve(s, &d->offsets, width * sizeof(uint32_t), "the tree build offsets")) != GP_OK) return r;
        if ((r = reserve(s, &d->scalar, 64, "a device scalar")) != GP_OK) return r;
        if ((r = dev(s, gp_tree_count(d->keys_b.ptr, d->cells.ptr, b, e, d->counts.ptr, st), "counting children")) != GP_OK) return r;
        tmp = 0;
        if ((r = dev(s, gp_tree_scan(NULL, &tmp, NULL, NULL, width, st), "sizing the scan")) != GP_OK) return r;
        if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
        tmp = d->cub.bytes;
        if ((r = dev(s, gp_tree_scan(d->cub.ptr, &tmp, d->counts.ptr, d->offsets.ptr, width, st), "scanning child counts")) != GP_OK) return r;
        if ((r = dev(s, gp_tree_total(d->counts.ptr, d->offsets.ptr, width, d->scalar.ptr, &total, st),
                     "counting the next level")) != GP_OK) return r;
        gp_cuda_count(&s->cu, 0, sizeof total);
        s->level_start[level + 1] = e;
        if (total == 0 || level >= GP_KEY_MAX_LEVEL) break;
        if ((size_t)e + total > s->cell_cap) {
            size_t cap = ((size_t)e + total) * 3 / 2 + 64;
            if ((r = gp_dbuf_grow_keep(&s->base, &s->cu, &d->cells, cap * sizeof(gp_cell), (size_t)e * sizeof(gp_cell),
                                       "the tree cells")) != GP_OK) return r;
            s->cell_cap = cap;
        }
        if ((r = dev(s, gp_tree_split(d->keys_b.ptr, d->cells.ptr, b, e, d->offsets.ptr, st), "splitting cells")) != GP_OK) return r;
        b = e;
        e += total;
        ++level;
    }
    s->ncells = e;
    s->nlevels = level + 1;
    if ((r = gp_cuda_sync(&s->base, &s->cu, "building the tree")) != GP_OK) return r;
    s->base.stats.seconds_build += gp_wtime() - t0;
    s->base.stats.tree_builds++;
    s->builds++;
    s->have_tree = 1;
    return GP_OK;
}

/* Moments bottom-up: the deepest level first, each cell from its particles
 * (leaf) or its children (octree/moments.h). Enqueued only: the stream's
 * order makes the walk see them. */
static gp_status moments(gp_solver *s)
{
    dev_buffers *d = &s->d;
    gp_status r;
    if ((r = reserve(s, &d->mom, (size_t)s->ncells * sizeof(gp_moments), "the cell moments")) != GP_OK) return r;
    if ((r = reserve(s, &d->rec, (size_t)s->ncells * GP_WREC_BYTES, "the walk records")) != GP_OK) return r;
    for (int L = (int)s->nlevels - 1; L >= 0; --L)
        if ((r = dev(s, gp_tree_moments(d->x.ptr, d->y.ptr, d->z.ptr, d->m.ptr, d->cells.ptr, s->level_start[L],
                                        s->level_start[L + 1], d->mom.ptr, s->cu.stream),
                     "computing the cell moments")) != GP_OK) return r;
    return GP_OK;
}

static void model_reset(gp_solver *s)
{
    s->updates_since_build = 0;
    s->excess = 0;
    memset(s->base_cost, 0, sizeof s->base_cost);
}

/* One compute_forces call's interactions, into the excess of the refitted
 * tree over a fresh one (see the top of this file). Deterministic: counts
 * only. */
static void model_observe(gp_solver *s, size_t ni, uint64_t interactions)
{
    double key[5] = {(double)gp_param_enum(&s->base, P_MAC), gp_param_double(&s->base, P_THETA),
                     (double)gp_param_enum(&s->base, P_ORDER), gp_param_double(&s->base, P_DELTA_ACC),
                     gp_param_double(&s->base, P_THETA_MAX)};
    if (memcmp(key, s->base_key, sizeof key) != 0) { /* another MAC: other baselines */
        memcpy(s->base_key, key, sizeof key);
        memset(s->base_cost, 0, sizeof s->base_cost);
    }
    if (ni) oct_age_observe(s->base_cost, (int)(sizeof s->base_cost / sizeof s->base_cost[0]), &s->excess, ni,
                            (double)interactions, 0);
}

static int model_wants_rebuild(const gp_solver *s)
{
    if (s->updates_since_build >= GP_TREE_MAX_REFITS) return 1;
    return s->excess >= GP_TREE_BUILD_COST * (double)s->n_tree;
}

/* The positions moved (update_positions, set_state, predict): the next
 * compute refits, or rebuilds when the policy says so (decided there, once
 * per compute, so a block step's set_state + predict count as one update). */
static void positions_moved(gp_solver *s)
{
    if (s->tree_kept) s->need_build = 1;
    s->tree_kept = 0;
    s->tree_fresh = 0;
    s->need_refit = 1;
    s->moved = 1;
}

static void decide_rebuild(gp_solver *s)
{
    if (!s->moved) return;
    s->moved = 0;
    s->updates_since_build++;
    switch (gp_param_enum(&s->base, P_REBUILD)) {
    case 0: if (model_wants_rebuild(s)) s->need_build = 1; break;           /* auto   */
    case 1: s->need_build = 1; break;                                       /* always */
    default:                                                                /* N      */
        if ((long long)s->updates_since_build >= gp_param_int(&s->base, P_REBUILD)) s->need_build = 1;
        break;
    }
}

/* base.p.pos again equal to the device's positions (after predict, only
 * the device had them). */
static gp_status sync_host_positions(gp_solver *s)
{
    if (!s->host_stale) return GP_OK;
    gp_status r = gp_dstate_settle(&s->base, &s->cu, &s->ds);
    if (r != GP_OK) return r;
    double t0 = gp_wtime();
    r = gp_cuda_download_staged(&s->base, &s->cu, &s->stage, s->base.p.pos, s->d.pos_in.ptr,
                                s->base.p.n * 3 * sizeof(double), "copying the positions from the GPU");
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    if (r == GP_OK) s->host_stale = 0;
    return r;
}

static gp_status upload_particles(gp_solver *s, int with_mass)
{
    const gp_particles *p = &s->base.p;
    double t0 = gp_wtime();
    gp_status r = gp_cuda_upload_staged(&s->base, &s->cu, &s->stage, s->d.pos_in.ptr, p->pos,
                                        p->n * 3 * sizeof(double), "copying the positions to the GPU");
    if (r == GP_OK && with_mass)
        r = gp_cuda_upload_staged(&s->base, &s->cu, &s->stage, s->d.mass_in.ptr, p->mass, p->n * sizeof(double),
                                  "copying the masses to the GPU");
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    if (r != GP_OK) s->dev_valid = 0;
    return r;
}

/* Per-particle device buffers for n particles (set_particles). */
static gp_status reserve_particles(gp_solver *s, size_t n)
{
    dev_buffers *d = &s->d;
    gp_status r;
    struct { gp_dbuf *b; size_t each; const char *what; } t[] = {
        {&d->pos_in, 24, "the positions"}, {&d->mass_in, 8, "the masses"},
        {&d->keys_a, 8, "the keys"}, {&d->keys_b, 8, "the sorted keys"},
        {&d->perm_a, 4, "the particle indices"}, {&d->perm, 4, "the key order"},
        {&d->rank, 4, "the inverse key order"}, {&d->x, 8, "sorted x"}, {&d->y, 8, "sorted y"},
        {&d->z, 8, "sorted z"}, {&d->m, 8, "sorted masses"}, {&d->f4, 16, "the walk's particle records"},
        {&d->aold, 4, "the previous accelerations"},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; ++k)
        if ((r = reserve(s, t[k].b, n * t[k].each, t[k].what)) != GP_OK) return r;
    if ((r = reserve(s, &d->center, 4 * sizeof(double), "the centre")) != GP_OK) return r;
    if (n > s->n_cap) s->n_cap = n;
    return GP_OK;
}

static gp_status drift_anchor(gp_solver *s);

/* Makes the tree match the current positions: build or refit as decided
 * (and anchors the drifted tree there, drift = on). */
static gp_status ensure_tree(gp_solver *s)
{
    gp_status r;
    if ((r = gp_dstate_settle(&s->base, &s->cu, &s->ds)) != GP_OK) return r;
    if (!s->dev_valid) {
        if ((r = upload_particles(s, 1)) != GP_OK) return r;
        s->dev_valid = 1;
        s->need_build = 1;
    }
    decide_rebuild(s);
    s->tree_kept = 0; /* walked from here on */
    if (s->need_build || !s->have_tree) {
        s->have_tree = 0;
        s->drift_anchored = 0;
        if ((r = build_tree(s)) != GP_OK) return r;
        double t0 = gp_wtime();
        if ((r = moments(s)) != GP_OK || (r = drift_anchor(s)) != GP_OK ||
            (r = gp_cuda_sync(&s->base, &s->cu, "computing the cell moments")) != GP_OK) {
            s->have_tree = 0;
            return r;
        }
        s->base.stats.seconds_moments += gp_wtime() - t0;
        s->need_build = s->need_refit = 0;
        s->tree_fresh = s->base.p.src == NULL;
        model_reset(s);
    } else if (s->need_refit) {
        /* no wait: timed on the device, read after the walk's wait */
        dev_buffers *d = &s->d;
        s->tree_fresh = 0;
        s->drift_anchored = 0;
        if ((r = gp_cuda_phase_begin(&s->base, &s->cu, "refitting the tree")) != GP_OK) return r;
        if ((r = dev(s, gp_tree_gather(d->pos_in.ptr, d->mass_in.ptr, d->perm.ptr, s->n_tree, d->center.ptr,
                                       1.0 / s->len_scale, 1.0 / s->mass_scale, d->x.ptr, d->y.ptr, d->z.ptr,
                                       d->m.ptr, d->f4.ptr, NULL, s->cu.stream),
                     "reordering the moved particles")) != GP_OK) return r;
        if ((r = moments(s)) != GP_OK || (r = drift_anchor(s)) != GP_OK) return r;
        if ((r = gp_cuda_phase_end(&s->base, &s->cu, "refitting the tree")) != GP_OK) return r;
        s->need_refit = 0;
        s->base.stats.tree_refits++;
    }
    return GP_OK;
}

/* Walk records for the current MAC parameters (O(cells), every call). */
static gp_status records(gp_solver *s)
{
    return dev(s, gp_tree_records(s->d.mom.ptr, s->d.cells.ptr, s->ncells, gp_param_enum(&s->base, P_MAC),
                                  gp_param_double(&s->base, P_THETA), s->d.rec.ptr, s->cu.stream),
               "preparing the walk records");
}

/* ---- the drifted tree (drift = on, octree/drift_kin.h) ------------------ */
/*
 * A block step (set_state of the last active particles, predict, forces of
 * the next ones) then costs no pass over the particles or their sources:
 * the anchor's cells are moved by their mean motion and grown by their
 * bounds in one O(cells) pass of records, the sources are predicted from
 * their cubics where the walk opens a leaf, and a new state changes the
 * cubic and position at t0 of its particle and, once before the next
 * walk, the moments and motion of the cells above it (marked, level by
 * level), as an anchor made with that state would have them. predict
 * itself stays the kernel over every particle, for the positions the ABI
 * hands out. Every other call refits, or builds, and anchors anew.
 */

static int drift_on(const gp_solver *s) { return gp_param_enum(&s->base, P_DRIFT) == 1; }

/* Each cell's motion, deepest level first: all cells (mark NULL) or those
 * marked since the last such pass. Enqueued only. */
static gp_status drift_levels(gp_solver *s, const uint32_t *mark, const char *doing)
{
    dev_buffers *d = &s->d;
    gp_status r;
    for (int L = (int)s->nlevels - 1; L >= 0; --L)
        if ((r = dev(s, gp_tree_drift_cells(d->x.ptr, d->y.ptr, d->z.ptr, d->m.ptr, d->cells.ptr, s->level_start[L],
                                            s->level_start[L + 1], d->cubic.ptr, s->n_tree, d->mom.ptr, d->kin.ptr,
                                            d->leaf_of.ptr, mark, s->drift_clean, s->cu.stream), doing)) != GP_OK)
            return r;
    return GP_OK;
}

/* The tree just built or refitted from every particle's prediction to
 * t_pred, with no state given since: anchored there (drift = on, the tree
 * of all particles). Enqueued only; out of memory only leaves the tree
 * unanchored. */
static gp_status drift_anchor(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    dev_buffers *d = &s->d;
    if (!drift_on(s) || !s->all_predicted || p->src || !s->ds.any || s->ds.n != p->n) return GP_OK;
    char error[sizeof s->base.error];
    memcpy(error, s->base.error, sizeof error);
    if (gp_dbuf_reserve(&s->base, &d->cubic, 3 * sizeof(gp_f4) * (size_t)s->n_tree, "the drifted sources") != GP_OK ||
        gp_dbuf_reserve(&s->base, &d->kin, sizeof(gp_drift_kin) * (size_t)s->ncells, "the cells' motion") != GP_OK ||
        gp_dbuf_reserve(&s->base, &d->leaf_of, sizeof(uint32_t) * (size_t)s->n_tree, "the sources' leaves") != GP_OK ||
        gp_dbuf_reserve(&s->base, &d->mark, sizeof(uint32_t) * (size_t)s->ncells, "the cells' marks") != GP_OK) {
        gp_log(&s->base, GP_LOG_DEBUG, "drift: no room for the drifted tree; block steps refit");
        memcpy(s->base.error, error, sizeof error); /* not this call's failure */
        return GP_OK;
    }
    gp_status r;
    int e = (int)cudaMemsetAsync(d->mark.ptr, 0, sizeof(uint32_t) * (size_t)s->ncells, (cudaStream_t)s->cu.stream);
    if ((r = dev(s, e, "clearing the cells' marks")) != GP_OK) return r;
    if ((r = dev(s, gp_tree_drift_sources(d->perm.ptr, s->n_tree, gp_dstate_ptrs(&s->ds), s->ds.t_pred,
                                          1.0 / s->len_scale, d->cubic.ptr, s->cu.stream),
                 "anchoring the sources' paths")) != GP_OK) return r;
    s->drift_epoch = s->drift_clean = 0;
    if ((r = drift_levels(s, NULL, "anchoring the cells' motion")) != GP_OK) return r;
    s->drift_t0 = s->ds.t_pred;
    s->drift_marks = 0;
    s->drift_anchored = 1;
    return GP_OK;
}

/* After set_state of a subset: its new paths in the anchor, or, for a
 * subset the anchor does not take (gp_drift_takes), the anchor dropped. */
static gp_status drift_state_given(gp_solver *s, size_t n_sub)
{
    s->all_predicted = 0;
    if (!s->drift_anchored) return GP_OK;
    const uint32_t *index = s->ds.index_dev;
    if (!index || !gp_drift_takes(n_sub, s->base.p.n) || s->drift_epoch == UINT32_MAX) {
        s->drift_anchored = 0;
        return GP_OK;
    }
    dev_buffers *d = &s->d;
    gp_status r = dev(s, gp_tree_drift_update(index, (uint32_t)n_sub, d->rank.ptr, gp_dstate_ptrs(&s->ds),
                                              s->drift_t0, d->center.ptr, 1.0 / s->len_scale, s->n_tree, d->x.ptr,
                                              d->y.ptr, d->z.ptr, d->f4.ptr, d->cubic.ptr, d->cells.ptr,
                                              d->leaf_of.ptr, d->mark.ptr, s->drift_epoch + 1, s->cu.stream),
                      "taking the new states into the drifted tree");
    if (r != GP_OK) {
        s->drift_anchored = 0;
        return r;
    }
    s->drift_epoch++;
    s->drift_marks = 1;
    return GP_OK;
}

/* Whether this compute_forces walks the drifted tree: an active subset it
 * takes (gp_drift_takes) after a predict with no state given since, on an
 * anchored tree that the rebuild policy keeps. */
static int drift_fast(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    if (!drift_on(s) || !s->drift_anchored || !s->all_predicted || !p->active ||
        !gp_drift_takes(p->n_active, p->n) || p->src || !s->dev_valid || !s->have_tree)
        return 0;
    decide_rebuild(s);
    return !s->need_build;
}

/* The walk records of the drifted tree at the predict's time: the marked
 * cells made again, then every record moved (O(cells)); timed on the
 * device as a refit is. The moments stay the anchor's: need_refit stays,
 * for the next call that refits. */
static gp_status drift_records(gp_solver *s)
{
    dev_buffers *d = &s->d;
    gp_status r;
    if ((r = gp_cuda_phase_begin(&s->base, &s->cu, "drifting the tree")) != GP_OK) return r;
    if (s->drift_marks) {
        if ((r = drift_levels(s, d->mark.ptr, "updating the drifted cells")) != GP_OK) return r;
        s->drift_clean = s->drift_epoch;
        s->drift_marks = 0;
    }
    if ((r = dev(s, gp_tree_drift_records(d->mom.ptr, d->kin.ptr, d->cells.ptr, s->ncells, s->ds.t_pred - s->drift_t0,
                                          gp_param_enum(&s->base, P_MAC), gp_param_double(&s->base, P_THETA),
                                          d->rec.ptr, s->cu.stream), "drifting the walk records")) != GP_OK)
        return r;
    s->tree_kept = 0;
    return gp_cuda_phase_end(&s->base, &s->cu, "drifting the tree");
}

static gp_status reserve_irecords(gp_solver *s, size_t ni)
{
    dev_buffers *d = &s->d;
    gp_status r;
    if ((r = reserve(s, &d->ipos, ni * sizeof(gp_f4), "the i-particles")) != GP_OK) return r;
    if ((r = reserve(s, &d->islot, ni * 4, "the output slots")) != GP_OK) return r;
    if ((r = reserve(s, &d->iself, ni * 4, "the self indices")) != GP_OK) return r;
    if ((r = reserve(s, &d->iorig, ni * 4, "the original indices")) != GP_OK) return r;
    if ((r = reserve(s, &d->iaold, ni * 4, "the previous accelerations")) != GP_OK) return r;
    if ((r = reserve(s, &d->out, ni * sizeof(gp_d4), "the results")) != GP_OK) return r;
    /* one record more: the walk's counters come back in it */
    return gp_hbuf_reserve(&s->base, &s->hout, (ni + 1) * sizeof(gp_d4), "the results");
}

/* m targets (particle sel[k], or k without sel, of pos) in key order, so
 * that groups of 32 are compact: fkey_b holds their sorted keys, fidx_b
 * their slots k (out_rank) or particle indices. */
static gp_status sort_targets(gp_solver *s, const double *pos, const uint32_t *sel, size_t m, int out_rank,
                              const char *what)
{
    dev_buffers *d = &s->d;
    void *st = s->cu.stream;
    char doing[96];
    gp_status r;
    if ((r = reserve(s, &d->fkey_a, m * 8, "the target keys")) != GP_OK) return r;
    if ((r = reserve(s, &d->fkey_b, m * 8, "the sorted target keys")) != GP_OK) return r;
    if ((r = reserve(s, &d->fidx_a, m * 4, "the target slots")) != GP_OK) return r;
    if ((r = reserve(s, &d->fidx_b, m * 4, "the sorted target slots")) != GP_OK) return r;
    snprintf(doing, sizeof doing, "computing the keys of %s", what);
    if ((r = dev(s, gp_tree_keys(pos, sel, (uint32_t)m, s->root_lo[0], s->root_lo[1], s->root_lo[2], s->inv_cell,
                                 d->fkey_a.ptr, d->fidx_a.ptr, out_rank, st), doing)) != GP_OK) return r;
    size_t tmp = 0;
    snprintf(doing, sizeof doing, "sorting %s", what);
    if ((r = dev(s, gp_tree_sort64(NULL, &tmp, NULL, NULL, NULL, NULL, (uint32_t)m, st), doing)) != GP_OK) return r;
    if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
    tmp = d->cub.bytes;
    return dev(s, gp_tree_sort64(d->cub.ptr, &tmp, d->fkey_a.ptr, d->fkey_b.ptr, d->fidx_a.ptr, d->fidx_b.ptr,
                                 (uint32_t)m, st), doing);
}

/* i-groups that respect the tree: runs of i-records (key order) in the same
 * group cell, cut into groups of <= 32 (walk.cuh group_cell_of says why).
 * rkeys/iself: as gp_tree_groups. Sets *gstart and *ngroups. */
static gp_status make_groups(gp_solver *s, size_t ni, const uint64_t *rkeys, const uint32_t *iself,
                             const uint32_t **gstart, uint32_t *ngroups)
{
    dev_buffers *d = &s->d;
    gp_status r;
    const uint32_t cell_max = (uint32_t)gp_param_int(&s->base, P_GROUP_CELL);
    gp_dbuf *b[] = {&d->g_flag, &d->g_off, &d->g_run, &d->g_gflag, &d->g_goff, &d->g_start};
    for (size_t k = 0; k < sizeof b / sizeof b[0]; ++k)
        if ((r = reserve(s, b[k], (ni + 1) * sizeof(uint32_t), "the i-group table")) != GP_OK) return r;
    if ((r = reserve(s, &d->scalar, 64, "a device scalar")) != GP_OK) return r;
    size_t tmp = 0;
    if ((r = dev(s, gp_tree_groups(rkeys, iself, (uint32_t)ni, d->cells.ptr, d->keys_b.ptr, cell_max, d->g_flag.ptr,
                                   d->g_off.ptr, d->g_run.ptr, d->g_gflag.ptr, d->g_goff.ptr, d->g_start.ptr, NULL,
                                   &tmp, d->scalar.ptr, ngroups, s->cu.stream), "sizing the i-groups")) != GP_OK)
        return r;
    if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
    tmp = d->cub.bytes;
    if ((r = dev(s, gp_tree_groups(rkeys, iself, (uint32_t)ni, d->cells.ptr, d->keys_b.ptr, cell_max, d->g_flag.ptr,
                                   d->g_off.ptr, d->g_run.ptr, d->g_gflag.ptr, d->g_goff.ptr, d->g_start.ptr,
                                   d->cub.ptr, &tmp, d->scalar.ptr, ngroups, s->cu.stream),
                 "forming the i-groups")) != GP_OK) return r;
    *gstart = d->g_start.ptr;
    return GP_OK;
}

/* Runs the walk over ni prepared i-records (groups: gstart/ngroups, or
 * NULL for plain groups of 32); results land in s->hout. */
static gp_status walk(gp_solver *s, size_t ni, int for_forces, const uint32_t *gstart, uint32_t ngroups_in,
                      uint64_t *interactions)
{
    dev_buffers *d = &s->d;
    gp_status r;
    int mode = mode_of(s);
    if (s->slots_mode != mode + 1) {
        uint32_t slots = 0;
        if ((r = dev(s, gp_tree_walk_slots(mode, &slots), "sizing the walk")) != GP_OK) return r;
        if ((r = reserve(s, &d->stacks, (size_t)slots * GP_TREE_STACK * sizeof(uint32_t), "the walk stacks")) != GP_OK) return r;
        s->walk_slots = slots;
        s->slots_mode = mode + 1;
    }
    if ((r = reserve(s, &d->next_group, 64, "the group counter")) != GP_OK) return r;
    if ((r = reserve(s, &d->counters, 4 * sizeof(unsigned long long), "the interaction counters")) != GP_OK) return r;
    unsigned long long cnt[4] = {0, 0, 0, 0};
    /* cleared on the device: no copy and no wait */
    if ((r = dev(s, (int)cudaMemsetAsync(d->counters.ptr, 0, sizeof cnt, (cudaStream_t)s->cu.stream),
                 "clearing the counters")) != GP_OK) return r;

    /* ij-parallelism: how many parts, and the cut they share out */
    uint32_t ngroups = gstart ? ngroups_in : (uint32_t)((ni + GP_TREE_GROUP - 1) / GP_TREE_GROUP);
    uint32_t parts = 1, level = 0;
    if (ngroups < GP_TREE_WORK_TARGET / 4) {
        parts = (GP_TREE_WORK_TARGET + ngroups - 1) / ngroups;
        if (parts > GP_TREE_MAX_PARTS) parts = GP_TREE_MAX_PARTS;
        /* no more parts than the widest level has 8 cells for; then the
         * first level at least 8 cells per part wide. The cut holds < 64 *
         * parts cells of that level and < 8 * parts leaves per level
         * above it: each part's share fits its stack */
        uint32_t widest = 0;
        for (uint32_t L = 0; L < s->nlevels; ++L)
            if (s->level_start[L + 1] - s->level_start[L] > widest) widest = s->level_start[L + 1] - s->level_start[L];
        if (parts > widest / 8) parts = widest / 8;
        if (parts < 2) parts = 1;
        uint32_t L = 1;
        while (parts > 1 && L < s->nlevels && s->level_start[L + 1] - s->level_start[L] < 8 * parts) ++L;
        if (parts > 1 && L < s->nlevels) level = L;
        else parts = 1;
    }
    uint32_t ncut = 0;
    const int cut_kept = parts > 1 && s->cut_parts == parts && s->cut_level == level && s->cut_build == s->builds;
    if (cut_kept) ncut = s->cut_n;
    if (parts > 1 && !cut_kept) {
        s->cut_parts = 0; /* no cut kept until this one is whole */
        uint32_t lend = s->level_start[level + 1];
        if ((r = reserve(s, &d->cut_flags, lend * 4, "the tree cut")) != GP_OK) return r;
        if ((r = reserve(s, &d->cut_offs, lend * 4, "the tree cut")) != GP_OK) return r;
        if ((r = reserve(s, &d->cut_keys, 2 * (size_t)lend * 4, "the tree cut")) != GP_OK) return r;
        if ((r = reserve(s, &d->cut_ids, 2 * (size_t)lend * 4, "the tree cut")) != GP_OK) return r;
        if ((r = reserve(s, &d->cut, lend * 4, "the tree cut")) != GP_OK) return r;
        if ((r = reserve(s, &d->scalar, 64, "a device scalar")) != GP_OK) return r;
        size_t tmp = 0;
        if ((r = dev(s, gp_tree_cut(d->cells.ptr, lend, level, (uint32_t)s->base.p.n, d->cut_flags.ptr, d->cut_offs.ptr,
                                    d->cut_keys.ptr, d->cut_ids.ptr, d->cut.ptr, NULL, &tmp, d->scalar.ptr, &ncut,
                                    s->cu.stream), "sizing the tree cut")) != GP_OK) return r;
        if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
        tmp = d->cub.bytes;
        if ((r = dev(s, gp_tree_cut(d->cells.ptr, lend, level, (uint32_t)s->base.p.n, d->cut_flags.ptr, d->cut_offs.ptr,
                                    d->cut_keys.ptr, d->cut_ids.ptr, d->cut.ptr, d->cub.ptr, &tmp, d->scalar.ptr,
                                    &ncut, s->cu.stream), "cutting the tree for an ij-parallel walk")) != GP_OK) return r;
        uint32_t off[GP_TREE_MAX_PARTS + 1];
        for (uint32_t p = 0; p <= parts; ++p) off[p] = (uint32_t)((uint64_t)ncut * p / parts);
        if ((r = reserve(s, &d->cut_off, sizeof off, "the cut offsets")) != GP_OK) return r;
        if ((r = gp_cuda_upload(&s->base, &s->cu, d->cut_off.ptr, off, (parts + 1) * sizeof(uint32_t),
                                "copying the cut offsets")) != GP_OK) return r;
        s->cut_build = s->builds;
        s->cut_level = level;
        s->cut_parts = parts;
        s->cut_n = ncut;
    }
    if (parts > 1) {
        if ((r = reserve(s, &d->seg, (size_t)parts * ni * sizeof(gp_d4), "the ij-parallel partial sums")) != GP_OK) return r;
        gp_log(&s->base, GP_LOG_DEBUG, "ij-parallel walk: %u groups x %u parts over a cut of %u cells at level %u",
               ngroups, parts, ncut, level);
    }

    gp_walk_args a;
    memset(&a, 0, sizeof a);
    a.parts = parts;
    a.gstart = gstart;
    a.ngroups = ngroups;
    a.cut = d->cut.ptr;
    a.cut_off = d->cut_off.ptr;
    a.seg = d->seg.ptr;
    a.ipos = d->ipos.ptr;
    a.islot = d->islot.ptr;
    a.iself = for_forces ? d->iself.ptr : NULL;
    a.iorig = for_forces ? d->iorig.ptr : NULL;
    a.iaold = for_forces ? d->iaold.ptr : NULL;
    a.ni = (uint32_t)ni;
    a.ppos = d->f4.ptr;
    if (s->drifted) {
        a.cub = d->cubic.ptr;
        a.ncub = s->n_tree;
        a.tau = (float)(s->ds.t_pred - s->drift_t0);
    }
    a.cells = d->cells.ptr;
    a.rec = d->rec.ptr;
    a.ncells = s->ncells;
    a.stacks = d->stacks.ptr;
    a.warp_slots = s->walk_slots;
    a.next_group = d->next_group.ptr;
    a.counters = d->counters.ptr;
    a.mode = mode;
    a.quad = gp_param_enum(&s->base, P_ORDER) == 1;
    a.accel = gp_param_enum(&s->base, P_MAC) == GP_MAC_ACCELERATION;
    a.G = 1.0f; /* G cancels in the acceleration MAC (|a_old| is kept without it) */
    a.delta_acc = (float)gp_param_double(&s->base, P_DELTA_ACC);
    {
        double tmax = gp_param_double(&s->base, P_THETA_MAX);
        a.tmax_inv = tmax > 0 ? (float)(1.0 / tmax) : 0.f;   /* rounds to the nearest float */
    }
    double eps = gp_param_double(&s->base, P_EPS) / s->len_scale; /* exact: a power of two */
    a.eps2 = eps * eps;
    a.out = d->out.ptr;
    a.aold = for_forces ? d->aold.ptr : NULL;

    double t0 = gp_wtime(), copy_s = 0;
    if ((r = dev(s, gp_tree_walk(&a, s->cu.stream), "launching the tree walk")) != GP_OK) return r;
    /* the results and the counters (in the 32 bytes after them) come back
     * behind the walk, with one wait for all three */
    unsigned long long *hcnt = (unsigned long long *)((gp_d4 *)s->hout.ptr + ni);
    if ((r = gp_cuda_fetch_begin(&s->base, &s->cu, "walking the tree")) != GP_OK ||
        (r = gp_cuda_fetch(&s->base, &s->cu, s->hout.ptr, d->out.ptr, ni * sizeof(gp_d4),
                           "copying the results from the GPU")) != GP_OK ||
        (r = gp_cuda_fetch(&s->base, &s->cu, hcnt, d->counters.ptr, sizeof cnt, "reading the counters")) != GP_OK ||
        (r = gp_cuda_fetch_wait(&s->base, &s->cu, "walking the tree", &copy_s)) != GP_OK)
        return r;
    memcpy(cnt, hcnt, sizeof cnt);
    const double t1 = gp_wtime();
    s->base.stats.seconds_walk += t1 - t0 - copy_s;
    s->base.stats.seconds_transfer += copy_s;
    s->base.stats.seconds_moments += gp_cuda_phase_seconds(&s->cu); /* a refit's, if one came before */
    if (cnt[2] != 0)
        return gp_fail(&s->base, GP_ERR_INTERNAL,
                       "the tree walk ran out of its stack (%u entries per warp) in %llu group(s); "
                       "the results were discarded; please report this bug with n and the "
                       "particle distribution", GP_TREE_STACK, (unsigned long long)cnt[2]);
    gp_log(&s->base, GP_LOG_DEBUG, "walk: %u i-records in %u groups x %u parts, %.1f interactions per record, "
           "%.1f list entries per group (the warps' work)", (unsigned)ni, ngroups, parts,
           (double)(cnt[0] + cnt[1]) / (double)(ni ? ni : 1), (double)cnt[3] / (double)(ngroups ? ngroups : 1));
    s->base.stats.pp_interactions += cnt[0];
    s->base.stats.pc_interactions += cnt[1];
    *interactions = cnt[0] + cnt[1];
    return GP_OK;
}

/* Results in the caller's units: G * (M / L^2) * a and -G * (M / L) * phi
 * (exact powers of two; both 1 for ordinary data). A result that leaves
 * double's range (inf, or 0 from a nonzero sum) is an error. */
static gp_status scatter(gp_solver *s, size_t ni, double *acc, double *pot)
{
    return gp_cuda_unscale_results(&s->base, gp_param_double(&s->base, P_G), s->mass_scale,
                                   s->len_scale, (const double *)s->hout.ptr, ni, acc, pot);
}

/* ---- the ABI entry points --------------------------------------------- */

GP_PLUGIN_COMMON_ENTRIES(cuda_tree, PLUGIN_NAME, params, sizeof params / sizeof params[0])

static void cuda_tree_finalize(gp_solver *s)
{
    if (!s) return;
    if (s->cu.open) {
        (void)gp_cuda_enter(&s->base, &s->cu);
        free_all(&s->d);
        gp_dstate_free(&s->ds);
        gp_dbuf_free(&s->vel);
        gp_hbuf_free(&s->stage);
        gp_hbuf_free(&s->hout);
        gp_cuda_close(&s->cu);
    }
    gp_lazy_free(&s->bounds);
    gp_base_free(&s->base);
    free(s);
}

static gp_status cuda_tree_init(gp_solver **out, const gp_init_args *args)
{
    gp_status st = gp_solver_create(out, sizeof **out, PLUGIN_NAME, args, params,
                                    sizeof params / sizeof params[0]);
    if (st != GP_OK) return st;
    gp_solver *s = *out;
    st = gp_cuda_open_in_init(&s->base, &s->cu, gp_tree_probe);
    if (st != GP_OK) {
        cuda_tree_finalize(s);
        *out = NULL;
    }
    return st;
}

/* Whether set_particles brings back, bit for bit, the particles the
 * device's tree was just built from (a host re-sending them before each
 * field call, as gp_sim does between steps): then nothing goes up and the
 * tree stays, as a build of the same particles would make it again. */
static int keeps_tree(const gp_solver *s, size_t n, const double *pos, const double *mass)
{
    const gp_particles *p = &s->base.p;
    return s->tree_fresh && s->have_tree && !s->need_build && !s->need_refit && !s->moved && s->dev_valid &&
           !s->host_stale && p->have && p->n == n && memcmp(p->pos, pos, 3 * n * sizeof *pos) == 0 &&
           memcmp(p->mass, mass, n * sizeof *mass) == 0;
}

/* set_particles' resets without the upload and the build (keeps_tree). */
static gp_status set_same_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    gp_status r = gp_particles_store(&s->base, n, pos, mass);
    if (r != GP_OK) return r;
    s->idx_valid = 0;
    s->src_dev_valid = 0;
    s->drift_anchored = s->all_predicted = 0;
    gp_lazy_reset(&s->bounds);
    model_reset(s);
    if ((r = gp_dstate_clear(&s->base, &s->cu, &s->ds)) != GP_OK) return r;
    /* no previous accelerations: the acceleration MAC starts with bh */
    int e = (int)cudaMemsetAsync(s->d.aold.ptr, 0, n * sizeof(float), (cudaStream_t)s->cu.stream);
    if ((r = dev(s, e, "clearing the previous accelerations")) != GP_OK) return r;
    s->tree_kept = 1;
    gp_log(&s->base, GP_LOG_DEBUG, "set_particles n=%zu: the particles the tree was built from; it is kept", n);
    return GP_OK;
}

static gp_status set_particles_call(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_particles");
    double ph0 = gp_wtime(), tr0 = s->base.stats.seconds_transfer;
    gp_status r = gp_check_particles(&s->base, n, pos, mass);
    if (r != GP_OK) return r;
    double ph1 = gp_wtime();
    if (n > (size_t)INT32_MAX)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "n = %zu is more than cuda-tree handles in one instance (2^31 - 1)", n);
    if ((r = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return r;
    if (keeps_tree(s, n, pos, mass)) return set_same_particles(s, n, pos, mass);
    size_t held = 0;
    for (size_t k = 0; k < sizeof s->d / sizeof(gp_dbuf); ++k) held += ((gp_dbuf *)&s->d)[k].bytes;
    size_t need = bytes_for(n, s->d.stacks.bytes ? 0 : (size_t)64 << 20);
    if (drift_on(s)) need += drift_bytes_for(n);
    char what[160];
    snprintf(what, sizeof what, "the tree buffers for n = %zu particles", n);
    if ((r = gp_cuda_fits(&s->base, &s->cu, need > held ? need - held : 0, what)) != GP_OK) return r;
    /* growing a buffer drops its contents: the host copy must hold what
     * only the device had (after predict) before that can happen */
    if (n > s->n_cap) {
        if ((r = sync_host_positions(s)) != GP_OK) return r;
        /* from here on the device copy is stale, so a failure below
         * leaves the old particles (in base.p) to be uploaded and rebuilt
         * by the next compute call; without growth the device keeps them */
        s->dev_valid = 0;
    }
    s->have_tree = 0;
    s->need_build = 1;
    if ((r = reserve_particles(s, n)) != GP_OK) return r;
    double ph2 = gp_wtime();
    if ((r = gp_particles_store(&s->base, n, pos, mass)) != GP_OK) return r;
    double ph3 = gp_wtime();
    s->dev_valid = 0;
    s->have_tree = 0;
    s->tree_fresh = s->tree_kept = 0;
    s->need_build = 1;
    s->moved = 0;
    s->idx_valid = 0;
    s->host_stale = 0;
    s->src_dev_valid = 0;
    s->drift_anchored = s->all_predicted = 0;
    gp_lazy_reset(&s->bounds);
    model_reset(s);
    choose_mass_scale(s);
    if ((r = gp_dstate_clear(&s->base, &s->cu, &s->ds)) != GP_OK) return r;
    if ((r = upload_particles(s, 1)) != GP_OK) return r;
    /* no previous accelerations: the acceleration MAC starts with bh */
    int e = (int)cudaMemsetAsync(s->d.aold.ptr, 0, n * sizeof(float), (cudaStream_t)s->cu.stream);
    if ((r = dev(s, e, "clearing the previous accelerations")) != GP_OK) return r;
    if ((r = gp_cuda_sync(&s->base, &s->cu, "clearing the previous accelerations")) != GP_OK) return r;
    s->dev_valid = 1;
    gp_log(&s->base, GP_LOG_DEBUG,
           "set_particles n=%zu: validation %.3f ms, device buffers %.3f ms, host copy (plugin/base, not "
           "validated again) %.3f ms, mass scale + upload %.3f ms (transfers %.3f ms)",
           n, 1e3 * (ph1 - ph0), 1e3 * (ph2 - ph1), 1e3 * (ph3 - ph2), 1e3 * (gp_wtime() - ph3),
           1e3 * (s->base.stats.seconds_transfer - tr0));
    return GP_OK;
}

static gp_status update_positions_call(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status r = gp_particles_update(&s->base, pos);
    if (r != GP_OK) return r;
    s->host_stale = 0;
    s->drift_anchored = s->all_predicted = 0;
    gp_lazy_reset(&s->bounds);
    if ((r = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return r;
    if ((r = gp_dstate_clear(&s->base, &s->cu, &s->ds)) != GP_OK) return r;
    positions_moved(s);
    if (s->dev_valid) return upload_particles(s, 0);
    return GP_OK; /* ensure_tree uploads everything */
}

static gp_status cuda_tree_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    gp_status r = gp_particles_set_active(&s->base, n_active, index);
    if (r == GP_OK) s->idx_valid = 0;
    return r;
}

static int bits_for(uint32_t n)
{
    int b = 1;
    while (b < 32 && (n >> b) != 0) ++b;
    return b;
}

static gp_status compute_forces_ex_call(gp_solver *s, const gp_outputs *out);

static gp_status compute_forces_call(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    if (s->base.p.group) {   /* the groups' rule: through compute_forces_ex */
        gp_outputs o = gp_outputs_forces(acc, pot);
        return compute_forces_ex_call(s, &o);
    }
    gp_status r = gp_check_compute(&s->base, acc);
    if (r != GP_OK) return r;
    if ((r = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return r;
    double ph[4], ph0 = gp_wtime(), tr0 = s->base.stats.seconds_transfer; /* host phases, for the debug log */
    s->drifted = drift_fast(s);
    if (s->drifted) {
        if ((r = drift_records(s)) != GP_OK) return r;
    } else {
        if ((r = ensure_tree(s)) != GP_OK) return r;
        if ((r = records(s)) != GP_OK) return r;
    }
    ph[0] = gp_wtime();
    const gp_particles *p = &s->base.p;
    dev_buffers *d = &s->d;
    size_t ni = p->n_active;
    uint32_t n = (uint32_t)p->n;
    if ((r = reserve_irecords(s, ni)) != GP_OK) return r;
    void *st = s->cu.stream;
    if (p->active && !s->idx_valid) {
        if ((r = reserve(s, &d->idx, ni * 4, "the active index list")) != GP_OK) return r;
        double t0 = gp_wtime();
        /* covered by the walk's wait before this call returns */
        if ((r = gp_cuda_send(&s->base, &s->cu, d->idx.ptr, p->active, ni * 4,
                              "copying the active index list to the GPU")) != GP_OK) return r;
        s->base.stats.seconds_transfer += gp_wtime() - t0;
        s->idx_valid = 1;
    }
    /* the acceleration MAC's |a_old| from the held state where the last
     * call gave none: set_particles cleared both, and a run's resync sends
     * the state again (cpu-tree does the same, octree/cpu_driver.h). Only
     * flags held for these n particles count (after a change of n the old
     * buffers stay until the next set_state). */
    const double G = fabs(gp_param_double(&s->base, P_G)), afac = s->len_scale * s->len_scale / (G * s->mass_scale);
    const int held = s->ds.any && s->ds.n == n && s->ds.flag.ptr && isfinite(afac) && afac > 0;
    const gp_aold_state as = { held ? (const double *)s->ds.acc.ptr : NULL,
                               held ? (const uint8_t *)s->ds.flag.ptr : NULL, afac };
    if (p->src) {
        /* the tree holds the sources only: active particles come from the
         * unsorted positions, in key order for compact groups of 32 */
        const uint32_t *act = p->active ? (const uint32_t *)d->idx.ptr : NULL;
        if ((r = sort_targets(s, d->pos_in.ptr, act, ni, 1, "the active particles")) != GP_OK) return r;
        r = dev(s, gp_tree_irecords_any(d->pos_in.ptr, act, d->fidx_b.ptr, (uint32_t)ni, d->center.ptr,
                                        1.0 / s->len_scale, d->rank.ptr, d->aold.ptr, &as, d->ipos.ptr, d->islot.ptr,
                                        d->iself.ptr, d->iorig.ptr, d->iaold.ptr, st),
                "gathering the active particles");
    } else if (p->active) {
        if ((r = reserve(s, &d->akey_a, ni * 4, "the active keys")) != GP_OK) return r;
        if ((r = reserve(s, &d->akey_b, ni * 4, "the sorted active keys")) != GP_OK) return r;
        if ((r = reserve(s, &d->aval_a, ni * 4, "the active slots")) != GP_OK) return r;
        if ((r = reserve(s, &d->aval_b, ni * 4, "the sorted active slots")) != GP_OK) return r;
        /* the active particles in key order: compact i-groups of 32 */
        if ((r = dev(s, gp_tree_active_keys(d->idx.ptr, d->rank.ptr, (uint32_t)ni, d->akey_a.ptr, d->aval_a.ptr, st),
                     "ordering the active particles")) != GP_OK) return r;
        size_t tmp = 0;
        int end_bit = bits_for(n - 1);
        if ((r = dev(s, gp_tree_sort32(NULL, &tmp, NULL, NULL, NULL, NULL, (uint32_t)ni, end_bit, st),
                     "sizing the active sort")) != GP_OK) return r;
        if ((r = cub_reserve(s, tmp)) != GP_OK) return r;
        tmp = d->cub.bytes;
        if ((r = dev(s, gp_tree_sort32(d->cub.ptr, &tmp, d->akey_a.ptr, d->akey_b.ptr, d->aval_a.ptr, d->aval_b.ptr,
                                       (uint32_t)ni, end_bit, st), "sorting the active particles")) != GP_OK) return r;
        if (s->drifted) {
            /* the sorted records are the anchor's: the targets come from
             * their predicted positions (owed ones made), in key order */
            if ((r = gp_dstate_current(&s->base, &s->cu, &s->ds, d->idx.ptr, ni)) != GP_OK) return r;
            r = dev(s, gp_tree_irecords_any(d->pos_in.ptr, d->idx.ptr, d->aval_b.ptr, (uint32_t)ni, d->center.ptr,
                                            1.0 / s->len_scale, d->rank.ptr, d->aold.ptr, &as, d->ipos.ptr,
                                            d->islot.ptr, d->iself.ptr, d->iorig.ptr, d->iaold.ptr, st),
                    "gathering the active particles");
        } else {
            r = dev(s, gp_tree_irecords_forces(d->f4.ptr, d->perm.ptr, d->aold.ptr, &as, d->akey_b.ptr, d->aval_b.ptr,
                                               (uint32_t)ni, d->ipos.ptr, d->islot.ptr, d->iself.ptr, d->iorig.ptr,
                                               d->iaold.ptr, st), "gathering the active particles");
        }
    } else {
        r = dev(s, gp_tree_irecords_forces(d->f4.ptr, d->perm.ptr, d->aold.ptr, &as, NULL, NULL, n, d->ipos.ptr,
                                           d->islot.ptr, d->iself.ptr, d->iorig.ptr, d->iaold.ptr, st),
                "gathering the particles");
    }
    if (r != GP_OK) return r;
    const uint32_t *gstart = NULL;
    uint32_t ngroups = 0;
    if (p->src) r = make_groups(s, ni, d->fkey_b.ptr, NULL, &gstart, &ngroups);
    else r = make_groups(s, ni, d->keys_b.ptr, d->iself.ptr, &gstart, &ngroups);
    if (r != GP_OK) return r;
    ph[1] = gp_wtime();
    uint64_t inter = 0;
    if ((r = walk(s, ni, 1, gstart, ngroups, &inter)) != GP_OK) return r;
    ph[2] = gp_wtime();
    if ((r = scatter(s, ni, acc, pot)) != GP_OK) return r;
    ph[3] = gp_wtime();
    s->base.stats.force_calls++;
    model_observe(s, ni, inter);
    gp_log(&s->base, GP_LOG_DEBUG,
           "compute_forces n=%u active=%zu%s: tree+records %.3f ms, i-records+groups %.3f ms, walk+download "
           "%.3f ms, scatter %.3f ms; transfers %.3f ms in all; excess %.3g of %.3g",
           n, ni, s->drifted ? " (drifted tree)" : "", 1e3 * (ph[0] - ph0), 1e3 * (ph[1] - ph[0]),
           1e3 * (ph[2] - ph[1]), 1e3 * (ph[3] - ph[2]),
           1e3 * (s->base.stats.seconds_transfer - tr0), s->excess, GP_TREE_BUILD_COST * (double)s->n_tree);
    return GP_OK;
}

static gp_status compute_field_call(gp_solver *s, size_t m, const double *points, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    gp_status r = gp_cuda_check_field(&s->base, m, points, acc);
    if (r != GP_OK) return r;
    if ((r = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return r;
    s->drifted = 0;
    if ((r = ensure_tree(s)) != GP_OK) return r;
    if ((r = records(s)) != GP_OK) return r;
    dev_buffers *d = &s->d;
    void *st = s->cu.stream;
    if ((r = reserve_irecords(s, m)) != GP_OK) return r;
    if ((r = reserve(s, &d->fpts, m * 3 * sizeof(double), "the field points")) != GP_OK) return r;
    double t0 = gp_wtime();
    if ((r = gp_cuda_upload_staged(&s->base, &s->cu, &s->stage, d->fpts.ptr, points, m * 3 * sizeof(double),
                                   "copying the field points to the GPU")) != GP_OK) return r;
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    /* points in key order so that groups of 32 are compact */
    if ((r = sort_targets(s, d->fpts.ptr, NULL, m, 0, "the field points")) != GP_OK) return r;
    if ((r = dev(s, gp_tree_irecords_field(d->fpts.ptr, d->fidx_b.ptr, (uint32_t)m, d->center.ptr, 1.0 / s->len_scale,
                                           d->ipos.ptr, d->islot.ptr, st), "preparing the field points")) != GP_OK) return r;
    uint64_t inter = 0;
    const uint32_t *gstart = NULL;
    uint32_t ngroups = 0;
    if ((r = make_groups(s, m, d->fkey_b.ptr, NULL, &gstart, &ngroups)) != GP_OK) return r;
    if ((r = walk(s, m, 0, gstart, ngroups, &inter)) != GP_OK) return r;
    if ((r = scatter(s, m, acc, pot)) != GP_OK) return r;
    s->base.stats.field_calls++;
    return GP_OK;
}

/* ---- ABI 1.1 ------------------------------------------------------------ */

static gp_status set_state_call(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                              const double *vel, const double *acc, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state");
    gp_status r = gp_dstate_set(&s->base, &s->cu, &s->ds, &s->stage, s->d.pos_in.ptr, !s->host_stale, n_sub, index,
                                pos, vel, acc, NULL, t);
    if (r == GP_OK && n_sub) {
        gp_lazy_note_state(&s->bounds, n_sub, index, pos, vel, acc, NULL, t);
        positions_moved(s);
        r = drift_state_given(s, n_sub);
    }
    return r;
}

static gp_status predict_call(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    int moved = 0;
    gp_status r;
    /* on an anchored drifted tree the kernel over every particle is owed:
     * a block step reads only its active particles' positions */
    if (drift_on(s) && s->drift_anchored && s->ds.any && gp_lazy_safe_to_defer(&s->bounds, t)) {
        r = gp_dstate_defer(&s->base, &s->cu, &s->ds, s->d.pos_in.ptr, t);
        moved = r == GP_OK;
    } else {
        r = gp_dstate_predict(&s->base, &s->cu, &s->ds, s->d.pos_in.ptr, t, &moved);
    }
    s->all_predicted = r == GP_OK;
    if (r == GP_OK && moved) {
        s->host_stale = 1;
        positions_moved(s);
    }
    return r;
}

static gp_status get_positions_call(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    if (!s->host_stale) return gp_positions_get(&s->base, n_sub, index, pos); /* no transfer */
    return gp_dstate_get(&s->base, &s->cu, &s->ds, &s->stage, s->d.pos_in.ptr, n_sub, index, pos);
}

static gp_status cuda_tree_set_source_subset(gp_solver *s, size_t n_src, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_source_subset");
    int changed; /* 0: all before and after, the tree stands */
    gp_status r = gp_sources_replace(&s->base, n_src, index, &changed);
    if (changed) {
        s->src_dev_valid = 0;
        s->need_build = 1; /* a tree of the new sources alone */
        s->drift_anchored = 0;
    }
    return r;
}

static gp_status update_masses_call(gp_solver *s, size_t n_sub, const uint32_t *index, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_masses");
    gp_status r;
    if (n_sub) {
        if (s->tree_kept) s->need_build = 1;
        s->tree_kept = s->tree_fresh = 0;
        s->drift_anchored = 0; /* the moments change: refitted */
    }
    if (s->base.p.have && !s->dev_valid) { /* the next compute uploads everything from the host copy */
        r = gp_masses_update(&s->base, n_sub, index, mass);
        if (r == GP_OK) choose_mass_scale(s);
        return r;
    }
    r = gp_dstate_masses(&s->base, &s->cu, &s->ds, &s->stage, s->d.mass_in.ptr, n_sub, index, mass);
    if (r != GP_OK || n_sub == 0) return r;
    const double old_mass = s->mass_scale;
    choose_mass_scale(s);
    if ((r = rescale_aold(s, s->len_scale, old_mass)) != GP_OK) return r;
    s->need_refit = 1; /* moments from the new masses on the same tree */
    return GP_OK;
}

/* ---- ABI 1.2 ------------------------------------------------------------ */

static gp_status set_state_jerk_call(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                                     const double *vel, const double *acc, const double *jerk, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state_jerk");
    if (!jerk) /* refused with base's sentence (a no-op for n_sub == 0) */
        return gp_state_check_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t);
    gp_status r = gp_dstate_set(&s->base, &s->cu, &s->ds, &s->stage, s->d.pos_in.ptr, !s->host_stale, n_sub, index,
                                pos, vel, acc, jerk, t);
    if (r == GP_OK && n_sub) {
        gp_lazy_note_state(&s->bounds, n_sub, index, pos, vel, acc, jerk, t);
        positions_moved(s);
        r = drift_state_given(s, n_sub);
    }
    return r;
}

static gp_status get_velocities_call(gp_solver *s, size_t n_sub, const uint32_t *index, double *vel)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_velocities");
    return gp_dstate_get_velocities(&s->base, &s->cu, &s->ds, &s->stage, n_sub, index, vel);
}

static gp_status cuda_tree_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset, uint32_t *list,
                                          size_t *needed)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_neighbours");
    return gp_neighbours_get(&s->base, cap, offset, list, needed);
}

/* nn, pair_step and the lists, exact: cpu-tree's searches
 * (oct_outputs_ex) on a host tree of the current sources. The simplest
 * honest way for a GPU tree: the device tree's float records cannot
 * answer exactly, and the searches are cpu-tree's code (improvements
 * there reach this plugin too). Costs
 * 24 n bytes of positions back (when only the device had them, after
 * predict), 24 n bytes of velocities when a pairwise step is asked for,
 * and an O(n log n) host build: O(n) per call, hence no GP_CAP_NEIGHBOURS. */
static gp_status host_neighbours(gp_solver *s, const gp_outputs *out)
{
    const gp_particles *p = &s->base.p;
    double t0 = gp_wtime();
    gp_status r = sync_host_positions(s);
    if (r != GP_OK) return r;
    double *vel = NULL;
    if (out->pair_step || out->nb_step > 0 || out->pair_step_even || out->nb_step_even > 0) {
        if ((r = reserve(s, &s->vel, 3 * p->n * sizeof(double), "the velocities")) != GP_OK) return r;
        if ((r = gp_dstate_velocities(&s->base, &s->cu, &s->ds, (double *)s->vel.ptr)) != GP_OK) return r;
        if (!(vel = malloc(3 * (p->n ? p->n : 1) * sizeof *vel)))
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "compute_forces_ex: no memory for the velocities of %zu particles; free memory", p->n);
        double t1 = gp_wtime();
        r = gp_cuda_download_staged(&s->base, &s->cu, &s->stage, vel, s->vel.ptr, 3 * p->n * sizeof(double),
                                    "copying the velocities from the GPU");
        s->base.stats.seconds_transfer += gp_wtime() - t1;
        if (r != GP_OK) {
            free(vel);
            return r;
        }
    }
    /* the current sources (oct_tree_build keeps the massive ones) */
    const size_t ns = p->n_src;
    double *spos = malloc(3 * (ns ? ns : 1) * sizeof *spos), *smass = malloc((ns ? ns : 1) * sizeof *smass);
    uint32_t *pid = malloc((ns ? ns : 1) * sizeof *pid);
    oct_tree t;
    int built = 0;
    if (spos && smass && pid) {
        for (size_t k = 0; k < ns; ++k) {
            size_t i = gp_source_index(&s->base, k);
            memcpy(&spos[3 * k], &p->pos[3 * i], 3 * sizeof *spos);
            smass[k] = p->mass[i];
        }
        built = oct_tree_build(&t, ns, spos, smass, 32, 16, GP_KEY_PEANO_HILBERT) == 0;
    }
    if (!built) {
        free(vel); free(spos); free(smass); free(pid);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory for the host tree of %zu sources that the neighbour "
                       "search needs; free memory or leave nn_index, nn_dist2, pair_step and the lists out", ns);
    }
    for (uint32_t k = 0; k < t.nsrc; k++) pid[k] = (uint32_t)gp_source_index(&s->base, t.order[t.sid[k]]);
    const double eps = gp_param_double(&s->base, P_EPS);
    r = oct_outputs_ex(&s->base, &t, pid, vel, out, gp_param_double(&s->base, P_G), eps * eps,
                            omp_get_max_threads(), NULL);
    oct_tree_free(&t);
    free(vel); free(spos); free(smass); free(pid);
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return r;
}

/* cuda-tree's one refusal of the 1.2 and 1.3 outputs, for fn. */
static gp_status no_jerk(gp_solver *s, const char *fn)
{
    return gp_fail(&s->base, GP_ERR_UNSUPPORTED,
                   "%s: cuda-tree computes no jerk (its cells carry no velocities, so a "
                   "cell's jerk would not be honest); leave jerk NULL, or use cuda-direct (GP_CAP_JERK) "
                   "for Hermite integrators", fn);
}

static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out);
static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out);

static gp_status compute_forces_ex_call(gp_solver *s, const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces_ex");
    gp_status r = gp_check_outputs_ex(&s->base, out);
    if (r != GP_OK) return r;
    if (out->jerk) return no_jerk(s, "compute_forces_ex");
    gp_outputs o = gp_outputs_read(out);
    /* the even step is the host tree search's too; groups take the exact pass */
    return s->base.p.group ? forces_ex_13(s, &o) : forces_ex_12(s, &o);
}

/* 1.2's outputs */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out)
{
    gp_status r;
    if ((r = compute_forces_call(s, out->acc, out->pot)) != GP_OK) return r;
    /* A successful call that asks for no lists forgets the last ones (a
     * failed one leaves them); host_neighbours replaces them when asked. */
    const int lists = out->nb_radius || out->nb_step > 0 || out->nb_step_even > 0;
    if (!lists) gp_neighbours_forget(&s->base);
    if (!out->nn_index && !out->nn_dist2 && !out->pair_step && !out->pair_step_even && !lists)
        return GP_OK;
    return host_neighbours(s, out);
}

/* ---- ABI 1.3 ------------------------------------------------------------ */

/* Groups and outputs at points: the exact pass on the host
 * (gp_cuda_exact_sources): exact, so never above the tree's bounds and
 * never a cell approximated across a group's exclusion, but O(n_active n)
 * on the host, so no GP_CAP_SOURCE_GROUPS. */
static gp_status exact_sources(gp_solver *s, gp_exact_sources *src, double **buf)
{
    return gp_cuda_exact_sources(s, &s->base, &s->cu, gp_param_double(&s->base, P_G),
                                 gp_param_double(&s->base, P_EPS), get_positions_call,
                                 get_velocities_call, src, buf);
}

static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out)
{
    gp_exact_sources src;
    double *buf = NULL;
    gp_status r = exact_sources(s, &src, &buf);
    if (r == GP_OK) r = gp_forces_ex_13(s, &s->base, forces_ex_12, &src, out);
    free(buf);
    return r;
}

GP_PLUGIN_13_ENTRIES(cuda_tree, PLUGIN_NAME)

static gp_status compute_field_ex_call(gp_solver *s, size_t n, const double *pos, const double *vel,
                                       const uint32_t *exclude, const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field_ex");
    gp_status r = gp_check_field_ex(&s->base, n, pos, vel, exclude, out);
    if (r != GP_OK) return r;
    if (out->jerk) return no_jerk(s, "compute_field_ex");
    gp_exact_sources src;
    double *buf = NULL;
    if ((r = exact_sources(s, &src, &buf)) == GP_OK)
        r = gp_field_ex_exact(&s->base, &src, n, pos, vel, exclude, out);
    free(buf);
    return r;
}

/* The entry points that may copy: each logs the bytes it moved each way
 * and its wall time (GP_LOG_DEBUG, "<call>: host->device N bytes,
 * device->host M bytes, T ms"), so a host (and tests/gpu/gpu-abi11.c) can
 * check that a block step moves O(n_active) bytes, and see where its time
 * goes. Each is written out, so a search finds cuda_tree_<entry>: the
 * counters before the call (bytes_mark_now), the call, the log line
 * (bytes_logged). */
typedef struct bytes_mark { unsigned long long h2d, d2h; double t0; } bytes_mark;

static bytes_mark bytes_mark_now(const gp_solver *s)
{
    bytes_mark m = { s->cu.bytes_h2d, s->cu.bytes_d2h, 0.0 };
    m.t0 = gp_wtime();
    return m;
}

static gp_status bytes_logged(gp_solver *s, bytes_mark m, const char *fn, gp_status r)
{
    return gp_cuda_log_bytes(&s->base, &s->cu, fn, m.h2d, m.d2h, m.t0, r);
}

static gp_status cuda_tree_set_particles(gp_solver *s, size_t n, const double *pos,
                                         const double *mass)
{
    if (!s) return set_particles_call(s, n, pos, mass);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "set_particles", set_particles_call(s, n, pos, mass));
}

static gp_status cuda_tree_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return update_positions_call(s, pos);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "update_positions", update_positions_call(s, pos));
}

static gp_status cuda_tree_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return compute_forces_call(s, acc, pot);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "compute_forces", compute_forces_call(s, acc, pot));
}

static gp_status cuda_tree_compute_field(gp_solver *s, size_t m, const double *points, double *acc,
                                         double *pot)
{
    if (!s) return compute_field_call(s, m, points, acc, pot);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "compute_field", compute_field_call(s, m, points, acc, pot));
}

static gp_status cuda_tree_set_state(gp_solver *s, size_t n_sub, const uint32_t *index,
                                     const double *pos, const double *vel, const double *acc,
                                     const double *t)
{
    if (!s) return set_state_call(s, n_sub, index, pos, vel, acc, t);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "set_state", set_state_call(s, n_sub, index, pos, vel, acc, t));
}

static gp_status cuda_tree_predict(gp_solver *s, double t)
{
    if (!s) return predict_call(s, t);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "predict", predict_call(s, t));
}

static gp_status cuda_tree_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index,
                                         double *pos)
{
    if (!s) return get_positions_call(s, n_sub, index, pos);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "get_positions", get_positions_call(s, n_sub, index, pos));
}

static gp_status cuda_tree_update_masses(gp_solver *s, size_t n_sub, const uint32_t *index,
                                         const double *mass)
{
    if (!s) return update_masses_call(s, n_sub, index, mass);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "update_masses", update_masses_call(s, n_sub, index, mass));
}

static gp_status cuda_tree_set_state_jerk(gp_solver *s, size_t n_sub, const uint32_t *index,
                                          const double *pos, const double *vel, const double *acc,
                                          const double *jerk, const double *t)
{
    if (!s) return set_state_jerk_call(s, n_sub, index, pos, vel, acc, jerk, t);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "set_state_jerk", set_state_jerk_call(s, n_sub, index, pos, vel, acc, jerk, t));
}

static gp_status cuda_tree_get_velocities(gp_solver *s, size_t n_sub, const uint32_t *index,
                                          double *vel)
{
    if (!s) return get_velocities_call(s, n_sub, index, vel);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "get_velocities", get_velocities_call(s, n_sub, index, vel));
}

static gp_status cuda_tree_compute_forces_ex(gp_solver *s, const gp_outputs *out)
{
    if (!s) return compute_forces_ex_call(s, out);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "compute_forces_ex", compute_forces_ex_call(s, out));
}

static gp_status cuda_tree_compute_field_ex(gp_solver *s, size_t n, const double *pos,
                                            const double *vel, const uint32_t *exclude,
                                            const gp_outputs *out)
{
    if (!s) return compute_field_ex_call(s, n, pos, vel, exclude, out);
    bytes_mark mark = bytes_mark_now(s);
    return bytes_logged(s, mark, "compute_field_ex", compute_field_ex_call(s, n, pos, vel, exclude, out));
}

static const gp_api api = GP_PLUGIN_API_13(cuda_tree, PLUGIN_NAME,
    GP_CAP_GPU | GP_CAP_TREE | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD |
    GP_CAP_POTENTIAL | GP_CAP_REFIT | GP_CAP_PREDICT | GP_CAP_SOURCE_SUBSET);

GP_PLUGIN_ENTRY(api)
