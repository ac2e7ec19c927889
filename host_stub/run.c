/*
 * run.c — `gravhost run CONFIG`: builds the simulation from the config,
 * then walks from event to event (log lines, snapshots, checkpoints, solver
 * switches, the end), one integrator step at a time so that signals,
 * active-fraction switches and the progress line are handled at every step
 * boundary.
 */
#include "run.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diagnostics.h"
#include "gp_integrator.h"
#include "gravplug_loader.h"
#include "ic.h"
#include "memory.h"
#include "numfmt.h"
#include "par.h"
#include "progress.h"
#include "snapshot.h"

/* What gravhost itself needs to continue a run: stored in the checkpoint
 * as its caller blob. */
typedef struct gh_state {
    char magic[8];
    double E0, wall;
    uint64_t log_index, snap_index, snap_count, ckpt_index;
    uint64_t switch_fired;          /* bit i: switch i has fired */
    uint64_t interactions;          /* of the solvers before this one */
    int32_t params_from;            /* -1: solver.params; else switch index */
    char plugin[512];               /* the solver's short name (never opened) */
} gh_state;

static volatile sig_atomic_t got_signal, signal_count;

static void on_signal(int sig)
{
    got_signal = sig;
    signal_count++;
}

static int mkdir_p(const char *dir, char *err, size_t errlen)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; ; ++p) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                snprintf(err, errlen, "cannot create the output directory %s: %s", buf, strerror(errno));
                return -1;
            }
            *p = c;
            if (!c) break;
        }
    }
    return 0;
}

typedef struct runner {
    const gh_config *cfg;
    gp_sim *sim;
    gh_state st;
    gh_diag diag;
    char out_dir[2048];
    double wall0;
    char err[2048];
    const gh_run_opts *opts;
} runner;

static void join(char *buf, size_t len, const char *dir, const char *name)
{
    if (name[0] == '/') snprintf(buf, len, "%s", name);
    else snprintf(buf, len, "%s/%s", dir, name);
}

static const gh_params *params_for(const runner *r, int32_t from)
{
    if (from >= 0 && r->cfg->switches[from].has_params) return &r->cfg->switches[from].params;
    return &r->cfg->solver_params;
}

/* A switch without params of its own inherits solver.params, but only the
 * names the new plugin describes: switching cpu-tree -> cpu-direct must not
 * fail on theta. Parameters written for the plugin itself stay strict. */
static int plugin_knows(const char *plugin, const char *name)
{
    gp_plugin *pl = NULL;
    char err[256];
    if (strcmp(plugin, "auto") == 0 || gp_plugin_open(plugin, &pl, err, sizeof err) != GP_OK)
        return 1; /* let gp_sim_open_solver report it */
    size_t count = 0;
    const gp_param_info *info = gp_plugin_api(pl)->describe_params(&count);
    int known = 0;
    for (size_t i = 0; i < count && !known; ++i) known = strcmp(info[i].name, name) == 0;
    gp_plugin_close(pl);
    return known;
}

/* Range checks of the run state read from a checkpoint (its file passed
 * the library's checksums; this guards against a blob that disagrees with
 * the config). Returns 0, or -1 with a sentence naming the field. */
