/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravhost.c — the reference host: subcommands run, info, list,
 * integrators, compare.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "config.h"
#include "gp_integrator.h"
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
            "PLUGIN is a short name (cpu-direct, cpu-tree, cuda-tree), a path to a .so, or auto.\n"
            "The config format is described in docs/CONFIG.md.\n");
}

static int cmd_run(int argc, char **argv)
{
    if (argc < 1) { usage(stderr); return 2; }
    gh_run_opts o = { 0 };
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--restart") == 0) {
            o.restart = "";
            if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) o.restart = argv[++i];
        } else if (strcmp(a, "--progress") == 0) o.progress = 1;
        else if (strcmp(a, "--no-progress") == 0) o.progress = -1;
        else if (strcmp(a, "--output") == 0 && i + 1 < argc) o.out_dir = argv[++i];
        else if (strcmp(a, "--t-end") == 0 && i + 1 < argc) {
            char *end;
            o.t_end = strtod(argv[++i], &end);
            o.have_t_end = 1;
            if (*end || !(o.t_end >= 0)) { fprintf(stderr, "gravhost run: --t-end needs a time >= 0\n"); return 2; }
        } else {
            fprintf(stderr, "gravhost run: unknown option \"%s\"\n", a);
            usage(stderr);
            return 2;
        }
    }
    gh_config cfg;
    char err[2048];
    /* rank 0 reads the file, every rank parses the same text (so every
     * rank has the same settings or the same sentence; rank 0 says it) */
    char *text = NULL;
    int read = gh_par_rank() == 0 ? gh_config_read_text(argv[0], &text, err, sizeof err) : 0;
    int parsed = gh_par_share_text(&text, read, err, sizeof err) == 0
                 && gh_config_parse(argv[0], text, &cfg, err, sizeof err) == 0;
    free(text);
    if (!parsed) {
        if (gh_par_rank() == 0) fprintf(stderr, "gravhost: %s\n", err);
        return 1;
    }
    int rc = gh_run(&cfg, &o);
    gh_config_free(&cfg);
    return rc;
}

static int cmd_info(int argc, char **argv)
{
    if (argc != 1) { usage(stderr); return 2; }
    gp_plugin *p;
    char err[1024];
    if (gp_plugin_open(argv[0], &p, err, sizeof err) != GP_OK) {
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

static int cmd_list(void)
{
    printf("%-12s %-10s %s\n", "plugin", "version", "file");
    size_t n = gp_plugin_list(list_one, NULL);
    if (n == 0) {
        char path[4096];
        gp_plugin_search_path(path, sizeof path);
        printf("(no plugins found; searched %s; set GRAVPLUG_PATH to add directories)\n", path);
    }
    return 0;
}

static int cmd_integrators(void)
{
    for (size_t i = 0; i < gp_integrator_count(); ++i) {
        const char *name = gp_integrator_name(i);
        printf("%-10s %s\n", name, gp_integrator_summary(i));
        const char *pn, *def, *doc;
        for (size_t k = 0; gp_integrator_param(name, k, &pn, &def, &doc) == GP_OK; ++k)
            printf("    %-10s = %-10s %s\n", pn, def, doc);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) { usage(stderr); return 2; }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) {
        /* gravhost-mpi: MPI up for the run (gravhost: nothing to do) */
        if (gh_par_init(&argc, &argv) != 0) return 1;
        int rc = cmd_run(argc - 2, argv + 2);
        gh_par_finalize();
        return rc;
    }
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0) return cmd_list();
    if (strcmp(cmd, "integrators") == 0) return cmd_integrators();
    if (strcmp(cmd, "compare") == 0) return gh_compare(argc - 2, argv + 2);
    if (strcmp(cmd, "--version") == 0) { printf("gravhost %s\n", GP_VERSION); return 0; }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) { usage(stdout); return 0; }
    fprintf(stderr, "gravhost: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
