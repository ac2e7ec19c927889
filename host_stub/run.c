/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c — `gravhost run CONFIG`: builds the simulation from the config,
 * then walks from event to event (log lines, snapshots, checkpoints, solver
 * switches, the end), one integrator step at a time so that signals,
 * active-fraction switches and the progress line are handled at every step
 * boundary. This file is the main loop; the checks before t = 0, the
 * output and the solver are its parts (runner.h).
 */
#include "run.h"
#include "runner.h"

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
#include "gp_sim.h"
#include "gravplug_loader.h"
#include "ic.h"
#include "memory.h"
#include "numfmt.h"
#include "par.h"
#include "progress.h"
#include "snapshot.h"

static volatile sig_atomic_t got_signal, signal_count;
static volatile sig_atomic_t setting_up;  /* before the first step: reading, building, first forces */
static int says;             /* this process prints (rank 0) */
static double signal_wall;   /* gh_wall() when the first signal was seen */
static int announced;        /* the stop at the next resync point was said */

/* While the run sets up (a large model's first forces can take minutes) a
 * signal is kept for the start, where the run stops with a checkpoint at
 * its first time; a second one ends the process at once (the default
 * action). Only async-signal-safe calls here. */
static void on_signal(int sig)
{
    got_signal = sig;
    signal_count++;
    if (!setting_up) return;
    if (signal_count > 1) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    static const char msg[] = "gravhost: signal while setting up: the run stops with a checkpoint once its first "
                              "forces are done; signal again to stop at once, without one\n";
    if (says) (void)!write(2, msg, sizeof msg - 1);
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;   /* a read in the setup (a pipe, a slow file system) goes on */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);   /* the terminal or the session went away */
    /* a launcher may start us with them blocked (the mask survives exec):
     * then the run would never hear its stop signal */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGHUP);
    sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
    /* a file over the size limit (ulimit -f): the write fails with EFBIG
     * and says so, instead of the signal killing the run unsaid */
    signal(SIGXFSZ, SIG_IGN);
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

/* Under MPI, balances the ranks (gh_par_migrate) unless no step was taken
 * since the last migration: the migration at a resync point that is also
 * an output time would repeat the same rows on the same ranks. Its time
 * counts as stepping. */
static int migrate(runner *r)
{
    uint64_t steps = 0;
    gp_sim_counter(r->sim, "steps", &steps);
    if (r->migrated && steps == r->migrated_at) return 0;
    double t0 = gh_wall();
    int moved = gh_par_migrate(r->sim, r->err, sizeof r->err);
    if (moved < 0) return -1;
    double took = gh_wall() - t0;
    r->migrated = 1;
    r->migrated_at = steps;
    r->stepping += took;
    if (moved) {
        r->migrating += took;
        r->migrations++;
    }
    return 0;
}

/* A plugin's log line on stderr (gravhost run --verbose / --debug): its
 * errors stay out, gravhost says them in its own sentences. Under MPI
 * each line names its rank. */
static void plugin_log(void *user, int level, const char *message)
{
    const gh_run_opts *o = user;
    if (level == GP_LOG_ERROR || level > o->log_level) return;
    gh_progress_break();
    if (gh_par_size() > 1) fprintf(stderr, "gravhost: rank %d: %s\n", gh_par_rank(), message);
    else fprintf(stderr, "gravhost: %s\n", message);
}

/* A failure (failed != 0) agreed over the ranks: 0 when none failed, -1
 * with the chosen sentence in r->err otherwise. A rank whose library call
 * failed only because another rank did says so, so that the other's
 * sentence, which says why, is the one reported. */
static int agreed(runner *r, int failed)
{
    return gh_par_agree(gh_par_rc(r->sim, failed), r->err, sizeof r->err);
}

/* What handle_events does at t, each a rule of the run state alone.
 * interval 0: only at the start (index 0) and at the end. */
static int log_due(const runner *r, double t)
{
    const gh_config *c = r->cfg;
    return c->log_interval > 0 ? due(t, c->log_interval, r->st.log_index) : r->st.log_index == 0;
}

static int snap_due(const runner *r, double t)
{
    const gh_config *c = r->cfg;
    return c->snap_interval > 0 ? due(t, c->snap_interval, r->st.snap_index) : r->st.snap_index == 0;
}

static int switch_due(const runner *r, size_t i, double t)
{
    const gh_switch *w = &r->cfg->switches[i];
    return w->by_time && !(r->st.switch_fired >> i & 1) && t >= w->at_time;
}

static int events_due(const runner *r, double t)
{
    int any = log_due(r, t) || snap_due(r, t) || due(t, r->cfg->ckpt_interval, r->st.ckpt_index);
    for (size_t i = 0; i < r->cfg->n_switches; ++i) any |= switch_due(r, i, t);
    return any;
}

