/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cudabench — the GPU plugins' benchmarks (wall-clock time: the GPU works
 * while the host waits).
 *
 *   cudabench direct [--nmin 14] [--nmax 20] [--eps 0.01] [--precision mixed]
 *                    [--seconds 1]
 *       cuda-direct on Plummer spheres of 2^nmin .. 2^nmax particles, all
 *       active: interactions per second = N^2 / (seconds per compute_forces),
 *       the median over calls repeated for at least --seconds; also the
 *       kernel alone (get_stats' seconds_walk: launch to synchronisation,
 *       without the result download and the host's scatter).
 *
 *   cudabench jerk [--nmin 16] [--nmax 18] [--eps 0.01] [--precision mixed]
 *                  [--seconds 1]
 *       cuda-direct (ABI 1.2) on Plummer spheres of 2^nmin, 2^(nmin+2),
 *       ... 2^nmax particles, all active, with their velocities held
 *       (set_state, predict): compute_forces_ex with acc and the jerk
 *       against compute_forces (acc only) on the same particles,
 *       alternating calls: interactions per second of each (N^2 / median
 *       seconds per call), the kernel alone (get_stats' seconds_walk), and
 *       the ratio of the two calls' seconds.
 *
 *   cudabench tree --model plummer|galaxy --n N [--repeats 5] [--sample 4096]
 *                  [--active 0.01] [--seed 1] --config "mac=bmax theta=0.5" ...
 *       cuda-tree: for each --config (name=value pairs, space separated), on
 *       the same particles: seconds per full force evaluation with the build
 *       included (set_particles + compute_forces: positions in, all results
 *       out), median of --repeats after one warm-up; the build / moments /
 *       walk / transfer split from get_stats; the relative force and
 *       potential error (median, 99th percentile, max) on --sample random
 *       particles against cuda-direct in double precision; then with
 *       --active F: update_positions (positions moved by a tiny drift, so
 *       rebuild=auto may refit) + a new random active subset of F*N
 *       particles + compute_forces, median seconds per call with the refit
 *       included, and how many of those calls rebuilt.
 *
 *   cudabench block [--plugin cuda-tree] [--model galaxy] [--n 16777216]
 *                   [--active 0.01] [--steps 8] [--dt 0.001] [--config "mac=bmax theta=0.5"]
 *                   [--select random|accel] [--order index|drawn]
 *       one block step as an integrator takes it, through ABI 1.1 and
 *       through 1.0 on the same particles, alternating per step: 1.1 =
 *       predict(T) + get_positions(active) + set_active_subset +
 *       compute_forces + a kick on the host + set_state(active) (the state
 *       stays on the device); 1.0 = the host predicts all N on one thread
 *       (as the 1.0 integrators do) + update_positions + set_active_subset
 *       + compute_forces. The active set: a new random subset each step
 *       (random), or the same largest |a| every step (accel, a block step's
 *       deepest level); handed over in ascending index order (index, what
 *       gravhost's level bins give) or in the order drawn (drawn: random,
 *       or by |a| descending). Per path: median seconds per step,
 *       get_stats' transfer / build / moments / walk seconds per step (the
 *       transfer must be O(n_active) through 1.1), and the builds and refits.
 *
 * Every result line starts with RESULT, comma separated, for the sweep
 * files of bench/gpu/run-all.sh. Models come from libgravplug's gp_ic_make.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"
#include "testlib.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, tl_cmp_double);
    return n ? v[n / 2] : NAN;
}

static uint64_t rng_s = 88172645463325252ull;
static uint64_t rng(void)
{
    rng_s ^= rng_s << 13; rng_s ^= rng_s >> 7; rng_s ^= rng_s << 17;
    return rng_s;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "cudabench: %s: %s\n", what, why);
    exit(1);
}

typedef struct solver { gp_plugin *plug; const gp_api *api; gp_solver *s; } solver;

/* "a=b c=d" -> set_param calls */
static void apply(solver *v, const char *config)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", config);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *eq = strchr(tok, '=');
        if (!eq) die("bad --config item (want name=value)", tok);
        *eq = '\0';
        if (v->api->set_param(v->s, tok, eq + 1) != GP_OK) die(tok, v->api->last_error(v->s));
    }
}

