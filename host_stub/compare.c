/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compare.c — `gravhost compare`: the built-in accuracy check. Both solvers
 * get the same particles; the test solver's accelerations (and potentials)
 * are compared with the reference's particle by particle, and the error
 * distribution (median, 90th, 99th percentile, max) and each solver's time
 * are printed.
 */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gravplug_loader.h"
#include "ic.h"
#include "progress.h"

#define MAX_KV 32

typedef struct solver_run {
    const char *spec;
    gp_plugin *plugin;
    const gp_api *api;
    gp_solver *s;
    double t_first, t_again;
    double *acc, *pot;
    gp_stats stats;
} solver_run;

/* A default solver: the first plugin in the loader's order of preference
 * (gp_plugin_list_preferred: by capabilities, never by name) with every
 * bit of need and none of refuse that starts here with no parameters. */
typedef struct default_choice {
    char name[256];
} default_choice;

static int first_that_starts(const char *path, const char *short_name, uint64_t capabilities, void *user)
{
    default_choice *d = user;
    gp_plugin *p;
    if (gp_plugin_open(path, &p, NULL, 0) != GP_OK) return 0;
    gp_solver *s = NULL;
    int starts = gp_plugin_api(p)->init(&s, NULL) == GP_OK;
    if (starts) gp_plugin_api(p)->finalize(s);
    gp_plugin_close(p);
    if (starts) snprintf(d->name, sizeof d->name, "%s", short_name);
    return starts;
}

static const char *default_solver(uint64_t need, uint64_t refuse, default_choice *d)
{
    d->name[0] = '\0';
    gp_plugin_list_preferred(need, refuse, first_that_starts, d);
    return d->name[0] ? d->name : NULL;
}

static int add_kv(gp_param *kv, size_t *n, char *arg)
{
    char *eq = strchr(arg, '=');
    if (!eq || eq == arg || *n == MAX_KV) return -1;
    *eq = '\0';
    kv[*n].name = arg;
    kv[*n].value = eq + 1;
    ++*n;
    return 0;
}

static int run_solver(solver_run *sr, const gp_param *common, size_t n_common,
                      const gp_param *own, size_t n_own, const gp_ic *ic, int repeat)
{
    char err[1024];
    if (gp_plugin_open(sr->spec, &sr->plugin, err, sizeof err) != GP_OK) {
        fprintf(stderr, "gravhost compare: %s\n", err);
        return -1;
    }
    sr->api = gp_plugin_api(sr->plugin);
    gp_param kv[2 * MAX_KV];
    size_t n = 0;
    for (size_t i = 0; i < n_common; ++i) kv[n++] = common[i];
    for (size_t i = 0; i < n_own; ++i) kv[n++] = own[i];
    gp_init_args args = { sizeof args, kv, n, NULL, NULL, -1, NULL };
    if (sr->api->init(&sr->s, &args) != GP_OK) {
        fprintf(stderr, "gravhost compare: %s: %s\n", sr->spec, sr->api->last_error(NULL));
        return -1;
    }
    int want_pot = (sr->api->capabilities & GP_CAP_POTENTIAL) != 0;
    sr->acc = malloc(3 * ic->n * sizeof *sr->acc);
    sr->pot = want_pot ? malloc(ic->n * sizeof *sr->pot) : NULL;
    if (!sr->acc || (want_pot && !sr->pot)) { fprintf(stderr, "gravhost compare: out of memory\n"); return -1; }
    double t0 = gh_wall();
    gp_status st = sr->api->set_particles(sr->s, ic->n, ic->pos, ic->mass);
    if (st == GP_OK) st = sr->api->compute_forces(sr->s, sr->acc, sr->pot);
    sr->t_first = gh_wall() - t0;
    sr->t_again = INFINITY;
    for (int k = 0; st == GP_OK && k < repeat; ++k) {
        t0 = gh_wall();
        st = sr->api->update_positions(sr->s, ic->pos);
        if (st == GP_OK) st = sr->api->compute_forces(sr->s, sr->acc, sr->pot);
        double t = gh_wall() - t0;
        if (t < sr->t_again) sr->t_again = t;
    }
    if (st != GP_OK) {
        fprintf(stderr, "gravhost compare: %s: %s\n", sr->spec, sr->api->last_error(sr->s));
        return -1;
    }
    memset(&sr->stats, 0, sizeof sr->stats);
    sr->stats.struct_size = sizeof sr->stats;
    sr->api->get_stats(sr->s, &sr->stats);
    return 0;
}

