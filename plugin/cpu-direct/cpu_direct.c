/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_direct.c — the exact reference solver: O(N * N_active) pairwise
 * summation in double precision, OpenMP over target particles.
 *
 * Every other plugin is checked against this one, so it favours being
 * obviously right: the sum for each target runs over all massive sources in
 * index order, in chunks of GP_CHUNK sources (SIMD lanes inside a chunk, see
 * direct_kernel.h; chunk sums added in order, see evaluate), so the result
 * does not depend on the number of threads or on the active subset.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/direct_kernel.h"
#include "base/pair_step_bound.h"
#include "base/plugin_base.h"
#include "direct_lists.h"

#define PLUGIN_NAME "cpu-direct"

static const gp_param_info params[] = {
    GP_PARAM_ROW_G,
    GP_PARAM_ROW_EPS,
    GP_PARAM_ROW_THREADS,
};
enum { P_G, P_EPS, P_THREADS, N_PARAMS };

struct gp_solver {
    gp_base base;             /* first: errors, params, particle copy, stats */
    gp_direct_sources src;    /* massive particles as SoA, in index order    */
    uint8_t *in_src;          /* source-subset membership; NULL: all sources */
    int src_stale;            /* src no longer matches the particles or the
                                 source subset: filled at the next computation */
};

/* ---- sources (SoA copy of the massive particles) ------------------------ */

static void sources_free(gp_direct_sources *s)
{
    free(s->x);
    free(s->y);
    free(s->z);
    free(s->m);
    free(s->id);
    memset(s, 0, sizeof *s);
}

static int sources_alloc(gp_direct_sources *s, size_t n)
{
    memset(s, 0, sizeof *s);
    s->cap = n;
    size_t bytes = (n ? n : 1) * sizeof(double);
    s->x = malloc(bytes);
    s->y = malloc(bytes);
    s->z = malloc(bytes);
    s->m = malloc(bytes);
    s->id = malloc(bytes);
    if (!s->x || !s->y || !s->z || !s->m || !s->id) {
        sources_free(s);
        return 0;
    }
    return 1;
}

static size_t count_massive(size_t n, const double *mass)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) k += mass[i] > 0.0;
    return k;
}

/* Fills positions (and masses/ids) of the massive particles, index order;
 * with a source subset (ABI 1.1, in_src[i] != 0 for members) only those. */
static void sources_fill(gp_direct_sources *s, size_t n, const double *pos, const double *mass,
                         const uint8_t *in_src)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!(mass[i] > 0.0) || (in_src && !in_src[i])) continue;
        s->x[k] = pos[3 * i];
        s->y[k] = pos[3 * i + 1];
        s->z[k] = pos[3 * i + 2];
        s->m[k] = mass[i];
        s->id[k] = (double)i;
        ++k;
    }
    s->n = k;
}

/* ---- the ABI entry points ----------------------------------------------- */

GP_PLUGIN_COMMON_ENTRIES(cpu_direct, PLUGIN_NAME, params, N_PARAMS)
GP_PLUGIN_12_ENTRIES(cpu_direct, PLUGIN_NAME)

static gp_status cpu_direct_init(gp_solver **out, const gp_init_args *args)
{
    return gp_solver_create(out, sizeof **out, PLUGIN_NAME, args, params, N_PARAMS);
}

static void cpu_direct_finalize(gp_solver *s)
{
    if (!s) return;
    sources_free(&s->src);
    free(s->in_src);
    gp_base_free(&s->base);
    free(s);
}

static gp_status cpu_direct_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_particles");
    gp_status st = gp_check_particles(&s->base, n, pos, mass);
    if (st != GP_OK) return st;
    /* Build the new sources aside, so a failure changes nothing. */
    gp_direct_sources fresh;
    if (!sources_alloc(&fresh, count_massive(n, mass)))
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "set_particles: no memory for %zu sources; free memory "
                       "or use fewer particles", n);
    st = gp_particles_store(&s->base, n, pos, mass);
    if (st != GP_OK) {
        sources_free(&fresh);
        return st;
    }
    sources_fill(&fresh, n, pos, mass, NULL);
    sources_free(&s->src);
    s->src = fresh;
    s->src_stale = 0;
    free(s->in_src); /* set_particles restores all sources */
    s->in_src = NULL;
    return GP_OK;
}

/* The positions, masses or the source subset changed: the SoA sources are
 * gathered again from the base copy when a computation next needs them, so
 * a caller that sends positions, narrows the sources for one call and
 * restores them pays one gather per computation, not one per call. Never
 * grows past the set_particles allocation. */
