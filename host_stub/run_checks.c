/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_checks.c — a gravhost run's checks before t = 0: everything that
 * would otherwise fail hours into a run (the switches' plugins and
 * parameters, the output directories, output intervals the integrator
 * cannot resolve), and the run state a restart reads from a checkpoint.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numfmt.h"
#include "par.h"
#include "runner.h"

/* Range checks of the run state read from a checkpoint (its file passed
 * the library's checksums; this guards against a blob that disagrees with
 * the config). Returns 0, or -1 with a sentence naming the field. */
int check_state(runner *r, gh_state *s, const char *path)
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

int preflight(runner *r)
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

