/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rk4.c — classical fourth-order Runge-Kutta on (x, v), one shared fixed
 * step; four force calls per step (at x, x + dt/2 k1v, x + dt/2 k2v,
 * x + dt k3v). Not symplectic; fourth order.
 */
#include <stdlib.h>

#include "shared_step.h"
#include "solver/force.h"

typedef struct rk4_state { double *k_x, *k_v, *v2; } rk4_state; /* sums, stage velocity */

static void stop(gp_sim *sim)
{
    rk4_state *s = sim->priv;
    if (!s) return;
    free(s->k_x); free(s->k_v); free(s->v2);
    free(s);
    sim->priv = NULL;
}

static gp_status alloc_state(gp_sim *sim, const double *unused)
{
    (void)unused;
    rk4_state *s = calloc(1, sizeof *s);
    sim->priv = s;
    if (s) {
        s->k_x = malloc(3 * sim->n * sizeof(double));
        s->k_v = malloc(3 * sim->n * sizeof(double));
        s->v2 = malloc(3 * sim->n * sizeof(double));
    }
    if (!s || !s->k_x || !s->k_v || !s->v2) {
        stop(sim);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory starting rk4");
    }
    return GP_OK;
}

static gp_status start(gp_sim *sim)
{
    gp_shared_step_anchor(sim);
    return alloc_state(sim, NULL);
}

static gp_status step(gp_sim *sim, double t_end)
{
    int partial;
    double dt = gp_shared_step_dt(sim, t_end, &partial);
    rk4_state *s = sim->priv;
    size_t m = 3 * sim->n;
    double *x = sim->pos, *v = sim->vel, *xs = sim->work, *a = sim->acc;
    double *kx = s->k_x, *kv = s->k_v, *vs = s->v2;
    static const double c[4] = { 0.0, 0.5, 0.5, 1.0 }, w[4] = { 1.0, 2.0, 2.0, 1.0 };
    /* stage 1: (v, a(x)) */
    for (size_t k = 0; k < m; ++k) { xs[k] = x[k]; vs[k] = v[k]; }
    for (int stage = 0; stage < 4; ++stage) {
        if (stage > 0)
            for (size_t k = 0; k < m; ++k) {
                double vprev = vs[k];
                vs[k] = v[k] + c[stage] * dt * a[k];   /* a holds the previous stage's k_v */
                xs[k] = x[k] + c[stage] * dt * vprev;
            }
        gp_status st = gp_force_all(sim, xs, a, NULL);
        if (st != GP_OK) return st;
        for (size_t k = 0; k < m; ++k) {
            if (stage == 0) { kx[k] = 0.0; kv[k] = 0.0; }
            kx[k] += w[stage] * vs[k];
            kv[k] += w[stage] * a[k];
        }
    }
    for (size_t k = 0; k < m; ++k) {
        x[k] += dt / 6.0 * kx[k];
        v[k] += dt / 6.0 * kv[k];
    }
    return gp_shared_step_done(sim, t_end, partial);
}

const gp_integrator_def gp_scheme_rk4 =
    GP_SHARED_STEP_SCHEME("rk4",
                          "classical 4th-order Runge-Kutta, shared fixed step dt (4 force calls a step)",
                          .flags = GP_SCHEME_MPI | GP_SCHEME_BACKWARD, .start = start, .step = step, .stop = stop,
                          .load = alloc_state);
