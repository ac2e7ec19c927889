/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force.c — the integrators' force calls through the plugin ABI.
 *
 * Positions go to the solver with set_particles after anything that
 * invalidates its copy (new particles, new solver, checkpoint resync) and
 * with the cheap update_positions otherwise. Active subsets are set only
 * when they differ from "all". Counters: force_calls and particle_forces
 * (the sum of active counts, the force cost a block scheme saves).
 * The block schemes' ABI 1.1 path (the plugin predicts) is force_held.c.
 */
#include <string.h>

#include "force.h"
#include "force_held.h"
#include "gravplug_params.h"

/* A tree's relative opening criterion (GP_OPENING_RELATIVE of
 * gravplug_params.h) bounds each particle's error by a fraction of its
 * previous |a|, which set_particles forgets. A shared-step scheme re-sends
 * its particles at every step (a resync point, so that restarts keep their
 * bits), and the plugin would pay a coarse extra pass before every force
 * call to find |a| again. Where the plugin holds states (ABI 1.1) the last
 * accelerations therefore go with the positions, as set_state; a
 * restarted run sends the same ones from its checkpoint. */
static int solver_reads_last_acc(gp_sim *sim)
{
    return sim->started && gp_held_path(sim) && gp_params_reads_last_acc(sim->api, sim->solver);
}

gp_status gp_force_send_positions(gp_sim *sim, const double *pos)
{
    if (!sim->api || !sim->solver)
        return gp_sim_fail(sim, GP_ERR_BAD_STATE,
                           "no gravity solver: open one with gp_sim_open_solver "
                           "(e.g. \"auto\") or pass one to gp_sim_set_solver first");
    gp_status st;
    const int resent = !sim->solver_fresh;
    if (resent) {
        st = sim->api->set_particles(sim->solver, sim->n, pos, sim->mass);
        if (st == GP_OK) { sim->solver_fresh = 1; sim->subset_all = 1; }
    } else {
        st = sim->api->update_positions(sim->solver, pos);
    }
    /* either call clears a 1.1 plugin's held state (ABI 1.1) */
    sim->state_fresh = 0;
    if (st != GP_OK)
        return gp_sim_solver_refused(sim, st, "the particle positions");
    /* (update_positions keeps the plugin's |a|: only after set_particles) */
    if (resent && solver_reads_last_acc(sim))
        return gp_held_send_state(sim, sim->n, NULL, pos, sim->acc, NULL);
    return GP_OK;
}

static gp_status compute_raw(gp_sim *sim, double *acc, double *pot)
{
    gp_status st = sim->api->compute_forces(sim->solver, acc, pot);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "the %s solver failed to compute forces: %s",
                           sim->solver_name, sim->api->last_error(sim->solver));
    return GP_OK;
}

/* A force call for na active particles counted as the integrator's cost. */
void gp_force_count_call(gp_sim *sim, size_t na)
{
    sim->force_calls++;
    sim->particle_forces += na;
    sim->last_active = na;
}

static gp_status compute(gp_sim *sim, double *acc, double *pot, size_t na)
{
    gp_status st = compute_raw(sim, acc, pot);
    if (st == GP_OK) gp_force_count_call(sim, na);
    return st;
}

gp_status gp_force_all(gp_sim *sim, const double *pos, double *acc, double *pot)
{
    gp_status st = gp_force_send_positions(sim, pos);
    if (st != GP_OK) return st;
    if (!sim->subset_all) {
        st = sim->api->set_active_subset(sim->solver, 0, NULL);
        if (st != GP_OK)
            return gp_sim_solver_refused(sim, st, "the active subset");
        sim->subset_all = 1;
    }
    return compute(sim, acc, pot, sim->n);
}

gp_status gp_force_active(gp_sim *sim, const double *pos, size_t na,
                          const uint32_t *idx, double *acc)
{
    if (gp_sim_all_active(sim, na)) return gp_force_all(sim, pos, acc, NULL);
    gp_status st = gp_force_send_positions(sim, pos);
    if (st != GP_OK) return st;
    /* na = 0 with a process's idx (never NULL): none active here */
    st = sim->api->set_active_subset(sim->solver, na, idx);
    if (st != GP_OK)
        return gp_sim_solver_refused(sim, st, "the active subset");
    sim->subset_all = 0;
    return compute(sim, acc, NULL, na);
}

/* ==== Source subsets (ABI 1.1), for hold.c ================================
 * Added with the HOLD integrator; additive: nothing above depends on it.
 * A kick of a set A from a set B is one plugin call: active subset A,
 * source subset B. The source subset is put back to "all" after the call,
 * so gp_force_all/gp_force_active above never see a stale one.
 * A 1.0 plugin (no set_source_subset) gets the same forces another way:
 * set_particles with every non-source's mass set to zero (a massless
 * particle feels the field and sources none, ABI 1.0), and the real masses
 * are re-sent at the next ordinary call (solver_fresh = 0). Exact, no
 * cancellation, but one set_particles (a tree build) per kick. */

