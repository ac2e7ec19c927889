/* SPDX-License-Identifier: Apache-2.0 */
/*
 * direct.c — the cuda-direct plugin: exact O(N^2) gravity on one NVIDIA GPU
 * in the Chamomile scheme (kernels in direct_dev.cu). This file is the
 * host side: parameters, validation and particle copies through
 * plugin/base, device buffers and copies through plugin/cuda-base.
 *
 * Data flow: set_particles / update_positions keep a host copy (common's
 * gp_particles) and mark the device copy stale; the next compute call
 * uploads the double positions and masses once (through pinned staging)
 * and builds the {x, y, z, m} records on the GPU (positions relative to
 * the per-axis median of the host copy, so float coordinates stay accurate
 * when a few particles sit far outside the bulk), computes, and downloads
 * only the active results.
 *
 * ABI 1.1 (cuda-base/dev_state.h): the kinematic state lives on the
 * GPU; set_state uploads the subset, predict is a kernel on the device's
 * double positions (the records are then rebuilt there, with the same
 * centre), get_positions downloads the subset. base.p.pos is then older
 * than the device's (host_stale) until update_positions or set_particles.
 * The j-records are the sources with mass > 0 in index order (a source
 * subset: its members only), so the kernel's cost is n_active x n_src, and
 * a subset gives the bits of set_particles with the other masses zero
 * (the same records in the same tiles). When that is every particle the
 * records are jp[i] = particle i; otherwise a list (built on the host,
 * O(n), when the masses or the subset change) maps them, and srank maps
 * a particle to its record for the self term.
 *
 * ABI 1.2: the jerks live with the rest of the state on the device
 * (set_state_jerk, third-order predict: cuda-base/state_dev.cuh);
 * get_velocities computes the subset's velocities there. compute_forces_ex
 * with a jerk runs direct_jerk_kernel, which sums acc, pot and the jerk in
 * one pass over the same tiles and segments as compute_forces (so acc and
 * pot keep their bits), from velocity records beside the position records
 * (velocities / len_scale, so the jerk comes back in the units of acc).
 * nn_index, nn_dist2, pair_step and the neighbour lists come from
 * direct_nb.cu, exact and in double, on the device's double positions
 * and velocities; only the active results come back.
 *
 * ABI 1.3: compute_field_ex with what a GRAPE-6 call asks (acc, pot, the
 * jerk, the nearest source, lists by radius) runs those kernels at the
 * points (field_ex_device): the points and their velocity records go up,
 * each skipping its excluded particle's record. Groups and pair steps go
 * through the exact pass on the host.
 */
#include "base/plugin_base.h"
#include "cuda-base/gp_cuda.h"
#include "cuda-base/dev_state.h"
#include "cuda-direct/direct_dev.h"
#include "cuda-direct/direct_nb.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "cuda-direct"

static const gp_param_info params[] = {
    GP_PARAM_ROW_G,
    GP_PARAM_ROW_EPS,
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float sums; mixed: float interactions, float sums per 128-particle "
     "tile added into double (Chamomile); double: double throughout"},
};
enum { P_G, P_EPS, P_PRECISION };
enum { PREC_SINGLE, PREC_MIXED, PREC_DOUBLE };

struct gp_solver {
    gp_base base;              /* first member (plugin/base) */
    gp_cuda cu;
    gp_dbuf jp, ip, idx, seg, out;
    gp_dbuf pos, mass, src, srank, self; /* double positions/masses; source subset */
    int dev_valid;             /* jp holds the current sources in dev_prec */
    int dev_prec;              /* precision of the records in jp */
    int idx_valid;             /* idx holds base.p.active */
    int pos_valid, mass_valid; /* pos / mass hold base.p's (or newer: host_stale) */
    int src_valid;             /* nj, src and srank match base.p's masses and subset */
    int src_list;              /* the records are src[0..nj), not 0..n */
    int host_stale;            /* base.p.pos is older than pos (after predict) */
    uint32_t nj;               /* j-records in jp */
    double center[3];          /* shift applied to every coordinate */
    double len_scale, mass_scale; /* powers of two the float data are divided by (1: ordinary data) */
    void *stage;               /* host staging for field points */
    size_t stage_bytes;
    double *scratch;           /* n doubles for the median */
    size_t scratch_n;
    gp_hbuf pinned;            /* pinned staging for the life of the instance */
    gp_hbuf res;               /* the results, pinned */
    gp_dstate ds;              /* ABI 1.1 state on the device */
    gp_dbuf vel, jv, iv, jseg, jout; /* ABI 1.2: velocities, their records, the jerk */
    gp_hbuf jres;              /* the jerks, pinned */
    gp_dbuf nbo, nbl;          /* ABI 1.2: per-active neighbour outputs; the lists */
    gp_dbuf fpt;               /* ABI 1.3: compute_field_ex's points (field_ex_device's block) */
    uint32_t *rank_host;       /* with src_list: each particle's record (UINT32_MAX: none) */
};

static size_t rec_bytes(int prec) { return prec == PREC_DOUBLE ? sizeof(gp_d4) : sizeof(gp_f4); }

static gp_status host_reserve(gp_solver *s, void **p, size_t *have, size_t bytes)
{
    if (bytes <= *have) return GP_OK;
    void *q = realloc(*p, bytes);
    if (!q)
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "cannot allocate %.1f MiB of host memory for staging; "
                       "use fewer particles", (double)bytes / 1048576.0);
    *p = q;
    *have = bytes;
    return GP_OK;
}

/* Writes records {x - c, y - c, z - c, m} / len_scale for count points
 * into dst (host): positions with c the records' centre, velocities
 * with c = 0 and mass NULL. */
