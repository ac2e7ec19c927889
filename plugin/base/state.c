/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c — ABI 1.1 on the plugin side: the kinematic state a plugin holds
 * and predicts (set_state, predict, get_positions) and in-place mass
 * updates, on the host copy in gp_base.p (subsets.c holds the source
 * subset).
 *
 * The CPU plugins use these directly; the GPU plugins use the validation
 * and keep the host copy in step (it is what get_positions answers from
 * when nothing newer lives on the device).
 *
 * Compiled with -ffp-contract=off (plugin/base/module.mk): predict must
 * equal the host's own evaluation of the ABI's expression bit for bit.
 */
#include "base/base_instance.h"
#include "base/base_params.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Copies of a subset's state spread over the plugin's threads
 * (gp_param_threads) from this many particles: a block step's subsets are
 * a few thousand, and set_state's copy is ~20 ns a particle (cpu-tree in
 * `make run`'s block run: 0.094 s for 5.0 M), so smaller ones stay on one
 * thread. */
enum { SUBSET_PAR_MIN = 4096 };   /* below it serial (base_params.h) */

static gp_status check_finite(gp_base *base, const char *fn, const char *what,
                              const double *v, size_t count, size_t per)
{
    size_t bad = gp_first_nonfinite(v, count);
    if (bad == (size_t)-1) return GP_OK;
    return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                   "%s: %s of entry %zu is %s; every value must be a finite number",
                   fn, what, bad / per, isnan(v[bad]) ? "NaN" : "infinite");
}

static int alloc_state(gp_base *base)
{
    gp_particles *p = &base->p;
    if (p->x0) return 1;
    size_t n = p->n;
    double *x0 = malloc(3 * n * sizeof *x0), *vel = malloc(3 * n * sizeof *vel);
    double *acc = malloc(3 * n * sizeof *acc), *t = malloc(n * sizeof *t);
    uint8_t *stated = calloc(n, 1);
    if (!x0 || !vel || !acc || !t || !stated) {
        free(x0); free(vel); free(acc); free(t); free(stated);
        return 0;
    }
    p->x0 = x0; p->vel = vel; p->acc = acc; p->t = t; p->stated = stated;
    p->n_stated = 0;
    return 1;
}

gp_status gp_state_check_args(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *t)
{
    gp_status st = gp_check_subset(base, "set_state", n_sub, index);
    if (st != GP_OK || n_sub == 0) return st;
    if (!pos || !vel || !acc || !t)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_state was given a NULL %s array; pass %s for the %zu "
                       "particles of the subset",
                       !pos ? "pos" : !vel ? "vel" : !acc ? "acc" : "t",
                       !t && pos && vel && acc ? "one time each" : "3 doubles each", n_sub);
    return GP_OK;
}

gp_status gp_state_check(gp_base *base, size_t n_sub, const uint32_t *index,
                         const double *pos, const double *vel, const double *acc,
                         const double *t)
{
    static const char fn[] = "set_state";
    gp_status st = gp_state_check_args(base, n_sub, index, pos, vel, acc, t);
    if (st != GP_OK || n_sub == 0) return st;
    if ((st = check_finite(base, fn, "a position", pos, 3 * n_sub, 3)) != GP_OK ||
        (st = check_finite(base, fn, "a velocity", vel, 3 * n_sub, 3)) != GP_OK ||
        (st = check_finite(base, fn, "an acceleration", acc, 3 * n_sub, 3)) != GP_OK ||
        (st = check_finite(base, fn, "the time", t, n_sub, 1)) != GP_OK)
        return st;
    return GP_OK;
}

/* Entry k of a set_state into particle index[k] (k itself without an
 * index); returns 1 when the particle had no state before. */
static inline size_t set_one(gp_particles *p, size_t k, const uint32_t *index, const double *pos,
                             const double *vel, const double *acc, const double *t)
{
    size_t i = index ? (size_t)index[k] : k;
    for (int d = 0; d < 3; ++d) {
        p->x0[3 * i + d] = pos[3 * k + d];
        p->pos[3 * i + d] = pos[3 * k + d];
        p->vel[3 * i + d] = vel[3 * k + d];
        p->acc[3 * i + d] = acc[3 * k + d];
    }
    p->t[i] = t[k];
    size_t added = p->stated[i] == 0;
    p->stated[i] = 1;
    if (p->third) p->third[i] = 0;   /* 1.1's state: second order */
    return added;
}

