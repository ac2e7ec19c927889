/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_ex.c — ABI 1.3's exact pass (gp_exact_ex, plugin_base.h): every
 * gp_outputs member for a list of targets, particles or explicit points,
 * by a sum over the sources one by one, with the source groups, the
 * excluded particle and the source subset applied per pair. cpu-direct's
 * and cuda-direct's groups, even steps and points (exact there), and the
 * tree plugins' (exact: never above their pruned searches' bounds) share
 * it. Compiled with -ffp-contract=off, so the pair steps have
 * base/pair_step.h's bits.
 */
#include "base/base_instance.h"
#include "base/base_outputs.h"
#include "base/base_params.h"
#include "base/base_particles.h"
#include "base/base_state.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "base/pair_step.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* What one target asks of every source. */
typedef struct ask {
    const gp_outputs *o;
    int forces, lists;
} ask;

/* Target k over the sources sj[0..ns) (ascending, massive). With lst
 * NULL: the outputs, and *count gets the length of its list; else its
 * list into lst. */
static void one_target(const gp_base *b, const gp_exact_sources *src, const double *spos,
                       const double *svel, const gp_exact_targets *tg, size_t k,
                       const uint32_t *sj, size_t ns, const ask *q, uint32_t *lst,
                       size_t *count)
{
    const gp_particles *p = &b->p;
    const gp_outputs *o = q->o;
    const uint32_t self = tg->self ? tg->self[k] : UINT32_MAX;
    const uint32_t gi = gp_group_of(p->group, self);
    const double *xi = &tg->pos[3 * k];
    const double *vi = tg->vel ? &tg->vel[3 * k] : NULL;
    const double mi = self != UINT32_MAX ? p->mass[self] : 0.0, eps2 = src->eps2, G = src->G;
    const int jerk = o->jerk && q->forces;
    const double rad2 = o->nb_radius ? o->nb_radius[k] * o->nb_radius[k] : -1.0;
    double ax = 0, ay = 0, az = 0, ph = 0, jx = 0, jy = 0, jz = 0;
    double nd = HUGE_VAL, step = HUGE_VAL, even = HUGE_VAL;
    uint32_t nn = UINT32_MAX;
    size_t c = 0;
    for (size_t s = 0; s < ns; ++s) {
        const uint32_t j = sj[s];
        if (j == self || gp_group_skips(p->group, gi, j)) continue;
        const double *xj = &spos[3 * (size_t)j];
        double dx = xj[0] - xi[0], dy = xj[1] - xi[1], dz = xj[2] - xi[2];
        double d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;
        double dvx = 0, dvy = 0, dvz = 0;
        if (vi) {
            const double *vj = &svel[3 * (size_t)j];
            dvx = vj[0] - vi[0]; dvy = vj[1] - vi[1]; dvz = vj[2] - vi[2];
        }
        if (lst) {
            double Gmu = G * (mi + p->mass[j]);
            if (d2 < rad2 ||
                (o->nb_step > 0 && gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu) < o->nb_step) ||
                (o->nb_step_even > 0 &&
                 gp_pair_step_even(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu) < o->nb_step_even))
                lst[c++] = j;
            continue;
        }
        if (q->forces && r2 > 0) {
            double rinv = 1.0 / sqrt(r2), mr = p->mass[j] * rinv, mr3 = mr * rinv * rinv;
            ax += mr3 * dx; ay += mr3 * dy; az += mr3 * dz;
            ph -= mr;
            if (jerk) {
                double rv3 = 3.0 * (dx * dvx + dy * dvy + dz * dvz) * rinv * rinv;
                jx += mr3 * (dvx - rv3 * dx);
                jy += mr3 * (dvy - rv3 * dy);
                jz += mr3 * (dvz - rv3 * dz);
            }
        }
        if (d2 < nd) { nd = d2; nn = j; }
        if (o->pair_step || o->pair_step_even || q->lists) {
            double Gmu = G * (mi + p->mass[j]);
            double tau = o->pair_step || o->nb_step > 0
                       ? gp_pair_step(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu) : HUGE_VAL;
            double tev = o->pair_step_even || o->nb_step_even > 0
                       ? gp_pair_step_even(dx, dy, dz, dvx, dvy, dvz, eps2, Gmu) : HUGE_VAL;
            if (tau < step) step = tau;
            if (tev < even) even = tev;
            c += d2 < rad2 || (o->nb_step > 0 && tau < o->nb_step) ||
                 (o->nb_step_even > 0 && tev < o->nb_step_even);
        }
    }
    if (lst) return;
    *count = c;
    if (q->forces) {
        o->acc[3 * k] = G * ax; o->acc[3 * k + 1] = G * ay; o->acc[3 * k + 2] = G * az;
        if (o->pot) o->pot[k] = G * ph;
        if (jerk) { o->jerk[3 * k] = G * jx; o->jerk[3 * k + 1] = G * jy; o->jerk[3 * k + 2] = G * jz; }
    }
    if (o->nn_index) o->nn_index[k] = nn;
    if (o->nn_dist2) o->nn_dist2[k] = nd;
    if (o->pair_step) o->pair_step[k] = step;
    if (o->pair_step_even) o->pair_step_even[k] = even;
}

