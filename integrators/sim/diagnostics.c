/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diagnostics.c — what a host measures of a running gp_sim without moving
 * it: energies, momenta, the field at points, counters and the level
 * histogram. Sums are blocked so they give the same bits for any thread
 * count. The particles are predicted to the current time first (the core's
 * gp_sim_predict_state); the potential energy costs one force call, not
 * counted as the integrator's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"
#include "solver/force.h"
#include "solver/solver_cache.h"

/* Sums over the particles, with OpenMP and yet the same bits for any
 * thread count: fixed blocks of SUM_BLOCK particles, each summed in order,
 * then the block sums added in order. terms(sim, i, a, b, acc) adds
 * particle i's terms into acc[0 .. width-1]. */
enum { SUM_BLOCK = 4096 };
typedef void (*sum_terms_fn)(const gp_sim *sim, size_t i, const double *a, const double *b,
                             double *acc);

static gp_status blocked_sums(gp_sim *sim, sum_terms_fn terms, const double *a, const double *b,
                              int width, double *out)
{
    const size_t n = sim->n, nb = (n + SUM_BLOCK - 1) / SUM_BLOCK;
    double *part = calloc(nb * (size_t)width, sizeof *part);
    if (!part) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory summing the diagnostics");
#pragma omp parallel for schedule(static) if (nb > 1)
    for (long long blk = 0; blk < (long long)nb; ++blk) {
        size_t i1 = ((size_t)blk + 1) * SUM_BLOCK < n ? ((size_t)blk + 1) * SUM_BLOCK : n;
        for (size_t i = (size_t)blk * SUM_BLOCK; i < i1; ++i)
            terms(sim, i, a, b, part + (size_t)blk * (size_t)width);
    }
    for (int w = 0; w < width; ++w) out[w] = 0.0;
    for (size_t blk = 0; blk < nb; ++blk)
        for (int w = 0; w < width; ++w) out[w] += part[blk * (size_t)width + (size_t)w];
    free(part);
    return GP_OK;
}

static void kinetic_terms(const gp_sim *sim, size_t i, const double *vel, const double *unused,
                          double *acc)
{
    const double *v = vel + 3 * i;
    acc[0] += 0.5 * sim->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static void potential_terms(const gp_sim *sim, size_t i, const double *pot, const double *unused,
                            double *acc)
{
    acc[0] += sim->mass[i] * pot[i];
}

static void momentum_terms(const gp_sim *sim, size_t i, const double *vel, const double *pos,
                           double *acc)
{
    const double m = sim->mass[i], *x = pos + 3 * i, *v = vel + 3 * i;
    for (int k = 0; k < 3; ++k) { acc[k] += m * v[k]; acc[6 + k] += m * x[k]; }
    acc[3] += m * (x[1] * v[2] - x[2] * v[1]);
    acc[4] += m * (x[2] * v[0] - x[0] * v[2]);
    acc[5] += m * (x[0] * v[1] - x[1] * v[0]);
    acc[9] += m;
}

/* A diagnostic at a solver resync point leaves it one: the integrator's
 * next force call re-sends the particles, so the plugin starts from the
 * same state (a fresh tree, no refit history, no call counted) whether or
 * not a diagnostic ran there, and the trajectory does not depend on the
 * output intervals. */
static void keep_resync(gp_sim *sim, int resync)
{
    if (resync) gp_solver_cache_stale(sim);
}

/* An energy that is not finite: the scale of the masses and velocities
 * overflows double (m v^2, G m^2 / r), or the state itself is no longer
 * finite; a NaN in a log line would pass for a result. */
static gp_status overflow(gp_sim *sim, const char *which, double value)
{
    return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                       "the %s energy is %g at t = %.10g: it overflows a double (the masses, velocities or "
                       "positions are too large for m v^2 or G m^2 / r) or the state is no longer finite; "
                       "give the model in units where they are near 1, such as N-body units (G = M = 1)",
                       which, value, sim->time);
}

static gp_status energies(gp_sim *sim, double *kinetic, double *potential);

GRAVPLUG_EXPORT gp_status gp_sim_energies(gp_sim *sim, double *kinetic, double *potential)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    const int saved = gp_sim_threads_begin(sim);
    gp_status st = energies(sim, kinetic, potential);
    gp_sim_threads_end(saved);
    return st;
}