gp_status gp_state_set(gp_base *base, size_t n_sub, const uint32_t *index,
                       const double *pos, const double *vel, const double *acc,
                       const double *t)
{
    gp_status st = gp_state_check(base, n_sub, index, pos, vel, acc, t);
    if (st != GP_OK || n_sub == 0) return st;
    if (!alloc_state(base))
        return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                       "set_state: no memory for the kinematic state of %zu particles "
                       "(%zu bytes); free memory or use fewer particles",
                       base->p.n, base->p.n * (10 * sizeof(double) + 1));
    gp_particles *p = &base->p;
    size_t added = 0;
    if (n_sub > SUBSET_PAR_MIN) {
#pragma omp parallel for num_threads(gp_param_threads(base)) schedule(static) reduction(+ : added)
        for (size_t k = 0; k < n_sub; ++k) added += set_one(p, k, index, pos, vel, acc, t);
    } else {   /* serial below the threshold: base_params.h says why */
        for (size_t k = 0; k < n_sub; ++k) added += set_one(p, k, index, pos, vel, acc, t);
    }
    p->n_stated += added;
    return GP_OK;
}

gp_status gp_state_check_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                              const double *pos, const double *vel, const double *acc,
                              const double *jerk, const double *t)
{
    gp_status st = gp_state_check(base, n_sub, index, pos, vel, acc, t);
    if (st != GP_OK || n_sub == 0) return st;
    if (!jerk)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "set_state_jerk was given a NULL jerk array; pass 3 doubles for each of "
                       "the %zu particles (or use set_state for a second-order state)", n_sub);
    return check_finite(base, "set_state_jerk", "a jerk", jerk, 3 * n_sub, 3);
}

static inline void set_jerk_one(gp_particles *p, size_t k, const uint32_t *index,
                                const double *jerk)
{
    size_t i = index ? (size_t)index[k] : k;
    memcpy(&p->jerk[3 * i], &jerk[3 * k], 3 * sizeof *jerk);
    p->third[i] = 1;
}

gp_status gp_state_set_jerk(gp_base *base, size_t n_sub, const uint32_t *index,
                            const double *pos, const double *vel, const double *acc,
                            const double *jerk, const double *t)
{
    gp_status st = gp_state_check_jerk(base, n_sub, index, pos, vel, acc, jerk, t);
    if (st != GP_OK || n_sub == 0) return st;
    gp_particles *p = &base->p;
    if (!p->jerk) {
        double *j = malloc(3 * p->n * sizeof *j);
        uint8_t *third = calloc(p->n, 1);
        if (!j || !third) {
            free(j); free(third);
            return gp_fail(base, GP_ERR_OUT_OF_MEMORY,
                           "set_state_jerk: no memory for the jerks of %zu particles; free "
                           "memory or use fewer particles", p->n);
        }
        p->jerk = j;
        p->third = third;
    }
    st = gp_state_set(base, n_sub, index, pos, vel, acc, t);
    if (st != GP_OK) return st;
    if (n_sub > SUBSET_PAR_MIN) {
#pragma omp parallel for num_threads(gp_param_threads(base)) schedule(static)
        for (size_t k = 0; k < n_sub; ++k) set_jerk_one(p, k, index, jerk);
    } else {   /* serial below the threshold: base_params.h says why */
        for (size_t k = 0; k < n_sub; ++k) set_jerk_one(p, k, index, jerk);
    }
    return GP_OK;
}

/* The velocity of stated particle i predicted to time tp. */
static inline void velocity_at(const gp_particles *p, size_t i, double tp, double out[3])
{
    double dt = tp - p->t[i];
    const double *v = &p->vel[3 * i], *a = &p->acc[3 * i];
    if (p->third && p->third[i]) {
        const double *j = &p->jerk[3 * i];
        for (int d = 0; d < 3; ++d) out[d] = gp_predict_vel3(v[d], a[d], j[d], dt);
    } else {
        for (int d = 0; d < 3; ++d) out[d] = gp_predict_vel2(v[d], a[d], dt);
    }
}

