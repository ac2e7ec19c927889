/* SPDX-License-Identifier: Apache-2.0 */
/*
 * runner.h — one gravhost run as its parts see it: the runner (config,
 * simulation, run state, output), and the calls between run.c (the main
 * loop), run_checks.c (before t = 0), run_output.c (what it writes) and
 * run_solver.c (the solver and its switches). Calls go down that list
 * only, never back up.
 */
#ifndef GH_RUNNER_H
#define GH_RUNNER_H

#include <stdint.h>

#include "config.h"
#include "diagnostics.h"
#include "gp_sim.h"
#include "run_opts.h"

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

typedef struct runner {
    const gh_config *cfg;
    gp_sim *sim;
    gh_state st;
    gh_diag diag;
    char out_dir[2048];  /* as the user named it: for sentences */
    int out_fd;          /* the output directory, opened once (open_out_dir) */
    char out_io[64];     /* "/proc/self/fd/N": outputs are made under it, so
                            relative to out_fd whatever the name points to later */
    double wall0;
    double stepping;     /* seconds of this session in steps and migrations:
                            the run's time less setup and output */
    int migrated;        /* under MPI: a migration was made in this session, */
    uint64_t migrated_at;   /* at this step count */
    double migrating;    /* under MPI: seconds of stepping in migrations */
    uint64_t migrations; /* and how many */
    char err[2048];
    const gh_run_opts *opts;
} runner;

/* run_solver.c */
/* The parameters of the solver in use: solver.params, or switch from's. */
const gh_params *params_for(const runner *r, int32_t from);
/* Opens plugin with the params p on sim (r->sim, or a throwaway one to
 * check a switch before the run starts); 0, or -1 with a sentence in
 * r->err naming the config line. inherited: p is solver.params handed to
 * a switch, so only the names the plugin knows are passed. */
int open_solver_on(runner *r, gp_sim *sim, const char *plugin, const gh_params *p, int inherited,
                   const char *where, int line);
int open_solver(runner *r, const char *plugin, const gh_params *p, int inherited, const char *where, int line);
/* Particle-particle plus particle-cell interactions the solver counted. */
uint64_t solver_interactions(runner *r);
/* Fires switch i: 0, or -1 with a sentence in r->err. */
int do_switch(runner *r, size_t i);

/* run_output.c */
int mkdir_p(const char *dir, char *err, size_t errlen);
/* name under dir (name itself when absolute) into buf. */
void join(char *buf, size_t len, const char *dir, const char *name);
/* Creates and opens the output directory (r->out_fd, r->out_io): 0, or -1
 * with a sentence in r->err. A directory other users can write into is
 * warned about (docs/TRUST.md). close_out_dir undoes it. */
int open_out_dir(runner *r);
void close_out_dir(runner *r);
/* r->err with r->out_io written back as the directory the user named. */
void unalias_out_dir(runner *r);
/* Wall-clock seconds of the run, those of earlier legs included. */
double wall_total(runner *r);
int write_log(runner *r);
int write_snapshot(runner *r);
int write_checkpoint(runner *r);
/* The command that continues this run: every option it was given. */
void restart_command(runner *r, char *buf, size_t len);
/* A fatal error after the run started: saves the state first and adds to
 * r->err where it went and how to continue. */
void save_on_failure(runner *r, int in_step);
/* The metadata at the head of the log. */
void describe(runner *r, char *meta, size_t len);

/* run_checks.c */
/* Range checks of the run state s read from the checkpoint at path: 0,
 * or -1 with a sentence naming the field. */
int check_state(runner *r, gh_state *s, const char *path, double t);
/* After the checkpoint is loaded into r->sim: the config's integrator must
 * be the checkpoint's (else -1 with a sentence); settings that differ are
 * announced, the checkpoint's kept. */
int check_restart_integrator(runner *r, const char *path);
/* Under MPI, after every rank loaded its file: all ranks' files come from
 * one run and one stop (same time, steps and run state; no id on two
 * ranks). 0, or -1 with a sentence (call it on every rank; the callers
 * agree on it). */
int check_same_run(runner *r, const char *path);
/* On a restart from the output directory's own checkpoint (--restart
 * without a file): path, this rank's file there, is no symbolic link
 * (gravhost makes none there; one was put there by someone else). 0, or
 * -1 with a sentence. */
int check_own_checkpoint(runner *r, const char *path);
/* Every check before t = 0: 0, or -1 with a sentence in r->err. */
int preflight(runner *r);

#endif /* GH_RUNNER_H */
