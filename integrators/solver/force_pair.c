/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_pair.c — pairwise time steps and step graphs through ABI 1.2 (see
 * force_pair.h). One call:
 *
 *   set_particles / update_positions(every position)   as force.c does
 *   set_state(the sources: x, v, a = 0, t)             velocities, O(ns)
 *   set_active_subset, set_source_subset
 *   compute_forces_ex(acc, pair_step, nb_step)  (1.3: or the even ones)
 *   set_source_subset(all)
 *
 * update_positions clears every held state, so the particles outside the
 * sources have velocity 0, and none of them is a source. set_state keeps
 * the positions just sent (a = 0, no predict), so the steps and lists are
 * those of the current positions and velocities.
 */
#include <stdlib.h>
#include <string.h>

#include "force_pair.h"

#include "force.h"

int gp_pair_available(const gp_sim *sim, int lists)
{
    const gp_api *api = sim->api;
    if (!api || !sim->solver || sim->reduce || api->abi_minor < 2) return 0;
    return GRAVPLUG_API_HAS(api, compute_forces_ex) && GRAVPLUG_API_HAS(api, set_state)
        && GRAVPLUG_API_HAS(api, set_source_subset) && (!lists || GRAVPLUG_API_HAS(api, get_neighbours));
}

int gp_pair_fast(const gp_sim *sim)
{
    return gp_pair_available(sim, 1) && (sim->api->capabilities & GP_CAP_NEIGHBOURS);
}

static gp_status send_velocities(gp_sim *sim, const double *pos, const double *vel, size_t ns,
                                 const uint32_t *src, double t)
{
    double *x = malloc(10 * ns * sizeof *x);
    if (!x)
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                           "out of memory packing the velocities of %zu particles for pair steps", ns);
    double *v = x + 3 * ns, *a = v + 3 * ns, *tt = a + 3 * ns;
    for (size_t k = 0; k < ns; ++k) {
        size_t i = src[k];
        for (int c = 0; c < 3; ++c) {
            x[3 * k + c] = pos[3 * i + c];
            v[3 * k + c] = vel ? vel[3 * i + c] : 0.0;
            a[3 * k + c] = 0.0;
        }
        tt[k] = t;
    }
    gp_status st = sim->api->set_state(sim->solver, ns, ns == sim->n ? NULL : src, x, v, a, tt);
    free(x);
    return st == GP_OK ? GP_OK : gp_sim_solver_refused(sim, st, "the velocities for pair steps (set_state)");
}

int gp_pair_even(const gp_sim *sim)
{
    return gp_pair_available(sim, 0) && sim->api->abi_minor >= 3;
}

/* gp_pair_call; even: the step (and lists by nb_step) ABI 1.3's even one */
static gp_status pair_call(gp_sim *sim, const double *pos, const double *vel, size_t na,
                           const uint32_t *idx, size_t ns, const uint32_t *src, double nb_step,
                           double *acc, double *jerk, double *pair_step, int even);

gp_status gp_pair_call(gp_sim *sim, const double *pos, const double *vel, size_t na, const uint32_t *idx,
                       size_t ns, const uint32_t *src, double nb_step, double *acc, double *jerk,
                       double *pair_step)
{
    return pair_call(sim, pos, vel, na, idx, ns, src, nb_step, acc, jerk, pair_step, 0);
}

static gp_status pair_call(gp_sim *sim, const double *pos, const double *vel, size_t na,
                           const uint32_t *idx, size_t ns, const uint32_t *src, double nb_step,
                           double *acc, double *jerk, double *pair_step, int even)
{
    if (!gp_pair_available(sim, nb_step > 0))
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "pairwise time steps need compute_forces_ex%s (ABI 1.2) from a solver that one "
                           "process drives; the %s solver does not offer them: use a 1.2 plugin such as "
                           "cpu-direct, or a per-particle criterion",
                           nb_step > 0 ? " and get_neighbours" : "", sim->solver_name);
    if (na == 0) return GP_OK;
    gp_status st = gp_force_send_positions(sim, pos);
    if (st == GP_OK) st = send_velocities(sim, pos, vel, ns, src, sim->time);
    if (st != GP_OK) return st;
    int all_act = na == sim->n, all_src = ns == sim->n;
    if (!(all_act && sim->subset_all)) {
        st = sim->api->set_active_subset(sim->solver, all_act ? 0 : na, all_act ? NULL : idx);
        if (st != GP_OK) return gp_sim_solver_refused(sim, st, "the active subset");
        sim->subset_all = all_act;
    }
    if (!all_src) {
        st = sim->api->set_source_subset(sim->solver, ns, src);
        if (st != GP_OK) return gp_sim_solver_refused(sim, st, "the source subset");
    }
    gp_outputs out = { .struct_size = sizeof out, .acc = acc, .jerk = jerk };
    if (even) {
        out.pair_step_even = pair_step;
        out.nb_step_even = nb_step > 0 ? nb_step : 0.0;
    } else {
        out.pair_step = pair_step;
        out.nb_step = nb_step > 0 ? nb_step : 0.0;
    }
    st = sim->api->compute_forces_ex(sim->solver, &out);
    if (st != GP_OK)
        st = gp_sim_fail(sim, st, "the %s solver failed to compute pair steps: %s", sim->solver_name,
                         sim->api->last_error(sim->solver));
    if (!all_src) {
        gp_status back = sim->api->set_source_subset(sim->solver, 0, NULL);
        if (st == GP_OK && back != GP_OK) st = gp_sim_solver_refused(sim, back, "to restore all sources");
    }
    if (st == GP_OK) {
        gp_force_count_call(sim, na);
        sim->criterion_forces += na;
        sim->criterion_pairs += (uint64_t)na * ns;
        sim->criterion_calls++;
    }
    return st;
}

