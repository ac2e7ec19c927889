/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_checks.c — a gravhost run's checks before t = 0: everything that
 * would otherwise fail hours into a run (the switches' plugins and
 * parameters, the output directories, output intervals the integrator
 * cannot resolve), and the run state a restart reads from a checkpoint.
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_checks.h"
#include "numfmt.h"
#include "par.h"
#include "runner.h"

/* Range checks of the run state read from a checkpoint (its file passed
 * the library's checksums; this guards against a blob that disagrees with
 * the config). Returns 0, or -1 with a sentence naming the field. */
/* An output index the run state may hold at time t: the next event's
 * index (events at t done) or the one before (stopped before them). */
static int index_in_range(double t, double interval, uint64_t index, uint64_t *lo, uint64_t *hi)
{
    if (!(interval > 0)) {   /* only at the start and the end */
        *lo = 0;
        *hi = 1;
    } else {
        double k = floor(t / interval + 1e-9) + 1;
        *hi = k < 1e18 ? (uint64_t)k : (uint64_t)1e18;
        *lo = *hi - 1;
    }
    return index >= *lo && index <= *hi;
}

int check_state(runner *r, gh_state *s, const char *path, double t)
{
    const gh_config *c = r->cfg;
    const char *field = NULL;
    char detail[224] = "";
    static const char *const index_names[] = { "log_index", "snap_index", "ckpt_index" };
    static const char *const interval_names[] = { "log_interval", "snapshot_interval", "checkpoint_interval" };
    const double intervals[] = { c->log_interval, c->snap_interval, c->ckpt_interval };
    const uint64_t indices[] = { s->log_index, s->snap_index, s->ckpt_index };
    for (int k = 0; k < 3 && !field; ++k) {
        uint64_t lo, hi;
        if (index_in_range(t, intervals[k], indices[k], &lo, &hi)) continue;
        field = index_names[k];
        snprintf(detail, sizeof detail, "%llu, but at t = %.10g with output.%s = %g it is %llu or %llu "
                 "(the output intervals must be those of the run that wrote it)",
                 (unsigned long long)indices[k], t, interval_names[k], intervals[k], (unsigned long long)lo,
                 (unsigned long long)hi);
    }
    /* every scheduled snapshot wrote one file, and an end off the schedule
     * one more; the bound keeps the file counter from wrapping round onto
     * snap_0000 */
    if (!field && (s->snap_count < s->snap_index || s->snap_count > UINT32_MAX)) {
        field = "snap_count";
        snprintf(detail, sizeof detail, "%llu, but %llu scheduled snapshots were written (and at most %u in all)",
                 (unsigned long long)s->snap_count, (unsigned long long)s->snap_index, UINT32_MAX);
    }
    s->plugin[sizeof s->plugin - 1] = '\0';
    int printable = 1;   /* a short name: no path, nothing unprintable */
    for (const unsigned char *p = (const unsigned char *)s->plugin; *p; ++p)
        if (*p < 0x20 || *p == 0x7f || *p == '/') printable = 0;
    if (field) {
    } else if (s->params_from < -1 || s->params_from >= (int32_t)c->n_switches) {
        field = "params_from";
        snprintf(detail, sizeof detail, "switch index %d, but %s has %zu switch entries", (int)s->params_from,
                 c->path, c->n_switches);
    } else if (c->n_switches < 64 && (s->switch_fired >> c->n_switches) != 0) {
        field = "switch_fired";
        snprintf(detail, sizeof detail, "marks switches beyond the %zu in %s", c->n_switches, c->path);
    } else if (s->params_from >= 0 && !(s->switch_fired >> s->params_from & 1)) {
        field = "params_from";
        snprintf(detail, sizeof detail, "switch %d is in use but never fired", (int)s->params_from);
    } else if (!s->plugin[0] || !printable) {
        field = "plugin";
        snprintf(detail, sizeof detail, "\"%.60s\" is not a plugin's short name", s->plugin);
    } else if (!isfinite(s->E0)) {
        field = "E0";
        snprintf(detail, sizeof detail, "%g (must be finite)", s->E0);
    } else if (!(isfinite(s->wall) && s->wall >= 0)) {
        field = "wall";
        snprintf(detail, sizeof detail, "%g (must be finite and >= 0)", s->wall);
    }
    if (!field) return 0;
    snprintf(r->err, sizeof r->err, "the checkpoint %s is damaged or belongs to another config: its run state field %s is "
             "%s", path, field, detail);
    return -1;
}

/* Can a file be created in the directory of path? Creating one is the
 * only test that covers every cause (a missing directory, permissions,
 * which root ignores, a read-only file system, a file in the way). */
