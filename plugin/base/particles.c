/*
 * particles.c — validation of particles, positions, active subsets and
 * field points, and the plugin's own copy of them.
 *
 * Every function checks everything before it changes anything, so a
 * rejected call leaves the instance exactly as it was (ABI.md).
 */
#include "base/plugin_base.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Blocks of 1024 values: each is scanned branch-free (vectorises); blocks
 * are spread over the threads for large arrays, and the first bad block
 * (smallest index) is searched for its culprit, so the answer is the same
 * for any thread count. */
enum { SCAN_BLOCK = 1024, SCAN_PARALLEL = 1 << 20 };

static size_t first_bad_block(const double *v, size_t count)
{
    const long long nb = (long long)((count + SCAN_BLOCK - 1) / SCAN_BLOCK);
    long long first = nb;
#pragma omp parallel for schedule(static) reduction(min : first) if (count >= SCAN_PARALLEL)
    for (long long b = 0; b < nb; ++b) {
        size_t s = (size_t)b * SCAN_BLOCK, e = s + SCAN_BLOCK < count ? s + SCAN_BLOCK : count;
        int bad = 0;
        for (size_t k = s; k < e; ++k) bad |= !isfinite(v[k]);
        if (bad && b < first) first = b;
    }
    return (size_t)first;
}

size_t gp_first_nonfinite(const double *v, size_t count)
{
    size_t b = first_bad_block(v, count);
    for (size_t k = b * SCAN_BLOCK; k < count && k < (b + 1) * SCAN_BLOCK; ++k)
        if (!isfinite(v[k])) return k;
    return (size_t)-1;
}

/* First mass that is not finite or negative, or n. */
static size_t first_bad_mass(const double *mass, size_t n)
{
    long long first = (long long)n;
#pragma omp parallel for schedule(static) reduction(min : first) if (n >= SCAN_PARALLEL)
    for (long long i = 0; i < (long long)n; ++i)
        if (!(isfinite(mass[i]) && mass[i] >= 0) && i < first) first = i;
    return (size_t)first;
}

/* memcpy, split over the threads for large copies. */
static void copy_doubles(double *dst, const double *src, size_t count)
{
    if (count < SCAN_PARALLEL) { memcpy(dst, src, count * sizeof *dst); return; }
    const long long nb = (long long)((count + 65535) / 65536);
#pragma omp parallel for schedule(static)
    for (long long b = 0; b < nb; ++b) {
        size_t s = (size_t)b * 65536, e = s + 65536 < count ? s + 65536 : count;
        memcpy(dst + s, src + s, (e - s) * sizeof *dst);
    }
}

static const char *what_number(double x)
{
    return isnan(x) ? "a NaN" : "an infinite";
}

/* 3*n doubles without overflow? */
static int size_ok(size_t n, size_t per)
{
    return n <= (size_t)-1 / (per * sizeof(double));
}

static gp_status check_positions_array(gp_base *base, const char *fn, const char *what,
                                       size_t n, const double *pos)
{
    size_t bad = gp_first_nonfinite(pos, 3 * n);
    if (bad != (size_t)-1)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "%s: %s %zu has %s %c coordinate; every coordinate "
                       "must be a finite number",
                       fn, what, bad / 3, what_number(pos[bad]), "xyz"[bad % 3]);
    return GP_OK;
}

gp_status gp_check_particles(gp_base *base, size_t n, const double *pos, const double *mass)
{
    if (n == 0)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_particles was given n = 0; pass at least one particle");
    if (!pos || !mass)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_particles was given a NULL %s array; pass %s",
                       !pos ? "pos" : "mass",
                       !pos ? "3*n interleaved x,y,z doubles" : "n masses");
    if (!size_ok(n, 3))
        return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                       "set_particles: n = %zu is too large to address; pass fewer particles", n);
    gp_status st = check_positions_array(base, "set_particles", "particle", n, pos);
    if (st != GP_OK) return st;
    size_t i = first_bad_mass(mass, n);
    if (i < n && !isfinite(mass[i]))
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_particles: particle %zu has %s mass; masses "
                       "must be finite and >= 0", i, what_number(mass[i]));
    if (i < n)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_particles: particle %zu has a negative mass (%g); "
                       "masses must be >= 0 (0 makes a massless test particle)",
                       i, mass[i]);
    return GP_OK;
}

static gp_status need_particles(gp_base *base, const char *fn)
{
    if (!base->p.have)
        return gp_fail(base, GP_ERR_BAD_STATE,
                       "%s was called before set_particles; call set_particles first", fn);
    return GP_OK;
}

