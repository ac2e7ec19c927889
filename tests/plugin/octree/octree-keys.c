/* SPDX-License-Identifier: Apache-2.0 */
/* octree-keys: Peano-Hilbert and Morton keys are bijective on the 2^21 grid,
 * consecutive PH keys are face-adjacent cells (at every level), keys nest
 * (a level-L prefix names the level-L cell), quantisation survives
 * extreme coordinates, and gp_host_make_keys (vectorised, threaded, every
 * target clone) gives gp_key_of_position's keys. */
#include <math.h>
#include <stdlib.h>

#include "tap.h"
#include "octree/host_tree.h"
#include "gravplug_keys.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

static int manhattan(uint32_t a[3], uint32_t b[3])
{
    int d = 0;
    for (int k = 0; k < 3; k++) d += a[k] > b[k] ? (int)(a[k] - b[k]) : (int)(b[k] - a[k]);
    return d;
}

int main(void)
{
    plan(12);
    const uint64_t kmask = (UINT64_C(1) << 63) - 1;

    int bad_m = 0, bad_p = 0, bad_k = 0;
    for (int t = 0; t < 200000; t++) {
        uint32_t x = (uint32_t)rng() & 0x1fffff, y = (uint32_t)rng() & 0x1fffff,
                 z = (uint32_t)rng() & 0x1fffff, a, b, c;
        gp_morton_decode(gp_morton_encode(x, y, z), &a, &b, &c);
        bad_m += a != x || b != y || c != z;
        gp_ph_decode(gp_ph_encode(x, y, z), &a, &b, &c);
        bad_p += a != x || b != y || c != z;
        uint64_t k = rng() & kmask;
        gp_ph_decode(k, &a, &b, &c);
        bad_k += gp_ph_encode(a, b, c) != k;
    }
    ok(bad_m == 0, "Morton decode(encode(p)) == p on 200k random grid points (%d bad)", bad_m);
    ok(bad_p == 0, "PH decode(encode(p)) == p on 200k random grid points (%d bad)", bad_p);
    ok(bad_k == 0, "PH encode(decode(k)) == k on 200k random 63-bit keys (%d bad)", bad_k);

    /* consecutive keys at full resolution are face neighbours */
    int bad_adj = 0;
    for (int t = 0; t < 200000; t++) {
        uint64_t k = rng() & kmask;
        if (k == kmask) k--;
        uint32_t p[3], q[3];
        gp_ph_decode(k, &p[0], &p[1], &p[2]);
        gp_ph_decode(k + 1, &q[0], &q[1], &q[2]);
        bad_adj += manhattan(p, q) != 1;
    }
    ok(bad_adj == 0, "consecutive PH keys are face-adjacent grid cells (%d of 200k not)", bad_adj);

    /* at level 4 (4096 cells), walk the whole curve: every cell once,
     * consecutive prefixes adjacent; the curve nests at every level */
    const int L = 4, shift = 3 * (GP_KEY_MAX_LEVEL - L), cshift = GP_KEY_MAX_LEVEL - L;
    static unsigned char seen[1 << 12];
    int dup = 0, nonadj = 0, nest = 0;
    uint32_t prev[3] = { 0, 0, 0 };
    for (uint64_t p = 0; p < (UINT64_C(1) << (3 * L)); p++) {
        uint32_t c[3];
        gp_ph_decode(p << shift, &c[0], &c[1], &c[2]);
        for (int k = 0; k < 3; k++) c[k] >>= cshift;
        uint32_t id = (c[0] << (2 * L)) | (c[1] << L) | c[2];
        dup += seen[id]++ != 0;
        if (p > 0) nonadj += manhattan(prev, c) != 1;
        for (int k = 0; k < 3; k++) prev[k] = c[k];
        /* a random point of that cell has that prefix */
        uint32_t r[3];
        for (int k = 0; k < 3; k++) r[k] = (c[k] << cshift) | ((uint32_t)rng() & ((1u << cshift) - 1));
        nest += gp_key_prefix(gp_ph_encode(r[0], r[1], r[2]), L) != p;
    }
    ok(dup == 0, "level-%d PH curve visits all %d cells once (%d duplicates)", L, 1 << 12, dup);
    ok(nonadj == 0, "consecutive level-%d PH cells are adjacent (%d not)", L, nonadj);
    ok(nest == 0, "a point's level-%d PH prefix names its cell (%d wrong)", L, nest);

    /* Morton nests too (different order, same cells) */
    int mnest = 0;
    for (int t = 0; t < 10000; t++) {
        uint32_t x = (uint32_t)rng() & 0x1fffff, y = (uint32_t)rng() & 0x1fffff,
                 z = (uint32_t)rng() & 0x1fffff;
        uint64_t pre = gp_key_prefix(gp_morton_encode(x, y, z), 7);
        mnest += pre != gp_morton_encode(x >> 14, y >> 14, z >> 14);
    }
    ok(mnest == 0, "Morton level-7 prefix == Morton key of the coarse cell (%d wrong)", mnest);

    /* quantisation of extreme and bad inputs stays on the grid */
    double lo[3] = { -1, -1, -1 };
    double inv = GP_KEY_GRID / 2.0;
    uint32_t q1 = gp_key_quantise(1e30, lo[0], inv), q2 = gp_key_quantise(-1e30, lo[0], inv),
             q3 = gp_key_quantise(NAN, lo[0], inv), q4 = gp_key_quantise(0.0, lo[0], inv);
    ok(q1 == GP_KEY_GRID - 1 && q2 == 0 && q3 == 0,
       "quantise clamps 1e30, -1e30 and NaN into the grid (%u %u %u)", q1, q2, q3);
    ok(q4 == GP_KEY_GRID / 2, "quantise puts the centre at the middle cell (%u)", q4);

    /* the vectorised maker against one key at a time: rows of 5 doubles
     * (a stride, as gravhost-mpi's state rows), points spread over 40
     * decades, outside the cube, on its faces, and NaN */
    enum { NP = 100003, STRIDE = 5 };
    double *rows = malloc((size_t)NP * STRIDE * sizeof *rows);
    uint64_t *keys = malloc((size_t)NP * sizeof *keys);
    if (!rows || !keys) bail("out of memory");
    for (size_t i = 0; i < NP; i++)
        for (int a = 0; a < STRIDE; a++) {
            double u = (double)(rng() >> 11) * 0x1p-53 * 2.0 - 1.0;
            rows[i * STRIDE + a] = i % 97 == 0 ? u * 1e20 : i % 89 == 0 ? -1.0 : u * pow(10.0, (double)(i % 40) - 20.0);
        }
    rows[7 * STRIDE] = NAN;
    const double *x = rows, *y = rows + 1, *z = rows + 2;
    for (int kind = 0; kind < 2; kind++) {
        gp_key_kind kk = kind ? GP_KEY_MORTON : GP_KEY_PEANO_HILBERT;
        gp_host_make_keys(NP, x, y, z, STRIDE, kk, lo, inv, keys);
        int bad = 0;
        for (size_t i = 0; i < NP; i++)
            bad += keys[i] != gp_key_of_position(kk, x[i * STRIDE], y[i * STRIDE], z[i * STRIDE], lo, inv);
        ok(bad == 0, "gp_host_make_keys == gp_key_of_position (%s, %d points, stride %d; %d differ)",
           kind ? "Morton" : "Peano-Hilbert", NP, STRIDE, bad);
    }
    free(rows);
    free(keys);
    return done_testing();
}