static void fill_records(gp_solver *s, int prec, const double *pos, const double *mass,
                         size_t count, const double c[3], void *dst)
{
    const double il = 1.0 / s->len_scale;
    const long long m = (long long)count;
    if (prec == PREC_DOUBLE) {
        gp_d4 *r = (gp_d4 *)dst;
#pragma omp parallel for schedule(static) if (m > 65536)
        for (long long i = 0; i < m; ++i)
            r[i] = (gp_d4){(pos[3 * i] - c[0]) * il, (pos[3 * i + 1] - c[1]) * il,
                           (pos[3 * i + 2] - c[2]) * il, mass ? mass[i] : 0.0};
    } else {
        gp_f4 *r = (gp_f4 *)dst;
#pragma omp parallel for schedule(static) if (m > 65536)
        for (long long i = 0; i < m; ++i)
            r[i] = (gp_f4){(float)((pos[3 * i] - c[0]) * il), (float)((pos[3 * i + 1] - c[1]) * il),
                           (float)((pos[3 * i + 2] - c[2]) * il), mass ? (float)mass[i] : 0.0f};
    }
}

/* Device memory for n particles, all active, in precision prec. */
static size_t bytes_for(size_t n, int prec)
{
    return n * (2 * rec_bytes(prec) + sizeof(uint32_t) + sizeof(gp_d4)) + ((size_t)32 << 20);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A power of two near x (2^ilogb(x)); 1 for x in [1/range, range], 0 or
 * not finite. */
static double scale_for(double x, double range)
{
    if (!(x > 0) || !isfinite(x) || (x >= 1.0 / range && x <= range)) return 1.0;
    return ldexp(1.0, ilogb(x));
}

/* The length unit of the float records: the median max-norm distance
 * from the centre of an evenly strided sample of <= 4096 particles, as a
 * power of two (exact), or 1 when that is within 2^+-20 of 1. Far
 * outliers do not move it; positions at 1e-30 or 1e30 get records near 1
 * (their squares would leave float's range). */
static double length_scale(const double *pos, size_t n, const double c[3])
{
    enum { SAMPLE = 4096 };
    double d[SAMPLE];
    size_t m = n < SAMPLE ? n : SAMPLE;
    for (size_t k = 0; k < m; ++k) {
        size_t i = (size_t)((uint64_t)k * n / m);
        double v = 0;
        for (int a = 0; a < 3; ++a) v = fmax(v, fabs(pos[3 * i + a] - c[a]));
        d[k] = v;
    }
    qsort(d, m, sizeof *d, cmp_double);
    double med = d[m / 2];
    if (!(med > 0)) med = d[m - 1];
    return scale_for(med, 0x1p20);
}

/* Makes pos / mass on the device hold the current particles (uploads
 * what changed on the host; the centre is the host copy's median). */
static gp_status ensure_device(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    gp_status st;
    if (!s->pos_valid) {
        if ((st = host_reserve(s, (void **)&s->scratch, &s->scratch_n, p->n * sizeof(double))) != GP_OK) return st;
        if ((st = gp_dbuf_reserve(&s->base, &s->pos, p->n * 3 * sizeof(double), "the positions")) != GP_OK) return st;
        gp_median_center(p->pos, p->n, s->scratch, s->center);
        s->len_scale = length_scale(p->pos, p->n, s->center);
        double t0 = gp_wtime();
        st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, s->pos.ptr, p->pos, p->n * 3 * sizeof(double),
                                   "copying the positions to the GPU");
        s->base.stats.seconds_transfer += gp_wtime() - t0;
        if (st != GP_OK) return st;
        s->pos_valid = 1;
        s->dev_valid = 0;
    }
    if (!s->mass_valid) {
        if ((st = gp_dbuf_reserve(&s->base, &s->mass, p->n * sizeof(double), "the masses")) != GP_OK) return st;
        double t0 = gp_wtime();
        st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, s->mass.ptr, p->mass, p->n * sizeof(double),
                                   "copying the masses to the GPU");
        s->base.stats.seconds_transfer += gp_wtime() - t0;
        if (st != GP_OK) return st;
        s->mass_valid = 1;
        s->dev_valid = 0;
    }
    return GP_OK;
}

/* The sources (mass > 0, in the source subset) in index order: nj, and
 * when they are not all n particles the list src and the ranks srank on
 * the device. O(n) on the host, after set_particles, update_masses and
 * set_source_subset only. */
static gp_status make_source_list(gp_solver *s)
{
    const gp_particles *p = &s->base.p;
    gp_status st;
    uint8_t *member = NULL;
    if (p->src) {
        member = calloc(p->n, 1);
        if (!member)
            return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory for a %zu-byte source map; free memory",
                           p->n);
        for (size_t k = 0; k < p->n_src; ++k) member[p->src[k]] = 1;
    }
    uint32_t *list = NULL;
    if ((st = host_reserve(s, (void **)&s->scratch, &s->scratch_n, p->n * sizeof(double))) != GP_OK) {
        free(member);
        return st;
    }
    list = (uint32_t *)s->scratch;
    size_t nj = 0;
    double mmax = 0;
    for (size_t i = 0; i < p->n; ++i)
        if (p->mass[i] > 0 && (!member || member[i])) {
            list[nj++] = (uint32_t)i;
            if (p->mass[i] > mmax) mmax = p->mass[i];
        }
    free(member);
    s->mass_scale = scale_for(mmax, 0x1p60); /* the mass unit of the records */
    s->src_list = nj != p->n;
    if (s->src_list) {
        uint32_t *rank = realloc(s->rank_host, (p->n ? p->n : 1) * sizeof *rank);
        if (!rank) return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY, "no memory for %zu source ranks; free memory", p->n);
        s->rank_host = rank;
        for (size_t i = 0; i < p->n; ++i) rank[i] = UINT32_MAX;
        for (size_t q = 0; q < nj; ++q) rank[list[q]] = (uint32_t)q;
        if ((st = gp_dbuf_reserve(&s->base, &s->src, (nj ? nj : 1) * sizeof(uint32_t), "the source list")) != GP_OK) return st;
        if ((st = gp_dbuf_reserve(&s->base, &s->srank, p->n * sizeof(uint32_t), "the source ranks")) != GP_OK) return st;
        double t0 = gp_wtime();
        st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, s->src.ptr, list, nj * sizeof(uint32_t),
                                   "copying the source list to the GPU");
        s->base.stats.seconds_transfer += gp_wtime() - t0;
        if (st != GP_OK) return st;
        int e = (int)cudaMemsetAsync(s->srank.ptr, 0xff, p->n * sizeof(uint32_t), (cudaStream_t)s->cu.stream);
        if ((st = gp_cuda_check(&s->base, e, "clearing the source ranks")) != GP_OK) return st;
    }
    s->nj = (uint32_t)nj;
    s->src_valid = 1;
    s->dev_valid = 0;
    return GP_OK;
}