/* CUDABENCH_LOG=debug: the plugins' debug lines (phase times, group
 * counts) on stderr */
static void log_stderr(void *user, int level, const char *message)
{
    (void)user;
    fprintf(stderr, "[log %d] %s\n", level, message);
}

static solver open_solver(const char *name)
{
    solver v;
    char err[1024];
    if (gp_plugin_open(name, &v.plug, err, sizeof err) != GP_OK) die(name, err);
    v.api = gp_plugin_api(v.plug);
    const char *lg = getenv("CUDABENCH_LOG");
    gp_init_args a = {.struct_size = sizeof a, .device = -1};
    if (lg && !strcmp(lg, "debug")) a.log = log_stderr;
    if (v.api->init(&v.s, &a) != GP_OK) die(name, v.api->last_error(NULL));
    return v;
}

static void check(solver *v, gp_status st, const char *what)
{
    if (st != GP_OK) die(what, v->api->last_error(v->s));
}

static gp_ic make_ic(const char *model, size_t n, uint64_t seed)
{
    gp_ic ic;
    char err[512];
    if (gp_ic_make(model, n, seed, NULL, &ic, err, sizeof err) != 0) die(model, err);
    return ic;
}

/* The options of the cuda-direct modes (direct, jerk), parsed from argv[2..] */
typedef struct direct_opts {
    int nmin, nmax;
    const char *eps, *prec;
    double min_seconds;
} direct_opts;

static direct_opts parse_direct_opts(int argc, char **argv, int nmin, int nmax)
{
    direct_opts o = {nmin, nmax, "0.01", "mixed", 1.0};
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nmin")) o.nmin = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--nmax")) o.nmax = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--eps")) o.eps = argv[i + 1];
        else if (!strcmp(argv[i], "--precision")) o.prec = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds")) o.min_seconds = atof(argv[i + 1]);
        else die("unknown option", argv[i]);
    }
    return o;
}

static void set_direct_opts(solver *d, const direct_opts *o)
{
    check(d, d->api->set_param(d->s, "eps", o->eps), "eps");
    check(d, d->api->set_param(d->s, "precision", o->prec), "precision");
}

static int run_direct(int argc, char **argv)
{
    const direct_opts opt = parse_direct_opts(argc, argv, 14, 20);
    const int nmin = opt.nmin, nmax = opt.nmax;
    const char *eps = opt.eps, *prec = opt.prec;
    const double min_seconds = opt.min_seconds;
    solver d = open_solver("cuda-direct");
    set_direct_opts(&d, &opt);
    printf("# cuda-direct, Plummer, all active, eps = %s, precision = %s\n", eps, prec);
    printf("# RESULT,direct,N,precision,eps,calls,seconds_per_call,interactions_per_second,"
           "kernel_seconds,kernel_interactions_per_second\n");
    for (int lg = nmin; lg <= nmax; ++lg) {
        size_t n = (size_t)1 << lg;
        gp_ic ic = make_ic("plummer", n, 1);
        double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
        check(&d, d.api->set_particles(d.s, n, ic.pos, ic.mass), "set_particles");
        check(&d, d.api->compute_forces(d.s, acc, pot), "compute_forces (warm-up)");
        double t[1000];
        int k = 0;
        gp_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
        d.api->get_stats(d.s, &s0);
        double start = now();
        while (k < 1000 && (k < 3 || now() - start < min_seconds)) {
            double t0 = now();
            check(&d, d.api->compute_forces(d.s, acc, pot), "compute_forces");
            t[k++] = now() - t0;
        }
        d.api->get_stats(d.s, &s1);
        double sec = median(t, (size_t)k);
        double kern = (s1.seconds_walk - s0.seconds_walk) / k; /* the kernel alone, mean */
        printf("RESULT,direct,%zu,%s,%s,%d,%.6g,%.4g,%.6g,%.4g\n", n, prec, eps, k, sec,
               (double)n * (double)n / sec, kern, (double)n * (double)n / kern);
        fflush(stdout);
        free(acc); free(pot);
        gp_ic_free(&ic);
    }
    d.api->finalize(d.s);
    gp_plugin_close(d.plug);
    return 0;
}

