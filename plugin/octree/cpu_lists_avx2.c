/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_lists_avx2.c — the float list kernels on x86-64 with AVX2 and FMA (see cpu_lists.h).
 *
 * The portable loops spend most of their time on spills (16 lanes of
 * double sums fill AVX2's 16 registers) and on a 1/sqrt of three Newton
 * steps. Here, as in the AVX-512 kernels:
 *   - two targets per pass over the list: each entry is loaded once for
 *     both, and the two dependency chains overlap;
 *   - cells with the traceless quadrupole (6 operations fewer each);
 *   - float partial sums of OCT_BLOCK256 vectors per lane before they are
 *     added to the double lane sums (mixed) or float lane sums (single);
 *   - 1/sqrt as 1 / sqrt(r2), both correctly rounded: the same bits on
 *     every CPU with AVX2, where the hardware estimate (vrsqrtps) differs
 *     between vendors. The divide and square root run on their own unit,
 *     beside the multiply-adds.
 * The order of every sum depends only on the list and the target, never on
 * the partner target or the thread.
 */
#include "octree/cpu_lists.h"

#include <float.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define A2 __attribute__((target("avx2,fma")))
#define A2_INL __attribute__((target("avx2,fma"), always_inline)) static inline
#define OCT_BLOCK256 16

A2_INL __m256 a2_rinv(__m256 r2, const int soft)
{
    const __m256 one = _mm256_set1_ps(1.0f);
    if (soft) return _mm256_div_ps(one, _mm256_sqrt_ps(r2));   /* r2 >= eps^2 >= FLT_MIN */
    /* eps = 0: a coincident pair (r2 = 0) contributes 0 */
    __m256 pos = _mm256_cmp_ps(r2, _mm256_setzero_ps(), _CMP_GT_OQ);
    __m256 x = _mm256_max_ps(r2, _mm256_set1_ps(FLT_MIN));
    return _mm256_and_ps(pos, _mm256_div_ps(one, _mm256_sqrt_ps(x)));
}

/* Per-target running sums: double lanes (two halves) for mixed, float
 * lanes for single; fed from the float block sums every OCT_BLOCK256. */
typedef struct a2_acc { __m256d d[4][2]; __m256 f[4]; } a2_acc;

A2_INL void a2_acc_zero(a2_acc *a)
{
    for (int c = 0; c < 4; c++) {
        a->d[c][0] = a->d[c][1] = _mm256_setzero_pd();
        a->f[c] = _mm256_setzero_ps();
    }
}

A2_INL void a2_acc_add(a2_acc *a, const __m256 b[4], int mixed)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) {
            a->d[c][0] = _mm256_add_pd(a->d[c][0], _mm256_cvtps_pd(_mm256_castps256_ps128(b[c])));
            a->d[c][1] = _mm256_add_pd(a->d[c][1], _mm256_cvtps_pd(_mm256_extractf128_ps(b[c], 1)));
        } else {
            a->f[c] = _mm256_add_ps(a->f[c], b[c]);
        }
    }
}

/* Lanes added as a fixed tree (halves, then halves of those), then to the
 * target's running total. */
A2_INL void a2_acc_out(const a2_acc *a, int mixed, double *outd, float *outf)
{
    for (int c = 0; c < 4; c++) {
        if (mixed) {
            __m256d s = _mm256_add_pd(a->d[c][0], a->d[c][1]);
            __m128d h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd(s, 1));
            outd[c] += _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
        } else {
            __m128 h = _mm_add_ps(_mm256_castps256_ps128(a->f[c]), _mm256_extractf128_ps(a->f[c], 1));
            h = _mm_add_ps(h, _mm_movehl_ps(h, h));
            outf[c] += _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
        }
    }
}

/* Both interactions start alike: d = x_j - x_i for 8 list entries from one
 * target, and the softened 1/r. */
