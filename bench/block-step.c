/* SPDX-License-Identifier: Apache-2.0 */
/*
 * block-step.c — seconds per block step through ABI 1.0 and ABI 1.1, on
 * the same plugin, the same particles and the same active sets, in one
 * run, alternating between the paths.
 *
 *   block-step [--plugin P] [--n N1,N2,...] [--active F] [--steps S] [--sim]
 *              [--rounds R] [--model M] [--eps E] [--seed X] [--param k=v]...
 *              [--dtmax D] [--eta ETA]
 *
 * One block step is what block-rk2 does (integrators/schemes/block_rk2.c,
 * integrators/solver/force_held.c), with exactly a fraction F (default 1%) of
 * the particles active, a fresh random subset each step (fixed seed, the
 * same sequence for both paths):
 *   1.0: the host predicts all n particles to T (OpenMP, the ABI's
 *        expression), update_positions(n), set_active_subset, compute_forces;
 *   1.1: predict(T) in the plugin, get_positions(active), set_active_subset,
 *        compute_forces, then set_state of the corrected active particles.
 * Both then correct the active particles (x = x(T), v += dt/2 (a + a(T)),
 * a = a(T), t_i = T). Each path has its own plugin instance and its own
 * copy of the state; at the end the two copies are compared bit for bit
 * (they must agree: the benchmark did the same work twice).
 *
 * With --sim, the same comparison through gp_sim itself: two block-rk2
 * simulations (gp_sim_set_solver_path "1.0" and "1.1", dt_max --dtmax,
 * eta --eta) take the same block steps with their natural active sets;
 * the mean active fraction is printed with the times.
 *
 * Rounds alternate the order of the paths (1.0 first in even rounds); each
 * round runs S steps per path; the first round is a warm-up and not
 * counted. Output: per N, the median and mean seconds per block step of
 * each path, their ratio, the plugin's own seconds (build, moments, walk)
 * per step, and the median seconds of the part the paths differ in:
 * moving the particles to T (1.0: host prediction + update_positions;
 * 1.1: predict + get_positions). Results go in
 * bench/results/abi11-block-step/raw/abi11-block-step.md.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gp_sim.h"
#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "block-step: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

/* The ABI's prediction (compiled with -ffp-contract=off, as the host). */
static inline double predict_coord(double x, double v, double a, double dt)
{
    double h = 0.5 * dt * dt;
    double xv = x + dt * v;
    return xv + h * a;
}

typedef struct path {
    const char *name;
    int v11;
    gp_solver *s;
    size_t n;
    double *pos, *vel, *acc, *t;     /* host state: at each particle's t_i */
    double *work, *anew, *pack;      /* 3n scratch, 3n, 10n */
    double *times;                   /* seconds of the counted steps */
    double *t_move;                  /* of which: moving the particles to T
                                        (1.0: host predict + update_positions;
                                        1.1: predict + get_positions) */
    size_t n_times;
    gp_stats st0, st1;
} path;

static const gp_api *api;

static void check(gp_status st, path *p, const char *what)
{
    if (st != GP_OK) die("%s: %s", what, api->last_error(p->s));
}

static void setup(path *p, const gp_ic *ic, const gp_init_args *args, size_t max_steps)
{
    size_t n = ic->n;
    p->n = n;
    p->pos = malloc(3 * n * sizeof(double));
    p->vel = malloc(3 * n * sizeof(double));
    p->acc = malloc(3 * n * sizeof(double));
    p->t = calloc(n, sizeof(double));
    p->work = malloc(3 * n * sizeof(double));
    p->anew = malloc(3 * n * sizeof(double));
    p->pack = malloc(10 * n * sizeof(double));
    p->times = malloc(max_steps * sizeof(double));
    p->t_move = malloc(max_steps * sizeof(double));
    if (!p->pos || !p->vel || !p->acc || !p->t || !p->work || !p->anew || !p->pack || !p->times
        || !p->t_move)
        die("out of memory for %s particles%s", "n", "");
    memcpy(p->pos, ic->pos, 3 * n * sizeof(double));
    memcpy(p->vel, ic->vel, 3 * n * sizeof(double));
    if (api->init(&p->s, args) != GP_OK) die("init: %s%s", api->last_error(NULL), "");
    check(api->set_particles(p->s, n, p->pos, ic->mass), p, "set_particles");
    check(api->compute_forces(p->s, p->acc, NULL), p, "compute_forces (all)");
    if (p->v11) {
        double *x = p->pack, *v = x + 3 * n, *a = v + 3 * n;
        memcpy(x, p->pos, 3 * n * sizeof(double));
        memcpy(v, p->vel, 3 * n * sizeof(double));
        memcpy(a, p->acc, 3 * n * sizeof(double));
        check(api->set_state(p->s, n, NULL, x, v, a, p->t), p, "set_state (all)");
    }
}

