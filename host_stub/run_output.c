/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run_output.c — what a gravhost run writes: the output directory, the
 * log line, snapshots (every rank's particles gathered on rank 0),
 * checkpoints with the run state as their caller blob, the state saved
 * when the run fails, the command that continues it, and the snapshot
 * metadata.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_checks.h"
#include "numfmt.h"
#include "par.h"
#include "progress.h"
#include "runner.h"
#include "snapshot.h"

int mkdir_p(const char *dir, char *err, size_t errlen)
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

void join(char *buf, size_t len, const char *dir, const char *name)
{
    if (name[0] == '/') snprintf(buf, len, "%s", name);
    else snprintf(buf, len, "%s/%s", dir, name);
}

int open_out_dir(runner *r)
{
    r->out_fd = -1;
    r->out_io[0] = '\0';
    if (mkdir_p(r->out_dir, r->err, sizeof r->err) != 0) return -1;
    int shared = 0;
    char why[256];
    r->out_fd = gp_file_open_dir(r->out_dir, &shared, why, sizeof why);
    if (r->out_fd < 0) {
        snprintf(r->err, sizeof r->err, "cannot use the output directory %s: %s", r->out_dir, why);
        return -1;
    }
    /* the path libgravplug's writers and HDF5 are given: the directory
     * opened here, whatever its name points to later */
    snprintf(r->out_io, sizeof r->out_io, "/proc/self/fd/%d", r->out_fd);
    /* whether it can be written is preflight's to say, naming the output */
    if (access(r->out_io, F_OK) != 0) {
        snprintf(r->err, sizeof r->err, "cannot reach the output directory %s through %s (%s): gravhost "
                 "writes its outputs relative to the directory it opened, which needs Linux's /proc", r->out_dir,
                 r->out_io, strerror(errno));
        close_out_dir(r);
        return -1;
    }
    if (shared && gh_par_rank() == 0)
        fprintf(stderr, "gravhost: warning: the output directory %s can be changed by other users (it is "
                "writable by all, or another user's): gravhost never writes through the links they may put "
                "there, but they can replace or remove its outputs; use a directory of your own "
                "(docs/TRUST.md)\n", r->out_dir);
    return 0;
}

void close_out_dir(runner *r)
{
    if (r->out_fd >= 0) close(r->out_fd);
    r->out_fd = -1;
}

void unalias_out_dir(runner *r)
{
    size_t k = strlen(r->out_io);
    if (!k) return;
    char buf[sizeof r->err];
    size_t o = 0;
    for (const char *p = r->err; *p && o + 1 < sizeof buf; ) {
        if (strncmp(p, r->out_io, k) == 0 && (p[k] == '/' || p[k] == '\0' || p[k] == ' ')) {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", r->out_dir);
            p += k;
        } else {
            buf[o++] = *p++;
        }
    }
    buf[o < sizeof buf ? o : sizeof buf - 1] = '\0';
    snprintf(r->err, sizeof r->err, "%s", buf);
}

double wall_total(runner *r) { return r->st.wall + (gh_wall() - r->wall0); }

int write_log(runner *r)
{
    return gh_diag_write(&r->diag, r->sim, gh_par_sum_u64(r->st.interactions + solver_interactions(r)),
                         wall_total(r), r->err, sizeof r->err);
}

/* The snapshot's units and comment. */
static gp_snapshot_extra snapshot_extra(runner *r, char *comment, size_t len)
{
    snprintf(comment, len, "gravhost: %s on %s", gp_sim_integrator(r->sim), gp_sim_solver_name(r->sim));
    gp_snapshot_extra ex;
    memset(&ex, 0, sizeof ex);
    ex.struct_size = sizeof ex;
    ex.comment = comment;
    ex.length_cgs = r->cfg->unit_length_cgs;
    ex.mass_cgs = r->cfg->unit_mass_cgs;
    return ex;
}

/* snapshot_files = "per-rank": every rank writes its own particles to
 * PREFIX_NNNN.rRRRR.h5, with no gather, and rank 0 a master PREFIX_NNNN.h5
 * whose datasets are virtual, the parts' rows in rank order (SWIFT's
 * distributed snapshots). */
static int write_snapshot_parts(runner *r)
{
    const int P = gh_par_size(), me = gh_par_rank();
    size_t n = gp_sim_count(r->sim);
    double *pos = malloc(3 * (n ? n : 1) * sizeof *pos), *vel = malloc(3 * (n ? n : 1) * sizeof *vel);
    double *mass = malloc((n ? n : 1) * sizeof *mass);
    uint64_t *ids = malloc((n ? n : 1) * sizeof *ids), *counts = malloc((size_t)P * sizeof *counts);
    char name[512], path[4096], comment[256];
    int rc = -1;
    if (!pos || !vel || !mass || !ids || !counts) {
        snprintf(r->err, sizeof r->err, "snapshot: out of memory for %zu particles", n);
    } else {
        gp_sim_get_particles(r->sim, pos, vel, mass, ids);
        gp_snapshot_extra ex = snapshot_extra(r, comment, sizeof comment);
        snprintf(name, sizeof name, "%s_%04llu.r%04d.h5", r->cfg->snap_prefix,
                 (unsigned long long)r->st.snap_count, me);
        join(path, sizeof path, r->out_io, name);
        char err[512];
        rc = gp_snapshot_write_ex(path, gp_sim_time(r->sim), n, pos, vel, mass, ids, &ex, err, sizeof err);
        if (rc != 0) snprintf(r->err, sizeof r->err, "%s", err);
    }
    free(pos); free(vel); free(mass); free(ids);
    if (gh_par_agree(rc, r->err, sizeof r->err) != 0) { free(counts); return -1; }
    gh_par_allgather_u64((uint64_t)n, counts);
    rc = 0;
    if (me == 0) {
        /* the parts by name only: they lie beside the master */
        char (*parts)[512] = malloc((size_t)P * sizeof *parts);
        const char **names = malloc((size_t)P * sizeof *names);
        rc = -1;
        if (!parts || !names) {
            snprintf(r->err, sizeof r->err, "snapshot: out of memory for %d part names", P);
        } else {
            for (int q = 0; q < P; ++q) {
                const char *slash = strrchr(r->cfg->snap_prefix, '/');
                snprintf(parts[q], sizeof parts[q], "%s_%04llu.r%04d.h5",
                         slash ? slash + 1 : r->cfg->snap_prefix,
                         (unsigned long long)r->st.snap_count, q);
                names[q] = parts[q];
            }
            gp_snapshot_extra ex = snapshot_extra(r, comment, sizeof comment);
            snprintf(name, sizeof name, "%s_%04llu.h5", r->cfg->snap_prefix, (unsigned long long)r->st.snap_count);
            join(path, sizeof path, r->out_io, name);
            char err[512];
            rc = gp_snapshot_write_virtual(path, gp_sim_time(r->sim), (size_t)P, counts, names, &ex, err,
                                           sizeof err);
            if (rc != 0) snprintf(r->err, sizeof r->err, "%s", err);
        }
        free(parts); free(names);
    }
    free(counts);
    rc = gh_par_agree(rc, r->err, sizeof r->err);
    if (rc == 0) r->st.snap_count++;
    return rc;
}

int write_snapshot(runner *r)
{
    if (r->cfg->snap_per_rank && gh_par_size() > 1) return write_snapshot_parts(r);
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
        rc = 0;
    } else if (pos && vel && mass && ids) {
        char name[512], path[4096];
        snprintf(name, sizeof name, "%s_%04llu.h5", r->cfg->snap_prefix, (unsigned long long)r->st.snap_count);
        join(path, sizeof path, r->out_io, name);
        char comment[256];
        gp_snapshot_extra ex = snapshot_extra(r, comment, sizeof comment);
        char err[512];
        if (gp_snapshot_write_ex(path, gp_sim_time(r->sim), n, pos, vel, mass, ids, &ex, err, sizeof err) == 0)
            rc = 0;
        else
            snprintf(r->err, sizeof r->err, "%s", err);
    } else {
        snprintf(r->err, sizeof r->err, "snapshot: out of memory");
    }
    free(pos); free(vel); free(mass); free(ids);
    /* counted on every rank only once rank 0's write is agreed: the run
     * state in each rank's checkpoint must be the same (check_same_run) */
    rc = gh_par_agree(rc, r->err, sizeof r->err);
    if (rc == 0) r->st.snap_count++;
    return rc;
}