static void refill(gp_solver *s)
{
    s->src_stale = 1;
}

/* Whether the m indices ascend (a subset in index order). */
static int ascending(const uint32_t *v, size_t m)
{
    for (size_t k = 1; k < m; ++k)
        if (v[k] <= v[k - 1]) return 0;
    return 1;
}

/* The massive members of a source subset listed in index order, from the
 * list itself: O(n_src), where the scan of sources_fill is O(n). The same
 * sources in the same order. */
static void sources_fill_list(gp_direct_sources *s, const gp_particles *p)
{
    size_t k = 0;
    for (size_t q = 0; q < p->n_src; ++q) {
        size_t i = p->src[q];
        if (!(p->mass[i] > 0.0)) continue;
        s->x[k] = p->pos[3 * i];
        s->y[k] = p->pos[3 * i + 1];
        s->z[k] = p->pos[3 * i + 2];
        s->m[k] = p->mass[i];
        s->id[k] = (double)i;
        ++k;
    }
    s->n = k;
}

static void sources_ready(gp_solver *s)
{
    if (!s->src_stale) return;
    const gp_particles *p = &s->base.p;
    if (s->in_src && p->src && ascending(p->src, p->n_src))
        sources_fill_list(&s->src, p);
    else
        sources_fill(&s->src, p->n, p->pos, p->mass, s->in_src);
    s->src_stale = 0;
}

static gp_status cpu_direct_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status st = gp_particles_update(&s->base, pos);
    if (st != GP_OK) return st;
    refill(s);
    return GP_OK;
}

static gp_status cpu_direct_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    return gp_particles_set_active(&s->base, n_active, index);
}

static int thread_count(const gp_solver *s)
{
    return gp_param_threads(&s->base);
}

/* ---- ABI 1.1 ------------------------------------------------------------- */

static gp_status cpu_direct_set_state(gp_solver *s, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state");
    gp_status st = gp_state_set(&s->base, n_sub, index, pos, vel, acc, t);
    if (st == GP_OK && n_sub) refill(s);
    return st;
}

static gp_status cpu_direct_predict(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    size_t moved;
    gp_status st = gp_state_predict(&s->base, t, &moved);
    if (st == GP_OK && moved) refill(s);
    return st;
}

static gp_status cpu_direct_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    return gp_positions_get(&s->base, n_sub, index, pos);
}

static gp_status cpu_direct_set_source_subset(gp_solver *s, size_t n_src, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_source_subset");
    uint8_t *member = NULL;
    if (n_src && s->base.p.have) {
        member = calloc(s->base.p.n, 1);
        if (!member)
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "set_source_subset: no memory for a %zu-byte membership map; "
                           "free memory or use fewer particles", s->base.p.n);
    }
    gp_status st = gp_sources_set(&s->base, n_src, index);
    if (st != GP_OK) {
        free(member);
        return st;
    }
    if (member)
        for (size_t k = 0; k < n_src; ++k) member[gp_source_index(&s->base, k)] = 1;
    free(s->in_src);
    s->in_src = member;
    refill(s);
    return GP_OK;
}

static gp_status cpu_direct_update_masses(gp_solver *s, size_t n_sub, const uint32_t *index,
                                  const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_masses");
    /* A particle that gains mass joins the sources: the SoA arrays were
     * sized at set_particles for the massive ones then, so grow them first
     * (before anything changes) when the new count needs it. */
    gp_status st = gp_check_subset(&s->base, "update_masses", n_sub, index);
    if (st != GP_OK) return st;
    size_t cap = s->src.cap;
    if (cap < s->base.p.n) {
        gp_direct_sources bigger;
        if (!sources_alloc(&bigger, s->base.p.n))
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "update_masses: no memory for %zu sources; free memory or "
                           "use fewer particles", s->base.p.n);
        st = gp_masses_update(&s->base, n_sub, index, mass);
        if (st != GP_OK) {
            sources_free(&bigger);
            return st;
        }
        sources_free(&s->src);
        s->src = bigger;
    } else {
        st = gp_masses_update(&s->base, n_sub, index, mass);
        if (st != GP_OK) return st;
    }
    refill(s);
    return GP_OK;
}