A2_INL __m256 a2_sep(__m256 xj, __m256 yj, __m256 zj, __m256 xi, __m256 yi, __m256 zi,
                     __m256 eps2, const int soft, __m256 *dx, __m256 *dy, __m256 *dz)
{
    *dx = _mm256_sub_ps(xj, xi);
    *dy = _mm256_sub_ps(yj, yi);
    *dz = _mm256_sub_ps(zj, zi);
    __m256 r2 = _mm256_fmadd_ps(*dx, *dx, _mm256_fmadd_ps(*dy, *dy, _mm256_fmadd_ps(*dz, *dz, eps2)));
    return a2_rinv(r2, soft);
}

/* One block of 8 particles against one target. The self entry's mass is
 * masked to +0, so it adds +0 to a and phi wherever the target is (a
 * field point may exclude a source away from it); a target on its own
 * source gets the bits it got from masking phi alone (d = +0 there, and
 * rinv finite: r2 >= eps^2 > 0, or 0 where r2 = 0). */
A2_INL void a2_mono1(__m256 xj, __m256 yj, __m256 zj, __m256 mj, __m256i idj, __m256 xi,
                     __m256 yi, __m256 zi, __m256i self, __m256 eps2, __m256 b[4], const int soft)
{
    __m256 dx, dy, dz;
    __m256 rinv = a2_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __m256 isself = _mm256_castsi256_ps(_mm256_cmpeq_epi32(idj, self));
    __m256 mr = _mm256_mul_ps(_mm256_andnot_ps(isself, mj), rinv);
    __m256 mr3 = _mm256_mul_ps(mr, _mm256_mul_ps(rinv, rinv));
    b[0] = _mm256_fmadd_ps(mr3, dx, b[0]);
    b[1] = _mm256_fmadd_ps(mr3, dy, b[1]);
    b[2] = _mm256_fmadd_ps(mr3, dz, b[2]);
    b[3] = _mm256_sub_ps(b[3], mr);
}

/* The same for 8 cells with the traceless Q and et = eps^2 tr(S): since
 * dQd - et = 3 dSd - tr(S) r^2 (r softened), this is gp_quad6_f's formula
 * with its trace terms folded in. */
A2_INL void a2_quad1(__m256 xj, __m256 yj, __m256 zj, __m256 mj, const __m256 q[6], __m256 et,
                     __m256 xi, __m256 yi, __m256 zi, __m256 eps2, __m256 b[4], const int soft)
{
    __m256 dx, dy, dz;
    __m256 rinv = a2_sep(xj, yj, zj, xi, yi, zi, eps2, soft, &dx, &dy, &dz);
    __m256 rinv2 = _mm256_mul_ps(rinv, rinv);
    __m256 mr = _mm256_mul_ps(mj, rinv);
    __m256 rinv5 = _mm256_mul_ps(_mm256_mul_ps(rinv, rinv2), rinv2);
    __m256 qdx = _mm256_fmadd_ps(q[0], dx, _mm256_fmadd_ps(q[3], dy, _mm256_mul_ps(q[4], dz)));
    __m256 qdy = _mm256_fmadd_ps(q[3], dx, _mm256_fmadd_ps(q[1], dy, _mm256_mul_ps(q[5], dz)));
    __m256 qdz = _mm256_fmadd_ps(q[4], dx, _mm256_fmadd_ps(q[5], dy, _mm256_mul_ps(q[2], dz)));
    __m256 dqd = _mm256_fmadd_ps(dx, qdx, _mm256_fmadd_ps(dy, qdy, _mm256_fmsub_ps(dz, qdz, et)));
    __m256 dqd5 = _mm256_mul_ps(dqd, rinv5);
    /* c = M/r^3 + 2.5 (dQd - eps^2 tr)/r^7 = (M/r + 2.5 dqd5) / r^2 */
    __m256 c = _mm256_mul_ps(_mm256_fmadd_ps(_mm256_set1_ps(2.5f), dqd5, mr), rinv2);
    b[0] = _mm256_fnmadd_ps(rinv5, qdx, _mm256_fmadd_ps(c, dx, b[0]));
    b[1] = _mm256_fnmadd_ps(rinv5, qdy, _mm256_fmadd_ps(c, dy, b[1]));
    b[2] = _mm256_fnmadd_ps(rinv5, qdz, _mm256_fmadd_ps(c, dz, b[2]));
    /* phi = -(M/r + 0.5 (dQd - eps^2 tr)/r^5) */
    b[3] = _mm256_sub_ps(b[3], _mm256_fmadd_ps(_mm256_set1_ps(0.5f), dqd5, mr));
}

