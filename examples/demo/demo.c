/* SPDX-License-Identifier: Apache-2.0 */
/*
 * demo.c — the first thing to run: finds every gravplug plugin on the
 * search path, prints what it is and what it accepts, and evaluates the
 * forces of one small Plummer sphere with it, checked against cpu-direct.
 *
 *     build/bin/gravplug-demo [N]          (make demo)
 *
 * It uses only what a framework would: gravplug.h and the loader in
 * libgravplug.so (gravplug_loader.h).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gravplug.h"
#include "gravplug_loader.h"

static void print_caps(uint64_t c)
{
    static const char *const names[] = {"GPU", "TREE", "EXACT", "ACTIVE_SUBSET", "FIELD", "POTENTIAL", "REFIT"};
    printf("  capabilities:");
    for (int b = 0; b < 7; ++b)
        if (c & (UINT64_C(1) << b)) printf(" %s", names[b]);
    printf("\n");
}

/* A Plummer sphere (scale radius 1, total mass 1) from a fixed seed. */
static uint64_t rng_state = 12345;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng_state >> 11) + 0.5) / 9007199254740992.0;
}
static void plummer(size_t n, double *pos, double *mass)
{
    for (size_t i = 0; i < n; ++i) {
        double r;
        do r = 1.0 / sqrt(pow(uniform(), -2.0 / 3.0) - 1.0); while (r > 30.0);
        double ct = 2 * uniform() - 1, ph = 2 * M_PI * uniform(), st = sqrt(1 - ct * ct);
        pos[3 * i] = r * st * cos(ph);
        pos[3 * i + 1] = r * st * sin(ph);
        pos[3 * i + 2] = r * ct;
        mass[i] = 1.0 / (double)n;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

typedef struct demo {
    size_t n;
    double *pos, *mass, *ref; /* ref: cpu-direct's accelerations, if any */
    int have_ref, shown;
} demo;

static int show(const char *path, const char *short_name, void *user)
{
    demo *d = user;
    if (d->have_ref && strcmp(short_name, "cpu-direct") == 0) return 0; /* shown first */
    gp_plugin *p = NULL;
    char err[1024];
    printf("\n== %s (%s)\n", short_name, path);
    if (gp_plugin_open(path, &p, err, sizeof err) != GP_OK) {
        printf("  cannot load: %s\n", err);
        return 0;
    }
    const gp_api *api = gp_plugin_api(p);
    printf("  name %s, version %s, ABI %u.%u\n", api->name, api->version,
           (unsigned)api->abi_major, (unsigned)api->abi_minor);
    print_caps(api->capabilities);
    size_t np = 0;
    const gp_param_info *info = api->describe_params(&np);
    printf("  parameters:\n");
    for (size_t k = 0; k < np; ++k)
        printf("    %-10s %-6s default %-8s %-32s %s\n", info[k].name, gp_param_type_name(info[k].type),
               info[k].default_value, info[k].allowed ? info[k].allowed : "", info[k].doc);

    gp_solver *s = NULL;
    gp_status st = api->init(&s, NULL);
    if (st != GP_OK) {
        printf("  init: %s: %s\n", gp_status_name(st), api->last_error(NULL));
        gp_plugin_close(p);
        ++d->shown;
        return 0;
    }
    double *acc = malloc(3 * d->n * sizeof *acc), *pot = malloc(d->n * sizeof *pot);
    double t0 = now();
    st = api->set_particles(s, d->n, d->pos, d->mass);
    if (st == GP_OK) st = api->compute_forces(s, acc, pot);
    double t1 = now();
    if (st != GP_OK) {
        printf("  forces: %s: %s\n", gp_status_name(st), api->last_error(s));
    } else {
        printf("  forces on a %zu-particle Plummer sphere in %.3f s (set_particles + compute_forces)\n",
               d->n, t1 - t0);
        printf("  particle 0: a = (%+.6e, %+.6e, %+.6e), phi = %+.6e\n", acc[0], acc[1], acc[2], pot[0]);
        if (strcmp(api->name, "cpu-direct") == 0 && !d->have_ref) {
            memcpy(d->ref, acc, 3 * d->n * sizeof *acc);
            d->have_ref = 1;
        }
        if (d->have_ref) {
            double worst = 0, sum = 0;
            for (size_t i = 0; i < d->n; ++i) {
                double e2 = 0, r2 = 0;
                for (int c = 0; c < 3; ++c) {
                    double e = acc[3 * i + c] - d->ref[3 * i + c];
                    e2 += e * e;
                    r2 += d->ref[3 * i + c] * d->ref[3 * i + c];
                }
                double rel = sqrt(e2 / r2);
                worst = rel > worst ? rel : worst;
                sum += rel;
            }
            printf("  vs cpu-direct: mean relative error %.2e, max %.2e\n", sum / d->n, worst);
        }
        gp_stats stats = {.struct_size = sizeof stats};
        if (api->get_stats(s, &stats) == GP_OK)
            printf("  stats: %llu particle-particle, %llu particle-cell interactions\n",
                   (unsigned long long)stats.pp_interactions, (unsigned long long)stats.pc_interactions);
    }
    api->finalize(s);
    free(acc);
    free(pot);
    gp_plugin_close(p);
    ++d->shown;
    return 0;
}

int main(int argc, char **argv)
{
    demo d = {0};
    d.n = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
    if (d.n < 2) d.n = 2;
    d.pos = malloc(3 * d.n * sizeof *d.pos);
    d.mass = malloc(d.n * sizeof *d.mass);
    d.ref = malloc(3 * d.n * sizeof *d.ref);
    if (!d.pos || !d.mass || !d.ref) { fprintf(stderr, "out of memory\n"); return 1; }
    plummer(d.n, d.pos, d.mass);

    char dirs[4096];
    gp_plugin_search_path(dirs, sizeof dirs);
    printf("gravplug demo: plugins on the search path %s\n", dirs);
    /* cpu-direct first, so the others are compared with it. */
    gp_plugin *ref = NULL;
    char err[1024];
    if (gp_plugin_open("cpu-direct", &ref, err, sizeof err) == GP_OK) {
        char path[4096];
        snprintf(path, sizeof path, "%s", gp_plugin_path(ref));
        gp_plugin_close(ref);
        show(path, "cpu-direct", &d);
    }
    size_t found = gp_plugin_list(show, &d);
    printf("\n%zu plugin file(s) found.\n", found);
    free(d.pos);
    free(d.mass);
    free(d.ref);
    return found ? 0 : 1;
}