/*
 * The sum for one target is always formed the same way, whatever the
 * thread count or the number of targets:
 *
 *     f = 0;  for each chunk c of GP_CHUNK sources, in order:  f += S_c
 *
 * where S_c is the lane-ordered sum of direct_kernel.h over that chunk.
 * Two schedules produce exactly these additions:
 *   - many targets: tiles of GP_TILE targets per thread, chunk-major, so a
 *     chunk of sources is read from cache by a whole tile (memory traffic
 *     divided by GP_TILE for large n);
 *   - few targets (a small active subset): (target, chunk) pairs spread
 *     over the threads into a buffer of partial sums, then added per target
 *     in chunk order, so even one active particle uses every core.
 */
enum { GP_CHUNK = 1024, GP_TILE = 32 };

typedef struct targets {
    size_t m;
    const double *tpos;      /* field points, or NULL for particles      */
    const uint32_t *tidx;    /* active index list, or NULL for 0..m-1    */
    const double *ppos;      /* particle positions                       */
    const uint32_t *texcl;   /* with tpos: the particle each point
                                excludes (UINT32_MAX: none), or NULL     */
} targets;

/* Position and self id of target k (-1: it excludes no source). */
static inline const double *target(const targets *t, size_t k, double *self)
{
    if (t->tpos) {
        const uint32_t e = t->texcl ? t->texcl[k] : UINT32_MAX;
        *self = e == UINT32_MAX ? -1.0 : (double)e;
        return &t->tpos[3 * k];
    }
    size_t i = t->tidx ? (size_t)t->tidx[k] : k;
    *self = (double)i;
    return &t->ppos[3 * i];
}

/* Sources [c*GP_CHUNK, ...) as a view for the kernel. */
static inline gp_direct_sources chunk(const gp_direct_sources *src, size_t c)
{
    size_t j0 = c * GP_CHUNK, j1 = j0 + GP_CHUNK < src->n ? j0 + GP_CHUNK : src->n;
    gp_direct_sources v = {j1 - j0, src->x + j0, src->y + j0, src->z + j0, src->m + j0, src->id + j0, 0,
                           src->g ? src->g + j0 : NULL};
    return v;
}

/* What one pass computes per target: acc and pot (W = 4); with velocities
 * (ABI 1.2) the jerk beside them (W = 7), or the nearest source and the
 * pairwise step too (W = GP_EX_W, the jerk when `jerk`), from the same
 * summation: acc and pot have compute_forces' bits in every kind. */
typedef struct pass_kind {
    int W, jerk, step, prune;
    int even;                    /* the step is ABI 1.3's even one    */
    const gp_direct_vel *svel;   /* sources' velocities (W > 4)       */
    const double *tvel;          /* targets' velocities, 3 per target */
    const double *mass;          /* particle masses (W = GP_EX_W)     */
    double G;
    const uint32_t *groups;      /* ABI 1.3 (W = 4): the particles'
                                    groups, the sources' in src.g      */
} pass_kind;

/* Where a pass's results go (the outputs not asked for are NULL). */
typedef struct sink {
    double *acc, *pot, *jerk, *nn_dist2, *pair_step;
    uint32_t *nn_index;
} sink;

/* The empty sum of one target: zeros, no nearest source, no step. */
static void sum_init(double *f, int W)
{
    for (int d = 0; d < W; ++d) f[d] = 0.0;
    if (W == GP_EX_W) {
        f[GP_EX_NN_D2] = HUGE_VAL;
        f[GP_EX_NN_ID] = -1.0;
        f[GP_EX_STEP] = HUGE_VAL;
    }
}

/* f += one chunk's part (chunks in index order): sums added, the nearest
 * merged (ties to the lower index), the step's minimum taken. */
static void sum_add(double *f, const double *part, int W)
{
    for (int d = 0; d < (W < 7 ? W : 7); ++d) f[d] += part[d];
    if (W == GP_EX_W) {
        gp_direct_nn_merge(&f[GP_EX_NN_D2], &f[GP_EX_NN_ID], part[GP_EX_NN_D2], part[GP_EX_NN_ID]);
        if (part[GP_EX_STEP] < f[GP_EX_STEP]) f[GP_EX_STEP] = part[GP_EX_STEP];
    }
}

/* One chunk c of the sources for target k; for W = GP_EX_W, out[GP_EX_STEP]
 * holds on entry the step known so far (a seed for the pruning). */
