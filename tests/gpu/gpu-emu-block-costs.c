/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu-emu-block-costs.c — a block step's fixed costs on cuda-tree, counted
 * by the CPU emulation of CUDA (gpu-emu-counts.h) and pinned: kernel
 * launches, CUB calls, copies, memsets and waits (stream, event, device)
 * of each call of a step through the ABI 1.1 path (set_state, predict,
 * get_positions, set_active_subset, compute_forces), for one shared step
 * (all active) and block steps at 1% and 10% active, with drift = off and
 * on (the drifted tree: no refit, the cells' records moved). A change
 * that adds a launch or a wait fails here; if it is meant, update `pinned` below and
 * the table in bench/results/gpu/README.md. A second, larger N is counted
 * too (diag only), to show which counts follow N.
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

enum { C_SET_STATE, C_PREDICT, C_GET_POSITIONS, C_SET_ACTIVE, C_FORCES, NCALLS };
static const char *const call_name[NCALLS] = {"set_state", "predict", "get_positions", "set_active_subset",
                                              "compute_forces"};
enum { K_LAUNCH, K_CUB, K_COPY, K_MEMSET, K_SYNC, NKINDS };
static const char *const kind_name[NKINDS] = {"launches", "CUB calls", "copies", "memsets", "syncs"};

/* The steps, by their share of active particles (per mille; 1000: a shared step). */
enum { S_SHARED, S_1PC, S_10PC, NSTEPS };
static const int step_permille[NSTEPS] = {1000, 10, 100};
static const char *const step_name[NSTEPS] = {"shared step", "1% block step", "10% block step"};

/* The counts at PINNED_N, per step, call and kind: the figures recorded in
 * bench/results/gpu/README.md ("Fixed costs of a step"). */
#define PINNED_N 2048
static const int pinned[2][NSTEPS][NCALLS][NKINDS] = {
    /* per call: launches, CUB calls, copies, memsets, syncs; in the order
     * set_state, predict, get_positions, set_active_subset, compute_forces */
    [0] = {  /* drift = off */
        [S_SHARED] = {{1, 0, 1, 0, 1}, {2, 0, 1, 1, 1}, {0, 0, 1, 0, 1}, {0, 0, 0, 0, 0}, {18, 2, 3, 2, 2}},
        [S_1PC] = {{1, 0, 1, 0, 1}, {2, 0, 1, 1, 1}, {1, 0, 2, 0, 1}, {0, 0, 0, 0, 0}, {19, 3, 4, 2, 2}},
        [S_10PC] = {{1, 0, 1, 0, 1}, {2, 0, 1, 1, 1}, {1, 0, 2, 0, 1}, {0, 0, 0, 0, 0}, {19, 3, 4, 2, 2}},
    },
    /* drift = on: a shared step refits and anchors (the sources' cubics,
     * the cells' motion a level at a time); in a block step set_state
     * takes the new states in (one launch), predict is owed (nothing
     * launched, nothing waited for), get_positions and compute_forces
     * predict their subsets, and compute_forces moves the records instead
     * of gathering every particle and making every cell's moments (the
     * cells above new states made again, a level at a time, then one pass
     * over the cells) */
    [1] = {
        [S_SHARED] = {{1, 0, 1, 0, 1}, {2, 0, 1, 1, 1}, {0, 0, 1, 0, 1}, {0, 0, 0, 0, 0}, {27, 2, 3, 3, 2}},
        [S_1PC] = {{2, 0, 1, 0, 1}, {0, 0, 0, 0, 0}, {2, 0, 2, 0, 1}, {0, 0, 0, 0, 0}, {19, 3, 4, 2, 2}},
        [S_10PC] = {{2, 0, 1, 0, 1}, {0, 0, 0, 0, 0}, {2, 0, 2, 0, 1}, {0, 0, 0, 0, 0}, {19, 3, 4, 2, 2}},
    },
};
static const char *const drift_name[2] = {"drift = off", "drift = on"};

static gp_emu_counts_fn counts_of;

static void kinds_of(const gp_emu_counts *c, long long k[NKINDS])
{
    k[K_LAUNCH] = (long long)c->launches;
    k[K_CUB] = (long long)c->cub_calls;
    k[K_COPY] = (long long)(c->copies_h2d + c->copies_d2h + c->copies_d2d);
    k[K_MEMSET] = (long long)c->memsets;
    k[K_SYNC] = (long long)(c->stream_syncs + c->event_syncs + c->device_syncs);
}

typedef struct counted {
    long long k[NKINDS];
    unsigned long long h2d, d2h; /* bytes */
} counted;

/* Zeroes the calling thread's counters (a call's counts are then its own). */
static void counts_reset(void) { memset(counts_of(), 0, sizeof(gp_emu_counts)); }
static counted counts_take(void)
{
    counted c;
    const gp_emu_counts *e = counts_of();
    kinds_of(e, c.k);
    c.h2d = e->bytes_h2d;
    c.d2h = e->bytes_d2h;
    counts_reset();
    return c;
}

typedef struct run {
    size_t n;
    double *pos, *vel, *acc, *t, *x, *v, *a, *xp;
    uint32_t *idx;
} run;

/* One step of m active particles (every (n/m)-th, shifted by `shift`)
 * through the 1.1 path, as integrators/force_held.c calls it: the state of
 * the particles to move, predict, their positions, the subset, forces.
 * Fills got[call]; returns 0, or -1 with a diag line. */
static int one_step(const gp_api *P, gp_solver *s, run *r, size_t m, size_t shift, double T, counted got[NCALLS])
{
    const size_t n = r->n, stride = n / m;
    for (size_t k = 0; k < m; ++k) {
        size_t i = (k * stride + shift) % n;
        r->idx[k] = (uint32_t)i;
        for (int c = 0; c < 3; ++c) {
            r->x[3 * k + c] = r->pos[3 * i + c];
            r->v[3 * k + c] = r->vel[3 * i + c];
            r->a[3 * k + c] = r->acc[3 * i + c];
        }
        r->t[k] = T - 1.0 / 1024;
    }
    const int all = m == n;
    const uint32_t *list = all ? NULL : r->idx;
    gp_status st;
    counts_reset();
    if ((st = P->set_state(s, m, list, r->x, r->v, r->a, r->t)) != GP_OK) goto fail;
    got[C_SET_STATE] = counts_take();
    if ((st = P->predict(s, T)) != GP_OK) goto fail;
    got[C_PREDICT] = counts_take();
    if ((st = P->get_positions(s, m, list, r->xp)) != GP_OK) goto fail;
    got[C_GET_POSITIONS] = counts_take();
    if ((st = P->set_active_subset(s, all ? 0 : m, list)) != GP_OK) goto fail;
    got[C_SET_ACTIVE] = counts_take();
    if ((st = P->compute_forces(s, r->acc, NULL)) != GP_OK) goto fail;
    got[C_FORCES] = counts_take();
    /* the forces were of the active ones only: scatter them back by index */
    for (size_t k = m; k-- > 0;)
        for (int c = 2; c >= 0; --c) r->acc[3 * (size_t)r->idx[k] + c] = r->acc[3 * k + c];
    return 0;
fail:
    diag("cuda-tree step of %zu active: %s", m, P->last_error(s));
    return -1;
}

static void diag_step(const char *what, size_t n, int drift, const counted got[NCALLS])
{
    for (int c = 0; c < NCALLS; ++c)
        diag("n=%zu %s %-15s %-18s launches %3lld  CUB %2lld  copies %2lld  memsets %2lld  syncs %2lld  "
             "bytes h2d %8llu d2h %8llu", n, drift_name[drift], what, call_name[c], got[c].k[K_LAUNCH], got[c].k[K_CUB],
             got[c].k[K_COPY], got[c].k[K_MEMSET], got[c].k[K_SYNC], got[c].h2d, got[c].d2h);
}

/* Counts the steps at n with drift off (0) or on (1); with pin, checks
 * them against `pinned`. */
static void count_steps(const gp_api *P, size_t n, int drift, int pin)
{
    run r = {n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    double *mass = malloc(n * sizeof *mass);
    r.pos = malloc(3 * n * sizeof *r.pos); r.vel = calloc(3 * n, sizeof *r.vel); r.acc = calloc(3 * n, sizeof *r.acc);
    r.t = malloc(n * sizeof *r.t); r.x = malloc(3 * n * sizeof *r.x); r.v = malloc(3 * n * sizeof *r.v);
    r.a = malloc(3 * n * sizeof *r.a); r.xp = malloc(3 * n * sizeof *r.xp); r.idx = malloc(n * sizeof *r.idx);
    if (!mass || !r.pos || !r.vel || !r.acc || !r.t || !r.x || !r.v || !r.a || !r.xp || !r.idx) bail("out of memory");
    tl_plummer(n, 7, 1.0, 20.0, r.pos, mass);
    tl_rng g = {99};
    for (size_t i = 0; i < 3 * n; ++i) r.vel[i] = 0.3 * (tl_uniform(&g) - 0.5);

    /* steps that refit, never rebuild (rebuild = auto may rebuild within
     * a few steps): a step's counts, not a build's, are pinned */
    gp_solver *s = gpu_plugin_make(P, "eps", "0.01", "rebuild", "100000");
    if (!s || P->set_param(s, "drift", drift ? "on" : "off") != GP_OK) bail("cuda-tree init failed");
    /* as integrators/force_held.c starts: the particles, every state, forces */
    for (size_t i = 0; i < n; ++i) r.t[i] = 0;
    int ready = P->set_particles(s, n, r.pos, mass) == GP_OK &&
                P->set_state(s, n, NULL, r.pos, r.vel, r.acc, r.t) == GP_OK;
    counts_reset();
    ready = ready && P->compute_forces(s, r.acc, NULL) == GP_OK;
    if (!ready) diag("cuda-tree: %s", P->last_error(s));
    if (pin) ok(ready, "n=%zu %s: set_particles, set_state and a first force call", n, drift_name[drift]);
    if (!ready) bail("cuda-tree refused the particles");
    {
        counted build[NCALLS];
        memset(build, 0, sizeof build);
        build[C_FORCES] = counts_take();
        diag("n=%zu the first compute_forces (a build): launches %lld, CUB %lld, copies %lld, memsets %lld, "
             "syncs %lld", n, build[C_FORCES].k[K_LAUNCH], build[C_FORCES].k[K_CUB], build[C_FORCES].k[K_COPY],
             build[C_FORCES].k[K_MEMSET], build[C_FORCES].k[K_SYNC]);
    }
    const uint64_t builds = gpu_plugin_stats(P, s).tree_builds;

    double T = 0;
    for (int k = 0; k < NSTEPS; ++k) {
        const size_t m = n * (size_t)step_permille[k] / 1000;
        /* two steps of each kind, other particles each time: the second
         * shows that the first paid no one-off cost the table would hide */
        for (int rep = 0; rep < 2; ++rep) {
            counted got[NCALLS];
            T += 1.0 / 1024;
            int done = one_step(P, s, &r, m, (size_t)rep * 7 + 1, T, got) == 0;
            if (pin) ok(done, "n=%zu %s %s %d of %zu active", n, drift_name[drift], step_name[k], rep + 1, m);
            if (!done) continue;
            diag_step(step_name[k], n, drift, got);
            if (!pin) continue;
            int same = 1;
            for (int c = 0; c < NCALLS; ++c)
                for (int q = 0; q < NKINDS; ++q)
                    if (got[c].k[q] != pinned[drift][k][c][q]) {
                        same = 0;
                        diag("%s %s: %lld %s, pinned %d", step_name[k], call_name[c], got[c].k[q], kind_name[q],
                             pinned[drift][k][c][q]);
                    }
            ok(same, "n=%zu %s %s %d: launches, CUB calls, copies, memsets and syncs per call as pinned", n,
               drift_name[drift], step_name[k], rep + 1);
            if (!same)
                diag("a step's fixed costs changed: if that is meant, update `pinned` in "
                     "tests/gpu/gpu-emu-block-costs.c and the table in bench/results/gpu/README.md");
        }
    }
    /* a rebuild inside the steps would count a build, not a step */
    if (pin) is_int((long long)(gpu_plugin_stats(P, s).tree_builds - builds), 0, "n=%zu %s: the steps never rebuild", n,
                    drift_name[drift]);
    P->finalize(s);
    free(mass); free(r.pos); free(r.vel); free(r.acc); free(r.t); free(r.x); free(r.v); free(r.a); free(r.xp);
    free(r.idx);
}

int main(void)
{
    gpu_plugin P;
    counts_of = gpu_emu_open_counted(&P, "cuda-tree");
    plan_lazy();
    for (int drift = 0; drift < 2; ++drift) {
        count_steps(P.api, PINNED_N, drift, 1);
        count_steps(P.api, 4 * PINNED_N, drift, 0);
    }
    return done_testing();
}
