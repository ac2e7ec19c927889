/* SPDX-License-Identifier: Apache-2.0 */
/*
 * checkpoint.c — save and restore a gp_sim bit for bit.
 *
 * The file holds everything the integrators read: time, settings, the level
 * grid, per-particle positions, velocities, masses, ids, last
 * accelerations, levels and last-correction ticks, counters, the
 * integrator's private doubles, and an opaque caller blob. Native byte
 * order and doubles (a restart happens on the machine, or the kind of
 * machine, that wrote the file).
 *
 * Format version 4 (versions 3 and 2 are read too; version 1 is refused
 * with a sentence):
 *     header (ckpt_header, 8-byte fields only, no padding); the scheme's
 *     parameters are settings[], one double per row of its settings table
 *     in table order (settings.h), unused slots 0 (version 2 had the
 *     built-in schemes' parameters in fixed slots: V2_SLOTS); version 4
 *     appends n_particle_saved (version 3's header is the same without it)
 *     payload: pos, vel, acc [3n doubles each], mass [n doubles],
 *              ids [n uint64], level [n bytes], t_last [n uint64],
 *              particle [n * n_particle_saved doubles: the scheme's
 *              per-particle state, e.g. hermite's jerks; version 4 only],
 *              saved [n_saved doubles], user blob [user_len bytes]
 * A version 2 or 3 file has no per-particle state: it loads for every
 * scheme that keeps none, and a started scheme that keeps some (none did
 * when those versions were written) is refused with a sentence.
 *     trailer: CRC-32C (crc32c.h) of header and payload, 8 bytes LE-padded
 * The header carries its own CRC-32C too (header_crc, computed with that
 * field zero), so its sizes are trusted before anything is allocated. A
 * file is refused, with a sentence naming what is wrong, when its size is
 * not exactly what the header describes (truncated, or trailing data),
 * when either checksum fails, or when any field is out of its range.
 *
 * Writing: a temporary file, fsync, rename over the old file, fsync of the
 * directory, so a crash at any moment leaves the old or the new file.
 *
 * A checkpoint is a solver resync point: after save (and after load) the
 * next force call re-sends all particles with set_particles, so a tree
 * plugin starts from a fresh build in both the continuing and the restarted
 * run, and the two continue identically.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "file_checks.h"
#include "schemes/registry.h"
#include "solver/solver_cache.h"

#define CKPT_MAGIC "GPCKPT\0\1"
#define CKPT_VERSION 4
#define CKPT_MAX_PARTICLE_SAVED 4
#define CKPT_MAX_SETTINGS 8
#define CKPT_MAX_SAVED 16
#define CKPT_MAX_USER (UINT64_C(1) << 20)   /* a caller blob is small state */

typedef struct ckpt_header {
    char magic[8];
    uint64_t version, header_crc, n, started, max_level, now, user_len, n_saved;
    char integrator[32];
    double time, dt_max, t0;
    uint64_t settings[CKPT_MAX_SETTINGS];   /* the bits of one double each */
    uint64_t steps, force_calls, particle_forces, diag_force_calls, last_active, solver_swaps, syncs;
    uint64_t n_particle_saved;              /* version 4: doubles per particle */
} ckpt_header;

/* Bytes of the header as a version writes it: version 3 and 2 lack the
 * last field. */
static size_t header_size(uint64_t version)
{
    return version >= 4 ? sizeof(ckpt_header) : offsetof(ckpt_header, n_particle_saved);
}

/* Bytes of payload after the header for n particles (n <= UINT32_MAX and
 * the other sizes bounded, so this cannot overflow 64 bits). */
static uint64_t payload_bytes(uint64_t n, uint64_t n_saved, uint64_t user_len, uint64_t n_particle_saved)
{
    return n * (10 * sizeof(double) + 2 * sizeof(uint64_t) + 1) + n * n_particle_saved * sizeof(double)
         + n_saved * sizeof(double) + user_len;
}