static gp_status energies(gp_sim *sim, double *kinetic, double *potential)
{
    if (sim->n == 0) return gp_sim_need_particles(sim);
    double *pos = sim->work, *vel = sim->work2;
    gp_sim_predict_state(sim, pos, vel);
    double *acc = NULL, *pot = NULL;
    if (potential) {
        gp_status st = gp_sim_need_solver(sim);
        if (st != GP_OK) return st;
        if (!(sim->api->capabilities & GP_CAP_POTENTIAL))
            return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                               "the %s solver does not compute potentials, so the potential energy is unknown",
                               sim->solver_name);
        acc = malloc(3 * sim->n * sizeof *acc);
        pot = malloc(sim->n * sizeof *pot);
    }
    gp_status st = GP_OK;
    if (potential && (!acc || !pot))
        st = gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory computing the potential energy");
    if (st == GP_OK && kinetic) {
        st = blocked_sums(sim, kinetic_terms, vel, NULL, 1, kinetic);
        if (st == GP_OK && !isfinite(*kinetic)) st = overflow(sim, "kinetic", *kinetic);
    }
    if (potential) st = gp_sim_agree(sim, st, "the potential energy was not computed");
    if (st == GP_OK && potential) {
        uint64_t fc = sim->force_calls, pf = sim->particle_forces, la = sim->last_active;
        const int resync = !sim->solver_fresh;
        st = gp_force_all(sim, pos, acc, pot);
        sim->force_calls = fc; sim->particle_forces = pf; sim->last_active = la;
        keep_resync(sim, resync);
        double w = 0.0;
        if (st == GP_OK) {
            sim->diag_force_calls++;
            st = blocked_sums(sim, potential_terms, pot, NULL, 1, &w);
            *potential = 0.5 * w;
            if (st == GP_OK && !isfinite(*potential)) st = overflow(sim, "potential", *potential);
        }
    }
    free(acc); free(pot);
    return st;
}

GRAVPLUG_EXPORT gp_status gp_sim_momenta(gp_sim *sim, double *p, double *L, double *com)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    double *pos = sim->work, *vel = sim->work2;
    gp_sim_predict_state(sim, pos, vel);
    double S[10];   /* P[3], L[3], C[3] (mass-weighted positions), M */
    gp_status st = blocked_sums(sim, momentum_terms, vel, pos, 10, S);
    if (st != GP_OK) return st;
    const double *P = S, *A = S + 3, *C = S + 6, M = S[9];
    for (int k = 0; k < 3; ++k) {
        if (p) p[k] = P[k];
        if (L) L[k] = A[k];
        if (com) com[k] = M > 0 ? C[k] / M : 0.0;
    }
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_field_at(gp_sim *sim, size_t m, const double *points,
                                          double *acc, double *pot)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_status st = gp_sim_need_solver(sim);
    if (st != GP_OK) return st;
    if (sim->n == 0) return gp_sim_need_particles(sim);
    if (m == 0 || !points)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_field_at needs m >= 1 points");
    double *a = acc ? acc : malloc(3 * m * sizeof *a);
    if (!a) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory");
    /* the solver must hold the current (predicted) positions */
    gp_sim_predict_state(sim, sim->work, NULL);
    const int resync = !sim->solver_fresh;
    st = gp_force_send_positions(sim, sim->work);
    if (st == GP_OK) {
        st = sim->api->compute_field(sim->solver, m, points, a, pot);
        if (st != GP_OK)
            st = gp_sim_fail(sim, st, "the %s solver could not compute the field: %s",
                             sim->solver_name, sim->api->last_error(sim->solver));
    }
    keep_resync(sim, resync);
    if (!acc) free(a);
    return st;
}

GRAVPLUG_EXPORT gp_status gp_sim_counter(const gp_sim *sim, const char *name, uint64_t *value)
{
    if (!sim || !name || !value) return GP_ERR_INVALID_ARGUMENT;
    const struct { const char *name; uint64_t v; } c[] = {
        { "steps", sim->steps }, { "force_calls", sim->force_calls },
        { "particle_forces", sim->particle_forces }, { "diag_force_calls", sim->diag_force_calls },
        { "last_active", sim->last_active }, { "solver_swaps", sim->solver_swaps },
        { "syncs", sim->syncs }, { "state_steps", sim->state_steps },
        { "state_resyncs", sim->state_resyncs }, { "criterion_forces", sim->criterion_forces },
        { "criterion_pairs", sim->criterion_pairs }, { "criterion_calls", sim->criterion_calls },
        { "criterion_cpu_ns", sim->criterion_cpu_ns },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; ++i)
        if (strcmp(c[i].name, name) == 0) { *value = c[i].v; return GP_OK; }
    return GP_ERR_UNKNOWN_PARAMETER;
}

GRAVPLUG_EXPORT gp_status gp_sim_level_counts(const gp_sim *sim, uint64_t *counts,
                                              size_t max_count, size_t *n_levels)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    size_t used = sim->n ? gp_levels_counts(&sim->lv, counts, max_count) : 0;
    if (!sim->n && counts) memset(counts, 0, max_count * sizeof *counts);
    if (n_levels) *n_levels = used;
    return GP_OK;
}
