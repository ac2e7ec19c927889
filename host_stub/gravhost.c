/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravhost.c — the reference host: subcommands run, info, list,
 * integrators, compare.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "config.h"
#include "gp_sim.h"
#include "gravplug_loader.h"
#include "par.h"
#include "run.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gravhost run CONFIG [--restart [CHECKPOINT]] [--output DIR] [--t-end T]\n"
            "                           [--progress | --no-progress]\n"
            "       gravhost info PLUGIN        a plugin's description and parameters\n"
            "       gravhost list               the plugins found on the search path\n"
            "       gravhost integrators        the integrators and their parameters\n"
            "       gravhost compare [--ref P] [--test P] [--model M] [--n N] [--param k=v ...]\n"
            "                                   force errors of one solver against another\n"
            "       gravhost --version | --help | COMMAND --help\n"
            "PLUGIN is a short name (cpu-direct, cpu-tree, cuda-tree), a path to a .so, or auto.\n"
            "The config format is described in docs/CONFIG.md; the manual is gravhost(1).\n");
}

static void usage_run(FILE *f)
{
    fprintf(f,
            "usage: gravhost run CONFIG [--restart [CHECKPOINT]] [--output DIR] [--t-end T]\n"
            "                           [--progress | --no-progress] [--verbose | --debug]\n"
            "Runs the simulation the config file CONFIG describes (docs/CONFIG.md).\n"
            "  --restart [CHECKPOINT]  continue from a checkpoint (default: the config's\n"
            "                          output.checkpoint inside output.dir)\n"
            "  --output DIR            write log, snapshots and checkpoints into DIR\n"
            "                          instead of the config's output.dir\n"
            "  --t-end T               end at time T instead of the config's run.t_end\n"
            "  --progress              a progress line with ETA on stderr, even in a pipe\n"
            "  --no-progress           no progress line, even on a terminal\n"
            "  --verbose               the plugins' own lines on stderr: the device they\n"
            "                          use, their warnings\n"
            "  --debug                 and their per-call lines (mpi-tree's phases and LET\n"
            "                          bytes, cuda-tree's transfers), every rank's under MPI\n"
            "  -h, --help              this text\n"
            "  --version               gravhost's version\n");
}

static void usage_info(FILE *f)
{
    fprintf(f,
            "usage: gravhost info PLUGIN\n"
            "Prints a plugin's name, version, ABI, file, capabilities, whether it starts\n"
            "here, and its parameters. PLUGIN is a short name, a path to a .so, or auto.\n"
            "  -h, --help              this text\n"
            "  --version               gravhost's version\n");
}

static void usage_list(FILE *f)
{
    fprintf(f,
            "usage: gravhost list\n"
            "Lists the plugins found on the search path ($GRAVPLUG_PATH, next to\n"
            "libgravplug, the build tree, the install prefix) with their versions.\n"
            "  -h, --help              this text\n"
            "  --version               gravhost's version\n");
}

static void usage_integrators(FILE *f)
{
    fprintf(f,
            "usage: gravhost integrators\n"
            "Lists the integrators, each with its parameters and their defaults.\n"
            "  -h, --help              this text\n"
            "  --version               gravhost's version\n");
}

/* Parses a subcommand that takes only the common options; positional
 * arguments are left in argv[optind .. argc). Returns -1 to go on, else the
 * exit status. */
static int parse_plain(int argc, char **argv, const char *cmd, gh_usage_fn use)
{
    static const struct option longopts[] = { GH_CLI_COMMON_OPTIONS, { 0, 0, 0, 0 } };
    gh_cli_begin();
    int c;
    while ((c = getopt_long(argc, argv, GH_CLI_SHORT, longopts, NULL)) != -1) {
        int rc = gh_cli_common(c, cmd, argv, use);
        if (rc >= 0) return rc;
    }
    return -1;
}

