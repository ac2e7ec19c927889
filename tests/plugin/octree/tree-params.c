/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree-params.c — the tree plugins list the walk's parameters (theta, mac,
 * delta_acc, theta_max, order) from one source, octree/tree_params.h:
 * every tree plugin of this build gives cpu-tree's rows, word for word,
 * and with them the same rule for what a value may be (delta_acc = 0
 * accepted by all, as direct summation).
 *
 * The plugins to hold against cpu-tree are the arguments, names or paths
 * (the ones this build makes: mpi-tree with mpicc, cuda-tree with nvcc, on
 * the CPU emulation of CUDA so that init runs); describe_params needs no
 * instance and no GPU.
 */
#include <string.h>

#include "plugin-by-name.h"

static const char *const walk_rows[] = { "theta", "mac", "delta_acc", "theta_max", "order" };
#define N_ROWS (sizeof walk_rows / sizeof *walk_rows)

static const gp_param_info *row(const gp_api *api, const char *name)
{
    size_t n = 0;
    const gp_param_info *p = api->describe_params(&n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(p[i].name, name) == 0) return &p[i];
    return NULL;
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int main(int argc, char **argv)
{
    const gp_api *ref = tl_plugin_by_name("cpu-tree");
    if (!ref) bail("cpu-tree did not open");
    for (size_t r = 0; r < N_ROWS; r++)
        ok(row(ref, walk_rows[r]) != NULL, "cpu-tree lists %s", walk_rows[r]);
    for (int a = 1; a < argc; a++) {
        const gp_api *api = strchr(argv[a], '/') ? tl_plugin_at(argv[a]) : tl_plugin_by_name(argv[a]);
        if (!api) {
            ok(0, "%s opens", argv[a]);
            continue;
        }
        for (size_t r = 0; r < N_ROWS; r++) {
            const gp_param_info *want = row(ref, walk_rows[r]), *got = row(api, walk_rows[r]);
            int same = want && got && got->type == want->type &&
                       same_text(got->default_value, want->default_value) &&
                       same_text(got->allowed, want->allowed) && same_text(got->doc, want->doc);
            if (!same && want && got)
                diag("%s %s: allowed %s, default %s (cpu-tree: %s, %s)", argv[a], walk_rows[r],
                     got->allowed ? got->allowed : "NULL", got->default_value,
                     want->allowed ? want->allowed : "NULL", want->default_value);
            ok(same, "%s lists %s as cpu-tree does", argv[a], walk_rows[r]);
        }
        gp_solver *s = NULL;
        gp_param kv[] = { { "delta_acc", "0" } };
        gp_init_args ia = { .struct_size = sizeof ia, .params = kv, .n_params = 1, .device = -1 };
        gp_status st = api->init(&s, &ia);
        /* a GPU plugin without a device stops at init, before the parameters */
        if (st == GP_ERR_DEVICE) {
            skip(1, "no device to check delta_acc = 0 on");
        } else {
            if (st != GP_OK) diag("%s", api->last_error(NULL));
            ok(st == GP_OK, "%s accepts delta_acc = 0, as cpu-tree does", argv[a]);
        }
        if (s) api->finalize(s);
    }
    return done_testing();
}
