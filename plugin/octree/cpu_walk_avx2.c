/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_walk_avx2.c — the float modes' walk on CPUs with AVX2 and no
 * AVX-512: the traversal's visit with a cell's children decided on two
 * halves of four doubles (see cpu_walk.h; its list kernels are
 * cpu_lists_avx2.c). Built on x86-64 only, run only where
 * oct_simd_level() says AVX2. */
#include "octree/cpu_walk_ws.h"

#ifdef OCT_HAVE_X86_SIMD
#include <immintrin.h>

#include "octree/cpu_lists.h"
#include "octree/cpu_traverse.h"
#include "octree/cpu_walk.h"

/* ---- AVX2 traversal (float modes) ---------------------------------------------
 * The AVX-512 walk for CPUs with AVX2 and no AVX-512: the same batches
 * (OCT_BATCH_FAMILY), the same tests on the same cell columns, a cell's
 * children decided together on two halves of four doubles, so the lists
 * fill in the AVX-512 walk's order. AVX2 has no compress instruction: the
 * accepted children are packed by a permutation looked up from their
 * 8-bit mask. */
#define A2W __attribute__((target("avx2,fma")))

/* The first k (0..4) of four 64-bit lanes, and of four 32-bit lanes. */
A2W static inline __m256i w256_lanes64(int k)
{
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(k), _mm256_setr_epi64x(0, 1, 2, 3));
}

A2W static inline __m128i w256_lanes32(int k)
{
    return _mm_cmpgt_epi32(_mm_set1_epi32(k), _mm_setr_epi32(0, 1, 2, 3));
}

/* For each 8-bit mask, the indices of its set bits packed to the front,
 * one byte each: the permutation that compresses the accepted lanes. */
#define W256_B(m, l) (((m) >> (l) & 1) ? (uint64_t)(l) << (8 * __builtin_popcount((m) & ((1u << (l)) - 1))) : 0)
#define W256_P(m) (W256_B(m, 0) | W256_B(m, 1) | W256_B(m, 2) | W256_B(m, 3) | \
                   W256_B(m, 4) | W256_B(m, 5) | W256_B(m, 6) | W256_B(m, 7))
#define W256_P4(m) W256_P(m), W256_P((m) + 1), W256_P((m) + 2), W256_P((m) + 3)
#define W256_P16(m) W256_P4(m), W256_P4((m) + 4), W256_P4((m) + 8), W256_P4((m) + 12)
#define W256_P64(m) W256_P16(m), W256_P16((m) + 16), W256_P16((m) + 32), W256_P16((m) + 48)
static const uint64_t w256_pack[256] = { W256_P64(0u), W256_P64(64u), W256_P64(128u), W256_P64(192u) };

/* The first k (0..8) of eight 32-bit lanes. */
A2W static inline __m256i w256_lanes32x8(int k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

A2W static inline __m256d w256_loadf(const float *a, __m128i lanes)
{
    return _mm256_cvtps_pd(_mm_maskload_ps(a, lanes));
}

A2W static inline int w256_particles(oct_workspace *ws, const oct_walk_params *p,
                                     const oct_group *g, int quad, const oct_sources *src,
                                     uint32_t begin, uint32_t count)
{
    list_f *P = ws->pf;
    /* room for whole vectors: the lanes past count are written and then
     * overwritten by the next entries or the padding (masked stores are
     * slow on AMD) */
    if (P->n + count + 3 > OCT_LIST_CAP) oct_walk_flush(ws, p, g, quad);
    if (count + 3 > OCT_LIST_CAP) return oct_push_particles(ws, p, g, quad, src, begin, count);
    const __m256d gx = _mm256_set1_pd(g->centre[0]), gy = _mm256_set1_pd(g->centre[1]),
                  gz = _mm256_set1_pd(g->centre[2]), range = _mm256_set1_pd(OCT_FLOAT_RANGE),
                  il = _mm256_set1_pd(ws->il), sign = _mm256_set1_pd(-0.0);
    uint32_t n = P->n;
    for (uint32_t i = 0; i < count; i += 4) {
        int k = count - i >= 4 ? 4 : (int)(count - i);
        __m256i l64 = w256_lanes64(k);
        __m128i l32 = w256_lanes32(k);
        uint32_t s = begin + i;
        __m256d dx = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->x + s, l64), gx), il);
        __m256d dy = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->y + s, l64), gy), il);
        __m256d dz = _mm256_mul_pd(_mm256_sub_pd(_mm256_maskload_pd(src->z + s, l64), gz), il);
        __m256d ok = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, dx), range, _CMP_LT_OQ),
                                                 _mm256_cmp_pd(_mm256_andnot_pd(sign, dy), range, _CMP_LT_OQ)),
                                   _mm256_cmp_pd(_mm256_andnot_pd(sign, dz), range, _CMP_LT_OQ));
        int want = (1 << k) - 1;
        if ((_mm256_movemask_pd(ok) & want) != want) return 1;
        _mm_storeu_ps(P->x + n + i, _mm256_cvtpd_ps(dx));
        _mm_storeu_ps(P->y + n + i, _mm256_cvtpd_ps(dy));
        _mm_storeu_ps(P->z + n + i, _mm256_cvtpd_ps(dz));
        _mm_storeu_ps(P->m + n + i, _mm256_cvtpd_ps(_mm256_maskload_pd(src->m + s, l64)));
        _mm_storeu_si128((__m128i *)(P->id + n + i), _mm_maskload_epi32((const int *)(src->id + s), l32));
    }
    P->n = n + count;
    return 0;
}