/* Makes jp hold the current sources in the current precision, built on
 * the GPU from the double positions and masses. */
static gp_status ensure_uploaded(gp_solver *s)
{
    int prec = gp_param_enum(&s->base, P_PRECISION);
    gp_status st;
    if ((st = ensure_device(s)) != GP_OK) return st;
    if (s->dev_valid && s->src_valid && s->dev_prec == prec) return GP_OK;
    const gp_particles *p = &s->base.p;
    if (!s->src_valid && (st = make_source_list(s)) != GP_OK) return st;
    size_t nj = s->nj;
    if ((st = gp_dbuf_reserve(&s->base, &s->jp, (nj ? nj : 1) * rec_bytes(prec), "the j-particle records")) != GP_OK) return st;
    double t0 = gp_wtime();
    st = gp_cuda_check(&s->base, gp_direct_records(s->pos.ptr, s->mass.ptr, s->src_list ? s->src.ptr : NULL,
                                                   (uint32_t)nj, s->center, 1.0 / s->len_scale, 1.0 / s->mass_scale,
                                                   prec == PREC_DOUBLE, s->jp.ptr,
                                                   s->src_list ? s->srank.ptr : NULL, s->cu.stream),
                       "making the j-particle records");
    (void)p;
    if (st == GP_OK) st = gp_cuda_sync(&s->base, &s->cu, "making the j-particle records");
    s->base.stats.seconds_moments += gp_wtime() - t0; /* the records are cuda-direct's "moments" */
    if (st != GP_OK) return st;
    s->dev_valid = 1;
    s->dev_prec = prec;
    return GP_OK;
}

/* Runs the kernel for ni i-records already in s->ip (or jp when all are
 * active) and downloads ni results into s->res as gp_d4; with velocity
 * records jv / iv (not NULL) the jerk kernel instead, and the jerks into
 * s->jres. */
static gp_status run(gp_solver *s, const void *ip, const void *jv, const void *iv, const uint32_t *self,
                     int identity, size_t ni)
{
    int prec = gp_param_enum(&s->base, P_PRECISION);
    size_t n = s->nj;
    double eps = gp_param_double(&s->base, P_EPS) / s->len_scale; /* exact: a power of two */
    uint32_t nseg = gp_direct_segments((uint32_t)ni, (uint32_t)n);
    gp_status st;
    if (nseg > 1 && (st = gp_dbuf_reserve(&s->base, &s->seg, (size_t)nseg * ni * sizeof(gp_d4),
                                          "the per-segment partial sums")) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->out, ni * sizeof(gp_d4), "the results")) != GP_OK) return st;
    if ((st = gp_hbuf_reserve(&s->base, &s->res, ni * sizeof(gp_d4), "the results")) != GP_OK) return st;
    if (jv) {
        if (nseg > 1 && (st = gp_dbuf_reserve(&s->base, &s->jseg, (size_t)nseg * ni * sizeof(gp_d4),
                                              "the per-segment partial jerks")) != GP_OK) return st;
        if ((st = gp_dbuf_reserve(&s->base, &s->jout, ni * sizeof(gp_d4), "the jerks")) != GP_OK) return st;
        if ((st = gp_hbuf_reserve(&s->base, &s->jres, ni * sizeof(gp_d4), "the jerks")) != GP_OK) return st;
    }
    if (n == 0) { /* no massive source: every sum is zero */
        memset(s->res.ptr, 0, ni * sizeof(gp_d4));
        if (jv) memset(s->jres.ptr, 0, ni * sizeof(gp_d4));
        return GP_OK;
    }
    double t0 = gp_wtime();
    int mode = prec == PREC_SINGLE ? 0 : prec == PREC_MIXED ? 1 : 2;
    if (jv)
        st = gp_cuda_check(&s->base, gp_direct_launch_jerk(mode, s->jp.ptr, jv, (uint32_t)n, ip, iv, self, identity,
                                                           (uint32_t)ni, eps * eps, nseg, s->seg.ptr, s->jseg.ptr,
                                                           s->out.ptr, s->jout.ptr, s->cu.stream),
                           "launching the direct-summation kernel with the jerk");
    else
        st = gp_cuda_check(&s->base, gp_direct_launch(mode, s->jp.ptr, (uint32_t)n, ip, self, identity,
                                                      (uint32_t)ni, eps * eps, nseg, s->seg.ptr,
                                                      s->out.ptr, s->cu.stream),
                           "launching the direct-summation kernel");
    if (st == GP_OK) st = gp_cuda_sync(&s->base, &s->cu, "running the direct-summation kernel");
    if (st != GP_OK) return st;
    double t1 = gp_wtime();
    s->base.stats.seconds_walk += t1 - t0;
    st = gp_cuda_download(&s->base, &s->cu, s->res.ptr, s->out.ptr, ni * sizeof(gp_d4),
                          "copying the results from the GPU");
    if (st == GP_OK && jv)
        st = gp_cuda_download(&s->base, &s->cu, s->jres.ptr, s->jout.ptr, ni * sizeof(gp_d4),
                              "copying the jerks from the GPU");
    s->base.stats.seconds_transfer += gp_wtime() - t1;
    return st;
}