static void kernel(const pass_kind *pk, const gp_direct_sources *src, size_t c, size_t k,
                   const double *x, double self, double eps2, double *out)
{
    gp_direct_sources v = chunk(src, c);
    if (pk->W == 4) {
        if (pk->groups) {   /* ABI 1.3: the target's group is skipped */
            uint32_t gi = pk->groups[(size_t)self];
            gp_direct_point_grouped(&v, x[0], x[1], x[2], self, gi == UINT32_MAX ? -1.0 : (double)gi,
                                    eps2, out);
        } else {
            gp_direct_point(&v, x[0], x[1], x[2], self, eps2, out);
        }
        return;
    }
    size_t j0 = c * GP_CHUNK;
    gp_direct_vel sv = {pk->svel->vx + j0, pk->svel->vy + j0, pk->svel->vz + j0};
    const double *u = &pk->tvel[3 * k];
    if (pk->W == 7) {
        gp_direct_point_jerk(&v, &sv, x[0], x[1], x[2], u[0], u[1], u[2], self, eps2, out);
        return;
    }
    const gp_direct_target t = {x[0], x[1], x[2], u[0], u[1], u[2], self,
                                self >= 0.0 ? pk->mass[(size_t)self] : 0.0, pk->G, pk->prune, pk->even};
    gp_direct_point_ex(&v, &sv, &t, eps2, pk->jerk, pk->step, out, NULL);
}

static void store(double G, const double *f, const pass_kind *pk, size_t k, const sink *o)
{
    o->acc[3 * k] = G * f[0];
    o->acc[3 * k + 1] = G * f[1];
    o->acc[3 * k + 2] = G * f[2];
    if (o->pot) o->pot[k] = G * f[3];
    if (pk->W == 7 || (pk->W == GP_EX_W && pk->jerk))
        for (int d = 0; d < 3; ++d) o->jerk[3 * k + d] = G * f[4 + d];
    if (pk->W == GP_EX_W) {
        int none = f[GP_EX_NN_ID] < 0.0;
        if (o->nn_index) o->nn_index[k] = none ? UINT32_MAX : (uint32_t)f[GP_EX_NN_ID];
        if (o->nn_dist2) o->nn_dist2[k] = none ? HUGE_VAL : f[GP_EX_NN_D2];
        if (o->pair_step) o->pair_step[k] = f[GP_EX_STEP];
    }
}

/* Target k against chunk c into out (the (target, chunk) split). */
static inline void eval_part(const gp_direct_sources *src, const targets *t, const pass_kind *pk,
                             double eps2, size_t nchunks, long long q, double *out)
{
    size_t k = (size_t)q / nchunks, c = (size_t)q % nchunks;
    double self;
    const double *x = target(t, k, &self);
    sum_init(out, pk->W);
    kernel(pk, src, c, k, x, self, eps2, out);
}

/* The targets of one tile over every chunk, chunk-major, stored. */
static inline void eval_tile(const gp_direct_sources *src, const targets *t, const pass_kind *pk,
                             const sink *o, double G, double eps2, size_t nchunks, long long tile)
{
    const int W = pk->W;
    const size_t m = t->m;
    size_t k0 = (size_t)tile * GP_TILE, k1 = k0 + GP_TILE < m ? k0 + GP_TILE : m;
    double f[GP_TILE][GP_EX_W];
    for (size_t k = k0; k < k1; ++k) sum_init(f[k - k0], W);
    for (size_t c = 0; c < nchunks; ++c) {
        for (size_t k = k0; k < k1; ++k) {
            double self, partk[GP_EX_W];
            const double *x = target(t, k, &self);
            sum_init(partk, W);
            /* the step so far seeds this chunk's pruning */
            if (W == GP_EX_W) partk[GP_EX_STEP] = f[k - k0][GP_EX_STEP];
            kernel(pk, src, c, k, x, self, eps2, partk);
            sum_add(f[k - k0], partk, W);
        }
    }
    for (size_t k = k0; k < k1; ++k) store(G, f[k - k0], pk, k, o);
}

/* The loops enter a parallel region only with work worth waking a team
 * for (gp_threads_for, base_params.h); the order of the sums is the same
 * either way. */