static int check_state(runner *r, gh_state *s, const char *path)
{
    const gh_config *c = r->cfg;
    const char *field = NULL;
    char detail[160] = "";
    s->plugin[sizeof s->plugin - 1] = '\0';
    int printable = 1;   /* a short name: no path, nothing unprintable */
    for (const unsigned char *p = (const unsigned char *)s->plugin; *p; ++p)
        if (*p < 0x20 || *p == 0x7f || *p == '/') printable = 0;
    if (s->params_from < -1 || s->params_from >= (int32_t)c->n_switches) {
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

/* The parameter a plugin's message is about: the one it quotes ('name' or
 * "name"), else the first named as a whole word; -1 if none. Quoted first,
 * so "no parameter 'nosuch'; the accepted names are: G, eps" names nosuch. */
static long blamed_param(const gh_params *p, const char *msg)
{
    for (int quote = 0; quote < 2; ++quote)
        for (size_t i = 0; i < p->n; ++i) {
            char q[300];
            snprintf(q, sizeof q, quote ? "\"%s\"" : "'%s'", p->items[i].name);
            if (strstr(msg, q)) return (long)i;
        }
    for (size_t i = 0; i < p->n; ++i) {
        size_t len = strlen(p->items[i].name);
        for (const char *m = strstr(msg, p->items[i].name); m; m = strstr(m + 1, p->items[i].name)) {
            int left = m == msg || !(isalnum((unsigned char)m[-1]) || m[-1] == '_');
            int right = !(isalnum((unsigned char)m[len]) || m[len] == '_');
            if (left && right) return (long)i;
        }
    }
    return -1;
}

/* Opens plugin spec with a params list on sim (r->sim, or a throwaway one
 * to check a switch before the run starts); on failure names the config
 * line. */
static int open_solver_on(runner *r, gp_sim *sim, const char *plugin, const gh_params *p, int inherited,
                          const char *where, int line)
{
    const char **names = calloc(p->n + 1, sizeof *names), **values = calloc(p->n + 1, sizeof *values);
    size_t k = 0;
    for (size_t i = 0; i < p->n; ++i) {
        if (inherited && !plugin_knows(plugin, p->items[i].name)) continue;
        names[k] = p->items[i].name;
        values[k++] = p->items[i].value;
    }
    gp_status st = gp_sim_open_solver(sim, plugin, k, names, values);
    free(names);
    free(values);
    if (st == GP_OK) return 0;
    const char *msg = gp_sim_last_error(sim);
    /* point at the parameter the plugin complained about, if named */
    long i = blamed_param(p, msg);
    if (i >= 0) {
        snprintf(r->err, sizeof r->err, "%s:%d: %s.params.%s: %s", r->cfg->path, p->lines[i], where,
                 p->items[i].name, msg);
        return -1;
    }
    snprintf(r->err, sizeof r->err, "%s:%d: %s.plugin: %s", r->cfg->path, line, where, msg);
    return -1;
}

static int open_solver(runner *r, const char *plugin, const gh_params *p, int inherited, const char *where, int line)
{
    return open_solver_on(r, r->sim, plugin, p, inherited, where, line);
}

static uint64_t solver_interactions(runner *r)
{
    gp_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    if (gp_sim_solver_stats(r->sim, &s) != GP_OK) return 0;
    return s.pp_interactions + s.pc_interactions;
}

static double wall_total(runner *r) { return r->st.wall + (gh_wall() - r->wall0); }

static int write_log(runner *r)
{
    return gh_diag_write(&r->diag, r->sim, gh_par_sum_u64(r->st.interactions + solver_interactions(r)),
                         wall_total(r), r->err, sizeof r->err);
}

static int write_snapshot(runner *r)
{
    /* one file: every rank's particles gathered on rank 0, which writes */
    size_t n = 0;
    double *pos = NULL, *vel = NULL, *mass = NULL;
    uint64_t *ids = NULL;
    char gerr[512];
    if (gh_par_gather(r->sim, &n, &pos, &vel, &mass, &ids, gerr, sizeof gerr) != 0) {
        snprintf(r->err, sizeof r->err, "snapshot: %s", gerr);
        return -1;
    }
    int rc = -1;
    if (gh_par_rank() != 0) {
        r->st.snap_count++;
        rc = 0;
    } else if (pos && vel && mass && ids) {
        char name[512], path[4096];
        snprintf(name, sizeof name, "%s_%04llu.h5", r->cfg->snap_prefix, (unsigned long long)r->st.snap_count);
        join(path, sizeof path, r->out_dir, name);
        char comment[256];
        snprintf(comment, sizeof comment, "gravhost: %s on %s", gp_sim_integrator(r->sim), gp_sim_solver_name(r->sim));
        gp_snapshot_extra ex;
        memset(&ex, 0, sizeof ex);
        ex.struct_size = sizeof ex;
        ex.comment = comment;
        char err[512];
        if (gp_snapshot_write_ex(path, gp_sim_time(r->sim), n, pos, vel, mass, ids, &ex, err, sizeof err) == 0) {
            r->st.snap_count++;
            rc = 0;
        } else {
            snprintf(r->err, sizeof r->err, "%s", err);
        }
    } else {
        snprintf(r->err, sizeof r->err, "snapshot: out of memory");
    }
    free(pos); free(vel); free(mass); free(ids);
    return gh_par_agree(rc, r->err, sizeof r->err);
}

static int write_checkpoint(runner *r)
{
    char base[4096], path[4200];
    join(base, sizeof base, r->out_dir, r->cfg->ckpt_name);
    gh_par_ckpt_path(base, 0, path, sizeof path, r->err, sizeof r->err);   /* one file per rank */
    gh_state s = r->st;
    /* the plugin by its short name only: a restart opens the config's */
    snprintf(s.plugin, sizeof s.plugin, "%s", gp_sim_solver_name(r->sim));
    s.wall = wall_total(r);
    s.interactions = r->st.interactions + solver_interactions(r);
    /* the restarted run's new solver instance counts from zero */
    int rc = 0;
    if (gp_sim_checkpoint_save(r->sim, path, &s, sizeof s) != GP_OK) {
        snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(r->sim));
        rc = -1;
    }
    return gh_par_agree(rc, r->err, sizeof r->err);
}

static int do_switch(runner *r, size_t i)
{
    const gh_switch *sw = &r->cfg->switches[i];
    uint64_t before = solver_interactions(r);
    char where[32];
    snprintf(where, sizeof where, "switch[%zu]", i);
    if (open_solver(r, sw->plugin, params_for(r, (int32_t)i), !sw->has_params, where, sw->line) != 0) return -1;
    r->st.interactions += before;
    r->st.switch_fired |= UINT64_C(1) << i;
    r->st.params_from = (int32_t)i;
    snprintf(r->st.plugin, sizeof r->st.plugin, "%s", sw->plugin);
    return 0;
}

static int due(double t, double interval, uint64_t index)
{
    if (!(interval > 0)) return 0;
    double at = (double)index * interval;
    return t >= at - 1e-9 * (interval < 1 ? interval : 1);
}

static uint64_t next_index(double t, double interval)
{
    return (uint64_t)floor(t / interval + 1e-9) + 1;
}

/* Log, snapshot, time switches and checkpoint due at the current time. */
static int handle_events(runner *r)
{
    const gh_config *c = r->cfg;
    double t = gp_sim_time(r->sim);
    /* interval 0: only at the start (index 0) and at the end */
    if (c->log_interval > 0 ? due(t, c->log_interval, r->st.log_index) : r->st.log_index == 0) {
        if (gh_par_agree(write_log(r), r->err, sizeof r->err) != 0) return -1;
        r->st.log_index = c->log_interval > 0 ? next_index(t, c->log_interval) : 1;
    }
    if (c->snap_interval > 0 ? due(t, c->snap_interval, r->st.snap_index) : r->st.snap_index == 0) {
        if (write_snapshot(r) != 0) return -1;
        r->st.snap_index = c->snap_interval > 0 ? next_index(t, c->snap_interval) : 1;
    }
    for (size_t i = 0; i < c->n_switches; ++i)
        if (c->switches[i].by_time && !(r->st.switch_fired >> i & 1) && t >= c->switches[i].at_time)
            if (do_switch(r, i) != 0) return -1;
    if (due(t, c->ckpt_interval, r->st.ckpt_index)) {
        r->st.ckpt_index = next_index(t, c->ckpt_interval);
        if (write_checkpoint(r) != 0) return -1;
    }
    return 0;
}

static double next_event(runner *r, double t_end)
{
    const gh_config *c = r->cfg;
    double t = t_end;
    if (c->log_interval > 0) t = fmin(t, (double)r->st.log_index * c->log_interval);
    if (c->snap_interval > 0) t = fmin(t, (double)r->st.snap_index * c->snap_interval);
    if (c->ckpt_interval > 0) t = fmin(t, (double)r->st.ckpt_index * c->ckpt_interval);
    for (size_t i = 0; i < c->n_switches; ++i)
        if (c->switches[i].by_time && !(r->st.switch_fired >> i & 1))
            t = fmin(t, c->switches[i].at_time);
    return t;
}

static int check_fraction_switches(runner *r)
{
    const gh_config *c = r->cfg;
    uint64_t active = 0;
    gp_sim_counter(r->sim, "last_active", &active);
    double frac = (double)active / (double)gp_sim_count(r->sim);
    for (size_t i = 0; i < c->n_switches; ++i)
        if (!c->switches[i].by_time && !(r->st.switch_fired >> i & 1) && frac < c->switches[i].below_fraction)
            return do_switch(r, i);
    return 0;
}

/* After SIGINT/SIGTERM: stop now if the run is at a solver resync point
 * (there the checkpoint continues bit for bit, gp_integrator.h), else say
 * once that it stops at the next one (at most one dt_max of simulated time
 * away). A second signal stops at once. */
static int stop_now(runner *r, gh_progress *prog)
{
    static int announced;
    if (gp_sim_at_resync_point(r->sim) || signal_count > 1) return 1;
    if (!announced && gh_par_rank() == 0) {
        char dt[64] = "?";
        gp_sim_get_integrator_param(r->sim, "dt", dt, sizeof dt);
        gh_progress_finish(prog);
        fprintf(stderr, "gravhost: signal %d at t = %.10g: stopping at the next dt_max boundary (at most dt = %s later), "
                "where the checkpoint continues bit for bit; signal again to stop at once\n",
                (int)got_signal, gp_sim_time(r->sim), dt);
        announced = 1;
    }
    return 0;
}

/* Sets up particles and the integrator from the config (a fresh run). */
static int setup_fresh(runner *r)
{
    const gh_config *c = r->cfg;
    if (!c->have_ic) {
        snprintf(r->err, sizeof r->err, "%s: no initial_conditions group: add one, or use --restart CHECKPOINT", c->path);
        return -1;
    }
    /* relative file paths are relative to the config file */
    gp_param *opts = calloc(c->ic_options.n + 1, sizeof *opts);
    char **owned = calloc(c->ic_options.n + 1, sizeof *owned);
    for (size_t i = 0; i < c->ic_options.n; ++i) {
        opts[i] = c->ic_options.items[i];
        if ((strcmp(opts[i].name, "path") == 0 || strcmp(opts[i].name, "file") == 0) && opts[i].value[0] != '/') {
            size_t len = strlen(c->dir) + strlen(opts[i].value) + 2;
            owned[i] = malloc(len);
            snprintf(owned[i], len, "%s/%s", c->dir, opts[i].value);
            opts[i].value = owned[i];
        }
    }
    gp_ic_opts io = { opts, c->ic_options.n };
    char err[1024];
    /* refuse what cannot fit before allocating any of it (n = 0: the file's
     * count, checked once the file is read); under MPI a rank holds its share */
    size_t share = c->n > 0 ? ((size_t)c->n + (size_t)gh_par_size() - 1) / (size_t)gh_par_size() : 0;
    if (c->n > 0 && gh_memory_check(share, gp_sim_solver_name(r->sim), err, sizeof err) != 0) {
        snprintf(r->err, sizeof r->err, "%s:%d: initial_conditions.n: %s", c->path, c->ic_line, err);
        for (size_t i = 0; i < c->ic_options.n; ++i) free(owned[i]);
        free(owned);
        free(opts);
        return -1;
    }
    /* under MPI each rank makes its slice of the ICs and keeps its share */
    int rc = gh_par_set_ic(r->sim, c->model, (size_t)c->n, c->seed, &io, err, sizeof err);
    for (size_t i = 0; i < c->ic_options.n; ++i) free(owned[i]);
    free(owned);
    free(opts);
    if (rc != 0) {
        snprintf(r->err, sizeof r->err, "%s:%d: initial_conditions: %s", c->path, c->ic_line, err);
        return -1;
    }
    if (gp_sim_set_integrator(r->sim, c->integrator) != GP_OK) {
        snprintf(r->err, sizeof r->err, "%s:%d: integrator.name: %s", c->path, c->integrator_line, gp_sim_last_error(r->sim));
        return -1;
    }
    for (size_t i = 0; i < c->integ_params.n; ++i)
        if (gp_sim_set_integrator_param(r->sim, c->integ_params.items[i].name, c->integ_params.items[i].value) != GP_OK) {
            snprintf(r->err, sizeof r->err, "%s:%d: integrator.params.%s: %s", c->path, c->integ_params.lines[i],
                     c->integ_params.items[i].name, gp_sim_last_error(r->sim));
            return -1;
        }
    return 0;
}

/* ---- checks before t = 0 ---------------------------------------------------
 * Everything that would otherwise fail hours into a run: the switches'
 * plugins and parameters, the output directories, output intervals the
 * integrator cannot resolve. */

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
        if (gp_sim_new(&probe) != GP_OK) return 0; /* out of memory: the switch itself will say */
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
    double floor_dt = smallest_step(r, what, sizeof what);
    if (!(floor_dt > 0)) return 0;
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
    if (strcmp(eps_s, "solver") == 0) {
        from = "the solver's eps";
        if (gp_sim_get_solver_param(r->sim, "eps", eps_s, sizeof eps_s) != GP_OK) return;
    }
    char *end;
    double eps = strtod(eps_s, &end);
    if (end == eps_s || eps != 0) return;
    fprintf(stderr, "gravhost: warning: %s is 0, so the time-step criterion \"%s\" uses eta*|v|/|a| in place "
            "of eta*sqrt(eps/|a|) (docs/CONFIG.md); set solver.params.eps (or integrator.params.eps), or "
            "criterion = \"velocity\" to choose it openly\n", from, crit);
}