/* argv[0] is "run"; argv may have been rearranged by MPI's start first. */
static int cmd_run(int argc, char **argv)
{
    enum { O_RESTART = 0x200, O_OUTPUT, O_T_END, O_PROGRESS, O_NO_PROGRESS, O_VERBOSE, O_DEBUG };
    static const struct option longopts[] = {
        GH_CLI_COMMON_OPTIONS,
        { "restart", optional_argument, NULL, O_RESTART },
        { "output", required_argument, NULL, O_OUTPUT },
        { "t-end", required_argument, NULL, O_T_END },
        { "progress", no_argument, NULL, O_PROGRESS },
        { "no-progress", no_argument, NULL, O_NO_PROGRESS },
        { "verbose", no_argument, NULL, O_VERBOSE },
        { "debug", no_argument, NULL, O_DEBUG },
        { 0, 0, 0, 0 }
    };
    gh_run_opts o = { 0 };
    gh_cli_begin();
    int c;
    while ((c = getopt_long(argc, argv, GH_CLI_SHORT, longopts, NULL)) != -1) {
        switch (c) {
        case O_RESTART:
            /* --restart=FILE, or --restart FILE when the next word is not
             * an option: the checkpoint is optional */
            o.restart = optarg ? optarg : "";
            if (!optarg && optind < argc && strncmp(argv[optind], "--", 2) != 0) o.restart = argv[optind++];
            break;
        case O_PROGRESS: o.progress = 1; break;
        case O_NO_PROGRESS: o.progress = -1; break;
        case O_VERBOSE: if (o.log_level < GP_LOG_INFO) o.log_level = GP_LOG_INFO; break;
        case O_DEBUG: o.log_level = GP_LOG_DEBUG; break;
        case O_OUTPUT: o.out_dir = optarg; break;
        case O_T_END: {
            char *end;
            o.t_end = strtod(optarg, &end);
            o.have_t_end = 1;
            if (end == optarg || *end || !(o.t_end >= 0) || !isfinite(o.t_end)) {   /* as run.t_end */
                fprintf(stderr, "gravhost run: --t-end needs a finite time >= 0 (got \"%s\")\n", optarg);
                return 2;
            }
            break;
        }
        default: {
            int rc = gh_cli_common(c, "run", argv, usage_run);
            if (rc >= 0) return rc;
        }
        }
    }
    if (optind >= argc) { usage_run(stderr); return 2; }
    const char *path = argv[optind];
    if (optind + 1 < argc) {
        fprintf(stderr, "gravhost run: unknown option \"%s\"\n", argv[optind + 1]);
        usage_run(stderr);
        return 2;
    }
    gh_config cfg;
    char err[2048];
    /* rank 0 reads the file, every rank parses the same text (so every
     * rank has the same settings or the same sentence; rank 0 says it) */
    char *text = NULL;
    int read = gh_par_rank() == 0 ? gh_config_read_text(path, &text, err, sizeof err) : 0;
    int shared = gh_par_share_text(&text, read, err, sizeof err) == 0;
    int parsed = shared && gh_config_parse(path, text, &cfg, err, sizeof err) == 0;
    free(text);
    /* the same text parses alike everywhere, but running out of memory in
     * the parse strikes one rank alone: agreed, so that no rank goes on to
     * the run's collective calls without the others */
    if (!shared || gh_par_agree(parsed ? 0 : -1, err, sizeof err) != 0) {
        if (parsed) gh_config_free(&cfg);
        if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", err);
        return 1;
    }
    int rc = gh_run(&cfg, &o);
    gh_config_free(&cfg);
    return rc;
}

static int cmd_info(int argc, char **argv)
{
    int rc = parse_plain(argc, argv, "info", usage_info);
    if (rc >= 0) return rc;
    if (argc - optind != 1) { usage_info(stderr); return 2; }
    gp_plugin *p;
    char err[1024];
    if (gp_plugin_open(argv[optind], &p, err, sizeof err) != GP_OK) {
        fprintf(stderr, "gravhost info: %s\n", err);
        return 1;
    }
    const gp_api *api = gp_plugin_api(p);
    printf("plugin   %s %s (ABI %u.%u)\n", api->name, api->version, api->abi_major, api->abi_minor);
    printf("file     %s\n", gp_plugin_path(p));
    static const char *const caps[] = { "gpu", "tree", "exact", "active-subset", "field", "potential", "refit" };
    printf("can      ");
    for (int b = 0; b < 7; ++b)
        if (api->capabilities >> b & 1) printf("%s ", caps[b]);
    printf("\n");
    gp_solver *s = NULL;
    if (api->init(&s, NULL) == GP_OK) {
        printf("usable   yes (init with defaults succeeded here)\n");
        api->finalize(s);
    } else {
        printf("usable   no: %s\n", api->last_error(NULL));
    }
    size_t n = 0;
    const gp_param_info *info = api->describe_params(&n);
    printf("\n%-12s %-7s %-14s %-30s %s\n", "parameter", "type", "default", "allowed", "meaning");
    for (size_t i = 0; i < n; ++i)
        printf("%-12s %-7s %-14s %-30s %s\n", info[i].name, gp_param_type_name(info[i].type),
               info[i].default_value ? info[i].default_value : "",
               info[i].allowed ? info[i].allowed : "", info[i].doc ? info[i].doc : "");
    gp_plugin_close(p);
    return 0;
}

