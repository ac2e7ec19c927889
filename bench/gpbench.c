/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpbench — time one plugin on one model and measure its error against
 * exact summation.
 *
 *   gpbench --plugin cpu-tree --model plummer --n 100000 \
 *           --set eps=0.01 --set theta=0.5 [--repeats 5] [--sample 2000]
 *           [--seed 1] [--reference cpu-direct|none] [--active 0.01] [--csv]
 *
 * The first call (set_particles + compute_forces) is timed alone; each
 * repeat is then update_positions + compute_forces for all particles with
 * rebuild=always, so the time includes a full tree build (and the
 * acceleration MAC has its previous |a|). Printed: the median (min, max)
 * over repeats, the
 * build / moments / walk split from get_stats, interactions per particle,
 * and the relative error of the accelerations and potentials on a random
 * sample of particles against the reference plugin (cpu-direct, same G and
 * eps): median, 99th percentile, maximum and mean.
 *
 * --active F times compute_forces alone with a random fraction F of the
 * particles active after an update_positions (the block-time-step case).
 * --active-pick random|inner: which particles (default random; inner: the
 * fraction closest to the centre of mass, as block time steps pick them).
 * --paths F: block steps with a random fraction F active, through ABI 1.0
 * (the host predicts all n and calls update_positions) and through ABI 1.1
 * (set_state of the last step's actives, predict, get_positions of the
 * active ones), on two instances, alternating which goes first; prints the
 * median seconds per step of each and checks their forces agree bit for
 * bit. Needs a plugin with the 1.1 calls.
 * --ic passes an option to the initial-conditions model (gp_ic_describe).
 * --csv adds one machine-readable line starting with RESULT, for sweeps.
 * Threads: OMP_NUM_THREADS (or --set threads=N).
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"

#define MAX_SET 32

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpbench --plugin NAME --model MODEL --n N [--set name=value]...\n"
            "               [--repeats R] [--sample K] [--seed S] [--reference NAME|none]\n"
            "               [--active FRACTION] [--active-pick random|inner] [--paths FRACTION]\n"
            "               [--ic option=value]... [--csv]\n"
            "models: plummer, hernquist, nfw, galaxy, uniform (see host_stub/ic/ic.h)\n");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, size_t n, double q) /* v sorted */
{
    if (n == 0) return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n) return v[n - 1];
    double f = pos - (double)i;
    return v[i] * (1 - f) + v[i + 1] * f;
}

/* Process CPU seconds: on a shared machine this, unlike wall time, does not
 * count the time other jobs held the cores (it still sees their cache
 * pressure). With one thread it is the honest cost of the evaluation. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

/* 0..n-1 in an order whose first k entries are a uniform random k-subset
 * (a partial Fisher-Yates shuffle from the generator state `state`). */
static uint32_t *random_first(size_t n, size_t k, uint64_t state)
{
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!idx) { fprintf(stderr, "gpbench: out of memory\n"); exit(1); }
    for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
    rng_state = state;
    for (size_t i = 0; i < k; i++) {
        size_t j = i + rng() % (n - i);
        uint32_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
    }
    return idx;
}

typedef struct solver {
    gp_plugin *plugin;
    const gp_api *api;
    gp_solver *s;
} solver;

static int open_solver(solver *sv, const char *name, const gp_param *kv, size_t nkv)
{
    char err[1024];
    if (gp_plugin_open(name, &sv->plugin, err, sizeof err) != GP_OK) {
        fprintf(stderr, "gpbench: %s\n", err);
        return -1;
    }
    sv->api = gp_plugin_api(sv->plugin);
    gp_init_args args = { .struct_size = sizeof args, .params = kv, .n_params = nkv,
                          .log = NULL, .log_user = NULL, .device = -1 };
    if (sv->api->init(&sv->s, &args) != GP_OK) {
        fprintf(stderr, "gpbench: %s: %s\n", name, sv->api->last_error(NULL));
        return -1;
    }
    return 0;
}

static void close_solver(solver *sv)
{
    if (sv->api && sv->s) sv->api->finalize(sv->s);
    if (sv->plugin) gp_plugin_close(sv->plugin);
}

#define CHECK(sv, call)                                                                   \
    do {                                                                                  \
        if ((call) != GP_OK) {                                                            \
            fprintf(stderr, "gpbench: %s: %s\n", (sv)->api->name, (sv)->api->last_error((sv)->s)); \
            return 1;                                                                     \
        }                                                                                 \
    } while (0)