/* Log, snapshot, time switches and checkpoint due at the current time. */
static int handle_events(runner *r)
{
    const gh_config *c = r->cfg;
    double t = gp_sim_time(r->sim);
    if (log_due(r, t)) {
        if (agreed(r, write_log(r) != 0) != 0) return -1;
        r->st.log_index = c->log_interval > 0 ? next_index(t, c->log_interval) : 1;
    }
    if (snap_due(r, t)) {
        if (write_snapshot(r) != 0) return -1;
        r->st.snap_index = c->snap_interval > 0 ? next_index(t, c->snap_interval) : 1;
    }
    for (size_t i = 0; i < c->n_switches; ++i)
        if (switch_due(r, i, t) && do_switch(r, i) != 0) return -1;
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

/* After SIGINT/SIGTERM/SIGHUP: stop now if the run is at a solver resync
 * point (there the checkpoint continues bit for bit, gp_sim.h), else
 * say once that it stops at the next one (at most one dt_max of simulated
 * time away). A second signal, or run.signal_grace seconds of wall time
 * without a resync point, stops at once: a batch scheduler's SIGKILL
 * follows its SIGTERM, and a checkpoint that agrees to the solver's
 * accuracy beats none. Under MPI the ranks agree on the answer. */
static int stop_now(runner *r, gh_progress *prog)
{
    if (signal_wall == 0) signal_wall = gh_wall();
    int late = gh_par_max_int(gh_wall() - signal_wall > r->cfg->signal_grace);
    if (gp_sim_at_resync_point(r->sim) || signal_count > 1 || late) return 1;
    if (!announced && gh_par_rank() == 0) {
        char dt[64] = "?";
        gp_sim_get_integrator_param(r->sim, "dt", dt, sizeof dt);
        gh_progress_finish(prog);
        fprintf(stderr, "gravhost: signal %d at t = %.10g: stopping at the next dt_max boundary (at most dt = %s later, "
                "or %g s from now), where the checkpoint continues bit for bit; signal again to stop at once\n",
                (int)got_signal, gp_sim_time(r->sim), dt, r->cfg->signal_grace);
        announced = 1;
    }
    return 0;
}

/* After a step, or after the setup: a signal seen by any rank stops them
 * all here when stop_now says so, with a checkpoint. 1: stopped (exit
 * status 128 + the signal), 0: go on, -1: the checkpoint failed (r->err). */
static int signal_stop(runner *r, gh_progress *prog)
{
    const gh_config *cfg = r->cfg;
    if (gh_par_size() > 1) {
        got_signal = gh_par_max_int(got_signal);
        signal_count = gh_par_max_int(signal_count);
    }
    if (!got_signal || !stop_now(r, prog)) return 0;
    /* A stop on an output time comes before the loop's top has migrated
     * there: migrate as the run would have gone on to, so the checkpoint
     * holds the split it steps on from (the restart does not migrate at
     * the time it starts from) */
    if (gh_par_size() > 1 && events_due(r, gp_sim_time(r->sim)) && migrate(r) != 0) return -1;
    gh_progress_finish(prog);
    int resync = gp_sim_at_resync_point(r->sim);
    if (write_checkpoint(r) != 0) return -1;
    char cp[4096], cmd[4096];
    join(cp, sizeof cp, r->out_dir, cfg->ckpt_name);
    restart_command(r, cmd, sizeof cmd);
    if (gh_par_rank() == 0)
        fprintf(stderr, "gravhost: stopped by signal %d at t = %.10g; checkpoint written to %s "
                "(continue with: %s)\n", (int)got_signal, gp_sim_time(r->sim), cp, cmd);
    if (!resync && gh_par_rank() == 0)
        fprintf(stderr, "gravhost: the run stopped between resync points (a second signal, or run.signal_grace "
                "= %g s passed): the continuation agrees with an uninterrupted run to the solver's "
                "accuracy, not bit for bit\n", cfg->signal_grace);
    return 1;
}

/* A checkpoint set whose renames were cut short (a rank stopped after the
 * ranks agreed that every FILE.new was complete, before its own rename:
 * write_checkpoint) holds the new set under FILE on some ranks and under
 * FILE.new on the others. After the set under FILE was found mixed, each
 * rank with a FILE.new loads it instead; when that set is one stop's, the
 * renames are finished and the run continues from it. 0, or -1 with
 * check_same_run's first sentence (collective). */
static int take_cut_short_set(runner *r, const char *path)
{
    char mixed[sizeof r->err], staged[4300];
    snprintf(mixed, sizeof mixed, "%s", r->err);
    snprintf(staged, sizeof staged, "%s.new", path);
    int have = access(staged, F_OK) == 0, rc = 0;
    if (!gh_par_max_int(have)) return -1;
    if (have) {
        gh_state s;
        size_t len = 0;
        if (gp_sim_checkpoint_load(r->sim, staged, &s, sizeof s, &len) != GP_OK || len != sizeof s
            || memcmp(s.magic, "GHSTATE1", 8) != 0)
            rc = -1;
        else {
            snprintf(s.plugin, sizeof s.plugin, "%s", r->st.plugin);   /* the config's, as opened */
            r->st = s;
        }
    }
    if (agreed(r, rc) != 0 || agreed(r, check_same_run(r, have ? staged : path) != 0) != 0) {
        snprintf(r->err, sizeof r->err, "%s", mixed);
        return -1;
    }
    rc = have && rename(staged, path) != 0;
    if (rc) snprintf(r->err, sizeof r->err, "cannot rename %s to %s: %s", staged, path, strerror(errno));
    if (agreed(r, rc) != 0) return -1;
    if (gh_par_rank() == 0)
        fprintf(stderr, "gravhost: note: the checkpoint set %s was cut short between the ranks' renames; the new "
                "set (t = %.10g) was complete on every rank, and the run continues from it\n", path,
                gp_sim_time(r->sim));
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
    if (c->n > 0 && gh_memory_check(share, gp_sim_solver_name(r->sim), gp_sim_solver_capabilities(r->sim),
                                    err, sizeof err) != 0) {
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

int gh_run(const gh_config *cfg, const gh_run_opts *o)
{
    runner R, *r = &R;
    memset(r, 0, sizeof *r);
    r->out_fd = -1;
    /* a run starts with no signal seen: a caller may run one after another
     * in one process (tests/fuzz/fuzz-gravhost-restart.c) */
    got_signal = 0;
    signal_count = 0;
    announced = 0;
    signal_wall = 0;
    r->cfg = cfg;
    r->opts = o;
    r->wall0 = gh_wall();
    memcpy(r->st.magic, "GHSTATE1", 8);
    r->st.params_from = -1;
    snprintf(r->st.plugin, sizeof r->st.plugin, "%s", cfg->plugin);
    const char *dir = o->out_dir ? o->out_dir : cfg->out_dir;
    if (strlen(dir) > GH_MAX_DIR || !dir[0]) {
        if (gh_par_rank() == 0)   /* every rank has the same arguments and config */
            fprintf(stderr, "gravhost: the output directory %s%.60s%s is %zu characters long; give one of 1 to %d\n",
                    dir[0] ? "\"" : "", dir, strlen(dir) > 60 ? "...\"" : dir[0] ? "\"" : "", strlen(dir), GH_MAX_DIR);
        return 1;
    }
    snprintf(r->out_dir, sizeof r->out_dir, "%s", dir);
    says = gh_par_rank() == 0;
    setting_up = 1;   /* until the first step; every return from here clears it */
    catch_signals();
    double t_end = o->have_t_end ? o->t_end : cfg->t_end;
    int rc = 1;
    gp_status st = GP_OK;
    gh_progress prog;
    memset(&prog, 0, sizeof prog);

    /* agreed, like every failure that can strike one rank alone: a rank
     * that left here would leave the others waiting in their first
     * collective call */
    st = gp_sim_new(&r->sim);
    if (st != GP_OK) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(NULL));
    if (agreed(r, st != GP_OK) != 0) {
        if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", r->err);
        gp_sim_free(r->sim);
        setting_up = 0;
        return 1;
    }
    gh_par_attach(r->sim);   /* under MPI: the ranks' solver calls agree */
    if (o->log_level > 0) gp_sim_set_log(r->sim, plugin_log, (void *)o);
    /* Every check and action that can fail on one rank alone goes through
     * AGREED: under MPI all ranks then fail together, with the lowest
     * failing rank's sentence (one process: a plain test). */
#define AGREED(x) (agreed(r, (x) != 0) != 0)
    if (gh_par_check_run(cfg->plugin, cfg->integrator, cfg->n_switches, r->err, sizeof r->err) != 0) goto out;
    if (AGREED(open_out_dir(r))) goto out;

    char ckpt_path[4200];
    if (o->restart) {
        char base[4096];
        if (o->restart[0]) snprintf(base, sizeof base, "%s", o->restart);
        else join(base, sizeof base, r->out_io, cfg->ckpt_name);
        if (AGREED(gh_par_ckpt_path(base, 1, ckpt_path, sizeof ckpt_path, r->err, sizeof r->err))) goto out;
        if (!o->restart[0] && AGREED(check_own_checkpoint(r, ckpt_path))) goto out;
        /* peek at the blob first: the solver in use at the checkpoint */
        gh_state s;
        size_t len = 0;
        gp_sim *probe = NULL;
        gp_sim_new(&probe);
        st = gp_sim_checkpoint_load(probe, ckpt_path, &s, sizeof s, &len);
        if (st != GP_OK) snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(probe));
        const double t_ckpt = gp_sim_time(probe);
        gp_sim_free(probe);
        if (AGREED(st)) goto out;
        int bad = len != sizeof s || memcmp(s.magic, "GHSTATE1", 8) != 0;
        if (bad) snprintf(r->err, sizeof r->err, "%s was not written by gravhost run (no run state in it)", ckpt_path);
        if (AGREED(bad)) goto out;
        if (AGREED(check_state(r, &s, ckpt_path, t_ckpt))) goto out;
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
        /* and still none: a link swapped in while the file was read */
        if (!o->restart[0] && AGREED(check_own_checkpoint(r, ckpt_path))) goto out;
        if (AGREED(check_restart_integrator(r, ckpt_path))) goto out;
        if (AGREED(check_same_run(r, ckpt_path)) && take_cut_short_set(r, ckpt_path) != 0) goto out;
        /* each rank keeps the particles its file holds: the split the run
         * that went on had at this step (no migration until its next one) */
        r->migrated = 1;
        gp_sim_counter(r->sim, "steps", &r->migrated_at);
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
    join(log_path, sizeof log_path, r->out_io, cfg->log_name);
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
        /* under MPI: particles migrate at every output time (synchronised),
         * but not at an end that is no output time: a run that goes on past
         * it does not migrate there, and the checkpoint written at the end
         * must hold the ranks' split that run has (mpi-tree's sums depend on
         * it), so that the restart continues it bit for bit */
        double t_now = gp_sim_time(r->sim);
        if ((t_now < t_end || events_due(r, t_now)) && migrate(r) != 0) goto out;
        if (handle_events(r) != 0) { save_on_failure(r, 0); goto out; }
        int first = setting_up;   /* the same on every rank */
        setting_up = 0;
        double t = gp_sim_time(r->sim);
        if (t >= t_end) break;
        if (first) {   /* a signal during the setup stops the run here, at its start */
            int stopped = signal_stop(r, &prog);
            if (stopped < 0) goto out;
            if (stopped > 0) { rc = 128 + got_signal; goto out_quiet; }
        }
        double target = next_event(r, t_end);
        if (target <= t) target = t_end;   /* nothing ahead but the end */
        while (gp_sim_time(r->sim) < target) {
            double t_step = gh_wall();
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
             * scheme whose step is a whole top step (each many force calls).
             * A rule of the state alone, so a restarted run migrates where
             * the first did. */
            unsigned flags = 0;
            (void)gp_integrator_flags(gp_sim_integrator(r->sim), &flags);
            int long_steps = (flags & GP_SCHEME_TOP_STEPS) != 0;
            r->stepping += gh_wall() - t_step;
            if (gh_par_size() > 1 && (steps % 16 == 0 || long_steps) && migrate(r) != 0) goto out;
            int stop = signal_stop(r, &prog);
            if (stop < 0) goto out;
            if (stop > 0) { rc = 128 + got_signal; goto out_quiet; }
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
        /* the steps' own time apart, for timings that leave setup and output
         * out; under MPI the migrations' share of it, what balancing the
         * ranks costs (bench/results/mpi-tree/raw/mpi-tree.md) */
        char mig[96] = "";
        if (gh_par_size() > 1)
            snprintf(mig, sizeof mig, ", %.2f s of those in %llu migrations", r->migrating,
                     (unsigned long long)r->migrations);
        fprintf(stderr, "gravhost: done: t = %g, %llu steps, %llu force calls, %.1f s; this session %.1f s, "
                "%.2f s of it in steps%s (the rest setup and output); log %s/%s, %llu snapshots\n",
                gp_sim_time(r->sim), (unsigned long long)steps, (unsigned long long)fc, wall_total(r),
                gh_wall() - r->wall0, r->stepping, mig,
                r->out_dir, cfg->log_name, (unsigned long long)r->st.snap_count);
    }
    rc = 0;
    goto out_quiet;
out:
    gh_progress_finish(&prog);
    unalias_out_dir(r);
    if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", r->err);   /* every rank has the same sentence */
out_quiet:
    setting_up = 0;
    gh_diag_close(&r->diag);
    gp_sim_free(r->sim);
    close_out_dir(r);
    return rc;
}