/* Targets a and b (two = 0: a alone) against a list (n a multiple of 8):
 * cells (quad: with Q) or particles (self excluded). */
A2_INL void a2_list(const list_f *L, uint32_t n, int quad, const float *ta, const float *tb,
                    __m256i sa, __m256i sb, __m256 eps2, int mixed, a2_acc *A, a2_acc *B,
                    const int two, const int soft)
{
    const __m256 xa = _mm256_set1_ps(ta[0]), ya = _mm256_set1_ps(ta[1]), za = _mm256_set1_ps(ta[2]);
    const __m256 xb = _mm256_set1_ps(tb[0]), yb = _mm256_set1_ps(tb[1]), zb = _mm256_set1_ps(tb[2]);
    for (uint32_t j0 = 0; j0 < n; j0 += OCT_BLOCK256 * 8) {
        __m256 ba[4], bb[4];
        for (int c = 0; c < 4; c++) ba[c] = bb[c] = _mm256_setzero_ps();
        uint32_t je = j0 + OCT_BLOCK256 * 8 < n ? j0 + OCT_BLOCK256 * 8 : n;
        if (quad) {
            for (uint32_t j = j0; j < je; j += 8) {
                __m256 xj = _mm256_load_ps(L->x + j), yj = _mm256_load_ps(L->y + j),
                       zj = _mm256_load_ps(L->z + j), mj = _mm256_load_ps(L->m + j);
                __m256 q[6];
                for (int k = 0; k < 6; k++) q[k] = _mm256_load_ps(L->s[k] + j);
                __m256 et = _mm256_load_ps(L->et + j);
                a2_quad1(xj, yj, zj, mj, q, et, xa, ya, za, eps2, ba, soft);
                if (two) a2_quad1(xj, yj, zj, mj, q, et, xb, yb, zb, eps2, bb, soft);
            }
        } else {
            for (uint32_t j = j0; j < je; j += 8) {
                __m256 xj = _mm256_load_ps(L->x + j), yj = _mm256_load_ps(L->y + j),
                       zj = _mm256_load_ps(L->z + j), mj = _mm256_load_ps(L->m + j);
                __m256i idj = _mm256_load_si256((const __m256i *)(L->id + j));
                a2_mono1(xj, yj, zj, mj, idj, xa, ya, za, sa, eps2, ba, soft);
                if (two) a2_mono1(xj, yj, zj, mj, idj, xb, yb, zb, sb, eps2, bb, soft);
            }
        }
        a2_acc_add(A, ba, mixed);
        if (two) a2_acc_add(B, bb, mixed);
    }
}

/* Targets t0 and t1 (two = 0: t0 alone) against the cells, then the
 * particles, into the same lane sums. */
A2_INL void a2_pair(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                    const float *t0, const float *t1, int32_t self0, int32_t self1, float eps2f,
                    int mixed, double *od0, double *od1, float *of0, float *of1, const int two,
                    const int soft)
{
    const __m256 eps2 = _mm256_set1_ps(eps2f);
    const __m256i none = _mm256_set1_epi32(-3);
    const __m256i sa = _mm256_set1_epi32(self0), sb = _mm256_set1_epi32(self1);
    a2_acc A, B;
    a2_acc_zero(&A);
    a2_acc_zero(&B);
    a2_list(C, nc, quad, t0, t1, none, none, eps2, mixed, &A, &B, two, soft);
    a2_list(P, np, 0, t0, t1, sa, sb, eps2, mixed, &A, &B, two, soft);
    a2_acc_out(&A, mixed, od0, of0);
    if (two) a2_acc_out(&B, mixed, od1, of1);
}