static void evaluate(const gp_solver *s, const targets *t, const pass_kind *pk, const sink *o)
{
    const double G = gp_param_double(&s->base, P_G);
    const double eps = gp_param_double(&s->base, P_EPS);
    const double eps2 = eps * eps;
    const gp_direct_sources *src = &s->src;
    const size_t m = t->m, nchunks = (src->n + GP_CHUNK - 1) / GP_CHUNK;
    const int nthreads = gp_threads_for(thread_count(s), m * (nchunks > 1 ? nchunks : 1), m * src->n);
    const int W = pk->W;

    /* Few targets and several chunks: parallel over (target, chunk). */
    double *part = NULL;
    if (nthreads > 1 && nchunks > 1 && m < (size_t)nthreads * GP_TILE && m <= ((size_t)-1 / 64) / nchunks)
        part = malloc(m * nchunks * (size_t)W * sizeof *part);
    if (part) {
        long long pairs = (long long)(m * nchunks);
#pragma omp parallel for schedule(static) num_threads(nthreads)
        for (long long q = 0; q < pairs; ++q)
            eval_part(src, t, pk, eps2, nchunks, q, &part[(size_t)W * (size_t)q]);
        for (size_t k = 0; k < m; ++k) {
            double f[GP_EX_W];
            sum_init(f, W);
            for (size_t c = 0; c < nchunks; ++c) sum_add(f, &part[(size_t)W * (k * nchunks + c)], W);
            store(G, f, pk, k, o);
        }
        free(part);
        return;
    }

    /* Many targets (or no memory for partials): tiles, chunk-major. */
    long long ntiles = (long long)((m + GP_TILE - 1) / GP_TILE);
    if (ntiles > 1 && nthreads > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(nthreads)
        for (long long tile = 0; tile < ntiles; ++tile)
            eval_tile(src, t, pk, o, G, eps2, nchunks, tile);
    } else {
        for (long long tile = 0; tile < ntiles; ++tile)
            eval_tile(src, t, pk, o, G, eps2, nchunks, tile);
    }
}

/* One compute call on the targets t: the sum, the overflow check, then
 * the counters (*calls is force_calls or field_calls). */
static gp_status compute_pass(gp_solver *s, const targets *t, const pass_kind *pk,
                              const char *fn, const sink *o, uint64_t *calls)
{
    double t0 = gp_wtime();
    evaluate(s, t, pk, o);
    gp_status st = gp_check_outputs(&s->base, fn, t->m, o->acc, o->pot);
    if (st == GP_OK && o->jerk) st = gp_check_outputs(&s->base, fn, t->m, o->jerk, NULL);
    if (st != GP_OK) return st;
    *calls += 1;
    s->base.stats.pp_interactions += (uint64_t)t->m * (uint64_t)s->src.n;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

static gp_status compute(gp_solver *s, const targets *t, const char *fn, double *acc, double *pot,
                         uint64_t *calls)
{
    const pass_kind pk = {4, 0, 0, 0, 0, NULL, NULL, NULL, 0.0, NULL};
    const sink o = {acc, pot, NULL, NULL, NULL, NULL};
    return compute_pass(s, t, &pk, fn, &o, calls);
}

static gp_status cpu_direct_compute_forces_ex(gp_solver *s, const gp_outputs *out);

static gp_status cpu_direct_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    sources_ready(s);
    if (s->base.p.group) {   /* the groups' rule: through compute_forces_ex */
        gp_outputs o = gp_outputs_forces(acc, pot);
        return cpu_direct_compute_forces_ex(s, &o);
    }
    gp_status st = gp_check_compute(&s->base, acc);
    if (st != GP_OK) return st;
    targets t = {s->base.p.n_active, NULL, s->base.p.active, s->base.p.pos, NULL};
    return compute(s, &t, "compute_forces", acc, pot, &s->base.stats.force_calls);
}

static gp_status cpu_direct_compute_field(gp_solver *s, size_t m, const double *points,
                                  double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    sources_ready(s);
    gp_status st = gp_check_field(&s->base, m, points, acc);
    if (st != GP_OK) return st;
    targets t = {m, points, NULL, s->base.p.pos, NULL};
    return compute(s, &t, "compute_field", acc, pot, &s->base.stats.field_calls);
}

/* ---- ABI 1.2 ------------------------------------------------------------- */

static gp_status cpu_direct_set_state_jerk(gp_solver *s, size_t n_sub, const uint32_t *index,
                                           const double *pos, const double *vel,
                                           const double *acc, const double *jerk, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state_jerk");
    gp_status st = gp_state_set_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t);
    if (st == GP_OK && n_sub) refill(s);
    return st;
}

/* Whether every pair is in pair_step_bound.h's trusted range (positions,
 * velocities, masses, eps); if not, cpu-direct evaluates every pair's step
 * exactly (slower, the same result). */
