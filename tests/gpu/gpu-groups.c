/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-groups.c — a sparse active subset must not cost cuda-tree much more
 * per particle than a full call: the i-groups of scattered active particles
 * stay inside small group cells (walk.cuh group_cell_of), so each group's
 * list stays near an ordinary group's. Interaction counts are exact and the
 * same on the emulator and on a device, so the bound is tested on both.
 *
 * Plummer N = 16384, eps 0.01, bmax theta 0.5: a full call makes ~2700
 * interactions per particle, a scattered 1% subset ~6900 per active
 * particle (ratio 2.5; measured on the emulator). Groups of 32 actives with
 * no bound on their extent, as before the group cells, make ~14400 (ratio
 * 4.9): the bound 3.5 lies between. The subset's forces must also agree
 * with the full call's for the same particles, to tree accuracy. The
 * group_cell parameter bounds the cell: a smaller one must give fewer
 * interactions per active particle, at the same accuracy.
 */
#include <math.h>
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"

int main(void)
{
    char why[1200];
    gpu_plugin tree_p;
    if (gpu_plugin_open(&tree_p, "cuda-tree", why, sizeof why) != 0) skip_all(why);
    const gp_api *T = tree_p.api;
    gp_solver *t = NULL;
    gp_status st = T->init(&t, NULL);
    if (st == GP_ERR_DEVICE) {
        snprintf(why, sizeof why, "no CUDA device: %s", T->last_error(NULL));
        skip_all(why);
    }
    plan_lazy();
    ok(st == GP_OK && t, "cuda-tree init");
    if (!t) return done_testing();
    ok(T->set_param(t, "eps", "0.01") == GP_OK && T->set_param(t, "mac", "bmax") == GP_OK &&
           T->set_param(t, "theta", "0.5") == GP_OK, "eps 0.01, bmax theta 0.5");

    const size_t N = 16384;
    double *pos = malloc(3 * N * sizeof *pos), *mass = malloc(N * sizeof *mass);
    double *full = malloc(3 * N * sizeof *full), *sub = malloc(3 * N * sizeof *sub);
    uint32_t *idx = malloc(N * sizeof *idx);
    if (!pos || !mass || !full || !sub || !idx) bail("out of memory");
    tl_plummer(N, 20260522, 1.0, 30.0, pos, mass);

    gp_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1}, s2 = {.struct_size = sizeof s2};
    ok(T->set_particles(t, N, pos, mass) == GP_OK, "set_particles, N = %zu", N);
    T->get_stats(t, &s0);
    ok(T->compute_forces(t, full, NULL) == GP_OK, "a full call");
    T->get_stats(t, &s1);
    /* about 1%, scattered over the whole sphere, in a mixed-up order */
    size_t na = 0;
    for (size_t i = 0; i < N; i += 97) idx[na++] = (uint32_t)((i * 7919) % N);
    ok(T->set_active_subset(t, na, idx) == GP_OK && T->compute_forces(t, sub, NULL) == GP_OK,
       "a call for %zu scattered active particles", na);
    T->get_stats(t, &s2);

    double per_full = (double)(s1.pp_interactions + s1.pc_interactions - s0.pp_interactions - s0.pc_interactions) /
                      (double)N;
    double per_sub = (double)(s2.pp_interactions + s2.pc_interactions - s1.pp_interactions - s1.pc_interactions) /
                     (double)na;
    ok(per_sub <= 3.5 * per_full,
       "interactions per active particle %.0f, per particle of the full call %.0f: ratio %.2f (at most 3.5)",
       per_sub, per_full, per_sub / per_full);

    /* the same particles' accelerations from both calls: tree accuracy */
    double *want = malloc(3 * na * sizeof *want);
    if (!want) bail("out of memory");
    for (size_t k = 0; k < na; ++k) memcpy(&want[3 * k], &full[3 * (size_t)idx[k]], 3 * sizeof *want);
    tl_errstat e = tl_relerr(na, 3, sub, want);
    ok(e.median <= 1e-3 && e.max <= 2e-2,
       "subset accelerations against the full call's: median %.2g, max %.2g (at most 1e-3, 2e-2)", e.median,
       e.max);

    /* group_cell: a smaller group cell keeps the scattered groups tighter
     * (fewer interactions each), at the same accuracy */
    ok(T->set_param(t, "group_cell", "16") == GP_ERR_INVALID_ARGUMENT, "group_cell 16 refused (at least 32)");
    gp_stats s3 = {.struct_size = sizeof s3};
    ok(T->set_param(t, "group_cell", "512") == GP_OK && T->compute_forces(t, sub, NULL) == GP_OK,
       "the same subset with group_cell 512");
    T->get_stats(t, &s3);
    double per_small = (double)(s3.pp_interactions + s3.pc_interactions - s2.pp_interactions - s2.pc_interactions) /
                       (double)na;
    ok(per_small < per_sub, "interactions per active particle %.0f with group_cell 512, %.0f with 4096", per_small,
       per_sub);
    e = tl_relerr(na, 3, sub, want);
    ok(e.median <= 1e-3 && e.max <= 2e-2, "  ... accelerations against the full call's: median %.2g, max %.2g",
       e.median, e.max);

    free(want); free(pos); free(mass); free(full); free(sub); free(idx);
    T->finalize(t);
    return done_testing();
}