void gp_state_velocity(const gp_particles *p, size_t i, double out[3])
{
    if (!p->stated || !p->stated[i]) {
        out[0] = out[1] = out[2] = 0.0;
        return;
    }
    if (p->stated[i] == 1) {                  /* at its own time */
        memcpy(out, &p->vel[3 * i], 3 * sizeof *out);
        return;
    }
    velocity_at(p, i, p->t_pred, out);
}

gp_status gp_velocities_get(gp_base *base, size_t n_sub, const uint32_t *index, double *vel)
{
    gp_status st = gp_check_subset(base, "get_velocities", n_sub, index);
    if (st != GP_OK || n_sub == 0) return st;
    if (!vel)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "get_velocities was given a NULL vel array; pass room for 3*%zu "
                       "doubles", n_sub);
    const gp_particles *p = &base->p;
    if (n_sub > SUBSET_PAR_MIN) {
#pragma omp parallel for num_threads(gp_param_threads(base)) schedule(static)
        for (size_t k = 0; k < n_sub; ++k)
            gp_state_velocity(p, index ? (size_t)index[k] : k, &vel[3 * k]);
    } else {   /* serial below the threshold: base_params.h says why */
        for (size_t k = 0; k < n_sub; ++k)
            gp_state_velocity(p, index ? (size_t)index[k] : k, &vel[3 * k]);
    }
    return GP_OK;
}

/* pos of particle i predicted to time tp from its state. */
static inline void predict_one(const gp_particles *p, size_t i, double tp, double out[3])
{
    double dt = tp - p->t[i];
    if (p->third && p->third[i]) {
        for (int d = 0; d < 3; ++d)
            out[d] = gp_predict_coord3(p->x0[3 * i + d], p->vel[3 * i + d], p->acc[3 * i + d],
                                       p->jerk[3 * i + d], dt);
        return;
    }
    for (int d = 0; d < 3; ++d)
        out[d] = gp_predict_coord(p->x0[3 * i + d], p->vel[3 * i + d], p->acc[3 * i + d], dt);
}

void gp_state_position_at(const gp_particles *p, size_t i, double tp, double out[3])
{
    if (p->stated && p->stated[i]) predict_one(p, i, tp, out);
    else memcpy(out, &p->pos[3 * i], 3 * sizeof *out);
}

void gp_state_velocity_at(const gp_particles *p, size_t i, double tp, double out[3])
{
    if (p->stated && p->stated[i]) velocity_at(p, i, tp, out);
    else out[0] = out[1] = out[2] = 0.0;
}

/* Predictions of all n particles run on the threads from this many, and
 * serially below it (base_params.h). */
enum { PREDICT_PAR_MIN = 32768 };

/* Particle i of an all-second-order set predicted to t into pos; returns
 * whether its position or velocity there overflows. */
static inline int plain_one(const double *x0, const double *v, const double *a, const double *tt,
                            double *pos, double t, long long i)
{
    double dt = t - tt[i];
    int bad = 0;
    for (int d = 0; d < 3; ++d) {
        double y = gp_predict_coord(x0[3 * i + d], v[3 * i + d], a[3 * i + d], dt);
        double w = gp_predict_vel2(v[3 * i + d], a[3 * i + d], dt);
        pos[3 * i + d] = y;
        bad |= !(fabs(y) <= DBL_MAX) | !(fabs(w) <= DBL_MAX);
    }
    return bad;
}

/* Particle i of any mix predicted to t (unstated ones left); returns
 * whether it overflows. */
static inline int mixed_one(gp_particles *p, double t, long long i)
{
    if (!p->stated[i]) return 0;
    double x[3], w[3];
    predict_one(p, (size_t)i, t, x);
    velocity_at(p, (size_t)i, t, w);
    p->pos[3 * i] = x[0];
    p->pos[3 * i + 1] = x[1];
    p->pos[3 * i + 2] = x[2];
    return !isfinite(x[0]) | !isfinite(x[1]) | !isfinite(x[2]) | !isfinite(w[0]) |
           !isfinite(w[1]) | !isfinite(w[2]);
}