A2 void oct_avx2_cells_to_q(list_f *C, uint32_t nc, float eps2f)
{
    const __m256 three = _mm256_set1_ps(3.0f), eps2 = _mm256_set1_ps(eps2f);
    for (uint32_t j = 0; j < nc; j += 8) {
        __m256 sxx = _mm256_load_ps(C->s[0] + j), syy = _mm256_load_ps(C->s[1] + j),
               szz = _mm256_load_ps(C->s[2] + j);
        __m256 tr = _mm256_add_ps(_mm256_add_ps(sxx, syy), szz);
        _mm256_store_ps(C->s[0] + j, _mm256_fmsub_ps(three, sxx, tr));
        _mm256_store_ps(C->s[1] + j, _mm256_fmsub_ps(three, syy, tr));
        _mm256_store_ps(C->s[2] + j, _mm256_fmsub_ps(three, szz, tr));
        for (int k = 3; k < 6; k++)
            _mm256_store_ps(C->s[k] + j, _mm256_mul_ps(three, _mm256_load_ps(C->s[k] + j)));
        _mm256_store_ps(C->et + j, _mm256_mul_ps(eps2, tr));
    }
}

A2 void oct_avx2_flush(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                       const float *tf, const int32_t *self, uint32_t nt, float eps2, int mixed,
                       double *acc, float *accf)
{
    const int soft = eps2 >= FLT_MIN;
    for (uint32_t t = 0; t < nt; t += 2) {
        uint32_t u = t + 1 < nt ? t + 1 : t;
        int32_t s0 = self ? self[t] : -1, s1 = self ? self[u] : -1;
        const float *t0 = tf + 3 * t, *t1 = tf + 3 * u;
        double *od0 = acc + 4 * t, *od1 = acc + 4 * u;
        float *of0 = accf + 4 * t, *of1 = accf + 4 * u;
        /* the constant flags pick specialised copies of the loops */
        if (u != t) {
            if (soft) a2_pair(C, nc, quad, P, np, t0, t1, s0, s1, eps2, mixed, od0, od1, of0, of1, 1, 1);
            else a2_pair(C, nc, quad, P, np, t0, t1, s0, s1, eps2, mixed, od0, od1, of0, of1, 1, 0);
        } else {
            if (soft) a2_pair(C, nc, quad, P, np, t0, t0, s0, s0, eps2, mixed, od0, od0, of0, of0, 0, 1);
            else a2_pair(C, nc, quad, P, np, t0, t0, s0, s0, eps2, mixed, od0, od0, of0, of0, 0, 0);
        }
    }
}

static int cpu_level(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return OCT_SIMD_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return OCT_SIMD_AVX2;
    return OCT_SIMD_PORTABLE;
}
#else
void oct_avx2_flush(const list_f *C, uint32_t nc, int quad, const list_f *P, uint32_t np,
                    const float *tf, const int32_t *self, uint32_t nt, float eps2, int mixed,
                    double *acc, float *accf)
{
    abort();   /* oct_simd_level() never allows it here */
}

void oct_avx2_cells_to_q(list_f *C, uint32_t nc, float eps2f)
{
    abort();   /* oct_simd_level() never allows it here */
}

static int cpu_level(void) { return OCT_SIMD_PORTABLE; }
#endif

/* Decided once; threads may race to decide, they all reach the same answer
 * and the atomic makes that race benign. */
int oct_simd_level(void)
{
    static _Atomic int level = -1;
    int l = atomic_load_explicit(&level, memory_order_relaxed);
    if (l < 0) {
        l = cpu_level();
        const char *cap = getenv("GRAVPLUG_CPU_TREE_SIMD");
        int c = OCT_SIMD_AVX512;
        if (cap && strcmp(cap, "portable") == 0) c = OCT_SIMD_PORTABLE;
        else if (cap && strcmp(cap, "avx2") == 0) c = OCT_SIMD_AVX2;
        if (getenv("GRAVPLUG_CPU_TREE_NO_AVX512") && c > OCT_SIMD_AVX2) c = OCT_SIMD_AVX2;
        if (l > c) l = c;
        atomic_store_explicit(&level, l, memory_order_relaxed);
    }
    return l;
}
