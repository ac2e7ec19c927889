/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stopping.c — AMUSE-style stopping conditions for gp_sim_evolve:
 * collision (particle radii overlap), number of steps, wall-clock timeout
 * and out of box (gp_sim.h, "stopping conditions").
 *
 * The conditions are checked after every integrator step of gp_sim_evolve
 * (every block step under block-rk2) on the state at the simulation time
 * (particles not synchronised there are predicted, as gp_sim_get_particles
 * does); when an enabled one is met, gp_sim_evolve returns GP_OK early at
 * that time. The state lives in its own struct behind sim->stopping, made
 * on first use, so a simulation that never asks pays nothing.
 *
 * Collisions: sweep and prune along x (particles sorted by x - r; a pair is
 * tested only while the x intervals overlap), then the 3-D test
 * |x_i - x_j| < r_i + r_j. The sort starts from the last step's order, so a
 * check costs about O(n) between steps; O(n log n) at worst for the sort.
 *
 * Collisions from the plugin's nearest neighbours, ph4's way: when an
 * integrator's force call goes through compute_forces_ex (ABI 1.2; the
 * Hermite scheme's), it asks for nn_index of its active particles too
 * (force_held.c, gp_stopping_nn_buffer) and the check after that step
 * tests only the pairs (i, nearest neighbour of i) of those particles, at
 * the positions of the simulation time: n_active pairs, no sort or sweep
 * (the state is still predicted for all n, as for the other conditions).
 * With equal radii that finds every overlapping pair with an active body
 * (a body overlapping i is at least as far as i's nearest, which then
 * overlaps too); a pair of two inactive bodies is found when one of them
 * is next active, and with unequal radii a larger body that is not i's
 * nearest is missed, as in ph4. collision_by_neighbours = 0 keeps the
 * exact sweep for every step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stopping.h"

/* Stored pairs/particles per check (AMUSE's own library keeps 10). */
#define GP_STOP_MAX_ENTRIES 1024

struct gp_stopping {
    unsigned enabled, set;
    double *radius;             /* n_radius radii, or NULL (all 0) */
    size_t n_radius;
    double max_steps, timeout, box, box_use_com;
    uint64_t steps0;            /* sim->steps when this evolve began */
    struct timespec t0;         /* wall clock when this evolve began */
    uint64_t first[GP_STOP_MAX_ENTRIES], second[GP_STOP_MAX_ENTRIES];
    size_t n_pairs;             /* collision pairs (first, second) */
    uint64_t out[GP_STOP_MAX_ENTRIES];
    size_t n_out;               /* particles out of the box */
    double *pos;                /* 3n scratch: positions at sim->time */
    size_t *order;              /* n scratch: sweep order */
    int order_valid;            /* order holds a permutation (the last sort) */
    double *lower;              /* n scratch: x - r */
    size_t n_scratch;
    double by_neighbours;       /* 1: nearest neighbours where the force call
                                   gives them (parameter collision_by_neighbours) */
    uint32_t *nn;               /* nn_index of the last force call's active */
    uint32_t *nn_of;            /* ... and those particles; NULL in use: all */
    size_t nn_count, nn_cap;
    int nn_fresh, nn_all;       /* nn holds this step's neighbours; of all n */
};

static gp_stopping *stopping_of(gp_sim *sim)
{
    if (!sim->stopping) {
        gp_stopping *s = calloc(1, sizeof *s);
        if (!s) return NULL;
        /* AMUSE's defaults (lib/stopcond): 1 step, 4 s, box 0, around the
         * centre of mass. */
        s->max_steps = 1;
        s->timeout = 4.0;
        s->box = 0.0;
        s->box_use_com = 1;
        s->by_neighbours = 1;
        sim->stopping = s;
    }
    return sim->stopping;
}

void gp_stopping_free(gp_sim *sim)
{
    gp_stopping *s = sim->stopping;
    if (!s) return;
    free(s->radius); free(s->pos); free(s->order); free(s->lower);
    free(s->nn); free(s->nn_of);
    free(s);
    sim->stopping = NULL;
}