static int prunable(const gp_solver *s, double G, const double *sv, const double *tv, size_t m)
{
    const gp_particles *p = &s->base.p;
    const double eps = gp_param_double(&s->base, P_EPS);
    double xmax = 0.0, vmax = 0.0, gm_min = HUGE_VAL, gm_max = 0.0;
    for (size_t i = 0; i < 3 * p->n; ++i) xmax = fmax(xmax, fabs(p->pos[i]));
    for (size_t j = 0; j < 3 * s->src.n; ++j) vmax = fmax(vmax, fabs(sv[j]));
    for (size_t k = 0; k < 3 * m; ++k) vmax = fmax(vmax, fabs(tv[k]));
    for (size_t i = 0; i < p->n; ++i) gm_max = fmax(gm_max, G * p->mass[i]);
    for (size_t j = 0; j < s->src.n; ++j) gm_min = fmin(gm_min, G * s->src.m[j]);
    return gp_step_bound_range_ok(xmax, vmax, eps * eps, gm_min, gm_max);
}

/* Every source's and active particle's velocity at the positions' time
 * from the held state (a particle without state: 0), for the jerk, the
 * pair steps and the lists, gathered once a call; with the bound's
 * verdict on the call where a step is asked (prunable). */
typedef struct call_vel {
    double *sv, *tv;        /* 3 ns (vx of every source, then vy, vz); 3 m */
    gp_direct_vel vel;
    int prune;
} call_vel;

/* Idempotent: call_vel_alloc frees on failure, and callers free again. */
static void call_vel_free(call_vel *cv)
{
    free(cv->sv);
    free(cv->tv);
    cv->sv = cv->tv = NULL;
}

/* cv's velocities for m targets: the sources' from the held state, and
 * the targets' zeroed (tv NULL) or copied from tv (3 each). */
static gp_status call_vel_alloc(gp_solver *s, size_t m, const double *tv, const char *fn, call_vel *cv)
{
    const gp_particles *p = &s->base.p;
    const size_t ns = s->src.n;
    cv->sv = malloc(3 * (ns ? ns : 1) * sizeof *cv->sv);
    cv->tv = tv ? malloc(3 * (m ? m : 1) * sizeof *cv->tv) : calloc(3 * (m ? m : 1), sizeof *cv->tv);
    if (!cv->sv || !cv->tv) {
        call_vel_free(cv);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the velocities of %zu sources; free "
                       "memory or use fewer particles", fn, ns);
    }
    double *sv = cv->sv;
    for (size_t j = 0; j < ns; ++j) {
        double v[3];
        gp_state_velocity(p, (size_t)s->src.id[j], v);
        sv[j] = v[0]; sv[ns + j] = v[1]; sv[2 * ns + j] = v[2];
    }
    if (tv) memcpy(cv->tv, tv, 3 * m * sizeof *cv->tv);
    cv->vel = (gp_direct_vel){sv, sv + ns, sv + 2 * ns};
    cv->prune = 0;
    return GP_OK;
}

static gp_status call_vel_make(gp_solver *s, int need_prune, call_vel *cv)
{
    const gp_particles *p = &s->base.p;
    const size_t m = p->n_active;
    gp_status st = call_vel_alloc(s, m, NULL, "compute_forces_ex", cv);
    if (st != GP_OK) return st;
    for (size_t k = 0; k < m; ++k) gp_state_velocity(p, gp_active_index(&s->base, k), &cv->tv[3 * k]);
    cv->prune = need_prune && prunable(s, gp_param_double(&s->base, P_G), cv->sv, cv->tv, m);
    return GP_OK;
}

/* acc, pot and, from the same pass (direct_kernel.c; acc and pot keep
 * compute_forces' bits), the jerk and the nearest source and pairwise step
 * where asked, with the velocities cv (cv->prune read with a step). */
static gp_status compute_with_vel(gp_solver *s, const targets *t, const gp_outputs *out,
                                  int nbr, double *step_out, int even, const call_vel *cv,
                                  uint64_t *calls)
{
    const double G = gp_param_double(&s->base, P_G);
    const int step = step_out != NULL;
    const pass_kind pk = {nbr ? GP_EX_W : 7, out->jerk != NULL, step, step && cv->prune, even,
                          &cv->vel, cv->tv, s->base.p.mass, G, NULL};
    const sink o = {out->acc, out->pot, out->jerk, out->nn_dist2, step_out, out->nn_index};
    return compute_pass(s, t, &pk, "compute_forces_ex", &o, calls);
}

/* 1.2's outputs alone, or with 1.3's (groups, even steps) */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out);
static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out);

static gp_status cpu_direct_compute_forces_ex(gp_solver *s, const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces_ex");
    sources_ready(s);
    gp_status st = gp_check_outputs_ex(&s->base, out);
    if (st != GP_OK) return st;
    gp_outputs o = gp_outputs_read(out);
    return gp_outputs_want_13(&s->base, &o) ? forces_ex_13(s, &o) : forces_ex_12(s, &o);
}

