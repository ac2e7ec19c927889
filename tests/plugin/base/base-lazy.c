/* SPDX-License-Identifier: Apache-2.0 */
/*
 * base-lazy.c — unit tests of plugin/base/predict_lazy.c, the predict owed
 * rather than done (drift = on's): against a base that predicts at once,
 *   - an owed predict moves no position, and get_positions under it gives
 *     the done predict's bits, for second- and third-order states;
 *   - a state given while a predict is owed keeps its own position, and
 *     settling leaves positions and marks as the done predict's calls do;
 *   - when gp_lazy_reserve finds no memory for its list it pays the owed
 *     predict at once and says GP_OK: nothing is lost (realloc made to
 *     fail through the linker's --wrap);
 *   - a predict that would overflow is not owed but done, and refused with
 *     the done predict's sentence.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/plugin_base.h"
#include "base/predict_lazy.h"
#include "tap.h"

#define N 3000

/* realloc through the linker (-Wl,--wrap=realloc): fails once when armed */
void *__real_realloc(void *p, size_t n);
static int fail_next_realloc;
void *__wrap_realloc(void *p, size_t n)
{
    if (fail_next_realloc) {
        fail_next_realloc = 0;
        return NULL;
    }
    return __real_realloc(p, n);
}

static double pos[3 * N], vel[3 * N], acc[3 * N], jerk[3 * N], mass[N], t0[N];
static uint32_t idx[N];

static void must(gp_base *b, gp_status st)
{
    if (st != GP_OK) bail(b->error);
}

static int same_positions(gp_lazy_predict *z, gp_base *lazy, gp_base *eager)
{
    static double a[3 * N], b[3 * N];
    must(lazy, gp_lazy_positions(z, lazy, N, NULL, a));
    must(eager, gp_positions_get(eager, N, NULL, b));
    return memcmp(a, b, sizeof a) == 0;
}