gp_status gp_check_positions(gp_base *base, const double *pos)
{
    gp_status st = need_particles(base, "update_positions");
    if (st != GP_OK) return st;
    if (!pos)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "update_positions was given a NULL pos array; pass 3*n "
                       "interleaved x,y,z doubles (n = %zu)", base->p.n);
    return check_positions_array(base, "update_positions", "particle", base->p.n, pos);
}

gp_status gp_check_active(gp_base *base, size_t n_active, const uint32_t *index)
{
    gp_status st = need_particles(base, "set_active_subset");
    if (st != GP_OK) return st;
    if (n_active == 0) return GP_OK; /* all particles */
    if (!index)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_active_subset was given n_active = %zu but a NULL "
                       "index array; pass the indices, or (0, NULL) for all particles",
                       n_active);
    return gp_check_subset(base, "set_active_subset", n_active, index);
}

gp_status gp_check_compute(gp_base *base, const double *acc)
{
    gp_status st = need_particles(base, "compute_forces");
    if (st != GP_OK) return st;
    if (!acc)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "compute_forces was given a NULL acc array; pass room for "
                       "3*n_active doubles (n_active = %zu)", base->p.n_active);
    return GP_OK;
}

gp_status gp_check_field(gp_base *base, size_t m, const double *points, const double *acc)
{
    gp_status st = need_particles(base, "compute_field");
    if (st != GP_OK) return st;
    if (m == 0)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "compute_field was given m = 0 points; pass at least one point");
    if (!points || !acc)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "compute_field was given a NULL %s array; pass 3*m doubles",
                       !points ? "points" : "acc");
    if (!size_ok(m, 3))
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "compute_field: m = %zu is too large to address; pass fewer points", m);
    return check_positions_array(base, "compute_field", "point", m, points);
}

gp_status gp_particles_set(gp_base *base, size_t n, const double *pos, const double *mass)
{
    gp_status st = gp_check_particles(base, n, pos, mass);
    if (st != GP_OK) return st;
    return gp_particles_store(base, n, pos, mass);
}

gp_status gp_particles_store(gp_base *base, size_t n, const double *pos, const double *mass)
{
    gp_particles *p = &base->p;
    double *np = p->pos, *nm = p->mass;
    if (!p->have || p->n != n) {
        np = malloc(3 * n * sizeof *np);
        nm = malloc(n * sizeof *nm);
        if (!np || !nm) {
            free(np);
            free(nm);
            return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                           "set_particles: no memory for a copy of %zu particles "
                           "(%zu bytes); free memory or use fewer particles",
                           n, 4 * n * sizeof(double));
        }
        free(p->pos);
        free(p->mass);
    }
    copy_doubles(np, pos, 3 * n);
    copy_doubles(nm, mass, n);
    p->pos = np;
    p->mass = nm;
    if (p->n != n) { /* the held state is sized by n: reallocated at the next set_state */
        free(p->x0); free(p->vel); free(p->acc); free(p->t); free(p->stated);
        p->x0 = p->vel = p->acc = p->t = NULL;
        p->stated = NULL;
    }
    p->n = n;
    p->have = 1;
    free(p->active);
    p->active = NULL;
    p->n_active = n;
    /* ABI 1.1: set_particles clears the held state and both subsets. */
    gp_state_clear(base);
    free(p->src);
    p->src = NULL;
    p->n_src = n;
    return GP_OK;
}

gp_status gp_particles_update(gp_base *base, const double *pos)
{
    gp_status st = gp_check_positions(base, pos);
    if (st != GP_OK) return st;
    copy_doubles(base->p.pos, pos, 3 * base->p.n);
    gp_state_clear(base); /* 1.1: every position given anew, v and a cleared */
    return GP_OK;
}

gp_status gp_particles_set_active(gp_base *base, size_t n_active, const uint32_t *index)
{
    gp_status st = gp_check_active(base, n_active, index);
    if (st != GP_OK) return st;
    gp_particles *p = &base->p;
    return gp_index_list_store(base, "set_active_subset", n_active, index, &p->active, &p->n_active);
}

gp_status gp_index_list_store(gp_base *base, const char *fn, size_t m, const uint32_t *index,
                              uint32_t **list, size_t *count)
{
    if (m == 0) {
        free(*list);
        *list = NULL;
        *count = base->p.n;
        return GP_OK;
    }
    uint32_t *copy = malloc(m * sizeof *copy);
    if (!copy)
        return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for %zu indices; free memory or pass fewer", fn, m);
    memcpy(copy, index, m * sizeof *copy);
    free(*list);
    *list = copy;
    *count = m;
    return GP_OK;
}