/* Makes a rename in path's directory durable (0, or -1 with errno). */
static int sync_dir_of(const char *path)
{
    char dir[4200];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) + (slash == path) : 1, slash ? path : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Under MPI a checkpoint is a set of rank files, and a restart needs the
 * whole set from one stop: the new set replaces the old only once every
 * rank holds its new file in full. Each rank saves to FILE.new
 * (gp_sim_checkpoint_save: a temporary file, fsync, rename), and checks
 * that FILE itself can be replaced; the ranks agree; only then does each
 * rename FILE.new over FILE. A failure on any rank before the agreement
 * (a full disk, EIO, a rank killed) removes the FILE.new files and leaves
 * the last complete set as it was. */
int write_checkpoint(runner *r)
{
    char base[4096], path[4200], staged[4300];
    join(base, sizeof base, r->out_io, r->cfg->ckpt_name);
    gh_par_ckpt_path(base, 0, path, sizeof path, r->err, sizeof r->err);   /* one file per rank */
    const int set = gh_par_size() > 1;
    snprintf(staged, sizeof staged, set ? "%s.new" : "%s", path);
    gh_state s = r->st;
    /* the plugin by its short name only: a restart opens the config's */
    snprintf(s.plugin, sizeof s.plugin, "%s", gp_sim_solver_name(r->sim));
    s.wall = wall_total(r);
    s.interactions = r->st.interactions + solver_interactions(r);
    /* the restarted run's new solver instance counts from zero */
    int rc = 0;
    char why[128];
    if (gp_sim_checkpoint_save(r->sim, staged, &s, sizeof s) != GP_OK) {
        snprintf(r->err, sizeof r->err, "%s", gp_sim_last_error(r->sim));
        rc = -1;
    } else if (set && gp_file_output_ok(path, why, sizeof why) != 0) {
        snprintf(r->err, sizeof r->err, "cannot write the checkpoint %s: %s", path, why);
        rc = -1;
    }
    if (!set) return gh_par_agree(rc, r->err, sizeof r->err);
    if (gh_par_agree(rc, r->err, sizeof r->err) != 0) {
        remove(staged);   /* the previous set stays whole */
        return -1;
    }
    rc = 0;
    if (rename(staged, path) != 0 || sync_dir_of(path) != 0) {
        snprintf(r->err, sizeof r->err, "replacing the checkpoint %s by the complete %s failed: %s (every "
                 "rank's new file was written: rename each FILE.new left over FILE by hand to continue from "
                 "it)", path, staged, strerror(errno));
        rc = -1;
    }
    return gh_par_agree(rc, r->err, sizeof r->err);
}

