/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_lists_avx512.c — the float lists' kernels on CPUs with AVX-512
 * (see cpu_lists.h). Built on x86-64 only, run only where
 * oct_simd_level() says AVX-512. */
#include "octree/cpu_lists.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <float.h>
#include <immintrin.h>

/* ---- AVX-512 list kernels ---------------------------------------------------
 * The float modes' hot loop, written with intrinsics for x86-64 machines
 * with AVX-512F (chosen once at run time, cpu_lists.h; AVX2 machines use
 * cpu_lists_avx2.c, others the portable loops above). Differences from the
 * portable loops, all for speed:
 *   - 1/sqrt from the hardware estimate (vrsqrt14ps, 14 bits) plus one
 *     Newton step (relative error ~1e-7, float rounding): 5 operations
 *     instead of ~14;
 *   - i-blocking: two targets per pass over the list, so each list entry is
 *     loaded once for both and the two dependency chains overlap;
 *   - one pass for both lists (cells, then particles) into the same lane
 *     sums, added up once per flush;
 *   - float partial sums of OCT_BLOCK512 vectors per lane before they are
 *     added to the double lane sums (mixed) or float lane sums (single).
 * The order of every sum depends only on the list and the target, never on
 * the partner target or the thread: bit-identical whatever OMP_NUM_THREADS.
 */
#define K512 __attribute__((target("avx512f,avx512dq,fma"), noinline))
#define K512_INL __attribute__((target("avx512f,avx512dq,fma"), always_inline)) static inline
#define OCT_BLOCK512 16

K512_INL __m512 k512_rinv(__m512 r2, const int soft)
{
    if (soft) {
        /* softened (eps^2 >= FLT_MIN): r2 >= eps^2 > 0, so the guards below
         * change nothing and are skipped (same bits) */
        __m512 y = _mm512_rsqrt14_ps(r2);
        __m512 t = _mm512_mul_ps(_mm512_mul_ps(r2, y), y);
        __m512 h = _mm512_fnmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.5f));
        return _mm512_mul_ps(y, h);
    }
    const __m512 tiny = _mm512_set1_ps(1.17549435e-38f);
    __mmask16 pos = _mm512_cmp_ps_mask(r2, _mm512_setzero_ps(), _CMP_GT_OQ);
    __m512 x = _mm512_max_ps(r2, tiny);
    __m512 y = _mm512_maskz_rsqrt14_ps(pos, x);
    __m512 t = _mm512_mul_ps(_mm512_mul_ps(x, y), y);                 /* x y^2 ~ 1 */
    __m512 h = _mm512_fnmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(1.5f));
    return _mm512_mul_ps(y, h);
}

/* Per-target running sums: double lanes (lo, hi halves) for mixed, float
 * lanes for single; flushed from the float block sums every OCT_BLOCK512. */
typedef struct k512_acc { __m512d d[4][2]; __m512 f[4]; } k512_acc;

K512_INL void k512_acc_zero(k512_acc *a)
{
    for (int c = 0; c < 4; c++) {
        a->d[c][0] = a->d[c][1] = _mm512_setzero_pd();
        a->f[c] = _mm512_setzero_ps();
    }
}

K512_INL void k512_acc_add(k512_acc *a, const __m512 b[4], int mixed)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) {
            a->d[c][0] = _mm512_add_pd(a->d[c][0], _mm512_cvtps_pd(_mm512_castps512_ps256(b[c])));
            a->d[c][1] = _mm512_add_pd(a->d[c][1], _mm512_cvtps_pd(_mm512_extractf32x8_ps(b[c], 1)));
        } else {
            a->f[c] = _mm512_add_ps(a->f[c], b[c]);
        }
    }
}

/* Lanes added as a fixed tree (halves, then halves of those: the
 * reduce intrinsics' fixed instruction sequence), then to the target's
 * running total. */
K512_INL void k512_acc_out(const k512_acc *a, int mixed, double *outd, float *outf)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) outd[c] += _mm512_reduce_add_pd(_mm512_add_pd(a->d[c][0], a->d[c][1]));
        else outf[c] += _mm512_reduce_add_ps(a->f[c]);
    }
}

/* Both interactions start alike: the separation d = x_j - x_i of 16 list
 * entries from one target, and the softened 1/r. */
K512_INL __m512 k512_sep(__m512 xj, __m512 yj, __m512 zj, __m512 xi, __m512 yi, __m512 zi,
                         __m512 eps2, const int soft, __m512 *dx, __m512 *dy, __m512 *dz)
{
    *dx = _mm512_sub_ps(xj, xi);
    *dy = _mm512_sub_ps(yj, yi);
    *dz = _mm512_sub_ps(zj, zi);
    __m512 r2 = _mm512_fmadd_ps(*dx, *dx, _mm512_fmadd_ps(*dy, *dy, _mm512_fmadd_ps(*dz, *dz, eps2)));
    return k512_rinv(r2, soft);
}