/* acc and pot exactly as compute_forces makes them (the same bits), with
 * the jerk, the nearest source and the pairwise step from the same pass;
 * then the neighbour lists, if asked, in one more pass (direct_lists.c). */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out)
{
    gp_status st;
    targets t = {s->base.p.n_active, NULL, s->base.p.active, s->base.p.pos, NULL};
    /* the kernel's one step: pair_step, or else (ABI 1.3, no groups, no
     * lists by it: forces_ex_13) the even one */
    const int even = !out->pair_step && out->pair_step_even;
    double *step = even ? out->pair_step_even : out->pair_step;
    const int nbr = out->nn_index || out->nn_dist2 || step;
    const int by_step = out->nb_step > 0 || out->nb_step_even > 0;
    const int lists = out->nb_radius || by_step;
    call_vel cv = {0};
    if ((out->jerk || nbr || lists) && (st = call_vel_make(s, step || by_step, &cv)) != GP_OK)
        return st;
    if (out->jerk || nbr) {
        st = compute_with_vel(s, &t, out, nbr, step, even, &cv, &s->base.stats.force_calls);
    } else {
        const sink o = {out->acc, out->pot, NULL, NULL, NULL, NULL};
        const pass_kind pk = {4, 0, 0, 0, 0, NULL, NULL, NULL, 0.0, NULL};
        st = compute_pass(s, &t, &pk, "compute_forces_ex", &o, &s->base.stats.force_calls);
    }
    /* A successful call that asks for no lists forgets the last ones (a
     * failed one leaves them); gp_direct_lists replaces them when asked. */
    if (st == GP_OK && !lists) gp_neighbours_forget(&s->base);
    if (st == GP_OK && lists) {
        double t0 = gp_wtime();
        double eps = gp_param_double(&s->base, P_EPS);
        st = gp_direct_lists(&s->base, &s->src, &cv.vel, cv.tv, cv.prune,
                             gp_param_double(&s->base, P_G), eps * eps, out, thread_count(s), NULL);
        s->base.stats.seconds_walk += gp_wtime() - t0;
    }
    call_vel_free(&cv);
    return st;
}

/* ---- ABI 1.3 ------------------------------------------------------------- */

static gp_exact_sources exact_sources(const gp_solver *s)
{
    const double eps = gp_param_double(&s->base, P_EPS);
    gp_exact_sources src = { NULL, NULL, gp_param_double(&s->base, P_G), eps * eps,
                             thread_count(s) };
    return src;
}

/* The even step and its lists from the kernel and direct_lists.c; acc and
 * pot under groups from the kernel too, the other outputs under groups
 * from the exact pass (base/exact_ex.c), of compute_forces' order:
 * GP_CAP_SOURCE_GROUPS. */
/* acc and pot alone under groups: the kernel with the sources' groups
 * beside them (as doubles, exact). */
static gp_status forces_grouped(gp_solver *s, const gp_outputs *out)
{
    const size_t ns = s->src.n;
    double *sg = malloc((ns ? ns : 1) * sizeof *sg);
    if (!sg)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory for the groups of %zu sources; free memory", ns);
    for (size_t k = 0; k < ns; ++k) sg[k] = (double)s->base.p.group[(size_t)s->src.id[k]];
    s->src.g = sg;
    targets t = {s->base.p.n_active, NULL, s->base.p.active, s->base.p.pos, NULL};
    const pass_kind pk = {4, 0, 0, 0, 0, NULL, NULL, NULL, 0.0, s->base.p.group};
    const sink o = {out->acc, out->pot, NULL, NULL, NULL, NULL};
    gp_status st = compute_pass(s, &t, &pk, "compute_forces_ex", &o, &s->base.stats.force_calls);
    s->src.g = NULL;
    free(sg);
    if (st == GP_OK) gp_neighbours_forget(&s->base);
    return st;
}

