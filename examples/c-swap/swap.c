/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gravplug-swap — swap gravity solvers in the middle of a run, through the
 * loader, and compare with runs that never swap.
 *
 *   build/bin/gravplug-swap [N] [T_END]        (defaults 1024, 2)
 *
 * A Plummer sphere (Henon units, eps = 0.05) is integrated with a
 * kick-drift-kick leapfrog (dt = 1/128) three times:
 *   A  cpu-direct from start to end (the reference);
 *   B  cpu-direct until T_END/2, then cpu-tree (theta = 0.5) from the same
 *      particles: a new instance, set_particles, and on we go;
 *   C  cpu-tree from start to end.
 * At the swap it prints the tree's force error against direct summation;
 * at the end the energy error of each run and how far B and C moved from A
 * (rms and max position difference, in units of the half-mass radius).
 * Everything this program calls is public: gravplug.h, the loader and the
 * initial-condition generator of libgravplug.so.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"

typedef struct solver {
    gp_plugin *plugin;
    const gp_api *api;
    gp_solver *s;
} solver;

static int open_solver(solver *sv, const char *name, const gp_param *params, size_t np)
{
    char err[1024];
    if (gp_plugin_open(name, &sv->plugin, err, sizeof err) != GP_OK) {
        fprintf(stderr, "gravplug-swap: %s\n", err);
        return -1;
    }
    sv->api = gp_plugin_api(sv->plugin);
    gp_init_args args = {sizeof args, params, np, NULL, NULL, -1, NULL};
    if (sv->api->init(&sv->s, &args) != GP_OK) {
        fprintf(stderr, "gravplug-swap: %s: %s\n", name, sv->api->last_error(NULL));
        gp_plugin_close(sv->plugin);
        return -1;
    }
    return 0;
}

static void close_solver(solver *sv)
{
    if (sv->api) sv->api->finalize(sv->s);
    gp_plugin_close(sv->plugin);
    memset(sv, 0, sizeof *sv);
}

static int forces(solver *sv, size_t n, const double *pos, const double *mass, double *acc, double *pot,
                  int fresh)
{
    gp_status st = fresh ? sv->api->set_particles(sv->s, n, pos, mass) : sv->api->update_positions(sv->s, pos);
    if (st == GP_OK) st = sv->api->compute_forces(sv->s, acc, pot);
    if (st != GP_OK) {
        fprintf(stderr, "gravplug-swap: %s: %s\n", sv->api->name, sv->api->last_error(sv->s));
        return -1;
    }
    return 0;
}

static double energy(size_t n, const double *vel, const double *mass, const double *pot)
{
    double e = 0;
    for (size_t i = 0; i < n; ++i) {
        const double *v = &vel[3 * i];
        e += 0.5 * mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * mass[i] * pot[i];
    }
    return e;
}

/* Leapfrog (KDK) from the state in pos/vel, with solver `first` until
 * t_swap and `second` after it (second may equal first). Returns the
 * relative energy error at the end, or NAN on failure. */
static double run(const char *first, const char *second, double t_swap, double t_end, double dt,
                  size_t n, double *pos, double *vel, const double *mass, int report_swap)
{
    static const gp_param direct_params[] = {{"eps", "0.05"}};
    static const gp_param tree_params[] = {{"eps", "0.05"}, {"theta", "0.5"}};
    double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
    solver sv = {0};
    const char *current = first;
    double e0 = NAN, result = NAN;
#define OPEN(name) open_solver(&sv, name, strcmp(name, "cpu-tree") ? direct_params : tree_params, \
                               strcmp(name, "cpu-tree") ? 1 : 2)
    if (!acc || !pot || OPEN(current) != 0) goto out;
    if (forces(&sv, n, pos, mass, acc, pot, 1) != 0) goto out;
    e0 = energy(n, vel, mass, pot);
    long steps = lround(t_end / dt), swap_step = lround(t_swap / dt);
    for (long k = 0; k < steps; ++k) {
        if (k == swap_step && strcmp(current, second) != 0) {
            /* The swap: a new solver instance, given the same particles. */
            solver next = {0};
            if (open_solver(&next, second, strcmp(second, "cpu-tree") ? direct_params : tree_params,
                            strcmp(second, "cpu-tree") ? 1 : 2) != 0)
                goto out;
            double *acc2 = malloc(3 * n * sizeof *acc2);
            if (!acc2 || forces(&next, n, pos, mass, acc2, pot, 1) != 0) {
                free(acc2);
                close_solver(&next);
                goto out;
            }
            if (report_swap) {
                double *rel = malloc(n * sizeof *rel);
                for (size_t i = 0; i < n; ++i) {
                    double d = 0, a = 0;
                    for (int c = 0; c < 3; ++c) {
                        d += (acc2[3 * i + c] - acc[3 * i + c]) * (acc2[3 * i + c] - acc[3 * i + c]);
                        a += acc[3 * i + c] * acc[3 * i + c];
                    }
                    rel[i] = sqrt(d / a);
                }
                double med = 0, mx = 0;
                /* Median by partial selection sort is fine at this n. */
                for (size_t i = 0; i < n; ++i) mx = fmax(mx, rel[i]);
                for (size_t i = 0; i <= n / 2; ++i)
                    for (size_t j = i + 1; j < n; ++j)
                        if (rel[j] < rel[i]) { double t = rel[i]; rel[i] = rel[j]; rel[j] = t; }
                med = rel[n / 2];
                printf("  swap at t = %g: %s -> %s; its force error against %s: median %.2e, max %.2e\n",
                       k * dt, current, second, current, med, mx);
                free(rel);
            }
            memcpy(acc, acc2, 3 * n * sizeof *acc);
            free(acc2);
            close_solver(&sv);
            sv = next;
            current = second;
        }
        for (size_t i = 0; i < 3 * n; ++i) vel[i] += 0.5 * dt * acc[i];
        for (size_t i = 0; i < 3 * n; ++i) pos[i] += dt * vel[i];
        if (forces(&sv, n, pos, mass, acc, pot, 0) != 0) goto out;
        for (size_t i = 0; i < 3 * n; ++i) vel[i] += 0.5 * dt * acc[i];
    }
    result = (energy(n, vel, mass, pot) - e0) / fabs(e0);