/* One list entry block j (16 lanes) against one target: monopole. */
K512_INL void k512_mono1(__m512 xj, __m512 yj, __m512 zj, __m512 mj, __m512i idj, __m512 xi,
                         __m512 yi, __m512 zi, __m512i self, __m512 eps2, __m512 b[4],
                         const int soft)
{
    __m512 dx, dy, dz;
    __m512 rinv = k512_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __mmask16 notself = _mm512_cmpneq_epi32_mask(idj, self);
    /* the self entry's m/r is +0 (a zero-masked product), so it adds +0 to
     * a and phi wherever the target is (a field point may exclude a
     * source away from it); a target on its own source gets the bits it
     * got from masking phi alone (d = +0 there, and rinv finite: r2 >=
     * eps^2 > 0, or 0 where r2 = 0) */
    __m512 mr = _mm512_maskz_mul_ps(notself, mj, rinv);
    __m512 mr3 = _mm512_mul_ps(mr, _mm512_mul_ps(rinv, rinv));
    b[0] = _mm512_fmadd_ps(mr3, dx, b[0]);
    b[1] = _mm512_fmadd_ps(mr3, dy, b[1]);
    b[2] = _mm512_fmadd_ps(mr3, dz, b[2]);
    b[3] = _mm512_sub_ps(b[3], mr);
}

/* The same for a cell with its traceless quadrupole Q = 3 S - tr(S) I (S
 * the second moment; the cell columns store Q, see w512_decide) and et =
 * eps^2 tr(S): since dQd - et = 3 dSd - tr(S) r^2 (r softened), this is
 * gp_quad6_f's formula exactly, with its trace terms folded in: 6
 * operations fewer per interaction. */
K512_INL void k512_quad1(__m512 xj, __m512 yj, __m512 zj, __m512 mj, const __m512 q[6],
                         __m512 et, __m512 xi, __m512 yi, __m512 zi, __m512 eps2, __m512 b[4],
                         const int soft)
{
    __m512 dx, dy, dz;
    __m512 rinv = k512_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __m512 rinv2 = _mm512_mul_ps(rinv, rinv);
    __m512 mr = _mm512_mul_ps(mj, rinv);
    __m512 rinv5 = _mm512_mul_ps(_mm512_mul_ps(rinv, rinv2), rinv2);
    __m512 qdx = _mm512_fmadd_ps(q[0], dx, _mm512_fmadd_ps(q[3], dy, _mm512_mul_ps(q[4], dz)));
    __m512 qdy = _mm512_fmadd_ps(q[3], dx, _mm512_fmadd_ps(q[1], dy, _mm512_mul_ps(q[5], dz)));
    __m512 qdz = _mm512_fmadd_ps(q[4], dx, _mm512_fmadd_ps(q[5], dy, _mm512_mul_ps(q[2], dz)));
    /* dQd - eps^2 tr(S) = 3 dSd - tr(S) r^2 with the softened r */
    __m512 dqd = _mm512_fmadd_ps(dx, qdx, _mm512_fmadd_ps(dy, qdy, _mm512_fmsub_ps(dz, qdz, et)));
    __m512 dqd5 = _mm512_mul_ps(dqd, rinv5);
    /* c = M/r^3 + 2.5 (dQd - eps^2 tr)/r^7 = (M/r + 2.5 dqd5) / r^2 */
    __m512 c = _mm512_mul_ps(_mm512_fmadd_ps(_mm512_set1_ps(2.5f), dqd5, mr), rinv2);
    b[0] = _mm512_fnmadd_ps(rinv5, qdx, _mm512_fmadd_ps(c, dx, b[0]));
    b[1] = _mm512_fnmadd_ps(rinv5, qdy, _mm512_fmadd_ps(c, dy, b[1]));
    b[2] = _mm512_fnmadd_ps(rinv5, qdz, _mm512_fmadd_ps(c, dz, b[2]));
    /* phi = -(M/r + 0.5 (dQd - eps^2 tr)/r^5) */
    b[3] = _mm512_sub_ps(b[3], _mm512_fmadd_ps(_mm512_set1_ps(0.5f), dqd5, mr));
}

/* Targets t0 and t1 (two = 0: t0 alone) against a list (n a multiple of
 * 16): cells (quad: with second moments) or particles (self excluded). */
