/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_driver.c — the driver code cpu-tree and mpi-tree share
 * (cpu_driver.h), so that cpu-tree and each rank of mpi-tree walk, rebuild,
 * thread and count alike.
 */
#include "octree/cpu_driver.h"
#include "base/base_instance.h"
#include "base/base_params.h"
#include "base/base_particles.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <string.h>


int oct_param_threads(const gp_base *b)
{
    return gp_param_threads(b);
}

gp_key_kind oct_param_keys(const gp_base *b)
{
    return gp_param_enum(b, OCT_P_KEYS) == 1 ? GP_KEY_MORTON : GP_KEY_PEANO_HILBERT;
}

int oct_build_threaded(const gp_base *b, oct_tree *t, size_t n, const double *pos,
                       const double *mass, uint32_t group_size, uint32_t leaf_size,
                       gp_key_kind keys, const gp_cube *cube)
{
    int prev = omp_get_max_threads();
    omp_set_num_threads(oct_param_threads(b));
    int rc = oct_tree_build_in(t, n, pos, mass, group_size, leaf_size, keys, cube);
    omp_set_num_threads(prev);
    return rc;
}

int oct_refit_threaded(const gp_base *b, oct_tree *t, const double *pos, const double *mass,
                       int moments)
{
    int prev = omp_get_max_threads();
    omp_set_num_threads(oct_param_threads(b));
    int rc = oct_tree_refit(t, pos, mass, moments);
    omp_set_num_threads(prev);
    return rc;
}

int oct_moments_threaded(const gp_base *b, oct_tree *t)
{
    int prev = omp_get_max_threads();
    omp_set_num_threads(oct_param_threads(b));
    int rc = oct_tree_moments(t);
    omp_set_num_threads(prev);
    return rc;
}

oct_walk_params oct_param_walk(const gp_base *b, int mac, int prepass)
{
    double eps = gp_param_double(b, OCT_P_EPS);
    oct_walk_params w = {
        .mac = mac,
        .quadrupole = !prepass && gp_param_enum(b, OCT_P_ORDER) == 1,
        .prec = (oct_precision)gp_param_enum(b, OCT_P_PREC),
        .eps2 = eps * eps,
        .G = gp_param_double(b, OCT_P_G),
        .alpha = gp_param_double(b, OCT_P_DELTA),
        .lcap = mac == GP_MAC_ACCELERATION ? oct_walk_lcap(gp_param_double(b, OCT_P_TMAX)) : 0.0,
    };
    return w;
}

int oct_layout_changed(const oct_tree_age *a, const gp_base *b)
{
    return !a->have || a->group != (uint32_t)gp_param_int(b, OCT_P_GROUP) ||
           a->leaf != (uint32_t)gp_param_int(b, OCT_P_LEAF) || a->keys != (int)oct_param_keys(b);
}

void oct_tree_built(oct_tree_age *a, const gp_base *b)
{
    a->have = 1;
    a->moved = 0;
    a->refitted = 0;
    a->group = (uint32_t)gp_param_int(b, OCT_P_GROUP);
    a->leaf = (uint32_t)gp_param_int(b, OCT_P_LEAF);
    a->keys = (int)oct_param_keys(b);
    a->calls = 0;
    a->excess = 0;
    memset(a->base_cost, 0, sizeof a->base_cost);
}

void oct_tree_rebuilt(oct_tree_age *a, const gp_base *b)
{
    double keep[OCT_AGE_BUCKETS];
    memcpy(keep, a->base_cost, sizeof keep);
    oct_tree_built(a, b);
    memcpy(a->base_cost, keep, sizeof keep);
}

int oct_rebuild_due(const gp_base *b, const oct_tree_age *a, size_t n)
{
    int mode = gp_param_enum(b, OCT_P_REBUILD);
    return mode == OCT_REBUILD_ALWAYS ||
           (mode == OCT_REBUILD_EVERY && a->calls >= (uint64_t)gp_param_int(b, OCT_P_REBUILD)) ||
           (mode == OCT_REBUILD_AUTO && a->excess > OCT_REBUILD_EXCESS_PER_PARTICLE * (double)n);
}

void oct_age_observe(double *base_cost, int nbuckets, double *excess, size_t na, double interactions,
                     int fresh)
{
    int bucket = 0;
    while (bucket < nbuckets - 1 && ((size_t)2 << bucket) <= na) ++bucket;
    double cost = interactions / (double)na;
    if (base_cost[bucket] == 0 || fresh) base_cost[bucket] = cost > 0 ? cost : DBL_MIN;
    else *excess = fmax(0.0, *excess + (cost - base_cost[bucket]) * (double)na);
}

void oct_count_force_call(gp_base *b, oct_tree_age *a, int rebase, uint64_t pp, uint64_t pc,
                          size_t na, double t0)
{
    if (rebase) memset(a->base_cost, 0, sizeof a->base_cost);
    if (na) oct_age_observe(a->base_cost, OCT_AGE_BUCKETS, &a->excess, na, (double)(pp + pc),
                            !a->refitted);
    a->calls += 1;
    b->stats.force_calls += 1;
    b->stats.pp_interactions += pp;
    b->stats.pc_interactions += pc;
    b->stats.seconds_walk += gp_wtime() - t0;
}

void oct_count_field_call(gp_base *b, uint64_t pp, uint64_t pc, double t0)
{
    b->stats.field_calls += 1;
    b->stats.pp_interactions += pp;
    b->stats.pc_interactions += pc;
    b->stats.seconds_walk += gp_wtime() - t0;
}

void oct_store_abs_acc(const gp_base *b, size_t na, const double *acc, double *aold)
{
    for (size_t k = 0; k < na; k++) {
        const double *a = &acc[3 * k];
        aold[gp_active_index(b, k)] = oct_abs_acc(a);
    }
}

size_t oct_aold_from_state(const gp_base *b, size_t na, double *aold)
{
    const gp_particles *p = &b->p;
    size_t missing = 0;
    for (size_t k = 0; k < na; k++) {
        size_t i = gp_active_index(b, k);
        if (aold[i] >= 0) continue;
        if (p->stated && p->stated[i]) {
            double m = oct_abs_acc(&p->acc[3 * i]);
            if (m > 0 && isfinite(m)) { aold[i] = m; continue; }
        }
        missing++;
    }
    return missing;
}