static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out)
{
    if (s->base.p.group) {
        /* acc and pot from the kernel (compute_forces' bits under groups
         * too), the rest from the exact pass (the jerk with its own acc) */
        gp_status st = forces_grouped(s, out);
        if (st != GP_OK) return st;
        if (!out->jerk && !out->nn_index && !out->nn_dist2 && !out->pair_step &&
            !out->pair_step_even && !out->nb_radius && !(out->nb_step > 0) &&
            !(out->nb_step_even > 0))
            return GP_OK;
        const size_t m = s->base.p.n_active;
        gp_outputs rest = *out;
        rest.acc = out->jerk ? malloc((3 * m + 1) * sizeof *rest.acc) : out->acc;
        rest.pot = NULL;
        if (!rest.acc)
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                           "compute_forces_ex: no memory for the jerk's pass over %zu particles; "
                           "free memory", m);
        const gp_exact_sources src = exact_sources(s);
        double t0 = gp_wtime();
        st = gp_exact_active(&s->base, &src, &rest, out->jerk != NULL, "compute_forces_ex");
        s->base.stats.seconds_walk += gp_wtime() - t0;
        if (out->jerk) free(rest.acc);
        return st;
    }
    /* the even step from the kernel's pruned pass (direct_kernel.c):
     * alone, in the pass of acc; beside pair_step, in one more; the
     * lists by it from direct_lists.c */
    gp_status st = forces_ex_12(s, out);
    if (st != GP_OK || !out->pair_step || !out->pair_step_even) return st;
    const size_t m = s->base.p.n_active;
    double *scratch = malloc((3 * m + 1) * sizeof *scratch);
    if (!scratch)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "compute_forces_ex: no memory for the even step's pass over %zu "
                       "particles; free memory", m);
    gp_outputs e;
    memset(&e, 0, sizeof e);
    e.struct_size = sizeof e;
    e.acc = scratch;
    e.pair_step_even = out->pair_step_even;
    targets t = {m, NULL, s->base.p.active, s->base.p.pos, NULL};
    uint64_t same_call = 0;   /* one compute_forces_ex, counted once */
    call_vel cv = {0};
    st = call_vel_make(s, 1, &cv);
    if (st == GP_OK) st = compute_with_vel(s, &t, &e, 1, e.pair_step_even, 1, &cv, &same_call);
    call_vel_free(&cv);
    free(scratch);
    return st;
}

GP_PLUGIN_13_ENTRIES(cpu_direct, PLUGIN_NAME)

/* The points against the sources, each without the one it excludes: the
 * kernel of compute_forces_ex where it makes every output asked
 * (gp_field_ex_in_kernel), else the exact pass (base/exact_ex.c). */
static gp_status cpu_direct_compute_field_ex(gp_solver *s, size_t n, const double *pos,
                                         const double *vel, const uint32_t *exclude,
                                         const gp_outputs *out)
{
    static const char fn[] = "compute_field_ex";
    if (!s) return gp_null_instance(PLUGIN_NAME, fn);
    gp_status st = gp_check_field_ex(&s->base, n, pos, vel, exclude, out);
    if (st != GP_OK) return st;
    const gp_outputs o = gp_outputs_read(out);
    if (!gp_field_ex_in_kernel(&s->base, &o)) {
        const gp_exact_sources src = exact_sources(s);
        return gp_field_ex_exact(&s->base, &src, n, pos, vel, exclude, out);
    }
    sources_ready(s);
    const int nbr = o.nn_index || o.nn_dist2;
    call_vel cv = {0};
    if ((o.jerk || nbr || o.nb_radius) && (st = call_vel_alloc(s, n, vel, fn, &cv)) != GP_OK) return st;
    const targets t = {n, pos, NULL, s->base.p.pos, exclude};
    const pass_kind pk = {nbr ? GP_EX_W : o.jerk ? 7 : 4, o.jerk != NULL, 0, 0, 0, &cv.vel, cv.tv,
                          s->base.p.mass, gp_param_double(&s->base, P_G), NULL};
    const sink so = {o.acc, o.pot, o.jerk, o.nn_dist2, NULL, o.nn_index};
    st = compute_pass(s, &t, &pk, fn, &so, &s->base.stats.field_calls);
    if (st == GP_OK && !o.nb_radius) gp_neighbours_forget(&s->base);
    if (st == GP_OK && o.nb_radius) {
        const double t0 = gp_wtime(), eps = gp_param_double(&s->base, P_EPS);
        const gp_field_points at = {n, pos, cv.tv, exclude};
        st = gp_direct_lists(&s->base, &s->src, &cv.vel, NULL, 0, gp_param_double(&s->base, P_G),
                             eps * eps, &o, thread_count(s), &at);
        s->base.stats.seconds_walk += gp_wtime() - t0;
    }
    call_vel_free(&cv);
    return st;
}

static const gp_api api = GP_PLUGIN_API_13(cpu_direct, PLUGIN_NAME,
    GP_CAP_EXACT | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL |
    GP_CAP_PREDICT | GP_CAP_SOURCE_SUBSET | GP_CAP_JERK | GP_CAP_NEIGHBOURS |
    GP_CAP_SOURCE_GROUPS);

GP_PLUGIN_ENTRY(api)
