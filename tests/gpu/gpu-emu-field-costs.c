/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-field-costs.c — what a GRAPE-6 call costs cuda-direct in copies,
 * counted by the CPU emulation of CUDA (gpu-emu-counts.h): compute_field_ex
 * with a g6calc's outputs (acc, pot, jerk, the nearest source, lists by
 * radius) at m points excluding their particles, after a predict, at two
 * particle counts. The bytes that go up and come down must follow the
 * points (and the lists their neighbours), not the particles: the same at
 * N and 4N besides the lists' entries, and within a bound per point. (An exact pass on the host would bring every source's position
 * and velocity down for each call: 48 bytes a particle.)
 * Only on the emulated build (build/emu/plugins): elsewhere 1..0 # SKIP.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"
#include "gpu-emu-counts.h"

enum { M = 64, N0 = 2048 };
/* up: a point's position and velocity records and its exclusion, twice
 * (double positions and the particle index for the neighbour pass) and
 * its radius; down: acc, pot, jerk, nn, distance, count and list rows. A
 * bound, not a tally: a per-particle copy of 48 bytes is far above. */
enum { BYTES_PER_POINT = 512, BYTES_PER_CALL = 4096 };

static gp_emu_counts_fn counts_of;

typedef struct moved {
    unsigned long long up, down;   /* down: without the lists' own entries */
    size_t listed;
} moved;

/* One field call with GRAPE-6's outputs on n particles, counted from the
 * predict before it; -1 when a call fails (with a diag line). */
static int field_call(const gp_api *P, size_t n, moved *got)
{
    double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
    double *acc0 = calloc(3 * n, sizeof *acc0), *t = calloc(n, sizeof *t), *mass = malloc(n * sizeof *mass);
    if (!pos || !vel || !acc0 || !t || !mass) bail("out of memory");
    tl_plummer(n, 11, 1.0, 20.0, pos, mass);
    mass[n - 1] = 0.0;   /* a massless slot, as j-memory has: the sources are then a list */
    tl_rng g = {5};
    for (size_t i = 0; i < 3 * n; ++i) vel[i] = 0.3 * (tl_uniform(&g) - 0.5);
    gp_solver *s = gpu_plugin_make(P, "eps", "0.01", NULL, NULL);
    if (!s) bail("cuda-direct init failed");
    double x[3 * M], v[3 * M], a[3 * M], j[3 * M], pot[M], d2[M], rad[M];
    uint32_t ex[M], nn[M];
    for (size_t k = 0; k < M; ++k) {
        size_t i = (k * 29) % n;
        memcpy(&x[3 * k], &pos[3 * i], sizeof x[0] * 3);
        memcpy(&v[3 * k], &vel[3 * i], sizeof v[0] * 3);
        ex[k] = (uint32_t)i;
        rad[k] = 0.05;
    }
    gp_outputs o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.acc = a; o.pot = pot; o.jerk = j; o.nn_index = nn; o.nn_dist2 = d2; o.nb_radius = rad;
    int rc = 0;
    if (P->set_particles(s, n, pos, mass) != GP_OK || P->set_state(s, n, NULL, pos, vel, acc0, t) != GP_OK ||
        P->predict(s, 1.0 / 64) != GP_OK || P->compute_field_ex(s, M, x, v, ex, &o) != GP_OK) {
        diag("cuda-direct: %s", P->last_error(s));
        rc = -1;
    }
    /* the counted call: a new prediction, then the field (the first call
     * above made the records and buffers) */
    memset(counts_of(), 0, sizeof(gp_emu_counts));
    if (rc == 0 && (P->predict(s, 2.0 / 64) != GP_OK || P->compute_field_ex(s, M, x, v, ex, &o) != GP_OK)) {
        diag("cuda-direct: %s", P->last_error(s));
        rc = -1;
    }
    const gp_emu_counts c = *counts_of();
    uint64_t offset[M + 1];
    got->listed = 0;
    if (rc == 0) (void)P->get_neighbours(s, 0, offset, NULL, &got->listed);
    got->up = c.bytes_h2d;
    got->down = c.bytes_d2h - 4 * (unsigned long long)got->listed;   /* the lists follow the neighbours */
    diag("n=%zu, %d points: %llu bytes up, %llu down besides %zu list entries, %llu copies", n, M, got->up,
         got->down, got->listed, c.copies_h2d + c.copies_d2h);
    P->finalize(s);
    free(pos); free(vel); free(acc0); free(t); free(mass);
    return rc;
}

int main(void)
{
    gpu_plugin P;
    counts_of = gpu_emu_open_counted(&P, "cuda-direct");
    plan_lazy();
    moved small, large;
    int ok1 = field_call(P.api, N0, &small) == 0, ok4 = field_call(P.api, 4 * N0, &large) == 0;
    ok(ok1 && ok4, "predict and compute_field_ex with GRAPE-6's outputs at n = %d and %d", N0, 4 * N0);
    ok(ok1 && ok4 && small.up == large.up && small.down == large.down,
       "the bytes moved besides the lists do not follow n (%llu/%llu up, %llu/%llu down)", small.up, large.up,
       small.down,
       large.down);
    const unsigned long long bound = (unsigned long long)BYTES_PER_POINT * M + BYTES_PER_CALL;
    ok(ok1 && small.up + small.down <= bound, "%llu bytes for %d points: at most %llu",
       small.up + small.down, M, bound);
    return done_testing();
}