static int known_conditions(unsigned c)
{
    return (c & ~(unsigned)(GP_STOP_COLLISION | GP_STOP_NUMBER_OF_STEPS |
                            GP_STOP_TIMEOUT | GP_STOP_OUT_OF_BOX)) == 0;
}

GRAVPLUG_EXPORT gp_status gp_sim_set_radii(gp_sim *sim, const double *radius)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (radius && sim->n == 0)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE,
                           "no particles yet: call gp_sim_set_particles before gp_sim_set_radii");
    for (size_t i = 0; radius && i < sim->n; ++i)
        if (!isfinite(radius[i]) || radius[i] < 0)
            return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                               "gp_sim_set_radii: particle %zu has radius %g; radii must be finite and >= 0",
                               i, radius[i]);
    gp_stopping *s = stopping_of(sim);
    double *r = radius ? malloc(sim->n * sizeof *r) : NULL;
    if (!s || (radius && !r)) {
        free(r);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory storing %zu radii", sim->n);
    }
    if (r) memcpy(r, radius, sim->n * sizeof *r);
    free(s->radius);
    s->radius = r;
    s->n_radius = r ? sim->n : 0;
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_stop_enable(gp_sim *sim, unsigned conditions, int on)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!known_conditions(conditions))
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_stop_enable: 0x%x holds bits that are no GP_STOP_* condition", conditions);
    gp_stopping *s = stopping_of(sim);
    if (!s) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory");
    if (on) s->enabled |= conditions;
    else s->enabled &= ~conditions;
    return GP_OK;
}

GRAVPLUG_EXPORT unsigned gp_sim_stop_enabled(const gp_sim *sim)
{
    return sim && sim->stopping ? sim->stopping->enabled : 0;
}

GRAVPLUG_EXPORT unsigned gp_sim_stop_set(const gp_sim *sim)
{
    return sim && sim->stopping ? sim->stopping->set : 0;
}

static double *param_slot(gp_stopping *s, const char *name)
{
    if (!name) return NULL;
    if (strcmp(name, "number_of_steps") == 0) return &s->max_steps;
    if (strcmp(name, "timeout") == 0) return &s->timeout;
    if (strcmp(name, "out_of_box_size") == 0) return &s->box;
    if (strcmp(name, "out_of_box_use_center_of_mass") == 0) return &s->box_use_com;
    if (strcmp(name, "collision_by_neighbours") == 0) return &s->by_neighbours;
    return NULL;
}

/* The slot of the parameter name in sim's conditions (made if need be), or
 * a failure with a sentence; hint follows the unknown name. */
static gp_status find_param(gp_sim *sim, const char *name, double **slot, const char *hint)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_stopping *s = stopping_of(sim);
    if (!s) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory");
    *slot = param_slot(s, name);
    if (!*slot)
        return gp_sim_fail(sim, GP_ERR_UNKNOWN_PARAMETER, "no stopping-condition parameter \"%s\"%s",
                           name ? name : "(null)", hint);
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_stop_set_param(gp_sim *sim, const char *name, double value)
{
    double *slot = NULL;
    gp_status st = find_param(sim, name, &slot, ": use number_of_steps, timeout, "
                              "out_of_box_size, out_of_box_use_center_of_mass or "
                              "collision_by_neighbours");
    if (st != GP_OK) return st;
    gp_stopping *s = sim->stopping;
    int ok = isfinite(value);
    if (slot == &s->max_steps) ok = ok && value >= 1 && value == floor(value);
    else if (slot == &s->timeout) ok = ok && value > 0;
    else if (slot == &s->box) ok = ok && value >= 0;
    else ok = ok && (value == 0 || value == 1);
    if (!ok)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "stopping-condition parameter %s = %g is out of range (number_of_steps: "
                           "an integer >= 1; timeout: seconds > 0; out_of_box_size: >= 0; "
                           "out_of_box_use_center_of_mass and collision_by_neighbours: 0 or 1)",
                           name, value);
    *slot = value;
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_stop_get_param(gp_sim *sim, const char *name, double *value)
{
    double *slot = NULL;
    gp_status st = find_param(sim, name, &slot, "");
    if (st != GP_OK) return st;
    if (!value) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_stop_get_param: value is NULL");
    *value = *slot;
    return GP_OK;
}