/* Results in the caller's units: G (M / L^2) a and -G (M / L) phi (exact
 * powers of two, 1 for ordinary data); a value outside double's range is
 * an error with a sentence, never GP_OK with inf or 0. */
static gp_status scatter(gp_solver *s, size_t ni, double *acc, double *pot)
{
    return gp_cuda_unscale_results(&s->base, gp_param_double(&s->base, P_G), s->mass_scale,
                                   s->len_scale, (const double *)s->res.ptr, ni, acc, pot);
}

/* ---- the ABI entry points --------------------------------------------- */

GP_PLUGIN_COMMON_ENTRIES(cuda_direct, PLUGIN_NAME, params, sizeof params / sizeof params[0])

static void cuda_direct_finalize(gp_solver *s)
{
    if (!s) return;
    if (s->cu.open) {
        (void)gp_cuda_enter(&s->base, &s->cu);
        gp_dbuf_free(&s->jp); gp_dbuf_free(&s->ip); gp_dbuf_free(&s->idx);
        gp_dbuf_free(&s->seg); gp_dbuf_free(&s->out);
        gp_dbuf_free(&s->pos); gp_dbuf_free(&s->mass); gp_dbuf_free(&s->src);
        gp_dbuf_free(&s->srank); gp_dbuf_free(&s->self);
        gp_dstate_free(&s->ds);
        gp_dbuf_free(&s->vel); gp_dbuf_free(&s->jv); gp_dbuf_free(&s->iv);
        gp_dbuf_free(&s->jseg); gp_dbuf_free(&s->jout);
        gp_dbuf_free(&s->nbo); gp_dbuf_free(&s->nbl); gp_dbuf_free(&s->fpt);
        gp_hbuf_free(&s->jres);
        gp_hbuf_free(&s->pinned);
        gp_hbuf_free(&s->res);
        gp_cuda_close(&s->cu);
    }
    free(s->stage);
    free(s->scratch);
    free(s->rank_host);
    gp_base_free(&s->base);
    free(s);
}

static gp_status cuda_direct_init(gp_solver **out, const gp_init_args *args)
{
    gp_status st = gp_solver_create(out, sizeof **out, PLUGIN_NAME, args, params,
                                    sizeof params / sizeof params[0]);
    if (st != GP_OK) return st;
    gp_solver *s = *out;
    s->len_scale = s->mass_scale = 1.0;
    st = gp_cuda_open_in_init(&s->base, &s->cu, gp_direct_probe);
    if (st != GP_OK) {
        cuda_direct_finalize(s);
        *out = NULL;
    }
    return st;
}

static gp_status cuda_direct_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_particles");
    gp_status st = gp_check_particles(&s->base, n, pos, mass);
    if (st != GP_OK) return st;
    if (n > (size_t)INT32_MAX)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "n = %zu is more than cuda-direct handles (2^31 - 1); "
                       "use cuda-tree for this many particles", n);
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    /* Say now, not inside a kernel, when n cannot fit: the buffers we hold
     * already count as available. */
    size_t held = s->jp.bytes + s->ip.bytes + s->idx.bytes + s->seg.bytes + s->out.bytes;
    size_t need = bytes_for(n, PREC_DOUBLE);
    char what[160];
    snprintf(what, sizeof what, "direct-summation buffers for n = %zu particles", n);
    if ((st = gp_cuda_fits(&s->base, &s->cu, need > held ? need - held : 0, what)) != GP_OK) return st;
    if ((st = gp_particles_store(&s->base, n, pos, mass)) != GP_OK) return st;
    s->dev_valid = 0;
    s->idx_valid = 0;
    s->pos_valid = s->mass_valid = s->src_valid = 0;
    s->host_stale = 0;
    return gp_dstate_clear(&s->base, &s->cu, &s->ds);
}

static gp_status cuda_direct_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status st = gp_particles_update(&s->base, pos);
    if (st != GP_OK) return st;
    s->dev_valid = 0;
    s->pos_valid = 0;
    s->host_stale = 0;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    return gp_dstate_clear(&s->base, &s->cu, &s->ds);
}

static gp_status cuda_direct_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    gp_status st = gp_particles_set_active(&s->base, n_active, index);
    if (st == GP_OK) s->idx_valid = 0;
    return st;
}

/* The active index list on the device, uploaded once per
 * set_active_subset. */
static gp_status upload_active_index(gp_solver *s, size_t ni)
{
    if (s->idx_valid) return GP_OK;
    gp_status st = gp_dbuf_reserve(&s->base, &s->idx, ni * sizeof(uint32_t), "the active index list");
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    if ((st = gp_cuda_upload(&s->base, &s->cu, s->idx.ptr, s->base.p.active, ni * sizeof(uint32_t),
                             "copying the active index list to the GPU")) != GP_OK) return st;
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    s->idx_valid = 1;
    return GP_OK;
}

/* The velocity records of the sources (jv) and of the active particles
 * (iv; the same records when every particle is both), from every
 * particle's velocity at the positions' time, computed on the device. */