static int list_one(const char *path, const char *short_name, void *user)
{
    (void)user;
    gp_plugin *p;
    char err[1024];
    if (gp_plugin_open(path, &p, err, sizeof err) != GP_OK) {
        printf("%-12s %-10s %s\n           (cannot load: %s)\n", short_name, "-", path, err);
        return 0;
    }
    const gp_api *api = gp_plugin_api(p);
    printf("%-12s %-10s %s\n", short_name, api->version, path);
    gp_plugin_close(p);
    return 0;
}

/* A subcommand without positional arguments refuses any. */
static int no_arguments(int argc, char **argv, const char *cmd, gh_usage_fn use)
{
    int rc = parse_plain(argc, argv, cmd, use);
    if (rc >= 0) return rc;
    if (optind < argc) {
        fprintf(stderr, "gravhost %s: unexpected argument \"%s\"\n", cmd, argv[optind]);
        use(stderr);
        return 2;
    }
    return -1;
}

static int cmd_list(int argc, char **argv)
{
    int rc = no_arguments(argc, argv, "list", usage_list);
    if (rc >= 0) return rc;
    printf("%-12s %-10s %s\n", "plugin", "version", "file");
    size_t n = gp_plugin_list(list_one, NULL);
    if (n == 0) {
        char path[4096];
        gp_plugin_search_path(path, sizeof path);
        printf("(no plugins found; searched %s; set GRAVPLUG_PATH to add directories)\n", path);
    }
    return 0;
}

static int cmd_integrators(int argc, char **argv)
{
    int rc = no_arguments(argc, argv, "integrators", usage_integrators);
    if (rc >= 0) return rc;
    for (size_t i = 0; i < gp_integrator_count(); ++i) {
        const char *name = gp_integrator_name(i);
        printf("%-10s %s\n", name, gp_integrator_summary(i));
        const char *pn, *def, *doc;
        for (size_t k = 0; gp_integrator_param(name, k, &pn, &def, &doc) == GP_OK; ++k)
            printf("    %-10s = %-10s %s\n", pn, def, doc);
    }
    return 0;
}

/* The subcommands: each gets argv from its own name on (argv[0] = "run"). */
static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    gh_usage_fn usage;
} commands[] = {
    { "info", cmd_info, usage_info },
    { "list", cmd_list, usage_list },
    { "integrators", cmd_integrators, usage_integrators },
    { "compare", gh_compare, gh_compare_usage },
};

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) {
        /* gravhost-mpi: MPI up for the run (gravhost: nothing to do) */
        if (gh_par_init(&argc, &argv) != 0) return 1;
        char err[1024];
        if (gh_par_same_start(argc, argv, err, sizeof err) != 0) {
            if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", err);
            gh_par_finalize();
            return 2;
        }
        int rc = cmd_run(argc - 1, argv + 1);
        gh_par_finalize();
        return rc;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; ++k)
        if (strcmp(cmd, commands[k].name) == 0) return commands[k].fn(argc - 1, argv + 1);
    if (strcmp(cmd, "--version") == 0) { gh_cli_version(); return 0; }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        /* gravhost help COMMAND: that command's usage */
        if (argc > 2 && strcmp(cmd, "help") == 0) {
            if (strcmp(argv[2], "run") == 0) { usage_run(stdout); return 0; }
            for (size_t k = 0; k < sizeof commands / sizeof commands[0]; ++k)
                if (strcmp(argv[2], commands[k].name) == 0) { commands[k].usage(stdout); return 0; }
            fprintf(stderr, "gravhost help: unknown command \"%s\"\n", argv[2]);
            usage(stderr);
            return 2;
        }
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "gravhost: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