GRAVPLUG_EXPORT size_t gp_sim_stop_count(const gp_sim *sim, unsigned condition)
{
    const gp_stopping *s = sim ? sim->stopping : NULL;
    int one_condition = condition && !(condition & (condition - 1)) && known_conditions(condition);
    if (!s || !one_condition || !(s->set & condition)) return 0;
    if (condition == GP_STOP_COLLISION) return s->n_pairs;
    if (condition == GP_STOP_OUT_OF_BOX) return s->n_out;
    return 1;
}

GRAVPLUG_EXPORT gp_status gp_sim_stop_particles(gp_sim *sim, unsigned condition, size_t max,
                                                uint64_t *first, uint64_t *second)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (condition != GP_STOP_COLLISION && condition != GP_STOP_OUT_OF_BOX)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_stop_particles: only GP_STOP_COLLISION and GP_STOP_OUT_OF_BOX name particles");
    size_t n = gp_sim_stop_count(sim, condition);
    if (n > max) n = max;
    if (n && !first)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_stop_particles: first is NULL");
    const gp_stopping *s = sim->stopping;
    for (size_t k = 0; k < n; ++k) {
        if (condition == GP_STOP_COLLISION) {
            first[k] = s->first[k];
            if (second) second[k] = s->second[k];
        } else {
            first[k] = s->out[k];
        }
    }
    return GP_OK;
}

/* ---- the hooks of gp_sim_evolve -------------------------------------------- */

gp_status gp_stopping_begin(gp_sim *sim)
{
    gp_stopping *s = sim->stopping;
    if (!s) return GP_OK;
    s->set = 0;
    s->n_pairs = s->n_out = 0;
    s->steps0 = sim->steps;
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    if (!(s->enabled & (GP_STOP_COLLISION | GP_STOP_OUT_OF_BOX))) return GP_OK;
    if ((s->enabled & GP_STOP_COLLISION) && s->radius && s->n_radius != sim->n)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE,
                           "collision detection has radii for %zu particles but the simulation has %zu: "
                           "call gp_sim_set_radii again after gp_sim_set_particles", s->n_radius, sim->n);
    if (s->n_scratch != sim->n) {
        free(s->pos); free(s->order); free(s->lower);
        s->pos = malloc(3 * sim->n * sizeof *s->pos);
        s->order = malloc(sim->n * sizeof *s->order);
        s->lower = malloc(sim->n * sizeof *s->lower);
        s->n_scratch = sim->n;
        s->order_valid = 0;
        if (!s->pos || !s->order || !s->lower) {
            free(s->pos); free(s->order); free(s->lower);
            s->pos = NULL; s->order = NULL; s->lower = NULL;
            s->n_scratch = 0;
            return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                               "out of memory for the stopping conditions of %zu particles", sim->n);
        }
    }
    return GP_OK;
}

static _Thread_local const double *sort_key;   /* qsort has no user pointer */

static int by_key(const void *a, const void *b)
{
    double x = sort_key[*(const size_t *)a], y = sort_key[*(const size_t *)b];
    return (x > y) - (x < y);
}

/* Sorts order[] by lower[]. Between two steps the particles move little
 * (a block step moves few), so the last order is nearly sorted: insertion
 * sort from it is close to O(n); past 16n moves it gives up for qsort. */