int main(void)
{
    plan(10);
    uint64_t r = 12345;
    for (size_t i = 0; i < 3 * N; i++) {
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(r >> 11) / 9007199254740992.0;
        pos[i] = 2 * u - 1;
        vel[i] = 0.3 * (u - 0.4);
        acc[i] = -0.7 * pos[i];
        jerk[i] = 0.05 * vel[i];
    }
    for (size_t i = 0; i < N; i++) { mass[i] = 1.0 / N; t0[i] = 0; idx[i] = (uint32_t)i; }
    gp_base L, E;
    memset(&L, 0, sizeof L);
    memset(&E, 0, sizeof E);
    if (gp_base_init(&L, "lazy", NULL, NULL, 0) || gp_base_init(&E, "eager", NULL, NULL, 0))
        bail("gp_base_init failed");
    gp_lazy_predict z;
    memset(&z, 0, sizeof z);
    gp_base *both[2] = { &L, &E };
    for (int k = 0; k < 2; k++) {
        must(both[k], gp_particles_set(both[k], N, pos, mass));
        /* the first half third order, the rest second */
        must(both[k], gp_state_set_jerk(both[k], N / 2, idx, pos, vel, acc, jerk, t0));
        must(both[k], gp_state_set(both[k], N - N / 2, idx + N / 2, pos + 3 * (N / 2),
                                   vel + 3 * (N / 2), acc + 3 * (N / 2), t0 + N / 2));
    }
    gp_lazy_note_state(&z, N / 2, idx, pos, vel, acc, jerk, t0);
    gp_lazy_note_state(&z, N - N / 2, idx + N / 2, pos + 3 * (N / 2), vel + 3 * (N / 2),
                       acc + 3 * (N / 2), NULL, t0 + N / 2);

    /* owed */
    must(&L, gp_lazy_predict_to(&z, &L, 0.25, 1));
    must(&E, gp_state_predict(&E, 0.25, NULL));
    ok(z.pending && memcmp(L.p.pos, pos, sizeof pos) == 0, "an owed predict moves no position");
    ok(same_positions(&z, &L, &E), "get_positions under it: the done predict's bits");

    /* a state given while one is owed: 100 particles set at t = 0.25 */
    static double p1[3 * N], v1[3 * N], a1[3 * N], t1[N];
    for (size_t k = 0; k < 3 * 100; k++) { p1[k] = pos[k] + 0.01; v1[k] = vel[k]; a1[k] = acc[k]; }
    for (size_t k = 0; k < 100; k++) t1[k] = 0.25;
    const uint32_t *sub = idx + 1000;
    must(&L, gp_lazy_predict_to(&z, &L, 0.5, 1));
    must(&E, gp_state_predict(&E, 0.5, NULL));
    must(&L, gp_lazy_reserve(&z, &L, 100));
    must(&L, gp_state_set(&L, 100, sub, p1, v1, a1, t1));
    gp_lazy_note_state(&z, 100, sub, p1, v1, a1, NULL, t1);
    must(&E, gp_state_set(&E, 100, sub, p1, v1, a1, t1));
    ok(z.pending && z.nfresh == 100, "a state given under an owed predict is listed (%zu)", z.nfresh);
    must(&L, gp_lazy_settle(&z, &L));
    ok(!z.pending && memcmp(L.p.pos, E.p.pos, sizeof pos) == 0 &&
           memcmp(L.p.stated, E.p.stated, N) == 0,
       "settled: the positions and marks the done calls leave");

    /* no memory for the list: the owed predict paid at once */
    must(&L, gp_lazy_predict_to(&z, &L, 0.75, 1));
    must(&E, gp_state_predict(&E, 0.75, NULL));
    const size_t big = 2 * (z.cap ? z.cap : 1024) + 1;   /* beyond the list's room */
    for (size_t k = 0; k < 3 * big; k++) { p1[k] = pos[k] - 0.02; v1[k] = vel[k]; a1[k] = acc[k]; }
    for (size_t k = 0; k < big; k++) t1[k] = 0.75;
    fail_next_realloc = 1;
    gp_status st = gp_lazy_reserve(&z, &L, big);
    ok(st == GP_OK && !z.pending && !fail_next_realloc,
       "gp_lazy_reserve without memory for its list: GP_OK, the owed predict paid");
    ok(memcmp(L.p.pos, E.p.pos, sizeof pos) == 0, "... to the done predict's positions");
    must(&L, gp_state_set(&L, big, idx, p1, v1, a1, t1));
    gp_lazy_note_state(&z, big, idx, p1, v1, a1, NULL, t1);
    must(&E, gp_state_set(&E, big, idx, p1, v1, a1, t1));
    must(&L, gp_lazy_predict_to(&z, &L, 1.0, 1));
    must(&E, gp_state_predict(&E, 1.0, NULL));
    ok(z.pending && same_positions(&z, &L, &E), "and the next predict is owed again, with the same bits");

    /* a predict that would overflow: done, and refused as the done one is */
    double fast[3] = { 1e307, 0, 0 }, still[3] = { 0, 0, 0 }, at[1] = { 1.0 };
    for (int k = 0; k < 2; k++) must(both[k], gp_state_set(both[k], 1, idx, pos, fast, still, at));
    must(&L, gp_lazy_reserve(&z, &L, 1));
    gp_lazy_note_state(&z, 1, idx, pos, fast, still, NULL, at);
    ok(!gp_lazy_safe_to_defer(&z, 100.0) && gp_lazy_safe_to_defer(&z, 1.5),
       "an overflow at t = 100 is not safe to owe; t = 1.5 is");
    gp_status sl = gp_lazy_predict_to(&z, &L, 100.0, 1), se = gp_state_predict(&E, 100.0, NULL);
    ok(sl == se && sl == GP_ERR_INVALID_ARGUMENT && !z.pending,
       "so predict(100) is done, not owed, and refused (status %d)", (int)sl);
    ok(strcmp(L.error + strlen("lazy"), E.error + strlen("eager")) == 0,
       "with the done predict's sentence: %s", L.error);
    gp_lazy_free(&z);
    gp_base_free(&L);
    gp_base_free(&E);
    return done_testing();
}