static int preflight(runner *r)
{
    const gh_config *c = r->cfg;
    char path[4096], name[600];
    if (check_switches(r) != 0) return -1;
    join(path, sizeof path, r->out_dir, c->ckpt_name);
    if (dir_writable(r, path, "output.checkpoint", 0) != 0) return -1;
    snprintf(name, sizeof name, "%s_0000.h5", c->snap_prefix);
    join(path, sizeof path, r->out_dir, name);
    if (dir_writable(r, path, "output.snapshot_prefix", 0) != 0) return -1;
    if (check_intervals(r) != 0) return -1;
    if (gh_par_rank() == 0) warn_zero_eps(r);
    return 0;
}

/* The command that continues this run: every option it was given. */
static void restart_command(runner *r, char *buf, size_t len)
{
    const gh_run_opts *o = r->opts;
    const char *args[8];
    char t_end[64];
    int n = 0;
    args[n++] = r->cfg->path;
    args[n++] = "--restart";
    if (o->out_dir) { args[n++] = "--output"; args[n++] = o->out_dir; }
    if (o->have_t_end) { args[n++] = "--t-end"; args[n++] = gh_fmt_double(t_end, sizeof t_end, o->t_end); }
    if (o->progress) args[n++] = o->progress > 0 ? "--progress" : "--no-progress";
    size_t k = gh_par_size() > 1 ? (size_t)snprintf(buf, len, "mpirun -np %d gravhost-mpi run", gh_par_size())
                                 : (size_t)snprintf(buf, len, "gravhost run");
    for (int i = 0; i < n && k < len; ++i) {
        int plain = args[i][0] != '\0';
        for (const char *p = args[i]; *p; ++p)
            if (!(isalnum((unsigned char)*p) || strchr("/._-+=:,@%", *p))) plain = 0;
        if (plain) {
            k += (size_t)snprintf(buf + k, len - k, " %s", args[i]);
            continue;
        }
        /* single quotes, with each ' written as '\'' */
        k += (size_t)snprintf(buf + k, len - k, " '");
        for (const char *p = args[i]; *p && k < len; ++p)
            k += (size_t)snprintf(buf + k, len - k, *p == '\'' ? "'\\''" : "%c", *p);
        if (k < len) k += (size_t)snprintf(buf + k, len - k, "'");
    }
}