int gp_force_has_source_subset(const gp_sim *sim)
{
    return sim->api && GRAVPLUG_API_HAS(sim->api, set_source_subset);
}

gp_status gp_force_from_sources(gp_sim *sim, const double *pos, size_t na, const uint32_t *idx,
                                size_t ns, const uint32_t *src, double *mass_mask, double *acc)
{
    /* every decision over all processes of a collective solver (sizes
     * summed, "all" meaning all everywhere); a process with none of a set
     * passes (0, its non-NULL array): "none on this rank" */
    if (!gp_sim_global_max(sim, na > 0)) return GP_OK;
    if (!gp_sim_global_max(sim, ns > 0)) {   /* nothing to feel; (0, NULL) would mean "all" */
        if (na) memset(acc, 0, 3 * na * sizeof *acc);
        return GP_OK;
    }
    int native = gp_force_has_source_subset(sim);
    int all_src = gp_sim_all_active(sim, ns);   /* subsets hold distinct indices */
    gp_status st;
    if (native || all_src) {
        st = gp_force_send_positions(sim, pos);
    } else {
        if (!sim->api || !sim->solver) return gp_force_send_positions(sim, pos); /* its sentence */
        memset(mass_mask, 0, sim->n * sizeof *mass_mask);
        for (size_t k = 0; k < ns; ++k) mass_mask[src[k]] = sim->mass[src[k]];
        st = sim->api->set_particles(sim->solver, sim->n, pos, mass_mask);
        sim->solver_fresh = 0;           /* the real masses go back next time */
        sim->subset_all = 1;
        if (st != GP_OK)
            return gp_sim_solver_refused(sim, st, "the particles of a source subset");
    }
    if (st != GP_OK) return st;
    int all_act = gp_sim_all_active(sim, na);
    if (!(all_act && sim->subset_all)) {
        st = sim->api->set_active_subset(sim->solver, all_act ? 0 : na, all_act ? NULL : idx);
        if (st != GP_OK)
            return gp_sim_solver_refused(sim, st, "the active subset");
        sim->subset_all = all_act;
    }
    if (native && !all_src) {
        st = sim->api->set_source_subset(sim->solver, ns, src);
        if (st != GP_OK)
            return gp_sim_solver_refused(sim, st, "the source subset");
    }
    st = compute_raw(sim, acc, NULL);
    if (native && !all_src) {
        gp_status back = sim->api->set_source_subset(sim->solver, 0, NULL);
        if (st == GP_OK && back != GP_OK)
            st = gp_sim_fail(sim, back, "the %s solver could not restore all sources: %s",
                             sim->solver_name, sim->api->last_error(sim->solver));
    }
    if (st == GP_OK) gp_force_count_call(sim, na);
    return st;
}

int gp_force_has_groups(const gp_sim *sim)
{
    const gp_api *api = sim->api;
    return api && sim->solver && !sim->reduce && api->abi_minor >= 3 &&
           GRAVPLUG_API_HAS(api, set_source_groups) && gp_force_has_source_subset(sim) &&
           (api->capabilities & GP_CAP_SOURCE_GROUPS);
}

gp_status gp_force_grouped(gp_sim *sim, const double *pos, size_t na, const uint32_t *idx,
                           size_t ns, const uint32_t *src, const uint32_t *group, double *acc)
{
    if (na == 0) return GP_OK;
    gp_status st = gp_force_send_positions(sim, pos);   /* set_particles would clear groups */
    if (st != GP_OK) return st;
    /* idx in its own order (a permutation of all, say): acc comes back in it */
    st = sim->api->set_active_subset(sim->solver, na, idx);
    if (st != GP_OK) return gp_sim_solver_refused(sim, st, "the active subset");
    sim->subset_all = 0;
    int all_src = gp_sim_all_active(sim, ns);
    if (!all_src && (st = sim->api->set_source_subset(sim->solver, ns, src)) != GP_OK)
        return gp_sim_solver_refused(sim, st, "the source subset");
    st = sim->api->set_source_groups(sim->solver, sim->n, group);
    if (st != GP_OK) st = gp_sim_solver_refused(sim, st, "the source groups");
    if (st == GP_OK) st = compute_raw(sim, acc, NULL);
    gp_status back = sim->api->set_source_groups(sim->solver, 0, NULL);
    if (back == GP_OK && !all_src) back = sim->api->set_source_subset(sim->solver, 0, NULL);
    if (st == GP_OK && back != GP_OK)
        st = gp_sim_fail(sim, back, "the %s solver could not clear the groups and sources: %s",
                         sim->solver_name, sim->api->last_error(sim->solver));
    if (st == GP_OK) gp_force_count_call(sim, na);
    return st;
}

gp_status gp_sim_criterion_eps(gp_sim *sim, double setting, double *eps)
{
    if (setting >= 0.0) { *eps = setting; return GP_OK; }
    *eps = 0.0;
    if (sim->api && sim->solver) gp_params_softening(sim->api, sim->solver, eps);
    return GP_OK;
}
