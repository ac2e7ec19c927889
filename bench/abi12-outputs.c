/* SPDX-License-Identifier: Apache-2.0 */
/*
 * abi12-outputs.c — what ABI 1.2's extra outputs cost on one plugin: the
 * seconds of
 *   forces   compute_forces(acc, NULL)
 *   ex-acc   compute_forces_ex with acc only
 *   ex-j     compute_forces_ex with acc and jerk (what a Hermite step asks)
 *   ex-jn    compute_forces_ex with acc, jerk, nn_index and nn_dist2
 *   ex-all   compute_forces_ex with acc, jerk, nn_index, nn_dist2 and
 *            pair_step (no neighbour lists)
 *   fx-g6    compute_field_ex (ABI 1.3) at the same targets' positions,
 *            each excluding its own particle, with what a GRAPE-6 g6calc
 *            asks: acc, pot, jerk, nn_index and nn_dist2
 * on a uniform sphere of N particles with random velocities (set_state,
 * so that the jerk and pair_step see them), all particles active and a
 * fixed random 1% active. A plugin without GP_CAP_JERK (mpi-tree,
 * cuda-tree) is asked for no jerk (ex-j: "-"). A plugin below ABI 1.2 runs `forces` only (to
 * compare a build before 1.2 with this one).
 *
 *   abi12-outputs PLUGIN [N1,N2,...] [ROUNDS] [MODEL]
 *
 * MODEL (one of gp_ic_make's: plummer, galaxy, ...) replaces the uniform
 * sphere by that model's positions, velocities and masses (seed 42).
 *
 * Rounds alternate the three calls; the first round is a warm-up; the
 * median of the others is printed per call, with ex-all / forces.
 * Results: bench/results/abi-outputs/raw/abi12-outputs.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "ic.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static double uni(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

static void check(gp_status st, const gp_api *api, gp_solver *s, const char *what)
{
    if (st == GP_OK) return;
    fprintf(stderr, "abi12-outputs: %s: %s\n", what, api->last_error(s));
    exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: abi12-outputs PLUGIN [N1,N2,...] [ROUNDS]\n");
        return 2;
    }
    char err[512];
    gp_plugin *plug = NULL;
    if (gp_plugin_open(argv[1], &plug, err, sizeof err) != GP_OK) {
        fprintf(stderr, "abi12-outputs: %s\n", err);
        return 1;
    }
    const gp_api *api = gp_plugin_api(plug);
    const int ex = api->abi_minor >= 2 && GRAVPLUG_API_HAS(api, compute_forces_ex);
    const int fx = api->abi_minor >= 3 && GRAVPLUG_API_HAS(api, compute_field_ex);
    const char *ns = argc > 2 ? argv[2] : "1024,2048,4096,8192,16384";
    const int rounds = argc > 3 ? atoi(argv[3]) : 5;
    const char *model = argc > 4 ? argv[4] : NULL;
    printf("# plugin %s %s (ABI 1.%u), %d rounds (first not counted), median seconds, %s\n",
           api->name, api->version, (unsigned)api->abi_minor, rounds,
           model ? model : "uniform sphere");
    printf("%8s %7s %12s %12s %12s %12s %12s %12s %8s %8s %8s %8s %8s\n", "N", "active", "forces",
           "ex-acc", "ex-j", "ex-jn", "ex-all", "fx-g6", "acc/frc", "j/frc", "jn/frc", "all/frc",
           "fx/frc");
    char *list = strdup(ns);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t n = (size_t)atol(tok);
        double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
        double *acc = malloc(3 * n * sizeof *acc), *mass = malloc(n * sizeof *mass);
        double *t = calloc(n, sizeof *t), *jerk = malloc(3 * n * sizeof *jerk);
        double *nnd = malloc(n * sizeof *nnd), *step = malloc(n * sizeof *step);
        double *a0 = calloc(3 * n, sizeof *a0), *pot = malloc(n * sizeof *pot);
        double *fxpos = malloc(3 * n * sizeof *fxpos), *fxvel = malloc(3 * n * sizeof *fxvel);
        uint32_t *nn = malloc(n * sizeof *nn), *act = malloc(n * sizeof *act);
        for (size_t i = 0; i < n; ++i) {
            double x, y, z;
            do { x = 2 * uni() - 1; y = 2 * uni() - 1; z = 2 * uni() - 1; } while (x * x + y * y + z * z > 1);
            pos[3 * i] = x; pos[3 * i + 1] = y; pos[3 * i + 2] = z;
            for (int d = 0; d < 3; ++d) vel[3 * i + d] = 0.5 * (2 * uni() - 1);
            mass[i] = 1.0 / (double)n;
            act[i] = (uint32_t)i;
        }
        if (model) {
            gp_ic ic;
            char why[256] = "the model gave another N";
            if (gp_ic_make(model, n, 42, NULL, &ic, why, sizeof why) || ic.n != n) {
                fprintf(stderr, "abi12-outputs: %s\n", why);
                return 1;
            }
            memcpy(pos, ic.pos, 3 * n * sizeof *pos);
            memcpy(vel, ic.vel, 3 * n * sizeof *vel);
            memcpy(mass, ic.mass, n * sizeof *mass);
            gp_ic_free(&ic);
        }
        for (size_t k = n; k > 1; --k) {   /* a fixed random 1% */
            size_t j = (size_t)(uni() * (double)k);
            uint32_t tmp = act[k - 1]; act[k - 1] = act[j]; act[j] = tmp;
        }
        gp_solver *s = NULL;
        check(api->init(&s, NULL), api, NULL, "init");
        check(api->set_param(s, "eps", "0.01"), api, s, "eps");
        check(api->set_particles(s, n, pos, mass), api, s, "set_particles");
        if (GRAVPLUG_API_HAS(api, set_state))
            check(api->set_state(s, n, NULL, pos, vel, a0, t), api, s, "set_state");
        for (int f = 0; f < 2; ++f) {
            size_t m = f == 0 ? n : (n / 100 ? n / 100 : 1);
            check(api->set_active_subset(s, f == 0 ? 0 : m, f == 0 ? NULL : act), api, s, "active");
            double *tf = malloc(rounds * sizeof *tf), *ta = malloc(rounds * sizeof *ta);
            double *tx = malloc(rounds * sizeof *tx), *tj = malloc(rounds * sizeof *tj);
            double *tk = malloc(rounds * sizeof *tk), *tg = malloc(rounds * sizeof *tg);
            /* the field points: the targets' positions and velocities, each excluding itself */
            const uint32_t *self = f == 0 ? NULL : act;
            uint32_t *fxself = malloc(m * sizeof *fxself);
            for (size_t k = 0; k < m; ++k) {
                const size_t i = self ? self[k] : k;
                fxself[k] = (uint32_t)i;
                memcpy(&fxpos[3 * k], &pos[3 * i], 3 * sizeof *pos);
                memcpy(&fxvel[3 * k], &vel[3 * i], 3 * sizeof *vel);
            }
            const int has_jerk = (api->capabilities & GP_CAP_JERK) != 0;
            int r = 0;
            for (int round = 0; round < rounds + 1; ++round) {
                double t0 = now();
                check(api->compute_forces(s, acc, NULL), api, s, "compute_forces");
                double t1 = now(), t2 = t1, t25 = t1, t3 = t1, t4 = t1, t5 = t1;
                if (ex) {
                    gp_outputs o;
                    memset(&o, 0, sizeof o);
                    o.struct_size = sizeof o;
                    o.acc = acc;
                    check(api->compute_forces_ex(s, &o), api, s, "compute_forces_ex acc");
                    t2 = now();
                    o.jerk = has_jerk ? jerk : NULL;
                    if (has_jerk) check(api->compute_forces_ex(s, &o), api, s, "compute_forces_ex jerk");
                    t25 = now();
                    o.nn_index = nn; o.nn_dist2 = nnd;
                    check(api->compute_forces_ex(s, &o), api, s, "compute_forces_ex jerk+nn");
                    t3 = now();
                    o.pair_step = step;
                    check(api->compute_forces_ex(s, &o), api, s, "compute_forces_ex all");
                    t4 = now();
                    t5 = t4;
                }
                if (fx) {
                    gp_outputs o;
                    memset(&o, 0, sizeof o);
                    o.struct_size = sizeof o;
                    o.acc = acc; o.pot = pot; o.jerk = has_jerk ? jerk : NULL;
                    o.nn_index = nn; o.nn_dist2 = nnd;
                    check(api->compute_field_ex(s, m, fxpos, fxvel, fxself, &o), api, s,
                          "compute_field_ex");
                    t5 = now();
                }
                if (round == 0) continue;
                tf[r] = t1 - t0; ta[r] = t2 - t1; tk[r] = t25 - t2; tj[r] = t3 - t25; tx[r] = t4 - t3;
                tg[r] = t5 - t4;
                ++r;
            }
            double mf = median(tf, r), ma = median(ta, r), mk = median(tk, r), mj = median(tj, r),
                   mx = median(tx, r), mg = median(tg, r);
            char ek[16] = "-", rk[16] = "-", eg[16] = "-", rg[16] = "-";
            if (fx) {
                snprintf(eg, sizeof eg, "%.6f", mg);
                snprintf(rg, sizeof rg, "%.3f", mg / mf);
            }
            if (has_jerk) {
                snprintf(ek, sizeof ek, "%.6f", mk);
                snprintf(rk, sizeof rk, "%.3f", mk / mf);
            }
            if (ex)
                printf("%8zu %6.0f%% %12.6f %12.6f %12s %12.6f %12.6f %12s %8.3f %8s %8.3f %8.3f %8s\n",
                       n, 100.0 * (double)m / (double)n, mf, ma, ek, mj, mx, eg, ma / mf, rk, mj / mf,
                       mx / mf, rg);
            else
                printf("%8zu %6.0f%% %12.6f %12s %12s %12s %12s %12s %8s %8s %8s %8s %8s\n", n,
                       100.0 * (double)m / (double)n, mf, "-", "-", "-", "-", "-", "-", "-", "-", "-",
                       "-");
            fflush(stdout);
            free(tf); free(ta); free(tj); free(tx); free(tk); free(tg); free(fxself);
        }
        api->finalize(s);
        free(pos); free(vel); free(acc); free(mass); free(t); free(jerk); free(nnd); free(step);
        free(a0); free(pot); free(fxpos); free(fxvel); free(nn); free(act);
    }
    free(list);
    gp_plugin_close(plug);
    return 0;
}
