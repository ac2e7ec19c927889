/* SPDX-License-Identifier: Apache-2.0 */
/*
 * predict_lazy.c — predict owed rather than done (predict_lazy.h).
 *
 * The overflow proof: a stated particle's prediction to t is
 * x + dt v + dt^2/2 a (+ dt^3/6 j) and its velocity v + dt a (+ dt^2/2 j)
 * with |dt| <= max(|t - tmin|, |t - tmax|), so both are bounded by the same
 * sums of the largest magnitudes. Below a quarter of DBL_MAX the rounding of
 * predict's few operations cannot reach infinity. A bound that is itself
 * infinite (absurd times) simply means predict runs now.
 */
#include "base/predict_lazy.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base_particles.h"
#include "base/base_state.h"

void gp_lazy_reset(gp_lazy_predict *z)
{
    z->pending = 0;
    z->have_t = 0;
    z->have_bounds = 0;
    z->xmax = z->vmax = z->amax = z->jmax = 0;
    z->tmin = z->tmax = 0;
    z->nfresh = 0;
}

void gp_lazy_free(gp_lazy_predict *z)
{
    free(z->fresh);
    memset(z, 0, sizeof *z);
}

static double largest(const double *v, size_t count, double m)
{
    for (size_t k = 0; k < count; k++) m = fmax(m, fabs(v[k]));
    return m;
}

gp_status gp_lazy_reserve(gp_lazy_predict *z, gp_base *base, size_t n_sub)
{
    if (!z->pending || z->nfresh + n_sub <= z->cap) return GP_OK;
    size_t cap = z->cap ? 2 * z->cap : 1024;
    while (cap < z->nfresh + n_sub) cap *= 2;
    uint32_t *f = realloc(z->fresh, cap * sizeof *f);
    if (f) {
        z->fresh = f;
        z->cap = cap;
        return GP_OK;
    }
    /* no room for the list: pay the owed predict now, as if it were eager */
    return gp_lazy_settle(z, base);
}

void gp_lazy_note_state(gp_lazy_predict *z, size_t n_sub, const uint32_t *index,
                        const double *pos, const double *vel, const double *acc,
                        const double *jerk, const double *t)
{
    if (n_sub == 0) return;
    z->xmax = largest(pos, 3 * n_sub, z->xmax);
    z->vmax = largest(vel, 3 * n_sub, z->vmax);
    z->amax = largest(acc, 3 * n_sub, z->amax);
    if (jerk) z->jmax = largest(jerk, 3 * n_sub, z->jmax);
    double lo = z->have_bounds ? z->tmin : t[0], hi = z->have_bounds ? z->tmax : t[0];
    for (size_t k = 0; k < n_sub; k++) { lo = fmin(lo, t[k]); hi = fmax(hi, t[k]); }
    z->tmin = lo;
    z->tmax = hi;
    z->have_bounds = 1;
    if (z->pending)   /* room reserved by gp_lazy_reserve */
        for (size_t k = 0; k < n_sub; k++) z->fresh[z->nfresh + k] = index ? index[k] : (uint32_t)k;
    z->nfresh += n_sub;
}

int gp_lazy_safe_to_defer(const gp_lazy_predict *z, double t)
{
    if (!isfinite(t)) return 0;
    if (!z->have_bounds) return 1;   /* nothing stated: nothing moves */
    double dt = fmax(fabs(t - z->tmin), fabs(t - z->tmax));
    double h = 0.5 * dt * dt, c = dt * dt * dt / 6.0;
    double x = z->xmax + dt * z->vmax + h * z->amax + c * z->jmax;
    double v = z->vmax + dt * z->amax + h * z->jmax;
    const double limit = 0.25 * DBL_MAX;
    return x < limit && v < limit;
}

gp_status gp_lazy_predict_to(gp_lazy_predict *z, gp_base *base, double t, int allow)
{
    gp_status st = gp_need_particles(base, "predict");
    if (st != GP_OK) return st;
    const int defer = allow && gp_lazy_safe_to_defer(z, t);
    z->pending = 0;
    if (!defer && (st = gp_state_predict(base, t, NULL)) != GP_OK) return st;
    gp_lazy_predicted(z, t);
    z->pending = defer;
    return GP_OK;
}

void gp_lazy_predicted(gp_lazy_predict *z, double t)
{
    z->pending = 0;
    z->t = t;
    z->have_t = 1;
    z->nfresh = 0;
}

gp_status gp_lazy_settle(gp_lazy_predict *z, gp_base *base)
{
    if (!z->pending) return GP_OK;
    gp_particles *p = &base->p;
    /* the particles stated since keep their given position (x0) and mark */
    gp_status st = gp_state_predict(base, z->t, NULL);
    if (st != GP_OK) return st;   /* cannot happen: the bounds proved it safe */
    for (size_t k = 0; k < z->nfresh; k++) {
        size_t i = z->fresh[k];
        memcpy(&p->pos[3 * i], &p->x0[3 * i], 3 * sizeof(double));
        p->stated[i] = 1;
    }
    z->pending = 0;
    return GP_OK;
}

gp_status gp_lazy_positions(gp_lazy_predict *z, gp_base *base, size_t n_sub,
                            const uint32_t *index, double *pos)
{
    if (!z->pending || z->nfresh) {
        gp_status st = gp_lazy_settle(z, base);
        if (st != GP_OK) return st;
        return gp_positions_get(base, n_sub, index, pos);
    }
    gp_status st = gp_positions_check(base, n_sub, index, pos);
    if (st != GP_OK || n_sub == 0) return st;
    const gp_particles *p = &base->p;
    for (size_t k = 0; k < n_sub; ++k)
        gp_state_position_at(p, index ? (size_t)index[k] : k, z->t, &pos[3 * k]);
    return GP_OK;
}