static int dir_writable(runner *r, const char *path, const char *setting, int line)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
    else snprintf(dir, sizeof dir, ".");
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.gravhost-probe-XXXXXX", dir);
    int fd = mkstemp(probe);
    if (fd >= 0) {
        close(fd);
        unlink(probe);
        return 0;
    }
    char at[64] = "";
    if (line > 0) snprintf(at, sizeof at, ":%d", line);
    snprintf(r->err, sizeof r->err, "%s%s: %s: cannot create %s: the directory %s is not writable (%s); "
             "fix the setting or create the directory", r->cfg->path, at, setting, path, dir, strerror(errno));
    return -1;
}

/* Opens every switch's plugin with its parameters on a throwaway
 * simulation, so a typo fails now and not when the switch fires. */
static int check_switches(runner *r)
{
    const gh_config *c = r->cfg;
    for (size_t i = 0; i < c->n_switches; ++i) {
        if (r->st.switch_fired >> i & 1) continue;
        const gh_switch *sw = &c->switches[i];
        gp_sim *probe = NULL;
        (void)gp_sim_new(&probe);   /* NULL: out of memory, which open_solver_on reports */
        char where[32];
        snprintf(where, sizeof where, "switch[%zu]", i);
        int rc = open_solver_on(r, probe, sw->plugin, params_for(r, (int32_t)i), !sw->has_params, where, sw->line);
        gp_sim_free(probe);
        if (rc != 0) {
            size_t len = strlen(r->err);
            snprintf(r->err + len, sizeof r->err - len, " (checked before the run starts)");
            return -1;
        }
    }
    return 0;
}

/* The smallest step the integrator can take, or 0 when it has no floor
 * (adaptive rk8pd): dt_max / 2^max_level for block steps, dt for shared
 * steps. what gets the formula, for the message. */
static double smallest_step(runner *r, char *what, size_t len)
{
    char dt_s[64], lv_s[64];
    if (gp_sim_get_integrator_param(r->sim, "dt", dt_s, sizeof dt_s) != GP_OK) return 0;
    double dt = strtod(dt_s, NULL);
    char dt_short[64];
    gh_fmt_number_text(dt_short, sizeof dt_short, dt_s);
    if (gp_sim_get_integrator_param(r->sim, "max_level", lv_s, sizeof lv_s) == GP_OK) {
        int lv = atoi(lv_s);
        snprintf(what, len, "dt / 2^max_level = %s / 2^%d", dt_short, lv);
        return ldexp(dt, -lv);
    }
    snprintf(what, len, "dt");
    return dt;
}

static int check_intervals(runner *r)
{
    const gh_config *c = r->cfg;
    char what[128];
    what[0] = '\0';
    double floor_dt = smallest_step(r, what, sizeof what);
    if (!what[0]) return 0;   /* no floor (adaptive steps) */
    /* a step that cannot move the clock at the end time (or that
     * underflowed to 0) would leave the run standing still, and look like
     * a damaged state */
    const double t_end = r->opts->have_t_end ? r->opts->t_end : c->t_end;
    if (!(t_end + floor_dt > t_end) || floor_dt < DBL_MIN) {
        char a[64], b[64];
        snprintf(r->err, sizeof r->err,
                 "%s:%d: integrator.params: the smallest step of %s (%s = %s) cannot move the time at t = %s "
                 "(a double holds about 16 digits): give a larger dt", c->path, c->integrator_line,
                 gp_sim_integrator(r->sim), what, gh_fmt_double(a, sizeof a, floor_dt),
                 gh_fmt_double(b, sizeof b, t_end));
        return -1;
    }
    static const char *const names[] = { "log_interval", "snapshot_interval", "checkpoint_interval" };
    const double v[] = { c->log_interval, c->snap_interval, c->ckpt_interval };
    const int lines[] = { c->log_interval_line, c->snap_interval_line, c->ckpt_interval_line };
    for (int k = 0; k < 3; ++k)
        if (v[k] > 0 && v[k] < floor_dt * (1 - 1e-12)) {
            char a[64], b[64], at[32] = "";
            if (lines[k] > 0) snprintf(at, sizeof at, ":%d", lines[k]);
            snprintf(r->err, sizeof r->err,
                     "%s%s: output.%s: %s is shorter than the smallest step %s can take (%s = %s); outputs "
                     "fall on step boundaries, so it would write at every step: use at least %s (a "
                     "multiple of dt is best), or 0 for none",
                     c->path, at, names[k], gh_fmt_double(a, sizeof a, v[k]), gp_sim_integrator(r->sim), what,
                     gh_fmt_double(b, sizeof b, floor_dt), b);
            return -1;
        }
    return 0;
}

