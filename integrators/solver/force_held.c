/* SPDX-License-Identifier: Apache-2.0 */
/*
 * force_held.c — block steps through ABI 1.1: the plugin holds every
 * particle's kinematic state and predicts it, so one block step moves
 * O(n_active) data across the ABI instead of O(n):
 *
 *   set_state(the particles just corrected: x_i, v_i, a_i, t_i)
 *   predict(T)                        the plugin moves every source to T
 *   get_positions(active)             x_i(T) for the corrector
 *   set_active_subset(active), compute_forces
 *
 * The 1.0 path (host predicts all n, update_positions; force.c) stays,
 * chosen by gp_sim_set_solver_path or by a plugin without the 1.1 calls;
 * force_block.c picks one of the two for the block schemes. Both give
 * the same bits with a CPU plugin: the plugin evaluates the ABI's
 * prediction with the same gp_predict_coord (gravplug_predict.h), from
 * the same (x_i, v_i, a_i) and the same t_i = gp_levels_time(t_last[i]).
 * (Not under a tree's acceleration MAC: the held a_i also gives it the
 * |a_old| that the 1.0 path's plugin must find with a bh pass.)
 *
 * The plugin is given the full state once after anything that replaced
 * or overwrote its particles (set_particles after new particles, a solver
 * swap or a checkpoint; update_positions of a 1.0-style call such as a
 * synchronising step or a diagnostic), tracked by sim->state_fresh.
 */
#include <stdlib.h>
#include <string.h>

#include "force_held.h"
#include "core/stopping.h"

int gp_held_path(const gp_sim *sim)
{
    if (!sim->api || sim->solver_path == GP_PATH_10 || sim->api->abi_minor < 1) return 0;
    return GRAVPLUG_API_HAS(sim->api, set_state) && GRAVPLUG_API_HAS(sim->api, predict)
        && GRAVPLUG_API_HAS(sim->api, get_positions);
}

gp_status gp_held_path_check(gp_sim *sim)
{
    if (sim->solver_path != GP_PATH_11 || !sim->api || gp_held_path(sim)) return GP_OK;
    return gp_sim_fail(sim, GP_ERR_UNSUPPORTED,
                       "the solver path is set to \"1.1\" but the %s plugin (ABI %u.%u) "
                       "does not offer set_state, predict and get_positions; set the path "
                       "to \"auto\" or \"1.0\", or use a plugin built for ABI 1.1",
                       sim->solver_name, (unsigned)sim->api->abi_major,
                       (unsigned)sim->api->abi_minor);
}

static gp_status refused(gp_sim *sim, gp_status st, const char *call)
{
    sim->state_fresh = 0;   /* whatever the plugin holds now, resend it all */
    return gp_sim_solver_refused(sim, st, call);
}

/* Room for m particles' state, `per` doubles each, in sim->pack (its
 * capacity is counted in doubles). */
static gp_status pack_room(gp_sim *sim, size_t m, size_t per)
{
    if (sim->pack_cap >= per * m) return GP_OK;
    double *p = realloc(sim->pack, per * m * sizeof *p);
    if (!p)
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY,
                           "out of memory packing the state of %zu particles for the solver", m);
    sim->pack = p;
    sim->pack_cap = per * m;
    return GP_OK;
}

gp_status gp_held_send_state(gp_sim *sim, size_t m, const uint32_t *idx, const double *pos,
                             const double *acc, const double *jerk)
{
    if (!pos) pos = sim->pos;
    /* set_state is collective for a shared solver: a process with nothing
     * to send still takes part, with (0, idx) (state.c: a no-op here) */
    if (m == 0 && !sim->reduce) return GP_OK;
    gp_status st = gp_sim_agree(sim, m ? pack_room(sim, m, jerk ? 13 : 10) : GP_OK,
                                "the particles' state was not sent to the solver");
    if (st != GP_OK) return st;
    const uint32_t *some = idx ? idx : sim->active;
    if (m == 0) {
        st = jerk ? sim->api->set_state_jerk(sim->solver, 0, some, NULL, NULL, NULL, NULL, NULL)
                 : sim->api->set_state(sim->solver, 0, some, NULL, NULL, NULL, NULL);
        return st == GP_OK ? GP_OK : refused(sim, st, jerk ? "the particles' state (set_state_jerk)"
                                                           : "the particles' state (set_state)");
    }
    double *x = sim->pack, *v = x + 3 * m, *a = v + 3 * m, *j = a + 3 * m;
    double *t = jerk ? j + 3 * m : j;
    const gp_levels *lv = &sim->lv;
    const long long mm = (long long)m;
#pragma omp parallel for schedule(static) if (mm > GP_PAR_ACTIVE_MIN)
    for (long long k = 0; k < mm; ++k) {
        size_t i = idx ? (size_t)idx[k] : (size_t)k;
        for (int c = 0; c < 3; ++c) {
            x[3 * k + c] = pos[3 * i + c];
            v[3 * k + c] = sim->vel[3 * i + c];
            a[3 * k + c] = acc ? acc[3 * i + c] : 0.0;
            if (jerk) j[3 * k + c] = jerk[3 * i + c];
        }
        t[k] = gp_levels_time(lv, lv->t_last[i]);
    }
    /* (n, NULL) is the ABI's "all, in order" */
    const uint32_t *list = idx && m < sim->n ? idx : NULL;
    st = jerk ? sim->api->set_state_jerk(sim->solver, m, list, x, v, a, j, t)
              : sim->api->set_state(sim->solver, m, list, x, v, a, t);
    if (st != GP_OK)
        return refused(sim, st, jerk ? "the particles' state (set_state_jerk)"
                                     : "the particles' state (set_state)");
    return GP_OK;
}

