/* SPDX-License-Identifier: Apache-2.0 */
/*
 * migrate.c — a gp_sim's particles out and in as rows of their complete
 * state, for moving them between the processes of one run (gravhost-mpi's
 * domain decomposition) without restarting the integrator.
 *
 * A row is everything checkpoint.c saves per particle: position, velocity
 * as stored (block-kdk's is half-kicked), mass, last acceleration, level
 * and t_last (its 64 bits copied into a double, never computed with), then
 * the integrator's own per-particle values where it keeps some between
 * steps (n_particle_saved: hermite's jerks). What is not per particle
 * (time, the level grid, settings, counters, the integrator's few saved
 * doubles) is the same on every process of a run and stays where it is.
 * An integrator's other private per-particle arrays are scratch between
 * steps (rk4, rk8pd, hold: hold's per-particle times equal sim->time after
 * every step); they are recreated for the new count through its load
 * callback, as after a checkpoint.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/sim_core.h"

enum { COL_POS = 0, COL_VEL = 3, COL_MASS = 6, COL_ACC = 7, COL_LEVEL = GP_SIM_STATE_COL_LEVEL, COL_TLAST = 11,
       NCOL = 12 };
enum { MAX_SAVED = 16 };   /* checkpoint.c's bound on an integrator's saved doubles */

/* The integrator's per-particle values after the fixed columns. */
static size_t extra_columns(const gp_sim *sim)
{
    return sim && sim->integ ? sim->integ->n_particle_saved : 0;
}

GRAVPLUG_EXPORT size_t gp_sim_state_columns(const gp_sim *sim)
{
    return NCOL + extra_columns(sim);
}

GRAVPLUG_EXPORT gp_status gp_sim_export_state(const gp_sim *sim, double *rows, uint64_t *ids)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    gp_sim *s = (gp_sim *)sim;   /* for the error sentence only */
    if (sim->n == 0) return gp_sim_need_particles(s);
    if (!rows || !ids)
        return gp_sim_fail(s, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_export_state needs rows (n * gp_sim_state_columns doubles) and ids (n)");
    const size_t extra = extra_columns(sim), ncol = NCOL + extra;
    const double *saved = extra && sim->started ? sim->integ->particle_saved(sim) : NULL;
    for (size_t i = 0; i < sim->n; ++i) {
        double *r = rows + i * ncol;
        memcpy(r + COL_POS, sim->pos + 3 * i, 3 * sizeof *r);
        memcpy(r + COL_VEL, sim->vel + 3 * i, 3 * sizeof *r);
        r[COL_MASS] = sim->mass[i];
        memcpy(r + COL_ACC, sim->acc + 3 * i, 3 * sizeof *r);
        r[COL_LEVEL] = sim->lv.level[i];
        memcpy(r + COL_TLAST, &sim->lv.t_last[i], sizeof *r);
        for (size_t k = 0; k < extra; ++k) r[NCOL + k] = saved ? saved[i * extra + k] : 0.0;
        ids[i] = sim->ids[i];
    }
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_import_state(gp_sim *sim, size_t n, const double *rows,
                                              const uint64_t *ids)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (n == 0 || !rows || !ids)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "gp_sim_import_state needs n >= 1 rows and their ids (got n = %zu%s)", n,
                           rows && ids ? "" : ", or a NULL array");
    int started = sim->started;
    const size_t extra = extra_columns(sim), ncol = NCOL + extra;
    for (size_t i = 0; i < n && started; ++i) {
        const double *r = rows + i * ncol;
        uint64_t t_last;
        memcpy(&t_last, r + COL_TLAST, sizeof t_last);
        double level = r[COL_LEVEL];
        if (!(level >= 0 && level <= sim->lv.max_level && level == floor(level)) || t_last > sim->lv.now)
            return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                               "gp_sim_import_state: row %zu (level %g, tick %llu) is not on this simulation's "
                               "level grid (levels 0 .. %d, now tick %llu): import rows exported by the "
                               "processes of the same run, at the same time", i, level,
                               (unsigned long long)t_last, sim->lv.max_level, (unsigned long long)sim->lv.now);
        for (int c = 0; c < 3; ++c)
            if (!isfinite(r[COL_ACC + c]))
                return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                                   "gp_sim_import_state: row %zu has an acceleration that is not finite", i);
        for (size_t k = 0; k < extra; ++k)
            if (!isfinite(r[NCOL + k]))
                return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                                   "gp_sim_import_state: row %zu has a value of %s's own state (column %zu) "
                                   "that is not finite", i, sim->integ->name, NCOL + k);
    }
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *mass = malloc(n * sizeof *mass);
    if (!pos || !vel || !mass) {
        free(pos); free(vel); free(mass);
        return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory importing %zu particles", n);
    }
    for (size_t i = 0; i < n; ++i) {
        memcpy(pos + 3 * i, rows + i * ncol + COL_POS, 3 * sizeof *pos);
        memcpy(vel + 3 * i, rows + i * ncol + COL_VEL, 3 * sizeof *vel);
        mass[i] = rows[i * ncol + COL_MASS];
    }
    /* what stays: the grid and the integrator's saved doubles */
    gp_levels grid = sim->lv;
    double saved[MAX_SAVED] = { 0 };
    size_t n_saved = started ? sim->integ->n_saved : 0;
    if (n_saved > MAX_SAVED) n_saved = MAX_SAVED;
    if (n_saved) sim->integ->save(sim, saved);
    gp_status st = gp_sim_set_particles(sim, n, pos, vel, mass, ids);   /* stops the integrator */
    free(pos); free(vel); free(mass);
    if (st != GP_OK || !started) return st;
    for (size_t i = 0; i < n; ++i) {
        const double *r = rows + i * ncol;
        memcpy(sim->acc + 3 * i, r + COL_ACC, 3 * sizeof *r);
        sim->lv.level[i] = (uint8_t)r[COL_LEVEL];
        memcpy(&sim->lv.t_last[i], r + COL_TLAST, sizeof sim->lv.t_last[i]);
    }
    gp_levels_touched(&sim->lv);
    sim->lv.max_level = grid.max_level;
    sim->lv.dt_max = grid.dt_max;
    sim->lv.t0 = grid.t0;
    sim->lv.now = grid.now;
    /* private arrays for the new count, as after a checkpoint; a scheme
     * with private state and no way to recreate it restarts instead */
    if (sim->integ->load) st = sim->integ->load(sim, saved);
    else if (sim->integ->stop) return GP_OK;
    if (st == GP_OK && extra) {   /* the scheme's own values, into the arrays load made */
        double *own = sim->integ->particle_saved(sim);
        if (!own) return gp_sim_fail(sim, GP_ERR_BAD_STATE, "%s has no room for its imported state", sim->integ->name);
        for (size_t i = 0; i < n; ++i) memcpy(own + i * extra, rows + i * ncol + NCOL, extra * sizeof *own);
    }
    if (st == GP_OK) sim->started = 1;
    return st;
}