K512_INL void k512_list(const list_f *L, uint32_t n, int quad, __m512 xa, __m512 ya, __m512 za,
                        __m512 xb, __m512 yb, __m512 zb, __m512i sa, __m512i sb, __m512 eps2,
                        int mixed, k512_acc *A, k512_acc *B, const int two, const int soft)
{
    for (uint32_t j0 = 0; j0 < n; j0 += OCT_BLOCK512 * 16) {
        __m512 ba[4], bb[4];
        for (int c = 0; c < 4; c++) ba[c] = bb[c] = _mm512_setzero_ps();
        uint32_t je = j0 + OCT_BLOCK512 * 16 < n ? j0 + OCT_BLOCK512 * 16 : n;
        if (quad) {
            for (uint32_t j = j0; j < je; j += 16) {
                __m512 xj = _mm512_load_ps(L->x + j), yj = _mm512_load_ps(L->y + j),
                       zj = _mm512_load_ps(L->z + j), mj = _mm512_load_ps(L->m + j);
                __m512 s[6];
                for (int k = 0; k < 6; k++) s[k] = _mm512_load_ps(L->s[k] + j);
                __m512 et = _mm512_load_ps(L->et + j);
                k512_quad1(xj, yj, zj, mj, s, et, xa, ya, za, eps2, ba, soft);
                if (two) k512_quad1(xj, yj, zj, mj, s, et, xb, yb, zb, eps2, bb, soft);
            }
        } else {
            for (uint32_t j = j0; j < je; j += 16) {
                __m512 xj = _mm512_load_ps(L->x + j), yj = _mm512_load_ps(L->y + j),
                       zj = _mm512_load_ps(L->z + j), mj = _mm512_load_ps(L->m + j);
                __m512i idj = _mm512_load_si512((const void *)(L->id + j));
                k512_mono1(xj, yj, zj, mj, idj, xa, ya, za, sa, eps2, ba, soft);
                if (two) k512_mono1(xj, yj, zj, mj, idj, xb, yb, zb, sb, eps2, bb, soft);
            }
        }
        k512_acc_add(A, ba, mixed);
        if (two) k512_acc_add(B, bb, mixed);
    }
}

/* Targets t0 and t1 (two = 0: t0 alone) against the cell list C and the
 * particle list P, in that order, into the same lane sums. */
K512_INL void k512_body(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                        const float *t0, const float *t1, int32_t self0, int32_t self1,
                        float eps2f, int mixed, double *od0, double *od1, float *of0,
                        float *of1, const int two, const int soft)
{
    const __m512 eps2 = _mm512_set1_ps(eps2f);
    const __m512 xa = _mm512_set1_ps(t0[0]), ya = _mm512_set1_ps(t0[1]), za = _mm512_set1_ps(t0[2]);
    const __m512 xb = _mm512_set1_ps(t1[0]), yb = _mm512_set1_ps(t1[1]), zb = _mm512_set1_ps(t1[2]);
    const __m512i none = _mm512_set1_epi32(-3);
    const __m512i sa = _mm512_set1_epi32(self0), sb = _mm512_set1_epi32(self1);
    k512_acc A, B;
    k512_acc_zero(&A);
    k512_acc_zero(&B);
    k512_list(C, nc, quad, xa, ya, za, xb, yb, zb, none, none, eps2, mixed, &A, &B, two, soft);
    k512_list(P, np, 0, xa, ya, za, xb, yb, zb, sa, sb, eps2, mixed, &A, &B, two, soft);
    k512_acc_out(&A, mixed, od0, of0);
    if (two) k512_acc_out(&B, mixed, od1, of1);
}

/* Targets t0 and t1 against both lists; write1 = 0: t0 alone (odd count). */
K512 static void k512_pair(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                           const float *t0, const float *t1, int32_t self0, int32_t self1,
                           float eps2f, int mixed, double *od0, double *od1, float *of0,
                           float *of1, int write1)
{
    if (eps2f >= FLT_MIN) {
        if (write1)
            k512_body(C, nc, quad, P, np, t0, t1, self0, self1, eps2f, mixed, od0, od1, of0, of1, 1, 1);
        else
            k512_body(C, nc, quad, P, np, t0, t0, self0, self0, eps2f, mixed, od0, od0, of0, of0, 0, 1);
    } else {
        if (write1)
            k512_body(C, nc, quad, P, np, t0, t1, self0, self1, eps2f, mixed, od0, od1, of0, of1, 1, 0);
        else
            k512_body(C, nc, quad, P, np, t0, t0, self0, self0, eps2f, mixed, od0, od0, of0, of0, 0, 0);
    }
}

void oct_avx512_flush(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                      const float *tf, const int32_t *self, uint32_t nt, float eps2, int mixed,
                      double *acc, float *accf)
{
    for (uint32_t t = 0; t < nt; t += 2) {
        uint32_t u = t + 1 < nt ? t + 1 : t;
        int write1 = u != t;
        int32_t s0 = self ? self[t] : -1, s1 = self ? self[u] : -1;
        double *od0 = &acc[4 * t], *od1 = &acc[4 * u];
        float *of0 = &accf[4 * t], *of1 = &accf[4 * u];
        const float *t0 = &tf[3 * t], *t1 = &tf[3 * u];
        k512_pair(C, nc, quad, P, np, t0, t1, s0, s1, eps2, mixed, od0, od1, of0, of1, write1);
    }
}

#endif