/* The command that continues this run: every option it was given. */
void restart_command(runner *r, char *buf, size_t len)
{
    const gh_run_opts *o = r->opts;
    const char *args[10];
    char t_end[64];
    int n = 0;
    args[n++] = r->cfg->path;
    args[n++] = "--restart";
    if (o->out_dir) { args[n++] = "--output"; args[n++] = o->out_dir; }
    if (o->have_t_end) { args[n++] = "--t-end"; args[n++] = gh_fmt_double(t_end, sizeof t_end, o->t_end); }
    if (o->progress) args[n++] = o->progress > 0 ? "--progress" : "--no-progress";
    if (o->log_level) args[n++] = o->log_level >= GP_LOG_DEBUG ? "--debug" : "--verbose";
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
void save_on_failure(runner *r, int in_step)
{
    char msg[2048], path[4096], cmd[4096];
    snprintf(msg, sizeof msg, "%s", r->err);
    join(path, sizeof path, r->out_io, r->cfg->ckpt_name);
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
        if (strcmp(why, msg) == 0) snprintf(r->err, sizeof r->err, "%s", msg);   /* the checkpoint was what failed */
        else snprintf(r->err, sizeof r->err, "%s (and no checkpoint could be written: %s)", msg, why);
    } else if (in_step) {
        snprintf(r->err, sizeof r->err, "%s (the state at the failure was written to %s for inspection)", msg, path);
    } else {
        restart_command(r, cmd, sizeof cmd);
        snprintf(r->err, sizeof r->err, "%s (a checkpoint at t = %.10g was written to %s: fix the cause, then "
                 "continue with: %s)", msg, gp_sim_time(r->sim), path, cmd);
    }
}

void describe(runner *r, char *meta, size_t len)
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