static void sort_order(gp_stopping *s, size_t n)
{
    if (s->order_valid) {
        size_t moves = 0, limit = 16 * n + 1024;
        int done = 1;
        for (size_t a = 1; a < n && done; ++a) {
            size_t i = s->order[a], b = a;
            double key = s->lower[i];
            while (b > 0 && s->lower[s->order[b - 1]] > key) {
                s->order[b] = s->order[b - 1];
                --b;
                if (++moves > limit) { done = 0; break; }
            }
            s->order[b] = i;                      /* order stays a permutation */
        }
        if (done) return;
    } else {
        for (size_t i = 0; i < n; ++i) s->order[i] = i;
    }
    sort_key = s->lower;
    qsort(s->order, n, sizeof *s->order, by_key);
    s->order_valid = 1;
}

/* Records the pair (i, j) once, by ids, lower index first. */
static void record_pair(gp_sim *sim, gp_stopping *s, size_t i, size_t j)
{
    s->set |= GP_STOP_COLLISION;
    uint64_t a = sim->ids[i < j ? i : j], b = sim->ids[i < j ? j : i];
    for (size_t k = 0; k < s->n_pairs; ++k)
        if (s->first[k] == a && s->second[k] == b) return;   /* both active, each the other's nearest */
    if (s->n_pairs == GP_STOP_MAX_ENTRIES) return;
    s->first[s->n_pairs] = a;
    s->second[s->n_pairs] = b;
    s->n_pairs++;
}

static void find_collisions(gp_sim *sim, gp_stopping *s)
{
    const double *p = s->pos, *r = s->radius;
    if (!r) return;                               /* no radii: points never touch */
    size_t n = sim->n;
    for (size_t i = 0; i < n; ++i) s->lower[i] = p[3 * i] - r[i];
    sort_order(s, n);
    for (size_t a = 0; a < n; ++a) {
        size_t i = s->order[a];
        double upper = p[3 * i] + r[i];
        for (size_t b = a + 1; b < n && s->lower[s->order[b]] < upper; ++b) {
            size_t j = s->order[b];
            double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1],
                   dz = p[3 * i + 2] - p[3 * j + 2], rr = r[i] + r[j];
            if (dx * dx + dy * dy + dz * dz >= rr * rr) continue;
            record_pair(sim, s, i, j);  /* once: a drift may have found it already */
        }
    }
}

/* Collisions among the na particles a[] an integrator has just moved to
 * one time (a drift inside a step: a hierarchical step moves the fast
 * pairs many times between two checks after a step, and two bodies can
 * meet and part within it). Their positions are sim->pos; a sweep in x
 * over them alone, on the scratch of the check after a step. */
void gp_stopping_after_drift(gp_sim *sim, const uint32_t *a, size_t na)
{
    gp_stopping *s = sim->stopping;
    if (!s || !(s->enabled & GP_STOP_COLLISION) || !s->radius || !s->order || na < 2) return;
    const double *p = sim->pos, *r = s->radius;
    for (size_t k = 0; k < na; ++k) {
        s->order[k] = a[k];
        s->lower[a[k]] = p[3 * a[k]] - r[a[k]];
    }
    sort_key = s->lower;
    qsort(s->order, na, sizeof *s->order, by_key);
    s->order_valid = 0;                  /* order[] no longer the whole set's */
    for (size_t u = 0; u < na; ++u) {
        size_t i = s->order[u];
        double upper = p[3 * i] + r[i];
        for (size_t v = u + 1; v < na && s->lower[s->order[v]] < upper; ++v) {
            size_t j = s->order[v];
            double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1],
                   dz = p[3 * i + 2] - p[3 * j + 2], rr = r[i] + r[j];
            if (dx * dx + dy * dy + dz * dz < rr * rr) record_pair(sim, s, i, j);
        }
    }
}

