/* SPDX-License-Identifier: Apache-2.0 */
/*
 * g6-route-accuracy.c — how accurate one GRAPE-6 call is through
 * libgravplug-g6 on the plugin and route the environment chooses
 * (GRAVPLUG_G6_PLUGIN, GRAVPLUG_G6_ROUTE, GRAVPLUG_G6_PARAMS; docs/GRAPE6.md):
 * a Plummer sphere (seed 42, velocities as the model gives them) loaded as
 * j-memory at t = 0, predicted to TI, and NI i-particles on j-particles at
 * their predicted positions and velocities; acc, jerk and pot against
 * exact pairwise sums (eps2 1e-4). Prints the rms relative errors.
 *
 *   g6-route-accuracy [N] [NI] [scattered|clump] [TI]
 *
 * scattered: every (N/NI)-th particle, spread through the sphere as a
 * client's block of active particles is; clump: the NI particles nearest
 * a point at 0.3 of the half-mass radius. Results:
 * bench/results/grape6/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "g6.h"
#include "ic.h"

static double dist2(const double *a, const double *b)
{
    double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    return dx * dx + dy * dy + dz * dz;
}

/* The ni indices nearest the point c (by distance, ties by index). */
static void nearest(size_t n, const double *pos, const double c[3], int ni, int *index)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = dist2(&pos[3 * i], c);
    for (int p = 0; p < ni; p++) {
        size_t best = n;
        for (size_t i = 0; i < n; i++)
            if (d[i] >= 0 && (best == n || d[i] < d[best])) best = i;
        index[p] = (int)best;
        d[best] = -1;
    }
    free(d);
}

int main(int argc, char **argv)
{
    const size_t n = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    int ni = argc > 2 ? atoi(argv[2]) : 256;
    const int clump = argc > 3 && strcmp(argv[3], "clump") == 0;
    double ti = argc > 4 ? atof(argv[4]) : 0.01;
    if (n < 2 || ni < 1 || (size_t)ni > n) {
        fprintf(stderr, "g6-route-accuracy: need N >= 2 and 1 <= NI <= N\n");
        return 2;
    }
    if (ni > g6_npipes_()) ni = g6_npipes_();
    gp_ic ic;
    char why[256] = "the model gave another N";
    if (gp_ic_make("plummer", n, 42, NULL, &ic, why, sizeof why) || ic.n != n) {
        fprintf(stderr, "g6-route-accuracy: %s\n", why);
        return 1;
    }
    int id = 0, cl = 0;
    if (g6_open_(&id)) return 1;
    double tj = 0, dtj = 1, zero[3] = { 0, 0, 0 };
    for (size_t i = 0; i < n; i++) {
        int a = (int)i, idx = (int)i;
        if (g6_set_j_particle_(&cl, &a, &idx, &tj, &dtj, &ic.mass[i], zero, zero, zero, &ic.vel[3 * i],
                               &ic.pos[3 * i]))
            return 1;
    }
    if (g6_set_ti_(&id, &ti)) return 1;
    int *index = malloc((size_t)ni * sizeof *index);
    double (*xi)[3] = malloc((size_t)ni * sizeof *xi), (*vi)[3] = malloc((size_t)ni * sizeof *vi);
    double (*old)[3] = calloc((size_t)ni, sizeof *old), *phiold = calloc((size_t)ni, sizeof *phiold);
    double *h2 = calloc((size_t)ni, sizeof *h2), *pot = malloc((size_t)ni * sizeof *pot);
    double (*acc)[3] = malloc((size_t)ni * sizeof *acc), (*jerk)[3] = malloc((size_t)ni * sizeof *jerk);
    double *xp = malloc(3 * n * sizeof *xp);   /* every j-particle at ti */
    for (size_t i = 0; i < 3 * n; i++) xp[i] = ic.pos[i] + ti * ic.vel[i];
    const double c[3] = { 0.3 * 0.77, 0, 0 };   /* 0.3 of the half-mass radius (N-body units) */
    if (clump) nearest(n, xp, c, ni, index);
    else
        for (int p = 0; p < ni; p++) index[p] = (int)((size_t)p * (n / (size_t)ni));
    for (int p = 0; p < ni; p++)
        for (int k = 0; k < 3; k++) {
            xi[p][k] = xp[3 * (size_t)index[p] + k];
            vi[p][k] = ic.vel[3 * (size_t)index[p] + k];
        }
    int nj = (int)n;
    double eps2 = 1e-4;
    g6calc_firsthalf_(&cl, &nj, &ni, index, xi, vi, old, old, phiold, &eps2, h2);
    if (g6calc_lasthalf_(&cl, &nj, &ni, index, xi, vi, &eps2, h2, acc, jerk, pot)) return 1;
    double ea = 0, na = 0, ej = 0, nj2 = 0, ep = 0;
    for (int p = 0; p < ni; p++) {
        double a[3] = { 0, 0, 0 }, j[3] = { 0, 0, 0 }, ph = 0;
        for (size_t q = 0; q < n; q++) {
            if ((int)q == index[p]) continue;
            double dx[3], dv[3], r2 = eps2, rv = 0;
            for (int k = 0; k < 3; k++) {
                dx[k] = xp[3 * q + k] - xi[p][k];
                dv[k] = ic.vel[3 * q + k] - vi[p][k];
                r2 += dx[k] * dx[k];
                rv += dx[k] * dv[k];
            }
            double ri = 1 / sqrt(r2), mr3 = ic.mass[q] * ri * ri * ri;
            for (int k = 0; k < 3; k++) {
                a[k] += mr3 * dx[k];
                j[k] += mr3 * (dv[k] - 3 * rv / r2 * dx[k]);
            }
            ph -= ic.mass[q] * ri;
        }
        for (int k = 0; k < 3; k++) {
            ea += (acc[p][k] - a[k]) * (acc[p][k] - a[k]); na += a[k] * a[k];
            ej += (jerk[p][k] - j[k]) * (jerk[p][k] - j[k]); nj2 += j[k] * j[k];
        }
        ep += (pot[p] - ph) * (pot[p] - ph) / (ph * ph);
    }
    const char *route = getenv("GRAVPLUG_G6_ROUTE"), *params = getenv("GRAVPLUG_G6_PARAMS");
    printf("N %zu, %d %s i-particles, route %s, params %s: rms relative error acc %.3e jerk %.3e pot %.3e\n",
           n, ni, clump ? "clumped" : "scattered", route ? route : "auto", params && *params ? params : "-",
           sqrt(ea / na), sqrt(ej / nj2), sqrt(ep / ni));
    g6_close_(&id);
    gp_ic_free(&ic);
    free(index); free(xi); free(vi); free(old); free(phiold); free(h2); free(pot); free(acc); free(jerk);
    free(xp);
    return 0;
}