/* The ABI's prediction as a host evaluates it (the 1.0 path's host pass). */
static double host_predict(double x, double v, double a, double dt)
{
    double h = 0.5 * dt * dt;
    double xv = x + dt * v;
    return xv + h * a;
}

/* --paths: one block step = (1.1) set_state of the last actives, predict,
 * get_positions of the actives, compute_forces; (1.0) the host predicts all
 * n (OpenMP), update_positions, compute_forces. Returns 0, or 1 on an error. */
static int block_paths(const char *plugin, const gp_param *kv, size_t nkv, const gp_ic *ic,
                       size_t n, double frac, int repeats, uint64_t seed)
{
    solver A = { 0 }, B = { 0 };
    if (open_solver(&A, plugin, kv, nkv) || open_solver(&B, plugin, kv, nkv)) return 1;
    if (!GRAVPLUG_API_HAS(A.api, predict)) {
        fprintf(stderr, "gpbench: --paths needs a plugin with the ABI 1.1 calls\n");
        return 1;
    }
    size_t na = (size_t)(frac * (double)n);
    if (na < 1) na = 1;
    double *x = malloc(3 * n * sizeof *x), *v = malloc(3 * n * sizeof *v), *a = calloc(3 * n, sizeof *a);
    double *t = calloc(n, sizeof *t), *xp = malloc(3 * n * sizeof *xp);
    double *accA = malloc(3 * na * sizeof *accA), *accB = malloc(3 * na * sizeof *accB);
    double *xs = malloc(3 * na * sizeof *xs), *vs = malloc(3 * na * sizeof *vs), *as = malloc(3 * na * sizeof *as);
    double *ts = malloc(na * sizeof *ts), *tA = malloc((size_t)repeats * sizeof *tA), *tB = malloc((size_t)repeats * sizeof *tB);
    uint32_t *perm = malloc(n * sizeof *perm), *act = malloc(na * sizeof *act), *last = malloc(na * sizeof *last);
    if (!x || !v || !a || !t || !xp || !accA || !accB || !xs || !vs || !as || !ts || !tA || !tB || !perm || !act || !last) {
        fprintf(stderr, "gpbench: out of memory\n");
        return 1;
    }
    memcpy(x, ic->pos, 3 * n * sizeof *x);
    memcpy(v, ic->vel, 3 * n * sizeof *v);
    for (size_t i = 0; i < n; i++) perm[i] = (uint32_t)i;
    rng_state = seed * 0x9E3779B97F4A7C15ull + 11;
    CHECK(&A, A.api->set_particles(A.s, n, x, ic->mass));
    CHECK(&B, B.api->set_particles(B.s, n, x, ic->mass));
    CHECK(&A, A.api->set_state(A.s, n, NULL, x, v, a, t));
    const double dt = 1.0 / 1024;
    size_t nlast = 0;
    gp_stats a0 = { .struct_size = sizeof a0 }, b0 = { .struct_size = sizeof b0 };
    A.api->get_stats(A.s, &a0);
    B.api->get_stats(B.s, &b0);
    int same = 1;
    for (int r = 0; r < repeats; r++) {
        double tn = (r + 1) * dt;
        for (size_t k = 0; k < na; k++) {     /* a fresh random active set */
            size_t j = k + rng() % (n - k);
            uint32_t u = perm[k]; perm[k] = perm[j]; perm[j] = u;
        }
        memcpy(act, perm, na * sizeof *act);
        for (int side = 0; side < 2; side++) {
            int run11 = (side == 0) == (r % 2 == 0);
            double t0 = omp_get_wtime();
            if (run11) {
                if (nlast) CHECK(&A, A.api->set_state(A.s, nlast, last, xs, vs, as, ts));
                CHECK(&A, A.api->predict(A.s, tn));
                CHECK(&A, A.api->get_positions(A.s, na, act, xs));
                CHECK(&A, A.api->set_active_subset(A.s, na, act));
                CHECK(&A, A.api->compute_forces(A.s, accA, NULL));
                tA[r] = omp_get_wtime() - t0;
            } else {
#pragma omp parallel for schedule(static)
                for (size_t i = 0; i < n; i++)
                    for (int c = 0; c < 3; c++)
                        xp[3 * i + c] = host_predict(x[3 * i + c], v[3 * i + c], a[3 * i + c], tn - t[i]);
                CHECK(&B, B.api->update_positions(B.s, xp));
                CHECK(&B, B.api->set_active_subset(B.s, na, act));
                CHECK(&B, B.api->compute_forces(B.s, accB, NULL));
                tB[r] = omp_get_wtime() - t0;
            }
        }
        same &= memcmp(accA, accB, 3 * na * sizeof *accA) == 0;
        /* the corrector (a kick, for the benchmark): new state of the actives */
        for (size_t k = 0; k < na; k++) {
            size_t i = act[k];
            for (int c = 0; c < 3; c++) {
                x[3 * i + c] = xs[3 * k + c];
                v[3 * i + c] += dt * accA[3 * k + c];
                a[3 * i + c] = accA[3 * k + c];
                vs[3 * k + c] = v[3 * i + c];
                as[3 * k + c] = a[3 * i + c];
            }
            t[i] = ts[k] = tn;
        }
        memcpy(last, act, na * sizeof *last);
        nlast = na;
    }
    gp_stats sa = { .struct_size = sizeof sa }, sb = { .struct_size = sizeof sb };
    A.api->get_stats(A.s, &sa);
    B.api->get_stats(B.s, &sb);
    qsort(tA, (size_t)repeats, sizeof *tA, cmp_double);
    qsort(tB, (size_t)repeats, sizeof *tB, cmp_double);
    printf("block steps, %zu of %zu active (%.3g%%), %d steps, alternating:\n", na, n, 100 * frac, repeats);
    printf("  ABI 1.0 (host predicts all, update_positions): median %.5f s  (min %.5f, max %.5f)\n",
           quantile(tB, (size_t)repeats, 0.5), tB[0], tB[repeats - 1]);
    printf("  ABI 1.1 (set_state, predict, get_positions):   median %.5f s  (min %.5f, max %.5f)\n",
           quantile(tA, (size_t)repeats, 0.5), tA[0], tA[repeats - 1]);
    printf("  forces of the two paths bit-identical: %s; builds %llu / %llu, refits %llu / %llu\n",
           same ? "yes" : "NO", (unsigned long long)(sb.tree_builds - b0.tree_builds),
           (unsigned long long)(sa.tree_builds - a0.tree_builds),
           (unsigned long long)(sb.tree_refits - b0.tree_refits),
           (unsigned long long)(sa.tree_refits - a0.tree_refits));
    printf("  mean per step from get_stats (1.0 / 1.1): build %.5f / %.5f s, moments %.5f / %.5f s, "
           "walk %.5f / %.5f s\n", (sb.seconds_build - b0.seconds_build) / repeats,
           (sa.seconds_build - a0.seconds_build) / repeats,
           (sb.seconds_moments - b0.seconds_moments) / repeats,
           (sa.seconds_moments - a0.seconds_moments) / repeats,
           (sb.seconds_walk - b0.seconds_walk) / repeats, (sa.seconds_walk - a0.seconds_walk) / repeats);
    free(x); free(v); free(a); free(t); free(xp); free(accA); free(accB); free(xs); free(vs);
    free(as); free(ts); free(tA); free(tB); free(perm); free(act); free(last);
    close_solver(&A);
    close_solver(&B);
    return same ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *plugin = NULL, *model = NULL, *reference = "cpu-direct";
    size_t n = 0, sample = 2000;
    int repeats = 5, csv = 0;
    double active = 0, paths = 0;
    int active_inner = 0;
    uint64_t seed = 1;
    gp_param kv[MAX_SET], ickv[MAX_SET];
    size_t nkv = 0, nic = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!strcmp(a, "--csv")) { csv = 1; continue; }
        if (!v) { usage(stderr); return 2; }
        if (!strcmp(a, "--plugin")) plugin = v;
        else if (!strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--n")) n = (size_t)strtod(v, NULL);
        else if (!strcmp(a, "--repeats")) repeats = atoi(v);
        else if (!strcmp(a, "--sample")) sample = (size_t)strtod(v, NULL);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--reference")) reference = v;
        else if (!strcmp(a, "--active")) active = atof(v);
        else if (!strcmp(a, "--paths")) paths = atof(v);
        else if (!strcmp(a, "--active-pick")) {
            if (!strcmp(v, "inner")) active_inner = 1;
            else if (strcmp(v, "random")) { usage(stderr); return 2; }
        }
        else if (!strcmp(a, "--set")) {
            char *eq = strchr(v, '=');
            if (!eq || nkv == MAX_SET) { fprintf(stderr, "gpbench: --set wants name=value\n"); return 2; }
            char *name = strndup(v, (size_t)(eq - v));
            kv[nkv++] = (gp_param){ name, eq + 1 };
        } else if (!strcmp(a, "--ic")) {
            char *eq = strchr(v, '=');
            if (!eq || nic == MAX_SET) { fprintf(stderr, "gpbench: --ic wants name=value\n"); return 2; }
            ickv[nic++] = (gp_param){ strndup(v, (size_t)(eq - v)), eq + 1 };
        } else { usage(stderr); return 2; }
        i++;
    }
    if (!plugin || !model || n == 0 || repeats < 1) { usage(stderr); return 2; }

    gp_ic ic;
    char err[1024];
    gp_ic_opts icopts = { ickv, nic };
    if (gp_ic_make(model, n, seed, nic ? &icopts : NULL, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "gpbench: %s\n", err);
        return 1;
    }
    if (paths > 0 && paths <= 1) {
        printf("plugin %s  model %s  n %zu  seed %llu  threads %d\n", plugin, model, n,
               (unsigned long long)seed, omp_get_max_threads());
        int rc = block_paths(plugin, kv, nkv, &ic, n, paths, repeats, seed);
        gp_ic_free(&ic);
        return rc;
    }
    solver sv = { 0 };
    if (open_solver(&sv, plugin, kv, nkv)) return 1;
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *times = malloc((size_t)repeats * sizeof *times);
    double *ctimes = malloc((size_t)repeats * sizeof *ctimes);
    if (!acc || !pot || !times || !ctimes) { fprintf(stderr, "gpbench: out of memory\n"); return 1; }

    /* The first call (set_particles + compute_forces) is timed on its own:
     * it is the only one without previous accelerations, which the
     * acceleration MAC pays for with an extra bh pass. The repeats then
     * time the steady state: update_positions (same positions) plus
     * compute_forces, with rebuild=always where the plugin has that
     * parameter (unless --set rebuild=... says otherwise), so every repeat
     * still builds its tree from scratch. */
    int has_rebuild = 0, user_rebuild = 0;
    {
        size_t np = 0;
        const gp_param_info *pi = sv.api->describe_params(&np);
        for (size_t k = 0; k < np; k++) has_rebuild |= !strcmp(pi[k].name, "rebuild");
        for (size_t k = 0; k < nkv; k++) user_rebuild |= !strcmp(kv[k].name, "rebuild");
        if (has_rebuild && !user_rebuild) CHECK(&sv, sv.api->set_param(sv.s, "rebuild", "always"));
    }
    double t_first = omp_get_wtime();
    CHECK(&sv, sv.api->set_particles(sv.s, n, ic.pos, ic.mass));
    CHECK(&sv, sv.api->compute_forces(sv.s, acc, pot));
    t_first = omp_get_wtime() - t_first;
    gp_stats st0 = { .struct_size = sizeof st0 }, st1 = { .struct_size = sizeof st1 };
    CHECK(&sv, sv.api->get_stats(sv.s, &st0));
    const gp_stats first_stats = st0;
    for (int r = 0; r < repeats; r++) {
        double t0 = omp_get_wtime(), c0 = cpu_seconds();
        CHECK(&sv, sv.api->update_positions(sv.s, ic.pos));
        CHECK(&sv, sv.api->compute_forces(sv.s, acc, pot));
        times[r] = omp_get_wtime() - t0;
        ctimes[r] = cpu_seconds() - c0;
    }
    CHECK(&sv, sv.api->get_stats(sv.s, &st1));
    qsort(times, (size_t)repeats, sizeof *times, cmp_double);
    double tmed = quantile(times, (size_t)repeats, 0.5);
    qsort(ctimes, (size_t)repeats, sizeof *ctimes, cmp_double);
    double cmed = quantile(ctimes, (size_t)repeats, 0.5);
    double calls = (double)(st1.force_calls - st0.force_calls);
    double t_build = (st1.seconds_build - st0.seconds_build) / calls;
    double t_mom = (st1.seconds_moments - st0.seconds_moments) / calls;
    double t_walk = (st1.seconds_walk - st0.seconds_walk) / calls;
    double ipp_pp = (double)(st1.pp_interactions - st0.pp_interactions) / calls / (double)n;
    double ipp_pc = (double)(st1.pc_interactions - st0.pc_interactions) / calls / (double)n;

    char params[1024] = "";
    for (size_t k = 0; k < nkv; k++) {
        size_t l = strlen(params);
        snprintf(params + l, sizeof params - l, "%s%s=%s", k ? ";" : "", kv[k].name, kv[k].value);
    }
    int threads = omp_get_max_threads();
    for (size_t k = 0; k < nkv; k++)
        if (!strcmp(kv[k].name, "threads") && atoi(kv[k].value) > 0) threads = atoi(kv[k].value);
    printf("plugin %s  model %s  n %zu  seed %llu  threads %d  params %s\n", plugin, model, n,
           (unsigned long long)seed, threads, nkv ? params : "(defaults)");
    for (size_t k = 0; k < nic; k++) printf("  model option %s=%s\n", ickv[k].name, ickv[k].value);
    printf("first call (set_particles + compute_forces): %.4f s  (build %.4f s, walk %.4f s, "
           "%.1f interactions per particle)\n", t_first, first_stats.seconds_build,
           first_stats.seconds_walk,
           (double)(first_stats.pp_interactions + first_stats.pc_interactions) / (double)n);
    printf("force evaluation, tree built each time (update_positions + compute_forces%s): median %.4f s  (min %.4f, max %.4f, %d repeats)\n",
           has_rebuild && !user_rebuild ? ", rebuild=always" : "", tmed, times[0], times[repeats - 1], repeats);
    printf("  process CPU time per evaluation: median %.4f s (all threads together)\n", cmed);
    printf("  per call: build %.4f s  moments %.4f s  walk %.4f s\n", t_build, t_mom, t_walk);
    printf("  interactions per particle: %.1f particle-particle + %.1f particle-cell\n", ipp_pp, ipp_pc);

    /* active-subset timing: a refit plus a walk for a random fraction */
    double t_active = NAN;
    size_t n_act = 0;
    if (active > 0 && active <= 1) {
        n_act = (size_t)(active * (double)n);
        if (n_act < 1) n_act = 1;
        uint32_t *idx = random_first(n, n_act, seed * 0x9E3779B97F4A7C15ull + 7);
        if (active_inner) {   /* the n_act particles nearest the centre of mass */
            double cm[3] = { 0, 0, 0 }, mt = 0;
            for (size_t i = 0; i < n; i++) {
                for (int a = 0; a < 3; a++) cm[a] += ic.mass[i] * ic.pos[3 * i + a];
                mt += ic.mass[i];
            }
            for (int a = 0; a < 3; a++) cm[a] /= mt > 0 ? mt : 1;
            double *r2 = malloc(n * sizeof *r2), *r2s = malloc(n * sizeof *r2s);
            for (size_t i = 0; i < n; i++) {
                r2[i] = 0;
                for (int a = 0; a < 3; a++) r2[i] += (ic.pos[3 * i + a] - cm[a]) * (ic.pos[3 * i + a] - cm[a]);
                r2s[i] = r2[i];
            }
            qsort(r2s, n, sizeof *r2s, cmp_double);
            double cut = r2s[n_act - 1];
            size_t k = 0;
            for (size_t i = 0; i < n && k < n_act; i++)
                if (r2[i] <= cut) idx[k++] = (uint32_t)i;
            n_act = k;
            free(r2); free(r2s);
        }
        CHECK(&sv, sv.api->set_active_subset(sv.s, n_act, idx));
        /* block steps refit the tree: back to the plugin's auto policy */
        if (has_rebuild && !user_rebuild) CHECK(&sv, sv.api->set_param(sv.s, "rebuild", "auto"));
        gp_stats sa0 = { .struct_size = sizeof sa0 }, sa1 = { .struct_size = sizeof sa1 };
        CHECK(&sv, sv.api->get_stats(sv.s, &sa0));
        for (int r = 0; r < repeats; r++) {
            double t0 = omp_get_wtime();
            CHECK(&sv, sv.api->update_positions(sv.s, ic.pos));
            CHECK(&sv, sv.api->compute_forces(sv.s, acc, pot));
            times[r] = omp_get_wtime() - t0;
        }
        CHECK(&sv, sv.api->get_stats(sv.s, &sa1));
        qsort(times, (size_t)repeats, sizeof *times, cmp_double);
        t_active = quantile(times, (size_t)repeats, 0.5);
        printf("active subset of %zu (%.3g%%, %s): update_positions + compute_forces median %.5f s\n",
               n_act, 100 * active, active_inner ? "inner" : "random", t_active);
        /* the per-particle cost of the walk alone (the refit is O(n) whatever is active) */
        double acalls = (double)(sa1.force_calls - sa0.force_calls);
        double awalk = (sa1.seconds_walk - sa0.seconds_walk) / acalls;
        printf("  walk %.5f s per call = %.3g us per active particle (all active: %.3g us); "
               "interactions per active particle %.1f (all active: %.1f)\n",
               awalk, 1e6 * awalk / (double)n_act, 1e6 * t_walk / (double)n,
               (double)(sa1.pp_interactions - sa0.pp_interactions + sa1.pc_interactions -
                        sa0.pc_interactions) / acalls / (double)n_act, ipp_pp + ipp_pc);
        CHECK(&sv, sv.api->set_active_subset(sv.s, 0, NULL));
        if (has_rebuild && !user_rebuild) CHECK(&sv, sv.api->set_param(sv.s, "rebuild", "always"));
        CHECK(&sv, sv.api->update_positions(sv.s, ic.pos));
        CHECK(&sv, sv.api->compute_forces(sv.s, acc, pot));
        free(idx);
    }

    double e[8] = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
    if (strcmp(reference, "none") != 0) {
        if (sample > n) sample = n;
        uint32_t *idx = random_first(n, sample, seed * 0x2545F4914F6CDD1Dull + 1);
        gp_param rkv[3];
        size_t nr = 0;
        for (size_t k = 0; k < nkv; k++)
            if (!strcmp(kv[k].name, "G") || !strcmp(kv[k].name, "eps") || !strcmp(kv[k].name, "threads"))
                rkv[nr++] = kv[k];
        solver ref = { 0 };
        if (open_solver(&ref, reference, rkv, nr)) return 1;
        double *racc = malloc(3 * sample * sizeof *racc), *rpot = malloc(sample * sizeof *rpot);
        CHECK(&ref, ref.api->set_particles(ref.s, n, ic.pos, ic.mass));
        CHECK(&ref, ref.api->set_active_subset(ref.s, sample, idx));
        CHECK(&ref, ref.api->compute_forces(ref.s, racc, rpot));
        double *ea = malloc(sample * sizeof *ea), *ep = malloc(sample * sizeof *ep);
        double suma = 0, sump = 0;
        for (size_t k = 0; k < sample; k++) {
            const double *a = &acc[3 * (size_t)idx[k]], *b = &racc[3 * k];
            double d = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                            (a[2] - b[2]) * (a[2] - b[2]));
            ea[k] = d / sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
            ep[k] = fabs(pot[idx[k]] - rpot[k]) / fabs(rpot[k]);
            suma += ea[k];
            sump += ep[k];
        }
        qsort(ea, sample, sizeof *ea, cmp_double);
        qsort(ep, sample, sizeof *ep, cmp_double);
        e[0] = quantile(ea, sample, 0.5); e[1] = quantile(ea, sample, 0.99); e[2] = ea[sample - 1];
        e[3] = suma / (double)sample;
        e[4] = quantile(ep, sample, 0.5); e[5] = quantile(ep, sample, 0.99); e[6] = ep[sample - 1];
        e[7] = sump / (double)sample;
        printf("relative error vs %s on %zu random particles:\n", reference, sample);
        printf("  acceleration: median %.3e  99%% %.3e  max %.3e  mean %.3e\n", e[0], e[1], e[2], e[3]);
        printf("  potential:    median %.3e  99%% %.3e  max %.3e  mean %.3e\n", e[4], e[5], e[6], e[7]);
        free(racc); free(rpot); free(ea); free(ep); free(idx);
        close_solver(&ref);
    }
    if (csv)
        printf("RESULT,%s,%s,%zu,%s,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%.4g,%zu,%.6g,%.6g\n",
               plugin, model, n, nkv ? params : "-", threads, tmed, t_build, t_mom, t_walk, ipp_pp,
               ipp_pc, e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], n_act, t_active, cmed);
    free(acc); free(pot); free(times); free(ctimes);
    close_solver(&sv);
    gp_ic_free(&ic);
    return 0;
}