/* One walk's constants, broadcast once. */
typedef struct w256_ctx {
    oct_walk_ctx w;
    __m256d gx, gy, gz, vrg, vrg2, vgfac, vil, vlcap;
    double lcap;
    float eps2f;
} w256_ctx;

/* The children f .. f + nch - 1 of an opened cell (the root alone: its
 * record): the accepted ones appended and recorded, their mask returned;
 * -1 when one is out of the float range. */
A2W static inline __attribute__((always_inline)) int w256_decide(void *ctx, uint32_t f, uint32_t nch)
{
    const w256_ctx *x = ctx;
    if (f == 0) return oct_simd_root(&x->w);
    oct_workspace *ws = x->w.ws;
    const oct_cell_columns *col = x->w.src->col;
    const int quad = x->w.quad;
    const __m256d zero = _mm256_setzero_pd();
    const __m128i one = _mm_set1_epi32(1);
    unsigned acc = 0;
    __m128 ox[2], oy[2], oz[2];   /* the children's scaled offsets, by halves */
    ox[1] = oy[1] = oz[1] = _mm_setzero_ps();
    for (uint32_t h = 0; h < nch; h += 4) {
        const int k = nch - h >= 4 ? 4 : (int)(nch - h);
        const uint32_t b = f + h;
        const __m256i l64 = w256_lanes64(k);
        const __m128i l32 = w256_lanes32(k);
        __m256d dx = _mm256_sub_pd(_mm256_maskload_pd(col->cx + b, l64), x->gx);
        __m256d dy = _mm256_sub_pd(_mm256_maskload_pd(col->cy + b, l64), x->gy);
        __m256d dz = _mm256_sub_pd(_mm256_maskload_pd(col->cz + b, l64), x->gz);
        __m256d d2 = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy)),
                                   _mm256_mul_pd(dz, dz));
        __m256d rc = w256_loadf(col->rcrit + b, l32);
        if (x->w.accel) {
            rc = _mm256_mul_pd(rc, x->vgfac);
            if (x->lcap > 0) {   /* oct_accel_rcrit: at least the box's side x lcap */
                __m256d side = zero;
                for (int a = 0; a < 3; a++)
                    /* (max_pd answers its second operand for a NaN, as the AVX-512 walk's) */
                    side = _mm256_max_pd(_mm256_sub_pd(w256_loadf(col->bhi[a] + b, l32),
                                                       w256_loadf(col->blo[a] + b, l32)),
                                         side);
                rc = _mm256_max_pd(rc, _mm256_mul_pd(side, x->vlcap));
            }
        }
        __m256d r = _mm256_add_pd(rc, x->vrg);
        __m256d ok = _mm256_and_pd(_mm256_castsi256_pd(l64), _mm256_cmp_pd(_mm256_mul_pd(r, r), d2, _CMP_LT_OQ));
        __m128i cnt = _mm_maskload_epi32((const int *)(col->count + b), l32);
        /* counts stay far below 2^31: a signed compare is the unsigned one */
        ok = _mm256_and_pd(ok, _mm256_castsi256_pd(_mm256_cvtepi32_epi64(_mm_cmpgt_epi32(cnt, one))));
        /* box test: r = group centre - com = -d; e = distance outside [lo, hi] per axis */
        __m256d rx = _mm256_sub_pd(zero, dx), ry = _mm256_sub_pd(zero, dy), rz = _mm256_sub_pd(zero, dz);
        __m256d lo, hi, ex, e2;
        lo = w256_loadf(col->blo[0] + b, l32);
        hi = w256_loadf(col->bhi[0] + b, l32);
        ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, rx), _mm256_sub_pd(rx, hi)), zero);
        e2 = _mm256_mul_pd(ex, ex);
        lo = w256_loadf(col->blo[1] + b, l32);
        hi = w256_loadf(col->bhi[1] + b, l32);
        ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, ry), _mm256_sub_pd(ry, hi)), zero);
        e2 = _mm256_add_pd(e2, _mm256_mul_pd(ex, ex));
        lo = w256_loadf(col->blo[2] + b, l32);
        hi = w256_loadf(col->bhi[2] + b, l32);
        ex = _mm256_max_pd(_mm256_max_pd(_mm256_sub_pd(lo, rz), _mm256_sub_pd(rz, hi)), zero);
        e2 = _mm256_add_pd(e2, _mm256_mul_pd(ex, ex));
        ok = _mm256_and_pd(ok, _mm256_cmp_pd(e2, x->vrg2, _CMP_GT_OQ));
        unsigned bits = (unsigned)_mm256_movemask_pd(ok);
        if (bits) {
            __m256d d2s = _mm256_mul_pd(_mm256_mul_pd(d2, x->vil), x->vil);
            __m256d far = _mm256_cmp_pd(d2s, w256_loadf(col->d2max + b, l32), _CMP_NLT_UQ);
            if ((unsigned)_mm256_movemask_pd(far) & bits) return -1;
            acc |= bits << h;
        }
        ox[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dx, x->vil));
        oy[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dy, x->vil));
        oz[h / 4] = _mm256_cvtpd_ps(_mm256_mul_pd(dz, x->vil));
    }
    if (!acc) return 0;
    list_f *C = ws->cf;
    if (C->n + 8 > OCT_LIST_CAP) oct_walk_flush(ws, x->w.p, x->w.g, quad);
    uint32_t j = C->n;
    /* (8 entries written, na kept: the list has room for 8) */
    const __m256i pk = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)w256_pack[acc]));
    const __m256i l8 = w256_lanes32x8((int)nch);
