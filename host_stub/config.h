/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.h — gravhost's libconfig file, read into plain structs and
 * checked strictly (docs/CONFIG.md): unknown settings and wrong types are
 * errors naming the file, the line and the setting.
 */
#ifndef GH_CONFIG_H
#define GH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "gravplug.h"

#define GH_MAX_SWITCHES 16
#define GH_MAX_FRACTIONS 16
/* Output paths are built in fixed buffers (runner.h); longer ones are
 * refused, never cut short. */
/* A batch scheduler's SIGTERM is followed by SIGKILL after a grace of
 * its own (Slurm's KillWait: 30 s): gravhost waits at most this many
 * seconds for a resync point before it checkpoints where it is. */
#define GH_SIGNAL_GRACE 10.0
#define GH_MAX_DIR 1900
#define GH_MAX_NAME 400
/* gp_sim indexes particles with 32-bit integers (gp_sim_set_particles). */
#define GH_MAX_PARTICLES UINT64_C(4294967295)

/* name = value string pairs, with the line each came from. */
typedef struct gh_params {
    gp_param *items;
    int *lines;
    size_t n;
    int line;              /* line of the group itself (0: absent) */
} gh_params;

typedef struct gh_switch {
    int by_time;           /* 1: at_time; 0: below_active_fraction */
    double at_time, below_fraction;
    char *plugin;
    gh_params params;
    int has_params;
    int line;
} gh_switch;

typedef struct gh_config {
    char *path;            /* as given */
    char *dir;             /* its directory, for relative IC paths */

    char *plugin;
    gh_params solver_params;
    int plugin_line;
    char *solver_path;     /* "auto", "1.0", "1.1" (gp_sim_set_solver_path) */
    int solver_path_line;

    int have_ic;
    char *model;
    uint64_t n, seed;
    gh_params ic_options;
    int ic_line;

    char *integrator;
    gh_params integ_params;
    int integrator_line;

    double t_end;
    int progress;          /* 0 auto, 1 always, 2 never */
    double signal_grace;   /* wall seconds a SIGTERM waits for a resync point */

    char *out_dir, *log_name, *snap_prefix, *ckpt_name;
    int snap_per_rank;     /* snapshot_files = "per-rank" (1) or "one" (0) */
    /* units = { ... }: the code units in cgs for the snapshots (0: N-body
     * units); two of length, mass and time given, the third from G = 1 */
    double unit_length_cgs, unit_mass_cgs;
    double log_interval, snap_interval, ckpt_interval;
    int log_interval_line, snap_interval_line, ckpt_interval_line; /* 0: default */
    double fractions[GH_MAX_FRACTIONS];
    size_t n_fractions;

    gh_switch switches[GH_MAX_SWITCHES];
    size_t n_switches;
} gh_config;

/* Reads and checks path. Returns 0, or -1 with "FILE:LINE: SETTING: why"
 * in err. */
int gh_config_load(const char *path, gh_config *cfg, char *err, size_t errlen);

/* The same in two halves, for a run where one process reads the file and
 * the others get its text (gravhost-mpi: rank 0 reads, par.h sends):
 * read_text mallocs the whole file into *text; parse checks a text as
 * the file at path (path names it in messages and anchors @include). */
int gh_config_read_text(const char *path, char **text, char *err, size_t errlen);
int gh_config_parse(const char *path, const char *text, gh_config *cfg, char *err, size_t errlen);
void gh_config_free(gh_config *cfg);

/* Looks a value up in a params list (NULL if absent). */
const char *gh_params_get(const gh_params *p, const char *name);

#endif