uint32_t *gp_stopping_nn_buffer(gp_sim *sim, size_t na)
{
    gp_stopping *s = sim->stopping;
    if (!s || !(s->enabled & GP_STOP_COLLISION) || !s->by_neighbours || !s->radius || sim->reduce)
        return NULL;
    if (na > s->nn_cap) {
        uint32_t *nn = realloc(s->nn, na * sizeof *nn), *of = NULL;
        if (nn) s->nn = nn;
        of = nn ? realloc(s->nn_of, na * sizeof *of) : NULL;
        if (of) s->nn_of = of;
        if (!nn || !of) return NULL;      /* no memory: this step sweeps */
        s->nn_cap = na;
    }
    return na ? s->nn : NULL;
}

void gp_stopping_nn_done(gp_sim *sim, size_t na, const uint32_t *idx)
{
    gp_stopping *s = sim->stopping;
    s->nn_count = na;
    s->nn_all = idx == NULL;
    if (idx) memcpy(s->nn_of, idx, na * sizeof *idx);
    s->nn_fresh = 1;
}

/* The pairs (i, nn_i) of the last force call's active particles. */
static void find_collisions_nn(gp_sim *sim, gp_stopping *s)
{
    const double *p = s->pos, *r = s->radius;
    for (size_t k = 0; k < s->nn_count; ++k) {
        size_t i = s->nn_all ? k : s->nn_of[k], j = s->nn[k];
        if (j >= sim->n) continue;   /* UINT32_MAX: no other source */
        double dx = p[3 * i] - p[3 * j], dy = p[3 * i + 1] - p[3 * j + 1],
               dz = p[3 * i + 2] - p[3 * j + 2], rr = r[i] + r[j];
        if (dx * dx + dy * dy + dz * dz < rr * rr) record_pair(sim, s, i, j);
    }
}

static void find_out_of_box(gp_sim *sim, gp_stopping *s)
{
    const double *p = s->pos;
    double c[3] = { 0, 0, 0 }, m = 0;
    if (s->box_use_com) {
        for (size_t i = 0; i < sim->n; ++i) {
            for (int k = 0; k < 3; ++k) c[k] += sim->mass[i] * p[3 * i + k];
            m += sim->mass[i];
        }
        for (int k = 0; k < 3; ++k) c[k] = m > 0 ? c[k] / m : 0.0;
    }
    for (size_t i = 0; i < sim->n; ++i) {
        double d2 = 0;
        for (int k = 0; k < 3; ++k) d2 += (p[3 * i + k] - c[k]) * (p[3 * i + k] - c[k]);
        if (d2 <= s->box * s->box) continue;
        s->set |= GP_STOP_OUT_OF_BOX;
        if (s->n_out < GP_STOP_MAX_ENTRIES) s->out[s->n_out++] = sim->ids[i];
    }
}

int gp_stopping_after_step(gp_sim *sim)
{
    gp_stopping *s = sim->stopping;
    if (!s || !s->enabled) return 0;
    int fresh = s->nn_fresh;
    s->nn_fresh = 0;                  /* a step without a force call sweeps */
    if ((s->enabled & GP_STOP_NUMBER_OF_STEPS) && (double)(sim->steps - s->steps0) >= s->max_steps)
        s->set |= GP_STOP_NUMBER_OF_STEPS;
    if (s->enabled & GP_STOP_TIMEOUT) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double dt = (double)(now.tv_sec - s->t0.tv_sec) + 1e-9 * (double)(now.tv_nsec - s->t0.tv_nsec);
        if (dt > s->timeout) s->set |= GP_STOP_TIMEOUT;
    }
    if (s->enabled & (GP_STOP_COLLISION | GP_STOP_OUT_OF_BOX)) {
        gp_sim_predict_state(sim, s->pos, NULL);
        if ((s->enabled & GP_STOP_COLLISION) && fresh) find_collisions_nn(sim, s);
        else if (s->enabled & GP_STOP_COLLISION) find_collisions(sim, s);
        if (s->enabled & GP_STOP_OUT_OF_BOX) find_out_of_box(sim, s);
    }
    return (s->set & s->enabled) != 0;
}
