/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-threads.c — the host's O(n) passes run with OpenMP (level
 * scans, predictions, corrections, diagnostic sums) and yet give the same
 * bits for any thread count: block-rk2 and block-kdk on cpu-tree with
 * 70000 particles (past every threshold where those loops go parallel),
 * run with 1, 2 and 3 threads, compared bit for bit: positions,
 * velocities, kinetic and potential energy, momenta. First, before any
 * OpenMP team exists: a solver at threads = 1 keeps those passes on the
 * calling thread too, so the process never starts a second thread.
 */
#include <omp.h>
#include <stdio.h>

#include "integrators-common.h"

#define N 70000

static double pos0[3 * N], vel0[3 * N], mass0[N];

typedef struct out { double pos[3 * N], vel[3 * N], k, w, p[3], L[3], com[3]; int good; } out;

static void run(const char *integ, int threads, out *o)
{
    omp_set_num_threads(threads);
    memset(o, 0, sizeof *o);
    gp_sim *sim = NULL;
    const char *names[] = { "eps", "threads" }, *values[] = { "0.02", "0" };
    int good = gp_sim_new(&sim) == GP_OK && gp_sim_open_solver(sim, "cpu-tree", 2, names, values) == GP_OK
               && gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) == GP_OK
               && gp_sim_set_integrator(sim, integ) == GP_OK
               && gp_sim_set_integrator_param(sim, "dt", "0.0625") == GP_OK
               && gp_sim_set_integrator_param(sim, "eta", "0.05") == GP_OK;
    for (int s = 0; good && s < 6; ++s) good = gp_sim_step(sim, 10.0) == GP_OK;
    good = good && gp_sim_energies(sim, &o->k, &o->w) == GP_OK
                && gp_sim_momenta(sim, o->p, o->L, o->com) == GP_OK
                && gp_sim_get_particles(sim, o->pos, o->vel, NULL, NULL) == GP_OK;
    if (!good) diag("%s, %d threads: %s", integ, threads, sim ? gp_sim_last_error(sim) : "gp_sim_new");
    o->good = good;
    gp_sim_free(sim);
}

/* The process's threads, from /proc (-1 where it cannot be read). */
static int process_threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int t = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &t) == 1) break;
    if (f) fclose(f);
    return t;
}

/* block-kdk at threads = 1 with OpenMP's default of more threads than
 * one: no team may start, in the plugin or in the integrator. */
static void one_thread_is_one_core(void)
{
    if (omp_get_max_threads() < 2 || process_threads() != 1) {
        skip(1, "OpenMP's default here is one thread (or this process already has more than "
                "one), so threads = 1 cannot be told apart from it");
        return;
    }
    gp_sim *sim = NULL;
    const char *names[] = { "eps", "threads" }, *values[] = { "0.02", "1" };
    int good = gp_sim_new(&sim) == GP_OK && gp_sim_open_solver(sim, "cpu-tree", 2, names, values) == GP_OK
               && gp_sim_set_particles(sim, N, pos0, vel0, mass0, NULL) == GP_OK
               && gp_sim_set_integrator(sim, "block-kdk") == GP_OK
               && gp_sim_set_integrator_param(sim, "dt", "0.0625") == GP_OK
               && gp_sim_set_integrator_param(sim, "eta", "0.05") == GP_OK;
    for (int s = 0; good && s < 2; ++s) good = gp_sim_step(sim, 10.0) == GP_OK;
    double k, w;
    static double pos[3 * N];
    good = good && gp_sim_energies(sim, &k, &w) == GP_OK && gp_sim_get_particles(sim, pos, NULL, NULL, NULL) == GP_OK;
    if (!good) diag("threads = 1: %s", sim ? gp_sim_last_error(sim) : "gp_sim_new");
    const int t = process_threads();
    ok(good && t == 1 && omp_get_max_threads() > 1,
       "solver threads = 1: block-kdk's steps, energies and positions of %d particles ran on one "
       "thread (the process has %d), and OpenMP's default is restored after", N, t);
    gp_sim_free(sim);
}

static int same(const out *a, const out *b)
{
    return a->good && b->good && memcmp(a->pos, b->pos, sizeof a->pos) == 0
        && memcmp(a->vel, b->vel, sizeof a->vel) == 0 && memcmp(&a->k, &b->k, sizeof a->k) == 0
        && memcmp(&a->w, &b->w, sizeof a->w) == 0 && memcmp(a->p, b->p, sizeof a->p) == 0
        && memcmp(a->L, b->L, sizeof a->L) == 0 && memcmp(a->com, b->com, sizeof a->com) == 0;
}

int main(void)
{
    plan(5);
    small_cluster(N, 13, pos0, vel0, mass0);
    one_thread_is_one_core();
    static out o1, o2, o3;
    const char *integs[] = { "block-rk2", "block-kdk" };
    for (int k = 0; k < 2; ++k) {
        run(integs[k], 1, &o1);
        run(integs[k], 2, &o2);
        run(integs[k], 3, &o3);
        ok(same(&o1, &o2) && same(&o1, &o3),
           "%s: 1, 2 and 3 threads give the same trajectory, energies and momenta bit for bit", integs[k]);
        ok(o1.good && o1.k > 0 && o1.w < 0 && fabs(o1.com[0]) < 1,
           "%s: ... and they are sane (K = %.6f, W = %.6f)", integs[k], o1.k, o1.w);
    }
    return done_testing();
}