static gp_status velocity_records(gp_solver *s, int identity, const void **jv, const void **iv)
{
    const gp_particles *p = &s->base.p;
    int dbl = s->dev_prec == PREC_DOUBLE;
    size_t ni = p->n_active, rec = rec_bytes(s->dev_prec);
    gp_status st;
    if ((st = gp_dbuf_reserve(&s->base, &s->vel, 3 * p->n * sizeof(double), "the velocities")) != GP_OK) return st;
    if ((st = gp_dstate_velocities(&s->base, &s->cu, &s->ds, (double *)s->vel.ptr)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->jv, (s->nj ? s->nj : 1) * rec, "the source velocities")) != GP_OK)
        return st;
    int e = gp_direct_vrecords(s->vel.ptr, s->src_list ? s->src.ptr : NULL, s->nj, 1.0 / s->len_scale, dbl,
                               s->jv.ptr, s->cu.stream);
    if ((st = gp_cuda_check(&s->base, e, "making the source velocity records")) != GP_OK) return st;
    *jv = s->jv.ptr;
    *iv = s->jv.ptr;
    if (identity) return GP_OK;
    if ((st = gp_dbuf_reserve(&s->base, &s->iv, (ni ? ni : 1) * rec, "the active velocities")) != GP_OK) return st;
    e = gp_direct_vrecords(s->vel.ptr, p->active ? s->idx.ptr : NULL, (uint32_t)ni, 1.0 / s->len_scale, dbl,
                           s->iv.ptr, s->cu.stream);
    if ((st = gp_cuda_check(&s->base, e, "making the active velocity records")) != GP_OK) return st;
    *iv = s->iv.ptr;
    return GP_OK;
}

/* acc and pot (and, with jerk not NULL, the jerk from the same pass) of
 * the active particles: compute_forces and compute_forces_ex. */
static gp_status forces(gp_solver *s, const char *fn, double *acc, double *pot, double *jerk)
{
    gp_status st;
    double ph0 = gp_wtime(), tr0 = s->base.stats.seconds_transfer, wk0 = s->base.stats.seconds_walk;
    if ((st = ensure_uploaded(s)) != GP_OK) return st;
    double ph1 = gp_wtime();
    const gp_particles *p = &s->base.p;
    size_t ni = p->n_active;
    const void *ip = s->jp.ptr;
    const uint32_t *self = NULL;
    int prec = s->dev_prec;
    if ((s->src_list || p->active) &&
        (st = gp_dbuf_reserve(&s->base, &s->ip, ni * rec_bytes(prec), "the active i-particles")) != GP_OK)
        return st;
    if (s->src_list) {
        /* i-particles from the double positions (they need not be
         * sources); self terms through the source ranks */
        if ((st = gp_dbuf_reserve(&s->base, &s->self, ni * sizeof(uint32_t), "the self indices")) != GP_OK) return st;
        if (p->active && (st = upload_active_index(s, ni)) != GP_OK) return st;
        if ((st = gp_cuda_check(&s->base, gp_direct_irecords(s->pos.ptr, p->active ? s->idx.ptr : NULL, (uint32_t)ni,
                                                             s->center, 1.0 / s->len_scale, s->srank.ptr,
                                                             prec == PREC_DOUBLE, s->ip.ptr,
                                                             s->self.ptr, s->cu.stream),
                                "gathering the active particles")) != GP_OK) return st;
        ip = s->ip.ptr;
        self = s->self.ptr;
    } else if (p->active) {
        if ((st = upload_active_index(s, ni)) != GP_OK) return st;
        if ((st = gp_cuda_check(&s->base, gp_direct_gather(s->jp.ptr, s->idx.ptr, (uint32_t)ni, s->ip.ptr,
                                                           prec == PREC_DOUBLE, s->cu.stream),
                                "gathering the active particles")) != GP_OK) return st;
        ip = s->ip.ptr;
        self = s->idx.ptr;
    }
    const void *jv = NULL, *iv = NULL;
    if (jerk && (st = velocity_records(s, ip == s->jp.ptr, &jv, &iv)) != GP_OK) return st;
    double ph2 = gp_wtime();
    if ((st = run(s, ip, jv, iv, self, 1, ni)) != GP_OK) return st;
    double ph3 = gp_wtime();
    if ((st = scatter(s, ni, acc, pot)) != GP_OK) return st;
    /* the jerk: velocities / len_scale, so it scales as acc does */
    if (jerk && (st = gp_cuda_unscale_results(&s->base, gp_param_double(&s->base, P_G), s->mass_scale, s->len_scale,
                                              (const double *)s->jres.ptr, ni, jerk, NULL)) != GP_OK)
        return st;
    s->base.stats.force_calls++;
    s->base.stats.pp_interactions += (uint64_t)ni * (uint64_t)s->nj;
    gp_log(&s->base, GP_LOG_DEBUG,
           "%s n=%zu active=%zu sources=%u%s: uploads+records %.3f ms, i-records %.3f ms, kernel "
           "%.3f ms + download %.3f ms, scatter %.3f ms (transfers %.3f ms in all)",
           fn, p->n, ni, s->nj, jerk ? " with the jerk" : "", 1e3 * (ph1 - ph0), 1e3 * (ph2 - ph1),
           1e3 * (s->base.stats.seconds_walk - wk0),
           1e3 * (ph3 - ph2 - (s->base.stats.seconds_walk - wk0)), 1e3 * (gp_wtime() - ph3),
           1e3 * (s->base.stats.seconds_transfer - tr0));
    return GP_OK;
}

static gp_status cuda_direct_compute_forces_ex(gp_solver *s, const gp_outputs *out);

static gp_status cuda_direct_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    if (s->base.p.group) {   /* the groups' rule: through compute_forces_ex */
        gp_outputs o = gp_outputs_forces(acc, pot);
        return cuda_direct_compute_forces_ex(s, &o);
    }
    gp_status st = gp_check_compute(&s->base, acc);
    if (st != GP_OK) return st;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    return forces(s, "compute_forces", acc, pot, NULL);
}