/* A fatal error after the run started: save the state first, so the time
 * spent is not lost. A failed integrator step may leave the particles
 * between two times, so that state goes to CHECKPOINT.failed (for a look,
 * not to continue) and the last good checkpoint stays as it was. */
static void save_on_failure(runner *r, int in_step)
{
    char msg[2048], path[4096], cmd[4096];
    snprintf(msg, sizeof msg, "%s", r->err);
    join(path, sizeof path, r->out_dir, r->cfg->ckpt_name);
    int ok;
    if (in_step) {
        size_t len = strlen(path);
        snprintf(path + len, sizeof path - len, ".failed");
        gh_state s = r->st;
        snprintf(s.plugin, sizeof s.plugin, "%s", gp_sim_solver_name(r->sim));
        s.wall = wall_total(r);
        char mine[4200];
        gh_par_ckpt_path(path, 0, mine, sizeof mine, r->err, sizeof r->err);
        ok = gp_sim_checkpoint_save(r->sim, mine, &s, sizeof s) == GP_OK;
        if (!ok) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(r->sim));
    } else {
        ok = write_checkpoint(r) == 0;
    }
    if (!ok) {
        char why[1024];
        snprintf(why, sizeof why, "%s", r->err);
        snprintf(r->err, sizeof r->err, "%s (and no checkpoint could be written: %s)", msg, why);
    } else if (in_step) {
        snprintf(r->err, sizeof r->err, "%s (the state at the failure was written to %s for inspection)", msg, path);
    } else {
        restart_command(r, cmd, sizeof cmd);
        snprintf(r->err, sizeof r->err, "%s (a checkpoint at t = %.10g was written to %s: fix the cause, then "
                 "continue with: %s)", msg, gp_sim_time(r->sim), path, cmd);
    }
}

