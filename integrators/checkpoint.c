/*
 * checkpoint.c — save and restore a gp_sim bit for bit.
 *
 * The file holds everything the integrators read: time, settings, the level
 * grid, per-particle positions, velocities, masses, ids, last
 * accelerations, levels and last-correction ticks, counters, the
 * integrator's private doubles, and an opaque caller blob. Native byte
 * order and doubles (a restart happens on the machine, or the kind of
 * machine, that wrote the file); a magic word and a version guard it.
 *
 * A checkpoint is a solver resync point: after save (and after load) the
 * next force call re-sends all particles with set_particles, so a tree
 * plugin starts from a fresh build in both the continuing and the restarted
 * run, and the two continue identically.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define CKPT_MAGIC "GPCKPT\0\1"
#define CKPT_VERSION 1

typedef struct ckpt_header {
    char magic[8];
    uint64_t version, n, started, max_level, now, user_len, n_saved;
    char integrator[32];
    double time, dt_max, t0;
    double dt, eta, eps, rtol, atol, h0;
    int64_t criterion, set_max_level;
    uint64_t steps, force_calls, particle_forces, diag_force_calls, last_active, solver_swaps, syncs;
} ckpt_header;

GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_save(gp_sim *sim, const char *path,
                                                 const void *user, size_t user_len)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!path) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_checkpoint_save needs a path");
    if (sim->n == 0) return gp_sim_fail(sim, GP_ERR_BAD_STATE, "nothing to checkpoint: no particles yet");
    if (user_len && !user) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "user blob of %zu bytes is NULL", user_len);
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CKPT_MAGIC, 8);
    h.version = CKPT_VERSION;
    h.n = sim->n;
    h.started = (uint64_t)sim->started;
    h.max_level = (uint64_t)sim->lv.max_level;
    h.now = sim->lv.now;
    h.user_len = user_len;
    h.n_saved = sim->started ? sim->integ->n_saved : 0;
    snprintf(h.integrator, sizeof h.integrator, "%s", sim->integ->name);
    h.time = sim->time; h.dt_max = sim->lv.dt_max; h.t0 = sim->lv.t0;
    h.dt = sim->set.dt; h.eta = sim->set.eta; h.eps = sim->set.eps;
    h.rtol = sim->set.rtol; h.atol = sim->set.atol; h.h0 = sim->set.h0;
    h.criterion = sim->set.criterion; h.set_max_level = sim->set.max_level;
    h.steps = sim->steps; h.force_calls = sim->force_calls; h.particle_forces = sim->particle_forces;
    h.diag_force_calls = sim->diag_force_calls; h.last_active = sim->last_active;
    h.solver_swaps = sim->solver_swaps; h.syncs = sim->syncs;

    double saved[16] = { 0 };
    if (h.n_saved > 16) return gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator saves too many values");
    if (h.n_saved) sim->integ->save(sim, saved);

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    if (!tmp) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory");
    snprintf(tmp, plen + 8, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        gp_status st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "cannot write the checkpoint %s: %m", tmp);
        free(tmp);
        return st;
    }
    size_t n = sim->n;
    int ok = fwrite(&h, sizeof h, 1, f) == 1
          && fwrite(sim->pos, sizeof(double), 3 * n, f) == 3 * n
          && fwrite(sim->vel, sizeof(double), 3 * n, f) == 3 * n
          && fwrite(sim->acc, sizeof(double), 3 * n, f) == 3 * n
          && fwrite(sim->mass, sizeof(double), n, f) == n
          && fwrite(sim->ids, sizeof(uint64_t), n, f) == n
          && fwrite(sim->lv.level, 1, n, f) == n
          && fwrite(sim->lv.t_last, sizeof(uint64_t), n, f) == n
          && (h.n_saved == 0 || fwrite(saved, sizeof(double), h.n_saved, f) == h.n_saved)
          && (user_len == 0 || fwrite(user, 1, user_len, f) == user_len);
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        remove(tmp);
        gp_status st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "writing the checkpoint %s failed (disk full?)", path);
        free(tmp);
        return st;
    }
    free(tmp);
    sim->solver_fresh = 0;   /* resync point */
    return GP_OK;
}

GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_load(gp_sim *sim, const char *path,
                                                 void *user_buf, size_t buflen,
                                                 size_t *user_len)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!path) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_checkpoint_load needs a path");
    FILE *f = fopen(path, "rb");
    if (!f) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "cannot open the checkpoint %s: %m", path);
    ckpt_header h;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, CKPT_MAGIC, 8) != 0) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "%s is not a gravplug checkpoint", path);
    }
    if (h.version != CKPT_VERSION) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_ABI_MISMATCH, "%s is a version %llu checkpoint; this library reads version %d",
                           path, (unsigned long long)h.version, CKPT_VERSION);
    }
    h.integrator[sizeof h.integrator - 1] = '\0';
    const gp_integrator_def *def = gp_integrator_find(h.integrator);
    if (!def || h.n == 0 || h.n > UINT32_MAX || h.n_saved > 16 || h.max_level > GP_LEVELS_MAX) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is damaged or names an unknown integrator (\"%s\")",
                           path, h.integrator);
    }
    size_t n = h.n;
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *acc = malloc(3 * n * sizeof *acc), *mass = malloc(n * sizeof *mass);
    uint64_t *ids = malloc(n * sizeof *ids);
    uint8_t *level = malloc(n);
    uint64_t *t_last = malloc(n * sizeof *t_last);
    double saved[16] = { 0 };   /* an integrator reads 0 for values an older file lacks */
    char *user = h.user_len ? malloc(h.user_len) : NULL;
    gp_status st = GP_OK;
    if (!pos || !vel || !acc || !mass || !ids || !level || !t_last || (h.user_len && !user)) {
        st = gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    } else if (fread(pos, sizeof *pos, 3 * n, f) != 3 * n || fread(vel, sizeof *vel, 3 * n, f) != 3 * n
               || fread(acc, sizeof *acc, 3 * n, f) != 3 * n || fread(mass, sizeof *mass, n, f) != n
               || fread(ids, sizeof *ids, n, f) != n || fread(level, 1, n, f) != n
               || fread(t_last, sizeof *t_last, n, f) != n
               || (h.n_saved && fread(saved, sizeof *saved, h.n_saved, f) != h.n_saved)
               || (h.user_len && fread(user, 1, h.user_len, f) != h.user_len)) {
        st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is truncated", path);
    }
    fclose(f);
    if (st == GP_OK) st = gp_sim_set_particles(sim, n, pos, vel, mass, ids);
    if (st == GP_OK) st = gp_sim_set_integrator(sim, h.integrator);
    if (st == GP_OK) {
        memcpy(sim->acc, acc, 3 * n * sizeof *acc);
        memcpy(sim->lv.level, level, n);
        memcpy(sim->lv.t_last, t_last, n * sizeof *t_last);
        sim->lv.max_level = (int)h.max_level;
        sim->lv.now = h.now;
        sim->lv.dt_max = h.dt_max;
        sim->lv.t0 = h.t0;
        sim->time = h.time;
        sim->set.dt = h.dt; sim->set.eta = h.eta; sim->set.eps = h.eps;
        sim->set.rtol = h.rtol; sim->set.atol = h.atol; sim->set.h0 = h.h0;
        sim->set.criterion = (int)h.criterion; sim->set.max_level = (int)h.set_max_level;
        sim->steps = h.steps; sim->force_calls = h.force_calls; sim->particle_forces = h.particle_forces;
        sim->diag_force_calls = h.diag_force_calls; sim->last_active = h.last_active;
        sim->solver_swaps = h.solver_swaps; sim->syncs = h.syncs;
        sim->started = 0;
        if (h.started) {
            if (def->load) st = def->load(sim, saved);
            if (st == GP_OK) sim->started = 1;
        }
        if (user_len) *user_len = h.user_len;
        if (user_buf && buflen && h.user_len)
            memcpy(user_buf, user, h.user_len < buflen ? h.user_len : buflen);
    }
    free(pos); free(vel); free(acc); free(mass); free(ids); free(level); free(t_last); free(user);
    sim->solver_fresh = 0;
    return st;
}
