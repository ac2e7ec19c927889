/*
 * direct.c — the cuda-direct plugin: exact O(N^2) gravity on one NVIDIA GPU
 * in the Chamomile scheme (kernels in direct_dev.cu). This file is the
 * host side: parameters, validation and particle copies through
 * plugin/common, device buffers and copies through plugin/cuda-common.
 *
 * Data flow: set_particles / update_positions keep a host copy (common's
 * gp_particles) and mark the device copy stale; the next compute call
 * uploads {x, y, z, m} records once (positions relative to the per-axis
 * median, so float coordinates stay accurate when a few particles sit far
 * outside the bulk), computes, and downloads only the active results.
 */
#include "common/plugin_base.h"
#include "cuda-common/gp_cuda.h"
#include "cuda-direct/direct_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PLUGIN_NAME "cuda-direct"

static const gp_param_info params[] = {
    {"G", GP_PARAM_DOUBLE, "1", "(0,inf)", "gravitational constant"},
    {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)", "Plummer softening length"},
    {"precision", GP_PARAM_ENUM, "mixed", "single|mixed|double",
     "single: float sums; mixed: float interactions, float sums per 128-particle "
     "tile added into double (Chamomile); double: double throughout"},
};
enum { P_G, P_EPS, P_PRECISION };
enum { PREC_SINGLE, PREC_MIXED, PREC_DOUBLE };

struct gp_solver {
    gp_base base;              /* first member (plugin/common) */
    gp_cuda cu;
    gp_dbuf jp, ip, idx, seg, out;
    int dev_valid;             /* jp holds base.p in dev_prec */
    int dev_prec;              /* precision of the records in jp */
    int idx_valid;             /* idx holds base.p.active */
    double center[3];          /* shift applied to every coordinate */
    void *stage;               /* host staging for records / results */
    size_t stage_bytes;
    double *scratch;           /* n doubles for the median */
    size_t scratch_n;
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

/* Writes records {x - c, y - c, z - c, m} for count points into s->stage. */
static void fill_records(gp_solver *s, int prec, const double *pos, const double *mass,
                         size_t count)
{
    const double *c = s->center;
    if (prec == PREC_DOUBLE) {
        gp_d4 *r = (gp_d4 *)s->stage;
        for (size_t i = 0; i < count; ++i)
            r[i] = (gp_d4){pos[3 * i] - c[0], pos[3 * i + 1] - c[1],
                           pos[3 * i + 2] - c[2], mass ? mass[i] : 0.0};
    } else {
        gp_f4 *r = (gp_f4 *)s->stage;
        for (size_t i = 0; i < count; ++i)
            r[i] = (gp_f4){(float)(pos[3 * i] - c[0]), (float)(pos[3 * i + 1] - c[1]),
                           (float)(pos[3 * i + 2] - c[2]), mass ? (float)mass[i] : 0.0f};
    }
}

/* Device memory for n particles, all active, in precision prec. */
static size_t bytes_for(size_t n, int prec)
{
    return n * (2 * rec_bytes(prec) + sizeof(uint32_t) + sizeof(gp_d4)) + ((size_t)32 << 20);
}

/* Makes jp hold the current particles in the current precision. */
static gp_status ensure_uploaded(gp_solver *s)
{
    int prec = gp_param_enum(&s->base, P_PRECISION);
    if (s->dev_valid && s->dev_prec == prec) return GP_OK;
    const gp_particles *p = &s->base.p;
    double t0 = gp_wtime();
    gp_status st;
    if ((st = host_reserve(s, (void **)&s->scratch, &s->scratch_n, p->n * sizeof(double))) != GP_OK) return st;
    if ((st = host_reserve(s, &s->stage, &s->stage_bytes, p->n * rec_bytes(prec))) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->jp, p->n * rec_bytes(prec), "the j-particle records")) != GP_OK) return st;
    gp_median_center(p->pos, p->n, s->scratch, s->center);
    fill_records(s, prec, p->pos, p->mass, p->n);
    if ((st = gp_cuda_upload(&s->base, &s->cu, s->jp.ptr, s->stage, p->n * rec_bytes(prec),
                             "copying the particles to the GPU")) != GP_OK) return st;
    s->dev_valid = 1;
    s->dev_prec = prec;
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    return GP_OK;
}