/* eps = 0 turns the softening criterion eta*sqrt(eps/|a|) into
 * eta*|v|/|a| (timestep_criteria.c): say so at the start of the run. */
static void warn_zero_eps(runner *r)
{
    char crit[64], eps_s[64];
    if (gp_sim_get_integrator_param(r->sim, "criterion", crit, sizeof crit) != GP_OK) return;
    if (strcmp(crit, "softening") != 0 && strcmp(crit, "min") != 0) return;
    if (gp_sim_get_integrator_param(r->sim, "eps", eps_s, sizeof eps_s) != GP_OK) return;
    const char *from = "integrator.params.eps";
    double eps;
    if (strcmp(eps_s, "solver") == 0) {
        from = "the solver's eps";
        if (!gp_sim_solver_softening(r->sim, &eps)) return;
    } else {
        char *end;
        eps = strtod(eps_s, &end);
        if (end == eps_s) return;
    }
    if (eps != 0) return;
    fprintf(stderr, "gravhost: warning: %s is 0, so the time-step criterion \"%s\" uses eta*|v|/|a| in place "
            "of eta*sqrt(eps/|a|) (docs/CONFIG.md); set solver.params.eps (or integrator.params.eps), or "
            "criterion = \"velocity\" to choose it openly\n", from, crit);
}

/* A scheme that reads the jerk on a tree whose active subsets are walked
 * with the co-active particles' spheres: forces that jump with who else is
 * active, which a jerk criterion (Aarseth's) turns into short steps
 * (docs/INTEGRATORS.md, "On a tree"): say so at the start of the run. */
static void warn_jerk_spheres(runner *r)
{
    char spheres[64];
    unsigned flags = 0;
    const char *integ = gp_sim_integrator(r->sim);
    if (!integ || gp_integrator_flags(integ, &flags) != GP_OK || !(flags & GP_SCHEME_NEEDS_JERK)) return;
    if (gp_sim_get_solver_param(r->sim, "subset_spheres", spheres, sizeof spheres) != GP_OK) return;
    if (strcmp(spheres, "active") != 0) return;
    fprintf(stderr, "gravhost: warning: %s on a tree with subset_spheres = \"active\": a particle's force "
            "then changes with which others are active, and Aarseth's criterion turns those jumps into "
            "short steps (docs/INTEGRATORS.md, \"On a tree\"); set solver.params.subset_spheres = \"whole\"\n",
            integ);
}

int preflight(runner *r)
{
    const gh_config *c = r->cfg;
    char path[4096], name[600];
    if (check_switches(r) != 0) return -1;
    join(path, sizeof path, r->out_io, c->ckpt_name);
    if (dir_writable(r, path, "output.checkpoint", 0) != 0) return -1;
    /* a FIFO or a device where an output goes: never written or replaced */
    const char *outs[] = { c->ckpt_name, c->log_name };
    static const char *const keys[] = { "output.checkpoint", "output.log" };
    for (int k = 0; k < 2; ++k) {
        char why[160];
        join(path, sizeof path, r->out_io, outs[k]);
        if (gp_file_output_ok(path, why, sizeof why) != 0) {
            snprintf(r->err, sizeof r->err, "%s: %s: %s is not a file gravhost can write: %s", c->path, keys[k],
                     path, why);
            return -1;
        }
    }
    snprintf(name, sizeof name, "%s_0000.h5", c->snap_prefix);
    join(path, sizeof path, r->out_io, name);
    if (dir_writable(r, path, "output.snapshot_prefix", 0) != 0) return -1;
    if (check_intervals(r) != 0) return -1;
    if (gh_par_rank() == 0) {
        warn_zero_eps(r);
        warn_jerk_spheres(r);
    }
    return 0;
}


/* A restart continues the integrator that wrote the checkpoint: another
 * one would read its state (levels, ticks, saved values) as its own, so a
 * config naming another is refused. Settings that differ from the
 * config's are announced; the checkpoint's stay, so the continuation is
 * bit for bit the run that wrote it. */