static gp_status cuda_direct_compute_field(gp_solver *s, size_t m, const double *points, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    gp_status st = gp_cuda_check_field(&s->base, m, points, acc);
    if (st != GP_OK) return st;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    if ((st = ensure_uploaded(s)) != GP_OK) return st;
    int prec = s->dev_prec;
    size_t bytes = m * rec_bytes(prec);
    if ((st = host_reserve(s, &s->stage, &s->stage_bytes, bytes)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->ip, bytes, "the field points")) != GP_OK) return st;
    fill_records(s, prec, points, NULL, m, s->center, s->stage);
    double t0 = gp_wtime();
    if ((st = gp_cuda_upload(&s->base, &s->cu, s->ip.ptr, s->stage, bytes,
                             "copying the field points to the GPU")) != GP_OK) return st;
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    if ((st = run(s, s->ip.ptr, NULL, NULL, NULL, 0, m)) != GP_OK) return st;
    if ((st = scatter(s, m, acc, pot)) != GP_OK) return st;
    s->base.stats.field_calls++;
    s->base.stats.pp_interactions += (uint64_t)m * (uint64_t)s->nj;
    return GP_OK;
}

/* ---- ABI 1.1 ------------------------------------------------------------ */

/* set_state (jerk NULL) and set_state_jerk */
static gp_status state_call(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                            const double *vel, const double *acc, const double *jerk, const double *t)
{
    gp_status st;
    /* the device positions first (uploading the host copy changes nothing
     * a caller can see, so a rejection below still leaves all as it was) */
    if (n_sub && s->base.p.have) {
        if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
        if ((st = ensure_device(s)) != GP_OK) return st;
    }
    st = gp_dstate_set(&s->base, &s->cu, &s->ds, &s->pinned, s->pos.ptr, !s->host_stale, n_sub, index, pos, vel, acc,
                       jerk, t);
    if (st == GP_OK && n_sub) s->dev_valid = 0;
    return st;
}

static gp_status cuda_direct_set_state(gp_solver *s, size_t n_sub, const uint32_t *index, const double *pos,
                              const double *vel, const double *acc, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state");
    return state_call(s, n_sub, index, pos, vel, acc, NULL, t);
}

static gp_status cuda_direct_predict(gp_solver *s, double t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "predict");
    int moved = 0;
    gp_status st = gp_dstate_predict(&s->base, &s->cu, &s->ds, s->pos.ptr, t, &moved);
    if (st == GP_OK && moved) {
        s->host_stale = 1;
        s->dev_valid = 0; /* records again from the predicted positions */
    }
    return st;
}

static gp_status cuda_direct_get_positions(gp_solver *s, size_t n_sub, const uint32_t *index, double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_positions");
    if (!s->host_stale) return gp_positions_get(&s->base, n_sub, index, pos); /* no transfer */
    return gp_dstate_get(&s->base, &s->cu, &s->ds, &s->pinned, s->pos.ptr, n_sub, index, pos);
}

static gp_status cuda_direct_set_source_subset(gp_solver *s, size_t n_src, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_source_subset");
    int changed;
    gp_status st = gp_sources_replace(&s->base, n_src, index, &changed);
    if (changed) s->src_valid = 0;
    return st;
}

static gp_status cuda_direct_update_masses(gp_solver *s, size_t n_sub, const uint32_t *index, const double *mass)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_masses");
    gp_status st;
    if (!s->mass_valid) { /* the next compute uploads the host copy */
        st = gp_masses_update(&s->base, n_sub, index, mass);
        if (st == GP_OK) s->src_valid = 0;
        return st;
    }
    st = gp_dstate_masses(&s->base, &s->cu, &s->ds, &s->pinned, s->mass.ptr, n_sub, index, mass);
    if (st == GP_OK && n_sub) s->dev_valid = s->src_valid = 0; /* a mass may have become 0, or stopped being 0 */
    return st;
}

/* ---- ABI 1.2 ------------------------------------------------------------ */

static gp_status cuda_direct_set_state_jerk(gp_solver *s, size_t n_sub, const uint32_t *index,
                                            const double *pos, const double *vel, const double *acc,
                                            const double *jerk, const double *t)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_state_jerk");
    if (!jerk) /* refused with base's sentence (a no-op for n_sub == 0) */
        return gp_state_check_jerk(&s->base, n_sub, index, pos, vel, acc, jerk, t);
    return state_call(s, n_sub, index, pos, vel, acc, jerk, t);
}

static gp_status cuda_direct_get_velocities(gp_solver *s, size_t n_sub, const uint32_t *index, double *vel)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_velocities");
    return gp_dstate_get_velocities(&s->base, &s->cu, &s->ds, &s->pinned, n_sub, index, vel);
}

static gp_status cuda_direct_get_neighbours(gp_solver *s, size_t cap, uint64_t *offset, uint32_t *list,
                                            size_t *needed)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_neighbours");
    return gp_neighbours_get(&s->base, cap, offset, list, needed);
}

/* nn_index, nn_dist2, pair_step and the neighbour lists on the device
 * (direct_nb.cu), after forces() made the positions, masses and the
 * source list current. nbo holds, for ni active particles: nd2, step and
 * the radii (doubles), the CSR offsets (ni + 1 uint64), nn and the counts
 * (uint32). */
/* The neighbour outputs of the ni active particles, or (ipos not NULL:
 * device points, 3 doubles each, and the particle each excludes, iself)
 * of compute_field_ex's points, for which no pair step is asked. */
