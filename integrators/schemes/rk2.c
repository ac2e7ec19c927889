/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rk2.c — GOTHIC's second-order predictor-corrector (Miki & Umemura 2017,
 * section 2.7) with one shared fixed step: the reference that block-rk2 is
 * compared with. Per step:
 *     x' = x + dt v + dt^2/2 a,   a' = a(x'),   v' = v + dt/2 (a + a').
 * One force call per step. (With a shared step it equals leapfrog
 * algebraically; the rounding differs.)
 */
#include "shared_step.h"
#include "solver/force.h"

static gp_status step(gp_sim *sim, double t_end)
{
    int partial;
    double dt = gp_shared_step_dt(sim, t_end, &partial);
    size_t m = 3 * sim->n;
    double *x = sim->pos, *v = sim->vel, *a = sim->acc, *anew = sim->work2;
    for (size_t k = 0; k < m; ++k) x[k] = gp_predict_coord(x[k], v[k], a[k], dt); /* as block-rk2 */
    gp_status st = gp_force_all(sim, x, anew, NULL);
    if (st != GP_OK) return st;
    for (size_t k = 0; k < m; ++k) {
        v[k] += 0.5 * dt * (a[k] + anew[k]);
        a[k] = anew[k];
    }
    return gp_shared_step_done(sim, t_end, partial);
}

const gp_integrator_def gp_scheme_rk2 =
    GP_SHARED_STEP_SCHEME("rk2",
                          "GOTHIC's 2nd-order predictor-corrector, shared fixed step dt",
                          .flags = GP_SCHEME_MPI | GP_SCHEME_BACKWARD | GP_SCHEME_TIME_SYMMETRIC, .start = gp_shared_step_start, .step = step);