int check_restart_integrator(runner *r, const char *path)
{
    const gh_config *c = r->cfg;
    const char *stored = gp_sim_integrator(r->sim);
    if (strcmp(stored, c->integrator) != 0) {
        snprintf(r->err, sizeof r->err, "%s:%d: integrator.name is %s, but the checkpoint %s was written by %s; an "
                 "integrator cannot change at a restart: continue with the config that wrote it, or start the run "
                 "again from its initial conditions or a snapshot", c->path, c->integrator_line, c->integrator, path,
                 stored);
        return -1;
    }
    gp_sim *want = NULL;
    if (gp_sim_new(&want) != GP_OK) return 0;   /* nothing to compare with: the checkpoint's settings stand */
    if (gp_sim_set_integrator(want, c->integrator) == GP_OK) {
        for (size_t i = 0; i < c->integ_params.n; ++i)
            gp_sim_set_integrator_param(want, c->integ_params.items[i].name, c->integ_params.items[i].value);
        /* every setting, those the config leaves at their default too: an
         * edited checkpoint may change one the config never names */
        const char *name;
        for (size_t k = 0; gp_integrator_param(c->integrator, k, &name, NULL, NULL) == GP_OK; ++k) {
            char have[64], says[64];
            if (gp_sim_get_integrator_param(want, name, says, sizeof says) != GP_OK
                || gp_sim_get_integrator_param(r->sim, name, have, sizeof have) != GP_OK || strcmp(have, says) == 0)
                continue;
            char from[300];
            snprintf(from, sizeof from, "%s has no %s: the default is", c->path, name);
            for (size_t i = 0; i < c->integ_params.n; ++i)
                if (strcmp(c->integ_params.items[i].name, name) == 0)
                    snprintf(from, sizeof from, "%s:%d says", c->path, c->integ_params.lines[i]);
            if (gh_par_rank() == 0)
                fprintf(stderr, "gravhost: note: the checkpoint holds integrator.params.%s = %s where %s %s; "
                        "continuing with the checkpoint's %s\n", name, have, from, says, have);
        }
    }
    gp_sim_free(want);
    return 0;
}

/* FNV-1a over the bytes of v: one number for what every rank's
 * checkpoint of one run at one time holds alike. */
static uint64_t fold(uint64_t h, const void *v, size_t len)
{
    const unsigned char *p = v;
    for (size_t i = 0; i < len; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int check_own_checkpoint(runner *r, const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 || !S_ISLNK(sb.st_mode)) return 0;   /* a missing file is the loader's to say */
    char to[4096];
    ssize_t k = readlink(path, to, sizeof to - 1);
    to[k > 0 ? k : 0] = '\0';
    snprintf(r->err, sizeof r->err, "the checkpoint %s is a symbolic link (to %s): gravhost never makes links in "
             "its output directory, and a restart reads none found there (docs/TRUST.md); if you trust the file "
             "it points to, name it: --restart FILE", path, k > 0 ? to : "?");
    return -1;
}

int check_same_run(runner *r, const char *path)
{
    if (gh_par_size() == 1) return 0;
    /* the run state and the clock every rank's file of one stop shares */
    const gh_state *s = &r->st;
    double t = gp_sim_time(r->sim);
    uint64_t steps = 0, h = 14695981039346656037ull;
    gp_sim_counter(r->sim, "steps", &steps);
    h = fold(h, &t, sizeof t);
    h = fold(h, &steps, sizeof steps);
    h = fold(h, &s->E0, sizeof s->E0);
    const uint64_t outputs[] = { s->log_index, s->snap_index, s->snap_count, s->ckpt_index };
    h = fold(h, outputs, sizeof outputs);
    h = fold(h, &s->switch_fired, sizeof s->switch_fired);
    h = fold(h, &s->params_from, sizeof s->params_from);
    int differ = 0;
    for (int k = 0; k < 64; k += 31) {   /* all ranks alike: max == min, in int-sized pieces */
        int piece = (int)(h >> k & 0x7fffffff);
        differ |= gh_par_max_int(piece) != -gh_par_max_int(-piece);
    }
    if (differ) {
        snprintf(r->err, sizeof r->err, "the ranks' checkpoint files (%s and its siblings) were not written together: "
                 "they differ in time, step count or run state (a rank's file from another run or another stop?); "
                 "restart from a set of files one run wrote at one stop", path);
        return -1;
    }
    /* no particle twice over the ranks (each rank's file checked its own) */
    size_t n = 0;
    uint64_t *ids = NULL;
    if (gh_par_gather(r->sim, &n, NULL, NULL, NULL, &ids, r->err, sizeof r->err) != 0) return -1;
    int rc = 0;
    for (size_t i = 1; ids && i < n && rc == 0; ++i)   /* rank 0: in id order */
        if (ids[i] == ids[i - 1]) {
            snprintf(r->err, sizeof r->err, "the ranks' checkpoint files (%s and its siblings) hold particle id %llu "
                     "on two ranks (a rank's file from another run?); restart from a set of files one run wrote at "
                     "one stop", path, (unsigned long long)ids[i]);
            rc = -1;
        }
    free(ids);
    return rc;
}