/* Particle i's position back to x0 (stated 1) or its prediction to tp
 * (stated 2). */
static inline void undo_one(gp_particles *p, double tp, long long i)
{
    if (p->stated[i] == 1) memcpy(&p->pos[3 * i], &p->x0[3 * i], 3 * sizeof(double));
    else if (p->stated[i] == 2) predict_one(p, (size_t)i, tp, &p->pos[3 * i]);
}

/* Every particle with a second-order state (a block step's usual case):
 * one pass without branches, which the compiler vectorises;
 * gp_predict_coord as in predict_one, so the same bits. Returns
 * whether a position or velocity overflowed. */
static int predict_plain(gp_particles *p, double t, int nthreads)
{
    const long long n = (long long)p->n;
    const double *x0 = p->x0, *v = p->vel, *a = p->acc, *tt = p->t;
    double *pos = p->pos;
    int bad = 0;
    if (n > PREDICT_PAR_MIN) {
#pragma omp parallel for num_threads(nthreads) schedule(static) reduction(| : bad)
        for (long long i = 0; i < n; ++i) bad |= plain_one(x0, v, a, tt, pos, t, i);
    } else {
        for (long long i = 0; i < n; ++i) bad |= plain_one(x0, v, a, tt, pos, t, i);
    }
    if (!bad) memset(p->stated, 2, p->n);
    return bad;
}

/* Any mix of states: predict the stated particles, then (after the
 * reduction's barrier, when every thread sees `bad`) mark them predicted. */
static int predict_mixed(gp_particles *p, double t, int nthreads)
{
    const long long n = (long long)p->n;
    int bad = 0;
    if (n > PREDICT_PAR_MIN) {
#pragma omp parallel num_threads(nthreads)
        {
#pragma omp for schedule(static) reduction(| : bad)
            for (long long i = 0; i < n; ++i) bad |= mixed_one(p, t, i);
#pragma omp for schedule(static)
            for (long long i = 0; i < n; ++i)
                if (!bad && p->stated[i]) p->stated[i] = 2;
        }
    } else {
        for (long long i = 0; i < n; ++i) bad |= mixed_one(p, t, i);
        for (long long i = 0; i < n; ++i)
            if (!bad && p->stated[i]) p->stated[i] = 2;
    }
    return bad;
}

/* The first stated particle whose position or velocity at t overflows
 * (after predict found one), and which of the two. */
static size_t first_overflow(const gp_particles *p, double t, const char **what)
{
    for (size_t i = 0; i < p->n; ++i) {
        if (!p->stated[i]) continue;
        double x[3], w[3];
        predict_one(p, i, t, x);
        velocity_at(p, i, t, w);
        int xb = !isfinite(x[0]) || !isfinite(x[1]) || !isfinite(x[2]);
        if (xb || !isfinite(w[0]) || !isfinite(w[1]) || !isfinite(w[2])) {
            *what = xb ? "position" : "velocity";
            return i;
        }
    }
    *what = "state";
    return 0;
}

/* After an overflow, each position back to what it was: x0 (stated 1) or
 * the prediction to tp (stated 2), both re-evaluated bit for bit. */
static void predict_undo(gp_particles *p, double tp, int nthreads)
{
    const long long n = (long long)p->n;
    if (n > PREDICT_PAR_MIN) {
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (long long i = 0; i < n; ++i) undo_one(p, tp, i);
    } else {
        for (long long i = 0; i < n; ++i) undo_one(p, tp, i);
    }
}

void gp_state_unpredict(gp_base *base, const uint8_t *was, double t_was)
{
    gp_particles *p = &base->p;
    if (!p->have || !p->n_stated) return;
    if (was != p->stated) memcpy(p->stated, was, p->n);
    p->t_pred = t_was;
    predict_undo(p, t_was, gp_param_threads(base));
}

