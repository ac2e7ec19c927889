/*
 * cpu_direct.c — the exact reference solver: O(N * N_active) pairwise
 * summation in double precision, OpenMP over target particles.
 *
 * Every other plugin is checked against this one, so it favours being
 * obviously right: the sum for each target runs over all massive sources in
 * index order (in SIMD lanes, see direct_kernel.h), one target per loop
 * iteration, so the result does not depend on the number of threads.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "common/plugin_base.h"
#include "direct_kernel.h"

#define PLUGIN_NAME "cpu-direct"

static const gp_param_info params[] = {
    {"G", GP_PARAM_DOUBLE, "1", "(0,inf)",
     "gravitational constant, in the host's units"},
    {"eps", GP_PARAM_DOUBLE, "0", "[0,inf)",
     "Plummer softening length: 1/r becomes 1/sqrt(r^2 + eps^2)"},
    {"threads", GP_PARAM_INT, "0", "[0,4096]",
     "OpenMP threads per call; 0 uses the OpenMP default (OMP_NUM_THREADS)"},
};
enum { P_G, P_EPS, P_THREADS, N_PARAMS };

struct gp_solver {
    gp_base base;             /* first: errors, params, particle copy, stats */
    gp_direct_sources src;    /* massive particles as SoA, in index order    */
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

/* Fills positions (and masses/ids) of the massive particles, index order. */
static void sources_fill(gp_direct_sources *s, size_t n, const double *pos, const double *mass)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!(mass[i] > 0.0)) continue;
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

static const gp_param_info *cd_describe_params(size_t *count)
{
    if (count) *count = N_PARAMS;
    return params;
}

static gp_status cd_init(gp_solver **out, const gp_init_args *args)
{
    gp_init_clear_error();
    if (!out)
        return gp_init_fail(args, PLUGIN_NAME, GP_ERR_INVALID_ARGUMENT,
                            "init was given a NULL out pointer; pass the address "
                            "of a gp_solver *");
    *out = NULL;
    gp_solver *s = calloc(1, sizeof *s);
    if (!s)
        return gp_init_fail(args, PLUGIN_NAME, GP_ERR_OUT_OF_MEMORY,
                            "init: no memory for a solver instance");
    gp_status st = gp_base_init(&s->base, PLUGIN_NAME, args, params, N_PARAMS);
    if (st != GP_OK) {
        gp_base_free(&s->base);
        free(s);
        return st;
    }
    *out = s;
    return GP_OK;
}

static void cd_finalize(gp_solver *s)
{
    if (!s) return;
    sources_free(&s->src);
    gp_base_free(&s->base);
    free(s);
}

static gp_status cd_set_param(gp_solver *s, const char *name, const char *value)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_param");
    return gp_base_set_param(&s->base, name, value);
}

static gp_status cd_get_param(gp_solver *s, const char *name, char *buf, size_t buflen)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_param");
    return gp_base_get_param(&s->base, name, buf, buflen);
}

static gp_status cd_set_particles(gp_solver *s, size_t n, const double *pos, const double *mass)
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
    st = gp_particles_set(&s->base, n, pos, mass);
    if (st != GP_OK) {
        sources_free(&fresh);
        return st;
    }
    sources_fill(&fresh, n, pos, mass);
    sources_free(&s->src);
    s->src = fresh;
    return GP_OK;
}

static gp_status cd_update_positions(gp_solver *s, const double *pos)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "update_positions");
    gp_status st = gp_particles_update(&s->base, pos);
    if (st != GP_OK) return st;
    sources_fill(&s->src, s->base.p.n, s->base.p.pos, s->base.p.mass);
    return GP_OK;
}

static gp_status cd_set_active_subset(gp_solver *s, size_t n_active, const uint32_t *index)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "set_active_subset");
    return gp_particles_set_active(&s->base, n_active, index);
}

static int thread_count(const gp_solver *s)
{
    long long t = gp_param_int(&s->base, P_THREADS);
    return t > 0 ? (int)t : omp_get_max_threads();
}

/* Field of all sources at m targets. target k sits at tpos[3*k] (when
 * tidx is NULL) or at particle tidx[k]'s position, excluding that
 * particle itself (self); field points exclude nothing. */
static void evaluate(const gp_solver *s, size_t m, const double *tpos, const uint32_t *tidx,
                     int exclude_self, double *acc, double *pot)
{
    const double G = gp_param_double(&s->base, P_G);
    const double eps = gp_param_double(&s->base, P_EPS);
    const double eps2 = eps * eps;
    const double *ppos = s->base.p.pos;
    const gp_direct_sources *src = &s->src;
    long long mm = (long long)m;

#pragma omp parallel for schedule(static) num_threads(thread_count(s)) if (m > 1)
    for (long long k = 0; k < mm; ++k) {
        size_t i = tidx ? (size_t)tidx[k] : (size_t)k;
        const double *xi = exclude_self ? &ppos[3 * i] : &tpos[3 * (size_t)k];
        double f[4];
        gp_direct_point(src, xi[0], xi[1], xi[2], exclude_self ? (double)i : -1.0, eps2, f);
        acc[3 * k] = G * f[0];
        acc[3 * k + 1] = G * f[1];
        acc[3 * k + 2] = G * f[2];
        if (pot) pot[k] = G * f[3];
    }
}

static gp_status cd_compute_forces(gp_solver *s, double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_forces");
    gp_status st = gp_check_compute(&s->base, acc);
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    size_t na = s->base.p.n_active;
    evaluate(s, na, NULL, s->base.p.active, 1, acc, pot);
    s->base.stats.force_calls += 1;
    s->base.stats.pp_interactions += (uint64_t)na * (uint64_t)s->src.n;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

static gp_status cd_compute_field(gp_solver *s, size_t m, const double *points,
                                  double *acc, double *pot)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "compute_field");
    gp_status st = gp_check_field(&s->base, m, points, acc);
    if (st != GP_OK) return st;
    double t0 = gp_wtime();
    evaluate(s, m, points, NULL, 0, acc, pot);
    s->base.stats.field_calls += 1;
    s->base.stats.pp_interactions += (uint64_t)m * (uint64_t)s->src.n;
    s->base.stats.seconds_walk += gp_wtime() - t0;
    return GP_OK;
}

static gp_status cd_get_stats(gp_solver *s, gp_stats *out)
{
    if (!s) return gp_null_instance(PLUGIN_NAME, "get_stats");
    return gp_base_get_stats(&s->base, out);
}

static const char *cd_last_error(const gp_solver *s)
{
    return gp_base_last_error(s ? &s->base : NULL);
}

static const gp_api api = {
    .abi_major = GRAVPLUG_ABI_MAJOR,
    .abi_minor = GRAVPLUG_ABI_MINOR,
    .struct_size = sizeof(gp_api),
    .name = PLUGIN_NAME,
    .version = GP_VERSION,
    .capabilities = GP_CAP_EXACT | GP_CAP_ACTIVE_SUBSET | GP_CAP_FIELD | GP_CAP_POTENTIAL,
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
