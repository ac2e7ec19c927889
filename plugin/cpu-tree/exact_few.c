/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exact_few.c — direct summation for a few targets (exact_few.h).
 */
#include "cpu-tree/exact_few.h"

#include <math.h>
#include <stdlib.h>

#include "base/direct_kernel.h"
#include "base/base_instance.h"
#include "base/base_params.h"
#include "base/base_state.h"

/* The massive sources (the subset's, when one is set) in the kernel's
 * form, with their velocities when jerk asks for them. Returns the source
 * count, or (size_t)-1 when out of memory. */
static size_t gather(exact_few_ws *ws, const gp_particles *p, int jerk, gp_direct_sources *s,
                     gp_direct_vel *v)
{
    const size_t ns = p->src ? p->n_src : p->n;
    const size_t w = jerk ? 8 : 5, need = w * (ns ? ns : 1);
    if (need > ws->cap) {
        double *b = realloc(ws->buf, need * sizeof *b);
        if (!b) return (size_t)-1;
        ws->buf = b;
        ws->cap = need;
    }
    double *b = ws->buf;
    *s = (gp_direct_sources){ .x = b, .y = b + ns, .z = b + 2 * ns, .m = b + 3 * ns,
                              .id = b + 4 * ns };
    double *vx = b + 5 * ns, *vy = b + 6 * ns, *vz = b + 7 * ns;
    size_t k = 0;
    for (size_t q = 0; q < ns; q++) {
        size_t j = p->src ? (size_t)p->src[q] : q;
        if (!(p->mass[j] > 0)) continue;
        s->x[k] = p->pos[3 * j]; s->y[k] = p->pos[3 * j + 1]; s->z[k] = p->pos[3 * j + 2];
        s->m[k] = p->mass[j];
        s->id[k] = (double)j;
        if (jerk) {
            double u[3];
            gp_state_velocity(p, j, u);
            vx[k] = u[0]; vy[k] = u[1]; vz[k] = u[2];
        }
        k++;
    }
    s->n = k;
    *v = (gp_direct_vel){ vx, vy, vz };
    return k;
}

/* Target k's sums o (G not applied: acc o[0..2], pot o[3], jerk o[4..6])
 * into the outputs; 1 when one is not finite. */
static int store(double G, const double *o, size_t k, double *acc, double *pot, double *jerk)
{
    int bad = 0;
    for (int d = 0; d < 3; d++) {
        acc[3 * k + d] = G * o[d];
        bad |= !isfinite(acc[3 * k + d]);
        if (jerk) {
            jerk[3 * k + d] = G * o[4 + d];
            bad |= !isfinite(jerk[3 * k + d]);
        }
    }
    if (pot) {
        pot[k] = G * o[3];
        bad |= !isfinite(pot[k]);
    }
    return bad;
}

int exact_few_forces(exact_few_ws *ws, const gp_particles *p, double G, double eps2,
                     int nthreads, double *acc, double *pot, double *jerk, uint64_t *pairs)
{
    *pairs = 0;
    if (p->n_active == 0) return 0;   /* nothing to sum: no gather either */
    gp_direct_sources s;
    gp_direct_vel v;
    size_t ns = gather(ws, p, jerk != NULL, &s, &v);
    if (ns == (size_t)-1) return -1;
    const size_t na = p->n_active;
    *pairs = (uint64_t)na * ns;
    int bad = 0;
#pragma omp parallel for num_threads(gp_threads_for(nthreads, na, ns * na)) schedule(static) \
    reduction(| : bad)
    for (size_t k = 0; k < na; k++) {
        size_t i = p->active ? (size_t)p->active[k] : k;
        const double *x = &p->pos[3 * i];
        double o[7];
        if (jerk) {
            double u[3];
            gp_state_velocity(p, i, u);
            gp_direct_point_jerk(&s, &v, x[0], x[1], x[2], u[0], u[1], u[2], (double)i, eps2, o);
        } else {
            gp_direct_point(&s, x[0], x[1], x[2], (double)i, eps2, o);
        }
        bad |= store(G, o, k, acc, pot, jerk);
    }
    return bad;
}

int exact_few_points(exact_few_ws *ws, const gp_particles *p, const gp_field_points *at, double G,
                     double eps2, int nthreads, double *acc, double *pot, double *jerk,
                     uint32_t *nn_index, double *nn_dist2, uint64_t *pairs)
{
    *pairs = 0;
    if (at->n == 0) return 0;
    gp_direct_sources s;
    gp_direct_vel v;
    size_t ns = gather(ws, p, jerk != NULL, &s, &v);
    if (ns == (size_t)-1) return -1;
    const size_t m = at->n;
    const int nn = nn_index || nn_dist2;
    *pairs = (uint64_t)m * ns;
    int bad = 0;
#pragma omp parallel for num_threads(gp_threads_for(nthreads, m, ns * m)) schedule(static) \
    reduction(| : bad)
    for (size_t k = 0; k < m; k++) {
        const uint32_t ex = at->exclude ? at->exclude[k] : UINT32_MAX;
        const double self = ex == UINT32_MAX ? -1.0 : (double)ex;
        const double *x = &at->pos[3 * k], *u = jerk ? &at->vel[3 * k] : NULL;
        double o[GP_EX_W];
        if (nn) {
            const gp_direct_target tg = { x[0], x[1], x[2], u ? u[0] : 0.0, u ? u[1] : 0.0,
                                          u ? u[2] : 0.0, self, 0.0, G, 0, 0 };
            gp_direct_point_ex(&s, &v, &tg, eps2, jerk != NULL, 0, o, NULL);
            const int none = o[GP_EX_NN_ID] < 0.0;
            if (nn_index) nn_index[k] = none ? UINT32_MAX : (uint32_t)o[GP_EX_NN_ID];
            if (nn_dist2) nn_dist2[k] = none ? HUGE_VAL : o[GP_EX_NN_D2];
        } else if (jerk) {
            gp_direct_point_jerk(&s, &v, x[0], x[1], x[2], u[0], u[1], u[2], self, eps2, o);
        } else {
            gp_direct_point(&s, x[0], x[1], x[2], self, eps2, o);
        }
        bad |= store(G, o, k, acc, pot, jerk);
    }
    return bad;
}

void exact_few_free(exact_few_ws *ws)
{
    free(ws->buf);
    ws->buf = NULL;
    ws->cap = 0;
}
