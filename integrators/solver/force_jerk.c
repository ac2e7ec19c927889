/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_jerk.c — the Hermite scheme's force calls through ABI 1.2 (see
 * force_jerk.h). One block step:
 *
 *   set_state_jerk(the particles just corrected: x_i, v_i, a_i, j_i, t_i)
 *   predict(T)                      third order for every held particle
 *   get_positions(active), get_velocities(active)
 *   set_active_subset(active), compute_forces_ex(acc, jerk)
 *
 * so the host moves O(n_active) particles across the ABI; the inactive
 * ones are never touched. The full state goes to the plugin once after
 * anything that replaced or overwrote its particles (sim->solver_fresh,
 * sim->state_fresh). The calls themselves are force_held.c's, with the
 * jerk beside the state (set_state_jerk) and among the outputs
 * (get_velocities, compute_forces_ex); this file checks the path and
 * names the 1.2 use of them.
 */
#include "force_jerk.h"

#include "force_held.h"

gp_status gp_jerk_path_check(gp_sim *sim, const char *scheme)
{
    if (!sim->api || !sim->solver) return gp_sim_need_solver(sim);
    const gp_api *api = sim->api;
    if (sim->solver_path == GP_PATH_10)
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "%s needs the plugin to hold and predict the particles with their jerk "
                           "(ABI 1.2), but the solver path is set to \"1.0\": set it to \"auto\"",
                           scheme);
    int has = api->abi_minor >= 2 && GRAVPLUG_API_HAS(api, set_state_jerk)
              && GRAVPLUG_API_HAS(api, get_velocities) && GRAVPLUG_API_HAS(api, compute_forces_ex)
              && GRAVPLUG_API_HAS(api, predict) && GRAVPLUG_API_HAS(api, get_positions);
    if (!has)
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "%s needs the jerk from the plugin (ABI 1.2: set_state_jerk, get_velocities, "
                           "compute_forces_ex), but the %s plugin (ABI %u.%u) does not offer those calls; "
                           "use a plugin that computes the jerk, such as cpu-direct",
                           scheme, sim->solver_name, (unsigned)api->abi_major, (unsigned)api->abi_minor);
    if (!(api->capabilities & GP_CAP_JERK))
        return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                           "%s needs the jerk from the plugin, but the %s plugin does not compute it "
                           "(no GP_CAP_JERK); use a plugin that does, such as cpu-direct",
                           scheme, sim->solver_name);
    return GP_OK;
}

gp_status gp_jerk_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *jerk)
{
    /* with nothing to send, a process of a collective solver still takes part */
    return gp_held_send_state(sim, m, idx, NULL, sim->acc, jerk);
}

gp_status gp_jerk_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                               const double *jerk, double *xp, double *vp, double *anew,
                               double *jnew)
{
    return gp_held_force(sim, t, na, idx, sim->acc, jerk, xp, vp, anew, jnew);
}