static gp_status neighbours_of(gp_solver *s, const gp_outputs *out, size_t ni, const double *ipos,
                               const uint32_t *iself, const char *fn)
{
    const gp_particles *p = &s->base.p;
    const int by_step = out->nb_step > 0, lists = out->nb_radius || by_step;
    const int need_tau = out->pair_step || by_step;
    gp_status st;
    double t0 = gp_wtime();
    if (need_tau) {
        if ((st = gp_dbuf_reserve(&s->base, &s->vel, 3 * p->n * sizeof(double), "the velocities")) != GP_OK)
            return st;
        if ((st = gp_dstate_velocities(&s->base, &s->cu, &s->ds, (double *)s->vel.ptr)) != GP_OK) return st;
    }
    if (!ipos && p->active && (st = upload_active_index(s, ni)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->nbo, 40 * ni + 8, "the neighbour outputs")) != GP_OK) return st;
    double *nd2 = (double *)s->nbo.ptr, *step = nd2 + ni, *rad = step + ni;
    uint64_t *offset_dev = (uint64_t *)(rad + ni);
    uint32_t *nn = (uint32_t *)(offset_dev + ni + 1), *count = nn + ni;
    if (out->nb_radius && (st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, rad, out->nb_radius,
                                                      ni * sizeof(double), "copying the radii to the GPU")) != GP_OK)
        return st;
    const double G = gp_param_double(&s->base, P_G), eps = gp_param_double(&s->base, P_EPS);
    const uint32_t *src = s->src_list ? s->src.ptr : NULL, *idx = !ipos && p->active ? s->idx.ptr : NULL;
    const double *vel = need_tau ? (const double *)s->vel.ptr : NULL;
    const double *radius = out->nb_radius ? rad : NULL;
    int e = gp_direct_nb(s->pos.ptr, vel, s->mass.ptr, src, s->nj, idx, ipos, iself, (uint32_t)ni, G, eps * eps,
                         radius, out->nb_step, nn, nd2, step, lists ? count : NULL, NULL, NULL, s->cu.stream);
    if ((st = gp_cuda_check(&s->base, e, "finding the nearest neighbours")) != GP_OK) return st;
    struct { void *host; const void *dev; size_t bytes; } back[] = {
        {out->nn_index, nn, ni * sizeof(uint32_t)}, {out->nn_dist2, nd2, ni * sizeof(double)},
        {out->pair_step, step, ni * sizeof(double)},
    };
    for (size_t k = 0; k < sizeof back / sizeof back[0]; ++k)
        if (back[k].host && ni &&
            (st = gp_cuda_download_staged(&s->base, &s->cu, &s->pinned, back[k].host, back[k].dev, back[k].bytes,
                                          "copying the neighbour outputs from the GPU")) != GP_OK)
            return st;
    if (!lists) {
        s->base.stats.seconds_walk += gp_wtime() - t0;
        return GP_OK;
    }
    /* the counts -> the CSR offsets on the host (which keeps them), then
     * the fill pass into exactly that room */
    uint64_t *offset = malloc((ni + 1) * sizeof *offset);
    uint32_t *c = malloc((ni ? ni : 1) * sizeof *c), *list = NULL;
    if (!offset || !c) {
        free(offset); free(c);
        return gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the neighbour counts of %zu particles; free memory", fn, ni);
    }
    st = ni ? gp_cuda_download_staged(&s->base, &s->cu, &s->pinned, c, count, ni * sizeof(uint32_t),
                                      "copying the neighbour counts from the GPU") : GP_OK;
    offset[0] = 0;
    for (size_t k = 0; k < ni; ++k) offset[k + 1] = offset[k] + c[k];
    free(c);
    size_t total = (size_t)offset[ni];
    if (st == GP_OK && !(list = malloc((total ? total : 1) * sizeof *list)))
        st = gp_fail(&s->base, GP_ERR_OUT_OF_MEMORY,
                     "%s: no memory for %zu neighbours; ask for fewer (a smaller nb_radius "
                     "or nb_step)", fn, total);
    if (st == GP_OK && total) {
        st = gp_dbuf_reserve(&s->base, &s->nbl, total * sizeof(uint32_t), "the neighbour lists");
        if (st == GP_OK)
            st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, offset_dev, offset, (ni + 1) * sizeof *offset,
                                       "copying the neighbour offsets to the GPU");
        if (st == GP_OK) {
            e = gp_direct_nb(s->pos.ptr, vel, s->mass.ptr, src, s->nj, idx, ipos, iself, (uint32_t)ni, G,
                             eps * eps, radius, out->nb_step, NULL, NULL, NULL, NULL, offset_dev,
                             (uint32_t *)s->nbl.ptr, s->cu.stream);
            st = gp_cuda_check(&s->base, e, "listing the neighbours");
        }
        if (st == GP_OK)
            st = gp_cuda_download_staged(&s->base, &s->cu, &s->pinned, list, s->nbl.ptr, total * sizeof *list,
                                         "copying the neighbour lists from the GPU");
    }
    if (st != GP_OK) {
        free(offset); free(list);
        return st;
    }
    gp_neighbours_keep(&s->base, ni, offset, list);
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

static gp_status neighbours(gp_solver *s, const gp_outputs *out)
{
    return neighbours_of(s, out, s->base.p.n_active, NULL, NULL, "compute_forces_ex");
}

/* acc and pot as compute_forces makes them (the same bits; with the jerk
 * from the same pass), then the neighbour outputs on the device. */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out);
static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out);

static gp_status cuda_direct_compute_forces_ex(gp_solver *s, const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces_ex");
    gp_status st = gp_check_outputs_ex(&s->base, out);
    if (st != GP_OK) return st;
    gp_outputs o = gp_outputs_read(out);
    return gp_outputs_want_13(&s->base, &o) ? forces_ex_13(s, &o) : forces_ex_12(s, &o);
}

/* 1.2's outputs */
static gp_status forces_ex_12(gp_solver *s, const gp_outputs *out)
{
    gp_status st;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    if ((st = forces(s, "compute_forces_ex", out->acc, out->pot, out->jerk)) != GP_OK) return st;
    /* A successful call that asks for no lists forgets the last ones (a
     * failed one leaves them); neighbours() replaces them when asked. */
    const int lists = out->nb_radius || out->nb_step > 0;
    if (!lists) gp_neighbours_forget(&s->base);
    if (!out->nn_index && !out->nn_dist2 && !out->pair_step && !lists) return GP_OK;
    return neighbours(s, out);
}

/* ---- ABI 1.3 ------------------------------------------------------------ */

/* Groups, the even step or lists by it, and pair steps at points: the
 * exact pass on the host, in double, as cuda-direct is
 * (gp_cuda_exact_sources: every source's position and velocity comes
 * down for it). */