gp_status gp_exact_ex(gp_base *b, const gp_exact_sources *src, const gp_exact_targets *tg,
                      const gp_outputs *o, int forces, const char *fn)
{
    const gp_particles *p = &b->p;
    const size_t n = p->n, m = tg->n;
    const int lists = o->nb_radius || o->nb_step > 0 || o->nb_step_even > 0;
    const int need_vel = (o->jerk && forces) || o->pair_step || o->pair_step_even ||
                         o->nb_step > 0 || o->nb_step_even > 0;
    /* the sources, ascending: massive members of the subset */
    uint32_t *sj = malloc((p->n_src ? p->n_src : 1) * sizeof *sj);
    double *held = need_vel && !src->vel ? malloc(3 * (n ? n : 1) * sizeof *held) : NULL;
    size_t *cnt = lists ? malloc((m ? m : 1) * sizeof *cnt) : NULL;
    if (!sj || (need_vel && !src->vel && !held) || (lists && !cnt)) {
        free(sj); free(held); free(cnt);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the exact pass over %zu sources; free memory or use "
                       "fewer particles", fn, p->n_src);
    }
    size_t ns = 0;
    for (size_t k = 0; k < p->n_src; ++k) {
        size_t j = gp_source_index(b, k);
        if (p->mass[j] > 0) sj[ns++] = (uint32_t)j;
    }
    if (p->src) qsort(sj, ns, sizeof *sj, cmp_u32);
    if (held)
        for (size_t i = 0; i < n; ++i) gp_state_velocity(p, i, &held[3 * i]);
    const double *spos = src->pos ? src->pos : p->pos;
    const double *svel = src->vel ? src->vel : held;
    gp_exact_targets t = *tg;
    if (!need_vel) t.vel = NULL;
    const ask q = { o, forces, lists };
    const int nt = gp_threads_for(src->nthreads > 0 ? src->nthreads : omp_get_max_threads(), m, m * ns);
    const long long mm = (long long)m;
    if (nt > 1) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
        for (long long kk = 0; kk < mm; ++kk) {
            size_t c = 0;
            one_target(b, src, spos, svel, &t, (size_t)kk, sj, ns, &q, NULL, &c);
            if (lists) cnt[kk] = c;
        }
    } else {   /* serial below the threshold: base_params.h says why */
        for (long long kk = 0; kk < mm; ++kk) {
            size_t c = 0;
            one_target(b, src, spos, svel, &t, (size_t)kk, sj, ns, &q, NULL, &c);
            if (lists) cnt[kk] = c;
        }
    }
    b->stats.pp_interactions += (uint64_t)m * ns;
    if (!lists) {
        free(sj); free(held);
        gp_neighbours_forget(b);
        return GP_OK;
    }
    uint64_t *offset = malloc((m + 1) * sizeof *offset);
    uint32_t *list = NULL;
    if (offset) {
        offset[0] = 0;
        for (size_t k = 0; k < m; ++k) offset[k + 1] = offset[k] + cnt[k];
        list = malloc((offset[m] ? offset[m] : 1) * sizeof *list);
    }
    if (!offset || !list) {
        free(sj); free(held); free(cnt); free(offset); free(list);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for the neighbour lists; ask for fewer (a smaller "
                       "nb_radius, nb_step or nb_step_even)", fn);
    }
    if (nt > 1) {
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
        for (long long kk = 0; kk < mm; ++kk)
            one_target(b, src, spos, svel, &t, (size_t)kk, sj, ns, &q, list + offset[kk], NULL);
    } else {
        for (long long kk = 0; kk < mm; ++kk)
            one_target(b, src, spos, svel, &t, (size_t)kk, sj, ns, &q, list + offset[kk], NULL);
    }
    free(sj); free(held); free(cnt);
    gp_neighbours_keep(b, m, offset, list);
    return GP_OK;
}