static int run_tree(int argc, char **argv)
{
    const char *model = "plummer";
    size_t n = 1 << 20, sample = 4096;
    int repeats = 5;
    double active = 0.01;
    uint64_t seed = 1;
    const char *configs[64];
    int nconf = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--model")) model = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) n = (size_t)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeats")) repeats = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sample")) sample = (size_t)atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--active")) active = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = (uint64_t)atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--config") && nconf < 64) configs[nconf++] = argv[i + 1];
        else die("unknown option", argv[i]);
    }
    if (nconf == 0) configs[nconf++] = "mac=bmax theta=0.5";
    if (repeats < 1) repeats = 1;
    if (repeats > 100) repeats = 100;
    if (sample > n) sample = n;
    gp_ic ic = make_ic(model, n, seed);
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    double *pos2 = malloc(3 * n * sizeof *pos2);
    uint32_t *idx = malloc(n * sizeof *idx);
    uint32_t *sidx = malloc(sample * sizeof *sidx);
    double *ra = malloc(3 * sample * sizeof *ra), *rp = malloc(sample * sizeof *rp);
    double *ga = malloc(3 * sample * sizeof *ga), *gpt = malloc(sample * sizeof *gpt);
    if (!acc || !pot || !pos2 || !idx || !sidx || !ra || !rp || !ga || !gpt) die("host memory", "out of memory");

    /* the exact reference on a random sample: cuda-direct in double */
    for (size_t i = 0; i < n; ++i) idx[i] = (uint32_t)i;
    for (size_t i = 0; i < sample; ++i) { /* partial Fisher-Yates: distinct */
        size_t j = i + rng() % (n - i);
        uint32_t t = idx[i]; idx[i] = idx[j]; idx[j] = t;
        sidx[i] = idx[i];
    }
    solver ref = open_solver("cuda-direct");
    check(&ref, ref.api->set_param(ref.s, "precision", "double"), "precision");
    check(&ref, ref.api->set_param(ref.s, "eps", "0.01"), "eps");  /* as cuda-tree below */
    check(&ref, ref.api->set_particles(ref.s, n, ic.pos, ic.mass), "reference set_particles");
    check(&ref, ref.api->set_active_subset(ref.s, sample, sidx), "reference subset");
    check(&ref, ref.api->compute_forces(ref.s, ra, rp), "reference forces");
    ref.api->finalize(ref.s);
    gp_plugin_close(ref.plug);

    printf("# cuda-tree, model %s, N = %zu, eps = 0.01, error sample %zu, repeats %d\n", model, n, sample, repeats);
    printf("# RESULT,tree,model,N,config,sec_full,sec_build,sec_moments,sec_walk,sec_transfer,"
           "acc_med,acc_p99,acc_max,pot_med,pot_p99,active_frac,sec_active,active_rebuilds,pp_per_particle,pc_per_particle,pp_per_active,pc_per_active\n");
    for (int c = 0; c < nconf; ++c) {
        solver t = open_solver("cuda-tree");
        check(&t, t.api->set_param(t.s, "eps", "0.01"), "eps");
        apply(&t, configs[c]);
        gp_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
        /* warm-up (and the acceleration MAC's previous |a|) */
        check(&t, t.api->set_particles(t.s, n, ic.pos, ic.mass), "set_particles");
        check(&t, t.api->compute_forces(t.s, acc, pot), "compute_forces");
        double tt[100];
        t.api->get_stats(t.s, &s0);
        for (int r = 0; r < repeats; ++r) {
            double t0 = now();
            check(&t, t.api->set_particles(t.s, n, ic.pos, ic.mass), "set_particles");
            check(&t, t.api->compute_forces(t.s, acc, pot), "compute_forces");
            tt[r] = now() - t0;
        }
        t.api->get_stats(t.s, &s1);
        double sec_full = median(tt, (size_t)repeats);
        double R = (double)repeats;
        for (size_t k = 0; k < sample; ++k) {
            memcpy(&ga[3 * k], &acc[3 * sidx[k]], 3 * sizeof *ga);
            gpt[k] = pot[sidx[k]];
        }
        tl_errstat ea = tl_relerr(sample, 3, ga, ra), ep = tl_relerr(sample, 1, gpt, rp);
        double pp = (double)(s1.pp_interactions - s0.pp_interactions) / R / (double)n;
        double pc = (double)(s1.pc_interactions - s0.pc_interactions) / R / (double)n;

        double sec_act = NAN, app = NAN, apc = NAN;
        unsigned long long rebuilds = 0;
        size_t na = (size_t)(active * (double)n);
        if (na > 0) {
            gp_stats a0 = {.struct_size = sizeof a0}, a1 = {.struct_size = sizeof a1};
            t.api->get_stats(t.s, &a0);
            for (int r = 0; r < repeats; ++r) {
                for (size_t i = 0; i < 3 * n; ++i) pos2[i] = ic.pos[i] * (1.0 + 1e-6 * (double)(r + 1));
                for (size_t i = 0; i < n; ++i) idx[i] = (uint32_t)i;
                for (size_t i = 0; i < na; ++i) {
                    size_t j = i + rng() % (n - i);
                    uint32_t x = idx[i]; idx[i] = idx[j]; idx[j] = x;
                }
                double t0 = now();
                check(&t, t.api->update_positions(t.s, pos2), "update_positions");
                check(&t, t.api->set_active_subset(t.s, na, idx), "set_active_subset");
                check(&t, t.api->compute_forces(t.s, acc, NULL), "compute_forces (active)");
                tt[r] = now() - t0;
            }
            t.api->get_stats(t.s, &a1);
            sec_act = median(tt, (size_t)repeats);
            rebuilds = (unsigned long long)(a1.tree_builds - a0.tree_builds);
            app = (double)(a1.pp_interactions - a0.pp_interactions) / R / (double)na;
            apc = (double)(a1.pc_interactions - a0.pc_interactions) / R / (double)na;
        }
        printf("RESULT,tree,%s,%zu,%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%.4g,%.4g,%.4g,%.4g,%g,%.6g,%llu,%.1f,%.1f,%.1f,%.1f\n",
               model, n, configs[c], sec_full, (s1.seconds_build - s0.seconds_build) / R,
               (s1.seconds_moments - s0.seconds_moments) / R, (s1.seconds_walk - s0.seconds_walk) / R,
               (s1.seconds_transfer - s0.seconds_transfer) / R, ea.median, ea.p99, ea.max, ep.median, ep.p99,
               active, sec_act, rebuilds, pp, pc, app, apc);
        fflush(stdout);
        t.api->finalize(t.s);
        gp_plugin_close(t.plug);
    }
    gp_ic_free(&ic);
    free(acc); free(pot); free(pos2); free(idx); free(sidx); free(ra); free(rp); free(ga); free(gpt);
    return 0;
}