static uint32_t header_crc(const ckpt_header *h)
{
    ckpt_header c = *h;
    c.header_crc = 0;
    return gp_crc32c(0, &c, header_size(h->version));
}

/* fwrite that also feeds the running CRC. */
static int put(FILE *f, uint32_t *crc, const void *p, size_t size, size_t count)
{
    if (count == 0) return 1;
    if (fwrite(p, size, count, f) != count) return 0;
    *crc = gp_crc32c(*crc, p, size * count);
    return 1;
}

/* Makes a rename in path's directory durable. */
static int sync_dir_of(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return -1;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    free(copy);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_save(gp_sim *sim, const char *path,
                                                 const void *user, size_t user_len)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!path) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_checkpoint_save needs a path");
    if (sim->n == 0) return gp_sim_fail(sim, GP_ERR_BAD_STATE, "nothing to checkpoint: no particles yet");
    if (user_len && !user) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "user blob of %zu bytes is NULL", user_len);
    if (user_len > CKPT_MAX_USER)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "user blob of %zu bytes is larger than the %llu a checkpoint holds",
                           user_len, (unsigned long long)CKPT_MAX_USER);
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
    h.n_particle_saved = sim->started ? sim->integ->n_particle_saved : 0;
    const double *particle = h.n_particle_saved ? sim->integ->particle_saved(sim) : NULL;
    if (h.n_particle_saved > CKPT_MAX_PARTICLE_SAVED || (h.n_particle_saved && !particle))
        return gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator %s has no per-particle state to save", sim->integ->name);
    snprintf(h.integrator, sizeof h.integrator, "%s", sim->integ->name);
    h.time = sim->time; h.dt_max = sim->lv.dt_max; h.t0 = sim->lv.t0;
    if (sim->integ->n_settings > CKPT_MAX_SETTINGS)
        return gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator %s has %zu parameters; a checkpoint holds %d",
                           sim->integ->name, sim->integ->n_settings, CKPT_MAX_SETTINGS);
    for (size_t i = 0; i < sim->integ->n_settings; ++i) {
        double v = gp_setting_value(&sim->integ->settings[i], sim->settings);
        memcpy(&h.settings[i], &v, sizeof v);
    }
    h.steps = sim->steps; h.force_calls = sim->force_calls; h.particle_forces = sim->particle_forces;
    h.diag_force_calls = sim->diag_force_calls; h.last_active = sim->last_active;
    h.solver_swaps = sim->solver_swaps; h.syncs = sim->syncs;
    h.header_crc = header_crc(&h);

    double saved[CKPT_MAX_SAVED] = { 0 };
    if (h.n_saved > CKPT_MAX_SAVED) return gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator saves too many values");
    if (h.n_saved) sim->integ->save(sim, saved);

    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    if (!tmp) return gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory");
    snprintf(tmp, plen + 8, "%s.tmp", path);
    char why[128];
    const char *bad = gp_file_rename_target_bad(path, tmp, why, sizeof why);
    if (bad) {
        gp_status st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "cannot write the checkpoint %s: %s", bad, why);
        free(tmp);
        return st;
    }
    /* a new file, never through a link someone put at tmp */
    int fd = gp_file_create_new(tmp, why, sizeof why);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        if (fd >= 0) { snprintf(why, sizeof why, "%s", strerror(errno)); close(fd); }
        gp_status st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "cannot write the checkpoint %s: %s", tmp, why);
        free(tmp);
        return st;
    }
    size_t n = sim->n;
    uint32_t crc = 0;
    int ok = put(f, &crc, &h, sizeof h, 1)
          && put(f, &crc, sim->pos, sizeof(double), 3 * n)
          && put(f, &crc, sim->vel, sizeof(double), 3 * n)
          && put(f, &crc, sim->acc, sizeof(double), 3 * n)
          && put(f, &crc, sim->mass, sizeof(double), n)
          && put(f, &crc, sim->ids, sizeof(uint64_t), n)
          && put(f, &crc, sim->lv.level, 1, n)
          && put(f, &crc, sim->lv.t_last, sizeof(uint64_t), n)
          && put(f, &crc, particle, sizeof(double), n * h.n_particle_saved)
          && put(f, &crc, saved, sizeof(double), h.n_saved)
          && put(f, &crc, user, 1, user_len);
    uint64_t trailer = crc;
    ok = ok && fwrite(&trailer, sizeof trailer, 1, f) == 1;
    ok = ok && fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, path) != 0) {
        int err = errno;
        remove(tmp);
        gp_status st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "writing the checkpoint %s failed: %s",
                                   path, strerror(err));
        free(tmp);
        return st;
    }
    free(tmp);
    if (sync_dir_of(path) != 0)
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "the checkpoint %s was written but its directory could not be synced: %m", path);
    gp_solver_cache_stale(sim);   /* resync point */
    return GP_OK;
}

