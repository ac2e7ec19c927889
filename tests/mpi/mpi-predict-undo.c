/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mpi-predict-undo.c — mpi-tree's predict when another rank fails: every
 * rank's positions go back to what they were, bit for bit, for each kind
 * of held state (given a jerk, second order, set since the last predict).
 *
 * Two ranks. Rank 1 holds a particle so fast that predicting to t = 100
 * overflows there and only there; rank 0 predicts fine, then must undo
 * its own prediction because rank 1 failed. A jerked particle must come
 * back to its third-order prediction to the last predict's time
 * (gravplug_predict.h), not to the second-order one.
 *
 * With the argument drift=on the first predict is owed on both ranks
 * (predict_lazy.h); the one that overflows cannot be owed on rank 1, so
 * every rank pays its owed predict and predicts at once, and rank 0
 * undoes its own.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gravplug.h"
#include "gravplug_loader.h"
#include "gravplug_predict.h"
#include "mpi-testlib.h"

#define N 8

int main(int argc, char **argv)
{
    int rank, size;
    mpi_test_start(&argc, &argv, &rank, &size);
    if (size != 2) {
        if (rank == 0) printf("1..0 # SKIP needs exactly 2 ranks (has %d)\n", size);
        MPI_Finalize();
        return 0;
    }
    gp_plugin *pm = NULL;
    char err[1024];
    if (gp_plugin_open(GP_BUILD_PLUGIN_DIR "/gravplug-mpi-tree.so", &pm, err, sizeof err)) bail(err);
    const gp_api *api = gp_plugin_api(pm);
    if (!GRAVPLUG_API_HAS(api, set_state_jerk)) bail("mpi-tree has no set_state_jerk");

    MPI_Comm comm = MPI_COMM_WORLD;
    gp_param kv[] = { { "eps", "0.01" }, { "drift", "off" } };
    if (argc > 1 && strcmp(argv[1], "drift=on") == 0) kv[1].value = "on";
    gp_init_args a = { .struct_size = sizeof a, .params = kv, .n_params = 2, .device = -1,
                       .mpi_comm = &comm };
    gp_solver *s = NULL;
    if (api->init(&s, &a) != GP_OK) bail(api->last_error(NULL));

    double pos[3 * N], vel[3 * N], acc[3 * N], jerk[3 * N], mass[N], t[N];
    for (int i = 0; i < N; i++) {
        for (int d = 0; d < 3; d++) {
            int q = 3 * i + d;
            pos[q] = 0.1 * (i + 1) + 0.01 * d + rank;
            vel[q] = 0.3 - 0.05 * q;
            acc[q] = -0.2 + 0.03 * q;
            jerk[q] = 0.7 + 0.11 * q;
        }
        mass[i] = 1.0 / (2 * N);
        t[i] = 0.0;
    }
    if (rank == 1) vel[0] = 1e307; /* finite at t = 0.5, overflows at t = 100 */
    const uint32_t plain[] = { 4, 5, 6, 7 }, fresh[] = { 7 };
    const double t1 = 0.5;
    /* 0..3 jerked, 4..6 second order (set_state after the jerk), 7 set
     * again after the first predict (stated at x0) */
    if (api->set_particles(s, N, pos, mass) ||
        api->set_state_jerk(s, N, NULL, pos, vel, acc, jerk, t) ||
        api->set_state(s, 4, plain, &pos[12], &vel[12], &acc[12], &t[4]) ||
        api->predict(s, t1) ||
        api->set_state(s, 1, fresh, &pos[21], &vel[21], &acc[21], &t[7]))
        bail(api->last_error(s));

    double before[3 * N], vbefore[3 * N], after[3 * N], vafter[3 * N];
    if (api->get_positions(s, N, NULL, before) || api->get_velocities(s, N, NULL, vbefore))
        bail(api->last_error(s));
    int pinned = 1;
    for (int q = 0; q < 3 * N; q++) {
        int i = q / 3;
        double want = i < 4 ? gp_predict_coord3(pos[q], vel[q], acc[q], jerk[q], t1)
                    : i < 7 ? gp_predict_coord(pos[q], vel[q], acc[q], t1)
                            : pos[q];
        pinned &= memcmp(&before[q], &want, sizeof want) == 0;
    }
    mpi_test_ok(rank, pinned, "%s", "before: each particle where gravplug_predict.h puts it");

    gp_status st = api->predict(s, 100.0);
    mpi_test_ok(rank, st != GP_OK, "%s", "predict to t = 100 fails on every rank (rank 1 overflows)");
    if (api->get_positions(s, N, NULL, after) || api->get_velocities(s, N, NULL, vafter))
        bail(api->last_error(s));
    int same_jerk = memcmp(after, before, 12 * sizeof *after) == 0;
    int same_plain = memcmp(&after[12], &before[12], 9 * sizeof *after) == 0;
    int same_fresh = memcmp(&after[21], &before[21], 3 * sizeof *after) == 0;
    int same_vel = memcmp(vafter, vbefore, sizeof vafter) == 0;
    if (rank == 0 && !same_jerk)
        diag("rank 0, particle 0: x = %.17g after the failed predict, %.17g before", after[0],
             before[0]);
    mpi_test_ok(rank, same_jerk, "%s", "jerked particles restored to their third-order prediction");
    mpi_test_ok(rank, same_plain, "%s", "second-order particles restored to their prediction");
    mpi_test_ok(rank, same_fresh, "%s", "a particle set since the last predict restored to x0");
    mpi_test_ok(rank, same_vel, "%s", "velocities as before the failed predict");

    /* and the instance still predicts from where it was */
    st = api->predict(s, t1);
    if (st == GP_OK) st = api->get_positions(s, N, NULL, after);
    mpi_test_ok(rank, st == GP_OK && memcmp(after, before, 21 * sizeof *after) == 0, "%s",
                "predict to the old time again gives the same bits");

    api->finalize(s);
    gp_plugin_close(pm);
    return mpi_test_done(rank);
}