#define W256_PUT(dst, v) _mm256_storeu_ps((dst) + j, _mm256_permutevar8x32_ps((v), pk))
    W256_PUT(C->x, _mm256_set_m128(ox[1], ox[0]));
    W256_PUT(C->y, _mm256_set_m128(oy[1], oy[0]));
    W256_PUT(C->z, _mm256_set_m128(oz[1], oz[0]));
    W256_PUT(C->m, _mm256_maskload_ps(col->m + f, l8));
    for (int k = 0; k < 6; k++)
        W256_PUT(C->s[k], quad ? _mm256_maskload_ps(col->s[k] + f, l8) : _mm256_setzero_ps());
    W256_PUT(C->et, quad ? _mm256_mul_ps(_mm256_set1_ps(x->eps2f), _mm256_maskload_ps(col->tr + f, l8))
                         : _mm256_setzero_ps());
#undef W256_PUT
    _mm256_storeu_si256((__m256i *)(C->id + j), _mm256_set1_epi32(-1));
    uint32_t na = (uint32_t)__builtin_popcount(acc);
    if (ws->record)
        for (unsigned a = acc; a; a &= a - 1) oct_rec_cell(ws, f + (unsigned)__builtin_ctz(a));
    C->n = j + na;
    return (int)acc;
}

A2W static inline __attribute__((always_inline)) int w256_leaf(void *ctx, uint32_t first, uint32_t count)
{
    const w256_ctx *x = ctx;
    if (w256_particles(x->w.ws, x->w.p, x->w.g, x->w.quad, x->w.src, first, count)) return 1;
    oct_rec_leaf(x->w.ws, first, count);
    return 0;
}

A2W int oct_walk_avx2(oct_walk_ctx *w, uint64_t *ncell, uint64_t *npart)
{
    const oct_group *g = w->g;
    const double rg = g->radius, il = w->ws->il;
    w256_ctx x = { .w = *w,
                   .gx = _mm256_set1_pd(g->centre[0]), .gy = _mm256_set1_pd(g->centre[1]),
                   .gz = _mm256_set1_pd(g->centre[2]), .vrg = _mm256_set1_pd(rg),
                   .vrg2 = _mm256_set1_pd(rg * rg), .vgfac = _mm256_set1_pd(w->gfac),
                   .vil = _mm256_set1_pd(il), .vlcap = _mm256_set1_pd(w->p->lcap),
                   .lcap = w->p->lcap, .eps2f = w->ws->eps2f };
    return oct_traverse(w->src, w->ws->stack, OCT_BATCH_FAMILY, 1, w256_decide, w256_leaf, &x, ncell,
                        npart);
}

#endif