static void describe(runner *r, char *meta, size_t len)
{
    const gh_config *c = r->cfg;
    int k = snprintf(meta, len, "# gravhost %s\n# config: %s\n# plugin: %s (asked: %s)\n# integrator: %s",
                     GP_VERSION, c->path, gp_sim_solver_name(r->sim), r->st.plugin, gp_sim_integrator(r->sim));
    for (size_t i = 0; gp_integrator_param(gp_sim_integrator(r->sim), i, NULL, NULL, NULL) == GP_OK && k > 0 && (size_t)k < len; ++i) {
        const char *name;
        char val[64], shortest[64];
        gp_integrator_param(gp_sim_integrator(r->sim), i, &name, NULL, NULL);
        if (gp_sim_get_integrator_param(r->sim, name, val, sizeof val) == GP_OK)
            k += snprintf(meta + k, len - (size_t)k, " %s=%s", name,
                          gh_fmt_number_text(shortest, sizeof shortest, val));
    }
    if (k > 0 && (size_t)k < len)
        snprintf(meta + k, len - (size_t)k, "\n# n: %llu\n# units: N-body (G = 1)\n",
                 (unsigned long long)gh_par_sum_u64(gp_sim_count(r->sim)));
}

int gh_run(const gh_config *cfg, const gh_run_opts *o)
{
    runner R, *r = &R;
    memset(r, 0, sizeof *r);
    r->cfg = cfg;
    r->opts = o;
    r->wall0 = gh_wall();
    memcpy(r->st.magic, "GHSTATE1", 8);
    r->st.params_from = -1;
    snprintf(r->st.plugin, sizeof r->st.plugin, "%s", cfg->plugin);
    snprintf(r->out_dir, sizeof r->out_dir, "%s", o->out_dir ? o->out_dir : cfg->out_dir);
    double t_end = o->have_t_end ? o->t_end : cfg->t_end;
    int rc = 1;
    gp_status st = GP_OK;
    gh_progress prog;
    memset(&prog, 0, sizeof prog);

    if (gp_sim_new(&r->sim) != GP_OK) {
        fprintf(stderr, "gravhost: %s\n", gp_sim_last_error(NULL));
        return 1;
    }
    gh_par_attach(r->sim);   /* under MPI: the ranks' solver calls agree */
    /* Every check and action that can fail on one rank alone goes through
     * AGREED: under MPI all ranks then fail together, with the lowest
     * failing rank's sentence (one process: a plain test). */
#define AGREED(x) (gh_par_agree((x) != 0 ? -1 : 0, r->err, sizeof r->err) != 0)
    if (gh_par_check_run(cfg->plugin, cfg->integrator, cfg->n_switches, r->err, sizeof r->err) != 0) goto out;
    if (AGREED(mkdir_p(r->out_dir, r->err, sizeof r->err))) goto out;

    char ckpt_path[4200];
    if (o->restart) {
        char base[4096];
        if (o->restart[0]) snprintf(base, sizeof base, "%s", o->restart);
        else join(base, sizeof base, r->out_dir, cfg->ckpt_name);
        if (AGREED(gh_par_ckpt_path(base, 1, ckpt_path, sizeof ckpt_path, r->err, sizeof r->err))) goto out;
        /* peek at the blob first: the solver in use at the checkpoint */
        gh_state s;
        size_t len = 0;
        gp_sim *probe = NULL;
        gp_sim_new(&probe);
        st = gp_sim_checkpoint_load(probe, ckpt_path, &s, sizeof s, &len);
        if (st != GP_OK) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(probe));
        gp_sim_free(probe);
        if (AGREED(st)) goto out;
        int bad = len != sizeof s || memcmp(s.magic, "GHSTATE1", 8) != 0;
        if (bad) snprintf(r->err, sizeof r->err, "%s was not written by gravhost run (no run state in it)", ckpt_path);
        if (AGREED(bad)) goto out;
        if (AGREED(check_state(r, &s, ckpt_path))) goto out;
        r->st = s;
        /* The config names the plugin (solver.plugin, or the switch in use);
         * the checkpoint's short name is never opened. */
        const char *plugin = s.params_from >= 0 ? cfg->switches[s.params_from].plugin : cfg->plugin;
        snprintf(r->st.plugin, sizeof r->st.plugin, "%s", plugin);
        const char *where = s.params_from >= 0 ? "switch" : "solver";
        int inherited = s.params_from >= 0 && !cfg->switches[s.params_from].has_params;
        int line = s.params_from >= 0 ? cfg->switches[s.params_from].line : cfg->plugin_line;
        if (AGREED(open_solver(r, plugin, params_for(r, s.params_from), inherited, where, line))) goto out;
        if (strcmp(s.plugin, gp_sim_solver_name(r->sim)) != 0 && gh_par_rank() == 0)
            fprintf(stderr, "gravhost: note: the checkpoint was written with %s; continuing with %s, as %s says\n",
                    s.plugin, gp_sim_solver_name(r->sim), cfg->path);
        st = gp_sim_checkpoint_load(r->sim, ckpt_path, NULL, 0, NULL);
        if (st != GP_OK) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(r->sim));
        if (AGREED(st)) goto out;
    } else {
        if (AGREED(open_solver(r, cfg->plugin, &cfg->solver_params, 0, "solver", cfg->plugin_line))) goto out;
        if (AGREED(setup_fresh(r))) goto out;
    }
    if (gp_sim_set_solver_path(r->sim, cfg->solver_path) != GP_OK) {
        snprintf(r->err, sizeof r->err, "%s:%d: solver.path: %s", cfg->path, cfg->solver_path_line,
                 gp_sim_last_error(r->sim));
        goto out;
    }

    if (AGREED(preflight(r))) goto out;

    char log_path[4096], meta[2048];
    join(log_path, sizeof log_path, r->out_dir, cfg->log_name);
    describe(r, meta, sizeof meta);
    /* the log is rank 0's alone */
    if (AGREED(gh_par_rank() == 0 && gh_diag_open(&r->diag, log_path, o->restart != NULL, gp_sim_time(r->sim), meta,
                                                  cfg->fractions, cfg->n_fractions, r->err, sizeof r->err) != 0))
        goto out;
    if (!o->restart) {
        /* start the integrator now (initial forces, levels), so the t = 0
         * log line shows the initial level distribution */
        st = gp_sim_step(r->sim, gp_sim_time(r->sim));
        if (st != GP_OK) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(r->sim));
        if (AGREED(st)) goto out;
        gh_diag_values v;
        if (AGREED(gh_diag_measure(r->sim, cfg->fractions, cfg->n_fractions, &v, r->err, sizeof r->err))) goto out;
        r->st.E0 = v.E;
    }
    r->diag.E0 = r->st.E0;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int show = gh_par_rank() == 0 && (o->progress > 0 || (o->progress == 0 && cfg->progress == 1)
               || (o->progress == 0 && cfg->progress == 0 && isatty(2)));
    unsigned long long n_all = gh_par_sum_u64(gp_sim_count(r->sim));
    uint64_t steps = 0;
    gp_sim_counter(r->sim, "steps", &steps);
    gh_progress_start(&prog, show, gp_sim_time(r->sim), t_end, steps);
    if (show)
        fprintf(stderr, "gravhost: %llu particles%s, %s on %s, t = %g to %g, output in %s/\n", n_all,
                gh_par_size() > 1 ? " over the ranks" : "",
                gp_sim_integrator(r->sim), gp_sim_solver_name(r->sim), gp_sim_time(r->sim), t_end, r->out_dir);

    for (;;) {
        /* under MPI: particles migrate at every output time (synchronised) */
        if (gh_par_migrate(r->sim, r->err, sizeof r->err) != 0) goto out;
        if (handle_events(r) != 0) { save_on_failure(r, 0); goto out; }
        double t = gp_sim_time(r->sim);
        if (t >= t_end) break;
        double target = next_event(r, t_end);
        if (target <= t) target = t_end;   /* nothing ahead but the end */
        while (gp_sim_time(r->sim) < target) {
            st = gp_sim_step(r->sim, target);
            if (st != GP_OK)
                snprintf(r->err, sizeof r->err, "at t = %.10g: %s", gp_sim_time(r->sim), gp_sim_last_error(r->sim));
            if (AGREED(st)) {
                save_on_failure(r, 1);
                goto out;
            }
            if (cfg->n_switches && check_fraction_switches(r) != 0) { save_on_failure(r, 0); goto out; }
            gp_sim_counter(r->sim, "steps", &steps);
            gh_progress_update(&prog, gp_sim_time(r->sim), steps, 0);
            /* and between outputs at resync points (gh_par_migrate skips
             * others): every 16th shared step, every dt_max boundary of a
             * block scheme or top step of hold (each many force calls).
             * A rule of the state alone, so a restarted run migrates where
             * the first did. */
            const char *integ = gp_sim_integrator(r->sim);
            int long_steps = strncmp(integ, "block-", 6) == 0 || strncmp(integ, "hold", 4) == 0;
            if (gh_par_size() > 1 && (steps % 16 == 0 || long_steps)
                && gh_par_migrate(r->sim, r->err, sizeof r->err) != 0) goto out;
            if (gh_par_size() > 1) {   /* a signal seen by any rank stops them all at the same step */
                got_signal = gh_par_max_int(got_signal);
                signal_count = gh_par_max_int(signal_count);
            }
            if (got_signal && stop_now(r, &prog)) {
                gh_progress_finish(&prog);
                int resync = gp_sim_at_resync_point(r->sim);
                if (write_checkpoint(r) != 0) goto out;
                char cp[4096], cmd[4096];
                join(cp, sizeof cp, r->out_dir, cfg->ckpt_name);
                restart_command(r, cmd, sizeof cmd);
                if (gh_par_rank() == 0)
                fprintf(stderr, "gravhost: stopped by signal %d at t = %.10g; checkpoint written to %s "
                        "(continue with: %s)\n", (int)got_signal, gp_sim_time(r->sim), cp, cmd);
                if (!resync && gh_par_rank() == 0)
                    fprintf(stderr, "gravhost: a second signal stopped the run between resync points: the continuation "
                            "agrees with an uninterrupted run to the solver's accuracy, not bit for bit\n");
                rc = 128 + got_signal;
                goto out_quiet;
            }
        }
    }
    /* the end: a last log line and snapshot unless the intervals gave them */
    {
        double t = gp_sim_time(r->sim);
        int logged_now = cfg->log_interval > 0 && fabs(t - (double)(r->st.log_index - 1) * cfg->log_interval) < 1e-9 * (1 + t);
        if (!logged_now && AGREED(write_log(r))) { save_on_failure(r, 0); goto out; }
        int snapped_now = cfg->snap_interval > 0 && fabs(t - (double)(r->st.snap_index - 1) * cfg->snap_interval) < 1e-9 * (1 + t);
        if (!snapped_now && write_snapshot(r) != 0) { save_on_failure(r, 0); goto out; }
        if (write_checkpoint(r) != 0) goto out;
    }
    gh_progress_update(&prog, gp_sim_time(r->sim), steps, 1);
    gh_progress_finish(&prog);
    if (show) {
        uint64_t fc = 0;
        gp_sim_counter(r->sim, "force_calls", &fc);
        fprintf(stderr, "gravhost: done: t = %g, %llu steps, %llu force calls, %.1f s; log %s/%s, %llu snapshots\n",
                gp_sim_time(r->sim), (unsigned long long)steps, (unsigned long long)fc, wall_total(r),
                r->out_dir, cfg->log_name, (unsigned long long)r->st.snap_count);
    }
    rc = 0;
    goto out_quiet;
out:
    gh_progress_finish(&prog);
    if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", r->err);   /* every rank has the same sentence */
out_quiet:
    gh_diag_close(&r->diag);
    gp_sim_free(r->sim);
    return rc;
}