/* One block step to time T with active set idx[na]; returns the seconds
 * spent moving the particles to T. */
static double block_step(path *p, double T, size_t na, const uint32_t *idx)
{
    const long long n = (long long)p->n;
    double t0 = now();
    const double *xp;
    if (p->v11) {
        check(api->predict(p->s, T), p, "predict");
        check(api->get_positions(p->s, na, idx, p->work), p, "get_positions");
        xp = p->work;
    } else {
#pragma omp parallel for schedule(static) if (n > 16384)
        for (long long j = 0; j < n; ++j) {
            double dt = T - p->t[j];
            for (int c = 0; c < 3; ++c)
                p->work[3 * j + c] = predict_coord(p->pos[3 * j + c], p->vel[3 * j + c], p->acc[3 * j + c], dt);
        }
        check(api->update_positions(p->s, p->work), p, "update_positions");
        xp = NULL;
    }
    double moved = now() - t0;
    check(api->set_active_subset(p->s, na, idx), p, "set_active_subset");
    check(api->compute_forces(p->s, p->anew, NULL), p, "compute_forces");
    double *x = p->pack, *v = x + 3 * na, *a = v + 3 * na, *t = a + 3 * na;
    for (size_t k = 0; k < na; ++k) {
        size_t i = idx[k];
        const double *xi = xp ? xp + 3 * k : p->work + 3 * i;
        double dt = T - p->t[i];
        for (int c = 0; c < 3; ++c) {
            p->pos[3 * i + c] = xi[c];
            p->vel[3 * i + c] += 0.5 * dt * (p->acc[3 * i + c] + p->anew[3 * k + c]);
            p->acc[3 * i + c] = p->anew[3 * k + c];
            x[3 * k + c] = p->pos[3 * i + c];
            v[3 * k + c] = p->vel[3 * i + c];
            a[3 * k + c] = p->acc[3 * i + c];
        }
        p->t[i] = T;
        t[k] = T;
    }
    if (p->v11) check(api->set_state(p->s, na, idx, x, v, a, t), p, "set_state");
    return moved;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += v[i];
    return s / (double)n;
}

/* A random subset of na distinct indices < n, sorted (Floyd's algorithm
 * over a bitmap; xorshift, fixed seed). */