gp_status gp_exact_active(gp_base *b, const gp_exact_sources *src, const gp_outputs *o,
                          int forces, const char *fn)
{
    const gp_particles *p = &b->p;
    const size_t m = p->n_active;
    const double *spos = src->pos ? src->pos : p->pos;
    double *x = malloc(6 * (m ? m : 1) * sizeof *x);
    uint32_t *self = malloc((m ? m : 1) * sizeof *self);
    if (!x || !self) {
        free(x); free(self);
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "%s: no memory for %zu targets of the exact pass; free memory", fn, m);
    }
    double *v = x + 3 * m;
    for (size_t k = 0; k < m; ++k) {
        size_t i = gp_active_index(b, k);
        self[k] = (uint32_t)i;
        memcpy(&x[3 * k], &spos[3 * i], 3 * sizeof *x);
        if (src->vel) memcpy(&v[3 * k], &src->vel[3 * i], 3 * sizeof *v);
        else gp_state_velocity(p, i, &v[3 * k]);
    }
    const gp_exact_targets tg = { m, x, v, self };
    gp_status st = gp_exact_ex(b, src, &tg, o, forces, fn);
    free(x); free(self);
    return st;
}

gp_status gp_forces_ex_13(gp_solver *s, gp_base *b, gp_forces_12_fn forces_12,
                          const gp_exact_sources *src, const gp_outputs *out)
{
    static const char fn[] = "compute_forces_ex";
    const int grouped = b->p.group != NULL;
    gp_status st;
    if (!grouped) {
        gp_outputs f;
        memset(&f, 0, sizeof f);
        f.struct_size = sizeof f;
        f.acc = out->acc;
        f.pot = out->pot;
        f.jerk = out->jerk;
        if ((st = forces_12(s, &f)) != GP_OK) return st;
    }
    double t0 = gp_wtime();
    st = gp_exact_active(b, src, out, grouped, fn);
    b->stats.seconds_walk += gp_wtime() - t0;
    if (st != GP_OK || !grouped) return st;
    b->stats.force_calls++;
    return gp_check_outputs(b, fn, b->p.n_active, out->acc, out->pot);
}

gp_status gp_field_ex_exact(gp_base *b, const gp_exact_sources *src, size_t n,
                            const double *pos, const double *vel, const uint32_t *exclude,
                            const gp_outputs *out)
{
    static const char fn[] = "compute_field_ex";
    gp_status st = gp_check_field_ex(b, n, pos, vel, exclude, out);
    if (st != GP_OK) return st;
    gp_outputs o = gp_outputs_read(out);
    const gp_exact_targets tg = { n, pos, vel, exclude };
    double t0 = gp_wtime();
    st = gp_exact_ex(b, src, &tg, &o, 1, fn);
    b->stats.seconds_walk += gp_wtime() - t0;
    if (st != GP_OK) return st;
    b->stats.field_calls++;
    return gp_check_outputs(b, fn, n, o.acc, o.pot);
}

gp_status gp_exact_fetch(gp_solver *s, gp_base *b, gp_get_fn get_pos, gp_get_fn get_vel,
                         gp_exact_sources *src, double **buf)
{
    const size_t n = b->p.n;
    double *x = malloc(6 * (n ? n : 1) * sizeof *x);
    *buf = x;
    if (!x)
        return gp_fail(b, GP_ERR_OUT_OF_MEMORY,
                       "no memory for host copies of %zu particles' positions and velocities "
                       "(the exact pass of groups, even steps and points); free memory", n);
    gp_status st = get_pos(s, n, NULL, x);
    if (st == GP_OK) st = get_vel(s, n, NULL, x + 3 * n);
    if (st != GP_OK) {
        free(x);
        *buf = NULL;
        return st;
    }
    src->pos = x;
    src->vel = x + 3 * n;
    return GP_OK;
}