static int by_index_ascending(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* qsort's comparator has no user pointer: the keys of run_block's sort */
static const double *sort_key;
static int by_key_descending(const void *a, const void *b)
{
    double x = sort_key[*(const uint32_t *)a], y = sort_key[*(const uint32_t *)b];
    return (x < y) - (x > y);
}

static int run_block(int argc, char **argv)
{
    const char *model = "galaxy", *plugin = "cuda-tree", *config = "mac=bmax theta=0.5", *select = "random";
    const char *order = "index";
    size_t n = (size_t)1 << 24;
    double active = 0.01, dt = 1e-3;
    int steps = 8;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--model")) model = argv[i + 1];
        else if (!strcmp(argv[i], "--plugin")) plugin = argv[i + 1];
        else if (!strcmp(argv[i], "--n")) n = (size_t)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--active")) active = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dt")) dt = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--config")) config = argv[i + 1];
        else if (!strcmp(argv[i], "--select")) select = argv[i + 1];
        else if (!strcmp(argv[i], "--order")) order = argv[i + 1];
        else die("unknown option", argv[i]);
    }
    if (strcmp(order, "index") && strcmp(order, "drawn"))
        die(order, "--order takes index (ascending, as a block-step integrator's level bins hand the active "
                   "particles over) or drawn (the order of the selection)");
    int by_index = !strcmp(order, "index");
    if (strcmp(select, "random") && strcmp(select, "accel"))
        die(select, "--select takes random (a new random subset each step) or accel (the largest |a|, "
                    "as a block step's deepest level)");
    if (steps < 1) steps = 1;
    if (steps > 100) steps = 100;
    size_t na = (size_t)(active * (double)n);
    if (na < 1) na = 1;
    gp_ic ic = make_ic(model, n, 1);
    double *acc = malloc(3 * n * sizeof *acc), *x0 = malloc(3 * n * sizeof *x0), *vel = malloc(3 * n * sizeof *vel);
    double *t0s = malloc(n * sizeof *t0s), *pred = malloc(3 * n * sizeof *pred);
    double *xa = malloc(3 * na * sizeof *xa), *va = malloc(3 * na * sizeof *va), *aa = malloc(3 * na * sizeof *aa);
    double *ta = malloc(na * sizeof *ta);
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!acc || !x0 || !vel || !t0s || !pred || !xa || !va || !aa || !ta || !idx) die("host memory", "out of memory");
    solver v[2] = {open_solver(plugin), open_solver(plugin)}; /* [0] through 1.1, [1] through 1.0 */
    if (!GRAVPLUG_API_HAS(v[0].api, update_masses)) die(plugin, "the plugin does not offer ABI 1.1");
    for (int p = 0; p < 2; ++p) {
        check(&v[p], v[p].api->set_param(v[p].s, "eps", "0.01"), "eps");
        apply(&v[p], config);
        check(&v[p], v[p].api->set_particles(v[p].s, n, ic.pos, ic.mass), "set_particles");
        check(&v[p], v[p].api->compute_forces(v[p].s, acc, NULL), "compute_forces (all)");
    }
    /* the state both paths start from: every particle at t = 0 */
    memcpy(x0, ic.pos, 3 * n * sizeof *x0);
    memcpy(vel, ic.vel, 3 * n * sizeof *vel);
    for (size_t i = 0; i < n; ++i) t0s[i] = 0;
    check(&v[0], v[0].api->set_state(v[0].s, n, NULL, x0, vel, acc, t0s), "set_state (all)");
    printf("# block steps of %s, model %s, N = %zu, %zu active (%g, %s, %s order), config \"%s\", eps 0.01, "
           "dt %g\n", plugin, model, n, na, active, select, by_index ? "index" : "drawn", config, dt);
    printf("# RESULT,block,path,plugin,model,N,active,steps,sec_step,sec_transfer,sec_build,sec_moments,sec_walk,"
           "builds,refits,select,order\n");
    double tt[2][100], phase[6][100];
    gp_stats s0[2], s1[2];
    for (int p = 0; p < 2; ++p) {
        memset(&s0[p], 0, sizeof s0[p]);
        s0[p].struct_size = sizeof s0[p];
        v[p].api->get_stats(v[p].s, &s0[p]);
    }
    double *acc_all = acc; /* the 1.0 path's host state: x0, vel, acc_all, t0s */
    int by_accel = !strcmp(select, "accel");
    if (by_accel) { /* the same subset every step: the na largest |a| */
        double *a2 = malloc(n * sizeof *a2);
        if (!a2) die("host memory", "out of memory");
        for (size_t i = 0; i < n; ++i) {
            idx[i] = (uint32_t)i;
            a2[i] = acc[3 * i] * acc[3 * i] + acc[3 * i + 1] * acc[3 * i + 1] + acc[3 * i + 2] * acc[3 * i + 2];
        }
        sort_key = a2;
        qsort(idx, n, sizeof *idx, by_key_descending);
        sort_key = NULL;
        free(a2);
        if (by_index) qsort(idx, na, sizeof *idx, by_index_ascending);
    }
    for (int k = 0; k < steps; ++k) {
        double T = dt * (double)(k + 1);
        if (!by_accel) {
            for (size_t i = 0; i < n; ++i) idx[i] = (uint32_t)i;
            for (size_t i = 0; i < na; ++i) {
                size_t j = i + rng() % (n - i);
                uint32_t x = idx[i]; idx[i] = idx[j]; idx[j] = x;
            }
            if (by_index) qsort(idx, na, sizeof *idx, by_index_ascending);
        }
        /* 1.1, each call timed on its own (ph: the phases' clock readings) */
        double t0 = now(), ph[6];
        check(&v[0], v[0].api->predict(v[0].s, T), "predict");
        ph[0] = now();
        check(&v[0], v[0].api->get_positions(v[0].s, na, idx, xa), "get_positions");
        ph[1] = now();
        check(&v[0], v[0].api->set_active_subset(v[0].s, na, idx), "set_active_subset");
        ph[2] = now();
        check(&v[0], v[0].api->compute_forces(v[0].s, aa, NULL), "compute_forces (1.1)");
        ph[3] = now();
        /* a kick, as a corrector would, on the host's threads as gravhost's
         * step passes are */
#pragma omp parallel for schedule(static) if (na > 65536)
        for (size_t k2 = 0; k2 < na; ++k2) {
            for (int c = 0; c < 3; ++c) va[3 * k2 + c] = vel[3 * (size_t)idx[k2] + c] + dt * aa[3 * k2 + c];
            ta[k2] = T;
        }
        ph[4] = now();
        check(&v[0], v[0].api->set_state(v[0].s, na, idx, xa, va, aa, ta), "set_state");
        ph[5] = now();
        tt[0][k] = ph[5] - t0;
        for (int q = 0; q < 6; ++q) phase[q][k] = ph[q] - (q ? ph[q - 1] : t0);
        /* 1.0: the host predicts everything, ships everything */
        t0 = now();
        for (size_t i = 0; i < n; ++i)
            for (int c = 0; c < 3; ++c)
                pred[3 * i + c] = tl_predict_coord(x0[3 * i + c], vel[3 * i + c], acc_all[3 * i + c], T - t0s[i]);
        check(&v[1], v[1].api->update_positions(v[1].s, pred), "update_positions");
        check(&v[1], v[1].api->set_active_subset(v[1].s, na, idx), "set_active_subset");
        check(&v[1], v[1].api->compute_forces(v[1].s, aa, NULL), "compute_forces (1.0)");
        for (size_t k2 = 0; k2 < na; ++k2) {
            size_t i = idx[k2];
            for (int c = 0; c < 3; ++c) {
                x0[3 * i + c] = pred[3 * i + c];
                vel[3 * i + c] += dt * aa[3 * k2 + c];
                acc_all[3 * i + c] = aa[3 * k2 + c];
            }
            t0s[i] = T;
        }
        tt[1][k] = now() - t0;
    }
    static const char *phase_name[6] = {"predict", "get_positions", "set_active_subset", "compute_forces",
                                        "kick (the host)", "set_state"};
    /* the plugin's own share: each step less the host's kick (before the
     * medians below sort the columns) */
    double own[100];
    for (int k = 0; k < steps; ++k) own[k] = tt[0][k] - phase[4][k];
    printf("# 1.1 path, median ms per step:");
    for (int q = 0; q < 6; ++q) printf(" %s %.3f%s", phase_name[q], 1e3 * median(phase[q], (size_t)steps), q < 5 ? "," : "\n");
    printf("# 1.1 path, the plugin's calls (the step less the host's kick), median ms per step: %.3f\n",
           1e3 * median(own, (size_t)steps));
    static const char *path[2] = {"1.1", "1.0"};
    for (int p = 0; p < 2; ++p) {
        memset(&s1[p], 0, sizeof s1[p]);
        s1[p].struct_size = sizeof s1[p];
        v[p].api->get_stats(v[p].s, &s1[p]);
        double S = (double)steps;
        printf("RESULT,block,%s,%s,%s,%zu,%zu,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%llu,%llu,%s,%s\n", path[p], plugin, model, n, na,
               steps, median(tt[p], (size_t)steps), (s1[p].seconds_transfer - s0[p].seconds_transfer) / S,
               (s1[p].seconds_build - s0[p].seconds_build) / S, (s1[p].seconds_moments - s0[p].seconds_moments) / S,
               (s1[p].seconds_walk - s0[p].seconds_walk) / S,
               (unsigned long long)(s1[p].tree_builds - s0[p].tree_builds),
               (unsigned long long)(s1[p].tree_refits - s0[p].tree_refits), select, order);
        v[p].api->finalize(v[p].s);
        gp_plugin_close(v[p].plug);
    }
    fflush(stdout);
    gp_ic_free(&ic);
    free(acc); free(x0); free(vel); free(t0s); free(pred); free(xa); free(va); free(aa); free(ta); free(idx);
    return 0;
}