out:
    close_solver(&sv);
    free(acc);
    free(pot);
    return result;
#undef OPEN
}

static void compare(const char *what, size_t n, const double *a, const double *b, double rh)
{
    double s = 0, mx = 0;
    for (size_t i = 0; i < n; ++i) {
        double d = 0;
        for (int c = 0; c < 3; ++c) d += (a[3 * i + c] - b[3 * i + c]) * (a[3 * i + c] - b[3 * i + c]);
        s += d;
        mx = fmax(mx, sqrt(d));
    }
    printf("  %-34s rms %.2e, max %.2e (half-mass radii)\n", what, sqrt(s / n) / rh, mx / rh);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    double t_end = argc > 2 ? atof(argv[2]) : 2.0, dt = 1.0 / 128;
    if (n < 2 || !(t_end > 0)) {
        fprintf(stderr, "usage: gravplug-swap [N >= 2] [T_END > 0]\n");
        return 2;
    }
    gp_ic ic;
    char err[512];
    if (gp_ic_make("plummer", n, 1, NULL, &ic, err, sizeof err) != 0) {
        fprintf(stderr, "gravplug-swap: %s\n", err);
        return 1;
    }
    size_t bytes = 3 * n * sizeof(double);
    double *pa = malloc(bytes), *va = malloc(bytes), *pb = malloc(bytes), *vb = malloc(bytes);
    double *pc = malloc(bytes), *vc = malloc(bytes);
    memcpy(pa, ic.pos, bytes); memcpy(va, ic.vel, bytes);
    memcpy(pb, ic.pos, bytes); memcpy(vb, ic.vel, bytes);
    memcpy(pc, ic.pos, bytes); memcpy(vc, ic.vel, bytes);
    printf("Plummer sphere, N = %zu, leapfrog dt = 1/128 to t = %g, eps = 0.05\n", n, t_end);
    double ea = run("cpu-direct", "cpu-direct", 0, t_end, dt, n, pa, va, ic.mass, 0);
    printf("A  cpu-direct throughout:            dE/E = %+.3e\n", ea);
    printf("B  cpu-direct, then cpu-tree:\n");
    double eb = run("cpu-direct", "cpu-tree", t_end / 2, t_end, dt, n, pb, vb, ic.mass, 1);
    printf("                                     dE/E = %+.3e\n", eb);
    double ec = run("cpu-tree", "cpu-tree", 0, t_end, dt, n, pc, vc, ic.mass, 0);
    printf("C  cpu-tree throughout:              dE/E = %+.3e\n", ec);
    int rc = isnan(ea) || isnan(eb) || isnan(ec);
    if (!rc) {
        printf("Positions at t = %g against A (N-body chaos amplifies any force difference):\n", t_end);
        double rh = 0.7686; /* Plummer half-mass radius in Henon units: 1.305 a, a = 3 pi/16 */
        compare("B (swapped half-way) vs A:", n, pb, pa, rh);
        compare("C (tree throughout) vs A:", n, pc, pa, rh);
    }
    gp_ic_free(&ic);
    free(pa); free(va); free(pb); free(vb); free(pc); free(vc);
    return rc;
}
