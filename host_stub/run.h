/* SPDX-License-Identifier: Apache-2.0 */
/* run.h — `gravhost run`: a simulation from a config file (run.c, the main
 * loop; its parts are in runner.h). */
#ifndef GH_RUN_H
#define GH_RUN_H

#include "config.h"
#include "run_opts.h"

/* Runs; returns the process exit status (0, 1 error, 128+signal). */
int gh_run(const gh_config *cfg, const gh_run_opts *opts);

#endif