static void draw_active(uint64_t *rng, size_t n, size_t na, uint32_t *idx, uint8_t *mark)
{
    memset(mark, 0, n);
    for (size_t j = n - na; j < n; ++j) {
        *rng ^= *rng << 13; *rng ^= *rng >> 7; *rng ^= *rng << 17;
        size_t r = (size_t)(*rng % (j + 1));
        if (mark[r]) r = j;
        mark[r] = 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (mark[i]) idx[k++] = (uint32_t)i;
}

/* --sim: block-rk2 through gp_sim on both paths, rounds alternating. */
static void sim_compare(const char *plugin, const gp_ic *ic, const gp_param *params, size_t n_params,
                        double dtmax, double eta, int steps, int rounds)
{
    gp_sim *sims[2];
    const char *paths[2] = { "1.0", "1.1" };
    const char *names[16], *values[16];
    for (size_t k = 0; k < n_params; ++k) { names[k] = params[k].name; values[k] = params[k].value; }
    char buf[32];
    double *times[2];
    size_t nt[2] = { 0, 0 };
    uint64_t active[2] = { 0, 0 };
    for (int k = 0; k < 2; ++k) {
        times[k] = malloc((size_t)steps * (size_t)rounds * sizeof(double));
        if (gp_sim_new(&sims[k]) != GP_OK
            || gp_sim_open_solver(sims[k], plugin, n_params, names, values) != GP_OK
            || gp_sim_set_particles(sims[k], ic->n, ic->pos, ic->vel, ic->mass, NULL) != GP_OK
            || gp_sim_set_integrator(sims[k], "block-rk2") != GP_OK
            || (snprintf(buf, sizeof buf, "%.17g", dtmax), gp_sim_set_integrator_param(sims[k], "dt", buf)) != GP_OK
            || (snprintf(buf, sizeof buf, "%.17g", eta), gp_sim_set_integrator_param(sims[k], "eta", buf)) != GP_OK
            || gp_sim_set_solver_path(sims[k], paths[k]) != GP_OK
            || gp_sim_step(sims[k], 0.0) != GP_OK)
            die("gp_sim: %s%s", gp_sim_last_error(sims[k]), "");
    }
    for (int r = 0; r < rounds; ++r)
        for (int o = 0; o < 2; ++o) {
            int k = (r % 2) ^ o;
            for (int s = 0; s < steps; ++s) {
                double t0 = now();
                if (gp_sim_step(sims[k], 1e30) != GP_OK) die("step: %s%s", gp_sim_last_error(sims[k]), "");
                double dt = now() - t0;
                uint64_t la = 0;
                gp_sim_counter(sims[k], "last_active", &la);
                if (r > 0) { times[k][nt[k]++] = dt; active[k] += la; }
            }
        }
    static double pa[2][3];
    for (int k = 0; k < 2; ++k) {
        double *p = malloc(3 * ic->n * sizeof(double));
        gp_sim_get_particles(sims[k], p, NULL, NULL, NULL);
        memcpy(pa[k], p, sizeof pa[k]);
        free(p);
    }
    double med[2];
    for (int k = 0; k < 2; ++k) {
        med[k] = median(times[k], nt[k]);
        printf("%zu\tsim-%s\t%.5f\t%.5f\t\t\t\t# mean active fraction %.4f, in use: %s\n", ic->n,
               paths[k], med[k], mean(times[k], nt[k]), (double)active[k] / (double)nt[k] / (double)ic->n,
               gp_sim_solver_path_in_use(sims[k]));
        free(times[k]);
        gp_sim_free(sims[k]);
    }
    printf("# n = %zu through gp_sim block-rk2: 1.0 / 1.1 median ratio %.3f (first particle %s)\n",
           ic->n, med[0] / med[1], memcmp(pa[0], pa[1], sizeof pa[0]) == 0 ? "bit-identical" : "DIFFERENT");
}

int main(int argc, char **argv)
{
    const char *plugin = "cpu-tree", *model = "plummer", *ns = "262144,1048576", *eps = "0.01";
    double frac = 0.01, dtmax = 0.0625, eta = 0.2;
    int sim_mode = 0;
    int steps = 10, rounds = 6;
    uint64_t seed = 1;
    gp_param params[16];
    size_t n_params = 0;
    for (int a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "--sim")) { sim_mode = 1; continue; }
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!v) die("%s needs a value%s", argv[a], "");
        if (!strcmp(argv[a], "--plugin")) plugin = v;
        else if (!strcmp(argv[a], "--n")) ns = v;
        else if (!strcmp(argv[a], "--active")) frac = atof(v);
        else if (!strcmp(argv[a], "--steps")) steps = atoi(v);
        else if (!strcmp(argv[a], "--rounds")) rounds = atoi(v);
        else if (!strcmp(argv[a], "--model")) model = v;
        else if (!strcmp(argv[a], "--eps")) eps = v;
        else if (!strcmp(argv[a], "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(argv[a], "--dtmax")) dtmax = atof(v);
        else if (!strcmp(argv[a], "--eta")) eta = atof(v);
        else if (!strcmp(argv[a], "--param") && n_params < 15 && strchr(v, '=')) {
            char *kv = strdup(v), *eq = strchr(kv, '=');
            *eq = '\0';
            params[n_params++] = (gp_param){ kv, eq + 1 };
        } else die("unknown option %s (see the comment at the top of bench/block-step.c)%s", argv[a], "");
        ++a;
    }
    if (!(frac > 0 && frac <= 1) || steps < 1 || rounds < 2) die("bad --active, --steps or --rounds%s%s", "", "");
    params[n_params++] = (gp_param){ "eps", eps };

    char err[1024];
    gp_plugin *pl = NULL;
    if (gp_plugin_open(plugin, &pl, err, sizeof err) != GP_OK) die("%s%s", err, "");
    api = gp_plugin_api(pl);
    if (!(api->abi_minor >= 1 && GRAVPLUG_API_HAS(api, predict) && GRAVPLUG_API_HAS(api, set_state)
          && GRAVPLUG_API_HAS(api, get_positions)))
        die("plugin %s does not offer the ABI 1.1 calls%s", plugin, "");
    gp_init_args args = { sizeof args, params, n_params, NULL, NULL, -1, NULL };

    printf("# block-step: %s, model %s, eps %s, %.3g%% active, %d steps x %d rounds (first is warm-up), "
           "%d OpenMP threads\n", plugin, model, eps, 100 * frac, steps, rounds, omp_get_max_threads());
    printf("# n\tpath\tmedian_s\tmean_s\tbuild_s/step\tmoments_s/step\twalk_s/step\tmove_median_s\n");
    for (const char *q = ns; *q;) {
        size_t n = strtoull(q, (char **)&q, 10);
        if (*q == ',') ++q;
        gp_ic ic;
        if (gp_ic_make(model, n, seed, NULL, &ic, err, sizeof err) != 0) die("%s%s", err, "");
        if (sim_mode) {
            sim_compare(plugin, &ic, params, n_params, dtmax, eta, steps, rounds);
            gp_ic_free(&ic);
            continue;
        }
        size_t na = (size_t)((double)n * frac + 0.5);
        if (na < 1) na = 1;
        path ps[2] = { { .name = "1.0", .v11 = 0 }, { .name = "1.1", .v11 = 1 } };
        for (int k = 0; k < 2; ++k) setup(&ps[k], &ic, &args, (size_t)steps * (size_t)rounds);
        uint32_t *idx = malloc(na * sizeof *idx);
        uint8_t *mark = malloc(n);
        uint64_t rng_seed = 0x9E3779B97F4A7C15ull ^ seed;
        const double tick = 1.0 / 1024;
        int step_no = 0;
        for (int r = 0; r < rounds; ++r) {
            for (int o = 0; o < 2; ++o) {
                path *p = &ps[(r % 2) ^ o];
                if (r == 1) { p->st0.struct_size = sizeof p->st0; api->get_stats(p->s, &p->st0); }
                uint64_t rng = rng_seed + (uint64_t)r;   /* the same active sets for both */
                for (int s = 0; s < steps; ++s) {
                    draw_active(&rng, n, na, idx, mark);
                    double T = (double)(step_no + s + 1) * tick;
                    double t0 = now();
                    double moved = block_step(p, T, na, idx);
                    if (r > 0) {
                        p->t_move[p->n_times] = moved;
                        p->times[p->n_times++] = now() - t0;
                    }
                }
            }
            step_no += steps;
        }
        int same = 1;
        for (int k = 0; k < 2; ++k) { ps[k].st1.struct_size = sizeof ps[k].st1; api->get_stats(ps[k].s, &ps[k].st1); }
        same = memcmp(ps[0].pos, ps[1].pos, 3 * n * sizeof(double)) == 0
            && memcmp(ps[0].vel, ps[1].vel, 3 * n * sizeof(double)) == 0;
        double med[2];
        for (int k = 0; k < 2; ++k) {
            path *p = &ps[k];
            double cnt = (double)p->n_times;
            double mn = mean(p->times, p->n_times);
            med[k] = median(p->times, p->n_times);
            printf("%zu\t%s\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\t%.5f\n", n, p->name, med[k], mn,
                   (p->st1.seconds_build - p->st0.seconds_build) / cnt,
                   (p->st1.seconds_moments - p->st0.seconds_moments) / cnt,
                   (p->st1.seconds_walk - p->st0.seconds_walk) / cnt,
                   median(p->t_move, p->n_times));
        }
        printf("# n = %zu, %zu active: 1.0 / 1.1 median ratio %.3f; the two paths' states are %s\n",
               n, na, med[0] / med[1], same ? "bit-identical" : "DIFFERENT (a bug)");
        fflush(stdout);
        for (int k = 0; k < 2; ++k) {
            path *p = &ps[k];
            api->finalize(p->s);
            free(p->pos); free(p->vel); free(p->acc); free(p->t); free(p->work); free(p->anew);
            free(p->pack); free(p->times); free(p->t_move);
        }
        free(idx);
        free(mark);
        gp_ic_free(&ic);
    }
    return 0;
}