/* Runs the kernel for ni i-records already in s->ip (or jp when all are
 * active) and downloads ni results into s->stage as gp_d4. */
static gp_status run(gp_solver *s, const void *ip, const uint32_t *self, int identity, size_t ni)
{
    int prec = gp_param_enum(&s->base, P_PRECISION);
    size_t n = s->base.p.n;
    double eps = gp_param_double(&s->base, P_EPS);
    uint32_t nseg = gp_direct_segments((uint32_t)ni, (uint32_t)n);
    gp_status st;
    if (nseg > 1 && (st = gp_dbuf_reserve(&s->base, &s->seg, (size_t)nseg * ni * sizeof(gp_d4),
                                          "the per-segment partial sums")) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->out, ni * sizeof(gp_d4), "the results")) != GP_OK) return st;
    if ((st = host_reserve(s, &s->stage, &s->stage_bytes, ni * sizeof(gp_d4))) != GP_OK) return st;
    double t0 = gp_wtime();
    int mode = prec == PREC_SINGLE ? 0 : prec == PREC_MIXED ? 1 : 2;
    st = gp_cuda_check(&s->base, gp_direct_launch(mode, s->jp.ptr, (uint32_t)n, ip, self, identity,
                                                  (uint32_t)ni, eps * eps, nseg, s->seg.ptr,
                                                  s->out.ptr, s->cu.stream),
                       "launching the direct-summation kernel");
    if (st == GP_OK) st = gp_cuda_sync(&s->base, &s->cu, "running the direct-summation kernel");
    if (st != GP_OK) return st;
    double t1 = gp_wtime();
    s->base.stats.seconds_walk += t1 - t0;
    st = gp_cuda_download(&s->base, &s->cu, s->stage, s->out.ptr, ni * sizeof(gp_d4),
                          "copying the results from the GPU");
    s->base.stats.seconds_transfer += gp_wtime() - t1;
    return st;
}

static void scatter(gp_solver *s, size_t ni, double *acc, double *pot)
{
    const double G = gp_param_double(&s->base, P_G);
    const gp_d4 *r = (const gp_d4 *)s->stage;
    for (size_t k = 0; k < ni; ++k) {
        acc[3 * k] = G * r[k].x;
        acc[3 * k + 1] = G * r[k].y;
        acc[3 * k + 2] = G * r[k].z;
        if (pot) pot[k] = -G * r[k].w;
    }
}

/* ---- the ABI entry points --------------------------------------------- */

GP_PLUGIN_COMMON_ENTRIES(cd, PLUGIN_NAME, params, sizeof params / sizeof params[0])

static void cd_finalize(gp_solver *s)
{
    if (!s) return;
    if (s->cu.open) {
        (void)gp_cuda_enter(&s->base, &s->cu);
        gp_dbuf_free(&s->jp); gp_dbuf_free(&s->ip); gp_dbuf_free(&s->idx);
        gp_dbuf_free(&s->seg); gp_dbuf_free(&s->out);
        gp_cuda_close(&s->cu);
    }
    free(s->stage);
    free(s->scratch);
    gp_base_free(&s->base);
    free(s);
}

static gp_status cd_init(gp_solver **out, const gp_init_args *args)
{
    gp_status st = gp_solver_create(out, sizeof **out, PLUGIN_NAME, args, params,
                                    sizeof params / sizeof params[0]);
    if (st != GP_OK) return st;
    gp_solver *s = *out;
    s->base.in_init = 1; /* device failures also go to last_error(NULL) */
    st = gp_cuda_open(&s->base, &s->cu, gp_direct_probe);
    s->base.in_init = 0;
    if (st != GP_OK) {
        cd_finalize(s);
        *out = NULL;
        return st;
    }
    s->base.error[0] = '\0';
    return GP_OK;
}

static gp_status cd_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
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
    if ((st = gp_particles_set(&s->base, n, pos, mass)) != GP_OK) return st;
    s->dev_valid = 0;
    s->idx_valid = 0;
    return GP_OK;
}

static gp_status cd_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status st = gp_particles_update(&s->base, pos);
    if (st == GP_OK) s->dev_valid = 0;
    return st;
}

static gp_status cd_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    gp_status st = gp_particles_set_active(&s->base, n_active, index);
    if (st == GP_OK) s->idx_valid = 0;
    return st;
}