static int run_jerk(int argc, char **argv)
{
    const direct_opts opt = parse_direct_opts(argc, argv, 16, 18);
    const int nmin = opt.nmin, nmax = opt.nmax;
    const char *eps = opt.eps, *prec = opt.prec;
    const double min_seconds = opt.min_seconds;
    solver d = open_solver("cuda-direct");
    if (d.api->abi_minor < 2 || !GRAVPLUG_API_HAS(d.api, compute_forces_ex) ||
        !(d.api->capabilities & GP_CAP_JERK))
        die("cuda-direct", "this build has no ABI 1.2 jerk (compute_forces_ex with GP_CAP_JERK)");
    set_direct_opts(&d, &opt);
    printf("# cuda-direct, Plummer, all active, eps = %s, precision = %s: acc + jerk (compute_forces_ex) "
           "against acc (compute_forces)\n", eps, prec);
    printf("# RESULT,jerk,N,precision,eps,calls,seconds_acc,interactions_per_second_acc,seconds_acc_jerk,"
           "interactions_per_second_acc_jerk,kernel_seconds_acc,kernel_seconds_acc_jerk,ratio_acc_jerk_over_acc\n");
    for (int lg = nmin; lg <= nmax; lg += 2) {
        size_t n = (size_t)1 << lg;
        gp_ic ic = make_ic("plummer", n, 1);
        double *acc = malloc(3 * n * sizeof *acc), *jerk = malloc(3 * n * sizeof *jerk);
        double *a0 = calloc(3 * n, sizeof *a0), *t0s = calloc(n, sizeof *t0s);
        check(&d, d.api->set_particles(d.s, n, ic.pos, ic.mass), "set_particles");
        check(&d, d.api->set_state(d.s, n, NULL, ic.pos, ic.vel, a0, t0s), "set_state");
        check(&d, d.api->predict(d.s, 0.0), "predict");
        gp_outputs o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.acc = acc;
        o.jerk = jerk;
        check(&d, d.api->compute_forces(d.s, acc, NULL), "compute_forces (warm-up)");
        check(&d, d.api->compute_forces_ex(d.s, &o), "compute_forces_ex (warm-up)");
        double ta[500], tj[500], wa = 0, wj = 0;
        int k = 0;
        double start = now();
        while (k < 500 && (k < 3 || now() - start < 2 * min_seconds)) {
            gp_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1}, s2 = {.struct_size = sizeof s2};
            d.api->get_stats(d.s, &s0);
            double t0 = now();
            check(&d, d.api->compute_forces(d.s, acc, NULL), "compute_forces");
            double t1 = now();
            d.api->get_stats(d.s, &s1);
            check(&d, d.api->compute_forces_ex(d.s, &o), "compute_forces_ex");
            double t2 = now();
            d.api->get_stats(d.s, &s2);
            ta[k] = t1 - t0;
            tj[k] = t2 - t1;
            wa += s1.seconds_walk - s0.seconds_walk;
            wj += s2.seconds_walk - s1.seconds_walk;
            ++k;
        }
        double sa = median(ta, (size_t)k), sj = median(tj, (size_t)k), nn = (double)n * (double)n;
        printf("RESULT,jerk,%zu,%s,%s,%d,%.6g,%.4g,%.6g,%.4g,%.6g,%.6g,%.3f\n", n, prec, eps, k, sa, nn / sa, sj,
               nn / sj, wa / k, wj / k, sj / sa);
        fflush(stdout);
        free(acc); free(jerk); free(a0); free(t0s);
        gp_ic_free(&ic);
    }
    d.api->finalize(d.s);
    gp_plugin_close(d.plug);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "block")) return run_block(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "direct")) return run_direct(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "jerk")) return run_jerk(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "tree")) return run_tree(argc, argv);
    fprintf(stderr, "usage: cudabench direct [--nmin 14] [--nmax 20] [--eps E] [--precision P] [--seconds S]\n"
                    "       cudabench jerk [--nmin 16] [--nmax 18] [--eps E] [--precision P] [--seconds S]\n"
                    "       cudabench tree --model plummer|galaxy --n N [--repeats R] [--sample K]\n"
                    "                      [--active F] [--seed S] --config \"mac=bmax theta=0.5\" ...\n"
                    "       cudabench block [--plugin cuda-tree] [--model galaxy] [--n N] [--active F]\n"
                    "                       [--steps S] [--dt DT] [--config \"mac=bmax theta=0.5\"]\n"
                    "                       [--select random|accel] [--order index|drawn]\n");
    return 2;
}
