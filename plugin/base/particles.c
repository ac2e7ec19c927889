/* SPDX-License-Identifier: Apache-2.0 */
/*
 * particles.c — validation of particles, positions and field points, and
 * the plugin's own copy of the particles (subsets.c holds the index lists).
 *
 * Every function checks everything before it changes anything, so a
 * rejected call leaves the instance exactly as it was (gravplug.h).
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <math.h>
#include <stdlib.h>

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
    size_t i = gp_first_bad_mass(mass, n);
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

/* fn's particles are there and its array `name` is not NULL ("pass what
 * (count_name = count)" says what it should hold). */
static gp_status need_particles_and_array(gp_base *base, const char *fn, const void *array,
                                          const char *name, const char *what,
                                          const char *count_name, size_t count)
{
    gp_status st = gp_need_particles(base, fn);
    if (st == GP_OK && !array)
        st = gp_fail(base, GP_ERR_INVALID_ARGUMENT, "%s was given a NULL %s array; pass %s (%s = %zu)",
                     fn, name, what, count_name, count);
    return st;
}

gp_status gp_check_positions(gp_base *base, const double *pos)
{
    gp_status st = need_particles_and_array(base, "update_positions", pos, "pos",
                                            "3*n interleaved x,y,z doubles", "n", base->p.n);
    return st != GP_OK ? st : check_positions_array(base, "update_positions", "particle", base->p.n, pos);
}

gp_status gp_check_compute(gp_base *base, const double *acc)
{
    return need_particles_and_array(base, "compute_forces", acc, "acc", "room for 3*n_active doubles",
                                    "n_active", base->p.n_active);
}

gp_status gp_check_field(gp_base *base, size_t m, const double *points, const double *acc)
{
    gp_status st = gp_need_particles(base, "compute_field");
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
    gp_copy_doubles(np, pos, 3 * n);
    gp_copy_doubles(nm, mass, n);
    p->pos = np;
    p->mass = nm;
    if (p->n != n) { /* the held state is sized by n: reallocated at the next set_state */
        free(p->x0); free(p->vel); free(p->acc); free(p->t); free(p->stated);
        free(p->jerk); free(p->third);
        p->x0 = p->vel = p->acc = p->t = p->jerk = NULL;
        p->stated = p->third = NULL;
    }
    p->n = n;
    p->have = 1;
    free(p->active);
    p->active = NULL;
    p->n_active = n;
    /* ABI 1.1: set_particles clears the held state and both subsets; 1.2:
     * the jerks and the neighbour lists too. */
    gp_state_clear(base);
    gp_neighbours_forget(base);
    free(p->src);
    p->src = NULL;
    p->n_src = n;
    gp_groups_clear(base);   /* ABI 1.3: set_particles clears the groups */
    return GP_OK;
}

gp_status gp_particles_update(gp_base *base, const double *pos)
{
    gp_status st = gp_check_positions(base, pos);
    if (st != GP_OK) return st;
    gp_copy_doubles(base->p.pos, pos, 3 * base->p.n);
    gp_state_clear(base); /* 1.1: every position given anew, v and a cleared */
    return GP_OK;
}