static void free_solver(solver_run *sr)
{
    if (sr->s) sr->api->finalize(sr->s);
    if (sr->plugin) gp_plugin_close(sr->plugin);
    free(sr->acc);
    free(sr->pot);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void print_distribution(const char *what, double *e, size_t n)
{
    qsort(e, n, sizeof *e, cmp_double);
    printf("%-28s median %.3e   90%% %.3e   99%% %.3e   max %.3e\n", what,
           e[(size_t)(0.5 * (double)(n - 1))], e[(size_t)(0.9 * (double)(n - 1))],
           e[(size_t)(0.99 * (double)(n - 1))], e[n - 1]);
}

void gh_compare_usage(FILE *f)
{
    fprintf(f,
            "usage: gravhost compare [--ref PLUGIN] [--test PLUGIN] [--model MODEL] [--n N] [--seed S]\n"
            "                        [--param k=v]... [--ref-param k=v]... [--test-param k=v]...\n"
            "                        [--option k=v]... [--repeat R]\n"
            "Force errors (median, 90th, 99th percentile, max) of a test solver against a\n"
            "reference on the same particles, and each solver's time.\n"
            "  --ref PLUGIN            the reference solver (default: the exact CPU plugin, cpu-direct)\n"
            "  --test PLUGIN           the solver tested (default: the preferred tree plugin that\n"
            "                          starts here, cuda-tree with a GPU, else cpu-tree)\n"
            "  --model MODEL           the initial-conditions model (default plummer)\n"
            "  --n N                   number of particles (default 16384)\n"
            "  --seed S                the model's random seed (default 1)\n"
            "  --param k=v             a parameter for both solvers\n"
            "  --ref-param k=v         a parameter for the reference only\n"
            "  --test-param k=v        a parameter for the tested solver only\n"
            "  --option k=v            an initial-conditions option of the model\n"
            "  --repeat R              calls after the first; the fastest is reported (default 1)\n"
            "  -h, --help              this text\n"
            "  --version               gravhost's version\n");
}

/* argv[0] is "compare". */
int gh_compare(int argc, char **argv)
{
    enum { O_REF = 0x200, O_TEST, O_MODEL, O_N, O_SEED, O_REPEAT, O_PARAM, O_REF_PARAM, O_TEST_PARAM, O_OPTION };
    static const struct option longopts[] = {
        GH_CLI_COMMON_OPTIONS,
        { "ref", required_argument, NULL, O_REF },
        { "test", required_argument, NULL, O_TEST },
        { "model", required_argument, NULL, O_MODEL },
        { "n", required_argument, NULL, O_N },
        { "seed", required_argument, NULL, O_SEED },
        { "repeat", required_argument, NULL, O_REPEAT },
        { "param", required_argument, NULL, O_PARAM },
        { "ref-param", required_argument, NULL, O_REF_PARAM },
        { "test-param", required_argument, NULL, O_TEST_PARAM },
        { "option", required_argument, NULL, O_OPTION },
        { 0, 0, 0, 0 }
    };
    const char *ref_spec = NULL, *test_spec = NULL, *model = "plummer";
    size_t n = 16384;
    unsigned long long seed = 1;
    int repeat = 1;
    gp_param common[MAX_KV], refp[MAX_KV], testp[MAX_KV], opts[MAX_KV];
    size_t nc = 0, nr = 0, nt = 0, no = 0;
    gh_cli_begin();
    int c, index = -1;
    while ((c = getopt_long(argc, argv, GH_CLI_SHORT, longopts, &index)) != -1) {
        int bad = 0;
        char *e = NULL;
        /* the value as given, for the refusal (add_kv cuts it at '=') */
        char given[512];
        snprintf(given, sizeof given, "%s", optarg ? optarg : "");
        switch (c) {
        case O_REF: ref_spec = optarg; break;
        case O_TEST: test_spec = optarg; break;
        case O_MODEL: model = optarg; break;
        case O_N: n = strtoull(optarg, &e, 10); bad = e == optarg || *e || n == 0; break;
        case O_SEED: seed = strtoull(optarg, &e, 10); bad = e == optarg || *e != 0; break;
        case O_REPEAT: repeat = (int)strtol(optarg, &e, 10); bad = e == optarg || *e || repeat < 0; break;
        case O_PARAM: bad = add_kv(common, &nc, optarg); break;
        case O_REF_PARAM: bad = add_kv(refp, &nr, optarg); break;
        case O_TEST_PARAM: bad = add_kv(testp, &nt, optarg); break;
        case O_OPTION: bad = add_kv(opts, &no, optarg); break;
        default: {
            int rc = gh_cli_common(c, "compare", argv, gh_compare_usage);
            if (rc >= 0) return rc;
        }
        }
        if (bad) {
            fprintf(stderr, "gravhost compare: bad argument \"--%s %s\"\n", longopts[index].name, given);
            gh_compare_usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gravhost compare: bad argument \"%s\"\n", argv[optind]);
        gh_compare_usage(stderr);
        return 2;
    }
    solver_run ref = { .spec = ref_spec }, test = { .spec = test_spec };
    gp_ic ic;
    char err[1024];
    gp_ic_opts io = { opts, no };
    if (gp_ic_make(model, n, seed, &io, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "gravhost compare: %s\n", err);
        return 1;
    }
    int rc = 1;
    /* the reference sums exactly in double: an exact plugin on the CPU (a
     * GPU's exact sums may be in mixed precision) */
    default_choice ref_choice, test_choice;
    if (!ref.spec) ref.spec = default_solver(GP_CAP_EXACT, GP_CAP_GPU | GP_CAP_MPI, &ref_choice);
    if (!ref.spec) {
        fprintf(stderr, "gravhost compare: no exact CPU plugin (GP_CAP_EXACT) starts here: "
                "name the reference with --ref\n");
        goto out;
    }
    if (!test.spec) test.spec = default_solver(GP_CAP_TREE, GP_CAP_MPI, &test_choice);
    if (!test.spec) test.spec = ref.spec;
    if (run_solver(&ref, common, nc, refp, nr, &ic, repeat) != 0) goto out;
    if (run_solver(&test, common, nc, testp, nt, &ic, repeat) != 0) goto out;

    double *e = malloc(ic.n * sizeof *e);
    if (!e) {
        fprintf(stderr, "gravhost compare: out of memory for the errors of %zu particles\n", ic.n);
        goto out;
    }
    printf("compare: model %s, n = %zu, seed %llu\n", model, ic.n, seed);
    printf("%-12s %-10s %14s %14s %14s %16s\n", "role", "plugin", "first call s", "repeat call s", "pp inter.", "pc inter.");
    solver_run *both[2] = { &ref, &test };
    for (int k = 0; k < 2; ++k)
        printf("%-12s %-10s %14.4f %14.4f %14llu %16llu\n", k ? "test" : "reference", both[k]->api->name,
               both[k]->t_first, repeat ? both[k]->t_again : NAN,
               (unsigned long long)both[k]->stats.pp_interactions, (unsigned long long)both[k]->stats.pc_interactions);
    for (size_t i = 0; i < ic.n; ++i) {
        double d2 = 0, r2 = 0;
        for (int k = 0; k < 3; ++k) {
            double d = test.acc[3 * i + k] - ref.acc[3 * i + k];
            d2 += d * d;
            r2 += ref.acc[3 * i + k] * ref.acc[3 * i + k];
        }
        e[i] = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
    }
    print_distribution("|da|/|a| (acceleration)", e, ic.n);
    if (ref.pot && test.pot) {
        for (size_t i = 0; i < ic.n; ++i)
            e[i] = ref.pot[i] != 0 ? fabs(test.pot[i] - ref.pot[i]) / fabs(ref.pot[i]) : fabs(test.pot[i]);
        print_distribution("|dphi|/|phi| (potential)", e, ic.n);
    }
    double tr = repeat ? ref.t_again : ref.t_first, tt = repeat ? test.t_again : test.t_first;
    printf("speed: %s is %.2fx the speed of %s (%s calls)\n", test.api->name, tt > 0 ? tr / tt : INFINITY,
           ref.api->name, repeat ? "repeat" : "first");
    free(e);
    rc = 0;
out:
    free_solver(&ref);
    free_solver(&test);
    gp_ic_free(&ic);
    return rc;
}