gp_status gp_state_predict(gp_base *base, double t, size_t *moved)
{
    if (moved) *moved = 0;
    gp_status st = gp_need_particles(base, "predict");
    if (st != GP_OK) return st;
    if (!isfinite(t))
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "predict was given a time that is %s; pass a finite time",
                       isnan(t) ? "NaN" : "infinite");
    gp_particles *p = &base->p;
    if (p->n_stated == 0) return GP_OK;
    const int nthreads = gp_param_threads(base);
    int bad = p->n_stated == p->n && !p->third ? predict_plain(p, t, nthreads)
                                                : predict_mixed(p, t, nthreads);
    if (bad) {
        const char *what;
        size_t i = first_overflow(p, t, &what);
        predict_undo(p, p->t_pred, nthreads);
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "predict: predicting to t = %.17g overflows the %s of particle %zu (a "
                       "time far from the particles' own times, or huge velocities "
                       "or accelerations); nothing was moved", t, what, i);
    }
    p->t_pred = t;
    if (moved) *moved = p->n_stated;
    return GP_OK;
}

gp_status gp_positions_check(gp_base *base, size_t n_sub, const uint32_t *index,
                             const double *pos)
{
    gp_status st = gp_check_subset(base, "get_positions", n_sub, index);
    if (st != GP_OK || n_sub == 0 || pos) return st;
    return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                   "get_positions was given a NULL pos array; pass room for 3*%zu "
                   "doubles", n_sub);
}

gp_status gp_positions_get(gp_base *base, size_t n_sub, const uint32_t *index, double *pos)
{
    gp_status st = gp_positions_check(base, n_sub, index, pos);
    if (st != GP_OK || n_sub == 0) return st;
    const gp_particles *p = &base->p;
    if (!index) {
        memcpy(pos, p->pos, 3 * n_sub * sizeof *pos);
        return GP_OK;
    }
    if (n_sub > SUBSET_PAR_MIN) {
#pragma omp parallel for num_threads(gp_param_threads(base)) schedule(static)
        for (size_t k = 0; k < n_sub; ++k)
            memcpy(&pos[3 * k], &p->pos[3 * (size_t)index[k]], 3 * sizeof *pos);
    } else {   /* serial below the threshold: base_params.h says why */
        for (size_t k = 0; k < n_sub; ++k)
            memcpy(&pos[3 * k], &p->pos[3 * (size_t)index[k]], 3 * sizeof *pos);
    }
    return GP_OK;
}

gp_status gp_masses_check(gp_base *base, size_t n_sub, const uint32_t *index,
                          const double *mass)
{
    static const char fn[] = "update_masses";
    gp_status st = gp_check_subset(base, fn, n_sub, index);
    if (st != GP_OK || n_sub == 0) return st;
    if (!mass)
        return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                       "update_masses was given a NULL mass array; pass %zu masses", n_sub);
    for (size_t k = 0; k < n_sub; ++k) {
        if (!isfinite(mass[k]))
            return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                           "update_masses: mass[%zu] is %s; masses must be finite and >= 0",
                           k, isnan(mass[k]) ? "NaN" : "infinite");
        if (mass[k] < 0)
            return gp_fail(base, GP_ERR_INVALID_ARGUMENT,
                           "update_masses: mass[%zu] is negative (%g); masses must be "
                           ">= 0 (0 makes a massless test particle)", k, mass[k]);
    }
    return GP_OK;
}

gp_status gp_masses_update(gp_base *base, size_t n_sub, const uint32_t *index,
                           const double *mass)
{
    gp_status st = gp_masses_check(base, n_sub, index, mass);
    if (st != GP_OK || n_sub == 0) return st;
    double *m = base->p.mass;
    for (size_t k = 0; k < n_sub; ++k) m[index ? (size_t)index[k] : k] = mass[k];
    return GP_OK;
}

void gp_state_clear(gp_base *base)
{
    gp_particles *p = &base->p;
    if (p->stated && p->n_stated) memset(p->stated, 0, p->n);
    if (p->third) memset(p->third, 0, p->n);
    p->n_stated = 0;
}
