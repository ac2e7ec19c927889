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
 * sim->state_fresh, as in force_held.c). The 1.1 path (force_held.c) is
 * not used or changed here: its set_state gives zero jerk.
 */
#include <stdlib.h>

#include "force_jerk.h"

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

static gp_status refused(gp_sim *sim, gp_status st, const char *call)
{
    sim->state_fresh = 0;   /* whatever the plugin holds now, resend it all */
    return gp_sim_fail(sim, st, "the %s solver refused %s: %s", sim->solver_name, call,
                       sim->api->last_error(sim->solver));
}

/* Room for m particles' state with jerk (13 doubles each) in sim->pack,
 * whose capacity force_held.c counts in particles of 10 doubles. */
static gp_status pack_room(gp_sim *sim, size_t m)
{
    size_t need = (13 * m + 9) / 10;
    if (sim->pack_cap >= need) return GP_OK;
    double *p = realloc(sim->pack, 10 * need * sizeof *p);
    if (!p)
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                           "out of memory packing the state of %zu particles for the solver", m);
    sim->pack = p;
    sim->pack_cap = need;
    return GP_OK;
}

gp_status gp_jerk_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *jerk)
{
    if (m == 0) return GP_OK;
    gp_status st = pack_room(sim, m);
    if (st != GP_OK) return st;
    double *x = sim->pack, *v = x + 3 * m, *a = v + 3 * m, *j = a + 3 * m, *t = j + 3 * m;
    const gp_levels *lv = &sim->lv;
    const long long mm = (long long)m;
#pragma omp parallel for schedule(static) if (mm > 16384)
    for (long long k = 0; k < mm; ++k) {
        size_t i = idx ? (size_t)idx[k] : (size_t)k;
        for (int c = 0; c < 3; ++c) {
            x[3 * k + c] = sim->pos[3 * i + c];
            v[3 * k + c] = sim->vel[3 * i + c];
            a[3 * k + c] = sim->acc[3 * i + c];
            j[3 * k + c] = jerk[3 * i + c];
        }
        t[k] = gp_levels_time(lv, lv->t_last[i]);
    }
    /* (n, NULL) is the ABI's "all, in order" */
    st = sim->api->set_state_jerk(sim->solver, m, idx && m < sim->n ? idx : NULL, x, v, a, j, t);
    if (st != GP_OK) return refused(sim, st, "the particles' state (set_state_jerk)");
    return GP_OK;
}

/* The plugin gets the particles (if it lost them) and every state. */
static gp_status send_all(gp_sim *sim, double t, const double *jerk)
{
    if (!sim->solver_fresh) {
        /* the positions are replaced by set_state_jerk at once; a plugin
         * that builds on set_particles builds from the host's prediction
         * to t, the points it will be asked about */
        const gp_levels *lv = &sim->lv;
        const long long n = (long long)sim->n;
#pragma omp parallel for schedule(static) if (n > 16384)
        for (long long i = 0; i < n; ++i) {
            double dt = t - gp_levels_time(lv, lv->t_last[i]);
            for (int c = 0; c < 3; ++c)
                sim->work[3 * i + c] = gp_sim_predict_coord3(sim->pos[3 * i + c], sim->vel[3 * i + c],
                                                             sim->acc[3 * i + c], jerk[3 * i + c], dt);
        }
        gp_status st = sim->api->set_particles(sim->solver, sim->n, sim->work, sim->mass);
        if (st != GP_OK)
            return gp_sim_fail(sim, st, "the %s solver refused the particles: %s",
                               sim->solver_name, sim->api->last_error(sim->solver));
        sim->solver_fresh = 1;
        sim->subset_all = 1;
    }
    gp_status st = gp_jerk_send(sim, sim->n, NULL, jerk);
    if (st != GP_OK) return st;
    sim->state_fresh = 1;
    sim->state_resyncs++;
    return GP_OK;
}

gp_status gp_jerk_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                               const double *jerk, double *xp, double *vp, double *anew,
                               double *jnew)
{
    if (!sim->api || !sim->solver) return gp_sim_need_solver(sim);
    gp_status st;
    if (!sim->solver_fresh || !sim->state_fresh) {
        st = send_all(sim, t, jerk);
        if (st != GP_OK) return st;
    }
    st = sim->api->predict(sim->solver, t);
    if (st != GP_OK) return refused(sim, st, "to predict the particles (predict)");
    int all = na == sim->n;
    st = sim->api->get_positions(sim->solver, na, all ? NULL : idx, xp);
    if (st != GP_OK) return refused(sim, st, "the predicted positions (get_positions)");
    st = sim->api->get_velocities(sim->solver, na, all ? NULL : idx, vp);
    if (st != GP_OK) return refused(sim, st, "the predicted velocities (get_velocities)");
    if (all ? !sim->subset_all : 1) {
        st = sim->api->set_active_subset(sim->solver, all ? 0 : na, all ? NULL : idx);
        if (st != GP_OK) return refused(sim, st, "the active subset");
        sim->subset_all = all;
    }
    gp_outputs out = { .struct_size = sizeof out, .acc = anew, .jerk = jnew };
    st = sim->api->compute_forces_ex(sim->solver, &out);
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "the %s solver failed to compute forces and jerks: %s",
                           sim->solver_name, sim->api->last_error(sim->solver));
    sim->force_calls++;
    sim->particle_forces += na;
    sim->last_active = na;
    sim->state_steps++;
    return GP_OK;
}
