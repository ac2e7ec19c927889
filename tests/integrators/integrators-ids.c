/* SPDX-License-Identifier: Apache-2.0 */
/*
 * integrators-ids.c — gp_sim_find_duplicate_id, the check every
 * set_particles, checkpoint load and migration makes on the particle ids:
 * distinct ids pass whatever their values (0, UINT64_MAX, strides that
 * collide in a table indexed by low bits), and a repeat is reported as the
 * first repeat in index order with its first holder, among 2^20 ids too.
 */
#include "integrators-common.h"
#include "core/sim_core.h"

#include <stdint.h>

#define BIG (1u << 20)

static uint64_t rs = 88172645463325252ULL;
static uint64_t xorshift(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return rs;
}

int main(void)
{
    plan(9);
    size_t a = 99, b = 99;
    uint64_t one[1] = { 5 };
    ok(gp_sim_find_duplicate_id(NULL, 0, &a, &b) == 0 && gp_sim_find_duplicate_id(one, 1, &a, &b) == 0,
       "no ids and one id hold no repeat");

    uint64_t edge[4] = { UINT64_MAX, 0, 1, UINT64_MAX - 1 };
    ok(gp_sim_find_duplicate_id(edge, 4, &a, &b) == 0, "0, 1, UINT64_MAX - 1 and UINT64_MAX are distinct");
    edge[2] = UINT64_MAX;
    int r = gp_sim_find_duplicate_id(edge, 4, &a, &b);
    ok(r == 1 && a == 0 && b == 2,
       "UINT64_MAX twice: indices 0 and 2 (got %zu, %zu)", a, b);

    static uint64_t ids[BIG];
    /* multiples of 2^40: equal in their low bits, distinct */
    for (size_t i = 0; i < 4096; i++) ids[i] = (uint64_t)i << 40;
    ok(gp_sim_find_duplicate_id(ids, 4096, &a, &b) == 0, "4096 ids that differ only above bit 40 are distinct");

    /* 2^20 ids in a random order, distinct */
    for (size_t i = 0; i < BIG; i++) ids[i] = i * 7919 + 3;
    for (size_t i = BIG - 1; i > 0; i--) {
        size_t j = (size_t)(xorshift() % (i + 1));
        uint64_t t = ids[i]; ids[i] = ids[j]; ids[j] = t;
    }
    ok(gp_sim_find_duplicate_id(ids, BIG, &a, &b) == 0, "2^20 distinct ids in a random order: no repeat");

    /* then two repeats: the one whose second holder comes first is told,
     * though the other is the smaller id (the smallest id at 10, the
     * largest at 700000) */
    size_t lo = 0, hi = 0;
    for (size_t i = 0; i < BIG; i++) {
        if (ids[i] < ids[lo]) lo = i;
        if (ids[i] > ids[hi]) hi = i;
    }
    uint64_t t = ids[10]; ids[10] = ids[lo]; ids[lo] = t;
    hi = hi == 10 ? lo : hi;
    t = ids[700000]; ids[700000] = ids[hi]; ids[hi] = t;
    const uint64_t keep600k = ids[600000], keep900k = ids[900000];
    ids[900000] = ids[10];          /* ids[10] again at 900000 */
    ids[600000] = ids[700000];      /* ids[700000] first seen at 600000 */
    r = gp_sim_find_duplicate_id(ids, BIG, &a, &b);
    ok(r == 1 && a == 600000 && b == 700000,
       "two repeats among 2^20: the first in index order, 600000 and 700000 (got %zu, %zu)", a, b);
    ids[600000] = keep600k;
    r = gp_sim_find_duplicate_id(ids, BIG, &a, &b);
    ok(r == 1 && a == 10 && b == 900000,
       "one repeat among 2^20: its first holder 10 and 900000 (got %zu, %zu)", a, b);
    ids[900000] = keep900k;

    /* a repeat at the last index, in a table more than half full of
     * neighbours: consecutive ids */
    for (size_t i = 0; i < BIG; i++) ids[i] = i;
    ids[BIG - 1] = BIG - 2;
    r = gp_sim_find_duplicate_id(ids, BIG, &a, &b);
    ok(r == 1 && a == BIG - 2 && b == BIG - 1,
       "consecutive ids with the last one repeated: %zu and %zu", a, b);
    ids[BIG - 1] = BIG - 1;
    ok(gp_sim_find_duplicate_id(ids, BIG, &a, &b) == 0, "and with it put back: no repeat");
    return done_testing();
}