gp_status gp_pair_lists(gp_sim *sim, size_t na, uint64_t *offset, uint32_t **list, size_t *cap)
{
    size_t needed = 0;
    gp_status st = sim->api->get_neighbours(sim->solver, *cap, offset, *list, &needed);
    if (st == GP_ERR_INVALID_ARGUMENT && needed > *cap) {
        uint32_t *grown = realloc(*list, (needed ? needed : 1) * sizeof *grown);
        if (!grown)
            return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                               "out of memory for %zu neighbour-list entries; use a smaller eta or dt", needed);
        *list = grown;
        *cap = needed;
        st = sim->api->get_neighbours(sim->solver, *cap, offset, *list, &needed);
    }
    (void)na;
    return st == GP_OK ? GP_OK : gp_sim_solver_refused(sim, st, "the neighbour lists (get_neighbours)");
}

int gp_pair_has_jerk(const gp_sim *sim)
{
    return gp_pair_available(sim, 0) && (sim->api->capabilities & GP_CAP_JERK);
}

gp_status gp_pair_midpoint(gp_sim *sim, const uint32_t *s, size_t ns, double h, double nb_step, double *step,
                           gp_pair_edge edge, void *ctx)
{
    if (ns == 0) return GP_OK;
    const uint64_t cpu0 = gp_sim_cpu_ns();
    size_t n = sim->n;
    double *x = malloc(3 * n * sizeof *x), *v = malloc(3 * n * sizeof *v);
    double *acc = malloc(3 * ns * sizeof *acc), *jerk = calloc(3 * ns, sizeof *jerk);
    double *scratch = malloc(3 * ns * sizeof *scratch), *back = malloc(ns * sizeof *back);
    uint64_t *offset = malloc((ns + 1) * sizeof *offset);
    size_t cap = 4 * ns;
    uint32_t *list = malloc(cap * sizeof *list);
    gp_status st = GP_OK;
    if (!x || !v || !acc || !jerk || !scratch || !back || !offset || !list) {
        st = gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                         "out of memory for the pair steps of %zu particles; use fewer particles", ns);
        goto out;
    }
    /* a and (where the plugin has it) the jerk at the start, from s */
    st = gp_pair_call(sim, sim->pos, sim->vel, ns, s, ns, s, 0.0, acc, gp_pair_has_jerk(sim) ? jerk : NULL, NULL);
    if (st != GP_OK) goto out;
    /* the midpoint by Taylor series from the start (the other particles
     * stay: they are no sources) */
    double d = 0.5 * h, d2 = 0.5 * d * d, d3 = d * d * d / 6;
    memcpy(x, sim->pos, 3 * n * sizeof *x);
    memset(v, 0, 3 * n * sizeof *v);
    for (size_t k = 0; k < ns; ++k)
        for (int c = 0; c < 3; ++c) {
            size_t i = 3 * (size_t)s[k] + c;
            const double a = acc[3 * k + c], j = jerk[3 * k + c];
            x[i] += d * sim->vel[i] + d2 * a + d3 * j;
        }
    if (gp_pair_even(sim)) {
        /* ABI 1.3: min(tau(v), tau(-v)) and the union of both lists from
         * one call, the same bits and pairs as the two below */
        for (size_t k = 0; k < ns; ++k)
            for (int c = 0; c < 3; ++c) {
                size_t i = 3 * (size_t)s[k] + c;
                v[i] = sim->vel[i] + d * acc[3 * k + c] + d2 * jerk[3 * k + c];
            }
        st = pair_call(sim, x, v, ns, s, ns, s, nb_step, scratch, NULL, step, 1);
        if (st == GP_OK && nb_step > 0) st = gp_pair_lists(sim, ns, offset, &list, &cap);
        if (st == GP_OK && nb_step > 0)
            for (size_t k = 0; k < ns; ++k)
                for (uint64_t e = offset[k]; e < offset[k + 1]; ++e) edge(ctx, k, list[e]);
        goto out;
    }
    for (int pass = 0; pass < 2 && st == GP_OK; ++pass) {
        double sign = pass ? -1.0 : 1.0;
        for (size_t k = 0; k < ns; ++k)
            for (int c = 0; c < 3; ++c) {
                size_t i = 3 * (size_t)s[k] + c;
                v[i] = sign * (sim->vel[i] + d * acc[3 * k + c] + d2 * jerk[3 * k + c]);
            }
        st = gp_pair_call(sim, x, v, ns, s, ns, s, nb_step, scratch, NULL, pass ? back : step);
        if (st == GP_OK && nb_step > 0) st = gp_pair_lists(sim, ns, offset, &list, &cap);
        if (st == GP_OK && nb_step > 0)
            for (size_t k = 0; k < ns; ++k)
                for (uint64_t e = offset[k]; e < offset[k + 1]; ++e) edge(ctx, k, list[e]);
    }
    if (st == GP_OK && step)
        for (size_t k = 0; k < ns; ++k) if (back[k] < step[k]) step[k] = back[k];
out:
    free(x); free(v); free(acc); free(jerk); free(scratch); free(back); free(offset); free(list);
    sim->criterion_cpu_ns += gp_sim_cpu_ns() - cpu0;
    return st;
}
