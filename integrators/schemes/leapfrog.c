/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leapfrog.c — kick-drift-kick leapfrog, one shared fixed step (symplectic,
 * second order). One force call per step: the acceleration at the end of a
 * step is the first kick of the next.
 */
#include "shared_step.h"
#include "solver/force.h"

static gp_status step(gp_sim *sim, double t_end)
{
    int partial;
    double dt = gp_shared_step_dt(sim, t_end, &partial);
    size_t m = 3 * sim->n;
    double *x = sim->pos, *v = sim->vel, *a = sim->acc;
    for (size_t k = 0; k < m; ++k) {
        v[k] += 0.5 * dt * a[k];
        x[k] += dt * v[k];
    }
    gp_status st = gp_force_all(sim, x, a, NULL);
    if (st != GP_OK) return st;   /* state is half-stepped: the run is over */
    for (size_t k = 0; k < m; ++k) v[k] += 0.5 * dt * a[k];
    return gp_shared_step_done(sim, t_end, partial);
}

const gp_integrator_def gp_scheme_leapfrog =
    GP_SHARED_STEP_SCHEME("leapfrog",
                          "kick-drift-kick leapfrog, shared fixed step dt (symplectic, 2nd order)",
                          .flags = GP_SCHEME_MPI | GP_SCHEME_BACKWARD | GP_SCHEME_TIME_SYMMETRIC, .start = gp_shared_step_start, .step = step);