static gp_status exact_sources(gp_solver *s, gp_exact_sources *src, double **buf)
{
    return gp_cuda_exact_sources(s, &s->base, &s->cu, gp_param_double(&s->base, P_G),
                                 gp_param_double(&s->base, P_EPS), cuda_direct_get_positions,
                                 cuda_direct_get_velocities, src, buf);
}

static gp_status forces_ex_13(gp_solver *s, const gp_outputs *out)
{
    gp_exact_sources src;
    double *buf = NULL;
    gp_status st = exact_sources(s, &src, &buf);
    if (st == GP_OK) st = gp_forces_ex_13(s, &s->base, forces_ex_12, &src, out);
    free(buf);
    return st;
}

GP_PLUGIN_13_ENTRIES(cuda_direct, PLUGIN_NAME)

/* compute_field_ex on the device (gp_field_ex_in_kernel's outputs): the
 * points as i-records beside their velocity records, each skipping its
 * excluded particle's record, through the kernels of compute_forces_ex;
 * the nearest source and the lists by radius from direct_nb.cu at the
 * points' double positions. Everything about the points goes up in one
 * copy, and only their results come down. */
static gp_status field_ex_device(gp_solver *s, size_t n, const double *pos, const double *vel,
                                 const uint32_t *exclude, const gp_outputs *o)
{
    static const char fn[] = "compute_field_ex";
    gp_status st;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    if ((st = ensure_uploaded(s)) != GP_OK) return st;
    const int prec = s->dev_prec, jerk = o->jerk != NULL;
    const int nbr = o->nn_index || o->nn_dist2 || o->nb_radius;
    /* one block, on the host and on the device: the position records, the
     * velocity records (jerk), the double positions (nbr), the excluded
     * particles (nbr) and the records they skip (exclude) */
    const size_t rec = n * rec_bytes(prec);
    const size_t o_iv = rec, o_x = o_iv + (jerk ? rec : 0), o_ex = o_x + (nbr ? 3 * n * sizeof(double) : 0);
    const size_t o_skip = o_ex + (nbr && exclude ? n * sizeof(uint32_t) : 0);
    const size_t total = o_skip + (exclude ? n * sizeof(uint32_t) : 0);
    if ((st = host_reserve(s, &s->stage, &s->stage_bytes, total)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->fpt, total, "the field points")) != GP_OK) return st;
    char *h = s->stage, *d = s->fpt.ptr;
    static const double zero[3] = {0.0, 0.0, 0.0};
    fill_records(s, prec, pos, NULL, n, s->center, h);
    if (jerk) fill_records(s, prec, vel, NULL, n, zero, h + o_iv);
    if (nbr) memcpy(h + o_x, pos, 3 * n * sizeof(double));
    if (nbr && exclude) memcpy(h + o_ex, exclude, n * sizeof(uint32_t));
    if (exclude) {   /* the record each point skips: its excluded particle's, if a source */
        uint32_t *skip = (uint32_t *)(h + o_skip);
        for (size_t k = 0; k < n; ++k)
            skip[k] = exclude[k] == UINT32_MAX ? UINT32_MAX : s->src_list ? s->rank_host[exclude[k]] : exclude[k];
    }
    double t0 = gp_wtime();
    st = gp_cuda_upload_staged(&s->base, &s->cu, &s->pinned, d, h, total, "copying the field points to the GPU");
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    if (st != GP_OK) return st;
    const void *jv = NULL, *unused;
    if (jerk && (st = velocity_records(s, 1, &jv, &unused)) != GP_OK) return st;
    if ((st = run(s, d, jv, jerk ? d + o_iv : NULL, exclude ? (const uint32_t *)(d + o_skip) : NULL, 0, n)) != GP_OK)
        return st;
    if ((st = scatter(s, n, o->acc, o->pot)) != GP_OK) return st;
    if (jerk && (st = gp_cuda_unscale_results(&s->base, gp_param_double(&s->base, P_G), s->mass_scale, s->len_scale,
                                              (const double *)s->jres.ptr, n, o->jerk, NULL)) != GP_OK)
        return st;
    if (!o->nb_radius) gp_neighbours_forget(&s->base);
    if (nbr && (st = neighbours_of(s, o, n, (const double *)(d + o_x),
                                   exclude ? (const uint32_t *)(d + o_ex) : NULL, fn)) != GP_OK)
        return st;
    s->base.stats.field_calls++;
    s->base.stats.pp_interactions += (uint64_t)n * (uint64_t)s->nj;
    return GP_OK;
}

/* At the points on the device where its kernels make every output asked,
 * else by the exact pass on the host. */
static gp_status cuda_direct_compute_field_ex(gp_solver *s, size_t n, const double *pos,
                                              const double *vel, const uint32_t *exclude,
                                              const gp_outputs *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field_ex");
    gp_status st = gp_check_field_ex(&s->base, n, pos, vel, exclude, out);
    if (st != GP_OK) return st;
    const gp_outputs o = gp_outputs_read(out);
    if (n > 0 && gp_field_ex_in_kernel(&s->base, &o)) return field_ex_device(s, n, pos, vel, exclude, &o);
    gp_exact_sources src;
    double *buf = NULL;
    if ((st = exact_sources(s, &src, &buf)) == GP_OK)
        st = gp_field_ex_exact(&s->base, &src, n, pos, vel, exclude, out);
    free(buf);
    return st;
}

static const gp_api api = GP_PLUGIN_API_13(cuda_direct, PLUGIN_NAME,
    GP_CAP_GPU | GP_CAP_EXACT | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD |
    GP_CAP_POTENTIAL | GP_CAP_PREDICT | GP_CAP_SOURCE_SUBSET | GP_CAP_JERK | GP_CAP_NEIGHBOURS);

GP_PLUGIN_ENTRY(api)
