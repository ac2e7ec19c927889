/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_core.c — the bottom of the integrators: what every other file of
 * integrators/ needs from a gp_sim and nothing above it. Failure with a
 * sentence, the "is there a solver" check, the softening a time-step
 * criterion uses, and the prediction of every particle to the current
 * time. The struct itself and the reductions over processes are in
 * sim_core.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_core.h"

#include <omp.h>

#include "gravplug_params.h"

gp_status gp_sim_fail(gp_sim *sim, gp_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sim->err, sizeof sim->err, fmt, ap);
    va_end(ap);
    sim->failed_elsewhere = 0;
    return st;
}

gp_status gp_sim_agree(gp_sim *sim, gp_status st, const char *not_done)
{
    if (!gp_sim_global_max(sim, st != GP_OK) || st != GP_OK) return st;
    st = gp_sim_fail(sim, GP_ERR_BAD_STATE, "%s: another process sharing the solver failed first (its own "
                     "message says why)", not_done);
    sim->failed_elsewhere = 1;
    return st;
}

gp_status gp_sim_need_solver(gp_sim *sim)
{
    if (!sim->api || !sim->solver)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE,
                           "no gravity solver: open one with gp_sim_open_solver (e.g. \"auto\") first");
    return GP_OK;
}

gp_status gp_sim_need_particles(gp_sim *sim)
{
    if (sim->n == 0)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE, "no particles yet: call gp_sim_set_particles first");
    return GP_OK;
}

gp_status gp_sim_solver_refused(gp_sim *sim, gp_status st, const char *what)
{
    return gp_sim_fail(sim, st, "the %s solver refused %s: %s", sim->solver_name, what,
                       sim->api->last_error(sim->solver));
}

uint64_t gp_sim_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int gp_sim_threads_begin(const gp_sim *sim)
{
    int t;
    if (!sim || !sim->api || !sim->solver || !gp_params_threads(sim->api, sim->solver, &t)) return 0;
    const int prev = omp_get_max_threads();
    if (t == prev) return 0;
    omp_set_num_threads(t);
    return prev;
}

void gp_sim_threads_end(int saved)
{
    if (saved > 0) omp_set_num_threads(saved);
}

/* Predicted state at sim->time (second order in position, as the block
 * integrator predicts j-particles; first order in velocity). */
void gp_sim_predict_state(const gp_sim *sim, double *pos, double *vel)
{
    if (sim->started && sim->integ->predict) {
        sim->integ->predict(sim, pos, vel);
        return;
    }
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long i = 0; i < n; ++i) {
        double dt = 0.0;
        if (sim->started && sim->lv.t_last[i] != sim->lv.now)
            dt = sim->time - gp_levels_time(&sim->lv, sim->lv.t_last[i]);
        for (int k = 0; k < 3; ++k) {
            double x = sim->pos[3 * i + k], v = sim->vel[3 * i + k], a = sim->acc[3 * i + k];
            /* synchronised particles as stored, others as the integrator predicts */
            if (pos) pos[3 * i + k] = dt == 0.0 ? x : gp_predict_coord(x, v, a, dt);
            if (vel) vel[3 * i + k] = dt == 0.0 ? v : gp_predict_vel2(v, a, dt);
        }
    }
}

/* Whether every particle is at sim->time (a block scheme between block
 * steps is not; gp_sim.h). */
GRAVPLUG_EXPORT int gp_sim_synchronised(const gp_sim *sim)
{
    if (!sim || !sim->started) return 1;
    const long long n = (long long)sim->n;
    int behind = 0;
#pragma omp parallel for schedule(static) reduction(| : behind) if (n > GP_PAR_SCAN_MIN)
    for (long long i = 0; i < n; ++i) behind |= sim->lv.t_last[i] != sim->lv.now;
    return !behind;
}

void gp_sim_predict_all(const gp_sim *sim, double t, const double *acc, const double *jerk,
                        double *out)
{
    const gp_levels *lv = &sim->lv;
    const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > GP_PAR_ALL_MIN)
    for (long long j = 0; j < n; ++j) {
        double dt = t - gp_levels_time(lv, lv->t_last[j]);
        for (int k = 0; k < 3; ++k) {
            size_t q = 3 * (size_t)j + (size_t)k;
            double a = acc ? acc[q] : 0.0;
            out[q] = jerk ? gp_predict_coord3(sim->pos[q], sim->vel[q], a, jerk[q], dt)
                          : gp_predict_coord(sim->pos[q], sim->vel[q], a, dt);
        }
    }
}

/* One pass over an open-addressing table of the indices seen so far
 * (index + 1 in 32 bits, as the ABI's subsets index particles; 0 is
 * empty), at most half full, 8-16 bytes a particle while it runs: a
 * migration checks every rank's ids, and a sort of them cost several
 * times more (bench/results/mpi-tree/raw/mpi-tree.md, "duplicate ids"). */
int gp_sim_find_duplicate_id(const uint64_t *ids, size_t n, size_t *a, size_t *b)
{
    if (!ids || n < 2) return 0;
    if (n > UINT32_MAX) return -1;   /* more than set_particles takes */
    int bits = 4;
    while (((size_t)1 << bits) < 2 * n) bits++;
    const size_t mask = ((size_t)1 << bits) - 1;
    uint32_t *slot = calloc(mask + 1, sizeof *slot);
    if (!slot) return -1;
    for (size_t j = 0; j < n; j++) {
        /* Fibonacci hashing: the top bits of id * 2^64 / phi spread
         * consecutive and strided ids alike */
        size_t k = (size_t)((ids[j] * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
        for (; slot[k]; k = (k + 1) & mask) {
            size_t i = slot[k] - 1;
            if (ids[i] == ids[j]) {
                free(slot);
                *a = i;
                *b = j;
                return 1;
            }
        }
        slot[k] = (uint32_t)(j + 1);
    }
    free(slot);
    return 0;
}