/* ---- loading ----------------------------------------------------------------- */

/* fread that also feeds the running CRC. */
static int get(FILE *f, uint32_t *crc, void *p, size_t size, size_t count)
{
    if (count == 0) return 1;
    if (fread(p, size, count, f) != count) return 0;
    *crc = gp_crc32c(*crc, p, size * count);
    return 1;
}

static int finite_all(const double *a, size_t m)
{
    for (size_t i = 0; i < m; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

/* Version 2 kept the built-in schemes' parameters in fixed slots, the
 * last two as integers: they move to the scheme's table order here (a
 * name the scheme has no row for is dropped; a row version 2 had no slot
 * for keeps 0 and fails the range check with a sentence). */
static const char *const V2_SLOTS[CKPT_MAX_SETTINGS] = { "dt", "eta", "eps", "rtol", "atol", "h0", "criterion", "max_level" };

static void settings_from_v2(ckpt_header *h, const gp_integrator_def *def)
{
    uint64_t old[CKPT_MAX_SETTINGS];
    memcpy(old, h->settings, sizeof old);
    memset(h->settings, 0, sizeof h->settings);
    for (size_t i = 0; i < def->n_settings && i < CKPT_MAX_SETTINGS; ++i)
        for (size_t k = 0; k < CKPT_MAX_SETTINGS; ++k) {
            if (strcmp(def->settings[i].name, V2_SLOTS[k]) != 0) continue;
            double v;
            if (k >= 6) { int64_t iv; memcpy(&iv, &old[k], sizeof iv); v = (double)iv; }
            else memcpy(&v, &old[k], sizeof v);
            memcpy(&h->settings[i], &v, sizeof v);
        }
}

/* Range checks of the header, after its checksum held; writes the
 * complaint (naming the field) into why, returns 0 when all is well. */
static int check_header(const ckpt_header *h, const gp_integrator_def *def, char *why, size_t len)
{
#define BAD(...) do { snprintf(why, len, __VA_ARGS__); return -1; } while (0)
    if (!def) BAD("field integrator names no known integrator (\"%s\")", h->integrator);
    if (h->started > 1) BAD("field started is %llu (must be 0 or 1)", (unsigned long long)h->started);
    if (h->n_saved != (h->started ? def->n_saved : 0))
        BAD("field n_saved is %llu (integrator %s saves %zu values)", (unsigned long long)h->n_saved,
            def->name, h->started ? def->n_saved : (size_t)0);
    if (h->n_particle_saved != (h->started ? def->n_particle_saved : 0))
        BAD("field n_particle_saved is %llu (integrator %s saves %zu values per particle)",
            (unsigned long long)h->n_particle_saved, def->name, h->started ? def->n_particle_saved : (size_t)0);
    if (h->max_level > GP_LEVELS_MAX)
        BAD("field max_level is %llu (must be 0 .. %d)", (unsigned long long)h->max_level, GP_LEVELS_MAX);
    if (!isfinite(h->time)) BAD("field time is %g (must be finite)", h->time);
    if (!isfinite(h->t0)) BAD("field t0 is %g (must be finite)", h->t0);
    if (!(isfinite(h->dt_max) && h->dt_max > 0)) BAD("field dt_max is %g (must be finite and > 0)", h->dt_max);
    /* a step of dt_max must move time forward, or the run never ends */
    if (!(h->time + h->dt_max > h->time) || !(h->t0 + h->dt_max > h->t0))
        BAD("field dt_max is %g: a step that small is lost next to t = %.17g", h->dt_max, h->time);
    double tick = ldexp(h->dt_max, -(int)h->max_level);
    if (!isfinite(h->t0 + (double)h->now * tick)) BAD("field now is %llu (beyond the finite times)", (unsigned long long)h->now);
    /* the level grid is what a started integrator continues from */
    if (h->started && !(h->time >= h->t0)) BAD("field t0 is %.17g, after the time %.17g", h->t0, h->time);
    /* every scheme keeps time on its grid (t0 + now ticks, or an end time
     * within a tick of it; rk8pd re-anchors t0 at each step) */
    if (h->started && !(fabs(h->t0 + (double)h->now * tick - h->time) <= tick))
        BAD("field now is tick %llu, which is t = %.17g, not the time %.17g", (unsigned long long)h->now,
            h->t0 + (double)h->now * tick, h->time);
    for (size_t i = 0; i < CKPT_MAX_SETTINGS; ++i) {
        double v;
        memcpy(&v, &h->settings[i], sizeof v);
        char rule[160];
        if (i >= def->n_settings) {
            if (h->settings[i] != 0) BAD("field settings[%zu] is %g (integrator %s has no parameter there: must be 0)", i, v, def->name);
        } else if (gp_setting_check(&def->settings[i], v, rule, sizeof rule) != 0) {
            BAD("field %s %s", def->settings[i].name, rule);
        }
    }
    return 0;
#undef BAD
}

/* Range checks of the per-particle arrays and saved values. */
static int check_arrays(const ckpt_header *h, size_t n, const double *pos, const double *vel,
                        const double *acc, const double *mass, const uint64_t *ids, const uint8_t *level,
                        const uint64_t *t_last, const double *particle, const double *saved, char *why, size_t len)
{
    size_t d1, d2;
    int dup = gp_sim_find_duplicate_id(ids, n, &d1, &d2);
    if (dup > 0) {   /* (out of memory: gp_sim_set_particles checks again and says so) */
        snprintf(why, len, "field ids holds id %llu twice (particles %zu and %zu)", (unsigned long long)ids[d1],
                 d1, d2);
        return -1;
    }
    static const char *const names[] = { "pos", "vel", "acc" };
    const double *arr[] = { pos, vel, acc };
    for (int a = 0; a < 3; ++a)
        if (!finite_all(arr[a], 3 * n)) { snprintf(why, len, "field %s holds a value that is not finite", names[a]); return -1; }
    for (size_t i = 0; i < n; ++i) {
        if (!(isfinite(mass[i]) && mass[i] >= 0)) {
            snprintf(why, len, "field mass of particle %zu is %g (must be finite and >= 0)", i, mass[i]);
            return -1;
        }
        if (!h->started) continue;   /* levels and ticks are set afresh at the start */
        if (level[i] > h->max_level) {
            snprintf(why, len, "field level of particle %zu is %u (max_level is %llu)", i, level[i],
                     (unsigned long long)h->max_level);
            return -1;
        }
        if (t_last[i] > h->now) {
            snprintf(why, len, "field t_last of particle %zu is tick %llu, after now (%llu)", i,
                     (unsigned long long)t_last[i], (unsigned long long)h->now);
            return -1;
        }
    }
    if (!finite_all(particle, n * h->n_particle_saved)) {
        snprintf(why, len, "field particle (the integrator's per-particle state) holds a value that is not finite");
        return -1;
    }
    if (!finite_all(saved, h->n_saved)) { snprintf(why, len, "field saved holds a value that is not finite"); return -1; }
    return 0;
}

GRAVPLUG_EXPORT gp_status gp_sim_checkpoint_load(gp_sim *sim, const char *path,
                                                 void *user_buf, size_t buflen,
                                                 size_t *user_len)
{
    if (!sim) return GP_ERR_INVALID_ARGUMENT;
    if (!path) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "gp_sim_checkpoint_load needs a path");
    char cannot[128];
    FILE *f = gp_file_open_regular(path, "rb", cannot, sizeof cannot);
    if (!f) return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "cannot open the checkpoint %s: %s", path, cannot);
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is not a regular file", path);
    }
    ckpt_header h;
    memset(&h, 0, sizeof h);
    /* version 3's header first, then version 4's last field */
    if (fread(&h, header_size(3), 1, f) != 1 || memcmp(h.magic, CKPT_MAGIC, 8) != 0) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "%s is not a gravplug checkpoint (too short, or no GPCKPT magic word)", path);
    }
    if (h.version != CKPT_VERSION && h.version != 3 && h.version != 2) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_ABI_MISMATCH,
                           "%s is a version %llu checkpoint; this library reads version %d, and version 3 and version 2 files "
                           "as gravplug 0.1 wrote them (version 1 had no checksum): continue it with the gravplug "
                           "that wrote it, or start the run again",
                           path, (unsigned long long)h.version, CKPT_VERSION);
    }
    if (h.version >= 4 && fread(&h.n_particle_saved, sizeof h.n_particle_saved, 1, f) != 1) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is damaged: its header is truncated", path);
    }
    if (h.header_crc != header_crc(&h)) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "the checkpoint %s is damaged: field header_crc does not match the header "
                           "(bytes changed after it was written)", path);
    }
    uint32_t header_sum = gp_crc32c(0, &h, header_size(h.version));   /* of the header as read: the file's CRC */
    if (h.n == 0 || h.n > UINT32_MAX || h.n_saved > CKPT_MAX_SAVED || h.user_len > CKPT_MAX_USER
        || h.n_particle_saved > CKPT_MAX_PARTICLE_SAVED) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "the checkpoint %s is damaged: field %s is out of range", path,
                           h.n == 0 || h.n > UINT32_MAX ? "n" : h.n_saved > CKPT_MAX_SAVED ? "n_saved"
                           : h.user_len > CKPT_MAX_USER ? "user_len" : "n_particle_saved");
    }
    uint64_t want = header_size(h.version) + payload_bytes(h.n, h.n_saved, h.user_len, h.n_particle_saved)
                  + sizeof(uint64_t);
    if ((uint64_t)sb.st_size != want) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                           "the checkpoint %s is damaged: it is %lld bytes but its header (n = %llu) describes %llu "
                           "(%s)", path, (long long)sb.st_size, (unsigned long long)h.n, (unsigned long long)want,
                           (uint64_t)sb.st_size < want ? "truncated" : "trailing data after the end");
    }
    h.integrator[sizeof h.integrator - 1] = '\0';
    const gp_integrator_def *def = gp_integrator_find(h.integrator);
    if (h.version == 2 && def) settings_from_v2(&h, def);
    if (h.version < 4 && h.started == 1 && def && def->n_particle_saved) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_ABI_MISMATCH,
                           "the checkpoint %s is a version %llu file, written before integrator %s saved its "
                           "per-particle state (%zu values each), which a restart needs: start the run again "
                           "from its initial conditions", path, (unsigned long long)h.version, def->name,
                           def->n_particle_saved);
    }
    char why[256];
    if (check_header(&h, def, why, sizeof why) != 0) {
        fclose(f);
        return gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is damaged: %s", path, why);
    }
    size_t n = h.n;
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *acc = malloc(3 * n * sizeof *acc), *mass = malloc(n * sizeof *mass);
    uint64_t *ids = malloc(n * sizeof *ids);
    uint8_t *level = malloc(n);
    uint64_t *t_last = malloc(n * sizeof *t_last);
    size_t np = n * (size_t)h.n_particle_saved;
    double *particle = np ? malloc(np * sizeof *particle) : NULL;
    double saved[CKPT_MAX_SAVED] = { 0 }; /* an integrator reads 0 for values an older file lacks */
    char *user = h.user_len ? malloc(h.user_len) : NULL;
    gp_status st = GP_OK;
    uint32_t crc = header_sum;
    uint64_t trailer = 0;
    if (!pos || !vel || !acc || !mass || !ids || !level || !t_last || (h.user_len && !user) || (np && !particle)) {
        st = gp_sim_fail(sim, GP_ERR_OUT_OF_MEMORY, "out of memory reading %s (%zu particles)", path, n);
    } else if (!get(f, &crc, pos, sizeof *pos, 3 * n) || !get(f, &crc, vel, sizeof *vel, 3 * n)
               || !get(f, &crc, acc, sizeof *acc, 3 * n) || !get(f, &crc, mass, sizeof *mass, n)
               || !get(f, &crc, ids, sizeof *ids, n) || !get(f, &crc, level, 1, n)
               || !get(f, &crc, t_last, sizeof *t_last, n) || !get(f, &crc, particle, sizeof *particle, np)
               || !get(f, &crc, saved, sizeof *saved, h.n_saved)
               || !get(f, &crc, user, 1, h.user_len) || fread(&trailer, sizeof trailer, 1, f) != 1) {
        st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s could not be read to its end: %s", path,
                         ferror(f) ? strerror(errno) : "it shrank while being read");
    } else if (trailer != crc) {
        st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT,
                         "the checkpoint %s is damaged: field checksum (CRC-32C of the whole file) is %08llx but the "
                         "contents give %08x (bytes changed after it was written)", path,
                         (unsigned long long)trailer, crc);
    } else if (check_arrays(&h, n, pos, vel, acc, mass, ids, level, t_last, particle, saved, why, sizeof why) != 0) {
        st = gp_sim_fail(sim, GP_ERR_INVALID_ARGUMENT, "the checkpoint %s is damaged: %s", path, why);
    }
    fclose(f);
    /* Only a fully checked file touches sim. */
    if (st == GP_OK) st = gp_sim_set_particles(sim, n, pos, vel, mass, ids);
    if (st == GP_OK) st = gp_sim_set_integrator(sim, h.integrator);
    if (st == GP_OK) {
        memcpy(sim->acc, acc, 3 * n * sizeof *acc);
        memcpy(sim->lv.level, level, n);
        gp_levels_touched(&sim->lv);
        memcpy(sim->lv.t_last, t_last, n * sizeof *t_last);
        sim->lv.max_level = (int)h.max_level;
        sim->lv.now = h.now;
        sim->lv.dt_max = h.dt_max;
        sim->lv.t0 = h.t0;
        sim->time = h.time;
        for (size_t i = 0; i < def->n_settings; ++i) {
            double v;
            memcpy(&v, &h.settings[i], sizeof v);
            gp_setting_store(&def->settings[i], sim->settings, v);
        }
        sim->steps = h.steps; sim->force_calls = h.force_calls; sim->particle_forces = h.particle_forces;
        sim->diag_force_calls = h.diag_force_calls; sim->last_active = h.last_active;
        sim->solver_swaps = h.solver_swaps; sim->syncs = h.syncs;
        sim->started = 0;
        if (h.started) {
            if (def->load) st = def->load(sim, saved);
            if (st == GP_OK && np) {
                double *dst = def->particle_saved(sim);
                if (dst) memcpy(dst, particle, np * sizeof *particle);
                else st = gp_sim_fail(sim, GP_ERR_INTERNAL, "integrator %s has no room for its per-particle state",
                                      def->name);
            }
            if (st == GP_OK) sim->started = 1;
        }
        if (user_len) *user_len = h.user_len;
        if (user_buf && buflen && h.user_len)
            memcpy(user_buf, user, h.user_len < buflen ? h.user_len : buflen);
    }
    free(pos); free(vel); free(acc); free(mass); free(ids); free(level); free(t_last); free(particle); free(user);
    gp_solver_cache_stale(sim);
    return st;
}