static gp_status cd_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    gp_status st = gp_check_compute(&s->base, acc);
    if (st != GP_OK) return st;
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    if ((st = ensure_uploaded(s)) != GP_OK) return st;
    const gp_particles *p = &s->base.p;
    size_t ni = p->n_active;
    const void *ip = s->jp.ptr;
    const uint32_t *self = NULL;
    if (p->active) {
        int prec = s->dev_prec;
        if ((st = gp_dbuf_reserve(&s->base, &s->ip, ni * rec_bytes(prec), "the active i-particles")) != GP_OK) return st;
        if (!s->idx_valid) {
            if ((st = gp_dbuf_reserve(&s->base, &s->idx, ni * sizeof(uint32_t), "the active index list")) != GP_OK) return st;
            double t0 = gp_wtime();
            if ((st = gp_cuda_upload(&s->base, &s->cu, s->idx.ptr, p->active, ni * sizeof(uint32_t),
                                     "copying the active index list to the GPU")) != GP_OK) return st;
            s->base.stats.seconds_transfer += gp_wtime() - t0;
            s->idx_valid = 1;
        }
        if ((st = gp_cuda_check(&s->base, gp_direct_gather(s->jp.ptr, s->idx.ptr, (uint32_t)ni, s->ip.ptr,
                                                           prec == PREC_DOUBLE, s->cu.stream),
                                "gathering the active particles")) != GP_OK) return st;
        ip = s->ip.ptr;
        self = s->idx.ptr;
    }
    if ((st = run(s, ip, self, 1, ni)) != GP_OK) return st;
    scatter(s, ni, acc, pot);
    s->base.stats.force_calls++;
    s->base.stats.pp_interactions += (uint64_t)ni * (uint64_t)p->n;
    return GP_OK;
}

static gp_status cd_compute_field(gp_solver *s, size_t m, const double *points, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    gp_status st = gp_check_field(&s->base, m, points, acc);
    if (st != GP_OK) return st;
    if (m > (size_t)INT32_MAX)
        return gp_fail(&s->base, GP_ERR_INVALID_ARGUMENT,
                       "m = %zu points is more than one call handles (2^31 - 1); "
                       "split the points into several calls", m);
    if ((st = gp_cuda_enter(&s->base, &s->cu)) != GP_OK) return st;
    if ((st = ensure_uploaded(s)) != GP_OK) return st;
    int prec = s->dev_prec;
    size_t bytes = m * rec_bytes(prec);
    if ((st = host_reserve(s, &s->stage, &s->stage_bytes, bytes)) != GP_OK) return st;
    if ((st = gp_dbuf_reserve(&s->base, &s->ip, bytes, "the field points")) != GP_OK) return st;
    fill_records(s, prec, points, NULL, m);
    double t0 = gp_wtime();
    if ((st = gp_cuda_upload(&s->base, &s->cu, s->ip.ptr, s->stage, bytes,
                             "copying the field points to the GPU")) != GP_OK) return st;
    s->base.stats.seconds_transfer += gp_wtime() - t0;
    if ((st = run(s, s->ip.ptr, NULL, 0, m)) != GP_OK) return st;
    scatter(s, m, acc, pot);
    s->base.stats.field_calls++;
    s->base.stats.pp_interactions += (uint64_t)m * (uint64_t)s->base.p.n;
    return GP_OK;
}

static const gp_api api = {
    .abi_major = GRAVPLUG_ABI_MAJOR,
    .abi_minor = GRAVPLUG_ABI_MINOR,
    .struct_size = sizeof(gp_api),
    .name = PLUGIN_NAME,
    .version = GP_VERSION,
    .capabilities = GP_CAP_GPU | GP_CAP_EXACT | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL,
    .describe_params = cd_describe_params,
    .init = cd_init,
    .finalize = cd_finalize,
    .set_param = cd_set_param,
    .get_param = cd_get_param,
    .set_particles = cd_set_particles,
    .update_positions = cd_update_positions,
    .set_active_subset = cd_set_active_subset,
    .compute_forces = cd_compute_forces,
    .compute_field = cd_compute_field,
    .get_stats = cd_get_stats,
    .last_error = cd_last_error,
};

GRAVPLUG_EXPORT const gp_api *gravplug_entry(uint32_t abi_major)
{
    return abi_major == GRAVPLUG_ABI_MAJOR ? &api : NULL;
}