gp_status gp_held_send(gp_sim *sim, size_t m, const uint32_t *idx, const double *acc)
{
    return gp_held_send_state(sim, m, idx, NULL, acc, NULL);
}

/* The plugin gets the particles (if it lost them) and every state. A
 * plugin that builds on set_particles builds from the host's prediction
 * to t (second order, or third with jerks), the points it will be asked
 * about; set_state then replaces the positions. */
static gp_status send_all(gp_sim *sim, double t, const double *acc, const double *jerk)
{
    if (!sim->solver_fresh) {
        gp_sim_predict_all(sim, t, acc, jerk, sim->work);
        gp_status st = sim->api->set_particles(sim->solver, sim->n, sim->work, sim->mass);
        if (st != GP_OK)
            return gp_sim_fail(sim, st, "the %s solver refused the particles: %s",
                               sim->solver_name, sim->api->last_error(sim->solver));
        sim->solver_fresh = 1;
        sim->subset_all = 1;
    }
    gp_status st = gp_held_send_state(sim, sim->n, NULL, NULL, acc, jerk);
    if (st != GP_OK) return st;
    sim->state_fresh = 1;
    sim->state_resyncs++;
    return GP_OK;
}

gp_status gp_held_force(gp_sim *sim, double t, size_t na, const uint32_t *idx, const double *acc,
                        const double *jerk, double *xp, double *vp, double *anew, double *jnew)
{
    if (!sim->api || !sim->solver) return gp_sim_need_solver(sim);
    gp_status st;
    if (!sim->solver_fresh || !sim->state_fresh) {
        st = send_all(sim, t, acc, jerk);
        if (st != GP_OK) return st;
    }
    st = sim->api->predict(sim->solver, t);
    if (st != GP_OK) return refused(sim, st, "to predict the particles (predict)");
    int all = gp_sim_all_active(sim, na);
    st = sim->api->get_positions(sim->solver, na, all ? NULL : idx, xp);
    if (st != GP_OK) return refused(sim, st, "the predicted positions (get_positions)");
    if (vp) {
        st = sim->api->get_velocities(sim->solver, na, all ? NULL : idx, vp);
        if (st != GP_OK) return refused(sim, st, "the predicted velocities (get_velocities)");
    }
    if (all ? !sim->subset_all : 1) {
        st = sim->api->set_active_subset(sim->solver, all ? 0 : na, all ? NULL : idx);
        if (st != GP_OK) return refused(sim, st, "the active subset");
        sim->subset_all = all;
    }
    uint32_t *nn = NULL;
    if (jnew) {
        /* collision detection by the plugin's nearest neighbours (stopping.c) */
        nn = gp_stopping_nn_buffer(sim, na);
        gp_outputs out = { .struct_size = sizeof out, .acc = anew, .jerk = jnew, .nn_index = nn };
        st = sim->api->compute_forces_ex(sim->solver, &out);
    } else {
        st = sim->api->compute_forces(sim->solver, anew, NULL);
    }
    if (st != GP_OK)
        return gp_sim_fail(sim, st, "the %s solver failed to compute forces%s: %s",
                           sim->solver_name, jnew ? " and jerks" : "",
                           sim->api->last_error(sim->solver));
    if (nn) gp_stopping_nn_done(sim, na, all ? NULL : idx);
    sim->force_calls++;
    sim->particle_forces += na;
    sim->last_active = na;
    sim->state_steps++;
    return GP_OK;
}

gp_status gp_held_force_active(gp_sim *sim, double t, size_t na, const uint32_t *idx,
                                const double *acc, double *xp, double *anew)
{
    return gp_held_force(sim, t, na, idx, acc, NULL, xp, NULL, anew, NULL);
}
