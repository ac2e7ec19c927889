/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-edges.c — the CUDA plugins on awkward inputs, against cpu-direct:
 * n = 1, 2, 3 and around the group and tile sizes (31, 32, 33, 64, 65,
 * 130, 700), three clumps of coincident particles (deepest-level leaves
 * holding hundreds of particles), and massless particles. cuda-tree with
 * theta = 0 (every cell opened: must equal direct summation to float
 * accuracy) and theta = 0.6 in single precision (no NaN, tree-like error);
 * cuda-direct in mixed precision. Without a device: 1..0 # SKIP.
 */
#include <string.h>

#include "tap.h"
#include "testlib.h"
#include "gpu-plugin.h"

static gp_solver *make(const gp_api *a, const char *eps, const char *theta, const char *prec)
{
    gp_param kv[4];
    size_t np = 0;
    kv[np++] = (gp_param){"eps", eps};
    if (!strcmp(a->name, "cuda-tree")) {
        kv[np++] = (gp_param){"theta", theta};
        kv[np++] = (gp_param){"mac", "bh"};
    }
    if (strcmp(a->name, "cpu-direct")) kv[np++] = (gp_param){"precision", prec};
    gp_init_args ia;
    memset(&ia, 0, sizeof ia);
    ia.struct_size = sizeof ia;
    ia.params = kv;
    ia.n_params = np;
    ia.device = -1;
    gp_solver *s = NULL;
    if (a->init(&s, &ia) != GP_OK) diag("%s init: %s", a->name, a->last_error(NULL));
    return s;
}

int main(void)
{
    gpu_plugin R, T, D;
    char why[1200];
    if (gpu_plugin_open(&D, "cuda-direct", why, sizeof why) || gpu_plugin_open(&T, "cuda-tree", why, sizeof why) ||
        gpu_plugin_open(&R, "cpu-direct", why, sizeof why))
        skip_all(why);
    gp_solver *probe = NULL;
    if (D.api->init(&probe, NULL) == GP_ERR_DEVICE) {
        snprintf(why, sizeof why, "no CUDA device: %s", D.api->last_error(NULL));
        skip_all(why);
    }
    D.api->finalize(probe);
    plan_lazy();

    static const size_t ns[] = {1, 2, 3, 17, 31, 32, 33, 64, 65, 130, 700};
    static const char *dist_name[] = {"plummer", "3 clumps", "massless"};
    for (int dist = 0; dist < 3; ++dist)
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; ++k) {
            size_t n = ns[k];
            double *pos = malloc(3 * n * sizeof *pos), *m = malloc(n * sizeof *m);
            double *ra = malloc(3 * n * sizeof *ra), *rp = malloc(n * sizeof *rp);
            double *ga = malloc(3 * n * sizeof *ga), *gpot = malloc(n * sizeof *gpot);
            tl_plummer(n, 7 + k, 1.0, 10, pos, m);
            if (dist == 1)
                for (size_t i = 0; i < n; ++i) {
                    int c = (int)(i % 3);
                    pos[3 * i] = c; pos[3 * i + 1] = 0.5 * c; pos[3 * i + 2] = -c;
                }
            if (dist == 2)
                for (size_t i = 0; i < n; i += 5) m[i] = 0;
            const char *eps = dist == 1 ? "0.1" : "0";
            gp_solver *r = make(R.api, eps, "0", "double");
            int rst = r && (R.api->set_particles(r, n, pos, m) != GP_OK || R.api->compute_forces(r, ra, rp) != GP_OK);
            if (!r || rst) bail("cpu-direct reference failed");
            R.api->finalize(r);
            for (int c = 0; c < 3; ++c) {
                const gp_api *A = c == 2 ? D.api : T.api;
                const char *theta = c == 1 ? "0.6" : "0";
                gp_solver *s = make(A, eps, theta, c == 1 ? "single" : "mixed");
                int st = !s || A->set_particles(s, n, pos, m) != GP_OK || A->compute_forces(s, ga, gpot) != GP_OK;
                if (st && s) diag("%s: %s", A->name, A->last_error(s));
                tl_errstat e = tl_relerr(n, 3, ga, ra), ep = tl_relerr(n, 1, gpot, rp);
                double med = c == 1 ? 1e-2 : 1e-5, mx = c == 1 ? 0.1 : 1e-4;
                ok(!st && e.median <= med && e.max <= mx && ep.max <= mx,
                   "%s theta=%s, %s, n = %zu: acc median %.2g max %.2g, pot max %.2g", A->name,
                   c == 2 ? "-" : theta, dist_name[dist], n, e.median, e.max, ep.max);
                if (s) A->finalize(s);
            }
            free(pos); free(m); free(ra); free(rp); free(ga); free(gpot);
        }
    return done_testing();
}
