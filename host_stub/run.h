/* run.h — `gravhost run`: a simulation from a config file (run.c). */
#ifndef GH_RUN_H
#define GH_RUN_H

#include "config.h"

typedef struct gh_run_opts {
    const char *restart;   /* NULL: fresh run; "": the config's checkpoint; else a path */
    int progress;          /* 0: as configured, 1: force on, -1: force off */
    const char *out_dir;   /* NULL: the config's output.dir */
    int have_t_end;
    double t_end;          /* override of run.t_end */
} gh_run_opts;

/* Runs; returns the process exit status (0, 1 error, 128+signal). */
int gh_run(const gh_config *cfg, const gh_run_opts *opts);

#endif
