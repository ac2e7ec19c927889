/* SPDX-License-Identifier: Apache-2.0 */
/* run_opts.h — the command line's choices for `gravhost run` (gravhost.c
 * fills them; run.c and the files of runner.h read them). */
#ifndef GH_RUN_OPTS_H
#define GH_RUN_OPTS_H

typedef struct gh_run_opts {
    const char *restart;   /* NULL: fresh run; "": the config's checkpoint; else a path */
    int progress;          /* 0: as configured, 1: force on, -1: force off */
    const char *out_dir;   /* NULL: the config's output.dir */
    int have_t_end;
    double t_end;          /* override of run.t_end */
    int log_level;         /* the plugins' log lines shown up to this
                              gp_log_level (--verbose: GP_LOG_INFO, --debug:
                              GP_LOG_DEBUG); 0: none (their errors reach
                              the user through gravhost's own sentences) */
} gh_run_opts;

#endif
